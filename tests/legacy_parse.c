/* legacy_parse.c: the loader's former parser, kept as a test oracle.
 *
 * Until the direct decoder (lib/model/decode.c) replaced it, lib/model/load.c parsed a
 * buffer in three steps: a wire pre-pass that validated everything and
 * wrote a "stripped" copy in which payload spans were replaced by marker
 * fields, protobuf-c's protobuf_c_message_unpack of that copy, and a
 * post-pass turning markers back into unknown fields pointing into the
 * buffer.  tests/check_decode.c decodes inputs with both and requires the
 * same parse-error or byte-identical protobuf_c_message_pack output.
 * The tree is allocated by a tracking allocator and released by
 * legacy_free.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oac_int.h"
#include "legacy_parse.h"

#define MARKER_FIELD 536870911u
#define STRIP_THRESHOLD 64
#define LEN_BYTES 5

/* ---- a tracking allocator ---------------------------------------------- */

typedef struct blk {
    struct blk *prev, *next;
    _Alignas(16) unsigned char data[];
} blk;

struct legacy_tree {
    blk head;
    bool failed;
};

static void *t_alloc(void *data, size_t n)
{
    struct legacy_tree *t = data;
    blk *b = malloc(sizeof *b + (n ? n : 1));
    if (!b) {
        t->failed = true;
        return NULL;
    }
    b->prev = &t->head;
    b->next = t->head.next;
    if (b->next)
        b->next->prev = b;
    t->head.next = b;
    return b->data;
}

static void t_free(void *data, void *p)
{
    (void)data;
    if (!p)
        return;
    blk *b = (blk *)((unsigned char *)p - offsetof(blk, data));
    b->prev->next = b->next;
    if (b->next)
        b->next->prev = b->prev;
    free(b);
}

void legacy_free(legacy_tree *t)
{
    if (!t)
        return;
    blk *b = t->head.next;
    while (b) {
        blk *n = b->next;
        free(b);
        b = n;
    }
    free(t);
}

/* ---- the pre-pass ---------------------------------------------------- */

typedef struct payload_ent {
    uint32_t field;     /* original field number */
    uint8_t wire_type;  /* of the span's first occurrence */
    size_t off;         /* bytes after the first tag, from the buffer start */
    size_t len;         /* up to the span's end */
} payload_ent;

typedef struct strip {
    oac_ctx *ctx;
    const uint8_t *buf;
    size_t len;
    uint8_t *out;        /* grows as the walk writes (emit) */
    size_t cap;          /* bytes allocated at out */
    size_t pos;          /* output bytes so far */
    payload_ent *ents;   /* grows as markers are written */
    size_t cap_ents;
    size_t n_ents;
    bool nomem;          /* a growth failed: nothing more is written */
    bool external;       /* a TensorProto has a data_location field */
    /* first error: message without the file name, and its offset */
    char err[256];
} strip;

static int fail(strip *s, const uint8_t *at, const char *fmt, ...) OAC_PRINTF(3, 4);
static int fail(strip *s, const uint8_t *at, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(s->err, sizeof s->err, "%s at byte %zu", what, (size_t)(at - s->buf));
    return OAC_EPARSE;
}

/* Varint within [p, end): bytes used, 0 when truncated, -1 overlong. */
static inline int get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    /* Most tags, lengths and values of a graph fit in one byte. */
    if (p < end && !(*p & 0x80)) {
        *v = *p;
        return 1;
    }
    uint64_t r = 0;
    for (int i = 0; i < 10; i++) {
        if (p + i >= end)
            return 0;
        r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = r;
            return i + 1;
        }
    }
    return -1;
}

/* Room for n more output bytes; false (and nomem set) when it cannot
 * grow.  Doubling keeps the copies linear in the output. */
static bool grow_out(strip *s, size_t n)
{
    if (s->nomem)
        return false;
    size_t ncap = s->cap ? s->cap : 4096;
    while (ncap - s->pos < n) {
        if (ncap > SIZE_MAX / 2) {
            s->nomem = true;
            return false;
        }
        ncap *= 2;
    }
    uint8_t *p = oac_realloc(s->ctx, s->out, ncap);
    if (!p) {
        s->nomem = true;
        return false;
    }
    s->out = p;
    s->cap = ncap;
    return true;
}

static inline bool reserve(strip *s, size_t n)
{
    return (!s->nomem && s->cap - s->pos >= n) || grow_out(s, n);
}

static inline void emit(strip *s, const void *p, size_t n)
{
    if (reserve(s, n)) {
        memcpy(s->out + s->pos, p, n);
        s->pos += n;
    }
}

static void emit_varint(strip *s, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    while (v >= 0x80) {
        b[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (uint8_t)v;
    emit(s, b, n);
}

/* One field occurrence as scanned: where its tag starts, its number and
 * wire type, where its value starts and ends (for wire type 2 the value
 * is the content after the length). */
typedef struct wfield {
    const uint8_t *tag_at;
    const uint8_t *val;      /* value bytes (after the length for wt 2) */
    const uint8_t *end;      /* first byte after the field */
    uint32_t number;
    int wt;
    size_t tag_len;
} wfield;

/* Scan the field at p (p < end).  Validates the tag, wire type and the
 * value's extent; does not read a length-delimited value. */
static inline int scan_field(strip *s, const uint8_t *p, const uint8_t *end, wfield *f)
{
    uint64_t tag, v;
    int k = get_varint(p, end, &tag);
    if (k == 0)
        return fail(s, p, "truncated tag");
    if (k < 0 || k > 5 || tag > UINT32_MAX)
        return fail(s, p, "overlong tag");
    f->tag_at = p;
    f->tag_len = (size_t)k;
    f->number = (uint32_t)(tag >> 3);
    f->wt = (int)(tag & 7);
    if (f->number == 0)
        return fail(s, p, "field number 0");
    p += k;
    switch (f->wt) {
    case 0:
        k = get_varint(p, end, &v);
        if (k == 0)
            return fail(s, p, "truncated varint");
        if (k < 0)
            return fail(s, p, "overlong varint");
        f->val = p;
        f->end = p + k;
        return OAC_OK;
    case 1:
    case 5: {
        size_t w = f->wt == 1 ? 8 : 4;
        if ((size_t)(end - p) < w)
            return fail(s, p, "truncated %s field", f->wt == 1 ? "64-bit" : "32-bit");
        f->val = p;
        f->end = p + w;
        return OAC_OK;
    }
    case 2:
        k = get_varint(p, end, &v);
        if (k == 0)
            return fail(s, p, "truncated length");
        /* protobuf-c reads lengths of at most 5 bytes. */
        if (k < 0 || k > 5)
            return fail(s, p, "overlong length");
        if (v > (uint64_t)(end - p - k))
            return fail(s, p, "truncated length-delimited field (length %llu, %zu bytes left)",
                        (unsigned long long)v, (size_t)(end - p - k));
        f->val = p + k;
        f->end = p + k + v;
        return OAC_OK;
    case 3:
    case 4:
        return fail(s, f->tag_at, "group wire type %d (groups are not supported)", f->wt);
    default:
        return fail(s, f->tag_at, "invalid wire type %d", f->wt);
    }
}

/* scan_field for the common case, a one-byte tag followed by a one-byte
 * varint or a one-byte length that fits: most fields of a graph (names,
 * small messages, enums).  False means "not that case": scan_field then
 * decides, and reports any error. */
static inline bool scan_fast(const uint8_t *p, const uint8_t *end, wfield *f)
{
    if (end - p < 2)
        return false;
    uint8_t t = p[0], b = p[1];
    if ((t & 0x80) || t < 8 || (b & 0x80))
        return false;
    int wt = t & 7;
    if (wt == 0) {
        f->val = p + 1;
        f->end = p + 2;
    } else if (wt == 2 && (ptrdiff_t)b <= end - p - 2) {
        f->val = p + 2;
        f->end = p + 2 + b;
    } else {
        return false;
    }
    f->tag_at = p;
    f->tag_len = 1;
    f->number = (uint32_t)(t >> 3);
    f->wt = wt;
    return true;
}

/* The wire type a scalar/string/message field type is written with. */
static int natural_wt(ProtobufCType t)
{
    /* A table, not a switch: this runs for every field of the file. */
    static const uint8_t wt[] = {
        [PROTOBUF_C_TYPE_SFIXED32] = 5, [PROTOBUF_C_TYPE_FIXED32] = 5,
        [PROTOBUF_C_TYPE_FLOAT] = 5,
        [PROTOBUF_C_TYPE_SFIXED64] = 1, [PROTOBUF_C_TYPE_FIXED64] = 1,
        [PROTOBUF_C_TYPE_DOUBLE] = 1,
        [PROTOBUF_C_TYPE_STRING] = 2, [PROTOBUF_C_TYPE_BYTES] = 2,
        [PROTOBUF_C_TYPE_MESSAGE] = 2,
    };
    return (unsigned)t < sizeof wt ? wt[t] : 0;
}

static bool wt_ok(const ProtobufCFieldDescriptor *fd, int wt)
{
    int nat = natural_wt(fd->type);
    if (wt == nat)
        return true;
    /* Repeated scalars may come packed (protobuf-c accepts both forms). */
    return wt == 2 && fd->label == PROTOBUF_C_LABEL_REPEATED && nat != 2;
}

/* Packed content of a repeated scalar kept in the struct: protobuf-c
 * checks less than it should (a truncated last varint, bools > 1). */
static int check_packed(strip *s, const ProtobufCFieldDescriptor *fd, const wfield *f)
{
    size_t n = (size_t)(f->end - f->val);
    switch (natural_wt(fd->type)) {
    case 5:
        if (n % 4)
            return fail(s, f->tag_at, "packed field %s holds %zu bytes, not a multiple of 4",
                        fd->name, n);
        return OAC_OK;
    case 1:
        if (n % 8)
            return fail(s, f->tag_at, "packed field %s holds %zu bytes, not a multiple of 8",
                        fd->name, n);
        return OAC_OK;
    default:
        for (const uint8_t *p = f->val; p < f->end;) {
            uint64_t v;
            int k = get_varint(p, f->end, &v);
            if (k <= 0)
                return fail(s, p, "malformed packed varint in field %s", fd->name);
            if (fd->type == PROTOBUF_C_TYPE_BOOL && v > 1)
                return fail(s, p, "packed bool in field %s is %llu", fd->name,
                            (unsigned long long)v);
            p += k;
        }
        return OAC_OK;
    }
}

/* Is this field number a payload of messages of this type? */
static bool payload_field(const ProtobufCMessageDescriptor *d, uint32_t n)
{
    if (d == &onnx__tensor_proto__descriptor)
        return n == 4 || n == 5 || n == 7 || n == 9 || n == 10 || n == 11;
    if (d == &onnx__quantized_tensor_proto__descriptor)
        return n == 2;
    return false;
}

/* The field numbered n of d, or NULL.  Generated descriptors list fields
 * by number and ONNX numbers them mostly densely from 1, so the direct
 * probe usually hits before the library's binary search. */
static const ProtobufCFieldDescriptor *field_of(const ProtobufCMessageDescriptor *d,
                                                uint32_t n)
{
    if (n - 1 < d->n_fields && d->fields[n - 1].id == n)
        return &d->fields[n - 1];
    return protobuf_c_message_descriptor_get_field(d, n);
}

static int strip_msg(strip *s, const ProtobufCMessageDescriptor *d,
                     const uint8_t *p, const uint8_t *end, int depth);

/* The span of adjacent occurrences of f->number starting with f; each
 * occurrence is validated with fd (NULL: unknown field). */
static int scan_span(strip *s, const ProtobufCFieldDescriptor *fd,
                     const wfield *first, const uint8_t *end,
                     const uint8_t **span_end)
{
    const uint8_t *p = first->end;
    while (p < end) {
        wfield g;
        int rc = scan_field(s, p, end, &g);
        if (rc)
            return rc;
        if (g.number != first->number)
            break;
        if (fd && !wt_ok(fd, g.wt))
            return fail(s, g.tag_at, "wrong wire type %d for field %s", g.wt, fd->name);
        p = g.end;
    }
    *span_end = p;
    return OAC_OK;
}

static void emit_marker(strip *s, const wfield *f, const uint8_t *span_end)
{
    if (s->nomem)
        return;
    if (s->n_ents == s->cap_ents &&
        oac_grow(s->ctx, (void **)&s->ents, &s->cap_ents, s->n_ents + 1,
                 sizeof *s->ents)) {
        s->nomem = true;
        return;
    }
    payload_ent *e = &s->ents[s->n_ents];
    e->field = f->number;
    e->wire_type = (uint8_t)f->wt;
    const uint8_t *q = f->tag_at + f->tag_len;
    e->off = (size_t)(q - s->buf);
    e->len = (size_t)(span_end - q);
    emit_varint(s, (uint64_t)MARKER_FIELD << 3);
    emit_varint(s, s->n_ents);
    s->n_ents++;
}

/* Sum of the bytes of each payload field in a tensor message, to decide
 * which fields leave for the mapping (all occurrences of a field go
 * together, so kept and mapped parts never interleave). */
static int payload_mask(strip *s, const ProtobufCMessageDescriptor *d,
                        const uint8_t *p, const uint8_t *end, uint32_t *mask)
{
    size_t total[12] = { 0 };
    *mask = 0;
    while (p < end) {
        wfield f;
        int rc = scan_field(s, p, end, &f);
        if (rc)
            return rc;
        if (f.number < 12 && payload_field(d, f.number)) {
            total[f.number] += (size_t)(f.end - f.tag_at);
            if (total[f.number] > STRIP_THRESHOLD)
                *mask |= 1u << f.number;
        }
        p = f.end;
    }
    return OAC_OK;
}

static int strip_msg(strip *s, const ProtobufCMessageDescriptor *d,
                     const uint8_t *p, const uint8_t *end, int depth)
{
    if (depth > OAC_MAX_DEPTH)
        return fail(s, p, "messages nested deeper than %d", OAC_MAX_DEPTH);
    uint32_t mask = 0;
    int rc;
    if ((d == &onnx__tensor_proto__descriptor ||
         d == &onnx__quantized_tensor_proto__descriptor) &&
        (rc = payload_mask(s, d, p, end, &mask)))
        return rc;
    /* Kept scalar and string fields are copied a run at a time: run is
     * the first byte not yet copied of the current run, or NULL. */
    const uint8_t *run = NULL;
    while (p < end) {
        wfield f;
        if (!scan_fast(p, end, &f) && (rc = scan_field(s, p, end, &f)))
            return rc;
        const ProtobufCFieldDescriptor *fd =
            f.number == MARKER_FIELD ? NULL
                                     : field_of(d, f.number);
        if (fd && !wt_ok(fd, f.wt))
            return fail(s, f.tag_at, "wrong wire type %d for field %s of %s", f.wt,
                        fd->name, d->short_name);
        bool payload = f.number < 32 && (mask & (1u << f.number));
        if (run && (payload || !fd || fd->type == PROTOBUF_C_TYPE_MESSAGE)) {
            emit(s, run, (size_t)(f.tag_at - run));
            run = NULL;
        }
        if (payload || !fd) {
            /* A payload or unknown field: find its span of adjacent
             * occurrences, then keep it or leave it in the mapping. */
            const uint8_t *span_end = f.end;
            if ((rc = scan_span(s, fd, &f, end, &span_end)))
                return rc;
            if (payload || f.number == MARKER_FIELD ||
                (size_t)(span_end - f.tag_at) > STRIP_THRESHOLD)
                emit_marker(s, &f, span_end);
            else
                emit(s, f.tag_at, (size_t)(span_end - f.tag_at));
            p = span_end;
            continue;
        }
        if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
            /* Same tag, padded length, stripped content. */
            emit(s, f.tag_at, f.tag_len);
            size_t len_at = s->pos;
            if (reserve(s, LEN_BYTES))
                s->pos += LEN_BYTES;
            size_t start = s->pos;
            if ((rc = strip_msg(s, fd->descriptor, f.val, f.end, depth + 1)))
                return rc;
            size_t n = s->pos - start;
            if (n > INT32_MAX)
                return fail(s, f.tag_at, "message %s larger than 2 GiB without its payloads",
                            fd->name);
            if (!s->nomem) {
                /* n <= INT32_MAX: five 7-bit groups, padded. */
                uint8_t *q = s->out + len_at;
                q[0] = (uint8_t)(n | 0x80);
                q[1] = (uint8_t)((n >> 7) | 0x80);
                q[2] = (uint8_t)((n >> 14) | 0x80);
                q[3] = (uint8_t)((n >> 21) | 0x80);
                q[4] = (uint8_t)(n >> 28);
            }
            p = f.end;
            continue;
        }
        if (f.wt == 2 && natural_wt(fd->type) != 2 && (rc = check_packed(s, fd, &f)))
            return rc;
        /* TensorProto.data_location: only then can a tensor be external
         * (model/extdata.c is skipped for models without one). */
        if (f.number == 14 && d == &onnx__tensor_proto__descriptor)
            s->external = true;
        /* protobuf-c keeps lengths in 32 bits and adds to them. */
        if (f.wt == 2 && f.end - f.val > INT32_MAX)
            return fail(s, f.tag_at, "field %s larger than 2 GiB", fd->name);
        if (!run)
            run = f.tag_at;
        p = f.end;
    }
    if (run)
        emit(s, run, (size_t)(end - run));
    return OAC_OK;
}

/* ---- the post-pass ---------------------------------------------------- */

typedef struct patch {
    const uint8_t *buf;
    const payload_ent *ents;
    size_t n_ents;
    size_t done;
    bool bad;
} patch;

static void patch_msg(patch *pt, ProtobufCMessage *m, int depth)
{
    if (!m || depth > OAC_MAX_DEPTH + 1)
        return;
    for (size_t i = 0; i < m->n_unknown_fields; i++) {
        ProtobufCMessageUnknownField *u = &m->unknown_fields[i];
        if (u->tag != MARKER_FIELD)
            continue;
        uint64_t idx;
        if (u->wire_type != PROTOBUF_C_WIRE_TYPE_VARINT ||
            get_varint(u->data, u->data + u->len, &idx) <= 0 || idx >= pt->n_ents) {
            pt->bad = true;
            continue;
        }
        const payload_ent *e = &pt->ents[idx];
        u->tag = e->field;
        u->wire_type = (ProtobufCWireType)e->wire_type;
        /* Points into the read-only mapping: the arena never frees it and
         * nothing writes through unknown fields. */
        u->data = (uint8_t *)(uintptr_t)(pt->buf + e->off);
        u->len = e->len;
        pt->done++;
    }
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned f = 0; f < d->n_fields; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        char *base = (char *)m;
        if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            uint32_t which;
            memcpy(&which, base + fd->quantifier_offset, sizeof which);
            if (which != fd->id)
                continue;
        }
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n;
            ProtobufCMessage **arr;
            memcpy(&n, base + fd->quantifier_offset, sizeof n);
            memcpy(&arr, base + fd->offset, sizeof arr);
            for (size_t j = 0; arr && j < n; j++)
                patch_msg(pt, arr[j], depth + 1);
        } else {
            ProtobufCMessage *sub;
            memcpy(&sub, base + fd->offset, sizeof sub);
            patch_msg(pt, sub, depth + 1);
        }
    }
}


int legacy_parse(oac_ctx *ctx, const ProtobufCMessageDescriptor *desc,
                 const uint8_t *buf, size_t len, legacy_tree **tree,
                 ProtobufCMessage **msg_out, bool *external,
                 char *err, size_t err_size)
{
    *tree = NULL;
    *msg_out = NULL;
    *external = false;
    err[0] = '\0';
    if (len == 0) {
        snprintf(err, err_size, "empty file at byte 0");
        return OAC_EPARSE;
    }
    strip s = { .ctx = ctx, .buf = buf, .len = len };
    legacy_tree *t = NULL;
    int rc;
    if (!reserve(&s, len / 2 + 64)) {
        rc = OAC_ENOMEM;
        goto done;
    }
    if (strip_msg(&s, desc, buf, buf + len, 1) != OAC_OK) {
        snprintf(err, err_size, "%s", s.err);
        rc = OAC_EPARSE;
        goto done;
    }
    if (s.nomem) {
        rc = OAC_ENOMEM;
        goto done;
    }
    t = calloc(1, sizeof *t);
    if (!t) {
        rc = OAC_ENOMEM;
        goto done;
    }
    ProtobufCAllocator al = { t_alloc, t_free, t };
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, &al, s.pos, s.out);
    if (!m) {
        if (t->failed) {
            rc = OAC_ENOMEM;
        } else {
            snprintf(err, err_size, "not a valid %s", desc->name);
            rc = OAC_EPARSE;
        }
        goto done;
    }
    patch pt = { .buf = buf, .ents = s.ents, .n_ents = s.n_ents };
    if (s.n_ents)
        patch_msg(&pt, m, 1);
    if (pt.bad || pt.done != s.n_ents) {
        snprintf(err, err_size, "a singular message field occurs more than once and "
                 "its payloads cannot be kept");
        rc = OAC_EPARSE;
        goto done;
    }
    *tree = t;
    *msg_out = m;
    *external = s.external;
    t = NULL;
    rc = OAC_OK;
done:
    legacy_free(t);
    oac_dealloc(ctx, s.out);
    oac_dealloc(ctx, s.ents);
    return rc;
}

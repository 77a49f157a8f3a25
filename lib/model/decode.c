/* model/decode.c: protobuf wire format straight into protobuf-c structs (model/decode.h).
 *
 * One concept that is not cut (about 2,000 lines, above the house's
 * 1,200): the decoder's fast paths, its general path and the merge rules
 * share one state machine and one per-type table, and splitting them
 * would put the hot loop's helpers behind calls across files.
 * Over 150 lines: decode_msg (that state machine's loop: a level per
 * depth, the fast path's ops in one switch).
 *
 * Owns oac_decode.  Contract 1 (wire format, unknown fields survive,
 * payloads are never copied) and 3 (a bad file is one parse-error with a
 * byte offset).
 *
 * Each message is read in one pass over its bytes (a tensor's top-level
 * fields are scanned once before, to decide which payloads stay in the
 * buffer; the elements of repeated fields and unknown fields wait on a
 * stack until the message ends, when each array is allocated once at its
 * size), guided by the protobuf-c descriptors (through a table per
 * message type, built once per decode): every type and label, packed
 * and unpacked repeated scalars, strings (NUL-terminated copies, equal
 * ones often shared: copy_string), bytes, enums, submessages, oneofs and
 * their case field, has_ flags, defaults from
 * descriptor->message_init (in a zeroed arena, its non-zero words),
 * unknown fields in order.  The C string of a string field ends at its
 * first NUL byte; every string that held one (a name, an external-data
 * location) is listed for the caller (oac_decode_ex), which must not
 * take the text before the NUL for the whole.  The common shapes of field (a tag of one or
 * two bytes with the field's own wire type, a whole value: strings,
 * submessages, varints, fixed scalars) take a fast path chosen by an op
 * per tag in the type's table, and the submessages it meets are entered
 * in decode_msg's loop, a level per depth, not by a call; any other
 * occurrence goes the general way (general_field), which does the same
 * checks and stores in the order the fast path would.  The result
 * is what protobuf_c_message_unpack builds, with protobuf-c's semantics
 * for repeated occurrences of a singular field: scalars, strings and bytes
 * take the last one, submessages merge (merge() is protobuf-c's
 * merge_messages: repeated fields concatenate, singular ones of the later
 * occurrence win, the earlier occurrence's unknown fields are dropped;
 * but in amortised linear time over any number of occurrences, where
 * protobuf-c copies the accumulated arrays on every merge), a oneof
 * takes its last member; like protobuf-c 1.4, merging two
 * occurrences of a message in which a oneof is set in neither fails.
 * tests/check_decode.c holds this to the former loader (wire pre-pass,
 * protobuf_c_message_unpack, post-pass) on many valid and broken inputs.
 *
 * Payloads: in a TensorProto whose data fields 4,5,7,9,10,11 (in a
 * QuantizedTensorProto, raw_data 2) add up to more than
 * OAC_DECODE_THRESHOLD bytes, and for unknown fields whose run of adjacent
 * occurrences is longer than that, the bytes are not copied: a run of
 * adjacent occurrences of the field becomes one unknown field with the
 * original tag whose data points into the buffer (the bytes after the
 * first tag up to the run's end; model/tensor.c decodes that form, and
 * protobuf-c packs it back verbatim).  Payload bytes are skipped by their
 * length, never read.  With OAC_DECODE_DROP_PAGES (a file mapping), the
 * walk drops the pages it has passed from the resident set every
 * OAC_DECODE_DROP_STEP bytes (drop_pages).
 *
 * Invariants:
 *  1. No read outside [buf, buf+len): every length is compared with the
 *     bytes left before it is used.
 *  2. Nesting depth (levels and general_field's recursion together)
 *     <= OAC_MAX_DEPTH.
 *  3. Errors come in the order a walk of the bytes meets them; a
 *     submessage merge that protobuf-c would refuse ("not a valid") or
 *     that would drop a payload left in the buffer is reported only when
 *     the whole buffer is otherwise valid.
 *  4. The tree is in the arena; the scratch (tables, stack, merge set,
 *     string cache) is oac_alloc'd and freed by oac_decode whatever
 *     happens; the levels are on oac_decode's stack.
 *  5. Equal strings of the tree may be one copy (copy_string), equal
 *     leaf attributes and dimensions one message (msg_slot); all are in
 *     the arena, and none is ever written after it is complete.
 *  6. Every string copy whose bytes held a NUL is in d->nul (copy_string),
 *     so a reader can tell the C string is not the whole field.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/decode.h"

typedef struct dtab dtab;
struct level;

typedef struct dec {
    oac_ctx *ctx;
    oac_arena *arena;
    const uint8_t *buf;
    size_t len;
    dtab *tabs;        /* the table of every descriptor met so far */
    /* Arrays merge() allocated, with their capacities (merged_room); an
     * open-addressed set of mset_size slots, mset_n used. */
    void **mset_key;
    size_t *mset_cap;
    size_t mset_n, mset_size;
    /* The elements of the repeated fields and the unknown fields of the
     * messages being decoded, innermost last (settle): stk[i] holds a
     * value's bytes, stk_tag[i] what it is (STK_*). */
    uint64_t *stk;
    uint8_t *stk_tag;
    size_t stk_n, stk_cap;
    uint32_t used;     /* bit r: rslot r of the innermost message has elements on stk */
    struct level *lv;  /* OAC_MAX_DEPTH + 1 of them (decode_msg) */
    struct level *lv_last;     /* &lv[OAC_MAX_DEPTH] */
    bool external;     /* a TensorProto has a data_location field */
    /* The strings that held a NUL byte (arena list, invariant 6) */
    oac_decode_nul *nul;
    bool invalid;      /* a merge protobuf-c refuses */
    bool lost;         /* a payload left in the buffer was dropped */
    /* OAC_DECODE_DROP_PAGES: pages of buf below dropped are out of the
     * resident set; the walk drops more once it reaches drop_at
     * (UINTPTR_MAX: never). */
    const uint8_t *dropped;
    uintptr_t drop_at;
    uintptr_t page_mask;
    struct shared *shared;     /* SHARE_SLOTS of them (copy_string) */
    struct mshared *mshared;   /* MSG_SHARE_SLOTS of them (msg_slot) */
    size_t made;               /* messages begun so far */
    char err[256];
} dec;

static int fail(dec *d, const uint8_t *at, const char *fmt, ...) OAC_PRINTF(3, 4);
static int fail(dec *d, const uint8_t *at, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(d->err, sizeof d->err, "%s at byte %zu", what, (size_t)(at - d->buf));
    return OAC_EPARSE;
}

static void *alloc(dec *d, size_t n)
{
    return oac_arena_alloc(d->arena, n);
}

/* ---- resident pages ------------------------------------------------------ */

/* The walk has passed p: drop the whole pages of buf before it from the
 * resident set.  The buffer is a read-only private file mapping
 * (OAC_DECODE_DROP_PAGES), so a later read (a payload, a re-scan) faults
 * the same bytes back in from the file; without this, the pages that
 * reading the tensor headers brought in (fault-around maps up to 64 KiB
 * of cached file around each fault, MADV_RANDOM or not) stay resident
 * until the whole file is decoded. */
static void __attribute__((noinline)) drop_pages(dec *d, const uint8_t *p)
{
    const uint8_t *hi = (const uint8_t *)((uintptr_t)p & ~d->page_mask);
    if (hi > d->dropped) {
        (void)madvise((void *)(uintptr_t)d->dropped, (size_t)(hi - d->dropped),
                      MADV_DONTNEED);
        d->dropped = hi;
    }
    d->drop_at = (uintptr_t)d->dropped + OAC_DECODE_DROP_STEP;
}

/* ---- the wire format ---------------------------------------------------- */

/* Varint within [p, end): bytes used, 0 when truncated, -1 overlong. */
static inline int get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
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

/* One field occurrence: where its tag starts, its number and wire type,
 * where its value starts and ends (for wire type 2 the value is the
 * content after the length). */
typedef struct wfield {
    const uint8_t *tag_at;
    const uint8_t *val;
    const uint8_t *end;
    uint32_t number;
    int wt;
    size_t tag_len;
} wfield;

/* Scan the field at p (p < end): validates the tag, the wire type and the
 * value's extent; does not read a length-delimited value. */
static int scan_field(dec *d, const uint8_t *p, const uint8_t *end, wfield *f)
{
    uint64_t tag, v;
    int k = get_varint(p, end, &tag);
    if (k == 0)
        return fail(d, p, "truncated tag");
    if (k < 0 || k > 5 || tag > UINT32_MAX)
        return fail(d, p, "overlong tag");
    f->tag_at = p;
    f->tag_len = (size_t)k;
    f->number = (uint32_t)(tag >> 3);
    f->wt = (int)(tag & 7);
    if (f->number == 0)
        return fail(d, p, "field number 0");
    p += k;
    switch (f->wt) {
    case 0:
        k = get_varint(p, end, &v);
        if (k == 0)
            return fail(d, p, "truncated varint");
        if (k < 0)
            return fail(d, p, "overlong varint");
        f->val = p;
        f->end = p + k;
        return OAC_OK;
    case 1:
    case 5: {
        size_t w = f->wt == 1 ? 8 : 4;
        if ((size_t)(end - p) < w)
            return fail(d, p, "truncated %s field", f->wt == 1 ? "64-bit" : "32-bit");
        f->val = p;
        f->end = p + w;
        return OAC_OK;
    }
    case 2:
        k = get_varint(p, end, &v);
        if (k == 0)
            return fail(d, p, "truncated length");
        if (k < 0 || k > 5)
            return fail(d, p, "overlong length");
        if (v > (uint64_t)(end - p - k))
            return fail(d, p, "truncated length-delimited field (length %llu, %zu bytes left)",
                        (unsigned long long)v, (size_t)(end - p - k));
        f->val = p + k;
        f->end = p + k + v;
        return OAC_OK;
    case 3:
    case 4:
        return fail(d, f->tag_at, "group wire type %d (groups are not supported)", f->wt);
    default:
        return fail(d, f->tag_at, "invalid wire type %d", f->wt);
    }
}

/* scan_field for the common cases: a tag of one or two bytes and a
 * one-byte varint, a fixed-size value or a length of one or two bytes
 * that fits.  False means "not that case": scan_field then decides, and
 * reports any error. */
static inline __attribute__((always_inline)) bool
scan_fast(const uint8_t *p, const uint8_t *end, wfield *f)
{
    ptrdiff_t left = end - p;
    if (left < 2)
        return false;
    uint32_t t = p[0];
    ptrdiff_t i = 1;
    if (t & 0x80) {
        if (left < 3 || (p[1] & 0x80))
            return false;
        t = (t & 0x7f) | (uint32_t)p[1] << 7;
        i = 2;
    }
    if (t < 8)
        return false;
    switch (t & 7) {
    case 0:
        if (p[i] & 0x80)
            return false;
        f->val = p + i;
        f->end = p + i + 1;
        break;
    case 2: {
        size_t n = p[i];
        ptrdiff_t j = i + 1;
        if (n & 0x80) {
            if (left < i + 2 || (p[i + 1] & 0x80))
                return false;
            n = (n & 0x7f) | (size_t)p[i + 1] << 7;
            j = i + 2;
        }
        if ((ptrdiff_t)n > left - j)
            return false;
        f->val = p + j;
        f->end = p + j + n;
        break;
    }
    case 5:
        if (left - i < 4)
            return false;
        f->val = p + i;
        f->end = p + i + 4;
        break;
    case 1:
        if (left - i < 8)
            return false;
        f->val = p + i;
        f->end = p + i + 8;
        break;
    default:
        return false;
    }
    f->tag_at = p;
    f->tag_len = (size_t)i;
    f->number = t >> 3;
    f->wt = (int)(t & 7);
    return true;
}

static inline __attribute__((always_inline)) int
next_field(dec *d, const uint8_t *p, const uint8_t *end, wfield *f)
{
    return scan_fast(p, end, f) ? OAC_OK : scan_field(d, p, end, f);
}

/* The wire type a field type is written with (0 for varints). */
static inline int natural_wt(ProtobufCType t)
{
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

/* Packed content of a repeated scalar kept in the struct. */
static int check_packed(dec *d, const ProtobufCFieldDescriptor *fd, const wfield *f)
{
    size_t n = (size_t)(f->end - f->val);
    switch (natural_wt(fd->type)) {
    case 5:
        if (n % 4)
            return fail(d, f->tag_at, "packed field %s holds %zu bytes, not a multiple of 4",
                        fd->name, n);
        return OAC_OK;
    case 1:
        if (n % 8)
            return fail(d, f->tag_at, "packed field %s holds %zu bytes, not a multiple of 8",
                        fd->name, n);
        return OAC_OK;
    default:
        for (const uint8_t *p = f->val; p < f->end;) {
            uint64_t v;
            int k = get_varint(p, f->end, &v);
            if (k <= 0)
                return fail(d, p, "malformed packed varint in field %s", fd->name);
            if (fd->type == PROTOBUF_C_TYPE_BOOL && v > 1)
                return fail(d, p, "packed bool in field %s is %llu", fd->name,
                            (unsigned long long)v);
            p += k;
        }
        return OAC_OK;
    }
}

/* ---- struct layout ----------------------------------------------------- */

#define MEMBER(m, off) ((void *)((char *)(m) + (off)))

static size_t elt_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
        return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(ProtobufCMessage *);
    default:
        return 4;
    }
}

/* Elements in packed content of n bytes (check_packed has passed). */
static size_t packed_count(ProtobufCType t, const uint8_t *p, size_t n)
{
    switch (natural_wt(t)) {
    case 5:
        return n / 4;
    case 1:
        return n / 8;
    default: {
        if (t == PROTOBUF_C_TYPE_BOOL)
            return n;
        size_t c = 0;
        for (size_t i = 0; i < n; i++)
            c += !(p[i] & 0x80);
        return c;
    }
    }
}

/* Store one scalar value (the bytes of one wire value) at dst. */
static void put_scalar(ProtobufCType t, const uint8_t *val, const uint8_t *end, void *dst)
{
    uint64_t v = 0;
    switch (t) {
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        memcpy(dst, val, 4);
        return;
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        memcpy(dst, val, 8);
        return;
    case PROTOBUF_C_TYPE_BOOL: {
        /* protobuf-c: true when any 7-bit group is not zero */
        protobuf_c_boolean b = 0;
        for (const uint8_t *p = val; p < end; p++)
            if (*p & 0x7f)
                b = 1;
        memcpy(dst, &b, sizeof b);
        return;
    }
    default:
        break;
    }
    (void)get_varint(val, end, &v);
    switch (t) {
    case PROTOBUF_C_TYPE_SINT32: {
        uint32_t u = (uint32_t)v;
        int32_t s = (int32_t)(u >> 1) ^ -(int32_t)(u & 1);
        memcpy(dst, &s, 4);
        return;
    }
    case PROTOBUF_C_TYPE_SINT64: {
        int64_t s = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
        memcpy(dst, &s, 8);
        return;
    }
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
        memcpy(dst, &v, 8);
        return;
    default: {           /* INT32, UINT32, ENUM: the low 32 bits */
        uint32_t u = (uint32_t)v;
        memcpy(dst, &u, 4);
        return;
    }
    }
}

/* ---- per-descriptor tables ---------------------------------------------- */

/* What the walk needs to know about field number n of a message type,
 * found by indexing instead of protobuf_c_message_descriptor_get_field's
 * binary search and computed once per decode instead of once per field.
 * Tables live in the dec state (no global state) and go with it. */
#define TAB_NEAR 64u       /* numbers below this are indexed directly */
#define MAX_COUNTED 16u    /* repeated fields of a type that wait on stk */
#define NO_RSLOT 0xffu
#define MAX_INIT 8u        /* non-zero words of an initialised message */

/* K_PAYLOAD: a payload field of a tensor, bytes or a scalar, left in the
 * buffer when the tensor's mask says so */
enum { K_UNKNOWN, K_PAYLOAD, K_MSG, K_STR, K_BYTES, K_SCALAR };
enum { ST_8, ST_4, ST_BYTES };
/* how a scalar's wire value becomes its member (scalar_value) */
enum { CV_VAR, CV_VAR32, CV_FIX, CV_ZIG32, CV_ZIG64, CV_BOOL };
enum { S_REP = 1, S_ONEOF = 2, S_PACKABLE = 4 };
/* The shapes of field most of a model's bytes come in, each with a path
 * of its own in decode_msg; anything else (and any occurrence the fast
 * path cannot take at once) goes the general way (OP_GENERIC). */
enum {
    OP_GENERIC,
    OP_STR_REP,   /* repeated string with an rslot */
    OP_STR,       /* singular string, not in a oneof */
    OP_STR_ONEOF, /* string in a oneof */
    OP_MSG_REP,   /* repeated message with an rslot */
    OP_MSG,       /* any other message field */
    OP_VAR_REP,   /* repeated (INT|UINT)(32|64) or enum with an rslot, unpacked */
    OP_VAR,       /* singular (INT|UINT)(32|64) or enum, not in a oneof */
    OP_VAR_ONEOF, /* (INT|UINT)(32|64) or enum in a oneof */
    OP_FIX,       /* singular fixed-size scalar, not in a oneof */
};

typedef struct fslot {
    const ProtobufCFieldDescriptor *fd;   /* NULL: not a field of the type */
    dtab *sub;                            /* K_MSG: its type's table, once met */
    uint32_t off, qoff;                   /* fd's offset and quantifier_offset */
    uint8_t kind;
    uint8_t es;        /* element size */
    uint8_t wts;       /* bit w: wire type w is valid (all for K_UNKNOWN) */
    uint8_t flags;
    uint8_t st;        /* repeated: how settle stores an element (ST_*) */
    uint8_t cv;        /* K_SCALAR: CV_* */
    uint8_t rslot;     /* repeated: its bit in dec.used, its index in dtab.rep;
                        * NO_RSLOT beyond MAX_COUNTED and for other fields */
    uint8_t op;        /* the fast path (OP_*) for the natural wire type */
} fslot;

/* decode_msg finds a slot by shifting the tag */
_Static_assert(sizeof(fslot) % 8 == 0, "slots found by tag & ~7");
_Static_assert(sizeof(fslot) == 32 || sizeof(void *) != 8, "32-byte slots on LP64");

struct dtab {
    const ProtobufCMessageDescriptor *desc;
    dtab *next;
    uint8_t payload;   /* 1: TensorProto, 2: QuantizedTensorProto */
    uint8_t share;     /* equal elements may be one message (msg_slot) */
    uint8_t share_empty; /* empty elements may be one message */
    uint32_t nnear;    /* slot[n] for n < nnear, then nfar slots by id */
    uint32_t nfar;
    uint32_t nrep;     /* rep[r]: the slot whose rslot is r */
    uint32_t rep[MAX_COUNTED];
    uint8_t rst[MAX_COUNTED];  /* rst[r]: the st of slot rep[r] */
    uint8_t res[MAX_COUNTED];  /* its es */
    uint32_t roff[MAX_COUNTED], rqoff[MAX_COUNTED];    /* its off, qoff */
    /* ops[tag]: decode_msg's fast path (OP_*) for a field's tag (number
     * << 3 | wire type) of a near field */
    uint8_t ops[8 * TAB_NEAR];
    /* The words of an initialised message that are not zero (offsets,
     * values), when there are no more than MAX_INIT of them */
    uint32_t ninit;
    uint32_t init_off[MAX_INIT];
    uint64_t init_val[MAX_INIT];
    fslot slot[];
};

static inline const fslot *slot_of(const dtab *t, uint32_t n)
{
    if (n < t->nnear)
        return &t->slot[n];
    for (uint32_t i = 0; i < t->nfar; i++)
        if (t->slot[t->nnear + i].fd->id == n)
            return &t->slot[t->nnear + i];
    return &t->slot[0];    /* number 0 is never a field */
}

/* The slot of a far field (number >= TAB_NEAR) with tag tg, if tg has
 * the field's own wire type; else NULL. */
static fslot *far_slot(const dtab *t, uint32_t tg)
{
    for (uint32_t i = 0; i < t->nfar; i++) {
        fslot *sl = (fslot *)&t->slot[t->nnear + i];
        if (sl->fd->id == tg >> 3)
            return natural_wt(sl->fd->type) == (int)(tg & 7) ? sl : NULL;
    }
    return NULL;
}

static bool payload_field(const dtab *t, uint32_t n)
{
    if (t->payload == 1)
        return n == 4 || n == 5 || n == 7 || n == 9 || n == 10 || n == 11;
    return t->payload == 2 && n == 2;
}

/* The fast path of slot sl for its natural wire type. */
static uint8_t fast_op(const dtab *t, const fslot *sl)
{
    bool rep = sl->flags & S_REP, oneof = sl->flags & S_ONEOF;
    if (rep && sl->rslot == NO_RSLOT)
        return OP_GENERIC;
    switch (sl->kind) {
    case K_MSG:
        return rep ? OP_MSG_REP : OP_MSG;
    case K_STR:
        return rep ? OP_STR_REP : oneof ? OP_STR_ONEOF : OP_STR;
    case K_SCALAR:
        /* TensorProto.data_location marks the model external (put_number) */
        if (t->payload == 1 && sl->fd->id == 14)
            return OP_GENERIC;
        if (sl->cv == CV_VAR || sl->cv == CV_VAR32)
            return rep ? OP_VAR_REP : oneof ? OP_VAR_ONEOF : OP_VAR;
        if (oneof)
            return OP_GENERIC;
        return sl->cv == CV_FIX && !rep ? OP_FIX : OP_GENERIC;
    default:
        return OP_GENERIC;
    }
}

/* t's non-zero words of an initialised message (ninit > MAX_INIT: too
 * many, a size that is not whole words, or an arena that is not zeroed:
 * new_message calls message_init).  False on OOM. */
static bool init_words(dec *d, const ProtobufCMessageDescriptor *desc, dtab *t)
{
    size_t size = desc->sizeof_message;
    t->ninit = MAX_INIT + 1;
    if (size % sizeof(uint64_t) || !oac_arena_zeroed(d->arena))
        return true;
    /* Zeroed first: message_init assigns the members, not the padding,
     * which must read as the zeroed arena's. */
    unsigned char *img = oac_calloc(d->ctx, 1, size);
    if (!img)
        return false;
    desc->message_init((ProtobufCMessage *)(void *)img);
    uint32_t n = 0;
    for (size_t off = 0; off < size && n <= MAX_INIT; off += sizeof(uint64_t)) {
        uint64_t w;
        memcpy(&w, img + off, sizeof w);
        if (!w)
            continue;
        if (n < MAX_INIT) {
            t->init_off[n] = (uint32_t)off;
            t->init_val[n] = w;
        }
        n++;
    }
    oac_dealloc(d->ctx, img);
    t->ninit = n;
    return true;
}

static dtab *table(dec *d, const ProtobufCMessageDescriptor *desc)
{
    for (dtab *t = d->tabs; t; t = t->next)
        if (t->desc == desc)
            return t;
    uint32_t nnear = 1, nfar = 0;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        uint32_t id = desc->fields[i].id;
        if (id >= TAB_NEAR)
            nfar++;
        else if (id >= nnear)
            nnear = id + 1;
    }
    dtab *t = oac_calloc(d->ctx, 1, sizeof *t + (size_t)(nnear + nfar) * sizeof(fslot));
    if (!t)
        return NULL;
    if (!init_words(d, desc, t)) {
        oac_dealloc(d->ctx, t);
        return NULL;
    }
    t->desc = desc;
    t->nnear = nnear;
    t->nfar = nfar;
    if (desc == &onnx__tensor_proto__descriptor)
        t->payload = 1;
    else if (desc == &onnx__quantized_tensor_proto__descriptor)
        t->payload = 2;
    t->share = desc == &onnx__attribute_proto__descriptor ||
               desc == &onnx__tensor_shape_proto__dimension__descriptor;
    /* An empty NodeProto (no op_type: model-invalid, which nothing
     * annotates or writes into) is one message however many there are:
     * a million of them cost a pointer each, not a node each. */
    t->share_empty = desc == &onnx__node_proto__descriptor;
    for (uint32_t i = 0; i < nnear + nfar; i++)
        t->slot[i].wts = 0xff;
    uint32_t far = 0, rslot = 0;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &desc->fields[i];
        fslot *sl = fd->id < TAB_NEAR ? &t->slot[fd->id] : &t->slot[nnear + far++];
        int nat = natural_wt(fd->type);
        sl->fd = fd;
        sl->off = fd->offset;
        sl->qoff = fd->quantifier_offset;
        sl->es = (uint8_t)elt_size(fd->type);
        sl->st = fd->type == PROTOBUF_C_TYPE_BYTES ? ST_BYTES : sl->es == 8 ? ST_8 : ST_4;
        sl->wts = (uint8_t)(1u << nat);
        sl->rslot = NO_RSLOT;
        switch (fd->type) {
        case PROTOBUF_C_TYPE_SINT32:
            sl->cv = CV_ZIG32;
            break;
        case PROTOBUF_C_TYPE_SINT64:
            sl->cv = CV_ZIG64;
            break;
        case PROTOBUF_C_TYPE_BOOL:
            sl->cv = CV_BOOL;
            break;
        default:
            sl->cv = nat != 0 ? CV_FIX : sl->es == 8 ? CV_VAR : CV_VAR32;
            break;
        }
        switch (fd->type) {
        case PROTOBUF_C_TYPE_MESSAGE:
            sl->kind = K_MSG;
            break;
        case PROTOBUF_C_TYPE_STRING:
            sl->kind = K_STR;
            break;
        case PROTOBUF_C_TYPE_BYTES:
            sl->kind = K_BYTES;
            break;
        default:
            sl->kind = K_SCALAR;
            break;
        }
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            sl->flags |= S_REP;
            if (rslot < MAX_COUNTED) {
                t->rep[rslot] = (uint32_t)(sl - t->slot);
                t->rst[rslot] = sl->st;
                t->res[rslot] = sl->es;
                t->roff[rslot] = sl->off;
                t->rqoff[rslot] = sl->qoff;
                sl->rslot = (uint8_t)rslot++;
                t->nrep = rslot;
            }
            if (nat != 2) {
                /* repeated scalars may come packed */
                sl->flags |= S_PACKABLE;
                sl->wts |= 1u << 2;
            }
        }
        if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
            sl->flags |= S_ONEOF;
        if (payload_field(t, fd->id))
            sl->kind = K_PAYLOAD;
        sl->op = fast_op(t, sl);
        if (fd->id < TAB_NEAR)
            t->ops[fd->id << 3 | (unsigned)nat] = sl->op;
    }
    t->next = d->tabs;
    d->tabs = t;
    return t;
}

static void free_tables(dec *d)
{
    while (d->tabs) {
        dtab *next = d->tabs->next;
        oac_dealloc(d->ctx, d->tabs);
        d->tabs = next;
    }
}

/* ---- repeated fields ------------------------------------------------------ */

/* A message's repeated arrays and unknown fields are allocated once, at
 * their size, when the message ends: a large graph has a hundred
 * thousand arrays of one to four elements, and node lists of tens of
 * thousands, where growing by doubling leaves up to half of each unused
 * and the earlier copies dead in the arena.  Until then their elements
 * wait on the dec's stack, in the order of the wire, one to three
 * 64-bit values each; the first value's tag says which field: */
#define STK_PACKED 0x40u   /* | rslot: a packed run (its bytes, its length) */
#define STK_UNKNOWN 0x80u  /* an unknown field (tag << 3 | wire type, length, data) */
#define STK_MORE 0xffu     /* a further value of the element before */

/* A message's elements are stk[base, stk_n) from where it starts; until
 * settle, the counts of its repeated fields with an rslot and of its
 * unknown fields are in its quantifier members (n_*), the arrays NULL. */
_Static_assert(MAX_COUNTED <= STK_PACKED, "a plain element's tag is its rslot");

static bool stk_grow(dec *d)
{
    size_t cap = d->stk_cap ? d->stk_cap * 2 : 1024;
    if (cap > SIZE_MAX / sizeof *d->stk) {
        oac_err(d->ctx, OAC_ENOMEM, "out of memory");
        return false;
    }
    uint64_t *v = oac_realloc(d->ctx, d->stk, cap * sizeof *v);
    if (!v)
        return false;
    d->stk = v;
    uint8_t *tag = oac_realloc(d->ctx, d->stk_tag, cap);
    if (!tag)
        return false;
    d->stk_tag = tag;
    d->stk_cap = cap;
    return true;
}

static inline bool push(dec *d, unsigned tag, uint64_t v)
{
    size_t n = d->stk_n;
    if (n == d->stk_cap && !stk_grow(d))
        return false;
    uint64_t *val = d->stk;
    uint8_t *tags = d->stk_tag;
    d->stk_n = n + 1;
    val[n] = v;
    tags[n] = (uint8_t)tag;
    return true;
}

/* The repeated fields beyond MAX_COUNTED of a type (none in ONNX) grow by
 * doubling: such an array of n > 0 elements has room for capacity(n) (4,
 * or the next power of two >= n). */
static inline size_t capacity(size_t n)
{
    if (n <= 4)
        return 4;
    return (size_t)1 << (sizeof(unsigned long long) * CHAR_BIT -
                         (size_t)__builtin_clzll((unsigned long long)(n - 1)));
}

static bool grow_slow(dec *d, void *arr, size_t n, size_t k, size_t es)
{
    size_t cap = capacity(n + k);
    if (cap > SIZE_MAX / es) {
        oac_err(d->ctx, OAC_ENOMEM, "array too large");
        return false;
    }
    void *a = alloc(d, cap * es);
    if (!a)
        return false;
    void **pa = arr;
    if (n)
        memcpy(a, *pa, n * es);
    *pa = a;
    return true;
}

static inline bool grow(dec *d, void *arr, size_t n, size_t k, size_t es)
{
    return (n && n + k <= capacity(n)) || grow_slow(d, arr, n, k, es);
}

/* ---- merged arrays --------------------------------------------------------- */

/* merge() appends a later occurrence's elements to the earlier array; to
 * stay linear over any number of occurrences it allocates with room to
 * spare (capacity()) and notes the capacity here, keyed by the array.
 * Any other array is full.  Only files that repeat a singular message
 * field come here. */
static size_t mset_hash(const void *p, size_t size)
{
    return (size_t)(((uintptr_t)p >> 3) * 0x9e3779b97f4a7c15ull) & (size - 1);
}

static size_t merged_room(const dec *d, const void *arr, size_t n)
{
    if (!d->mset_size)
        return n;
    for (size_t i = mset_hash(arr, d->mset_size);; i = (i + 1) & (d->mset_size - 1)) {
        if (d->mset_key[i] == arr)
            return d->mset_cap[i];
        if (!d->mset_key[i])
            return n;
    }
}

static bool merged_note(dec *d, void *arr, size_t cap)
{
    if (2 * (d->mset_n + 1) > d->mset_size) {
        size_t size = d->mset_size ? 2 * d->mset_size : 64;
        void **key = oac_calloc(d->ctx, size, sizeof *key);
        size_t *caps = key ? oac_calloc(d->ctx, size, sizeof *caps) : NULL;
        if (!caps) {
            oac_dealloc(d->ctx, key);
            return false;
        }
        for (size_t i = 0; i < d->mset_size; i++) {
            if (!d->mset_key[i])
                continue;
            size_t j = mset_hash(d->mset_key[i], size);
            while (key[j])
                j = (j + 1) & (size - 1);
            key[j] = d->mset_key[i];
            caps[j] = d->mset_cap[i];
        }
        oac_dealloc(d->ctx, d->mset_key);
        oac_dealloc(d->ctx, d->mset_cap);
        d->mset_key = key;
        d->mset_cap = caps;
        d->mset_size = size;
    }
    /* A fresh arena block: never a key already (blocks are not reused). */
    size_t i = mset_hash(arr, d->mset_size);
    while (d->mset_key[i])
        i = (i + 1) & (d->mset_size - 1);
    d->mset_key[i] = arr;
    d->mset_cap[i] = cap;
    d->mset_n++;
    return true;
}

/* Room for k more elements after the n of the earlier occurrence's
 * array *arr. */
static bool merge_room(dec *d, void **arr, size_t n, size_t k, size_t es)
{
    if (k <= merged_room(d, *arr, n) - n)
        return true;
    if (k > SIZE_MAX - n)
        goto too_large;
    size_t cap = capacity(n + k);
    if (cap > SIZE_MAX / es)
        goto too_large;
    void *a = alloc(d, cap * es);
    if (!a || !merged_note(d, a, cap))
        return false;
    memcpy(a, *arr, n * es);
    *arr = a;
    return true;
too_large:
    oac_err(d->ctx, OAC_ENOMEM, "array too large");
    return false;
}

/* ---- dropped parts: payloads left in the buffer must not vanish ------- */

static bool in_buf(const dec *d, const void *p)
{
    const uint8_t *q = p;
    return q >= d->buf && q < d->buf + d->len;
}

static bool unknowns_mapped(const dec *d, const ProtobufCMessage *m)
{
    for (size_t i = 0; i < m->n_unknown_fields; i++)
        if (in_buf(d, m->unknown_fields[i].data))
            return true;
    return false;
}

/* Does the tree under m hold a payload left in the buffer? */
static bool tree_mapped(const dec *d, const ProtobufCMessage *m)
{
    if (!m)
        return false;
    if (unknowns_mapped(d, m))
        return true;
    const ProtobufCMessageDescriptor *desc = m->descriptor;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &desc->fields[i];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)MEMBER(m, fd->quantifier_offset) != fd->id)
            continue;
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)MEMBER(m, fd->quantifier_offset);
            ProtobufCMessage **arr = *(ProtobufCMessage ***)MEMBER(m, fd->offset);
            for (size_t j = 0; j < n; j++)
                if (tree_mapped(d, arr[j]))
                    return true;
        } else if (tree_mapped(d, *(ProtobufCMessage **)MEMBER(m, fd->offset))) {
            return true;
        }
    }
    return false;
}

/* The member of a oneof that is set, or NULL. */
static const ProtobufCFieldDescriptor *oneof_field(const ProtobufCMessageDescriptor *desc,
                                                   uint32_t which)
{
    return which ? protobuf_c_message_descriptor_get_field(desc, which) : NULL;
}

/* Before a oneof member is replaced: a message member is dropped whole. */
static void drop_oneof(dec *d, const dtab *t, ProtobufCMessage *m,
                       const ProtobufCFieldDescriptor *fd)
{
    uint32_t which = *(uint32_t *)MEMBER(m, fd->quantifier_offset);
    if (!which)
        return;
    const ProtobufCFieldDescriptor *old = slot_of(t, which)->fd;
    if (!old)
        return;
    if (old->type == PROTOBUF_C_TYPE_MESSAGE &&
        tree_mapped(d, *(ProtobufCMessage **)MEMBER(m, old->offset)))
        d->lost = true;
    memset(MEMBER(m, fd->offset), 0, elt_size(old->type));
}

/* protobuf-c's merge_messages: earlier into latter, latter wins.  OAC_OK
 * or OAC_ENOMEM; a merge protobuf-c refuses sets d->invalid. */
static int merge(dec *d, ProtobufCMessage *earlier, ProtobufCMessage *latter)
{
    const ProtobufCMessageDescriptor *desc = latter->descriptor;
    if (unknowns_mapped(d, earlier))
        d->lost = true;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &desc->fields[i];
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t *ne = MEMBER(earlier, fd->quantifier_offset);
            size_t *nl = MEMBER(latter, fd->quantifier_offset);
            void **pe = MEMBER(earlier, fd->offset);
            void **pl = MEMBER(latter, fd->offset);
            if (*ne == 0)
                continue;
            if (*nl > 0) {
                /* Append the later elements to the earlier array, with
                 * room to spare (merge_room): a file repeating a
                 * singular message n times costs O(n), not the O(n^2)
                 * of a fresh array per merge. */
                size_t es = elt_size(fd->type);
                if (!merge_room(d, pe, *ne, *nl, es))
                    return OAC_ENOMEM;
                memcpy((char *)*pe + *ne * es, *pl, *nl * es);
                *pl = *pe;
                *nl += *ne;
            } else {
                *nl = *ne;
                *pl = *pe;
            }
            *ne = 0;
            *pe = NULL;
            continue;
        }
        if (fd->label != PROTOBUF_C_LABEL_OPTIONAL && fd->label != PROTOBUF_C_LABEL_NONE)
            continue;
        const ProtobufCFieldDescriptor *f = fd;
        uint32_t *ce = MEMBER(earlier, fd->quantifier_offset);
        uint32_t *cl = MEMBER(latter, fd->quantifier_offset);
        if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            if (*cl != 0) {
                /* the later occurrence's member wins, the earlier's goes */
                const ProtobufCFieldDescriptor *old = oneof_field(desc, *ce);
                if (old && old->type == PROTOBUF_C_TYPE_MESSAGE &&
                    tree_mapped(d, *(ProtobufCMessage **)MEMBER(earlier, old->offset)))
                    d->lost = true;
                continue;
            }
            f = oneof_field(desc, *ce);
            if (!f) {
                /* protobuf-c finds no field for case 0 and fails */
                d->invalid = true;
                return OAC_OK;
            }
        }
        void *e = MEMBER(earlier, f->offset), *l = MEMBER(latter, f->offset);
        bool move = false;
        switch (f->type) {
        case PROTOBUF_C_TYPE_MESSAGE: {
            ProtobufCMessage *em = *(ProtobufCMessage **)e, *lm = *(ProtobufCMessage **)l;
            if (em && lm) {
                int rc = merge(d, em, lm);
                if (rc)
                    return rc;
            } else if (em) {
                move = true;
            }
            break;
        }
        case PROTOBUF_C_TYPE_BYTES: {
            const ProtobufCBinaryData *def = f->default_value;
            uint8_t *ed = ((ProtobufCBinaryData *)e)->data;
            uint8_t *ld = ((ProtobufCBinaryData *)l)->data;
            move = (ed && (!def || ed != def->data)) && (!ld || (def && ld == def->data));
            break;
        }
        case PROTOBUF_C_TYPE_STRING: {
            const char *def = f->default_value;
            move = *(char **)e != def && *(char **)l == def;
            break;
        }
        default:
            move = *ce != 0 && *cl == 0;
            break;
        }
        if (move) {
            size_t es = elt_size(f->type);
            memcpy(l, e, es);
            memset(e, 0, es);
            if (f->quantifier_offset != 0) {
                *cl = *ce;
                *ce = 0;
            }
        }
    }
    return OAC_OK;
}

/* ---- one message ---------------------------------------------------------- */

static int decode_msg(dec *d, dtab *t, const uint8_t *p, const uint8_t *end, int depth,
                      ProtobufCMessage **out);

/* Store a packed run of a repeated scalar (check_packed has passed) as
 * elements of size es at arr. */
static void put_packed(ProtobufCType type, size_t es, const uint8_t *val, size_t len,
                       char *arr)
{
    switch (natural_wt(type)) {
    case 5:
    case 1:
        memcpy(arr, val, len);
        return;
    default:
        for (const uint8_t *p = val, *end = val + len; p < end; arr += es) {
            const uint8_t *q = p;
            while (*q & 0x80)
                q++;
            q++;
            put_scalar(type, p, q, arr);
            p = q;
        }
        return;
    }
}

static bool too_large(dec *d)
{
    oac_err(d->ctx, OAC_ENOMEM, "array too large");
    return false;
}

/* An array of n elements of size es for the member at off of m. */
static bool settle_array(dec *d, ProtobufCMessage *m, uint32_t off, size_t n, size_t es)
{
    if (n > SIZE_MAX / es)
        return too_large(d);
    void *arr = alloc(d, n * es);
    if (!arr)
        return false;
    *(void **)MEMBER(m, off) = arr;
    return true;
}

/* At the end of message m, whose elements are stk[base, stk_n): its
 * repeated arrays and unknown fields from the stack, each allocated
 * once at its size (the count its n_ member already holds). */
static int settle(dec *d, size_t base, uint32_t used, const dtab *t, ProtobufCMessage *m)
{
    char *at[MAX_COUNTED];     /* where rslot r's next element goes */
    for (uint32_t bits = used; bits; bits &= bits - 1) {
        unsigned r = (unsigned)__builtin_ctz(bits);
        size_t n = *(size_t *)MEMBER(m, t->rqoff[r]), es = t->res[r];
        if (n > SIZE_MAX / es)
            return too_large(d), OAC_ENOMEM;
        if (!(at[r] = alloc(d, n * es)))
            return OAC_ENOMEM;
        *(char **)MEMBER(m, t->roff[r]) = at[r];
    }
    ProtobufCMessageUnknownField *u = NULL;
    if (m->n_unknown_fields) {
        if (!settle_array(d, m, offsetof(ProtobufCMessage, unknown_fields),
                          m->n_unknown_fields, sizeof *m->unknown_fields))
            return OAC_ENOMEM;
        u = m->unknown_fields;
    }
    const uint64_t *v = d->stk;
    const uint8_t *tag = d->stk_tag;
    for (size_t i = base, end = d->stk_n; i < end;) {
        unsigned tg = tag[i];
        if (tg < STK_PACKED) {
            char *w = at[tg];
            switch (t->rst[tg]) {
            case ST_8:
                /* 64-bit scalars or pointers on a 64-bit machine; a
                 * field's elements mostly come in one run */
                do {
                    memcpy(w, &v[i++], 8);
                    w += 8;
                } while (i < end && tag[i] == tg);
                break;
            case ST_4:
                /* 32-bit scalars, or pointers on a 32-bit machine */
                do {
                    uint32_t x = (uint32_t)v[i++];
                    memcpy(w, &x, 4);
                    w += 4;
                } while (i < end && tag[i] == tg);
                break;
            default: {
                ProtobufCBinaryData *bd = (ProtobufCBinaryData *)(void *)w;
                bd->len = (size_t)v[i];
                bd->data = (uint8_t *)(uintptr_t)v[i + 1];
                w += sizeof *bd;
                i += 2;
                break;
            }
            }
            at[tg] = w;
        } else if (tg == STK_UNKNOWN) {
            u->tag = (uint32_t)(v[i] >> 3);
            u->wire_type = (ProtobufCWireType)(v[i] & 7);
            u->len = (size_t)v[i + 1];
            u->data = (uint8_t *)(uintptr_t)v[i + 2];
            u++;
            i += 3;
        } else {
            unsigned r = tg & (STK_PACKED - 1);
            const fslot *sl = &t->slot[t->rep[r]];
            const uint8_t *val = (const uint8_t *)(uintptr_t)v[i];
            size_t len = (size_t)v[i + 1];
            put_packed(sl->fd->type, sl->es, val, len, at[r]);
            at[r] += sl->es * packed_count(sl->fd->type, val, len);
            i += 2;
        }
    }
    d->stk_n = base;
    return OAC_OK;
}

/* Count k elements of the repeated field sl of m and push the first
 * value that stands for them, tagged tg (its rslot, | STK_PACKED for a
 * packed run); the caller pushes any further values, tagged STK_MORE. */
static inline bool push_elt(dec *d, ProtobufCMessage *m, const fslot *sl, unsigned tg,
                            uint64_t v, size_t k)
{
    d->used |= 1u << sl->rslot;
    *(size_t *)MEMBER(m, sl->qoff) += k;
    return push(d, tg, v);
}

/* Copy n bytes from src to dst, inline for the short strings most names
 * are (memcpy's call and dispatch cost more than the copy). */
static inline void copy_short(char *dst, const uint8_t *src, size_t n)
{
    uint64_t a, b, c, e;
    uint32_t x, y;
    if (n >= 8) {
        if (n > 32) {
            memcpy(dst, src, n);
            return;
        }
        /* two or four words that may overlap */
        if (n > 16) {
            memcpy(&a, src, 8);
            memcpy(&b, src + 8, 8);
            memcpy(&c, src + n - 16, 8);
            memcpy(&e, src + n - 8, 8);
            memcpy(dst, &a, 8);
            memcpy(dst + 8, &b, 8);
            memcpy(dst + n - 16, &c, 8);
            memcpy(dst + n - 8, &e, 8);
            return;
        }
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
        memcpy(&x, src, 4);
        memcpy(&y, src + n - 4, 4);
        memcpy(dst, &x, 4);
        memcpy(dst + n - 4, &y, 4);
    } else if (n) {
        dst[0] = (char)src[0];
        dst[n / 2] = (char)src[n / 2];
        dst[n - 1] = (char)src[n - 1];
    }
}

/* ---- strings ------------------------------------------------------------ */

/* A model names each value where it is defined and again wherever it is
 * read (every NodeProto.input repeats an earlier output, initializer or
 * input name), and op_type, domain and attribute names recur on every
 * node: at 2048 layers, 248k strings of 2.8 MB hold 84k distinct ones of
 * 1.1 MB.  So a string equal to one copied lately is not copied again,
 * the field points at the earlier copy: a loaded model's strings are
 * never written or freed one by one (the arena owns them all), so fields
 * may share one.  "Lately" is a direct-mapped cache of SHARE_SLOTS copies
 * in the dec state, keyed by the length and the bytes at both ends (with
 * n, all of a string of up to 16) and, past 16, the 8 after the first 8
 * (where a layer's number usually is); a slot holds the newest copy of
 * its key.  2048 slots (64 KiB, below malloc's mmap threshold) catch 83%
 * of the bytes that could be shared, 4096 only 1% more: what they miss
 * are mostly initializer and input names, which a file holds after the
 * nodes that read them.  Strings longer than
 * OAC_DECODE_SHARE_MAX (doc strings) seldom recur and are simply
 * copied. */
#define SHARE_BITS 11
#define SHARE_SLOTS (1u << SHARE_BITS)

struct shared {
    char *s;
    size_t size;    /* strlen(s) + 1; 0: an empty slot */
    uint64_t a, b;  /* its first and last words, as copy_string keys it */
};

/* The cache slot of a string whose first and last words are a and b
 * (c: the word after the first, 0 up to 16 bytes). */
static inline struct shared *share_slot(dec *d, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t k = a + (b << 32 | b >> 32) + c;
    return &d->shared[(k * 0x9e3779b97f4a7c15u) >> (64 - SHARE_BITS)];
}

/* copy_string for 16 < n <= OAC_DECODE_SHARE_MAX. */
static char *copy_long_string(dec *d, const uint8_t *q, size_t n, bool *fresh)
{
    uint64_t a, b, c;
    memcpy(&a, q, 8);
    memcpy(&b, q + n - 8, 8);
    memcpy(&c, q + 8, 8);
    struct shared *e = share_slot(d, a, b, c);
    if (e->a == a && e->b == b && e->size == n + 1) {
        uint64_t ec;
        memcpy(&ec, e->s + 8, 8);
        /* up to 24 bytes, a, c and b are the whole string */
        if (ec == c && (n <= 24 || memcmp(e->s + 16, q + 16, n - 24) == 0))
            return e->s;
    }
    char *s = oac_arena_bytes(d->arena, n + 1);
    if (!s)
        return NULL;
    *fresh = true;
    copy_short(s, q, n);
    s[n] = '\0';
    *e = (struct shared){ s, n + 1, a, b };
    return s;
}

/* The n bytes at q as a NUL-terminated string in the arena: an earlier
 * copy when the cache holds one, else a new copy; NULL on OOM.  Inline
 * in the walk's loop (a call's saved registers would cost as much as
 * the rest).  Up to 16 bytes, the words at both ends that copy_short
 * copies are the whole string, and the key. */
static inline __attribute__((always_inline)) char *copy_bytes_string(dec *d, const uint8_t *q,
                                                                      size_t n, bool *fresh)
{
    uint64_t a, b;
    if (n >= 8) {
        if (n > 16) {
            if (n <= OAC_DECODE_SHARE_MAX)
                return copy_long_string(d, q, n, fresh);
            char *s = oac_arena_bytes(d->arena, n + 1);
            *fresh = true;
            if (s) {
                memcpy(s, q, n);
                s[n] = '\0';
            }
            return s;
        }
        memcpy(&a, q, 8);
        memcpy(&b, q + n - 8, 8);
    } else if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, q, 4);
        memcpy(&y, q + n - 4, 4);
        a = x;
        b = y;
    } else {
        a = n ? q[0] | (uint32_t)q[n / 2] << 8 | (uint32_t)q[n - 1] << 16 : 0;
        b = 0;
    }
    struct shared *e = share_slot(d, a, b, 0);
    if (e->a == a && e->b == b && e->size == n + 1)
        return e->s;
    char *s = oac_arena_bytes(d->arena, n + 1);
    if (!s)
        return NULL;
    *fresh = true;
    if (n >= 8) {
        memcpy(s, &a, 8);
        memcpy(s + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t x = (uint32_t)a, y = (uint32_t)b;
        memcpy(s, &x, 4);
        memcpy(s + n - 4, &y, 4);
    } else if (n) {
        s[0] = (char)q[0];
        s[n / 2] = (char)q[n / 2];
        s[n - 1] = (char)q[n - 1];
    }
    s[n] = '\0';
    *e = (struct shared){ s, n + 1, a, b };
    return s;
}

/* Does q[0, n) hold a NUL byte?  Up to 16 bytes in the words copy_string
 * reads anyway (n = 1..3: bytes 0, n/2 and n-1 are all of them). */
static inline bool has_nul(const uint8_t *q, size_t n)
{
    const uint64_t lo = 0x0101010101010101u, hi = 0x8080808080808080u;
    if (n > 16)
        return memchr(q, 0, n) != NULL;
    if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, q, 8);
        memcpy(&b, q + n - 8, 8);
        return (((a - lo) & ~a) | ((b - lo) & ~b)) & hi;
    }
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, q, 4);
        memcpy(&b, q + n - 4, 4);
        return (((a - (uint32_t)lo) & ~a) | ((b - (uint32_t)lo) & ~b)) & (uint32_t)hi;
    }
    return n && (!q[0] || !q[n / 2] || !q[n - 1]);
}

/* copy_bytes_string, and a copy of bytes that held a NUL (its C string
 * ends there) listed in d->nul (invariant 6) when it is made: a shared
 * copy was listed then, if it had to be. */
static inline __attribute__((always_inline)) char *copy_string(dec *d, const uint8_t *q,
                                                                size_t n)
{
    bool fresh = false;
    char *s = copy_bytes_string(d, q, n, &fresh);
    if (fresh && s && __builtin_expect(has_nul(q, n), 0)) {
        oac_decode_nul *e = alloc(d, sizeof *e);
        if (!e)
            return NULL;
        e->s = s;
        e->next = d->nul;
        d->nul = e;
    }
    return s;
}

/* ---- shared messages ------------------------------------------------------- */

/* Most of a decoder graph's attributes are the same few (a Transpose's
 * perm, an axis), and its value shapes the same few dimensions: at 2048
 * layers 16k AttributeProtos of 248 bytes hold 4 distinct ones, 33k
 * Dimensions of 48 bytes a handful.  So an AttributeProto or a
 * Dimension (the tables with share set), an element of a repeated field
 * (NodeProto.attribute, TensorShapeProto.dim, ...), whose bytes equal
 * those of a recent one of its type is that one, not decoded again, when
 * decoding that one began no other message: a leaf (an attribute without
 * a graph or a tensor) that nothing can tell from an equal copy, as the
 * tree is read-only.  The elements of a repeated field are never merged
 * into, so a shared one never changes.  Empty NodeProtos share too (no
 * op_type: annotate, the one writer of nodes, never writes one).  Bytes
 * decode the same way
 * wherever they are (no payload of a leaf of at most MSG_SHARE_MAX bytes
 * stays in the buffer), so the result is what decoding would give.  A
 * direct-mapped cache of MSG_SHARE_SLOTS elements keyed by all of their
 * bytes, kept in it (the buffer's pages may be dropped). */
#define MSG_SHARE_BITS 8
#define MSG_SHARE_SLOTS (1u << MSG_SHARE_BITS)
#define MSG_SHARE_MAX 48

struct mshared {
    const dtab *t;     /* NULL: an empty slot */
    ProtobufCMessage *m;
    size_t n;
    uint8_t bytes[MSG_SHARE_MAX];
};

/* The cache slot of the element whose bytes are [q, q + n). */
static inline struct mshared *msg_slot(dec *d, const uint8_t *q, size_t n)
{
    const uint64_t k = 0x9e3779b97f4a7c15u;
    uint64_t h = n * k, w;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&w, q + i, 8);
            h = (h ^ w) * k;
        }
        memcpy(&w, q + n - 8, 8);
    } else {
        w = 0;
        for (size_t i = 0; i < n; i++)
            w = w << 8 | q[i];
    }
    h = (h ^ w) * k;
    return &d->mshared[h >> (64 - MSG_SHARE_BITS)];
}

/* A scalar's value as put_scalar would store it, as it goes on the stack:
 * a member of 8 bytes as they are, one of 4 as a uint32_t (settle and
 * put_value store them back the same way). */
static inline uint64_t scalar_value(const fslot *sl, const uint8_t *val, const uint8_t *end)
{
    if (sl->cv == CV_FIX) {
        if (sl->es == 8) {
            uint64_t v;
            memcpy(&v, val, 8);
            return v;
        }
        uint32_t x;
        memcpy(&x, val, 4);
        return x;
    }
    uint64_t v = 0;
    if (end - val == 1)
        v = *val;
    else
        (void)get_varint(val, end, &v);
    switch (sl->cv) {
    case CV_VAR32:      /* INT32, UINT32, ENUM: the low 32 bits */
        return (uint32_t)v;
    case CV_ZIG32: {
        uint32_t u = (uint32_t)v;
        return (uint32_t)((u >> 1) ^ -(u & 1));
    }
    case CV_ZIG64:
        return (v >> 1) ^ -(v & 1);
    case CV_BOOL: {
        /* protobuf-c: true when any 7-bit group is not zero (v may have
         * lost a group past 64 bits) */
        protobuf_c_boolean b = 0;
        for (const uint8_t *p = val; p < end; p++)
            if (*p & 0x7f)
                b = 1;
        return (uint32_t)b;
    }
    default:
        return v;
    }
}

/* Store a value of scalar_value at the member or element dst. */
static inline void put_value(const fslot *sl, uint64_t v, void *dst)
{
    if (sl->es == 8) {
        memcpy(dst, &v, 8);
    } else {
        uint32_t x = (uint32_t)v;
        memcpy(dst, &x, 4);
    }
}

static int add_unknown(dec *d, ProtobufCMessage *m, uint32_t tag, int wt,
                       const uint8_t *data, size_t len, bool copy)
{
    const uint8_t *at = data;
    if (copy) {
        uint8_t *c = oac_arena_bytes(d->arena, len);
        if (!c)
            return OAC_ENOMEM;
        copy_short((char *)c, data, len);
        at = c;
    }
    /* Else it points into the read-only buffer: the arena never frees it
     * and nothing writes through unknown fields. */
    if (m->n_unknown_fields == UINT_MAX) {
        /* protobuf-c counts them in an unsigned */
        too_large(d);
        return OAC_ENOMEM;
    }
    m->n_unknown_fields++;
    if (!push(d, STK_UNKNOWN, (uint64_t)tag << 3 | (unsigned)wt) ||
        !push(d, STK_MORE, len) || !push(d, STK_MORE, (uintptr_t)at))
        return OAC_ENOMEM;
    return OAC_OK;
}

/* Which payload fields of a tensor stay in the buffer: those whose
 * occurrences add up to more than the threshold (all occurrences of a
 * field go together, so kept and mapped parts never interleave).  Scans
 * the whole message first, so its scan errors come before those of its
 * fields' contents. */
static int payload_mask(dec *d, const dtab *t, const uint8_t *p, const uint8_t *end,
                        uint32_t *mask)
{
    size_t total[12] = { 0 };
    *mask = 0;
    while (p < end) {
        wfield f;
        int rc = next_field(d, p, end, &f);
        if (rc)
            return rc;
        if (f.number < 12 && payload_field(t, f.number)) {
            total[f.number] += (size_t)(f.end - f.tag_at);
            if (total[f.number] > OAC_DECODE_THRESHOLD)
                *mask |= 1u << f.number;
        }
        p = f.end;
    }
    return OAC_OK;
}

/* A payload or unknown field at f: its run of adjacent occurrences (each
 * validated with sl, whose fd is NULL for an unknown field), kept or left
 * in the buffer.  *next: the run's end. */
static int __attribute__((noinline))
take_span(dec *d, ProtobufCMessage *m, const fslot *sl, const wfield *f,
          const uint8_t *end, bool payload, const uint8_t **next)
{
    if ((uintptr_t)f->tag_at >= d->drop_at)
        drop_pages(d, f->tag_at);
    const uint8_t *p = f->end;
    while (p < end) {
        wfield g;
        int rc = next_field(d, p, end, &g);
        if (rc)
            return rc;
        if (g.number != f->number)
            break;
        if (!(sl->wts & (1u << g.wt)))
            return fail(d, g.tag_at, "wrong wire type %d for field %s", g.wt, sl->fd->name);
        p = g.end;
    }
    *next = p;
    const uint8_t *data = f->tag_at + f->tag_len;
    if (payload || (size_t)(p - f->tag_at) > OAC_DECODE_THRESHOLD)
        return add_unknown(d, m, f->number, f->wt, data, (size_t)(p - data), false);
    /* Small: one copied unknown field per occurrence, as protobuf-c. */
    if (p == f->end)   /* the one occurrence f */
        return add_unknown(d, m, f->number, f->wt, data, (size_t)(p - data), true);
    for (const uint8_t *q = f->tag_at; q < p;) {
        wfield g;
        (void)next_field(d, q, p, &g);
        const uint8_t *gd = g.tag_at + g.tag_len;
        int rc = add_unknown(d, m, g.number, g.wt, gd, (size_t)(g.end - gd), true);
        if (rc)
            return rc;
        q = g.end;
    }
    return OAC_OK;
}

/* Store a submessage sub decoded for field sl of m. */
static int put_message(dec *d, const dtab *t, ProtobufCMessage *m,
                       const fslot *sl, ProtobufCMessage *sub)
{
    const ProtobufCFieldDescriptor *fd = sl->fd;
    void *member = MEMBER(m, fd->offset);
    if (sl->flags & S_REP) {
        if (sl->rslot != NO_RSLOT)
            return push_elt(d, m, sl, sl->rslot, (uintptr_t)sub, 1) ? OAC_OK : OAC_ENOMEM;
        size_t *n = MEMBER(m, fd->quantifier_offset);
        if (!grow(d, member, *n, 1, sizeof sub))
            return OAC_ENOMEM;
        (*(ProtobufCMessage ***)member)[(*n)++] = sub;
        return OAC_OK;
    }
    if (sl->flags & S_ONEOF) {
        drop_oneof(d, t, m, fd);
        *(ProtobufCMessage **)member = sub;
        *(uint32_t *)MEMBER(m, fd->quantifier_offset) = fd->id;
        return OAC_OK;
    }
    ProtobufCMessage *old = *(ProtobufCMessage **)member;
    if (old && old != fd->default_value) {
        int rc = merge(d, old, sub);
        if (rc)
            return rc;
    }
    *(ProtobufCMessage **)member = sub;
    return OAC_OK;
}

/* Store a string or bytes value of field sl. */
static int put_bytes(dec *d, const dtab *t, ProtobufCMessage *m, const fslot *sl,
                     const wfield *f)
{
    const ProtobufCFieldDescriptor *fd = sl->fd;
    size_t n = (size_t)(f->end - f->val);
    void *member = MEMBER(m, fd->offset);
    uint8_t *copy = NULL;
    if (sl->kind == K_STR) {
        char *s = copy_string(d, f->val, n);
        if (!s)
            return OAC_ENOMEM;
        copy = (uint8_t *)s;
    } else if (n) {
        copy = oac_arena_bytes(d->arena, n);
        if (!copy)
            return OAC_ENOMEM;
        memcpy(copy, f->val, n);
    }
    void *dst;
    if (sl->flags & S_REP) {
        if (sl->rslot != NO_RSLOT) {
            if (sl->kind == K_STR)
                return push_elt(d, m, sl, sl->rslot, (uintptr_t)copy, 1)
                    ? OAC_OK : OAC_ENOMEM;
            return push_elt(d, m, sl, sl->rslot, n, 1) && push(d, STK_MORE, (uintptr_t)copy)
                ? OAC_OK : OAC_ENOMEM;
        }
        size_t *cnt = MEMBER(m, fd->quantifier_offset);
        if (!grow(d, member, *cnt, 1, sl->es))
            return OAC_ENOMEM;
        dst = (char *)*(void **)member + sl->es * (*cnt)++;
    } else {
        if (sl->flags & S_ONEOF) {
            drop_oneof(d, t, m, fd);
            *(uint32_t *)MEMBER(m, fd->quantifier_offset) = fd->id;
        } else if (fd->type == PROTOBUF_C_TYPE_BYTES && fd->quantifier_offset) {
            *(protobuf_c_boolean *)MEMBER(m, fd->quantifier_offset) = 1;
        }
        dst = member;
    }
    if (sl->kind == K_STR) {
        *(char **)dst = (char *)copy;
    } else {
        ProtobufCBinaryData *bd = dst;
        bd->len = n;
        bd->data = copy;
    }
    return OAC_OK;
}

/* Store a scalar occurrence (packed or not) of field sl. */
static int put_scalars(dec *d, const dtab *t, ProtobufCMessage *m,
                       const fslot *sl, const wfield *f)
{
    const ProtobufCFieldDescriptor *fd = sl->fd;
    void *member = MEMBER(m, fd->offset);
    if (!(sl->flags & S_REP)) {
        if (sl->flags & S_ONEOF) {
            drop_oneof(d, t, m, fd);
            *(uint32_t *)MEMBER(m, fd->quantifier_offset) = fd->id;
        } else if (fd->quantifier_offset) {
            *(protobuf_c_boolean *)MEMBER(m, fd->quantifier_offset) = 1;
        }
        put_value(sl, scalar_value(sl, f->val, f->end), member);
        return OAC_OK;
    }
    size_t len = (size_t)(f->end - f->val);
    size_t k = f->wt == 2 ? packed_count(fd->type, f->val, len) : 1;
    if (k == 0)
        return OAC_OK;
    if (sl->rslot != NO_RSLOT) {
        if (f->wt != 2)
            return push_elt(d, m, sl, sl->rslot, scalar_value(sl, f->val, f->end), 1)
                ? OAC_OK : OAC_ENOMEM;
        return push_elt(d, m, sl, sl->rslot | STK_PACKED, (uintptr_t)f->val, k) &&
            push(d, STK_MORE, len) ? OAC_OK : OAC_ENOMEM;
    }
    size_t *n = MEMBER(m, fd->quantifier_offset);
    if (!grow(d, member, *n, k, sl->es))
        return OAC_ENOMEM;
    char *arr = *(char **)member + sl->es * *n;
    if (f->wt != 2)
        put_scalar(fd->type, f->val, f->end, arr);
    else
        put_packed(fd->type, sl->es, f->val, len, arr);
    *n += k;
    return OAC_OK;
}

/* A scalar field's occurrence: checked, stored. */
static int put_number(dec *d, const dtab *t, ProtobufCMessage *m, const fslot *sl,
                      const wfield *f)
{
    int rc;
    if (f->wt == 2 && (rc = check_packed(d, sl->fd, f)))
        return rc;
    if ((rc = put_scalars(d, t, m, sl, f)))
        return rc;
    /* TensorProto.data_location: only then can a tensor be external
     * (model/extdata.c is skipped for models without one). */
    if (t->payload == 1 && f->number == 14)
        d->external = true;
    return OAC_OK;
}

/* One field occurrence at p the general way (decode_msg's fast path did
 * not take it): scanned, checked, stored.  Returns where the next one
 * starts, or NULL with *rc set. */
static const uint8_t *__attribute__((noinline))
general_field(dec *d, dtab *t, ProtobufCMessage *m, const uint8_t *p,
              const uint8_t *end, uint32_t mask, int depth, int *rc)
{
    wfield f;
    if ((*rc = next_field(d, p, end, &f)))
        return NULL;
    fslot *sl = (fslot *)slot_of(t, f.number);
    if (!(sl->wts & (1u << f.wt))) {
        *rc = fail(d, f.tag_at, "wrong wire type %d for field %s of %s", f.wt,
                   sl->fd->name, t->desc->short_name);
        return NULL;
    }
    unsigned kind = sl->kind;
    bool payload = false;
    if (kind == K_PAYLOAD) {
        /* payload fields are numbered below 32 */
        payload = mask & (1u << f.number);
        kind = payload ? K_UNKNOWN : sl->fd->type == PROTOBUF_C_TYPE_BYTES ? K_BYTES
                                                                            : K_SCALAR;
    }
    const uint8_t *next = f.end;
    switch (kind) {
    case K_UNKNOWN:
        *rc = take_span(d, m, sl, &f, end, payload, &next);
        break;
    case K_MSG: {
        ProtobufCMessage *sub;
        /* the pages passed go before what reaches far into the
         * buffer: submessages here, payloads and unknown fields in
         * take_span (strings and scalars are copied anyway) */
        if ((uintptr_t)f.tag_at >= d->drop_at)
            drop_pages(d, f.tag_at);
        if (!sl->sub && !(sl->sub = table(d, sl->fd->descriptor))) {
            *rc = OAC_ENOMEM;
            break;
        }
        if (!(*rc = decode_msg(d, sl->sub, f.val, f.end, depth + 1, &sub)))
            *rc = put_message(d, t, m, sl, sub);
        break;
    }
    case K_STR:
    case K_BYTES:
        *rc = put_bytes(d, t, m, sl, &f);
        break;
    default:
        *rc = put_number(d, t, m, sl, &f);
        break;
    }
    return *rc ? NULL : next;
}

/* Field sl of a oneof of m takes over: as put_bytes and put_scalars do. */
static inline void set_case(dec *d, const dtab *t, ProtobufCMessage *m, const fslot *sl)
{
    uint32_t *c = MEMBER(m, sl->qoff);
    if (*c)
        drop_oneof(d, t, m, sl->fd);
    *c = sl->fd->id;
}

/* A message of type t as its message_init leaves it, in the arena. */
static inline ProtobufCMessage *new_message(dec *d, const dtab *t)
{
    ProtobufCMessage *m = alloc(d, t->desc->sizeof_message);
    if (!m)
        return NULL;
    /* in a zeroed arena only the words message_init sets to something
     * else need writing */
    uint32_t n = t->ninit;
    if (n == 1) {      /* the descriptor, in ONNX */
        memcpy((char *)m + t->init_off[0], &t->init_val[0], sizeof t->init_val[0]);
    } else if (n > MAX_INIT) {
        t->desc->message_init(m);
    } else {
        for (uint32_t i = 0; i < n; i++)
            memcpy((char *)m + t->init_off[i], &t->init_val[i], sizeof t->init_val[i]);
    }
    return m;
}

/* A message decode_msg has entered and not finished (dec.lv[depth]):
 * what it resumes when the one inside it ends, and what settles it. */
struct level {
    dtab *t;
    ProtobufCMessage *m;
    const uint8_t *end;
    size_t base;       /* its elements are stk[base, stk_n) */
    /* while a message inside it is decoded: the field that one is for,
     * and d->used */
    fslot *sl;
    uint32_t used;
    uint32_t mask;     /* payload_mask */
    /* the cache slot that gets this message if it ends with no message
     * begun inside it (NULL: none), its bytes from start to end, and
     * d->made once it began */
    struct mshared *ms;
    const uint8_t *start;
    size_t made;
};

/* Message t from [p, end) at depth, and the messages nested in it: the
 * submessages the fast path takes are entered in the loop (d->lv holds
 * the ones entered and not finished), not by a call, so that entering
 * one costs the state it needs and no more; general_field recurses
 * (the depth bound holds either way). */
static int decode_msg(dec *d, dtab *t, const uint8_t *p, const uint8_t *end, int depth,
                      ProtobufCMessage **out)
{
    if (depth > OAC_MAX_DEPTH)
        return fail(d, p, "messages nested deeper than %d", OAC_MAX_DEPTH);
    const uint32_t outer = d->used;
    struct level *lv = &d->lv[depth];  /* the innermost message's */
    struct level *const top = lv;
    ProtobufCMessage *m;
    struct mshared *ms_next = NULL;    /* the entered element's ms */
    int rc;
    top->ms = NULL;
    goto start;
enter:
    /* lv is one past the array at depth OAC_MAX_DEPTH + 1 */
    if (lv > d->lv_last)
        return fail(d, p, "messages nested deeper than %d", OAC_MAX_DEPTH);
    lv->ms = ms_next;
    lv->start = p;
start:
    lv->mask = 0;
    if (t->payload && (rc = payload_mask(d, t, p, end, &lv->mask)))
        return rc;
    if (!(m = new_message(d, t)))
        return OAC_ENOMEM;
    lv->made = ++d->made;
    lv->t = t;
    lv->m = m;
    lv->end = end;
    lv->base = d->stk_n;
    d->used = 0;
    for (;;) {
        while (p < end) {
            /* The fast path: a tag of one or two bytes that has an op
             * (its field's shape, if the wire type is the field's own)
             * and a value that is whole; it does what general_field
             * would do with the occurrence.  Anything else goes the
             * general way from the tag on. */
            const uint8_t *q = p;
            uint32_t tg = *q++;
            if (tg & 0x80) {
                if (q == end || (*q & 0x80))
                    goto general;
                tg = (tg & 0x7f) | (uint32_t)*q++ << 7;
            }
            unsigned op;
            fslot *sl;
            if (tg < sizeof t->ops) {
                if ((op = t->ops[tg]) == OP_GENERIC)
                    goto general;
                /* &t->slot[tg >> 3], without the shift down */
                sl = (fslot *)(void *)((char *)t->slot + (tg & ~7u) * (sizeof(fslot) / 8));
            } else if (!(sl = far_slot(t, tg)) || (op = sl->op) == OP_GENERIC) {
                goto general;
            }
            if (op <= OP_MSG) {
                if (q == end)
                    goto general;
                size_t n = *q++;
                if (n & 0x80) {
                    if (q == end || (*q & 0x80))
                        goto general;
                    n = (n & 0x7f) | (size_t)*q++ << 7;
                }
                if (n > (size_t)(end - q))
                    goto general;
                const uint8_t *at = p;
                p = q + n;
                if (op <= OP_STR_ONEOF) {
                    char *s = copy_string(d, q, n);
                    if (!s)
                        return OAC_ENOMEM;
                    if (op == OP_STR_REP) {
                        if (!push_elt(d, m, sl, sl->rslot, (uintptr_t)s, 1))
                            return OAC_ENOMEM;
                        continue;
                    }
                    if (op == OP_STR_ONEOF)
                        set_case(d, t, m, sl);
                    *(char **)MEMBER(m, sl->off) = s;
                    continue;
                }
                /* a submessage: the pages passed go first (general_field) */
                if ((uintptr_t)at >= d->drop_at)
                    drop_pages(d, at);
                if (!sl->sub && !(sl->sub = table(d, sl->fd->descriptor)))
                    return OAC_ENOMEM;
                /* an element equal to a recent one is that one (not past
                 * the depth bound, which the walk reports) */
                struct mshared *ms = NULL;
                if ((sl->sub->share || (n == 0 && sl->sub->share_empty)) &&
                    op == OP_MSG_REP && n <= MSG_SHARE_MAX && lv < d->lv_last) {
                    ms = msg_slot(d, q, n);
                    if (ms->t == sl->sub && ms->n == n && memcmp(ms->bytes, q, n) == 0) {
                        if (!push_elt(d, m, sl, sl->rslot, (uintptr_t)ms->m, 1))
                            return OAC_ENOMEM;
                        continue;
                    }
                }
                lv->used = d->used;
                lv->sl = sl;
                lv++;
                ms_next = ms;
                t = sl->sub;
                end = p;
                p = q;
                goto enter;
            }
            if (op == OP_FIX) {
                if ((size_t)(end - q) < sl->es)
                    goto general;
                if (sl->es == 8)
                    memcpy(MEMBER(m, sl->off), q, 8);
                else
                    memcpy(MEMBER(m, sl->off), q, 4);
                p = q + sl->es;
                if (sl->qoff)
                    *(protobuf_c_boolean *)MEMBER(m, sl->qoff) = 1;
                continue;
            }
            /* OP_VAR, OP_VAR_REP, OP_VAR_ONEOF: a 32-bit member takes
             * the low half (put_value, settle) */
            uint64_t v;
            int k = get_varint(q, end, &v);
            if (k <= 0)
                goto general;
            p = q + k;
            if (op == OP_VAR_REP) {
                if (!push_elt(d, m, sl, sl->rslot, v, 1))
                    return OAC_ENOMEM;
                continue;
            }
            if (op == OP_VAR_ONEOF)
                set_case(d, t, m, sl);
            else if (sl->qoff)
                *(protobuf_c_boolean *)MEMBER(m, sl->qoff) = 1;
            put_value(sl, v, MEMBER(m, sl->off));
            continue;
        general:
            if (!(p = general_field(d, t, m, p, end, lv->mask, (int)(lv - d->lv), &rc)))
                return rc;
        }
        /* m is whole (p == end): settle it, then store it in the message
         * it is a field of, which goes on from p */
        if (d->stk_n != lv->base && (rc = settle(d, lv->base, d->used, t, m)))
            return rc;
        if (lv == top) {
            d->used = outer;
            *out = m;
            return OAC_OK;
        }
        ProtobufCMessage *sub = m;
        if (lv->ms && lv->made == d->made) {
            /* a leaf: nothing in it is a message another could hold */
            struct mshared *ms = lv->ms;
            ms->t = t;
            ms->m = sub;
            ms->n = (size_t)(end - lv->start);
            memcpy(ms->bytes, lv->start, ms->n);
        }
        lv--;
        fslot *sl = lv->sl;
        t = lv->t;
        m = lv->m;
        end = lv->end;
        d->used = lv->used;
        if (sl->rslot != NO_RSLOT) {    /* OP_MSG_REP */
            if (!push_elt(d, m, sl, sl->rslot, (uintptr_t)sub, 1))
                return OAC_ENOMEM;
        } else if ((rc = put_message(d, t, m, sl, sub))) {
            return rc;
        }
    }
}

int oac_decode(oac_ctx *ctx, oac_arena *arena,
               const ProtobufCMessageDescriptor *desc, const uint8_t *buf,
               size_t len, unsigned flags, ProtobufCMessage **out, bool *external,
               char *err, size_t err_size)
{
    oac_decode_facts facts;
    int rc = oac_decode_ex(ctx, arena, desc, buf, len, flags, out, &facts, err,
                           err_size);
    if (external)
        *external = rc == OAC_OK && facts.external;
    return rc;
}

int oac_decode_ex(oac_ctx *ctx, oac_arena *arena,
                  const ProtobufCMessageDescriptor *desc, const uint8_t *buf,
                  size_t len, unsigned flags, ProtobufCMessage **out,
                  oac_decode_facts *facts, char *err, size_t err_size)
{
    struct level lv[OAC_MAX_DEPTH + 1];
    dec d = { .ctx = ctx, .arena = arena, .buf = buf, .len = len,
              .lv = lv, .lv_last = &lv[OAC_MAX_DEPTH],
              .drop_at = UINTPTR_MAX };
    long page = sysconf(_SC_PAGESIZE);
    if ((flags & OAC_DECODE_DROP_PAGES) && page > 0 && !(page & (page - 1))) {
        d.page_mask = (uintptr_t)page - 1;
        /* from the first whole page of buf on */
        d.dropped = buf + (((uintptr_t)page - ((uintptr_t)buf & d.page_mask)) & d.page_mask);
        d.drop_at = (uintptr_t)d.dropped + OAC_DECODE_DROP_STEP;
    }
    *out = NULL;
    facts->external = false;
    facts->nul = NULL;
    ProtobufCMessage *m = NULL;
    d.shared = oac_calloc(ctx, SHARE_SLOTS, sizeof *d.shared);
    d.mshared = oac_calloc(ctx, MSG_SHARE_SLOTS, sizeof *d.mshared);
    dtab *t = d.shared && d.mshared ? table(&d, desc) : NULL;
    int rc = t ? decode_msg(&d, t, buf, buf + len, 1, &m) : OAC_ENOMEM;
    free_tables(&d);
    oac_dealloc(ctx, d.shared);
    oac_dealloc(ctx, d.mshared);
    /* A large graph's stack is a mapping of its own in glibc's malloc,
     * and freeing such a block raises malloc's mmap threshold to its
     * size: the checker's later callocs up to that size would come from
     * the heap and need a memset (4.7M instructions at 2048 layers)
     * instead of arriving as fresh zero pages.  A shrunk block does not
     * raise it. */
    if (d.stk_cap > 1024) {
        void *small = oac_realloc(ctx, d.stk, 1024 * sizeof *d.stk);
        if (small)
            d.stk = small;
    }
    oac_dealloc(ctx, d.stk);
    oac_dealloc(ctx, d.stk_tag);
    oac_dealloc(ctx, d.mset_key);
    oac_dealloc(ctx, d.mset_cap);
    if (rc == OAC_EPARSE) {
        snprintf(err, err_size, "%s", d.err);
        return rc;
    }
    if (rc)
        return rc;
    if (d.invalid) {
        snprintf(err, err_size, "not a valid %s", desc->name);
        return OAC_EPARSE;
    }
    if (d.lost) {
        snprintf(err, err_size, "a singular message field occurs more than once and "
                 "its payloads cannot be kept");
        return OAC_EPARSE;
    }
    *out = m;
    facts->external = d.external;
    facts->nul = d.nul;
    return OAC_OK;
}

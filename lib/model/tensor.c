/* model/tensor.c: lazy access to tensor payloads, wherever the loader left them.
 *
 * Owns oac_tensor_payload, oac_qtensor_payload,
 * oac_tensor_payload_bytes, oac_tensor_payload_fits, oac_tensor_int64s
 * and oac_tensor_read (oac_int.h).  Contract 1: payloads
 * are not copied at load time.  A payload field is either kept in the
 * parsed struct (small ones, and models made by the builder) or left by
 * model/load.c as protobuf-c unknown fields carrying the field's original tag
 * and pointing into the file mapping.  Such an unknown field holds a
 * "span": the bytes that followed the first tag of one or more adjacent
 * occurrences of the field, i.e. the first value in the field's wire type,
 * then (tag, value) pairs of the same field number.  Everything here
 * decodes both forms.
 *
 * Invariants:
 *  1. Every read is bounded by the span or array it came from; a malformed
 *     span is OAC_EPARSE with a message, never a read past its end.
 *  2. Element counts are checked against the tensor's dims (numel) before
 *     anything is written to the caller's buffer.
 *  3. Protobuf semantics: repeated fields concatenate their occurrences;
 *     raw_data, a singular bytes field, takes its last occurrence.
 *  4. Host byte order is little-endian (checked at compile time), so kept
 *     float/double arrays are their own wire bytes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "oac_int.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "payload decoding assumes a little-endian host");

enum { F_FLOAT = 4, F_INT32 = 5, F_INT64 = 7, F_RAW = 9, F_DOUBLE = 10,
       F_UINT64 = 11 };
enum enc { ENC_VARINT, ENC_FIXED32, ENC_FIXED64 };

/* A varint of at most 10 bytes within [p, end); 0 on malformed input,
 * else the bytes used. */
static size_t varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (size_t i = 0; i < 10 && p + i < end; i++) {
        r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = r;
            return i + 1;
        }
    }
    return 0;
}

static const ProtobufCMessageUnknownField *
unknown_at(const ProtobufCMessage *m, unsigned field, size_t *from)
{
    for (size_t i = *from; i < m->n_unknown_fields; i++)
        if (m->unknown_fields[i].tag == field) {
            *from = i + 1;
            return &m->unknown_fields[i];
        }
    return NULL;
}

/* One occurrence of a field inside a span: its wire type and the value's
 * bytes (for wire type 2 the content after the length). */
typedef struct occ {
    int wt;
    const uint8_t *p;
    size_t n;
} occ;

typedef struct span_it {
    const uint8_t *p, *end;
    unsigned field;
    int first_wt;
    bool started;
} span_it;

static void span_begin(span_it *it, const ProtobufCMessageUnknownField *u)
{
    it->p = u->data;
    it->end = u->data + u->len;
    it->field = u->tag;
    it->first_wt = (int)u->wire_type;
    it->started = false;
}

/* Next occurrence: 1 found, 0 at the end, OAC_EPARSE on malformed bytes. */
static int span_next(oac_ctx *ctx, span_it *it, occ *o)
{
    if (it->p >= it->end && it->started)
        return 0;
    int wt;
    if (!it->started) {
        wt = it->first_wt;
        it->started = true;
    } else {
        uint64_t tag;
        size_t k = varint(it->p, it->end, &tag);
        if (!k || (tag >> 3) != it->field)
            return oac_err(ctx, OAC_EPARSE, "malformed payload of field %u", it->field);
        it->p += k;
        wt = (int)(tag & 7);
    }
    uint64_t v;
    size_t k;
    switch (wt) {
    case 0:
        k = varint(it->p, it->end, &v);
        if (!k)
            return oac_err(ctx, OAC_EPARSE, "truncated varint in payload of field %u", it->field);
        o->p = it->p;
        o->n = k;
        break;
    case 1:
    case 5:
        k = wt == 1 ? 8 : 4;
        if ((size_t)(it->end - it->p) < k)
            return oac_err(ctx, OAC_EPARSE, "truncated payload of field %u", it->field);
        o->p = it->p;
        o->n = k;
        break;
    case 2:
        k = varint(it->p, it->end, &v);
        if (!k || v > (uint64_t)(it->end - it->p - k))
            return oac_err(ctx, OAC_EPARSE, "payload of field %u overruns its span", it->field);
        o->p = it->p + k;
        o->n = (size_t)v;
        k += (size_t)v;
        break;
    default:
        return oac_err(ctx, OAC_EPARSE, "bad wire type %d in payload of field %u", wt, it->field);
    }
    o->wt = wt;
    it->p += k;
    return 1;
}

/* ---- payload lookup ------------------------------------------------- */

static bool has_unknown(const ProtobufCMessage *m, unsigned field)
{
    size_t from = 0;
    return unknown_at(m, field, &from) != NULL;
}

/* The last occurrence of a length-delimited field left in the mapping,
 * when it is one single wire-type-2 value. */
static bool mapped_bytes(const ProtobufCMessage *m, unsigned field,
                         const uint8_t **p, size_t *n, bool *contiguous)
{
    const ProtobufCMessageUnknownField *u, *last = NULL;
    size_t from = 0;
    while ((u = unknown_at(m, field, &from)))
        last = u;
    if (!last)
        return false;
    *contiguous = false;
    if (last->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
        return true;
    /* One value only: the length covers the rest of the span exactly.
     * Otherwise the last of several adjacent occurrences wins; walk. */
    span_it it;
    span_begin(&it, last);
    occ o, lasto = { 0, NULL, 0 };
    int r, seen = 0;
    oac_ctx dummy = { 0 };
    while ((r = span_next(&dummy, &it, &o)) == 1) {
        lasto = o;
        seen = 1;
    }
    if (r < 0 || !seen || lasto.wt != 2)
        return true;
    *p = lasto.p;
    *n = lasto.n;
    *contiguous = true;
    return true;
}

bool oac_tensor_payload(const Onnx__TensorProto *t, oac_payload *out)
{
    memset(out, 0, sizeof *out);
    if (!t)
        return false;
    const ProtobufCMessage *m = &t->base;
    bool contiguous;
    const uint8_t *p;
    size_t n;
    /* raw_data first: when set it is the payload (ONNX rule). */
    if (mapped_bytes(m, F_RAW, &p, &n, &contiguous)) {
        out->field = F_RAW;
        if (contiguous) {
            out->bytes = p;
            out->len = n;
        }
        return true;
    }
    if (t->has_raw_data) {
        out->field = F_RAW;
        out->bytes = t->raw_data.data;
        out->len = t->raw_data.len;
        return true;
    }
    static const unsigned typed[] = { F_FLOAT, F_INT32, F_INT64, F_DOUBLE, F_UINT64 };
    for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++) {
        unsigned f = typed[i];
        if (has_unknown(m, f)) {
            out->field = (int)f;
            size_t from = 0;
            const ProtobufCMessageUnknownField *u = unknown_at(m, f, &from);
            /* Exactly one packed occurrence: its content is the payload. */
            if (!unknown_at(m, f, &from) &&
                u->wire_type == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) {
                uint64_t v;
                size_t k = varint(u->data, u->data + u->len, &v);
                if (k && v == u->len - k) {
                    out->bytes = u->data + k;
                    out->len = (size_t)v;
                }
            }
            return true;
        }
    }
    if (t->n_float_data) {
        *out = (oac_payload){ F_FLOAT, (const uint8_t *)t->float_data,
                              t->n_float_data * sizeof(float) };
        return true;
    }
    if (t->n_double_data) {
        *out = (oac_payload){ F_DOUBLE, (const uint8_t *)t->double_data,
                              t->n_double_data * sizeof(double) };
        return true;
    }
    /* Varint fields kept in the struct have no wire bytes to point at. */
    if (t->n_int32_data) { out->field = F_INT32; return true; }
    if (t->n_int64_data) { out->field = F_INT64; return true; }
    if (t->n_uint64_data) { out->field = F_UINT64; return true; }
    return false;
}

bool oac_qtensor_payload(const Onnx__QuantizedTensorProto *q, oac_payload *out)
{
    memset(out, 0, sizeof *out);
    if (!q)
        return false;
    bool contiguous;
    const uint8_t *p;
    size_t n;
    if (mapped_bytes(&q->base, 2, &p, &n, &contiguous)) {
        out->field = 2;
        if (contiguous) {
            out->bytes = p;
            out->len = n;
        }
        return true;
    }
    if (q->has_raw_data) {
        *out = (oac_payload){ 2, q->raw_data.data, q->raw_data.len };
        return true;
    }
    return false;
}

/* ---- element streams ------------------------------------------------ */

/* A sink receiving each element's bits in order. */
typedef struct sink {
    uint8_t *dst;          /* NULL: count only */
    size_t width;          /* bytes written per element (little-endian) */
    uint64_t count;
    uint64_t max;          /* elements the destination holds */
    int64_t *ints;         /* oac_tensor_int64s: decoded values */
    int32_t elem_type;
    bool overflow;         /* more elements than max */
} sink;

static void sink_put(sink *s, uint64_t bits)
{
    if (s->count >= s->max) {
        s->overflow = true;
        s->count++;
        return;
    }
    if (s->dst)
        memcpy(s->dst + s->count * s->width, &bits, s->width);
    if (s->ints) {
        int64_t v;
        switch (s->elem_type) {
        case 3:  v = (int8_t)bits; break;            /* INT8 */
        case 5:  v = (int16_t)bits; break;           /* INT16 */
        case 6:  v = (int32_t)bits; break;           /* INT32 */
        case 2:  v = (uint8_t)bits; break;           /* UINT8 */
        case 4:  v = (uint16_t)bits; break;          /* UINT16 */
        case 9:  v = (uint8_t)bits != 0; break;      /* BOOL */
        case 12: v = (uint32_t)bits; break;          /* UINT32 */
        default: v = (int64_t)bits; break;           /* INT64, UINT64 */
        }
        s->ints[s->count] = v;
    }
    s->count++;
}

static int put_packed(oac_ctx *ctx, sink *s, enum enc e, const uint8_t *p,
                      size_t n, unsigned field)
{
    const uint8_t *end = p + n;
    if (e == ENC_VARINT) {
        while (p < end) {
            uint64_t v;
            size_t k = varint(p, end, &v);
            if (!k)
                return oac_err(ctx, OAC_EPARSE, "malformed packed varints in field %u", field);
            sink_put(s, v);
            p += k;
        }
        return OAC_OK;
    }
    size_t w = e == ENC_FIXED32 ? 4 : 8;
    if (n % w)
        return oac_err(ctx, OAC_EPARSE, "packed field %u holds %zu bytes, not a multiple of %zu",
                       field, n, w);
    /* Counting only: fixed-size values are counted by their length,
     * without reading them. */
    if (!s->dst && !s->ints) {
        s->count += n / w;
        return OAC_OK;
    }
    /* float_data/double_data into dense bytes: the wire form is the
     * dense form, copy it at once. */
    if (s->dst && !s->ints && s->width == w && !s->overflow &&
        n / w <= s->max - s->count) {
        memcpy(s->dst + s->count * w, p, n);
        s->count += n / w;
        return OAC_OK;
    }
    for (; p < end; p += w) {
        uint64_t v = 0;
        memcpy(&v, p, w);
        sink_put(s, v);
    }
    return OAC_OK;
}

static int put_unknown_field(oac_ctx *ctx, sink *s, enum enc e,
                             const ProtobufCMessageUnknownField *u)
{
    span_it it;
    span_begin(&it, u);
    occ o;
    int r;
    int want = e == ENC_VARINT ? 0 : e == ENC_FIXED32 ? 5 : 1;
    while ((r = span_next(ctx, &it, &o)) == 1) {
        if (o.wt == 2) {
            int rc = put_packed(ctx, s, e, o.p, o.n, u->tag);
            if (rc)
                return rc;
        } else if (o.wt == want) {
            uint64_t v = 0;
            if (e == ENC_VARINT)
                varint(o.p, o.p + o.n, &v);
            else
                memcpy(&v, o.p, o.n);
            sink_put(s, v);
        } else {
            return oac_err(ctx, OAC_EPARSE, "wrong wire type %d for field %u", o.wt, u->tag);
        }
    }
    return r;
}

/* Feed every element of typed field `field` (kept, then mapped) to s. */
static int put_field(oac_ctx *ctx, sink *s, const Onnx__TensorProto *t,
                     unsigned field)
{
    enum enc e;
    switch (field) {
    case F_FLOAT:
        e = ENC_FIXED32;
        for (size_t i = 0; i < t->n_float_data; i++) {
            uint32_t b;
            memcpy(&b, &t->float_data[i], 4);
            sink_put(s, b);
        }
        break;
    case F_DOUBLE:
        e = ENC_FIXED64;
        for (size_t i = 0; i < t->n_double_data; i++) {
            uint64_t b;
            memcpy(&b, &t->double_data[i], 8);
            sink_put(s, b);
        }
        break;
    case F_INT32:
        e = ENC_VARINT;
        for (size_t i = 0; i < t->n_int32_data; i++)
            sink_put(s, (uint64_t)(int64_t)t->int32_data[i]);
        break;
    case F_INT64:
        e = ENC_VARINT;
        for (size_t i = 0; i < t->n_int64_data; i++)
            sink_put(s, (uint64_t)t->int64_data[i]);
        break;
    case F_UINT64:
        e = ENC_VARINT;
        for (size_t i = 0; i < t->n_uint64_data; i++)
            sink_put(s, t->uint64_data[i]);
        break;
    default:
        return oac_err(ctx, OAC_EINTERNAL, "no typed field %u", field);
    }
    size_t from = 0;
    const ProtobufCMessageUnknownField *u;
    while ((u = unknown_at(&t->base, field, &from))) {
        int rc = put_unknown_field(ctx, s, e, u);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

/* Which typed field holds elements of this type, and how many bytes of
 * the dense form each stored value stands for (ONNX TensorProto rules:
 * sub-byte types store one packed byte per int32_data entry). */
static bool typed_field(int32_t et, unsigned *field, size_t *width)
{
    unsigned bits = oac_elem_bits(et);
    switch (et) {
    case 1: case 14: *field = F_FLOAT; *width = 4; return true;   /* FLOAT, COMPLEX64 */
    case 11: case 15: *field = F_DOUBLE; *width = 8; return true; /* DOUBLE, COMPLEX128 */
    case 7: *field = F_INT64; *width = 8; return true;
    case 12: *field = F_UINT64; *width = 4; return true;          /* UINT32 */
    case 13: *field = F_UINT64; *width = 8; return true;          /* UINT64 */
    case 8: case 0: return false;                                 /* STRING, UNDEFINED */
    default:
        if (!bits || bits > 32)
            return false;
        *field = F_INT32;
        *width = bits >= 8 ? bits / 8 : 1;
        return true;
    }
}

static bool raw_present(const Onnx__TensorProto *t);
static bool is_external(const Onnx__TensorProto *t);

int oac_tensor_payload_bytes(oac_ctx *ctx, const Onnx__TensorProto *t,
                             uint64_t *out)
{
    *out = 0;
    const char *name = t->name ? t->name : "";
    if (raw_present(t)) {
        oac_payload p;
        oac_tensor_payload(t, &p);
        if (!p.bytes && p.len == 0 && !t->has_raw_data)
            return oac_err(ctx, OAC_EPARSE, "tensor '%s': malformed raw_data", name);
        *out = p.len;
        return OAC_OK;
    }
    unsigned field;
    size_t width;
    if (!typed_field(t->data_type, &field, &width))
        return oac_err(ctx, OAC_EUNSUPPORTED, "tensor '%s': element type %d has no "
                       "fixed-size typed field", name, (int)t->data_type);
    sink s = { .width = width, .max = UINT64_MAX };
    int rc = put_field(ctx, &s, t, field);
    if (rc)
        return rc;
    if (oac_mul_overflow_u64(s.count, width, out))
        return oac_err(ctx, OAC_EPARSE, "tensor '%s': too many stored values", name);
    return OAC_OK;
}

/* "[2,3]" for t's dims into buf. */
static const char *dims_text(const Onnx__TensorProto *t, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "[");
    for (size_t i = 0; i < t->n_dims && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%" PRId64, i ? "," : "", t->dims[i]);
    if (k < len)
        snprintf(buf + k, len - k, "]");
    return buf;
}

/* Bytes of a varint of value v. */
static size_t varint_len(uint64_t v)
{
    size_t k = 1;
    for (; v >= 0x80; v >>= 7)
        k++;
    return k;
}

/* The content length of a length-delimited field left in the mapping as
 * unknown field u, if u holds one occurrence: u->len is then the varint
 * of the length plus the content, and L + varint_len(L) grows with L, so
 * at most one L fits.  Computed, never read: reading the length would
 * fault in a page of the file per payload, which the load dropped (a
 * 2048-layer model: 70 MB resident).  When u holds several occurrences
 * the answer is wrong; callers only take it as a hint (payload_hint). */
static bool single_len(const ProtobufCMessageUnknownField *u, uint64_t *len)
{
    if (u->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
        return false;
    for (size_t k = 1; k <= 10 && k <= u->len; k++)
        if (varint_len(u->len - k) == k) {
            *len = u->len - k;
            return true;
        }
    return false;
}

/* What t's payload holds, in bytes of dense data, as far as it can be
 * told without reading the mapping: raw_data, or float_data and
 * double_data (fixed-size values: their bytes are the dense bytes), each
 * unknown field taken for one occurrence (single_len).  False for
 * varint fields, which only counting tells. */
static bool payload_hint(const Onnx__TensorProto *t, uint64_t *out)
{
    const ProtobufCMessage *m = &t->base;
    unsigned field;
    size_t width;
    uint64_t n, len;
    if (raw_present(t)) {
        field = F_RAW;
        n = t->has_raw_data ? t->raw_data.len : 0;
    } else if (typed_field(t->data_type, &field, &width) &&
               (field == F_FLOAT || field == F_DOUBLE)) {
        n = field == F_FLOAT ? (uint64_t)t->n_float_data * 4
                             : (uint64_t)t->n_double_data * 8;
    } else {
        return false;
    }
    size_t from = 0;
    const ProtobufCMessageUnknownField *u;
    while ((u = unknown_at(m, field, &from))) {
        if (!single_len(u, &len))
            return false;
        /* raw_data: the one left in the mapping is the payload, as in
         * oac_tensor_payload; typed fields add up */
        n = field == F_RAW ? len : n + len;
    }
    *out = n;
    return true;
}

/* How many payload fields t holds (raw_data and each typed field, kept
 * or left in the mapping), and the names of the first two. */
static int payload_fields(const Onnx__TensorProto *t, const char **a, const char **b)
{
    static const struct { unsigned f; const char *name; } fs[] = {
        { F_RAW, "raw_data" }, { F_FLOAT, "float_data" }, { F_INT32, "int32_data" },
        { F_INT64, "int64_data" }, { F_DOUBLE, "double_data" }, { F_UINT64, "uint64_data" },
    };
    const bool kept[] = { t->has_raw_data, t->n_float_data > 0, t->n_int32_data > 0,
                          t->n_int64_data > 0, t->n_double_data > 0, t->n_uint64_data > 0 };
    int n = 0;
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        if (kept[i] || has_unknown(&t->base, fs[i].f)) {
            if (n == 0)
                *a = fs[i].name;
            else if (n == 1)
                *b = fs[i].name;
            n++;
        }
    if (t->n_string_data) {
        if (n == 0)
            *a = "string_data";
        else if (n == 1)
            *b = "string_data";
        n++;
    }
    return n;
}

bool oac_tensor_payload_fits(oac_ctx *ctx, const Onnx__TensorProto *t,
                             char *why, size_t why_len)
{
    if (why_len)
        why[0] = '\0';
    if (is_external(t) || t->segment)
        return true;
    const char *f1 = NULL, *f2 = NULL;
    /* Two payloads: which one a reader takes would be a guess. */
    if (payload_fields(t, &f1, &f2) > 1) {
        snprintf(why, why_len, "holds two payloads (%s and %s): store its elements in "
                 "one of them", f1, f2);
        return false;
    }
    char dims[128];
    uint64_t n;
    if (!oac_tensor_numel(t, &n)) {
        snprintf(why, why_len, "has dims %s, with a negative dimension or too many "
                 "elements to count: give it the dims of its data",
                 dims_text(t, dims, sizeof dims));
        return false;
    }
    if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__STRING) {
        if (!raw_present(t) && t->n_string_data == n)
            return true;
        snprintf(why, why_len, "(STRING%s) holds %zu strings%s for %" PRIu64 " elements: "
                 "store one string_data entry per element", dims_text(t, dims, sizeof dims),
                 t->n_string_data, raw_present(t) ? " and raw_data" : "", n);
        return false;
    }
    const char *type = oac_elem_name(t->data_type);
    uint64_t want, have;
    if (!type || !oac_elem_bytes(t->data_type, n, &want))
        return true;   /* no fixed size: nothing to measure it by */
    /* Most payloads are told right without reading them; the rest (and
     * any hint that disagrees) are measured exactly.  A hint that agrees
     * for a payload split into several occurrences could be wrong; such a
     * payload is still measured when it is read (oac_tensor_read). */
    if (payload_hint(t, &have) && have == want)
        return true;
    /* A malformed payload is an answer, not a failure: the context's
     * message stays as it was. */
    char saved[sizeof ctx->errmsg];
    memcpy(saved, ctx->errmsg, sizeof saved);
    int rc = oac_tensor_payload_bytes(ctx, t, &have);
    if (rc)
        snprintf(why, why_len, "(%s%s): %s; re-export the tensor", type,
                 dims_text(t, dims, sizeof dims), ctx->errmsg);
    memcpy(ctx->errmsg, saved, sizeof saved);
    if (rc)
        return false;
    if (have == want)
        return true;
    snprintf(why, why_len, "(%s%s) holds %" PRIu64 " bytes of data, but its %" PRIu64
             " elements need %" PRIu64 ": store exactly its elements in raw_data (or in "
             "the typed field ONNX uses for %s)", type, dims_text(t, dims, sizeof dims),
             have, n, want, type);
    return false;
}

static bool raw_present(const Onnx__TensorProto *t)
{
    return t->has_raw_data || has_unknown(&t->base, F_RAW);
}

static bool is_external(const Onnx__TensorProto *t)
{
    return t->has_data_location &&
           t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* ---- public decoders ------------------------------------------------ */

int oac_tensor_read(oac_ctx *ctx, const oac_model *model,
                    const Onnx__TensorProto *t, void *dst, size_t dst_len)
{
    uint64_t n, bytes;
    const char *name = t->name ? t->name : "";
    if (!oac_tensor_numel(t, &n))
        return oac_err(ctx, OAC_EPARSE, "tensor '%s': bad dims", name);
    if (!oac_elem_bytes(t->data_type, n, &bytes))
        return oac_err(ctx, OAC_EPARSE, "tensor '%s': no fixed-size element type (%d)",
                       name, (int)t->data_type);
    if (bytes != dst_len)
        return oac_err(ctx, OAC_EINVAL, "tensor '%s': %llu bytes, buffer of %zu",
                       name, (unsigned long long)bytes, dst_len);
    if (is_external(t))
        return oac_external_read(ctx, model, t, dst, dst_len);
    if (raw_present(t)) {
        oac_payload p;
        oac_tensor_payload(t, &p);
        if (!p.bytes && p.len == 0 && !t->has_raw_data && has_unknown(&t->base, F_RAW)) {
            /* Several occurrences or a malformed one: walk for the last. */
            return oac_err(ctx, OAC_EPARSE, "tensor '%s': malformed raw_data", name);
        }
        if (p.len != dst_len)
            return oac_err(ctx, OAC_EPARSE, "tensor '%s': raw_data holds %zu bytes, expected %zu",
                           name, p.len, dst_len);
        if (dst_len)
            memcpy(dst, p.bytes, dst_len);
        return OAC_OK;
    }
    unsigned field;
    size_t width;
    if (!typed_field(t->data_type, &field, &width))
        return oac_err(ctx, OAC_EPARSE, "tensor '%s': cannot decode element type %d",
                       name, (int)t->data_type);
    sink s = { .dst = dst, .width = width, .max = dst_len / width };
    int rc = put_field(ctx, &s, t, field);
    if (rc)
        return rc;
    if (s.overflow || s.count * width != dst_len)
        return oac_err(ctx, OAC_EPARSE, "tensor '%s': %llu stored values, expected %zu",
                       name, (unsigned long long)s.count, dst_len / width);
    return OAC_OK;
}

/* n elements of `width` bytes, little-endian as raw_data holds them,
 * into s (at most s->max of them). */
static void sink_raw(sink *s, const uint8_t *bytes, uint64_t n, size_t width)
{
    for (uint64_t i = 0; i < n && i < s->max; i++) {
        uint64_t v = 0;
        memcpy(&v, bytes + i * width, width);
        sink_put(s, v);
    }
}

int oac_tensor_int64s(oac_ctx *ctx, const Onnx__TensorProto *t,
                      int64_t *out, size_t max, size_t *n_out)
{
    return oac_tensor_int64s_in(ctx, NULL, t, out, max, n_out);
}

int oac_tensor_int64s_in(oac_ctx *ctx, const oac_model *model, const Onnx__TensorProto *t,
                         int64_t *out, size_t max, size_t *n_out)
{
    *n_out = 0;
    uint64_t n;
    const char *name = t->name ? t->name : "";
    int32_t et = t->data_type;
    size_t width;
    switch (et) {
    case 7: case 13: width = 8; break;
    case 6: case 12: width = 4; break;
    case 5: case 4: width = 2; break;
    case 3: case 2: case 9: width = 1; break;
    default:
        return oac_err(ctx, OAC_EPARSE, "tensor '%s': element type %d is not an integer type",
                       name, (int)et);
    }
    if (!oac_tensor_numel(t, &n))
        return oac_err(ctx, OAC_EPARSE, "tensor '%s': bad dims", name);
    sink s = { .ints = out, .max = max, .elem_type = et, .width = width };
    if (is_external(t)) {
        /* Read as oac_tensor_read reads it, when the whole fits out. */
        if (!model || n > max)
            return oac_err(ctx, OAC_EUNSUPPORTED, "tensor '%s': external data is not read "
                           "here", name);
        uint8_t *buf = oac_alloc(ctx, n ? (size_t)n * width : 1);
        if (!buf)
            return OAC_ENOMEM;
        int rc = oac_external_read(ctx, model, t, buf, (size_t)n * width);
        if (rc == OAC_OK) {
            sink_raw(&s, buf, n, width);
            *n_out = (size_t)s.count;
        }
        oac_dealloc(ctx, buf);
        return rc;
    }
    if (raw_present(t)) {
        oac_payload p;
        oac_tensor_payload(t, &p);
        if (!p.bytes && p.len == 0 && !t->has_raw_data)
            return oac_err(ctx, OAC_EPARSE, "tensor '%s': malformed raw_data", name);
        uint64_t want;
        if (oac_mul_overflow_u64(n, width, &want) || p.len != want)
            return oac_err(ctx, OAC_EPARSE, "tensor '%s': raw_data holds %zu bytes, expected %llu",
                           name, p.len, (unsigned long long)n * width);
        sink_raw(&s, p.bytes, n, width);
        *n_out = (size_t)s.count;
        return OAC_OK;
    }
    unsigned field = width == 8 && et == 7 ? F_INT64 : (et == 12 || et == 13) ? F_UINT64 : F_INT32;
    int rc = put_field(ctx, &s, t, field);
    if (rc)
        return rc;
    if (s.count != n)
        return oac_err(ctx, OAC_EPARSE, "tensor '%s': %llu stored values, dims say %llu",
                       name, (unsigned long long)s.count, (unsigned long long)n);
    *n_out = (size_t)(s.count < max ? s.count : max);
    return OAC_OK;
}

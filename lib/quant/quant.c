/* quant/quant.c: quantization declarations and the codec front door (contract
 * section 1: QuantizationProto, LinearUniformProto,
 * FloatingPointUniformProto, packing and page sizes).
 *
 * Owns: turning a QuantizationProto into a validated oac_qdesc (or the
 * page-type-invalid reason it is not one), the page byte size rule, and
 * oac_quantize / oac_dequantize, which check bounds and call the codec of
 * the format (quant/linear.c, quant/fp8.c).  Encoders read FLOAT16 and
 * BFLOAT16 sources directly; decoding to them goes through a small float
 * buffer on the stack.
 *
 * Invariants:
 *  1. Supported formats: linear 8-bit in INT8/UINT8, 4-bit in INT4/UINT4,
 *     2-bit in UINT8, axis -1 (per tensor), a finite positive scale, a
 *     zero point inside the storage range; floating point at any
 *     sign/exponent/mantissa widths up to 16 bits whose values are binary32
 *     values (E4M3FN through quant/fp8.c, the rest through quant/fpany.c),
 *     without split storage.  Decoded types are
 *     FLOAT, FLOAT16 and BFLOAT16.  Anything else is rejected with a
 *     reason, never approximated.
 *  2. Every element range is checked against the page's byte length
 *     before a codec runs, with overflow-checked arithmetic.
 *  3. No allocation: conversion goes through a fixed stack buffer.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "half.h"
#include "quant/quant.h"

enum {
    T_FLOAT = 1, T_UINT8 = 2, T_INT8 = 3, T_FLOAT16 = 10, T_BFLOAT16 = 16,
    T_FLOAT8E4M3FN = 17, T_UINT4 = 21, T_INT4 = 22
};

/* Elements converted per round through the stack buffer. */
#define CHUNK 256

static const char *type_name(int32_t t)
{
    const char *s = oac_elem_name(t);
    return s ? s : "an unknown type";
}

#define WHY(...) (snprintf(why, why_len, __VA_ARGS__), false)

static bool linear_from_proto(oac_qdesc *d, const Onnx__LinearUniformProto *l,
                              char *why, size_t why_len)
{
    int32_t st = l->has_storage_type ? l->storage_type : 0;
    int32_t bits = l->has_bits ? l->bits : 0;

    d->kind = OAC_QK_LINEAR;
    d->storage_type = st;
    switch (st) {
    case T_INT8: d->qmin = -128; d->qmax = 127; if (!bits) bits = 8; break;
    case T_UINT8: d->qmin = 0; d->qmax = 255; if (!bits) bits = 8; break;
    case T_INT4: d->qmin = -8; d->qmax = 7; if (!bits) bits = 4; break;
    case T_UINT4: d->qmin = 0; d->qmax = 15; if (!bits) bits = 4; break;
    default:
        return WHY("storage type %s (%d) is not INT8, UINT8, INT4 or UINT4",
                   type_name(st), (int)st);
    }
    /* 8 <-> INT8/UINT8, 4 <-> INT4/UINT4, 2 <-> UINT8 (four per byte). */
    bool ok = (bits == 8 && (st == T_INT8 || st == T_UINT8)) ||
              (bits == 4 && (st == T_INT4 || st == T_UINT4)) ||
              (bits == 2 && st == T_UINT8);
    if (!ok)
        return WHY("bits %d do not match storage type %s", (int)bits,
                   type_name(st));
    d->bits = (unsigned)bits;
    if (bits == 2) {
        d->qmin = 0;
        d->qmax = 3;
    }

    switch (l->scale_case) {
    case ONNX__LINEAR_UNIFORM_PROTO__SCALE_SCALE_FLOAT:
        if (!isfinite(l->scale_float) || !(l->scale_float > 0.0f))
            return WHY("scale %g is not a finite positive number",
                       (double)l->scale_float);
        d->scale = l->scale_float;
        break;
    case ONNX__LINEAR_UNIFORM_PROTO__SCALE_SCALE_INT:
        if (l->scale_int <= 0)
            return WHY("scale %d is not positive", (int)l->scale_int);
        d->scale = (float)l->scale_int;
        break;
    default:
        return WHY("no scale (scale_float or scale_int) is set");
    }

    int64_t zp;
    if (l->has_symmetric && l->symmetric) {
        /* The middle of the code range represents 0.0. */
        int64_t mid = d->qmin < 0 ? 0 : (int64_t)1 << (bits - 1);
        if (l->has_zero_point && l->zero_point != mid)
            return WHY("zero point %lld of a symmetric %s declaration is "
                       "not %d", (long long)l->zero_point, type_name(st),
                       (int)mid);
        zp = mid;
    } else {
        zp = l->has_zero_point ? l->zero_point : 0;
        if (zp < d->qmin || zp > d->qmax)
            return WHY("zero point %lld is outside the %d-bit %s range %d..%d",
                       (long long)zp, (int)bits, type_name(st),
                       (int)d->qmin, (int)d->qmax);
    }
    d->zero_point = (int32_t)zp;

    if (l->has_axis && l->axis != -1)
        return WHY("axis %d is not -1 (only per-tensor quantization is "
                   "supported)", (int)l->axis);
    return true;
}

/* Contract 11: any sign/exponent/mantissa widths up to 16 bits in all.
 * has_nan absent means true (E4M3FN's convention), has_inf absent false;
 * the bias absent is the IEEE one, 2^(exponent_bits - 1) - 1. */
static bool fp_from_proto(oac_qdesc *d, const Onnx__FloatingPointUniformProto *f,
                          char *why, size_t why_len)
{
    int s = f->has_sign_bits ? f->sign_bits : 0;
    int e = f->has_exponent_bits ? f->exponent_bits : 0;
    int m = f->has_mantissa_bits ? f->mantissa_bits : 0;
    bool inf = f->has_has_inf && f->has_inf;
    bool nan = !f->has_has_nan || f->has_nan;

    d->qmin = 0;
    d->zero_point = 0;
    d->scale = 1.0f;
    if (s < 0 || s > 1 || e < 1 || m < 0 || (int64_t)s + e + m > 16)
        return WHY("sign/exponent/mantissa bits %d/%d/%d are not a supported "
                   "format (sign 0 or 1, at least 1 exponent bit, at most 16 "
                   "bits in all)", s, e, m);
    int64_t bias = f->has_exponent_bias ? f->exponent_bias
                                        : ((int64_t)1 << (e - 1)) - 1;
    if (inf && !nan)
        return WHY("has_inf without has_nan is not supported (an IEEE format "
                   "has both)");
    if (inf && m == 0)
        return WHY("has_inf and has_nan need at least 1 mantissa bit");
    if (nan && !inf && e + m < 2)
        return WHY("has_nan needs at least 2 exponent and mantissa bits");
    /* Every finite value a binary32 value (decoding exact): the largest
     * exponent at most 127, the smallest subnormal at least 2^-149. */
    int64_t top = ((int64_t)1 << e) - 1 - (inf ? 1 : 0);
    if (top - bias > 127 || 1 - bias - m < -149)
        return WHY("exponent bias %lld puts %d/%d/%d values outside FLOAT's "
                   "range", (long long)bias, s, e, m);
    if (f->has_split_storage && f->split_storage)
        return WHY("split_storage is not supported in this version");

    d->bits = (unsigned)(s + e + m);
    d->qmax = (int32_t)((1u << d->bits) - 1u);
    if (s == 1 && e == 4 && m == 3 && bias == 7 && !inf && nan) {
        d->kind = OAC_QK_FP8;
        d->storage_type = T_FLOAT8E4M3FN;
    } else {
        d->kind = OAC_QK_FLOAT;
        d->storage_type = 0;
        d->fp_sign = (unsigned)s;
        d->fp_exp = (unsigned)e;
        d->fp_man = (unsigned)m;
        d->fp_bias = (int)bias;
        d->fp_inf = inf;
        d->fp_nan = nan;
    }

    int32_t pc = f->has_packed_count ? f->packed_count : 0;
    int32_t pb = f->has_packed_bytes ? f->packed_bytes : 0;
    if (pc || pb) {
        if (pc <= 0 || pb <= 0)
            return WHY("packed_count %d and packed_bytes %d must both be "
                       "positive when either is set", (int)pc, (int)pb);
        if ((int64_t)pb * 8 < (int64_t)pc * d->bits)
            return WHY("packed_bytes %d cannot hold packed_count %d %u-bit "
                       "codes", (int)pb, (int)pc, d->bits);
    }
    d->packed_count = (uint32_t)pc;
    d->packed_bytes = (uint32_t)pb;
    return true;
}

bool oac_qdesc_from_proto(oac_qdesc *out, const Onnx__QuantizationProto *q,
                          char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    if (!q)
        return WHY("no declaration");
    out->name = q->name && *q->name ? q->name : NULL;
    out->data_type = q->has_data_type ? q->data_type : 0;
    if (out->data_type != T_FLOAT && out->data_type != T_FLOAT16 &&
        out->data_type != T_BFLOAT16)
        return WHY("data_type %s (%d) is not FLOAT, FLOAT16 or BFLOAT16",
                   type_name(out->data_type), (int)out->data_type);
    switch (q->kind_case) {
    case ONNX__QUANTIZATION_PROTO__KIND_LINEAR:
        return q->linear ? linear_from_proto(out, q->linear, why, why_len)
                         : WHY("linear is empty");
    case ONNX__QUANTIZATION_PROTO__KIND_FLOATING_POINT:
        return q->floating_point
                   ? fp_from_proto(out, q->floating_point, why, why_len)
                   : WHY("floating_point is empty");
    default:
        return WHY("declares neither linear nor floating_point");
    }
}

const char *oac_qdesc_label(const Onnx__QuantizationProto *q, long index,
                            char *buf, size_t len)
{
    if (q && q->name && *q->name)
        return q->name;
    snprintf(buf, len, "#%ld", index);
    return buf;
}

bool oac_qdesc_page_bytes(const oac_qdesc *d, uint64_t n, uint64_t *out)
{
    if (d->kind != OAC_QK_LINEAR && d->packed_count) {
        uint64_t groups = n / d->packed_count + (n % d->packed_count != 0);
        return !oac_mul_overflow_u64(groups, d->packed_bytes, out);
    }
    uint64_t total;
    if (oac_mul_overflow_u64(n, d->bits, &total))
        return false;
    *out = total / 8 + (total % 8 != 0);
    return true;
}

bool oac_qpath_available(oac_qpath p)
{
    return p != OAC_QPATH_AVX2_F16C || oac_cpu_avx2_f16c();
}

/* Check that elements [at, at + n) lie inside a page of page_len bytes. */
static int check_range(oac_ctx *ctx, const oac_qdesc *d, size_t page_len,
                       uint64_t at, size_t n)
{
    uint64_t end, need;
    if (oac_add_overflow_u64(at, n, &end) || !oac_qdesc_page_bytes(d, end, &need)
        || need > page_len)
        return oac_err(ctx, OAC_EINVAL,
                       "%zu elements from element %llu lie outside a page "
                       "of %zu bytes", n, (unsigned long long)at, page_len);
    return OAC_OK;
}

/* IEEE half <-> FLOAT16: the codes are the elements; a NaN becomes the
 * quiet NaN of its sign, as quant/fpany.c encodes and decodes it, so both
 * paths compute the same function.  page + at may be unaligned. */
static void half_copy(void *dst, const void *src, size_t n)
{
    uint8_t *o = dst;
    const uint8_t *i = src;
    for (size_t k = 0; k < n; k++) {
        uint16_t h = (uint16_t)(i[2 * k] | i[2 * k + 1] << 8);
        if ((h & 0x7fffu) > 0x7c00u)
            h = (uint16_t)((h & 0x8000u) | 0x7e00u);
        o[2 * k] = (uint8_t)h;
        o[2 * k + 1] = (uint8_t)(h >> 8);
    }
}

static bool float_type(int32_t t)
{
    return t == T_FLOAT || t == T_FLOAT16 || t == T_BFLOAT16;
}

static size_t src_size(int32_t t)
{
    return t == T_FLOAT ? 4 : 2;
}

/* FP8 codes of elements [at, at + n), honouring grouping: element e lives
 * at byte (e / count) * bytes + e % count. */
static void fp8_put(const oac_qdesc *d, uint8_t *page, uint64_t at,
                    int32_t src_type, const void *src, size_t n)
{
    if (!d->packed_count || d->packed_count == d->packed_bytes) {
        oac_fp8_encode(page + at, src_type, src, n);
        return;
    }
    const uint8_t *s = src;
    while (n) {
        uint64_t g = at / d->packed_count, in = at % d->packed_count;
        size_t run = d->packed_count - in < n ? (size_t)(d->packed_count - in) : n;
        oac_fp8_encode(page + g * d->packed_bytes + in, src_type, s, run);
        at += run;
        s += run * src_size(src_type);
        n -= run;
    }
}

static void fp8_get(const oac_qdesc *d, const uint8_t *page, uint64_t at,
                    float *dst, size_t n)
{
    if (!d->packed_count || d->packed_count == d->packed_bytes) {
        oac_fp8_decode_f32(dst, page + at, n);
        return;
    }
    while (n) {
        uint64_t g = at / d->packed_count, in = at % d->packed_count;
        size_t run = d->packed_count - in < n ? (size_t)(d->packed_count - in) : n;
        oac_fp8_decode_f32(dst, page + g * d->packed_bytes + in, run);
        at += run;
        dst += run;
        n -= run;
    }
}

static void decode_f32(const oac_qdesc *d, const uint8_t *page, uint64_t at,
                       float *dst, size_t n)
{
    if (d->kind == OAC_QK_FLOAT)
        oac_qfloat_decode_f32(d, page, at, dst, n);
    else if (d->kind == OAC_QK_FP8)
        fp8_get(d, page, at, dst, n);
    else
        oac_qlinear_decode_f32(d, page, at, dst, n);
}

int oac_quantize(oac_ctx *ctx, const oac_qdesc *d, uint8_t *page,
                 size_t page_len, uint64_t at, int32_t src_type,
                 const void *src, size_t n)
{
    if (!float_type(src_type))
        return oac_err(ctx, OAC_EINVAL, "cannot quantize from %s",
                       type_name(src_type));
    int rc = check_range(ctx, d, page_len, at, n);
    if (rc)
        return rc;
    /* Straight from the source: the codecs widen FLOAT16/BFLOAT16 inline,
     * no temporary. */
    if (d->kind == OAC_QK_FLOAT && src_type == T_FLOAT16 && oac_qfloat_is_half(d))
        half_copy(page + 2 * at, src, n);
    else if (d->kind == OAC_QK_FLOAT)
        oac_qfloat_encode(d, page, at, src_type, src, n);
    else if (d->kind == OAC_QK_FP8)
        fp8_put(d, page, at, src_type, src, n);
    else
        oac_qlinear_encode(d, page, at, src_type, src, n);
    return OAC_OK;
}

int oac_dequantize(oac_ctx *ctx, const oac_qdesc *d, const uint8_t *page,
                   size_t page_len, uint64_t at, int32_t dst_type,
                   void *dst, size_t n)
{
    if (!float_type(dst_type))
        return oac_err(ctx, OAC_EINVAL, "cannot dequantize to %s",
                       type_name(dst_type));
    int rc = check_range(ctx, d, page_len, at, n);
    if (rc)
        return rc;
    if (dst_type == T_FLOAT) {
        decode_f32(d, page, at, dst, n);
        return OAC_OK;
    }
    if (dst_type == T_FLOAT16 && oac_qfloat_is_half(d)) {
        half_copy(dst, page + 2 * at, n);
        return OAC_OK;
    }
    uint16_t *h = dst;
    float tmp[CHUNK];
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t k = n - i < CHUNK ? n - i : CHUNK;
        decode_f32(d, page, at + i, tmp, k);
        if (dst_type == T_FLOAT16)
            oac_f32_to_f16_n(h + i, tmp, k);
        else
            oac_f32_to_bf16_n(h + i, tmp, k);
    }
    return OAC_OK;
}

int oac_quant_fill_zero(oac_ctx *ctx, const oac_qdesc *d, uint8_t *page,
                        size_t page_len, uint64_t at, size_t n)
{
    int rc = check_range(ctx, d, page_len, at, n);
    if (rc)
        return rc;
    if (d->kind == OAC_QK_LINEAR) {
        oac_qlinear_fill(d, page, at, n, d->zero_point);
        return OAC_OK;
    }
    if (d->kind == OAC_QK_FLOAT) {   /* +0.0 is code 0 in every format */
        float zeros[CHUNK] = { 0 };
        for (size_t i = 0; i < n; i += CHUNK)
            oac_qfloat_encode(d, page, at + i, T_FLOAT, zeros,
                              n - i < CHUNK ? n - i : CHUNK);
        return OAC_OK;
    }
    /* FP8 +0.0 is code 0x00. */
    float zeros[CHUNK] = { 0 };
    for (size_t i = 0; i < n; i += CHUNK)
        fp8_put(d, page, at + i, T_FLOAT, zeros, n - i < CHUNK ? n - i : CHUNK);
    return OAC_OK;
}

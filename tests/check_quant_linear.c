/* check_quant_linear.c: the linear codec (lib/quant/linear.c) and the
 * declaration rules and front door it shares with FP8 (lib/quant/quant.c),
 * contract section 1.  Expected bytes are computed by hand in comments. */
#include "harness.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "half.h"
#include "quant/quant.h"

enum { FLOAT = 1, UINT8 = 2, INT8 = 3, FLOAT16 = 10, BFLOAT16 = 16,
       UINT4 = 21, INT4 = 22 };

/* A declaration on the stack: storage, bits, scale, zero point. */
typedef struct decl {
    Onnx__QuantizationProto q;
    Onnx__LinearUniformProto l;
} decl;

static void mk(decl *d, int32_t data_type, int32_t storage, int bits,
               float scale, int64_t zp)
{
    Onnx__QuantizationProto q = ONNX__QUANTIZATION_PROTO__INIT;
    Onnx__LinearUniformProto l = ONNX__LINEAR_UNIFORM_PROTO__INIT;
    d->q = q;
    d->l = l;
    d->q.has_data_type = 1;
    d->q.data_type = data_type;
    d->q.kind_case = ONNX__QUANTIZATION_PROTO__KIND_LINEAR;
    d->q.linear = &d->l;
    d->q.name = "PAGE";
    d->l.has_storage_type = 1;
    d->l.storage_type = storage;
    d->l.has_bits = 1;
    d->l.bits = bits;
    d->l.scale_case = ONNX__LINEAR_UNIFORM_PROTO__SCALE_SCALE_FLOAT;
    d->l.scale_float = scale;
    d->l.has_zero_point = 1;
    d->l.zero_point = zp;
    d->l.has_axis = 1;
    d->l.axis = -1;
}

static oac_qdesc desc(int32_t storage, int bits, float scale, int64_t zp)
{
    decl d;
    oac_qdesc q;
    char why[200];
    mk(&d, FLOAT, storage, bits, scale, zp);
    ck_assert_msg(oac_qdesc_from_proto(&q, &d.q, why, sizeof why), "%s", why);
    return q;
}

static const char *reason(decl *d)
{
    static char why[200];
    oac_qdesc q;
    return oac_qdesc_from_proto(&q, &d->q, why, sizeof why) ? NULL : why;
}

START_TEST(test_declarations)
{
    decl d;
    oac_qdesc q;
    char why[200];

    mk(&d, FLOAT16, INT4, 4, 0.5f, 0);
    ck_assert(oac_qdesc_from_proto(&q, &d.q, why, sizeof why));
    ck_assert_int_eq(q.bits, 4);
    ck_assert_int_eq(q.qmin, -8);
    ck_assert_int_eq(q.qmax, 7);
    ck_assert_str_eq(q.name, "PAGE");
    mk(&d, FLOAT, UINT8, 2, 1, 1);
    ck_assert(oac_qdesc_from_proto(&q, &d.q, why, sizeof why));
    ck_assert_int_eq(q.qmax, 3);

    /* bits must match the storage type */
    mk(&d, FLOAT, INT8, 4, 1, 0);
    ck_assert_str_eq(reason(&d), "bits 4 do not match storage type INT8");
    mk(&d, FLOAT, INT8, 2, 1, 0);
    ck_assert_ptr_nonnull(reason(&d));
    mk(&d, FLOAT, INT4, 8, 1, 0);
    ck_assert_ptr_nonnull(reason(&d));
    mk(&d, FLOAT, UINT4, 2, 1, 0);
    ck_assert_ptr_nonnull(reason(&d));
    mk(&d, FLOAT, INT32_C(6), 8, 1, 0);   /* INT32 storage */
    ck_assert_ptr_nonnull(strstr(reason(&d), "storage type INT32"));
    /* absent bits default from storage */
    mk(&d, FLOAT, UINT4, 4, 1, 0);
    d.l.has_bits = 0;
    ck_assert(oac_qdesc_from_proto(&q, &d.q, why, sizeof why) && q.bits == 4);

    /* scales: zero, negative, non-finite, missing; scale_int */
    mk(&d, FLOAT, INT8, 8, 0.0f, 0);
    ck_assert_ptr_nonnull(strstr(reason(&d), "scale"));
    mk(&d, FLOAT, INT8, 8, -1.0f, 0);
    ck_assert_ptr_nonnull(reason(&d));
    mk(&d, FLOAT, INT8, 8, NAN, 0);
    ck_assert_ptr_nonnull(reason(&d));
    mk(&d, FLOAT, INT8, 8, INFINITY, 0);
    ck_assert_ptr_nonnull(reason(&d));
    d.l.scale_case = ONNX__LINEAR_UNIFORM_PROTO__SCALE__NOT_SET;
    ck_assert_str_eq(reason(&d), "no scale (scale_float or scale_int) is set");
    d.l.scale_case = ONNX__LINEAR_UNIFORM_PROTO__SCALE_SCALE_INT;
    d.l.scale_int = 0;
    ck_assert_ptr_nonnull(reason(&d));
    d.l.scale_int = 3;
    ck_assert(oac_qdesc_from_proto(&q, &d.q, why, sizeof why) && q.scale == 3.0f);

    /* zero points outside the storage range */
    mk(&d, FLOAT, UINT4, 4, 1, 16);
    ck_assert_str_eq(reason(&d), "zero point 16 is outside the 4-bit UINT4 range 0..15");
    mk(&d, FLOAT, INT8, 8, 1, 128);
    ck_assert_ptr_nonnull(reason(&d));
    mk(&d, FLOAT, INT4, 4, 1, -9);
    ck_assert_ptr_nonnull(reason(&d));
    mk(&d, FLOAT, UINT8, 2, 1, 4);
    ck_assert_ptr_nonnull(reason(&d));
    mk(&d, FLOAT, UINT8, 2, 1, 3);
    ck_assert_ptr_null(reason(&d));

    /* symmetric: zero point 0 signed, mid-range unsigned */
    mk(&d, FLOAT, INT4, 4, 1, 0);
    d.l.has_symmetric = 1;
    d.l.symmetric = 1;
    ck_assert(oac_qdesc_from_proto(&q, &d.q, why, sizeof why) && q.zero_point == 0);
    d.l.zero_point = 1;
    ck_assert_ptr_nonnull(reason(&d));
    mk(&d, FLOAT, UINT4, 4, 1, 0);
    d.l.has_symmetric = 1;
    d.l.symmetric = 1;
    d.l.has_zero_point = 0;
    ck_assert(oac_qdesc_from_proto(&q, &d.q, why, sizeof why) && q.zero_point == 8);

    /* axis other than -1 */
    mk(&d, FLOAT, INT8, 8, 1, 0);
    d.l.axis = 0;
    ck_assert_ptr_nonnull(strstr(reason(&d), "axis 0"));
    d.l.has_axis = 0;
    ck_assert_ptr_null(reason(&d));

    /* decoded type and kind */
    mk(&d, INT32_C(7), INT8, 8, 1, 0);
    ck_assert_ptr_nonnull(strstr(reason(&d), "INT64"));
    d.q.has_data_type = 0;
    ck_assert_ptr_nonnull(reason(&d));
    mk(&d, FLOAT, INT8, 8, 1, 0);
    d.q.kind_case = ONNX__QUANTIZATION_PROTO__KIND__NOT_SET;
    ck_assert_ptr_nonnull(reason(&d));

    /* labels */
    char buf[24];
    ck_assert_str_eq(oac_qdesc_label(&d.q, 2, buf, sizeof buf), "PAGE");
    d.q.name = NULL;
    ck_assert_str_eq(oac_qdesc_label(&d.q, 2, buf, sizeof buf), "#2");
}
END_TEST

START_TEST(test_page_bytes)
{
    oac_qdesc i4 = desc(INT4, 4, 1, 0), u2 = desc(UINT8, 2, 1, 0),
              i8 = desc(INT8, 8, 1, 0);
    uint64_t b;
    ck_assert(oac_qdesc_page_bytes(&i4, 7, &b) && b == 4);
    ck_assert(oac_qdesc_page_bytes(&i4, 8, &b) && b == 4);
    ck_assert(oac_qdesc_page_bytes(&u2, 5, &b) && b == 2);
    ck_assert(oac_qdesc_page_bytes(&u2, 0, &b) && b == 0);
    ck_assert(oac_qdesc_page_bytes(&i8, 2 * 4 * 16 * 8, &b) && b == 1024);
    ck_assert(!oac_qdesc_page_bytes(&i4, UINT64_MAX / 2, &b));
    ck_assert(!oac_qdesc_page_bytes(&u2, UINT64_MAX, &b));
}
END_TEST

/* Hand-packed bytes: first element in the lowest bits. */
START_TEST(test_packing_order)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_qdesc i4 = desc(INT4, 4, 1, 0), u2 = desc(UINT8, 2, 1, 0),
              u4 = desc(UINT4, 4, 1, 0);
    uint8_t page[4];

    /* INT4 1, -2, 3: 0x1 | 0xE << 4 = 0xE1, then 0x3 in the low nibble. */
    float v3[3] = { 1, -2, 3 };
    memset(page, 0, sizeof page);
    ck_assert_int_eq(oac_quantize(ctx, &i4, page, 2, 0, FLOAT, v3, 3), 0);
    ck_assert_uint_eq(page[0], 0xE1);
    ck_assert_uint_eq(page[1], 0x03);

    /* 2-bit 1, 2, 3, 0, 1: 1 | 2<<2 | 3<<4 | 0<<6 = 0x39, then 0x01. */
    float v5[5] = { 1, 2, 3, 0, 1 };
    memset(page, 0, sizeof page);
    ck_assert_int_eq(oac_quantize(ctx, &u2, page, 2, 0, FLOAT, v5, 5), 0);
    ck_assert_uint_eq(page[0], 0x39);
    ck_assert_uint_eq(page[1], 0x01);

    /* Sub-byte offsets leave neighbours alone: UINT4 0 at element 1 of a
     * 0xFF page clears only the high nibble of byte 0. */
    float zero = 0, two = 2;
    memset(page, 0xFF, sizeof page);
    ck_assert_int_eq(oac_quantize(ctx, &u4, page, 4, 1, FLOAT, &zero, 1), 0);
    ck_assert_uint_eq(page[0], 0x0F);
    ck_assert_uint_eq(page[1], 0xFF);
    /* 2-bit 2 at element 6: bits 4-5 of byte 1 become 10b: 0xEF. */
    memset(page, 0xFF, sizeof page);
    ck_assert_int_eq(oac_quantize(ctx, &u2, page, 4, 6, FLOAT, &two, 1), 0);
    ck_assert_uint_eq(page[0], 0xFF);
    ck_assert_uint_eq(page[1], 0xEF);
    ck_assert_uint_eq(page[2], 0xFF);

    /* Reading back at the same offsets. */
    float out[5];
    memset(page, 0, sizeof page);
    ck_assert_int_eq(oac_quantize(ctx, &u2, page, 4, 3, FLOAT, v5, 5), 0);
    ck_assert_int_eq(oac_dequantize(ctx, &u2, page, 4, 3, FLOAT, out, 5), 0);
    for (int i = 0; i < 5; i++)
        ck_assert(out[i] == v5[i]);
    ck_assert_uint_eq(page[0] & 0x3F, 0);     /* elements 0..2 untouched */
    oac_ctx_free(ctx);
}
END_TEST

/* Every code of every sub-byte format, at every alignment, decodes to
 * (q - zp) * scale and re-encodes to itself. */
START_TEST(test_every_code_round_trips)
{
    oac_ctx *ctx = oac_ctx_new();
    const struct { int32_t st; int bits; int64_t zp; } f[] = {
        { INT4, 4, 0 }, { INT4, 4, -3 }, { UINT4, 4, 0 }, { UINT4, 4, 9 },
        { UINT8, 2, 0 }, { UINT8, 2, 2 }, { INT8, 8, 5 }, { UINT8, 8, 128 },
    };
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
        oac_qdesc d = desc(f[k].st, f[k].bits, 0.25f, f[k].zp);
        int ncodes = d.qmax - d.qmin + 1;
        for (int at = 0; at < 4; at++) {
            float vals[256], back[256];
            uint8_t page[300];
            for (int c = 0; c < ncodes; c++)
                vals[c] = oac_qlinear_value(&d, d.qmin + c);
            memset(page, 0xA5, sizeof page);
            ck_assert_int_eq(oac_quantize(ctx, &d, page, sizeof page, at,
                                          FLOAT, vals, ncodes), 0);
            ck_assert_int_eq(oac_dequantize(ctx, &d, page, sizeof page, at,
                                            FLOAT, back, ncodes), 0);
            for (int c = 0; c < ncodes; c++) {
                ck_assert(back[c] == (float)(d.qmin + c - d.zero_point) * 0.25f);
                ck_assert_int_eq(oac_qlinear_code(&d, back[c]), d.qmin + c);
            }
        }
    }
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_rounding_and_saturation)
{
    oac_qdesc i8 = desc(INT8, 8, 1, 0), u8 = desc(UINT8, 8, 1, 128),
              u4 = desc(UINT4, 4, 1, 0), i4 = desc(INT4, 4, 1, 0),
              u2 = desc(UINT8, 2, 1, 1);
    /* half to even */
    ck_assert_int_eq(oac_qlinear_code(&i8, 0.5f), 0);
    ck_assert_int_eq(oac_qlinear_code(&i8, 1.5f), 2);
    ck_assert_int_eq(oac_qlinear_code(&i8, 2.5f), 2);
    ck_assert_int_eq(oac_qlinear_code(&i8, -0.5f), 0);
    ck_assert_int_eq(oac_qlinear_code(&i8, -1.5f), -2);
    ck_assert_int_eq(oac_qlinear_code(&i8, 2.5000002f), 3);
    ck_assert_int_eq(oac_qlinear_code(&u8, 0.5f), 128);
    ck_assert_int_eq(oac_qlinear_code(&u8, 1.5f), 130);
    /* saturation, infinities; NaN has no code and maps to the zero point */
    ck_assert_int_eq(oac_qlinear_code(&i8, 1000), 127);
    ck_assert_int_eq(oac_qlinear_code(&i8, -1000), -128);
    ck_assert_int_eq(oac_qlinear_code(&i8, -128.4f), -128);
    ck_assert_int_eq(oac_qlinear_code(&i8, 127.6f), 127);
    ck_assert_int_eq(oac_qlinear_code(&u8, INFINITY), 255);
    ck_assert_int_eq(oac_qlinear_code(&u8, -INFINITY), 0);
    ck_assert_int_eq(oac_qlinear_code(&u8, NAN), 128);
    ck_assert_int_eq(oac_qlinear_code(&u4, 16), 15);
    ck_assert_int_eq(oac_qlinear_code(&u4, -1), 0);
    ck_assert_int_eq(oac_qlinear_code(&i4, 7.5f), 7);
    ck_assert_int_eq(oac_qlinear_code(&i4, -9), -8);
    ck_assert_int_eq(oac_qlinear_code(&u2, 5), 3);
    ck_assert_int_eq(oac_qlinear_code(&u2, -5), 0);
    ck_assert_int_eq(oac_qlinear_code(&u2, 1.5f), 3);   /* 1.5 -> 2, +1 */
    ck_assert_int_eq(oac_qlinear_code(&u2, 0.5f), 1);   /* 0.5 -> 0, +1 */
}
END_TEST

/* The bulk path (whole blocks) and the element path agree, and in-range
 * values come back within half a step. */
START_TEST(test_bulk_error_and_types)
{
    oac_ctx *ctx = oac_ctx_new();
    const struct { int32_t st; int bits; float scale; int64_t zp; } f[] = {
        { INT8, 8, 0.03f, 0 }, { UINT8, 8, 0.02f, 100 }, { INT4, 4, 0.4f, 0 },
        { UINT4, 4, 0.3f, 7 }, { UINT8, 2, 1.1f, 1 },
    };
    enum { N = 203 };
    float src[N], back[N];
    uint16_t h[N], hb[N];
    uint8_t page[N + 8], ref[N + 8];
    uint32_t seed = 12345;
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
        oac_qdesc d = desc(f[k].st, f[k].bits, f[k].scale, f[k].zp);
        float lo = oac_qlinear_value(&d, d.qmin), hi = oac_qlinear_value(&d, d.qmax);
        for (int i = 0; i < N; i++) {
            seed = seed * 1664525u + 1013904223u;
            src[i] = lo + (hi - lo) * (float)(seed >> 8) / 16777216.0f;
        }
        for (uint64_t at = 0; at < 5; at++) {
            memset(page, 0x5A, sizeof page);
            memset(ref, 0x5A, sizeof ref);
            ck_assert_int_eq(oac_quantize(ctx, &d, page, sizeof page, at, FLOAT, src, N), 0);
            for (int i = 0; i < N; i++)   /* element by element */
                ck_assert_int_eq(oac_quantize(ctx, &d, ref, sizeof ref, at + i,
                                              FLOAT, &src[i], 1), 0);
            ck_assert_mem_eq(page, ref, sizeof page);
            ck_assert_int_eq(oac_dequantize(ctx, &d, page, sizeof page, at, FLOAT, back, N), 0);
            for (int i = 0; i < N; i++)
                ck_assert_float_le(fabsf(back[i] - src[i]), d.scale / 2 * 1.0001f);
        }
        /* FLOAT16 and BFLOAT16 sources and destinations */
        oac_f32_to_f16_n(h, src, N);
        memset(page, 0, sizeof page);
        ck_assert_int_eq(oac_quantize(ctx, &d, page, sizeof page, 1, FLOAT16, h, N), 0);
        ck_assert_int_eq(oac_dequantize(ctx, &d, page, sizeof page, 1, FLOAT16, hb, N), 0);
        for (int i = 0; i < N; i++) {
            int32_t c = oac_qlinear_code(&d, oac_f16_to_f32(h[i]));
            ck_assert_uint_eq(hb[i], oac_f32_to_f16(oac_qlinear_value(&d, c)));
        }
        oac_f32_to_bf16_n(h, src, N);
        ck_assert_int_eq(oac_quantize(ctx, &d, page, sizeof page, 0, BFLOAT16, h, N), 0);
        ck_assert_int_eq(oac_dequantize(ctx, &d, page, sizeof page, 0, BFLOAT16, hb, N), 0);
        for (int i = 0; i < N; i++) {
            int32_t c = oac_qlinear_code(&d, oac_bf16_to_f32(h[i]));
            ck_assert_uint_eq(hb[i], oac_f32_to_bf16(oac_qlinear_value(&d, c)));
        }
    }
    oac_ctx_free(ctx);
}
END_TEST

/* Raw code of element i of a packed page, sign-extended for signed
 * storage. */
static int32_t raw_code(const oac_qdesc *d, const uint8_t *page, size_t i)
{
    size_t bit = i * d->bits;
    uint32_t v = (uint32_t)(page[bit / 8] >> (bit % 8)) & ((1u << d->bits) - 1u);
    if (d->qmin < 0 && (v >> (d->bits - 1)))
        return (int32_t)v - (1 << d->bits);
    return (int32_t)v;
}

/* The portable path and the AVX2 + F16C path (where the CPU has it; the
 * portable one twice otherwise) write the same bytes, for every one of the
 * 65536 FLOAT16 and BFLOAT16 inputs, every format, several scales
 * (including powers of two, where many inputs are exact ties) and every
 * offset within a byte; and each code is the scalar rule's. */
START_TEST(test_paths_agree_all_16bit)
{
    enum { N = 65536, PAD = 8 };
    static uint16_t h[N];
    static uint8_t a[N + PAD], b[N + PAD];
    const struct { int32_t st; int bits; int64_t zp; } f[] = {
        { INT8, 8, 0 }, { UINT8, 8, 128 }, { UINT8, 8, 3 }, { INT4, 4, 0 },
        { UINT4, 4, 8 }, { INT4, 4, -3 }, { UINT8, 2, 2 }, { UINT8, 2, 0 },
    };
    const float scales[] = { 0.05f, 1.0f / 3.0f, 0.25f, 1.0f, 7.0f, 1e-3f,
                             300.0f, 0x1p-20f };
    const int32_t types[] = { FLOAT16, BFLOAT16 };
    if (!oac_qpath_available(OAC_QPATH_AVX2_F16C))
        fprintf(stderr, "check_quant_linear: no AVX2+F16C here; comparing "
                        "the portable path with itself\n");
    for (uint32_t c = 0; c < N; c++)
        h[c] = (uint16_t)c;
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
        for (size_t sc = 0; sc < sizeof scales / sizeof scales[0]; sc++) {
            oac_qdesc d = desc(f[k].st, f[k].bits, scales[sc], f[k].zp);
            for (size_t t = 0; t < 2; t++)
                for (uint64_t at = 0; at < 4; at++) {
                    memset(a, 0xA5, sizeof a);
                    memset(b, 0xA5, sizeof b);
                    oac_qlinear_encode_path(&d, a, at, types[t], h, N,
                                            OAC_QPATH_PORTABLE);
                    oac_qlinear_encode_path(&d, b, at, types[t], h, N,
                                            OAC_QPATH_AVX2_F16C);
                    ck_assert_mem_eq(a, b, sizeof a);
                    if (at != 1)
                        continue;   /* the rule, once per declaration */
                    /* one assertion per mismatch, not per element:
                     * Check's assertions are slow in bulk */
                    for (uint32_t c = 0; c < N; c++) {
                        float x = types[t] == FLOAT16 ? oac_f16_to_f32(h[c])
                                                      : oac_bf16_to_f32(h[c]);
                        int32_t got = raw_code(&d, a, at + c);
                        int32_t want = oac_qlinear_code(&d, x);
                        if (got != want)
                            ck_abort_msg("type %d input 0x%04x scale %g: code "
                                         "%d, want %d", (int)types[t],
                                         (unsigned)c, (double)scales[sc],
                                         (int)got, (int)want);
                    }
                }
        }
}
END_TEST

/* The same for FLOAT sources: random bit patterns (every exponent, NaN,
 * Inf), in-range values and values within an ulp of the rounding
 * boundaries (k + 1/2) * scale. */
START_TEST(test_paths_agree_float)
{
    enum { N = 4099 };
    static float x[N];
    static uint8_t a[N + 8], b[N + 8];
    const struct { int32_t st; int bits; float scale; int64_t zp; } f[] = {
        { INT8, 8, 0.05f, 0 }, { UINT8, 8, 0.3f, 100 }, { INT4, 4, 0.25f, 0 },
        { UINT4, 4, 1.0f / 3.0f, 8 }, { UINT8, 2, 1.1f, 1 },
    };
    uint32_t seed = 4242;
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
        oac_qdesc d = desc(f[k].st, f[k].bits, f[k].scale, f[k].zp);
        for (int i = 0; i < N; i++) {
            seed = seed * 1664525u + 1013904223u;
            int32_t q = (int32_t)(seed >> 24) % 300 - 150;
            if (i % 3 == 0)
                x[i] = oac_bits_f32(seed);
            else if (i % 3 == 1)
                x[i] = ((float)q + 0.5f) * d.scale;
            else
                x[i] = nextafterf(((float)q + 0.5f) * d.scale,
                                  (seed & 1) ? INFINITY : -INFINITY);
        }
        for (uint64_t at = 0; at < 4; at++) {
            memset(a, 0x5A, sizeof a);
            memset(b, 0x5A, sizeof b);
            oac_qlinear_encode_path(&d, a, at, FLOAT, x, N, OAC_QPATH_PORTABLE);
            oac_qlinear_encode_path(&d, b, at, FLOAT, x, N, OAC_QPATH_AVX2_F16C);
            ck_assert_mem_eq(a, b, sizeof a);
            for (int i = 0; i < N; i++)
                if (raw_code(&d, a, at + i) != oac_qlinear_code(&d, x[i]))
                    ck_abort_msg("element %d (%a): code %d, want %d", i,
                                 (double)x[i], (int)raw_code(&d, a, at + i),
                                 (int)oac_qlinear_code(&d, x[i]));
        }
    }
    ck_assert(oac_qpath_available(OAC_QPATH_AUTO));
    ck_assert(oac_qpath_available(OAC_QPATH_PORTABLE));
}
END_TEST

START_TEST(test_bounds_and_fill)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_qdesc i4 = desc(INT4, 4, 1, 0), u4 = desc(UINT4, 4, 1, 5),
              u2 = desc(UINT8, 2, 1, 2);
    uint8_t page[4] = { 0 };
    float v[9] = { 0 };
    /* 8 INT4 codes fit in 4 bytes, 9 do not; at + n overflowing too. */
    ck_assert_int_eq(oac_quantize(ctx, &i4, page, 4, 0, FLOAT, v, 8), 0);
    ck_assert_int_eq(oac_quantize(ctx, &i4, page, 4, 0, FLOAT, v, 9), OAC_EINVAL);
    ck_assert_int_eq(oac_quantize(ctx, &i4, page, 4, 7, FLOAT, v, 2), OAC_EINVAL);
    ck_assert_int_eq(oac_quantize(ctx, &i4, page, 4, UINT64_MAX, FLOAT, v, 2), OAC_EINVAL);
    ck_assert_int_eq(oac_dequantize(ctx, &i4, page, 4, 8, FLOAT, v, 1), OAC_EINVAL);
    ck_assert_ptr_nonnull(strstr(oac_errmsg(ctx), "outside a page of 4 bytes"));
    ck_assert_int_eq(oac_quantize(ctx, &i4, page, 4, 0, INT32_C(7), v, 1), OAC_EINVAL);
    ck_assert_int_eq(oac_dequantize(ctx, &i4, page, 4, 0, INT8, v, 1), OAC_EINVAL);
    /* A new page starts as the code of 0.0: the zero point. */
    ck_assert_int_eq(oac_quant_fill_zero(ctx, &u4, page, 4, 0, 8), 0);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(page[i], 0x55);
    ck_assert_int_eq(oac_quant_fill_zero(ctx, &u2, page, 4, 1, 14), 0);
    /* element 0 (low 2 bits of byte 0) kept 01b; 2 = 10b elsewhere: 0xA9,
     * then 0xAA, 0xAA and element 15 (top of byte 3) kept 01b: 0x6A. */
    ck_assert_uint_eq(page[0], 0xA9);
    ck_assert_uint_eq(page[1], 0xAA);
    ck_assert_uint_eq(page[3], 0x6A);
    oac_ctx_free(ctx);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("quant_linear");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_declarations);
    tcase_add_test(tc, test_page_bytes);
    tcase_add_test(tc, test_packing_order);
    tcase_add_test(tc, test_every_code_round_trips);
    tcase_add_test(tc, test_rounding_and_saturation);
    tcase_add_test(tc, test_bulk_error_and_types);
    tcase_add_test(tc, test_bounds_and_fill);
    tcase_add_test(tc, test_paths_agree_all_16bit);
    tcase_add_test(tc, test_paths_agree_float);
    suite_add_tcase(s, tc);
    return s;
}

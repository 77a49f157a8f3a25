/* check_quant_fp8.c: the FLOAT8 E4M3FN codec (lib/quant/fp8.c) and its
 * declarations and grouping (lib/quant/quant.c), contract section 1. */
#include "harness.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "half.h"
#include "quant/quant.h"

enum { FLOAT = 1, FLOAT16 = 10, BFLOAT16 = 16 };

typedef struct decl {
    Onnx__QuantizationProto q;
    Onnx__FloatingPointUniformProto f;
} decl;

static void mk(decl *d, int s, int e, int m)
{
    Onnx__QuantizationProto q = ONNX__QUANTIZATION_PROTO__INIT;
    Onnx__FloatingPointUniformProto f = ONNX__FLOATING_POINT_UNIFORM_PROTO__INIT;
    d->q = q;
    d->f = f;
    d->q.has_data_type = 1;
    d->q.data_type = FLOAT16;
    d->q.kind_case = ONNX__QUANTIZATION_PROTO__KIND_FLOATING_POINT;
    d->q.floating_point = &d->f;
    d->q.name = "FP8_PAGE";
    d->f.has_sign_bits = d->f.has_exponent_bits = d->f.has_mantissa_bits = 1;
    d->f.sign_bits = s;
    d->f.exponent_bits = e;
    d->f.mantissa_bits = m;
    d->f.has_exponent_bias = 1;
    d->f.exponent_bias = 7;
    d->f.has_has_inf = 1;
    d->f.has_inf = 0;
    d->f.has_has_nan = 1;
    d->f.has_nan = 1;
}

static const char *reason(decl *d)
{
    static char why[200];
    oac_qdesc q;
    return oac_qdesc_from_proto(&q, &d->q, why, sizeof why) ? NULL : why;
}

/* E4M3FN from its definition, independently of the codec. */
static double ref(uint8_t c)
{
    int e = (c >> 3) & 15, m = c & 7;
    double v = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
    return (c & 0x80) ? -v : v;
}

START_TEST(test_all_256_codes)
{
    for (int c = 0; c < 256; c++) {
        float f = oac_fp8_e4m3fn_to_f32((uint8_t)c);
        if ((c & 0x7f) == 0x7f) {
            ck_assert(isnan(f));
            ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(f), c);  /* sign kept */
            continue;
        }
        ck_assert_msg(f == (float)ref((uint8_t)c), "code 0x%02x", c);
        ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(f), c);
    }
    ck_assert(oac_fp8_e4m3fn_to_f32(0x7e) == 448.0f);
    ck_assert(oac_fp8_e4m3fn_to_f32(0x01) == 0x1p-9f);
    ck_assert(oac_fp8_e4m3fn_to_f32(0x08) == 0x1p-6f);
    ck_assert(signbit(oac_fp8_e4m3fn_to_f32(0x80)));
}
END_TEST

/* Midpoints between neighbours round to the even code; anything nearer
 * one neighbour rounds to it. */
START_TEST(test_ties_to_even)
{
    for (int c = 0; c < 0x7e; c++) {
        float a = oac_fp8_e4m3fn_to_f32((uint8_t)c);
        float b = oac_fp8_e4m3fn_to_f32((uint8_t)(c + 1));
        float mid = (a + b) / 2;
        int even = (c & 1) ? c + 1 : c;
        ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(mid), even);
        ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(-mid), even | 0x80);
        ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(nextafterf(mid, 0)), c);
        ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(nextafterf(mid, 1000)), c + 1);
    }
    /* below half the smallest subnormal: zero of the same sign */
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(0x1p-11f), 0x00);
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(-0x1p-11f), 0x80);
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(0x1p-149f), 0x00);
}
END_TEST

START_TEST(test_saturation)
{
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(448.0f), 0x7e);
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(449.0f), 0x7e);
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(464.0f), 0x7e);
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(500.0f), 0x7e);
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(3e38f), 0x7e);
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(INFINITY), 0x7e);
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(-INFINITY), 0xfe);
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(-1e6f), 0xfe);
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(NAN), 0x7f);
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(-NAN), 0xff);
    /* 416 is 0x7d, 448 0x7e: the midpoint 432 goes to the even 0x7e */
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(440.0f), 0x7e);
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(432.0f), 0x7e);
    ck_assert_uint_eq(oac_fp8_e4m3fn_from_f32(431.9f), 0x7d);
}
END_TEST

/* The block encoder used in bulk equals the scalar one on every kind of
 * input, including specials and subnormals. */
START_TEST(test_block_matches_scalar)
{
    enum { N = 1000 };
    float src[N];
    uint8_t out[N];
    uint32_t seed = 7;
    for (int i = 0; i < N; i++) {
        seed = seed * 1664525u + 1013904223u;
        src[i] = oac_bits_f32(seed);   /* every exponent, NaN, Inf */
        if (i % 3 == 0)
            src[i] = ldexpf((float)(seed >> 9) / 8388608.0f, (int)(seed % 24) - 12);
        if (i % 7 == 0)
            src[i] = -src[i];
    }
    oac_fp8_encode_f32(out, src, N);
    for (int i = 0; i < N; i++)
        ck_assert_uint_eq(out[i], oac_fp8_e4m3fn_from_f32(src[i]));
}
END_TEST

/* E4M3FN encoding from the definition, independently of the codec: the
 * nearest of the 127 finite magnitudes, ties to the even code, saturating
 * at 448; NaN to the NaN of its sign. */
static uint8_t slow_encode(float x)
{
    uint8_t sign = signbit(x) ? 0x80 : 0;
    if (isnan(x))
        return sign | 0x7f;
    double a = fabs((double)x);
    if (a >= 448.0)
        return sign | 0x7e;
    int lo = 0, hi = 0x7e;          /* ref(lo) <= a < ref(hi) once found */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (ref((uint8_t)mid) <= a)
            lo = mid;
        else
            hi = mid;
    }
    double dl = a - ref((uint8_t)lo), dh = ref((uint8_t)hi) - a;
    int c = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
    return sign | (uint8_t)c;
}

/* Every FLOAT16 and every BFLOAT16 input: the portable path (which
 * encodes 16-bit sources directly, without widening) and the AVX2 path
 * agree with each other, with the scalar binary32 encoder of the widened
 * value and with the definition; the front door too, at an offset. */
START_TEST(test_paths_agree_all_16bit)
{
    enum { N = 65536 };
    static uint16_t h[N];
    static uint8_t a[N], b[N], page[N + 3];
    oac_ctx *ctx = oac_ctx_new();
    decl dd;
    oac_qdesc q;
    char why[200];
    mk(&dd, 1, 4, 3);
    ck_assert(oac_qdesc_from_proto(&q, &dd.q, why, sizeof why));
    if (!oac_qpath_available(OAC_QPATH_AVX2_F16C))
        fprintf(stderr, "check_quant_fp8: no AVX2+F16C here; comparing the "
                        "portable path with itself\n");
    for (uint32_t c = 0; c < N; c++)
        h[c] = (uint16_t)c;
    const int32_t types[] = { FLOAT16, BFLOAT16 };
    for (int t = 0; t < 2; t++) {
        oac_fp8_encode_path(a, types[t], h, N, OAC_QPATH_PORTABLE);
        oac_fp8_encode_path(b, types[t], h, N, OAC_QPATH_AVX2_F16C);
        ck_assert_mem_eq(a, b, N);
        ck_assert_int_eq(oac_quantize(ctx, &q, page, sizeof page, 3, types[t],
                                      h, N), 0);
        ck_assert_mem_eq(page + 3, a, N);
        /* one assertion per mismatch: Check's assertions are slow in bulk */
        for (uint32_t c = 0; c < N; c++) {
            float x = types[t] == FLOAT16 ? oac_f16_to_f32(h[c])
                                          : oac_bf16_to_f32(h[c]);
            uint8_t want = oac_fp8_e4m3fn_from_f32(x);
            if (a[c] != want || slow_encode(x) != want)
                ck_abort_msg("type %d input 0x%04x: code 0x%02x, scalar 0x%02x, "
                             "definition 0x%02x", (int)types[t], (unsigned)c,
                             a[c], want, slow_encode(x));
        }
    }
    oac_ctx_free(ctx);
}
END_TEST

/* FLOAT sources: 2^24 bit patterns spread over every exponent and
 * mantissa prefix (the low bits varied), through both paths, against the
 * scalar encoder; a sample of them against the definition. */
START_TEST(test_paths_agree_float)
{
    enum { N = 65536 };
    static uint32_t u[N];
    static uint8_t a[N], b[N];
    for (uint32_t blk = 0; blk < 256; blk++) {
        for (uint32_t k = 0; k < N; k++) {
            uint32_t top = blk * N + k;                 /* 24 bits */
            u[k] = top << 8 | ((top * 37u) & 0xffu);
        }
        oac_fp8_encode_path(a, FLOAT, u, N, OAC_QPATH_PORTABLE);
        oac_fp8_encode_path(b, FLOAT, u, N, OAC_QPATH_AVX2_F16C);
        ck_assert_mem_eq(a, b, N);
        for (uint32_t k = 0; k < N; k++) {
            float x = oac_bits_f32(u[k]);
            if (a[k] != oac_fp8_e4m3fn_from_f32(x) ||
                (k % 61 == 0 && a[k] != slow_encode(x)))
                ck_abort_msg("input 0x%08x: code 0x%02x, scalar 0x%02x, "
                             "definition 0x%02x", (unsigned)u[k], a[k],
                             oac_fp8_e4m3fn_from_f32(x), slow_encode(x));
        }
    }
}
END_TEST

START_TEST(test_declarations)
{
    decl d;
    oac_qdesc q;
    char why[200];
    mk(&d, 1, 4, 3);
    ck_assert(oac_qdesc_from_proto(&q, &d.q, why, sizeof why));
    ck_assert_int_eq(q.kind, OAC_QK_FP8);
    ck_assert_int_eq(q.bits, 8);
    d.f.has_exponent_bias = 0;   /* the format's own bias when absent */
    ck_assert_ptr_null(reason(&d));

    /* Other widths are the any-width codec's (check_quant_float.c), not
     * this one's; what no codec holds is refused. */
    mk(&d, 1, 5, 2);
    ck_assert(oac_qdesc_from_proto(&q, &d.q, why, sizeof why));
    ck_assert_int_eq(q.kind, OAC_QK_FLOAT);
    mk(&d, 1, 4, 3);
    d.f.exponent_bias = 8;
    ck_assert(oac_qdesc_from_proto(&q, &d.q, why, sizeof why));
    ck_assert_int_eq(q.kind, OAC_QK_FLOAT);
    mk(&d, 2, 4, 3);
    ck_assert_ptr_nonnull(strstr(reason(&d), "2/4/3"));
    mk(&d, 1, 4, 3);
    d.f.has_inf = 1;
    d.f.has_nan = 0;
    ck_assert_ptr_nonnull(strstr(reason(&d), "has_inf without has_nan"));
    mk(&d, 1, 4, 3);
    d.f.has_split_storage = d.f.split_storage = 1;
    ck_assert_str_eq(reason(&d), "split_storage is not supported in this version");
    mk(&d, 1, 4, 3);
    d.f.has_packed_count = 1;
    d.f.packed_count = 4;
    ck_assert_ptr_nonnull(reason(&d));   /* count without bytes */
    d.f.has_packed_bytes = 1;
    d.f.packed_bytes = 3;
    ck_assert_ptr_nonnull(reason(&d));   /* 4 codes cannot fit 3 bytes */
    d.f.packed_bytes = 4;
    ck_assert_ptr_null(reason(&d));
    mk(&d, 1, 4, 3);
    d.q.data_type = 17;                  /* decodes to FP8 itself: no */
    ck_assert_ptr_nonnull(reason(&d));
}
END_TEST

/* Page sizes and layout with packed_count / packed_bytes: 3 codes in
 * groups of 4 bytes; element e at byte (e / 3) * 4 + e % 3. */
START_TEST(test_grouped_pages)
{
    oac_ctx *ctx = oac_ctx_new();
    decl d;
    oac_qdesc q;
    char why[200];
    uint64_t b;
    mk(&d, 1, 4, 3);
    ck_assert(oac_qdesc_from_proto(&q, &d.q, why, sizeof why));
    ck_assert(oac_qdesc_page_bytes(&q, 10, &b) && b == 10);
    d.f.has_packed_count = d.f.has_packed_bytes = 1;
    d.f.packed_count = 3;
    d.f.packed_bytes = 4;
    ck_assert(oac_qdesc_from_proto(&q, &d.q, why, sizeof why));
    ck_assert(oac_qdesc_page_bytes(&q, 7, &b) && b == 12);
    ck_assert(oac_qdesc_page_bytes(&q, 6, &b) && b == 8);
    ck_assert(!oac_qdesc_page_bytes(&q, UINT64_MAX, &b));

    uint8_t page[12];
    float v[7] = { 1, 2, 3, 4, 5, 6, 7 }, back[7];
    memset(page, 0xEE, sizeof page);
    ck_assert_int_eq(oac_quantize(ctx, &q, page, 12, 0, FLOAT, v, 7), 0);
    /* 1.0 = 0x38, 2 = 0x40, 3 = 0x44, 4 = 0x48, 5 = 0x4a, 6 = 0x4c, 7 = 0x4e */
    const uint8_t want[12] = { 0x38, 0x40, 0x44, 0xEE, 0x48, 0x4a, 0x4c, 0xEE,
                               0x4e, 0xEE, 0xEE, 0xEE };
    ck_assert_mem_eq(page, want, 12);
    ck_assert_int_eq(oac_dequantize(ctx, &q, page, 12, 2, FLOAT, back, 5), 0);
    for (int i = 0; i < 5; i++)
        ck_assert(back[i] == v[i + 2]);
    ck_assert_int_eq(oac_quantize(ctx, &q, page, 12, 7, FLOAT, v, 3), OAC_EINVAL);
    /* elements 1..5 live in bytes 1, 2, 4, 5, 6; padding bytes untouched */
    ck_assert_int_eq(oac_quant_fill_zero(ctx, &q, page, 12, 1, 5), 0);
    const uint8_t want0[12] = { 0x38, 0, 0, 0xEE, 0, 0, 0, 0xEE,
                                0x4e, 0xEE, 0xEE, 0xEE };
    ck_assert_mem_eq(page, want0, 12);
    oac_ctx_free(ctx);
}
END_TEST

/* Through the front door from every source type: in-range values come
 * back within half a step of their binade. */
START_TEST(test_error_bound_all_types)
{
    oac_ctx *ctx = oac_ctx_new();
    decl d;
    oac_qdesc q;
    char why[200];
    mk(&d, 1, 4, 3);
    ck_assert(oac_qdesc_from_proto(&q, &d.q, why, sizeof why));
    enum { N = 300 };
    float src[N], back[N];
    uint16_t h[N], hb[N];
    uint8_t page[N];
    uint32_t seed = 99;
    for (int i = 0; i < N; i++) {
        seed = seed * 1664525u + 1013904223u;
        src[i] = ((float)(seed >> 8) / 16777216.0f * 2 - 1) * 440.0f;
        if (i % 5 == 0)
            src[i] *= 0x1p-10f;
    }
    ck_assert_int_eq(oac_quantize(ctx, &q, page, N, 0, FLOAT, src, N), 0);
    ck_assert_int_eq(oac_dequantize(ctx, &q, page, N, 0, FLOAT, back, N), 0);
    for (int i = 0; i < N; i++) {
        float a = fabsf(src[i]);
        /* step of E4M3 at a: 2^(floor(log2 a) - 3), at least 2^-9 */
        int e;
        frexpf(a, &e);
        float step = a < 0x1p-6f ? 0x1p-9f : ldexpf(1.0f, e - 1 - 3);
        ck_assert_float_le(fabsf(back[i] - src[i]), step / 2);
    }
    oac_f32_to_f16_n(h, src, N);
    ck_assert_int_eq(oac_quantize(ctx, &q, page, N, 0, FLOAT16, h, N), 0);
    ck_assert_int_eq(oac_dequantize(ctx, &q, page, N, 0, FLOAT16, hb, N), 0);
    for (int i = 0; i < N; i++) {
        uint8_t c = oac_fp8_e4m3fn_from_f32(oac_f16_to_f32(h[i]));
        ck_assert_uint_eq(page[i], c);
        ck_assert_uint_eq(hb[i], oac_f32_to_f16(oac_fp8_e4m3fn_to_f32(c)));
    }
    oac_f32_to_bf16_n(h, src, N);
    ck_assert_int_eq(oac_quantize(ctx, &q, page, N, 0, BFLOAT16, h, N), 0);
    ck_assert_int_eq(oac_dequantize(ctx, &q, page, N, 0, BFLOAT16, hb, N), 0);
    for (int i = 0; i < N; i++) {
        uint8_t c = oac_fp8_e4m3fn_from_f32(oac_bf16_to_f32(h[i]));
        ck_assert_uint_eq(page[i], c);
        ck_assert_uint_eq(hb[i], oac_f32_to_bf16(oac_fp8_e4m3fn_to_f32(c)));
    }
    oac_ctx_free(ctx);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("quant_fp8");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_all_256_codes);
    tcase_add_test(tc, test_ties_to_even);
    tcase_add_test(tc, test_saturation);
    tcase_add_test(tc, test_block_matches_scalar);
    tcase_add_test(tc, test_declarations);
    tcase_add_test(tc, test_grouped_pages);
    tcase_add_test(tc, test_error_bound_all_types);
    tcase_add_test(tc, test_paths_agree_all_16bit);
    tcase_add_test(tc, test_paths_agree_float);
    suite_add_tcase(s, tc);
    return s;
}

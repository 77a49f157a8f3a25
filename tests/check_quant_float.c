/* check_quant_float.c: the floating-point codec at any widths
 * (lib/quant/fpany.c) and its declarations (lib/quant/quant.c), contract
 * section 11: IEEE half stores FLOAT16 exactly; every other width rounds
 * half to even and saturates as its definition says; odd widths pack
 * little-endian without disturbing neighbours. */
#include "harness.h"
#include <limits.h>
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

/* s/e/m, bias, has_inf, has_nan all set. */
static void mk(decl *d, int s, int e, int m, int bias, int inf, int nan)
{
    Onnx__QuantizationProto q = ONNX__QUANTIZATION_PROTO__INIT;
    Onnx__FloatingPointUniformProto f = ONNX__FLOATING_POINT_UNIFORM_PROTO__INIT;
    d->q = q;
    d->f = f;
    d->q.has_data_type = 1;
    d->q.data_type = FLOAT16;
    d->q.kind_case = ONNX__QUANTIZATION_PROTO__KIND_FLOATING_POINT;
    d->q.floating_point = &d->f;
    d->q.name = "FP_PAGE";
    d->f.has_sign_bits = d->f.has_exponent_bits = d->f.has_mantissa_bits = 1;
    d->f.sign_bits = s;
    d->f.exponent_bits = e;
    d->f.mantissa_bits = m;
    d->f.has_exponent_bias = 1;
    d->f.exponent_bias = bias;
    d->f.has_has_inf = d->f.has_has_nan = 1;
    d->f.has_inf = inf;
    d->f.has_nan = nan;
}

static oac_qdesc desc(decl *d)
{
    oac_qdesc q;
    char why[200];
    ck_assert_msg(oac_qdesc_from_proto(&q, &d->q, why, sizeof why), "%s", why);
    return q;
}

static const char *reason(decl *d)
{
    static char why[200];
    oac_qdesc q;
    return oac_qdesc_from_proto(&q, &d->q, why, sizeof why) ? NULL : why;
}

/* IEEE half: every FLOAT16 bit pattern goes in and comes out unchanged
 * (NaNs as the quiet NaN of their sign), from FLOAT16 and from FLOAT
 * sources alike, and decodes to FLOAT exactly. */
START_TEST(test_ieee_half_exact)
{
    oac_ctx *ctx = oac_ctx_new();
    decl d;
    mk(&d, 1, 5, 10, 15, 1, 1);
    oac_qdesc q = desc(&d);
    ck_assert_int_eq(q.kind, OAC_QK_FLOAT);
    ck_assert_uint_eq(q.bits, 16);
    ck_assert(oac_qfloat_is_half(&q));
    enum { N = 65536 };
    static uint16_t h[N], back[N];
    static uint8_t page[2 * N], page2[2 * N];
    static float f[N], fb[N];
    for (int i = 0; i < N; i++) {
        h[i] = (uint16_t)i;
        f[i] = oac_f16_to_f32(h[i]);
    }
    uint64_t b;
    ck_assert(oac_qdesc_page_bytes(&q, N, &b) && b == 2 * N);
    ck_assert_int_eq(oac_quantize(ctx, &q, page, sizeof page, 0, FLOAT16, h, N), 0);
    ck_assert_int_eq(oac_quantize(ctx, &q, page2, sizeof page2, 0, FLOAT, f, N), 0);
    ck_assert_int_eq(oac_dequantize(ctx, &q, page, sizeof page, 0, FLOAT16, back, N), 0);
    ck_assert_int_eq(oac_dequantize(ctx, &q, page, sizeof page, 0, FLOAT, fb, N), 0);
    for (int i = 0; i < N; i++) {
        bool nan = (i & 0x7fff) > 0x7c00;
        uint16_t want = nan ? (uint16_t)((i & 0x8000) | 0x7e00) : (uint16_t)i;
        uint16_t code = (uint16_t)(page[2 * i] | page[2 * i + 1] << 8);
        uint16_t code2 = (uint16_t)(page2[2 * i] | page2[2 * i + 1] << 8);
        ck_assert_msg(code == want && code2 == want && back[i] == want,
                      "0x%04x: codes 0x%04x/0x%04x, back 0x%04x", (unsigned)i,
                      (unsigned)code, (unsigned)code2, (unsigned)back[i]);
        if (nan)
            ck_assert(isnan(fb[i]));
        else
            ck_assert(memcmp(&fb[i], &f[i], sizeof f[i]) == 0);
    }
    /* beyond 65504 from FLOAT: saturates; infinity stays infinity */
    float big[3] = { 70000.0f, -1e30f, INFINITY };
    ck_assert_int_eq(oac_quantize(ctx, &q, page, 6, 0, FLOAT, big, 3), 0);
    ck_assert_uint_eq(page[0] | page[1] << 8, 0x7bff);
    ck_assert_uint_eq(page[2] | page[3] << 8, 0xfbff);
    ck_assert_uint_eq(page[4] | page[5] << 8, 0x7c00);
    oac_ctx_free(ctx);
}
END_TEST

/* The any-width encoder at E4M3FN's widths computes quant/fp8.c's codes
 * on every FLOAT16 input (rounding, subnormals, saturation, NaN), and
 * decodes every code to the same value. */
START_TEST(test_agrees_with_e4m3fn)
{
    decl d;
    mk(&d, 1, 4, 3, 7, 0, 1);
    oac_qdesc q = desc(&d);
    ck_assert_int_eq(q.kind, OAC_QK_FP8);       /* the fast path's */
    q.kind = OAC_QK_FLOAT;                       /* forced through fpany */
    q.fp_sign = 1; q.fp_exp = 4; q.fp_man = 3; q.fp_bias = 7;
    q.fp_inf = false; q.fp_nan = true;
    for (uint32_t i = 0; i < 65536; i++) {
        float x = oac_f16_to_f32((uint16_t)i);
        uint32_t c = oac_qfloat_code(&q, x);
        ck_assert_msg(c == oac_fp8_e4m3fn_from_f32(x), "x %a: %02x vs %02x",
                      (double)x, c, oac_fp8_e4m3fn_from_f32(x));
    }
    for (uint32_t c = 0; c < 256; c++) {
        float a = oac_qfloat_value(&q, c), b = oac_fp8_e4m3fn_to_f32((uint8_t)c);
        ck_assert(isnan(a) ? isnan(b) : memcmp(&a, &b, sizeof a) == 0);
    }
    ck_assert_uint_eq(oac_qfloat_max_code(&q), 0x7e);
}
END_TEST

/* E5M2 (IEEE-like, 1/5/2 bias 15): every code from its definition, every
 * finite code round-trips, midpoints round to the even code. */
START_TEST(test_e5m2_definition)
{
    decl d;
    mk(&d, 1, 5, 2, 15, 1, 1);
    oac_qdesc q = desc(&d);
    ck_assert_uint_eq(q.bits, 8);
    for (uint32_t c = 0; c < 256; c++) {
        int e = (c >> 2) & 31, m = c & 3;
        float v = oac_qfloat_value(&q, c);
        if (e == 31) {
            ck_assert(m ? isnan(v) : isinf(v));
            continue;
        }
        double want = e ? ldexp(4 + m, e - 17) : ldexp(m, -16);
        if (c & 0x80)
            want = -want;
        ck_assert_msg((double)v == want, "code %02x: %a, want %a", c, (double)v, want);
        ck_assert_uint_eq(oac_qfloat_code(&q, v), c);
        if ((c & 0x7f) < 0x7b) {   /* midpoint to the next code up */
            float next = oac_qfloat_value(&q, c + 1);
            float mid = (float)(((double)v + (double)next) / 2);
            uint32_t even = (c & 1) ? c + 1 : c;
            ck_assert_msg(oac_qfloat_code(&q, mid) == even, "mid of %02x", c);
        }
    }
    ck_assert_uint_eq(oac_qfloat_code(&q, 1e9f), 0x7b);       /* 57344 */
    ck_assert_uint_eq(oac_qfloat_code(&q, -INFINITY), 0xfc);
    ck_assert_uint_eq(oac_qfloat_code(&q, NAN) & 0x7f, 0x7e);
}
END_TEST

/* A 6-bit unsigned format without specials (0/3/3, bias 2): packed four
 * codes per three bytes, neighbours untouched, negatives encode to +0. */
START_TEST(test_odd_width_packing)
{
    oac_ctx *ctx = oac_ctx_new();
    decl d;
    mk(&d, 0, 3, 3, 2, 0, 0);
    oac_qdesc q = desc(&d);
    ck_assert_uint_eq(q.bits, 6);
    uint64_t b;
    ck_assert(oac_qdesc_page_bytes(&q, 5, &b) && b == 4);   /* 30 bits */
    ck_assert_uint_eq(oac_qfloat_max_code(&q), 63);
    /* largest: field 7, m 7: (1 + 7/8) * 2^5 = 60 */
    ck_assert(oac_qfloat_value(&q, 63) == 60.0f);
    ck_assert(oac_qfloat_value(&q, 1) == 0.0625f);           /* 2^(-1-3) */
    uint8_t page[4];
    memset(page, 0xff, sizeof page);
    float v[5] = { 1.0f, -3.0f, 60.0f, 0.0625f, 100.0f }, back[5];
    ck_assert_int_eq(oac_quantize(ctx, &q, page, 4, 1, FLOAT, v + 1, 3), 0);
    ck_assert_int_eq(oac_dequantize(ctx, &q, page, 4, 0, FLOAT, back, 5), 0);
    ck_assert(back[0] == 60.0f);             /* all ones: untouched code 63 */
    ck_assert(back[1] == 0.0f);              /* negative: +0 */
    ck_assert(back[2] == 60.0f);
    ck_assert(back[3] == 0.0625f);
    ck_assert(back[4] == 60.0f);             /* untouched */
    ck_assert_uint_eq(page[3] & 0xc0, 0xc0); /* bits past the 5th code */
    ck_assert_int_eq(oac_quantize(ctx, &q, page, 4, 0, FLOAT, v, 5), 0);
    ck_assert_int_eq(oac_dequantize(ctx, &q, page, 4, 0, FLOAT, back, 5), 0);
    ck_assert(back[0] == 1.0f && back[4] == 60.0f);          /* saturated */
    ck_assert_int_ne(oac_quantize(ctx, &q, page, 4, 2, FLOAT, v, 4), 0);
    oac_ctx_free(ctx);
}
END_TEST

/* 12-bit codes with grouping: 3 codes in 5 bytes (36 of 40 bits). */
START_TEST(test_grouped_wide)
{
    oac_ctx *ctx = oac_ctx_new();
    decl d;
    mk(&d, 1, 5, 6, 15, 1, 1);
    d.f.has_packed_count = d.f.has_packed_bytes = 1;
    d.f.packed_count = 3;
    d.f.packed_bytes = 5;
    oac_qdesc q = desc(&d);
    uint64_t b;
    ck_assert(oac_qdesc_page_bytes(&q, 7, &b) && b == 15);
    uint8_t page[15];
    memset(page, 0, sizeof page);
    float v[7] = { 1, -2, 0.5f, 3, 65024, -0.25f, 7 }, back[7];
    ck_assert_int_eq(oac_quantize(ctx, &q, page, 15, 0, FLOAT, v, 7), 0);
    ck_assert_int_eq(oac_dequantize(ctx, &q, page, 15, 0, FLOAT, back, 7), 0);
    for (int i = 0; i < 7; i++)
        ck_assert_msg(back[i] == v[i], "%d: %g", i, (double)back[i]);
    ck_assert_uint_eq(page[4] & 0xf0, 0);  /* the group's spare bits */
    mk(&d, 1, 5, 6, 15, 1, 1);
    d.f.has_packed_count = d.f.has_packed_bytes = 1;
    d.f.packed_count = 3;
    d.f.packed_bytes = 4;                  /* 36 bits do not fit 32 */
    ck_assert_ptr_nonnull(strstr(reason(&d), "cannot hold"));
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_declarations)
{
    decl d;
    mk(&d, 1, 5, 11, 15, 1, 1);
    ck_assert_ptr_nonnull(strstr(reason(&d), "1/5/11"));          /* 17 bits */
    mk(&d, 1, 0, 7, 0, 0, 0);
    ck_assert_ptr_nonnull(strstr(reason(&d), "1/0/7"));
    /* Widths whose sum overflows int (found by fuzz_run): refused as a
     * format, the sum taken in 64 bits. */
    mk(&d, 0, 1, INT_MAX, 0, 0, 0);
    ck_assert_ptr_nonnull(strstr(reason(&d), "not a supported format"));
    mk(&d, 1, INT_MAX, 0, 0, 0, 0);
    ck_assert_ptr_nonnull(strstr(reason(&d), "not a supported format"));
    mk(&d, 1, 17, -2, 0, 0, 0);
    ck_assert_ptr_nonnull(strstr(reason(&d), "not a supported format"));
    mk(&d, 1, 5, 10, 15, 1, 0);
    ck_assert_ptr_nonnull(strstr(reason(&d), "has_inf without has_nan"));
    mk(&d, 1, 5, 0, 15, 1, 1);
    ck_assert_ptr_nonnull(strstr(reason(&d), "mantissa"));
    mk(&d, 1, 8, 7, -10, 0, 0);            /* 2^(255+10): beyond FLOAT */
    ck_assert_ptr_nonnull(strstr(reason(&d), "outside FLOAT's range"));
    mk(&d, 1, 8, 7, 127, 1, 1);            /* BFLOAT16's own widths: fine */
    ck_assert_ptr_null(reason(&d));
    mk(&d, 1, 5, 10, 15, 1, 1);
    d.f.has_exponent_bias = 0;             /* IEEE's bias when absent */
    oac_qdesc q = desc(&d);
    ck_assert_int_eq(q.fp_bias, 15);
    d.f.has_has_nan = 0;                   /* has_nan absent: true */
    q = desc(&d);
    ck_assert(q.fp_nan && q.fp_inf);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("quant_float");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_ieee_half_exact);
    tcase_add_test(tc, test_agrees_with_e4m3fn);
    tcase_add_test(tc, test_e5m2_definition);
    tcase_add_test(tc, test_odd_width_packing);
    tcase_add_test(tc, test_grouped_wide);
    tcase_add_test(tc, test_declarations);
    suite_add_tcase(s, tc);
    return s;
}

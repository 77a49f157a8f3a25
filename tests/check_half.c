/* check_half.c: FLOAT16 / BFLOAT16 <-> float (lib/half.c, half.h).
 * Exhaustive over the 16-bit codes: every code widens exactly and narrows
 * back to itself, and every midpoint between neighbours rounds to the
 * even one while its float neighbours round to the nearer. */
#include "harness.h"
#include <math.h>
#include <stdio.h>

#include "half.h"

/* Reference value of a FLOAT16 code, from the IEEE definition. */
static double f16_ref(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return (h & 0x8000) ? -v : v;
}

START_TEST(test_f16_every_code)
{
    for (uint32_t c = 0; c < 0x10000; c++) {
        uint16_t h = (uint16_t)c;
        float f = oac_f16_to_f32(h);
        if ((h & 0x7c00) == 0x7c00) {
            if (h & 0x3ff)
                ck_assert(isnan(f));
            else
                ck_assert(isinf(f) && (signbit(f) != 0) == ((h & 0x8000) != 0));
            if (h & 0x3ff)
                ck_assert_uint_eq(oac_f32_to_f16(f) & 0x7e00, 0x7e00);
            else
                ck_assert_uint_eq(oac_f32_to_f16(f), h);
            continue;
        }
        ck_assert(f == (float)f16_ref(h));
        ck_assert_uint_eq(oac_f32_to_f16(f), h);  /* also -0 */
    }
}
END_TEST

START_TEST(test_f16_ties_to_even)
{
    for (uint16_t c = 0; c < 0x7bff; c++) {
        float a = oac_f16_to_f32(c), b = oac_f16_to_f32((uint16_t)(c + 1));
        float mid = (a + b) / 2;   /* exact: 11-bit values in a 24-bit float */
        uint16_t even = (c & 1) ? (uint16_t)(c + 1) : c;
        ck_assert_uint_eq(oac_f32_to_f16(mid), even);
        ck_assert_uint_eq(oac_f32_to_f16(-mid), even | 0x8000);
        ck_assert_uint_eq(oac_f32_to_f16(nextafterf(mid, 0)), c);
        ck_assert_uint_eq(oac_f32_to_f16(nextafterf(mid, INFINITY)), c + 1);
    }
    /* Above the largest finite value the midpoint 65520 is Inf. */
    ck_assert_uint_eq(oac_f32_to_f16(65519.996f), 0x7bff);
    ck_assert_uint_eq(oac_f32_to_f16(65520.0f), 0x7c00);
    ck_assert_uint_eq(oac_f32_to_f16(-1e30f), 0xfc00);
    ck_assert_uint_eq(oac_f32_to_f16(0x1p-26f), 0);
    ck_assert_uint_eq(oac_f32_to_f16(1.0f), 0x3c00);
}
END_TEST

START_TEST(test_bf16_every_code_and_ties)
{
    for (uint32_t c = 0; c < 0x10000; c++) {
        uint16_t h = (uint16_t)c;
        float f = oac_bf16_to_f32(h);
        if (isnan(f)) {
            ck_assert(isnan(oac_bf16_to_f32(oac_f32_to_bf16(f))));
            continue;
        }
        ck_assert_uint_eq(oac_f32_to_bf16(f), h);
        if ((c & 0x7fff) >= 0x7f7f)
            continue;  /* the next code is Inf or NaN */
        float b = oac_bf16_to_f32((uint16_t)(c + 1));
        float mid = oac_bits_f32(oac_f32_bits(f) + 0x8000u);  /* exact midpoint */
        ck_assert(mid != f && mid != b);
        uint16_t even = (c & 1) ? (uint16_t)(c + 1) : h;
        ck_assert_uint_eq(oac_f32_to_bf16(mid), even);
        ck_assert_uint_eq(oac_f32_to_bf16(oac_bits_f32(oac_f32_bits(mid) - 1)), h);
        ck_assert_uint_eq(oac_f32_to_bf16(oac_bits_f32(oac_f32_bits(mid) + 1)), c + 1);
    }
    /* A NaN whose payload sits in the dropped bits stays NaN. */
    ck_assert(isnan(oac_bf16_to_f32(oac_f32_to_bf16(oac_bits_f32(0x7f800001u)))));
    ck_assert_uint_eq(oac_f32_to_bf16(1.0f), 0x3f80);
}
END_TEST

START_TEST(test_arrays)
{
    float src[5] = { 1.0f, -2.5f, 0.333333f, 65504.0f, -0.0f };
    uint16_t h[5], b[5];
    float back[5];
    oac_f32_to_f16_n(h, src, 5);
    oac_f32_to_bf16_n(b, src, 5);
    for (int i = 0; i < 5; i++) {
        ck_assert_uint_eq(h[i], oac_f32_to_f16(src[i]));
        ck_assert_uint_eq(b[i], oac_f32_to_bf16(src[i]));
    }
    oac_f16_to_f32_n(back, h, 5);
    ck_assert(back[1] == -2.5f && back[3] == 65504.0f && signbit(back[4]));
    oac_bf16_to_f32_n(back, b, 5);
    ck_assert(back[0] == 1.0f && back[1] == -2.5f);
}
END_TEST

/* The F16C widening (where the CPU has it) gives the portable result on
 * all 65536 codes, except that it quiets signalling NaNs: still a NaN of
 * the same sign and payload, with the quiet bit set. */
START_TEST(test_f16c_matches_portable)
{
#if OAC_X86_SIMD
    if (!oac_cpu_avx2_f16c()) {
        fprintf(stderr, "check_half: no AVX2+F16C here; F16C path not run\n");
        return;
    }
    static uint16_t h[65536];
    static float f[65536];
    for (uint32_t c = 0; c < 65536; c++)
        h[c] = (uint16_t)c;
    for (uint32_t c = 0; c < 65536; c += 8)
        oac_f16_to_f32_x8_f16c(f + c, h + c);
    for (uint32_t c = 0; c < 65536; c++) {
        uint32_t want = oac_f32_bits(oac_f16_to_f32(h[c]));
        if ((c & 0x7c00) == 0x7c00 && (c & 0x3ff))
            want |= 0x00400000u;       /* quieted */
        if (oac_f32_bits(f[c]) != want)
            ck_abort_msg("0x%04x: 0x%08x, want 0x%08x", (unsigned)c,
                         (unsigned)oac_f32_bits(f[c]), (unsigned)want);
    }
#else
    ck_assert(!oac_cpu_avx2_f16c());
#endif
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("half");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_f16_every_code);
    tcase_add_test(tc, test_f16_ties_to_even);
    tcase_add_test(tc, test_bf16_every_code_and_ties);
    tcase_add_test(tc, test_arrays);
    tcase_add_test(tc, test_f16c_matches_portable);
    suite_add_tcase(s, tc);
    return s;
}

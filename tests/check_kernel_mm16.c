/* check_kernel_mm16.c: the blocked FLOAT16 / BFLOAT16 product
 * (lib/kernels/mm16.c).  Over odd sizes (each side of the blocks' 8 rows,
 * 16 inner and 256 columns), padded row strides, offsets and transposed
 * operands, with and without alpha, beta and C: the AVX2 + F16C path and
 * the portable path give the same bits, both give the unblocked sum's bits
 * (q ascending, in float for row-major operands, in double otherwise),
 * and both lie within 2e-3 relative of the exact product. */
#include "harness.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "half.h"
#include "kernels/mm16.h"

static uint32_t seed = 1;

static float rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)(seed >> 8) / 8388608.0f - 1.0f;
}

static uint16_t narrow(int32_t t, float v)
{
    return t == OAC_T_FLOAT16 ? oac_f32_to_f16(v) : oac_f32_to_bf16(v);
}

static float widen(int32_t t, uint16_t h)
{
    return t == OAC_T_FLOAT16 ? oac_f16_to_f32(h) : oac_bf16_to_f32(h);
}

typedef struct shape {
    int64_t M, N, K;
    bool ta, tb, with_c;
} shape;

/* Element (i, q) of A and (q, j) of B as the args index them. */
static float a_at(const oac_mm_args *m, const uint16_t *a, int64_t i, int64_t q)
{
    return widen(m->t, a[m->a0 + i * m->ra + q * m->ca]);
}

static float b_at(const oac_mm_args *m, const uint16_t *b, int64_t q, int64_t j)
{
    return widen(m->t, b[m->b0 + q * m->rb + j * m->cb]);
}

static void one(int32_t t, shape s)
{
    int64_t pa = 3, pb = 5;   /* padding: odd row strides */
    int64_t arow = (s.ta ? s.M : s.K) + pa, brow = (s.tb ? s.K : s.N) + pb;
    int64_t na = 7 + (s.ta ? s.K : s.M) * arow, nb = 11 + (s.tb ? s.N : s.K) * brow;
    uint16_t *a = malloc((size_t)na * 2), *b = malloc((size_t)nb * 2);
    uint16_t *c = malloc((size_t)s.N * 2);
    uint16_t *o1 = malloc((size_t)(s.M * s.N) * 2), *o2 = malloc((size_t)(s.M * s.N) * 2);
    ck_assert(a && b && c && o1 && o2);
    for (int64_t i = 0; i < na; i++)
        a[i] = narrow(t, rnd());
    for (int64_t i = 0; i < nb; i++)
        b[i] = narrow(t, rnd() * 0.5f);
    for (int64_t i = 0; i < s.N; i++)
        c[i] = narrow(t, rnd());
    oac_mm_args m = { .t = t, .a = a, .b = b, .M = s.M, .N = s.N, .K = s.K,
                      .a0 = 7, .ra = s.ta ? 1 : arow, .ca = s.ta ? arow : 1,
                      .b0 = 11, .rb = s.tb ? 1 : brow, .cb = s.tb ? brow : 1,
                      .alpha = s.with_c ? 0.5 : 1.0, .beta = 0.25,
                      .c = s.with_c ? c : NULL, .tc = t, .rc = 0, .cc = 1 };
    oac_mm16(&m, o1, OAC_MMPATH_PORTABLE);
    oac_mm16(&m, o2, OAC_MMPATH_AVX2_F16C);
    bool dbl = s.ta || s.tb;
    for (int64_t i = 0; i < s.M; i++)
        for (int64_t j = 0; j < s.N; j++) {
            float accf = 0.0f;
            double accd = 0.0, exact = 0.0, mag = 0.0;
            for (int64_t q = 0; q < s.K; q++) {
                float x = a_at(&m, a, i, q), y = b_at(&m, b, q, j);
                accf += x * y;
                accd += (double)x * (double)y;
                exact += (double)x * (double)y;
                mag += fabs((double)x * (double)y);
            }
            double v = (dbl ? accd : (double)accf) * m.alpha;
            double cv = s.with_c ? m.beta * widen(t, c[j]) : 0.0;
            exact = exact * m.alpha + cv;
            mag = mag * m.alpha + fabs(cv);
            uint16_t want = narrow(t, (float)(v + cv));
            size_t k = (size_t)(i * s.N + j);
            if (o1[k] != o2[k] || o1[k] != want)
                ck_abort_msg("type %d %lldx%lldx%lld ta %d tb %d c %d at (%lld, %lld): "
                             "portable 0x%04x, avx2 0x%04x, unblocked 0x%04x", t,
                             (long long)s.M, (long long)s.N, (long long)s.K, s.ta, s.tb,
                             s.with_c, (long long)i, (long long)j, o1[k], o2[k], want);
            double got = widen(t, o1[k]);
            /* 2e-3 of the terms' magnitude, plus the store's rounding
             * (BFLOAT16 keeps 8 bits: 2^-8 of the value). */
            double tol = 2e-3 * mag + fabs(exact) * (t == OAC_T_FLOAT16 ? 0x1p-11 : 0x1p-8);
            ck_assert_msg(fabs(got - exact) <= tol + 1e-30, "(%lld, %lld): %g vs exact %g",
                          (long long)i, (long long)j, got, exact);
        }
    free(a);
    free(b);
    free(c);
    free(o1);
    free(o2);
}

static const shape shapes[] = {
    { 1, 1, 1, false, false, false },
    { 1, 513, 47, false, false, false },      /* a decode step: one row */
    { 3, 7, 5, false, false, true },
    { 9, 257, 17, false, false, false },      /* one past each block */
    { 8, 256, 16, false, false, true },       /* exactly the blocks */
    { 17, 33, 63, false, true, false },       /* Gemm transB */
    { 5, 263, 31, true, false, true },        /* Gemm transA, with C */
    { 11, 9, 40, true, true, false },
};

START_TEST(test_paths_agree)
{
    if (!oac_cpu_avx2_f16c())
        fprintf(stderr, "check_kernel_mm16: no AVX2+F16C here; both runs portable\n");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        one(OAC_T_FLOAT16, shapes[i]);
        one(OAC_T_BFLOAT16, shapes[i]);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("kernel_mm16");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_paths_agree);
    suite_add_tcase(s, tc);
    return s;
}

/* kernels/mm16.c: the blocked FLOAT16 / BFLOAT16 product of MatMul and
 * Gemm (kernels/mm16.h), portable and AVX2 + F16C.
 *
 * Owns the loop nest: rows of A in groups of MM16_R, columns in blocks of
 * MM16_N, the inner dimension in blocks of MM16_K; per (row group, column
 * block, inner block) B's block is widened to float once (VCVTPH2PS on the
 * vector path when B is row-major) and every row of the group accumulates
 * from it.  Contract: section 8 (element types).
 *
 * Invariants (kernels/mm16.h 1-3):
 *  1. For every output element the sum runs over q in ascending order and
 *     each step is one rounded multiply and one rounded add, in float or
 *     double as oac_mm16 chooses; so the two paths and the unblocked
 *     kernel this replaced give the same bits.
 *  2. Stack only: MM16_R * MM16_N accumulators (16 KiB as double) and one
 *     MM16_K x MM16_N block of B as float (16 KiB), bounds of the code.
 */
#include "kernels/mm16.h"

#define MM16_R 8
#define MM16_N 256
#define MM16_K 16

typedef struct blk {
    int64_t i0, j0, q0;
    int rn, jn, kn;
    bool dbl;                       /* accumulate in double */
} blk;

/* Rows i0.. and columns q0.. of A, widened exactly (A is small). */
static void widen_a(const oac_mm_args *m, const blk *k, float *aw)
{
    for (int r = 0; r < k->rn; r++)
        for (int q = 0; q < k->kn; q++)
            aw[r * MM16_K + q] =
                (float)oac_ek_getd(m->t, m->a, (uint64_t)(m->a0 + (k->i0 + r) * m->ra +
                                                          (k->q0 + q) * m->ca));
}

/* B's block into bw (row stride MM16_N), element by element: any strides.
 * A transposed B (rb == 1) is walked along its rows. */
static void widen_b_any(const oac_mm_args *m, const blk *k, float *bw)
{
    if (m->rb == 1) {
        for (int j = 0; j < k->jn; j++)
            for (int q = 0; q < k->kn; q++)
                bw[q * MM16_N + j] =
                    (float)oac_ek_getd(m->t, m->b, (uint64_t)(m->b0 + (k->q0 + q) +
                                                              (k->j0 + j) * m->cb));
        return;
    }
    for (int q = 0; q < k->kn; q++)
        for (int j = 0; j < k->jn; j++)
            bw[q * MM16_N + j] =
                (float)oac_ek_getd(m->t, m->b, (uint64_t)(m->b0 + (k->q0 + q) * m->rb +
                                                          (k->j0 + j) * m->cb));
}

static const uint16_t *b_row(const oac_mm_args *m, const blk *k, int q)
{
    return (const uint16_t *)m->b + m->b0 + (k->q0 + q) * m->rb + k->j0;
}

static void widen_b_portable(const oac_mm_args *m, const blk *k, float *bw)
{
    if (m->cb != 1) {
        widen_b_any(m, k, bw);
        return;
    }
    for (int q = 0; q < k->kn; q++) {
        if (m->t == OAC_T_FLOAT16)
            oac_f16_to_f32_n(bw + q * MM16_N, b_row(m, k, q), (size_t)k->jn);
        else
            oac_bf16_to_f32_n(bw + q * MM16_N, b_row(m, k, q), (size_t)k->jn);
    }
}

static void acc_portable(const blk *k, void *acc, const float *aw, const float *bw)
{
    for (int r = 0; r < k->rn; r++)
        for (int q = 0; q < k->kn; q++) {
            float a = aw[r * MM16_K + q];
            const float *b = bw + q * MM16_N;
            if (k->dbl) {
                double *y = (double *)acc + r * MM16_N;
                for (int j = 0; j < k->jn; j++)
                    y[j] += (double)a * (double)b[j];
            } else {
                float *y = (float *)acc + r * MM16_N;
                for (int j = 0; j < k->jn; j++)
                    y[j] += a * b[j];
            }
        }
}

#if OAC_X86_SIMD
static OAC_TARGET_AVX2_F16C void widen_b_avx2(const oac_mm_args *m, const blk *k, float *bw)
{
    if (m->cb != 1) {
        widen_b_any(m, k, bw);
        return;
    }
    for (int q = 0; q < k->kn; q++) {
        const uint16_t *s = b_row(m, k, q);
        float *d = bw + q * MM16_N;
        int j = 0;
        for (; j + 8 <= k->jn; j += 8) {
            __m128i h = _mm_loadu_si128((const __m128i *)(s + j));
            __m256 f = m->t == OAC_T_FLOAT16
                ? _mm256_cvtph_ps(h)
                : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
            _mm256_storeu_ps(d + j, f);
        }
        for (; j < k->jn; j++)
            d[j] = m->t == OAC_T_FLOAT16 ? oac_f16_to_f32(s[j]) : oac_bf16_to_f32(s[j]);
    }
}

/* Float sums: 32 columns of a row in four registers over the whole block
 * of q, then 8 at a time, then one at a time. */
static OAC_TARGET_AVX2_F16C void acc_f_avx2(const blk *k, float *acc, const float *aw,
                                             const float *bw)
{
    for (int r = 0; r < k->rn; r++) {
        float *y = acc + r * MM16_N;
        const float *ar = aw + r * MM16_K;
        int j = 0;
        for (; j + 32 <= k->jn; j += 32) {
            __m256 y0 = _mm256_loadu_ps(y + j), y1 = _mm256_loadu_ps(y + j + 8);
            __m256 y2 = _mm256_loadu_ps(y + j + 16), y3 = _mm256_loadu_ps(y + j + 24);
            for (int q = 0; q < k->kn; q++) {
                __m256 a = _mm256_set1_ps(ar[q]);
                const float *b = bw + q * MM16_N + j;
                y0 = _mm256_add_ps(y0, _mm256_mul_ps(a, _mm256_loadu_ps(b)));
                y1 = _mm256_add_ps(y1, _mm256_mul_ps(a, _mm256_loadu_ps(b + 8)));
                y2 = _mm256_add_ps(y2, _mm256_mul_ps(a, _mm256_loadu_ps(b + 16)));
                y3 = _mm256_add_ps(y3, _mm256_mul_ps(a, _mm256_loadu_ps(b + 24)));
            }
            _mm256_storeu_ps(y + j, y0);
            _mm256_storeu_ps(y + j + 8, y1);
            _mm256_storeu_ps(y + j + 16, y2);
            _mm256_storeu_ps(y + j + 24, y3);
        }
        for (; j + 8 <= k->jn; j += 8) {
            __m256 y0 = _mm256_loadu_ps(y + j);
            for (int q = 0; q < k->kn; q++)
                y0 = _mm256_add_ps(y0, _mm256_mul_ps(_mm256_set1_ps(ar[q]),
                                                     _mm256_loadu_ps(bw + q * MM16_N + j)));
            _mm256_storeu_ps(y + j, y0);
        }
        for (; j < k->jn; j++)
            for (int q = 0; q < k->kn; q++)
                y[j] += ar[q] * bw[q * MM16_N + j];
    }
}

/* Double sums of exact float products: 8 columns in two registers. */
static OAC_TARGET_AVX2_F16C void acc_d_avx2(const blk *k, double *acc, const float *aw,
                                             const float *bw)
{
    for (int r = 0; r < k->rn; r++) {
        double *y = acc + r * MM16_N;
        const float *ar = aw + r * MM16_K;
        int j = 0;
        for (; j + 8 <= k->jn; j += 8) {
            __m256d y0 = _mm256_loadu_pd(y + j), y1 = _mm256_loadu_pd(y + j + 4);
            for (int q = 0; q < k->kn; q++) {
                __m256d a = _mm256_set1_pd((double)ar[q]);
                __m256 b = _mm256_loadu_ps(bw + q * MM16_N + j);
                y0 = _mm256_add_pd(y0, _mm256_mul_pd(a, _mm256_cvtps_pd(
                                                            _mm256_castps256_ps128(b))));
                y1 = _mm256_add_pd(y1, _mm256_mul_pd(a, _mm256_cvtps_pd(
                                                            _mm256_extractf128_ps(b, 1))));
            }
            _mm256_storeu_pd(y + j, y0);
            _mm256_storeu_pd(y + j + 4, y1);
        }
        for (; j < k->jn; j++)
            for (int q = 0; q < k->kn; q++)
                y[j] += (double)ar[q] * (double)bw[q * MM16_N + j];
    }
}
#endif

/* alpha * acc + beta * C into the output block. */
static void store(const oac_mm_args *m, const blk *k, const void *acc, void *o)
{
    for (int r = 0; r < k->rn; r++)
        for (int j = 0; j < k->jn; j++) {
            int64_t i = k->i0 + r, jj = k->j0 + j;
            double v = k->dbl ? ((const double *)acc)[r * MM16_N + j]
                              : (double)((const float *)acc)[r * MM16_N + j];
            v *= m->alpha;
            if (m->c)
                v += m->beta * oac_ek_getd(m->tc, m->c,
                                           (uint64_t)(m->c0 + i * m->rc + jj * m->cc));
            oac_ek_setd(m->t, o, (uint64_t)(m->o0 + i * m->N + jj), v);
        }
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

void oac_mm16(const oac_mm_args *m, void *o, oac_mmpath path)
{
    bool simd = path != OAC_MMPATH_PORTABLE && oac_cpu_avx2_f16c();
    union {
        float f[MM16_R * MM16_N];
        double d[MM16_R * MM16_N];
    } acc;
    float aw[MM16_R * MM16_K], bw[MM16_K * MM16_N];
    blk k = { .dbl = !(m->ca == 1 && m->cb == 1) };
    for (k.i0 = 0; k.i0 < m->M; k.i0 += MM16_R)
        for (k.j0 = 0; k.j0 < m->N; k.j0 += MM16_N) {
            k.rn = (int)min64(MM16_R, m->M - k.i0);
            k.jn = (int)min64(MM16_N, m->N - k.j0);
            for (int r = 0; r < k.rn; r++)
                for (int j = 0; j < k.jn; j++) {
                    if (k.dbl)
                        acc.d[r * MM16_N + j] = 0.0;
                    else
                        acc.f[r * MM16_N + j] = 0.0f;
                }
            for (k.q0 = 0; k.q0 < m->K; k.q0 += MM16_K) {
                k.kn = (int)min64(MM16_K, m->K - k.q0);
                widen_a(m, &k, aw);
#if OAC_X86_SIMD
                if (simd) {
                    widen_b_avx2(m, &k, bw);
                    if (k.dbl)
                        acc_d_avx2(&k, acc.d, aw, bw);
                    else
                        acc_f_avx2(&k, acc.f, aw, bw);
                    continue;
                }
#endif
                (void)simd;
                widen_b_portable(m, &k, bw);
                acc_portable(&k, k.dbl ? (void *)acc.d : (void *)acc.f, aw, bw);
            }
            store(m, &k, k.dbl ? (const void *)acc.d : (const void *)acc.f, o);
        }
}

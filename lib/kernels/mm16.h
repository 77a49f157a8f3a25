/* kernels/mm16.h: the blocked product of FLOAT16 / BFLOAT16 matrices that
 * MatMul and Gemm run on (kernels/linalg.c), with a portable C path and an
 * AVX2 + F16C path chosen at run time.
 *
 * Owns: oac_mm_args (one [M, K] x [K, N] product with element strides,
 * alpha, beta and an optional C) and oac_mm16, which computes it for the
 * two 16-bit float types.
 *
 * Invariants:
 *  1. Both paths compute the same function, bit for bit: products of two
 *     16-bit floats are exact in float; the sum over q runs in ascending q
 *     in float when both operands are row-major (ca == cb == 1) and in
 *     double otherwise, as the unblocked kernel did; the vector path
 *     uses separate multiplies and adds (no fused multiply-add, which
 *     would round differently).  Stores round as kernels/elem_io.h says.
 *  2. No allocation: a block of B (MM16_K rows of MM16_N columns) is
 *     widened once into a stack buffer and used by up to MM16_R rows of A
 *     (for a decode step's single row: once per call).
 *  3. The caller has validated shapes, strides and the work bound, and
 *     M, N and K are not 0.
 */
#ifndef OAC_KERNEL_MM16_H
#define OAC_KERNEL_MM16_H

#include "kernels/elem_io.h"

/* Element (i, q) of A at a0 + i * ra + q * ca, (q, j) of B at b0 + q * rb
 * + j * cb, (i, j) of C (type tc) at c0 + i * rc + j * cc, (i, j) of the
 * output at o0 + i * N + j. */
typedef struct oac_mm_args {
    int32_t t;
    const void *a, *b, *c;
    int32_t tc;
    int64_t M, N, K;
    int64_t a0, ra, ca, b0, rb, cb, c0, rc, cc, o0;
    double alpha, beta;
} oac_mm_args;

/* Which implementation runs: AUTO is AVX2 + F16C when the CPU has them
 * (oac_cpu_avx2_f16c, half.h), else PORTABLE; tests name both. */
typedef enum oac_mmpath {
    OAC_MMPATH_AUTO = 0,
    OAC_MMPATH_PORTABLE = 1,
    OAC_MMPATH_AVX2_F16C = 2   /* PORTABLE when the CPU lacks them */
} oac_mmpath;

/* o = alpha * A B + beta * C for m->t FLOAT16 or BFLOAT16. */
void oac_mm16(const oac_mm_args *m, void *o, oac_mmpath path);

#endif /* OAC_KERNEL_MM16_H */

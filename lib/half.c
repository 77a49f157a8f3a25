/* half.c: float -> IEEE binary16 (FLOAT16) narrowing, and the array forms
 * of both 16-bit types (contract section 1: pages decode to FLOAT,
 * FLOAT16 or BFLOAT16).  The widening scalar forms are inline in half.h,
 * so that the quantizers can fuse them into their loops.
 *
 * Invariants (see half.h): narrowing is round-to-nearest-even done on the
 * bit patterns, widening is exact, NaN/Inf/signed zero are preserved.
 */
#include "half.h"

uint16_t oac_f32_to_f16(float f)
{
    uint32_t u = oac_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;

    if (a > 0x7f800000u)                     /* NaN: keep it quiet */
        return sign | 0x7e00u | (uint16_t)((a >> 13) & 0x3ffu);
    if (a >= 0x477ff000u)                    /* >= 65520 rounds to Inf */
        return sign | 0x7c00u;
    if (a < 0x38800000u) {                   /* below 2^-14: subnormal */
        if (a < 0x33000000u)                 /* <= 2^-25 rounds to zero */
            return sign;
        /* Shift the full significand down to units of 2^-24 and round
         * ties to even on the bits shifted out. */
        uint32_t e = a >> 23;                /* 102..112 */
        uint32_t m = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e;           /* 14..24 */
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
        return sign | (uint16_t)q;           /* q == 0x400 is 2^-14, right */
    }
    /* Normal: rebias and round 13 mantissa bits away; a carry into the
     * exponent is the correct next binade (and cannot reach Inf here). */
    uint32_t r = a - 0x38000000u;            /* exponent 127 -> 15 */
    r += 0xfffu + ((r >> 13) & 1u);
    return sign | (uint16_t)(r >> 13);
}

/* The compiler's runtime reads CPUID once at start-up (and checks that the
 * OS saves the AVX registers); these are lookups in what it found.  Some
 * Clang versions reject "f16c" here; every CPU with AVX2 has F16C
 * (Haswell, Excavator and later), so under Clang AVX2 stands for both. */
bool oac_cpu_avx2_f16c(void)
{
#if OAC_X86_SIMD && defined(__clang__)
    return __builtin_cpu_supports("avx2");
#elif OAC_X86_SIMD
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
#else
    return false;
#endif
}

/* Fixed blocks of BLOCK let GCC's -O2 vectorizer (which avoids scalar
 * epilogues) use SIMD; the tail goes element by element. */
#define BLOCK 16

void oac_f16_to_f32_n(float *dst, const uint16_t *src, size_t n)
{
    size_t i = 0;
    for (; n - i >= BLOCK; i += BLOCK) {
        uint32_t u[BLOCK];
        for (int k = 0; k < BLOCK; k++)
            u[k] = oac_f16_bits_to_f32_bits(src[i + k]);
        memcpy(dst + i, u, sizeof u);
    }
    for (; i < n; i++)
        dst[i] = oac_f16_to_f32(src[i]);
}

void oac_f32_to_f16_n(uint16_t *dst, const float *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = oac_f32_to_f16(src[i]);
}

void oac_bf16_to_f32_n(float *dst, const uint16_t *src, size_t n)
{
    size_t i = 0;
    for (; n - i >= BLOCK; i += BLOCK) {
        uint32_t u[BLOCK];
        for (int k = 0; k < BLOCK; k++)
            u[k] = (uint32_t)src[i + k] << 16;
        memcpy(dst + i, u, sizeof u);
    }
    for (; i < n; i++)
        dst[i] = oac_bf16_to_f32(src[i]);
}

void oac_f32_to_bf16_n(uint16_t *dst, const float *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = oac_f32_to_bf16(src[i]);
}

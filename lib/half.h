/* half.h: FLOAT16 and BFLOAT16 <-> float conversions (contract section 1,
 * the decoded element types of quantized pages).
 *
 * Owns the bit-level conversions between IEEE binary32 and the two 16-bit
 * formats ONNX uses for activations: FLOAT16 (IEEE binary16, 1/5/10) and
 * BFLOAT16 (the top half of a binary32, 1/8/7).
 *
 * Invariants:
 *  1. Narrowing rounds to nearest, ties to even, in integer arithmetic, so
 *     the result never depends on the FPU rounding mode or on excess
 *     precision.
 *  2. Widening is exact.  NaN stays NaN (sign kept), infinities and
 *     signed zeros are kept; float -> FLOAT16 overflows to infinity as IEEE
 *     does (saturation belongs to the quantizers, not to these types).
 *  3. Pure functions, no state: safe from any thread.
 *  4. Where the compiler targets x86 (GCC or Clang), OAC_X86_SIMD is 1 and
 *     an AVX2 + F16C widening of 8 FLOAT16 at a time is offered beside the
 *     portable one; callers pick it only when oac_cpu_avx2_f16c() says the
 *     CPU has both, at run time (no state of ours: the compiler's runtime
 *     keeps the CPU model).  Widening is exact either way; the hardware
 *     only differs on signalling NaNs, which it quiets (still NaN of the
 *     same sign), so the quantizers' codes are the same on both paths.
 */
#ifndef OAC_HALF_H
#define OAC_HALF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t oac_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float oac_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* BFLOAT16 is the upper half of a binary32: widening is a shift. */
static inline float oac_bf16_to_f32(uint16_t h)
{
    return oac_bits_f32((uint32_t)h << 16);
}

/* Round the low 16 bits away, ties to even; NaN stays a quiet NaN (a plain
 * truncation could turn a NaN with only low payload bits into infinity). */
static inline uint16_t oac_f32_to_bf16(float f)
{
    uint32_t u = oac_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* Branch-free so loops over it vectorize: placing the 15 magnitude bits
 * at the top of a binary32's exponent/mantissa and multiplying by 2^112
 * rebiases normals and normalizes subnormals in one exact step; Inf/NaN
 * get the all-ones exponent by mask, NaN payloads kept. */
static inline uint32_t oac_f16_bits_to_f32_bits(uint32_t h)
{
    uint32_t sign = (h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu;
    uint32_t v = oac_f32_bits(oac_bits_f32(em << 13) * 0x1p112f);
    uint32_t special = 0u - (uint32_t)(em >= 0x7c00u);
    uint32_t infnan = 0x7f800000u | (em << 13);
    return sign | (infnan & special) | (v & ~special);
}

static inline float oac_f16_to_f32(uint16_t h)
{
    return oac_bits_f32(oac_f16_bits_to_f32_bits(h));
}

uint16_t oac_f32_to_f16(float f);

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && \
    !defined(OAC_NO_X86_SIMD)
#define OAC_X86_SIMD 1
#include <immintrin.h>
/* For functions compiled for AVX2 + F16C; call them only when
 * oac_cpu_avx2_f16c() is true. */
#define OAC_TARGET_AVX2_F16C __attribute__((target("avx2,f16c")))

/* 8 FLOAT16 -> 8 binary32 with one VCVTPH2PS. */
static inline OAC_TARGET_AVX2_F16C void
oac_f16_to_f32_x8_f16c(float *dst, const uint16_t *src)
{
    _mm256_storeu_ps(dst, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)src)));
}
#else
#define OAC_X86_SIMD 0
#endif

/* True when the running CPU (and OS) support AVX2 and F16C; always false
 * without OAC_X86_SIMD. */
bool oac_cpu_avx2_f16c(void);

/* Array forms; n elements, no overlap between src and dst. */
void oac_f16_to_f32_n(float *dst, const uint16_t *src, size_t n);
void oac_f32_to_f16_n(uint16_t *dst, const float *src, size_t n);
void oac_bf16_to_f32_n(float *dst, const uint16_t *src, size_t n);
void oac_f32_to_bf16_n(uint16_t *dst, const float *src, size_t n);

#endif /* OAC_HALF_H */

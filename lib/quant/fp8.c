/* quant/fp8.c: the FLOAT8 E4M3FN codec (contract section 1,
 * FloatingPointUniformProto with sign/exponent/mantissa 1/4/3, bias 7).
 *
 * E4M3FN: codes s.eeee.mmm; e == 0 is subnormal (m * 2^-9); otherwise
 * (1 + m/8) * 2^(e-7).  There is no infinity; s.1111.111 (0x7f, 0xff) is
 * NaN, so the largest finite magnitude is 1.75 * 2^8 = 448 (0x7e).
 *
 * Invariants:
 *  1. Encoding rounds half to even on the bit pattern and saturates: every
 *     finite value beyond +-448, and +-infinity, encodes to +-448.  NaN
 *     encodes to the NaN of its sign (0x7f or 0xff).
 *  2. Decoding is exact (every code is a binary32 value); for every code
 *     but the NaNs, encode(decode(c)) == c, including -0 (0x80).
 *  3. The block encoder computes the same function as the scalar one,
 *     branch-free, so that GCC's -O2 vectorizer can use SIMD for it:
 *     on binary32 bits for FLOAT sources, and for FLOAT16 and BFLOAT16
 *     directly on their 16 bits (code_of_16: twice the lanes, and no
 *     widening), compiled twice: portable, and for AVX2 when the CPU has
 *     it (oac_qpath, quant/quant.h).  The tests hold every path to the scalar
 *     encoder on all 65536 inputs of each 16-bit type, and to the
 *     definition.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "half.h"
#include "quant/quant.h"

#define BLOCK 32

#define F32_INF     0x7f800000u
#define F32_448     0x43e00000u   /* 1.75 * 2^8 */
#define F32_MIN_NRM 0x3c800000u   /* 2^-6, E4M3's smallest normal */
#define REBIAS      0x3c000000u   /* (127 - 7) << 23 */

#define F32_2P14    0x46800000u   /* 2^14, whose ulp is 2^-9 */

/* rne(|x| * 2^9) for the magnitude bits a of an |x| below 2^-6: adding
 * 2^14, whose ulp is 2^-9 (E4M3's subnormal step), rounds away exactly
 * the bits below 2^-9, ties to even, in one binary32 addition; the result
 * is 2^14 + k * 2^-9 with k <= 8 (8 is 2^-6, the smallest normal, which
 * is code 0x08: right).  Needs binary32 arithmetic without excess
 * precision; otherwise rintf does it.  Outside that range the value is
 * garbage but defined (no conversion), and not selected. */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
static inline int32_t sub_code(uint32_t a)
{
    return (int32_t)(oac_f32_bits(oac_bits_f32(a) + 0x1p14f) - F32_2P14);
}
#else
static inline int32_t sub_code(uint32_t a)
{
    /* Forced to 0 outside the range so the conversion is defined. */
    uint32_t in = a < F32_MIN_NRM ? a : 0u;
    return (int32_t)rintf(oac_bits_f32(in) * 512.0f);
}
#endif

/* One code from the magnitude bits a (sign cleared), all cases computed
 * and selected so the function has no branches. */
static inline uint32_t encode_mag(uint32_t ua)
{
    /* Signed arithmetic throughout: a <= 0x7fffffff, and SSE2 compares
     * only signed lanes. */
    int32_t a = (int32_t)ua;
    /* Normal range: rebias the exponent and round 20 mantissa bits away,
     * ties to even; a carry into the exponent is the next binade.  Below
     * the normal range this is not selected; at or above 448 (infinity
     * and NaN included) it is at least 0x7e. */
    int32_t r = a - (int32_t)REBIAS;
    r += 0x7ffff + ((r >> 20) & 1);
    int32_t c = r >> 20;
    /* Subnormal range: units of 2^-9. */
    int32_t is_sub = -(int32_t)(a < (int32_t)F32_MIN_NRM);   /* all ones or 0 */
    c = (sub_code(ua) & is_sub) | (c & ~is_sub);
    /* Saturate (infinity too) to 0x7e; NaN, saturated too, adds one to
     * 0x7f.  Masks rather than ?: so the vectorizer sees no control
     * flow. */
    c = c > 0x7e ? 0x7e : c;
    c -= -(int32_t)(a > (int32_t)F32_INF);
    return (uint32_t)c;
}

uint8_t oac_fp8_e4m3fn_from_f32(float x)
{
    uint32_t u = oac_f32_bits(x);
    return (uint8_t)(((u >> 24) & 0x80u) | encode_mag(u & 0x7fffffffu));
}

float oac_fp8_e4m3fn_to_f32(uint8_t code)
{
    uint32_t sign = (uint32_t)(code & 0x80u) << 24;
    uint32_t e = (code >> 3) & 15u, m = code & 7u;
    if ((code & 0x7fu) == 0x7fu)
        return oac_bits_f32(sign | 0x7fc00000u);
    if (e == 0) {
        float v = (float)m * 0x1p-9f;
        return sign ? -v : v;
    }
    return oac_bits_f32(sign | ((e + 120u) << 23) | (m << 20));
}

/* Bits of element i of a FLOAT, FLOAT16 or BFLOAT16 source as binary32;
 * a constant type folds away in the specialised copies below. */
static inline uint32_t load_bits(const void *src, int32_t type, size_t i)
{
    if (type == 10)
        return oac_f16_bits_to_f32_bits(((const uint16_t *)src)[i]);
    if (type == 16)
        return (uint32_t)((const uint16_t *)src)[i] << 16;
    uint32_t u;
    memcpy(&u, (const float *)src + i, sizeof u);
    return u;
}

static inline uint8_t code_of_bits(uint32_t u)
{
    return (uint8_t)(((u >> 24) & 0x80u) | encode_mag(u & 0x7fffffffu));
}

/* Straight from a 16-bit source (FLOAT16: 5 exponent bits, 10 mantissa
 * bits, bias 15; BFLOAT16: 8, 7, bias 127), in 16-bit arithmetic, so that
 * twice as many elements fit a vector as through binary32.  Same function
 * as code_of_bits() of the widened value, which the tests check on all
 * 65536 inputs of each type:
 *  - normal range: rebias the exponent to 7 and round the mantissa to 3
 *    bits, ties to even, exactly as encode_mag does on binary32 bits;
 *  - below 2^-6 (E4M3's subnormals, codes 0..8): the code is the number
 *    of thresholds the magnitude reaches, T[j - 1] being the smallest
 *    magnitude that rounds (ties to even) to at least j, that is
 *    (j - 1/2) * 2^-9, or the next value above it for odd j;
 *  - the larger of the two is right everywhere: at or above 2^-6 the
 *    count is 8, the smallest normal code, and below 2^-6 the normal
 *    formula yields at most the subnormal code (within [2^-7, 2^-6) it
 *    rounds 8f where the code rounds 4 + 4f, f in [0, 1); below, 0);
 *  - then saturation to 0x7e, NaN (above the all-ones exponent) 0x7f,
 *    and the sign. */
typedef struct fmt16 {
    int16_t rebias;      /* (bias - 7) << mantissa bits */
    int16_t shift;       /* mantissa bits - 3 */
    int16_t inf;         /* all-ones exponent, zero mantissa */
    uint16_t t[8];       /* the subnormal thresholds */
} fmt16;

static const fmt16 FMT_F16 = {
    0x2000, 7, 0x7c00,
    { 0x1401, 0x1a00, 0x1d01, 0x1f00, 0x2081, 0x2180, 0x2281, 0x2380 }
};
static const fmt16 FMT_BF16 = {
    0x3c00, 4, 0x7f80,
    { 0x3a81, 0x3b40, 0x3ba1, 0x3be0, 0x3c11, 0x3c30, 0x3c51, 0x3c70 }
};

static inline __attribute__((always_inline)) uint8_t
code_of_16(uint16_t h, const fmt16 *f)
{
    int16_t a = (int16_t)(h & 0x7fff);
    /* Below the normal range r is clamped to 0 (code 0, which the count
     * then overrides), so no negative value is shifted; no overflow
     * either: a - rebias + half + 1 stays below 2^15. */
    int16_t r = (int16_t)(a - f->rebias);
    r = r < 0 ? 0 : r;
    r = (int16_t)(r + ((1 << (f->shift - 1)) - 1) + ((r >> f->shift) & 1));
    int16_t c = (int16_t)(r >> f->shift);
    /* spelt out: a loop here would keep the outer loop from vectorizing */
    const uint16_t *t = f->t;
    int16_t sub = (int16_t)((a >= (int16_t)t[0]) + (a >= (int16_t)t[1]) +
                            (a >= (int16_t)t[2]) + (a >= (int16_t)t[3]) +
                            (a >= (int16_t)t[4]) + (a >= (int16_t)t[5]) +
                            (a >= (int16_t)t[6]) + (a >= (int16_t)t[7]));
    c = c > sub ? c : sub;
    c = c < 0x7e ? c : 0x7e;
    c = (int16_t)(c + (a > f->inf));
    return (uint8_t)(((h >> 8) & 0x80) | c);
}

#if OAC_X86_SIMD
/* code_of_16 on 16 elements with AVX2 (GCC vectorizes the C with byte
 * lanes for the count, which costs a pack per threshold). */
static inline OAC_TARGET_AVX2_F16C __m256i
code16_avx2(__m256i h, const fmt16 *f)
{
    const __m256i zero = _mm256_setzero_si256();
    const __m128i shift = _mm_cvtsi32_si128(f->shift);
    __m256i a = _mm256_and_si256(h, _mm256_set1_epi16(0x7fff));
    __m256i r = _mm256_max_epi16(_mm256_sub_epi16(a, _mm256_set1_epi16(f->rebias)),
                                 zero);
    __m256i odd = _mm256_and_si256(_mm256_srl_epi16(r, shift),
                                   _mm256_set1_epi16(1));
    r = _mm256_add_epi16(r, _mm256_add_epi16(
                                odd, _mm256_set1_epi16((int16_t)((1 << (f->shift - 1)) - 1))));
    __m256i c = _mm256_srl_epi16(r, shift);
    /* compares give -1 when true; spelt out, as -O2 does not unroll */
#define REACHED(j) _mm256_cmpgt_epi16(a, _mm256_set1_epi16((int16_t)(f->t[j] - 1)))
    __m256i minus_count = _mm256_add_epi16(
        _mm256_add_epi16(_mm256_add_epi16(REACHED(0), REACHED(1)),
                         _mm256_add_epi16(REACHED(2), REACHED(3))),
        _mm256_add_epi16(_mm256_add_epi16(REACHED(4), REACHED(5)),
                         _mm256_add_epi16(REACHED(6), REACHED(7))));
#undef REACHED
    c = _mm256_max_epi16(c, _mm256_sub_epi16(zero, minus_count));
    c = _mm256_min_epi16(c, _mm256_set1_epi16(0x7e));
    c = _mm256_sub_epi16(c, _mm256_cmpgt_epi16(a, _mm256_set1_epi16(f->inf)));
    return _mm256_or_si256(c, _mm256_and_si256(_mm256_srli_epi16(h, 8),
                                               _mm256_set1_epi16(0x80)));
}

/* BLOCK (32) codes of a 16-bit source. */
static inline OAC_TARGET_AVX2_F16C void
block16_avx2(uint8_t *dst, const uint16_t *h, const fmt16 *f)
{
    __m256i c0 = code16_avx2(_mm256_loadu_si256((const __m256i *)h), f);
    __m256i c1 = code16_avx2(_mm256_loadu_si256((const __m256i *)(h + 16)), f);
    _mm256_storeu_si256((__m256i *)dst, _mm256_permute4x64_epi64(
                                            _mm256_packus_epi16(c0, c1), 0xd8));
}
#endif

/* The encoder, instantiated below per source type and per path.  FLOAT
 * goes through code_of_bits, 16-bit sources through code_of_16 or, with
 * avx2 (only from a function compiled for it), code16_avx2 (the same
 * function), the tail element by element through code_of_bits. */
static inline __attribute__((always_inline)) void
encode(uint8_t *dst, int32_t type, const void *src, size_t n, int avx2)
{
    size_t i = 0;
#if OAC_X86_SIMD
    if (avx2 && type != 1) {
        const fmt16 *f = type == 10 ? &FMT_F16 : &FMT_BF16;
        for (; n - i >= BLOCK; i += BLOCK)
            block16_avx2(dst + i, (const uint16_t *)src + i, f);
    }
#endif
    for (; n - i >= BLOCK; i += BLOCK) {
        /* Codes go to a local block first: stores through uint8_t may
         * alias the source, which would keep the vectorizer away. */
        uint8_t c[BLOCK];
        if (type == 1) {
            for (int k = 0; k < BLOCK; k++)
                c[k] = code_of_bits(load_bits(src, type, i + k));
        } else {
            const uint16_t *h = (const uint16_t *)src + i;
            const fmt16 *f = type == 10 ? &FMT_F16 : &FMT_BF16;
            for (int k = 0; k < BLOCK; k++)
                c[k] = code_of_16(h[k], f);
        }
        memcpy(dst + i, c, sizeof c);
    }
    for (; i < n; i++)
        dst[i] = code_of_bits(load_bits(src, type, i));
}

static void encode_portable(uint8_t *dst, int32_t src_type, const void *src,
                            size_t n)
{
    if (src_type == 10)
        encode(dst, 10, src, n, 0);
    else if (src_type == 16)
        encode(dst, 16, src, n, 0);
    else
        encode(dst, 1, src, n, 0);
}

#if OAC_X86_SIMD
/* The same source compiled for AVX2: twice the lanes, and code16_avx2
 * for 16-bit sources. */
static OAC_TARGET_AVX2_F16C void
encode_avx2(uint8_t *dst, int32_t src_type, const void *src, size_t n)
{
    if (src_type == 10)
        encode(dst, 10, src, n, 1);
    else if (src_type == 16)
        encode(dst, 16, src, n, 1);
    else
        encode(dst, 1, src, n, 1);
}
#endif

void oac_fp8_encode_path(uint8_t *dst, int32_t src_type, const void *src,
                         size_t n, oac_qpath path)
{
#if OAC_X86_SIMD
    if (path != OAC_QPATH_PORTABLE && oac_cpu_avx2_f16c()) {
        encode_avx2(dst, src_type, src, n);
        return;
    }
#endif
    (void)path;
    encode_portable(dst, src_type, src, n);
}

void oac_fp8_encode(uint8_t *dst, int32_t src_type, const void *src, size_t n)
{
    oac_fp8_encode_path(dst, src_type, src, n, OAC_QPATH_AUTO);
}

void oac_fp8_encode_f32(uint8_t *dst, const float *src, size_t n)
{
    oac_fp8_encode_path(dst, 1, src, n, OAC_QPATH_AUTO);
}

void oac_fp8_decode_f32(float *dst, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = oac_fp8_e4m3fn_to_f32(src[i]);
}

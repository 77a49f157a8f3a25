/* quant_fp8.c: the FLOAT8 E4M3FN codec (contract section 1,
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
 *     branch-free, so that GCC's -O2 vectorizer can use SIMD for it.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "half.h"
#include "quant.h"

#define BLOCK 32

#define F32_INF     0x7f800000u
#define F32_448     0x43e00000u   /* 1.75 * 2^8 */
#define F32_MIN_NRM 0x3c800000u   /* 2^-6, E4M3's smallest normal */
#define REBIAS      0x3c000000u   /* (127 - 7) << 23 */

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
static inline float rne(float v) { return (v + 0x1.8p23f) - 0x1.8p23f; }
#else
static inline float rne(float v) { return rintf(v); }
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
     * the normal range this is negative and not selected; at or above 448
     * (infinity and NaN included) it is at least 0x7e. */
    int32_t r = a - (int32_t)REBIAS;
    r += 0x7ffff + ((r >> 20) & 1);
    int32_t c = r >> 20;
    /* Subnormal range: units of 2^-9; a * 512 is exact and below 8, and
     * rounding it to 8 yields 0x08, the smallest normal, correctly.  The
     * input is forced to 0 outside the range so the conversion is
     * always defined. */
    int32_t is_sub = -(int32_t)(a < (int32_t)F32_MIN_NRM);   /* all ones or 0 */
    int32_t sub = (int32_t)rne(oac_bits_f32((uint32_t)(a & is_sub)) * 512.0f);
    c = (sub & is_sub) | (c & ~is_sub);
    /* Saturate (infinity too), then NaN; masks rather than ?: so the
     * vectorizer sees no control flow. */
    c = c > 0x7e ? 0x7e : c;
    int32_t nan = -(int32_t)(a > (int32_t)F32_INF);
    c = (0x7f & nan) | (c & ~nan);
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

static inline __attribute__((always_inline)) void
encode(uint8_t *dst, int32_t type, const void *src, size_t n)
{
    size_t i = 0;
    for (; n - i >= BLOCK; i += BLOCK) {
        /* Codes go to a local block first: stores through uint8_t may
         * alias the source, which would keep the vectorizer away. */
        uint8_t c[BLOCK];
        for (int k = 0; k < BLOCK; k++) {
            uint32_t u = load_bits(src, type, i + k);
            c[k] = (uint8_t)(((u >> 24) & 0x80u) | encode_mag(u & 0x7fffffffu));
        }
        memcpy(dst + i, c, sizeof c);
    }
    for (; i < n; i++)
        dst[i] = oac_fp8_e4m3fn_from_f32(oac_bits_f32(load_bits(src, type, i)));
}

void oac_fp8_encode(uint8_t *dst, int32_t src_type, const void *src, size_t n)
{
    if (src_type == 10)
        encode(dst, 10, src, n);
    else if (src_type == 16)
        encode(dst, 16, src, n);
    else
        encode(dst, 1, src, n);
}

void oac_fp8_encode_f32(uint8_t *dst, const float *src, size_t n)
{
    encode(dst, 1, src, n);
}

void oac_fp8_decode_f32(float *dst, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = oac_fp8_e4m3fn_to_f32(src[i]);
}

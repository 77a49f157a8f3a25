/* quant_linear.c: the linear uniform codec, value = (q - zero_point) *
 * scale (contract section 1, LinearUniformProto): 8-bit codes in INT8 or
 * UINT8, 4-bit codes in INT4 or UINT4 (two per byte, the first element in
 * the low nibble) and 2-bit codes in UINT8 (four per byte, the first in
 * the lowest two bits).
 *
 * Invariants:
 *  1. q = clamp(round_half_even(x / scale) + zero_point, qmin, qmax), the
 *     ONNX QuantizeLinear rule; NaN has no code and maps to zero_point.
 *  2. Writes at a sub-byte offset touch only the bits of the elements
 *     written: edges are read-modify-write, whole bytes in between are
 *     stored directly.
 *  3. quant.c has checked descriptor and bounds; nothing here fails.
 *
 * Speed: the bulk is processed in fixed blocks of BLOCK elements so that
 * GCC's -O2 vectorizer (which refuses loops needing a scalar epilogue)
 * turns the rounding and clamping into SIMD code; bench/bench_quant.c
 * measures it against memcpy.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "half.h"
#include "quant.h"

#define BLOCK 32

/* Round to nearest, ties to even, for |v| <= 2^22: adding 1.5 * 2^23
 * leaves no fraction bits, so the FPU's default rounding does the work.
 * That needs binary32 arithmetic without excess precision. */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
static inline float rne(float v)
{
    return (v + 0x1.8p23f) - 0x1.8p23f;
}
#else
static inline float rne(float v)
{
    return rintf(v);
}
#endif

/* Round and clamp one value to a code offset by -zero_point, in float so a
 * block of these vectorizes.  lo/hi are qmin/qmax - zero_point; clamping
 * before rounding is exact because both bounds are integers. */
static inline float code_f(float x, float scale, float lo, float hi)
{
    float v = x / scale;          /* division, as ONNX specifies, not x*(1/s) */
    v = v == v ? v : 0.0f;        /* NaN: the code of 0.0 */
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    return rne(v);
}

int32_t oac_qlinear_code(const oac_qdesc *d, float x)
{
    float lo = (float)(d->qmin - d->zero_point);
    float hi = (float)(d->qmax - d->zero_point);
    return (int32_t)code_f(x, d->scale, lo, hi) + d->zero_point;
}

float oac_qlinear_value(const oac_qdesc *d, int32_t q)
{
    return (float)(q - d->zero_point) * d->scale;
}

/* Sign-extend or not a raw code of d->bits. */
static inline int32_t widen(const oac_qdesc *d, uint32_t raw)
{
    if (d->qmin < 0) {
        uint32_t m = 1u << (d->bits - 1);
        return (int32_t)((raw ^ m) - m);
    }
    return (int32_t)raw;
}

/* Read-modify-write one code at element index i. */
static inline void put(uint8_t *page, unsigned bits, uint64_t i, int32_t q)
{
    uint64_t bit = i * bits;
    unsigned shift = (unsigned)(bit & 7);
    uint8_t mask = (uint8_t)(((1u << bits) - 1u) << shift);
    uint8_t *b = page + (bit >> 3);
    *b = (uint8_t)((*b & ~mask) | (((uint32_t)q << shift) & mask));
}

static inline uint32_t get(const uint8_t *page, unsigned bits, uint64_t i)
{
    uint64_t bit = i * bits;
    return (uint32_t)(page[bit >> 3] >> (bit & 7)) & ((1u << bits) - 1u);
}

/* Element i of a FLOAT, FLOAT16 or BFLOAT16 source, widened to float.
 * Called with a constant type from the specialised copies below, so the
 * test folds away and the widening vectorizes with the rest. */
static inline float load(const void *src, int32_t type, size_t i)
{
    if (type == 10)
        return oac_f16_to_f32(((const uint16_t *)src)[i]);
    if (type == 16)
        return oac_bf16_to_f32(((const uint16_t *)src)[i]);
    return ((const float *)src)[i];
}

static inline __attribute__((always_inline)) void
encode(const oac_qdesc *d, uint8_t *page, uint64_t at, int32_t type,
       const void *src, size_t n)
{
    const unsigned bits = d->bits;
    const unsigned per_byte = 8 / bits;
    const float scale = d->scale;
    const float lo = (float)(d->qmin - d->zero_point);
    const float hi = (float)(d->qmax - d->zero_point);
    const int32_t zp = d->zero_point;
    size_t i = 0;

    /* Leading elements up to a byte boundary. */
    for (; i < n && (at + i) % per_byte; i++)
        put(page, bits, at + i, oac_qlinear_code(d, load(src, type, i)));
    uint8_t *out = page + (at + i) * bits / 8;
    /* Whole blocks: BLOCK codes fill BLOCK * bits / 8 bytes exactly. */
    for (; n - i >= BLOCK; i += BLOCK, out += BLOCK * bits / 8) {
        int32_t c[BLOCK];
        for (int k = 0; k < BLOCK; k++)
            c[k] = (int32_t)code_f(load(src, type, i + k), scale, lo, hi) + zp;
        if (bits == 8) {
            for (int k = 0; k < BLOCK; k++)
                out[k] = (uint8_t)c[k];
        } else if (bits == 4) {
            for (int k = 0; k < BLOCK / 2; k++)
                out[k] = (uint8_t)((c[2 * k] & 15) | (c[2 * k + 1] & 15) << 4);
        } else {
            for (int k = 0; k < BLOCK / 4; k++)
                out[k] = (uint8_t)((c[4 * k] & 3) | (c[4 * k + 1] & 3) << 2 |
                                   (c[4 * k + 2] & 3) << 4 |
                                   (c[4 * k + 3] & 3) << 6);
        }
    }
    /* The tail, element by element (may end inside a byte). */
    for (; i < n; i++)
        put(page, bits, at + i, oac_qlinear_code(d, load(src, type, i)));
}

void oac_qlinear_encode(const oac_qdesc *d, uint8_t *page, uint64_t at,
                        int32_t src_type, const void *src, size_t n)
{
    if (src_type == 10)
        encode(d, page, at, 10, src, n);
    else if (src_type == 16)
        encode(d, page, at, 16, src, n);
    else
        encode(d, page, at, 1, src, n);
}

void oac_qlinear_decode_f32(const oac_qdesc *d, const uint8_t *page,
                            uint64_t at, float *dst, size_t n)
{
    const float scale = d->scale;
    const int32_t zp = d->zero_point;
    if (d->bits == 8) {
        const uint8_t *p = page + at;
        if (d->qmin < 0)
            for (size_t i = 0; i < n; i++)
                dst[i] = (float)((int32_t)(int8_t)p[i] - zp) * scale;
        else
            for (size_t i = 0; i < n; i++)
                dst[i] = (float)((int32_t)p[i] - zp) * scale;
        return;
    }
    for (size_t i = 0; i < n; i++)
        dst[i] = (float)(widen(d, get(page, d->bits, at + i)) - zp) * scale;
}

void oac_qlinear_fill(const oac_qdesc *d, uint8_t *page, uint64_t at,
                      size_t n, int32_t q)
{
    const unsigned bits = d->bits, per_byte = 8 / bits;
    size_t i = 0;
    for (; i < n && (at + i) % per_byte; i++)
        put(page, bits, at + i, q);
    /* Whole bytes hold per_byte copies of the code. */
    uint8_t pattern = 0;
    for (unsigned k = 0; k < per_byte; k++)
        pattern |= (uint8_t)(((uint32_t)q & ((1u << bits) - 1u)) << (k * bits));
    size_t whole = (n - i) / per_byte;
    memset(page + (at + i) * bits / 8, pattern, whole);
    for (i += whole * per_byte; i < n; i++)
        put(page, bits, at + i, q);
}

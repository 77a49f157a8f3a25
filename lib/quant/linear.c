/* quant/linear.c: the linear uniform codec, value = (q - zero_point) *
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
 *  3. quant/quant.c has checked descriptor and bounds; nothing here fails.
 *
 * Speed: the bulk is processed in fixed blocks of BLOCK elements, in L1,
 * so that GCC's -O2 vectorizer (which refuses loops needing a scalar
 * epilogue) turns division, rounding and clamping into SIMD code, and
 * packing is shifts within words rather than per-element branches.  The
 * encoder is compiled twice: portable, and for AVX2 with F16C widening
 * (VCVTPH2PS) and an AVX2 packer, chosen at run time (oac_qpath,
 * quant/quant.h).  Both compute code_f() of the same floats, so their codes
 * are identical; the tests compare them on all 65536 FLOAT16 and
 * BFLOAT16 inputs.  bench/bench_quant.c measures them against memcpy.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "half.h"
#include "quant/quant.h"

#define BLOCK 64

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

/* Element i of a FLOAT, FLOAT16 or BFLOAT16 source, widened to float
 * (the unaligned head and the tail). */
static inline float load(const void *src, int32_t type, size_t i)
{
    if (type == 10)
        return oac_f16_to_f32(((const uint16_t *)src)[i]);
    if (type == 16)
        return oac_bf16_to_f32(((const uint16_t *)src)[i]);
    return ((const float *)src)[i];
}

#if OAC_X86_SIMD
/* BLOCK FLOAT16 widened by VCVTPH2PS, 8 at a time, into an L1 buffer. */
static inline OAC_TARGET_AVX2_F16C void
widen_block_f16c(float *buf, const uint16_t *s)
{
    for (int k = 0; k < BLOCK; k += 8)
        oac_f16_to_f32_x8_f16c(buf + k, s + k);
}
#endif

/* Codes of BLOCK elements of src from element i (called with a constant
 * type, so load() folds).  Division, clamping and NaN as in code_f; the
 * rounding is folded into the conversion: for |v| <= 2^22, v + 1.5 * 2^23
 * lies in [2^23, 2^24), where the ulp is 1, so the addition rounds v half
 * to even and the low bits of the sum are 0x4b400000 + rne(v): one integer
 * subtraction (with the zero point) then yields the code.  Without
 * binary32 evaluation, code_f as is. */
static inline __attribute__((always_inline)) void
codes(int32_t *c, const void *src, int32_t type, size_t i, float scale,
      float lo, float hi, int32_t zp)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    const int32_t bias = (int32_t)0x4b400000 - zp;
    for (int k = 0; k < BLOCK; k++) {
        float v = load(src, type, i + k) / scale;
        v = v == v ? v : 0.0f;
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
        c[k] = (int32_t)oac_f32_bits(v + 0x1.8p23f) - bias;
    }
#else
    for (int k = 0; k < BLOCK; k++)
        c[k] = (int32_t)code_f(load(src, type, i + k), scale, lo, hi) + zp;
#endif
}

/* BLOCK codes packed into BLOCK * bits / 8 bytes at out, the first element
 * in the lowest bits.  Codes are first narrowed to bytes; on a
 * little-endian machine 2 (4) of those are then read as one 16-bit
 * (32-bit) word and their low bits gathered with shifts, which vectorize,
 * rather than with strided byte accesses, which do not. */
static inline __attribute__((always_inline)) void
pack(uint8_t *out, const int32_t *c, unsigned bits)
{
    uint8_t b[BLOCK];
    for (int k = 0; k < BLOCK; k++)
        b[k] = (uint8_t)c[k];
    if (bits == 8) {
        memcpy(out, b, BLOCK);
        return;
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint8_t o[BLOCK / 2];
    if (bits == 4) {
        uint16_t w[BLOCK / 2];
        memcpy(w, b, sizeof w);
        for (int k = 0; k < BLOCK / 2; k++)
            o[k] = (uint8_t)((w[k] & 0x0fu) | ((w[k] >> 4) & 0xf0u));
        memcpy(out, o, BLOCK / 2);
    } else {
        uint32_t w[BLOCK / 4];
        memcpy(w, b, sizeof w);
        for (int k = 0; k < BLOCK / 4; k++)
            o[k] = (uint8_t)((w[k] & 0x03u) | ((w[k] >> 6) & 0x0cu) |
                             ((w[k] >> 12) & 0x30u) | ((w[k] >> 18) & 0xc0u));
        memcpy(out, o, BLOCK / 4);
    }
#else
    if (bits == 4) {
        for (int k = 0; k < BLOCK / 2; k++)
            out[k] = (uint8_t)((b[2 * k] & 15) | (b[2 * k + 1] & 15) << 4);
    } else {
        for (int k = 0; k < BLOCK / 4; k++)
            out[k] = (uint8_t)((b[4 * k] & 3) | (b[4 * k + 1] & 3) << 2 |
                               (b[4 * k + 2] & 3) << 4 |
                               (b[4 * k + 3] & 3) << 6);
    }
#endif
}

#if OAC_X86_SIMD
/* pack() with AVX2: 32 codes in 4 vectors, masked to bits, become 32
 * bytes in element order (the two packs work within 128-bit halves; the
 * permutation puts the 4-byte groups back in order). */
static inline OAC_TARGET_AVX2_F16C __m256i
bytes32_avx2(const int32_t *c, __m256i mask)
{
    __m256i v0 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)c), mask);
    __m256i v1 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(c + 8)), mask);
    __m256i v2 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(c + 16)), mask);
    __m256i v3 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(c + 24)), mask);
    __m256i b = _mm256_packus_epi16(_mm256_packus_epi32(v0, v1),
                                    _mm256_packus_epi32(v2, v3));
    return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* Bytes of 2 (4) codes gathered into one with shifts inside 16-bit
 * (32-bit) lanes, then narrowed; same layout as pack(). */
static inline OAC_TARGET_AVX2_F16C void
pack_avx2(uint8_t *out, const int32_t *c, unsigned bits)
{
    __m256i mask = _mm256_set1_epi32((1 << bits) - 1);
    __m256i b0 = bytes32_avx2(c, mask), b1 = bytes32_avx2(c + 32, mask);
    if (bits == 8) {
        _mm256_storeu_si256((__m256i *)out, b0);
        _mm256_storeu_si256((__m256i *)(out + 32), b1);
    } else if (bits == 4) {
        /* 16-bit lane: lo | hi << 8 -> lo | hi << 4 in its low byte */
        __m256i lo8 = _mm256_set1_epi16(0xff);
        __m256i t0 = _mm256_and_si256(_mm256_or_si256(b0, _mm256_srli_epi16(b0, 4)), lo8);
        __m256i t1 = _mm256_and_si256(_mm256_or_si256(b1, _mm256_srli_epi16(b1, 4)), lo8);
        __m256i o = _mm256_permute4x64_epi64(_mm256_packus_epi16(t0, t1), 0xd8);
        _mm256_storeu_si256((__m256i *)out, o);
    } else {
        /* 32-bit lane: b0 | b1 << 8 | b2 << 16 | b3 << 24 -> b0 | b1 << 2
         * | b2 << 4 | b3 << 6 in its low byte */
        __m256i lo8 = _mm256_set1_epi32(0xff);
        __m256i t0 = _mm256_or_si256(b0, _mm256_srli_epi32(b0, 6));
        __m256i t1 = _mm256_or_si256(b1, _mm256_srli_epi32(b1, 6));
        t0 = _mm256_and_si256(_mm256_or_si256(t0, _mm256_srli_epi32(t0, 12)), lo8);
        t1 = _mm256_and_si256(_mm256_or_si256(t1, _mm256_srli_epi32(t1, 12)), lo8);
        __m256i w = _mm256_packus_epi32(t0, t1);          /* 16 words */
        __m256i o = _mm256_packus_epi16(w, w);
        o = _mm256_permutevar8x32_epi32(o, _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0));
        _mm_storeu_si128((__m128i *)out, _mm256_castsi256_si128(o));
    }
}
#endif

/* The encoder, instantiated below per source type and per path (f16c:
 * FLOAT16 is widened by VCVTPH2PS into an L1 block first; only from a
 * function compiled for it).  Otherwise the widening is fused into the
 * code loop: a separate widening loop tends to become narrow stores read
 * back by wide loads, which stall store forwarding.  Every path computes
 * the codes of the same floats (widening is exact) by the same rule:
 * identical codes. */
static inline __attribute__((always_inline)) void
encode(const oac_qdesc *d, uint8_t *page, uint64_t at, int32_t type,
       const void *src, size_t n, int f16c)
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
    /* Whole blocks: BLOCK codes fill BLOCK * bits / 8 bytes exactly.
     * Codes go to a local block first: stores through uint8_t may alias
     * the source, which would keep the vectorizer away. */
    for (; n - i >= BLOCK; i += BLOCK, out += BLOCK * bits / 8) {
        int32_t c[BLOCK];
#if OAC_X86_SIMD
        if (f16c) {
            if (type == 10) {
                float buf[BLOCK];
                widen_block_f16c(buf, (const uint16_t *)src + i);
                codes(c, buf, 1, 0, scale, lo, hi, zp);
            } else {
                codes(c, src, type, i, scale, lo, hi, zp);
            }
            pack_avx2(out, c, bits);
            continue;
        }
#endif
        codes(c, src, type, i, scale, lo, hi, zp);
        pack(out, c, bits);
    }
    /* The tail, element by element (may end inside a byte). */
    for (; i < n; i++)
        put(page, bits, at + i, oac_qlinear_code(d, load(src, type, i)));
}

static void encode_portable(const oac_qdesc *d, uint8_t *page, uint64_t at,
                            int32_t src_type, const void *src, size_t n)
{
    if (src_type == 10)
        encode(d, page, at, 10, src, n, 0);
    else if (src_type == 16)
        encode(d, page, at, 16, src, n, 0);
    else
        encode(d, page, at, 1, src, n, 0);
}

#if OAC_X86_SIMD
/* The same source compiled for AVX2 (8 lanes) with F16C widening. */
static OAC_TARGET_AVX2_F16C void
encode_avx2(const oac_qdesc *d, uint8_t *page, uint64_t at, int32_t src_type,
            const void *src, size_t n)
{
    if (src_type == 10)
        encode(d, page, at, 10, src, n, 1);
    else if (src_type == 16)
        encode(d, page, at, 16, src, n, 1);
    else
        encode(d, page, at, 1, src, n, 1);
}
#endif

void oac_qlinear_encode_path(const oac_qdesc *d, uint8_t *page, uint64_t at,
                             int32_t src_type, const void *src, size_t n,
                             oac_qpath path)
{
#if OAC_X86_SIMD
    if (path != OAC_QPATH_PORTABLE && oac_cpu_avx2_f16c()) {
        encode_avx2(d, page, at, src_type, src, n);
        return;
    }
#endif
    (void)path;
    encode_portable(d, page, at, src_type, src, n);
}

void oac_qlinear_encode(const oac_qdesc *d, uint8_t *page, uint64_t at,
                        int32_t src_type, const void *src, size_t n)
{
    oac_qlinear_encode_path(d, page, at, src_type, src, n, OAC_QPATH_AUTO);
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

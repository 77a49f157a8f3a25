/* quant/fpany.c: the floating-point codec at any widths (contract section
 * 11: FloatingPointUniformProto with sign/exponent/mantissa bits up to 16
 * in all; section 1's packing and rounding).
 *
 * Owns oac_qfloat_*: the code of a value and the value of a code for a
 * validated OAC_QK_FLOAT descriptor (quant/quant.c validates), and the
 * bulk encoder/decoder over packed pages.  FLOAT8 E4M3FN keeps its own
 * fast codec (quant/fp8.c); every other width comes here, IEEE half
 * (1/5/10, bias 15, has_inf, has_nan) among them.
 *
 * The format: a code is [sign][exponent field][mantissa], sign_bits 0 or
 * 1, exponent_bits >= 1.  A field e > 0 is (1 + m / 2^M) * 2^(e - bias);
 * field 0 is subnormal, m * 2^(1 - bias - M).  Special codes:
 *  - has_inf and has_nan (IEEE): the all-ones field is infinity (m == 0)
 *    or NaN (m != 0);
 *  - has_nan only (the "FN" formats): the all-ones magnitude is NaN, every
 *    other code finite;
 *  - neither: every code finite.
 * (has_inf without has_nan is refused by quant/quant.c.)
 *
 * Invariants:
 *  1. Encoding rounds half to even, once: the scaled value is exact in
 *     binary64 (a binary32 times a power of two within range) and rounded
 *     by nearbyint in the default rounding mode.  Finite values beyond the
 *     largest finite magnitude saturate to it; infinity encodes as
 *     infinity when the format has one, else saturates too; NaN encodes to
 *     the format's NaN of its sign (the quiet NaN m = 100..0 for IEEE), or
 *     to +0 in a format without NaN.  A format without a sign bit encodes
 *     every negative value as +0.
 *  2. Decoding is exact: quant/quant.c accepts only formats whose every
 *     finite value is a binary32 value (validated range), so
 *     decode(encode(x)) == x for each x the format holds; for IEEE half and
 *     FLOAT16 data every value round-trips bit for bit, -0 included.
 *  3. Codes are packed little-endian, the first element in the lowest
 *     bits; with packed_count/packed_bytes, element e starts at bit
 *     (e / count) * bytes * 8 + (e % count) * bits.  Writes touch only the
 *     element's own bits.  Callers (quant/quant.c) check every range.
 */
#include <math.h>
#include <string.h>

#include "half.h"
#include "quant/quant.h"

enum { T_FLOAT = 1, T_FLOAT16 = 10, T_BFLOAT16 = 16 };

static inline uint32_t mag_bits(const oac_qdesc *d)
{
    return d->fp_exp + d->fp_man;
}

/* The all-ones exponent field's first code (infinity in IEEE formats). */
static inline uint32_t top_field_code(const oac_qdesc *d)
{
    return ((1u << d->fp_exp) - 1u) << d->fp_man;
}

uint32_t oac_qfloat_max_code(const oac_qdesc *d)
{
    uint32_t all = (1u << mag_bits(d)) - 1u;
    if (d->fp_inf)                  /* IEEE: the top field is reserved */
        return top_field_code(d) - 1u;
    if (d->fp_nan)                  /* FN: only the all-ones code */
        return all - 1u;
    return all;
}

static inline uint32_t nan_code(const oac_qdesc *d)
{
    if (d->fp_inf)
        return top_field_code(d) | (1u << (d->fp_man - 1));
    return (1u << mag_bits(d)) - 1u;
}

uint32_t oac_qfloat_code(const oac_qdesc *d, float xf)
{
    double x = xf;
    uint32_t sign = 0;
    if (isnan(x)) {
        if (!d->fp_nan)
            return 0;
        sign = d->fp_sign && signbit(x) ? 1u << mag_bits(d) : 0;
        return sign | nan_code(d);
    }
    if (signbit(x)) {
        if (!d->fp_sign)
            return 0;
        sign = 1u << mag_bits(d);
        x = -x;
    }
    uint32_t max = oac_qfloat_max_code(d);
    if (isinf(x))
        return sign | (d->fp_inf ? top_field_code(d) : max);
    if (x == 0.0)
        return sign;
    int emin = 1 - d->fp_bias;
    uint64_t mag;
    if (x < ldexp(1.0, emin)) {
        /* subnormal: units of 2^(emin - M); 2^M is the smallest normal */
        mag = (uint64_t)nearbyint(ldexp(x, (int)d->fp_man - emin));
    } else {
        int ex;
        (void)frexp(x, &ex);
        int64_t e = (int64_t)ex - 1;                 /* x in [2^e, 2^(e+1)) */
        int64_t field = e + d->fp_bias;
        if (field > (int64_t)(1u << d->fp_exp))      /* far beyond the top */
            return sign | max;
        uint64_t q = (uint64_t)nearbyint(ldexp(x, (int)d->fp_man - (int)e));
        /* q in [2^M, 2^(M+1)]: 2^(M+1) carries into the next field */
        mag = ((uint64_t)field << d->fp_man) + (q - ((uint64_t)1 << d->fp_man));
    }
    if (mag > max)
        mag = max;
    return sign | (uint32_t)mag;
}

float oac_qfloat_value(const oac_qdesc *d, uint32_t code)
{
    uint32_t mb = mag_bits(d);
    bool neg = d->fp_sign && ((code >> mb) & 1u);
    uint32_t mag = code & ((1u << mb) - 1u);
    uint32_t field = mag >> d->fp_man, m = mag & ((1u << d->fp_man) - 1u);
    float v;
    if (d->fp_nan && d->fp_inf && field == (1u << d->fp_exp) - 1u)
        v = m ? NAN : INFINITY;
    else if (d->fp_nan && !d->fp_inf && mag == (1u << mb) - 1u)
        v = NAN;
    else if (field == 0)
        v = (float)ldexp((double)m, 1 - d->fp_bias - (int)d->fp_man);
    else
        v = (float)ldexp((double)(m + (1u << d->fp_man)),
                         (int)field - d->fp_bias - (int)d->fp_man);
    return neg ? -v : v;
}

/* First bit of element e. */
static inline uint64_t bit_of(const oac_qdesc *d, uint64_t e)
{
    if (d->packed_count)
        return (e / d->packed_count) * d->packed_bytes * 8u +
               (e % d->packed_count) * d->bits;
    return e * d->bits;
}

static void put_code(uint8_t *page, uint64_t bit, unsigned bits, uint32_t code)
{
    if (bits == 8 && !(bit & 7)) {
        page[bit >> 3] = (uint8_t)code;
        return;
    }
    if (bits == 16 && !(bit & 7)) {
        page[bit >> 3] = (uint8_t)code;
        page[(bit >> 3) + 1] = (uint8_t)(code >> 8);
        return;
    }
    for (unsigned k = 0; k < bits;) {
        uint64_t byte = (bit + k) >> 3;
        unsigned off = (unsigned)((bit + k) & 7), take = 8 - off;
        if (take > bits - k)
            take = bits - k;
        uint8_t mask = (uint8_t)(((1u << take) - 1u) << off);
        page[byte] = (uint8_t)((page[byte] & ~mask) |
                               (((code >> k) << off) & mask));
        k += take;
    }
}

static uint32_t get_code(const uint8_t *page, uint64_t bit, unsigned bits)
{
    if (bits == 16 && !(bit & 7))
        return (uint32_t)page[bit >> 3] | (uint32_t)page[(bit >> 3) + 1] << 8;
    uint32_t code = 0;
    for (unsigned k = 0; k < bits;) {
        uint64_t byte = (bit + k) >> 3;
        unsigned off = (unsigned)((bit + k) & 7), take = 8 - off;
        if (take > bits - k)
            take = bits - k;
        code |= (uint32_t)((page[byte] >> off) & ((1u << take) - 1u)) << k;
        k += take;
    }
    return code;
}

static inline float src_at(int32_t t, const void *src, size_t i)
{
    if (t == T_FLOAT)
        return ((const float *)src)[i];
    uint16_t h = ((const uint16_t *)src)[i];
    return t == T_FLOAT16 ? oac_f16_to_f32(h) : oac_bf16_to_f32(h);
}

void oac_qfloat_encode(const oac_qdesc *d, uint8_t *page, uint64_t at,
                       int32_t src_type, const void *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put_code(page, bit_of(d, at + i), d->bits,
                 oac_qfloat_code(d, src_at(src_type, src, i)));
}

void oac_qfloat_decode_f32(const oac_qdesc *d, const uint8_t *page,
                           uint64_t at, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = oac_qfloat_value(d, get_code(page, bit_of(d, at + i), d->bits));
}

/* IEEE half pages decoded to FLOAT16: the codes are the elements. */
bool oac_qfloat_is_half(const oac_qdesc *d)
{
    return d->kind == OAC_QK_FLOAT && d->fp_sign == 1 && d->fp_exp == 5 &&
           d->fp_man == 10 && d->fp_bias == 15 && d->fp_inf && d->fp_nan &&
           !d->packed_count;
}

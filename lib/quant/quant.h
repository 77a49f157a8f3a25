/* quant/quant.h: quantized page formats (contract section 1).
 *
 * Owns the validated descriptor of one QuantizationProto (oac_qdesc), the
 * page byte size rule, and the codec entry points that quantize FLOAT,
 * FLOAT16 or BFLOAT16 elements into a packed page at any element offset and
 * dequantize them back.  quant/quant.c validates and dispatches; each codec lives
 * in its own file: quant/linear.c (INT8/UINT8, INT4/UINT4, 2-bit in UINT8),
 * quant/fp8.c (FLOAT8 E4M3FN, the fast path) and quant/fpany.c (floating
 * point at any sign/exponent/mantissa widths up to 16 bits, IEEE half
 * among them).
 *
 * Invariants:
 *  1. A descriptor exists only for a declaration that passed
 *     oac_qdesc_from_proto; codecs never re-check it and never see an
 *     unsupported format.
 *  2. Codes narrower than a byte are packed little-endian, the first
 *     element in the lowest bits; an element offset need not fall on a byte
 *     boundary, and the bits of neighbouring elements are never disturbed.
 *  3. Encoding rounds half to even and saturates to the storage range
 *     (FP8: +-448, no infinity; other floating-point formats to their
 *     largest finite value, infinity kept where the format has one).  NaN encodes to the code of 0.0 for linear
 *     formats (they have no NaN) and to the FP8 NaN of its sign.
 *  4. Page sizes are computed with overflow checks; callers pass byte
 *     lengths and the codecs check every access against them.
 */
#ifndef OAC_QUANT_H
#define OAC_QUANT_H

#include "oac_int.h"

typedef enum oac_qkind {
    OAC_QK_LINEAR = 1,   /* value = (q - zero_point) * scale */
    OAC_QK_FP8 = 2,      /* FLOAT8 E4M3FN codes */
    OAC_QK_FLOAT = 3     /* any other floating point format (fp_* below) */
} oac_qkind;

typedef struct oac_qdesc {
    oac_qkind kind;
    int32_t data_type;     /* decoded type: FLOAT, FLOAT16 or BFLOAT16 */
    int32_t storage_type;  /* INT8, UINT8, INT4, UINT4; FLOAT8E4M3FN for FP8 */
    unsigned bits;         /* bits per code: 8, 4 or 2 */
    int32_t qmin, qmax;    /* code range of the storage */
    int32_t zero_point;    /* within [qmin, qmax] */
    float scale;           /* finite, > 0 */
    uint32_t packed_count; /* FP grouping: 0, or codes per group */
    uint32_t packed_bytes; /* FP grouping: 0, or bytes per group */
    /* OAC_QK_FLOAT: widths (sign 0 or 1, exponent >= 1, bits = the sum,
     * at most 16), bias, specials (quant/fpany.c has the format). */
    unsigned fp_sign, fp_exp, fp_man;
    int fp_bias;
    bool fp_inf, fp_nan;
    const char *name;      /* borrowed QuantizationProto.name, or NULL */
} oac_qdesc;

/* Validate a declaration.  Returns true and fills *out when it is a
 * format this version supports; otherwise false, with the reason ("bits 4
 * do not match storage type INT8", ...) written to why for a
 * page-type-invalid message, and *out unspecified.  A declaration with
 * symmetric set has the zero point of the storage's middle: 0 for signed
 * storage, 2^(bits-1) for unsigned; a zero_point that disagrees is
 * invalid. */
bool oac_qdesc_from_proto(oac_qdesc *out, const Onnx__QuantizationProto *q,
                          char *why, size_t why_len);

/* "INT4_PAGE" or, for an unnamed declaration, "#<index>" written into buf. */
const char *oac_qdesc_label(const Onnx__QuantizationProto *q, long index,
                            char *buf, size_t len);

/* Bytes of a page of n elements: ceil(n * bits / 8), or for FP8 with
 * packed_count/packed_bytes ceil(n / packed_count) * packed_bytes.  False
 * on overflow. */
bool oac_qdesc_page_bytes(const oac_qdesc *d, uint64_t n, uint64_t *out);

/* Quantize n elements of src (of src_type: FLOAT, FLOAT16 or BFLOAT16,
 * little-endian host order) into the page at element offset `at`.
 * page_len is the page's byte length.  OAC_EINVAL (message on ctx) for an
 * unsupported src_type or an access outside the page. */
int oac_quantize(oac_ctx *ctx, const oac_qdesc *d, uint8_t *page,
                 size_t page_len, uint64_t at, int32_t src_type,
                 const void *src, size_t n);

/* Dequantize n elements from element offset `at` of the page into dst of
 * dst_type (FLOAT, FLOAT16 or BFLOAT16). */
int oac_dequantize(oac_ctx *ctx, const oac_qdesc *d, const uint8_t *page,
                   size_t page_len, uint64_t at, int32_t dst_type,
                   void *dst, size_t n);

/* Fill n elements from offset `at` with the code of 0.0 (a new page). */
int oac_quant_fill_zero(oac_ctx *ctx, const oac_qdesc *d, uint8_t *page,
                        size_t page_len, uint64_t at, size_t n);

/* ---- codecs: called by quant/quant.c on validated descriptors and checked
 * ranges; element offsets are code indices (FP8 grouping already
 * applied by the caller). ---------------------------------------------- */

/* Which implementation of the bulk encoders runs.  AUTO picks AVX2 + F16C
 * when the CPU has them (oac_cpu_avx2_f16c) and the portable C otherwise;
 * the explicit values exist so tests can hold both to the same codes.
 * Every path computes the same function, bit for bit. */
typedef enum oac_qpath {
    OAC_QPATH_AUTO = 0,
    OAC_QPATH_PORTABLE = 1,
    OAC_QPATH_AVX2_F16C = 2   /* falls back to PORTABLE when unavailable */
} oac_qpath;

/* True when path p can run here (AUTO and PORTABLE always can). */
bool oac_qpath_available(oac_qpath p);

/* quant/linear.c */
int32_t oac_qlinear_code(const oac_qdesc *d, float x);
float oac_qlinear_value(const oac_qdesc *d, int32_t q);
/* src_type FLOAT, FLOAT16 or BFLOAT16; the widening is fused in. */
void oac_qlinear_encode(const oac_qdesc *d, uint8_t *page, uint64_t at,
                        int32_t src_type, const void *src, size_t n);
void oac_qlinear_encode_path(const oac_qdesc *d, uint8_t *page, uint64_t at,
                             int32_t src_type, const void *src, size_t n,
                             oac_qpath path);
void oac_qlinear_decode_f32(const oac_qdesc *d, const uint8_t *page,
                            uint64_t at, float *dst, size_t n);
void oac_qlinear_fill(const oac_qdesc *d, uint8_t *page, uint64_t at,
                      size_t n, int32_t q);

/* quant/fp8.c: FLOAT8 E4M3FN */
uint8_t oac_fp8_e4m3fn_from_f32(float x);
float oac_fp8_e4m3fn_to_f32(uint8_t code);
void oac_fp8_encode(uint8_t *dst, int32_t src_type, const void *src, size_t n);
void oac_fp8_encode_path(uint8_t *dst, int32_t src_type, const void *src,
                         size_t n, oac_qpath path);
void oac_fp8_encode_f32(uint8_t *dst, const float *src, size_t n);
void oac_fp8_decode_f32(float *dst, const uint8_t *src, size_t n);

/* quant/fpany.c: OAC_QK_FLOAT descriptors */
uint32_t oac_qfloat_code(const oac_qdesc *d, float x);
float oac_qfloat_value(const oac_qdesc *d, uint32_t code);
/* The largest finite magnitude's code (sign bit clear). */
uint32_t oac_qfloat_max_code(const oac_qdesc *d);
void oac_qfloat_encode(const oac_qdesc *d, uint8_t *page, uint64_t at,
                       int32_t src_type, const void *src, size_t n);
void oac_qfloat_decode_f32(const oac_qdesc *d, const uint8_t *page,
                           uint64_t at, float *dst, size_t n);
/* IEEE half (1/5/10, bias 15, has_inf, has_nan, ungrouped). */
bool oac_qfloat_is_half(const oac_qdesc *d);

#endif /* OAC_QUANT_H */

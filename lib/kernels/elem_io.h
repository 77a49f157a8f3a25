/* kernels/elem_io.h: the runtime's element types, as kernels read and write
 * them (contract section 8, "Element types"; section 5).
 *
 * Owns: which element types a kernel may compute on (type masks), reading
 * element i of a tensor as double / float / int64 and storing one back,
 * the refusals every kernel shares (an unimplemented element type is
 * unsupported-operator naming the type and the value; a run-time refusal
 * of the inputs is kernel-error naming the node and the value), and numpy
 * broadcasting over up to OAC_BC_MAX operands.
 *
 * Contract: section 8 ("Element types", kernel-error), section 5.
 *
 * Invariants:
 *  1. FLOAT16 and BFLOAT16 are widened exactly (half.h) and computed in
 *     float or wider; a store rounds to float first and then to the
 *     16-bit type to nearest, ties to even (half.h invariant 1).  A result
 *     of +, -, *, / or sqrt computed in double and stored this way equals
 *     the one computed in float (double has more than 2 * 24 + 2 bits).
 *  2. DOUBLE is computed in double; FLOAT is stored as (float) of the
 *     double result.
 *  3. Integer stores keep the low bits (two's complement wrap, as ONNX
 *     Cast between integers); BOOL stores 0 or 1.  No accessor has
 *     undefined behaviour for any bit pattern of its type.
 *  4. The accessors never look at a type outside the masks they are
 *     documented for: callers check the type first (oac_kin_typed).
 *  5. Nothing here allocates.
 *  6. Products of dims that a kernel computes before it knows the tensor
 *     is not empty wrap (oac_ek_strides, unsigned counts): a tensor of
 *     numel 0 may have dims whose product overflows ([0, 2^62, 4]), and
 *     every kernel returns before indexing such a tensor.
 */
#ifndef OAC_KERNEL_ELEM_H
#define OAC_KERNEL_ELEM_H

#include <stdarg.h>

#include "half.h"
#include "run/kernel_api.h"

/* ---- type masks ------------------------------------------------------ */

#define OAC_EKM(t) ((uint32_t)1 << (t))
/* The float types kernels compute on (contract 8). */
#define OAC_EKM_FLOAT (OAC_EKM(OAC_T_FLOAT) | OAC_EKM(OAC_T_FLOAT16) | \
                       OAC_EKM(OAC_T_BFLOAT16) | OAC_EKM(OAC_T_DOUBLE))
/* The integer types of shape arithmetic (Add, Mul, Range, ...). */
#define OAC_EKM_INT (OAC_EKM(OAC_T_INT32) | OAC_EKM(OAC_T_INT64))
/* Every integer type whose values fit in int64 (compares, Where, Cast). */
#define OAC_EKM_ANYINT (OAC_EKM_INT | OAC_EKM(OAC_T_INT8) | OAC_EKM(OAC_T_UINT8) | \
                        OAC_EKM(OAC_T_INT16) | OAC_EKM(OAC_T_UINT16) | \
                        OAC_EKM(OAC_T_UINT32))
#define OAC_EKM_BOOL OAC_EKM(OAC_T_BOOL)
/* FLOAT, DOUBLE, the 16-bit floats, INT32 and INT64. */
#define OAC_EKM_NUM (OAC_EKM_FLOAT | OAC_EKM_INT)

static inline bool oac_ek_in(int32_t t, uint32_t mask)
{
    return t > 0 && t < 32 && (mask & OAC_EKM(t));
}

static inline bool oac_ek_is_float(int32_t t)
{
    return oac_ek_in(t, OAC_EKM_FLOAT);
}

/* ---- element access ---------------------------------------------------- */

/* Element i of a float-type array (OAC_EKM_FLOAT) as double, exactly. */
static inline double oac_ek_getd(int32_t t, const void *p, uint64_t i)
{
    switch (t) {
    case OAC_T_FLOAT: return ((const float *)p)[i];
    case OAC_T_DOUBLE: return ((const double *)p)[i];
    case OAC_T_FLOAT16: return oac_f16_to_f32(((const uint16_t *)p)[i]);
    default: return oac_bf16_to_f32(((const uint16_t *)p)[i]);   /* BFLOAT16 */
    }
}

/* Element i as float (DOUBLE narrowed to nearest). */
static inline float oac_ek_getf(int32_t t, const void *p, uint64_t i)
{
    switch (t) {
    case OAC_T_FLOAT: return ((const float *)p)[i];
    case OAC_T_DOUBLE: return (float)((const double *)p)[i];
    case OAC_T_FLOAT16: return oac_f16_to_f32(((const uint16_t *)p)[i]);
    default: return oac_bf16_to_f32(((const uint16_t *)p)[i]);
    }
}

/* Store v into element i of a float-type array (invariants 1, 2). */
static inline void oac_ek_setf(int32_t t, void *p, uint64_t i, float v)
{
    switch (t) {
    case OAC_T_FLOAT: ((float *)p)[i] = v; return;
    case OAC_T_DOUBLE: ((double *)p)[i] = v; return;
    case OAC_T_FLOAT16: ((uint16_t *)p)[i] = oac_f32_to_f16(v); return;
    default: ((uint16_t *)p)[i] = oac_f32_to_bf16(v); return;
    }
}

static inline void oac_ek_setd(int32_t t, void *p, uint64_t i, double v)
{
    if (t == OAC_T_DOUBLE)
        ((double *)p)[i] = v;
    else
        oac_ek_setf(t, p, i, (float)v);
}

/* Element i of an integer or BOOL array (OAC_EKM_ANYINT, BOOL, INT64,
 * and UINT64 as its bits). */
static inline int64_t oac_ek_geti(int32_t t, const void *p, uint64_t i)
{
    switch (t) {
    case OAC_T_INT64: return ((const int64_t *)p)[i];
    case OAC_T_INT32: return ((const int32_t *)p)[i];
    case OAC_T_INT8: return ((const int8_t *)p)[i];
    case OAC_T_UINT8: return ((const uint8_t *)p)[i];
    case OAC_T_BOOL: return ((const uint8_t *)p)[i] != 0;
    case OAC_T_INT16: return ((const int16_t *)p)[i];
    case OAC_T_UINT16: return ((const uint16_t *)p)[i];
    case OAC_T_UINT32: return ((const uint32_t *)p)[i];
    default: return (int64_t)((const uint64_t *)p)[i];   /* UINT64 */
    }
}

/* Store v's low bits into element i (BOOL: v != 0). */
static inline void oac_ek_seti(int32_t t, void *p, uint64_t i, int64_t v)
{
    uint64_t u = (uint64_t)v;
    switch (t) {
    case OAC_T_INT64: ((int64_t *)p)[i] = v; return;
    case OAC_T_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)u; return;
    case OAC_T_INT8: ((int8_t *)p)[i] = (int8_t)(uint8_t)u; return;
    case OAC_T_UINT8: ((uint8_t *)p)[i] = (uint8_t)u; return;
    case OAC_T_BOOL: ((uint8_t *)p)[i] = v != 0; return;
    case OAC_T_INT16: ((int16_t *)p)[i] = (int16_t)(uint16_t)u; return;
    case OAC_T_UINT16: ((uint16_t *)p)[i] = (uint16_t)u; return;
    case OAC_T_UINT32: ((uint32_t *)p)[i] = (uint32_t)u; return;
    default: ((uint64_t *)p)[i] = u; return;
    }
}

/* Element count of a tensor the runtime made (dims validated then). */
static inline uint64_t oac_ek_numel(const oac_tensor *t)
{
    uint64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= (uint64_t)t->dims[i];
    return n;
}

/* Row-major element strides of dims[0..rank).  A tensor with a zero dim
 * may have dims whose product overflows (only its total is checked, and
 * it is 0): the products wrap (unsigned) instead of overflowing, and such
 * strides are never used to address an element, as no element exists. */
static inline void oac_ek_strides(const int64_t *dims, int rank, int64_t *st)
{
    uint64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        st[i] = (int64_t)s;
        s *= (uint64_t)dims[i];
    }
}

/* Bytes of one element of a whole-byte type, 0 for sub-byte types. */
static inline size_t oac_ek_size(int32_t t)
{
    unsigned bits = oac_elem_bits(t);
    return bits % 8 ? 0 : bits / 8;
}

/* ---- refusals (kernels/elem_io.c) ---------------------------------------- */

/* The name of input i of the node ("" for an omitted port, "?" past the
 * node's inputs), for messages. */
const char *oac_kin_name(const oac_kernel_call *k, size_t i);

/* kernel-error (contract 8) at the node: "node N (Op): 'value': <fmt>".
 * value is an input's or an attribute's name.  Returns OAC_ERUNTIME. */
int oac_kernel_error(oac_kernel_call *k, const char *value, const char *fmt, ...)
    OAC_PRINTF(3, 4);
/* kernel-error for two optional inputs that go together, of which only
 * `given` is: "'<given's name>': <what>: input <missing> is missing"
 * (the message names the input that is there; the absent one has no
 * name). */
int oac_kernel_pair_missing(oac_kernel_call *k, size_t given, size_t missing,
                            const char *what);
/* unsupported-operator naming the node, input i and its element type t,
 * which the kernel does not implement.  Returns OAC_ERUNTIME. */
int oac_kernel_bad_type(oac_kernel_call *k, size_t i, int32_t t);

/* Input i as a tensor of any type, or NULL after kernel-error naming the
 * port when it is omitted or not a dense tensor. */
const oac_tensor *oac_kin(oac_kernel_call *k, size_t i);
/* Input i as a tensor whose element type is in mask, or NULL after the
 * diagnostic (absent: oac_kin's; type outside mask: oac_kernel_bad_type). */
const oac_tensor *oac_kin_typed(oac_kernel_call *k, size_t i, uint32_t mask);
/* Optional input i: NULL without a diagnostic when the port is omitted;
 * *rc set to OAC_ERUNTIME after a diagnostic when it is present but not a
 * tensor of mask. */
const oac_tensor *oac_kin_opt(oac_kernel_call *k, size_t i, uint32_t mask, int *rc);

/* Input i's integers (INT32 or INT64, at most max of them) into v[0..*n):
 * unsupported-operator for another type, kernel-error past max. */
int oac_kin_ints(oac_kernel_call *k, size_t i, int64_t *v, size_t max, size_t *n);

/* oac_kernel_output after checking that the shape's element count and
 * byte size do not overflow (kernel-error naming the output otherwise),
 * so a shape made from a model's values never reaches the runtime's
 * refusal of an impossible shape. */
int oac_kout(oac_kernel_call *k, size_t i, int32_t elem_type, int rank,
             const int64_t *dims, oac_tensor **out);

/* Is output i wanted (a named port the runtime hands over)? */
static inline bool oac_kout_wanted(const oac_kernel_call *k, size_t i)
{
    return i < k->n_out && k->out[i];
}

/* An axis attribute or input value in [-rank, rank) made non-negative:
 * kernel-error naming `what` otherwise. */
int oac_kernel_axis(oac_kernel_call *k, const char *what, int64_t axis, int rank,
                    int *out);

/* The version of the ONNX domain the model imports (kernels whose
 * semantics changed with it: Softmax, Split, Reduce*, Pad, Slice). */
int64_t oac_kernel_opset(const oac_kernel_call *k);

/* ---- numpy broadcasting ------------------------------------------------ */

/* Operands one walk broadcasts together (Where: 3; Max, Min: up to 8). */
#define OAC_BC_MAX 8

/* Walks the broadcast output shape of n operands in row-major order,
 * keeping each operand's element offset. */
typedef struct oac_bcast {
    int n;
    int rank;
    int64_t dims[OAC_RT_MAX_RANK];
    int64_t st[OAC_BC_MAX][OAC_RT_MAX_RANK];
    int64_t idx[OAC_RT_MAX_RANK];
    int64_t off[OAC_BC_MAX];
    uint64_t count;               /* output elements */
} oac_bcast;

/* The broadcast shape of t[0..n) (multidirectional, contract of ONNX
 * broadcasting); kernel-error naming the first input that does not
 * broadcast.  Sets b to the first element. */
int oac_bcast_init(oac_kernel_call *k, oac_bcast *b, int n, const oac_tensor *const *t);

/* Advance to the next output element. */
static inline void oac_bcast_next(oac_bcast *b)
{
    for (int d = b->rank - 1; d >= 0; d--) {
        b->idx[d]++;
        for (int j = 0; j < b->n; j++)
            b->off[j] += b->st[j][d];
        if (b->idx[d] < b->dims[d])
            return;
        for (int j = 0; j < b->n; j++)
            b->off[j] -= b->st[j][d] * b->dims[d];
        b->idx[d] = 0;
    }
}

#endif /* OAC_KERNEL_ELEM_H */

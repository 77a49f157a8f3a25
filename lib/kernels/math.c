/* kernels/math.c: element-wise kernels of the reference runtime: Identity,
 * Add, Sub, Mul, Div, Pow (numpy broadcasting), the unary maths (Neg,
 * Abs, Relu, Sqrt, Exp, Log, Sigmoid, Tanh, Erf, Reciprocal, Gelu,
 * com.microsoft FastGelu), the variadic Max and Min, the comparisons (Equal, Less, LessOrEqual,
 * Greater, GreaterOrEqual), the logic (And, Or, Not), Where and Cast.
 *
 * Owns the numeric semantics of those operators (ONNX docs/Operators.md,
 * onnx/reference/ops) on the element types of contract section 8: FLOAT,
 * FLOAT16, BFLOAT16 and DOUBLE computed as kernels/elem_io.h says, INT32 and
 * INT64 where ONNX allows them, and every integer type for Add, Sub, Mul,
 * Div and the comparisons (BOOL too for Equal, Where and Cast).  Any
 * other type is unsupported-operator naming it; a refused input is
 * kernel-error naming the value.
 *
 * Contract: section 8 (element types, kernel-error), section 5.
 *
 * Invariants:
 *  1. Outputs come from oac_kout (oac_kernel_output once the shape is
 *     checked; counted by the runtime's allocator); nothing else is
 *     allocated, no workspace.
 *  2. Integer arithmetic wraps (computed on uint64_t) instead of
 *     overflowing; integer division by zero is kernel-error, INT_MIN / -1
 *     wraps; float-to-integer casts saturate (NaN to 0): no undefined
 *     behaviour on hostile data.
 *  3. Every shape and attribute is validated before the output is
 *     allocated; work is linear in the output.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/elem_io.h"

int oac_kernel_identity(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kin(k, 0);
    if (!x)
        return OAC_ERUNTIME;
    oac_tensor *y;
    int rc = oac_kout(k, 0, x->elem_type, x->rank, x->dims, &y);
    if (rc)
        return rc;
    if (y->data != x->data && x->bytes)
        memcpy(y->data, x->data, x->bytes);
    return OAC_OK;
}

/* Two inputs of one element type (the ONNX type constraint T). */
static int same_type(oac_kernel_call *k, const oac_tensor *a, size_t i,
                     const oac_tensor *b)
{
    if (a->elem_type == b->elem_type)
        return OAC_OK;
    return oac_kernel_error(k, oac_kin_name(k, i),
                            "element type %s differs from input 0's %s",
                            oac_elem_name(b->elem_type), oac_elem_name(a->elem_type));
}

/* ---- broadcasting arithmetic ------------------------------------------ */

typedef enum binop { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW } binop;

/* The types of ONNX's arithmetic (T of Add, Sub, Mul, Div; T1 of Pow). */
#define ARITH_TYPES (OAC_EKM_FLOAT | OAC_EKM_ANYINT | OAC_EKM(OAC_T_UINT64))

static double fbin(binop op, double x, double z)
{
    switch (op) {
    case OP_ADD: return x + z;
    case OP_SUB: return x - z;
    case OP_MUL: return x * z;
    case OP_DIV: return x / z;
    default: return pow(x, z);
    }
}

/* x ** e on two's complement integers, wrapping; e < 0 (neg: e is a
 * negative signed value) gives 1 / x**-e truncated (x == 0 is refused by
 * the caller). */
static int64_t ipow(int64_t x, uint64_t e, bool neg)
{
    if (neg)
        return x == 1 ? 1 : x == -1 ? ((e & 1) ? -1 : 1) : 0;
    uint64_t r = 1, b = (uint64_t)x;
    for (uint64_t u = e; u; u >>= 1) {
        if (u & 1)
            r *= b;
        b *= b;
    }
    return (int64_t)r;
}

/* A double into an integer of [lo, hi] (as doubles: exact powers of two
 * or small), saturating; NaN is 0. */
static int64_t sat_i64(double d, double lo, double hi)
{
    if (d != d)
        return 0;
    if (d <= lo)
        return lo <= -9.2e18 ? INT64_MIN : (int64_t)lo;
    if (d >= hi)
        return hi >= 9.2e18 ? INT64_MAX : (int64_t)hi;
    return (int64_t)d;
}

static int binary(oac_kernel_call *k, binop op)
{
    /* Add, Sub, Mul, Div: every integer type; Pow's base FLOAT-like,
     * INT32 or INT64, its exponent (T1) any number. */
    uint32_t am = op == OP_POW ? OAC_EKM_NUM : ARITH_TYPES;
    const oac_tensor *a = oac_kin_typed(k, 0, am);
    uint32_t bm = op == OP_POW ? ARITH_TYPES : am;
    const oac_tensor *b = a ? oac_kin_typed(k, 1, bm) : NULL;
    if (!b)
        return OAC_ERUNTIME;
    int rc;
    if (op != OP_POW && (rc = same_type(k, a, 1, b)))
        return rc;
    int32_t t = a->elem_type, tb = b->elem_type;
    oac_bcast bc;
    const oac_tensor *ops[2] = { a, b };
    if ((rc = oac_bcast_init(k, &bc, 2, ops)))
        return rc;
    bool fa = oac_ek_is_float(t), fb = oac_ek_is_float(tb);
    /* Integer division by zero is refused before anything is written. */
    if (!fa && (op == OP_DIV || op == OP_POW)) {
        oac_bcast z = bc;
        for (uint64_t i = 0; i < z.count; i++, oac_bcast_next(&z)) {
            bool zero = op == OP_DIV ? oac_ek_geti(tb, b->data, (uint64_t)z.off[1]) == 0 :
                        !fb && tb != OAC_T_UINT64 &&
                        oac_ek_geti(t, a->data, (uint64_t)z.off[0]) == 0 &&
                        oac_ek_geti(tb, b->data, (uint64_t)z.off[1]) < 0;
            if (zero)
                return oac_kernel_error(k, oac_kin_name(k, op == OP_DIV ? 1 : 0),
                                        op == OP_DIV ? "integer division by zero at element %"
                                        PRIu64 : "zero to a negative integer power at "
                                        "element %" PRIu64, i);
        }
    }
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, t, bc.rank, bc.dims, &y)))
        return rc;
    int64_t min = t == OAC_T_INT64 ? INT64_MIN : INT32_MIN;
    int64_t max = t == OAC_T_INT64 ? INT64_MAX : INT32_MAX;
    for (uint64_t i = 0; i < bc.count; i++, oac_bcast_next(&bc)) {
        uint64_t oa = (uint64_t)bc.off[0], ob = (uint64_t)bc.off[1];
        if (fa) {
            int64_t zi = fb ? 0 : oac_ek_geti(tb, b->data, ob);
            double z = fb ? oac_ek_getd(tb, b->data, ob) :
                       tb == OAC_T_UINT64 ? (double)(uint64_t)zi : (double)zi;
            oac_ek_setd(t, y->data, i, fbin(op, oac_ek_getd(t, a->data, oa), z));
            continue;
        }
        int64_t x = oac_ek_geti(t, a->data, oa), r;
        if (op == OP_POW && fb) {
            r = sat_i64(pow((double)x, oac_ek_getd(tb, b->data, ob)), (double)min,
                        (double)max);
        } else {
            int64_t z = oac_ek_geti(tb, b->data, ob);
            uint64_t ux = (uint64_t)x, uz = (uint64_t)z;
            switch (op) {
            case OP_ADD: r = (int64_t)(ux + uz); break;
            case OP_SUB: r = (int64_t)(ux - uz); break;
            case OP_MUL: r = (int64_t)(ux * uz); break;
            case OP_DIV:
                /* UINT64 divides unsigned; -1 would overflow INT64_MIN. */
                r = t == OAC_T_UINT64 ? (int64_t)(ux / uz) :
                    z == -1 ? (int64_t)(0u - ux) : x / z;
                break;
            default: r = ipow(x, uz, tb != OAC_T_UINT64 && z < 0); break;
            }
        }
        oac_ek_seti(t, y->data, i, r);
    }
    return OAC_OK;
}

int oac_kernel_add(oac_kernel_call *k) { return binary(k, OP_ADD); }
int oac_kernel_sub(oac_kernel_call *k) { return binary(k, OP_SUB); }
int oac_kernel_mul(oac_kernel_call *k) { return binary(k, OP_MUL); }
int oac_kernel_div(oac_kernel_call *k) { return binary(k, OP_DIV); }
int oac_kernel_pow(oac_kernel_call *k) { return binary(k, OP_POW); }

/* ---- variadic Max and Min ---------------------------------------------- */

/* Max, Min (opset 13): 1 to OAC_BC_MAX inputs of one numeric type,
 * broadcast together; a NaN operand makes the element NaN (numpy's
 * maximum / minimum, which ONNX's reference and ONNX Runtime follow). */
static int extremum(oac_kernel_call *k, bool max)
{
    if (k->n_in < 1)
        return oac_kernel_error(k, k->node_name, "needs at least one input");
    if (k->n_in > OAC_BC_MAX)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s': %zu inputs exceed the reference runtime's "
                               "limit of %d", k->node_name, k->n_in, OAC_BC_MAX);
    const oac_tensor *ops[OAC_BC_MAX];
    int rc;
    for (size_t i = 0; i < k->n_in; i++) {
        ops[i] = oac_kin_typed(k, i, ARITH_TYPES);
        if (!ops[i])
            return OAC_ERUNTIME;
        if (i && (rc = same_type(k, ops[0], i, ops[i])))
            return rc;
    }
    oac_bcast bc;
    if ((rc = oac_bcast_init(k, &bc, (int)k->n_in, ops)))
        return rc;
    int32_t t = ops[0]->elem_type;
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, t, bc.rank, bc.dims, &y)))
        return rc;
    bool f = oac_ek_is_float(t), u64 = t == OAC_T_UINT64;
    for (uint64_t e = 0; e < bc.count; e++, oac_bcast_next(&bc)) {
        if (f) {
            double r = oac_ek_getd(t, ops[0]->data, (uint64_t)bc.off[0]);
            for (int j = 1; j < bc.n && r == r; j++) {
                double x = oac_ek_getd(t, ops[j]->data, (uint64_t)bc.off[j]);
                if (x != x || (max ? x > r : x < r))
                    r = x;
            }
            oac_ek_setd(t, y->data, e, r);
            continue;
        }
        int64_t r = oac_ek_geti(t, ops[0]->data, (uint64_t)bc.off[0]);
        for (int j = 1; j < bc.n; j++) {
            int64_t x = oac_ek_geti(t, ops[j]->data, (uint64_t)bc.off[j]);
            bool gt = u64 ? (uint64_t)x > (uint64_t)r : x > r;
            if (x != r && gt == max)
                r = x;
        }
        oac_ek_seti(t, y->data, e, r);
    }
    return OAC_OK;
}

int oac_kernel_max(oac_kernel_call *k) { return extremum(k, true); }
int oac_kernel_min(oac_kernel_call *k) { return extremum(k, false); }

/* ---- unary maths ------------------------------------------------------ */

typedef enum unop {
    U_NEG, U_ABS, U_RELU, U_SQRT, U_EXP, U_LOG, U_SIGMOID, U_TANH, U_ERF, U_RECIP,
    U_GELU, U_GELU_TANH
} unop;

/* sqrt(2 / pi), as ONNX's and ONNX Runtime's tanh approximation use it. */
#define SQRT_2_OVER_PI 0.7978845608028654
#define GELU_CUBIC 0.044715

static double funary(unop op, double x)
{
    switch (op) {
    case U_NEG: return -x;
    case U_ABS: return fabs(x);
    case U_RELU: return x > 0 ? x : (x != x ? x : 0.0);
    case U_SQRT: return sqrt(x);
    case U_EXP: return exp(x);
    case U_LOG: return log(x);      /* log(0) = -inf, log(x < 0) = NaN */
    case U_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case U_TANH: return tanh(x);
    case U_ERF: return erf(x);
    case U_RECIP: return 1.0 / x;
    case U_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    default:
        return 0.5 * x * (1.0 + tanh(SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x)));
    }
}

static int64_t iunary(unop op, int64_t x)
{
    switch (op) {
    case U_NEG: return (int64_t)(0u - (uint64_t)x);
    case U_ABS: return x < 0 ? (int64_t)(0u - (uint64_t)x) : x;
    default: return x > 0 ? x : 0;   /* U_RELU */
    }
}

/* Output 0 = op(input 0 [+ input `bias`, broadcast]). */
static int unary(oac_kernel_call *k, unop op, uint32_t mask, size_t bias)
{
    const oac_tensor *x = oac_kin_typed(k, 0, mask);
    if (!x)
        return OAC_ERUNTIME;
    int rc;
    const oac_tensor *b = bias ? oac_kin_opt(k, bias, mask, &rc) : NULL;
    if (bias && rc)
        return rc;
    if (b && (rc = same_type(k, x, bias, b)))
        return rc;
    oac_bcast bc;
    const oac_tensor *ops[2] = { x, b };
    if ((rc = oac_bcast_init(k, &bc, b ? 2 : 1, ops)))
        return rc;
    int32_t t = x->elem_type;
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, t, bc.rank, bc.dims, &y)))
        return rc;
    bool f = oac_ek_is_float(t);
    for (uint64_t i = 0; i < bc.count; i++, oac_bcast_next(&bc)) {
        uint64_t o = (uint64_t)bc.off[0];
        if (f) {
            double v = oac_ek_getd(t, x->data, o);
            if (b) {
                v += oac_ek_getd(t, b->data, (uint64_t)bc.off[1]);
                if (t != OAC_T_DOUBLE)
                    v = (float)v;   /* the sum is a float, as X's type */
            }
            oac_ek_setd(t, y->data, i, funary(op, v));
        } else {
            oac_ek_seti(t, y->data, i, iunary(op, oac_ek_geti(t, x->data, o)));
        }
    }
    return OAC_OK;
}

#define SIGNED_INT (OAC_EKM_INT | OAC_EKM(OAC_T_INT8) | OAC_EKM(OAC_T_INT16))

int oac_kernel_neg(oac_kernel_call *k) { return unary(k, U_NEG, OAC_EKM_FLOAT | SIGNED_INT, 0); }
int oac_kernel_abs(oac_kernel_call *k)
{
    return unary(k, U_ABS, OAC_EKM_FLOAT | OAC_EKM_ANYINT, 0);
}
int oac_kernel_relu(oac_kernel_call *k) { return unary(k, U_RELU, OAC_EKM_FLOAT | SIGNED_INT, 0); }
int oac_kernel_sqrt(oac_kernel_call *k) { return unary(k, U_SQRT, OAC_EKM_FLOAT, 0); }
int oac_kernel_exp(oac_kernel_call *k) { return unary(k, U_EXP, OAC_EKM_FLOAT, 0); }
int oac_kernel_log(oac_kernel_call *k) { return unary(k, U_LOG, OAC_EKM_FLOAT, 0); }
int oac_kernel_sigmoid(oac_kernel_call *k) { return unary(k, U_SIGMOID, OAC_EKM_FLOAT, 0); }
int oac_kernel_tanh(oac_kernel_call *k) { return unary(k, U_TANH, OAC_EKM_FLOAT, 0); }
int oac_kernel_erf(oac_kernel_call *k) { return unary(k, U_ERF, OAC_EKM_FLOAT, 0); }
int oac_kernel_reciprocal(oac_kernel_call *k) { return unary(k, U_RECIP, OAC_EKM_FLOAT, 0); }

/* Gelu (opset 20): approximate "none" (erf) or "tanh". */
int oac_kernel_gelu(oac_kernel_call *k)
{
    char buf[16];
    const char *ap = oac_attr_string(k->node, "approximate", "none", buf, sizeof buf);
    if (strcmp(ap, "none") && strcmp(ap, "tanh"))
        return oac_kernel_error(k, "approximate", "'%s' is neither none nor tanh", ap);
    return unary(k, strcmp(ap, "tanh") ? U_GELU : U_GELU_TANH, OAC_EKM_FLOAT, 0);
}

/* com.microsoft FastGelu: the tanh approximation of Gelu(X + bias), bias
 * optional (input 1, broadcast). */
int oac_kernel_fast_gelu(oac_kernel_call *k)
{
    return unary(k, U_GELU_TANH, OAC_EKM_FLOAT, 1);
}

/* ---- comparisons and logic ------------------------------------------- */

typedef enum cmpop { C_EQ, C_LT, C_LE, C_GT, C_GE, L_AND, L_OR } cmpop;

static bool cmp_d(cmpop op, double x, double z)
{
    switch (op) {
    case C_EQ: return x == z;
    case C_LT: return x < z;
    case C_LE: return x <= z;
    case C_GT: return x > z;
    default: return x >= z;
    }
}

static bool cmp_u(cmpop op, uint64_t x, uint64_t z)
{
    switch (op) {
    case C_EQ: return x == z;
    case C_LT: return x < z;
    case C_LE: return x <= z;
    case C_GT: return x > z;
    default: return x >= z;
    }
}

static bool cmp_i(cmpop op, int64_t x, int64_t z)
{
    switch (op) {
    case C_EQ: return x == z;
    case C_LT: return x < z;
    case C_LE: return x <= z;
    case C_GT: return x > z;
    case C_GE: return x >= z;
    case L_AND: return x && z;
    default: return x || z;
    }
}

/* Output 0 (BOOL) = input 0 op input 1, broadcast, inputs of one type. */
static int compare(oac_kernel_call *k, cmpop op, uint32_t mask)
{
    const oac_tensor *a = oac_kin_typed(k, 0, mask);
    const oac_tensor *b = a ? oac_kin_typed(k, 1, mask) : NULL;
    if (!b)
        return OAC_ERUNTIME;
    int rc = same_type(k, a, 1, b);
    if (rc)
        return rc;
    oac_bcast bc;
    const oac_tensor *ops[2] = { a, b };
    if ((rc = oac_bcast_init(k, &bc, 2, ops)))
        return rc;
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, OAC_T_BOOL, bc.rank, bc.dims, &y)))
        return rc;
    int32_t t = a->elem_type;
    bool f = oac_ek_is_float(t);
    uint8_t *out = y->data;
    for (uint64_t i = 0; i < bc.count; i++, oac_bcast_next(&bc)) {
        uint64_t oa = (uint64_t)bc.off[0], ob = (uint64_t)bc.off[1];
        if (f)
            out[i] = cmp_d(op, oac_ek_getd(t, a->data, oa), oac_ek_getd(t, b->data, ob));
        else if (t == OAC_T_UINT64)
            out[i] = cmp_u(op, (uint64_t)oac_ek_geti(t, a->data, oa),
                           (uint64_t)oac_ek_geti(t, b->data, ob));
        else
            out[i] = cmp_i(op, oac_ek_geti(t, a->data, oa), oac_ek_geti(t, b->data, ob));
    }
    return OAC_OK;
}

#define CMP_TYPES (OAC_EKM_FLOAT | OAC_EKM_ANYINT | OAC_EKM(OAC_T_UINT64))

int oac_kernel_equal(oac_kernel_call *k) { return compare(k, C_EQ, CMP_TYPES | OAC_EKM_BOOL); }
int oac_kernel_less(oac_kernel_call *k) { return compare(k, C_LT, CMP_TYPES); }
int oac_kernel_less_or_equal(oac_kernel_call *k) { return compare(k, C_LE, CMP_TYPES); }
int oac_kernel_greater(oac_kernel_call *k) { return compare(k, C_GT, CMP_TYPES); }
int oac_kernel_greater_or_equal(oac_kernel_call *k) { return compare(k, C_GE, CMP_TYPES); }
int oac_kernel_and(oac_kernel_call *k) { return compare(k, L_AND, OAC_EKM_BOOL); }
int oac_kernel_or(oac_kernel_call *k) { return compare(k, L_OR, OAC_EKM_BOOL); }

int oac_kernel_not(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kin_typed(k, 0, OAC_EKM_BOOL);
    if (!x)
        return OAC_ERUNTIME;
    oac_tensor *y;
    int rc = oac_kout(k, 0, OAC_T_BOOL, x->rank, x->dims, &y);
    if (rc)
        return rc;
    uint64_t n = oac_ek_numel(x);
    for (uint64_t i = 0; i < n; i++)
        ((uint8_t *)y->data)[i] = !((const uint8_t *)x->data)[i];
    return OAC_OK;
}

/* Where(condition, X, Y): X where true, else Y, all three broadcast;
 * any whole-byte element type. */
int oac_kernel_where(oac_kernel_call *k)
{
    const oac_tensor *c = oac_kin_typed(k, 0, OAC_EKM_BOOL);
    const oac_tensor *x = c ? oac_kin(k, 1) : NULL;
    const oac_tensor *z = x ? oac_kin(k, 2) : NULL;
    if (!z)
        return OAC_ERUNTIME;
    size_t es = oac_ek_size(x->elem_type);
    if (!es || x->elem_type == OAC_T_STRING)
        return oac_kernel_bad_type(k, 1, x->elem_type);
    int rc = same_type(k, x, 2, z);
    if (rc)
        return rc;
    oac_bcast bc;
    const oac_tensor *ops[3] = { c, x, z };
    if ((rc = oac_bcast_init(k, &bc, 3, ops)))
        return rc;
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, x->elem_type, bc.rank, bc.dims, &y)))
        return rc;
    uint8_t *out = y->data;
    const uint8_t *cond = c->data;
    for (uint64_t i = 0; i < bc.count; i++, oac_bcast_next(&bc)) {
        bool pick = cond[bc.off[0]] != 0;
        const uint8_t *src = pick ? (const uint8_t *)x->data + (size_t)bc.off[1] * es
                                  : (const uint8_t *)z->data + (size_t)bc.off[2] * es;
        memcpy(out + i * es, src, es);
    }
    return OAC_OK;
}

/* ---- Cast -------------------------------------------------------------- */

#define CAST_TYPES (OAC_EKM_FLOAT | OAC_EKM_ANYINT | OAC_EKM_BOOL | \
                    OAC_EKM(OAC_T_UINT64))

/* A double into integer type t, saturating (NaN to 0). */
static int64_t cast_f2i(int32_t t, double d)
{
    switch (t) {
    case OAC_T_INT8: return sat_i64(d, INT8_MIN, INT8_MAX);
    case OAC_T_UINT8: return sat_i64(d, 0, UINT8_MAX);
    case OAC_T_INT16: return sat_i64(d, INT16_MIN, INT16_MAX);
    case OAC_T_UINT16: return sat_i64(d, 0, UINT16_MAX);
    case OAC_T_INT32: return sat_i64(d, INT32_MIN, INT32_MAX);
    case OAC_T_UINT32: return sat_i64(d, 0, UINT32_MAX);
    case OAC_T_UINT64:
        if (d != d || d <= 0)
            return 0;
        return d >= 18446744073709551616.0 ? (int64_t)UINT64_MAX
                                            : (int64_t)(uint64_t)d;
    default:   /* INT64: 2^63 is the first double out of range */
        if (d != d)
            return 0;
        if (d >= 9223372036854775808.0)
            return INT64_MAX;
        return d <= -9223372036854775808.0 ? INT64_MIN : (int64_t)d;
    }
}

int oac_kernel_cast(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kin_typed(k, 0, CAST_TYPES);
    if (!x)
        return OAC_ERUNTIME;
    int64_t to64 = oac_attr_int(k->node, "to", 0);
    int32_t to = to64 > 0 && to64 < 32 ? (int32_t)to64 : 0;
    if (!to || !oac_ek_in(to, CAST_TYPES)) {
        char num[24];
        const char *name = to ? oac_elem_name(to) : NULL;
        if (!name) {
            snprintf(num, sizeof num, "%" PRId64, to64);
            name = num;
        }
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s' (%s): attribute 'to': element type %s is not "
                               "implemented by the reference runtime's kernel",
                               k->node_name, k->node->op_type, name);
    }
    oac_tensor *y;
    int rc = oac_kout(k, 0, to, x->rank, x->dims, &y);
    if (rc)
        return rc;
    uint64_t n = oac_ek_numel(x);
    int32_t from = x->elem_type;
    bool ff = oac_ek_is_float(from), tf = oac_ek_is_float(to);
    for (uint64_t i = 0; i < n; i++) {
        if (ff) {
            double d = oac_ek_getd(from, x->data, i);
            if (tf)
                oac_ek_setd(to, y->data, i, d);
            else if (to == OAC_T_BOOL)
                ((uint8_t *)y->data)[i] = d != 0.0;   /* NaN is true */
            else
                oac_ek_seti(to, y->data, i, cast_f2i(to, d));
            continue;
        }
        int64_t v = oac_ek_geti(from, x->data, i);
        if (!tf) {
            oac_ek_seti(to, y->data, i, v);
        } else if (to == OAC_T_DOUBLE) {
            ((double *)y->data)[i] = from == OAC_T_UINT64 ? (double)(uint64_t)v : (double)v;
        } else {
            /* One rounding, straight to float (not through double). */
            float f = from == OAC_T_UINT64 ? (float)(uint64_t)v : (float)v;
            oac_ek_setf(to, y->data, i, f);
        }
    }
    return OAC_OK;
}

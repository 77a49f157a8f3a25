/* kernel_math.c: arithmetic kernels of the reference runtime: Identity,
 * Add, Sub, Mul, Div, Neg (numpy broadcasting), MatMul (batched,
 * broadcast batch dims), Softmax and Cast (contract section 5: enough of
 * ONNX to run the toy decoder).
 *
 * Owns the numeric semantics of those operators on FLOAT (the decoder's
 * type), DOUBLE, INT32 and INT64 (shape arithmetic).  Any other type is
 * refused with operand-invalid naming the node, never computed wrongly.
 *
 * Invariants:
 *  1. Outputs come from oac_kernel_output (counted by the runtime's
 *     allocator); no kernel here allocates anything else.
 *  2. Integer arithmetic wraps (computed on uint64_t) instead of
 *     overflowing; integer division by zero and INT_MIN / -1 are
 *     operand-invalid, float-to-integer casts saturate (NaN to 0): no
 *     undefined behaviour on hostile data.
 *  3. Every shape is validated before the output is allocated.
 *  4. Work is linear in the buffers, except MatMul's, which is bounded by
 *     OAC_RT_MAX_KERNEL_OPS (runtime.h) before its output is allocated.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "runtime.h"

static uint64_t numel(const oac_tensor *t)
{
    uint64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= (uint64_t)t->dims[i];   /* validated when the tensor was made */
    return n;
}

int oac_kernel_identity(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kernel_tensor_in(k, 0);
    if (!x)
        return OAC_ERUNTIME;
    oac_tensor *y;
    int rc = oac_kernel_output(k, 0, x->elem_type, x->rank, x->dims, &y);
    if (rc)
        return rc;
    if (y->data != x->data && x->bytes)
        memcpy(y->data, x->data, x->bytes);
    return OAC_OK;
}

/* ---- broadcasting binary ops ---------------------------------------- */

typedef enum binop { OP_ADD, OP_SUB, OP_MUL, OP_DIV } binop;

static int bcast(oac_kernel_call *k, const oac_tensor *a, const oac_tensor *b,
                 int *rank, int64_t *dims)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node %s (%s): shapes do not broadcast "
                                   "(dim %d: %" PRId64 " vs %" PRId64 ")",
                                   k->node_name, k->node->op_type, i, da, db);
        dims[i] = da == 1 ? db : da;
    }
    *rank = r;
    return OAC_OK;
}

/* Element strides of t seen through the broadcast output shape. */
static void bstrides(const oac_tensor *t, int r, int64_t *st)
{
    int64_t s = 1;
    for (int i = r - 1; i >= 0; i--) {
        int it = i - (r - t->rank);
        int64_t d = it >= 0 ? t->dims[it] : 1;
        st[i] = d == 1 ? 0 : s;
        s *= d;
    }
}

static int binary(oac_kernel_call *k, binop op)
{
    const oac_tensor *a = oac_kernel_tensor_in(k, 0);
    const oac_tensor *b = a ? oac_kernel_tensor_in(k, 1) : NULL;
    if (!b)
        return OAC_ERUNTIME;
    int32_t t = a->elem_type;
    if (t != b->elem_type ||
        (t != OAC_T_FLOAT && t != OAC_T_DOUBLE && t != OAC_T_INT32 && t != OAC_T_INT64))
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s (%s): element types %s and %s are not "
                               "supported (FLOAT, DOUBLE, INT32, INT64, equal)",
                               k->node_name, k->node->op_type,
                               oac_elem_name(a->elem_type), oac_elem_name(b->elem_type));
    int r;
    int64_t dims[OAC_RT_MAX_RANK], sa[OAC_RT_MAX_RANK], sb[OAC_RT_MAX_RANK];
    int rc = bcast(k, a, b, &r, dims);
    if (rc)
        return rc;
    bstrides(a, r, sa);
    bstrides(b, r, sb);
    oac_tensor *y;
    if ((rc = oac_kernel_output(k, 0, t, r, dims, &y)))
        return rc;
    uint64_t n = numel(y);
    int64_t idx[OAC_RT_MAX_RANK] = { 0 };
    int64_t oa = 0, ob = 0;
    for (uint64_t i = 0; i < n; i++) {
        switch (t) {
        case OAC_T_FLOAT: {
            float x = ((const float *)a->data)[oa], z = ((const float *)b->data)[ob];
            ((float *)y->data)[i] = op == OP_ADD ? x + z : op == OP_SUB ? x - z
                                  : op == OP_MUL ? x * z : x / z;
            break;
        }
        case OAC_T_DOUBLE: {
            double x = ((const double *)a->data)[oa], z = ((const double *)b->data)[ob];
            ((double *)y->data)[i] = op == OP_ADD ? x + z : op == OP_SUB ? x - z
                                   : op == OP_MUL ? x * z : x / z;
            break;
        }
        default: {
            int64_t x, z, res;
            if (t == OAC_T_INT64) {
                x = ((const int64_t *)a->data)[oa];
                z = ((const int64_t *)b->data)[ob];
            } else {
                x = ((const int32_t *)a->data)[oa];
                z = ((const int32_t *)b->data)[ob];
            }
            int64_t min = t == OAC_T_INT64 ? INT64_MIN : INT32_MIN;
            if (op == OP_DIV && (z == 0 || (x == min && z == -1)))
                return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                       "node %s: integer division %" PRId64 " / %" PRId64
                                       " is undefined", k->node_name, x, z);
            uint64_t ux = (uint64_t)x, uz = (uint64_t)z;
            res = op == OP_ADD ? (int64_t)(ux + uz) : op == OP_SUB ? (int64_t)(ux - uz)
                : op == OP_MUL ? (int64_t)(ux * uz) : x / z;
            if (t == OAC_T_INT64)
                ((int64_t *)y->data)[i] = res;
            else
                ((int32_t *)y->data)[i] = (int32_t)(uint32_t)(uint64_t)res;
        }
        }
        /* Advance the output index and both input offsets. */
        for (int d = r - 1; d >= 0; d--) {
            idx[d]++;
            oa += sa[d];
            ob += sb[d];
            if (idx[d] < dims[d])
                break;
            oa -= sa[d] * dims[d];
            ob -= sb[d] * dims[d];
            idx[d] = 0;
        }
    }
    return OAC_OK;
}

int oac_kernel_add(oac_kernel_call *k) { return binary(k, OP_ADD); }
int oac_kernel_sub(oac_kernel_call *k) { return binary(k, OP_SUB); }
int oac_kernel_mul(oac_kernel_call *k) { return binary(k, OP_MUL); }
int oac_kernel_div(oac_kernel_call *k) { return binary(k, OP_DIV); }

int oac_kernel_neg(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kernel_tensor_in(k, 0);
    if (!x)
        return OAC_ERUNTIME;
    int32_t t = x->elem_type;
    if (t != OAC_T_FLOAT && t != OAC_T_DOUBLE && t != OAC_T_INT32 && t != OAC_T_INT64)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID, "node %s (Neg): type %s not supported",
                               k->node_name, oac_elem_name(t));
    oac_tensor *y;
    int rc = oac_kernel_output(k, 0, t, x->rank, x->dims, &y);
    if (rc)
        return rc;
    uint64_t n = numel(x);
    for (uint64_t i = 0; i < n; i++) {
        switch (t) {
        case OAC_T_FLOAT: ((float *)y->data)[i] = -((const float *)x->data)[i]; break;
        case OAC_T_DOUBLE: ((double *)y->data)[i] = -((const double *)x->data)[i]; break;
        case OAC_T_INT32:
            ((int32_t *)y->data)[i] = (int32_t)(0u - (uint32_t)((const int32_t *)x->data)[i]);
            break;
        default:
            ((int64_t *)y->data)[i] = (int64_t)(0u - (uint64_t)((const int64_t *)x->data)[i]);
        }
    }
    return OAC_OK;
}

/* ---- MatMul ---------------------------------------------------------- */

int oac_kernel_matmul(oac_kernel_call *k)
{
    const oac_tensor *a = oac_kernel_tensor_in(k, 0);
    const oac_tensor *b = a ? oac_kernel_tensor_in(k, 1) : NULL;
    if (!b)
        return OAC_ERUNTIME;
    if (a->elem_type != OAC_T_FLOAT || b->elem_type != OAC_T_FLOAT ||
        a->rank < 1 || b->rank < 1)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s (MatMul): FLOAT operands of rank >= 1 only",
                               k->node_name);
    /* Promote rank-1 operands as numpy does, and drop the added dim. */
    oac_tensor A = *a, B = *b;
    bool va = a->rank == 1, vb = b->rank == 1;
    if (va) {
        A.rank = 2; A.dims[0] = 1; A.dims[1] = a->dims[0];
    }
    if (vb) {
        B.rank = 2; B.dims[0] = b->dims[0]; B.dims[1] = 1;
    }
    int64_t M = A.dims[A.rank - 2], K = A.dims[A.rank - 1];
    int64_t K2 = B.dims[B.rank - 2], N = B.dims[B.rank - 1];
    if (K != K2)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s (MatMul): inner dims %" PRId64 " and %" PRId64
                               " differ", k->node_name, K, K2);
    /* Batch dims broadcast. */
    oac_tensor ab = { .rank = A.rank - 2 }, bb = { .rank = B.rank - 2 };
    memcpy(ab.dims, A.dims, sizeof(int64_t) * (size_t)ab.rank);
    memcpy(bb.dims, B.dims, sizeof(int64_t) * (size_t)bb.rank);
    int br;
    int64_t bd[OAC_RT_MAX_RANK], sa[OAC_RT_MAX_RANK], sb[OAC_RT_MAX_RANK];
    int rc = bcast(k, &ab, &bb, &br, bd);
    if (rc)
        return rc;
    if (br + 2 > OAC_RT_MAX_RANK)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID, "node %s: rank too large", k->node_name);
    bstrides(&ab, br, sa);
    bstrides(&bb, br, sb);
    int64_t od[OAC_RT_MAX_RANK];
    int orank = 0;
    for (int i = 0; i < br; i++)
        od[orank++] = bd[i];
    if (!va)
        od[orank++] = M;
    if (!vb)
        od[orank++] = N;
    /* The one kernel whose work outgrows its buffers: refuse before
     * allocating what it could not finish (runtime.h). */
    uint64_t batches = 1, ops;
    bool over = false;
    for (int i = 0; i < br; i++)
        over = over || oac_mul_overflow_u64(batches, (uint64_t)bd[i], &batches);
    if (over || oac_mul_overflow_u64(batches, (uint64_t)M, &ops) ||
        oac_mul_overflow_u64(ops, (uint64_t)N, &ops) ||
        oac_mul_overflow_u64(ops, (uint64_t)K, &ops) || ops > OAC_RT_MAX_KERNEL_OPS)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node %s (MatMul): %" PRIu64 " x %" PRId64 " x %" PRId64
                               " x %" PRId64 " multiply-adds exceed the reference "
                               "runtime's limit of %" PRIu64 " per node", k->node_name,
                               batches, M, N, K, OAC_RT_MAX_KERNEL_OPS);
    oac_tensor *y;
    if ((rc = oac_kernel_output(k, 0, OAC_T_FLOAT, orank, od, &y)))
        return rc;
    /* An empty output, or an empty sum (K == 0: zeros): no pointer
     * arithmetic on the empty operands, which may have no storage. */
    if (!y->bytes)
        return OAC_OK;
    if (!K) {
        memset(y->data, 0, y->bytes);
        return OAC_OK;
    }
    const float *pa = a->data, *pb = b->data;
    float *py = y->data;
    int64_t idx[OAC_RT_MAX_RANK] = { 0 }, oa = 0, ob = 0;
    for (uint64_t bt = 0; bt < batches; bt++) {
        const float *x = pa + oa * M * K, *z = pb + ob * K * N;
        float *o = py + (int64_t)bt * M * N;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                float acc = 0.0f;
                for (int64_t q = 0; q < K; q++)
                    acc += x[i * K + q] * z[q * N + j];
                o[i * N + j] = acc;
            }
        for (int d = br - 1; d >= 0; d--) {
            idx[d]++;
            oa += sa[d];
            ob += sb[d];
            if (idx[d] < bd[d])
                break;
            oa -= sa[d] * bd[d];
            ob -= sb[d] * bd[d];
            idx[d] = 0;
        }
    }
    return OAC_OK;
}

/* ---- Softmax (opset 13: one axis, default -1) ------------------------ */

int oac_kernel_softmax(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kernel_tensor_in(k, 0);
    if (!x)
        return OAC_ERUNTIME;
    if (x->elem_type != OAC_T_FLOAT || x->rank < 1)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s (Softmax): FLOAT of rank >= 1 only", k->node_name);
    int64_t axis = oac_attr_int(k->node, "axis", -1);
    if (axis < 0)
        axis += x->rank;
    if (axis < 0 || axis >= x->rank)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s (Softmax): axis out of range", k->node_name);
    oac_tensor *y;
    int rc = oac_kernel_output(k, 0, OAC_T_FLOAT, x->rank, x->dims, &y);
    if (rc)
        return rc;
    int64_t outer = 1, inner = 1, n = x->dims[axis];
    for (int i = 0; i < axis; i++)
        outer *= x->dims[i];
    for (int i = (int)axis + 1; i < x->rank; i++)
        inner *= x->dims[i];
    const float *in = x->data;
    float *out = y->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t q = 0; q < inner; q++) {
            const float *src = in + o * n * inner + q;
            float *dst = out + o * n * inner + q;
            float mx = -INFINITY;
            for (int64_t i = 0; i < n; i++)
                if (src[i * inner] > mx)
                    mx = src[i * inner];
            float sum = 0.0f;
            for (int64_t i = 0; i < n; i++) {
                dst[i * inner] = expf(src[i * inner] - mx);
                sum += dst[i * inner];
            }
            for (int64_t i = 0; i < n; i++)
                dst[i * inner] /= sum;
        }
    return OAC_OK;
}

/* ---- Cast ------------------------------------------------------------ */

static bool cast_type_ok(int32_t t)
{
    switch (t) {
    case OAC_T_FLOAT: case OAC_T_DOUBLE: case OAC_T_INT8: case OAC_T_UINT8:
    case OAC_T_INT16: case OAC_T_UINT16: case OAC_T_INT32: case OAC_T_UINT32:
    case OAC_T_INT64: case OAC_T_UINT64: case OAC_T_BOOL:
        return true;
    default:
        return false;
    }
}

static bool is_float(int32_t t)
{
    return t == OAC_T_FLOAT || t == OAC_T_DOUBLE;
}

/* Element i of p as double and as int64 (whichever is exact). */
static void load_elem(int32_t t, const void *p, uint64_t i, double *d, int64_t *v)
{
    switch (t) {
    case OAC_T_FLOAT: *d = ((const float *)p)[i]; break;
    case OAC_T_DOUBLE: *d = ((const double *)p)[i]; break;
    case OAC_T_INT8: *v = ((const int8_t *)p)[i]; break;
    case OAC_T_UINT8: case OAC_T_BOOL: *v = ((const uint8_t *)p)[i]; break;
    case OAC_T_INT16: *v = ((const int16_t *)p)[i]; break;
    case OAC_T_UINT16: *v = ((const uint16_t *)p)[i]; break;
    case OAC_T_INT32: *v = ((const int32_t *)p)[i]; break;
    case OAC_T_UINT32: *v = ((const uint32_t *)p)[i]; break;
    case OAC_T_INT64: *v = ((const int64_t *)p)[i]; break;
    default: *v = (int64_t)((const uint64_t *)p)[i]; break;
    }
    if (!is_float(t))
        *d = (double)*v;
}

/* A double to an integer of [lo, hi], saturating; NaN is 0. */
static int64_t sat(double d, double lo, double hi)
{
    if (d != d)
        return 0;
    if (d <= lo)
        return (int64_t)lo;
    if (d >= hi)
        return d >= 9.2e18 ? INT64_MAX : (int64_t)hi;
    return (int64_t)d;
}

static void store_elem(int32_t t, void *p, uint64_t i, bool src_float, double d, int64_t v)
{
    switch (t) {
    case OAC_T_FLOAT: ((float *)p)[i] = (float)d; return;
    case OAC_T_DOUBLE: ((double *)p)[i] = d; return;
    case OAC_T_BOOL: ((uint8_t *)p)[i] = src_float ? d != 0.0 : v != 0; return;
    default: break;
    }
    if (src_float) {
        switch (t) {
        case OAC_T_INT8: v = sat(d, INT8_MIN, INT8_MAX); break;
        case OAC_T_UINT8: v = sat(d, 0, UINT8_MAX); break;
        case OAC_T_INT16: v = sat(d, INT16_MIN, INT16_MAX); break;
        case OAC_T_UINT16: v = sat(d, 0, UINT16_MAX); break;
        case OAC_T_INT32: v = sat(d, INT32_MIN, INT32_MAX); break;
        case OAC_T_UINT32: v = sat(d, 0, UINT32_MAX); break;
        case OAC_T_UINT64: v = sat(d, 0, 9.2e18); break;
        default: v = sat(d, -9.2e18, 9.2e18); break;
        }
    }
    /* Integer to integer: ONNX (like C for unsigned) keeps the low bits. */
    switch (t) {
    case OAC_T_INT8: ((int8_t *)p)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case OAC_T_UINT8: ((uint8_t *)p)[i] = (uint8_t)(uint64_t)v; break;
    case OAC_T_INT16: ((int16_t *)p)[i] = (int16_t)(uint16_t)(uint64_t)v; break;
    case OAC_T_UINT16: ((uint16_t *)p)[i] = (uint16_t)(uint64_t)v; break;
    case OAC_T_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case OAC_T_UINT32: ((uint32_t *)p)[i] = (uint32_t)(uint64_t)v; break;
    case OAC_T_INT64: ((int64_t *)p)[i] = v; break;
    default: ((uint64_t *)p)[i] = (uint64_t)v; break;
    }
}

int oac_kernel_cast(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kernel_tensor_in(k, 0);
    if (!x)
        return OAC_ERUNTIME;
    int64_t to = oac_attr_int(k->node, "to", 0);
    if (!cast_type_ok(x->elem_type) || to < INT32_MIN || to > INT32_MAX ||
        !cast_type_ok((int32_t)to))
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s (Cast): %s to %" PRId64 " is not supported",
                               k->node_name, oac_elem_name(x->elem_type), to);
    oac_tensor *y;
    int rc = oac_kernel_output(k, 0, (int32_t)to, x->rank, x->dims, &y);
    if (rc)
        return rc;
    uint64_t n = numel(x);
    bool sf = is_float(x->elem_type);
    for (uint64_t i = 0; i < n; i++) {
        double d = 0;
        int64_t v = 0;
        load_elem(x->elem_type, x->data, i, &d, &v);
        store_elem((int32_t)to, y->data, i, sf, d, v);
    }
    return OAC_OK;
}

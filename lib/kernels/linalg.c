/* kernels/linalg.c: contracting and reducing kernels of the reference
 * runtime: MatMul (numpy broadcasting of batch dims), Gemm, Softmax (any
 * axis; opset < 13's 2-D coercion), ReduceSum, ReduceMean, ReduceMax.
 *
 * Owns the numeric semantics of those operators (ONNX docs/Operators.md,
 * onnx/reference/ops) on FLOAT, FLOAT16, BFLOAT16 and DOUBLE (dot
 * products of row-major operands accumulated in float, as BLAS and ONNX
 * Runtime do, in double for DOUBLE and for transposed Gemm operands;
 * softmax and reduction sums in double; stores round as kernels/elem_io.h
 * says; FLOAT16 and BFLOAT16 products blocked, with an AVX2 + F16C path,
 * in kernels/mm16.c, the same sums), and on INT32 / INT64 where ONNX
 * allows them (MatMul, the reductions; ReduceMax also the small integers
 * and BOOL).  Contract: section 8 (element types, kernel-error), section 5.
 *
 * Invariants:
 *  1. Only outputs are allocated (oac_kout); no workspace: a
 *     softmax reads its input three times instead of keeping the
 *     exponentials, a reduction walks each output's block of the input,
 *     a product accumulates MM_CHUNK columns on the stack.
 *  2. Every shape, axis and attribute is validated before the output is
 *     allocated; refusals are kernel-error naming the value.
 *  3. Work is linear in the buffers, except MatMul's and Gemm's, which are
 *     bounded by OAC_RT_MAX_KERNEL_OPS multiply-adds per node (run/kernel_api.h)
 *     before the output is allocated (unsupported-operator past it).
 *  4. Integer sums and products wrap (uint64_t arithmetic).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/elem_io.h"
#include "kernels/mm16.h"

#define MAXR OAC_RT_MAX_RANK

static int same_type(oac_kernel_call *k, const oac_tensor *a, size_t i,
                     const oac_tensor *b)
{
    if (a->elem_type == b->elem_type)
        return OAC_OK;
    return oac_kernel_error(k, oac_kin_name(k, i),
                            "element type %s differs from input 0's %s",
                            oac_elem_name(b->elem_type), oac_elem_name(a->elem_type));
}

/* batches * M * N * K multiply-adds within the limit (invariant 3). */
static int work_ok(oac_kernel_call *k, uint64_t batches, int64_t M, int64_t N, int64_t K)
{
    uint64_t ops;
    if (oac_mul_overflow_u64(batches, (uint64_t)M, &ops) ||
        oac_mul_overflow_u64(ops, (uint64_t)N, &ops) ||
        oac_mul_overflow_u64(ops, (uint64_t)K, &ops) || ops > OAC_RT_MAX_KERNEL_OPS)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s' (%s): %" PRIu64 " x %" PRId64 " x %" PRId64
                               " x %" PRId64 " multiply-adds exceed the reference "
                               "runtime's limit of %" PRIu64 " per node", k->node_name,
                               k->node->op_type, batches, M, N, K, OAC_RT_MAX_KERNEL_OPS);
    return OAC_OK;
}

/* One [M, K] x [K, N] product into o (kernels/mm16.h says the strides). */
typedef oac_mm_args mm_args;

/* Output columns one row computes at a time on the stack (mm_rows): 2 KiB
 * of accumulators, a bound of the code, not of the model. */
#define MM_CHUNK 256

/* alpha * acc + beta * C into element (i, j) of o. */
static void mm_store(const mm_args *m, void *o, int64_t i, int64_t j, double acc)
{
    double v = acc * m->alpha;
    if (m->c)
        v += m->beta * oac_ek_getd(m->tc, m->c, (uint64_t)(m->c0 + i * m->rc + j * m->cc));
    oac_ek_setd(m->t, o, (uint64_t)(m->o0 + i * m->N + j), v);
}

/* Row-major A and B of FLOAT or DOUBLE: o[i, j0..] accumulates a[i, q] *
 * b[q, j0..] in float (double for DOUBLE) over MM_CHUNK columns at a
 * time, each B row read contiguously.  The 16-bit types go to oac_mm16
 * (kernels/mm16.c), which computes the same sums blocked. */
static void mm_rows(const mm_args *m, void *o)
{
    int32_t t = m->t;
    for (int64_t i = 0; i < m->M; i++)
        for (int64_t j0 = 0; j0 < m->N; j0 += MM_CHUNK) {
            int64_t jn = m->N - j0 < MM_CHUNK ? m->N - j0 : MM_CHUNK;
            if (t == OAC_T_DOUBLE) {
                double acc[MM_CHUNK] = { 0 };
                const double *a = (const double *)m->a + m->a0 + i * m->ra;
                for (int64_t q = 0; q < m->K; q++) {
                    const double *b = (const double *)m->b + m->b0 + q * m->rb + j0;
                    for (int64_t j = 0; j < jn; j++)
                        acc[j] += a[q] * b[j];
                }
                for (int64_t j = 0; j < jn; j++)
                    mm_store(m, o, i, j0 + j, acc[j]);
                continue;
            }
            float acc[MM_CHUNK] = { 0 };
            const float *a = (const float *)m->a + m->a0 + i * m->ra;
            for (int64_t q = 0; q < m->K; q++) {
                const float *b = (const float *)m->b + m->b0 + q * m->rb + j0;
                for (int64_t j = 0; j < jn; j++)
                    acc[j] += a[q] * b[j];
            }
            for (int64_t j = 0; j < jn; j++)
                mm_store(m, o, i, j0 + j, acc[j]);
        }
}

static void mm_block(const mm_args *m, void *o)
{
    int32_t t = m->t;
    /* An empty output, or an empty sum (K == 0: alpha * 0 + beta * C):
     * the empty operands may have no storage, so no pointer is formed
     * from them (NULL + 0 is undefined; fuzz_run found it). */
    if (!m->M || !m->N)
        return;
    if (!m->K) {
        for (int64_t i = 0; i < m->M; i++)
            for (int64_t j = 0; j < m->N; j++)
                mm_store(m, o, i, j, 0.0);
        return;
    }
    if (t == OAC_T_FLOAT16 || t == OAC_T_BFLOAT16) {
        oac_mm16(m, o, OAC_MMPATH_AUTO);
        return;
    }
    if (t == OAC_T_FLOAT && m->ca == 1 && m->cb == 1 && !m->c && m->alpha == 1.0) {
        /* Row-major fast path: o[i, :] += a[i, q] * b[q, :]. */
        const float *a = (const float *)m->a + m->a0, *b = (const float *)m->b + m->b0;
        float *y = (float *)o + m->o0;
        for (int64_t i = 0; i < m->M; i++) {
            float *row = y + i * m->N;
            for (int64_t j = 0; j < m->N; j++)
                row[j] = 0.0f;
            for (int64_t q = 0; q < m->K; q++) {
                float aiq = a[i * m->ra + q];
                const float *bq = b + q * m->rb;
                for (int64_t j = 0; j < m->N; j++)
                    row[j] += aiq * bq[j];
            }
        }
        return;
    }
    bool f = oac_ek_is_float(t);
    if (f && m->ca == 1 && m->cb == 1) {
        mm_rows(m, o);
        return;
    }
    for (int64_t i = 0; i < m->M; i++)
        for (int64_t j = 0; j < m->N; j++) {
            uint64_t oi = (uint64_t)(m->o0 + i * m->N + j);
            int64_t pa = m->a0 + i * m->ra, pb = m->b0 + j * m->cb;
            if (f) {
                double acc = 0.0;
                for (int64_t q = 0; q < m->K; q++)
                    acc += oac_ek_getd(t, m->a, (uint64_t)(pa + q * m->ca)) *
                           oac_ek_getd(t, m->b, (uint64_t)(pb + q * m->rb));
                acc *= m->alpha;
                if (m->c)
                    acc += m->beta * oac_ek_getd(m->tc, m->c, (uint64_t)(m->c0 + i * m->rc +
                                                                         j * m->cc));
                oac_ek_setd(t, o, oi, acc);
            } else {
                uint64_t acc = 0;
                for (int64_t q = 0; q < m->K; q++)
                    acc += (uint64_t)oac_ek_geti(t, m->a, (uint64_t)(pa + q * m->ca)) *
                           (uint64_t)oac_ek_geti(t, m->b, (uint64_t)(pb + q * m->rb));
                oac_ek_seti(t, o, oi, (int64_t)acc);
            }
        }
}

/* ---- MatMul ------------------------------------------------------------ */

int oac_kernel_matmul(oac_kernel_call *k)
{
    const uint32_t types = OAC_EKM_FLOAT | OAC_EKM_INT;
    const oac_tensor *a = oac_kin_typed(k, 0, types);
    const oac_tensor *b = a ? oac_kin_typed(k, 1, types) : NULL;
    if (!b)
        return OAC_ERUNTIME;
    int rc = same_type(k, a, 1, b);
    if (rc)
        return rc;
    if (a->rank < 1 || b->rank < 1)
        return oac_kernel_error(k, oac_kin_name(k, a->rank < 1 ? 0 : 1),
                                "a scalar has no matrix product");
    /* Promote rank-1 operands as numpy does, and drop the added dim. */
    bool va = a->rank == 1, vb = b->rank == 1;
    int64_t M = va ? 1 : a->dims[a->rank - 2], K = a->dims[a->rank - 1];
    int64_t K2 = vb ? b->dims[0] : b->dims[b->rank - 2], N = vb ? 1 : b->dims[b->rank - 1];
    if (K != K2)
        return oac_kernel_error(k, oac_kin_name(k, 1),
                                "inner dims %" PRId64 " and %" PRId64 " differ", K, K2);
    /* Batch dims broadcast. */
    oac_tensor ab = { .rank = va ? 0 : a->rank - 2 }, bb = { .rank = vb ? 0 : b->rank - 2 };
    for (int d = 0; d < ab.rank; d++)
        ab.dims[d] = a->dims[d];
    for (int d = 0; d < bb.rank; d++)
        bb.dims[d] = b->dims[d];
    oac_bcast bc;
    const oac_tensor *ops[2] = { &ab, &bb };
    if ((rc = oac_bcast_init(k, &bc, 2, ops)))
        return rc;
    int64_t od[MAXR];
    int orank = 0;
    for (int i = 0; i < bc.rank; i++)
        od[orank++] = bc.dims[i];
    if (!va)
        od[orank++] = M;
    if (!vb)
        od[orank++] = N;
    if ((rc = work_ok(k, bc.count, M, N, K)))
        return rc;
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, a->elem_type, orank, od, &y)))
        return rc;
    if (!y->bytes)
        return OAC_OK;   /* no batch to run (an empty batch may be long) */
    mm_args m = { .t = a->elem_type, .a = a->data, .b = b->data, .M = M, .N = N, .K = K,
                  .ra = K, .ca = 1, .rb = N, .cb = 1, .alpha = 1.0 };
    for (uint64_t bt = 0; bt < bc.count; bt++, oac_bcast_next(&bc)) {
        m.a0 = bc.off[0] * M * K;
        m.b0 = bc.off[1] * K * N;
        m.o0 = (int64_t)bt * M * N;
        mm_block(&m, y->data);
    }
    return OAC_OK;
}

/* ---- Gemm -------------------------------------------------------------- */

/* Y = alpha * A' B' + beta * C, A' = transA ? A^T : A (rank 2), C
 * unidirectionally broadcast to [M, N]. */
int oac_kernel_gemm(oac_kernel_call *k)
{
    const oac_tensor *a = oac_kin_typed(k, 0, OAC_EKM_FLOAT);
    const oac_tensor *b = a ? oac_kin_typed(k, 1, OAC_EKM_FLOAT) : NULL;
    if (!b)
        return OAC_ERUNTIME;
    int rc;
    const oac_tensor *c = oac_kin_opt(k, 2, OAC_EKM_FLOAT, &rc);
    if (rc || (rc = same_type(k, a, 1, b)) || (c && (rc = same_type(k, a, 2, c))))
        return rc;
    if (a->rank != 2 || b->rank != 2)
        return oac_kernel_error(k, oac_kin_name(k, a->rank != 2 ? 0 : 1),
                                "rank %d where 2 is required", a->rank != 2 ? a->rank : b->rank);
    bool ta = oac_attr_int(k->node, "transA", 0) != 0;
    bool tb = oac_attr_int(k->node, "transB", 0) != 0;
    int64_t M = a->dims[ta], K = a->dims[!ta], K2 = b->dims[tb], N = b->dims[!tb];
    if (K != K2)
        return oac_kernel_error(k, oac_kin_name(k, 1),
                                "inner dims %" PRId64 " and %" PRId64 " differ", K, K2);
    int64_t cr = 0, cc = 0;
    if (c) {
        int64_t c0 = c->rank == 2 ? c->dims[0] : 1;
        int64_t c1 = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
        if (c->rank > 2 || (c0 != 1 && c0 != M) || (c1 != 1 && c1 != N))
            return oac_kernel_error(k, oac_kin_name(k, 2),
                                    "does not broadcast to [%" PRId64 ", %" PRId64 "]", M, N);
        cr = c0 == 1 ? 0 : c1;
        cc = c1 == 1 ? 0 : 1;
    }
    if ((rc = work_ok(k, 1, M, N, K)))
        return rc;
    int64_t od[2] = { M, N };
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, a->elem_type, 2, od, &y)))
        return rc;
    if (!y->bytes)
        return OAC_OK;
    mm_args m = { .t = a->elem_type, .a = a->data, .b = b->data, .M = M, .N = N, .K = K,
                  .ra = ta ? 1 : K, .ca = ta ? M : 1, .rb = tb ? 1 : N, .cb = tb ? K : 1,
                  .alpha = oac_attr_float(k->node, "alpha", 1.0f),
                  .beta = oac_attr_float(k->node, "beta", 1.0f),
                  .c = c ? c->data : NULL, .tc = c ? c->elem_type : 0, .rc = cr, .cc = cc };
    mm_block(&m, y->data);
    return OAC_OK;
}

/* ---- Softmax ----------------------------------------------------------- */

int oac_kernel_softmax(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kin_typed(k, 0, OAC_EKM_FLOAT);
    if (!x)
        return OAC_ERUNTIME;
    /* Opset 13: one axis (default -1).  Earlier: the input is coerced to
     * [prod(dims[:axis]), prod(dims[axis:])] (default axis 1) and each
     * row normalized. */
    bool old = oac_kernel_opset(k) < 13;
    int axis;
    int rc = oac_kernel_axis(k, "axis", oac_attr_int(k->node, "axis", old ? 1 : -1),
                             x->rank, &axis);
    if (rc)
        return rc;
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, x->elem_type, x->rank, x->dims, &y)))
        return rc;
    if (!y->bytes)
        return OAC_OK;   /* empty: its dims' products may overflow */
    int64_t outer = 1, inner = 1, n = 1;
    for (int i = 0; i < axis; i++)
        outer *= x->dims[i];
    for (int i = axis; i < x->rank; i++) {
        if (old || i == axis)
            n *= x->dims[i];
        else
            inner *= x->dims[i];
    }
    int32_t t = x->elem_type;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t q = 0; q < inner; q++) {
            uint64_t base = (uint64_t)(o * n * inner + q), st = (uint64_t)inner;
            double mx = -INFINITY, sum = 0.0;
            for (int64_t i = 0; i < n; i++) {
                double v = oac_ek_getd(t, x->data, base + (uint64_t)i * st);
                if (v > mx || v != v)
                    mx = v;
            }
            for (int64_t i = 0; i < n; i++)
                sum += exp(oac_ek_getd(t, x->data, base + (uint64_t)i * st) - mx);
            for (int64_t i = 0; i < n; i++) {
                uint64_t e = base + (uint64_t)i * st;
                oac_ek_setd(t, y->data, e, exp(oac_ek_getd(t, x->data, e) - mx) / sum);
            }
        }
    return OAC_OK;
}

/* ---- ReduceSum, ReduceMean, ReduceMax ---------------------------------- */

typedef enum redop { R_SUM, R_MEAN, R_MAX } redop;

/* The reduced axes of a Reduce* node: from input 1 from `input_opset` on,
 * else the `axes` attribute.  *all: reduce every axis; *noop: none. */
static int reduce_axes(oac_kernel_call *k, int rank, int64_t input_opset, bool *red,
                       bool *noop)
{
    int64_t axes[MAXR];
    size_t n = 0;
    int rc;
    if (oac_kernel_opset(k) >= input_opset) {
        if (k->n_in > 1 && k->in[1]) {
            const oac_tensor *t = oac_kin(k, 1);
            if (!t)
                return OAC_ERUNTIME;
            if (t->elem_type != OAC_T_INT64)
                return oac_kernel_bad_type(k, 1, t->elem_type);
            if (oac_ek_numel(t) > MAXR)
                return oac_kernel_error(k, oac_kin_name(k, 1), "more axes than rank %d", rank);
            if ((rc = oac_kernel_ints_in(k, 1, axes, MAXR, &n)))
                return rc;
        }
    } else {
        const Onnx__AttributeProto *a = oac_node_attr(k->node, "axes");
        if (a && a->n_ints > MAXR)
            return oac_kernel_error(k, "axes", "more axes than rank %d", rank);
        if (a) {
            n = a->n_ints;
            for (size_t i = 0; i < n; i++)
                axes[i] = a->ints[i];
        }
    }
    for (int d = 0; d < rank; d++)
        red[d] = false;
    *noop = false;
    if (!n) {
        if (oac_attr_int(k->node, "noop_with_empty_axes", 0))
            *noop = true;
        for (int d = 0; d < rank; d++)
            red[d] = !*noop;
        return OAC_OK;
    }
    for (size_t i = 0; i < n; i++) {
        int ax;
        if ((rc = oac_kernel_axis(k, "axes", axes[i], rank, &ax)))
            return rc;
        if (red[ax])
            return oac_kernel_error(k, "axes", "axis %" PRId64 " repeated", axes[i]);
        red[ax] = true;
    }
    return OAC_OK;
}

static int reduce(oac_kernel_call *k, redop op, uint32_t mask, int64_t input_opset)
{
    const oac_tensor *x = oac_kin_typed(k, 0, mask);
    if (!x)
        return OAC_ERUNTIME;
    bool red[MAXR], noop;
    int rc = reduce_axes(k, x->rank, input_opset, red, &noop);
    if (rc)
        return rc;
    bool keep = oac_attr_int(k->node, "keepdims", 1) != 0;
    int32_t t = x->elem_type;
    /* Kept dims (kd, strides ks) index the output; reduced ones (rd, rs)
     * each output's block. */
    int64_t od[MAXR], kd[MAXR], ks[MAXR], rd[MAXR], rs[MAXR];
    int orank = 0, nk = 0, nr = 0;
    uint64_t cnt = 1;
    int64_t strides[MAXR];
    oac_ek_strides(x->dims, x->rank, strides);
    for (int d = 0; d < x->rank; d++) {
        if (red[d]) {
            rd[nr] = x->dims[d];
            rs[nr++] = strides[d];
            cnt *= (uint64_t)x->dims[d];
            if (keep)
                od[orank++] = 1;
        } else {
            kd[nk] = x->dims[d];
            ks[nk++] = strides[d];
            od[orank++] = x->dims[d];
        }
    }
    bool f = oac_ek_is_float(t);
    if (op == R_MEAN && !f && !cnt)
        return oac_kernel_error(k, oac_kin_name(k, 0),
                                "the mean of an empty set of integers is undefined");
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, t, orank, od, &y)))
        return rc;
    uint64_t nout = oac_ek_numel(y);
    if (!cnt)
        nk = 0;   /* x is empty: every output is the empty set's value, and
                     x's strides are not walked (kernels/elem_io.h 6) */
    int64_t ki[MAXR] = { 0 }, base = 0;
    for (uint64_t o = 0; o < nout; o++) {
        int64_t ri[MAXR] = { 0 }, off = base;
        double acc = op == R_MAX ? -INFINITY : 0.0;
        uint64_t iacc = 0;
        int64_t imax = t == OAC_T_BOOL ? 0 : t == OAC_T_INT64 ? INT64_MIN :
                       t == OAC_T_INT32 ? INT32_MIN : t == OAC_T_INT16 ? INT16_MIN :
                       t == OAC_T_INT8 ? INT8_MIN : 0;
        for (uint64_t e = 0; e < cnt; e++) {
            if (f) {
                double v = oac_ek_getd(t, x->data, (uint64_t)off);
                if (op != R_MAX)
                    acc += v;
                else if (acc == acc && (v != v || v > acc))
                    acc = v;   /* NaN, once met, stays (numpy's maximum) */
            } else {
                int64_t v = oac_ek_geti(t, x->data, (uint64_t)off);
                if (op != R_MAX)
                    iacc += (uint64_t)v;
                else if (v > imax)
                    imax = v;
            }
            for (int d = nr - 1; d >= 0; d--) {
                ri[d]++;
                off += rs[d];
                if (ri[d] < rd[d])
                    break;
                off -= rs[d] * rd[d];
                ri[d] = 0;
            }
        }
        if (f)
            oac_ek_setd(t, y->data, o, op == R_MEAN ? acc / (double)cnt : acc);
        else
            oac_ek_seti(t, y->data, o, op == R_MAX ? imax : op == R_MEAN ?
                        (int64_t)iacc / (int64_t)cnt : (int64_t)iacc);
        for (int d = nk - 1; d >= 0; d--) {
            ki[d]++;
            base += ks[d];
            if (ki[d] < kd[d])
                break;
            base -= ks[d] * kd[d];
            ki[d] = 0;
        }
    }
    return OAC_OK;
}

int oac_kernel_reduce_sum(oac_kernel_call *k)
{
    return reduce(k, R_SUM, OAC_EKM_FLOAT | OAC_EKM_INT, 13);
}

int oac_kernel_reduce_mean(oac_kernel_call *k)
{
    return reduce(k, R_MEAN, OAC_EKM_FLOAT | OAC_EKM_INT, 18);
}

int oac_kernel_reduce_max(oac_kernel_call *k)
{
    return reduce(k, R_MAX, OAC_EKM_FLOAT | OAC_EKM_ANYINT | OAC_EKM_BOOL, 18);
}

/* kernel_shape.c: data-movement and shape kernels of the reference
 * runtime: Reshape, Transpose, Slice, Concat, Gather, Shape, Size,
 * Constant, Unsqueeze, Squeeze (contract section 5, the toy decoder's
 * ordinary operators).
 *
 * Owns ONNX semantics (opset 13+ forms: axes as inputs; older attribute
 * forms accepted too) for any element type whose size is a whole number
 * of bytes; sub-byte types are refused with operand-invalid.
 *
 * Invariants:
 *  1. Every index from a tensor (shape, starts, ends, indices, perm,
 *     axes) is range-checked before use; a bad one is operand-invalid
 *     naming the node.
 *  2. Outputs come from oac_kernel_output; nothing else is allocated,
 *     except Constant's payload, read straight into its output.
 *  3. A tensor with a zero dimension has no storage (data is NULL): no
 *     kernel copies from or into it, not even 0 bytes (memcpy's
 *     arguments must not be NULL whatever the length).
 */
#include <inttypes.h>
#include <string.h>

#include "runtime.h"

#define MAXR OAC_RT_MAX_RANK

static int esize(oac_kernel_call *k, const oac_tensor *t, size_t *out)
{
    unsigned bits = oac_elem_bits(t->elem_type);
    if (!bits || bits % 8)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s (%s): element type %s is not supported here",
                               k->node_name, k->node->op_type,
                               oac_elem_name(t->elem_type) ? oac_elem_name(t->elem_type) : "?");
    *out = bits / 8;
    return OAC_OK;
}

static void strides_of(const oac_tensor *t, int64_t *st)
{
    int64_t s = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        st[i] = s;
        s *= t->dims[i];
    }
}

/* dst[out index] = src[base + sum(idx[d] * sst[d])], elements of es bytes. */
static void gather_strided(uint8_t *dst, const uint8_t *src, size_t es, int rank,
                           const int64_t *odims, int64_t base, const int64_t *sst)
{
    uint64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= (uint64_t)odims[d];
    int64_t idx[MAXR] = { 0 }, off = base;
    for (uint64_t i = 0; i < n; i++) {
        memcpy(dst + i * es, src + (size_t)off * es, es);
        for (int d = rank - 1; d >= 0; d--) {
            idx[d]++;
            off += sst[d];
            if (idx[d] < odims[d])
                break;
            off -= sst[d] * odims[d];
            idx[d] = 0;
        }
    }
}

/* Same data, new shape (Reshape, Squeeze, Unsqueeze). */
static int reshaped(oac_kernel_call *k, const oac_tensor *x, int rank, const int64_t *dims)
{
    uint64_t n = 1, m;
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0 || oac_mul_overflow_u64(n, (uint64_t)dims[i], &n))
            return oac_kernel_fail(k, OAC_OPERAND_INVALID, "node %s: bad target shape",
                                   k->node_name);
    if (!oac_tensor_numel_rt(x, &m) || m != n)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s (%s): %" PRIu64 " elements cannot take a shape of %"
                               PRIu64, k->node_name, k->node->op_type, m, n);
    oac_tensor *y;
    int rc = oac_kernel_output(k, 0, x->elem_type, rank, dims, &y);
    if (rc)
        return rc;
    if (y->data != x->data && x->bytes)
        memcpy(y->data, x->data, x->bytes);
    return OAC_OK;
}

int oac_kernel_reshape(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kernel_tensor_in(k, 0);
    if (!x)
        return OAC_ERUNTIME;
    int64_t sh[MAXR];
    size_t n;
    int rc = oac_kernel_ints_in(k, 1, sh, MAXR, &n);
    if (rc)
        return rc;
    bool allowzero = oac_attr_int(k->node, "allowzero", 0) != 0;
    uint64_t total, known = 1;
    if (!oac_tensor_numel_rt(x, &total))
        return OAC_EINTERNAL;
    int infer = -1;
    for (size_t i = 0; i < n; i++) {
        if (sh[i] == 0 && !allowzero) {
            if ((int)i >= x->rank)
                return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                       "node %s (Reshape): 0 at %zu copies no dim", k->node_name, i);
            sh[i] = x->dims[i];
        }
        if (sh[i] == -1) {
            if (infer >= 0)
                return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                       "node %s (Reshape): two -1 dims", k->node_name);
            infer = (int)i;
            continue;
        }
        if (sh[i] < 0 || oac_mul_overflow_u64(known, (uint64_t)sh[i], &known))
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node %s (Reshape): bad dim %" PRId64, k->node_name, sh[i]);
    }
    if (infer >= 0) {
        if (!known || total % known)
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node %s (Reshape): cannot infer -1", k->node_name);
        sh[infer] = (int64_t)(total / known);
    }
    return reshaped(k, x, (int)n, sh);
}

int oac_kernel_transpose(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kernel_tensor_in(k, 0);
    size_t es;
    if (!x)
        return OAC_ERUNTIME;
    int rc = esize(k, x, &es);
    if (rc)
        return rc;
    int64_t perm[MAXR];
    const Onnx__AttributeProto *a = oac_node_attr(k->node, "perm");
    bool seen[MAXR] = { false };
    for (int i = 0; i < x->rank; i++)
        perm[i] = x->rank - 1 - i;
    if (a) {
        if (a->n_ints != (size_t)x->rank)
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node %s (Transpose): perm has %zu entries, rank %d",
                                   k->node_name, a->n_ints, x->rank);
        for (int i = 0; i < x->rank; i++)
            perm[i] = a->ints[i];
    }
    for (int i = 0; i < x->rank; i++) {
        if (perm[i] < 0 || perm[i] >= x->rank || seen[perm[i]])
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node %s (Transpose): perm is not a permutation", k->node_name);
        seen[perm[i]] = true;
    }
    int64_t st[MAXR], od[MAXR], ost[MAXR];
    strides_of(x, st);
    for (int i = 0; i < x->rank; i++) {
        od[i] = x->dims[perm[i]];
        ost[i] = st[perm[i]];
    }
    oac_tensor *y;
    if ((rc = oac_kernel_output(k, 0, x->elem_type, x->rank, od, &y)))
        return rc;
    gather_strided(y->data, x->data, es, x->rank, od, 0, ost);
    return OAC_OK;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int oac_kernel_slice(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kernel_tensor_in(k, 0);
    size_t es;
    if (!x)
        return OAC_ERUNTIME;
    int rc = esize(k, x, &es);
    if (rc)
        return rc;
    int64_t starts[MAXR], ends[MAXR], axes[MAXR], steps[MAXR];
    size_t ns, ne, na, nst;
    if ((rc = oac_kernel_ints_in(k, 1, starts, MAXR, &ns)) ||
        (rc = oac_kernel_ints_in(k, 2, ends, MAXR, &ne)))
        return rc;
    na = ns;
    for (size_t i = 0; i < na; i++)
        axes[i] = (int64_t)i;
    if (k->n_in > 3 && k->in[3] && (rc = oac_kernel_ints_in(k, 3, axes, MAXR, &na)))
        return rc;
    nst = ns;
    for (size_t i = 0; i < nst; i++)
        steps[i] = 1;
    if (k->n_in > 4 && k->in[4] && (rc = oac_kernel_ints_in(k, 4, steps, MAXR, &nst)))
        return rc;
    if (ne != ns || na != ns || nst != ns)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s (Slice): starts, ends, axes and steps differ in length",
                               k->node_name);
    int64_t st[MAXR], od[MAXR], ost[MAXR], base = 0;
    int64_t b[MAXR], stp[MAXR];
    bool seen[MAXR] = { false };
    strides_of(x, st);
    for (int d = 0; d < x->rank; d++) {
        b[d] = 0;
        stp[d] = 1;
        od[d] = x->dims[d];
    }
    for (size_t i = 0; i < ns; i++) {
        int64_t ax = axes[i] < 0 ? axes[i] + x->rank : axes[i];
        if (ax < 0 || ax >= x->rank || seen[ax] || steps[i] == 0)
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node %s (Slice): bad axis or zero step", k->node_name);
        seen[ax] = true;
        int64_t dim = x->dims[ax], s0 = starts[i], e0 = ends[i], sp = steps[i];
        /* Steps beyond the dim select at most one element: clamp them so
         * no stride product below can overflow. */
        sp = clamp64(sp, -dim - 1, dim + 1);
        if (s0 < 0)
            s0 = s0 < -dim ? 0 : s0 + dim;
        if (e0 < 0)
            e0 = e0 < -dim ? -1 : e0 + dim;
        int64_t len;
        if (sp > 0) {
            s0 = clamp64(s0, 0, dim);
            e0 = clamp64(e0, 0, dim);
            len = e0 > s0 ? (e0 - s0 - 1) / sp + 1 : 0;
        } else {
            s0 = clamp64(s0, -1, dim - 1);
            e0 = clamp64(e0, -1, dim - 1);
            len = s0 > e0 ? (s0 - e0 - 1) / -sp + 1 : 0;
        }
        b[ax] = s0;
        stp[ax] = len > 1 ? sp : 1;
        od[ax] = len;
    }
    for (int d = 0; d < x->rank; d++) {
        ost[d] = st[d] * stp[d];
        if (od[d])
            base += b[d] * st[d];
    }
    oac_tensor *y;
    if ((rc = oac_kernel_output(k, 0, x->elem_type, x->rank, od, &y)))
        return rc;
    if (y->bytes)
        gather_strided(y->data, x->data, es, x->rank, od, base, ost);
    return OAC_OK;
}

int oac_kernel_concat(oac_kernel_call *k)
{
    if (!k->n_in)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID, "node %s (Concat): no inputs",
                               k->node_name);
    const oac_tensor *x0 = oac_kernel_tensor_in(k, 0);
    size_t es;
    if (!x0)
        return OAC_ERUNTIME;
    int rc = esize(k, x0, &es);
    if (rc)
        return rc;
    int64_t axis = oac_attr_int(k->node, "axis", 0);
    if (axis < 0)
        axis += x0->rank;
    if (axis < 0 || axis >= x0->rank)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID, "node %s (Concat): axis out of range",
                               k->node_name);
    int64_t od[MAXR];
    memcpy(od, x0->dims, sizeof od);
    od[axis] = 0;
    for (size_t i = 0; i < k->n_in; i++) {
        const oac_tensor *x = oac_kernel_tensor_in(k, i);
        if (!x)
            return OAC_ERUNTIME;
        bool ok = x->elem_type == x0->elem_type && x->rank == x0->rank;
        for (int d = 0; ok && d < x0->rank; d++)
            ok = d == axis || x->dims[d] == x0->dims[d];
        if (!ok || oac_add_overflow_i64(od[axis], x->dims[axis], &od[axis]))
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node %s (Concat): input %zu does not match input 0",
                                   k->node_name, i);
    }
    oac_tensor *y;
    if ((rc = oac_kernel_output(k, 0, x0->elem_type, x0->rank, od, &y)))
        return rc;
    size_t outer = 1, inner = es;
    for (int d = 0; d < axis; d++)
        outer *= (size_t)od[d];
    for (int d = (int)axis + 1; d < x0->rank; d++)
        inner *= (size_t)od[d];
    size_t orow = (size_t)od[axis] * inner, off = 0;
    for (size_t i = 0; i < k->n_in; i++) {
        const oac_tensor *x = &k->in[i]->t;
        size_t run = (size_t)x->dims[axis] * inner;
        for (size_t o = 0; o < outer && run; o++)
            memcpy((uint8_t *)y->data + o * orow + off,
                   (const uint8_t *)x->data + o * run, run);
        off += run;
    }
    return OAC_OK;
}

int oac_kernel_gather(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kernel_tensor_in(k, 0);
    const oac_tensor *ix = x ? oac_kernel_tensor_in(k, 1) : NULL;
    size_t es;
    if (!ix)
        return OAC_ERUNTIME;
    int rc = esize(k, x, &es);
    if (rc)
        return rc;
    if (ix->elem_type != OAC_T_INT64 && ix->elem_type != OAC_T_INT32)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s (Gather): indices must be INT64 or INT32", k->node_name);
    int64_t axis = oac_attr_int(k->node, "axis", 0);
    if (axis < 0)
        axis += x->rank;
    if (axis < 0 || axis >= x->rank || x->rank - 1 + ix->rank > MAXR)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID, "node %s (Gather): bad axis or rank",
                               k->node_name);
    int64_t od[MAXR];
    int r = 0;
    for (int d = 0; d < axis; d++)
        od[r++] = x->dims[d];
    for (int d = 0; d < ix->rank; d++)
        od[r++] = ix->dims[d];
    for (int d = (int)axis + 1; d < x->rank; d++)
        od[r++] = x->dims[d];
    uint64_t ni;
    if (!oac_tensor_numel_rt(ix, &ni))
        return OAC_EINTERNAL;
    int64_t dim = x->dims[axis];
    for (uint64_t i = 0; i < ni; i++) {
        int64_t v = ix->elem_type == OAC_T_INT64 ? ((const int64_t *)ix->data)[i]
                                                 : ((const int32_t *)ix->data)[i];
        if (v < -dim || v >= dim)
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node %s (Gather): index %" PRId64 " out of [%" PRId64
                                   ", %" PRId64 ")", k->node_name, v, -dim, dim);
    }
    oac_tensor *y;
    if ((rc = oac_kernel_output(k, 0, x->elem_type, r, od, &y)))
        return rc;
    /* A zero dimension anywhere: nothing to copy, and no storage to copy
     * from or into (invariant 3). */
    if (!y->bytes)
        return OAC_OK;
    size_t outer = 1, inner = es;
    for (int d = 0; d < axis; d++)
        outer *= (size_t)x->dims[d];
    for (int d = (int)axis + 1; d < x->rank; d++)
        inner *= (size_t)x->dims[d];
    uint8_t *dst = y->data;
    for (size_t o = 0; o < outer; o++)
        for (uint64_t i = 0; i < ni; i++) {
            int64_t v = ix->elem_type == OAC_T_INT64 ? ((const int64_t *)ix->data)[i]
                                                     : ((const int32_t *)ix->data)[i];
            if (v < 0)
                v += dim;
            memcpy(dst, (const uint8_t *)x->data + (o * (size_t)dim + (size_t)v) * inner,
                   inner);
            dst += inner;
        }
    return OAC_OK;
}

/* Shape and Size read dims only (contract: they read no storage). */
int oac_kernel_shape(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kernel_tensor_in(k, 0);
    if (!x)
        return OAC_ERUNTIME;
    int64_t start = oac_attr_int(k->node, "start", 0);
    int64_t end = oac_attr_int(k->node, "end", x->rank);
    if (start < 0)
        start += x->rank;
    if (end < 0)
        end += x->rank;
    start = clamp64(start, 0, x->rank);
    end = clamp64(end, 0, x->rank);
    int64_t n = end > start ? end - start : 0;
    oac_tensor *y;
    int rc = oac_kernel_output(k, 0, OAC_T_INT64, 1, &n, &y);
    if (rc)
        return rc;
    if (n)
        memcpy(y->data, &x->dims[start], (size_t)n * sizeof(int64_t));
    return OAC_OK;
}

int oac_kernel_size(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kernel_tensor_in(k, 0);
    uint64_t n;
    if (!x)
        return OAC_ERUNTIME;
    if (!oac_tensor_numel_rt(x, &n) || n > INT64_MAX)
        return OAC_EINTERNAL;
    oac_tensor *y;
    int rc = oac_kernel_output(k, 0, OAC_T_INT64, 0, NULL, &y);
    if (rc)
        return rc;
    int64_t v = (int64_t)n;
    memcpy(y->data, &v, sizeof v);
    return OAC_OK;
}

int oac_kernel_constant(oac_kernel_call *k)
{
    const Onnx__NodeProto *n = k->node;
    const Onnx__AttributeProto *a;
    oac_tensor *y;
    int rc;
    if ((a = oac_node_attr(n, "value")) && a->t) {
        const Onnx__TensorProto *t = a->t;
        if (t->n_dims > MAXR)
            return oac_kernel_fail(k, OAC_OPERAND_INVALID, "node %s: rank too large",
                                   k->node_name);
        int64_t d[MAXR];
        for (size_t i = 0; i < t->n_dims; i++)
            d[i] = t->dims[i];
        if ((rc = oac_kernel_output(k, 0, t->data_type, (int)t->n_dims, d, &y)))
            return rc;
        if ((rc = oac_tensor_read(k->ctx, k->model, t, y->data, y->bytes)))
            return oac_kernel_fail(k, OAC_OPERAND_INVALID, "node %s (Constant): %s",
                                   k->node_name, oac_errmsg(k->ctx));
        return OAC_OK;
    }
    if ((a = oac_node_attr(n, "value_float"))) {
        if ((rc = oac_kernel_output(k, 0, OAC_T_FLOAT, 0, NULL, &y)))
            return rc;
        memcpy(y->data, &a->f, sizeof a->f);
        return OAC_OK;
    }
    if ((a = oac_node_attr(n, "value_int"))) {
        if ((rc = oac_kernel_output(k, 0, OAC_T_INT64, 0, NULL, &y)))
            return rc;
        memcpy(y->data, &a->i, sizeof a->i);
        return OAC_OK;
    }
    if ((a = oac_node_attr(n, "value_ints")) || (a = oac_node_attr(n, "value_floats"))) {
        bool ints = !strcmp(a->name, "value_ints");
        int64_t d = ints ? (int64_t)a->n_ints : (int64_t)a->n_floats;
        if ((rc = oac_kernel_output(k, 0, ints ? OAC_T_INT64 : OAC_T_FLOAT, 1, &d, &y)))
            return rc;
        if (y->bytes)
            memcpy(y->data, ints ? (const void *)a->ints : (const void *)a->floats, y->bytes);
        return OAC_OK;
    }
    return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                           "node %s (Constant): no value attribute the runtime reads",
                           k->node_name);
}

/* The axes of Squeeze/Unsqueeze: input 1 (opset 13) or attribute. */
static int axes_of(oac_kernel_call *k, int64_t *axes, size_t *n, bool *given)
{
    *n = 0;
    *given = false;
    if (k->n_in > 1 && k->in[1]) {
        *given = true;
        return oac_kernel_ints_in(k, 1, axes, MAXR, n);
    }
    const Onnx__AttributeProto *a = oac_node_attr(k->node, "axes");
    if (a) {
        if (a->n_ints > MAXR)
            return oac_kernel_fail(k, OAC_OPERAND_INVALID, "node %s: too many axes",
                                   k->node_name);
        *given = true;
        memcpy(axes, a->ints, a->n_ints * sizeof *axes);
        *n = a->n_ints;
    }
    return OAC_OK;
}

int oac_kernel_unsqueeze(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kernel_tensor_in(k, 0);
    if (!x)
        return OAC_ERUNTIME;
    int64_t axes[MAXR];
    size_t n;
    bool given;
    int rc = axes_of(k, axes, &n, &given);
    if (rc)
        return rc;
    int r = x->rank + (int)n;
    if (!given || r > MAXR)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s (Unsqueeze): missing axes or rank too large",
                               k->node_name);
    bool ins[MAXR] = { false };
    for (size_t i = 0; i < n; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
        if (a < 0 || a >= r || ins[a])
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node %s (Unsqueeze): bad axis %" PRId64, k->node_name,
                                   axes[i]);
        ins[a] = true;
    }
    int64_t od[MAXR];
    for (int d = 0, j = 0; d < r; d++)
        od[d] = ins[d] ? 1 : x->dims[j++];
    return reshaped(k, x, r, od);
}

int oac_kernel_squeeze(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kernel_tensor_in(k, 0);
    if (!x)
        return OAC_ERUNTIME;
    int64_t axes[MAXR];
    size_t n;
    bool given;
    int rc = axes_of(k, axes, &n, &given);
    if (rc)
        return rc;
    bool drop[MAXR] = { false };
    if (!given || !n) {
        for (int d = 0; d < x->rank; d++)
            drop[d] = x->dims[d] == 1;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + x->rank : axes[i];
        if (a < 0 || a >= x->rank || x->dims[a] != 1)
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node %s (Squeeze): axis %" PRId64 " is not a dim of 1",
                                   k->node_name, axes[i]);
        drop[a] = true;
    }
    int64_t od[MAXR];
    int r = 0;
    for (int d = 0; d < x->rank; d++)
        if (!drop[d])
            od[r++] = x->dims[d];
    return reshaped(k, x, r, od);
}

/* kernels/shape.c: data-movement and shape kernels of the reference
 * runtime: Reshape, Transpose, Slice (steps, negative too), Concat,
 * Gather, Shape (start/end), Size, Constant, Unsqueeze, Squeeze, Split
 * (opset 13 and 18 forms), Expand, Tile and Pad (constant, edge, reflect,
 * wrap).
 *
 * Owns ONNX semantics of those operators (docs/Operators.md; the forms of
 * every opset where inputs replaced attributes, by the model's opset or
 * by which ports are given) for any element type whose size is a whole
 * number of bytes: they move elements, never compute on them.  Sub-byte
 * types and STRING are unsupported-operator naming the type (contract 8).
 *
 * Contract: section 8 (element types, kernel-error), section 5.
 *
 * Invariants:
 *  1. Every index from a tensor or attribute (shape, starts, ends, steps,
 *     indices, perm, axes, split, repeats, pads) is range-checked before
 *     use and before the output is allocated; a bad one is kernel-error
 *     naming the node and the value.
 *  2. Outputs come from oac_kout (oac_kernel_output once the shape is
 *     checked); nothing else is allocated, no workspace.
 *  3. A tensor with a zero dimension has no storage (data is NULL): no
 *     kernel copies from or into it, not even 0 bytes (memcpy's
 *     arguments must not be NULL whatever the length).
 *  4. Output dims are products and sums of validated dims, checked for
 *     overflow (Tile, Pad, Concat); work is linear in the output.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/elem_io.h"

#define MAXR OAC_RT_MAX_RANK

static int esize(oac_kernel_call *k, size_t i, const oac_tensor *t, size_t *out)
{
    *out = oac_ek_size(t->elem_type);
    if (!*out || t->elem_type == OAC_T_STRING)
        return oac_kernel_bad_type(k, i, t->elem_type);
    return OAC_OK;
}

/* The data input (0) of a kernel that moves elements without reading
 * them: any type with a fixed size, and that size. */
static int data_in(oac_kernel_call *k, const oac_tensor **x, size_t *es)
{
    if (!(*x = oac_kin(k, 0)))
        return OAC_ERUNTIME;
    return esize(k, 0, *x, es);
}

static void strides_of(const oac_tensor *t, int64_t *st)
{
    oac_ek_strides(t->dims, t->rank, st);
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
    uint64_t n = 1, m = oac_ek_numel(x);
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0 || oac_mul_overflow_u64(n, (uint64_t)dims[i], &n))
            return oac_kernel_error(k, oac_kin_name(k, 1), "dim %d of the new shape is "
                                    "negative or overflows", i);
    if (m != n)
        return oac_kernel_error(k, oac_kin_name(k, 1),
                                "%" PRIu64 " elements cannot take a shape of %" PRIu64, m, n);
    oac_tensor *y;
    int rc = oac_kout(k, 0, x->elem_type, rank, dims, &y);
    if (rc)
        return rc;
    if (y->data != x->data && x->bytes)
        memcpy(y->data, x->data, x->bytes);
    return OAC_OK;
}

int oac_kernel_reshape(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kin(k, 0);
    if (!x)
        return OAC_ERUNTIME;
    int64_t sh[MAXR];
    size_t n;
    int rc = oac_kin_ints(k, 1, sh, MAXR, &n);
    if (rc)
        return rc;
    const char *what = oac_kin_name(k, 1);
    bool allowzero = oac_attr_int(k->node, "allowzero", 0) != 0;
    uint64_t total = oac_ek_numel(x), known = 1;
    int infer = -1;
    for (size_t i = 0; i < n; i++) {
        if (sh[i] == 0 && !allowzero) {
            if ((int)i >= x->rank)
                return oac_kernel_error(k, what, "0 at %zu copies no dim of a rank %d input",
                                        i, x->rank);
            sh[i] = x->dims[i];
        }
        if (sh[i] == -1) {
            if (infer >= 0)
                return oac_kernel_error(k, what, "two -1 dims");
            infer = (int)i;
            continue;
        }
        if (sh[i] < 0 || oac_mul_overflow_u64(known, (uint64_t)sh[i], &known))
            return oac_kernel_error(k, what, "dim %" PRId64 " is negative or overflows",
                                    sh[i]);
    }
    if (infer >= 0) {
        if (!known || total % known)
            return oac_kernel_error(k, what, "-1 cannot make %" PRIu64 " elements from %"
                                    PRIu64, total, known);
        sh[infer] = (int64_t)(total / known);
    }
    return reshaped(k, x, (int)n, sh);
}

int oac_kernel_transpose(oac_kernel_call *k)
{
    const oac_tensor *x;
    size_t es;
    int rc = data_in(k, &x, &es);
    if (rc)
        return rc;
    int64_t perm[MAXR];
    const Onnx__AttributeProto *a = oac_node_attr(k->node, "perm");
    bool seen[MAXR] = { false };
    for (int i = 0; i < x->rank; i++)
        perm[i] = x->rank - 1 - i;
    if (a) {
        if (a->n_ints != (size_t)x->rank)
            return oac_kernel_error(k, "perm", "%zu entries for rank %d", a->n_ints, x->rank);
        for (int i = 0; i < x->rank; i++)
            perm[i] = a->ints[i];
    }
    for (int i = 0; i < x->rank; i++) {
        if (perm[i] < 0 || perm[i] >= x->rank || seen[perm[i]])
            return oac_kernel_error(k, "perm", "not a permutation of 0..%d", x->rank - 1);
        seen[perm[i]] = true;
    }
    int64_t st[MAXR], od[MAXR], ost[MAXR];
    strides_of(x, st);
    for (int i = 0; i < x->rank; i++) {
        od[i] = x->dims[perm[i]];
        ost[i] = st[perm[i]];
    }
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, x->elem_type, x->rank, od, &y)))
        return rc;
    if (y->bytes)
        gather_strided(y->data, x->data, es, x->rank, od, 0, ost);
    return OAC_OK;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Integers of attribute `name` into v (at most MAXR); false when absent. */
static int attr_ints(oac_kernel_call *k, const char *name, int64_t *v, size_t *n,
                     bool *given)
{
    const Onnx__AttributeProto *a = oac_node_attr(k->node, name);
    *given = a != NULL;
    *n = 0;
    if (!a)
        return OAC_OK;
    if (a->n_ints > MAXR)
        return oac_kernel_error(k, name, "%zu values where at most %d are allowed",
                                a->n_ints, MAXR);
    for (size_t i = 0; i < a->n_ints; i++)
        v[i] = a->ints[i];
    *n = a->n_ints;
    return OAC_OK;
}

int oac_kernel_slice(oac_kernel_call *k)
{
    const oac_tensor *x;
    size_t es;
    int rc = data_in(k, &x, &es);
    if (rc)
        return rc;
    int64_t starts[MAXR], ends[MAXR], axes[MAXR], steps[MAXR];
    size_t ns, ne, na, nst;
    bool given_axes, given_steps = false, g;
    if (oac_kernel_opset(k) < 10) {
        /* Slice-1: starts, ends and axes are attributes. */
        if ((rc = attr_ints(k, "starts", starts, &ns, &g)) ||
            (rc = attr_ints(k, "ends", ends, &ne, &g)) ||
            (rc = attr_ints(k, "axes", axes, &na, &given_axes)))
            return rc;
    } else {
        if ((rc = oac_kin_ints(k, 1, starts, MAXR, &ns)) ||
            (rc = oac_kin_ints(k, 2, ends, MAXR, &ne)))
            return rc;
        given_axes = k->n_in > 3 && k->in[3];
        given_steps = k->n_in > 4 && k->in[4];
        if ((given_axes && (rc = oac_kin_ints(k, 3, axes, MAXR, &na))) ||
            (given_steps && (rc = oac_kin_ints(k, 4, steps, MAXR, &nst))))
            return rc;
    }
    if (!given_axes) {
        na = ns;
        for (size_t i = 0; i < na; i++)
            axes[i] = (int64_t)i;
    }
    if (!given_steps) {
        nst = ns;
        for (size_t i = 0; i < nst; i++)
            steps[i] = 1;
    }
    if (ne != ns || na != ns || nst != ns)
        return oac_kernel_error(k, oac_kin_name(k, 2),
                                "starts, ends, axes and steps differ in length");
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
        int ax;
        if ((rc = oac_kernel_axis(k, "axes", axes[i], x->rank, &ax)))
            return rc;
        if (seen[ax] || steps[i] == 0)
            return oac_kernel_error(k, seen[ax] ? "axes" : "steps",
                                    seen[ax] ? "axis %d repeated" : "step 0 on axis %d", ax);
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
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, x->elem_type, x->rank, od, &y)))
        return rc;
    if (!y->bytes)
        return OAC_OK;   /* then x is not empty either: st is exact */
    for (int d = 0; d < x->rank; d++) {
        ost[d] = st[d] * stp[d];
        base += b[d] * st[d];
    }
    gather_strided(y->data, x->data, es, x->rank, od, base, ost);
    return OAC_OK;
}

int oac_kernel_concat(oac_kernel_call *k)
{
    if (!k->n_in)
        return oac_kernel_error(k, "inputs", "no inputs");
    const oac_tensor *x0 = oac_kin(k, 0);
    size_t es;
    if (!x0)
        return OAC_ERUNTIME;
    int rc = esize(k, 0, x0, &es);
    if (rc)
        return rc;
    int axis;
    if ((rc = oac_kernel_axis(k, "axis", oac_attr_int(k->node, "axis", 0), x0->rank, &axis)))
        return rc;
    int64_t od[MAXR];
    memcpy(od, x0->dims, sizeof od);
    od[axis] = 0;
    for (size_t i = 0; i < k->n_in; i++) {
        const oac_tensor *x = oac_kin(k, i);
        if (!x)
            return OAC_ERUNTIME;
        bool ok = x->elem_type == x0->elem_type && x->rank == x0->rank;
        for (int d = 0; ok && d < x0->rank; d++)
            ok = d == axis || x->dims[d] == x0->dims[d];
        if (!ok || oac_add_overflow_i64(od[axis], x->dims[axis], &od[axis]))
            return oac_kernel_error(k, oac_kin_name(k, i),
                                    "type or shape does not match input 0 off axis %d", axis);
    }
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, x0->elem_type, x0->rank, od, &y)))
        return rc;
    size_t outer = 1, inner = es;
    for (int d = 0; d < axis; d++)
        outer *= (size_t)od[d];
    for (int d = axis + 1; d < x0->rank; d++)
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
    const oac_tensor *x = oac_kin(k, 0);
    const oac_tensor *ix = x ? oac_kin_typed(k, 1, OAC_EKM_INT) : NULL;
    size_t es;
    if (!ix)
        return OAC_ERUNTIME;
    int rc = esize(k, 0, x, &es);
    if (rc)
        return rc;
    int axis;
    if ((rc = oac_kernel_axis(k, "axis", oac_attr_int(k->node, "axis", 0), x->rank, &axis)))
        return rc;
    if (x->rank - 1 + ix->rank > MAXR)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s' (%s): an output of rank %d is above the reference "
                               "runtime's %d", k->node_name, k->node->op_type,
                               x->rank - 1 + ix->rank, MAXR);
    int64_t od[MAXR];
    int r = 0;
    for (int d = 0; d < axis; d++)
        od[r++] = x->dims[d];
    for (int d = 0; d < ix->rank; d++)
        od[r++] = ix->dims[d];
    for (int d = axis + 1; d < x->rank; d++)
        od[r++] = x->dims[d];
    uint64_t ni = oac_ek_numel(ix);
    int64_t dim = x->dims[axis];
    for (uint64_t i = 0; i < ni; i++) {
        int64_t v = oac_ek_geti(ix->elem_type, ix->data, i);
        if (v < -dim || v >= dim)
            return oac_kernel_error(k, oac_kin_name(k, 1),
                                    "index %" PRId64 " is out of [%" PRId64 ", %" PRId64 ")",
                                    v, -dim, dim);
    }
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, x->elem_type, r, od, &y)))
        return rc;
    /* A zero dimension anywhere: nothing to copy, and no storage to copy
     * from or into (invariant 3). */
    if (!y->bytes)
        return OAC_OK;
    size_t outer = 1, inner = es;
    for (int d = 0; d < axis; d++)
        outer *= (size_t)x->dims[d];
    for (int d = axis + 1; d < x->rank; d++)
        inner *= (size_t)x->dims[d];
    uint8_t *dst = y->data;
    for (size_t o = 0; o < outer; o++)
        for (uint64_t i = 0; i < ni; i++) {
            int64_t v = oac_ek_geti(ix->elem_type, ix->data, i);
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
    const oac_tensor *x = oac_kin(k, 0);
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
    int rc = oac_kout(k, 0, OAC_T_INT64, 1, &n, &y);
    if (rc)
        return rc;
    if (n)
        memcpy(y->data, &x->dims[start], (size_t)n * sizeof(int64_t));
    return OAC_OK;
}

int oac_kernel_size(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kin(k, 0);
    if (!x)
        return OAC_ERUNTIME;
    uint64_t n = oac_ek_numel(x);
    if (n > INT64_MAX)
        return OAC_EINTERNAL;
    oac_tensor *y;
    int rc = oac_kout(k, 0, OAC_T_INT64, 0, NULL, &y);
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
            return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                                   "node '%s' (%s): 'value': rank %zu is above the reference "
                                   "runtime's %d", k->node_name, n->op_type, t->n_dims, MAXR);
        int64_t d[MAXR];
        for (size_t i = 0; i < t->n_dims; i++)
            d[i] = t->dims[i];
        if ((rc = oac_kout(k, 0, t->data_type, (int)t->n_dims, d, &y)))
            return rc;
        if ((rc = oac_tensor_read(k->ctx, k->model, t, y->data, y->bytes)))
            return oac_kernel_error(k, "value", "%s", oac_errmsg(k->ctx));
        return OAC_OK;
    }
    if ((a = oac_node_attr(n, "value_float"))) {
        if ((rc = oac_kout(k, 0, OAC_T_FLOAT, 0, NULL, &y)))
            return rc;
        memcpy(y->data, &a->f, sizeof a->f);
        return OAC_OK;
    }
    if ((a = oac_node_attr(n, "value_int"))) {
        if ((rc = oac_kout(k, 0, OAC_T_INT64, 0, NULL, &y)))
            return rc;
        memcpy(y->data, &a->i, sizeof a->i);
        return OAC_OK;
    }
    if ((a = oac_node_attr(n, "value_ints")) || (a = oac_node_attr(n, "value_floats"))) {
        bool ints = !strcmp(a->name, "value_ints");
        int64_t d = ints ? (int64_t)a->n_ints : (int64_t)a->n_floats;
        if ((rc = oac_kout(k, 0, ints ? OAC_T_INT64 : OAC_T_FLOAT, 1, &d, &y)))
            return rc;
        if (y->bytes)
            memcpy(y->data, ints ? (const void *)a->ints : (const void *)a->floats, y->bytes);
        return OAC_OK;
    }
    return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                           "node '%s' (%s): no value attribute the reference runtime reads "
                           "(value, value_float(s), value_int(s))", k->node_name, n->op_type);
}

/* The axes of Squeeze/Unsqueeze: input 1 (opset 13) or attribute. */
static int axes_of(oac_kernel_call *k, int64_t *axes, size_t *n, bool *given)
{
    *n = 0;
    *given = false;
    if (k->n_in > 1 && k->in[1]) {
        *given = true;
        return oac_kin_ints(k, 1, axes, MAXR, n);
    }
    return attr_ints(k, "axes", axes, n, given);
}

int oac_kernel_unsqueeze(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kin(k, 0);
    if (!x)
        return OAC_ERUNTIME;
    int64_t axes[MAXR];
    size_t n;
    bool given;
    int rc = axes_of(k, axes, &n, &given);
    if (rc)
        return rc;
    int r = x->rank + (int)n;
    if (!given)
        return oac_kernel_error(k, "axes", "missing");
    if (r > MAXR)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s' (%s): an output of rank %d is above the reference "
                               "runtime's %d", k->node_name, k->node->op_type, r, MAXR);
    bool ins[MAXR] = { false };
    for (size_t i = 0; i < n; i++) {
        int a;
        if ((rc = oac_kernel_axis(k, "axes", axes[i], r, &a)))
            return rc;
        if (ins[a])
            return oac_kernel_error(k, "axes", "axis %" PRId64 " repeated", axes[i]);
        ins[a] = true;
    }
    int64_t od[MAXR];
    for (int d = 0, j = 0; d < r; d++)
        od[d] = ins[d] ? 1 : x->dims[j++];
    return reshaped(k, x, r, od);
}

int oac_kernel_squeeze(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kin(k, 0);
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
        int a;
        if ((rc = oac_kernel_axis(k, "axes", axes[i], x->rank, &a)))
            return rc;
        if (x->dims[a] != 1)
            return oac_kernel_error(k, "axes", "axis %" PRId64 " is a dim of %" PRId64
                                    ", not 1", axes[i], x->dims[a]);
        drop[a] = true;
    }
    int64_t od[MAXR];
    int r = 0;
    for (int d = 0; d < x->rank; d++)
        if (!drop[d])
            od[r++] = x->dims[d];
    return reshaped(k, x, r, od);
}

/* ---- Split ------------------------------------------------------------- */

/* Split (opsets 2/11: `split` attribute; 13: `split` input; 18: also
 * num_outputs): output i takes size_i rows of axis `axis` in order; without
 * sizes, chunks of ceil(dim / n) and a smaller last one (the ONNX
 * reference's rule). */
int oac_kernel_split(oac_kernel_call *k)
{
    const oac_tensor *x;
    size_t es;
    int rc = data_in(k, &x, &es);
    if (rc)
        return rc;
    int axis;
    if ((rc = oac_kernel_axis(k, "axis", oac_attr_int(k->node, "axis", 0), x->rank, &axis)))
        return rc;
    size_t n = k->n_out;
    int64_t dim = x->dims[axis];
    /* Sizes are read where they lie (attribute or tensor), not copied. */
    const Onnx__AttributeProto *sa = NULL;
    const oac_tensor *sp = NULL;
    if (oac_kernel_opset(k) < 13) {
        sa = oac_node_attr(k->node, "split");
    } else {
        sp = oac_kin_opt(k, 1, OAC_EKM_INT, &rc);
        if (rc)
            return rc;
    }
    const char *what = sa ? "split" : oac_kin_name(k, 1);
    uint64_t nsp = sa ? sa->n_ints : sp ? oac_ek_numel(sp) : 0;
    int64_t chunk = 0, last = 0;
    if (sa || sp) {
        if (nsp != n)
            return oac_kernel_error(k, what, "%" PRIu64 " sizes for %zu outputs", nsp, n);
        int64_t sum = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t v = sa ? sa->ints[i] : oac_ek_geti(sp->elem_type, sp->data, i);
            if (v < 0 || oac_add_overflow_i64(sum, v, &sum))
                return oac_kernel_error(k, what, "size %" PRId64 " is negative or overflows",
                                        v);
        }
        if (sum != dim)
            return oac_kernel_error(k, what, "sizes add up to %" PRId64 ", not the dim %"
                                    PRId64, sum, dim);
    } else {
        int64_t parts = oac_attr_int(k->node, "num_outputs", (int64_t)n);
        if (parts != (int64_t)n || !n)
            return oac_kernel_error(k, "num_outputs", "%" PRId64 " for %zu outputs", parts, n);
        chunk = dim / parts + (dim % parts != 0);
        last = dim - chunk * (parts - 1);
        if (last < 0)
            return oac_kernel_error(k, oac_kin_name(k, 0),
                                    "dim %" PRId64 " does not split in %" PRId64 " chunks of %"
                                    PRId64, dim, parts, chunk);
    }
    size_t outer = 1, inner = es;
    for (int d = 0; d < axis; d++)
        outer *= (size_t)x->dims[d];
    for (int d = axis + 1; d < x->rank; d++)
        inner *= (size_t)x->dims[d];
    int64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t len = sa ? sa->ints[i] : sp ? oac_ek_geti(sp->elem_type, sp->data, i)
                    : i + 1 < n ? chunk : last;
        if (oac_kout_wanted(k, i)) {
            int64_t od[MAXR];
            memcpy(od, x->dims, sizeof od);
            od[axis] = len;
            oac_tensor *y;
            if ((rc = oac_kout(k, i, x->elem_type, x->rank, od, &y)))
                return rc;
            size_t run = (size_t)len * inner;
            for (size_t o = 0; o < outer && run; o++)
                memcpy((uint8_t *)y->data + o * run,
                       (const uint8_t *)x->data + (o * (size_t)dim + (size_t)off) * inner, run);
        }
        off += len;
    }
    return OAC_OK;
}

/* ---- Expand, Tile ------------------------------------------------------ */

int oac_kernel_expand(oac_kernel_call *k)
{
    const oac_tensor *x;
    size_t es;
    int rc = data_in(k, &x, &es);
    if (rc)
        return rc;
    oac_tensor sh = { .elem_type = OAC_T_INT64 };
    size_t n;
    if ((rc = oac_kin_ints(k, 1, sh.dims, MAXR, &n)))
        return rc;
    sh.rank = (int)n;
    for (int d = 0; d < sh.rank; d++)
        if (sh.dims[d] < 0)
            return oac_kernel_error(k, oac_kin_name(k, 1), "dim %d is %" PRId64, d,
                                    sh.dims[d]);
    oac_bcast bc;
    const oac_tensor *ops[2] = { x, &sh };
    if ((rc = oac_bcast_init(k, &bc, 2, ops)))
        return rc;
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, x->elem_type, bc.rank, bc.dims, &y)))
        return rc;
    uint8_t *out = y->data;
    for (uint64_t i = 0; i < bc.count; i++, oac_bcast_next(&bc))
        memcpy(out + i * es, (const uint8_t *)x->data + (size_t)bc.off[0] * es, es);
    return OAC_OK;
}

int oac_kernel_tile(oac_kernel_call *k)
{
    const oac_tensor *x;
    size_t es;
    int rc = data_in(k, &x, &es);
    if (rc)
        return rc;
    int64_t rep[MAXR], od[MAXR], st[MAXR];
    size_t n;
    if ((rc = oac_kin_ints(k, 1, rep, MAXR, &n)))
        return rc;
    const char *what = oac_kin_name(k, 1);
    if (n != (size_t)x->rank)
        return oac_kernel_error(k, what, "%zu repeats for rank %d", n, x->rank);
    for (int d = 0; d < x->rank; d++) {
        uint64_t v;
        if (rep[d] < 0 || oac_mul_overflow_u64((uint64_t)x->dims[d], (uint64_t)rep[d], &v) ||
            v > INT64_MAX)
            return oac_kernel_error(k, what, "repeat %" PRId64 " of dim %d is negative or "
                                    "overflows", rep[d], d);
        od[d] = (int64_t)v;
    }
    strides_of(x, st);
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, x->elem_type, x->rank, od, &y)))
        return rc;
    uint64_t total = oac_ek_numel(y);
    int64_t idx[MAXR] = { 0 };
    uint8_t *out = y->data;
    /* total > 0 means every input dim is > 0. */
    for (uint64_t i = 0; i < total; i++) {
        int64_t off = 0;
        for (int d = 0; d < x->rank; d++)
            off += (idx[d] % x->dims[d]) * st[d];
        memcpy(out + i * es, (const uint8_t *)x->data + (size_t)off * es, es);
        for (int d = x->rank - 1; d >= 0; d--) {
            if (++idx[d] < od[d])
                break;
            idx[d] = 0;
        }
    }
    return OAC_OK;
}

/* ---- Pad --------------------------------------------------------------- */

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } pad_mode;

/* The source index of output index o along a dim of size n padded by
 * `before`, or -1 for the constant. */
static int64_t pad_src(pad_mode m, int64_t o, int64_t before, int64_t n)
{
    int64_t s = o - before;
    if (s >= 0 && s < n)
        return s;
    switch (m) {
    case PAD_CONSTANT: return -1;
    case PAD_EDGE: return s < 0 ? 0 : n - 1;
    case PAD_WRAP: return ((s % n) + n) % n;
    default: {
        /* numpy's reflect: period 2 (n - 1), mirrored without the edge. */
        if (n == 1)
            return 0;
        int64_t p = 2 * (n - 1), r = ((s % p) + p) % p;
        return r < n ? r : p - r;
    }
    }
}

int oac_kernel_pad(oac_kernel_call *k)
{
    const oac_tensor *x;
    size_t es;
    int rc = data_in(k, &x, &es);
    if (rc)
        return rc;
    char mbuf[16];
    const char *ms = oac_attr_string(k->node, "mode", "constant", mbuf, sizeof mbuf);
    pad_mode mode = !strcmp(ms, "constant") ? PAD_CONSTANT : !strcmp(ms, "reflect") ?
                    PAD_REFLECT : !strcmp(ms, "edge") ? PAD_EDGE : !strcmp(ms, "wrap") ?
                    PAD_WRAP : (pad_mode)-1;
    if ((int)mode < 0)
        return oac_kernel_error(k, "mode", "'%s' is not constant, reflect, edge or wrap", ms);
    int64_t pads[2 * MAXR], axes[MAXR];
    size_t np, na = 0;
    bool old = oac_kernel_opset(k) < 11, given_axes = false;
    uint8_t fill[8] = { 0 };
    const char *what = old ? "pads" : oac_kin_name(k, 1);
    if (old) {
        const Onnx__AttributeProto *a = oac_node_attr(k->node, "pads");
        if (!a || a->n_ints > 2 * MAXR)
            return oac_kernel_error(k, "pads", "missing or longer than twice the rank");
        np = a->n_ints;
        for (size_t i = 0; i < np; i++)
            pads[i] = a->ints[i];
        double v = oac_attr_float(k->node, "value", 0.0f);
        if (oac_ek_is_float(x->elem_type))
            oac_ek_setd(x->elem_type, fill, 0, v);
        else if (x->elem_type != OAC_T_STRING)
            oac_ek_seti(x->elem_type, fill, 0, (int64_t)(v != v ? 0 : v < -9e18 ? -9e18 :
                                                         v > 9e18 ? 9e18 : v));
    } else {
        if ((rc = oac_kin_ints(k, 1, pads, 2 * MAXR, &np)))
            return rc;
        const oac_tensor *cv = NULL;
        if (k->n_in > 2 && k->in[2]) {
            if (!(cv = oac_kin(k, 2)))
                return OAC_ERUNTIME;
            if (cv->elem_type != x->elem_type || oac_ek_numel(cv) != 1)
                return oac_kernel_error(k, oac_kin_name(k, 2),
                                        "not one element of the data's type");
            memcpy(fill, cv->data, es);
        }
        if (k->n_in > 3 && k->in[3]) {
            given_axes = true;
            if ((rc = oac_kin_ints(k, 3, axes, MAXR, &na)))
                return rc;
        }
    }
    if (!given_axes) {
        na = (size_t)x->rank;
        for (size_t i = 0; i < na; i++)
            axes[i] = (int64_t)i;
    }
    if (np != 2 * na)
        return oac_kernel_error(k, what, "%zu pads for %zu axes", np, na);
    int64_t pb[MAXR] = { 0 }, od[MAXR], st[MAXR];
    bool seen[MAXR] = { false };
    memcpy(od, x->dims, sizeof od);
    for (size_t i = 0; i < na; i++) {
        int a;
        if ((rc = oac_kernel_axis(k, "axes", axes[i], x->rank, &a)))
            return rc;
        if (seen[a])
            return oac_kernel_error(k, "axes", "axis %d repeated", a);
        seen[a] = true;
        int64_t d;
        /* A side removes at most the dim (so no index below overflows). */
        if (pads[i] < -x->dims[a] || pads[i + na] < -x->dims[a] ||
            oac_add_overflow_i64(x->dims[a], pads[i], &d) ||
            oac_add_overflow_i64(d, pads[i + na], &d) || d < 0)
            return oac_kernel_error(k, what, "axis %d: %" PRId64 " + %" PRId64 " + %" PRId64
                                    " is negative or overflows", a, pads[i], x->dims[a],
                                    pads[i + na]);
        if (mode != PAD_CONSTANT && !x->dims[a] && d)
            return oac_kernel_error(k, oac_kin_name(k, 0),
                                    "axis %d is empty: mode %s has nothing to repeat", a, ms);
        pb[a] = pads[i];
        od[a] = d;
    }
    strides_of(x, st);
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, x->elem_type, x->rank, od, &y)))
        return rc;
    uint64_t total = oac_ek_numel(y);
    int64_t idx[MAXR] = { 0 };
    uint8_t *out = y->data;
    for (uint64_t i = 0; i < total; i++) {
        int64_t off = 0;
        bool inside = true;
        for (int d = 0; d < x->rank && inside; d++) {
            int64_t s = pad_src(mode, idx[d], pb[d], x->dims[d]);
            inside = s >= 0;
            off += s * st[d];
        }
        memcpy(out + i * es, inside ? (const uint8_t *)x->data + (size_t)off * es : fill, es);
        for (int d = x->rank - 1; d >= 0; d--) {
            if (++idx[d] < od[d])
                break;
            idx[d] = 0;
        }
    }
    return OAC_OK;
}

/* check/infer.c: per-operator shape inference (the .infer column of ops.def).
 *
 * Owns: the rules that give a node's output types from its input types
 * (and, for Reshape, Slice, Unsqueeze, Squeeze, the known values of shape
 * inputs).  Contract: section 2 (the cache updates' output 0 has input
 * 0's type), section 3 ("type and shape learned for one name hold for all
 * members" needs outputs typed), section 4 (bytes at the dims known).
 *
 * Invariants:
 *  1. A rule only fills c->out; it never reports a finding (operand types
 *     are judged in check/shapes.c, where the graph is in view).  An operator
 *     without a rule in its row, or an input a rule cannot read, leaves
 *     the outputs unknown: never an error.
 *  2. A dimension a rule cannot compute is a fresh anonymous symbol, not a
 *     guess: a static dim is written only when it is certain.
 *  3. Arithmetic on dimensions is overflow-checked (Concat sums, Reshape
 *     products); overflow makes the dimension unknown.
 *  4. A rule writes output 0's dims into c->scratch (set_out) or shares
 *     an input's array; input arrays are interned and read-only
 *     (check/shapes_store.h invariant 7), and the pass interns the scratch after the
 *     folding rule has read it.  Outputs past 0 (Split, attention's
 *     present caches) are typed through set_out_k, which interns their
 *     dims at once, or share an input's array.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "op_fns.h"
#include "check/shapes.h"

/* ---- helpers ---- */

static const oac_vshape *tin(const oac_infer *c, size_t i)
{
    if (i >= c->n_in || !c->in[i] || c->in[i]->kind != OAC_VK_TENSOR ||
        c->in[i]->quantized)
        return NULL;
    return c->in[i];
}

static const oac_known *kin(const oac_infer *c, size_t i)
{
    return i < c->n_in ? c->in_known[i] : NULL;
}

/* Type output 0: a tensor of elem with rank dims, which the rule writes
 * through *dims (c->scratch; NULL when the rank is unknown or there is no
 * output 0).  Other outputs: set_out_k. */
static int set_out(oac_infer *c, int32_t elem, int32_t rank, oac_dimref **dims)
{
    if (dims)
        *dims = NULL;
    if (!c->n_out)
        return OAC_OK;
    c->out[0] = (oac_vshape){ .kind = OAC_VK_TENSOR, .elem_type = elem,
                              .rank = -1 };
    if (rank < 0 || rank > OAC_SHAPE_MAX_RANK)
        return OAC_OK;
    c->out[0].rank = rank;
    c->out[0].dims = c->scratch;
    if (dims)
        *dims = c->scratch;
    return OAC_OK;
}

/* Type output k (any k; outputs past the node's are ignored) as a tensor
 * of elem with rank dims d (rank < 0: unknown).  Output 0 goes through
 * the scratch as set_out; the others are interned here (their arrays
 * cannot share the scratch). */
static int set_out_k(oac_infer *c, size_t k, int32_t elem, int32_t rank,
                     const oac_dimref *d)
{
    if (k >= c->n_out)
        return OAC_OK;
    if (k == 0) {
        oac_dimref *o;
        int rc = set_out(c, elem, rank, &o);
        if (!rc && o && o != d)
            oac_shapes_copy(o, d, (size_t)rank * sizeof *o);
        return rc;
    }
    c->out[k] = (oac_vshape){ .kind = OAC_VK_TENSOR, .elem_type = elem,
                              .rank = -1 };
    if (rank < 0 || rank > OAC_SHAPE_MAX_RANK)
        return OAC_OK;
    const oac_dimref *in = oac_shapes_intern(c->sh, d, (size_t)rank);
    if (!in)
        return OAC_ENOMEM;
    c->out[k].rank = (int16_t)rank;
    c->out[k].dims = in;
    return OAC_OK;
}

/* Outputs 0..n-1 as tensors of elem of unknown rank: what an operator's
 * rule gives when its inputs do not fit its shapes. */
static int outs_rank_unknown(oac_infer *c, size_t n, int32_t elem)
{
    int rc = OAC_OK;
    for (size_t k = 0; k < n && !rc; k++)
        rc = set_out_k(c, k, elem, -1, NULL);
    return rc;
}

static int fresh(oac_infer *c, oac_dimref *d)
{
    return oac_shapes_fresh(c->sh, d);
}

static int64_t dimv(const oac_infer *c, oac_dimref d)
{
    return oac_shapes_dim(c->sh, d);
}

/* Integer list from an attribute, or from a known input (opset-dependent
 * ops moved attributes to inputs).  false when neither is available. */
static bool ints_of(const oac_infer *c, const char *attr, size_t port,
                    const int64_t **v, size_t *n)
{
    const Onnx__AttributeProto *a = attr ? oac_node_attr(c->proto, attr) : NULL;
    if (a && (a->n_ints || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)) {
        *v = a->ints;
        *n = a->n_ints;
        return true;
    }
    const oac_known *k = kin(c, port);
    if (k && k->rank <= 1) {
        *v = k->v;
        *n = k->n;
        return true;
    }
    return false;
}

static bool norm_axis(int64_t axis, int32_t rank, int32_t *out)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return false;
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return true;
}

/* ---- rules ---- */

/* Output 0 has input 0's type (cache updates, Identity, unary maths). */
int oac_infer_same(oac_infer *c)
{
    if (c->n_in && c->in[0] && c->n_out)
        c->out[0] = *c->in[0];
    return OAC_OK;
}

int oac_infer_cast(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0);
    if (!x || !c->n_out)
        return OAC_OK;
    c->out[0] = *x;
    c->out[0].elem_type = (int32_t)oac_attr_int(c->proto, "to", 0);
    return OAC_OK;
}

/* The dims broadcasting gives when they are one input's array as it is
 * (a residual add of equal shapes, a tensor times a scalar), else NULL:
 * every input of the full rank shares one (interned) array, the others
 * have only static 1s, and no symbol of the array is bound to 1 (the
 * general rule writes a static 1 for those).  Interned arrays are
 * read-only, so the output may share it (invariant 4). */
static const oac_dimref *broadcast_same(const oac_infer *c, size_t first,
                                        int32_t rank)
{
    const oac_dimref *full = NULL;
    for (size_t i = first; i < c->n_in; i++) {
        const oac_vshape *x = c->in[i];
        if (x->rank == rank && (!full || x->dims == full)) {
            full = x->dims;
            continue;
        }
        for (int32_t k = 0; k < x->rank; k++)
            if (x->dims[k] != 1)
                return NULL;
    }
    for (int32_t k = 0; full && k < rank; k++)
        if (OAC_DIM_IS_SYM(full[k]) && dimv(c, full[k]) == 1)
            return NULL;
    return full;
}

/* Multidirectional (numpy) broadcasting over all inputs; elem type of
 * input `elem_from` unless out_elem is set. */
static int broadcast(oac_infer *c, size_t first, int32_t out_elem,
                     size_t elem_from)
{
    int32_t rank = 0;
    for (size_t i = first; i < c->n_in; i++) {
        const oac_vshape *x = tin(c, i);
        if (!x || x->rank < 0)
            return set_out(c, out_elem ? out_elem :
                           (tin(c, elem_from) ? tin(c, elem_from)->elem_type : 0),
                           -1, NULL);
        if (x->rank > rank)
            rank = x->rank;
    }
    oac_dimref *d;
    const oac_vshape *ef = tin(c, elem_from);
    int rc = set_out(c, out_elem ? out_elem : (ef ? ef->elem_type : 0),
                     rank, &d);
    if (rc || !d)
        return rc;
    const oac_dimref *same = broadcast_same(c, first, rank);
    if (same) {
        c->out[0].dims = same;
        return OAC_OK;
    }
    for (int32_t k = 0; k < rank; k++) {
        /* Axis k from the right in every input. */
        bool have = false, sym_any = false, conflict = false;
        oac_dimref best = 1, sym = 0;
        int64_t val = 1;
        for (size_t i = first; i < c->n_in; i++) {
            const oac_vshape *x = tin(c, i);
            int32_t j = x->rank - rank + k;
            if (j < 0)
                continue;
            oac_dimref r = x->dims[j];
            int64_t v = dimv(c, r);
            if (v == 1)
                continue;
            if (v >= 0) {
                if (have && val != v)
                    conflict = true;
                have = true;
                val = v;
                best = r;
            } else if (!sym_any) {
                sym_any = true;
                sym = r;
            } else if (sym != r) {
                conflict = true;   /* two unknowns: either may be 1 */
            }
        }
        if (have && !conflict)
            d[k] = best;
        else if (!have && sym_any && !conflict)
            d[k] = sym;
        else if (!have && !sym_any)
            d[k] = 1;
        else if ((rc = fresh(c, &d[k])))
            return rc;
    }
    return OAC_OK;
}

int oac_infer_bcast(oac_infer *c) { return broadcast(c, 0, 0, 0); }
int oac_infer_compare(oac_infer *c) { return broadcast(c, 0, 9 /* BOOL */, 0); }
int oac_infer_where(oac_infer *c) { return broadcast(c, 0, 0, 1); }

int oac_infer_matmul(oac_infer *c)
{
    const oac_vshape *a = tin(c, 0), *b = tin(c, 1);
    if (!a || !b)
        return OAC_OK;
    if (a->rank < 1 || b->rank < 1)
        return set_out(c, a->elem_type, -1, NULL);
    /* Batch dims broadcast; then [.., M, K] x [.., K, N]. */
    int32_t ba = a->rank >= 2 ? a->rank - 2 : 0;
    int32_t bb = b->rank >= 2 ? b->rank - 2 : 0;
    int32_t batch = ba > bb ? ba : bb;
    int32_t rank = batch + (a->rank >= 2) + (b->rank >= 2);
    oac_dimref *d;
    int rc = set_out(c, a->elem_type, rank, &d);
    if (rc || !d)
        return rc;
    for (int32_t k = 0; k < batch; k++) {
        int32_t ja = ba - batch + k, jb = bb - batch + k;
        oac_dimref da = ja >= 0 ? a->dims[ja] : 1;
        oac_dimref db = jb >= 0 ? b->dims[jb] : 1;
        if (da == db) {
            d[k] = da;      /* what every case below gives */
            continue;
        }
        int64_t va = dimv(c, da), vb = dimv(c, db);
        if (va == 1)
            d[k] = db;
        else if (vb == 1 || da == db)
            d[k] = da;
        else if (va >= 0 && va == vb)
            d[k] = da;
        else if ((rc = fresh(c, &d[k])))
            return rc;
    }
    int32_t k = batch;
    if (a->rank >= 2)
        d[k++] = a->dims[a->rank - 2];
    if (b->rank >= 2)
        d[k++] = b->dims[b->rank - 1];
    return OAC_OK;
}

int oac_infer_transpose(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0);
    if (!x)
        return OAC_OK;
    if (x->rank < 0)
        return set_out(c, x->elem_type, -1, NULL);
    const Onnx__AttributeProto *a = oac_node_attr(c->proto, "perm");
    oac_dimref *d;
    if (a && a->n_ints != (size_t)x->rank)
        return set_out(c, x->elem_type, -1, NULL);
    int rc = set_out(c, x->elem_type, x->rank, &d);
    if (rc || !d)
        return rc;
    for (int32_t k = 0; k < x->rank; k++) {
        int64_t src = a ? a->ints[k] : x->rank - 1 - k;
        if (src < 0 || src >= x->rank)
            return set_out(c, x->elem_type, -1, NULL);
        d[k] = x->dims[src];
    }
    return OAC_OK;
}

int oac_infer_reshape(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0);
    const oac_known *s = kin(c, 1);
    int32_t elem = x ? x->elem_type : 0;
    if (!s || s->rank != 1 || s->n > OAC_SHAPE_MAX_RANK)
        return x ? set_out(c, elem, -1, NULL) : OAC_OK;
    bool allowzero = oac_attr_int(c->proto, "allowzero", 0) != 0;
    oac_dimref *d;
    int rc = set_out(c, elem, (int32_t)s->n, &d);
    if (rc || !d)
        return rc;
    long minus = -1;
    for (size_t k = 0; k < s->n; k++) {
        int64_t v = s->v[k];
        if (v == -1 && minus < 0) {
            minus = (long)k;
        } else if (v == 0 && !allowzero) {
            if (x && x->rank > (int32_t)k)
                d[k] = x->dims[k];
            else if ((rc = fresh(c, &d[k])))
                return rc;
        } else if (v >= 0) {
            d[k] = v;
        } else {
            return set_out(c, elem, -1, NULL);   /* invalid: stay unknown */
        }
    }
    if (minus < 0)
        return OAC_OK;
    /* -1: total / product of the others, when all are known. */
    uint64_t total = 1, rest = 1;
    bool ok = x && x->rank >= 0;
    for (int32_t k = 0; ok && k < x->rank; k++) {
        int64_t v = dimv(c, x->dims[k]);
        ok = v >= 0 && !oac_mul_overflow_u64(total, (uint64_t)v, &total);
    }
    for (size_t k = 0; ok && k < s->n; k++) {
        if ((long)k == minus)
            continue;
        int64_t v = dimv(c, d[k]);
        ok = v >= 0 && !oac_mul_overflow_u64(rest, (uint64_t)v, &rest);
    }
    if (ok && rest && total % rest == 0 && total / rest <= INT64_MAX)
        d[minus] = (int64_t)(total / rest);
    else if ((rc = fresh(c, &d[minus])))
        return rc;
    return OAC_OK;
}

/* Slice: opset >= 10 reads starts/ends/axes/steps from inputs 1-4,
 * earlier opsets from attributes. */
int oac_infer_slice(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0);
    if (!x)
        return OAC_OK;
    if (x->rank < 0)
        return set_out(c, x->elem_type, -1, NULL);
    const int64_t *st, *en, *ax = NULL, *sp = NULL;
    size_t nst, nen, nax = 0, nsp = 0;
    bool old = c->opset < 10;
    bool ok = ints_of(c, old ? "starts" : NULL, 1, &st, &nst) &&
              ints_of(c, old ? "ends" : NULL, 2, &en, &nen) && nst == nen;
    bool have_axes = old ? oac_node_attr(c->proto, "axes") != NULL :
                           (c->n_in > 3 && c->proto->input[3][0]);
    bool have_steps = !old && c->n_in > 4 && c->proto->input[4][0];
    if (ok && have_axes)
        ok = ints_of(c, old ? "axes" : NULL, 3, &ax, &nax) && nax == nst;
    if (ok && have_steps)
        ok = ints_of(c, NULL, 4, &sp, &nsp) && nsp == nst;
    oac_dimref *d;
    int rc = set_out(c, x->elem_type, x->rank, &d);
    if (rc || !d)
        return rc;
    oac_shapes_copy(d, x->dims, (size_t)x->rank * sizeof *d);
    if (!ok) {
        /* Which axes change is unknown: only the rank is certain. */
        for (int32_t k = 0; k < x->rank; k++)
            if ((rc = fresh(c, &d[k])))
                return rc;
        return OAC_OK;
    }
    for (size_t i = 0; i < nst; i++) {
        int32_t a;
        if (!norm_axis(ax ? ax[i] : (int64_t)i, x->rank, &a))
            return set_out(c, x->elem_type, -1, NULL);
        int64_t step = sp ? sp[i] : 1;
        int64_t n = dimv(c, x->dims[a]);
        if (step == 0)
            return set_out(c, x->elem_type, -1, NULL);
        if (n < 0) {
            if ((rc = fresh(c, &d[a])))
                return rc;
            continue;
        }
        /* ONNX clamping: negative indices count from the end. */
        int64_t s = st[i], e = en[i];
        if (s < 0) s = s < -n ? 0 : s + n;
        if (e < 0) e = e < -n ? (step > 0 ? 0 : -1) : e + n;
        if (step > 0) {
            if (s > n) s = n;
            if (e > n) e = n;
        } else {
            if (s > n - 1) s = n - 1;
            if (e > n - 1) e = n - 1;
            if (s < 0) s = -1;
        }
        int64_t len = 0;
        if (step > 0 && e > s)
            len = (e - s - 1) / step + 1;
        else if (step < 0 && s > e)   /* -step would overflow for INT64_MIN */
            len = step == INT64_MIN ? 1 : (s - e - 1) / (-step) + 1;
        d[a] = len;
    }
    return OAC_OK;
}

int oac_infer_concat(oac_infer *c)
{
    const oac_vshape *f = NULL;
    for (size_t i = 0; i < c->n_in && !f; i++)
        if (tin(c, i) && tin(c, i)->rank >= 0)
            f = tin(c, i);
    const oac_vshape *e0 = tin(c, 0);
    int32_t elem = e0 ? e0->elem_type : 0;
    if (!f)
        return set_out(c, elem, -1, NULL);
    int32_t axis;
    if (!norm_axis(oac_attr_int(c->proto, "axis", 0), f->rank, &axis))
        return set_out(c, elem, -1, NULL);
    oac_dimref *d;
    int rc = set_out(c, elem, f->rank, &d);
    if (rc || !d)
        return rc;
    oac_shapes_copy(d, f->dims, (size_t)f->rank * sizeof *d);
    int64_t sum = 0;
    bool ok = true;
    for (size_t i = 0; i < c->n_in && ok; i++) {
        const oac_vshape *x = tin(c, i);
        if (!x || x->rank != f->rank) {
            ok = false;
            break;
        }
        int64_t v = dimv(c, x->dims[axis]);
        ok = v >= 0 && !oac_add_overflow_i64(sum, v, &sum);
    }
    if (ok)
        d[axis] = sum;
    else if ((rc = fresh(c, &d[axis])))
        return rc;
    return OAC_OK;
}

int oac_infer_gather(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0), *idx = tin(c, 1);
    if (!x)
        return OAC_OK;
    if (x->rank < 1 || !idx || idx->rank < 0)
        return set_out(c, x->elem_type, -1, NULL);
    int32_t axis;
    if (!norm_axis(oac_attr_int(c->proto, "axis", 0), x->rank, &axis))
        return set_out(c, x->elem_type, -1, NULL);
    int32_t rank = x->rank - 1 + idx->rank;
    oac_dimref *d;
    int rc = set_out(c, x->elem_type, rank, &d);
    if (rc || !d)
        return rc;
    int32_t k = 0;
    for (int32_t j = 0; j < axis; j++)
        d[k++] = x->dims[j];
    for (int32_t j = 0; j < idx->rank; j++)
        d[k++] = idx->dims[j];
    for (int32_t j = axis + 1; j < x->rank; j++)
        d[k++] = x->dims[j];
    return OAC_OK;
}

/* Shape (opset 15: start/end attributes clamp the slice of dims). */
static bool shape_range(const oac_infer *c, int32_t rank, int32_t *b, int32_t *e)
{
    int64_t s = oac_attr_int(c->proto, "start", 0);
    int64_t t = oac_attr_int(c->proto, "end", rank);
    if (s < 0) s += rank;
    if (t < 0) t += rank;
    if (s < 0) s = 0;
    if (t > rank) t = rank;
    if (s > rank) s = rank;
    if (t < s) t = s;
    *b = (int32_t)s;
    *e = (int32_t)t;
    return true;
}

int oac_infer_shape(oac_infer *c)
{
    const oac_vshape *x = c->n_in ? c->in[0] : NULL;
    oac_dimref *d;
    if (!x || x->kind != OAC_VK_TENSOR || x->rank < 0) {
        int rc = set_out(c, 7 /* INT64 */, 1, &d);
        if (!rc && d)
            rc = fresh(c, &d[0]);
        return rc;
    }
    int32_t b, e;
    shape_range(c, x->rank, &b, &e);
    int rc = set_out(c, 7, 1, &d);
    if (!rc && d)
        d[0] = e - b;
    return rc;
}

int oac_infer_size(oac_infer *c)
{
    return set_out(c, 7, 0, NULL);
}

int oac_infer_constant(oac_infer *c)
{
    const Onnx__NodeProto *n = c->proto;
    for (size_t i = 0; i < n->n_attribute; i++) {
        const Onnx__AttributeProto *a = n->attribute[i];
        if (!a->name)
            continue;
        oac_dimref *d;
        int rc;
        if (!strcmp(a->name, "value") && a->t) {
            const Onnx__TensorProto *t = a->t;
            for (size_t k = 0; k < t->n_dims; k++)
                if (t->dims[k] < 0)
                    return set_out(c, t->data_type, -1, NULL);
            if (t->n_dims > OAC_SHAPE_MAX_RANK)
                return set_out(c, t->data_type, -1, NULL);
            rc = set_out(c, t->has_data_type ? t->data_type : 0,
                         (int32_t)t->n_dims, &d);
            if (!rc && d)
                oac_shapes_copy(d, t->dims, t->n_dims * sizeof *d);
            return rc;
        }
        if (!strcmp(a->name, "value_int"))
            return set_out(c, 7, 0, NULL);
        if (!strcmp(a->name, "value_float"))
            return set_out(c, 1, 0, NULL);
        if (!strcmp(a->name, "value_ints") || !strcmp(a->name, "value_floats")) {
            bool ints = !strcmp(a->name, "value_ints");
            rc = set_out(c, ints ? 7 : 1, 1, &d);
            if (!rc && d)
                d[0] = (int64_t)(ints ? a->n_ints : a->n_floats);
            return rc;
        }
    }
    return OAC_OK;
}

int oac_infer_unsqueeze(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0);
    if (!x)
        return OAC_OK;
    const int64_t *ax;
    size_t nax;
    if (x->rank < 0 || !ints_of(c, "axes", 1, &ax, &nax) ||
        nax > OAC_SHAPE_MAX_RANK)
        return set_out(c, x->elem_type, -1, NULL);
    int32_t rank = x->rank + (int32_t)nax;
    if (rank > OAC_SHAPE_MAX_RANK)
        return set_out(c, x->elem_type, -1, NULL);
    bool is_new[OAC_SHAPE_MAX_RANK] = { false };
    for (size_t i = 0; i < nax; i++) {
        int32_t a;
        if (!norm_axis(ax[i], rank, &a) || is_new[a])
            return set_out(c, x->elem_type, -1, NULL);
        is_new[a] = true;
    }
    oac_dimref *d;
    int rc = set_out(c, x->elem_type, rank, &d);
    if (rc || !d)
        return rc;
    int32_t j = 0;
    for (int32_t k = 0; k < rank; k++)
        d[k] = is_new[k] ? 1 : x->dims[j++];
    return OAC_OK;
}

int oac_infer_squeeze(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0);
    if (!x)
        return OAC_OK;
    if (x->rank < 0)
        return set_out(c, x->elem_type, -1, NULL);
    bool drop[OAC_SHAPE_MAX_RANK] = { false };
    const int64_t *ax;
    size_t nax;
    bool have = (c->opset < 13 || c->n_in > 1) && ints_of(c, "axes", 1, &ax, &nax);
    if (!have && (c->n_in > 1 && c->proto->input[1][0]))
        return set_out(c, x->elem_type, -1, NULL);   /* axes not known */
    int32_t rank = x->rank;
    if (have) {
        for (size_t i = 0; i < nax; i++) {
            int32_t a;
            if (!norm_axis(ax[i], x->rank, &a) || drop[a])
                return set_out(c, x->elem_type, -1, NULL);
            drop[a] = true;
            rank--;
        }
    } else {
        for (int32_t k = 0; k < x->rank; k++) {
            int64_t v = dimv(c, x->dims[k]);
            if (v < 0)
                return set_out(c, x->elem_type, -1, NULL);
            if (v == 1) {
                drop[k] = true;
                rank--;
            }
        }
    }
    oac_dimref *d;
    int rc = set_out(c, x->elem_type, rank, &d);
    if (rc || !d)
        return rc;
    int32_t j = 0;
    for (int32_t k = 0; k < x->rank; k++)
        if (!drop[k])
            d[j++] = x->dims[k];
    return OAC_OK;
}

/* Split: outputs along `axis`, sized by the split input (opset >= 13) or
 * attribute (earlier), else num_outputs (opset 18) or the output count,
 * in chunks of ceil(dim / n), the last one smaller. */
int oac_infer_split(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0);
    if (!x || !c->n_out)
        return OAC_OK;
    int32_t axis;
    size_t n = c->n_out;
    if (x->rank < 0 ||
        !norm_axis(oac_attr_int(c->proto, "axis", 0), x->rank, &axis) ||
        x->rank > OAC_SHAPE_MAX_RANK)
        return outs_rank_unknown(c, n, x->elem_type);
    const int64_t *sp = NULL;
    size_t nsp = 0;
    bool given = c->opset < 13 ? oac_node_attr(c->proto, "split") != NULL :
                                 (c->n_in > 1 && c->proto->input[1][0]);
    bool sizes = given && ints_of(c, c->opset < 13 ? "split" : NULL, 1, &sp, &nsp) &&
                 nsp == n;
    int64_t dim = dimv(c, x->dims[axis]);
    int64_t chunk = -1, last = -1;
    if (!given && dim >= 0) {
        int64_t parts = oac_attr_int(c->proto, "num_outputs", (int64_t)n);
        if (parts == (int64_t)n) {
            chunk = dim / parts + (dim % parts != 0);
            last = dim - chunk * (parts - 1);
        }
    }
    oac_dimref d[OAC_SHAPE_MAX_RANK];
    oac_shapes_copy(d, x->dims, (size_t)x->rank * sizeof *d);
    for (size_t k = 0; k < n; k++) {
        int rc;
        if (sizes && sp[k] >= 0)
            d[axis] = sp[k];
        else if (chunk >= 0 && last >= 0)
            d[axis] = k + 1 < n ? chunk : last;
        else if ((rc = fresh(c, &d[axis])))
            return rc;
        if ((rc = set_out_k(c, k, x->elem_type, x->rank, d)))
            return rc;
    }
    return OAC_OK;
}

/* A small known integer vector: input `port` when known and of rank <= 1. */
static const oac_known *kvec(const oac_infer *c, size_t port)
{
    const oac_known *k = kin(c, port);
    return k && k->rank <= 1 && k->n <= OAC_SHAPE_MAX_RANK ? k : NULL;
}

/* The static length of a rank-1 input (a shape or pads vector), or -1. */
static int64_t vec_len(const oac_infer *c, size_t port)
{
    const oac_vshape *v = tin(c, port);
    return v && v->rank == 1 ? dimv(c, v->dims[0]) : -1;
}

/* Every output dim fresh: the rank is certain, the dims are not. */
static int out_fresh(oac_infer *c, int32_t elem, int64_t rank)
{
    oac_dimref *d;
    int rc = set_out(c, elem, rank <= OAC_SHAPE_MAX_RANK ? (int32_t)rank : -1, &d);
    for (int64_t k = 0; !rc && d && k < rank; k++)
        rc = fresh(c, &d[k]);
    return rc;
}

/* Range: [ceil((limit - start) / delta)] when all three are known integers. */
int oac_infer_range(oac_infer *c)
{
    const oac_vshape *s = tin(c, 0);
    const oac_known *ks = kin(c, 0), *kl = kin(c, 1), *kd = kin(c, 2);
    oac_dimref *d;
    int rc = set_out(c, s ? s->elem_type : 0, 1, &d);
    if (rc || !d)
        return rc;
    if (ks && kl && kd && ks->n == 1 && kl->n == 1 && kd->n == 1 && kd->v[0] != 0) {
        int64_t diff, st = kd->v[0];
        if (!oac_sub_overflow_i64(kl->v[0], ks->v[0], &diff) &&
            !(st == -1 && diff == INT64_MIN)) {
            d[0] = (diff > 0) != (st > 0) || !diff ? 0 : diff / st + (diff % st != 0);
            return OAC_OK;
        }
    }
    return fresh(c, &d[0]);
}

/* Expand: input 0 broadcast with the known shape input. */
int oac_infer_expand(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0);
    const oac_known *s = kvec(c, 1);
    if (!x)
        return OAC_OK;
    if (x->rank < 0 || !s) {
        int64_t n = vec_len(c, 1);
        if (x->rank < 0 || n < 0)
            return set_out(c, x->elem_type, -1, NULL);
        return out_fresh(c, x->elem_type, n > x->rank ? n : x->rank);
    }
    int32_t rank = (int32_t)s->n > x->rank ? (int32_t)s->n : x->rank;
    oac_dimref *d;
    int rc = set_out(c, x->elem_type, rank, &d);
    if (rc || !d)
        return rc;
    for (int32_t k = 0; k < rank; k++) {
        int32_t jx = x->rank - rank + k, js = (int32_t)s->n - rank + k;
        int64_t sv = js >= 0 ? s->v[js] : 1;
        if (sv < 0)
            return set_out(c, x->elem_type, -1, NULL);
        /* A shape entry other than 1 is the output's dim either way
         * (the input's is 1 or equal). */
        d[k] = sv != 1 ? sv : jx >= 0 ? x->dims[jx] : 1;
    }
    return OAC_OK;
}

/* Tile: dim i times the known repeats[i]. */
int oac_infer_tile(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0);
    const oac_known *r = kvec(c, 1);
    if (!x)
        return OAC_OK;
    if (x->rank < 0)
        return set_out(c, x->elem_type, -1, NULL);
    if (!r || r->n != (size_t)x->rank)
        return out_fresh(c, x->elem_type, x->rank);
    oac_dimref *d;
    int rc = set_out(c, x->elem_type, x->rank, &d);
    if (rc || !d)
        return rc;
    for (int32_t k = 0; k < x->rank; k++) {
        int64_t v = dimv(c, x->dims[k]);
        uint64_t p;
        if (r->v[k] == 1)
            d[k] = x->dims[k];
        else if (r->v[k] >= 0 && v >= 0 &&
                 !oac_mul_overflow_u64((uint64_t)v, (uint64_t)r->v[k], &p) && p <= INT64_MAX)
            d[k] = (int64_t)p;
        else if ((rc = fresh(c, &d[k])))
            return rc;
    }
    return OAC_OK;
}

/* ConstantOfShape: the known shape; the value attribute's type (FLOAT
 * without one). */
int oac_infer_constant_of_shape(oac_infer *c)
{
    const Onnx__AttributeProto *a = oac_node_attr(c->proto, "value");
    int32_t elem = a && a->t ? a->t->data_type : 1 /* FLOAT */;
    const oac_known *s = kvec(c, 0);
    if (!s)
        return out_fresh(c, elem, vec_len(c, 0));
    oac_dimref *d;
    int rc = set_out(c, elem, (int32_t)s->n, &d);
    for (size_t k = 0; !rc && d && k < s->n; k++) {
        if (s->v[k] < 0)
            return set_out(c, elem, -1, NULL);
        d[k] = s->v[k];
    }
    return rc;
}

/* Pad: dims plus the known pads (input 1 from opset 11, else the pads
 * attribute) on the axes given (input 3, opset 18) or all. */
int oac_infer_pad(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0);
    if (!x)
        return OAC_OK;
    if (x->rank < 0)
        return set_out(c, x->elem_type, -1, NULL);
    const int64_t *p, *ax = NULL;
    size_t np, nax = (size_t)x->rank;
    bool old = c->opset < 11;
    bool have_axes = !old && c->n_in > 3 && c->proto->input[3][0];
    bool ok = ints_of(c, old ? "pads" : NULL, 1, &p, &np);
    if (ok && have_axes)
        ok = ints_of(c, NULL, 3, &ax, &nax);
    if (!ok || np != 2 * nax)
        return out_fresh(c, x->elem_type, x->rank);
    oac_dimref *d;
    int rc = set_out(c, x->elem_type, x->rank, &d);
    if (rc || !d)
        return rc;
    oac_shapes_copy(d, x->dims, (size_t)x->rank * sizeof *d);
    for (size_t i = 0; i < nax; i++) {
        int32_t a;
        if (!norm_axis(ax ? ax[i] : (int64_t)i, x->rank, &a))
            return set_out(c, x->elem_type, -1, NULL);
        int64_t v = dimv(c, x->dims[a]), t;
        if (p[i] == 0 && p[i + nax] == 0)
            continue;
        if (v >= 0 && !oac_add_overflow_i64(v, p[i], &t) &&
            !oac_add_overflow_i64(t, p[i + nax], &t) && t >= 0)
            d[a] = t;
        else if ((rc = fresh(c, &d[a])))
            return rc;
    }
    return OAC_OK;
}

/* Reduce*: axes from input 1 from `input_opset` on, else the attribute;
 * keepdims; noop_with_empty_axes. */
static int infer_reduce(oac_infer *c, int64_t input_opset)
{
    const oac_vshape *x = tin(c, 0);
    if (!x)
        return OAC_OK;
    bool keep = oac_attr_int(c->proto, "keepdims", 1) != 0;
    bool from_input = c->opset >= input_opset;
    const int64_t *ax = NULL;
    size_t nax = 0;
    bool given = from_input ? c->n_in > 1 && c->proto->input[1][0] :
                              oac_node_attr(c->proto, "axes") != NULL;
    if (x->rank < 0 || (given && !ints_of(c, from_input ? NULL : "axes", 1, &ax, &nax)))
        return keep && x->rank >= 0 ? out_fresh(c, x->elem_type, x->rank) :
               set_out(c, x->elem_type, -1, NULL);
    bool red[OAC_SHAPE_MAX_RANK];
    bool noop = !nax && oac_attr_int(c->proto, "noop_with_empty_axes", 0) != 0;
    for (int32_t k = 0; k < x->rank; k++)
        red[k] = !nax && !noop;
    for (size_t i = 0; i < nax; i++) {
        int32_t a;
        if (!norm_axis(ax[i], x->rank, &a))
            return set_out(c, x->elem_type, -1, NULL);
        red[a] = true;
    }
    int32_t rank = 0;
    for (int32_t k = 0; k < x->rank; k++)
        rank += keep || !red[k];
    oac_dimref *d;
    int rc = set_out(c, x->elem_type, rank, &d);
    if (rc || !d)
        return rc;
    int32_t j = 0;
    for (int32_t k = 0; k < x->rank; k++)
        if (!red[k])
            d[j++] = x->dims[k];
        else if (keep)
            d[j++] = 1;
    return OAC_OK;
}

int oac_infer_reduce13(oac_infer *c) { return infer_reduce(c, 13); }
int oac_infer_reduce18(oac_infer *c) { return infer_reduce(c, 18); }

/* Gemm: [M, N] from A [M, K] (or transposed) and B [K, N] (or transposed). */
int oac_infer_gemm(oac_infer *c)
{
    const oac_vshape *a = tin(c, 0), *b = tin(c, 1);
    if (!a)
        return OAC_OK;
    if (a->rank != 2 || !b || b->rank != 2)
        return set_out(c, a->elem_type, -1, NULL);
    bool ta = oac_attr_int(c->proto, "transA", 0) != 0;
    bool tb = oac_attr_int(c->proto, "transB", 0) != 0;
    oac_dimref *d;
    int rc = set_out(c, a->elem_type, 2, &d);
    if (!rc && d) {
        d[0] = a->dims[ta ? 1 : 0];
        d[1] = b->dims[tb ? 0 : 1];
    }
    return rc;
}

/* ---- attention and normalization (kernels/attn.c, kernels/norm.c) ----
 * These operators have several outputs; each rule types every one of
 * them (set_out_k: the static plan needs the bytes of every buffer the
 * kernels allocate).  Their shape rules are the kernels' output shapes,
 * documented at each kernel. */

/* a * mul / div when a is known and that is a whole number; a itself
 * when mul == div; else a fresh unknown. */
static int dim_scaled(oac_infer *c, oac_dimref a, int64_t mul, int64_t div,
                      oac_dimref *out)
{
    if (mul == div) {
        *out = a;
        return OAC_OK;
    }
    int64_t v = dimv(c, a);
    if (v >= 0 && mul > 0 && div > 0 && v <= INT64_MAX / mul && (v * mul) % div == 0) {
        *out = v * mul / div;
        return OAC_OK;
    }
    return fresh(c, out);
}

/* a + b: b itself when a is 0, static when both are known. */
static int dim_sum(oac_infer *c, oac_dimref a, oac_dimref b, oac_dimref *out)
{
    int64_t va = dimv(c, a), vb = dimv(c, b);
    if (va == 0) {
        *out = b;
        return OAC_OK;
    }
    if (vb == 0) {
        *out = a;
        return OAC_OK;
    }
    if (va >= 0 && vb >= 0 && va <= INT64_MAX - vb) {
        *out = va + vb;
        return OAC_OK;
    }
    return fresh(c, out);
}

static bool port_given(const oac_infer *c, size_t i)
{
    return i < c->n_in && c->proto->input[i] && c->proto->input[i][0];
}

/* Does the node declare output `out` to alias input `in`? */
static bool declares_alias(const Onnx__NodeProto *np, size_t out, size_t in)
{
    for (size_t i = 0; i < np->n_output_alias; i++) {
        const Onnx__ValueAliasProto *e = np->output_alias[i];
        if (e && (e->has_output_index ? e->output_index : 0) == (int32_t)out &&
            (e->has_input_index ? e->input_index : 0) == (int32_t)in)
            return true;
    }
    return false;
}

/* GroupQueryAttention: output (B, S, num_heads * H); present_key/value
 * the past's type when declared to alias it, else (B, kv_num_heads,
 * max(total_sequence_length, past length), H). */
int oac_infer_group_query_attention(oac_infer *c)
{
    const oac_vshape *q = tin(c, 0), *pk = tin(c, 3);
    int64_t N = oac_attr_int(c->proto, "num_heads", 0);
    int64_t KVN = oac_attr_int(c->proto, "kv_num_heads", 0);
    if (!q)
        return OAC_OK;
    int32_t T = q->elem_type;
    int rc;
    if (q->rank != 3 || N < 1 || KVN < 1)
        return outs_rank_unknown(c, 3, T);
    bool packed = !port_given(c, 1);
    oac_dimref y[3] = { q->dims[0], q->dims[1], q->dims[2] }, H;
    if ((packed && (rc = dim_scaled(c, q->dims[2], N, N + 2 * KVN, &y[2]))) ||
        (rc = dim_scaled(c, q->dims[2], 1, packed ? N + 2 * KVN : N, &H)) ||
        (rc = set_out_k(c, 0, T, 3, y)))
        return rc;
    for (size_t k = 1; k < 3; k++) {
        const oac_vshape *past = tin(c, k + 2);
        if (past && declares_alias(c->proto, k, k + 2)) {
            c->out[k] = *past;
            continue;
        }
        bool have_past = pk && pk->rank == 4;
        oac_dimref d[4] = { have_past ? pk->dims[0] : q->dims[0], KVN,
                            0, have_past ? pk->dims[3] : H };
        const oac_known *ts = kin(c, 6);
        int64_t tv = ts && ts->n == 1 ? ts->v[0] : -1;
        int64_t pv = have_past ? dimv(c, pk->dims[2]) : port_given(c, 3) ? -1 : 0;
        if (tv >= 1 && pv >= 0)
            d[2] = tv > pv ? tv : pv;
        else if ((rc = fresh(c, &d[2])))
            return rc;
        if ((rc = set_out_k(c, k, T, 4, d)))
            return rc;
    }
    return OAC_OK;
}

/* MultiHeadAttention: output (B, S, num_heads * v_head_size); present
 * (B, N, past + kv_sequence, H) without input 8, the past's type with
 * it (one buffer of the capacity). */
int oac_infer_multi_head_attention(oac_infer *c)
{
    const oac_vshape *q = tin(c, 0), *key = tin(c, 1), *val = tin(c, 2);
    int64_t N = oac_attr_int(c->proto, "num_heads", 0);
    if (!q)
        return OAC_OK;
    int32_t T = q->elem_type;
    int rc;
    if (q->rank != 3 || N < 1 || !key || !val || (key->rank != 3 && key->rank != 4) ||
        val->rank != key->rank)
        return outs_rank_unknown(c, 3, T);
    bool r4 = key->rank == 4;
    oac_dimref y[3] = { q->dims[0], q->dims[1], 0 }, H, Hv, L = key->dims[r4 ? 2 : 1];
    if ((rc = r4 ? dim_scaled(c, val->dims[3], N, 1, &y[2]) : (y[2] = val->dims[2], 0)) ||
        (rc = dim_scaled(c, q->dims[2], 1, N, &H)) ||
        (rc = r4 ? (Hv = val->dims[3], 0) : dim_scaled(c, val->dims[2], 1, N, &Hv)) ||
        (rc = set_out_k(c, 0, T, 3, y)))
        return rc;
    const oac_vshape *pk = tin(c, 6);
    bool share = port_given(c, 8) && port_given(c, 6);
    oac_dimref len;
    if (share) {
        for (size_t k = 1; k < 3; k++) {
            const oac_vshape *past = tin(c, k + 5);
            if (k < c->n_out && past)
                c->out[k] = *past;
        }
        return OAC_OK;
    }
    if (port_given(c, 6) && !(pk && pk->rank == 4))
        rc = fresh(c, &len);
    else
        rc = dim_sum(c, port_given(c, 6) ? pk->dims[2] : 0, L, &len);
    if (rc)
        return rc;
    oac_dimref kd[4] = { q->dims[0], N, len, H }, vd[4] = { q->dims[0], N, len, Hv };
    if ((rc = set_out_k(c, 1, T, 4, kd)) || (rc = set_out_k(c, 2, T, 4, vd)))
        return rc;
    return OAC_OK;
}

/* DecoderMaskedMultiHeadAttention: output (B, 1, num_heads * v_head_size)
 * of q's type; presents the pasts' types with past_present_share_buffer
 * = 1 and input 7, else (B, N, past + 1, H). */
int oac_infer_decoder_masked_mha(oac_infer *c)
{
    const oac_vshape *q = tin(c, 0), *val = tin(c, 2), *pk = tin(c, 5);
    int64_t N = oac_attr_int(c->proto, "num_heads", 0);
    if (!q)
        return OAC_OK;
    int32_t T = q->elem_type;
    int rc;
    if (q->rank != 3 || N < 1)
        return outs_rank_unknown(c, 3, T);
    oac_dimref y[3] = { q->dims[0], q->dims[1], val && val->rank == 3 ? val->dims[2] : 0 };
    if ((!(val && val->rank == 3) && (rc = fresh(c, &y[2]))) || (rc = set_out_k(c, 0, T, 3, y)))
        return rc;
    if (oac_attr_int(c->proto, "past_present_share_buffer", 0) && port_given(c, 7) &&
        port_given(c, 5)) {
        for (size_t k = 1; k < 3; k++) {
            const oac_vshape *past = tin(c, k + 4);
            if (k < c->n_out && past)
                c->out[k] = *past;
        }
        return OAC_OK;
    }
    const oac_vshape *pv = tin(c, 6);
    for (size_t k = 1; k < 3; k++) {
        const oac_vshape *p = k == 1 ? pk : pv;
        oac_dimref d[4];
        if (!(p && p->rank == 4)) {
            if ((rc = set_out_k(c, k, T, -1, NULL)))
                return rc;
            continue;
        }
        memcpy(d, p->dims, sizeof d);
        if ((rc = dim_sum(c, p->dims[2], 1, &d[2])) || (rc = set_out_k(c, k, T, 4, d)))
            return rc;
    }
    return OAC_OK;
}

/* Output 0: q's dims with the last set to num_heads * head_size (packed
 * q: q's last * N / (N + 2 * KVN)); outputs 1 and 2: the pasts (inputs
 * 3 and 4) they update in place (PagedAttention, SparseAttention). */
static int infer_pooled(oac_infer *c)
{
    const oac_vshape *q = tin(c, 0);
    int64_t N = oac_attr_int(c->proto, "num_heads", 0);
    int64_t KVN = oac_attr_int(c->proto, "kv_num_heads", 0);
    if (!q)
        return OAC_OK;
    int rc;
    if (q->rank < 2 || q->rank > 3 || N < 1 || KVN < 1) {
        rc = set_out_k(c, 0, q->elem_type, -1, NULL);
    } else {
        oac_dimref y[3];
        memcpy(y, q->dims, (size_t)q->rank * sizeof *y);
        bool packed = !port_given(c, 1);
        rc = packed ? dim_scaled(c, q->dims[q->rank - 1], N, N + 2 * KVN, &y[q->rank - 1])
                    : OAC_OK;
        if (!rc)
            rc = set_out_k(c, 0, q->elem_type, q->rank, y);
    }
    for (size_t k = 1; !rc && k < 3; k++) {
        const oac_vshape *past = tin(c, k + 2);
        if (k < c->n_out && past)
            c->out[k] = *past;
    }
    return rc;
}

int oac_infer_paged_attention(oac_infer *c) { return infer_pooled(c); }
int oac_infer_sparse_attention(oac_infer *c) { return infer_pooled(c); }

/* com.microsoft Attention: output (B, S, v_hidden); present
 * (2, B, N, past + S, H), or the past's type with
 * past_present_share_buffer = 1 and input 6 (one buffer). */
int oac_infer_ms_attention(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0), *w = tin(c, 1), *past = tin(c, 4);
    int64_t N = oac_attr_int(c->proto, "num_heads", 0);
    if (!x)
        return OAC_OK;
    int32_t T = x->elem_type;
    int rc;
    const Onnx__AttributeProto *qs = oac_node_attr(c->proto, "qkv_hidden_sizes");
    int64_t wc = w && w->rank == 2 ? dimv(c, w->dims[1]) : -1;
    int64_t dq = qs && qs->n_ints == 3 ? qs->ints[0] : wc >= 0 ? wc / 3 : -1;
    int64_t dv = qs && qs->n_ints == 3 ? qs->ints[2] : dq;
    if (x->rank != 3 || N < 1 || dq < 1 || dv < 1)
        return outs_rank_unknown(c, 2, T);
    oac_dimref y[3] = { x->dims[0], x->dims[1], dv };
    if ((rc = set_out_k(c, 0, T, 3, y)))
        return rc;
    if (oac_attr_int(c->proto, "past_present_share_buffer", 0) && port_given(c, 6) &&
        port_given(c, 4)) {
        if (1 < c->n_out && past)
            c->out[1] = *past;
        return OAC_OK;
    }
    oac_dimref len;
    if (port_given(c, 4) && !(past && past->rank == 5))
        rc = fresh(c, &len);
    else
        rc = dim_sum(c, port_given(c, 4) ? past->dims[3] : 0, x->dims[1], &len);
    if (rc)
        return rc;
    oac_dimref pd[5] = { 2, x->dims[0], N, len, dq / N };
    return set_out_k(c, 1, T, 5, pd);
}

/* com.microsoft EmbedLayerNormalization: output and embedding_sum
 * (B, S, hidden) of word_embedding's type; mask_index INT32 (B). */
int oac_infer_embed_layer_normalization(oac_infer *c)
{
    const oac_vshape *ids = tin(c, 0), *w = tin(c, 2);
    if (!w)
        return OAC_OK;
    int rc;
    if (!ids || ids->rank != 2 || w->rank != 2) {
        if ((rc = set_out_k(c, 0, w->elem_type, -1, NULL)) ||
            (rc = set_out_k(c, 1, 6 /* INT32 */, -1, NULL)))
            return rc;
        return set_out_k(c, 2, w->elem_type, -1, NULL);
    }
    oac_dimref y[3] = { ids->dims[0], ids->dims[1], w->dims[1] }, m[1] = { ids->dims[0] };
    if ((rc = set_out_k(c, 0, w->elem_type, 3, y)) ||
        (rc = set_out_k(c, 1, 6 /* INT32 */, 1, m)))
        return rc;
    return set_out_k(c, 2, w->elem_type, 3, y);
}

/* ONNX Attention: Y (B, Sq, q_heads * Hv) or (B, q_heads, Sq, Hv);
 * present_key/value (B, kv_heads, past + Skv, H or Hv); qk_matmul_output
 * (B, q_heads, Sq, past + Skv). */
int oac_infer_attention(oac_infer *c)
{
    const oac_vshape *q = tin(c, 0), *key = tin(c, 1), *val = tin(c, 2), *pk = tin(c, 4);
    if (!q)
        return OAC_OK;
    int rc;
    int32_t kt = key ? key->elem_type : q->elem_type, vt = val ? val->elem_type : q->elem_type;
    bool r3 = q->rank == 3;
    int64_t qn = oac_attr_int(c->proto, "q_num_heads", 0);
    int64_t kvn = oac_attr_int(c->proto, "kv_num_heads", 0);
    if (!key || !val || q->rank != key->rank || q->rank != val->rank ||
        (q->rank != 3 && q->rank != 4) || (r3 && (qn < 1 || kvn < 1))) {
        if ((rc = set_out_k(c, 0, q->elem_type, -1, NULL)) ||
            (rc = set_out_k(c, 1, kt, -1, NULL)) || (rc = set_out_k(c, 2, vt, -1, NULL)) ||
            (rc = set_out_k(c, 3, q->elem_type, -1, NULL)))
            return rc;
        return OAC_OK;
    }
    oac_dimref y[4], B = q->dims[0], Nq, Nk, Sq, Skv, H, Hv, TT;
    if (r3) {
        y[0] = B, y[1] = q->dims[1], Nq = qn, Nk = kvn, Sq = q->dims[1], Skv = key->dims[1];
        if ((rc = dim_scaled(c, val->dims[2], qn, kvn, &y[2])) ||
            (rc = dim_scaled(c, key->dims[2], 1, kvn, &H)) ||
            (rc = dim_scaled(c, val->dims[2], 1, kvn, &Hv)))
            return rc;
    } else {
        y[0] = B, y[1] = q->dims[1], y[2] = q->dims[2], y[3] = val->dims[3];
        Nq = q->dims[1], Nk = key->dims[1], Sq = q->dims[2], Skv = key->dims[2];
        H = key->dims[3], Hv = val->dims[3];
    }
    if ((rc = set_out_k(c, 0, q->elem_type, r3 ? 3 : 4, y)))
        return rc;
    if (port_given(c, 4) && !(pk && pk->rank == 4))
        rc = fresh(c, &TT);
    else
        rc = dim_sum(c, port_given(c, 4) ? pk->dims[2] : 0, Skv, &TT);
    if (rc)
        return rc;
    oac_dimref kd[4] = { B, Nk, TT, H }, vd[4] = { B, Nk, TT, Hv }, qd[4] = { B, Nq, Sq, TT };
    if ((rc = set_out_k(c, 1, kt, 4, kd)) || (rc = set_out_k(c, 2, vt, 4, vd)) ||
        (rc = set_out_k(c, 3, q->elem_type, 4, qd)))
        return rc;
    return OAC_OK;
}

/* Output k: FLOAT, x's dims with the axes from `axis` on set to 1 (the
 * normalizations' mean and inverse standard deviation). */
static int type_reduced(oac_infer *c, size_t k, const oac_vshape *x, int64_t axis)
{
    int32_t a;
    if (x->rank < 0 || !norm_axis(axis, x->rank, &a))
        return set_out_k(c, k, 1 /* FLOAT */, -1, NULL);
    oac_dimref d[OAC_SHAPE_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++)
        d[i] = i < a ? x->dims[i] : 1;
    return set_out_k(c, k, 1 /* FLOAT */, x->rank, d);
}

/* LayerNormalization: Y as X; Mean, InvStdDev reduced (FLOAT). */
int oac_infer_layer_normalization(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0);
    if (!x || !c->n_out)
        return OAC_OK;
    c->out[0] = *x;
    int64_t axis = oac_attr_int(c->proto, "axis", -1);
    int rc;
    for (size_t k = 1; k < 3; k++)
        if ((rc = type_reduced(c, k, x, axis)))
            return rc;
    return OAC_OK;
}

/* RMSNormalization, SimplifiedLayerNormalization: Y of X's shape and
 * scale's element type; inv_std_var reduced (FLOAT). */
int oac_infer_rms_normalization(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0), *s = tin(c, 1);
    if (!x || !c->n_out)
        return OAC_OK;
    c->out[0] = *x;
    if (s && s->elem_type)
        c->out[0].elem_type = s->elem_type;
    return type_reduced(c, 1, x, oac_attr_int(c->proto, "axis", -1));
}

/* Skip(Simplified)LayerNormalization: output and input_skip_bias_sum as
 * the input; mean, inv_std_var reduced over the hidden axis (FLOAT). */
int oac_infer_skip_layer_normalization(oac_infer *c)
{
    const oac_vshape *x = tin(c, 0);
    if (!x || !c->n_out)
        return OAC_OK;
    c->out[0] = *x;
    if (c->n_out > 3)
        c->out[3] = *x;
    int rc;
    for (size_t k = 1; k < 3; k++)
        if ((rc = type_reduced(c, k, x, -1)))
            return rc;
    return OAC_OK;
}

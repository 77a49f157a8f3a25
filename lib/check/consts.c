/* check/consts.c: known values, folded exactly as the contract lists them.
 *
 * Owns: which values the checker treats as known and how they fold.
 * Contract: section 3 "Details the rules rely on": a value is known when
 * it is a Constant output, an initializer that is not also a graph input,
 * a --input given to check, or the result of Add, Sub, Mul, Neg, Min,
 * Max, Identity, Cast, Squeeze, Unsqueeze, Reshape over known values, or
 * of Shape/Size over static or --dim-bound dims.  Nothing else is folded
 * (the rows of ops.def with a .fold column are the whole list; seeding
 * of initializers and --input files is in check/shapes.c and check/inputs.c).
 *
 * Invariants:
 *  1. Only integer tensors of at most OAC_KNOWN_MAX elements are known;
 *     the element count is checked from dims before any payload is read,
 *     so large weights are never touched.
 *  2. Folding is in int64 with overflow checks, and the result must fit
 *     its element type; otherwise the value is unknown (never wrapped).
 *  3. A malformed payload makes the value unknown; it is not this pass's
 *     finding (the loader validates payloads).
 *  4. Shape/Size fold over the dims bound when the node is visited
 *     (declared, --dim, --input, or unified earlier).
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "op_fns.h"
#include "check/shapes.h"

static bool is_int_type(int32_t t)
{
    switch (t) {
    case 2: case 3: case 4: case 5: case 6: case 7: case 9: case 12: case 13:
        return true;
    default:
        return false;
    }
}

/* Does v fit element type t? */
static bool fits(int32_t t, int64_t v)
{
    switch (t) {
    case 2: return v >= 0 && v <= UINT8_MAX;
    case 3: return v >= INT8_MIN && v <= INT8_MAX;
    case 4: return v >= 0 && v <= UINT16_MAX;
    case 5: return v >= INT16_MIN && v <= INT16_MAX;
    case 6: return v >= INT32_MIN && v <= INT32_MAX;
    case 9: return v == 0 || v == 1;
    case 12: return v >= 0 && v <= (int64_t)UINT32_MAX;
    case 13: return v >= 0;   /* larger UINT64 values are not tracked */
    case 7: return true;
    default: return false;
    }
}

int oac_known_from_tensor(oac_shapes *sh, const oac_model *model,
                          const Onnx__TensorProto *t, oac_known **out)
{
    *out = NULL;
    uint64_t n;
    if (!t || !t->has_data_type || !is_int_type(t->data_type) ||
        t->n_dims > OAC_SHAPE_MAX_RANK || !oac_tensor_numel(t, &n) ||
        n > OAC_KNOWN_MAX ||
        (t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL && !model))
        return OAC_OK;
    oac_known *k = oac_shapes_new_known(sh, t->data_type, (int32_t)t->n_dims,
                                        (size_t)n);
    if (!k)
        return OAC_ENOMEM;
    oac_shapes_copy(k->shape, t->dims, t->n_dims * sizeof *k->shape);
    size_t got = 0;
    /* Save the context's message: a malformed payload is not a failure
     * of this pass (invariant 3). */
    char saved[sizeof sh->ctx->errmsg];
    memcpy(saved, sh->ctx->errmsg, sizeof saved);
    int rc = oac_tensor_int64s_in(sh->ctx, model, t, k->v, (size_t)n, &got);
    memcpy(sh->ctx->errmsg, saved, sizeof saved);
    if (rc == OAC_ENOMEM)
        return rc;
    if (rc || got != n)
        return OAC_OK;
    for (size_t i = 0; i < got; i++)
        if (!fits(t->data_type, k->v[i]))
            return OAC_OK;
    *out = k;
    return OAC_OK;
}

/* ---- helpers ---- */

static const oac_known *kin(const oac_infer *c, size_t i)
{
    return i < c->n_in ? c->in_known[i] : NULL;
}

/* The output's shape, when fully static, into a new known of n elements
 * (checked against n). */
static int out_known_like(oac_infer *c, size_t k, int32_t elem, size_t n,
                          oac_known **out)
{
    *out = NULL;
    const oac_vshape *o = k < c->n_out ? &c->out[k] : NULL;
    if (!o || o->kind != OAC_VK_TENSOR || o->rank < 0 ||
        o->rank > OAC_SHAPE_MAX_RANK)
        return OAC_OK;
    uint64_t count = 1;
    for (int32_t i = 0; i < o->rank; i++) {
        int64_t d = oac_shapes_dim(c->sh, o->dims[i]);
        if (d < 0 || oac_mul_overflow_u64(count, (uint64_t)d, &count))
            return OAC_OK;
    }
    if (count != n)
        return OAC_OK;
    oac_known *kn = oac_shapes_new_known(c->sh, elem, o->rank, n);
    if (!kn)
        return n > OAC_KNOWN_MAX ? OAC_OK : OAC_ENOMEM;
    for (int32_t i = 0; i < o->rank; i++)
        kn->shape[i] = oac_shapes_dim(c->sh, o->dims[i]);
    *out = kn;
    return OAC_OK;
}

/* ---- rules ---- */

int oac_fold_constant(oac_infer *c)
{
    const Onnx__NodeProto *n = c->proto;
    if (!c->n_out)
        return OAC_OK;
    for (size_t i = 0; i < n->n_attribute; i++) {
        const Onnx__AttributeProto *a = n->attribute[i];
        if (!a->name)
            continue;
        if (!strcmp(a->name, "value") && a->t)
            return oac_known_from_tensor(c->sh, NULL, a->t, &c->out_known[0]);
        if (!strcmp(a->name, "value_int") && a->has_i) {
            oac_known *k = oac_shapes_new_known(c->sh, 7, 0, 1);
            if (!k)
                return OAC_ENOMEM;
            k->v[0] = a->i;
            c->out_known[0] = k;
            return OAC_OK;
        }
        if (!strcmp(a->name, "value_ints") && a->n_ints <= OAC_KNOWN_MAX) {
            oac_known *k = oac_shapes_new_known(c->sh, 7, 1, a->n_ints);
            if (!k)
                return OAC_ENOMEM;
            k->shape[0] = (int64_t)a->n_ints;
            oac_shapes_copy(k->v, a->ints, a->n_ints * sizeof *k->v);
            c->out_known[0] = k;
            return OAC_OK;
        }
    }
    return OAC_OK;
}

/* Identity, Squeeze, Unsqueeze, Reshape: the same elements, the output's
 * (inferred, static) shape. */
int oac_fold_relabel(oac_infer *c)
{
    const oac_known *x = kin(c, 0);
    if (!x)
        return OAC_OK;
    oac_known *k;
    int rc = out_known_like(c, 0, x->elem_type, x->n, &k);
    if (rc || !k)
        return rc;
    oac_shapes_copy(k->v, x->v, x->n * sizeof *k->v);
    c->out_known[0] = k;
    return OAC_OK;
}

int oac_fold_cast(oac_infer *c)
{
    const oac_known *x = kin(c, 0);
    int32_t to = (int32_t)oac_attr_int(c->proto, "to", 0);
    if (!x || !is_int_type(to))
        return OAC_OK;
    for (size_t i = 0; i < x->n; i++)
        if (!fits(to, x->v[i]) && to != 9)
            return OAC_OK;   /* would wrap: unknown (invariant 2) */
    oac_known *k;
    int rc = out_known_like(c, 0, to, x->n, &k);
    if (rc || !k)
        return rc;
    for (size_t i = 0; i < x->n; i++)
        k->v[i] = to == 9 ? x->v[i] != 0 : x->v[i];
    c->out_known[0] = k;
    return OAC_OK;
}

int oac_fold_neg(oac_infer *c)
{
    const oac_known *x = kin(c, 0);
    if (!x)
        return OAC_OK;
    oac_known *k;
    int rc = out_known_like(c, 0, x->elem_type, x->n, &k);
    if (rc || !k)
        return rc;
    for (size_t i = 0; i < x->n; i++) {
        if (x->v[i] == INT64_MIN || !fits(x->elem_type, -x->v[i]))
            return OAC_OK;
        k->v[i] = -x->v[i];
    }
    c->out_known[0] = k;
    return OAC_OK;
}

enum bop { B_ADD, B_SUB, B_MUL, B_MIN, B_MAX };

static bool apply(enum bop op, int64_t a, int64_t b, int64_t *r)
{
    switch (op) {
    case B_ADD: return !oac_add_overflow_i64(a, b, r);
    case B_SUB: return !oac_sub_overflow_i64(a, b, r);
    case B_MUL: return !oac_mul_overflow_i64(a, b, r);
    case B_MIN: *r = a < b ? a : b; return true;
    case B_MAX: *r = a > b ? a : b; return true;
    }
    return false;
}

/* Broadcasting element-wise fold over every input (Min/Max are
 * variadic; Add/Sub/Mul have two). */
static int fold_bin(oac_infer *c, enum bop op)
{
    if (!c->n_in || !c->n_out)
        return OAC_OK;
    for (size_t i = 0; i < c->n_in; i++)
        if (!kin(c, i) || kin(c, i)->elem_type != kin(c, 0)->elem_type)
            return OAC_OK;
    int32_t rank = 0;
    for (size_t i = 0; i < c->n_in; i++)
        if (kin(c, i)->rank > rank)
            rank = kin(c, i)->rank;
    int64_t shape[OAC_SHAPE_MAX_RANK];
    uint64_t n = 1;
    for (int32_t d = 0; d < rank; d++) {
        shape[d] = 1;
        for (size_t i = 0; i < c->n_in; i++) {
            const oac_known *x = kin(c, i);
            int32_t j = x->rank - rank + d;
            if (j < 0 || x->shape[j] == 1)
                continue;
            if (shape[d] != 1 && shape[d] != x->shape[j])
                return OAC_OK;   /* not broadcastable: unknown */
            shape[d] = x->shape[j];
        }
        if (oac_mul_overflow_u64(n, (uint64_t)shape[d], &n) || n > OAC_KNOWN_MAX)
            return OAC_OK;
    }
    int32_t et = kin(c, 0)->elem_type;
    oac_known *k = oac_shapes_new_known(c->sh, et, rank, (size_t)n);
    if (!k)
        return OAC_ENOMEM;
    oac_shapes_copy(k->shape, shape, (size_t)rank * sizeof *shape);
    int64_t idx[OAC_SHAPE_MAX_RANK] = { 0 };
    for (size_t e = 0; e < n; e++) {
        int64_t acc = 0;
        for (size_t i = 0; i < c->n_in; i++) {
            const oac_known *x = kin(c, i);
            size_t off = 0;
            for (int32_t j = 0; j < x->rank; j++) {
                int64_t at = x->shape[j] == 1 ? 0 : idx[rank - x->rank + j];
                off = off * (size_t)x->shape[j] + (size_t)at;
            }
            int64_t v = x->v[off];
            if (i == 0)
                acc = v;
            else if (!apply(op, acc, v, &acc))
                return OAC_OK;   /* overflow: unknown (invariant 2) */
        }
        if (!fits(et, acc))
            return OAC_OK;
        k->v[e] = acc;
        for (int32_t d = rank - 1; d >= 0; d--) {
            if (++idx[d] < shape[d])
                break;
            idx[d] = 0;
        }
    }
    c->out_known[0] = k;
    return OAC_OK;
}

int oac_fold_add(oac_infer *c) { return c->n_in == 2 ? fold_bin(c, B_ADD) : OAC_OK; }
int oac_fold_sub(oac_infer *c) { return c->n_in == 2 ? fold_bin(c, B_SUB) : OAC_OK; }
int oac_fold_mul(oac_infer *c) { return c->n_in == 2 ? fold_bin(c, B_MUL) : OAC_OK; }
int oac_fold_min(oac_infer *c) { return fold_bin(c, B_MIN); }
int oac_fold_max(oac_infer *c) { return fold_bin(c, B_MAX); }

int oac_fold_shape(oac_infer *c)
{
    const oac_vshape *x = c->n_in ? c->in[0] : NULL;
    if (!x || x->kind != OAC_VK_TENSOR || x->rank < 0 || !c->n_out)
        return OAC_OK;
    int64_t s = oac_attr_int(c->proto, "start", 0);
    int64_t t = oac_attr_int(c->proto, "end", x->rank);
    int32_t r = x->rank;
    if (s < 0) s += r;
    if (t < 0) t += r;
    if (s < 0) s = 0;
    if (t > r) t = r;
    if (s > r) s = r;
    if (t < s) t = s;
    for (int64_t i = s; i < t; i++)
        if (oac_shapes_dim(c->sh, x->dims[i]) < 0)
            return OAC_OK;
    oac_known *k = oac_shapes_new_known(c->sh, 7, 1, (size_t)(t - s));
    if (!k)
        return OAC_ENOMEM;
    k->shape[0] = t - s;
    for (int64_t i = s; i < t; i++)
        k->v[i - s] = oac_shapes_dim(c->sh, x->dims[i]);
    c->out_known[0] = k;
    return OAC_OK;
}

int oac_fold_size(oac_infer *c)
{
    const oac_vshape *x = c->n_in ? c->in[0] : NULL;
    if (!x || x->kind != OAC_VK_TENSOR || x->rank < 0 || !c->n_out)
        return OAC_OK;
    uint64_t n = 1;
    for (int32_t i = 0; i < x->rank; i++) {
        int64_t d = oac_shapes_dim(c->sh, x->dims[i]);
        if (d < 0 || oac_mul_overflow_u64(n, (uint64_t)d, &n) || n > INT64_MAX)
            return OAC_OK;
    }
    oac_known *k = oac_shapes_new_known(c->sh, 7, 0, 1);
    if (!k)
        return OAC_ENOMEM;
    k->v[0] = (int64_t)n;
    c->out_known[0] = k;
    return OAC_OK;
}

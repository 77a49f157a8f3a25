/* kernels/scatter.c: the scatter kernels of the reference runtime,
 * ScatterND and ScatterElements (opset 11 to 18: reduction none, add,
 * mul, max, min).
 *
 * Owns their ONNX semantics (docs/Operators.md, onnx/reference/ops):
 * the output is a copy of data with updates written (or combined) at the
 * indices.  reduction none moves elements of any whole-byte type; the
 * other reductions compute on FLOAT, FLOAT16, BFLOAT16, DOUBLE and the
 * integer types.  Repeated indices apply in order (the last write wins
 * for none, as ONNX Runtime does).  The output is a new buffer holding
 * a copy of data, or, when the node's output_alias states the row's pair
 * 0 <- 0 (section 6), data's own storage updated in place.
 *
 * Contract: section 8 (kernel-error), section 6 (the pair 0 <- 0).
 *
 * Invariants:
 *  1. Every index is checked against its axis ([-dim, dim)) and every
 *     shape against data before the output is allocated or anything is
 *     written: kernel-error naming the value, never a write out of
 *     bounds, and an in-place cache is left as it was.
 *  2. Outputs come from oac_kout (oac_kernel_output once the shape is
 *     checked); nothing else is allocated.
 *  3. Integer add and mul wrap (uint64_t arithmetic).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/elem_io.h"

#define MAXR OAC_RT_MAX_RANK

typedef enum red { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } red;

/* The reduction attribute; kernel-error for an unknown one, and
 * unsupported-operator when it computes on a type it cannot. */
static int reduction_of(oac_kernel_call *k, int32_t t, red *out)
{
    char buf[16];
    const char *s = oac_attr_string(k->node, "reduction", "none", buf, sizeof buf);
    static const char *const names[] = { "none", "add", "mul", "max", "min" };
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, names[i])) {
            *out = (red)i;
            if (i && !oac_ek_in(t, OAC_EKM_FLOAT | OAC_EKM_ANYINT))
                return oac_kernel_bad_type(k, 0, t);
            return OAC_OK;
        }
    return oac_kernel_error(k, "reduction", "'%s' is not none, add, mul, max or min", s);
}

/* Element `di` of y combined with element `ui` of u under r. */
static void combine(red r, int32_t t, void *y, uint64_t di, const void *u, uint64_t ui,
                    size_t es)
{
    if (r == RED_NONE) {
        memcpy((uint8_t *)y + di * es, (const uint8_t *)u + ui * es, es);
        return;
    }
    if (oac_ek_is_float(t)) {
        double a = oac_ek_getd(t, y, di), b = oac_ek_getd(t, u, ui);
        double v = r == RED_ADD ? a + b : r == RED_MUL ? a * b :
                   r == RED_MAX ? fmax(a, b) : fmin(a, b);
        oac_ek_setd(t, y, di, v);
        return;
    }
    int64_t a = oac_ek_geti(t, y, di), b = oac_ek_geti(t, u, ui);
    int64_t v = r == RED_ADD ? (int64_t)((uint64_t)a + (uint64_t)b) :
                r == RED_MUL ? (int64_t)((uint64_t)a * (uint64_t)b) :
                r == RED_MAX ? (a > b ? a : b) : (a < b ? a : b);
    oac_ek_seti(t, y, di, v);
}

static int copy_data(oac_kernel_call *k, const oac_tensor *x, oac_tensor **y)
{
    int rc = oac_kout(k, 0, x->elem_type, x->rank, x->dims, y);
    if (!rc && (*y)->data != x->data && x->bytes)
        memcpy((*y)->data, x->data, x->bytes);
    return rc;
}

/* ScatterND: indices [..., q] address slices data[i_0, .., i_{q-1}, ...]
 * that updates[...] replace. */
int oac_kernel_scatter_nd(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kin(k, 0);
    const oac_tensor *ix = x ? oac_kin_typed(k, 1, OAC_EKM_INT) : NULL;
    const oac_tensor *u = ix ? oac_kin(k, 2) : NULL;
    if (!u)
        return OAC_ERUNTIME;
    int32_t t = x->elem_type;
    size_t es = oac_ek_size(t);
    red r;
    int rc;
    if (!es || t == OAC_T_STRING)
        return oac_kernel_bad_type(k, 0, t);
    if ((rc = reduction_of(k, t, &r)))
        return rc;
    if (u->elem_type != t)
        return oac_kernel_error(k, oac_kin_name(k, 2), "element type %s differs from data's %s",
                                oac_elem_name(u->elem_type), oac_elem_name(t));
    if (x->rank < 1 || ix->rank < 1)
        return oac_kernel_error(k, oac_kin_name(k, x->rank < 1 ? 0 : 1), "rank 0");
    int64_t q = ix->dims[ix->rank - 1];
    if (q < 1 || q > x->rank)
        return oac_kernel_error(k, oac_kin_name(k, 1), "last dim %" PRId64 " is outside "
                                "[1, %d]", q, x->rank);
    /* updates: indices.shape[:-1] ++ data.shape[q:]. */
    bool ok = u->rank == ix->rank - 1 + x->rank - (int)q;
    for (int d = 0; ok && d < ix->rank - 1; d++)
        ok = u->dims[d] == ix->dims[d];
    for (int d = (int)q; ok && d < x->rank; d++)
        ok = u->dims[ix->rank - 1 + d - (int)q] == x->dims[d];
    if (!ok)
        return oac_kernel_error(k, oac_kin_name(k, 2), "shape is not indices.shape[:-1] + "
                                "data.shape[%" PRId64 ":]", q);
    int64_t st[MAXR];
    oac_ek_strides(x->dims, x->rank, st);
    uint64_t slice = (uint64_t)st[q - 1];   /* elements per addressed slice */
    uint64_t tuples = oac_ek_numel(ix) / (uint64_t)q;
    for (uint64_t i = 0; i < tuples * (uint64_t)q; i++) {
        int64_t v = oac_ek_geti(ix->elem_type, ix->data, i), dim = x->dims[i % (uint64_t)q];
        if (v < -dim || v >= dim)
            return oac_kernel_error(k, oac_kin_name(k, 1), "index %" PRId64 " of axis %d is "
                                    "out of [%" PRId64 ", %" PRId64 ")", v,
                                    (int)(i % (uint64_t)q), -dim, dim);
    }
    oac_tensor *y;
    if ((rc = copy_data(k, x, &y)))
        return rc;
    for (uint64_t j = 0; j < tuples && slice; j++) {
        int64_t off = 0;
        for (int64_t c = 0; c < q; c++) {
            int64_t v = oac_ek_geti(ix->elem_type, ix->data, j * (uint64_t)q + (uint64_t)c);
            off += (v < 0 ? v + x->dims[c] : v) * st[c];
        }
        if (r == RED_NONE) {
            memcpy((uint8_t *)y->data + (size_t)off * es,
                   (const uint8_t *)u->data + j * slice * es, slice * es);
            continue;
        }
        for (uint64_t e = 0; e < slice; e++)
            combine(r, t, y->data, (uint64_t)off + e, u->data, j * slice + e, es);
    }
    return OAC_OK;
}

/* ScatterElements: output[.., indices[i..], ..] (on `axis`) = updates[i..]. */
int oac_kernel_scatter_elements(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kin(k, 0);
    const oac_tensor *ix = x ? oac_kin_typed(k, 1, OAC_EKM_INT) : NULL;
    const oac_tensor *u = ix ? oac_kin(k, 2) : NULL;
    if (!u)
        return OAC_ERUNTIME;
    int32_t t = x->elem_type;
    size_t es = oac_ek_size(t);
    red r;
    int rc, axis;
    if (!es || t == OAC_T_STRING)
        return oac_kernel_bad_type(k, 0, t);
    if ((rc = reduction_of(k, t, &r)))
        return rc;
    if (u->elem_type != t)
        return oac_kernel_error(k, oac_kin_name(k, 2), "element type %s differs from data's %s",
                                oac_elem_name(u->elem_type), oac_elem_name(t));
    if ((rc = oac_kernel_axis(k, "axis", oac_attr_int(k->node, "axis", 0), x->rank, &axis)))
        return rc;
    bool ok = ix->rank == x->rank && u->rank == x->rank;
    for (int d = 0; ok && d < x->rank; d++)
        ok = u->dims[d] == ix->dims[d] && (d == axis || ix->dims[d] <= x->dims[d]);
    if (!ok)
        return oac_kernel_error(k, oac_kin_name(k, 1), "indices and updates must share one "
                                "shape of data's rank, within data off the axis");
    uint64_t n = oac_ek_numel(ix);
    int64_t dim = x->dims[axis];
    for (uint64_t i = 0; i < n; i++) {
        int64_t v = oac_ek_geti(ix->elem_type, ix->data, i);
        if (v < -dim || v >= dim)
            return oac_kernel_error(k, oac_kin_name(k, 1), "index %" PRId64 " is out of [%"
                                    PRId64 ", %" PRId64 ")", v, -dim, dim);
    }
    int64_t st[MAXR];
    oac_ek_strides(x->dims, x->rank, st);
    oac_tensor *y;
    if ((rc = copy_data(k, x, &y)))
        return rc;
    int64_t idx[MAXR] = { 0 };
    for (uint64_t i = 0; i < n; i++) {
        int64_t v = oac_ek_geti(ix->elem_type, ix->data, i), off = 0;
        for (int d = 0; d < x->rank; d++)
            off += (d == axis ? (v < 0 ? v + dim : v) : idx[d]) * st[d];
        combine(r, t, y->data, (uint64_t)off, u->data, i, es);
        for (int d = x->rank - 1; d >= 0; d--) {
            if (++idx[d] < ix->dims[d])
                break;
            idx[d] = 0;
        }
    }
    return OAC_OK;
}

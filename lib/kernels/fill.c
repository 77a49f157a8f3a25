/* kernels/fill.c: kernels of the reference runtime that make values from
 * a few numbers: Range, ConstantOfShape and Trilu (the masks and position
 * tables decoder exports build at run time).
 *
 * Owns the ONNX semantics of those operators (docs/Operators.md,
 * onnx/reference/ops): Range on FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT16,
 * INT32 and INT64 (element i is start + i * delta, numpy's arange);
 * ConstantOfShape of any whole-byte type its `value` gives; Trilu moving
 * elements of any whole-byte type.  Contract: section 8 (kernel-error,
 * element types).
 *
 * Invariants:
 *  1. The output's size is derived from validated numbers before it is
 *     allocated: Range's count from start, limit and delta without
 *     overflow (kernel-error when it cannot be represented), shapes
 *     non-negative.
 *  2. Outputs come from oac_kout (oac_kernel_output once the shape is
 *     checked); nothing else is allocated.
 *  3. Integer Range arithmetic wraps on uint64_t (the values stay inside
 *     [start, limit) anyway), so no signed overflow.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/elem_io.h"

#define MAXR OAC_RT_MAX_RANK

/* Input i as a one-element tensor of mask. */
static const oac_tensor *scalar_in(oac_kernel_call *k, size_t i, uint32_t mask)
{
    const oac_tensor *t = oac_kin_typed(k, i, mask);
    if (t && oac_ek_numel(t) != 1) {
        oac_kernel_error(k, oac_kin_name(k, i), "%" PRIu64 " elements where a scalar is "
                         "required", oac_ek_numel(t));
        return NULL;
    }
    return t;
}

int oac_kernel_range(oac_kernel_call *k)
{
    const uint32_t types = OAC_EKM_FLOAT | OAC_EKM_INT | OAC_EKM(OAC_T_INT16);
    const oac_tensor *ts = scalar_in(k, 0, types);
    const oac_tensor *tl = ts ? scalar_in(k, 1, types) : NULL;
    const oac_tensor *td = tl ? scalar_in(k, 2, types) : NULL;
    if (!td)
        return OAC_ERUNTIME;
    int32_t t = ts->elem_type;
    if (tl->elem_type != t || td->elem_type != t)
        return oac_kernel_error(k, oac_kin_name(k, tl->elem_type != t ? 1 : 2),
                                "element type differs from start's %s", oac_elem_name(t));
    int64_t n;
    oac_tensor *y;
    int rc;
    if (oac_ek_is_float(t)) {
        double s = oac_ek_getd(t, ts->data, 0), l = oac_ek_getd(t, tl->data, 0);
        double d = oac_ek_getd(t, td->data, 0);
        if (!isfinite(s) || !isfinite(l) || !isfinite(d) || d == 0.0)
            return oac_kernel_error(k, oac_kin_name(k, d == 0.0 ? 2 : 0),
                                    "start, limit and delta must be finite, delta non-zero");
        double c = ceil((l - s) / d);
        if (!(c < 9.0e15))
            return oac_kernel_error(k, oac_kin_name(k, 1), "%g elements are too many", c);
        n = c > 0 ? (int64_t)c : 0;
        if ((rc = oac_kout(k, 0, t, 1, &n, &y)))
            return rc;
        for (int64_t i = 0; i < n; i++)
            oac_ek_setd(t, y->data, (uint64_t)i, s + (double)i * d);
        return OAC_OK;
    }
    int64_t s = oac_ek_geti(t, ts->data, 0), l = oac_ek_geti(t, tl->data, 0);
    int64_t d = oac_ek_geti(t, td->data, 0), diff;
    if (d == 0)
        return oac_kernel_error(k, oac_kin_name(k, 2), "delta is 0");
    if (oac_sub_overflow_i64(l, s, &diff))
        return oac_kernel_error(k, oac_kin_name(k, 1), "limit - start overflows");
    /* ceil(diff / d) when they agree in sign, else nothing. */
    if ((diff > 0) != (d > 0) || diff == 0)
        n = 0;
    else if (d == -1 && diff == INT64_MIN)
        n = INT64_MAX;   /* refused just below */
    else
        n = diff / d + (diff % d != 0);
    if (n > INT64_MAX / 64)
        return oac_kernel_error(k, oac_kin_name(k, 1), "%" PRId64 " elements are too many",
                                n);
    if ((rc = oac_kout(k, 0, t, 1, &n, &y)))
        return rc;
    for (int64_t i = 0; i < n; i++)
        oac_ek_seti(t, y->data, (uint64_t)i,
                    (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
    return OAC_OK;
}

int oac_kernel_constant_of_shape(oac_kernel_call *k)
{
    int64_t dims[MAXR];
    size_t n;
    int rc = oac_kin_ints(k, 0, dims, MAXR, &n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        if (dims[i] < 0)
            return oac_kernel_error(k, oac_kin_name(k, 0), "dim %zu is %" PRId64, i, dims[i]);
    /* The fill: `value` (one element of any type), else FLOAT 0. */
    uint8_t fill[16] = { 0 };
    int32_t t = OAC_T_FLOAT;
    const Onnx__AttributeProto *a = oac_node_attr(k->node, "value");
    size_t es = 4;
    if (a && a->t) {
        uint64_t cnt;
        t = a->t->data_type;
        es = oac_ek_size(t);
        if (!es || t == OAC_T_STRING || es > sizeof fill)
            return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                                   "node '%s' (%s): 'value': element type %s is not "
                                   "implemented by the reference runtime's kernel",
                                   k->node_name, k->node->op_type,
                                   oac_elem_name(t) ? oac_elem_name(t) : "?");
        if (!oac_tensor_numel(a->t, &cnt) || cnt != 1)
            return oac_kernel_error(k, "value", "not a one-element tensor");
        if ((rc = oac_tensor_read(k->ctx, k->model, a->t, fill, es)))
            return oac_kernel_error(k, "value", "%s", oac_errmsg(k->ctx));
    }
    oac_tensor *y;
    if ((rc = oac_kout(k, 0, t, (int)n, dims, &y)))
        return rc;
    uint64_t total = oac_ek_numel(y);
    for (uint64_t i = 0; i < total; i++)
        memcpy((uint8_t *)y->data + i * es, fill, es);
    return OAC_OK;
}

/* Trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of every
 * matrix in the last two dims; the rest zero. */
int oac_kernel_trilu(oac_kernel_call *k)
{
    const oac_tensor *x = oac_kin(k, 0);
    if (!x)
        return OAC_ERUNTIME;
    size_t es = oac_ek_size(x->elem_type);
    if (!es || x->elem_type == OAC_T_STRING)
        return oac_kernel_bad_type(k, 0, x->elem_type);
    if (x->rank < 2)
        return oac_kernel_error(k, oac_kin_name(k, 0), "rank %d, below 2", x->rank);
    int64_t diag = 0;
    if (k->n_in > 1 && k->in[1]) {
        const oac_tensor *kt = scalar_in(k, 1, OAC_EKM(OAC_T_INT64));
        if (!kt)
            return OAC_ERUNTIME;
        diag = oac_ek_geti(kt->elem_type, kt->data, 0);
    }
    bool upper = oac_attr_int(k->node, "upper", 1) != 0;
    oac_tensor *y;
    int rc = oac_kout(k, 0, x->elem_type, x->rank, x->dims, &y);
    if (rc)
        return rc;
    if (!y->bytes)
        return OAC_OK;   /* empty: M * N may overflow */
    int64_t M = x->dims[x->rank - 2], N = x->dims[x->rank - 1];
    uint64_t total = oac_ek_numel(x), mats = total / (uint64_t)(M * N);
    uint8_t *out = y->data;
    const uint8_t *in = x->data;
    for (uint64_t b = 0; b < mats; b++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                size_t e = (size_t)((b * (uint64_t)M + (uint64_t)i) * (uint64_t)N +
                                    (uint64_t)j) * es;
                /* j - i lies in (-M, N): no overflow against any k. */
                bool keep = upper ? j - i >= diag : j - i <= diag;
                if (keep)
                    memcpy(out + e, in + e, es);
                else
                    memset(out + e, 0, es);
            }
    return OAC_OK;
}

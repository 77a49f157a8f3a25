/* kernels/norm.c: the normalization kernels of decoder exports: ONNX
 * LayerNormalization (opset 17) and RMSNormalization (opset 23), the
 * ONNX-domain SimplifiedLayerNormalization ONNX Runtime registers, and
 * com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization
 * (contract sections 5 and 8).
 *
 * Owns their numeric semantics, checked against ONNX's reference
 * implementation and ONNX Runtime 1.30 (CPU).  Rows are the elements of
 * the axes from `axis` on (the last axis for the Skip operators):
 *  - LayerNormalization: y = (x - mean) / sqrt(var + epsilon) * Scale + B;
 *    Mean and InvStdDev (FLOAT, stash_type 1) have X's shape with the
 *    normalized axes set to 1.  Scale and B broadcast to X
 *    unidirectionally.
 *  - RMSNormalization, SimplifiedLayerNormalization:
 *    y = x / sqrt(mean(x^2) + epsilon) * scale, y of scale's element type
 *    (ONNX's V; ONNX Runtime accepts X and scale of different types);
 *    SimplifiedLayerNormalization's optional inv_std_var is FLOAT.
 *  - Skip(Simplified)LayerNormalization: s = input + skip (+ bias), skip
 *    of input's shape or broadcast over the leading axes ((1, S, H) or
 *    (S, H)); y normalizes s over the hidden axis with gamma (and beta);
 *    outputs mean and inv_std_var (FLOAT, input's shape with hidden 1;
 *    the simplified operator's mean is 0, as ONNX Runtime's) and
 *    input_skip_bias_sum (s); any of outputs 1..3 may be omitted.  The
 *    default epsilon is ONNX Runtime's 1e-12.
 *
 * Invariants:
 *  1. No workspace: each row is read in passes (mean, then variance or
 *     the mean of squares, then the output), accumulating in double; only
 *     outputs are allocated, through oac_kout (oac_kernel_output).
 *  2. Shapes are checked before any output is allocated: a scale, bias or
 *     skip that does not broadcast to the input is kernel-error naming
 *     it; an element type outside FLOAT, FLOAT16, BFLOAT16, DOUBLE is
 *     unsupported-operator, as is a stash_type other than 1 (FLOAT).
 *  3. FLOAT16 and BFLOAT16 are widened exactly, computed in double and
 *     rounded on store (kernels/elem_io.h).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/elem_io.h"

typedef struct norm {
    const oac_tensor *x, *skip, *scale, *bias, *vec_bias;
    size_t skip_port, scale_port, bias_port, vec_bias_port;
    int axis;
    double eps;
    bool simplified;
    bool skip_op;        /* gamma / beta / bias are (hidden) vectors */
    int32_t y_type;
    size_t out_mean, out_inv, out_sum;   /* output ports, SIZE_MAX: none */
} norm;

static bool out_wanted(const oac_kernel_call *k, size_t i)
{
    return i < k->n_out && k->out[i];
}

static int norm_run(oac_kernel_call *k, const norm *n)
{
    const oac_tensor *x = n->x;
    int rc;
    /* Operands walked together with X (invariant 2: each must broadcast
     * to X's own shape). */
    const oac_tensor *ops[3] = { x };
    size_t ports[3] = { 0 };
    int no = 1, i_skip = -1, i_scale = -1, i_bias = -1;
    if (n->skip) {
        i_skip = no, ports[no] = n->skip_port, ops[no++] = n->skip;
    } else {
        i_scale = no, ports[no] = n->scale_port, ops[no++] = n->scale;
        if (n->bias)
            i_bias = no, ports[no] = n->bias_port, ops[no++] = n->bias;
    }
    oac_bcast it;
    if ((rc = oac_bcast_init(k, &it, no, ops)))
        return rc;
    for (int j = 1; j < no; j++) {
        bool fits = ops[j]->rank <= x->rank;
        for (int a = 0; fits && a < ops[j]->rank; a++) {
            int64_t d = ops[j]->dims[ops[j]->rank - 1 - a];
            fits = d == 1 || d == x->dims[x->rank - 1 - a];
        }
        if (!fits)
            return oac_kernel_error(k, oac_kin_name(k, ports[j]), "does not broadcast "
                                    "to the input's shape");
    }
    int64_t outer = 1, inner = 1;
    for (int a = 0; a < x->rank; a++)
        *(a < n->axis ? &outer : &inner) *= x->dims[a];
    uint64_t cnt;
    if (n->skip_op) {
        const oac_tensor *v[3] = { n->scale, n->bias, n->vec_bias };
        const size_t vp[3] = { n->scale_port, n->bias_port, n->vec_bias_port };
        for (int j = 0; j < 3; j++)
            if (v[j] && (!oac_tensor_numel_rt(v[j], &cnt) || cnt != (uint64_t)inner ||
                         v[j]->rank != 1))
                return oac_kernel_error(k, oac_kin_name(k, vp[j]), "shape is not "
                                        "(hidden) = (%" PRId64 ")", inner);
    }
    /* Outputs (nothing written before). */
    oac_tensor *y, *mean = NULL, *inv = NULL, *sum = NULL;
    if ((rc = oac_kout(k, 0, n->y_type, x->rank, x->dims, &y)))
        return rc;
    int64_t rd[OAC_RT_MAX_RANK];
    for (int a = 0; a < x->rank; a++)
        rd[a] = a < n->axis ? x->dims[a] : 1;
    if (out_wanted(k, n->out_mean) &&
        (rc = oac_kout(k, n->out_mean, OAC_T_FLOAT, x->rank, rd, &mean)))
        return rc;
    if (out_wanted(k, n->out_inv) &&
        (rc = oac_kout(k, n->out_inv, OAC_T_FLOAT, x->rank, rd, &inv)))
        return rc;
    if (out_wanted(k, n->out_sum) &&
        (rc = oac_kout(k, n->out_sum, x->elem_type, x->rank, x->dims, &sum)))
        return rc;

    int32_t xt = x->elem_type;
    const oac_tensor *vb = n->vec_bias;
    for (int64_t r = 0; r < outer; r++) {
        /* Pass 1: the mean (or the mean of squares); the sum output. */
        oac_bcast a = it;
        double acc = 0;
        for (int64_t i = 0; i < inner; i++, oac_bcast_next(&a)) {
            double v = oac_ek_getd(xt, x->data, (uint64_t)a.off[0]);
            if (i_skip > 0)
                v += oac_ek_getd(n->skip->elem_type, n->skip->data, (uint64_t)a.off[i_skip]);
            if (vb)
                v += oac_ek_getd(vb->elem_type, vb->data, (uint64_t)i);
            if (sum)
                oac_ek_setd(xt, sum->data, (uint64_t)a.off[0], v);
            acc += n->simplified ? v * v : v;
        }
        double mu = n->simplified ? 0 : acc / (double)inner, var = acc / (double)inner;
        /* Pass 2: the variance around the mean. */
        if (!n->simplified) {
            a = it;
            var = 0;
            for (int64_t i = 0; i < inner; i++, oac_bcast_next(&a)) {
                double v = oac_ek_getd(xt, x->data, (uint64_t)a.off[0]);
                if (i_skip > 0)
                    v += oac_ek_getd(n->skip->elem_type, n->skip->data,
                                     (uint64_t)a.off[i_skip]);
                if (vb)
                    v += oac_ek_getd(vb->elem_type, vb->data, (uint64_t)i);
                var += (v - mu) * (v - mu);
            }
            var /= (double)inner;
        }
        double is = 1 / sqrt(var + n->eps);
        if (mean)
            oac_ek_setd(OAC_T_FLOAT, mean->data, (uint64_t)r, mu);
        if (inv)
            oac_ek_setd(OAC_T_FLOAT, inv->data, (uint64_t)r, is);
        /* Pass 3: the output, advancing the shared walk. */
        for (int64_t i = 0; i < inner; i++, oac_bcast_next(&it)) {
            double v = oac_ek_getd(xt, x->data, (uint64_t)it.off[0]);
            if (i_skip > 0)
                v += oac_ek_getd(n->skip->elem_type, n->skip->data, (uint64_t)it.off[i_skip]);
            if (vb)
                v += oac_ek_getd(vb->elem_type, vb->data, (uint64_t)i);
            double g, bb = 0;
            if (n->skip_op) {
                g = oac_ek_getd(n->scale->elem_type, n->scale->data, (uint64_t)i);
                if (n->bias)
                    bb = oac_ek_getd(n->bias->elem_type, n->bias->data, (uint64_t)i);
            } else {
                g = oac_ek_getd(n->scale->elem_type, n->scale->data,
                                (uint64_t)it.off[i_scale]);
                if (i_bias > 0)
                    bb = oac_ek_getd(n->bias->elem_type, n->bias->data,
                                     (uint64_t)it.off[i_bias]);
            }
            oac_ek_setd(n->y_type, y->data, (uint64_t)it.off[0], (v - mu) * is * g + bb);
        }
    }
    return OAC_OK;
}

/* axis (attribute, default -1) of X made non-negative; epsilon;
 * stash_type 1 only. */
static int common_attrs(oac_kernel_call *k, const oac_tensor *x, norm *n, float eps)
{
    int rc = oac_kernel_axis(k, "axis", oac_attr_int(k->node, "axis", -1), x->rank,
                             &n->axis);
    if (rc)
        return rc;
    n->eps = oac_attr_float(k->node, "epsilon", eps);
    int64_t stash = oac_attr_int(k->node, "stash_type", 1);
    if (stash != OAC_T_FLOAT)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s' (%s): stash_type %" PRId64 " is not implemented "
                               "by the reference runtime (1, FLOAT, is)", k->node_name,
                               k->node->op_type, stash);
    return OAC_OK;
}

/* LayerNormalization(X, Scale, B?) -> (Y, Mean?, InvStdDev?). */
int oac_kernel_layer_normalization(oac_kernel_call *k)
{
    int rc = OAC_OK;
    norm n = { .scale_port = 1, .bias_port = 2, .out_mean = 1, .out_inv = 2,
               .out_sum = SIZE_MAX };
    n.x = oac_kin_typed(k, 0, OAC_EKM_FLOAT);
    n.scale = n.x ? oac_kin_typed(k, 1, OAC_EKM_FLOAT) : NULL;
    if (!n.scale)
        return OAC_ERUNTIME;
    n.bias = oac_kin_opt(k, 2, OAC_EKM_FLOAT, &rc);
    if (rc || (rc = common_attrs(k, n.x, &n, 1e-5f)))
        return rc;
    n.y_type = n.x->elem_type;
    return norm_run(k, &n);
}

/* RMSNormalization(X, scale) -> Y;
 * SimplifiedLayerNormalization(X, scale) -> (Y, inv_std_var?). */
static int rms(oac_kernel_call *k, size_t out_inv)
{
    int rc;
    norm n = { .scale_port = 1, .simplified = true, .out_mean = SIZE_MAX,
               .out_inv = out_inv, .out_sum = SIZE_MAX };
    n.x = oac_kin_typed(k, 0, OAC_EKM_FLOAT);
    n.scale = n.x ? oac_kin_typed(k, 1, OAC_EKM_FLOAT) : NULL;
    if (!n.scale)
        return OAC_ERUNTIME;
    if ((rc = common_attrs(k, n.x, &n, 1e-5f)))
        return rc;
    n.y_type = n.scale->elem_type;
    return norm_run(k, &n);
}

int oac_kernel_rms_normalization(oac_kernel_call *k) { return rms(k, SIZE_MAX); }
int oac_kernel_simplified_layer_normalization(oac_kernel_call *k) { return rms(k, 1); }

/* Skip(Simplified)LayerNormalization(input, skip, gamma, beta?, bias?)
 * -> (output, mean?, inv_std_var?, input_skip_bias_sum?); the simplified
 * form has no beta (bias is input 3). */
static int skip_ln(oac_kernel_call *k, bool simplified)
{
    int rc = OAC_OK;
    norm n = { .skip_port = 1, .scale_port = 2, .bias_port = 3, .vec_bias_port = 4,
               .simplified = simplified, .skip_op = true, .out_mean = 1,
               .out_inv = 2, .out_sum = 3 };
    if (simplified)
        n.vec_bias_port = 3, n.bias_port = SIZE_MAX;
    n.x = oac_kin_typed(k, 0, OAC_EKM_FLOAT);
    n.skip = n.x ? oac_kin_typed(k, 1, OAC_EKM_FLOAT) : NULL;
    n.scale = n.skip ? oac_kin_typed(k, 2, OAC_EKM_FLOAT) : NULL;
    if (!n.scale)
        return OAC_ERUNTIME;
    if (!simplified)
        n.bias = oac_kin_opt(k, 3, OAC_EKM_FLOAT, &rc);
    if (!rc)
        n.vec_bias = oac_kin_opt(k, n.vec_bias_port, OAC_EKM_FLOAT, &rc);
    if (rc)
        return rc;
    if (n.x->rank < 2 || n.x->rank > 3)
        return oac_kernel_error(k, oac_kin_name(k, 0), "shape is not (batch, sequence, "
                                "hidden) or (tokens, hidden)");
    n.axis = n.x->rank - 1;
    n.eps = oac_attr_float(k->node, "epsilon", 1e-12f);
    n.y_type = n.x->elem_type;
    return norm_run(k, &n);
}

int oac_kernel_skip_layer_normalization(oac_kernel_call *k) { return skip_ln(k, false); }
int oac_kernel_skip_simplified_layer_normalization(oac_kernel_call *k)
{
    return skip_ln(k, true);
}

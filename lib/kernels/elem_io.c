/* kernels/elem_io.c: the refusals and the broadcasting every kernel shares
 * (kernels/elem_io.h).
 *
 * Owns: the wording of kernel-error and of an unimplemented element type
 * (unsupported-operator), the typed input checks, and numpy broadcasting.
 * Contract: section 8 (kernel-error, element types), section 5.
 * Invariants:
 *  1. Every message names the node, its op_type and the value (input or
 *     attribute) it is about; a value of the graph is also the
 *     diagnostic's value field (value_field), an attribute's name is not.
 *  2. Broadcast shapes are validated dim by dim before any kernel
 *     allocates its output; a tensor's dims were validated by the runtime
 *     when it was made, so products of them do not overflow.
 *  3. Nothing here allocates but the diagnostic.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kernels/elem_io.h"

const char *oac_kin_name(const oac_kernel_call *k, size_t i)
{
    if (i >= k->node->n_input || !k->node->input[i])
        return "?";
    return k->node->input[i];
}

/* The diagnostic's value field: value when it is one of the node's
 * inputs or outputs; NULL for an attribute's name or a "?" (the message
 * names those). */
static const char *value_field(const oac_kernel_call *k, const char *value)
{
    const Onnx__NodeProto *n = k->node;
    for (size_t i = 0; value && value[0] && i < n->n_input + n->n_output; i++) {
        const char *v = i < n->n_input ? n->input[i] : n->output[i - n->n_input];
        if (v && !strcmp(v, value))
            return value;
    }
    return NULL;
}

int oac_kernel_error(oac_kernel_call *k, const char *value, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return oac_kernel_fail_value(k, OAC_KERNEL_ERROR, value_field(k, value),
                                 "node '%s' (%s): '%s': %s", k->node_name,
                                 k->node->op_type, value ? value : "?", msg);
}

int oac_kernel_pair_missing(oac_kernel_call *k, size_t given, size_t missing,
                            const char *what)
{
    return oac_kernel_error(k, oac_kin_name(k, given), "%s: input %zu is missing", what,
                            missing);
}

int oac_kernel_bad_type(oac_kernel_call *k, size_t i, int32_t t)
{
    const char *name = oac_elem_name(t);
    char num[16];
    if (!name) {
        snprintf(num, sizeof num, "%" PRId32, t);
        name = num;
    }
    return oac_kernel_fail_value(k, OAC_UNSUPPORTED_OPERATOR, value_field(k, oac_kin_name(k, i)),
                                 "node '%s' (%s): element type %s of input %zu '%s' is "
                                 "not implemented by the reference runtime's kernel",
                                 k->node_name, k->node->op_type, name, i, oac_kin_name(k, i));
}

const oac_tensor *oac_kin(oac_kernel_call *k, size_t i)
{
    if (i < k->n_in && k->in[i] && k->in[i]->kind == OAC_RTV_TENSOR)
        return oac_kernel_tensor_in(k, i);
    oac_kernel_error(k, i < k->node->n_input ? oac_kin_name(k, i) : "inputs",
                     "input %zu is %s", i, i < k->n_in && k->in[i] ?
                     "not a dense tensor" : "missing");
    return NULL;
}

int oac_kout(oac_kernel_call *k, size_t i, int32_t elem_type, int rank,
             const int64_t *dims, oac_tensor **out)
{
    uint64_t n = 1, bytes;
    for (int d = 0; d < rank; d++)
        if (dims[d] < 0 || oac_mul_overflow_u64(n, (uint64_t)dims[d], &n)) {
            *out = NULL;
            return oac_kernel_error(k, i < k->node->n_output ? k->node->output[i] : "?",
                                    "the output's shape is negative or overflows");
        }
    if (!oac_elem_bytes(elem_type, n, &bytes)) {
        *out = NULL;
        return oac_kernel_error(k, i < k->node->n_output ? k->node->output[i] : "?",
                                "%" PRIu64 " elements of %s overflow a size", n,
                                oac_elem_name(elem_type) ? oac_elem_name(elem_type) : "?");
    }
    return oac_kernel_output(k, i, elem_type, rank, dims, out);
}

const oac_tensor *oac_kin_typed(oac_kernel_call *k, size_t i, uint32_t mask)
{
    const oac_tensor *t = oac_kin(k, i);
    if (t && !oac_ek_in(t->elem_type, mask)) {
        oac_kernel_bad_type(k, i, t->elem_type);
        return NULL;
    }
    return t;
}

const oac_tensor *oac_kin_opt(oac_kernel_call *k, size_t i, uint32_t mask, int *rc)
{
    *rc = OAC_OK;
    if (i >= k->n_in || !k->in[i])
        return NULL;
    const oac_tensor *t = oac_kin_typed(k, i, mask);
    if (!t)
        *rc = OAC_ERUNTIME;
    return t;
}

int oac_kin_ints(oac_kernel_call *k, size_t i, int64_t *v, size_t max, size_t *n)
{
    *n = 0;
    const oac_tensor *t = oac_kin_typed(k, i, OAC_EKM_INT);
    if (!t)
        return OAC_ERUNTIME;
    uint64_t cnt = oac_ek_numel(t);
    if (cnt > max)
        return oac_kernel_error(k, oac_kin_name(k, i),
                                "%" PRIu64 " values where at most %zu are allowed", cnt, max);
    for (uint64_t j = 0; j < cnt; j++)
        v[j] = oac_ek_geti(t->elem_type, t->data, j);
    *n = (size_t)cnt;
    return OAC_OK;
}

int oac_kernel_axis(oac_kernel_call *k, const char *what, int64_t axis, int rank,
                    int *out)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return oac_kernel_error(k, what, "axis %" PRId64 " is outside [%d, %d)", axis,
                                -rank, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return OAC_OK;
}

int64_t oac_kernel_opset(const oac_kernel_call *k)
{
    const Onnx__ModelProto *m = k->model ? k->model->proto : NULL;
    for (size_t i = 0; m && i < m->n_opset_import; i++)
        if (m->opset_import[i] && oac_domain_is_onnx(m->opset_import[i]->domain))
            return m->opset_import[i]->has_version ? m->opset_import[i]->version : 1;
    return 21;   /* as the shapes pass assumes without an import */
}

int oac_bcast_init(oac_kernel_call *k, oac_bcast *b, int n, const oac_tensor *const *t)
{
    int r = 0;
    b->n = n;
    for (int j = 0; j < n; j++)
        if (t[j]->rank > r)
            r = t[j]->rank;
    b->rank = r;
    for (int d = 0; d < r; d++) {
        int64_t dim = 1;
        for (int j = 0; j < n; j++) {
            int it = d - (r - t[j]->rank);
            int64_t dj = it >= 0 ? t[j]->dims[it] : 1;
            if (dj == 1 || dj == dim)
                continue;
            if (dim != 1)
                return oac_kernel_error(k, oac_kin_name(k, (size_t)j),
                                        "shape does not broadcast: dim %d is %" PRId64
                                        " against %" PRId64, d, dj, dim);
            dim = dj;
        }
        b->dims[d] = dim;
    }
    b->count = 1;
    for (int d = 0; d < r; d++)
        if (oac_mul_overflow_u64(b->count, (uint64_t)b->dims[d], &b->count))
            return oac_kernel_error(k, oac_kin_name(k, 0),
                                    "the broadcast shape's element count overflows");
    for (int j = 0; j < n; j++) {
        uint64_t s = 1;   /* wraps for an empty operand (kernels/elem_io.h 6) */
        for (int d = r - 1; d >= 0; d--) {
            int it = d - (r - t[j]->rank);
            int64_t dj = it >= 0 ? t[j]->dims[it] : 1;
            b->st[j][d] = dj == 1 ? 0 : (int64_t)s;
            s *= (uint64_t)dj;
        }
        b->off[j] = 0;
    }
    for (int d = 0; d < r; d++)
        b->idx[d] = 0;
    return OAC_OK;
}

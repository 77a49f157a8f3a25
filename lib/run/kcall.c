/* run/kcall.c: the kernel call interface (run/kernel_api.h, "The kernel call").
 *
 * Owns what a kernel calls while it runs: producing an output
 * (oac_kernel_output: a counted buffer, or the MUST_ALIAS view checked
 * for type and shape), counted workspace that lives as long as the node,
 * a diagnostic located at the node (oac_kernel_fail), reading inputs as
 * tensors or integers (attributes: attr.c; the tensor test itself is
 * inline in run/kernel_api.h, and only its refusal is here:
 * oac_kernel_tensor_missing).  Contract: section 3
 * (alias-broken), section 8 (kernel-error: a kernel refusing its
 * inputs), section 4 (every output
 * and workspace byte is counted).
 *
 * Invariants:
 *  1. Kernels see only the call record: its ports, allocator, diagnostics
 *     and where the node sits; nothing here reaches into the interpreter,
 *     so a kernel can be called without a run (bench/bench_update.c).
 *  2. A workspace is pushed on the session's stack and freed by the
 *     interpreter when its node ends (oac_kcall_end with the node's
 *     mark): a control kernel's own workspace outlives the nodes of the
 *     body it runs.
 *  3. No buffer above OAC_RT_MAX_BYTES or past the run's memory budget
 *     is attempted (memory-budget at the node, naming the output).
 *  4. A kernel may produce any output its operator defines: one the node
 *     omits (empty name, or past its last output) is workspace, dropped
 *     when the node ends.
 */
#include <inttypes.h>
#include <string.h>

#include "run/exec.h"

static int vfail(oac_kernel_call *k, oac_code code, const char *value, const char *fmt,
                 va_list ap)
{
    oac_where w = { .graph = k->graph_name, .node = k->node_name,
                    .op_type = k->node->op_type, .value = value, .location = k->location };
    int rc = oac_diag_vadd(k->diags, code, &w, fmt, ap);
    return rc ? rc : OAC_ERUNTIME;
}

int oac_kernel_fail(oac_kernel_call *k, oac_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(k, code, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int oac_kernel_fail_value(oac_kernel_call *k, oac_code code, const char *value,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(k, code, value, fmt, ap);
    va_end(ap);
    return rc;
}

/* The node's allocation of n bytes (an output named value, or its
 * workspace) was refused: past the budget or the per-buffer limit is
 * memory-budget at the node, naming the value (invariant 3); out of
 * memory stays an operational failure. */
static int refused(oac_kernel_call *k, const char *value, const char *what, size_t n)
{
    int rc = oac_ralloc_failed(k->alloc);
    if (rc != OAC_EBUDGET)
        return rc;
    oac_where w = { .graph = k->graph_name, .node = k->node_name,
                    .op_type = k->node->op_type, .value = value,
                    .location = k->location };
    rc = oac_diag_add(k->diags, OAC_MEMORY_BUDGET, &w, "node '%s': its %s%s%s%s of %zu "
                      "bytes: %s", k->node_name, what, value ? " '" : "",
                      value ? value : "", value ? "'" : "", n, oac_errmsg(k->ctx));
    return rc ? rc : OAC_ERUNTIME;
}

/* Output i of the node is omitted (an empty name, or fewer outputs than
 * the operator makes) but the kernel computes it: into workspace, a
 * tensor header and then its data, freed when the node ends, so nothing
 * reads it and it still counts while the node runs (invariant 4). */
static int discarded(oac_kernel_call *k, size_t i, int32_t elem_type, int rank,
                     const int64_t *dims, oac_tensor **out)
{
    oac_tensor t = { .elem_type = elem_type, .rank = rank };
    for (int d = 0; d < rank; d++)
        t.dims[d] = dims[d];
    uint64_t n, bytes;
    const size_t head = (sizeof t + 15) & ~(size_t)15;
    if (!oac_tensor_numel_rt(&t, &n) || !oac_elem_bytes(elem_type, n, &bytes) ||
        bytes > SIZE_MAX - head)
        return oac_kernel_fail(k, OAC_KERNEL_ERROR,
                               "node '%s': output %zu has an invalid or overflowing "
                               "shape or element type %d", k->node_name, i, elem_type);
    void *mem;
    int rc = oac_kernel_workspace(k, head + (size_t)bytes, &mem);
    if (rc)
        return rc;
    t.bytes = (size_t)bytes;
    t.data = (uint8_t *)mem + head;
    memcpy(mem, &t, sizeof t);
    *out = mem;
    return OAC_OK;
}

int oac_kernel_output(oac_kernel_call *k, size_t i, int32_t elem_type,
                      int rank, const int64_t *dims, oac_tensor **out)
{
    *out = NULL;
    if (rank < 0 || rank > OAC_RT_MAX_RANK)
        return oac_err(k->ctx, OAC_EUNSUPPORTED,
                       "node '%s': output rank %d exceeds %d", k->node_name,
                       rank, OAC_RT_MAX_RANK);
    if (i >= k->n_out || !k->out[i])
        return discarded(k, i, elem_type, rank, dims, out);
    oac_rtval *v = k->out[i];
    if (k->out_alias[i] >= 0) {
        /* The view is the input itself; an output that would not fit it
         * cannot alias it. */
        bool same = v->kind == OAC_RTV_TENSOR && v->t.elem_type == elem_type &&
                    v->t.rank == rank;
        for (int d = 0; same && d < rank; d++)
            same = v->t.dims[d] == dims[d];
        if (!same)
            return oac_kernel_fail(k, OAC_ALIAS_BROKEN,
                                   "node '%s': output %zu must alias input %d but "
                                   "differs from it in type or shape",
                                   k->node_name, i, k->out_alias[i]);
        *out = &v->t;
        return OAC_OK;
    }
    if (v->kind != OAC_RTV_NONE)
        return oac_err(k->ctx, OAC_EINTERNAL, "node '%s': output %zu produced twice",
                       k->node_name, i);
    oac_tensor t = { .elem_type = elem_type, .rank = rank };
    for (int d = 0; d < rank; d++)
        t.dims[d] = dims[d];
    uint64_t n, bytes;
    if (!oac_tensor_numel_rt(&t, &n) || !oac_elem_bytes(elem_type, n, &bytes) ||
        bytes > SIZE_MAX)
        return oac_kernel_fail(k, OAC_KERNEL_ERROR,
                               "node '%s': output %zu has an invalid or overflowing "
                               "shape or element type %d", k->node_name, i,
                               elem_type);
    t.bytes = (size_t)bytes;
    t.data = bytes ? oac_ralloc_get(k->alloc, t.bytes, false) : NULL;
    if (bytes && !t.data)
        return refused(k, k->node->output[i], "output", t.bytes);
    v->kind = OAC_RTV_TENSOR;
    v->storage = bytes ? OAC_STORE_OWNED : OAC_STORE_NONE;
    v->writable = true;
    v->t = t;
    *out = &v->t;
    return OAC_OK;
}

int oac_kernel_workspace(oac_kernel_call *k, size_t bytes, void **out)
{
    oac_session *s = k->session;
    *out = NULL;
    if (!s)
        return oac_err(k->ctx, OAC_EINTERNAL,
                       "node '%s': workspace asked for outside a run", k->node_name);
    if (s->n_ws == s->cap_ws) {
        size_t cap = s->cap_ws;
        if (oac_grow(s->ctx, (void **)&s->ws, &cap, s->n_ws + 1, sizeof *s->ws))
            return OAC_ENOMEM;
        size_t cap2 = s->cap_ws;
        if (oac_grow(s->ctx, (void **)&s->ws_bytes, &cap2, s->n_ws + 1,
                     sizeof *s->ws_bytes))
            return OAC_ENOMEM;
        s->cap_ws = cap < cap2 ? cap : cap2;
    }
    void *p = oac_ralloc_get(k->alloc, bytes, true);
    if (!p)
        return refused(k, NULL, "workspace", bytes);
    s->ws[s->n_ws] = p;
    s->ws_bytes[s->n_ws++] = bytes;
    *out = p;
    return OAC_OK;
}

void oac_kcall_end(oac_session *s, size_t mark)
{
    while (s->n_ws > mark) {
        s->n_ws--;
        oac_ralloc_put(&s->alloc, s->ws[s->n_ws], s->ws_bytes[s->n_ws]);
    }
}

const oac_tensor *oac_kernel_tensor_missing(oac_kernel_call *k, size_t i)
{
    oac_kernel_fail(k, OAC_KERNEL_ERROR,
                    "node '%s' (%s): input %zu is missing or not a tensor",
                    k->node_name, k->node->op_type, i);
    return NULL;
}

int oac_kernel_ints_in(oac_kernel_call *k, size_t i, int64_t *v, size_t max,
                       size_t *n)
{
    *n = 0;
    const oac_tensor *t = oac_kernel_tensor_in(k, i);
    if (!t)
        return OAC_ERUNTIME;
    uint64_t cnt;
    if (!oac_tensor_numel_rt(t, &cnt) || cnt > max)
        return oac_kernel_fail(k, OAC_KERNEL_ERROR,
                               "node '%s': input %zu has too many elements",
                               k->node_name, i);
    for (uint64_t j = 0; j < cnt; j++) {
        if (t->elem_type == OAC_T_INT64) {
            memcpy(&v[j], (const uint8_t *)t->data + j * 8, 8);
        } else if (t->elem_type == OAC_T_INT32) {
            int32_t x;
            memcpy(&x, (const uint8_t *)t->data + j * 4, 4);
            v[j] = x;
        } else {
            return oac_kernel_fail(k, OAC_KERNEL_ERROR,
                                   "node '%s': input %zu must be INT64 or INT32",
                                   k->node_name, i);
        }
    }
    *n = (size_t)cnt;
    return OAC_OK;
}

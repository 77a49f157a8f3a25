/* run/control.c: If, Loop and calls of local functions on the
 * reference runtime (contract 3 "Details": If outputs alias through their
 * branches, Loop output i must-aliases input i+2, a call inherits the
 * function's alias_of; contract 4 `execution`; 5 `run`).
 *
 * Owns the kernels oac_kernel_if, oac_kernel_loop and
 * oac_kernel_call_function.  Each runs its body in a frame of the
 * interpreter (run/interp.c: oac_frame_enter, oac_frame_run,
 * oac_frame_leave), under the same memory rule as the main graph: the
 * body's nodes in its schedule's order, its buffers freed at its plan's
 * free points, every allocation through the session's one counted
 * allocator, so what a body holds is the control node's transient, as
 * check/plan.c plans it.
 *
 * What a control node returns:
 *  - an aliased output (port alias, or an If output every branch returns
 *    an in-place update of one outer value) is the outer value object
 *    itself; the body must hand back that very object, else alias-broken;
 *    the interpreter then checks its storage did not move (pointer
 *    identity);
 *  - another If or call output takes the body's buffer over (a move, no
 *    copy), or is copied into a new buffer when the body returns a value
 *    it does not own (an outer value, an input, an initializer);
 *  - a Loop's non-aliased carried value is its output buffer, allocated
 *    and filled with the initial value before the first iteration; each
 *    iteration reads it through a read-only view and its result is
 *    copied back after the body returns.  Aliased carried values keep
 *    the caller's storage across every iteration.
 *
 * Invariants:
 *  1. The body of a control node is the graph index's scope of its
 *     attribute (If: then_branch or else_branch, Loop: body) or of the
 *     function it calls; no name is looked up here.
 *  2. Scan, and Loop scan outputs, never get here: run/setup.c refuses
 *     them before the run (unsupported-operator).
 *  3. A frame is left (its buffers released) on every path.
 */
#include <inttypes.h>
#include <string.h>

#include "run/exec.h"

/* The node of the graph index a control kernel runs for. */
static const oac_node *call_node(const oac_kernel_call *k)
{
    return oac_scope_node(k->frame->scope, (long)k->node_index);
}

/* Output j of the control node from the body's value v (see the file
 * comment: identity for aliased outputs, else move or copy). */
static int take_output(oac_kernel_call *k, oac_frame *fr, size_t j, oac_rtval *v)
{
    if (j >= k->n_out || !k->out[j])
        return OAC_OK;
    if (!v || v->kind == OAC_RTV_NONE)
        return oac_kernel_fail(k, OAC_KERNEL_ERROR,
                               "node '%s': its body returned no value for output %zu",
                               k->node_name, j);
    if (k->out_alias[j] != -1) {
        if (v != k->out[j])
            return oac_kernel_fail(k, OAC_ALIAS_BROKEN,
                                   "node '%s': output %zu must alias its input, but the "
                                   "body returned another value", k->node_name, j);
        return OAC_OK;
    }
    if (oac_frame_owns(fr, v) && v->kind == OAC_RTV_TENSOR &&
        (v->storage == OAC_STORE_OWNED || v->storage == OAC_STORE_NONE)) {
        *k->out[j] = *v;
        memset(v, 0, sizeof *v);
        return OAC_OK;
    }
    if (v->kind != OAC_RTV_TENSOR)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s': the reference runtime returns only dense "
                               "tensors by value from a body (output %zu)",
                               k->node_name, j);
    oac_tensor *t;
    int rc = oac_kernel_output(k, j, v->t.elem_type, v->t.rank, v->t.dims, &t);
    if (rc)
        return rc;
    if (t->bytes)
        memcpy(t->data, v->t.data, t->bytes);
    return OAC_OK;
}

static int read_bool(oac_kernel_call *k, size_t i, bool *out)
{
    const oac_tensor *t = oac_kernel_tensor_in(k, i);
    if (!t)
        return OAC_ERUNTIME;
    uint64_t n;
    if (t->elem_type != OAC_T_BOOL || !oac_tensor_numel_rt(t, &n) || n != 1)
        return oac_kernel_fail(k, OAC_KERNEL_ERROR,
                               "node '%s': input %zu must be one BOOL", k->node_name, i);
    *out = ((const uint8_t *)t->data)[0] != 0;
    return OAC_OK;
}

/* An If branch or a function body, run once: the run, the node's outputs
 * from the body's, and the frame left whatever happened. */
static int run_once(oac_kernel_call *k, const oac_scope *body, oac_rtval *const *inputs,
                    size_t n_inputs)
{
    oac_frame fr;
    int rc = oac_frame_enter(&fr, k, body, inputs, n_inputs);
    if (!rc)
        rc = oac_frame_run(&fr, NULL);
    for (size_t j = 0; !rc && j < k->n_out; j++) {
        oac_rtval *v = oac_frame_output(&fr, j, &rc);
        if (!rc)
            rc = take_output(k, &fr, j, v);
    }
    oac_frame_leave(&fr);
    return rc;
}

int oac_kernel_if(oac_kernel_call *k)
{
    bool cond;
    int rc = read_bool(k, 0, &cond);
    if (rc)
        return rc;
    const char *which = cond ? "then_branch" : "else_branch";
    const oac_scope *g = oac_node_subgraph(call_node(k), which);
    if (!g)
        return oac_kernel_fail(k, OAC_KERNEL_ERROR, "node '%s': If lacks its %s",
                               k->node_name, which);
    if (g->n_outputs < k->n_out)
        return oac_kernel_fail(k, OAC_KERNEL_ERROR,
                               "node '%s': the branch returns %zu values for %zu outputs",
                               k->node_name, g->n_outputs, k->n_out);
    return run_once(k, g, NULL, 0);
}

int oac_kernel_call_function(oac_kernel_call *k)
{
    const oac_scope *f = oac_node_x(call_node(k))->callee;
    if (!f)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s': no local function %s", k->node_name,
                               k->node->op_type ? k->node->op_type : "");
    if (k->n_in > f->n_inputs || k->n_out > f->n_outputs)
        return oac_kernel_fail(k, OAC_KERNEL_ERROR,
                               "node '%s': %zu inputs and %zu outputs for function %s of "
                               "%zu and %zu", k->node_name, k->n_in, k->n_out,
                               f->func->name ? f->func->name : "", f->n_inputs,
                               f->n_outputs);
    return run_once(k, f, k->in, k->n_in);
}

/* A Loop's trip count (input 0, INT64_MAX when omitted) and first
 * condition (input 1, true when omitted); one of them is given. */
static int loop_bounds(oac_kernel_call *k, int64_t *m, bool *cond)
{
    *m = INT64_MAX;
    *cond = true;
    bool has_m = k->n_in > 0 && k->in[0];
    if (has_m) {
        size_t cnt;
        int rc = oac_kernel_ints_in(k, 0, m, 1, &cnt);
        if (rc)
            return rc;
        if (cnt != 1)
            return oac_kernel_fail(k, OAC_KERNEL_ERROR,
                                   "node '%s': trip count must be one integer", k->node_name);
    }
    bool has_cond = k->n_in > 1 && k->in[1];
    if (has_cond) {
        int rc = read_bool(k, 1, cond);
        if (rc)
            return rc;
    }
    if (!has_m && !has_cond)
        return oac_kernel_fail(k, OAC_KERNEL_ERROR,
                               "node '%s': a Loop without trip count and condition never "
                               "ends", k->node_name);
    return OAC_OK;
}

/* The body's carried values (nc of them, ins[2..]): aliased ones are
 * the caller's object (its storage in start[i]); the others live in the
 * output buffer, which starts as the initial value (views[i]). */
static int loop_carry_in(oac_kernel_call *k, size_t nc, oac_rtval **ins,
                         oac_rtval *views, const void **start)
{
    int rc;
    for (size_t i = 0; i < nc; i++) {
        oac_rtval *init = k->in[i + 2];
        if (!init || init->kind == OAC_RTV_NONE)
            return oac_kernel_fail(k, OAC_KERNEL_ERROR,
                                   "node '%s': carried value %zu is missing", k->node_name, i);
        bool aliased = i < k->n_out && k->out[i] && k->out_alias[i] == (int)(i + 2);
        if (aliased) {
            ins[i + 2] = k->out[i];
            start[i] = k->out[i]->kind == OAC_RTV_TENSOR ? k->out[i]->t.data
                                                         : (const void *)k->out[i];
            continue;
        }
        if (init->kind != OAC_RTV_TENSOR)
            return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                                   "node '%s': the reference runtime carries only dense "
                                   "tensors by value (carried value %zu)", k->node_name, i);
        if (i < k->n_out && k->out[i]) {
            oac_tensor *t;
            if ((rc = oac_kernel_output(k, i, init->t.elem_type, init->t.rank,
                                        init->t.dims, &t)))
                return rc;
            if (t->bytes)
                memcpy(t->data, init->t.data, t->bytes);
            views[i] = *k->out[i];
        } else {
            views[i] = *init;     /* an omitted output: read the initial value */
        }
        views[i].storage = OAC_STORE_VIEW;
        views[i].writable = false;
        ins[i + 2] = &views[i];
    }
    return OAC_OK;
}

/* Carried value i as iteration `iter` of the body returned it: an
 * aliased one in the very storage it started in (alias-broken
 * otherwise); one by value copied into its output when it changed. */
static int loop_carry_out(oac_kernel_call *k, oac_frame *fr, size_t i, int64_t iter,
                          oac_rtval **ins, oac_rtval *views, const void **start)
{
    int rc = OAC_OK;
    oac_rtval *v = oac_frame_output(fr, i + 1, &rc);
    if (rc)
        return rc;
    if (!v || v->kind == OAC_RTV_NONE)
        return oac_kernel_fail(k, OAC_KERNEL_ERROR,
                               "node '%s': the body returned no carried value %zu",
                               k->node_name, i);
    if (ins[i + 2] != &views[i]) {
        /* One storage across all iterations. */
        const void *now = v->kind == OAC_RTV_TENSOR ? v->t.data : (const void *)v;
        if (v != ins[i + 2] || now != start[i])
            return oac_kernel_fail(k, OAC_ALIAS_BROKEN,
                                   "node '%s': carried value %zu must stay in its "
                                   "storage, but iteration %" PRId64 " returned "
                                   "another", k->node_name, i, iter);
        return OAC_OK;
    }
    if (v == &views[i])
        return OAC_OK;             /* returned unchanged */
    bool same = v->kind == OAC_RTV_TENSOR && v->t.elem_type == views[i].t.elem_type &&
                v->t.rank == views[i].t.rank && v->t.bytes == views[i].t.bytes;
    for (int d = 0; same && d < v->t.rank; d++)
        same = v->t.dims[d] == views[i].t.dims[d];
    if (!same)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s': carried value %zu changes type or shape "
                               "between iterations", k->node_name, i);
    if (i < k->n_out && k->out[i] && v->t.bytes)
        memmove(k->out[i]->t.data, v->t.data, v->t.bytes);
    else if (v->t.bytes)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s': carried value %zu changes but has no "
                               "output", k->node_name, i);
    return OAC_OK;
}

/* Loop(M?, cond?, v_initial...) -> v_final...; body(iter, cond_in,
 * v_in...) -> (cond_out, v_out...).  Scan outputs were refused before the
 * run (run/setup.c). */
int oac_kernel_loop(oac_kernel_call *k)
{
    oac_ctx *ctx = k->ctx;
    const oac_scope *g = oac_node_subgraph(call_node(k), "body");
    size_t nc = k->n_in > 2 ? k->n_in - 2 : 0;
    if (!g || g->n_inputs != nc + 2 || g->n_outputs != nc + 1 || k->n_out > nc)
        return oac_kernel_fail(k, OAC_KERNEL_ERROR,
                               "node '%s': Loop body must take 2 + %zu inputs and return "
                               "1 + %zu values (no scan outputs)", k->node_name, nc, nc);
    int64_t m;
    bool cond;
    int rc = loop_bounds(k, &m, &cond);
    if (rc)
        return rc;
    int64_t iter = 0;
    uint8_t cond_byte = cond;
    oac_rtval iv = { .kind = OAC_RTV_TENSOR, .storage = OAC_STORE_CONST,
                     .t = { .elem_type = OAC_T_INT64, .rank = 0, .data = &iter,
                            .bytes = sizeof iter } };
    oac_rtval cv = { .kind = OAC_RTV_TENSOR, .storage = OAC_STORE_CONST,
                     .t = { .elem_type = OAC_T_BOOL, .rank = 0, .data = &cond_byte,
                            .bytes = 1 } };
    oac_rtval **ins = oac_calloc(ctx, nc + 2, sizeof *ins);
    oac_rtval *views = oac_calloc(ctx, nc ? nc : 1, sizeof *views);
    const void **start = oac_calloc(ctx, nc ? nc : 1, sizeof *start);
    if (!ins || !views || !start) {
        rc = OAC_ENOMEM;
        goto done;
    }
    ins[0] = &iv;
    ins[1] = &cv;
    if ((rc = loop_carry_in(k, nc, ins, views, start)))
        goto done;
    for (; iter < m && cond; iter++) {
        cond_byte = cond;
        oac_frame fr;
        rc = oac_frame_enter(&fr, k, g, ins, nc + 2);
        if (!rc)
            rc = oac_frame_run(&fr, NULL);
        oac_rtval *co = rc ? NULL : oac_frame_output(&fr, 0, &rc);
        if (!rc) {
            if (!co || co->kind != OAC_RTV_TENSOR || co->t.elem_type != OAC_T_BOOL ||
                co->t.bytes != 1)
                rc = oac_kernel_fail(k, OAC_KERNEL_ERROR,
                                     "node '%s': the body's condition is not one BOOL",
                                     k->node_name);
            else
                cond = ((const uint8_t *)co->t.data)[0] != 0;
        }
        for (size_t i = 0; !rc && i < nc; i++)
            rc = loop_carry_out(k, &fr, i, iter, ins, views, start);
        oac_frame_leave(&fr);
        if (rc)
            goto done;
    }
done:
    oac_dealloc(ctx, ins);
    oac_dealloc(ctx, views);
    oac_dealloc(ctx, start);
    return rc;
}

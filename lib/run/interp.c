/* run/interp.c: the interpreter of the reference runtime (contract section 3
 * "Details": If outputs alias through their branches, a call inherits
 * its function's alias_of; section 4 `execution`; section 5 `run`).
 *
 * Owns frames (run/exec.h, struct oac_frame) and the one node executor.  A
 * frame runs one scope of the graph index: the main graph at depth 0 for
 * a whole session, an If branch, a Loop iteration's body or a local
 * function's body for one run of it.  Every node, at every depth, goes
 * through exec_node:
 *  1. its inputs are the frame's values (a value of an enclosing scope is
 *     read through the frame chain; an initializer is read on first use,
 *     into storage excluded from the counted figures);
 *  2. an output that reuses an input's storage (the alias forest: a
 *     MUST_ALIAS port, a call's alias_of, an If output every branch
 *     updates in place) is that value's object itself, which must be
 *     writable (binding-readonly otherwise); any other output starts
 *     empty, for the kernel to allocate;
 *  3. a cache update records its length for the position inputs
 *     (run/positions.c);
 *  4. the kernel runs, through the operator table's function pointer
 *     (run/setup.c); its workspaces are freed when it returns;
 *  5. pointer identity: each reused output must come back at its storage
 *     (alias-broken otherwise, the storage put back); a bound cache a
 *     node wrote so is noted for binding-invalid (run/bind.c);
 *  6. the buffers the scope's memory plan frees after this node's step
 *     are released.
 * Control kernels (run/control.c) run bodies through oac_frame_enter,
 * oac_frame_run and oac_frame_leave: the only call back into this file.
 *
 * Invariants:
 *  1. Nodes run in the schedule's order (check/order.h), buffers are freed
 *     at the plan's free points (check/plan.h) of that scope: the measured
 *     figures follow the plan's rule by construction.
 *  2. A frame releases exactly the storage it holds in objs (buffers its
 *     nodes made and did not hand over, initializers it read, the main
 *     frame's copies of inputs); values of other frames and bindings are
 *     borrowed.
 *  3. Recursion is bounded: run/setup.c refuses nesting past OAC_MAX_DEPTH
 *     before anything runs, and every frame checks its depth again.
 *  4. Work is bounded: every body run (an If branch, a Loop iteration, a
 *     call) is charged 1 + its node count, nested subgraphs' included,
 *     against the step's budget (OAC_RT_MAX_BODY_WORK, run/kernel_api.h) before
 *     it costs anything; past it the control node stops with
 *     unsupported-operator naming it.
 */
#include <inttypes.h>
#include <string.h>

#include "ops.h"
#include "run/exec.h"

static bool nonempty(const char *s)
{
    return s && *s;
}

static void saved_ptr(const oac_rtval *v, const void **p)
{
    *p = v->kind == OAC_RTV_TENSOR ? v->t.data : (const void *)v;
}

static int node_diag(oac_session *s, const oac_where *w, oac_code code,
                     const char *fmt, ...) OAC_PRINTF(4, 5);
static int node_diag(oac_session *s, const oac_where *w, oac_code code,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = oac_diag_vadd(s->diags, code, w, fmt, ap);
    va_end(ap);
    return rc ? rc : OAC_ERUNTIME;
}

/* ---- frames ------------------------------------------------------- */

/* The kept kernel states of the main graph's cache updates (one block;
 * none when the graph has no such node). */
static int kstates_setup(oac_frame *fr, oac_session *s, const oac_scope *sc)
{
    size_t n = 0;
    for (size_t i = 0; i < sc->n_nodes; i++)
        n += oac_op_has(sc->nodes[i].op, OAC_OPF_CACHE_UPDATE);
    if (!n)
        return OAC_OK;
    fr->kstate = oac_calloc(s->ctx, sc->n_nodes, sizeof *fr->kstate);
    fr->kstates = oac_calloc(s->ctx, n, sizeof *fr->kstates);
    if (!fr->kstate || !fr->kstates)
        return OAC_ENOMEM;
    for (size_t i = 0, j = 0; i < sc->n_nodes; i++)
        if (oac_op_has(sc->nodes[i].op, OAC_OPF_CACHE_UPDATE))
            fr->kstate[i] = &fr->kstates[j++];
    return OAC_OK;
}

static int frame_setup(oac_frame *fr, oac_session *s, const oac_scope *sc, int depth)
{
    rt_run *r = s->run;
    memset(fr, 0, sizeof *fr);
    fr->s = s;
    fr->scope = sc;
    fr->order = oac_sched_scope(r->sched, sc->index);
    fr->plan = oac_analysis_scope_plan(r->an, sc->index);
    fr->fn = r->fn[sc->index];
    fr->depth = depth;
    fr->name = oac_rt_scope_name(sc);
    fr->n = sc->n_values;
    size_t n = fr->n ? fr->n : 1, np = r->max_ports + 1;
    fr->vals = oac_calloc(s->ctx, n, sizeof *fr->vals);
    fr->objs = oac_calloc(s->ctx, n, sizeof *fr->objs);
    fr->loaded = oac_calloc(s->ctx, n, sizeof *fr->loaded);
    fr->in_buf = oac_calloc(s->ctx, np, sizeof *fr->in_buf);
    fr->out_buf = oac_calloc(s->ctx, np, sizeof *fr->out_buf);
    fr->alias = oac_calloc(s->ctx, np, sizeof *fr->alias);
    fr->before = oac_calloc(s->ctx, np, sizeof *fr->before);
    if (!fr->vals || !fr->objs || !fr->loaded || !fr->in_buf || !fr->out_buf ||
        !fr->alias || !fr->before)
        return OAC_ENOMEM;
    for (size_t l = 0; l < fr->n; l++)
        fr->vals[l] = &fr->objs[l];
    if (depth == 0 && kstates_setup(fr, s, sc))
        return OAC_ENOMEM;
    if (!fr->plan)
        return oac_err(s->ctx, OAC_EINTERNAL, "graph '%s' has no memory plan", fr->name);
    return OAC_OK;
}

void oac_frame_leave(oac_frame *fr)
{
    oac_session *s = fr->s;
    if (!s)
        return;
    for (size_t l = 0; fr->objs && l < fr->n; l++)
        oac_rtval_release(s->ctx, &s->alloc, &fr->objs[l]);
    oac_dealloc(s->ctx, fr->vals);
    oac_dealloc(s->ctx, fr->objs);
    oac_dealloc(s->ctx, fr->loaded);
    oac_dealloc(s->ctx, fr->in_buf);
    oac_dealloc(s->ctx, fr->out_buf);
    oac_dealloc(s->ctx, fr->alias);
    oac_dealloc(s->ctx, fr->before);
    oac_dealloc(s->ctx, fr->kstate);
    oac_dealloc(s->ctx, fr->kstates);
    memset(fr, 0, sizeof *fr);
}

int oac_frame_main(oac_frame *fr, oac_session *s)
{
    rt_run *r = s->run;
    int rc = frame_setup(fr, s, r->main, 0);
    if (rc)
        return rc;
    /* Bindings are shared; every other input is this session's copy
     * (positions advance per session). */
    for (size_t i = 0; i < r->n_in; i++) {
        const rt_input *in = &r->in[i];
        size_t l = in->v->id - r->main->first_id;
        fr->loaded[l] = true;
        if (in->binding >= 0) {
            fr->vals[l] = r->bind_val[in->binding];
            continue;
        }
        oac_rtval *v = &fr->objs[l];
        if (in->paged) {
            v->kind = OAC_RTV_PAGED;
            v->storage = OAC_STORE_BOUND;
            v->p = in->ptmpl;
            v->p.pages = NULL;
            v->p.n_pages = v->p.cap_pages = 0;
            if (oac_paged_reserve(s->ctx, &v->p, in->ptmpl.n_pages))
                return OAC_ENOMEM;
            for (size_t p = 0; p < in->ptmpl.n_pages; p++) {
                oac_page pg = in->ptmpl.pages[p];
                pg.data = pg.bytes ? oac_ralloc_bound(&s->alloc, pg.bytes) : NULL;
                if (pg.bytes && !pg.data)
                    return oac_ralloc_refusal(&s->alloc, "a page of input", in->v->name);
                if (pg.bytes)
                    memcpy(pg.data, in->ptmpl.pages[p].data, pg.bytes);
                v->p.pages[v->p.n_pages++] = pg;
            }
            continue;
        }
        v->kind = OAC_RTV_TENSOR;
        v->storage = OAC_STORE_CONST;
        v->writable = false;
        v->t = in->tmpl;
        v->t.data = in->tmpl.bytes ? oac_ralloc_bound(&s->alloc, in->tmpl.bytes) : NULL;
        if (in->tmpl.bytes && !v->t.data)
            return oac_ralloc_refusal(&s->alloc, "the session's copy of input",
                                      in->v->name);
        if (in->tmpl.data && in->tmpl.bytes)
            memcpy(v->t.data, in->tmpl.data, in->tmpl.bytes);
    }
    return OAC_OK;
}

void oac_frame_reset(oac_frame *fr)
{
    const oac_scope *sc = fr->scope;
    for (size_t l = 0; l < fr->n; l++)
        if (sc->values_block[l].kind == OAC_VAL_NODE_OUTPUT) {
            oac_rtval_release(fr->s->ctx, &fr->s->alloc, &fr->objs[l]);
            fr->vals[l] = &fr->objs[l];
        }
}

/* Local value l of fr, its initializer read on first use (into storage
 * excluded from the figures, contract 4). */
static oac_rtval *local_value(oac_frame *fr, size_t l, int *rc)
{
    *rc = OAC_OK;
    const oac_value *v = &fr->scope->values_block[l];
    if (!fr->loaded[l] && v->kind == OAC_VAL_INITIALIZER) {
        oac_session *s = fr->s;
        *rc = oac_rt_load_initializer(s->ctx, &s->alloc, s->run->model, oac_value_init(v),
                                      v->name, &fr->objs[l]);
        /* Once it holds storage it is loaded, read or not: never twice. */
        fr->loaded[l] = fr->objs[l].kind == OAC_RTV_TENSOR;
        if (*rc)
            return NULL;
    }
    return fr->vals[l];
}

oac_rtval *oac_frame_value(oac_frame *fr, const oac_value *v, int *rc)
{
    *rc = OAC_OK;
    for (oac_frame *f = fr; v && f; f = f->up)
        if (f->scope == v->scope)
            return local_value(f, v->id - f->scope->first_id, rc);
    return NULL;
}

oac_rtval *oac_frame_output(oac_frame *fr, size_t i, int *rc)
{
    *rc = OAC_OK;
    const oac_scope *sc = fr->scope;
    return i < sc->n_outputs ? oac_frame_value(fr, sc->outputs[i], rc) : NULL;
}

bool oac_frame_owns(const oac_frame *fr, const oac_rtval *v)
{
    if (!fr->objs || v < fr->objs || v >= fr->objs + fr->n)
        return false;
    return fr->scope->values_block[v - fr->objs].kind == OAC_VAL_NODE_OUTPUT;
}

/* Nodes of scope s and of the subgraphs nested in it (saturating): what a
 * run of it is charged (invariant 4).  A call inside is charged when it
 * runs. */
static uint64_t nested_nodes(const oac_scope *s, int depth)
{
    uint64_t c = s->n_nodes;
    for (size_t i = 0; depth <= OAC_MAX_DEPTH && i < s->n_nodes; i++) {
        const oac_node_ext *x = oac_node_x(&s->nodes[i]);
        for (size_t k = 0; k < x->n_subgraphs; k++)
            if (oac_add_overflow_u64(c, nested_nodes(x->subgraphs[k], depth + 1), &c))
                return UINT64_MAX;
    }
    return c;
}

/* Charge units of body work to the running step: false (nothing
 * charged) when that would pass the step's budget, limit. */
static bool charge(oac_session *s, uint64_t units, uint64_t limit)
{
    uint64_t w;
    if (oac_add_overflow_u64(s->work, units, &w) || w > limit)
        return false;
    s->work = w;
    return true;
}

int oac_frame_enter(oac_frame *fr, oac_kernel_call *k, const oac_scope *body,
                    oac_rtval *const *inputs, size_t n_inputs)
{
    oac_frame *parent = k->frame;
    memset(fr, 0, sizeof *fr);
    if (parent->depth + 1 > OAC_MAX_DEPTH)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s': subgraphs or calls nested deeper than %d",
                               k->node_name, OAC_MAX_DEPTH);
    /* Invariant 4: every body run is charged before it costs anything. */
    const oac_run_hooks *h = k->session->run->hooks;
    uint64_t limit = h && h->body_work ? h->body_work : OAC_RT_MAX_BODY_WORK;
    uint64_t cost = nested_nodes(body, parent->depth + 1);
    if (cost == UINT64_MAX || !charge(k->session, 1 + cost, limit))
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s' (%s): the step's bodies passed the reference "
                               "runtime's limit of %" PRIu64 " units of work (each body "
                               "run counts 1 + its nodes, nested subgraphs' included): "
                               "a Loop whose condition never "
                               "turns false or whose trip count is too large, or calls "
                               "that fan out, would not end otherwise",
                               k->node_name, k->node->op_type ? k->node->op_type : "",
                               limit);
    int rc = frame_setup(fr, k->session, body, parent->depth + 1);
    if (rc)
        return rc;
    fr->k = k;
    bool isolated = body->kind == OAC_SCOPE_FUNCTION;
    fr->up = isolated ? NULL : parent;
    fr->call = isolated ? k->node : parent->call;
    fr->func = isolated ? body->func : parent->func;
    for (size_t i = 0; i < body->n_inputs && i < n_inputs; i++) {
        const oac_value *v = body->inputs[i];
        if (v && v->scope == body && inputs[i]) {
            fr->vals[v->id - body->first_id] = inputs[i];
            fr->loaded[v->id - body->first_id] = true;
        }
    }
    return OAC_OK;
}

/* A function body node with attributes referring to the call's
 * (ref_attr_name): a shallow copy whose attribute list has the call's
 * value under the inner name, or the function's default, or nothing. */
static int resolve_attrs(oac_frame *fr, const Onnx__NodeProto *np,
                         Onnx__NodeProto **copy, Onnx__AttributeProto **attrs)
{
    *copy = NULL;
    *attrs = NULL;
    bool refs = false;
    for (size_t a = 0; a < np->n_attribute; a++)
        refs = refs || nonempty(np->attribute[a]->ref_attr_name);
    if (!refs || !fr->call)
        return OAC_OK;
    oac_ctx *ctx = fr->s->ctx;
    size_t n = np->n_attribute;
    Onnx__NodeProto *c = oac_alloc(ctx, sizeof *c);
    Onnx__AttributeProto *vals = oac_calloc(ctx, n ? n : 1, sizeof *vals);
    Onnx__AttributeProto **list = oac_calloc(ctx, n ? n : 1, sizeof *list);
    if (!c || !vals || !list) {
        oac_dealloc(ctx, c);
        oac_dealloc(ctx, vals);
        oac_dealloc(ctx, list);
        return OAC_ENOMEM;
    }
    *c = *np;
    size_t m = 0;
    for (size_t a = 0; a < n; a++) {
        const Onnx__AttributeProto *at = np->attribute[a];
        if (!nonempty(at->ref_attr_name)) {
            list[m++] = np->attribute[a];
            continue;
        }
        const Onnx__AttributeProto *src = NULL;
        for (size_t k = 0; !src && k < fr->call->n_attribute; k++)
            if (fr->call->attribute[k]->name &&
                !strcmp(fr->call->attribute[k]->name, at->ref_attr_name))
                src = fr->call->attribute[k];
        for (size_t k = 0; !src && fr->func && k < fr->func->n_attribute_proto; k++)
            if (fr->func->attribute_proto[k]->name &&
                !strcmp(fr->func->attribute_proto[k]->name, at->ref_attr_name))
                src = fr->func->attribute_proto[k];
        if (!src)
            continue;       /* not given, no default: the attribute is absent */
        vals[a] = *src;
        vals[a].name = at->name;
        vals[a].ref_attr_name = NULL;
        list[m++] = &vals[a];
    }
    c->attribute = list;
    c->n_attribute = m;
    *copy = c;
    *attrs = vals;
    return OAC_OK;
}

/* ---- the node executor ------------------------------------------------ */

/* Where output j of node i takes its storage from (step 2): *src the
 * value object it reuses and *alias the input port or OAC_ALIAS_OUTER;
 * NULL and -1 for a new buffer.  *name is the reused value's name. */
static int output_source(oac_frame *fr, size_t i, size_t j, const oac_value *ov,
                         oac_rtval **src, int *alias, const char **name)
{
    *src = NULL;
    *alias = -1;
    const oac_value *p = oac_storage_parent(fr->s->run->al, ov);
    if (!p)
        return OAC_OK;
    *name = p->name;
    int port = oac_node_alias_in(fr->scope, (long)i, j);
    if (port >= 0 && oac_node_input(fr->scope, (long)i, (size_t)port) == p) {
        *alias = port;
        *src = fr->in_buf[port];
        return OAC_OK;
    }
    /* An If output every branch updates in place: the outer value. */
    int rc;
    *alias = OAC_ALIAS_OUTER;
    *src = oac_frame_value(fr, p, &rc);
    return rc;
}

/* Step 1: node i's inputs into fr->in_buf (an omitted one NULL). */
static int node_inputs(oac_frame *fr, size_t i, const Onnx__NodeProto *np, oac_where *w)
{
    const oac_node *nd = &fr->scope->nodes[i];
    int rc = OAC_OK;
    for (size_t j = 0; j < np->n_input; j++) {
        fr->in_buf[j] = NULL;
        if (!nonempty(np->input[j]))
            continue;
        const oac_value *v = oac_node_input(fr->scope, (long)i, j);
        oac_rtval *val = oac_frame_value(fr, v, &rc);
        if (rc) {
            w->value = np->input[j];    /* an initializer read on first use */
            return rc;
        }
        if (!val || val->kind == OAC_RTV_NONE)
            return node_diag(fr->s, w, OAC_MODEL_INVALID,
                             "node '%s' reads '%s', which has no value (not produced "
                             "before it runs)", nd->display, np->input[j]);
        fr->in_buf[j] = val;
    }
    return OAC_OK;
}

/* Step 2: node i's outputs into fr->out_buf: the reused value's object
 * for an aliased one (its storage saved in fr->before to check after the
 * kernel), else the frame's own object for a new buffer. */
static int node_outputs(oac_frame *fr, size_t i, const Onnx__NodeProto *np,
                        const oac_where *w)
{
    const oac_scope *sc = fr->scope;
    const oac_node *nd = &sc->nodes[i];
    int rc;
    for (size_t j = 0; j < np->n_output; j++) {
        fr->out_buf[j] = NULL;
        fr->alias[j] = -1;
        const oac_value *ov = oac_node_output(sc, (long)i, j);
        if (!nonempty(np->output[j]) || !ov)
            continue;
        size_t l = ov->id - sc->first_id;
        oac_rtval *src;
        const char *src_name = NULL;
        if ((rc = output_source(fr, i, j, ov, &src, &fr->alias[j], &src_name)))
            return rc;
        if (fr->alias[j] != -1) {
            if (!src || src->kind == OAC_RTV_NONE)
                return node_diag(fr->s, w, OAC_MODEL_INVALID,
                                 "node '%s': output '%s' aliases '%s', which has no value",
                                 nd->display, np->output[j], src_name);
            if (!src->writable)
                return node_diag(fr->s, w, OAC_BINDING_READONLY,
                                 "node '%s' updates '%s' in place, but its storage is "
                                 "read-only", nd->display, src_name);
            fr->vals[l] = src;
            saved_ptr(src, &fr->before[j]);
        } else {
            fr->vals[l] = &fr->objs[l];
        }
        fr->out_buf[j] = fr->vals[l];
    }
    return OAC_OK;
}

/* After the kernel: every aliased output is the reused value's object
 * and its storage did not move (pointer identity, counted), else
 * alias-broken with the storage put back. */
static int node_identity(oac_frame *fr, size_t i, const Onnx__NodeProto *np,
                         const oac_where *w)
{
    oac_session *s = fr->s;
    const oac_node *nd = &fr->scope->nodes[i];
    int rc = OAC_OK;
    for (size_t j = 0; !rc && j < np->n_output; j++) {
        if (fr->alias[j] == -1 || !fr->out_buf[j])
            continue;
        oac_rtval *v = fr->out_buf[j];
        /* A bound cache written this step (run/bind.c, binding-invalid). */
        oac_rt_binding_wrote(s, v);
        const void *after;
        saved_ptr(v, &after);
        bool held = after == fr->before[j];
        s->checked++;
        s->held += held;
        if (s->cur_step) {
            s->cur_step->identity_checked++;
            s->cur_step->identity_held += held;
        }
        if (held)
            continue;
        /* Put the storage back so nothing frees or dumps the misbehaving
         * kernel's buffer as the cache. */
        if (v->kind == OAC_RTV_TENSOR)
            v->t.data = (void *)fr->before[j];
        const oac_value *p = oac_storage_parent(s->run->al,
                                                oac_node_output(fr->scope, (long)i, j));
        rc = node_diag(s, w, OAC_ALIAS_BROKEN,
                       "node '%s': output '%s' must alias input '%s' but came "
                       "back at another address", nd->display, np->output[j],
                       p ? p->name : "");
    }
    return rc;
}

/* After the kernel: every output got a value (a Constant's is
 * read-only), and an update without output_alias counts its second
 * cache (contract 4, second_cache_bytes: the main graph's, per step). */
static int node_results(oac_frame *fr, size_t i, const Onnx__NodeProto *np, oac_where *w)
{
    const oac_node *nd = &fr->scope->nodes[i];
    for (size_t j = 0; j < np->n_output; j++) {
        oac_rtval *v = fr->out_buf[j];
        if (!v)
            continue;
        if (v->kind == OAC_RTV_NONE) {
            /* A node naming more outputs than its operator has (the
             * checker reads no output count): the model's, not ours. */
            w->value = np->output[j];
            return node_diag(fr->s, w, OAC_KERNEL_ERROR,
                             "node '%s' (%s): output %zu '%s' gets no value: the operator "
                             "computes fewer outputs than the node names; remove it",
                             nd->display, np->op_type, j, np->output[j]);
        }
        if (oac_op_has(nd->op, OAC_OPF_CONSTANT))
            v->writable = false;
    }
    if (fr->depth == 0 && oac_op_has(nd->op, OAC_OPF_CACHE_UPDATE) &&
        np->n_output && fr->out_buf[0] && fr->alias[0] < 0 &&
        fr->out_buf[0]->kind == OAC_RTV_TENSOR)
        fr->s->step_second += fr->out_buf[0]->t.bytes;
    return OAC_OK;
}

static int exec_node(oac_frame *fr, size_t i)
{
    oac_session *s = fr->s;
    oac_ctx *ctx = s->ctx;
    const oac_scope *sc = fr->scope;
    const oac_node *nd = &sc->nodes[i];
    const Onnx__NodeProto *orig = nd->proto;
    Onnx__NodeProto *copy = NULL;
    Onnx__AttributeProto *attrs = NULL;
    char loc[OAC_RT_LOC_MAX];
    oac_node_loc(loc, sizeof loc, sc, (long)i, NULL);
    oac_where w = { .graph = fr->name, .node = nd->display, .op_type = orig->op_type,
                    .location = loc };
    int rc = resolve_attrs(fr, orig, &copy, &attrs);
    if (rc)
        goto done;
    const Onnx__NodeProto *np = copy ? copy : orig;
    if ((rc = node_inputs(fr, i, np, &w)) || (rc = node_outputs(fr, i, np, &w)) ||
        (rc = oac_rt_positions_note(s, nd, np, fr->in_buf, &w)))
        goto done;
    oac_kernel_fn fn = fr->fn[i];
    if (!fn) {
        rc = node_diag(s, &w, OAC_UNSUPPORTED_OPERATOR,
                       "node '%s': the reference runtime has no kernel for %s",
                       nd->display, np->op_type ? np->op_type : "(no op_type)");
        goto done;
    }
    oac_kernel_call k = {
        .ctx = ctx, .model = s->run->model, .node = np, .node_name = nd->display,
        .node_index = i, .in = fr->in_buf, .n_in = np->n_input,
        .out = fr->out_buf, .n_out = np->n_output, .out_alias = fr->alias,
        .alloc = &s->alloc, .diags = s->diags, .session = s,
        .graph_name = fr->name, .location = loc, .frame = fr,
        .state = fr->kstate ? fr->kstate[i] : NULL,
    };
    /* A kernel that runs a body uses that body's frame's port arrays;
     * this frame's stay as set up above. */
    size_t mark = s->n_ws;
    rc = fn(&k);
    /* Workspace lives exactly as long as the node. */
    oac_kcall_end(s, mark);
    /* A kernel that refused wrote nothing; its step is not counted. */
    if (!rc && !(rc = node_identity(fr, i, np, &w)))
        rc = node_results(fr, i, np, &w);
done:
    /* Past the memory budget (or the per-buffer limit) here, in a kernel
     * or reading an initializer: a finding at the innermost node, which
     * the nodes holding it pass on as OAC_ERUNTIME. */
    if (rc == OAC_EBUDGET)
        rc = node_diag(s, &w, OAC_MEMORY_BUDGET, "node '%s'%s%s%s: %s", nd->display,
                       w.value ? " (reading '" : "", w.value ? w.value : "",
                       w.value ? "')" : "", oac_errmsg(ctx));
    if (copy) {
        oac_dealloc(ctx, copy->attribute);
        oac_dealloc(ctx, copy);
    }
    oac_dealloc(ctx, attrs);
    return rc;
}

int oac_frame_run(oac_frame *fr, long *stop)
{
    const oac_plan_sched *p = fr->plan;
    size_t free_at = 0;
    for (size_t k = 0; k < fr->scope->n_nodes; k++) {
        size_t i = oac_sched_node(fr->order, k);
        int rc = exec_node(fr, i);
        if (rc) {
            if (stop)
                *stop = (long)i;
            return rc;
        }
        /* Invariant 1: the plan's frees of this step. */
        for (size_t end = free_at + p->steps[k].n_free; free_at < end; free_at++) {
            size_t l = p->bufs[p->frees[free_at]].value - fr->scope->first_id;
            oac_rtval_release(fr->s->ctx, &fr->s->alloc, &fr->objs[l]);
        }
    }
    return OAC_OK;
}

/* run/setup.c: the run's tables and the refusals before anything runs
 * (contract section 3 runtime codes unsupported-operator and
 * binding-readonly, section 5 `run`).
 *
 * Owns: the kernel of every node of every scope (run/exec.h, run->fn), chosen
 * once: a test hook's override, else the kernel of the node's operator
 * row (ops.def), else the call of the local function the node names,
 * else none; the refusals of the
 * main graph's nodes before the first one runs (no kernel; for a node
 * holding a body: Scan, Loop scan outputs, a missing branch, a node
 * without a kernel at any depth, nesting past OAC_MAX_DEPTH or a
 * function calling itself); and the immutable-root refusal
 * (binding-readonly).  Structure (a value defined twice, a read of a
 * value nothing defines, an output never produced, a cycle) is the
 * check's alone: the run refuses an analysis with model-invalid findings
 * before it gets here (run/session.c).
 *
 * Invariants:
 *  1. Everything here reads the analysis (graph index, alias forest,
 *     schedule) and writes only run->fn and run->max_ports, before any
 *     session starts.
 *  2. The walk over bodies is linear in the model: a function body is
 *     walked once (its nesting height memoized), however often called.
 *  3. Refusals are diagnostics located at the main-graph node they stop
 *     (unsupported-operator names the inner node).
 */
#include <string.h>

#include "run/exec.h"

static bool nonempty(const char *s)
{
    return s && *s;
}

/* The kernel of node nd from the hooks' overrides (*found), else its
 * operator row's (ops.def's .kernel column, the row the graph index
 * resolved). */
static oac_kernel_fn table_kernel(const rt_run *r, const oac_node *nd, bool *found)
{
    const Onnx__NodeProto *np = nd->proto;
    *found = false;
    const char *d = oac_domain_is_onnx(np->domain) ? "" : np->domain;
    for (size_t i = 0; r->hooks && i < r->hooks->n_overrides; i++) {
        const oac_kernel_override *o = &r->hooks->overrides[i];
        const char *od = oac_domain_is_onnx(o->domain) ? "" : o->domain;
        if (!strcmp(od, d) && o->op_type && np->op_type &&
            !strcmp(o->op_type, np->op_type)) {
            *found = true;
            return o->fn;
        }
    }
    return nd->op ? nd->op->kernel : NULL;
}

static bool is_control(const oac_node *nd)
{
    return nd->op && (nd->op->id == OAC_OP_IF || nd->op->id == OAC_OP_LOOP);
}

/* The GraphProto of np's attribute `name` (its g), or NULL. */
static const Onnx__GraphProto *attr_graph(const Onnx__NodeProto *np, const char *name)
{
    for (size_t a = 0; a < np->n_attribute; a++)
        if (np->attribute[a]->name && !strcmp(np->attribute[a]->name, name) &&
            np->attribute[a]->g)
            return np->attribute[a]->g;
    return NULL;
}

static bool nests(const oac_node *nd)
{
    const Onnx__NodeProto *np = nd->proto;
    for (size_t a = 0; a < np->n_attribute; a++)
        if (np->attribute[a]->g || np->attribute[a]->n_graphs)
            return true;
    return false;
}

/* ---- refusals of bodies -------------------------------------------- */

#define TOO_DEEP (OAC_MAX_DEPTH + 1)

typedef struct precheck {
    rt_run *r;
    const oac_where *at;
    oac_diags *diags;
    int *fmemo;          /* per scope: 0 new, -1 walking, height + 1 done */
    bool refused;
} precheck;

static int refuse(precheck *p, const char *fmt, ...) OAC_PRINTF(2, 3);
static int refuse(precheck *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = oac_diag_vadd(p->diags, OAC_UNSUPPORTED_OPERATOR, p->at, fmt, ap);
    va_end(ap);
    p->refused = true;
    return rc;
}

static int walk_nodes(precheck *p, const oac_scope *s, const char *where, int depth,
                      int *height);

/* Node i of s at `depth` (its own scope's depth, calls counted): its
 * refusals, and the height of what it nests (0: nothing). */
static int walk_node(precheck *p, const oac_scope *s, size_t i, const char *where,
                     int depth, int *height)
{
    const oac_node *nd = &s->nodes[i];
    const Onnx__NodeProto *np = nd->proto;
    *height = 0;
    const char *nm = nonempty(np->name) ? np->name : "(unnamed)";
    const char *op = np->op_type ? np->op_type : "(no op_type)";
    int rc = OAC_OK;
    if (nd->op && nd->op->id == OAC_OP_SCAN)
        return refuse(p, "node '%s': the reference runtime does not run Scan "
                      "(node '%s' in %s)", p->at->node, nm, where);
    if (nd->op && nd->op->id == OAC_OP_LOOP) {
        const Onnx__GraphProto *body = attr_graph(np, "body");
        size_t carried = np->n_input > 2 ? np->n_input - 2 : 0;
        if (!body)
            return refuse(p, "node '%s': Loop '%s' in %s has no body", p->at->node, nm, where);
        if (body->n_output > carried + 1 || np->n_output > carried)
            return refuse(p, "node '%s': the reference runtime does not run Loop scan "
                          "outputs (node '%s' in %s)", p->at->node, nm, where);
    } else if (nd->op && nd->op->id == OAC_OP_IF) {
        if (!attr_graph(np, "then_branch") || !attr_graph(np, "else_branch"))
            return refuse(p, "node '%s': If '%s' in %s lacks a branch", p->at->node, nm, where);
    }
    bool found;
    bool kernel = is_control(nd) || table_kernel(p->r, nd, &found) != NULL;
    /* A table kernel wins over a local function of the same name, as in
     * the kernels table (run/exec.h). */
    const oac_scope *f = kernel ? NULL : oac_node_x(nd)->callee;
    if (!kernel && !f)
        return refuse(p, "node '%s': the reference runtime has no kernel for %s%s%s "
                      "(node '%s' in %s)", p->at->node,
                      nonempty(np->domain) ? np->domain : "",
                      nonempty(np->domain) ? "::" : "", op, nm, where);
    if (depth >= OAC_MAX_DEPTH && (f || nests(nd))) {
        *height = TOO_DEEP;
        return OAC_OK;
    }
    /* Below OAC_MAX_DEPTH every subgraph is indexed (check/graph.h invariant
     * 5), in attribute order. */
    const oac_node_ext *x = oac_node_x(nd);
    for (size_t k = 0; !rc && k < x->n_subgraphs; k++) {
        const oac_scope *sub = x->subgraphs[k];
        int h;
        rc = walk_nodes(p, sub, sub->graph->name ? sub->graph->name : "a subgraph",
                        depth + 1, &h);
        if (h + 1 > *height)
            *height = h + 1;
    }
    if (!rc && f) {
        int h;
        if (p->fmemo[f->index] == -1) {
            h = TOO_DEEP;          /* a recursive call: never bounded */
        } else if (p->fmemo[f->index] > 0) {
            h = p->fmemo[f->index] - 1;
        } else {
            p->fmemo[f->index] = -1;
            rc = walk_nodes(p, f, f->func->name ? f->func->name : "a function",
                            depth + 1, &h);
            p->fmemo[f->index] = (h > TOO_DEEP ? TOO_DEEP : h) + 1;
        }
        if (h + 1 > *height)
            *height = h + 1;
    }
    if (*height > TOO_DEEP)
        *height = TOO_DEEP;
    return rc;
}

static int walk_nodes(precheck *p, const oac_scope *s, const char *where, int depth,
                      int *height)
{
    *height = 0;
    for (size_t i = 0; i < s->n_nodes; i++) {
        int h;
        int rc = walk_node(p, s, i, where, depth, &h);
        if (rc)
            return rc;
        if (h > *height)
            *height = h;
        if (*height >= TOO_DEEP)
            break;
    }
    return OAC_OK;
}

/* A main-graph node holding a body: refuse what no frame could run. */
static int precheck_node(rt_run *r, size_t i, const oac_where *at, oac_diags *diags,
                         int *fmemo)
{
    precheck p = { .r = r, .at = at, .diags = diags, .fmemo = fmemo };
    int h;
    int rc = walk_node(&p, r->main, i, "the main graph", 0, &h);
    if (rc)
        return rc;
    if (!p.refused && h > OAC_MAX_DEPTH &&
        (rc = refuse(&p, "node '%s': subgraphs or local function calls nested deeper "
                     "than %d (or a function that calls itself)", at->node, OAC_MAX_DEPTH)))
        return rc;
    return p.refused ? OAC_ERUNTIME : OAC_OK;
}

/* ---- what the run reads of the analysis ---------------------------- */

/* Every scope a run can enter has its memory plan (check/plan.c): the
 * frames free values at its free points.  Structure is the check's: an
 * analysis with model-invalid findings never reaches here
 * (run/session.c take_analysis). */
static int planned(const rt_run *r, const oac_scope *s)
{
    if (!oac_analysis_scope_plan(r->an, s->index) && !s->truncated)
        return oac_err(r->ctx, OAC_EINTERNAL, "graph '%s' has no memory plan",
                       oac_rt_scope_name(s));
    return OAC_OK;
}

/* Mark the scopes a run can enter from s: its nodes' subgraphs and the
 * bodies of the functions they call (reach[] by scope index; a stack of
 * n_scopes entries). */
static void reach_from(const rt_run *r, const oac_scope *s, bool *reach,
                       const oac_scope **stack)
{
    size_t sp = 0;
    reach[s->index] = true;
    stack[sp++] = s;
    while (sp) {
        const oac_scope *x = stack[--sp];
        for (size_t i = 0; i < x->n_nodes; i++) {
            const oac_node_ext *e = oac_node_x(&x->nodes[i]);
            for (size_t k = 0; k <= e->n_subgraphs; k++) {
                const oac_scope *y = k < e->n_subgraphs ? e->subgraphs[k]
                    : r->fn[x->index][i] == oac_kernel_call_function ? e->callee : NULL;
                if (y && !reach[y->index]) {
                    reach[y->index] = true;
                    stack[sp++] = y;
                }
            }
        }
    }
}

int oac_rt_setup(rt_run *r, oac_diags *diags)
{
    const oac_graphs *g = r->g;
    int rc = OAC_OK;
    r->call_fn = oac_kernel_call_function;
    r->fn = oac_calloc(r->ctx, g->n_scopes, sizeof *r->fn);
    int *fmemo = oac_calloc(r->ctx, g->n_scopes, sizeof *fmemo);
    bool *reach = oac_calloc(r->ctx, g->n_scopes, sizeof *reach);
    const oac_scope **stack = oac_calloc(r->ctx, g->n_scopes, sizeof *stack);
    if (!r->fn || !fmemo || !reach || !stack) {
        rc = OAC_ENOMEM;
        goto done;
    }
    for (size_t si = 0; si < g->n_scopes; si++) {
        const oac_scope *s = g->scopes[si];
        r->fn[si] = oac_calloc(r->ctx, s->n_nodes ? s->n_nodes : 1, sizeof **r->fn);
        if (!r->fn[si]) {
            rc = OAC_ENOMEM;
            goto done;
        }
        for (size_t i = 0; i < s->n_nodes; i++) {
            const oac_node *nd = &s->nodes[i];
            const Onnx__NodeProto *np = nd->proto;
            bool found;
            oac_kernel_fn fn = table_kernel(r, nd, &found);
            if (!found && !fn && oac_node_x(nd)->callee)
                fn = oac_kernel_call_function;
            r->fn[si][i] = fn;
            if (np->n_input > r->max_ports)
                r->max_ports = np->n_input;
            if (np->n_output > r->max_ports)
                r->max_ports = np->n_output;
        }
    }
    /* The scopes a run can enter are planned. */
    reach_from(r, r->main, reach, stack);
    for (size_t si = 0; si < g->n_scopes && !rc; si++)
        if (reach[si] && !g->scopes[si]->truncated)
            rc = planned(r, g->scopes[si]);
    if (rc)
        goto done;
    bool unsupported = false;
    const oac_scope *m = r->main;
    char loc[OAC_RT_LOC_MAX];
    for (size_t i = 0; i < m->n_nodes && !rc; i++) {
        const oac_node *nd = &m->nodes[i];
        const Onnx__NodeProto *np = nd->proto;
        oac_where w = { .graph = oac_rt_scope_name(m), .node = nd->display,
                        .op_type = np->op_type,
                        .location = oac_node_loc(loc, sizeof loc, m, (long)i, NULL) };
        if (r->fn[0][i] && (nests(nd) || oac_node_x(nd)->callee)) {
            /* Bodies are refused as a whole before anything runs. */
            int prc = precheck_node(r, i, &w, diags, fmemo);
            if (prc == OAC_ERUNTIME)
                unsupported = true;
            else if (prc)
                rc = prc;
        }
        if (!rc && !r->fn[0][i]) {
            if (oac_diag_add(diags, OAC_UNSUPPORTED_OPERATOR, &w,
                             "node '%s': the reference runtime has no kernel for %s%s%s",
                             nd->display, nonempty(np->domain) ? np->domain : "",
                             nonempty(np->domain) ? "::" : "",
                             np->op_type ? np->op_type : "(no op_type)"))
                rc = OAC_ENOMEM;
            unsupported = true;
        }
    }
    if (!rc && unsupported)
        rc = OAC_ERUNTIME;
done:
    oac_dealloc(r->ctx, fmemo);
    oac_dealloc(r->ctx, reach);
    oac_dealloc(r->ctx, stack);
    return rc;
}

int oac_rt_check_roots(rt_run *r, oac_diags *diags)
{
    const oac_scope *m = r->main;
    int rc = OAC_OK;
    char loc[OAC_RT_LOC_MAX];
    for (size_t i = 0; i < m->n_nodes; i++) {
        const oac_node *nd = &m->nodes[i];
        for (size_t j = 0; j < nd->proto->n_output; j++) {
            const oac_value *v = oac_node_output(m, (long)i, j);
            if (!v || !oac_storage_parent(r->al, v))
                continue;
            const oac_value *root = oac_alias_root(r->al, v);
            if (!root || (root->kind == OAC_VAL_INPUT && root->scope == m &&
                          r->in[root->input_index].binding >= 0))
                continue;          /* bindings are checked by run/bind.c */
            const char *why = NULL;
            const oac_node *prod = oac_scope_node(root->scope, root->producer);
            if (oac_value_is_initializer(root))
                why = "an initializer";
            else if (prod && oac_op_has(prod->op, OAC_OPF_CONSTANT))
                why = "a constant";
            else if (root->kind == OAC_VAL_INPUT)
                why = "a READ_ONLY input";
            if (!why)
                continue;
            oac_where w = { .graph = oac_rt_scope_name(m), .node = nd->display,
                            .op_type = nd->proto->op_type,
                            .location = oac_node_loc(loc, sizeof loc, m, (long)i, NULL),
                            .value = root->name };
            if (oac_diag_add(diags, OAC_BINDING_READONLY, &w,
                             "node '%s' updates '%s' in place, but it is %s",
                             nd->display, root->name, why))
                return OAC_ENOMEM;
            rc = OAC_ERUNTIME;
        }
    }
    return rc;
}

void oac_rt_setup_fini(rt_run *r)
{
    for (size_t si = 0; r->fn && si < r->g->n_scopes; si++)
        oac_dealloc(r->ctx, r->fn[si]);
    oac_dealloc(r->ctx, r->fn);
    r->fn = NULL;
}

/* kernel_control.c: If, Loop and calls of local functions on the
 * reference runtime (contract 3 "Details": If outputs alias through their
 * branches, Loop output i must-aliases input i+2, a call inherits the
 * function's alias_of; contract 4 `execution`; 5 `run`).
 *
 * Owns: frames (struct rt_frame), the scope a subgraph or function body
 * runs in; the kernels oac_kernel_if, oac_kernel_loop and
 * oac_kernel_call_function; the static facts runtime.c shares with them
 * (oac_rt_outer_reads, oac_rt_output_source, oac_rt_precheck).
 *
 * The rule frames follow is the main graph's (plan.c, plan.h), applied
 * to the body: nodes in file order; a node output that takes its storage
 * from an input (oac_rt_output_source) is that input's value object,
 * never allocated; any other output is a buffer of the frame, freed right
 * after the last node of the body that reads any value sharing it (a
 * read by a nested subgraph counts for the node holding it); buffers
 * backing a body output live until the body returns.  Every allocation
 * goes through the session's one counted allocator, so what a body holds
 * is the control node's transient, as plan.c plans it.
 *
 * What a control node returns:
 *  - an aliased output (port alias, or an If output every branch returns
 *    an in-place update of one outer value) is the outer value object
 *    itself; the body must hand back that very object, else alias-broken;
 *    the caller then checks its storage did not move (pointer identity);
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
 *  1. Recursion is bounded: oac_rt_precheck refuses nesting (subgraphs and
 *     calls, recursive functions included) deeper than OAC_MAX_DEPTH
 *     before anything runs, and every frame checks its depth again.
 *  2. A frame releases exactly the buffers it allocated and did not hand
 *     over; inputs and outer values are borrowed.
 *  3. Scan, and Loop scan outputs, are refused (unsupported-operator).
 *  4. Work is bounded: every body run (an If branch, a Loop iteration, a
 *     call) is charged 1 + its node count, nested subgraphs' included
 *     (what setting up its frame walks), against the step's budget
 *     (OAC_RT_MAX_BODY_WORK, runtime.h) before its frame is set up; past
 *     it the control node stops with unsupported-operator naming it.
 *     Each kernel's own work is bounded by its buffers' sizes, which
 *     OAC_RT_MAX_BYTES bounds.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "runtime.h"

/* Is np the operator of row `id` (ops.def)? */
static bool op_is(const Onnx__NodeProto *np, oac_op_id id)
{
    return oac_op_is(oac_op_find(np->domain, np->op_type), id);
}

static bool nonempty(const char *s)
{
    return s && *s;
}

const Onnx__FunctionProto *oac_rt_function(const Onnx__ModelProto *m,
                                           const Onnx__NodeProto *np)
{
    if (!m || !np || !np->op_type)
        return NULL;
    const char *d = np->domain ? np->domain : "";
    for (size_t i = 0; i < m->n_functions; i++) {
        const Onnx__FunctionProto *f = m->functions[i];
        if (f && f->name && !strcmp(f->name, np->op_type) &&
            !strcmp(f->domain ? f->domain : "", d))
            return f;
    }
    return NULL;
}

static size_t function_index(const Onnx__ModelProto *m, const Onnx__FunctionProto *f)
{
    for (size_t i = 0; i < m->n_functions; i++)
        if (m->functions[i] == f)
            return i;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Free names of subgraphs                                              */
/* ------------------------------------------------------------------ */

typedef struct names_filter {
    oac_strmap local;
    oac_rt_name_fn cb;
    void *arg;
} names_filter;

static int filter_name(void *arg, const char *name)
{
    names_filter *f = arg;
    if (!nonempty(name) || oac_strmap_has(&f->local, name))
        return OAC_OK;
    return f->cb(f->arg, name);
}

static int graph_free_names(oac_ctx *ctx, const Onnx__GraphProto *g, int depth,
                            oac_rt_name_fn cb, void *arg)
{
    if (depth > OAC_MAX_DEPTH)
        return oac_err(ctx, OAC_EUNSUPPORTED, "subgraphs nested deeper than %d",
                       OAC_MAX_DEPTH);
    names_filter f = { .cb = cb, .arg = arg };
    oac_strmap_init(&f.local, ctx);
    int rc = OAC_OK;
    for (size_t i = 0; !rc && i < g->n_input; i++)
        if (nonempty(g->input[i]->name))
            rc = oac_strmap_put(&f.local, g->input[i]->name, (void *)1);
    for (size_t i = 0; !rc && i < g->n_initializer; i++)
        if (nonempty(g->initializer[i]->name))
            rc = oac_strmap_put(&f.local, g->initializer[i]->name, (void *)1);
    for (size_t i = 0; !rc && i < g->n_node; i++)
        for (size_t j = 0; !rc && j < g->node[i]->n_output; j++)
            if (nonempty(g->node[i]->output[j]))
                rc = oac_strmap_put(&f.local, g->node[i]->output[j], (void *)1);
    for (size_t i = 0; !rc && i < g->n_node; i++) {
        const Onnx__NodeProto *np = g->node[i];
        for (size_t j = 0; !rc && j < np->n_input; j++)
            rc = filter_name(&f, np->input[j]);
        if (!rc)
            rc = oac_rt_outer_reads(ctx, np, depth, filter_name, &f);
    }
    for (size_t i = 0; !rc && i < g->n_output; i++)
        rc = filter_name(&f, g->output[i]->name);
    oac_strmap_fini(&f.local);
    return rc;
}

int oac_rt_outer_reads(oac_ctx *ctx, const Onnx__NodeProto *np, int depth,
                       oac_rt_name_fn cb, void *arg)
{
    int rc = OAC_OK;
    for (size_t a = 0; !rc && a < np->n_attribute; a++) {
        const Onnx__AttributeProto *at = np->attribute[a];
        if (at->g)
            rc = graph_free_names(ctx, at->g, depth + 1, cb, arg);
        for (size_t k = 0; !rc && k < at->n_graphs; k++)
            rc = graph_free_names(ctx, at->graphs[k], depth + 1, cb, arg);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Where an output's storage comes from                                 */
/* ------------------------------------------------------------------ */

static const Onnx__GraphProto *graph_attr(const Onnx__NodeProto *np, const char *name,
                                          size_t *index)
{
    for (size_t a = 0; a < np->n_attribute; a++) {
        const Onnx__AttributeProto *at = np->attribute[a];
        if (at->name && !strcmp(at->name, name) && at->g) {
            if (index)
                *index = a;
            return at->g;
        }
    }
    return NULL;
}

/* Follow the alias chain of `name` inside branch g: the name it leaves
 * the branch at (*exit, NULL when it ends at a buffer of the branch or
 * at one of its inputs or initializers) and whether an in-place update
 * lies on the way. */
static int branch_exit(oac_ctx *ctx, const oac_model *model, const Onnx__GraphProto *g,
                       const char *name, int depth, const char **exit, bool *updated)
{
    *exit = NULL;
    *updated = false;
    const char *cur = name;
    /* Every hop but the last stays inside g: at most n_node + 1 hops, so
     * a (broken) cycle ends too. */
    for (size_t hop = 0; nonempty(cur) && hop <= g->n_node; hop++) {
        const Onnx__NodeProto *prod = NULL;
        size_t port = 0;
        for (size_t i = 0; !prod && i < g->n_node; i++)
            for (size_t j = 0; j < g->node[i]->n_output; j++)
                if (nonempty(g->node[i]->output[j]) && !strcmp(g->node[i]->output[j], cur)) {
                    prod = g->node[i];
                    port = j;
                    break;
                }
        if (!prod) {
            for (size_t i = 0; i < g->n_input; i++)
                if (g->input[i]->name && !strcmp(g->input[i]->name, cur))
                    return OAC_OK;
            for (size_t i = 0; i < g->n_initializer; i++)
                if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, cur))
                    return OAC_OK;
            *exit = cur;
            return OAC_OK;
        }
        int p;
        const char *outer;
        int rc = oac_rt_output_source(ctx, model, prod, port, depth, &p, &outer);
        if (rc)
            return rc;
        if (p >= 0)
            cur = prod->input[p];
        else if (outer)
            cur = outer;
        else
            return OAC_OK;
        *updated = true;
    }
    return OAC_OK;
}

int oac_rt_output_source(oac_ctx *ctx, const oac_model *model,
                         const Onnx__NodeProto *np, size_t out, int depth,
                         int *port, const char **name)
{
    *port = -1;
    *name = NULL;
    if (depth > OAC_MAX_DEPTH)
        return oac_err(ctx, OAC_EUNSUPPORTED, "subgraphs nested deeper than %d",
                       OAC_MAX_DEPTH);
    if (out >= np->n_output)
        return OAC_OK;
    for (size_t a = 0; a < np->n_output_alias; a++) {
        const Onnx__ValueAliasProto *va = np->output_alias[a];
        if (va->has_kind && va->kind == ONNX__VALUE_ALIAS_PROTO__KIND__MUST_ALIAS &&
            va->output_index >= 0 && (size_t)va->output_index == out &&
            va->input_index >= 0 && (size_t)va->input_index < np->n_input &&
            nonempty(np->input[va->input_index])) {
            *port = va->input_index;
            return OAC_OK;
        }
    }
    if (op_is(np, OAC_OP_IF)) {
        /* Aliased when every branch returns a value of one outer root and
         * at least one of them updates it (alias.h, OAC_EDGE_BRANCH). */
        const char *names[2] = { "then_branch", "else_branch" };
        const char *x = NULL;
        bool any_update = false;
        for (int b = 0; b < 2; b++) {
            const Onnx__GraphProto *g = graph_attr(np, names[b], NULL);
            if (!g || out >= g->n_output)
                return OAC_OK;
            const char *e;
            bool upd;
            int rc = branch_exit(ctx, model, g, g->output[out]->name, depth + 1, &e, &upd);
            if (rc)
                return rc;
            if (!e || (x && strcmp(x, e)))
                return OAC_OK;
            x = e;
            any_update = any_update || upd;
        }
        if (any_update)
            *name = x;
        return OAC_OK;
    }
    const Onnx__FunctionProto *f = model ? oac_rt_function(model->proto, np) : NULL;
    if (f && out < f->n_output && nonempty(f->output[out])) {
        for (size_t v = 0; v < f->n_value_info; v++) {
            const Onnx__ValueInfoProto *vi = f->value_info[v];
            if (!vi->name || strcmp(vi->name, f->output[out]) || !nonempty(vi->alias_of))
                continue;
            for (size_t k = 0; k < f->n_input && k < np->n_input; k++)
                if (f->input[k] && !strcmp(f->input[k], vi->alias_of) &&
                    nonempty(np->input[k])) {
                    *port = (int)k;
                    return OAC_OK;
                }
        }
    }
    return OAC_OK;
}

/* ------------------------------------------------------------------ */
/* Refusals before running                                              */
/* ------------------------------------------------------------------ */

#define TOO_DEEP (OAC_MAX_DEPTH + 1)

typedef struct precheck {
    oac_ctx *ctx;
    const oac_model *model;
    const oac_where *at;
    oac_diags *diags;
    bool (*has_kernel)(void *arg, const Onnx__NodeProto *n);
    void *arg;
    int *fmemo;          /* per function: 0 new, -1 walking, h + 1 done */
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

static int walk_nodes(precheck *p, Onnx__NodeProto *const *nodes, size_t n,
                      const char *where, int depth, int *height);

/* One node at `depth` (its own scope's depth): its refusals, and the
 * height of what it nests (0: nothing). */
static int walk_node(precheck *p, const Onnx__NodeProto *np, const char *where,
                     int depth, int *height)
{
    *height = 0;
    const char *nm = nonempty(np->name) ? np->name : "(unnamed)";
    const char *op = np->op_type ? np->op_type : "(no op_type)";
    int rc = OAC_OK;
    if (op_is(np, OAC_OP_SCAN))
        return refuse(p, "node %s: the reference runtime does not run Scan "
                      "(node '%s' in %s)", p->at->node, nm, where);
    if (op_is(np, OAC_OP_LOOP)) {
        const Onnx__GraphProto *body = graph_attr(np, "body", NULL);
        size_t carried = np->n_input > 2 ? np->n_input - 2 : 0;
        if (!body)
            return refuse(p, "node %s: Loop '%s' in %s has no body", p->at->node, nm, where);
        if (body->n_output > carried + 1 || np->n_output > carried)
            return refuse(p, "node %s: the reference runtime does not run Loop scan "
                          "outputs (node '%s' in %s)", p->at->node, nm, where);
    } else if (op_is(np, OAC_OP_IF)) {
        if (!graph_attr(np, "then_branch", NULL) || !graph_attr(np, "else_branch", NULL))
            return refuse(p, "node %s: If '%s' in %s lacks a branch", p->at->node, nm, where);
    }
    bool control = op_is(np, OAC_OP_IF) || op_is(np, OAC_OP_LOOP);
    bool kernel = control || p->has_kernel(p->arg, np);
    /* A table kernel wins over a local function of the same name, as in
     * oac_rt_kernel. */
    const Onnx__FunctionProto *f = kernel ? NULL : oac_rt_function(p->model->proto, np);
    if (!kernel && !f)
        return refuse(p, "node %s: the reference runtime has no kernel for %s%s%s "
                      "(node '%s' in %s)", p->at->node,
                      nonempty(np->domain) ? np->domain : "",
                      nonempty(np->domain) ? "::" : "", op, nm, where);
    if (depth >= OAC_MAX_DEPTH) {
        bool nests = f != NULL;
        for (size_t a = 0; a < np->n_attribute; a++)
            nests = nests || np->attribute[a]->g || np->attribute[a]->n_graphs;
        if (nests) {
            *height = TOO_DEEP;
            return OAC_OK;
        }
    }
    for (size_t a = 0; !rc && a < np->n_attribute; a++) {
        const Onnx__AttributeProto *at = np->attribute[a];
        size_t ng = at->g ? 1 : at->n_graphs;
        for (size_t k = 0; !rc && k < ng; k++) {
            const Onnx__GraphProto *g = at->g ? at->g : at->graphs[k];
            int h;
            rc = walk_nodes(p, g->node, g->n_node, g->name ? g->name : "a subgraph",
                            depth + 1, &h);
            if (h + 1 > *height)
                *height = h + 1;
        }
    }
    if (!rc && f) {
        size_t fi = function_index(p->model->proto, f);
        int h;
        if (p->fmemo[fi] == -1) {
            h = TOO_DEEP;          /* a recursive call: never bounded */
        } else if (p->fmemo[fi] > 0) {
            h = p->fmemo[fi] - 1;
        } else {
            p->fmemo[fi] = -1;
            rc = walk_nodes(p, f->node, f->n_node, f->name ? f->name : "a function",
                            depth + 1, &h);
            p->fmemo[fi] = (h > TOO_DEEP ? TOO_DEEP : h) + 1;
        }
        if (h + 1 > *height)
            *height = h + 1;
    }
    if (*height > TOO_DEEP)
        *height = TOO_DEEP;
    return rc;
}

static int walk_nodes(precheck *p, Onnx__NodeProto *const *nodes, size_t n,
                      const char *where, int depth, int *height)
{
    *height = 0;
    for (size_t i = 0; i < n; i++) {
        int h;
        int rc = walk_node(p, nodes[i], where, depth, &h);
        if (rc)
            return rc;
        if (h > *height)
            *height = h;
        if (*height >= TOO_DEEP)
            break;
    }
    return OAC_OK;
}

int oac_rt_precheck(oac_ctx *ctx, const oac_model *model,
                    const Onnx__NodeProto *np, const oac_where *at,
                    oac_diags *diags,
                    bool (*has_kernel)(void *arg, const Onnx__NodeProto *n),
                    void *arg, int *fmemo)
{
    precheck p = { .ctx = ctx, .model = model, .at = at, .diags = diags,
                   .has_kernel = has_kernel, .arg = arg, .fmemo = fmemo };
    int h;
    int rc = walk_node(&p, np, "the main graph", 0, &h);
    if (rc)
        return rc;
    if (!p.refused && h > OAC_MAX_DEPTH &&
        (rc = refuse(&p, "node %s: subgraphs or local function calls nested deeper "
                     "than %d (or a function that calls itself)", at->node, OAC_MAX_DEPTH)))
        return rc;
    return p.refused ? OAC_ERUNTIME : OAC_OK;
}

/* ------------------------------------------------------------------ */
/* Frames                                                               */
/* ------------------------------------------------------------------ */

/* What a frame runs: a GraphProto or a FunctionProto body. */
typedef struct rt_body {
    const char *name;                  /* for diagnostics */
    Onnx__NodeProto *const *nodes;
    size_t n_nodes;
    Onnx__TensorProto *const *inits;
    size_t n_inits;
    size_t n_in, n_out;
    const Onnx__GraphProto *g;         /* or */
    const Onnx__FunctionProto *f;
} rt_body;

static const char *body_input(const rt_body *b, size_t i)
{
    return b->g ? b->g->input[i]->name : b->f->input[i];
}

static const char *body_output(const rt_body *b, size_t i)
{
    return b->g ? b->g->output[i]->name : b->f->output[i];
}

static void body_of_graph(rt_body *b, const Onnx__GraphProto *g, const char *fallback)
{
    *b = (rt_body){ .name = nonempty(g->name) ? g->name : fallback, .nodes = g->node,
                    .n_nodes = g->n_node, .inits = g->initializer,
                    .n_inits = g->n_initializer, .n_in = g->n_input,
                    .n_out = g->n_output, .g = g };
}

struct rt_frame {
    struct rt_frame *parent;           /* enclosing frame; NULL: the main graph */
    bool isolated;                     /* a function body sees no outer scope */
    oac_session *s;
    oac_kernel_call *k;                /* the control node running the body */
    int depth;                         /* 1 for a body of a main-graph node */
    const rt_body *body;
    char *loc;                         /* RFC 6901 location of the body */
    const Onnx__NodeProto *call;       /* function call node (ref_attr_name) */
    const Onnx__FunctionProto *fn;
    oac_strmap map;                    /* name -> index + 1 */
    size_t n;
    const char **names;
    oac_value **vals;                  /* current value of each name */
    oac_value *objs;                   /* storage objects the frame owns */
    bool *produced;                    /* objs[i] is a node output of the body */
    long *root;                        /* local index whose storage it is, -1 outer */
    long *last;                        /* last reading node of a root */
    bool *keep;                        /* root backs a body output */
    int *src_port;                     /* per local name: oac_rt_output_source */
    const char **src_name;
    long *free_head, *free_next;       /* roots freed after each node */
    size_t max_ports;
    oac_value **in_buf, **out_buf;
    int *alias;
    const void **before;
};

static long local_of(const struct rt_frame *fr, const char *name)
{
    void *v = nonempty(name) ? oac_strmap_get(&fr->map, name) : NULL;
    return v ? (long)((uintptr_t)v - 1) : -1;
}

/* The value `name` names where fr runs: its own, an enclosing frame's (a
 * function body stops there), else the main graph's. */
static oac_value *lookup(struct rt_frame *fr, const char *name, int *rc)
{
    *rc = OAC_OK;
    if (!nonempty(name))
        return NULL;
    for (struct rt_frame *f = fr; f; f = f->parent) {
        long i = local_of(f, name);
        if (i >= 0)
            return f->vals[i];
        if (f->isolated)
            return NULL;
    }
    return oac_rt_main_value(fr->s, name, rc);
}

static void saved_ptr(const oac_value *v, const void **p)
{
    *p = v->kind == OAC_VAL_TENSOR ? v->t.data : (const void *)v;
}

static long frame_add(struct rt_frame *fr, const char *name, int *rc)
{
    *rc = OAC_OK;
    if (!nonempty(name))
        return -1;
    long i = local_of(fr, name);
    if (i >= 0)
        return i;
    i = (long)fr->n++;
    fr->names[i] = name;
    fr->vals[i] = &fr->objs[i];
    fr->root[i] = i;
    fr->last[i] = -1;
    fr->src_port[i] = -1;
    *rc = oac_strmap_put(&fr->map, name, (void *)(uintptr_t)(i + 1));
    return i;
}

static int note_read(void *arg, const char *name);

typedef struct read_note {
    struct rt_frame *fr;
    long node;
} read_note;

static int note_read(void *arg, const char *name)
{
    read_note *r = arg;
    long i = local_of(r->fr, name);
    if (i >= 0 && r->fr->root[i] >= 0 && r->fr->last[r->fr->root[i]] < r->node)
        r->fr->last[r->fr->root[i]] = r->node;
    return OAC_OK;
}

static void frame_fini(struct rt_frame *fr)
{
    oac_ctx *ctx = fr->k->ctx;
    for (size_t i = 0; fr->objs && i < fr->n; i++)
        oac_rt_release(fr->s, &fr->objs[i]);
    oac_strmap_fini(&fr->map);
    oac_dealloc(ctx, fr->loc);
    oac_dealloc(ctx, fr->names);
    oac_dealloc(ctx, fr->vals);
    oac_dealloc(ctx, fr->objs);
    oac_dealloc(ctx, fr->produced);
    oac_dealloc(ctx, fr->root);
    oac_dealloc(ctx, fr->last);
    oac_dealloc(ctx, fr->keep);
    oac_dealloc(ctx, fr->src_port);
    oac_dealloc(ctx, fr->src_name);
    oac_dealloc(ctx, fr->free_head);
    oac_dealloc(ctx, fr->free_next);
    oac_dealloc(ctx, fr->in_buf);
    oac_dealloc(ctx, fr->out_buf);
    oac_dealloc(ctx, fr->alias);
    oac_dealloc(ctx, fr->before);
    memset(fr, 0, sizeof *fr);
}

/* An initializer of a subgraph, read into excluded storage (contract 4:
 * initializers are not counted). */
static int load_init(struct rt_frame *fr, oac_value *v, const Onnx__TensorProto *tp)
{
    oac_kernel_call *k = fr->k;
    return oac_rt_load_initializer(k->ctx, k->alloc, k->model, tp,
                                   tp->name ? tp->name : "", v);
}

/* Nodes of a body and of the subgraphs nested in it (saturating): what
 * setting up its frame walks (oac_rt_outer_reads), so what a run of it
 * is charged.  A call inside is charged when it runs. */
static uint64_t nested_nodes(Onnx__NodeProto *const *nodes, size_t n, int depth)
{
    uint64_t c = n;
    for (size_t i = 0; depth <= OAC_MAX_DEPTH && i < n; i++)
        for (size_t a = 0; a < nodes[i]->n_attribute; a++) {
            const Onnx__AttributeProto *at = nodes[i]->attribute[a];
            size_t ng = at->g ? 1 : at->n_graphs;
            for (size_t k = 0; k < ng; k++) {
                const Onnx__GraphProto *g = at->g ? at->g : at->graphs[k];
                if (oac_add_overflow_u64(c, nested_nodes(g->node, g->n_node, depth + 1), &c))
                    return UINT64_MAX;
            }
        }
    return c;
}

/* Set up fr to run body b with the given input values (borrowed; NULL for
 * an omitted one). */
static int frame_init(struct rt_frame *fr, oac_kernel_call *k, const rt_body *b,
                      oac_value *const *inputs, size_t n_inputs, bool isolated,
                      const Onnx__NodeProto *call, const Onnx__FunctionProto *fn,
                      char *loc)
{
    memset(fr, 0, sizeof *fr);
    oac_ctx *ctx = k->ctx;
    fr->k = k;
    fr->s = k->session;
    fr->parent = k->frame;
    fr->isolated = isolated;
    fr->body = b;
    fr->loc = loc;
    fr->depth = k->frame ? k->frame->depth + 1 : 1;
    fr->call = isolated ? call : (k->frame ? k->frame->call : NULL);
    fr->fn = isolated ? fn : (k->frame ? k->frame->fn : NULL);
    oac_strmap_init(&fr->map, ctx);
    if (!loc)
        return OAC_ENOMEM;
    if (fr->depth > OAC_MAX_DEPTH)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node %s: subgraphs or calls nested deeper than %d",
                               k->node_name, OAC_MAX_DEPTH);
    /* Invariant 4: every body run is charged before it costs anything. */
    uint64_t limit;
    uint64_t cost = nested_nodes(b->nodes, b->n_nodes, fr->depth);
    if (cost == UINT64_MAX || !oac_rt_charge(fr->s, 1 + cost, &limit))
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node %s (%s): the step's bodies passed the reference "
                               "runtime's limit of %" PRIu64 " units of work (each body "
                               "run counts 1 + its nodes, nested subgraphs' included): "
                               "a Loop whose condition never "
                               "turns false or whose trip count is too large, or calls "
                               "that fan out, would not end otherwise",
                               k->node_name, k->node->op_type ? k->node->op_type : "",
                               limit);
    size_t cap = b->n_in + b->n_inits;
    for (size_t i = 0; i < b->n_nodes; i++) {
        size_t no = b->nodes[i]->n_output, ni = b->nodes[i]->n_input;
        if (__builtin_add_overflow(cap, no, &cap))
            return oac_err(ctx, OAC_ENOMEM, "body too large");
        if (no > fr->max_ports)
            fr->max_ports = no;
        if (ni > fr->max_ports)
            fr->max_ports = ni;
    }
    cap = cap ? cap : 1;
    fr->names = oac_calloc(ctx, cap, sizeof *fr->names);
    fr->vals = oac_calloc(ctx, cap, sizeof *fr->vals);
    fr->objs = oac_calloc(ctx, cap, sizeof *fr->objs);
    fr->produced = oac_calloc(ctx, cap, sizeof *fr->produced);
    fr->root = oac_calloc(ctx, cap, sizeof *fr->root);
    fr->last = oac_calloc(ctx, cap, sizeof *fr->last);
    fr->keep = oac_calloc(ctx, cap, sizeof *fr->keep);
    fr->src_port = oac_calloc(ctx, cap, sizeof *fr->src_port);
    fr->src_name = oac_calloc(ctx, cap, sizeof *fr->src_name);
    fr->free_next = oac_calloc(ctx, cap, sizeof *fr->free_next);
    fr->free_head = oac_calloc(ctx, b->n_nodes + 1, sizeof *fr->free_head);
    fr->in_buf = oac_calloc(ctx, fr->max_ports + 1, sizeof *fr->in_buf);
    fr->out_buf = oac_calloc(ctx, fr->max_ports + 1, sizeof *fr->out_buf);
    fr->alias = oac_calloc(ctx, fr->max_ports + 1, sizeof *fr->alias);
    fr->before = oac_calloc(ctx, fr->max_ports + 1, sizeof *fr->before);
    if (!fr->names || !fr->vals || !fr->objs || !fr->produced || !fr->root ||
        !fr->last || !fr->keep || !fr->src_port || !fr->src_name || !fr->free_next ||
        !fr->free_head || !fr->in_buf || !fr->out_buf || !fr->alias || !fr->before)
        return OAC_ENOMEM;
    int rc;
    for (size_t i = 0; i < b->n_in; i++) {
        long l = frame_add(fr, body_input(b, i), &rc);
        if (rc)
            return rc;
        if (l >= 0 && i < n_inputs && inputs[i])
            fr->vals[l] = inputs[i];
    }
    for (size_t i = 0; i < b->n_inits; i++) {
        const char *nm = b->inits[i]->name;
        if (!nonempty(nm) || local_of(fr, nm) >= 0)
            continue;     /* an initializer that is an input is its default */
        long l = frame_add(fr, nm, &rc);
        if (rc)
            return rc;
        if ((rc = load_init(fr, &fr->objs[l], b->inits[i])))
            return rc;
    }
    for (size_t i = 0; i < b->n_nodes; i++) {
        const Onnx__NodeProto *np = b->nodes[i];
        for (size_t j = 0; j < np->n_output; j++) {
            if (!nonempty(np->output[j]))
                continue;
            if (local_of(fr, np->output[j]) >= 0)
                return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                                       "node %s: value '%s' is defined twice in %s",
                                       k->node_name, np->output[j], b->name);
            long l = frame_add(fr, np->output[j], &rc);
            if (rc)
                return rc;
            fr->produced[l] = true;
            fr->last[l] = (long)i;
            if ((rc = oac_rt_output_source(ctx, k->model, np, j, fr->depth,
                                           &fr->src_port[l], &fr->src_name[l])))
                return rc;
            const char *src = fr->src_port[l] >= 0 ? np->input[fr->src_port[l]]
                                                   : fr->src_name[l];
            if (src) {
                long sl = local_of(fr, src);
                fr->root[l] = sl >= 0 ? fr->root[sl] : -1;
            }
        }
    }
    /* Last readers of each root, nested subgraphs' reads included. */
    for (size_t i = 0; i < b->n_nodes; i++) {
        const Onnx__NodeProto *np = b->nodes[i];
        read_note rn = { fr, (long)i };
        for (size_t j = 0; j < np->n_input; j++)
            note_read(&rn, np->input[j]);
        if ((rc = oac_rt_outer_reads(ctx, np, fr->depth, note_read, &rn)))
            return rc;
    }
    for (size_t i = 0; i < b->n_out; i++) {
        long l = local_of(fr, body_output(b, i));
        if (l >= 0 && fr->root[l] >= 0)
            fr->keep[fr->root[l]] = true;
    }
    /* One schedule: where the plan walked this body, its free points
     * are the frame's (the same rule; the plan's index also tells
     * shadowed names apart).  Never earlier than a reader the frame sees:
     * a disagreement then shows as a measured peak above the plan, not
     * as a read of a released value. */
    const oac_plan_sched *ps = oac_plan_body_schedule(oac_rt_schedule(fr->s),
                                                      b->g ? (const void *)b->g
                                                           : (const void *)b->f);
    for (size_t k = 0; ps && k < ps->n_bufs; k++) {
        long l = local_of(fr, ps->bufs[k].name);
        if (l < 0 || !fr->produced[l] || fr->root[l] != l)
            continue;
        long fa = ps->bufs[k].free_after;
        if (fa < 0)
            fr->keep[l] = true;
        else if ((size_t)fa < b->n_nodes && !fr->keep[l] && fa > fr->last[l])
            fr->last[l] = fa;
    }
    for (size_t i = 0; i <= b->n_nodes; i++)
        fr->free_head[i] = -1;
    for (size_t l = 0; l < fr->n; l++)
        if (fr->produced[l] && fr->root[l] == (long)l && !fr->keep[l] && fr->last[l] >= 0) {
            fr->free_next[l] = fr->free_head[fr->last[l]];
            fr->free_head[fr->last[l]] = (long)l;
        }
    return OAC_OK;
}

/* A function body node with attributes referring to the call's
 * (ref_attr_name): a shallow copy whose attribute list has the call's
 * value under the inner name, or the function's default, or nothing. */
static int resolve_attrs(struct rt_frame *fr, const Onnx__NodeProto *np,
                         Onnx__NodeProto **copy, Onnx__AttributeProto **attrs)
{
    *copy = NULL;
    *attrs = NULL;
    bool refs = false;
    for (size_t a = 0; a < np->n_attribute; a++)
        refs = refs || nonempty(np->attribute[a]->ref_attr_name);
    if (!refs || !fr->call)
        return OAC_OK;
    oac_ctx *ctx = fr->k->ctx;
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
        for (size_t k = 0; !src && fr->fn && k < fr->fn->n_attribute_proto; k++)
            if (fr->fn->attribute_proto[k]->name &&
                !strcmp(fr->fn->attribute_proto[k]->name, at->ref_attr_name))
                src = fr->fn->attribute_proto[k];
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

static int exec_node(struct rt_frame *fr, size_t i);

static int frame_run(struct rt_frame *fr)
{
    for (size_t i = 0; i < fr->body->n_nodes; i++) {
        int rc = exec_node(fr, i);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

static int exec_node(struct rt_frame *fr, size_t i)
{
    oac_kernel_call *pk = fr->k;
    oac_ctx *ctx = pk->ctx;
    oac_session *s = fr->s;
    const Onnx__NodeProto *orig = fr->body->nodes[i];
    Onnx__NodeProto *copy = NULL;
    Onnx__AttributeProto *attrs = NULL;
    char *name = nonempty(orig->name) ? oac_strdup(ctx, orig->name)
                                      : oac_asprintf(ctx, "#%zu", i);
    char *loc = oac_asprintf(ctx, "%s/node/%zu", fr->loc, i);
    int rc = OAC_OK;
    if (!name || !loc) {
        rc = OAC_ENOMEM;
        goto done;
    }
    if ((rc = resolve_attrs(fr, orig, &copy, &attrs)))
        goto done;
    const Onnx__NodeProto *np = copy ? copy : orig;
    oac_where w = { .graph = fr->body->name, .node = name, .op_type = orig->op_type,
                    .location = loc };
    for (size_t j = 0; j < np->n_input; j++) {
        fr->in_buf[j] = NULL;
        if (!nonempty(np->input[j]))
            continue;
        oac_value *v = lookup(fr, np->input[j], &rc);
        if (rc)
            goto done;
        if (!v || v->kind == OAC_VAL_NONE) {
            rc = oac_diag_add(pk->diags, OAC_OPERAND_INVALID, &w,
                              "node %s reads '%s', which has no value (not produced "
                              "before it in file order)", name, np->input[j]);
            rc = rc ? rc : OAC_ERUNTIME;
            goto done;
        }
        fr->in_buf[j] = v;
    }
    for (size_t j = 0; j < np->n_output; j++) {
        fr->out_buf[j] = NULL;
        fr->alias[j] = -1;
        long l = local_of(fr, np->output[j]);
        if (l < 0)
            continue;
        oac_value *src = NULL;
        if (fr->src_port[l] >= 0) {
            src = fr->in_buf[fr->src_port[l]];
            fr->alias[j] = fr->src_port[l];
        } else if (fr->src_name[l]) {
            if (!(src = lookup(fr, fr->src_name[l], &rc)) && !rc)
                rc = oac_err(ctx, OAC_EINTERNAL, "node %s: '%s' not found", name,
                             fr->src_name[l]);
            if (rc)
                goto done;
            fr->alias[j] = OAC_ALIAS_OUTER;
        }
        if (src) {
            if (src->kind == OAC_VAL_NONE) {
                rc = oac_err(ctx, OAC_EINTERNAL, "node %s: aliased value has no storage", name);
                goto done;
            }
            if (!src->writable) {
                rc = oac_diag_add(pk->diags, OAC_BINDING_READONLY, &w,
                                  "node %s updates '%s' in place, but its storage is "
                                  "read-only", name, np->output[j]);
                rc = rc ? rc : OAC_ERUNTIME;
                goto done;
            }
            fr->vals[l] = src;
            saved_ptr(src, &fr->before[j]);
        } else {
            fr->vals[l] = &fr->objs[l];
        }
        fr->out_buf[j] = fr->vals[l];
    }
    if ((rc = oac_rt_note_position(s, np, fr->in_buf, &w)))
        goto done;
    oac_kernel_fn fn = oac_rt_kernel(s, np);
    if (!fn) {
        rc = oac_diag_add(pk->diags, OAC_UNSUPPORTED_OPERATOR, &w,
                          "node %s: the reference runtime has no kernel for %s",
                          name, np->op_type ? np->op_type : "(no op_type)");
        rc = rc ? rc : OAC_ERUNTIME;
        goto done;
    }
    oac_kernel_call k = {
        .ctx = ctx, .model = pk->model, .node = np, .node_name = name,
        .node_index = i, .in = fr->in_buf, .n_in = np->n_input,
        .out = fr->out_buf, .n_out = np->n_output, .out_alias = fr->alias,
        .alloc = pk->alloc, .diags = pk->diags, .session = s,
        .graph_name = fr->body->name, .location = loc, .frame = fr,
    };
    /* The kernel may run a nested body that reuses this frame's port
     * arrays' contents: it only reads k, set up above. */
    rc = fn(&k);
    oac_rt_end_node(s);
    for (size_t j = 0; !rc && j < np->n_output; j++) {
        if (fr->alias[j] == -1 || !fr->out_buf[j])
            continue;
        const void *after;
        saved_ptr(fr->out_buf[j], &after);
        bool held = after == fr->before[j];
        oac_rt_identity(s, held);
        if (held)
            continue;
        if (fr->out_buf[j]->kind == OAC_VAL_TENSOR)
            fr->out_buf[j]->t.data = (void *)fr->before[j];
        rc = oac_diag_add(pk->diags, OAC_ALIAS_BROKEN, &w,
                          "node %s: output '%s' must alias its input but came back "
                          "at another address", name, np->output[j]);
        rc = rc ? rc : OAC_ERUNTIME;
    }
    bool constant = op_is(orig, OAC_OP_CONSTANT);
    for (size_t j = 0; !rc && j < np->n_output; j++) {
        if (!fr->out_buf[j])
            continue;
        if (fr->out_buf[j]->kind == OAC_VAL_NONE) {
            rc = oac_err(ctx, OAC_EINTERNAL, "node %s: kernel produced no output %zu",
                         name, j);
            break;
        }
        if (constant)
            fr->out_buf[j]->writable = false;
    }
    if (!rc)
        for (long l = fr->free_head[i]; l >= 0; l = fr->free_next[l])
            oac_rt_release(s, &fr->objs[l]);
done:
    if (copy) {
        oac_dealloc(ctx, copy->attribute);
        oac_dealloc(ctx, copy);
    }
    oac_dealloc(ctx, attrs);
    oac_dealloc(ctx, name);
    oac_dealloc(ctx, loc);
    return rc;
}

/* The value body output i came back as (NULL when omitted). */
static oac_value *body_result(struct rt_frame *fr, size_t i, int *rc)
{
    *rc = OAC_OK;
    return lookup(fr, body_output(fr->body, i), rc);
}

/* Output j of the control node from the body's value v (see the file
 * comment: identity for aliased outputs, else move or copy). */
static int take_output(oac_kernel_call *k, struct rt_frame *fr, size_t j, oac_value *v)
{
    if (j >= k->n_out || !k->out[j])
        return OAC_OK;
    if (!v || v->kind == OAC_VAL_NONE)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s: its body returned no value for output %zu",
                               k->node_name, j);
    if (k->out_alias[j] != -1) {
        if (v != k->out[j])
            return oac_kernel_fail(k, OAC_ALIAS_BROKEN,
                                   "node %s: output %zu must alias its input, but the "
                                   "body returned another value", k->node_name, j);
        return OAC_OK;
    }
    bool owned = v >= fr->objs && v < fr->objs + fr->n && fr->produced[v - fr->objs];
    if (owned && (v->storage == OAC_STORE_OWNED || v->storage == OAC_STORE_NONE) &&
        v->kind == OAC_VAL_TENSOR) {
        *k->out[j] = *v;
        memset(v, 0, sizeof *v);
        return OAC_OK;
    }
    if (v->kind != OAC_VAL_TENSOR)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node %s: the reference runtime returns only dense "
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
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s: input %zu must be one BOOL", k->node_name, i);
    *out = ((const uint8_t *)t->data)[0] != 0;
    return OAC_OK;
}

/* An If branch or a function body, run once: frame_init's status in rc,
 * then the run, the node's outputs from the body's, and the frame freed
 * whatever happened. */
static int run_once(oac_kernel_call *k, struct rt_frame *fr, int rc)
{
    if (!rc)
        rc = frame_run(fr);
    for (size_t j = 0; !rc && j < k->n_out; j++) {
        oac_value *v = body_result(fr, j, &rc);
        if (!rc)
            rc = take_output(k, fr, j, v);
    }
    frame_fini(fr);
    return rc;
}

int oac_kernel_if(oac_kernel_call *k)
{
    bool cond;
    int rc = read_bool(k, 0, &cond);
    if (rc)
        return rc;
    size_t ai = 0;
    const Onnx__GraphProto *g = graph_attr(k->node, cond ? "then_branch" : "else_branch", &ai);
    if (!g)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID, "node %s: If lacks its %s",
                               k->node_name, cond ? "then_branch" : "else_branch");
    if (g->n_output < k->n_out)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s: the branch returns %zu values for %zu outputs",
                               k->node_name, g->n_output, k->n_out);
    rt_body b;
    body_of_graph(&b, g, cond ? "then_branch" : "else_branch");
    struct rt_frame fr;
    rc = frame_init(&fr, k, &b, NULL, 0, false, NULL, NULL,
                    oac_asprintf(k->ctx, "%s/attribute/%zu/g",
                                 k->location ? k->location : "", ai));
    return run_once(k, &fr, rc);
}

int oac_kernel_call_function(oac_kernel_call *k)
{
    const Onnx__FunctionProto *f = oac_rt_function(k->model->proto, k->node);
    if (!f)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node %s: no local function %s", k->node_name,
                               k->node->op_type ? k->node->op_type : "");
    if (k->n_in > f->n_input || k->n_out > f->n_output)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s: %zu inputs and %zu outputs for function %s of "
                               "%zu and %zu", k->node_name, k->n_in, k->n_out,
                               f->name ? f->name : "", f->n_input, f->n_output);
    rt_body b = { .name = nonempty(f->name) ? f->name : "function", .nodes = f->node,
                  .n_nodes = f->n_node, .n_in = f->n_input, .n_out = f->n_output, .f = f };
    struct rt_frame fr;
    int rc = frame_init(&fr, k, &b, k->in, k->n_in, true, k->node, f,
                        oac_asprintf(k->ctx, "/functions/%zu",
                                     function_index(k->model->proto, f)));
    return run_once(k, &fr, rc);
}

/* Loop(M?, cond?, v_initial...) -> v_final...; body(iter, cond_in,
 * v_in...) -> (cond_out, v_out...).  Scan outputs were refused before the
 * run (oac_rt_precheck). */
int oac_kernel_loop(oac_kernel_call *k)
{
    oac_ctx *ctx = k->ctx;
    size_t ai = 0;
    const Onnx__GraphProto *g = graph_attr(k->node, "body", &ai);
    size_t nc = k->n_in > 2 ? k->n_in - 2 : 0;
    if (!g || g->n_input != nc + 2 || g->n_output != nc + 1 || k->n_out > nc)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s: Loop body must take 2 + %zu inputs and return "
                               "1 + %zu values (no scan outputs)", k->node_name, nc, nc);
    int64_t m = INT64_MAX;
    bool has_m = k->n_in > 0 && k->in[0];
    if (has_m) {
        size_t cnt;
        int rc = oac_kernel_ints_in(k, 0, &m, 1, &cnt);
        if (rc)
            return rc;
        if (cnt != 1)
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node %s: trip count must be one integer", k->node_name);
    }
    bool cond = true;
    bool has_cond = k->n_in > 1 && k->in[1];
    if (has_cond) {
        int rc = read_bool(k, 1, &cond);
        if (rc)
            return rc;
    }
    if (!has_m && !has_cond)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s: a Loop without trip count and condition never "
                               "ends", k->node_name);
    int64_t iter = 0;
    uint8_t cond_byte = cond;
    oac_value iv = { .kind = OAC_VAL_TENSOR, .storage = OAC_STORE_CONST,
                     .t = { .elem_type = OAC_T_INT64, .rank = 0, .data = &iter,
                            .bytes = sizeof iter } };
    oac_value cv = { .kind = OAC_VAL_TENSOR, .storage = OAC_STORE_CONST,
                     .t = { .elem_type = OAC_T_BOOL, .rank = 0, .data = &cond_byte,
                            .bytes = 1 } };
    oac_value **ins = oac_calloc(ctx, nc + 2, sizeof *ins);
    oac_value *views = oac_calloc(ctx, nc ? nc : 1, sizeof *views);
    const void **start = oac_calloc(ctx, nc ? nc : 1, sizeof *start);
    int rc = OAC_OK;
    if (!ins || !views || !start) {
        rc = OAC_ENOMEM;
        goto done;
    }
    ins[0] = &iv;
    ins[1] = &cv;
    /* Carried values: aliased ones are the caller's object; the others
     * live in the output buffer, which starts as the initial value. */
    for (size_t i = 0; i < nc; i++) {
        oac_value *init = k->in[i + 2];
        if (!init || init->kind == OAC_VAL_NONE) {
            rc = oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                 "node %s: carried value %zu is missing", k->node_name, i);
            goto done;
        }
        bool aliased = i < k->n_out && k->out[i] && k->out_alias[i] == (int)(i + 2);
        if (aliased) {
            ins[i + 2] = k->out[i];
            saved_ptr(k->out[i], &start[i]);
            continue;
        }
        if (init->kind != OAC_VAL_TENSOR) {
            rc = oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                                 "node %s: the reference runtime carries only dense "
                                 "tensors by value (carried value %zu)", k->node_name, i);
            goto done;
        }
        if (i < k->n_out && k->out[i]) {
            oac_tensor *t;
            if ((rc = oac_kernel_output(k, i, init->t.elem_type, init->t.rank,
                                        init->t.dims, &t)))
                goto done;
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
    rt_body b;
    body_of_graph(&b, g, "body");
    for (; iter < m && cond; iter++) {
        cond_byte = cond;
        struct rt_frame fr;
        rc = frame_init(&fr, k, &b, ins, nc + 2, false, NULL, NULL,
                        oac_asprintf(ctx, "%s/attribute/%zu/g",
                                     k->location ? k->location : "", ai));
        if (!rc)
            rc = frame_run(&fr);
        oac_value *co = rc ? NULL : body_result(&fr, 0, &rc);
        if (!rc) {
            if (!co || co->kind != OAC_VAL_TENSOR || co->t.elem_type != OAC_T_BOOL ||
                co->t.bytes != 1)
                rc = oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                     "node %s: the body's condition is not one BOOL",
                                     k->node_name);
            else
                cond = ((const uint8_t *)co->t.data)[0] != 0;
        }
        for (size_t i = 0; !rc && i < nc; i++) {
            oac_value *v = body_result(&fr, i + 1, &rc);
            if (rc)
                break;
            if (!v || v->kind == OAC_VAL_NONE) {
                rc = oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                     "node %s: the body returned no carried value %zu",
                                     k->node_name, i);
                break;
            }
            if (ins[i + 2] != &views[i]) {
                /* One storage across all iterations. */
                const void *now;
                saved_ptr(v, &now);
                if (v != ins[i + 2] || now != start[i])
                    rc = oac_kernel_fail(k, OAC_ALIAS_BROKEN,
                                         "node %s: carried value %zu must stay in its "
                                         "storage, but iteration %" PRId64 " returned "
                                         "another", k->node_name, i, iter);
                continue;
            }
            if (v == &views[i])
                continue;          /* returned unchanged */
            bool same = v->kind == OAC_VAL_TENSOR && v->t.elem_type == views[i].t.elem_type &&
                        v->t.rank == views[i].t.rank && v->t.bytes == views[i].t.bytes;
            for (int d = 0; same && d < v->t.rank; d++)
                same = v->t.dims[d] == views[i].t.dims[d];
            if (!same) {
                rc = oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                                     "node %s: carried value %zu changes type or shape "
                                     "between iterations", k->node_name, i);
                break;
            }
            if (i < k->n_out && k->out[i] && v->t.bytes)
                memmove(k->out[i]->t.data, v->t.data, v->t.bytes);
            else if (v->t.bytes) {
                rc = oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                                     "node %s: carried value %zu changes but has no "
                                     "output", k->node_name, i);
            }
        }
        frame_fini(&fr);
        if (rc)
            goto done;
    }
done:
    oac_dealloc(ctx, ins);
    oac_dealloc(ctx, views);
    oac_dealloc(ctx, start);
    return rc;
}

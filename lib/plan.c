/* plan.c: the static memory plan (oac_pass_plan) and its schedule.
 *
 * Owns: analysis->plan and the per-node schedule of plan.h that the
 * reference runtime reuses.  Contract: section 4, last paragraph.
 *
 * The rule, exactly (the runtime measures the same and must find
 * equality at the same dims):
 *  1. Walk the nodes of the main graph in file order.  Dims are those
 *     known after checking (declared, --dim, --input, unified).
 *  2. A buffer is a node output that does not must-alias an input (no
 *     resolved output_alias to it: oac_value_aliased_input is NULL).  A
 *     must-aliasing output belongs to the buffer of the input it aliases,
 *     transitively; graph inputs and initializers (and outer values) are
 *     not buffers and are never counted.  Constant, Shape and Size
 *     outputs are node outputs, hence buffers.
 *  3. A buffer is allocated when its producer runs and freed right after
 *     the last node that reads any value of it (an implicit read by a
 *     subgraph counts for the enclosing node); a buffer nothing reads is
 *     freed right after its producer.  A buffer that backs a graph output
 *     is never freed.
 *  4. live(i) = bytes of buffers allocated at nodes <= i and not freed
 *     after a node < i: node i's inputs and its own outputs are live
 *     while it runs.  peak_bytes = max_i live(i) + workspace(i).
 *  5. workspace(i): CacheUpdate and TensorScatter 0; every other node 0
 *     except a PagedCacheUpdate that changes a page's format: its
 *     workspace is the decoded page, bytes of E[2, heads, page_size,
 *     head_size] (E the page's decoded type).  Statically, with paged
 *     caches starting empty (as `run` starts them), a page's format is
 *     the one the first PagedCacheUpdate of its alias class (main-graph
 *     file order) gives it: that node's quantized_type attribute, else
 *     the cache type's first allowed type, else 0.  A later update of the
 *     same class whose quantized_type attribute differs changes the
 *     format (workspace), and the page keeps the new format afterwards.
 *     workspace_bytes = max_i workspace(i).
 *  5b. Pages are runtime allocations too.  The first PagedCacheUpdate of
 *     each alias class rooted at a main-graph input creates one page of
 *     its format (a run's paged caches start empty, page_id at 0); the
 *     page is cache storage that outlives the step, so it is live from
 *     the start of the walk and never freed.  A format change to another
 *     byte size allocates the new page while the old one is live (both
 *     count at that node) and frees the old one after it.  More pages
 *     (page_id advancing past a full page) depend on the run, not on the
 *     graph, and are not planned.  Page bytes follow contract 1
 *     (oac_qdesc_page_bytes); an invalid format makes them unknown.
 *  6. planned_output_bytes = sum of all buffers (one step's allocations).
 *     persistent_cache_bytes = sum of the bytes of alias classes rooted
 *     at READ_WRITE graph inputs.  second_cache_bytes = sum of output 0
 *     of cache-update nodes of the main graph without output_alias.
 *  7. A total that depends on an unknown size (a dimension not known, a
 *     sequence of pages) is unknown (null in the report); sums are
 *     overflow-checked and an overflowing sum is unknown as well.
 *
 * Invariants: linear in the main graph (one pass over nodes, one over
 * uses); nothing allocated outside the schedule; the schedule is owned by
 * the shapes object the analysis keeps.
 */
#include <stdio.h>
#include <string.h>

#include "alias.h"
#include "check.h"
#include "graph.h"
#include "ops.h"
#include "plan.h"
#include "quant.h"
#include "shapes.h"

void oac_plan_sched_free(oac_ctx *ctx, oac_plan_sched *s)
{
    if (!s)
        return;
    oac_dealloc(ctx, s->bufs);
    oac_dealloc(ctx, s->frees);
    oac_dealloc(ctx, s->steps);
    oac_dealloc(ctx, s);
}

const oac_plan_sched *oac_analysis_schedule(const oac_analysis *a)
{
    return a && a->shapes ? a->shapes->sched : NULL;
}

/* Sum with unknown and overflow propagation (rule 7). */
static void opt_add(oac_opt_u64 *acc, oac_opt_u64 v)
{
    if (!acc->known)
        return;
    if (!v.known || oac_add_overflow_u64(acc->value, v.value, &acc->value)) {
        acc->known = false;
        acc->value = 0;
    }
}

static void opt_max(oac_opt_u64 *acc, oac_opt_u64 v)
{
    if (!acc->known)
        return;
    if (!v.known) {
        acc->known = false;
        acc->value = 0;
    } else if (v.value > acc->value) {
        acc->value = v.value;
    }
}

static oac_opt_u64 value_bytes(const oac_shapes *sh, const oac_value *v)
{
    oac_opt_u64 r = { false, 0 };
    uint64_t b;
    if (v && oac_shapes_bytes(sh, oac_shapes_value(sh, v->id), &b)) {
        r.known = true;
        r.value = b;
    }
    return r;
}

/* Rule 5: the decoded page of the cache at node i. */
static oac_opt_u64 decoded_page(const oac_shapes *sh, const oac_scope *s, long i)
{
    oac_opt_u64 r = { false, 0 };
    oac_value *c = oac_node_input(s, i, 0);
    const oac_vshape *cv = c ? oac_shapes_value(sh, c->id) : NULL;
    if (!cv || cv->rank < 0 || !cv->elem_type)
        return r;
    oac_vshape page = *cv;
    page.kind = OAC_VK_TENSOR;
    page.quantized = false;
    uint64_t b;
    if (oac_shapes_bytes(sh, &page, &b)) {
        r.known = true;
        r.value = b;
    }
    return r;
}

/* The first allowed quantized type of a paged cache's declared type. */
static int64_t first_allowed(const oac_value *c)
{
    const Onnx__TypeProto *t = c ? c->type : NULL;
    if (t && t->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE &&
        t->sequence_type && t->sequence_type->elem_type)
        t = t->sequence_type->elem_type;
    else if (t && t->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE && t->map_type)
        t = t->map_type->value_type;
    if (t && t->value_case == ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE &&
        t->quantized_tensor_type && t->quantized_tensor_type->n_allowed_quantized_type)
        return t->quantized_tensor_type->allowed_quantized_type[0];
    return 0;
}

/* Rule 5b: bytes of one page of format q for the cache read at node i. */
static oac_opt_u64 page_bytes(const oac_check_state *st, const oac_scope *s,
                              long i, int64_t q)
{
    oac_opt_u64 r = { false, 0 };
    const Onnx__ModelProto *m = st->model->proto;
    oac_value *c = oac_node_input(s, i, 0);
    const oac_vshape *cv = c ? oac_shapes_value(st->shapes, c->id) : NULL;
    if (!cv || cv->rank != 4 || q < 0 || (uint64_t)q >= m->n_quantizations)
        return r;
    uint64_t n = 1;
    for (int k = 0; k < 4; k++) {
        int64_t d = oac_shapes_dim(st->shapes, cv->dims[k]);
        if (d < 0 || oac_mul_overflow_u64(n, (uint64_t)d, &n))
            return r;
    }
    oac_qdesc d;
    char why[128];
    uint64_t b;
    if (!oac_qdesc_from_proto(&d, m->quantizations[q], why, sizeof why) ||
        !oac_qdesc_page_bytes(&d, n, &b))
        return r;
    r.known = true;
    r.value = b;
    return r;
}

/* What a PagedCacheUpdate does to memory (rules 5, 5b). */
typedef struct page_fx {
    oac_opt_u64 workspace;   /* decoded page on a format change */
    oac_opt_u64 created;     /* first update of its class: the new page */
    oac_opt_u64 during;      /* a resized page's new copy, while it runs */
    oac_opt_u64 freed;       /* the old copy, freed after it */
} page_fx;

/* fmt[class] is the page format so far (INT64_MIN: no page yet). */
static page_fx paged_effects(const oac_check_state *st, const oac_scope *s,
                             long i, int64_t *fmt)
{
    page_fx fx = { { true, 0 }, { true, 0 }, { true, 0 }, { true, 0 } };
    const oac_node *nd = &s->nodes[i];
    if (!nd->op || nd->op->id != OAC_OP_PAGED_CACHE_UPDATE)
        return fx;
    oac_value *c = oac_node_input(s, i, 0);
    const oac_aclass *cl = st->aliases && c ? oac_value_class(st->aliases, c) : NULL;
    if (!cl)
        return fx;
    const Onnx__AttributeProto *q = oac_shapes_attr(nd->proto, "quantized_type");
    bool has_q = q && q->has_i;
    int64_t cur = fmt[cl->index];
    if (cur == INT64_MIN) {
        int64_t first = has_q ? q->i : first_allowed(cl->root);
        fmt[cl->index] = first;
        if (cl->root->kind == OAC_VAL_INPUT && cl->root->scope == s)
            fx.created = page_bytes(st, s, i, first);
        return fx;
    }
    if (!has_q || q->i == cur)
        return fx;
    fx.workspace = decoded_page(st->shapes, s, i);
    oac_opt_u64 nb = page_bytes(st, s, i, q->i), ob = page_bytes(st, s, i, cur);
    if (!nb.known || !ob.known) {
        fx.during = fx.freed = (oac_opt_u64){ false, 0 };
    } else if (nb.value != ob.value) {
        fx.during = nb;
        fx.freed = ob;
    }
    fmt[cl->index] = q->i;
    return fx;
}

static int build(oac_check_state *st, oac_plan_sched **out)
{
    oac_ctx *ctx = st->ctx;
    const oac_shapes *sh = st->shapes;
    oac_scope *s = st->graphs->scopes[0];
    size_t nv = st->graphs->n_values;
    int rc = OAC_ENOMEM;
    long *buf_of = NULL;       /* value id -> buffer index, or -1 */
    long *last = NULL;         /* buffer -> last reader node, -1 none */
    bool *kept = NULL;         /* buffer backs a graph output */
    size_t *nfree = NULL;      /* node -> buffers freed after it */
    int64_t *fmt = NULL;       /* alias class -> page format (rule 5) */
    size_t ncls = st->aliases ? st->aliases->n_classes : 0;
    oac_plan_sched *p = oac_calloc(ctx, 1, sizeof *p);
    if (!p)
        goto done;
    size_t nn = s->n_nodes;
    size_t nout = 0;
    for (size_t i = 0; i < nn; i++)
        nout += s->nodes[i].proto->n_output;
    p->steps = oac_calloc(ctx, nn ? nn : 1, sizeof *p->steps);
    p->bufs = oac_calloc(ctx, nout ? nout : 1, sizeof *p->bufs);
    p->frees = oac_calloc(ctx, nout ? nout : 1, sizeof *p->frees);
    buf_of = oac_calloc(ctx, nv ? nv : 1, sizeof *buf_of);
    last = oac_calloc(ctx, nout ? nout : 1, sizeof *last);
    kept = oac_calloc(ctx, nout ? nout : 1, sizeof *kept);
    nfree = oac_calloc(ctx, nn + 1, sizeof *nfree);
    fmt = oac_calloc(ctx, ncls ? ncls : 1, sizeof *fmt);
    if (!p->steps || !p->bufs || !p->frees || !buf_of || !last || !kept ||
        !nfree || !fmt)
        goto done;
    for (size_t k = 0; k < ncls; k++)
        fmt[k] = INT64_MIN;
    p->n_steps = nn;
    for (size_t k = 0; k < nv; k++)
        buf_of[k] = -1;

    /* Rule 2: buffers in allocation order. */
    for (size_t i = 0; i < nn; i++) {
        const Onnx__NodeProto *np = s->nodes[i].proto;
        p->steps[i].first_alloc = p->n_bufs;
        for (size_t k = 0; k < np->n_output; k++) {
            oac_value *v = oac_node_output(s, (long)i, k);
            if (!v)
                continue;
            oac_value *in = oac_value_aliased_input(v);
            if (in) {
                buf_of[v->id] = buf_of[in->id];   /* -1 for inputs */
                continue;
            }
            size_t b = p->n_bufs++;
            p->bufs[b] = (oac_plan_buf){ .name = v->name, .node = i, .port = k,
                                         .free_after = (long)i,
                                         .bytes = value_bytes(sh, v) };
            last[b] = (long)i;
            buf_of[v->id] = (long)b;
        }
        p->steps[i].n_alloc = p->n_bufs - p->steps[i].first_alloc;
    }
    /* Rule 3: last readers and graph outputs. */
    for (size_t k = 0; k < s->n_values; k++) {
        const oac_value *v = s->values[k];
        long b = buf_of[v->id];
        if (b < 0)
            continue;
        for (size_t u = 0; u < v->n_uses; u++)
            if (v->uses[u].node > last[b])
                last[b] = v->uses[u].node;
    }
    for (size_t k = 0; k < s->n_outputs; k++)
        if (s->outputs[k] && buf_of[s->outputs[k]->id] >= 0)
            kept[buf_of[s->outputs[k]->id]] = true;
    for (size_t b = 0; b < p->n_bufs; b++) {
        p->bufs[b].free_after = kept[b] ? -1 : last[b];
        if (!kept[b])
            nfree[last[b]]++;
    }
    /* Free lists per node (counting sort by node). */
    size_t at = 0;
    for (size_t i = 0; i < nn; i++) {
        p->steps[i].first_free = at;
        at += nfree[i];
        nfree[i] = p->steps[i].first_free;
    }
    for (size_t b = 0; b < p->n_bufs; b++)
        if (!kept[b]) {
            size_t i = (size_t)last[b];
            p->frees[nfree[i]++] = b;
            p->steps[i].n_free++;
        }
    p->n_frees = at;

    /* Rule 4-6: walk. */
    oac_memory_plan *t = &p->totals;
    t->planned_output_bytes = (oac_opt_u64){ true, 0 };
    t->workspace_bytes = (oac_opt_u64){ true, 0 };
    t->peak_bytes = (oac_opt_u64){ true, 0 };
    t->second_cache_bytes = (oac_opt_u64){ true, 0 };
    t->persistent_cache_bytes = (oac_opt_u64){ true, 0 };
    /* Rule 5b: pages the first updates create, live from the start. */
    oac_opt_u64 live = { true, 0 };
    page_fx *fx = oac_calloc(ctx, nn ? nn : 1, sizeof *fx);
    if (!fx)
        goto done;
    for (size_t i = 0; i < nn; i++) {
        fx[i] = paged_effects(st, s, (long)i, fmt);
        opt_add(&live, fx[i].created);
    }
    p->page_bytes = live;
    for (size_t i = 0; i < nn; i++) {
        oac_plan_step *stp = &p->steps[i];
        for (size_t b = stp->first_alloc; b < stp->first_alloc + stp->n_alloc; b++) {
            opt_add(&live, p->bufs[b].bytes);
            opt_add(&t->planned_output_bytes, p->bufs[b].bytes);
        }
        opt_add(&live, fx[i].during);
        stp->live = live;
        stp->workspace = fx[i].workspace;
        oac_opt_u64 here = live;
        opt_add(&here, stp->workspace);
        opt_max(&t->peak_bytes, here);
        opt_max(&t->workspace_bytes, stp->workspace);
        /* Frees: subtract what is known; an unknown live stays unknown
         * (rule 7: every later step depends on it). */
        for (size_t f = stp->first_free; f < stp->first_free + stp->n_free; f++) {
            oac_opt_u64 bb = p->bufs[p->frees[f]].bytes;
            if (live.known && bb.known)
                live.value -= bb.value;
        }
        if (!fx[i].freed.known)
            live.known = false;
        else if (live.known)
            live.value -= fx[i].freed.value;
        const oac_node *nd = &s->nodes[i];
        if (oac_op_has(nd->op, OAC_OPF_CACHE_UPDATE) && nd->proto->n_output) {
            oac_value *o = oac_node_output(s, (long)i, 0);
            if (o && !oac_value_aliased_input(o))
                opt_add(&t->second_cache_bytes, value_bytes(sh, o));
        }
    }
    const oac_analysis *a = st->out;
    for (size_t c = 0; a && c < a->n_classes; c++)
        if (a->classes[c].read_write)
            opt_add(&t->persistent_cache_bytes, a->classes[c].bytes);
    oac_dealloc(ctx, fx);
    *out = p;
    p = NULL;
    rc = OAC_OK;
done:
    if (rc == OAC_ENOMEM)
        oac_err(ctx, OAC_ENOMEM, "out of memory");
    oac_plan_sched_free(ctx, p);
    oac_dealloc(ctx, buf_of);
    oac_dealloc(ctx, last);
    oac_dealloc(ctx, kept);
    oac_dealloc(ctx, nfree);
    oac_dealloc(ctx, fmt);
    return rc;
}

int oac_pass_plan(oac_check_state *st)
{
    oac_memory_plan none = { { false, 0 }, { false, 0 }, { false, 0 },
                             { false, 0 }, { false, 0 } };
    if (st->out)
        st->out->plan = none;
    if (!st->graphs || !st->shapes || !st->graphs->n_scopes ||
        st->graphs->scopes[0]->kind != OAC_SCOPE_MAIN)
        return OAC_OK;
    oac_plan_sched *p;
    int rc = build(st, &p);
    if (rc)
        return rc;
    oac_plan_sched_free(st->ctx, st->shapes->sched);
    st->shapes->sched = p;
    if (st->out)
        st->out->plan = p->totals;
    return OAC_OK;
}

/* check/plan.c: the static memory plan (oac_pass_plan) and its schedule.
 *
 * Owns: analysis->plan and the per-node schedule of check/plan.h that the
 * reference runtime reuses.  Contract: section 4, last paragraph.
 *
 * The rule, exactly (the runtime measures the same and must find
 * equality at the same dims):
 *  1. Walk the nodes of the main graph in the schedule's order (check/order.h:
 *     a topological order of the data dependencies, the file order when
 *     the file is sorted; rule 8: bodies).  Dims are those known after
 *     checking (declared, --dim, --input, unified).
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
 *     schedule order) gives it: that node's quantized_type attribute, else
 *     the cache type's first allowed type, else 0.  A later update of the
 *     same class whose quantized_type attribute differs changes the
 *     format (workspace), and the page keeps the new format afterwards.
 *     workspace_bytes = max_i workspace(i).
 *  5c. PagedCacheAttention (contract 11), in any scope: the keys and values
 *     of one kv head of one page decoded, 2 * page_size * head_size
 *     elements of E, plus page_size + head_size floats (attn_workspace).
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
 *  8. Bodies.  The subgraph of an If branch or Loop body, and the body of
 *     a called local function, are walked with rules 1-4 themselves
 *     (their inputs and outer values are not their buffers; their output
 *     buffers are never freed inside them), giving the body's peak P and
 *     the bytes E it still holds when it returns.  "Must-alias" in rule 2
 *     is any resolved edge of check/alias.h: a port's output_alias, a call
 *     inheriting its function's alias_of, an If output every branch
 *     returns an in-place update of (OAC_EDGE_BRANCH); such outputs are
 *     never buffers, at any depth.  A value whose size inference cannot
 *     tell (an If output) is sized by its declared type.
 *  9. transient(i) is what node i's body holds above live(i); peak_bytes
 *     is max_i live(i) + workspace(i) + transient(i).  The runtime runs
 *     bodies the same way (run/control.c, run/interp.c):
 *     - Loop: its outputs are its own buffers (allocated before the first
 *       iteration, carried values copied back after each), so
 *       transient = P(body); an aliased carried value is the caller's
 *       storage and no buffer at all.
 *     - If, call: a body output that is a buffer of the body is handed
 *       over as the node's output (no copy); any other (an outer value,
 *       an input) is copied into a new buffer while the body's buffers
 *       are live, so the body's figure is P' = max(P, E + copies), and
 *       transient = P' - (the node's output buffers, counted in live(i)).
 *       For If, the maximum over both branches: the plan does not know
 *       the condition, so a run taking a smaller branch measures less
 *       (the examples' branches are symmetric).
 *     - Bodies nested in bodies follow the same rule recursively; a
 *       function body is walked once (memoized); a recursive function or
 *       nesting past OAC_MAX_DEPTH is unknown (the runtime refuses it).
 * 10. Loop iterations are not multiplied: each iteration's body returns
 *     everything it allocated before the next starts, so P is the same
 *     for one iteration or many.
 * 10b. A Loop known not to iterate (trip count known to be 0, condition
 *     known false) has transient 0.  When the trip count or condition is
 *     a main-graph input the check does not know, the step records its
 *     name (check/plan.h): `run`, which knows its inputs (zero-filled when not
 *     given), plans no body for it when it starts at 0/false; that is the
 *     execution's planned_peak_bytes, while memory_plan keeps this
 *     static figure.
 *
 * Invariants: linear in the size of the model (one pass over the nodes
 * and uses of each scope, function bodies once); nothing allocated outside
 * the schedules; every scope's schedule is owned by the analysis
 * (analysis->plans, by scope index); recursion bounded by OAC_MAX_DEPTH.
 */
#include <stdio.h>
#include <string.h>

#include "check/alias.h"
#include "check/checker.h"
#include "check/graph.h"
#include "ops.h"
#include "check/plan.h"
#include "quant/quant.h"
#include "check/order.h"
#include "check/shapes_store.h"

void oac_plan_sched_free(oac_ctx *ctx, oac_plan_sched *s)
{
    if (!s)
        return;
    oac_dealloc(ctx, s->bufs);
    oac_dealloc(ctx, s->frees);
    oac_dealloc(ctx, s->steps);
    oac_dealloc(ctx, s->extras);
    oac_dealloc(ctx, s);
}

/* The extra of every step extras does not list. */
static const oac_plan_extra no_extra = { 0, { true, 0 }, { true, 0 }, OAC_PLAN_NO_INPUT,
                                          OAC_PLAN_NO_INPUT };

const oac_plan_extra *oac_plan_step_extra(const oac_plan_sched *s, size_t i)
{
    size_t lo = 0, hi = s ? s->n_extras : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->extras[mid].step < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < (s ? s->n_extras : 0) && s->extras[lo].step == i
        ? &s->extras[lo] : &no_extra;
}

bool oac_plan_peak_at_inputs(const oac_plan_sched *s,
                             bool (*zero)(const void *arg, int64_t value_id),
                             const void *arg, uint64_t *peak, bool *skipped)
{
    *peak = 0;
    *skipped = false;
    if (!s)
        return false;
    for (size_t i = 0; i < s->n_steps; i++) {
        oac_opt_u64 live = oac_plan_step_live(s, i);
        const oac_plan_extra *x = oac_plan_step_extra(s, i);
        bool skip = (x->loop_trip_input >= 0 && zero(arg, x->loop_trip_input)) ||
                    (x->loop_cond_input >= 0 && zero(arg, x->loop_cond_input));
        *skipped = *skipped || skip;
        uint64_t here;
        if (!live.known || !x->workspace.known || (!skip && !x->transient.known) ||
            oac_add_overflow_u64(live.value, x->workspace.value, &here) ||
            (!skip && oac_add_overflow_u64(here, x->transient.value, &here)))
            return false;
        if (here > *peak)
            *peak = here;
    }
    return true;
}

static bool opt_zero(oac_opt_u64 v)
{
    return v.known && v.value == 0;
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

/* Bytes of a value's declared dense type, its dim_params bound as the
 * shapes pass binds them; unknown otherwise.  For outputs inference
 * cannot tell (an If's, whose type comes from its branches). */
static oac_opt_u64 declared_bytes(const oac_shapes *sh, const oac_value *v)
{
    oac_opt_u64 r = { false, 0 };
    const Onnx__TypeProto *t = oac_value_type(v);
    if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type ||
        !t->tensor_type->shape)
        return r;
    const Onnx__TensorShapeProto *sp = t->tensor_type->shape;
    uint64_t n = 1;
    for (size_t i = 0; i < sp->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sp->dim[i];
        int64_t x = -1;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            x = d->dim_value;
        else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                 d->dim_param) {
            void *id = oac_strmap_get(&sh->sym_by_name, d->dim_param);
            if (id)
                x = oac_shapes_dim(sh, OAC_DIM_SYM((size_t)((uintptr_t)id - 1)));
        }
        if (x < 0 || oac_mul_overflow_u64(n, (uint64_t)x, &n))
            return r;
    }
    uint64_t b;
    if (!oac_elem_bytes(t->tensor_type->elem_type, n, &b))
        return r;
    r.known = true;
    r.value = b;
    return r;
}

/* Bytes of a tensor shape by its dims array: values share interned
 * arrays (check/shapes_store.h invariant 7) and the bindings are final once the
 * plan runs, so a layer's buffers repeat a few products.  Direct-mapped:
 * a miss only costs the product. */
#define BYTES_CACHE 64
typedef struct bytes_slot {
    const oac_dimref *dims;     /* NULL: empty */
    int32_t elem_type;
    int16_t rank;
    bool known;
    uint64_t bytes;
} bytes_slot;

static inline oac_opt_u64 value_bytes(const oac_shapes *sh, bytes_slot *cache,
                                      const oac_value *v)
{
    oac_opt_u64 r = { false, 0 };
    if (!v)
        return r;
    /* oac_shapes_value, inline: a call per buffer. */
    const oac_vshape *vs = v->id < sh->n_values ? &sh->vals[v->id] : NULL;
    /* What oac_shapes_bytes refuses at once goes to the declaration. */
    if (vs && vs->kind == OAC_VK_TENSOR && !vs->quantized && vs->rank >= 0 &&
        vs->elem_type) {
        bytes_slot *e = &cache[(((uintptr_t)vs->dims >> 3) ^
                                (uintptr_t)vs->elem_type) % BYTES_CACHE];
        if (e->dims != vs->dims || e->elem_type != vs->elem_type ||
            e->rank != vs->rank) {
            e->dims = vs->dims;
            e->elem_type = vs->elem_type;
            e->rank = vs->rank;
            e->known = oac_shapes_bytes(sh, vs, &e->bytes);
        }
        if (e->known) {
            r.known = true;
            r.value = e->bytes;
            return r;
        }
    }
    return declared_bytes(sh, v);
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
    const Onnx__TypeProto *t = c ? oac_value_type(c) : NULL;
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
    if (!oac_op_paged_update(nd->op))
        return fx;
    oac_value *c = oac_node_input(s, i, 0);
    const oac_aclass *cl = st->aliases && c ? oac_value_class(st->aliases, c) : NULL;
    if (!cl)
        return fx;
    const Onnx__AttributeProto *q = oac_node_attr(nd->proto, "quantized_type");
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

/* Rule 5c: PagedCacheAttention's workspace (kernels/paged_attn.c,
 * oac_pattn_workspace_bytes): the keys and values of one kv head of one
 * page in the decoded type E, 2 * page_size * head_size elements, plus
 * page_size + head_size floats (a row of scores, an accumulator). */
static oac_opt_u64 attn_workspace(const oac_check_state *st, const oac_scope *s,
                                  long i)
{
    oac_opt_u64 r = { false, 0 };
    oac_value *c = oac_node_input(s, i, 1);
    const oac_vshape *cv = c ? oac_shapes_value(st->shapes, c->id) : NULL;
    if (!cv || cv->rank != 4)
        return r;
    int64_t ps = oac_shapes_dim(st->shapes, cv->dims[2]);
    int64_t hs = oac_shapes_dim(st->shapes, cv->dims[3]);
    int32_t e = cv->elem_type;
    uint64_t esz = e == OAC_T_FLOAT ? 4 : (e == OAC_T_FLOAT16 || e == OAC_T_BFLOAT16) ? 2 : 0;
    uint64_t kv, rows;
    if (ps < 0 || hs < 0 || !esz ||
        oac_mul_overflow_u64(2 * esz, (uint64_t)ps, &kv) ||
        oac_mul_overflow_u64(kv, (uint64_t)hs, &kv) ||
        oac_add_overflow_u64((uint64_t)ps, (uint64_t)hs, &rows) ||
        oac_mul_overflow_u64(rows, 4, &rows) ||
        oac_add_overflow_u64(kv, rows, &r.value))
        return r;
    r.known = true;
    return r;
}

/* State shared by the walks of every scope (rules 8-10). */
typedef struct walker {
    oac_check_state *st;
    /* Value id -> 1 + its buffer's index in its scope's walk, 0 for none
     * (zeroed once: each scope is walked at most once, rule 9). */
    uint32_t *buf_of;
    uint8_t *memo;             /* scope index -> 0 new, 1 walking, 2 done */
    oac_opt_u64 *memo_peak;    /* scope index -> peak of its walk */
    oac_opt_u64 *memo_end;     /* scope index -> live bytes when it returns */
    oac_plan_sched **plans;    /* scope index -> its schedule (the analysis's) */
    bytes_slot bytes[BYTES_CACHE];
} walker;

static int build(walker *w, oac_scope *s, int depth, oac_plan_sched **out);

/* The value whose storage v reuses (any resolved must-alias edge: port,
 * If branch, Loop carried), or NULL: v is a buffer if a node makes it. */
static oac_value *storage_parent(const oac_check_state *st, const oac_value *v)
{
    return oac_storage_parent(st->aliases, v);
}

/* Is v a buffer allocated inside scope s (not an input, an outer value or
 * an alias of one)? */
static bool scope_buffer(const walker *w, const oac_scope *s, const oac_value *v)
{
    return v && v->scope == s && w->buf_of[v->id];
}

/* Rule 8: the peak a body reaches while it runs, and what it still holds
 * when it returns (its output buffers), memoized per scope: a function
 * body is walked once however often it is called.  Unknown when the body
 * is truncated, too deep, or (a recursive function) walking already. */
static int body_peak(walker *w, oac_scope *b, int depth, oac_opt_u64 *peak,
                     oac_opt_u64 *end)
{
    *peak = *end = (oac_opt_u64){ false, 0 };
    if (!b || b->truncated || depth > OAC_MAX_DEPTH || w->memo[b->index] == 1)
        return OAC_OK;
    if (w->memo[b->index] == 2) {
        *peak = w->memo_peak[b->index];
        *end = w->memo_end[b->index];
        return OAC_OK;
    }
    w->memo[b->index] = 1;
    oac_plan_sched *p = NULL;
    int rc = build(w, b, depth, &p);
    if (rc)
        return rc;
    w->memo[b->index] = 2;
    w->memo_peak[b->index] = *peak = p->totals.peak_bytes;
    w->memo_end[b->index] = *end = p->end_live;
    /* Kept for the runtime's frames (one schedule for both). */
    w->plans[b->index] = p;
    return OAC_OK;
}

/* Rule 10b: a Loop input (trip count, port 0; condition, port 1) that
 * stops it before the first iteration: *zero when known to be 0 (false);
 * *input is its value id when it is a main-graph input the check does
 * not know. */
static void loop_stopper(const walker *w, const oac_scope *s, long i, size_t port,
                         bool *zero, int64_t *input)
{
    oac_value *v = oac_node_input(s, i, port);
    if (!v)
        return;
    const oac_known *k = oac_shapes_known(w->st->shapes, v->id);
    if (k && k->n == 1) {
        if (k->v[0] <= 0)
            *zero = true;
        return;
    }
    if (v->kind == OAC_VAL_INPUT && v->scope == w->st->graphs->scopes[0])
        *input = (int64_t)v->id;
}

/* Rules 9-10: the transient of a node that runs a body (If, Loop, a call
 * of a local function); 0 for any other node. */
static int control_transient(walker *w, oac_scope *s, long i, int depth,
                             oac_opt_u64 *out, oac_plan_extra *stp)
{
    oac_check_state *st = w->st;
    const oac_node *nd = &s->nodes[i];
    *out = (oac_opt_u64){ true, 0 };
    bool control = oac_op_has(nd->op, OAC_OPF_CONTROL);
    if (!control && !oac_node_x(nd)->callee)
        return OAC_OK;
    /* A Loop (its carried alias rule): its trip count and condition. */
    bool is_loop = control && nd->op->alias == OAC_AL_LOOP;
    if (is_loop) {
        bool zero = false;
        int64_t trip = OAC_PLAN_NO_INPUT, cond = OAC_PLAN_NO_INPUT;
        loop_stopper(w, s, i, 0, &zero, &trip);
        loop_stopper(w, s, i, 1, &zero, &cond);
        if (zero)
            return OAC_OK;        /* no iteration: the body never runs */
        stp->loop_trip_input = trip;
        stp->loop_cond_input = cond;
    }
    /* The node's own output buffers, counted in live(i) already. */
    oac_opt_u64 outs = { true, 0 };
    for (size_t k = 0; k < nd->n_out; k++) {
        oac_value *v = oac_node_output(s, i, k);
        if (scope_buffer(w, s, v))
            opt_add(&outs, value_bytes(st->shapes, w->bytes, v));
    }
    oac_scope *bodies[2] = { NULL, NULL };
    size_t nb = 0;
    if (control) {
        for (size_t k = 0; k < oac_node_x(nd)->n_subgraphs; k++) {
            const char *an = oac_node_x(nd)->subgraphs[k]->attr_name;
            if (oac_op_is_body(nd->op, an) && nb < 2)
                bodies[nb++] = oac_node_x(nd)->subgraphs[k];
        }
        if (nb != nd->op->n_bodies) {
            *out = (oac_opt_u64){ false, 0 };
            return OAC_OK;
        }
    } else {
        bodies[nb++] = oac_node_x(nd)->callee;
    }
    oac_opt_u64 best = { true, 0 };
    for (size_t b = 0; b < nb; b++) {
        oac_opt_u64 pk, end;
        int rc = body_peak(w, bodies[b], depth + 1, &pk, &end);
        if (rc)
            return rc;
        if (is_loop) {
            /* Carried values are the Loop's own buffers, copied back after
             * each iteration: nothing more at the end. */
            opt_max(&best, pk);
            continue;
        }
        /* An output the body returns without owning it (an outer value,
         * an input, an initializer) is copied into a new buffer while the
         * body's buffers are still live. */
        oac_opt_u64 copy = end;
        for (size_t k = 0; k < nd->n_out; k++) {
            oac_value *v = oac_node_output(s, i, k);
            if (!scope_buffer(w, s, v))
                continue;
            oac_value *bo = k < bodies[b]->n_outputs ? bodies[b]->outputs[k] : NULL;
            if (!scope_buffer(w, bodies[b], bo))
                opt_add(&copy, value_bytes(st->shapes, w->bytes, v));
        }
        opt_max(&pk, copy);
        opt_max(&best, pk);
    }
    /* If and calls hand their body's buffers over as outputs, which are
     * in live(i) already: the transient is what the body holds on top of
     * them.  A Loop's outputs are its own buffers, allocated before the
     * body runs (rule 9). */
    if (is_loop)
        ;
    else if (best.known && outs.known)
        best.value = best.value > outs.value ? best.value - outs.value : 0;
    else
        best = (oac_opt_u64){ false, 0 };
    *out = best;
    return OAC_OK;
}

/* What build's parts share while one scope is planned. */
typedef struct builder {
    walker *w;
    oac_scope *s;
    int depth;
    bool main_graph;
    oac_plan_sched *p;
    int64_t *fmt;              /* alias class -> page format (rule 5) */
    /* Only while the walk runs: each buffer's bytes (0 when not known;
     * live is unknown from the first such buffer on, rule 7, so the
     * others are never needed). */
    uint64_t *bytes;
    size_t first_unknown;
    /* Rules 5, 5b: the few nodes whose page effects during/after them
     * are not zero (PagedCacheUpdate), in node order; the rest of each
     * node's effects and its transient (rule 9) go to extras, for the
     * few steps where they are not zero. */
    struct page_after { size_t node; oac_opt_u64 during, freed; } *pa;
    size_t n_pa, cap_pa, cap_x;
    /* The schedule (check/order.h): NULL arrays when the file is sorted. */
    const uint32_t *snode, *spos;
    oac_opt_u64 live;          /* pages created so far (rule 5) */
} builder;

/* The place of node i in the schedule. */
static size_t pos_of(const builder *b, size_t i)
{
    return b->spos ? b->spos[i] : i;
}

/* Rule 2: the buffers node i (step k) allocates, in allocation order. */
static void step_buffers(builder *bd, size_t k, size_t i)
{
    const oac_check_state *st = bd->w->st;
    oac_scope *s = bd->s;
    oac_plan_sched *p = bd->p;
    uint32_t *buf_of = bd->w->buf_of;
    size_t first_alloc = p->n_bufs;
    for (size_t port = 0; port < s->nodes[i].n_out; port++) {
        oac_value *v = oac_node_output(s, (long)i, port);
        if (!v)
            continue;
        oac_value *in = storage_parent(st, v);
        if (in) {
            /* none for inputs and for values of enclosing scopes */
            buf_of[v->id] = in->scope == s ? buf_of[in->id] : 0;
            continue;
        }
        size_t b = p->n_bufs++;
        oac_opt_u64 by = value_bytes(st->shapes, bd->w->bytes, v);
        bd->bytes[b] = by.value;
        if (!by.known && bd->first_unknown == SIZE_MAX)
            bd->first_unknown = b;
        p->bufs[b] = (oac_plan_buf){ .name = v->name, .value = v->id,
                                     .node = (uint32_t)i,
                                     .free_after = (int32_t)i };
        buf_of[v->id] = (uint32_t)b + 1;
    }
    p->steps[k].n_alloc = (uint32_t)(p->n_bufs - first_alloc);
}

/* Rules 5, 5b and 9: what node i (step k) adds beyond its buffers
 * (extras, pa): only paged updates, paged readers and nodes that run a
 * body. */
static int step_extras(builder *bd, size_t k, size_t i)
{
    oac_check_state *st = bd->w->st;
    oac_ctx *ctx = st->ctx;
    oac_scope *s = bd->s;
    oac_plan_sched *p = bd->p;
    const oac_node *nd = &s->nodes[i];
    bool paged = bd->main_graph && oac_op_paged_update(nd->op);
    bool pattn = oac_op_has(nd->op, OAC_OPF_PAGED_READ);
    if (!paged && !pattn && !oac_node_x(nd)->callee &&
        !oac_op_has(nd->op, OAC_OPF_CONTROL))
        return OAC_OK;
    /* Pages are planned for the main graph only (rule 5b). */
    page_fx fx = { { true, 0 }, { true, 0 }, { true, 0 }, { true, 0 } };
    if (paged)
        fx = paged_effects(st, s, (long)i, bd->fmt);
    if (pattn)
        fx.workspace = attn_workspace(st, s, (long)i);
    opt_add(&bd->live, fx.created);
    oac_plan_extra x = no_extra;
    x.step = k;
    x.workspace = fx.workspace;
    if (!fx.during.known || fx.during.value || !fx.freed.known ||
        fx.freed.value) {
        if (oac_grow(ctx, (void **)&bd->pa, &bd->cap_pa, bd->n_pa + 1,
                     sizeof *bd->pa))
            return OAC_ENOMEM;
        bd->pa[bd->n_pa++] = (struct page_after){ k, fx.during, fx.freed };
    }
    /* The node's own outputs have their buf_of already; a body's walk
     * touches only the body's values. */
    int rc = control_transient(bd->w, s, (long)i, bd->depth, &x.transient, &x);
    if (rc)
        return rc;
    if (!opt_zero(x.workspace) || !opt_zero(x.transient) ||
        x.loop_trip_input >= 0 || x.loop_cond_input >= 0) {
        if (oac_grow(ctx, (void **)&p->extras, &bd->cap_x, p->n_extras + 1,
                     sizeof *p->extras))
            return OAC_ENOMEM;
        p->extras[p->n_extras++] = x;
    }
    return OAC_OK;
}

/* Rule 3: last readers (free_after is the last so far), then buffers
 * backing graph outputs are never freed; the free list of each step. */
static void free_points(builder *bd)
{
    oac_scope *s = bd->s;
    oac_plan_sched *p = bd->p;
    const uint32_t *buf_of = bd->w->buf_of;
    for (size_t k = 0; k < s->n_values; k++) {
        const oac_value *v = &s->values_block[k];
        if (!buf_of[v->id])
            continue;
        size_t b = buf_of[v->id] - 1;
        for (size_t u = 0; u < v->n_uses; u++)
            if (pos_of(bd, v->uses[u].node) > pos_of(bd, (size_t)p->bufs[b].free_after))
                p->bufs[b].free_after = (int32_t)v->uses[u].node;
    }
    for (size_t k = 0; k < s->n_outputs; k++)
        if (scope_buffer(bd->w, s, s->outputs[k]))
            p->bufs[buf_of[s->outputs[k]->id] - 1].free_after = -1;
    /* Free lists per step (counting sort by the step of the freeing
     * node, n_free the cursor). */
    for (size_t b = 0; b < p->n_bufs; b++)
        if (p->bufs[b].free_after >= 0)
            p->steps[pos_of(bd, (size_t)p->bufs[b].free_after)].n_free++;
    /* (Each step's cursor in frees is kept in its live until the walk
     * sets that.) */
    uint32_t at = 0;
    for (size_t i = 0; i < p->n_steps; i++) {
        p->steps[i].live = at;
        at += p->steps[i].n_free;
    }
    for (size_t b = 0; b < p->n_bufs; b++)
        if (p->bufs[b].free_after >= 0)
            p->frees[p->steps[pos_of(bd, (size_t)p->bufs[b].free_after)].live++] =
                (uint32_t)b;
    p->n_frees = at;
}

/* Rules 4-6: walk the steps; live, peak and the totals. */
static void walk_steps(builder *bd)
{
    const oac_check_state *st = bd->w->st;
    const oac_shapes *sh = st->shapes;
    oac_scope *s = bd->s;
    oac_plan_sched *p = bd->p;
    const uint64_t *bytes = bd->bytes;
    oac_memory_plan *t = &p->totals;
    t->planned_output_bytes = (oac_opt_u64){ true, 0 };
    t->workspace_bytes = (oac_opt_u64){ true, 0 };
    t->peak_bytes = (oac_opt_u64){ true, 0 };
    t->second_cache_bytes = (oac_opt_u64){ true, 0 };
    t->persistent_cache_bytes = (oac_opt_u64){ true, 0 };
    oac_opt_u64 live = bd->live;
    p->page_bytes = live;
    size_t pa_at = 0, x_at = 0, alloc_at = 0, free_at = 0;
    for (size_t i = 0; i < p->n_steps; i++) {
        oac_plan_step *stp = &p->steps[i];
        for (size_t end = alloc_at + stp->n_alloc; alloc_at < end; alloc_at++) {
            oac_opt_u64 by = { alloc_at < bd->first_unknown, bytes[alloc_at] };
            opt_add(&live, by);
            opt_add(&t->planned_output_bytes, by);
        }
        const struct page_after *fa =
            pa_at < bd->n_pa && bd->pa[pa_at].node == i ? &bd->pa[pa_at++] : NULL;
        const oac_plan_extra *x = x_at < p->n_extras && p->extras[x_at].step == i
            ? &p->extras[x_at++] : &no_extra;
        if (fa)
            opt_add(&live, fa->during);
        stp->live = live.value;
        if (live.known)
            p->n_live_known = i + 1;   /* known ones are a prefix: rule 7 */
        oac_opt_u64 here = live;
        if (x != &no_extra) {
            /* (Adding and taking the maximum of 0 change nothing.) */
            opt_add(&here, x->workspace);
            opt_add(&here, x->transient);
            opt_max(&t->workspace_bytes, x->workspace);
        }
        opt_max(&t->peak_bytes, here);
        /* Frees: subtract what is known; an unknown live stays unknown
         * (rule 7: every later step depends on it). */
        for (size_t end = free_at + stp->n_free; free_at < end; free_at++)
            if (live.known)
                live.value -= bytes[p->frees[free_at]];
        if (fa && !fa->freed.known)
            live.known = false;
        else if (fa && live.known)
            live.value -= fa->freed.value;
        size_t ni = bd->snode ? bd->snode[i] : i;
        const oac_node *nd = &s->nodes[ni];
        if (oac_op_has(nd->op, OAC_OPF_CACHE_UPDATE) && nd->n_out) {
            oac_value *o = oac_node_output(s, (long)ni, 0);
            if (o && !oac_value_aliased_input(o))
                opt_add(&t->second_cache_bytes, value_bytes(sh, bd->w->bytes, o));
        }
    }
    p->end_live = live;
    const oac_analysis *a = bd->main_graph ? st->out : NULL;
    for (size_t c = 0; a && c < a->n_classes; c++)
        if (a->classes[c].read_write)
            opt_add(&t->persistent_cache_bytes, a->classes[c].bytes);
}

static int build(walker *w, oac_scope *s, int depth, oac_plan_sched **out)
{
    oac_check_state *st = w->st;
    oac_ctx *ctx = st->ctx;
    int rc = OAC_ENOMEM;
    size_t ncls = st->aliases ? st->aliases->n_classes : 0;
    size_t nn = s->n_nodes;
    const oac_scope_order *so = oac_sched_scope(st->schedule, s->index);
    builder bd = { .w = w, .s = s, .depth = depth,
                   .main_graph = s == st->graphs->scopes[0],
                   .first_unknown = SIZE_MAX,
                   .snode = so ? so->node : NULL, .spos = so ? so->pos : NULL,
                   .live = { true, 0 } };
    size_t nout = 0;
    for (size_t i = 0; i < nn; i++)
        nout += s->nodes[i].n_out;
    /* 32-bit indices (check/plan.h); no model this large fits in memory. */
    if (nn > INT32_MAX || nout > INT32_MAX)
        return oac_err(ctx, OAC_ENOMEM, "graph '%s' too large to plan",
                       s->name ? s->name : "");
    oac_plan_sched *p = bd.p = oac_calloc(ctx, 1, sizeof *p);
    if (!p)
        goto done;
    p->steps = oac_calloc(ctx, nn ? nn : 1, sizeof *p->steps);
    p->bufs = oac_calloc(ctx, nout ? nout : 1, sizeof *p->bufs);
    p->frees = oac_calloc(ctx, nout ? nout : 1, sizeof *p->frees);
    bd.fmt = oac_calloc(ctx, ncls ? ncls : 1, sizeof *bd.fmt);
    bd.bytes = oac_reallocarray(ctx, NULL, nout ? nout : 1, sizeof *bd.bytes);
    if (!p->steps || !p->bufs || !p->frees || !bd.fmt || !bd.bytes)
        goto done;
    /* Written for every node and (nearly) every output: map at once. */
    oac_prefault(p->steps, nn * sizeof *p->steps);
    oac_prefault(p->bufs, nout * sizeof *p->bufs);
    oac_prefault(p->frees, nout * sizeof *p->frees);
    oac_prefault(bd.bytes, nout * sizeof *bd.bytes);
    for (size_t k = 0; k < ncls; k++)
        bd.fmt[k] = INT64_MIN;
    p->n_steps = nn;

    /* Rule 2: buffers in allocation order; rules 5, 5b and 9: what each
     * node adds beyond its buffers (extras, pa).  Pages the first updates
     * create are live from the start.  Step k runs node oac_sched_node(so,
     * k) (rule 1: the schedule's order). */
    for (size_t k = 0; k < nn; k++) {
        size_t i = bd.snode ? bd.snode[k] : k;
        step_buffers(&bd, k, i);
        if ((rc = step_extras(&bd, k, i)))
            goto done;
    }
    free_points(&bd);
    walk_steps(&bd);
    *out = p;
    bd.p = NULL;
    rc = OAC_OK;
done:
    if (rc == OAC_ENOMEM)
        oac_err(ctx, OAC_ENOMEM, "out of memory");
    oac_plan_sched_free(ctx, bd.p);
    oac_dealloc(ctx, bd.pa);
    oac_dealloc(ctx, bd.fmt);
    oac_dealloc(ctx, bd.bytes);
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
    oac_analysis *a = st->out;
    size_t nv = st->graphs->n_values, ns = st->graphs->n_scopes;
    walker w = { .st = st };
    /* The schedules belong to the analysis from the start (rule 8: one
     * per scope, for the runtime), so a failure frees them with it. */
    a->plans = w.plans = oac_calloc(st->ctx, ns, sizeof *w.plans);
    if (w.plans)
        a->n_plans = ns;
    w.buf_of = oac_calloc(st->ctx, nv ? nv : 1, sizeof *w.buf_of);
    w.memo = oac_calloc(st->ctx, ns, sizeof *w.memo);
    w.memo_peak = oac_calloc(st->ctx, ns, sizeof *w.memo_peak);
    w.memo_end = oac_calloc(st->ctx, ns, sizeof *w.memo_end);
    int rc = w.plans && w.buf_of && w.memo && w.memo_peak && w.memo_end
             ? build(&w, st->graphs->scopes[0], 0, &w.plans[0])
             : oac_err(st->ctx, OAC_ENOMEM, "out of memory");
    /* Scopes the main graph's walk did not reach (a Loop known not to
     * iterate, an uncalled function) get their schedule too: the runtime
     * frees by the plan in every scope it runs. */
    for (size_t si = 1; !rc && si < ns; si++) {
        oac_opt_u64 pk, end;
        if (!w.memo[si])
            rc = body_peak(&w, st->graphs->scopes[si], st->graphs->scopes[si]->depth,
                           &pk, &end);
    }
    oac_dealloc(st->ctx, w.buf_of);
    oac_dealloc(st->ctx, w.memo);
    oac_dealloc(st->ctx, w.memo_peak);
    oac_dealloc(st->ctx, w.memo_end);
    if (rc)
        return rc;
    a->plan = w.plans[0]->totals;
    return OAC_OK;
}

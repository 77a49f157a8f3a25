/* run/budget.c: the memory budget of a run (contract section 8,
 * `memory-budget`; oac_run_opts.max_memory).
 *
 * Owns oac_membudget, the one counter every allocator of a run takes its
 * bytes from (run/alloc.c invariant 5: node outputs, workspace and pages,
 * and the storage the contract's figures exclude: bindings, input data,
 * each session's copy of it, initializers read for the run), and the
 * refusal before anything is allocated: the run's known need, from the
 * analysis at the run's dims, compared with the budget.
 *
 * The known need (oac_rt_budget_precheck) is a lower bound of what the
 * run will hold at its peak, so a refusal is never wrong:
 *  - bindings: the bytes of each READ_WRITE tensor input (one storage,
 *    shared by every session) and the pages of a paged one's --input;
 *  - input data: each other tensor input, once per session (its copy),
 *    and once more for the run when it has data (an --input file or an
 *    initializer default);
 *  - per running session (all of them, or one when bindings make the
 *    others lose the race): the main graph's initializers that a node
 *    reads or the graph returns, plus the plan's peak at the run's dims,
 *    where the transient of a Loop whose trip count or condition is an
 *    input the check did not know is left out (the run may skip it).
 * A size the analysis does not know adds nothing.  What the pre-check
 * leaves out (bodies' own initializers, pages created after the first,
 * what an unknown size turns out to be) is refused when it is allocated.
 *
 * Invariants:
 *  1. used is changed only by atomic compare-and-swap (take) and
 *     subtraction (give), so the sessions of one run (threads) share one
 *     budget; take never lets used pass limit, not even for a moment.
 *  2. The library never picks a limit: 0 (the default of oac_run_opts)
 *     is no budget.  The command-line tool picks its default.
 *  3. A refusal names the budget and the need, and the node or value
 *     that needs most: memory-budget, never unsupported-operator.
 */
#include <inttypes.h>
#include <string.h>

#include "run/exec.h"
#include "check/shapes.h"

void oac_membudget_init(oac_membudget *b, uint64_t limit)
{
    b->limit = limit;
    atomic_init(&b->used, 0);
    atomic_init(&b->peak, 0);
}

int oac_membudget_take(oac_membudget *b, oac_ctx *ctx, uint64_t n)
{
    if (!b)
        return OAC_OK;
    uint64_t cur = atomic_load(&b->used), next;
    do {
        if (oac_add_overflow_u64(cur, n, &next) || (b->limit && next > b->limit))
            return oac_err(ctx, OAC_EBUDGET,
                           "%" PRIu64 " more bytes would bring the run's memory to "
                           "%" PRIu64 "%s bytes, above its budget of %" PRIu64
                           " bytes (--max-memory)", n,
                           next < cur ? UINT64_MAX : next, next < cur ? "+" : "",
                           b->limit);
    } while (!atomic_compare_exchange_weak(&b->used, &cur, next));
    uint64_t p = atomic_load(&b->peak);
    while (next > p && !atomic_compare_exchange_weak(&b->peak, &p, next))
        ;
    return OAC_OK;
}

void oac_membudget_give(oac_membudget *b, uint64_t n)
{
    if (b)
        atomic_fetch_sub(&b->used, n);
}

/* ---- the known need ------------------------------------------------- */

typedef struct need {
    uint64_t total;
    bool overflow;
    /* The largest single part, named in the refusal. */
    uint64_t top;
    const oac_value *top_value;     /* a graph input or initializer, or */
    long top_node;                  /* the main-graph node at the peak */
} need;

static void add(need *n, uint64_t bytes, uint64_t times)
{
    uint64_t b;
    if (oac_mul_overflow_u64(bytes, times, &b) ||
        oac_add_overflow_u64(n->total, b, &n->total))
        n->overflow = true;
}

static void top(need *n, uint64_t bytes, const oac_value *v, long node)
{
    if (bytes <= n->top)
        return;
    n->top = bytes;
    n->top_value = v;
    n->top_node = node;
}

/* Bytes of main-graph tensor value v at the check's dims. */
static bool value_bytes(const rt_run *r, const oac_value *v, uint64_t *out)
{
    const oac_shapes *sh = r->an->shapes;
    return sh && oac_shapes_bytes(sh, oac_shapes_value(sh, v->id), out);
}

static bool is_read_write(const oac_value *v)
{
    const Onnx__ValueInfoProto *vi = oac_value_vi(v);
    return vi && vi->has_access &&
           vi->access == ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE;
}

static bool has_input_file(const rt_run *r, const char *name)
{
    for (size_t i = 0; i < r->opts->n_inputs; i++)
        if (r->opts->inputs[i].name && !strcmp(r->opts->inputs[i].name, name))
            return true;
    return false;
}

/* The pages of a paged cache's --input, as the check read them. */
static uint64_t input_pages(const rt_run *r, const char *name)
{
    const oac_pbfile *f = oac_analysis_input(r->an, name);
    const Onnx__SequenceProto *sp = NULL;
    if (f && f->msg && f->msg->descriptor == &onnx__sequence_proto__descriptor)
        sp = (const Onnx__SequenceProto *)f->msg;
    else if (f && f->msg && f->msg->descriptor == &onnx__map_proto__descriptor)
        sp = ((const Onnx__MapProto *)f->msg)->values;   /* a Map cache's pages */
    if (!sp)
        return 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < sp->n_quantized_tensor_values; i++) {
        oac_payload pl;
        if (oac_qtensor_payload(sp->quantized_tensor_values[i], &pl) &&
            oac_add_overflow_u64(sum, pl.len, &sum))
            return UINT64_MAX;
    }
    return sum;
}

/* The plan's peak with the transients the run may skip left out (file
 * comment); the step reaching it in *at.  False when a live figure is
 * unknown. */
static bool plan_peak(const rt_run *r, uint64_t *peak, long *at)
{
    const oac_plan_sched *p = oac_analysis_schedule(r->an);
    const oac_scope_order *order = oac_sched_scope(r->sched, r->main->index);
    *peak = 0;
    *at = -1;
    if (!p)
        return false;
    for (size_t i = 0; i < p->n_steps; i++) {
        oac_opt_u64 live = oac_plan_step_live(p, i);
        if (!live.known)
            return *at >= 0;
        const oac_plan_extra *x = oac_plan_step_extra(p, i);
        uint64_t here = live.value;
        if (x->workspace.known && oac_add_overflow_u64(here, x->workspace.value, &here))
            here = UINT64_MAX;
        if (x->loop_trip_input < 0 && x->loop_cond_input < 0 && x->transient.known &&
            oac_add_overflow_u64(here, x->transient.value, &here))
            here = UINT64_MAX;
        if (here > *peak || *at < 0) {
            *peak = here;
            *at = (long)oac_sched_node(order, i);
        }
    }
    return *at >= 0;
}

int oac_rt_budget_precheck(rt_run *r, unsigned n_sess, oac_diags *diags)
{
    if (!r->budget.limit)
        return OAC_OK;
    const oac_scope *m = r->main;
    need n = { .top_node = -1 };
    size_t n_bind = 0;
    for (size_t i = 0; i < m->n_inputs; i++) {
        const oac_value *v = m->inputs[i];
        if (!v || v->scope != m)
            continue;
        n_bind += is_read_write(v);
        uint64_t b;
        if (!value_bytes(r, v, &b)) {
            if (is_read_write(v) && (b = input_pages(r, v->name))) {
                add(&n, b, 1);
                top(&n, b, v, -1);
            }
            continue;
        }
        if (is_read_write(v)) {
            add(&n, b, 1);
            top(&n, b, v, -1);
            continue;
        }
        bool data = has_input_file(r, v->name) || oac_value_init(v);
        add(&n, b, n_sess + data);
        top(&n, b, v, -1);
    }
    /* Invariant: losers of the binding race run nothing. */
    uint64_t running = n_bind ? 1 : n_sess;
    for (size_t l = 0; l < m->n_values; l++) {
        const oac_value *v = &m->values_block[l];
        uint64_t b;
        if (v->kind != OAC_VAL_INITIALIZER || (!v->n_uses && v->output_index < 0) ||
            !value_bytes(r, v, &b))
            continue;
        add(&n, b, running);
        top(&n, b, v, -1);
    }
    uint64_t peak;
    long at;
    if (plan_peak(r, &peak, &at)) {
        add(&n, peak, running);
        top(&n, peak, NULL, at);
    }
    if (!n.overflow && n.total <= r->budget.limit)
        return OAC_OK;

    char loc[OAC_RT_LOC_MAX];
    const oac_node *nd = n.top_node >= 0 ? oac_scope_node(m, n.top_node) : NULL;
    oac_where w = { .graph = oac_rt_scope_name(m) };
    char what[512];
    if (nd) {
        w.node = nd->display;
        w.op_type = nd->proto->op_type;
        w.location = oac_node_loc(loc, sizeof loc, m, n.top_node, NULL);
        snprintf(what, sizeof what, "the planned peak of %" PRIu64 " bytes, "
                 "reached at node '%s'", n.top, nd->display);
    } else if (n.top_value) {
        w.value = n.top_value->name;
        snprintf(what, sizeof what, "%s '%s' of %" PRIu64 " bytes",
                 n.top_value->kind == OAC_VAL_INITIALIZER ? "initializer" : "input",
                 n.top_value->name, n.top);
    } else {
        snprintf(what, sizeof what, "its data");
    }
    int rc = oac_diag_add(diags, OAC_MEMORY_BUDGET, &w,
                          "the run needs at least %" PRIu64 "%s bytes before its first "
                          "step (bindings, input data, initializers and the planned "
                          "peak%s), above the memory budget of %" PRIu64 " bytes "
                          "(--max-memory); the largest part is %s; nothing was "
                          "allocated",
                          n.overflow ? UINT64_MAX : n.total, n.overflow ? "+" : "",
                          running > 1 ? " of every session" : "", r->budget.limit,
                          what);
    return rc ? rc : OAC_ERUNTIME;
}

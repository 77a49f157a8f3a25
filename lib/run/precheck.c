/* run/precheck.c: the capacity pre-check of a step (contract section 8:
 * "Before a step writes anything, every cache update's position and
 * length are checked against its capacity: an overflow is
 * capacity-overflow on the update node and the step executes no node, so
 * every bound cache keeps its contents").
 *
 * Owns the run-time form of the capacity rules of sections 2 and 6,
 * applied to the main graph's updates before a step runs any node:
 *  - CacheUpdate, TensorScatter (linear: write_indices[b] + length <=
 *    capacity; circular: length <= capacity and write_indices >= 0;
 *    none: 0) and PagedCacheUpdate (position + length <= page_size,
 *    0 <= page_id <= number of pages): the rows flagged
 *    OAC_OPF_CACHE_UPDATE, in place or not;
 *  - the section-6 rows whose .length is OAC_LEN_VALUE (e.g.
 *    GroupQueryAttention's total_sequence_length against the shared
 *    buffer), for the pairs that are one buffer, declared or not
 *    (oac_pair_one_buffer, the check's rule too): the
 *    length is the value of .length.port + .plus + dim .seq_axis of
 *    .seq_port, the capacity each such pair's past on .axis_default.
 *    Every such rule gives the total length after the update; when the
 *    port's value is computed by nodes (a GenAI export derives
 *    total_sequence_length from attention_mask) and the run drives an
 *    input carrying the total (run/generate.h), the loop's total is used.
 *  - a block table over fixed pools (.blocks: PagedAttention): every
 *    position a sequence holds after the step needs a block the table
 *    maps inside the pool (section 10; the pool never grows).
 * Ports, axes and rules come from the operator table's row
 * (.position_port, .values_port, .page_id_port, .axis_attr,
 * .axis_default, .enum_attr, .length, .pairs), never from op_type; the
 * verdict and its words are the check's own (rulebook.h).
 *
 * What is known before a step: the value of a main-graph input (the
 * step's own: positions, driven decoder inputs, --input data), an
 * initializer or a Constant (the analysis's known value); the dims of a
 * main-graph input (its value this step), else the static dims the
 * analysis inferred, a symbol resolved by the run's --dim, the
 * analysis's binding, or the step's own numbers for the symbols the run
 * drives (run/generate.c).  An update whose position, length or capacity is
 * not known so (a position computed by nodes, an update inside an If,
 * Loop or function body) is left to its kernel, which checks the same
 * rule before it writes (kernels/cache.c, kernels/paged.c; the man page
 * says so).
 *
 * Invariants:
 *  1. Nothing here executes a node or writes a value: the pre-check only
 *     reads inputs, the analysis and the step's numbers.
 *  2. The first overflowing update in the schedule's order is reported
 *     (one capacity-overflow, at that node, naming the cache, position,
 *     length and capacity), and the step does not start.
 *  3. Sums are overflow-checked: a sum that does not fit in int64
 *     is past every capacity.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "run/generate.h"
#include "run/exec.h"
#include "check/shapes_store.h"
#include "rulebook.h"

/* At most this many integers of a position are read (write_indices has
 * one per batch row). */
#define PRE_MAX_INTS 4096

typedef struct pre {
    oac_session *s;
    rt_run *r;
    const oac_scope *m;
    const oac_shapes *sh;          /* the dims the pre-check reads */
    const oac_shapes *known;       /* the analysis's known values */
    long node;
    const oac_node *nd;
    int64_t ints[PRE_MAX_INTS];
} pre;

/* The main frame's current value of main-graph input v, or NULL. */
static const oac_rtval *input_value(const pre *p, const oac_value *v)
{
    if (!v || v->scope != p->m || v->kind != OAC_VAL_INPUT)
        return NULL;
    const oac_rtval *x = p->s->main->vals[v->id - p->m->first_id];
    return x && x->kind != OAC_RTV_NONE ? x : NULL;
}

/* The integers v holds before the step: a main-graph input's, or an
 * initializer's or a Constant's known value.  False when not known (or
 * longer than PRE_MAX_INTS). */
static bool pre_ints(pre *p, const oac_value *v, size_t *n)
{
    *n = 0;
    if (!v)
        return false;
    const oac_rtval *x = input_value(p, v);
    if (x) {
        const oac_tensor *t = &x->t;
        size_t w = t->elem_type == OAC_T_INT64 ? 8 : t->elem_type == OAC_T_INT32 ? 4 : 0;
        if (x->kind != OAC_RTV_TENSOR || !w || t->bytes / w > PRE_MAX_INTS)
            return false;
        *n = t->bytes / w;
        for (size_t i = 0; i < *n; i++) {
            if (w == 8) {
                memcpy(&p->ints[i], (const uint8_t *)t->data + 8 * i, 8);
            } else {
                int32_t y;
                memcpy(&y, (const uint8_t *)t->data + 4 * i, 4);
                p->ints[i] = y;
            }
        }
        return true;
    }
    bool constant = v->kind == OAC_VAL_INITIALIZER ||
                    (v->kind == OAC_VAL_NODE_OUTPUT &&
                     oac_op_has(v->scope->nodes[v->producer].op, OAC_OPF_CONSTANT));
    const oac_known *k = constant && p->known ? oac_shapes_known(p->known, v->id) : NULL;
    if (!k || k->n > PRE_MAX_INTS)
        return false;
    *n = k->n;
    memcpy(p->ints, k->v, k->n * sizeof *k->v);
    return true;
}

/* The one integer of a scalar (shape [] or [1]) before the step. */
static bool pre_scalar(pre *p, const oac_value *v, int64_t *out)
{
    size_t n;
    if (!pre_ints(p, v, &n) || n != 1)
        return false;
    *out = p->ints[0];
    return true;
}

/* The rank of v before the step, or -1. */
static int pre_rank(const pre *p, const oac_value *v)
{
    const oac_rtval *x = input_value(p, v);
    if (x)
        return x->kind == OAC_RTV_TENSOR ? x->t.rank : 4;
    const oac_vshape *vs = v && p->sh ? oac_shapes_value(p->sh, v->id) : NULL;
    return vs && vs->kind == OAC_VK_TENSOR ? vs->rank : -1;
}

/* Dimension `axis` (normalized) of tensor v before the step, or -1. */
static int64_t pre_dim(const pre *p, const oac_value *v, int64_t axis)
{
    const oac_rtval *x = input_value(p, v);
    if (x && x->kind == OAC_RTV_TENSOR)
        return axis >= 0 && axis < x->t.rank ? x->t.dims[axis] : -1;
    const oac_vshape *vs = v && p->sh ? oac_shapes_value(p->sh, v->id) : NULL;
    if (x || !vs || vs->kind != OAC_VK_TENSOR || axis < 0 || axis >= vs->rank)
        return -1;
    oac_dimref d = vs->dims[axis];
    if (!OAC_DIM_IS_SYM(d))
        return d;
    /* A symbol the run drives has this step's number, whatever the
     * analysis bound it to (its first step's). */
    const char *name = oac_shapes_dim_name(p->sh, d);
    int64_t val = name ? oac_decoder_sym(p->s->run->dec, name, p->s->past, p->s->n_new) : -1;
    return val >= 0 ? val : oac_shapes_sym_value(p->sh, d);
}

static const oac_value *port(const pre *p, int k)
{
    return k >= 0 ? oac_node_input(p->m, p->node, (size_t)k) : NULL;
}

/* Report the overflow at the node (invariant 2). */
static int overflow(pre *p, const oac_value *cache, const char *fmt, ...)
    OAC_PRINTF(3, 4);
static int overflow(pre *p, const oac_value *cache, const char *fmt, ...)
{
    char loc[OAC_RT_LOC_MAX], msg[512];
    oac_node_loc(loc, sizeof loc, p->m, p->node, NULL);
    oac_where w = { .graph = oac_rt_scope_name(p->m), .node = p->nd->display,
                    .op_type = p->nd->proto->op_type,
                    .value = cache ? cache->name : NULL, .location = loc };
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (oac_diag_add(p->s->diags, OAC_CAPACITY_OVERFLOW, &w,
                     "node '%s': %s; checked before the step, which ran no node: "
                     "every cache keeps its contents", p->nd->display, msg))
        return OAC_ENOMEM;
    p->s->stop_node = p->node;
    return OAC_ERUNTIME;
}

/* The capacity rule's verdict on the update (rulebook.h), reported in
 * its one wording when it does not fit. */
static int judge(pre *p, const oac_value *cache, oac_cap_case *k)
{
    k->verdict = oac_capacity_rule(k->pos, k->len, k->cap, k->mode);
    if (k->verdict == OAC_CAP_FITS || k->verdict == OAC_CAP_UNKNOWN)
        return OAC_OK;
    char msg[384];
    k->cache = cache ? cache->name : NULL;
    oac_capacity_say(msg, sizeof msg, k);
    return overflow(p, cache, "%s", msg);
}

/* The capacity axis of a section-2 update over a cache of rank `rank`,
 * or -1. */
static int64_t update_axis(const pre *p, int rank)
{
    const oac_op *op = p->nd->op;
    int64_t axis = op->axis_attr ? oac_attr_int(p->nd->proto, op->axis_attr, op->axis_default)
                                 : op->axis_default;
    return oac_capacity_axis(axis, rank);
}

/* CacheUpdate and TensorScatter: the position (or write_indices) port,
 * the values' length on the capacity axis, the cache's dim there.  A
 * row with modes (.enum_attr, TensorScatter) writes at one position per
 * batch row, named as the check names them (write_indices[b]). */
static int check_dense(pre *p)
{
    const oac_op *op = p->nd->op;
    const oac_value *cache = port(p, 0), *vals = port(p, op->values_port);
    int64_t axis = update_axis(p, pre_rank(p, cache));
    int64_t cap = axis >= 0 ? pre_dim(p, cache, axis) : -1;
    int64_t len = axis >= 0 ? pre_dim(p, vals, axis) : -1;
    if (cap < 0 || len < 0)
        return OAC_OK;                 /* the kernel checks */
    oac_cap_mode mode = oac_capacity_mode(op, p->nd->proto);
    const oac_value *pv = port(p, op->position_port);
    size_t n = 1;
    if (!pv) {
        if (op->position_port >= 0 && (size_t)op->position_port < p->nd->proto->n_input &&
            p->nd->proto->input[op->position_port][0])
            return OAC_OK;             /* named but unknown: the kernel's */
        p->ints[0] = 0;                /* TensorScatter without write_indices */
    } else if (!pre_ints(p, pv, &n) || !n) {
        return OAC_OK;
    }
    /* Several positions are write_indices, one per batch row; any other
     * count is an operand the kernel refuses. */
    if (n > 1 && pre_dim(p, cache, 0) != (int64_t)n)
        return OAC_OK;
    bool rows = pv && op->enum_attr;
    for (size_t b = 0; b < n; b++) {
        char row[48] = "";
        if (rows)
            snprintf(row, sizeof row, "[%zu] = ", b);
        oac_cap_case k = { .mode = mode, .what = rows ? "write_indices" : "position",
                           .row = row, .pos_known = true, .pos = p->ints[b],
                           .len = len, .cap = cap };
        int rc = judge(p, cache, &k);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

/* PagedCacheUpdate: position + length within the page, page_id within
 * the pages (== their number creates one). */
static int check_paged(pre *p)
{
    const oac_op *op = p->nd->op;
    const oac_value *cache = port(p, 0);
    const oac_rtval *c = input_value(p, cache);
    if (!c || c->kind != OAC_RTV_PAGED)
        return OAC_OK;
    int64_t page, pos, len = pre_dim(p, port(p, op->values_port), 2);
    if (pre_scalar(p, port(p, op->page_id_port), &page) &&
        (page < 0 || (uint64_t)page > c->p.n_pages))
        return overflow(p, cache, "page_id %" PRId64 " is outside the %zu pages of '%s'",
                        page, c->p.n_pages, cache->name);
    if (len < 0 || !pre_scalar(p, port(p, op->position_port), &pos))
        return OAC_OK;
    oac_cap_case k = { .what = "position", .row = "", .pos_known = true, .pos = pos,
                       .len = len, .cap = c->p.page_dims[2] };
    return judge(p, cache, &k);
}

/* A row with a block table over fixed pools (.blocks, PagedAttention):
 * every position a sequence holds after the step, [0, past + new), must
 * have a block the table maps inside the pool (contract section 10: the
 * pool never grows).  The past lengths and query offsets are the
 * inputs' values when known before the step, else (computed by nodes
 * from driven decoder inputs) the loop's total for every sequence. */
static int check_blocks(pre *p)
{
    const oac_op *op = p->nd->op;
    const oac_value *pool = port(p, op->pairs[0].in), *tv = port(p, op->blocks.table);
    int64_t nb = pre_dim(p, pool, 0), bs = pre_dim(p, pool, 1);
    size_t n;
    if (nb < 0 || bs < 1 || pre_rank(p, tv) != 2 || !pre_ints(p, tv, &n) || n == 0)
        return OAC_OK;
    int64_t rows = pre_dim(p, tv, 0), w = rows > 0 ? (int64_t)n / rows : 0;
    if (rows < 1 || w * rows != (int64_t)n || rows > PRE_MAX_INTS / 4)
        return OAC_OK;
    int64_t tab[PRE_MAX_INTS / 2], totals[PRE_MAX_INTS / 4];
    if ((size_t)n > sizeof tab / sizeof tab[0])
        return OAC_OK;
    memcpy(tab, p->ints, n * sizeof *tab);
    size_t np, nc;
    int64_t past[PRE_MAX_INTS / 4];
    if (pre_ints(p, port(p, op->blocks.past), &np) && np == (size_t)rows) {
        memcpy(past, p->ints, np * sizeof *past);
        if (!pre_ints(p, port(p, op->blocks.cu), &nc) || nc != np + 1)
            return OAC_OK;
        for (int64_t b = 0; b < rows; b++) {
            int64_t n_new;
            /* A decreasing or overflowing row is the kernel's to refuse. */
            if (oac_sub_overflow_i64(p->ints[b + 1], p->ints[b], &n_new) || n_new < 0)
                return OAC_OK;
            if (oac_add_overflow_i64(past[b], n_new, &totals[b]))
                totals[b] = INT64_MAX;
        }
    } else if (oac_decoder_feeds_total(p->r->dec)) {
        for (int64_t b = 0; b < rows; b++)
            totals[b] = p->s->past + p->s->n_new;
    } else {
        return OAC_OK;
    }
    for (int64_t b = 0; b < rows; b++) {
        int64_t need = totals[b] <= 0 ? 0 : (totals[b] - 1) / bs + 1;
        for (int64_t i = 0; i < need; i++) {
            if (i >= w || tab[b * w + i] < 0)
                return overflow(p, pool, "sequence %" PRId64 " reaches position %" PRId64
                                " whose block %" PRId64 " '%s' does not map (%" PRId64
                                " mapped); the pool '%s' of %" PRId64 " blocks of %" PRId64
                                " does not grow", b, i * bs, i, tv->name, i, pool->name,
                                nb, bs);
            if (tab[b * w + i] >= nb)
                return overflow(p, pool, "sequence %" PRId64 ": '%s' maps position %" PRId64
                                " to block %" PRId64 ", outside the pool '%s' of %" PRId64
                                " blocks", b, tv->name, i * bs, tab[b * w + i], pool->name,
                                nb);
        }
    }
    return OAC_OK;
}

/* Is pair k of the node's row one buffer this step (the rulebook's
 * oac_pair_one_buffer, as the check asks it): declared, or in place as
 * configured with the present as long as the past on the capacity axis
 * (their numbers this step, else the analysis's). */
static bool one_buffer(const pre *p, size_t k)
{
    const oac_op *op = p->nd->op;
    oac_op_pair pr = op->pairs[k];
    bool declared = oac_node_alias_in(p->m, p->node, (size_t)pr.out) == pr.in;
    int64_t a = pre_dim(p, port(p, pr.in), op->axis_default);
    int64_t b = pre_dim(p, oac_node_output(p->m, p->node, (size_t)pr.out), op->axis_default);
    int same = a >= 0 && b >= 0 ? a == b : -1;
    return oac_pair_one_buffer(op, p->nd->proto, pr.in, pr.out, declared, same) ==
           OAC_SHARE_YES;
}

/* A section-6 row's length rule, for the pairs that are one buffer
 * (one_buffer), annotated or not. */
static int check_length(pre *p)
{
    const oac_op *op = p->nd->op;
    const oac_op_length *L = &op->length;
    bool shared[OAC_OP_MAX_PAIRS], any = false;
    size_t n = op->n_pairs < OAC_OP_MAX_PAIRS ? op->n_pairs : OAC_OP_MAX_PAIRS;
    for (size_t k = 0; k < n; k++)
        any |= shared[k] = one_buffer(p, k);
    if (!any)
        return OAC_OK;
    /* The total after the update, as the check words it: the value +
     * the new positions (dim .seq_axis of .seq_port) + .plus. */
    const oac_value *vv = port(p, L->port), *sv = port(p, L->seq_port);
    int64_t val, seq = -1, news = L->plus;
    bool loop_total = false;
    if (pre_scalar(p, vv, &val)) {
        if (L->seq_port >= 0) {
            if ((seq = pre_dim(p, sv, L->seq_axis)) < 0)
                return OAC_OK;
            if (oac_add_overflow_i64(news, seq, &news))
                news = INT64_MAX;
        }
    } else if (oac_decoder_feeds_total(p->r->dec)) {
        /* Every row's length is the total after the update; computed by
         * nodes from the driven decoder inputs, it is the loop's. */
        val = p->s->past + p->s->n_new;
        news = 0;
        loop_total = true;
    } else {
        return OAC_OK;
    }
    char parts[256];
    oac_capacity_parts(parts, sizeof parts, L->port, vv ? vv->name : NULL, true, val,
                       seq, sv ? sv->name : NULL, loop_total ? 0 : (int)L->plus);
    if (loop_total) {
        size_t at = strlen(parts);
        snprintf(parts + at, sizeof parts - at, ", the generation loop's total length");
    }
    for (size_t k = 0; k < n; k++) {
        if (!shared[k])
            continue;
        const oac_value *past = port(p, op->pairs[k].in);
        int64_t cap = pre_dim(p, past, op->axis_default);
        if (cap < 0)
            continue;
        oac_cap_verdict v = oac_capacity_rule(val, news, cap, OAC_CAP_NORMAL);
        if (news == INT64_MAX && cap >= 0 && val >= 0)
            v = OAC_CAP_WRAPS;
        char msg[512];
        if (v == OAC_CAP_NEGATIVE) {
            char what[160];
            snprintf(what, sizeof what, "input %d '%s'", L->port, vv ? vv->name : "");
            oac_cap_case c = { .verdict = v, .what = what, .row = "= ", .pos_known = true,
                               .pos = val, .cap = cap, .cache = past->name };
            oac_capacity_say(msg, sizeof msg, &c);
        } else if (v == OAC_CAP_WRAPS || v == OAC_CAP_EXCEEDS) {
            oac_capacity_say_total(msg, sizeof msg, v, true, v == OAC_CAP_WRAPS ? 0 : val + news,
                                   parts, past->name, cap, (int)op->axis_default);
        } else {
            continue;
        }
        return overflow(p, past, "%s", msg);
    }
    return OAC_OK;
}

int oac_rt_precheck(oac_session *s)
{
    rt_run *r = s->run;
    pre *p = oac_alloc(s->ctx, sizeof *p);
    if (!p)
        return OAC_ENOMEM;
    p->s = s;
    p->r = r;
    p->m = r->main;
    p->sh = r->pre_shapes;
    p->known = r->an->shapes;
    const oac_scope_order *o = oac_sched_scope(r->sched, r->main->index);
    int rc = OAC_OK;
    for (size_t k = 0; !rc && k < r->main->n_nodes; k++) {
        p->node = (long)oac_sched_node(o, k);
        p->nd = &r->main->nodes[p->node];
        const oac_op *op = p->nd->op;
        if (!op || !r->fn[r->main->index][p->node])
            continue;
        if (op->blocks.table >= 0 && op->n_pairs)
            rc = check_blocks(p);
        else if (oac_op_has(op, OAC_OPF_PAGED))
            rc = check_paged(p);
        else if (oac_op_has(op, OAC_OPF_CACHE_UPDATE))
            rc = check_dense(p);
        else if (op->length.kind == OAC_LEN_VALUE && op->alias == OAC_AL_PAIRS)
            rc = check_length(p);
    }
    oac_dealloc(s->ctx, p);
    return rc;
}

/* check/capacity.c: position + update length <= capacity (oac_pass_capacity).
 *
 * Owns: capacity-overflow for CacheUpdate, TensorScatter and
 * PagedCacheUpdate, for the length rules of section 6's rows (the
 * length an update leaves against the past's capacity; indices inside
 * the data for the scatters), and the "capacity" entries of the
 * unchecked list.
 * Contract: section 2 (position < 0 or position + new_length > capacity
 * is an error, never a reallocation; TensorScatter linear rule; paged
 * capacity), section 3 ("TensorScatter without write_indices writes at
 * 0; in circular mode only update_seq_len <= max_seq_len and
 * write_indices >= 0 are checked.  For PagedCacheUpdate the capacity is
 * the page's page_size; a known negative page_id is capacity-overflow"),
 * section 6 (the last column of its table, "whenever the lengths are
 * known"; PagedAttention is listed unchecked).
 *
 * Invariants:
 *  1. Positions come only from known values (check/consts.c); dimensions from
 *     the ShapesContext at the dims known (declared, --dim, --input,
 *     unified through alias classes).
 *  2. A check that cannot be decided is listed with oac_unchecked_add
 *     (rule "capacity", the reason), never skipped silently.
 *  3. position + length is overflow-checked: a sum that does not fit in
 *     int64 is past every capacity and is reported, never wrapped.
 *  4. One finding per node and rule: the first offending batch row of
 *     write_indices is named.
 *  5. Which port is the position, the values, the page_id, and which
 *     attributes are the axis and the mode come from the operator table
 *     (ops.def: .axis_attr, .enum_attr), as does the row's rule (its
 *     .capacity, oac_capacity_*).  The verdict on a position, length and
 *     capacity, its wording and the axis's normalisation are the
 *     rulebook's (rulebook.h), which the run and the kernels share.
 *  6. A section-6 length rule applies to each pair of the node that is one
 *     buffer, annotated or not (pair_shared, the rulebook's
 *     oac_pair_one_buffer, which the run's pre-check asks too); an
 *     undeclared pair the file cannot tell is listed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check/checker.h"
#include "check/graph.h"
#include "op_fns.h"
#include "ops.h"
#include "check/shapes_store.h"
#include "rulebook.h"

/* What a capacity rule of a row (ops.def .capacity) sees of its node. */
typedef struct oac_cap {
    oac_check_state *st;
    const oac_shapes *sh;
    oac_scope *s;
    long i;
    const oac_node *nd;
    const oac_op *op;
    const char *cache;       /* name of input 0 */
} cap_ctx;

static int finding(cap_ctx *c, int port, const char *fmt, ...) OAC_PRINTF(3, 4);

static int finding(cap_ctx *c, int port, const char *fmt, ...)
{
    char buf[512], sfx[32], msg[1024];
    snprintf(sfx, sizeof sfx, "/input/%d", port);
    oac_where w = oac_where_node(c->s, c->i, c->cache, port >= 0 ? sfx : NULL,
                                 buf, sizeof buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return oac_scope_diag(c->st, c->s, OAC_CAPACITY_OVERFLOW, &w, "%s", msg);
}

static const oac_vshape *port_vs(const cap_ctx *c, int port, const char **name);

/* An undecided rule: why, and what would decide it (hint, may be "").
 * A run decides every capacity rule as it executes (oac_rt_precheck
 * before a step, the kernel before it writes), except run false. */
static int unchecked_run(cap_ctx *c, const char *why, const char *hint, bool run)
{
    oac_analysis *a = c->st->out;
    if (!a)
        return OAC_OK;
    int rc = *hint ? oac_unchecked_add(a, "capacity", c->s->name, c->nd->display,
                                       c->cache, "%s; %s", why, hint)
                   : oac_unchecked_add(a, "capacity", c->s->name, c->nd->display,
                                       c->cache, "%s", why);
    if (rc == OAC_OK)
        a->unchecked[a->n_unchecked - 1].run_decides = run;
    return rc;
}

static int unchecked_how(cap_ctx *c, const char *why, const char *hint)
{
    return unchecked_run(c, why, hint, true);
}

static int unchecked(cap_ctx *c, const char *why)
{
    return unchecked_how(c, why, "");
}

/* A value the rule needs is not known: a main-graph input is given with
 * --input; a value the model computes is known only when it runs. */
static int unchecked_value(cap_ctx *c, const char *why, int port)
{
    char hint[320] = "";
    oac_value *v = port >= 0 ? oac_node_input(c->s, c->i, (size_t)port) : NULL;
    if (v && v->kind == OAC_VAL_INPUT && c->s->kind == OAC_SCOPE_MAIN)
        snprintf(hint, sizeof hint, "--input %.200s=FILE.pb gives its value", v->name);
    else if (v)
        snprintf(hint, sizeof hint, "'%.200s' is computed by the model: run checks it "
                 "as it executes", v->name);
    return unchecked_how(c, why, hint);
}

/* A dimension the rule needs is not known (dim `axis` of input `port`):
 * --dim binds its dim_param. */
static int unchecked_dim(cap_ctx *c, const char *why, int port, int64_t axis)
{
    char hint[320] = "";
    const oac_vshape *vs = port_vs(c, port, NULL);
    const char *sym = vs && vs->rank > axis && axis >= 0
                      ? oac_shapes_dim_name(c->sh, vs->dims[axis]) : NULL;
    if (sym)
        snprintf(hint, sizeof hint, "--dim %.200s=N binds it", sym);
    return unchecked_how(c, why, hint);
}

static const oac_vshape *port_vs(const cap_ctx *c, int port, const char **name)
{
    if (name)
        *name = NULL;
    if (port < 0)
        return NULL;
    oac_value *v = oac_node_input(c->s, c->i, (size_t)port);
    if (!v)
        return NULL;
    if (name)
        *name = v->name;
    return oac_shapes_value(c->sh, v->id);
}

static const oac_known *port_known(const cap_ctx *c, int port)
{
    if (port < 0)
        return NULL;
    oac_value *v = oac_node_input(c->s, c->i, (size_t)port);
    return v ? oac_shapes_known(c->sh, v->id) : NULL;
}

static bool port_present(const cap_ctx *c, int port)
{
    const Onnx__NodeProto *n = c->nd->proto;
    return port >= 0 && (size_t)port < n->n_input && n->input[port] &&
           n->input[port][0];
}

/* Dimension `axis` (normalized) of v, or -1. */
static int64_t dim_at(const cap_ctx *c, const oac_vshape *v, int64_t axis)
{
    if (!v || v->rank < 0 || axis < 0 || axis >= v->rank)
        return -1;
    return oac_shapes_dim(c->sh, v->dims[axis]);
}

/* A verdict of the capacity rule (rulebook.h) as a finding at input
 * `port`, in the rule's one wording. */
static int verdict(cap_ctx *c, int port, const oac_cap_case *k)
{
    char msg[1024];
    if (k->verdict == OAC_CAP_FITS || k->verdict == OAC_CAP_UNKNOWN)
        return OAC_OK;
    oac_capacity_say(msg, sizeof msg, k);
    return finding(c, port, "node '%s': %s", c->nd->display, msg);
}

/* The rule for position pos (known), length len, capacity cap. */
static int check_one(cap_ctx *c, int port, const char *what, int64_t pos,
                     int64_t len, int64_t cap, const char *row)
{
    oac_cap_case k = { .verdict = oac_capacity_rule(pos, len, cap, OAC_CAP_NORMAL),
                       .what = what, .row = row, .pos_known = true, .pos = pos,
                       .len = len, .cap = cap, .cache = c->cache };
    return verdict(c, port, &k);
}

/* An update whose length alone is past the capacity overflows at any
 * position (a position is never negative): reported with the position
 * unknown (issue 10, item 4).  False when it fits at 0. */
static bool length_alone(cap_ctx *c, int port, const char *what, int64_t len,
                         int64_t cap, oac_cap_mode mode, int *rc)
{
    oac_cap_case k = { .verdict = oac_capacity_rule(0, len, cap, mode), .mode = mode,
                       .what = what, .row = "", .pos_known = mode == OAC_CAP_CIRCULAR,
                       .len = len, .cap = cap, .cache = c->cache };
    if (k.verdict != OAC_CAP_EXCEEDS)
        return false;
    *rc = verdict(c, port, &k);
    return true;
}

static int64_t axis_of(const cap_ctx *c, const oac_vshape *cache)
{
    int64_t axis = c->op->axis_default;
    if (c->op->axis_attr)
        axis = oac_attr_int(c->nd->proto, c->op->axis_attr, axis);
    /* Out of range is operand-invalid (check/shapes.c). */
    return cache ? oac_capacity_axis(axis, cache->rank) : -1;
}

int oac_capacity_cache_update(cap_ctx *c)
{
    const oac_vshape *cv = port_vs(c, 0, NULL);
    const oac_vshape *vv = port_vs(c, c->op->values_port, NULL);
    const oac_known *pk = port_known(c, c->op->position_port);
    int64_t axis = axis_of(c, cv);
    int rc;
    if (axis < 0)
        return unchecked(c, "the capacity axis is not known");
    int64_t cap = dim_at(c, cv, axis), len = dim_at(c, vv, axis);
    if (pk && pk->n == 1 && pk->v[0] < 0)
        return check_one(c, c->op->position_port, "position", pk->v[0], len,
                         cap, "");
    if ((!pk || pk->n != 1) &&
        length_alone(c, c->op->values_port, "position", len, cap, OAC_CAP_NORMAL, &rc))
        return rc;
    if (!pk || pk->n != 1)
        return unchecked_value(c, "position is not known", c->op->position_port);
    if (cap < 0)
        return unchecked_dim(c, "the capacity (cache dimension on the axis) is not known",
                             0, axis);
    if (len < 0)
        return unchecked_dim(c, "the update length is not known", c->op->values_port, axis);
    return check_one(c, c->op->position_port, "position", pk->v[0], len, cap, "");
}

int oac_capacity_tensor_scatter(cap_ctx *c)
{
    const oac_vshape *cv = port_vs(c, 0, NULL);
    const oac_vshape *uv = port_vs(c, c->op->values_port, NULL);
    int64_t axis = axis_of(c, cv);
    if (axis < 0)
        return unchecked(c, "the sequence axis is not known");
    int64_t max_len = dim_at(c, cv, axis), len = dim_at(c, uv, axis);
    bool circular = oac_capacity_mode(c->op, c->nd->proto) == OAC_CAP_CIRCULAR;
    int port = c->op->position_port;
    bool have_wi = port_present(c, port);
    const oac_known *wk = have_wi ? port_known(c, port) : NULL;
    int rc;
    if (circular) {
        /* Only update_seq_len <= max_seq_len and write_indices >= 0. */
        if (length_alone(c, c->op->values_port, "position", len, max_len,
                         OAC_CAP_CIRCULAR, &rc))
            return rc;
        if (max_len < 0 || len < 0)
            if ((rc = unchecked(c, "the update length or the capacity is not known")))
                return rc;
        if (have_wi && !wk)
            return unchecked_value(c, "write_indices are not known", port);
        for (size_t b = 0; wk && b < wk->n; b++)
            if (wk->v[b] < 0) {
                char row[48];
                snprintf(row, sizeof row, "[%zu] = ", b);
                return check_one(c, port, "write_indices", wk->v[b], len, max_len, row);
            }
        return OAC_OK;
    }
    /* linear: write_indices[b] + update_seq_len <= max_seq_len; no
     * write_indices means 0. */
    for (size_t b = 0; wk && b < wk->n; b++)
        if (wk->v[b] < 0) {
            char row[48];
            snprintf(row, sizeof row, "[%zu] = ", b);
            return check_one(c, port, "write_indices", wk->v[b], len, max_len, row);
        }
    if (have_wi && !wk && length_alone(c, c->op->values_port, "write_indices", len,
                                       max_len, OAC_CAP_NORMAL, &rc))
        return rc;
    if (have_wi && !wk)
        return unchecked_value(c, "write_indices are not known", port);
    if (max_len < 0)
        return unchecked_dim(c, "the capacity (max_seq_len) is not known", 0, axis);
    if (len < 0)
        return unchecked_dim(c, "the update length is not known", c->op->values_port, axis);
    if (!have_wi)
        return check_one(c, c->op->values_port, "position", 0, len, max_len, "");
    for (size_t b = 0; b < wk->n; b++) {
        if (oac_capacity_rule(wk->v[b], len, max_len, OAC_CAP_NORMAL) != OAC_CAP_FITS) {
            char row[48];
            snprintf(row, sizeof row, "[%zu] = ", b);
            return check_one(c, port, "write_indices", wk->v[b], len, max_len, row);
        }
    }
    return OAC_OK;
}

int oac_capacity_paged(cap_ctx *c)
{
    const oac_vshape *cv = port_vs(c, 0, NULL);
    const oac_vshape *vv = port_vs(c, c->op->values_port, NULL);
    const oac_known *pg = port_known(c, c->op->page_id_port);
    const oac_known *pk = port_known(c, c->op->position_port);
    /* Pages are [2, heads, page_size, head_size]: capacity on axis 2. */
    int64_t cap = cv && cv->rank == 4 ? dim_at(c, cv, 2) : -1;
    int64_t len = vv && vv->rank == 4 ? dim_at(c, vv, 2) : -1;
    int rc;
    if (pg && pg->n == 1 && pg->v[0] < 0) {
        if ((rc = finding(c, c->op->page_id_port,
                          "node '%s': page_id %" PRId64 " is negative (cache '%s')",
                          c->nd->display, pg->v[0], c->cache)))
            return rc;
    } else if (!pg || pg->n != 1) {
        if ((rc = unchecked_value(c, "page_id is not known", c->op->page_id_port)))
            return rc;
    }
    /* A known page_id >= 0 beyond the end depends on the run's page count
     * (contract 2: a run-time capacity-overflow), never decidable here. */
    if (pk && pk->n == 1 && pk->v[0] < 0)
        return check_one(c, c->op->position_port, "position", pk->v[0], len, cap, "");
    if ((!pk || pk->n != 1) &&
        length_alone(c, c->op->values_port, "position", len, cap, OAC_CAP_NORMAL, &rc))
        return rc;
    if (!pk || pk->n != 1)
        return unchecked_value(c, "position is not known", c->op->position_port);
    if (cap < 0)
        return unchecked_dim(c, "the page size is not known", 0, 2);
    if (len < 0)
        return unchecked_dim(c, "the update length is not known", c->op->values_port, 2);
    return check_one(c, c->op->position_port, "position", pk->v[0], len, cap, "");
}

/* Contract 11: the pages a Sequence cache value holds when the check can
 * tell, else -1: its root's --input pages, plus one for each
 * PagedCacheUpdate on the way whose known page_id creates a page. */
static int64_t pages_held(const cap_ctx *c, const oac_value *v, int depth)
{
    if (!v || depth > OAC_MAX_DEPTH)
        return -1;
    if (v->producer < 0) {
        const oac_pbfile *f = v->kind == OAC_VAL_INPUT && v->scope == c->st->graphs->scopes[0]
            ? oac_analysis_input(c->st->out, v->name) : NULL;
        if (!f || !f->msg || f->msg->descriptor != &onnx__sequence_proto__descriptor)
            return -1;
        return (int64_t)((const Onnx__SequenceProto *)f->msg)->n_quantized_tensor_values;
    }
    const oac_node *nd = &v->scope->nodes[v->producer];
    if (!oac_op_paged_update(nd->op) || v->port != 0)
        return -1;
    int64_t before = pages_held(c, oac_node_input(v->scope, v->producer, 0), depth + 1);
    oac_value *pg = oac_node_input(v->scope, v->producer, (size_t)nd->op->page_id_port);
    const oac_known *k = pg ? oac_shapes_known(c->sh, pg->id) : NULL;
    if (before < 0 || !k || k->n != 1)
        return -1;
    return k->v[0] == before ? before + 1 : before;
}

/* PagedCacheAttention: a known length within the positions the cache's
 * pages hold (page_size each); the run refuses an absent page itself. */
int oac_capacity_paged_attention(cap_ctx *c)
{
    const char *cname = NULL;
    const oac_vshape *cv = port_vs(c, 1, &cname);
    c->cache = cname ? cname : c->cache;
    const oac_known *lk = port_known(c, 2);
    if (!lk || lk->n != 1)
        return unchecked(c, "length is not known");
    int64_t len = lk->v[0];
    int64_t ps = cv && cv->rank == 4 ? dim_at(c, cv, 2) : -1;
    if (len < 0)
        return finding(c, 2, "node '%s': length %" PRId64 " is negative (cache '%s')",
                       c->nd->display, len, c->cache);
    if (cv && cv->kind == OAC_VK_MAP)
        return unchecked(c, "a Map cache's page ids are its keys");
    int64_t n = pages_held(c, oac_node_input(c->s, c->i, 1), 0);
    if (n < 0)
        return unchecked(c, "the number of pages the cache holds is not known");
    if (ps < 0)
        return unchecked(c, "the page size is not known");
    int64_t held;
    /* The one capacity rule (rulebook.h): length positions from 0. */
    if (!oac_mul_overflow_i64(n, ps, &held) &&
        oac_capacity_rule(0, len, held, OAC_CAP_NORMAL) == OAC_CAP_EXCEEDS)
        return finding(c, 2, "node '%s': length %" PRId64 " exceeds the %" PRId64
                       " positions the %" PRId64 " pages of '%s' hold (page_size %"
                       PRId64 ")", c->nd->display, len, held, n, c->cache, ps);
    return OAC_OK;
}

/* ---- section 6: the rows' length rules ---------------------------------- */

/* Are dims a and b the same dimension: 1 (the same number, or the same
 * dim_param), 0 (two different numbers), -1 (neither tells). */
static int same_dim(const cap_ctx *c, oac_dimref a, oac_dimref b)
{
    int64_t x = oac_shapes_dim(c->sh, a), y = oac_shapes_dim(c->sh, b);
    if (x >= 0 && y >= 0)
        return x == y;
    const char *na = oac_shapes_dim_name(c->sh, a), *nb = oac_shapes_dim_name(c->sh, b);
    if (a == b || (na && nb && *na && !strcmp(na, nb)))
        return 1;
    return -1;
}

/* Pair p of the row, one buffer on this node (oac_pair_one_buffer, the
 * rulebook's): declared when output_alias resolved to it (a refused one
 * was cleared by the ports pass); the present's length on the capacity
 * axis, declared else inferred, against the past's. */
static oac_share pair_shared(const cap_ctx *c, oac_op_pair p)
{
    const Onnx__NodeProto *np = c->nd->proto;
    bool declared = c->nd->alias_in && (size_t)p.out < np->n_output &&
                    c->nd->alias_in[p.out] == p.in;
    const oac_vshape *pv = port_vs(c, p.in, NULL);
    const oac_value *out = oac_node_output(c->s, c->i, (size_t)p.out);
    const oac_vshape *qv = out ? oac_shapes_value(c->sh, out->id) : NULL;
    int64_t axis = c->op->axis_default;
    int same = !pv || !qv || pv->rank <= axis || qv->rank <= axis
                   ? -1 : same_dim(c, pv->dims[axis], qv->dims[axis]);
    return oac_pair_one_buffer(c->op, np, p.in, p.out, declared, same);
}

/* The row's .length (OAC_LEN_VALUE): the known value of input `port` +
 * dim seq_axis of input seq_port + plus, against dim .axis_default of
 * each shared pair's past.  An unknown value counts as 0 for a lower
 * bound (a length or position is never negative): a lower bound above
 * the capacity is an overflow too.  OAC_LEN_UNCHECKED is listed. */
int oac_capacity_length(cap_ctx *c)
{
    const oac_op *op = c->op;
    const oac_op_length *L = &op->length;
    oac_op_pair pairs[OAC_OP_MAX_PAIRS];
    size_t n = oac_op_pairs(op, c->nd->proto, pairs, OAC_OP_MAX_PAIRS);
    if (n > OAC_OP_MAX_PAIRS)
        n = OAC_OP_MAX_PAIRS;
    int rc = OAC_OK;
    for (size_t k = 0; k < n; k++) {
        oac_share one = pair_shared(c, pairs[k]);
        if (one == OAC_SHARE_NO)
            continue;
        const char *past = NULL;
        const oac_vshape *pv = port_vs(c, pairs[k].in, &past);
        c->cache = past ? past : c->nd->proto->input[pairs[k].in];
        if (one == OAC_SHARE_UNKNOWN) {
            const char *pres = c->nd->proto->output[pairs[k].out];
            char why[640];
            snprintf(why, sizeof why, "the file does not say whether '%.200s' and "
                     "'%.200s' are one buffer (a present as long as the past) or the "
                     "present grows", c->cache, pres);
            if ((rc = unchecked_how(c, why, "`onnx-alias-check annotate` states one "
                                            "buffer")))
                return rc;
            continue;
        }
        if (L->kind == OAC_LEN_UNCHECKED)
            return unchecked_run(c, "the length lives in the block table, which "
                                    "no rule reads", "", false);
        if (L->kind != OAC_LEN_VALUE)
            return OAC_OK;
        int64_t axis = op->axis_default;
        int64_t cap = pv && pv->rank > axis ? dim_at(c, pv, axis) : -1;

        /* The value input: known (its largest element), unknown, or
         * negative (reported as a negative position). */
        const char *vname = NULL;
        port_vs(c, L->port, &vname);
        const oac_known *vk = port_known(c, L->port);
        bool v_known = vk && vk->n >= 1;
        int64_t val = 0;
        for (size_t e = 0; v_known && e < vk->n; e++) {
            if (vk->v[e] < 0) {
                char what[160];
                snprintf(what, sizeof what, "input %d '%s'", L->port,
                         vname ? vname : "");
                return check_one(c, L->port, what, vk->v[e], 0, cap,
                                 "= ");
            }
            if (vk->v[e] > val)
                val = vk->v[e];
        }
        /* The new positions: dim seq_axis of seq_port. */
        const char *sname = NULL;
        const oac_vshape *sv = port_vs(c, L->seq_port, &sname);
        int64_t seq = L->seq_port >= 0 ? dim_at(c, sv, L->seq_axis) : 0;
        bool seq_known = L->seq_port < 0 || seq >= 0;

        /* The total after the update: the value + the new positions +
         * plus, against the capacity (rulebook.h). */
        int64_t news = seq_known ? seq : 0, lo = 0;
        bool wrapped = oac_add_overflow_i64(news, L->plus, &news);
        oac_cap_verdict v = cap < 0 ? OAC_CAP_UNKNOWN
                          : wrapped ? OAC_CAP_WRAPS
                                    : oac_capacity_rule(val, news, cap, OAC_CAP_NORMAL);
        bool exact = v_known && seq_known;
        if (v == OAC_CAP_WRAPS || v == OAC_CAP_EXCEEDS) {
            char parts[256], msg[1024];
            oac_capacity_parts(parts, sizeof parts, L->port, vname, v_known, val,
                               L->seq_port >= 0 && seq_known ? seq : -1, sname,
                               (int)L->plus);
            lo = val + news;
            oac_capacity_say_total(msg, sizeof msg, v, exact, lo, parts, c->cache, cap,
                                   (int)axis);
            int port = v_known || L->seq_port < 0 ? L->port : L->seq_port;
            return finding(c, port, "node '%s' (%s): %s", c->nd->display, op->op_type,
                           msg);
        }
        if (cap < 0)
            rc = unchecked_dim(c, "the capacity (the past's dimension on the "
                                  "capacity axis) is not known", pairs[k].in, axis);
        else if (!exact)
            rc = v_known ? unchecked_dim(c, "the number of new positions is not known",
                                         L->seq_port, L->seq_axis)
                         : unchecked_value(c, "the past or total sequence length is not "
                                              "known", L->port);
        if (rc)
            return rc;
    }
    return rc;
}

/* Known indices of input `port` inside [-s, s-1] per indexed dim:
 * ScatterElements along its axis, ScatterND per tuple component. */
static int indices_rule(cap_ctx *c, bool nd)
{
    const oac_op *op = c->op;
    const oac_vshape *dv = port_vs(c, 0, NULL);
    const char *iname = NULL;
    port_vs(c, op->length.port, &iname);
    const oac_known *ik = port_known(c, op->length.port);
    if (!ik)
        return unchecked(c, "the indices are not known");
    if (!dv || dv->rank < 0)
        return unchecked(c, "the data's shape is not known");
    int64_t axis = 0, k = 1;
    if (nd) {
        if (ik->rank < 1 || ik->shape[ik->rank - 1] < 1 ||
            ik->shape[ik->rank - 1] > dv->rank)
            return unchecked(c, "the indices' last dimension does not index the data");
        k = ik->shape[ik->rank - 1];
    } else {
        axis = oac_attr_int(c->nd->proto, op->axis_attr, op->axis_default);
        if (axis < -(int64_t)dv->rank || axis >= dv->rank)
            return unchecked(c, "the axis is out of range");
        if (axis < 0)
            axis += dv->rank;
    }
    for (size_t e = 0; e < ik->n; e++) {
        int64_t d = nd ? (int64_t)(e % (size_t)k) : axis;
        int64_t s = dim_at(c, dv, d);
        if (s < 0)
            continue;
        int64_t x = ik->v[e];
        if (x >= -s && x < s)
            continue;
        return finding(c, op->length.port,
                       "node '%s' (%s): index %" PRId64 " (element %zu of '%s') "
                       "is outside [%" PRId64 ", %" PRId64 "], the %" PRId64
                       " positions of dim %" PRId64 " of '%s'",
                       c->nd->display, op->op_type, x, e, iname ? iname : "",
                       -s, s - 1, s, d, c->cache);
    }
    for (int64_t d = 0; d < (nd ? k : 1); d++)
        if (dim_at(c, dv, nd ? d : axis) < 0)
            return unchecked(c, "a dimension the indices index is not known");
    return OAC_OK;
}

int oac_capacity_scatter_elements(cap_ctx *c)
{
    return indices_rule(c, false);
}

int oac_capacity_scatter_nd(cap_ctx *c)
{
    return indices_rule(c, true);
}

/* Contract 12: a main-graph value whose dims are all known but whose
 * byte count overflows 64 bits leaves the plan unknown; say so, as a note
 * (an unchecked memory-plan entry), not a silent null.  At most
 * OAC_DIAG_LIST_MAX of them. */
static int overflow_notes(oac_check_state *st)
{
    const oac_scope *s = st->graphs->scopes[0];
    size_t noted = 0;
    int rc = OAC_OK;
    for (size_t i = 0; !rc && i < s->n_values && noted < OAC_DIAG_LIST_MAX; i++) {
        const oac_value *v = &s->values_block[i];
        const oac_vshape *vs = oac_shapes_value(st->shapes, v->id);
        uint64_t n = 1, b;
        bool over = false;
        if (!vs || vs->kind != OAC_VK_TENSOR || vs->rank < 0 || !oac_elem_name(vs->elem_type))
            continue;
        bool known = true;
        for (int k = 0; k < vs->rank && known; k++) {
            int64_t d = oac_shapes_dim(st->shapes, vs->dims[k]);
            known = d >= 0;
            if (known && !over)
                over = oac_mul_overflow_u64(n, (uint64_t)d, &n);
        }
        if (!known || (!over && oac_elem_bytes(vs->elem_type, n, &b)))
            continue;
        noted++;
        rc = oac_unchecked_add(st->out, "memory-plan", s->name, NULL, v->name,
                               "value '%s' (%s, rank %d) holds more bytes than a 64-bit "
                               "count: its size and the memory plan are unknown, and "
                               "run refuses it (memory-budget)", v->name ? v->name : "",
                               oac_elem_name(vs->elem_type), (int)vs->rank);
    }
    return rc;
}

/* The capacity rule of each row that has one (ops.def .capacity: the
 * cache updates of section 2, the length rules of section 6); then the
 * sizes that overflow a byte count (overflow_notes). */
int oac_pass_capacity(oac_check_state *st)
{
    if (!st->graphs || !st->shapes)
        return OAC_OK;
    int rc = OAC_OK;
    for (size_t si = 0; si < st->graphs->n_scopes && !rc; si++) {
        oac_scope *s = st->graphs->scopes[si];
        for (size_t i = 0; i < s->n_nodes && !rc; i++) {
            const oac_node *nd = &s->nodes[i];
            if (!nd->op || !nd->op->capacity)
                continue;
            cap_ctx c = { .st = st, .sh = st->shapes, .s = s, .i = (long)i,
                          .nd = nd, .op = nd->op,
                          .cache = nd->proto->n_input ? nd->proto->input[0] : NULL };
            rc = nd->op->capacity(&c);
        }
    }
    if (!rc && st->graphs->n_scopes && st->out)
        rc = overflow_notes(st);
    return rc;
}

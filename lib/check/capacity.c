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
 *     int64 exceeds every capacity and is reported, never wrapped.
 *  4. One finding per node and rule: the first offending batch row of
 *     write_indices is named.
 *  5. Which port is the position, the values, the page_id, and which
 *     attribute is the axis come from the operator table (ops.def), as
 *     does the rule itself (the row's .capacity, oac_capacity_*).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check/checker.h"
#include "check/graph.h"
#include "op_fns.h"
#include "ops.h"
#include "check/shapes.h"

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

static int unchecked(cap_ctx *c, const char *why)
{
    if (!c->st->out)
        return OAC_OK;
    return oac_unchecked_add(c->st->out, "capacity", c->s->name, c->nd->display,
                             c->cache, "%s", why);
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

/* The one rule: position pos (known), length len, capacity cap.  Returns
 * through *bad whether it fired. */
static int check_one(cap_ctx *c, int port, const char *what, int64_t pos,
                     int64_t len, int64_t cap, const char *row)
{
    if (pos < 0) {
        char capbuf[32] = "not known", lenbuf[32] = "not known";
        if (cap >= 0)
            snprintf(capbuf, sizeof capbuf, "%" PRId64, cap);
        if (len >= 0)
            snprintf(lenbuf, sizeof lenbuf, "%" PRId64, len);
        return finding(c, port,
                       "node '%s': %s %s%" PRId64 " is negative (cache '%s', length %s"
                       ", capacity %s)", c->nd->display, what, row, pos,
                       c->cache, lenbuf, capbuf);
    }
    int64_t end;
    if (oac_add_overflow_i64(pos, len, &end))
        return finding(c, port,
                       "node '%s': %s %s%" PRId64 " + length %" PRId64
                       " overflows and exceeds the capacity %" PRId64 " of '%s'",
                       c->nd->display, what, row, pos, len, cap, c->cache);
    if (end > cap)
        return finding(c, port,
                       "node '%s': %s %s%" PRId64 " + length %" PRId64 " = %" PRId64
                       " exceeds the capacity %" PRId64 " of '%s'",
                       c->nd->display, what, row, pos, len, end, cap, c->cache);
    return OAC_OK;
}

/* An update whose length alone exceeds the capacity overflows at any
 * position (a position is never negative): reported with the position
 * unknown (issue 10, item 4). */
static int length_alone(cap_ctx *c, int port, const char *what, int64_t len,
                        int64_t cap)
{
    return finding(c, port,
                   "node '%s': the update length %" PRId64 " alone exceeds the "
                   "capacity %" PRId64 " of '%s', whatever the %s (never "
                   "negative)", c->nd->display, len, cap, c->cache, what);
}

static int64_t axis_of(const cap_ctx *c, const oac_vshape *cache)
{
    int64_t axis = c->op->axis_default;
    if (c->op->axis_attr)
        axis = oac_attr_int(c->nd->proto, c->op->axis_attr, axis);
    if (!cache || cache->rank < 0)
        return INT64_MIN;
    if (axis < -(int64_t)cache->rank || axis >= cache->rank)
        return INT64_MIN;   /* operand-invalid (check/shapes.c) */
    return axis < 0 ? axis + cache->rank : axis;
}

int oac_capacity_cache_update(cap_ctx *c)
{
    const oac_vshape *cv = port_vs(c, 0, NULL);
    const oac_vshape *vv = port_vs(c, c->op->values_port, NULL);
    const oac_known *pk = port_known(c, c->op->position_port);
    int64_t axis = axis_of(c, cv);
    if (axis == INT64_MIN)
        return unchecked(c, "the capacity axis is not known");
    int64_t cap = dim_at(c, cv, axis), len = dim_at(c, vv, axis);
    if (pk && pk->n == 1 && pk->v[0] < 0)
        return check_one(c, c->op->position_port, "position", pk->v[0], len,
                         cap, "");
    if ((!pk || pk->n != 1) && cap >= 0 && len > cap)
        return length_alone(c, c->op->values_port, "position", len, cap);
    if (!pk || pk->n != 1)
        return unchecked(c, "position is not known");
    if (cap < 0)
        return unchecked(c, "the capacity (cache dimension on the axis) is not known");
    if (len < 0)
        return unchecked(c, "the update length is not known");
    return check_one(c, c->op->position_port, "position", pk->v[0], len, cap, "");
}

int oac_capacity_tensor_scatter(cap_ctx *c)
{
    const oac_vshape *cv = port_vs(c, 0, NULL);
    const oac_vshape *uv = port_vs(c, c->op->values_port, NULL);
    int64_t axis = axis_of(c, cv);
    if (axis == INT64_MIN)
        return unchecked(c, "the sequence axis is not known");
    int64_t max_len = dim_at(c, cv, axis), len = dim_at(c, uv, axis);
    char mode[16] = "linear";
    const Onnx__AttributeProto *m = oac_node_attr(c->nd->proto, "mode");
    if (m && m->has_s) {
        size_t n = m->s.len < sizeof mode - 1 ? m->s.len : sizeof mode - 1;
        oac_shapes_copy(mode, m->s.data, n);
        mode[n] = '\0';
    }
    bool circular = !strcmp(mode, "circular");
    int port = c->op->position_port;
    bool have_wi = port_present(c, port);
    const oac_known *wk = have_wi ? port_known(c, port) : NULL;
    int rc;
    if (circular) {
        /* Only update_seq_len <= max_seq_len and write_indices >= 0. */
        if (max_len >= 0 && len >= 0 && len > max_len)
            return finding(c, c->op->values_port,
                           "node '%s': update length %" PRId64
                           " exceeds the capacity %" PRId64 " of '%s' (circular mode)",
                           c->nd->display, len, max_len, c->cache);
        if (max_len < 0 || len < 0)
            if ((rc = unchecked(c, "the update length or the capacity is not known")))
                return rc;
        if (have_wi && !wk)
            return unchecked(c, "write_indices are not known");
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
    if (have_wi && !wk && max_len >= 0 && len > max_len)
        return length_alone(c, c->op->values_port, "write_indices", len, max_len);
    if (have_wi && !wk)
        return unchecked(c, "write_indices are not known");
    if (max_len < 0)
        return unchecked(c, "the capacity (max_seq_len) is not known");
    if (len < 0)
        return unchecked(c, "the update length is not known");
    if (!have_wi)
        return check_one(c, c->op->values_port, "position", 0, len, max_len, "");
    for (size_t b = 0; b < wk->n; b++) {
        int64_t end;
        if (oac_add_overflow_i64(wk->v[b], len, &end) || end > max_len) {
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
        if ((rc = unchecked(c, "page_id is not known")))
            return rc;
    }
    /* A known page_id >= 0 beyond the end depends on the run's page count
     * (contract 2: a run-time capacity-overflow), never decidable here. */
    if (pk && pk->n == 1 && pk->v[0] < 0)
        return check_one(c, c->op->position_port, "position", pk->v[0], len, cap, "");
    if ((!pk || pk->n != 1) && cap >= 0 && len > cap)
        return length_alone(c, c->op->values_port, "position", len, cap);
    if (!pk || pk->n != 1)
        return unchecked(c, "position is not known");
    if (cap < 0)
        return unchecked(c, "the page size is not known");
    if (len < 0)
        return unchecked(c, "the update length is not known");
    return check_one(c, c->op->position_port, "position", pk->v[0], len, cap, "");
}

/* ---- section 6: the rows' length rules ---------------------------------- */

/* Does pair p of the row share the past's storage on this node: declared
 * in place (output_alias resolved to it; a refused one was cleared by
 * the ports pass), configured so in the file (the row's input or
 * attribute condition holds), or by the operator's definition? */
static bool pair_shared(const cap_ctx *c, oac_op_pair p)
{
    const oac_op *op = c->op;
    const Onnx__NodeProto *np = c->nd->proto;
    if (c->nd->alias_in && (size_t)p.out < np->n_output &&
        c->nd->alias_in[p.out] == p.in)
        return true;
    if (oac_op_has(op, OAC_OPF_PRESENT_IS_PAST))
        return true;
    return (op->cond == OAC_COND_INPUT || op->cond == OAC_COND_ATTR) &&
           oac_op_cond_holds(op, np);
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
        if (!pair_shared(c, pairs[k]))
            continue;
        const char *past = NULL;
        const oac_vshape *pv = port_vs(c, pairs[k].in, &past);
        c->cache = past ? past : c->nd->proto->input[pairs[k].in];
        if (L->kind == OAC_LEN_UNCHECKED)
            return unchecked(c, "the length lives in the block table "
                                "(section 6: unchecked)");
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

        int64_t lo = 0;
        bool wrapped = oac_add_overflow_i64(val, seq_known ? seq : 0, &lo) ||
                       oac_add_overflow_i64(lo, L->plus, &lo);
        bool exact = v_known && seq_known;
        char parts[256];
        int at = 0;
        if (v_known)
            at = snprintf(parts, sizeof parts, "input %d '%s' = %" PRId64,
                          L->port, vname ? vname : "", val);
        else
            at = snprintf(parts, sizeof parts, "input %d '%s' not known, at "
                          "least 0", L->port, vname ? vname : "");
        if (L->seq_port >= 0 && seq_known && at >= 0 && (size_t)at < sizeof parts)
            at += snprintf(parts + at, sizeof parts - (size_t)at,
                           " + %" PRId64 " new position%s of '%s'", seq,
                           seq == 1 ? "" : "s", sname ? sname : "");
        if (L->plus && at >= 0 && (size_t)at < sizeof parts)
            snprintf(parts + at, sizeof parts - (size_t)at, " + %d new",
                     (int)L->plus);
        if (cap >= 0 && (wrapped || lo > cap)) {
            int port = v_known || L->seq_port < 0 ? L->port : L->seq_port;
            if (wrapped)
                return finding(c, port,
                               "node '%s' (%s): the length after the update "
                               "(%s) overflows and exceeds the capacity %" PRId64
                               " of '%s'", c->nd->display, op->op_type, parts,
                               cap, c->cache);
            return finding(c, port,
                           "node '%s' (%s): the update leaves %s%" PRId64
                           " positions (%s) in '%s', whose capacity is %" PRId64
                           " (dim %d)", c->nd->display, op->op_type,
                           exact ? "" : "at least ", lo, parts, c->cache, cap,
                           (int)axis);
        }
        if (cap < 0)
            rc = unchecked(c, "the capacity (the past's dimension on the "
                              "capacity axis) is not known");
        else if (!exact)
            rc = unchecked(c, v_known ? "the number of new positions is not known"
                                      : "the past or total sequence length is not known");
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

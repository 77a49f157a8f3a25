/* capacity.c: position + update length <= capacity (oac_pass_capacity).
 *
 * Owns: capacity-overflow for CacheUpdate, TensorScatter and
 * PagedCacheUpdate, and the "capacity" entries of the unchecked list.
 * Contract: section 2 (position < 0 or position + new_length > capacity
 * is an error, never a reallocation; TensorScatter linear rule; paged
 * capacity), section 3 ("TensorScatter without write_indices writes at
 * 0; in circular mode only update_seq_len <= max_seq_len and
 * write_indices >= 0 are checked.  For PagedCacheUpdate the capacity is
 * the page's page_size; a known negative page_id is capacity-overflow").
 *
 * Invariants:
 *  1. Positions come only from known values (consts.c); dimensions from
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

#include "checker.h"
#include "graph.h"
#include "op_fns.h"
#include "ops.h"
#include "shapes.h"

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

static int64_t axis_of(const cap_ctx *c, const oac_vshape *cache)
{
    int64_t axis = c->op->axis_default;
    if (c->op->axis_attr)
        axis = oac_shapes_attr_int(c->nd->proto, c->op->axis_attr, axis);
    if (!cache || cache->rank < 0)
        return INT64_MIN;
    if (axis < -(int64_t)cache->rank || axis >= cache->rank)
        return INT64_MIN;   /* operand-invalid (shapes.c) */
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
    const Onnx__AttributeProto *m = oac_shapes_attr(c->nd->proto, "mode");
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
    if (!pk || pk->n != 1)
        return unchecked(c, "position is not known");
    if (cap < 0)
        return unchecked(c, "the page size is not known");
    if (len < 0)
        return unchecked(c, "the update length is not known");
    return check_one(c, c->op->position_port, "position", pk->v[0], len, cap, "");
}

/* The capacity rule of each cache-update operator (ops.def rows with
 * OAC_OPF_CACHE_UPDATE). */
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
    return rc;
}

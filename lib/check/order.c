/* check/order.c: the schedule pass, a topological order of every scope.
 *
 * Owns oac_pass_schedule (check/checker.h, pass 2) and struct oac_schedule
 * (check/order.h), and the finding model-invalid for a cycle of data
 * dependencies.  Contract: section 3 ("ordered before" is a
 * data-dependency path), section 4 (the memory plan walks this order),
 * section 5 (`run` executes it), section 8 (model-invalid).
 *
 * Invariants:
 *  1. The order is a function of the graph index only: Kahn over the uses
 *     check/graph.h lists (a port read, or an outer read by a subgraph, which
 *     belongs to the enclosing node), lowest file index first among the
 *     ready nodes, so a sorted scope keeps its file order.
 *  2. A scope with a cycle gets one finding, naming the nodes of one
 *     cycle (the one through its lowest-indexed blocked node) and a value
 *     on it; its blocked nodes come last in file order, so every later
 *     pass still sees every node once.
 *  3. Everything allocated is freed on every path; the pass allocates
 *     nothing for a sorted scope.
 */
#include <stdio.h>
#include <string.h>

#include "check/graph.h"
#include "check/order.h"

#define LOC_MAX 512
/* Nodes a cycle's message names before it elides the rest. */
#define CYCLE_NAMES 8

void oac_schedule_free(oac_schedule *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_scopes; i++) {
        oac_dealloc(s->ctx, s->scopes[i].node);
        oac_dealloc(s->ctx, s->scopes[i].pos);
    }
    oac_dealloc(s->ctx, s->scopes);
    oac_dealloc(s->ctx, s);
}

/* Is value v the output port `port` of node x (not a second definition
 * check/graph.h resolved to an earlier one)? */
static bool made_by(const oac_value *v, size_t x, size_t port)
{
    return v && v->producer == (int32_t)x && v->port == (int32_t)port;
}

/* Does every use of every value s's nodes make come after its producer
 * in file order?  Then the file order is the schedule. */
static bool sorted(const oac_scope *s)
{
    for (size_t k = 0; k < s->n_values; k++) {
        const oac_value *v = &s->values_block[k];
        /* Uses are in file order of their nodes (check/graph.h): the first
         * is the earliest. */
        if (v->producer >= 0 && v->n_uses && v->uses[0].node <= v->producer)
            return false;
    }
    return true;
}

/* ---- a min-heap of ready node indices -------------------------------- */

static void heap_push(uint32_t *h, size_t *n, uint32_t x)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > x) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static uint32_t heap_pop(uint32_t *h, size_t *n)
{
    uint32_t top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] < h[c])
            c++;
        if (h[c] >= last)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = last;
    return top;
}

/* ---- the cycle's finding --------------------------------------------- */

/* The lowest-indexed blocked predecessor of blocked node x, and the
 * value through which it feeds x. */
static long blocked_pred(const oac_scope *s, const uint32_t *indeg, size_t x,
                         const oac_value **via)
{
    const oac_node *n = &s->nodes[x];
    long best = -1;
    for (size_t k = 0; k < n->proto->n_input; k++) {
        const oac_value *v = oac_node_input(s, (long)x, k);
        if (v && v->scope == s && v->producer >= 0 && indeg[v->producer] &&
            (best < 0 || v->producer < best)) {
            best = v->producer;
            *via = v;
        }
    }
    const oac_node_ext *e = oac_node_x(n);
    for (size_t k = 0; k < e->n_outer_reads; k++) {
        const oac_value *v = e->outer_reads[k];
        if (v->scope == s && v->producer >= 0 && indeg[v->producer] &&
            (best < 0 || v->producer < best)) {
            best = v->producer;
            *via = v;
        }
    }
    return best;
}

/* Report one cycle among the blocked nodes (indeg > 0): walk blocked
 * predecessors from the lowest blocked node until one repeats. */
static int report_cycle(oac_check_state *st, const oac_scope *s, const uint32_t *indeg)
{
    oac_ctx *ctx = st->ctx;
    size_t n = s->n_nodes;
    long *at = oac_alloc(ctx, n * sizeof *at);          /* place on the walk */
    uint32_t *walk = oac_alloc(ctx, n * sizeof *walk);
    const oac_value **via = oac_calloc(ctx, n, sizeof *via);
    char *names = NULL;
    int rc = OAC_ENOMEM;
    if (!at || !walk || !via)
        goto done;
    size_t x = 0;
    while (x < n && !indeg[x])
        x++;
    for (size_t i = 0; i < n; i++)
        at[i] = -1;
    size_t len = 0;
    while (x < n && at[x] < 0) {
        at[x] = (long)len;
        walk[len++] = (uint32_t)x;
        long p = blocked_pred(s, indeg, x, &via[x]);
        if (p < 0) {                    /* cannot happen: x is blocked */
            rc = oac_err(ctx, OAC_EINTERNAL, "schedule: blocked node without a blocked input");
            goto done;
        }
        x = (size_t)p;
    }
    /* The cycle is walk[at[x] .. len), each entry a predecessor of the one
     * before; in data-flow order it runs backwards.  Start it at its
     * lowest node index. */
    size_t first = (size_t)at[x], m = len - first, start = first;
    for (size_t k = first; k < len; k++)
        if (walk[k] < walk[start])
            start = k;
    /* Room for every name of the cycle (at most CYCLE_NAMES + 1 are
     * written) and the elision. */
    size_t cap = 64;
    for (size_t k = first; k < len; k++)
        cap += strlen(s->nodes[walk[k]].display) + 4;
    cap += strlen(s->nodes[walk[start]].display) + 4;
    names = oac_alloc(ctx, cap);
    if (!names)
        goto done;
    size_t used = 0;
    /* Data-flow order: from start, the node its value feeds is the walk
     * entry before it (cyclically). */
    size_t k = start;
    for (size_t step = 0; step <= m; step++) {
        const char *d = s->nodes[walk[k]].display;
        if (step == CYCLE_NAMES && m > CYCLE_NAMES) {
            used += (size_t)snprintf(names + used, cap - used, " -> ... (%zu nodes) ->",
                                     m);
            d = s->nodes[walk[start]].display;
            used += (size_t)snprintf(names + used, cap - used, " %s", d);
            break;
        }
        used += (size_t)snprintf(names + used, cap - used, "%s%s",
                                 step ? " -> " : "", d);
        k = k == first ? len - 1 : k - 1;
    }
    /* The value the first node makes for the next one on the cycle. */
    size_t next = start == first ? len - 1 : start - 1;
    const oac_value *v = via[walk[next]];
    char loc[LOC_MAX];
    oac_where w = oac_where_node(s, (long)walk[start], v->name, NULL, loc, sizeof loc);
    rc = oac_scope_diag(st, s, OAC_MODEL_INVALID, &w,
                        "nodes %s form a cycle of data dependencies (value '%s' "
                        "of node %s is read by node %s): no order runs them",
                        names, v->name, s->nodes[walk[start]].display,
                        s->nodes[walk[next]].display);
done:
    if (rc == OAC_ENOMEM)
        oac_err(ctx, OAC_ENOMEM, "out of memory");
    oac_dealloc(ctx, at);
    oac_dealloc(ctx, walk);
    oac_dealloc(ctx, via);
    oac_dealloc(ctx, names);
    return rc;
}

/* ---- one scope ------------------------------------------------------- */

static int order_scope(oac_check_state *st, const oac_scope *s, oac_scope_order *o)
{
    oac_ctx *ctx = st->ctx;
    size_t n = s->n_nodes;
    o->n_nodes = o->n_ordered = (uint32_t)n;
    if (sorted(s))
        return OAC_OK;
    uint32_t *indeg = oac_calloc(ctx, n, sizeof *indeg);
    uint32_t *heap = oac_alloc(ctx, n * sizeof *heap);
    o->node = oac_alloc(ctx, n * sizeof *o->node);
    o->pos = oac_alloc(ctx, n * sizeof *o->pos);
    int rc = OAC_ENOMEM;
    if (!indeg || !heap || !o->node || !o->pos)
        goto done;
    for (size_t k = 0; k < s->n_values; k++) {
        const oac_value *v = &s->values_block[k];
        if (v->producer < 0)
            continue;
        for (size_t u = 0; u < v->n_uses; u++)
            indeg[v->uses[u].node]++;
    }
    size_t nh = 0, next = 0;
    for (size_t i = 0; i < n; i++)
        if (!indeg[i])
            heap_push(heap, &nh, (uint32_t)i);
    while (nh) {
        uint32_t x = heap_pop(heap, &nh);
        o->pos[x] = (uint32_t)next;
        o->node[next++] = x;
        const Onnx__NodeProto *np = s->nodes[x].proto;
        for (size_t p = 0; p < np->n_output; p++) {
            const oac_value *v = oac_node_output(s, (long)x, p);
            if (!made_by(v, x, p))
                continue;
            for (size_t u = 0; u < v->n_uses; u++) {
                uint32_t c = (uint32_t)v->uses[u].node;
                if (--indeg[c] == 0)
                    heap_push(heap, &nh, c);
            }
        }
    }
    o->n_ordered = (uint32_t)next;
    if (next < n) {
        /* Invariant 2: the blocked nodes last, in file order. */
        for (size_t i = 0; i < n; i++)
            if (indeg[i]) {
                o->pos[i] = (uint32_t)next;
                o->node[next++] = (uint32_t)i;
            }
        if ((rc = report_cycle(st, s, indeg)))
            goto done;
    }
    bool identity = true;
    for (size_t k = 0; k < n && identity; k++)
        identity = o->node[k] == k;
    if (identity) {
        oac_dealloc(ctx, o->node);
        oac_dealloc(ctx, o->pos);
        o->node = o->pos = NULL;
    }
    rc = OAC_OK;
done:
    if (rc == OAC_ENOMEM)
        oac_err(ctx, OAC_ENOMEM, "out of memory");
    oac_dealloc(ctx, indeg);
    oac_dealloc(ctx, heap);
    return rc;
}

int oac_pass_schedule(oac_check_state *st)
{
    const oac_graphs *g = st->graphs;
    if (!g)
        return OAC_OK;
    oac_schedule *sc = oac_calloc(st->ctx, 1, sizeof *sc);
    if (!sc)
        return OAC_ENOMEM;
    sc->ctx = st->ctx;
    /* Owned by the analysis from here on (check/check.c hands it over). */
    st->schedule = sc;
    sc->scopes = oac_calloc(st->ctx, g->n_scopes ? g->n_scopes : 1, sizeof *sc->scopes);
    if (!sc->scopes)
        return OAC_ENOMEM;
    sc->n_scopes = g->n_scopes;
    for (size_t i = 0; i < g->n_scopes; i++) {
        int rc = order_scope(st, g->scopes[i], &sc->scopes[i]);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

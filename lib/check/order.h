/* check/order.h: the order the nodes of every scope run in.
 *
 * Owns struct oac_schedule, made by the schedule pass (check/order.c) right
 * after the graph index, kept by the analysis (check/analysis.h).  Contract:
 * section 3 ("ordered before" is a data-dependency path, not file
 * order), section 4 (the memory plan walks this order), section 5 (`run`
 * executes it), section 8 (model-invalid: a cycle).
 *
 * The order of a scope is a topological order of its data dependencies:
 * node b depends on node a when b reads (at a port, or through its
 * subgraphs as an outer value, check/graph.h invariant 4) a value a produces.
 * Among the nodes ready to run, the lowest file index comes first (Kahn
 * with a min-heap), so a graph already sorted keeps its file order and
 * every report on it stays the same.  Nodes that no order can run (on a
 * cycle, or after one) come last, in file order, and the scope is marked
 * cyclic (the pass reports model-invalid naming the cycle; nothing runs).
 *
 * Invariants:
 *  1. order->node is a permutation of 0 .. n_nodes-1 and order->pos its
 *     inverse; both NULL for a scope whose order is its file order (the
 *     usual case, which then costs no memory): read them through
 *     oac_sched_node and oac_sched_pos.
 *  2. The pass is linear for sorted scopes (one check of each value's
 *     first use) and O((nodes + uses) log nodes) otherwise.
 */
#ifndef OAC_SCHEDULE_H
#define OAC_SCHEDULE_H

#include "oac_int.h"

typedef struct oac_scope_order {
    uint32_t *node;         /* position -> node index, or NULL (identity) */
    uint32_t *pos;          /* node index -> position, or NULL (identity) */
    uint32_t n_nodes;
    uint32_t n_ordered;     /* nodes before the cyclic rest (= n_nodes when
                               acyclic) */
} oac_scope_order;

typedef struct oac_schedule {
    oac_ctx *ctx;
    oac_scope_order *scopes;    /* by check/graph.h scope index */
    size_t n_scopes;
} oac_schedule;

void oac_schedule_free(oac_schedule *s);

/* The order of the scope with index i (never NULL for i < n_scopes). */
static inline const oac_scope_order *oac_sched_scope(const oac_schedule *s, size_t i)
{
    return s && i < s->n_scopes ? &s->scopes[i] : NULL;
}

/* The node at position k (k < n_nodes), and the position of node i.
 * Without a schedule (o NULL) both are the file order. */
static inline size_t oac_sched_node(const oac_scope_order *o, size_t k)
{
    return o && o->node ? o->node[k] : k;
}

static inline size_t oac_sched_pos(const oac_scope_order *o, size_t i)
{
    return o && o->pos ? o->pos[i] : i;
}

/* Does the scope hold a cycle (some nodes no order runs)? */
static inline bool oac_sched_cyclic(const oac_scope_order *o)
{
    return o && o->n_ordered < o->n_nodes;
}

#endif /* OAC_SCHEDULE_H */

/* check/plan.h: the static memory plan's schedule (contract section 4), shared
 * by the checker (check/plan.c fills analysis->plan from it) and the reference
 * runtime, which must measure the same quantities and find equality.
 *
 * Owns: struct oac_plan_sched.  The rule it encodes (check/plan.c's header
 * comment has the full text):
 *  - main-graph nodes in the schedule's order (check/order.h), at the dims
 *    known after checking;
 *  - a buffer is a node output that does not must-alias an input (an
 *    alias class rooted at a node output is one buffer, its root's);
 *    it is allocated when its producer runs and freed right after the
 *    last node that reads any member of it (a read inside a subgraph
 *    counts for the enclosing node); never freed when any member is a
 *    graph output; graph inputs and initializers are not buffers;
 *  - live at node i = buffers allocated at or before i and not freed
 *    before i (node i's inputs and its own outputs included);
 *    peak = max over nodes of live + that node's workspace + the
 *    transient of the body it runs (If: the larger branch; Loop; a call
 *    of a local function), each body walked by the same rule;
 *  - pages: the first PagedCacheUpdate of each alias class creates one
 *    page, counted live from the start (cache storage that outlives the
 *    step); a format change to another page size holds both copies
 *    while it runs (check/plan.c rule 5b).
 *
 * Buffers carry their value id (check/graph.h), by which the runtime's frames
 * free them (run/interp.c).
 */
#ifndef OAC_PLAN_H
#define OAC_PLAN_H

#include "check/analysis.h"
#include "oac_int.h"

/* Node and buffer indices are 32-bit (check/plan.c refuses a larger graph):
 * a schedule has an entry per node and per buffer of the graph walked,
 * kept as long as the analysis.  What only the walk needs (buffer sizes,
 * list offsets) is not kept. */
typedef struct oac_plan_buf {
    const char *name;       /* the value allocated (borrowed from the model) */
    uint32_t value;         /* its check/graph.h value id: the runtime frees it */
    uint32_t node;          /* node that allocates it */
    int32_t free_after;     /* node after which it is freed; -1: never */
} oac_plan_buf;

/* Step k runs node oac_sched_node(order, k) of the scope (check/order.h;
 * node k when the file is sorted).  The lists are consecutive: step k
 * allocates the n_alloc buffers after those of steps 0..k-1 (bufs is in
 * allocation order) and frees the n_free buffers listed in frees after
 * those of steps 0..k-1. */
typedef struct oac_plan_step {
    uint32_t n_alloc;
    uint32_t n_free;        /* buf indices in frees, freed after this node */
    uint64_t live;          /* live buffer bytes while it runs, when known:
                               read it through oac_plan_step_live */
} oac_plan_step;

/* What few steps have beyond live (oac_plan_step_extra): every other
 * step has workspace and transient 0 and no loop input. */
typedef struct oac_plan_extra {
    size_t step;
    oac_opt_u64 workspace;  /* kernel workspace of this node */
    oac_opt_u64 transient;  /* what its body (If, Loop, function) holds
                               above live: check/plan.c rules 8-10 */
    /* A Loop whose trip count (or condition) is a main-graph input the
     * check does not know: the input's value id (check/graph.h), else
     * OAC_PLAN_NO_INPUT.  The run, which knows its inputs, plans no body
     * when it holds 0 (false): oac_plan_peak_at_inputs (check/plan.c
     * rule 10b). */
    int64_t loop_trip_input;
    int64_t loop_cond_input;
} oac_plan_extra;

#define OAC_PLAN_NO_INPUT (-1)

struct oac_plan_sched;

typedef struct oac_plan_sched {
    oac_plan_buf *bufs;     /* in allocation order */
    size_t n_bufs;
    uint32_t *frees;
    size_t n_frees;
    oac_plan_step *steps;   /* one per node of the graph walked, in the
                               schedule's order */
    size_t n_steps;
    /* Steps 0..n_live_known-1 have a known live, the later ones not: a
     * size not known keeps every later live unknown (check/plan.c rule 7). */
    size_t n_live_known;
    oac_plan_extra *extras; /* by step, ascending */
    size_t n_extras;
    /* Pages the first PagedCacheUpdate of each class creates (check/plan.c rule
     * 5b): live from the start, included in every step's live. */
    oac_opt_u64 page_bytes;
    oac_memory_plan totals;
    oac_opt_u64 end_live;   /* live after the last node (kept buffers) */
} oac_plan_sched;

/* The schedule of every scope the check planned is the analysis's
 * (check/analysis.h: oac_analysis_scope_plan; oac_analysis_schedule for the
 * main graph, NULL when the model had no main graph). */

void oac_plan_sched_free(oac_ctx *ctx, oac_plan_sched *s);

/* Live buffer bytes while step i (i < s->n_steps) runs, or unknown. */
static inline oac_opt_u64 oac_plan_step_live(const oac_plan_sched *s, size_t i)
{
    bool known = i < s->n_live_known;
    return (oac_opt_u64){ known, known ? s->steps[i].live : 0 };
}

/* Workspace, transient and loop inputs of step i (i < s->n_steps): its
 * entry of extras, or one with 0, 0 and no inputs.  Never NULL. */
const oac_plan_extra *oac_plan_step_extra(const oac_plan_sched *s, size_t i);

/* Rule 10b at a run's inputs: the peak of schedule s when every Loop
 * whose trip count or condition is a main-graph input with zero(arg, its
 * value id) true (the run starts it at 0, false) plans no body.  False
 * when a figure it needs is unknown; *skipped says whether any Loop was
 * left out (when none is, the peak is s's own). */
bool oac_plan_peak_at_inputs(const oac_plan_sched *s,
                             bool (*zero)(const void *arg, int64_t value_id),
                             const void *arg, uint64_t *peak, bool *skipped);


#endif /* OAC_PLAN_H */

/* check/analysis.h: the analysis, what oac_check hands to the report and to the
 * reference runtime (contract sections 4 and 5).
 *
 * Owns struct oac_analysis (the public oac_analysis, opaque outside the
 * library) and the helpers the passes fill it with.  Two halves:
 *  - report data: alias classes, unchecked rules, the memory plan's
 *    totals and the dim_params in force, which outlive everything else
 *    the check made (strings and arrays in the analysis's arena);
 *  - the hand-off to the runtime: the graph index (check/graph.h, values by
 *    integer id), the alias forest (check/alias.h: classes and each value's
 *    root), the types and known values (check/shapes_store.h), the schedule (a
 *    topological order of the nodes of every scope, check/order.h), the
 *    parsed --input files, and the memory plan of every scope with its
 *    free points (check/plan.h).  The runtime keeps no index, alias rule,
 *    free-point rule or input parser of its own: it reads these.
 *
 * Invariants:
 *  1. oac_analysis_free frees every part (each part's own free function,
 *     all NULL-safe); a part is set once, by the pass that makes it.
 *     oac_analysis_trim frees the hand-off early, for a caller that only
 *     reports (`check`: the peak of building a JSON report stays that
 *     of the check without the runtime's half).
 *  2. The hand-off borrows the model the analysis was made from
 *     (analysis->model): names and protos point into it, so the model
 *     must outlive every use of the analysis (not its free).
 *  3. This file calls no pass, and no pass but the helpers below (inline
 *     over model/arena.c, or oac_unchecked_add) calls it: check/check.c makes and
 *     frees the analysis, the passes fill it, report and runtime read it.
 */
#ifndef OAC_ANALYSIS_H
#define OAC_ANALYSIS_H

#include <string.h>

#include "model/arena.h"
#include "oac_int.h"

struct oac_graphs;       /* check/graph.h */
struct oac_aliases;      /* check/alias.h */
struct oac_shapes;       /* check/shapes_store.h */
struct oac_schedule;     /* check/order.h */
struct oac_plan_sched;   /* check/plan.h */

/* One --input NAME=FILE.pb of the check (check/inputs.c), in option order. */
typedef struct oac_input_val {
    const char *name;           /* graph input (borrowed from the options) */
    size_t value_id;            /* its check/graph.h value id */
    oac_pbfile *file;           /* TensorProto/SequenceProto/MapProto */
    bool borrowed;              /* file is another analysis's (check/inputs.c,
                                   oac_check_state.inputs_from): not freed */
} oac_input_val;

struct oac_analysis {
    oac_ctx *ctx;
    const oac_model *model;     /* borrowed (invariant 2) */

    /* ---- report data ---- */
    oac_alias_class *classes;
    size_t n_classes;
    oac_unchecked *unchecked;
    size_t n_unchecked;
    oac_memory_plan plan;
    /* The structure errors (model-invalid findings) the check made: a run
     * refuses an analysis that has any (run/session.c). */
    size_t n_invalid;
    /* dim_param bindings in force after unification: parallel arrays,
     * names owned. */
    char **dim_names;
    int64_t *dim_values;
    size_t n_dims;
    /* kv_caches: the pairs and their verdicts (annotate/pairs.c, after the
     * passes), strings in the arena. */
    oac_kv_cache *kv;
    size_t n_kv;
    /* Storage of the classes' root, graph, members (array and names),
     * dims and dim_params and of every string of the unchecked entries:
     * a model has thousands, released at once with the analysis (made on
     * first use). */
    struct oac_arena *arena;

    /* ---- the hand-off to the runtime ---- */
    struct oac_graphs *graphs;      /* pass graph */
    struct oac_aliases *aliases;    /* pass classes */
    struct oac_shapes *shapes;      /* pass shapes */
    struct oac_schedule *schedule;  /* pass schedule */
    oac_input_val *inputs;          /* pass shapes (check/inputs.c) */
    size_t n_inputs;
    /* The memory plan's schedule of every scope, by scope index (check/plan.c;
     * NULL for a scope it could not plan: truncated, or no main graph). */
    struct oac_plan_sched **plans;
    size_t n_plans;
};

/* The checker's passes (check/check.c): what the public oac_check
 * (annotate/pairs.c) runs before it pairs the caches and gives each its
 * verdict.  Same contract as oac_check otherwise. */
int oac_check_passes(oac_ctx *ctx, oac_analysis **out, const oac_model *model,
                     const oac_check_opts *opts, oac_diags *diags);

/* A new, empty analysis of model (check/check.c); NULL on OOM. */
oac_analysis *oac_analysis_new(oac_ctx *ctx, const oac_model *model);

/* n bytes of the analysis's arena, made on first use. */
static inline void *oac_analysis_alloc(oac_analysis *a, size_t n)
{
    if (!a->arena && !(a->arena = oac_arena_new(a->ctx)))
        return NULL;
    return oac_arena_alloc(a->arena, n);
}

/* A copy of s (NULL for NULL) and zeroed n * size bytes in the
 * analysis's arena, freed with the analysis.  NULL on OOM, with the
 * message on the context. */
static inline char *oac_analysis_strdup(oac_analysis *a, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = oac_analysis_alloc(a, n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static inline void *oac_analysis_calloc(oac_analysis *a, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        oac_err(a->ctx, OAC_ENOMEM, "out of memory");
        return NULL;
    }
    void *p = oac_analysis_alloc(a, total);
    if (p)
        memset(p, 0, total);
    return p;
}

/* Append an entry to the analysis's unchecked list; its strings are
 * copied into the arena (a rule, graph or reason equal to the previous
 * entry's shares its copy). */
int oac_unchecked_add(oac_analysis *a, const char *rule, const char *graph,
                      const char *node, const char *value,
                      const char *fmt, ...) OAC_PRINTF(6, 7);

/* The --input file of the check for graph input `name`, or NULL. */
const oac_pbfile *oac_analysis_input(const oac_analysis *a, const char *name);

/* The memory plan's schedule of the scope with index scope_index, or
 * NULL (not planned).  oac_analysis_schedule is the main graph's. */
const struct oac_plan_sched *oac_analysis_scope_plan(const oac_analysis *a,
                                                     size_t scope_index);
const struct oac_plan_sched *oac_analysis_schedule(const oac_analysis *a);

#endif /* OAC_ANALYSIS_H */

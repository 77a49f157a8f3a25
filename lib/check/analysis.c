/* check/analysis.c: the analysis object (check/analysis.h).
 *
 * Owns: making and freeing the analysis, its unchecked list, and the
 * accessors the public header and the runtime read it through.
 * Contract: section 4 (alias_classes, memory_plan, unchecked rules as
 * data), section 5 (the check's --dim and --input are the run's).
 *
 * Invariants:
 *  1. Freeing releases every part through the part's own free function
 *     (check/graph.c, check/alias.c, check/shapes.c, check/plan.c, model/load.c): this file calls no
 *     pass, so no pass and this file call each other.
 *  2. Accessors accept NULL and out-of-range indices (NULL or 0 back).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check/alias.h"
#include "check/analysis.h"
#include "check/graph.h"
#include "check/plan.h"
#include "check/order.h"
#include "check/shapes_store.h"

oac_analysis *oac_analysis_new(oac_ctx *ctx, const oac_model *model)
{
    oac_analysis *a = oac_calloc(ctx, 1, sizeof *a);
    if (a) {
        a->ctx = ctx;
        a->model = model;
    }
    return a;
}

void oac_analysis_trim(oac_analysis *a)
{
    if (!a)
        return;
    oac_ctx *ctx = a->ctx;
    for (size_t i = 0; i < a->n_inputs; i++)
        if (!a->inputs[i].borrowed)
            oac_pbfile_free(a->inputs[i].file);
    oac_dealloc(ctx, a->inputs);
    for (size_t i = 0; i < a->n_plans; i++)
        oac_plan_sched_free(ctx, a->plans[i]);
    oac_dealloc(ctx, a->plans);
    oac_schedule_free(a->schedule);
    oac_shapes_free(a->shapes);
    oac_aliases_free(a->aliases);
    oac_graphs_free(a->graphs);
    a->inputs = NULL;
    a->n_inputs = 0;
    a->plans = NULL;
    a->n_plans = 0;
    a->schedule = NULL;
    a->shapes = NULL;
    a->aliases = NULL;
    a->graphs = NULL;
}

void oac_analysis_free(oac_analysis *a)
{
    if (!a)
        return;
    oac_ctx *ctx = a->ctx;
    oac_analysis_trim(a);
    /* Every string and array of the classes is in the arena. */
    oac_dealloc(ctx, a->classes);
    oac_dealloc(ctx, a->unchecked);
    for (size_t i = 0; i < a->n_dims; i++)
        oac_dealloc(ctx, a->dim_names[i]);
    oac_dealloc(ctx, a->dim_names);
    oac_dealloc(ctx, a->dim_values);
    oac_arena_free(a->arena);
    oac_dealloc(ctx, a);
}

size_t oac_analysis_class_count(const oac_analysis *a)
{
    return a ? a->n_classes : 0;
}

const oac_alias_class *oac_analysis_class(const oac_analysis *a, size_t i)
{
    return a && i < a->n_classes ? &a->classes[i] : NULL;
}

size_t oac_analysis_unchecked_count(const oac_analysis *a)
{
    return a ? a->n_unchecked : 0;
}

const oac_unchecked *oac_analysis_unchecked(const oac_analysis *a, size_t i)
{
    return a && i < a->n_unchecked ? &a->unchecked[i] : NULL;
}

void oac_analysis_unchecked_drop(oac_analysis *a, bool run_decided_only)
{
    size_t k = 0;
    /* The strings live in the arena: dropping an entry frees nothing. */
    for (size_t i = 0; a && i < a->n_unchecked; i++)
        if (run_decided_only && !a->unchecked[i].run_decides)
            a->unchecked[k++] = a->unchecked[i];
    if (a)
        a->n_unchecked = k;
}

const oac_memory_plan *oac_analysis_plan(const oac_analysis *a)
{
    return a ? &a->plan : NULL;
}

int64_t oac_analysis_dim(const oac_analysis *a, const char *dim_param)
{
    if (!a || !dim_param)
        return -1;
    for (size_t i = 0; i < a->n_dims; i++)
        if (a->dim_names[i] && strcmp(a->dim_names[i], dim_param) == 0)
            return a->dim_values[i];
    return -1;
}

size_t oac_analysis_kv_count(const oac_analysis *a)
{
    return a ? a->n_kv : 0;
}

const oac_kv_cache *oac_analysis_kv(const oac_analysis *a, size_t i)
{
    return a && i < a->n_kv ? &a->kv[i] : NULL;
}

const char *oac_kv_verdict_name(oac_kv_verdict v)
{
    switch (v) {
    case OAC_KV_IN_PLACE: return "in-place";
    case OAC_KV_IMPLIED: return "implied";
    case OAC_KV_COPIED: return "copied";
    case OAC_KV_NOT_A_CACHE: return "not-a-cache";
    }
    return NULL;
}

const oac_pbfile *oac_analysis_input(const oac_analysis *a, const char *name)
{
    for (size_t i = 0; a && name && i < a->n_inputs; i++)
        if (!strcmp(a->inputs[i].name, name))
            return a->inputs[i].file;
    return NULL;
}

const oac_plan_sched *oac_analysis_scope_plan(const oac_analysis *a,
                                              size_t scope_index)
{
    return a && scope_index < a->n_plans ? a->plans[scope_index] : NULL;
}

const oac_plan_sched *oac_analysis_schedule(const oac_analysis *a)
{
    return oac_analysis_scope_plan(a, 0);
}

/* A copy of s in the arena, or prev (the previous entry's string) when
 * it is the same text: capacity lists one entry per cache update, with
 * one rule, graph and reason. */
static char *copy_or_share(oac_analysis *a, const char *s, char *prev)
{
    if (s && prev && strcmp(s, prev) == 0)
        return prev;
    return oac_analysis_strdup(a, s);
}

int oac_unchecked_add(oac_analysis *a, const char *rule, const char *graph,
                      const char *node, const char *value,
                      const char *fmt, ...)
{
    oac_ctx *ctx = a->ctx;
    oac_unchecked u = { 0 };
    const oac_unchecked *prev = a->n_unchecked ? &a->unchecked[a->n_unchecked - 1]
                                               : &u;
    va_list ap;
    va_start(ap, fmt);
    /* "%s" (capacity's one reason per cache update) is a copy: no
     * printf to measure and then write it. */
    if (fmt[0] == '%' && fmt[1] == 's' && fmt[2] == '\0') {
        const char *r = va_arg(ap, const char *);
        u.reason = copy_or_share(a, r ? r : "(null)", prev->reason);
    } else {
        va_list copy;
        va_copy(copy, ap);
        int n = vsnprintf(NULL, 0, fmt, copy);
        va_end(copy);
        if (n < 0) {
            va_end(ap);
            return oac_err(ctx, OAC_EINTERNAL, "bad format string");
        }
        if ((u.reason = oac_analysis_alloc(a, (size_t)n + 1)))
            vsnprintf(u.reason, (size_t)n + 1, fmt, ap);
    }
    va_end(ap);
    u.rule = copy_or_share(a, rule, prev->rule);
    u.graph = copy_or_share(a, graph, prev->graph);
    u.node = oac_analysis_strdup(a, node);
    u.value = oac_analysis_strdup(a, value);
    void *arr = a->unchecked;
    /* The capacity is implicit: the array doubles whenever the count
     * reaches a power of two (one entry per cache update adds up). */
    size_t n = a->n_unchecked;
    bool grow = n == 0 || (n & (n - 1)) == 0;
    if (!u.reason || (rule && !u.rule) || (graph && !u.graph) ||
        (node && !u.node) || (value && !u.value) ||
        (grow && (n > SIZE_MAX / 4 ||
                  !(arr = oac_reallocarray(ctx, a->unchecked, n ? 2 * n : 1,
                                           sizeof *a->unchecked))))) {
        /* What the arena holds goes with the analysis. */
        return oac_err(ctx, OAC_ENOMEM, "out of memory");
    }
    a->unchecked = arr;
    a->unchecked[a->n_unchecked++] = u;
    return OAC_OK;
}

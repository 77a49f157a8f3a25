/* check.c: oac_check, the pass table, and the analysis object.
 *
 * Owns: the order of the checker's passes (checker.h), the lifetime of the
 * shared oac_check_state, and the public oac_analysis accessors.
 * Contract: section 3 (every static rule runs on every check) and
 * section 4 (alias_classes, memory_plan, unchecked rules as data).
 *
 * Invariants:
 *  1. Passes run in table order; a pass returns a negative status only for
 *     an operational failure, which stops the run and frees everything
 *     (no partial analysis is returned then).
 *  2. Findings never stop the run: every pass runs on a model with
 *     errors, so one check reports every problem.
 *  3. The graph index and alias classes live only during oac_check; what
 *     outlives it is in oac_analysis, owned by the caller.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alias.h"
#include "arena.h"
#include "checker.h"
#include "graph.h"

static const struct {
    const char *name;
    oac_pass_fn fn;
} passes[] = {
    { "graph", oac_pass_graph },
    { "structure", oac_pass_structure },
    { "access", oac_pass_access },
    { "ports", oac_pass_ports },
    { "classes", oac_pass_classes },
    { "branches", oac_pass_branches },
    { "hazards", oac_pass_hazards },
    { "metadata", oac_pass_metadata },
    { "shapes", oac_pass_shapes },
    { "capacity", oac_pass_capacity },
    { "pages", oac_pass_pages },
    { "plan", oac_pass_plan },
};

int oac_check(oac_ctx *ctx, oac_analysis **out, const oac_model *model,
              const oac_check_opts *opts, oac_diags *diags)
{
    static const oac_check_opts no_opts = { 0 };
    if (!out)
        return oac_err(ctx, OAC_EINVAL, "oac_check: no output");
    *out = NULL;
    if (!model || !model->proto || !diags)
        return oac_err(ctx, OAC_EINVAL, "oac_check: no model or diagnostics");
    oac_check_state st = {
        .ctx = ctx, .model = model, .opts = opts ? opts : &no_opts,
        .diags = diags,
    };
    int rc = OAC_OK;
    st.out = oac_calloc(ctx, 1, sizeof *st.out);
    if (!st.out)
        return OAC_ENOMEM;
    st.out->ctx = ctx;
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++)
        if ((rc = passes[i].fn(&st)) < 0)
            goto done;
    rc = OAC_OK;

done:
    /* A shapes pass that kept its state in st hands it to the analysis. */
    if (st.shapes && !st.out->shapes)
        st.out->shapes = st.shapes;
    oac_aliases_free(st.aliases);
    oac_graphs_free(st.graphs);
    if (rc < 0) {
        oac_analysis_free(st.out);
        return rc;
    }
    *out = st.out;
    return OAC_OK;
}


void oac_analysis_free(oac_analysis *a)
{
    if (!a)
        return;
    oac_ctx *ctx = a->ctx;
    /* Every string and array of the classes is in the arena. */
    oac_dealloc(ctx, a->classes);
    oac_dealloc(ctx, a->unchecked);
    for (size_t i = 0; i < a->n_dims; i++)
        oac_dealloc(ctx, a->dim_names[i]);
    oac_dealloc(ctx, a->dim_names);
    oac_dealloc(ctx, a->dim_values);
    if (a->shapes && a->shapes_free)
        a->shapes_free(a->shapes);
    oac_arena_free(a->arena);
    oac_dealloc(ctx, a);
}

/* n bytes of the analysis's arena, made on first use (a model without
 * classes or unchecked entries needs none; a test may fill an analysis of
 * its own). */
static void *arena_alloc(oac_analysis *a, size_t n)
{
    if (!a->arena && !(a->arena = oac_arena_new(a->ctx)))
        return NULL;
    return oac_arena_alloc(a->arena, n);
}

char *oac_analysis_strdup(oac_analysis *a, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = arena_alloc(a, n);
    if (p)
        memcpy(p, s, n);
    return p;
}

void *oac_analysis_calloc(oac_analysis *a, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        oac_err(a->ctx, OAC_ENOMEM, "out of memory");
        return NULL;
    }
    void *p = arena_alloc(a, total);
    if (p)
        memset(p, 0, total);
    return p;
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
        if ((u.reason = arena_alloc(a, (size_t)n + 1)))
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

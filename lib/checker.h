/* checker.h: the state the checker's passes share, and the passes.
 *
 * oac_check (check.c) builds an oac_check_state, runs the passes of the
 * table in check.c in order, and hands the filled oac_analysis to the
 * caller.  Each pass reads what earlier passes left in the state and adds
 * findings to st->diags; a pass returns an oac_status only for operational
 * failures (out of memory), never for findings.
 *
 * Pass order (check.c):
 *   1. graph       graph.c          index scopes, producers, consumers
 *  1b. structure   structure.c      model-invalid: op_type, names, payloads
 *   2. access      alias_rules.c    access-invalid
 *   3. ports       alias_rules.c    output_alias ports, kinds, duplicates,
 *                                   operand-invalid, alias-implied
 *   4. classes     alias_classes.c  union-find over output_alias/alias_of,
 *                                   alias-mismatch/unknown/unbacked/cycle/
 *                                   missing-boundary, root immutability
 *   5. branches    branches.c       If/Loop/Scan/function boundaries
 *   6. hazards     hazards.c        stale reads, double writes
 *   7. metadata    alias_rules.c    metadata-alias
 *   8. shapes      shapes.c         ShapesContext over every scope, class
 *                                   type/rank/shape unification
 *   9. capacity    capacity.c       position + length <= capacity
 *  10. pages       pages.c          page-type-invalid
 *  11. plan        plan.c           analysis->plan
 * (analysis->classes are created by pass 4 and completed by pass 8.)
 */
#ifndef OAC_CHECKER_H
#define OAC_CHECKER_H

#include "oac_int.h"

struct oac_graphs;    /* graph.h */
struct oac_aliases;   /* alias.h */
struct oac_shapes;    /* shapes.h */

/* The analysis result (public type oac_analysis, opaque outside). */
struct oac_analysis {
    oac_ctx *ctx;
    oac_alias_class *classes;
    size_t n_classes;
    oac_unchecked *unchecked;
    size_t n_unchecked;
    oac_memory_plan plan;
    /* dim_param bindings in force after unification: parallel arrays,
     * names owned. */
    char **dim_names;
    int64_t *dim_values;
    size_t n_dims;
    /* Values known before running (--input files): owned by the shapes
     * pass, read by the runtime for its inputs. */
    struct oac_shapes *shapes;
    /* How to free shapes (set by the pass that makes it; check.c calls it
     * from oac_analysis_free). */
    void (*shapes_free)(struct oac_shapes *shapes);
    /* Storage of the classes' root, graph, members (array and names) and
     * of every string of the unchecked entries: a model has thousands,
     * released at once with the analysis (made on first use).  Classes'
     * dims and dim_params are oac_alloc'd (shapes.c), freed one by one. */
    struct oac_arena *arena;
};

typedef struct oac_check_state {
    oac_ctx *ctx;
    const oac_model *model;
    const oac_check_opts *opts;
    oac_diags *diags;
    struct oac_graphs *graphs;    /* pass 1 */
    struct oac_aliases *aliases;  /* passes 4-5 */
    struct oac_shapes *shapes;    /* pass 8 (moved into out at the end) */
    oac_analysis *out;
} oac_check_state;

typedef int (*oac_pass_fn)(oac_check_state *st);

/* The passes, in check.c's table order.  Owners: graph.c, alias_rules.c,
 * alias_classes.c, branches.c, hazards.c (1-7), shapes.c (8),
 * capacity.c (9), pages.c (10), plan.c (11). */
int oac_pass_graph(oac_check_state *st);
int oac_pass_structure(oac_check_state *st);
int oac_pass_access(oac_check_state *st);
int oac_pass_ports(oac_check_state *st);
int oac_pass_classes(oac_check_state *st);
int oac_pass_branches(oac_check_state *st);
int oac_pass_hazards(oac_check_state *st);
int oac_pass_metadata(oac_check_state *st);
/* Shapes also fill elem_type, rank, dims, dim_params and bytes of the
 * classes pass 4 created in st->out->classes, and report
 * type/rank/shape-mismatch and the type parts of operand-invalid. */
int oac_pass_shapes(oac_check_state *st);
int oac_pass_capacity(oac_check_state *st);
int oac_pass_pages(oac_check_state *st);
int oac_pass_plan(oac_check_state *st);

/* A copy of s (NULL for NULL) and zeroed n * size bytes in the
 * analysis's arena, freed with the analysis (check.c).  NULL on OOM, with
 * the message on the context. */
char *oac_analysis_strdup(oac_analysis *a, const char *s);
void *oac_analysis_calloc(oac_analysis *a, size_t n, size_t size);

/* Append an entry to the analysis's unchecked list (check.c); its strings
 * are copied into the analysis's arena (a rule, graph or reason equal to
 * the previous entry's shares its copy). */
int oac_unchecked_add(oac_analysis *a, const char *rule, const char *graph,
                      const char *node, const char *value,
                      const char *fmt, ...) OAC_PRINTF(6, 7);

#endif /* OAC_CHECKER_H */

/* check/checker.h: the state the checker's passes share, and the passes.
 *
 * oac_check (check/check.c) builds an oac_check_state, runs the passes of the
 * table in check/check.c in order, and hands the filled oac_analysis
 * (check/analysis.h) to the caller.  Each pass reads what earlier passes left in the state and adds
 * findings to st->diags; a pass returns an oac_status only for operational
 * failures (out of memory), never for findings.
 *
 * Pass order (check/check.c):
 *   1. graph       check/graph.c          index scopes, producers, consumers
 *  1b. structure   check/structure.c      model-invalid: op_type, names, payloads
 *   2. schedule    check/order.c       topological order of every scope,
 *                                   model-invalid for a cycle
 *   3. access      check/alias_rules.c    access-invalid
 *   4. ports       check/alias_rules.c    output_alias ports, kinds, duplicates,
 *                                   operand-invalid, alias-implied
 *   5. classes     check/alias_classes.c  union-find over output_alias/alias_of,
 *                                   alias-mismatch/unknown/unbacked/cycle/
 *                                   missing-boundary, root immutability
 *   6. branches    check/branches.c       If/Loop/Scan/function boundaries
 *   7. hazards     check/hazards.c        stale reads, double writes
 *   8. metadata    check/alias_rules.c    metadata-alias
 *   9. shapes      check/shapes.c         ShapesContext over every scope, class
 *                                   type/rank/shape unification
 *  10. capacity    check/capacity.c       position + length <= capacity
 *  11. pages       check/pages.c          page-type-invalid
 *  12. plan        check/plan.c           analysis->plan, a plan per scope
 * (analysis->classes are created by pass 5 and completed by pass 9.)
 * Passes that walk nodes in order (shapes, plan, and the members of a
 * class) walk the schedule of pass 2, not the file.
 */
#ifndef OAC_CHECKER_H
#define OAC_CHECKER_H

#include "check/analysis.h"
#include "oac_int.h"

struct oac_graphs;    /* check/graph.h */
struct oac_aliases;   /* check/alias.h */
struct oac_shapes;    /* check/shapes.h */
struct oac_schedule;  /* check/order.h */

typedef struct oac_check_state {
    oac_ctx *ctx;
    const oac_model *model;
    const oac_check_opts *opts;
    oac_diags *diags;
    struct oac_graphs *graphs;    /* pass 1 */
    struct oac_schedule *schedule;/* pass 2 */
    struct oac_aliases *aliases;  /* passes 4-5 */
    struct oac_shapes *shapes;    /* pass 8 */
    oac_analysis *out;
} oac_check_state;

typedef int (*oac_pass_fn)(oac_check_state *st);

/* The passes, in check/check.c's table order.  Owners: check/graph.c (1),
 * check/order.c (2), check/alias_rules.c, check/alias_classes.c, check/branches.c, check/hazards.c
 * (3-8), check/shapes.c (9), check/capacity.c (10), check/pages.c (11), check/plan.c (12). */
int oac_pass_graph(oac_check_state *st);
int oac_pass_structure(oac_check_state *st);
int oac_pass_schedule(oac_check_state *st);
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

#endif /* OAC_CHECKER_H */

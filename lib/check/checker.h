/* check/checker.h: the state the checker's passes share, and the passes.
 *
 * oac_check (check/check.c) builds an oac_check_state, runs the passes of the
 * table in check/check.c in order, and hands the filled oac_analysis
 * (check/analysis.h) to the caller.  Each pass reads what earlier passes left in the state and adds
 * findings to st->diags; a pass returns an oac_status only for operational
 * failures (out of memory), never for findings.
 *
 * The passes and their order are the table check/passes.def (name,
 * owner, what each does): this header declares them and numbers them
 * (OAC_PASS_GRAPH ...) from it, check/check.c runs them from it.
 * (analysis->classes are created by the classes pass and completed
 * there when the shapes pass has typed their members.)
 * Passes that walk nodes in order (shapes, plan, and the members of a
 * class) walk the schedule of pass 2, not the file.
 */
#ifndef OAC_CHECKER_H
#define OAC_CHECKER_H

#include "check/analysis.h"
#include "oac_int.h"

struct oac_graphs;    /* check/graph.h */
struct oac_aliases;   /* check/alias.h */
struct oac_shapes;    /* check/shapes_store.h */
struct oac_schedule;  /* check/order.h */

typedef struct oac_check_state {
    oac_ctx *ctx;
    const oac_model *model;
    const oac_check_opts *opts;
    oac_diags *diags;
    struct oac_graphs *graphs;    /* the graph pass */
    struct oac_schedule *schedule;/* the schedule pass */
    struct oac_aliases *aliases;  /* the ports and classes passes */
    struct oac_shapes *shapes;    /* the shapes pass */
    oac_analysis *out;
    /* An analysis whose --input files the shapes pass borrows instead of
     * reading them again (check/shapes_at.c); NULL: read them. */
    const oac_analysis *inputs_from;
} oac_check_state;

typedef int (*oac_pass_fn)(oac_check_state *st);

/* The passes, in table order (check/passes.def): OAC_PASS_<NAME> is a
 * pass's place in the order, oac_pass_<name> the pass. */
enum {
#define OAC_PASS(name, NAME, owner, what) OAC_PASS_##NAME,
#include "check/passes.def"
#undef OAC_PASS
    OAC_PASS_COUNT
};

#define OAC_PASS(name, NAME, owner, what) int oac_pass_##name(oac_check_state *st);
#include "check/passes.def"
#undef OAC_PASS

#endif /* OAC_CHECKER_H */

/* check/shapes_at.h: the shapes pass alone (or with the plan), at other
 * dims, over an analysis already made (contract section 8: the run's
 * pre-check reads the dims a generation loop changes step by step as
 * symbols, and the run plans each step at its own dims).
 *
 * Owns oac_check_shapes_at and oac_check_plan_at.  Invariants:
 *  1. The graph index, schedule and alias forest are the given
 *     analysis's, borrowed, and so are the --input files it read (a run
 *     that plans every step reads none of them again): the result must
 *     not outlive it.  Nothing of the given analysis changes.
 *  2. Only the shapes pass runs (with its --input files), and for
 *     oac_check_plan_at the plan pass after it: no structure, alias or
 *     capacity pass runs again, and their findings are dropped (the
 *     given analysis's check reported them).
 */
#ifndef OAC_CHECK_SHAPES_AT_H
#define OAC_CHECK_SHAPES_AT_H

#include "oac_int.h"

/* A new analysis holding only types and known values (->shapes, and the
 * --input files and dim_params they read) of an's model at opts' --dim
 * and --input.  Free it with oac_analysis_free before an. */
int oac_check_shapes_at(oac_ctx *ctx, const oac_analysis *an,
                        const oac_check_opts *opts, oac_analysis **out);

/* The same, and the memory plan at those dims (->plan, ->plans): what
 * `run` compares a later step's measured peak with (run/session.c). */
int oac_check_plan_at(oac_ctx *ctx, const oac_analysis *an,
                      const oac_check_opts *opts, oac_analysis **out);

#endif /* OAC_CHECK_SHAPES_AT_H */

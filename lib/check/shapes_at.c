/* check/shapes_at.c: the shapes pass alone over a made analysis
 * (check/shapes_at.h).
 *
 * Owns oac_check_shapes_at: what `run` reads when a generation loop's
 * symbols must stay symbols (run/precheck.c), without a second full
 * check; and oac_check_plan_at, the same with the memory plan, which
 * `run` makes for each later step of such a loop (run/session.c).
 * Contract: section 8 (the pre-check), section 4 (the analysis).
 * Invariants: check/shapes_at.h.
 */
#include "check/analysis.h"
#include "check/checker.h"

/* The shapes pass and, with plan, the plan pass over an (invariant 1). */
static int passes_at(oac_ctx *ctx, const oac_analysis *an,
                     const oac_check_opts *opts, bool plan, oac_analysis **out)
{
    static const oac_check_opts no_opts = { 0 };
    *out = NULL;
    if (!an || !an->graphs)
        return oac_err(ctx, OAC_EINVAL, "oac_check_shapes_at: no analysis");
    oac_diags *scratch = oac_diags_new(ctx);
    oac_check_state st = {
        .ctx = ctx, .model = an->model, .opts = opts ? opts : &no_opts,
        .diags = scratch, .graphs = an->graphs, .schedule = an->schedule,
        .aliases = an->aliases, .inputs_from = an,
    };
    st.out = scratch ? oac_analysis_new(ctx, an->model) : NULL;
    if (!st.out) {
        oac_diags_free(scratch);
        return oac_err(ctx, OAC_ENOMEM, "out of memory");
    }
    int rc = oac_pass_shapes(&st);
    st.out->shapes = st.shapes;       /* the only part it owns but inputs */
    /* The plan's schedules are the new analysis's too (check/plan.c). */
    if (rc >= 0 && plan)
        rc = oac_pass_plan(&st);
    oac_diags_free(scratch);
    if (rc < 0) {
        oac_analysis_free(st.out);
        return rc;
    }
    *out = st.out;
    return OAC_OK;
}

int oac_check_shapes_at(oac_ctx *ctx, const oac_analysis *an,
                        const oac_check_opts *opts, oac_analysis **out)
{
    return passes_at(ctx, an, opts, false, out);
}

int oac_check_plan_at(oac_ctx *ctx, const oac_analysis *an,
                      const oac_check_opts *opts, oac_analysis **out)
{
    return passes_at(ctx, an, opts, true, out);
}

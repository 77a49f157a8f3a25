/* check/check.c: the pass table (oac_check_passes; the public oac_check,
 * annotate/pairs.c, runs it and then gives every cache its verdict).
 *
 * Owns: the order of the checker's passes (check/checker.h) and the lifetime of
 * the shared oac_check_state.  The analysis object they fill is
 * check/analysis.c's.  Contract: section 3 (every static rule runs on every
 * check) and section 4 (the analysis is the report's data).
 *
 * Invariants:
 *  1. Passes run in table order; a pass returns a negative status only for
 *     an operational failure, which stops the run and frees everything
 *     (no partial analysis is returned then).
 *  2. Findings never stop the run: every pass runs on a model with
 *     errors, so one check reports every problem.
 *  3. What the passes build (graph index, alias forest, shapes) is handed
 *     to the analysis at the end, whatever happened, and freed with it:
 *     the runtime reads them (check/analysis.h).
 */
#include "check/checker.h"

static const struct {
    const char *name;
    oac_pass_fn fn;
} passes[] = {
    { "graph", oac_pass_graph },
    { "structure", oac_pass_structure },
    { "schedule", oac_pass_schedule },
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

int oac_check_passes(oac_ctx *ctx, oac_analysis **out, const oac_model *model,
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
    st.out = oac_analysis_new(ctx, model);
    if (!st.out)
        return OAC_ENOMEM;
    size_t first = oac_diags_count(diags);
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++)
        if ((rc = passes[i].fn(&st)) < 0)
            break;
    for (size_t i = first; i < oac_diags_count(diags); i++)
        st.out->n_invalid += oac_diags_get(diags, i)->code == OAC_MODEL_INVALID;
    /* Invariant 3: the analysis owns what the passes made. */
    st.out->graphs = st.graphs;
    st.out->schedule = st.schedule;
    st.out->aliases = st.aliases;
    st.out->shapes = st.shapes;
    if (rc < 0) {
        oac_analysis_free(st.out);
        return rc;
    }
    *out = st.out;
    return OAC_OK;
}

/* runtime.c: placeholder until the reference runtime lands. */
#include "oac_int.h"

int oac_run(oac_ctx *ctx, oac_execution **out, const oac_model *model,
            const oac_analysis *analysis, const oac_run_opts *opts,
            oac_diags *diags)
{
    *out = NULL;
    return oac_err(ctx, OAC_EUNSUPPORTED, "the reference runtime is not built yet");
}

void oac_execution_free(oac_execution *exec)
{
    (void)exec;
}

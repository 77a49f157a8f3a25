/* embed.c: check a model from C with the installed library (make installcheck).
 *   cc embed.c $(pkg-config --cflags --libs onnx-alias-check) -o embed */
#include <stdio.h>
#include <onnx-alias-check/oac.h>

int main(int argc, char **argv)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *diags = ctx ? oac_diags_new(ctx) : NULL;
    oac_model *model = NULL;
    oac_analysis *analysis = NULL;
    if (argc != 2 || !diags)
        return fprintf(stderr, "usage: embed MODEL.onnx\n"), 2;
    int rc = oac_model_load(ctx, &model, argv[1], diags);
    if (rc == OAC_OK)
        rc = oac_check(ctx, &analysis, model, NULL, diags);
    oac_report_input in = { .path = argv[1], .model = model, .diags = diags,
                            .analysis = analysis };
    char *text = oac_report_text(ctx, &in);   /* one line per finding, a summary */
    fputs(text ? text : oac_errmsg(ctx), stdout);
    int status = rc < 0 ? 2 : oac_report_failed(&in) ? 1 : 0;
    oac_free(text);
    oac_analysis_free(analysis);
    oac_model_free(model);
    oac_diags_free(diags);
    oac_ctx_free(ctx);
    return status;
}

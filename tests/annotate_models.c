/* annotate_models.c: writes the look-alike GenAI decoders of
 * tests/genai_models.c for tests/cli_annotate.sh (contract, section 7).
 *
 *   annotate_models DIR      DIR/<name>.onnx (+ <name>.genai_config.json)
 *                            for every row; exit 1 when one cannot be
 *                            written
 */
#include <stdio.h>

#include "genai_models.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: annotate_models DIR\n");
        return 2;
    }
    oac_ctx *ctx = oac_ctx_new();
    int status = ctx ? 0 : 1;
    for (size_t i = 0; ctx && i < genai_n_models; i++)
        if (genai_model_write(ctx, &genai_models[i], argv[1]) != OAC_OK) {
            fprintf(stderr, "annotate_models: %s: %s\n", genai_models[i].name,
                    oac_errmsg(ctx));
            status = 1;
        }
    oac_ctx_free(ctx);
    return status;
}

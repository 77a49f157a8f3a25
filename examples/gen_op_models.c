/* gen_op_models.c: write every operator-form model of examples/op_models.c.
 *
 * Usage: gen_op_models DIR.  Writes DIR/<name>.onnx for each row, at build
 * time (Makefile.am, examples block), for tests/ort_diff.sh's side-by-side
 * runs with ONNX Runtime.  A program, not the library: it may print and
 * exit.
 */
#include <stdio.h>
#include <stdlib.h>

#include "op_models.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    oac_ctx *ctx = oac_ctx_new();
    if (!ctx) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        return 1;
    }
    int status = 0;
    for (size_t i = 0; i < oac_op_models_count; i++) {
        const oac_op_model *m = &oac_op_models[i];
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.onnx", argv[1], m->name);
        oac_mb *mb = oac_mb_new(ctx);
        if (!mb) {
            fprintf(stderr, "%s: out of memory\n", argv[0]);
            status = 1;
            break;
        }
        m->build(mb, m->elem);
        if (oac_mb_write(mb, path) != OAC_OK) {
            fprintf(stderr, "%s: %s: %s\n", argv[0], path, oac_errmsg(ctx));
            status = 1;
        }
        oac_mb_free(mb);
    }
    oac_ctx_free(ctx);
    return status;
}

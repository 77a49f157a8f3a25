/* gen_decoder.c: decoder-shaped models for the issue-3 benchmark.
 *
 * Usage: gen_decoder LAYERS OUT.onnx [--concat]
 *
 * Writes the toy decoder of examples/models.c with LAYERS layers: per
 * layer about 20 ordinary nodes (projections, reshapes, attention) and
 * two annotated caches (READ_WRITE inputs updated in place by CacheUpdate
 * with output_alias, outputs with alias_of).  The file is stamped IR 8 /
 * opset 17 so that Debian's onnx 1.12 checker, the baseline of
 * bench/bench_check.sh, accepts it: the contract's fields are unknown
 * fields to it, and onnx_alias is a custom domain it does not resolve.
 * A program, not the library: it may print and exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../examples/models.h"

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "--concat") != 0)) {
        fprintf(stderr, "usage: %s LAYERS OUT.onnx [--concat]\n", argv[0]);
        return 2;
    }
    char *end;
    long layers = strtol(argv[1], &end, 10);
    if (*end || layers < 1 || layers > 100000) {
        fprintf(stderr, "%s: LAYERS must be 1..100000\n", argv[0]);
        return 2;
    }
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = ctx ? oac_mb_new(ctx) : NULL;
    if (!mb) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        oac_ctx_free(ctx);
        return 1;
    }
    oac_example_toy_decoder(mb, (int)layers, argc != 4);
    oac_mb_ir_version(mb, 8);
    oac_mb_opset(mb, "", 17);
    int rc = oac_mb_write(mb, argv[2]);
    if (rc != OAC_OK)
        fprintf(stderr, "%s: %s\n", argv[0], oac_errmsg(ctx));
    oac_mb_free(mb);
    oac_ctx_free(ctx);
    return rc == OAC_OK ? 0 : 1;
}

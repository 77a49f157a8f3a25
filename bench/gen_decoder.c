/* gen_decoder.c: decoder-shaped models for the issue-3 benchmark.
 *
 * Usage: gen_decoder LAYERS OUT.onnx [--concat] [--hidden N] [--heads N]
 *                    [--head-size N] [--info]
 *
 * Writes the toy decoder of examples/models.c with LAYERS layers: per
 * layer about 20 ordinary nodes (projections, reshapes, attention) and
 * two annotated caches (READ_WRITE inputs updated in place by CacheUpdate
 * with output_alias, outputs with alias_of).  The file is stamped IR 8 /
 * opset 17 so that Debian's onnx 1.12 checker, the baseline of
 * bench/bench_check.sh, accepts it: the contract's fields are unknown
 * fields to it, and onnx_alias is a custom domain it does not resolve.
 *
 * Sizes: --hidden (default 46) sets the width; the four projections of a
 * layer hold 4 * hidden * heads * head_size FLOATs, so the weights grow
 * with the layers as a real decoder's do.  The default is calibrated on
 * the figure: 46 (2 heads of 23) is 33,856 weight bytes a layer,
 * 66 MiB at 2048 layers (69,344,004 bytes with embedding, lm_head, mask
 * and scale), where Debian's onnx 1.12 checker peaks at 556 MiB (the
 * issue: 554 MiB).  Unless given, heads and head_size follow from
 * hidden: head_size 64 when hidden is a multiple of 64 from 128 up, else
 * 2 heads of hidden / 2 (1 head for odd hidden).  --hidden 8 is the graph-only model (2 x 4,
 * 1 KiB of weights a layer), byte for byte what oac_example_toy_decoder
 * writes.  --info prints "nodes N weight_bytes B" on stdout.
 * A program, not the library: it may print and exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../examples/models.h"

#define DEFAULT_HIDDEN 46

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s LAYERS OUT.onnx [--concat] [--hidden N] [--heads N] "
                    "[--head-size N] [--info]\n", prog);
    exit(2);
}

/* A positive decimal no larger than max, or exit 2. */
static long number(const char *prog, const char *what, const char *s, long max)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 1 || v > max) {
        fprintf(stderr, "%s: %s must be 1..%ld\n", prog, what, max);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    const char *prog = argv[0];
    const char *pos[2] = { NULL, NULL };
    int npos = 0, concat = 0, info = 0;
    long hidden = DEFAULT_HIDDEN, heads = 0, head_size = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--concat")) {
            concat = 1;
        } else if (!strcmp(a, "--info")) {
            info = 1;
        } else if (!strcmp(a, "--hidden") || !strcmp(a, "--heads") ||
                   !strcmp(a, "--head-size")) {
            if (i + 1 >= argc)
                usage(prog);
            long v = number(prog, a, argv[++i], OAC_TOY_MAX_DIM);
            if (!strcmp(a, "--hidden"))
                hidden = v;
            else if (!strcmp(a, "--heads"))
                heads = v;
            else
                head_size = v;
        } else if (a[0] == '-' && a[1]) {
            usage(prog);
        } else if (npos < 2) {
            pos[npos++] = a;
        } else {
            usage(prog);
        }
    }
    if (npos != 2)
        usage(prog);
    long layers = number(prog, "LAYERS", pos[0], 100000);
    if (!heads && !head_size) {
        if (hidden >= 128 && hidden % 64 == 0)
            head_size = 64;
        else
            heads = hidden % 2 ? 1 : 2;
    }
    if (!heads)
        heads = hidden / head_size > 0 ? hidden / head_size : 1;
    if (!head_size)
        head_size = hidden / heads > 0 ? hidden / heads : 1;
    if (heads * head_size > OAC_TOY_MAX_DIM) {
        fprintf(stderr, "%s: heads * head_size must be at most %d\n", prog, OAC_TOY_MAX_DIM);
        return 2;
    }

    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = ctx ? oac_mb_new(ctx) : NULL;
    if (!mb) {
        fprintf(stderr, "%s: out of memory\n", prog);
        oac_ctx_free(ctx);
        return 1;
    }
    int rc = oac_example_toy_decoder_sized(mb, (int)layers, !concat, (int)heads,
                                           (int)head_size, (int)hidden);
    if (rc == OAC_OK) {
        oac_mb_ir_version(mb, 8);
        oac_mb_opset(mb, "", 17);
        rc = oac_mb_write(mb, pos[1]);
    }
    if (rc != OAC_OK) {
        fprintf(stderr, "%s: %s\n", prog, oac_errmsg(ctx));
    } else if (info) {
        /* Every FLOAT initializer: projections, embedding, lm_head, mask
         * table and scale. */
        const Onnx__GraphProto *g = oac_mb_proto(mb)->graph;
        unsigned long long bytes = 0;
        for (size_t i = 0; i < g->n_initializer; i++)
            if (g->initializer[i]->data_type == OAC_T_FLOAT)
                bytes += 4ull * g->initializer[i]->n_float_data;
        printf("nodes %zu weight_bytes %llu heads %ld head_size %ld hidden %ld\n",
               g->n_node, bytes, heads, head_size, hidden);
    }
    oac_mb_free(mb);
    oac_ctx_free(ctx);
    return rc == OAC_OK ? 0 : 1;
}

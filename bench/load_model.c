/* load_model.c: load (and optionally save) one model through the library,
 * for bench/bench_load_rss.sh: the loader alone, without the checker.
 *
 *   load_model FILE [OUT]
 */
#include <stdio.h>

#include "oac.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: load_model FILE [OUT]\n");
        return 2;
    }
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m;
    int rc = oac_model_load(ctx, &m, argv[1], d);
    if (rc == 0 && argc > 2)
        rc = oac_model_save(ctx, m, argv[2]);
    if (rc != 0)
        fprintf(stderr, "load_model: %s\n", oac_errmsg(ctx));
    else
        printf("%s: loaded, %zu diagnostics\n", argv[1], oac_diags_count(d));
    oac_model_free(m);
    oac_diags_free(d);
    oac_ctx_free(ctx);
    return rc ? 1 : 0;
}

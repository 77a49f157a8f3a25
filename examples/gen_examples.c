/* gen_examples.c: write every example model of examples/models.c.
 *
 * Usage: gen_examples DIR.  Writes DIR/<name>.onnx for each row of the
 * table, at build time (Makefile.am, examples block), so the .onnx files
 * are never committed and always match the builder and the table.
 * gen_examples --list prints one line per row, "NAME CODE,CODE..." ("-"
 * when no code is expected), for shell tests (tests/examples_check.sh).
 * A program, not the library: it may print and exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR | --list\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < oac_examples_count; i++) {
            const oac_example *ex = &oac_examples[i];
            printf("%s ", ex->name);
            for (int c = 0; ex->expect[c]; c++)
                printf("%s%s", c ? "," : "", ex->expect[c]);
            printf("%s\n", ex->expect[0] ? "" : "-");
        }
        return ferror(stdout) ? 1 : 0;
    }
    oac_ctx *ctx = oac_ctx_new();
    if (!ctx) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        return 1;
    }
    int status = 0;
    for (size_t i = 0; i < oac_examples_count; i++) {
        const oac_example *ex = &oac_examples[i];
        size_t len = strlen(argv[1]) + strlen(ex->name) + sizeof "/.onnx";
        char *path = malloc(len);
        if (!path) {
            fprintf(stderr, "%s: out of memory\n", argv[0]);
            status = 1;
            break;
        }
        snprintf(path, len, "%s/%s.onnx", argv[1], ex->name);
        if (oac_example_write(ctx, ex, path) != OAC_OK) {
            fprintf(stderr, "%s: %s: %s\n", argv[0], path, oac_errmsg(ctx));
            status = 1;
        }
        free(path);
    }
    oac_ctx_free(ctx);
    return status;
}

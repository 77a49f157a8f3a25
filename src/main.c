/* main.c: the entry point of onnx-alias-check (contract, section 5).
 *
 * Owns the process: one library context, the parsed command line, the
 * dispatch to `check`, `run`, `annotate` or the rules' documentation
 * (--list-rules, --explain), and the exit status, which is always one
 * of CLI_EXIT_OK (0), CLI_EXIT_ERRORS (1) or CLI_EXIT_USAGE (2).
 *
 * Invariant: main is the only place that decides the process's status;
 * the commands return it and never call exit().
 *
 * The process's allocator policy is main's too (the library sets none):
 * glibc's fastbins are off (malloc_policy).
 */
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli.h"

/* OAC_FAIL_ALLOC_AFTER=N (a testing aid, man page ENVIRONMENT): the
 * library's Nth allocation and every one after it fail, as
 * oac_ctx_fail_alloc_after does in the library's own tests, until the
 * tool reports the failure (cli_model_fail). */
static void inject_failures(oac_ctx *ctx)
{
    const char *s = getenv("OAC_FAIL_ALLOC_AFTER");
    char *end;
    unsigned long n = s && *s ? strtoul(s, &end, 10) : 0;
    if (n && !*end)
        oac_ctx_fail_alloc_after(ctx, n);
}

/* No fastbins (glibc): a JSON report is a tree of some 100,000 small
 * jansson allocations, freed one by one; with fastbins they stay
 * unmerged until the next large free (the analysis, the model), which
 * then walks and merges them all at once (malloc_consolidate), a walk
 * of cold memory.  Without fastbins each free merges while its chunk is
 * hot (tcache still serves the small sizes).  check --format=json of the
 * 2048-layer bench decoder (3 MB of JSON): 0.91x the CPU time, the median
 * of 15 paired runs (0.24 -> 0.22 s); text, SARIF and a 64-step run of a
 * real decoder unchanged. */
static void malloc_policy(void)
{
#if defined(__GLIBC__) && defined(M_MXFAST)
    (void)mallopt(M_MXFAST, 0);
#endif
}

int main(int argc, char **argv)
{
    cli c;
    int status;
    oac_ctx *ctx = NULL;

    malloc_policy();
    switch (cli_parse(&c, argc, argv)) {
    case CLI_PARSE_DONE:
        status = CLI_EXIT_OK;
        goto done;
    case CLI_PARSE_GO:
        break;
    default:
        status = CLI_EXIT_USAGE;
        goto done;
    }
    if (!cli_models_expand(&c) || !cli_output_usable(&c)) {
        status = CLI_EXIT_USAGE;
        goto done;
    }
    ctx = oac_ctx_new();
    if (!ctx) {
        cli_error("out of memory");
        status = CLI_EXIT_USAGE;
        goto done;
    }
    inject_failures(ctx);
    status = c.cmd == CLI_CMD_RULES ? cmd_rules(ctx, &c)
             : c.cmd == CLI_CMD_RUN ? cmd_run(ctx, &c)
             : c.cmd == CLI_CMD_ANNOTATE ? cmd_annotate(ctx, &c)
             : cmd_check(ctx, &c);
done:
    oac_ctx_free(ctx);
    cli_free(&c);
    /* A report written to a pipe that failed late must not pass for a
     * success. */
    if (fflush(stdout) != 0 && status == CLI_EXIT_OK)
        status = CLI_EXIT_USAGE;
    return status;
}

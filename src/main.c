/* main.c: the entry point of onnx-alias-check (contract, section 5).
 *
 * Owns the process: one library context, the parsed command line, the
 * dispatch to `check`, `run`, `annotate` or the rules' documentation
 * (--list-rules, --explain), and the exit status, which is always one
 * of CLI_EXIT_OK (0), CLI_EXIT_ERRORS (1) or CLI_EXIT_USAGE (2).
 *
 * Invariant: main is the only place that decides the process's status;
 * the commands return it and never call exit().
 */
#include <stdlib.h>

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

int main(int argc, char **argv)
{
    cli c;
    int status;
    oac_ctx *ctx = NULL;

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

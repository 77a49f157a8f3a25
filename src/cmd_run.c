/* cmd_run.c: the `run` command (contract, section 5).
 *
 * Owns running one model on the reference runtime: check first with the
 * same --dim/--input, run only a model free of error diagnostics, and
 * report the check's and the run's findings in one report, with the
 * report's `execution` object (and, in text, its one-screen summary).
 *
 * Invariants:
 *  1. Nothing executes when the check found an error: oac_run sees the
 *     check's errors and runs no step, so the report has the check's
 *     diagnostics and an `execution` with steps_completed 0, exit 1 (2
 *     for an unreadable model, which has no execution).  Warnings do not
 *     stop the run; with --werror they still make the status "error".
 *  2. A refusal or finding of the runtime is a diagnostic (oac_run puts
 *     it in the same list); the report shows what was measured up to it.
 *  3. OAC_EINVAL from the runtime (e.g. a dimension left unknown, a
 *     --readonly name that is no cache, a --dim on a symbol the
 *     generation loop binds) is bad usage: stderr, exit 2, no report.  Every other failure is a diagnostic in the report: the
 *     runtime's own (run-time findings, a failure at a node, a --dump
 *     file that could not be written: output-write-failed), else one
 *     added here (parse-error for input that could not be read at run
 *     time, analysis-failed for anything else), so status and exit
 *     status agree (cmd_check.c invariant 2).
 *  4. The check is made at the run's first step (oac_run_dims: --dim and
 *     the symbols the generation loop binds, contract 8), so the report's
 *     memory plan is that step's and a decoder needs no --dim for them.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The default memory budget of a run: half the physical memory (the
 * man page, `--max-memory`), so a hostile model is refused before the
 * machine starts swapping or the kernel kills the tool.  0 (no budget)
 * when the system does not say. */
static uint64_t default_budget(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0)
        return 0;
    uint64_t bytes;
    if (__builtin_mul_overflow((uint64_t)pages, (uint64_t)size, &bytes))
        return UINT64_MAX / 2;
    return bytes / 2;
}

int cmd_run(oac_ctx *ctx, const cli *c)
{
    int status = CLI_EXIT_OK;
    cli_model m;
    oac_dim_binding *run_dims = NULL;
    size_t n_run_dims = 0;

    if (!cli_model_load(ctx, &m, c->models[0])) {
        status = CLI_EXIT_USAGE;
        goto done;
    }
    oac_run_opts ro = {
        .steps = c->steps ? c->steps : 1,
        .dims = c->dims, .n_dims = c->n_dims,
        .inputs = c->inputs, .n_inputs = c->n_inputs,
        .readonly = c->readonly, .n_readonly = c->n_readonly,
        .sessions = c->sessions ? c->sessions : 1,
        .dump_dir = c->dump,
        .prompt_length = c->prompt_length,
        .tokens = c->tokens, .n_tokens = c->n_tokens,
        .page_policy = c->page_policy, .n_page_policy = c->n_page_policy,
        .max_memory = c->max_memory_set ? c->max_memory : default_budget(),
        .ignore_config = c->ignore_config,
    };
    /* Contract 9.1: the check pairs by the genai_config.json beside the
     * model too (as annotate finds it), unless --ignore-config.  It is
     * not checked against the model (9.4 is check --config's). */
    m.config_beside = !c->ignore_config;
    if (!cli_names_known(c, &m, 1)) {
        status = CLI_EXIT_USAGE;
        goto done;
    }
    /* Invariant 4: the check binds what the run's first step binds.  A
     * genai_config.json beside the model that cannot be read is its
     * config-invalid diagnostic: the report says so, nothing runs (with
     * --ignore-config it is not read). */
    int drc = m.model ? oac_run_dims(ctx, &run_dims, &n_run_dims, m.model, &ro, m.diags)
                      : OAC_OK;
    if (drc == OAC_EINVAL) {
        cli_error("%s: %s", m.path, oac_errmsg(ctx));
        status = CLI_EXIT_USAGE;
        goto done;
    }
    if (drc != OAC_OK) {
        /* Out of memory, say: the report says why (invariant 3).  A
         * config-invalid config exits 2, as for annotate. */
        if (drc != OAC_EPARSE)
            cli_model_fail(ctx, &m, drc, "the run could not start");
        else
            m.exit = CLI_EXIT_USAGE;
        cli_model_settle(c, &m);
        status = m.exit;
        int w = cli_write_report(ctx, c, &m);
        if (w > status)
            status = w;
        goto done;
    }
    if (!cli_model_check(ctx, c, &m, run_dims ? run_dims : c->dims,
                         run_dims ? n_run_dims : c->n_dims)) {
        status = CLI_EXIT_USAGE;
        goto done;
    }
    /* Contract 12: now that the call's inputs are known (the model, its
     * external data, the config, the --input files and theirs), -o is
     * checked against them, and reserved so that --dump never writes it. */
    if (c->output && (oac_guard_check(ctx, c->output, "-o") != OAC_OK ||
                      oac_guard_add_output(ctx, c->output, "-o") != OAC_OK)) {
        cli_error("-o %s", oac_errmsg(ctx));
        status = CLI_EXIT_USAGE;
        goto done;
    }
    if (m.model && m.exit == CLI_EXIT_OK && m.analysis) {
        /* --dump DIR: the library makes the folder when it writes the
         * dump (one level, like most tools' output folders), so a run
         * refused before that leaves none (contract 12). */
        int rc = oac_run(ctx, &m.execution, m.model, m.analysis, &ro, m.diags);
        if (rc == OAC_EINVAL) {
            cli_error("%s: %s", m.path, oac_errmsg(ctx));
            status = CLI_EXIT_USAGE;
            goto done;
        }
        /* OAC_ERUNTIME is explained by the run's error diagnostics; a
         * failure they do not explain must still be said and fail. */
        if (rc < 0 && !(rc == OAC_ERUNTIME &&
                        oac_diags_count_severity(m.diags, OAC_SEV_ERROR) > 0) &&
            oac_diags_find(m.diags, OAC_ANALYSIS_FAILED) < 0) {
            /* The run could not do its job; the report still shows the
             * check, and says why (invariant 3). */
            cli_model_fail(ctx, &m, rc, "the run stopped");
        }
        /* What the run decided as it executed is not "unchecked" in its
         * report: a step ran, or the pre-check stopped one. */
        if (m.execution && (m.execution->steps_completed > 0 ||
                            oac_diags_find(m.diags, OAC_CAPACITY_OVERFLOW) >= 0))
            oac_analysis_unchecked_drop(m.analysis, true);
    }
    cli_model_settle(c, &m);
    status = m.exit;
    int w = cli_write_report(ctx, c, &m);
    if (w > status)
        status = w;
done:
    oac_free(run_dims);
    cli_model_fini(&m);
    return status;
}

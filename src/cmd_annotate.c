/* cmd_annotate.c: the `annotate` command (contract, section 7).
 *
 * Owns what the command line adds to the library's oac_annotate and
 * oac_annotation_write: the exit status and printing the report (text or
 * JSON) to standard output.
 *
 * Invariants:
 *  1. -o never names the model read (same device and inode) nor a
 *     symbolic link: main.c refuses it with cli_output_usable before this
 *     runs (exit 2, the model untouched).  Nor an input found since (the
 *     config, the model's external data) or anything but a regular file:
 *     the writer refuses it (OAC_EINVAL, guard.c), exit 2, no report.  The file is written beside -o
 *     under a temporary name and renamed into place only after it passed
 *     the check; a file that cannot be written is output-write-failed in
 *     the report (oac_annotation_write).
 *  2. Exit status 2 for an unreadable model or config (parse-error,
 *     config-invalid), for work the tool could not finish (analysis-failed,
 *     cli_model_fail) and for bad usage; else 1 when a pair is refused or
 *     the report has an error diagnostic (the written model's check, a
 *     write that failed); else 0.  The report's status is "ok" exactly
 *     when the exit status is 0.
 *  3. The report goes to standard output whatever happened to the model,
 *     an unreadable one included (with empty pairs).
 */
#include <jansson.h>
#include <stdlib.h>

#include "cli.h"

static int print_report(oac_ctx *ctx, const cli *c, const oac_report_input *in)
{
    int rc = 0;
    if (c->format == CLI_FMT_JSON) {
        json_t *j = oac_annotate_report_json(ctx, in);
        if (!j || cli_json_write(j, stdout, 0) != 0 || fputc('\n', stdout) == EOF)
            rc = -1;
        json_decref(j);
    } else {
        char *s = oac_annotate_report_text(ctx, in);
        if (!s || fputs(s, stdout) == EOF)
            rc = -1;
        free(s);
    }
    if (fflush(stdout) != 0)
        rc = -1;
    if (rc != 0)
        cli_error("standard output: could not write the report%s%s",
                  oac_errmsg(ctx)[0] ? ": " : "", oac_errmsg(ctx));
    return rc;
}

int cmd_annotate(oac_ctx *ctx, const cli *c)
{
    int status = CLI_EXIT_OK;
    oac_annotation *an = NULL;
    cli_model m;

    if (!cli_model_load(ctx, &m, c->models[0])) {
        status = CLI_EXIT_USAGE;
        goto done;
    }
    /* Contract 12: -o is no input of the call (the model, its external
     * data) before anything is annotated, even a model that cannot be
     * read (compared by path); the config found or given is judged by
     * the writer once it is known. */
    if (oac_guard_check(ctx, c->output, "annotate -o") != OAC_OK) {
        cli_error("-o %s", oac_errmsg(ctx));
        status = CLI_EXIT_USAGE;
        goto done;
    }
    if (m.model) {
        oac_annotate_opts o = {
            .config = c->config, .ignore_config = c->ignore_config,
            .capacity = c->capacity, .partial = c->partial,
        };
        int rc = oac_annotate(ctx, &an, m.model, &o, m.diags);
        if (rc == OAC_OK)
            rc = oac_annotation_write(ctx, an, m.model, c->output, m.diags);
        /* -o is an input of the call (the config, the model's external
         * data) or no regular file: bad usage, nothing written (contract
         * 12). */
        if (rc == OAC_EINVAL) {
            cli_error("-o %s", oac_errmsg(ctx));
            status = CLI_EXIT_USAGE;
            goto done;
        }
        /* Out of memory or a bug: analysis-failed in the report. */
        if (rc < 0 && rc != OAC_EPARSE)
            cli_model_fail(ctx, &m, rc, "annotate stopped");
    }
    if (m.unreportable) {
        status = CLI_EXIT_USAGE;
        goto done;
    }
    oac_report_input in = {
        .path = m.path, .model = m.model, .diags = m.diags,
        .annotation = an, .output = c->output,
    };
    if (oac_diags_find(m.diags, OAC_PARSE_ERROR) >= 0 ||
        oac_diags_find(m.diags, OAC_CONFIG_INVALID) >= 0 ||
        oac_diags_find(m.diags, OAC_ANALYSIS_FAILED) >= 0)
        m.exit = CLI_EXIT_USAGE;
    else if (oac_annotate_report_failed(&in) && m.exit < CLI_EXIT_ERRORS)
        m.exit = CLI_EXIT_ERRORS;
    status = m.exit;
    if (print_report(ctx, c, &in) != 0 && status < CLI_EXIT_USAGE)
        status = CLI_EXIT_USAGE;
done:
    oac_annotation_free(an);
    cli_model_fini(&m);
    return status;
}

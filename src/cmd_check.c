/* cmd_check.c: the `check` command, and the model handling `run` shares
 * with it (contract, section 5).
 *
 * Owns the life of each model of a call: load, name checks of --dim and
 * --input, oac_check, its exit status, and writing every report.
 *
 * Invariants:
 *  1. Every model, unreadable ones included, gets its report, in argument
 *     order; JSON is one object for one model and an array for several.
 *  2. A model's exit status: 2 unreadable (parse-error: a path that
 *     cannot be opened, a file that is no model, an --input file that
 *     cannot be read) or not analysed to the end (analysis-failed), else
 *     1 when its report's status is "error" (errors, or warnings with
 *     --werror), else 0.  The call returns the highest.  Whatever makes
 *     it non-zero is a diagnostic in the model's report (cli_model_fail),
 *     so status and exit status agree in every format; when even that
 *     diagnostic cannot be recorded, no report is written at all.
 *  3. Bad usage that needs the models to be seen (a --dim name in none of
 *     them, an --input name that is no graph input of any, or what
 *     oac_check refuses as OAC_EINVAL) prints the reason to stderr and
 *     writes no report: there is no meaningful report of a call the user
 *     got wrong.
 *  4. With several models, each is given only the --dim and --input names
 *     it has, since a name need occur in only one of them (contract 5).
 *  5. Contract 12: `check` loads, checks, reports and releases one model
 *     before the next (memory bounded by the largest model, no limit
 *     from open mappings); an unreadable model is its own report.  Every
 *     format is written as each model is done (SARIF's artifacts, from
 *     the paths kept, at the end); with -o all of it goes to the
 *     temporary file, renamed into place at the end (or removed on a
 *     usage error).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

void cli_model_fail(oac_ctx *ctx, cli_model *m, int status, const char *what)
{
    if (!m->diags || oac_diags_add_failure(m->diags, ctx, status, what) != OAC_OK) {
        cli_error("%s: %s: %s", m->path, what, oac_errmsg(ctx));
        m->unreportable = true;
    }
    m->exit = CLI_EXIT_USAGE;
}

bool cli_model_load(oac_ctx *ctx, cli_model *m, const char *path)
{
    memset(m, 0, sizeof *m);
    m->path = path;
    m->diags = oac_diags_new(ctx);
    if (!m->diags) {
        cli_error("out of memory");
        return false;
    }
    /* "-": standard input, named "-" in the report (the man page, MODELS). */
    int rc = strcmp(path, "-")
             ? oac_model_load(ctx, &m->model, path, m->diags)
             : oac_model_load_fd(ctx, &m->model, STDIN_FILENO, 0, "-", NULL, m->diags);
    if (rc < 0) {
        m->model = NULL;
        m->exit = CLI_EXIT_USAGE;
        /* The parse-error diagnostic carries the reason in the report;
         * anything else (out of memory) still has to be in it. */
        if (oac_diags_find(m->diags, OAC_PARSE_ERROR) < 0)
            cli_model_fail(ctx, m, rc, "the model could not be loaded");
    }
    return true;
}

void cli_model_fini(cli_model *m)
{
    oac_execution_free(m->execution);
    oac_analysis_free(m->analysis);
    oac_model_free(m->model);
    oac_diags_free(m->diags);
    memset(m, 0, sizeof *m);
}

bool cli_names_known(const cli *c, const cli_model *models, size_t n)
{
    size_t readable = 0;
    for (size_t i = 0; i < n; i++)
        readable += models[i].model != NULL;
    /* With no readable model nothing can be said about names; the
     * parse-error reports (exit 2) are the answer then. */
    if (readable == 0)
        return true;
    for (size_t d = 0; d < c->n_dims; d++) {
        bool found = false;
        for (size_t i = 0; i < n && !found; i++)
            found = models[i].model &&
                    oac_model_has_dim_param(models[i].model, c->dims[d].name);
        if (!found) {
            cli_error("--dim %s: no dim_param '%s' in the model%s given",
                      c->dims[d].name, c->dims[d].name, n > 1 ? "s" : "");
            return false;
        }
    }
    for (size_t d = 0; d < c->n_inputs; d++) {
        bool found = false;
        for (size_t i = 0; i < n && !found; i++)
            found = models[i].model &&
                    oac_model_has_input(models[i].model, c->inputs[d].name);
        if (!found) {
            cli_error("--input %s: no graph input '%s' in the model%s given",
                      c->inputs[d].name, c->inputs[d].name, n > 1 ? "s" : "");
            return false;
        }
    }
    return true;
}

/* ---- checking ------------------------------------------------------------ */

bool cli_model_check(oac_ctx *ctx, const cli *c, cli_model *m,
                     const oac_dim_binding *given, size_t n_given)
{
    oac_dim_binding *dims = NULL;
    oac_input_file *inputs = NULL;
    oac_check_opts o = { 0 };
    bool usage_ok = true;

    if (!given) {
        given = c->dims;
        n_given = c->n_dims;
    }
    if (!m->model)
        return true;
    if ((n_given && !(dims = calloc(n_given, sizeof *dims))) ||
        (c->n_inputs && !(inputs = calloc(c->n_inputs, sizeof *inputs)))) {
        cli_error("out of memory");
        m->exit = CLI_EXIT_USAGE;
        goto done;
    }
    /* Past the caller's own --dim, `run` passes what its loop binds. */
    for (size_t i = 0; i < n_given; i++)
        if (oac_model_has_dim_param(m->model, given[i].name)) {
            dims[o.n_dims++] = given[i];
            o.n_run_dims += given != c->dims && i >= c->n_dims;
        }
    for (size_t i = 0; i < c->n_inputs; i++)
        if (oac_model_has_input(m->model, c->inputs[i].name))
            inputs[o.n_inputs++] = c->inputs[i];
    o.dims = dims;
    o.inputs = inputs;
    o.config = m->config;
    o.config_beside = m->config_beside;
    int rc = oac_check(ctx, &m->analysis, m->model, &o, m->diags);
    if (rc == OAC_EPARSE) {
        /* An unreadable --config: its config-invalid diagnostic, exit 2
         * (cli_model_settle). */
    } else if (rc == OAC_EINVAL) {
        cli_error("%s: %s", m->path, oac_errmsg(ctx));
        usage_ok = false;
    } else if (rc < 0) {
        /* Out of memory, a bug: the report keeps what was found, and says
         * that it is incomplete (unreadable --input files are
         * parse-error diagnostics of the check itself). */
        cli_model_fail(ctx, m, rc, "the check stopped");
    }
done:
    free(dims);
    free(inputs);
    return usage_ok;
}

void cli_model_settle(const cli *c, cli_model *m)
{
    if (c->filter)
        oac_diags_ignore(m->diags, c->keep);
    if (c->hide_unchecked && m->analysis)
        oac_analysis_unchecked_drop(m->analysis, false);
    oac_report_input in = { .diags = m->diags, .werror = c->werror };
    int e = oac_report_failed(&in) ? CLI_EXIT_ERRORS : CLI_EXIT_OK;
    /* Unreadable input, the model or an --input file (contract 5), or a
     * model the tool could not finish. */
    if (oac_diags_find(m->diags, OAC_PARSE_ERROR) >= 0 ||
        oac_diags_find(m->diags, OAC_CONFIG_INVALID) >= 0 ||
        oac_diags_find(m->diags, OAC_ANALYSIS_FAILED) >= 0)
        e = CLI_EXIT_USAGE;
    if (e > m->exit)
        m->exit = e;
}

/* ---- writing reports --------------------------------------------------- */

static oac_report_input report_input(const cli *c, const cli_model *m,
                                     const char *cwd)
{
    oac_report_input in = {
        .path = m->path, .model = m->model, .diags = m->diags,
        .analysis = m->analysis, .execution = m->execution,
        .werror = c->werror, .srcroot = cwd, .quiet = c->quiet,
    };
    return in;
}

/* j (stolen) to out, with a final newline (indent 0); or as an element
 * of an array at that depth (each line indented by indent spaces, no
 * final newline), as jansson indents the elements of an array it dumps
 * (cli_json_write, src/json_out.c). */
static int dump_json_at(oac_ctx *ctx, json_t *j, FILE *out, int indent)
{
    if (!j) {
        cli_error("%s", oac_errmsg(ctx));
        return -1;
    }
    int rc = indent && fprintf(out, "%*s", indent, "") < 0 ? -1 : 0;
    if (!rc)
        rc = cli_json_write(j, out, indent);
    if (!rc && !indent && fputc('\n', out) == EOF)
        rc = -1;
    json_decref(j);
    return rc;
}

/* Is -o FILE one of the files the call reads (same device and inode),
 * or a symbolic link?  Then it is refused before anything runs: writing
 * the report there would destroy an input, or follow a link (contract
 * 8).  A FILE that does not exist yet is fine. */
bool cli_output_usable(const cli *c)
{
    struct stat o, lo, in;
    if (!c->output)
        return true;
    if (lstat(c->output, &lo) == 0 && S_ISLNK(lo.st_mode)) {
        cli_error("-o %s: is a symbolic link, which is not followed; name the file itself",
                  c->output);
        return false;
    }
    if (stat(c->output, &o) != 0)
        return true;
    for (size_t i = 0; i < c->n_models + c->n_inputs; i++) {
        const char *p = i < c->n_models ? c->models[i] : c->inputs[i - c->n_models].path;
        /* "-" is standard input: the file it was redirected from, if any. */
        bool is_stdin = i < c->n_models && p && !strcmp(p, "-");
        bool got = p && (is_stdin ? fstat(STDIN_FILENO, &in) == 0 && S_ISREG(in.st_mode)
                                  : stat(p, &in) == 0);
        if (got && in.st_dev == o.st_dev && in.st_ino == o.st_ino) {
            cli_error("-o %s: is %s %s, which %s would overwrite", c->output,
                      i < c->n_models ? "the model" : "the --input file", p,
                      c->cmd == CLI_CMD_ANNOTATE ? "the annotated model" : "the report");
            return false;
        }
    }
    return true;
}

/* ---- the command: one model at a time ------------------------------------ */

/* The reports of a call written as its models are checked (invariant 5):
 * text and JSON model by model; SARIF and GitLab, one document over all
 * models, element by element too: GitLab's array of issues, SARIF's
 * results as each model is done and its artifacts (from the paths kept)
 * at the end, spliced into the text of the log made with both empty
 * (oac_report_sarif_log), so the document is the one oac_report_sarif
 * would make, byte for byte, without every model's findings in memory.
 * `run`'s one report is written the same way (cli_write_report). */
typedef struct stream {
    oac_ctx *ctx;
    const cli *c;
    FILE *out;
    oac_outfile *of;
    char *cwd;
    size_t n, done;
    size_t items;                /* SARIF, GitLab: elements of the open array */
    char **paths;                /* SARIF: every model's path, for artifacts */
    json_t *notes;               /* SARIF: omitted-findings notifications */
    bool failure;                /* SARIF: a diagnostic the tool failed on */
    size_t errors, unreadable, warned;   /* text: the totals line */
    bool failed;
} stream;

#define SARIF_RESULTS "\"results\": []"
#define SARIF_ARTIFACTS "\"artifacts\": []"
#define SARIF_DEPTH 8            /* log > runs > run > array > element */

static void put_text(stream *s, const char *p, size_t n)
{
    if (!s->failed && n && fwrite(p, 1, n, s->out) != n)
        s->failed = true;
}

/* Element j (stolen) of the open array at depth indent. */
static void put_element(stream *s, json_t *j, int indent)
{
    if (s->failed) {
        json_decref(j);
        return;
    }
    put_text(s, s->items ? ",\n" : "\n", s->items ? 2 : 1);
    if (!s->failed && dump_json_at(s->ctx, j, s->out, indent) != 0)
        s->failed = true;
    s->items++;
}

/* Every element of arr (stolen; NULL: out of memory, said) into the open
 * array at depth indent. */
static void put_elements(stream *s, json_t *arr, int indent)
{
    if (!arr) {
        cli_error("%s", oac_errmsg(s->ctx));
        s->failed = true;
    }
    for (size_t i = 0; arr && i < json_array_size(arr); i++)
        put_element(s, json_incref(json_array_get(arr, i)), indent);
    json_decref(arr);
}

/* Close the open array whose elements stand at depth indent. */
static void close_array(stream *s, int indent)
{
    if (s->items) {
        put_text(s, "\n", 1);
        put_text(s, "                ", (size_t)indent - 2);
    }
    put_text(s, "]", 1);
    s->items = 0;
}

/* The text of the log with no results and no artifacts; *results
 * points at its SARIF_RESULTS.  NULL when out of memory. */
static char *sarif_shell(stream *s, bool success, json_t *notes, const char **results)
{
    json_t *log = oac_report_sarif_log(s->ctx, s->cwd, NULL, NULL, success, notes);
    char *t = log ? json_dumps(log, JSON_INDENT(2)) : NULL;
    json_decref(log);
    *results = t ? strstr(t, SARIF_RESULTS) : NULL;
    if (!*results) {
        free(t);
        cli_error("out of memory");
        s->failed = true;
        return NULL;
    }
    return t;
}

static void sarif_open(stream *s)
{
    const char *r;
    char *t = sarif_shell(s, true, NULL, &r);
    if (t)
        put_text(s, t, (size_t)(r - t) + strlen(SARIF_RESULTS) - 1);
    free(t);
}

static void sarif_model(stream *s, const oac_report_input *in)
{
    if (s->done >= s->n) {
        s->failed = true;
        return;
    }
    if (!(s->paths[s->done] = strdup(in->path ? in->path : ""))) {
        cli_error("out of memory");
        s->failed = true;
        return;
    }
    put_elements(s, oac_report_sarif_results(s->ctx, in, s->done, s->notes, &s->failure),
                 SARIF_DEPTH);
}

static void sarif_close(stream *s)
{
    const char *r;
    close_array(s, SARIF_DEPTH);
    json_t *notes = s->notes;
    s->notes = NULL;
    char *t = sarif_shell(s, !s->failure, notes, &r);
    const char *after = t ? r + strlen(SARIF_RESULTS) : NULL;
    const char *a = after ? strstr(after, SARIF_ARTIFACTS) : NULL;
    if (!a) {
        free(t);
        s->failed = true;
        return;
    }
    put_text(s, after, (size_t)(a - after) + strlen(SARIF_ARTIFACTS) - 1);
    for (size_t m = 0; m < s->done && !s->failed; m++)
        put_element(s, oac_report_sarif_artifact(s->ctx, s->paths[m], s->cwd), SARIF_DEPTH);
    close_array(s, SARIF_DEPTH);
    a += strlen(SARIF_ARTIFACTS);
    put_text(s, a, strlen(a));
    put_text(s, "\n", 1);
    free(t);
}

static bool stream_open(stream *s, oac_ctx *ctx, const cli *c, size_t n)
{
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    s->c = c;
    s->n = n;
    s->out = stdout;
    s->cwd = getcwd(NULL, 0);
    if (c->format == CLI_FMT_SARIF &&
        (!(s->paths = calloc(n ? n : 1, sizeof *s->paths)) || !(s->notes = json_array()))) {
        cli_error("out of memory");
        return false;
    }
    if (c->output) {
        /* Whole or not at all, never through a symlink, never an input
         * of the call (outfile.c, guard.c). */
        if (oac_outfile_open(ctx, &s->of, c->output) != OAC_OK) {
            cli_error("-o %s", oac_errmsg(ctx));
            return false;
        }
        s->out = oac_outfile_stream(s->of);
    }
    if (c->format == CLI_FMT_JSON && n > 1)
        put_text(s, "[\n", 2);
    else if (c->format == CLI_FMT_GITLAB)
        put_text(s, "[", 1);
    else if (c->format == CLI_FMT_SARIF)
        sarif_open(s);
    return true;
}

/* Write m's report, or its part of the document. */
static void stream_model(stream *s, cli_model *m)
{
    oac_report_input in = report_input(s->c, m, s->cwd);
    if (s->failed)
        return;
    if (m->exit == CLI_EXIT_USAGE)
        s->unreadable++;
    if (oac_report_failed(&in) || m->exit != CLI_EXIT_OK)
        s->errors++;
    else if (m->diags && oac_diags_count_severity(m->diags, OAC_SEV_WARNING))
        s->warned++;
    switch (s->c->format) {
    case CLI_FMT_TEXT: {
        char *t = oac_report_text(s->ctx, &in);
        if (!t || fputs(t, s->out) == EOF) {
            if (!t)
                cli_error("%s", oac_errmsg(s->ctx));
            s->failed = true;
        }
        oac_free(t);
        break;
    }
    case CLI_FMT_JSON:
        if (s->n > 1 && s->done && fputs(",\n", s->out) == EOF)
            s->failed = true;
        else if (dump_json_at(s->ctx, oac_report_json(s->ctx, &in), s->out, s->n > 1 ? 2 : 0))
            s->failed = true;
        break;
    case CLI_FMT_SARIF:
        sarif_model(s, &in);
        break;
    case CLI_FMT_GITLAB:
        put_elements(s, oac_report_gitlab(s->ctx, &in, 1), 2);
        break;
    }
    s->done++;
}

/* Text, several models: one last line of totals, "19 models: 7 with
 * errors (1 unreadable), 2 with warnings only, 10 ok", so a folder's
 * verdict needs no counting.  It starts with a count, never a PATH:. */
static int stream_totals(const stream *s)
{
    char extra[64] = "";
    if (s->unreadable)
        snprintf(extra, sizeof extra, " (%zu unreadable)", s->unreadable);
    return fprintf(s->out, "%zu models: %zu with errors%s, %zu with warnings only, %zu ok\n",
                   s->done, s->errors, extra, s->warned, s->done - s->errors - s->warned);
}

/* Finish the document and the file: CLI_EXIT_OK or CLI_EXIT_USAGE. */
static int stream_close(stream *s, bool abandon)
{
    if (!abandon && !s->failed) {
        if (s->c->format == CLI_FMT_JSON && s->n > 1)
            put_text(s, "\n]\n", 3);
        else if (s->c->format == CLI_FMT_TEXT && s->done > 1 && stream_totals(s) < 0)
            s->failed = true;
        else if (s->c->format == CLI_FMT_SARIF)
            sarif_close(s);
        else if (s->c->format == CLI_FMT_GITLAB) {
            close_array(s, 2);
            put_text(s, "\n", 1);
        }
    }
    int rc = s->failed ? -1 : 0;
    for (size_t i = 0; s->paths && i < s->done; i++)
        free(s->paths[i]);
    free(s->paths);
    json_decref(s->notes);
    free(s->cwd);
    int status = CLI_EXIT_OK;
    if (s->of) {
        if (abandon || rc != 0)
            oac_outfile_abort(s->of);
        else if (oac_outfile_commit(s->of) != OAC_OK) {
            cli_error("-o %s", oac_errmsg(s->ctx));
            return CLI_EXIT_USAGE;
        }
    } else if (!abandon && fflush(s->out) != 0) {
        rc = -1;
    }
    if (rc != 0 && !abandon) {
        cli_error("%s: could not write the report",
                  s->c->output ? s->c->output : "standard output");
        status = CLI_EXIT_USAGE;
    }
    return abandon ? CLI_EXIT_USAGE : status;
}

int cli_write_report(oac_ctx *ctx, const cli *c, cli_model *m)
{
    stream s;
    if (m->unreportable) {
        cli_error("%s: no report: out of memory", m->path);
        return CLI_EXIT_USAGE;
    }
    if (!stream_open(&s, ctx, c, 1))
        return stream_close(&s, true);
    stream_model(&s, m);
    return stream_close(&s, false);
}

/* Invariant 3 before any report: every --dim and --input name occurs in
 * some model.  Each model is loaded, asked and released in turn. */
static bool names_known_each(oac_ctx *ctx, const cli *c)
{
    bool *dim_seen = calloc(c->n_dims + 1, sizeof *dim_seen);
    bool *in_seen = calloc(c->n_inputs + 1, sizeof *in_seen);
    size_t readable = 0;
    bool ok = dim_seen && in_seen;
    if (!ok)
        cli_error("out of memory");
    for (size_t i = 0; ok && i < c->n_models; i++) {
        cli_model m;
        if (!strcmp(c->models[i], "-"))
            continue;       /* standard input is read once, in its turn */
        if (!cli_model_load(ctx, &m, c->models[i])) {
            ok = false;
            break;
        }
        if (m.model) {
            readable++;
            for (size_t d = 0; d < c->n_dims; d++)
                dim_seen[d] |= oac_model_has_dim_param(m.model, c->dims[d].name);
            for (size_t d = 0; d < c->n_inputs; d++)
                in_seen[d] |= oac_model_has_input(m.model, c->inputs[d].name);
        }
        cli_model_fini(&m);
    }
    /* With no readable model (or standard input) nothing can be said:
     * the parse-error reports are the answer then. */
    bool some_stdin = false;
    for (size_t i = 0; i < c->n_models; i++)
        some_stdin |= !strcmp(c->models[i], "-");
    for (size_t d = 0; ok && readable && !some_stdin && d < c->n_dims; d++)
        if (!dim_seen[d]) {
            cli_error("--dim %s: no dim_param '%s' in the model%s given",
                      c->dims[d].name, c->dims[d].name, c->n_models > 1 ? "s" : "");
            ok = false;
        }
    for (size_t d = 0; ok && readable && !some_stdin && d < c->n_inputs; d++)
        if (!in_seen[d]) {
            cli_error("--input %s: no graph input '%s' in the model%s given",
                      c->inputs[d].name, c->inputs[d].name, c->n_models > 1 ? "s" : "");
            ok = false;
        }
    free(dim_seen);
    free(in_seen);
    return ok;
}

int cmd_check(oac_ctx *ctx, const cli *c)
{
    int status = CLI_EXIT_OK;
    stream s;

    if ((c->n_dims || c->n_inputs) && c->n_models > 1 && !names_known_each(ctx, c))
        return CLI_EXIT_USAGE;
    if (c->n_configs > 1 && c->n_configs != c->n_models) {
        cli_usage("--config is given %zu times for %zu models: give it once for "
                  "every model, or once per model in order", c->n_configs, c->n_models);
        return CLI_EXIT_USAGE;
    }
    if (!stream_open(&s, ctx, c, c->n_models))
        return stream_close(&s, true);
    for (size_t i = 0; i < c->n_models; i++) {
        cli_model m;
        /* Invariant 5: load, check, report and release, then the next. */
        if (!cli_model_load(ctx, &m, c->models[i]))
            return stream_close(&s, true);
        m.config = c->n_configs ? c->configs[c->n_configs > 1 ? i : 0] : NULL;
        bool usable = c->n_models > 1 || cli_names_known(c, &m, 1);
        if (!usable || !cli_model_check(ctx, c, &m, NULL, 0)) {
            cli_model_fini(&m);
            return stream_close(&s, true);
        }
        /* `check` reports only: what a run would read goes now. */
        oac_analysis_trim(m.analysis);
        cli_model_settle(c, &m);
        if (m.unreportable) {
            cli_error("%s: no report: out of memory", m.path);
            cli_model_fini(&m);
            return stream_close(&s, true);
        }
        if (m.exit > status)
            status = m.exit;
        stream_model(&s, &m);
        cli_model_fini(&m);
    }
    int w = stream_close(&s, false);
    return w > status ? w : status;
}

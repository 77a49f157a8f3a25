/* cli_opts.c: parsing the command line and rendering --help, both from
 * the one options table, cli_opts.def (contract, section 5).
 *
 * Owns struct cli: which command, which options, which models.
 *
 * Invariants:
 *  1. An option exists only as a row of cli_opts.def; the parser and
 *     --help iterate that table and know no option by any other means.
 *  2. Every usage problem the command line alone can show (unknown or
 *     misplaced option, missing argument, bad --format, bad --dim syntax,
 *     a --dim value below 1 or a conflicting repeat, no model) is found
 *     here, before any model is read, and exits 2.  Problems that need
 *     the models (a --dim name no model has) are found by cmd_check.c.
 *  3. A command (the table cmds: `check`, `run`, `annotate`, `help`) is
 *     recognized only as the first argument, so a model file named "run"
 *     can still be checked as `check run`.  `help [COMMAND]` and
 *     `COMMAND --help` print the help of one command (--help alone and
 *     `help`: all of them).
 *  4. A misspelt option, or a word that is no file (cli_paths.c), gets
 *     the closest command or option as a suggestion (cli_suggest: edit
 *     distance over the same two tables).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct cli_opt {
    const char *lng;
    char shrt;
    const char *arg;
    unsigned cmds;
    const char *help;
} opts[CLI_OPT_COUNT] = {
#define CLI_OPT(id, lng, shrt, arg, cmds, help) \
    [CLI_OPT_##id] = { lng, shrt, arg, cmds, help },
#include "cli_opts.def"
#undef CLI_OPT
};

/* The help an option has for some commands instead of its row's. */
static const struct cli_opt_help {
    cli_opt_id id;
    unsigned cmds;
    const char *help;
} opt_helps[] = {
#define CLI_OPT_HELP(id, cmds, help) { CLI_OPT_##id, cmds, help },
#include "cli_opts.def"
#undef CLI_OPT_HELP
};
enum { N_OPT_HELPS = sizeof opt_helps / sizeof opt_helps[0] };

/* Option i's help for the command bit `bit` (0: the row's). */
static const char *opt_help(int i, unsigned bit)
{
    for (int k = 0; k < N_OPT_HELPS; k++)
        if ((int)opt_helps[k].id == i && (opt_helps[k].cmds & bit))
            return opt_helps[k].help;
    return opts[i].help;
}

/* The commands, in the order --help shows them; `help` is no cli_cmd.
 * A command's synopsis is generated from the options table (synopsis()):
 * `head`, then every option of the command that is no CLI_MODE action in
 * table order, then `tail` (annotate's required -o is in its tail, so
 * not among the bracketed options: `required`). */
enum { CMD_HELP = -1 };
static const struct cli_cmd_row {
    const char *name;
    int cmd;                     /* cli_cmd, or CMD_HELP */
    unsigned bit;                /* CLI_FOR_* */
    const char *head;            /* after the program's name */
    int required;                /* an option in the tail, or -1 */
    const char *tail;
    const char *about;
    const char *exit;            /* its exit statuses */
} cmds[] = {
    { "check", CLI_CMD_CHECK, CLI_FOR_CHECK, "[check]", -1, "MODEL...",
      "Check every MODEL statically (the default command) and write one report "
      "per model, in argument order.  A MODEL is an ONNX file, - for standard "
      "input, or a folder: every *.onnx file below it, in sorted order.",
      "0 no error (warnings allowed unless --werror), 1 at least "
      "one error diagnostic, 2 an unreadable model or bad usage; with several "
      "models, the highest of theirs." },
    { "run", CLI_CMD_RUN, CLI_FOR_RUN, "run", -1, "MODEL",
      "Check one MODEL (a file, or - for standard input), then execute it on the "
      "reference runtime and report what it measured.  Its decoder inputs are "
      "driven as a generation loop drives them; every cache update is checked "
      "against its capacity before each step.",
      "0 the check and the run found no error (warnings allowed "
      "unless --werror), 1 an error diagnostic (the check's, or the run's: a "
      "refusal, capacity-overflow, binding-busy), 2 an unreadable model or bad "
      "usage." },
    { "annotate", CLI_CMD_ANNOTATE, CLI_FOR_ANNOTATE, "annotate", CLI_OPT_OUTPUT,
      "MODEL",
      "Write the annotations that make an existing decoder's in-place cache "
      "update explicit to OUT.onnx, checked, and report each past/present pair.",
      "0 every pair annotated or kept (or none found), 1 a pair "
      "refused or the written model fails the check, 2 an unreadable model or "
      "config, or bad usage." },
    { "help", CMD_HELP, 0, "help", -1, "[COMMAND]",
      "Print this help, or the help of COMMAND.", NULL },
};
enum { N_CMDS = sizeof cmds / sizeof cmds[0] };

/* How an option is spelt in a synopsis and in the help's left column:
 * "-o FILE", "-q", "--dim NAME=VALUE" (an argument with '=' reads better
 * apart), "--steps=N"; arg overrides the row's argument name. */
static void opt_spelling(char *buf, size_t n, int i, const char *arg)
{
    const struct cli_opt *o = &opts[i];
    const char *a = arg ? arg : o->arg;
    /* An action is spelt long: "--help | --version". */
    if (o->shrt && !(o->cmds & CLI_MODE))
        snprintf(buf, n, "-%c%s%s", o->shrt, a ? " " : "", a ? a : "");
    else
        snprintf(buf, n, "--%s%s%s", o->lng, !a ? "" : strchr(a, '=') ? " " : "=",
                 a ? a : "");
}

/* Print tokens after prefix, wrapped at 79 columns; continuation lines
 * start at column indent.  A token never breaks. */
static void put_tokens(FILE *out, const char *prefix, int indent, const char *const *tok,
                       size_t n)
{
    int col = (int)strlen(prefix);
    fputs(prefix, out);
    for (size_t k = 0; k < n; k++) {
        int w = (int)strlen(tok[k]);
        if (k && col + 1 + w > 79) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (k) {
            fputc(' ', out);
            col++;
        }
        fputs(tok[k], out);
        col += w;
    }
    fputc('\n', out);
}

/* The synopsis of a command row, generated from the options table:
 * written after prefix ("Usage: onnx-alias-check " or its indent). */
static void synopsis(FILE *out, const char *prefix, const struct cli_cmd_row *row)
{
    enum { TOK = 64 };
    char words[CLI_OPT_COUNT + 4][TOK];
    const char *tok[CLI_OPT_COUNT + 4];
    size_t n = 0;
    snprintf(words[n], TOK, "%s", row->head);
    tok[n] = words[n];
    n++;
    for (int i = 0; i < CLI_OPT_COUNT && row->bit; i++) {
        const struct cli_opt *o = &opts[i];
        char sp[TOK - 8];
        if (!(o->cmds & row->bit) || (o->cmds & CLI_MODE) || i == row->required)
            continue;
        opt_spelling(sp, sizeof sp, i, NULL);
        bool again = (o->cmds & CLI_REPEAT) ||
                     ((o->cmds & CLI_REPEAT_CHECK) && row->bit == CLI_FOR_CHECK);
        snprintf(words[n], TOK, "[%s]%s", sp, again ? "..." : "");
        tok[n] = words[n];
        n++;
    }
    if (row->required >= 0) {
        opt_spelling(words[n], TOK, row->required, "OUT.onnx");
        tok[n] = words[n];
        n++;
    }
    snprintf(words[n], TOK, "%s", row->tail);
    tok[n] = words[n];
    n++;
    put_tokens(out, prefix, (int)strlen(prefix) + 2, tok, n);
}

/* The lines of the actions (CLI_MODE rows): those of one command (bit),
 * or every one (bit 0): "--list-rules [--format=FORMAT]", ..., and the
 * options of every command on one line, "--help | --version". */
static void mode_synopses(FILE *out, const char *prefix, unsigned bit)
{
    char sp[64], fmt[64], all[160] = "";
    opt_spelling(fmt, sizeof fmt, CLI_OPT_FORMAT, NULL);
    for (int i = 0; i < CLI_OPT_COUNT; i++) {
        if (!(opts[i].cmds & CLI_MODE) || (bit && !(opts[i].cmds & bit)))
            continue;
        opt_spelling(sp, sizeof sp, i, NULL);
        if ((opts[i].cmds & CLI_FOR_ALL) == CLI_FOR_ALL) {
            size_t l = strlen(all);
            snprintf(all + l, sizeof all - l, "%s%s", l ? " | " : "", sp);
        } else {
            fprintf(out, "%s%s [%s]\n", prefix, sp, fmt);
        }
    }
    if (!bit && *all)
        fprintf(out, "%s%s\n", prefix, all);
}

static const struct cli_cmd_row *cmd_row_named(const char *name)
{
    for (int i = 0; i < N_CMDS; i++)
        if (!strcmp(cmds[i].name, name))
            return &cmds[i];
    return NULL;
}

static const struct cli_cmd_row *cmd_row(cli_cmd cmd)
{
    for (int i = 0; i < N_CMDS; i++)
        if (cmds[i].cmd == (int)cmd)
            return &cmds[i];
    return &cmds[0];
}

/* Optimal string alignment distance (Levenshtein plus transpositions),
 * ASCII case ignored; words longer than 63 bytes are "far". */
static size_t edit_distance(const char *a, const char *b)
{
    enum { MAXW = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la >= MAXW || lb >= MAXW)
        return SIZE_MAX;
    size_t d[MAXW][MAXW];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int ca = a[i - 1] | (a[i - 1] >= 'A' && a[i - 1] <= 'Z' ? 0x20 : 0);
            int cb = b[j - 1] | (b[j - 1] >= 'A' && b[j - 1] <= 'Z' ? 0x20 : 0);
            size_t v = d[i - 1][j - 1] + (ca != cb);
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

bool cli_suggest(const char *word, char *buf, size_t n)
{
    size_t best = SIZE_MAX;
    const char *name = NULL;
    bool is_opt = false;
    while (*word == '-')
        word++;
    size_t wl = strlen(word);
    if (!wl)
        return false;
    /* Commands first: a tie goes to the command. */
    for (int i = 0; i < N_CMDS + CLI_OPT_COUNT; i++) {
        const char *cand = i < N_CMDS ? cmds[i].name : opts[i - N_CMDS].lng;
        size_t d = edit_distance(word, cand), cl = strlen(cand);
        /* Close enough to be a slip: at most 2 edits, and at most a
         * third of the longer word's length. */
        if (d < best && d <= 2 && 3 * d <= (wl > cl ? wl : cl)) {
            best = d;
            name = cand;
            is_opt = i >= N_CMDS;
        }
    }
    if (!name)
        return false;
    snprintf(buf, n, "%s%s", is_opt ? "--" : "", name);
    return true;
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs(OAC_TOOL_NAME ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int vusage(const char *fmt, va_list ap)
{
    fputs(OAC_TOOL_NAME ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\nTry '" OAC_TOOL_NAME " --help' for more information.\n", stderr);
    return CLI_PARSE_USAGE;
}

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vusage(fmt, ap);
    va_end(ap);
    return rc;
}

int cli_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vusage(fmt, ap);
    va_end(ap);
    return rc;
}

/* Print text from column start on (where the caller left the cursor),
 * wrapped at 79 columns. */
static void wrapped_at(FILE *out, int start, const char *prefix, const char *text)
{
    enum { WIDTH = 79 };
    int col = start;
    const char *p = text;
    fputs(prefix, out);
    col += (int)strlen(prefix);
    while (*p) {
        size_t w = strcspn(p, " ");
        if (col > start && col + 1 + (int)w > WIDTH) {
            fprintf(out, "\n%*s", start, "");
            col = start;
        } else if (col > start) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, w, out);
        col += (int)w;
        p += w;
        p += strspn(p, " ");
    }
    fputc('\n', out);
}

/* The same from column 26, where --help's option texts start. */
static void help_wrapped(FILE *out, const char *prefix, const char *text)
{
    wrapped_at(out, 26, prefix, text);
}

/* The help of one command (row), or of all (row NULL). */
static void help_for(FILE *out, const struct cli_cmd_row *row)
{
    const char *usage = "Usage: " OAC_TOOL_NAME " ", *more = "       " OAC_TOOL_NAME " ";
    bool one = row && row->cmd != CMD_HELP;
    if (one) {
        synopsis(out, usage, row);
        mode_synopses(out, more, row->bit);
        fputc('\n', out);
        wrapped_at(out, 0, "", row->about);
    } else {
        for (int i = 0; i < N_CMDS; i++)
            synopsis(out, i ? more : usage, &cmds[i]);
        mode_synopses(out, more, 0);
        fputs("\n"
              "Check that an ONNX model's KV cache is updated in place (the alias\n"
              "contract; doc/annotations.md describes the annotations).  Commands:\n\n",
              out);
        for (int i = 0; i < N_CMDS; i++) {
            char left[32];
            snprintf(left, sizeof left, "  %s", cmds[i].name);
            fprintf(out, "%-26s", left);
            help_wrapped(out, "", cmds[i].about);
        }
    }
    fputs("\nOptions:\n", out);
    for (int i = 0; i < CLI_OPT_COUNT; i++) {
        const struct cli_opt *o = &opts[i];
        if (one && !(o->cmds & row->bit))
            continue;
        char left[64];
        /* Long names line up whether or not a short form exists. */
        int n;
        if (o->shrt)
            n = snprintf(left, sizeof left, "-%c, --%s%s%s", o->shrt, o->lng,
                         o->arg ? " " : "", o->arg ? o->arg : "");
        else
            n = snprintf(left, sizeof left, "    --%s%s%s", o->lng,
                         !o->arg ? "" : strchr(o->arg, '=') ? " " : "=",
                         o->arg ? o->arg : "");
        fprintf(out, "  %-24s", left);
        if (n >= 24)
            fprintf(out, "\n%26s", "");
        unsigned only = o->cmds & CLI_FOR_ALL;
        help_wrapped(out, one ? "" : only == CLI_FOR_RUN ? "run only:"
                              : only == CLI_FOR_ANNOTATE ? "annotate only:"
                              : only == CLI_FOR_CHECK ? "check only:" : "",
                     opt_help(i, one ? row->bit : 0));
        /* --help alone: what the option means for the commands it differs for. */
        for (int k = 0; !one && k < N_OPT_HELPS; k++)
            if ((int)opt_helps[k].id == i)
                for (int c = 0; c < N_CMDS; c++)
                    if (cmds[c].bit & opt_helps[k].cmds) {
                        char lead[40];
                        snprintf(lead, sizeof lead, "%s:", cmds[c].name);
                        fprintf(out, "%26s", "");
                        help_wrapped(out, lead, opt_helps[k].help);
                    }
    }
    fputc('\n', out);
    for (int i = 0; i < N_CMDS; i++)
        if (cmds[i].exit && (!one || &cmds[i] == row)) {
            char lead[48];
            snprintf(lead, sizeof lead, one ? "Exit status:" : "Exit status of %s:",
                     cmds[i].name);
            wrapped_at(out, 0, lead, cmds[i].exit);
        }
    fputs("\nSee onnx-alias-check(1) for the diagnostic codes and the report keys.\n",
          out);
}

void cli_help(FILE *out)
{
    help_for(out, NULL);
}

/* Parse a decimal integer that must fill s; false otherwise. */
static bool parse_i64(const char *s, int64_t *out)
{
    char *end;
    if (!*s || *s == ' ')
        return false;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

/* BYTES of --max-memory: a decimal number with an optional suffix K, M,
 * G or T (powers of 1024, either case, an optional "iB" or "B" after). */
static bool parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    if (!*s || *s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return false;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    default: break;
    }
    if (shift) {
        end++;
        if (*end == 'i')
            end++;
        if (*end == 'B')
            end++;
    } else if (*end == 'B') {
        end++;
    }
    if (*end || (shift && v > (UINT64_MAX >> shift)))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

static int add_dim(cli *c, const char *arg)
{
    const char *eq = strchr(arg, '=');
    int64_t v;
    if (!eq || eq == arg)
        return usage("--dim expects NAME=VALUE, not '%s'", arg);
    if (!parse_i64(eq + 1, &v))
        return usage("--dim %s: VALUE must be an integer", arg);
    if (v < 1)
        return usage("--dim %s: VALUE must be at least 1", arg);
    size_t len = (size_t)(eq - arg);
    for (size_t i = 0; i < c->n_dims; i++) {
        if (strlen(c->dims[i].name) == len && !memcmp(c->dims[i].name, arg, len)) {
            if (c->dims[i].value != v)
                return usage("--dim %.*s given twice with different values "
                             "(%" PRId64 " and %" PRId64 ")",
                             (int)len, arg, c->dims[i].value, v);
            return CLI_PARSE_GO;   /* the same binding again is harmless */
        }
    }
    oac_dim_binding *d = realloc(c->dims, (c->n_dims + 1) * sizeof *d);
    char *name = strndup(arg, len);
    if (d)
        c->dims = d;
    if (!d || !name) {
        free(name);
        return usage("out of memory");
    }
    c->dims[c->n_dims].name = name;
    c->dims[c->n_dims].value = v;
    c->n_dims++;
    return CLI_PARSE_GO;
}

static int add_input(cli *c, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return usage("--input expects NAME=FILE.pb, not '%s'", arg);
    size_t len = (size_t)(eq - arg);
    for (size_t i = 0; i < c->n_inputs; i++)
        if (strlen(c->inputs[i].name) == len && !memcmp(c->inputs[i].name, arg, len))
            return usage("--input %.*s given twice", (int)len, arg);
    oac_input_file *f = realloc(c->inputs, (c->n_inputs + 1) * sizeof *f);
    char *name = strndup(arg, len);
    if (f)
        c->inputs = f;
    if (!f || !name) {
        free(name);
        return usage("out of memory");
    }
    c->inputs[c->n_inputs].name = name;
    c->inputs[c->n_inputs].path = eq + 1;
    c->n_inputs++;
    return CLI_PARSE_GO;
}

/* A copy of arg with each ',' made a NUL: *n items, one after another
 * (item k starts after k NULs).  NULL when out of memory. */
static char *comma_items(const char *arg, size_t *n)
{
    char *copy = strdup(arg);
    *n = 1;
    for (char *p = copy; p && *p; p++)
        if (*p == ',') {
            *p = '\0';
            ++*n;
        }
    return copy;
}

/* --tokens T1,T2,...: decimal token ids, at least one. */
static int set_tokens(cli *c, const char *arg)
{
    size_t n;
    char *copy = comma_items(arg, &n);
    int64_t *t = copy ? calloc(n, sizeof *t) : NULL;
    int rc = CLI_PARSE_GO;
    if (!t) {
        rc = usage("out of memory");
        goto done;
    }
    const char *tok = copy;
    for (size_t k = 0; k < n; k++, tok += strlen(tok) + 1)
        if (!parse_i64(tok, &t[k]) || t[k] < 0) {
            rc = usage("--tokens expects token ids (integers >= 0) separated by commas, "
                       "not '%s'", arg);
            goto done;
        }
    free(c->tokens);
    c->tokens = t;
    c->n_tokens = n;
    t = NULL;
done:
    free(t);
    free(copy);
    return rc;
}

/* --page-policy AGE:QUANT,...: ages (integers >= 0) and declarations (a
 * name or an index, resolved by the run against the model). */
static int set_page_policy(cli *c, const char *arg)
{
    size_t n;
    char *copy = comma_items(arg, &n);
    oac_page_rule *r = copy ? calloc(n, sizeof *r) : NULL;
    char *copy_at = copy;
    int rc = CLI_PARSE_GO;
    if (!r) {
        rc = usage("out of memory");
        goto done;
    }
    for (size_t k = 0, len; k < n; k++, copy_at += len + 1) {
        char *tok = copy_at, *colon = strchr(tok, ':');
        len = strlen(tok);
        int64_t age;
        if (colon)
            *colon = '\0';
        if (!colon || !colon[1] || !parse_i64(tok, &age) || age < 0) {
            rc = usage("--page-policy expects AGE:QUANT pairs (AGE an integer >= 0, "
                       "QUANT a declaration's name or index) separated by commas, "
                       "not '%s'", arg);
            goto done;
        }
        r[k] = (oac_page_rule){ (uint64_t)age, colon + 1 };
    }
    free(c->page_policy);
    free(c->page_policy_buf);
    c->page_policy = r;
    c->n_page_policy = n;
    c->page_policy_buf = copy;
    r = NULL;
    copy = NULL;
done:
    free(r);
    free(copy);
    return rc;
}

/* A code name from the command line, or a usage error that suggests the
 * nearest code. */
static int code_arg(const char *opt, const char *name, size_t len, int *code)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return usage("%s: '%.*s' is no diagnostic code (--list-rules lists them)",
                     opt, (int)(len < 60 ? len : 60), name);
    memcpy(buf, name, len);
    buf[len] = '\0';
    if (!strcmp(buf, CLI_UNCHECKED)) {
        *code = CLI_CODE_UNCHECKED;
        return CLI_PARSE_GO;
    }
    *code = oac_code_lookup(buf);
    if (*code >= 0)
        return CLI_PARSE_GO;
    int near = oac_code_suggest(buf);
    if (near >= 0)
        return usage("%s: unknown code '%s'; did you mean '%s'? (--list-rules lists them)",
                     opt, buf, oac_code_name((oac_code)near));
    return usage("%s: unknown code '%s' (--list-rules lists them)", opt, buf);
}

/* --select CODE,... and --ignore CODE,...: --select starts from no code
 * (once), each --select adds, each --ignore removes; in any order, an
 * ignored code stays ignored.  A failure of the tool (parse-error, ...)
 * is always reported: --ignore of one is a usage error. */
static int add_codes(cli *c, bool select, const char *arg)
{
    const char *opt = select ? "--select" : "--ignore";
    if (!c->filter) {
        for (int i = 0; i < OAC_CODE_COUNT; i++) {
            c->keep[i] = true;
        }
        c->filter = true;
    }
    if (select && !c->selecting) {
        /* A failure of the tool is reported whatever is selected. */
        for (int i = 0; i < OAC_CODE_COUNT; i++)
            c->keep[i] = oac_code_is_failure((oac_code)i);
        c->selecting = true;
    }
    for (const char *p = arg;;) {
        size_t len = strcspn(p, ",");
        int code, rc;
        if ((rc = code_arg(opt, p, len, &code)) != CLI_PARSE_GO)
            return rc;
        if (code == CLI_CODE_UNCHECKED) {
            /* The unchecked entries: shown unless ignored or not selected. */
            if (!select)
                c->unchecked_ignored = true;
            else
                c->unchecked_selected = true;
            if (!p[len])
                break;
            p += len + 1;
            continue;
        }
        if (!select && oac_code_is_failure((oac_code)code))
            return usage("--ignore: %s cannot be ignored: it says the model could not be "
                         "read or checked", oac_code_name((oac_code)code));
        if (select) {
            if (!c->ignoring[code])
                c->keep[code] = true;
        } else {
            c->ignoring[code] = true;
            c->keep[code] = false;
        }
        if (!p[len])
            break;
        p += len + 1;
    }
    return CLI_PARSE_GO;
}

static int push_str(const char ***arr, size_t *n, const char *s)
{
    const char **a = realloc(*arr, (*n + 1) * sizeof *a);
    if (!a)
        return usage("out of memory");
    *arr = a;
    a[(*n)++] = s;
    return CLI_PARSE_GO;
}

const char *cli_cmd_name(cli_cmd cmd)
{
    return cmd_row(cmd)->name;
}
#define cmd_name cli_cmd_name

static unsigned cmd_bit(cli_cmd cmd)
{
    return cmd_row(cmd)->bit;
}

/* Apply one option with its argument (NULL for flags). */
static int apply(cli *c, cli_opt_id id, const char *arg)
{
    int64_t v;
    if (!(opts[id].cmds & cmd_bit(c->cmd)))
        return usage("option --%s does not apply to '%s'", opts[id].lng,
                     cmd_name(c->cmd));
    switch (id) {
    case CLI_OPT_FORMAT:
        if (!strcmp(arg, "text"))
            c->format = CLI_FMT_TEXT;
        else if (!strcmp(arg, "json"))
            c->format = CLI_FMT_JSON;
        else if (!strcmp(arg, "sarif") && c->cmd != CLI_CMD_ANNOTATE)
            c->format = CLI_FMT_SARIF;
        else if (!strcmp(arg, "gitlab") && c->cmd != CLI_CMD_ANNOTATE)
            c->format = CLI_FMT_GITLAB;
        else if (c->cmd == CLI_CMD_ANNOTATE)
            return usage("unknown format '%s' for annotate (text or json)", arg);
        else
            return usage("unknown format '%s' (text, json, sarif or gitlab)", arg);
        return CLI_PARSE_GO;
    case CLI_OPT_SELECT:
    case CLI_OPT_IGNORE:
        return add_codes(c, id == CLI_OPT_SELECT, arg);
    case CLI_OPT_QUIET:
        c->quiet = true;
        return CLI_PARSE_GO;
    case CLI_OPT_LIST_RULES:
        c->list_rules = true;
        return CLI_PARSE_GO;
    case CLI_OPT_EXPLAIN:
        c->explain = arg;
        return CLI_PARSE_GO;
    case CLI_OPT_OUTPUT:
        if (!*arg)
            return usage("-o needs a file name");
        /* One report, one file: which -o wins would be a guess. */
        if (c->output)
            return usage("-o given twice (%s and %s); give one output file",
                         c->output, arg);
        c->output = arg;
        return CLI_PARSE_GO;
    case CLI_OPT_WERROR:
        c->werror = true;
        return CLI_PARSE_GO;
    case CLI_OPT_DIM:
        return add_dim(c, arg);
    case CLI_OPT_INPUT:
        return add_input(c, arg);
    case CLI_OPT_STEPS:
        if (!parse_i64(arg, &v) || v < 1)
            return usage("--steps expects a positive integer, not '%s'", arg);
        c->steps = (uint64_t)v;
        return CLI_PARSE_GO;
    case CLI_OPT_READONLY:
        return push_str(&c->readonly, &c->n_readonly, arg);
    case CLI_OPT_SESSIONS:
        /* One thread per session: a bound keeps a typo from forking
         * thousands of threads. */
        if (!parse_i64(arg, &v) || v < 1 || v > 1024)
            return usage("--sessions expects an integer from 1 to 1024, not '%s'", arg);
        c->sessions = (unsigned)v;
        return CLI_PARSE_GO;
    case CLI_OPT_MAX_MEMORY:
        if (!parse_bytes(arg, &c->max_memory))
            return usage("--max-memory expects a number of bytes (e.g. 4096, 512M, "
                         "8G; 0: no limit), not '%s'", arg);
        c->max_memory_set = true;
        return CLI_PARSE_GO;
    case CLI_OPT_DUMP:
        if (!*arg)
            return usage("--dump needs a folder");
        c->dump = arg;
        return CLI_PARSE_GO;
    case CLI_OPT_PROMPT_LENGTH:
        /* GenAI's prompts fit in INT32 positions. */
        if (!parse_i64(arg, &v) || v < 1 || v > INT32_MAX)
            return usage("--prompt-length expects a positive integer, not '%s'", arg);
        c->prompt_length = (uint64_t)v;
        return CLI_PARSE_GO;
    case CLI_OPT_TOKENS:
        return set_tokens(c, arg);
    case CLI_OPT_PAGE_POLICY:
        return set_page_policy(c, arg);
    case CLI_OPT_CONFIG:
        if (!*arg)
            return usage("--config needs a file name");
        /* annotate reads one configuration: a second is not silently
         * the one that counts.  check takes one per model. */
        if (c->cmd == CLI_CMD_ANNOTATE && c->n_configs)
            return usage("--config given twice (%s and %s); annotate reads one "
                         "configuration", c->config, arg);
        c->config = arg;
        return push_str(&c->configs, &c->n_configs, arg);
    case CLI_OPT_IGNORE_CONFIG:
        c->ignore_config = true;
        return CLI_PARSE_GO;
    case CLI_OPT_CAPACITY:
        if (!parse_i64(arg, &v) || v < 1)
            return usage("--capacity expects a positive integer, not '%s'", arg);
        c->capacity = v;
        return CLI_PARSE_GO;
    case CLI_OPT_PARTIAL:
        c->partial = true;
        return CLI_PARSE_GO;
    case CLI_OPT_HELP:
        /* `run --help`: run's; --help alone: everything. */
        help_for(stdout, c->cmd_given ? cmd_row(c->cmd) : NULL);
        return CLI_PARSE_DONE;
    case CLI_OPT_VERSION:
        printf("%s %s\n", OAC_TOOL_NAME, OAC_VERSION);
        return CLI_PARSE_DONE;
    case CLI_OPT_COUNT:
        break;
    }
    return usage("internal error: option %d", (int)id);
}

static int find_long(const char *name, size_t len)
{
    for (int i = 0; i < CLI_OPT_COUNT; i++)
        if (strlen(opts[i].lng) == len && !memcmp(opts[i].lng, name, len))
            return i;
    return -1;
}

static int find_short(char s)
{
    for (int i = 0; i < CLI_OPT_COUNT; i++)
        if (opts[i].shrt && opts[i].shrt == s)
            return i;
    return -1;
}

int cli_parse(cli *c, int argc, char **argv)
{
    int i = 1, rc;
    bool only_models = false;

    memset(c, 0, sizeof *c);
    const struct cli_cmd_row *row = argc > 1 ? cmd_row_named(argv[1]) : NULL;
    if (row && row->cmd == CMD_HELP) {
        /* help [COMMAND] */
        const struct cli_cmd_row *of = argc > 2 ? cmd_row_named(argv[2]) : NULL;
        char hint[64];
        if (argc > 3)
            return usage("'help' takes one command at most");
        if (argc > 2 && !of)
            return cli_suggest(argv[2], hint, sizeof hint) && hint[0] != '-'
                   ? usage("unknown command '%s'; did you mean '%s'?", argv[2], hint)
                   : usage("unknown command '%s' (commands: check, run, annotate, help)",
                           argv[2]);
        help_for(stdout, of);
        return CLI_PARSE_DONE;
    }
    if (row) {
        c->cmd = (cli_cmd)row->cmd;
        c->cmd_given = true;
        i = 2;
    }
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (only_models || a[0] != '-' || !a[1]) {
            if (!strcmp(a, "-") && c->stdin_model)
                return usage("'-' (standard input) given twice");
            c->stdin_model = c->stdin_model || !strcmp(a, "-");
            if ((rc = push_str(&c->models, &c->n_models, a)) != CLI_PARSE_GO)
                return rc;
        } else if (!strcmp(a, "--")) {
            only_models = true;
        } else if (a[1] == '-') {
            const char *name = a + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            int id = find_long(name, len);
            const char *arg = NULL;
            if (id < 0) {
                char word[64], hint[64];
                snprintf(word, sizeof word, "%.*s", (int)(len < 63 ? len : 63), name);
                if (cli_suggest(word, hint, sizeof hint))
                    return usage("unknown option '--%.*s'; did you mean '%s'?", (int)len,
                                 name, hint);
                return usage("unknown option '--%.*s'", (int)len, name);
            }
            if (opts[id].arg) {
                if (eq)
                    arg = eq + 1;
                else if (i + 1 < argc)
                    arg = argv[++i];
                else
                    return usage("option --%s needs an argument %s",
                                 opts[id].lng, opts[id].arg);
            } else if (eq) {
                return usage("option --%s takes no argument", opts[id].lng);
            }
            if ((rc = apply(c, (cli_opt_id)id, arg)) != CLI_PARSE_GO)
                return rc;
        } else {
            /* A cluster of short options; one taking an argument ends it. */
            for (const char *p = a + 1; *p; p++) {
                int id = find_short(*p);
                const char *arg = NULL;
                if (id < 0)
                    return usage("unknown option '-%c'", *p);
                if (opts[id].arg) {
                    if (p[1])
                        arg = p + 1;
                    else if (i + 1 < argc)
                        arg = argv[++i];
                    else
                        return usage("option -%c needs an argument %s", *p,
                                     opts[id].arg);
                }
                if ((rc = apply(c, (cli_opt_id)id, arg)) != CLI_PARSE_GO)
                    return rc;
                if (arg)
                    break;
            }
        }
    }
    /* `unchecked` as a code: hidden when ignored, or when --select does
     * not name it. */
    c->hide_unchecked = c->unchecked_ignored || (c->selecting && !c->unchecked_selected);
    if (c->list_rules || c->explain) {
        if (c->list_rules && c->explain)
            return usage("--list-rules and --explain go one at a time");
        if (c->n_models)
            return usage("--%s takes no model", c->list_rules ? "list-rules" : "explain");
        if (c->format != CLI_FMT_TEXT && c->format != CLI_FMT_JSON)
            return usage("--%s writes text or json", c->list_rules ? "list-rules" : "explain");
        if (c->explain) {
            int code;
            if ((rc = code_arg("--explain", c->explain, strlen(c->explain), &code)) != CLI_PARSE_GO)
                return rc;
        }
        c->cmd = CLI_CMD_RULES;
        return CLI_PARSE_GO;
    }
    if (c->n_models == 0)
        return usage("no model given");
    if (c->cmd != CLI_CMD_CHECK && c->n_models > 1)
        return usage("'%s' takes one model, not %zu", cmd_name(c->cmd), c->n_models);
    if (c->cmd == CLI_CMD_ANNOTATE && !c->output)
        return usage("'annotate' needs -o OUT.onnx, the file to write");
    /* "-o -" is standard output, as "-" as a model is standard input; not
     * for annotate, whose report goes there. */
    if (c->output && !strcmp(c->output, "-")) {
        if (c->cmd == CLI_CMD_ANNOTATE)
            return usage("'annotate' writes its report to standard output: give -o the "
                         "file of the annotated model, not -");
        c->output = NULL;
    }
    return CLI_PARSE_GO;
}

void cli_free(cli *c)
{
    for (size_t i = 0; i < c->n_dims; i++)
        free((char *)c->dims[i].name);
    for (size_t i = 0; i < c->n_inputs; i++)
        free((char *)c->inputs[i].name);
    free(c->dims);
    free(c->inputs);
    free(c->readonly);
    free(c->configs);
    free(c->tokens);
    free(c->page_policy);
    free(c->page_policy_buf);
    free(c->models);
    for (size_t i = 0; i < c->n_owned; i++)
        free(c->owned[i]);
    free(c->owned);
    memset(c, 0, sizeof *c);
}

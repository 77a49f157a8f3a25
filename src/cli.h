/* cli.h: what the command-line tool's files share (contract, section 5).
 *
 * src/ is the only code that prints or picks an exit status.  main.c
 * parses (cli_opts.c) and dispatches to cmd_check.c, cmd_run.c or
 * cmd_annotate.c; all three load models through the helpers of
 * cmd_check.c, and `check` and `run` write identical reports for the
 * parts they share.
 *
 * Invariants:
 *  1. The exit status is the highest of the models' (CLI_EXIT_*), and
 *     CLI_EXIT_USAGE for bad usage.
 *  2. Reports go to standard output or -o FILE only; standard error gets
 *     one-line messages ("onnx-alias-check: ...") a report parser never
 *     needs.
 *  3. Strings in struct cli are owned by it (cli_free), or point into argv.
 */
#ifndef OAC_CLI_H
#define OAC_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "oac.h"

enum { CLI_EXIT_OK = 0, CLI_EXIT_ERRORS = 1, CLI_EXIT_USAGE = 2 };

/* The word for the report's unchecked entries: no diagnostic code, but
 * --list-rules lists it, --explain explains it, --select/--ignore take
 * it (cli_opts.c, cmd_rules.c). */
#define CLI_UNCHECKED "unchecked"
enum { CLI_CODE_UNCHECKED = -2 };

enum { CLI_FOR_CHECK = 1, CLI_FOR_RUN = 2, CLI_FOR_ANNOTATE = 4,
       CLI_FOR_ALL = 7,
       CLI_REPEAT = 8,           /* may be given again (cli_opts.def) */
       CLI_MODE = 16,            /* an action of its own: --help, --list-rules */
       CLI_REPEAT_CHECK = 32 };  /* may be given again to check (once per model) */

typedef enum cli_opt_id {
#define CLI_OPT(id, lng, shrt, arg, cmds, help) CLI_OPT_##id,
#include "cli_opts.def"
#undef CLI_OPT
    CLI_OPT_COUNT
} cli_opt_id;

typedef enum cli_cmd { CLI_CMD_CHECK, CLI_CMD_RUN, CLI_CMD_ANNOTATE,
                       CLI_CMD_RULES /* --list-rules, --explain */ } cli_cmd;
typedef enum cli_format { CLI_FMT_TEXT, CLI_FMT_JSON, CLI_FMT_SARIF,
                          CLI_FMT_GITLAB } cli_format;

typedef struct cli {
    cli_cmd cmd;
    cli_format format;
    const char *output;          /* NULL: standard output */
    bool werror;
    bool quiet;                  /* -q: text without notes */
    bool filter;                 /* --select or --ignore given */
    bool selecting;              /* --select given: keep starts all false */
    bool keep[OAC_CODE_COUNT];   /* codes reported (oac_diags_ignore) */
    bool ignoring[OAC_CODE_COUNT]; /* named by --ignore */
    bool unchecked_selected;     /* --select unchecked */
    bool unchecked_ignored;      /* --ignore unchecked */
    bool hide_unchecked;         /* so: the reports list no unchecked entry */
    bool list_rules;             /* --list-rules */
    const char *explain;         /* --explain CODE, into argv */
    oac_dim_binding *dims;       /* names owned */
    size_t n_dims;
    oac_input_file *inputs;      /* names owned, paths into argv */
    size_t n_inputs;
    const char **readonly;       /* into argv */
    size_t n_readonly;
    uint64_t steps;              /* 0: not given (1) */
    unsigned sessions;           /* 0: not given (1) */
    uint64_t max_memory;         /* --max-memory; 0: no budget */
    bool max_memory_set;         /* else the default (cmd_run.c) */
    const char *dump;
    uint64_t prompt_length;      /* 0: not given (1) */
    int64_t *tokens;             /* --tokens, owned */
    size_t n_tokens;
    oac_page_rule *page_policy;  /* --page-policy, owned; quant into ... */
    size_t n_page_policy;
    char *page_policy_buf;       /* ... this owned copy of the argument */
    const char *config;          /* annotate: --config, into argv */
    const char **configs;        /* check: every --config, into argv */
    size_t n_configs;
    bool ignore_config;
    int64_t capacity;            /* annotate: --capacity, 0 when not given */
    bool partial;
    const char **models;         /* into argv or owned, argument order */
    size_t n_models;
    bool cmd_given;              /* the command was named */
    bool stdin_model;            /* a MODEL is "-" */
    char **owned;                /* models found in folders (cli_paths.c) */
    size_t n_owned;
} cli;

/* What cli_parse decided. */
enum { CLI_PARSE_GO = 0, CLI_PARSE_DONE = 1, CLI_PARSE_USAGE = -1 };

/* Parse argv into c (zeroed by the call).  CLI_PARSE_DONE after --help or
 * --version was printed; CLI_PARSE_USAGE after the reason was printed to
 * stderr.  cli_free releases c in every case. */
int cli_parse(cli *c, int argc, char **argv);
void cli_free(cli *c);
/* Print "onnx-alias-check: " + message and the --help hint to stderr;
 * returns CLI_PARSE_USAGE. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The command's name ("check", "run", "annotate"). */
const char *cli_cmd_name(cli_cmd cmd);
/* The command or option (as "--name") closest to word by edit distance,
 * when close enough to be a slip, into buf; false when none is. */
bool cli_suggest(const char *word, char *buf, size_t n);
/* Turn the MODEL arguments into the models of the call (cli_paths.c): a
 * folder becomes every *.onnx file below it in sorted order (`check`
 * only), "-" stays standard input, and a word that is no file is a usage
 * error with a suggestion.  False after the reason was printed (exit 2). */
bool cli_models_expand(cli *c);
/* --help, rendered from cli_opts.def. */
void cli_help(FILE *out);
/* "onnx-alias-check: " + message + newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One model of the call and everything known about it. */
typedef struct cli_model {
    const char *path;
    oac_model *model;            /* NULL when unreadable */
    oac_diags *diags;
    const char *config;          /* check --config for this model, or NULL */
    bool config_beside;          /* run: else the genai_config.json beside it */
    oac_analysis *analysis;      /* NULL when not analysed */
    oac_execution *execution;    /* NULL unless run */
    int exit;                    /* CLI_EXIT_* of this model */
    /* A failure that made exit non-zero could not be put in diags (out
     * of memory): no report may be written, it would not say why. */
    bool unreportable;
} cli_model;

/* The tool's own work on m stopped with the failure status of a library
 * call (contract 8: whatever makes the exit non-zero is a diagnostic): a
 * parse-error (unreadable input) or analysis-failed diagnostic "what:
 * reason" in m's report (oac_diags_add_failure), and exit status 2 for
 * it (cli_model_settle); m->unreportable when even that fails. */
void cli_model_fail(oac_ctx *ctx, cli_model *m, int status, const char *what);

/* Load m->path into m (diags created here); sets m->exit to
 * CLI_EXIT_USAGE for an unreadable file.  Returns false only when out of
 * memory before a report is possible. */
bool cli_model_load(oac_ctx *ctx, cli_model *m, const char *path);
void cli_model_fini(cli_model *m);
/* Check that every --dim name occurs in at least one loaded model and
 * every --input name is a graph input of one; prints the reason and
 * returns false otherwise (a usage error).  Vacuously true when no model
 * could be read. */
bool cli_names_known(const cli *c, const cli_model *models, size_t n);
/* oac_check with the --dim/--input that concern this model: c's --dim,
 * or (dims not NULL) the n_dims given, e.g. a run's (oac_run_dims).
 * Returns false on a usage error (message printed); other failures set
 * m->exit. */
bool cli_model_check(oac_ctx *ctx, const cli *c, cli_model *m,
                     const oac_dim_binding *dims, size_t n_dims);
/* The model's exit status from its diagnostics (keeps a higher one):
 * 2 with a parse-error or analysis-failed, 1 when the report's status is
 * "error", else 0.  --select/--ignore apply first (oac_diags_ignore), so
 * status and exit status are computed from one list. */
void cli_model_settle(const cli *c, cli_model *m);
/* False (the reason printed) when -o names a file the call reads (a
 * model or an --input file, by device and inode) or a symbolic link: a
 * usage error found before anything runs or is written. */
bool cli_output_usable(const cli *c);
/* Write m's report (run's one model) in c->format to stdout or -o (a
 * temporary file renamed into place: whole or not at all), as check
 * writes each of its models'; m's diagnostics may be taken (SARIF,
 * GitLab).  Returns CLI_EXIT_OK, or CLI_EXIT_USAGE when the output
 * failed or no report could be made. */
int cli_write_report(oac_ctx *ctx, const cli *c, cli_model *m);

/* j (an object or an array, not stolen) to out as jansson's
 * json_dump_callback(j, ..., JSON_INDENT(2)) writes it, with indent spaces
 * after every newline (an element of an array at that depth); no final
 * newline.  0, or -1 when out failed or j cannot be written (json_out.c). */
int cli_json_write(const struct json_t *j, FILE *out, int indent);

int cmd_check(oac_ctx *ctx, const cli *c);
/* --list-rules and --explain (cmd_rules.c). */
int cmd_rules(oac_ctx *ctx, const cli *c);
int cmd_run(oac_ctx *ctx, const cli *c);
int cmd_annotate(oac_ctx *ctx, const cli *c);

#endif /* OAC_CLI_H */

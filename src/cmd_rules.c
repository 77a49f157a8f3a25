/* cmd_rules.c: --list-rules and --explain CODE (issue 13, item 2; the
 * `unchecked` entry, issue 19).
 *
 * Owns printing the diagnostic codes' documentation.  Everything comes
 * from the library's tables (include/oac_diag.def: name, severity,
 * meaning; lib/rules.def: why, help, examples, through oac_code_* and
 * oac_code_explain), the same ones the SARIF rules and every report's
 * `help` come from; tests/consistency.sh proves the man page's
 * DIAGNOSTICS section lists the same codes and severities.
 *
 *   --list-rules                 CODE SEVERITY MEANING, one line per code,
 *                                in table order (columns padded)
 *   --list-rules --format=json   [{code, severity, meaning, why, help,
 *                                  failure, examples {wrong, right}}, ...]
 *   --explain CODE               oac_code_explain's text
 *   --explain CODE --format=json the one object of --list-rules
 *
 * After the codes comes `unchecked` (the table below): no diagnostic
 * code and no severity, but a word the reports print ("[unchecked]")
 * and --select/--ignore take, so it is explained like one.
 *
 * Invariant: exit 0, or 2 when the output cannot be written (the code
 * was checked by cli_parse).
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* `unchecked`: the documentation of the report's unchecked entries. */
static const struct {
    const char *meaning, *why, *help, *wrong, *right;
} unchecked_rule = {
    "a rule the checker could not decide statically (a position, an index "
    "or a dimension it needs is not known): no finding, and no proof either",
    "an update whose position is not known may still overflow its cache at "
    "run time; the report lists what it could not prove rather than pass it "
    "silently",
    "give the checker what the entry says it lacks: the value of a graph input "
    "with --input NAME=FILE.pb (an ONNX TensorProto; doc/annotations.md shows "
    "how to write one), a dimension with --dim NAME=VALUE; or run the model "
    "(run decides the capacity rules as it executes and lists them no more)",
    "$ onnx-alias-check examples/toy_decoder.onnx\n"
    "examples/toy_decoder.onnx: unchecked: capacity not checked at node "
    "'l0_key_update' for 'key_cache_0': position is not known; --input "
    "position=FILE.pb gives its value [unchecked]",
    "$ onnx-alias-check --input position=pos.pb examples/toy_decoder.onnx\n"
    "examples/toy_decoder.onnx: 0 errors, 0 warnings, 0 notes (status: ok)",
};

static void put(json_t *o, const char *key, json_t *v, bool *ok)
{
    if (!v || json_object_set_new(o, key, v) != 0)
        *ok = false;
}

static json_t *rule_json(oac_code code, bool *ok)
{
    json_t *o = json_object();
    json_t *ex = json_object();
    if (!o || !ex) {
        json_decref(o);
        json_decref(ex);
        *ok = false;
        return NULL;
    }
    put(o, "code", json_string(oac_code_name(code)), ok);
    put(o, "severity", json_string(oac_severity_name(oac_code_severity(code))), ok);
    put(o, "meaning", json_string(oac_code_meaning(code)), ok);
    put(o, "why", json_string(oac_code_why(code)), ok);
    put(o, "help", json_string(oac_code_help(code)), ok);
    put(o, "failure", json_boolean(oac_code_is_failure(code)), ok);
    put(ex, "wrong", json_string(oac_code_example(code, false)), ok);
    put(ex, "right", json_string(oac_code_example(code, true)), ok);
    put(o, "examples", ex, ok);
    return o;
}

static json_t *unchecked_json(bool *ok)
{
    json_t *o = json_object();
    json_t *ex = json_object();
    if (!o || !ex) {
        json_decref(o);
        json_decref(ex);
        *ok = false;
        return NULL;
    }
    put(o, "code", json_string(CLI_UNCHECKED), ok);
    put(o, "severity", json_null(), ok);
    put(o, "meaning", json_string(unchecked_rule.meaning), ok);
    put(o, "why", json_string(unchecked_rule.why), ok);
    put(o, "help", json_string(unchecked_rule.help), ok);
    put(o, "failure", json_false(), ok);
    put(ex, "wrong", json_string(unchecked_rule.wrong), ok);
    put(ex, "right", json_string(unchecked_rule.right), ok);
    put(o, "examples", ex, ok);
    return o;
}

/* --explain unchecked, in oac_code_explain's shape. */
static int explain_unchecked(void)
{
    const char *title[3] = { "unchecked (no severity: no diagnostic): ", "\n\nWhy it matters: ",
                             "\n\nHow to fix: " };
    const char *text[3] = { unchecked_rule.meaning, unchecked_rule.why, unchecked_rule.help };
    const char *ex[2] = { unchecked_rule.wrong, unchecked_rule.right };
    for (int k = 0; k < 3; k++)
        printf("%s%c%s.", title[k], toupper((unsigned char)text[k][0]), text[k] + 1);
    putchar('\n');
    for (int k = 0; k < 2; k++) {
        printf("\n%s:\n", k ? "Right" : "Wrong");
        for (const char *p = ex[k]; *p;) {
            size_t n = strcspn(p, "\n");
            printf("    %.*s\n", (int)n, p);
            p += n + (p[n] != 0);
        }
    }
    return ferror(stdout) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

static int emit_json(json_t *j, bool ok)
{
    int rc = CLI_EXIT_USAGE;
    if (j && ok && json_dumpf(j, stdout, JSON_INDENT(2)) == 0 && fputc('\n', stdout) != EOF)
        rc = CLI_EXIT_OK;
    else if (!j || !ok)
        cli_error("out of memory");
    json_decref(j);
    return rc;
}

int cmd_rules(oac_ctx *ctx, const cli *c)
{
    bool ok = true;
    if (c->explain && !strcmp(c->explain, CLI_UNCHECKED)) {
        if (c->format == CLI_FMT_JSON)
            return emit_json(unchecked_json(&ok), ok);
        return explain_unchecked();
    }
    if (c->explain) {
        oac_code code = (oac_code)oac_code_lookup(c->explain);
        if (c->format == CLI_FMT_JSON)
            return emit_json(rule_json(code, &ok), ok);
        char *s = oac_code_explain(ctx, code, false);
        if (!s) {
            cli_error("%s", oac_errmsg(ctx));
            return CLI_EXIT_USAGE;
        }
        int rc = fputs(s, stdout) == EOF ? CLI_EXIT_USAGE : CLI_EXIT_OK;
        oac_free(s);
        return rc;
    }
    if (c->format == CLI_FMT_JSON) {
        json_t *arr = json_array();
        for (int i = 0; arr && i < OAC_CODE_COUNT; i++)
            if (json_array_append_new(arr, rule_json((oac_code)i, &ok)) != 0)
                ok = false;
        if (arr && json_array_append_new(arr, unchecked_json(&ok)) != 0)
            ok = false;
        return emit_json(arr, ok && arr);
    }
    int width = 0;
    for (int i = 0; i < OAC_CODE_COUNT; i++) {
        int w = (int)strlen(oac_code_name((oac_code)i));
        if (w > width)
            width = w;
    }
    for (int i = 0; i < OAC_CODE_COUNT; i++)
        if (printf("%-*s  %-7s  %s\n", width, oac_code_name((oac_code)i),
                   oac_severity_name(oac_code_severity((oac_code)i)),
                   oac_code_meaning((oac_code)i)) < 0)
            return CLI_EXIT_USAGE;
    if (printf("%-*s  %-7s  %s\n", width, CLI_UNCHECKED, "-", unchecked_rule.meaning) < 0)
        return CLI_EXIT_USAGE;
    return CLI_EXIT_OK;
}

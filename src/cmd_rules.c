/* cmd_rules.c: --list-rules and --explain CODE (issue 13, item 2).
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
 * Invariant: exit 0, or 2 when the output cannot be written (the code
 * was checked by cli_parse).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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
    return CLI_EXIT_OK;
}

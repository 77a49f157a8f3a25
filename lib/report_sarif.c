/* report_sarif.c: the SARIF 2.1.0 log of one call (contract, section 5).
 *
 * Owns oac_report_sarif.  One log, one run over every model of the call:
 *
 *   runs[0].tool.driver   {name, version, informationUri, rules}: one rule
 *                         per code of include/oac_diag.def, in table order,
 *                         so a result's ruleIndex is its oac_code;
 *   runs[0].artifacts     one per model, in argument order;
 *   runs[0].results       one per diagnostic: ruleId = code, level =
 *                         severity, message.text, and one location with
 *                         physicalLocation.artifactLocation {uri = model
 *                         path, index} and logicalLocations for the graph
 *                         ("module"), node ("function") and value
 *                         ("variable") where the diagnostic names them.
 *
 * Invariants:
 *  1. Levels keep the diagnostic's severity: --werror changes a report's
 *     status, not the facts (contract 5).  invocations[0].
 *     executionSuccessful is false only when the tool could not do its
 *     job, as SARIF means it, not "no errors": a model (or an --input
 *     file) could not be read (parse-error), its analysis did not finish
 *     (analysis-failed), or a file it was asked to write could not be
 *     (output-write-failed).
 *  2. The RFC 6901 location, which SARIF has no field for, goes to the
 *     result's property bag ("properties": {"location": ...}).
 *  3. A path is written as a URI reference: bytes outside RFC 3986's
 *     unreserved, sub-delims, ':', '@' and '/' are percent-encoded, so
 *     ordinary paths come out unchanged.
 *  4. Every string goes through oac_json_str (report_str.h), so names
 *     that are not UTF-8 still give a log (bad bytes as U+FFFD).
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "oac_int.h"
#include "report_str.h"

static void put(json_t *obj, const char *key, json_t *value, bool *ok)
{
    if (!value || json_object_set_new(obj, key, value) != 0)
        *ok = false;
}

static void push(json_t *arr, json_t *value, bool *ok)
{
    if (!value || json_array_append_new(arr, value) != 0)
        *ok = false;
}

static json_t *text_obj(const char *text, bool *ok)
{
    json_t *o = json_object();
    if (o)
        put(o, "text", oac_json_str(text ? text : ""), ok);
    return o;
}

static bool uri_keep(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || strchr("-._~!$&'()*+,;=:@/", c);
}

static json_t *path_uri(oac_ctx *ctx, const char *path)
{
    size_t n = strlen(path);
    char *s = oac_calloc(ctx, n + 1, 3);   /* worst case: every byte %XX */
    json_t *j;
    size_t k = 0;
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)path[i];
        if (c && uri_keep(c))
            s[k++] = (char)c;
        else
            k += (size_t)sprintf(s + k, "%%%02X", c);
    }
    s[k] = '\0';
    j = oac_json_str(s);
    oac_dealloc(ctx, s);
    return j;
}

static json_t *rules_json(bool *ok)
{
    json_t *rules = json_array();
    if (!rules)
        return NULL;
    for (int c = 0; c < OAC_CODE_COUNT; c++) {
        json_t *r = json_object();
        json_t *cfg = json_object();
        if (!r || !cfg) {
            json_decref(r);
            json_decref(cfg);
            *ok = false;
            break;
        }
        put(r, "id", oac_json_str(oac_code_name(c)), ok);
        put(r, "shortDescription", text_obj(oac_code_meaning(c), ok), ok);
        put(cfg, "level", oac_json_str(oac_severity_name(oac_code_severity(c))), ok);
        put(r, "defaultConfiguration", cfg, ok);
        push(rules, r, ok);
    }
    return rules;
}

static json_t *logical(const char *name, const char *fqn, const char *kind,
                       bool *ok)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    put(o, "name", oac_json_str(name), ok);
    if (fqn)
        put(o, "fullyQualifiedName", oac_json_str(fqn), ok);
    put(o, "kind", oac_json_str(kind), ok);
    return o;
}

static json_t *result_json(oac_ctx *ctx, const oac_diag *d, const char *path,
                           size_t artifact, bool *ok)
{
    json_t *res = json_object();
    json_t *loc = json_object();
    json_t *phys = json_object();
    json_t *art = json_object();
    json_t *logs = json_array();
    json_t *locs = json_array();
    char *fqn = NULL;
    if (!res || !loc || !phys || !art || !logs || !locs) {
        json_decref(res);
        json_decref(loc);
        json_decref(phys);
        json_decref(art);
        json_decref(logs);
        json_decref(locs);
        *ok = false;
        return NULL;
    }
    put(res, "ruleId", oac_json_str(oac_code_name(d->code)), ok);
    put(res, "ruleIndex", json_integer(d->code), ok);
    put(res, "level", oac_json_str(oac_severity_name(d->severity)), ok);
    put(res, "message", text_obj(d->message, ok), ok);

    put(art, "uri", path_uri(ctx, path), ok);
    put(art, "index", json_integer((json_int_t)artifact), ok);
    put(phys, "artifactLocation", art, ok);
    put(loc, "physicalLocation", phys, ok);
    /* The node and value are qualified by their graph, since names repeat
     * across subgraphs and functions.  An unnamed graph (ONNX does not
     * require a name) has no logical location: SARIF names are for
     * people, and "" names nothing. */
    const char *graph = d->graph && *d->graph ? d->graph : NULL;
    if (graph)
        push(logs, logical(graph, NULL, "module", ok), ok);
    if (d->node) {
        fqn = graph ? oac_asprintf(ctx, "%s/%s", graph, d->node) : NULL;
        if (graph && !fqn)
            *ok = false;
        push(logs, logical(d->node, fqn, "function", ok), ok);
        oac_dealloc(ctx, fqn);
    }
    if (d->value) {
        fqn = graph ? oac_asprintf(ctx, "%s/%s", graph, d->value) : NULL;
        if (graph && !fqn)
            *ok = false;
        push(logs, logical(d->value, fqn, "variable", ok), ok);
        oac_dealloc(ctx, fqn);
    }
    if (json_array_size(logs) > 0)
        put(loc, "logicalLocations", logs, ok);
    else
        json_decref(logs);
    push(locs, loc, ok);
    put(res, "locations", locs, ok);
    if (d->location || d->op_type) {
        json_t *props = json_object();
        if (!props)
            *ok = false;
        else {
            if (d->location)
                put(props, "location", oac_json_str(d->location), ok);
            if (d->op_type)
                put(props, "op_type", oac_json_str(d->op_type), ok);
            put(res, "properties", props, ok);
        }
    }
    return res;
}

json_t *oac_report_sarif(oac_ctx *ctx, const oac_report_input *in, size_t n)
{
    bool ok = true;
    bool success = true;
    json_t *log = json_object();
    json_t *runs = json_array();
    json_t *run = json_object();
    json_t *tool = json_object();
    json_t *driver = json_object();
    json_t *artifacts = json_array();
    json_t *results = json_array();
    json_t *invocations = json_array();
    json_t *inv = json_object();

    if (!log || !runs || !run || !tool || !driver || !artifacts || !results ||
        !invocations || !inv) {
        json_decref(runs);
        json_decref(run);
        json_decref(tool);
        json_decref(driver);
        json_decref(artifacts);
        json_decref(results);
        json_decref(invocations);
        json_decref(inv);
        ok = false;
        goto done;
    }
    put(log, "$schema", oac_json_str("https://json.schemastore.org/sarif-2.1.0.json"), &ok);
    put(log, "version", oac_json_str("2.1.0"), &ok);
    put(driver, "name", oac_json_str(OAC_TOOL_NAME), &ok);
    put(driver, "version", oac_json_str(OAC_VERSION), &ok);
    put(driver, "semanticVersion", oac_json_str(OAC_VERSION), &ok);
    put(driver, "rules", rules_json(&ok), &ok);
    put(tool, "driver", driver, &ok);
    put(run, "tool", tool, &ok);

    for (size_t m = 0; m < n; m++) {
        const char *path = in[m].path ? in[m].path : "";
        json_t *a = json_object();
        json_t *al = json_object();
        if (!a || !al) {
            json_decref(a);
            json_decref(al);
            ok = false;
            break;
        }
        put(al, "uri", path_uri(ctx, path), &ok);
        put(a, "location", al, &ok);
        push(artifacts, a, &ok);
        for (size_t i = 0; i < oac_diags_count(in[m].diags); i++)
            push(results, result_json(ctx, oac_diags_get(in[m].diags, i), path, m, &ok), &ok);
        if (!in[m].model || oac_diags_find(in[m].diags, OAC_PARSE_ERROR) >= 0 ||
            oac_diags_find(in[m].diags, OAC_ANALYSIS_FAILED) >= 0 ||
            oac_diags_find(in[m].diags, OAC_OUTPUT_WRITE_FAILED) >= 0)
            success = false;
    }
    put(run, "artifacts", artifacts, &ok);
    put(run, "results", results, &ok);
    put(inv, "executionSuccessful", json_boolean(success), &ok);
    push(invocations, inv, &ok);
    put(run, "invocations", invocations, &ok);
    push(runs, run, &ok);
    put(log, "runs", runs, &ok);
done:
    if (!ok) {
        json_decref(log);
        oac_err(ctx, OAC_ENOMEM, "out of memory writing the SARIF report");
        return NULL;
    }
    return log;
}

/* report/sarif.c: the SARIF 2.1.0 log of one call (contract, section 5).
 *
 * Owns oac_report_sarif and its pieces (oac_report_sarif_results,
 * _artifact, _log), from which `check` of many models writes the same log
 * model by model (src/cmd_check.c; contract 12: memory bounded by the
 * largest model).  One log, one run over every model of the call, its
 * keys in this order (the results before the artifacts, so a writer can
 * stream both):
 *
 *   runs[0].tool.driver   {name, version, semanticVersion,
 *                         informationUri, rules}: one rule per code of
 *                         include/oac_diag.def, in table order, so a
 *                         result's ruleIndex is its oac_code; each with
 *                         shortDescription (the meaning), fullDescription
 *                         (meaning and why it matters), help {text,
 *                         markdown} (oac_code_explain) and
 *                         defaultConfiguration.level (lib/rules.c);
 *   runs[0].originalUriBaseIds  %SRCROOT%: the working directory the tool
 *                         gave (in->srcroot), when it did;
 *   runs[0].results       one per diagnostic: ruleId = code, level =
 *                         severity, message.text, one location with
 *                         physicalLocation.artifactLocation {uri = model
 *                         path, uriBaseId, index} and logicalLocations for
 *                         the graph ("module"), node ("function") and value
 *                         ("variable") where the diagnostic names them;
 *                         partialFingerprints (report/loc.c); and
 *                         relatedLocations for the related party (the
 *                         writer of a hazard, the other branch);
 *   runs[0].artifacts     one per model, in argument order, with role
 *                         "analysisTarget";
 *   runs[0].invocations   one: executionSuccessful, and a
 *                         toolExecutionNotifications entry per code of a
 *                         model with findings past the listing cap.
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
 *     ordinary paths come out unchanged.  A path under %SRCROOT% is
 *     relative to it (uriBaseId "%SRCROOT%"); any other is an absolute
 *     file:// URI (SARIF1004: a relative reference needs a base).
 *  4. Every string goes through oac_json_str (report/str.h), so names
 *     that are not UTF-8 still give a log (bad bytes as U+FFFD).
 */
#include <config.h>

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include <inttypes.h>

#include "oac_int.h"
#include "report/loc.h"
#include "report/str.h"

#define SRCROOT "%SRCROOT%"
#define FINGERPRINT_KEY "onnxAliasCheck/v1"

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

/* prefix ("file://" or "") and path as a URI reference; a trailing '/'
 * when slash is set (a base URI names a folder). */
static json_t *path_uri(oac_ctx *ctx, const char *prefix, const char *path,
                        bool slash)
{
    size_t n = strlen(path), p = strlen(prefix);
    char *s = oac_calloc(ctx, n + p + 2, 3);   /* worst case: every byte %XX */
    json_t *j;
    size_t k = p;
    if (!s)
        return NULL;
    memcpy(s, prefix, p);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)path[i];
        if (c && uri_keep(c))
            s[k++] = (char)c;
        else
            k += (size_t)sprintf(s + k, "%%%02X", c);
    }
    if (slash && (k == 0 || s[k - 1] != '/'))
        s[k++] = '/';
    s[k] = '\0';
    j = oac_json_str(s);
    oac_dealloc(ctx, s);
    return j;
}

/* The artifact location of a model: uri (relative to %SRCROOT%, or an
 * absolute file:// URI), and index when >= 0. */
static json_t *artifact_loc(oac_ctx *ctx, const char *path, const char *srcroot,
                            long index, bool *ok)
{
    json_t *al = json_object();
    bool rel;
    char *p = al ? oac_report_relpath(ctx, path, srcroot, &rel) : NULL;
    if (!p) {
        json_decref(al);
        *ok = false;
        return NULL;
    }
    if (!srcroot)          /* as given, no base: the old form */
        put(al, "uri", path_uri(ctx, "", p, false), ok);
    else if (rel) {
        put(al, "uri", path_uri(ctx, "", p, false), ok);
        put(al, "uriBaseId", oac_json_str(SRCROOT), ok);
    } else {
        put(al, "uri", path_uri(ctx, "file://", p, false), ok);
    }
    if (index >= 0)
        put(al, "index", json_integer(index), ok);
    oac_dealloc(ctx, p);
    return al;
}

/* "Meaning. Why it matters." as one plain sentence pair. */
static json_t *full_description(oac_ctx *ctx, oac_code c, bool *ok)
{
    const char *m = oac_code_meaning(c), *w = oac_code_why(c);
    char *s = oac_asprintf(ctx, "%c%s. %c%s.", toupper((unsigned char)m[0]), m + 1,
                           toupper((unsigned char)w[0]), w + 1);
    json_t *o = s ? text_obj(s, ok) : NULL;
    oac_dealloc(ctx, s);
    return o;
}

static json_t *help_obj(oac_ctx *ctx, oac_code c, bool *ok)
{
    json_t *o = json_object();
    char *text = oac_code_explain(ctx, c, false);
    char *md = oac_code_explain(ctx, c, true);
    if (!o || !text || !md) {
        json_decref(o);
        o = NULL;
    } else {
        put(o, "text", oac_json_str(text), ok);
        put(o, "markdown", oac_json_str(md), ok);
    }
    oac_free(text);
    oac_free(md);
    return o;
}

static json_t *rules_json(oac_ctx *ctx, bool *ok)
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
        put(r, "fullDescription", full_description(ctx, c, ok), ok);
        put(r, "help", help_obj(ctx, c, ok), ok);
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

/* logicalLocations of a graph, node and value (an array, maybe empty). */
static json_t *logicals(oac_ctx *ctx, const char *graph_name, const char *node,
                        const char *value, bool *ok)
{
    json_t *logs = json_array();
    char *fqn;
    if (!logs)
        return NULL;
    /* The node and value are qualified by their graph, since names repeat
     * across subgraphs and functions.  An unnamed graph (ONNX does not
     * require a name) has no logical location: SARIF names are for
     * people, and "" names nothing. */
    const char *graph = graph_name && *graph_name ? graph_name : NULL;
    if (graph)
        push(logs, logical(graph, NULL, "module", ok), ok);
    if (node) {
        fqn = graph ? oac_asprintf(ctx, "%s/%s", graph, node) : NULL;
        if (graph && !fqn)
            *ok = false;
        push(logs, logical(node, fqn, "function", ok), ok);
        oac_dealloc(ctx, fqn);
    }
    if (value) {
        fqn = graph ? oac_asprintf(ctx, "%s/%s", graph, value) : NULL;
        if (graph && !fqn)
            *ok = false;
        push(logs, logical(value, fqn, "variable", ok), ok);
        oac_dealloc(ctx, fqn);
    }
    return logs;
}

/* The related party as a relatedLocations entry (id 1). */
static json_t *related_json(oac_ctx *ctx, const oac_related *r, const char *path,
                            const char *srcroot, size_t artifact, bool *ok)
{
    json_t *loc = json_object();
    json_t *phys = json_object();
    json_t *logs = logicals(ctx, r->graph, r->node, r->value, ok);
    if (!loc || !phys || !logs) {
        json_decref(loc);
        json_decref(phys);
        json_decref(logs);
        *ok = false;
        return NULL;
    }
    put(loc, "id", json_integer(1), ok);
    put(phys, "artifactLocation", artifact_loc(ctx, path, srcroot, (long)artifact, ok), ok);
    put(loc, "physicalLocation", phys, ok);
    if (json_array_size(logs) > 0)
        put(loc, "logicalLocations", logs, ok);
    else
        json_decref(logs);
    put(loc, "message", text_obj(r->message, ok), ok);
    if (r->location) {
        json_t *props = json_object();
        if (props)
            put(props, "location", oac_json_str(r->location), ok);
        put(loc, "properties", props, ok);
    }
    return loc;
}

static json_t *result_json(oac_ctx *ctx, const oac_diag *d, const char *path,
                           const char *srcroot, size_t artifact, uint64_t fp,
                           bool *ok)
{
    json_t *res = json_object();
    json_t *loc = json_object();
    json_t *phys = json_object();
    json_t *logs = logicals(ctx, d->graph, d->node, d->value, ok);
    json_t *locs = json_array();
    json_t *fps = json_object();
    char hex[17];
    if (!res || !loc || !phys || !logs || !locs || !fps) {
        json_decref(res);
        json_decref(loc);
        json_decref(phys);
        json_decref(logs);
        json_decref(locs);
        json_decref(fps);
        *ok = false;
        return NULL;
    }
    put(res, "ruleId", oac_json_str(oac_code_name(d->code)), ok);
    put(res, "ruleIndex", json_integer(d->code), ok);
    put(res, "level", oac_json_str(oac_severity_name(d->severity)), ok);
    put(res, "message", text_obj(d->message, ok), ok);

    put(phys, "artifactLocation", artifact_loc(ctx, path, srcroot, (long)artifact, ok), ok);
    put(loc, "physicalLocation", phys, ok);
    if (json_array_size(logs) > 0)
        put(loc, "logicalLocations", logs, ok);
    else
        json_decref(logs);
    push(locs, loc, ok);
    put(res, "locations", locs, ok);
    snprintf(hex, sizeof hex, "%016" PRIx64, fp);
    put(fps, FINGERPRINT_KEY, oac_json_str(hex), ok);
    put(res, "partialFingerprints", fps, ok);
    if (d->related.message) {
        json_t *rel = json_array();
        if (rel)
            push(rel, related_json(ctx, &d->related, path, srcroot, artifact, ok), ok);
        put(res, "relatedLocations", rel, ok);
    }
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

/* Contract 12: one notification per code of model m with findings past
 * the listing cap (the count in its property bag "omitted"). */
static void omitted_json(oac_ctx *ctx, json_t *notes, const oac_report_input *in,
                         size_t m, const char *srcroot, bool *ok)
{
    const char *path = in->path ? in->path : "";
    for (int c = 0; c < OAC_CODE_COUNT; c++) {
        uint64_t k = oac_diags_omitted(in->diags, (oac_code)c);
        if (!k)
            continue;
        json_t *o = json_object(), *desc = json_object(), *props = json_object();
        json_t *locs = json_array(), *loc = json_object(), *phys = json_object();
        if (!o || !desc || !props || !locs || !loc || !phys) {
            json_decref(o);
            json_decref(desc);
            json_decref(props);
            json_decref(locs);
            json_decref(loc);
            json_decref(phys);
            *ok = false;
            return;
        }
        char msg[256];
        snprintf(msg, sizeof msg, "%llu more %s findings omitted: a report lists at most "
                 "%d of one code per model", (unsigned long long)k,
                 oac_code_name((oac_code)c), OAC_DIAG_LIST_MAX);
        oac_severity sev = oac_code_severity((oac_code)c);
        put(o, "level", oac_json_str(sev == OAC_SEV_ERROR ? "error" :
                                     sev == OAC_SEV_WARNING ? "warning" : "note"), ok);
        put(o, "message", text_obj(msg, ok), ok);
        put(desc, "id", oac_json_str(oac_code_name((oac_code)c)), ok);
        put(o, "associatedRule", desc, ok);
        put(phys, "artifactLocation", artifact_loc(ctx, path, srcroot, (long)m, ok), ok);
        put(loc, "physicalLocation", phys, ok);
        push(locs, loc, ok);
        put(o, "locations", locs, ok);
        put(props, "omitted", json_integer((json_int_t)k), ok);
        put(o, "properties", props, ok);
        push(notes, o, ok);
    }
}

/* The %SRCROOT% of a log: srcroot when absolute (the working directory
 * the tool gave), else none (paths as given). */
static const char *log_root(const char *srcroot)
{
    return srcroot && srcroot[0] == '/' ? srcroot : NULL;
}

json_t *oac_report_sarif_results(oac_ctx *ctx, const oac_report_input *in, size_t index,
                                 json_t *notes, bool *failure)
{
    bool ok = true, rel;
    const char *srcroot = log_root(in->srcroot);
    const char *path = in->path ? in->path : "";
    json_t *results = json_array();
    uint64_t *fps = NULL;
    char *relpath = results ? oac_report_relpath(ctx, path, srcroot, &rel) : NULL;
    if (!relpath || oac_report_fingerprints(ctx, &fps, in->diags, relpath) != OAC_OK)
        ok = false;
    for (size_t i = 0; ok && i < oac_diags_count(in->diags); i++) {
        const oac_diag *d = oac_diags_get(in->diags, i);
        push(results, result_json(ctx, d, path, srcroot, index, fps[i], &ok), &ok);
        /* Invariant 1: the failures of lib/rules.def's TOOL rows.  An
         * unreadable model has its parse-error (a failure): the model
         * itself may be gone by now (check releases each). */
        if (oac_code_is_failure(d->code) && failure)
            *failure = true;
    }
    if (ok && notes)
        omitted_json(ctx, notes, in, index, srcroot, &ok);
    oac_dealloc(ctx, fps);
    oac_dealloc(ctx, relpath);
    if (!ok) {
        json_decref(results);
        oac_err(ctx, OAC_ENOMEM, "out of memory writing the SARIF report");
        return NULL;
    }
    return results;
}

json_t *oac_report_sarif_artifact(oac_ctx *ctx, const char *path, const char *srcroot)
{
    bool ok = true;
    json_t *a = json_object();
    json_t *roles = json_array();
    if (a && roles) {
        put(a, "location", artifact_loc(ctx, path ? path : "", log_root(srcroot), -1, &ok),
            &ok);
        /* Every model given is one the tool analysed, findings or not. */
        push(roles, oac_json_str("analysisTarget"), &ok);
        put(a, "roles", roles, &ok);
        roles = NULL;
    }
    if (!a || roles || !ok) {
        json_decref(a);
        json_decref(roles);
        oac_err(ctx, OAC_ENOMEM, "out of memory writing the SARIF report");
        return NULL;
    }
    return a;
}

/* runs[0]: tool, originalUriBaseIds, results, artifacts, invocations. */
static json_t *run_json(oac_ctx *ctx, const char *srcroot, json_t *results,
                        json_t *artifacts, bool success, json_t *notes, bool *ok)
{
    json_t *run = json_object(), *tool = json_object(), *driver = json_object();
    json_t *invocations = json_array(), *inv = json_object();
    if (!run || !tool || !driver || !invocations || !inv) {
        json_decref(run);
        json_decref(tool);
        json_decref(driver);
        json_decref(invocations);
        json_decref(inv);
        json_decref(results);
        json_decref(artifacts);
        json_decref(notes);
        *ok = false;
        return NULL;
    }
    put(driver, "name", oac_json_str(OAC_TOOL_NAME), ok);
    put(driver, "version", oac_json_str(OAC_VERSION), ok);
    put(driver, "semanticVersion", oac_json_str(OAC_VERSION), ok);
    put(driver, "informationUri", oac_json_str(OAC_INFORMATION_URI), ok);
    put(driver, "rules", rules_json(ctx, ok), ok);
    put(tool, "driver", driver, ok);
    put(run, "tool", tool, ok);
    if (srcroot) {
        json_t *bases = json_object(), *base = json_object();
        if (!bases || !base) {
            json_decref(bases);
            json_decref(base);
            *ok = false;
        } else {
            put(base, "uri", path_uri(ctx, "file://", srcroot, true), ok);
            put(bases, SRCROOT, base, ok);
            put(run, "originalUriBaseIds", bases, ok);
        }
    }
    put(run, "results", results ? results : json_array(), ok);
    put(run, "artifacts", artifacts ? artifacts : json_array(), ok);
    put(inv, "executionSuccessful", json_boolean(success), ok);
    if (notes && json_array_size(notes))
        put(inv, "toolExecutionNotifications", notes, ok);
    else
        json_decref(notes);
    push(invocations, inv, ok);
    put(run, "invocations", invocations, ok);
    return run;
}

json_t *oac_report_sarif_log(oac_ctx *ctx, const char *srcroot, json_t *results,
                             json_t *artifacts, bool success, json_t *notes)
{
    bool ok = true;
    json_t *log = json_object(), *runs = json_array();
    json_t *run = run_json(ctx, log_root(srcroot), results, artifacts, success, notes, &ok);
    if (log && runs) {
        put(log, "$schema", oac_json_str("https://json.schemastore.org/sarif-2.1.0.json"),
            &ok);
        put(log, "version", oac_json_str("2.1.0"), &ok);
        push(runs, run, &ok);
        put(log, "runs", runs, &ok);
    } else {
        json_decref(run);
        json_decref(runs);
        ok = false;
    }
    if (!ok) {
        json_decref(log);
        oac_err(ctx, OAC_ENOMEM, "out of memory writing the SARIF report");
        return NULL;
    }
    return log;
}

json_t *oac_report_sarif(oac_ctx *ctx, const oac_report_input *in, size_t n)
{
    bool ok = true, failure = false;
    const char *srcroot = n > 0 ? in[0].srcroot : NULL;
    json_t *results = json_array(), *artifacts = json_array(), *notes = json_array();
    ok = results && artifacts && notes;
    for (size_t m = 0; ok && m < n; m++) {
        /* One %SRCROOT% for the log: the first model's. */
        oac_report_input im = in[m];
        im.srcroot = srcroot;
        json_t *r = oac_report_sarif_results(ctx, &im, m, notes, &failure);
        ok = r && json_array_extend(results, r) == 0;
        json_decref(r);
        push(artifacts, oac_report_sarif_artifact(ctx, im.path, srcroot), &ok);
    }
    if (!ok) {
        json_decref(results);
        json_decref(artifacts);
        json_decref(notes);
        oac_err(ctx, OAC_ENOMEM, "out of memory writing the SARIF report");
        return NULL;
    }
    return oac_report_sarif_log(ctx, srcroot, results, artifacts, !failure, notes);
}

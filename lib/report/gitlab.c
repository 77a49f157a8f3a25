/* report/gitlab.c: the GitLab Code Quality report of one call (issue 13,
 * item 7; the man page's OUTPUT section, "GitLab").
 *
 * Owns oac_report_gitlab: one JSON array over every model of the call,
 * in argument order, one object per diagnostic:
 *
 *   {"description": MESSAGE, "check_name": CODE,
 *    "fingerprint": 32 hex digits, "severity": SEVERITY,
 *    "location": {"path": PATH, "lines": {"begin": 1}}}
 *
 * Invariants:
 *  1. severity maps the diagnostic's: note "info", warning "minor", error
 *     "major", and a failure of the tool (lib/rules.def's TOOL rows: the
 *     model could not be read or checked) "blocker".  --werror changes
 *     the status, not these facts (as in SARIF).
 *  2. path is relative to in->srcroot (the working directory: GitLab
 *     wants repository paths) when the model lies under it, else as
 *     report/loc.c writes it.  A model is binary: every finding is on
 *     "line" 1.
 *  3. The fingerprint is report/loc.c's (stable across runs, unique in a
 *     report), prefixed by the model's path hash so that it is unique
 *     across the models of one call as well.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>

#include "oac_int.h"
#include "report/loc.h"
#include "report/str.h"

static void put(json_t *obj, const char *key, json_t *value, bool *ok)
{
    if (!value || json_object_set_new(obj, key, value) != 0)
        *ok = false;
}

static const char *gitlab_severity(const oac_diag *d)
{
    if (oac_code_is_failure(d->code))
        return "blocker";
    switch (d->severity) {
    case OAC_SEV_ERROR: return "major";
    case OAC_SEV_WARNING: return "minor";
    case OAC_SEV_NOTE: return "info";
    }
    return "major";
}

static uint64_t path_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static json_t *issue_json(const oac_diag *d, const char *rel, uint64_t fp, bool *ok)
{
    json_t *o = json_object();
    json_t *loc = json_object();
    json_t *lines = json_object();
    char hex[33];
    if (!o || !loc || !lines) {
        json_decref(o);
        json_decref(loc);
        json_decref(lines);
        *ok = false;
        return NULL;
    }
    snprintf(hex, sizeof hex, "%016" PRIx64 "%016" PRIx64, path_hash(rel), fp);
    put(o, "description", oac_json_str(d->message ? d->message : ""), ok);
    put(o, "check_name", oac_json_str(oac_code_name(d->code)), ok);
    put(o, "fingerprint", oac_json_str(hex), ok);
    put(o, "severity", oac_json_str(gitlab_severity(d)), ok);
    put(loc, "path", oac_json_str(rel), ok);
    put(lines, "begin", json_integer(1), ok);
    put(loc, "lines", lines, ok);
    put(o, "location", loc, ok);
    return o;
}

json_t *oac_report_gitlab(oac_ctx *ctx, const oac_report_input *in, size_t n)
{
    bool ok = true;
    json_t *arr = json_array();
    if (!arr)
        ok = false;
    for (size_t m = 0; ok && m < n; m++) {
        bool rel;
        uint64_t *fps = NULL;
        char *path = oac_report_relpath(ctx, in[m].path ? in[m].path : "",
                                        in[m].srcroot, &rel);
        if (!path || oac_report_fingerprints(ctx, &fps, in[m].diags, path) != OAC_OK) {
            oac_dealloc(ctx, path);
            ok = false;
            break;
        }
        for (size_t i = 0; ok && i < oac_diags_count(in[m].diags); i++) {
            json_t *o = issue_json(oac_diags_get(in[m].diags, i), path, fps[i], &ok);
            if (!o || json_array_append_new(arr, o) != 0)
                ok = false;
        }
        /* Contract 12: one issue per code with findings past the listing
         * cap, saying how many. */
        for (int c = 0; ok && c < OAC_CODE_COUNT; c++) {
            uint64_t k = oac_diags_omitted(in[m].diags, (oac_code)c);
            if (!k)
                continue;
            char msg[256];
            snprintf(msg, sizeof msg, "%llu more %s findings omitted: a report lists at "
                     "most %d of one code per model", (unsigned long long)k,
                     oac_code_name((oac_code)c), OAC_DIAG_LIST_MAX);
            oac_diag d = { .code = (oac_code)c, .severity = oac_code_severity((oac_code)c),
                           .message = msg };
            json_t *o = issue_json(&d, path, path_hash(msg), &ok);
            if (!o || json_array_append_new(arr, o) != 0)
                ok = false;
        }
        oac_dealloc(ctx, fps);
        oac_dealloc(ctx, path);
    }
    if (!ok) {
        json_decref(arr);
        oac_err(ctx, OAC_ENOMEM, "out of memory writing the GitLab report");
        return NULL;
    }
    return arr;
}

/* report/api_json.c: one model, one call, the report as JSON text, for callers
 * that cannot build the structures of oac.h (Python's ctypes:
 * python/onnx_alias_check).
 *
 * Owns oac_check_json and oac_annotate_json.  Contract 5 (check, one
 * model, --format=json) and 7 (annotate, --format=json): each does what
 * the command line does for one model (src/cmd_check.c, cmd_annotate.c)
 * with the library's own calls, and turns the report object of
 * report/json.c into text.
 *
 * Invariants:
 *  1. A report is handed over whenever the command line would print one:
 *     an unreadable model is a report with its parse-error, a check or
 *     annotate that stopped (out of memory) a report with
 *     analysis-failed.  Usage errors (a --dim name the model does not
 *     declare, what oac_check refuses as OAC_EINVAL) return OAC_EINVAL
 *     with the message on the context and no report, as the command line
 *     writes none (cmd_check.c, invariant 3).
 *  2. The JSON text is written through the context's allocator (json_dump
 *     into an oac_realloc'd buffer), so oac_free releases it and the
 *     allocation-failure tests reach it.
 *  3. Nothing is written to disk: annotate's model comes back as bytes
 *     (annotate/annotate.c, oac_annotation_write_buffer).
 */
#include <jansson.h>
#include <string.h>

#include "annotate/annotate.h"

typedef struct text_buf {
    oac_ctx *ctx;
    char *s;
    size_t len, cap;
    bool failed;
} text_buf;

static int text_cb(const char *p, size_t n, void *data)
{
    text_buf *b = data;
    if (b->failed)
        return -1;
    if (oac_grow(b->ctx, (void **)&b->s, &b->cap, b->len + n + 1, 1) != OAC_OK) {
        b->failed = true;
        return -1;
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

/* j as text in *out (steals j); OAC_ENOMEM with the message on ctx. */
static int json_text(oac_ctx *ctx, char **out, json_t *j)
{
    text_buf b = { .ctx = ctx };
    int rc = OAC_OK;
    if (!j)
        return OAC_ENOMEM;      /* the report's message is on ctx */
    if (json_dump_callback(j, text_cb, &b, JSON_INDENT(2)) != 0 ||
        text_cb("\n", 1, &b) != 0) {
        oac_dealloc(ctx, b.s);
        rc = oac_err(ctx, OAC_ENOMEM, "out of memory writing the JSON report");
    } else {
        *out = b.s;
    }
    json_decref(j);
    return rc;
}

/* Load from a file (buf NULL) or from memory. */
static int load(oac_ctx *ctx, oac_model **model, const char *name, const void *buf,
                size_t len, oac_diags *diags)
{
    if (!buf && !name)
        return oac_err(ctx, OAC_EINVAL, "no model: neither a path nor a buffer");
    int rc = buf ? oac_model_load_buffer(ctx, model, buf, len, name, NULL, diags)
                 : oac_model_load(ctx, model, name, diags);
    if (rc < 0)
        *model = NULL;
    /* As cmd_check.c: a load failure other than the parse-error the
     * loader reported (out of memory) still has to be in the report. */
    if (rc < 0 && oac_diags_find(diags, OAC_PARSE_ERROR) < 0 &&
        oac_diags_add_failure(diags, ctx, rc, "the model could not be loaded") != OAC_OK)
        return OAC_ENOMEM;
    return OAC_OK;
}

int oac_check_json(oac_ctx *ctx, char **out, const char *name, const void *buf,
                   size_t len, const oac_check_opts *opts, bool werror)
{
    oac_diags *diags = NULL;
    oac_model *model = NULL;
    oac_analysis *an = NULL;
    int rc;

    *out = NULL;
    if (!(diags = oac_diags_new(ctx))) {
        rc = OAC_ENOMEM;
        goto done;
    }
    if ((rc = load(ctx, &model, name, buf, len, diags)) != OAC_OK)
        goto done;
    if (model) {
        rc = oac_check(ctx, &an, model, opts, diags);
        if (rc == OAC_EINVAL)
            goto done;          /* usage: no report (invariant 1) */
        if (rc == OAC_EPARSE)
            rc = OAC_OK;        /* an unreadable config: config-invalid in the report */
        if (rc < 0 && oac_diags_add_failure(diags, ctx, rc, "the check stopped") != OAC_OK) {
            rc = OAC_ENOMEM;
            goto done;
        }
    }
    oac_report_input in = {
        .path = model ? oac_model_path(model) : name ? name : "<buffer>",
        .model = model, .diags = diags, .analysis = an, .werror = werror,
    };
    rc = json_text(ctx, out, oac_report_json(ctx, &in));
done:
    oac_analysis_free(an);
    oac_model_free(model);
    oac_diags_free(diags);
    return rc;
}

int oac_annotate_json(oac_ctx *ctx, uint8_t **out, size_t *out_len, char **report,
                      const char *name, const void *buf, size_t len,
                      const oac_annotate_opts *opts)
{
    oac_diags *diags = NULL;
    oac_model *model = NULL;
    oac_annotation *a = NULL;
    int rc;

    *out = NULL;
    *out_len = 0;
    *report = NULL;
    /* A capacity below 1 is a usage error, as --capacity's. */
    if (opts && opts->capacity < 0)
        return oac_err(ctx, OAC_EINVAL, "capacity %lld: a capacity is at least 1",
                       (long long)opts->capacity);
    if (!(diags = oac_diags_new(ctx))) {
        rc = OAC_ENOMEM;
        goto done;
    }
    if ((rc = load(ctx, &model, name, buf, len, diags)) != OAC_OK)
        goto done;
    if (model) {
        oac_annotate_opts none = { 0 };
        rc = oac_annotate(ctx, &a, model, opts ? opts : &none, diags);
        if (rc == OAC_OK)
            rc = oac_annotation_write_buffer(ctx, a, model, out, out_len, diags);
        /* config-invalid is in the report already (OAC_EPARSE). */
        if (rc < 0 && rc != OAC_EPARSE &&
            oac_diags_add_failure(diags, ctx, rc, "annotate stopped") != OAC_OK) {
            rc = OAC_ENOMEM;
            goto done;
        }
    }
    oac_report_input in = {
        .path = model ? oac_model_path(model) : name ? name : "<buffer>",
        .model = model, .diags = diags, .annotation = a,
    };
    rc = json_text(ctx, report, oac_annotate_report_json(ctx, &in));
done:
    if (rc != OAC_OK) {
        oac_free(*out);
        *out = NULL;
        *out_len = 0;
    }
    oac_annotation_free(a);
    oac_model_free(model);
    oac_diags_free(diags);
    return rc;
}

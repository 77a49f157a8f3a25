/* report/json.c: the JSON report of one model (contract, section 4).
 *
 * Owns oac_report_json and oac_report_failed: turning what the loader,
 * the checker and the runtime left as data into the report object; and
 * annotate's report object (contract 7, step 6), which shares its model
 * and diagnostic objects.  Every
 * key name below is normative; schemas/report.schema.json describes the
 * same object and tests/validate_report.py holds the two together.
 *
 * Invariants:
 *  1. Every required key is present whatever is unknown: an unreadable
 *     model (in->model NULL) or a model that was not analysed still gets
 *     `model` {path, ir_version: null, opset_import: []}, empty
 *     `alias_classes`, and `memory_plan` with every field null.
 *  2. `summary` is counted from the diagnostics written, never passed in,
 *     so the two cannot disagree; `status` follows oac_report_failed.
 *  3. `execution` appears only when the caller ran the model.
 *  4. Nothing is printed; a failed allocation returns NULL with the
 *     message on the context.  jansson allocates through its own
 *     allocator (setting it would be global state, which lib/ avoids).
 *  5. Every string goes through oac_json_str (report/str.h): a name or
 *     path that is not UTF-8 is written with U+FFFD, never costs the
 *     model its report.
 *
 * The report reads the analysis through its internal layout (check/analysis.h),
 * as the other library files do, so reports need no accessor beyond it.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check/analysis.h"
#include "report/str.h"

bool oac_report_failed(const oac_report_input *in)
{
    /* Omitted findings count as if listed (contract 12). */
    if (oac_diags_count_severity(in->diags, OAC_SEV_ERROR) > 0 ||
        oac_diags_omitted_severity(in->diags, OAC_SEV_ERROR) > 0)
        return true;
    return in->werror && (oac_diags_count_severity(in->diags, OAC_SEV_WARNING) > 0 ||
                          oac_diags_omitted_severity(in->diags, OAC_SEV_WARNING) > 0);
}

/* A string, or null for NULL: the report's nullable strings. */
static json_t *str_or_null(const char *s)
{
    return s ? oac_json_str(s) : json_null();
}

static json_t *opt_u64(oac_opt_u64 v)
{
    return v.known ? json_integer((json_int_t)v.value) : json_null();
}

/* json_object_set_new that remembers a failure instead of returning it,
 * so builders below stay linear; jansson frees value on failure. */
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

/* Optional diagnostic keys are written only where they apply (contract
 * 4: "where they apply"), so an absent key means "not applicable". */
static void put_opt_str(json_t *obj, const char *key, const char *s, bool *ok)
{
    if (s)
        put(obj, key, oac_json_str(s), ok);
}

static json_t *diag_json(const oac_diag *d)
{
    bool ok = true;
    json_t *o = json_object();
    if (!o)
        return NULL;
    put(o, "code", oac_json_str(oac_code_name(d->code)), &ok);
    put(o, "severity", oac_json_str(oac_severity_name(d->severity)), &ok);
    put(o, "message", oac_json_str(d->message ? d->message : ""), &ok);
    put_opt_str(o, "graph", d->graph, &ok);
    put_opt_str(o, "node", d->node, &ok);
    put_opt_str(o, "op_type", d->op_type, &ok);
    put_opt_str(o, "value", d->value, &ok);
    put_opt_str(o, "location", d->location, &ok);
    /* Additions (issue 13): how to fix it, and the second party. */
    put_opt_str(o, "help", oac_code_help(d->code), &ok);
    if (d->related.message) {
        json_t *rel = json_array();
        json_t *r = json_object();
        if (!rel || !r) {
            json_decref(rel);
            json_decref(r);
            ok = false;
        } else {
            put(r, "message", oac_json_str(d->related.message), &ok);
            put_opt_str(r, "graph", d->related.graph, &ok);
            put_opt_str(r, "node", d->related.node, &ok);
            put_opt_str(r, "value", d->related.value, &ok);
            put_opt_str(r, "location", d->related.location, &ok);
            push(rel, r, &ok);
            put(o, "related", rel, &ok);
        }
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The bytes of s as lower-case hex (NULL when out of memory). */
static json_t *path_hex(const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = strlen(s);
    char *buf = n < SIZE_MAX / 2 ? malloc(2 * n + 1) : NULL;
    if (!buf)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        buf[2 * i] = hex[(unsigned char)s[i] >> 4];
        buf[2 * i + 1] = hex[(unsigned char)s[i] & 15];
    }
    buf[2 * n] = '\0';
    json_t *j = json_string(buf);
    free(buf);
    return j;
}

static json_t *model_json(const oac_report_input *in, bool *ok)
{
    json_t *o = json_object();
    json_t *ops = json_array();
    const Onnx__ModelProto *p = in->model ? in->model->proto : NULL;
    if (!o || !ops) {
        json_decref(o);
        json_decref(ops);
        return NULL;
    }
    const char *path = in->path ? in->path : "";
    put(o, "path", oac_json_str(path), ok);
    /* A path that is not UTF-8 reads with U+FFFD in path, so two files
     * could share one; path_bytes keeps its bytes (lower-case hex). */
    if (!oac_utf8_valid(path))
        put(o, "path_bytes", path_hex(path), ok);
    put(o, "ir_version", p && p->has_ir_version
                              ? json_integer((json_int_t)p->ir_version)
                              : json_null(), ok);
    for (size_t i = 0; p && i < p->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = p->opset_import[i];
        json_t *e = json_object();
        if (!e) {
            *ok = false;
            break;
        }
        /* An absent domain is the default ONNX domain "". */
        put(e, "domain", oac_json_str(op->domain ? op->domain : ""), ok);
        put(e, "version", op->has_version ? json_integer((json_int_t)op->version)
                                          : json_null(), ok);
        push(ops, e, ok);
    }
    put(o, "opset_import", ops, ok);
    return o;
}

static json_t *summary_json(const oac_diags *diags, bool *ok)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    put(o, "errors", json_integer((json_int_t)oac_diags_count_severity(diags, OAC_SEV_ERROR)), ok);
    put(o, "warnings", json_integer((json_int_t)oac_diags_count_severity(diags, OAC_SEV_WARNING)), ok);
    put(o, "notes", json_integer((json_int_t)oac_diags_count_severity(diags, OAC_SEV_NOTE)), ok);
    /* An addition (issue 13): findings --select/--ignore removed, when
     * either was given. */
    if (oac_diags_filtered(diags))
        put(o, "ignored", json_integer((json_int_t)oac_diags_ignored(diags)), ok);
    /* Contract 12: code -> findings past the listing cap, {} when none. */
    json_t *om = json_object();
    for (int c = 0; om && c < OAC_CODE_COUNT; c++)
        if (oac_diags_omitted(diags, (oac_code)c))
            put(om, oac_code_name((oac_code)c),
                json_integer((json_int_t)oac_diags_omitted(diags, (oac_code)c)), ok);
    put(o, "omitted", om, ok);
    return o;
}

static json_t *class_json(const oac_alias_class *c, bool *ok)
{
    json_t *o = json_object();
    json_t *members = json_array();
    json_t *shape = c->rank >= 0 ? json_array() : json_null();
    if (!o || !members || !shape) {
        json_decref(o);
        json_decref(members);
        json_decref(shape);
        return NULL;
    }
    put(o, "root", oac_json_str(c->root ? c->root : ""), ok);
    for (size_t i = 0; i < c->n_members; i++)
        push(members, oac_json_str(c->members[i] ? c->members[i] : ""), ok);
    put(o, "members", members, ok);
    put(o, "elem_type", str_or_null(oac_elem_name(c->elem_type)), ok);
    /* Each dimension is its value when known, else its symbol, else null;
     * an unknown rank makes the whole shape null. */
    for (int i = 0; i < c->rank; i++) {
        if (c->dims && c->dims[i] >= 0)
            push(shape, json_integer((json_int_t)c->dims[i]), ok);
        else if (c->dim_params && c->dim_params[i])
            push(shape, oac_json_str(c->dim_params[i]), ok);
        else
            push(shape, json_null(), ok);
    }
    put(o, "shape", shape, ok);
    put(o, "bytes", opt_u64(c->bytes), ok);
    return o;
}

static json_t *plan_json(const oac_memory_plan *p, bool *ok)
{
    static const oac_memory_plan unknown;   /* every field unknown */
    json_t *o = json_object();
    if (!o)
        return NULL;
    if (!p)
        p = &unknown;
    put(o, "persistent_cache_bytes", opt_u64(p->persistent_cache_bytes), ok);
    put(o, "planned_output_bytes", opt_u64(p->planned_output_bytes), ok);
    put(o, "workspace_bytes", opt_u64(p->workspace_bytes), ok);
    put(o, "peak_bytes", opt_u64(p->peak_bytes), ok);
    put(o, "second_cache_bytes", opt_u64(p->second_cache_bytes), ok);
    return o;
}

static json_t *unchecked_json(const oac_unchecked *u, bool *ok)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    put(o, "rule", oac_json_str(u->rule ? u->rule : ""), ok);
    put(o, "graph", str_or_null(u->graph), ok);
    put(o, "node", str_or_null(u->node), ok);
    put(o, "value", str_or_null(u->value), ok);
    put(o, "reason", oac_json_str(u->reason ? u->reason : ""), ok);
    return o;
}

static json_t *identity_json(uint64_t checked, uint64_t held, bool *ok)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    put(o, "checked", json_integer((json_int_t)checked), ok);
    put(o, "held", json_integer((json_int_t)held), ok);
    return o;
}

/* Contract 11: execution.pages, one entry per bound paged cache. */
static json_t *pages_json(const oac_execution *e, bool *ok)
{
    json_t *arr = json_array();
    if (!arr) {
        *ok = false;
        return NULL;
    }
    for (size_t i = 0; i < e->n_pages; i++) {
        const oac_page_record *r = &e->pages[i];
        json_t *o = json_object(), *steps = json_array();
        if (!o || !steps) {
            json_decref(o);
            json_decref(steps);
            *ok = false;
            break;
        }
        put(o, "cache", oac_json_str(r->cache ? r->cache : ""), ok);
        for (size_t k = 0; k < r->n_per_step; k++) {
            const oac_page_step *st = &r->per_step[k];
            json_t *so = json_object(), *by = json_object();
            if (!so || !by) {
                json_decref(so);
                json_decref(by);
                *ok = false;
                break;
            }
            put(so, "step", json_integer((json_int_t)st->step), ok);
            put(so, "pages", json_integer((json_int_t)st->pages), ok);
            for (size_t q = 0; q < r->n_quantizations; q++) {
                char lb[32];
                const char *name = r->quantization_names[q];
                if (!name) {
                    snprintf(lb, sizeof lb, "#%zu", q);
                    name = lb;
                }
                /* A name from the model: as invariant 5 spells it. */
                json_t *key = oac_json_str(name);
                if (key)
                    put(by, json_string_value(key),
                        json_integer((json_int_t)st->bytes_by_quantization[q]), ok);
                else
                    *ok = false;
                json_decref(key);
            }
            put(so, "bytes_by_quantization", by, ok);
            put(so, "total_bytes", json_integer((json_int_t)st->total_bytes), ok);
            put(so, "re_encoded_pages", json_integer((json_int_t)st->re_encoded_pages), ok);
            put(so, "re_encoded_bytes", json_integer((json_int_t)st->re_encoded_bytes), ok);
            push(steps, so, ok);
        }
        put(o, "per_step", steps, ok);
        put(o, "per_step_omitted", json_integer((json_int_t)r->per_step_omitted), ok);
        push(arr, o, ok);
    }
    return arr;
}

static json_t *execution_json(const oac_execution *e, bool *ok)
{
    json_t *o = json_object();
    json_t *steps = json_array();
    if (!o || !steps) {
        json_decref(o);
        json_decref(steps);
        return NULL;
    }
    put(o, "steps_requested", json_integer((json_int_t)e->steps_requested), ok);
    put(o, "steps_completed", json_integer((json_int_t)e->steps_completed), ok);
    put(o, "pointer_identity", identity_json(e->identity_checked, e->identity_held, ok), ok);
    for (size_t i = 0; i < e->n_per_step; i++) {
        const oac_step_stats *s = &e->per_step[i];
        json_t *so = json_object();
        if (!so) {
            *ok = false;
            break;
        }
        put(so, "step", json_integer((json_int_t)s->step), ok);
        put(so, "alloc_calls", json_integer((json_int_t)s->alloc_calls), ok);
        put(so, "alloc_bytes", json_integer((json_int_t)s->alloc_bytes), ok);
        put(so, "pointer_identity", identity_json(s->identity_checked, s->identity_held, ok), ok);
        /* Additions of contract 8 (copied bytes, the loop's past length). */
        put(so, "copied_bytes", json_integer((json_int_t)s->copied_bytes), ok);
        put(so, "past_length",
            s->past_length >= 0 ? json_integer((json_int_t)s->past_length) : json_null(), ok);
        push(steps, so, ok);
    }
    put(o, "per_step", steps, ok);
    /* An addition: per_step keeps the first and last steps only. */
    put(o, "per_step_omitted", json_integer((json_int_t)e->per_step_omitted), ok);
    put(o, "second_cache_bytes", json_integer((json_int_t)e->second_cache_bytes), ok);
    put(o, "copied_bytes", json_integer((json_int_t)e->copied_bytes), ok);
    put(o, "measured_peak_bytes", json_integer((json_int_t)e->measured_peak_bytes), ok);
    put(o, "planned_peak_bytes", opt_u64(e->planned_peak_bytes), ok);
    put(o, "peak_matches_plan", json_boolean(e->peak_matches_plan), ok);
    /* An addition: the caller-bound cache storage, bound once. */
    put(o, "cache_bytes_bound", json_integer((json_int_t)e->cache_bytes_bound), ok);
    /* An addition: what the memory budget counted at its most. */
    put(o, "memory_peak_bytes", json_integer((json_int_t)e->memory_peak_bytes), ok);
    if (e->n_pages)   /* only runs that bind a paged cache */
        put(o, "pages", pages_json(e, ok), ok);
    return o;
}

/* One entry of kv_caches (contract 9.3). */
static json_t *kv_json(const oac_kv_cache *e, bool *ok)
{
    static const struct { unsigned bit; const char *name; } by[] = {
        { OAC_KV_BY_STRUCTURE, "structure" }, { OAC_KV_BY_CONFIG, "config" },
        { OAC_KV_BY_NAMES, "names" },
    };
    json_t *o = json_object();
    json_t *found = json_array();
    if (!o || !found) {
        json_decref(o);
        json_decref(found);
        *ok = false;
        return NULL;
    }
    put(o, "past", oac_json_str(e->past), ok);
    put(o, "present", oac_json_str(e->present), ok);
    put(o, "verdict", oac_json_str(oac_kv_verdict_name(e->verdict)), ok);
    put(o, "reason", str_or_null(oac_refusal_name((oac_refusal)e->reason)), ok);
    for (size_t i = 0; i < sizeof by / sizeof by[0]; i++)
        if (e->found_by & by[i].bit)
            push(found, oac_json_str(by[i].name), ok);
    put(o, "found_by", found, ok);
    put(o, "node", str_or_null(e->node), ok);
    put(o, "op_type", str_or_null(e->op_type), ok);
    put(o, "bytes_per_token", opt_u64(e->bytes_per_token), ok);
    put(o, "capacity", e->capacity >= 0 ? json_integer((json_int_t)e->capacity)
                       : str_or_null(e->capacity_symbol), ok);
    return o;
}

/* The report's "tool": {"name", "version"}, or NULL (*ok false). */
static json_t *tool_json(bool *ok)
{
    json_t *tool = json_object();
    if (!tool) {
        *ok = false;
        return NULL;
    }
    put(tool, "name", oac_json_str(OAC_TOOL_NAME), ok);
    put(tool, "version", oac_json_str(OAC_VERSION), ok);
    return tool;
}

json_t *oac_report_json(oac_ctx *ctx, const oac_report_input *in)
{
    bool ok = true;
    const oac_analysis *a = in->analysis;
    json_t *r = json_object();
    json_t *diags = json_array();
    json_t *classes = json_array();
    json_t *unchecked = json_array();

    if (!r || !diags || !classes || !unchecked) {
        json_decref(diags);
        json_decref(classes);
        json_decref(unchecked);
        ok = false;
        goto done;
    }
    put(r, "tool", tool_json(&ok), &ok);
    put(r, "model", model_json(in, &ok), &ok);
    put(r, "status", oac_json_str(oac_report_failed(in) ? "error" : "ok"), &ok);
    put(r, "summary", summary_json(in->diags, &ok), &ok);
    for (size_t i = 0; i < oac_diags_count(in->diags); i++)
        push(diags, diag_json(oac_diags_get(in->diags, i)), &ok);
    put(r, "diagnostics", diags, &ok);
    for (size_t i = 0; a && i < a->n_classes; i++)
        push(classes, class_json(&a->classes[i], &ok), &ok);
    put(r, "alias_classes", classes, &ok);
    put(r, "memory_plan", plan_json(a ? &a->plan : NULL, &ok), &ok);
    for (size_t i = 0; a && i < a->n_unchecked; i++)
        push(unchecked, unchecked_json(&a->unchecked[i], &ok), &ok);
    put(r, "unchecked", unchecked, &ok);
    json_t *kv = json_array();
    for (size_t i = 0; kv && i < oac_analysis_kv_count(a); i++)
        push(kv, kv_json(oac_analysis_kv(a, i), &ok), &ok);
    put(r, "kv_caches", kv, &ok);
    if (in->execution)
        put(r, "execution", execution_json(in->execution, &ok), &ok);
done:
    if (!ok) {
        json_decref(r);
        oac_err(ctx, OAC_ENOMEM, "out of memory writing the JSON report");
        return NULL;
    }
    return r;
}

/* ---- annotate's report (contract 7, step 6) ------------------------------ */

bool oac_annotate_report_failed(const oac_report_input *in)
{
    return oac_diags_count_severity(in->diags, OAC_SEV_ERROR) > 0 ||
           oac_annotation_count(in->annotation, OAC_VERDICT_REFUSED) > 0;
}

static json_t *pair_json(const oac_annotate_pair *p, bool *ok)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    put(o, "past", oac_json_str(p->past ? p->past : ""), ok);
    put(o, "present", oac_json_str(p->present ? p->present : ""), ok);
    put(o, "node", str_or_null(p->node), ok);
    put(o, "op_type", str_or_null(p->op_type), ok);
    if (p->input_port >= 0 && p->output_port >= 0) {
        json_t *ports = json_object();
        if (ports) {
            put(ports, "input", json_integer(p->input_port), ok);
            put(ports, "output", json_integer(p->output_port), ok);
        }
        put(o, "ports", ports, ok);
    } else {
        put(o, "ports", json_null(), ok);
    }
    put(o, "verdict", oac_json_str(oac_verdict_name(p->verdict)), ok);
    put(o, "reason", str_or_null(oac_refusal_name(p->reason)), ok);
    put(o, "config_reason", str_or_null(oac_refusal_name(p->config_reason)), ok);
    put(o, "message", oac_json_str(p->message ? p->message : ""), ok);
    return o;
}

json_t *oac_annotate_report_json(oac_ctx *ctx, const oac_report_input *in)
{
    bool ok = true;
    const oac_annotation *an = in->annotation;
    json_t *r = json_object();
    json_t *output = json_object();
    json_t *pairs = json_array();
    json_t *diags = json_array();

    if (!r || !output || !pairs || !diags) {
        json_decref(output);
        json_decref(pairs);
        json_decref(diags);
        ok = false;
        goto done;
    }
    put(r, "tool", tool_json(&ok), &ok);
    put(r, "model", model_json(in, &ok), &ok);
    put(r, "config", str_or_null(oac_annotation_config(an)), &ok);
    put(output, "path", str_or_null(in->output), &ok);
    put(output, "written", json_boolean(oac_annotation_output(an) != NULL), &ok);
    put(r, "output", output, &ok);
    put(r, "status", oac_json_str(oac_annotate_report_failed(in) ? "error" : "ok"), &ok);
    put(r, "summary", summary_json(in->diags, &ok), &ok);
    for (size_t i = 0; i < oac_annotation_pair_count(an); i++)
        push(pairs, pair_json(oac_annotation_pair(an, i), &ok), &ok);
    put(r, "pairs", pairs, &ok);
    for (size_t i = 0; i < oac_diags_count(in->diags); i++)
        push(diags, diag_json(oac_diags_get(in->diags, i)), &ok);
    put(r, "diagnostics", diags, &ok);
done:
    if (!ok) {
        json_decref(r);
        oac_err(ctx, OAC_ENOMEM, "out of memory writing the JSON report");
        return NULL;
    }
    return r;
}

/* check_report.c: the JSON, text and SARIF reports (lib/report_*.c;
 * contract, sections 4 and 5) from hand-built inputs.
 *
 * Each case fills an oac_report_input the way the loader, checker and
 * runtime would (a ModelProto in an oac_model, diagnostics added with
 * oac_diag_add, an analysis and an execution as plain structs), so the
 * reports are tested without depending on those modules' behaviour.
 */
#include "harness.h"
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* ---- fixtures ---------------------------------------------------------- */

typedef struct fixture {
    oac_ctx *ctx;
    oac_diags *diags;
    Onnx__OperatorSetIdProto op0, op1;
    Onnx__OperatorSetIdProto *ops[2];
    Onnx__ModelProto proto;
    struct oac_model model;
    int64_t dims[4];
    char *dim_params[4];
    char *members[2];
    oac_alias_class cls;
    oac_unchecked unc;
    struct oac_analysis analysis;
    oac_step_stats steps[2];
    oac_execution exec;
} fixture;

static void fixture_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    f->ctx = oac_ctx_new();
    f->diags = oac_diags_new(f->ctx);
    ck_assert_ptr_nonnull(f->diags);

    f->op0 = (Onnx__OperatorSetIdProto)ONNX__OPERATOR_SET_ID_PROTO__INIT;
    f->op0.domain = "";
    f->op0.has_version = 1;
    f->op0.version = 21;
    f->op1 = (Onnx__OperatorSetIdProto)ONNX__OPERATOR_SET_ID_PROTO__INIT;
    f->op1.domain = "onnx_alias";
    f->op1.has_version = 1;
    f->op1.version = 1;
    f->ops[0] = &f->op0;
    f->ops[1] = &f->op1;
    f->proto = (Onnx__ModelProto)ONNX__MODEL_PROTO__INIT;
    f->proto.has_ir_version = 1;
    f->proto.ir_version = 10;
    f->proto.n_opset_import = 2;
    f->proto.opset_import = f->ops;
    f->model.ctx = f->ctx;
    f->model.path = "m.onnx";
    f->model.proto = &f->proto;

    /* FLOAT16 [2, batch, ?, 16]: a symbol, and a dimension nobody knows. */
    f->dims[0] = 2;
    f->dims[1] = -1;
    f->dims[2] = -1;
    f->dims[3] = 16;
    f->dim_params[1] = "batch";
    f->members[0] = "cache";
    f->members[1] = "cache_out";
    f->cls.root = "cache";
    f->cls.graph = "main";
    f->cls.members = f->members;
    f->cls.n_members = 2;
    f->cls.elem_type = 10;
    f->cls.rank = 4;
    f->cls.dims = f->dims;
    f->cls.dim_params = f->dim_params;
    f->cls.read_write = true;
    f->unc.rule = "capacity";
    f->unc.graph = "main";
    f->unc.node = "upd";
    f->unc.value = "pos";
    f->unc.reason = "position is not known";
    f->analysis.ctx = f->ctx;
    f->analysis.classes = &f->cls;
    f->analysis.n_classes = 1;
    f->analysis.unchecked = &f->unc;
    f->analysis.n_unchecked = 1;
    f->analysis.plan.persistent_cache_bytes = (oac_opt_u64){ true, 4096 };
    f->analysis.plan.second_cache_bytes = (oac_opt_u64){ true, 0 };

    f->steps[0] = (oac_step_stats){ .step = 0, .alloc_calls = 3, .alloc_bytes = 300,
                                    .identity_checked = 1, .identity_held = 1 };
    f->steps[1] = (oac_step_stats){ .step = 1, .alloc_calls = 2, .alloc_bytes = 200,
                                    .identity_checked = 1, .identity_held = 1 };
    f->exec.steps_requested = 2;
    f->exec.steps_completed = 2;
    f->exec.identity_checked = 2;
    f->exec.identity_held = 2;
    f->exec.per_step = f->steps;
    f->exec.n_per_step = 2;
    f->exec.measured_peak_bytes = 512;
    f->exec.planned_peak_bytes = (oac_opt_u64){ true, 512 };
    f->exec.peak_matches_plan = true;
    f->exec.cache_bytes_bound = 4096;
}

static void fixture_fini(fixture *f)
{
    oac_diags_free(f->diags);
    oac_ctx_free(f->ctx);
}

static void add_error(fixture *f)
{
    oac_where w = { .graph = "main", .node = "upd", .op_type = "CacheUpdate",
                    .value = "cache_out", .location = "/graph/node/0/output_alias/0" };
    ck_assert_int_eq(oac_diag_add(f->diags, OAC_ALIAS_CYCLE, &w,
                                  "node 'upd' aliases 'cache_out' to itself"), 0);
}

static void add_warning(fixture *f)
{
    ck_assert_int_eq(oac_diag_add(f->diags, OAC_ALIAS_IMPLIED, NULL,
                                  "CacheUpdate 'u2' lacks output_alias"), 0);
}

static json_t *obj(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    ck_assert_msg(v != NULL, "key '%s' missing", key);
    return v;
}

static json_int_t num(json_t *o, const char *key)
{
    json_t *v = obj(o, key);
    ck_assert_msg(json_is_integer(v), "key '%s' is not an integer", key);
    return json_integer_value(v);
}

static const char *str(json_t *o, const char *key)
{
    json_t *v = obj(o, key);
    ck_assert_msg(json_is_string(v), "key '%s' is not a string", key);
    return json_string_value(v);
}

/* ---- JSON ---------------------------------------------------------------- */

START_TEST(test_json_full)
{
    fixture f;
    fixture_init(&f);
    add_error(&f);
    add_warning(&f);
    oac_report_input in = { .path = "m.onnx", .model = &f.model, .diags = f.diags,
                            .analysis = &f.analysis, .execution = &f.exec };
    json_t *r = oac_report_json(f.ctx, &in);
    ck_assert_ptr_nonnull(r);

    ck_assert_str_eq(str(obj(r, "tool"), "name"), "onnx-alias-check");
    ck_assert_str_eq(str(obj(r, "tool"), "version"), OAC_VERSION);
    json_t *model = obj(r, "model");
    ck_assert_str_eq(str(model, "path"), "m.onnx");
    ck_assert_int_eq(num(model, "ir_version"), 10);
    json_t *ops = obj(model, "opset_import");
    ck_assert_uint_eq(json_array_size(ops), 2);
    ck_assert_str_eq(str(json_array_get(ops, 1), "domain"), "onnx_alias");
    ck_assert_int_eq(num(json_array_get(ops, 0), "version"), 21);
    ck_assert_str_eq(str(r, "status"), "error");

    json_t *sum = obj(r, "summary");
    ck_assert_int_eq(num(sum, "errors"), 1);
    ck_assert_int_eq(num(sum, "warnings"), 1);
    ck_assert_int_eq(num(sum, "notes"), 0);

    json_t *ds = obj(r, "diagnostics");
    ck_assert_uint_eq(json_array_size(ds), 2);
    json_t *d0 = json_array_get(ds, 0);
    ck_assert_str_eq(str(d0, "code"), "alias-cycle");
    ck_assert_str_eq(str(d0, "severity"), "error");
    ck_assert_str_eq(str(d0, "message"), "node 'upd' aliases 'cache_out' to itself");
    ck_assert_str_eq(str(d0, "graph"), "main");
    ck_assert_str_eq(str(d0, "node"), "upd");
    ck_assert_str_eq(str(d0, "op_type"), "CacheUpdate");
    ck_assert_str_eq(str(d0, "value"), "cache_out");
    ck_assert_str_eq(str(d0, "location"), "/graph/node/0/output_alias/0");
    /* Keys that do not apply are left out, not written as null. */
    json_t *d1 = json_array_get(ds, 1);
    ck_assert_str_eq(str(d1, "severity"), "warning");
    ck_assert_ptr_null(json_object_get(d1, "node"));
    ck_assert_ptr_null(json_object_get(d1, "location"));

    json_t *cls = json_array_get(obj(r, "alias_classes"), 0);
    ck_assert_str_eq(str(cls, "root"), "cache");
    ck_assert_uint_eq(json_array_size(obj(cls, "members")), 2);
    ck_assert_str_eq(json_string_value(json_array_get(obj(cls, "members"), 1)), "cache_out");
    ck_assert_str_eq(str(cls, "elem_type"), "FLOAT16");
    json_t *shape = obj(cls, "shape");
    ck_assert_uint_eq(json_array_size(shape), 4);
    ck_assert_int_eq(json_integer_value(json_array_get(shape, 0)), 2);
    ck_assert_str_eq(json_string_value(json_array_get(shape, 1)), "batch");
    ck_assert(json_is_null(json_array_get(shape, 2)));
    ck_assert_int_eq(json_integer_value(json_array_get(shape, 3)), 16);
    ck_assert(json_is_null(obj(cls, "bytes")));

    json_t *plan = obj(r, "memory_plan");
    ck_assert_int_eq(num(plan, "persistent_cache_bytes"), 4096);
    ck_assert_int_eq(num(plan, "second_cache_bytes"), 0);
    ck_assert(json_is_null(obj(plan, "peak_bytes")));
    ck_assert(json_is_null(obj(plan, "workspace_bytes")));
    ck_assert(json_is_null(obj(plan, "planned_output_bytes")));

    json_t *unc = json_array_get(obj(r, "unchecked"), 0);
    ck_assert_str_eq(str(unc, "rule"), "capacity");
    ck_assert_str_eq(str(unc, "node"), "upd");
    ck_assert_str_eq(str(unc, "reason"), "position is not known");

    json_t *ex = obj(r, "execution");
    ck_assert_int_eq(num(ex, "steps_requested"), 2);
    ck_assert_int_eq(num(ex, "steps_completed"), 2);
    ck_assert_int_eq(num(obj(ex, "pointer_identity"), "checked"), 2);
    ck_assert_int_eq(num(obj(ex, "pointer_identity"), "held"), 2);
    json_t *st = obj(ex, "per_step");
    ck_assert_uint_eq(json_array_size(st), 2);
    ck_assert_int_eq(num(json_array_get(st, 1), "step"), 1);
    ck_assert_int_eq(num(json_array_get(st, 0), "alloc_calls"), 3);
    ck_assert_int_eq(num(json_array_get(st, 0), "alloc_bytes"), 300);
    ck_assert_int_eq(num(obj(json_array_get(st, 0), "pointer_identity"), "held"), 1);
    ck_assert_int_eq(num(ex, "second_cache_bytes"), 0);
    ck_assert_int_eq(num(ex, "measured_peak_bytes"), 512);
    ck_assert_int_eq(num(ex, "planned_peak_bytes"), 512);
    ck_assert(json_is_true(obj(ex, "peak_matches_plan")));
    json_decref(r);
    fixture_fini(&f);
}
END_TEST

/* Invariant 5 of report/json.c for the names a run reports: a paged
 * cache and its quantizations named by bytes that are not UTF-8 keep the
 * report, spelled with U+FFFD (an unnamed declaration is "#<index>"). */
START_TEST(test_json_page_names)
{
    fixture f;
    fixture_init(&f);
    static const char *const qnames[2] = { "fp8\xff", NULL };
    static const uint64_t bytes[2] = { 512, 256 };
    oac_page_step step = { .step = 1, .pages = 2, .bytes_by_quantization = bytes,
                           .total_bytes = 768 };
    oac_page_record rec = { .cache = "k\xfe", .per_step = &step, .n_per_step = 1,
                            .n_quantizations = 2, .quantization_names = qnames };
    f.exec.pages = &rec;
    f.exec.n_pages = 1;
    oac_report_input in = { .path = "m.onnx", .model = &f.model, .diags = f.diags,
                            .analysis = &f.analysis, .execution = &f.exec };
    json_t *r = oac_report_json(f.ctx, &in);
    ck_assert_ptr_nonnull(r);
    json_t *page = json_array_get(obj(obj(r, "execution"), "pages"), 0);
    ck_assert_ptr_nonnull(page);
    ck_assert_str_eq(str(page, "cache"), "k\xef\xbf\xbd");
    json_t *by = obj(json_array_get(obj(page, "per_step"), 0), "bytes_by_quantization");
    ck_assert_int_eq(num(by, "fp8\xef\xbf\xbd"), 512);
    ck_assert_int_eq(num(by, "#1"), 256);
    json_decref(r);
    fixture_fini(&f);
}
END_TEST

START_TEST(test_json_unreadable)
{
    fixture f;
    fixture_init(&f);
    ck_assert_int_eq(oac_diag_add(f.diags, OAC_PARSE_ERROR, NULL,
                                  "truncated field at byte 7"), 0);
    oac_report_input in = { .path = "bad.onnx", .diags = f.diags };
    json_t *r = oac_report_json(f.ctx, &in);
    ck_assert_ptr_nonnull(r);
    static const char *const required[] = {
        "tool", "model", "status", "summary", "diagnostics", "alias_classes",
        "memory_plan", "unchecked",
    };
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        obj(r, required[i]);
    ck_assert_ptr_null(json_object_get(r, "execution"));
    json_t *model = obj(r, "model");
    ck_assert_str_eq(str(model, "path"), "bad.onnx");
    ck_assert(json_is_null(obj(model, "ir_version")));
    ck_assert_uint_eq(json_array_size(obj(model, "opset_import")), 0);
    ck_assert(json_is_array(obj(model, "opset_import")));
    ck_assert_str_eq(str(r, "status"), "error");
    ck_assert_int_eq(num(obj(r, "summary"), "errors"), 1);
    ck_assert_str_eq(str(json_array_get(obj(r, "diagnostics"), 0), "code"), "parse-error");
    ck_assert_uint_eq(json_array_size(obj(r, "alias_classes")), 0);
    ck_assert_uint_eq(json_array_size(obj(r, "unchecked")), 0);
    json_t *plan = obj(r, "memory_plan");
    ck_assert_uint_eq(json_object_size(plan), 5);
    const char *key;
    json_t *v;
    json_object_foreach(plan, key, v)
        ck_assert_msg(json_is_null(v), "memory_plan.%s is not null", key);
    json_decref(r);
    fixture_fini(&f);
}
END_TEST

START_TEST(test_status_werror)
{
    fixture f;
    fixture_init(&f);
    oac_report_input in = { .path = "m.onnx", .model = &f.model, .diags = f.diags,
                            .analysis = &f.analysis };
    json_t *r = oac_report_json(f.ctx, &in);
    ck_assert_str_eq(str(r, "status"), "ok");
    ck_assert(!oac_report_failed(&in));
    json_decref(r);

    add_warning(&f);
    r = oac_report_json(f.ctx, &in);
    ck_assert_str_eq(str(r, "status"), "ok");   /* warnings alone pass */
    json_decref(r);

    in.werror = true;
    ck_assert(oac_report_failed(&in));
    r = oac_report_json(f.ctx, &in);
    ck_assert_str_eq(str(r, "status"), "error");
    /* --werror keeps severities and counts. */
    ck_assert_int_eq(num(obj(r, "summary"), "errors"), 0);
    ck_assert_int_eq(num(obj(r, "summary"), "warnings"), 1);
    ck_assert_str_eq(str(json_array_get(obj(r, "diagnostics"), 0), "severity"), "warning");
    json_decref(r);
    fixture_fini(&f);
}
END_TEST

/* ---- text ------------------------------------------------------------------ */

START_TEST(test_text)
{
    fixture f;
    fixture_init(&f);
    add_error(&f);
    add_warning(&f);
    ck_assert_int_eq(oac_diag_add(f.diags, OAC_ALIAS_HAZARD, NULL, "two\nlines"), 0);
    oac_report_input in = { .path = "dir/m.onnx", .model = &f.model, .diags = f.diags };
    char *t = oac_report_text(f.ctx, &in);
    ck_assert_ptr_nonnull(t);
    /* Each error and warning is followed by its code's help (issue 13),
     * indented so it never looks like a diagnostic line. */
    char want[4096];
    snprintf(want, sizeof want,
        "dir/m.onnx: error: node 'upd' aliases 'cache_out' to itself [alias-cycle]\n"
        "  help: %s\n"
        "dir/m.onnx: warning: CacheUpdate 'u2' lacks output_alias [alias-implied]\n"
        "  help: %s\n"
        "dir/m.onnx: error: two lines [alias-hazard]\n"
        "  help: %s\n"
        "dir/m.onnx: 2 errors, 1 warning, 0 notes (status: error)\n",
        oac_code_help(OAC_ALIAS_CYCLE), oac_code_help(OAC_ALIAS_IMPLIED),
        oac_code_help(OAC_ALIAS_HAZARD));
    ck_assert_str_eq(t, want);
    oac_free(t);

    /* --ignore: the warning leaves the report, counted as ignored; the
     * status follows what stays, with --werror too. */
    bool keep[OAC_CODE_COUNT];
    for (int i = 0; i < OAC_CODE_COUNT; i++)
        keep[i] = i != OAC_ALIAS_IMPLIED && i != OAC_ALIAS_CYCLE && i != OAC_ALIAS_HAZARD;
    ck_assert_uint_eq(oac_diags_ignore(f.diags, keep), 3);
    ck_assert_uint_eq(oac_diags_ignored(f.diags), 3);
    ck_assert_uint_eq(oac_diags_count(f.diags), 0);
    in.werror = true;
    ck_assert(!oac_report_failed(&in));
    t = oac_report_text(f.ctx, &in);
    ck_assert_str_eq(t, "dir/m.onnx: 0 errors, 0 warnings, 0 notes, 3 ignored (status: ok)\n");
    oac_free(t);
    json_t *rj = oac_report_json(f.ctx, &in);
    ck_assert_int_eq(num(obj(rj, "summary"), "ignored"), 3);
    json_decref(rj);
    in.werror = false;
    /* Identical findings added after the filter are still kept once. */
    add_error(&f);
    add_error(&f);
    ck_assert_uint_eq(oac_diags_count(f.diags), 1);

    /* A clean run: the execution summary sits between diagnostics and the
     * summary line, indented so it never reads as either. */
    oac_diags_free(f.diags);
    f.diags = oac_diags_new(f.ctx);
    in.diags = f.diags;
    in.execution = &f.exec;
    t = oac_report_text(f.ctx, &in);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(strstr(t, "  run: 2 of 2 steps completed\n"));
    ck_assert_ptr_nonnull(strstr(t, "  cache bytes bound once: 4096\n"));
    ck_assert_ptr_nonnull(strstr(t, "  second-cache bytes: 0\n"));
    ck_assert_ptr_nonnull(strstr(t, "  pointer identity: 2/2 held\n"));
    ck_assert_ptr_nonnull(strstr(t, "  peak bytes: measured 512, planned 512 (matches plan)\n"));
    const char *last = strstr(t, "dir/m.onnx: 0 errors, 0 warnings, 0 notes (status: ok)\n");
    ck_assert_ptr_nonnull(last);
    ck_assert_str_eq(last + strlen("dir/m.onnx: 0 errors, 0 warnings, 0 notes (status: ok)\n"), "");
    oac_free(t);
    fixture_fini(&f);
}
END_TEST

/* ---- SARIF ------------------------------------------------------------------ */

START_TEST(test_sarif)
{
    fixture f, g;
    fixture_init(&f);
    fixture_init(&g);
    add_error(&f);
    add_warning(&f);
    ck_assert_int_eq(oac_diag_add(g.diags, OAC_PARSE_ERROR, NULL, "not ONNX"), 0);
    oac_report_input in[2] = {
        { .path = "a b.onnx", .model = &f.model, .diags = f.diags, .analysis = &f.analysis },
        { .path = "bad.onnx", .diags = g.diags },
    };
    json_t *s = oac_report_sarif(f.ctx, in, 2);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(str(s, "version"), "2.1.0");
    json_t *runs = obj(s, "runs");
    ck_assert_uint_eq(json_array_size(runs), 1);
    json_t *run = json_array_get(runs, 0);
    json_t *driver = obj(obj(run, "tool"), "driver");
    ck_assert_str_eq(str(driver, "name"), "onnx-alias-check");
    ck_assert_str_eq(str(driver, "version"), OAC_VERSION);
    json_t *rules = obj(driver, "rules");
    ck_assert_uint_eq(json_array_size(rules), OAC_CODE_COUNT);
    for (int c = 0; c < OAC_CODE_COUNT; c++)
        ck_assert_str_eq(str(json_array_get(rules, (size_t)c), "id"), oac_code_name(c));

    json_t *res = obj(run, "results");
    ck_assert_uint_eq(json_array_size(res), 3);
    json_t *r0 = json_array_get(res, 0);
    ck_assert_str_eq(str(r0, "ruleId"), "alias-cycle");
    ck_assert_int_eq(num(r0, "ruleIndex"), OAC_ALIAS_CYCLE);
    ck_assert_str_eq(str(r0, "level"), "error");
    ck_assert_str_eq(str(obj(r0, "message"), "text"), "node 'upd' aliases 'cache_out' to itself");
    json_t *loc = json_array_get(obj(r0, "locations"), 0);
    json_t *art = obj(obj(loc, "physicalLocation"), "artifactLocation");
    ck_assert_str_eq(str(art, "uri"), "a%20b.onnx");
    ck_assert_int_eq(num(art, "index"), 0);
    json_t *logs = obj(loc, "logicalLocations");
    ck_assert_uint_eq(json_array_size(logs), 3);
    ck_assert_str_eq(str(json_array_get(logs, 0), "kind"), "module");
    ck_assert_str_eq(str(json_array_get(logs, 0), "name"), "main");
    ck_assert_str_eq(str(json_array_get(logs, 1), "kind"), "function");
    ck_assert_str_eq(str(json_array_get(logs, 1), "name"), "upd");
    ck_assert_str_eq(str(json_array_get(logs, 2), "kind"), "variable");
    ck_assert_str_eq(str(json_array_get(logs, 2), "name"), "cache_out");
    ck_assert_str_eq(str(obj(r0, "properties"), "location"), "/graph/node/0/output_alias/0");

    ck_assert_str_eq(str(json_array_get(res, 1), "level"), "warning");
    json_t *r2 = json_array_get(res, 2);
    ck_assert_str_eq(str(r2, "ruleId"), "parse-error");
    json_t *art2 = obj(obj(json_array_get(obj(r2, "locations"), 0), "physicalLocation"),
                       "artifactLocation");
    ck_assert_str_eq(str(art2, "uri"), "bad.onnx");
    ck_assert_int_eq(num(art2, "index"), 1);
    ck_assert_uint_eq(json_array_size(obj(run, "artifacts")), 2);
    json_decref(s);
    fixture_fini(&f);
    fixture_fini(&g);
}
END_TEST

/* ---- failures ------------------------------------------------------------- */

/* Fail each allocation of the text report in turn: NULL with a message,
 * or the full report, never a crash or leak (ASan checks the latter). */
START_TEST(test_text_alloc_chaos)
{
    fixture f;
    fixture_init(&f);
    add_error(&f);
    add_warning(&f);
    oac_report_input in = { .path = "m.onnx", .model = &f.model, .diags = f.diags,
                            .execution = &f.exec };
    char *full = oac_report_text(f.ctx, &in);
    ck_assert_ptr_nonnull(full);
    bool failed_once = false;
    for (unsigned long n = 1; n < 64; n++) {
        oac_ctx_fail_alloc_after(f.ctx, n);
        char *t = oac_report_text(f.ctx, &in);
        oac_ctx_fail_alloc_after(f.ctx, 0);
        if (!t) {
            failed_once = true;
            ck_assert_str_ne(oac_errmsg(f.ctx), "");
        } else {
            ck_assert_str_eq(t, full);
        }
        oac_free(t);
    }
    ck_assert(failed_once);
    oac_free(full);
    fixture_fini(&f);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_add_test(tc, test_json_full);
    tcase_add_test(tc, test_json_page_names);
    tcase_add_test(tc, test_json_unreadable);
    tcase_add_test(tc, test_status_werror);
    tcase_add_test(tc, test_text);
    tcase_add_test(tc, test_sarif);
    tcase_add_test(tc, test_text_alloc_chaos);
    suite_add_tcase(s, tc);
    return s;
}

/* check_bindings.c: the suite of lib/report/api_json.c, oac_check_json and
 * oac_annotate_json (issue 13, item 8: what the Python module calls).
 *
 * The one-call functions must say what the library's own pipeline says
 * (load, oac_check, oac_report_json; oac_annotate and its writer): every
 * example's report from a buffer and from a path is compared, as JSON, to
 * the report the pipeline makes; dims, werror, unreadable input and usage
 * errors behave as the command line's; annotate in memory hands over the
 * same bytes oac_annotation_write writes to a file, and nothing when a
 * pair is refused; every allocation failing in turn ends in a report that
 * says analysis-failed, or OAC_ENOMEM with nothing handed over.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "genai_models.h"
#include "harness.h"

/* The pipeline's report of buf, as cmd_check.c makes it. */
static json_t *pipeline_report(oac_ctx *ctx, const uint8_t *buf, size_t len,
                               const char *name, const oac_check_opts *o, bool werror)
{
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m = NULL;
    oac_analysis *a = NULL;
    ck_assert_ptr_nonnull(d);
    if (oac_model_load_buffer(ctx, &m, buf, len, name, NULL, d) == OAC_OK)
        ck_assert_int_eq(oac_check(ctx, &a, m, o, d), OAC_OK);
    oac_report_input in = { .path = name, .model = m, .diags = d, .analysis = a,
                            .werror = werror };
    json_t *j = oac_report_json(ctx, &in);
    ck_assert_ptr_nonnull(j);
    oac_analysis_free(a);
    oac_model_free(m);
    oac_diags_free(d);
    return j;
}

static json_t *parse(char *text)
{
    ck_assert_ptr_nonnull(text);
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    ck_assert_msg(j != NULL, "not JSON: %s: %s", e.text, text);
    oac_free(text);
    return j;
}

static json_t *check_buf(oac_ctx *ctx, const void *buf, size_t len, const char *name,
                         const oac_check_opts *o, bool werror)
{
    char *out = NULL;
    ck_assert_int_eq(oac_check_json(ctx, &out, name, buf, len, o, werror), OAC_OK);
    return parse(out);
}

static const char *status_of(json_t *r)
{
    return json_string_value(json_object_get(r, "status"));
}

static bool has_code(json_t *r, const char *code)
{
    json_t *d = json_object_get(r, "diagnostics");
    for (size_t i = 0; i < json_array_size(d); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(d, i), "code")), code))
            return true;
    return false;
}

START_TEST(every_example_as_the_pipeline)
{
    oac_ctx *ctx = oac_ctx_new();
    char dir[] = "/tmp/check_bindings_XXXXXX", path[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    for (size_t i = 0; i < oac_examples_count; i++) {
        const oac_example *ex = &oac_examples[i];
        uint8_t *buf = NULL;
        size_t len = 0;
        ck_assert_int_eq(oac_example_pack(ctx, ex, &buf, &len), OAC_OK);
        json_t *want = pipeline_report(ctx, buf, len, ex->name, NULL, false);
        json_t *got = check_buf(ctx, buf, len, ex->name, NULL, false);
        ck_assert_msg(json_equal(want, got), "%s: buffer report differs", ex->name);
        json_decref(got);
        json_decref(want);
        /* From a path: the same report of the same model at that path. */
        snprintf(path, sizeof path, "%s/%s.onnx", dir, ex->name);
        ck_assert_int_eq(oac_example_write(ctx, ex, path), OAC_OK);
        want = pipeline_report(ctx, buf, len, path, NULL, false);
        got = check_buf(ctx, NULL, 0, path, NULL, false);
        ck_assert_msg(json_equal(want, got), "%s: path report differs", ex->name);
        json_decref(got);
        json_decref(want);
        unlink(path);
        free(buf);
    }
    rmdir(dir);
    oac_ctx_free(ctx);
}
END_TEST

/* dense_cache's cache is FLOAT16 [2, batch, heads, max_length, head_size]:
 * 2 * 1 * 2 * 8 * 4 elements of 2 bytes once every dim is bound. */
START_TEST(dims_bind_and_unknown_dims_are_usage_errors)
{
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_example_pack(ctx, oac_example_find("dense_cache"), &buf, &len), OAC_OK);
    json_t *r = check_buf(ctx, buf, len, NULL, NULL, false);
    json_t *cls = json_array_get(json_object_get(r, "alias_classes"), 0);
    ck_assert(json_is_null(json_object_get(cls, "bytes")));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "model"), "path")),
                     "<buffer>");
    json_decref(r);

    const oac_dim_binding dims[] = { { "batch", 1 }, { "heads", 2 }, { "max_length", 8 },
                                     { "head_size", 4 } };
    oac_check_opts o = { .dims = dims, .n_dims = 4 };
    r = check_buf(ctx, buf, len, "dc", &o, false);
    cls = json_array_get(json_object_get(r, "alias_classes"), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(cls, "bytes")), 2 * 1 * 2 * 8 * 4 * 2);
    json_t *want = pipeline_report(ctx, buf, len, "dc", &o, false);
    ck_assert(json_equal(want, r));
    json_decref(want);
    json_decref(r);

    const oac_dim_binding bad[] = { { "batch", 1 }, { "no_such_dim", 3 } };
    o = (oac_check_opts){ .dims = bad, .n_dims = 2 };
    char *out = (char *)"untouched";
    ck_assert_int_eq(oac_check_json(ctx, &out, "dc", buf, len, &o, false), OAC_EINVAL);
    ck_assert_ptr_null(out);
    ck_assert_ptr_nonnull(strstr(oac_errmsg(ctx), "no_such_dim"));
    free(buf);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(werror_and_broken_models)
{
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *buf = NULL;
    size_t len = 0;
    /* alias-implied is a warning: an error only with werror. */
    ck_assert_int_eq(oac_example_pack(ctx, oac_example_find("dense_cache_implied"), &buf, &len),
                     OAC_OK);
    json_t *r = check_buf(ctx, buf, len, NULL, NULL, false);
    ck_assert_str_eq(status_of(r), "ok");
    ck_assert(has_code(r, "alias-implied"));
    json_decref(r);
    r = check_buf(ctx, buf, len, NULL, NULL, true);
    ck_assert_str_eq(status_of(r), "error");
    json_decref(r);
    free(buf);

    ck_assert_int_eq(oac_example_pack(ctx, oac_example_find("dense_cache_broken"), &buf, &len),
                     OAC_OK);
    r = check_buf(ctx, buf, len, NULL, NULL, false);
    ck_assert_str_eq(status_of(r), "error");
    ck_assert(has_code(r, "alias-mismatch"));
    json_decref(r);
    free(buf);

    /* Not a model: a report all the same, with its parse-error. */
    static const char junk[] = "\x0a\xff\xff\xff\xff\x0f not a model";
    r = check_buf(ctx, junk, sizeof junk - 1, "junk.onnx", NULL, false);
    ck_assert_str_eq(status_of(r), "error");
    ck_assert(has_code(r, "parse-error"));
    json_decref(r);
    r = check_buf(ctx, NULL, 0, "/nonexistent/model.onnx", NULL, false);
    ck_assert(has_code(r, "parse-error"));
    json_decref(r);
    oac_ctx_free(ctx);
}
END_TEST

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    rewind(f);
    uint8_t *b = malloc(n ? (size_t)n : 1);
    ck_assert_int_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static json_t *annotate_buf(oac_ctx *ctx, const void *buf, size_t len, uint8_t **out,
                            size_t *out_len)
{
    char *rep = NULL;
    ck_assert_int_eq(oac_annotate_json(ctx, out, out_len, &rep, "m.onnx", buf, len, NULL),
                     OAC_OK);
    return parse(rep);
}

START_TEST(annotate_in_memory_as_to_a_file)
{
    oac_ctx *ctx = oac_ctx_new();
    char dir[] = "/tmp/check_bindings_XXXXXX", path[256], outp[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    /* gqa_names: a GQA decoder paired by its names (no config). */
    ck_assert_int_eq(genai_model_write(ctx, genai_model_find("gqa_names"), dir), OAC_OK);
    snprintf(path, sizeof path, "%s/gqa_names.onnx", dir);
    snprintf(outp, sizeof outp, "%s/annotated.onnx", dir);
    size_t len = 0, alen = 0, flen = 0;
    uint8_t *buf = slurp(path, &len), *ann = NULL;
    json_t *r = annotate_buf(ctx, buf, len, &ann, &alen);
    ck_assert_msg(ann != NULL, "nothing handed over: %s", json_dumps(r, 0));
    ck_assert_str_eq(status_of(r), "ok");
    json_t *o = json_object_get(r, "output");
    ck_assert(json_is_true(json_object_get(o, "written")));
    ck_assert(json_is_null(json_object_get(o, "path")));
    size_t pairs = json_array_size(json_object_get(r, "pairs"));
    ck_assert_uint_ge(pairs, 2);
    json_decref(r);

    /* The command line's way: the same bytes in the file. */
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m = NULL;
    oac_annotation *an = NULL;
    ck_assert_int_eq(oac_model_load(ctx, &m, path, d), OAC_OK);
    ck_assert_int_eq(oac_annotate(ctx, &an, m, NULL, d), OAC_OK);
    ck_assert_int_eq(oac_annotation_write(ctx, an, m, outp, d), OAC_OK);
    ck_assert_str_eq(oac_annotation_output(an), outp);
    uint8_t *file = slurp(outp, &flen);
    ck_assert_uint_eq(flen, alen);
    ck_assert(memcmp(file, ann, alen) == 0);
    free(file);
    oac_annotation_free(an);
    oac_model_free(m);
    oac_diags_free(d);

    /* Its bytes check clean, and annotating them again keeps every pair
     * and changes nothing. */
    r = check_buf(ctx, ann, alen, NULL, NULL, true);
    ck_assert_str_eq(status_of(r), "ok");
    json_decref(r);
    uint8_t *again = NULL;
    size_t again_len = 0;
    r = annotate_buf(ctx, ann, alen, &again, &again_len);
    json_t *p = json_object_get(r, "pairs");
    ck_assert_uint_eq(json_array_size(p), pairs);
    for (size_t i = 0; i < pairs; i++)
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(p, i), "verdict")),
                         "kept");
    ck_assert_uint_eq(again_len, alen);
    ck_assert(memcmp(again, ann, alen) == 0);
    json_decref(r);
    oac_free(again);
    oac_free(ann);
    free(buf);
    unlink(outp);
    unlink(path);

    /* concat: a growing cache is refused, nothing handed over. */
    ck_assert_int_eq(genai_model_write(ctx, genai_model_find("concat"), dir), OAC_OK);
    snprintf(path, sizeof path, "%s/concat.onnx", dir);
    buf = slurp(path, &len);
    ann = (uint8_t *)"untouched";
    r = annotate_buf(ctx, buf, len, &ann, &alen);
    ck_assert_ptr_null(ann);
    ck_assert_uint_eq(alen, 0);
    ck_assert_str_eq(status_of(r), "error");
    ck_assert(json_is_false(json_object_get(json_object_get(r, "output"), "written")));
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(r, "pairs"), 0),
                                                       "verdict")), "refused");
    json_decref(r);
    free(buf);
    unlink(path);
    rmdir(dir);
    oac_ctx_free(ctx);
}
END_TEST

/* Every allocation failing in turn: a report saying analysis-failed (never
 * a finding the clean call did not make), or OAC_ENOMEM with nothing
 * handed over; the first n that succeeds gives the clean call's report. */
static void sweep(bool annotating, const uint8_t *buf, size_t len)
{
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *model = NULL;
    size_t mlen = 0;
    char *text = NULL;
    int rc = annotating ? oac_annotate_json(ctx, &model, &mlen, &text, "m.onnx", buf, len, NULL)
                        : oac_check_json(ctx, &text, "m.onnx", buf, len, NULL, false);
    ck_assert_int_eq(rc, OAC_OK);
    json_t *clean = parse(text);
    oac_free(model);
    bool done = false;
    for (unsigned long n = 1; !done; n++) {
        ck_assert_uint_lt(n, 1000000);
        model = NULL;
        text = NULL;
        oac_ctx_fail_alloc_after(ctx, n);
        rc = annotating ? oac_annotate_json(ctx, &model, &mlen, &text, "m.onnx", buf, len, NULL)
                        : oac_check_json(ctx, &text, "m.onnx", buf, len, NULL, false);
        oac_ctx_fail_alloc_after(ctx, 0);
        if (rc == OAC_ENOMEM) {
            ck_assert_ptr_null(text);
            ck_assert_ptr_null(model);
            continue;
        }
        ck_assert_int_eq(rc, OAC_OK);
        json_t *r = parse(text);
        if (json_equal(r, clean)) {
            done = true;
        } else {
            ck_assert_msg(has_code(r, "analysis-failed"), "allocation %lu: %s", n,
                          json_dumps(r, 0));
            ck_assert_str_eq(status_of(r), "error");
            ck_assert_ptr_null(model);
        }
        json_decref(r);
        oac_free(model);
    }
    json_decref(clean);
    oac_ctx_free(ctx);
}

START_TEST(every_allocation_failing)
{
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_example_pack(ctx, oac_example_find("dense_cache_implied"), &buf, &len),
                     OAC_OK);
    sweep(false, buf, len);
    free(buf);
    char dir[] = "/tmp/check_bindings_XXXXXX", path[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(genai_model_write(ctx, genai_model_find("gqa_names"), dir), OAC_OK);
    snprintf(path, sizeof path, "%s/gqa_names.onnx", dir);
    buf = slurp(path, &len);
    sweep(true, buf, len);
    free(buf);
    unlink(path);
    rmdir(dir);
    oac_ctx_free(ctx);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("bindings");
    TCase *tc = tcase_create("bindings");
    tcase_add_test(tc, every_example_as_the_pipeline);
    tcase_add_test(tc, dims_bind_and_unknown_dims_are_usage_errors);
    tcase_add_test(tc, werror_and_broken_models);
    tcase_add_test(tc, annotate_in_memory_as_to_a_file);
    tcase_add_test(tc, every_allocation_failing);
    suite_add_tcase(s, tc);
    return s;
}

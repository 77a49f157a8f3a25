/* check_runtime_control.c: If, Loop and local functions on the reference
 * runtime (lib/kernel_control.c, lib/runtime.c; plan.c rules 8-10;
 * contract 3 "Details", 4 `execution`, 5 `run`).
 *
 * Acceptance: the shipped examples if_branches, loop_cache and
 * function_cache run for several steps with every aliased output at its
 * input's address (n/n), measured peak == planned peak, and the caller's
 * cache holding exactly what a plain-array replay of the same updates
 * holds; bodies with temporaries, moved and copied outputs and carried
 * values measure what the plan says; ref_attr_name reaches the body;
 * nesting deeper than OAC_MAX_DEPTH (subgraphs or recursive functions) is
 * refused before anything runs; a run that stops without a finding still
 * reports one; a refusal with nothing measured matches a plan of 0.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oac_build.h"
#include "models.h"
#include "runtime.h"

typedef struct fx {
    oac_ctx *ctx;
    oac_diags *d;
    uint8_t *buf;
    size_t len;
    oac_model *m;
    oac_analysis *a;
    oac_execution *e;
} fx;

static void fx_begin(fx *f)
{
    memset(f, 0, sizeof *f);
    f->ctx = oac_ctx_new();
    f->d = oac_diags_new(f->ctx);
}

static void fx_example(fx *f, const char *name)
{
    fx_begin(f);
    const oac_example *ex = oac_example_find(name);
    ck_assert_msg(ex != NULL, "no example %s", name);
    ck_assert_int_eq(oac_example_pack(f->ctx, ex, &f->buf, &f->len), OAC_OK);
    ck_assert_int_eq(oac_model_load_buffer(f->ctx, &f->m, f->buf, f->len, name,
                                           NULL, f->d), OAC_OK);
}

static void fx_mb(fx *f, oac_mb *mb)
{
    ck_assert_int_eq(oac_mb_pack(mb, &f->buf, &f->len), OAC_OK);
    ck_assert_int_eq(oac_model_load_buffer(f->ctx, &f->m, f->buf, f->len, "t.onnx",
                                           NULL, f->d), OAC_OK);
}

static void fx_end(fx *f)
{
    oac_execution_free(f->e);
    oac_analysis_free(f->a);
    oac_model_free(f->m);
    oac_diags_free(f->d);
    free(f->buf);
    oac_ctx_free(f->ctx);
}

/* Check with the run's dims and inputs (no error allowed), then run. */
static int fx_check_run(fx *f, const oac_dim_binding *dims, size_t nd,
                        const oac_input_file *in, size_t ni, oac_run_opts *ro,
                        const oac_run_hooks *h)
{
    oac_check_opts co = { .dims = dims, .n_dims = nd, .inputs = in, .n_inputs = ni };
    ck_assert_int_eq(oac_check(f->ctx, &f->a, f->m, &co, f->d), OAC_OK);
    for (size_t i = 0; i < oac_diags_count(f->d); i++) {
        const oac_diag *dg = oac_diags_get(f->d, i);
        ck_assert_msg(dg->severity != OAC_SEV_ERROR, "check: %s: %s",
                      oac_code_name(dg->code), dg->message);
    }
    ro->dims = dims;
    ro->n_dims = nd;
    ro->inputs = in;
    ro->n_inputs = ni;
    return oac_run_with_hooks(f->ctx, &f->e, f->m, f->a, ro, h, f->d);
}

static size_t count_code(const oac_diags *d, oac_code c)
{
    size_t n = 0;
    for (size_t i = 0; i < oac_diags_count(d); i++)
        n += oac_diags_get(d, i)->code == c;
    return n;
}

static const char *all_messages(const oac_diags *d)
{
    static char buf[4096];
    buf[0] = '\0';
    for (size_t i = 0; i < oac_diags_count(d); i++) {
        strncat(buf, oac_diags_get(d, i)->message, sizeof buf - strlen(buf) - 2);
        strncat(buf, "\n", sizeof buf - strlen(buf) - 1);
    }
    return buf;
}

/* A TensorProto file of raw little-endian data. */
static char *write_tensor(const char *dir, const char *name, int32_t type,
                          const int64_t *dims, size_t nd, const void *raw, size_t len)
{
    Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
    t.has_data_type = 1;
    t.data_type = type;
    t.n_dims = nd;
    t.dims = (int64_t *)dims;
    t.has_raw_data = 1;
    t.raw_data.len = len;
    t.raw_data.data = (uint8_t *)raw;
    size_t n = protobuf_c_message_get_packed_size(&t.base);
    uint8_t *buf = malloc(n);
    protobuf_c_message_pack(&t.base, buf);
    char *path = malloc(strlen(dir) + strlen(name) + 8);
    sprintf(path, "%s/%s.pb", dir, name);
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(buf, 1, n, fp), n);
    fclose(fp);
    free(buf);
    return path;
}

/* ---- the shipped examples -------------------------------------------- */

enum { CAP = 8, HEADS = 2, HS = 4, STEPS = 5 };

static size_t dense_dims(oac_dim_binding *d)
{
    d[0] = (oac_dim_binding){ "batch", 1 };
    d[1] = (oac_dim_binding){ "heads", HEADS };
    d[2] = (oac_dim_binding){ "max_length", CAP };
    d[3] = (oac_dim_binding){ "head_size", HS };
    d[4] = (oac_dim_binding){ "new_length", 1 };
    return 5;
}

/* Runs `name` STEPS steps over caller storage prefilled with 0xAB and
 * compares the cache with a plain-array replay: each step writes the
 * values [2, 1, heads, 1, head_size] at the step's position (0, 1, ...),
 * `writes` times. */
static void run_example(const char *name, const char *extra, int64_t extra_value,
                        int32_t extra_type, int writes, uint64_t identity_per_step,
                        bool expect_nonzero_peak)
{
    char dir[] = "/tmp/oac_ctl_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    /* FLOAT16 values: distinct bit patterns per element. */
    uint16_t values[2 * HEADS * HS];
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        values[i] = (uint16_t)(0x3C00 + 17 * i);
    int64_t vdims[5] = { 2, 1, HEADS, 1, HS };
    oac_input_file in[2];
    size_t ni = 0;
    char *vpath = write_tensor(dir, "values", OAC_T_FLOAT16, vdims, 5, values, sizeof values);
    in[ni++] = (oac_input_file){ "values", vpath };
    char *xpath = NULL;
    if (extra) {
        size_t sz = extra_type == OAC_T_BOOL ? 1 : 8;
        xpath = write_tensor(dir, extra, extra_type, NULL, 0, &extra_value, sz);
        in[ni++] = (oac_input_file){ extra, xpath };
    }
    size_t bytes = (size_t)2 * 1 * HEADS * CAP * HS * 2;
    uint8_t *store = malloc(bytes), *ref = malloc(bytes);
    memset(store, 0xAB, bytes);
    memset(ref, 0xAB, bytes);
    for (int t = 0; writes > 0 && t < STEPS; t++)
        for (int k = 0; k < 2; k++)
            for (int h = 0; h < HEADS; h++)
                memcpy(ref + (((size_t)(k * HEADS + h) * CAP + t) * HS) * 2,
                       &values[(k * HEADS + h) * HS], HS * 2);

    fx f;
    fx_example(&f, name);
    oac_binding b;
    oac_binding_init(&b, "cache", store, bytes, true);
    oac_binding *bl[1] = { &b };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 1 };
    oac_dim_binding dims[5];
    oac_run_opts ro = { .steps = STEPS };
    int rc = fx_check_run(&f, dims, dense_dims(dims), in, ni, &ro, &h);
    ck_assert_msg(rc == OAC_OK, "%s: rc %d %s %s", name, rc, oac_errmsg(f.ctx),
                  all_messages(f.d));
    ck_assert_uint_eq(f.e->steps_completed, STEPS);
    ck_assert_uint_eq(f.e->n_per_step, STEPS);
    ck_assert_msg(f.e->identity_checked == identity_per_step * STEPS,
                  "%s: %llu identity checks", name,
                  (unsigned long long)f.e->identity_checked);
    ck_assert_uint_eq(f.e->identity_held, f.e->identity_checked);
    for (size_t i = 0; i < STEPS; i++)
        ck_assert_uint_eq(f.e->per_step[i].identity_held, identity_per_step);
    ck_assert(f.e->planned_peak_bytes.known);
    ck_assert_msg(f.e->measured_peak_bytes == f.e->planned_peak_bytes.value,
                  "%s: measured %llu planned %llu", name,
                  (unsigned long long)f.e->measured_peak_bytes,
                  (unsigned long long)f.e->planned_peak_bytes.value);
    ck_assert(f.e->peak_matches_plan);
    if (expect_nonzero_peak)
        ck_assert_uint_gt(f.e->measured_peak_bytes, 0);
    ck_assert_uint_eq(f.e->second_cache_bytes, 0);
    ck_assert_msg(memcmp(store, ref, bytes) == 0, "%s: cache differs from the replay", name);
    ck_assert_int_eq(atomic_load(&b.owner), 0);
    fx_end(&f);
    free(store);
    free(ref);
    unlink(vpath);
    free(vpath);
    if (xpath) {
        unlink(xpath);
        free(xpath);
    }
    rmdir(dir);
}

START_TEST(if_branches_then)
{
    /* The CacheUpdate in the branch, and the If output through it. */
    run_example("if_branches", "cond", 1, OAC_T_BOOL, 1, 2, false);
}
END_TEST

START_TEST(if_branches_else)
{
    /* cond zero-filled: the else branch, which updates the same way. */
    run_example("if_branches", NULL, 0, 0, 1, 2, false);
}
END_TEST

START_TEST(loop_cache_iterates)
{
    /* Two iterations per step write the same position; the Loop's own
     * alias plus one update per iteration; the body's condition byte is
     * its transient, planned and measured. */
    run_example("loop_cache", "trip_count", 2, OAC_T_INT64, 2, 3, true);
}
END_TEST

START_TEST(loop_cache_zero_trips)
{
    /* trip_count zero-filled: no iteration, the cache is untouched, and
     * the run plans no body (rule 10b) while `check` plans one. */
    run_example("loop_cache", NULL, 0, 0, 0, 1, false);
    fx f;
    fx_example(&f, "loop_cache");
    oac_dim_binding dims[5];
    oac_check_opts co = { .dims = dims, .n_dims = dense_dims(dims) };
    ck_assert_int_eq(oac_check(f.ctx, &f.a, f.m, &co, f.d), OAC_OK);
    const oac_memory_plan *mp = oac_analysis_plan(f.a);
    ck_assert(mp->peak_bytes.known);
    ck_assert_uint_eq(mp->peak_bytes.value, 1);   /* cond_out, one BOOL */
    fx_end(&f);
}
END_TEST

START_TEST(function_cache_calls)
{
    /* The update inside the function, and the call through alias_of. */
    run_example("function_cache", NULL, 0, 0, 1, 2, false);
}
END_TEST

START_TEST(every_valid_example_matches_plan)
{
    /* Every shipped valid example: runs, n/n identity, peak == plan. */
    for (size_t i = 0; i < oac_examples_count; i++) {
        const oac_example *ex = &oac_examples[i];
        if (ex->expect[0] && strcmp(ex->expect[0], "alias-implied"))
            continue;        /* broken twins never run */
        fx f;
        fx_example(&f, ex->name);
        oac_dim_binding dd[5];
        size_t nd = 0;
        if (!strncmp(ex->name, "dense", 5) || !strcmp(ex->name, "metadata_alias") ||
            !strcmp(ex->name, "chained_updates") || !strcmp(ex->name, "if_branches") ||
            !strcmp(ex->name, "loop_cache") || !strcmp(ex->name, "function_cache"))
            nd = dense_dims(dd);
        else if (!strcmp(ex->name, "toy_decoder_concat")) {
            dd[0] = (oac_dim_binding){ "past_len", 3 };
            dd[1] = (oac_dim_binding){ "total_len", 4 };
            nd = 2;
        } else if (!strcmp(ex->name, "stock_no_annotations")) {
            dd[0] = (oac_dim_binding){ "batch", 2 };
            nd = 1;
        }
        oac_run_opts ro = { .steps = 3 };
        int rc = fx_check_run(&f, dd, nd, NULL, 0, &ro, NULL);
        ck_assert_msg(rc == OAC_OK, "%s: rc %d %s %s", ex->name, rc, oac_errmsg(f.ctx),
                      all_messages(f.d));
        ck_assert_uint_eq(f.e->steps_completed, 3);
        ck_assert_uint_eq(f.e->identity_held, f.e->identity_checked);
        ck_assert_msg(f.e->peak_matches_plan, "%s: measured %llu planned %llu", ex->name,
                      (unsigned long long)f.e->measured_peak_bytes,
                      (unsigned long long)f.e->planned_peak_bytes.value);
        fx_end(&f);
    }
}
END_TEST

/* ---- bodies with buffers of their own --------------------------------- */

/* x [4] FLOAT, c BOOL; y = If(c): then returns Mul(Neg(x), x) (its
 * temporaries, the result moved out), else returns x itself (copied). */
static void build_if_buffers(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    oac_gb_input(g, "c", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "choose", "c", "y");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then");
    oac_gb_node(t, "Neg", NULL, "neg", "x", "t1");
    oac_gb_node(t, "Mul", NULL, "mul", "t1,x", "t2");
    oac_gb_output(t, "t2", OAC_T_FLOAT, "4");
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else");
    oac_gb_output(e, "x", OAC_T_FLOAT, "4");
    /* If outputs take their type from the branches, which inference
     * does not follow: declared, so the plan knows y's size. */
    oac_gb_value_info(g, "y", OAC_T_FLOAT, "4");
    oac_gb_node(g, "Neg", NULL, "after", "y", "z");
    oac_gb_output(g, "z", OAC_T_FLOAT, "4");
}

START_TEST(if_moves_and_copies)
{
    char dir[] = "/tmp/oac_ctl_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    float x[4] = { 1, 2, 3, 4 };
    int64_t xd[1] = { 4 };
    char *xp = write_tensor(dir, "x", OAC_T_FLOAT, xd, 1, x, sizeof x);
    uint8_t one = 1;
    char *cp = write_tensor(dir, "c", OAC_T_BOOL, NULL, 0, &one, 1);
    for (int cond = 0; cond < 2; cond++) {
        fx f;
        fx_begin(&f);
        oac_mb *mb = oac_mb_new(f.ctx);
        build_if_buffers(mb);
        fx_mb(&f, mb);
        oac_mb_free(mb);
        oac_input_file in[2] = { { "x", xp }, { "c", cp } };
        oac_run_opts ro = { .steps = 2, .dump_dir = dir };
        ck_assert_int_eq(fx_check_run(&f, NULL, 0, in, cond ? 2 : 1, &ro, NULL), OAC_OK);
        /* then: t1 (16) + t2 (16, moved into y) live at Mul, then z;
         * else: y is a copy of x (16), then z.  The plan takes the larger
         * branch: the then branch's 32 + nothing, vs else 16 + z. */
        ck_assert_uint_eq(f.e->per_step[1].alloc_calls, cond ? 3 : 2);
        if (cond) {
            ck_assert_uint_eq(f.e->measured_peak_bytes, 32);
            ck_assert_msg(f.e->peak_matches_plan, "planned %d %llu",
                          f.e->planned_peak_bytes.known,
                          (unsigned long long)f.e->planned_peak_bytes.value);
        } else {
            /* Asymmetric branches: the plan is the larger one's. */
            ck_assert_uint_eq(f.e->measured_peak_bytes, 32);   /* y copy + z */
            ck_assert_msg(f.e->peak_matches_plan, "planned %d %llu",
                          f.e->planned_peak_bytes.known,
                          (unsigned long long)f.e->planned_peak_bytes.value);
        }
        char path[128];
        snprintf(path, sizeof path, "%s/z.pb", dir);
        oac_pbfile *pf;
        ck_assert_int_eq(oac_pbfile_load(f.ctx, &pf, path, &onnx__tensor_proto__descriptor,
                                         f.d), OAC_OK);
        float z[4];
        ck_assert_int_eq(oac_tensor_read(f.ctx, f.m, (const Onnx__TensorProto *)pf->msg,
                                         z, sizeof z), OAC_OK);
        for (int i = 0; i < 4; i++)
            ck_assert(z[i] == (cond ? x[i] * x[i] : -x[i]));
        oac_pbfile_free(pf);
        unlink(path);
        fx_end(&f);
    }
    unlink(xp);
    unlink(cp);
    free(xp);
    free(cp);
    rmdir(dir);
}
END_TEST

START_TEST(loop_carries_by_value)
{
    /* acc = Loop(3, , x): acc_out = Add(acc_in, x) each iteration; the
     * carried value is the Loop's buffer (16 bytes), the body holds its
     * condition byte and acc_out: planned 16 + 17, measured the same, and
     * the result is 4x. */
    char dir[] = "/tmp/oac_ctl_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    float x[4] = { 1, -2, 0.5f, 8 };
    int64_t xd[1] = { 4 };
    char *xp = write_tensor(dir, "x", OAC_T_FLOAT, xd, 1, x, sizeof x);
    fx f;
    fx_begin(&f);
    oac_mb *mb = oac_mb_new(f.ctx);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    int64_t three = 3;
    oac_gb_init_i64(g, "M", "", &three, 1);
    Onnx__NodeProto *n = oac_gb_node(g, "Loop", NULL, "acc_loop", "M,,x", "acc");
    oac_gb *b = oac_node_attr_graph(g, n, "body", "body");
    oac_gb_input(b, "i", OAC_T_INT64, "");
    oac_gb_input(b, "cond_in", OAC_T_BOOL, "");
    oac_gb_input(b, "acc_in", OAC_T_FLOAT, "4");
    oac_gb_node(b, "Identity", NULL, "keep", "cond_in", "cond_out");
    oac_gb_node(b, "Add", NULL, "add", "acc_in,x", "acc_out");
    oac_gb_output(b, "cond_out", OAC_T_BOOL, "");
    oac_gb_output(b, "acc_out", OAC_T_FLOAT, "4");
    oac_gb_output(g, "acc", OAC_T_FLOAT, "4");
    fx_mb(&f, mb);
    oac_mb_free(mb);
    oac_input_file in[1] = { { "x", xp } };
    oac_run_opts ro = { .steps = 2, .dump_dir = dir };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, in, 1, &ro, NULL), OAC_OK);
    ck_assert_uint_eq(f.e->measured_peak_bytes, 16 + 17);
    ck_assert_msg(f.e->peak_matches_plan, "planned %d %llu", f.e->planned_peak_bytes.known,
                  (unsigned long long)f.e->planned_peak_bytes.value);
    ck_assert_uint_eq(f.e->per_step[1].alloc_calls, 1 + 3 * 2);
    char path[128];
    snprintf(path, sizeof path, "%s/acc.pb", dir);
    oac_pbfile *pf;
    ck_assert_int_eq(oac_pbfile_load(f.ctx, &pf, path, &onnx__tensor_proto__descriptor,
                                     f.d), OAC_OK);
    float acc[4];
    ck_assert_int_eq(oac_tensor_read(f.ctx, f.m, (const Onnx__TensorProto *)pf->msg,
                                     acc, sizeof acc), OAC_OK);
    for (int i = 0; i < 4; i++)
        ck_assert(acc[i] == 4 * x[i]);
    oac_pbfile_free(pf);
    unlink(path);
    fx_end(&f);
    unlink(xp);
    free(xp);
    rmdir(dir);
}
END_TEST

START_TEST(function_ref_attr_resolved)
{
    /* The body's CacheUpdate takes its axis from the call (ref_attr_name
     * "cache_axis"): without resolution it would see axis 0, which
     * differs from the values' shape, and fail. */
    fx f;
    fx_begin(&f);
    oac_mb *mb = oac_mb_new(f.ctx);
    oac_mb_opset(mb, "local", 1);
    oac_gb *fb = oac_mb_function(mb, "local", "Upd", "c,v,p", "u");
    Onnx__NodeProto *u = oac_gb_node(fb, "CacheUpdate", "onnx_alias", "inner", "c,v,p", "u");
    Onnx__AttributeProto *ax = oac_node_attr_int(fb, u, "axis", 0);
    ax->ref_attr_name = (char *)"cache_axis";
    oac_node_alias(fb, u, 0, 0, 1);
    oac_vi_alias_of(fb, oac_gb_value_info(fb, "u", OAC_T_FLOAT, "2,8,3"), "c");
    Onnx__FunctionProto *fp = oac_gb_function(fb);
    static char *attr_names[] = { (char *)"cache_axis" };
    fp->n_attribute = 1;
    fp->attribute = attr_names;
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "cache", OAC_T_FLOAT, "2,8,3"), 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, "2,1,3");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *call = oac_gb_node(g, "Upd", "local", "call", "cache,values,position",
                                        "updated");
    oac_node_attr_int(g, call, "cache_axis", 1);
    oac_vi_alias_of(g, oac_gb_output(g, "updated", OAC_T_FLOAT, "2,8,3"), "cache");
    fx_mb(&f, mb);
    oac_mb_free(mb);
    oac_run_opts ro = { .steps = 8 };
    int rc = oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d);
    ck_assert_msg(rc == OAC_OK, "rc %d %s %s", rc, oac_errmsg(f.ctx), all_messages(f.d));
    ck_assert_uint_eq(f.e->steps_completed, 8);
    ck_assert_uint_eq(f.e->identity_checked, 16);
    ck_assert_uint_eq(f.e->identity_held, 16);
    fx_end(&f);
    /* The ninth step is past the capacity 8 on axis 1: the position
     * advanced through the call. */
    fx_begin(&f);
    mb = oac_mb_new(f.ctx);
    oac_mb_opset(mb, "local", 1);
    fb = oac_mb_function(mb, "local", "Upd", "c,v,p", "u");
    u = oac_gb_node(fb, "CacheUpdate", "onnx_alias", "inner", "c,v,p", "u");
    ax = oac_node_attr_int(fb, u, "axis", 0);
    ax->ref_attr_name = (char *)"cache_axis";
    oac_node_alias(fb, u, 0, 0, 1);
    oac_vi_alias_of(fb, oac_gb_value_info(fb, "u", OAC_T_FLOAT, "2,8,3"), "c");
    fp = oac_gb_function(fb);
    fp->n_attribute = 1;
    fp->attribute = attr_names;
    g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "cache", OAC_T_FLOAT, "2,8,3"), 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, "2,1,3");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    call = oac_gb_node(g, "Upd", "local", "call", "cache,values,position", "updated");
    oac_node_attr_int(g, call, "cache_axis", 1);
    oac_vi_alias_of(g, oac_gb_output(g, "updated", OAC_T_FLOAT, "2,8,3"), "cache");
    fx_mb(&f, mb);
    oac_mb_free(mb);
    ro.steps = 9;
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(f.e->steps_completed, 8);
    ck_assert_uint_eq(count_code(f.d, OAC_CAPACITY_OVERFLOW), 1);
    fx_end(&f);
}
END_TEST

/* ---- refusals ------------------------------------------------------------ */

/* depth nested Ifs: level k holds If(c) whose then_branch is level k+1
 * and whose else_branch returns Identity(x). */
static void nest_ifs(oac_gb *g, int level, int depth, const char *out)
{
    char name[32], sub[32];
    snprintf(name, sizeof name, "if_%d", level);
    if (level == depth) {
        oac_gb_node(g, "Identity", NULL, "leaf", "x", out);
        oac_gb_output(g, out, OAC_T_FLOAT, "2");
        return;
    }
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, name, "c", out);
    if (level > 0)
        oac_gb_output(g, out, OAC_T_FLOAT, "2");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", name);
    snprintf(sub, sizeof sub, "y_%d", level + 1);
    nest_ifs(t, level + 1, depth, sub);
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", name);
    snprintf(sub, sizeof sub, "e_%d", level + 1);
    oac_gb_node(e, "Identity", NULL, "other", "x", sub);
    oac_gb_output(e, sub, OAC_T_FLOAT, "2");
}

/* Run a model built in memory (not loaded: the loader bounds message
 * nesting first) without an analysis. */
static int run_built(fx *f, oac_mb *mb, uint64_t steps)
{
    oac_model *m = oac_calloc(f->ctx, 1, sizeof *m);
    m->ctx = f->ctx;
    m->proto = oac_mb_proto(mb);
    oac_run_opts ro = { .steps = steps };
    int rc = oac_run(f->ctx, &f->e, m, NULL, &ro, f->d);
    oac_dealloc(f->ctx, m);
    return rc;
}

START_TEST(deep_if_nesting_refused)
{
    for (int depth = OAC_MAX_DEPTH - 1; depth <= OAC_MAX_DEPTH + 6; depth += 7) {
        fx f;
        fx_begin(&f);
        oac_mb *mb = oac_mb_new(f.ctx);
        oac_gb *g = oac_mb_graph(mb);
        oac_gb_input(g, "x", OAC_T_FLOAT, "2");
        oac_gb_input(g, "c", OAC_T_BOOL, "");
        nest_ifs(g, 0, depth, "y");
        oac_gb_output(g, "y", OAC_T_FLOAT, "2");
        int rc = run_built(&f, mb, 2);
        if (depth <= OAC_MAX_DEPTH) {
            /* 63 levels run (c is false: the else branch at level 0). */
            ck_assert_msg(rc == OAC_OK, "depth %d: %d %s", depth, rc, all_messages(f.d));
            ck_assert_uint_eq(f.e->steps_completed, 2);
        } else {
            ck_assert_int_eq(rc, OAC_ERUNTIME);
            ck_assert_uint_eq(count_code(f.d, OAC_UNSUPPORTED_OPERATOR), 1);
            const oac_diag *d = oac_diags_get(f.d, 0);
            ck_assert_str_eq(d->node, "if_0");
            ck_assert_ptr_nonnull(strstr(d->message, "deeper than"));
            ck_assert_uint_eq(f.e->steps_completed, 0);
            ck_assert_uint_eq(f.e->n_per_step, 0);
        }
        oac_mb_free(mb);
        fx_end(&f);
    }
}
END_TEST

START_TEST(deep_if_nesting_true_branch_runs)
{
    /* c true: every level's then branch, 63 frames deep, and back. */
    char dir[] = "/tmp/oac_ctl_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    uint8_t one = 1;
    char *cp = write_tensor(dir, "c", OAC_T_BOOL, NULL, 0, &one, 1);
    fx f;
    fx_begin(&f);
    oac_mb *mb = oac_mb_new(f.ctx);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_input(g, "c", OAC_T_BOOL, "");
    nest_ifs(g, 0, OAC_MAX_DEPTH, "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
    oac_model *m = oac_calloc(f.ctx, 1, sizeof *m);
    m->ctx = f.ctx;
    m->proto = oac_mb_proto(mb);
    oac_input_file in = { "c", cp };
    oac_run_opts ro = { .steps = 1, .inputs = &in, .n_inputs = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, m, NULL, &ro, f.d), OAC_OK);
    /* The leaf's buffer moved out through every level: one allocation. */
    ck_assert_uint_eq(f.e->per_step[0].alloc_calls, 1);
    ck_assert_uint_eq(f.e->measured_peak_bytes, 8);
    oac_dealloc(f.ctx, m);
    oac_mb_free(mb);
    fx_end(&f);
    unlink(cp);
    free(cp);
    rmdir(dir);
}
END_TEST

START_TEST(recursive_function_refused)
{
    /* F calls F: no bound, refused before running (not a stack overflow). */
    fx f;
    fx_begin(&f);
    oac_mb *mb = oac_mb_new(f.ctx);
    oac_mb_opset(mb, "local", 1);
    oac_gb *fb = oac_mb_function(mb, "local", "F", "a", "b");
    oac_gb_node(fb, "F", "local", "again", "a", "b");
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "F", "local", "call", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
    fx_mb(&f, mb);
    oac_mb_free(mb);
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(count_code(f.d, OAC_UNSUPPORTED_OPERATOR), 1);
    ck_assert_str_eq(oac_diags_get(f.d, 0)->node, "call");
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
}
END_TEST

START_TEST(scan_and_inner_unknown_refused)
{
    /* Scan by name; an unknown operator inside a Loop body by its own
     * name, before anything runs. */
    fx f;
    fx_begin(&f);
    oac_mb *mb = oac_mb_new(f.ctx);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_input(g, "M", OAC_T_INT64, "");
    Onnx__NodeProto *s = oac_gb_node(g, "Scan", NULL, "scan", "x", "sx");
    oac_node_attr_int(g, s, "num_scan_inputs", 1);
    oac_gb *sb = oac_node_attr_graph(g, s, "body", "sbody");
    oac_gb_input(sb, "e", OAC_T_FLOAT, "");
    oac_gb_node(sb, "Identity", NULL, "id", "e", "f");
    oac_gb_output(sb, "f", OAC_T_FLOAT, "");
    Onnx__NodeProto *l = oac_gb_node(g, "Loop", NULL, "loop", "M,,x", "lx");
    oac_gb *lb = oac_node_attr_graph(g, l, "body", "lbody");
    oac_gb_input(lb, "i", OAC_T_INT64, "");
    oac_gb_input(lb, "ci", OAC_T_BOOL, "");
    oac_gb_input(lb, "v", OAC_T_FLOAT, "2");
    oac_gb_node(lb, "Identity", NULL, "keep", "ci", "co");
    oac_gb_node(lb, "Frobnicate", "acme", "frob", "v", "w");
    oac_gb_output(lb, "co", OAC_T_BOOL, "");
    oac_gb_output(lb, "w", OAC_T_FLOAT, "2");
    oac_gb_output(g, "sx", OAC_T_FLOAT, "2");
    oac_gb_output(g, "lx", OAC_T_FLOAT, "2");
    fx_mb(&f, mb);
    oac_mb_free(mb);
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(count_code(f.d, OAC_UNSUPPORTED_OPERATOR), 2);
    ck_assert_str_eq(oac_diags_get(f.d, 0)->node, "scan");
    ck_assert_str_eq(oac_diags_get(f.d, 1)->node, "loop");
    ck_assert_ptr_nonnull(strstr(oac_diags_get(f.d, 1)->message, "frob"));
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
}
END_TEST

START_TEST(failure_without_finding_is_reported)
{
    /* Rank 9 exceeds what the runtime runs: EUNSUPPORTED, and the report
     * has an error saying so (status and exit agree). */
    fx f;
    fx_begin(&f);
    oac_mb *mb = oac_mb_new(f.ctx);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "1,1,1,1,1,1,1,1,1");
    oac_gb_node(g, "Identity", NULL, "copy", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,1,1,1,1,1,1,1,1");
    fx_mb(&f, mb);
    oac_mb_free(mb);
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_EUNSUPPORTED);
    ck_assert_uint_eq(count_code(f.d, OAC_UNSUPPORTED_OPERATOR), 1);
    ck_assert_ptr_nonnull(strstr(oac_diags_get(f.d, 0)->message, "rank"));
    oac_report_input ri = { .path = "t.onnx", .model = f.m, .diags = f.d,
                            .execution = f.e };
    ck_assert(oac_report_failed(&ri));
    fx_end(&f);
}
END_TEST

START_TEST(refusal_peak_matches_at_zero)
{
    /* Refused before any step: nothing measured.  That matches a plan of
     * 0 (dense_cache allocates nothing) and not a plan above 0. */
    fx f;
    fx_example(&f, "dense_cache");
    oac_dim_binding dims[5];
    const char *ro_names[1] = { "cache" };
    oac_run_opts ro = { .steps = 2, .readonly = ro_names, .n_readonly = 1 };
    ck_assert_int_eq(fx_check_run(&f, dims, dense_dims(dims), NULL, 0, &ro, NULL),
                     OAC_ERUNTIME);
    ck_assert_uint_eq(count_code(f.d, OAC_BINDING_READONLY), 1);
    ck_assert_uint_eq(f.e->steps_completed, 0);
    ck_assert(f.e->planned_peak_bytes.known);
    ck_assert_uint_eq(f.e->planned_peak_bytes.value, 0);
    ck_assert(f.e->peak_matches_plan);
    fx_end(&f);

    fx_example(&f, "toy_decoder");
    const char *ro2[1] = { "key_cache_0" };
    oac_run_opts r2 = { .steps = 1, .readonly = ro2, .n_readonly = 1 };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &r2, NULL), OAC_ERUNTIME);
    ck_assert_uint_gt(f.e->planned_peak_bytes.value, 0);
    ck_assert_uint_eq(f.e->measured_peak_bytes, 0);
    ck_assert(!f.e->peak_matches_plan);
    fx_end(&f);
}
END_TEST

/* A CacheUpdate that writes elsewhere: breaks the alias on purpose. */
static uint8_t rogue_buf[4096];
static int rogue_cache_update(oac_kernel_call *k)
{
    k->out[0]->t.data = rogue_buf;
    return OAC_OK;
}

START_TEST(alias_broken_inside_branch)
{
    /* The misbehaving update runs inside the else branch: found by the
     * branch's own identity check, named at the inner node, and the
     * caller's storage is left bound (not the rogue buffer). */
    fx f;
    fx_example(&f, "if_branches");
    oac_kernel_override ov = { "onnx_alias", "CacheUpdate", rogue_cache_update };
    oac_run_hooks h = { .overrides = &ov, .n_overrides = 1 };
    oac_dim_binding dims[5];
    oac_run_opts ro = { .steps = 3 };
    ck_assert_int_eq(fx_check_run(&f, dims, dense_dims(dims), NULL, 0, &ro, &h),
                     OAC_ERUNTIME);
    ck_assert_uint_eq(count_code(f.d, OAC_ALIAS_BROKEN), 1);
    const oac_diag *d = oac_diags_get(f.d, (size_t)oac_diags_find(f.d, OAC_ALIAS_BROKEN));
    ck_assert_str_eq(d->node, "else_update");
    ck_assert_str_eq(d->graph, "else_update");
    ck_assert_str_eq(d->location, "/graph/node/0/attribute/1/g/node/0");
    ck_assert_uint_eq(f.e->identity_checked, 1);
    ck_assert_uint_eq(f.e->identity_held, 0);
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
}
END_TEST

START_TEST(allocation_failures_in_bodies)
{
    /* Every allocation of a run through If, Loop and a call fails in
     * turn: each attempt fails cleanly (ASan sees no leak). */
    static const char *const names[] = { "if_branches", "loop_cache", "function_cache" };
    for (size_t m = 0; m < 3; m++) {
        bool ok = false;
        for (unsigned long n = 1; n < 3000 && !ok; n++) {
            fx f;
            fx_example(&f, names[m]);
            oac_dim_binding dims[5];
            oac_check_opts co = { .dims = dims, .n_dims = dense_dims(dims) };
            ck_assert_int_eq(oac_check(f.ctx, &f.a, f.m, &co, f.d), OAC_OK);
            oac_run_opts ro = { .steps = 2, .dims = dims, .n_dims = 5 };
            oac_ctx_fail_alloc_after(f.ctx, n);
            int rc = oac_run(f.ctx, &f.e, f.m, f.a, &ro, f.d);
            oac_ctx_fail_alloc_after(f.ctx, 0);
            if (rc == OAC_OK)
                ok = true;
            else
                ck_assert_msg(rc == OAC_ENOMEM, "%s: n=%lu rc=%d %s", names[m], n, rc,
                              oac_errmsg(f.ctx));
            fx_end(&f);
        }
        ck_assert(ok);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("runtime_control");
    TCase *tc = tcase_create("control");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, if_branches_then);
    tcase_add_test(tc, if_branches_else);
    tcase_add_test(tc, loop_cache_iterates);
    tcase_add_test(tc, loop_cache_zero_trips);
    tcase_add_test(tc, function_cache_calls);
    tcase_add_test(tc, every_valid_example_matches_plan);
    tcase_add_test(tc, if_moves_and_copies);
    tcase_add_test(tc, loop_carries_by_value);
    tcase_add_test(tc, function_ref_attr_resolved);
    tcase_add_test(tc, deep_if_nesting_refused);
    tcase_add_test(tc, deep_if_nesting_true_branch_runs);
    tcase_add_test(tc, recursive_function_refused);
    tcase_add_test(tc, scan_and_inner_unknown_refused);
    tcase_add_test(tc, failure_without_finding_is_reported);
    tcase_add_test(tc, refusal_peak_matches_at_zero);
    tcase_add_test(tc, alias_broken_inside_branch);
    tcase_add_test(tc, allocation_failures_in_bodies);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

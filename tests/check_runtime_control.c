/* check_runtime_control.c: If, Loop and local functions on the reference
 * runtime (lib/run/control.c, lib/run/interp.c; check/plan.c rules 8-10;
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
#include "harness.h"
#include "run/kernel_api.h"

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
                  diag_dump(f.d));
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
            continue;        /* broken twins never fx */
        fx f;
        fx_example(&f, ex->name);
        oac_dim_binding dd[5];
        size_t nd = 0;
        if (!strncmp(ex->name, "dense", 5) || !strcmp(ex->name, "metadata_alias") ||
            !strcmp(ex->name, "chained_updates") || !strcmp(ex->name, "if_branches") ||
            !strcmp(ex->name, "loop_cache") || !strcmp(ex->name, "function_cache"))
            nd = dense_dims(dd);
        else if (!strcmp(ex->name, "stock_no_annotations")) {
            dd[0] = (oac_dim_binding){ "batch", 2 };
            nd = 1;
        }
        /* The Concat twin's caches grow step by step (fed back, contract
         * 8): its static plan is the first step's, which one step
         * matches (check_runtime.c: the later steps do not). */
        uint64_t steps = strcmp(ex->name, "toy_decoder_concat") ? 3 : 1;
        oac_run_opts ro = { .steps = steps };
        int rc = fx_check_run(&f, dd, nd, NULL, 0, &ro, NULL);
        ck_assert_msg(rc == OAC_OK, "%s: rc %d %s %s", ex->name, rc, oac_errmsg(f.ctx),
                      diag_dump(f.d));
        ck_assert_uint_eq(f.e->steps_completed, steps);
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
        oac_mb *mb;
        fx_build(&f, &mb);
        build_if_buffers(mb);
        fx_load(&f);
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

/* Contract 8: a condition the checker cannot see (its length is a --dim)
 * that If refuses at run time is kernel-error at the If node, never the
 * checker's operand-invalid. */
START_TEST(if_condition_of_two_is_kernel_error)
{
    for (int n = 1; n <= 2; n++) {
        fx f;
        oac_mb *mb;
        fx_build(&f, &mb);
        oac_gb *g = oac_mb_graph(mb);
        oac_gb_input(g, "x", OAC_T_FLOAT, "4");
        oac_gb_input(g, "c", OAC_T_BOOL, "n");
        Onnx__NodeProto *nd = oac_gb_node(g, "If", NULL, "choose", "c", "y");
        oac_gb *t = oac_node_attr_graph(g, nd, "then_branch", "then");
        oac_gb_node(t, "Neg", NULL, "neg", "x", "t1");
        oac_gb_output(t, "t1", OAC_T_FLOAT, "4");
        oac_gb *e = oac_node_attr_graph(g, nd, "else_branch", "else");
        oac_gb_output(e, "x", OAC_T_FLOAT, "4");
        oac_gb_value_info(g, "y", OAC_T_FLOAT, "4");
        oac_gb_output(g, "y", OAC_T_FLOAT, "4");
        fx_load(&f);
        oac_dim_binding d[1] = { { "n", n } };
        oac_run_opts ro = { .steps = 1 };
        int rc = fx_check_run(&f, d, 1, NULL, 0, &ro, NULL);
        if (n == 1) {
            /* The near miss: one BOOL runs. */
            ck_assert_msg(rc == OAC_OK, "%s", diag_dump(f.d));
            ck_assert_uint_eq(f.e->steps_completed, 1);
        } else {
            ck_assert_int_eq(rc, OAC_ERUNTIME);
            ck_assert_int_lt(oac_diags_find(f.d, OAC_OPERAND_INVALID), 0);
            long k = oac_diags_find(f.d, OAC_KERNEL_ERROR);
            ck_assert_int_ge(k, 0);
            const oac_diag *dg = oac_diags_get(f.d, (size_t)k);
            ck_assert_str_eq(dg->node, "choose");
            ck_assert_ptr_nonnull(strstr(dg->message, "one BOOL"));
        }
        fx_end(&f);
    }
}
END_TEST

/* Found by fuzz_run: a node naming more outputs than its operator has
 * (Neg with two) passes the check, which reads no output count; the run
 * says so as kernel-error at the node and value, never as an internal
 * failure.  Near miss: the same node with one output runs. */
START_TEST(extra_node_output_is_kernel_error)
{
    for (int extra = 0; extra < 2; extra++) {
        fx f;
        oac_mb *mb;
        fx_build(&f, &mb);
        oac_gb *g = oac_mb_graph(mb);
        oac_gb_input(g, "x", OAC_T_FLOAT, "4");
        oac_gb_node(g, "Neg", NULL, "neg", "x", extra ? "y,more" : "y");
        oac_gb_output(g, "y", OAC_T_FLOAT, "4");
        fx_load(&f);
        oac_run_opts ro = { .steps = 1 };
        int rc = fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL);
        if (!extra) {
            ck_assert_msg(rc == OAC_OK, "%s", diag_dump(f.d));
        } else {
            ck_assert_int_eq(rc, OAC_ERUNTIME);
            ck_assert_int_lt(oac_diags_find(f.d, OAC_ANALYSIS_FAILED), 0);
            long k = oac_diags_find(f.d, OAC_KERNEL_ERROR);
            ck_assert_int_ge(k, 0);
            const oac_diag *dg = oac_diags_get(f.d, (size_t)k);
            ck_assert_str_eq(dg->node, "neg");
            ck_assert_str_eq(dg->value, "more");
        }
        fx_end(&f);
    }
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
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
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
    fx_load(&f);
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

/* cache [2,8,3] updated by a call of local::Upd whose CacheUpdate takes
 * its axis from the call (ref_attr_name "cache_axis" = 1). */
static void build_ref_attr_call(fx *f)
{
    oac_mb *mb;
    fx_build(f, &mb);
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
    fx_load(f);
}

START_TEST(function_ref_attr_resolved)
{
    /* The body's CacheUpdate takes its axis from the call (ref_attr_name
     * "cache_axis"): without resolution it would see axis 0, which
     * differs from the values' shape, and fail. */
    fx f;
    build_ref_attr_call(&f);
    oac_run_opts ro = { .steps = 8 };
    int rc = oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d);
    ck_assert_msg(rc == OAC_OK, "rc %d %s %s", rc, oac_errmsg(f.ctx), diag_dump(f.d));
    ck_assert_uint_eq(f.e->steps_completed, 8);
    ck_assert_uint_eq(f.e->identity_checked, 16);
    ck_assert_uint_eq(f.e->identity_held, 16);
    fx_end(&f);
    /* The ninth step is past the capacity 8 on axis 1: the position
     * advanced through the call. */
    build_ref_attr_call(&f);
    ro.steps = 9;
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(f.e->steps_completed, 8);
    ck_assert_uint_eq(diag_count(f.d, OAC_CAPACITY_OVERFLOW), 1);
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
        oac_mb *mb;
        oac_gb *g = fx_build(&f, &mb);
        oac_gb_input(g, "x", OAC_T_FLOAT, "2");
        oac_gb_input(g, "c", OAC_T_BOOL, "");
        nest_ifs(g, 0, depth, "y");
        oac_gb_output(g, "y", OAC_T_FLOAT, "2");
        int rc = run_built(&f, mb, 2);
        if (depth <= OAC_MAX_DEPTH) {
            /* 63 levels run (c is false: the else branch at level 0). */
            ck_assert_msg(rc == OAC_OK, "depth %d: %d %s", depth, rc, diag_dump(f.d));
            ck_assert_uint_eq(f.e->steps_completed, 2);
        } else {
            ck_assert_int_eq(rc, OAC_ERUNTIME);
            ck_assert_uint_eq(diag_count(f.d, OAC_UNSUPPORTED_OPERATOR), 1);
            const oac_diag *d = oac_diags_get(f.d, 0);
            ck_assert_str_eq(d->node, "if_0");
            ck_assert_ptr_nonnull(strstr(d->message, "deeper than"));
            ck_assert_uint_eq(f.e->steps_completed, 0);
            ck_assert_uint_eq(f.e->n_per_step, 0);
        }
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
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
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
    fx_end(&f);
    unlink(cp);
    free(cp);
    rmdir(dir);
}
END_TEST

START_TEST(recursive_function_refused)
{
    /* F calls F: no bound, refused before running (not a stack overflow):
     * the check the run makes finds the recursion (model-invalid at the
     * call in F's body, which ONNX forbids), so nothing runs. */
    fx f;
    oac_mb *mb;
    fx_build(&f, &mb);
    oac_mb_opset(mb, "local", 1);
    oac_gb *fb = oac_mb_function(mb, "local", "F", "a", "b");
    oac_gb_node(fb, "F", "local", "again", "a", "b");
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "F", "local", "call", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
    fx_load(&f);
    oac_run_opts ro = { .steps = 1 };
    int rc = oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d);
    ck_assert_msg(rc == OAC_OK || rc == OAC_ERUNTIME, "rc %d", rc);
    ck_assert_uint_eq(diag_count(f.d, OAC_MODEL_INVALID), 1);
    ck_assert_uint_eq(diag_count(f.d, OAC_UNSUPPORTED_OPERATOR), 0);
    ck_assert_str_eq(oac_diags_get(f.d, 0)->node, "again");
    ck_assert_ptr_nonnull(strstr(oac_diags_get(f.d, 0)->message, "recursion"));
    ck_assert(!f.e || f.e->steps_completed == 0);
    fx_end(&f);
}
END_TEST

START_TEST(scan_and_inner_unknown_refused)
{
    /* Scan by name; an unknown operator inside a Loop body by its own
     * name, before anything runs. */
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
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
    fx_load(&f);
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_UNSUPPORTED_OPERATOR), 2);
    ck_assert_str_eq(oac_diags_get(f.d, 0)->node, "scan");
    ck_assert_str_eq(oac_diags_get(f.d, 1)->node, "loop");
    ck_assert_ptr_nonnull(strstr(oac_diags_get(f.d, 1)->message, "frob"));
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
}
END_TEST

START_TEST(failure_without_finding_is_reported)
{
    /* Rank 9 exceeds what the runtime runs: the report has an error
     * saying so (status and exit agree), and the run's status is
     * OAC_ERUNTIME, the stop that finding explains (one code). */
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "1,1,1,1,1,1,1,1,1");
    oac_gb_node(g, "Identity", NULL, "copy", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,1,1,1,1,1,1,1,1");
    fx_load(&f);
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_UNSUPPORTED_OPERATOR), 1);
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
    ck_assert_uint_eq(diag_count(f.d, OAC_BINDING_READONLY), 1);
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
    ck_assert_uint_eq(diag_count(f.d, OAC_ALIAS_BROKEN), 1);
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

/* ---- bounded work ------------------------------------------------------ */

/* x [2] FLOAT carried by Loop `forever`: Loop(M, go, x) whose body keeps
 * its condition (Identity) and returns x unchanged.  go is an initializer
 * true; M an initializer when trip >= 0, else omitted. */
static void build_endless_loop(fx *f, int64_t trip)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    uint8_t one = 1;
    oac_gb_init_raw(g, "go", OAC_T_BOOL, "", &one, 1);
    if (trip >= 0)
        oac_gb_init_i64(g, "M", "", &trip, 1);
    Onnx__NodeProto *n = oac_gb_node(g, "Loop", NULL, "forever",
                                     trip >= 0 ? "M,go,x" : ",go,x", "y");
    oac_gb *b = oac_node_attr_graph(g, n, "body", "body");
    oac_gb_input(b, "i", OAC_T_INT64, "");
    oac_gb_input(b, "ci", OAC_T_BOOL, "");
    oac_gb_input(b, "xi", OAC_T_FLOAT, "2");
    oac_gb_node(b, "Identity", NULL, "keep", "ci", "co");
    oac_gb_output(b, "co", OAC_T_BOOL, "");
    oac_gb_output(b, "xi", OAC_T_FLOAT, "2");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
    fx_load(f);
}

START_TEST(endless_loop_is_bounded)
{
    /* No trip count and a condition that never turns false; then a trip
     * count of INT64_MAX: each stops at the step's work budget (here
     * 1000: each iteration costs 1 + 1 node), named at the Loop, before
     * the step completes. */
    static const int64_t trips[] = { -1, INT64_MAX };
    for (size_t t = 0; t < 2; t++) {
        fx f;
        build_endless_loop(&f, trips[t]);
        oac_run_hooks h = { .body_work = 1000 };
        oac_run_opts ro = { .steps = 3 };
        ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, &h), OAC_ERUNTIME);
        ck_assert_uint_eq(diag_count(f.d, OAC_UNSUPPORTED_OPERATOR), 1);
        const oac_diag *d = diag_expect_run(f.d, OAC_UNSUPPORTED_OPERATOR,
                                        "unsupported-operator");
        ck_assert_str_eq(d->node, "forever");
        ck_assert_str_eq(d->op_type, "Loop");
        ck_assert_str_eq(d->location, "/graph/node/0");
        ck_assert_ptr_nonnull(strstr(d->message, "limit of 1000"));
        ck_assert_uint_eq(f.e->steps_completed, 0);
        fx_end(&f);
    }
    /* The budget is per step: 400 iterations fit 1000 every step. */
    fx f;
    build_endless_loop(&f, 400);
    oac_run_hooks h = { .body_work = 1000 };
    oac_run_opts ro = { .steps = 3 };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, &h), OAC_OK);
    ck_assert_uint_eq(f.e->steps_completed, 3);
    fx_end(&f);
}
END_TEST

START_TEST(endless_loop_default_budget)
{
    /* The default budget (OAC_RT_MAX_BODY_WORK) ends it too. */
    fx f;
    build_endless_loop(&f, -1);
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    const oac_diag *d = diag_expect_run(f.d, OAC_UNSUPPORTED_OPERATOR, "unsupported-operator");
    ck_assert_str_eq(d->node, "forever");
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
}
END_TEST

START_TEST(call_fan_out_is_bounded)
{
    /* F0 calls F1 twice, F1 calls F2 twice, ... F30 is Identity: 2^31
     * calls from one node.  The budget (here 3000) stops it at a call
     * inside, long before. */
    enum { LEVELS = 30 };
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_mb_opset(mb, "local", 1);
    for (int k = 0; k <= LEVELS; k++) {
        char name[16], next[16];
        snprintf(name, sizeof name, "F%d", k);
        snprintf(next, sizeof next, "F%d", k + 1);
        oac_gb *fb = oac_mb_function(mb, "local", name, "a", "b");
        if (k == LEVELS) {
            oac_gb_node(fb, "Identity", NULL, "leaf", "a", "b");
            continue;
        }
        oac_gb_node(fb, next, "local", "first", "a", "t");
        oac_gb_node(fb, next, "local", "second", "t", "b");
    }
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "F0", "local", "call", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
    fx_load(&f);
    oac_run_hooks h = { .body_work = 3000 };
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run_with_hooks(f.ctx, &f.e, f.m, NULL, &ro, &h, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_UNSUPPORTED_OPERATOR), 1);
    const oac_diag *d = diag_expect_run(f.d, OAC_UNSUPPORTED_OPERATOR, "unsupported-operator");
    ck_assert_ptr_nonnull(strstr(d->message, "limit of 3000"));
    ck_assert_ptr_nonnull(strstr(d->location, "/functions/"));
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
}
END_TEST

/* cache [2,4,3] READ_WRITE updated at `position` through local::Outer,
 * which calls local::Inner, which holds the CacheUpdate; with in_if, the
 * call of Outer sits in both branches of an If on a true initializer. */
static void build_nested_calls(fx *f, bool in_if)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_mb_opset(mb, "local", 1);
    oac_gb *ib = oac_mb_function(mb, "local", "Inner", "c,v,p", "u");
    Onnx__NodeProto *u = oac_gb_node(ib, "CacheUpdate", "onnx_alias", "inner", "c,v,p", "u");
    oac_node_attr_int(ib, u, "axis", 1);
    oac_node_alias(ib, u, 0, 0, 1);
    oac_vi_alias_of(ib, oac_gb_value_info(ib, "u", OAC_T_FLOAT, "2,4,3"), "c");
    oac_gb *ob = oac_mb_function(mb, "local", "Outer", "oc,ov,op", "ou");
    oac_gb_node(ob, "Inner", "local", "call_inner", "oc,ov,op", "ou");
    oac_vi_alias_of(ob, oac_gb_value_info(ob, "ou", OAC_T_FLOAT, "2,4,3"), "oc");
    oac_vi_access(g, oac_gb_input(g, "cache", OAC_T_FLOAT, "2,4,3"), 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, "2,1,3");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    if (!in_if) {
        oac_gb_node(g, "Outer", "local", "call", "cache,values,position", "updated");
    } else {
        uint8_t one = 1;
        oac_gb_init_raw(g, "go", OAC_T_BOOL, "", &one, 1);
        Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "choose", "go", "updated");
        static const char *const br[2] = { "then_branch", "else_branch" };
        for (int k = 0; k < 2; k++) {
            oac_gb *b = oac_node_attr_graph(g, n, br[k], br[k]);
            oac_gb_node(b, "Outer", "local", "call", "cache,values,position", "w");
            oac_gb_output(b, "w", OAC_T_FLOAT, "2,4,3");
        }
    }
    oac_vi_alias_of(g, oac_gb_output(g, "updated", OAC_T_FLOAT, "2,4,3"), "cache");
    fx_load(f);
}

START_TEST(position_advances_through_nested_calls)
{
    /* Capacity 4, one row per step: 4 steps fit, the fifth overflows at
     * position 4, so the position input advanced through a call inside a
     * call (and an If around it). */
    for (int in_if = 0; in_if < 2; in_if++) {
        fx f;
        build_nested_calls(&f, in_if);
        oac_run_opts ro = { .steps = 4 };
        int rc = oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d);
        ck_assert_msg(rc == OAC_OK, "rc %d %s %s", rc, oac_errmsg(f.ctx), diag_dump(f.d));
        ck_assert_uint_eq(f.e->identity_held, f.e->identity_checked);
        fx_end(&f);
        build_nested_calls(&f, in_if);
        ro.steps = 6;
        ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
        ck_assert_uint_eq(f.e->steps_completed, 4);
        const oac_diag *d = diag_find(f.d, OAC_CAPACITY_OVERFLOW, NULL, NULL, NULL);
        ck_assert_msg(d != NULL, "%s", diag_dump(f.d));
        ck_assert_ptr_nonnull(strstr(d->message, "position 4"));
        fx_end(&f);
    }
}
END_TEST

static bool every_example(const char *name)
{
    (void)name;
    return true;
}

START_TEST(allocation_failures_in_bodies)
{
    /* Every allocation of a run through If, Loop and a call fails in
     * turn. */
    static const char *const names[] = { "if_branches", "loop_cache", "function_cache" };
    oac_dim_binding dims[5];
    fail_each_allocation(names, 3, dims, dense_dims(dims), every_example, 2, 3000);
}
END_TEST

Suite *test_suite(void)
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
    tcase_add_test(tc, if_condition_of_two_is_kernel_error);
    tcase_add_test(tc, extra_node_output_is_kernel_error);
    tcase_add_test(tc, function_ref_attr_resolved);
    tcase_add_test(tc, deep_if_nesting_refused);
    tcase_add_test(tc, deep_if_nesting_true_branch_runs);
    tcase_add_test(tc, recursive_function_refused);
    tcase_add_test(tc, scan_and_inner_unknown_refused);
    tcase_add_test(tc, failure_without_finding_is_reported);
    tcase_add_test(tc, refusal_peak_matches_at_zero);
    tcase_add_test(tc, alias_broken_inside_branch);
    tcase_add_test(tc, endless_loop_is_bounded);
    tcase_add_test(tc, endless_loop_default_budget);
    tcase_add_test(tc, call_fan_out_is_bounded);
    tcase_add_test(tc, position_advances_through_nested_calls);
    tcase_add_test(tc, allocation_failures_in_bodies);
    suite_add_tcase(s, tc);
    return s;
}

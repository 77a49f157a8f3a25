/* check_runtime.c: the reference executor (lib/run/interp.c, run/session.c,
 * run/steps.c, run/positions.c; contract 4 `execution`, 5 `run`, runtime codes
 * of 3).
 *
 * Acceptance: pointer identity over many steps with no allocation in the
 * cache updates; capacity-overflow after exactly the right number of
 * steps (also from a --input start position); measured peak equal to the
 * plan's on the example models; out-of-place updates counted as a second
 * cache; unsupported operators (Scan) refused by name; alias-broken from a
 * deliberately misbehaving kernel; unknown dims a usage error; position
 * lengths that disagree; --dump files; every allocation failure path;
 * an unsorted decoder layer runs in a topological order, its measured
 * peak equal to its plan, and a cycle is refused before anything runs.
 */
#include "harness.h"
#include "run/kernel_api.h"

/* dense_cache at batch 1, heads 2, head_size 4, given capacity/length. */
static size_t dense_dims(oac_dim_binding *d, int64_t cap, int64_t len)
{
    d[0] = (oac_dim_binding){ "batch", 1 };
    d[1] = (oac_dim_binding){ "heads", 2 };
    d[2] = (oac_dim_binding){ "max_length", cap };
    d[3] = (oac_dim_binding){ "head_size", 4 };
    d[4] = (oac_dim_binding){ "new_length", len };
    return 5;
}

/* Bytes of the dense example cache: FLOAT16 [2, 1, 2, cap, 4]. */
static size_t dense_bytes(int64_t cap)
{
    return (size_t)(2 * 1 * 2 * cap * 4 * 2);
}

static char *write_i64_file(const char *dir, const char *name, int64_t v)
{
    return write_tensor(dir, name, OAC_T_INT64, NULL, 0, &v, sizeof v);
}

/* ---- pointer identity and allocations ------------------------------- */

START_TEST(identity_over_many_steps)
{
    enum { CAP = 64 };
    fx f;
    fx_example(&f, "dense_cache");
    oac_dim_binding dims[5];
    size_t nd = dense_dims(dims, CAP, 1);
    /* The caller's own storage, prefilled: after CAP steps of zero
     * values every byte of it was written through the binding. */
    size_t bytes = dense_bytes(CAP);
    uint8_t *store = malloc(bytes);
    memset(store, 0xAB, bytes);
    oac_binding b;
    oac_binding_init(&b, "cache", store, bytes, true);
    oac_binding *bl[1] = { &b };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 1 };
    oac_run_opts ro = { .steps = CAP };
    ck_assert_int_eq(fx_check_run(&f, dims, nd, NULL, 0, &ro, &h), OAC_OK);
    ck_assert_uint_eq(f.e->steps_completed, CAP);
    ck_assert_uint_eq(f.e->identity_checked, CAP);
    ck_assert_uint_eq(f.e->identity_held, CAP);
    /* Records are bounded: the first and last 8 steps are kept, the 48
     * between them counted; the totals above are over all 64. */
    ck_assert_uint_eq(f.e->n_per_step, OAC_PER_STEP_HEAD + OAC_PER_STEP_TAIL);
    ck_assert_uint_eq(f.e->per_step_omitted, CAP - 16);
    for (size_t i = 0; i < f.e->n_per_step; i++) {
        ck_assert_uint_eq(f.e->per_step[i].step, i < 8 ? i + 1 : CAP - 15 + i);
        ck_assert_uint_eq(f.e->per_step[i].identity_checked, 1);
        ck_assert_uint_eq(f.e->per_step[i].identity_held, 1);
        /* The in-place update allocates nothing, ever. */
        ck_assert_uint_eq(f.e->per_step[i].alloc_calls, 0);
        ck_assert_uint_eq(f.e->per_step[i].alloc_bytes, 0);
    }
    ck_assert_uint_eq(f.e->second_cache_bytes, 0);
    ck_assert_uint_eq(f.e->cache_bytes_bound, bytes);
    for (size_t i = 0; i < bytes; i++)
        ck_assert_msg(store[i] == 0, "byte %zu not written in place", i);
    ck_assert_int_eq(atomic_load(&b.owner), 0);   /* released after the fx */
    fx_end(&f);
    free(store);
}
END_TEST

START_TEST(chained_updates_identity)
{
    fx f;
    fx_example(&f, "chained_updates");
    oac_dim_binding dims[5];
    size_t nd = dense_dims(dims, 8, 1);
    oac_run_opts ro = { .steps = 8 };
    ck_assert_int_eq(fx_check_run(&f, dims, nd, NULL, 0, &ro, NULL), OAC_OK);
    /* Two updates per step, both in the bound storage. */
    ck_assert_uint_eq(f.e->identity_checked, 16);
    ck_assert_uint_eq(f.e->identity_held, 16);
    for (size_t i = 0; i < f.e->n_per_step; i++)
        ck_assert_uint_eq(f.e->per_step[i].alloc_calls, 0);
    fx_end(&f);
}
END_TEST

/* ---- capacity overflow ---------------------------------------------- */

START_TEST(overflow_after_right_steps)
{
    fx f;
    fx_example(&f, "dense_cache");
    oac_dim_binding dims[5];
    /* Positions 0, 3, 6 fit in 10; 9 + 3 does not. */
    size_t nd = dense_dims(dims, 10, 3);
    oac_run_opts ro = { .steps = 6 };
    ck_assert_int_eq(fx_check_run(&f, dims, nd, NULL, 0, &ro, NULL), OAC_ERUNTIME);
    ck_assert_uint_eq(f.e->steps_requested, 6);
    ck_assert_uint_eq(f.e->steps_completed, 3);
    ck_assert_uint_eq(f.e->n_per_step, 3);
    ck_assert_uint_eq(diag_count(f.d, OAC_CAPACITY_OVERFLOW), 1);
    const oac_diag *dg = diag_find(f.d, OAC_CAPACITY_OVERFLOW, NULL, NULL, NULL);
    ck_assert_str_eq(dg->node, "update");
    ck_assert_ptr_nonnull(strstr(dg->message, "position 9"));
    ck_assert_ptr_nonnull(strstr(dg->message, "length 3"));
    ck_assert_ptr_nonnull(strstr(dg->message, "capacity 10"));
    /* Totals agree with the steps listed. */
    ck_assert_uint_eq(f.e->identity_checked, 3);
    fx_end(&f);
}
END_TEST

START_TEST(overflow_from_input_position)
{
    char dir[] = "/tmp/oac_rt_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char *path = write_i64_file(dir, "position", 7);
    fx f;
    fx_example(&f, "dense_cache");
    oac_dim_binding dims[5];
    size_t nd = dense_dims(dims, 10, 3);
    oac_input_file in = { "position", path };
    oac_run_opts ro = { .steps = 4, .inputs = &in, .n_inputs = 1 };
    oac_check_opts co = { .dims = dims, .n_dims = nd };
    ck_assert_int_eq(oac_check(f.ctx, &f.a, f.m, &co, f.d), OAC_OK);
    ro.dims = dims;
    ro.n_dims = nd;
    /* 7 + 3 = 10 fits; 10 + 3 does not. */
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, f.a, &ro, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(f.e->steps_completed, 1);
    ck_assert_ptr_nonnull(strstr(diag_find(f.d, OAC_CAPACITY_OVERFLOW, NULL, NULL, NULL)->message,
                                 "position 10"));
    fx_end(&f);
    unlink(path);
    free(path);
    rmdir(dir);
}
END_TEST

START_TEST(toy_decoder_fills_its_capacity)
{
    /* One token per step: the whole capacity, then the position input
     * has advanced to it (the next step's mask Gather would be out of
     * range, which the kernels report as operand-invalid). */
    fx f;
    fx_example(&f, "toy_decoder");
    oac_run_opts ro = { .steps = OAC_TOY_MAX_LEN };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL), OAC_OK);
    ck_assert_uint_eq(f.e->steps_completed, OAC_TOY_MAX_LEN);
    /* Two caches per layer, each in place every step. */
    ck_assert_uint_eq(f.e->identity_checked, 2 * OAC_TOY_LAYERS * OAC_TOY_MAX_LEN);
    ck_assert_uint_eq(f.e->identity_held, f.e->identity_checked);
    fx_end(&f);
    fx_example(&f, "toy_decoder");
    ro.steps = OAC_TOY_MAX_LEN + 1;
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL), OAC_ERUNTIME);
    ck_assert_uint_eq(f.e->steps_completed, OAC_TOY_MAX_LEN);
    ck_assert_uint_eq(oac_diags_count_severity(f.d, OAC_SEV_ERROR), 1);
    fx_end(&f);
}
END_TEST

/* The step_done hook (run/kernel_api.h; bench/bench_decode times steps with it):
 * once per completed step, in order, with that step's figures; never for
 * a step that did not complete. */
typedef struct seen_steps {
    oac_step_stats st[OAC_TOY_MAX_LEN + 2];
    size_t n;
} seen_steps;

static void record_step(void *arg, const oac_step_stats *st)
{
    seen_steps *s = arg;
    if (s->n < sizeof s->st / sizeof s->st[0])
        s->st[s->n] = *st;
    s->n++;
}

START_TEST(step_done_hook_sees_completed_steps)
{
    /* The Concat twin copies more every step: the figures are per step. */
    fx f;
    fx_example(&f, "toy_decoder_concat");
    ck_assert_int_eq(fx_check(&f, NULL), OAC_OK);
    seen_steps seen = { .n = 0 };
    oac_run_hooks h = { .step_done = record_step, .step_arg = &seen };
    oac_run_opts ro = { .steps = 3 };
    ck_assert_int_eq(oac_run_with_hooks(f.ctx, &f.e, f.m, NULL, &ro, &h, f.d), OAC_OK);
    ck_assert_uint_eq(seen.n, 3);
    ck_assert_uint_eq(f.e->n_per_step, 3);
    for (size_t i = 0; i < 3; i++) {
        ck_assert_uint_eq(seen.st[i].step, i + 1);
        ck_assert_uint_eq(seen.st[i].alloc_bytes, f.e->per_step[i].alloc_bytes);
        ck_assert_uint_eq(seen.st[i].copied_bytes, f.e->per_step[i].copied_bytes);
    }
    ck_assert_uint_lt(seen.st[0].copied_bytes, seen.st[2].copied_bytes);
    fx_end(&f);
    /* Past the capacity the last step is refused: no call for it. */
    fx_example(&f, "toy_decoder");
    ck_assert_int_eq(fx_check(&f, NULL), OAC_OK);
    seen.n = 0;
    ro.steps = OAC_TOY_MAX_LEN + 1;
    ck_assert_int_eq(oac_run_with_hooks(f.ctx, &f.e, f.m, NULL, &ro, &h, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(f.e->steps_completed, OAC_TOY_MAX_LEN);
    ck_assert_uint_eq(seen.n, OAC_TOY_MAX_LEN);
    ck_assert_uint_eq(seen.st[OAC_TOY_MAX_LEN - 1].step, OAC_TOY_MAX_LEN);
    fx_end(&f);
}
END_TEST

/* ---- measured peak == planned peak ----------------------------------- */

START_TEST(peak_matches_plan_examples)
{
    static const char *const names[] = {
        "dense_cache", "dense_cache_implied", "chained_updates",
        "tensor_scatter", "toy_decoder", "toy_decoder_concat",
        "stock_no_annotations",
    };
    oac_dim_binding dd[7];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        fx f;
        fx_example(&f, names[i]);
        size_t nd = 0;
        if (!strncmp(names[i], "dense", 5) || !strncmp(names[i], "chained", 7)) {
            nd = dense_dims(dd, 8, 2);
        } else if (!strcmp(names[i], "stock_no_annotations")) {
            dd[0] = (oac_dim_binding){ "batch", 3 };
            nd = 1;
        }
        /* The Concat twin grows after its first step (stock_twin_grows). */
        oac_run_opts ro = { .steps = strcmp(names[i], "toy_decoder_concat") ? 3 : 1 };
        ck_assert_msg(fx_check_run(&f, dd, nd, NULL, 0, &ro, NULL) == OAC_OK, "%s: %s",
                      names[i], oac_errmsg(f.ctx));
        ck_assert_msg(f.e->planned_peak_bytes.known, "%s: no plan", names[i]);
        ck_assert_msg(f.e->measured_peak_bytes == f.e->planned_peak_bytes.value,
                      "%s: measured %llu, planned %llu", names[i],
                      (unsigned long long)f.e->measured_peak_bytes,
                      (unsigned long long)f.e->planned_peak_bytes.value);
        ck_assert(f.e->peak_matches_plan);
        fx_end(&f);
    }
}
END_TEST

START_TEST(toy_decoder_peak_is_nonzero)
{
    /* Guard against a vacuous match: the decoder's temporaries count. */
    fx f;
    fx_example(&f, "toy_decoder");
    oac_run_opts ro = { .steps = 2 };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL), OAC_OK);
    ck_assert_uint_gt(f.e->measured_peak_bytes, 0);
    ck_assert(f.e->peak_matches_plan);
    ck_assert_uint_gt(f.e->per_step[1].alloc_calls, 0);
    ck_assert_uint_eq(f.e->per_step[0].alloc_bytes, f.e->per_step[1].alloc_bytes);
    fx_end(&f);
}
END_TEST

START_TEST(paged_page_id_advances)
{
    /* page_size 16, one token per step: page_id moves to 1 after step 16
     * (its position back to 0), and step 17 creates the second page. */
    char dir[] = "/tmp/oac_paged_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    fx f;
    fx_example(&f, "paged_cache");
    oac_run_opts ro = { .steps = 20, .dump_dir = dir };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL), OAC_OK);
    ck_assert_uint_eq(f.e->steps_completed, 20);
    ck_assert_uint_eq(f.e->identity_held, 20);
    /* Steps 1-8 and 13-20 are kept (9-12 only counted). */
    ck_assert_uint_eq(f.e->n_per_step, 16);
    ck_assert_uint_eq(f.e->per_step_omitted, 4);
    for (size_t i = 0; i < 16; i++) {
        uint64_t step = f.e->per_step[i].step;
        ck_assert_uint_eq(step, i < 8 ? i + 1 : i + 5);
        ck_assert_uint_eq(f.e->per_step[i].alloc_calls, step == 1 || step == 17 ? 1 : 0);
    }
    /* Pages made by earlier steps are the step's baseline, not its peak. */
    ck_assert(f.e->peak_matches_plan);
    char path[64];
    snprintf(path, sizeof path, "%s/cache.pb", dir);
    oac_pbfile *pf;
    ck_assert_int_eq(oac_pbfile_load(f.ctx, &pf, path, &onnx__sequence_proto__descriptor,
                                     f.d), OAC_OK);
    const Onnx__SequenceProto *sp = (const Onnx__SequenceProto *)pf->msg;
    ck_assert_uint_eq(sp->n_quantized_tensor_values, 2);
    ck_assert_int_eq(sp->elem_type, ONNX__SEQUENCE_PROTO__DATA_TYPE__QUANTIZED_TENSOR);
    oac_pbfile_free(pf);
    fx_end(&f);

    /* The dump reads back as --input: two pages already there, so a step
     * at page 0 allocates nothing. */
    fx_example(&f, "paged_cache");
    oac_input_file in = { "cache", path };
    oac_run_opts ro2 = { .steps = 1, .inputs = &in, .n_inputs = 1 };
    oac_check_opts co = { .inputs = &in, .n_inputs = 1 };
    ck_assert_int_eq(oac_check(f.ctx, &f.a, f.m, &co, f.d), OAC_OK);
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, f.a, &ro2, f.d), OAC_OK);
    ck_assert_uint_eq(f.e->per_step[0].alloc_calls, 0);
    ck_assert_uint_eq(f.e->identity_held, 1);
    fx_end(&f);
    unlink(path);
    snprintf(path, sizeof path, "%s/updated_cache.pb", dir);
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(temporary_root_updated_in_place)
{
    /* t = Identity(x) is a fresh buffer; CacheUpdate writes into it in
     * place and Neg reads the update: t lives until Neg, the update
     * allocates nothing, and the peak is t + y as the plan says. */
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "1,8,2");
    oac_gb_input(g, "v", OAC_T_FLOAT, "1,1,2");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    oac_gb_node(g, "Identity", NULL, "copy", "x", "t");
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "upd", "t,v,position", "u");
    oac_node_alias(g, n, 0, 0, 1);
    oac_gb_node(g, "Neg", NULL, "neg", "u", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,8,2");
    fx_load(&f);
    oac_run_opts ro = { .steps = 3 };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL), OAC_OK);
    ck_assert_uint_eq(f.e->identity_checked, 3);
    ck_assert_uint_eq(f.e->identity_held, 3);
    ck_assert_uint_eq(f.e->per_step[2].alloc_calls, 2);         /* t and y */
    ck_assert_uint_eq(f.e->measured_peak_bytes, 2 * 8 * 2 * 4);
    ck_assert(f.e->peak_matches_plan);
    fx_end(&f);
}
END_TEST

/* ---- out of place ---------------------------------------------------- */

START_TEST(out_of_place_second_cache)
{
    fx f;
    fx_example(&f, "dense_cache_implied");
    oac_dim_binding dims[5];
    size_t nd = dense_dims(dims, 8, 2);
    oac_run_opts ro = { .steps = 3 };
    ck_assert_int_eq(fx_check_run(&f, dims, nd, NULL, 0, &ro, NULL), OAC_OK);
    ck_assert_uint_eq(f.e->second_cache_bytes, dense_bytes(8));
    ck_assert_uint_eq(f.e->identity_checked, 0);
    for (size_t i = 0; i < f.e->n_per_step; i++) {
        ck_assert_uint_eq(f.e->per_step[i].alloc_calls, 1);
        ck_assert_uint_eq(f.e->per_step[i].alloc_bytes, dense_bytes(8));
    }
    ck_assert_uint_eq(f.e->measured_peak_bytes, dense_bytes(8));
    fx_end(&f);
}
END_TEST

/* ---- refusals of the runtime itself ---------------------------------- */

START_TEST(unsupported_operator_named)
{
    /* Scan has no kernel (If, Loop and local functions do: see
     * check_runtime_control.c): refused by name before anything runs. */
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "3,2");
    Onnx__NodeProto *n = oac_gb_node(g, "Scan", NULL, "rows", "x", "y");
    oac_node_attr_int(g, n, "num_scan_inputs", 1);
    oac_gb *b = oac_node_attr_graph(g, n, "body", "row");
    oac_gb_input(b, "r", OAC_T_FLOAT, "2");
    oac_gb_node(b, "Neg", NULL, "neg", "r", "s");
    oac_gb_output(b, "s", OAC_T_FLOAT, "2");
    oac_gb_output(g, "y", OAC_T_FLOAT, "3,2");
    fx_load(&f);
    oac_run_opts ro = { .steps = 2 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    const oac_diag *dg = diag_expect_run(f.d, OAC_UNSUPPORTED_OPERATOR, "unsupported-operator");
    ck_assert_str_eq(dg->node, "rows");
    ck_assert_str_eq(dg->op_type, "Scan");
    ck_assert_ptr_nonnull(strstr(dg->message, "Scan"));
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
}
END_TEST

START_TEST(unknown_op_never_skipped)
{
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "Det", NULL, "act", "x", "y");   /* ONNX, no kernel */
    oac_gb_node(g, "Frobnicate", "acme", "frob", "y", "z");
    oac_gb_output(g, "z", OAC_T_FLOAT, "2");
    fx_load(&f);
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    /* Both nodes named, before anything ran. */
    ck_assert_uint_eq(diag_count(f.d, OAC_UNSUPPORTED_OPERATOR), 2);
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
}
END_TEST

START_TEST(huge_buffers_refused_not_attempted)
{
    /* Gather of 2^13 rows of [2, 2^20] FLOAT: 8 MiB of data ask for a
     * 32 GiB output, above OAC_RT_MAX_BYTES: refused at the node before
     * allocating (memory-budget, naming the output; no budget is set,
     * the per-buffer limit still holds). */
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_gb_input(g, "data", OAC_T_FLOAT, "2,1048576");
    oac_gb_input(g, "rows", OAC_T_INT64, "8192");
    oac_gb_node(g, "Gather", NULL, "gather", "data,rows", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "8192,1048576");
    fx_load(&f);
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    const oac_diag *dg = diag_expect_run(f.d, OAC_MEMORY_BUDGET, "memory-budget");
    ck_assert_str_eq(dg->node, "gather");
    ck_assert_str_eq(dg->value, "y");
    ck_assert_uint_eq(diag_count(f.d, OAC_UNSUPPORTED_OPERATOR), 0);
    ck_assert_ptr_nonnull(strstr(dg->message, "limit"));
    ck_assert_ptr_nonnull(strstr(dg->message, "per buffer"));
    ck_assert_uint_eq(f.e->steps_completed, 0);
    ck_assert_uint_eq(f.e->measured_peak_bytes, 0);
    fx_end(&f);

    /* 2896^3 > 2^34 multiply-adds over 32 MiB operands: refused at the
     * node, before its output is allocated. */
    g = fx_build(&f, &mb);
    oac_gb_input(g, "a", OAC_T_FLOAT, "2896,2896");
    oac_gb_node(g, "MatMul", NULL, "slow", "a,a", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2896,2896");
    fx_load(&f);
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    dg = diag_expect_run(f.d, OAC_UNSUPPORTED_OPERATOR, "unsupported-operator");
    ck_assert_str_eq(dg->node, "slow");
    ck_assert_ptr_nonnull(strstr(dg->message, "multiply-adds"));
    ck_assert_uint_eq(f.e->measured_peak_bytes, 0);
    fx_end(&f);

    /* A declared input of 2^36 floats: refused before the run, reported. */
    g = fx_build(&f, &mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "65536,1048576");
    oac_gb_node(g, "Neg", NULL, "neg", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "65536,1048576");
    fx_load(&f);
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    dg = diag_expect_run(f.d, OAC_MEMORY_BUDGET, "memory-budget");
    ck_assert_ptr_nonnull(strstr(dg->message, "'x'"));
    ck_assert_ptr_nonnull(strstr(dg->message, "limit"));
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

START_TEST(alias_broken_detected)
{
    fx f;
    fx_example(&f, "dense_cache");
    oac_dim_binding dims[5];
    size_t nd = dense_dims(dims, 8, 1);
    oac_kernel_override ov = { "onnx_alias", "CacheUpdate", rogue_cache_update };
    oac_run_hooks h = { .overrides = &ov, .n_overrides = 1 };
    oac_run_opts ro = { .steps = 3 };
    ck_assert_int_eq(fx_check_run(&f, dims, nd, NULL, 0, &ro, &h), OAC_ERUNTIME);
    const oac_diag *dg = diag_find(f.d, OAC_ALIAS_BROKEN, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(dg);
    ck_assert_str_eq(dg->node, "update");
    ck_assert_uint_eq(f.e->identity_checked, 1);
    ck_assert_uint_eq(f.e->identity_held, 0);
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
}
END_TEST

START_TEST(unknown_dim_is_usage_error)
{
    fx f;
    fx_example(&f, "dense_cache");
    ck_assert_int_eq(oac_check(f.ctx, &f.a, f.m, NULL, f.d), OAC_OK);
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, f.a, &ro, f.d), OAC_EINVAL);
    ck_assert_ptr_nonnull(strstr(oac_errmsg(f.ctx), "unknown"));
    fx_end(&f);
}
END_TEST

START_TEST(position_lengths_disagree)
{
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_vi_access(g, oac_gb_input(g, "a", OAC_T_FLOAT, "1,8,2"), 1);
    oac_vi_access(g, oac_gb_input(g, "b", OAC_T_FLOAT, "1,8,2"), 1);
    oac_gb_input(g, "va", OAC_T_FLOAT, "1,1,2");
    oac_gb_input(g, "vb", OAC_T_FLOAT, "1,2,2");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *n1 = oac_gb_node(g, "CacheUpdate", "onnx_alias", "ua", "a,va,position", "a2");
    oac_node_alias(g, n1, 0, 0, 1);
    Onnx__NodeProto *n2 = oac_gb_node(g, "CacheUpdate", "onnx_alias", "ub", "b,vb,position", "b2");
    oac_node_alias(g, n2, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "a2", OAC_T_FLOAT, "1,8,2"), "a");
    oac_vi_alias_of(g, oac_gb_output(g, "b2", OAC_T_FLOAT, "1,8,2"), "b");
    fx_load(&f);
    oac_run_opts ro = { .steps = 2 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    const oac_diag *dg = diag_find(f.d, OAC_OPERAND_INVALID, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(dg);
    ck_assert_ptr_nonnull(strstr(dg->message, "position"));
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
}
END_TEST

/* ---- --dump ----------------------------------------------------------- */

START_TEST(dump_writes_outputs_and_caches)
{
    char dir[] = "/tmp/oac_dump_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    fx f;
    fx_example(&f, "dense_cache");
    oac_dim_binding dims[5];
    size_t nd = dense_dims(dims, 8, 2);
    oac_run_opts ro = { .steps = 2, .dump_dir = dir };
    ck_assert_int_eq(fx_check_run(&f, dims, nd, NULL, 0, &ro, NULL), OAC_OK);
    static const char *const files[] = { "cache", "updated_cache" };
    for (size_t i = 0; i < 2; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s.pb", dir, files[i]);
        oac_pbfile *pf;
        ck_assert_int_eq(oac_pbfile_load(f.ctx, &pf, path, &onnx__tensor_proto__descriptor,
                                         f.d), OAC_OK);
        const Onnx__TensorProto *t = (const Onnx__TensorProto *)pf->msg;
        ck_assert_str_eq(t->name, files[i]);
        ck_assert_int_eq(t->data_type, OAC_T_FLOAT16);
        ck_assert_uint_eq(t->n_dims, 5);
        ck_assert_int_eq(t->dims[3], 8);
        uint64_t n;
        ck_assert(oac_tensor_numel(t, &n));
        ck_assert_uint_eq(n * 2, dense_bytes(8));
        oac_pbfile_free(pf);
        unlink(path);
    }
    fx_end(&f);
    rmdir(dir);
}
END_TEST

START_TEST(dump_to_missing_dir_fails)
{
    fx f;
    fx_example(&f, "dense_cache");
    oac_dim_binding dims[5];
    size_t nd = dense_dims(dims, 8, 2);
    oac_run_opts ro = { .steps = 1, .dump_dir = "/nonexistent/oac/dump" };
    /* Each value that cannot be written is a finding (issue 12). */
    ck_assert_int_eq(fx_check_run(&f, dims, nd, NULL, 0, &ro, NULL), OAC_ERUNTIME);
    ck_assert_int_ge(oac_diags_find(f.d, OAC_OUTPUT_WRITE_FAILED), 0);
    fx_end(&f);
}
END_TEST

/* ---- every allocation failure path ---------------------------------- */

static bool dense_only(const char *name)
{
    return !strcmp(name, "chained_updates");
}

START_TEST(allocation_failures)
{
    oac_dim_binding dims[5];
    size_t nd = dense_dims(dims, 8, 1);
    /* The Concat twin: the generation loop and a stock model's presents
     * fed back (its second step copies them). */
    static const char *const names[] = { "chained_updates", "toy_decoder",
                                         "toy_decoder_concat" };
    fail_each_allocation(names, 3, dims, nd, dense_only, 2, 5000);
}
END_TEST

/* ---- case rows: codes of the run ----------------------------------------- */

/* dense_cache checked and run `steps` steps at capacity cap, length len,
 * with the rogue CacheUpdate when rogue; the run's status must be
 * want_rc. */
static void dense_scene(fx *f, int64_t cap, int64_t len, uint64_t steps, bool rogue,
                        int want_rc)
{
    fx_example(f, "dense_cache");
    static oac_dim_binding dims[5];
    size_t nd = dense_dims(dims, cap, len);
    static const oac_kernel_override ov = { "onnx_alias", "CacheUpdate", rogue_cache_update };
    oac_run_hooks h = { .overrides = &ov, .n_overrides = 1 };
    oac_run_opts ro = { .steps = steps };
    ck_assert_int_eq(fx_check_run(f, dims, nd, NULL, 0, &ro, rogue ? &h : NULL), want_rc);
}

static void dense_rogue(fx *f) { dense_scene(f, 8, 1, 3, true, OAC_ERUNTIME); }
static void dense_3_steps(fx *f) { dense_scene(f, 8, 1, 3, false, OAC_OK); }
/* Positions 0, 3, 6 fit in 10; 9 + 3 does not. */
static void dense_past_capacity(fx *f) { dense_scene(f, 10, 3, 6, false, OAC_ERUNTIME); }
static void dense_to_capacity(fx *f) { dense_scene(f, 10, 3, 3, false, OAC_OK); }

/* x -> Neg -> op -> z, op from domain: refused before running when the
 * runtime has no kernel for it. */
static void two_ops(fx *f, const char *domain, const char *op, int want_rc)
{
    oac_gb *g = fx_build(f, NULL);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "Neg", NULL, "first", "x", "y");
    oac_gb_node(g, op, domain, "second", "y", "z");
    oac_gb_output(g, "z", OAC_T_FLOAT, "2");
    fx_load(f);
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f->ctx, &f->e, f->m, NULL, &ro, f->d), want_rc);
}

static void neg_frobnicate(fx *f) { two_ops(f, "acme", "Frobnicate", OAC_ERUNTIME); }
static void neg_neg(fx *f) { two_ops(f, NULL, "Neg", OAC_OK); }

/* ---- the schedule: an unsorted decoder (issue 11.1) -------------------- */

/* One attention step over caches k and v [1, 2, 8, 4] (READ_WRITE), x
 * [1, 2, 1, 4] (an input whose initializer is its default) and pos:
 *   kx = x + bk           vx = x * sv
 *   k2 = CacheUpdate(k, kx, pos)   v2 = CacheUpdate(v, vx, pos)
 *   kt = Transpose(k2)    s = MatMul(x, kt)    p = Softmax(s)
 *   o = MatMul(p, v2)     y = o + x
 * `order` lists the nodes in file order by their index in that list. */
static void attention_layer(oac_mb *mb, const int *order)
{
    static const float xv[8] = { 1, -2, 3, 0.5f, 0.25f, 4, -1, 2 };
    static const float bv[8] = { 0.5f, 1, -1, 2, 3, -0.5f, 1, 0 };
    static const float svv[8] = { 2, 0.5f, 1, -1, 1, 3, -2, 0.25f };
    static const int64_t perm[4] = { 0, 1, 3, 2 };
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "k", OAC_T_FLOAT, "1,2,8,4"), 1);
    oac_vi_access(g, oac_gb_input(g, "v", OAC_T_FLOAT, "1,2,8,4"), 1);
    oac_gb_input(g, "x", OAC_T_FLOAT, "1,2,1,4");
    oac_gb_init_f32(g, "x", "1,2,1,4", xv, 8);
    oac_gb_input(g, "pos", OAC_T_INT64, "");
    oac_gb_init_f32(g, "bk", "1,2,1,4", bv, 8);
    oac_gb_init_f32(g, "sv", "1,2,1,4", svv, 8);
    for (int n = 0; n < 9; n++) {
        Onnx__NodeProto *np;
        switch (order[n]) {
        case 0: oac_gb_node(g, "Add", NULL, "kx", "x,bk", "kx"); break;
        case 1: oac_gb_node(g, "Mul", NULL, "vx", "x,sv", "vx"); break;
        case 2:
            np = oac_gb_node(g, "CacheUpdate", "onnx_alias", "k_update", "k,kx,pos", "k2");
            oac_node_alias(g, np, 0, 0, 1);
            break;
        case 3:
            np = oac_gb_node(g, "CacheUpdate", "onnx_alias", "v_update", "v,vx,pos", "v2");
            oac_node_alias(g, np, 0, 0, 1);
            break;
        case 4:
            np = oac_gb_node(g, "Transpose", NULL, "kt", "k2", "kt");
            oac_node_attr_ints(g, np, "perm", perm, 4);
            break;
        case 5: oac_gb_node(g, "MatMul", NULL, "scores", "x,kt", "s"); break;
        case 6: oac_gb_node(g, "Softmax", NULL, "softmax", "s", "p"); break;
        case 7: oac_gb_node(g, "MatMul", NULL, "attend", "p,v2", "o"); break;
        default: oac_gb_node(g, "Add", NULL, "residual", "o,x", "y"); break;
        }
    }
    oac_mb_opset(mb, "onnx_alias", 1);
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,2,1,4");
    oac_vi_alias_of(g, oac_gb_output(g, "k2", OAC_T_FLOAT, "1,2,8,4"), "k");
    oac_vi_alias_of(g, oac_gb_output(g, "v2", OAC_T_FLOAT, "1,2,8,4"), "v");
}

static const int sorted_order[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 };
/* Every reader before its writer where the data allow it: no file-order
 * runtime could run this. */
static const int shuffled_order[9] = { 8, 7, 4, 5, 2, 6, 3, 1, 0 };

enum { LAYER_STEPS = 3, LAYER_CACHE = 1 * 2 * 8 * 4 };

/* Check and run the layer in `order` for LAYER_STEPS steps with the
 * caches bound to k and v (zeroed first). */
static void run_layer(fx *f, const int *order, float *k, float *v)
{
    fx_build(f, NULL);
    attention_layer(f->mb, order);
    memset(k, 0, LAYER_CACHE * sizeof *k);
    memset(v, 0, LAYER_CACHE * sizeof *v);
    oac_binding bk, bv;
    oac_binding_init(&bk, "k", k, LAYER_CACHE * sizeof *k, true);
    oac_binding_init(&bv, "v", v, LAYER_CACHE * sizeof *v, true);
    oac_binding *bl[2] = { &bk, &bv };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 2 };
    oac_run_opts ro = { .steps = LAYER_STEPS };
    int rc = fx_check_run(f, NULL, 0, NULL, 0, &ro, &h);
    ck_assert_msg(rc == OAC_OK, "rc %d: %s %s", rc, oac_errmsg(f->ctx), diag_dump(f->d));
}

START_TEST(unsorted_decoder_runs_and_matches_plan)
{
    float ks[LAYER_CACHE], vs[LAYER_CACHE], ku[LAYER_CACHE], vu[LAYER_CACHE];
    fx a, b;
    run_layer(&a, sorted_order, ks, vs);
    run_layer(&b, shuffled_order, ku, vu);
    /* The unsorted file checks clean and runs every step in place. */
    ck_assert_uint_eq(diag_count(b.d, OAC_MODEL_INVALID), 0);
    ck_assert_uint_eq(b.e->steps_completed, LAYER_STEPS);
    ck_assert_uint_eq(b.e->identity_checked, 2 * LAYER_STEPS);
    ck_assert_uint_eq(b.e->identity_held, 2 * LAYER_STEPS);
    ck_assert_uint_eq(b.e->second_cache_bytes, 0);
    /* Its measured peak is its plan's, which is known and counts the
     * buffers of a step (kx, vx, kt, s, p, o, y: not the caches). */
    ck_assert(b.e->planned_peak_bytes.known);
    ck_assert_uint_gt(b.e->measured_peak_bytes, 0);
    ck_assert_uint_eq(b.e->measured_peak_bytes, b.e->planned_peak_bytes.value);
    ck_assert(b.e->peak_matches_plan);
    ck_assert(a.e->peak_matches_plan);
    /* The same work as the sorted file, step by step. */
    for (int st = 0; st < LAYER_STEPS; st++) {
        ck_assert_uint_eq(b.e->per_step[st].alloc_calls, a.e->per_step[st].alloc_calls);
        ck_assert_uint_eq(b.e->per_step[st].alloc_bytes, a.e->per_step[st].alloc_bytes);
    }
    ck_assert_uint_eq(a.e->per_step[0].alloc_calls, 7);
    /* And the same caches: rows 0..2 of k hold x + bk, of v x * sv, in
     * both; the rest is untouched. */
    ck_assert_mem_eq(ks, ku, sizeof ks);
    ck_assert_mem_eq(vs, vu, sizeof vs);
    ck_assert(ks[0] == 1.5f && ks[3] == 2.5f);          /* head 0, row 0 */
    ck_assert(ks[2 * 4 + 1] == -1.0f);                   /* head 0, row 2 */
    ck_assert(vs[8 * 4 + 1] == 12.0f);                   /* head 1, row 0: 4 * 3 */
    ck_assert(ks[3 * 4] == 0.0f && vs[7 * 4] == 0.0f);   /* rows not yet written */
    fx_end(&a);
    fx_end(&b);
}
END_TEST

/* b = Neg(a) and a = Add(x, b): a cycle no order runs. */
static void cyclic(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "Add", NULL, "first", "x,b", "a");
    oac_gb_node(g, "Neg", NULL, "second", "a", "b");
    oac_gb_output(g, "a", OAC_T_FLOAT, "2");
}

START_TEST(cycle_refused_before_running)
{
    /* Checked first (as `run` does): model-invalid, and nothing runs. */
    fx f;
    fx_build(&f, NULL);
    cyclic(f.mb);
    ck_assert_int_eq(fx_check(&f, NULL), OAC_OK);
    const oac_diag *d = diag_expect(f.d, OAC_MODEL_INVALID, "first", "a", "/graph/node/0");
    ck_assert_ptr_nonnull(strstr(d->message, "first -> second -> first"));
    oac_run_opts ro = { .steps = 2 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, f.a, &ro, f.d), OAC_OK);
    ck_assert_uint_eq(f.e->steps_completed, 0);
    ck_assert_uint_eq(f.e->n_per_step, 0);
    fx_end(&f);
    /* Without an analysis of its own the run refuses it too, saying why,
     * with the check's code (never unsupported-operator). */
    fx_build(&f, NULL);
    cyclic(f.mb);
    fx_load(&f);
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    d = diag_expect_run(f.d, OAC_MODEL_INVALID, "model-invalid");
    ck_assert_uint_eq(diag_count(f.d, OAC_UNSUPPORTED_OPERATOR), 0);
    ck_assert_ptr_nonnull(strstr(d->message, "cycle"));
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
    /* Given an analysis with that structure error but a list of
     * diagnostics that lacks it, the run still refuses, with the check's
     * own finding (its wording and location), once. */
    fx_build(&f, NULL);
    cyclic(f.mb);
    ck_assert_int_eq(fx_check(&f, NULL), OAC_OK);
    oac_diags *fresh = oac_diags_new(f.ctx);
    ck_assert_ptr_nonnull(fresh);
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, f.a, &ro, fresh), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(fresh, OAC_MODEL_INVALID), 1);
    d = diag_expect(fresh, OAC_MODEL_INVALID, "first", "a", "/graph/node/0");
    ck_assert_ptr_nonnull(strstr(d->message, "first -> second -> first"));
    ck_assert_uint_eq(oac_diags_count_severity(fresh, OAC_SEV_ERROR), 1);
    ck_assert_uint_eq(f.e->steps_completed, 0);
    oac_diags_free(fresh);
    fx_end(&f);
}
END_TEST

START_TEST(trimmed_analysis_reports_and_runs)
{
    /* A trimmed analysis (what `check` keeps for its report) still has
     * the report's data, and a run on it makes its own analysis: the
     * same figures as a run on the whole one. */
    oac_dim_binding dims[5];
    size_t nd = dense_dims(dims, 16, 1);
    fx f, g;
    fx_example(&f, "dense_cache");
    oac_run_opts ro = { .steps = 3 };
    ck_assert_int_eq(fx_check_run(&f, dims, nd, NULL, 0, &ro, NULL), OAC_OK);
    fx_example(&g, "dense_cache");
    oac_check_opts co = { .dims = dims, .n_dims = nd };
    ck_assert_int_eq(fx_check(&g, &co), OAC_OK);
    size_t classes = oac_analysis_class_count(g.a);
    oac_memory_plan plan = *oac_analysis_plan(g.a);
    oac_analysis_trim(g.a);
    oac_analysis_trim(g.a);          /* twice is harmless */
    ck_assert_uint_eq(oac_analysis_class_count(g.a), classes);
    ck_assert_uint_eq(classes, 1);
    ck_assert_str_eq(oac_analysis_class(g.a, 0)->root, "cache");
    ck_assert(oac_analysis_plan(g.a)->peak_bytes.known == plan.peak_bytes.known);
    oac_run_opts ro2 = { .steps = 3, .dims = dims, .n_dims = nd };
    ck_assert_int_eq(oac_run(g.ctx, &g.e, g.m, g.a, &ro2, g.d), OAC_OK);
    ck_assert_uint_eq(g.e->steps_completed, 3);
    ck_assert_uint_eq(g.e->identity_held, f.e->identity_held);
    ck_assert_uint_eq(g.e->measured_peak_bytes, f.e->measured_peak_bytes);
    ck_assert(g.e->peak_matches_plan == f.e->peak_matches_plan);
    fx_end(&f);
    fx_end(&g);
}
END_TEST

START_TEST(omitted_outputs_computed_and_dropped)
{
    /* Add's output has no name, Neg lists two outputs where it makes one
     * (fuzz_run: "output 0 absent", a failure of the tool): the kernels
     * run, what nobody reads is dropped with the node, the rest as
     * usual. */
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    oac_gb_node(g, "Add", NULL, "lost", "x,x", "");
    oac_gb_node(g, "Neg", NULL, "neg", "x", "y,");
    oac_gb_output(g, "y", OAC_T_FLOAT, "4");
    fx_load(&f);
    oac_run_opts ro = { .steps = 2 };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL), OAC_OK);
    ck_assert_uint_eq(f.e->steps_completed, 2);
    /* Each step: Add's 16 bytes (and its header) as workspace, Neg's 16. */
    ck_assert_uint_eq(f.e->per_step[1].alloc_calls, 2);
    ck_assert_uint_gt(f.e->per_step[1].alloc_bytes, 32);
    fx_end(&f);
}
END_TEST

static const scene_case run_rows[] = {
    { "rogue_kernel", dense_rogue, WANT(OAC_ALIAS_BROKEN), "update", NULL, NULL },
    { "own_kernel", dense_3_steps, NEAR(OAC_ALIAS_BROKEN) },
    { "frobnicate", neg_frobnicate, WANT(OAC_UNSUPPORTED_OPERATOR), "second", NULL, NULL },
    { "neg", neg_neg, NEAR(OAC_UNSUPPORTED_OPERATOR) },
    { "past_capacity", dense_past_capacity, WANT(OAC_CAPACITY_OVERFLOW), "update", NULL,
      NULL },
    { "to_capacity", dense_to_capacity, NEAR(OAC_CAPACITY_OVERFLOW) },
};
CASES_TEST(run_rows)

Suite *test_suite(void)
{
    Suite *s = suite_create("runtime");
    TCase *tc = tcase_create("runtime");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, identity_over_many_steps);
    tcase_add_test(tc, chained_updates_identity);
    tcase_add_test(tc, overflow_after_right_steps);
    tcase_add_test(tc, overflow_from_input_position);
    tcase_add_test(tc, toy_decoder_fills_its_capacity);
    tcase_add_test(tc, step_done_hook_sees_completed_steps);
    tcase_add_test(tc, peak_matches_plan_examples);
    tcase_add_test(tc, toy_decoder_peak_is_nonzero);
    tcase_add_test(tc, paged_page_id_advances);
    tcase_add_test(tc, temporary_root_updated_in_place);
    tcase_add_test(tc, out_of_place_second_cache);
    tcase_add_test(tc, unsupported_operator_named);
    tcase_add_test(tc, unknown_op_never_skipped);
    tcase_add_test(tc, huge_buffers_refused_not_attempted);
    tcase_add_test(tc, alias_broken_detected);
    tcase_add_test(tc, unknown_dim_is_usage_error);
    tcase_add_test(tc, position_lengths_disagree);
    tcase_add_test(tc, dump_writes_outputs_and_caches);
    tcase_add_test(tc, dump_to_missing_dir_fails);
    tcase_add_test(tc, allocation_failures);
    tcase_add_test(tc, unsorted_decoder_runs_and_matches_plan);
    tcase_add_test(tc, cycle_refused_before_running);
    tcase_add_test(tc, trimmed_analysis_reports_and_runs);
    tcase_add_test(tc, omitted_outputs_computed_and_dropped);
    ADD_CASES(tc, run_rows);
    suite_add_tcase(s, tc);
    return s;
}

/* check_plan.c: the static memory plan (lib/check/plan.c, contract 4): numbers
 * computed by hand for small graphs (in place, out of place, a chain that
 * frees temporaries, a temporary updated in place, paged workspace,
 * unknown dims, bodies of If/Loop/local functions), the schedule of
 * check/plan.h, and the example rows: valid rows
 * get no error from the shapes/capacity/plan passes, and each row's
 * expected codes of those passes appear.
 */
#include "harness.h"
#include "check/graph.h"
#include "check/plan.h"

#define KNOWN(f, v) do { ck_assert_msg((f).known, #f " unknown"); \
                         ck_assert_uint_eq((f).value, (v)); } while (0)
#define UNKNOWN(f) ck_assert_msg(!(f).known, #f " known")

/* zero() of oac_plan_peak_at_inputs: only the value id *arg starts at 0. */
static bool starts_zero_if(const void *arg, int64_t id)
{
    return id == *(const int64_t *)arg;
}

START_TEST(test_in_place)
{
    fx r;
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,16,4");
    cu_node(r.g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "1,2,16,4"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    const oac_memory_plan *p = oac_analysis_plan(r.a);
    KNOWN(p->persistent_cache_bytes, 256);   /* 1*2*16*4 FLOAT16 */
    KNOWN(p->planned_output_bytes, 0);
    KNOWN(p->workspace_bytes, 0);
    KNOWN(p->peak_bytes, 0);
    KNOWN(p->second_cache_bytes, 0);
    fx_end(&r);
}
END_TEST

START_TEST(test_out_of_place)
{
    fx r;
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,16,4");
    cu_node(r.g, "upd", "cache,values,position", "out", false);
    oac_gb_output(r.g, "out", OAC_T_FLOAT16, "1,2,16,4");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    const oac_memory_plan *p = oac_analysis_plan(r.a);
    KNOWN(p->second_cache_bytes, 256);
    KNOWN(p->planned_output_bytes, 256);
    KNOWN(p->peak_bytes, 256);
    KNOWN(p->persistent_cache_bytes, 0);   /* in no alias class */
    const oac_plan_sched *s = oac_analysis_schedule(r.a);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->n_bufs, 1);
    ck_assert_str_eq(s->bufs[0].name, "out");
    ck_assert_int_eq(s->bufs[0].free_after, -1);   /* a graph output */
    fx_end(&r);

    /* Two chained out-of-place updates: both buffers, both counted. */
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,16,4");
    cu_node(r.g, "u1", "cache,values,position", "a", false);
    cu_node(r.g, "u2", "a,values,position", "b", false);
    oac_gb_output(r.g, "b", OAC_T_FLOAT16, "1,2,16,4");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    p = oac_analysis_plan(r.a);
    KNOWN(p->second_cache_bytes, 512);
    KNOWN(p->planned_output_bytes, 512);
    KNOWN(p->peak_bytes, 512);   /* a is read by u2 while b is written */
    fx_end(&r);
}
END_TEST

START_TEST(test_chain_frees_temporaries)
{
    /* x[4] FLOAT (input, not counted)
     * n0 big = Concat(x,x,x,x) [16]  64   live 64
     * n1 s   = Slice(big, 0..4) [4]  16   live 80  (big freed after n1)
     * n2 t   = Neg(s)           [4]  16   live 32  (s freed)
     * n3 u   = Concat(t,t)      [8]  32   live 48  (t freed)
     * n4 v   = Neg(u)           [8]  32   live 64  (u freed, v kept)
     * peak 80, planned 160; without freeing the peak would be 160. */
    fx r;
    fx_build(&r, NULL);
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "4");
    oac_gb_node(r.g, "Concat", NULL, "n0", "x,x,x,x", "big");
    int64_t z = 0, four = 4;
    oac_gb_init_i64(r.g, "st", "1", &z, 1);
    oac_gb_init_i64(r.g, "en", "1", &four, 1);
    oac_gb_node(r.g, "Slice", NULL, "n1", "big,st,en", "s");
    oac_gb_node(r.g, "Neg", NULL, "n2", "s", "t");
    oac_gb_node(r.g, "Concat", NULL, "n3", "t,t", "u");
    oac_gb_node(r.g, "Neg", NULL, "n4", "u", "v");
    oac_gb_output(r.g, "v", OAC_T_FLOAT, "8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    const oac_memory_plan *p = oac_analysis_plan(r.a);
    KNOWN(p->planned_output_bytes, 160);
    KNOWN(p->peak_bytes, 80);
    KNOWN(p->workspace_bytes, 0);
    KNOWN(p->second_cache_bytes, 0);
    KNOWN(p->persistent_cache_bytes, 0);
    const oac_plan_sched *s = oac_analysis_schedule(r.a);
    ck_assert_uint_eq(s->n_steps, 5);
    ck_assert_uint_eq(s->n_bufs, 5);
    static const long free_after[] = { 1, 2, 3, 4, -1 };
    static const uint64_t live[] = { 64, 80, 32, 48, 64 };
    for (size_t i = 0; i < 5; i++) {
        ck_assert_int_eq(s->bufs[i].free_after, free_after[i]);
        KNOWN(oac_plan_step_live(s, i), live[i]);
        ck_assert_uint_eq(s->steps[i].n_alloc, 1);
    }
    ck_assert_uint_eq(s->steps[0].n_free, 0);
    ck_assert_uint_eq(s->steps[1].n_free, 1);
    ck_assert_uint_eq(s->frees[0], 0);   /* big, after n1 */
    ck_assert_uint_eq(s->steps[4].n_free, 1);
    fx_end(&r);
}
END_TEST

START_TEST(test_unread_output_freed_at_producer)
{
    /* n0 a = Neg(x) [4] (never read, not an output): freed right after
     * n0; n1 b = Neg(x) [4] output.  peak 16, planned 32. */
    fx r;
    fx_build(&r, NULL);
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "4");
    oac_gb_node(r.g, "Neg", NULL, "n0", "x", "a");
    oac_gb_node(r.g, "Neg", NULL, "n1", "x", "b");
    oac_gb_output(r.g, "b", OAC_T_FLOAT, "4");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    KNOWN(oac_analysis_plan(r.a)->planned_output_bytes, 32);
    KNOWN(oac_analysis_plan(r.a)->peak_bytes, 16);
    fx_end(&r);
}
END_TEST

START_TEST(test_live_unknown_from_first_unknown_buffer)
{
    /* n0 a = Neg(x) [4] 16; n1 b = Foo(a), a size nothing tells; n2 c =
     * Neg(x) [4].  live is known at n0 only: from n1 on it depends on b,
     * also after c is allocated and a freed (rule 7). */
    fx r;
    fx_build(&r, NULL);
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "4");
    oac_gb_node(r.g, "Neg", NULL, "n0", "x", "a");
    oac_gb_node(r.g, "Foo", "custom", "n1", "a", "b");
    oac_gb_node(r.g, "Neg", NULL, "n2", "x", "c");
    oac_gb_output(r.g, "c", OAC_T_FLOAT, "4");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    const oac_plan_sched *s = oac_analysis_schedule(r.a);
    ck_assert_uint_eq(s->n_steps, 3);
    ck_assert_uint_eq(s->n_live_known, 1);
    KNOWN(oac_plan_step_live(s, 0), 16);
    UNKNOWN(oac_plan_step_live(s, 1));
    UNKNOWN(oac_plan_step_live(s, 2));
    UNKNOWN(oac_analysis_plan(r.a)->peak_bytes);
    UNKNOWN(oac_analysis_plan(r.a)->planned_output_bytes);
    ck_assert_uint_eq(s->steps[1].n_free, 2);   /* a and b, read by no one after */
    fx_end(&r);
}
END_TEST

START_TEST(test_temporary_updated_in_place)
{
    /* t = Neg(cache) is a fresh buffer (256), updated in place by u; u is
     * a graph output, so t's buffer is never freed and u adds nothing. */
    fx r;
    fx_build(&r, NULL);
    oac_gb_input(r.g, "cache", OAC_T_FLOAT16, "1,2,16,4");
    oac_gb_input(r.g, "values", OAC_T_FLOAT16, "1,2,1,4");
    oac_gb_input(r.g, "position", OAC_T_INT64, "");
    oac_gb_node(r.g, "Neg", NULL, "mk", "cache", "t");
    cu_node(r.g, "upd", "t,values,position", "u", true);
    oac_gb_output(r.g, "u", OAC_T_FLOAT16, "1,2,16,4");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    const oac_memory_plan *p = oac_analysis_plan(r.a);
    KNOWN(p->planned_output_bytes, 256);
    KNOWN(p->peak_bytes, 256);
    KNOWN(p->second_cache_bytes, 0);
    KNOWN(p->persistent_cache_bytes, 0);
    const oac_plan_sched *s = oac_analysis_schedule(r.a);
    ck_assert_uint_eq(s->n_bufs, 1);
    ck_assert_int_eq(s->bufs[0].free_after, -1);
    fx_end(&r);
}
END_TEST

/* pages FLOAT16 [2,2,16,8], allowed {0, 1}; n updates chained in place,
 * the k-th with quantized_type q[k] (-1: no attribute). */
static void paged_chain(fx *r, const int64_t *q, size_t n)
{
    int32_t allowed[] = { 0, 1, 2 };
    oac_mb_quant_linear(r->mb, "INT8_PAGE", OAC_T_FLOAT16, OAC_T_INT8, 8, 1, 0.05f, 0);
    oac_mb_quant_linear(r->mb, "UINT8_PAGE", OAC_T_FLOAT16, OAC_T_UINT8, 8, 0, 0.05f, 128);
    oac_mb_quant_linear(r->mb, "INT4_PAGE", OAC_T_FLOAT16, OAC_T_INT4, 4, 1, 0.125f, 0);
    oac_vi_access(r->g, oac_gb_input_paged(r->g, "pages", OAC_T_FLOAT16, "2,2,16,8",
                                           allowed, 3), 1);
    oac_gb_input(r->g, "page_id", OAC_T_INT64, "");
    oac_gb_input(r->g, "values", OAC_T_FLOAT16, "2,2,1,8");
    oac_gb_input(r->g, "position", OAC_T_INT64, "");
    char in[96], out[32], name[32];
    const char *prev = "pages";
    static char outs[4][32];
    for (size_t k = 0; k < n; k++) {
        snprintf(in, sizeof in, "%s,page_id,values,position", prev);
        snprintf(out, sizeof out, "p%zu", k);
        snprintf(name, sizeof name, "pu%zu", k);
        Onnx__NodeProto *nd = oac_gb_node(r->g, "PagedCacheUpdate", "onnx_alias", name, in, out);
        if (q[k] >= 0)
            oac_node_attr_int(r->g, nd, "quantized_type", q[k]);
        oac_node_alias(r->g, nd, 0, 0, 1);
        snprintf(outs[k], sizeof outs[k], "%s", out);
        prev = outs[k];
    }
    oac_vi_alias_of(r->g, oac_gb_output_paged(r->g, prev, OAC_T_FLOAT16, "2,2,16,8",
                                              allowed, 3), "pages");
}

START_TEST(test_paged_workspace)
{
    /* Page: 2*2*16*8 = 512 elements; INT8/UINT8 pages 512 bytes, INT4 256.
     * The first update creates one page, live from the start (rule 5b).
     * A format change decodes the page: workspace FLOAT16[2,2,16,8] =
     * 1024 bytes; to another size it also holds the new page while it
     * runs. */
    static const struct {
        int64_t q[3]; size_t n; uint64_t ws; long at; uint64_t pages, peak;
    } cases[] = {
        { { 0 }, 1, 0, -1, 512, 512 },          /* one update, its own format */
        { { 1 }, 1, 0, -1, 512, 512 },
        { { 2 }, 1, 0, -1, 256, 256 },
        { { -1, -1 }, 2, 0, -1, 512, 512 },     /* no attribute: first allowed */
        { { 0, 0 }, 2, 0, -1, 512, 512 },
        { { 0, 1 }, 2, 1024, 1, 512, 1536 },    /* same size: in place */
        { { -1, 1 }, 2, 1024, 1, 512, 1536 },
        { { 1, -1, 0 }, 3, 1024, 2, 512, 1536 },
        { { 0, 2 }, 2, 1024, 1, 512, 512 + 256 + 1024 },  /* resized */
        { { 2, 0 }, 2, 1024, 1, 256, 256 + 512 + 1024 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        fx r;
        fx_build(&r, NULL);
        paged_chain(&r, cases[c].q, cases[c].n);
        ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
        const oac_memory_plan *p = oac_analysis_plan(r.a);
        KNOWN(p->workspace_bytes, cases[c].ws);
        KNOWN(p->peak_bytes, cases[c].peak);
        KNOWN(p->planned_output_bytes, 0);
        UNKNOWN(p->persistent_cache_bytes);   /* pages grow at run time */
        const oac_plan_sched *s = oac_analysis_schedule(r.a);
        KNOWN(s->page_bytes, cases[c].pages);
        for (size_t k = 0; k < s->n_steps; k++)
            KNOWN(oac_plan_step_extra(s, k)->workspace, (long)k == cases[c].at ? cases[c].ws : 0);
        fx_end(&r);
    }
}
END_TEST

START_TEST(test_unknown_dims_null)
{
    fx r;
    fx_build(&r, NULL);
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "N");
    oac_gb_node(r.g, "Neg", NULL, "n0", "x", "y");
    oac_gb_output(r.g, "y", OAC_T_FLOAT, "N");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    const oac_memory_plan *p = oac_analysis_plan(r.a);
    UNKNOWN(p->planned_output_bytes);
    UNKNOWN(p->peak_bytes);
    KNOWN(p->workspace_bytes, 0);
    KNOWN(p->second_cache_bytes, 0);
    fx_end(&r);

    fx_build(&r, NULL);
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "N");
    oac_gb_node(r.g, "Neg", NULL, "n0", "x", "y");
    oac_gb_output(r.g, "y", OAC_T_FLOAT, "N");
    oac_dim_binding d[] = { { "N", 10 } };
    oac_check_opts o = { .dims = d, .n_dims = 1 };
    ck_assert_int_eq(fx_check(&r, &o), OAC_OK);
    KNOWN(oac_analysis_plan(r.a)->planned_output_bytes, 40);
    KNOWN(oac_analysis_plan(r.a)->peak_bytes, 40);
    fx_end(&r);

    /* 2^40 x 2^40 floats: bytes overflow -> unknown, never wrapped. */
    fx_build(&r, NULL);
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "1099511627776,1099511627776");
    oac_gb_node(r.g, "Neg", NULL, "n0", "x", "y");
    oac_gb_output(r.g, "y", OAC_T_FLOAT, NULL);
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    UNKNOWN(oac_analysis_plan(r.a)->planned_output_bytes);
    UNKNOWN(oac_analysis_plan(r.a)->peak_bytes);
    fx_end(&r);
}
END_TEST

/* ---- the example rows ---- */

static bool mine(oac_code c)
{
    return c == OAC_TYPE_MISMATCH || c == OAC_RANK_MISMATCH ||
           c == OAC_SHAPE_MISMATCH || c == OAC_CAPACITY_OVERFLOW ||
           c == OAC_OPERAND_INVALID;
}

START_TEST(test_example_rows)
{
    for (size_t i = 0; i < oac_examples_count; i++) {
        const oac_example *ex = &oac_examples[i];
        oac_ctx *ctx = oac_ctx_new();
        uint8_t *buf = NULL;
        size_t len = 0;
        ck_assert_int_eq(oac_example_pack(ctx, ex, &buf, &len), OAC_OK);
        oac_diags *d = oac_diags_new(ctx);
        oac_model *m = NULL;
        ck_assert_int_eq(oac_model_load_buffer(ctx, &m, buf, len, ex->name, NULL, d), OAC_OK);
        oac_analysis *a = NULL;
        ck_assert_int_eq(oac_check(ctx, &a, m, NULL, d), OAC_OK);
        /* Every finding of these passes is one the row expects. */
        for (size_t k = 0; k < oac_diags_count(d); k++) {
            const oac_diag *x = oac_diags_get(d, k);
            if (!mine(x->code))
                continue;
            bool expected = false;
            for (size_t e = 0; ex->expect[e]; e++)
                expected = expected || !strcmp(ex->expect[e], oac_code_name(x->code));
            ck_assert_msg(expected, "%s: unexpected %s: %s", ex->name,
                          oac_code_name(x->code), x->message);
        }
        /* ... and every expected code of these passes is there. */
        for (size_t e = 0; ex->expect[e]; e++) {
            int c = oac_code_lookup(ex->expect[e]);
            if (c >= 0 && mine((oac_code)c))
                ck_assert_msg(oac_diags_find(d, (oac_code)c) >= 0, "%s: %s missing",
                              ex->name, ex->expect[e]);
        }
        if (!strcmp(ex->name, "toy_decoder")) {
            const oac_memory_plan *p = oac_analysis_plan(a);
            KNOWN(p->second_cache_bytes, 0);
            /* Two layers, K and V: 4 caches of FLOAT[1, heads, max_len, head_size]. */
            KNOWN(p->persistent_cache_bytes,
                  4ull * OAC_TOY_HEADS * OAC_TOY_MAX_LEN * OAC_TOY_HEAD_SIZE * 4);
        }
        if (!strcmp(ex->name, "dense_cache_implied"))
            ck_assert(!oac_analysis_plan(a)->second_cache_bytes.known ||
                      oac_analysis_plan(a)->second_cache_bytes.value > 0);
        oac_analysis_free(a);
        oac_model_free(m);
        oac_diags_free(d);
        free(buf);
        oac_ctx_free(ctx);
    }
}
END_TEST

START_TEST(test_linear_in_layers)
{
    /* A 256-layer decoder checks without trouble and its plan is known
     * (benchmarks run 2048 layers; this keeps the test short). */
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    oac_example_toy_decoder(mb, 256, true);
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_mb_pack(mb, &buf, &len), OAC_OK);
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m = NULL;
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, buf, len, "big", NULL, d), OAC_OK);
    oac_analysis *a = NULL;
    ck_assert_int_eq(oac_check(ctx, &a, m, NULL, d), OAC_OK);
    KNOWN(oac_analysis_plan(a)->persistent_cache_bytes,
          512ull * OAC_TOY_HEADS * OAC_TOY_MAX_LEN * OAC_TOY_HEAD_SIZE * 4);
    oac_analysis_free(a);
    oac_model_free(m);
    oac_diags_free(d);
    free(buf);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}
END_TEST

/* ---- the runtime measures what the plan says ---- */

/* Check and run r's model for `steps` steps; the measured peak must equal
 * the planned one (contract 4: peak_matches_plan). */
static void run_matches(fx *r, const oac_check_opts *o, uint64_t steps)
{
    ck_assert_int_eq(fx_check(r, o), OAC_OK);
    ck_assert_uint_eq(oac_diags_count_severity(r->d, OAC_SEV_ERROR), 0);
    oac_run_opts ro = { .steps = steps, .dims = o ? o->dims : NULL,
                        .n_dims = o ? o->n_dims : 0 };
    oac_execution *e = NULL;
    int rc = oac_run(r->ctx, &e, r->m, r->a, &ro, r->d);
    ck_assert_msg(rc == OAC_OK, "run: %d %s", rc, oac_errmsg(r->ctx));
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->steps_completed, steps);
    ck_assert(e->planned_peak_bytes.known);
    ck_assert_msg(e->peak_matches_plan, "measured %llu, planned %llu",
                  (unsigned long long)e->measured_peak_bytes,
                  (unsigned long long)e->planned_peak_bytes.value);
    oac_execution_free(e);
}

START_TEST(test_runtime_agrees)
{
    fx r;
    /* the chain that frees temporaries */
    fx_build(&r, NULL);
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "4");
    oac_gb_node(r.g, "Concat", NULL, "n0", "x,x,x,x", "big");
    int64_t z = 0, four = 4;
    oac_gb_init_i64(r.g, "st", "1", &z, 1);
    oac_gb_init_i64(r.g, "en", "1", &four, 1);
    oac_gb_node(r.g, "Slice", NULL, "n1", "big,st,en", "s");
    oac_gb_node(r.g, "Neg", NULL, "n2", "s", "t");
    oac_gb_node(r.g, "Concat", NULL, "n3", "t,t", "u");
    oac_gb_node(r.g, "Neg", NULL, "n4", "u", "v");
    oac_gb_output(r.g, "v", OAC_T_FLOAT, "8");
    run_matches(&r, NULL, 2);
    fx_end(&r);

    /* out of place, then in place, with --dim */
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,cap,4");
    cu_node(r.g, "u1", "cache,values,position", "a", false);
    cu_node(r.g, "u2", "a,values,position", "b", true);
    oac_gb_output(r.g, "b", OAC_T_FLOAT16, "1,2,cap,4");
    oac_dim_binding d[] = { { "cap", 8 } };
    oac_check_opts o = { .dims = d, .n_dims = 1 };
    run_matches(&r, &o, 2);
    /* a is a fresh buffer (the second cache, 128 bytes) kept as b */
    KNOWN(oac_analysis_plan(r.a)->second_cache_bytes, 128);
    KNOWN(oac_analysis_plan(r.a)->peak_bytes, 128);
    fx_end(&r);

    /* paged chain with a format change to another page size */
    fx_build(&r, NULL);
    int64_t q[] = { 0, 2 };
    paged_chain(&r, q, 2);
    run_matches(&r, NULL, 1);
    fx_end(&r);
}
END_TEST

/* ---- bodies: If, Loop, local functions (check/plan.c rules 8-10b) ---------- */

/* x [4] FLOAT; y = If(c): then Mul(Neg(x), x) (16 + 16 at Mul, the
 * product handed over), else x itself (copied: 16); z = Neg(y). */
static void if_model(fx *r)
{
    oac_gb_input(r->g, "x", OAC_T_FLOAT, "4");
    oac_gb_input(r->g, "c", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(r->g, "If", NULL, "choose", "c", "y");
    oac_gb *t = oac_node_attr_graph(r->g, n, "then_branch", "then");
    oac_gb_node(t, "Neg", NULL, "neg", "x", "t1");
    oac_gb_node(t, "Mul", NULL, "mul", "t1,x", "t2");
    oac_gb_output(t, "t2", OAC_T_FLOAT, "4");
    oac_gb *e = oac_node_attr_graph(r->g, n, "else_branch", "else");
    oac_gb_output(e, "x", OAC_T_FLOAT, "4");
    oac_gb_value_info(r->g, "y", OAC_T_FLOAT, "4");
    oac_gb_node(r->g, "Neg", NULL, "after", "y", "z");
    oac_gb_output(r->g, "z", OAC_T_FLOAT, "4");
}

START_TEST(test_if_takes_larger_branch)
{
    fx r;
    fx_build(&r, NULL);
    if_model(&r);
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    const oac_plan_sched *s = oac_analysis_schedule(r.a);
    ck_assert_uint_eq(s->n_steps, 2);
    /* y is the If's buffer (16, in live); the then branch holds 32 at its
     * peak, 16 of which become y: transient 16.  The else branch (its
     * copy, 16) is smaller. */
    KNOWN(oac_plan_step_live(s, 0), 16);
    KNOWN(oac_plan_step_extra(s, 0)->transient, 16);
    KNOWN(oac_plan_step_extra(s, 1)->transient, 0);
    KNOWN(oac_analysis_plan(r.a)->peak_bytes, 32);
    KNOWN(oac_analysis_plan(r.a)->planned_output_bytes, 32);   /* y, z */
    /* The then branch's own schedule, which the runtime's frame uses: t1
     * freed after Mul (its node 1), t2 kept (the branch output). */
    const Onnx__NodeProto *ifn = oac_model_proto(r.m)->graph->node[0];
    const Onnx__GraphProto *then_g = NULL;
    for (size_t a = 0; a < ifn->n_attribute; a++)
        if (!strcmp(ifn->attribute[a]->name, "then_branch"))
            then_g = ifn->attribute[a]->g;
    /* Schedules are by scope index (check/graph.h): find the branch's. */
    const oac_plan_sched *bs = NULL;
    for (size_t si = 0; si < r.a->graphs->n_scopes; si++)
        if (r.a->graphs->scopes[si]->graph == then_g)
            bs = oac_analysis_scope_plan(r.a, si);
    ck_assert_ptr_nonnull(bs);
    ck_assert_uint_eq(bs->n_bufs, 2);
    ck_assert_str_eq(bs->bufs[0].name, "t1");
    ck_assert_int_eq(bs->bufs[0].free_after, 1);
    ck_assert_str_eq(bs->bufs[1].name, "t2");
    ck_assert_int_eq(bs->bufs[1].free_after, -1);
    KNOWN(bs->totals.peak_bytes, 32);
    KNOWN(bs->end_live, 16);
    ck_assert_ptr_eq(oac_analysis_scope_plan(r.a, 0), s);   /* the main graph's */
    fx_end(&r);
    /* The run (c zero-filled: the else branch) measures the same here:
     * the copy of x and z. */
    fx_build(&r, NULL);
    if_model(&r);
    run_matches(&r, NULL, 2);
    fx_end(&r);
}
END_TEST

/* acc = Loop(M, , x), body: cond_out = Identity(cond_in) (1 byte),
 * acc_out = Add(acc_in, x) (16).  M an initializer (known) or an input. */
static void loop_model(fx *r, const int64_t *m)
{
    oac_gb_input(r->g, "x", OAC_T_FLOAT, "4");
    if (m)
        oac_gb_init_i64(r->g, "M", "", m, 1);
    else
        oac_gb_input(r->g, "M", OAC_T_INT64, "");
    Onnx__NodeProto *n = oac_gb_node(r->g, "Loop", NULL, "acc_loop", "M,,x", "acc");
    oac_gb *b = oac_node_attr_graph(r->g, n, "body", "body");
    oac_gb_input(b, "i", OAC_T_INT64, "");
    oac_gb_input(b, "cond_in", OAC_T_BOOL, "");
    oac_gb_input(b, "acc_in", OAC_T_FLOAT, "4");
    oac_gb_node(b, "Identity", NULL, "keep", "cond_in", "cond_out");
    oac_gb_node(b, "Add", NULL, "add", "acc_in,x", "acc_out");
    oac_gb_output(b, "cond_out", OAC_T_BOOL, "");
    oac_gb_output(b, "acc_out", OAC_T_FLOAT, "4");
    oac_gb_output(r->g, "acc", OAC_T_FLOAT, "4");
}

START_TEST(test_loop_body_transient)
{
    fx r;
    int64_t three = 3, zero = 0;
    /* Iterates: the Loop's output (16) plus its body's 17. */
    fx_build(&r, NULL);
    loop_model(&r, &three);
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    const oac_plan_sched *s = oac_analysis_schedule(r.a);
    KNOWN(oac_plan_step_live(s, 0), 16);
    KNOWN(oac_plan_step_extra(s, 0)->transient, 17);
    KNOWN(oac_analysis_plan(r.a)->peak_bytes, 33);
    ck_assert_int_eq(oac_plan_step_extra(s, 0)->loop_trip_input, OAC_PLAN_NO_INPUT);
    fx_end(&r);
    fx_build(&r, NULL);
    loop_model(&r, &three);
    run_matches(&r, NULL, 2);
    fx_end(&r);
    /* Known not to iterate: no body. */
    fx_build(&r, NULL);
    loop_model(&r, &zero);
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    KNOWN(oac_plan_step_extra(oac_analysis_schedule(r.a), 0)->transient, 0);
    KNOWN(oac_analysis_plan(r.a)->peak_bytes, 16);
    fx_end(&r);
    /* Trip count an input: the check plans the body and names the input;
     * the run (zero-filled: no iteration) plans none, and matches. */
    fx_build(&r, NULL);
    loop_model(&r, NULL);
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    s = oac_analysis_schedule(r.a);
    int64_t m_id = oac_plan_step_extra(s, 0)->loop_trip_input;
    ck_assert_int_ge(m_id, 0);
    ck_assert_str_eq(oac_graphs_value(r.a->graphs, (size_t)m_id)->name, "M");
    KNOWN(oac_analysis_plan(r.a)->peak_bytes, 33);
    /* The peak at the inputs, by that id: no body when M starts at 0,
     * the static figure (nothing left out) when it does not. */
    uint64_t peak;
    bool skipped;
    ck_assert(oac_plan_peak_at_inputs(s, starts_zero_if, &m_id, &peak, &skipped));
    ck_assert(skipped);
    ck_assert_uint_eq(peak, 16);
    int64_t other = m_id + 1;
    ck_assert(oac_plan_peak_at_inputs(s, starts_zero_if, &other, &peak, &skipped));
    ck_assert(!skipped);
    ck_assert_uint_eq(peak, 33);
    fx_end(&r);
    fx_build(&r, NULL);
    loop_model(&r, NULL);
    run_matches(&r, NULL, 1);
    fx_end(&r);
}
END_TEST

START_TEST(test_function_body_transient)
{
    /* u = F(x), F: t = Neg(a); b = Neg(t): the body peaks at 32 (t and
     * b), hands b over as u (16 in live): transient 16, peak 32. */
    fx r;
    fx_build(&r, NULL);
    oac_mb_opset(r.mb, "local", 1);
    oac_gb *f = oac_mb_function(r.mb, "local", "F", "a", "b");
    oac_gb_node(f, "Neg", NULL, "n1", "a", "t");
    oac_gb_node(f, "Neg", NULL, "n2", "t", "b");
    /* Function bodies are typed by their value_info (inference does not
     * follow calls). */
    oac_gb_value_info(f, "t", OAC_T_FLOAT, "4");
    oac_gb_value_info(f, "b", OAC_T_FLOAT, "4");
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "4");
    oac_gb_node(r.g, "F", "local", "call", "x", "u");
    oac_gb_output(r.g, "u", OAC_T_FLOAT, "4");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    const oac_plan_sched *s = oac_analysis_schedule(r.a);
    KNOWN(oac_plan_step_live(s, 0), 16);
    KNOWN(oac_plan_step_extra(s, 0)->transient, 16);
    KNOWN(oac_analysis_plan(r.a)->peak_bytes, 32);
    fx_end(&r);
    fx_build(&r, NULL);
    oac_mb_opset(r.mb, "local", 1);
    f = oac_mb_function(r.mb, "local", "F", "a", "b");
    oac_gb_node(f, "Neg", NULL, "n1", "a", "t");
    oac_gb_node(f, "Neg", NULL, "n2", "t", "b");
    /* Function bodies are typed by their value_info (inference does not
     * follow calls). */
    oac_gb_value_info(f, "t", OAC_T_FLOAT, "4");
    oac_gb_value_info(f, "b", OAC_T_FLOAT, "4");
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "4");
    oac_gb_node(r.g, "F", "local", "call", "x", "u");
    oac_gb_output(r.g, "u", OAC_T_FLOAT, "4");
    run_matches(&r, NULL, 3);
    fx_end(&r);
}
END_TEST

START_TEST(test_recursive_function_unknown)
{
    /* F calls itself: no bounded body, the peak is unknown (null), and
     * the walk ends. */
    fx r;
    fx_build(&r, NULL);
    oac_mb_opset(r.mb, "local", 1);
    oac_gb *f = oac_mb_function(r.mb, "local", "F", "a", "b");
    oac_gb_node(f, "F", "local", "again", "a", "b");
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "4");
    oac_gb_node(r.g, "F", "local", "call", "x", "u");
    oac_gb_output(r.g, "u", OAC_T_FLOAT, "4");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    UNKNOWN(oac_analysis_plan(r.a)->peak_bytes);
    fx_end(&r);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("plan");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_in_place);
    tcase_add_test(t, test_out_of_place);
    tcase_add_test(t, test_chain_frees_temporaries);
    tcase_add_test(t, test_live_unknown_from_first_unknown_buffer);
    tcase_add_test(t, test_unread_output_freed_at_producer);
    tcase_add_test(t, test_temporary_updated_in_place);
    tcase_add_test(t, test_paged_workspace);
    tcase_add_test(t, test_unknown_dims_null);
    tcase_add_test(t, test_example_rows);
    tcase_add_test(t, test_linear_in_layers);
    tcase_add_test(t, test_runtime_agrees);
    tcase_add_test(t, test_if_takes_larger_branch);
    tcase_add_test(t, test_loop_body_transient);
    tcase_add_test(t, test_function_body_transient);
    tcase_add_test(t, test_recursive_function_unknown);
    suite_add_tcase(s, t);
    return s;
}

/* check_kernel_fill.c: Range, ConstantOfShape and Trilu
 * (lib/kernels/fill.c).
 *
 * Range's elements are start + i * delta and its length ceil((limit -
 * start) / delta) (ONNX's formula), checked by hand for rising, falling
 * and empty ranges in every type it accepts; ConstantOfShape fills the
 * value attribute's type; Trilu keeps j - i >= k (upper) or <= k (lower)
 * by the definition, computed here.  Models run through oac_check and
 * oac_run; where the inputs are known integers the output's size is in
 * the plan and the peak must equal it.
 */
#include "harness.h"

#include "kernels/elem_io.h"

/* y = Range(start, limit, delta) of type t over scalar initializers. */
static void range_model(fx *f, int32_t t, double s, double l, double d)
{
    oac_gb *g = fx_build(f, NULL);
    kt_init(g, "s", t, "", &s, 1);
    kt_init(g, "l", t, "", &l, 1);
    kt_init(g, "d", t, "", &d, 1);
    oac_gb_node(g, "Range", NULL, "rg", "s,l,d", "y");
    oac_gb_output(g, "y", t, NULL);
}

START_TEST(range_every_type)
{
    const struct { int32_t t; double s, l, d; double want[6]; size_t n; } c[] = {
        { OAC_T_INT64, 0, 10, 3, { 0, 3, 6, 9 }, 4 },
        { OAC_T_INT64, 10, 0, -3, { 10, 7, 4, 1 }, 4 },
        { OAC_T_INT64, 0, 0, 1, { 0 }, 0 },
        { OAC_T_INT64, 5, 0, 1, { 0 }, 0 },            /* the wrong way: empty */
        { OAC_T_INT32, -5, 5, 2, { -5, -3, -1, 1, 3 }, 5 },
        { OAC_T_INT16, 1, 4, 1, { 1, 2, 3 }, 3 },
        { OAC_T_FLOAT, 0.5, 2.0, 0.5, { 0.5, 1, 1.5 }, 3 },
        { OAC_T_FLOAT16, 1, 2, 0.25, { 1, 1.25, 1.5, 1.75 }, 4 },
        { OAC_T_BFLOAT16, 0, -3, -1, { 0, -1, -2 }, 3 },
        /* ceil(1 / 0.3) = 4 elements. */
        { OAC_T_DOUBLE, 1, 0, -0.3, { 1, 1 - 0.3, 1 - 0.6, 1 - 0.3 * 3 }, 4 },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        fx f;
        range_model(&f, c[i].t, c[i].s, c[i].l, c[i].d);
        kt_val y;
        /* Known integer inputs size the output in the plan. */
        bool planned = !oac_ek_is_float(c[i].t);
        ck_assert_int_eq(kt_run(&f, planned, "y", &y, 1), OAC_OK);
        char d[8];
        snprintf(d, sizeof d, "%zu", c[i].n);
        kt_expect(&y, c[i].t, d, c[i].want, c[i].n, c[i].t == OAC_T_DOUBLE ? 1e-15 : 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

START_TEST(range_extreme_int64)
{
    /* limit - start overflows int64: refused, not wrapped. */
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    int64_t s = INT64_MIN, l = INT64_MAX, d = INT64_MAX;
    oac_gb_init_i64(g, "s", "", &s, 1);
    oac_gb_init_i64(g, "l", "", &l, 1);
    oac_gb_init_i64(g, "d", "", &d, 1);
    oac_gb_node(g, "Range", NULL, "rg", "s,l,d", "y");
    oac_gb_output(g, "y", OAC_T_INT64, NULL);
    kt_run_fail(&f, OAC_KERNEL_ERROR, "rg");
    fx_end(&f);
}
END_TEST

START_TEST(constant_of_shape_values)
{
    const int64_t sh[2] = { 2, 3 };
    const struct { int32_t t; double v; bool given; const char *dims; size_t rank; } c[] = {
        { OAC_T_FLOAT16, 1.5, true, "2,3", 2 },
        { OAC_T_FLOAT, 0, false, "2,3", 2 },        /* default: FLOAT 0 */
        { OAC_T_INT64, 7, true, "2,3", 2 },
        { OAC_T_BOOL, 1, true, "", 0 },             /* empty shape: a scalar */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        fx f;
        oac_gb *g = fx_build(&f, NULL);
        char d[4];
        snprintf(d, sizeof d, "%zu", c[i].rank);
        oac_gb_init_i64(g, "shape", d, sh, c[i].rank);
        Onnx__NodeProto *n = oac_gb_node(g, "ConstantOfShape", NULL, "cs", "shape", "y");
        if (c[i].given)
            oac_node_attr_tensor(g, n, "value", kt_tensor(g, "value", c[i].t, "1", &c[i].v, 1));
        oac_gb_output(g, "y", c[i].t, NULL);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        double want[6] = { c[i].v, c[i].v, c[i].v, c[i].v, c[i].v, c[i].v };
        kt_expect(&y, c[i].t, c[i].dims, want, c[i].rank ? 6 : 1, 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

/* Trilu over x [2, 3, 4] for k in -1..2, upper and lower, FLOAT16 and
 * BOOL: the definition on each of the two matrices. */
START_TEST(trilu_by_definition)
{
    static const int32_t types[] = { OAC_T_FLOAT16, OAC_T_BOOL, OAC_T_INT64 };
    double x[24];
    for (int i = 0; i < 24; i++)
        x[i] = i + 1;
    for (size_t ti = 0; ti < 3; ti++)
        for (int upper = 0; upper < 2; upper++)
            for (int64_t k = -1; k <= 2; k++) {
                int32_t t = types[ti];
                fx f;
                oac_gb *g = fx_build(&f, NULL);
                kt_init(g, "x", t, "2,3,4", x, 24);
                oac_gb_init_i64(g, "k", "", &k, 1);
                oac_node_attr_int(g, oac_gb_node(g, "Trilu", NULL, "tr", "x,k", "y"),
                                  "upper", upper);
                oac_gb_output(g, "y", t, "2,3,4");
                kt_val y;
                ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
                double want[24];
                for (int b = 0; b < 2; b++)
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 4; j++) {
                            int e = (b * 3 + i) * 4 + j;
                            bool keep = upper ? j - i >= k : j - i <= k;
                            want[e] = keep ? kt_round(t, t == OAC_T_BOOL ? 1 : x[e]) : 0;
                        }
                kt_expect(&y, t, "2,3,4", want, 24, 0);
                kt_free(&y, 1);
                fx_end(&f);
            }
}
END_TEST

/* ---- a decoder's mask, end to end ------------------------------------------- */

/* The attention mask a static-cache decoder export builds (the ONNX
 * static-scatter decoder's subgraph, rebuilt): positions w + Range(S),
 * key slots Range(16); a key is visible when it is not after the query,
 * within a window of 8 and below nonpad; then Where(visible, 0, -FLT_MAX)
 * as FLOAT16, [1, 1, S, 16].  S = 3, w = 2, nonpad = 5. */
static void mask_model(fx *f)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_mb_opset(mb, "", 24);
    const double ids[3] = { 5, 6, 7 }, zero = 0, lowest = -65504;
    kt_init(g, "input_ids", OAC_T_INT64, "1,3", ids, 3);
    int64_t w = 2, np = 5, c0 = 0, c1 = 1, c16 = 16, c8 = 8, ax0 = 0, ax1 = 1;
    oac_gb_init_i64(g, "write_indices", "1", &w, 1);
    oac_gb_init_i64(g, "nonpad", "1", &np, 1);
    oac_gb_init_i64(g, "c0", "", &c0, 1);
    oac_gb_init_i64(g, "c1", "", &c1, 1);
    oac_gb_init_i64(g, "c16", "", &c16, 1);
    oac_gb_init_i64(g, "c8", "", &c8, 1);
    oac_gb_init_i64(g, "ax0", "1", &ax0, 1);
    oac_gb_init_i64(g, "ax1", "1", &ax1, 1);
    kt_init(g, "zero", OAC_T_FLOAT16, "", &zero, 1);
    kt_init(g, "lowest", OAC_T_FLOAT16, "", &lowest, 1);
    Onnx__NodeProto *n = oac_gb_node(g, "Shape", NULL, "shape", "input_ids", "sh");
    oac_node_attr_int(g, n, "start", 1);
    oac_node_attr_int(g, n, "end", 2);
    oac_gb_node(g, "Squeeze", NULL, "sq", "sh,ax0", "S");
    oac_gb_node(g, "Range", NULL, "rq", "c0,S,c1", "rs");
    oac_gb_node(g, "Unsqueeze", NULL, "uw", "write_indices,ax0", "w1");
    oac_gb_node(g, "Unsqueeze", NULL, "ur", "rs,ax1", "rs1");
    oac_gb_node(g, "Add", NULL, "pos", "w1,rs1", "q");               /* [3, 1] */
    oac_gb_node(g, "Range", NULL, "rk", "c0,c16,c1", "k");            /* [16] */
    oac_gb_node(g, "GreaterOrEqual", NULL, "causal", "q,k", "ge");
    oac_gb_node(g, "Sub", NULL, "dist", "q,k", "d");
    oac_gb_node(g, "Less", NULL, "window", "d,c8", "lt");
    oac_gb_node(g, "And", NULL, "and1", "ge,lt", "a1");
    oac_gb_node(g, "Less", NULL, "pad", "k,nonpad", "lp");
    oac_gb_node(g, "And", NULL, "and2", "a1,lp", "vis");
    oac_gb_node(g, "Where", NULL, "where", "vis,zero,lowest", "m");
    oac_gb_node(g, "Unsqueeze", NULL, "u4", "m,ax0", "m3");
    oac_gb_node(g, "Unsqueeze", NULL, "u5", "m3,ax0", "mask");
    oac_gb_output(g, "mask", OAC_T_FLOAT16, "1,1,3,16");
}

static void mask_want(double *want)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 16; j++) {
            int q = 2 + i;
            bool vis = q >= j && q - j < 8 && j < 5;
            want[i * 16 + j] = vis ? 0 : -65504;
        }
}

START_TEST(decoder_mask_chain)
{
    fx f;
    mask_model(&f);
    kt_val y;
    ck_assert_int_eq(kt_run(&f, true, "mask", &y, 1), OAC_OK);
    double want[48];
    mask_want(want);
    kt_expect(&y, OAC_T_FLOAT16, "1,1,3,16", want, 48, 0);
    kt_free(&y, 1);
    fx_end(&f);
}
END_TEST

START_TEST(decoder_mask_every_allocation_fails)
{
    /* The nth allocation fails, for every n until the run succeeds: each
     * attempt ends with OAC_ENOMEM (ASan, valgrind: nothing leaks). */
    bool ran = false;
    unsigned long n;
    for (n = 1; n < 4000 && !ran; n++) {
        fx f;
        mask_model(&f);
        fx_load(&f);
        ck_assert_int_eq(fx_check(&f, NULL), OAC_OK);
        oac_run_opts ro = { .steps = 2 };
        oac_ctx_fail_alloc_after(f.ctx, n);
        int rc = oac_run(f.ctx, &f.e, f.m, f.a, &ro, f.d);
        oac_ctx_fail_alloc_after(f.ctx, 0);
        if (rc == OAC_OK)
            ran = true;
        else
            ck_assert_msg(rc == OAC_ENOMEM, "n=%lu: rc %d %s %s", n, rc, oac_errmsg(f.ctx),
                          diag_dump(f.d));
        fx_end(&f);
    }
    ck_assert(ran);
    ck_assert_uint_gt(n, 10);   /* the run allocates: earlier attempts failed */
}
END_TEST

/* ---- refusals -------------------------------------------------------------- */

static void range_delta(fx *f, double d)
{
    range_model(f, OAC_T_INT64, 0, 4, d);
    kt_val y;
    if (kt_run(f, false, "y", &y, 1) == OAC_OK)
        kt_free(&y, 1);
}

static void range_delta_zero(fx *f) { range_delta(f, 0); }
static void range_delta_one(fx *f) { range_delta(f, 1); }

static void cos_model(fx *f, int64_t d0)
{
    oac_gb *g = fx_build(f, NULL);
    int64_t sh[2] = { d0, 2 };
    oac_gb_init_i64(g, "shape", "2", sh, 2);
    oac_gb_node(g, "ConstantOfShape", NULL, "cs", "shape", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, NULL);
    kt_val y;
    if (kt_run(f, false, "y", &y, 1) == OAC_OK)
        kt_free(&y, 1);
}

static void cos_negative(fx *f) { cos_model(f, -2); }
static void cos_empty(fx *f) { cos_model(f, 0); }

static const scene_case fill_rows[] = {
    { "range_delta_zero", range_delta_zero, WANT(OAC_KERNEL_ERROR), "rg", NULL, NULL },
    { "range_delta_one", range_delta_one, NEAR(OAC_KERNEL_ERROR) },
    { "constant_of_shape_negative", cos_negative, WANT(OAC_KERNEL_ERROR), "cs", NULL, NULL },
    { "constant_of_shape_empty", cos_empty, NEAR(OAC_KERNEL_ERROR) },
};
CASES_TEST(fill_rows)

Suite *test_suite(void)
{
    Suite *s = suite_create("kernel_fill");
    TCase *tc = tcase_create("kernel_fill");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, range_every_type);
    tcase_add_test(tc, range_extreme_int64);
    tcase_add_test(tc, constant_of_shape_values);
    tcase_add_test(tc, trilu_by_definition);
    tcase_add_test(tc, decoder_mask_chain);
    tcase_add_test(tc, decoder_mask_every_allocation_fails);
    ADD_CASES(tc, fill_rows);
    suite_add_tcase(s, tc);
    return s;
}

/* check_kernel_scatter.c: ScatterND and ScatterElements
 * (lib/kernels/scatter.c).
 *
 * The expected outputs are ONNX's own examples (docs/Operators.md) and
 * small cases worked out by hand: rows and single elements replaced,
 * negative indices, repeated indices under add / mul / max / min.  An
 * index out of range is kernel-error and nothing is written.
 */
#include "harness.h"

#include "run/kernel_api.h"

/* data [4, 3] (1..12), indices [2, 1] = rows, updates [2, 3]. */
START_TEST(scatter_nd_rows_and_elements)
{
    static const int32_t types[] = { OAC_T_FLOAT16, OAC_T_BFLOAT16, OAC_T_INT64,
                                     OAC_T_BOOL };
    double data[12];
    for (int i = 0; i < 12; i++)
        data[i] = i + 1;
    const double upd[6] = { 0, 0, 0, 100, 101, 102 };
    for (size_t ti = 0; ti < 4; ti++) {
        int32_t t = types[ti];
        fx f;
        oac_gb *g = fx_build(&f, NULL);
        kt_init(g, "data", t, "4,3", data, 12);
        const int64_t rows[2] = { -1, 1 };        /* row 3, then row 1 */
        oac_gb_init_i64(g, "idx", "2,1", rows, 2);
        kt_init(g, "upd", t, "2,3", upd, 6);
        const int64_t cells[4] = { 0, 2, 3, 0 };  /* [0, 2] and [3, 0] */
        oac_gb_init_i64(g, "cidx", "2,2", cells, 4);
        const double cupd[2] = { 50, 60 };
        kt_init(g, "cupd", t, "2", cupd, 2);
        oac_gb_node(g, "ScatterND", NULL, "rows", "data,idx,upd", "y");
        oac_gb_node(g, "ScatterND", NULL, "cells", "data,cidx,cupd", "z");
        oac_gb_output(g, "y", t, "4,3");
        oac_gb_output(g, "z", t, "4,3");
        kt_val v[2];
        ck_assert_int_eq(kt_run(&f, true, "y,z", v, 2), OAC_OK);
        double wy[12], wz[12];
        for (int i = 0; i < 12; i++) {
            wy[i] = kt_round(t, data[i]);
            wz[i] = kt_round(t, data[i]);
        }
        for (int j = 0; j < 3; j++) {
            wy[3 * 3 + j] = kt_round(t, upd[j]);
            wy[1 * 3 + j] = kt_round(t, upd[3 + j]);
        }
        wz[0 * 3 + 2] = kt_round(t, 50);
        wz[3 * 3 + 0] = kt_round(t, 60);
        kt_expect(&v[0], t, "4,3", wy, 12, 0);
        kt_expect(&v[1], t, "4,3", wz, 12, 0);
        kt_free(v, 2);
        fx_end(&f);
    }
}
END_TEST

/* Repeated indices accumulate under a reduction (opset 18 has max, min). */
START_TEST(scatter_nd_reductions)
{
    const double data[4] = { 1, 2, 3, 4 }, upd[3] = { 5, 6, -7 };
    const int64_t idx[3] = { 1, 1, 3 };
    const struct { const char *red; double want[4]; } c[] = {
        { "add", { 1, 2 + 5 + 6, 3, 4 - 7 } },
        { "mul", { 1, 2 * 5 * 6, 3, 4 * -7 } },
        { "max", { 1, 6, 3, 4 } },
        { "min", { 1, 2, 3, -7 } },
        { "none", { 1, 6, 3, -7 } },   /* repeated: the last write stays */
    };
    static const int32_t types[] = { OAC_T_FLOAT, OAC_T_INT32, OAC_T_DOUBLE };
    for (size_t ti = 0; ti < 3; ti++)
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            int32_t t = types[ti];
            fx f;
            oac_mb *mb;
            oac_gb *g = fx_build(&f, &mb);
            oac_mb_opset(mb, "", 18);
            kt_init(g, "data", t, "4", data, 4);
            oac_gb_init_i64(g, "idx", "3,1", idx, 3);
            kt_init(g, "upd", t, "3", upd, 3);
            oac_node_attr_string(g, oac_gb_node(g, "ScatterND", NULL, "sn", "data,idx,upd",
                                                "y"), "reduction", c[i].red);
            oac_gb_output(g, "y", t, "4");
            kt_val y;
            ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
            kt_expect(&y, t, "4", c[i].want, 4, 0);
            kt_free(&y, 1);
            fx_end(&f);
        }
}
END_TEST

/* ONNX's examples of ScatterElements: axis 0, axis 1, a negative index,
 * and add with a repeated index. */
START_TEST(scatter_elements_onnx_examples)
{
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    const double zeros[9] = { 0 };
    const int64_t i0[6] = { 1, 0, 2, 0, 2, 1 };
    const double u0[6] = { 1.0, 1.1, 1.2, 2.0, 2.1, 2.2 };
    kt_init(g, "d0", OAC_T_FLOAT, "3,3", zeros, 9);
    oac_gb_init_i64(g, "i0", "2,3", i0, 6);
    kt_init(g, "u0", OAC_T_FLOAT, "2,3", u0, 6);
    oac_gb_node(g, "ScatterElements", NULL, "e0", "d0,i0,u0", "y0");
    const double d1[5] = { 1, 2, 3, 4, 5 }, u1[2] = { 1.1, 2.1 };
    const int64_t i1[2] = { 1, 3 }, i2[2] = { 1, -3 }, i3[2] = { 1, 1 };
    kt_init(g, "d1", OAC_T_FLOAT, "1,5", d1, 5);
    oac_gb_init_i64(g, "i1", "1,2", i1, 2);
    oac_gb_init_i64(g, "i2", "1,2", i2, 2);
    oac_gb_init_i64(g, "i3", "1,2", i3, 2);
    kt_init(g, "u1", OAC_T_FLOAT, "1,2", u1, 2);
    oac_node_attr_int(g, oac_gb_node(g, "ScatterElements", NULL, "e1", "d1,i1,u1", "y1"),
                      "axis", 1);
    oac_node_attr_int(g, oac_gb_node(g, "ScatterElements", NULL, "e2", "d1,i2,u1", "y2"),
                      "axis", 1);
    Onnx__NodeProto *n = oac_gb_node(g, "ScatterElements", NULL, "e3", "d1,i3,u1", "y3");
    oac_node_attr_int(g, n, "axis", 1);
    oac_node_attr_string(g, n, "reduction", "add");
    oac_gb_output(g, "y0", OAC_T_FLOAT, "3,3");
    oac_gb_output(g, "y1", OAC_T_FLOAT, "1,5");
    oac_gb_output(g, "y2", OAC_T_FLOAT, "1,5");
    oac_gb_output(g, "y3", OAC_T_FLOAT, "1,5");
    kt_val y[4];
    ck_assert_int_eq(kt_run(&f, true, "y0,y1,y2,y3", y, 4), OAC_OK);
    const double w0[9] = { 2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2 };
    const double w1[5] = { 1, 1.1, 3, 2.1, 5 }, w2[5] = { 1, 1.1, 2.1, 4, 5 };
    const double w3[5] = { 1, (double)(2.0f + 1.1f + 2.1f), 3, 4, 5 };
    kt_expect(&y[0], OAC_T_FLOAT, "3,3", w0, 9, 1e-7);
    kt_expect(&y[1], OAC_T_FLOAT, "1,5", w1, 5, 1e-7);
    kt_expect(&y[2], OAC_T_FLOAT, "1,5", w2, 5, 1e-7);
    kt_expect(&y[3], OAC_T_FLOAT, "1,5", w3, 5, 1e-6);
    kt_free(y, 4);
    fx_end(&f);
}
END_TEST

/* With output_alias 0 <- 0 (a section-6 pair) ScatterND updates a bound
 * cache in place: the rows land in the caller's storage, the output is
 * that storage (pointer identity every step) and nothing is allocated. */
START_TEST(scatter_nd_in_place)
{
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    oac_vi_access(g, oac_gb_input(g, "cache", OAC_T_FLOAT, "4,3"), 1);
    const int64_t rows[2] = { 1, 3 };
    oac_gb_init_i64(g, "idx", "2,1", rows, 2);
    const double upd[6] = { -1, -2, -3, -4, -5, -6 };
    kt_init(g, "upd", OAC_T_FLOAT, "2,3", upd, 6);
    Onnx__NodeProto *n = oac_gb_node(g, "ScatterND", NULL, "sn", "cache,idx,upd", "out");
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "out", OAC_T_FLOAT, "4,3"), "cache");
    fx_load(&f);
    float store[12];
    for (int i = 0; i < 12; i++)
        store[i] = (float)(i + 1);
    oac_binding b;
    oac_binding_init(&b, "cache", store, sizeof store, true);
    oac_binding *bl[1] = { &b };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 1 };
    oac_run_opts ro = { .steps = 2 };
    ck_assert_msg(fx_check_run(&f, NULL, 0, NULL, 0, &ro, &h) == OAC_OK, "%s",
                  diag_dump(f.d));
    for (int i = 0; i < 12; i++) {
        int r = i / 3;
        float want = r == 1 ? (float)upd[i % 3] : r == 3 ? (float)upd[3 + i % 3]
                                                        : (float)(i + 1);
        ck_assert_float_eq(store[i], want);
    }
    ck_assert_uint_eq(f.e->identity_held, 2);
    ck_assert_uint_eq(f.e->identity_checked, 2);
    for (int st = 0; st < 2; st++)
        ck_assert_uint_eq(f.e->per_step[st].alloc_calls, 0);
    fx_end(&f);
}
END_TEST

/* ---- refusals -------------------------------------------------------------- */

/* Integer input `name` [1, 1] holding v, computed at run time (a Cast of
 * FLOAT), so the checker cannot know it (its capacity rule would report
 * a known index out of range before anything runs). */
static void run_time_index(oac_gb *g, const char *name, double v)
{
    char src[32];
    snprintf(src, sizeof src, "%s_f", name);
    kt_init(g, src, OAC_T_FLOAT, "1,1", &v, 1);
    oac_node_attr_int(g, oac_gb_node(g, "Cast", NULL, NULL, src, name), "to", OAC_T_INT64);
}

static void nd_model(fx *f, int64_t row)
{
    oac_gb *g = fx_build(f, NULL);
    const double data[6] = { 1, 2, 3, 4, 5, 6 }, upd[2] = { 9, 9 };
    kt_init(g, "data", OAC_T_FLOAT, "3,2", data, 6);
    run_time_index(g, "rows", (double)row);
    kt_init(g, "upd", OAC_T_FLOAT, "1,2", upd, 2);
    oac_gb_node(g, "ScatterND", NULL, "sn", "data,rows,upd", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "3,2");
    kt_val y;
    if (kt_run(f, false, "y", &y, 1) == OAC_OK)
        kt_free(&y, 1);
}

static void nd_row_past_end(fx *f) { nd_model(f, 3); }
static void nd_row_from_end(fx *f) { nd_model(f, -3); }

static void el_model(fx *f, int64_t col)
{
    oac_gb *g = fx_build(f, NULL);
    const double data[4] = { 1, 2, 3, 4 }, upd[1] = { 9 };
    kt_init(g, "data", OAC_T_INT64, "2,2", data, 4);
    run_time_index(g, "cols", (double)col);
    kt_init(g, "upd", OAC_T_INT64, "1,1", upd, 1);
    oac_node_attr_int(g, oac_gb_node(g, "ScatterElements", NULL, "se", "data,cols,upd", "y"),
                      "axis", 1);
    oac_gb_output(g, "y", OAC_T_INT64, "2,2");
    kt_val y;
    if (kt_run(f, false, "y", &y, 1) == OAC_OK)
        kt_free(&y, 1);
}

static void el_col_before_start(fx *f) { el_model(f, -3); }
static void el_col_last(fx *f) { el_model(f, -1); }

static const scene_case scatter_rows[] = {
    { "nd_row_past_end", nd_row_past_end, WANT(OAC_KERNEL_ERROR), "sn", NULL, NULL },
    { "nd_row_from_end", nd_row_from_end, NEAR(OAC_KERNEL_ERROR) },
    { "elements_col_before_start", el_col_before_start, WANT(OAC_KERNEL_ERROR), "se", NULL,
      NULL },
    { "elements_col_last", el_col_last, NEAR(OAC_KERNEL_ERROR) },
};
CASES_TEST(scatter_rows)

Suite *test_suite(void)
{
    Suite *s = suite_create("kernel_scatter");
    TCase *tc = tcase_create("kernel_scatter");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, scatter_nd_rows_and_elements);
    tcase_add_test(tc, scatter_nd_reductions);
    tcase_add_test(tc, scatter_elements_onnx_examples);
    tcase_add_test(tc, scatter_nd_in_place);
    ADD_CASES(tc, scatter_rows);
    suite_add_tcase(s, tc);
    return s;
}

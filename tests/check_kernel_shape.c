/* check_kernel_shape.c: the data-movement kernels (lib/kernels/shape.c):
 * Split (opsets 11, 13, 18), Expand, Tile, Pad (constant, edge, reflect,
 * wrap; pads as attribute and input, axes), Slice (negative steps, opset 9
 * attributes), Concat, Gather, Squeeze, Unsqueeze, Shape (start/end),
 * Size, Transpose, Reshape.
 *
 * These kernels move elements without computing on them, so every case
 * uses 16-bit, BOOL or integer types besides FLOAT.  Expected values are
 * worked out by hand (Pad's against numpy.pad, which the ONNX reference
 * implementation calls) or by index arithmetic written here; each model
 * runs through oac_check and oac_run and its peak equals the plan, which
 * needs every output typed by its inference rule (Split's several
 * outputs included).
 */
#include "harness.h"

static const double seq12[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

/* ---- Split -------------------------------------------------------------- */

START_TEST(split_num_outputs_uneven)
{
    /* Opset 18, num_outputs 3 over 7 rows: ceil(7 / 3) = 3, 3, 1. */
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_mb_opset(mb, "", 18);
    kt_init(g, "x", OAC_T_FLOAT16, "7,1", seq12, 7);
    oac_node_attr_int(g, oac_gb_node(g, "Split", NULL, "sp", "x", "y0,y1,y2"),
                      "num_outputs", 3);
    for (int i = 0; i < 3; i++) {
        char n[4] = { 'y', (char)('0' + i), 0 };
        oac_gb_output(g, n, OAC_T_FLOAT16, NULL);
    }
    kt_val y[3];
    ck_assert_int_eq(kt_run(&f, true, "y0,y1,y2", y, 3), OAC_OK);
    const double w0[3] = { 1, 2, 3 }, w1[3] = { 4, 5, 6 }, w2[1] = { 7 };
    kt_expect(&y[0], OAC_T_FLOAT16, "3,1", w0, 3, 0);
    kt_expect(&y[1], OAC_T_FLOAT16, "3,1", w1, 3, 0);
    kt_expect(&y[2], OAC_T_FLOAT16, "1,1", w2, 1, 0);
    kt_free(y, 3);
    fx_end(&f);
}
END_TEST

START_TEST(split_sizes_input_and_attribute)
{
    /* x [2, 3] split on axis -1 into [1, 2]: opset 13 takes the sizes as
     * input 1, opset 11 as an attribute. */
    for (int old = 0; old < 2; old++) {
        fx f;
        oac_mb *mb;
        oac_gb *g = fx_build(&f, &mb);
        oac_mb_opset(mb, "", old ? 11 : 13);
        kt_init(g, "x", OAC_T_INT64, "2,3", seq12, 6);
        int64_t sizes[2] = { 1, 2 };
        Onnx__NodeProto *n;
        if (old) {
            n = oac_gb_node(g, "Split", NULL, "sp", "x", "a,b");
            oac_node_attr_ints(g, n, "split", sizes, 2);
        } else {
            oac_gb_init_i64(g, "s", "2", sizes, 2);
            n = oac_gb_node(g, "Split", NULL, "sp", "x,s", "a,b");
        }
        oac_node_attr_int(g, n, "axis", -1);
        oac_gb_output(g, "a", OAC_T_INT64, NULL);
        oac_gb_output(g, "b", OAC_T_INT64, NULL);
        kt_val y[2];
        ck_assert_int_eq(kt_run(&f, true, "a,b", y, 2), OAC_OK);
        const double wa[2] = { 1, 4 }, wb[4] = { 2, 3, 5, 6 };
        kt_expect(&y[0], OAC_T_INT64, "2,1", wa, 2, 0);
        kt_expect(&y[1], OAC_T_INT64, "2,2", wb, 4, 0);
        kt_free(y, 2);
        fx_end(&f);
    }
}
END_TEST

START_TEST(split_omitted_output)
{
    /* The middle output is not wanted (an empty name): the others are
     * still right and nothing is allocated for it (peak = plan). */
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    kt_init(g, "x", OAC_T_BFLOAT16, "6", seq12, 6);
    oac_gb_node(g, "Split", NULL, "sp", "x", "a,,c");
    oac_gb_output(g, "a", OAC_T_BFLOAT16, NULL);
    oac_gb_output(g, "c", OAC_T_BFLOAT16, NULL);
    kt_val y[2];
    ck_assert_int_eq(kt_run(&f, true, "a,c", y, 2), OAC_OK);
    const double wa[2] = { 1, 2 }, wc[2] = { 5, 6 };
    kt_expect(&y[0], OAC_T_BFLOAT16, "2", wa, 2, 0);
    kt_expect(&y[1], OAC_T_BFLOAT16, "2", wc, 2, 0);
    kt_free(y, 2);
    fx_end(&f);
}
END_TEST

/* ---- Expand, Tile ------------------------------------------------------- */

START_TEST(expand_broadcasts)
{
    /* x [3, 1] to [2, 1, 4]: y[i, j, k] = x[j]; a shorter shape [1] keeps x. */
    const double x[3] = { 1, 0, 1 };
    const struct { const char *dshape; int64_t shape[3]; size_t n; const char *dy; } c[] = {
        { "3", { 2, 1, 4 }, 3, "2,3,4" }, { "1", { 1 }, 1, "3,1" },
    };
    for (int i = 0; i < 2; i++) {
        fx f;
        oac_gb *g = fx_build(&f, NULL);
        kt_init(g, "x", OAC_T_BOOL, "3,1", x, 3);
        oac_gb_init_i64(g, "s", c[i].dshape, c[i].shape, c[i].n);
        oac_gb_node(g, "Expand", NULL, "ex", "x,s", "y");
        oac_gb_output(g, "y", OAC_T_BOOL, NULL);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        double want[24];
        size_t n = i ? 3 : 24;
        for (size_t e = 0; e < n; e++)
            want[e] = x[i ? e : (e / 4) % 3];
        kt_expect(&y, OAC_T_BOOL, c[i].dy, want, n, 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

START_TEST(tile_repeats)
{
    /* x [2, 3] tiled [2, 2]: y[i, j] = x[i % 2, j % 3]. */
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    kt_init(g, "x", OAC_T_FLOAT16, "2,3", seq12, 6);
    int64_t r[2] = { 2, 2 };
    oac_gb_init_i64(g, "r", "2", r, 2);
    oac_gb_node(g, "Tile", NULL, "tl", "x,r", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT16, NULL);
    kt_val y;
    ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
    double want[24];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++)
            want[i * 6 + j] = seq12[(i % 2) * 3 + j % 3];
    kt_expect(&y, OAC_T_FLOAT16, "4,6", want, 24, 0);
    kt_free(&y, 1);
    fx_end(&f);
}
END_TEST

/* ---- Pad ---------------------------------------------------------------- */

/* x = [1, 2, 3] padded: numpy.pad's answers (the ONNX reference calls it). */
START_TEST(pad_modes_1d)
{
    const double x[3] = { 1, 2, 3 };
    const struct { const char *mode; int64_t pads[2]; double want[12]; size_t n; } c[] = {
        { "constant", { 2, 1 }, { 9, 9, 1, 2, 3, 9 }, 6 },
        { "edge", { 2, 1 }, { 1, 1, 1, 2, 3, 3 }, 6 },
        { "reflect", { 2, 2 }, { 3, 2, 1, 2, 3, 2, 1 }, 7 },
        { "reflect", { 4, 0 }, { 1, 2, 3, 2, 1, 2, 3 }, 7 },   /* past one period */
        { "wrap", { 5, 4 }, { 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1 }, 12 },
        { "constant", { -1, 1 }, { 2, 3, 9 }, 3 },             /* crop, then pad */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        fx f;
        oac_gb *g = fx_build(&f, NULL);
        kt_init(g, "x", OAC_T_INT32, "3", x, 3);
        oac_gb_init_i64(g, "p", "2", c[i].pads, 2);
        const double nine = 9;
        kt_init(g, "v", OAC_T_INT32, "", &nine, 1);
        oac_node_attr_string(g, oac_gb_node(g, "Pad", NULL, "pd", "x,p,v", "y"), "mode",
                             c[i].mode);
        oac_gb_output(g, "y", OAC_T_INT32, NULL);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        char d[8];
        snprintf(d, sizeof d, "%zu", c[i].n);
        kt_expect(&y, OAC_T_INT32, d, c[i].want, c[i].n, 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

START_TEST(pad_axes_and_old_attribute)
{
    /* Opset 18: axes [-1] with pads [1, 0] pads only the last dim; opset 2:
     * pads and value as attributes (value 0.5). */
    for (int old = 0; old < 2; old++) {
        fx f;
        oac_mb *mb;
        oac_gb *g = fx_build(&f, &mb);
        oac_mb_opset(mb, "", old ? 2 : 18);
        kt_init(g, "x", OAC_T_FLOAT16, "2,2", seq12, 4);
        Onnx__NodeProto *n;
        if (old) {
            int64_t pads[4] = { 0, 1, 0, 0 };
            n = oac_gb_node(g, "Pad", NULL, "pd", "x", "y");
            oac_node_attr_ints(g, n, "pads", pads, 4);
            oac_node_attr_float(g, n, "value", 0.5f);
        } else {
            int64_t pads[2] = { 1, 0 }, axes[1] = { -1 };
            oac_gb_init_i64(g, "p", "2", pads, 2);
            oac_gb_init_i64(g, "a", "1", axes, 1);
            n = oac_gb_node(g, "Pad", NULL, "pd", "x,p,,a", "y");
        }
        oac_gb_output(g, "y", OAC_T_FLOAT16, NULL);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        double fill = old ? 0.5 : 0;
        const double want[6] = { fill, 1, 2, fill, 3, 4 };
        kt_expect(&y, OAC_T_FLOAT16, "2,3", want, 6, 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

/* ---- Slice, Concat, Gather, Transpose ------------------------------------ */

START_TEST(slice_steps_any_type)
{
    /* x [3, 4]: rows 2..0 backwards (step -1), columns 3, 1 (step -2);
     * then opset 9's attribute form: rows 1.., columns 0..2. */
    for (int old = 0; old < 2; old++) {
        fx f;
        oac_mb *mb;
        oac_gb *g = fx_build(&f, &mb);
        oac_mb_opset(mb, "", old ? 9 : 13);
        kt_init(g, "x", OAC_T_BFLOAT16, "3,4", seq12, 12);
        Onnx__NodeProto *n;
        if (old) {
            int64_t st[2] = { 1, 0 }, en[2] = { 100, 2 };
            n = oac_gb_node(g, "Slice", NULL, "sl", "x", "y");
            oac_node_attr_ints(g, n, "starts", st, 2);
            oac_node_attr_ints(g, n, "ends", en, 2);
        } else {
            int64_t st[2] = { -1, 3 }, en[2] = { INT64_MIN, 0 }, sp[2] = { -1, -2 };
            oac_gb_init_i64(g, "st", "2", st, 2);
            oac_gb_init_i64(g, "en", "2", en, 2);
            oac_gb_init_i64(g, "sp", "2", sp, 2);
            oac_gb_node(g, "Slice", NULL, "sl", "x,st,en,,sp", "y");
        }
        oac_gb_output(g, "y", OAC_T_BFLOAT16, NULL);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        if (old) {
            const double want[4] = { 5, 6, 9, 10 };
            kt_expect(&y, OAC_T_BFLOAT16, "2,2", want, 4, 0);
        } else {
            const double want[6] = { 12, 10, 8, 6, 4, 2 };
            kt_expect(&y, OAC_T_BFLOAT16, "3,2", want, 6, 0);
        }
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

START_TEST(concat_gather_transpose_f16)
{
    /* t = Transpose(x [2, 3]) = [[1,4],[2,5],[3,6]]; g = Gather(t, [-1, 0])
     * = [[3,6],[1,4]]; y = Concat(g, t) on axis 0. */
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    kt_init(g, "x", OAC_T_FLOAT16, "2,3", seq12, 6);
    const int64_t idx[2] = { -1, 0 };
    oac_gb_init_i64(g, "i", "2", idx, 2);
    oac_gb_node(g, "Transpose", NULL, "tr", "x", "t");
    oac_gb_node(g, "Gather", NULL, "ga", "t,i", "gt");
    oac_node_attr_int(g, oac_gb_node(g, "Concat", NULL, "cc", "gt,t", "y"), "axis", -2);
    oac_gb_output(g, "y", OAC_T_FLOAT16, NULL);
    kt_val y;
    ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
    const double want[10] = { 3, 6, 1, 4, 1, 4, 2, 5, 3, 6 };
    kt_expect(&y, OAC_T_FLOAT16, "5,2", want, 10, 0);
    kt_free(&y, 1);
    fx_end(&f);
}
END_TEST

/* ---- Reshape, Squeeze, Unsqueeze, Shape, Size ----------------------------- */

START_TEST(shape_family)
{
    /* x [2, 3, 1] BOOL: Reshape [0, -1] -> [2, 3]; Unsqueeze [-1] ->
     * [2, 3, 1]; Squeeze [2] -> [2, 3]; Shape start -2 of x -> [3, 1];
     * Size -> 6. */
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    const double bits[6] = { 1, 0, 1, 1, 0, 0 };
    kt_init(g, "x", OAC_T_BOOL, "2,3,1", bits, 6);
    const int64_t sh[2] = { 0, -1 }, ua[1] = { -1 }, sa[1] = { 2 };
    oac_gb_init_i64(g, "sh", "2", sh, 2);
    oac_gb_init_i64(g, "ua", "1", ua, 1);
    oac_gb_init_i64(g, "sa", "1", sa, 1);
    oac_gb_node(g, "Reshape", NULL, "rs", "x,sh", "r");
    oac_gb_node(g, "Unsqueeze", NULL, "us", "r,ua", "u");
    oac_gb_node(g, "Squeeze", NULL, "sq", "u,sa", "s");
    oac_node_attr_int(g, oac_gb_node(g, "Shape", NULL, "shp", "x", "d"), "start", -2);
    oac_gb_node(g, "Size", NULL, "sz", "x", "n");
    oac_gb_output(g, "s", OAC_T_BOOL, NULL);
    oac_gb_output(g, "d", OAC_T_INT64, NULL);
    oac_gb_output(g, "n", OAC_T_INT64, NULL);
    kt_val y[3];
    ck_assert_int_eq(kt_run(&f, true, "s,d,n", y, 3), OAC_OK);
    const double d[2] = { 3, 1 }, n[1] = { 6 };
    kt_expect(&y[0], OAC_T_BOOL, "2,3", bits, 6, 0);
    kt_expect(&y[1], OAC_T_INT64, "2", d, 2, 0);
    kt_expect(&y[2], OAC_T_INT64, "", n, 1, 0);
    kt_free(y, 3);
    fx_end(&f);
}
END_TEST

/* ---- refusals -------------------------------------------------------------- */

static void tile_model(fx *f, int64_t r0)
{
    oac_gb *g = fx_build(f, NULL);
    kt_init(g, "x", OAC_T_FLOAT, "2,3", seq12, 6);
    int64_t r[2] = { r0, 1 };
    oac_gb_init_i64(g, "reps", "2", r, 2);
    oac_gb_node(g, "Tile", NULL, "tl", "x,reps", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, NULL);
    kt_val y;
    if (kt_run(f, false, "y", &y, 1) == OAC_OK)
        kt_free(&y, 1);
}

static void tile_negative(fx *f) { tile_model(f, -1); }
static void tile_zero(fx *f) { tile_model(f, 0); }

static void split_model(fx *f, int64_t s1)
{
    oac_gb *g = fx_build(f, NULL);
    kt_init(g, "x", OAC_T_FLOAT, "6", seq12, 6);
    int64_t s[2] = { 2, s1 };
    oac_gb_init_i64(g, "sizes", "2", s, 2);
    oac_gb_node(g, "Split", NULL, "sp", "x,sizes", "a,b");
    oac_gb_output(g, "a", OAC_T_FLOAT, NULL);
    oac_gb_output(g, "b", OAC_T_FLOAT, NULL);
    kt_val y[2];
    if (kt_run(f, false, "a,b", y, 2) == OAC_OK)
        kt_free(y, 2);
}

static void split_short(fx *f) { split_model(f, 3); }
static void split_exact(fx *f) { split_model(f, 4); }

static void expand_model(fx *f, int64_t d)
{
    oac_gb *g = fx_build(f, NULL);
    kt_init(g, "x", OAC_T_FLOAT, "2,3", seq12, 6);
    int64_t s[2] = { d, 3 };
    oac_gb_init_i64(g, "shape", "2", s, 2);
    oac_gb_node(g, "Expand", NULL, "ex", "x,shape", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, NULL);
    kt_val y;
    if (kt_run(f, false, "y", &y, 1) == OAC_OK)
        kt_free(&y, 1);
}

static void expand_clash(fx *f) { expand_model(f, 4); }
static void expand_fits(fx *f) { expand_model(f, 1); }

static void reflect_model(fx *f, const char *dims)
{
    oac_gb *g = fx_build(f, NULL);
    kt_init(g, "x", OAC_T_FLOAT, dims, seq12, dims[0] == '0' ? 0 : 2);
    int64_t p[4] = { 1, 0, 0, 0 };   /* one row before, on axis 0 */
    oac_gb_init_i64(g, "pads", "4", p, 4);
    oac_node_attr_string(g, oac_gb_node(g, "Pad", NULL, "pd", "x,pads", "y"), "mode", "edge");
    oac_gb_output(g, "y", OAC_T_FLOAT, NULL);
    kt_val y;
    if (kt_run(f, false, "y", &y, 1) == OAC_OK)
        kt_free(&y, 1);
}

static void edge_of_nothing(fx *f) { reflect_model(f, "0,2"); }
static void edge_of_two(fx *f) { reflect_model(f, "1,2"); }

static const scene_case shape_rows[] = {
    { "tile_negative", tile_negative, WANT(OAC_KERNEL_ERROR), "tl", NULL, NULL },
    { "tile_zero", tile_zero, NEAR(OAC_KERNEL_ERROR) },
    { "split_short", split_short, WANT(OAC_KERNEL_ERROR), "sp", NULL, NULL },
    { "split_exact", split_exact, NEAR(OAC_KERNEL_ERROR) },
    { "expand_clash", expand_clash, WANT(OAC_KERNEL_ERROR), "ex", NULL, NULL },
    { "expand_fits", expand_fits, NEAR(OAC_KERNEL_ERROR) },
    { "edge_of_nothing", edge_of_nothing, WANT(OAC_KERNEL_ERROR), "pd", NULL, NULL },
    { "edge_of_two", edge_of_two, NEAR(OAC_KERNEL_ERROR) },
};
CASES_TEST(shape_rows)

START_TEST(sub_byte_type_named)
{
    /* INT4 elements are not whole bytes: a move refuses them by name. */
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    const uint8_t packed[2] = { 0x21, 0x43 };
    oac_gb_init_raw(g, "x", OAC_T_INT4, "4", packed, 2);
    oac_gb_node(g, "Transpose", NULL, "tr", "x", "y");
    oac_gb_output(g, "y", OAC_T_INT4, NULL);
    kt_run_fail(&f, OAC_UNSUPPORTED_OPERATOR, "tr");
    ck_assert_ptr_nonnull(strstr(diag_find(f.d, OAC_UNSUPPORTED_OPERATOR, NULL, NULL,
                                           NULL)->message, "INT4"));
    fx_end(&f);
}
END_TEST

/* Values a hostile model can hold: shapes whose element count overflows,
 * pads and indices at the ends of int64.  Each is kernel-error at its
 * node, before anything is allocated (ASan and valgrind see no access
 * out of bounds). */
START_TEST(hostile_values_refused)
{
    const int64_t big[3] = { (int64_t)1 << 40, (int64_t)1 << 40, (int64_t)1 << 40 };
    const int64_t huge_pads[2] = { INT64_MIN, INT64_MAX };
    const int64_t reps[2] = { INT64_MAX, 2 };
    const int64_t far[1] = { INT64_MIN };
    for (int c = 0; c < 5; c++) {
        fx f;
        oac_gb *g = fx_build(&f, NULL);
        kt_init(g, "x", OAC_T_FLOAT, "2,3", seq12, 6);
        const char *node = NULL;
        switch (c) {
        case 0:
            oac_gb_init_i64(g, "s", "3", big, 3);
            oac_gb_node(g, "ConstantOfShape", NULL, node = "cs", "s", "y");
            break;
        case 1:
            oac_gb_init_i64(g, "s", "3", big, 3);
            oac_gb_node(g, "Expand", NULL, node = "ex", "x,s", "y");
            break;
        case 2:
            oac_gb_init_i64(g, "r", "2", reps, 2);
            oac_gb_node(g, "Tile", NULL, node = "tl", "x,r", "y");
            break;
        case 3: {
            int64_t p[4] = { 0, huge_pads[0], 0, huge_pads[1] };
            oac_gb_init_i64(g, "p", "4", p, 4);
            oac_gb_node(g, "Pad", NULL, node = "pd", "x,p", "y");
            break;
        }
        default:
            oac_gb_init_i64(g, "i", "1", far, 1);
            oac_gb_node(g, "Gather", NULL, node = "ga", "x,i", "y");
            break;
        }
        oac_gb_output(g, "y", OAC_T_FLOAT, NULL);
        kt_run_fail(&f, OAC_KERNEL_ERROR, node);
        fx_end(&f);
    }
}
END_TEST

/* A tensor with no element may have dims whose product overflows int64
 * ([0, 2^62, 4]: only the total, 0, is checked).  Each kernel gives the
 * empty result without computing a stride or count that overflows
 * (UBSan in the sanitizer build) and without walking a long empty batch. */
START_TEST(empty_tensor_with_huge_dims)
{
    const struct { const char *op; const char *extra; const char *dims; } c[] = {
        { "Add", "b", "0,4611686018427387904,4" },
        /* [4, 2^62, 0] is refused: the runtime's tensors count their
         * elements left to right (4 * 2^62 overflows). */
        { "Transpose", NULL, NULL },
        { "Slice", "st,en,ax2", "0,4611686018427387904,2" },
        { "Softmax", NULL, "0,4611686018427387904,4" },
        { "ReduceSum", "ax1", "0,1,4" },
        { "Tile", "rep", "0,4611686018427387904,8" },
        { "Trilu", NULL, "0,4611686018427387904,4" },
        { "MatMul", "w", "0,4611686018427387904,3" },
        { "Pad", "pads", "0,4611686018427387904,6" },
        { "Where", NULL, "0,4611686018427387904,4" },
        { "Expand", "one", "0,4611686018427387904,4" },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        fx f;
        oac_gb *g = fx_build(&f, NULL);
        oac_gb_init_raw(g, "x", OAC_T_FLOAT, "0,4611686018427387904,4", NULL, 0);
        const double b[4] = { 1, 2, 3, 4 }, w[12] = { 0 }, one = 1;
        kt_init(g, "b", OAC_T_FLOAT, "4", b, 4);
        kt_init(g, "w", OAC_T_FLOAT, "4,3", w, 12);
        kt_init(g, "c", OAC_T_BOOL, "1", &one, 1);
        kt_init(g, "z", OAC_T_FLOAT, "1", &one, 1);
        const int64_t st = 1, en = 3, ax2 = 2, ax1 = 1, rep[3] = { 1, 1, 2 },
                      pads[6] = { 0, 0, 1, 0, 0, 1 }, one64 = 1;
        oac_gb_init_i64(g, "st", "1", &st, 1);
        oac_gb_init_i64(g, "en", "1", &en, 1);
        oac_gb_init_i64(g, "ax2", "1", &ax2, 1);
        oac_gb_init_i64(g, "ax1", "1", &ax1, 1);
        oac_gb_init_i64(g, "rep", "3", rep, 3);
        oac_gb_init_i64(g, "pads", "6", pads, 6);
        oac_gb_init_i64(g, "one", "1", &one64, 1);
        char ins[32];
        if (!strcmp(c[i].op, "Where"))
            snprintf(ins, sizeof ins, "c,x,z");
        else
            snprintf(ins, sizeof ins, "x%s%s", c[i].extra ? "," : "",
                     c[i].extra ? c[i].extra : "");
        Onnx__NodeProto *n = oac_gb_node(g, c[i].op, NULL, "n", ins, "y");
        if (!strcmp(c[i].op, "Softmax"))
            oac_node_attr_int(g, n, "axis", 0);
        oac_gb_output(g, "y", OAC_T_FLOAT, NULL);
        if (!c[i].dims) {
            kt_run_fail(&f, OAC_KERNEL_ERROR, "n");
            fx_end(&f);
            continue;
        }
        kt_val y;
        ck_assert_msg(kt_run(&f, false, "y", &y, 1) == OAC_OK, "%s: %s", c[i].op,
                      diag_dump(f.d));
        kt_expect(&y, OAC_T_FLOAT, c[i].dims, NULL, 0, 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("kernel_shape");
    TCase *tc = tcase_create("kernel_shape");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, split_num_outputs_uneven);
    tcase_add_test(tc, split_sizes_input_and_attribute);
    tcase_add_test(tc, split_omitted_output);
    tcase_add_test(tc, expand_broadcasts);
    tcase_add_test(tc, tile_repeats);
    tcase_add_test(tc, pad_modes_1d);
    tcase_add_test(tc, pad_axes_and_old_attribute);
    tcase_add_test(tc, slice_steps_any_type);
    tcase_add_test(tc, concat_gather_transpose_f16);
    tcase_add_test(tc, shape_family);
    tcase_add_test(tc, sub_byte_type_named);
    tcase_add_test(tc, hostile_values_refused);
    tcase_add_test(tc, empty_tensor_with_huge_dims);
    ADD_CASES(tc, shape_rows);
    suite_add_tcase(s, tc);
    return s;
}

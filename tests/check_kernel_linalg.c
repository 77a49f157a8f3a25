/* check_kernel_linalg.c: MatMul, Gemm, Softmax and the reductions
 * (lib/kernels/linalg.c; contract section 8).
 *
 * Each runs in a builder-made one-node model through oac_check and
 * oac_run (the measured peak must equal the plan), per element type it
 * accepts, against a plain implementation written here: explicit loops
 * over multi-indices in double, rounded once like a store (kt_round).
 * A FLOAT16 MatMul + Add + Softmax chain runs several steps end to end
 * with its peak equal to the plan.
 */
#include <math.h>

#include "harness.h"

#include "kernels/elem_io.h"

static const int32_t mm_types[] = { OAC_T_FLOAT, OAC_T_FLOAT16, OAC_T_BFLOAT16,
                                    OAC_T_DOUBLE, OAC_T_INT32, OAC_T_INT64 };

/* Values exact in every type above: small multiples of 1/4 (integers for
 * the integer types). */
static double val(int32_t t, int i)
{
    double v = (double)((i * 7) % 11 - 5);
    return oac_ek_is_float(t) ? v / 4 : v;
}

static double tol_of(int32_t t)
{
    return t == OAC_T_FLOAT ? 1e-6 : t == OAC_T_DOUBLE ? 1e-14 : 0;
}

/* ---- MatMul ------------------------------------------------------------ */

/* A [2, 1, 2, 3] x B [3, 3, 2]: batch dims [2, 1] and [3] broadcast to
 * [2, 3]; each [2, 3] x [3, 2] product by the definition. */
START_TEST(matmul_broadcast_batches_every_type)
{
    for (size_t ti = 0; ti < sizeof mm_types / sizeof mm_types[0]; ti++) {
        int32_t t = mm_types[ti];
        double a[12], b[18];
        for (int i = 0; i < 12; i++)
            a[i] = val(t, i);
        for (int i = 0; i < 18; i++)
            b[i] = val(t, i + 3);
        fx f;
        oac_gb *g = fx_build(&f, NULL);
        kt_init(g, "a", t, "2,1,2,3", a, 12);
        kt_init(g, "b", t, "3,3,2", b, 18);
        oac_gb_node(g, "MatMul", NULL, "mm", "a,b", "y");
        oac_gb_output(g, "y", t, "2,3,2,2");
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        double want[24];
        for (int p = 0; p < 2; p++)          /* a's batch (its dim 1 is 1) */
            for (int q = 0; q < 3; q++)      /* b's batch */
                for (int i = 0; i < 2; i++)
                    for (int j = 0; j < 2; j++) {
                        double s = 0;
                        for (int r = 0; r < 3; r++)
                            s += a[(p * 2 + i) * 3 + r] * b[(q * 3 + r) * 2 + j];
                        want[((p * 3 + q) * 2 + i) * 2 + j] = kt_round(t, s);
                    }
        kt_expect(&y, t, "2,3,2,2", want, 24, tol_of(t));
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

/* Rank-1 operands are promoted and the added dim dropped (numpy). */
START_TEST(matmul_vectors)
{
    const double v[3] = { 1, 2, 3 }, m[6] = { 1, 0, 0, 1, 1, 1 };
    const struct { const char *da, *db, *dy; const double *a, *b; int na, nb;
                   double want[2]; int n; } c[] = {
        { "3", "3,2", "2", v, m, 3, 6, { 1 + 3, 2 + 3 }, 2 },
        { "2,3", "3", "2", m, v, 6, 3, { 1, 1 + 2 + 3 }, 2 },  /* rows [1,0,0] [1,1,1] */
        { "3", "3", "", v, v, 3, 3, { 14 }, 1 },
    };
    for (size_t i = 0; i < 3; i++) {
        fx f;
        oac_gb *g = fx_build(&f, NULL);
        kt_init(g, "a", OAC_T_FLOAT16, c[i].da, c[i].a, (size_t)c[i].na);
        kt_init(g, "b", OAC_T_FLOAT16, c[i].db, c[i].b, (size_t)c[i].nb);
        oac_gb_node(g, "MatMul", NULL, "mm", "a,b", "y");
        oac_gb_output(g, "y", OAC_T_FLOAT16, c[i].dy);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        kt_expect(&y, OAC_T_FLOAT16, c[i].dy, c[i].want, (size_t)c[i].n, 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

/* ---- Gemm --------------------------------------------------------------- */

START_TEST(gemm_transposes_and_c)
{
    /* A' [2, 3], B' [3, 2], C in three shapes; alpha 0.5, beta 2. */
    const double a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 1, -1, 2, 0, 0, 3 };
    const struct { const char *dc; double c[4]; int nc; } cs[] = {
        { "2", { 1, -1 }, 2 }, { "2,1", { 10, 20 }, 2 }, { "", { 3 }, 1 },
    };
    static const int32_t types[] = { OAC_T_FLOAT, OAC_T_FLOAT16, OAC_T_DOUBLE };
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (size_t ci = 0; ci < 3; ci++)
                for (size_t ti = 0; ti < 3; ti++) {
                    int32_t t = types[ti];
                    /* Store A (or A^T) and B (or B^T) so that A' = a, B' = b. */
                    double as[6], bs[6];
                    for (int i = 0; i < 2; i++)
                        for (int r = 0; r < 3; r++)
                            as[ta ? r * 2 + i : i * 3 + r] = a[i * 3 + r];
                    for (int r = 0; r < 3; r++)
                        for (int j = 0; j < 2; j++)
                            bs[tb ? j * 3 + r : r * 2 + j] = b[r * 2 + j];
                    fx f;
                    oac_gb *g = fx_build(&f, NULL);
                    kt_init(g, "a", t, ta ? "3,2" : "2,3", as, 6);
                    kt_init(g, "b", t, tb ? "2,3" : "3,2", bs, 6);
                    kt_init(g, "c", t, cs[ci].dc, cs[ci].c, (size_t)cs[ci].nc);
                    Onnx__NodeProto *n = oac_gb_node(g, "Gemm", NULL, "gm", "a,b,c", "y");
                    oac_node_attr_int(g, n, "transA", ta);
                    oac_node_attr_int(g, n, "transB", tb);
                    oac_node_attr_float(g, n, "alpha", 0.5f);
                    oac_node_attr_float(g, n, "beta", 2.0f);
                    oac_gb_output(g, "y", t, "2,2");
                    kt_val y;
                    ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
                    double want[4];
                    for (int i = 0; i < 2; i++)
                        for (int j = 0; j < 2; j++) {
                            double s = 0;
                            for (int r = 0; r < 3; r++)
                                s += a[i * 3 + r] * b[r * 2 + j];
                            double cv = ci == 0 ? cs[0].c[j] : ci == 1 ? cs[1].c[i] : 3;
                            want[i * 2 + j] = kt_round(t, 0.5 * s + 2 * cv);
                        }
                    kt_expect(&y, t, "2,2", want, 4, 0);
                    kt_free(&y, 1);
                    fx_end(&f);
                }
}
END_TEST

/* ---- Softmax -------------------------------------------------------------- */

/* Softmax of x [2, 3, 2] over `axis` by the definition: for every other
 * index, exp(x - max) / sum over the axis. */
static void ref_softmax(const double *x, int axis, double *y)
{
    const int d[3] = { 2, 3, 2 }, st[3] = { 6, 2, 1 };
    for (int e = 0; e < 12; e++) {
        int idx[3] = { e / 6, (e / 2) % 3, e % 2 };
        double mx = -INFINITY, s = 0;
        for (int k = 0; k < d[axis]; k++) {
            int o = e + (k - idx[axis]) * st[axis];
            mx = fmax(mx, x[o]);
        }
        for (int k = 0; k < d[axis]; k++)
            s += exp(x[e + (k - idx[axis]) * st[axis]] - mx);
        y[e] = exp(x[e] - mx) / s;
    }
}

START_TEST(softmax_any_axis)
{
    double x[12];
    for (int i = 0; i < 12; i++)
        x[i] = (double)((i * 5) % 7) - 3 + (i == 4 ? 1000 : 0);   /* one huge value */
    static const int32_t types[] = { OAC_T_FLOAT, OAC_T_FLOAT16, OAC_T_BFLOAT16,
                                     OAC_T_DOUBLE };
    const int axes[] = { 0, 1, 2, -1, -3 };
    for (size_t ti = 0; ti < 4; ti++)
        for (size_t ai = 0; ai < 5; ai++) {
            int32_t t = types[ti];
            double xs[12], want[12];
            for (int i = 0; i < 12; i++)
                xs[i] = kt_round(t, x[i]);
            int ax = axes[ai] < 0 ? axes[ai] + 3 : axes[ai];
            ref_softmax(xs, ax, want);
            for (int i = 0; i < 12; i++)
                want[i] = kt_round(t, want[i]);
            fx f;
            oac_gb *g = fx_build(&f, NULL);
            kt_init(g, "x", t, "2,3,2", x, 12);
            oac_node_attr_int(g, oac_gb_node(g, "Softmax", NULL, "sm", "x", "y"), "axis",
                              axes[ai]);
            oac_gb_output(g, "y", t, "2,3,2");
            kt_val y;
            ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
            kt_expect(&y, t, "2,3,2", want, 12, t == OAC_T_DOUBLE ? 1e-15 : 1e-6);
            kt_free(&y, 1);
            fx_end(&f);
        }
}
END_TEST

/* Opset 11: the input is coerced to 2-D at axis (default 1), so each
 * batch row of 6 is one distribution. */
START_TEST(softmax_opset11_coerces)
{
    double x[12], want[12];
    for (int i = 0; i < 12; i++)
        x[i] = (double)(i % 5) * 0.5;
    for (int r = 0; r < 2; r++) {
        double s = 0;
        for (int i = 0; i < 6; i++)
            s += exp(x[r * 6 + i]);
        for (int i = 0; i < 6; i++)
            want[r * 6 + i] = (float)(exp(x[r * 6 + i]) / s);
    }
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_mb_opset(mb, "", 11);
    kt_init(g, "x", OAC_T_FLOAT, "2,3,2", x, 12);
    oac_gb_node(g, "Softmax", NULL, "sm", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2,3,2");
    kt_val y;
    ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
    kt_expect(&y, OAC_T_FLOAT, "2,3,2", want, 12, 1e-6);
    kt_free(&y, 1);
    fx_end(&f);
}
END_TEST

/* ---- reductions ------------------------------------------------------------ */

typedef enum { RS, RM, RX } rop;

/* Reduce x [2, 3, 2] over the axes set in red[] by the definition. */
static void ref_reduce(rop op, const double *x, const bool *red, double *y, int *ny)
{
    int n = 0;
    for (int o = 0; o < 12; o++) {
        int idx[3] = { o / 6, (o / 2) % 3, o % 2 };
        bool first = true;
        for (int k = 0; k < 3; k++)
            if (red[k] && idx[k])
                first = false;
        if (!first)
            continue;   /* one output per block: its first element */
        double acc = op == RX ? -INFINITY : 0;
        int cnt = 0;
        for (int e = 0; e < 12; e++) {
            int j[3] = { e / 6, (e / 2) % 3, e % 2 };
            bool same = true;
            for (int k = 0; k < 3; k++)
                if (!red[k] && j[k] != idx[k])
                    same = false;
            if (!same)
                continue;
            acc = op == RX ? fmax(acc, x[e]) : acc + x[e];
            cnt++;
        }
        y[n++] = op == RM ? acc / cnt : acc;
    }
    *ny = n;
}

START_TEST(reduce_axes_keepdims)
{
    const char *ops[3] = { "ReduceSum", "ReduceMean", "ReduceMax" };
    static const int32_t types[] = { OAC_T_FLOAT, OAC_T_FLOAT16, OAC_T_BFLOAT16,
                                     OAC_T_DOUBLE, OAC_T_INT32, OAC_T_INT64 };
    const struct { int64_t axes[3]; int n; bool red[3]; const char *keep, *drop; } c[] = {
        { { 0, 2 }, 2, { true, false, true }, "1,3,1", "3" },
        { { -1 }, 1, { false, false, true }, "2,3,1", "2,3" },
        { { 0 }, 0, { true, true, true }, "1,1,1", "" },      /* no axes: all */
    };
    for (int o = 0; o < 3; o++)
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
            for (size_t ci = 0; ci < 3; ci++)
                for (int keep = 0; keep < 2; keep++) {
                    int32_t t = types[ti];
                    double x[12], want[12];
                    int nw;
                    for (int i = 0; i < 12; i++)
                        x[i] = kt_round(t, val(t, i));
                    ref_reduce((rop)o, x, c[ci].red, want, &nw);
                    for (int i = 0; i < nw; i++)
                        want[i] = oac_ek_is_float(t) ? kt_round(t, want[i]) : trunc(want[i]);
                    fx f;
                    oac_gb *g = fx_build(&f, NULL);
                    kt_init(g, "x", t, "2,3,2", x, 12);
                    char na[8];
                    snprintf(na, sizeof na, "%d", c[ci].n);
                    Onnx__NodeProto *n;
                    if (c[ci].n) {
                        oac_gb_init_i64(g, "axes", na, c[ci].axes, (size_t)c[ci].n);
                        n = oac_gb_node(g, ops[o], NULL, "r", "x,axes", "y");
                    } else {
                        n = oac_gb_node(g, ops[o], NULL, "r", "x", "y");
                    }
                    oac_node_attr_int(g, n, "keepdims", keep);
                    oac_gb_output(g, "y", t, NULL);
                    kt_val y;
                    ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
                    kt_expect(&y, t, keep ? c[ci].keep : c[ci].drop, want, (size_t)nw,
                              o == 1 && oac_ek_is_float(t) ? 1e-6 : 0);
                    kt_free(&y, 1);
                    fx_end(&f);
                }
}
END_TEST

/* Older opsets take axes as an attribute (ReduceMean before 18,
 * ReduceSum before 13); noop_with_empty_axes makes no axes the identity. */
START_TEST(reduce_attribute_axes_and_noop)
{
    const double x[6] = { 1, 2, 3, 4, 5, 6 };
    const struct { int64_t opset; const char *op; bool attr, noop; const char *dims;
                   double want[6]; int n; } c[] = {
        { 17, "ReduceMean", true, false, "2,1", { 2, 5 }, 2 },
        { 11, "ReduceSum", true, false, "2,1", { 6, 15 }, 2 },
        { 18, "ReduceMax", false, true, "2,3", { 1, 2, 3, 4, 5, 6 }, 6 },
        { 13, "ReduceSum", false, true, "2,3", { 1, 2, 3, 4, 5, 6 }, 6 },
    };
    for (size_t i = 0; i < 4; i++) {
        fx f;
        oac_mb *mb;
        oac_gb *g = fx_build(&f, &mb);
        oac_mb_opset(mb, "", c[i].opset);
        kt_init(g, "x", OAC_T_FLOAT, "2,3", x, 6);
        Onnx__NodeProto *n = oac_gb_node(g, c[i].op, NULL, "r", "x", "y");
        if (c[i].attr) {
            int64_t ax = 1;
            oac_node_attr_ints(g, n, "axes", &ax, 1);
        }
        if (c[i].noop)
            oac_node_attr_int(g, n, "noop_with_empty_axes", 1);
        oac_gb_output(g, "y", OAC_T_FLOAT, NULL);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        kt_expect(&y, OAC_T_FLOAT, c[i].dims, c[i].want, (size_t)c[i].n, 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

/* Empty sets: sum 0, max -inf (ONNX), mean NaN; NaN propagates in max;
 * BOOL max is "any". */
START_TEST(reduce_edges)
{
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    kt_init(g, "e", OAC_T_FLOAT, "0,2", NULL, 0);
    const double nanrow[4] = { 1, NAN, 3, 4 }, bools[4] = { 0, 0, 0, 1 };
    kt_init(g, "x", OAC_T_FLOAT, "2,2", nanrow, 4);
    kt_init(g, "b", OAC_T_BOOL, "2,2", bools, 4);
    int64_t ax0 = 0, ax1 = 1;
    oac_gb_init_i64(g, "a0", "1", &ax0, 1);
    oac_gb_init_i64(g, "a1", "1", &ax1, 1);
    oac_gb_node(g, "ReduceSum", NULL, "s", "e,a0", "s0");
    oac_gb_node(g, "ReduceMax", NULL, "m", "e,a0", "m0");
    oac_gb_node(g, "ReduceMean", NULL, "a", "e,a0", "a0v");
    oac_gb_node(g, "ReduceMax", NULL, "n", "x,a1", "n0");
    oac_gb_node(g, "ReduceMax", NULL, "bm", "b,a1", "b0");
    oac_gb_output(g, "s0", OAC_T_FLOAT, "1,2");
    oac_gb_output(g, "m0", OAC_T_FLOAT, "1,2");
    oac_gb_output(g, "a0v", OAC_T_FLOAT, "1,2");
    oac_gb_output(g, "n0", OAC_T_FLOAT, "2,1");
    oac_gb_output(g, "b0", OAC_T_BOOL, "2,1");
    kt_val y[5];
    ck_assert_int_eq(kt_run(&f, true, "s0,m0,a0v,n0,b0", y, 5), OAC_OK);
    const double zero[2] = { 0, 0 }, ninf[2] = { -INFINITY, -INFINITY },
                 nan2[2] = { NAN, NAN }, nmax[2] = { NAN, 4 }, bmax[2] = { 0, 1 };
    kt_expect(&y[0], OAC_T_FLOAT, "1,2", zero, 2, 0);
    kt_expect(&y[1], OAC_T_FLOAT, "1,2", ninf, 2, 0);
    kt_expect(&y[2], OAC_T_FLOAT, "1,2", nan2, 2, 0);
    kt_expect(&y[3], OAC_T_FLOAT, "2,1", nmax, 2, 0);
    kt_expect(&y[4], OAC_T_BOOL, "2,1", bmax, 2, 0);
    kt_free(y, 5);
    fx_end(&f);
}
END_TEST

/* ---- a FLOAT16 chain, end to end ----------------------------------------- */

/* logits = Softmax(x W + b) over [1, 4, 8] x [8, 6] + [6], FLOAT16, three
 * steps: every step's values by the definition, the peak equal to the
 * plan. */
START_TEST(f16_matmul_add_softmax_chain)
{
    double x[32], w[48], b[6];
    for (int i = 0; i < 32; i++)
        x[i] = kt_round(OAC_T_FLOAT16, sin(i * 0.7));
    for (int i = 0; i < 48; i++)
        w[i] = kt_round(OAC_T_FLOAT16, cos(i * 0.3) / 2);
    for (int i = 0; i < 6; i++)
        b[i] = kt_round(OAC_T_FLOAT16, i * 0.1 - 0.2);
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    kt_init(g, "x", OAC_T_FLOAT16, "1,4,8", x, 32);
    kt_init(g, "w", OAC_T_FLOAT16, "8,6", w, 48);
    kt_init(g, "b", OAC_T_FLOAT16, "6", b, 6);
    oac_gb_node(g, "MatMul", NULL, "proj", "x,w", "h");
    oac_gb_node(g, "Add", NULL, "bias", "h,b", "z");
    oac_gb_node(g, "Softmax", NULL, "sm", "z", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT16, "1,4,6");
    fx_load(&f);
    oac_run_opts ro = { .steps = 3 };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL), OAC_OK);
    ck_assert_uint_eq(f.e->steps_completed, 3);
    ck_assert(f.e->planned_peak_bytes.known);
    /* h [1,4,6] and z [1,4,6] FLOAT16 live together at the Add: 96 bytes;
     * y joins while z is read. */
    ck_assert_uint_eq(f.e->planned_peak_bytes.value, f.e->measured_peak_bytes);
    ck_assert(f.e->peak_matches_plan);
    ck_assert_uint_ge(f.e->measured_peak_bytes, 96);
    fx_end(&f);

    /* The values, once more with a dump. */
    g = fx_build(&f, NULL);
    kt_init(g, "x", OAC_T_FLOAT16, "1,4,8", x, 32);
    kt_init(g, "w", OAC_T_FLOAT16, "8,6", w, 48);
    kt_init(g, "b", OAC_T_FLOAT16, "6", b, 6);
    oac_gb_node(g, "MatMul", NULL, "proj", "x,w", "h");
    oac_gb_node(g, "Add", NULL, "bias", "h,b", "z");
    oac_gb_node(g, "Softmax", NULL, "sm", "z", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT16, "1,4,6");
    kt_val y;
    ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
    double want[24];
    for (int r = 0; r < 4; r++) {
        double z[6], mx = -INFINITY, s = 0;
        for (int j = 0; j < 6; j++) {
            double h = 0;
            for (int q = 0; q < 8; q++)
                h += x[r * 8 + q] * w[q * 6 + j];
            /* Each node stores FLOAT16. */
            z[j] = kt_round(OAC_T_FLOAT16, kt_round(OAC_T_FLOAT16, h) + b[j]);
            mx = fmax(mx, z[j]);
        }
        for (int j = 0; j < 6; j++)
            s += exp(z[j] - mx);
        for (int j = 0; j < 6; j++)
            want[r * 6 + j] = kt_round(OAC_T_FLOAT16, exp(z[j] - mx) / s);
    }
    kt_expect(&y, OAC_T_FLOAT16, "1,4,6", want, 24, 1e-3);
    kt_free(&y, 1);
    fx_end(&f);
}
END_TEST

/* ---- refusals -------------------------------------------------------------- */

static void mm_inner(fx *f, const char *db)
{
    const double a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 1, 1, 1, 1, 1, 1 };
    oac_gb *g = fx_build(f, NULL);
    kt_init(g, "a", OAC_T_FLOAT, "2,3", a, 6);
    kt_init(g, "b", OAC_T_FLOAT, db, b, 6);
    oac_gb_node(g, "MatMul", NULL, "mm", "a,b", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, NULL);
    kt_val y;
    if (kt_run(f, false, "y", &y, 1) == OAC_OK)
        kt_free(&y, 1);
}

static void mm_inner_differs(fx *f) { mm_inner(f, "2,3"); }
static void mm_inner_agrees(fx *f) { mm_inner(f, "3,2"); }

static void reduce_repeat(fx *f, int64_t second)
{
    const double x[6] = { 1, 2, 3, 4, 5, 6 };
    int64_t ax[2] = { 1, second };
    oac_gb *g = fx_build(f, NULL);
    kt_init(g, "x", OAC_T_FLOAT, "2,3", x, 6);
    oac_gb_init_i64(g, "axes", "2", ax, 2);
    oac_gb_node(g, "ReduceSum", NULL, "rs", "x,axes", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, NULL);
    kt_val y;
    if (kt_run(f, false, "y", &y, 1) == OAC_OK)
        kt_free(&y, 1);
}

static void reduce_axis_twice(fx *f) { reduce_repeat(f, -1); }
static void reduce_two_axes(fx *f) { reduce_repeat(f, 0); }

static const scene_case linalg_rows[] = {
    { "matmul_inner_differs", mm_inner_differs, WANT(OAC_KERNEL_ERROR), "mm", "b", NULL },
    { "matmul_inner_agrees", mm_inner_agrees, NEAR(OAC_KERNEL_ERROR) },
    { "reduce_axis_twice", reduce_axis_twice, WANT(OAC_KERNEL_ERROR), "rs", "axes", NULL },
    { "reduce_two_axes", reduce_two_axes, NEAR(OAC_KERNEL_ERROR) },
};
CASES_TEST(linalg_rows)

START_TEST(types_refused_by_name)
{
    /* Gemm computes floats only; Softmax too. */
    const double v[4] = { 1, 2, 3, 4 };
    for (int i = 0; i < 2; i++) {
        fx f;
        oac_gb *g = fx_build(&f, NULL);
        kt_init(g, "a", OAC_T_INT32, "2,2", v, 4);
        oac_gb_node(g, i ? "Softmax" : "Gemm", NULL, "n", i ? "a" : "a,a", "y");
        oac_gb_output(g, "y", OAC_T_INT32, "2,2");
        kt_run_fail(&f, OAC_UNSUPPORTED_OPERATOR, "n");
        ck_assert_ptr_nonnull(strstr(diag_find(f.d, OAC_UNSUPPORTED_OPERATOR, NULL, NULL,
                                               NULL)->message, "INT32"));
        fx_end(&f);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("kernel_linalg");
    TCase *tc = tcase_create("kernel_linalg");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, matmul_broadcast_batches_every_type);
    tcase_add_test(tc, matmul_vectors);
    tcase_add_test(tc, gemm_transposes_and_c);
    tcase_add_test(tc, softmax_any_axis);
    tcase_add_test(tc, softmax_opset11_coerces);
    tcase_add_test(tc, reduce_axes_keepdims);
    tcase_add_test(tc, reduce_attribute_axes_and_noop);
    tcase_add_test(tc, reduce_edges);
    tcase_add_test(tc, f16_matmul_add_softmax_chain);
    tcase_add_test(tc, types_refused_by_name);
    ADD_CASES(tc, linalg_rows);
    suite_add_tcase(s, tc);
    return s;
}

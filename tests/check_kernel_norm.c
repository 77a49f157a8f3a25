/* check_kernel_norm.c: the normalization kernels (lib/kernels/norm.c;
 * contract sections 5 and 8): LayerNormalization, RMSNormalization,
 * SimplifiedLayerNormalization, SkipLayerNormalization and
 * SkipSimplifiedLayerNormalization.
 *
 * One-node models from the builder run through oac_run; outputs come
 * back through --dump and are compared with a naive implementation
 * written here (mean and variance of each row by the textbook formulas,
 * scale and bias indexed by explicit broadcasting), for every element
 * type the operator accepts.  Each run also asserts that the measured
 * peak equals the plan (kt_run): the inference rules type every
 * output, omitted ones included.  Refusals: a scale that does not
 * broadcast (kernel-error), an unimplemented stash_type or element type
 * (unsupported-operator).
 */
#include <math.h>

#include "harness.h"

/* The relative tolerance of a result rounded once to type t (the
 * reference and the kernel differ by summation order and that rounding). */
static double tol_of(int32_t t)
{
    switch (t) {
    case OAC_T_FLOAT: return 2e-6;
    case OAC_T_FLOAT16: return 2e-3;     /* 2^-10, twice at most */
    case OAC_T_BFLOAT16: return 1.6e-2;  /* 2^-7 */
    default: return 1e-12;
    }
}

/* n deterministic values in [-1, 1) from *seed, as type t holds them. */
static void fill(int32_t t, double *v, size_t n, uint32_t *seed)
{
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        v[i] = kt_round(t, (double)(*seed >> 8) / (double)(1u << 23) - 1.0);
    }
}

/* kt_expect; dims NULL: whatever dims v has (the caller checks them
 * elsewhere, or the count and layout say enough). */
static void expect(const kt_val *v, int32_t t, const char *dims, const double *want,
                   size_t n, double tol)
{
    char got[128] = "";
    for (int i = 0; !dims && i < v->rank; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? "," : "",
                 (long long)v->dims[i]);
    kt_expect(v, t, dims ? dims : got, want, n, tol);
}

static double *vals(size_t n)
{
    double *v = calloc(n ? n : 1, sizeof *v);
    ck_assert_ptr_nonnull(v);
    return v;
}

static const int32_t types[] = { OAC_T_FLOAT, OAC_T_FLOAT16, OAC_T_BFLOAT16, OAC_T_DOUBLE };
#define N_TYPES (sizeof types / sizeof types[0])

static char *dstr(char *buf, size_t len, int rank, const int64_t *d)
{
    buf[0] = 0;
    for (int i = 0; i < rank; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%lld", i ? "," : "",
                 (long long)d[i]);
    return buf;
}

/* Offset of element i of a tensor of dims xd (rank r) in a tensor of dims
 * pd (rank pr <= r) broadcast to it, right-aligned. */
static size_t bcast_at(size_t i, const int64_t *xd, int r, const int64_t *pd, int pr)
{
    size_t at = 0, st = 1;
    for (int a = r - 1, b = pr - 1; a >= 0; a--, b--) {
        size_t idx = i % (size_t)xd[a];
        i /= (size_t)xd[a];
        if (b >= 0) {
            if (pd[b] != 1)
                at += idx * st;
            st *= (size_t)pd[b];
        }
    }
    return at;
}

/* ---- LayerNormalization, RMSNormalization, SimplifiedLayerNormalization */

typedef struct ln_cfg {
    const char *op;         /* LayerNormalization, RMSNormalization, ... */
    int rank;
    int64_t xd[4];
    int axis;
    int srank, brank;       /* 0: no bias */
    int64_t sd[4], bd[4];
    bool stats;             /* request Mean / InvStdDev (inv_std_var) */
    double eps;             /* 0: default */
    int32_t scale_type;     /* 0: X's */
} ln_cfg;

static void ln_case(const ln_cfg *c, int32_t t)
{
    bool simplified = strcmp(c->op, "LayerNormalization") != 0;
    int32_t st = c->scale_type ? c->scale_type : t;
    size_t nx = 1, ns = 1, nb = 1;
    for (int i = 0; i < c->rank; i++)
        nx *= (size_t)c->xd[i];
    for (int i = 0; i < c->srank; i++)
        ns *= (size_t)c->sd[i];
    for (int i = 0; i < c->brank; i++)
        nb *= (size_t)c->bd[i];
    uint32_t seed = 41u + (uint32_t)t;
    double *x = vals(nx), *s = vals(ns), *b = vals(nb), *y = vals(nx);
    fill(t, x, nx, &seed);
    fill(st, s, ns, &seed);
    fill(t, b, nb, &seed);
    for (size_t i = 0; i < nx; i++)
        x[i] = kt_round(t, x[i] * 3 + 0.5);   /* a mean away from 0 */

    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_mb_opset(mb, "", 23);
    char d[64], xs[64];
    kt_init(g, "x", t, dstr(xs, sizeof xs, c->rank, c->xd), x, nx);
    kt_init(g, "s", st, dstr(d, sizeof d, c->srank, c->sd), s, ns);
    if (c->brank)
        kt_init(g, "b", t, dstr(d, sizeof d, c->brank, c->bd), b, nb);
    const char *outs = !c->stats ? "y" : simplified ? "y,inv" : "y,mean,inv";
    Onnx__NodeProto *n = oac_gb_node(g, c->op, NULL, "norm", c->brank ? "x,s,b" : "x,s", outs);
    if (c->axis != -1)
        oac_node_attr_int(g, n, "axis", c->axis);
    if (c->eps)
        oac_node_attr_float(g, n, "epsilon", (float)c->eps);
    oac_gb_output(g, "y", simplified ? st : t, xs);
    int64_t rd[4];
    int axis = c->axis < 0 ? c->axis + c->rank : c->axis;
    for (int i = 0; i < c->rank; i++)
        rd[i] = i < axis ? c->xd[i] : 1;
    if (c->stats) {
        if (!simplified)
            oac_gb_output(g, "mean", OAC_T_FLOAT, dstr(d, sizeof d, c->rank, rd));
        oac_gb_output(g, "inv", OAC_T_FLOAT, dstr(d, sizeof d, c->rank, rd));
    }
    fx_load(&f);
    kt_val out[3];
    size_t nout = !c->stats ? 1 : simplified ? 2 : 3;
    int rc = kt_run_with(&f, NULL, 1, true, outs, out, nout);
    ck_assert_msg(rc == OAC_OK, "%s %s: %s", c->op, oac_elem_name(t), diag_dump(f.d));

    size_t rows = 1, len = 1;
    for (int i = 0; i < c->rank; i++)
        *(i < axis ? &rows : &len) *= (size_t)c->xd[i];
    double eps = c->eps ? (float)c->eps : (float)1e-5;
    double *mean = vals(rows), *inv = vals(rows);
    for (size_t r = 0; r < rows; r++) {
        double mu = 0, var = 0;
        for (size_t i = 0; i < len; i++)
            mu += x[r * len + i];
        mu /= (double)len;
        for (size_t i = 0; i < len; i++) {
            double dv = simplified ? x[r * len + i] : x[r * len + i] - mu;
            var += dv * dv;
        }
        var /= (double)len;
        mean[r] = simplified ? 0 : mu;
        inv[r] = 1 / sqrt(var + eps);
        for (size_t i = 0; i < len; i++) {
            size_t e = r * len + i;
            double v = (x[e] - mean[r]) * inv[r] * s[bcast_at(e, c->xd, c->rank, c->sd, c->srank)];
            if (c->brank)
                v += b[bcast_at(e, c->xd, c->rank, c->bd, c->brank)];
            y[e] = v;
        }
    }
    expect(&out[0], simplified ? st : t, xs, y, nx, tol_of(simplified ? st : t));
    if (c->stats) {
        dstr(d, sizeof d, c->rank, rd);
        if (!simplified)
            expect(&out[1], OAC_T_FLOAT, d, mean, rows, tol_of(OAC_T_FLOAT));
        expect(&out[simplified ? 1 : 2], OAC_T_FLOAT, d, inv, rows, tol_of(OAC_T_FLOAT));
    }
    kt_free(out, nout);
    fx_end(&f);
    free(x), free(s), free(b), free(y), free(mean), free(inv);
}

START_TEST(layer_normalization_forms)
{
    const ln_cfg cs[] = {
        { .op = "LayerNormalization", .rank = 3, .xd = { 2, 3, 8 }, .axis = -1,
          .srank = 1, .brank = 1, .sd = { 8 }, .bd = { 8 }, .stats = true },
        /* axis 1 over [3, 4, 5]; Scale [4, 5], B [1, 5]; epsilon */
        { .op = "LayerNormalization", .rank = 4, .xd = { 2, 3, 4, 5 }, .axis = 1,
          .srank = 2, .brank = 2, .sd = { 4, 5 }, .bd = { 1, 5 }, .stats = true,
          .eps = 1e-3 },
        /* Scale [4, 1] over axis -2, no bias, no statistics */
        { .op = "LayerNormalization", .rank = 4, .xd = { 2, 3, 4, 5 }, .axis = -2,
          .srank = 2, .sd = { 4, 1 } },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (size_t j = 0; j < N_TYPES; j++)
            ln_case(&cs[i], types[j]);
}
END_TEST

START_TEST(rms_normalization_forms)
{
    const ln_cfg cs[] = {
        { .op = "RMSNormalization", .rank = 3, .xd = { 2, 3, 8 }, .axis = -1,
          .srank = 1, .sd = { 8 } },
        { .op = "RMSNormalization", .rank = 3, .xd = { 2, 3, 8 }, .axis = 1,
          .srank = 2, .sd = { 3, 8 }, .eps = 1e-2 },
        { .op = "SimplifiedLayerNormalization", .rank = 3, .xd = { 2, 3, 8 }, .axis = -1,
          .srank = 1, .sd = { 8 }, .stats = true },
        { .op = "SimplifiedLayerNormalization", .rank = 3, .xd = { 2, 3, 8 }, .axis = 0,
          .srank = 3, .sd = { 1, 3, 8 }, .stats = true },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (size_t j = 0; j < N_TYPES; j++)
            ln_case(&cs[i], types[j]);
    /* Y has the scale's type (ONNX's V; ONNX Runtime mixes them). */
    ln_cfg mixed = { .op = "SimplifiedLayerNormalization", .rank = 3, .xd = { 2, 3, 8 },
                     .axis = -1, .srank = 1, .sd = { 8 }, .stats = true,
                     .scale_type = OAC_T_FLOAT };
    ln_case(&mixed, OAC_T_FLOAT16);
    mixed.op = "RMSNormalization";
    mixed.stats = false;
    mixed.scale_type = OAC_T_FLOAT16;
    ln_case(&mixed, OAC_T_FLOAT);
}
END_TEST

/* ---- Skip(Simplified)LayerNormalization ----------------------------- */

typedef struct skip_cfg {
    bool simplified;
    int rank;
    int64_t xd[3];
    int skrank;
    int64_t skd[3];
    bool beta, bias;
    const char *outs;       /* e.g. "y,,,sum" */
    double eps;             /* 0: the default 1e-12 */
} skip_cfg;

static void skip_case(const skip_cfg *c, int32_t t)
{
    size_t nx = 1, nsk = 1;
    for (int i = 0; i < c->rank; i++)
        nx *= (size_t)c->xd[i];
    for (int i = 0; i < c->skrank; i++)
        nsk *= (size_t)c->skd[i];
    int64_t H = c->xd[c->rank - 1];
    uint32_t seed = 53u + (uint32_t)t;
    double *x = vals(nx), *sk = vals(nsk), *gm = vals((size_t)H), *bt = vals((size_t)H),
           *bi = vals((size_t)H), *y = vals(nx), *sum = vals(nx);
    fill(t, x, nx, &seed);
    fill(t, sk, nsk, &seed);
    fill(t, gm, (size_t)H, &seed);
    fill(t, bt, (size_t)H, &seed);
    fill(t, bi, (size_t)H, &seed);

    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_mb_opset(mb, "com.microsoft", 1);
    char d[64], xs[64], hs[16];
    snprintf(hs, sizeof hs, "%lld", (long long)H);
    kt_init(g, "x", t, dstr(xs, sizeof xs, c->rank, c->xd), x, nx);
    kt_init(g, "skip", t, dstr(d, sizeof d, c->skrank, c->skd), sk, nsk);
    kt_init(g, "gamma", t, hs, gm, (size_t)H);
    if (c->beta)
        kt_init(g, "beta", t, hs, bt, (size_t)H);
    if (c->bias)
        kt_init(g, "bias", t, hs, bi, (size_t)H);
    char ins[64];
    if (c->simplified)
        snprintf(ins, sizeof ins, "x,skip,gamma%s", c->bias ? ",bias" : "");
    else
        snprintf(ins, sizeof ins, "x,skip,gamma,%s,%s", c->beta ? "beta" : "",
                 c->bias ? "bias" : "");
    Onnx__NodeProto *n = oac_gb_node(g, c->simplified ? "SkipSimplifiedLayerNormalization"
                                     : "SkipLayerNormalization", "com.microsoft", "skip",
                                     ins, c->outs);
    if (c->eps)
        oac_node_attr_float(g, n, "epsilon", (float)c->eps);
    int64_t rd[3];
    for (int i = 0; i < c->rank; i++)
        rd[i] = i < c->rank - 1 ? c->xd[i] : 1;
    /* The outputs the node has (c->outs omits some ports), read back in
     * port order: slot[i] is port i's place in out, or -1. */
    static const char *const names[] = { "y", "mean", "inv", "sum" };
    char outs[64] = "";
    int slot[4];
    size_t nout = 0;
    for (int i = 0; i < 4; i++) {
        slot[i] = -1;
        if (!strstr(c->outs, names[i]))
            continue;
        oac_gb_output(g, names[i], i == 1 || i == 2 ? OAC_T_FLOAT : t,
                      i == 1 || i == 2 ? dstr(d, sizeof d, c->rank, rd) : xs);
        snprintf(outs + strlen(outs), sizeof outs - strlen(outs), "%s%s", nout ? "," : "",
                 names[i]);
        slot[i] = (int)nout++;
    }
    fx_load(&f);
    kt_val out[4];
    int rc = kt_run_with(&f, NULL, 1, true, outs, out, nout);
    ck_assert_msg(rc == OAC_OK, "%s: %s", oac_elem_name(t), diag_dump(f.d));

    size_t rows = nx / (size_t)H;
    double eps = c->eps ? (float)c->eps : (float)1e-12;
    double *mean = vals(rows), *inv = vals(rows);
    for (size_t r = 0; r < rows; r++) {
        double mu = 0, var = 0;
        for (int64_t i = 0; i < H; i++) {
            size_t e = r * (size_t)H + (size_t)i;
            sum[e] = x[e] + sk[bcast_at(e, c->xd, c->rank, c->skd, c->skrank)] +
                     (c->bias ? bi[i] : 0);
            mu += sum[e];
        }
        mu /= (double)H;
        for (int64_t i = 0; i < H; i++) {
            double dv = sum[r * (size_t)H + (size_t)i] - (c->simplified ? 0 : mu);
            var += dv * dv;
        }
        var /= (double)H;
        mean[r] = c->simplified ? 0 : mu;
        inv[r] = 1 / sqrt(var + eps);
        for (int64_t i = 0; i < H; i++) {
            size_t e = r * (size_t)H + (size_t)i;
            y[e] = (sum[e] - mean[r]) * inv[r] * gm[i] + (c->beta ? bt[i] : 0);
        }
    }
    double tol = tol_of(t);
    dstr(d, sizeof d, c->rank, rd);
    expect(&out[slot[0]], t, xs, y, nx, tol);
    if (slot[1] >= 0)
        expect(&out[slot[1]], OAC_T_FLOAT, d, mean, rows, tol_of(OAC_T_FLOAT));
    if (slot[2] >= 0)
        expect(&out[slot[2]], OAC_T_FLOAT, d, inv, rows, tol_of(OAC_T_FLOAT));
    if (slot[3] >= 0)
        expect(&out[slot[3]], t, xs, sum, nx, tol);
    kt_free(out, nout);
    fx_end(&f);
    free(x), free(sk), free(gm), free(bt), free(bi), free(y), free(sum), free(mean), free(inv);
}

START_TEST(skip_layer_normalization_forms)
{
    const skip_cfg cs[] = {
        { .rank = 3, .xd = { 2, 3, 8 }, .skrank = 3, .skd = { 2, 3, 8 }, .beta = true,
          .bias = true, .outs = "y,mean,inv,sum" },
        /* The GQA decoder's form: outputs 1 and 2 omitted. */
        { .rank = 3, .xd = { 2, 3, 8 }, .skrank = 3, .skd = { 2, 3, 8 }, .beta = true,
          .outs = "y,,,sum", .eps = 1e-5 },
        { .rank = 3, .xd = { 2, 3, 8 }, .skrank = 2, .skd = { 3, 8 }, .bias = true,
          .outs = "y" },
        { .rank = 2, .xd = { 3, 8 }, .skrank = 2, .skd = { 3, 8 }, .beta = true,
          .outs = "y,mean" },
        { .simplified = true, .rank = 3, .xd = { 2, 3, 8 }, .skrank = 3, .skd = { 1, 3, 8 },
          .bias = true, .outs = "y,mean,inv,sum" },
        { .simplified = true, .rank = 3, .xd = { 2, 3, 8 }, .skrank = 3, .skd = { 2, 3, 8 },
          .outs = "y,,inv" },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (size_t j = 0; j < N_TYPES; j++)
            skip_case(&cs[i], types[j]);
}
END_TEST

/* ---- refusals -------------------------------------------------------- */

/* LayerNormalization of X [2, 3] (type xt) with Scale of dims sd. */
static void ln_refused(fx *f, int32_t xt, const char *sd, int64_t stash)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    double v[6] = { 1, 2, 3, 4, 5, 6 };
    kt_init(g, "x", xt, "2,3", v, 6);
    kt_init(g, "scale", OAC_T_FLOAT, sd, v, sd[0] == '2' ? 2 : 3);
    Onnx__NodeProto *n = oac_gb_node(g, "LayerNormalization", NULL, "ln", "x,scale", "y");
    if (stash != 1)
        oac_node_attr_int(g, n, "stash_type", stash);
    oac_gb_output(g, "y", xt, "2,3");
    fx_load(f);
}

START_TEST(normalization_refusals)
{
    static const char names[] = "y";
    kt_val o;
    fx f;
    /* Scale [2] does not broadcast to [2, 3]. */
    ln_refused(&f, OAC_T_FLOAT, "2", 1);
    ck_assert_int_eq(kt_run_with(&f, NULL, 1, true, names, &o, 1), OAC_ERUNTIME);
    ck_assert_ptr_nonnull(strstr(diag_expect_run(f.d, OAC_KERNEL_ERROR, "kernel-error")
                                     ->message, "'scale'"));
    fx_end(&f);
    ln_refused(&f, OAC_T_FLOAT, "3", 11);
    ck_assert_int_eq(kt_run_with(&f, NULL, 1, true, names, &o, 1), OAC_ERUNTIME);
    ck_assert_ptr_nonnull(strstr(diag_expect_run(f.d, OAC_UNSUPPORTED_OPERATOR,
                                                 "unsupported-operator")->message,
                                 "stash_type 11"));
    fx_end(&f);
    ln_refused(&f, OAC_T_INT32, "3", 1);
    ck_assert_int_eq(kt_run_with(&f, NULL, 1, true, names, &o, 1), OAC_ERUNTIME);
    ck_assert_ptr_nonnull(strstr(diag_expect_run(f.d, OAC_UNSUPPORTED_OPERATOR,
                                                 "unsupported-operator")->message, "INT32"));
    fx_end(&f);
    /* The near miss: Scale [3]. */
    ln_refused(&f, OAC_T_FLOAT, "3", 1);
    ck_assert_int_eq(kt_run_with(&f, NULL, 1, true, names, &o, 1), OAC_OK);
    diag_expect_clean(f.d);
    kt_free(&o, 1);
    fx_end(&f);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("kernel_norm");
    TCase *tc = tcase_create("norm");
    tcase_add_test(tc, layer_normalization_forms);
    tcase_add_test(tc, rms_normalization_forms);
    tcase_add_test(tc, skip_layer_normalization_forms);
    tcase_add_test(tc, normalization_refusals);
    suite_add_tcase(s, tc);
    return s;
}

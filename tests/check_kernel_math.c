/* check_kernel_math.c: the element-type layer (lib/kernels/elem_io.h) and the
 * element-wise kernels (lib/kernels/math.c; contract section 8).
 *
 * Every kernel runs in a builder-made one-node model through oac_check
 * and oac_run (kt_run: the measured peak must equal the plan), once per
 * element type it accepts.  Expected values are computed here from the
 * inputs as stored, by hand or with a plain double implementation, then
 * rounded the way the contract says a store in that type rounds
 * (kt_round: float, then nearest-even to 16 bits): exact agreement is
 * asked where the contract makes the result exact (+, -, *, /, sqrt,
 * comparisons, moves, casts), a tolerance of a few ulps elsewhere.
 * Refusals: shapes that do not broadcast, mixed types and integer division
 * by zero are kernel-error; a type a kernel lacks is unsupported-operator
 * naming the type.
 */
#include <math.h>

#include "harness.h"

#include "half.h"
#include "kernels/elem_io.h"

static const int32_t float_types[] = { OAC_T_FLOAT, OAC_T_FLOAT16, OAC_T_BFLOAT16,
                                       OAC_T_DOUBLE };
#define N_FLOAT_TYPES (sizeof float_types / sizeof float_types[0])

/* ---- the element layer ------------------------------------------------ */

START_TEST(elem_store_rounds_to_nearest_even)
{
    uint16_t h[4];
    /* FLOAT16 has 10 fraction bits: 1 + 2^-11 is halfway between 1 and
     * 1 + 2^-10 and goes to the even 1; 1 + 3 * 2^-11 is halfway between
     * 1 + 2^-10 and 1 + 2^-9 and goes to the even 1 + 2^-9. */
    oac_ek_setd(OAC_T_FLOAT16, h, 0, 1.0 + ldexp(1, -11));
    oac_ek_setd(OAC_T_FLOAT16, h, 1, 1.0 + 3 * ldexp(1, -11));
    ck_assert_uint_eq(h[0], 0x3c00);
    ck_assert_uint_eq(h[1], 0x3c02);
    ck_assert(oac_ek_getd(OAC_T_FLOAT16, h, 1) == 1.0 + ldexp(1, -9));
    /* BFLOAT16 has 7: the same at 2^-8 and 3 * 2^-8. */
    oac_ek_setf(OAC_T_BFLOAT16, h, 2, 1.0f + ldexpf(1, -8));
    oac_ek_setf(OAC_T_BFLOAT16, h, 3, 1.0f + 3 * ldexpf(1, -8));
    ck_assert_uint_eq(h[2], 0x3f80);
    ck_assert_uint_eq(h[3], 0x3f82);
    /* 65520 is past FLOAT16's largest finite (65504) by half an ulp and
     * rounds to infinity, as IEEE says. */
    oac_ek_setd(OAC_T_FLOAT16, h, 0, 65520.0);
    ck_assert(isinf(oac_ek_getd(OAC_T_FLOAT16, h, 0)));
    /* DOUBLE keeps what FLOAT would round. */
    double d[1];
    oac_ek_setd(OAC_T_DOUBLE, d, 0, 0.1);
    ck_assert(d[0] == 0.1);
    float f[1];
    oac_ek_setd(OAC_T_FLOAT, f, 0, 0.1);
    ck_assert(f[0] == 0.1f);
}
END_TEST

START_TEST(elem_integers_wrap)
{
    int8_t i8[1];
    oac_ek_seti(OAC_T_INT8, i8, 0, 300);          /* 300 - 256 */
    ck_assert_int_eq(i8[0], 44);
    int32_t i32[1];
    oac_ek_seti(OAC_T_INT32, i32, 0, (int64_t)INT32_MAX + 1);
    ck_assert_int_eq(i32[0], INT32_MIN);
    uint8_t b[2] = { 2, 0 };
    ck_assert_int_eq(oac_ek_geti(OAC_T_BOOL, b, 0), 1);   /* any non-zero byte */
    oac_ek_seti(OAC_T_BOOL, b, 1, -5);
    ck_assert_uint_eq(b[1], 1);
    uint32_t u32[1] = { 4000000000u };
    ck_assert_int_eq(oac_ek_geti(OAC_T_UINT32, u32, 0), 4000000000LL);
    ck_assert(oac_ek_in(OAC_T_BFLOAT16, OAC_EKM_FLOAT));
    ck_assert(!oac_ek_in(OAC_T_UINT8, OAC_EKM_NUM));
    ck_assert(!oac_ek_in(0, OAC_EKM_NUM) && !oac_ek_in(40, OAC_EKM_NUM));
}
END_TEST

/* ---- one-node models ---------------------------------------------------- */

/* y = op(a[, b]) over initializers a (type ta) and b (type tb). */
static oac_gb *node2(fx *f, const char *op, const char *domain,
                     int32_t ta, const char *da, const double *a, size_t na,
                     int32_t tb, const char *db, const double *b, size_t nb,
                     int32_t ty)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    if (domain)
        oac_mb_opset(mb, domain, 1);
    kt_init(g, "a", ta, da, a, na);
    if (b)
        kt_init(g, "b", tb, db, b, nb);
    oac_gb_node(g, op, domain, "n", b ? "a,b" : "a", "y");
    oac_gb_output(g, "y", ty, NULL);
    return g;
}

typedef double (*ref2)(double, double);
static double r_add(double x, double z) { return x + z; }
static double r_sub(double x, double z) { return x - z; }
static double r_mul(double x, double z) { return x * z; }
static double r_div(double x, double z) { return x / z; }
static double r_pow(double x, double z) { return pow(x, z); }

static const struct {
    const char *op;
    ref2 f;
} arith[] = { { "Add", r_add }, { "Sub", r_sub }, { "Mul", r_mul }, { "Div", r_div },
              { "Pow", r_pow } };

/* a [2, 3] op b [3] (broadcast over rows) in every float type: the
 * reference is the double result on the stored inputs, rounded like a
 * store; +, -, *, / are then exact, pow within an ulp of the type. */
START_TEST(arith_float_types_broadcast)
{
    const double a[6] = { 1.5, -2.25, 3.0, 0.1, 7.0, -0.375 };
    const double b[3] = { 0.5, 4.0, -3.0 };
    for (size_t o = 0; o < sizeof arith / sizeof arith[0]; o++)
        for (size_t ti = 0; ti < N_FLOAT_TYPES; ti++) {
            int32_t t = float_types[ti];
            fx f;
            node2(&f, arith[o].op, NULL, t, "2,3", a, 6, t, "3", b, 3, t);
            kt_val y;
            ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
            double want[6];
            for (int i = 0; i < 6; i++) {
                double x = kt_round(t, a[i]), z = kt_round(t, b[i % 3]);
                /* pow of a negative base to a non-integer is NaN: skipped
                 * by the choice of b. */
                want[i] = kt_round(t, arith[o].f(x, z));
            }
            double tol = o == 4 ? (t == OAC_T_DOUBLE ? 1e-15 : t == OAC_T_FLOAT ? 2e-7 :
                                   t == OAC_T_FLOAT16 ? 1e-3 : 8e-3) : 0;
            kt_expect(&y, t, "2,3", want, 6, tol);
            kt_free(&y, 1);
            fx_end(&f);
        }
}
END_TEST

/* [2, 1] op [1, 3]: both operands broadcast (numpy's outer form). */
START_TEST(arith_both_sides_broadcast)
{
    const double a[2] = { 10, 20 }, b[3] = { 1, 2, 3 };
    fx f;
    node2(&f, "Sub", NULL, OAC_T_FLOAT16, "2,1", a, 2, OAC_T_FLOAT16, "1,3", b, 3,
          OAC_T_FLOAT16);
    kt_val y;
    ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
    const double want[6] = { 9, 8, 7, 19, 18, 17 };
    kt_expect(&y, OAC_T_FLOAT16, "2,3", want, 6, 0);
    kt_free(&y, 1);
    fx_end(&f);
}
END_TEST

/* INT32 and INT64: C division truncates toward zero; overflow wraps;
 * integer Pow is exact, a negative exponent truncates 1 / x^n. */
START_TEST(arith_integers)
{
    static const int32_t types[] = { OAC_T_INT32, OAC_T_INT64 };
    const double a[4] = { -7, 7, 2147483647.0, -2 };
    const double b[4] = { 2, -2, 1, 3 };
    for (int ti = 0; ti < 2; ti++) {
        int32_t t = types[ti];
        double add_top = t == OAC_T_INT32 ? -2147483648.0 : 2147483648.0;
        const struct { const char *op; double want[4]; } cases[] = {
            { "Add", { -5, 5, add_top, 1 } },
            { "Sub", { -9, 9, 2147483646.0, -5 } },
            { "Mul", { -14, -14, 2147483647.0, -6 } },
            { "Div", { -3, -3, 2147483647.0, 0 } },
            { "Pow", { 49, 0, 2147483647.0, -8 } },   /* 7^-2 truncates to 0 */
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            fx f;
            node2(&f, cases[c].op, NULL, t, "4", a, 4, t, "4", b, 4, t);
            kt_val y;
            ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
            kt_expect(&y, t, "4", cases[c].want, 4, 0);
            kt_free(&y, 1);
            fx_end(&f);
        }
    }
}
END_TEST

/* The other integer types wrap at their width (numpy's arithmetic):
 * UINT8 200 + 100 = 44, 5 - 10 = 251, 16 * 20 = 64; INT8 100 + 100 = -56,
 * -128 / -1 = -128; UINT64 divides and compares unsigned. */
START_TEST(arith_small_and_unsigned_integers)
{
    const struct { const char *op; int32_t t; double a[2], b[2], want[2]; int32_t ty; } c[] = {
        { "Add", OAC_T_UINT8, { 200, 1 }, { 100, 2 }, { 44, 3 }, OAC_T_UINT8 },
        { "Sub", OAC_T_UINT8, { 5, 9 }, { 10, 2 }, { 251, 7 }, OAC_T_UINT8 },
        { "Mul", OAC_T_UINT8, { 16, 3 }, { 20, 3 }, { 64, 9 }, OAC_T_UINT8 },
        { "Div", OAC_T_UINT8, { 250, 7 }, { 7, 250 }, { 35, 0 }, OAC_T_UINT8 },
        { "Add", OAC_T_INT8, { 100, -100 }, { 100, -100 }, { -56, 56 }, OAC_T_INT8 },
        { "Div", OAC_T_INT8, { -128, -7 }, { -1, 2 }, { -128, -3 }, OAC_T_INT8 },
        { "Div", OAC_T_UINT64, { 9223372036854775808.0, 6 }, { 2, 4 },
          { 4611686018427387904.0, 1 }, OAC_T_UINT64 },
        { "Greater", OAC_T_UINT64, { 9223372036854775808.0, 1 }, { 1, 2 }, { 1, 0 },
          OAC_T_BOOL },
        { "Less", OAC_T_UINT32, { 4000000000.0, 1 }, { 1, 2 }, { 0, 1 }, OAC_T_BOOL },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        fx f;
        node2(&f, c[i].op, NULL, c[i].t, "2", c[i].a, 2, c[i].t, "2", c[i].b, 2, c[i].ty);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        kt_expect(&y, c[i].ty, "2", c[i].want, 2, 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

/* Pow's exponent has its own type: FLOAT16 base, INT64 exponent. */
START_TEST(pow_mixed_exponent)
{
    const double a[3] = { 2, -3, 0.5 }, b[3] = { 3, 2, -2 };
    fx f;
    node2(&f, "Pow", NULL, OAC_T_FLOAT16, "3", a, 3, OAC_T_INT64, "3", b, 3, OAC_T_FLOAT16);
    kt_val y;
    ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
    const double want[3] = { 8, 9, 4 };
    kt_expect(&y, OAC_T_FLOAT16, "3", want, 3, 0);
    kt_free(&y, 1);
    fx_end(&f);
}
END_TEST

START_TEST(arith_empty_tensor)
{
    const double b[3] = { 1, 2, 3 };
    fx f;
    node2(&f, "Mul", NULL, OAC_T_FLOAT, "0,3", NULL, 0, OAC_T_FLOAT, "3", b, 3, OAC_T_FLOAT);
    kt_val y;
    ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
    kt_expect(&y, OAC_T_FLOAT, "0,3", NULL, 0, 0);
    kt_free(&y, 1);
    fx_end(&f);
}
END_TEST

/* ---- unary maths ---------------------------------------------------- */

static double r_neg(double x) { return -x; }
static double r_abs(double x) { return fabs(x); }
static double r_relu(double x) { return x > 0 ? x : 0; }
static double r_sqrt(double x) { return sqrt(x); }
static double r_exp(double x) { return exp(x); }
static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double r_recip(double x) { return 1 / x; }
/* Gelu by its definition x * Phi(x), Phi through erfc. */
static double r_gelu(double x) { return x * 0.5 * erfc(-x / sqrt(2.0)); }
static double r_gelu_tanh(double x)
{
    return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * pow(x, 3))));
}

static const struct {
    const char *op;
    double (*f)(double);
    bool exact;         /* correctly rounded in the type */
    bool positive;      /* only for x > 0 */
} unaries[] = {
    { "Neg", r_neg, true, false }, { "Abs", r_abs, true, false },
    { "Relu", r_relu, true, false }, { "Sqrt", r_sqrt, true, true },
    { "Exp", r_exp, false, false }, { "Sigmoid", r_sigmoid, false, false },
    { "Tanh", tanh, false, false }, { "Erf", erf, false, false },
    { "Reciprocal", r_recip, true, false }, { "Gelu", r_gelu, false, false },
    { "Log", log, false, true },
};

START_TEST(unary_float_types)
{
    const double xs[6] = { -2.5, -0.75, 0.125, 0.5, 1.0, 3.0 };
    const double ps[6] = { 0.25, 0.5, 1.0, 2.0, 9.0, 1e-3 };
    for (size_t o = 0; o < sizeof unaries / sizeof unaries[0]; o++)
        for (size_t ti = 0; ti < N_FLOAT_TYPES; ti++) {
            int32_t t = float_types[ti];
            const double *x = unaries[o].positive ? ps : xs;
            fx f;
            node2(&f, unaries[o].op, NULL, t, "2,3", x, 6, 0, NULL, NULL, 0, t);
            kt_val y;
            ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
            double want[6];
            for (int i = 0; i < 6; i++)
                want[i] = kt_round(t, unaries[o].f(kt_round(t, x[i])));
            double tol = unaries[o].exact ? 0 : t == OAC_T_DOUBLE ? 1e-14 :
                         t == OAC_T_FLOAT ? 3e-7 : t == OAC_T_FLOAT16 ? 1e-3 : 8e-3;
            kt_expect(&y, t, "2,3", want, 6, tol);
            kt_free(&y, 1);
            fx_end(&f);
        }
}
END_TEST

/* Values worked out by hand: Gelu(1) = Phi(1) = 0.841344746...,
 * Gelu(-1) = -(1 - Phi(1)); the tanh form at 1: 0.5 (1 + tanh(0.7978845608
 * * 1.044715)) = 0.841191990...; Sigmoid(0) = 0.5; Erf(0) = 0. */
START_TEST(unary_hand_values)
{
    const double x[3] = { 1, -1, 0 };
    struct { const char *op, *approx; double want[3]; } c[] = {
        { "Gelu", NULL, { 0.8413447460685429, -0.15865525393145707, 0 } },
        { "Gelu", "tanh", { 0.8411919906082768, -0.15880800939172324, 0 } },
        { "Sigmoid", NULL, { 0.7310585786300049, 0.2689414213699951, 0.5 } },
    };
    for (size_t i = 0; i < 3; i++) {
        fx f;
        oac_gb *g = node2(&f, c[i].op, NULL, OAC_T_DOUBLE, "3", x, 3, 0, NULL, NULL, 0,
                          OAC_T_DOUBLE);
        if (c[i].approx)
            oac_node_attr_string(g, oac_gb_proto(g)->node[0], "approximate", c[i].approx);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        kt_expect(&y, OAC_T_DOUBLE, "3", c[i].want, 3, 1e-15);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

/* A kernel-error about an attribute names it in the message but leaves
 * the diagnostic's value field empty (it is no value of the graph); one
 * about an input fills it (check_kernel_linalg's matmul row). */
START_TEST(attribute_error_has_no_value)
{
    const double x[3] = { 1, -1, 0 };
    fx f;
    oac_gb *g = node2(&f, "Gelu", NULL, OAC_T_DOUBLE, "3", x, 3, 0, NULL, NULL, 0,
                      OAC_T_DOUBLE);
    oac_node_attr_string(g, oac_gb_proto(g)->node[0], "approximate", "bogus");
    kt_val y;
    ck_assert_int_ne(kt_run(&f, false, "y", &y, 1), OAC_OK);
    const oac_diag *d = diag_find(f.d, OAC_KERNEL_ERROR, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_nonnull(strstr(d->message, "'approximate'"));
    ck_assert_ptr_null(d->value);
    fx_end(&f);
}
END_TEST

/* Log at its edges: log(0) = -inf, log(-1) = NaN, log(1) = 0, log(e) = 1. */
START_TEST(log_edges)
{
    const double x[4] = { 0, -1, 1, 2.718281828459045 };
    const double want[4] = { -INFINITY, NAN, 0, 1 };
    fx f;
    node2(&f, "Log", NULL, OAC_T_DOUBLE, "4", x, 4, 0, NULL, NULL, 0, OAC_T_DOUBLE);
    kt_val y;
    ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
    kt_expect(&y, OAC_T_DOUBLE, "4", want, 4, 1e-15);
    kt_free(&y, 1);
    fx_end(&f);
}
END_TEST

/* Max and Min of three inputs [2, 3], [3], [2, 1] broadcast together,
 * in every float type and INT64 / UINT64; a NaN operand gives NaN; one
 * input is a copy; mixed types are kernel-error naming the input. */
static void extremum_case(const char *op, int32_t t, int n_in, const double *want,
                          const char *dims)
{
    const double a[6] = { 1, -2, 3, 0.5, 7, -4 }, b[3] = { 2, -3, 2.5 }, c[2] = { 0, 5 };
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    kt_init(g, "a", t, "2,3", a, 6);
    kt_init(g, "b", t, "3", b, 3);
    kt_init(g, "c", t, "2,1", c, 2);
    oac_gb_node(g, op, NULL, "n", n_in == 1 ? "a" : "a,b,c", "y");
    oac_gb_output(g, "y", t, NULL);
    kt_val y;
    ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
    kt_expect(&y, t, dims, want, 6, 0);
    kt_free(&y, 1);
    fx_end(&f);
}

START_TEST(max_min_variadic)
{
    const double mx[6] = { 2, 0, 3, 5, 7, 5 }, mn[6] = { 0, -3, 0, 0.5, -3, -4 };
    const double a[6] = { 1, -2, 3, 0.5, 7, -4 };
    const double mxi[6] = { 2, 0, 3, 5, 7, 5 }, mni[6] = { 0, -3, 0, 0, -3, -4 };
    for (size_t ti = 0; ti < N_FLOAT_TYPES; ti++) {
        extremum_case("Max", float_types[ti], 3, mx, "2,3");
        extremum_case("Min", float_types[ti], 3, mn, "2,3");
        extremum_case("Max", float_types[ti], 1, a, "2,3");
    }
    /* INT64 truncates 0.5 and 2.5 at kt_init. */
    extremum_case("Max", OAC_T_INT64, 3, mxi, "2,3");
    extremum_case("Min", OAC_T_INT64, 3, mni, "2,3");

    const double x[3] = { NAN, 1, 2 }, z[3] = { 0, NAN, 1 };
    const double wmax[3] = { NAN, NAN, 2 }, wmin[3] = { NAN, NAN, 1 };
    for (int m = 0; m < 2; m++) {
        fx f;
        node2(&f, m ? "Min" : "Max", NULL, OAC_T_FLOAT, "3", x, 3, OAC_T_FLOAT, "3", z, 3,
              OAC_T_FLOAT);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        kt_expect(&y, OAC_T_FLOAT, "3", m ? wmin : wmax, 3, 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
    /* UINT64 compares unsigned: 2^63 is larger than 1. */
    const double u[2] = { 9223372036854775808.0, 1 }, w[2] = { 1, 3 };
    const double umax[2] = { 9223372036854775808.0, 3 };
    fx f;
    node2(&f, "Max", NULL, OAC_T_UINT64, "2", u, 2, OAC_T_UINT64, "2", w, 2, OAC_T_UINT64);
    kt_val y;
    ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
    ck_assert_uint_eq((uint64_t)kt_get_i64(&y, 0), (uint64_t)1 << 63);
    ck_assert_int_eq(kt_get_i64(&y, 1), 3);
    (void)umax;
    kt_free(&y, 1);
    fx_end(&f);
}
END_TEST

START_TEST(max_mixed_types_refused)
{
    const double a[2] = { 1, 2 };
    fx f;
    node2(&f, "Max", NULL, OAC_T_FLOAT, "2", a, 2, OAC_T_DOUBLE, "2", a, 2, OAC_T_FLOAT);
    kt_run_fail(&f, OAC_KERNEL_ERROR, "n");
    fx_end(&f);
}
END_TEST

START_TEST(unary_integers)
{
    const double x[4] = { -5, 0, 7, -2147483648.0 };
    struct { const char *op; double want[4]; } c[] = {
        { "Neg", { 5, 0, -7, -2147483648.0 } },   /* -INT32_MIN wraps to itself */
        { "Abs", { 5, 0, 7, -2147483648.0 } },
        { "Relu", { 0, 0, 7, 0 } },
    };
    for (size_t i = 0; i < 3; i++) {
        fx f;
        node2(&f, c[i].op, NULL, OAC_T_INT32, "4", x, 4, 0, NULL, NULL, 0, OAC_T_INT32);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        kt_expect(&y, OAC_T_INT32, "4", c[i].want, 4, 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

/* com.microsoft FastGelu(X, bias): the tanh form of Gelu(X + bias),
 * bias over the last dim. */
START_TEST(fast_gelu_bias)
{
    const double x[4] = { 0.5, -1, 2, 0 }, bias[2] = { 0.5, 1 };
    for (int withb = 0; withb < 2; withb++) {
        fx f;
        node2(&f, "FastGelu", "com.microsoft", OAC_T_FLOAT16, "2,2", x, 4, OAC_T_FLOAT16,
              "2", withb ? bias : NULL, 2, OAC_T_FLOAT16);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        double want[4];
        for (int i = 0; i < 4; i++)
            want[i] = kt_round(OAC_T_FLOAT16, r_gelu_tanh(x[i] + (withb ? bias[i % 2] : 0)));
        kt_expect(&y, OAC_T_FLOAT16, "2,2", want, 4, 1e-3);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

/* ---- comparisons, logic, Where ---------------------------------------- */

START_TEST(compare_ops)
{
    const double a[4] = { 1, 2, NAN, -4 }, b[2] = { 2, -4 };
    /* a [2, 2] against b [2]: pairs (1,2) (2,-4) (NaN,2) (-4,-4). */
    const struct { const char *op; double want[4]; } c[] = {
        { "Equal", { 0, 0, 0, 1 } },
        { "Less", { 1, 0, 0, 0 } },
        { "LessOrEqual", { 1, 0, 0, 1 } },
        { "Greater", { 0, 1, 0, 0 } },
        { "GreaterOrEqual", { 0, 1, 0, 1 } },
    };
    static const int32_t types[] = { OAC_T_FLOAT, OAC_T_FLOAT16, OAC_T_BFLOAT16,
                                     OAC_T_DOUBLE, OAC_T_INT32, OAC_T_INT64, OAC_T_INT8,
                                     OAC_T_UINT8 };
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            int32_t t = types[ti];
            bool fl = oac_ek_is_float(t);
            /* Integers have no NaN: element 2 is 7 there (7 vs 2); UINT8
             * has no -4: 250 vs 250 keeps the last pair equal. */
            double ai[4] = { a[0], a[1], fl ? a[2] : 7, t == OAC_T_UINT8 ? 250 : a[3] };
            double bi[2] = { b[0], t == OAC_T_UINT8 ? 250 : b[1] };
            fx f;
            node2(&f, c[i].op, NULL, t, "2,2", ai, 4, t, "2", bi, 2, OAC_T_BOOL);
            kt_val y;
            ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
            double want[4];
            memcpy(want, c[i].want, sizeof want);
            if (!fl)   /* 7 against 2 */
                want[2] = i == 3 || i == 4;
            if (t == OAC_T_UINT8)   /* 2 against 250 */
                want[1] = i == 1 || i == 2;
            kt_expect(&y, OAC_T_BOOL, "2,2", want, 4, 0);
            kt_free(&y, 1);
            fx_end(&f);
        }
}
END_TEST

START_TEST(logic_truth_tables)
{
    const double a[4] = { 0, 0, 1, 1 }, b[4] = { 0, 1, 0, 1 };
    const struct { const char *op; double want[4]; } c[] = {
        { "And", { 0, 0, 0, 1 } }, { "Or", { 0, 1, 1, 1 } }, { "Equal", { 1, 0, 0, 1 } },
        { "Not", { 1, 1, 0, 0 } },
    };
    for (size_t i = 0; i < 4; i++) {
        fx f;
        bool un = i == 3;
        node2(&f, c[i].op, NULL, OAC_T_BOOL, "4", a, 4, OAC_T_BOOL, "4", un ? NULL : b, 4,
              OAC_T_BOOL);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        kt_expect(&y, OAC_T_BOOL, "4", c[i].want, 4, 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

/* Where(cond [2, 1], X [1, 3], Y scalar): the three broadcast. */
START_TEST(where_broadcast_three_ways)
{
    static const int32_t types[] = { OAC_T_FLOAT16, OAC_T_INT64, OAC_T_BOOL, OAC_T_DOUBLE };
    const double c[2] = { 1, 0 }, x[3] = { 1, 0, 3 }, z[1] = { 9 };
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        int32_t t = types[ti];
        fx f;
        oac_gb *g = fx_build(&f, NULL);
        kt_init(g, "c", OAC_T_BOOL, "2,1", c, 2);
        kt_init(g, "x", t, "1,3", x, 3);
        kt_init(g, "z", t, "", z, 1);
        oac_gb_node(g, "Where", NULL, "w", "c,x,z", "y");
        oac_gb_output(g, "y", t, "2,3");
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        double nine = t == OAC_T_BOOL ? 1 : 9;
        double want[6] = { 1, 0, t == OAC_T_BOOL ? 1 : 3, nine, nine, nine };
        kt_expect(&y, t, "2,3", want, 6, 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

/* ---- Cast ------------------------------------------------------------- */

START_TEST(cast_matrix)
{
    const double h = ldexp(1, -11);
    const struct {
        int32_t from, to;
        double in[4], want[4];
    } c[] = {
        /* FLOAT to FLOAT16 rounds to nearest even (1 + 2^-11 -> 1), and
         * overflows to infinity. */
        { OAC_T_FLOAT, OAC_T_FLOAT16, { 1 + h, 1 + 3 * h, 70000, -0.0 },
          { 1, 1 + 4 * h, INFINITY, -0.0 } },
        { OAC_T_FLOAT16, OAC_T_FLOAT, { 1 + 4 * h, 65504, -2, 0.5 },
          { 1 + 4 * h, 65504, -2, 0.5 } },
        { OAC_T_FLOAT, OAC_T_BFLOAT16, { 1 + ldexp(1, -8), 3, -1e38, 0 },
          { 1, 3, kt_round(OAC_T_BFLOAT16, -1e38), 0 } },
        { OAC_T_BFLOAT16, OAC_T_DOUBLE, { 1.5, -3, 0.25, 256 }, { 1.5, -3, 0.25, 256 } },
        /* DOUBLE to FLOAT rounds once. */
        { OAC_T_DOUBLE, OAC_T_FLOAT, { 0.1, 1e300, -1e-50, 3 },
          { (float)0.1, INFINITY, -0.0, 3 } },
        /* Float to integer truncates toward zero and saturates. */
        { OAC_T_FLOAT, OAC_T_INT32, { -3.7, 3.7, 1e10, -1e10 },
          { -3, 3, 2147483647.0, -2147483648.0 } },
        { OAC_T_FLOAT16, OAC_T_INT64, { -2.5, 1000, 0, -0.0 }, { -2, 1000, 0, 0 } },
        /* Integer to integer keeps the low bits. */
        { OAC_T_INT64, OAC_T_INT8, { 300, -129, 127, -1 }, { 44, 127, 127, -1 } },
        { OAC_T_UINT8, OAC_T_INT64, { 255, 0, 1, 128 }, { 255, 0, 1, 128 } },
        /* BOOL both ways; NaN is true. */
        { OAC_T_FLOAT, OAC_T_BOOL, { NAN, 0, -0.5, 2 }, { 1, 0, 1, 1 } },
        { OAC_T_BOOL, OAC_T_FLOAT16, { 1, 0, 1, 0 }, { 1, 0, 1, 0 } },
        { OAC_T_INT32, OAC_T_BFLOAT16, { 257, -3, 0, 1 }, { 256, -3, 0, 1 } },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        fx f;
        oac_gb *g = node2(&f, "Cast", NULL, c[i].from, "4", c[i].in, 4, 0, NULL, NULL, 0,
                          c[i].to);
        oac_node_attr_int(g, oac_gb_proto(g)->node[0], "to", c[i].to);
        kt_val y;
        ck_assert_int_eq(kt_run(&f, true, "y", &y, 1), OAC_OK);
        kt_expect(&y, c[i].to, "4", c[i].want, 4, 0);
        kt_free(&y, 1);
        fx_end(&f);
    }
}
END_TEST

/* ---- refusals ------------------------------------------------------- */

START_TEST(unimplemented_types_named)
{
    const double v[2] = { 1, 2 };
    const struct { const char *op; int32_t t; const char *name; } c[] = {
        { "Neg", OAC_T_UINT8, "UINT8" },       /* ONNX's Neg: signed types only */
        { "Sqrt", OAC_T_INT32, "INT32" },      /* float maths only */
        { "Less", OAC_T_BOOL, "BOOL" },
        { "Not", OAC_T_FLOAT, "FLOAT" },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        fx f;
        bool two = i == 2;
        node2(&f, c[i].op, NULL, c[i].t, "2", v, 2, c[i].t, "2", two ? v : NULL, 2,
              i == 2 || i == 3 ? OAC_T_BOOL : c[i].t);
        kt_run_fail(&f, OAC_UNSUPPORTED_OPERATOR, "n");
        const oac_diag *d = diag_find(f.d, OAC_UNSUPPORTED_OPERATOR, "n", NULL, NULL);
        ck_assert_msg(strstr(d->message, c[i].name), "%s", d->message);
        fx_end(&f);
    }
}
END_TEST

START_TEST(mixed_types_refused)
{
    const double v[2] = { 1, 2 };
    fx f;
    node2(&f, "Add", NULL, OAC_T_FLOAT, "2", v, 2, OAC_T_FLOAT16, "2", v, 2, OAC_T_FLOAT);
    kt_run_fail(&f, OAC_KERNEL_ERROR, "n");
    ck_assert_ptr_nonnull(strstr(diag_find(f.d, OAC_KERNEL_ERROR, NULL, NULL, NULL)->message,
                                 "'b'"));
    fx_end(&f);
}
END_TEST

/* Integer division by zero (kernel-error naming the divisor) against the
 * same model with a non-zero divisor; shapes that do not broadcast
 * against shapes that do. */
static void int_div(fx *f, double z)
{
    const double a[2] = { 4, 5 }, b[2] = { 2, z };
    node2(f, "Div", NULL, OAC_T_INT64, "2", a, 2, OAC_T_INT64, "2", b, 2, OAC_T_INT64);
    kt_val y;
    if (kt_run(f, true, "y", &y, 1) == OAC_OK)
        kt_free(&y, 1);
}

static void div_by_zero(fx *f) { int_div(f, 0); }
static void div_by_one(fx *f) { int_div(f, 1); }

static void bcast_pair(fx *f, const char *db)
{
    const double a[6] = { 1, 2, 3, 4, 5, 6 }, b[3] = { 1, 1, 1 };
    node2(f, "Mul", NULL, OAC_T_FLOAT, "2,3", a, 6, OAC_T_FLOAT, db, b, 3, OAC_T_FLOAT);
    kt_val y;
    if (kt_run(f, false, "y", &y, 1) == OAC_OK)
        kt_free(&y, 1);
}

static void bcast_bad(fx *f) { bcast_pair(f, "3,1"); }
static void bcast_ok(fx *f) { bcast_pair(f, "1,3"); }

static const scene_case math_rows[] = {
    { "int_div_by_zero", div_by_zero, WANT(OAC_KERNEL_ERROR), "n", NULL, NULL },
    { "int_div_by_one", div_by_one, NEAR(OAC_KERNEL_ERROR) },
    { "no_broadcast", bcast_bad, WANT(OAC_KERNEL_ERROR), "n", NULL, NULL },
    { "broadcast", bcast_ok, NEAR(OAC_KERNEL_ERROR) },
};
CASES_TEST(math_rows)

Suite *test_suite(void)
{
    Suite *s = suite_create("kernel_math");
    TCase *tc = tcase_create("kernel_math");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, elem_store_rounds_to_nearest_even);
    tcase_add_test(tc, log_edges);
    tcase_add_test(tc, max_min_variadic);
    tcase_add_test(tc, max_mixed_types_refused);
    tcase_add_test(tc, elem_integers_wrap);
    tcase_add_test(tc, arith_float_types_broadcast);
    tcase_add_test(tc, arith_both_sides_broadcast);
    tcase_add_test(tc, arith_integers);
    tcase_add_test(tc, arith_small_and_unsigned_integers);
    tcase_add_test(tc, pow_mixed_exponent);
    tcase_add_test(tc, arith_empty_tensor);
    tcase_add_test(tc, unary_float_types);
    tcase_add_test(tc, unary_hand_values);
    tcase_add_test(tc, attribute_error_has_no_value);
    tcase_add_test(tc, unary_integers);
    tcase_add_test(tc, fast_gelu_bias);
    tcase_add_test(tc, compare_ops);
    tcase_add_test(tc, logic_truth_tables);
    tcase_add_test(tc, where_broadcast_three_ways);
    tcase_add_test(tc, cast_matrix);
    tcase_add_test(tc, unimplemented_types_named);
    tcase_add_test(tc, mixed_types_refused);
    ADD_CASES(tc, math_rows);
    suite_add_tcase(s, tc);
    return s;
}

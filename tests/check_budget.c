/* check_budget.c: the run's memory budget (lib/run/budget.c, run/alloc.c
 * invariant 5; contract 8 `memory-budget`; issue 12 item 6).
 *
 * Acceptance: a run whose known need passes the budget is refused before
 * anything is allocated, naming the budget, the need and where it peaks
 * (a model planning 128 GiB too); the need counts input data and every
 * session; what the pre-check cannot see (a body whose trip count is an
 * input default, pages created step after step) is refused when it is
 * allocated, at its node, naming the value; a budget the run fits in
 * (its memory_peak_bytes) lets it run; the counter itself never passes
 * its limit and comes back to 0.
 */
#include <pthread.h>

#include "harness.h"
#include "run/kernel_api.h"

/* x FLOAT[n] -> Neg -> y0 .. y(copies-1), all graph outputs. */
static void neg_copies(fx *f, const char *n, int copies)
{
    oac_gb *g = fx_build(f, NULL);
    oac_gb_input(g, "x", OAC_T_FLOAT, n);
    for (int i = 0; i < copies; i++) {
        char y[16];
        snprintf(y, sizeof y, "y%d", i);
        oac_gb_node(g, "Neg", NULL, y, "x", y);
        oac_gb_output(g, y, OAC_T_FLOAT, n);
    }
    fx_load(f);
}

static int run_budget(fx *f, uint64_t budget, uint64_t steps, unsigned sessions)
{
    oac_run_opts ro = { .steps = steps, .max_memory = budget, .sessions = sessions };
    return fx_check_run(f, NULL, 0, NULL, 0, &ro, NULL);
}

/* ---- before anything is allocated ----------------------------------------- */

START_TEST(plan_of_128_gib_refused_before_allocating)
{
    /* Eight graph outputs of 2^32 floats: the plan peaks at 128 GiB at
     * the last Neg, on top of the 16 GiB input.  With a budget of 1 GiB
     * the run allocates nothing: it returns at once, measures nothing and
     * holds nothing. */
    fx f;
    neg_copies(&f, "4294967296", 8);
    unsigned long before = oac_ctx_alloc_count(f.ctx);
    ck_assert_int_eq(run_budget(&f, (uint64_t)1 << 30, 1, 1), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_MEMORY_BUDGET), 1);
    ck_assert_uint_eq(oac_diags_count(f.d), 1);
    const oac_diag *d = diag_expect_run(f.d, OAC_MEMORY_BUDGET, "memory-budget");
    ck_assert_str_eq(d->node, "y7");
    ck_assert_str_eq(d->location, "/graph/node/7");
    /* 9 * 2^34 bytes needed, the budget 2^30. */
    ck_assert_ptr_nonnull(strstr(d->message, "154618822656 bytes"));
    ck_assert_ptr_nonnull(strstr(d->message, "budget of 1073741824 bytes"));
    ck_assert_ptr_nonnull(strstr(d->message, "137438953472"));   /* the plan */
    ck_assert_uint_eq(f.e->steps_completed, 0);
    ck_assert_uint_eq(f.e->measured_peak_bytes, 0);
    ck_assert_uint_eq(f.e->memory_peak_bytes, 0);
    /* Checking took allocations; the refused run only its bookkeeping
     * (tables per node and value, the decoder's: about 150 here), none of
     * them tensor data: memory_peak_bytes above counts every byte of
     * that. */
    ck_assert_uint_lt(oac_ctx_alloc_count(f.ctx) - before, 250);
    fx_end(&f);
}
END_TEST

START_TEST(need_counts_inputs_and_sessions)
{
    /* x FLOAT[262144] (1 MiB) -> Neg: each session holds its copy of x
     * and the plan's 1 MiB.  One session needs 2 MiB, four need 8. */
    const uint64_t mib = 1 << 20;
    fx f;
    neg_copies(&f, "262144", 1);
    ck_assert_int_eq(run_budget(&f, 2 * mib, 1, 1), OAC_OK);
    ck_assert_uint_eq(f.e->memory_peak_bytes, 2 * mib);
    fx_end(&f);
    neg_copies(&f, "262144", 1);
    ck_assert_int_eq(run_budget(&f, 2 * mib - 1, 1, 1), OAC_ERUNTIME);
    const oac_diag *d = diag_expect_run(f.d, OAC_MEMORY_BUDGET, "memory-budget");
    ck_assert_ptr_nonnull(strstr(d->message, "2097152 bytes"));
    fx_end(&f);
    neg_copies(&f, "262144", 1);
    ck_assert_int_eq(run_budget(&f, 6 * mib, 1, 4), OAC_ERUNTIME);
    d = diag_expect_run(f.d, OAC_MEMORY_BUDGET, "memory-budget");
    ck_assert_ptr_nonnull(strstr(d->message, "8388608 bytes"));
    ck_assert_ptr_nonnull(strstr(d->message, "every session"));
    fx_end(&f);
    neg_copies(&f, "262144", 1);
    ck_assert_int_eq(run_budget(&f, 8 * mib, 2, 4), OAC_OK);
    ck_assert_uint_le(f.e->memory_peak_bytes, 8 * mib);
    fx_end(&f);
}
END_TEST

/* ---- when it is allocated ---------------------------------------------------- */

/* Loop(M, , x) whose body negates the carried x (FLOAT[262144], 1 MiB);
 * M is an input whose initializer default (1) the check does not take
 * as known, so the pre-check leaves the body out. */
static void loop_on_default(fx *f)
{
    oac_gb *g = fx_build(f, NULL);
    oac_gb_input(g, "M", OAC_T_INT64, "");
    int64_t one = 1;
    oac_gb_init_i64(g, "M", "", &one, 1);
    oac_gb_input(g, "x", OAC_T_FLOAT, "262144");
    Onnx__NodeProto *n = oac_gb_node(g, "Loop", NULL, "loop", "M,,x", "z");
    oac_gb *b = oac_node_attr_graph(g, n, "body", "body_g");
    oac_gb_input(b, "i", OAC_T_INT64, "");
    oac_gb_input(b, "cond_in", OAC_T_BOOL, "");
    oac_gb_input(b, "x_in", OAC_T_FLOAT, "262144");
    oac_gb_node(b, "Identity", NULL, "keep", "cond_in", "cond_out");
    oac_gb_node(b, "Neg", NULL, "body_neg", "x_in", "x_out");
    oac_gb_output(b, "cond_out", OAC_T_BOOL, "");
    oac_gb_output(b, "x_out", OAC_T_FLOAT, "262144");
    oac_gb_output(g, "z", OAC_T_FLOAT, "262144");
    fx_load(f);
}

START_TEST(body_refused_when_allocated)
{
    /* The run holds x's copy and z (2 MiB and a few bytes) when the body
     * asks for x_out: past 2.5 MiB, refused at the inner node, naming
     * the value; the Loop step does not complete. */
    const uint64_t mib = 1 << 20;
    fx f;
    loop_on_default(&f);
    ck_assert_int_eq(run_budget(&f, 5 * mib / 2, 1, 1), OAC_ERUNTIME);
    ck_assert_uint_eq(oac_diags_count(f.d), 1);
    const oac_diag *d = diag_expect_run(f.d, OAC_MEMORY_BUDGET, "memory-budget");
    ck_assert_str_eq(d->node, "body_neg");
    ck_assert_str_eq(d->value, "x_out");
    ck_assert_str_eq(d->location, "/graph/node/0/attribute/0/g/node/1");
    ck_assert_ptr_nonnull(strstr(d->message, "1048576 bytes"));
    ck_assert_ptr_nonnull(strstr(d->message, "budget of 2621440 bytes"));
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
    /* 3 MiB and the few bytes of M fit. */
    loop_on_default(&f);
    ck_assert_int_eq(run_budget(&f, 3 * mib + 64, 2, 1), OAC_OK);
    ck_assert_uint_eq(f.e->steps_completed, 2);
    fx_end(&f);
}
END_TEST

/* The paged example for `steps` steps within `budget` (0: none); a new
 * page (128 bytes) every 16 steps. */
static void paged_steps(fx *f, uint64_t steps, uint64_t budget, int want)
{
    fx_example(f, "paged_cache");
    oac_run_opts ro = { .steps = steps, .max_memory = budget };
    ck_assert_int_eq(fx_check_run(f, NULL, 0, NULL, 0, &ro, NULL), want);
}

/* What 32 steps (two pages) hold at most. */
static uint64_t two_pages(void)
{
    fx f;
    paged_steps(&f, 32, 0, OAC_OK);
    uint64_t peak = f.e->memory_peak_bytes;
    fx_end(&f);
    return peak;
}

/* The third page (step 33) passes a budget that holds two. */
static void third_page(fx *f)
{
    paged_steps(f, 40, two_pages(), OAC_ERUNTIME);
    ck_assert_uint_eq(f->e->steps_completed, 32);
}
static void two_pages_fit(fx *f)
{
    paged_steps(f, 32, two_pages(), OAC_OK);
}

/* x FLOAT[262144] -> Neg within 2 MiB (exactly its need), or one byte
 * less. */
static void neg_budget(fx *f, uint64_t budget, int want)
{
    neg_copies(f, "262144", 1);
    ck_assert_int_eq(run_budget(f, budget, 1, 1), want);
}
static void neg_over(fx *f) { neg_budget(f, (2 << 20) - 1, OAC_ERUNTIME); }
static void neg_fits(fx *f) { neg_budget(f, 2 << 20, OAC_OK); }

static const scene_case budget_rows[] = {
    { "neg_over", neg_over, WANT(OAC_MEMORY_BUDGET), NULL, "x", NULL },
    { "neg_fits", neg_fits, NEAR(OAC_MEMORY_BUDGET) },
    { "third_page", third_page, WANT(OAC_MEMORY_BUDGET), "update", NULL, NULL },
    { "two_pages_fit", two_pages_fit, NEAR(OAC_MEMORY_BUDGET) },
};
CASES_TEST(budget_rows)

START_TEST(fed_back_past_refused_at_a_later_step)
{
    /* toy_decoder_concat grows its caches: each step copies the presents
     * back as the next pasts, so the run's peak is at its last step.
     * Every budget from just below that peak down to what the pre-check
     * refuses stops the run with memory-budget, an explained stop, where
     * it stopped (a node's output, or a past fed back between steps: that
     * one was analysis-failed, an out-of-memory status, exit 2). */
    fx f;
    fx_example(&f, "toy_decoder_concat");
    ck_assert_int_eq(run_budget(&f, 0, 4, 1), OAC_OK);
    uint64_t peak = f.e->memory_peak_bytes;
    fx_end(&f);
    unsigned fed_back = 0, later = 0;
    for (uint64_t b = peak - 1; b >= 4; b -= 4) {
        fx_example(&f, "toy_decoder_concat");
        ck_assert_int_eq(run_budget(&f, b, 4, 1), OAC_ERUNTIME);
        ck_assert_uint_eq(diag_count(f.d, OAC_ANALYSIS_FAILED), 0);
        const oac_diag *d = diag_expect_run(f.d, OAC_MEMORY_BUDGET, "memory-budget");
        bool before_first = f.e->steps_completed == 0 && strstr(d->message, "before its first");
        later += !before_first;
        fed_back += strstr(d->message, "fed back") != NULL;
        fx_end(&f);
        if (before_first)
            break;
    }
    ck_assert_uint_gt(later, 0);
    ck_assert_uint_gt(fed_back, 0);
}
END_TEST

START_TEST(per_buffer_limit_without_budget)
{
    /* No budget (0): the 16 GiB per-buffer limit still holds, as
     * memory-budget, never unsupported-operator.  A 2^36-float input is
     * refused before the first step, naming it. */
    fx f;
    neg_copies(&f, "65536,1048576", 1);
    ck_assert_int_eq(run_budget(&f, 0, 1, 1), OAC_ERUNTIME);
    const oac_diag *d = diag_expect_run(f.d, OAC_MEMORY_BUDGET, "memory-budget");
    ck_assert_ptr_nonnull(strstr(d->message, "'x'"));
    ck_assert_ptr_nonnull(strstr(d->message, "per buffer"));
    ck_assert_uint_eq(diag_count(f.d, OAC_UNSUPPORTED_OPERATOR), 0);
    fx_end(&f);
}
END_TEST

/* ---- the counter ---------------------------------------------------------------- */

START_TEST(counter_never_passes_its_limit)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_membudget b;
    oac_membudget_init(&b, 100);
    ck_assert_int_eq(oac_membudget_take(&b, ctx, 60), OAC_OK);
    ck_assert_int_eq(oac_membudget_take(&b, ctx, 41), OAC_EBUDGET);
    ck_assert_ptr_nonnull(strstr(oac_errmsg(ctx), "101 bytes"));
    ck_assert_ptr_nonnull(strstr(oac_errmsg(ctx), "budget of 100"));
    ck_assert_uint_eq(atomic_load(&b.used), 60);
    ck_assert_int_eq(oac_membudget_take(&b, ctx, 40), OAC_OK);
    ck_assert_int_eq(oac_membudget_take(&b, ctx, UINT64_MAX), OAC_EBUDGET);
    oac_membudget_give(&b, 100);
    ck_assert_uint_eq(atomic_load(&b.used), 0);
    ck_assert_uint_eq(atomic_load(&b.peak), 100);
    /* No limit: counted, never refused (short of wrapping). */
    oac_membudget_init(&b, 0);
    ck_assert_int_eq(oac_membudget_take(&b, ctx, UINT64_MAX - 1), OAC_OK);
    ck_assert_int_eq(oac_membudget_take(&b, ctx, 2), OAC_EBUDGET);
    /* The allocator takes and gives back through it; a refusal
     * allocates and counts nothing. */
    oac_membudget_init(&b, 1000);
    oac_ralloc a;
    oac_ralloc_init(&a, ctx);
    a.budget = &b;
    void *p = oac_ralloc_get(&a, 600, false);
    void *q = oac_ralloc_bound(&a, 300);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(q);
    ck_assert_ptr_null(oac_ralloc_get(&a, 101, true));
    ck_assert_int_eq(oac_ralloc_failed(&a), OAC_EBUDGET);
    ck_assert_uint_eq(a.calls, 1);
    ck_assert_uint_eq(a.live, 600);
    ck_assert_uint_eq(atomic_load(&b.used), 900);
    oac_ralloc_put(&a, p, 600);
    oac_ralloc_unbound(&a, q, 300);
    ck_assert_uint_eq(atomic_load(&b.used), 0);
    /* Out of memory is not the budget: the bytes go back. */
    oac_ctx_fail_alloc_after(ctx, 1);
    ck_assert_ptr_null(oac_ralloc_get(&a, 10, false));
    oac_ctx_fail_alloc_after(ctx, 0);
    ck_assert_int_eq(oac_ralloc_failed(&a), OAC_ENOMEM);
    ck_assert_uint_eq(atomic_load(&b.used), 0);
    oac_ctx_free(ctx);
}
END_TEST

/* Threads taking 1 byte at a time from one budget of LIMIT. */
enum { THREADS = 4, TRIES = 20000, LIMIT = 30000 };
static oac_membudget shared;
static void *taker(void *arg)
{
    oac_ctx *ctx = oac_ctx_new();
    unsigned long *got = arg;
    for (int i = 0; i < TRIES; i++)
        if (oac_membudget_take(&shared, ctx, 1) == OAC_OK)
            ++*got;
    oac_ctx_free(ctx);
    return NULL;
}

START_TEST(counter_shared_by_threads)
{
    /* 80000 tries for 30000 bytes: exactly 30000 succeed. */
    oac_membudget_init(&shared, LIMIT);
    pthread_t t[THREADS];
    unsigned long got[THREADS] = { 0 };
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, taker, &got[i]), 0);
    unsigned long sum = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        sum += got[i];
    }
    ck_assert_uint_eq(sum, LIMIT);
    ck_assert_uint_eq(atomic_load(&shared.used), LIMIT);
    ck_assert_uint_eq(atomic_load(&shared.peak), LIMIT);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("budget");
    TCase *tc = tcase_create("budget");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, plan_of_128_gib_refused_before_allocating);
    tcase_add_test(tc, need_counts_inputs_and_sessions);
    tcase_add_test(tc, body_refused_when_allocated);
    tcase_add_test(tc, fed_back_past_refused_at_a_later_step);
    tcase_add_test(tc, per_buffer_limit_without_budget);
    tcase_add_test(tc, counter_never_passes_its_limit);
    tcase_add_test(tc, counter_shared_by_threads);
    ADD_CASES(tc, budget_rows);
    suite_add_tcase(s, tc);
    return s;
}

/* check_alloc.c: the runtime's instrumented allocator (lib/run/alloc.c;
 * contract 4: per-step alloc_calls/alloc_bytes and the measured peak
 * count runtime allocations only, not caller-bound storage).
 */
#include <string.h>

#include "harness.h"
#include "run/kernel_api.h"

START_TEST(counts_calls_live_and_peak)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_ralloc a;
    oac_ralloc_init(&a, ctx);
    void *p = oac_ralloc_get(&a, 100, false);
    void *q = oac_ralloc_get(&a, 50, true);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(q);
    ck_assert_int_eq(((uint8_t *)q)[49], 0);
    ck_assert_uint_eq(a.calls, 2);
    ck_assert_uint_eq(a.bytes, 150);
    ck_assert_uint_eq(a.live, 150);
    ck_assert_uint_eq(a.peak, 150);
    oac_ralloc_put(&a, p, 100);
    ck_assert_uint_eq(a.live, 50);
    void *r = oac_ralloc_get(&a, 60, false);
    /* 110 live now, below the earlier high-water mark. */
    ck_assert_uint_eq(a.live, 110);
    ck_assert_uint_eq(a.peak, 150);
    void *s = oac_ralloc_get(&a, 60, false);
    ck_assert_uint_eq(a.peak, 170);
    oac_ralloc_put(&a, q, 50);
    oac_ralloc_put(&a, r, 60);
    oac_ralloc_put(&a, s, 60);
    oac_ralloc_put(&a, NULL, 10);   /* no-op */
    ck_assert_uint_eq(a.live, 0);
    ck_assert_uint_eq(a.peak, 170);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(steps_reset_step_counters_only)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_ralloc a;
    oac_ralloc_init(&a, ctx);
    void *p = oac_ralloc_get(&a, 8, false);
    oac_ralloc_step_begin(&a);
    ck_assert_uint_eq(a.step_calls, 0);
    ck_assert_uint_eq(a.step_bytes, 0);
    void *q = oac_ralloc_get(&a, 16, false);
    ck_assert_uint_eq(a.step_calls, 1);
    ck_assert_uint_eq(a.step_bytes, 16);
    ck_assert_uint_eq(a.calls, 2);
    ck_assert_uint_eq(a.live, 24);
    oac_ralloc_put(&a, p, 8);
    oac_ralloc_put(&a, q, 16);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(step_peak_is_above_the_step_baseline)
{
    /* What earlier steps left live (pages) is the next step's baseline. */
    oac_ctx *ctx = oac_ctx_new();
    oac_ralloc a;
    oac_ralloc_init(&a, ctx);
    oac_ralloc_step_begin(&a);
    void *page1 = oac_ralloc_get(&a, 128, false);
    void *tmp = oac_ralloc_get(&a, 32, false);
    oac_ralloc_put(&a, tmp, 32);
    ck_assert_uint_eq(a.step_peak_max, 160);
    oac_ralloc_step_begin(&a);            /* page1 stays live */
    void *page2 = oac_ralloc_get(&a, 128, false);
    ck_assert_uint_eq(a.peak, 256);       /* absolute high-water mark */
    ck_assert_uint_eq(a.step_peak_max, 160);
    oac_ralloc_step_begin(&a);
    tmp = oac_ralloc_get(&a, 200, false);
    ck_assert_uint_eq(a.step_peak_max, 200);
    oac_ralloc_put(&a, tmp, 200);
    oac_ralloc_put(&a, page1, 128);
    oac_ralloc_put(&a, page2, 128);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(bound_storage_is_not_counted)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_ralloc a;
    oac_ralloc_init(&a, ctx);
    uint8_t *b = oac_ralloc_bound(&a, 4096);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(b[4095], 0);   /* zero-filled, as run's inputs are */
    ck_assert_uint_eq(a.calls, 0);
    ck_assert_uint_eq(a.live, 0);
    ck_assert_uint_eq(a.peak, 0);
    ck_assert_uint_eq(a.bound_bytes, 4096);
    oac_ralloc_unbound(&a, b, 4096);
    ck_assert_uint_eq(a.bound_bytes, 0);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(failure_leaves_counts_alone)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_ralloc a;
    oac_ralloc_init(&a, ctx);
    oac_ctx_fail_alloc_after(ctx, 1);
    ck_assert_ptr_null(oac_ralloc_get(&a, 32, false));
    ck_assert_int_eq(a.calls, 0);
    ck_assert_int_eq(a.live, 0);
    oac_ctx_fail_alloc_after(ctx, 0);
    /* A size that would wrap the live count is refused, not wrapped. */
    void *p = oac_ralloc_get(&a, 16, false);
    ck_assert_ptr_null(oac_ralloc_get(&a, SIZE_MAX - 4, false));
    ck_assert_uint_eq(a.live, 16);
    oac_ralloc_put(&a, p, 16);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(above_the_limit_never_attempted)
{
    /* Sizes a model's dims could ask for above OAC_RT_MAX_BYTES are
     * refused before any allocation, counted or bound: nothing counted,
     * the reason on the context. */
    oac_ctx *ctx = oac_ctx_new();
    oac_ralloc a;
    oac_ralloc_init(&a, ctx);
    ck_assert_ptr_null(oac_ralloc_get(&a, (size_t)OAC_RT_MAX_BYTES + 1, false));
    ck_assert_ptr_nonnull(strstr(oac_errmsg(ctx), "limit"));
    ck_assert_ptr_null(oac_ralloc_bound(&a, (size_t)OAC_RT_MAX_BYTES + 1));
    ck_assert_uint_eq(a.calls, 0);
    ck_assert_uint_eq(a.live, 0);
    ck_assert_uint_eq(a.bound_bytes, 0);
    /* Nothing was attempted: a failure injected at the first allocation
     * is still pending for the next one. */
    oac_ctx_fail_alloc_after(ctx, 1);
    ck_assert_ptr_null(oac_ralloc_get(&a, (size_t)OAC_RT_MAX_BYTES + 1, true));
    ck_assert_ptr_null(oac_ralloc_get(&a, 8, false));
    ck_assert_ptr_nonnull(strstr(oac_errmsg(ctx), "memory"));
    oac_ctx_free(ctx);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("alloc");
    TCase *tc = tcase_create("alloc");
    tcase_add_test(tc, counts_calls_live_and_peak);
    tcase_add_test(tc, steps_reset_step_counters_only);
    tcase_add_test(tc, step_peak_is_above_the_step_baseline);
    tcase_add_test(tc, bound_storage_is_not_counted);
    tcase_add_test(tc, failure_leaves_counts_alone);
    tcase_add_test(tc, above_the_limit_never_attempted);
    suite_add_tcase(s, tc);
    return s;
}

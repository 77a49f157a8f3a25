/* check_paged_decoder.c: the paged decoder against its dense twin
 * (examples/paged_decoder.c, contract section 11), run by the reference
 * runtime with the step_values hook: logits compared step by step, the
 * pages' bytes and addresses followed step by step under the policies of
 * run --page-policy (lib/run/pages.c), and the execution.pages records.
 *
 * The error bounds asserted here are the ones doc/annotations.md
 * documents for each policy (largest |paged - dense| over the logits of a
 * step, relative to the dense step's largest |logit|). */
#include "harness.h"
#include <math.h>
#include <string.h>

#include "run/kernel_api.h"

enum { V = OAC_PAGED_VOCAB, MAX_STEPS = 256 };

/* What a run left step by step. */
typedef struct trace {
    float (*logits)[V];            /* per step */
    uint64_t steps;
    /* cache_0's pages at each step: count, addresses, formats */
    size_t n_pages[MAX_STEPS + 1];
    const void *addr[MAX_STEPS + 1][MAX_STEPS / 16 + 2];
    int32_t fmt[MAX_STEPS + 1][MAX_STEPS / 16 + 2];
    uint64_t alloc_calls[MAX_STEPS + 1];
} trace;

static void on_values(void *arg, uint64_t step, const oac_dump_value *v, size_t n)
{
    trace *t = arg;
    ck_assert_uint_le(step, MAX_STEPS);
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(v[i].name, "logits")) {
            ck_assert_int_eq(v[i].value->kind, OAC_RTV_TENSOR);
            ck_assert_uint_eq(v[i].value->t.bytes, sizeof t->logits[0]);
            memcpy(t->logits[step - 1], v[i].value->t.data, sizeof t->logits[0]);
        } else if (!strcmp(v[i].name, "cache_0") && v[i].value->kind == OAC_RTV_PAGED) {
            const oac_paged *p = &v[i].value->p;
            ck_assert_uint_le(p->n_pages, MAX_STEPS / 16 + 2);
            t->n_pages[step] = p->n_pages;
            for (size_t k = 0; k < p->n_pages; k++) {
                t->addr[step][k] = p->pages[k].data;
                t->fmt[step][k] = p->pages[k].quantized_type;
            }
        }
    }
    t->steps = step;
}

static void on_step(void *arg, const oac_step_stats *st)
{
    trace *t = arg;
    t->alloc_calls[st->step] = st->alloc_calls;
}

/* Run example `name` for `steps` steps under policy (n rules). */
static void run(fx *f, const char *name, uint64_t steps, const oac_page_rule *policy,
                size_t n, trace *t)
{
    memset(t, 0, sizeof *t);
    t->logits = calloc(MAX_STEPS, sizeof *t->logits);
    ck_assert_ptr_nonnull(t->logits);
    fx_example(f, name);
    oac_run_opts ro = { .steps = steps, .page_policy = policy, .n_page_policy = n };
    oac_run_hooks h = { .step_values = on_values, .values_arg = t,
                        .step_done = on_step, .step_arg = t };
    ck_assert_msg(fx_check_run(f, NULL, 0, NULL, 0, &ro, &h) == OAC_OK, "%s: %s",
                  name, diag_dump(f->d));
    ck_assert_uint_eq(t->steps, steps);
}

/* The largest per-step error relative to the dense step's scale. */
static double worst(const trace *paged, const trace *dense, uint64_t steps)
{
    double w = 0;
    for (uint64_t s = 0; s < steps; s++) {
        double scale = 0, err = 0;
        for (int i = 0; i < V; i++) {
            scale = fmax(scale, fabs(dense->logits[s][i]));
            err = fmax(err, fabs((double)paged->logits[s][i] - dense->logits[s][i]));
        }
        ck_assert(scale > 0);
        w = fmax(w, err / scale);
    }
    return w;
}

static const oac_page_rule all_fp16[] = { { 0, "FP16_PAGE" } };
static const oac_page_rule tiered[] = { { 0, "FP16_PAGE" }, { 2, "FP8_PAGE" },
                                        { 8, "INT4_PAGE" } };
static const oac_page_rule tiered2[] = { { 0, "FP16_PAGE" }, { 2, "FP8_PAGE" },
                                         { 8, "INT4_PAGE" }, { 16, "INT2_PAGE" } };

/* Acceptance: every page IEEE half, the paged decoder equals its dense
 * twin within 2e-3 of scale on every one of 256 steps. */
START_TEST(test_fp16_equals_dense)
{
    fx fp, fd;
    static trace tp, td;
    run(&fp, "paged_decoder", MAX_STEPS, all_fp16, 1, &tp);
    run(&fd, "paged_decoder_dense", MAX_STEPS, NULL, 0, &td);
    double w = worst(&tp, &td, MAX_STEPS);
    ck_assert_msg(w <= 2e-3, "largest error %g of scale", w);
    /* 256 positions: 16 pages, every one FP16_PAGE, never re-encoded */
    ck_assert_uint_eq(tp.n_pages[MAX_STEPS], 16);
    for (size_t k = 0; k < 16; k++)
        ck_assert_int_eq(tp.fmt[MAX_STEPS][k], 0);
    ck_assert(fp.e->peak_matches_plan);
    free(tp.logits);
    free(td.logits);
    fx_end(&fp);
    fx_end(&fd);
}
END_TEST

/* Page identity and allocations under the FP16/FP8/INT4 policy: a step
 * allocates one page per cache at a page boundary and two blocks (the
 * decoded workspace and the new page) per re-encoding; every page that
 * neither the step created nor the policy re-encoded keeps its address. */
START_TEST(test_pages_held_and_counted)
{
    fx fp;
    static trace t, base;
    run(&fp, "paged_decoder", 160, NULL, 0, &base);     /* no policy */
    fx_end(&fp);
    run(&fp, "paged_decoder", 160, tiered, 3, &t);
    for (uint64_t s = 2; s <= 160; s++) {
        size_t moved = 0, created = t.n_pages[s] - t.n_pages[s - 1];
        for (size_t k = 0; k < t.n_pages[s - 1]; k++) {
            bool same_fmt = t.fmt[s][k] == t.fmt[s - 1][k];
            if (same_fmt)
                ck_assert_msg(t.addr[s][k] == t.addr[s - 1][k], "step %llu: page %zu "
                              "moved", (unsigned long long)s, k);
            else
                moved++;
        }
        /* what the policy says: pages 2 and 8 from the newest change */
        size_t want = 0;
        if (created) {
            size_t n = t.n_pages[s];
            want = (n >= 3) + (n >= 9);
        }
        ck_assert_uint_eq(moved, want);
        ck_assert_uint_le(created, 1);
        /* two caches: per cache 1 call for a new page, 2 per re-encoding */
        ck_assert_uint_eq(t.alloc_calls[s], base.alloc_calls[s] + 2 * 2 * moved);
    }
    /* formats by age at the end: newest 2 FP16, then FP8 to age 7, INT4 */
    size_t n = t.n_pages[160];
    ck_assert_uint_eq(n, 10);
    for (size_t k = 0; k < n; k++) {
        size_t age = n - 1 - k;
        ck_assert_int_eq(t.fmt[160][k], age >= 8 ? 2 : age >= 2 ? 1 : 0);
    }
    /* execution.pages: the last step's record agrees */
    ck_assert_uint_eq(fp.e->n_pages, 2);
    const oac_page_record *r = &fp.e->pages[0];
    ck_assert_str_eq(r->cache, "cache_0");
    const oac_page_step *last = &r->per_step[r->n_per_step - 1];
    ck_assert_uint_eq(last->step, 160);
    ck_assert_uint_eq(last->pages, 10);
    /* page = 2 * 2 * 16 * 8 = 512 elements: half 1024 B, FP8 512, INT4 256 */
    ck_assert_uint_eq(last->bytes_by_quantization[0], 2 * 1024);
    ck_assert_uint_eq(last->bytes_by_quantization[1], 6 * 512);
    ck_assert_uint_eq(last->bytes_by_quantization[2], 2 * 256);
    ck_assert_uint_eq(last->total_bytes, 2 * 1024 + 6 * 512 + 2 * 256);
    ck_assert_str_eq(r->quantization_names[1], "FP8_PAGE");
    ck_assert_uint_eq(r->per_step_omitted, 160 - OAC_PER_STEP_HEAD - OAC_PER_STEP_TAIL);
    ck_assert(fp.e->peak_matches_plan);
    free(t.logits);
    free(base.logits);
    fx_end(&fp);
}
END_TEST

/* The tiered policies' errors stay within the bounds doc/annotations.md
 * gives (measured: see there), and their cache bytes under half the
 * dense twin's at the same length. */
START_TEST(test_tiered_bounds)
{
    fx fp, fd;
    static trace tp, td;
    run(&fd, "paged_decoder_dense", MAX_STEPS, NULL, 0, &td);
    run(&fp, "paged_decoder", MAX_STEPS, tiered, 3, &tp);
    double w = worst(&tp, &td, MAX_STEPS);
    ck_assert_msg(w <= 0.03, "FP16/FP8/INT4: largest error %g of scale", w);
    const oac_page_step *last = &fp.e->pages[0].per_step[fp.e->pages[0].n_per_step - 1];
    uint64_t dense = 2ull * 2 * OAC_PAGED_MAX_LEN * 8 * 2;   /* per layer */
    ck_assert_uint_lt(last->total_bytes * 2, dense);
    free(tp.logits);
    fx_end(&fp);
    run(&fp, "paged_decoder", MAX_STEPS, tiered2, 4, &tp);
    w = worst(&tp, &td, MAX_STEPS);
    ck_assert_msg(w <= 0.05, "FP16/FP8/INT4/INT2: largest error %g of scale", w);
    free(tp.logits);
    free(td.logits);
    fx_end(&fp);
    fx_end(&fd);
}
END_TEST

/* A policy naming no declaration is a usage error before anything runs. */
START_TEST(test_policy_unknown_declaration)
{
    fx f;
    fx_example(&f, "paged_decoder");
    static const oac_page_rule bad[] = { { 1, "FP9_PAGE" } };
    oac_run_opts ro = { .steps = 2, .page_policy = bad, .n_page_policy = 1 };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL), OAC_EINVAL);
    ck_assert_ptr_nonnull(strstr(oac_errmsg(f.ctx), "FP9_PAGE"));
    fx_end(&f);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("paged_decoder");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_fp16_equals_dense);
    tcase_add_test(tc, test_pages_held_and_counted);
    tcase_add_test(tc, test_tiered_bounds);
    tcase_add_test(tc, test_policy_unknown_declaration);
    suite_add_tcase(s, tc);
    return s;
}

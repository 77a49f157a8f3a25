/* check_sweep.c: the allocation-failure sweep over what the tool does to
 * a model (issue 12, "an allocation-failure sweep across run and
 * annotate"; HACKING.md: every allocation goes through the context, so
 * oac_ctx_fail_alloc_after reaches every error path).
 *
 * For every shipped example the checker accepts, each operation of the
 * table below runs once cleanly, then again with its nth allocation (and
 * every later one) failing, for every n from 1 until it succeeds.  Every
 * failing attempt must end cleanly: a negative status with its reason on
 * the context, nothing leaked (the sanitizer build's leak check runs at
 * the end of each test), and the failure reportable the way the tool
 * reports it (oac_diags_add_failure: analysis-failed, then a JSON report
 * whose status is "error").  No attempt may claim a finding about the
 * model (unsupported-operator and friends) for a failure of the tool.
 *
 * Adding an operation (annotate, once its library function is in main)
 * is one row of `ops` and the function the row names.
 */
#include <jansson.h>

#include "harness.h"

/* What an operation gets: the loaded example, its analysis (checked
 * once, without failures) and the dims it was checked with. */
typedef struct sweep_in {
    const oac_model *m;
    const oac_analysis *a;
    const oac_dim_binding *dims;
    size_t n_dims;
} sweep_in;

/* An operation: its status; *e the execution when it made one (the
 * caller frees it).  Everything else it made is freed before it returns. */
typedef int (*sweep_fn)(oac_ctx *ctx, const sweep_in *in, oac_diags *d,
                        oac_execution **e);

static int op_check(oac_ctx *ctx, const sweep_in *in, oac_diags *d, oac_execution **e)
{
    (void)e;
    oac_check_opts co = { .dims = in->dims, .n_dims = in->n_dims };
    oac_analysis *a = NULL;
    int rc = oac_check(ctx, &a, in->m, &co, d);
    oac_analysis_free(a);
    return rc;
}

/* Two steps, so the second step's paths (positions advanced, buffers
 * of the first released) run too. */
static int op_run(oac_ctx *ctx, const sweep_in *in, oac_diags *d, oac_execution **e)
{
    oac_run_opts ro = { .steps = 2, .dims = in->dims, .n_dims = in->n_dims };
    return oac_run(ctx, e, in->m, in->a, &ro, d);
}

/* The same within a memory budget that fits: the budget's paths too. */
static int op_run_budget(oac_ctx *ctx, const sweep_in *in, oac_diags *d,
                         oac_execution **e)
{
    oac_run_opts ro = { .steps = 2, .dims = in->dims, .n_dims = in->n_dims,
                        .max_memory = (uint64_t)1 << 30 };
    return oac_run(ctx, e, in->m, in->a, &ro, d);
}

static const struct sweep_op {
    const char *name;
    sweep_fn fn;
} ops[] = {
    { "check", op_check },
    { "run", op_run },
    { "run --max-memory", op_run_budget },
    /* { "annotate", op_annotate }, when the library has it (task B). */
};

/* The dims the examples declare, each bound when the model has it. */
static const oac_dim_binding example_dims[] = {
    { "batch", 1 }, { "heads", 2 }, { "max_length", 8 }, { "head_size", 4 },
    { "new_length", 1 }, { "past_len", 3 }, { "total_len", 4 },
};

/* Codes that say something about the model: a failure of the tool
 * (out of memory) must never be reported as one of these. */
static bool is_finding(oac_code c)
{
    return c != OAC_ANALYSIS_FAILED && c != OAC_PARSE_ERROR;
}

/* Sweep op over example ex. */
static void sweep(const oac_example *ex, const struct sweep_op *op)
{
    fx f;
    fx_example(&f, ex->name);
    oac_dim_binding dims[sizeof example_dims / sizeof example_dims[0]];
    size_t nd = 0;
    for (size_t i = 0; i < sizeof example_dims / sizeof example_dims[0]; i++)
        if (oac_model_has_dim_param(f.m, example_dims[i].name))
            dims[nd++] = example_dims[i];
    oac_check_opts co = { .dims = dims, .n_dims = nd };
    ck_assert_int_eq(fx_check(&f, &co), OAC_OK);
    ck_assert_msg(oac_diags_count_severity(f.d, OAC_SEV_ERROR) == 0, "%s: %s", ex->name,
                  diag_dump(f.d));
    sweep_in in = { .m = f.m, .a = f.a, .dims = dims, .n_dims = nd };

    /* The clean run: what the sweep must reach. */
    oac_diags *d = oac_diags_new(f.ctx);
    oac_execution *e = NULL;
    unsigned long before = oac_ctx_alloc_count(f.ctx);
    int rc = op->fn(f.ctx, &in, d, &e);
    unsigned long total = oac_ctx_alloc_count(f.ctx) - before;
    ck_assert_msg(rc == OAC_OK, "%s %s: %d %s %s", op->name, ex->name, rc,
                  oac_errmsg(f.ctx), diag_dump(d));
    size_t findings = oac_diags_count(d);
    oac_execution_free(e);
    oac_diags_free(d);

    bool done = false;
    unsigned long n = 1;
    for (; !done; n++) {
        ck_assert_msg(n <= total + 1, "%s %s: still failing after %lu allocations",
                      op->name, ex->name, n);
        d = oac_diags_new(f.ctx);
        e = NULL;
        oac_ctx_fail_alloc_after(f.ctx, n);
        rc = op->fn(f.ctx, &in, d, &e);
        oac_ctx_fail_alloc_after(f.ctx, 0);
        if (rc == OAC_OK) {
            /* Succeeding means succeeding whole: the same findings. */
            ck_assert_uint_eq(oac_diags_count(d), findings);
            done = true;
        } else {
            ck_assert_msg(rc == OAC_ENOMEM, "%s %s: allocation %lu: status %d (%s)",
                          op->name, ex->name, n, rc, oac_errmsg(f.ctx));
            ck_assert_msg(*oac_errmsg(f.ctx), "%s %s: allocation %lu: no reason",
                          op->name, ex->name, n);
            /* What the library said during the failure: never a finding
             * beyond the clean run's. */
            size_t errors = 0;
            for (size_t i = 0; i < oac_diags_count(d); i++)
                errors += is_finding(oac_diags_get(d, i)->code) &&
                          oac_diags_get(d, i)->severity == OAC_SEV_ERROR;
            ck_assert_msg(errors == 0, "%s %s: allocation %lu: %s", op->name, ex->name, n,
                          diag_dump(d));
            /* Reported as the tool reports it. */
            ck_assert_int_eq(oac_diags_add_failure(d, f.ctx, rc, op->name), OAC_OK);
            ck_assert_int_ge(oac_diags_find(d, OAC_ANALYSIS_FAILED), 0);
            oac_report_input ri = { .path = ex->name, .model = f.m, .diags = d,
                                    .analysis = f.a, .execution = e };
            json_t *j = oac_report_json(f.ctx, &ri);
            ck_assert_ptr_nonnull(j);
            ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "error");
            json_decref(j);
        }
        oac_execution_free(e);
        oac_diags_free(d);
    }
    fx_end(&f);
}

/* Examples the checker accepts (warnings allowed): loop index over them
 * and the operations. */
static size_t n_valid;
static const oac_example *valid[64];

static void collect(void)
{
    if (n_valid)
        return;
    for (size_t i = 0; i < oac_examples_count && n_valid < 64; i++) {
        const oac_example *ex = &oac_examples[i];
        bool errors = false;
        for (const char *const *c = ex->expect; *c; c++)
            errors = errors || oac_code_severity(oac_code_lookup(*c)) == OAC_SEV_ERROR;
        if (!errors)
            valid[n_valid++] = ex;
    }
}

START_TEST(sweep_examples)
{
    collect();
    size_t n_ops = sizeof ops / sizeof ops[0];
    ck_assert_uint_ge(n_valid, 10);
    sweep(valid[_i / n_ops], &ops[_i % n_ops]);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("sweep");
    tcase_set_timeout(tc, 600);
    collect();
    tcase_add_loop_test(tc, sweep_examples, 0,
                        (int)(n_valid * (sizeof ops / sizeof ops[0])));
    suite_add_tcase(s, tc);
    return s;
}

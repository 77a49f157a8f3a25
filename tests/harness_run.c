/* harness_run.c: the runtime's helpers of tests/harness.h.
 *
 * Owns: checking and running a model in the fixture (fx_check_run) and
 * the every-allocation-fails loop over examples (fail_each_allocation).
 * Kept apart from harness.c, which the checker's tests use without the
 * runtime's headers.
 *
 * Invariants: as harness.c: fx_end frees what the fixture holds.
 */
#include "harness.h"

#include "run/kernel_api.h"

int fx_check_run(fx *f, const oac_dim_binding *dims, size_t nd,
                 const oac_input_file *in, size_t ni, oac_run_opts *ro,
                 const oac_run_hooks *h)
{
    ro->dims = dims;
    ro->n_dims = nd;
    ro->inputs = in;
    ro->n_inputs = ni;
    /* As `run` does: the check binds what the run's first step binds. */
    if (!f->m)
        fx_load(f);
    oac_dim_binding *rd;
    size_t n_rd;
    ck_assert_msg(oac_run_dims(f->ctx, &rd, &n_rd, f->m, ro, f->d) == OAC_OK, "run dims: %s",
                  oac_errmsg(f->ctx));
    oac_check_opts co = { .dims = rd, .n_dims = n_rd, .inputs = in, .n_inputs = ni };
    ck_assert_int_eq(fx_check(f, &co), OAC_OK);
    oac_free(rd);
    for (size_t i = 0; i < oac_diags_count(f->d); i++) {
        const oac_diag *dg = oac_diags_get(f->d, i);
        ck_assert_msg(dg->severity != OAC_SEV_ERROR, "check: %s: %s",
                      oac_code_name(dg->code), dg->message);
    }
    f->rc = oac_run_with_hooks(f->ctx, &f->e, f->m, f->a, ro, h, f->d);
    return f->rc;
}

void fail_each_allocation(const char *const *names, size_t n_names,
                          const oac_dim_binding *dims, size_t nd,
                          bool (*dims_for)(const char *name), uint64_t steps,
                          unsigned long max_n)
{
    for (size_t m = 0; m < n_names; m++) {
        bool ok = false;
        size_t k = dims_for(names[m]) ? nd : 0;
        for (unsigned long n = 1; n < max_n && !ok; n++) {
            fx f;
            fx_example(&f, names[m]);
            oac_run_opts ro = { .steps = steps, .dims = dims, .n_dims = k };
            /* Checked at the run's first step, as `run` checks. */
            oac_dim_binding *rd;
            size_t n_rd;
            ck_assert_int_eq(oac_run_dims(f.ctx, &rd, &n_rd, f.m, &ro, f.d), OAC_OK);
            oac_check_opts co = { .dims = rd, .n_dims = n_rd };
            ck_assert_int_eq(oac_check(f.ctx, &f.a, f.m, &co, f.d), OAC_OK);
            oac_free(rd);
            oac_ctx_fail_alloc_after(f.ctx, n);
            int rc = oac_run(f.ctx, &f.e, f.m, f.a, &ro, f.d);
            oac_ctx_fail_alloc_after(f.ctx, 0);
            if (rc == OAC_OK)
                ok = true;
            else
                ck_assert_msg(rc == OAC_ENOMEM, "%s: n=%lu rc=%d %s", names[m], n, rc,
                              oac_errmsg(f.ctx));
            fx_end(&f);
        }
        ck_assert_msg(ok, "%s never ran", names[m]);
    }
}

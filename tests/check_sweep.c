/* check_sweep.c: the allocation-failure sweep over what the tool does to
 * a model (issue 12, "an allocation-failure sweep across run and
 * annotate"; HACKING.md: every allocation goes through the context, so
 * oac_ctx_fail_alloc_after reaches every error path).
 *
 * Subjects: every shipped example the checker accepts (examples/models.c,
 * written to a scratch folder) and, for annotate, every look-alike GenAI
 * decoder with its config (tests/genai_models.c).  Each operation of the
 * table below runs once cleanly on a subject, then again with its nth
 * allocation (and every later one) failing, for every n from 1 until it
 * succeeds.  Every failing attempt must end cleanly: OAC_ENOMEM with its
 * reason on the context, nothing leaked (the sanitizer build's leak check
 * runs at the end of each test), no file left behind, no finding about
 * the model claimed for a failure of the tool, and the failure reportable
 * the way the tool reports it (oac_diags_add_failure: analysis-failed,
 * then a JSON report whose status is "error").  The attempt that succeeds
 * must end as the clean run did: same status, same findings.
 *
 * Adding an operation is one row of `ops` and the function it names.
 */
#include <dirent.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>

#include "genai_models.h"
#include "harness.h"

/* What an operation gets. */
typedef struct sweep_in {
    const char *path;             /* the subject's model file */
    const char *out;              /* a file an operation may write */
    const oac_model *m;           /* the subject loaded (read-only) */
    const oac_analysis *a;        /* checked once, without failures */
    const oac_dim_binding *dims;  /* it was checked with */
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

/* annotate as the command does it: load (the config beside the model),
 * annotate, write and check the result. */
static int op_annotate(oac_ctx *ctx, const sweep_in *in, oac_diags *d, oac_execution **e)
{
    (void)e;
    oac_model *m = NULL;
    oac_annotation *an = NULL;
    int rc = oac_model_load(ctx, &m, in->path, d);
    if (!rc)
        rc = oac_annotate(ctx, &an, m, NULL, d);
    if (!rc)
        rc = oac_annotation_write(ctx, an, m, in->out, d);
    oac_annotation_free(an);
    oac_model_free(m);
    return rc;
}

static const struct sweep_op {
    const char *name;
    sweep_fn fn;
    bool runs;          /* needs the example's analysis (runs it) */
    bool decoders;      /* also on the GenAI look-alikes */
} ops[] = {
    { "check", op_check, false, false },
    { "run", op_run, true, false },
    { "run --max-memory", op_run_budget, true, false },
    { "annotate", op_annotate, false, true },
};
enum { N_OPS = sizeof ops / sizeof ops[0] };

/* The dims the examples declare, each bound when the model has it. */
static const oac_dim_binding example_dims[] = {
    { "batch", 1 }, { "heads", 2 }, { "max_length", 8 }, { "head_size", 4 },
    { "new_length", 1 }, { "past_len", 3 }, { "total_len", 4 },
};
enum { N_DIMS = sizeof example_dims / sizeof example_dims[0] };

/* Codes that say something about the model: a failure of the tool
 * (out of memory) must never be reported as one of these. */
static bool is_finding(oac_code c)
{
    return c != OAC_ANALYSIS_FAILED && c != OAC_PARSE_ERROR;
}

static size_t files_in(const char *dir)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Subjects: examples the checker accepts (warnings allowed), then the
 * look-alike decoders. */
static size_t n_examples;
static const oac_example *examples[64];

static void collect(void)
{
    if (n_examples)
        return;
    for (size_t i = 0; i < oac_examples_count && n_examples < 64; i++) {
        const oac_example *ex = &oac_examples[i];
        bool errors = false;
        for (const char *const *c = ex->expect; *c; c++)
            errors = errors || oac_code_severity(oac_code_lookup(*c)) == OAC_SEV_ERROR;
        if (!errors)
            examples[n_examples++] = ex;
    }
}

/* Sweep op over subject s (an example below n_examples, else a
 * look-alike). */
static void sweep(size_t s, const struct sweep_op *op)
{
    bool decoder = s >= n_examples;
    if (decoder && !op->decoders)
        return;
    fx f;
    fx_begin(&f);
    char dir[] = "/tmp/check_sweep_XXXXXX", path[128], out[128];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *name = decoder ? genai_models[s - n_examples].name : examples[s]->name;
    snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
    snprintf(out, sizeof out, "%s/out.onnx", dir);
    if (decoder)
        ck_assert_int_eq(genai_model_write(f.ctx, &genai_models[s - n_examples], dir), OAC_OK);
    else
        ck_assert_int_eq(oac_example_write(f.ctx, examples[s], path), OAC_OK);
    ck_assert_int_eq(oac_model_load(f.ctx, &f.m, path, f.d), OAC_OK);
    oac_dim_binding dims[N_DIMS];
    size_t nd = 0;
    for (size_t i = 0; !decoder && i < N_DIMS; i++)
        if (oac_model_has_dim_param(f.m, example_dims[i].name))
            dims[nd++] = example_dims[i];
    /* A run's check binds what its first step binds, as the tool's does
     * (oac_run_dims): a symbol the generation loop drives is no --dim. */
    oac_dim_binding *rdims = NULL;
    size_t nrd = 0;
    if (op->runs) {
        oac_run_opts ro = { .steps = 2, .dims = dims, .n_dims = nd };
        for (int tries = 0; tries < 2; tries++) {
            int drc = oac_run_dims(f.ctx, &rdims, &nrd, f.m, &ro, f.d);
            if (drc == OAC_OK)
                break;
            /* --dim on a loop symbol: drop the loop's symbols, ask again. */
            ck_assert_int_eq(drc, OAC_EINVAL);
            size_t k = 0;
            for (size_t i = 0; i < nd; i++)
                if (strcmp(dims[i].name, "past_len") && strcmp(dims[i].name, "total_len") &&
                    strcmp(dims[i].name, "new_length"))
                    dims[k++] = dims[i];
            nd = k;
            ro.n_dims = nd;
        }
        ck_assert_ptr_nonnull(rdims);
        oac_check_opts co = { .dims = rdims, .n_dims = nrd };
        ck_assert_int_eq(fx_check(&f, &co), OAC_OK);
        ck_assert_msg(oac_diags_count_severity(f.d, OAC_SEV_ERROR) == 0, "%s: %s", name,
                      diag_dump(f.d));
    }
    sweep_in in = { .path = path, .out = out, .m = f.m, .a = f.a, .dims = dims,
                    .n_dims = nd };

    /* The clean run: what the sweep must reach. */
    oac_diags *d = oac_diags_new(f.ctx);
    oac_execution *e = NULL;
    unsigned long before = oac_ctx_alloc_count(f.ctx);
    int clean = op->fn(f.ctx, &in, d, &e);
    unsigned long total = oac_ctx_alloc_count(f.ctx) - before;
    ck_assert_msg(clean == OAC_OK || (decoder && clean == OAC_EPARSE), "%s %s: %d %s %s",
                  op->name, name, clean, oac_errmsg(f.ctx), diag_dump(d));
    size_t findings = oac_diags_count(d);
    oac_execution_free(e);
    oac_diags_free(d);
    unlink(out);
    size_t files = files_in(dir);

    bool done = false;
    for (unsigned long n = 1; !done; n++) {
        ck_assert_msg(n <= total + 1, "%s %s: still failing after %lu allocations",
                      op->name, name, n);
        d = oac_diags_new(f.ctx);
        e = NULL;
        oac_ctx_fail_alloc_after(f.ctx, n);
        int rc = op->fn(f.ctx, &in, d, &e);
        oac_ctx_fail_alloc_after(f.ctx, 0);
        if (rc == clean) {
            /* Succeeding means succeeding whole: the same findings. */
            ck_assert_msg(oac_diags_count(d) == findings, "%s %s: allocation %lu: %s",
                          op->name, name, n, diag_dump(d));
            done = true;
        } else {
            ck_assert_msg(rc == OAC_ENOMEM, "%s %s: allocation %lu: status %d (%s)",
                          op->name, name, n, rc, oac_errmsg(f.ctx));
            ck_assert_msg(*oac_errmsg(f.ctx), "%s %s: allocation %lu: no reason",
                          op->name, name, n);
            ck_assert_msg(files_in(dir) == files, "%s %s: allocation %lu: a file left",
                          op->name, name, n);
            /* What the library said during the failure: never a finding
             * beyond the clean run's. */
            size_t errors = 0;
            for (size_t i = 0; i < oac_diags_count(d); i++)
                errors += is_finding(oac_diags_get(d, i)->code) &&
                          oac_diags_get(d, i)->severity == OAC_SEV_ERROR;
            ck_assert_msg(errors <= findings, "%s %s: allocation %lu: %s", op->name, name,
                          n, diag_dump(d));
            /* Reported as the tool reports it. */
            ck_assert_int_eq(oac_diags_add_failure(d, f.ctx, rc, op->name), OAC_OK);
            ck_assert_int_ge(oac_diags_find(d, OAC_ANALYSIS_FAILED), 0);
            oac_report_input ri = { .path = name, .model = f.m, .diags = d,
                                    .analysis = f.a, .execution = e };
            json_t *j = oac_report_json(f.ctx, &ri);
            ck_assert_ptr_nonnull(j);
            ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "error");
            json_decref(j);
        }
        oac_execution_free(e);
        oac_diags_free(d);
        unlink(out);
    }
    oac_free(rdims);
    fx_end(&f);
    remove_dir(dir);
}

START_TEST(sweep_subjects)
{
    collect();
    ck_assert_uint_ge(n_examples, 10);
    sweep((size_t)_i / N_OPS, &ops[_i % N_OPS]);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("sweep");
    tcase_set_timeout(tc, 600);
    collect();
    tcase_add_loop_test(tc, sweep_subjects, 0, (int)((n_examples + genai_n_models) * N_OPS));
    suite_add_tcase(s, tc);
    return s;
}

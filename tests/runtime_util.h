/* runtime_util.h: the harness shared by the tests of the reference
 * runtime (check_runtime, check_runtime_control, check_bind,
 * check_kernels).
 *
 * Owns: the fixture (context, diagnostics, a model built with the
 * builder or a shipped example, its analysis and execution), checking
 * a model at the run's dims and inputs before running it, finding and
 * counting diagnostics (with the stable code string pinned through the
 * public API), writing TensorProto input files and the
 * every-allocation-fails loop; OAC_CHECK_MAIN (check_main.h) is main().  Every helper frees what it took in fx_end.
 */
#ifndef OAC_TESTS_RUNTIME_UTIL_H
#define OAC_TESTS_RUNTIME_UTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "oac_build.h"
#include "models.h"
#include "runtime.h"

#pragma GCC diagnostic ignored "-Wunused-function"

typedef struct fx {
    oac_ctx *ctx;
    oac_diags *d;
    uint8_t *buf;
    size_t len;
    oac_model *m;
    oac_analysis *a;
    oac_execution *e;
    int rc;
} fx;

static void fx_begin(fx *f)
{
    memset(f, 0, sizeof *f);
    f->ctx = oac_ctx_new();
    f->d = oac_diags_new(f->ctx);
}

/* fx_begin, and a model builder on its context: *mb's main graph. */
static oac_gb *fx_build(fx *f, oac_mb **mb)
{
    fx_begin(f);
    *mb = oac_mb_new(f->ctx);
    return oac_mb_graph(*mb);
}

/* Load the built model (and free the builder). */
static void fx_load_mb(fx *f, oac_mb *mb)
{
    ck_assert_int_eq(oac_mb_pack(mb, &f->buf, &f->len), OAC_OK);
    ck_assert_int_eq(oac_model_load_buffer(f->ctx, &f->m, f->buf, f->len, "t.onnx",
                                           NULL, f->d), OAC_OK);
    oac_mb_free(mb);
}

static void fx_example(fx *f, const char *name)
{
    fx_begin(f);
    const oac_example *ex = oac_example_find(name);
    ck_assert_msg(ex != NULL, "no example %s", name);
    ck_assert_int_eq(oac_example_pack(f->ctx, ex, &f->buf, &f->len), OAC_OK);
    ck_assert_int_eq(oac_model_load_buffer(f->ctx, &f->m, f->buf, f->len, name,
                                           NULL, f->d), OAC_OK);
}

/* Check with the run's dims and inputs (no error allowed), then run. */
static int fx_check_run(fx *f, const oac_dim_binding *dims, size_t nd,
                        const oac_input_file *in, size_t ni, oac_run_opts *ro,
                        const oac_run_hooks *h)
{
    oac_check_opts co = { .dims = dims, .n_dims = nd, .inputs = in, .n_inputs = ni };
    ck_assert_int_eq(oac_check(f->ctx, &f->a, f->m, &co, f->d), OAC_OK);
    for (size_t i = 0; i < oac_diags_count(f->d); i++) {
        const oac_diag *dg = oac_diags_get(f->d, i);
        ck_assert_msg(dg->severity != OAC_SEV_ERROR, "check: %s: %s",
                      oac_code_name(dg->code), dg->message);
    }
    ro->dims = dims;
    ro->n_dims = nd;
    ro->inputs = in;
    ro->n_inputs = ni;
    f->rc = oac_run_with_hooks(f->ctx, &f->e, f->m, f->a, ro, h, f->d);
    return f->rc;
}

static void fx_end(fx *f)
{
    oac_execution_free(f->e);
    oac_analysis_free(f->a);
    oac_model_free(f->m);
    oac_diags_free(f->d);
    free(f->buf);
    oac_ctx_free(f->ctx);
}

static size_t count_code(const oac_diags *d, oac_code c)
{
    size_t n = 0;
    for (size_t i = 0; i < oac_diags_count(d); i++)
        n += oac_diags_get(d, i)->code == c;
    return n;
}

static const oac_diag *find_code(const oac_diags *d, oac_code c)
{
    long i = oac_diags_find(d, c);
    return i < 0 ? NULL : oac_diags_get(d, (size_t)i);
}

/* The first diagnostic with code c, which must exist, be an error and
 * carry the stable code string `name` (contract 3) in reports. */
static const oac_diag *expect_code(const oac_diags *d, oac_code c, const char *name)
{
    const oac_diag *dg = find_code(d, c);
    ck_assert_msg(dg != NULL, "no %s diagnostic", name);
    ck_assert_str_eq(oac_code_name(dg->code), name);
    ck_assert_int_eq(dg->severity, OAC_SEV_ERROR);
    return dg;
}

static const char *all_messages(const oac_diags *d)
{
    static char buf[4096];
    buf[0] = '\0';
    for (size_t i = 0; i < oac_diags_count(d); i++) {
        strncat(buf, oac_diags_get(d, i)->message, sizeof buf - strlen(buf) - 2);
        strncat(buf, "\n", sizeof buf - strlen(buf) - 1);
    }
    return buf;
}

/* A TensorProto file DIR/NAME.pb of raw little-endian data; the path is
 * the caller's to unlink and free. */
static char *write_tensor(const char *dir, const char *name, int32_t type,
                          const int64_t *dims, size_t nd, const void *raw, size_t len)
{
    Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
    t.has_data_type = 1;
    t.data_type = type;
    t.n_dims = nd;
    t.dims = (int64_t *)dims;
    t.has_raw_data = 1;
    t.raw_data.len = len;
    t.raw_data.data = (uint8_t *)raw;
    size_t n = protobuf_c_message_get_packed_size(&t.base);
    uint8_t *buf = malloc(n);
    protobuf_c_message_pack(&t.base, buf);
    char *path = malloc(strlen(dir) + strlen(name) + 8);
    sprintf(path, "%s/%s.pb", dir, name);
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(buf, 1, n, fp), n);
    fclose(fp);
    free(buf);
    return path;
}

/* Run each example `steps` steps with the nth allocation failing, for
 * every n until the run succeeds: each attempt fails cleanly with
 * OAC_ENOMEM (ASan/valgrind see no leak).  dims (nd of them) serve the
 * examples dims_for says need them. */
static void fail_each_allocation(const char *const *names, size_t n_names,
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
            oac_check_opts co = { .dims = dims, .n_dims = k };
            ck_assert_int_eq(oac_check(f.ctx, &f.a, f.m, &co, f.d), OAC_OK);
            oac_run_opts ro = { .steps = steps, .dims = dims, .n_dims = k };
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

#endif /* OAC_TESTS_RUNTIME_UTIL_H */

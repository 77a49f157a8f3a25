/* harness_values.c: kernels' values for the Check programs (tests/harness.h,
 * "kernels' values").
 *
 * Owns: element values of every float type as the kernels see them
 * (rounded as half.h rounds), initializers built from doubles, and
 * reading a run's dumped outputs back as doubles.
 *
 * Invariants: as harness.c: every helper frees what it took (run_dump's
 * directory and files are removed before it returns; dumped_free frees
 * the values).
 */
#include <dirent.h>
#include <math.h>

#include "harness.h"

#include "half.h"
#include "runtime.h"

double elem_round(int32_t t, double v)
{
    switch (t) {
    case OAC_T_FLOAT: return (float)v;
    case OAC_T_FLOAT16: return oac_f16_to_f32(oac_f32_to_f16((float)v));
    case OAC_T_BFLOAT16: return oac_bf16_to_f32(oac_f32_to_bf16((float)v));
    default: return v;
    }
}

double elem_get(int32_t t, const void *raw, size_t i)
{
    switch (t) {
    case OAC_T_FLOAT: return ((const float *)raw)[i];
    case OAC_T_FLOAT16: return oac_f16_to_f32(((const uint16_t *)raw)[i]);
    case OAC_T_BFLOAT16: return oac_bf16_to_f32(((const uint16_t *)raw)[i]);
    case OAC_T_DOUBLE: return ((const double *)raw)[i];
    case OAC_T_INT32: return ((const int32_t *)raw)[i];
    case OAC_T_INT64: return (double)((const int64_t *)raw)[i];
    case OAC_T_BOOL: return ((const uint8_t *)raw)[i];
    default: ck_abort_msg("elem_get: type %d", t);
    }
    return 0;
}

void elem_fill(int32_t t, double *v, size_t n, uint32_t *seed)
{
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        v[i] = elem_round(t, (double)(*seed >> 8) / (double)(1u << 23) - 1.0);
    }
}

void init_vals(oac_gb *g, const char *name, int32_t t, const char *dims,
               const double *v, size_t n)
{
    size_t w = oac_elem_bits(t) / 8;
    uint8_t *raw = calloc(n ? n : 1, w);
    ck_assert_ptr_nonnull(raw);
    for (size_t i = 0; i < n; i++) {
        uint8_t *p = raw + i * w;
        switch (t) {
        case OAC_T_FLOAT: { float x = (float)v[i]; memcpy(p, &x, 4); break; }
        case OAC_T_FLOAT16: { uint16_t x = oac_f32_to_f16((float)v[i]); memcpy(p, &x, 2); break; }
        case OAC_T_BFLOAT16: { uint16_t x = oac_f32_to_bf16((float)v[i]); memcpy(p, &x, 2); break; }
        case OAC_T_DOUBLE: memcpy(p, &v[i], 8); break;
        case OAC_T_INT32: { int32_t x = (int32_t)v[i]; memcpy(p, &x, 4); break; }
        case OAC_T_INT64: { int64_t x = (int64_t)v[i]; memcpy(p, &x, 8); break; }
        case OAC_T_BOOL: *p = v[i] != 0; break;
        default: ck_abort_msg("init_vals: type %d", t);
        }
    }
    oac_gb_init_raw(g, name, t, dims, raw, n * w);
    free(raw);
}

static void clear_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

int run_dump(fx *f, const oac_run_hooks *h, uint64_t steps,
             const char *const *names, size_t n, dumped *out)
{
    char dir[] = "/tmp/oac_kv_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    oac_run_opts ro = { .steps = steps, .dump_dir = dir };
    int rc = fx_check_run(f, NULL, 0, NULL, 0, &ro, h);
    memset(out, 0, n * sizeof *out);
    if (rc == OAC_OK) {
        ck_assert_msg(f->e->peak_matches_plan, "measured peak %llu, planned %s%llu",
                      (unsigned long long)f->e->measured_peak_bytes,
                      f->e->planned_peak_bytes.known ? "" : "unknown ",
                      (unsigned long long)f->e->planned_peak_bytes.value);
        for (size_t i = 0; i < n; i++) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s.pb", dir, names[i]);
            if (access(path, F_OK))
                continue;
            oac_pbfile *pf;
            ck_assert_int_eq(oac_pbfile_load(f->ctx, &pf, path,
                                             &onnx__tensor_proto__descriptor, f->d), OAC_OK);
            const Onnx__TensorProto *t = (const Onnx__TensorProto *)pf->msg;
            dumped *d = &out[i];
            d->type = t->data_type;
            d->rank = (int)t->n_dims;
            ck_assert_int_le(d->rank, 8);
            for (size_t k = 0; k < t->n_dims; k++)
                d->dims[k] = t->dims[k];
            uint64_t cnt, bytes;
            ck_assert(oac_tensor_numel(t, &cnt));
            ck_assert(oac_elem_bytes(t->data_type, cnt, &bytes));
            uint8_t *raw = malloc(bytes ? bytes : 1);
            ck_assert_ptr_nonnull(raw);
            ck_assert_int_eq(oac_tensor_read(f->ctx, f->m, t, raw, bytes), OAC_OK);
            d->n = (size_t)cnt;
            d->v = malloc((d->n ? d->n : 1) * sizeof *d->v);
            ck_assert_ptr_nonnull(d->v);
            for (size_t k = 0; k < d->n; k++)
                d->v[k] = elem_get(d->type, raw, k);
            free(raw);
            oac_pbfile_free(pf);
        }
    }
    clear_dir(dir);
    return rc;
}

void dumped_free(dumped *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(d[i].v);
        d[i].v = NULL;
    }
}

void dumped_near(const dumped *d, const char *dims, const double *want, size_t n,
                 double tol, const char *what)
{
    if (dims) {
        char got[128] = "";
        for (int i = 0; i < d->rank; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? "," : "",
                     (long long)d->dims[i]);
        ck_assert_msg(!strcmp(got, dims), "%s: dims %s, want %s", what, got, dims);
    }
    ck_assert_msg(d->n == n, "%s: %zu values, want %zu", what, d->n, n);
    for (size_t i = 0; i < n; i++) {
        double w = want[i], g = d->v[i];
        double lim = tol * (fabs(w) > 1 ? fabs(w) : 1);
        ck_assert_msg(g == w || fabs(g - w) <= lim || (isnan(g) && isnan(w)),
                      "%s[%zu] = %.9g, want %.9g (tolerance %.3g)", what, i, g, w, lim);
    }
}

double elem_tol(int32_t t)
{
    switch (t) {
    case OAC_T_FLOAT: return 2e-6;
    case OAC_T_FLOAT16: return 2e-3;     /* 2^-10 rounding, twice at most */
    case OAC_T_BFLOAT16: return 1.6e-2;  /* 2^-7 */
    default: return 1e-12;
    }
}

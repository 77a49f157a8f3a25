/* harness_kernel.c: the kernel tests' helpers of tests/harness.h
 * ("kernels: one-node models").
 *
 * Owns: typed initializers from plain doubles (kt_init), the rounding a
 * reference value takes in a type (kt_round), and running a built model
 * through oac_check and oac_run with a dump, reading graph outputs back
 * as the command line's --dump writes them (kt_run; kt_read_outs, from
 * the dump folder of a run the test made itself).  The conversions use
 * lib/half.h's exact conversions (tested in check_half) and never a
 * kernel, so the kernels' results are compared with values the test
 * computes itself.
 *
 * Invariants: kt_free releases what kt_run or kt_read_outs read; the
 * dump folder is emptied and removed by kt_run whatever it found.
 */
#include <dirent.h>
#include <math.h>

#include "harness.h"

#include "half.h"
#include "run/kernel_api.h"

double kt_round(int32_t type, double v)
{
    switch (type) {
    case OAC_T_FLOAT: return (float)v;
    case OAC_T_FLOAT16: return oac_f16_to_f32(oac_f32_to_f16((float)v));
    case OAC_T_BFLOAT16: return oac_bf16_to_f32(oac_f32_to_bf16((float)v));
    case OAC_T_BOOL: return v != 0;
    default: return v;
    }
}

/* v into element i of a raw array of type (integers truncate). */
static void put(int32_t type, uint8_t *p, size_t i, double v)
{
    switch (type) {
    case OAC_T_FLOAT: { float f = (float)v; memcpy(p + 4 * i, &f, 4); break; }
    case OAC_T_DOUBLE: memcpy(p + 8 * i, &v, 8); break;
    case OAC_T_FLOAT16: { uint16_t h = oac_f32_to_f16((float)v); memcpy(p + 2 * i, &h, 2); break; }
    case OAC_T_BFLOAT16: { uint16_t h = oac_f32_to_bf16((float)v); memcpy(p + 2 * i, &h, 2); break; }
    case OAC_T_BOOL: p[i] = v != 0; break;
    case OAC_T_INT8: { int8_t x = (int8_t)v; memcpy(p + i, &x, 1); break; }
    case OAC_T_UINT8: p[i] = (uint8_t)v; break;
    case OAC_T_INT16: { int16_t x = (int16_t)v; memcpy(p + 2 * i, &x, 2); break; }
    case OAC_T_UINT16: { uint16_t x = (uint16_t)v; memcpy(p + 2 * i, &x, 2); break; }
    case OAC_T_INT32: { int32_t x = (int32_t)v; memcpy(p + 4 * i, &x, 4); break; }
    case OAC_T_UINT32: { uint32_t x = (uint32_t)v; memcpy(p + 4 * i, &x, 4); break; }
    case OAC_T_INT64: { int64_t x = (int64_t)v; memcpy(p + 8 * i, &x, 8); break; }
    case OAC_T_UINT64: { uint64_t x = (uint64_t)v; memcpy(p + 8 * i, &x, 8); break; }
    default: ck_abort_msg("kt: element type %d", type);
    }
}

static Onnx__TensorProto *typed(oac_gb *g, bool init, const char *name, int32_t type,
                                 const char *dims, const double *v, size_t n)
{
    size_t es = oac_elem_bits(type) / 8;
    uint8_t *raw = calloc(n ? n : 1, es ? es : 1);
    ck_assert_ptr_nonnull(raw);
    for (size_t i = 0; i < n; i++)
        put(type, raw, i, v[i]);
    Onnx__TensorProto *t = init ? oac_gb_init_raw(g, name, type, dims, raw, n * es)
                                : oac_gb_tensor_raw(g, name, type, dims, raw, n * es);
    free(raw);
    ck_assert_ptr_nonnull(t);
    return t;
}

Onnx__TensorProto *kt_init(oac_gb *g, const char *name, int32_t type, const char *dims,
                           const double *v, size_t n)
{
    return typed(g, true, name, type, dims, v, n);
}

Onnx__TensorProto *kt_tensor(oac_gb *g, const char *name, int32_t type, const char *dims,
                             const double *v, size_t n)
{
    return typed(g, false, name, type, dims, v, n);
}

double kt_get(const kt_val *x, size_t i)
{
    ck_assert_uint_lt(i, x->n);
    const uint8_t *p = x->data;
    switch (x->type) {
    case OAC_T_FLOAT: { float f; memcpy(&f, p + 4 * i, 4); return f; }
    case OAC_T_DOUBLE: { double d; memcpy(&d, p + 8 * i, 8); return d; }
    case OAC_T_FLOAT16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return oac_f16_to_f32(h); }
    case OAC_T_BFLOAT16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return oac_bf16_to_f32(h); }
    case OAC_T_BOOL: case OAC_T_UINT8: return p[i];
    case OAC_T_INT8: return (int8_t)p[i];
    case OAC_T_INT16: { int16_t x16; memcpy(&x16, p + 2 * i, 2); return x16; }
    case OAC_T_UINT16: { uint16_t x16; memcpy(&x16, p + 2 * i, 2); return x16; }
    case OAC_T_INT32: { int32_t x32; memcpy(&x32, p + 4 * i, 4); return x32; }
    case OAC_T_UINT32: { uint32_t x32; memcpy(&x32, p + 4 * i, 4); return x32; }
    case OAC_T_INT64: { int64_t x64; memcpy(&x64, p + 8 * i, 8); return (double)x64; }
    case OAC_T_UINT64: { uint64_t x64; memcpy(&x64, p + 8 * i, 8); return (double)x64; }
    default: ck_abort_msg("kt: element type %d", x->type);
    }
    return 0;
}

int64_t kt_get_i64(const kt_val *x, size_t i)
{
    ck_assert_uint_lt(i, x->n);
    if (x->type == OAC_T_INT64) {
        int64_t v;
        memcpy(&v, x->data + 8 * i, 8);
        return v;
    }
    return (int64_t)kt_get(x, i);
}

static void empty_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[512];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(dir);
}

void kt_read_outs(fx *f, const char *dir, const char *outs, kt_val *out, size_t n)
{
    char names[256];
    snprintf(names, sizeof names, "%s", outs);
    char *save = NULL, *tok = strtok_r(names, ",", &save);
    for (size_t i = 0; i < n; i++, tok = strtok_r(NULL, ",", &save)) {
        ck_assert_ptr_nonnull(tok);
        char path[512];
        snprintf(path, sizeof path, "%s/%s.pb", dir, tok);
        oac_pbfile *pf;
        ck_assert_int_eq(oac_pbfile_load(f->ctx, &pf, path,
                                         &onnx__tensor_proto__descriptor, f->d), OAC_OK);
        const Onnx__TensorProto *t = (const Onnx__TensorProto *)pf->msg;
        kt_val *v = &out[i];
        memset(v, 0, sizeof *v);
        v->type = t->data_type;
        v->rank = (int)t->n_dims;
        ck_assert_int_le(v->rank, 8);
        for (size_t d = 0; d < t->n_dims; d++)
            v->dims[d] = t->dims[d];
        uint64_t cnt, b;
        ck_assert(oac_tensor_numel(t, &cnt));
        ck_assert(oac_elem_bytes(t->data_type, cnt, &b));
        v->n = (size_t)cnt;
        v->data = malloc(b ? b : 1);
        ck_assert_int_eq(oac_tensor_read(f->ctx, f->m, t, v->data, b), OAC_OK);
        oac_pbfile_free(pf);
    }
}

int kt_run(fx *f, bool planned, const char *outs, kt_val *out, size_t n)
{
    return kt_run_with(f, NULL, 1, planned, outs, out, n);
}

int kt_run_with(fx *f, const oac_run_hooks *h, uint64_t steps, bool planned,
                const char *outs, kt_val *out, size_t n)
{
    char dir[] = "/tmp/oac_kt_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    oac_run_opts ro = { .steps = steps, .dump_dir = dir };
    if (!f->m)
        fx_load(f);
    int rc = fx_check_run(f, NULL, 0, NULL, 0, &ro, h);
    if (rc == OAC_OK) {
        /* What the static plan says the run needs is what it measured:
         * every output was sized by its operator's inference rule. */
        if (planned)
            ck_assert_msg(f->e->planned_peak_bytes.known, "the plan is unknown");
        if (f->e->planned_peak_bytes.known)
            ck_assert_msg(f->e->peak_matches_plan, "planned %llu, measured %llu",
                          (unsigned long long)f->e->planned_peak_bytes.value,
                          (unsigned long long)f->e->measured_peak_bytes);
        kt_read_outs(f, dir, outs, out, n);
    } else {
        for (size_t i = 0; i < n; i++)
            memset(&out[i], 0, sizeof out[i]);
    }
    empty_dir(dir);
    return rc;
}

void kt_free(kt_val *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].data);
        v[i].data = NULL;
    }
}

void kt_expect(const kt_val *v, int32_t type, const char *dims, const double *want,
               size_t n, double tol)
{
    char got[128] = "";
    for (int i = 0; i < v->rank; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? "," : "",
                 (long long)v->dims[i]);
    ck_assert_msg(v->type == type, "type %d, want %d", v->type, type);
    ck_assert_str_eq(got, dims);
    ck_assert_uint_eq(v->n, n);
    for (size_t i = 0; i < n; i++) {
        double y = kt_get(v, i), w = want[i];
        bool ok = (isnan(w) && isnan(y)) || y == w ||
                  fabs(y - w) <= tol * (fabs(w) > 1 ? fabs(w) : 1);
        ck_assert_msg(ok, "%s[%zu] = %.9g, want %.9g", oac_elem_name(type), i, y, w);
    }
}

int kt_run_fail(fx *f, oac_code code, const char *node)
{
    kt_val none;
    int rc = kt_run(f, false, "", &none, 0);
    ck_assert_int_eq(rc, OAC_ERUNTIME);
    const oac_diag *d = diag_expect_run(f->d, code, oac_code_name(code));
    if (node)
        ck_assert_str_eq(d->node, node);
    return rc;
}

/* check_kernel_paged.c: the PagedCacheUpdate kernel (lib/kernels/paged.c,
 * contract section 2), driven through its core oac_paged_update with the
 * runtime's own instrumented allocator, so every case asserts its exact
 * allocation count and bytes, where the values landed (dequantized within
 * the format's error) and that untouched pages never move. */
#include "harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/paged.h"
#include "half.h"
#include "quant/quant.h"

/* Page [2, heads 2, page_size 16, head_size 4]: 256 elements. */
enum { HEADS = 2, PSIZE = 16, HSIZE = 4, NEL = 2 * HEADS * PSIZE * HSIZE };

/* Declarations, by index. */
enum { Q_INT4, Q_FP8, Q_INT2, Q_UINT4, Q_INT8, Q_H_INT8, Q_H_FP8, N_Q };
static const size_t q_bytes[N_Q] = { 128, 256, 64, 128, 256, 256, 256 };
/* Half a step (linear) or a relative bound (FP8: 2^-4 relative, plus half
 * the smallest subnormal). */
static double tol(int q, double x)
{
    switch (q) {
    case Q_INT4: return 0.0625;
    case Q_INT2: return 0.25;
    case Q_UINT4: return 0.125;
    case Q_INT8: case Q_H_INT8: return 0.025;
    default: return fabs(x) / 16 + 0x1p-10;
    }
}

typedef struct pfx {
    oac_ctx *ctx;
    oac_mb *mb;
    oac_ralloc a;
    oac_paged p;
    int32_t allowed[8];
    /* workspace the way the runtime keeps it: until the node ends */
    void *ws[4];
    size_t ws_bytes[4];
    size_t n_ws;
} pfx;

static int ws_cb(void *arg, size_t bytes, void **out)
{
    pfx *f = arg;
    ck_assert_uint_lt(f->n_ws, 4);
    *out = oac_ralloc_get(&f->a, bytes, true);
    if (!*out)
        return OAC_ENOMEM;
    f->ws[f->n_ws] = *out;
    f->ws_bytes[f->n_ws++] = bytes;
    return OAC_OK;
}

static void ws_free(pfx *f)
{
    for (size_t i = 0; i < f->n_ws; i++)
        oac_ralloc_put(&f->a, f->ws[i], f->ws_bytes[i]);
    f->n_ws = 0;
}

static void setup(pfx *f, int32_t elem_type, const int32_t *allowed, size_t n_allowed)
{
    memset(f, 0, sizeof *f);
    f->ctx = oac_ctx_new();
    f->mb = oac_mb_new(f->ctx);
    oac_mb_quant_linear(f->mb, "INT4_PAGE", OAC_T_FLOAT, OAC_T_INT4, 4, 1, 0.125f, 0);
    oac_mb_quant_fp8(f->mb, "FP8_PAGE", OAC_T_FLOAT);
    oac_mb_quant_linear(f->mb, "INT2_PAGE", OAC_T_FLOAT, OAC_T_UINT8, 2, 0, 0.5f, 2);
    oac_mb_quant_linear(f->mb, "UINT4_PAGE", OAC_T_FLOAT, OAC_T_UINT4, 4, 0, 0.25f, 8);
    oac_mb_quant_linear(f->mb, "INT8_PAGE", OAC_T_FLOAT, OAC_T_INT8, 8, 1, 0.05f, 0);
    oac_mb_quant_linear(f->mb, "H_INT8_PAGE", OAC_T_FLOAT16, OAC_T_INT8, 8, 1, 0.05f, 0);
    oac_mb_quant_fp8(f->mb, "H_FP8_PAGE", OAC_T_FLOAT16);
    ck_assert_uint_eq(oac_mb_proto(f->mb)->n_quantizations, N_Q);
    oac_ralloc_init(&f->a, f->ctx);
    f->p.elem_type = elem_type;
    const int64_t dims[4] = { 2, HEADS, PSIZE, HSIZE };
    memcpy(f->p.page_dims, dims, sizeof dims);
    if (n_allowed)
        memcpy(f->allowed, allowed, n_allowed * sizeof *allowed);
    f->p.allowed = n_allowed ? f->allowed : NULL;
    f->p.n_allowed = n_allowed;
}

static void teardown(pfx *f)
{
    ws_free(f);
    for (size_t i = 0; i < f->p.n_pages; i++)
        oac_page_release(&f->a, &f->p.pages[i]);
    oac_dealloc(f->ctx, f->p.pages);
    ck_assert_uint_eq(f->a.live, 0);   /* everything counted came back */
    oac_mb_free(f->mb);
    oac_ctx_free(f->ctx);
}

/* FLOAT values [2, HEADS, len, HSIZE] in [-0.9, 0.45]: inside every
 * format's range; distinct per row so a misplaced row shows. */
static float val(int64_t s, int64_t row, int64_t e, int seed)
{
    return (float)(((s * 37 + row * 11 + e * 5 + seed * 13) % 28) - 18) / 20.0f;
}

typedef struct vals {
    oac_tensor t;
    float f[2 * HEADS * PSIZE * HSIZE];
    uint16_t h[2 * HEADS * PSIZE * HSIZE];
} vals;

static void make_vals(vals *v, int32_t et, int64_t len, int seed)
{
    memset(&v->t, 0, sizeof v->t);
    v->t.elem_type = et;
    v->t.rank = 4;
    v->t.dims[0] = 2;
    v->t.dims[1] = HEADS;
    v->t.dims[2] = len;
    v->t.dims[3] = HSIZE;
    size_t k = 0;
    for (int64_t s = 0; s < 2 * HEADS; s++)
        for (int64_t r = 0; r < len; r++)
            for (int64_t e = 0; e < HSIZE; e++, k++) {
                v->f[k] = val(s, r, e, seed);
                v->h[k] = oac_f32_to_f16(v->f[k]);
            }
    v->t.data = et == OAC_T_FLOAT ? (void *)v->f : (void *)v->h;
    v->t.bytes = k * (et == OAC_T_FLOAT ? 4 : 2);
}

static int update(pfx *f, int64_t page_id, int64_t position, const vals *v,
                  int64_t qtype, oac_paged_call *out)
{
    oac_paged_call c = {
        .ctx = f->ctx, .alloc = &f->a, .model = oac_mb_proto(f->mb),
        .cache = &f->p, .page_id = page_id, .position = position,
        .values = &v->t, .quantized_type = qtype,
        .workspace = ws_cb, .workspace_arg = f, .cache_name = "pages",
    };
    int rc = oac_paged_update(&c);
    if (out)
        *out = c;
    ws_free(f);   /* the runtime frees workspace right after the node */
    return rc;
}

/* Decode page `id` and compare rows [from, from+len) with the values of
 * `seed` (tolerance tol_q, plus extra for twice-quantized rows), and
 * rows outside [keep_from, keep_to) with 0.0 when zero_rest. */
static void expect_rows(pfx *f, size_t id, int64_t from, int64_t len, int seed,
                        double extra)
{
    oac_page *pg = &f->p.pages[id];
    oac_qdesc d;
    char why[200];
    ck_assert(oac_qdesc_from_proto(&d, oac_mb_proto(f->mb)->quantizations[pg->quantized_type],
                                   why, sizeof why));
    float out[NEL];
    ck_assert_int_eq(oac_dequantize(f->ctx, &d, pg->data, pg->bytes, 0, OAC_T_FLOAT,
                                    out, NEL), 0);
    for (int64_t s = 0; s < 2 * HEADS; s++)
        for (int64_t r = from; r < from + len; r++)
            for (int64_t e = 0; e < HSIZE; e++) {
                float want = val(s, r - from, e, seed);
                float got = out[(s * PSIZE + r) * HSIZE + e];
                ck_assert_msg(fabs(got - want) <= tol(pg->quantized_type, want) + extra,
                              "page %zu slab %lld row %lld elem %lld: %g, want %g",
                              id, (long long)s, (long long)r, (long long)e, got, want);
            }
}

static void expect_zero_rows(pfx *f, size_t id, int64_t from, int64_t to)
{
    oac_page *pg = &f->p.pages[id];
    oac_qdesc d;
    char why[200];
    ck_assert(oac_qdesc_from_proto(&d, oac_mb_proto(f->mb)->quantizations[pg->quantized_type],
                                   why, sizeof why));
    float out[NEL];
    ck_assert_int_eq(oac_dequantize(f->ctx, &d, pg->data, pg->bytes, 0, OAC_T_FLOAT,
                                    out, NEL), 0);
    for (int64_t s = 0; s < 2 * HEADS; s++)
        for (int64_t r = from; r < to; r++)
            for (int64_t e = 0; e < HSIZE; e++)
                ck_assert(out[(s * PSIZE + r) * HSIZE + e] == 0.0f);
}

START_TEST(test_create_then_update_in_place)
{
    pfx f;
    setup(&f, OAC_T_FLOAT, NULL, 0);
    vals v;
    make_vals(&v, OAC_T_FLOAT, 3, 1);

    /* Empty cache, no attribute, any type allowed: the first is index 0. */
    ck_assert_int_eq(update(&f, 0, 0, &v, -1, NULL), 0);
    ck_assert_uint_eq(f.p.n_pages, 1);
    ck_assert_int_eq(f.p.pages[0].quantized_type, Q_INT4);
    ck_assert_uint_eq(f.p.pages[0].bytes, q_bytes[Q_INT4]);
    ck_assert_uint_eq(f.a.calls, 1);                     /* exactly the page */
    ck_assert_uint_eq(f.a.bytes, q_bytes[Q_INT4]);
    expect_rows(&f, 0, 0, 3, 1, 0);
    expect_zero_rows(&f, 0, 3, PSIZE);                   /* code of 0.0 */

    /* Same page, next rows: in place, nothing allocated. */
    void *addr = f.p.pages[0].data;
    make_vals(&v, OAC_T_FLOAT, 2, 2);
    ck_assert_int_eq(update(&f, 0, 3, &v, -1, NULL), 0);
    ck_assert_uint_eq(f.a.calls, 1);
    ck_assert_uint_eq(f.a.bytes, q_bytes[Q_INT4]);
    ck_assert_ptr_eq(f.p.pages[0].data, addr);
    expect_rows(&f, 0, 0, 3, 1, 0);                      /* earlier rows kept */
    expect_rows(&f, 0, 3, 2, 2, 0);
    expect_zero_rows(&f, 0, 5, PSIZE);

    /* The attribute naming the page's own type changes nothing either. */
    make_vals(&v, OAC_T_FLOAT, 1, 3);
    ck_assert_int_eq(update(&f, 0, PSIZE - 1, &v, Q_INT4, NULL), 0);
    ck_assert_uint_eq(f.a.calls, 1);
    expect_rows(&f, 0, PSIZE - 1, 1, 3, 0);

    /* A second page without attribute takes the previous page's type. */
    ck_assert_int_eq(update(&f, 1, 0, &v, -1, NULL), 0);
    ck_assert_uint_eq(f.p.n_pages, 2);
    ck_assert_int_eq(f.p.pages[1].quantized_type, Q_INT4);
    ck_assert_uint_eq(f.a.calls, 2);
    ck_assert_uint_eq(f.a.bytes, 2 * q_bytes[Q_INT4]);
    ck_assert_ptr_eq(f.p.pages[0].data, addr);

    /* A third in INT2 by attribute: starts as the zero point's code. */
    ck_assert_int_eq(update(&f, 2, 7, &v, Q_INT2, NULL), 0);
    ck_assert_int_eq(f.p.pages[2].quantized_type, Q_INT2);
    ck_assert_uint_eq(f.a.calls, 3);
    ck_assert_uint_eq(f.a.bytes, 2 * q_bytes[Q_INT4] + q_bytes[Q_INT2]);
    ck_assert_uint_eq(f.a.live, f.a.bytes);
    expect_rows(&f, 2, 7, 1, 3, 0);
    expect_zero_rows(&f, 2, 0, 7);
    expect_zero_rows(&f, 2, 8, PSIZE);
    ck_assert_ptr_eq(f.p.pages[0].data, addr);
    teardown(&f);
}
END_TEST

START_TEST(test_first_allowed_type)
{
    pfx f;
    const int32_t allowed[2] = { Q_FP8, Q_INT4 };
    setup(&f, OAC_T_FLOAT, allowed, 2);
    vals v;
    make_vals(&v, OAC_T_FLOAT, 4, 5);
    ck_assert_int_eq(update(&f, 0, 2, &v, -1, NULL), 0);
    ck_assert_int_eq(f.p.pages[0].quantized_type, Q_FP8);
    ck_assert_uint_eq(f.a.calls, 1);
    ck_assert_uint_eq(f.a.bytes, q_bytes[Q_FP8]);
    expect_rows(&f, 0, 2, 4, 5, 0);
    expect_zero_rows(&f, 0, 0, 2);
    teardown(&f);
}
END_TEST

/* INT4 -> UINT4 (128 bytes both) and INT8 -> FP8 (256 both): decoded into
 * workspace (NEL FLOATs), re-encoded in place; no page allocated. */
START_TEST(test_format_change_same_size)
{
    pfx f;
    setup(&f, OAC_T_FLOAT, NULL, 0);
    vals v;
    make_vals(&v, OAC_T_FLOAT, 5, 1);
    ck_assert_int_eq(update(&f, 0, 0, &v, Q_INT4, NULL), 0);
    ck_assert_int_eq(update(&f, 1, 0, &v, Q_INT8, NULL), 0);
    void *a0 = f.p.pages[0].data, *a1 = f.p.pages[1].data;
    uint64_t calls = f.a.calls, bytes = f.a.bytes, live = f.a.live;

    make_vals(&v, OAC_T_FLOAT, 2, 2);
    ck_assert_int_eq(update(&f, 0, 5, &v, Q_UINT4, NULL), 0);
    ck_assert_int_eq(f.p.pages[0].quantized_type, Q_UINT4);
    ck_assert_ptr_eq(f.p.pages[0].data, a0);
    ck_assert_uint_eq(f.p.pages[0].bytes, q_bytes[Q_UINT4]);
    ck_assert_uint_eq(f.a.calls, calls + 1);              /* workspace only */
    ck_assert_uint_eq(f.a.bytes, bytes + NEL * 4);
    ck_assert_uint_eq(f.a.live, live);
    ck_assert_uint_ge(f.a.peak, live + NEL * 4);
    expect_rows(&f, 0, 0, 5, 1, tol(Q_INT4, 0));          /* quantized twice */
    expect_rows(&f, 0, 5, 2, 2, 0);
    expect_zero_rows(&f, 0, 7, PSIZE);
    ck_assert_ptr_eq(f.p.pages[1].data, a1);              /* untouched */

    ck_assert_int_eq(update(&f, 1, 5, &v, Q_FP8, NULL), 0);
    ck_assert_int_eq(f.p.pages[1].quantized_type, Q_FP8);
    ck_assert_ptr_eq(f.p.pages[1].data, a1);
    ck_assert_uint_eq(f.a.calls, calls + 2);
    ck_assert_uint_eq(f.a.bytes, bytes + 2 * NEL * 4);
    expect_rows(&f, 1, 0, 5, 1, tol(Q_INT8, 0));
    expect_rows(&f, 1, 5, 2, 2, 0);
    ck_assert_ptr_eq(f.p.pages[0].data, a0);
    teardown(&f);
}
END_TEST

/* INT4 (128 bytes) -> FP8 (256) and FP8 -> INT2 (64): workspace plus the
 * new page, allocated before the old one is freed. */
START_TEST(test_format_change_other_size)
{
    pfx f;
    setup(&f, OAC_T_FLOAT, NULL, 0);
    vals v;
    make_vals(&v, OAC_T_FLOAT, 4, 1);
    for (int id = 0; id < 3; id++)
        ck_assert_int_eq(update(&f, id, 0, &v, Q_INT4, NULL), 0);
    void *a0 = f.p.pages[0].data, *a2 = f.p.pages[2].data;
    uint64_t calls = f.a.calls, bytes = f.a.bytes, live = f.a.live;
    ck_assert_uint_eq(live, 3 * q_bytes[Q_INT4]);

    make_vals(&v, OAC_T_FLOAT, 3, 2);
    ck_assert_int_eq(update(&f, 1, 4, &v, Q_FP8, NULL), 0);
    ck_assert_int_eq(f.p.pages[1].quantized_type, Q_FP8);
    ck_assert_uint_eq(f.p.pages[1].bytes, q_bytes[Q_FP8]);
    ck_assert_uint_eq(f.a.calls, calls + 2);              /* workspace, page */
    ck_assert_uint_eq(f.a.bytes, bytes + NEL * 4 + q_bytes[Q_FP8]);
    ck_assert_uint_eq(f.a.live, live - q_bytes[Q_INT4] + q_bytes[Q_FP8]);
    /* old page, workspace and new page were all live at once */
    ck_assert_uint_ge(f.a.peak, live + NEL * 4 + q_bytes[Q_FP8]);
    expect_rows(&f, 1, 0, 4, 1, tol(Q_INT4, 0));
    expect_rows(&f, 1, 4, 3, 2, 0);
    expect_zero_rows(&f, 1, 7, PSIZE);
    ck_assert_ptr_eq(f.p.pages[0].data, a0);              /* neighbours stay */
    ck_assert_ptr_eq(f.p.pages[2].data, a2);

    calls = f.a.calls;
    bytes = f.a.bytes;
    live = f.a.live;
    make_vals(&v, OAC_T_FLOAT, 1, 3);
    ck_assert_int_eq(update(&f, 1, PSIZE - 1, &v, Q_INT2, NULL), 0);
    ck_assert_uint_eq(f.p.pages[1].bytes, q_bytes[Q_INT2]);
    ck_assert_uint_eq(f.a.calls, calls + 2);
    ck_assert_uint_eq(f.a.bytes, bytes + NEL * 4 + q_bytes[Q_INT2]);
    ck_assert_uint_eq(f.a.live, live - q_bytes[Q_FP8] + q_bytes[Q_INT2]);
    expect_rows(&f, 1, PSIZE - 1, 1, 3, 0);
    ck_assert_ptr_eq(f.p.pages[0].data, a0);
    ck_assert_ptr_eq(f.p.pages[2].data, a2);
    teardown(&f);
}
END_TEST

/* A FLOAT16 cache: values are FLOAT16, workspace holds FLOAT16. */
START_TEST(test_float16_cache)
{
    pfx f;
    const int32_t allowed[2] = { Q_H_INT8, Q_H_FP8 };
    setup(&f, OAC_T_FLOAT16, allowed, 2);
    vals v;
    make_vals(&v, OAC_T_FLOAT16, 6, 4);
    ck_assert_int_eq(update(&f, 0, 1, &v, -1, NULL), 0);
    ck_assert_int_eq(f.p.pages[0].quantized_type, Q_H_INT8);
    ck_assert_uint_eq(f.a.calls, 1);
    expect_rows(&f, 0, 1, 6, 4, 0.001);
    make_vals(&v, OAC_T_FLOAT16, 1, 5);
    ck_assert_int_eq(update(&f, 0, 0, &v, Q_H_FP8, NULL), 0);
    ck_assert_uint_eq(f.a.calls, 2);
    ck_assert_uint_eq(f.a.bytes, q_bytes[Q_H_INT8] + NEL * 2);   /* FLOAT16 workspace */
    expect_rows(&f, 0, 0, 1, 5, 0.001);
    teardown(&f);
}
END_TEST

/* Findings change nothing and allocate nothing. */
static void expect_finding(pfx *f, int64_t page_id, int64_t position, const vals *v,
                           int64_t qtype, oac_code code, const char *word)
{
    size_t n_pages = f->p.n_pages;
    uint64_t calls = f->a.calls;
    uint8_t before[256];
    memcpy(before, f->p.pages[0].data, f->p.pages[0].bytes);
    int32_t qt0 = f->p.pages[0].quantized_type;
    oac_paged_call c;
    ck_assert_int_eq(update(f, page_id, position, v, qtype, &c), OAC_ERUNTIME);
    ck_assert_int_eq(c.code, code);
    ck_assert_msg(strstr(c.msg, word), "'%s' not in '%s'", word, c.msg);
    ck_assert_uint_eq(f->p.n_pages, n_pages);
    ck_assert_uint_eq(f->a.calls, calls);
    ck_assert_int_eq(f->p.pages[0].quantized_type, qt0);
    ck_assert_mem_eq(f->p.pages[0].data, before, f->p.pages[0].bytes);
}

START_TEST(test_bounds_and_types)
{
    pfx f;
    const int32_t allowed[4] = { Q_INT4, Q_FP8, Q_INT2, Q_H_FP8 };
    setup(&f, OAC_T_FLOAT, allowed, 4);
    vals v;
    make_vals(&v, OAC_T_FLOAT, 3, 1);
    ck_assert_int_eq(update(&f, 0, 0, &v, -1, NULL), 0);
    expect_finding(&f, 2, 0, &v, -1, OAC_CAPACITY_OVERFLOW, "page_id 2");
    expect_finding(&f, -1, 0, &v, -1, OAC_CAPACITY_OVERFLOW, "page_id -1");
    expect_finding(&f, 0, 14, &v, -1, OAC_CAPACITY_OVERFLOW, "= 17 exceeds the capacity 16 of 'pages'");
    expect_finding(&f, 1, 14, &v, -1, OAC_CAPACITY_OVERFLOW, "position 14");
    expect_finding(&f, 0, -1, &v, -1, OAC_CAPACITY_OVERFLOW, "position -1");
    expect_finding(&f, 0, INT64_MAX, &v, -1, OAC_CAPACITY_OVERFLOW,
                   "overflows and exceeds the capacity 16");
    /* Page types are named by QuantizationProto.name (issue 10, item 4). */
    expect_finding(&f, 0, 0, &v, Q_UINT4, OAC_PAGE_TYPE_INVALID,
                   "quantized_type 3 ('UINT4_PAGE') is not among");
    expect_finding(&f, 1, 0, &v, 99, OAC_PAGE_TYPE_INVALID, "out of range");
    expect_finding(&f, 0, 0, &v, Q_H_FP8, OAC_PAGE_TYPE_INVALID,
                   "quantized_type 6 ('H_FP8_PAGE') decodes to FLOAT16");
    /* the near misses: the last row, and a new page at the end */
    ck_assert_int_eq(update(&f, 0, PSIZE - 3, &v, -1, NULL), 0);
    ck_assert_int_eq(update(&f, 1, PSIZE - 3, &v, -1, NULL), 0);
    ck_assert_uint_eq(f.p.n_pages, 2);

    /* values that do not fit the pages */
    vals w;
    make_vals(&w, OAC_T_FLOAT, 1, 1);
    w.t.dims[3] = 2;
    expect_finding(&f, 0, 0, &w, -1, OAC_OPERAND_INVALID, "values");
    make_vals(&w, OAC_T_FLOAT16, 1, 1);
    expect_finding(&f, 0, 0, &w, -1, OAC_OPERAND_INVALID, "values");
    make_vals(&w, OAC_T_FLOAT, 1, 1);
    w.t.bytes = 4;
    expect_finding(&f, 0, 0, &w, -1, OAC_OPERAND_INVALID, "fewer bytes");

    /* a page whose bytes disagree with its type */
    f.p.pages[1].bytes = 64;
    expect_finding(&f, 1, 0, &v, -1, OAC_PAGE_TYPE_INVALID,
                   "holds 64 bytes, not the 128 its type (quantized_type 0, 'INT4_PAGE')");
    f.p.pages[1].bytes = q_bytes[Q_INT4];
    teardown(&f);
}
END_TEST

/* Out of memory leaves the cache as it was. */
START_TEST(test_alloc_failure)
{
    pfx f;
    setup(&f, OAC_T_FLOAT, NULL, 0);
    vals v;
    make_vals(&v, OAC_T_FLOAT, 2, 1);
    ck_assert_int_eq(update(&f, 0, 0, &v, Q_INT4, NULL), 0);
    for (unsigned long n = 1; n <= 3; n++) {
        /* creation: page table, then page */
        oac_ctx_fail_alloc_after(f.ctx, n);
        int rc = update(&f, 1, 0, &v, -1, NULL);
        oac_ctx_fail_alloc_after(f.ctx, 0);
        if (rc == 0) {
            ck_assert_uint_eq(f.p.n_pages, 2);
            break;
        }
        ck_assert_int_eq(rc, OAC_ENOMEM);
        ck_assert_uint_eq(f.p.n_pages, 1);
        ck_assert_uint_eq(f.a.live, q_bytes[Q_INT4]);
    }
    ck_assert_uint_eq(f.p.n_pages, 2);
    /* format change: workspace, then the new page */
    void *a0 = f.p.pages[0].data;
    for (unsigned long n = 1; n <= 2; n++) {
        oac_ctx_fail_alloc_after(f.ctx, n);
        int rc = update(&f, 0, 0, &v, Q_FP8, NULL);
        oac_ctx_fail_alloc_after(f.ctx, 0);
        ck_assert_int_eq(rc, OAC_ENOMEM);
        ck_assert_int_eq(f.p.pages[0].quantized_type, Q_INT4);
        ck_assert_ptr_eq(f.p.pages[0].data, a0);
        ck_assert_uint_eq(f.a.live, 2 * q_bytes[Q_INT4]);
    }
    ck_assert_int_eq(update(&f, 0, 0, &v, Q_FP8, NULL), 0);
    ck_assert_int_eq(f.p.pages[0].quantized_type, Q_FP8);
    teardown(&f);
}
END_TEST

/* ---- through the runtime: the kernel-table entry ------------------------- */

/* Check and run a packed model for `steps` steps; returns the execution
 * (caller frees) and the diagnostics in *d. */
static oac_execution *run_buf(oac_ctx *ctx, const uint8_t *buf, size_t len,
                              uint64_t steps, oac_diags **d)
{
    *d = oac_diags_new(ctx);
    oac_model *m = NULL;
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, buf, len, "t.onnx", NULL, *d), 0);
    oac_check_opts co = { 0 };
    oac_analysis *a = NULL;
    ck_assert_int_eq(oac_check(ctx, &a, m, &co, *d), 0);
    ck_assert_uint_eq(oac_diags_count_severity(*d, OAC_SEV_ERROR), 0);
    oac_run_opts ro = { .steps = steps };
    oac_execution *e = NULL;
    int rc = oac_run(ctx, &e, m, a, &ro, *d);
    ck_assert_msg(rc == 0, "oac_run: %d %s", rc, oac_errmsg(ctx));
    oac_analysis_free(a);
    oac_model_free(m);
    return e;
}

/* The example paged_cache (INT4 pages of 128 bytes, one row per step,
 * page_size 16): a page is created at steps 1, 17 and 33 and nothing is
 * allocated in between; the cache is updated in place every step. */
START_TEST(test_run_paged_cache_example)
{
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_example_pack(ctx, oac_example_find("paged_cache"), &buf, &len), 0);
    oac_diags *d;
    oac_execution *e = run_buf(ctx, buf, len, 34, &d);
    ck_assert_uint_eq(e->steps_completed, 34);
    /* Steps 1-8 and 27-34 are kept, the 18 between counted. */
    ck_assert_uint_eq(e->n_per_step, 16);
    ck_assert_uint_eq(e->per_step_omitted, 18);
    for (size_t i = 0; i < e->n_per_step; i++) {
        uint64_t step = e->per_step[i].step;
        ck_assert_uint_eq(step, i < 8 ? i + 1 : i + 19);
        bool new_page = step == 1 || step == 17 || step == 33;
        ck_assert_uint_eq(e->per_step[i].alloc_calls, new_page ? 1 : 0);
        ck_assert_uint_eq(e->per_step[i].alloc_bytes, new_page ? 128 : 0);
    }
    ck_assert_uint_eq(e->identity_checked, 34);
    ck_assert_uint_eq(e->identity_held, 34);
    ck_assert_uint_eq(e->second_cache_bytes, 0);
    oac_execution_free(e);
    oac_diags_free(d);
    free(buf);
    oac_ctx_free(ctx);
}
END_TEST

/* A node without output_alias runs out of place: its output is a counted
 * copy of the cache's pages (none yet at step 1) plus the new page. */
START_TEST(test_run_out_of_place)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    int32_t allowed[1];
    allowed[0] = oac_mb_quant_fp8(mb, "FP8_PAGE", OAC_T_FLOAT);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input_paged(g, "cache", OAC_T_FLOAT, "2,2,16,4", allowed, 1);
    oac_gb_input(g, "page_id", OAC_T_INT64, "");
    oac_gb_input(g, "values", OAC_T_FLOAT, "2,2,1,4");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    oac_gb_node(g, "PagedCacheUpdate", "onnx_alias", "update",
                "cache,page_id,values,position", "updated_cache");
    oac_gb_output_paged(g, "updated_cache", OAC_T_FLOAT, "2,2,16,4", allowed, 1);
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_mb_pack(mb, &buf, &len), 0);
    oac_mb_free(mb);
    oac_diags *d;
    oac_execution *e = run_buf(ctx, buf, len, 1, &d);
    ck_assert_int_ge(oac_diags_find(d, OAC_ALIAS_IMPLIED), 0);
    ck_assert_uint_eq(e->steps_completed, 1);
    ck_assert_uint_eq(e->per_step[0].alloc_calls, 1);   /* the FP8 page */
    ck_assert_uint_eq(e->per_step[0].alloc_bytes, 256);
    oac_execution_free(e);
    oac_diags_free(d);
    free(buf);
    oac_ctx_free(ctx);
}
END_TEST

/* Two chained updates of one page, INT4 then FP8 by attribute: every
 * step re-encodes the page twice through the runtime's workspace.
 * Step 1: INT4 page (128) created; FP8 change: workspace 1024 + page 256.
 * Later steps: FP8 -> INT4 (1024 + 128), INT4 -> FP8 (1024 + 256). */
START_TEST(test_run_format_changes)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    int32_t allowed[2];
    allowed[0] = oac_mb_quant_linear(mb, "INT4_PAGE", OAC_T_FLOAT, OAC_T_INT4, 4, 1, 0.125f, 0);
    allowed[1] = oac_mb_quant_fp8(mb, "FP8_PAGE", OAC_T_FLOAT);
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input_paged(g, "cache", OAC_T_FLOAT, "2,2,16,4", allowed, 2), 1);
    oac_gb_input(g, "page_id", OAC_T_INT64, "");
    oac_gb_input(g, "values", OAC_T_FLOAT, "2,2,1,4");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *n1 = oac_gb_node(g, "PagedCacheUpdate", "onnx_alias", "u1",
                                      "cache,page_id,values,position", "c1");
    oac_node_attr_int(g, n1, "quantized_type", 0);
    oac_node_alias(g, n1, 0, 0, 1);
    Onnx__NodeProto *n2 = oac_gb_node(g, "PagedCacheUpdate", "onnx_alias", "u2",
                                      "c1,page_id,values,position", "c2");
    oac_node_attr_int(g, n2, "quantized_type", 1);
    oac_node_alias(g, n2, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output_paged(g, "c2", OAC_T_FLOAT, "2,2,16,4", allowed, 2),
                    "cache");
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_mb_pack(mb, &buf, &len), 0);
    oac_mb_free(mb);
    oac_diags *d;
    oac_execution *e = run_buf(ctx, buf, len, 3, &d);
    ck_assert_uint_eq(e->steps_completed, 3);
    ck_assert_uint_eq(e->per_step[0].alloc_calls, 3);
    ck_assert_uint_eq(e->per_step[0].alloc_bytes, 128 + 1024 + 256);
    for (int i = 1; i < 3; i++) {
        ck_assert_uint_eq(e->per_step[i].alloc_calls, 4);
        ck_assert_uint_eq(e->per_step[i].alloc_bytes, 1024 + 128 + 1024 + 256);
    }
    ck_assert_uint_eq(e->identity_held, e->identity_checked);
    oac_execution_free(e);
    oac_diags_free(d);
    free(buf);
    oac_ctx_free(ctx);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("kernel_paged");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_create_then_update_in_place);
    tcase_add_test(tc, test_first_allowed_type);
    tcase_add_test(tc, test_format_change_same_size);
    tcase_add_test(tc, test_format_change_other_size);
    tcase_add_test(tc, test_float16_cache);
    tcase_add_test(tc, test_bounds_and_types);
    tcase_add_test(tc, test_alloc_failure);
    tcase_add_test(tc, test_run_paged_cache_example);
    tcase_add_test(tc, test_run_out_of_place);
    tcase_add_test(tc, test_run_format_changes);
    suite_add_tcase(s, tc);
    return s;
}

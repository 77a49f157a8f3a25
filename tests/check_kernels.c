/* check_kernels.c: the kernel lookup and the kernels (lib/kernels/lookup.c,
 * kernels/cache.c, kernels/math.c, kernels/shape.c; contract 2 and 5).
 *
 * The cache kernels are compared with an independent reference: after N
 * steps the caller's cache holds exactly what the same updates applied
 * element by element (by multi-index, bit-packed for sub-byte types) to a
 * plain array hold, for every fixed-size element type and every axis, and
 * the bytes past the written positions are untouched.  TensorScatter is
 * checked in linear and circular mode, with per-batch write_indices, and
 * its overflow.  Ordinary operators are checked on small hand-computed
 * cases through --dump, the same path the command line uses.
 */
#include <math.h>

#include "harness.h"
#include "run/kernel_api.h"

START_TEST(table_lookup)
{
    ck_assert_ptr_nonnull(oac_kernel_lookup("onnx_alias", "CacheUpdate"));
    ck_assert_ptr_nonnull(oac_kernel_lookup("onnx_alias", "PagedCacheUpdate"));
    ck_assert_ptr_nonnull(oac_kernel_lookup("", "TensorScatter"));
    ck_assert_ptr_nonnull(oac_kernel_lookup("ai.onnx", "MatMul"));
    ck_assert_ptr_nonnull(oac_kernel_lookup(NULL, "Softmax"));
    ck_assert_ptr_null(oac_kernel_lookup("", "CacheUpdate"));   /* wrong domain */
    ck_assert_ptr_null(oac_kernel_lookup("onnx_alias", "MatMul"));
    ck_assert_ptr_null(oac_kernel_lookup("", "Det"));        /* no row */
    ck_assert_ptr_null(oac_kernel_lookup("", NULL));
    /* The runtime's kernel is the row's, under any spelling of the
     * row's domain. */
    for (int i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *op = oac_op_get((oac_op_id)i);
        ck_assert_ptr_eq(oac_kernel_lookup(op->domain, op->op_type), op->kernel);
        if (oac_domain_is_onnx(op->domain))
            ck_assert_ptr_eq(oac_kernel_lookup("ai.onnx", op->op_type), op->kernel);
    }
}
END_TEST

/* ---- CacheUpdate against a plain-array reference --------------------- */

static unsigned get_bit(const uint8_t *p, uint64_t i)
{
    return (p[i / 8] >> (i % 8)) & 1u;
}

static void set_bit(uint8_t *p, uint64_t i, unsigned v)
{
    p[i / 8] = (uint8_t)((p[i / 8] & ~(1u << (i % 8))) | (v << (i % 8)));
}

/* Element e of a packed array of `bits`-bit elements. */
static void copy_elem(uint8_t *dst, uint64_t de, const uint8_t *src, uint64_t se,
                      unsigned bits)
{
    for (unsigned b = 0; b < bits; b++)
        set_bit(dst, de * bits + b, get_bit(src, se * bits + b));
}

enum { RANK = 4, CAP = 6, LEN = 2, STEPS = 2 };
static const int64_t base_dims[RANK] = { 2, 3, 4, 2 };

static void dims_str(char *s, size_t n, const int64_t *d)
{
    snprintf(s, n, "%lld,%lld,%lld,%lld", (long long)d[0], (long long)d[1],
             (long long)d[2], (long long)d[3]);
}

static uint64_t prod(const int64_t *d)
{
    return (uint64_t)(d[0] * d[1] * d[2] * d[3]);
}

/* Apply one update to ref by multi-index: values[i0,i1,i2,i3] goes to
 * cache[..., pos + i_axis, ...]. */
static void ref_update(uint8_t *ref, const int64_t *cd, const uint8_t *vals,
                       const int64_t *vd, int axis, int64_t pos, unsigned bits)
{
    int64_t i[RANK];
    uint64_t e = 0;
    for (i[0] = 0; i[0] < vd[0]; i[0]++)
        for (i[1] = 0; i[1] < vd[1]; i[1]++)
            for (i[2] = 0; i[2] < vd[2]; i[2]++)
                for (i[3] = 0; i[3] < vd[3]; i[3]++, e++) {
                    int64_t c[RANK];
                    memcpy(c, i, sizeof c);
                    c[axis] += pos;
                    uint64_t ce = (uint64_t)(((c[0] * cd[1] + c[1]) * cd[2] + c[2]) * cd[3] + c[3]);
                    copy_elem(ref, ce, vals, e, bits);
                }
}

/* Run STEPS CacheUpdate steps of elem type t along axis (as given to the
 * node, possibly negative) and compare with the reference. */
static void check_cache_update_dims(int32_t t, int axis_attr, const int64_t base[RANK])
{
    unsigned bits = oac_elem_bits(t);
    int axis = axis_attr < 0 ? axis_attr + RANK : axis_attr;
    int64_t cd[RANK], vd[RANK];
    memcpy(cd, base, sizeof cd);
    memcpy(vd, base, sizeof vd);
    cd[axis] = CAP;
    vd[axis] = LEN;
    size_t cbytes = (size_t)((prod(cd) * bits + 7) / 8);
    size_t vbytes = (size_t)((prod(vd) * bits + 7) / 8);
    uint8_t *vals = malloc(vbytes), *store = malloc(cbytes), *ref = malloc(cbytes);
    for (size_t i = 0; i < vbytes; i++)
        vals[i] = (uint8_t)(i * 37 + 11 + t);
    memset(store, 0xA5, cbytes);
    memset(ref, 0xA5, cbytes);

    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    char cs[64], vs[64];
    dims_str(cs, sizeof cs, cd);
    dims_str(vs, sizeof vs, vd);
    oac_vi_access(g, oac_gb_input(g, "cache", t, cs), 1);
    oac_gb_init_raw(g, "values", t, vs, vals, vbytes);
    oac_gb_input(g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "upd",
                                     "cache,values,position", "out");
    oac_node_attr_int(g, n, "axis", axis_attr);
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "out", t, cs), "cache");
    fx_load(&f);

    oac_binding b;
    oac_binding_init(&b, "cache", store, cbytes, true);
    oac_binding *bl[1] = { &b };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 1 };
    oac_run_opts ro = { .steps = STEPS };
    int rc = oac_run_with_hooks(f.ctx, &f.e, f.m, NULL, &ro, &h, f.d);
    ck_assert_msg(rc == OAC_OK, "type %s axis %d: rc %d %s", oac_elem_name(t), axis_attr,
                  rc, oac_diags_count(f.d) ? oac_diags_get(f.d, 0)->message : oac_errmsg(f.ctx));
    for (int s = 0; s < STEPS; s++) {
        ref_update(ref, cd, vals, vd, axis, (int64_t)s * LEN, bits);
        /* Zero allocations in the update, every step. */
        ck_assert_uint_eq(f.e->per_step[s].alloc_calls, 0);
    }
    ck_assert_msg(!memcmp(store, ref, cbytes), "type %s axis %d: cache differs",
                  oac_elem_name(t), axis_attr);
    ck_assert_uint_eq(f.e->identity_held, STEPS);
    fx_end(&f);
    free(vals);
    free(store);
    free(ref);
}

static void check_cache_update(int32_t t, int axis_attr)
{
    check_cache_update_dims(t, axis_attr, base_dims);
}

/* Runs the kernel copies in 128-byte blocks, then 32-byte blocks and a
 * tail (kernels/cache.c, copy_run), and runs over its SHORT_RUN that go
 * to memcpy whole: each shape's run along axis 2 is LEN x its last dim x
 * the element size. */
START_TEST(cache_update_run_lengths)
{
    static const struct {
        int32_t t;
        int64_t dims[RANK];
    } rows[] = {
        { OAC_T_FLOAT, { 1, 2, 4, 300 } },     /* 2400 bytes: over SHORT_RUN */
        { OAC_T_FLOAT, { 1, 2, 4, 128 } },     /* 1024: the last short run */
        { OAC_T_FLOAT, { 1, 2, 4, 129 } },     /* 1032: the first long one */
        { OAC_T_FLOAT, { 1, 2, 4, 127 } },     /* 1016: 7 x 128, 3 x 32, a tail of 24 */
        { OAC_T_UINT8, { 1, 2, 4, 85 } },      /* 170: 128, 32, a tail of 10 */
        { OAC_T_UINT8, { 1, 2, 4, 64 } },      /* 128: one 128-byte block alone */
        { OAC_T_UINT8, { 1, 2, 4, 37 } },      /* 74: two 32-byte blocks, a tail of 10 */
        { OAC_T_FLOAT16, { 2, 3, 4, 13 } },    /* 52: one 32-byte block, a tail of 20 */
        { OAC_T_DOUBLE, { 1, 1, 4, 1 } },      /* 16: a tail alone */
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (int axis = -2; axis <= 2; axis += 4)   /* -2, 2: the same axis */
            check_cache_update_dims(rows[r].t, axis, rows[r].dims);
}
END_TEST

START_TEST(cache_update_every_type_every_axis)
{
    static const int axes[] = { 0, 1, 2, 3, -1, -2, -4 };
    int tested = 0;
    for (int32_t t = 1; t <= 26; t++) {
        if (!oac_elem_bits(t))
            continue;     /* STRING: no fixed size */
        for (size_t a = 0; a < sizeof axes / sizeof axes[0]; a++)
            check_cache_update(t, axes[a]);
        tested++;
    }
    ck_assert_int_ge(tested, 20);
}
END_TEST

/* A cache update model over FLOAT [1, cap, 2] with values [1, len, 2]. */
static void small_update(fx *f, int64_t cap, int64_t len, bool alias, const char *pos_init)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    char cs[32], vs[32];
    snprintf(cs, sizeof cs, "1,%lld,2", (long long)cap);
    snprintf(vs, sizeof vs, "1,%lld,2", (long long)len);
    oac_vi_access(g, oac_gb_input(g, "cache", OAC_T_FLOAT, cs), 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, vs);
    if (pos_init) {
        int64_t p = strtoll(pos_init, NULL, 10);
        oac_gb_init_i64(g, "position", "", &p, 1);
    } else {
        oac_gb_input(g, "position", OAC_T_INT64, "");
    }
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "upd",
                                     "cache,values,position", "out");
    if (alias) {
        oac_node_alias(g, n, 0, 0, 1);
        oac_vi_alias_of(g, oac_gb_output(g, "out", OAC_T_FLOAT, cs), "cache");
    } else {
        oac_gb_output(g, "out", OAC_T_FLOAT, cs);
    }
    fx_load(f);
}

START_TEST(negative_position_overflows)
{
    fx f;
    small_update(&f, 4, 1, true, "-1");
    float store[8];
    memset(store, 0x7f, sizeof store);
    oac_binding b;
    oac_binding_init(&b, "cache", store, sizeof store, true);
    oac_binding *bl[1] = { &b };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 1 };
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run_with_hooks(f.ctx, &f.e, f.m, NULL, &ro, &h, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_CAPACITY_OVERFLOW), 1);
    for (size_t i = 0; i < sizeof store; i++)
        ck_assert_int_eq(((uint8_t *)store)[i], 0x7f);   /* nothing written */
    fx_end(&f);
}
END_TEST

START_TEST(out_of_place_allocates_one_cache)
{
    fx f;
    small_update(&f, 16, 2, false, NULL);
    oac_run_opts ro = { .steps = 4 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_OK);
    for (size_t i = 0; i < 4; i++) {
        ck_assert_uint_eq(f.e->per_step[i].alloc_calls, 1);
        ck_assert_uint_eq(f.e->per_step[i].alloc_bytes, 16 * 2 * 4);
    }
    ck_assert_uint_eq(f.e->second_cache_bytes, 16 * 2 * 4);
    fx_end(&f);
}
END_TEST

/* CacheUpdate called directly, without a run: cache [1, 2, 4, 1] FLOAT
 * (axis -2: capacity 4) bound and writable, update [1, 2, 1, 1] = {1, 2},
 * an INT64 position; the call's output is the cache (MUST_ALIAS). */
typedef struct direct {
    oac_ctx *ctx;
    oac_diags *d;
    oac_ralloc ra;
    Onnx__NodeProto node;
    float c4[8], u[2];
    int64_t pos;
    oac_rtval vc, vu, vp;
    oac_rtval *in[3], *out[1];
    int alias[1];
    oac_kernel_call k;
} direct;

static void direct_init(direct *x, const char *name)
{
    *x = (direct){ .u = { 1, 2 } };
    x->ctx = oac_ctx_new();
    x->d = oac_diags_new(x->ctx);
    oac_ralloc_init(&x->ra, x->ctx);
    x->node = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
    x->node.op_type = "CacheUpdate";
    x->node.domain = "onnx_alias";
    x->node.name = (char *)name;
    x->vc = (oac_rtval){ .kind = OAC_RTV_TENSOR, .storage = OAC_STORE_BOUND,
                         .writable = true,
                         .t = { .elem_type = OAC_T_FLOAT, .rank = 4, .dims = { 1, 2, 4, 1 },
                                .data = x->c4, .bytes = sizeof x->c4 } };
    x->vu = (oac_rtval){ .kind = OAC_RTV_TENSOR, .storage = OAC_STORE_CONST,
                         .t = { .elem_type = OAC_T_FLOAT, .rank = 4, .dims = { 1, 2, 1, 1 },
                                .data = x->u, .bytes = sizeof x->u } };
    x->vp = (oac_rtval){ .kind = OAC_RTV_TENSOR, .storage = OAC_STORE_CONST,
                         .t = { .elem_type = OAC_T_INT64, .rank = 0, .data = &x->pos,
                                .bytes = sizeof x->pos } };
    x->k = (oac_kernel_call){ .ctx = x->ctx, .node = &x->node, .node_name = name,
                              .in = x->in, .n_in = 3, .out = x->out, .n_out = 1,
                              .out_alias = x->alias, .alloc = &x->ra, .diags = x->d };
}

/* Ports {cache, update, position} with position at; output the cache. */
static void direct_ports(direct *x, oac_rtval *cache, int64_t at)
{
    x->pos = at;
    x->in[0] = cache;
    x->in[1] = &x->vu;
    x->in[2] = &x->vp;
    x->out[0] = cache;
}

static int direct_call(direct *x)
{
    return oac_kernel_lookup("onnx_alias", "CacheUpdate")(&x->k);
}

static void direct_free(direct *x)
{
    oac_diags_free(x->d);
    oac_ctx_free(x->ctx);
}

/* One step: the ports at position at, then the call. */
static int direct_step(direct *x, oac_rtval *cache, int64_t at)
{
    direct_ports(x, cache, at);
    return direct_call(x);
}

/* With a kept state (oac_kstate), as the main graph's frame gives it: the
 * first call resolves and keeps, a later one on the same cache reuses
 * (and still refuses an overflow, writing nothing), and another cache
 * (other storage and capacity) resolves again rather than using the kept
 * layout. */
START_TEST(cache_update_kept_state)
{
    direct x;
    direct_init(&x, "kept");
    oac_kstate st = { .ready = false };
    x.k.state = &st;
    float c6[12] = { 0 };
    ck_assert_int_eq(direct_step(&x, &x.vc, 0), OAC_OK);
    ck_assert(st.ready);
    ck_assert_int_eq(direct_step(&x, &x.vc, 3), OAC_OK);
    static const float want4[8] = { 1, 0, 0, 1, 2, 0, 0, 2 };
    ck_assert(!memcmp(x.c4, want4, sizeof x.c4));
    ck_assert_int_eq(direct_step(&x, &x.vc, 4), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(x.d, OAC_CAPACITY_OVERFLOW), 1);
    ck_assert(!memcmp(x.c4, want4, sizeof x.c4));      /* nothing written */
    /* Another cache, capacity 6: its own layout, not the kept one. */
    oac_rtval v6 = x.vc;
    v6.t.dims[2] = 6;
    v6.t.data = c6;
    v6.t.bytes = sizeof c6;
    ck_assert_int_eq(direct_step(&x, &v6, 5), OAC_OK);
    static const float want6[12] = { 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2 };
    ck_assert(!memcmp(c6, want6, sizeof c6));
    ck_assert(!memcmp(x.c4, want4, sizeof x.c4));
    ck_assert_uint_eq(x.ra.calls, 0);
    direct_free(&x);
}
END_TEST

/* A kept plan serves a step only while what it came from holds
 * (kernels/cache.c, plan_holds): after a kept first step at position 0,
 * each row changes one thing the plan was resolved from (the clean row
 * nothing), and the step at position 1 must do exactly what the same
 * two calls do without a kept state: the same status, the same
 * diagnostics, the same cache bytes, the same allocations. */
static float kept_u4[4] = { 5, 6, 7, 8 };
static oac_rtval kept_other;

static void kept_same(direct *x) { (void)x; }
static void kept_reshaped(direct *x)        /* same storage: [1, 1, 8, 1] */
{
    x->vc.t.dims[1] = 1;
    x->vc.t.dims[2] = 8;
    x->vu.t.dims[1] = 1;
}
static void kept_longer(direct *x)          /* update [1, 2, 2, 1] */
{
    x->vu.t.dims[2] = 2;
    x->vu.t.data = kept_u4;
    x->vu.t.bytes = sizeof kept_u4;
}
static void kept_update_f16(direct *x) { x->vu.t.elem_type = OAC_T_FLOAT16; }
static void kept_cache_i32(direct *x) { x->vc.t.elem_type = OAC_T_INT32; }
static void kept_update_rank3(direct *x)    /* [2, 1, 1] */
{
    x->vu.t.rank = 3;
    x->vu.t.dims[0] = 2;
    x->vu.t.dims[1] = 1;
    x->vu.t.dims[2] = 1;
}
static void kept_out_elsewhere(direct *x)
{
    kept_other = (oac_rtval){ .kind = OAC_RTV_NONE };
    x->out[0] = &kept_other;
    x->alias[0] = -1;
}
static void kept_not_aliased(direct *x) { x->alias[0] = -1; }
static void kept_view_elsewhere(direct *x)
{
    kept_out_elsewhere(x);
    x->alias[0] = 0;
}

static const struct kept_row {
    const char *what;
    void (*change)(direct *x);
    int want_rc;
} kept_rows[] = {
    { "nothing changed", kept_same, OAC_OK },
    { "cache reshaped, same storage", kept_reshaped, OAC_OK },
    { "update two rows long", kept_longer, OAC_OK },
    { "update FLOAT16", kept_update_f16, OAC_ERUNTIME },
    { "cache INT32", kept_cache_i32, OAC_ERUNTIME },
    { "update rank 3", kept_update_rank3, OAC_ERUNTIME },
    { "output another value", kept_out_elsewhere, OAC_OK },
    { "output the cache, not aliased", kept_not_aliased, OAC_EINTERNAL },
    { "output another value, aliased", kept_view_elsewhere, OAC_ERUNTIME },
};

/* Both steps of a row, kept or not; the second step's status. */
static int kept_two_steps(direct *x, const struct kept_row *r, oac_kstate *st)
{
    x->k.state = st;
    ck_assert_int_eq(direct_step(x, &x->vc, 0), OAC_OK);
    direct_ports(x, &x->vc, 1);
    r->change(x);
    int rc = direct_call(x);
    if (x->out[0] == &kept_other && kept_other.t.data)
        oac_ralloc_put(&x->ra, kept_other.t.data, kept_other.t.bytes);
    return rc;
}

START_TEST(kept_plan_rechecked)
{
    const struct kept_row *r = &kept_rows[_i];
    direct kept, fresh;
    oac_kstate st = { .ready = false };
    direct_init(&kept, "kept");
    direct_init(&fresh, "kept");
    int rc_kept = kept_two_steps(&kept, r, &st);
    int rc_fresh = kept_two_steps(&fresh, r, NULL);
    ck_assert_msg(rc_kept == r->want_rc && rc_fresh == r->want_rc, "%s: %d, %d (want %d)",
                  r->what, rc_kept, rc_fresh, r->want_rc);
    ck_assert_msg(!memcmp(kept.c4, fresh.c4, sizeof kept.c4), "%s: cache", r->what);
    ck_assert_uint_eq(oac_diags_count(kept.d), oac_diags_count(fresh.d));
    for (size_t i = 0; i < oac_diags_count(kept.d); i++)
        ck_assert_int_eq(oac_diags_get(kept.d, i)->code, oac_diags_get(fresh.d, i)->code);
    ck_assert_uint_eq(kept.ra.calls, fresh.ra.calls);
    if (r->change == kept_same)
        ck_assert(st.ready);
    direct_free(&kept);
    direct_free(&fresh);
}
END_TEST

/* An input a kernel reads that is absent (past n_in, or a NULL port) or
 * not a dense tensor (a paged value) is refused with kernel-error naming
 * the node and the input, before the cache is touched; the clean row has
 * all three. */
static const struct missing_row {
    const char *what;
    size_t n_in;
    int null_at, paged_at;     /* -1: none */
    int want_rc;
    const char *says;
} missing_rows[] = {
    { "all three present", 3, -1, -1, OAC_OK, NULL },
    { "position past n_in", 2, -1, -1, OAC_ERUNTIME, "input 2 is missing" },
    { "cache port NULL", 3, 0, -1, OAC_ERUNTIME, "input 0 is missing" },
    { "update port NULL", 3, 1, -1, OAC_ERUNTIME, "input 1 is missing" },
    { "update is paged", 3, -1, 1, OAC_ERUNTIME, "input 1 is missing or not a tensor" },
};

START_TEST(missing_inputs_refused)
{
    const struct missing_row *r = &missing_rows[_i];
    direct x;
    direct_init(&x, "upd");
    direct_ports(&x, &x.vc, 1);
    x.k.n_in = r->n_in;
    if (r->null_at >= 0)
        x.in[r->null_at] = NULL;
    if (r->paged_at >= 0)
        x.in[r->paged_at]->kind = OAC_RTV_PAGED;
    ck_assert_int_eq(direct_call(&x), r->want_rc);
    static const float none[8] = { 0 }, wrote[8] = { 0, 1, 0, 0, 0, 2, 0, 0 };
    ck_assert_msg(!memcmp(x.c4, r->says ? none : wrote, sizeof x.c4), "%s: cache", r->what);
    ck_assert_uint_eq(diag_count(x.d, OAC_KERNEL_ERROR), r->says ? 1 : 0);
    if (r->says) {
        const char *msg = oac_diags_get(x.d, 0)->message;
        ck_assert_msg(strstr(msg, r->says) && strstr(msg, "node 'upd' (CacheUpdate)"),
                      "%s: %s", r->what, msg);
    }
    ck_assert_uint_eq(x.ra.calls, 0);
    direct_free(&x);
}
END_TEST

/* ---- TensorScatter ---------------------------------------------------- */

/* past [2, 1, 4, 2] FLOAT, update [2, 1, 3, 2]; write_indices an
 * initializer (fixed) or a graph input (advanced by the runtime). */
static void scatter_model(fx *f, const char *mode, const int64_t *wi)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_mb_opset(mb, "", 24);
    oac_vi_access(g, oac_gb_input(g, "past", OAC_T_FLOAT, "2,1,4,2"), 1);
    float upd[12];
    for (int i = 0; i < 12; i++)
        upd[i] = (float)(i + 1);
    oac_gb_init_f32(g, "update", "2,1,3,2", upd, 12);
    if (wi)
        oac_gb_init_i64(g, "write_pos", "2", wi, 2);
    else
        oac_gb_input(g, "write_pos", OAC_T_INT64, "2");
    Onnx__NodeProto *n = oac_gb_node(g, "TensorScatter", NULL, "scatter",
                                     "past,update,write_pos", "present");
    oac_node_attr_string(g, n, "mode", mode);
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "present", OAC_T_FLOAT, "2,1,4,2"), "past");
    fx_load(f);
}

static int scatter_run(fx *f, float *store, uint64_t steps)
{
    oac_binding b;
    oac_binding_init(&b, "past", store, 16 * sizeof(float), true);
    oac_binding *bl[1] = { &b };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 1 };
    oac_run_opts ro = { .steps = steps };
    return oac_run_with_hooks(f->ctx, &f->e, f->m, NULL, &ro, &h, f->d);
}

START_TEST(tensor_scatter_circular)
{
    fx f;
    int64_t wi[2] = { 1, 3 };
    scatter_model(&f, "circular", wi);
    float store[16] = { 0 };
    ck_assert_int_eq(scatter_run(&f, store, 1), OAC_OK);
    /* Batch 0 rows 1..3 = update rows 0..2; batch 1 rows 3,0,1. */
    const float want[16] = { 0, 0, 1, 2, 3, 4, 5, 6,
                             9, 10, 11, 12, 0, 0, 7, 8 };
    for (int i = 0; i < 16; i++)
        ck_assert_float_eq(store[i], want[i]);
    ck_assert_uint_eq(f.e->per_step[0].alloc_calls, 0);
    fx_end(&f);
}
END_TEST

START_TEST(tensor_scatter_linear_overflow)
{
    fx f;
    int64_t wi[2] = { 1, 3 };      /* batch 1: 3 + 3 > 4 */
    scatter_model(&f, "linear", wi);
    float store[16] = { 0 };
    ck_assert_int_eq(scatter_run(&f, store, 1), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_CAPACITY_OVERFLOW), 1);
    for (int i = 0; i < 16; i++)     /* batch 0 was not written either */
        ck_assert_float_eq(store[i], 0);
    fx_end(&f);
}
END_TEST

START_TEST(tensor_scatter_linear_per_batch)
{
    fx f;
    int64_t wi[2] = { 1, 0 };
    scatter_model(&f, "linear", wi);
    float store[16] = { 0 };
    ck_assert_int_eq(scatter_run(&f, store, 1), OAC_OK);
    const float want[16] = { 0, 0, 1, 2, 3, 4, 5, 6,
                             7, 8, 9, 10, 11, 12, 0, 0 };
    for (int i = 0; i < 16; i++)
        ck_assert_float_eq(store[i], want[i]);
    fx_end(&f);
}
END_TEST

START_TEST(tensor_scatter_indices_advance)
{
    /* write_indices as a graph input starts at 0 and advances by 3:
     * step 1 fits (0..2), step 2 (3 + 3 > 4) overflows.  (A contract-5
     * position input; one named write_indices is GenAI's and driven by
     * the generation loop instead, check_runtime.c.) */
    fx f;
    scatter_model(&f, "linear", NULL);
    float store[16] = { 0 };
    ck_assert_int_eq(scatter_run(&f, store, 3), OAC_ERUNTIME);
    ck_assert_uint_eq(f.e->steps_completed, 1);
    ck_assert_uint_eq(diag_count(f.d, OAC_CAPACITY_OVERFLOW), 1);
    fx_end(&f);
}
END_TEST

/* ---- ordinary operators, read back through --dump -------------------- */

/* Run the model once, dump, and return output y's raw bytes. */
static uint8_t *run_y(fx *f, int32_t *type, int *rank, int64_t *dims, size_t *bytes)
{
    char dir[] = "/tmp/oac_kern_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    oac_run_opts ro = { .steps = 1, .dump_dir = dir };
    int rc = oac_run(f->ctx, &f->e, f->m, NULL, &ro, f->d);
    ck_assert_msg(rc == OAC_OK, "rc %d: %s", rc,
                  oac_diags_count(f->d) ? oac_diags_get(f->d, 0)->message : oac_errmsg(f->ctx));
    char path[64];
    snprintf(path, sizeof path, "%s/y.pb", dir);
    oac_pbfile *pf;
    ck_assert_int_eq(oac_pbfile_load(f->ctx, &pf, path, &onnx__tensor_proto__descriptor,
                                     f->d), OAC_OK);
    const Onnx__TensorProto *t = (const Onnx__TensorProto *)pf->msg;
    *type = t->data_type;
    *rank = (int)t->n_dims;
    for (size_t i = 0; i < t->n_dims; i++)
        dims[i] = t->dims[i];
    uint64_t n, b;
    ck_assert(oac_tensor_numel(t, &n));
    ck_assert(oac_elem_bytes(t->data_type, n, &b));
    uint8_t *out = malloc(b ? b : 1);
    ck_assert_int_eq(oac_tensor_read(f->ctx, f->m, t, out, b), OAC_OK);
    *bytes = b;
    oac_pbfile_free(pf);
    unlink(path);
    /* Initializer-free test models dump only y. */
    rmdir(dir);
    return out;
}

static void expect_f32(fx *f, const char *dims, const float *want, size_t n)
{
    int32_t t;
    int rank;
    int64_t d[8];
    size_t bytes;
    float *y = (float *)run_y(f, &t, &rank, d, &bytes);
    ck_assert_int_eq(t, OAC_T_FLOAT);
    char got[64] = "";
    for (int i = 0; i < rank; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? "," : "",
                 (long long)d[i]);
    ck_assert_str_eq(got, dims);
    ck_assert_uint_eq(bytes, n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabsf(y[i] - want[i]) < 1e-5f, "y[%zu] = %g, want %g", i, y[i], want[i]);
    free(y);
}

static const float a23[6] = { 1, 2, 3, 4, 5, 6 };

START_TEST(binary_broadcast)
{
    static const char *ops[] = { "Add", "Sub", "Mul", "Div" };
    const float b3[3] = { 10, 20, 40 };
    for (int o = 0; o < 4; o++) {
        fx f;
        oac_mb *mb;
            oac_gb *g = fx_build(&f, &mb);
        oac_gb_init_f32(g, "a", "2,3", a23, 6);
        oac_gb_init_f32(g, "b", "3", b3, 3);
        oac_gb_node(g, ops[o], NULL, "op", "a,b", "y");
        oac_gb_output(g, "y", OAC_T_FLOAT, "2,3");
        fx_load(&f);
        float want[6];
        for (int i = 0; i < 6; i++) {
            float x = a23[i], z = b3[i % 3];
            want[i] = o == 0 ? x + z : o == 1 ? x - z : o == 2 ? x * z : x / z;
        }
        expect_f32(&f, "2,3", want, 6);
        fx_end(&f);
    }
}
END_TEST

START_TEST(int_division_by_zero_refused)
{
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    int64_t a[2] = { 4, 5 }, b[2] = { 2, 0 };
    oac_gb_init_i64(g, "a", "2", a, 2);
    oac_gb_init_i64(g, "b", "2", b, 2);
    oac_gb_node(g, "Div", NULL, "div", "a,b", "y");
    oac_gb_output(g, "y", OAC_T_INT64, "2");
    fx_load(&f);
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_KERNEL_ERROR), 1);
    fx_end(&f);
}
END_TEST

START_TEST(matmul_batched)
{
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    /* [2, 1, 3] x [3, 2]: the second operand broadcasts over the batch. */
    const float b32[6] = { 1, 0, 0, 1, 1, 1 };
    oac_gb_init_f32(g, "a", "2,1,3", a23, 6);
    oac_gb_init_f32(g, "b", "3,2", b32, 6);
    oac_gb_node(g, "MatMul", NULL, "mm", "a,b", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2,1,2");
    fx_load(&f);
    const float want[4] = { 1 + 3, 2 + 3, 4 + 6, 5 + 6 };
    expect_f32(&f, "2,1,2", want, 4);
    fx_end(&f);
}
END_TEST

START_TEST(matmul_empty_operands)
{
    /* [2, 0] x [0, 3]: an empty sum, zeros, from operands with no storage
     * (fuzz_run found clang's UBSan report of NULL + 0 here). */
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_gb_input(g, "a", OAC_T_FLOAT, "2,0");
    oac_gb_input(g, "b", OAC_T_FLOAT, "0,3");
    oac_gb_node(g, "MatMul", NULL, "mm", "a,b", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2,3");
    fx_load(&f);
    const float zeros[6] = { 0 };
    expect_f32(&f, "2,3", zeros, 6);
    fx_end(&f);
}
END_TEST

START_TEST(softmax_rows)
{
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_gb_init_f32(g, "a", "2,3", a23, 6);
    oac_gb_node(g, "Softmax", NULL, "sm", "a", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2,3");
    fx_load(&f);
    float e0 = expf(-2), e1 = expf(-1), s = e0 + e1 + 1;
    const float want[6] = { e0 / s, e1 / s, 1 / s, e0 / s, e1 / s, 1 / s };
    expect_f32(&f, "2,3", want, 6);
    fx_end(&f);
}
END_TEST

START_TEST(transpose_slice_concat)
{
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_gb_init_f32(g, "a", "2,3", a23, 6);
    int64_t perm[2] = { 1, 0 };
    oac_node_attr_ints(g, oac_gb_node(g, "Transpose", NULL, "t", "a", "at"), "perm", perm, 2);
    /* at = [[1,4],[2,5],[3,6]]; rows from the end backwards, step -2. */
    int64_t st[1] = { -1 }, en[1] = { -4 }, ax[1] = { 0 }, sp[1] = { -2 };
    oac_gb_init_i64(g, "starts", "1", st, 1);
    oac_gb_init_i64(g, "ends", "1", en, 1);
    oac_gb_init_i64(g, "axes", "1", ax, 1);
    oac_gb_init_i64(g, "steps", "1", sp, 1);
    oac_gb_node(g, "Slice", NULL, "s", "at,starts,ends,axes,steps", "sl");   /* [[3,6],[1,4]] */
    oac_node_attr_int(g, oac_gb_node(g, "Concat", NULL, "c", "sl,at", "y"), "axis", 0);
    oac_gb_output(g, "y", OAC_T_FLOAT, "5,2");
    fx_load(&f);
    const float want[10] = { 3, 6, 1, 4, 1, 4, 2, 5, 3, 6 };
    expect_f32(&f, "5,2", want, 10);
    fx_end(&f);
}
END_TEST

START_TEST(slice_extreme_bounds)
{
    /* ends INT64_MAX ("to the end") and a huge step: one element, no
     * overflow; a huge negative step from the end likewise. */
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_gb_init_f32(g, "a", "6", a23, 6);
    int64_t st[2] = { 1, -1 }, en[2] = { INT64_MAX, INT64_MIN }, sp[2] = { INT64_MAX, INT64_MIN };
    int64_t ax[1] = { 0 };
    oac_gb_init_i64(g, "s0", "1", &st[0], 1);
    oac_gb_init_i64(g, "e0", "1", &en[0], 1);
    oac_gb_init_i64(g, "p0", "1", &sp[0], 1);
    oac_gb_init_i64(g, "s1", "1", &st[1], 1);
    oac_gb_init_i64(g, "e1", "1", &en[1], 1);
    oac_gb_init_i64(g, "p1", "1", &sp[1], 1);
    oac_gb_init_i64(g, "ax", "1", ax, 1);
    oac_gb_node(g, "Slice", NULL, "fwd", "a,s0,e0,ax,p0", "x0");   /* [2] */
    oac_gb_node(g, "Slice", NULL, "back", "a,s1,e1,ax,p1", "x1");  /* [6] */
    oac_node_attr_int(g, oac_gb_node(g, "Concat", NULL, "c", "x0,x1", "y"), "axis", 0);
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
    fx_load(&f);
    const float want[2] = { 2, 6 };
    expect_f32(&f, "2", want, 2);
    fx_end(&f);
}
END_TEST

START_TEST(gather_reshape_squeeze)
{
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_gb_init_f32(g, "a", "2,3", a23, 6);
    int64_t idx[2] = { -1, 0 }, shape[3] = { 0, -1, 1 }, axes[1] = { 2 }, ua[1] = { 0 };
    oac_gb_init_i64(g, "idx", "2", idx, 2);
    oac_gb_init_i64(g, "shape", "3", shape, 3);
    oac_gb_init_i64(g, "axes", "1", axes, 1);
    oac_gb_init_i64(g, "uaxes", "1", ua, 1);
    oac_node_attr_int(g, oac_gb_node(g, "Gather", NULL, "gt", "a,idx", "ga"), "axis", 1);
    oac_gb_node(g, "Reshape", NULL, "rs", "ga,shape", "r");     /* [2,2,1] */
    oac_gb_node(g, "Squeeze", NULL, "sq", "r,axes", "s");       /* [2,2] */
    oac_gb_node(g, "Unsqueeze", NULL, "us", "s,uaxes", "y");    /* [1,2,2] */
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,2,2");
    fx_load(&f);
    const float want[4] = { 3, 1, 6, 4 };
    expect_f32(&f, "1,2,2", want, 4);
    fx_end(&f);
}
END_TEST

START_TEST(shape_size_neg_cast)
{
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_gb_init_f32(g, "a", "2,3", a23, 6);
    oac_gb_node(g, "Shape", NULL, "sh", "a", "s");             /* [2,3] */
    oac_gb_node(g, "Size", NULL, "sz", "a", "n");              /* 6 */
    oac_gb_node(g, "Add", NULL, "ad", "s,n", "sn");            /* [8,9] */
    oac_gb_node(g, "Neg", NULL, "ng", "sn", "m");              /* [-8,-9] */
    oac_node_attr_int(g, oac_gb_node(g, "Cast", NULL, "ca", "m", "y"), "to", OAC_T_FLOAT);
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
    fx_load(&f);
    const float want[2] = { -8, -9 };
    expect_f32(&f, "2", want, 2);
    fx_end(&f);
}
END_TEST

START_TEST(cast_saturates)
{
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    const float v[4] = { 1e9f, -1e9f, NAN, -3.7f };
    oac_gb_init_f32(g, "a", "4", v, 4);
    oac_node_attr_int(g, oac_gb_node(g, "Cast", NULL, "ca", "a", "y"), "to", OAC_T_INT8);
    oac_gb_output(g, "y", OAC_T_INT8, "4");
    fx_load(&f);
    int32_t t;
    int rank;
    int64_t d[8];
    size_t bytes;
    int8_t *y = (int8_t *)run_y(&f, &t, &rank, d, &bytes);
    ck_assert_int_eq(t, OAC_T_INT8);
    ck_assert_int_eq(y[0], 127);
    ck_assert_int_eq(y[1], -128);
    ck_assert_int_eq(y[2], 0);
    ck_assert_int_eq(y[3], -3);
    free(y);
    fx_end(&f);
}
END_TEST

START_TEST(constant_and_identity)
{
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    const int64_t v[3] = { 7, -1, 5 };
    oac_gb_constant_i64(g, "c", "3", v, 3);
    oac_gb_node(g, "Identity", NULL, "id", "c", "y");
    oac_gb_output(g, "y", OAC_T_INT64, "3");
    fx_load(&f);
    int32_t t;
    int rank;
    int64_t d[8];
    size_t bytes;
    int64_t *y = (int64_t *)run_y(&f, &t, &rank, d, &bytes);
    ck_assert_int_eq(t, OAC_T_INT64);
    ck_assert_uint_eq(bytes, 24);
    ck_assert_int_eq(y[0], 7);
    ck_assert_int_eq(y[1], -1);
    ck_assert_int_eq(y[2], 5);
    free(y);
    fx_end(&f);
}
END_TEST

START_TEST(bad_shapes_refused)
{
    /* Non-broadcastable Add and an out-of-range Gather: kernel-error
     * naming the node, not a crash or a silent result. */
    for (int c = 0; c < 2; c++) {
        fx f;
        oac_mb *mb;
            oac_gb *g = fx_build(&f, &mb);
        oac_gb_init_f32(g, "a", "2,3", a23, 6);
        if (c == 0) {
            oac_gb_init_f32(g, "b", "2", a23, 2);
            oac_gb_node(g, "Add", NULL, "bad", "a,b", "y");
        } else {
            int64_t idx = 2;
            oac_gb_init_i64(g, "i", "", &idx, 1);
            oac_gb_node(g, "Gather", NULL, "bad", "a,i", "y");
        }
        oac_gb_output(g, "y", OAC_T_FLOAT, NULL);
        fx_load(&f);
        oac_run_opts ro = { .steps = 1 };
        ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
        long i = oac_diags_find(f.d, OAC_KERNEL_ERROR);
        ck_assert_int_ge(i, 0);
        ck_assert_str_eq(oac_diags_get(f.d, (size_t)i)->node, "bad");
        fx_end(&f);
    }
}
END_TEST

/* A Gather of row `idx` of a [2, 3] FLOAT initializer. */
static void gather_row(fx *f, int64_t idx, int rc_want)
{
    oac_gb *g = fx_build(f, NULL);
    oac_gb_init_f32(g, "a", "2,3", a23, 6);
    oac_gb_init_i64(g, "i", "", &idx, 1);
    oac_gb_node(g, "Gather", NULL, "gat", "a,i", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "3");
    fx_load(f);
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f->ctx, &f->e, f->m, NULL, &ro, f->d), rc_want);
}

static void gather_past_end(fx *f) { gather_row(f, 2, OAC_ERUNTIME); }
static void gather_from_end(fx *f) { gather_row(f, -2, OAC_OK); }

static const scene_case kernel_rows[] = {
    { "gather_past_end", gather_past_end, WANT(OAC_KERNEL_ERROR), "gat", NULL, NULL },
    { "gather_from_end", gather_from_end, NEAR(OAC_KERNEL_ERROR) },
};
CASES_TEST(kernel_rows)

Suite *test_suite(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("kernels");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, table_lookup);
    tcase_add_test(tc, cache_update_every_type_every_axis);
    tcase_add_test(tc, cache_update_run_lengths);
    tcase_add_test(tc, cache_update_kept_state);
    tcase_add_test(tc, negative_position_overflows);
    tcase_add_test(tc, out_of_place_allocates_one_cache);
    tcase_add_test(tc, tensor_scatter_circular);
    tcase_add_test(tc, tensor_scatter_linear_overflow);
    tcase_add_test(tc, tensor_scatter_linear_per_batch);
    tcase_add_test(tc, tensor_scatter_indices_advance);
    tcase_add_test(tc, binary_broadcast);
    tcase_add_test(tc, int_division_by_zero_refused);
    tcase_add_test(tc, matmul_batched);
    tcase_add_test(tc, matmul_empty_operands);
    tcase_add_test(tc, softmax_rows);
    tcase_add_test(tc, transpose_slice_concat);
    tcase_add_test(tc, slice_extreme_bounds);
    tcase_add_test(tc, gather_reshape_squeeze);
    tcase_add_test(tc, shape_size_neg_cast);
    tcase_add_test(tc, cast_saturates);
    tcase_add_test(tc, constant_and_identity);
    tcase_add_test(tc, bad_shapes_refused);
    ADD_CASES(tc, kernel_rows);
    tcase_add_loop_test(tc, missing_inputs_refused, 0,
                        (int)(sizeof missing_rows / sizeof missing_rows[0]));
    tcase_add_loop_test(tc, kept_plan_rechecked, 0,
                        (int)(sizeof kept_rows / sizeof kept_rows[0]));
    suite_add_tcase(s, tc);
    return s;
}

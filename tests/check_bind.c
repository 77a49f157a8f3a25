/* check_bind.c: bindings of READ_WRITE inputs (lib/run/bind.c; contract 3
 * runtime codes binding-readonly, binding-overlap, binding-busy,
 * binding-too-small; contract 5 --readonly and --sessions).
 *
 * Each refusal is a diagnostic and nothing runs: the caller's storage is
 * left exactly as it was (no copy fallback).  binding-busy is exercised
 * by real thread races: two threads on the same bindings, and K sessions
 * of one run, with exactly one winner every time.
 */
#include <pthread.h>

#include "harness.h"
#include "run/kernel_api.h"

/* dense_cache, checked at cap 8, length 1: FLOAT16 [2,1,2,8,4] = 256 B. */
enum { DENSE_BYTES = 2 * 1 * 2 * 8 * 4 * 2 };
static const oac_dim_binding dense_dims[] = {
    { "batch", 1 }, { "heads", 2 }, { "max_length", 8 }, { "head_size", 4 },
    { "new_length", 1 },
};

static void fx_dense(fx *f)
{
    fx_example(f, "dense_cache");
    oac_check_opts co = { .dims = dense_dims, .n_dims = 5 };
    ck_assert_int_eq(oac_check(f->ctx, &f->a, f->m, &co, f->d), OAC_OK);
    ck_assert_uint_eq(oac_diags_count_severity(f->d, OAC_SEV_ERROR), 0);
}

static bool all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return false;
    return true;
}

/* ---- the owner field ------------------------------------------------- */

START_TEST(acquire_is_exclusive)
{
    uint8_t store[16];
    oac_binding b;
    int s1, s2;
    oac_binding_init(&b, "c", store, sizeof store, true);
    ck_assert(oac_binding_acquire(&b, &s1));
    ck_assert(oac_binding_acquire(&b, &s1));      /* re-entrant for its owner */
    ck_assert(!oac_binding_acquire(&b, &s2));
    oac_binding_release(&b, &s2);                 /* not the owner: no effect */
    ck_assert(!oac_binding_acquire(&b, &s2));
    oac_binding_release(&b, &s1);
    ck_assert(oac_binding_acquire(&b, &s2));
    oac_binding_release(&b, &s2);
}
END_TEST

typedef struct racer {
    oac_binding **b;
    size_t n;
    pthread_barrier_t *go;
    oac_ctx *ctx;
    oac_diags *d;
    int rc;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    pthread_barrier_wait(r->go);
    r->rc = oac_bindings_acquire_all(r->b, r->n, r, 0, r->d);
    return NULL;
}

START_TEST(two_threads_one_winner)
{
    enum { ROUNDS = 300 };
    uint8_t s1[8], s2[8];
    for (int round = 0; round < ROUNDS; round++) {
        oac_binding b1, b2;
        oac_binding_init(&b1, "k", s1, sizeof s1, true);
        oac_binding_init(&b2, "v", s2, sizeof s2, true);
        oac_binding *bl[2] = { &b1, &b2 };
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 2);
        racer r[2];
        pthread_t t[2];
        for (int i = 0; i < 2; i++) {
            r[i] = (racer){ bl, 2, &go, oac_ctx_new(), NULL, -99 };
            r[i].d = oac_diags_new(r[i].ctx);
            ck_assert_int_eq(pthread_create(&t[i], NULL, race, &r[i]), 0);
        }
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        pthread_barrier_destroy(&go);
        int winners = (r[0].rc == OAC_OK) + (r[1].rc == OAC_OK);
        ck_assert_int_eq(winners, 1);
        racer *w = r[0].rc == OAC_OK ? &r[0] : &r[1];
        racer *l = w == &r[0] ? &r[1] : &r[0];
        ck_assert_int_eq(l->rc, OAC_ERUNTIME);
        ck_assert_uint_eq(diag_count(l->d, OAC_BINDING_BUSY), 1);
        ck_assert_uint_eq(oac_diags_count(w->d), 0);
        /* The winner holds every binding, the loser none. */
        ck_assert_uint_eq(atomic_load(&b1.owner), (uintptr_t)w);
        ck_assert_uint_eq(atomic_load(&b2.owner), (uintptr_t)w);
        for (int i = 0; i < 2; i++) {
            oac_diags_free(r[i].d);
            oac_ctx_free(r[i].ctx);
        }
    }
}
END_TEST

START_TEST(sessions_race_one_winner)
{
    for (unsigned k = 2; k <= 4; k++) {
        fx f;
        fx_dense(&f);
        oac_run_opts ro = { .steps = 5, .dims = dense_dims, .n_dims = 5, .sessions = k };
        ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, f.a, &ro, f.d), OAC_OK);
        ck_assert_uint_eq(diag_count(f.d, OAC_BINDING_BUSY), k - 1);
        ck_assert_uint_eq(f.e->steps_completed, 5);
        ck_assert_uint_eq(f.e->identity_checked, 5);
        ck_assert_uint_eq(f.e->identity_held, 5);
        fx_end(&f);
    }
}
END_TEST

START_TEST(held_by_another_run_is_busy)
{
    fx f;
    fx_dense(&f);
    uint8_t *store = malloc(DENSE_BYTES);
    memset(store, 0xAB, DENSE_BYTES);
    oac_binding b;
    oac_binding_init(&b, "cache", store, DENSE_BYTES, true);
    int other;
    ck_assert(oac_binding_acquire(&b, &other));   /* another session holds it */
    oac_binding *bl[1] = { &b };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 1 };
    oac_run_opts ro = { .steps = 2, .dims = dense_dims, .n_dims = 5 };
    ck_assert_int_eq(oac_run_with_hooks(f.ctx, &f.e, f.m, f.a, &ro, &h, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_BINDING_BUSY), 1);
    ck_assert_uint_eq(f.e->steps_completed, 0);
    ck_assert(all_bytes(store, DENSE_BYTES, 0xAB));
    ck_assert_uint_eq(atomic_load(&b.owner), (uintptr_t)&other);   /* untouched */
    fx_end(&f);
    free(store);
}
END_TEST

/* ---- read-only ------------------------------------------------------- */

START_TEST(readonly_refused_without_copy)
{
    fx f;
    fx_dense(&f);
    uint8_t *store = malloc(DENSE_BYTES);
    memset(store, 0xAB, DENSE_BYTES);
    oac_binding b;
    oac_binding_init(&b, "cache", store, DENSE_BYTES, true);
    oac_binding *bl[1] = { &b };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 1 };
    const char *ro_names[] = { "cache" };
    oac_run_opts ro = { .steps = 2, .dims = dense_dims, .n_dims = 5,
                        .readonly = ro_names, .n_readonly = 1 };
    ck_assert_int_eq(oac_run_with_hooks(f.ctx, &f.e, f.m, f.a, &ro, &h, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_BINDING_READONLY), 1);
    const oac_diag *d = oac_diags_get(f.d, (size_t)oac_diags_find(f.d, OAC_BINDING_READONLY));
    ck_assert_str_eq(d->value, "cache");
    ck_assert_uint_eq(f.e->steps_completed, 0);
    ck_assert(all_bytes(store, DENSE_BYTES, 0xAB));
    ck_assert(b.writable);                        /* the caller's object is untouched */
    fx_end(&f);
    /* A binding the caller itself declares read-only is refused too. */
    fx_dense(&f);
    oac_binding_init(&b, "cache", store, DENSE_BYTES, false);
    ro.n_readonly = 0;
    ck_assert_int_eq(oac_run_with_hooks(f.ctx, &f.e, f.m, f.a, &ro, &h, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_BINDING_READONLY), 1);
    ck_assert(all_bytes(store, DENSE_BYTES, 0xAB));
    fx_end(&f);
    free(store);
}
END_TEST

START_TEST(readonly_name_must_be_a_cache)
{
    static const char *const bad[] = { "nosuch", "values" };
    for (size_t i = 0; i < 2; i++) {
        fx f;
        fx_dense(&f);
        oac_run_opts ro = { .steps = 1, .dims = dense_dims, .n_dims = 5,
                            .readonly = &bad[i], .n_readonly = 1 };
        ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, f.a, &ro, f.d), OAC_EINVAL);
        fx_end(&f);
    }
}
END_TEST

/* CacheUpdate writing in place into an initializer or a Constant. */
static void immutable_root(bool constant)
{
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    float zeros[16] = { 0 };
    if (constant) {
        Onnx__TensorProto *t = oac_gb_tensor_raw(g, "w", OAC_T_FLOAT, "1,8,2", zeros, sizeof zeros);
        Onnx__NodeProto *c = oac_gb_node(g, "Constant", NULL, "const", "", "w");
        oac_node_attr_tensor(g, c, "value", t);
    } else {
        oac_gb_init_raw(g, "w", OAC_T_FLOAT, "1,8,2", zeros, sizeof zeros);
    }
    oac_gb_input(g, "v", OAC_T_FLOAT, "1,1,2");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "upd", "w,v,position", "w2");
    oac_node_alias(g, n, 0, 0, 1);
    oac_gb_output(g, "w2", OAC_T_FLOAT, "1,8,2");
    fx_load(&f);
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_BINDING_READONLY), 1);
    const oac_diag *d = oac_diags_get(f.d, (size_t)oac_diags_find(f.d, OAC_BINDING_READONLY));
    ck_assert_ptr_nonnull(strstr(d->message, constant ? "constant" : "initializer"));
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
}

START_TEST(initializer_as_mutable_cache) { immutable_root(false); }
END_TEST
START_TEST(constant_as_mutable_cache) { immutable_root(true); }
END_TEST

/* ---- too small ------------------------------------------------------- */

START_TEST(too_small_storage)
{
    fx f;
    fx_dense(&f);
    uint8_t *store = malloc(DENSE_BYTES);
    memset(store, 0xAB, DENSE_BYTES);
    oac_binding b;
    oac_binding_init(&b, "cache", store, DENSE_BYTES - 1, true);
    oac_binding *bl[1] = { &b };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 1 };
    oac_run_opts ro = { .steps = 1, .dims = dense_dims, .n_dims = 5 };
    ck_assert_int_eq(oac_run_with_hooks(f.ctx, &f.e, f.m, f.a, &ro, &h, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_BINDING_TOO_SMALL), 1);
    ck_assert(all_bytes(store, DENSE_BYTES, 0xAB));
    fx_end(&f);
    /* Exactly the capacity is enough. */
    fx_dense(&f);
    oac_binding_init(&b, "cache", store, DENSE_BYTES, true);
    ck_assert_int_eq(oac_run_with_hooks(f.ctx, &f.e, f.m, f.a, &ro, &h, f.d), OAC_OK);
    ck_assert_uint_eq(diag_count(f.d, OAC_BINDING_TOO_SMALL), 0);
    fx_end(&f);
    free(store);
}
END_TEST

START_TEST(too_small_input_file)
{
    /* --input cache=FILE with half the declared capacity. */
    char dir[] = "/tmp/oac_bind_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    uint8_t raw[DENSE_BYTES / 2] = { 0 };
    int64_t dims[5] = { 2, 1, 2, 4, 4 };
    char *path = write_tensor(dir, "cache", OAC_T_FLOAT16, dims, 5, raw, sizeof raw);
    fx f;
    fx_dense(&f);
    oac_input_file in = { "cache", path };
    oac_run_opts ro = { .steps = 1, .dims = dense_dims, .n_dims = 5, .inputs = &in,
                        .n_inputs = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, f.a, &ro, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_BINDING_TOO_SMALL), 1);
    fx_end(&f);
    unlink(path);
    free(path);
    rmdir(dir);
}
END_TEST

/* ---- overlap --------------------------------------------------------- */

static void two_caches(fx *f)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_vi_access(g, oac_gb_input(g, "k", OAC_T_FLOAT, "1,8,2"), 1);
    oac_vi_access(g, oac_gb_input(g, "v", OAC_T_FLOAT, "1,8,2"), 1);
    oac_gb_input(g, "nk", OAC_T_FLOAT, "1,1,2");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *a = oac_gb_node(g, "CacheUpdate", "onnx_alias", "uk", "k,nk,position", "k2");
    oac_node_alias(g, a, 0, 0, 1);
    Onnx__NodeProto *b = oac_gb_node(g, "CacheUpdate", "onnx_alias", "uv", "v,nk,position", "v2");
    oac_node_alias(g, b, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "k2", OAC_T_FLOAT, "1,8,2"), "k");
    oac_vi_alias_of(g, oac_gb_output(g, "v2", OAC_T_FLOAT, "1,8,2"), "v");
    fx_load(f);
}

START_TEST(overlapping_storage_refused)
{
    enum { B = 64 };            /* 1*8*2 floats */
    float *store = calloc(2, B);
    oac_binding bk, bv;
    oac_binding *bl[2] = { &bk, &bv };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 2 };
    oac_run_opts ro = { .steps = 2 };
    fx f;
    /* v starts one float into k. */
    two_caches(&f);
    oac_binding_init(&bk, "k", store, B, true);
    oac_binding_init(&bv, "v", store + 1, B, true);
    ck_assert_int_eq(oac_run_with_hooks(f.ctx, &f.e, f.m, NULL, &ro, &h, f.d), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_BINDING_OVERLAP), 1);
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
    /* Adjacent, not overlapping: runs. */
    two_caches(&f);
    oac_binding_init(&bk, "k", store, B, true);
    oac_binding_init(&bv, "v", store + B / sizeof(float), B, true);
    ck_assert_int_eq(oac_run_with_hooks(f.ctx, &f.e, f.m, NULL, &ro, &h, f.d), OAC_OK);
    ck_assert_uint_eq(diag_count(f.d, OAC_BINDING_OVERLAP), 0);
    ck_assert_uint_eq(f.e->identity_held, 4);
    fx_end(&f);
    free(store);
}
END_TEST

/* ---- case rows: the binding codes --------------------------------------- */

/* dense_cache run 2 steps in `sessions` sessions; the cache bound to
 * `bytes` of the caller's zeroed storage (0: the runtime's own), named
 * --readonly when readonly.  The run's status must be want_rc. */
static void dense_run(fx *f, size_t bytes, bool readonly, unsigned sessions, int want_rc)
{
    fx_dense(f);
    uint8_t *store = bytes ? calloc(1, bytes) : NULL;
    oac_binding b;
    oac_binding *bl[1] = { &b };
    oac_run_hooks h = { 0 };
    if (bytes) {
        oac_binding_init(&b, "cache", store, bytes, true);
        h.bindings = bl;
        h.n_bindings = 1;
    }
    const char *ro_names[] = { "cache" };
    oac_run_opts ro = { .steps = 2, .dims = dense_dims, .n_dims = 5, .readonly = ro_names,
                        .n_readonly = readonly, .sessions = sessions };
    f->rc = oac_run_with_hooks(f->ctx, &f->e, f->m, f->a, &ro, &h, f->d);
    ck_assert_int_eq(f->rc, want_rc);
    free(store);
}

static void run_plain(fx *f) { dense_run(f, 0, false, 1, OAC_OK); }
static void run_readonly(fx *f) { dense_run(f, 0, true, 1, OAC_ERUNTIME); }
static void run_bound_exact(fx *f) { dense_run(f, DENSE_BYTES, false, 1, OAC_OK); }
static void run_bound_short(fx *f) { dense_run(f, DENSE_BYTES - 1, false, 1, OAC_ERUNTIME); }
/* Three sessions on one cache: two find it busy (the run still ends OK
 * with the winner's steps). */
static void run_three_sessions(fx *f) { dense_run(f, 0, false, 3, OAC_OK); }

/* two_caches with k and v bound `gap` floats apart in one block. */
static void two_caches_run(fx *f, size_t gap, int want_rc)
{
    enum { B = 64 };            /* 1*8*2 floats */
    float *store = calloc(2, B);
    oac_binding bk, bv;
    oac_binding *bl[2] = { &bk, &bv };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 2 };
    oac_run_opts ro = { .steps = 2 };
    two_caches(f);
    oac_binding_init(&bk, "k", store, B, true);
    oac_binding_init(&bv, "v", store + gap, B, true);
    f->rc = oac_run_with_hooks(f->ctx, &f->e, f->m, NULL, &ro, &h, f->d);
    ck_assert_int_eq(f->rc, want_rc);
    free(store);
}

static void run_overlapping(fx *f) { two_caches_run(f, 1, OAC_ERUNTIME); }
static void run_adjacent(fx *f) { two_caches_run(f, 64 / sizeof(float), OAC_OK); }

/* ---- binding-invalid (contract 8) ----------------------------------------- */

/* The CacheUpdate kernel, except that uv refuses: a step that fails
 * after uk wrote k. */
static int refuse_uv(oac_kernel_call *k)
{
    if (!strcmp(k->node_name, "uv"))
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR, "node uv: refused by the test");
    return oac_kernel_cache_update(k);
}

/* two_caches on the caller's bindings: a first run whose step fails
 * after writing k (its findings in a list of its own), then, after
 * resetting k's binding when reset, a second run (its findings in f->d)
 * that must end with want_rc. */
static void after_failed_step(fx *f, bool reset, int want_rc)
{
    enum { B = 64 };
    float *store = calloc(2, B);
    oac_binding bk, bv;
    oac_binding *bl[2] = { &bk, &bv };
    oac_binding_init(&bk, "k", store, B, true);
    oac_binding_init(&bv, "v", store + B / sizeof(float), B, true);
    static const oac_kernel_override ov = { "onnx_alias", "CacheUpdate", refuse_uv };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 2, .overrides = &ov, .n_overrides = 1 };
    oac_run_opts ro = { .steps = 2 };
    fx first;
    two_caches(&first);
    ck_assert_int_eq(oac_run_with_hooks(first.ctx, &first.e, first.m, NULL, &ro, &h, first.d),
                     OAC_ERUNTIME);
    ck_assert(bk.invalid && !bv.invalid);
    fx_end(&first);
    if (reset)
        oac_binding_reset(&bk);
    h.overrides = NULL;
    h.n_overrides = 0;
    two_caches(f);
    f->rc = oac_run_with_hooks(f->ctx, &f->e, f->m, NULL, &ro, &h, f->d);
    ck_assert_int_eq(f->rc, want_rc);
    /* Refused: no step ran on the half-written cache. */
    ck_assert_uint_eq(f->e->steps_completed, want_rc ? 0 : 2);
    free(store);
}

static void run_not_reset(fx *f) { after_failed_step(f, false, OAC_ERUNTIME); }
static void run_reset(fx *f) { after_failed_step(f, true, OAC_OK); }

static const scene_case binding_rows[] = {
    { "readonly", run_readonly, WANT(OAC_BINDING_READONLY), NULL, "cache", NULL },
    { "writable", run_plain, NEAR(OAC_BINDING_READONLY) },
    { "bound_short", run_bound_short, WANT(OAC_BINDING_TOO_SMALL), NULL, "cache", NULL },
    { "bound_exact", run_bound_exact, NEAR(OAC_BINDING_TOO_SMALL) },
    { "three_sessions", run_three_sessions, WANT(OAC_BINDING_BUSY), NULL, "cache", NULL },
    { "one_session", run_plain, NEAR(OAC_BINDING_BUSY) },
    { "overlapping", run_overlapping, WANT(OAC_BINDING_OVERLAP), NULL, NULL, NULL },
    { "adjacent", run_adjacent, NEAR(OAC_BINDING_OVERLAP) },
    { "half_written", run_not_reset, WANT(OAC_BINDING_INVALID), NULL, "k", NULL },
    { "half_written_reset", run_reset, NEAR(OAC_BINDING_INVALID) },
};
CASES_TEST(binding_rows)

Suite *test_suite(void)
{
    Suite *s = suite_create("bind");
    TCase *tc = tcase_create("bind");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, acquire_is_exclusive);
    tcase_add_test(tc, two_threads_one_winner);
    tcase_add_test(tc, sessions_race_one_winner);
    tcase_add_test(tc, held_by_another_run_is_busy);
    tcase_add_test(tc, readonly_refused_without_copy);
    tcase_add_test(tc, readonly_name_must_be_a_cache);
    tcase_add_test(tc, initializer_as_mutable_cache);
    tcase_add_test(tc, constant_as_mutable_cache);
    tcase_add_test(tc, too_small_storage);
    tcase_add_test(tc, too_small_input_file);
    tcase_add_test(tc, overlapping_storage_refused);
    ADD_CASES(tc, binding_rows);
    suite_add_tcase(s, tc);
    return s;
}

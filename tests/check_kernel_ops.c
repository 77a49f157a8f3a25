/* check_kernel_ops.c: the kernels of contract section 10 as a generation
 * loop runs them (lib/kernels/attn_ms.c, attn_paged.c, attn_sparse.c,
 * embed.c, attn.c's DecoderMaskedMultiHeadAttention).
 *
 * Models are examples/op_models.c's (the ones tests/ort_diff.sh compares
 * with ONNX Runtime 1.30) and one-node models built here.  What ONNX
 * Runtime's CPU build cannot run is tested here against the documented
 * semantics:
 *  - the shared-buffer forms (com.microsoft Attention with
 *    past_present_share_buffer and past_sequence_length,
 *    MultiHeadAttention with past_sequence_length,
 *    DecoderMaskedMultiHeadAttention) equal the growing forms (which
 *    ort_diff compares with ONNX Runtime) step for step, on the prefix
 *    the growing present holds, in FLOAT and FLOAT16, in place (the
 *    bound buffer is the present);
 *  - PagedAttention (CUDA only in ONNX Runtime 1.30) against a naive
 *    reference written from ContribOperators.md: positions through the
 *    block table, causal attention per sequence, grouped heads; and its
 *    fixed pool: a two-layer look-alike with blocks of 4 and a pool of 8
 *    runs 32 steps and stops with capacity-overflow before the 33rd,
 *    every block as step 32 left it;
 *  - EmbedLayerNormalization's mask_index, refusals naming node and value.
 * The operator table is walked: every row of contract sections 6 and 10
 * has a kernel (no unsupported-operator).
 */
#include <math.h>
#include <sys/stat.h>

#include "harness.h"
#include "half.h"
#include "op_models.h"
#include "run/kernel_api.h"

/* ---- running a model with fixed inputs ------------------------------- */

typedef struct fixed_in {
    const char *name;
    int64_t dims[4];
    size_t nd;
} fixed_in;

/* n deterministic values in [-1, 1) stored as type t (raw bytes). */
static void *values(int32_t t, size_t n, uint32_t seed, size_t *bytes)
{
    size_t w = t == OAC_T_FLOAT16 ? 2 : 4;
    uint8_t *p = malloc(n * w);
    ck_assert_ptr_nonnull(p);
    uint32_t s = seed;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        float v = (float)(s >> 8) / 8388608.0f - 1.0f;
        if (t == OAC_T_FLOAT16) {
            uint16_t h = oac_f32_to_f16(v);
            memcpy(p + 2 * i, &h, 2);
        } else {
            memcpy(p + 4 * i, &v, 4);
        }
    }
    *bytes = n * w;
    return p;
}

/* Run f's model `steps` steps with the fixed inputs in[0..ni) (random
 * data of type t) and hooks h; read outputs `outs` of the last step.
 * Returns the run's status; on success the measured peak is the plan
 * when `planned` (a model whose caches do not grow: the plan is the
 * first step's). */
static int run_fixed_p(fx *f, int32_t t, const fixed_in *in, size_t ni, uint64_t steps,
                       const oac_run_hooks *h, const char *outs, kt_val *out, size_t n,
                       bool planned)
{
    char dir[] = "/tmp/oac_ko_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    oac_input_file files[8];
    char *paths[8];
    for (size_t i = 0; i < ni; i++) {
        size_t cnt = 1, bytes;
        for (size_t d = 0; d < in[i].nd; d++)
            cnt *= (size_t)in[i].dims[d];
        void *raw = values(t, cnt, 77u + (uint32_t)i, &bytes);
        paths[i] = write_tensor(dir, in[i].name, t, in[i].dims, in[i].nd, raw, bytes);
        free(raw);
        files[i] = (oac_input_file){ in[i].name, paths[i] };
    }
    char dump[600];
    snprintf(dump, sizeof dump, "%s/dump", dir);
    ck_assert_int_eq(mkdir(dump, 0700), 0);
    oac_run_opts ro = { .steps = steps, .dump_dir = dump };
    if (!f->m)
        fx_load(f);
    int rc = fx_check_run(f, NULL, 0, files, ni, &ro, h);
    if (rc != OAC_OK && n)
        ck_abort_msg("run: %d\n%s", rc, diag_dump(f->d));
    if (rc == OAC_OK) {
        ck_assert_msg(!planned || f->e->peak_matches_plan, "planned %llu, measured %llu",
                      (unsigned long long)f->e->planned_peak_bytes.value,
                      (unsigned long long)f->e->measured_peak_bytes);
        kt_read_outs(f, dump, outs, out, n);
    }
    for (size_t i = 0; i < ni; i++) {
        unlink(paths[i]);
        free(paths[i]);
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    return rc;
}

static int run_fixed(fx *f, int32_t t, const fixed_in *in, size_t ni, uint64_t steps,
                     const oac_run_hooks *h, const char *outs, kt_val *out, size_t n)
{
    return run_fixed_p(f, t, in, ni, steps, h, outs, out, n, true);
}

static void build_op_model(fx *f, const char *name, int32_t t)
{
    const oac_op_model *m = oac_op_model_find(name);
    ck_assert_ptr_nonnull(m);
    oac_mb *mb;
    fx_build(f, &mb);
    m->build(mb, t);
}

/* A run-time finding with that code at node naming value (the
 * finding's value, or quoted in a kernel's message). */
static void expect_at(const oac_diags *d, oac_code code, const char *node, const char *value)
{
    const oac_diag *g = diag_find(d, code, node, value, NULL);
    char q[128];
    snprintf(q, sizeof q, "'%s'", value);
    if (!g && (g = diag_find(d, code, node, NULL, NULL)) && !strstr(g->message, q))
        g = NULL;
    ck_assert_msg(g, "no %s at %s naming %s in:\n%s", oac_code_name(code), node, value,
                  diag_dump(d));
}

/* Element (row-major) of a present, as double. */
static double el(const kt_val *v, size_t i) { return kt_get(v, i); }

/* ---- shared buffer == growing ------------------------------------------ */

typedef struct pair_case {
    const char *shared, *growing;
    fixed_in in[3];
    size_t ni;
    const char *outs;         /* y, then the present(s) */
    size_t n_present;
    int axis;                 /* the present's length axis */
} pair_case;

static const pair_case pair_cases[] = {
    { "ms_attention_shared", "ms_attention", { { "x", { 1, 1, 8 }, 3 } }, 1, "y,present", 1, 3 },
    { "mha_shared", "mha",
      { { "q", { 1, 1, 8 }, 3 }, { "k", { 1, 1, 8 }, 3 }, { "v", { 1, 1, 8 }, 3 } }, 3,
      "y,present_key,present_value", 2, 2 },
    { "dmmha_shared", "mha",
      { { "q", { 1, 1, 8 }, 3 }, { "k", { 1, 1, 8 }, 3 }, { "v", { 1, 1, 8 }, 3 } }, 3,
      "y,present_key,present_value", 2, 2 },
};

/* Compare the growing present g (length L on `axis`) with the prefix of
 * the shared one s (capacity on that axis); rows past L must be zero. */
static void present_prefix(const kt_val *s, const kt_val *g, int axis, double tol)
{
    ck_assert_int_eq(s->rank, g->rank);
    size_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++)
        outer *= (size_t)g->dims[d];
    for (int d = axis + 1; d < g->rank; d++)
        inner *= (size_t)g->dims[d];
    size_t L = (size_t)g->dims[axis], C = (size_t)s->dims[axis];
    ck_assert_uint_ge(C, L);
    for (size_t o = 0; o < outer; o++)
        for (size_t j = 0; j < C; j++)
            for (size_t i = 0; i < inner; i++) {
                double a = el(s, (o * C + j) * inner + i);
                double b = j < L ? el(g, (o * L + j) * inner + i) : 0.0;
                ck_assert_msg(fabs(a - b) <= tol * fmax(1, fabs(b)),
                              "present row %zu: %g here, %g growing", j, a, b);
            }
}

START_TEST(shared_buffer_equals_growing)
{
    static const int32_t types[2] = { OAC_T_FLOAT, OAC_T_FLOAT16 };
    const pair_case *c = &pair_cases[_i / 2];
    int32_t t = types[_i % 2];
    double tol = t == OAC_T_FLOAT ? 1e-6 : 2e-3;
    for (uint64_t steps = 1; steps <= 5; steps += 2) {
        kt_val s[3], g[3];
        size_t n = 1 + c->n_present;
        fx fs, fg;
        build_op_model(&fs, c->shared, t);
        ck_assert_int_eq(run_fixed(&fs, t, c->in, c->ni, steps, NULL, c->outs, s, n), OAC_OK);
        /* In place: the bound buffer is the present, nothing copied. */
        ck_assert_uint_eq(fs.e->copied_bytes, 0);
        ck_assert_uint_eq(fs.e->identity_held, fs.e->identity_checked);
        ck_assert_uint_gt(fs.e->identity_checked, 0);
        build_op_model(&fg, c->growing, t);
        ck_assert_int_eq(run_fixed_p(&fg, t, c->in, c->ni, steps, NULL, c->outs, g, n, false),
                         OAC_OK);
        ck_assert_int_eq(g[1].dims[c->axis], (int64_t)steps);
        ck_assert_uint_eq(s[0].n, g[0].n);
        for (size_t i = 0; i < g[0].n; i++)
            ck_assert_msg(fabs(el(&s[0], i) - el(&g[0], i)) <= tol * fmax(1, fabs(el(&g[0], i))),
                          "%s step %llu y[%zu]: %g shared, %g growing", c->shared,
                          (unsigned long long)steps, i, el(&s[0], i), el(&g[0], i));
        if (c->n_present == 1) {
            /* Combined [2, B, N, S, H]: K then V, each prefix. */
            present_prefix(&s[1], &g[1], c->axis, tol);
        } else {
            present_prefix(&s[1], &g[1], c->axis, tol);
            present_prefix(&s[2], &g[2], c->axis, tol);
        }
        kt_free(s, n);
        kt_free(g, n);
        fx_end(&fs);
        fx_end(&fg);
    }
}
END_TEST

/* Past longer than the buffer: the ninth step of a shared buffer of 8
 * is capacity-overflow before the step, at the node, naming the past. */
START_TEST(shared_buffer_overflow_before_the_step)
{
    static const char *const names[3] = { "ms_attention_shared", "mha_shared", "dmmha_shared" };
    static const char *const pasts[3] = { "past", "past_key", "past_key" };
    fx f;
    build_op_model(&f, names[_i], OAC_T_FLOAT);
    const pair_case *c = &pair_cases[_i];
    kt_val y;
    ck_assert_int_eq(run_fixed(&f, OAC_T_FLOAT, c->in, c->ni, OAC_OPM_CAP + 1, NULL, "y", &y, 0),
                     OAC_ERUNTIME);
    expect_at(f.d, OAC_CAPACITY_OVERFLOW, "attn", pasts[_i]);
    ck_assert_uint_eq(f.e->steps_completed, OAC_OPM_CAP);
    fx_end(&f);
}
END_TEST

/* ---- PagedAttention against the documented semantics ------------------- */

/* Two sequences of 2 and 1 new tokens after pasts of 3 and 1, blocks of
 * 2 in a pool of 5, tables {4, 0, 2} and {1, 3, -1}: every new row lands
 * at block table[b][p / 2], slot p % 2; every query attends causally to
 * its own sequence through the table, 2 query heads on 1 kv head.  The
 * pools are initializers (not writable): the outputs are new pools
 * holding the inputs' bytes and the new rows. */
static void paged_reference(int32_t t)
{
    enum { TOK = 3, N = 2, KVN = 1, H = 4, NB = 5, BS = 2, W = 3, B = 2 };
    const int32_t cu[B + 1] = { 0, 2, 3 }, past[B] = { 3, 1 };
    const int32_t table[B * W] = { 4, 0, 2, 1, 3, -1 };
    double q[TOK * N * H], k[TOK * KVN * H], v[TOK * KVN * H];
    double kc[NB * BS * KVN * H], vc[NB * BS * KVN * H];
    uint32_t seed = 5;
    double *arrs[5] = { q, k, v, kc, vc };
    size_t lens[5] = { TOK * N * H, TOK * KVN * H, TOK * KVN * H, NB * BS * KVN * H,
                       NB * BS * KVN * H };
    for (int a = 0; a < 5; a++)
        for (size_t i = 0; i < lens[a]; i++) {
            seed = seed * 1664525u + 1013904223u;
            arrs[a][i] = kt_round(t, (double)(seed >> 8) / 8388608.0 - 1.0);
        }
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_mb_opset(mb, "com.microsoft", 1);
    kt_init(g, "q", t, "3,8", q, lens[0]);
    kt_init(g, "k", t, "3,4", k, lens[1]);
    kt_init(g, "v", t, "3,4", v, lens[2]);
    kt_init(g, "kc", t, "5,2,4", kc, lens[3]);
    kt_init(g, "vc", t, "5,2,4", vc, lens[4]);
    double d_cu[3] = { 0, 2, 3 }, d_past[2] = { 3, 1 }, d_tab[6];
    for (int i = 0; i < B * W; i++)
        d_tab[i] = table[i];
    kt_init(g, "cu", OAC_T_INT32, "3", d_cu, 3);
    kt_init(g, "past", OAC_T_INT32, "2", d_past, 2);
    kt_init(g, "table", OAC_T_INT32, "2,3", d_tab, 6);
    Onnx__NodeProto *n = oac_gb_node(g, "PagedAttention", "com.microsoft", "paged",
                                     "q,k,v,kc,vc,cu,past,table", "y,kco,vco");
    oac_node_attr_int(g, n, "num_heads", N);
    oac_node_attr_int(g, n, "kv_num_heads", KVN);
    oac_gb_output(g, "y", t, "3,8");
    oac_gb_output(g, "kco", t, "5,2,4");
    oac_gb_output(g, "vco", t, "5,2,4");
    kt_val out[3];
    ck_assert_int_eq(kt_run(&f, true, "y,kco,vco", out, 3), OAC_OK);

    /* The reference: write, then attend through the table. */
    for (int b = 0; b < B; b++)
        for (int i = cu[b]; i < cu[b + 1]; i++) {
            int p = past[b] + i - cu[b], blk = table[b * W + p / BS];
            for (int d = 0; d < H; d++) {
                kc[(blk * BS + p % BS) * H + d] = k[i * H + d];
                vc[(blk * BS + p % BS) * H + d] = v[i * H + d];
            }
        }
    double want[TOK * N * H];
    double scale = 1 / sqrt((double)H);
    for (int b = 0; b < B; b++)
        for (int i = cu[b]; i < cu[b + 1]; i++) {
            int p = past[b] + i - cu[b];
            for (int h = 0; h < N; h++) {
                double x[16], m = -INFINITY, sum = 0;
                for (int j = 0; j <= p; j++) {
                    int blk = table[b * W + j / BS];
                    x[j] = 0;
                    for (int d = 0; d < H; d++)
                        x[j] += q[(i * N + h) * H + d] * kc[(blk * BS + j % BS) * H + d];
                    x[j] *= scale;
                    m = fmax(m, x[j]);
                }
                for (int j = 0; j <= p; j++)
                    sum += exp(x[j] - m);
                for (int d = 0; d < H; d++) {
                    double o = 0;
                    for (int j = 0; j <= p; j++) {
                        int blk = table[b * W + j / BS];
                        o += exp(x[j] - m) / sum * vc[(blk * BS + j % BS) * H + d];
                    }
                    want[(i * N + h) * H + d] = o;
                }
            }
        }
    double tol = t == OAC_T_FLOAT ? 2e-6 : 2e-3;
    kt_expect(&out[0], t, "3,8", want, TOK * N * H, tol);
    kt_expect(&out[1], t, "5,2,4", kc, lens[3], 0);
    kt_expect(&out[2], t, "5,2,4", vc, lens[4], 0);
    kt_free(out, 3);
    fx_end(&f);
}

START_TEST(paged_attention_reference)
{
    paged_reference(OAC_T_FLOAT);
    paged_reference(OAC_T_FLOAT16);
}
END_TEST

/* The two-layer look-alike: blocks of 4, a pool of 8, a table of
 * `width` entries; bound pools. */
typedef struct pools {
    float *mem[4];
    oac_binding b[4];
    oac_binding *bl[4];
    oac_run_hooks h;
} pools;

static void pools_init(pools *p)
{
    static const char *const names[4] = { "key_cache.0", "value_cache.0", "key_cache.1",
                                          "value_cache.1" };
    for (int i = 0; i < 4; i++) {
        p->mem[i] = calloc(8 * 4 * 4, sizeof(float));
        ck_assert_ptr_nonnull(p->mem[i]);
        oac_binding_init(&p->b[i], names[i], p->mem[i], 8 * 4 * 4 * sizeof(float), true);
        p->bl[i] = &p->b[i];
    }
    p->h = (oac_run_hooks){ .bindings = p->bl, .n_bindings = 4 };
}

static void pools_free(pools *p)
{
    for (int i = 0; i < 4; i++)
        free(p->mem[i]);
}

static int paged_decoder(fx *f, int width, uint64_t steps, pools *p)
{
    oac_mb *mb;
    fx_build(f, &mb);
    oac_op_model_paged(mb, OAC_T_FLOAT, 2, 8, 4, width);
    static const fixed_in x = { "x", { 1, 8 }, 2 };
    return run_fixed(f, OAC_T_FLOAT, &x, 1, steps, &p->h, "", NULL, 0);
}

/* 32 steps fill the pool (every block written, in place); the 33rd needs
 * a ninth block: capacity-overflow before any node runs, at the first
 * layer's node, naming its pool, and every block as step 32 left it. */
START_TEST(paged_pool_full_stops_before_the_step)
{
    pools a, b;
    pools_init(&a);
    pools_init(&b);
    fx f, g;
    ck_assert_int_eq(paged_decoder(&f, 8, 32, &a), OAC_OK);
    ck_assert_uint_eq(f.e->copied_bytes, 0);
    ck_assert_uint_eq(f.e->identity_held, f.e->identity_checked);
    for (int i = 0; i < 4; i++)
        for (int blk = 0; blk < 8; blk++) {
            bool any = false;
            for (int e = 0; e < 16; e++)
                any = any || a.mem[i][blk * 16 + e] != 0;
            ck_assert_msg(any, "pool %d block %d was never written", i, blk);
        }
    ck_assert_int_eq(paged_decoder(&g, 8, 33, &b), OAC_ERUNTIME);
    ck_assert_uint_eq(g.e->steps_completed, 32);
    expect_at(g.d, OAC_CAPACITY_OVERFLOW, "paged.0", "key_cache.0");
    const oac_diag *d = diag_find(g.d, OAC_CAPACITY_OVERFLOW, "paged.0", NULL, NULL);
    ck_assert_ptr_nonnull(strstr(d->message, "ran no node"));
    ck_assert_ptr_nonnull(strstr(d->message, "block_table"));
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(memcmp(a.mem[i], b.mem[i], 8 * 4 * 4 * sizeof(float)), 0);
    fx_end(&f);
    fx_end(&g);
    pools_free(&a);
    pools_free(&b);
}
END_TEST

/* A table whose ninth entry names block 8 of a pool of 8: outside the
 * pool, refused before step 33 as well; the near miss (8 entries, 32
 * steps) is clean. */
START_TEST(paged_block_outside_the_pool)
{
    pools a;
    pools_init(&a);
    fx f;
    ck_assert_int_eq(paged_decoder(&f, 9, 33, &a), OAC_ERUNTIME);
    ck_assert_uint_eq(f.e->steps_completed, 32);
    const oac_diag *d = diag_find(f.d, OAC_CAPACITY_OVERFLOW, "paged.0", "key_cache.0", NULL);
    ck_assert_msg(d && strstr(d->message, "outside the pool"), "%s", diag_dump(f.d));
    fx_end(&f);
    pools_free(&a);
}
END_TEST

/* The kernel's own check (a table the pre-check cannot see: computed by
 * a node): capacity-overflow at the node, naming the table; the pools
 * untouched. */
START_TEST(paged_kernel_checks_the_table)
{
    double q[8] = { 0 }, k[4] = { 0 }, pool[2 * 2 * 4], cu[2] = { 0, 1 }, past[1] = { 4 };
    double tab[2] = { 0, 1 };
    for (int i = 0; i < 16; i++)
        pool[i] = i;
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_mb_opset(mb, "com.microsoft", 1);
    kt_init(g, "q", OAC_T_FLOAT, "1,8", q, 8);
    kt_init(g, "k", OAC_T_FLOAT, "1,4", k, 4);
    kt_init(g, "kc", OAC_T_FLOAT, "2,2,4", pool, 16);
    kt_init(g, "vc", OAC_T_FLOAT, "2,2,4", pool, 16);
    kt_init(g, "cu", OAC_T_INT32, "2", cu, 2);
    kt_init(g, "past", OAC_T_INT32, "1", past, 1);
    kt_init(g, "tab0", OAC_T_INT32, "1,2", tab, 2);
    oac_gb_node(g, "Identity", NULL, "table_copy", "tab0", "table");
    Onnx__NodeProto *n = oac_gb_node(g, "PagedAttention", "com.microsoft", "paged",
                                     "q,k,k,kc,vc,cu,past,table", "y,kco,vco");
    oac_node_attr_int(g, n, "num_heads", 2);
    oac_node_attr_int(g, n, "kv_num_heads", 1);
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,8");
    oac_gb_output(g, "kco", OAC_T_FLOAT, "2,2,4");
    oac_gb_output(g, "vco", OAC_T_FLOAT, "2,2,4");
    kt_run_fail(&f, OAC_CAPACITY_OVERFLOW, "paged");
    const oac_diag *d = diag_find(f.d, OAC_CAPACITY_OVERFLOW, "paged", NULL, NULL);
    ck_assert_ptr_nonnull(strstr(d->message, "'table'"));
    fx_end(&f);
}
END_TEST

/* ---- EmbedLayerNormalization ------------------------------------------- */

/* EmbedLayerNormalization "eln" over 2 x 3 ids (the last one last_id),
 * a word table of 4 and positions of 3, hidden 2, with mask_index; with
 * segment_ids "sid" (and no segment_embedding) when sid. */
static void embed_model(fx *f, double last_id, bool sid)
{
    double ids[6] = { 1, 2, 3, 0, 1, last_id }, mask[6] = { 1, 1, 0, 1, 0, 0 };
    double w[4 * 2] = { 1, 2, 3, 4, 5, 6, 7, 9 }, pos[3 * 2] = { 0, 1, 1, 0, 0, 0 };
    double gamma[2] = { 1, 2 }, beta[2] = { 0, 1 }, seg[6] = { 0 };
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_mb_opset(mb, "com.microsoft", 1);
    kt_init(g, "input_ids", OAC_T_INT32, "2,3", ids, 6);
    if (sid)
        kt_init(g, "sid", OAC_T_INT32, "2,3", seg, 6);
    kt_init(g, "mask", OAC_T_INT32, "2,3", mask, 6);
    kt_init(g, "w", OAC_T_FLOAT, "4,2", w, 8);
    kt_init(g, "pos", OAC_T_FLOAT, "3,2", pos, 6);
    kt_init(g, "gamma", OAC_T_FLOAT, "2", gamma, 2);
    kt_init(g, "beta", OAC_T_FLOAT, "2", beta, 2);
    oac_gb_node(g, "EmbedLayerNormalization", "com.microsoft", "eln",
                sid ? "input_ids,sid,w,pos,,gamma,beta,mask"
                    : "input_ids,,w,pos,,gamma,beta,mask", "y,mi");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2,3,2");
    oac_gb_output(g, "mi", OAC_T_INT32, "2");
}

/* mask_index counts the ones of each mask row; an id outside the word
 * table is kernel-error naming input_ids. */
START_TEST(embed_mask_index_and_refusals)
{
    fx f;
    embed_model(&f, 4, false);
    kt_run_fail(&f, OAC_KERNEL_ERROR, "eln");
    expect_at(f.d, OAC_KERNEL_ERROR, "eln", "input_ids");
    fx_end(&f);

    embed_model(&f, 2, false);
    kt_val out[2];
    ck_assert_int_eq(kt_run(&f, true, "y,mi", out, 2), OAC_OK);
    const double mi[2] = { 2, 1 };
    kt_expect(&out[1], OAC_T_INT32, "2", mi, 2, 0);
    /* Token (0, 0): e = w[1] + pos[0] = (3, 5): mean 4, var 1, so
     * y = (-1, 1) / sqrt(1 + 1e-12) * gamma + beta = (-1, 3). */
    ck_assert(fabs(kt_get(&out[0], 0) + 1) < 1e-5 && fabs(kt_get(&out[0], 1) - 3) < 1e-5);
    kt_free(out, 2);
    fx_end(&f);

    /* segment_ids without segment_embedding: kernel-error naming the
     * input that is there (the absent one has no name) and the port that
     * is missing. */
    embed_model(&f, 2, true);
    kt_run_fail(&f, OAC_KERNEL_ERROR, "eln");
    expect_at(f.d, OAC_KERNEL_ERROR, "eln", "sid");
    const oac_diag *d = diag_find(f.d, OAC_KERNEL_ERROR, NULL, NULL, NULL);
    ck_assert_str_eq(d->value, "sid");
    ck_assert_ptr_nonnull(strstr(d->message, "'sid': segment_ids and segment_embedding must "
                                             "be given together: input 4 is missing"));
    fx_end(&f);
}
END_TEST

/* ---- broken twins ---------------------------------------------------------- */

/* com.microsoft Attention with a mask of the wrong batch: kernel-error
 * naming the node and the mask; MultiHeadAttention whose
 * past_sequence_length and new rows pass its buffer: kernel-error naming
 * past_sequence_length. */
START_TEST(attention_broken_twins)
{
    double x[8] = { 0 }, w[8 * 24] = { 0 }, mask[4] = { 1, 1, 1, 1 };
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_mb_opset(mb, "com.microsoft", 1);
    kt_init(g, "x", OAC_T_FLOAT, "1,1,8", x, 8);
    kt_init(g, "w", OAC_T_FLOAT, "8,24", w, 192);
    kt_init(g, "mask", OAC_T_INT32, "2,2", mask, 4);
    Onnx__NodeProto *n = oac_gb_node(g, "Attention", "com.microsoft", "attn", "x,w,,mask",
                                     "y");
    oac_node_attr_int(g, n, "num_heads", 2);
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,1,8");
    kt_run_fail(&f, OAC_KERNEL_ERROR, "attn");
    expect_at(f.d, OAC_KERNEL_ERROR, "attn", "mask");
    fx_end(&f);

    double q[16] = { 0 }, pk[64] = { 0 }, psl = 7;
    g = fx_build(&f, &mb);
    oac_mb_opset(mb, "com.microsoft", 1);
    kt_init(g, "q", OAC_T_FLOAT, "1,2,8", q, 16);
    kt_init(g, "pk", OAC_T_FLOAT, "1,2,8,4", pk, 64);
    kt_init(g, "psl0", OAC_T_INT32, "1", &psl, 1);
    /* Through a node that does not fold: the check cannot see the length,
     * the kernel refuses it. */
    oac_gb_node(g, "Abs", NULL, "psl_abs", "psl0", "psl");
    n = oac_gb_node(g, "MultiHeadAttention", "com.microsoft", "mha",
                    "q,q,q,,,,pk,pk,psl", "y,pko,pvo");
    oac_node_attr_int(g, n, "num_heads", 2);
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,2,8");
    oac_gb_output(g, "pko", OAC_T_FLOAT, "1,2,8,4");
    oac_gb_output(g, "pvo", OAC_T_FLOAT, "1,2,8,4");
    kt_run_fail(&f, OAC_KERNEL_ERROR, "mha");
    expect_at(f.d, OAC_KERNEL_ERROR, "mha", "psl");
    fx_end(&f);
}
END_TEST

/* ---- the table --------------------------------------------------------------- */

/* Every operator of contract sections 6 and 10 has a kernel: the rows of
 * section 6's table (flagged), and the others section 10 names. */
START_TEST(every_section_6_and_10_row_has_a_kernel)
{
    static const char *const named[][2] = {
        { "com.microsoft", "GroupQueryAttention" }, { "com.microsoft", "MultiHeadAttention" },
        { "com.microsoft", "DecoderMaskedMultiHeadAttention" }, { "com.microsoft", "Attention" },
        { "com.microsoft", "PagedAttention" }, { "com.microsoft", "SparseAttention" },
        { "com.microsoft", "EmbedLayerNormalization" }, { "", "ScatterND" },
        { "", "ScatterElements" }, { "", "Identity" }, { "", "Concat" }, { "", "Pad" },
        { "", "Attention" }, { "", "Log" }, { "", "Max" }, { "", "Min" },
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        const oac_op *op = oac_op_find(named[i][0], named[i][1]);
        ck_assert_msg(op, "no row for %s::%s", named[i][0], named[i][1]);
        ck_assert_msg(op->kernel, "%s::%s has no kernel", named[i][0], named[i][1]);
    }
    size_t flagged = 0;
    for (int id = 0; id < OAC_OP_COUNT; id++) {
        const oac_op *op = oac_op_get((oac_op_id)id);
        if (!oac_op_has(op, OAC_OPF_ALIAS_TABLE))
            continue;
        flagged++;
        ck_assert_msg(op->kernel, "%s::%s (section 6) has no kernel", op->domain, op->op_type);
    }
    ck_assert_uint_ge(flagged, 10);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("kernel_ops");
    TCase *tc = tcase_create("ops");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, shared_buffer_equals_growing, 0, 6);
    tcase_add_loop_test(tc, shared_buffer_overflow_before_the_step, 0, 3);
    tcase_add_test(tc, paged_attention_reference);
    tcase_add_test(tc, paged_pool_full_stops_before_the_step);
    tcase_add_test(tc, paged_block_outside_the_pool);
    tcase_add_test(tc, paged_kernel_checks_the_table);
    tcase_add_test(tc, embed_mask_index_and_refusals);
    tcase_add_test(tc, attention_broken_twins);
    tcase_add_test(tc, every_section_6_and_10_row_has_a_kernel);
    suite_add_tcase(s, tc);
    return s;
}

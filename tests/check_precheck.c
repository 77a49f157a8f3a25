/* check_precheck.c: the capacity pre-check of a step (lib/run/precheck.c;
 * contract 8: "an overflow is capacity-overflow on the update node and
 * the step executes no node, so every bound cache keeps its contents").
 *
 * Caches are bound to the test's own storage, so what a refused step
 * did to them is read directly: each refused run is compared byte for
 * byte with a run of one step fewer.  The decisive case updates two
 * caches of different capacities in one step: without the pre-check the
 * first update writes its cache before the second overflows.  A
 * position computed by a node is not known before the step: its kernel
 * checks it, after the first cache was written, and that binding is then
 * invalid (binding-invalid, run/bind.c).
 */
#include "harness.h"
#include "run/kernel_api.h"

static const char *const toy_caches[4] = {
    "key_cache_0", "value_cache_0", "key_cache_1", "value_cache_1",
};
enum { TOY_CACHE_BYTES = 1 * OAC_TOY_HEADS * OAC_TOY_MAX_LEN * OAC_TOY_HEAD_SIZE * 4 };

/* The toy decoder run `steps` steps on caches bound to store (4 caches
 * of TOY_CACHE_BYTES, zeroed here); returns the run's status. */
static int toy_run(fx *f, uint8_t *store, uint64_t steps)
{
    oac_binding b[4];
    oac_binding *bl[4];
    memset(store, 0, 4 * TOY_CACHE_BYTES);
    for (int i = 0; i < 4; i++) {
        oac_binding_init(&b[i], toy_caches[i], store + i * TOY_CACHE_BYTES,
                         TOY_CACHE_BYTES, true);
        bl[i] = &b[i];
    }
    oac_run_hooks h = { .bindings = bl, .n_bindings = 4 };
    oac_run_opts ro = { .steps = steps };
    fx_example(f, "toy_decoder");
    int rc = fx_check_run(f, NULL, 0, NULL, 0, &ro, &h);
    for (int i = 0; i < 4; i++)
        ck_assert(!b[i].invalid);
    return rc;
}

START_TEST(toy_decoder_past_its_capacity)
{
    /* 16 slots, one token a step: step 17 is refused at the first update,
     * before its embedding or any other node runs (it used to fail at
     * the mask's Gather), and the caches are those of 16 steps. */
    uint8_t *full = malloc(4 * TOY_CACHE_BYTES), *over = malloc(4 * TOY_CACHE_BYTES);
    fx f;
    ck_assert_int_eq(toy_run(&f, full, OAC_TOY_MAX_LEN), OAC_OK);
    fx_end(&f);
    ck_assert_int_eq(toy_run(&f, over, OAC_TOY_MAX_LEN + 1), OAC_ERUNTIME);
    ck_assert_uint_eq(f.e->steps_completed, OAC_TOY_MAX_LEN);
    ck_assert_uint_eq(oac_diags_count_severity(f.d, OAC_SEV_ERROR), 1);
    const oac_diag *d = diag_expect_run(f.d, OAC_CAPACITY_OVERFLOW, "capacity-overflow");
    ck_assert_str_eq(d->node, "l0_key_update");
    ck_assert_str_eq(d->op_type, "CacheUpdate");
    ck_assert_str_eq(d->value, "key_cache_0");
    ck_assert_ptr_nonnull(strstr(d->message, "node 'l0_key_update': position 16 + length 1 = 17 exceeds the "
                                           "capacity 16 of 'key_cache_0'"));
    ck_assert_ptr_nonnull(strstr(d->message, "ran no node"));
    ck_assert(!memcmp(full, over, 4 * TOY_CACHE_BYTES));
    /* Not vacuous: the 16 steps wrote every slot of every cache. */
    for (int i = 0; i < 4; i++) {
        const float *c = (const float *)(full + i * TOY_CACHE_BYTES);
        bool slot15 = false;
        for (int h = 0; h < OAC_TOY_HEADS; h++)
            for (int e = 0; e < OAC_TOY_HEAD_SIZE; e++)
                slot15 = slot15 || c[(h * OAC_TOY_MAX_LEN + 15) * OAC_TOY_HEAD_SIZE + e] != 0;
        ck_assert_msg(slot15, "%s: slot 15 never written", toy_caches[i]);
    }
    fx_end(&f);
    free(full);
    free(over);
}
END_TEST

/* The bytes of file dir/name (*n of them; the caller frees). */
static uint8_t *slurp(const char *dir, const char *name, size_t *n)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "rb");
    ck_assert_msg(fp != NULL, "%s not written", path);
    uint8_t *b = malloc(1 << 16);
    *n = fread(b, 1, 1 << 16, fp);
    fclose(fp);
    return b;
}

START_TEST(dump_after_a_refused_step)
{
    /* --dump after the refused step 17 writes what step 16 left: the
     * same files, byte for byte, as a run of 16 steps. */
    static const char *const files[] = {
        "key_cache_0.pb", "value_cache_1.pb", "key_cache_1_updated.pb", "logits.pb",
    };
    char d16[] = "/tmp/oac_pre16_XXXXXX", d17[] = "/tmp/oac_pre17_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(d16));
    ck_assert_ptr_nonnull(mkdtemp(d17));
    const char *dirs[2] = { d16, d17 };
    for (int i = 0; i < 2; i++) {
        fx f;
        fx_example(&f, "toy_decoder");
        oac_run_opts ro = { .steps = OAC_TOY_MAX_LEN + (uint64_t)i, .dump_dir = dirs[i] };
        ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL), i ? OAC_ERUNTIME : OAC_OK);
        ck_assert_uint_eq(f.e->steps_completed, OAC_TOY_MAX_LEN);
        fx_end(&f);
    }
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        size_t na, nb;
        uint8_t *a = slurp(d16, files[k], &na), *b = slurp(d17, files[k], &nb);
        ck_assert_uint_gt(na, 0);
        ck_assert_msg(na == nb && !memcmp(a, b, na), "%s differs", files[k]);
        free(a);
        free(b);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", d16, d17);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- two caches, two capacities ------------------------------------------ */

enum { K_CAP = 8, V_CAP = 4, W = 2 };

/* k [1, K_CAP, 2] and v [1, V_CAP, 2], READ_WRITE, both updated in place
 * with the same new row (ones) at the same position, k first: the
 * position input (advancing by 1 a step), or (computed) row 4 of a table
 * read by a Gather node, which neither the check (Gather folds nothing)
 * nor the pre-check can know before the node runs. */
static void two_caps(fx *f, bool computed)
{
    char kd[16], vd[16];
    snprintf(kd, sizeof kd, "1,%d,%d", K_CAP, W);
    snprintf(vd, sizeof vd, "1,%d,%d", V_CAP, W);
    oac_gb *g = fx_build(f, NULL);
    oac_vi_access(g, oac_gb_input(g, "k", OAC_T_FLOAT, kd), 1);
    oac_vi_access(g, oac_gb_input(g, "v", OAC_T_FLOAT, vd), 1);
    oac_gb_input(g, "position", OAC_T_INT64, "");
    static const float ones[W] = { 1, 1 };
    oac_gb_init_f32(g, "row", "1,1,2", ones, W);
    const char *pos = "position";
    if (computed) {
        static const int64_t four = V_CAP, zero = 0;
        oac_gb_init_i64(g, "table", "1", &four, 1);
        oac_gb_init_i64(g, "zero", "", &zero, 1);
        oac_gb_node(g, "Gather", NULL, "pos_read", "table,zero", "pos2");
        pos = "pos2";
    }
    char in[64];
    snprintf(in, sizeof in, "k,row,%s", pos);
    oac_node_alias(g, oac_gb_node(g, "CacheUpdate", "onnx_alias", "uk", in, "k2"), 0, 0, 1);
    snprintf(in, sizeof in, "v,row,%s", pos);
    oac_node_alias(g, oac_gb_node(g, "CacheUpdate", "onnx_alias", "uv", in, "v2"), 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "k2", OAC_T_FLOAT, kd), "k");
    oac_vi_alias_of(g, oac_gb_output(g, "v2", OAC_T_FLOAT, vd), "v");
    fx_load(f);
}

typedef struct caps {
    float k[K_CAP * W], v[V_CAP * W];
    oac_binding bk, bv;
    oac_binding *bl[2];
} caps;

static void caps_init(caps *c)
{
    memset(c, 0, sizeof *c);
    oac_binding_init(&c->bk, "k", c->k, sizeof c->k, true);
    oac_binding_init(&c->bv, "v", c->v, sizeof c->v, true);
    c->bl[0] = &c->bk;
    c->bl[1] = &c->bv;
}

/* two_caps run `steps` steps on c's bindings. */
static int caps_run(fx *f, caps *c, bool computed, uint64_t steps)
{
    two_caps(f, computed);
    oac_run_hooks h = { .bindings = c->bl, .n_bindings = 2 };
    oac_run_opts ro = { .steps = steps };
    return fx_check_run(f, NULL, 0, NULL, 0, &ro, &h);
}

START_TEST(no_cache_written_by_a_refused_step)
{
    /* Step 5 writes row 4: k has room, v does not.  The pre-check
     * refuses the step at uv before uk runs. */
    caps a, b;
    caps_init(&a);
    caps_init(&b);
    fx f;
    ck_assert_int_eq(caps_run(&f, &a, false, V_CAP), OAC_OK);
    fx_end(&f);
    ck_assert_int_eq(caps_run(&f, &b, false, V_CAP + 1), OAC_ERUNTIME);
    ck_assert_uint_eq(f.e->steps_completed, V_CAP);
    const oac_diag *d = diag_expect_run(f.d, OAC_CAPACITY_OVERFLOW, "capacity-overflow");
    ck_assert_str_eq(d->node, "uv");
    ck_assert_ptr_nonnull(strstr(d->message, "ran no node"));
    ck_assert_float_eq(a.k[(V_CAP - 1) * W], 1);    /* written by step 4 */
    ck_assert_float_eq(b.k[V_CAP * W], 0);          /* row 4 untouched */
    ck_assert(!memcmp(a.k, b.k, sizeof a.k));
    ck_assert(!memcmp(a.v, b.v, sizeof a.v));
    /* Nothing written: the bindings stay valid. */
    ck_assert(!b.bk.invalid && !b.bv.invalid);
    fx_end(&f);
}
END_TEST

START_TEST(computed_position_left_to_the_kernel)
{
    /* A position a node computes is not known before the step: uk
     * writes row 4 of k, uv's kernel refuses; k is now half a step ahead
     * of v, and its binding invalid (v's was not written). */
    caps c;
    caps_init(&c);
    fx f;
    ck_assert_int_eq(caps_run(&f, &c, true, 1), OAC_ERUNTIME);
    ck_assert_uint_eq(f.e->steps_completed, 0);
    const oac_diag *d = diag_expect_run(f.d, OAC_CAPACITY_OVERFLOW, "capacity-overflow");
    ck_assert_str_eq(d->node, "uv");
    ck_assert_ptr_null(strstr(d->message, "ran no node"));
    ck_assert_float_eq(c.k[V_CAP * W], 1);
    ck_assert(c.bk.invalid);
    ck_assert(!c.bv.invalid);
    fx_end(&f);
    /* The next run on k is refused before anything runs: the row the
     * test marks is not written again. */
    c.k[V_CAP * W] = 7;
    ck_assert_int_eq(caps_run(&f, &c, true, 1), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_BINDING_INVALID), 1);
    ck_assert_uint_eq(diag_count(f.d, OAC_CAPACITY_OVERFLOW), 0);
    ck_assert_float_eq(c.k[V_CAP * W], 7);
    fx_end(&f);
    /* Reset by its owner: the step runs (and fails the same way). */
    oac_binding_reset(&c.bk);
    ck_assert_int_eq(caps_run(&f, &c, true, 1), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f.d, OAC_BINDING_INVALID), 0);
    ck_assert_uint_eq(diag_count(f.d, OAC_CAPACITY_OVERFLOW), 1);
    ck_assert_float_eq(c.k[V_CAP * W], 1);
    fx_end(&f);
}
END_TEST

/* ---- a TensorScatter decoder fed by the loop ------------------------------- */

enum { S_CAP = 8, S_E = 4, S_VOCAB = 32 };

/* input_ids [batch, seq] -> Gather(embedding) [batch, seq, 4], written by
 * TensorScatter (axis 1) into key_cache [batch, S_CAP, 4] at the
 * write_indices the loop drives (the past length). */
static void scatter_decoder(fx *f)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_mb_opset(mb, "", 24);
    char cd[32];
    snprintf(cd, sizeof cd, "batch,%d,%d", S_CAP, S_E);
    oac_gb_input(g, "input_ids", OAC_T_INT64, "batch,seq");
    oac_gb_input(g, "write_indices", OAC_T_INT64, "batch");
    oac_vi_access(g, oac_gb_input(g, "key_cache", OAC_T_FLOAT, cd), 1);
    float emb[S_VOCAB * S_E];
    for (int i = 0; i < S_VOCAB * S_E; i++)
        emb[i] = (float)(i / S_E);         /* row t holds t */
    char ed[16];
    snprintf(ed, sizeof ed, "%d,%d", S_VOCAB, S_E);
    oac_gb_init_f32(g, "embedding", ed, emb, S_VOCAB * S_E);
    oac_gb_node(g, "Gather", NULL, "embed", "embedding,input_ids", "k");
    Onnx__NodeProto *n = oac_gb_node(g, "TensorScatter", NULL, "scatter",
                                     "key_cache,k,write_indices", "updated_key_cache");
    oac_node_attr_int(g, n, "axis", 1);
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_key_cache", OAC_T_FLOAT, cd), "key_cache");
    fx_load(f);
}

static int scatter_run(fx *f, float *store, uint64_t steps)
{
    oac_binding b;
    oac_binding *bl[1] = { &b };
    memset(store, 0, S_CAP * S_E * sizeof *store);
    oac_binding_init(&b, "key_cache", store, S_CAP * S_E * sizeof *store, true);
    oac_run_hooks h = { .bindings = bl, .n_bindings = 1 };
    oac_run_opts ro = { .steps = steps, .prompt_length = 3 };
    scatter_decoder(f);
    return fx_check_run(f, NULL, 0, NULL, 0, &ro, &h);
}

START_TEST(scatter_decoder_prompt_then_tokens)
{
    /* A prompt of 3 (rows 0..2), then one token a step at the past
     * length: 6 steps fill the 8 rows, the 7th is refused before it
     * runs.  The update's length is the step's (3, then 1), not the
     * first step's the check was made at. */
    float a[S_CAP * S_E], b[S_CAP * S_E];
    fx f;
    ck_assert_int_eq(scatter_run(&f, a, 6), OAC_OK);
    for (int r = 0; r < S_CAP; r++)
        for (int e = 0; e < S_E; e++)
            ck_assert_float_eq(a[r * S_E + e], (float)(r + 1));   /* token r + 1 */
    ck_assert_int_eq(f.e->per_step[5].past_length, 7);
    fx_end(&f);
    ck_assert_int_eq(scatter_run(&f, b, 7), OAC_ERUNTIME);
    ck_assert_uint_eq(f.e->steps_completed, 6);
    const oac_diag *d = diag_expect_run(f.d, OAC_CAPACITY_OVERFLOW, "capacity-overflow");
    ck_assert_str_eq(d->node, "scatter");
    ck_assert_ptr_nonnull(strstr(d->message, "[0] = 8 + length 1 = 9 exceeds the capacity 8"));
    ck_assert(!memcmp(a, b, sizeof a));
    fx_end(&f);
}
END_TEST

/* ---- paged caches ------------------------------------------------------------- */

START_TEST(paged_page_id_past_the_pages)
{
    /* page_id 2 on a cache without pages (creating is page_id 0). */
    char dir[] = "/tmp/oac_pre_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    int64_t two = 2;
    char *path = write_tensor(dir, "page_id", OAC_T_INT64, NULL, 0, &two, sizeof two);
    oac_input_file in[1] = { { "page_id", path } };
    fx f;
    fx_example(&f, "paged_cache");
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, in, 1, &ro, NULL), OAC_ERUNTIME);
    const oac_diag *d = diag_expect_run(f.d, OAC_CAPACITY_OVERFLOW, "capacity-overflow");
    ck_assert_ptr_nonnull(strstr(d->message, "page_id 2 is outside the 0 pages"));
    ck_assert_uint_eq(f.e->steps_completed, 0);
    fx_end(&f);
    unlink(path);
    free(path);
    rmdir(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("precheck");
    TCase *tc = tcase_create("precheck");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, toy_decoder_past_its_capacity);
    tcase_add_test(tc, dump_after_a_refused_step);
    tcase_add_test(tc, no_cache_written_by_a_refused_step);
    tcase_add_test(tc, computed_position_left_to_the_kernel);
    tcase_add_test(tc, scatter_decoder_prompt_then_tokens);
    tcase_add_test(tc, paged_page_id_past_the_pages);
    suite_add_tcase(s, tc);
    return s;
}

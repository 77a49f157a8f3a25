/* check_pairs.c: the one KV pairing and a verdict for every pair
 * (lib/annotate/pairs.c; contract 9.1-9.5): kv_caches, cache-copied,
 * alias-implied for an Identity passthrough, check --config
 * (config-mismatch, config-no-sharing) and annotate's no-cache-pairs, on
 * the GenAI look-alikes of tests/genai_models.c.
 *
 * Each verdict row names a look-alike, the configuration and dims it is
 * checked with, and what its pair must get: verdict, reason, node, bytes
 * per token (or the formula in the dims' symbols) and the diagnostic.
 */
#include "annotate/annotate.h"   /* oac_annotation_write_buffer */
#include "harness.h"
#include "genai_models.h"

#define NONE (-1)

/* ---- scratch configuration files --------------------------------------- */

typedef struct scratch {
    char dir[64];
    char path[128];
} scratch;

/* json written to a new file; its path in s->path (NULL json: none). */
static const char *config_file(scratch *s, const char *json)
{
    s->dir[0] = s->path[0] = '\0';
    if (!json)
        return NULL;
    snprintf(s->dir, sizeof s->dir, "/tmp/check_pairs_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(s->dir));
    snprintf(s->path, sizeof s->path, "%s/genai_config.json", s->dir);
    FILE *fp = fopen(s->path, "w");
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_ge(fputs(json, fp), 0);
    ck_assert_int_eq(fclose(fp), 0);
    return s->path;
}

static void scratch_end(scratch *s)
{
    if (s->path[0])
        unlink(s->path);
    if (s->dir[0])
        rmdir(s->dir);
}

/* Build look-alike `model` and check it with config (JSON or NULL) and
 * batch bound to 1 when batch1. */
static void check_look_alike(fx *f, const char *model, const char *config, bool batch1)
{
    static const oac_dim_binding batch[1] = { { "batch", 1 } };
    const genai_model *m = genai_model_find(model);
    ck_assert_msg(m != NULL, "no look-alike %s", model);
    oac_mb *mb;
    fx_build(f, &mb);
    m->build(mb);
    scratch s;
    oac_check_opts o = { .config = config_file(&s, config) };
    if (batch1) {
        o.dims = batch;
        o.n_dims = 1;
    }
    ck_assert_int_eq(fx_check(f, &o), OAC_OK);
    scratch_end(&s);
}

/* ---- configurations ------------------------------------------------------ */

#define KV_CONFIG(past, present, search)                                       \
    "{\"model\": {\"decoder\": {\"inputs\": {\"past_key_names\": \"" past "\"}, " \
    "\"outputs\": {\"present_key_names\": \"" present "\"}}}, "                   \
    "\"search\": {" search "}}\n"
#define GQA_KV(search) KV_CONFIG("past_key_values.%d.key", "present.%d.key", search)
#define SHARE "\"past_present_share_buffer\": true"
#define NO_SHARE "\"past_present_share_buffer\": false"

/* ---- verdicts ------------------------------------------------------------ */

typedef struct vrow {
    const char *name;
    const char *model;        /* a row of genai_models */
    const char *config;       /* its JSON, or NULL */
    bool batch1;              /* --dim batch=1 */
    size_t pair;              /* the kv_caches entry asserted */
    const char *past;
    oac_kv_verdict verdict;
    int reason;               /* oac_refusal, 0 for none */
    const char *node;         /* NULL: none */
    int64_t bytes;            /* bytes_per_token, NONE: unknown ... */
    const char *formula;      /* ... and then this formula */
    int diag;                 /* the pair's diagnostic at node and present, or NONE */
    int config_diag;          /* a configuration finding, or NONE */
} vrow;

static const vrow vrows[] = {
    /* Concat-grown: copied at the Concat; its bytes in the symbol of
     * the sequence, or at the configuration's max_length. */
    { "concat", "concat", NULL, true, 0, "past_key_values.0.key", OAC_KV_COPIED,
      OAC_REFUSAL_GROWING_CACHE, "concat_0_key", NONE, "128 x total_seq_len bytes",
      OAC_CACHE_COPIED, NONE },
    { "concat_max_length", "concat", GQA_KV(NO_SHARE ", \"max_length\": 64"), true, 0,
      "past_key_values.0.key", OAC_KV_COPIED, OAC_REFUSAL_GROWING_CACHE, "concat_0_key",
      8192, NULL, OAC_CACHE_COPIED, NONE },
    /* Sharing on for a copied pair. */
    { "concat_share", "concat", GQA_KV(SHARE), true, 0, "past_key_values.0.key",
      OAC_KV_COPIED, OAC_REFUSAL_GROWING_CACHE, "concat_0_key", NONE,
      "128 x total_seq_len bytes", OAC_CACHE_COPIED, OAC_CONFIG_MISMATCH },
    /* Pad-grown. */
    { "pad", "pad", NULL, false, 0, "past_0", OAC_KV_COPIED, OAC_REFUSAL_GROWING_CACHE,
      "grow", NONE, "128 x total_seq_len bytes", OAC_CACHE_COPIED, NONE },
    { "pad_share", "pad", KV_CONFIG("past_%d", "present_%d", SHARE), false, 0, "past_0",
      OAC_KV_COPIED, OAC_REFUSAL_GROWING_CACHE, "grow", NONE, NULL, OAC_CACHE_COPIED,
      OAC_CONFIG_MISMATCH },
    /* com.microsoft Attention without past_present_share_buffer. */
    { "gpt2", "gpt2", NULL, true, 0, "past_0", OAC_KV_COPIED, OAC_REFUSAL_GROWING_CACHE,
      "GptAttention_0", NONE, "256 x total_seq_len bytes", OAC_CACHE_COPIED, NONE },
    { "gpt2_share_on", "gpt2", KV_CONFIG("past_%d", "present_%d", SHARE ", \"max_length\": 32"),
      true, 0, "past_0", OAC_KV_COPIED, OAC_REFUSAL_GROWING_CACHE, "GptAttention_0",
      8192, NULL, OAC_CACHE_COPIED, OAC_CONFIG_MISMATCH },
    /* ... and with it: implied (the checker's own alias-implied). */
    { "gpt2_share", "gpt2_share", NULL, true, 0, "past_0", OAC_KV_IMPLIED, 0,
      "GptAttention_0", NONE, "256 x total_seq_len bytes", OAC_ALIAS_IMPLIED, NONE },
    /* MultiHeadAttention without past_sequence_length. */
    { "mha", "mha_no_past_len", NULL, true, 1, "past_key_values.0.value", OAC_KV_COPIED,
      OAC_REFUSAL_GROWING_CACHE, "MHA_0", NONE, "256 x total_seq_len bytes",
      OAC_CACHE_COPIED, NONE },
    /* Delta output: the present is the new positions. */
    { "delta", "delta", NULL, false, 0, "past_0", OAC_KV_COPIED, OAC_REFUSAL_DELTA_OUTPUT,
      "update", 128, NULL, OAC_CACHE_COPIED, NONE },
    /* Identity state: a pair in place by definition, not declared. */
    { "identity_state", "identity_state", NULL, false, 1, "past_conv.0", OAC_KV_IMPLIED, 0,
      "conv_pass", 768, NULL, OAC_ALIAS_IMPLIED, NONE },
    { "identity_state_share", "identity_state",
      KV_CONFIG("past_conv.%d", "present_conv.%d", SHARE), false, 1, "past_conv.0",
      OAC_KV_IMPLIED, 0, "conv_pass", 768, NULL, OAC_ALIAS_IMPLIED, NONE },
    /* Constant present, not derived: not a cache; sharing on for them. */
    { "constant", "constant_presents", NULL, false, 0, "past_key_values.0.key",
      OAC_KV_NOT_A_CACHE, OAC_REFUSAL_CONSTANT_PRESENT, NULL, 512, NULL, NONE, NONE },
    { "constant_share", "constant_presents", GQA_KV(SHARE), false, 0,
      "past_key_values.0.key", OAC_KV_NOT_A_CACHE, OAC_REFUSAL_CONSTANT_PRESENT, NULL, 512,
      NULL, NONE, OAC_CONFIG_MISMATCH },
    { "not_derived", "not_derived", NULL, false, 0, "past_0", OAC_KV_NOT_A_CACHE,
      OAC_REFUSAL_NOT_DERIVED, NULL, 128, NULL, NONE, NONE },
    /* GQA: implied; sharing off, beam search, a name the model lacks. */
    { "gqa", "gqa_names", NULL, true, 0, "past_key_values.0.key", OAC_KV_IMPLIED, 0,
      "GQA_0", NONE, "128 x total_seq_len bytes", OAC_ALIAS_IMPLIED, NONE },
    { "gqa_share", "gqa_names", GQA_KV(SHARE ", \"max_length\": 64"), true, 0,
      "past_key_values.0.key", OAC_KV_IMPLIED, 0, "GQA_0", 8192, NULL, OAC_ALIAS_IMPLIED,
      NONE },
    { "gqa_noshare", "gqa_names", GQA_KV(NO_SHARE), true, 0, "past_key_values.0.key",
      OAC_KV_IMPLIED, 0, "GQA_0", NONE, NULL, OAC_ALIAS_IMPLIED, OAC_CONFIG_NO_SHARING },
    { "gqa_beams", "gqa_names", GQA_KV(SHARE ", \"num_beams\": 4"), true, 0,
      "past_key_values.0.key", OAC_KV_IMPLIED, 0, "GQA_0", NONE, NULL, OAC_ALIAS_IMPLIED,
      OAC_CONFIG_NO_SHARING },
    { "gqa_absent_name", "gqa_names", KV_CONFIG("past.%d.k", "present.%d.k", SHARE), true,
      0, "past_key_values.0.key", OAC_KV_IMPLIED, 0, "GQA_0", NONE, NULL,
      OAC_ALIAS_IMPLIED, OAC_CONFIG_MISMATCH },
    /* A config naming another present (or none) for a past the names or
     * the structure pair: the pair, its verdict and finding stand. */
    { "concat_config_other", "concat",
      KV_CONFIG("past_key_values.%d.key", "present.%d.value", NO_SHARE), true, 0,
      "past_key_values.0.key", OAC_KV_COPIED, OAC_REFUSAL_GROWING_CACHE, "concat_0_key",
      NONE, "128 x total_seq_len bytes", OAC_CACHE_COPIED, OAC_CONFIG_MISMATCH },
    { "concat_config_absent", "concat",
      KV_CONFIG("past_key_values.%d.key", "present_missing.%d.key", NO_SHARE), true, 0,
      "past_key_values.0.key", OAC_KV_COPIED, OAC_REFUSAL_GROWING_CACHE, "concat_0_key",
      NONE, "128 x total_seq_len bytes", OAC_CACHE_COPIED, OAC_CONFIG_MISMATCH },
    { "concat_config_exact", "concat", GQA_KV(NO_SHARE), true, 0, "past_key_values.0.key",
      OAC_KV_COPIED, OAC_REFUSAL_GROWING_CACHE, "concat_0_key", NONE,
      "128 x total_seq_len bytes", OAC_CACHE_COPIED, NONE },
    { "gqa_present_absent", "gqa_names",
      KV_CONFIG("past_key_values.%d.key", "present_missing.%d.key", SHARE), true, 0,
      "past_key_values.0.key", OAC_KV_IMPLIED, 0, "GQA_0", NONE, NULL, OAC_ALIAS_IMPLIED,
      OAC_CONFIG_MISMATCH },
    { "gqa_present_other", "gqa_names",
      KV_CONFIG("past_key_values.%d.key", "present.%d.value", SHARE), true, 0,
      "past_key_values.0.key", OAC_KV_IMPLIED, 0, "GQA_0", NONE, NULL, OAC_ALIAS_IMPLIED,
      OAC_CONFIG_MISMATCH },
    /* TensorScatter with a static capacity of 16: max_length 4096 passes it. */
    { "scatter_max_length", "scatter",
      KV_CONFIG("key_cache.%d", "updated_key_cache.%d", SHARE ", \"max_length\": 4096"),
      true, 0, "key_cache.0", OAC_KV_IMPLIED, 0, "scatter_0_key", 2048, NULL,
      OAC_ALIAS_IMPLIED, OAC_CONFIG_MISMATCH },
    { "scatter_max_16", "scatter",
      KV_CONFIG("key_cache.%d", "updated_key_cache.%d", SHARE ", \"max_length\": 16"),
      true, 0, "key_cache.0", OAC_KV_IMPLIED, 0, "scatter_0_key", 2048, NULL,
      OAC_ALIAS_IMPLIED, NONE },
};

static const char *codes_of(const oac_diags *d)
{
    return diag_dump(d);
}

START_TEST(test_verdicts)
{
    const vrow *r = &vrows[_i];
    fx f;
    check_look_alike(&f, r->model, r->config, r->batch1);
    ck_assert_msg(oac_analysis_kv_count(f.a) > r->pair, "%s: %zu pairs", r->name,
                  oac_analysis_kv_count(f.a));
    const oac_kv_cache *k = oac_analysis_kv(f.a, r->pair);
    ck_assert_str_eq(k->past, r->past);
    ck_assert_msg(k->verdict == r->verdict && k->reason == r->reason,
                  "%s: %s/%s, expected %s/%s", r->name, oac_kv_verdict_name(k->verdict),
                  oac_refusal_name((oac_refusal)k->reason), oac_kv_verdict_name(r->verdict),
                  oac_refusal_name((oac_refusal)r->reason));
    if (r->node)
        ck_assert_str_eq(k->node ? k->node : "(null)", r->node);
    else
        ck_assert_ptr_null(k->node);
    ck_assert_uint_ne(k->found_by, 0);
    if (r->bytes >= 0) {
        ck_assert_msg(k->bytes_per_token.known, "%s: bytes unknown (%s)", r->name,
                      k->bytes_formula ? k->bytes_formula : "");
        ck_assert_uint_eq(k->bytes_per_token.value, (uint64_t)r->bytes);
    } else {
        ck_assert(!k->bytes_per_token.known);
        if (r->formula)
            ck_assert_str_eq(k->bytes_formula ? k->bytes_formula : "(null)", r->formula);
    }
    if (r->diag != NONE) {
        const oac_diag *x = diag_expect(f.d, (oac_code)r->diag, r->node, k->present, NULL);
        if (r->diag == OAC_CACHE_COPIED) {
            /* The message names past, reason, the bytes and what to change. */
            ck_assert_ptr_nonnull(strstr(x->message, r->past));
            ck_assert_ptr_nonnull(strstr(x->message, oac_refusal_name((oac_refusal)r->reason)));
            ck_assert_ptr_nonnull(strstr(x->message, " bytes "));
            ck_assert(strstr(x->message, "; export") || strstr(x->message, "write") ||
                      strstr(x->message, "use "));
        }
    } else {
        ck_assert_msg(!diag_find(f.d, OAC_CACHE_COPIED, NULL, k->present, NULL) &&
                      !diag_find(f.d, OAC_ALIAS_IMPLIED, NULL, k->present, NULL),
                      "%s: a finding on %s:%s", r->name, k->present, codes_of(f.d));
    }
    if (r->config_diag != NONE) {
        const oac_diag *x = diag_expect(f.d, (oac_code)r->config_diag, NULL, NULL, NULL);
        /* The message names the key. */
        ck_assert(strstr(x->message, "search.") || strstr(x->message, "model.decoder."));
    } else {
        ck_assert_msg(!diag_find(f.d, OAC_CONFIG_MISMATCH, NULL, NULL, NULL) &&
                      !diag_find(f.d, OAC_CONFIG_NO_SHARING, NULL, NULL, NULL),
                      "%s: a configuration finding:%s", r->name, codes_of(f.d));
    }
    fx_end(&f);
}
END_TEST

/* No pair: kv_caches is empty, the text report has no KV caches line. */
START_TEST(test_no_pairs)
{
    fx f;
    check_look_alike(&f, "no_cache", NULL, false);
    ck_assert_uint_eq(oac_analysis_kv_count(f.a), 0);
    oac_report_input in = { .path = "m.onnx", .model = f.m, .diags = f.d, .analysis = f.a };
    char *t = oac_report_text(f.ctx, &in);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_null(strstr(t, "KV caches"));
    oac_free(t);
    fx_end(&f);
}
END_TEST

/* The KV caches line counts every verdict. */
START_TEST(test_text_line)
{
    fx f;
    check_look_alike(&f, "identity_state", NULL, false);
    oac_report_input in = { .path = "m.onnx", .model = f.m, .diags = f.d, .analysis = f.a };
    char *t = oac_report_text(f.ctx, &in);
    ck_assert_ptr_nonnull(strstr(t, "\nKV caches: 0 in place, 2 implied, 0 copied, 0 not a cache\n"));
    oac_free(t);
    fx_end(&f);
}
END_TEST

/* Two nodes named alike: each pair's verdict, finding and location are
 * those of the node its trace found (the Concat is node 0, the Identity
 * node 1), not of the first node of that name. */
START_TEST(test_same_node_names)
{
    fx f;
    check_look_alike(&f, "same_node_names", NULL, false);
    ck_assert_uint_eq(oac_analysis_kv_count(f.a), 2);
    const oac_kv_cache *grown = oac_analysis_kv(f.a, 0), *state = oac_analysis_kv(f.a, 1);
    ck_assert_str_eq(grown->past, "past_key_values.0.key");
    ck_assert_int_eq(grown->verdict, OAC_KV_COPIED);
    ck_assert_str_eq(grown->op_type, "Concat");
    ck_assert_str_eq(state->past, "past_conv.0");
    ck_assert_int_eq(state->verdict, OAC_KV_IMPLIED);
    ck_assert_str_eq(state->op_type, "Identity");
    ck_assert_str_eq(state->node, "layer");
    /* 64 x 3 FLOAT: the Identity's own present. */
    ck_assert(state->bytes_per_token.known);
    ck_assert_uint_eq(state->bytes_per_token.value, 768);
    diag_expect(f.d, OAC_CACHE_COPIED, "layer", "present.0.key", "/graph/node/0");
    diag_expect(f.d, OAC_ALIAS_IMPLIED, "layer", "present_conv.0", "/graph/node/1");
    fx_end(&f);
}
END_TEST

/* Found by: structure alone (the TensorScatter look-alike without its
 * config), structure and names (GQA), config where only it pairs. */
START_TEST(test_found_by)
{
    fx f;
    check_look_alike(&f, "scatter", NULL, false);
    ck_assert_uint_eq(oac_analysis_kv_count(f.a), 4);
    ck_assert_uint_eq(oac_analysis_kv(f.a, 0)->found_by, OAC_KV_BY_STRUCTURE);
    fx_end(&f);
    check_look_alike(&f, "gqa_names", NULL, false);
    ck_assert_uint_eq(oac_analysis_kv_count(f.a), 4);
    ck_assert_uint_eq(oac_analysis_kv(f.a, 0)->found_by, OAC_KV_BY_STRUCTURE | OAC_KV_BY_NAMES);
    fx_end(&f);
    /* The Concat look-alike paired only by a config whose names the
     * patterns do not know: a config adds the pair. */
    check_look_alike(&f, "pad", KV_CONFIG("past_%d", "present_%d", NO_SHARE), false);
    ck_assert_uint_eq(oac_analysis_kv_count(f.a), 1);
    ck_assert_uint_eq(oac_analysis_kv(f.a, 0)->found_by, OAC_KV_BY_CONFIG | OAC_KV_BY_NAMES);
    fx_end(&f);
}
END_TEST

/* A config's other present for a past the names pair: the names' pair
 * stands (found by names alone), and config-mismatch names the past, the
 * config's present and the model's; the same for a present the model
 * lacks. */
START_TEST(test_config_present)
{
    static const struct {
        const char *config, *named, *says;
    } rows[] = {
        { KV_CONFIG("past_key_values.%d.key", "present.%d.value", NO_SHARE), "present.0.value",
          "the model pairs" },
        { KV_CONFIG("past_key_values.%d.key", "present_missing.%d.key", NO_SHARE),
          "present_missing.0.key", "no such output" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        fx f;
        check_look_alike(&f, "concat", rows[i].config, true);
        const oac_kv_cache *k = oac_analysis_kv(f.a, 0);
        ck_assert_str_eq(k->past, "past_key_values.0.key");
        ck_assert_str_eq(k->present, "present.0.key");
        ck_assert_uint_eq(k->found_by, OAC_KV_BY_NAMES);
        ck_assert_uint_eq(diag_count(f.d, OAC_CONFIG_MISMATCH), 2); /* a key a layer */
        const oac_diag *x = diag_expect(f.d, OAC_CONFIG_MISMATCH, NULL, "present.0.key", NULL);
        ck_assert_ptr_nonnull(strstr(x->message, "'past_key_values.0.key'"));
        ck_assert_ptr_nonnull(strstr(x->message, rows[i].named));
        ck_assert_ptr_nonnull(strstr(x->message, "'present.0.key'"));
        ck_assert_ptr_nonnull(strstr(x->message, "model.decoder.outputs.present_key_names"));
        ck_assert_ptr_nonnull(strstr(x->message, rows[i].says));
        ck_assert_uint_eq(diag_count(f.d, OAC_CACHE_COPIED), 4);
        fx_end(&f);
    }
}
END_TEST

/* Every example's kv_caches, as its structure says: a pair is a past
 * reaching its present through one cache operator (chained updates, If,
 * Loop and function calls are not), or a pair by names. */
static const struct erow {
    const char *example, *kv;
} erows[] = {
    { "chained_updates", "" },
    { "dense_cache", "cache:in-place" },
    { "dense_cache_broken", "cache:in-place" },
    { "dense_cache_implied", "cache:implied" },
    { "function_cache", "" },
    { "if_branches", "" },
    { "loop_cache", "" },
    { "metadata_alias", "cache:implied" },
    { "paged_cache", "cache:in-place" },
    { "stock_no_annotations", "" },
    { "tensor_scatter", "past_cache:in-place" },
    { "toy_decoder", "key_cache_0:in-place value_cache_0:in-place key_cache_1:in-place "
                     "value_cache_1:in-place" },
    { "toy_decoder_concat", "past_key_0:copied past_value_0:copied past_key_1:copied "
                            "past_value_1:copied" },
};

START_TEST(test_examples)
{
    const struct erow *r = &erows[_i];
    fx f;
    fx_example(&f, r->example);
    ck_assert_int_eq(fx_check(&f, NULL), OAC_OK);
    char got[512] = "";
    size_t at = 0, copied = 0;
    for (size_t i = 0; i < oac_analysis_kv_count(f.a) && at < sizeof got; i++) {
        const oac_kv_cache *k = oac_analysis_kv(f.a, i);
        copied += k->verdict == OAC_KV_COPIED;
        at += (size_t)snprintf(got + at, sizeof got - at, "%s%s:%s", i ? " " : "", k->past,
                               oac_kv_verdict_name(k->verdict));
    }
    ck_assert_str_eq(got, r->kv);
    /* One cache-copied per copied pair, none elsewhere. */
    ck_assert_uint_eq(diag_count(f.d, OAC_CACHE_COPIED), copied);
    fx_end(&f);
}
END_TEST

/* ---- annotate: union, Identity, both reasons, idempotent -------------- */

/* Annotate look-alike `model` (config JSON or NULL) in memory; the bytes
 * in *out (oac_free) and the annotation. */
static oac_annotation *annotate_look_alike(fx *f, const char *model, const char *config,
                                           uint8_t **out, size_t *len)
{
    const genai_model *m = genai_model_find(model);
    ck_assert_msg(m != NULL, "no look-alike %s", model);
    /* The caller began the fixture (fx_begin): only the builder here. */
    f->mb = oac_mb_new(f->ctx);
    ck_assert_ptr_nonnull(f->mb);
    f->g = oac_mb_graph(f->mb);
    m->build(f->mb);
    fx_load(f);
    scratch s;
    oac_annotate_opts o = { .config = config_file(&s, config) };
    oac_annotation *a = NULL;
    ck_assert_int_eq(oac_annotate(f->ctx, &a, f->m, &o, f->d), OAC_OK);
    *out = NULL;
    *len = 0;
    if (oac_annotation_count(a, OAC_VERDICT_REFUSED) == 0 && oac_annotation_pair_count(a))
        ck_assert_int_eq(oac_annotation_write_buffer(f->ctx, a, f->m, out, len, f->d), OAC_OK);
    scratch_end(&s);
    return a;
}

/* The bytes checked: every pair in place, no finding but notes. */
static void expect_in_place(const uint8_t *buf, size_t len, size_t pairs)
{
    fx g;
    fx_begin(&g);
    ck_assert_int_eq(oac_model_load_buffer(g.ctx, &g.m, buf, len, "a.onnx", NULL, g.d), OAC_OK);
    ck_assert_int_eq(fx_check(&g, NULL), OAC_OK);
    diag_expect_clean(g.d);
    ck_assert_uint_eq(oac_analysis_kv_count(g.a), pairs);
    for (size_t i = 0; i < pairs; i++)
        ck_assert_str_eq(oac_kv_verdict_name(oac_analysis_kv(g.a, i)->verdict), "in-place");
    fx_end(&g);
}

static const struct arow {
    const char *model, *config;
    size_t pairs;
} arows[] = {
    { "gqa_names", NULL, 4 },
    /* The config names only K: V is still found. */
    { "gqa_names", GQA_KV(SHARE), 4 },
    { "identity_state", NULL, 2 },
    { "scatter", NULL, 4 },
};

START_TEST(test_annotate_in_place)
{
    const struct arow *r = &arows[_i];
    fx f;
    fx_begin(&f);
    uint8_t *buf;
    size_t len;
    oac_annotation *a = annotate_look_alike(&f, r->model, r->config, &buf, &len);
    ck_assert_uint_eq(oac_annotation_pair_count(a), r->pairs);
    ck_assert_uint_eq(oac_annotation_count(a, OAC_VERDICT_ANNOTATED), r->pairs);
    ck_assert_ptr_nonnull(buf);
    expect_in_place(buf, len, r->pairs);
    /* Idempotent: annotating the output keeps every pair, same bytes. */
    fx g;
    fx_begin(&g);
    ck_assert_int_eq(oac_model_load_buffer(g.ctx, &g.m, buf, len, "a.onnx", NULL, g.d), OAC_OK);
    oac_annotation *b = NULL;
    ck_assert_int_eq(oac_annotate(g.ctx, &b, g.m, NULL, g.d), OAC_OK);
    ck_assert_uint_eq(oac_annotation_count(b, OAC_VERDICT_KEPT), r->pairs);
    uint8_t *buf2;
    size_t len2;
    ck_assert_int_eq(oac_annotation_write_buffer(g.ctx, b, g.m, &buf2, &len2, g.d), OAC_OK);
    ck_assert_uint_eq(len, len2);
    ck_assert_int_eq(memcmp(buf, buf2, len), 0);
    oac_free(buf2);
    oac_annotation_free(b);
    fx_end(&g);
    oac_free(buf);
    oac_annotation_free(a);
    fx_end(&f);
}
END_TEST

/* The Identity state gets output_alias {0, 0} on the Identity and
 * alias_of on the present, and no capacity (its dims stay). */
START_TEST(test_annotate_identity)
{
    fx f;
    fx_begin(&f);
    uint8_t *buf;
    size_t len;
    oac_annotation *a = annotate_look_alike(&f, "identity_state", NULL, &buf, &len);
    const oac_annotate_pair *p = oac_annotation_pair(a, 1);
    ck_assert_str_eq(p->past, "past_conv.0");
    ck_assert_str_eq(p->node, "conv_pass");
    ck_assert_int_eq(p->input_port, 0);
    ck_assert_int_eq(p->output_port, 0);
    const Onnx__GraphProto *g = f.m->proto->graph;
    const Onnx__NodeProto *id = NULL;
    for (size_t i = 0; i < g->n_node; i++)
        if (!strcmp(g->node[i]->name, "conv_pass"))
            id = g->node[i];
    ck_assert_ptr_nonnull(id);
    ck_assert_uint_eq(id->n_output_alias, 1);
    ck_assert_int_eq(id->output_alias[0]->output_index, 0);
    ck_assert_int_eq(id->output_alias[0]->input_index, 0);
    for (size_t i = 0; i < g->n_output; i++)
        if (!strcmp(g->output[i]->name, "present_conv.0")) {
            ck_assert_str_eq(g->output[i]->alias_of, "past_conv.0");
            ck_assert_int_eq(g->output[i]->type->tensor_type->shape->dim[2]->dim_value, 3);
        }
    oac_free(buf);
    oac_annotation_free(a);
    fx_end(&f);
}
END_TEST

/* A copied pair under a config that also turns sharing off: both reasons. */
START_TEST(test_annotate_both_reasons)
{
    fx f;
    fx_begin(&f);
    uint8_t *buf;
    size_t len;
    oac_annotation *a = annotate_look_alike(&f, "concat", GQA_KV(NO_SHARE), &buf, &len);
    ck_assert_ptr_null(buf);
    const oac_annotate_pair *p = oac_annotation_pair(a, 0);
    ck_assert_int_eq(p->verdict, OAC_VERDICT_REFUSED);
    ck_assert_int_eq(p->reason, OAC_REFUSAL_GROWING_CACHE);
    ck_assert_int_eq(p->config_reason, OAC_REFUSAL_CONFIG_DISABLED);
    ck_assert_ptr_nonnull(strstr(p->message, "past_present_share_buffer"));
    ck_assert_ptr_nonnull(strstr(p->message, "Concat"));
    /* The trace holds but the config turns sharing off: config_reason alone. */
    oac_annotation_free(a);
    fx_end(&f);
    fx_begin(&f);
    a = annotate_look_alike(&f, "gqa_names", GQA_KV(SHARE ", \"num_beams\": 2"), &buf, &len);
    p = oac_annotation_pair(a, 0);
    ck_assert_int_eq(p->verdict, OAC_VERDICT_REFUSED);
    ck_assert_int_eq(p->reason, OAC_REFUSAL_NONE);
    ck_assert_int_eq(p->config_reason, OAC_REFUSAL_BEAM_SEARCH);
    oac_annotation_free(a);
    fx_end(&f);
}
END_TEST

/* The capacity from the config: search.max_length. */
START_TEST(test_annotate_capacity)
{
    fx f;
    fx_begin(&f);
    uint8_t *buf;
    size_t len;
    oac_annotation *a = annotate_look_alike(&f, "gqa_names", GQA_KV(SHARE ", \"max_length\": 96"),
                                            &buf, &len);
    ck_assert_ptr_nonnull(buf);
    fx g;
    fx_begin(&g);
    ck_assert_int_eq(oac_model_load_buffer(g.ctx, &g.m, buf, len, "a.onnx", NULL, g.d), OAC_OK);
    ck_assert_int_eq(fx_check(&g, NULL), OAC_OK);
    ck_assert_int_eq(oac_analysis_kv(g.a, 0)->capacity, 96);
    fx_end(&g);
    oac_free(buf);
    oac_annotation_free(a);
    fx_end(&f);
}
END_TEST

/* ---- alias-implied at each node of an implied pair's path ---------------- */

#define KV_PAST "past_key_values.0.key"
#define KV_PRESENT "present.0.key"

/* KV_PAST (READ_WRITE, CU_CACHE) to KV_PRESENT through the nodes of
 * `path`, from past to present, separated by spaces: "ID" an Identity,
 * "TS" a TensorScatter of "values" (CU_UPD, written at 0), "ID+" and
 * "TS+" the same declaring output_alias {0, 0, MUST_ALIAS}.  Node k is
 * named "<op>_<k>" (ID_0, TS_1, ...) and writes "x<k>", the last one the
 * present; the present's alias_of is `of` (NULL: none). */
static void kv_path(oac_mb *mb, const char *path, const char *of)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, KV_PAST, 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, CU_UPD);
    char from[32], to[32], name[16], in[64];
    snprintf(from, sizeof from, "%s", KV_PAST);
    int k = 0;
    for (const char *p = path; *p; k++) {
        bool ts = !strncmp(p, "TS", 2), declared = p[2] == '+';
        p += 2 + declared;
        p += *p == ' ';
        snprintf(name, sizeof name, "%s_%d", ts ? "TS" : "ID", k);
        if (*p)
            snprintf(to, sizeof to, "x%d", k);
        else
            snprintf(to, sizeof to, "%s", KV_PRESENT);
        snprintf(in, sizeof in, ts ? "%s,values" : "%s", from);
        Onnx__NodeProto *n = oac_gb_node(g, ts ? "TensorScatter" : "Identity", NULL, name,
                                         in, to);
        if (declared)
            oac_node_alias(g, n, 0, 0, 1);
        snprintf(from, sizeof from, "%s", to);
    }
    Onnx__ValueInfoProto *o = oac_gb_output(g, KV_PRESENT, OAC_T_FLOAT, CU_CACHE);
    if (of)
        oac_vi_alias_of(g, o, of);
}

/* Implied pairs whose cache operator is declared: an annotated
 * TensorScatter, then an Identity without output_alias; the Identity
 * first (without alias_of, and with the alias_of alias-mismatch asks
 * for, its root x0); two Identity links, only the first declared.  The
 * finding is at the Identity that lacks output_alias. */
static void ts_then_id(oac_mb *mb) { kv_path(mb, "TS+ ID", NULL); }
static void id_then_ts(oac_mb *mb) { kv_path(mb, "ID TS+", NULL); }
static void id_then_ts_root(oac_mb *mb) { kv_path(mb, "ID TS+", "x0"); }
static void id_declared_then_id(oac_mb *mb) { kv_path(mb, "ID+ ID", NULL); }
/* Their near misses: every node declared, alias_of the past. */
static void ts_then_id_declared(oac_mb *mb) { kv_path(mb, "TS+ ID+", KV_PAST); }
static void id_then_ts_declared(oac_mb *mb) { kv_path(mb, "ID+ TS+", KV_PAST); }
static void id_id_declared(oac_mb *mb) { kv_path(mb, "ID+ ID+", KV_PAST); }

static const model_case link_cases[] = {
    { "ts_then_identity", ts_then_id, WANT(OAC_ALIAS_IMPLIED), "ID_1", KV_PRESENT,
      "/graph/node/1" },
    { "ts_then_identity_declared", ts_then_id_declared, NEAR(OAC_ALIAS_IMPLIED) },
    { "identity_then_ts", id_then_ts, WANT(OAC_ALIAS_IMPLIED), "ID_0", "x0",
      "/graph/node/0" },
    { "identity_then_ts_root", id_then_ts_root, WANT(OAC_ALIAS_IMPLIED), "ID_0", "x0",
      "/graph/node/0" },
    { "identity_then_ts_declared", id_then_ts_declared, NEAR(OAC_ALIAS_IMPLIED) },
    { "identity_declared_then_identity", id_declared_then_id, WANT(OAC_ALIAS_IMPLIED),
      "ID_1", KV_PRESENT, "/graph/node/1" },
    { "identity_chain_declared", id_id_declared, NEAR(OAC_ALIAS_IMPLIED) },
};
CASES_TEST(link_cases)

/* alias_of the past on the present of past -> Identity (undeclared) ->
 * TensorScatter (declared): alias-mismatch, and its message says where
 * the chain stops and what to declare, not to name that inner root
 * (which silenced the finding without sharing the cache). */
static void id_then_ts_past(oac_mb *mb) { kv_path(mb, "ID TS+", KV_PAST); }
START_TEST(test_mismatch_names_where_the_chain_stops)
{
    fx f;
    fx_check_model(&f, id_then_ts_past);
    long i = oac_diags_find(f.d, OAC_ALIAS_MISMATCH);
    ck_assert_int_ge(i, 0);
    const char *m = oac_diags_get(f.d, (size_t)i)->message;
    ck_assert_ptr_nonnull(strstr(m, "stops at 'x0', output 0 of node ID_0"));
    ck_assert_ptr_nonnull(strstr(m, "declare output_alias on ID_0"));
    ck_assert_ptr_null(strstr(m, "must name the alias root"));
    fx_end(&f);
}
END_TEST

/* Each node of an implied pair's path that lacks its declaration has its
 * own alias-implied, and a declared one none: the Identity links here,
 * the TensorScatter the checker's own.  The message names the node, what
 * to add and the alias_of the present then takes. */
START_TEST(test_implied_each_link)
{
    static const struct {
        const char *path;
        const char *flagged[3];  /* the nodes with alias-implied */
    } rows[] = {
        { "ID ID+ ID", { "ID_0", "ID_2" } },
        { "ID TS ID", { "ID_0", "TS_1", "ID_2" } },
        { "ID+ TS ID", { "TS_1", "ID_2" } },
        { "TS+ ID ID+", { "ID_1" } },
        { "ID", { "ID_0" } },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        fx f;
        oac_mb *mb;
        fx_build(&f, &mb);
        kv_path(mb, rows[i].path, NULL);
        ck_assert_int_eq(fx_check(&f, NULL), OAC_OK);
        ck_assert_uint_eq(oac_analysis_kv_count(f.a), 1);
        ck_assert_int_eq(oac_analysis_kv(f.a, 0)->verdict, OAC_KV_IMPLIED);
        size_t n = 0;
        for (; n < 3 && rows[i].flagged[n]; n++) {
            const char *node = rows[i].flagged[n];
            const oac_diag *x = diag_expect(f.d, OAC_ALIAS_IMPLIED, node, NULL, NULL);
            if (strncmp(node, "ID_", 3))
                continue;
            ck_assert_ptr_nonnull(strstr(x->message, "Identity node '"));
            ck_assert_ptr_nonnull(strstr(x->message, node));
            ck_assert_ptr_nonnull(strstr(x->message, "output_alias {output 0, input 0, "
                                                     "MUST_ALIAS}"));
            ck_assert_ptr_nonnull(strstr(x->message, "alias_of '" KV_PAST "'"));
        }
        ck_assert_msg(diag_count(f.d, OAC_ALIAS_IMPLIED) == n, "%s: %zu alias-implied "
                      "expected:%s", rows[i].path, n, diag_dump(f.d));
        fx_end(&f);
    }
}
END_TEST

/* ---- case tables ----------------------------------------------------------- */

#define TOY_CONFIG(search)                                                       \
    "{\"model\": {\"decoder\": {\"inputs\": {\"input_ids\": \"input_ids\", "           \
    "\"past_key_names\": \"key_cache_%d\", \"past_value_names\": \"value_cache_%d\"}, " \
    "\"outputs\": {\"present_key_names\": \"key_cache_%d_updated\", "         \
    "\"present_value_names\": \"value_cache_%d_updated\"}}}, \"search\": {" search "}}\n"

static void toy_with(fx *f, const char *config)
{
    fx_example(f, "toy_decoder");
    scratch s;
    oac_check_opts o = { .config = config_file(&s, config) };
    ck_assert_int_eq(fx_check(f, &o), OAC_OK);
    scratch_end(&s);
}

static void sc_concat(fx *f) { check_look_alike(f, "concat", NULL, false); }
static void sc_toy(fx *f) { toy_with(f, NULL); }
static void sc_concat_share(fx *f) { check_look_alike(f, "concat", GQA_KV(SHARE), false); }
static void sc_toy_share(fx *f) { toy_with(f, TOY_CONFIG(SHARE)); }
static void sc_toy_noshare(fx *f) { toy_with(f, TOY_CONFIG(NO_SHARE)); }
static void sc_toy_max(fx *f) { toy_with(f, TOY_CONFIG(SHARE ", \"max_length\": 17")); }
static void sc_toy_max_ok(fx *f) { toy_with(f, TOY_CONFIG(SHARE ", \"max_length\": 16")); }
/* The toy decoder's presents as a config names them: another output
 * (the value's) or one it lacks for the keys; exactly its own. */
#define TOY_PRESENTS(key)                                                          \
    "{\"model\": {\"decoder\": {\"inputs\": {\"past_key_names\": \"key_cache_%d\"}, " \
    "\"outputs\": {\"present_key_names\": \"" key "\"}}}, \"search\": {" SHARE "}}\n"
static void sc_toy_present_other(fx *f) { toy_with(f, TOY_PRESENTS("value_cache_%d_updated")); }
static void sc_toy_present_absent(fx *f) { toy_with(f, TOY_PRESENTS("key_cache_%d_new")); }
static void sc_toy_presents_exact(fx *f) { toy_with(f, TOY_PRESENTS("key_cache_%d_updated")); }
static void sc_toy_no_input_ids(fx *f)
{
    toy_with(f, "{\"model\": {\"decoder\": {\"inputs\": {\"input_ids\": \"tokens\"}}}, "
                "\"search\": {" SHARE "}}");
}

static void annotate_scene(fx *f, const char *model)
{
    uint8_t *buf;
    size_t len;
    fx_begin(f);
    oac_annotation_free(annotate_look_alike(f, model, NULL, &buf, &len));
    oac_free(buf);
}
static void sc_annotate_no_cache(fx *f) { annotate_scene(f, "no_cache"); }
static void sc_annotate_gqa(fx *f) { annotate_scene(f, "gqa_names"); }

/* The same trial's messages: CacheUpdate's output 0 declared to alias
 * its position input (2) is alias-unsupported, reported alone (no advice
 * to make the position writable, no alias-implied beside it); declared
 * on its cache (0) it is clean. */
static void cu_port(fx *f, int in)
{
    oac_gb *g = fx_build(f, NULL);
    cu_cache_input(g, "cache", 1);
    cu_update_inputs(g);
    Onnx__NodeProto *n = cu_node(g, "update", "cache,values,pos", "out", false);
    oac_node_alias(g, n, 0, in, 1);
    cu_output_alias(g, "out", "cache");
    ck_assert_int_eq(fx_check(f, NULL), OAC_OK);
}
static void sc_cu_position(fx *f)
{
    cu_port(f, 2);
    ck_assert_uint_eq(oac_diags_count(f->d), 1);
    const oac_diag *x = diag_find(f->d, OAC_ALIAS_UNSUPPORTED, "update", NULL, NULL);
    ck_assert_ptr_nonnull(x);
    ck_assert_ptr_nonnull(strstr(x->message, "CacheUpdate's only pair is 0->0"));
    ck_assert_ptr_null(strstr(x->message, "READ_WRITE"));
}
static void sc_cu_cache(fx *f) { cu_port(f, 0); }

static const scene_case cases[] = {
    { "cache_update_position_port", sc_cu_position, WANT(OAC_ALIAS_UNSUPPORTED), "update",
      "out", "/graph/node/0/output_alias/0" },
    { "cache_update_cache_port", sc_cu_cache, NEAR(OAC_ALIAS_UNSUPPORTED) },
    { "concat_copied", sc_concat, WANT(OAC_CACHE_COPIED), "concat_0_key", "present.0.key",
      NULL },
    { "toy_in_place", sc_toy, NEAR(OAC_CACHE_COPIED) },
    { "concat_share_on", sc_concat_share, WANT(OAC_CONFIG_MISMATCH), "concat_0_key",
      "present.0.key", "/graph/node/0" },
    { "toy_max_length_17", sc_toy_max, WANT(OAC_CONFIG_MISMATCH), "l0_key_update",
      "key_cache_0_updated", NULL },
    { "toy_input_ids_absent", sc_toy_no_input_ids, WANT(OAC_CONFIG_MISMATCH), NULL, NULL,
      "/graph/input" },
    { "toy_share_on", sc_toy_share, NEAR(OAC_CONFIG_MISMATCH) },
    { "toy_present_other", sc_toy_present_other, WANT(OAC_CONFIG_MISMATCH), NULL,
      "key_cache_0_updated", "/graph/output/1" },
    { "toy_present_absent", sc_toy_present_absent, WANT(OAC_CONFIG_MISMATCH), NULL,
      "key_cache_0_updated", "/graph/output/1" },
    { "toy_presents_exact", sc_toy_presents_exact, NEAR(OAC_CONFIG_MISMATCH) },
    { "toy_max_length_16", sc_toy_max_ok, NEAR(OAC_CONFIG_MISMATCH) },
    { "toy_share_off", sc_toy_noshare, WANT(OAC_CONFIG_NO_SHARING), NULL, "key_cache_0",
      NULL },
    { "toy_share_on", sc_toy_share, NEAR(OAC_CONFIG_NO_SHARING) },
    { "annotate_no_cache", sc_annotate_no_cache, WANT(OAC_NO_CACHE_PAIRS), NULL, NULL,
      "/graph/output" },
    { "annotate_gqa", sc_annotate_gqa, NEAR(OAC_NO_CACHE_PAIRS) },
};
CASES_TEST(cases)

/* no-cache-pairs: nothing is handed over, the message says what was
 * looked for. */
START_TEST(test_no_cache_pairs)
{
    fx f;
    fx_begin(&f);
    uint8_t *buf = NULL;
    size_t len = 0;
    oac_annotation *a = annotate_look_alike(&f, "no_cache", NULL, &buf, &len);
    ck_assert_uint_eq(oac_annotation_pair_count(a), 0);
    ck_assert_int_eq(oac_annotation_write_buffer(f.ctx, a, f.m, &buf, &len, f.d), OAC_OK);
    ck_assert_ptr_null(buf);
    ck_assert_ptr_null(oac_annotation_output(a));
    const oac_diag *x = diag_expect(f.d, OAC_NO_CACHE_PAIRS, NULL, NULL, "/graph/output");
    ck_assert_ptr_nonnull(strstr(x->message, "GroupQueryAttention"));
    ck_assert_ptr_nonnull(strstr(x->message, "past_key_values.N.key"));
    oac_annotation_free(a);
    fx_end(&f);
}
END_TEST

/* Where a run's value came from: a dimension its loop binds is said to
 * be the loop's, not a --dim nobody gave. */
START_TEST(test_run_dim_origin)
{
    static const oac_dim_binding dims[2] = { { "width", 4 }, { "batch", 1 } };
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    oac_gb_input(g, "x", OAC_T_FLOAT, "batch,width");
    oac_gb_node(g, "Relu", NULL, "relu", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2,width");
    /* width is the caller's --dim, batch the run's loop's. */
    oac_check_opts o = { .dims = dims, .n_dims = 2, .n_run_dims = 1 };
    ck_assert_int_eq(fx_check(&f, &o), OAC_OK);
    const oac_diag *x = diag_find(f.d, OAC_SHAPE_MISMATCH, NULL, NULL, NULL);
    ck_assert_msg(x != NULL, "no shape-mismatch:%s", diag_dump(f.d));
    ck_assert_ptr_nonnull(strstr(x->message, "batch=1 (bound by the run's generation loop"));
    ck_assert_ptr_null(strstr(x->message, "--dim batch"));
    fx_end(&f);
}
END_TEST

/* A rank-1 input_ids ([batch], an encoder-decoder's per-beam token) is
 * one token per row: --dim batch=2 binds its rows, a prompt of 3 tokens
 * cannot be fed. */
START_TEST(test_rank1_input_ids)
{
    static const oac_dim_binding batch2[1] = { { "batch", 2 } };
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    oac_gb_input(g, "input_ids", OAC_T_INT64, "batch");
    oac_gb_node(g, "Identity", NULL, "id", "input_ids", "y");
    oac_gb_output(g, "y", OAC_T_INT64, "batch");
    fx_load(&f);
    oac_dim_binding *out = NULL;
    size_t n = 0;
    oac_run_opts ro = { .steps = 2, .dims = batch2, .n_dims = 1 };
    ck_assert_int_eq(oac_run_dims(f.ctx, &out, &n, f.m, &ro, f.d), OAC_OK);
    bool found = false;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(out[i].name, "batch")) {
            ck_assert_int_eq(out[i].value, 2);
            found = true;
        }
    ck_assert(found);
    oac_free(out);
    oac_run_opts rp = { .steps = 2, .prompt_length = 3 };
    ck_assert_int_eq(oac_run_dims(f.ctx, &out, &n, f.m, &rp, f.d), OAC_EINVAL);
    ck_assert_ptr_nonnull(strstr(oac_errmsg(f.ctx), "rank 1, one token per row"));
    fx_end(&f);
}
END_TEST

/* Node names are quoted in run's messages as in check's. */
START_TEST(test_run_quotes_nodes)
{
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    oac_gb_input(g, "x", OAC_T_FLOAT, "1,4");
    oac_gb_node(g, "Mystery", "example.com", "mystery", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,4");
    oac_run_opts ro = { .steps = 1 };
    (void)fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL);
    const oac_diag *x = diag_find(f.d, OAC_UNSUPPORTED_OPERATOR, NULL, NULL, NULL);
    ck_assert_msg(x != NULL, "no unsupported-operator:%s", diag_dump(f.d));
    ck_assert_msg(strstr(x->message, "node 'mystery'") != NULL, "%s", x->message);
    fx_end(&f);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("pairs");
    TCase *tc = tcase_create("pairs");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_verdicts, 0, (int)(sizeof vrows / sizeof vrows[0]));
    tcase_add_test(tc, test_no_pairs);
    tcase_add_loop_test(tc, test_examples, 0, (int)(sizeof erows / sizeof erows[0]));
    tcase_add_test(tc, test_text_line);
    tcase_add_test(tc, test_found_by);
    tcase_add_test(tc, test_same_node_names);
    tcase_add_test(tc, test_config_present);
    tcase_add_loop_test(tc, test_annotate_in_place, 0, (int)(sizeof arows / sizeof arows[0]));
    tcase_add_test(tc, test_annotate_identity);
    tcase_add_test(tc, test_annotate_both_reasons);
    tcase_add_test(tc, test_annotate_capacity);
    tcase_add_test(tc, test_no_cache_pairs);
    tcase_add_test(tc, test_run_dim_origin);
    tcase_add_test(tc, test_rank1_input_ids);
    tcase_add_test(tc, test_run_quotes_nodes);
    ADD_CASES(tc, cases);
    ADD_CASES(tc, link_cases);
    tcase_add_test(tc, test_mismatch_names_where_the_chain_stops);
    tcase_add_test(tc, test_implied_each_link);
    suite_add_tcase(s, tc);
    return s;
}

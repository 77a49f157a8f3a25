/* check_annotate.c: `annotate` through the library (lib/annotate/annotate.c,
 * lib/annotate/genai_config.c; contract, section 7; issue 10, acceptance 2).
 *
 * Every look-alike of tests/genai_models.c is written to a temporary
 * folder with its config, loaded, annotated and written as the command
 * does; the rows below say what each pair must become.  A model whose
 * pairs are all annotated must then pass oac_check with no error and one
 * alias class per pair holding its past and present, and annotating the
 * written file again must keep every pair and write the same bytes.
 * Further tests: --partial, --capacity, --ignore-config, a conflicting
 * annotation, unknown fields, an annotated model that fails the check,
 * a file that cannot be written (output-write-failed), the config's own
 * errors (config-invalid, with its near misses), both report forms and
 * the failure of every allocation.
 */
#include <dirent.h>
#include <jansson.h>
#include <sys/stat.h>

#include "annotate/genai_config.h"
#include "genai_models.h"
#include "harness.h"

/* A scratch folder with the row written into it. */
typedef struct scratch {
    char dir[64];
    char in[128], out[160];
} scratch;

static void scratch_new(scratch *s, oac_ctx *ctx, const char *row)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/check_annotate_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(s->dir));
    const genai_model *m = genai_model_find(row);
    ck_assert_msg(m != NULL, "no look-alike %s", row);
    ck_assert_int_eq(genai_model_write(ctx, m, s->dir), OAC_OK);
    snprintf(s->in, sizeof s->in, "%s/%s.onnx", s->dir, row);
    snprintf(s->out, sizeof s->out, "%s/%s.annotated.onnx", s->dir, row);
}

/* Remove the folder and what the tests put in it. */
static void scratch_end(scratch *s)
{
    DIR *d = opendir(s->dir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", s->dir, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(s->dir);
}

/* Load path, annotate it with o and write out; the annotation (f->d has
 * the findings; f->m the model).  rc: what oac_annotate must return. */
static oac_annotation *annotate_file(fx *f, const char *path, const char *out,
                                     const oac_annotate_opts *o)
{
    oac_annotation *a = NULL;
    ck_assert_int_eq(oac_model_load(f->ctx, &f->m, path, f->d), OAC_OK);
    ck_assert_int_eq(oac_annotate(f->ctx, &a, f->m, o, f->d), OAC_OK);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(oac_annotation_write(f->ctx, a, f->m, out, f->d), OAC_OK);
    return a;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The whole file (malloc'ed, *len bytes). */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(fseek(fp, 0, SEEK_END), 0);
    long n = ftell(fp);
    ck_assert_int_ge(n, 0);
    rewind(fp);
    uint8_t *b = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *len = (size_t)n;
    return b;
}

/* The annotated file passes the check: no error, and for every pair an
 * alias class rooted at its past that has its present as a member. */
static void expect_checked(const char *path, const oac_annotation *a)
{
    fx g;
    fx_begin(&g);
    ck_assert_int_eq(oac_model_load(g.ctx, &g.m, path, g.d), OAC_OK);
    ck_assert_int_eq(fx_check(&g, NULL), OAC_OK);
    ck_assert_msg(oac_diags_count_severity(g.d, OAC_SEV_ERROR) == 0,
                  "%s: check errors:%s", path, diag_dump(g.d));
    ck_assert_uint_eq(oac_analysis_class_count(g.a), oac_annotation_pair_count(a));
    for (size_t i = 0; i < oac_annotation_pair_count(a); i++) {
        const oac_annotate_pair *p = oac_annotation_pair(a, i);
        bool found = false;
        for (size_t c = 0; c < oac_analysis_class_count(g.a) && !found; c++) {
            const oac_alias_class *k = oac_analysis_class(g.a, c);
            if (strcmp(k->root, p->past) != 0)
                continue;
            for (size_t m = 0; m < k->n_members; m++)
                found |= strcmp(k->members[m], p->present) == 0;
        }
        ck_assert_msg(found, "%s: no class %s -> %s", path, p->past, p->present);
    }
    fx_end(&g);
}

/* Annotating the annotated file again keeps every pair and writes the
 * same bytes. */
static void expect_idempotent(const char *out, const char *again)
{
    fx g;
    fx_begin(&g);
    oac_annotation *b = annotate_file(&g, out, again, NULL);
    ck_assert_uint_eq(oac_annotation_count(b, OAC_VERDICT_KEPT), oac_annotation_pair_count(b));
    ck_assert_str_eq(oac_annotation_output(b), again);
    size_t n1, n2;
    uint8_t *b1 = slurp(out, &n1), *b2 = slurp(again, &n2);
    ck_assert_uint_eq(n1, n2);
    ck_assert_int_eq(memcmp(b1, b2, n1), 0);
    free(b1);
    free(b2);
    oac_annotation_free(b);
    fx_end(&g);
}

/* ---- what each look-alike must give ------------------------------------ */

typedef struct row {
    const char *model;
    size_t pairs;
    oac_refusal reason;     /* every pair's; NONE: every pair annotated */
    const char *past;       /* the first pair's past and present */
    const char *present;
    const char *node;       /* its node, NULL: none found */
    int in, out;            /* its ports (-1: none) */
} row;

static const row rows[] = {
    /* GQA with genai_config.json, past_present_share_buffer true. */
    { "gqa", 4, OAC_REFUSAL_NONE, "past_key_values.0.key", "present.0.key", "GQA_0", 3, 1 },
    /* Without config: pairs by name (past_key_values.N.key -> present.N.key). */
    { "gqa_names", 4, OAC_REFUSAL_NONE, "past_key_values.0.key", "present.0.key",
      "GQA_0", 3, 1 },
    { "gqa_beams", 4, OAC_REFUSAL_BEAM_SEARCH, "past_key_values.0.key", "present.0.key",
      "GQA_0", 3, 1 },
    { "gqa_noshare", 4, OAC_REFUSAL_CONFIG_DISABLED, "past_key_values.0.key", "present.0.key",
      "GQA_0", 3, 1 },
    /* The config names only K: the V pairs are still found (by structure
     * and names; a config adds pairs, never hides one), and the four are
     * annotated together. */
    { "gqa_keys_only", 4, OAC_REFUSAL_NONE, "past_key_values.0.key",
      "present.0.key", "GQA_0", 3, 1 },
    { "mha_no_past_len", 4, OAC_REFUSAL_GROWING_CACHE, "past_key_values.0.key",
      "present.0.key", "MHA_0", 6, 1 },
    { "mha_past_len", 4, OAC_REFUSAL_NONE, "past_key_values.0.key", "present.0.key",
      "MHA_0", 6, 1 },
    { "gpt2", 2, OAC_REFUSAL_GROWING_CACHE, "past_0", "present_0", "GptAttention_0", 4, 1 },
    { "gpt2_share", 2, OAC_REFUSAL_NONE, "past_0", "present_0", "GptAttention_0", 4, 1 },
    { "concat", 4, OAC_REFUSAL_GROWING_CACHE, "past_key_values.0.key", "present.0.key",
      "concat_0_key", 0, 0 },
    { "constant_presents", 3, OAC_REFUSAL_CONSTANT_PRESENT, "past_key_values.0.key",
      "present.0.key", NULL, -1, -1 },
    /* Opset 24: the config names write_indices and nonpad_kv_seqlen. */
    { "scatter", 4, OAC_REFUSAL_NONE, "key_cache.0", "updated_key_cache.0",
      "scatter_0_key", 0, 0 },
    { "identity_chain", 1, OAC_REFUSAL_NONE, "past_0", "present_0", "update", 0, 0 },
    { "delta", 1, OAC_REFUSAL_DELTA_OUTPUT, "past_0", "present_0", "update", -1, -1 },
    { "not_derived", 1, OAC_REFUSAL_NOT_DERIVED, "past_0", "present_0", NULL, -1, -1 },
    { "reshape_chain", 1, OAC_REFUSAL_UNSUPPORTED_CHAIN, "past_0", "present_0", "flatten",
      -1, 0 },
    { "update_chain", 1, OAC_REFUSAL_UNSUPPORTED_CHAIN, "past_0", "present_0", "update2",
      0, 0 },
};

START_TEST(test_rows)
{
    const row *r = &rows[_i];
    fx f;
    scratch s;
    fx_begin(&f);
    scratch_new(&s, f.ctx, r->model);
    oac_annotation *a = annotate_file(&f, s.in, s.out, NULL);
    ck_assert_msg(oac_annotation_pair_count(a) == r->pairs, "%s: %zu pairs", r->model,
                  oac_annotation_pair_count(a));
    for (size_t i = 0; i < r->pairs; i++) {
        const oac_annotate_pair *p = oac_annotation_pair(a, i);
        /* A config refusal is the pair's config_reason, beside a trace
         * reason of none (the trace holds in these rows). */
        bool by_config = r->reason == OAC_REFUSAL_BEAM_SEARCH ||
                         r->reason == OAC_REFUSAL_CONFIG_DISABLED;
        oac_refusal trace = by_config ? OAC_REFUSAL_NONE : r->reason;
        ck_assert_msg(p->reason == trace && p->config_reason ==
                      (by_config ? r->reason : OAC_REFUSAL_NONE),
                      "%s: pair %s -> %s: %s (%s), expected %s",
                      r->model, p->past, p->present, oac_verdict_name(p->verdict),
                      p->message, r->reason ? oac_refusal_name(r->reason) : "annotated");
        ck_assert_int_eq(p->verdict, r->reason ? OAC_VERDICT_REFUSED : OAC_VERDICT_ANNOTATED);
        ck_assert_ptr_nonnull(p->message);
    }
    const oac_annotate_pair *p = oac_annotation_pair(a, 0);
    ck_assert_str_eq(p->past, r->past);
    ck_assert_str_eq(p->present, r->present);
    if (r->node)
        ck_assert_pstr_eq(p->node, r->node);
    else
        ck_assert_ptr_null(p->node);
    ck_assert_int_eq(p->input_port, r->in);
    ck_assert_int_eq(p->output_port, r->out);
    if (r->reason == OAC_REFUSAL_NONE) {
        ck_assert_msg(oac_annotation_output(a) != NULL, "%s: not written:%s", r->model,
                      diag_dump(f.d));
        ck_assert_uint_eq(oac_diags_count_severity(f.d, OAC_SEV_ERROR), 0);
        expect_checked(s.out, a);
        char again[192];
        snprintf(again, sizeof again, "%s/again.onnx", s.dir);
        expect_idempotent(s.out, again);
    } else {
        /* A refused pair writes nothing. */
        ck_assert_ptr_null(oac_annotation_output(a));
        ck_assert(!exists(s.out));
    }
    oac_annotation_free(a);
    fx_end(&f);
    scratch_end(&s);
}
END_TEST

/* Two cache operators in a row: the refusal says what the model can state
 * (output_alias on both, alias_of the past), not to move the first. */
START_TEST(test_update_chain_advice)
{
    fx f;
    scratch s;
    fx_begin(&f);
    scratch_new(&s, f.ctx, "update_chain");
    oac_annotation *a = annotate_file(&f, s.in, s.out, NULL);
    ck_assert_uint_eq(oac_annotation_pair_count(a), 1);
    const char *m = oac_annotation_pair(a, 0)->message;
    ck_assert_ptr_nonnull(strstr(m, "through node 'update1' (CacheUpdate), a second cache "
                                    "operator"));
    ck_assert_ptr_nonnull(strstr(m, "declare output_alias on both nodes and alias_of "
                                    "'past_0' on 'present_0'"));
    ck_assert_ptr_null(strstr(m, "move"));
    oac_annotation_free(a);
    fx_end(&f);
    scratch_end(&s);
}
END_TEST

/* ---- options -------------------------------------------------------------- */

/* One past is in place, the other grows: nothing written without
 * --partial; with it the first is written, checked, and the second
 * stays as it was. */
START_TEST(test_partial)
{
    fx f;
    scratch s;
    fx_begin(&f);
    scratch_new(&s, f.ctx, "mixed");
    oac_annotation *a = annotate_file(&f, s.in, s.out, NULL);
    ck_assert_uint_eq(oac_annotation_pair_count(a), 2);
    ck_assert_int_eq(oac_annotation_pair(a, 0)->verdict, OAC_VERDICT_ANNOTATED);
    ck_assert_int_eq(oac_annotation_pair(a, 1)->reason, OAC_REFUSAL_GROWING_CACHE);
    ck_assert_pstr_eq(oac_annotation_pair(a, 1)->node, "grow");
    ck_assert_ptr_null(oac_annotation_output(a));
    ck_assert(!exists(s.out));
    oac_annotation_free(a);
    fx_end(&f);

    fx_begin(&f);
    oac_annotate_opts o = { .partial = true };
    a = annotate_file(&f, s.in, s.out, &o);
    ck_assert_str_eq(oac_annotation_output(a), s.out);
    fx g;
    fx_begin(&g);
    ck_assert_int_eq(oac_model_load(g.ctx, &g.m, s.out, g.d), OAC_OK);
    ck_assert_int_eq(fx_check(&g, NULL), OAC_OK);
    ck_assert_uint_eq(oac_diags_count_severity(g.d, OAC_SEV_ERROR), 0);
    ck_assert_uint_eq(oac_analysis_class_count(g.a), 1);
    ck_assert_str_eq(oac_analysis_class(g.a, 0)->root, "past_0");
    const Onnx__GraphProto *gp = oac_model_proto(g.m)->graph;
    ck_assert(gp->input[0]->has_access);             /* past_0 */
    ck_assert(!gp->input[3]->has_access);            /* past_1 untouched */
    ck_assert_ptr_null(gp->output[1]->alias_of);
    fx_end(&g);
    oac_annotation_free(a);
    fx_end(&f);
    scratch_end(&s);
}
END_TEST

/* The dims of value `name` of the main graph, as "1,kv_capacity,?". */
static const char *declared(const oac_model *m, const char *name, char *buf, size_t len)
{
    const Onnx__GraphProto *g = oac_model_proto(m)->graph;
    const Onnx__ValueInfoProto *vi = NULL;
    for (size_t i = 0; i < g->n_input && !vi; i++)
        if (!strcmp(g->input[i]->name, name))
            vi = g->input[i];
    for (size_t i = 0; i < g->n_output && !vi; i++)
        if (!strcmp(g->output[i]->name, name))
            vi = g->output[i];
    ck_assert_ptr_nonnull(vi);
    const Onnx__TensorShapeProto *sh = vi->type->tensor_type->shape;
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sh->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? "," : "",
                                   (long long)d->dim_value);
        else
            at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," : "",
                                   d->value_case ? d->dim_param : "?");
    }
    return buf;
}

/* One symbol for past and present (on these two values only) without a
 * config, the config's context_length (128 in the gqa row's) with one,
 * or the static --capacity over both. */
START_TEST(test_capacity)
{
    static const struct { const char *model; int64_t capacity; const char *want; } cases[] = {
        { "gqa_names", 0, "batch,2,kv_capacity,16" },
        { "gqa", 0, "batch,2,128,16" },
        { "gqa", 64, "batch,2,64,16" },
    };
    char b[128];
    for (int pass = 0; pass < 3; pass++) {
        fx f;
        scratch s;
        fx_begin(&f);
        scratch_new(&s, f.ctx, cases[pass].model);
        oac_annotate_opts o = { .capacity = cases[pass].capacity };
        oac_annotation *a = annotate_file(&f, s.in, s.out, &o);
        ck_assert_ptr_nonnull(oac_annotation_output(a));
        fx g;
        fx_begin(&g);
        ck_assert_int_eq(oac_model_load(g.ctx, &g.m, s.out, g.d), OAC_OK);
        const char *want = cases[pass].want;
        ck_assert_str_eq(declared(g.m, "past_key_values.1.value", b, sizeof b), want);
        ck_assert_str_eq(declared(g.m, "present.1.value", b, sizeof b), want);
        ck_assert_str_eq(declared(g.m, "attention_mask", b, sizeof b), "batch,total_seq_len");
        fx_end(&g);
        oac_annotation_free(a);
        fx_end(&f);
        scratch_end(&s);
    }
}
END_TEST

/* --ignore-config: the config's names, not its sharing rules. */
START_TEST(test_ignore_config)
{
    fx f;
    scratch s;
    fx_begin(&f);
    scratch_new(&s, f.ctx, "gqa_noshare");
    oac_annotate_opts o = { .ignore_config = true };
    oac_annotation *a = annotate_file(&f, s.in, s.out, &o);
    ck_assert_uint_eq(oac_annotation_count(a, OAC_VERDICT_ANNOTATED), 4);
    ck_assert_ptr_nonnull(oac_annotation_config(a));
    expect_checked(s.out, a);
    oac_annotation_free(a);
    fx_end(&f);
    scratch_end(&s);
}
END_TEST

/* An alias_of that names another value refuses its pair. */
START_TEST(test_conflict)
{
    fx f;
    scratch s;
    fx_begin(&f);
    scratch_new(&s, f.ctx, "scatter_conflict");
    oac_annotation *a = annotate_file(&f, s.in, s.out, NULL);
    const oac_annotate_pair *p = oac_annotation_pair(a, 0);
    ck_assert_str_eq(p->present, "updated_key_cache.0");
    ck_assert_int_eq(p->reason, OAC_REFUSAL_CONFLICTING_ANNOTATION);
    ck_assert_ptr_nonnull(strstr(p->message, "value_cache.0"));
    ck_assert_uint_eq(oac_annotation_count(a, OAC_VERDICT_ANNOTATED), 3);
    ck_assert(!exists(s.out));
    oac_annotation_free(a);
    fx_end(&f);
    scratch_end(&s);
}
END_TEST

/* Fields no reader knows are written back as they were. */
START_TEST(test_unknown_fields)
{
    fx f;
    scratch s;
    fx_begin(&f);
    scratch_new(&s, f.ctx, "gqa_unknown");
    oac_annotation *a = annotate_file(&f, s.in, s.out, NULL);
    ck_assert_ptr_nonnull(oac_annotation_output(a));
    fx g;
    fx_begin(&g);
    ck_assert_int_eq(oac_model_load(g.ctx, &g.m, s.out, g.d), OAC_OK);
    const Onnx__ModelProto *m = oac_model_proto(g.m);
    ck_assert_uint_eq(m->base.n_unknown_fields, 1);
    ck_assert_uint_eq(m->base.unknown_fields[0].tag, 4242);
    ck_assert_uint_eq(m->base.unknown_fields[0].len, 6);
    ck_assert_int_eq(memcmp(m->base.unknown_fields[0].data, "\5hello", 6), 0);
    const Onnx__NodeProto *n = m->graph->node[0];
    ck_assert_uint_eq(n->base.n_unknown_fields, 1);
    ck_assert_uint_eq(n->base.unknown_fields[0].tag, 4243);
    ck_assert_uint_eq(n->n_output_alias, 2);      /* and the annotations */
    fx_end(&g);
    oac_annotation_free(a);
    fx_end(&f);
    scratch_end(&s);
}
END_TEST

/* The pair holds but the annotated model fails the check: its findings
 * are reported and nothing is written. */
START_TEST(test_check_fails)
{
    fx f;
    scratch s;
    fx_begin(&f);
    scratch_new(&s, f.ctx, "stale_reader");
    oac_annotation *a = annotate_file(&f, s.in, s.out, NULL);
    ck_assert_int_eq(oac_annotation_pair(a, 0)->verdict, OAC_VERDICT_ANNOTATED);
    diag_expect(f.d, OAC_ALIAS_HAZARD, "stale", "past_0", NULL);
    ck_assert_ptr_null(oac_annotation_output(a));
    ck_assert(!exists(s.out));
    /* No temporary file is left beside it either. */
    DIR *d = opendir(s.dir);
    struct dirent *e;
    size_t files = 0;
    while ((e = readdir(d)))
        files += e->d_name[0] != '.';
    closedir(d);
    ck_assert_uint_eq(files, 1);        /* the model */
    oac_annotation_free(a);
    fx_end(&f);
    scratch_end(&s);
}
END_TEST

/* ---- the config's own errors: config-invalid ------------------------------ */

/* Annotate row `model` with `config` (NULL: the row's own) as --config. */
static void config_scene(fx *f, const char *model, const char *config)
{
    scratch s;
    fx_begin(f);
    scratch_new(&s, f->ctx, model);
    char path[192];
    const char *cfg = NULL;
    if (config) {
        snprintf(path, sizeof path, "%s/given.json", s.dir);
        FILE *fp = fopen(path, "w");
        ck_assert_ptr_nonnull(fp);
        fputs(config, fp);
        fclose(fp);
        cfg = path;
    }
    oac_annotate_opts o = { .config = cfg };
    oac_annotation *a = NULL;
    ck_assert_int_eq(oac_model_load(f->ctx, &f->m, s.in, f->d), OAC_OK);
    int rc = oac_annotate(f->ctx, &a, f->m, &o, f->d);
    if (config && oac_diags_find(f->d, OAC_CONFIG_INVALID) >= 0) {
        ck_assert_int_eq(rc, OAC_EPARSE);
        ck_assert_uint_eq(oac_annotation_pair_count(a), 0);
    } else {
        ck_assert_int_eq(rc, OAC_OK);
        ck_assert_int_eq(oac_annotation_write(f->ctx, a, f->m, s.out, f->d), OAC_OK);
        ck_assert_ptr_nonnull(oac_annotation_output(a));
    }
    oac_annotation_free(a);
    scratch_end(&s);
}

static void cfg_not_json(fx *f) { config_scene(f, "scatter", "{\"model\": "); }
static void cfg_no_decoder(fx *f) { config_scene(f, "scatter", "{\"model\": {}}"); }
static void cfg_beams_zero(fx *f)
{
    config_scene(f, "scatter", "{\"model\": {\"decoder\": {}}, \"search\": {\"num_beams\": 0}}");
}
static void cfg_share_string(fx *f)
{
    config_scene(f, "scatter", "{\"model\": {\"decoder\": {}}, "
                               "\"search\": {\"past_present_share_buffer\": \"yes\"}}");
}
static void cfg_bad_template(fx *f)
{
    config_scene(f, "scatter", "{\"model\": {\"decoder\": {\"inputs\": {\"past_key_names\": "
                               "\"key_cache.%s\"}, \"outputs\": {\"present_key_names\": "
                               "\"updated_key_cache.%d\"}}}}");
}
/* %d in the past's name only: every layer would pair with one present. */
static void cfg_layer_one_side(fx *f)
{
    config_scene(f, "scatter", "{\"model\": {\"decoder\": {\"inputs\": {\"past_key_names\": "
                               "\"key_cache.%d\"}, \"outputs\": {\"present_key_names\": "
                               "\"updated_key_cache\"}}}}");
}
/* Neither name holds %d: one cache, a valid configuration. */
static void cfg_layer_neither(fx *f)
{
    config_scene(f, "scatter", "{\"model\": {\"decoder\": {\"inputs\": {\"past_key_names\": "
                               "\"key_cache\"}, \"outputs\": {\"present_key_names\": "
                               "\"updated_key_cache\"}}}}");
}
static void cfg_duplicate_key(fx *f)
{
    config_scene(f, "scatter", "{\"model\": {\"decoder\": {}}, \"model\": {}}");
}
static void cfg_missing(fx *f)
{
    scratch s;
    fx_begin(f);
    scratch_new(&s, f->ctx, "scatter");
    oac_annotate_opts o = { .config = "/nonexistent/genai_config.json" };
    oac_annotation *a = NULL;
    ck_assert_int_eq(oac_model_load(f->ctx, &f->m, s.in, f->d), OAC_OK);
    ck_assert_int_eq(oac_annotate(f->ctx, &a, f->m, &o, f->d), OAC_EPARSE);
    oac_annotation_free(a);
    scratch_end(&s);
}
/* The row's own config beside it, and the same given as --config. */
static void cfg_beside(fx *f) { config_scene(f, "scatter", NULL); }
static void cfg_given(fx *f)
{
    config_scene(f, "scatter", genai_model_find("scatter")->config);
}

/* A folder that does not exist: output-write-failed, the pairs kept. */
static void write_nowhere(fx *f)
{
    scratch s;
    fx_begin(f);
    scratch_new(&s, f->ctx, "scatter");
    oac_annotation *a = NULL;
    ck_assert_int_eq(oac_model_load(f->ctx, &f->m, s.in, f->d), OAC_OK);
    ck_assert_int_eq(oac_annotate(f->ctx, &a, f->m, NULL, f->d), OAC_OK);
    ck_assert_int_eq(oac_annotation_write(f->ctx, a, f->m, "/nonexistent/x.onnx", f->d),
                     OAC_OK);
    ck_assert_ptr_null(oac_annotation_output(a));
    ck_assert_uint_eq(oac_annotation_count(a, OAC_VERDICT_ANNOTATED), 4);
    oac_annotation_free(a);
    scratch_end(&s);
}

static const scene_case config_cases[] = {
    { "write_nowhere", write_nowhere, WANT(OAC_OUTPUT_WRITE_FAILED), NULL, NULL, NULL },
    { "cfg_not_json", cfg_not_json, WANT(OAC_CONFIG_INVALID), NULL, NULL, NULL },
    { "cfg_no_decoder", cfg_no_decoder, WANT(OAC_CONFIG_INVALID), NULL, NULL, NULL },
    { "cfg_beams_zero", cfg_beams_zero, WANT(OAC_CONFIG_INVALID), NULL, NULL, NULL },
    { "cfg_share_string", cfg_share_string, WANT(OAC_CONFIG_INVALID), NULL, NULL, NULL },
    { "cfg_bad_template", cfg_bad_template, WANT(OAC_CONFIG_INVALID), NULL, NULL, NULL },
    { "cfg_layer_one_side", cfg_layer_one_side, WANT(OAC_CONFIG_INVALID), NULL, NULL, NULL },
    { "cfg_layer_neither", cfg_layer_neither, NEAR(OAC_CONFIG_INVALID) },
    { "cfg_duplicate_key", cfg_duplicate_key, WANT(OAC_CONFIG_INVALID), NULL, NULL, NULL },
    { "cfg_missing", cfg_missing, WANT(OAC_CONFIG_INVALID), NULL, NULL, NULL },
    { "cfg_beside", cfg_beside, NEAR(OAC_CONFIG_INVALID) },
    { "cfg_given", cfg_given, NEAR(OAC_CONFIG_INVALID) },
};
CASES_TEST(config_cases)

/* The templates: a layer is a decimal number as %d writes it. */
START_TEST(test_templates)
{
    long l;
    ck_assert(oac_genai_match("past_key_values.%d.key", "past_key_values.12.key", &l));
    ck_assert_int_eq(l, 12);
    ck_assert(!oac_genai_match("past_key_values.%d.key", "past_key_values.01.key", &l));
    ck_assert(!oac_genai_match("past_key_values.%d.key", "past_key_values..key", &l));
    ck_assert(!oac_genai_match("past_key_values.%d.key", "past_key_values.1x.key", &l));
    ck_assert(!oac_genai_match("past_%d", "past_", &l));
    ck_assert(oac_genai_match("past", "past", &l));
    ck_assert(!oac_genai_match("past_%d", "past_1234567890", &l));
    oac_ctx *ctx = oac_ctx_new();
    char *e = oac_genai_expand(ctx, "present.%d.value", 7);
    ck_assert_str_eq(e, "present.7.value");
    oac_dealloc(ctx, e);
    oac_ctx_free(ctx);
}
END_TEST

/* ---- failures -------------------------------------------------------------- */

/* Every allocation of annotate and its write failing in turn: OAC_ENOMEM
 * and nothing written (the sanitizer build sees no leak). */
START_TEST(test_alloc_failures)
{
    scratch s;
    oac_ctx *ctx = oac_ctx_new();
    scratch_new(&s, ctx, "identity_chain");
    for (unsigned long n = 1;; n++) {
        oac_diags *d = oac_diags_new(ctx);
        oac_model *m = NULL;
        oac_annotation *a = NULL;
        ck_assert_int_eq(oac_model_load(ctx, &m, s.in, d), OAC_OK);
        oac_ctx_fail_alloc_after(ctx, n);
        int rc = oac_annotate(ctx, &a, m, NULL, d);
        if (rc == OAC_OK)
            rc = oac_annotation_write(ctx, a, m, s.out, d);
        oac_ctx_fail_alloc_after(ctx, 0);
        bool done = rc == OAC_OK;
        if (!done) {
            ck_assert_msg(rc == OAC_ENOMEM, "allocation %lu: %d %s", n, rc, oac_errmsg(ctx));
            ck_assert(!exists(s.out));
        }
        oac_annotation_free(a);
        oac_model_free(m);
        oac_diags_free(d);
        if (done) {
            ck_assert(exists(s.out));
            break;
        }
        ck_assert_uint_lt(n, 100000);
    }
    scratch_end(&s);
    oac_ctx_free(ctx);
}
END_TEST

/* The reports of a call with pairs and findings: every allocation of
 * the text failing in turn gives NULL (and no leak); both forms say what
 * the annotation says. */
START_TEST(test_reports)
{
    fx f;
    scratch s;
    fx_begin(&f);
    scratch_new(&s, f.ctx, "mixed");
    oac_annotate_opts o = { .partial = true };
    oac_annotation *a = annotate_file(&f, s.in, s.out, &o);
    oac_report_input in = { .path = s.in, .model = f.m, .diags = f.d,
                            .annotation = a, .output = s.out };
    ck_assert(oac_annotate_report_failed(&in));     /* one pair refused */
    unsigned long before = oac_ctx_alloc_count(f.ctx);
    char *t = oac_annotate_report_text(f.ctx, &in);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(strstr(t, "'past_1' -> 'present_1': refused [growing-cache]: "));
    ck_assert_ptr_nonnull(strstr(t, "2 pairs: 1 annotated, 0 kept, 1 refused; wrote "));
    ck_assert_ptr_nonnull(strstr(t, "(status: error)\n"));
    free(t);
    unsigned long total = oac_ctx_alloc_count(f.ctx) - before;
    for (unsigned long n = 1; n <= total; n++) {
        oac_ctx_fail_alloc_after(f.ctx, n);
        ck_assert_ptr_null(oac_annotate_report_text(f.ctx, &in));
        oac_ctx_fail_alloc_after(f.ctx, 0);
    }
    json_t *j = oac_annotate_report_json(f.ctx, &in);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "error");
    json_t *p1 = json_array_get(json_object_get(j, "pairs"), 1);
    ck_assert_str_eq(json_string_value(json_object_get(p1, "reason")), "growing-cache");
    ck_assert(json_is_true(json_object_get(json_object_get(j, "output"), "written")));
    json_decref(j);
    oac_annotation_free(a);
    fx_end(&f);
    scratch_end(&s);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("annotate");
    TCase *tc = tcase_create("annotate");
    tcase_add_loop_test(tc, test_rows, 0, (int)(sizeof rows / sizeof rows[0]));
    tcase_add_test(tc, test_update_chain_advice);
    tcase_add_test(tc, test_partial);
    tcase_add_test(tc, test_capacity);
    tcase_add_test(tc, test_ignore_config);
    tcase_add_test(tc, test_conflict);
    tcase_add_test(tc, test_unknown_fields);
    tcase_add_test(tc, test_check_fails);
    tcase_add_test(tc, test_templates);
    tcase_add_test(tc, test_alloc_failures);
    tcase_add_test(tc, test_reports);
    ADD_CASES(tc, config_cases);
    suite_add_tcase(s, tc);
    return s;
}

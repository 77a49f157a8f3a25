/* check_decoder.c: the generation loop a run drives (lib/run/generate.c;
 * contract 8, "Decoder inputs"; issue 11 item 3).
 *
 * An echo model returns each decoder input through an Identity node
 * whose kernel a test hook replaces by one that records what it reads,
 * so every step's values are seen as the graph sees them: the prompt
 * and the single tokens after it, input_ids cycling through the tokens,
 * ones over the total length, absolute positions, seqlens_k = total - 1
 * and total_sequence_length = total in INT32, write_indices = past and
 * nonpad_kv_seqlen = total, in the declared element type.  Expected
 * values are computed here from the contract's rule, not copied from a
 * run.  The usage errors (a --dim on a symbol the loop binds, a static
 * sequence axis that cannot take the prompt, a type the loop cannot
 * feed, one symbol with two meanings) and --input (never driven) too.
 */
#include <math.h>

#include "half.h"
#include "harness.h"
#include "run/kernel_api.h"

/* ---- the recorder ------------------------------------------------------ */

typedef struct rec {
    char node[32];
    int32_t elem_type;
    int rank;
    int64_t dims[4];
    int64_t v[32];
    size_t n;
} rec;

static rec recs[256];
static size_t n_recs;

static int record_identity(oac_kernel_call *k)
{
    const oac_tensor *t = oac_kernel_tensor_in(k, 0);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_lt(n_recs, sizeof recs / sizeof recs[0]);
    rec *r = &recs[n_recs++];
    snprintf(r->node, sizeof r->node, "%s", k->node_name);
    r->elem_type = t->elem_type;
    r->rank = t->rank;
    ck_assert_int_le(t->rank, 4);
    memcpy(r->dims, t->dims, (size_t)t->rank * sizeof *t->dims);
    size_t w = t->elem_type == OAC_T_INT32 ? 4 : 8;
    r->n = t->bytes / w;
    ck_assert_uint_le(r->n, 32);
    for (size_t i = 0; i < r->n; i++) {
        if (w == 8) {
            memcpy(&r->v[i], (const uint8_t *)t->data + 8 * i, 8);
        } else {
            int32_t x;
            memcpy(&x, (const uint8_t *)t->data + 4 * i, 4);
            r->v[i] = x;
        }
    }
    return oac_kernel_identity(k);
}

static const oac_kernel_override recorder = { "", "Identity", record_identity };
static const oac_run_hooks record_hooks = { .overrides = &recorder, .n_overrides = 1 };

/* What node `echo_<name>` read at step `step` (1-based). */
static const rec *seen(const char *name, int step)
{
    char node[32];
    snprintf(node, sizeof node, "echo_%s", name);
    for (size_t i = 0; i < n_recs; i++)
        if (!strcmp(recs[i].node, node) && --step == 0)
            return &recs[i];
    ck_abort_msg("no record of %s", node);
    return NULL;
}

/* Assert rec r holds n values v (all equal to fill when v is NULL), of
 * type et. */
static void expect(const rec *r, int32_t et, const int64_t *v, size_t n, int64_t fill)
{
    ck_assert_int_eq(r->elem_type, et);
    ck_assert_uint_eq(r->n, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(r->v[i] == (v ? v[i] : fill), "%s[%zu] = %lld, want %lld", r->node, i,
                      (long long)r->v[i], (long long)(v ? v[i] : fill));
}

/* ---- models ------------------------------------------------------------- */

/* Every decoder input of the contract, each returned through Identity
 * node echo_<name>; lengths typed int32 where GroupQueryAttention wants
 * them (i32), else INT64. */
static void echo_model(fx *f, bool i32)
{
    static const struct {
        const char *name, *dims;
        bool len;                  /* a length GQA reads */
    } ins[] = {
        { "input_ids", "batch,seq", false },
        { "attention_mask", "batch,total", false },
        { "position_ids", "batch,seq", false },
        { "seqlens_k", "batch", true },
        { "total_sequence_length", "", true },
        { "write_indices", "batch", false },
        { "nonpad_kv_seqlen", "batch", false },
    };
    oac_gb *g = fx_build(f, NULL);
    for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++) {
        int32_t et = ins[i].len && i32 ? OAC_T_INT32 : OAC_T_INT64;
        char node[48], out[48];
        snprintf(node, sizeof node, "echo_%s", ins[i].name);
        snprintf(out, sizeof out, "out_%s", ins[i].name);
        oac_gb_input(g, ins[i].name, et, ins[i].dims);
        oac_gb_node(g, "Identity", NULL, node, ins[i].name, out);
        oac_gb_output(g, out, et, ins[i].dims);
    }
    fx_load(f);
}

static int run_echo(fx *f, oac_run_opts *ro)
{
    n_recs = 0;
    return fx_check_run(f, NULL, 0, NULL, 0, ro, &record_hooks);
}

/* ---- the loop's values ---------------------------------------------------- */

START_TEST(prompt_then_one_token)
{
    /* P = 3, tokens 5, 6 cycled: the prompt 5 6 5, then 6, then 5. */
    static const int64_t tokens[2] = { 5, 6 };
    fx f;
    echo_model(&f, true);
    oac_run_opts ro = { .steps = 3, .prompt_length = 3, .tokens = tokens, .n_tokens = 2 };
    ck_assert_int_eq(run_echo(&f, &ro), OAC_OK);
    ck_assert_uint_eq(f.e->steps_completed, 3);
    int64_t past = 0;
    for (int step = 1; step <= 3; step++) {
        int64_t n = step == 1 ? 3 : 1, total = past + n, ids[3], pos[3];
        for (int64_t j = 0; j < n; j++) {
            ids[j] = tokens[(past + j) % 2];
            pos[j] = past + j;
        }
        const rec *r = seen("input_ids", step);
        ck_assert_int_eq(r->rank, 2);
        ck_assert_int_eq(r->dims[0], 1);
        ck_assert_int_eq(r->dims[1], n);
        expect(r, OAC_T_INT64, ids, (size_t)n, 0);
        r = seen("attention_mask", step);
        ck_assert_int_eq(r->dims[1], total);
        expect(r, OAC_T_INT64, NULL, (size_t)total, 1);
        expect(seen("position_ids", step), OAC_T_INT64, pos, (size_t)n, 0);
        expect(seen("seqlens_k", step), OAC_T_INT32, NULL, 1, total - 1);
        r = seen("total_sequence_length", step);
        ck_assert_int_eq(r->rank, 0);
        expect(r, OAC_T_INT32, NULL, 1, total);
        expect(seen("write_indices", step), OAC_T_INT64, NULL, 1, past);
        expect(seen("nonpad_kv_seqlen", step), OAC_T_INT64, NULL, 1, total);
        ck_assert_int_eq(f.e->per_step[step - 1].past_length, past);
        past = total;
    }
    fx_end(&f);
}
END_TEST

START_TEST(default_tokens_count_up)
{
    /* No --tokens: 1, 2, 3, ... over the whole run. */
    fx f;
    echo_model(&f, false);
    oac_run_opts ro = { .steps = 3, .prompt_length = 2 };
    ck_assert_int_eq(run_echo(&f, &ro), OAC_OK);
    static const int64_t s1[2] = { 1, 2 }, s2[1] = { 3 }, s3[1] = { 4 };
    expect(seen("input_ids", 1), OAC_T_INT64, s1, 2, 0);
    expect(seen("input_ids", 2), OAC_T_INT64, s2, 1, 0);
    expect(seen("input_ids", 3), OAC_T_INT64, s3, 1, 0);
    /* INT64 lengths when the model declares them so. */
    expect(seen("seqlens_k", 3), OAC_T_INT64, NULL, 1, 3);
    expect(seen("total_sequence_length", 3), OAC_T_INT64, NULL, 1, 4);
    fx_end(&f);
}
END_TEST

START_TEST(batch_from_dim)
{
    /* --dim batch=2: every row fed the same. */
    static const oac_dim_binding dims[1] = { { "batch", 2 } };
    fx f;
    echo_model(&f, true);
    oac_run_opts ro = { .steps = 2 };
    n_recs = 0;
    ck_assert_int_eq(fx_check_run(&f, dims, 1, NULL, 0, &ro, &record_hooks), OAC_OK);
    static const int64_t ids[2] = { 2, 2 };
    const rec *r = seen("input_ids", 2);
    ck_assert_int_eq(r->dims[0], 2);
    expect(r, OAC_T_INT64, ids, 2, 0);
    expect(seen("write_indices", 2), OAC_T_INT64, NULL, 2, 1);
    expect(seen("seqlens_k", 2), OAC_T_INT32, NULL, 2, 1);
    fx_end(&f);
}
END_TEST

START_TEST(run_dims_first_step)
{
    /* The check a run makes binds the first step's numbers: seq and
     * total to the prompt, batch to 1; the user's --dim comes first. */
    fx f;
    echo_model(&f, true);
    static const oac_dim_binding user[1] = { { "batch", 3 } };
    oac_run_opts ro = { .prompt_length = 4, .dims = user, .n_dims = 1 };
    oac_dim_binding *d;
    size_t n;
    ck_assert_int_eq(oac_run_dims(f.ctx, &d, &n, f.m, &ro, f.d), OAC_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(d[0].name, "batch");
    ck_assert_int_eq(d[0].value, 3);
    for (size_t i = 1; i < n; i++) {
        ck_assert(!strcmp(d[i].name, "seq") || !strcmp(d[i].name, "total"));
        ck_assert_int_eq(d[i].value, 4);
    }
    oac_free(d);
    /* And the plan is that step's: a check at these dims knows every
     * input's size. */
    fx_end(&f);
}
END_TEST

START_TEST(past_length_null_without_loop)
{
    /* dense_cache has no decoder input: past_length is -1 (null). */
    static const oac_dim_binding dims[] = {
        { "batch", 1 }, { "heads", 2 }, { "max_length", 8 }, { "head_size", 4 },
        { "new_length", 1 },
    };
    fx f;
    fx_example(&f, "dense_cache");
    oac_run_opts ro = { .steps = 2 };
    ck_assert_int_eq(fx_check_run(&f, dims, 5, NULL, 0, &ro, NULL), OAC_OK);
    ck_assert_int_eq(f.e->per_step[0].past_length, -1);
    ck_assert_int_eq(f.e->per_step[1].past_length, -1);
    fx_end(&f);
}
END_TEST

START_TEST(input_file_is_not_driven)
{
    /* --input input_ids: the file's token every step (one token, as the
     * driven position_ids of the same "seq" say). */
    char dir[] = "/tmp/oac_dec_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    int64_t ids[1] = { 9 }, dims[2] = { 1, 1 };
    char *path = write_tensor(dir, "ids", OAC_T_INT64, dims, 2, ids, sizeof ids);
    oac_input_file in[1] = { { "input_ids", path } };
    fx f;
    echo_model(&f, true);
    oac_run_opts ro = { .steps = 2 };
    n_recs = 0;
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, in, 1, &ro, &record_hooks), OAC_OK);
    expect(seen("input_ids", 1), OAC_T_INT64, ids, 1, 0);
    expect(seen("input_ids", 2), OAC_T_INT64, ids, 1, 0);
    /* The others still run the loop: one token a step. */
    expect(seen("write_indices", 2), OAC_T_INT64, NULL, 1, 1);
    fx_end(&f);
    unlink(path);
    free(path);
    rmdir(dir);
}
END_TEST

/* ---- usage errors ----------------------------------------------------------- */

/* oac_run_dims of model `build` under ro must be OAC_EINVAL, its message
 * containing `why`. */
static void refused(fx *f, const oac_run_opts *ro, const char *why)
{
    oac_dim_binding *d = NULL;
    size_t n;
    ck_assert_int_eq(oac_run_dims(f->ctx, &d, &n, f->m, ro, f->d), OAC_EINVAL);
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(oac_errmsg(f->ctx), why), "%s", oac_errmsg(f->ctx));
    /* oac_run refuses the same way, before anything runs. */
    ck_assert_int_eq(oac_run(f->ctx, &f->e, f->m, NULL, ro, f->d), OAC_EINVAL);
    ck_assert_uint_eq(f->e->steps_completed, 0);
}

START_TEST(dim_on_a_driven_symbol)
{
    static const oac_dim_binding dims[1] = { { "seq", 1 } };
    fx f;
    echo_model(&f, true);
    oac_run_opts ro = { .dims = dims, .n_dims = 1 };
    refused(&f, &ro, "binds 'seq' from its generation loop");
    fx_end(&f);
}
END_TEST

START_TEST(static_sequence_axis)
{
    /* input_ids [1, 1]: one token a step is fine, a prompt of 2 is not. */
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    oac_gb_input(g, "input_ids", OAC_T_INT64, "1,1");
    oac_gb_node(g, "Identity", NULL, "echo_input_ids", "input_ids", "y");
    oac_gb_output(g, "y", OAC_T_INT64, "1,1");
    fx_load(&f);
    oac_run_opts ro = { .steps = 2, .prompt_length = 2 };
    refused(&f, &ro, "static sequence dimension 1");
    fx_end(&f);
}
END_TEST

START_TEST(type_the_loop_cannot_feed)
{
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    oac_gb_input(g, "attention_mask", OAC_T_FLOAT, "1,total");
    oac_gb_node(g, "Identity", NULL, "echo", "attention_mask", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,total");
    fx_load(&f);
    oac_run_opts ro = { .steps = 1 };
    refused(&f, &ro, "INT32 and INT64 decoder inputs only");
    fx_end(&f);
}
END_TEST

START_TEST(symbol_with_two_meanings)
{
    /* "s" is the new tokens' count on input_ids and the total on
     * attention_mask: equal at step 1 only. */
    fx f;
    oac_gb *g = fx_build(&f, NULL);
    oac_gb_input(g, "input_ids", OAC_T_INT64, "1,s");
    oac_gb_input(g, "attention_mask", OAC_T_INT64, "1,s");
    oac_gb_node(g, "Add", NULL, "sum", "input_ids,attention_mask", "y");
    oac_gb_output(g, "y", OAC_T_INT64, "1,s");
    fx_load(&f);
    oac_run_opts ro = { .steps = 2 };
    refused(&f, &ro, "would be both");
    fx_end(&f);
}
END_TEST

/* ---- stock against annotated (issue 11 item 5) --------------------------- */

/* Bytes of one toy cache holding `len` positions. */
static uint64_t toy_cache_bytes(int64_t len)
{
    return (uint64_t)OAC_TOY_HEADS * (uint64_t)len * OAC_TOY_HEAD_SIZE * sizeof(float);
}

START_TEST(stock_twin_grows)
{
    /* toy_decoder_concat: no annotation, past_key_<l> pairs with
     * present_key_<l> by name.  Step k (1-based) writes its 4 presents
     * of k positions with Concat and, from step 2, copies the 4 presents
     * of k - 1 positions back as the pasts: 4 * (B(k) + B(k - 1)). */
    fx f;
    fx_example(&f, "toy_decoder_concat");
    oac_run_opts ro = { .steps = 5 };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL), OAC_OK);
    uint64_t total = 0;
    for (int k = 1; k <= 5; k++) {
        const oac_step_stats *st = &f.e->per_step[k - 1];
        uint64_t want = 4 * (toy_cache_bytes(k) + toy_cache_bytes(k - 1));
        ck_assert_uint_eq(st->copied_bytes, want);
        ck_assert_int_eq(st->past_length, k - 1);
        if (k > 1) {
            ck_assert_uint_gt(st->copied_bytes, st[-1].copied_bytes);
            ck_assert_uint_gt(st->alloc_bytes, st[-1].alloc_bytes);
        }
        total += want;
    }
    ck_assert_uint_eq(f.e->copied_bytes, total);
    /* The check's plan is the first step's.  The run plans each later
     * step at its own dims: its planned peak is the last (largest)
     * step's, which a check bound to step 5's past length (4) plans, and
     * which the grown caches measure. */
    const oac_memory_plan *first = oac_analysis_plan(f.a);
    ck_assert(first && first->peak_bytes.known);
    oac_dim_binding at5[] = { { "past_len", 4 } };
    oac_check_opts co = { .dims = at5, .n_dims = 1 };
    oac_diags *d5 = oac_diags_new(f.ctx);
    oac_analysis *a5 = NULL;
    ck_assert_int_eq(oac_check(f.ctx, &a5, f.m, &co, d5), OAC_OK);
    const oac_memory_plan *last = oac_analysis_plan(a5);
    ck_assert(last->peak_bytes.known);
    ck_assert_uint_gt(last->peak_bytes.value, first->peak_bytes.value);
    ck_assert(f.e->planned_peak_bytes.known);
    ck_assert_uint_eq(f.e->planned_peak_bytes.value, last->peak_bytes.value);
    ck_assert_uint_eq(f.e->measured_peak_bytes, last->peak_bytes.value);
    ck_assert(f.e->peak_matches_plan);
    oac_analysis_free(a5);
    oac_diags_free(d5);
    fx_end(&f);
}
END_TEST

START_TEST(analysis_without_the_loops_dims)
{
    /* A library caller that checked without oac_run_dims: the run still
     * binds the loop's symbols itself (the twin's past starts empty); the
     * plan, made without them, is unknown. */
    fx f;
    fx_example(&f, "toy_decoder_concat");
    ck_assert_int_eq(fx_check(&f, NULL), OAC_OK);
    oac_run_opts ro = { .steps = 3 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, f.a, &ro, f.d), OAC_OK);
    ck_assert_uint_eq(f.e->steps_completed, 3);
    ck_assert_uint_gt(f.e->per_step[2].copied_bytes, f.e->per_step[1].copied_bytes);
    ck_assert(!f.e->planned_peak_bytes.known);
    fx_end(&f);
}
END_TEST

START_TEST(annotated_copies_nothing)
{
    fx f;
    fx_example(&f, "toy_decoder");
    oac_run_opts ro = { .steps = 5 };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL), OAC_OK);
    for (int k = 0; k < 5; k++) {
        ck_assert_uint_eq(f.e->per_step[k].copied_bytes, 0);
        ck_assert_int_eq(f.e->per_step[k].past_length, k);
    }
    ck_assert_uint_eq(f.e->copied_bytes, 0);
    ck_assert(f.e->peak_matches_plan);
    fx_end(&f);
}
END_TEST

/* The logits lm_head computes, per step. */
static float logits[8][OAC_TOY_VOCAB];
static int n_logits;

static int record_lm_head(oac_kernel_call *k)
{
    int rc = oac_kernel_matmul(k);
    if (!rc && !strcmp(k->node_name, "lm_head")) {
        const oac_tensor *t = &k->out[0]->t;
        ck_assert_uint_eq(t->bytes, sizeof logits[0]);
        ck_assert_int_lt(n_logits, 8);
        memcpy(logits[n_logits++], t->data, sizeof logits[0]);
    }
    return rc;
}

START_TEST(stock_feed_back_computes_what_in_place_does)
{
    /* The same tokens through the in-place decoder and its Concat twin:
     * fed back, the twin's pasts hold what the bound caches hold, so
     * every step's logits agree. */
    static const int64_t tokens[5] = { 3, 7, 1, 12, 5 };
    static const oac_kernel_override ov = { "", "MatMul", record_lm_head };
    oac_run_hooks h = { .overrides = &ov, .n_overrides = 1 };
    float in_place[6][OAC_TOY_VOCAB];
    fx f;
    for (int twin = 0; twin < 2; twin++) {
        n_logits = 0;
        fx_example(&f, twin ? "toy_decoder_concat" : "toy_decoder");
        oac_run_opts ro = { .steps = 6, .tokens = tokens, .n_tokens = 5 };
        ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, &h), OAC_OK);
        ck_assert_int_eq(n_logits, 6);
        for (int k = 0; k < 6; k++) {
            float most = 0;
            for (int v = 0; v < OAC_TOY_VOCAB; v++) {
                if (!twin) {
                    in_place[k][v] = logits[k][v];
                    most = most > fabsf(logits[k][v]) ? most : fabsf(logits[k][v]);
                    continue;
                }
                ck_assert_msg(fabsf(in_place[k][v] - logits[k][v]) < 1e-5f,
                              "step %d logit %d: %g in place, %g stock", k + 1, v,
                              in_place[k][v], logits[k][v]);
            }
            if (!twin)
                ck_assert_float_gt(most, 1e-3f);     /* not vacuous */
        }
        /* Not vacuous either: the steps differ. */
        ck_assert(memcmp(logits[0], logits[5], sizeof logits[0]));
        fx_end(&f);
    }
}
END_TEST

/* A TensorScatter decoder: input_ids -> Gather(embedding) -> written at
 * write_indices (driven: the past length) into past_keys [batch, 8, 4].
 * annotated: READ_WRITE, output_alias, present alias_of the past; else
 * the stock form: present_keys a new buffer each step, fed back. */
static void scatter_model(fx *f, bool annotated)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_mb_opset(mb, "", 24);
    oac_gb_input(g, "input_ids", OAC_T_INT64, "batch,seq");
    oac_gb_input(g, "write_indices", OAC_T_INT64, "batch");
    Onnx__ValueInfoProto *past = oac_gb_input(g, "past_keys", OAC_T_FLOAT, "batch,8,4");
    float emb[32 * 4];
    for (int i = 0; i < 32 * 4; i++)
        emb[i] = (float)(i / 4) + 0.25f * (float)(i % 4);
    oac_gb_init_f32(g, "embedding", "32,4", emb, 32 * 4);
    oac_gb_node(g, "Gather", NULL, "embed", "embedding,input_ids", "k");
    Onnx__NodeProto *n = oac_gb_node(g, "TensorScatter", NULL, "scatter",
                                     "past_keys,k,write_indices", "present_keys");
    oac_node_attr_int(g, n, "axis", 1);
    Onnx__ValueInfoProto *present = oac_gb_output(g, "present_keys", OAC_T_FLOAT, "batch,8,4");
    if (annotated) {
        oac_vi_access(g, past, 1);
        oac_node_alias(g, n, 0, 0, 1);
        oac_vi_alias_of(g, present, "past_keys");
    }
    fx_load(f);
}

START_TEST(stock_scatter_copies_every_step)
{
    /* Stock: TensorScatter runs out of place, its present a copy of the
     * cache (128 bytes) every step, and from step 2 the copy back (128).
     * Annotated: 0, the one update a step in place. */
    fx f;
    for (int annotated = 0; annotated < 2; annotated++) {
        scatter_model(&f, annotated);
        oac_run_opts ro = { .steps = 4, .prompt_length = 3 };
        ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL), OAC_OK);
        for (int k = 0; k < 4; k++) {
            uint64_t want = annotated ? 0 : k ? 256 : 128;
            ck_assert_uint_eq(f.e->per_step[k].copied_bytes, want);
        }
        ck_assert_uint_eq(f.e->second_cache_bytes, annotated ? 0 : 128);
        ck_assert_uint_eq(f.e->identity_checked, annotated ? 4 : 0);
        fx_end(&f);
    }
}
END_TEST

/* Write `text` to path. */
static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_ge(fputs(text, fp), 0);
    ck_assert_int_eq(fclose(fp), 0);
}

/* tok [1, seq] -> Gather(embedding: row t holds t, t) [1, seq, 2];
 * next.0 = Concat(cache.0 [1, past, 2], it) on axis 1, written to
 * dir/m.onnx and loaded from there (so the run finds dir's config). */
static void named_model(fx *f, const char *dir)
{
    char path[128];
    snprintf(path, sizeof path, "%s/m.onnx", dir);
    oac_gb *g = fx_build(f, NULL);
    oac_gb_input(g, "tok", OAC_T_INT64, "1,seq");
    oac_gb_input(g, "cache.0", OAC_T_FLOAT, "1,past,2");
    float emb[32 * 2];
    for (int i = 0; i < 32 * 2; i++)
        emb[i] = (float)(i / 2);
    oac_gb_init_f32(g, "embedding", "32,2", emb, 32 * 2);
    oac_gb_node(g, "Gather", NULL, "embed", "embedding,tok", "e");
    oac_node_attr_int(g, oac_gb_node(g, "Concat", NULL, "grow", "cache.0,e", "next.0"),
                      "axis", 1);
    oac_gb_output(g, "next.0", OAC_T_FLOAT, "1,total,2");
    ck_assert_int_eq(oac_mb_write(f->mb, path), OAC_OK);
    ck_assert_int_eq(oac_model_load(f->ctx, &f->m, path, f->d), OAC_OK);
}

START_TEST(config_names_inputs_and_pairs)
{
    /* The genai_config.json beside the model names the decoder input
     * ("tok" is input_ids) and the pair ("cache.%d" -> "next.%d"), which
     * neither the default names nor the name patterns find. */
    char dir[] = "/tmp/oac_cfg_XXXXXX", cfg[64], mp[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cfg, sizeof cfg, "%s/genai_config.json", dir);
    snprintf(mp, sizeof mp, "%s/m.onnx", dir);
    write_text(cfg, "{\"model\": {\"decoder\": {"
                    "\"inputs\": {\"input_ids\": \"tok\", \"past_key_names\": \"cache.%d\"},"
                    "\"outputs\": {\"present_key_names\": \"next.%d\"}}}}");
    fx f;
    named_model(&f, dir);
    oac_run_opts ro = { .steps = 3, .tokens = (const int64_t[]){ 5, 9, 4 }, .n_tokens = 3 };
    ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL), OAC_OK);
    for (int k = 1; k <= 3; k++) {
        /* Concat's present of k rows of 2 floats, and the k - 1 fed back. */
        ck_assert_uint_eq(f.e->per_step[k - 1].copied_bytes, (uint64_t)(8 * k + 8 * (k - 1)));
        ck_assert_int_eq(f.e->per_step[k - 1].past_length, k - 1);
    }
    fx_end(&f);
    /* A config that cannot be read is config-invalid, and nothing runs. */
    write_text(cfg, "{\"model\": 3}");
    named_model(&f, dir);
    oac_dim_binding *d = NULL;
    size_t n;
    ck_assert_int_eq(oac_run_dims(f.ctx, &d, &n, f.m, &ro, f.d), OAC_EPARSE);
    diag_expect_run(f.d, OAC_CONFIG_INVALID, "config-invalid");
    fx_end(&f);
    unlink(cfg);
    unlink(mp);
    rmdir(dir);
}
END_TEST

/* ---- a FLOAT16 GroupQueryAttention decoder ------------------------------------ */

enum { G_CAP = 8, G_E = 8, G_H = 4, G_VOCAB = 32 };

/* A FLOAT16 initializer of rows x cols, deterministic small values. */
static void f16_weight(oac_gb *g, const char *name, int rows, int cols, unsigned seed)
{
    uint16_t w[G_VOCAB * G_E];
    ck_assert_int_le(rows * cols, G_VOCAB * G_E);
    uint32_t x = seed * 2654435761u + 1u;
    for (int i = 0; i < rows * cols; i++) {
        x = x * 1664525u + 1013904223u;
        w[i] = oac_f32_to_f16(((float)(x >> 8) / 16777216.0f - 0.5f));
    }
    char dims[16];
    snprintf(dims, sizeof dims, "%d,%d", rows, cols);
    oac_gb_init_raw(g, name, OAC_T_FLOAT16, dims, w, (size_t)(rows * cols) * sizeof *w);
}

/* input_ids -> Gather(embedding) -> q, k, v (MatMul) -> GroupQueryAttention
 * (2 query heads, 1 kv head of 4; seqlens_k and total_sequence_length
 * INT32 decoder inputs) -> lm_head.  annotated: past_key/past_value
 * [batch, 1, G_CAP, 4] READ_WRITE, the presents in place; stock: past
 * [batch, 1, past_seq, 4], presents [batch, 1, total_seq, 4]. */
static void gqa_decoder_dims(fx *f, bool annotated, bool fixed)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_mb_opset(mb, "com.microsoft", 1);
    char pd[32], qd[32];
    if (annotated || fixed) {
        snprintf(pd, sizeof pd, "batch,1,%d,%d", G_CAP, G_H);
        snprintf(qd, sizeof qd, "%s", pd);
    } else {
        snprintf(pd, sizeof pd, "batch,1,past_seq,%d", G_H);
        snprintf(qd, sizeof qd, "batch,1,total_seq,%d", G_H);
    }
    oac_gb_input(g, "input_ids", OAC_T_INT64, "batch,seq");
    oac_gb_input(g, "seqlens_k", OAC_T_INT32, "batch");
    oac_gb_input(g, "total_sequence_length", OAC_T_INT32, "");
    Onnx__ValueInfoProto *pk = oac_gb_input(g, "past_key", OAC_T_FLOAT16, pd);
    Onnx__ValueInfoProto *pv = oac_gb_input(g, "past_value", OAC_T_FLOAT16, pd);
    f16_weight(g, "embedding", G_VOCAB, G_E, 1);
    f16_weight(g, "wq", G_E, 2 * G_H, 2);
    f16_weight(g, "wk", G_E, G_H, 3);
    f16_weight(g, "wv", G_E, G_H, 4);
    f16_weight(g, "wo", 2 * G_H, G_VOCAB, 5);
    oac_gb_node(g, "Gather", NULL, "embed", "embedding,input_ids", "x");
    oac_gb_node(g, "MatMul", NULL, "q_proj", "x,wq", "q");
    oac_gb_node(g, "MatMul", NULL, "k_proj", "x,wk", "k");
    oac_gb_node(g, "MatMul", NULL, "v_proj", "x,wv", "v");
    Onnx__NodeProto *n = oac_gb_node(g, "GroupQueryAttention", "com.microsoft", "gqa",
                                     "q,k,v,past_key,past_value,seqlens_k,total_sequence_length",
                                     "attn,present_key,present_value");
    oac_node_attr_int(g, n, "num_heads", 2);
    oac_node_attr_int(g, n, "kv_num_heads", 1);
    oac_gb_node(g, "MatMul", NULL, "lm_head", "attn,wo", "logits");
    oac_gb_output(g, "logits", OAC_T_FLOAT16, "batch,seq,32");
    Onnx__ValueInfoProto *qk = oac_gb_output(g, "present_key", OAC_T_FLOAT16, qd);
    Onnx__ValueInfoProto *qv = oac_gb_output(g, "present_value", OAC_T_FLOAT16, qd);
    if (annotated) {
        oac_vi_access(g, pk, 1);
        oac_vi_access(g, pv, 1);
        oac_node_alias(g, n, 1, 3, 1);
        oac_node_alias(g, n, 2, 4, 1);
        oac_vi_alias_of(g, qk, "past_key");
        oac_vi_alias_of(g, qv, "past_value");
    }
    fx_load(f);
}

static void gqa_decoder(fx *f, bool annotated) { gqa_decoder_dims(f, annotated, false); }

/* The FLOAT16 logits lm_head computes, per step, as floats. */
static float glogits[8][3 * G_VOCAB];
static int n_glogits;

static int record_gqa_lm_head(oac_kernel_call *k)
{
    int rc = oac_kernel_matmul(k);
    if (!rc && !strcmp(k->node_name, "lm_head")) {
        const oac_tensor *t = &k->out[0]->t;
        ck_assert_int_eq(t->elem_type, OAC_T_FLOAT16);
        ck_assert_uint_le(t->bytes / 2, 3 * G_VOCAB);
        ck_assert_int_lt(n_glogits, 8);
        /* The last token's row. */
        const uint16_t *h = (const uint16_t *)t->data + t->bytes / 2 - G_VOCAB;
        for (int v = 0; v < G_VOCAB; v++)
            glogits[n_glogits][v] = oac_f16_to_f32(h[v]);
        n_glogits++;
    }
    return rc;
}

START_TEST(gqa_decoder_in_place_and_past_its_capacity)
{
    /* A prompt of 3, then one token a step: 6 steps fill the 8 rows of
     * the shared buffer in place; step 7 (total 9) is refused before it
     * runs, the caches as step 6 left them. */
    enum { CB = 1 * 1 * G_CAP * G_H * 2 };
    uint8_t store[2][2][CB];
    for (int over = 0; over < 2; over++) {
        memset(store[over], 0, sizeof store[over]);
        oac_binding b[2];
        oac_binding *bl[2] = { &b[0], &b[1] };
        oac_binding_init(&b[0], "past_key", store[over][0], CB, true);
        oac_binding_init(&b[1], "past_value", store[over][1], CB, true);
        oac_run_hooks h = { .bindings = bl, .n_bindings = 2 };
        oac_run_opts ro = { .steps = 6 + (uint64_t)over, .prompt_length = 3 };
        fx f;
        gqa_decoder(&f, true);
        ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, &h), over ? OAC_ERUNTIME : OAC_OK);
        ck_assert_uint_eq(f.e->steps_completed, 6);
        ck_assert_uint_eq(f.e->identity_checked, 12);
        ck_assert_uint_eq(f.e->identity_held, 12);
        ck_assert_uint_eq(f.e->copied_bytes, 0);
        if (over) {
            const oac_diag *d = diag_expect_run(f.d, OAC_CAPACITY_OVERFLOW, "capacity-overflow");
            ck_assert_str_eq(d->node, "gqa");
            ck_assert_ptr_nonnull(strstr(d->message, "the update leaves 9 positions (input 6 "));
            ck_assert(!b[0].invalid && !b[1].invalid);
        } else {
            ck_assert(f.e->peak_matches_plan);
        }
        fx_end(&f);
    }
    ck_assert(!memcmp(store[0], store[1], sizeof store[0]));
    /* Every row written: no row of the key cache is all zeros. */
    for (int r = 0; r < G_CAP; r++) {
        bool any = false;
        for (int e = 0; e < G_H * 2; e++)
            any = any || store[0][0][r * G_H * 2 + e];
        ck_assert_msg(any, "row %d of past_key never written", r);
    }
}
END_TEST

START_TEST(gqa_unannotated_one_buffer_past_its_capacity)
{
    /* Without output_alias but past and present both declared with the 8
     * rows of one buffer (GroupQueryAttention shares it, section 6): the
     * run checks the length as it does for the annotated decoder, and
     * step 7 (total 9) is refused before it runs, where it grew the
     * present past its declared 8 rows and stopped later with
     * unsupported-operator. */
    for (int over = 0; over < 2; over++) {
        oac_run_opts ro = { .steps = 6 + (uint64_t)over, .prompt_length = 3 };
        fx f;
        gqa_decoder_dims(&f, false, true);
        ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, NULL),
                         over ? OAC_ERUNTIME : OAC_OK);
        ck_assert_uint_eq(f.e->steps_completed, 6);
        ck_assert_uint_eq(diag_count(f.d, OAC_UNSUPPORTED_OPERATOR), 0);
        if (over) {
            const oac_diag *d = diag_expect_run(f.d, OAC_CAPACITY_OVERFLOW, "capacity-overflow");
            ck_assert_str_eq(d->node, "gqa");
            ck_assert_ptr_nonnull(strstr(d->message, "the update leaves 9 positions (input 6 "));
        }
        fx_end(&f);
    }
}
END_TEST

START_TEST(gqa_stock_against_annotated)
{
    /* The same tokens: the stock decoder (GroupQueryAttention without a
     * shared buffer, its presents fed back) computes what the annotated
     * one does in place, and copies more every step. */
    static const int64_t tokens[4] = { 7, 30, 2, 19 };
    static const oac_kernel_override ov = { "", "MatMul", record_gqa_lm_head };
    oac_run_hooks h = { .overrides = &ov, .n_overrides = 1 };
    float in_place[6][G_VOCAB];
    for (int stock = 0; stock < 2; stock++) {
        fx f;
        n_glogits = 0;
        gqa_decoder(&f, !stock);
        oac_run_opts ro = { .steps = 6, .prompt_length = 2, .tokens = tokens, .n_tokens = 4 };
        ck_assert_int_eq(fx_check_run(&f, NULL, 0, NULL, 0, &ro, &h), OAC_OK);
        ck_assert_int_eq(n_glogits, 6);
        for (int k = 0; k < 6; k++) {
            uint64_t c = f.e->per_step[k].copied_bytes;
            if (!stock) {
                ck_assert_uint_eq(c, 0);
                memcpy(in_place[k], glogits[k], sizeof in_place[k]);
                continue;
            }
            ck_assert_uint_gt(c, 0);
            if (k)
                ck_assert_uint_gt(c, f.e->per_step[k - 1].copied_bytes);
            for (int v = 0; v < G_VOCAB; v++)
                ck_assert_msg(fabsf(in_place[k][v] - glogits[k][v]) <= 2e-3f,
                              "step %d logit %d: %g in place, %g stock", k + 1, v,
                              in_place[k][v], glogits[k][v]);
        }
        fx_end(&f);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("decoder");
    TCase *tc = tcase_create("decoder");
    tcase_add_test(tc, prompt_then_one_token);
    tcase_add_test(tc, default_tokens_count_up);
    tcase_add_test(tc, batch_from_dim);
    tcase_add_test(tc, run_dims_first_step);
    tcase_add_test(tc, past_length_null_without_loop);
    tcase_add_test(tc, input_file_is_not_driven);
    tcase_add_test(tc, dim_on_a_driven_symbol);
    tcase_add_test(tc, static_sequence_axis);
    tcase_add_test(tc, type_the_loop_cannot_feed);
    tcase_add_test(tc, symbol_with_two_meanings);
    tcase_add_test(tc, stock_twin_grows);
    tcase_add_test(tc, annotated_copies_nothing);
    tcase_add_test(tc, analysis_without_the_loops_dims);
    tcase_add_test(tc, stock_feed_back_computes_what_in_place_does);
    tcase_add_test(tc, stock_scatter_copies_every_step);
    tcase_add_test(tc, config_names_inputs_and_pairs);
    tcase_add_test(tc, gqa_decoder_in_place_and_past_its_capacity);
    tcase_add_test(tc, gqa_unannotated_one_buffer_past_its_capacity);
    tcase_add_test(tc, gqa_stock_against_annotated);
    suite_add_tcase(s, tc);
    return s;
}

/* models.c: the example models and their expected diagnostics.
 *
 * Owns the table of examples/models.h: one builder per model, each valid
 * model next to a `_broken` twin that breaks exactly one rule of contract
 * section 3, so every row says both what the checker must accept and
 * what it must report.  Operators are those of contract section 2
 * (CacheUpdate, PagedCacheUpdate, TensorScatter) plus ONNX control flow
 * and local functions.
 *
 * Invariants:
 *  1. Valid rows respect the contract's operand rules: onnx_alias is
 *     imported (the builder's default), positions and page ids are INT64
 *     scalars, values have the cache's type and rank, every graph or
 *     function output that must-aliases an input names its root in
 *     alias_of.
 *  2. A twin differs from its model in one place, and its expected codes
 *     are the ones that one change causes.
 *  3. No main(): tests link this file.  Builders only call the builder
 *     API, so their failures are the builder's sticky ones.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "models.h"

/* Dense caches of section 2: [2, batch, heads, capacity, head_size]. */
#define CACHE_DIMS "2,batch,heads,max_length,head_size"
#define VALUES_DIMS "2,batch,heads,new_length,head_size"

/* name = CacheUpdate(cache, values, position), axis -2, aliased when
 * alias is set (the contract's spelling of an in-place update). */
static Onnx__NodeProto *cache_update(oac_gb *g, const char *name, const char *cache,
                                     const char *values, const char *position,
                                     const char *out, bool alias)
{
    char inputs[256];
    snprintf(inputs, sizeof inputs, "%s,%s,%s", cache, values, position);
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", name, inputs, out);
    oac_node_attr_int(g, n, "axis", -2);
    if (alias)
        oac_node_alias(g, n, 0, 0, 1);
    return n;
}

/* The inputs every dense example shares: a READ_WRITE cache, the new
 * values and the scalar position. */
static oac_gb *dense_inputs(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "cache", OAC_T_FLOAT16, CACHE_DIMS), 1);
    oac_gb_input(g, "values", OAC_T_FLOAT16, VALUES_DIMS);
    oac_gb_input(g, "position", OAC_T_INT64, "");
    return g;
}

/* ---- dense_cache ------------------------------------------------------ */

static void dense(oac_mb *mb, const char *alias_of)
{
    oac_gb *g = dense_inputs(mb);
    cache_update(g, "update", "cache", "values", "position", "updated_cache", true);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE_DIMS), alias_of);
}

static void build_dense_cache(oac_mb *mb) { dense(mb, "cache"); }
/* The output names the values, not the cache its update aliases. */
static void build_dense_cache_broken(oac_mb *mb) { dense(mb, "values"); }

/* No output_alias and no alias_of: valid, but a runtime may allocate a
 * second cache. */
static void build_dense_cache_implied(oac_mb *mb)
{
    oac_gb *g = dense_inputs(mb);
    cache_update(g, "update", "cache", "values", "position", "updated_cache", false);
    oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE_DIMS);
}

/* The prototype convention in metadata_props instead of the fields. */
static void build_metadata_alias(oac_mb *mb)
{
    oac_gb *g = dense_inputs(mb);
    Onnx__NodeProto *n = cache_update(g, "update", "cache", "values", "position",
                                      "updated_cache", false);
    oac_node_meta(g, n, "output_alias", "0:0");
    oac_vi_meta(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE_DIMS),
                "alias_of", "cache");
}

/* ---- chained_updates -------------------------------------------------- */

static void chained(oac_mb *mb, const char *alias_of)
{
    oac_gb *g = dense_inputs(mb);
    cache_update(g, "update1", "cache", "values", "position", "u1", true);
    cache_update(g, "update2", "u1", "values", "position", "u2", true);
    oac_vi_alias_of(g, oac_gb_output(g, "u2", OAC_T_FLOAT16, CACHE_DIMS), alias_of);
}

static void build_chained_updates(oac_mb *mb) { chained(mb, "cache"); }
/* "u1" is a member of the class, but a boundary must name its root. */
static void build_chained_updates_broken(oac_mb *mb) { chained(mb, "u1"); }

/* ---- if_branches ------------------------------------------------------ */

static void if_branches(oac_mb *mb, bool broken)
{
    oac_gb *g = dense_inputs(mb);
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "branch", "cond", "updated_cache");
    oac_gb *then_g = oac_node_attr_graph(g, n, "then_branch", "then_update");
    cache_update(then_g, "then_update", "cache", "values", "position", "then_cache", true);
    oac_gb_output(then_g, "then_cache", OAC_T_FLOAT16, CACHE_DIMS);
    oac_gb *else_g = oac_node_attr_graph(g, n, "else_branch", "else_update");
    if (broken)   /* a copy: this branch returns a value of no alias root */
        oac_gb_node(else_g, "Identity", NULL, "else_copy", "cache", "else_cache");
    else
        cache_update(else_g, "else_update", "cache", "values", "position", "else_cache", true);
    oac_gb_output(else_g, "else_cache", OAC_T_FLOAT16, CACHE_DIMS);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE_DIMS), "cache");
}

static void build_if_branches(oac_mb *mb) { if_branches(mb, false); }
static void build_if_branches_broken(oac_mb *mb) { if_branches(mb, true); }

/* ---- loop_cache -------------------------------------------------------- */

static void loop_cache(oac_mb *mb, bool broken)
{
    oac_gb *g = dense_inputs(mb);
    oac_gb_input(g, "trip_count", OAC_T_INT64, "");
    /* Loop(M, cond omitted, cache): carried value 0 is node input 2. */
    Onnx__NodeProto *n = oac_gb_node(g, "Loop", NULL, "steps", "trip_count,,cache", "final_cache");
    oac_node_alias(g, n, 0, 2, 1);
    oac_gb *body = oac_node_attr_graph(g, n, "body", "step");
    oac_gb_input(body, "iter", OAC_T_INT64, "");
    oac_gb_input(body, "cond_in", OAC_T_BOOL, "");
    oac_gb_input(body, "cache_in", OAC_T_FLOAT16, CACHE_DIMS);
    oac_gb_node(body, "Identity", NULL, "keep_going", "cond_in", "cond_out");
    if (broken)   /* body output 1 no longer aliases body input 2 */
        oac_gb_node(body, "Identity", NULL, "copy", "cache_in", "cache_out");
    else
        cache_update(body, "update", "cache_in", "values", "position", "cache_out", true);
    oac_gb_output(body, "cond_out", OAC_T_BOOL, "");
    oac_gb_output(body, "cache_out", OAC_T_FLOAT16, CACHE_DIMS);
    oac_vi_alias_of(g, oac_gb_output(g, "final_cache", OAC_T_FLOAT16, CACHE_DIMS), "cache");
}

static void build_loop_cache(oac_mb *mb) { loop_cache(mb, false); }
static void build_loop_cache_broken(oac_mb *mb) { loop_cache(mb, true); }

/* ---- function_cache ---------------------------------------------------- */

static void function_cache(oac_mb *mb, const char *fn_alias_of)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "UpdateCache", "c,v,p", "u");
    cache_update(f, "update", "c", "v", "p", "u", true);
    /* A function states alias_of on its outputs in its value_info. */
    oac_vi_alias_of(f, oac_gb_value_info(f, "u", OAC_T_FLOAT16, CACHE_DIMS), fn_alias_of);
    oac_gb *g = dense_inputs(mb);
    oac_gb_node(g, "UpdateCache", "local", "call", "cache,values,position", "updated_cache");
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE_DIMS), "cache");
}

static void build_function_cache(oac_mb *mb) { function_cache(mb, "c"); }
/* The function's output names its values input, not the aliased root. */
static void build_function_cache_broken(oac_mb *mb) { function_cache(mb, "v"); }

/* ---- tensor_scatter ---------------------------------------------------- */

static void tensor_scatter(oac_mb *mb, bool broken)
{
    oac_mb_ir_version(mb, 12);
    oac_mb_opset(mb, "", 24);   /* TensorScatter is ONNX opset 24 */
    oac_gb *g = oac_mb_graph(mb);
    /* max_seq_len 16, two new tokens per step. */
    oac_vi_access(g, oac_gb_input(g, "past_cache", OAC_T_FLOAT, "1,4,16,8"), 1);
    oac_gb_input(g, "update", OAC_T_FLOAT, "1,4,2,8");
    if (broken) {
        int64_t at = 15;   /* 15 + 2 > 16: known, and past the capacity */
        oac_gb_constant_i64(g, "write_indices", "1", &at, 1);
    } else {
        oac_gb_input(g, "write_indices", OAC_T_INT64, "1");
    }
    Onnx__NodeProto *n = oac_gb_node(g, "TensorScatter", NULL, "scatter",
                                     "past_cache,update,write_indices", "present_cache");
    oac_node_attr_int(g, n, "axis", -2);
    oac_node_attr_string(g, n, "mode", "linear");
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "present_cache", OAC_T_FLOAT, "1,4,16,8"), "past_cache");
}

static void build_tensor_scatter(oac_mb *mb) { tensor_scatter(mb, false); }
static void build_tensor_scatter_broken(oac_mb *mb) { tensor_scatter(mb, true); }

/* ---- paged_cache ------------------------------------------------------- */

#define PAGE_DIMS "2,2,16,4"     /* [2, heads, page_size, head_size] */

static void paged(oac_mb *mb, int64_t quantized_type)
{
    int32_t allowed[3];
    allowed[0] = oac_mb_quant_linear(mb, "INT4_PAGE", OAC_T_FLOAT, OAC_T_INT4, 4, 1, 0.125f, 0);
    allowed[1] = oac_mb_quant_fp8(mb, "FP8_PAGE", OAC_T_FLOAT);
    allowed[2] = oac_mb_quant_linear(mb, "INT2_PAGE", OAC_T_FLOAT, OAC_T_UINT8, 2, 0, 0.5f, 2);
    oac_gb *g = oac_mb_graph(mb);
    Onnx__ValueInfoProto *c = oac_gb_input_paged(g, "cache", OAC_T_FLOAT, PAGE_DIMS, allowed, 3);
    oac_vi_access(g, c, 1);
    oac_gb_input(g, "page_id", OAC_T_INT64, "");
    oac_gb_input(g, "values", OAC_T_FLOAT, "2,2,1,4");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *n = oac_gb_node(g, "PagedCacheUpdate", "onnx_alias", "update",
                                     "cache,page_id,values,position", "updated_cache");
    oac_node_attr_int(g, n, "quantized_type", quantized_type);
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output_paged(g, "updated_cache", OAC_T_FLOAT, PAGE_DIMS, allowed, 3),
                    "cache");
}

static void build_paged_cache(oac_mb *mb) { paged(mb, 0); }
/* Only three declarations exist: index 7 is out of range. */
static void build_paged_cache_broken(oac_mb *mb) { paged(mb, 7); }

/* ---- toy_decoder ------------------------------------------------------- */

/* Deterministic small weights: a fixed LCG, so every build is the same
 * file and runs compare across builds. */
static void fill(float *w, size_t n, uint32_t seed, float amp)
{
    uint32_t s = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        w[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * 2.0f * amp;
    }
}

/* A rows x cols FLOAT initializer filled through scratch (room for
 * rows * cols floats, or NULL after a builder failure: then nothing). */
static void weight(oac_gb *g, float *scratch, const char *name, int rows, int cols,
                   uint32_t seed)
{
    char dims[32];
    size_t n = (size_t)rows * (size_t)cols;
    if (!scratch)
        return;
    fill(scratch, n, seed, 0.5f);
    snprintf(dims, sizeof dims, "%d,%d", rows, cols);
    oac_gb_init_f32(g, name, dims, scratch, n);
}

static void ints_attr(oac_gb *g, Onnx__NodeProto *n, const char *name,
                      int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t v[4] = { a, b, c, d };
    oac_node_attr_ints(g, n, name, v, 4);
}

/* 1 / sqrt(d) without libm (tests link this file without -lm): Newton's
 * square root converges from 1 for every d >= 1; 0.5 for d = 4. */
static float inv_sqrt(int d)
{
    double x = 1.0;
    for (int i = 0; i < 64; i++)
        x = 0.5 * (x + (double)d / x);
    return (float)(1.0 / x);
}

void oac_example_toy_decoder(oac_mb *mb, int layers, bool aliased)
{
    (void)oac_example_toy_decoder_sized(mb, layers, aliased, OAC_TOY_HEADS,
                                        OAC_TOY_HEAD_SIZE, OAC_TOY_HIDDEN);
}

/* A decoder of `layers` layers (names l<i>_..., caches key_cache_<i> and
 * value_cache_<i>); aliased: caches are READ_WRITE inputs updated in place by
 * CacheUpdate at `position`, attention reads all max_len slots and a
 * mask row (Gather(mask_table, position)) hides the unwritten ones.
 * Otherwise: the ordinary present = Concat(past, new) style.  Both
 * compute the same logits for the same tokens.  Projections are
 * E x (H*D) (q, k, v) and (H*D) x E (o), so hidden need not be
 * heads * head_size; with the toy sizes every tensor, name and value is
 * what oac_example_toy_decoder always wrote. */
int oac_example_toy_decoder_sized(oac_mb *mb, int layers, bool aliased, int heads,
                                  int head_size, int hidden)
{
    if (heads < 1 || head_size < 1 || hidden < 1 || heads > OAC_TOY_MAX_DIM ||
        head_size > OAC_TOY_MAX_DIM || hidden > OAC_TOY_MAX_DIM ||
        heads * head_size > OAC_TOY_MAX_DIM)
        return OAC_EINVAL;
    const int H = heads, D = head_size, E = hidden, HD = heads * head_size,
              L = OAC_TOY_MAX_LEN, V = OAC_TOY_VOCAB;
    oac_gb *g = oac_mb_graph(mb);
    char cache_dims[64], n1[64], n2[64], n3[96], pre[16], dims[32];
    if (aliased)
        snprintf(cache_dims, sizeof cache_dims, "1,%d,%d,%d", H, L, D);
    else
        snprintf(cache_dims, sizeof cache_dims, "1,%d,past_len,%d", H, D);

    /* One scratch buffer for every constant: the largest of them (the
     * builder copies each), from the builder's arena. */
    size_t most = (size_t)E * (size_t)(HD > V ? HD : V);
    if (most < (size_t)L * (size_t)L)
        most = (size_t)L * (size_t)L;
    float *scratch = oac_mb_alloc(mb, most * sizeof *scratch);

    oac_gb_input(g, "input_ids", OAC_T_INT64, "1,1");
    if (aliased)
        oac_gb_input(g, "position", OAC_T_INT64, "");
    for (int l = 0; l < layers; l++) {
        snprintf(n1, sizeof n1, aliased ? "key_cache_%d" : "past_key_%d", l);
        snprintf(n2, sizeof n2, aliased ? "value_cache_%d" : "past_value_%d", l);
        Onnx__ValueInfoProto *k = oac_gb_input(g, n1, OAC_T_FLOAT, cache_dims);
        Onnx__ValueInfoProto *v = oac_gb_input(g, n2, OAC_T_FLOAT, cache_dims);
        if (aliased) {
            oac_vi_access(g, k, 1);
            oac_vi_access(g, v, 1);
        }
    }

    /* Shared constants. */
    if (scratch) {
        fill(scratch, (size_t)V * (size_t)E, 1, 1.0f);
        snprintf(dims, sizeof dims, "%d,%d", V, E);
        oac_gb_init_f32(g, "embedding", dims, scratch, (size_t)V * (size_t)E);
    }
    int64_t s4[4] = { 1, 1, H, D }, s3[3] = { 1, 1, HD };
    oac_gb_init_i64(g, "shape_heads", "4", s4, 4);
    oac_gb_init_i64(g, "shape_hidden", "3", s3, 3);
    float scale = inv_sqrt(D);
    oac_gb_init_f32(g, "scale", "", &scale, 1);
    oac_gb_node(g, "Gather", NULL, "embed", "embedding,input_ids", "h_0");
    if (aliased && scratch) {
        /* Row p: 0 for slots 0..p (written), -1e9 after (still empty). */
        for (int p = 0; p < L; p++)
            for (int j = 0; j < L; j++)
                scratch[p * L + j] = j <= p ? 0.0f : -1e9f;
        snprintf(dims, sizeof dims, "%d,%d", L, L);
        oac_gb_init_f32(g, "mask_table", dims, scratch, (size_t)L * (size_t)L);
    }
    if (aliased)
        oac_gb_node(g, "Gather", NULL, "mask", "mask_table,position", "mask_row");

    for (int l = 0; l < layers; l++) {
        snprintf(pre, sizeof pre, "l%d_", l);
#define NM(buf, s) (snprintf(buf, sizeof buf, "%s%s", pre, s), buf)
        char a[64], b[64], c[64], o[64], node[64];
        const char *proj[3] = { "q", "k", "v" };
        for (int i = 0; i < 3; i++) {
            snprintf(a, sizeof a, "%sW%s", pre, proj[i]);
            weight(g, scratch, a, E, HD, (uint32_t)(10 * l + i + 2));
            snprintf(n3, sizeof n3, "h_%d,%s", l, a);
            snprintf(node, sizeof node, "%s%s_proj", pre, proj[i]);
            oac_gb_node(g, "MatMul", NULL, node, n3, NM(o, proj[i]));
            snprintf(n3, sizeof n3, "%s%s,shape_heads", pre, proj[i]);
            snprintf(b, sizeof b, "%s%s_split", pre, proj[i]);
            snprintf(node, sizeof node, "%s%s_reshape", pre, proj[i]);
            oac_gb_node(g, "Reshape", NULL, node, n3, b);
            snprintf(c, sizeof c, "%s%s_heads", pre, proj[i]);   /* [1,H,1,D] */
            snprintf(node, sizeof node, "%s%s_transpose", pre, proj[i]);
            ints_attr(g, oac_gb_node(g, "Transpose", NULL, node, b, c), "perm", 0, 2, 1, 3);
        }
        /* The caches: in place at position, or by concatenation. */
        char kc[64], vc[64], kin[64], vin[64];
        snprintf(kin, sizeof kin, aliased ? "key_cache_%d" : "past_key_%d", l);
        snprintf(vin, sizeof vin, aliased ? "value_cache_%d" : "past_value_%d", l);
        snprintf(kc, sizeof kc, aliased ? "key_cache_%d_updated" : "present_key_%d", l);
        snprintf(vc, sizeof vc, aliased ? "value_cache_%d_updated" : "present_value_%d", l);
        if (aliased) {
            cache_update(g, NM(node, "key_update"), kin, NM(a, "k_heads"), "position", kc, true);
            cache_update(g, NM(node, "value_update"), vin, NM(a, "v_heads"), "position", vc, true);
        } else {
            snprintf(n3, sizeof n3, "%s,%sk_heads", kin, pre);
            oac_node_attr_int(g, oac_gb_node(g, "Concat", NULL, NM(node, "key_concat"), n3, kc),
                              "axis", 2);
            snprintf(n3, sizeof n3, "%s,%sv_heads", vin, pre);
            oac_node_attr_int(g, oac_gb_node(g, "Concat", NULL, NM(node, "value_concat"), n3, vc),
                              "axis", 2);
        }
        /* Attention: softmax(q k^T * scale [+ mask]) v. */
        ints_attr(g, oac_gb_node(g, "Transpose", NULL, NM(node, "key_t"), kc, NM(a, "key_t")),
                  "perm", 0, 1, 3, 2);
        snprintf(n3, sizeof n3, "%sq_heads,%skey_t", pre, pre);
        oac_gb_node(g, "MatMul", NULL, NM(node, "scores"), n3, NM(a, "scores"));
        snprintf(n3, sizeof n3, "%sscores,scale", pre);
        oac_gb_node(g, "Mul", NULL, NM(node, "scaled"), n3, NM(a, "scaled"));
        const char *logits_in = NM(b, "scaled");
        if (aliased) {
            snprintf(n3, sizeof n3, "%sscaled,mask_row", pre);
            oac_gb_node(g, "Add", NULL, NM(node, "masked"), n3, NM(c, "masked"));
            logits_in = c;
        }
        oac_node_attr_int(g, oac_gb_node(g, "Softmax", NULL, NM(node, "probs"), logits_in,
                                         NM(a, "probs")), "axis", -1);
        snprintf(n3, sizeof n3, "%sprobs,%s", pre, vc);
        oac_gb_node(g, "MatMul", NULL, NM(node, "context"), n3, NM(a, "context"));
        ints_attr(g, oac_gb_node(g, "Transpose", NULL, NM(node, "context_t"), a,
                                 NM(b, "context_t")), "perm", 0, 2, 1, 3);
        snprintf(n3, sizeof n3, "%scontext_t,shape_hidden", pre);
        oac_gb_node(g, "Reshape", NULL, NM(node, "merge"), n3, NM(a, "merged"));
        weight(g, scratch, NM(c, "Wo"), HD, E, (uint32_t)(10 * l + 5));
        snprintf(n3, sizeof n3, "%smerged,%sWo", pre, pre);
        oac_gb_node(g, "MatMul", NULL, NM(node, "out"), n3, NM(a, "attn_out"));
        snprintf(n3, sizeof n3, "h_%d,%sattn_out", l, pre);
        snprintf(o, sizeof o, "h_%d", l + 1);
        oac_gb_node(g, "Add", NULL, NM(node, "residual"), n3, o);
#undef NM
    }
    weight(g, scratch, "W_vocab", E, V, 99);
    snprintf(n3, sizeof n3, "h_%d,W_vocab", layers);
    oac_gb_node(g, "MatMul", NULL, "lm_head", n3, "logits");
    snprintf(dims, sizeof dims, "1,1,%d", V);
    oac_gb_output(g, "logits", OAC_T_FLOAT, dims);
    for (int l = 0; l < layers; l++) {
        char out[64], in[64];
        const char *kv[2] = { "key", "value" };
        for (int i = 0; i < 2; i++) {
            if (aliased) {
                snprintf(in, sizeof in, "%s_cache_%d", kv[i], l);
                snprintf(out, sizeof out, "%s_cache_%d_updated", kv[i], l);
                oac_vi_alias_of(g, oac_gb_output(g, out, OAC_T_FLOAT, cache_dims), in);
            } else {
                snprintf(out, sizeof out, "present_%s_%d", kv[i], l);
                snprintf(in, sizeof in, "1,%d,total_len,%d", H, D);
                oac_gb_output(g, out, OAC_T_FLOAT, in);
            }
        }
    }
    return OAC_OK;
}

static void build_toy_decoder(oac_mb *mb)
{
    oac_example_toy_decoder(mb, OAC_TOY_LAYERS, true);
}

static void build_toy_decoder_concat(oac_mb *mb)
{
    oac_example_toy_decoder(mb, OAC_TOY_LAYERS, false);
}

/* ---- paged_decoder (examples/paged_decoder.c) ------------------------------ */

static void build_paged_decoder(oac_mb *mb) { oac_example_paged_decoder(mb, true, false); }
static void build_paged_decoder_broken(oac_mb *mb) { oac_example_paged_decoder(mb, true, true); }
static void build_paged_decoder_dense(oac_mb *mb) { oac_example_paged_decoder(mb, false, false); }

/* ---- stock_no_annotations ---------------------------------------------- */

/* What any exporter writes: no contract field, no onnx_alias import, and
 * an IR/opset pair even old ONNX checkers accept. */
static void build_stock_no_annotations(oac_mb *mb)
{
    oac_mb_ir_version(mb, 8);
    oac_mb_opset(mb, "", 17);
    oac_mb_opset(mb, "onnx_alias", -1);
    oac_gb *g = oac_mb_graph(mb);
    float w[16], b[4];
    fill(w, 16, 7, 0.5f);
    fill(b, 4, 8, 0.5f);
    oac_gb_input(g, "x", OAC_T_FLOAT, "batch,4");
    oac_gb_init_f32(g, "w", "4,4", w, 16);
    oac_gb_init_f32(g, "b", "4", b, 4);
    oac_gb_node(g, "MatMul", NULL, "project", "x,w", "xw");
    oac_gb_node(g, "Add", NULL, "bias", "xw,b", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "batch,4");
}

/* ---- the table --------------------------------------------------------- */

const oac_example oac_examples[] = {
    { "dense_cache", build_dense_cache, { NULL },
      "CacheUpdate of a READ_WRITE FLOAT16 cache, output alias_of the cache" },
    { "dense_cache_broken", build_dense_cache_broken, { "alias-mismatch", NULL },
      "dense_cache whose output alias_of names the values input" },
    { "dense_cache_implied", build_dense_cache_implied, { "alias-implied", NULL },
      "dense_cache without output_alias: runs out of place (warning)" },
    { "metadata_alias", build_metadata_alias, { "alias-implied", "metadata-alias", NULL },
      "dense_cache stating its aliasing only in metadata_props (warnings)" },
    { "chained_updates", build_chained_updates, { NULL },
      "u1 = CacheUpdate(cache), u2 = CacheUpdate(u1), u2 alias_of the root cache" },
    { "chained_updates_broken", build_chained_updates_broken, { "alias-mismatch", NULL },
      "chained_updates whose output names u1 instead of the root" },
    { "if_branches", build_if_branches, { NULL },
      "If whose branches both update and return the outer cache" },
    { "if_branches_broken", build_if_branches_broken, { "branch-mismatch", NULL },
      "if_branches whose else branch returns a copy" },
    { "loop_cache", build_loop_cache, { NULL },
      "Loop carrying the cache (output_alias {0, 2}), body updates it in place" },
    { "loop_cache_broken", build_loop_cache_broken, { "branch-mismatch", NULL },
      "loop_cache whose body returns a copy of its carried cache" },
    { "function_cache", build_function_cache, { NULL },
      "local function wrapping CacheUpdate, alias_of in its value_info" },
    /* The call inherits alias_of "v": its output then aliases the
     * READ_ONLY input `values`, which is also immutable. */
    { "function_cache_broken", build_function_cache_broken,
      { "alias-mismatch", NULL },
      "function_cache whose function output names its values input" },
    { "tensor_scatter", build_tensor_scatter, { NULL },
      "ONNX TensorScatter (opset 24) updating a READ_WRITE cache in place" },
    { "tensor_scatter_broken", build_tensor_scatter_broken, { "capacity-overflow", NULL },
      "tensor_scatter with constant write_indices 15 + 2 tokens > max_seq_len 16" },
    { "toy_decoder", build_toy_decoder, { NULL },
      "two-layer attention decoder, K/V caches updated in place at position" },
    { "toy_decoder_concat", build_toy_decoder_concat, { "cache-copied", NULL },
      "the same decoder in the ordinary present = Concat(past, new) style" },
    { "paged_cache", build_paged_cache, { NULL },
      "PagedCacheUpdate of a Sequence<QuantizedTensor> cache, INT4/FP8/INT2 pages" },
    { "paged_cache_broken", build_paged_cache_broken, { "page-type-invalid", NULL },
      "paged_cache whose node quantized_type 7 is out of range" },
    { "paged_decoder", build_paged_decoder, { NULL },
      "two-layer decoder over FP16/FP8/INT4/INT2 pages: PagedCacheUpdate then "
      "PagedCacheAttention per layer" },
    { "paged_decoder_broken", build_paged_decoder_broken, { "alias-hazard", NULL },
      "paged_decoder whose first attention reads the cache's pre-update name" },
    { "paged_decoder_dense", build_paged_decoder_dense, { NULL },
      "paged_decoder's dense twin: the same weights, FLOAT16 caches updated by "
      "CacheUpdate" },
    { "stock_no_annotations", build_stock_no_annotations, { NULL },
      "an ordinary model without any contract field" },
};

const size_t oac_examples_count = sizeof oac_examples / sizeof oac_examples[0];

const oac_example *oac_example_find(const char *name)
{
    for (size_t i = 0; i < oac_examples_count; i++)
        if (name && strcmp(oac_examples[i].name, name) == 0)
            return &oac_examples[i];
    return NULL;
}

int oac_example_pack(oac_ctx *ctx, const oac_example *ex, uint8_t **out,
                     size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    oac_mb *mb = oac_mb_new(ctx);
    if (!mb)
        return OAC_ENOMEM;
    ex->build(mb);
    int rc = oac_mb_pack(mb, out, out_len);
    oac_mb_free(mb);
    return rc;
}

int oac_example_write(oac_ctx *ctx, const oac_example *ex, const char *path)
{
    oac_mb *mb = oac_mb_new(ctx);
    if (!mb)
        return OAC_ENOMEM;
    ex->build(mb);
    int rc = oac_mb_write(mb, path);
    oac_mb_free(mb);
    return rc;
}

/* paged_decoder.c: the paged decoder and its dense twin (contract section
 * 11; rows paged_decoder, paged_decoder_dense and paged_decoder_broken of
 * examples/models.c).
 *
 * Owns oac_example_paged_decoder: a two-layer decoder whose K/V caches are
 * FLOAT16 logically.  The paged one keeps each layer's cache as a
 * Sequence<QuantizedTensor> of pages [2, kv_heads, 16, head_size] in the
 * declarations FP16_PAGE (IEEE half), FP8_PAGE (E4M3FN), INT4_PAGE and
 * INT2_PAGE, written by PagedCacheUpdate at (page_id, position) and read by
 * PagedCacheAttention over `length` (= page_id * 16 + position + 1): three
 * graph inputs `run` drives (page_id and position advance with the
 * update, length is the loop's total length).  The dense twin keeps
 * a FLOAT16 cache [2, kv_heads, OAC_PAGED_MAX_LEN, head_size] updated by
 * CacheUpdate at `position` and attends with ONNX operators: grouped
 * heads as rows of one MatMul per kv head, and a mask of the unwritten
 * slots from Range/LessOrEqual/Where.
 *
 * Invariants:
 *  1. Same weights (the same LCG seeds), same graph outputs: `logits`
 *     [1, 1, OAC_PAGED_VOCAB] and one updated cache per layer.
 *  2. Both round the same values to FLOAT16 at the same places (the
 *     query, the new keys and values, the attention output), and compute
 *     the rest in FLOAT, so with every page IEEE half the two differ by
 *     float rounding only (softmax order).
 *  3. The broken row reads the pre-update cache name in layer 0
 *     (alias-hazard), and differs in that one place.
 *  4. No libm (tests link this file without it).
 */
#include <stdio.h>

#include "models.h"

enum { L = 2, H = OAC_PAGED_HEADS, KVH = OAC_PAGED_KV_HEADS, D = OAC_PAGED_HEAD_SIZE,
       E = OAC_PAGED_HIDDEN, V = OAC_PAGED_VOCAB, PS = OAC_PAGED_PAGE_SIZE,
       ML = OAC_PAGED_MAX_LEN, G = H / KVH };

/* The weights: a fixed LCG per seed, in [-amp, amp). */
static void lcg(float *w, size_t n, uint32_t seed, float amp)
{
    uint32_t s = seed * 2654435761u + 777u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        w[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * 2.0f * amp;
    }
}

static void w_init(oac_gb *g, float *scratch, const char *name, int rows, int cols,
                   uint32_t seed, float amp)
{
    char dims[32];
    if (!scratch)
        return;
    lcg(scratch, (size_t)rows * (size_t)cols, seed, amp);
    snprintf(dims, sizeof dims, "%d,%d", rows, cols);
    oac_gb_init_f32(g, name, dims, scratch, (size_t)rows * (size_t)cols);
}

static void shape(oac_gb *g, const char *name, int64_t a, int64_t b, int64_t c,
                  int64_t d, size_t n)
{
    int64_t v[4] = { a, b, c, d };
    char dims[8];
    snprintf(dims, sizeof dims, "%zu", n);
    oac_gb_init_i64(g, name, dims, v, n);
}

static Onnx__NodeProto *node(oac_gb *g, const char *op, const char *name,
                             const char *in, const char *out)
{
    return oac_gb_node(g, op, NULL, name, in, out);
}

/* An operator of domain onnx_alias. */
static Onnx__NodeProto *alias_node(oac_gb *g, const char *op, const char *name,
                                   const char *in, const char *out)
{
    return oac_gb_node(g, op, "onnx_alias", name, in, out);
}

static void cast(oac_gb *g, const char *name, const char *in, const char *out,
                 int64_t to)
{
    oac_node_attr_int(g, node(g, "Cast", name, in, out), "to", to);
}

/* 1 / sqrt(d) by Newton's iteration (no libm). */
static float rsqrt(int d)
{
    double x = 1.0;
    for (int i = 0; i < 64; i++)
        x = 0.5 * (x + (double)d / x);
    return (float)(1.0 / x);
}

/* Dense attention of layer l: q16 [KVH, G, D] rounded, cache u
 * [2, KVH, ML, D] FLOAT16; out "l<l>_att" [KVH, G, D] FLOAT, rounded
 * through FLOAT16 as the paged kernel's output is. */
static void dense_attention(oac_gb *g, const char *p)
{
    char a[64], b[64], c[96], nm[64];
#define N(buf, s) (snprintf(buf, sizeof buf, "%s%s", p, s), buf)
    snprintf(c, sizeof c, "%su,zero", p);
    oac_node_attr_int(g, node(g, "Gather", N(nm, "k_gather"), c, N(a, "k16")), "axis", 0);
    snprintf(c, sizeof c, "%su,one", p);
    oac_node_attr_int(g, node(g, "Gather", N(nm, "v_gather"), c, N(a, "v16")), "axis", 0);
    cast(g, N(nm, "k_cast"), N(a, "k16"), N(b, "kf"), OAC_T_FLOAT);
    cast(g, N(nm, "v_cast"), N(a, "v16"), N(b, "vf"), OAC_T_FLOAT);
    Onnx__NodeProto *t = node(g, "Transpose", N(nm, "k_t"), N(a, "kf"), N(b, "kt"));
    int64_t perm[3] = { 0, 2, 1 };
    oac_node_attr_ints(g, t, "perm", perm, 3);
    snprintf(c, sizeof c, "%sqr,%skt", p, p);
    node(g, "MatMul", N(nm, "scores"), c, N(a, "scores"));
    snprintf(c, sizeof c, "%sscores,scale", p);
    node(g, "Mul", N(nm, "scaled"), c, N(a, "scaled"));
    snprintf(c, sizeof c, "%sscaled,mask", p);
    node(g, "Add", N(nm, "masked"), c, N(a, "masked"));
    oac_node_attr_int(g, node(g, "Softmax", N(nm, "probs"), N(a, "masked"), N(b, "probs")),
                      "axis", -1);
    snprintf(c, sizeof c, "%sprobs,%svf", p, p);
    node(g, "MatMul", N(nm, "context"), c, N(a, "ctx"));
    cast(g, N(nm, "ctx_round"), N(a, "ctx"), N(b, "ctx16"), OAC_T_FLOAT16);
    cast(g, N(nm, "ctx_back"), N(a, "ctx16"), N(b, "att"), OAC_T_FLOAT);
#undef N
}

/* The inputs, shared constants and the mask or length of the step. */
static void step_inputs(oac_gb *g, bool paged, const int32_t *allowed)
{
    char name[32], dims[48];
    oac_gb_input(g, "input_ids", OAC_T_INT64, "1,1");
    if (paged)
        oac_gb_input(g, "page_id", OAC_T_INT64, "");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    for (int l = 0; l < L; l++) {
        snprintf(name, sizeof name, "cache_%d", l);
        if (paged) {
            snprintf(dims, sizeof dims, "2,%d,%d,%d", KVH, PS, D);
            oac_vi_access(g, oac_gb_input_paged(g, name, OAC_T_FLOAT16, dims, allowed, 4), 1);
        } else {
            snprintf(dims, sizeof dims, "2,%d,%d,%d", KVH, ML, D);
            oac_vi_access(g, oac_gb_input(g, name, OAC_T_FLOAT16, dims), 1);
        }
    }
    int64_t one = 1, zero = 0, ml = ML;
    oac_gb_init_i64(g, "one", "", &one, 1);
    oac_gb_init_i64(g, "zero", "", &zero, 1);
    if (paged) {
        /* the valid positions, page_id * page_size + position + 1: the run
         * drives it (the loop's total length) */
        oac_gb_input(g, "length", OAC_T_INT64, "");
        return;
    }
    float scale = rsqrt(D), z = 0.0f, neg = -1e9f;
    oac_gb_init_f32(g, "scale", "", &scale, 1);
    oac_gb_init_f32(g, "mask_zero", "", &z, 1);
    oac_gb_init_f32(g, "mask_neg", "", &neg, 1);
    oac_gb_init_i64(g, "max_len", "", &ml, 1);
    node(g, "Range", "slots", "zero,max_len,one", "slots");
    node(g, "LessOrEqual", "written", "slots,position", "written");
    node(g, "Where", "mask", "written,mask_zero,mask_neg", "mask");
}

/* Layer l from h_<l> to h_<l+1>. */
static void layer(oac_gb *g, float *scratch, int l, bool paged, bool broken)
{
    char p[16], a[64], b[64], c[96], nm[64];
    snprintf(p, sizeof p, "l%d_", l);
#define N(buf, s) (snprintf(buf, sizeof buf, "%s%s", p, s), buf)
    const char *proj[3] = { "q", "k", "v" };
    for (int i = 0; i < 3; i++) {
        snprintf(a, sizeof a, "%sW%s", p, proj[i]);
        w_init(g, scratch, a, E, i ? KVH * D : H * D, (uint32_t)(10 * l + i + 2), 0.25f);
        snprintf(c, sizeof c, "h_%d,%s", l, a);
        snprintf(nm, sizeof nm, "%s%s_proj", p, proj[i]);
        snprintf(b, sizeof b, "%s%s", p, proj[i]);
        node(g, "MatMul", nm, c, b);
    }
    /* new keys and values [2, KVH, 1, D], rounded to FLOAT16 */
    snprintf(c, sizeof c, "%sk,shape_kv", p);
    node(g, "Reshape", N(nm, "k_heads"), c, N(a, "k_heads"));
    snprintf(c, sizeof c, "%sv,shape_kv", p);
    node(g, "Reshape", N(nm, "v_heads"), c, N(a, "v_heads"));
    snprintf(c, sizeof c, "%sk_heads,%sv_heads", p, p);
    oac_node_attr_int(g, node(g, "Concat", N(nm, "kv"), c, N(a, "kv")), "axis", 0);
    cast(g, N(nm, "kv_cast"), N(a, "kv"), N(b, "kv16"), OAC_T_FLOAT16);
    /* the query, rounded to FLOAT16 */
    snprintf(c, sizeof c, "%sq,%s", p, paged ? "shape_q" : "shape_qg");
    node(g, "Reshape", N(nm, "q_heads"), c, N(a, "q_heads"));
    cast(g, N(nm, "q_cast"), N(a, "q_heads"), N(b, "q16"), OAC_T_FLOAT16);
    char cache[16], upd[24];
    snprintf(cache, sizeof cache, "cache_%d", l);
    snprintf(upd, sizeof upd, "%su", p);
    Onnx__NodeProto *u;
    if (paged) {
        snprintf(c, sizeof c, "%s,page_id,%skv16,position", cache, p);
        u = alias_node(g, "PagedCacheUpdate", N(nm, "update"), c, upd);
        snprintf(c, sizeof c, "%sq16,%s,length", p, broken ? cache : upd);
        Onnx__NodeProto *at = alias_node(g, "PagedCacheAttention", N(nm, "attention"), c,
                                   N(a, "att16"));
        oac_node_attr_int(g, at, "num_heads", H);
        oac_node_attr_int(g, at, "kv_num_heads", KVH);
        oac_node_attr_float(g, at, "scale", rsqrt(D));
        cast(g, N(nm, "att_cast"), N(a, "att16"), N(b, "att"), OAC_T_FLOAT);
    } else {
        snprintf(c, sizeof c, "%s,%skv16,position", cache, p);
        u = alias_node(g, "CacheUpdate", N(nm, "update"), c, upd);
        oac_node_attr_int(g, u, "axis", -2);
        cast(g, N(nm, "q_back"), N(a, "q16"), N(b, "qr"), OAC_T_FLOAT);
        dense_attention(g, p);
    }
    oac_node_alias(g, u, 0, 0, 1);
    snprintf(c, sizeof c, "%satt,shape_hidden", p);
    node(g, "Reshape", N(nm, "merge"), c, N(a, "merged"));
    w_init(g, scratch, N(b, "Wo"), H * D, E, (uint32_t)(10 * l + 5), 0.25f);
    snprintf(c, sizeof c, "%smerged,%sWo", p, p);
    node(g, "MatMul", N(nm, "out"), c, N(a, "attn_out"));
    snprintf(c, sizeof c, "h_%d,%sattn_out", l, p);
    snprintf(b, sizeof b, "h_%d", l + 1);
    node(g, "Add", N(nm, "residual"), c, b);
#undef N
}

void oac_example_paged_decoder(oac_mb *mb, bool paged, bool broken)
{
    int32_t allowed[4];
    if (paged) {
        allowed[0] = oac_mb_quant_float(mb, "FP16_PAGE", OAC_T_FLOAT16, 1, 5, 10, 15, 1, 1);
        allowed[1] = oac_mb_quant_fp8(mb, "FP8_PAGE", OAC_T_FLOAT16);
        allowed[2] = oac_mb_quant_linear(mb, "INT4_PAGE", OAC_T_FLOAT16, OAC_T_INT4, 4, 1,
                                         OAC_PAGED_INT4_SCALE, 0);
        allowed[3] = oac_mb_quant_linear(mb, "INT2_PAGE", OAC_T_FLOAT16, OAC_T_UINT8, 2, 0,
                                         OAC_PAGED_INT2_SCALE, 2);
    }
    oac_gb *g = oac_mb_graph(mb);
    step_inputs(g, paged, allowed);
    size_t most = (size_t)V * E > (size_t)E * H * D ? (size_t)V * E : (size_t)E * H * D;
    float *scratch = oac_mb_alloc(mb, most * sizeof *scratch);
    char dims[32];
    if (scratch) {
        lcg(scratch, (size_t)V * E, 1, 1.0f);
        snprintf(dims, sizeof dims, "%d,%d", V, E);
        oac_gb_init_f32(g, "embedding", dims, scratch, (size_t)V * E);
    }
    shape(g, "shape_kv", 1, KVH, 1, D, 4);
    shape(g, "shape_q", H, 1, D, 0, 3);
    shape(g, "shape_qg", KVH, G, D, 0, 3);
    shape(g, "shape_hidden", 1, 1, H * D, 0, 3);
    node(g, "Gather", "embed", "embedding,input_ids", "h_0");
    for (int l = 0; l < L; l++)
        layer(g, scratch, l, paged, broken && l == 0);
    w_init(g, scratch, "W_vocab", E, V, 99, 0.5f);
    snprintf(dims, sizeof dims, "h_%d,W_vocab", L);
    node(g, "MatMul", "lm_head", dims, "logits");
    snprintf(dims, sizeof dims, "1,1,%d", V);
    oac_gb_output(g, "logits", OAC_T_FLOAT, dims);
    for (int l = 0; l < L; l++) {
        char out[16], in[16];
        snprintf(in, sizeof in, "cache_%d", l);
        snprintf(out, sizeof out, "l%d_u", l);
        if (paged) {
            snprintf(dims, sizeof dims, "2,%d,%d,%d", KVH, PS, D);
            oac_vi_alias_of(g, oac_gb_output_paged(g, out, OAC_T_FLOAT16, dims, allowed, 4),
                            in);
        } else {
            snprintf(dims, sizeof dims, "2,%d,%d,%d", KVH, ML, D);
            oac_vi_alias_of(g, oac_gb_output(g, out, OAC_T_FLOAT16, dims), in);
        }
    }
}

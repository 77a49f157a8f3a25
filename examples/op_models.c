/* op_models.c: the operator-form models of op_models.h.
 *
 * Owns one builder per form of each operator of contract section 10:
 * com.microsoft Attention (growing, shared buffer), EmbedLayerNormalization
 * (with and without segments), MultiHeadAttention (growing, shared,
 * growing with key lengths),
 * DecoderMaskedMultiHeadAttention (shared), SparseAttention,
 * PagedAttention, ONNX Attention (growing; opset 23) and ONNX Log, Max,
 * Min, each in FLOAT and FLOAT16.  Shared buffers are READ_WRITE graph
 * inputs of OAC_OPM_CAP positions, declared in place (output_alias,
 * alias_of); past lengths the operators want are computed in the graph
 * from the driven total_sequence_length (total - 1: one token a step).
 * Invariants: weights are deterministic (a fixed linear congruential
 * sequence); no main() (tests link this file).
 */
#include <stdio.h>
#include <string.h>

#include "half.h"
#include "op_models.h"

#define MS "com.microsoft"

/* n deterministic values in [-amp, amp) as an initializer of elem. */
static void init(oac_gb *g, const char *name, int32_t elem, const char *dims, size_t n,
                 uint32_t seed, float amp)
{
    float f[512];
    uint16_t h[512];
    uint32_t s = seed * 2654435761u + 12345u;
    if (n > 512)
        n = 512;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        f[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * 2.0f * amp;
        h[i] = oac_f32_to_f16(f[i]);
    }
    if (elem == OAC_T_FLOAT16)
        oac_gb_init_raw(g, name, elem, dims, h, n * sizeof *h);
    else
        oac_gb_init_raw(g, name, elem, dims, f, n * sizeof *f);
}

static void init_i32(oac_gb *g, const char *name, const char *dims, const int32_t *v,
                     size_t n)
{
    oac_gb_init_raw(g, name, OAC_T_INT32, dims, v, n * sizeof *v);
}

/* A READ_WRITE cache input and the output that aliases it. */
static void shared(oac_gb *g, const char *past, const char *present, int32_t elem,
                   const char *dims)
{
    oac_vi_access(g, oac_gb_input(g, past, elem, dims), 1);
    oac_vi_alias_of(g, oac_gb_output(g, present, elem, dims), past);
}

/* psl = total_sequence_length - 1 (INT32, dims "1" when shaped). */
static void past_len(oac_gb *g, bool shaped)
{
    static const int32_t one = 1;
    static const int64_t shape1 = 1;
    oac_gb_input(g, "total_sequence_length", OAC_T_INT32, "");
    init_i32(g, "one", "", &one, 1);
    oac_gb_node(g, "Sub", NULL, "psl_sub", "total_sequence_length,one",
                shaped ? "psl0" : "psl");
    if (shaped) {
        oac_gb_init_i64(g, "shape1", "1", &shape1, 1);
        oac_gb_node(g, "Reshape", NULL, "psl_shape", "psl0,shape1", "psl");
    }
}

/* ---- com.microsoft Attention --------------------------------------------- */

static void ms_attention(oac_mb *mb, int32_t t, bool share)
{
    oac_mb_opset(mb, MS, 1);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", t, "1,1,8");
    oac_gb_input(g, "attention_mask", OAC_T_INT32, "1,total_seq");
    init(g, "w", t, "8,24", 192, 1, 0.5f);
    init(g, "b", t, "24", 24, 2, 0.2f);
    if (share) {
        shared(g, "past", "present", t, "2,1,2,8,4");
        past_len(g, true);
    } else {
        oac_gb_input(g, "past", t, "2,1,2,past_seq,4");
        oac_gb_output(g, "present", t, "2,1,2,total_seq,4");
    }
    Onnx__NodeProto *n = oac_gb_node(g, "Attention", MS, "attn",
                                     share ? "x,w,b,attention_mask,past,,psl"
                                           : "x,w,b,attention_mask,past", "y,present");
    oac_node_attr_int(g, n, "num_heads", 2);
    oac_node_attr_int(g, n, "unidirectional", 1);
    if (share) {
        oac_node_attr_int(g, n, "past_present_share_buffer", 1);
        oac_node_alias(g, n, 1, 4, 1);
    }
    oac_gb_output(g, "y", t, "1,1,8");
}

static void build_ms_attention(oac_mb *mb, int32_t t) { ms_attention(mb, t, false); }
static void build_ms_attention_shared(oac_mb *mb, int32_t t) { ms_attention(mb, t, true); }

/* ---- EmbedLayerNormalization ---------------------------------------------- */

static void embed(oac_mb *mb, int32_t t, bool seg)
{
    oac_mb_opset(mb, MS, 1);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "input_ids", OAC_T_INT32, "1,seq");
    oac_gb_input(g, "position_ids", OAC_T_INT32, "1,seq");
    if (seg)
        oac_gb_input(g, "segment_ids", OAC_T_INT32, "1,seq");
    init(g, "word", t, "16,8", 128, 3, 1.0f);
    init(g, "pos", t, "16,8", 128, 4, 1.0f);
    init(g, "segs", t, "3,8", 24, 5, 1.0f);
    init(g, "gamma", t, "8", 8, 6, 1.0f);
    init(g, "beta", t, "8", 8, 7, 0.5f);
    Onnx__NodeProto *n = oac_gb_node(g, "EmbedLayerNormalization", MS, "eln",
                                     seg ? "input_ids,segment_ids,word,pos,segs,gamma,beta,,"
                                           "position_ids"
                                         : "input_ids,,word,pos,,gamma,beta,,position_ids",
                                     "y,mask_index,sum");
    oac_node_attr_float(g, n, "epsilon", 1e-5f);
    oac_gb_output(g, "y", t, "1,seq,8");
    oac_gb_output(g, "mask_index", OAC_T_INT32, "1");
    oac_gb_output(g, "sum", t, "1,seq,8");
}

static void build_embed(oac_mb *mb, int32_t t) { embed(mb, t, true); }
static void build_embed_noseg(oac_mb *mb, int32_t t) { embed(mb, t, false); }

/* ---- MultiHeadAttention, DecoderMaskedMultiHeadAttention ------------------- */

/* The forms: growing (stock past, present = past ++ new), growing with
 * key_padding_mask of shape (batch) (key lengths over past + new,
 * max(total - 1, 1), so from the second step the newest key is masked),
 * and the shared buffers of MultiHeadAttention and
 * DecoderMaskedMultiHeadAttention. */
typedef enum { MHA_GROWING, MHA_LENS, MHA_SHARED, DMMHA_SHARED } mha_form;

static void mha(oac_mb *mb, int32_t t, mha_form form)
{
    bool share = form == MHA_SHARED || form == DMMHA_SHARED, dmmha = form == DMMHA_SHARED;
    oac_mb_opset(mb, MS, 1);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "q", t, "1,1,8");
    oac_gb_input(g, "k", t, "1,1,8");
    oac_gb_input(g, "v", t, "1,1,8");
    if (share) {
        shared(g, "past_key", "present_key", t, "1,2,8,4");
        shared(g, "past_value", "present_value", t, "1,2,8,4");
        past_len(g, dmmha);
    } else {
        oac_gb_input(g, "past_key", t, "1,2,past_seq,4");
        oac_gb_input(g, "past_value", t, "1,2,past_seq,4");
        oac_gb_output(g, "present_key", t, "1,2,total_seq,4");
        oac_gb_output(g, "present_value", t, "1,2,total_seq,4");
    }
    if (form == MHA_LENS) {
        past_len(g, true);
        oac_gb_node(g, "Max", NULL, "lens_max", "psl,one", "lens");
    }
    static const char *const ins[] = {
        [MHA_GROWING] = "q,k,v,,,,past_key,past_value",
        [MHA_LENS] = "q,k,v,,lens,,past_key,past_value",
        [MHA_SHARED] = "q,k,v,,,,past_key,past_value,psl",
        [DMMHA_SHARED] = "q,k,v,attention_mask,,past_key,past_value,psl",
    };
    Onnx__NodeProto *n;
    if (dmmha) {
        oac_gb_input(g, "attention_mask", OAC_T_INT32, "1,total_seq");
        n = oac_gb_node(g, "DecoderMaskedMultiHeadAttention", MS, "attn", ins[form],
                        "y,present_key,present_value");
        oac_node_attr_int(g, n, "past_present_share_buffer", 1);
    } else {
        n = oac_gb_node(g, "MultiHeadAttention", MS, "attn", ins[form],
                        "y,present_key,present_value");
        oac_node_attr_int(g, n, "unidirectional", 1);
    }
    oac_node_attr_int(g, n, "num_heads", 2);
    if (share) {
        oac_node_alias(g, n, 1, dmmha ? 5 : 6, 1);
        oac_node_alias(g, n, 2, dmmha ? 6 : 7, 1);
    }
    oac_gb_output(g, "y", t, "1,1,8");
}

static void build_mha(oac_mb *mb, int32_t t) { mha(mb, t, MHA_GROWING); }
static void build_mha_lens(oac_mb *mb, int32_t t) { mha(mb, t, MHA_LENS); }
static void build_mha_shared(oac_mb *mb, int32_t t) { mha(mb, t, MHA_SHARED); }
static void build_dmmha(oac_mb *mb, int32_t t) { mha(mb, t, DMMHA_SHARED); }

/* ---- SparseAttention -------------------------------------------------------- */

static void build_sparse(oac_mb *mb, int32_t t)
{
    /* Head size 8 (ONNX Runtime's CPU kernel wants a multiple of 8).
     * Blocks of 4 positions, 2 block rows over the 8 of the buffer: a
     * lower-triangular layout (row 0: block 0; row 1: blocks 0, 1). */
    static const int32_t rows[3] = { 0, 1, 3 }, cols[3] = { 0, 0, 1 };
    oac_mb_opset(mb, MS, 1);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "q", t, "1,1,16");
    oac_gb_input(g, "k", t, "1,1,8");
    oac_gb_input(g, "v", t, "1,1,8");
    shared(g, "past_key", "present_key", t, "1,1,8,8");
    shared(g, "past_value", "present_value", t, "1,1,8,8");
    oac_gb_input(g, "total_sequence_length", OAC_T_INT32, "");
    static const int64_t shape1 = 1;
    oac_gb_init_i64(g, "shape1", "1", &shape1, 1);
    oac_gb_node(g, "Reshape", NULL, "ktot", "total_sequence_length,shape1", "ktot");
    init_i32(g, "rows", "1,3", rows, 3);
    init_i32(g, "cols", "1,3", cols, 3);
    Onnx__NodeProto *n = oac_gb_node(g, "SparseAttention", MS, "attn",
                                     "q,k,v,past_key,past_value,rows,cols,"
                                     "total_sequence_length,ktot",
                                     "y,present_key,present_value");
    oac_node_attr_int(g, n, "num_heads", 2);
    oac_node_attr_int(g, n, "kv_num_heads", 1);
    oac_node_attr_int(g, n, "sparse_block_size", 4);
    oac_node_alias(g, n, 1, 3, 1);
    oac_node_alias(g, n, 2, 4, 1);
    oac_gb_output(g, "y", t, "1,1,16");
}

/* ---- PagedAttention ----------------------------------------------------------- */

void oac_op_model_paged(oac_mb *mb, int32_t t, int layers, int blocks, int block_size,
                        int width)
{
    static const int32_t cu[2] = { 0, 1 };
    int32_t table[64];
    char dims[32], name[64], in[256], out[128];
    oac_mb_opset(mb, MS, 1);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", t, "1,8");
    past_len(g, true);
    init_i32(g, "cu", "2", cu, 2);
    if (width > 64)
        width = 64;
    for (int i = 0; i < width; i++)
        table[i] = i < blocks ? i : blocks;
    snprintf(dims, sizeof dims, "1,%d", width);
    init_i32(g, "block_table", dims, table, (size_t)width);
    snprintf(dims, sizeof dims, "%d,%d,4", blocks, block_size);
    const char *h = "x";
    for (int l = 0; l < layers; l++) {
        char kc[32], vc[32], kco[32], vco[32], q[32], k[32], y[32];
        snprintf(kc, sizeof kc, "key_cache.%d", l);
        snprintf(vc, sizeof vc, "value_cache.%d", l);
        snprintf(kco, sizeof kco, "key_cache_out.%d", l);
        snprintf(vco, sizeof vco, "value_cache_out.%d", l);
        shared(g, kc, kco, t, dims);
        shared(g, vc, vco, t, dims);
        snprintf(q, sizeof q, "wq.%d", l);
        snprintf(k, sizeof k, "wk.%d", l);
        init(g, q, t, "8,8", 64, 10u + (uint32_t)l, 0.5f);
        init(g, k, t, "8,4", 32, 20u + (uint32_t)l, 0.5f);
        snprintf(name, sizeof name, "q.%d", l);
        snprintf(in, sizeof in, "%s,%s", h, q);
        oac_gb_node(g, "MatMul", NULL, name, in, name);
        snprintf(name, sizeof name, "k.%d", l);
        snprintf(in, sizeof in, "%s,%s", h, k);
        oac_gb_node(g, "MatMul", NULL, name, in, name);
        snprintf(y, sizeof y, "y.%d", l);
        snprintf(in, sizeof in, "q.%d,k.%d,k.%d,%s,%s,cu,psl,block_table", l, l, l, kc, vc);
        snprintf(out, sizeof out, "%s,%s,%s", y, kco, vco);
        snprintf(name, sizeof name, "paged.%d", l);
        Onnx__NodeProto *n = oac_gb_node(g, "PagedAttention", MS, name, in, out);
        oac_node_attr_int(g, n, "num_heads", 2);
        oac_node_attr_int(g, n, "kv_num_heads", 1);
        oac_node_alias(g, n, 1, 3, 1);
        oac_node_alias(g, n, 2, 4, 1);
        h = l + 1 < layers ? oac_mb_strdup(mb, y) : h;
        if (l + 1 == layers)
            oac_gb_output(g, y, t, "1,8");
    }
}

static void build_paged(oac_mb *mb, int32_t t) { oac_op_model_paged(mb, t, 2, 8, 4, 8); }

/* ---- ONNX Attention, Log, Max, Min ------------------------------------------- */

static void build_onnx_attention(oac_mb *mb, int32_t t)
{
    oac_mb_opset(mb, "", 23);
    oac_mb_ir_version(mb, 10);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "q", t, "1,1,8");
    oac_gb_input(g, "k", t, "1,1,4");
    oac_gb_input(g, "v", t, "1,1,4");
    oac_gb_input(g, "past_key", t, "1,1,past_seq,4");
    oac_gb_input(g, "past_value", t, "1,1,past_seq,4");
    Onnx__NodeProto *n = oac_gb_node(g, "Attention", NULL, "attn",
                                     "q,k,v,,past_key,past_value",
                                     "y,present_key,present_value");
    oac_node_attr_int(g, n, "q_num_heads", 2);
    oac_node_attr_int(g, n, "kv_num_heads", 1);
    oac_node_attr_int(g, n, "is_causal", 1);
    oac_gb_output(g, "y", t, "1,1,8");
    oac_gb_output(g, "present_key", t, "1,1,total_seq,4");
    oac_gb_output(g, "present_value", t, "1,1,total_seq,4");
}

static void build_log_max_min(oac_mb *mb, int32_t t)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", t, "2,3");
    init(g, "c", t, "3", 3, 8, 1.0f);
    init(g, "d", t, "2,1", 2, 9, 1.0f);
    oac_gb_node(g, "Abs", NULL, "abs", "x", "ax");
    oac_gb_node(g, "Max", NULL, "max", "ax,c,d", "m");
    oac_gb_node(g, "Log", NULL, "log", "m", "lg");
    oac_gb_node(g, "Min", NULL, "min", "x,c,d", "mn");
    oac_gb_output(g, "lg", t, "2,3");
    oac_gb_output(g, "mn", t, "2,3");
}

#define BOTH(name, fn)                                                     \
    { name, fn, OAC_T_FLOAT }, { name "_f16", fn, OAC_T_FLOAT16 }

const oac_op_model oac_op_models[] = {
    BOTH("ms_attention", build_ms_attention),
    BOTH("ms_attention_shared", build_ms_attention_shared),
    BOTH("embed_layer_norm", build_embed),
    BOTH("embed_layer_norm_noseg", build_embed_noseg),
    BOTH("mha", build_mha),
    BOTH("mha_shared", build_mha_shared),
    BOTH("mha_lens", build_mha_lens),
    BOTH("dmmha_shared", build_dmmha),
    BOTH("sparse_attention", build_sparse),
    BOTH("paged_attention", build_paged),
    BOTH("onnx_attention", build_onnx_attention),
    BOTH("log_max_min", build_log_max_min),
};

const size_t oac_op_models_count = sizeof oac_op_models / sizeof oac_op_models[0];

const oac_op_model *oac_op_model_find(const char *name)
{
    for (size_t i = 0; i < oac_op_models_count; i++)
        if (strcmp(oac_op_models[i].name, name) == 0)
            return &oac_op_models[i];
    return NULL;
}

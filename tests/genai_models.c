/* genai_models.c: the look-alike GenAI decoders of genai_models.h.
 *
 * Shapes follow the exports they imitate (tests/../shared/real-models):
 * GroupQueryAttention and MultiHeadAttention caches BNSH
 * [batch, heads, past_seq_len, 16] with presents [batch, heads,
 * total_seq_len, 16]; the com.microsoft Attention cache combined
 * [2, batch, 4, past_seq_len, 8]; the opset-24 TensorScatter cache
 * [batch, 16, 32] with capacity 16 on axis 1.  Two layers unless the row
 * needs fewer.
 */
#include <stdio.h>
#include <string.h>

#include "genai_models.h"

#define PRESENT "batch,2,total_seq_len,16"

#define GQA_CONFIG(search)                                                   \
    "{\"model\": {\"type\": \"qwen2\", \"context_length\": 128, \"decoder\": {" \
    "\"filename\": \"decoder.onnx\", \"num_hidden_layers\": 2, "             \
    "\"inputs\": {\"input_ids\": \"input_ids\", "                            \
    "\"past_key_names\": \"past_key_values.%d.key\", "                       \
    "\"past_value_names\": \"past_key_values.%d.value\"}, "                  \
    "\"outputs\": {\"logits\": \"logits\", "                                 \
    "\"present_key_names\": \"present.%d.key\", "                            \
    "\"present_value_names\": \"present.%d.value\"}}}, "                     \
    "\"search\": {" search "}}\n"

/* name(L, "past_key_values.%d.key") into buf. */
static const char *at(char *buf, size_t len, const char *fmt, int layer)
{
    snprintf(buf, len, fmt, layer);
    return buf;
}

/* The inputs every attention decoder below shares. */
static oac_gb *decoder(oac_mb *mb, int past_layers, int heads)
{
    oac_mb_opset(mb, "com.microsoft", 1);
    oac_gb *g = oac_mb_graph(mb);
    char n[64], dims[64];
    snprintf(dims, sizeof dims, "batch,%d,past_seq_len,16", heads);
    oac_gb_input(g, "q", OAC_T_FLOAT, "batch,seq,64");
    oac_gb_input(g, "k", OAC_T_FLOAT, "batch,seq,32");
    oac_gb_input(g, "v", OAC_T_FLOAT, "batch,seq,32");
    for (int l = 0; l < past_layers; l++) {
        oac_gb_input(g, at(n, sizeof n, "past_key_values.%d.key", l), OAC_T_FLOAT, dims);
        oac_gb_input(g, at(n, sizeof n, "past_key_values.%d.value", l), OAC_T_FLOAT, dims);
    }
    return g;
}

/* The outputs of layer l: attn_l and its two presents. */
static void presents(oac_gb *g, int l, int heads)
{
    char n[64], dims[64];
    snprintf(dims, sizeof dims, "batch,%d,total_seq_len,16", heads);
    oac_gb_output(g, at(n, sizeof n, "attn_%d", l), OAC_T_FLOAT, "batch,seq,64");
    oac_gb_output(g, at(n, sizeof n, "present.%d.key", l), OAC_T_FLOAT, dims);
    oac_gb_output(g, at(n, sizeof n, "present.%d.value", l), OAC_T_FLOAT, dims);
}

/* ---- GroupQueryAttention (com.microsoft), as GenAI's qwen/llama exports */

static void gqa(oac_mb *mb)
{
    oac_gb *g = decoder(mb, 2, 2);
    oac_gb_input(g, "seqlens_k", OAC_T_INT32, "batch");
    oac_gb_input(g, "total_sequence_length", OAC_T_INT32, "");
    /* Shares total_seq_len with the presents; annotate leaves it. */
    oac_gb_input(g, "attention_mask", OAC_T_INT64, "batch,total_seq_len");
    for (int l = 0; l < 2; l++) {
        char name[32], in[256], out[128];
        snprintf(in, sizeof in, "q,k,v,past_key_values.%d.key,past_key_values.%d.value,"
                 "seqlens_k,total_sequence_length", l, l);
        snprintf(out, sizeof out, "attn_%d,present.%d.key,present.%d.value", l, l, l);
        Onnx__NodeProto *n = oac_gb_node(g, "GroupQueryAttention", "com.microsoft",
                                         at(name, sizeof name, "GQA_%d", l), in, out);
        oac_node_attr_int(g, n, "num_heads", 4);
        oac_node_attr_int(g, n, "kv_num_heads", 2);
        presents(g, l, 2);
    }
}

/* The same with fields no ONNX reader knows, on the model and a node. */
static void gqa_unknown(oac_mb *mb)
{
    static const uint8_t v42[1] = { 42 };
    /* Length-delimited data is packed verbatim, its length first. */
    static const uint8_t bytes[6] = { 5, 'h', 'e', 'l', 'l', 'o' };
    gqa(mb);
    Onnx__ModelProto *m = oac_mb_proto(mb);
    Onnx__NodeProto *n = oac_gb_proto(oac_mb_graph(mb))->node[0];
    ProtobufCMessageUnknownField *u = oac_mb_alloc(mb, 2 * sizeof *u);
    if (!u)
        return;
    u[0] = (ProtobufCMessageUnknownField){
        .tag = 4242, .wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED,
        .len = sizeof bytes, .data = (uint8_t *)bytes };
    u[1] = (ProtobufCMessageUnknownField){
        .tag = 4243, .wire_type = PROTOBUF_C_WIRE_TYPE_VARINT, .len = 1,
        .data = (uint8_t *)v42 };
    m->base.unknown_fields = &u[0];
    m->base.n_unknown_fields = 1;
    n->base.unknown_fields = &u[1];
    n->base.n_unknown_fields = 1;
}

/* ---- MultiHeadAttention (com.microsoft) -------------------------------- */

/* with_len: input 8, past_sequence_length, present (in place). */
static void mha_common(oac_mb *mb, bool with_len)
{
    oac_gb *g = decoder(mb, 2, 4);
    if (with_len)
        oac_gb_input(g, "past_sequence_length", OAC_T_INT32, "1");
    for (int l = 0; l < 2; l++) {
        char name[32], in[256], out[128];
        snprintf(in, sizeof in, "q,k,v,,,,past_key_values.%d.key,past_key_values.%d.value%s",
                 l, l, with_len ? ",past_sequence_length" : "");
        snprintf(out, sizeof out, "attn_%d,present.%d.key,present.%d.value", l, l, l);
        Onnx__NodeProto *n = oac_gb_node(g, "MultiHeadAttention", "com.microsoft",
                                         at(name, sizeof name, "MHA_%d", l), in, out);
        oac_node_attr_int(g, n, "num_heads", 4);
        presents(g, l, 4);
    }
}

static void mha_no_past_len(oac_mb *mb) { mha_common(mb, false); }
static void mha_past_len(oac_mb *mb) { mha_common(mb, true); }

/* ---- com.microsoft Attention on a combined cache (GPT-2) --------------- */

static void gpt2_common(oac_mb *mb, bool share)
{
    static const float w[32 * 96], b[96];
    oac_mb_opset(mb, "com.microsoft", 1);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "batch,seq,32");
    oac_gb_init_f32(g, "w", "32,96", w, 32 * 96);
    oac_gb_init_f32(g, "b", "96", b, 96);
    oac_gb_input(g, "attention_mask", OAC_T_INT32, "batch,total_seq_len");
    for (int l = 0; l < 2; l++) {
        char name[32], past[32], in[128], out[64];
        at(past, sizeof past, "past_%d", l);
        oac_gb_input(g, past, OAC_T_FLOAT, "2,batch,4,past_seq_len,8");
        snprintf(in, sizeof in, "x,w,b,attention_mask,%s", past);
        snprintf(out, sizeof out, "out_%d,present_%d", l, l);
        Onnx__NodeProto *n = oac_gb_node(g, "Attention", "com.microsoft",
                                         at(name, sizeof name, "GptAttention_%d", l), in, out);
        oac_node_attr_int(g, n, "num_heads", 4);
        oac_node_attr_int(g, n, "unidirectional", 1);
        if (share)
            oac_node_attr_int(g, n, "past_present_share_buffer", 1);
        oac_gb_output(g, at(name, sizeof name, "out_%d", l), OAC_T_FLOAT, "batch,seq,32");
        oac_gb_output(g, at(name, sizeof name, "present_%d", l), OAC_T_FLOAT,
                      "2,batch,4,total_seq_len,8");
    }
}

static void gpt2(oac_mb *mb) { gpt2_common(mb, false); }
static void gpt2_share(oac_mb *mb) { gpt2_common(mb, true); }

/* ---- Concat: the present grows (optimum's plain exports) ------------------ */

static void concat(oac_mb *mb)
{
    oac_gb *g = decoder(mb, 2, 2);
    oac_gb_input(g, "k_new", OAC_T_FLOAT, "batch,2,seq,16");
    oac_gb_input(g, "v_new", OAC_T_FLOAT, "batch,2,seq,16");
    for (int l = 0; l < 2; l++) {
        char name[32], in[96], out[32];
        const char *kv[2] = { "key", "value" };
        for (int h = 0; h < 2; h++) {
            snprintf(in, sizeof in, "past_key_values.%d.%s,%s", l, kv[h], h ? "v_new" : "k_new");
            snprintf(out, sizeof out, "present.%d.%s", l, kv[h]);
            snprintf(name, sizeof name, "concat_%d_%s", l, kv[h]);
            Onnx__NodeProto *n = oac_gb_node(g, "Concat", NULL, name, in, out);
            oac_node_attr_int(g, n, "axis", 2);
            oac_gb_output(g, out, OAC_T_FLOAT, PRESENT);
        }
    }
}

/* ---- presents that nothing computes ------------------------------------ */

static void constant_presents(oac_mb *mb)
{
    static const float zeros[2 * 4 * 16];
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "past_key_values.0.key", OAC_T_FLOAT, "1,2,4,16");
    oac_gb_input(g, "past_key_values.0.value", OAC_T_FLOAT, "1,2,4,16");
    oac_gb_input(g, "past_key_values.1.key", OAC_T_FLOAT, "1,2,4,16");
    /* present.0.key: a Constant; present.0.value: an initializer;
     * present.1.key: a graph input. */
    Onnx__NodeProto *c = oac_gb_node(g, "Constant", NULL, "zeros", "", "present.0.key");
    oac_node_attr_tensor(g, c, "value", oac_gb_tensor_raw(g, "z", OAC_T_FLOAT, "1,2,4,16",
                                                          zeros, sizeof zeros));
    oac_gb_init_f32(g, "present.0.value", "1,2,4,16", zeros, 2 * 4 * 16);
    oac_gb_input(g, "present.1.key", OAC_T_FLOAT, "1,2,4,16");
    oac_gb_output(g, "present.0.key", OAC_T_FLOAT, "1,2,4,16");
    oac_gb_output(g, "present.0.value", OAC_T_FLOAT, "1,2,4,16");
    oac_gb_output(g, "present.1.key", OAC_T_FLOAT, "1,2,4,16");
}

/* ---- ONNX TensorScatter + Attention (opset 24): GenAI's static scatter - */

#define SCATTER_CONFIG                                                        \
    "{\"model\": {\"type\": \"mistral\", \"context_length\": 16, \"decoder\": {" \
    "\"inputs\": {\"input_ids\": \"input_ids\", "                              \
    "\"past_key_names\": \"key_cache.%d\", "                                   \
    "\"past_value_names\": \"value_cache.%d\", "                               \
    "\"write_indices\": \"write_indices\", "                                   \
    "\"nonpad_kv_seqlen\": \"nonpad_kv_seqlen\"}, "                            \
    "\"outputs\": {\"present_key_names\": \"updated_key_cache.%d\", "          \
    "\"present_value_names\": \"updated_value_cache.%d\"}}}, "                 \
    "\"search\": {\"max_length\": 16}}\n"

static oac_gb *scatter_common(oac_mb *mb)
{
    oac_mb_ir_version(mb, 11);
    oac_mb_opset(mb, "", 24);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "q", OAC_T_FLOAT, "batch,seq,64");
    oac_gb_input(g, "k_new", OAC_T_FLOAT, "batch,seq,32");
    oac_gb_input(g, "v_new", OAC_T_FLOAT, "batch,seq,32");
    for (int l = 0; l < 2; l++) {
        char n[32];
        oac_gb_input(g, at(n, sizeof n, "key_cache.%d", l), OAC_T_FLOAT, "batch,16,32");
        oac_gb_input(g, at(n, sizeof n, "value_cache.%d", l), OAC_T_FLOAT, "batch,16,32");
    }
    oac_gb_input(g, "write_indices", OAC_T_INT64, "batch");
    oac_gb_input(g, "nonpad_kv_seqlen", OAC_T_INT64, "batch");
    for (int l = 0; l < 2; l++) {
        char name[48], in[96], out[48], att[192];
        const char *kv[2] = { "key", "value" };
        for (int h = 0; h < 2; h++) {
            snprintf(in, sizeof in, "%s_cache.%d,%s,write_indices", kv[h], l,
                     h ? "v_new" : "k_new");
            snprintf(out, sizeof out, "updated_%s_cache.%d", kv[h], l);
            snprintf(name, sizeof name, "scatter_%d_%s", l, kv[h]);
            Onnx__NodeProto *n = oac_gb_node(g, "TensorScatter", NULL, name, in, out);
            oac_node_attr_int(g, n, "axis", 1);
        }
        snprintf(att, sizeof att, "q,updated_key_cache.%d,updated_value_cache.%d,,,,"
                 "nonpad_kv_seqlen", l, l);
        snprintf(out, sizeof out, "attn_%d", l);
        Onnx__NodeProto *a = oac_gb_node(g, "Attention", NULL, at(name, sizeof name,
                                         "attention_%d", l), att, out);
        oac_node_attr_int(g, a, "q_num_heads", 4);
        oac_node_attr_int(g, a, "kv_num_heads", 2);
        oac_gb_output(g, out, OAC_T_FLOAT, "batch,seq,64");
        for (int h = 0; h < 2; h++) {
            snprintf(out, sizeof out, "updated_%s_cache.%d", kv[h], l);
            oac_gb_output(g, out, OAC_T_FLOAT, "batch,16,32");
        }
    }
    return g;
}

static void scatter(oac_mb *mb) { scatter_common(mb); }

/* An alias_of on updated_key_cache.0 that names another value. */
static void scatter_conflict(oac_mb *mb)
{
    oac_gb *g = scatter_common(mb);
    Onnx__GraphProto *p = oac_gb_proto(g);
    for (size_t i = 0; i < p->n_output; i++)
        if (!strcmp(p->output[i]->name, "updated_key_cache.0"))
            oac_vi_alias_of(g, p->output[i], "value_cache.0");
}

/* ---- CacheUpdate chains without config ---------------------------------- */

static oac_gb *cu_inputs(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "past_0", OAC_T_FLOAT, "1,2,past_seq_len,16");
    oac_gb_input(g, "values", OAC_T_FLOAT, "1,2,1,16");
    oac_gb_input(g, "pos", OAC_T_INT64, "");
    return g;
}

/* past_0 -> Identity -> CacheUpdate -> Identity -> present_0. */
static void identity_chain(oac_mb *mb)
{
    oac_gb *g = cu_inputs(mb);
    oac_gb_node(g, "Identity", NULL, "in_link", "past_0", "p1");
    Onnx__NodeProto *u = oac_gb_node(g, "CacheUpdate", "onnx_alias", "update",
                                     "p1,values,pos", "u");
    oac_node_attr_int(g, u, "axis", -2);
    oac_gb_node(g, "Identity", NULL, "out_link", "u", "present_0");
    oac_gb_output(g, "present_0", OAC_T_FLOAT, "1,2,total_seq_len,16");
}

/* The present is the new positions the update writes, not the cache. */
static void delta(oac_mb *mb)
{
    oac_gb *g = cu_inputs(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "1,2,1,16");
    oac_gb_node(g, "Relu", NULL, "k_proj", "x", "present_0");
    Onnx__NodeProto *u = oac_gb_node(g, "CacheUpdate", "onnx_alias", "update",
                                     "past_0,present_0,pos", "u");
    oac_node_attr_int(g, u, "axis", -2);
    oac_gb_node(g, "Relu", NULL, "reader", "u", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,2,past_seq_len,16");
    oac_gb_output(g, "present_0", OAC_T_FLOAT, "1,2,1,16");
}

/* The present is computed from other inputs only. */
static void not_derived(oac_mb *mb)
{
    oac_gb *g = cu_inputs(mb);
    oac_gb_node(g, "Relu", NULL, "other", "values", "present_0");
    oac_gb_node(g, "Relu", NULL, "reader", "past_0", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,2,past_seq_len,16");
    oac_gb_output(g, "present_0", OAC_T_FLOAT, "1,2,1,16");
}

/* A rank-changing Reshape between the update and the present. */
static void reshape_chain(oac_mb *mb)
{
    static const int64_t shape[3] = { 1, 2, -1 };
    oac_gb *g = cu_inputs(mb);
    Onnx__NodeProto *u = oac_gb_node(g, "CacheUpdate", "onnx_alias", "update",
                                     "past_0,values,pos", "u");
    oac_node_attr_int(g, u, "axis", -2);
    oac_gb_init_i64(g, "flat", "3", shape, 3);
    oac_gb_node(g, "Reshape", NULL, "flatten", "u,flat", "present_0");
    oac_gb_output(g, "present_0", OAC_T_FLOAT, "1,2,?");
}

/* past_0 -> CacheUpdate -> CacheUpdate -> present_0, nothing declared:
 * a chain annotate cannot state (one cache operator a pair). */
static void update_chain(oac_mb *mb)
{
    oac_gb *g = cu_inputs(mb);
    Onnx__NodeProto *u = oac_gb_node(g, "CacheUpdate", "onnx_alias", "update1",
                                     "past_0,values,pos", "u1");
    oac_node_attr_int(g, u, "axis", -2);
    u = oac_gb_node(g, "CacheUpdate", "onnx_alias", "update2", "u1,values,pos", "present_0");
    oac_node_attr_int(g, u, "axis", -2);
    oac_gb_output(g, "present_0", OAC_T_FLOAT, "1,2,total_seq_len,16");
}

/* Layer 0 updated in place (CacheUpdate), layer 1 growing (Concat). */
static void mixed(oac_mb *mb)
{
    oac_gb *g = cu_inputs(mb);
    oac_gb_input(g, "past_1", OAC_T_FLOAT, "1,2,past_seq_len,16");
    Onnx__NodeProto *u = oac_gb_node(g, "CacheUpdate", "onnx_alias", "update",
                                     "past_0,values,pos", "present_0");
    oac_node_attr_int(g, u, "axis", -2);
    Onnx__NodeProto *c = oac_gb_node(g, "Concat", NULL, "grow", "past_1,values",
                                     "present_1");
    oac_node_attr_int(g, c, "axis", 2);
    oac_gb_output(g, "present_0", OAC_T_FLOAT, "1,2,total_seq_len,16");
    oac_gb_output(g, "present_1", OAC_T_FLOAT, "1,2,total_seq_len,16");
}

/* present_0 = Pad(past_0) on the sequence axis: the cache grows by one. */
static void pad(oac_mb *mb)
{
    static const int64_t pads[8] = { 0, 0, 0, 0, 0, 0, 1, 0 };
    oac_gb *g = cu_inputs(mb);
    oac_gb_init_i64(g, "pads", "8", pads, 8);
    oac_gb_node(g, "Pad", NULL, "grow", "past_0,pads", "present_0");
    oac_gb_output(g, "present_0", OAC_T_FLOAT, "1,2,total_seq_len,16");
}

/* An LFM2-style recurrent state passed through unchanged beside an
 * in-place CacheUpdate: present_conv.0 = Identity(past_conv.0). */
static void identity_state(oac_mb *mb)
{
    oac_gb *g = cu_inputs(mb);
    oac_gb_input(g, "past_conv.0", OAC_T_FLOAT, "1,64,3");
    oac_gb_node(g, "Identity", NULL, "conv_pass", "past_conv.0", "present_conv.0");
    oac_gb_output(g, "present_conv.0", OAC_T_FLOAT, "1,64,3");
    Onnx__NodeProto *u = oac_gb_node(g, "CacheUpdate", "onnx_alias", "update",
                                     "past_0,values,pos", "present_0");
    oac_node_attr_int(g, u, "axis", -2);
    oac_gb_output(g, "present_0", OAC_T_FLOAT, "1,2,past_seq_len,16");
}

/* Two nodes of one name (ONNX does not forbid it): a Concat growing
 * past_key_values.0.key, then an Identity passing past_conv.0 through.
 * Each pair's findings are the node its trace found, not the first node
 * of that name. */
static void same_node_names(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "past_key_values.0.key", OAC_T_FLOAT, "1,2,past_seq_len,16");
    oac_gb_input(g, "k_new", OAC_T_FLOAT, "1,2,1,16");
    oac_gb_input(g, "past_conv.0", OAC_T_FLOAT, "1,64,3");
    Onnx__NodeProto *c = oac_gb_node(g, "Concat", NULL, "layer", "past_key_values.0.key,k_new",
                                     "present.0.key");
    oac_node_attr_int(g, c, "axis", 2);
    oac_gb_node(g, "Identity", NULL, "layer", "past_conv.0", "present_conv.0");
    oac_gb_output(g, "present.0.key", OAC_T_FLOAT, "1,2,total_seq_len,16");
    oac_gb_output(g, "present_conv.0", OAC_T_FLOAT, "1,64,3");
}

/* No cache at all: y = Relu(x). */
static void no_cache(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "1,4");
    oac_gb_node(g, "Relu", NULL, "relu", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,4");
}

/* An update in place would break a reader of the stale past: the pair
 * holds, but the annotated model fails the check (alias-hazard). */
static void stale_reader(oac_mb *mb)
{
    oac_gb *g = cu_inputs(mb);
    Onnx__NodeProto *u = oac_gb_node(g, "CacheUpdate", "onnx_alias", "update",
                                     "past_0,values,pos", "present_0");
    oac_node_attr_int(g, u, "axis", -2);
    oac_gb_node(g, "Relu", NULL, "stale", "past_0", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,2,past_seq_len,16");
    oac_gb_output(g, "present_0", OAC_T_FLOAT, "1,2,total_seq_len,16");
}

const genai_model genai_models[] = {
    { "gqa", gqa, GQA_CONFIG("\"past_present_share_buffer\": true") },
    { "gqa_beams", gqa, GQA_CONFIG("\"past_present_share_buffer\": true, \"num_beams\": 4") },
    { "gqa_noshare", gqa, GQA_CONFIG("\"past_present_share_buffer\": false") },
    { "gqa_keys_only", gqa,
      "{\"model\": {\"decoder\": {\"inputs\": {\"past_key_names\": "
      "\"past_key_values.%d.key\"}, \"outputs\": {\"present_key_names\": "
      "\"present.%d.key\"}}}, \"search\": {\"past_present_share_buffer\": true}}\n" },
    { "gqa_unknown", gqa_unknown, GQA_CONFIG("\"past_present_share_buffer\": true") },
    { "gqa_names", gqa, NULL },
    { "mha_no_past_len", mha_no_past_len, NULL },
    { "mha_past_len", mha_past_len, NULL },
    { "gpt2", gpt2, NULL },
    { "gpt2_share", gpt2_share, NULL },
    { "concat", concat, NULL },
    { "constant_presents", constant_presents, NULL },
    { "scatter", scatter, SCATTER_CONFIG },
    { "scatter_conflict", scatter_conflict, SCATTER_CONFIG },
    { "identity_chain", identity_chain, NULL },
    { "delta", delta, NULL },
    { "not_derived", not_derived, NULL },
    { "reshape_chain", reshape_chain, NULL },
    { "update_chain", update_chain, NULL },
    { "mixed", mixed, NULL },
    { "stale_reader", stale_reader, NULL },
    { "pad", pad, NULL },
    { "identity_state", identity_state, NULL },
    { "same_node_names", same_node_names, NULL },
    { "no_cache", no_cache, NULL },
};
const size_t genai_n_models = sizeof genai_models / sizeof genai_models[0];

const genai_model *genai_model_find(const char *name)
{
    for (size_t i = 0; i < genai_n_models; i++)
        if (!strcmp(genai_models[i].name, name))
            return &genai_models[i];
    return NULL;
}

int genai_model_write(oac_ctx *ctx, const genai_model *m, const char *dir)
{
    char path[4096];
    oac_mb *mb = oac_mb_new(ctx);
    if (!mb)
        return OAC_ENOMEM;
    m->build(mb);
    snprintf(path, sizeof path, "%s/%s.onnx", dir, m->name);
    int rc = oac_mb_write(mb, path);
    oac_mb_free(mb);
    if (rc != OAC_OK || !m->config)
        return rc;
    snprintf(path, sizeof path, "%s/%s.genai_config.json", dir, m->name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(m->config, f) == EOF) {
        if (f)
            fclose(f);
        return OAC_EIO;
    }
    return fclose(f) == 0 ? OAC_OK : OAC_EIO;
}

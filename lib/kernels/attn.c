/* kernels/attn.c: the attention kernels of decoder exports: com.microsoft
 * GroupQueryAttention, MultiHeadAttention and
 * DecoderMaskedMultiHeadAttention, ONNX Attention (opsets 23
 * and 24), each with its KV-cache semantics (contract sections 5, 6, 8).
 *
 * Owns the numeric semantics of those operators, checked side by side
 * against ONNX Runtime 1.30 (CPU) and ONNX's reference implementation.
 * Each is an adapter: it checks its inputs, maps them onto the one
 * geometry (oac_attn_geom) and runs the one core (kernels/attn_core.c:
 * scores, masks, causal and local windows, softmax, grouped heads; a
 * query row with no key left outputs zeros, as ONNX Attention's errata
 * and ONNX Runtime do).  Per operator:
 *  - GroupQueryAttention: per batch b the total length is seqlens_k[b] + 1
 *    and the new rows go at total - S .. total - 1 (0 .. S - 1 on the
 *    first prompt, S == total_sequence_length); query s sees keys
 *    [0, min(past + s + 1, total)), and with local_window_size w >= 0 only
 *    the last w of them.  When present_key aliases past_key (the runtime
 *    hands the kernel a MUST_ALIAS view, run/kernel_api.h) the new rows are
 *    written into the caller's buffer at those positions and only its
 *    valid prefix is read; without the alias present is a new buffer of
 *    max(total_sequence_length, past length) rows holding past rows
 *    [0, past) and the new rows, zeros after.  Rotary (do_rotary) rotates
 *    the new q and k rows at their positions (position_ids, else past + s)
 *    before they are used or stored.  smooth_softmax and head_sink add a
 *    sink logit (0, or head_sink[h]) to the softmax's denominator.
 *  - MultiHeadAttention: BSNH query/key/value (or a BNSH key/value for
 *    cross attention), optional bias, key_padding_mask of shape (batch)
 *    (key lengths over the total T = past + new, as ONNX Runtime: key
 *    j >= length adds mask_filter_value), (batch, T) or (batch, S, T)
 *    (0/1, a 0 adds mask_filter_value), attention_bias, unidirectional (query s sees
 *    keys [0, past + s + 1)).  Without input 8 present = past ++ new;
 *    with input 8 (past_sequence_length P) past and present are the
 *    whole buffer (past_present_share_buffer): the new rows go at
 *    P .. P + L - 1, in place when present aliases past.
 *  - DecoderMaskedMultiHeadAttention: MultiHeadAttention's adapter with
 *    its own ports (mask_index 3, attention_bias 4, bias 10, the pasts and
 *    past_sequence_length from its row; a mask_index of shape (batch)
 *    with a past is unsupported-operator), one new token a step, sharing
 *    past and present only with past_present_share_buffer = 1 (else the
 *    present is the past plus one row); beam_width above 1 and
 *    cache_indirection are unsupported-operator.
 *  - ONNX Attention: 3-D inputs with q_num_heads / kv_num_heads or 4-D
 *    BNSH inputs; attn_mask bool (false excludes) or float (added), its
 *    last dimension possibly shorter than the keys (the rest excluded);
 *    is_causal bottom-right (query i sees keys j <= i + offset, offset
 *    the past length, or nonpad_kv_seqlen[b] - S without past, else 0);
 *    nonpad_kv_seqlen excludes keys j >= nonpad_kv_seqlen[b]; present =
 *    past ++ new; qk_matmul_output in modes 0-3 (mode 2 shows excluded
 *    keys as -inf, as ONNX's definition; ONNX Runtime writes the lowest
 *    float there).
 *
 * Invariants:
 *  1. No workspace: each query row is one pass of an online (streaming)
 *     softmax over its keys (running max, running sum, an accumulator of
 *     v_head_size doubles on the stack), so head sizes above
 *     OAC_ATTN_MAX_HEAD are unsupported-operator naming the limit.  Only
 *     outputs are allocated, through oac_kout (oac_kernel_output).
 *  2. Every shape, head count, position and length (seqlens_k, positions
 *     against the rotary caches, past_sequence_length) is validated
 *     before the first byte is written: a refusal is kernel-error naming
 *     node and value and leaves every buffer, the caller's caches
 *     included, as it was.  Element types outside an operator's set are
 *     unsupported-operator naming the type.
 *  3. The work (batch * heads * queries * keys * (head sizes)) is bounded
 *     by OAC_RT_MAX_KERNEL_OPS before anything is allocated.
 *  4. FLOAT16 and BFLOAT16 are widened exactly and computed in double,
 *     like FLOAT and DOUBLE; stores round as kernels/elem_io.h says.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/attn.h"

/* ------------------------------------------------------------------ */
/* com.microsoft GroupQueryAttention                                    */
/* ------------------------------------------------------------------ */

enum {
    GQA_Q, GQA_K, GQA_V, GQA_PAST_K, GQA_PAST_V, GQA_SEQLENS, GQA_TOTAL,
    GQA_COS, GQA_SIN, GQA_POS, GQA_BIAS, GQA_SINK, GQA_N_IN
};

/* One call's inputs, attributes and geometry. */
typedef struct gqa {
    oac_attn_packed p;          /* query, key, value, caches, heads (N, KVN, H) */
    const oac_tensor *pk, *pv, *sl, *ts, *pos, *ab, *sink;
    int64_t B, S, P, TS, cap, max_keys, lws;
    bool causal, smooth, presents, ink, inv;
    double softcap;
    oac_attn_past pr;
    oac_attn_rope rs;
} gqa;

/* Query, key and value by the packed reader of the attention core
 * (kernels/attn_core.c), rank 3. */
static const oac_attn_packed_spec gqa_spec = {
    .q = GQA_Q, .k = GQA_K, .v = GQA_V, .cos = GQA_COS, .sin = GQA_SIN, .rank = 3,
    .q_rank = "(batch, sequence, hidden)",
    .q_plain = "(batch, sequence, num_heads * head_size)",
    .q_packed = "packed (batch, sequence, (num_heads + 2 * kv_num_heads) * head_size)",
    .kv = "(batch, sequence, kv_num_heads * head_size)"
};

/* Attributes and inputs, typed: the packed reader's first (heads,
 * rotary, query, key, value, caches), then the rest. */
static int gqa_inputs(oac_kernel_call *k, gqa *g)
{
    int rc;
    if ((rc = oac_attn_packed_in(k, &gqa_spec, &g->p)))
        return rc;
    for (size_t i = GQA_N_IN; i < k->n_in; i++)
        if (k->in[i])
            return oac_attn_refuse(k, "a quantized KV cache or q/k norm weights (inputs 12+)");
    if (oac_attr_int(k->node, "qk_output", 0) || oac_attn_has_out(k, 3))
        return oac_attn_refuse(k, "output_qk");
    if (oac_attr_int(k->node, "sliding_window_cache", 0))
        return oac_attn_refuse(k, "sliding_window_cache");
    g->causal = oac_attr_int(k->node, "causal", 1) != 0;
    g->lws = oac_attr_int(k->node, "local_window_size", -1);
    g->softcap = oac_attr_float(k->node, "softcap", 0.0f);
    g->smooth = oac_attr_int(k->node, "smooth_softmax", 0) != 0;

    uint32_t T = OAC_EKM(g->p.q->elem_type);
    g->pk = oac_kin_opt(k, GQA_PAST_K, T, &rc);
    g->pv = rc ? NULL : oac_kin_opt(k, GQA_PAST_V, T, &rc);
    g->pos = rc ? NULL : oac_kin_opt(k, GQA_POS, OAC_EKM(OAC_T_INT64), &rc);
    g->ab = rc ? NULL : oac_kin_opt(k, GQA_BIAS, OAC_EKM_FLOAT, &rc);
    g->sink = rc ? NULL : oac_kin_opt(k, GQA_SINK, OAC_EKM_FLOAT, &rc);
    if (rc)
        return rc;
    g->sl = oac_kin_typed(k, GQA_SEQLENS, OAC_EKM(OAC_T_INT32));
    g->ts = g->sl ? oac_kin_typed(k, GQA_TOTAL, OAC_EKM(OAC_T_INT32)) : NULL;
    return g->ts ? OAC_OK : OAC_ERUNTIME;
}

/* Shapes of q, k, v, the pasts, seqlens_k and total_sequence_length. */
static int gqa_shapes(oac_kernel_call *k, gqa *g)
{
    int rc;
    if ((rc = oac_attn_packed_shapes(k, &gqa_spec, &g->p)))
        return rc;
    int64_t KVN = g->p.KVN, H = g->p.H;
    g->B = g->p.q->dims[0], g->S = g->p.q->dims[1];
    if (!g->pk != !g->pv)
        return oac_kernel_pair_missing(k, g->pk ? GQA_PAST_K : GQA_PAST_V,
                                       g->pk ? GQA_PAST_V : GQA_PAST_K,
                                       "past_key and past_value must be given together");
    const oac_tensor *pk = g->pk;
    g->P = 0;
    if (pk) {
        if (pk->rank != 4 || pk->dims[0] != g->B || pk->dims[1] != KVN || pk->dims[3] != H)
            return oac_attn_bad_shape(k, GQA_PAST_K, "(batch, kv_num_heads, length, "
                                      "head_size)");
        if (!oac_tensor_dims_are(g->pv, 4, pk->dims))
            return oac_attn_bad_shape(k, GQA_PAST_V, "past_key's");
        g->P = pk->dims[2];
    }
    uint64_t n;
    if (!oac_tensor_numel_rt(g->sl, &n) || n != (uint64_t)g->B || g->sl->rank != 1)
        return oac_attn_bad_shape(k, GQA_SEQLENS, "(batch)");
    if (!oac_tensor_numel_rt(g->ts, &n) || n != 1)
        return oac_attn_bad_shape(k, GQA_TOTAL, "a scalar");
    g->TS = ((const int32_t *)g->ts->data)[0];
    if (g->TS < 1)
        return oac_kernel_error(k, oac_kin_name(k, GQA_TOTAL),
                                "total_sequence_length %" PRId64 " is not positive", g->TS);
    if (g->S > 1 && g->S != g->TS && g->B != 1)
        return oac_kernel_error(k, oac_kin_name(k, GQA_Q), "a prompt of %" PRId64
                                " tokens after past context needs batch 1, not %" PRId64,
                                g->S, g->B);
    return OAC_OK;
}

/* Where the presents are and how long; per batch entry, the total, the
 * past and where the rows go, every index checked (invariant 2). */
static int gqa_lengths(oac_kernel_call *k, gqa *g)
{
    int rc;
    if ((rc = oac_attn_alias_of(k, 1, GQA_PAST_K, &g->ink)) ||
        (rc = oac_attn_alias_of(k, 2, GQA_PAST_V, &g->inv)))
        return rc;
    g->presents = oac_attn_has_out(k, 1) || oac_attn_has_out(k, 2);
    if (g->presents && (!oac_attn_has_out(k, 1) || !oac_attn_has_out(k, 2)))
        return oac_attn_refuse(k, "one present output without the other");
    if (!g->presents && g->p.rotary)
        return oac_attn_refuse(k, "do_rotary without the present outputs");
    if (g->ink != g->inv)
        return oac_attn_refuse(k, "present_key and present_value not both in place");
    g->cap = g->ink ? g->P : g->TS > g->P ? g->TS : g->P;
    const int32_t *seqlens = g->sl->data;
    g->pr = (oac_attn_past){ .seqlens = seqlens, .S = g->S, .first = g->S == g->TS };
    g->max_keys = 0;
    int64_t S = g->S, cap = g->cap, P = g->P;
    for (int64_t b = 0; b < g->B; b++) {
        int64_t t = (int64_t)seqlens[b] + 1, p = oac_attn_past_of(&g->pr, b);
        if (t < 1 || p < 0)
            return oac_kernel_error(k, oac_kin_name(k, GQA_SEQLENS),
                                    "seqlens_k[%" PRId64 "] = %" PRId64 " gives a total "
                                    "length %" PRId64 " shorter than the %" PRId64
                                    " new tokens", b, t - 1, t, S);
        if (p > P || (g->presents && p + S > cap))
            return oac_kernel_error(k, oac_kin_name(k, GQA_SEQLENS),
                                    "seqlens_k[%" PRId64 "] = %" PRId64 " puts the new "
                                    "rows at %" PRId64 "..%" PRId64 ", past the %s of "
                                    "%" PRId64 " rows", b, t - 1, p, p + S - 1,
                                    p > P ? "past cache" : "present cache",
                                    p > P ? P : cap);
        /* Keys read: [0, e); rows past p + S exist only in a present
         * cache (a bidirectional first prompt reads up to the total). */
        int64_t e = g->causal ? (p + S < t ? p + S : t) : t;
        int64_t have = g->presents ? cap : p + S;
        if (e > have)
            return oac_kernel_error(k, oac_kin_name(k, GQA_SEQLENS),
                                    "seqlens_k[%" PRId64 "] = %" PRId64 " reads keys "
                                    "up to row %" PRId64 ", past the %" PRId64 " rows "
                                    "there are", b, t - 1, e - 1, have);
        if (e > g->max_keys)
            g->max_keys = e;
    }
    return oac_attn_work_ok(k, g->B, g->p.N, S, g->max_keys, g->p.H, g->p.H);
}

/* Rotary caches and positions, attention_bias, head_sink. */
static int gqa_extras(oac_kernel_call *k, gqa *g)
{
    const oac_tensor *cos = g->p.cos, *sin = g->p.sin, *pos = g->pos;
    int64_t B = g->B, S = g->S;
    const int64_t *pos_ids = pos ? (const int64_t *)pos->data : NULL;
    const int64_t pd[2] = { B, S };
    if (pos && !oac_tensor_dims_are(pos, 2, pd))
        return oac_attn_bad_shape(k, GQA_POS, "(batch, sequence)");
    int rc;
    /* Each position is checked against the caches' rows below. */
    if ((rc = oac_attn_packed_rope_ok(k, &gqa_spec, &g->p, 0)))
        return rc;
    if (g->p.rotary) {
        for (int64_t b = 0; b < B; b++)
            for (int64_t s = 0; s < S; s++) {
                int64_t p = pos_ids ? pos_ids[b * S + s] : oac_attn_past_of(&g->pr, b) + s;
                if (p < 0 || p >= cos->dims[0])
                    return oac_kernel_error(k, oac_kin_name(k, pos ? GQA_POS : GQA_SEQLENS),
                                            "position %" PRId64 " of batch %" PRId64
                                            " token %" PRId64 " is outside the rotary "
                                            "caches' %" PRId64 " rows", p, b, s,
                                            cos->dims[0]);
            }
        g->rs = (oac_attn_rope){ .cos = cos, .sin = sin, .interleaved = g->p.interleaved,
                                 .rot = 2 * cos->dims[1], .pos_ids = pos_ids, .past = &g->pr };
    }
    const oac_tensor *ab = g->ab;
    if (ab && (ab->rank != 4 || (ab->dims[0] != 1 && ab->dims[0] != B) ||
               (ab->dims[1] != 1 && ab->dims[1] != g->p.N) || ab->dims[2] != S ||
               ab->dims[3] < g->max_keys))
        return oac_attn_bad_shape(k, GQA_BIAS, "(batch or 1, num_heads or 1, sequence, "
                                  "total_sequence_length)");
    uint64_t n;
    if (g->sink && (!oac_tensor_numel_rt(g->sink, &n) || n != (uint64_t)g->p.N))
        return oac_attn_bad_shape(k, GQA_SINK, "(num_heads)");
    return OAC_OK;
}

/* The per-row hook: keys [0, total), causal from the past, rotary of
 * q, attention_bias, the sink. */
static void gqa_row(void *ctx, oac_attn_io *io, oac_attn_row *r, int64_t h, int64_t s,
                    double *q)
{
    const gqa *g = ctx;
    int64_t b = r->b, past = oac_attn_past_of(&g->pr, b);
    int64_t total = (int64_t)((const int32_t *)g->sl->data)[b] + 1;
    if (!g->presents)
        io->k.split = io->v.split = past;
    r->past = past;
    r->j1 = r->n_keys = total;
    if (g->p.rotary) {
        int64_t p = oac_attn_rope_pos(&g->rs, b, s, g->S);
        oac_attn_rope_row(q, g->rs.rot, g->p.cos, g->p.sin, (uint64_t)(p * g->p.cos->dims[1]),
                          g->p.interleaved);
    }
    const oac_tensor *ab = g->ab;
    if (ab)
        r->add[0] = (oac_attn_add){ OAC_ADD_FLOAT, ab,
            (uint64_t)((((b % ab->dims[0]) * ab->dims[1] + h % ab->dims[1]) * g->S + s) *
                       ab->dims[3]), INT64_MAX };
    if (g->smooth || g->sink) {
        r->sink = true;
        r->sink_logit = g->sink ? oac_ek_getd(g->sink->elem_type, g->sink->data,
                                              (uint64_t)h) : 0.0;
    }
}

int oac_kernel_group_query_attention(oac_kernel_call *k)
{
    gqa g = { 0 };
    int rc;
    if ((rc = gqa_inputs(k, &g)) || (rc = gqa_shapes(k, &g)) || (rc = gqa_lengths(k, &g)) ||
        (rc = gqa_extras(k, &g)))
        return rc;

    /* Outputs: nothing was written before this point. */
    int32_t T = g.p.q->elem_type;
    int64_t B = g.B, S = g.S, N = g.p.N, KVN = g.p.KVN, H = g.p.H;
    oac_tensor *y, *ok = NULL, *ov = NULL;
    const int64_t yd[3] = { B, S, N * H };
    if ((rc = oac_kout(k, 0, T, 3, yd, &y)))
        return rc;
    const oac_tensor *q = g.p.q;
    oac_attn_view kn = g.p.packed ? oac_attn_bsnh(q, H, N * H) : oac_attn_bsnh(g.p.key, H, 0);
    oac_attn_view vn = g.p.packed ? oac_attn_bsnh(q, H, (N + KVN) * H) : oac_attn_bsnh(g.p.val, H, 0);
    oac_attn_view pkv = g.pk ? oac_attn_bnsh(g.pk) : kn, pvv = g.pv ? oac_attn_bnsh(g.pv) : vn;
    oac_attn_io io = { .q = oac_attn_bsnh(q, H, 0), .y = oac_attn_bsnh(y, H, 0) };
    if (g.presents) {
        double row[OAC_ATTN_MAX_HEAD];
        const int64_t pd[4] = { B, KVN, g.cap, H };
        if ((rc = oac_kout(k, 1, T, 4, pd, &ok)) || (rc = oac_kout(k, 2, T, 4, pd, &ov)))
            return rc;
        oac_attn_fill_present(ok, &pkv, g.ink, &kn, S, &g.pr, g.p.rotary ? &g.rs : NULL, row);
        oac_attn_fill_present(ov, &pvv, g.inv, &vn, S, &g.pr, NULL, row);
        io.k = (oac_attn_kv){ .seg = { oac_attn_bnsh(ok) }, .split = INT64_MAX };
        io.v = (oac_attn_kv){ .seg = { oac_attn_bnsh(ov) }, .split = INT64_MAX };
    } else {
        io.k = (oac_attn_kv){ .seg = { pkv, kn } };
        io.v = (oac_attn_kv){ .seg = { pvv, vn } };
    }
    oac_attn_geom geo = { .B = B, .N = N, .KVN = KVN, .S = S, .H = H, .Hv = H,
                          .T = g.max_keys, .scale = oac_attn_scale(k, H),
                          .softcap = g.softcap, .causal = g.causal, .window = g.lws };
    oac_attn_run(&geo, &io, gqa_row, &g);
    return OAC_OK;
}

/* ------------------------------------------------------------------ */
/* com.microsoft MultiHeadAttention                                     */
/* ------------------------------------------------------------------ */

/* The ports of MultiHeadAttention and DecoderMaskedMultiHeadAttention
 * (one adapter serves both): q, k, v, bias, the key mask, attention_bias,
 * cache_indirection and beam_width here; the pasts and
 * past_sequence_length from the operator's row (its pairs and length
 * port, lib/ops.def). */
typedef struct mha_ports {
    int bias, kpm, ab, ci, beam;
} mha_ports;

static const mha_ports mha_p = { .bias = 3, .kpm = 4, .ab = 5, .ci = 9, .beam = -1 };
static const mha_ports dmmha_p = { .bias = 10, .kpm = 3, .ab = 4, .ci = 9, .beam = 8 };

enum { MHA_Q, MHA_K, MHA_V };

typedef struct mha {
    const mha_ports *pt;
    size_t pk_port, pv_port, pl_port;
    const oac_tensor *q, *key, *val, *bias, *kpm, *ab, *pk, *pv, *pl;
    int64_t N, B, S, D, H, Hv, L, P, cap, TT;
    bool cross, share, presents, ink, inv, one_token;
    double mfv;
} mha;

#define MHA_BIAS ((size_t)m->pt->bias)
#define MHA_KPM ((size_t)m->pt->kpm)
#define MHA_AB ((size_t)m->pt->ab)
#define MHA_PAST_K (m->pk_port)
#define MHA_PAST_V (m->pv_port)
#define MHA_PAST_LEN (m->pl_port)

static int mha_inputs(oac_kernel_call *k, mha *m)
{
    int rc;
    if ((rc = oac_attn_attr_pos(k, "num_heads", &m->N)))
        return rc;
    m->mfv = oac_attr_float(k->node, "mask_filter_value", -10000.0f);
    const oac_op *op = oac_op_find(k->node->domain, k->node->op_type);
    if (!op || op->n_pairs != 2 || op->length.port < 0)
        return oac_attn_refuse(k, "an attention operator without a cache row");
    m->pk_port = (size_t)op->pairs[0].in, m->pv_port = (size_t)op->pairs[1].in;
    m->pl_port = (size_t)op->length.port;
    if ((size_t)m->pt->ci < k->n_in && k->in[m->pt->ci])
        return oac_attn_refuse(k, "cache_indirection (beam search)");
    if (m->pt->beam >= 0 && (size_t)m->pt->beam < k->n_in && k->in[m->pt->beam]) {
        int64_t bw[1];
        size_t nb = 0;
        if ((rc = oac_kin_ints(k, (size_t)m->pt->beam, bw, 1, &nb)))
            return rc;
        if (nb == 1 && bw[0] > 1)
            return oac_attn_refuse(k, "beam_width above 1 (beam search)");
    }
    if (oac_attn_has_out(k, 3))
        return oac_attn_refuse(k, "the qk output");
    const oac_tensor *q = m->q = oac_kin_typed(k, MHA_Q, OAC_ATTN_T16);
    if (!q)
        return OAC_ERUNTIME;
    uint32_t T = OAC_EKM(q->elem_type);
    rc = OAC_OK;
    m->key = oac_kin_opt(k, MHA_K, T, &rc);
    m->val = rc ? NULL : oac_kin_opt(k, MHA_V, T, &rc);
    m->bias = rc ? NULL : oac_kin_opt(k, MHA_BIAS, OAC_EKM_FLOAT, &rc);
    m->kpm = rc ? NULL : oac_kin_opt(k, MHA_KPM, OAC_EKM(OAC_T_INT32), &rc);
    m->ab = rc ? NULL : oac_kin_opt(k, MHA_AB, OAC_EKM_FLOAT, &rc);
    m->pk = rc ? NULL : oac_kin_opt(k, MHA_PAST_K, T, &rc);
    m->pv = rc ? NULL : oac_kin_opt(k, MHA_PAST_V, T, &rc);
    m->pl = rc ? NULL : oac_kin_opt(k, MHA_PAST_LEN, OAC_EKM(OAC_T_INT32), &rc);
    if (rc)
        return rc;
    if (q->rank != 3)
        return q->rank == 5 ? oac_attn_refuse(k, "packed QKV (rank-5 query)")
                            : oac_attn_bad_shape(k, MHA_Q, "(batch, sequence, hidden)");
    if (!m->key || !m->val)
        return oac_attn_refuse(k, "MultiHeadAttention without key and value");
    return OAC_OK;
}

/* q, k, v and bias: B, S, L, H, Hv. */
static int mha_qkv(oac_kernel_call *k, mha *m)
{
    const oac_tensor *q = m->q, *key = m->key, *val = m->val;
    int64_t N = m->N, B = m->B = q->dims[0], D = m->D = q->dims[2];
    m->S = q->dims[1];
    if (m->one_token && m->S != 1)
        return oac_attn_bad_shape(k, MHA_Q, "(batch, 1, hidden): one new token per step");
    if (D % N)
        return oac_attn_bad_shape(k, MHA_Q, "(batch, sequence, num_heads * head_size)");
    int64_t H = m->H = D / N;
    m->cross = key->rank == 4;
    if (key->rank == 5)
        return oac_attn_refuse(k, "packed KV (rank-5 key)");
    if (m->cross) {
        const int64_t kd[4] = { B, N, key->dims[2], H };
        if (!oac_tensor_dims_are(key, 4, kd))
            return oac_attn_bad_shape(k, MHA_K, "(batch, num_heads, kv_sequence, head_size)");
        m->L = key->dims[2];
        if (val->rank != 4 || val->dims[0] != B || val->dims[1] != N || val->dims[2] != m->L)
            return oac_attn_bad_shape(k, MHA_V, "(batch, num_heads, kv_sequence, v_head_size)");
        m->Hv = val->dims[3];
        if (m->pk)
            return oac_kernel_error(k, oac_kin_name(k, MHA_PAST_K), "a past cache "
                                    "cannot be combined with a BNSH key");
    } else {
        if (key->rank != 3 || key->dims[0] != B || key->dims[2] != D)
            return oac_attn_bad_shape(k, MHA_K, "(batch, kv_sequence, hidden)");
        m->L = key->dims[1];
        if (val->rank != 3 || val->dims[0] != B || val->dims[1] != m->L || val->dims[2] % N)
            return oac_attn_bad_shape(k, MHA_V, "(batch, kv_sequence, num_heads * "
                                      "v_head_size)");
        m->Hv = val->dims[2] / N;
    }
    if (H < 1 || m->Hv < 1)
        return oac_attn_bad_shape(k, MHA_Q, "of head sizes of at least 1");
    int rc;
    if ((rc = oac_attn_head_ok(k, H)) || (rc = oac_attn_head_ok(k, m->Hv)))
        return rc;
    uint64_t n;
    if (m->bias && (m->cross || !oac_tensor_numel_rt(m->bias, &n) ||
                    n != (uint64_t)(2 * D + N * m->Hv)))
        return oac_attn_bad_shape(k, MHA_BIAS, "(hidden + hidden + v_hidden) with a BSNH key");
    return OAC_OK;
}

/* The pasts, past_sequence_length, the masks and the presents. */
static int mha_cache(oac_kernel_call *k, mha *m)
{
    const oac_tensor *pk = m->pk, *pv = m->pv, *kpm = m->kpm, *ab = m->ab;
    int64_t B = m->B, N = m->N, S = m->S, L = m->L;
    if (!pk != !pv)
        return oac_kernel_pair_missing(k, pk ? MHA_PAST_K : MHA_PAST_V,
                                       pk ? MHA_PAST_V : MHA_PAST_K,
                                       "past_key and past_value must be given together");
    m->P = m->cap = 0;
    /* DecoderMaskedMultiHeadAttention shares only with its attribute;
     * MultiHeadAttention whenever input 8 is given. */
    m->share = m->pl && pk &&
               (!m->one_token || oac_attr_int(k->node, "past_present_share_buffer", 0));
    if (pk) {
        const int64_t vd[4] = { B, N, pk->dims[2], m->Hv };
        if (pk->rank != 4 || pk->dims[0] != B || pk->dims[1] != N || pk->dims[3] != m->H)
            return oac_attn_bad_shape(k, MHA_PAST_K, "(batch, num_heads, length, head_size)");
        if (!oac_tensor_dims_are(pv, 4, vd))
            return oac_attn_bad_shape(k, MHA_PAST_V, "(batch, num_heads, length, "
                                      "v_head_size)");
        m->P = m->cap = pk->dims[2];
        uint64_t n;
        if (m->share && (!oac_tensor_numel_rt(m->pl, &n) || n != 1))
            return oac_attn_bad_shape(k, MHA_PAST_LEN, "a scalar");
        if (m->share)
            m->P = ((const int32_t *)m->pl->data)[0];
        int rc;
        if (m->share && (rc = oac_attn_fits(k, MHA_PAST_LEN, m->P, L, m->cap,
                                            oac_kin_name(k, MHA_PAST_K))))
            return rc;
    }
    int64_t TT = m->TT = m->P + L;
    if (!m->share)
        m->cap = TT;
    if (kpm) {
        bool lens = kpm->rank == 1 && kpm->dims[0] == B;
        if (lens && pk && m->one_token)
            return oac_attn_refuse(k, "key_padding_mask of shape (batch) with a past cache");
        if (!lens && !(kpm->rank == 2 && kpm->dims[0] == B && kpm->dims[1] >= TT) &&
            !(kpm->rank == 3 && kpm->dims[0] == B && kpm->dims[1] == S && kpm->dims[2] >= TT))
            return kpm->rank == 1 ? oac_attn_refuse(k, "key_padding_mask of shape "
                                                    "(3 * batch + 2)")
                                  : oac_attn_bad_shape(k, MHA_KPM, "(batch), (batch, "
                                                       "total_sequence) or (batch, "
                                                       "sequence, total_sequence)");
    }
    if (ab && (ab->rank != 4 || (ab->dims[0] != 1 && ab->dims[0] != B) ||
               (ab->dims[1] != 1 && ab->dims[1] != N) || ab->dims[2] != S ||
               ab->dims[3] < TT))
        return oac_attn_bad_shape(k, MHA_AB, "(batch or 1, num_heads or 1, sequence, "
                                  "total_sequence)");
    int rc;
    if ((rc = oac_attn_alias_of(k, 1, MHA_PAST_K, &m->ink)) ||
        (rc = oac_attn_alias_of(k, 2, MHA_PAST_V, &m->inv)))
        return rc;
    if ((m->ink || m->inv) && !m->share)
        return oac_kernel_error(k, k->node->output[m->ink ? 1 : 2], "shares the past's "
                                "storage, which needs input 8 (past_sequence_length)");
    m->presents = oac_attn_has_out(k, 1) || oac_attn_has_out(k, 2);
    if (m->presents && (!oac_attn_has_out(k, 1) || !oac_attn_has_out(k, 2)))
        return oac_attn_refuse(k, "one present output without the other");
    if (m->ink != m->inv)
        return oac_attn_refuse(k, "present_key and present_value not both in place");
    return oac_attn_work_ok(k, B, N, S, TT, m->H, m->Hv);
}

static void mha_row(void *ctx, oac_attn_io *io, oac_attn_row *r, int64_t h, int64_t s,
                    double *q)
{
    const mha *m = ctx;
    const oac_tensor *kpm = m->kpm, *ab = m->ab;
    int64_t b = r->b, S = m->S;
    (void)io, (void)q;
    r->past = m->P;
    r->mfv = m->mfv;
    if (kpm && kpm->rank == 1)
        r->mfv_from = ((const int32_t *)kpm->data)[b];
    else if (kpm)
        r->add[0] = (oac_attn_add){ OAC_ADD_RAW01, kpm,
            (uint64_t)(kpm->rank == 2 ? b * kpm->dims[1] : (b * S + s) * kpm->dims[2]),
            INT64_MAX };
    if (ab)
        r->add[1] = (oac_attn_add){ OAC_ADD_FLOAT, ab,
            (uint64_t)((((b % ab->dims[0]) * ab->dims[1] + h % ab->dims[1]) * S + s) *
                       ab->dims[3]), INT64_MAX };
}

static int mha_kernel(oac_kernel_call *k, const mha_ports *pt, bool one_token)
{
    mha m = { .pt = pt, .one_token = one_token };
    int rc;
    if ((rc = mha_inputs(k, &m)) || (rc = mha_qkv(k, &m)) || (rc = mha_cache(k, &m)))
        return rc;
    int32_t T = m.q->elem_type;
    int64_t B = m.B, S = m.S, N = m.N, H = m.H, Hv = m.Hv, D = m.D;
    oac_tensor *y, *ok = NULL, *ov = NULL;
    const int64_t yd[3] = { B, S, N * Hv };
    if ((rc = oac_kout(k, 0, T, 3, yd, &y)))
        return rc;
    oac_attn_io io = { .q = oac_attn_bsnh(m.q, H, 0), .y = oac_attn_bsnh(y, Hv, 0) };
    oac_attn_view kn = m.cross ? oac_attn_bnsh(m.key) : oac_attn_bsnh(m.key, H, 0);
    oac_attn_view vn = m.cross ? oac_attn_bnsh(m.val) : oac_attn_bsnh(m.val, Hv, 0);
    if (m.bias) {
        io.q.bias = m.bias, io.q.boff = 0, io.q.bh = H;
        kn.bias = m.bias, kn.boff = D, kn.bh = H;
        vn.bias = m.bias, vn.boff = 2 * D, vn.bh = Hv;
    }
    oac_attn_view pkv = m.pk ? oac_attn_bnsh(m.pk) : kn, pvv = m.pv ? oac_attn_bnsh(m.pv) : vn;
    if (m.presents) {
        double row[OAC_ATTN_MAX_HEAD];
        const int64_t kd[4] = { B, N, m.cap, H }, vd[4] = { B, N, m.cap, Hv };
        if ((rc = oac_kout(k, 1, T, 4, kd, &ok)) || (rc = oac_kout(k, 2, T, 4, vd, &ov)))
            return rc;
        oac_attn_past pr = { .P = m.P };
        oac_attn_fill_present(ok, &pkv, m.ink, &kn, m.L, &pr, NULL, row);
        oac_attn_fill_present(ov, &pvv, m.inv, &vn, m.L, &pr, NULL, row);
        io.k = (oac_attn_kv){ .seg = { oac_attn_bnsh(ok) }, .split = INT64_MAX };
        io.v = (oac_attn_kv){ .seg = { oac_attn_bnsh(ov) }, .split = INT64_MAX };
    } else {
        io.k = (oac_attn_kv){ .seg = { pkv, kn }, .split = m.P };
        io.v = (oac_attn_kv){ .seg = { pvv, vn }, .split = m.P };
    }
    oac_attn_geom geo = { .B = B, .N = N, .KVN = N, .S = S, .H = H, .Hv = Hv, .T = m.TT,
                          .scale = oac_attn_scale(k, H),
                          .causal = oac_attr_int(k->node, "unidirectional", 0) != 0,
                          .window = -1 };
    oac_attn_run(&geo, &io, mha_row, &m);
    return OAC_OK;
}

int oac_kernel_multi_head_attention(oac_kernel_call *k)
{
    return mha_kernel(k, &mha_p, false);
}

int oac_kernel_decoder_masked_mha(oac_kernel_call *k)
{
    return mha_kernel(k, &dmmha_p, true);
}

/* ------------------------------------------------------------------ */
/* ONNX Attention (opsets 23, 24)                                       */
/* ------------------------------------------------------------------ */

enum { AT_Q, AT_K, AT_V, AT_MASK, AT_PAST_K, AT_PAST_V, AT_NONPAD };

typedef struct onnx_at {
    const oac_tensor *q, *key, *val, *mask, *pk, *pv, *np;
    int64_t B, Nq, Nk, Sq, Skv, H, Hv, P, TT, mode;
    int64_t ms[3];              /* attn_mask strides of b, h, s (0: broadcast) */
    bool r3;
    oac_attn_view qv, kn, vn;
    oac_tensor *qk;
} onnx_at;

static int at_inputs(oac_kernel_call *k, onnx_at *a)
{
    int rc = OAC_OK;
    const oac_tensor *q = a->q = oac_kin_typed(k, AT_Q, OAC_EKM_FLOAT);
    a->key = q ? oac_kin_typed(k, AT_K, OAC_EKM(q->elem_type)) : NULL;
    a->val = a->key ? oac_kin_typed(k, AT_V, OAC_EKM_FLOAT) : NULL;
    if (!a->val)
        return OAC_ERUNTIME;
    a->mask = oac_kin_opt(k, AT_MASK, OAC_EKM_FLOAT | OAC_EKM_BOOL, &rc);
    a->pk = rc ? NULL : oac_kin_opt(k, AT_PAST_K, OAC_EKM(a->key->elem_type), &rc);
    a->pv = rc ? NULL : oac_kin_opt(k, AT_PAST_V, OAC_EKM(a->val->elem_type), &rc);
    a->np = rc ? NULL : oac_kin_opt(k, AT_NONPAD, OAC_EKM(OAC_T_INT64), &rc);
    if (rc)
        return rc;
    a->mode = oac_attr_int(k->node, "qk_matmul_output_mode", 0);
    if (a->mode < 0 || a->mode > 3)
        return oac_kernel_error(k, "qk_matmul_output_mode", "must be 0, 1, 2 or 3, "
                                "not %" PRId64, a->mode);
    if (oac_node_attr(k->node, "left_window_size") ||
        oac_node_attr(k->node, "right_window_size"))
        return oac_attn_refuse(k, "a sliding window (opset 25)");
    return OAC_OK;
}

/* Q, K, V in BNSH terms: 3-D with the head-count attributes, or 4-D. */
static int at_qkv(oac_kernel_call *k, onnx_at *a)
{
    const oac_tensor *q = a->q, *key = a->key, *val = a->val;
    int64_t B = a->B = q->dims[0];
    int rc;
    a->r3 = q->rank == 3;
    if (a->r3) {
        int64_t qn, kvn;
        if ((rc = oac_attn_attr_pos(k, "q_num_heads", &qn)) ||
            (rc = oac_attn_attr_pos(k, "kv_num_heads", &kvn)))
            return rc;
        if (q->dims[2] % qn)
            return oac_attn_bad_shape(k, AT_Q, "(batch, sequence, q_num_heads * head_size)");
        a->Nq = qn, a->Nk = kvn, a->Sq = q->dims[1], a->H = q->dims[2] / qn;
        if ((rc = oac_attn_head_ok(k, a->H)))      /* before kvn * H */
            return rc;
        if (key->rank != 3 || key->dims[0] != B || key->dims[2] != kvn * a->H)
            return oac_attn_bad_shape(k, AT_K, "(batch, kv_sequence, kv_num_heads * "
                                      "head_size)");
        a->Skv = key->dims[1];
        if (val->rank != 3 || val->dims[0] != B || val->dims[1] != a->Skv ||
            val->dims[2] % kvn)
            return oac_attn_bad_shape(k, AT_V, "(batch, kv_sequence, kv_num_heads * "
                                      "v_head_size)");
        a->Hv = val->dims[2] / kvn;
        a->qv = oac_attn_bsnh(q, a->H, 0), a->kn = oac_attn_bsnh(key, a->H, 0);
        a->vn = oac_attn_bsnh(val, a->Hv, 0);
    } else if (q->rank == 4) {
        a->Nq = q->dims[1], a->Sq = q->dims[2], a->H = q->dims[3];
        if (key->rank != 4 || key->dims[0] != B || key->dims[3] != a->H)
            return oac_attn_bad_shape(k, AT_K, "(batch, kv_num_heads, kv_sequence, head_size)");
        a->Nk = key->dims[1], a->Skv = key->dims[2];
        if (val->rank != 4 || val->dims[0] != B || val->dims[1] != a->Nk ||
            val->dims[2] != a->Skv)
            return oac_attn_bad_shape(k, AT_V, "(batch, kv_num_heads, kv_sequence, "
                                      "v_head_size)");
        a->Hv = val->dims[3];
        a->qv = oac_attn_bnsh(q), a->kn = oac_attn_bnsh(key), a->vn = oac_attn_bnsh(val);
    } else {
        return oac_attn_bad_shape(k, AT_Q, "3-D or 4-D");
    }
    if (a->Nk < 1 || a->Nq % a->Nk)
        return oac_kernel_error(k, oac_kin_name(k, AT_K), "%" PRId64 " query heads are "
                                "not a multiple of %" PRId64 " key heads", a->Nq, a->Nk);
    if (a->H < 1 || a->Hv < 1)
        return oac_attn_bad_shape(k, AT_Q, "of head sizes of at least 1");
    if ((rc = oac_attn_head_ok(k, a->H)) || (rc = oac_attn_head_ok(k, a->Hv)))
        return rc;
    return OAC_OK;
}

/* The pasts, nonpad_kv_seqlen and attn_mask's broadcast. */
static int at_cache(oac_kernel_call *k, onnx_at *a)
{
    const oac_tensor *pk = a->pk, *pv = a->pv, *np = a->np, *mask = a->mask;
    int64_t B = a->B;
    if (!pk != !pv)
        return oac_kernel_pair_missing(k, pk ? AT_PAST_K : AT_PAST_V,
                                       pk ? AT_PAST_V : AT_PAST_K,
                                       "past_key and past_value must be given together");
    a->P = 0;
    if (pk) {
        if (pk->rank != 4 || pk->dims[0] != B || pk->dims[1] != a->Nk || pk->dims[3] != a->H)
            return oac_attn_bad_shape(k, AT_PAST_K, "(batch, kv_num_heads, past_sequence, "
                                      "head_size)");
        const int64_t vd[4] = { B, a->Nk, pk->dims[2], a->Hv };
        if (!oac_tensor_dims_are(pv, 4, vd))
            return oac_attn_bad_shape(k, AT_PAST_V, "(batch, kv_num_heads, past_sequence, "
                                      "v_head_size)");
        a->P = pk->dims[2];
        if (np)
            return oac_kernel_error(k, oac_kin_name(k, AT_NONPAD), "nonpad_kv_seqlen "
                                    "cannot be combined with past_key and past_value");
    }
    int64_t TT = a->TT = a->P + a->Skv;
    uint64_t n;
    if (np && (np->rank != 1 || !oac_tensor_numel_rt(np, &n) || n != (uint64_t)B))
        return oac_attn_bad_shape(k, AT_NONPAD, "(batch)");
    /* attn_mask broadcasts to (B, Nq, Sq, TT), right-aligned; its last
     * dimension may be shorter (the rest is excluded). */
    static const char want[] = "broadcastable to (batch, q_num_heads, q_sequence, "
                               "total_sequence)";
    if (mask) {
        if (mask->rank < 1 || mask->rank > 4 || mask->dims[mask->rank - 1] > TT)
            return oac_attn_bad_shape(k, AT_MASK, want);
        const int64_t full[3] = { B, a->Nq, a->Sq };
        int64_t st = mask->dims[mask->rank - 1];
        for (int x = 2; x >= 0; x--) {
            int mi = mask->rank - 1 - (3 - x);
            int64_t d = mi >= 0 ? mask->dims[mi] : 1;
            if (d != 1 && d != full[x])
                return oac_attn_bad_shape(k, AT_MASK, want);
            a->ms[x] = d == 1 ? 0 : st;
            st *= d;
        }
    }
    return oac_attn_work_ok(k, B, a->Nq, a->Sq, TT, a->H, a->Hv);
}

/* The per-row hook: keys before nonpad_kv_seqlen, the causal offset
 * (the past, or nonpad_kv_seqlen - Sq), attn_mask, qk output. */
static void at_row(void *ctx, oac_attn_io *io, oac_attn_row *r, int64_t h, int64_t s,
                   double *q)
{
    const onnx_at *a = ctx;
    const oac_tensor *mask = a->mask;
    int64_t b = r->b;
    (void)io, (void)q;
    r->past = a->P;
    if (a->np) {
        int64_t v = ((const int64_t *)a->np->data)[b];
        r->j1 = v < 0 ? 0 : v < a->TT ? v : a->TT;
        r->past = v - a->Sq;
    }
    r->qk = a->qk;
    r->qk_mode = (int)a->mode;
    if (a->qk)
        r->qk_off = (uint64_t)(((b * a->Nq + h) * a->Sq + s) * a->TT);
    if (mask)
        r->add[0] = (oac_attn_add){ mask->elem_type == OAC_T_BOOL ? OAC_ADD_BOOL
                                                                 : OAC_ADD_FLOAT,
                                    mask, (uint64_t)(b * a->ms[0] + h * a->ms[1] +
                                                     s * a->ms[2]),
                                    mask->dims[mask->rank - 1] };
}

int oac_kernel_attention(oac_kernel_call *k)
{
    onnx_at a = { 0 };
    int rc;
    if ((rc = at_inputs(k, &a)) || (rc = at_qkv(k, &a)) || (rc = at_cache(k, &a)))
        return rc;
    int64_t B = a.B, Nq = a.Nq, Nk = a.Nk, Sq = a.Sq, H = a.H, Hv = a.Hv, TT = a.TT;
    oac_tensor *y, *ok = NULL, *ov = NULL;
    const int64_t y3[3] = { B, Sq, Nq * Hv }, y4[4] = { B, Nq, Sq, Hv };
    if ((rc = oac_kout(k, 0, a.q->elem_type, a.r3 ? 3 : 4, a.r3 ? y3 : y4, &y)))
        return rc;
    oac_attn_view pkv = a.pk ? oac_attn_bnsh(a.pk) : a.kn;
    oac_attn_view pvv = a.pv ? oac_attn_bnsh(a.pv) : a.vn;
    double row[OAC_ATTN_MAX_HEAD];
    oac_attn_past pr = { .P = a.P };
    if (oac_attn_has_out(k, 1)) {
        const int64_t d[4] = { B, Nk, TT, H };
        if ((rc = oac_kout(k, 1, a.key->elem_type, 4, d, &ok)))
            return rc;
        oac_attn_fill_present(ok, &pkv, false, &a.kn, a.Skv, &pr, NULL, row);
    }
    if (oac_attn_has_out(k, 2)) {
        const int64_t d[4] = { B, Nk, TT, Hv };
        if ((rc = oac_kout(k, 2, a.val->elem_type, 4, d, &ov)))
            return rc;
        oac_attn_fill_present(ov, &pvv, false, &a.vn, a.Skv, &pr, NULL, row);
    }
    if (oac_attn_has_out(k, 3)) {
        const int64_t d[4] = { B, Nq, Sq, TT };
        if ((rc = oac_kout(k, 3, a.q->elem_type, 4, d, &a.qk)))
            return rc;
    }
    oac_attn_io io = { .q = a.qv, .y = a.r3 ? oac_attn_bsnh(y, Hv, 0) : oac_attn_bnsh(y),
                       .k = { .seg = { pkv, a.kn }, .split = a.P },
                       .v = { .seg = { pvv, a.vn }, .split = a.P } };
    double scale = oac_node_attr(k->node, "scale") ? oac_attr_float(k->node, "scale", 0.0f)
                                                   : 1 / sqrt((double)H);
    oac_attn_geom geo = { .B = B, .N = Nq, .KVN = Nk, .S = Sq, .H = H, .Hv = Hv, .T = TT,
                          .scale = scale,
                          .softcap = oac_attr_float(k->node, "softcap", 0.0f),
                          .causal = oac_attr_int(k->node, "is_causal", 0) != 0,
                          .window = -1 };
    oac_attn_run(&geo, &io, at_row, &a);
    return OAC_OK;
}

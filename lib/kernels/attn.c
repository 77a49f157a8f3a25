/* kernels/attn.c: the attention kernels of decoder exports: com.microsoft
 * GroupQueryAttention and MultiHeadAttention, ONNX Attention (opsets 23
 * and 24), each with its KV-cache semantics (contract sections 5, 6, 8).
 *
 * Owns the numeric semantics of those operators, checked side by side
 * against ONNX Runtime 1.30 (CPU) and ONNX's reference implementation:
 *  - scores are q.k * scale (default 1/sqrt(head_size)), then softcap
 *    (c * tanh(x / c)) when the attribute is > 0, then the additive
 *    biases and masks, then softmax over the keys a query may see;
 *  - a query head h reads kv head h / (q_heads / kv_heads) (grouped
 *    heads; q_heads a multiple of kv_heads, else kernel-error);
 *  - a query row with no key left (every key masked) outputs zeros, as
 *    ONNX Attention's errata and ONNX Runtime do.
 * Per operator:
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
 *    (lengths, no past), (batch, T) or (batch, S, T) (0/1, a 0 adds
 *    mask_filter_value), attention_bias, unidirectional (query s sees
 *    keys [0, past + s + 1)).  Without input 8 present = past ++ new;
 *    with input 8 (past_sequence_length P) past and present are the
 *    whole buffer (past_present_share_buffer): the new rows go at
 *    P .. P + L - 1, in place when present aliases past.
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
/* Views, rows and the rotary helper                                    */
/* ------------------------------------------------------------------ */

/* Rows of a tensor seen as [b][h][s][0..n): element (b, h, s, d) is at
 * off + b*sb + h*sh + s*ss + d; bias, when set, adds
 * bias[boff + h*bh + d]. */
typedef struct view4 {
    const oac_tensor *t;
    int64_t off, sb, sh, ss;
    const oac_tensor *bias;
    int64_t boff, bh;
} view4;

/* BSNH view of a [B, S, N*H] (or packed [B, S, D]) tensor, heads of
 * size hs starting at column col. */
static view4 view_bsnh(const oac_tensor *t, int64_t hs, int64_t col)
{
    int64_t S = t->dims[1], D = t->dims[2];
    return (view4){ .t = t, .off = col, .sb = S * D, .sh = hs, .ss = D };
}

/* BNSH view of a [B, N, S, H] tensor. */
static view4 view_bnsh(const oac_tensor *t)
{
    int64_t N = t->dims[1], S = t->dims[2], H = t->dims[3];
    return (view4){ .t = t, .sb = N * S * H, .sh = S * H, .ss = H };
}

static uint64_t v4_at(const view4 *v, int64_t b, int64_t h, int64_t s)
{
    return (uint64_t)(v->off + b * v->sb + h * v->sh + s * v->ss);
}

static void v4_load(const view4 *v, int64_t b, int64_t h, int64_t s, int64_t n,
                    double *row)
{
    uint64_t at = v4_at(v, b, h, s);
    int32_t t = v->t->elem_type;
    for (int64_t d = 0; d < n; d++)
        row[d] = oac_ek_getd(t, v->t->data, at + (uint64_t)d);
    if (v->bias) {
        uint64_t bo = (uint64_t)(v->boff + h * v->bh);
        for (int64_t d = 0; d < n; d++)
            row[d] += oac_ek_getd(v->bias->elem_type, v->bias->data, bo + (uint64_t)d);
    }
}

/* Keys or values of one batch entry and kv head: rows [0, split) from
 * seg[0], rows from split on from seg[1] (at row - split). */
typedef struct kvsrc {
    view4 seg[2];
    int64_t split;
} kvsrc;

static void kv_load(const kvsrc *s, int64_t b, int64_t h, int64_t j, int64_t n,
                    double *row)
{
    if (j < s->split)
        v4_load(&s->seg[0], b, h, j, n, row);
    else
        v4_load(&s->seg[1], b, h, j - s->split, n, row);
}

static void row_store(oac_tensor *t, uint64_t at, int64_t n, const double *row)
{
    for (int64_t d = 0; d < n; d++)
        oac_ek_setd(t->elem_type, t->data, at + (uint64_t)d, row[d]);
}

void oac_attn_rope_row(double *x, int64_t rot, const oac_tensor *cos,
                       const oac_tensor *sin, uint64_t at, bool interleaved)
{
    int64_t half = rot / 2;
    for (int64_t i = 0; i < half; i++) {
        double c = oac_ek_getd(cos->elem_type, cos->data, at + (uint64_t)i);
        double s = oac_ek_getd(sin->elem_type, sin->data, at + (uint64_t)i);
        int64_t a = interleaved ? 2 * i : i, z = interleaved ? 2 * i + 1 : i + half;
        double x1 = x[a], x2 = x[z];
        x[a] = x1 * c - x2 * s;
        x[z] = x1 * s + x2 * c;
    }
}

/* ------------------------------------------------------------------ */
/* One query row: the online softmax                                    */
/* ------------------------------------------------------------------ */

/* An additive term of the scores for one (b, h, s): element t[off + j]. */
typedef enum addk {
    ADD_NONE = 0,
    ADD_FLOAT,          /* added as is */
    ADD_BOOL,           /* false: the key is excluded */
    ADD_RAW01           /* integer 0/1: 0 adds mfv */
} addk;

typedef struct addrow {
    addk kind;
    const oac_tensor *t;
    uint64_t off;
    int64_t len;        /* keys j >= len are excluded (a short attn_mask) */
} addrow;

typedef struct attn_row {
    const double *q;            /* hd values, scale applied */
    int64_t hd, hv;
    const kvsrc *k, *v;
    int64_t b, kh;
    int64_t n_keys;             /* keys [0, n_keys) exist */
    int64_t j0, j1;             /* keys outside [j0, j1) are excluded */
    double softcap;
    addrow add[2];
    double mfv;                 /* ADD_RAW01's value, and added to keys */
    int64_t mfv_from;           /*   j >= mfv_from (key lengths) */
    bool sink;                  /* a sink logit in the denominator */
    double sink_logit;
    /* ONNX qk_matmul_output: mode 0-3 into qk[qk_off + j], j < n_keys. */
    oac_tensor *qk;
    uint64_t qk_off;
    int qk_mode;
} attn_row;

/* Score of key j before (raw) and after softcap; false when excluded
 * (*x then -inf). */
static bool score(const attn_row *r, int64_t j, double *row, double *raw,
                  double *capped, double *x)
{
    kv_load(r->k, r->b, r->kh, j, r->hd, row);
    double dot = 0;
    for (int64_t d = 0; d < r->hd; d++)
        dot += r->q[d] * row[d];
    *raw = dot;
    if (r->softcap > 0)
        dot = r->softcap * tanh(dot / r->softcap);
    *capped = dot;
    bool in = j >= r->j0 && j < r->j1;
    for (int a = 0; in && a < 2; a++) {
        const addrow *ad = &r->add[a];
        if (ad->kind == ADD_NONE)
            continue;
        if (j >= ad->len) {
            in = false;
            break;
        }
        uint64_t at = ad->off + (uint64_t)j;
        switch (ad->kind) {
        case ADD_FLOAT:
            dot += oac_ek_getd(ad->t->elem_type, ad->t->data, at);
            break;
        case ADD_BOOL:
            in = oac_ek_geti(ad->t->elem_type, ad->t->data, at) != 0;
            break;
        default:
            if (oac_ek_geti(ad->t->elem_type, ad->t->data, at) <= 0)
                dot += r->mfv;
            break;
        }
    }
    if (in && j >= r->mfv_from)
        dot += r->mfv;
    *x = in ? dot : -INFINITY;
    return in && dot != -INFINITY;
}

/* out[0..hv) = softmax-weighted values of the row's keys (zeros when no
 * key is left).  row and acc are the caller's buffers of
 * OAC_ATTN_MAX_HEAD doubles. */
static void attend(const attn_row *r, double *row, double *out)
{
    double m = -INFINITY, l = 0;
    for (int64_t d = 0; d < r->hv; d++)
        out[d] = 0;
    bool all = r->qk != NULL;   /* qk output: every key's score */
    int64_t from = all ? 0 : r->j0, to = all ? r->n_keys : r->j1;
    int32_t qt = r->qk ? r->qk->elem_type : 0;
    for (int64_t j = from; j < to; j++) {
        double raw, capped, x;
        bool in = score(r, j, row, &raw, &capped, &x);
        if (r->qk && r->qk_mode < 3)
            oac_ek_setd(qt, r->qk->data, r->qk_off + (uint64_t)j,
                        r->qk_mode == 0 ? raw : r->qk_mode == 1 ? capped : x);
        if (!in)
            continue;
        double w;
        if (x > m) {
            double c = m == -INFINITY ? 0 : exp(m - x);
            l *= c;
            for (int64_t d = 0; d < r->hv; d++)
                out[d] *= c;
            m = x;
            w = 1;
        } else {
            w = exp(x - m);
        }
        l += w;
        kv_load(r->v, r->b, r->kh, j, r->hv, row);
        for (int64_t d = 0; d < r->hv; d++)
            out[d] += w * row[d];
    }
    if (r->sink) {
        double x = r->sink_logit;
        if (x > m) {
            double c = m == -INFINITY ? 0 : exp(m - x);
            l *= c;
            for (int64_t d = 0; d < r->hv; d++)
                out[d] *= c;
            m = x;
            l += 1;
        } else {
            l += exp(x - m);
        }
    }
    double inv = l > 0 ? 1 / l : 0;
    for (int64_t d = 0; d < r->hv; d++)
        out[d] *= inv;
    if (r->qk && r->qk_mode == 3)
        for (int64_t j = 0; j < r->n_keys; j++) {
            double raw, capped, x;
            bool in = score(r, j, row, &raw, &capped, &x);
            oac_ek_setd(qt, r->qk->data, r->qk_off + (uint64_t)j,
                        in && l > 0 ? exp(x - m) * inv : 0.0);
        }
}

/* ------------------------------------------------------------------ */
/* Shared checks                                                        */
/* ------------------------------------------------------------------ */

#define T_F16 (OAC_EKM(OAC_T_FLOAT) | OAC_EKM(OAC_T_FLOAT16) | OAC_EKM(OAC_T_BFLOAT16))

static const char *op_of(const oac_kernel_call *k)
{
    return k->node->op_type ? k->node->op_type : "?";
}

static int refuse(oac_kernel_call *k, const char *what)
{
    return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                           "node %s (%s): %s is not implemented by the reference "
                           "runtime", k->node_name, op_of(k), what);
}

/* Refuse head sizes the stack buffers cannot hold (invariant 1). */
static int head_ok(oac_kernel_call *k, int64_t hs)
{
    if (hs > OAC_ATTN_MAX_HEAD)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node %s (%s): head size %" PRId64 " exceeds the "
                               "reference runtime's limit of %d", k->node_name,
                               op_of(k), hs, OAC_ATTN_MAX_HEAD);
    return OAC_OK;
}

/* Invariant 3: batch * q_heads * queries * keys * (hd + hv). */
static int work_ok(oac_kernel_call *k, int64_t B, int64_t N, int64_t S, int64_t T,
                   int64_t hd, int64_t hv)
{
    uint64_t w = 1;
    const int64_t f[] = { B, N, S, T, hd + hv };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (oac_mul_overflow_u64(w, (uint64_t)f[i], &w))
            w = UINT64_MAX;
    if (w > OAC_RT_MAX_KERNEL_OPS)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node %s (%s): %" PRId64 " x %" PRId64 " x %" PRId64
                               " x %" PRId64 " x %" PRId64 " multiply-adds exceed the "
                               "reference runtime's limit of %" PRIu64 " per node",
                               k->node_name, op_of(k), B, N, S, T, hd + hv,
                               OAC_RT_MAX_KERNEL_OPS);
    return OAC_OK;
}

/* A dims string for messages. */
static const char *dstr(const oac_tensor *t, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < t->rank && n + 24 < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%" PRId64, i ? "," : "", t->dims[i]);
    return buf;
}

static bool dims_are(const oac_tensor *t, int rank, const int64_t *d)
{
    if (t->rank != rank)
        return false;
    for (int i = 0; i < rank; i++)
        if (t->dims[i] != d[i])
            return false;
    return true;
}

/* A shape error naming input i and what was expected. */
static int bad_shape(oac_kernel_call *k, size_t i, const char *want)
{
    char b[160];
    return oac_kernel_error(k, oac_kin_name(k, i), "shape [%s] is not %s",
                            dstr(oac_kernel_tensor_in(k, i), b, sizeof b), want);
}

/* A positive integer attribute (kernel-error when absent or < 1). */
static int attr_pos(oac_kernel_call *k, const char *name, int64_t *v)
{
    *v = oac_attr_int(k->node, name, 0);
    if (*v < 1 || *v > INT32_MAX)
        return oac_kernel_error(k, name, "attribute must be a positive integer, "
                                "got %" PRId64, *v);
    return OAC_OK;
}

/* The input port an output may alias: the runtime's view (out_alias),
 * or -1.  A view of any other input than `past` is refused. */
static int alias_of(oac_kernel_call *k, size_t out, size_t past, bool *in_place)
{
    *in_place = false;
    if (out >= k->n_out || !k->out[out] || k->out_alias[out] == -1)
        return OAC_OK;
    if (k->out_alias[out] != (int)past)
        return oac_kernel_error(k, k->node->output[out],
                                "may share storage only with input %zu ('%s')",
                                past, oac_kin_name(k, past));
    *in_place = true;
    return OAC_OK;
}

static bool has_out(const oac_kernel_call *k, size_t i)
{
    return i < k->n_out && k->out[i];
}

/* ------------------------------------------------------------------ */
/* Present caches                                                       */
/* ------------------------------------------------------------------ */

/* The past length of each batch entry, where its new rows go: P for
 * all, or (GroupQueryAttention) seqlens_k[b] + 1 - S, 0 on a first
 * prompt. */
typedef struct past_rule {
    int64_t P;
    const int32_t *seqlens;     /* NULL: P for every entry */
    int64_t S;
    bool first;
} past_rule;

static int64_t past_of(const past_rule *r, int64_t b)
{
    if (!r->seqlens)
        return r->P;
    return r->first ? 0 : (int64_t)r->seqlens[b] + 1 - r->S;
}

/* Rotary for the new rows: position_ids, else past + s. */
typedef struct rope_src {
    const oac_tensor *cos, *sin;
    bool interleaved;
    int64_t rot;
    const int64_t *pos_ids;     /* [B, S], or NULL */
    const past_rule *past;
} rope_src;

static int64_t rope_pos(const rope_src *r, int64_t b, int64_t s, int64_t S)
{
    return r->pos_ids ? r->pos_ids[b * S + s] : past_of(r->past, b) + s;
}

/* Fill present (BNSH [B, N, cap, hs]) for every batch entry: past rows
 * [0, past) copied from past unless in place, the new rows (src, rotated
 * by rot when set) at past, zeros after them unless in place. */
static void fill_present(oac_tensor *present, const view4 *past, bool in_place,
                         const view4 *src, int64_t S, const past_rule *pr,
                         const rope_src *rot, double *row)
{
    int64_t B = present->dims[0], N = present->dims[1], cap = present->dims[2],
            hs = present->dims[3];
    view4 pv = view_bnsh(present);
    int32_t t = present->elem_type;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < N; h++) {
            int64_t at = past_of(pr, b);
            if (!in_place)
                for (int64_t j = 0; j < at; j++) {
                    v4_load(past, b, h, j, hs, row);
                    row_store(present, v4_at(&pv, b, h, j), hs, row);
                }
            for (int64_t s = 0; s < S; s++) {
                v4_load(src, b, h, s, hs, row);
                if (rot) {
                    int64_t p = rope_pos(rot, b, s, S);
                    oac_attn_rope_row(row, rot->rot, rot->cos, rot->sin,
                                      (uint64_t)(p * rot->cos->dims[1]), rot->interleaved);
                }
                row_store(present, v4_at(&pv, b, h, at + s), hs, row);
            }
            if (!in_place)
                for (int64_t j = at + S; j < cap; j++)
                    for (int64_t d = 0; d < hs; d++)
                        oac_ek_setd(t, present->data, v4_at(&pv, b, h, j) + (uint64_t)d, 0);
        }
}

/* ------------------------------------------------------------------ */
/* com.microsoft GroupQueryAttention                                    */
/* ------------------------------------------------------------------ */

enum {
    GQA_Q, GQA_K, GQA_V, GQA_PAST_K, GQA_PAST_V, GQA_SEQLENS, GQA_TOTAL,
    GQA_COS, GQA_SIN, GQA_POS, GQA_BIAS, GQA_SINK, GQA_N_IN
};

int oac_kernel_group_query_attention(oac_kernel_call *k)
{
    int rc;
    int64_t N, KVN;
    if ((rc = attr_pos(k, "num_heads", &N)) || (rc = attr_pos(k, "kv_num_heads", &KVN)))
        return rc;
    if (N % KVN)
        return oac_kernel_error(k, "num_heads", "%" PRId64 " heads are not a multiple "
                                "of kv_num_heads %" PRId64, N, KVN);
    if (k->n_in > GQA_N_IN)
        for (size_t i = GQA_N_IN; i < k->n_in; i++)
            if (k->in[i])
                return refuse(k, "a quantized KV cache or q/k norm weights (inputs 12+)");
    if (oac_attr_int(k->node, "qk_output", 0) || has_out(k, 3))
        return refuse(k, "output_qk");
    if (oac_attr_int(k->node, "sliding_window_cache", 0))
        return refuse(k, "sliding_window_cache");
    bool rotary = oac_attr_int(k->node, "do_rotary", 0) != 0;
    bool interleaved = oac_attr_int(k->node, "rotary_interleaved", 0) != 0;
    bool causal = oac_attr_int(k->node, "causal", 1) != 0;
    int64_t lws = oac_attr_int(k->node, "local_window_size", -1);
    double softcap = oac_attr_float(k->node, "softcap", 0.0f);
    bool smooth = oac_attr_int(k->node, "smooth_softmax", 0) != 0;

    const oac_tensor *q = oac_kin_typed(k, GQA_Q, T_F16);
    if (!q)
        return OAC_ERUNTIME;
    int32_t T = q->elem_type;
    rc = OAC_OK;
    const oac_tensor *key = oac_kin_opt(k, GQA_K, OAC_EKM(T), &rc);
    const oac_tensor *val = rc ? NULL : oac_kin_opt(k, GQA_V, OAC_EKM(T), &rc);
    const oac_tensor *pk = rc ? NULL : oac_kin_opt(k, GQA_PAST_K, OAC_EKM(T), &rc);
    const oac_tensor *pv = rc ? NULL : oac_kin_opt(k, GQA_PAST_V, OAC_EKM(T), &rc);
    const oac_tensor *cos = rc ? NULL : oac_kin_opt(k, GQA_COS, OAC_EKM_FLOAT, &rc);
    const oac_tensor *sin = rc ? NULL : oac_kin_opt(k, GQA_SIN, OAC_EKM_FLOAT, &rc);
    const oac_tensor *pos = rc ? NULL : oac_kin_opt(k, GQA_POS, OAC_EKM(OAC_T_INT64), &rc);
    const oac_tensor *ab = rc ? NULL : oac_kin_opt(k, GQA_BIAS, OAC_EKM_FLOAT, &rc);
    const oac_tensor *sink = rc ? NULL : oac_kin_opt(k, GQA_SINK, OAC_EKM_FLOAT, &rc);
    if (rc)
        return rc;
    const oac_tensor *sl = oac_kin_typed(k, GQA_SEQLENS, OAC_EKM(OAC_T_INT32));
    const oac_tensor *ts = sl ? oac_kin_typed(k, GQA_TOTAL, OAC_EKM(OAC_T_INT32)) : NULL;
    if (!ts)
        return OAC_ERUNTIME;

    /* Shapes. */
    if (q->rank != 3)
        return bad_shape(k, GQA_Q, "(batch, sequence, hidden)");
    int64_t B = q->dims[0], S = q->dims[1], D = q->dims[2], H;
    bool packed = !key;
    if (!key != !val)
        return oac_kernel_error(k, oac_kin_name(k, key ? GQA_V : GQA_K),
                                "key and value must be given together");
    if (packed) {
        if (D % (N + 2 * KVN))
            return bad_shape(k, GQA_Q, "packed (batch, sequence, (num_heads + "
                             "2 * kv_num_heads) * head_size)");
        H = D / (N + 2 * KVN);
    } else {
        if (D % N)
            return bad_shape(k, GQA_Q, "(batch, sequence, num_heads * head_size)");
        H = D / N;
    }
    /* Bounded before any product with it (no overflow below). */
    if ((rc = head_ok(k, H)))
        return rc;
    if (!packed) {
        const int64_t kd[3] = { B, S, KVN * H };
        if (!dims_are(key, 3, kd))
            return bad_shape(k, GQA_K, "(batch, sequence, kv_num_heads * head_size)");
        if (!dims_are(val, 3, kd))
            return bad_shape(k, GQA_V, "(batch, sequence, kv_num_heads * head_size)");
    }
    if (H < 1)
        return bad_shape(k, GQA_Q, "of a head size of at least 1");
    if (!pk != !pv)
        return oac_kernel_error(k, oac_kin_name(k, pk ? GQA_PAST_V : GQA_PAST_K),
                                "past_key and past_value must be given together");
    int64_t P = 0;
    if (pk) {
        if (pk->rank != 4 || pk->dims[0] != B || pk->dims[1] != KVN || pk->dims[3] != H)
            return bad_shape(k, GQA_PAST_K, "(batch, kv_num_heads, length, head_size)");
        if (!dims_are(pv, 4, pk->dims))
            return bad_shape(k, GQA_PAST_V, "past_key's");
        P = pk->dims[2];
    }
    uint64_t n;
    if (!oac_tensor_numel_rt(sl, &n) || n != (uint64_t)B || sl->rank != 1)
        return bad_shape(k, GQA_SEQLENS, "(batch)");
    if (!oac_tensor_numel_rt(ts, &n) || n != 1)
        return bad_shape(k, GQA_TOTAL, "a scalar");
    int64_t TS = ((const int32_t *)ts->data)[0];
    if (TS < 1)
        return oac_kernel_error(k, oac_kin_name(k, GQA_TOTAL),
                                "total_sequence_length %" PRId64 " is not positive", TS);
    bool first = S == TS;
    if (S > 1 && S != TS && B != 1)
        return oac_kernel_error(k, oac_kin_name(k, GQA_Q), "a prompt of %" PRId64
                                " tokens after past context needs batch 1, not %" PRId64,
                                S, B);

    /* Where the present caches are and how long. */
    bool ink = false, inv = false;
    if ((rc = alias_of(k, 1, GQA_PAST_K, &ink)) || (rc = alias_of(k, 2, GQA_PAST_V, &inv)))
        return rc;
    bool presents = has_out(k, 1) || has_out(k, 2);
    if (presents && (!has_out(k, 1) || !has_out(k, 2)))
        return refuse(k, "one present output without the other");
    if (!presents && rotary)
        return refuse(k, "do_rotary without the present outputs");
    int64_t Tp = TS > P ? TS : P;             /* stock present length */
    int64_t cap = ink ? P : Tp;               /* rows present_key holds */
    if (ink != inv)
        return refuse(k, "present_key and present_value not both in place");

    /* Per batch entry: total, past, where rows go; every index checked
     * before anything is written (invariant 2). */
    const int32_t *seqlens = sl->data;
    past_rule pr = { .seqlens = seqlens, .S = S, .first = first };
    int64_t max_keys = 0;
    for (int64_t b = 0; b < B; b++) {
        int64_t t = (int64_t)seqlens[b] + 1;
        int64_t p = past_of(&pr, b);
        if (t < 1 || p < 0)
            return oac_kernel_error(k, oac_kin_name(k, GQA_SEQLENS),
                                    "seqlens_k[%" PRId64 "] = %" PRId64 " gives a total "
                                    "length %" PRId64 " shorter than the %" PRId64
                                    " new tokens", b, t - 1, t, S);
        if (p > P || (presents && p + S > cap))
            return oac_kernel_error(k, oac_kin_name(k, GQA_SEQLENS),
                                    "seqlens_k[%" PRId64 "] = %" PRId64 " puts the new "
                                    "rows at %" PRId64 "..%" PRId64 ", past the %s of "
                                    "%" PRId64 " rows", b, t - 1, p, p + S - 1,
                                    p > P ? "past cache" : "present cache",
                                    p > P ? P : cap);
        /* Keys read: [0, e); rows past p + S exist only in a present
         * cache (a bidirectional first prompt reads up to the total). */
        int64_t e = causal ? (p + S < t ? p + S : t) : t;
        if (e > (presents ? cap : p + S))
            return oac_kernel_error(k, oac_kin_name(k, GQA_SEQLENS),
                                    "seqlens_k[%" PRId64 "] = %" PRId64 " reads keys "
                                    "up to row %" PRId64 ", past the %" PRId64 " rows "
                                    "there are", b, t - 1, e - 1,
                                    presents ? cap : p + S);
        if (e > max_keys)
            max_keys = e;
    }
    if ((rc = work_ok(k, B, N, S, max_keys, H, H)))
        return rc;

    /* Rotary caches and positions. */
    rope_src rs = { 0 };
    const int64_t *pos_ids = pos ? (const int64_t *)pos->data : NULL;
    if (pos) {
        const int64_t pd[2] = { B, S };
        if (!dims_are(pos, 2, pd))
            return bad_shape(k, GQA_POS, "(batch, sequence)");
    }
    if (rotary) {
        if (!cos || !sin)
            return oac_kernel_error(k, oac_kin_name(k, cos ? GQA_SIN : GQA_COS),
                                    "do_rotary needs cos_cache and sin_cache");
        if (cos->rank != 2 || cos->dims[1] < 1 || 2 * cos->dims[1] > H)
            return bad_shape(k, GQA_COS, "(max_position, rotary_dim / 2) with "
                             "rotary_dim <= head_size");
        if (!dims_are(sin, 2, cos->dims))
            return bad_shape(k, GQA_SIN, "cos_cache's");
        for (int64_t b = 0; b < B; b++)
            for (int64_t s = 0; s < S; s++) {
                int64_t p = pos_ids ? pos_ids[b * S + s] : past_of(&pr, b) + s;
                if (p < 0 || p >= cos->dims[0])
                    return oac_kernel_error(k, oac_kin_name(k, pos ? GQA_POS : GQA_SEQLENS),
                                            "position %" PRId64 " of batch %" PRId64
                                            " token %" PRId64 " is outside the rotary "
                                            "caches' %" PRId64 " rows", p, b, s,
                                            cos->dims[0]);
            }
        rs = (rope_src){ .cos = cos, .sin = sin, .interleaved = interleaved,
                         .rot = 2 * cos->dims[1], .pos_ids = pos_ids, .past = &pr };
    }
    if (ab) {
        if (ab->rank != 4 || (ab->dims[0] != 1 && ab->dims[0] != B) ||
            (ab->dims[1] != 1 && ab->dims[1] != N) || ab->dims[2] != S ||
            ab->dims[3] < max_keys)
            return bad_shape(k, GQA_BIAS, "(batch or 1, num_heads or 1, sequence, "
                             "total_sequence_length)");
    }
    if (sink && (!oac_tensor_numel_rt(sink, &n) || n != (uint64_t)N))
        return bad_shape(k, GQA_SINK, "(num_heads)");

    /* Outputs: nothing was written before this point. */
    oac_tensor *y, *ok = NULL, *ov = NULL;
    const int64_t yd[3] = { B, S, N * H };
    if ((rc = oac_kout(k, 0, T, 3, yd, &y)))
        return rc;
    view4 qv = view_bsnh(q, H, 0);
    view4 kn = packed ? view_bsnh(q, H, N * H) : view_bsnh(key, H, 0);
    view4 vn = packed ? view_bsnh(q, H, (N + KVN) * H) : view_bsnh(val, H, 0);
    view4 pkv = pk ? view_bnsh(pk) : kn, pvv = pv ? view_bnsh(pv) : vn;
    double row[OAC_ATTN_MAX_HEAD], qrow[OAC_ATTN_MAX_HEAD], acc[OAC_ATTN_MAX_HEAD];
    kvsrc ks, vs;
    if (presents) {
        const int64_t pd[4] = { B, KVN, cap, H };
        if ((rc = oac_kout(k, 1, T, 4, pd, &ok)) ||
            (rc = oac_kout(k, 2, T, 4, pd, &ov)))
            return rc;
        fill_present(ok, &pkv, ink, &kn, S, &pr, rotary ? &rs : NULL, row);
        fill_present(ov, &pvv, inv, &vn, S, &pr, NULL, row);
        ks = (kvsrc){ .seg = { view_bnsh(ok) }, .split = INT64_MAX };
        vs = (kvsrc){ .seg = { view_bnsh(ov) }, .split = INT64_MAX };
    } else {
        ks = (kvsrc){ .seg = { pkv, kn } };
        vs = (kvsrc){ .seg = { pvv, vn } };
    }

    double scale = oac_attr_float(k->node, "scale", 0.0f);
    if (scale == 0)
        scale = 1 / sqrt((double)H);
    int64_t group = N / KVN;
    view4 yv = view_bsnh(y, H, 0);
    for (int64_t b = 0; b < B; b++) {
        int64_t past = past_of(&pr, b), total = (int64_t)seqlens[b] + 1;
        if (!presents)
            ks.split = vs.split = past;
        for (int64_t s = 0; s < S; s++) {
            int64_t end = causal ? past + s + 1 : total;
            if (end > total)
                end = total;
            int64_t start = lws >= 0 && end - lws > 0 ? end - lws : 0;
            for (int64_t h = 0; h < N; h++) {
                v4_load(&qv, b, h, s, H, qrow);
                if (rotary) {
                    int64_t p = rope_pos(&rs, b, s, S);
                    oac_attn_rope_row(qrow, rs.rot, cos, sin,
                                      (uint64_t)(p * cos->dims[1]), interleaved);
                }
                for (int64_t d = 0; d < H; d++)
                    qrow[d] *= scale;
                attn_row r = { .q = qrow, .hd = H, .hv = H, .k = &ks, .v = &vs,
                               .b = b, .kh = h / group, .n_keys = end,
                               .j0 = start, .j1 = end, .softcap = softcap,
                               .mfv_from = INT64_MAX };
                if (ab)
                    r.add[0] = (addrow){ ADD_FLOAT, ab,
                        (uint64_t)((((b % ab->dims[0]) * ab->dims[1] + h % ab->dims[1]) *
                                    S + s) * ab->dims[3]), INT64_MAX };
                if (smooth || sink) {
                    r.sink = true;
                    r.sink_logit = sink ? oac_ek_getd(sink->elem_type, sink->data,
                                                      (uint64_t)h) : 0.0;
                }
                attend(&r, row, acc);
                row_store(y, v4_at(&yv, b, h, s), H, acc);
            }
        }
    }
    return OAC_OK;
}

/* ------------------------------------------------------------------ */
/* com.microsoft MultiHeadAttention                                     */
/* ------------------------------------------------------------------ */

enum {
    MHA_Q, MHA_K, MHA_V, MHA_BIAS, MHA_KPM, MHA_AB, MHA_PAST_K, MHA_PAST_V,
    MHA_PAST_LEN, MHA_CACHE_IND
};

int oac_kernel_multi_head_attention(oac_kernel_call *k)
{
    int rc;
    int64_t N;
    if ((rc = attr_pos(k, "num_heads", &N)))
        return rc;
    bool uni = oac_attr_int(k->node, "unidirectional", 0) != 0;
    double mfv = oac_attr_float(k->node, "mask_filter_value", -10000.0f);
    if (k->n_in > MHA_CACHE_IND && k->in[MHA_CACHE_IND])
        return refuse(k, "cache_indirection (beam search)");
    if (has_out(k, 3))
        return refuse(k, "the qk output");
    const oac_tensor *q = oac_kin_typed(k, MHA_Q, T_F16);
    if (!q)
        return OAC_ERUNTIME;
    int32_t T = q->elem_type;
    rc = OAC_OK;
    const oac_tensor *key = oac_kin_opt(k, MHA_K, OAC_EKM(T), &rc);
    const oac_tensor *val = rc ? NULL : oac_kin_opt(k, MHA_V, OAC_EKM(T), &rc);
    const oac_tensor *bias = rc ? NULL : oac_kin_opt(k, MHA_BIAS, OAC_EKM_FLOAT, &rc);
    const oac_tensor *kpm = rc ? NULL : oac_kin_opt(k, MHA_KPM, OAC_EKM(OAC_T_INT32), &rc);
    const oac_tensor *ab = rc ? NULL : oac_kin_opt(k, MHA_AB, OAC_EKM_FLOAT, &rc);
    const oac_tensor *pk = rc ? NULL : oac_kin_opt(k, MHA_PAST_K, OAC_EKM(T), &rc);
    const oac_tensor *pv = rc ? NULL : oac_kin_opt(k, MHA_PAST_V, OAC_EKM(T), &rc);
    const oac_tensor *pl = rc ? NULL : oac_kin_opt(k, MHA_PAST_LEN, OAC_EKM(OAC_T_INT32), &rc);
    if (rc)
        return rc;
    if (q->rank != 3)
        return q->rank == 5 ? refuse(k, "packed QKV (rank-5 query)")
                            : bad_shape(k, MHA_Q, "(batch, sequence, hidden)");
    if (!key || !val)
        return refuse(k, "MultiHeadAttention without key and value");
    int64_t B = q->dims[0], S = q->dims[1], D = q->dims[2];
    if (D % N)
        return bad_shape(k, MHA_Q, "(batch, sequence, num_heads * head_size)");
    int64_t H = D / N, L, Hv;
    bool cross = key->rank == 4;
    if (key->rank == 5)
        return refuse(k, "packed KV (rank-5 key)");
    if (cross) {
        const int64_t kd[4] = { B, N, key->dims[2], H };
        if (!dims_are(key, 4, kd))
            return bad_shape(k, MHA_K, "(batch, num_heads, kv_sequence, head_size)");
        L = key->dims[2];
        if (val->rank != 4 || val->dims[0] != B || val->dims[1] != N || val->dims[2] != L)
            return bad_shape(k, MHA_V, "(batch, num_heads, kv_sequence, v_head_size)");
        Hv = val->dims[3];
        if (pk)
            return oac_kernel_error(k, oac_kin_name(k, MHA_PAST_K), "a past cache "
                                    "cannot be combined with a BNSH key");
    } else {
        if (key->rank != 3 || key->dims[0] != B || key->dims[2] != D)
            return bad_shape(k, MHA_K, "(batch, kv_sequence, hidden)");
        L = key->dims[1];
        if (val->rank != 3 || val->dims[0] != B || val->dims[1] != L || val->dims[2] % N)
            return bad_shape(k, MHA_V, "(batch, kv_sequence, num_heads * v_head_size)");
        Hv = val->dims[2] / N;
    }
    if (H < 1 || Hv < 1)
        return bad_shape(k, MHA_Q, "of head sizes of at least 1");
    if ((rc = head_ok(k, H)) || (rc = head_ok(k, Hv)))
        return rc;
    uint64_t n;
    if (bias && (cross || !oac_tensor_numel_rt(bias, &n) || n != (uint64_t)(2 * D + N * Hv)))
        return bad_shape(k, MHA_BIAS, "(hidden + hidden + v_hidden) with a BSNH key");
    if (!pk != !pv)
        return oac_kernel_error(k, oac_kin_name(k, pk ? MHA_PAST_V : MHA_PAST_K),
                                "past_key and past_value must be given together");
    int64_t P = 0, cap = 0;
    bool share = pl && pk;
    if (pk) {
        const int64_t vd[4] = { B, N, pk->dims[2], Hv };
        if (pk->rank != 4 || pk->dims[0] != B || pk->dims[1] != N || pk->dims[3] != H)
            return bad_shape(k, MHA_PAST_K, "(batch, num_heads, length, head_size)");
        if (!dims_are(pv, 4, vd))
            return bad_shape(k, MHA_PAST_V, "(batch, num_heads, length, v_head_size)");
        P = cap = pk->dims[2];
        if (share) {
            if (!oac_tensor_numel_rt(pl, &n) || n != 1)
                return bad_shape(k, MHA_PAST_LEN, "a scalar");
            P = ((const int32_t *)pl->data)[0];
            if (P < 0 || P + L > cap)
                return oac_kernel_error(k, oac_kin_name(k, MHA_PAST_LEN),
                                        "past_sequence_length %" PRId64 " and %" PRId64
                                        " new rows do not fit the buffer of %" PRId64
                                        " rows", P, L, cap);
        }
    }
    int64_t TT = P + L;
    if (!share)
        cap = TT;
    if (kpm) {
        bool lens = kpm->rank == 1 && kpm->dims[0] == B;
        if (lens && pk)
            return refuse(k, "key_padding_mask of shape (batch) with a past cache");
        if (!lens && !(kpm->rank == 2 && kpm->dims[0] == B && kpm->dims[1] >= TT) &&
            !(kpm->rank == 3 && kpm->dims[0] == B && kpm->dims[1] == S && kpm->dims[2] >= TT))
            return kpm->rank == 1 ? refuse(k, "key_padding_mask of shape (3 * batch + 2)")
                                  : bad_shape(k, MHA_KPM, "(batch), (batch, "
                                              "total_sequence) or (batch, sequence, "
                                              "total_sequence)");
    }
    if (ab && (ab->rank != 4 || (ab->dims[0] != 1 && ab->dims[0] != B) ||
               (ab->dims[1] != 1 && ab->dims[1] != N) || ab->dims[2] != S ||
               ab->dims[3] < TT))
        return bad_shape(k, MHA_AB, "(batch or 1, num_heads or 1, sequence, "
                         "total_sequence)");
    bool ink = false, inv = false;
    if ((rc = alias_of(k, 1, MHA_PAST_K, &ink)) || (rc = alias_of(k, 2, MHA_PAST_V, &inv)))
        return rc;
    if ((ink || inv) && !share)
        return oac_kernel_error(k, k->node->output[ink ? 1 : 2], "shares the past's "
                                "storage, which needs input 8 (past_sequence_length)");
    bool presents = has_out(k, 1) || has_out(k, 2);
    if (presents && (!has_out(k, 1) || !has_out(k, 2)))
        return refuse(k, "one present output without the other");
    if (ink != inv)
        return refuse(k, "present_key and present_value not both in place");
    if ((rc = work_ok(k, B, N, S, TT, H, Hv)))
        return rc;

    oac_tensor *y, *ok = NULL, *ov = NULL;
    const int64_t yd[3] = { B, S, N * Hv };
    if ((rc = oac_kout(k, 0, T, 3, yd, &y)))
        return rc;
    view4 qv = view_bsnh(q, H, 0);
    view4 kn = cross ? view_bnsh(key) : view_bsnh(key, H, 0);
    view4 vn = cross ? view_bnsh(val) : view_bsnh(val, Hv, 0);
    if (bias) {
        qv.bias = bias, qv.boff = 0, qv.bh = H;
        kn.bias = bias, kn.boff = D, kn.bh = H;
        vn.bias = bias, vn.boff = 2 * D, vn.bh = Hv;
    }
    view4 pkv = pk ? view_bnsh(pk) : kn, pvv = pv ? view_bnsh(pv) : vn;
    double row[OAC_ATTN_MAX_HEAD], qrow[OAC_ATTN_MAX_HEAD], acc[OAC_ATTN_MAX_HEAD];
    kvsrc ks, vs;
    if (presents) {
        const int64_t kd[4] = { B, N, cap, H }, vd[4] = { B, N, cap, Hv };
        if ((rc = oac_kout(k, 1, T, 4, kd, &ok)) ||
            (rc = oac_kout(k, 2, T, 4, vd, &ov)))
            return rc;
        past_rule pr = { .P = P };
        fill_present(ok, &pkv, ink, &kn, L, &pr, NULL, row);
        fill_present(ov, &pvv, inv, &vn, L, &pr, NULL, row);
        ks = (kvsrc){ .seg = { view_bnsh(ok) }, .split = INT64_MAX };
        vs = (kvsrc){ .seg = { view_bnsh(ov) }, .split = INT64_MAX };
    } else {
        ks = (kvsrc){ .seg = { pkv, kn }, .split = P };
        vs = (kvsrc){ .seg = { pvv, vn }, .split = P };
    }
    double scale = oac_attr_float(k->node, "scale", 0.0f);
    if (scale == 0)
        scale = 1 / sqrt((double)H);
    view4 yv = view_bsnh(y, Hv, 0);
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < S; s++)
            for (int64_t h = 0; h < N; h++) {
                v4_load(&qv, b, h, s, H, qrow);
                for (int64_t d = 0; d < H; d++)
                    qrow[d] *= scale;
                attn_row r = { .q = qrow, .hd = H, .hv = Hv, .k = &ks, .v = &vs,
                               .b = b, .kh = h, .n_keys = TT, .j0 = 0,
                               .j1 = uni && P + s + 1 < TT ? P + s + 1 : TT,
                               .mfv = mfv, .mfv_from = INT64_MAX };
                if (kpm && kpm->rank == 1)
                    r.mfv_from = ((const int32_t *)kpm->data)[b];
                else if (kpm)
                    r.add[0] = (addrow){ ADD_RAW01, kpm,
                        (uint64_t)(kpm->rank == 2 ? b * kpm->dims[1]
                                   : (b * S + s) * kpm->dims[2]), INT64_MAX };
                if (ab)
                    r.add[1] = (addrow){ ADD_FLOAT, ab,
                        (uint64_t)((((b % ab->dims[0]) * ab->dims[1] + h % ab->dims[1]) *
                                    S + s) * ab->dims[3]), INT64_MAX };
                attend(&r, row, acc);
                row_store(y, v4_at(&yv, b, h, s), Hv, acc);
            }
    return OAC_OK;
}

/* ------------------------------------------------------------------ */
/* ONNX Attention (opsets 23, 24)                                       */
/* ------------------------------------------------------------------ */

enum { AT_Q, AT_K, AT_V, AT_MASK, AT_PAST_K, AT_PAST_V, AT_NONPAD };

int oac_kernel_attention(oac_kernel_call *k)
{
    int rc = OAC_OK;
    const oac_tensor *q = oac_kin_typed(k, AT_Q, OAC_EKM_FLOAT);
    const oac_tensor *key = q ? oac_kin_typed(k, AT_K, OAC_EKM(q->elem_type)) : NULL;
    const oac_tensor *val = key ? oac_kin_typed(k, AT_V, OAC_EKM_FLOAT) : NULL;
    if (!val)
        return OAC_ERUNTIME;
    const oac_tensor *mask = oac_kin_opt(k, AT_MASK, OAC_EKM_FLOAT | OAC_EKM_BOOL, &rc);
    const oac_tensor *pk = rc ? NULL : oac_kin_opt(k, AT_PAST_K, OAC_EKM(key->elem_type), &rc);
    const oac_tensor *pv = rc ? NULL : oac_kin_opt(k, AT_PAST_V, OAC_EKM(val->elem_type), &rc);
    const oac_tensor *np = rc ? NULL : oac_kin_opt(k, AT_NONPAD, OAC_EKM(OAC_T_INT64), &rc);
    if (rc)
        return rc;
    bool causal = oac_attr_int(k->node, "is_causal", 0) != 0;
    int64_t mode = oac_attr_int(k->node, "qk_matmul_output_mode", 0);
    double softcap = oac_attr_float(k->node, "softcap", 0.0f);
    if (mode < 0 || mode > 3)
        return oac_kernel_error(k, "qk_matmul_output_mode", "must be 0, 1, 2 or 3, "
                                "not %" PRId64, mode);
    if (oac_node_attr(k->node, "left_window_size") || oac_node_attr(k->node, "right_window_size"))
        return refuse(k, "a sliding window (opset 25)");

    /* Shapes, in BNSH terms. */
    int64_t B = q->dims[0], Nq, Nk, Sq, Skv, H, Hv;
    bool r3 = q->rank == 3;
    view4 qv, kn, vn;
    if (r3) {
        int64_t qn, kvn;
        if ((rc = attr_pos(k, "q_num_heads", &qn)) || (rc = attr_pos(k, "kv_num_heads", &kvn)))
            return rc;
        if (q->dims[2] % qn)
            return bad_shape(k, AT_Q, "(batch, sequence, q_num_heads * head_size)");
        Nq = qn, Nk = kvn, Sq = q->dims[1], H = q->dims[2] / qn;
        if ((rc = head_ok(k, H)))      /* before kvn * H */
            return rc;
        if (key->rank != 3 || key->dims[0] != B || key->dims[2] != kvn * H)
            return bad_shape(k, AT_K, "(batch, kv_sequence, kv_num_heads * head_size)");
        Skv = key->dims[1];
        if (val->rank != 3 || val->dims[0] != B || val->dims[1] != Skv || val->dims[2] % kvn)
            return bad_shape(k, AT_V, "(batch, kv_sequence, kv_num_heads * v_head_size)");
        Hv = val->dims[2] / kvn;
        qv = view_bsnh(q, H, 0), kn = view_bsnh(key, H, 0), vn = view_bsnh(val, Hv, 0);
    } else if (q->rank == 4) {
        Nq = q->dims[1], Sq = q->dims[2], H = q->dims[3];
        if (key->rank != 4 || key->dims[0] != B || key->dims[3] != H)
            return bad_shape(k, AT_K, "(batch, kv_num_heads, kv_sequence, head_size)");
        Nk = key->dims[1], Skv = key->dims[2];
        if (val->rank != 4 || val->dims[0] != B || val->dims[1] != Nk || val->dims[2] != Skv)
            return bad_shape(k, AT_V, "(batch, kv_num_heads, kv_sequence, v_head_size)");
        Hv = val->dims[3];
        qv = view_bnsh(q), kn = view_bnsh(key), vn = view_bnsh(val);
    } else {
        return bad_shape(k, AT_Q, "3-D or 4-D");
    }
    if (Nk < 1 || Nq % Nk)
        return oac_kernel_error(k, oac_kin_name(k, AT_K), "%" PRId64 " query heads are "
                                "not a multiple of %" PRId64 " key heads", Nq, Nk);
    if (H < 1 || Hv < 1)
        return bad_shape(k, AT_Q, "of head sizes of at least 1");
    if ((rc = head_ok(k, H)) || (rc = head_ok(k, Hv)))
        return rc;
    if (!pk != !pv)
        return oac_kernel_error(k, oac_kin_name(k, pk ? AT_PAST_V : AT_PAST_K),
                                "past_key and past_value must be given together");
    int64_t P = 0;
    if (pk) {
        if (pk->rank != 4 || pk->dims[0] != B || pk->dims[1] != Nk || pk->dims[3] != H)
            return bad_shape(k, AT_PAST_K, "(batch, kv_num_heads, past_sequence, head_size)");
        const int64_t vd[4] = { B, Nk, pk->dims[2], Hv };
        if (!dims_are(pv, 4, vd))
            return bad_shape(k, AT_PAST_V, "(batch, kv_num_heads, past_sequence, v_head_size)");
        P = pk->dims[2];
        if (np)
            return oac_kernel_error(k, oac_kin_name(k, AT_NONPAD), "nonpad_kv_seqlen "
                                    "cannot be combined with past_key and past_value");
    }
    int64_t TT = P + Skv;
    uint64_t n;
    if (np && (np->rank != 1 || !oac_tensor_numel_rt(np, &n) || n != (uint64_t)B))
        return bad_shape(k, AT_NONPAD, "(batch)");
    /* attn_mask broadcasts to (B, Nq, Sq, TT), right-aligned; its last
     * dimension may be shorter (the rest is excluded). */
    int64_t ms[4] = { 0, 0, 0, 0 };
    if (mask) {
        if (mask->rank < 1 || mask->rank > 4 || mask->dims[mask->rank - 1] > TT)
            return bad_shape(k, AT_MASK, "broadcastable to (batch, q_num_heads, "
                             "q_sequence, total_sequence)");
        const int64_t full[3] = { B, Nq, Sq };
        int64_t st = mask->dims[mask->rank - 1];
        for (int a = 2; a >= 0; a--) {
            int mi = mask->rank - 1 - (3 - a);
            int64_t d = mi >= 0 ? mask->dims[mi] : 1;
            if (d != 1 && d != full[a])
                return bad_shape(k, AT_MASK, "broadcastable to (batch, q_num_heads, "
                                 "q_sequence, total_sequence)");
            ms[a] = d == 1 ? 0 : st;
            st *= d;
        }
    }
    if ((rc = work_ok(k, B, Nq, Sq, TT, H, Hv)))
        return rc;

    oac_tensor *y, *ok = NULL, *ov = NULL, *qk = NULL;
    const int64_t y3[3] = { B, Sq, Nq * Hv }, y4[4] = { B, Nq, Sq, Hv };
    if ((rc = oac_kout(k, 0, q->elem_type, r3 ? 3 : 4, r3 ? y3 : y4, &y)))
        return rc;
    view4 pkv = pk ? view_bnsh(pk) : kn, pvv = pv ? view_bnsh(pv) : vn;
    double row[OAC_ATTN_MAX_HEAD], qrow[OAC_ATTN_MAX_HEAD], acc[OAC_ATTN_MAX_HEAD];
    past_rule pr = { .P = P };
    if (has_out(k, 1)) {
        const int64_t d[4] = { B, Nk, TT, H };
        if ((rc = oac_kout(k, 1, key->elem_type, 4, d, &ok)))
            return rc;
        fill_present(ok, &pkv, false, &kn, Skv, &pr, NULL, row);
    }
    if (has_out(k, 2)) {
        const int64_t d[4] = { B, Nk, TT, Hv };
        if ((rc = oac_kout(k, 2, val->elem_type, 4, d, &ov)))
            return rc;
        fill_present(ov, &pvv, false, &vn, Skv, &pr, NULL, row);
    }
    if (has_out(k, 3)) {
        const int64_t d[4] = { B, Nq, Sq, TT };
        if ((rc = oac_kout(k, 3, q->elem_type, 4, d, &qk)))
            return rc;
    }
    kvsrc ks = { .seg = { pkv, kn }, .split = P }, vs = { .seg = { pvv, vn }, .split = P };
    double scale = oac_attr_float(k->node, "scale", 0.0f);
    if (!oac_node_attr(k->node, "scale"))
        scale = 1 / sqrt((double)H);
    int64_t group = Nq / Nk;
    view4 yv = r3 ? view_bsnh(y, Hv, 0) : view_bnsh(y);
    for (int64_t b = 0; b < B; b++) {
        int64_t valid = TT, off = P;
        if (np) {
            int64_t v = ((const int64_t *)np->data)[b];
            valid = v < 0 ? 0 : v < TT ? v : TT;
            off = v - Sq;
        }
        for (int64_t h = 0; h < Nq; h++)
            for (int64_t s = 0; s < Sq; s++) {
                v4_load(&qv, b, h, s, H, qrow);
                for (int64_t d = 0; d < H; d++)
                    qrow[d] *= scale;
                int64_t end = valid;
                if (causal && s + off + 1 < end)
                    end = s + off + 1 > 0 ? s + off + 1 : 0;
                attn_row r = { .q = qrow, .hd = H, .hv = Hv, .k = &ks, .v = &vs,
                               .b = b, .kh = h / group, .n_keys = TT, .j0 = 0,
                               .j1 = end, .softcap = softcap, .mfv_from = INT64_MAX,
                               .qk = qk, .qk_mode = (int)mode };
                if (qk)
                    r.qk_off = (uint64_t)(((b * Nq + h) * Sq + s) * TT);
                if (mask)
                    r.add[0] = (addrow){ mask->elem_type == OAC_T_BOOL ? ADD_BOOL : ADD_FLOAT,
                                         mask, (uint64_t)(b * ms[0] + h * ms[1] + s * ms[2]),
                                         mask->dims[mask->rank - 1] };
                attend(&r, row, acc);
                row_store(y, v4_at(&yv, b, h, s), Hv, acc);
            }
    }
    return OAC_OK;
}

/* kernels/attn_ms.c: com.microsoft Attention, the fused attention of
 * GPT-2 and BERT exports (contract sections 6 and 10), an adapter onto the
 * attention core (kernels/attn_core.c).
 *
 * Owns the operator's semantics, from ONNX Runtime's ContribOperators.md
 * and its CPU kernel (compared side by side with ONNX Runtime 1.30 in
 * FLOAT and FLOAT16, tests/ort_diff.sh; BFLOAT16 follows the same
 * definition, computed in double):
 *  - Q, K, V = input x weights + bias ([B, S, D_in] x [D_in, Dq + Dk + Dv]),
 *    the columns split by qkv_hidden_sizes (default three equal parts),
 *    num_heads heads each; computed row by row as the core asks for them
 *    (no workspace), the new K and V rows straight into the present;
 *  - past [2, B, N, P, H] (K then V) and present [2, B, N, M, H]:
 *    growing (M = P + S, present = past ++ new), or with
 *    past_present_share_buffer = 1 and past_sequence_length (input 6,
 *    L): past and present are one buffer of M = capacity rows, the new
 *    rows go at L .. L + S - 1 and the keys are [0, L + S) (in place when
 *    the runtime hands present as a view of past).  ONNX Runtime's CPU
 *    kernel ignores input 6 (its shared buffer runs on CUDA only), so
 *    that form is checked against the documented semantics and against
 *    the growing form's numbers;
 *  - mask_index: none; [B] key lengths (keys j >= len[b] add
 *    mask_filter_value); [2B] end then start positions (keys before the
 *    start are excluded, from the end on add mask_filter_value); [B, T']
 *    or [B, S, T'] with T' >= keys, 0/1 (0 adds mask_filter_value, as
 *    ONNX Runtime's CPU kernel); the 4-D Megatron form is
 *    unsupported-operator;
 *  - attention_bias [B or 1, N or 1, S, T'] added; unidirectional: query
 *    s sees keys [0, past + s + 1); scale default 1 / sqrt(H).
 * Invariants: every shape, length and the alias are checked before the
 * first byte is written (kernel-error naming node and value); only the
 * outputs are allocated (an omitted present is the runtime's workspace,
 * oac_kernel_output); work is bounded before anything is allocated.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/attn.h"

enum { MA_IN, MA_W, MA_BIAS, MA_MASK, MA_PAST, MA_AB, MA_PAST_LEN };

typedef enum mask_kind { MK_NONE, MK_LENS, MK_END_START, MK_RAW2, MK_RAW3 } mask_kind;

typedef struct msa {
    const oac_tensor *x, *w, *bias, *mask, *past, *ab, *pl;
    int64_t N, B, S, Din, Dq, Dk, Dv, H, Hv, P, M, T;
    bool share, in_place;
    double mfv;
    mask_kind mk;
} msa;

static int msa_inputs(oac_kernel_call *k, msa *a)
{
    int rc;
    if ((rc = oac_attn_attr_pos(k, "num_heads", &a->N)))
        return rc;
    if (oac_attr_int(k->node, "do_rotary", 0))
        return oac_attn_refuse(k, "do_rotary");
    a->mfv = oac_attr_float(k->node, "mask_filter_value", -10000.0f);
    const oac_tensor *x = a->x = oac_kin_typed(k, MA_IN, OAC_ATTN_T16);
    if (!x)
        return OAC_ERUNTIME;
    uint32_t T = OAC_EKM(x->elem_type);
    if (!(a->w = oac_kin_typed(k, MA_W, T)))
        return OAC_ERUNTIME;
    rc = OAC_OK;
    a->bias = oac_kin_opt(k, MA_BIAS, T, &rc);
    a->mask = rc ? NULL : oac_kin_opt(k, MA_MASK, OAC_EKM(OAC_T_INT32), &rc);
    a->past = rc ? NULL : oac_kin_opt(k, MA_PAST, T, &rc);
    a->ab = rc ? NULL : oac_kin_opt(k, MA_AB, OAC_EKM_FLOAT, &rc);
    a->pl = rc ? NULL : oac_kin_opt(k, MA_PAST_LEN, OAC_EKM(OAC_T_INT32), &rc);
    if (rc)
        return rc;
    if (x->rank != 3)
        return oac_attn_bad_shape(k, MA_IN, "(batch, sequence, input_hidden)");
    a->B = x->dims[0], a->S = x->dims[1], a->Din = x->dims[2];
    if (a->w->rank != 2 || a->w->dims[0] != a->Din)
        return oac_attn_bad_shape(k, MA_W, "(input_hidden, q_hidden + k_hidden + v_hidden)");
    int64_t sz[3];
    size_t n = 0;
    const Onnx__AttributeProto *qs = oac_node_attr(k->node, "qkv_hidden_sizes");
    if (qs) {
        n = qs->n_ints;
        for (size_t i = 0; i < n && i < 3; i++)
            sz[i] = qs->ints[i];
    } else {
        n = 3;
        sz[0] = sz[1] = sz[2] = a->w->dims[1] / 3;
    }
    if (n != 3 || sz[0] < 1 || sz[1] != sz[0] || sz[2] < 1 || sz[0] % a->N || sz[2] % a->N ||
        sz[0] > INT32_MAX || sz[2] > INT32_MAX || 2 * sz[0] + sz[2] != a->w->dims[1])
        return oac_kernel_error(k, oac_kin_name(k, MA_W), "%" PRId64 " columns do not split "
                                "into q, k and v hidden sizes (q = k, each a multiple of "
                                "num_heads %" PRId64 ")", a->w->dims[1], a->N);
    a->Dq = a->Dk = sz[0], a->Dv = sz[2];
    a->H = a->Dq / a->N, a->Hv = a->Dv / a->N;
    if ((rc = oac_attn_head_ok(k, a->H)) || (rc = oac_attn_head_ok(k, a->Hv)))
        return rc;
    uint64_t nb;
    if (a->bias && (!oac_tensor_numel_rt(a->bias, &nb) || a->bias->rank != 1 ||
                    nb != (uint64_t)a->w->dims[1]))
        return oac_attn_bad_shape(k, MA_BIAS, "(q_hidden + k_hidden + v_hidden)");
    return OAC_OK;
}

/* The past, the shared buffer's length and the present's rows. */
static int msa_past(oac_kernel_call *k, msa *a)
{
    const oac_tensor *past = a->past;
    int64_t S = a->S;
    a->share = oac_attr_int(k->node, "past_present_share_buffer", 0) && a->pl && past;
    a->P = 0;
    if (past) {
        if (a->H != a->Hv)
            return oac_attn_refuse(k, "a past with different k and v head sizes");
        const int64_t want[5] = { 2, a->B, a->N, past->rank == 5 ? past->dims[3] : 0, a->H };
        if (!oac_tensor_dims_are(past, 5, want))
            return oac_attn_bad_shape(k, MA_PAST, "(2, batch, num_heads, past_sequence, "
                                      "head_size)");
        a->P = past->dims[3];
    }
    a->M = a->P + S;
    if (a->share) {
        uint64_t n;
        if (!oac_tensor_numel_rt(a->pl, &n) || n != 1)
            return oac_attn_bad_shape(k, MA_PAST_LEN, "a scalar");
        int64_t L = ((const int32_t *)a->pl->data)[0];
        int rc = oac_attn_fits(k, MA_PAST_LEN, L, S, a->P, oac_kin_name(k, MA_PAST));
        if (rc)
            return rc;
        a->M = a->P;
        a->P = L;
    }
    a->T = a->P + S;
    int rc = oac_attn_alias_of(k, 1, MA_PAST, &a->in_place);
    if (rc)
        return rc;
    if (a->in_place && !a->share)
        return oac_kernel_error(k, k->node->output[1], "shares the past's storage, which "
                                "needs past_present_share_buffer = 1 and input 6 "
                                "(past_sequence_length)");
    return OAC_OK;
}

static int msa_masks(oac_kernel_call *k, msa *a)
{
    const oac_tensor *m = a->mask, *ab = a->ab;
    int64_t B = a->B, T = a->T;
    a->mk = MK_NONE;
    if (m) {
        if (m->rank == 1 && m->dims[0] == B)
            a->mk = MK_LENS;
        else if (m->rank == 1 && m->dims[0] == 2 * B)
            a->mk = MK_END_START;
        else if (m->rank == 2 && m->dims[0] == B && m->dims[1] >= T)
            a->mk = MK_RAW2;
        else if (m->rank == 3 && m->dims[0] == B && m->dims[1] == a->S && m->dims[2] >= T)
            a->mk = MK_RAW3;
        else if (m->rank == 4)
            return oac_attn_refuse(k, "a 4-D mask_index");
        else
            return oac_attn_bad_shape(k, MA_MASK, "(batch), (2 * batch), (batch, "
                                      "total_sequence) or (batch, sequence, "
                                      "total_sequence)");
    }
    if (ab && (ab->rank != 4 || (ab->dims[0] != 1 && ab->dims[0] != B) ||
               (ab->dims[1] != 1 && ab->dims[1] != a->N) || ab->dims[2] != a->S ||
               ab->dims[3] < T))
        return oac_attn_bad_shape(k, MA_AB, "(batch or 1, num_heads or 1, sequence, "
                                  "total_sequence)");
    int rc = oac_attn_work_ok(k, B, a->N, a->S, T, a->H, a->Hv);
    /* The projections: B * S * D_in * (Dq + Dk + Dv), each bounded above. */
    return rc ? rc : oac_attn_work_ok(k, B, a->S, a->Din, 1, 2 * a->Dq, a->Dv);
}

/* out[0 .. n) = x[b, s, :] . W[:, col .. col + n) + bias[col ..]. */
static void project(const msa *a, int64_t b, int64_t s, int64_t col, int64_t n, double *out)
{
    const oac_tensor *x = a->x, *w = a->w;
    int64_t ws = w->dims[1];
    uint64_t xo = (uint64_t)((b * a->S + s) * a->Din);
    for (int64_t d = 0; d < n; d++)
        out[d] = a->bias ? oac_ek_getd(a->bias->elem_type, a->bias->data, (uint64_t)(col + d))
                         : 0.0;
    for (int64_t i = 0; i < a->Din; i++) {
        double xv = oac_ek_getd(x->elem_type, x->data, xo + (uint64_t)i);
        uint64_t wo = (uint64_t)(i * ws + col);
        for (int64_t d = 0; d < n; d++)
            out[d] += xv * oac_ek_getd(w->elem_type, w->data, wo + (uint64_t)d);
    }
}

/* present [2, B, N, M, H]: the past's rows [0, P) unless in place, the
 * new K and V rows at P, zeros after them unless in place. */
static void msa_present(const msa *a, oac_tensor *pr)
{
    double row[OAC_ATTN_MAX_HEAD];
    int64_t B = a->B, N = a->N, M = a->M, H = a->H, P = a->P, S = a->S;
    int64_t half = B * N * M * H, phalf = a->past ? B * N * a->past->dims[3] * H : 0;
    int64_t pm = a->past ? a->past->dims[3] : 0;
    for (int64_t kv = 0; kv < 2; kv++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < N; h++) {
                uint64_t base = (uint64_t)(kv * half + ((b * N + h) * M) * H);
                uint64_t pbase = (uint64_t)(kv * phalf + ((b * N + h) * pm) * H);
                for (int64_t j = 0; j < P && !a->in_place; j++)
                    for (int64_t d = 0; d < H; d++)
                        oac_ek_setd(pr->elem_type, pr->data, base + (uint64_t)(j * H + d),
                                    oac_ek_getd(a->past->elem_type, a->past->data,
                                                pbase + (uint64_t)(j * H + d)));
                for (int64_t s = 0; s < S; s++) {
                    project(a, b, s, (kv ? 2 * a->Dq : a->Dq) + h * H, H, row);
                    oac_attn_store(pr, base + (uint64_t)((P + s) * H), H, row);
                }
                for (int64_t j = P + S; j < M && !a->in_place; j++)
                    for (int64_t d = 0; d < H; d++)
                        oac_ek_setd(pr->elem_type, pr->data, base + (uint64_t)(j * H + d), 0);
            }
}

static void msa_row(void *ctx, oac_attn_io *io, oac_attn_row *r, int64_t h, int64_t s,
                    double *q)
{
    const msa *a = ctx;
    const oac_tensor *m = a->mask, *ab = a->ab;
    int64_t b = r->b, S = a->S;
    (void)io;
    project(a, b, s, h * a->H, a->H, q);
    r->past = a->P;
    r->mfv = a->mfv;
    const int32_t *mi = m ? m->data : NULL;
    switch (a->mk) {
    case MK_LENS: r->mfv_from = mi[b]; break;
    case MK_END_START:
        r->mfv_from = mi[b];
        r->j0 = mi[a->B + b] > 0 ? mi[a->B + b] : 0;
        break;
    case MK_RAW2:
        r->add[0] = (oac_attn_add){ OAC_ADD_RAW01, m, (uint64_t)(b * m->dims[1]), INT64_MAX };
        break;
    case MK_RAW3:
        r->add[0] = (oac_attn_add){ OAC_ADD_RAW01, m, (uint64_t)((b * S + s) * m->dims[2]),
                                    INT64_MAX };
        break;
    default: break;
    }
    if (ab)
        r->add[1] = (oac_attn_add){ OAC_ADD_FLOAT, ab,
            (uint64_t)((((b % ab->dims[0]) * ab->dims[1] + h % ab->dims[1]) * S + s) *
                       ab->dims[3]), INT64_MAX };
}

int oac_kernel_ms_attention(oac_kernel_call *k)
{
    msa a = { 0 };
    int rc;
    if ((rc = msa_inputs(k, &a)) || (rc = msa_past(k, &a)) || (rc = msa_masks(k, &a)))
        return rc;
    int32_t T = a.x->elem_type;
    int64_t B = a.B, S = a.S, N = a.N, H = a.H, Hv = a.Hv, M = a.M;
    oac_tensor *y, *pr;
    const int64_t yd[3] = { B, S, a.Dv }, pd[5] = { 2, B, N, M, H };
    if ((rc = oac_kout(k, 0, T, 3, yd, &y)) || (rc = oac_kout(k, 1, T, 5, pd, &pr)))
        return rc;
    msa_present(&a, pr);
    oac_attn_view kv = { .t = pr, .sb = N * M * H, .sh = M * H, .ss = H };
    oac_attn_view vv = kv;
    vv.off = B * N * M * H;
    oac_attn_io io = { .y = oac_attn_bsnh(y, Hv, 0),
                       .k = { .seg = { kv }, .split = INT64_MAX },
                       .v = { .seg = { vv }, .split = INT64_MAX } };
    oac_attn_geom geo = { .B = B, .N = N, .KVN = N, .S = S, .H = H, .Hv = Hv, .T = a.T,
                          .scale = oac_attn_scale(k, H),
                          .causal = oac_attr_int(k->node, "unidirectional", 0) != 0,
                          .window = -1 };
    oac_attn_run(&geo, &io, msa_row, &a);
    return OAC_OK;
}

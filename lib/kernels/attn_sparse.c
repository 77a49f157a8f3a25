/* kernels/attn_sparse.c: com.microsoft SparseAttention (contract
 * sections 6 and 10), an adapter onto the attention core
 * (kernels/attn_core.c).
 *
 * Owns the operator's semantics, from ONNX Runtime's ContribOperators.md
 * and its CPU kernel (compared with ONNX Runtime 1.30 in FLOAT and
 * FLOAT16 with the present bound to the past, tests/ort_diff.sh; its CPU
 * kernel wants head sizes that are multiples of 8, this one does not):
 *  - query (B, S, num_heads * H) (or packed [Q|K|V] without key and
 *    value), key and value (B, S, kv_num_heads * H); past_key and
 *    past_value (B, kv_num_heads, capacity, H) are the present's buffer
 *    (present_key is past_key, updated in place when the runtime hands it
 *    as a view; else a copy with the new rows);
 *  - key_total_sequence_lengths[b] (input 8) is sequence b's length
 *    after the step: its S new rows go at total - S .. total - 1 (past
 *    rows [0, total - S) are read from the buffer); total_sequence_length
 *    (input 7) is at least every one of them and at most the capacity;
 *  - query s of sequence b is at position p = total - S + s and sees key
 *    j when j <= p and block (p / sparse_block_size, j /
 *    sparse_block_size) is in head h's layout (h % num_layout): the CSR
 *    block_row_indices (num_layout, rows + 1) / block_col_indices
 *    (num_layout, nnz); do_rotary rotates the new q and k rows at their
 *    positions; grouped heads, scale.
 * Query, key, value, the rotary caches, the head counts and
 * sparse_block_size are read and checked by the core's packed reader
 * (oac_attn_packed, rank 3).
 * Invariants: every index of the layout, every length and the alias are
 * checked before the first byte is written (kernel-error naming node and
 * value); no workspace.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/attn.h"

enum { SA_Q, SA_K, SA_V, SA_PK, SA_PV, SA_ROWS, SA_COLS, SA_TOTAL, SA_KTOT, SA_COS, SA_SIN };

static const oac_attn_packed_spec sa_spec = {
    .q = SA_Q, .k = SA_K, .v = SA_V, .cos = SA_COS, .sin = SA_SIN, .rank = 3,
    .also = "sparse_block_size",
    .q_rank = "(batch, sequence, hidden)",
    .q_plain = "(batch, sequence, num_heads * head_size) or packed",
    .q_packed = "(batch, sequence, num_heads * head_size) or packed",
    .kv = "(batch, sequence, kv_num_heads * head_size)"
};

typedef struct sparse {
    oac_attn_packed p;          /* query, key, value, caches, heads (.also:
                                   sparse_block_size) */
    const oac_tensor *pk, *pv, *rows, *cols, *total, *ktot;
    int64_t B, S, cap, bs, nl, nr, nnz, maxk;
    bool ink, inv;
    const int32_t *rv, *cv, *kt;
} sparse;

static int sa_inputs(oac_kernel_call *k, sparse *a)
{
    int rc;
    if ((rc = oac_attn_packed_in(k, &sa_spec, &a->p)))
        return rc;
    a->bs = a->p.also;
    uint32_t T = OAC_EKM(a->p.q->elem_type), I = OAC_EKM(OAC_T_INT32);
    if (!(a->pk = oac_kin_typed(k, SA_PK, T)) || !(a->pv = oac_kin_typed(k, SA_PV, T)) ||
        !(a->rows = oac_kin_typed(k, SA_ROWS, I)) || !(a->cols = oac_kin_typed(k, SA_COLS, I)) ||
        !(a->total = oac_kin_typed(k, SA_TOTAL, I)) || !(a->ktot = oac_kin_typed(k, SA_KTOT, I)))
        return OAC_ERUNTIME;
    if ((rc = oac_attn_packed_shapes(k, &sa_spec, &a->p)))
        return rc;
    a->B = a->p.q->dims[0], a->S = a->p.q->dims[1];
    return OAC_OK;
}

static int sa_shapes(oac_kernel_call *k, sparse *a)
{
    int64_t B = a->B, S = a->S, H = a->p.H, KVN = a->p.KVN;
    const oac_tensor *pk = a->pk;
    if (pk->rank != 4 || pk->dims[0] != B || pk->dims[1] != KVN || pk->dims[3] != H)
        return oac_attn_bad_shape(k, SA_PK, "(batch, kv_num_heads, capacity, head_size)");
    if (!oac_tensor_dims_are(a->pv, 4, pk->dims))
        return oac_attn_bad_shape(k, SA_PV, "past_key's");
    a->cap = pk->dims[2];
    uint64_t n;
    if (!oac_tensor_numel_rt(a->total, &n) || n != 1)
        return oac_attn_bad_shape(k, SA_TOTAL, "a scalar");
    if (a->ktot->rank != 1 || a->ktot->dims[0] != B)
        return oac_attn_bad_shape(k, SA_KTOT, "(batch)");
    int64_t tot = ((const int32_t *)a->total->data)[0];
    if (tot < 1 || tot > a->cap)
        return oac_kernel_error(k, oac_kin_name(k, SA_TOTAL), "total_sequence_length %"
                                PRId64 " is outside 1..%" PRId64 " (the buffer)", tot, a->cap);
    a->kt = a->ktot->data;
    a->maxk = 0;
    for (int64_t b = 0; b < B; b++) {
        int64_t t = a->kt[b];
        if (t < S || t > tot)
            return oac_kernel_error(k, oac_kin_name(k, SA_KTOT), "key_total_sequence_lengths[%"
                                    PRId64 "] = %" PRId64 " is outside %" PRId64 "..%" PRId64
                                    " (the new tokens .. total_sequence_length)", b, t, S, tot);
        a->maxk = t > a->maxk ? t : a->maxk;
    }
    return oac_attn_packed_rope_ok(k, &sa_spec, &a->p, a->maxk);
}

/* The block layout: CSR rows covering every query block, nondecreasing,
 * column indices inside the key blocks. */
static int sa_layout(oac_kernel_call *k, sparse *a)
{
    const oac_tensor *r = a->rows, *c = a->cols;
    if (r->rank != 2 || r->dims[1] < 2)
        return oac_attn_bad_shape(k, SA_ROWS, "(num_layout, max_blocks + 1)");
    a->nl = r->dims[0], a->nr = r->dims[1] - 1;
    if (a->nl < 1 || a->p.N % a->nl)
        return oac_kernel_error(k, oac_kin_name(k, SA_ROWS), "%" PRId64 " layouts do not "
                                "divide num_heads %" PRId64, a->nl, a->p.N);
    if (c->rank != 2 || c->dims[0] != a->nl)
        return oac_attn_bad_shape(k, SA_COLS, "(num_layout, max_nnz_blocks)");
    a->nnz = c->dims[1];
    a->rv = r->data, a->cv = c->data;
    int64_t need = (a->maxk + a->bs - 1) / a->bs;
    if (a->nr < need)
        return oac_kernel_error(k, oac_kin_name(k, SA_ROWS), "%" PRId64 " block rows do not "
                                "cover %" PRId64 " positions in blocks of %" PRId64, a->nr,
                                a->maxk, a->bs);
    for (int64_t l = 0; l < a->nl; l++)
        for (int64_t i = 0; i <= a->nr; i++) {
            int64_t v = a->rv[l * (a->nr + 1) + i];
            int64_t prev = i ? a->rv[l * (a->nr + 1) + i - 1] : 0;
            if (v < prev || v > a->nnz || (i == 0 && v != 0))
                return oac_kernel_error(k, oac_kin_name(k, SA_ROWS), "layout %" PRId64
                                        " row %" PRId64 ": %" PRId64 " is not a CSR offset "
                                        "into %" PRId64 " columns", l, i, v, a->nnz);
        }
    for (int64_t e = 0; e < a->nl * a->nnz; e++)
        if (a->cv[e] < 0 || a->cv[e] >= a->nr)
            return oac_kernel_error(k, oac_kin_name(k, SA_COLS), "column %" PRId32 " at %"
                                    PRId64 " is outside the %" PRId64 " blocks", a->cv[e], e,
                                    a->nr);
    return oac_attn_work_ok(k, a->B, a->p.N, a->S, a->maxk, a->p.H, a->p.H);
}

static bool sa_keep(const void *ctx, const oac_attn_row *r, int64_t j)
{
    const sparse *a = ctx;
    int64_t l = r->h % a->nl, br = (r->past + r->s) / a->bs, bc = j / a->bs;
    const int32_t *row = a->rv + l * (a->nr + 1);
    for (int32_t e = row[br]; e < row[br + 1]; e++)
        if (a->cv[l * a->nnz + e] == bc)
            return true;
    return false;
}

static void sa_row(void *ctx, oac_attn_io *io, oac_attn_row *r, int64_t h, int64_t s,
                   double *q)
{
    const sparse *a = ctx;
    (void)io, (void)h;
    r->past = a->kt[r->b] - a->S;
    r->j1 = r->n_keys = a->kt[r->b];
    r->keep = sa_keep;
    r->keep_ctx = a;
    if (a->p.rotary)
        oac_attn_packed_rope(&a->p, q, r->past + s);
}

/* present: the past's bytes unless in place, the new rows at total - S. */
static void sa_present(const sparse *a, oac_tensor *pr, const oac_tensor *past, bool in_place,
                       const oac_attn_view *src, bool rotate)
{
    double row[OAC_ATTN_MAX_HEAD];
    if (!in_place && pr->data != past->data)
        memcpy(pr->data, past->data, past->bytes);
    oac_attn_view pv = oac_attn_bnsh(pr);
    for (int64_t b = 0; b < a->B; b++)
        for (int64_t h = 0; h < a->p.KVN; h++)
            for (int64_t s = 0; s < a->S; s++) {
                int64_t pos = a->kt[b] - a->S + s;
                oac_attn_load(src, b, h, s, a->p.H, row);
                if (rotate)
                    oac_attn_packed_rope(&a->p, row, pos);
                oac_attn_store(pr, oac_attn_at(&pv, b, h, pos), a->p.H, row);
            }
}

int oac_kernel_sparse_attention(oac_kernel_call *k)
{
    sparse a = { 0 };
    int rc;
    if ((rc = sa_inputs(k, &a)) || (rc = sa_shapes(k, &a)) || (rc = sa_layout(k, &a)) ||
        (rc = oac_attn_alias_of(k, 1, SA_PK, &a.ink)) ||
        (rc = oac_attn_alias_of(k, 2, SA_PV, &a.inv)))
        return rc;
    const oac_attn_packed *p = &a.p;
    int32_t T = p->q->elem_type;
    int64_t B = a.B, S = a.S, N = p->N, KVN = p->KVN, H = p->H;
    oac_tensor *y, *ok, *ov;
    const int64_t yd[3] = { B, S, N * H };
    if ((rc = oac_kout(k, 0, T, 3, yd, &y)) || (rc = oac_kout(k, 1, T, 4, a.pk->dims, &ok)) ||
        (rc = oac_kout(k, 2, T, 4, a.pv->dims, &ov)))
        return rc;
    oac_attn_view kn = p->packed ? oac_attn_bsnh(p->q, H, N * H) : oac_attn_bsnh(p->key, H, 0);
    oac_attn_view vn = p->packed ? oac_attn_bsnh(p->q, H, (N + KVN) * H)
                                 : oac_attn_bsnh(p->val, H, 0);
    sa_present(&a, ok, a.pk, a.ink, &kn, p->rotary);
    sa_present(&a, ov, a.pv, a.inv, &vn, false);
    oac_attn_io io = { .q = oac_attn_bsnh(p->q, H, 0), .y = oac_attn_bsnh(y, H, 0),
                       .k = { .seg = { oac_attn_bnsh(ok) }, .split = INT64_MAX },
                       .v = { .seg = { oac_attn_bnsh(ov) }, .split = INT64_MAX } };
    oac_attn_geom g = { .B = B, .N = N, .KVN = KVN, .S = S, .H = H, .Hv = H, .T = a.maxk,
                        .scale = oac_attn_scale(k, H), .causal = true, .window = -1 };
    oac_attn_run(&g, &io, sa_row, &a);
    return OAC_OK;
}

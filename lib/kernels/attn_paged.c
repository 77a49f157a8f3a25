/* kernels/attn_paged.c: com.microsoft PagedAttention over fixed block
 * pools (contract sections 6 and 10), an adapter onto the attention core
 * (kernels/attn_core.c).
 *
 * ONNX Runtime 1.30 registers PagedAttention for CUDA only: this kernel
 * implements the documented semantics (ContribOperators.md), and its
 * tests compare it with a reference written from that text:
 *  - query (tokens, num_heads * H) (or packed [Q|K|V] rows without key
 *    and value), key and value (tokens, kv_num_heads * H): the tokens of
 *    B sequences one after another, sequence b's at
 *    [cumulative_sequence_length[b], cumulative_sequence_length[b + 1]);
 *  - key_cache, value_cache (num_blocks, block_size, kv_num_heads * H):
 *    the pools; sequence b's position p lives in block
 *    block_table[b, p / block_size] at slot p % block_size;
 *  - token i of sequence b is at position past_seqlens[b] + i: its K and
 *    V rows (K rotated with do_rotary) are written there, then its query
 *    sees that sequence's keys [0, position] (the last local_window_size
 *    of them when it is >= 0), grouped heads, softcap, scale;
 *  - the pools are updated in place (key_cache_out is key_cache); the
 *    pool never grows: a position whose block the table does not map
 *    (past its width, or a negative entry) or an entry outside the pool
 *    is capacity-overflow naming the pool, checked for every sequence
 *    before anything is written (and, where the values are known before
 *    the step, by run/precheck.c before any node runs).
 * Ports of the block table, past lengths and cumulative lengths are the
 * row's (.blocks, lib/ops.def); the pools are its pairs' pasts.  Query,
 * key, value, the rotary caches and the head counts are read and checked
 * by the core's packed reader (oac_attn_packed, rank 2).
 * Invariants: every shape, length and block is checked before the first
 * byte is written; without the alias the outputs are new pools holding
 * the inputs' bytes and the new rows; no workspace.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/attn.h"

enum { PA_Q, PA_K, PA_V, PA_COS = 8, PA_SIN = 9 };

static const oac_attn_packed_spec pa_spec = {
    .q = PA_Q, .k = PA_K, .v = PA_V, .cos = PA_COS, .sin = PA_SIN, .rank = 2,
    .q_rank = "(tokens, num_heads * head_size)",
    .q_plain = "(tokens, num_heads * head_size)",
    .q_packed = "(tokens, (num_heads + 2 * kv_num_heads) * head_size)",
    .kv = "(tokens, kv_num_heads * head_size)"
};

typedef struct paged {
    oac_attn_packed p;          /* query, key, value, caches, heads */
    const oac_tensor *kc, *vc, *cu, *past, *table;
    size_t kc_port, vc_port, cu_port, past_port, table_port;
    int64_t Tn, B, NB, BS, W, lws;
    const int32_t *cuv, *pastv, *tab;
} paged;

static int pa_inputs(oac_kernel_call *k, paged *a)
{
    const oac_op *op = oac_op_find(k->node->domain, k->node->op_type);
    if (!op || op->n_pairs != 2 || op->blocks.table < 0)
        return oac_attn_refuse(k, "a paged attention operator without a block-table row");
    a->kc_port = (size_t)op->pairs[0].in, a->vc_port = (size_t)op->pairs[1].in;
    a->table_port = (size_t)op->blocks.table, a->past_port = (size_t)op->blocks.past;
    a->cu_port = (size_t)op->blocks.cu;
    int rc;
    if ((rc = oac_attn_packed_in(k, &pa_spec, &a->p)))
        return rc;
    a->lws = oac_attr_int(k->node, "local_window_size", -1);
    uint32_t T = OAC_EKM(a->p.q->elem_type), I = OAC_EKM(OAC_T_INT32);
    if (!(a->kc = oac_kin_typed(k, a->kc_port, T)) || !(a->vc = oac_kin_typed(k, a->vc_port, T)) ||
        !(a->cu = oac_kin_typed(k, a->cu_port, I)) ||
        !(a->past = oac_kin_typed(k, a->past_port, I)) ||
        !(a->table = oac_kin_typed(k, a->table_port, I)))
        return OAC_ERUNTIME;
    return OAC_OK;
}

static int pa_shapes(oac_kernel_call *k, paged *a)
{
    int rc;
    if ((rc = oac_attn_packed_shapes(k, &pa_spec, &a->p)))
        return rc;
    int64_t KVN = a->p.KVN, H = a->p.H;
    a->Tn = a->p.q->dims[0];
    const oac_tensor *kc = a->kc;
    if (kc->rank != 3 || kc->dims[2] != KVN * H || kc->dims[1] < 1)
        return oac_attn_bad_shape(k, a->kc_port, "(num_blocks, block_size, kv_num_heads * "
                                  "head_size)");
    if (!oac_tensor_dims_are(a->vc, 3, kc->dims))
        return oac_attn_bad_shape(k, a->vc_port, "key_cache's");
    a->NB = kc->dims[0], a->BS = kc->dims[1];
    if (a->past->rank != 1)
        return oac_attn_bad_shape(k, a->past_port, "(batch)");
    a->B = a->past->dims[0];
    const int64_t cd[1] = { a->B + 1 };
    if (!oac_tensor_dims_are(a->cu, 1, cd))
        return oac_attn_bad_shape(k, a->cu_port, "(batch + 1)");
    if (a->table->rank != 2 || a->table->dims[0] != a->B)
        return oac_attn_bad_shape(k, a->table_port, "(batch, max_blocks_per_sequence)");
    a->W = a->table->dims[1];
    a->cuv = a->cu->data, a->pastv = a->past->data, a->tab = a->table->data;
    return OAC_OK;
}

/* Every sequence's tokens, positions and blocks (nothing grows). */
static int pa_blocks(oac_kernel_call *k, paged *a)
{
    int64_t maxk = 0;
    if (a->cuv[0] != 0 || a->cuv[a->B] != a->Tn)
        return oac_kernel_error(k, oac_kin_name(k, a->cu_port), "must run from 0 to the "
                                "%" PRId64 " tokens, not %" PRId32 " to %" PRId32, a->Tn,
                                a->cuv[0], a->cuv[a->B]);
    for (int64_t b = 0; b < a->B; b++) {
        int64_t n = (int64_t)a->cuv[b + 1] - a->cuv[b], p = a->pastv[b];
        if (n < 0)
            return oac_kernel_error(k, oac_kin_name(k, a->cu_port), "decreases at "
                                    "sequence %" PRId64, b);
        if (p < 0)
            return oac_kernel_error(k, oac_kin_name(k, a->past_port), "past_seqlens[%"
                                    PRId64 "] = %" PRId64 " is negative", b, p);
        int64_t total = p + n, need = (total + a->BS - 1) / a->BS;
        for (int64_t i = 0; i < need; i++) {
            int64_t blk = i < a->W ? a->tab[b * a->W + i] : -1;
            if (i >= a->W || blk < 0)
                return oac_kernel_fail(k, OAC_CAPACITY_OVERFLOW, "node '%s': position %" PRId64
                                       " of sequence %" PRId64 " has no block in '%s' (%"
                                       PRId64 " mapped of %" PRId64 "): the pool of %" PRId64
                                       " blocks does not grow", k->node_name, i * a->BS, b,
                                       oac_kin_name(k, a->table_port), i, a->W, a->NB);
            if (blk >= a->NB)
                return oac_kernel_fail(k, OAC_CAPACITY_OVERFLOW, "node '%s': block %" PRId64
                                       " of sequence %" PRId64 " in '%s' is outside the "
                                       "pool '%s' of %" PRId64 " blocks", k->node_name, blk,
                                       b, oac_kin_name(k, a->table_port),
                                       oac_kin_name(k, a->kc_port), a->NB);
        }
        if (total > maxk)
            maxk = total;
    }
    int rc;
    if ((rc = oac_attn_packed_rope_ok(k, &pa_spec, &a->p, maxk)))
        return rc;
    return oac_attn_work_ok(k, a->B, a->p.N, a->Tn, maxk, a->p.H, a->p.H);
}

/* Write token rows into the pool: sequence b, token i at past + i. */
static void pa_write(const paged *a, oac_tensor *pool, int64_t col)
{
    double row[OAC_ATTN_MAX_HEAD];
    const oac_attn_packed *p = &a->p;
    int64_t H = p->H, W = p->KVN * H;
    const oac_tensor *src = p->packed ? p->q : col == 0 ? p->key : p->val;
    int64_t sd = src->dims[1], off = p->packed ? p->N * H + col : 0;
    for (int64_t b = 0; b < a->B; b++)
        for (int64_t t = a->cuv[b]; t < a->cuv[b + 1]; t++) {
            int64_t pos = a->pastv[b] + (t - a->cuv[b]);
            int64_t blk = a->tab[b * a->W + pos / a->BS];
            for (int64_t h = 0; h < p->KVN; h++) {
                oac_attn_view v = { .t = src, .off = off + t * sd, .sh = H };
                oac_attn_load(&v, 0, h, 0, H, row);
                if (p->rotary && col == 0)
                    oac_attn_packed_rope(p, row, pos);
                oac_attn_store(pool, (uint64_t)((blk * a->BS + pos % a->BS) * W + h * H), H, row);
            }
        }
}

typedef struct pa_seq {
    const paged *a;
    int64_t b;
} pa_seq;

static void pa_row(void *ctx, oac_attn_io *io, oac_attn_row *r, int64_t h, int64_t s,
                   double *q)
{
    const pa_seq *c = ctx;
    const paged *a = c->a;
    (void)io, (void)h;
    r->past = a->pastv[c->b];
    if (a->p.rotary)
        oac_attn_packed_rope(&a->p, q, r->past + s);
}

int oac_kernel_paged_attention(oac_kernel_call *k)
{
    paged a = { 0 };
    int rc;
    if ((rc = pa_inputs(k, &a)) || (rc = pa_shapes(k, &a)) || (rc = pa_blocks(k, &a)))
        return rc;
    bool ink, inv;
    if ((rc = oac_attn_alias_of(k, 1, a.kc_port, &ink)) ||
        (rc = oac_attn_alias_of(k, 2, a.vc_port, &inv)))
        return rc;
    int32_t T = a.p.q->elem_type;
    int64_t H = a.p.H, N = a.p.N, KVN = a.p.KVN, D = a.p.D;
    oac_tensor *y, *ok, *ov;
    const int64_t yd[2] = { a.Tn, N * H };
    if ((rc = oac_kout(k, 0, T, 2, yd, &y)) || (rc = oac_kout(k, 1, T, 3, a.kc->dims, &ok)) ||
        (rc = oac_kout(k, 2, T, 3, a.vc->dims, &ov)))
        return rc;
    if (!ink && ok->data != a.kc->data)
        memcpy(ok->data, a.kc->data, a.kc->bytes);
    if (!inv && ov->data != a.vc->data)
        memcpy(ov->data, a.vc->data, a.vc->bytes);
    pa_write(&a, ok, 0);
    pa_write(&a, ov, a.p.packed ? KVN * H : 1);
    double scale = oac_attn_scale(k, H);
    for (int64_t b = 0; b < a.B; b++) {
        int64_t n = (int64_t)a.cuv[b + 1] - a.cuv[b];
        pa_seq c = { &a, b };
        oac_attn_io io = {
            .q = { .t = a.p.q, .off = a.cuv[b] * D, .sh = H, .ss = D },
            .y = { .t = y, .off = a.cuv[b] * N * H, .sh = H, .ss = N * H },
            .k = { .pool = ok, .table = a.tab + b * a.W, .block_size = a.BS,
                   .width = KVN * H },
            .v = { .pool = ov, .table = a.tab + b * a.W, .block_size = a.BS,
                   .width = KVN * H } };
        oac_attn_geom g = { .B = 1, .N = N, .KVN = KVN, .S = n, .H = H, .Hv = H,
                            .T = a.pastv[b] + n, .scale = scale,
                            .softcap = oac_attr_float(k->node, "softcap", 0.0f),
                            .causal = true, .window = a.lws };
        oac_attn_run(&g, &io, pa_row, &c);
    }
    return OAC_OK;
}

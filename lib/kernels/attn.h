/* kernels/attn.h: the attention geometry and core every attention kernel
 * shares (kernels/attn_core.c), and the rotation of one row (kernels/rope.c).
 *
 * Owns: views of rows ([b][h][s][0..n) over BSNH, BNSH or packed
 * tensors), a key/value source of one or two segments (past, new),
 * one query row's scores and online softmax (oac_attn_attend), the
 * geometry every operator maps its inputs onto (oac_attn_geom) and the
 * one loop over query rows (oac_attn_run: scale, causal and local
 * windows, grouped heads, masks through a per-row hook), the shape and
 * size checks the kernels share, the reading of packed query/key/value
 * inputs with their rotary caches (oac_attn_packed), and the
 * present-cache fill.
 * Contract: sections 5, 6, 8 and 10 (the runtime's kernels).
 * Invariants: nothing here allocates; rows live in stack buffers of
 * OAC_ATTN_MAX_HEAD doubles (the caller bounded the head sizes with
 * oac_attn_head_ok); the rotation reads rot / 2 cosines and sines at
 * element `at` of the caches (the caller checked that they exist) and
 * writes only x[0 .. rot); the scores and the softmax are computed in
 * double (wider than FLOAT, which ONNX Runtime's CPU kernels use).
 */
#ifndef OAC_KERNEL_ATTN_H
#define OAC_KERNEL_ATTN_H

#include "kernels/elem_io.h"

/* Largest head size (and rotary dimension) the kernels accept: rows live
 * in stack buffers of this many doubles (no counted workspace).  Larger
 * heads are unsupported-operator naming the limit. */
#define OAC_ATTN_MAX_HEAD 1024

/* ------------------------------------------------------------------ */
/* Views, rows and the rotary helper                                    */
/* ------------------------------------------------------------------ */

/* Rows of a tensor seen as [b][h][s][0..n): element (b, h, s, d) is at
 * off + b*sb + h*sh + s*ss + d; bias, when set, adds
 * bias[boff + h*bh + d]. */
typedef struct oac_attn_view {
    const oac_tensor *t;
    int64_t off, sb, sh, ss;
    const oac_tensor *bias;
    int64_t boff, bh;
} oac_attn_view;

/* BSNH view of a [B, S, N*H] (or packed [B, S, D]) tensor, heads of
 * size hs starting at column col. */
static inline oac_attn_view oac_attn_bsnh(const oac_tensor *t, int64_t hs, int64_t col)
{
    int64_t S = t->dims[1], D = t->dims[2];
    return (oac_attn_view){ .t = t, .off = col, .sb = S * D, .sh = hs, .ss = D };
}

/* BNSH view of a [B, N, S, H] tensor. */
static inline oac_attn_view oac_attn_bnsh(const oac_tensor *t)
{
    int64_t N = t->dims[1], S = t->dims[2], H = t->dims[3];
    return (oac_attn_view){ .t = t, .sb = N * S * H, .sh = S * H, .ss = H };
}

static inline uint64_t oac_attn_at(const oac_attn_view *v, int64_t b, int64_t h, int64_t s)
{
    return (uint64_t)(v->off + b * v->sb + h * v->sh + s * v->ss);
}

static inline void oac_attn_load(const oac_attn_view *v, int64_t b, int64_t h, int64_t s, int64_t n,
                    double *row)
{
    uint64_t at = oac_attn_at(v, b, h, s);
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
 * seg[0], rows from split on from seg[1] (at row - split); or, with a
 * pool, row j of a paged cache [blocks, block_size, kv_heads * n]: block
 * table[j / block_size], slot j % block_size (the caller checked every
 * entry the rows read). */
typedef struct oac_attn_kv {
    oac_attn_view seg[2];
    int64_t split;
    const oac_tensor *pool;
    const int32_t *table;       /* this sequence's row of the block table */
    int64_t block_size, width;  /* width: kv_heads * head size */
} oac_attn_kv;

static inline void oac_attn_kv_load(const oac_attn_kv *s, int64_t b, int64_t h, int64_t j, int64_t n,
                    double *row)
{
    if (s->pool) {
        int64_t blk = s->table[j / s->block_size];
        uint64_t at = (uint64_t)((blk * s->block_size + j % s->block_size) * s->width + h * n);
        for (int64_t d = 0; d < n; d++)
            row[d] = oac_ek_getd(s->pool->elem_type, s->pool->data, at + (uint64_t)d);
        return;
    }
    if (j < s->split)
        oac_attn_load(&s->seg[0], b, h, j, n, row);
    else
        oac_attn_load(&s->seg[1], b, h, j - s->split, n, row);
}

static inline void oac_attn_store(oac_tensor *t, uint64_t at, int64_t n, const double *row)
{
    for (int64_t d = 0; d < n; d++)
        oac_ek_setd(t->elem_type, t->data, at + (uint64_t)d, row[d]);
}

void oac_attn_rope_row(double *x, int64_t rot, const oac_tensor *cos,
                       const oac_tensor *sin, uint64_t at, bool interleaved);

/* ------------------------------------------------------------------ */
/* One query row: the online softmax                                    */
/* ------------------------------------------------------------------ */

/* An additive term of the scores for one (b, h, s): element t[off + j]. */
typedef enum oac_attn_addk {
    OAC_ADD_NONE = 0,
    OAC_ADD_FLOAT,          /* added as is */
    OAC_ADD_BOOL,           /* false: the key is excluded */
    OAC_ADD_RAW01           /* integer 0/1: 0 adds mfv */
} oac_attn_addk;

typedef struct oac_attn_add {
    oac_attn_addk kind;
    const oac_tensor *t;
    uint64_t off;
    int64_t len;        /* keys j >= len are excluded (a short attn_mask) */
} oac_attn_add;

typedef struct oac_attn_row {
    const double *q;            /* hd values, scale applied */
    int64_t hd, hv;
    const oac_attn_kv *k, *v;
    int64_t b, kh;
    int64_t past;               /* causal: keys [0, past + s + 1) (oac_attn_run) */
    int64_t n_keys;             /* keys [0, n_keys) exist */
    int64_t j0, j1;             /* keys outside [j0, j1) are excluded */
    double softcap;
    oac_attn_add add[2];
    double mfv;                 /* OAC_ADD_RAW01's value, and added to keys */
    int64_t mfv_from;           /*   j >= mfv_from (key lengths) */
    bool sink;                  /* a sink logit in the denominator */
    double sink_logit;
    /* A further exclusion (SparseAttention's block layout): key j is
     * excluded when keep(keep_ctx, row, j) is false.  NULL: none. */
    bool (*keep)(const void *keep_ctx, const struct oac_attn_row *r, int64_t j);
    const void *keep_ctx;
    int64_t h, s;               /* the row's query head and query */
    /* ONNX qk_matmul_output: mode 0-3 into qk[qk_off + j], j < n_keys. */
    oac_tensor *qk;
    uint64_t qk_off;
    int qk_mode;
} oac_attn_row;

/* out[0..hv) = softmax-weighted values of the row's keys (zeros when no
 * key is left).  row and acc are the caller's buffers of
 * OAC_ATTN_MAX_HEAD doubles. */
void oac_attn_attend(const oac_attn_row *r, double *row, double *out);

/* ------------------------------------------------------------------ */
/* Shared checks                                                        */
/* ------------------------------------------------------------------ */

#define OAC_ATTN_T16 (OAC_EKM(OAC_T_FLOAT) | OAC_EKM(OAC_T_FLOAT16) | OAC_EKM(OAC_T_BFLOAT16))

const char *oac_attn_op(const oac_kernel_call *k);

int oac_attn_refuse(oac_kernel_call *k, const char *what);

/* Refuse head sizes the stack buffers cannot hold (invariant 1). */
int oac_attn_head_ok(oac_kernel_call *k, int64_t hs);

/* Invariant 3: batch * q_heads * queries * keys * (hd + hv). */
int oac_attn_work_ok(oac_kernel_call *k, int64_t B, int64_t N, int64_t S, int64_t T,
                   int64_t hd, int64_t hv);

/* A dims string for messages. */
const char *oac_attn_dims_str(const oac_tensor *t, char *buf, size_t len);

/* A shape error naming input i and what was expected. */
int oac_attn_bad_shape(oac_kernel_call *k, size_t i, const char *want);

/* A positive integer attribute (kernel-error when absent or < 1). */
int oac_attn_attr_pos(oac_kernel_call *k, const char *name, int64_t *v);

/* The input port an output may alias: the runtime's view (out_alias),
 * or -1.  A view of any other input than `past` is refused. */
int oac_attn_alias_of(oac_kernel_call *k, size_t out, size_t past, bool *in_place);

static inline bool oac_attn_has_out(const oac_kernel_call *k, size_t i)
{
    return i < k->n_out && k->out[i];
}

/* ------------------------------------------------------------------ */
/* Packed query/key/value inputs                                        */
/* ------------------------------------------------------------------ */

/* Where an operator has query, key and value (or query alone carrying
 * [Q|K|V] rows when key and value are absent), cos_cache and sin_cache,
 * and the shapes its messages name.  The rows are query's first
 * rank - 1 dimensions ((tokens) or (batch, sequence)); key and value
 * are (rows, kv_num_heads * head_size). */
typedef struct oac_attn_packed_spec {
    size_t q, k, v, cos, sin;   /* input ports */
    int rank;                   /* of query, key and value */
    const char *also;           /* a further positive attribute, read after
                                   kv_num_heads into .also; NULL: none */
    const char *q_rank;         /* the messages: query of another rank, */
    const char *q_plain;        /*   query's last dimension not
                                   num_heads * head_size, */
    const char *q_packed;       /*   nor, packed, (num_heads + 2 *
                                   kv_num_heads) * head_size, */
    const char *kv;             /*   key or value not (rows, kv_num_heads *
                                   head_size) */
} oac_attn_packed_spec;

typedef struct oac_attn_packed {
    const oac_tensor *q, *key, *val, *cos, *sin;    /* key, val, cos, sin
                                                       may be NULL */
    int64_t N, KVN, also;       /* num_heads, kv_num_heads, spec's also */
    int64_t D, H;               /* query's last dimension, head size */
    bool packed, rotary, interleaved;   /* no key; do_rotary,
                                           rotary_interleaved */
} oac_attn_packed;

/* The attributes (num_heads, kv_num_heads, spec's also, num_heads a
 * multiple of kv_num_heads, do_rotary, rotary_interleaved), then query
 * (FLOAT, FLOAT16 or BFLOAT16), key and value of its type, the caches
 * (OAC_EKM_FLOAT), in that order; an error at the first that is wrong. */
int oac_attn_packed_in(oac_kernel_call *k, const oac_attn_packed_spec *sp, oac_attn_packed *p);

/* Query's rank, key and value together, the head size (checked with
 * oac_attn_head_ok), key's and value's shapes; an error at the first
 * that is wrong. */
int oac_attn_packed_shapes(oac_kernel_call *k, const oac_attn_packed_spec *sp,
                           oac_attn_packed *p);

/* With do_rotary: both caches, (>= maxk positions, rotary_dim / 2) with
 * rotary_dim <= head_size, sin_cache's shape cos_cache's.  maxk 0: the
 * caller checks each position against the rows (GroupQueryAttention's
 * position_ids). */
int oac_attn_packed_rope_ok(oac_kernel_call *k, const oac_attn_packed_spec *sp,
                            const oac_attn_packed *p, int64_t maxk);

/* Rotate a row of head size p->H at position pos (do_rotary, checked). */
static inline void oac_attn_packed_rope(const oac_attn_packed *p, double *row, int64_t pos)
{
    oac_attn_rope_row(row, 2 * p->cos->dims[1], p->cos, p->sin,
                      (uint64_t)(pos * p->cos->dims[1]), p->interleaved);
}

/* ------------------------------------------------------------------ */
/* Present caches                                                       */
/* ------------------------------------------------------------------ */

/* The past length of each batch entry, where its new rows go: P for
 * all, or (GroupQueryAttention) seqlens_k[b] + 1 - S, 0 on a first
 * prompt. */
typedef struct oac_attn_past {
    int64_t P;
    const int32_t *seqlens;     /* NULL: P for every entry */
    int64_t S;
    bool first;
} oac_attn_past;

static inline int64_t oac_attn_past_of(const oac_attn_past *r, int64_t b)
{
    if (!r->seqlens)
        return r->P;
    return r->first ? 0 : (int64_t)r->seqlens[b] + 1 - r->S;
}

/* Rotary for the new rows: position_ids, else past + s. */
typedef struct oac_attn_rope {
    const oac_tensor *cos, *sin;
    bool interleaved;
    int64_t rot;
    const int64_t *pos_ids;     /* [B, S], or NULL */
    const oac_attn_past *past;
} oac_attn_rope;

static inline int64_t oac_attn_rope_pos(const oac_attn_rope *r, int64_t b, int64_t s, int64_t S)
{
    return r->pos_ids ? r->pos_ids[b * S + s] : oac_attn_past_of(r->past, b) + s;
}

/* Fill present (BNSH [B, N, cap, hs]) for every batch entry: past rows
 * [0, past) copied from past unless in place, the new rows (src, rotated
 * by rot when set) at past, zeros after them unless in place. */
void oac_attn_fill_present(oac_tensor *present, const oac_attn_view *past, bool in_place,
                         const oac_attn_view *src, int64_t S, const oac_attn_past *pr,
                         const oac_attn_rope *rot, double *row);

/* ------------------------------------------------------------------ */
/* The geometry and the one loop over query rows                        */
/* ------------------------------------------------------------------ */

/* What every attention operator maps its inputs onto. */
typedef struct oac_attn_geom {
    int64_t B, N, KVN;          /* batch, query heads, key/value heads
                                   (N a multiple of KVN: head h reads kv
                                   head h / (N / KVN)) */
    int64_t S;                  /* queries per batch entry */
    int64_t H, Hv;              /* head sizes of q and k, of v */
    int64_t T;                  /* keys that exist (rows of k and v) */
    double scale;               /* applied to q */
    double softcap;             /* > 0: c * tanh(score / c) */
    bool causal;                /* query s sees keys [0, past + s + 1) */
    int64_t window;             /* >= 0: only the last `window` of those */
} oac_attn_geom;

/* Queries, keys, values and the output of one call. */
typedef struct oac_attn_io {
    oac_attn_view q, y;         /* [b][h][s]: H and Hv values; q.t NULL:
                                   the row hook computes q */
    oac_attn_kv k, v;           /* [b][kv head][j] */
} oac_attn_io;

/* Called for every query row (b = r->b, head h, query s) after q is
 * loaded, before it is scaled: sets the row's keys (r->j0, r->j1,
 * r->past), masks (r->add, r->mfv, r->mfv_from), sink and qk output,
 * may rotate q and may move io's past/new split. */
typedef void (*oac_attn_row_fn)(void *ctx, oac_attn_io *io, oac_attn_row *r, int64_t h,
                                int64_t s, double *q);

/* Every query row of g through oac_attn_attend into io->y (the hook
 * first, then causal and local windows, then scale).  g's sizes were
 * checked (head sizes, work). */
void oac_attn_run(const oac_attn_geom *g, oac_attn_io *io, oac_attn_row_fn fn, void *ctx);

/* A shared buffer's length against its capacity through the one
 * capacity rule (rulebook.h): pos (the value of input `port`) + len new
 * rows within cap rows of `cache`, else kernel-error naming the input,
 * in the rule's wording. */
int oac_attn_fits(oac_kernel_call *k, size_t port, int64_t pos, int64_t len, int64_t cap,
                  const char *cache);

/* The scale attribute, or 1 / sqrt(H) when it is absent or 0. */
double oac_attn_scale(const oac_kernel_call *k, int64_t H);

#endif /* OAC_KERNEL_ATTN_H */

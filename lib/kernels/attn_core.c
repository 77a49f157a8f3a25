/* kernels/attn_core.c: the attention core every attention kernel maps
 * onto (kernels/attn.h): one query row's scores and online softmax, the
 * loop over query rows with its causal and local windows and grouped
 * heads, the checks the kernels share, the reader of packed
 * query/key/value inputs (GroupQueryAttention's, PagedAttention's and
 * SparseAttention's) and the present-cache fill.
 *
 * Owns the numeric semantics common to the attention operators of
 * contract sections 6 and 10 (each operator's adapter says what it adds):
 *  - scores are q.k * scale, then softcap (c * tanh(x / c)) when it is
 *    > 0, then the additive biases and masks, then softmax over the keys
 *    a query may see;
 *  - a query head h reads kv head h / (q_heads / kv_heads);
 *  - a query row with no key left (every key excluded) outputs zeros;
 *  - packed inputs (oac_attn_packed): key and value come together; without
 *    them query carries [Q|K|V], head size = its last dimension /
 *    (num_heads + 2 * kv_num_heads), else / num_heads; do_rotary wants
 *    both caches, (positions, rotary_dim / 2) with rotary_dim <= head size.
 * Invariants: no workspace (a streaming softmax, invariant 1 of
 * kernels/attn.c); the core validates none of a model's values: callers
 * check every shape, length and index first (with the shared checks and
 * the packed reader here, which only read and report).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/attn.h"
#include "rulebook.h"

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

/* Score x into the running softmax (max *m, sum *l, out scaled by
 * exp(old max - new max) when x raises the max): x's weight, already
 * added to *l.  The keys and the sink take the same step. */
static inline double online_add(double x, double *m, double *l, double *out, int64_t n)
{
    if (x > *m) {
        double c = *m == -INFINITY ? 0 : exp(*m - x);
        *l *= c;
        for (int64_t d = 0; d < n; d++)
            out[d] *= c;
        *m = x;
        *l += 1;
        return 1;
    }
    double w = exp(x - *m);
    *l += w;
    return w;
}

/* Score of key j before (raw) and after softcap; false when excluded
 * (*x then -inf). */
static bool score(const oac_attn_row *r, int64_t j, double *row, double *raw,
                  double *capped, double *x)
{
    oac_attn_kv_load(r->k, r->b, r->kh, j, r->hd, row);
    double dot = 0;
    for (int64_t d = 0; d < r->hd; d++)
        dot += r->q[d] * row[d];
    *raw = dot;
    if (r->softcap > 0)
        dot = r->softcap * tanh(dot / r->softcap);
    *capped = dot;
    bool in = j >= r->j0 && j < r->j1 && (!r->keep || r->keep(r->keep_ctx, r, j));
    for (int a = 0; in && a < 2; a++) {
        const oac_attn_add *ad = &r->add[a];
        if (ad->kind == OAC_ADD_NONE)
            continue;
        if (j >= ad->len) {
            in = false;
            break;
        }
        uint64_t at = ad->off + (uint64_t)j;
        switch (ad->kind) {
        case OAC_ADD_FLOAT:
            dot += oac_ek_getd(ad->t->elem_type, ad->t->data, at);
            break;
        case OAC_ADD_BOOL:
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
void oac_attn_attend(const oac_attn_row *r, double *row, double *out)
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
        double w = online_add(x, &m, &l, out, r->hv);
        oac_attn_kv_load(r->v, r->b, r->kh, j, r->hv, row);
        for (int64_t d = 0; d < r->hv; d++)
            out[d] += w * row[d];
    }
    if (r->sink)
        (void)online_add(r->sink_logit, &m, &l, out, r->hv);
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

const char *oac_attn_op(const oac_kernel_call *k)
{
    return k->node->op_type ? k->node->op_type : "?";
}

int oac_attn_refuse(oac_kernel_call *k, const char *what)
{
    return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                           "node '%s' (%s): %s is not implemented by the reference "
                           "runtime", k->node_name, oac_attn_op(k), what);
}

/* Refuse head sizes the stack buffers cannot hold (invariant 1). */
int oac_attn_head_ok(oac_kernel_call *k, int64_t hs)
{
    if (hs > OAC_ATTN_MAX_HEAD)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s' (%s): head size %" PRId64 " exceeds the "
                               "reference runtime's limit of %d", k->node_name,
                               oac_attn_op(k), hs, OAC_ATTN_MAX_HEAD);
    return OAC_OK;
}

/* Invariant 3: batch * q_heads * queries * keys * (hd + hv). */
int oac_attn_work_ok(oac_kernel_call *k, int64_t B, int64_t N, int64_t S, int64_t T,
                   int64_t hd, int64_t hv)
{
    uint64_t w = 1;
    const int64_t f[] = { B, N, S, T, hd + hv };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (oac_mul_overflow_u64(w, (uint64_t)f[i], &w))
            w = UINT64_MAX;
    if (w > OAC_RT_MAX_KERNEL_OPS)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s' (%s): %" PRId64 " x %" PRId64 " x %" PRId64
                               " x %" PRId64 " x %" PRId64 " multiply-adds exceed the "
                               "reference runtime's limit of %" PRIu64 " per node",
                               k->node_name, oac_attn_op(k), B, N, S, T, hd + hv,
                               OAC_RT_MAX_KERNEL_OPS);
    return OAC_OK;
}

/* A dims string for messages. */
const char *oac_attn_dims_str(const oac_tensor *t, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < t->rank && n + 24 < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%" PRId64, i ? "," : "", t->dims[i]);
    return buf;
}

/* A shape error naming input i and what was expected. */
int oac_attn_bad_shape(oac_kernel_call *k, size_t i, const char *want)
{
    char b[160];
    return oac_kernel_error(k, oac_kin_name(k, i), "shape [%s] is not %s",
                            oac_attn_dims_str(oac_kernel_tensor_in(k, i), b, sizeof b), want);
}

/* A positive integer attribute (kernel-error when absent or < 1). */
int oac_attn_attr_pos(oac_kernel_call *k, const char *name, int64_t *v)
{
    *v = oac_attr_int(k->node, name, 0);
    if (*v < 1 || *v > INT32_MAX)
        return oac_kernel_error(k, name, "attribute must be a positive integer, "
                                "got %" PRId64, *v);
    return OAC_OK;
}

/* The input port an output may alias: the runtime's view (out_alias),
 * or -1.  A view of any other input than `past` is refused. */
int oac_attn_alias_of(oac_kernel_call *k, size_t out, size_t past, bool *in_place)
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

/* Attributes and inputs of packed attention (kernels/attn.h). */
int oac_attn_packed_in(oac_kernel_call *k, const oac_attn_packed_spec *sp, oac_attn_packed *p)
{
    int rc;
    if ((rc = oac_attn_attr_pos(k, "num_heads", &p->N)) ||
        (rc = oac_attn_attr_pos(k, "kv_num_heads", &p->KVN)) ||
        (sp->also && (rc = oac_attn_attr_pos(k, sp->also, &p->also))))
        return rc;
    if (p->N % p->KVN)
        return oac_kernel_error(k, "num_heads", "%" PRId64 " heads are not a multiple "
                                "of kv_num_heads %" PRId64, p->N, p->KVN);
    p->rotary = oac_attr_int(k->node, "do_rotary", 0) != 0;
    p->interleaved = oac_attr_int(k->node, "rotary_interleaved", 0) != 0;
    const oac_tensor *q = p->q = oac_kin_typed(k, sp->q, OAC_ATTN_T16);
    if (!q)
        return OAC_ERUNTIME;
    uint32_t T = OAC_EKM(q->elem_type);
    rc = OAC_OK;
    p->key = oac_kin_opt(k, sp->k, T, &rc);
    p->val = rc ? NULL : oac_kin_opt(k, sp->v, T, &rc);
    p->cos = rc ? NULL : oac_kin_opt(k, sp->cos, OAC_EKM_FLOAT, &rc);
    p->sin = rc ? NULL : oac_kin_opt(k, sp->sin, OAC_EKM_FLOAT, &rc);
    return rc;
}

/* Shapes of packed attention's query, key and value (kernels/attn.h). */
int oac_attn_packed_shapes(oac_kernel_call *k, const oac_attn_packed_spec *sp,
                           oac_attn_packed *p)
{
    const oac_tensor *q = p->q;
    int r = sp->rank;
    if (q->rank != r)
        return oac_attn_bad_shape(k, sp->q, sp->q_rank);
    p->D = q->dims[r - 1];
    p->packed = !p->key;
    if (!p->key != !p->val)
        return oac_kernel_pair_missing(k, p->key ? sp->k : sp->v,
                                       p->key ? sp->v : sp->k,
                                       "key and value must be given together");
    int64_t parts = p->packed ? p->N + 2 * p->KVN : p->N;
    if (p->D % parts || p->D / parts < 1)
        return oac_attn_bad_shape(k, sp->q, p->packed ? sp->q_packed : sp->q_plain);
    p->H = p->D / parts;
    int rc;
    if ((rc = oac_attn_head_ok(k, p->H)))
        return rc;
    if (p->packed)
        return OAC_OK;
    int64_t kd[OAC_RT_MAX_RANK];
    memcpy(kd, q->dims, (size_t)(r - 1) * sizeof kd[0]);
    kd[r - 1] = p->KVN * p->H;
    if (!oac_tensor_dims_are(p->key, r, kd))
        return oac_attn_bad_shape(k, sp->k, sp->kv);
    if (!oac_tensor_dims_are(p->val, r, kd))
        return oac_attn_bad_shape(k, sp->v, sp->kv);
    return OAC_OK;
}

/* The rotary caches of packed attention (kernels/attn.h). */
int oac_attn_packed_rope_ok(oac_kernel_call *k, const oac_attn_packed_spec *sp,
                            const oac_attn_packed *p, int64_t maxk)
{
    if (!p->rotary)
        return OAC_OK;
    const oac_tensor *cos = p->cos, *sin = p->sin;
    if (!cos || !sin)
        return oac_kernel_pair_missing(k, cos ? sp->cos : sp->sin,
                                       cos ? sp->sin : sp->cos,
                                       "do_rotary needs cos_cache and sin_cache");
    if (cos->rank != 2 || cos->dims[1] < 1 || 2 * cos->dims[1] > p->H || cos->dims[0] < maxk)
        return oac_attn_bad_shape(k, sp->cos, "(max_position >= the longest sequence, "
                                  "rotary_dim / 2) with rotary_dim <= head_size");
    if (!oac_tensor_dims_are(sin, 2, cos->dims))
        return oac_attn_bad_shape(k, sp->sin, "cos_cache's");
    return OAC_OK;
}

/* Fill present (BNSH [B, N, cap, hs]) for every batch entry: past rows
 * [0, past) copied from past unless in place, the new rows (src, rotated
 * by rot when set) at past, zeros after them unless in place. */
void oac_attn_fill_present(oac_tensor *present, const oac_attn_view *past, bool in_place,
                         const oac_attn_view *src, int64_t S, const oac_attn_past *pr,
                         const oac_attn_rope *rot, double *row)
{
    int64_t B = present->dims[0], N = present->dims[1], cap = present->dims[2],
            hs = present->dims[3];
    oac_attn_view pv = oac_attn_bnsh(present);
    int32_t t = present->elem_type;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < N; h++) {
            int64_t at = oac_attn_past_of(pr, b);
            if (!in_place)
                for (int64_t j = 0; j < at; j++) {
                    oac_attn_load(past, b, h, j, hs, row);
                    oac_attn_store(present, oac_attn_at(&pv, b, h, j), hs, row);
                }
            for (int64_t s = 0; s < S; s++) {
                oac_attn_load(src, b, h, s, hs, row);
                if (rot) {
                    int64_t p = oac_attn_rope_pos(rot, b, s, S);
                    oac_attn_rope_row(row, rot->rot, rot->cos, rot->sin,
                                      (uint64_t)(p * rot->cos->dims[1]), rot->interleaved);
                }
                oac_attn_store(present, oac_attn_at(&pv, b, h, at + s), hs, row);
            }
            if (!in_place)
                for (int64_t j = at + S; j < cap; j++)
                    for (int64_t d = 0; d < hs; d++)
                        oac_ek_setd(t, present->data, oac_attn_at(&pv, b, h, j) + (uint64_t)d, 0);
        }
}

void oac_attn_run(const oac_attn_geom *g, oac_attn_io *io, oac_attn_row_fn fn, void *ctx)
{
    double row[OAC_ATTN_MAX_HEAD], q[OAC_ATTN_MAX_HEAD], acc[OAC_ATTN_MAX_HEAD];
    int64_t group = g->N / g->KVN;
    for (int64_t b = 0; b < g->B; b++)
        for (int64_t s = 0; s < g->S; s++)
            for (int64_t h = 0; h < g->N; h++) {
                if (io->q.t)
                    oac_attn_load(&io->q, b, h, s, g->H, q);
                oac_attn_row r = { .q = q, .hd = g->H, .hv = g->Hv, .k = &io->k,
                                   .v = &io->v, .b = b, .kh = h / group, .n_keys = g->T,
                                   .j0 = 0, .j1 = g->T, .softcap = g->softcap,
                                   .mfv_from = INT64_MAX, .h = h, .s = s };
                if (fn)
                    fn(ctx, io, &r, h, s, q);
                if (g->causal && r.past + s + 1 < r.j1)
                    r.j1 = r.past + s + 1 > 0 ? r.past + s + 1 : 0;
                if (g->window >= 0 && r.j1 - g->window > r.j0)
                    r.j0 = r.j1 - g->window;
                for (int64_t d = 0; d < g->H; d++)
                    q[d] *= g->scale;
                oac_attn_attend(&r, row, acc);
                oac_attn_store((oac_tensor *)io->y.t, oac_attn_at(&io->y, b, h, s), g->Hv, acc);
            }
}

double oac_attn_scale(const oac_kernel_call *k, int64_t H)
{
    double scale = oac_attr_float(k->node, "scale", 0.0f);
    return scale == 0 ? 1 / sqrt((double)H) : scale;
}

int oac_attn_fits(oac_kernel_call *k, size_t port, int64_t pos, int64_t len, int64_t cap,
                  const char *cache)
{
    oac_cap_case c = { .verdict = oac_capacity_rule(pos, len, cap, OAC_CAP_NORMAL),
                       .what = "", .row = "", .pos_known = true, .pos = pos, .len = len,
                       .cap = cap, .cache = cache };
    if (c.verdict == OAC_CAP_FITS)
        return OAC_OK;
    char what[160], msg[384];
    snprintf(what, sizeof what, "input %zu '%s'", port, oac_kin_name(k, port));
    c.what = what;
    c.row = " = ";
    oac_capacity_say(msg, sizeof msg, &c);
    return oac_kernel_error(k, oac_kin_name(k, port), "%s", msg);
}

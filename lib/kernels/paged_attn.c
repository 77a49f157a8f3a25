/* kernels/paged_attn.c: the PagedCacheAttention kernel (contract section
 * 11; page formats of section 1 through quant/quant.h).
 *
 * Owns oac_kernel_paged_cache_attention (its ops.def row's kernel) and its
 * core oac_pattn_run (kernels/paged_attn.h).  query T[num_heads, q_len,
 * head_size] attends to the pages [2, kv_heads, page_size, head_size] of a
 * paged cache: query row i is position length - q_len + i and sees
 * positions 0 .. that one; head h reads kv head h / (num_heads /
 * kv_num_heads).
 *
 * The dot products and the softmax are a small loop of this file's own
 * (kernels/attn.c's attention core is being reworked separately): one
 * pass over the pages with a running maximum and sum (the "online"
 * softmax), in FLOAT, so that a query row needs the scores of one page at
 * a time only.  Its result equals softmax(q K^T * scale) V up to float
 * rounding.
 *
 * Invariants:
 *  1. Everything is validated before the output is written: operands,
 *     every page the rows read present (kernel-error naming the page id
 *     otherwise) and holding the bytes its declaration packs into
 *     (page-type-invalid).
 *  2. Memory: the output (the plan's buffer) and one workspace of
 *     oac_pattn_workspace_bytes: the keys and values of one kv head of
 *     one page, decoded through that page's own quantized_type, one row of
 *     page_size scores and one accumulator row.  The whole cache is never
 *     decoded, and never written.
 *  3. Every index is inside the page (quant/quant.c checks the ranges
 *     again) and every product is overflow-checked.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "half.h"
#include "kernels/elem_io.h"
#include "kernels/paged_attn.h"
#include "quant/quant.h"

enum { T_FLOAT = 1, T_FLOAT16 = 10, T_BFLOAT16 = 16 };

#define FINDING(c, code_, ...) \
    (snprintf((c)->msg, sizeof (c)->msg, __VA_ARGS__), (c)->code = (code_), \
     OAC_ERUNTIME)

static bool decodes_to(int32_t t)
{
    return t == T_FLOAT || t == T_FLOAT16 || t == T_BFLOAT16;
}

bool oac_pattn_workspace_bytes(int32_t elem_type, const int64_t page_dims[4],
                               uint64_t *out)
{
    if (!decodes_to(elem_type) || page_dims[2] < 0 || page_dims[3] < 0)
        return false;
    uint64_t ps = (uint64_t)page_dims[2], hs = (uint64_t)page_dims[3], kv, rows;
    uint64_t esz = elem_type == T_FLOAT ? 4 : 2;
    return !oac_mul_overflow_u64(2 * esz, ps, &kv) &&
           !oac_mul_overflow_u64(kv, hs, &kv) &&
           !oac_add_overflow_u64(ps, hs, &rows) &&
           !oac_mul_overflow_u64(rows, 4, &rows) &&
           !oac_add_overflow_u64(kv, rows, out);
}

/* Geometry of one call. */
typedef struct geom {
    uint64_t heads, kv_heads, group, q_len, ps, hs, n_pages_read;
    size_t esz;
} geom;

static int check_operands(oac_pattn_call *c, geom *g)
{
    const oac_paged *p = c->cache;
    const oac_tensor *q = c->query;
    int32_t t = p->elem_type;
    if (!decodes_to(t))
        return FINDING(c, OAC_OPERAND_INVALID, "the pages of '%s' decode to %s, "
                       "not FLOAT, FLOAT16 or BFLOAT16", c->cache_name,
                       oac_elem_name(t) ? oac_elem_name(t) : "UNDEFINED");
    for (int i = 0; i < 4; i++)
        if (p->page_dims[i] < 0)
            return FINDING(c, OAC_OPERAND_INVALID, "page dimension %d of '%s' is "
                           "negative", i, c->cache_name);
    if (p->page_dims[0] != 2)
        return FINDING(c, OAC_OPERAND_INVALID, "the pages of '%s' have %lld on "
                       "axis 0, not 2 (keys and values)", c->cache_name,
                       (long long)p->page_dims[0]);
    if (!q || q->rank != 3 || q->elem_type != t)
        return FINDING(c, OAC_OPERAND_INVALID, "query must be %s[num_heads, "
                       "q_len, head_size], the pages' type, of rank 3",
                       oac_elem_name(t));
    int64_t kvn = c->kv_num_heads ? c->kv_num_heads : c->num_heads;
    if (c->num_heads < 1 || kvn < 1 || c->num_heads % kvn)
        return FINDING(c, OAC_OPERAND_INVALID, "num_heads %lld is not a multiple "
                       "of kv_num_heads %lld", (long long)c->num_heads,
                       (long long)kvn);
    if (q->dims[0] != c->num_heads || q->dims[2] != p->page_dims[3] ||
        kvn != p->page_dims[1])
        return FINDING(c, OAC_OPERAND_INVALID, "query [%lld, %lld, %lld] with "
                       "num_heads %lld and kv_num_heads %lld does not match the "
                       "pages [2, %lld, %lld, %lld] of '%s'", (long long)q->dims[0],
                       (long long)q->dims[1], (long long)q->dims[2],
                       (long long)c->num_heads, (long long)kvn,
                       (long long)p->page_dims[1], (long long)p->page_dims[2],
                       (long long)p->page_dims[3], c->cache_name);
    if (q->dims[1] < 0 || c->length < q->dims[1])
        return FINDING(c, OAC_KERNEL_ERROR, "length %lld is below the query's "
                       "%lld rows", (long long)c->length, (long long)q->dims[1]);
    g->heads = (uint64_t)c->num_heads;
    g->kv_heads = (uint64_t)kvn;
    g->group = g->heads / g->kv_heads;
    g->q_len = (uint64_t)q->dims[1];
    g->ps = (uint64_t)p->page_dims[2];
    g->hs = (uint64_t)p->page_dims[3];
    g->esz = t == T_FLOAT ? 4 : 2;
    uint64_t n, ws;
    if (oac_mul_overflow_u64(g->heads, g->q_len, &n) ||
        oac_mul_overflow_u64(n, g->hs, &n) || oac_mul_overflow_u64(n, g->esz, &n) ||
        n > q->bytes || !oac_pattn_workspace_bytes(t, p->page_dims, &ws) ||
        ws > c->ws_bytes || (ws && !c->ws))
        return FINDING(c, OAC_OPERAND_INVALID, "the query or the page shape "
                       "overflows its storage");
    if (c->length > 0 && !g->ps)
        return FINDING(c, OAC_KERNEL_ERROR, "the pages of '%s' hold no "
                       "position (page_size 0)", c->cache_name);
    g->n_pages_read = g->ps ? ((uint64_t)c->length + g->ps - 1) / g->ps : 0;
    return OAC_OK;
}

/* The page holding page_id id, or NULL. */
static const oac_page *page_at(const oac_pattn_call *c, uint64_t id)
{
    const oac_paged *p = c->cache;
    if (!c->keys && !p->map)
        return id < p->n_pages ? &p->pages[id] : NULL;
    for (size_t i = 0; i < p->n_pages; i++) {
        int64_t key = c->keys ? c->keys[i] : p->pages[i].key;
        if (key >= 0 && (uint64_t)key == id)
            return &p->pages[i];
    }
    return NULL;
}

/* The validated declaration of a page whose bytes match it. */
static int page_decl(oac_pattn_call *c, const geom *g, uint64_t id,
                     const oac_page *pg, oac_qdesc *d)
{
    const Onnx__ModelProto *m = c->model;
    int64_t q = pg->quantized_type;
    char why[200], lb[32];
    if (!m || q < 0 || (uint64_t)q >= m->n_quantizations)
        return FINDING(c, OAC_PAGE_TYPE_INVALID, "page %llu of '%s' has "
                       "quantized_type %lld, out of range", (unsigned long long)id,
                       c->cache_name, (long long)q);
    const char *name = oac_qdesc_label(m->quantizations[q], (long)q, lb, sizeof lb);
    if (!oac_qdesc_from_proto(d, m->quantizations[q], why, sizeof why))
        return FINDING(c, OAC_PAGE_TYPE_INVALID, "page %llu of '%s': '%s' is not "
                       "a supported page format: %s", (unsigned long long)id,
                       c->cache_name, name, why);
    uint64_t n = 2 * g->kv_heads * g->ps * g->hs, b;   /* checked by the caller */
    if (d->data_type != c->cache->elem_type || !oac_qdesc_page_bytes(d, n, &b) ||
        b != pg->bytes || (b && !pg->data))
        return FINDING(c, OAC_PAGE_TYPE_INVALID, "page %llu of '%s' ('%s') holds "
                       "%zu bytes of %s, not a page of the cache's %s",
                       (unsigned long long)id, c->cache_name, name, pg->bytes,
                       oac_elem_name(d->data_type) ? oac_elem_name(d->data_type) : "?",
                       oac_elem_name(c->cache->elem_type));
    return OAC_OK;
}

/* Every page the rows read, present and valid (invariant 1). */
static int check_pages(oac_pattn_call *c, const geom *g)
{
    uint64_t cells;
    if (oac_mul_overflow_u64(2 * g->kv_heads, g->ps, &cells) ||
        oac_mul_overflow_u64(cells, g->hs, &cells))
        return FINDING(c, OAC_OPERAND_INVALID, "the page shape overflows");
    for (uint64_t id = 0; id < g->n_pages_read; id++) {
        const oac_page *pg = page_at(c, id);
        if (!pg)
            return FINDING(c, OAC_KERNEL_ERROR, "position %llu is in page_id "
                           "%llu, which the cache does not hold (%zu pages; "
                           "length %lld)", (unsigned long long)(id * g->ps),
                           (unsigned long long)id, c->cache->n_pages,
                           (long long)c->length);
        oac_qdesc d;
        int rc = page_decl(c, g, id, pg, &d);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

static inline float ld(int32_t t, const void *base, size_t i)
{
    if (t == T_FLOAT)
        return ((const float *)base)[i];
    uint16_t h = ((const uint16_t *)base)[i];
    return t == T_FLOAT16 ? oac_f16_to_f32(h) : oac_bf16_to_f32(h);
}

static inline void st(int32_t t, void *base, size_t i, float v)
{
    if (t == T_FLOAT)
        ((float *)base)[i] = v;
    else
        ((uint16_t *)base)[i] = t == T_FLOAT16 ? oac_f32_to_f16(v) : oac_f32_to_bf16(v);
}

/* The working rows of one (head, query row). */
typedef struct row {
    uint8_t *k, *v;   /* decoded keys and values: ps * hs elements of T */
    float *score;     /* ps */
    float *acc;       /* hs */
    float max, sum;
} row;

/* Fold page id's first `rows` positions into r for query row qi of head h. */
static int fold_page(oac_pattn_call *c, const geom *g, row *r, uint64_t h,
                     const void *qrow, uint64_t id, uint64_t rows)
{
    const oac_page *pg = page_at(c, id);
    oac_qdesc d;
    int rc = page_decl(c, g, id, pg, &d);
    if (rc)
        return rc;
    int32_t t = c->cache->elem_type;
    uint64_t kvh = h / g->group, slab = g->ps * g->hs;
    size_t n = (size_t)(rows * g->hs);
    if ((rc = oac_dequantize(c->ctx, &d, pg->data, pg->bytes, kvh * slab, t, r->k, n)) ||
        (rc = oac_dequantize(c->ctx, &d, pg->data, pg->bytes,
                             (g->kv_heads + kvh) * slab, t, r->v, n)))
        return rc;
    float m = r->max;
    for (uint64_t j = 0; j < rows; j++) {
        float s = 0.0f;
        for (uint64_t e = 0; e < g->hs; e++)
            s += ld(t, qrow, e) * ld(t, r->k, j * g->hs + e);
        s *= c->scale;
        r->score[j] = s;
        if (s > m)
            m = s;
    }
    float corr = r->max == -INFINITY ? 0.0f : expf(r->max - m);
    r->sum *= corr;
    for (uint64_t e = 0; e < g->hs; e++)
        r->acc[e] *= corr;
    for (uint64_t j = 0; j < rows; j++) {
        float w = expf(r->score[j] - m);
        r->sum += w;
        for (uint64_t e = 0; e < g->hs; e++)
            r->acc[e] += w * ld(t, r->v, j * g->hs + e);
    }
    r->max = m;
    return OAC_OK;
}

int oac_pattn_run(oac_pattn_call *c)
{
    geom g;
    int rc;
    c->code = OAC_CODE_COUNT;
    c->msg[0] = 0;
    if ((rc = check_operands(c, &g)) || (rc = check_pages(c, &g)))
        return rc;
    if (!c->has_scale)
        c->scale = g.hs ? (float)(1.0 / sqrt((double)g.hs)) : 1.0f;
    int32_t t = c->cache->elem_type;
    uint8_t *ws = c->ws;
    size_t kvb = (size_t)(g.ps * g.hs) * g.esz;
    row r = { .k = ws, .v = ws + kvb };
    r.score = (float *)(void *)(ws + 2 * kvb);
    r.acc = r.score + g.ps;
    const uint8_t *qd = c->query->data;
    uint8_t *od = c->out->data;
    for (uint64_t h = 0; h < g.heads; h++) {
        for (uint64_t i = 0; i < g.q_len; i++) {
            uint64_t at = (h * g.q_len + i) * g.hs;
            uint64_t npos = (uint64_t)c->length - g.q_len + i + 1;
            r.max = -INFINITY;
            r.sum = 0.0f;
            for (uint64_t e = 0; e < g.hs; e++)
                r.acc[e] = 0.0f;
            for (uint64_t id = 0; id * g.ps < npos; id++) {
                uint64_t rows = npos - id * g.ps < g.ps ? npos - id * g.ps : g.ps;
                if ((rc = fold_page(c, &g, &r, h, qd + at * g.esz, id, rows)))
                    return rc;
            }
            for (uint64_t e = 0; e < g.hs; e++)
                st(t, od, (size_t)(at + e), r.sum > 0 ? r.acc[e] / r.sum : 0.0f);
        }
    }
    return OAC_OK;
}

/* ---- the kernel-table entry ---------------------------------------------- */

int oac_kernel_paged_cache_attention(oac_kernel_call *k)
{
    if (k->n_in < 3 || !k->in[1] || k->in[1]->kind != OAC_RTV_PAGED)
        return oac_kernel_error(k, oac_kin_name(k, 1), "input 1 of "
                                "PagedCacheAttention must be a paged cache");
    const oac_tensor *q = oac_kin_typed(k, 0, OAC_EKM(OAC_T_FLOAT) |
                                        OAC_EKM(OAC_T_FLOAT16) |
                                        OAC_EKM(OAC_T_BFLOAT16));
    if (!q)
        return OAC_ERUNTIME;
    const oac_tensor *lt = oac_kin(k, 2);
    if (!lt)
        return OAC_ERUNTIME;
    if (lt->elem_type != OAC_T_INT64 || lt->bytes != 8)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID, "node '%s': length '%s' must "
                               "be one INT64 value", k->node_name, oac_kin_name(k, 2));
    int64_t length;
    memcpy(&length, lt->data, 8);
    const Onnx__AttributeProto *sa = oac_node_attr(k->node, "scale");
    oac_pattn_call c = {
        .ctx = k->ctx, .model = k->model ? k->model->proto : NULL,
        .cache = &k->in[1]->p, .cache_name = oac_kin_name(k, 1),
        .query = q, .length = length,
        .num_heads = oac_attr_int(k->node, "num_heads", 0),
        .kv_num_heads = oac_attr_int(k->node, "kv_num_heads", 0),
        .has_scale = sa != NULL, .scale = sa ? sa->f : 0.0f,
    };
    uint64_t wsb;
    if (!oac_pattn_workspace_bytes(c.cache->elem_type, c.cache->page_dims, &wsb) ||
        wsb > SIZE_MAX)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID, "node '%s': the pages of '%s' "
                               "cannot be decoded for attention", k->node_name,
                               c.cache_name);
    oac_tensor *out;
    int rc = oac_kernel_output(k, 0, q->elem_type, 3, q->dims, &out);
    if (rc)
        return rc;
    c.out = out;
    c.ws_bytes = (size_t)wsb;
    if (wsb && (rc = oac_kernel_workspace(k, c.ws_bytes, &c.ws)))
        return rc;
    rc = oac_pattn_run(&c);
    if (rc == OAC_ERUNTIME && c.code == OAC_KERNEL_ERROR)
        return oac_kernel_error(k, c.cache_name, "%s", c.msg);
    if (rc == OAC_ERUNTIME)
        return oac_kernel_fail(k, c.code, "node '%s': %s", k->node_name, c.msg);
    return rc;
}

/* kernels/paged.c: the PagedCacheUpdate kernel (contract section 2; page
 * formats of section 1 through quant/quant.h).
 *
 * Owns oac_kernel_paged_cache_update (its ops.def row's kernel) and its core
 * oac_paged_update (kernels/paged.h).  The cache is a page table
 * (oac_paged) of packed pages [2, heads, page_size, head_size]; values
 * E[2, heads, new_length, head_size] are quantized straight into rows
 * position .. position + new_length of one page, per (kv, head) slab.
 *
 * Invariants:
 *  1. Everything is validated before anything is allocated or written:
 *     a finding (capacity-overflow for page_id/position, page-type-invalid
 *     for a quantized type, operand-invalid for values) leaves the cache
 *     as it was.
 *  2. Memory: an update in the page's own format allocates nothing; a new
 *     page allocates exactly its bytes (ralloc); a format change allocates
 *     workspace for the decoded page (E elements, the plan's workspace)
 *     and, when the byte size differs, the new page before the old one is
 *     freed.  The page table grows through the context allocator (not
 *     counted, per contract 4) and never moves a page payload.
 *  3. Pages other than page_id are never touched; page page_id keeps its
 *     address unless its byte size changes.
 *  4. Without output_alias the node runs out of place: the output is a
 *     counted copy of every page (the second cache), then updated.
 */
#include <stdio.h>
#include <string.h>

#include "kernels/paged.h"
#include "quant/quant.h"
#include "rulebook.h"

enum { T_FLOAT = 1, T_FLOAT16 = 10, T_BFLOAT16 = 16 };

#define FINDING(c, code_, ...) \
    (snprintf((c)->msg, sizeof (c)->msg, __VA_ARGS__), (c)->code = (code_), \
     OAC_ERUNTIME)

/* Geometry of one update, all products overflow-checked. */
typedef struct geom {
    uint64_t slabs;      /* 2 * heads */
    uint64_t page_size;  /* rows per slab in a page */
    uint64_t head_size;  /* elements per row */
    uint64_t new_len;    /* rows written */
    uint64_t n;          /* elements of a page */
    size_t esz;          /* bytes of one E */
} geom;

/* The validated declaration `q` for this cache, or a finding. */
static int decl_for(oac_paged_call *c, int64_t q, const char *role,
                    oac_qdesc *d)
{
    const Onnx__ModelProto *m = c->model;
    size_t nq = m ? m->n_quantizations : 0;
    if (q < 0 || (uint64_t)q >= nq)
        return FINDING(c, OAC_PAGE_TYPE_INVALID,
                       "%s quantized_type %lld is out of range: the model "
                       "declares %zu quantizations", role, (long long)q, nq);
    char why[200], lb[32];
    /* Named by QuantizationProto.name, and its index (issue 10, item 4). */
    const char *name = oac_qdesc_label(m->quantizations[q], (long)q, lb, sizeof lb);
    if (!oac_qdesc_from_proto(d, m->quantizations[q], why, sizeof why))
        return FINDING(c, OAC_PAGE_TYPE_INVALID,
                       "%s quantized_type %lld ('%s') is not a supported page "
                       "format: %s", role, (long long)q, name, why);
    if (d->data_type != c->cache->elem_type)
        return FINDING(c, OAC_PAGE_TYPE_INVALID,
                       "%s quantized_type %lld ('%s') decodes to %s, not the "
                       "cache's %s", role, (long long)q, name,
                       oac_elem_name(d->data_type),
                       oac_elem_name(c->cache->elem_type));
    return OAC_OK;
}

/* The name of declaration q of the model ('#q' without one), in buf. */
static const char *qname(const oac_paged_call *c, int64_t q, char *buf,
                         size_t len)
{
    const Onnx__ModelProto *m = c->model;
    if (!m || q < 0 || (uint64_t)q >= m->n_quantizations) {
        snprintf(buf, len, "#%lld", (long long)q);
        return buf;
    }
    return oac_qdesc_label(m->quantizations[q], (long)q, buf, len);
}

static bool allowed(const oac_paged *p, int64_t q)
{
    if (!p->n_allowed)
        return true;
    for (size_t i = 0; i < p->n_allowed; i++)
        if (p->allowed[i] == q)
            return true;
    return false;
}

static int check_geometry(oac_paged_call *c, geom *g)
{
    const oac_paged *p = c->cache;
    const oac_tensor *v = c->values;
    int32_t et = p->elem_type;
    if (et != T_FLOAT && et != T_FLOAT16 && et != T_BFLOAT16)
        return FINDING(c, OAC_OPERAND_INVALID,
                       "paged cache elements of type %s cannot be quantized",
                       oac_elem_name(et) ? oac_elem_name(et) : "UNDEFINED");
    for (int i = 0; i < 4; i++)
        if (p->page_dims[i] < 0)
            return FINDING(c, OAC_OPERAND_INVALID, "page dimension %d is negative", i);
    if (!v || v->elem_type != et || v->rank != 4 || v->dims[0] != p->page_dims[0] ||
        v->dims[1] != p->page_dims[1] || v->dims[3] != p->page_dims[3] ||
        v->dims[2] < 0)
        return FINDING(c, OAC_OPERAND_INVALID,
                       "values must be %s[%lld, %lld, new_length, %lld] like the "
                       "cache's pages", oac_elem_name(et),
                       (long long)p->page_dims[0], (long long)p->page_dims[1],
                       (long long)p->page_dims[3]);
    g->slabs = (uint64_t)p->page_dims[0];
    g->page_size = (uint64_t)p->page_dims[2];
    g->head_size = (uint64_t)p->page_dims[3];
    g->new_len = (uint64_t)v->dims[2];
    g->esz = oac_elem_bits(et) / 8;
    uint64_t bytes;
    if (oac_mul_overflow_u64(g->slabs, (uint64_t)p->page_dims[1], &g->slabs) ||
        oac_mul_overflow_u64(g->slabs, g->page_size, &g->n) ||
        oac_mul_overflow_u64(g->n, g->head_size, &g->n) ||
        oac_mul_overflow_u64(g->n, g->esz, &bytes) || bytes > SIZE_MAX)
        return FINDING(c, OAC_OPERAND_INVALID, "the page shape overflows");
    /* values holds slabs * new_len * head_size elements of E */
    uint64_t vn;
    if (oac_mul_overflow_u64(g->slabs, g->new_len, &vn) ||
        oac_mul_overflow_u64(vn, g->head_size, &vn) ||
        oac_mul_overflow_u64(vn, g->esz, &vn) || vn > v->bytes)
        return FINDING(c, OAC_OPERAND_INVALID, "values hold fewer bytes than their shape");
    return OAC_OK;
}

/* Quantize the values' rows into a packed page (d) at position. */
static int write_rows(oac_paged_call *c, const geom *g, const oac_qdesc *d,
                      uint8_t *page, size_t bytes)
{
    const uint8_t *src = c->values->data;
    uint64_t row = g->new_len * g->head_size;   /* checked in check_geometry */
    for (uint64_t s = 0; s < g->slabs && row; s++) {
        uint64_t at = (s * g->page_size + (uint64_t)c->position) * g->head_size;
        int rc = oac_quantize(c->ctx, d, page, bytes, at, c->cache->elem_type,
                              src + s * row * g->esz, (size_t)row);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

/* Copy the values' rows into a decoded page (E elements). */
static void copy_rows(oac_paged_call *c, const geom *g, uint8_t *ws)
{
    const uint8_t *src = c->values->data;
    size_t row = (size_t)(g->new_len * g->head_size * g->esz);
    for (uint64_t s = 0; s < g->slabs && row; s++) {
        uint64_t at = (s * g->page_size + (uint64_t)c->position) * g->head_size;
        memcpy(ws + at * g->esz, src + s * row, row);
    }
}

int oac_paged_update(oac_paged_call *c)
{
    oac_paged *p = c->cache;
    geom g;
    int rc;
    c->code = OAC_CODE_COUNT;
    c->msg[0] = 0;
    if ((rc = check_geometry(c, &g)))
        return rc;

    /* Contract 2: page_id == len creates a page; beyond, or negative, is
     * capacity-overflow, never a reallocation. */
    if (c->page_id < 0 || (uint64_t)c->page_id > p->n_pages)
        return FINDING(c, OAC_CAPACITY_OVERFLOW,
                       "page_id %lld is outside the cache's %zu pages (a new "
                       "page is page_id %zu)", (long long)c->page_id,
                       p->n_pages, p->n_pages);
    /* The capacity rule (rulebook.h): page dims are >= 0 int64. */
    oac_cap_case k = { .verdict = oac_capacity_rule(c->position, (int64_t)g.new_len,
                                                    (int64_t)g.page_size, OAC_CAP_NORMAL),
                       .what = "position", .row = "", .pos_known = true,
                       .pos = c->position, .len = (int64_t)g.new_len,
                       .cap = (int64_t)g.page_size,
                       .cache = c->cache_name ? c->cache_name : "" };
    if (k.verdict != OAC_CAP_FITS) {
        oac_capacity_say(c->msg, sizeof c->msg, &k);
        c->code = OAC_CAPACITY_OVERFLOW;
        return OAC_ERUNTIME;
    }

    bool create = (uint64_t)c->page_id == p->n_pages;
    int64_t q = c->quantized_type;
    if (q < 0)
        q = !create ? p->pages[c->page_id].quantized_type
            : p->n_pages ? p->pages[p->n_pages - 1].quantized_type
            : p->n_allowed ? p->allowed[0] : 0;
    oac_qdesc dq;
    if ((rc = decl_for(c, q, "the requested", &dq)))
        return rc;
    char lb[32];
    if (!allowed(p, q))
        return FINDING(c, OAC_PAGE_TYPE_INVALID,
                       "quantized_type %lld ('%s') is not among the cache's "
                       "allowed types", (long long)q, qname(c, q, lb, sizeof lb));
    uint64_t qbytes;
    if (!oac_qdesc_page_bytes(&dq, g.n, &qbytes) || qbytes > SIZE_MAX)
        return FINDING(c, OAC_OPERAND_INVALID, "the page's byte size overflows");

    if (create) {
        /* The table first: if it cannot grow, nothing was allocated. */
        if ((rc = oac_paged_reserve(c->ctx, p, p->n_pages + 1)))
            return rc;
        uint8_t *data = oac_ralloc_get(c->alloc, (size_t)qbytes, true);
        if (qbytes && !data)
            return oac_ralloc_failed(c->alloc);   /* EBUDGET or ENOMEM */
        /* calloc gave code 0 everywhere: 0.0 for FP8 and symmetric signed
         * formats; elsewhere 0.0 is the zero point. */
        if (dq.kind == OAC_QK_LINEAR && dq.zero_point != 0)
            oac_quant_fill_zero(c->ctx, &dq, data, (size_t)qbytes, 0, (size_t)g.n);
        if ((rc = write_rows(c, &g, &dq, data, (size_t)qbytes))) {
            oac_ralloc_put(c->alloc, data, (size_t)qbytes);
            return rc;
        }
        p->pages[p->n_pages++] = (oac_page){ .quantized_type = (int32_t)q,
                                             .data = data,
                                             .bytes = (size_t)qbytes };
        return OAC_OK;
    }

    oac_page *pg = &p->pages[c->page_id];
    oac_qdesc dcur;
    if (pg->quantized_type != q) {
        if ((rc = decl_for(c, pg->quantized_type, "the page's", &dcur)))
            return rc;
    } else {
        dcur = dq;
    }
    uint64_t cur_bytes;
    if (!oac_qdesc_page_bytes(&dcur, g.n, &cur_bytes) || cur_bytes != pg->bytes ||
        (pg->bytes && !pg->data))
        return FINDING(c, OAC_PAGE_TYPE_INVALID,
                       "page %lld holds %zu bytes, not the %llu its type "
                       "(quantized_type %d, '%s') packs into",
                       (long long)c->page_id, pg->bytes,
                       (unsigned long long)cur_bytes, (int)pg->quantized_type,
                       qname(c, pg->quantized_type, lb, sizeof lb));

    if (pg->quantized_type == q)          /* the common case: in place */
        return write_rows(c, &g, &dq, pg->data, pg->bytes);

    /* Format change: decode, write, re-encode. */
    void *ws = NULL;
    size_t ws_bytes = (size_t)(g.n * g.esz);
    if (!c->workspace)
        return oac_err(c->ctx, OAC_EINTERNAL, "PagedCacheUpdate: no workspace");
    if ((rc = c->workspace(c->workspace_arg, ws_bytes, &ws)))
        return rc;
    int32_t et = p->elem_type;
    if ((rc = oac_dequantize(c->ctx, &dcur, pg->data, pg->bytes, 0, et, ws,
                             (size_t)g.n)))
        return rc;
    copy_rows(c, &g, ws);
    uint8_t *target = pg->data;
    if (qbytes != pg->bytes) {
        /* Allocated before the old page is freed: both count at the peak. */
        target = oac_ralloc_get(c->alloc, (size_t)qbytes, true);
        if (qbytes && !target)
            return oac_ralloc_failed(c->alloc);
    }
    if ((rc = oac_quantize(c->ctx, &dq, target, (size_t)qbytes, 0, et, ws,
                           (size_t)g.n))) {
        if (target != pg->data)
            oac_ralloc_put(c->alloc, target, (size_t)qbytes);
        return rc;
    }
    if (target != pg->data) {
        oac_page_release(c->alloc, pg);   /* counted or bound, as it came */
        pg->data = target;
        pg->bytes = (size_t)qbytes;
        pg->bound = false;
    }
    pg->quantized_type = (int32_t)q;
    return OAC_OK;
}

/* ---- the kernel-table entry ---------------------------------------------- */

static int workspace_cb(void *arg, size_t bytes, void **out)
{
    return oac_kernel_workspace(arg, bytes, out);
}

/* One int64 scalar input (shape [] or [1]). */
static int scalar_in(oac_kernel_call *k, size_t i, const char *what, int64_t *v)
{
    size_t n = 0;
    int rc = oac_kernel_ints_in(k, i, v, 1, &n);
    if (rc)
        return rc;
    if (n != 1)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node '%s': %s must be one INT64 value", k->node_name,
                               what);
    return OAC_OK;
}

/* Without output_alias: the output is a counted copy of every page. */
static int copy_cache(oac_kernel_call *k, const oac_paged *src, oac_rtval *out)
{
    oac_paged p = *src;
    p.pages = NULL;
    p.n_pages = p.cap_pages = 0;
    int rc = oac_paged_reserve(k->ctx, &p, src->n_pages);
    for (size_t i = 0; !rc && i < src->n_pages; i++) {
        oac_page pg = src->pages[i];
        pg.bound = false;
        pg.data = pg.bytes ? oac_ralloc_get(k->alloc, pg.bytes, false) : NULL;
        if (pg.bytes && !pg.data) {
            rc = oac_ralloc_failed(k->alloc);
            break;
        }
        if (pg.bytes)
            memcpy(pg.data, src->pages[i].data, pg.bytes);
        p.pages[p.n_pages++] = pg;
    }
    if (rc) {
        for (size_t i = 0; i < p.n_pages; i++)
            oac_page_release(k->alloc, &p.pages[i]);
        oac_dealloc(k->ctx, p.pages);
        return rc;
    }
    out->kind = OAC_RTV_PAGED;
    out->storage = OAC_STORE_OWNED;
    out->writable = true;
    out->p = p;
    return OAC_OK;
}

int oac_kernel_paged_cache_update(oac_kernel_call *k)
{
    if (k->n_in < 4 || !k->in[0] || k->in[0]->kind != OAC_RTV_PAGED)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node '%s': input 0 of PagedCacheUpdate must be a "
                               "paged cache", k->node_name);
    if (k->n_out < 1 || !k->out[0])
        return oac_err(k->ctx, OAC_EINTERNAL, "node '%s': output 0 absent",
                       k->node_name);
    if (k->in[0]->p.map)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s': PagedCacheUpdate of a Map cache ('%s') is not "
                               "implemented by the reference runtime (a Sequence is)",
                               k->node_name, k->node->input[0]);
    int64_t page_id, position;
    int rc;
    if ((rc = scalar_in(k, 1, "page_id", &page_id)) ||
        (rc = scalar_in(k, 3, "position", &position)))
        return rc;
    const oac_tensor *values = oac_kernel_tensor_in(k, 2);
    if (!values)
        return OAC_ERUNTIME;

    const Onnx__AttributeProto *qa = oac_node_attr(k->node, "quantized_type");
    if (qa && qa->i < 0)   /* names no declaration; must not read as absent */
        return oac_kernel_fail(k, OAC_PAGE_TYPE_INVALID,
                               "node '%s': quantized_type %lld is out of range",
                               k->node_name, (long long)qa->i);
    oac_rtval *cache;
    if (k->out_alias[0] == 0) {
        /* The runtime made output 0 the input's own object (and refused
         * a read-only one before calling us). */
        cache = k->out[0];
        if (cache->kind != OAC_RTV_PAGED)
            return oac_err(k->ctx, OAC_EINTERNAL,
                           "node '%s': aliased output is not the cache", k->node_name);
    } else {
        if ((rc = copy_cache(k, &k->in[0]->p, k->out[0])))
            return rc;
        cache = k->out[0];
    }

    oac_paged_call c = {
        .ctx = k->ctx, .alloc = k->alloc,
        .model = k->model ? k->model->proto : NULL,
        .cache = &cache->p, .page_id = page_id, .position = position,
        .values = values, .quantized_type = qa ? qa->i : -1,
        .workspace = workspace_cb, .workspace_arg = k,
        .cache_name = k->node->n_input ? k->node->input[0] : NULL,
    };
    rc = oac_paged_update(&c);
    /* A capacity verdict names the node as the rule's wording does. */
    if (rc == OAC_ERUNTIME && c.code == OAC_CAPACITY_OVERFLOW)
        return oac_kernel_fail(k, c.code, "node '%s': %s", k->node_name, c.msg);
    if (rc == OAC_ERUNTIME)
        return oac_kernel_fail(k, c.code, "node '%s': %s", k->node_name, c.msg);
    return rc;
}

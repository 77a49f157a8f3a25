/* check/pages.c: the page rules of the checker, pass 10 (lib/check/checker.h), code
 * page-type-invalid (contract sections 1 and 3; section 2 for the
 * PagedCacheUpdate attribute).
 *
 * Owns every static rule about quantized pages:
 *  - each ModelProto.quantizations entry is a format this version
 *    supports (quant/quant.c says why not), reported once at /quantizations/i;
 *  - each declared QuantizedTensor type (bare, as a sequence element, or
 *    as a map value: a paged cache) decodes to FLOAT, FLOAT16 or BFLOAT16,
 *    its allowed_quantized_type indices are in range, and each allowed
 *    declaration decodes to the container's elem_type; a paged cache in a
 *    model without declarations can hold no page;
 *  - a PagedCacheUpdate node's quantized_type attribute is in range,
 *    allowed by its cache's type and decodes to its elem_type;
 *  - the concrete pages of --input files (SequenceProto
 *    quantized_tensor_values, or MapProto values) set exactly one of
 *    quantized_type and quantization, use an index in range and allowed,
 *    decode to the container's elem type, have its page shape, and carry
 *    n_bytes == raw_data size == the packed size of their dims.
 *
 * Invariants:
 *  1. Findings only: a broken page never stops the pass; operational
 *     failures (out of memory) are the only non-zero returns.
 *  2. A declaration's own defect is reported once, at the declaration;
 *     uses of it report only what is wrong with the use.
 *  3. Messages name the value, the page index (or map key), the
 *     declaration ("INT4_PAGE", or "#2" when unnamed) and the location.
 *  4. Every dimension product and byte size from a file is overflow
 *     checked; page payloads are measured, never read.
 */
#include <stdio.h>
#include <string.h>

#include "check/checker.h"
#include "check/graph.h"
#include "ops.h"
#include "quant/quant.h"
#include "check/shapes.h"

#define LOC_MAX 512

/* The validated declarations of the model, by index. */
typedef struct decls {
    const Onnx__ModelProto *m;
    size_t n;
    oac_qdesc *d;      /* n entries */
    bool *ok;          /* n entries: d[i] is valid */
    char (*label)[24]; /* "#i" for unnamed declarations */
} decls;

static const char *elem_name(int32_t t)
{
    const char *s = oac_elem_name(t);
    return s ? s : "UNDEFINED";
}

static bool decodable(int32_t t)
{
    return t == 1 || t == 10 || t == 16;   /* FLOAT, FLOAT16, BFLOAT16 */
}

static const char *label(const decls *ds, size_t i)
{
    const Onnx__QuantizationProto *q = ds->m->quantizations[i];
    return oac_qdesc_label(q, (long)i, ds->label[i], sizeof ds->label[i]);
}

/* A QuantizedTensor type: bare, Sequence<...> or Map<int64, ...>.  *path
 * receives the TypeProto path from the ValueInfoProto to it. */
static const Onnx__TypeProto__QuantizedTensor *
paged_of(const Onnx__TypeProto *t, bool *is_map, const char **path)
{
    *is_map = false;
    if (!t)
        return NULL;
    if (t->value_case == ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE) {
        *path = "/type/quantized_tensor_type";
        return t->quantized_tensor_type;
    }
    const Onnx__TypeProto *in = NULL;
    if (t->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && t->sequence_type) {
        in = t->sequence_type->elem_type;
        *path = "/type/sequence_type/elem_type/quantized_tensor_type";
    } else if (t->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE && t->map_type) {
        in = t->map_type->value_type;
        *path = "/type/map_type/value_type/quantized_tensor_type";
        *is_map = true;
    }
    if (in && in->value_case == ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE)
        return in->quantized_tensor_type;
    return NULL;
}

static bool allows(const Onnx__TypeProto__QuantizedTensor *qt, int64_t idx)
{
    if (!qt->n_allowed_quantized_type)
        return true;
    for (size_t i = 0; i < qt->n_allowed_quantized_type; i++)
        if (qt->allowed_quantized_type[i] == idx)
            return true;
    return false;
}

/* "0 'INT4_PAGE', 2 'INT2_PAGE'" into buf: each allowed type by its
 * index and QuantizationProto.name (issue 10, item 4). */
static const char *allowed_list(const decls *ds,
                                const Onnx__TypeProto__QuantizedTensor *qt,
                                char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < qt->n_allowed_quantized_type && at < len; i++) {
        int32_t idx = qt->allowed_quantized_type[i];
        int k = idx >= 0 && (size_t)idx < ds->n
            ? snprintf(buf + at, len - at, "%s%d '%s'", i ? ", " : "", (int)idx,
                       label(ds, (size_t)idx))
            : snprintf(buf + at, len - at, "%s%d", i ? ", " : "", (int)idx);
        if (k < 0)
            break;
        at += (size_t)k;
    }
    return buf;
}

/* ---- declarations ----------------------------------------------------- */

static int check_decls(oac_check_state *st, decls *ds)
{
    for (size_t i = 0; i < ds->n; i++) {
        char why[256], loc[64];
        ds->ok[i] = oac_qdesc_from_proto(&ds->d[i], ds->m->quantizations[i],
                                         why, sizeof why);
        if (ds->ok[i])
            continue;
        snprintf(loc, sizeof loc, "/quantizations/%zu", i);
        oac_where w = { .location = loc };
        int rc = oac_diag_add(st->diags, OAC_PAGE_TYPE_INVALID, &w,
                              "quantization %zu ('%s') is not a supported page "
                              "format: %s", i, label(ds, i), why);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

/* ---- declared types --------------------------------------------------- */

static int check_type(oac_check_state *st, const decls *ds, const oac_scope *s,
                      const oac_vinfo *vi)
{
    bool is_map;
    const char *path = NULL;
    const Onnx__TypeProto__QuantizedTensor *qt =
        paged_of(vi->vi->type, &is_map, &path);
    if (!qt)
        return OAC_OK;
    const char *name = vi->vi->name ? vi->vi->name : "";
    char loc[LOC_MAX];
    snprintf(loc, sizeof loc, "%s%s", vi->loc, path);
    oac_where w = { .value = name, .location = loc };
    int32_t et = qt->has_elem_type ? qt->elem_type : 0;
    int rc;

    if (!decodable(et)) {
        snprintf(loc, sizeof loc, "%s%s/elem_type", vi->loc, path);
        return oac_scope_diag(st, s, OAC_PAGE_TYPE_INVALID, &w,
                              "value '%s': quantized pages decode to FLOAT, "
                              "FLOAT16 or BFLOAT16, not %s", name, elem_name(et));
    }
    if (ds->n == 0)
        return oac_scope_diag(st, s, OAC_PAGE_TYPE_INVALID, &w,
                              "value '%s' holds quantized pages, but the model "
                              "declares no quantizations", name);
    for (size_t k = 0; k < qt->n_allowed_quantized_type; k++) {
        int32_t idx = qt->allowed_quantized_type[k];
        snprintf(loc, sizeof loc, "%s%s/allowed_quantized_type/%zu", vi->loc,
                 path, k);
        if (idx < 0 || (size_t)idx >= ds->n)
            rc = oac_scope_diag(st, s, OAC_PAGE_TYPE_INVALID, &w,
                                "value '%s' allows quantized type %d, out of "
                                "range: the model declares %zu quantizations",
                                name, (int)idx, ds->n);
        else if (ds->ok[idx] && ds->d[idx].data_type != et)
            rc = oac_scope_diag(st, s, OAC_PAGE_TYPE_INVALID, &w,
                                "value '%s' allows quantized type %d ('%s'), "
                                "which decodes to %s, not the cache's %s",
                                name, (int)idx, label(ds, (size_t)idx),
                                elem_name(ds->d[idx].data_type), elem_name(et));
        else
            rc = OAC_OK;
        if (rc)
            return rc;
    }
    return OAC_OK;
}

/* ---- PagedCacheUpdate's quantized_type -------------------------------- */

/* Node i of s is a PagedCacheUpdate. */
static int check_node(oac_check_state *st, const decls *ds, const oac_scope *s,
                      long i)
{
    const oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    for (size_t a = 0; a < np->n_attribute; a++) {
        const Onnx__AttributeProto *at = np->attribute[a];
        if (!at->name || strcmp(at->name, "quantized_type"))
            continue;
        /* The attribute's type is operand-invalid's business (ports
         * pass); only an int names a declaration. */
        if (at->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
            continue;
        int64_t q = at->i;
        char loc[LOC_MAX], suffix[48];
        snprintf(suffix, sizeof suffix, "/attribute/%zu", a);
        const oac_value *cache = np->n_input ? oac_node_input(s, i, 0) : NULL;
        const char *cname = np->n_input && np->input[0] ? np->input[0] : NULL;
        oac_where w = oac_where_node(s, i, cname, suffix, loc, sizeof loc);
        if (q < 0 || (uint64_t)q >= ds->n)
            return oac_scope_diag(st, s, OAC_PAGE_TYPE_INVALID, &w,
                                  "node '%s': quantized_type %lld is out of "
                                  "range: the model declares %zu quantizations",
                                  n->display, (long long)q, ds->n);
        bool is_map;
        const char *path;
        const Onnx__TypeProto__QuantizedTensor *qt =
            cache ? paged_of(oac_value_type(cache), &is_map, &path) : NULL;
        if (!qt)
            return OAC_OK;   /* no declared page type to compare with */
        if (!allows(qt, q)) {
            char list[512];
            return oac_scope_diag(st, s, OAC_PAGE_TYPE_INVALID, &w,
                                  "node '%s': quantized_type %lld ('%s') is not "
                                  "among the types '%s' allows (%s)",
                                  n->display, (long long)q, label(ds, (size_t)q),
                                  cname, allowed_list(ds, qt, list, sizeof list));
        }
        int32_t et = qt->has_elem_type ? qt->elem_type : 0;
        if (ds->ok[q] && decodable(et) && ds->d[q].data_type != et)
            return oac_scope_diag(st, s, OAC_PAGE_TYPE_INVALID, &w,
                                  "node '%s': quantized_type %lld ('%s') decodes "
                                  "to %s, not the %s of '%s'", n->display,
                                  (long long)q, label(ds, (size_t)q),
                                  elem_name(ds->d[q].data_type), elem_name(et),
                                  cname);
    }
    return OAC_OK;
}

/* ---- concrete pages of --input files ----------------------------------- */

/* What a page is checked against. */
typedef struct page_ctx {
    oac_check_state *st;
    const decls *ds;
    const oac_scope *s;
    const Onnx__TypeProto__QuantizedTensor *qt;
    const char *value;       /* graph input */
    const char *file;        /* its --input path */
    oac_where w;
} page_ctx;

/* The page shape as text, "[2, 2, 16, 4]" ("?" for an unknown dim). */
static void fmt_dims(char *buf, size_t len, const int64_t *d, size_t n)
{
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && at + 1 < len; i++) {
        int k = snprintf(buf + at, len - at, "%s%lld", i ? ", " : "",
                         (long long)d[i]);
        if (k < 0)
            return;
        at += (size_t)k;
    }
}

/* Does the page's dims match the container's shape?  Dimensions without
 * a value, and dim_params nothing binds, match anything. */
static bool shape_matches(const page_ctx *pc, const Onnx__QuantizedTensorProto *p,
                          char *want, size_t len)
{
    const Onnx__TensorShapeProto *sh = pc->qt->shape;
    if (!sh)
        return true;
    size_t at = 0;
    bool ok = p->n_dims == sh->n_dim;
    want[0] = 0;
    for (size_t i = 0; i < sh->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];
        int64_t v = -1;
        if (d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            v = d->dim_value;
        else if (d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                 && d->dim_param && pc->st->out)
            v = oac_analysis_dim(pc->st->out, d->dim_param);
        if (ok && v >= 0 && p->dims[i] != v)
            ok = false;
        if (at + 1 < len) {
            int k = v >= 0 ? snprintf(want + at, len - at, "%s%lld", i ? ", " : "",
                                      (long long)v)
                           : snprintf(want + at, len - at, "%s?", i ? ", " : "");
            if (k > 0)
                at += (size_t)k;
        }
    }
    return ok;
}

static int check_page(page_ctx *pc, const Onnx__QuantizedTensorProto *p,
                      const char *what)
{
    oac_check_state *st = pc->st;
    const decls *ds = pc->ds;
    const char *v = pc->value;
    const oac_qdesc *d = NULL;
    oac_qdesc inline_d;
    const char *dname;
    char why[256];
    int32_t et = pc->qt->has_elem_type ? pc->qt->elem_type : 0;

#define PAGE_DIAG(...) oac_scope_diag(st, pc->s, OAC_PAGE_TYPE_INVALID, &pc->w, __VA_ARGS__)

    bool has_idx = p->has_quantized_type, has_inl = p->quantization != NULL;
    if (has_idx == has_inl)
        return PAGE_DIAG("value '%s', %s (%s): a page must set exactly one of "
                         "quantized_type and quantization; it sets %s", v, what,
                         pc->file, has_idx ? "both" : "neither");
    if (has_idx) {
        int32_t q = p->quantized_type;
        if (q < 0 || (size_t)q >= ds->n)
            return PAGE_DIAG("value '%s', %s (%s): quantized_type %d is out of "
                             "range: the model declares %zu quantizations", v,
                             what, pc->file, (int)q, ds->n);
        dname = label(ds, (size_t)q);
        if (!allows(pc->qt, q)) {
            char list[512];
            return PAGE_DIAG("value '%s', %s (%s): quantized_type %d ('%s') is "
                             "not among the types allowed (%s)", v, what,
                             pc->file, (int)q, dname,
                             allowed_list(ds, pc->qt, list, sizeof list));
        }
        if (!ds->ok[q])
            return OAC_OK;   /* reported at /quantizations/q */
        d = &ds->d[q];
    } else {
        dname = p->quantization->name && *p->quantization->name
                    ? p->quantization->name : "inline";
        if (!oac_qdesc_from_proto(&inline_d, p->quantization, why, sizeof why))
            return PAGE_DIAG("value '%s', %s (%s): its quantization ('%s') is "
                             "not a supported page format: %s", v, what,
                             pc->file, dname, why);
        d = &inline_d;
    }
    if (d->data_type != et)
        return PAGE_DIAG("value '%s', %s (%s): quantization '%s' decodes to %s, "
                         "not the cache's %s", v, what, pc->file, dname,
                         elem_name(d->data_type), elem_name(et));

    char got[160], want[160];
    fmt_dims(got, sizeof got, p->dims, p->n_dims);
    if (!shape_matches(pc, p, want, sizeof want))
        return PAGE_DIAG("value '%s', %s (%s): dims [%s] are not the cache's "
                         "page shape [%s]", v, what, pc->file, got, want);
    uint64_t n = 1, need;
    for (size_t i = 0; i < p->n_dims; i++)
        if (p->dims[i] < 0 || oac_mul_overflow_u64(n, (uint64_t)p->dims[i], &n))
            return PAGE_DIAG("value '%s', %s (%s): dims [%s] are negative or "
                             "too large", v, what, pc->file, got);
    if (!oac_qdesc_page_bytes(d, n, &need))
        return PAGE_DIAG("value '%s', %s (%s): %llu elements of '%s' overflow "
                         "a byte count", v, what, pc->file,
                         (unsigned long long)n, dname);
    oac_payload pl;
    uint64_t have = oac_qtensor_payload(p, &pl) ? pl.len : 0;
    if (p->has_n_bytes && (p->n_bytes < 0 || (uint64_t)p->n_bytes != have))
        return PAGE_DIAG("value '%s', %s (%s): n_bytes %lld is not the size of "
                         "its raw_data (%llu bytes)", v, what, pc->file,
                         (long long)p->n_bytes, (unsigned long long)have);
    if (have != need)
        return PAGE_DIAG("value '%s', %s (%s): raw_data holds %llu bytes, but "
                         "[%s] in '%s' packs into %llu", v, what, pc->file,
                         (unsigned long long)have, got, dname,
                         (unsigned long long)need);
#undef PAGE_DIAG
    return OAC_OK;
}

static int check_pages(page_ctx *pc, const Onnx__SequenceProto *seq,
                       const int64_t *keys, size_t n_keys)
{
    char what[64];
    if (!seq)
        return OAC_OK;
    if (seq->n_tensor_values || seq->n_sequence_values || seq->n_map_values ||
        seq->n_sparse_tensor_values || seq->n_optional_values)
        return oac_scope_diag(pc->st, pc->s, OAC_PAGE_TYPE_INVALID, &pc->w,
                              "value '%s' (%s): a paged cache holds quantized "
                              "tensors, but the file holds other values",
                              pc->value, pc->file);
    if (keys && n_keys != seq->n_quantized_tensor_values)
        return oac_scope_diag(pc->st, pc->s, OAC_PAGE_TYPE_INVALID, &pc->w,
                              "value '%s' (%s): the map has %zu keys but %zu "
                              "pages", pc->value, pc->file, n_keys,
                              seq->n_quantized_tensor_values);
    for (size_t k = 0; k < seq->n_quantized_tensor_values; k++) {
        if (keys)
            snprintf(what, sizeof what, "page %lld", (long long)keys[k]);
        else
            snprintf(what, sizeof what, "page %zu", k);
        int rc = check_page(pc, seq->quantized_tensor_values[k], what);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

static int check_inputs(oac_check_state *st, const decls *ds)
{
    const oac_check_opts *o = st->opts;
    const oac_graphs *g = st->graphs;
    if (!o || !st->shapes || !g || !g->n_scopes)
        return OAC_OK;
    const oac_scope *main_s = g->scopes[0];
    for (size_t i = 0; i < o->n_inputs; i++) {
        const char *name = o->inputs[i].name;
        const oac_pbfile *f = oac_analysis_input(st->out, name);
        const oac_value *v = name ? oac_scope_local(main_s, name) : NULL;
        bool is_map;
        const char *path;
        const Onnx__TypeProto__QuantizedTensor *qt =
            v ? paged_of(oac_value_type(v), &is_map, &path) : NULL;
        if (!f || !f->msg || !qt)
            continue;
        page_ctx pc = { .st = st, .ds = ds, .s = main_s, .qt = qt,
                        .value = name, .file = o->inputs[i].path,
                        .w = { .value = name,
                               .location = oac_value_vi_loc(v) } };
        int rc = OAC_OK;
        if (f->msg->descriptor == &onnx__sequence_proto__descriptor && !is_map)
            rc = check_pages(&pc, (const Onnx__SequenceProto *)f->msg, NULL, 0);
        else if (f->msg->descriptor == &onnx__map_proto__descriptor && is_map) {
            const Onnx__MapProto *mp = (const Onnx__MapProto *)f->msg;
            rc = check_pages(&pc, mp->values, mp->keys, mp->n_keys);
        }
        if (rc)
            return rc;
    }
    return OAC_OK;
}

/* ---- the pass ---------------------------------------------------------- */

int oac_pass_pages(oac_check_state *st)
{
    oac_ctx *ctx = st->ctx;
    const Onnx__ModelProto *m = st->model ? st->model->proto : NULL;
    if (!m)
        return OAC_OK;
    decls ds = { .m = m, .n = m->n_quantizations };
    int rc = OAC_ENOMEM;
    ds.d = oac_calloc(ctx, ds.n, sizeof *ds.d);
    ds.ok = oac_calloc(ctx, ds.n, sizeof *ds.ok);
    ds.label = oac_calloc(ctx, ds.n, sizeof *ds.label);
    if (!ds.d || !ds.ok || !ds.label)
        goto done;
    if ((rc = check_decls(st, &ds)))
        goto done;
    const oac_graphs *g = st->graphs;
    for (size_t si = 0; g && si < g->n_scopes; si++) {
        const oac_scope *s = g->scopes[si];
        for (size_t v = 0; v < s->n_vinfos; v++)
            if (s->vinfos[v].vi && (rc = check_type(st, &ds, s, &s->vinfos[v])))
                goto done;
        /* The table row is PagedCacheUpdate of domain onnx_alias
         * exactly. */
        for (size_t i = 0; i < s->n_nodes; i++)
            if (s->nodes[i].op &&
                s->nodes[i].op->id == OAC_OP_PAGED_CACHE_UPDATE &&
                (rc = check_node(st, &ds, s, (long)i)))
                goto done;
    }
    rc = check_inputs(st, &ds);
done:
    oac_dealloc(ctx, ds.d);
    oac_dealloc(ctx, ds.ok);
    oac_dealloc(ctx, ds.label);
    return rc;
}

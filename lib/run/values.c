/* run/values.c: values at run time (run/kernel_api.h "Values"): element counts,
 * page tables of paged caches, reading an initializer into bound
 * storage, and releasing what a value holds.  Contract: section 1 (pages),
 * section 4 (what is counted).
 *
 * Invariants:
 *  1. A value is released the way its storage was got: counted node
 *     outputs with oac_ralloc_put, bound data (inputs, initializers) with
 *     oac_ralloc_unbound, each page as its own `bound` says, the page
 *     table on the context; a view is only cleared.
 *  2. Sizes from a model are checked (rank, element count, bytes; the
 *     allocator: the OAC_RT_MAX_BYTES limit and the run's memory budget)
 *     before anything is allocated.
 */
#include <inttypes.h>
#include <string.h>

#include "run/kernel_api.h"

bool oac_tensor_numel_rt(const oac_tensor *t, uint64_t *out)
{
    uint64_t n = 1;
    if (t->rank < 0 || t->rank > OAC_RT_MAX_RANK)
        return false;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0 || oac_mul_overflow_u64(n, (uint64_t)t->dims[i], &n))
            return false;
    }
    *out = n;
    return true;
}

int oac_paged_reserve(oac_ctx *ctx, oac_paged *p, size_t n_pages)
{
    size_t old = p->cap_pages;
    void *arr = p->pages;
    int rc = oac_grow(ctx, &arr, &p->cap_pages, n_pages, sizeof(oac_page));
    if (rc)
        return rc;
    p->pages = arr;
    if (p->cap_pages > old)
        memset(p->pages + old, 0, (p->cap_pages - old) * sizeof(oac_page));
    return OAC_OK;
}

void oac_page_release(oac_ralloc *a, oac_page *pg)
{
    if (pg->bound)
        oac_ralloc_unbound(a, pg->data, pg->bytes);
    else
        oac_ralloc_put(a, pg->data, pg->bytes);
    pg->data = NULL;
    pg->bytes = 0;
    pg->bound = false;
}

void oac_rtval_release(oac_ctx *ctx, oac_ralloc *a, oac_rtval *v)
{
    if (v->kind == OAC_RTV_TENSOR && v->storage == OAC_STORE_OWNED)
        oac_ralloc_put(a, v->t.data, v->t.bytes);
    else if (v->kind == OAC_RTV_TENSOR &&
             (v->storage == OAC_STORE_CONST || v->storage == OAC_STORE_BOUND))
        oac_ralloc_unbound(a, v->t.data, v->t.bytes);
    else if (v->kind == OAC_RTV_PAGED) {
        for (size_t p = 0; p < v->p.n_pages; p++)
            oac_page_release(a, &v->p.pages[p]);
        oac_dealloc(ctx, v->p.pages);
    }
    memset(v, 0, sizeof *v);
}

int oac_rt_load_initializer(oac_ctx *ctx, oac_ralloc *a, const oac_model *model,
                            const Onnx__TensorProto *tp, const char *name,
                            oac_rtval *v)
{
    if (tp->n_dims > OAC_RT_MAX_RANK)
        return oac_err(ctx, OAC_EUNSUPPORTED, "initializer '%s': rank too large", name);
    oac_tensor t = { .elem_type = tp->data_type, .rank = (int)tp->n_dims };
    for (size_t i = 0; i < tp->n_dims; i++)
        t.dims[i] = tp->dims[i];
    uint64_t n, b;
    if (!oac_tensor_numel_rt(&t, &n) || !oac_elem_bytes(t.elem_type, n, &b) || b > SIZE_MAX)
        return oac_err(ctx, OAC_EUNSUPPORTED, "initializer '%s': no fixed-size data", name);
    t.bytes = (size_t)b;
    t.data = t.bytes ? oac_ralloc_bound(a, t.bytes) : NULL;
    if (t.bytes && !t.data)
        return oac_ralloc_failed(a);   /* the reader names it (run/interp.c) */
    v->kind = OAC_RTV_TENSOR;
    v->storage = OAC_STORE_CONST;
    v->writable = false;
    v->t = t;
    return oac_tensor_read(ctx, model, tp, t.data, t.bytes);
}

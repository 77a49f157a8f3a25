/* kernels.c: what every kernel shares (contract sections 2 and 5).
 *
 * Owns the runtime's lookup of a kernel (a read of the operator's row,
 * ops.def), attribute accessors, and the page-table helpers of paged
 * caches.  A node whose row has no kernel is unsupported-operator: the
 * runtime refuses it before running anything, it never skips it.
 *
 * Invariants:
 *  1. The kernels are the .kernel column of ops.def, built at compile
 *     time: no registration, no global mutable state.
 *  2. The ONNX domain is oac_domain_is_onnx's (ops.c); any other domain
 *     matches only itself.
 */
#include <string.h>

#include "ops.h"
#include "runtime.h"

oac_kernel_fn oac_kernel_lookup(const char *domain, const char *op_type)
{
    const oac_op *op = oac_op_find(domain, op_type);
    return op ? op->kernel : NULL;
}

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

const Onnx__AttributeProto *oac_node_attr(const Onnx__NodeProto *n,
                                          const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, name))
            return n->attribute[i];
    return NULL;
}

int64_t oac_attr_int(const Onnx__NodeProto *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = oac_node_attr(n, name);
    return a && (a->has_i || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
           ? a->i : def;
}

float oac_attr_float(const Onnx__NodeProto *n, const char *name, float def)
{
    const Onnx__AttributeProto *a = oac_node_attr(n, name);
    return a && (a->has_f || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
           ? a->f : def;
}

const char *oac_attr_string(const Onnx__NodeProto *n, const char *name,
                            const char *def, char *buf, size_t len)
{
    const Onnx__AttributeProto *a = oac_node_attr(n, name);
    if (!a || !a->has_s || !len)
        return def;
    size_t m = a->s.len < len - 1 ? a->s.len : len - 1;
    if (m)
        memcpy(buf, a->s.data, m);
    buf[m] = '\0';
    return buf;
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

/* kernels.c: the kernel table (contract sections 2 and 5).
 *
 * Owns the one table of kernels (built from kernels.def) and its lookup
 * by (domain, op_type).  A node without a row is unsupported-operator:
 * the runtime refuses it before running anything, it never skips it.
 *
 * Invariants:
 *  1. The table is const and built at compile time: no registration, no
 *     global mutable state.
 *  2. The ONNX domain is "" or "ai.onnx"; any other domain matches only
 *     itself.
 */
#include <string.h>

#include "runtime.h"

static const struct {
    const char *domain;
    const char *op_type;
    oac_kernel_fn fn;
} table[] = {
#define OAC_KERNEL(domain, op, fn) { domain, op, fn },
#include "kernels.def"
#undef OAC_KERNEL
};

static const char *norm_domain(const char *d)
{
    return !d || !strcmp(d, "ai.onnx") ? "" : d;
}

oac_kernel_fn oac_kernel_lookup(const char *domain, const char *op_type)
{
    if (!op_type)
        return NULL;
    domain = norm_domain(domain);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].domain, domain) &&
            !strcmp(table[i].op_type, op_type))
            return table[i].fn;
    return NULL;
}

/* kernels/lookup.c: the runtime's lookup of a kernel by name (contract sections
 * 2 and 5).
 *
 * Owns oac_kernel_lookup, a read of the operator's row (ops.def's .kernel
 * column) for callers that hold only a name (benchmarks, tests); the
 * runtime reads the row the graph index resolved for each node.  A node
 * whose row has no kernel is unsupported-operator: the runtime refuses
 * it before running anything, it never skips it.
 *
 * Invariants:
 *  1. The kernels are the .kernel column of ops.def, built at compile
 *     time: no registration, no global mutable state.
 *  2. The ONNX domain is oac_domain_is_onnx's (ops.c); any other domain
 *     matches only itself.
 */
#include "ops.h"
#include "run/kernel_api.h"

oac_kernel_fn oac_kernel_lookup(const char *domain, const char *op_type)
{
    const oac_op *op = oac_op_find(domain, op_type);
    return op ? op->kernel : NULL;
}

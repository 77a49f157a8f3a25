/* kernels/paged.h: the PagedCacheUpdate kernel's core, apart from the
 * runtime's kernel-call plumbing (contract section 2), so that tests can
 * drive it with their own allocator and page table.
 *
 * oac_kernel_paged_cache_update (op_fns.h, ops.def) gathers the
 * node's inputs, makes the out-of-place copy when the node lacks
 * output_alias, and calls oac_paged_update; this header states what that
 * core does.  Include after run/kernel_api.h's types are needed (it includes it).
 */
#ifndef OAC_KERNEL_PAGED_H
#define OAC_KERNEL_PAGED_H

#include "run/kernel_api.h"

typedef struct oac_paged_call {
    oac_ctx *ctx;
    oac_ralloc *alloc;               /* counts pages and workspace */
    const Onnx__ModelProto *model;   /* ModelProto.quantizations */
    oac_paged *cache;                /* updated in place */
    int64_t page_id;
    int64_t position;
    const oac_tensor *values;        /* E[2, heads, new_length, head_size] */
    int64_t quantized_type;          /* the attribute, or -1 when absent */
    const char *cache_name;          /* input 0's name, for messages (or NULL) */
    /* Counted workspace that lives until the node ends (the runtime frees
     * it); called only for a format change. */
    int (*workspace)(void *arg, size_t bytes, void **out);
    void *workspace_arg;
    /* Set when oac_paged_update returns OAC_ERUNTIME: the run-time
     * finding (capacity-overflow, page-type-invalid, operand-invalid). */
    oac_code code;
    char msg[512];
} oac_paged_call;

/* Write values into page page_id at position along axis -2.
 *  - page_id == n_pages creates one page (type: the attribute, else the
 *    previous page's, else the first allowed; contents: the code of 0.0),
 *    allocating exactly its bytes; the page table may grow (context
 *    allocator, uncounted) but no page payload moves.
 *  - an existing page in the requested type is written in place:
 *    nothing is allocated.
 *  - a different requested type decodes the page into workspace (E
 *    elements), writes the values there and re-encodes: in place when the
 *    byte size is the same, else into a new page allocated before the old
 *    one is freed.
 * Nothing is changed when a finding is reported (OAC_ERUNTIME, c->code and
 * c->msg set) or an allocation fails (OAC_ENOMEM). */
int oac_paged_update(oac_paged_call *c);

#endif /* OAC_KERNEL_PAGED_H */

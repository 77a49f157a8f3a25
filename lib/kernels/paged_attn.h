/* kernels/paged_attn.h: the PagedCacheAttention kernel's core (contract
 * section 11), apart from the runtime's kernel-call plumbing, so tests can
 * drive it with their own page tables (a Map cache's keys among them).
 *
 * oac_kernel_paged_cache_attention (op_fns.h, ops.def) gathers the node's
 * inputs and attributes and calls oac_pattn_run; the plan
 * (check/plan.c) counts oac_pattn_workspace_bytes for the node.
 */
#ifndef OAC_KERNEL_PAGED_ATTN_H
#define OAC_KERNEL_PAGED_ATTN_H

#include "run/kernel_api.h"

typedef struct oac_pattn_call {
    oac_ctx *ctx;
    const Onnx__ModelProto *model;   /* ModelProto.quantizations */
    const oac_paged *cache;          /* read only */
    /* keys[i] the page_id of cache->pages[i] (a Map); NULL: the pages'
     * own keys when cache->map, else page i is page_id i. */
    const int64_t *keys;
    const char *cache_name;          /* for messages */
    const oac_tensor *query;         /* T[num_heads, q_len, head_size] */
    int64_t length;                  /* valid positions, >= q_len */
    int64_t num_heads, kv_num_heads; /* kv_num_heads 0: num_heads */
    bool has_scale;
    float scale;                     /* default 1 / sqrt(head_size) */
    oac_tensor *out;                 /* T[num_heads, q_len, head_size] */
    /* Workspace of oac_pattn_workspace_bytes (cache, T) bytes. */
    void *ws;
    size_t ws_bytes;
    /* Set when oac_pattn_run returns OAC_ERUNTIME: the finding
     * (operand-invalid, kernel-error, page-type-invalid) and its text. */
    oac_code code;
    char msg[512];
} oac_pattn_call;

/* Workspace the kernel uses for pages [2, kv_heads, page_size, head_size]
 * decoding to elem_type: the keys and values of one kv head of one page
 * (2 * page_size * head_size elements of elem_type: at most one decoded
 * page), one row of scores (page_size floats) and one accumulator row
 * (head_size floats).  False on overflow or a type it does not decode to. */
bool oac_pattn_workspace_bytes(int32_t elem_type, const int64_t page_dims[4],
                               uint64_t *out);

/* Attend: validate everything first (operands, every page the rows read
 * present and of a valid declaration), then write out.  Reads each page
 * through its own quantized_type; never writes the cache. */
int oac_pattn_run(oac_pattn_call *c);

#endif /* OAC_KERNEL_PAGED_ATTN_H */

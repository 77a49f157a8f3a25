/* op_fns.h: every function the operator table (ops.def) names.
 *
 * Owns nothing but declarations: the shape inference rules (check/infer.c),
 * the known-value folding rules (check/consts.c), the capacity rules
 * (check/capacity.c) and the runtime's kernels (kernel_*.c), so ops.c can build the table and each defining file sees
 * its own prototypes.  Contract: as ops.def.
 * Invariants: a function named by a row is declared here (the build
 * fails otherwise); the structs are forward declarations only, so this
 * header (like ops.h) pulls in neither check/shapes.h nor run/kernel_api.h.
 */
#ifndef OAC_OP_FNS_H
#define OAC_OP_FNS_H

struct oac_infer;
struct oac_cap;
struct oac_kernel_call;

/* ---- shape inference (check/infer.c) ---- */
int oac_infer_same(struct oac_infer *c);       /* output 0 = input 0's type */
int oac_infer_cast(struct oac_infer *c);
int oac_infer_bcast(struct oac_infer *c);      /* numpy broadcasting */
int oac_infer_compare(struct oac_infer *c);    /* broadcasting, BOOL */
int oac_infer_where(struct oac_infer *c);      /* broadcasting, input 1's type */
int oac_infer_matmul(struct oac_infer *c);
int oac_infer_transpose(struct oac_infer *c);
int oac_infer_reshape(struct oac_infer *c);
int oac_infer_slice(struct oac_infer *c);
int oac_infer_concat(struct oac_infer *c);
int oac_infer_gather(struct oac_infer *c);
int oac_infer_shape(struct oac_infer *c);
int oac_infer_size(struct oac_infer *c);
int oac_infer_constant(struct oac_infer *c);
int oac_infer_unsqueeze(struct oac_infer *c);
int oac_infer_squeeze(struct oac_infer *c);
int oac_infer_split(struct oac_infer *c);      /* types every output */
int oac_infer_range(struct oac_infer *c);
int oac_infer_expand(struct oac_infer *c);
int oac_infer_tile(struct oac_infer *c);
int oac_infer_constant_of_shape(struct oac_infer *c);
int oac_infer_pad(struct oac_infer *c);
int oac_infer_reduce13(struct oac_infer *c);   /* axes an input from opset 13 */
int oac_infer_reduce18(struct oac_infer *c);   /* ... from opset 18 */
int oac_infer_gemm(struct oac_infer *c);
/* attention and normalizations: every output typed */
int oac_infer_group_query_attention(struct oac_infer *c);
int oac_infer_multi_head_attention(struct oac_infer *c);
int oac_infer_attention(struct oac_infer *c);
int oac_infer_ms_attention(struct oac_infer *c);
int oac_infer_paged_attention(struct oac_infer *c);
int oac_infer_sparse_attention(struct oac_infer *c);
int oac_infer_decoder_masked_mha(struct oac_infer *c);
int oac_infer_embed_layer_normalization(struct oac_infer *c);
int oac_infer_layer_normalization(struct oac_infer *c);
int oac_infer_rms_normalization(struct oac_infer *c);   /* and Simplified */
int oac_infer_skip_layer_normalization(struct oac_infer *c);

/* ---- known-value folding (check/consts.c) ---- */
int oac_fold_constant(struct oac_infer *c);
int oac_fold_relabel(struct oac_infer *c);     /* same elements, new shape */
int oac_fold_cast(struct oac_infer *c);
int oac_fold_neg(struct oac_infer *c);
int oac_fold_add(struct oac_infer *c);
int oac_fold_sub(struct oac_infer *c);
int oac_fold_mul(struct oac_infer *c);
int oac_fold_min(struct oac_infer *c);
int oac_fold_max(struct oac_infer *c);
int oac_fold_shape(struct oac_infer *c);
int oac_fold_size(struct oac_infer *c);

/* ---- capacity rules (check/capacity.c) ---- */
int oac_capacity_cache_update(struct oac_cap *c);
int oac_capacity_tensor_scatter(struct oac_cap *c);   /* linear / circular */
int oac_capacity_paged(struct oac_cap *c);            /* page_size, page_id */
int oac_capacity_paged_attention(struct oac_cap *c);  /* length vs pages */
int oac_capacity_length(struct oac_cap *c);           /* section 6 .length */
int oac_capacity_scatter_nd(struct oac_cap *c);       /* indices in data */
int oac_capacity_scatter_elements(struct oac_cap *c);

/* ---- kernels ---- */
/* kernels/cache.c (contract 2) */
int oac_kernel_cache_update(struct oac_kernel_call *k);
int oac_kernel_tensor_scatter(struct oac_kernel_call *k);
/* kernels/paged.c (paged, quantized cache; codecs in quant/quant.h) */
int oac_kernel_paged_cache_update(struct oac_kernel_call *k);
/* kernels/paged_attn.c (contract 11: attention reading the pages) */
int oac_kernel_paged_cache_attention(struct oac_kernel_call *k);
/* kernels/math.c (element-wise) */
int oac_kernel_identity(struct oac_kernel_call *k);
int oac_kernel_add(struct oac_kernel_call *k);
int oac_kernel_sub(struct oac_kernel_call *k);
int oac_kernel_mul(struct oac_kernel_call *k);
int oac_kernel_div(struct oac_kernel_call *k);
int oac_kernel_pow(struct oac_kernel_call *k);
int oac_kernel_neg(struct oac_kernel_call *k);
int oac_kernel_abs(struct oac_kernel_call *k);
int oac_kernel_relu(struct oac_kernel_call *k);
int oac_kernel_sqrt(struct oac_kernel_call *k);
int oac_kernel_exp(struct oac_kernel_call *k);
int oac_kernel_log(struct oac_kernel_call *k);
int oac_kernel_max(struct oac_kernel_call *k);
int oac_kernel_min(struct oac_kernel_call *k);
int oac_kernel_sigmoid(struct oac_kernel_call *k);
int oac_kernel_tanh(struct oac_kernel_call *k);
int oac_kernel_erf(struct oac_kernel_call *k);
int oac_kernel_reciprocal(struct oac_kernel_call *k);
int oac_kernel_gelu(struct oac_kernel_call *k);
int oac_kernel_fast_gelu(struct oac_kernel_call *k);
int oac_kernel_equal(struct oac_kernel_call *k);
int oac_kernel_less(struct oac_kernel_call *k);
int oac_kernel_less_or_equal(struct oac_kernel_call *k);
int oac_kernel_greater(struct oac_kernel_call *k);
int oac_kernel_greater_or_equal(struct oac_kernel_call *k);
int oac_kernel_and(struct oac_kernel_call *k);
int oac_kernel_or(struct oac_kernel_call *k);
int oac_kernel_not(struct oac_kernel_call *k);
int oac_kernel_where(struct oac_kernel_call *k);
int oac_kernel_cast(struct oac_kernel_call *k);
/* kernels/linalg.c (products, softmax, reductions) */
int oac_kernel_matmul(struct oac_kernel_call *k);
int oac_kernel_gemm(struct oac_kernel_call *k);
int oac_kernel_softmax(struct oac_kernel_call *k);
int oac_kernel_reduce_sum(struct oac_kernel_call *k);
int oac_kernel_reduce_mean(struct oac_kernel_call *k);
int oac_kernel_reduce_max(struct oac_kernel_call *k);
/* kernels/shape.c (data movement) */
int oac_kernel_reshape(struct oac_kernel_call *k);
int oac_kernel_transpose(struct oac_kernel_call *k);
int oac_kernel_slice(struct oac_kernel_call *k);
int oac_kernel_concat(struct oac_kernel_call *k);
int oac_kernel_gather(struct oac_kernel_call *k);
int oac_kernel_shape(struct oac_kernel_call *k);
int oac_kernel_size(struct oac_kernel_call *k);
int oac_kernel_constant(struct oac_kernel_call *k);
int oac_kernel_unsqueeze(struct oac_kernel_call *k);
int oac_kernel_squeeze(struct oac_kernel_call *k);
int oac_kernel_split(struct oac_kernel_call *k);
int oac_kernel_expand(struct oac_kernel_call *k);
int oac_kernel_tile(struct oac_kernel_call *k);
int oac_kernel_pad(struct oac_kernel_call *k);
/* kernels/fill.c (values from a few numbers) */
int oac_kernel_range(struct oac_kernel_call *k);
int oac_kernel_constant_of_shape(struct oac_kernel_call *k);
int oac_kernel_trilu(struct oac_kernel_call *k);
/* kernels/scatter.c */
int oac_kernel_scatter_nd(struct oac_kernel_call *k);
int oac_kernel_scatter_elements(struct oac_kernel_call *k);
/* kernels/attn.c: attention with its KV-cache semantics */
int oac_kernel_group_query_attention(struct oac_kernel_call *k);
int oac_kernel_ms_attention(struct oac_kernel_call *k);
int oac_kernel_paged_attention(struct oac_kernel_call *k);
int oac_kernel_sparse_attention(struct oac_kernel_call *k);
int oac_kernel_decoder_masked_mha(struct oac_kernel_call *k);
int oac_kernel_embed_layer_normalization(struct oac_kernel_call *k);
int oac_kernel_multi_head_attention(struct oac_kernel_call *k);
int oac_kernel_attention(struct oac_kernel_call *k);
/* kernels/rope.c: rotary embeddings (ONNX, com.microsoft) */
int oac_kernel_rotary_embedding(struct oac_kernel_call *k);
int oac_kernel_ms_rotary_embedding(struct oac_kernel_call *k);
/* kernels/norm.c: normalizations */
int oac_kernel_layer_normalization(struct oac_kernel_call *k);
int oac_kernel_rms_normalization(struct oac_kernel_call *k);
int oac_kernel_simplified_layer_normalization(struct oac_kernel_call *k);
int oac_kernel_skip_layer_normalization(struct oac_kernel_call *k);
int oac_kernel_skip_simplified_layer_normalization(struct oac_kernel_call *k);
/* run/control.c: bodies run in frames with the main graph's memory
 * rule.  Calls of local functions are no row: a node whose (domain,
 * op_type) has no row with a kernel but names a ModelProto.functions
 * entry runs oac_kernel_call_function (run/kernel_api.h). */
int oac_kernel_if(struct oac_kernel_call *k);
int oac_kernel_loop(struct oac_kernel_call *k);

#endif /* OAC_OP_FNS_H */

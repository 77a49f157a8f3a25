/* kernels/attn.h: what the attention and rotary kernels share
 * (kernels/attn.c, kernels/rope.c).
 *
 * Owns the head-size bound of the streaming kernels and the rotation of
 * one row.  Contract: sections 5 and 8 (the runtime's kernels).
 * Invariants: the rotation reads rot / 2 cosines and sines at element
 * `at` of the caches (the caller checked that they exist) and writes
 * only x[0 .. rot); nothing here allocates.
 */
#ifndef OAC_KERNEL_ATTN_H
#define OAC_KERNEL_ATTN_H

#include "kernels/elem_io.h"

/* Largest head size (and rotary dimension) the kernels accept: rows live
 * in stack buffers of this many doubles (no counted workspace).  Larger
 * heads are unsupported-operator naming the limit. */
#define OAC_ATTN_MAX_HEAD 1024

/* Rotate x[0 .. rot) in place by the cosines and sines cos[at ..
 * at + rot/2), sin[...]: pairs (i, i + rot/2), or (2i, 2i + 1) when
 * interleaved, as ONNX RotaryEmbedding and ONNX Runtime do. */
void oac_attn_rope_row(double *x, int64_t rot, const oac_tensor *cos,
                       const oac_tensor *sin, uint64_t at, bool interleaved);

#endif /* OAC_KERNEL_ATTN_H */

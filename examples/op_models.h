/* op_models.h: one small model per form of every operator of contract
 * section 10 (the attention operators, EmbedLayerNormalization, Log, Max,
 * Min), for the side-by-side comparison with ONNX Runtime
 * (tests/ort_diff.sh: examples/gen_op_models writes them to op-models/
 * in the build tree) and for the kernel tests (tests/check_kernel_ops.c).
 *
 * Each model is a one-step decoder the generation loop drives (contract
 * section 8): its decoder inputs carry the documented names, its caches
 * are either stock pasts paired with growing presents by name, or
 * READ_WRITE buffers of capacity OAC_OPM_CAP that the present aliases.
 * Sizes: batch 1, 2 query heads, head size 4 (hidden 8), 1 or 2 kv heads.
 */
#ifndef OAC_EXAMPLES_OP_MODELS_H
#define OAC_EXAMPLES_OP_MODELS_H

#include "oac_build.h"

#define OAC_OPM_CAP 8           /* shared buffers' capacity (positions) */

typedef struct oac_op_model {
    const char *name;           /* file name without ".onnx" */
    void (*build)(oac_mb *mb, int32_t elem);
    int32_t elem;               /* FLOAT or FLOAT16 */
} oac_op_model;

extern const oac_op_model oac_op_models[];
extern const size_t oac_op_models_count;

/* The row of that name, or NULL. */
const oac_op_model *oac_op_model_find(const char *name);

/* PagedAttention decoder look-alike: `layers` layers over pools of
 * `blocks` blocks of `block_size` positions, a block table of `width`
 * entries mapping position block i to block i (entries past the pool
 * name block `blocks`, outside it). */
void oac_op_model_paged(oac_mb *mb, int32_t elem, int layers, int blocks, int block_size,
                        int width);

#endif /* OAC_EXAMPLES_OP_MODELS_H */

/* check/shapes.h: the interface of the shapes pass's rules: what one
 * inference or folding rule sees (oac_infer), and known values from
 * tensors.
 *
 * Owns: struct oac_infer, the argument of every .infer and .fold rule
 * of ops.def (check/infer.c, check/consts.c; declared in op_fns.h), and
 * oac_known_from_tensor (check/consts.c).  The store they fill is
 * check/shapes_store.h's.  Contract: section 3 ("A value is known
 * when"; the rules' output facts).
 *
 * Invariants: a rule writes only its node's output facts (out,
 * out_known) and the store's arena, interns the dims it keeps (the
 * pass interns scratch), and fails only with OAC_ENOMEM.
 */
#ifndef OAC_SHAPES_H
#define OAC_SHAPES_H

#include "check/shapes_store.h"

/* What one inference or folding rule sees: the node, its input facts and
 * the output facts it fills (kind UNKNOWN on entry). */
typedef struct oac_infer {
    oac_shapes *sh;
    const struct oac_scope *scope;
    long node;
    const Onnx__NodeProto *proto;
    int64_t opset;                  /* of the ONNX domain in force */
    size_t n_in;
    const oac_vshape **in;          /* NULL for an omitted/unknown input */
    const oac_known **in_known;     /* NULL when not known */
    size_t n_out;
    oac_vshape *out;                /* n_out entries */
    oac_known **out_known;          /* n_out entries, NULL on entry */
    /* Where a rule builds output 0's dims; the pass interns them after
     * the rules ran.  A rule types other outputs with dims it interns
     * itself (oac_shapes_intern) or an input's array. */
    oac_dimref scratch[OAC_SHAPE_MAX_RANK];
} oac_infer;

/* The rules themselves are columns of the operator's row (ops.def:
 * .infer, then .fold), declared in op_fns.h; a rule fails only with
 * OAC_ENOMEM. */
/* A known value from a TensorProto (initializer, Constant value, --input
 * file): NULL (not an error) when not a small integer tensor.  A
 * malformed payload is not an error either: the value stays unknown.
 * An EXTERNAL one is read as the run reads it (oac_external_read,
 * relative to model's folder) when model is not NULL; unknown when it
 * cannot be. */
int oac_known_from_tensor(oac_shapes *sh, const oac_model *model,
                          const Onnx__TensorProto *t, oac_known **out);

#endif /* OAC_SHAPES_H */

/* oac_build.h: a small builder for ONNX models with the contract's fields.
 *
 * Tests, examples and benchmarks build their models with it instead of
 * shipping binary files.  Everything a builder creates lives in the
 * builder's arena and is released by oac_mb_free; the returned proto
 * pointers are borrowed and may be edited directly to set any field the
 * helpers below do not cover.
 *
 * Errors are sticky: a failed allocation makes the builder return NULL
 * from then on, and oac_mb_pack / oac_mb_write report OAC_ENOMEM with the
 * message on the context.  Builder calls never print or exit.  A tensor
 * dims string with a symbol or "?" (tensors need numbers) fails the same
 * sticky way with OAC_EINVAL.  Builder calls accept NULL builders, graphs,
 * nodes and values and then do nothing (return NULL).
 *
 * String conventions:
 *  - name lists ("a,b,,c") are comma-separated; an empty entry is an
 *    omitted optional port.  NULL or "" is an empty list.
 *  - dims ("2,batch,heads,16,8") give dim_value for numbers, dim_param
 *    for names and an unknown dimension for "?"; "" is a scalar shape
 *    (rank 0) and NULL means no shape at all.
 */
#ifndef OAC_BUILD_H
#define OAC_BUILD_H

#include <stdint.h>

#include "oac.h"
#include "oac_int.h"   /* OAC_T_* element type numbers */
#include "onnx.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The OAC_T_* element type numbers are oac_int.h's. */

typedef struct oac_mb oac_mb;   /* a model under construction */
typedef struct oac_gb oac_gb;   /* one graph or function body in it */

/* A model with ir_version 10 importing "" (opset 21) and "onnx_alias"
 * (version 1), and an empty main graph named "main". */
oac_mb *oac_mb_new(oac_ctx *ctx);
void oac_mb_free(oac_mb *mb);

Onnx__ModelProto *oac_mb_proto(oac_mb *mb);
void oac_mb_ir_version(oac_mb *mb, int64_t ir_version);
/* Add or replace an opset import; version < 0 removes the domain. */
void oac_mb_opset(oac_mb *mb, const char *domain, int64_t version);
void oac_mb_metadata(oac_mb *mb, const char *key, const char *value);

/* The main graph. */
oac_gb *oac_mb_graph(oac_mb *mb);
/* A local function (domain, name) with its inputs and outputs; returns
 * its body, where nodes and value_info (for alias_of) are added.  The body
 * starts with the model's opset imports.  On a body, oac_gb_input/output
 * add the name to the function's inputs/outputs when new and the typed
 * value to its value_info (returned, for alias_of); oac_gb_init_* add a
 * Constant node, as functions have no initializers. */
oac_gb *oac_mb_function(oac_mb *mb, const char *domain, const char *name,
                        const char *inputs, const char *outputs);

/* Declarations in ModelProto.quantizations; each returns its index. */
int oac_mb_quant_linear(oac_mb *mb, const char *name, int32_t data_type,
                        int32_t storage_type, int bits, int symmetric,
                        float scale, int64_t zero_point);
int oac_mb_quant_fp8(oac_mb *mb, const char *name, int32_t data_type);
/* Any floating-point format (sign/exponent/mantissa bits, bias, specials);
 * IEEE half is 1, 5, 10, 15, 1, 1. */
int oac_mb_quant_float(oac_mb *mb, const char *name, int32_t data_type,
                       int sign_bits, int exponent_bits, int mantissa_bits,
                       int exponent_bias, int has_inf, int has_nan);
/* The declaration at an index, to edit it. */
Onnx__QuantizationProto *oac_mb_quant(oac_mb *mb, int index);

/* ---- graphs ---- */

Onnx__GraphProto *oac_gb_proto(oac_gb *g);
/* For a function body, the FunctionProto (NULL for graphs). */
Onnx__FunctionProto *oac_gb_function(oac_gb *g);

Onnx__ValueInfoProto *oac_gb_input(oac_gb *g, const char *name,
                                   int32_t elem_type, const char *dims);
Onnx__ValueInfoProto *oac_gb_output(oac_gb *g, const char *name,
                                    int32_t elem_type, const char *dims);
Onnx__ValueInfoProto *oac_gb_value_info(oac_gb *g, const char *name,
                                        int32_t elem_type, const char *dims);
/* A paged-cache input: Sequence<QuantizedTensor{elem_type, dims}> with the
 * allowed quantized types (n_allowed 0: any). */
Onnx__ValueInfoProto *oac_gb_input_paged(oac_gb *g, const char *name,
                                         int32_t elem_type, const char *dims,
                                         const int32_t *allowed,
                                         size_t n_allowed);
/* Same type for an output. */
Onnx__ValueInfoProto *oac_gb_output_paged(oac_gb *g, const char *name,
                                          int32_t elem_type, const char *dims,
                                          const int32_t *allowed,
                                          size_t n_allowed);

/* Contract fields and metadata on a value. */
void oac_vi_access(oac_gb *g, Onnx__ValueInfoProto *vi, int access);
void oac_vi_alias_of(oac_gb *g, Onnx__ValueInfoProto *vi, const char *name);
/* The value's type T becomes Optional<T>. */
void oac_vi_optional(oac_gb *g, Onnx__ValueInfoProto *vi);
void oac_vi_meta(oac_gb *g, Onnx__ValueInfoProto *vi, const char *key,
                 const char *value);

/* A node; domain NULL or "" is the ONNX domain; name may be NULL. */
Onnx__NodeProto *oac_gb_node(oac_gb *g, const char *op_type,
                             const char *domain, const char *name,
                             const char *inputs, const char *outputs);
/* output_alias {out, in, kind}; kind 1 is MUST_ALIAS, -1 leaves it absent. */
Onnx__ValueAliasProto *oac_node_alias(oac_gb *g, Onnx__NodeProto *n,
                                      int out, int in, int kind);
void oac_node_meta(oac_gb *g, Onnx__NodeProto *n, const char *key,
                   const char *value);
Onnx__AttributeProto *oac_node_attr_int(oac_gb *g, Onnx__NodeProto *n,
                                        const char *name, int64_t v);
Onnx__AttributeProto *oac_node_attr_float(oac_gb *g, Onnx__NodeProto *n,
                                          const char *name, float v);
Onnx__AttributeProto *oac_node_attr_string(oac_gb *g, Onnx__NodeProto *n,
                                           const char *name, const char *v);
Onnx__AttributeProto *oac_node_attr_ints(oac_gb *g, Onnx__NodeProto *n,
                                         const char *name, const int64_t *v,
                                         size_t count);
Onnx__AttributeProto *oac_node_attr_tensor(oac_gb *g, Onnx__NodeProto *n,
                                           const char *name,
                                           Onnx__TensorProto *t);
/* A new graph as attribute name (If branches, Loop/Scan bodies). */
oac_gb *oac_node_attr_graph(oac_gb *g, Onnx__NodeProto *n, const char *name,
                            const char *graph_name);

/* Tensors: standalone (for attributes) or as initializers of g. */
Onnx__TensorProto *oac_gb_tensor_raw(oac_gb *g, const char *name,
                                     int32_t elem_type, const char *dims,
                                     const void *raw, size_t len);
Onnx__TensorProto *oac_gb_init_raw(oac_gb *g, const char *name,
                                   int32_t elem_type, const char *dims,
                                   const void *raw, size_t len);
Onnx__TensorProto *oac_gb_init_i64(oac_gb *g, const char *name,
                                   const char *dims, const int64_t *v,
                                   size_t count);
Onnx__TensorProto *oac_gb_init_f32(oac_gb *g, const char *name,
                                   const char *dims, const float *v,
                                   size_t count);
/* name = Constant(value = INT64 tensor of dims). */
Onnx__NodeProto *oac_gb_constant_i64(oac_gb *g, const char *name,
                                     const char *dims, const int64_t *v,
                                     size_t count);

/* Additions for hand edits of the borrowed protos: memory that lives
 * in the builder's arena (zeroed; NULL after a failure), the builder's
 * context and first failure (OAC_OK while none), and a graph's model. */
void *oac_mb_alloc(oac_mb *mb, size_t n);
char *oac_mb_strdup(oac_mb *mb, const char *s);
oac_ctx *oac_mb_ctx(oac_mb *mb);
int oac_mb_status(oac_mb *mb);
oac_mb *oac_gb_model(oac_gb *g);

/* Serialize.  oac_mb_pack returns a malloc'ed buffer (free() it). */
int oac_mb_pack(oac_mb *mb, uint8_t **out, size_t *out_len);
int oac_mb_write(oac_mb *mb, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* OAC_BUILD_H */

/* check_builder.c: the model builder (lib/builder.c, lib/oac_build.h).
 *
 * Every test packs what it built and unpacks it with protobuf-c, so what
 * is asserted is the wire format of contract section 1, not the builder's
 * in-memory structs.
 */
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Pack mb and unpack it again; the caller frees with unpack_free. */
static Onnx__ModelProto *roundtrip(oac_mb *mb)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_mb_pack(mb, &buf, &len), OAC_OK);
    ck_assert_uint_gt(len, 0);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    ck_assert_ptr_nonnull(m);
    return m;
}

static void unpack_free(Onnx__ModelProto *m)
{
    onnx__model_proto__free_unpacked(m, NULL);
}

static int64_t opset_version(const Onnx__ModelProto *m, const char *domain)
{
    for (size_t i = 0; i < m->n_opset_import; i++)
        if (strcmp(m->opset_import[i]->domain ? m->opset_import[i]->domain : "", domain) == 0)
            return m->opset_import[i]->version;
    return -1;
}

static const Onnx__TensorShapeProto *shape_of(const Onnx__ValueInfoProto *vi)
{
    ck_assert_int_eq(vi->type->value_case, ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE);
    return vi->type->tensor_type->shape;
}

START_TEST(test_defaults_and_opsets)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    ck_assert_ptr_nonnull(mb);
    oac_mb_opset(mb, "", 17);             /* replace */
    oac_mb_opset(mb, "local", 1);         /* add */
    oac_mb_opset(mb, "onnx_alias", -1);   /* remove */
    oac_mb_opset(mb, "never", -1);        /* removing the absent: no-op */
    oac_mb_ir_version(mb, 8);
    oac_mb_metadata(mb, "k", "v");
    Onnx__ModelProto *m = roundtrip(mb);
    ck_assert(m->has_ir_version);
    ck_assert_int_eq(m->ir_version, 8);
    ck_assert_uint_eq(m->n_opset_import, 2);
    ck_assert_int_eq(opset_version(m, ""), 17);
    ck_assert_int_eq(opset_version(m, "local"), 1);
    ck_assert_int_eq(opset_version(m, "onnx_alias"), -1);
    ck_assert_str_eq(m->graph->name, "main");
    ck_assert_uint_eq(m->n_metadata_props, 1);
    ck_assert_str_eq(m->metadata_props[0]->value, "v");
    unpack_free(m);

    /* A fresh builder has ir_version 10 and imports "" 21, onnx_alias 1. */
    oac_mb *mb2 = oac_mb_new(ctx);
    m = roundtrip(mb2);
    ck_assert_int_eq(m->ir_version, 10);
    ck_assert_int_eq(opset_version(m, ""), 21);
    ck_assert_int_eq(opset_version(m, "onnx_alias"), 1);
    unpack_free(m);
    oac_mb_free(mb2);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_cache_update_fields)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    oac_gb *g = oac_mb_graph(mb);
    Onnx__ValueInfoProto *cache = oac_gb_input(g, "cache", OAC_T_FLOAT16,
                                               "2,batch,heads,max_length,head_size");
    oac_vi_access(g, cache, 1);
    oac_gb_input(g, "values", OAC_T_FLOAT16, "2,?,4,-1,8");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    oac_gb_input(g, "noshape", OAC_T_FLOAT, NULL);
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "upd",
                                     "cache,values,position", "updated_cache");
    oac_node_attr_int(g, n, "axis", -2);
    oac_node_alias(g, n, 0, 0, 1);
    oac_node_alias(g, n, 3, -1, -1);      /* kind left absent */
    oac_node_alias(g, n, 0, 1, 7);        /* an unknown kind survives */
    Onnx__ValueInfoProto *out = oac_gb_output(g, "updated_cache", OAC_T_FLOAT16,
                                              "2,batch,heads,max_length,head_size");
    oac_vi_alias_of(g, out, "cache");
    oac_vi_meta(g, out, "alias_of", "cache");
    oac_node_meta(g, n, "output_alias", "0:0");

    Onnx__ModelProto *m = roundtrip(mb);
    const Onnx__GraphProto *gp = m->graph;
    ck_assert_uint_eq(gp->n_input, 4);
    ck_assert(gp->input[0]->has_access);
    ck_assert_int_eq(gp->input[0]->access, ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE);
    ck_assert(!gp->input[1]->has_access);
    ck_assert_ptr_null(gp->input[0]->alias_of);

    const Onnx__TensorShapeProto *s = shape_of(gp->input[0]);
    ck_assert_uint_eq(s->n_dim, 5);
    ck_assert_int_eq(s->dim[0]->value_case, ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE);
    ck_assert_int_eq(s->dim[0]->dim_value, 2);
    ck_assert_int_eq(s->dim[1]->value_case, ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM);
    ck_assert_str_eq(s->dim[1]->dim_param, "batch");
    ck_assert_str_eq(s->dim[4]->dim_param, "head_size");
    ck_assert_int_eq(gp->input[0]->type->tensor_type->elem_type, OAC_T_FLOAT16);

    s = shape_of(gp->input[1]);
    ck_assert_int_eq(s->dim[1]->value_case, ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET);
    ck_assert_int_eq(s->dim[3]->dim_value, -1);
    /* "" is a scalar: a shape with no dims, distinct from no shape. */
    ck_assert_ptr_nonnull(shape_of(gp->input[2]));
    ck_assert_uint_eq(shape_of(gp->input[2])->n_dim, 0);
    ck_assert_ptr_null(shape_of(gp->input[3]));

    ck_assert_uint_eq(gp->n_node, 1);
    const Onnx__NodeProto *np = gp->node[0];
    ck_assert_str_eq(np->op_type, "CacheUpdate");
    ck_assert_str_eq(np->domain, "onnx_alias");
    ck_assert_str_eq(np->name, "upd");
    ck_assert_uint_eq(np->n_input, 3);
    ck_assert_str_eq(np->input[2], "position");
    ck_assert_uint_eq(np->n_attribute, 1);
    ck_assert_int_eq(np->attribute[0]->type, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    ck_assert_int_eq(np->attribute[0]->i, -2);
    ck_assert_uint_eq(np->n_output_alias, 3);
    ck_assert(np->output_alias[0]->has_output_index && np->output_alias[0]->has_input_index);
    ck_assert(np->output_alias[0]->has_kind);
    ck_assert_int_eq(np->output_alias[0]->kind, ONNX__VALUE_ALIAS_PROTO__KIND__MUST_ALIAS);
    ck_assert_int_eq(np->output_alias[1]->output_index, 3);
    ck_assert_int_eq(np->output_alias[1]->input_index, -1);
    ck_assert(!np->output_alias[1]->has_kind);
    ck_assert_int_eq(np->output_alias[2]->kind, 7);
    ck_assert_uint_eq(np->n_metadata_props, 1);
    ck_assert_str_eq(np->metadata_props[0]->value, "0:0");

    ck_assert_str_eq(gp->output[0]->alias_of, "cache");
    ck_assert_str_eq(gp->output[0]->metadata_props[0]->key, "alias_of");
    unpack_free(m);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_omitted_ports)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_node(g, "TensorScatter", NULL, NULL, "past,update,", "out");
    oac_gb_node(g, "X", NULL, NULL, ",b,,d", ",y");
    oac_gb_node(g, "Y", NULL, NULL, "", NULL);
    Onnx__ModelProto *m = roundtrip(mb);
    const Onnx__NodeProto *a = m->graph->node[0], *b = m->graph->node[1];
    ck_assert_ptr_null(a->domain);   /* the ONNX domain is written absent */
    ck_assert_uint_eq(a->n_input, 3);
    ck_assert_str_eq(a->input[2], "");
    ck_assert_uint_eq(b->n_input, 4);
    ck_assert_str_eq(b->input[0], "");
    ck_assert_str_eq(b->input[1], "b");
    ck_assert_str_eq(b->input[2], "");
    ck_assert_str_eq(b->input[3], "d");
    ck_assert_uint_eq(b->n_output, 2);
    ck_assert_str_eq(b->output[0], "");
    ck_assert_uint_eq(m->graph->node[2]->n_input, 0);
    ck_assert_uint_eq(m->graph->node[2]->n_output, 0);
    unpack_free(m);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_quantizations_and_pages)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    int i4 = oac_mb_quant_linear(mb, "INT4_PAGE", OAC_T_FLOAT, OAC_T_INT4, 4, 1, 0.5f, 0);
    int f8 = oac_mb_quant_fp8(mb, "FP8_PAGE", OAC_T_FLOAT);
    int i2 = oac_mb_quant_linear(mb, "INT2_PAGE", OAC_T_FLOAT, OAC_T_UINT8, 2, 0, 0.25f, 2);
    ck_assert_int_eq(i4, 0);
    ck_assert_int_eq(f8, 1);
    ck_assert_int_eq(i2, 2);
    ck_assert_ptr_nonnull(oac_mb_quant(mb, 2));
    ck_assert_ptr_null(oac_mb_quant(mb, 3));
    ck_assert_ptr_null(oac_mb_quant(mb, -1));
    oac_gb *g = oac_mb_graph(mb);
    int32_t allowed[] = { 0, 1 };
    Onnx__ValueInfoProto *c = oac_gb_input_paged(g, "cache", OAC_T_FLOAT, "2,4,page_size,8",
                                                 allowed, 2);
    oac_vi_access(g, c, 1);
    oac_gb_output_paged(g, "out", OAC_T_FLOAT, "2,4,page_size,8", NULL, 0);

    Onnx__ModelProto *m = roundtrip(mb);
    ck_assert_uint_eq(m->n_quantizations, 3);
    const Onnx__QuantizationProto *q = m->quantizations[0];
    ck_assert_str_eq(q->name, "INT4_PAGE");
    ck_assert(q->has_data_type);
    ck_assert_int_eq(q->data_type, OAC_T_FLOAT);
    ck_assert_int_eq(q->kind_case, ONNX__QUANTIZATION_PROTO__KIND_LINEAR);
    ck_assert_int_eq(q->linear->storage_type, OAC_T_INT4);
    ck_assert_int_eq(q->linear->bits, 4);
    ck_assert(q->linear->has_symmetric && q->linear->symmetric);
    ck_assert_int_eq(q->linear->scale_case, ONNX__LINEAR_UNIFORM_PROTO__SCALE_SCALE_FLOAT);
    ck_assert(q->linear->scale_float == 0.5f);
    ck_assert(q->linear->has_axis);
    ck_assert_int_eq(q->linear->axis, -1);
    q = m->quantizations[1];
    ck_assert_int_eq(q->kind_case, ONNX__QUANTIZATION_PROTO__KIND_FLOATING_POINT);
    ck_assert_int_eq(q->floating_point->sign_bits, 1);
    ck_assert_int_eq(q->floating_point->exponent_bits, 4);
    ck_assert_int_eq(q->floating_point->mantissa_bits, 3);
    ck_assert_int_eq(q->floating_point->exponent_bias, 7);
    ck_assert(q->floating_point->has_has_nan && q->floating_point->has_nan);
    ck_assert(q->floating_point->has_has_inf && !q->floating_point->has_inf);
    ck_assert(!q->floating_point->has_split_storage);
    q = m->quantizations[2];
    ck_assert_int_eq(q->linear->storage_type, OAC_T_UINT8);
    ck_assert_int_eq(q->linear->bits, 2);
    ck_assert_int_eq(q->linear->zero_point, 2);

    const Onnx__TypeProto *t = m->graph->input[0]->type;
    ck_assert_int_eq(t->value_case, ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE);
    const Onnx__TypeProto *e = t->sequence_type->elem_type;
    ck_assert_int_eq(e->value_case, ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE);
    ck_assert_int_eq(e->quantized_tensor_type->elem_type, OAC_T_FLOAT);
    ck_assert_uint_eq(e->quantized_tensor_type->n_allowed_quantized_type, 2);
    ck_assert_int_eq(e->quantized_tensor_type->allowed_quantized_type[1], 1);
    ck_assert_uint_eq(e->quantized_tensor_type->shape->n_dim, 4);
    ck_assert_str_eq(e->quantized_tensor_type->shape->dim[2]->dim_param, "page_size");
    ck_assert_int_eq(m->graph->input[0]->access, ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE);
    e = m->graph->output[0]->type->sequence_type->elem_type;
    ck_assert_uint_eq(e->quantized_tensor_type->n_allowed_quantized_type, 0);
    unpack_free(m);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_subgraphs)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    oac_gb *g = oac_mb_graph(mb);
    Onnx__NodeProto *iff = oac_gb_node(g, "If", NULL, "if0", "cond", "y");
    oac_gb *then_g = oac_node_attr_graph(g, iff, "then_branch", "then");
    oac_gb *else_g = oac_node_attr_graph(g, iff, "else_branch", "else");
    oac_gb_node(then_g, "Identity", NULL, NULL, "a", "t");
    oac_gb_output(then_g, "t", OAC_T_FLOAT, "4");
    oac_gb_node(else_g, "Identity", NULL, NULL, "b", "e");
    oac_gb_node(else_g, "Identity", NULL, NULL, "e", "e2");
    oac_gb_output(else_g, "e2", OAC_T_FLOAT, "4");
    /* A graph nested in a subgraph. */
    Onnx__NodeProto *loop = oac_gb_node(else_g, "Loop", NULL, NULL, ",,c", "c2");
    oac_gb *body = oac_node_attr_graph(else_g, loop, "body", "body");
    oac_gb_input(body, "i", OAC_T_INT64, "");
    oac_node_alias(else_g, loop, 0, 2, 1);

    Onnx__ModelProto *m = roundtrip(mb);
    const Onnx__NodeProto *n = m->graph->node[0];
    ck_assert_uint_eq(n->n_attribute, 2);
    ck_assert_int_eq(n->attribute[0]->type, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    ck_assert_str_eq(n->attribute[0]->name, "then_branch");
    ck_assert_str_eq(n->attribute[0]->g->name, "then");
    ck_assert_uint_eq(n->attribute[0]->g->n_node, 1);
    ck_assert_str_eq(n->attribute[0]->g->output[0]->name, "t");
    const Onnx__GraphProto *eg = n->attribute[1]->g;
    ck_assert_uint_eq(eg->n_node, 3);
    ck_assert_str_eq(eg->node[1]->output[0], "e2");
    ck_assert_uint_eq(eg->node[2]->n_output_alias, 1);
    ck_assert_int_eq(eg->node[2]->output_alias[0]->input_index, 2);
    ck_assert_str_eq(eg->node[2]->attribute[0]->g->input[0]->name, "i");
    ck_assert_uint_eq(m->graph->n_node, 1);   /* subgraph nodes stay inside */
    unpack_free(m);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_functions)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "Upd", "c,v,p", "u");
    ck_assert_ptr_null(oac_gb_proto(f));
    ck_assert_ptr_nonnull(oac_gb_function(f));
    ck_assert_ptr_null(oac_gb_function(oac_mb_graph(mb)));
    Onnx__NodeProto *n = oac_gb_node(f, "CacheUpdate", "onnx_alias", NULL, "c,v,p", "u");
    oac_node_alias(f, n, 0, 0, 1);
    Onnx__ValueInfoProto *u = oac_gb_output(f, "u", OAC_T_FLOAT, "2,4");
    oac_vi_alias_of(f, u, "c");
    oac_gb_input(f, "extra", OAC_T_INT64, "");   /* adds a new input name */
    int64_t one = 1;
    oac_gb_init_i64(f, "k", "", &one, 1);        /* a Constant in a body */
    oac_gb_node(oac_mb_graph(mb), "Upd", "local", "call", "cache,vals,pos", "out");

    Onnx__ModelProto *m = roundtrip(mb);
    ck_assert_uint_eq(m->n_functions, 1);
    const Onnx__FunctionProto *fp = m->functions[0];
    ck_assert_str_eq(fp->domain, "local");
    ck_assert_str_eq(fp->name, "Upd");
    ck_assert_uint_eq(fp->n_input, 4);
    ck_assert_str_eq(fp->input[1], "v");
    ck_assert_str_eq(fp->input[3], "extra");
    ck_assert_uint_eq(fp->n_output, 1);     /* "u" was declared already */
    ck_assert_uint_eq(fp->n_node, 2);
    ck_assert_str_eq(fp->node[1]->op_type, "Constant");
    ck_assert_int_eq(fp->node[1]->attribute[0]->t->int64_data[0], 1);
    ck_assert_uint_eq(fp->node[0]->n_output_alias, 1);
    ck_assert_uint_eq(fp->n_value_info, 2);
    ck_assert_str_eq(fp->value_info[0]->name, "u");
    ck_assert_str_eq(fp->value_info[0]->alias_of, "c");
    /* The body imports what the model imported when it was made. */
    ck_assert_uint_eq(fp->n_opset_import, 3);
    ck_assert_str_eq(m->graph->node[0]->domain, "local");
    ck_assert_uint_eq(m->graph->n_initializer, 0);
    unpack_free(m);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_tensors_and_attributes)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    oac_gb *g = oac_mb_graph(mb);
    float w[6] = { 1, 2, 3, 4, 5, 6 };
    int64_t idx[2] = { 7, -8 };
    uint8_t raw[4] = { 1, 2, 3, 4 };
    oac_gb_init_f32(g, "w", "2,3", w, 6);
    oac_gb_init_i64(g, "idx", "2", idx, 2);
    oac_gb_init_raw(g, "r", OAC_T_UINT8, "4", raw, 4);
    oac_gb_constant_i64(g, "pos", "", idx, 1);
    Onnx__NodeProto *n = oac_gb_node(g, "Op", NULL, NULL, "w", "o");
    oac_node_attr_float(g, n, "alpha", 0.25f);
    oac_node_attr_string(g, n, "mode", "linear");
    oac_node_attr_ints(g, n, "perm", idx, 2);
    oac_node_attr_tensor(g, n, "t", oac_gb_tensor_raw(g, "tt", OAC_T_UINT8, "2,2", raw, 4));

    Onnx__ModelProto *m = roundtrip(mb);
    const Onnx__GraphProto *gp = m->graph;
    ck_assert_uint_eq(gp->n_initializer, 3);
    ck_assert_uint_eq(gp->initializer[0]->n_dims, 2);
    ck_assert_int_eq(gp->initializer[0]->dims[1], 3);
    ck_assert_int_eq(gp->initializer[0]->data_type, OAC_T_FLOAT);
    ck_assert_uint_eq(gp->initializer[0]->n_float_data, 6);
    ck_assert(gp->initializer[0]->float_data[5] == 6.0f);
    ck_assert_int_eq(gp->initializer[1]->int64_data[1], -8);
    ck_assert(gp->initializer[2]->has_raw_data);
    ck_assert_uint_eq(gp->initializer[2]->raw_data.len, 4);
    ck_assert_int_eq(gp->initializer[2]->raw_data.data[3], 4);
    const Onnx__NodeProto *c = gp->node[0];
    ck_assert_str_eq(c->op_type, "Constant");
    ck_assert_str_eq(c->output[0], "pos");
    ck_assert_str_eq(c->attribute[0]->name, "value");
    ck_assert_uint_eq(c->attribute[0]->t->n_dims, 0);   /* scalar */
    ck_assert_int_eq(c->attribute[0]->t->int64_data[0], 7);
    const Onnx__NodeProto *o = gp->node[1];
    ck_assert_uint_eq(o->n_attribute, 4);
    ck_assert(o->attribute[0]->f == 0.25f);
    ck_assert_int_eq(o->attribute[1]->type, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    ck_assert_uint_eq(o->attribute[1]->s.len, 6);
    ck_assert(memcmp(o->attribute[1]->s.data, "linear", 6) == 0);
    ck_assert_uint_eq(o->attribute[2]->n_ints, 2);
    ck_assert_int_eq(o->attribute[2]->ints[0], 7);
    ck_assert_str_eq(o->attribute[3]->t->name, "tt");
    ck_assert_uint_eq(gp->n_initializer, 3);   /* tensor_raw is standalone */
    unpack_free(m);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_many_nodes_and_hand_edits)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    oac_gb *g = oac_mb_graph(mb);
    enum { N = 20000 };
    char in[32], out[32];
    for (int i = 0; i < N; i++) {
        snprintf(in, sizeof in, "v%d", i);
        snprintf(out, sizeof out, "v%d", i + 1);
        ck_assert_ptr_nonnull(oac_gb_node(g, "Identity", NULL, NULL, in, out));
    }
    /* Replace the input list by hand, then append through the builder:
     * the hand-made array must be copied, not written past. */
    Onnx__GraphProto *gp = oac_gb_proto(g);
    Onnx__ValueInfoProto **mine = oac_mb_alloc(mb, sizeof *mine);
    mine[0] = NULL;
    oac_gb_input(g, "a", OAC_T_FLOAT, "1");
    oac_gb_input(g, "b", OAC_T_FLOAT, "1");
    mine[0] = gp->input[1];
    gp->input = mine;
    gp->n_input = 1;
    oac_gb_input(g, "c", OAC_T_FLOAT, "1");
    ck_assert_ptr_eq(mine[0]->name, gp->input[0]->name);   /* mine untouched */
    gp->node[5]->name = oac_mb_strdup(mb, "renamed");

    Onnx__ModelProto *m = roundtrip(mb);
    ck_assert_uint_eq(m->graph->n_node, N);
    for (int i = 0; i < N; i++) {
        snprintf(out, sizeof out, "v%d", i + 1);
        ck_assert_str_eq(m->graph->node[i]->output[0], out);
    }
    ck_assert_str_eq(m->graph->node[5]->name, "renamed");
    ck_assert_uint_eq(m->graph->n_input, 2);
    ck_assert_str_eq(m->graph->input[0]->name, "b");
    ck_assert_str_eq(m->graph->input[1]->name, "c");
    unpack_free(m);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}
END_TEST

/* Build a model that touches every kind of allocation. */
static int build_all(oac_ctx *ctx)
{
    oac_mb *mb = oac_mb_new(ctx);
    oac_gb *g = oac_mb_graph(mb);
    oac_mb_quant_fp8(mb, "F", OAC_T_FLOAT);
    oac_gb_input_paged(g, "p", OAC_T_FLOAT, "2,1,4,2", NULL, 0);
    Onnx__ValueInfoProto *c = oac_gb_input(g, "c", OAC_T_FLOAT, "2,b,8,4");
    oac_vi_access(g, c, 1);
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "u", "c,v,p", "o");
    oac_node_alias(g, n, 0, 0, 1);
    oac_node_attr_int(g, n, "axis", -2);
    oac_gb *sub = oac_node_attr_graph(g, n, "x", "sub");
    oac_gb_node(sub, "Identity", NULL, NULL, "a", "b");
    oac_gb *f = oac_mb_function(mb, "local", "F", "a", "b");
    oac_vi_alias_of(f, oac_gb_output(f, "b", OAC_T_FLOAT, "1"), "a");
    int64_t v = 3;
    oac_gb_constant_i64(g, "k", "1", &v, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "o", OAC_T_FLOAT, "2,b,8,4"), "c");
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = oac_mb_pack(mb, &buf, &len);
    if (rc == OAC_OK) {
        ck_assert_int_eq(oac_mb_status(mb), OAC_OK);
        Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(m->graph->output[0]->alias_of, "c");
        onnx__model_proto__free_unpacked(m, NULL);
        free(buf);
    } else {
        ck_assert_ptr_null(buf);
        /* Sticky: the failure is remembered and later calls do nothing. */
        if (mb && oac_mb_status(mb) != OAC_OK) {
            ck_assert_int_eq(oac_mb_status(mb), rc);
            ck_assert_ptr_null(oac_gb_node(g, "X", NULL, NULL, "", "y"));
        } else if (mb) {
            /* Only pack's own buffer failed, which leaves the model
             * intact: the builder's graph still takes nodes. */
            ck_assert_ptr_nonnull(oac_mb_proto(mb)->graph);
            ck_assert_uint_eq(oac_mb_proto(mb)->graph->n_node, 2);
        }
    }
    oac_mb_free(mb);
    return mb ? rc : OAC_ENOMEM;
}

START_TEST(test_alloc_failures_are_sticky)
{
    oac_ctx *ctx = oac_ctx_new();
    ck_assert_int_eq(build_all(ctx), OAC_OK);
    unsigned long total = oac_ctx_alloc_count(ctx);
    ck_assert_uint_gt(total, 2);
    int failures = 0;
    for (unsigned long n = 1; n <= total; n++) {
        oac_ctx_fail_alloc_after(ctx, n);
        int rc = build_all(ctx);
        oac_ctx_fail_alloc_after(ctx, 0);
        ck_assert(rc == OAC_OK || rc == OAC_ENOMEM);
        if (rc == OAC_ENOMEM) {
            failures++;
            ck_assert_ptr_nonnull(strstr(oac_errmsg(ctx), "out of memory"));
        }
    }
    /* Every allocation but none is needed: each position must fail. */
    ck_assert_int_eq(failures, (int)total);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_bad_tensor_dims_and_write)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    oac_gb *g = oac_mb_graph(mb);
    char path[] = "/tmp/check_builder_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    oac_gb_input(g, "x", OAC_T_FLOAT, "n,2");
    ck_assert_int_eq(oac_mb_write(mb, path), OAC_OK);
    FILE *fp = fopen(path, "rb");
    uint8_t buf[4096];
    size_t len = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    unlink(path);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(m->graph->input[0]->type->tensor_type->shape->dim[0]->dim_param, "n");
    onnx__model_proto__free_unpacked(m, NULL);

    ck_assert_int_eq(oac_mb_write(mb, "/nonexistent-dir/x.onnx"), OAC_EIO);
    ck_assert_ptr_nonnull(strstr(oac_errmsg(ctx), "/nonexistent-dir/x.onnx"));

    /* Tensors have numeric dims only: a symbol is a sticky EINVAL. */
    ck_assert_ptr_null(oac_gb_init_f32(g, "w", "n,2", NULL, 0));
    ck_assert_int_eq(oac_mb_status(mb), OAC_EINVAL);
    ck_assert_ptr_null(oac_gb_input(g, "y", OAC_T_FLOAT, "1"));
    uint8_t *out = NULL;
    size_t out_len = 0;
    ck_assert_int_eq(oac_mb_pack(mb, &out, &out_len), OAC_EINVAL);
    ck_assert_ptr_null(out);
    ck_assert_ptr_nonnull(strstr(oac_errmsg(ctx), "n,2"));
    oac_mb_free(mb);

    /* NULL everywhere is harmless (invariant 4). */
    oac_mb_free(NULL);
    ck_assert_ptr_null(oac_mb_graph(NULL));
    ck_assert_ptr_null(oac_gb_node(NULL, "X", NULL, NULL, "", ""));
    oac_vi_alias_of(NULL, NULL, "x");
    ck_assert_ptr_null(oac_node_alias(NULL, NULL, 0, 0, 1));
    oac_ctx_free(ctx);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("builder");
    TCase *tc = tcase_create("builder");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_defaults_and_opsets);
    tcase_add_test(tc, test_cache_update_fields);
    tcase_add_test(tc, test_omitted_ports);
    tcase_add_test(tc, test_quantizations_and_pages);
    tcase_add_test(tc, test_subgraphs);
    tcase_add_test(tc, test_functions);
    tcase_add_test(tc, test_tensors_and_attributes);
    tcase_add_test(tc, test_many_nodes_and_hand_edits);
    tcase_add_test(tc, test_alloc_failures_are_sticky);
    tcase_add_test(tc, test_bad_tensor_dims_and_write);
    suite_add_tcase(s, tc);
    return s;
}

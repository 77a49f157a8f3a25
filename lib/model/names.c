/* model/names.c: the names a model declares, asked before it is checked.
 *
 * Owns oac_model_has_dim_param and oac_model_has_input (oac.h).  The tool
 * asks them to refuse a --dim or --input name that no model of the call
 * has (contract 5), without looking at the parsed protobuf itself.
 *
 * Where a dim_param counts: in the shape of a declared type (tensor,
 * sparse tensor, quantized tensor, and the element or value type of
 * sequence, optional and map types, however nested) of an input, output
 * or value_info of the main graph, of every subgraph of a node attribute
 * (g and graphs), and of a local function's value_info and the subgraphs
 * of its nodes.  A function's inputs and outputs are names without types.
 *
 * Invariants:
 *  1. Read-only walks of the loaded model; no allocation, so no failure.
 *  2. Recursion is bounded by OAC_MAX_DEPTH, both through subgraphs and
 *     through nested types; deeper parts are not searched (the loader
 *     refuses such models anyway).
 */
#include <string.h>

#include "oac_int.h"

static bool type_has_dim(const Onnx__TypeProto *t, const char *name, int depth);

static bool shape_has_dim(const Onnx__TensorShapeProto *s, const char *name)
{
    for (size_t i = 0; s && i < s->n_dim; i++)
        if (s->dim[i]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
            s->dim[i]->dim_param && !strcmp(s->dim[i]->dim_param, name))
            return true;
    return false;
}

static bool type_has_dim(const Onnx__TypeProto *t, const char *name, int depth)
{
    if (!t || depth > OAC_MAX_DEPTH)
        return false;
    switch (t->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        return shape_has_dim(t->tensor_type->shape, name);
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        return shape_has_dim(t->sparse_tensor_type->shape, name);
    case ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE:
        return shape_has_dim(t->quantized_tensor_type->shape, name);
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        return type_has_dim(t->sequence_type->elem_type, name, depth + 1);
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        return type_has_dim(t->optional_type->elem_type, name, depth + 1);
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        return type_has_dim(t->map_type->value_type, name, depth + 1);
    default:
        return false;
    }
}

static bool vis_have_dim(Onnx__ValueInfoProto **v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (type_has_dim(v[i]->type, name, 0))
            return true;
    return false;
}

static bool graph_has_dim(const Onnx__GraphProto *g, const char *name, int depth);

static bool nodes_have_dim(Onnx__NodeProto **nodes, size_t n, const char *name,
                           int depth)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < nodes[i]->n_attribute; j++) {
            const Onnx__AttributeProto *a = nodes[i]->attribute[j];
            if (graph_has_dim(a->g, name, depth + 1))
                return true;
            for (size_t k = 0; k < a->n_graphs; k++)
                if (graph_has_dim(a->graphs[k], name, depth + 1))
                    return true;
        }
    return false;
}

static bool graph_has_dim(const Onnx__GraphProto *g, const char *name, int depth)
{
    if (!g || depth > OAC_MAX_DEPTH)
        return false;
    return vis_have_dim(g->input, g->n_input, name) ||
           vis_have_dim(g->output, g->n_output, name) ||
           vis_have_dim(g->value_info, g->n_value_info, name) ||
           nodes_have_dim(g->node, g->n_node, name, depth);
}

bool oac_model_has_dim_param(const oac_model *model, const char *name)
{
    const Onnx__ModelProto *p = oac_model_proto(model);
    if (!p || !name)
        return false;
    if (graph_has_dim(p->graph, name, 0))
        return true;
    for (size_t i = 0; i < p->n_functions; i++)
        if (vis_have_dim(p->functions[i]->value_info, p->functions[i]->n_value_info, name) ||
            nodes_have_dim(p->functions[i]->node, p->functions[i]->n_node, name, 0))
            return true;
    return false;
}

bool oac_model_has_input(const oac_model *model, const char *name)
{
    const Onnx__ModelProto *p = oac_model_proto(model);
    const Onnx__GraphProto *g = p ? p->graph : NULL;
    for (size_t i = 0; g && name && i < g->n_input; i++)
        if (g->input[i]->name && !strcmp(g->input[i]->name, name))
            return true;
    return false;
}

/* check_model_names.c: lib/model/names.c — which dim_params and graph
 * inputs a model declares (oac_model_has_dim_param, oac_model_has_input;
 * contract 5: --dim and --input must name something of the model).
 *
 * Each symbol of the models below sits in one place only, so a walk that
 * skips that place (a subgraph, a nested subgraph, a function body, a
 * sequence/map/optional element type) fails its assertion; names that
 * occur only as something else (a value, a node, an op_type, a number)
 * are absent.
 */
#include "harness.h"

/* main: inputs x [B, 4] and pages Sequence<QuantizedTensor [P, 4]>,
 * output y [Y], value_info t [T];
 *   n1: y = If(c) { then: If(c) { then: yy [DEEP] = Neg(x) } else ... }
 *   n2: z = local.F(x)   F(a) -> r: r [FN] = Neg(a), with a Loop node
 *       whose body declares [FNSUB];
 * plus graph inputs m (map<int64, tensor [MAPV]>) and o (optional<tensor
 * [OPT]>) set by hand. */
static void names_model(fx *f)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_mb_opset(mb, "local", 1);
    oac_gb *fn = oac_mb_function(mb, "local", "F", "a", "r");
    oac_gb_node(fn, "Neg", NULL, "fneg", "a", "r");
    oac_gb_value_info(fn, "r", OAC_T_FLOAT, "FN,4");
    Onnx__NodeProto *loop = oac_gb_node(fn, "Loop", NULL, "floop", "", "");
    oac_gb *lb = oac_node_attr_graph(fn, loop, "body", "fbody");
    oac_gb_input(lb, "i", OAC_T_INT64, "");
    oac_gb_output(lb, "k", OAC_T_FLOAT, "FNSUB");

    oac_gb_input(g, "x", OAC_T_FLOAT, "B,4");
    oac_gb_input(g, "c", OAC_T_BOOL, "");
    int32_t allowed[] = { 0 };
    oac_mb_quant_linear(mb, "INT8_PAGE", OAC_T_FLOAT, OAC_T_INT8, 8, 1, 0.5f, 0);
    oac_gb_input_paged(g, "pages", OAC_T_FLOAT, "P,4", allowed, 1);
    oac_gb_value_info(g, "t", OAC_T_FLOAT, "T");
    Onnx__NodeProto *n1 = oac_gb_node(g, "If", NULL, "n1", "c", "y");
    oac_gb *then = oac_node_attr_graph(g, n1, "then_branch", "then");
    Onnx__NodeProto *inner = oac_gb_node(then, "If", NULL, "inner", "c", "ty");
    oac_gb *deep = oac_node_attr_graph(then, inner, "then_branch", "deep");
    oac_gb_node(deep, "Neg", NULL, "dneg", "x", "yy");
    oac_gb_output(deep, "yy", OAC_T_FLOAT, "DEEP,4");
    oac_gb *deep_else = oac_node_attr_graph(then, inner, "else_branch", "deep_else");
    oac_gb_output(deep_else, "x", OAC_T_FLOAT, NULL);
    oac_gb_output(then, "ty", OAC_T_FLOAT, NULL);
    oac_gb *els = oac_node_attr_graph(g, n1, "else_branch", "else");
    oac_gb_output(els, "x", OAC_T_FLOAT, NULL);
    oac_gb_node(g, "F", "local", "n2", "x", "z");
    oac_gb_output(g, "y", OAC_T_FLOAT, "Y");
    oac_gb_output(g, "z", OAC_T_FLOAT, "4,4");

    /* optional<tensor [OPT]> from the builder; map<int64, tensor [MAPV]>
     * by hand, its tensor type taken from a throwaway value_info. */
    Onnx__ValueInfoProto *mv = oac_gb_value_info(g, "mapv_t", OAC_T_FLOAT, "MAPV");
    Onnx__ValueInfoProto *m = oac_gb_input(g, "m", OAC_T_FLOAT, NULL);
    Onnx__ValueInfoProto *o = oac_gb_input(g, "o", OAC_T_FLOAT, "OPT");
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(o);
    oac_vi_optional(g, o);
    Onnx__TypeProto *mt = oac_mb_alloc(mb, sizeof *mt);
    Onnx__TypeProto__Map *map = oac_mb_alloc(mb, sizeof *map);
    onnx__type_proto__init(mt);
    onnx__type_proto__map__init(map);
    map->has_key_type = 1;
    map->key_type = OAC_T_INT64;
    map->value_type = mv->type;
    mt->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
    mt->map_type = map;
    m->type = mt;
    /* Only the nested form may carry this symbol. */
    mv->type = NULL;
    fx_load(f);
}

START_TEST(test_dim_params_everywhere)
{
    fx f;
    names_model(&f);
    static const char *const present[] = {
        "B",       /* main graph input */
        "P",       /* element of a sequence of quantized tensors */
        "Y",       /* main graph output */
        "T",       /* main graph value_info */
        "DEEP",    /* output of a subgraph of a subgraph */
        "FN",      /* value_info of a local function */
        "FNSUB",   /* subgraph of a node of a local function */
        "MAPV",    /* value type of a map */
        "OPT",     /* element of an optional */
    };
    for (size_t i = 0; i < sizeof present / sizeof present[0]; i++)
        ck_assert_msg(oac_model_has_dim_param(f.m, present[i]), "%s not found", present[i]);
    fx_end(&f);
}
END_TEST

START_TEST(test_dim_params_absent)
{
    fx f;
    names_model(&f);
    static const char *const absent[] = {
        "x", "y", "t",          /* values, not symbols */
        "n1", "fneg", "F",      /* node names, op_type */
        "4",                    /* a dim_value */
        "b", "Bx", "",          /* neither case nor prefix nor empty match */
        "mapv_t", "INT8_PAGE",
    };
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
        ck_assert_msg(!oac_model_has_dim_param(f.m, absent[i]), "'%s' found", absent[i]);
    ck_assert(!oac_model_has_dim_param(f.m, NULL));
    ck_assert(!oac_model_has_dim_param(NULL, "B"));
    fx_end(&f);
}
END_TEST

START_TEST(test_inputs)
{
    fx f;
    names_model(&f);
    ck_assert(oac_model_has_input(f.m, "x"));
    ck_assert(oac_model_has_input(f.m, "pages"));
    ck_assert(oac_model_has_input(f.m, "m"));
    /* An output, a value_info, a subgraph's or a function's input, a
     * symbol: not graph inputs. */
    ck_assert(!oac_model_has_input(f.m, "y"));
    ck_assert(!oac_model_has_input(f.m, "t"));
    ck_assert(!oac_model_has_input(f.m, "i"));
    ck_assert(!oac_model_has_input(f.m, "a"));
    ck_assert(!oac_model_has_input(f.m, "B"));
    ck_assert(!oac_model_has_input(f.m, NULL));
    ck_assert(!oac_model_has_input(NULL, "x"));
    fx_end(&f);
}
END_TEST

/* A model without a graph (functions only) has no names. */
START_TEST(test_no_graph)
{
    fx f;
    oac_mb *mb;
    fx_build(&f, &mb);
    oac_gb *fn = oac_mb_function(mb, "local", "F", "a", "r");
    oac_gb_value_info(fn, "r", OAC_T_FLOAT, "FN");
    oac_gb_node(fn, "Neg", NULL, "fneg", "a", "r");
    oac_mb_proto(mb)->graph = NULL;
    fx_load(&f);
    ck_assert(oac_model_has_dim_param(f.m, "FN"));
    ck_assert(!oac_model_has_input(f.m, "a"));
    fx_end(&f);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("model_names");
    TCase *tc = tcase_create("names");
    tcase_add_test(tc, test_dim_params_everywhere);
    tcase_add_test(tc, test_dim_params_absent);
    tcase_add_test(tc, test_inputs);
    tcase_add_test(tc, test_no_graph);
    suite_add_tcase(s, tc);
    return s;
}

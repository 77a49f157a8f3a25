/* check_alias_rules.c: lib/check/alias_rules.c — access-invalid, the
 * output_alias port rules (alias-index-out-of-range, alias-kind-undefined,
 * alias-duplicate, self-aliasing), alias-implied, operand-invalid (its
 * non-type parts) and metadata-alias.  Contract section 3.
 *
 * One table row per model: each code has at least two triggering models
 * and clean near-misses that differ from them by one field.
 */
#include "harness.h"

/* ---- access-invalid ------------------------------------------------- */

static void access_on_output(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "upd", true);
    Onnx__ValueInfoProto *o = oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
    oac_vi_alias_of(g, o, "cache");
    oac_vi_access(g, o, 1);
}

static void access_bad_value(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 7);
    cu_update_inputs(g);
    cu_update(g, "n0", "cache", "upd", true);
    cu_output_alias(g, "upd", "cache");
}

static void access_on_value_info(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "u1", true);
    cu_update(g, "n1", "u1", "upd", true);
    oac_vi_access(g, oac_gb_value_info(g, "u1", OAC_T_FLOAT, CU_CACHE), 1);
    cu_output_alias(g, "upd", "cache");
}

static void access_on_initializer_input(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    float z[128] = { 0 };
    oac_gb_init_f32(g, "cache", CU_CACHE, z, 128);
    cu_update_inputs(g);
    cu_update(g, "n0", "cache", "upd", true);
    cu_output_alias(g, "upd", "cache");
}

/* Near-miss: READ_ONLY stated explicitly on an output is allowed. */
static void access_readonly_output(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "upd", true);
    Onnx__ValueInfoProto *o = oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
    oac_vi_alias_of(g, o, "cache");
    oac_vi_access(g, o, 0);
}

/* Near-miss: a READ_WRITE input never written is valid. */
static void access_rw_unwritten(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    oac_gb_node(g, "Identity", NULL, "id", "cache", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, CU_CACHE);
}

/* ---- alias-index-out-of-range ---------------------------------------- */

static void index_input_past_end(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *n = cu_update(g, "n0", "cache", "upd", false);
    oac_node_alias(g, n, 0, 5, 1);
    oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
}

static void index_negative_output(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *n = cu_update(g, "n0", "cache", "upd", true);
    oac_node_alias(g, n, -1, 0, 1);
    cu_output_alias(g, "upd", "cache");
}

/* TensorScatter(cache, update, <omitted write_indices>) aliasing input 2. */
static void index_omitted_port(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, CU_UPD);
    Onnx__NodeProto *n = oac_gb_node(g, "TensorScatter", NULL, "ts",
                                     "cache,values,", "upd");
    oac_node_alias(g, n, 0, 0, 1);
    oac_node_alias(g, n, 0, 2, 1);
    cu_output_alias(g, "upd", "cache");
}

static void tensor_scatter_ok(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, CU_UPD);
    Onnx__NodeProto *n = oac_gb_node(g, "TensorScatter", NULL, "ts",
                                     "cache,values", "upd");
    oac_node_alias(g, n, 0, 0, 1);
    cu_output_alias(g, "upd", "cache");
}

/* ---- alias-kind-undefined -------------------------------------------- */

static void kind_absent(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *n = cu_update(g, "n0", "cache", "upd", false);
    oac_node_alias(g, n, 0, 0, -1);
    oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
}

static void kind_zero(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *n = cu_update(g, "n0", "cache", "upd", false);
    oac_node_alias(g, n, 0, 0, 0);
    oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
}

static void kind_unknown(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *n = cu_update(g, "n0", "cache", "upd", false);
    oac_node_alias(g, n, 0, 0, 5);
    oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
}

/* ---- alias-duplicate ------------------------------------------------- */

static void dup_same_output(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *n = cu_update(g, "n0", "cache", "upd", true);
    oac_node_alias(g, n, 0, 0, 1);
    cu_output_alias(g, "upd", "cache");
}

/* A two-output custom op whose outputs both must-alias input 0. */
static void dup_same_input(oac_mb *mb)
{
    oac_mb_opset(mb, "custom", 1);
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    Onnx__NodeProto *n = oac_gb_node(g, "Twin", "custom", "tw", "cache", "a,b");
    oac_node_alias(g, n, 0, 0, 1);
    oac_node_alias(g, n, 1, 0, 1);
    cu_output_alias(g, "a", "cache");
    oac_gb_output(g, "b", OAC_T_FLOAT, CU_CACHE);
}

/* Near-miss: two outputs aliasing two different inputs. */
static void two_outputs_two_inputs(oac_mb *mb)
{
    oac_mb_opset(mb, "custom", 1);
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "k", 1);
    cu_cache_input(g, "v", 1);
    Onnx__NodeProto *n = oac_gb_node(g, "Twin", "custom", "tw", "k,v", "k2,v2");
    oac_node_alias(g, n, 0, 0, 1);
    oac_node_alias(g, n, 1, 1, 1);
    cu_output_alias(g, "k2", "k");
    cu_output_alias(g, "v2", "v");
}

/* ---- a node aliasing a value to itself (alias-cycle) ------------------ */

static void self_alias(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "cache", true);
    oac_gb_output(g, "cache", OAC_T_FLOAT, CU_CACHE);
}

static void self_alias_custom(oac_mb *mb)
{
    oac_mb_opset(mb, "custom", 1);
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "x", 1);
    Onnx__NodeProto *n = oac_gb_node(g, "Touch", "custom", "t", "x", "x");
    oac_node_alias(g, n, 0, 0, 1);
    oac_gb_output(g, "x", OAC_T_FLOAT, CU_CACHE);
}

/* ---- alias-implied --------------------------------------------------- */

static void implied_cache_update(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "upd", false);
    oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
}

static void implied_tensor_scatter(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, CU_UPD);
    oac_gb_node(g, "TensorScatter", NULL, NULL, "cache,values", "upd");
    oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
}

/* Output 0 aliases input 1 (values), not the cache: CacheUpdate's only
 * pair is 0->0, so alias-unsupported (and that alone, no alias-implied). */
static void implied_wrong_port(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *n = cu_update(g, "n0", "cache", "upd", false);
    oac_node_alias(g, n, 0, 1, 1);
    oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
}

/* ---- operand-invalid (non-type parts) ------------------------------- */

static void operand_not_imported(oac_mb *mb)
{
    cu_dense(mb);
    oac_mb_opset(mb, "onnx_alias", -1);
}

static void operand_two_inputs(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "n0",
                                     "cache,values", "upd");
    oac_node_alias(g, n, 0, 0, 1);
    cu_output_alias(g, "upd", "cache");
}

static void operand_float_axis(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *n = cu_update(g, "n0", "cache", "upd", true);
    oac_node_attr_float(g, n, "axis", -2.0f);
    cu_output_alias(g, "upd", "cache");
}

static void operand_omitted_position(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "n0",
                                     "cache,values,", "upd");
    oac_node_alias(g, n, 0, 0, 1);
    cu_output_alias(g, "upd", "cache");
}

static void operand_bad_mode(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, CU_UPD);
    Onnx__NodeProto *n = oac_gb_node(g, "TensorScatter", NULL, "ts",
                                     "cache,values", "upd");
    oac_node_attr_string(g, n, "mode", "ring");
    oac_node_alias(g, n, 0, 0, 1);
    cu_output_alias(g, "upd", "cache");
}

/* Near-miss: circular is a mode. */
static void operand_circular_mode(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, CU_UPD);
    Onnx__NodeProto *n = oac_gb_node(g, "TensorScatter", NULL, "ts",
                                     "cache,values", "upd");
    oac_node_attr_string(g, n, "mode", "circular");
    oac_node_alias(g, n, 0, 0, 1);
    cu_output_alias(g, "upd", "cache");
}

/* Near-miss: an int axis is fine. */
static void operand_int_axis(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *n = cu_update(g, "n0", "cache", "upd", true);
    oac_node_attr_int(g, n, "axis", 2);
    cu_output_alias(g, "upd", "cache");
}

/* Near-miss: a function importing onnx_alias itself, model not. */
static void operand_function_imports(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "Upd", "c,values,pos", "u");
    Onnx__FunctionProto *fp = oac_gb_function(f);
    /* The builder leaves the function's imports empty; give it its own. */
    Onnx__OperatorSetIdProto *imp[2];
    for (int i = 0; i < 2; i++) {
        imp[i] = oac_mb_alloc(mb, sizeof *imp[i]);
        onnx__operator_set_id_proto__init(imp[i]);
        imp[i]->domain = oac_mb_strdup(mb, i ? "onnx_alias" : "");
        imp[i]->has_version = 1;
        imp[i]->version = i ? 1 : 21;
    }
    Onnx__OperatorSetIdProto **arr = oac_mb_alloc(mb, sizeof imp);
    memcpy(arr, imp, sizeof imp);
    fp->opset_import = arr;
    fp->n_opset_import = 2;
    oac_gb_value_info(f, "c", OAC_T_FLOAT, CU_CACHE);
    Onnx__NodeProto *n = oac_gb_node(f, "CacheUpdate", "onnx_alias", "fn0",
                                     "c,values,pos", "u");
    oac_node_alias(f, n, 0, 0, 1);
    oac_vi_alias_of(f, oac_gb_value_info(f, "u", OAC_T_FLOAT, CU_CACHE), "c");
    oac_mb_opset(mb, "onnx_alias", -1);
    oac_gb *g = cu_cache_graph(mb);
    oac_gb_node(g, "Upd", "local", "call", "cache,values,pos", "upd");
    cu_output_alias(g, "upd", "cache");
}

/* ---- metadata-alias -------------------------------------------------- */

static void meta_value(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "upd", true);
    Onnx__ValueInfoProto *o = oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
    oac_vi_meta(g, o, "alias_of", "cache");
}

static void meta_node(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *n = cu_update(g, "n0", "cache", "upd", false);
    oac_node_meta(g, n, "output_alias", "0:0");
    oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
}

/* Near-miss: the metadata repeats fields that are set. */
static void meta_with_fields(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *n = cu_update(g, "n0", "cache", "upd", true);
    oac_node_meta(g, n, "output_alias", "0:0");
    Onnx__ValueInfoProto *o = oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
    oac_vi_alias_of(g, o, "cache");
    oac_vi_meta(g, o, "alias_of", "cache");
}

static const model_case cases[] = {
    { "access_on_output", access_on_output, WANT(OAC_ACCESS_INVALID), NULL, "upd",
      "/graph/output/0" },
    { "access_bad_value", access_bad_value, WANT(OAC_ACCESS_INVALID), NULL, "cache",
      "/graph/input/0" },
    { "access_on_value_info", access_on_value_info, WANT(OAC_ACCESS_INVALID), NULL,
      "u1", "/graph/value_info/0" },
    { "access_on_initializer_input", access_on_initializer_input,
      WANT(OAC_ACCESS_INVALID), NULL, "cache", "/graph/input/0" },
    { "access_readonly_output", access_readonly_output, NEAR(OAC_ACCESS_INVALID) },
    { "access_rw_unwritten", access_rw_unwritten, NEAR(OAC_ACCESS_INVALID) },
    { "dense", cu_dense, NEAR(OAC_ACCESS_INVALID) },

    { "index_input_past_end", index_input_past_end,
      WANT(OAC_ALIAS_INDEX_OUT_OF_RANGE), "n0", "upd", "/graph/node/0/output_alias/0" },
    { "index_negative_output", index_negative_output,
      WANT(OAC_ALIAS_INDEX_OUT_OF_RANGE), "n0", NULL, "/graph/node/0/output_alias/1" },
    { "index_omitted_port", index_omitted_port, WANT(OAC_ALIAS_INDEX_OUT_OF_RANGE),
      "ts", "upd", "/graph/node/0/output_alias/1" },
    { "tensor_scatter_ok", tensor_scatter_ok, NEAR(OAC_ALIAS_INDEX_OUT_OF_RANGE) },

    { "kind_absent", kind_absent, WANT(OAC_ALIAS_KIND_UNDEFINED), "n0", "upd",
      "/graph/node/0/output_alias/0" },
    { "kind_zero", kind_zero, WANT(OAC_ALIAS_KIND_UNDEFINED), "n0", "upd",
      "/graph/node/0/output_alias/0" },
    { "kind_unknown", kind_unknown, WANT(OAC_ALIAS_KIND_UNDEFINED), "n0", "upd",
      "/graph/node/0/output_alias/0" },
    /* kind MUST_ALIAS. */
    { "kind_must_alias", cu_dense, NEAR(OAC_ALIAS_KIND_UNDEFINED) },

    { "dup_same_output", dup_same_output, WANT(OAC_ALIAS_DUPLICATE), "n0", "upd",
      "/graph/node/0/output_alias/1" },
    { "dup_same_input", dup_same_input, WANT(OAC_ALIAS_DUPLICATE), "tw", "b",
      "/graph/node/0/output_alias/1" },
    { "two_outputs_two_inputs", two_outputs_two_inputs, NEAR(OAC_ALIAS_DUPLICATE) },

    { "self_alias", self_alias, WANT(OAC_ALIAS_CYCLE), "n0", "cache",
      "/graph/node/0/output_alias/0" },
    { "self_alias_custom", self_alias_custom, WANT(OAC_ALIAS_CYCLE), "t", "x",
      "/graph/node/0/output_alias/0" },

    { "implied_cache_update", implied_cache_update, WANT(OAC_ALIAS_IMPLIED), "n0",
      "upd", "/graph/node/0" },
    { "implied_tensor_scatter", implied_tensor_scatter, WANT(OAC_ALIAS_IMPLIED),
      "#0", "upd", "/graph/node/0" },
    { "implied_wrong_port", implied_wrong_port, WANT(OAC_ALIAS_UNSUPPORTED), "n0", "upd",
      "/graph/node/0/output_alias/0" },
    /* The update states output_alias 0 <- 0. */
    { "implied_stated", cu_dense, NEAR(OAC_ALIAS_IMPLIED) },

    { "operand_not_imported", operand_not_imported, WANT(OAC_OPERAND_INVALID), "n0",
      "upd", "/graph/node/0/domain" },
    { "operand_two_inputs", operand_two_inputs, WANT(OAC_OPERAND_INVALID), "n0",
      "upd", "/graph/node/0" },
    { "operand_float_axis", operand_float_axis, WANT(OAC_OPERAND_INVALID), "n0",
      "upd", "/graph/node/0/attribute/0" },
    { "operand_omitted_position", operand_omitted_position,
      WANT(OAC_OPERAND_INVALID), "n0", "upd", "/graph/node/0/input/2" },
    { "operand_bad_mode", operand_bad_mode, WANT(OAC_OPERAND_INVALID), "ts", "upd",
      "/graph/node/0/attribute/0" },
    { "operand_circular_mode", operand_circular_mode, NEAR(OAC_OPERAND_INVALID) },
    { "operand_int_axis", operand_int_axis, NEAR(OAC_OPERAND_INVALID) },
    { "operand_function_imports", operand_function_imports,
      NEAR(OAC_OPERAND_INVALID) },

    { "meta_value", meta_value, WANT(OAC_METADATA_ALIAS), NULL, "upd",
      "/graph/output/0/metadata_props/0" },
    { "meta_node", meta_node, WANT(OAC_METADATA_ALIAS), "n0", "upd",
      "/graph/node/0/metadata_props/0" },
    { "meta_with_fields", meta_with_fields, NEAR(OAC_METADATA_ALIAS) },
};

CASES_TEST(cases)

/* A valid update reports nothing of this file's codes, and the access
 * finding on an initializer input comes with alias-root-immutable. */
START_TEST(test_rw_initializer_is_both)
{
    fx r;
    fx_check_model(&r, access_on_initializer_input);
    diag_expect(r.d, OAC_ACCESS_INVALID, NULL, "cache", "/graph/input/0");
    diag_expect(r.d, OAC_ALIAS_ROOT_IMMUTABLE, "n0", "cache", NULL);
    fx_end(&r);
}
END_TEST

/* Broken entries alias nothing: no class is formed from them. */
START_TEST(test_broken_entry_makes_no_class)
{
    fx r;
    fx_check_model(&r, kind_zero);
    ck_assert_uint_eq(oac_analysis_class_count(r.a), 0);
    /* ... and the update is then out of place, but the entry for 0<-0
     * exists, so alias-implied is not added on top. */
    ck_assert_uint_eq(diag_count(r.d, OAC_ALIAS_IMPLIED), 0);
    fx_end(&r);
    fx_check_model(&r, cu_dense);
    ck_assert_uint_eq(oac_analysis_class_count(r.a), 1);
    fx_end(&r);
}
END_TEST

/* The message names node, op_type, value and graph. */
START_TEST(test_message_text)
{
    fx r;
    fx_check_model(&r, implied_cache_update);
    const oac_diag *d = diag_expect(r.d, OAC_ALIAS_IMPLIED, "n0", "upd", NULL);
    ck_assert_ptr_nonnull(strstr(d->message, "'n0'"));
    ck_assert_ptr_nonnull(strstr(d->message, "CacheUpdate"));
    ck_assert_ptr_nonnull(strstr(d->message, "'upd'"));
    ck_assert_ptr_nonnull(strstr(d->message, "'main'"));
    ck_assert_str_eq(d->op_type, "CacheUpdate");
    ck_assert_str_eq(d->graph, "main");
    fx_end(&r);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("alias_rules");
    TCase *tc = tcase_create("rules");
    tcase_set_timeout(tc, 30);
    ADD_CASES(tc, cases);
    tcase_add_test(tc, test_rw_initializer_is_both);
    tcase_add_test(tc, test_broken_entry_makes_no_class);
    tcase_add_test(tc, test_message_text);
    suite_add_tcase(s, tc);
    return s;
}

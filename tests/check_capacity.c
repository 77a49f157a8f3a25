/* check_capacity.c: capacity-overflow and the "capacity" unchecked list
 * (lib/check/capacity.c; contract 2 and 3): CacheUpdate position rules,
 * TensorScatter linear/circular, PagedCacheUpdate page size and negative
 * page_id, overflow of position + length, an update longer than the
 * capacity at an unknown position (issue 10, item 4), undecidable checks
 * listed.  Section 6's length rules are in check_ops.c with their rows.
 */
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/alias.h"
#include "check/graph.h"
#include "check/shapes.h"

static size_t unchecked_count(const fx *r, const char *node, const char *reason)
{
    size_t n = 0;
    for (size_t i = 0; i < oac_analysis_unchecked_count(r->a); i++) {
        const oac_unchecked *u = oac_analysis_unchecked(r->a, i);
        if (!strcmp(u->rule, "capacity") && (!node || (u->node && !strcmp(u->node, node))) &&
            (!reason || strstr(u->reason, reason)))
            n++;
    }
    return n;
}

/* cache [1,2,16,4], values [1,2,L,4], position = Constant(pos) (or the
 * graph input "position" when pos_known is false). */
static void dense_model(oac_gb *g, const char *values_dims, bool pos_known, int64_t pos)
{
    oac_vi_access(g, oac_gb_input(g, "cache", OAC_T_FLOAT16, "1,2,16,4"), 1);
    oac_gb_input(g, "values", OAC_T_FLOAT16, values_dims);
    if (pos_known)
        oac_gb_constant_i64(g, "position", "", &pos, 1);
    else
        oac_gb_input(g, "position", OAC_T_INT64, "");
    cu_node(g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(g, oac_gb_output(g, "out", OAC_T_FLOAT16, "1,2,16,4"), "cache");
}

START_TEST(test_cache_update_overflow)
{
    fx r;
    /* 10 + 8 > 16 */
    fx_build(&r, NULL);
    dense_model(r.g, "1,2,8,4", true, 10);
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_CAPACITY_OVERFLOW, "upd", "cache", NULL);
    const oac_diag *x = diag_find(r.d, OAC_CAPACITY_OVERFLOW, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(strstr(x->message, "10"));
    ck_assert_ptr_nonnull(strstr(x->message, "8"));
    ck_assert_ptr_nonnull(strstr(x->message, "16"));
    ck_assert_ptr_nonnull(strstr(x->message, "upd"));
    ck_assert_ptr_nonnull(strstr(x->location, "/graph/node/1/input/2"));
    ck_assert_uint_eq(unchecked_count(&r, NULL, NULL), 0);
    fx_end(&r);

    /* negative position */
    fx_build(&r, NULL);
    dense_model(r.g, "1,2,1,4", true, -1);
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_CAPACITY_OVERFLOW, "upd", "cache", NULL);
    ck_assert_ptr_nonnull(strstr(diag_find(r.d, OAC_CAPACITY_OVERFLOW, NULL, NULL, NULL)->message, "negative"));
    fx_end(&r);

    /* position folded: Add(Constant 15, Constant 1) = 16, + 1 > 16 */
    fx_build(&r, NULL);
    oac_vi_access(r.g, oac_gb_input(r.g, "cache", OAC_T_FLOAT16, "1,2,16,4"), 1);
    oac_gb_input(r.g, "values", OAC_T_FLOAT16, "1,2,1,4");
    int64_t a = 15, b = 1;
    oac_gb_constant_i64(r.g, "p0", "", &a, 1);
    oac_gb_init_i64(r.g, "one", "", &b, 1);
    oac_gb_node(r.g, "Add", NULL, "inc", "p0,one", "position");
    cu_node(r.g, "upd2", "cache,values,position", "out", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "1,2,16,4"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_CAPACITY_OVERFLOW, "upd2", "cache", NULL);
    fx_end(&r);

    /* position + length overflows int64: reported, not wrapped */
    fx_build(&r, NULL);
    dense_model(r.g, "1,2,8,4", true, INT64_MAX - 2);
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_CAPACITY_OVERFLOW, "upd", "cache", NULL);
    ck_assert_ptr_nonnull(strstr(diag_find(r.d, OAC_CAPACITY_OVERFLOW, NULL, NULL, NULL)->message, "overflows"));
    fx_end(&r);
}
END_TEST

START_TEST(test_cache_update_fits)
{
    fx r;
    /* 8 + 8 == 16: fits exactly */
    fx_build(&r, NULL);
    dense_model(r.g, "1,2,8,4", true, 8);
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_eq(diag_count(r.d, OAC_CAPACITY_OVERFLOW), 0);
    ck_assert_uint_eq(unchecked_count(&r, NULL, NULL), 0);
    ck_assert_uint_eq(oac_diags_count_severity(r.d, OAC_SEV_ERROR), 0);
    fx_end(&r);
    /* 0 + 16 */
    fx_build(&r, NULL);
    dense_model(r.g, "1,2,16,4", true, 0);
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_eq(diag_count(r.d, OAC_CAPACITY_OVERFLOW), 0);
    fx_end(&r);
}
END_TEST

START_TEST(test_cache_update_unchecked)
{
    fx r;
    /* position is a graph input: listed, not reported */
    fx_build(&r, NULL);
    dense_model(r.g, "1,2,1,4", false, 0);
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_eq(diag_count(r.d, OAC_CAPACITY_OVERFLOW), 0);
    ck_assert_uint_eq(unchecked_count(&r, "upd", "position is not known"), 1);
    const oac_unchecked *u = oac_analysis_unchecked(r.a, 0);
    ck_assert_str_eq(u->value, "cache");
    ck_assert_str_eq(u->graph, "main");
    fx_end(&r);

    /* capacity symbolic: listed; --dim decides it */
    fx_build(&r, NULL);
    oac_vi_access(r.g, oac_gb_input(r.g, "cache", OAC_T_FLOAT16, "1,2,cap,4"), 1);
    oac_gb_input(r.g, "values", OAC_T_FLOAT16, "1,2,4,4");
    int64_t p = 6;
    oac_gb_constant_i64(r.g, "position", "", &p, 1);
    cu_node(r.g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "1,2,cap,4"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_uint_eq(unchecked_count(&r, "upd", "capacity"), 1);
    fx_end(&r);

    fx_build(&r, NULL);
    oac_vi_access(r.g, oac_gb_input(r.g, "cache", OAC_T_FLOAT16, "1,2,cap,4"), 1);
    oac_gb_input(r.g, "values", OAC_T_FLOAT16, "1,2,4,4");
    oac_gb_constant_i64(r.g, "position", "", &p, 1);
    cu_node(r.g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "1,2,cap,4"), "cache");
    oac_dim_binding d[] = { { "cap", 8 } };
    oac_check_opts o = { .dims = d, .n_dims = 1 };
    ck_assert_int_eq(fx_check(&r, &o), OAC_OK);
    ck_assert_uint_eq(unchecked_count(&r, NULL, NULL), 0);
    diag_expect(r.d, OAC_CAPACITY_OVERFLOW, "upd", "cache", NULL);   /* 6 + 4 > 8 */
    fx_end(&r);
}
END_TEST

static void scatter_model(fx *r, const char *mode, const int64_t *wi, size_t nwi,
                          const char *upd_dims)
{
    oac_vi_access(r->g, oac_gb_input(r->g, "past", OAC_T_FLOAT, "2,4,16,8"), 1);
    oac_gb_input(r->g, "update", OAC_T_FLOAT, upd_dims);
    char inputs[64] = "past,update";
    if (wi) {
        oac_gb_init_i64(r->g, "wi", "2", wi, nwi);
        strcat(inputs, ",wi");
    }
    Onnx__NodeProto *n = oac_gb_node(r->g, "TensorScatter", NULL, "ts", inputs, "present");
    if (mode)
        oac_node_attr_string(r->g, n, "mode", mode);
    oac_node_alias(r->g, n, 0, 0, 1);
    oac_vi_alias_of(r->g, oac_gb_output(r->g, "present", OAC_T_FLOAT, "2,4,16,8"), "past");
}

START_TEST(test_tensor_scatter)
{
    fx r;
    int64_t ok[] = { 3, 12 }, over[] = { 3, 13 }, neg[] = { 0, -2 }, big[] = { 0, 40 };
    /* linear: 13 + 4 > 16 names row 1 */
    fx_build(&r, NULL);
    scatter_model(&r, NULL, over, 2, "2,4,4,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_CAPACITY_OVERFLOW, "ts", "past", NULL);
    ck_assert_ptr_nonnull(strstr(diag_find(r.d, OAC_CAPACITY_OVERFLOW, NULL, NULL, NULL)->message, "[1] = 13"));
    fx_end(&r);
    /* linear fits: 12 + 4 == 16 */
    fx_build(&r, NULL);
    scatter_model(&r, "linear", ok, 2, "2,4,4,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_eq(diag_count(r.d, OAC_CAPACITY_OVERFLOW), 0);
    ck_assert_uint_eq(unchecked_count(&r, NULL, NULL), 0);
    fx_end(&r);
    /* no write_indices: writes at 0, 17 > 16 */
    fx_build(&r, NULL);
    scatter_model(&r, NULL, NULL, 0, "2,4,17,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_CAPACITY_OVERFLOW, "ts", "past", NULL);
    fx_end(&r);
    fx_build(&r, NULL);
    scatter_model(&r, NULL, NULL, 0, "2,4,16,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_eq(diag_count(r.d, OAC_CAPACITY_OVERFLOW), 0);
    fx_end(&r);
    /* circular: an index past the end is fine, a negative one is not */
    fx_build(&r, NULL);
    scatter_model(&r, "circular", big, 2, "2,4,4,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_eq(diag_count(r.d, OAC_CAPACITY_OVERFLOW), 0);
    fx_end(&r);
    fx_build(&r, NULL);
    scatter_model(&r, "circular", neg, 2, "2,4,4,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_CAPACITY_OVERFLOW, "ts", "past", NULL);
    fx_end(&r);
    /* circular: update longer than the cache */
    fx_build(&r, NULL);
    scatter_model(&r, "circular", ok, 2, "2,4,20,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_CAPACITY_OVERFLOW, "ts", "past", NULL);
    fx_end(&r);
    /* write_indices a graph input: unchecked */
    fx_build(&r, NULL);
    oac_vi_access(r.g, oac_gb_input(r.g, "past", OAC_T_FLOAT, "2,4,16,8"), 1);
    oac_gb_input(r.g, "update", OAC_T_FLOAT, "2,4,1,8");
    oac_gb_input(r.g, "wi", OAC_T_INT64, "2");
    Onnx__NodeProto *n = oac_gb_node(r.g, "TensorScatter", NULL, "ts", "past,update,wi", "present");
    oac_node_alias(r.g, n, 0, 0, 1);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "present", OAC_T_FLOAT, "2,4,16,8"), "past");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_uint_eq(unchecked_count(&r, "ts", "write_indices"), 1);
    ck_assert_int_eq(diag_count(r.d, OAC_CAPACITY_OVERFLOW), 0);
    fx_end(&r);
}
END_TEST

static void paged_model(fx *r, int64_t page_id, int64_t pos, const char *vdims)
{
    int32_t allowed[] = { 0 };
    oac_mb_quant_linear(r->mb, "INT8_PAGE", OAC_T_FLOAT16, OAC_T_INT8, 8, 1, 0.05f, 0);
    oac_vi_access(r->g, oac_gb_input_paged(r->g, "pages", OAC_T_FLOAT16, "2,2,16,8",
                                           allowed, 1), 1);
    oac_gb_constant_i64(r->g, "page_id", "", &page_id, 1);
    oac_gb_constant_i64(r->g, "position", "", &pos, 1);
    oac_gb_input(r->g, "values", OAC_T_FLOAT16, vdims);
    Onnx__NodeProto *n = oac_gb_node(r->g, "PagedCacheUpdate", "onnx_alias", "pu",
                                     "pages,page_id,values,position", "out");
    oac_node_alias(r->g, n, 0, 0, 1);
    oac_vi_alias_of(r->g, oac_gb_output_paged(r->g, "out", OAC_T_FLOAT16, "2,2,16,8",
                                              allowed, 1), "pages");
}

START_TEST(test_paged)
{
    fx r;
    fx_build(&r, NULL);
    paged_model(&r, -1, 0, "2,2,1,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_CAPACITY_OVERFLOW, "pu", "pages", NULL);
    ck_assert_ptr_nonnull(strstr(diag_find(r.d, OAC_CAPACITY_OVERFLOW, NULL, NULL, NULL)->message, "page_id -1"));
    fx_end(&r);
    /* page_size 16: 15 + 2 > 16 */
    fx_build(&r, NULL);
    paged_model(&r, 0, 15, "2,2,2,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_CAPACITY_OVERFLOW, "pu", "pages", NULL);
    fx_end(&r);
    /* page_id and position graph inputs: both listed */
    fx_build(&r, NULL);
    {
        int32_t allowed[] = { 0 };
        oac_mb_quant_linear(r.mb, "INT8_PAGE", OAC_T_FLOAT16, OAC_T_INT8, 8, 1, 0.05f, 0);
        oac_vi_access(r.g, oac_gb_input_paged(r.g, "pages", OAC_T_FLOAT16, "2,2,16,8",
                                              allowed, 1), 1);
        oac_gb_input(r.g, "page_id", OAC_T_INT64, "");
        oac_gb_input(r.g, "position", OAC_T_INT64, "");
        oac_gb_input(r.g, "values", OAC_T_FLOAT16, "2,2,1,8");
        Onnx__NodeProto *n = oac_gb_node(r.g, "PagedCacheUpdate", "onnx_alias", "pu",
                                         "pages,page_id,values,position", "out");
        oac_node_alias(r.g, n, 0, 0, 1);
        oac_vi_alias_of(r.g, oac_gb_output_paged(r.g, "out", OAC_T_FLOAT16, "2,2,16,8",
                                                  allowed, 1), "pages");
    }
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_eq(diag_count(r.d, OAC_CAPACITY_OVERFLOW), 0);
    ck_assert_uint_eq(unchecked_count(&r, "pu", "page_id is not known"), 1);
    ck_assert_uint_eq(unchecked_count(&r, "pu", "position is not known"), 1);
    fx_end(&r);
    /* fits: 15 + 1 */
    fx_build(&r, NULL);
    paged_model(&r, 3, 15, "2,2,1,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_eq(diag_count(r.d, OAC_CAPACITY_OVERFLOW), 0);
    ck_assert_uint_eq(unchecked_count(&r, NULL, NULL), 0);
    fx_end(&r);
}
END_TEST

START_TEST(test_in_function_body)
{
    /* A finding inside a local function is reported once per call. */
    fx r;
    fx_build(&r, NULL);
    oac_gb *f = oac_mb_function(r.mb, "local", "Upd", "c,v", "o");
    int64_t p = 30;
    oac_gb_constant_i64(f, "pp", "", &p, 1);
    cu_node(f, "inner", "c,v,pp", "o", true);
    oac_gb_value_info(f, "c", OAC_T_FLOAT, "4,16,2");
    oac_gb_value_info(f, "v", OAC_T_FLOAT, "4,1,2");
    oac_vi_alias_of(f, oac_gb_value_info(f, "o", OAC_T_FLOAT, "4,16,2"), "c");
    oac_mb_opset(r.mb, "local", 1);
    oac_vi_access(r.g, oac_gb_input(r.g, "cache", OAC_T_FLOAT, "4,16,2"), 1);
    oac_gb_input(r.g, "values", OAC_T_FLOAT, "4,1,2");
    oac_gb_node(r.g, "Upd", "local", "call1", "cache,values", "out");
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT, "4,16,2"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_CAPACITY_OVERFLOW, "inner", "c", NULL);
    ck_assert_ptr_nonnull(strstr(diag_find(r.d, OAC_CAPACITY_OVERFLOW, NULL, NULL, NULL)->message, "call1"));
    fx_end(&r);
}
END_TEST

/* ---- case rows: capacity-overflow --------------------------------------- */

static void position_10_length_8(oac_mb *mb) { dense_model(oac_mb_graph(mb), "1,2,8,4", true, 10); }
static void position_negative(oac_mb *mb) { dense_model(oac_mb_graph(mb), "1,2,1,4", true, -1); }
static void position_8_length_8(oac_mb *mb) { dense_model(oac_mb_graph(mb), "1,2,8,4", true, 8); }

/* Issue 10, item 4: a 32-row chunk into a 16-row cache overflows at any
 * position, the position unknown (a graph input); 16 rows may fit. */
static void chunk_32_unknown_position(oac_mb *mb) { dense_model(oac_mb_graph(mb), "1,2,32,4", false, 0); }
static void chunk_16_unknown_position(oac_mb *mb) { dense_model(oac_mb_graph(mb), "1,2,16,4", false, 0); }

/* The same for TensorScatter with write_indices a graph input. */
static void ts_unknown_indices(oac_mb *mb, const char *upd_dims)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "past", OAC_T_FLOAT, "2,4,16,8"), 1);
    oac_gb_input(g, "update", OAC_T_FLOAT, upd_dims);
    oac_gb_input(g, "wi", OAC_T_INT64, "2");
    Onnx__NodeProto *n = oac_gb_node(g, "TensorScatter", NULL, "ts", "past,update,wi", "present");
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "present", OAC_T_FLOAT, "2,4,16,8"), "past");
}
static void ts_chunk_32(oac_mb *mb) { ts_unknown_indices(mb, "2,4,32,8"); }
static void ts_chunk_16(oac_mb *mb) { ts_unknown_indices(mb, "2,4,16,8"); }

/* And a paged update of 17 rows into pages of 16, position unknown. */
static void paged_unknown_position(oac_mb *mb, const char *vdims)
{
    oac_gb *g = oac_mb_graph(mb);
    int32_t allowed[] = { 0 };
    oac_mb_quant_linear(mb, "INT8_PAGE", OAC_T_FLOAT16, OAC_T_INT8, 8, 1, 0.05f, 0);
    oac_vi_access(g, oac_gb_input_paged(g, "pages", OAC_T_FLOAT16, "2,2,16,8",
                                        allowed, 1), 1);
    int64_t zero = 0;
    oac_gb_constant_i64(g, "page_id", "", &zero, 1);
    oac_gb_input(g, "position", OAC_T_INT64, "");
    oac_gb_input(g, "values", OAC_T_FLOAT16, vdims);
    Onnx__NodeProto *n = oac_gb_node(g, "PagedCacheUpdate", "onnx_alias", "pu",
                                     "pages,page_id,values,position", "out");
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output_paged(g, "out", OAC_T_FLOAT16, "2,2,16,8",
                                           allowed, 1), "pages");
}
static void paged_chunk_17(oac_mb *mb) { paged_unknown_position(mb, "2,2,17,8"); }
static void paged_chunk_16(oac_mb *mb) { paged_unknown_position(mb, "2,2,16,8"); }

static const model_case capacity_rows[] = {
    { "chunk_32_unknown_position", chunk_32_unknown_position,
      WANT(OAC_CAPACITY_OVERFLOW), "upd", "cache", "/graph/node/0/input/1" },
    { "chunk_16_unknown_position", chunk_16_unknown_position,
      NEAR(OAC_CAPACITY_OVERFLOW) },
    { "ts_chunk_32", ts_chunk_32, WANT(OAC_CAPACITY_OVERFLOW), "ts", "past",
      "/graph/node/0/input/1" },
    { "ts_chunk_16", ts_chunk_16, NEAR(OAC_CAPACITY_OVERFLOW) },
    { "paged_chunk_17", paged_chunk_17, WANT(OAC_CAPACITY_OVERFLOW), "pu",
      "pages", "/graph/node/1/input/2" },
    { "paged_chunk_16", paged_chunk_16, NEAR(OAC_CAPACITY_OVERFLOW) },
    { "position_10_length_8", position_10_length_8, WANT(OAC_CAPACITY_OVERFLOW), "upd",
      "cache", "/graph/node/1/input/2" },
    { "position_negative", position_negative, WANT(OAC_CAPACITY_OVERFLOW), "upd", "cache",
      NULL },
    /* 8 + 8 fills the 16 rows exactly. */
    { "position_8_length_8", position_8_length_8, NEAR(OAC_CAPACITY_OVERFLOW) },
};
CASES_TEST(capacity_rows)

Suite *test_suite(void)
{
    Suite *s = suite_create("capacity");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_cache_update_overflow);
    tcase_add_test(t, test_cache_update_fits);
    tcase_add_test(t, test_cache_update_unchecked);
    tcase_add_test(t, test_tensor_scatter);
    tcase_add_test(t, test_paged);
    tcase_add_test(t, test_in_function_body);
    ADD_CASES(t, capacity_rows);
    suite_add_tcase(s, t);
    return s;
}

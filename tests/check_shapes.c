/* check_shapes.c: the ShapesContext (lib/check/shapes.c, lib/check/infer.c):
 * declared types, symbols, --dim, per-op inference, alias-class
 * unification (type-/rank-/shape-mismatch), the type parts of
 * operand-invalid and the alias_classes facts (contract 2, 3, 4).
 *
 * Models are made with the builder, loaded from memory and checked with
 * oac_check; inference details are read from the ShapesContext by running
 * the passes up to shapes by hand (fx_infer), which keeps the graph
 * index alive for value lookups.
 */
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/alias.h"
#include "check/graph.h"
#include "check/shapes.h"

/* ---- alias-class unification ---- */

START_TEST(test_class_facts_filled)
{
    fx r;
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,max_len,4");
    cu_node(r.g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "1,2,16,4"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_eq(diag_count(r.d, OAC_SHAPE_MISMATCH), 0);
    ck_assert_int_eq(diag_count(r.d, OAC_TYPE_MISMATCH), 0);
    ck_assert_uint_eq(oac_analysis_class_count(r.a), 1);
    const oac_alias_class *c = oac_analysis_class(r.a, 0);
    ck_assert_str_eq(c->root, "cache");
    ck_assert_int_eq(c->elem_type, OAC_T_FLOAT16);
    ck_assert_int_eq(c->rank, 4);
    /* The output's 16 binds max_len for the whole class. */
    ck_assert_int_eq(c->dims[2], 16);
    ck_assert_str_eq(c->dim_params[2], "max_len");
    ck_assert_ptr_null(c->dim_params[0]);
    ck_assert(c->bytes.known);
    ck_assert_uint_eq(c->bytes.value, 1 * 2 * 16 * 4 * 2);
    ck_assert_int_eq(oac_analysis_dim(r.a, "max_len"), 16);
    fx_end(&r);
}
END_TEST

START_TEST(test_class_bytes_unknown_symbol)
{
    fx r;
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,max_len,4");
    cu_node(r.g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "1,2,max_len,4"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    const oac_alias_class *c = oac_analysis_class(r.a, 0);
    ck_assert_int_eq(c->dims[2], -1);
    ck_assert_str_eq(c->dim_params[2], "max_len");
    ck_assert(!c->bytes.known);
    ck_assert_int_eq(oac_analysis_dim(r.a, "max_len"), -1);
    fx_end(&r);
}
END_TEST

START_TEST(test_type_mismatch)
{
    /* 1: the output declares FLOAT for a FLOAT16 cache. */
    fx r;
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,16,4");
    cu_node(r.g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT, "1,2,16,4"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect_named(r.d, OAC_TYPE_MISMATCH, "type-mismatch", "upd", "out");
    ck_assert_ptr_nonnull(strstr(diag_find(r.d, OAC_TYPE_MISMATCH, NULL, NULL, NULL)->message, "cache"));
    fx_end(&r);

    /* 2: a chain, the middle member declared INT8 in value_info. */
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,16,4");
    cu_node(r.g, "u1", "cache,values,position", "a", true);
    cu_node(r.g, "u2", "a,values,position", "b", true);
    oac_gb_value_info(r.g, "a", OAC_T_INT8, "1,2,16,4");
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "b", OAC_T_FLOAT16, "1,2,16,4"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect_named(r.d, OAC_TYPE_MISMATCH, "type-mismatch", "u1", "a");
    fx_end(&r);

    /* 3: a paged cache whose update output is declared a dense tensor. */
    int32_t allowed[] = { 0 };
    fx_build(&r, NULL);
    oac_mb_quant_linear(r.mb, "INT8_PAGE", OAC_T_FLOAT16, OAC_T_INT8, 8, 1, 0.05f, 0);
    oac_vi_access(r.g, oac_gb_input_paged(r.g, "pages", OAC_T_FLOAT16, "2,2,16,8",
                                          allowed, 1), 1);
    oac_gb_input(r.g, "page_id", OAC_T_INT64, "");
    oac_gb_input(r.g, "values", OAC_T_FLOAT16, "2,2,1,8");
    oac_gb_input(r.g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *n = oac_gb_node(r.g, "PagedCacheUpdate", "onnx_alias", "pu",
                                     "pages,page_id,values,position", "out");
    oac_node_alias(r.g, n, 0, 0, 1);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "2,2,16,8"), "pages");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect_named(r.d, OAC_TYPE_MISMATCH, "type-mismatch", "pu", "out");
    fx_end(&r);
}
END_TEST

START_TEST(test_rank_mismatch)
{
    fx r;
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,16,4");
    cu_node(r.g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "2,16,4"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect_named(r.d, OAC_RANK_MISMATCH, "rank-mismatch", "upd", "out");
    fx_end(&r);

    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,16,4");
    cu_node(r.g, "u1", "cache,values,position", "a", true);
    cu_node(r.g, "u2", "a,values,position", "b", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "b", OAC_T_FLOAT16, "1,1,2,16,4"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect_named(r.d, OAC_RANK_MISMATCH, "rank-mismatch", "u2", "b");
    ck_assert_int_eq(diag_count(r.d, OAC_RANK_MISMATCH), 1);
    fx_end(&r);
}
END_TEST

START_TEST(test_shape_mismatch_static)
{
    fx r;
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,16,4");
    cu_node(r.g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "1,2,32,4"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_SHAPE_MISMATCH, "upd", "out", NULL);
    const oac_diag *x = diag_find(r.d, OAC_SHAPE_MISMATCH, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(strstr(x->message, "32"));
    ck_assert_ptr_nonnull(strstr(x->message, "16"));
    ck_assert_ptr_nonnull(strstr(x->message, "cache"));
    fx_end(&r);
}
END_TEST

START_TEST(test_shape_mismatch_symbol_twice)
{
    /* max_len is bound to 16 by one member and 32 by another. */
    fx r;
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,max_len,4");
    cu_node(r.g, "u1", "cache,values,position", "a", true);
    cu_node(r.g, "u2", "a,values,position", "b", true);
    oac_gb_value_info(r.g, "a", OAC_T_FLOAT16, "1,2,16,4");
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "b", OAC_T_FLOAT16, "1,2,32,4"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_ge(diag_count(r.d, OAC_SHAPE_MISMATCH), 1);
    const oac_diag *x = diag_find(r.d, OAC_SHAPE_MISMATCH, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(x->value);
    /* Both places named. */
    ck_assert_ptr_nonnull(strstr(x->message, "16"));
    ck_assert_ptr_nonnull(strstr(x->message, "32"));
    ck_assert_ptr_nonnull(strstr(x->message, "'a'"));
    ck_assert_ptr_nonnull(strstr(x->message, "'b'"));
    ck_assert_int_eq(x->severity, OAC_SEV_ERROR);
    fx_end(&r);
}
END_TEST

START_TEST(test_unknown_dims_unify_quietly)
{
    /* '?' and symbols join without findings; what one member knows holds
     * for all. */
    fx r;
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,?,S,4");
    cu_node(r.g, "u1", "cache,values,position", "a", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "a", OAC_T_FLOAT16, "1,2,8,?"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_eq(diag_count(r.d, OAC_SHAPE_MISMATCH), 0);
    const oac_alias_class *c = oac_analysis_class(r.a, 0);
    ck_assert_int_eq(c->dims[1], 2);
    ck_assert_int_eq(c->dims[2], 8);
    ck_assert_int_eq(c->dims[3], 4);
    ck_assert(c->bytes.known);
    fx_end(&r);
}
END_TEST

START_TEST(test_bytes_overflow_unknown)
{
    fx r;
    fx_build(&r, NULL);
    oac_vi_access(r.g, oac_gb_input(r.g, "cache", OAC_T_FLOAT, "1099511627776,1099511627776"), 1);
    oac_gb_input(r.g, "values", OAC_T_FLOAT, "1099511627776,1");
    oac_gb_input(r.g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *n = cu_node(r.g, "upd", "cache,values,position", "out", true);
    oac_node_attr_int(r.g, n, "axis", -1);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT, "1099511627776,1099511627776"),
                    "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    const oac_alias_class *c = oac_analysis_class(r.a, 0);
    ck_assert_int_eq(c->dims[0], 1099511627776LL);
    ck_assert(!c->bytes.known);   /* 2^80 * 4 does not fit: unknown, no wrap */
    ck_assert(!oac_analysis_plan(r.a)->persistent_cache_bytes.known);
    fx_end(&r);
}
END_TEST

/* ---- --dim ---- */

START_TEST(test_dim_usage_errors)
{
    struct { oac_dim_binding b[2]; size_t n; const char *msg; } cases[] = {
        { { { "nope", 4 } }, 1, "nope" },                  /* unknown name */
        { { { "max_len", -3 } }, 1, "must not be negative" },
        { { { "max_len", 8 }, { "max_len", 9 } }, 2, "twice" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fx r;
        fx_build(&r, NULL);
        cu_f16_inputs(r.g, "1,2,max_len,4");
        cu_node(r.g, "upd", "cache,values,position", "out", true);
        oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "1,2,max_len,4"), "cache");
        oac_check_opts o = { .dims = cases[i].b, .n_dims = cases[i].n };
        ck_assert_int_eq(fx_check(&r, &o), OAC_EINVAL);
        ck_assert_ptr_nonnull(strstr(oac_errmsg(r.ctx), cases[i].msg));
        ck_assert_ptr_null(r.a);
        fx_end(&r);
    }
    /* The same value twice is fine. */
    fx r;
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,max_len,4");
    cu_node(r.g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "1,2,max_len,4"), "cache");
    oac_dim_binding same[] = { { "max_len", 8 }, { "max_len", 8 } };
    oac_check_opts o = { .dims = same, .n_dims = 2 };
    ck_assert_int_eq(fx_check(&r, &o), OAC_OK);
    ck_assert_int_eq(oac_analysis_dim(r.a, "max_len"), 8);
    ck_assert_uint_eq(oac_analysis_class(r.a, 0)->bytes.value, 1 * 2 * 8 * 4 * 2);
    ck_assert_uint_eq(oac_diags_count_severity(r.d, OAC_SEV_ERROR), 0);
    fx_end(&r);
}
END_TEST

/* A --dim name the model has (model/names.c) in a type the shapes pass
 * does not read, an optional's element here, binds nothing and is no
 * usage error: the command line let it through, so refusing it here
 * was a usage error after other models' reports had been written. */
START_TEST(test_dim_in_unread_type)
{
    fx r;
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,max_len,4");
    cu_node(r.g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "1,2,max_len,4"), "cache");
    oac_vi_optional(r.g, oac_gb_input(r.g, "maybe", OAC_T_FLOAT, "OPT"));
    oac_dim_binding b[] = { { "OPT", 5 }, { "max_len", 8 } };
    oac_check_opts opts = { .dims = b, .n_dims = 2 };
    ck_assert_msg(fx_check(&r, &opts) == OAC_OK, "%s", oac_errmsg(r.ctx));
    ck_assert_int_eq(oac_analysis_dim(r.a, "max_len"), 8);
    ck_assert_uint_eq(oac_diags_count_severity(r.d, OAC_SEV_ERROR), 0);
    fx_end(&r);
}
END_TEST

START_TEST(test_dim_contradicts_static)
{
    /* --dim max_len=8 but a member declares 16: shape-mismatch naming
     * the option and the value. */
    fx r;
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,max_len,4");
    cu_node(r.g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "1,2,16,4"), "cache");
    oac_dim_binding b[] = { { "max_len", 8 } };
    oac_check_opts o = { .dims = b, .n_dims = 1 };
    ck_assert_int_eq(fx_check(&r, &o), OAC_OK);
    diag_expect(r.d, OAC_SHAPE_MISMATCH, NULL, "out", NULL);
    const oac_diag *x = diag_find(r.d, OAC_SHAPE_MISMATCH, NULL, "out", NULL);
    ck_assert_ptr_nonnull(strstr(x->message, "--dim max_len=8"));
    ck_assert_ptr_nonnull(strstr(x->message, "16"));
    fx_end(&r);

    /* Same through inference: a Reshape makes 12 where --dim says 6. */
    fx_build(&r, NULL);
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "3,4");
    int64_t shp[] = { 12 };
    oac_gb_init_i64(r.g, "shp", "1", shp, 1);
    oac_gb_node(r.g, "Reshape", NULL, "flat", "x,shp", "y");
    oac_gb_output(r.g, "y", OAC_T_FLOAT, "n");
    oac_dim_binding b2[] = { { "n", 6 } };
    oac_check_opts o2 = { .dims = b2, .n_dims = 1 };
    ck_assert_int_eq(fx_check(&r, &o2), OAC_OK);
    diag_expect(r.d, OAC_SHAPE_MISMATCH, "flat", "y", NULL);
    fx_end(&r);
}
END_TEST

/* Issue 10, item 4: --dim past_seq_len=8 --dim total_seq_len=9 on
 * symbols an alias class unifies (the cache and its update) contradict
 * each other: the finding names both options as given and says where
 * the two meet (the update's output: node, value, location). */
static void unified_symbols(oac_gb *g)
{
    cu_f16_inputs(g, "1,2,past_seq_len,4");
    cu_node(g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(g, oac_gb_output(g, "out", OAC_T_FLOAT16, "1,2,total_seq_len,4"),
                    "cache");
}

START_TEST(test_dim_options_contradict)
{
    fx r;
    fx_build(&r, NULL);
    unified_symbols(r.g);
    oac_dim_binding b[] = { { "past_seq_len", 8 }, { "total_seq_len", 9 } };
    oac_check_opts o = { .dims = b, .n_dims = 2 };
    ck_assert_int_eq(fx_check(&r, &o), OAC_OK);
    const oac_diag *x = diag_expect(r.d, OAC_SHAPE_MISMATCH, "upd", "out",
                                    "/graph/node/0/output/0");
    ck_assert_msg(strstr(x->message, "--dim past_seq_len=8") &&
                  strstr(x->message, "--dim total_seq_len=9"), "%s", x->message);
    ck_assert_uint_eq(diag_count(r.d, OAC_SHAPE_MISMATCH), 1);
    fx_end(&r);

    /* Agreeing values bind both. */
    fx_build(&r, NULL);
    unified_symbols(r.g);
    oac_dim_binding same[] = { { "past_seq_len", 8 }, { "total_seq_len", 8 } };
    oac_check_opts o2 = { .dims = same, .n_dims = 2 };
    ck_assert_int_eq(fx_check(&r, &o2), OAC_OK);
    diag_expect_clean(r.d);
    fx_end(&r);
}
END_TEST

/* ---- inference ---- */

START_TEST(test_infer_ops)
{
    char b[128];
    fx r;
    fx_build(&r, NULL);
    oac_gb *g = r.g;
    oac_gb_input(g, "x", OAC_T_FLOAT, "B,3,4");
    oac_gb_input(g, "w", OAC_T_FLOAT, "4,5");
    oac_gb_node(g, "MatMul", NULL, "mm", "x,w", "xw");                   /* B,3,5 */
    int64_t perm[] = { 0, 2, 1 };
    Onnx__NodeProto *t = oac_gb_node(g, "Transpose", NULL, "tr", "xw", "xt"); /* B,5,3 */
    oac_node_attr_ints(g, t, "perm", perm, 3);
    int64_t shp[] = { 0, -1 };
    oac_gb_init_i64(g, "shp", "2", shp, 2);
    oac_gb_node(g, "Reshape", NULL, "rs", "xt,shp", "xr");              /* B,? (B unknown) */
    oac_gb_node(g, "Add", NULL, "add", "xw,bias", "sum");                /* B,3,5 */
    oac_gb_input(g, "bias", OAC_T_FLOAT, "5");
    Onnx__NodeProto *c = oac_gb_node(g, "Concat", NULL, "cat", "xw,xw", "cc"); /* B,3,10 */
    oac_node_attr_int(g, c, "axis", -1);
    int64_t st[] = { 1 }, en[] = { 100 }, ax[] = { 2 };
    oac_gb_init_i64(g, "st", "1", st, 1);
    oac_gb_init_i64(g, "en", "1", en, 1);
    oac_gb_init_i64(g, "ax", "1", ax, 1);
    oac_gb_node(g, "Slice", NULL, "sl", "cc,st,en,ax", "sc");            /* B,3,9 */
    oac_gb_node(g, "Softmax", NULL, "sm", "sc", "p");                    /* B,3,9 */
    oac_gb_input(g, "ids", OAC_T_INT64, "7");
    oac_gb_input(g, "emb", OAC_T_FLOAT, "16,8");
    oac_gb_node(g, "Gather", NULL, "ga", "emb,ids", "e");                /* 7,8 */
    oac_gb_node(g, "Shape", NULL, "sh", "x", "xs");                      /* 3 */
    oac_gb_node(g, "Size", NULL, "sz", "x", "xn");                       /* scalar */
    int64_t one[] = { 1 };
    oac_gb_init_i64(g, "one", "1", one, 1);
    oac_gb_node(g, "Unsqueeze", NULL, "us", "e,one", "eu");              /* 7,1,8 */
    oac_gb_node(g, "Squeeze", NULL, "sq", "eu,one", "es");               /* 7,8 */
    Onnx__NodeProto *ca = oac_gb_node(g, "Cast", NULL, "ca", "e", "e16");
    oac_node_attr_int(g, ca, "to", OAC_T_FLOAT16);
    oac_gb_node(g, "Neg", NULL, "ng", "e16", "en16");
    oac_gb_node(g, "Mystery", "some.domain", "my", "e", "mys");          /* unknown op */
    oac_gb_output(g, "p", OAC_T_FLOAT, NULL);
    ck_assert_int_eq(fx_infer(&r, NULL), OAC_OK);
    ck_assert_str_eq(dims_of(&r, "xw", b, sizeof b), "B,3,5");
    ck_assert_str_eq(dims_of(&r, "xt", b, sizeof b), "B,5,3");
    ck_assert_str_eq(dims_of(&r, "xr", b, sizeof b), "B,?");
    ck_assert_str_eq(dims_of(&r, "sum", b, sizeof b), "B,3,5");
    ck_assert_str_eq(dims_of(&r, "cc", b, sizeof b), "B,3,10");
    ck_assert_str_eq(dims_of(&r, "sc", b, sizeof b), "B,3,9");
    ck_assert_str_eq(dims_of(&r, "p", b, sizeof b), "B,3,9");
    ck_assert_str_eq(dims_of(&r, "e", b, sizeof b), "7,8");
    ck_assert_str_eq(dims_of(&r, "xs", b, sizeof b), "3");
    ck_assert_str_eq(dims_of(&r, "xn", b, sizeof b), "");
    ck_assert_str_eq(dims_of(&r, "eu", b, sizeof b), "7,1,8");
    ck_assert_str_eq(dims_of(&r, "es", b, sizeof b), "7,8");
    ck_assert_int_eq(elem_of(&r, "e16"), OAC_T_FLOAT16);
    ck_assert_str_eq(dims_of(&r, "en16", b, sizeof b), "7,8");
    ck_assert_int_eq(elem_of(&r, "xs"), OAC_T_INT64);
    ck_assert_str_eq(dims_of(&r, "mys", b, sizeof b), "none");
    ck_assert_int_eq(elem_of(&r, "mys"), 0);
    ck_assert_uint_eq(oac_diags_count(r.d), 0);
    fx_end(&r);
}
END_TEST

START_TEST(test_infer_reshape_minus_one_and_dim)
{
    char b[128];
    fx r;
    fx_build(&r, NULL);
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "B,3,4");
    int64_t shp[] = { 0, -1 };
    oac_gb_init_i64(r.g, "shp", "2", shp, 2);
    oac_gb_node(r.g, "Reshape", NULL, "rs", "x,shp", "y");
    int64_t shp2[] = { -1, 3, 0 };
    oac_gb_init_i64(r.g, "shp2", "3", shp2, 3);
    oac_gb_node(r.g, "Reshape", NULL, "rs2", "x,shp2", "z");
    oac_dim_binding d[] = { { "B", 5 } };
    oac_check_opts o = { .dims = d, .n_dims = 1 };
    ck_assert_int_eq(fx_infer(&r, &o), OAC_OK);
    ck_assert_str_eq(dims_of(&r, "x", b, sizeof b), "5,3,4");
    ck_assert_str_eq(dims_of(&r, "y", b, sizeof b), "5,12");
    ck_assert_str_eq(dims_of(&r, "z", b, sizeof b), "5,3,4");
    fx_end(&r);
}
END_TEST

START_TEST(test_infer_broadcast_and_matmul_vectors)
{
    char b[128];
    fx r;
    fx_build(&r, NULL);
    oac_gb_input(r.g, "a", OAC_T_FLOAT, "2,1,4");
    oac_gb_input(r.g, "c", OAC_T_FLOAT, "3,1");
    oac_gb_input(r.g, "v", OAC_T_FLOAT, "4");
    oac_gb_input(r.g, "m", OAC_T_FLOAT, "4,6");
    oac_gb_node(r.g, "Mul", NULL, "mul", "a,c", "ac");     /* 2,3,4 */
    oac_gb_node(r.g, "MatMul", NULL, "mv", "v,m", "vm");   /* 6 */
    oac_gb_node(r.g, "MatMul", NULL, "am", "a,m", "amm");  /* 2,1,6 */
    oac_gb_node(r.g, "Max", NULL, "mx", "a,c,v", "mxo");   /* 2,3,4 */
    ck_assert_int_eq(fx_infer(&r, NULL), OAC_OK);
    ck_assert_str_eq(dims_of(&r, "ac", b, sizeof b), "2,3,4");
    ck_assert_str_eq(dims_of(&r, "vm", b, sizeof b), "6");
    ck_assert_str_eq(dims_of(&r, "amm", b, sizeof b), "2,1,6");
    ck_assert_str_eq(dims_of(&r, "mxo", b, sizeof b), "2,3,4");
    fx_end(&r);
}
END_TEST

START_TEST(test_infer_cache_ops_and_constant)
{
    char b[128];
    fx r;
    fx_build(&r, NULL);
    cu_f16_inputs(r.g, "1,2,16,4");
    int64_t pos[] = { 3 };
    oac_gb_constant_i64(r.g, "p3", "", pos, 1);
    cu_node(r.g, "upd", "cache,values,p3", "out", true);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, NULL), "cache");
    ck_assert_int_eq(fx_infer(&r, NULL), OAC_OK);
    ck_assert_str_eq(dims_of(&r, "out", b, sizeof b), "1,2,16,4");
    ck_assert_int_eq(elem_of(&r, "out"), OAC_T_FLOAT16);
    ck_assert_str_eq(dims_of(&r, "p3", b, sizeof b), "");
    ck_assert_int_eq(elem_of(&r, "p3"), OAC_T_INT64);
    fx_end(&r);
}
END_TEST

START_TEST(test_infer_subgraph_and_function_scopes)
{
    /* Inference runs in every scope: an If branch reading an outer value
     * and a local function body. */
    fx r;
    fx_build(&r, NULL);
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "2,3");
    oac_gb_input(r.g, "cond", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(r.g, "If", NULL, "br", "cond", "y");
    oac_gb *t = oac_node_attr_graph(r.g, n, "then_branch", "then");
    oac_gb_node(t, "Neg", NULL, "neg", "x", "ty");
    oac_gb_output(t, "ty", OAC_T_FLOAT, NULL);
    oac_gb *e = oac_node_attr_graph(r.g, n, "else_branch", "else");
    oac_gb_node(e, "Identity", NULL, "id", "x", "ey");
    oac_gb_output(e, "ey", OAC_T_FLOAT, NULL);
    oac_gb_output(r.g, "y", OAC_T_FLOAT, NULL);
    ck_assert_int_eq(fx_infer(&r, NULL), OAC_OK);
    oac_graphs *gs = r.st.graphs;
    ck_assert_uint_ge(gs->n_scopes, 3);
    oac_value *ty = oac_scope_local(gs->scopes[1], "ty");
    if (!ty)
        ty = oac_scope_local(gs->scopes[2], "ty");
    ck_assert_ptr_nonnull(ty);
    const oac_vshape *s = oac_shapes_value(r.st.shapes, ty->id);
    ck_assert_int_eq(s->rank, 2);
    ck_assert_int_eq(oac_shapes_dim(r.st.shapes, s->dims[1]), 3);
    fx_end(&r);

    /* A local function body: its inputs typed by value_info. */
    fx_build(&r, NULL);
    oac_gb *f = oac_mb_function(r.mb, "local", "F", "a", "b");
    oac_gb_value_info(f, "a", OAC_T_FLOAT, "5,K");
    Onnx__NodeProto *tn = oac_gb_node(f, "Transpose", NULL, "tr", "a", "b");
    int64_t perm[] = { 1, 0 };
    oac_node_attr_ints(f, tn, "perm", perm, 2);
    oac_mb_opset(r.mb, "local", 1);
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "5,K");
    oac_gb_node(r.g, "F", "local", "call", "x", "y");
    oac_gb_output(r.g, "y", OAC_T_FLOAT, NULL);
    ck_assert_int_eq(fx_infer(&r, NULL), OAC_OK);
    oac_scope *fs = r.st.graphs->functions[0];
    ck_assert_ptr_nonnull(fs);
    oac_value *b = oac_scope_local(fs, "b");
    ck_assert_ptr_nonnull(b);
    s = oac_shapes_value(r.st.shapes, b->id);
    ck_assert_int_eq(s->rank, 2);
    ck_assert_str_eq(oac_shapes_dim_name(r.st.shapes, s->dims[0]), "K");
    ck_assert_int_eq(oac_shapes_dim(r.st.shapes, s->dims[1]), 5);
    fx_end(&r);
}
END_TEST

START_TEST(test_hostile_inference)
{
    /* Overflowing products and sums, extreme slice parameters, absurd
     * ranks and negative dims: unknown, never wrapped, never a crash. */
    char b[256];
    fx r;
    fx_build(&r, NULL);
    oac_gb *g = r.g;
    oac_gb_input(g, "x", OAC_T_FLOAT, "4611686018427387904,4");
    int64_t shp[] = { -1 };
    oac_gb_init_i64(g, "shp", "1", shp, 1);
    oac_gb_node(g, "Reshape", NULL, "rs", "x,shp", "flat");          /* 2^62*4 overflows */
    oac_gb_input(g, "y", OAC_T_FLOAT, "9223372036854775807,2");
    Onnx__NodeProto *c = oac_gb_node(g, "Concat", NULL, "cat", "y,y", "yy");
    oac_node_attr_int(g, c, "axis", 0);                                /* sum overflows */
    int64_t st[] = { INT64_MAX }, en[] = { INT64_MIN }, ax[] = { 1 }, sp[] = { INT64_MIN };
    oac_gb_init_i64(g, "st", "1", st, 1);
    oac_gb_init_i64(g, "en", "1", en, 1);
    oac_gb_init_i64(g, "ax", "1", ax, 1);
    oac_gb_init_i64(g, "sp", "1", sp, 1);
    oac_gb_node(g, "Slice", NULL, "sl", "x,st,en,ax,sp", "xs");        /* len 1 */
    int64_t bad_axis[] = { 99 };
    oac_gb_init_i64(g, "bax", "1", bad_axis, 1);
    oac_gb_node(g, "Slice", NULL, "sl2", "x,st,en,bax", "xs2");        /* unknown */
    oac_gb_node(g, "Unsqueeze", NULL, "us", "x,bax", "xu");            /* unknown */
    int64_t perm[] = { 0, 7 };
    Onnx__NodeProto *t = oac_gb_node(g, "Transpose", NULL, "tr", "x", "xt");
    oac_node_attr_ints(g, t, "perm", perm, 2);                        /* unknown */
    /* rank 70 declaration: beyond OAC_SHAPE_MAX_RANK, rank unknown */
    char dims[256] = "";
    for (int i = 0; i < 70; i++)
        strcat(dims, i ? ",1" : "1");
    oac_gb_input(g, "deep", OAC_T_FLOAT, dims);
    oac_gb_node(g, "Neg", NULL, "ng", "deep", "deepn");
    ck_assert_int_eq(fx_infer(&r, NULL), OAC_OK);
    ck_assert_str_eq(dims_of(&r, "flat", b, sizeof b), "?");
    ck_assert_str_eq(dims_of(&r, "yy", b, sizeof b), "?,2");
    ck_assert_str_eq(dims_of(&r, "xs", b, sizeof b), "4611686018427387904,1");
    ck_assert_str_eq(dims_of(&r, "xs2", b, sizeof b), "none");
    ck_assert_str_eq(dims_of(&r, "xu", b, sizeof b), "none");
    ck_assert_str_eq(dims_of(&r, "xt", b, sizeof b), "none");
    ck_assert_str_eq(dims_of(&r, "deepn", b, sizeof b), "none");
    fx_end(&r);
}
END_TEST

static const oac_vshape *vshape_of(fx *r, const char *name)
{
    oac_value *v = oac_scope_local(r->st.graphs->scopes[0], name);
    ck_assert_msg(v != NULL, "no value %s", name);
    return oac_shapes_value(r->st.shapes, v->id);
}

START_TEST(test_infer_rule_memo_and_shared_dims)
{
    /* Unknown operator types sharing the first bytes of "Sqrt" fill the
     * rule memo's probes: Sqrt itself still gets its rule.  Equal shapes
     * share one dims array (check/shapes.h invariant 7), whether declared,
     * copied from an input or built by a rule. */
    char b[128];
    fx r;
    fx_build(&r, NULL);
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "2,3");
    oac_gb_input(r.g, "y", OAC_T_FLOAT, "2,3");
    const char *odd[] = { "Sqrt1", "Sqrt2", "Sqrt3", "Sqrt4", "Sqrt5", "Sqrt6" };
    char out[16];
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        snprintf(out, sizeof out, "u%zu", i);
        oac_gb_node(r.g, odd[i], NULL, NULL, "x", out);
    }
    oac_gb_node(r.g, "Sqrt", NULL, "sq", "x", "z");
    oac_gb_node(r.g, "Neg", NULL, "ng", "z", "zn");
    oac_gb_node(r.g, "Transpose", NULL, "t1", "x", "xt1");
    oac_gb_node(r.g, "Transpose", NULL, "t2", "y", "xt2");
    oac_gb_node(r.g, "Add", NULL, "ad", "x,y", "xy");
    ck_assert_int_eq(fx_infer(&r, NULL), OAC_OK);
    ck_assert_str_eq(dims_of(&r, "u0", b, sizeof b), "none");
    ck_assert_str_eq(dims_of(&r, "u5", b, sizeof b), "none");
    ck_assert_str_eq(dims_of(&r, "z", b, sizeof b), "2,3");
    ck_assert_str_eq(dims_of(&r, "zn", b, sizeof b), "2,3");
    ck_assert_str_eq(dims_of(&r, "xt1", b, sizeof b), "3,2");
    ck_assert_str_eq(dims_of(&r, "xy", b, sizeof b), "2,3");
    const oac_dimref *d = vshape_of(&r, "x")->dims;
    ck_assert_ptr_eq(vshape_of(&r, "y")->dims, d);
    ck_assert_ptr_eq(vshape_of(&r, "zn")->dims, d);
    ck_assert_ptr_eq(vshape_of(&r, "xy")->dims, d);
    ck_assert_ptr_eq(vshape_of(&r, "xt2")->dims, vshape_of(&r, "xt1")->dims);
    ck_assert_ptr_ne(vshape_of(&r, "xt1")->dims, d);
    fx_end(&r);
}
END_TEST

/* ---- operand-invalid (type parts, contract 2) ---- */

/* One CacheUpdate model per row, varying one operand; each must be
 * operand-invalid naming that operand. */
static const struct {
    const char *why;
    int32_t cache_t, values_t, pos_t;
    const char *values_dims, *pos_dims;
    int64_t axis;            /* 0: attribute absent */
    const char *value;       /* the operand the finding names */
} bad_operands[] = {
    { "values of another element type", OAC_T_FLOAT16, OAC_T_FLOAT, OAC_T_INT64,
      "1,2,1,4", "", 0, "values" },
    { "values differ off the axis", OAC_T_FLOAT16, OAC_T_FLOAT16, OAC_T_INT64,
      "1,3,1,4", "", 0, "values" },
    { "values of another rank", OAC_T_FLOAT16, OAC_T_FLOAT16, OAC_T_INT64,
      "2,1,4", "", 0, "values" },
    { "position INT32", OAC_T_FLOAT16, OAC_T_FLOAT16, OAC_T_INT32,
      "1,2,1,4", "", 0, "position" },
    { "position [2]", OAC_T_FLOAT16, OAC_T_FLOAT16, OAC_T_INT64,
      "1,2,1,4", "2", 0, "position" },
    { "position [1,1]", OAC_T_FLOAT16, OAC_T_FLOAT16, OAC_T_INT64,
      "1,2,1,4", "1,1", 0, "position" },
    { "position FLOAT without shape: the type alone decides", OAC_T_FLOAT16,
      OAC_T_FLOAT16, OAC_T_FLOAT, "1,2,1,4", NULL, 0, "position" },
    { "axis out of range", OAC_T_FLOAT16, OAC_T_FLOAT16, OAC_T_INT64,
      "1,2,1,4", "", 4, "cache" },
    { "STRING cache is not numeric", OAC_T_STRING, OAC_T_STRING, OAC_T_INT64,
      "1,2,1,4", "", 0, "cache" },
};

START_TEST(test_operand_cache_update)
{
    for (size_t i = 0; i < sizeof bad_operands / sizeof bad_operands[0]; i++) {
        fx r;
        fx_build(&r, NULL);
        oac_vi_access(r.g, oac_gb_input(r.g, "cache", bad_operands[i].cache_t, "1,2,16,4"), 1);
        oac_gb_input(r.g, "values", bad_operands[i].values_t, bad_operands[i].values_dims);
        oac_gb_input(r.g, "position", bad_operands[i].pos_t, bad_operands[i].pos_dims);
        Onnx__NodeProto *n = cu_node(r.g, "upd", "cache,values,position", "out", true);
        if (bad_operands[i].axis)
            oac_node_attr_int(r.g, n, "axis", bad_operands[i].axis);
        oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", bad_operands[i].cache_t, "1,2,16,4"),
                        "cache");
        ck_assert_msg(fx_check(&r, NULL) == OAC_OK, "%s", bad_operands[i].why);
        diag_expect(r.d, OAC_OPERAND_INVALID, "upd", bad_operands[i].value, NULL);
        fx_end(&r);
    }
}
END_TEST

START_TEST(test_operand_valid_near_misses)
{
    /* position [1], axis -1 with values differing only there, symbols. */
    fx r;
    fx_build(&r, NULL);
    oac_vi_access(r.g, oac_gb_input(r.g, "cache", OAC_T_FLOAT16, "B,2,4,16"), 1);
    oac_gb_input(r.g, "values", OAC_T_FLOAT16, "B,2,4,3");
    oac_gb_input(r.g, "position", OAC_T_INT64, "1");
    Onnx__NodeProto *n = cu_node(r.g, "upd", "cache,values,position", "out", true);
    oac_node_attr_int(r.g, n, "axis", -1);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT16, "B,2,4,16"), "cache");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_eq(diag_count(r.d, OAC_OPERAND_INVALID), 0);
    ck_assert_int_eq(diag_count(r.d, OAC_SHAPE_MISMATCH), 0);
    ck_assert_int_eq(diag_count(r.d, OAC_TYPE_MISMATCH), 0);
    ck_assert_int_eq(diag_count(r.d, OAC_RANK_MISMATCH), 0);
    fx_end(&r);
}
END_TEST

START_TEST(test_operand_tensor_scatter)
{
    /* write_indices INT32 */
    fx r;
    fx_build(&r, NULL);
    oac_vi_access(r.g, oac_gb_input(r.g, "past", OAC_T_FLOAT, "2,4,16,8"), 1);
    oac_gb_input(r.g, "upd", OAC_T_FLOAT, "2,4,1,8");
    oac_gb_input(r.g, "wi", OAC_T_INT32, "2");
    Onnx__NodeProto *n = oac_gb_node(r.g, "TensorScatter", NULL, "ts", "past,upd,wi", "present");
    oac_node_alias(r.g, n, 0, 0, 1);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "present", OAC_T_FLOAT, "2,4,16,8"), "past");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_OPERAND_INVALID, "ts", "wi", NULL);
    fx_end(&r);

    /* write_indices [3] for batch 2; and a bad mode */
    fx_build(&r, NULL);
    oac_vi_access(r.g, oac_gb_input(r.g, "past", OAC_T_FLOAT, "2,4,16,8"), 1);
    oac_gb_input(r.g, "upd", OAC_T_FLOAT, "2,4,1,8");
    oac_gb_input(r.g, "wi", OAC_T_INT64, "3");
    n = oac_gb_node(r.g, "TensorScatter", NULL, "ts", "past,upd,wi", "present");
    oac_node_alias(r.g, n, 0, 0, 1);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "present", OAC_T_FLOAT, "2,4,16,8"), "past");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_OPERAND_INVALID, "ts", "wi", NULL);
    fx_end(&r);

    fx_build(&r, NULL);
    oac_vi_access(r.g, oac_gb_input(r.g, "past", OAC_T_FLOAT, "2,4,16,8"), 1);
    oac_gb_input(r.g, "upd", OAC_T_FLOAT, "2,4,1,8");
    n = oac_gb_node(r.g, "TensorScatter", NULL, "ts", "past,upd", "present");
    oac_node_attr_string(r.g, n, "mode", "sideways");
    oac_node_alias(r.g, n, 0, 0, 1);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "present", OAC_T_FLOAT, "2,4,16,8"), "past");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_OPERAND_INVALID, "ts", NULL, NULL);
    /* One rule, one finding: the attribute, at its location. */
    ck_assert_int_eq(diag_count(r.d, OAC_OPERAND_INVALID), 1);
    ck_assert_ptr_nonnull(strstr(diag_find(r.d, OAC_OPERAND_INVALID, NULL, NULL, NULL)->message,
                                 "attribute 'mode' must be one of"));
    fx_end(&r);

    /* valid: INT64 [2], circular */
    fx_build(&r, NULL);
    oac_vi_access(r.g, oac_gb_input(r.g, "past", OAC_T_FLOAT, "2,4,16,8"), 1);
    oac_gb_input(r.g, "upd", OAC_T_FLOAT, "2,4,1,8");
    oac_gb_input(r.g, "wi", OAC_T_INT64, "2");
    n = oac_gb_node(r.g, "TensorScatter", NULL, "ts", "past,upd,wi", "present");
    oac_node_attr_string(r.g, n, "mode", "circular");
    oac_node_alias(r.g, n, 0, 0, 1);
    oac_vi_alias_of(r.g, oac_gb_output(r.g, "present", OAC_T_FLOAT, "2,4,16,8"), "past");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_eq(diag_count(r.d, OAC_OPERAND_INVALID), 0);
    fx_end(&r);
}
END_TEST

/* A PagedCacheUpdate "pu" of pages -> out (output_alias 0 <- 0, out
 * alias_of pages) whose pages are a paged cache of INT8_PAGE pages
 * (paged) or a dense FLOAT16 tensor, of the given shape; page_id of
 * page_id_type, values of values_shape. */
static void paged_update(fx *r, bool paged, const char *shape,
                         int32_t page_id_type, const char *values_shape)
{
    int32_t allowed[] = { 0 };
    if (paged) {
        oac_mb_quant_linear(r->mb, "INT8_PAGE", OAC_T_FLOAT16, OAC_T_INT8, 8, 1, 0.05f, 0);
        oac_vi_access(r->g, oac_gb_input_paged(r->g, "pages", OAC_T_FLOAT16, shape,
                                               allowed, 1), 1);
    } else {
        oac_vi_access(r->g, oac_gb_input(r->g, "pages", OAC_T_FLOAT16, shape), 1);
    }
    oac_gb_input(r->g, "page_id", page_id_type, "");
    oac_gb_input(r->g, "values", OAC_T_FLOAT16, values_shape);
    oac_gb_input(r->g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *n = oac_gb_node(r->g, "PagedCacheUpdate", "onnx_alias", "pu",
                                     "pages,page_id,values,position", "out");
    oac_node_alias(r->g, n, 0, 0, 1);
    oac_vi_alias_of(r->g, paged
        ? oac_gb_output_paged(r->g, "out", OAC_T_FLOAT16, shape, allowed, 1)
        : oac_gb_output(r->g, "out", OAC_T_FLOAT16, shape), "pages");
}

START_TEST(test_operand_paged)
{
    /* pages of rank 3 */
    fx r;
    fx_build(&r, NULL);
    paged_update(&r, true, "2,16,8", OAC_T_INT64, "2,1,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_OPERAND_INVALID, "pu", "pages", NULL);
    fx_end(&r);

    /* a dense cache given to PagedCacheUpdate */
    fx_build(&r, NULL);
    paged_update(&r, false, "2,2,16,8", OAC_T_INT64, "2,2,1,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_OPERAND_INVALID, "pu", "pages", NULL);
    fx_end(&r);

    /* page_id INT32 */
    fx_build(&r, NULL);
    paged_update(&r, true, "2,2,16,8", OAC_T_INT32, "2,2,1,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    diag_expect(r.d, OAC_OPERAND_INVALID, "pu", "page_id", NULL);
    ck_assert_int_eq(diag_count(r.d, OAC_OPERAND_INVALID), 1);
    fx_end(&r);

    /* valid paged update: no operand finding, class elem/rank filled */
    fx_build(&r, NULL);
    paged_update(&r, true, "2,2,16,8", OAC_T_INT64, "2,2,1,8");
    ck_assert_int_eq(fx_check(&r, NULL), OAC_OK);
    ck_assert_int_eq(diag_count(r.d, OAC_OPERAND_INVALID), 0);
    ck_assert_int_eq(oac_analysis_class(r.a, 0)->elem_type, OAC_T_FLOAT16);
    ck_assert_int_eq(oac_analysis_class(r.a, 0)->rank, 4);
    ck_assert(!oac_analysis_class(r.a, 0)->bytes.known);   /* pages grow */
    fx_end(&r);
}
END_TEST

/* ---- failure paths ---- */

/* Models for the allocation-failure sweep: every file of the shapes
 * area runs on them (inference, folding, classes, capacity, plan). */
static void chaos_model(fx *r, int which)
{
    oac_gb *g = r->g;
    if (which == 0) {
        cu_f16_inputs(r->g, "1,2,max_len,4");
        int64_t a = 3, b2 = 2;
        oac_gb_constant_i64(g, "c", "", &a, 1);
        oac_gb_init_i64(g, "d", "", &b2, 1);
        oac_gb_node(g, "Add", NULL, "add", "c,d", "pos");
        cu_node(g, "upd", "cache,values,pos", "out", true);
        /* max_len = 4: 5 + 1 > 4 is capacity-overflow */
        oac_vi_alias_of(g, oac_gb_output(g, "out", OAC_T_FLOAT16, "1,2,4,4"), "cache");
        oac_gb_node(g, "Shape", NULL, "shp", "out", "s");
        oac_gb_node(g, "Neg", NULL, "neg", "values", "nv");
        oac_gb_output(g, "nv", OAC_T_FLOAT16, NULL);
    } else {
        int32_t allowed[] = { 0 };
        oac_mb_quant_linear(r->mb, "INT8_PAGE", OAC_T_FLOAT16, OAC_T_INT8, 8, 1, 0.05f, 0);
        oac_vi_access(g, oac_gb_input_paged(g, "pages", OAC_T_FLOAT16, "2,2,16,8",
                                            allowed, 1), 1);
        int64_t pid = -1, pos = 3;
        oac_gb_constant_i64(g, "page_id", "", &pid, 1);
        oac_gb_constant_i64(g, "position", "", &pos, 1);
        oac_gb_input(g, "values", OAC_T_FLOAT16, "2,2,1,8");
        Onnx__NodeProto *n = oac_gb_node(g, "PagedCacheUpdate", "onnx_alias", "pu",
                                         "pages,page_id,values,position", "out");
        oac_node_attr_int(g, n, "quantized_type", 0);
        oac_node_alias(g, n, 0, 0, 1);
        oac_vi_alias_of(g, oac_gb_output_paged(g, "out", OAC_T_FLOAT16, "2,2,16,8",
                                               allowed, 1), "pages");
        oac_vi_access(g, oac_gb_input(g, "past", OAC_T_FLOAT, "2,4,S,8"), 1);
        oac_gb_input(g, "upd", OAC_T_FLOAT, "2,4,1,8");
        n = oac_gb_node(g, "TensorScatter", NULL, "ts", "past,upd", "present");
        oac_node_alias(g, n, 0, 0, 1);
        oac_vi_alias_of(g, oac_gb_output(g, "present", OAC_T_FLOAT, "2,4,16,8"), "past");
    }
}

START_TEST(test_alloc_failures)
{
    /* Fail each allocation of a check in turn: never a crash or leak
     * (ASan), either success or OAC_ENOMEM, and success is reached. */
    for (int which = 0; which < 2; which++) {
        bool done = false;
        for (unsigned long n = 1; n < 20000 && !done; n++) {
            fx r;
            fx_build(&r, NULL);
            chaos_model(&r, which);
            fx_load(&r);
            oac_ctx_fail_alloc_after(r.ctx, n);
            int rc = oac_check(r.ctx, &r.a, r.m, NULL, r.d);
            oac_ctx_fail_alloc_after(r.ctx, 0);
            ck_assert_msg(rc == OAC_OK || rc == OAC_ENOMEM, "rc %d at %lu", rc, n);
            if (rc == OAC_ENOMEM)
                ck_assert_ptr_null(r.a);
            else
                ck_assert_uint_gt(oac_diags_count(r.d), 0);
            done = rc == OAC_OK;
            fx_end(&r);
        }
        ck_assert(done);
    }
}
END_TEST

/* ---- case rows: type-, rank-, shape-mismatch ------------------------- */

/* upd: out = CacheUpdate(cache FLOAT16 [1,2,16,4]), out declared with
 * elem_type et and dims and alias_of cache. */
static void f16_update(oac_mb *mb, int32_t et, const char *dims)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_f16_inputs(g, "1,2,16,4");
    cu_node(g, "upd", "cache,values,position", "out", true);
    oac_vi_alias_of(g, oac_gb_output(g, "out", et, dims), "cache");
}

static void out_as_cache(oac_mb *mb) { f16_update(mb, OAC_T_FLOAT16, "1,2,16,4"); }
static void out_float(oac_mb *mb) { f16_update(mb, OAC_T_FLOAT, "1,2,16,4"); }
static void out_rank3(oac_mb *mb) { f16_update(mb, OAC_T_FLOAT16, "2,16,4"); }
static void out_longer(oac_mb *mb) { f16_update(mb, OAC_T_FLOAT16, "1,2,32,4"); }
static void out_unknown_dims(oac_mb *mb) { f16_update(mb, OAC_T_FLOAT16, "1,?,S,4"); }

static const model_case class_rows[] = {
    { "out_float", out_float, WANT(OAC_TYPE_MISMATCH), "upd", "out", NULL },
    { "out_same_type", out_as_cache, NEAR(OAC_TYPE_MISMATCH) },
    { "out_rank3", out_rank3, WANT(OAC_RANK_MISMATCH), "upd", "out", NULL },
    { "out_same_rank", out_as_cache, NEAR(OAC_RANK_MISMATCH) },
    { "out_longer", out_longer, WANT(OAC_SHAPE_MISMATCH), "upd", "out", NULL },
    /* Unknown dimensions and a free symbol unify with the cache's. */
    { "out_unknown_dims", out_unknown_dims, NEAR(OAC_SHAPE_MISMATCH) },
};
CASES_TEST(class_rows)

Suite *test_suite(void)
{
    Suite *s = suite_create("shapes");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_class_facts_filled);
    tcase_add_test(t, test_class_bytes_unknown_symbol);
    tcase_add_test(t, test_type_mismatch);
    tcase_add_test(t, test_rank_mismatch);
    tcase_add_test(t, test_shape_mismatch_static);
    tcase_add_test(t, test_shape_mismatch_symbol_twice);
    tcase_add_test(t, test_unknown_dims_unify_quietly);
    tcase_add_test(t, test_bytes_overflow_unknown);
    tcase_add_test(t, test_dim_usage_errors);
    tcase_add_test(t, test_dim_in_unread_type);
    tcase_add_test(t, test_dim_contradicts_static);
    tcase_add_test(t, test_dim_options_contradict);
    tcase_add_test(t, test_infer_ops);
    tcase_add_test(t, test_infer_reshape_minus_one_and_dim);
    tcase_add_test(t, test_infer_broadcast_and_matmul_vectors);
    tcase_add_test(t, test_infer_cache_ops_and_constant);
    tcase_add_test(t, test_infer_subgraph_and_function_scopes);
    tcase_add_test(t, test_hostile_inference);
    tcase_add_test(t, test_infer_rule_memo_and_shared_dims);
    tcase_add_test(t, test_operand_cache_update);
    tcase_add_test(t, test_operand_valid_near_misses);
    tcase_add_test(t, test_operand_tensor_scatter);
    tcase_add_test(t, test_operand_paged);
    tcase_add_test(t, test_alloc_failures);
    ADD_CASES(t, class_rows);
    suite_add_tcase(s, t);
    return s;
}

/* check_branches.c: lib/check/branches.c — branch-mismatch and the Loop/Scan
 * part of alias-implied; If outputs taking their alias from their
 * branches (check/alias_classes.c).  Contract section 3, "Details the rules
 * rely on".
 */
#include "harness.h"

/* If(cond): then updates the outer cache in place, else returns `els`
 * (0: the cache untouched, 1: a fresh Neg(cache), 2: an update of k2). */
static void if_model(oac_mb *mb, int els, bool alias_of)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    if (els == 2)
        cu_cache_input(g, "k2", 1);
    cu_update_inputs(g);
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "br", "cond", "y");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then");
    cu_update(t, "t0", "cache", "t", true);
    oac_gb_output(t, "t", OAC_T_FLOAT, CU_CACHE);
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else");
    if (els == 0) {
        oac_gb_output(e, "cache", OAC_T_FLOAT, CU_CACHE);
    } else if (els == 1) {
        oac_gb_node(e, "Neg", NULL, "e0", "cache", "f");
        oac_gb_output(e, "f", OAC_T_FLOAT, CU_CACHE);
    } else {
        cu_update(e, "e0", "k2", "f", true);
        oac_gb_output(e, "f", OAC_T_FLOAT, CU_CACHE);
    }
    Onnx__ValueInfoProto *o = oac_gb_output(g, "y", OAC_T_FLOAT, CU_CACHE);
    if (alias_of)
        oac_vi_alias_of(g, o, "cache");
}

static void if_ok(oac_mb *mb) { if_model(mb, 0, true); }
static void if_one_branch(oac_mb *mb) { if_model(mb, 1, true); }
static void if_two_roots(oac_mb *mb) { if_model(mb, 2, false); }
static void if_missing_boundary(oac_mb *mb) { if_model(mb, 0, false); }

/* Stock If returning different outer values, nothing updated: clean. */
static void if_stock(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "a", OAC_T_FLOAT, "4");
    oac_gb_input(g, "b", OAC_T_FLOAT, "4");
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "br", "cond", "y");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then");
    oac_gb_output(t, "a", OAC_T_FLOAT, "4");
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else");
    oac_gb_output(e, "b", OAC_T_FLOAT, "4");
    oac_gb_output(g, "y", OAC_T_FLOAT, "4");
}

/* No branch updates anything; alias_of on the If output is satisfied
 * when every branch returns a value of that root (else: unbacked). */
static void if_passthrough(oac_mb *mb, bool same)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    cu_cache_input(g, "k2", 1);
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "br", "cond", "y");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then");
    oac_gb_output(t, "cache", OAC_T_FLOAT, CU_CACHE);
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else");
    oac_gb_output(e, same ? "cache" : "k2", OAC_T_FLOAT, CU_CACHE);
    cu_output_alias(g, "y", "cache");
}

static void if_passthrough_same(oac_mb *mb) { if_passthrough(mb, true); }
static void if_passthrough_other(oac_mb *mb) { if_passthrough(mb, false); }

/* Loop(M, cond, cache) with a body that updates its carried cache
 * (mode 0), returns a fresh value (1); node_alias says whether the node
 * declares output 0 <- input 2. */
static void loop_model(oac_mb *mb, int mode, bool node_alias)
{
    oac_gb *g = cu_cache_graph(mb);
    oac_gb_input(g, "M", OAC_T_INT64, "");
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "Loop", NULL, "loop", "M,cond,cache", "out");
    if (node_alias)
        oac_node_alias(g, n, 0, 2, 1);
    oac_gb *b = oac_node_attr_graph(g, n, "body", "body");
    oac_gb_input(b, "i", OAC_T_INT64, "");
    oac_gb_input(b, "c_in", OAC_T_BOOL, "");
    oac_gb_input(b, "k_in", OAC_T_FLOAT, CU_CACHE);
    oac_gb_node(b, "Identity", NULL, "cnd", "c_in", "c_out");
    if (mode == 0)
        cu_update(b, "body_upd", "k_in", "k_out", true);
    else
        oac_gb_node(b, "Neg", NULL, "body_neg", "k_in", "k_out");
    oac_gb_output(b, "c_out", OAC_T_BOOL, "");
    oac_gb_output(b, "k_out", OAC_T_FLOAT, CU_CACHE);
    Onnx__ValueInfoProto *o = oac_gb_output(g, "out", OAC_T_FLOAT, CU_CACHE);
    if (node_alias)
        oac_vi_alias_of(g, o, "cache");
}

static void loop_ok(oac_mb *mb) { loop_model(mb, 0, true); }
static void loop_body_fresh(oac_mb *mb) { loop_model(mb, 1, true); }
static void loop_implied(oac_mb *mb) { loop_model(mb, 0, false); }
static void loop_stock(oac_mb *mb) { loop_model(mb, 1, false); }

/* Scan(cache, xs), num_scan_inputs 1: state 0 pairs body input 0 with
 * body output 0. */
static void scan_model(oac_mb *mb, int mode, bool node_alias)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, CU_UPD);
    oac_gb_input(g, "xs", OAC_T_INT64, "3");
    Onnx__NodeProto *n = oac_gb_node(g, "Scan", NULL, "scan", "cache,xs",
                                     "out,ys");
    oac_node_attr_int(g, n, "num_scan_inputs", 1);
    if (node_alias)
        oac_node_alias(g, n, 0, 0, 1);
    oac_gb *b = oac_node_attr_graph(g, n, "body", "body");
    oac_gb_input(b, "k_in", OAC_T_FLOAT, CU_CACHE);
    oac_gb_input(b, "pos", OAC_T_INT64, "");
    if (mode == 0)
        cu_update(b, "body_upd", "k_in", "k_out", true);
    else
        oac_gb_node(b, "Neg", NULL, "body_neg", "k_in", "k_out");
    oac_gb_node(b, "Identity", NULL, "yid", "pos", "y");
    oac_gb_output(b, "k_out", OAC_T_FLOAT, CU_CACHE);
    oac_gb_output(b, "y", OAC_T_INT64, "");
    Onnx__ValueInfoProto *o = oac_gb_output(g, "out", OAC_T_FLOAT, CU_CACHE);
    if (node_alias)
        oac_vi_alias_of(g, o, "cache");
    oac_gb_output(g, "ys", OAC_T_INT64, "3");
}

static void scan_ok(oac_mb *mb) { scan_model(mb, 0, true); }
static void scan_body_fresh(oac_mb *mb) { scan_model(mb, 1, true); }
static void scan_implied(oac_mb *mb) { scan_model(mb, 0, false); }

static const model_case cases[] = {
    { "if_ok", if_ok, NEAR(OAC_BRANCH_MISMATCH) },
    { "if_stock", if_stock, NEAR(OAC_BRANCH_MISMATCH) },
    { "if_passthrough_same", if_passthrough_same, NEAR(OAC_ALIAS_UNBACKED) },
    { "if_passthrough_other", if_passthrough_other, WANT(OAC_ALIAS_UNBACKED), "br",
      "y", "/graph/output/0" },
    { "loop_ok", loop_ok, NEAR(OAC_BRANCH_MISMATCH) },
    /* A body that returns a fresh value needs no output_alias. */
    { "loop_stock", loop_stock, NEAR(OAC_ALIAS_IMPLIED) },
    { "scan_ok", scan_ok, NEAR(OAC_BRANCH_MISMATCH) },

    { "if_one_branch", if_one_branch, WANT(OAC_BRANCH_MISMATCH), "br", "y",
      "/graph/node/0" },
    { "if_two_roots", if_two_roots, WANT(OAC_BRANCH_MISMATCH), "br", "y",
      "/graph/node/0" },
    { "loop_body_fresh", loop_body_fresh, WANT(OAC_BRANCH_MISMATCH), "loop", "out",
      "/graph/node/0" },
    { "scan_body_fresh", scan_body_fresh, WANT(OAC_BRANCH_MISMATCH), "scan", "out",
      "/graph/node/0" },

    { "loop_implied", loop_implied, WANT(OAC_ALIAS_IMPLIED), "loop", "out",
      "/graph/node/0" },
    { "scan_implied", scan_implied, WANT(OAC_ALIAS_IMPLIED), "scan", "out",
      "/graph/node/0" },
    /* The Loop declares output_alias for its carried cache. */
    { "loop_ok_stated", loop_ok, NEAR(OAC_ALIAS_IMPLIED) },

    { "if_missing_boundary", if_missing_boundary, WANT(OAC_ALIAS_MISSING_BOUNDARY),
      "br", "y", "/graph/output/0" },
    /* The If output states alias_of = cache. */
    { "if_ok_boundary", if_ok, NEAR(OAC_ALIAS_MISSING_BOUNDARY) },
};

CASES_TEST(cases)

/* The If output joins the cache's class; a mismatching If does not, and
 * its alias_of is not reported a second time as unbacked. */
START_TEST(test_if_classes)
{
    fx r;
    fx_check_model(&r, if_ok);
    ck_assert_uint_eq(oac_analysis_class_count(r.a), 1);
    const oac_alias_class *c = oac_analysis_class(r.a, 0);
    ck_assert_str_eq(c->root, "cache");
    /* Topological: the branch's update before the If's output. */
    ck_assert_uint_eq(c->n_members, 3);
    ck_assert_str_eq(c->members[0], "cache");
    ck_assert_str_eq(c->members[1], "t");
    ck_assert_str_eq(c->members[2], "y");
    fx_end(&r);

    fx_check_model(&r, if_one_branch);
    ck_assert_uint_eq(diag_count(r.d, OAC_BRANCH_MISMATCH), 1);
    ck_assert_uint_eq(diag_count(r.d, OAC_ALIAS_UNBACKED), 0);
    fx_end(&r);
}
END_TEST

/* Loop carried values join the outer class through the body. */
START_TEST(test_loop_classes)
{
    fx r;
    fx_check_model(&r, loop_ok);
    ck_assert_uint_eq(oac_analysis_class_count(r.a), 1);
    const oac_alias_class *c = oac_analysis_class(r.a, 0);
    ck_assert_str_eq(c->root, "cache");
    ck_assert_uint_eq(c->n_members, 4);
    ck_assert_str_eq(c->members[0], "cache");
    ck_assert_str_eq(c->members[1], "k_in");
    ck_assert_str_eq(c->members[2], "k_out");
    ck_assert_str_eq(c->members[3], "out");
    fx_end(&r);
    /* Without the node's output_alias the body's class stands alone and
     * its root (a body input) is not immutable. */
    fx_check_model(&r, loop_implied);
    ck_assert_uint_eq(diag_count(r.d, OAC_ALIAS_ROOT_IMMUTABLE), 0);
    ck_assert_uint_eq(oac_diags_count_severity(r.d, OAC_SEV_ERROR), 0);
    fx_end(&r);
}
END_TEST

/* Issue 10, item 4 (no cascades): the else branch updates k2 instead of
 * the cache.  branch-mismatch on the If, and not also an alias-hazard on
 * k2 for what follows only from that write (k2 updated again after the
 * If, read after it, or returned). */
static void if_other_cache_then_update(oac_mb *mb)
{
    if_model(mb, 2, true);
    oac_gb *g = oac_mb_graph(mb);
    cu_update(g, "k2upd", "k2", "u2", true);
    cu_output_alias(g, "u2", "k2");
}

static void if_other_cache_then_read(oac_mb *mb)
{
    if_model(mb, 2, true);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_node(g, "Neg", NULL, "rd", "k2", "nk");
    oac_gb_output(g, "nk", OAC_T_FLOAT, CU_CACHE);
}

/* The same update after an If whose branches agree is written once. */
static void if_ok_then_other_update(oac_mb *mb)
{
    if_model(mb, 0, true);
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "k2", 1);
    cu_update(g, "k2upd", "k2", "u2", true);
    cu_output_alias(g, "u2", "k2");
}

START_TEST(test_branch_mismatch_no_cascade)
{
    model_fn fns[] = { if_other_cache_then_update, if_other_cache_then_read };
    for (size_t k = 0; k < 2; k++) {
        fx r;
        fx_check_model(&r, fns[k]);
        diag_expect(r.d, OAC_BRANCH_MISMATCH, "br", "y", "/graph/node/0");
        ck_assert_msg(diag_count(r.d, OAC_ALIAS_HAZARD) == 0 &&
                      oac_diags_count(r.d) == 1, "%s", diag_dump(r.d));
        fx_end(&r);
    }
    fx r;
    fx_check_model(&r, if_ok_then_other_update);
    diag_expect_clean(r.d);
    fx_end(&r);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("branches");
    TCase *tc = tcase_create("branches");
    tcase_set_timeout(tc, 30);
    ADD_CASES(tc, cases);
    tcase_add_test(tc, test_if_classes);
    tcase_add_test(tc, test_loop_classes);
    tcase_add_test(tc, test_branch_mismatch_no_cascade);
    suite_add_tcase(s, tc);
    return s;
}

/* check_alias_classes.c: lib/check/alias_classes.c — alias classes (roots,
 * members in topological order, read_write) and alias-mismatch,
 * alias-unknown-value, alias-unbacked, alias-missing-boundary,
 * alias-cycle, alias-root-immutable.  Contract section 3 and "Details the
 * rules rely on"; section 4 alias_classes.
 */
#include "harness.h"

/* ---- models ---------------------------------------------------------- */

/* u1 = CU(cache), u2 = CU(u1); the output states alias_of = root. */
static void chain_ok(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "u1", true);
    cu_update(g, "n1", "u1", "u2", true);
    /* Inside the graph, naming an intermediate member is fine. */
    oac_vi_alias_of(g, oac_gb_value_info(g, "u1", OAC_T_FLOAT, CU_CACHE), "cache");
    cu_output_alias(g, "u2", "cache");
}

static void chain_value_info_names_member(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "u1", true);
    cu_update(g, "n1", "u1", "u2", true);
    cu_update(g, "n2", "u2", "u3", true);
    oac_vi_alias_of(g, oac_gb_value_info(g, "u3", OAC_T_FLOAT, CU_CACHE), "u1");
    oac_gb_node(g, "Identity", NULL, "id", "u3", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, CU_CACHE);
}

/* The boundary output names the intermediate u1: alias-mismatch. */
static void chain_boundary_names_member(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "u1", true);
    cu_update(g, "n1", "u1", "u2", true);
    cu_output_alias(g, "u2", "u1");
}

/* Two caches; the update of k1 claims alias_of k2. */
static void mismatch_other_cache(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "k1", 1);
    cu_cache_input(g, "k2", 1);
    cu_update_inputs(g);
    cu_update(g, "n3", "k1", "updated_cache", true);
    oac_vi_alias_of(g, oac_gb_value_info(g, "updated_cache", OAC_T_FLOAT,
                                         CU_CACHE), "k2");
    oac_gb_node(g, "Identity", NULL, "id", "updated_cache", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, CU_CACHE);
    oac_gb_node(g, "Identity", NULL, "id2", "k2", "z");
    oac_gb_output(g, "z", OAC_T_FLOAT, CU_CACHE);
}

/* Boundary output names the other cache. */
static void mismatch_boundary_other(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "k1", 1);
    cu_cache_input(g, "k2", 1);
    cu_update_inputs(g);
    cu_update(g, "n0", "k1", "o1", true);
    cu_update(g, "n1", "k2", "o2", true);
    cu_output_alias(g, "o1", "k2");
    cu_output_alias(g, "o2", "k2");
}

static void unknown_on_output(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "upd", true);
    cu_output_alias(g, "upd", "nope");
}

static void unknown_on_value_info(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "u1", true);
    cu_update(g, "n1", "u1", "upd", true);
    oac_vi_alias_of(g, oac_gb_value_info(g, "u1", OAC_T_FLOAT, CU_CACHE), "ghost");
    cu_output_alias(g, "upd", "cache");
}

static void unbacked_no_output_alias(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "upd", false);
    cu_output_alias(g, "upd", "cache");
}

static void unbacked_on_input(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    oac_vi_alias_of(g, oac_gb_input(g, "other", OAC_T_FLOAT, CU_CACHE), "cache");
    cu_update_inputs(g);
    cu_update(g, "n0", "cache", "upd", true);
    cu_output_alias(g, "upd", "cache");
    oac_gb_node(g, "Identity", NULL, "id", "other", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, CU_CACHE);
}

static void unbacked_identity(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 0);
    oac_gb_node(g, "Identity", NULL, "id", "cache", "y");
    cu_output_alias(g, "y", "cache");
}

static void missing_boundary_graph(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "upd", true);
    oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
}

static void missing_boundary_chain(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "u1", true);
    cu_update(g, "n1", "u1", "u2", true);
    oac_gb_output(g, "u2", OAC_T_FLOAT, CU_CACHE);
}

/* A local function Upd(c, values, pos) -> u with u.alias_of = c (unless
 * state is false), called by node "call". */
static void function_model(oac_mb *mb, bool state_alias, int call_alias_in)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "Upd", "c,values,pos", "u");
    oac_gb_value_info(f, "c", OAC_T_FLOAT, CU_CACHE);
    Onnx__NodeProto *n = oac_gb_node(f, "CacheUpdate", "onnx_alias", "fn0",
                                     "c,values,pos", "u");
    oac_node_alias(f, n, 0, 0, 1);
    Onnx__ValueInfoProto *u = oac_gb_value_info(f, "u", OAC_T_FLOAT, CU_CACHE);
    if (state_alias)
        oac_vi_alias_of(f, u, "c");
    oac_gb *g = cu_cache_graph(mb);
    Onnx__NodeProto *c = oac_gb_node(g, "Upd", "local", "call",
                                     "cache,values,pos", "upd");
    if (call_alias_in >= 0)
        oac_node_alias(g, c, 0, call_alias_in, 1);
    cu_output_alias(g, "upd", "cache");
}

/* Issue 10, item 4 (no cascades): the function states u.alias_of =
 * values, but its body updates c.  alias-mismatch in the function, and
 * nothing that follows only from the contradicted alias_of (the call's
 * output aliasing the caller's read-only "values"). */
static void function_contradicts_body(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "Upd", "c,values,pos", "u");
    oac_gb_value_info(f, "c", OAC_T_FLOAT, CU_CACHE);
    Onnx__NodeProto *n = oac_gb_node(f, "CacheUpdate", "onnx_alias", "fn0",
                                     "c,values,pos", "u");
    oac_node_alias(f, n, 0, 0, 1);
    oac_vi_alias_of(f, oac_gb_value_info(f, "u", OAC_T_FLOAT, CU_CACHE), "values");
    oac_gb *g = cu_cache_graph(mb);
    oac_gb_node(g, "Upd", "local", "call", "cache,values,pos", "upd");
    cu_output_alias(g, "upd", "cache");
}

static void function_ok(oac_mb *mb) { function_model(mb, true, -1); }
static void function_ok_restated(oac_mb *mb) { function_model(mb, true, 0); }
static void function_missing_boundary(oac_mb *mb) { function_model(mb, false, -1); }
static void function_call_conflict(oac_mb *mb) { function_model(mb, true, 1); }

static void cycle_alias_of(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "a", true);
    cu_update(g, "n1", "a", "b", true);
    oac_vi_alias_of(g, oac_gb_value_info(g, "a", OAC_T_FLOAT, CU_CACHE), "b");
    oac_vi_alias_of(g, oac_gb_value_info(g, "b", OAC_T_FLOAT, CU_CACHE), "a");
    oac_gb_node(g, "Identity", NULL, "id", "b", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, CU_CACHE);
}

static void cycle_self_alias_of(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "upd", true);
    cu_output_alias(g, "upd", "upd");
}

static void immutable_readonly_input(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", -1);
    cu_update_inputs(g);
    cu_update(g, "n0", "cache", "upd", true);
    cu_output_alias(g, "upd", "cache");
}

static void immutable_initializer(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    float z[128] = { 0 };
    oac_gb_init_f32(g, "cache", CU_CACHE, z, 128);
    cu_update_inputs(g);
    cu_update(g, "n0", "cache", "upd", true);
    oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
}

static void immutable_constant(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    int64_t z[8] = { 0 };
    oac_gb_constant_i64(g, "kc", "1,2,4,1", z, 8);
    oac_gb_input(g, "values", OAC_T_INT64, "1,2,1,1");
    oac_gb_input(g, "pos", OAC_T_INT64, "");
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "n0",
                                     "kc,values,pos", "upd");
    oac_node_alias(g, n, 0, 0, 1);
    oac_gb_output(g, "upd", OAC_T_INT64, "1,2,4,1");
}

/* Near-miss: a fresh temporary as root. */
static void temporary_root(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, CU_CACHE);
    cu_update_inputs(g);
    oac_gb_node(g, "Add", NULL, "add", "x,x", "t");
    cu_update(g, "n0", "t", "upd", true);
    oac_gb_output(g, "upd", OAC_T_FLOAT, CU_CACHE);
}

static const model_case cases[] = {
    /* Near misses: the boundary names the root, an inner value_info names
     * a member, the call restates the function's own alias. */
    { "chain_ok", chain_ok, NEAR(OAC_ALIAS_MISMATCH) },
    { "chain_value_info_names_member", chain_value_info_names_member,
      NEAR(OAC_ALIAS_MISMATCH) },
    { "function_ok_restated", function_ok_restated, NEAR(OAC_ALIAS_MISMATCH) },

    { "chain_boundary_names_member", chain_boundary_names_member,
      WANT(OAC_ALIAS_MISMATCH), "n1", "u2", "/graph/output/0" },
    { "mismatch_other_cache", mismatch_other_cache, WANT(OAC_ALIAS_MISMATCH), "n3",
      "updated_cache", "/graph/value_info/0" },
    { "mismatch_boundary_other", mismatch_boundary_other, WANT(OAC_ALIAS_MISMATCH),
      "n0", "o1", "/graph/output/0" },
    { "function_call_conflict", function_call_conflict, WANT(OAC_ALIAS_MISMATCH),
      "call", "upd", "/graph/node/0/output_alias/0" },

    { "unknown_on_output", unknown_on_output, WANT(OAC_ALIAS_UNKNOWN_VALUE), "n0",
      "upd", "/graph/output/0" },
    { "unknown_on_value_info", unknown_on_value_info, WANT(OAC_ALIAS_UNKNOWN_VALUE),
      "n0", "u1", "/graph/value_info/0" },
    /* alias_of names the cache, which is in scope. */
    { "dense_known_value", cu_dense, NEAR(OAC_ALIAS_UNKNOWN_VALUE) },

    { "unbacked_no_output_alias", unbacked_no_output_alias, WANT(OAC_ALIAS_UNBACKED),
      "n0", "upd", "/graph/output/0" },
    { "unbacked_on_input", unbacked_on_input, WANT(OAC_ALIAS_UNBACKED), NULL,
      "other", "/graph/input/1" },
    { "unbacked_identity", unbacked_identity, WANT(OAC_ALIAS_UNBACKED), "id", "y",
      "/graph/output/0" },
    /* The producer declares output_alias for the port alias_of is on. */
    { "dense_backed", cu_dense, NEAR(OAC_ALIAS_UNBACKED) },

    { "missing_boundary_graph", missing_boundary_graph,
      WANT(OAC_ALIAS_MISSING_BOUNDARY), "n0", "upd", "/graph/output/0" },
    { "missing_boundary_chain", missing_boundary_chain,
      WANT(OAC_ALIAS_MISSING_BOUNDARY), "n1", "u2", "/graph/output/0" },
    { "function_missing_boundary", function_missing_boundary,
      WANT(OAC_ALIAS_MISSING_BOUNDARY), "fn0", "u", "/functions/0/value_info/1" },
    /* The function body states u.alias_of = c. */
    { "function_ok", function_ok, NEAR(OAC_ALIAS_MISSING_BOUNDARY) },

    { "cycle_alias_of", cycle_alias_of, WANT(OAC_ALIAS_CYCLE), "n0", "a",
      "/graph/value_info/0" },
    { "cycle_self_alias_of", cycle_self_alias_of, WANT(OAC_ALIAS_CYCLE), "n0", "upd",
      "/graph/output/0" },
    /* alias_of along the chain, towards the root. */
    { "chain_acyclic", chain_ok, NEAR(OAC_ALIAS_CYCLE) },

    { "immutable_readonly_input", immutable_readonly_input,
      WANT(OAC_ALIAS_ROOT_IMMUTABLE), "n0", "cache", "/graph/input/0" },
    { "immutable_initializer", immutable_initializer, WANT(OAC_ALIAS_ROOT_IMMUTABLE),
      "n0", "cache", "/graph/initializer/0" },
    { "immutable_constant", immutable_constant, WANT(OAC_ALIAS_ROOT_IMMUTABLE), "n0",
      "kc", "/graph/node/0" },
    /* A fresh temporary as the root. */
    { "temporary_root", temporary_root, NEAR(OAC_ALIAS_ROOT_IMMUTABLE) },
};

CASES_TEST(cases)

START_TEST(test_function_no_cascade)
{
    fx r;
    fx_check_model(&r, function_contradicts_body);
    diag_expect(r.d, OAC_ALIAS_MISMATCH, "fn0", "u", NULL);
    ck_assert_msg(diag_count(r.d, OAC_ALIAS_ROOT_IMMUTABLE) == 0 &&
                  oac_diags_count(r.d) == 1, "%s", diag_dump(r.d));
    fx_end(&r);
}
END_TEST

/* The fix is in the message where it is mechanical. */
START_TEST(test_root_immutable_fix)
{
    fx r;
    fx_check_model(&r, immutable_readonly_input);
    const oac_diag *d = diag_expect(r.d, OAC_ALIAS_ROOT_IMMUTABLE, "n0", "cache",
                                    "/graph/input/0");
    ck_assert_msg(strstr(d->message, "set access = READ_WRITE on 'cache'"), "%s",
                  d->message);
    fx_end(&r);
}
END_TEST

/* The message of the contract's example. */
START_TEST(test_mismatch_message)
{
    fx r;
    fx_check_model(&r, mismatch_other_cache);
    const oac_diag *d = diag_expect(r.d, OAC_ALIAS_MISMATCH, "n3",
                                  "updated_cache", NULL);
    ck_assert_str_eq(d->message, "node 'n3' (CacheUpdate): 'updated_cache' "
                     "alias_of names 'k2' but output_alias resolves to 'k1'");
    fx_end(&r);
}
END_TEST

/* Classes: root, members in topological order, read_write, graph. */
START_TEST(test_classes_chain)
{
    fx r;
    fx_check_model(&r, chain_ok);
    ck_assert_uint_eq(oac_analysis_class_count(r.a), 1);
    const oac_alias_class *c = oac_analysis_class(r.a, 0);
    ck_assert_str_eq(c->root, "cache");
    ck_assert_str_eq(c->graph, "main");
    ck_assert_uint_eq(c->n_members, 3);
    ck_assert_str_eq(c->members[0], "cache");
    ck_assert_str_eq(c->members[1], "u1");
    ck_assert_str_eq(c->members[2], "u2");
    ck_assert(c->read_write);
    ck_assert_ptr_null(oac_analysis_class(r.a, 1));
    fx_end(&r);

    fx_check_model(&r, temporary_root);
    ck_assert_uint_eq(oac_analysis_class_count(r.a), 1);
    c = oac_analysis_class(r.a, 0);
    ck_assert_str_eq(c->root, "t");
    ck_assert(!c->read_write);
    fx_end(&r);

    /* Two caches make two classes, in input order. */
    fx_check_model(&r, mismatch_boundary_other);
    ck_assert_uint_eq(oac_analysis_class_count(r.a), 2);
    ck_assert_str_eq(oac_analysis_class(r.a, 0)->root, "k1");
    ck_assert_str_eq(oac_analysis_class(r.a, 1)->root, "k2");
    fx_end(&r);
}
END_TEST

/* A call inherits the function's alias_of: the caller's class joins
 * cache and upd, and findings in the body are reported per call site. */
START_TEST(test_function_classes)
{
    fx r;
    fx_check_model(&r, function_ok);
    size_t n = oac_analysis_class_count(r.a);
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        const oac_alias_class *c = oac_analysis_class(r.a, i);
        if (strcmp(c->root, "cache") == 0) {
            found = true;
            ck_assert_uint_eq(c->n_members, 2);
            ck_assert_str_eq(c->members[1], "upd");
        }
    }
    ck_assert(found);
    fx_end(&r);

    fx_check_model(&r, function_missing_boundary);
    const oac_diag *d = diag_expect(r.d, OAC_ALIAS_MISSING_BOUNDARY, "fn0",
                                  "u", NULL);
    ck_assert_str_eq(d->graph, "Upd");
    ck_assert_ptr_nonnull(strstr(d->message, "called by node 'call'"));
    /* Without the function's alias_of the call aliases nothing, so the
     * caller's alias_of is unbacked. */
    diag_expect(r.d, OAC_ALIAS_UNBACKED, "call", "upd", NULL);
    fx_end(&r);
}
END_TEST

/* Two call sites: the body's finding once per call site. */
static void function_two_calls(oac_mb *mb)
{
    function_model(mb, false, -1);
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache2", 1);
    oac_gb_node(g, "Upd", "local", "call2", "cache2,values,pos", "upd2");
    oac_gb_output(g, "upd2", OAC_T_FLOAT, CU_CACHE);
}

START_TEST(test_function_per_call_site)
{
    fx r;
    fx_check_model(&r, function_two_calls);
    ck_assert_uint_eq(diag_count(r.d, OAC_ALIAS_MISSING_BOUNDARY), 2);
    fx_end(&r);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("alias_classes");
    TCase *tc = tcase_create("classes");
    tcase_set_timeout(tc, 30);
    ADD_CASES(tc, cases);
    tcase_add_test(tc, test_mismatch_message);
    tcase_add_test(tc, test_function_no_cascade);
    tcase_add_test(tc, test_root_immutable_fix);
    tcase_add_test(tc, test_classes_chain);
    tcase_add_test(tc, test_function_classes);
    tcase_add_test(tc, test_function_per_call_site);
    suite_add_tcase(s, tc);
    return s;
}

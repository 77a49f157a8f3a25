/* check_hazards.c: lib/check/hazards.c — alias-hazard.  Contract section 3,
 * "Details the rules rely on": a stale name read by a node not ordered
 * before the in-place write by a data-dependency path (file order is not
 * enough), written twice, or returned beside its update; Shape/Size read
 * no storage; outer reads in subgraphs belong to the enclosing node.
 */
#include <time.h>

#include "harness.h"

/* y = Identity(cache) listed BEFORE the update in the file: still a
 * hazard, since nothing orders it before the update. */
static void stale_read_before_in_file(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    oac_gb_node(g, "Identity", NULL, "reader", "cache", "y");
    cu_update(g, "n0", "cache", "upd", true);
    cu_output_alias(g, "upd", "cache");
    oac_gb_output(g, "y", OAC_T_FLOAT, CU_CACHE);
}

static void stale_read_after(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "upd", true);
    oac_gb_node(g, "Mul", NULL, "late", "upd,cache", "y");
    cu_output_alias(g, "upd", "cache");
    oac_gb_output(g, "y", OAC_T_FLOAT, CU_CACHE);
}

/* The read feeds the update's position: ordered before it. */
static void read_ordered_before(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, CU_UPD);
    oac_gb_input(g, "p0", OAC_T_INT64, "");
    Onnx__NodeProto *r = oac_gb_node(g, "ReduceMax", NULL, "reader", "cache", "m");
    oac_node_attr_int(g, r, "keepdims", 0);
    Onnx__NodeProto *c = oac_gb_node(g, "Cast", NULL, "cast", "m", "mi");
    oac_node_attr_int(g, c, "to", OAC_T_INT64);
    oac_gb_node(g, "Mul", NULL, "zero", "mi,p0", "pz");
    oac_gb_node(g, "Sub", NULL, "pos_of", "p0,pz", "pos");
    cu_update(g, "n0", "cache", "upd", true);
    cu_output_alias(g, "upd", "cache");
}

/* Shape and Size read no storage. */
static void shape_after_update(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "upd", true);
    oac_gb_node(g, "Shape", NULL, "shape", "cache", "s");
    oac_gb_node(g, "Size", NULL, "size", "cache", "n");
    cu_output_alias(g, "upd", "cache");
    oac_gb_output(g, "s", OAC_T_INT64, "4");
    oac_gb_output(g, "n", OAC_T_INT64, "");
}

static void written_twice(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "u1", true);
    cu_update(g, "n1", "cache", "u2", true);
    cu_output_alias(g, "u1", "cache");
    cu_output_alias(g, "u2", "cache");
}

/* Written twice even when ordered: u1 feeds nothing of n1, but n1 reads
 * the stale chain member u1 after n2 updated it. */
static void written_twice_chain(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "u1", true);
    cu_update(g, "n1", "u1", "u2", true);
    cu_update(g, "n2", "u1", "u3", true);
    cu_output_alias(g, "u2", "cache");
    cu_output_alias(g, "u3", "cache");
}

static void returned_beside_update(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "upd", true);
    cu_output_alias(g, "upd", "cache");
    oac_gb_output(g, "cache", OAC_T_FLOAT, CU_CACHE);
}

static void returned_member_beside_update(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "u1", true);
    cu_update(g, "n1", "u1", "u2", true);
    cu_output_alias(g, "u2", "cache");
    cu_output_alias(g, "u1", "cache");
}

/* An If whose branch reads the cache, not ordered before the update:
 * the read belongs to the If node. */
static void stale_read_in_subgraph(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    cu_update(g, "n0", "cache", "upd", true);
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "branchy", "cond", "y");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then");
    oac_gb_node(t, "Identity", NULL, "t0", "cache", "ty");
    oac_gb_output(t, "ty", OAC_T_FLOAT, CU_CACHE);
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else");
    oac_gb_node(e, "Neg", NULL, "e0", "cache", "ey");
    oac_gb_output(e, "ey", OAC_T_FLOAT, CU_CACHE);
    cu_output_alias(g, "upd", "cache");
    oac_gb_output(g, "y", OAC_T_FLOAT, CU_CACHE);
}

/* Near-miss: the branches only take Shape/Size of the stale cache. */
static void shape_in_subgraph(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    cu_update(g, "n0", "cache", "upd", true);
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "branchy", "cond", "y");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then");
    oac_gb_node(t, "Shape", NULL, "t0", "cache", "ty");
    oac_gb_output(t, "ty", OAC_T_INT64, "4");
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else");
    oac_gb_node(e, "Shape", NULL, "e0", "cache", "ey");
    oac_gb_output(e, "ey", OAC_T_INT64, "4");
    cu_output_alias(g, "upd", "cache");
    oac_gb_output(g, "y", OAC_T_INT64, "4");
}

/* ... but one storage read among them is a hazard. */
static void shape_and_read_in_subgraph(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    cu_update(g, "n0", "cache", "upd", true);
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "branchy", "cond", "y");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then");
    oac_gb_node(t, "Shape", NULL, "t0", "cache", "ty");
    oac_gb_output(t, "ty", OAC_T_INT64, "4");
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else");
    oac_gb_node(e, "ReduceMax", NULL, "e0", "cache", "em");
    oac_gb_node(e, "Shape", NULL, "e1", "em", "ey");
    oac_gb_output(e, "ey", OAC_T_INT64, "4");
    cu_output_alias(g, "upd", "cache");
    oac_gb_output(g, "y", OAC_T_INT64, "4");
}

/* Inside one subgraph: the branch updates the outer cache, and another
 * node of the same branch reads the outer name unordered (mode 0), or
 * ordered before the update through the position (mode 1). */
static void inner_model(oac_mb *mb, int mode)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, CU_UPD);
    oac_gb_input(g, "p0", OAC_T_INT64, "");
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "br", "cond", "y");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then");
    if (mode == 0) {
        Onnx__NodeProto *u = oac_gb_node(t, "CacheUpdate", "onnx_alias", "t_upd",
                                         "cache,values,p0", "t");
        oac_node_alias(t, u, 0, 0, 1);
        oac_gb_node(t, "Neg", NULL, "t_read", "cache", "junk");
    } else {
        Onnx__NodeProto *r = oac_gb_node(t, "ReduceMax", NULL, "t_read",
                                         "cache", "m");
        oac_node_attr_int(t, r, "keepdims", 0);
        Onnx__NodeProto *c = oac_gb_node(t, "Cast", NULL, "cast", "m", "mi");
        oac_node_attr_int(t, c, "to", OAC_T_INT64);
        oac_gb_node(t, "Mul", NULL, "zero", "mi,p0", "pz");
        oac_gb_node(t, "Sub", NULL, "pos_of", "p0,pz", "pos");
        Onnx__NodeProto *u = oac_gb_node(t, "CacheUpdate", "onnx_alias", "t_upd",
                                         "cache,values,pos", "t");
        oac_node_alias(t, u, 0, 0, 1);
    }
    oac_gb_output(t, "t", OAC_T_FLOAT, CU_CACHE);
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else");
    oac_gb_output(e, "cache", OAC_T_FLOAT, CU_CACHE);
    cu_output_alias(g, "y", "cache");
}

static void inner_stale_read(oac_mb *mb) { inner_model(mb, 0); }
static void inner_ordered_read(oac_mb *mb) { inner_model(mb, 1); }

/* The same inside a Loop body writing the outer cache directly. */
static void inner_stale_read_loop(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    oac_gb_input(g, "M", OAC_T_INT64, "");
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    /* A Loop with no carried values and no outputs. */
    Onnx__NodeProto *n = oac_gb_node(g, "Loop", NULL, "loop", "M,cond", "");
    oac_gb *b = oac_node_attr_graph(g, n, "body", "body");
    oac_gb_input(b, "i", OAC_T_INT64, "");
    oac_gb_input(b, "c_in", OAC_T_BOOL, "");
    oac_gb_node(b, "Identity", NULL, "cnd", "c_in", "c_out");
    Onnx__NodeProto *u = oac_gb_node(b, "CacheUpdate", "onnx_alias", "b_upd",
                                     "cache,values,pos", "k");
    oac_node_alias(b, u, 0, 0, 1);
    oac_gb_node(b, "Neg", NULL, "b_read", "cache", "junk");
    oac_gb_output(b, "c_out", OAC_T_BOOL, "");
    oac_gb_node(g, "Identity", NULL, "after", "values", "z");
    oac_gb_output(g, "z", OAC_T_FLOAT, CU_UPD);
}

/* A read inside a function body after the update in the body: reported
 * at the body node, once per call site. */
static void stale_read_in_function(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "Upd", "c,values,pos", "u,y");
    oac_gb_value_info(f, "c", OAC_T_FLOAT, CU_CACHE);
    Onnx__NodeProto *n = oac_gb_node(f, "CacheUpdate", "onnx_alias", "fn0",
                                     "c,values,pos", "u");
    oac_node_alias(f, n, 0, 0, 1);
    oac_gb_node(f, "Neg", NULL, "fneg", "c", "y");
    oac_vi_alias_of(f, oac_gb_value_info(f, "u", OAC_T_FLOAT, CU_CACHE), "c");
    oac_gb *g = cu_cache_graph(mb);
    oac_gb_node(g, "Upd", "local", "call", "cache,values,pos", "upd,y");
    cu_output_alias(g, "upd", "cache");
    oac_gb_output(g, "y", OAC_T_FLOAT, CU_CACHE);
}

static const model_case cases[] = {
    { "stale_read_before_in_file", stale_read_before_in_file, WANT(OAC_ALIAS_HAZARD),
      "reader", "cache", "/graph/node/0/input/0" },
    { "stale_read_after", stale_read_after, WANT(OAC_ALIAS_HAZARD), "late", "cache",
      "/graph/node/1/input/1" },
    { "stale_read_in_subgraph", stale_read_in_subgraph, WANT(OAC_ALIAS_HAZARD),
      "branchy", "cache", "/graph/node/1" },
    { "stale_read_in_function", stale_read_in_function, WANT(OAC_ALIAS_HAZARD),
      "fneg", "c", "/functions/0/node/1/input/0" },
    { "inner_stale_read", inner_stale_read, WANT(OAC_ALIAS_HAZARD), "t_read",
      "cache", "/graph/node/0/attribute/0/g/node/1/input/0" },
    { "inner_stale_read_loop", inner_stale_read_loop, WANT(OAC_ALIAS_HAZARD),
      "b_read", "cache", "/graph/node/0/attribute/0/g/node/2/input/0" },
    { "inner_ordered_read", inner_ordered_read, NEAR(OAC_ALIAS_HAZARD) },
    { "written_twice", written_twice, WANT(OAC_ALIAS_HAZARD), "n1", "cache",
      "/graph/node/1" },
    { "written_twice_chain", written_twice_chain, WANT(OAC_ALIAS_HAZARD), "n2", "u1",
      "/graph/node/2" },
    { "returned_beside_update", returned_beside_update, WANT(OAC_ALIAS_HAZARD), "n0",
      "cache", "/graph/output/1" },
    { "returned_member_beside_update", returned_member_beside_update,
      WANT(OAC_ALIAS_HAZARD), "n1", "u1", "/graph/output/1" },
    { "read_ordered_before", read_ordered_before, NEAR(OAC_ALIAS_HAZARD) },
    { "shape_after_update", shape_after_update, NEAR(OAC_ALIAS_HAZARD) },
    { "shape_in_subgraph", shape_in_subgraph, NEAR(OAC_ALIAS_HAZARD) },
    { "shape_and_read_in_subgraph", shape_and_read_in_subgraph,
      WANT(OAC_ALIAS_HAZARD), "branchy", "cache", "/graph/node/1" },
    { "dense", cu_dense, NEAR(OAC_ALIAS_HAZARD) },
};

CASES_TEST(cases)

/* Exactly one finding per stale read, none for the writer itself. */
START_TEST(test_counts)
{
    fx r;
    fx_check_model(&r, stale_read_after);
    ck_assert_uint_eq(diag_count(r.d, OAC_ALIAS_HAZARD), 1);
    fx_end(&r);
    fx_check_model(&r, read_ordered_before);
    ck_assert_uint_eq(diag_count(r.d, OAC_ALIAS_HAZARD), 0);
    fx_end(&r);
}
END_TEST

/* A 2048-layer chain of updates with a stale read at the start of every
 * layer that IS ordered before the layer's update (through the position
 * input), so every reachability search runs: must stay fast. */
static void deep_chain(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "c0", 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, CU_UPD);
    oac_gb_input(g, "p0", OAC_T_INT64, "");
    char in[64], out[64], m[32], z[32], p[32], name[32];
    for (int i = 0; i < 2048; i++) {
        snprintf(m, sizeof m, "m%d", i);
        snprintf(in, sizeof in, "c%d", i);
        Onnx__NodeProto *r = oac_gb_node(g, "ReduceMax", NULL, NULL, in, m);
        oac_node_attr_int(g, r, "keepdims", 0);
        snprintf(z, sizeof z, "z%d", i);
        snprintf(out, sizeof out, "%s", m);
        char mi[32];
        snprintf(mi, sizeof mi, "mi%d", i);
        Onnx__NodeProto *c = oac_gb_node(g, "Cast", NULL, NULL, m, mi);
        oac_node_attr_int(g, c, "to", OAC_T_INT64);
        char list[160];
        snprintf(list, sizeof list, "%s,p0", mi);
        oac_gb_node(g, "Mul", NULL, NULL, list, z);
        snprintf(p, sizeof p, "p%d_", i);
        snprintf(list, sizeof list, "p0,%s", z);
        oac_gb_node(g, "Sub", NULL, NULL, list, p);
        snprintf(list, sizeof list, "%s,values,%s", in, p);
        snprintf(out, sizeof out, "c%d", i + 1);
        snprintf(name, sizeof name, "u%d", i);
        Onnx__NodeProto *u = oac_gb_node(g, "CacheUpdate", "onnx_alias", name,
                                         list, out);
        oac_node_alias(g, u, 0, 0, 1);
    }
    cu_output_alias(g, "c2048", "c0");
}

START_TEST(test_deep_chain_fast)
{
    clock_t t0 = clock();
    fx r;
    fx_check_model(&r, deep_chain);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    ck_assert_uint_eq(diag_count(r.d, OAC_ALIAS_HAZARD), 0);
    ck_assert_uint_eq(oac_analysis_class_count(r.a), 1);
    ck_assert_uint_eq(oac_analysis_class(r.a, 0)->n_members, 2049);
    ck_assert_msg(secs < 5.0, "took %.2fs", secs);
    fx_end(&r);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("hazards");
    TCase *tc = tcase_create("hazards");
    tcase_set_timeout(tc, 60);
    ADD_CASES(tc, cases);
    tcase_add_test(tc, test_counts);
    tcase_add_test(tc, test_deep_chain_fast);
    suite_add_tcase(s, tc);
    return s;
}

/* check_schedule.c: lib/check/order.c — the order nodes run in, and
 * model-invalid for a cycle.  Contract: section 3 ("ordered before" is a
 * data-dependency path; file order is not enough), section 4 (the memory
 * plan walks the same order), section 8 (model-invalid).
 *
 * A graph need not be sorted: each case is a model and the finding it
 * must (or must not) produce, the unsorted ones beside their sorted
 * twins; the order itself is read from the analysis (check/analysis.h).
 */
#include "harness.h"

#include "check/analysis.h"
#include "check/graph.h"
#include "check/order.h"

/* A small decoder layer, x -> q -> s -> y, with the update of a cache
 * in between; `reverse` lists the nodes last to first. */
static void layer(oac_mb *mb, bool reverse)
{
    oac_gb *g = cu_cache_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, CU_UPD);
    oac_gb_output(g, "y", OAC_T_FLOAT, CU_UPD);
    cu_output_alias(g, "upd", "cache");
    if (reverse) {
        oac_gb_node(g, "Add", NULL, "out", "s,x", "y");
        oac_gb_node(g, "Mul", NULL, "scale", "q,q", "s");
        cu_update(g, "n0", "cache", "upd", true);
        oac_gb_node(g, "Neg", NULL, "proj", "x", "q");
    } else {
        oac_gb_node(g, "Neg", NULL, "proj", "x", "q");
        cu_update(g, "n0", "cache", "upd", true);
        oac_gb_node(g, "Mul", NULL, "scale", "q,q", "s");
        oac_gb_node(g, "Add", NULL, "out", "s,x", "y");
    }
}

static void sorted_layer(oac_mb *mb)
{
    layer(mb, false);
}

static void reversed_layer(oac_mb *mb)
{
    layer(mb, true);
}

/* b = Neg(a), a = Neg(b): two nodes feeding each other. */
static void two_cycle(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "Add", NULL, "first", "x,b", "a");
    oac_gb_node(g, "Neg", NULL, "second", "a", "b");
    oac_gb_output(g, "a", OAC_T_FLOAT, "2");
}

/* The near-miss: the same nodes, the second reading x instead. */
static void two_chain_unsorted(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "Add", NULL, "first", "x,b", "a");
    oac_gb_node(g, "Neg", NULL, "second", "x", "b");
    oac_gb_output(g, "a", OAC_T_FLOAT, "2");
}

/* A node reading its own output. */
static void self_loop(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "Identity", NULL, "pre", "x", "z");
    oac_gb_node(g, "Add", NULL, "loop", "z,w", "w");
    oac_gb_output(g, "w", OAC_T_FLOAT, "2");
}

/* A cycle inside an If branch: reported in the branch's graph. */
static void cycle_in_branch(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_input(g, "c", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "branch", "c", "y");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then");
    oac_gb_node(t, "Add", NULL, "t1", "x,t2out", "t1out");
    oac_gb_node(t, "Neg", NULL, "t2", "t1out", "t2out");
    oac_gb_output(t, "t1out", OAC_T_FLOAT, "2");
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else");
    oac_gb_node(e, "Identity", NULL, "e1", "x", "eout");
    oac_gb_output(e, "eout", OAC_T_FLOAT, "2");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
}

/* An If whose branch reads an outer value produced after it in the file:
 * the read belongs to the If, which must run after the producer. */
static void outer_read_unsorted(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_input(g, "c", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "branch", "c", "y");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then");
    oac_gb_node(t, "Identity", NULL, "t1", "late", "tout");
    oac_gb_output(t, "tout", OAC_T_FLOAT, "2");
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else");
    oac_gb_node(e, "Identity", NULL, "e1", "x", "eout");
    oac_gb_output(e, "eout", OAC_T_FLOAT, "2");
    oac_gb_node(g, "Neg", NULL, "producer", "x", "late");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
}

/* The If reads the outer value, and the producer reads the If's output:
 * a cycle through a subgraph's outer read. */
static void outer_read_cycle(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_input(g, "c", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "branch", "c", "y");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then");
    oac_gb_node(t, "Identity", NULL, "t1", "late", "tout");
    oac_gb_output(t, "tout", OAC_T_FLOAT, "2");
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else");
    oac_gb_node(e, "Identity", NULL, "e1", "x", "eout");
    oac_gb_output(e, "eout", OAC_T_FLOAT, "2");
    oac_gb_node(g, "Neg", NULL, "producer", "y", "late");
    oac_gb_output(g, "late", OAC_T_FLOAT, "2");
}

/* A cycle in a local function's body, called twice: one finding per
 * call site (contract 3). */
static void cycle_in_function(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "F", "a", "b");
    oac_gb_node(f, "Add", NULL, "f1", "a,c", "b");
    oac_gb_node(f, "Neg", NULL, "f2", "b", "c");
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "F", "local", "call1", "x", "y1");
    oac_gb_node(g, "F", "local", "call2", "y1", "y2");
    oac_gb_output(g, "y2", OAC_T_FLOAT, "2");
}

static const model_case cases[] = {
    { "sorted layer", sorted_layer, NEAR(OAC_MODEL_INVALID) },
    { "reversed layer", reversed_layer, NEAR(OAC_MODEL_INVALID) },
    { "two-node cycle", two_cycle, WANT(OAC_MODEL_INVALID), "first", "a", "/graph/node/0" },
    { "unsorted chain", two_chain_unsorted, NEAR(OAC_MODEL_INVALID) },
    { "self loop", self_loop, WANT(OAC_MODEL_INVALID), "loop", "w", "/graph/node/1" },
    { "cycle in a branch", cycle_in_branch, WANT(OAC_MODEL_INVALID), "t1", "t1out",
      "/graph/node/0/attribute/0/g/node/0" },
    { "outer read after the If in the file", outer_read_unsorted,
      NEAR(OAC_MODEL_INVALID) },
    { "cycle through an outer read", outer_read_cycle, WANT(OAC_MODEL_INVALID), "branch",
      "y", "/graph/node/0" },
    { "cycle in a function body", cycle_in_function, WANT(OAC_MODEL_INVALID), "f1", "b",
      "/functions/0/node/0" },
};

CASES_TEST(cases)

/* The order of the main graph, as node names. */
static void main_order(const fx *r, char *buf, size_t len)
{
    const oac_scope *s = r->a->graphs->scopes[0];
    const oac_scope_order *o = oac_sched_scope(r->a->schedule, 0);
    buf[0] = '\0';
    for (size_t k = 0; k < s->n_nodes; k++) {
        strncat(buf, s->nodes[oac_sched_node(o, k)].display, len - strlen(buf) - 2);
        strncat(buf, " ", len - strlen(buf) - 1);
    }
}

START_TEST(test_order_is_topological_and_stable)
{
    char order[256];
    fx r;
    /* Sorted: the file order, and no permutation is stored. */
    fx_check_model(&r, sorted_layer);
    main_order(&r, order, sizeof order);
    ck_assert_str_eq(order, "proj n0 scale out ");
    ck_assert_ptr_null(oac_sched_scope(r.a->schedule, 0)->node);
    fx_end(&r);
    /* Reversed: proj (file index 3) and n0 (2) are ready first; the
     * lowest file index runs first among ready nodes. */
    fx_check_model(&r, reversed_layer);
    main_order(&r, order, sizeof order);
    ck_assert_str_eq(order, "n0 proj scale out ");
    const oac_scope_order *o = oac_sched_scope(r.a->schedule, 0);
    ck_assert(!oac_sched_cyclic(o));
    for (size_t k = 0; k < 4; k++)
        ck_assert_uint_eq(oac_sched_pos(o, oac_sched_node(o, k)), k);
    fx_end(&r);
    /* The outer read: the producer (file index 1) before the If (0). */
    fx_check_model(&r, outer_read_unsorted);
    main_order(&r, order, sizeof order);
    ck_assert_str_eq(order, "producer branch ");
    fx_end(&r);
}
END_TEST

START_TEST(test_plan_walks_the_schedule)
{
    /* The reversed layer plans what the sorted one does: same buffers,
     * same peak, every size known (shapes inferred in the schedule's
     * order: q, s, y are typed although their readers come first). */
    fx a, b;
    fx_check_model(&a, sorted_layer);
    fx_check_model(&b, reversed_layer);
    const oac_memory_plan *pa = oac_analysis_plan(a.a), *pb = oac_analysis_plan(b.a);
    ck_assert(pa->peak_bytes.known && pb->peak_bytes.known);
    ck_assert_uint_eq(pa->peak_bytes.value, pb->peak_bytes.value);
    ck_assert_uint_eq(pa->planned_output_bytes.value, pb->planned_output_bytes.value);
    /* q, s and y: 8 floats each (CU_UPD).  q is freed after scale, its
     * last reader, s after out; y is a graph output, kept.  Two of them
     * are live at scale (q, s) and at out (s, y). */
    ck_assert_uint_eq(pa->planned_output_bytes.value, 3 * 8 * 4);
    ck_assert_uint_eq(pa->peak_bytes.value, 2 * 8 * 4);
    fx_end(&a);
    fx_end(&b);
}
END_TEST

START_TEST(test_cycle_message)
{
    fx r;
    fx_check_model(&r, two_cycle);
    const oac_diag *d = diag_expect(r.d, OAC_MODEL_INVALID, "first", "a", NULL);
    ck_assert_msg(strstr(d->message, "first -> second -> first"), "%s", d->message);
    ck_assert_uint_eq(diag_count(r.d, OAC_MODEL_INVALID), 1);
    /* Nothing can be run: the order still lists every node once. */
    const oac_scope_order *o = oac_sched_scope(r.a->schedule, 0);
    ck_assert(oac_sched_cyclic(o));
    ck_assert_uint_eq(o->n_ordered, 0);
    fx_end(&r);
    /* One finding per call site of a function holding a cycle. */
    fx_check_model(&r, cycle_in_function);
    ck_assert_uint_eq(diag_count(r.d, OAC_MODEL_INVALID), 2);
    fx_end(&r);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("schedule");
    TCase *tc = tcase_create("schedule");
    ADD_CASES(tc, cases);
    tcase_add_test(tc, test_order_is_topological_and_stable);
    tcase_add_test(tc, test_plan_walks_the_schedule);
    tcase_add_test(tc, test_cycle_message);
    suite_add_tcase(s, tc);
    return s;
}

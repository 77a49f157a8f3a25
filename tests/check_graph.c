/* check_graph.c: lib/check/graph.c — the graph index: scopes (main graph,
 * subgraphs, local functions) with locations, nodes with display names,
 * values with kinds, producers, consumers, declarations, outer-scope
 * resolution, implicit uses by enclosing nodes, call sites, and the
 * per-call-site reporting helper.  Contract section 3, "Details".
 */
#include "harness.h"
#include "check/graph.h"

/* main: x (input), w (initializer), b (input with initializer default);
 *   #0: t = Add(x, w)
 *   n1: y = If(c) { then: ty = Mul(t, x)  else: returns b }
 *   n2: z = Local.F(y)      F(a) -> r: r = Neg(a)
 */
static void sample(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "F", "a", "r");
    oac_gb_node(f, "Neg", NULL, "fneg", "a", "r");
    oac_gb_value_info(f, "r", OAC_T_FLOAT, "4");
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    oac_gb_input(g, "c", OAC_T_BOOL, "");
    oac_gb_input(g, "b", OAC_T_FLOAT, "4");
    float v[4] = { 1, 2, 3, 4 };
    oac_gb_init_f32(g, "w", "4", v, 4);
    oac_gb_init_f32(g, "b", "4", v, 4);
    oac_gb_node(g, "Add", NULL, NULL, "x,w", "t");
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "n1", "c", "y");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then");
    oac_gb_node(t, "Mul", NULL, "m", "t,x", "ty");
    oac_gb_output(t, "ty", OAC_T_FLOAT, "4");
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else");
    oac_gb_output(e, "b", OAC_T_FLOAT, "4");
    oac_gb_node(g, "F", "local", "n2", "y", "z");
    oac_gb_value_info(g, "t", OAC_T_FLOAT, "4");
    oac_gb_output(g, "z", OAC_T_FLOAT, "4");
}

static oac_graphs *build(oac_ctx *ctx, oac_mb **mbp, void (*fn)(oac_mb *))
{
    oac_mb *mb = oac_mb_new(ctx);
    ck_assert_ptr_nonnull(mb);
    fn(mb);
    ck_assert_int_eq(oac_mb_status(mb), OAC_OK);
    oac_graphs *g = NULL;
    ck_assert_int_eq(oac_graphs_build(ctx, &g, oac_mb_proto(mb)), OAC_OK);
    *mbp = mb;
    return g;
}

START_TEST(test_scopes)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb;
    oac_graphs *g = build(ctx, &mb, sample);
    ck_assert_uint_eq(g->n_scopes, 4);
    oac_scope *m = g->scopes[0];
    ck_assert_int_eq(m->kind, OAC_SCOPE_MAIN);
    ck_assert_str_eq(m->loc, "/graph");
    ck_assert_str_eq(m->name, "main");
    ck_assert_uint_eq(m->n_nodes, 3);
    oac_scope *th = g->scopes[1], *el = g->scopes[2], *fn = g->scopes[3];
    ck_assert_int_eq(th->kind, OAC_SCOPE_SUBGRAPH);
    ck_assert_str_eq(th->loc, "/graph/node/1/attribute/0/g");
    ck_assert_str_eq(el->loc, "/graph/node/1/attribute/1/g");
    ck_assert_str_eq(th->attr_name, "then_branch");
    ck_assert_ptr_eq(th->parent, m);
    ck_assert_int_eq(th->owner_node, 1);
    ck_assert_int_eq(th->depth, 1);
    ck_assert_int_eq(fn->kind, OAC_SCOPE_FUNCTION);
    ck_assert_str_eq(fn->loc, "/functions/0");
    ck_assert_str_eq(fn->name, "F");
    ck_assert_ptr_null(fn->parent);
    ck_assert_ptr_eq(oac_graphs_function(g, "local", "F"), fn);
    ck_assert_ptr_null(oac_graphs_function(g, "other", "F"));
    /* Nodes: display names, locations, subgraphs, callee. */
    ck_assert_str_eq(m->nodes[0].display, "#0");
    ck_assert_str_eq(m->nodes[1].display, "n1");
    char nl[64];
    ck_assert_str_eq(oac_node_loc(nl, sizeof nl, m, 2, NULL), "/graph/node/2");
    ck_assert_uint_eq(oac_node_x(&m->nodes[1])->n_subgraphs, 2);
    ck_assert_ptr_eq(oac_node_x(&m->nodes[2])->callee, fn);
    ck_assert_uint_eq(fn->n_calls, 1);
    ck_assert_ptr_eq(fn->calls[0].scope, m);
    ck_assert_int_eq(fn->calls[0].node, 2);
    ck_assert_str_eq(oac_node_loc(nl, sizeof nl, fn, 0, NULL),
                     "/functions/0/node/0");
    /* Made on demand, cut as snprintf cuts. */
    ck_assert_str_eq(oac_node_loc(nl, sizeof nl, m, 12, "/input/%d", 3),
                     "/graph/node/12/input/3");
    ck_assert_str_eq(oac_node_loc(nl, 9, m, 12, "/input/%d", 3), "/graph/n");
    ck_assert_str_eq(oac_node_loc(nl, 14, m, 12, "/input/%d", 3),
                     "/graph/node/1");
    ck_assert_str_eq(oac_node_loc(nl, 17, m, 12, "/input/%d", 3),
                     "/graph/node/12/i");
    char wl[12];
    oac_where w = oac_where_node(m, 1, "x", "/output/0", wl, sizeof wl);
    ck_assert_str_eq(w.location, "/graph/node");
    ck_assert_str_eq(w.node, "n1");
    oac_graphs_free(g);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_values)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb;
    oac_graphs *g = build(ctx, &mb, sample);
    oac_scope *m = g->scopes[0], *th = g->scopes[1], *el = g->scopes[2];
    oac_value *x = oac_scope_local(m, "x"), *w = oac_scope_local(m, "w"),
              *b = oac_scope_local(m, "b"), *t = oac_scope_local(m, "t");
    ck_assert_int_eq(x->kind, OAC_VAL_INPUT);
    ck_assert_int_eq(x->input_index, 0);
    ck_assert(!oac_value_is_initializer(x));
    ck_assert_str_eq(oac_value_vi_loc(x), "/graph/input/0");
    ck_assert_int_eq(w->kind, OAC_VAL_INITIALIZER);
    ck_assert(oac_value_is_initializer(w));
    ck_assert_int_eq(w->init_index, 0);
    ck_assert_ptr_null(oac_value_vi(w));
    /* An input with an initializer default stays an input. */
    ck_assert_int_eq(b->kind, OAC_VAL_INPUT);
    ck_assert(oac_value_is_initializer(b));
    ck_assert_int_eq(b->init_index, 1);
    ck_assert_int_eq(t->kind, OAC_VAL_NODE_OUTPUT);
    ck_assert_int_eq(t->producer, 0);
    ck_assert_int_eq(t->port, 0);
    ck_assert_str_eq(oac_value_vi_loc(t), "/graph/value_info/0");
    ck_assert_ptr_eq(oac_node_output(m, 0, 0), t);
    ck_assert_ptr_eq(oac_node_input(m, 0, 1), w);
    ck_assert_ptr_null(oac_node_input(m, 0, 2));
    ck_assert_ptr_null(oac_scope_local(m, ""));
    ck_assert_ptr_null(oac_scope_lookup(m, "nope", NULL));
    /* Outer resolution from the then-branch. */
    bool outer = false;
    ck_assert_ptr_eq(oac_scope_lookup(th, "t", &outer), t);
    ck_assert(outer);
    ck_assert_ptr_null(oac_scope_local(th, "t"));
    ck_assert_ptr_eq(oac_scope_lookup(th, "ty", &outer),
                     oac_scope_local(th, "ty"));
    ck_assert(!outer);
    /* A branch returning an outer value as it is. */
    ck_assert_ptr_eq(el->outputs[0], b);
    ck_assert_int_eq(b->output_index, -1);
    /* Uses: t is read by the If (implicitly, port -1) through its branch;
     * x directly by #0 and implicitly by n1. */
    ck_assert_uint_eq(t->n_uses, 1);
    ck_assert_int_eq(t->uses[0].node, 1);
    ck_assert_int_eq(t->uses[0].port, -1);
    ck_assert_uint_eq(x->n_uses, 2);
    ck_assert_int_eq(x->uses[0].node, 0);
    ck_assert_int_eq(x->uses[0].port, 0);
    ck_assert_int_eq(x->uses[1].node, 1);
    ck_assert_int_eq(x->uses[1].port, -1);
    ck_assert_uint_eq(b->n_uses, 1);   /* returned by the else branch */
    /* Outer reads of n1: t, x and b, once each. */
    ck_assert_uint_eq(oac_node_x(&m->nodes[1])->n_outer_reads, 3);
    /* Dense ids. */
    for (size_t i = 0; i < g->n_values; i++)
        ck_assert_uint_eq(oac_graphs_value(g, i)->id, i);
    /* The vinfos of the function: its value_info. */
    oac_scope *fn = g->scopes[3];
    ck_assert_uint_eq(fn->n_vinfos, 1);
    ck_assert_str_eq(fn->vinfos[0].loc, "/functions/0/value_info/0");
    ck_assert_str_eq(fn->output_vi_locs[0], "/functions/0/value_info/0");
    ck_assert_int_eq(oac_scope_local(fn, "a")->kind, OAC_VAL_INPUT);
    oac_graphs_free(g);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}
END_TEST

/* Names defined twice, omitted ports, nodes with empty names. */
static void odd(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    oac_gb_node(g, "Neg", NULL, "", "x", "x");
    oac_gb_node(g, "Neg", NULL, NULL, "x", "y,,y");
    oac_gb_node(g, "Neg", NULL, NULL, ",x", "z");
    oac_gb_output(g, "y", OAC_T_FLOAT, "4");
    oac_gb_output(g, "", OAC_T_FLOAT, "4");
}

START_TEST(test_odd_graphs)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb;
    oac_graphs *g = build(ctx, &mb, odd);
    oac_scope *m = g->scopes[0];
    ck_assert_uint_eq(m->n_values, 3);        /* x, y, z and nothing else */
    ck_assert_int_eq(oac_scope_local(m, "x")->kind, OAC_VAL_INPUT);
    ck_assert_ptr_null(oac_node_output(m, 0, 0));   /* redefines x */
    ck_assert_ptr_eq(oac_node_output(m, 1, 0), oac_scope_local(m, "y"));
    ck_assert_ptr_null(oac_node_output(m, 1, 1));   /* omitted */
    ck_assert_ptr_null(oac_node_output(m, 1, 2));   /* y again */
    ck_assert_ptr_null(oac_node_input(m, 2, 0));
    ck_assert_str_eq(m->nodes[0].display, "#0");
    ck_assert_ptr_null(m->outputs[1]);
    ck_assert_ptr_null(oac_scope_node(m, 3));
    ck_assert_ptr_null(oac_scope_node(m, -1));
    oac_graphs_free(g);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
    /* The full check copes too. */
    fx r;
    fx_check_model(&r, odd);
    fx_end(&r);
}
END_TEST

/* Three functions, one calling another, one duplicated. */
static void functions3(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "A", "a", "r");
    oac_gb_node(f, "Neg", NULL, NULL, "a", "r");
    f = oac_mb_function(mb, "local", "B", "a", "r");
    oac_gb_node(f, "A", "local", NULL, "a", "r");
    f = oac_mb_function(mb, "local", "A", "a", "r");
    oac_gb_node(f, "Abs", NULL, NULL, "a", "r");
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    oac_gb_node(g, "B", "local", NULL, "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "4");
}

START_TEST(test_functions)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb;
    oac_graphs *g = build(ctx, &mb, functions3);
    ck_assert_uint_eq(g->n_scopes, 3);        /* main, A, B; not A again */
    ck_assert_ptr_null(g->functions[2]);
    oac_scope *a = oac_graphs_function(g, "local", "A");
    ck_assert_ptr_eq(a, g->functions[0]);
    ck_assert_uint_eq(a->n_calls, 1);
    ck_assert_ptr_eq(a->calls[0].scope, g->functions[1]);
    oac_graphs_free(g);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}
END_TEST

/* A function calling itself and a node cycle: hostile, must terminate. */
static void recursive(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "F", "a", "r");
    Onnx__NodeProto *n = oac_gb_node(f, "F", "local", "self", "a", "r");
    oac_node_alias(f, n, 0, 0, 1);
    oac_vi_alias_of(f, oac_gb_value_info(f, "r", OAC_T_FLOAT, "4"), "a");
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    oac_vi_access(g, oac_gb_input(g, "x2", OAC_T_FLOAT, "4"), 1);
    oac_gb_node(g, "F", "local", "call", "x", "y");
    /* p = CU(q), q = CU(p): a cycle of alias links. */
    Onnx__NodeProto *a = oac_gb_node(g, "Touch", "local", "ta", "q", "p");
    oac_node_alias(g, a, 0, 0, 1);
    Onnx__NodeProto *b = oac_gb_node(g, "Touch", "local", "tb", "p", "q");
    oac_node_alias(g, b, 0, 0, 1);
    oac_gb_output(g, "y", OAC_T_FLOAT, "4");
    oac_gb_output(g, "q", OAC_T_FLOAT, "4");
}

START_TEST(test_recursive)
{
    fx r;
    fx_check_model(&r, recursive);
    diag_expect(r.d, OAC_ALIAS_CYCLE, "ta", "p", "/graph/node/1");
    diag_expect(r.d, OAC_ALIAS_CYCLE, "tb", "q", "/graph/node/2");
    fx_end(&r);
}
END_TEST

/* A model without a graph (functions only) is indexed and checked. */
static void no_graph(oac_mb *mb)
{
    oac_gb *f = oac_mb_function(mb, "local", "F", "a", "r");
    oac_gb_node(f, "CacheUpdate", "onnx_alias", "fn", "a", "r");
    oac_mb_proto(mb)->graph = NULL;
}

START_TEST(test_no_graph)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb;
    oac_graphs *g = build(ctx, &mb, no_graph);
    ck_assert_uint_eq(g->n_scopes, 1);
    ck_assert_int_eq(g->scopes[0]->kind, OAC_SCOPE_FUNCTION);
    oac_graphs_free(g);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
    fx r;
    fx_build(&r, NULL);
    no_graph(r.mb);
    fx_check(&r, NULL);
    ck_assert_int_le(r.rc, 0);
    if (r.rc == OAC_OK)   /* the uncalled function's findings, once */
        ck_assert_uint_eq(diag_count(r.d, OAC_ALIAS_IMPLIED), 1);
    fx_end(&r);
}
END_TEST

/* Every allocation of the index may fail: a clean OAC_ENOMEM. */
static void alloc_failures(void (*fn)(oac_mb *))
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb;
    oac_graphs *g = build(ctx, &mb, fn);
    oac_graphs_free(g);
    unsigned long before = oac_ctx_alloc_count(ctx);
    ck_assert_int_eq(oac_graphs_build(ctx, &g, oac_mb_proto(mb)), OAC_OK);
    unsigned long total = oac_ctx_alloc_count(ctx) - before;
    oac_graphs_free(g);
    for (unsigned long k = 1; k <= total; k++) {
        oac_ctx_fail_alloc_after(ctx, k);
        g = (oac_graphs *)1;
        int rc = oac_graphs_build(ctx, &g, oac_mb_proto(mb));
        oac_ctx_fail_alloc_after(ctx, 0);
        ck_assert_int_eq(rc, OAC_ENOMEM);
        ck_assert_ptr_null(g);
    }
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}

START_TEST(test_alloc_failures)
{
    alloc_failures(sample);
    alloc_failures(functions3);
}
END_TEST

/* Two call sites of a function with a finding in its body: one report
 * per call site, each naming its caller. */
static void two_calls(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "F", "a", "r");
    Onnx__NodeProto *n = oac_gb_node(f, "CacheUpdate", "onnx_alias", "fn",
                                     "a", "r");
    (void)n;
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    oac_gb_node(g, "F", "local", "call_a", "x", "y1");
    oac_gb_node(g, "F", "local", "call_b", "x", "y2");
    oac_gb_output(g, "y1", OAC_T_FLOAT, "4");
    oac_gb_output(g, "y2", OAC_T_FLOAT, "4");
}

START_TEST(test_per_call_site)
{
    fx r;
    fx_check_model(&r, two_calls);
    /* CacheUpdate with one input: operand-invalid, and alias-implied. */
    ck_assert_uint_eq(diag_count(r.d, OAC_OPERAND_INVALID), 2);
    ck_assert_uint_eq(diag_count(r.d, OAC_ALIAS_IMPLIED), 2);
    const oac_diag *a = diag_expect(r.d, OAC_ALIAS_IMPLIED, "fn", "r",
                                  "/functions/0/node/0");
    ck_assert_str_eq(a->graph, "F");
    bool saw_a = false, saw_b = false;
    for (size_t i = 0; i < oac_diags_count(r.d); i++) {
        const char *msg = oac_diags_get(r.d, i)->message;
        saw_a |= strstr(msg, "called by node 'call_a' of graph 'main'") != NULL;
        saw_b |= strstr(msg, "called by node 'call_b' of graph 'main'") != NULL;
    }
    ck_assert(saw_a && saw_b);
    fx_end(&r);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("index");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_scopes);
    tcase_add_test(tc, test_values);
    tcase_add_test(tc, test_odd_graphs);
    tcase_add_test(tc, test_functions);
    tcase_add_test(tc, test_recursive);
    tcase_add_test(tc, test_no_graph);
    tcase_add_test(tc, test_alloc_failures);
    tcase_add_test(tc, test_per_call_site);
    suite_add_tcase(s, tc);
    return s;
}

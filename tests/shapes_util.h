/* shapes_util.h: the harness shared by the tests of the shapes modules
 * (check_shapes, check_capacity, check_consts, check_plan).
 *
 * Owns: building a model with the builder, loading it from memory and
 * checking it (run_check), or running the passes up to shapes by hand
 * (infer_run) so the graph index stays alive for value lookups; finding
 * and expecting diagnostics (by code, and by the code's stable string);
 * reading inferred dims and element types.
 * Every helper frees what it took in run_end.
 */
#ifndef OAC_TESTS_SHAPES_UTIL_H
#define OAC_TESTS_SHAPES_UTIL_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "oac_int.h"
#include "oac_build.h"
#include "alias.h"
#include "checker.h"
#include "graph.h"
#include "shapes.h"

#pragma GCC diagnostic ignored "-Wunused-function"

typedef struct run {
    oac_ctx *ctx;
    oac_mb *mb;
    oac_gb *g;
    uint8_t *buf;
    size_t len;
    oac_model *m;
    oac_diags *d;
    oac_analysis *a;
    oac_check_state st;   /* infer_run only */
    int rc;
} run;

static void run_begin(run *r)
{
    memset(r, 0, sizeof *r);
    r->ctx = oac_ctx_new();
    r->mb = oac_mb_new(r->ctx);
    r->g = oac_mb_graph(r->mb);
}

static void run_load(run *r)
{
    ck_assert_int_eq(oac_mb_pack(r->mb, &r->buf, &r->len), OAC_OK);
    r->d = oac_diags_new(r->ctx);
    ck_assert_int_eq(oac_model_load_buffer(r->ctx, &r->m, r->buf, r->len, "t.onnx",
                                           NULL, r->d), OAC_OK);
}

static int run_check(run *r, const oac_check_opts *o)
{
    run_load(r);
    r->rc = oac_check(r->ctx, &r->a, r->m, o, r->d);
    return r->rc;
}

/* Passes 1-8 by hand, keeping st.graphs for lookups. */
static int infer_run(run *r, const oac_check_opts *o)
{
    static const oac_check_opts none = { 0 };
    static const oac_pass_fn fns[] = {
        oac_pass_graph, oac_pass_schedule, oac_pass_access, oac_pass_ports, oac_pass_classes,
        oac_pass_branches, oac_pass_hazards, oac_pass_metadata, oac_pass_shapes,
    };
    run_load(r);
    r->st = (oac_check_state){ .ctx = r->ctx, .model = r->m, .opts = o ? o : &none,
                               .diags = r->d };
    r->st.out = oac_analysis_new(r->ctx, r->m);
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if ((r->rc = fns[i](&r->st)) < 0)
            return r->rc;
    return r->rc = OAC_OK;
}

static void run_end(run *r)
{
    if (r->st.out) {
        /* As oac_check does: the analysis owns what the passes made. */
        r->st.out->graphs = r->st.graphs;
        r->st.out->schedule = r->st.schedule;
        r->st.out->aliases = r->st.aliases;
        r->st.out->shapes = r->st.shapes;
        oac_analysis_free(r->st.out);
    }
    oac_analysis_free(r->a);
    oac_model_free(r->m);
    oac_diags_free(r->d);
    free(r->buf);
    oac_mb_free(r->mb);
    oac_ctx_free(r->ctx);
}

/* The diagnostic with that code (and node/value when given), or NULL. */
static const oac_diag *find(const run *r, oac_code code, const char *node,
                            const char *value)
{
    for (size_t i = 0; i < oac_diags_count(r->d); i++) {
        const oac_diag *x = oac_diags_get(r->d, i);
        if (x->code == code && (!node || (x->node && !strcmp(x->node, node))) &&
            (!value || (x->value && !strcmp(x->value, value))))
            return x;
    }
    return NULL;
}

static size_t count(const run *r, oac_code code)
{
    size_t n = 0;
    for (size_t i = 0; i < oac_diags_count(r->d); i++)
        n += oac_diags_get(r->d, i)->code == code;
    return n;
}

static void expect(const run *r, oac_code code, const char *node, const char *value)
{
    const oac_diag *x = find(r, code, node, value);
    if (!x) {
        for (size_t i = 0; i < oac_diags_count(r->d); i++)
            fprintf(stderr, "  have: %s %s %s: %s\n",
                    oac_code_name(oac_diags_get(r->d, i)->code),
                    oac_diags_get(r->d, i)->node ? oac_diags_get(r->d, i)->node : "-",
                    oac_diags_get(r->d, i)->value ? oac_diags_get(r->d, i)->value : "-",
                    oac_diags_get(r->d, i)->message);
        ck_abort_msg("no %s at node %s value %s", oac_code_name(code),
                     node ? node : "*", value ? value : "*");
    }
    ck_assert_int_eq(x->severity, OAC_SEV_ERROR);
}

/* expect(), and the stable code string reports carry for it (contract
 * 3), through the public API. */
static void expect_named(const run *r, oac_code code, const char *name, const char *node,
                         const char *value)
{
    expect(r, code, node, value);
    ck_assert_str_eq(oac_code_name(find(r, code, node, value)->code), name);
}

/* Dims of a main-graph value after infer_run, as "2,S,?" (symbol names
 * where the symbol is unbound, '?' for anonymous unknowns); "none" when
 * the rank is unknown. */
static const char *dims_of(run *r, const char *name, char *buf, size_t len)
{
    oac_value *v = oac_scope_local(r->st.graphs->scopes[0], name);
    ck_assert_msg(v != NULL, "no value %s", name);
    const oac_vshape *s = oac_shapes_value(r->st.shapes, v->id);
    if (s->rank < 0)
        return "none";
    buf[0] = '\0';
    size_t at = 0;
    for (int32_t i = 0; i < s->rank; i++) {
        int64_t d = oac_shapes_dim(r->st.shapes, s->dims[i]);
        const char *nm = oac_shapes_dim_name(r->st.shapes, s->dims[i]);
        at += (size_t)snprintf(buf + at, len - at, "%s", i ? "," : "");
        if (d >= 0)
            at += (size_t)snprintf(buf + at, len - at, "%lld", (long long)d);
        else
            at += (size_t)snprintf(buf + at, len - at, "%s", nm ? nm : "?");
    }
    return buf;
}

static int32_t elem_of(run *r, const char *name)
{
    oac_value *v = oac_scope_local(r->st.graphs->scopes[0], name);
    ck_assert_ptr_nonnull(v);
    return oac_shapes_value(r->st.shapes, v->id)->elem_type;
}

static Onnx__NodeProto *cu(oac_gb *g, const char *name, const char *in,
                           const char *out, bool alias)
{
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", name, in, out);
    if (alias)
        oac_node_alias(g, n, 0, 0, 1);
    return n;
}

/* cache [1,2,S,4] READ_WRITE FLOAT16, values [1,2,1,4], position [] */
static void dense_inputs(run *r, const char *cache_dims)
{
    oac_vi_access(r->g, oac_gb_input(r->g, "cache", OAC_T_FLOAT16, cache_dims), 1);
    oac_gb_input(r->g, "values", OAC_T_FLOAT16, "1,2,1,4");
    oac_gb_input(r->g, "position", OAC_T_INT64, "");
}

#endif /* OAC_TESTS_SHAPES_UTIL_H */

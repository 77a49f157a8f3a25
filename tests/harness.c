/* harness.c: the helpers every Check program shares (tests/harness.h).
 *
 * Owns: the fixture's life (begin, build, load, check, infer, end), the
 * diagnostics questions and assertions, the case-table runners, the
 * cache-update model fragments and TensorProto files (the runtime's
 * helpers: harness_run.c).  The library is used the way a user would
 * (load from memory, oac_check, oac_run), except fx_infer, which runs the
 * checker's passes by hand to keep its graph index and shapes alive.
 *
 * Invariants: fx_end frees whatever the fixture holds, whichever helpers
 * filled it; a failed assertion ends the test (Check forks each test, so
 * what it held is released with its process).
 */
#include "harness.h"

#include "check/alias.h"
#include "check/graph.h"
#include "check/shapes.h"

/* ---- the fixture ------------------------------------------------------ */

void fx_begin(fx *f)
{
    memset(f, 0, sizeof *f);
    f->ctx = oac_ctx_new();
    ck_assert_ptr_nonnull(f->ctx);
    f->d = oac_diags_new(f->ctx);
    ck_assert_ptr_nonnull(f->d);
}

oac_gb *fx_build(fx *f, oac_mb **mb)
{
    fx_begin(f);
    f->mb = oac_mb_new(f->ctx);
    ck_assert_ptr_nonnull(f->mb);
    f->g = oac_mb_graph(f->mb);
    if (mb)
        *mb = f->mb;
    return f->g;
}

void fx_load(fx *f)
{
    ck_assert_ptr_nonnull(f->mb);
    ck_assert_ptr_null(f->m);
    int rc = oac_mb_pack(f->mb, &f->buf, &f->len);
    ck_assert_msg(rc == OAC_OK, "pack failed: %s", oac_errmsg(f->ctx));
    rc = oac_model_load_buffer(f->ctx, &f->m, f->buf, f->len, "test.onnx", NULL, f->d);
    ck_assert_msg(rc == OAC_OK, "load failed: %s", oac_errmsg(f->ctx));
}

void fx_example(fx *f, const char *name)
{
    fx_begin(f);
    const oac_example *ex = oac_example_find(name);
    ck_assert_msg(ex != NULL, "no example %s", name);
    ck_assert_int_eq(oac_example_pack(f->ctx, ex, &f->buf, &f->len), OAC_OK);
    ck_assert_int_eq(oac_model_load_buffer(f->ctx, &f->m, f->buf, f->len, name,
                                           NULL, f->d), OAC_OK);
}

int fx_check(fx *f, const oac_check_opts *opts)
{
    if (!f->m)
        fx_load(f);
    f->rc = oac_check(f->ctx, &f->a, f->m, opts, f->d);
    return f->rc;
}

void fx_check_model(fx *f, model_fn build)
{
    fx_build(f, NULL);
    build(f->mb);
    int rc = fx_check(f, NULL);
    ck_assert_msg(rc == OAC_OK, "check failed: %s", oac_errmsg(f->ctx));
}

int fx_infer(fx *f, const oac_check_opts *opts)
{
    static const oac_check_opts none = { 0 };
    static const oac_pass_fn fns[] = {
        oac_pass_graph, oac_pass_schedule, oac_pass_access, oac_pass_ports,
        oac_pass_classes, oac_pass_branches, oac_pass_hazards, oac_pass_metadata,
        oac_pass_shapes,
    };
    fx_load(f);
    f->st = (oac_check_state){ .ctx = f->ctx, .model = f->m,
                               .opts = opts ? opts : &none, .diags = f->d };
    f->st.out = oac_analysis_new(f->ctx, f->m);
    ck_assert_ptr_nonnull(f->st.out);
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if ((f->rc = fns[i](&f->st)) < 0)
            return f->rc;
    return f->rc = OAC_OK;
}

void fx_end(fx *f)
{
    if (f->st.out) {
        /* As oac_check does: the analysis owns what the passes made. */
        f->st.out->graphs = f->st.graphs;
        f->st.out->schedule = f->st.schedule;
        f->st.out->aliases = f->st.aliases;
        f->st.out->shapes = f->st.shapes;
        oac_analysis_free(f->st.out);
    }
    oac_execution_free(f->e);
    oac_analysis_free(f->a);
    oac_model_free(f->m);
    oac_diags_free(f->d);
    free(f->buf);
    oac_mb_free(f->mb);
    oac_ctx_free(f->ctx);
    memset(f, 0, sizeof *f);
}

const char *dims_of(fx *f, const char *name, char *buf, size_t len)
{
    oac_value *v = oac_scope_local(f->st.graphs->scopes[0], name);
    ck_assert_msg(v != NULL, "no value %s", name);
    const oac_vshape *s = oac_shapes_value(f->st.shapes, v->id);
    if (s->rank < 0)
        return "none";
    buf[0] = '\0';
    size_t at = 0;
    for (int32_t i = 0; i < s->rank; i++) {
        int64_t d = oac_shapes_dim(f->st.shapes, s->dims[i]);
        const char *nm = oac_shapes_dim_name(f->st.shapes, s->dims[i]);
        at += (size_t)snprintf(buf + at, len - at, "%s", i ? "," : "");
        if (d >= 0)
            at += (size_t)snprintf(buf + at, len - at, "%lld", (long long)d);
        else
            at += (size_t)snprintf(buf + at, len - at, "%s", nm ? nm : "?");
    }
    return buf;
}

int32_t elem_of(fx *f, const char *name)
{
    oac_value *v = oac_scope_local(f->st.graphs->scopes[0], name);
    ck_assert_ptr_nonnull(v);
    return oac_shapes_value(f->st.shapes, v->id)->elem_type;
}

/* ---- diagnostics ------------------------------------------------------ */

size_t diag_count(const oac_diags *d, oac_code code)
{
    size_t n = 0;
    for (size_t i = 0; i < oac_diags_count(d); i++)
        n += oac_diags_get(d, i)->code == code;
    return n;
}

static bool same(const char *want, const char *got)
{
    return !want || (got && strcmp(want, got) == 0);
}

const oac_diag *diag_find(const oac_diags *d, oac_code code, const char *node,
                          const char *value, const char *loc)
{
    for (size_t i = 0; i < oac_diags_count(d); i++) {
        const oac_diag *x = oac_diags_get(d, i);
        if (x->code == code && same(node, x->node) && same(value, x->value) &&
            same(loc, x->location))
            return x;
    }
    return NULL;
}

const char *diag_dump(const oac_diags *d)
{
    static char buf[8192];
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; i < oac_diags_count(d) && off < sizeof buf - 1; i++) {
        const oac_diag *x = oac_diags_get(d, i);
        int n = snprintf(buf + off, sizeof buf - off,
                         "\n  [%s] node=%s value=%s loc=%s: %s",
                         oac_code_name(x->code), x->node ? x->node : "-",
                         x->value ? x->value : "-",
                         x->location ? x->location : "-", x->message);
        if (n < 0)
            break;
        off += (size_t)n;
    }
    return buf;
}

const oac_diag *diag_expect(const oac_diags *d, oac_code code,
                            const char *node, const char *value,
                            const char *loc)
{
    const oac_diag *x = diag_find(d, code, node, value, loc);
    ck_assert_msg(x, "expected %s node=%s value=%s loc=%s; got:%s",
                  oac_code_name(code), node ? node : "*", value ? value : "*",
                  loc ? loc : "*", diag_dump(d));
    ck_assert_int_eq(x->severity, oac_code_severity(code));
    ck_assert_ptr_nonnull(x->message);
    ck_assert_ptr_nonnull(x->graph);
    ck_assert_ptr_nonnull(x->location);
    ck_assert_msg(x->location[0] == '/', "location %s", x->location);
    return x;
}

const oac_diag *diag_expect_named(const oac_diags *d, oac_code code,
                                  const char *name, const char *node,
                                  const char *value)
{
    const oac_diag *x = diag_expect(d, code, node, value, NULL);
    ck_assert_str_eq(oac_code_name(x->code), name);
    return x;
}

const oac_diag *diag_expect_run(const oac_diags *d, oac_code code,
                                const char *name)
{
    const oac_diag *x = diag_find(d, code, NULL, NULL, NULL);
    ck_assert_msg(x != NULL, "no %s diagnostic; got:%s", name, diag_dump(d));
    ck_assert_str_eq(oac_code_name(x->code), name);
    ck_assert_int_eq(x->severity, oac_code_severity(code));
    ck_assert_ptr_nonnull(x->message);
    return x;
}

void diag_expect_clean(const oac_diags *d)
{
    ck_assert_msg(oac_diags_count_severity(d, OAC_SEV_ERROR) == 0 &&
                  oac_diags_count_severity(d, OAC_SEV_WARNING) == 0,
                  "expected a clean model; got:%s", diag_dump(d));
}

/* ---- case tables ------------------------------------------------------ */

/* The row's expectation on the diagnostics d. */
static const oac_diag *expect_row(const char *name, oac_code code, bool near,
                                  const char *node, const char *value,
                                  const char *loc, const oac_diags *d)
{
    if (near) {
        ck_assert_msg(oac_diags_count_severity(d, OAC_SEV_ERROR) == 0 &&
                      oac_diags_count_severity(d, OAC_SEV_WARNING) == 0,
                      "case %s (near miss of %s): expected clean; got:%s", name,
                      oac_code_name(code), diag_dump(d));
        return NULL;
    }
    const oac_diag *x = diag_find(d, code, node, value, loc);
    ck_assert_msg(x, "case %s: expected %s node=%s value=%s loc=%s; got:%s", name,
                  oac_code_name(code), node ? node : "*", value ? value : "*",
                  loc ? loc : "*", diag_dump(d));
    ck_assert_int_eq(x->severity, oac_code_severity(code));
    ck_assert_ptr_nonnull(x->message);
    return x;
}

void model_case_run(const model_case *c)
{
    fx f;
    fx_check_model(&f, c->build);
    const oac_diag *x = expect_row(c->name, c->code, c->near, c->node, c->value,
                                   c->loc, f.d);
    if (x) {
        ck_assert_ptr_nonnull(x->location);
        /* A finding inside a graph or function body names it (one about
         * a model-level field, /quantizations/0 say, has none). */
        if (!strncmp(x->location, "/graph", 6) || !strncmp(x->location, "/functions", 10))
            ck_assert_ptr_nonnull(x->graph);
        /* A finding about a node says which operator it is. */
        if (c->node)
            ck_assert_ptr_nonnull(x->op_type);
    }
    fx_end(&f);
}

void scene_case_run(const scene_case *c)
{
    fx f;
    memset(&f, 0, sizeof f);
    c->scene(&f);
    ck_assert_msg(f.d != NULL, "case %s: the scene made no fixture", c->name);
    expect_row(c->name, c->code, c->near, c->node, c->value, c->loc, f.d);
    fx_end(&f);
}

/* ---- model fragments -------------------------------------------------- */

Onnx__ValueInfoProto *cu_cache_input(oac_gb *g, const char *name, int access)
{
    Onnx__ValueInfoProto *vi = oac_gb_input(g, name, OAC_T_FLOAT, CU_CACHE);
    if (access >= 0)
        oac_vi_access(g, vi, access);
    return vi;
}

void cu_update_inputs(oac_gb *g)
{
    oac_gb_input(g, "values", OAC_T_FLOAT, CU_UPD);
    oac_gb_input(g, "pos", OAC_T_INT64, "");
}

Onnx__NodeProto *cu_node(oac_gb *g, const char *name, const char *inputs,
                         const char *out, bool alias)
{
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", name, inputs, out);
    if (alias)
        oac_node_alias(g, n, 0, 0, 1);
    return n;
}

Onnx__NodeProto *cu_update(oac_gb *g, const char *name, const char *cache,
                           const char *out, bool alias)
{
    char in[256];
    snprintf(in, sizeof in, "%s,values,pos", cache);
    return cu_node(g, name, in, out, alias);
}

oac_gb *cu_cache_graph(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    cu_update_inputs(g);
    return g;
}

Onnx__ValueInfoProto *cu_output_alias(oac_gb *g, const char *name,
                                      const char *of)
{
    Onnx__ValueInfoProto *vi = oac_gb_output(g, name, OAC_T_FLOAT, CU_CACHE);
    oac_vi_alias_of(g, vi, of);
    return vi;
}

void cu_dense(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "upd", true);
    cu_output_alias(g, "upd", "cache");
}

void cu_f16_inputs(oac_gb *g, const char *cache_dims)
{
    oac_vi_access(g, oac_gb_input(g, "cache", OAC_T_FLOAT16, cache_dims), 1);
    oac_gb_input(g, "values", OAC_T_FLOAT16, "1,2,1,4");
    oac_gb_input(g, "position", OAC_T_INT64, "");
}

/* ---- files ----------------------------------------------- */

char *write_tensor(const char *dir, const char *name, int32_t type,
                   const int64_t *dims, size_t nd, const void *raw, size_t len)
{
    Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
    t.has_data_type = 1;
    t.data_type = type;
    t.n_dims = nd;
    t.dims = (int64_t *)dims;
    t.has_raw_data = 1;
    t.raw_data.len = len;
    t.raw_data.data = (uint8_t *)raw;
    size_t n = protobuf_c_message_get_packed_size(&t.base);
    uint8_t *buf = malloc(n);
    ck_assert_ptr_nonnull(buf);
    protobuf_c_message_pack(&t.base, buf);
    char *path = malloc(strlen(dir) + strlen(name) + 8);
    ck_assert_ptr_nonnull(path);
    sprintf(path, "%s/%s.pb", dir, name);
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(buf, 1, n, fp), n);
    fclose(fp);
    free(buf);
    return path;
}

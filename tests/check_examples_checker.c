/* check_examples_checker.c: the checker over whole models.
 *
 *  - every row of the example table (examples/models.c): valid rows give
 *    no error, and each _broken twin gives exactly its expected codes
 *    among the codes the alias checker owns (the codes of shapes,
 *    capacity and pages are those suites' business);
 *  - every model of Debian's libonnx-testdata (stock ONNX models with
 *    If/Loop/Scan, no annotations): zero error diagnostics;
 *  - allocation failure at every allocation of one check: a negative
 *    status, never a crash or a leak (ASan builds catch leaks);
 *  - hostile nesting beyond OAC_MAX_DEPTH and a 45k-node decoder-sized
 *    graph stay bounded.
 * Contract section 3.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <time.h>

#include "harness.h"

/* Codes decided by the alias passes (alias_rules, alias_classes,
 * branches, hazards). */
static const oac_code mine[] = {
    OAC_ALIAS_INDEX_OUT_OF_RANGE, OAC_ALIAS_KIND_UNDEFINED,
    OAC_ALIAS_DUPLICATE, OAC_ALIAS_MISMATCH, OAC_ALIAS_UNKNOWN_VALUE,
    OAC_ALIAS_UNBACKED, OAC_ALIAS_MISSING_BOUNDARY, OAC_ALIAS_CYCLE,
    OAC_ACCESS_INVALID, OAC_ALIAS_ROOT_IMMUTABLE, OAC_ALIAS_HAZARD,
    OAC_BRANCH_MISMATCH, OAC_ALIAS_IMPLIED, OAC_METADATA_ALIAS,
};

static bool expected(const oac_example *ex, oac_code c)
{
    for (size_t k = 0; ex->expect[k]; k++)
        if (oac_code_lookup(ex->expect[k]) == (int)c)
            return true;
    return false;
}

START_TEST(test_example_row)
{
    const oac_example *ex = &oac_examples[_i];
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_example_pack(ctx, ex, &buf, &len), OAC_OK);
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m = NULL;
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, buf, len, ex->name, NULL, d),
                     OAC_OK);
    oac_analysis *an = NULL;
    ck_assert_int_eq(oac_check(ctx, &an, m, NULL, d), OAC_OK);
    if (!ex->expect[0])
        ck_assert_msg(oac_diags_count_severity(d, OAC_SEV_ERROR) == 0,
                      "%s: expected no error; got:%s", ex->name, diag_dump(d));
    for (size_t k = 0; k < sizeof mine / sizeof mine[0]; k++) {
        bool got = diag_count(d, mine[k]) > 0;
        ck_assert_msg(got == expected(ex, mine[k]),
                      "%s: %s %s; got:%s", ex->name, oac_code_name(mine[k]),
                      got ? "not expected" : "missing", diag_dump(d));
    }
    oac_analysis_free(an);
    oac_model_free(m);
    oac_diags_free(d);
    free(buf);
    oac_ctx_free(ctx);
}
END_TEST

/* Mutated example files: whatever loads must check without crashing
 * (ASan/UBSan builds make this a small fuzzer of the checker). */
START_TEST(test_mutations)
{
    const oac_example *ex = &oac_examples[_i];
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *orig = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_example_pack(ctx, ex, &orig, &len), OAC_OK);
    uint8_t *buf = malloc(len);
    ck_assert_ptr_nonnull(buf);
    uint64_t seed = 0x9e3779b97f4a7c15ULL ^ (uint64_t)_i;
    size_t loaded = 0;
    for (int round = 0; round < 300; round++) {
        memcpy(buf, orig, len);
        int flips = 1 + round % 4;
        for (int f = 0; f < flips; f++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t at = (size_t)(seed >> 33) % len;
            buf[at] ^= (uint8_t)(1u << ((seed >> 20) & 7));
        }
        oac_diags *d = oac_diags_new(ctx);
        oac_model *m = NULL;
        if (oac_model_load_buffer(ctx, &m, buf, len, ex->name, NULL, d) == OAC_OK) {
            oac_analysis *an = NULL;
            int rc = oac_check(ctx, &an, m, NULL, d);
            ck_assert_int_le(rc, 0);
            oac_analysis_free(an);
            loaded++;
        }
        oac_model_free(m);
        oac_diags_free(d);
    }
    ck_assert_uint_gt(loaded, 0);
    free(buf);
    free(orig);
    oac_ctx_free(ctx);
}
END_TEST

/* Random graphs over a small pool of names (so names repeat, cycle and
 * cross scopes), with random output_alias entries, alias_of, access,
 * metadata, If/Loop/Scan subgraphs and local functions: the checker must
 * terminate without crash, leak or UB, whatever the findings. */
static uint64_t rnd_state;

static unsigned rnd(unsigned n)
{
    rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return n ? (unsigned)(rnd_state >> 33) % n : 0;
}

static const char *pool(void)
{
    static const char *const names[] = { "a", "b", "c", "d", "e", "f", "",
                                         "cache", "x" };
    return names[rnd(9)];
}

static void rnd_graph(oac_gb *g, int depth)
{
    static const char *const ops[][2] = {
        { "CacheUpdate", "onnx_alias" }, { "PagedCacheUpdate", "onnx_alias" },
        { "TensorScatter", "" }, { "Identity", "" }, { "Shape", "" },
        { "Add", "" }, { "If", "" }, { "Loop", "" }, { "Scan", "" },
        { "Constant", "" }, { "F", "local" }, { "Twin", "custom" },
    };
    int nin = (int)rnd(3);
    for (int i = 0; i < nin; i++) {
        Onnx__ValueInfoProto *vi = oac_gb_input(g, pool(), OAC_T_FLOAT, CU_CACHE);
        if (rnd(2))
            oac_vi_access(g, vi, (int)rnd(3));
        if (!rnd(6))
            oac_vi_alias_of(g, vi, pool());
    }
    if (!rnd(4)) {
        float z[4] = { 0 };
        oac_gb_init_f32(g, pool(), "4", z, 4);
    }
    int nn = 1 + (int)rnd(6);
    for (int i = 0; i < nn; i++) {
        unsigned k = rnd(sizeof ops / sizeof ops[0]);
        char in[64], out[64];
        snprintf(in, sizeof in, "%s,%s,%s", pool(), pool(), pool());
        in[rnd(2) ? strlen(in) : 1 + rnd(3)] = 0;
        snprintf(out, sizeof out, "%s,%s", pool(), pool());
        if (rnd(2))
            out[strcspn(out, ",")] = 0;
        Onnx__NodeProto *n = oac_gb_node(g, ops[k][0], ops[k][1],
                                         rnd(2) ? pool() : NULL, in, out);
        int na = (int)rnd(3);
        for (int a = 0; a < na; a++)
            oac_node_alias(g, n, (int)rnd(4) - 1, (int)rnd(5) - 1,
                           (int)rnd(4) - 1);
        if (!rnd(5))
            oac_node_meta(g, n, "output_alias", "0:0");
        if (!rnd(4))
            oac_node_attr_int(g, n, "num_scan_inputs", (int)rnd(4) - 1);
        if (!rnd(6))
            oac_node_attr_float(g, n, "axis", 1.0f);
        if (depth < 3 && (k == 6 || k == 7 || k == 8 || !rnd(8))) {
            static const char *const attrs[] = { "then_branch", "else_branch",
                                                 "body" };
            int ns = 1 + (int)rnd(2);
            for (int q = 0; q < ns; q++)
                rnd_graph(oac_node_attr_graph(g, n, attrs[rnd(3)], "sub"),
                          depth + 1);
        }
    }
    int nv = (int)rnd(3);
    for (int i = 0; i < nv; i++) {
        Onnx__ValueInfoProto *vi = oac_gb_value_info(g, pool(), OAC_T_FLOAT,
                                                     CU_CACHE);
        if (rnd(2))
            oac_vi_alias_of(g, vi, pool());
        if (!rnd(5))
            oac_vi_meta(g, vi, "alias_of", pool());
        if (!rnd(5))
            oac_vi_access(g, vi, 1);
    }
    int no = 1 + (int)rnd(3);
    for (int i = 0; i < no; i++) {
        Onnx__ValueInfoProto *vi = oac_gb_output(g, pool(), OAC_T_FLOAT, CU_CACHE);
        if (rnd(2))
            oac_vi_alias_of(g, vi, pool());
    }
}

static void rnd_model(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_mb_opset(mb, "custom", 1);
    if (!rnd(5))
        oac_mb_opset(mb, "onnx_alias", -1);
    int nf = (int)rnd(3);
    for (int i = 0; i < nf; i++)
        rnd_graph(oac_mb_function(mb, "local", rnd(2) ? "F" : "G", "a,b",
                                  "c,d"), 1);
    rnd_graph(oac_mb_graph(mb), 0);
}

START_TEST(test_random_graphs)
{
    rnd_state = 0x12345678ULL + (uint64_t)_i * 7919;
    size_t checked = 0;
    for (int round = 0; round < 100; round++) {
        oac_ctx *ctx = oac_ctx_new();
        oac_mb *mb = oac_mb_new(ctx);
        rnd_model(mb);
        uint8_t *buf = NULL;
        size_t len = 0;
        ck_assert_int_eq(oac_mb_pack(mb, &buf, &len), OAC_OK);
        oac_mb_free(mb);
        oac_diags *d = oac_diags_new(ctx);
        oac_model *m = NULL;
        if (oac_model_load_buffer(ctx, &m, buf, len, "rnd", NULL, d) == OAC_OK) {
            oac_analysis *an = NULL;
            ck_assert_int_eq(oac_check(ctx, &an, m, NULL, d), OAC_OK);
            /* Every finding says where it is. */
            for (size_t i = 0; i < oac_diags_count(d); i++) {
                const oac_diag *x = oac_diags_get(d, i);
                if (x->code == OAC_PARSE_ERROR)
                    continue;
                ck_assert_msg(x->location && x->location[0] == '/',
                              "[%s] %s without location",
                              oac_code_name(x->code), x->message);
            }
            for (size_t c = 0; c < oac_analysis_class_count(an); c++) {
                const oac_alias_class *cl = oac_analysis_class(an, c);
                ck_assert_uint_ge(cl->n_members, 2);
                ck_assert_str_eq(cl->members[0], cl->root);
            }
            oac_analysis_free(an);
            checked++;
        }
        oac_model_free(m);
        oac_diags_free(d);
        free(buf);
        oac_ctx_free(ctx);
    }
    ck_assert_uint_gt(checked, 50);
}
END_TEST

/* ---- libonnx-testdata ------------------------------------------------ */

#define TESTDATA "/usr/share/libonnx-testdata/data"

static size_t n_models, n_checked;
static char failures[4096];

static int visit(const char *path, const struct stat *sb, int flag,
                 struct FTW *ftw)
{
    (void)sb;
    size_t l = strlen(path);
    if (flag != FTW_F || l < 11 || strcmp(path + l - 11, "/model.onnx") != 0)
        return 0;
    (void)ftw;
    n_models++;
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m = NULL;
    if (oac_model_load(ctx, &m, path, d) == OAC_OK) {
        oac_analysis *an = NULL;
        int rc = oac_check(ctx, &an, m, NULL, d);
        n_checked += rc == OAC_OK;
        size_t used = strlen(failures);
        if (rc != OAC_OK && used < sizeof failures - 256)
            snprintf(failures + used, sizeof failures - used, "\n%s: status %d %s",
                     path, rc, oac_errmsg(ctx));
        for (size_t i = 0; i < oac_diags_count(d); i++) {
            const oac_diag *x = oac_diags_get(d, i);
            used = strlen(failures);
            if (x->severity == OAC_SEV_ERROR && used < sizeof failures - 256)
                snprintf(failures + used, sizeof failures - used,
                         "\n%s: [%s] %s", path, oac_code_name(x->code),
                         x->message);
        }
        oac_analysis_free(an);
    }
    oac_model_free(m);
    oac_diags_free(d);
    oac_ctx_free(ctx);
    return 0;
}

START_TEST(test_stock_testdata)
{
    struct stat sb;
    if (stat(TESTDATA, &sb) != 0) {
        fprintf(stderr, "check_examples_checker: %s absent, stock models "
                "skipped\n", TESTDATA);
        return;
    }
    n_models = n_checked = 0;
    failures[0] = 0;
    ck_assert_int_eq(nftw(TESTDATA, visit, 16, FTW_PHYS), 0);
    ck_assert_uint_gt(n_models, 100);
    ck_assert_msg(failures[0] == 0, "errors on stock models:%s", failures);
    /* Models the loader refuses are its suite's concern; most load. */
    ck_assert_uint_gt(n_checked, n_models / 2);
}
END_TEST

/* ---- failures and hostile shapes ------------------------------------ */

static void if_in_loop(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    oac_gb_input(g, "M", OAC_T_INT64, "");
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "Loop", NULL, "loop", "M,cond,cache", "out");
    oac_node_alias(g, n, 0, 2, 1);
    oac_gb *b = oac_node_attr_graph(g, n, "body", "body");
    oac_gb_input(b, "i", OAC_T_INT64, "");
    oac_gb_input(b, "c_in", OAC_T_BOOL, "");
    oac_gb_input(b, "k_in", OAC_T_FLOAT, CU_CACHE);
    oac_gb_node(b, "Identity", NULL, "cnd", "c_in", "c_out");
    Onnx__NodeProto *f = oac_gb_node(b, "If", NULL, "br", "c_in", "k_out");
    oac_gb *t = oac_node_attr_graph(b, f, "then_branch", "then");
    cu_update(t, "t0", "k_in", "t", true);
    oac_gb_output(t, "t", OAC_T_FLOAT, CU_CACHE);
    oac_gb *e = oac_node_attr_graph(b, f, "else_branch", "else");
    oac_gb_output(e, "k_in", OAC_T_FLOAT, CU_CACHE);
    oac_gb_output(b, "c_out", OAC_T_BOOL, "");
    oac_gb_output(b, "k_out", OAC_T_FLOAT, CU_CACHE);
    cu_output_alias(g, "out", "cache");
}

START_TEST(test_nested_control_flow_clean)
{
    fx r;
    fx_check_model(&r, if_in_loop);
    diag_expect_clean(r.d);
    ck_assert_uint_eq(oac_analysis_class_count(r.a), 1);
    ck_assert_uint_eq(oac_analysis_class(r.a, 0)->n_members, 5);
    fx_end(&r);
}
END_TEST

/* Fail each allocation of one check in turn: a negative status and no
 * analysis, or success; never a crash or a leak. */
static void chaos(model_fn build, const char *name)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    build(mb);
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_mb_pack(mb, &buf, &len), OAC_OK);
    oac_mb_free(mb);
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m = NULL;
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, buf, len, name, NULL, d), 0);
    unsigned long before = oac_ctx_alloc_count(ctx);
    oac_analysis *an = NULL;
    ck_assert_int_eq(oac_check(ctx, &an, m, NULL, d), OAC_OK);
    unsigned long total = oac_ctx_alloc_count(ctx) - before;
    oac_analysis_free(an);
    ck_assert_uint_gt(total, 10);
    for (unsigned long k = 1; k <= total; k++) {
        oac_diags *d2 = oac_diags_new(ctx);
        oac_ctx_fail_alloc_after(ctx, k);
        an = NULL;
        int rc = oac_check(ctx, &an, m, NULL, d2);
        oac_ctx_fail_alloc_after(ctx, 0);
        if (rc == OAC_OK)
            ck_assert_ptr_nonnull(an);
        else {
            ck_assert_msg(rc < 0, "%s: allocation %lu: status %d", name, k, rc);
            ck_assert_ptr_null(an);
        }
        oac_analysis_free(an);
        oac_diags_free(d2);
    }
    oac_model_free(m);
    oac_diags_free(d);
    free(buf);
    oac_ctx_free(ctx);
}

/* A model with findings of most passes: every diagnostic path allocates. */
static void many_findings(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "Upd", "c,values,pos", "u,y");
    oac_gb_value_info(f, "c", OAC_T_FLOAT, CU_CACHE);
    Onnx__NodeProto *n = oac_gb_node(f, "CacheUpdate", "onnx_alias", "fn0",
                                     "c,values,pos", "u");
    oac_node_alias(f, n, 0, 0, 1);
    oac_gb_node(f, "Neg", NULL, "fneg", "c", "y");
    oac_gb_value_info(f, "u", OAC_T_FLOAT, CU_CACHE);
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    cu_cache_input(g, "ro", -1);
    cu_update_inputs(g);
    oac_gb_node(g, "Upd", "local", "call", "cache,values,pos", "upd,y");
    oac_gb_node(g, "Upd", "local", "call2", "ro,values,pos", "upd2,y2");
    Onnx__NodeProto *b = cu_update(g, "bad", "upd2", "u3", false);
    oac_node_alias(g, b, 0, 9, 0);
    oac_node_meta(g, b, "output_alias", "0:0");
    cu_update(g, "twice", "upd2", "u4", true);
    cu_update(g, "ro_upd", "ro", "u5", true);
    oac_gb_output(g, "u5", OAC_T_FLOAT, CU_CACHE);
    cu_output_alias(g, "upd", "ghost");
    cu_output_alias(g, "u3", "cache");
    oac_gb_output(g, "u4", OAC_T_FLOAT, CU_CACHE);
    oac_gb_output(g, "cache", OAC_T_FLOAT, CU_CACHE);
    oac_gb_output(g, "y", OAC_T_FLOAT, CU_CACHE);
}

START_TEST(test_many_findings)
{
    fx r;
    fx_check_model(&r, many_findings);
    static const oac_code want[] = {
        OAC_ALIAS_INDEX_OUT_OF_RANGE, OAC_ALIAS_KIND_UNDEFINED,
        OAC_ALIAS_UNKNOWN_VALUE, OAC_ALIAS_UNBACKED, OAC_ALIAS_MISSING_BOUNDARY,
        OAC_ALIAS_ROOT_IMMUTABLE, OAC_ALIAS_HAZARD, OAC_ALIAS_IMPLIED,
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
        ck_assert_msg(diag_count(r.d, want[k]) > 0, "no %s:%s",
                      oac_code_name(want[k]), diag_dump(r.d));
    fx_end(&r);
}
END_TEST

START_TEST(test_alloc_failures)
{
    chaos(if_in_loop, "if_in_loop");
    chaos(many_findings, "many_findings");
}
END_TEST

START_TEST(test_alloc_failures_examples)
{
    const oac_example *ex = &oac_examples[_i];
    chaos(ex->build, ex->name);
}
END_TEST

/* Subgraphs nested deeply: the loader bounds message nesting, the
 * index bounds scopes by OAC_MAX_DEPTH; either way no crash and no
 * stack exhaustion, and what loads is checked. */
static int nest_levels;

static void deep_nesting(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    oac_gb *cur = g;
    for (int d = 0; d < nest_levels; d++) {
        Onnx__NodeProto *n = oac_gb_node(cur, "If", NULL, NULL, "cond", "y");
        oac_gb *e = oac_node_attr_graph(cur, n, "else_branch", "e");
        oac_gb_output(e, "x", OAC_T_FLOAT, "4");
        cur = oac_node_attr_graph(cur, n, "then_branch", "t");
        if (d + 1 < nest_levels)
            oac_gb_output(cur, "y", OAC_T_FLOAT, "4");
    }
    oac_gb_output(cur, "x", OAC_T_FLOAT, "4");
    oac_gb_output(g, "y", OAC_T_FLOAT, "4");
}

START_TEST(test_deep_nesting)
{
    static const int levels[] = { 10, 20, 3 * OAC_MAX_DEPTH };
    for (size_t k = 0; k < 3; k++) {
        nest_levels = levels[k];
        oac_ctx *ctx = oac_ctx_new();
        oac_mb *mb = oac_mb_new(ctx);
        deep_nesting(mb);
        uint8_t *buf = NULL;
        size_t len = 0;
        ck_assert_int_eq(oac_mb_pack(mb, &buf, &len), OAC_OK);
        oac_mb_free(mb);
        oac_diags *d = oac_diags_new(ctx);
        oac_model *m = NULL;
        if (oac_model_load_buffer(ctx, &m, buf, len, "deep", NULL, d) == OAC_OK) {
            oac_analysis *an = NULL;
            ck_assert_int_eq(oac_check(ctx, &an, m, NULL, d), OAC_OK);
            ck_assert_msg(oac_diags_count_severity(d, OAC_SEV_ERROR) == 0,
                          "%d levels:%s", levels[k], diag_dump(d));
            oac_analysis_free(an);
        } else {
            ck_assert_int_gt(k, 0);   /* 10 levels must load */
        }
        oac_model_free(m);
        oac_diags_free(d);
        free(buf);
        oac_ctx_free(ctx);
    }
}
END_TEST

/* A decoder-sized graph: 2048 layers of (k, v) updates plus attention
 * stand-ins, about 45k nodes. */
static void big_decoder(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_update_inputs(g);
    oac_gb_input(g, "h0", OAC_T_FLOAT, CU_UPD);
    char a[64], b[64], c[64], list[200];
    for (int l = 0; l < 2048; l++) {
        for (int kv = 0; kv < 2; kv++) {
            snprintf(a, sizeof a, "%c%d", kv ? 'v' : 'k', l);
            cu_cache_input(g, a, 1);
            snprintf(b, sizeof b, "%c%d_u", kv ? 'v' : 'k', l);
            snprintf(list, sizeof list, "%s,values,pos", a);
            Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias",
                                             NULL, list, b);
            oac_node_alias(g, n, 0, 0, 1);
            oac_vi_alias_of(g, oac_gb_output(g, b, OAC_T_FLOAT, CU_CACHE), a);
        }
        /* ~18 more nodes per layer reading the updated caches. */
        snprintf(a, sizeof a, "h%d", l);
        for (int j = 0; j < 18; j++) {
            snprintf(c, sizeof c, "h%d_%d", l, j);
            snprintf(list, sizeof list, "%s,k%d_u", j ? b : a, l);
            oac_gb_node(g, j % 2 ? "Add" : "Mul", NULL, NULL, list, c);
            snprintf(b, sizeof b, "%s", c);
        }
        snprintf(c, sizeof c, "h%d", l + 1);
        oac_gb_node(g, "Identity", NULL, NULL, b, c);
    }
    oac_gb_output(g, "h2048", OAC_T_FLOAT, NULL);
}

START_TEST(test_big_decoder_linear)
{
    clock_t t0 = clock();
    fx r;
    fx_check_model(&r, big_decoder);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    ck_assert_uint_eq(oac_analysis_class_count(r.a), 4096);
    for (size_t i = 0; i < oac_diags_count(r.d); i++) {
        oac_code c = oac_diags_get(r.d, i)->code;
        for (size_t k = 0; k < sizeof mine / sizeof mine[0]; k++)
            ck_assert_msg(c != mine[k], "unexpected %s", oac_code_name(c));
    }
    ck_assert_msg(secs < 20.0, "took %.2fs", secs);
    fx_end(&r);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("examples_checker");
    TCase *tc = tcase_create("examples");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_example_row, 0, (int)oac_examples_count);
    tcase_add_loop_test(tc, test_mutations, 0, (int)oac_examples_count);
    tcase_add_loop_test(tc, test_random_graphs, 0, 20);
    tcase_add_test(tc, test_stock_testdata);
    tcase_add_test(tc, test_nested_control_flow_clean);
    tcase_add_test(tc, test_many_findings);
    tcase_add_test(tc, test_alloc_failures);
    tcase_add_loop_test(tc, test_alloc_failures_examples, 0,
                        (int)oac_examples_count);
    tcase_add_test(tc, test_deep_nesting);
    tcase_add_test(tc, test_big_decoder_linear);
    suite_add_tcase(s, tc);
    return s;
}

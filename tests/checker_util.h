/* checker_util.h: shared helpers of the checker's tests (check_graph,
 * check_alias_rules, check_alias_classes, check_branches, check_hazards,
 * check_examples).
 *
 * Owns: building a model with the builder, packing it to a buffer,
 * loading it through oac_model_load_buffer and running oac_check, the
 * way a user of the library would; and assertions over diagnostics
 * (code, severity, node, value, location).  A table row is one model
 * plus the finding it must (or must not) produce, so each case reads
 * like the contract.
 *
 * Invariants: every helper frees what it took; nothing here prints
 * except Check's own failure messages.
 */
#ifndef OAC_TESTS_CHECKER_UTIL_H
#define OAC_TESTS_CHECKER_UTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oac.h"
#include "oac_build.h"

typedef void (*cu_build_fn)(oac_mb *mb);

/* The outcome of one check. */
typedef struct cu_run {
    oac_ctx *ctx;
    oac_model *model;
    oac_diags *diags;
    oac_analysis *an;
    uint8_t *buf;
    int rc;
} cu_run;

static inline void cu_free(cu_run *r)
{
    oac_analysis_free(r->an);
    oac_model_free(r->model);
    oac_diags_free(r->diags);
    free(r->buf);
    oac_ctx_free(r->ctx);
    memset(r, 0, sizeof *r);
}

/* Build, pack, load and check.  The check's status is in r->rc. */
static inline void cu_check_opts(cu_run *r, cu_build_fn build,
                                 const oac_check_opts *opts)
{
    memset(r, 0, sizeof *r);
    r->ctx = oac_ctx_new();
    ck_assert_ptr_nonnull(r->ctx);
    oac_mb *mb = oac_mb_new(r->ctx);
    ck_assert_ptr_nonnull(mb);
    build(mb);
    size_t len = 0;
    ck_assert_int_eq(oac_mb_pack(mb, &r->buf, &len), OAC_OK);
    oac_mb_free(mb);
    r->diags = oac_diags_new(r->ctx);
    ck_assert_ptr_nonnull(r->diags);
    int rc = oac_model_load_buffer(r->ctx, &r->model, r->buf, len, "test.onnx",
                                   NULL, r->diags);
    ck_assert_msg(rc == OAC_OK, "load failed: %s", oac_errmsg(r->ctx));
    r->rc = oac_check(r->ctx, &r->an, r->model, opts, r->diags);
}

static inline void cu_check(cu_run *r, cu_build_fn build)
{
    cu_check_opts(r, build, NULL);
    ck_assert_msg(r->rc == OAC_OK, "check failed: %s", oac_errmsg(r->ctx));
}

/* All diagnostics, for failure messages. */
static inline const char *cu_dump(const oac_diags *d)
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

static inline size_t cu_count(const oac_diags *d, oac_code code)
{
    size_t n = 0;
    for (size_t i = 0; i < oac_diags_count(d); i++)
        n += oac_diags_get(d, i)->code == code;
    return n;
}

static inline bool cu_eq(const char *want, const char *got)
{
    return !want || (got && strcmp(want, got) == 0);
}

/* The first diagnostic with that code and (where not NULL) node, value
 * and location; NULL when none. */
static inline const oac_diag *cu_find(const oac_diags *d, oac_code code,
                                      const char *node, const char *value,
                                      const char *loc)
{
    for (size_t i = 0; i < oac_diags_count(d); i++) {
        const oac_diag *x = oac_diags_get(d, i);
        if (x->code == code && cu_eq(node, x->node) && cu_eq(value, x->value) &&
            cu_eq(loc, x->location))
            return x;
    }
    return NULL;
}

/* Assert a finding, with its severity, and that it says where it is. */
static inline const oac_diag *cu_expect(const oac_diags *d, oac_code code,
                                        const char *node, const char *value,
                                        const char *loc)
{
    const oac_diag *x = cu_find(d, code, node, value, loc);
    ck_assert_msg(x, "expected %s node=%s value=%s loc=%s; got:%s",
                  oac_code_name(code), node ? node : "*", value ? value : "*",
                  loc ? loc : "*", cu_dump(d));
    ck_assert_int_eq(x->severity, oac_code_severity(code));
    ck_assert_ptr_nonnull(x->location);
    ck_assert_msg(x->location[0] == '/', "location %s", x->location);
    ck_assert_ptr_nonnull(x->graph);
    ck_assert_ptr_nonnull(x->message);
    return x;
}

/* No error and no warning at all. */
static inline void cu_expect_clean(const oac_diags *d)
{
    ck_assert_msg(oac_diags_count_severity(d, OAC_SEV_ERROR) == 0 &&
                  oac_diags_count_severity(d, OAC_SEV_WARNING) == 0,
                  "expected a clean model; got:%s", cu_dump(d));
}

/* One data-driven case: a model and the finding it produces (code
 * OAC_CODE_COUNT: a clean near-miss). */
typedef struct cu_case {
    const char *name;
    cu_build_fn build;
    oac_code code;
    const char *node;
    const char *value;
    const char *loc;
} cu_case;

#define CU_CLEAN OAC_CODE_COUNT

static inline void cu_run_case(const cu_case *c)
{
    cu_run r;
    cu_check(&r, c->build);
    if (c->code == CU_CLEAN) {
        ck_assert_msg(oac_diags_count_severity(r.diags, OAC_SEV_ERROR) == 0 &&
                      oac_diags_count_severity(r.diags, OAC_SEV_WARNING) == 0,
                      "case %s: expected clean; got:%s", c->name,
                      cu_dump(r.diags));
    } else {
        const oac_diag *x = cu_find(r.diags, c->code, c->node, c->value, c->loc);
        ck_assert_msg(x, "case %s: expected %s node=%s value=%s loc=%s; got:%s",
                      c->name, oac_code_name(c->code), c->node ? c->node : "*",
                      c->value ? c->value : "*", c->loc ? c->loc : "*",
                      cu_dump(r.diags));
        ck_assert_int_eq(x->severity, oac_code_severity(c->code));
        ck_assert_ptr_nonnull(x->graph);
        ck_assert_ptr_nonnull(x->location);
        /* A finding about a node says which operator it is. */
        if (c->node)
            ck_assert_ptr_nonnull(x->op_type);
    }
    cu_free(&r);
}

/* ---- model fragments shared by the tests ---------------------------- */

/* Cache [1, 2, 16, 4] FLOAT, update [1, 2, 1, 4], position INT64 []. */
#define CU_CACHE "1,2,16,4"
#define CU_UPD "1,2,1,4"

/* cache (READ_WRITE), values, pos inputs of g. */
static inline Onnx__ValueInfoProto *cu_cache_input(oac_gb *g, const char *name,
                                                   int access)
{
    Onnx__ValueInfoProto *vi = oac_gb_input(g, name, OAC_T_FLOAT, CU_CACHE);
    if (access >= 0)
        oac_vi_access(g, vi, access);
    return vi;
}

static inline void cu_update_inputs(oac_gb *g)
{
    oac_gb_input(g, "values", OAC_T_FLOAT, CU_UPD);
    oac_gb_input(g, "pos", OAC_T_INT64, "");
}

/* name = CacheUpdate(cache, values, pos), output_alias 0<-0 unless
 * alias is false. */
static inline Onnx__NodeProto *cu_update(oac_gb *g, const char *name,
                                         const char *cache, const char *out,
                                         bool alias)
{
    char in[256];
    snprintf(in, sizeof in, "%s,values,pos", cache);
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", name, in, out);
    if (alias)
        oac_node_alias(g, n, 0, 0, 1);
    return n;
}

/* The dense model: upd = CacheUpdate(cache) with output alias_of cache. */
/* The main graph of most checker models: a READ_WRITE cache input
 * "cache" and the inputs of its updates (cu_update_inputs). */
static inline oac_gb *cu_cache_graph(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    cu_update_inputs(g);
    return g;
}

/* Graph output `name`, a cache-shaped FLOAT declared alias_of `of`. */
static inline Onnx__ValueInfoProto *cu_output_alias(oac_gb *g, const char *name,
                                                    const char *of)
{
    Onnx__ValueInfoProto *vi = oac_gb_output(g, name, OAC_T_FLOAT, CU_CACHE);
    oac_vi_alias_of(g, vi, of);
    return vi;
}

static inline void cu_dense(oac_mb *mb)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "n0", "cache", "upd", true);
    cu_output_alias(g, "upd", "cache");
}

#endif /* OAC_TESTS_CHECKER_UTIL_H */

/* check_extdata.c: validation of external-data references (lib/model/extdata.c,
 * contract 3 `external-data-invalid`).
 *
 * Each case builds a model in a fresh folder with one external tensor in
 * a given place, loads it, and expects either no diagnostic or exactly
 * one external-data-invalid naming the tensor and its location pointer;
 * the load itself succeeds (a finding, not a parse error).  A valid
 * reference is also read back through oac_tensor_read.
 */
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/oac_ext_XXXXXX";
static char dir[300];

static void setup(void)
{
    strcpy(root, "/tmp/oac_ext_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(dir, sizeof dir, "%s/model", root);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}

static void write_at(const char *folder, const char *name, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", folder, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    for (size_t i = 0; i < n; i++)
        fputc((int)(i * 3 + 1) & 0xff, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* Make t external with the given entries (NULL: entry absent). */
static void set_external(oac_mb *mb, Onnx__TensorProto *t, const char *loc,
                         const char *off, const char *len)
{
    const char *keys[] = { "location", "offset", "length" };
    const char *vals[] = { loc, off, len };
    t->has_raw_data = 0;
    t->raw_data.data = NULL;
    t->raw_data.len = 0;
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    t->external_data = oac_mb_alloc(mb, 3 * sizeof *t->external_data);
    t->n_external_data = 0;
    for (int i = 0; i < 3; i++) {
        if (!vals[i])
            continue;
        Onnx__StringStringEntryProto *e = oac_mb_alloc(mb, sizeof *e);
        onnx__string_string_entry_proto__init(e);
        e->key = oac_mb_strdup(mb, keys[i]);
        e->value = oac_mb_strdup(mb, vals[i]);
        t->external_data[t->n_external_data++] = e;
    }
}

enum where { IN_GRAPH, IN_SUBGRAPH, IN_FUNCTION, IN_SPARSE, IN_TRAINING };

/* Build a model with one 16-byte UINT8 external tensor at `where`, write
 * it to dir/m.onnx, load it; returns the diagnostics (and the model). */
static oac_diags *run_case(oac_ctx *ctx, enum where where, const char *loc,
                           const char *off, const char *len, oac_model **out)
{
    oac_mb *mb = oac_mb_new(ctx);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_UINT8, "16");
    oac_gb_output(g, "y", OAC_T_UINT8, "16");
    uint8_t zero[16] = { 0 };
    Onnx__TensorProto *t = NULL;
    switch (where) {
    case IN_GRAPH:
        oac_gb_init_raw(g, "w0", OAC_T_UINT8, "16", zero, 16);
        t = oac_gb_init_raw(g, "w", OAC_T_UINT8, "16", zero, 16);
        oac_gb_node(g, "Add", NULL, "add", "x,w", "y");
        break;
    case IN_SUBGRAPH: {
        oac_gb_input(g, "c", OAC_T_BOOL, "");
        Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "if", "c", "y");
        oac_gb *then = oac_node_attr_graph(g, n, "then_branch", "then");
        oac_gb_output(then, "y", OAC_T_UINT8, "16");
        t = oac_gb_init_raw(then, "w", OAC_T_UINT8, "16", zero, 16);
        oac_gb_node(then, "Identity", NULL, NULL, "w", "y");
        oac_gb *els = oac_node_attr_graph(g, n, "else_branch", "else");
        oac_gb_output(els, "y", OAC_T_UINT8, "16");
        oac_gb_node(els, "Identity", NULL, NULL, "x", "y");
        break;
    }
    case IN_FUNCTION: {
        oac_gb *f = oac_mb_function(mb, "local", "F", "a", "b");
        Onnx__NodeProto *k = oac_gb_node(f, "Constant", NULL, "k", "", "w");
        t = oac_gb_tensor_raw(f, "w", OAC_T_UINT8, "16", zero, 16);
        oac_node_attr_tensor(f, k, "value", t);
        oac_gb_node(f, "Add", NULL, NULL, "a,w", "b");
        oac_mb_opset(mb, "local", 1);
        oac_gb_node(g, "F", "local", "call", "x", "y");
        break;
    }
    case IN_TRAINING: {
        /* training_info[0].initialization.initializer[0], by hand */
        Onnx__ModelProto *mp = oac_mb_proto(mb);
        Onnx__TrainingInfoProto *ti = oac_mb_alloc(mb, sizeof *ti);
        onnx__training_info_proto__init(ti);
        Onnx__GraphProto *ig = oac_mb_alloc(mb, sizeof *ig);
        onnx__graph_proto__init(ig);
        ig->name = oac_mb_strdup(mb, "init");
        ig->initializer = oac_mb_alloc(mb, sizeof *ig->initializer);
        ig->initializer[0] = oac_gb_tensor_raw(g, "w", OAC_T_UINT8, "16", zero, 16);
        ig->n_initializer = 1;
        ti->initialization = ig;
        mp->training_info = oac_mb_alloc(mb, sizeof *mp->training_info);
        mp->training_info[0] = ti;
        mp->n_training_info = 1;
        t = ig->initializer[0];
        oac_gb_node(g, "Identity", NULL, NULL, "x", "y");
        break;
    }
    case IN_SPARSE: {
        Onnx__GraphProto *gp = oac_gb_proto(g);
        Onnx__SparseTensorProto *sp = oac_mb_alloc(mb, sizeof *sp);
        onnx__sparse_tensor_proto__init(sp);
        sp->values = oac_gb_tensor_raw(g, "w", OAC_T_UINT8, "16", zero, 16);
        gp->sparse_initializer = oac_mb_alloc(mb, sizeof *gp->sparse_initializer);
        gp->sparse_initializer[0] = sp;
        gp->n_sparse_initializer = 1;
        t = sp->values;
        oac_gb_node(g, "Identity", NULL, NULL, "x", "y");
        break;
    }
    }
    ck_assert_ptr_nonnull(t);
    set_external(mb, t, loc, off, len);
    char path[512];
    snprintf(path, sizeof path, "%s/m.onnx", dir);
    ck_assert_int_eq(oac_mb_write(mb, path), 0);
    oac_mb_free(mb);
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m = NULL;
    ck_assert_int_eq(oac_model_load(ctx, &m, path, d), 0);
    ck_assert_ptr_nonnull(m);
    if (out)
        *out = m;
    else
        oac_model_free(m);
    return d;
}

static void expect_invalid(enum where where, const char *loc, const char *off,
                           const char *len, const char *pointer, const char *needle)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = run_case(ctx, where, loc, off, len, NULL);
    ck_assert_uint_eq(oac_diags_count(d), 1);
    const oac_diag *x = oac_diags_get(d, 0);
    ck_assert_int_eq(x->code, OAC_EXTERNAL_DATA_INVALID);
    ck_assert_int_eq(x->severity, OAC_SEV_ERROR);
    ck_assert_str_eq(x->value, "w");
    ck_assert_str_eq(x->location, pointer);
    ck_assert_msg(strstr(x->message, needle), "'%s' lacks '%s'", x->message, needle);
    oac_diags_free(d);
    oac_ctx_free(ctx);
}

static void expect_valid(enum where where, const char *loc, const char *off,
                         const char *len)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = run_case(ctx, where, loc, off, len, NULL);
    ck_assert_msg(oac_diags_count(d) == 0, "%s", oac_diags_count(d) ?
                  oac_diags_get(d, 0)->message : "");
    oac_diags_free(d);
    oac_ctx_free(ctx);
}

START_TEST(test_valid_reference_is_read)
{
    write_at(dir, "w.bin", 64);
    oac_ctx *ctx = oac_ctx_new();
    oac_model *m;
    oac_diags *d = run_case(ctx, IN_GRAPH, "w.bin", "16", "16", &m);
    ck_assert_uint_eq(oac_diags_count(d), 0);
    const Onnx__TensorProto *t = oac_model_proto(m)->graph->initializer[1];
    uint8_t v[16];
    ck_assert_int_eq(oac_tensor_read(ctx, m, t, v, 16), 0);
    for (int i = 0; i < 16; i++)
        ck_assert_uint_eq(v[i], (uint8_t)((16 + i) * 3 + 1));
    /* The read checks again: a file cut after the load is refused, and
     * so is a buffer of another size. */
    ck_assert_int_eq(oac_tensor_read(ctx, m, t, v, 15), OAC_EINVAL);
    write_at(dir, "w.bin", 20);
    ck_assert_int_eq(oac_tensor_read(ctx, m, t, v, 16), OAC_EPARSE);
    ck_assert_msg(strstr(oac_errmsg(ctx), "lies past the end"), "%s", oac_errmsg(ctx));
    write_at(dir, "w.bin", 64);
    ck_assert_int_eq(oac_tensor_read(ctx, m, t, v, 16), 0);
    oac_model_free(m);
    oac_diags_free(d);
    oac_ctx_free(ctx);
    /* Offset and length are optional; a sub-folder and a symlink that stays
     * inside the folder are fine; so is offset + length == size. */
    expect_valid(IN_GRAPH, "w.bin", NULL, NULL);
    expect_valid(IN_GRAPH, "w.bin", "48", "16");
    char sub[512];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    write_at(sub, "x.bin", 16);
    expect_valid(IN_GRAPH, "sub/x.bin", "0", "16");
    expect_valid(IN_GRAPH, "./sub/x.bin", "0", "16");
    char link[512];
    snprintf(link, sizeof link, "%s/inside.bin", dir);
    ck_assert_int_eq(symlink("sub/x.bin", link), 0);
    expect_valid(IN_GRAPH, "inside.bin", "0", "16");
}
END_TEST

START_TEST(test_escapes)
{
    write_at(dir, "w.bin", 16);
    write_at(root, "outside.bin", 16);
    expect_invalid(IN_GRAPH, "/etc/passwd", NULL, NULL, "/graph/initializer/1",
                   "is an absolute path");
    expect_invalid(IN_GRAPH, "../outside.bin", NULL, NULL, "/graph/initializer/1",
                   "'..' component");
    expect_invalid(IN_GRAPH, "sub/../../outside.bin", NULL, NULL,
                   "/graph/initializer/1", "'..' component");
    char link[512];
    snprintf(link, sizeof link, "%s/escape.bin", dir);
    ck_assert_int_eq(symlink("../outside.bin", link), 0);
    expect_invalid(IN_GRAPH, "escape.bin", NULL, NULL, "/graph/initializer/1",
                   "resolves outside the model folder");
    /* and reading it is refused too */
    oac_ctx *ctx = oac_ctx_new();
    oac_model *m;
    oac_diags *d = run_case(ctx, IN_GRAPH, "escape.bin", "0", "16", &m);
    uint8_t v[16];
    ck_assert_int_eq(oac_tensor_read(ctx, m, oac_model_proto(m)->graph->initializer[1],
                                     v, 16), OAC_EPARSE);
    ck_assert_msg(strstr(oac_errmsg(ctx), "outside the model folder"), "%s", oac_errmsg(ctx));
    oac_model_free(m);
    oac_diags_free(d);
    oac_ctx_free(ctx);
    snprintf(link, sizeof link, "%s/subdir", dir);
    ck_assert_int_eq(symlink(root, link), 0);
    expect_invalid(IN_GRAPH, "subdir/outside.bin", NULL, NULL, "/graph/initializer/1",
                   "resolves outside the model folder");
    expect_invalid(IN_GRAPH, "missing.bin", NULL, NULL, "/graph/initializer/1",
                   "is missing");
    expect_invalid(IN_GRAPH, NULL, "0", "16", "/graph/initializer/1", "has no location");
    expect_invalid(IN_GRAPH, "", "0", "16", "/graph/initializer/1", "has no location");
}
END_TEST

START_TEST(test_offsets)
{
    write_at(dir, "w.bin", 16);
    expect_invalid(IN_GRAPH, "w.bin", "8", "16", "/graph/initializer/1",
                   "offset 8 + length 16 lies past the end");
    expect_invalid(IN_GRAPH, "w.bin", "17", NULL, "/graph/initializer/1",
                   "lies past the end");
    expect_invalid(IN_GRAPH, "w.bin", "18446744073709551615", "2", "/graph/initializer/1",
                   "overflows");
    expect_invalid(IN_GRAPH, "w.bin", "18446744073709551616", "2", "/graph/initializer/1",
                   "offset '18446744073709551616' is not a non-negative integer");
    expect_invalid(IN_GRAPH, "w.bin", "-1", "2", "/graph/initializer/1",
                   "offset '-1' is not");
    expect_invalid(IN_GRAPH, "w.bin", "0", "1x", "/graph/initializer/1",
                   "length '1x' is not");
    expect_invalid(IN_GRAPH, "w.bin", "", "1", "/graph/initializer/1", "offset '' is not");
}
END_TEST

START_TEST(test_everywhere)
{
    /* Tensors in subgraphs, functions and sparse initializers are found,
     * with their pointers. */
    expect_invalid(IN_SUBGRAPH, "/abs", NULL, NULL,
                   "/graph/node/0/attribute/0/g/initializer/0", "absolute");
    expect_invalid(IN_FUNCTION, "nope.bin", NULL, NULL,
                   "/functions/0/node/0/attribute/0/t", "is missing");
    expect_invalid(IN_SPARSE, "../x", NULL, NULL,
                   "/graph/sparse_initializer/0/values", "'..'");
    expect_invalid(IN_TRAINING, "missing.bin", "0", "16",
                   "/training_info/0/initialization/initializer/0", "is missing");
    write_at(dir, "w.bin", 16);
    expect_valid(IN_TRAINING, "w.bin", "0", "16");
}
END_TEST

START_TEST(test_buffer_base_dir_and_chaos)
{
    write_at(dir, "w.bin", 16);
    oac_ctx *ctx = oac_ctx_new();
    oac_model *m;
    oac_diags *d = run_case(ctx, IN_GRAPH, "w.bin", "0", "16", &m);
    ck_assert_uint_eq(oac_diags_count(d), 0);
    uint8_t *buf;
    size_t len;
    ck_assert_int_eq(oac_model_save_buffer(ctx, &buf, &len, m), 0);
    oac_model_free(m);
    oac_diags_free(d);
    /* From memory, references resolve against base_dir. */
    d = oac_diags_new(ctx);
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, buf, len, "b", dir, d), 0);
    ck_assert_uint_eq(oac_diags_count(d), 0);
    oac_model_free(m);
    oac_diags_free(d);
    d = oac_diags_new(ctx);
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, buf, len, "b", root, d), 0);
    ck_assert_uint_eq(oac_diags_count(d), 1);
    oac_model_free(m);
    oac_diags_free(d);
    /* Every allocation of the check may fail: OAC_ENOMEM, no leak. */
    unsigned long n;
    for (n = 1; n < 5000; n++) {
        oac_ctx *c2 = oac_ctx_new();
        oac_diags *d2 = oac_diags_new(c2);
        oac_ctx_fail_alloc_after(c2, n);
        int rc = oac_model_load_buffer(c2, &m, buf, len, "b", root, d2);
        if (rc == OAC_OK) {
            oac_model_free(m);
            oac_diags_free(d2);
            oac_ctx_free(c2);
            break;
        }
        ck_assert_int_eq(rc, OAC_ENOMEM);
        oac_diags_free(d2);
        oac_ctx_free(c2);
    }
    ck_assert_uint_lt(n, 5000);
    oac_free(buf);
    oac_ctx_free(ctx);
}
END_TEST

/* ---- case rows: external-data-invalid -------------------------------- */

/* The IN_GRAPH model referring to 16 bytes of a 16-byte dir/w.bin at
 * location loc, offset off, loaded into the fixture. */
static void ext_scene(fx *f, const char *loc, const char *off)
{
    fx_begin(f);
    write_at(dir, "w.bin", 16);
    oac_diags_free(f->d);
    f->d = run_case(f->ctx, IN_GRAPH, loc, off, "16", &f->m);
}

static void ext_inside(fx *f) { ext_scene(f, "w.bin", "0"); }
static void ext_past_end(fx *f) { ext_scene(f, "w.bin", "1"); }
static void ext_outside(fx *f) { ext_scene(f, "../w.bin", "0"); }

/* The 16-element UINT8 tensor with `length` len (NULL: none) in a
 * 16-byte file: only 16 is its size (contract 8). */
static void ext_length(fx *f, const char *len)
{
    fx_begin(f);
    write_at(dir, "w.bin", 16);
    oac_diags_free(f->d);
    f->d = run_case(f->ctx, IN_GRAPH, "w.bin", "0", len, &f->m);
}
static void ext_length_short(fx *f) { ext_length(f, "12"); }
static void ext_no_length(fx *f) { ext_length(f, NULL); }

/* location "w.bin\0tail": the text before the NUL names the valid file,
 * and must not pass for the whole (the builder writes C strings: the
 * '#' of "w.bin#tail" is made a NUL in the written file). */
static void ext_nul(fx *f)
{
    fx_begin(f);
    write_at(dir, "w.bin", 16);
    oac_diags_free(run_case(f->ctx, IN_GRAPH, "w.bin#tail", "0", "16", NULL));
    char path[512];
    snprintf(path, sizeof path, "%s/m.onnx", dir);
    FILE *fp = fopen(path, "r+b");
    ck_assert_ptr_nonnull(fp);
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, fp), i = 0;
    while (i + 10 <= n && memcmp(buf + i, "w.bin#tail", 10))
        i++;
    ck_assert_uint_le(i + 10, n);
    ck_assert_int_eq(fseek(fp, (long)i + 5, SEEK_SET), 0);
    ck_assert_int_eq(fputc(0, fp), 0);
    ck_assert_int_eq(fclose(fp), 0);
    ck_assert_int_eq(oac_model_load(f->ctx, &f->m, path, f->d), OAC_OK);
    ck_assert_ptr_nonnull(strstr(oac_diags_get(f->d, 0)->message, "contains a NUL byte"));
}

/* A CacheUpdate whose position is an initializer held in an external
 * file (dir/pos.bin, 8 bytes): check reads it as run does, so position
 * 16 of a 16-row cache is capacity-overflow, and 15 is clean. */
static void ext_position(fx *f, int64_t pos)
{
    fx_begin(f);
    char path[512];
    snprintf(path, sizeof path, "%s/pos.bin", dir);
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(&pos, sizeof pos, 1, fp), 1);   /* little-endian here */
    ck_assert_int_eq(fclose(fp), 0);
    oac_mb *mb = oac_mb_new(f->ctx);
    oac_gb *g = oac_mb_graph(mb);
    cu_cache_input(g, "cache", 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, CU_UPD);
    Onnx__TensorProto *t = oac_gb_init_i64(g, "pos", "", &pos, 1);
    ck_assert_ptr_nonnull(t);
    set_external(mb, t, "pos.bin", "0", "8");
    cu_node(g, "upd", "cache,values,pos", "upd", true);
    cu_output_alias(g, "upd", "cache");
    snprintf(path, sizeof path, "%s/m.onnx", dir);
    ck_assert_int_eq(oac_mb_write(mb, path), 0);
    oac_mb_free(mb);
    ck_assert_int_eq(oac_model_load(f->ctx, &f->m, path, f->d), OAC_OK);
    ck_assert_int_eq(fx_check(f, NULL), OAC_OK);
}
static void ext_position_over(fx *f) { ext_position(f, 16); }
static void ext_position_last(fx *f) { ext_position(f, 15); }

static const scene_case ext_rows[] = {
    { "position_over", ext_position_over, WANT(OAC_CAPACITY_OVERFLOW), "upd", "cache",
      NULL },
    { "position_last", ext_position_last, NEAR(OAC_CAPACITY_OVERFLOW) },
    { "past_end", ext_past_end, WANT(OAC_EXTERNAL_DATA_INVALID), NULL, "w",
      "/graph/initializer/1" },
    { "outside", ext_outside, WANT(OAC_EXTERNAL_DATA_INVALID), NULL, "w",
      "/graph/initializer/1" },
    { "inside", ext_inside, NEAR(OAC_EXTERNAL_DATA_INVALID) },
    { "length_short", ext_length_short, WANT(OAC_EXTERNAL_DATA_INVALID), NULL, "w",
      "/graph/initializer/1" },
    { "no_length", ext_no_length, NEAR(OAC_EXTERNAL_DATA_INVALID) },
    { "nul_location", ext_nul, WANT(OAC_EXTERNAL_DATA_INVALID), NULL, "w",
      "/graph/initializer/1" },
};
CASES_TEST(ext_rows)

Suite *test_suite(void)
{
    Suite *s = suite_create("extdata");
    TCase *tc = tcase_create("extdata");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_valid_reference_is_read);
    tcase_add_test(tc, test_escapes);
    tcase_add_test(tc, test_offsets);
    tcase_add_test(tc, test_everywhere);
    tcase_add_test(tc, test_buffer_base_dir_and_chaos);
    ADD_CASES(tc, ext_rows);
    suite_add_tcase(s, tc);
    return s;
}

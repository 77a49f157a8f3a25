/* check_consts.c: known values (lib/check/consts.c, lib/check/inputs.c), exactly the
 * contract's list (section 3, "A value is known when ..."): Constant,
 * initializers that are not graph inputs, --input files, and Add, Sub,
 * Mul, Neg, Min, Max, Identity, Cast, Squeeze, Unsqueeze, Reshape over
 * known values, Shape/Size over static or --dim-bound dims.  Nothing else
 * folds; overflow makes a value unknown; --input usage errors.
 */
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/alias.h"
#include "check/graph.h"
#include "check/shapes.h"

/* Known value of a main-graph value: element count, or -1 when unknown. */
static long known_of(fx *r, const char *name, int64_t *v, size_t max)
{
    oac_value *x = oac_scope_local(r->st.graphs->scopes[0], name);
    ck_assert_msg(x != NULL, "no value %s", name);
    const oac_known *k = oac_shapes_known(r->st.shapes, x->id);
    if (!k)
        return -1;
    for (size_t i = 0; i < k->n && i < max; i++)
        v[i] = k->v[i];
    return (long)k->n;
}

START_TEST(test_sources)
{
    int64_t v[8];
    fx r;
    fx_build(&r, NULL);
    int64_t three[] = { 3 }, four[] = { 4 }, dflt[] = { 9 };
    oac_gb_constant_i64(r.g, "c3", "", three, 1);
    oac_gb_init_i64(r.g, "i4", "", four, 1);
    /* An initializer that is also a graph input is an overridable
     * default: not known. */
    oac_gb_input(r.g, "over", OAC_T_INT64, "");
    oac_gb_init_i64(r.g, "over", "", dflt, 1);
    oac_gb_input(r.g, "pos", OAC_T_INT64, "");
    float f[] = { 1.5f };
    oac_gb_init_f32(r.g, "fl", "", f, 1);
    oac_gb_node(r.g, "Identity", NULL, "a", "over", "o2");
    oac_gb_node(r.g, "Identity", NULL, "b", "pos", "p2");
    ck_assert_int_eq(fx_infer(&r, NULL), OAC_OK);
    ck_assert_int_eq(known_of(&r, "c3", v, 8), 1);
    ck_assert_int_eq(v[0], 3);
    ck_assert_int_eq(known_of(&r, "i4", v, 8), 1);
    ck_assert_int_eq(v[0], 4);
    ck_assert_int_eq(known_of(&r, "over", v, 8), -1);
    ck_assert_int_eq(known_of(&r, "o2", v, 8), -1);
    ck_assert_int_eq(known_of(&r, "pos", v, 8), -1);
    ck_assert_int_eq(known_of(&r, "p2", v, 8), -1);
    ck_assert_int_eq(known_of(&r, "fl", v, 8), -1);   /* integers only */
    fx_end(&r);
}
END_TEST

START_TEST(test_folding_list)
{
    int64_t v[8];
    fx r;
    fx_build(&r, NULL);
    oac_gb *g = r.g;
    int64_t a[] = { 5, 7 }, b[] = { 2 }, ax[] = { 0 }, shp[] = { 2, 1 };
    oac_gb_init_i64(g, "a", "2", a, 2);
    oac_gb_init_i64(g, "b", "", b, 1);
    oac_gb_init_i64(g, "ax", "1", ax, 1);
    oac_gb_init_i64(g, "shp", "2", shp, 2);
    oac_gb_node(g, "Add", NULL, "n1", "a,b", "add");        /* 7 9 */
    oac_gb_node(g, "Sub", NULL, "n2", "a,b", "sub");        /* 3 5 */
    oac_gb_node(g, "Mul", NULL, "n3", "a,b", "mul");        /* 10 14 */
    oac_gb_node(g, "Neg", NULL, "n4", "a", "neg");          /* -5 -7 */
    oac_gb_node(g, "Min", NULL, "n5", "a,b,add", "mn");     /* 2 2 */
    oac_gb_node(g, "Max", NULL, "n6", "a,b", "mx");         /* 5 7 */
    oac_gb_node(g, "Identity", NULL, "n7", "a", "id");
    Onnx__NodeProto *c = oac_gb_node(g, "Cast", NULL, "n8", "a", "c32");
    oac_node_attr_int(g, c, "to", OAC_T_INT32);
    oac_gb_node(g, "Unsqueeze", NULL, "n9", "b,ax", "us");  /* [2] */
    oac_gb_node(g, "Squeeze", NULL, "n10", "us,ax", "sq");  /* 2 */
    oac_gb_node(g, "Reshape", NULL, "n11", "a,shp", "rs");  /* [[5],[7]] */
    /* Not in the list: Gather, Concat, Div, Slice never fold. */
    oac_gb_node(g, "Gather", NULL, "n12", "a,b", "ga");
    oac_gb_node(g, "Concat", NULL, "n13", "a,a", "cc");
    oac_gb_node(g, "Div", NULL, "n14", "a,b", "dv");
    ck_assert_int_eq(fx_infer(&r, NULL), OAC_OK);
    ck_assert_int_eq(known_of(&r, "add", v, 8), 2);
    ck_assert_int_eq(v[0], 7); ck_assert_int_eq(v[1], 9);
    ck_assert_int_eq(known_of(&r, "sub", v, 8), 2);
    ck_assert_int_eq(v[0], 3); ck_assert_int_eq(v[1], 5);
    ck_assert_int_eq(known_of(&r, "mul", v, 8), 2);
    ck_assert_int_eq(v[0], 10); ck_assert_int_eq(v[1], 14);
    ck_assert_int_eq(known_of(&r, "neg", v, 8), 2);
    ck_assert_int_eq(v[0], -5); ck_assert_int_eq(v[1], -7);
    ck_assert_int_eq(known_of(&r, "mn", v, 8), 2);
    ck_assert_int_eq(v[0], 2); ck_assert_int_eq(v[1], 2);
    ck_assert_int_eq(known_of(&r, "mx", v, 8), 2);
    ck_assert_int_eq(v[0], 5); ck_assert_int_eq(v[1], 7);
    ck_assert_int_eq(known_of(&r, "id", v, 8), 2);
    ck_assert_int_eq(known_of(&r, "c32", v, 8), 2);
    ck_assert_int_eq(v[1], 7);
    ck_assert_int_eq(known_of(&r, "us", v, 8), 1);
    ck_assert_int_eq(known_of(&r, "sq", v, 8), 1);
    ck_assert_int_eq(v[0], 2);
    ck_assert_int_eq(known_of(&r, "rs", v, 8), 2);
    ck_assert_int_eq(known_of(&r, "ga", v, 8), -1);
    ck_assert_int_eq(known_of(&r, "cc", v, 8), -1);
    ck_assert_int_eq(known_of(&r, "dv", v, 8), -1);
    fx_end(&r);
}
END_TEST

START_TEST(test_overflow_unknown)
{
    int64_t v[4];
    fx r;
    fx_build(&r, NULL);
    int64_t big[] = { INT64_MAX }, two[] = { 2 }, mn[] = { INT64_MIN }, huge[] = { 1LL << 40 };
    oac_gb_init_i64(r.g, "big", "", big, 1);
    oac_gb_init_i64(r.g, "two", "", two, 1);
    oac_gb_init_i64(r.g, "mn", "", mn, 1);
    oac_gb_init_i64(r.g, "huge", "", huge, 1);
    oac_gb_node(r.g, "Add", NULL, "n1", "big,two", "s");
    oac_gb_node(r.g, "Mul", NULL, "n2", "big,two", "m");
    oac_gb_node(r.g, "Sub", NULL, "n3", "mn,two", "d");
    oac_gb_node(r.g, "Neg", NULL, "n4", "mn", "ng");
    Onnx__NodeProto *c = oac_gb_node(r.g, "Cast", NULL, "n5", "huge", "h32");
    oac_node_attr_int(r.g, c, "to", OAC_T_INT32);
    ck_assert_int_eq(fx_infer(&r, NULL), OAC_OK);
    ck_assert_int_eq(known_of(&r, "s", v, 4), -1);
    ck_assert_int_eq(known_of(&r, "m", v, 4), -1);
    ck_assert_int_eq(known_of(&r, "d", v, 4), -1);
    ck_assert_int_eq(known_of(&r, "ng", v, 4), -1);
    ck_assert_int_eq(known_of(&r, "h32", v, 4), -1);
    ck_assert_int_eq(known_of(&r, "big", v, 4), 1);
    fx_end(&r);
}
END_TEST

START_TEST(test_shape_size_fold)
{
    int64_t v[8];
    fx r;
    fx_build(&r, NULL);
    oac_gb_input(r.g, "x", OAC_T_FLOAT, "2,S,4");
    oac_gb_input(r.g, "y", OAC_T_FLOAT, "2,T");
    oac_gb_node(r.g, "Shape", NULL, "s1", "x", "xs");
    oac_gb_node(r.g, "Size", NULL, "s2", "x", "xn");
    oac_gb_node(r.g, "Shape", NULL, "s3", "y", "ys");     /* T unbound */
    Onnx__NodeProto *n = oac_gb_node(r.g, "Shape", NULL, "s4", "x", "xs2");
    oac_node_attr_int(r.g, n, "start", -1);
    oac_dim_binding d[] = { { "S", 3 } };
    oac_check_opts o = { .dims = d, .n_dims = 1 };
    ck_assert_int_eq(fx_infer(&r, &o), OAC_OK);
    ck_assert_int_eq(known_of(&r, "xs", v, 8), 3);
    ck_assert_int_eq(v[0], 2); ck_assert_int_eq(v[1], 3); ck_assert_int_eq(v[2], 4);
    ck_assert_int_eq(known_of(&r, "xn", v, 8), 1);
    ck_assert_int_eq(v[0], 24);
    ck_assert_int_eq(known_of(&r, "ys", v, 8), -1);
    ck_assert_int_eq(known_of(&r, "xs2", v, 8), 1);
    ck_assert_int_eq(v[0], 4);
    fx_end(&r);
}
END_TEST

START_TEST(test_large_initializer_not_read)
{
    /* More elements than OAC_KNOWN_MAX: unknown, payload not decoded. */
    int64_t v[4];
    fx r;
    fx_build(&r, NULL);
    size_t n = OAC_KNOWN_MAX + 1;
    int64_t *big = calloc(n, sizeof *big);
    char dims[32];
    snprintf(dims, sizeof dims, "%zu", n);
    oac_gb_init_i64(r.g, "w", dims, big, n);
    free(big);
    ck_assert_int_eq(fx_infer(&r, NULL), OAC_OK);
    ck_assert_int_eq(known_of(&r, "w", v, 4), -1);
    fx_end(&r);
}
END_TEST

/* Write an INT64 TensorProto file; returns the path (static buffer). */
static const char *write_i64s(const char *tag, const int64_t *v, size_t n,
                                const int64_t *dims, size_t nd)
{
    static char path[256];
    snprintf(path, sizeof path, "/tmp/check_consts_%ld_%s.pb", (long)getpid(), tag);
    Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
    t.has_data_type = 1;
    t.data_type = OAC_T_INT64;
    t.n_dims = nd;
    t.dims = (int64_t *)dims;
    t.n_int64_data = n;
    t.int64_data = (int64_t *)v;
    size_t len = onnx__tensor_proto__get_packed_size(&t);
    uint8_t *buf = malloc(len ? len : 1);
    onnx__tensor_proto__pack(&t, buf);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite(buf, 1, len, f);
    fclose(f);
    free(buf);
    return path;
}

START_TEST(test_input_file_known)
{
    int64_t v[4];
    int64_t p[] = { 5 }, one[] = { 1 };
    char path[256];
    snprintf(path, sizeof path, "%s", write_i64s("pos", p, 1, one, 1));
    fx r;
    fx_build(&r, NULL);
    oac_gb_input(r.g, "position", OAC_T_INT64, "P");
    oac_gb_node(r.g, "Add", NULL, "n", "position,position", "twice");
    oac_input_file in[] = { { "position", path } };
    oac_check_opts o = { .inputs = in, .n_inputs = 1 };
    ck_assert_int_eq(fx_infer(&r, &o), OAC_OK);
    ck_assert_int_eq(known_of(&r, "position", v, 4), 1);
    ck_assert_int_eq(v[0], 5);
    ck_assert_int_eq(known_of(&r, "twice", v, 4), 1);
    ck_assert_int_eq(v[0], 10);
    /* The file's dims bind the declaration's symbol. */
    ck_assert_int_eq(oac_shapes_dim(r.st.shapes,
                                    oac_shapes_value(r.st.shapes,
                                                     oac_scope_local(r.st.graphs->scopes[0], "position")->id)->dims[0]), 1);
    fx_end(&r);

    /* A file contradicting a static dim: shape-mismatch. */
    int64_t two[] = { 2 };
    int64_t pp[] = { 1, 2 };
    snprintf(path, sizeof path, "%s", write_i64s("pos2", pp, 2, two, 1));
    fx_build(&r, NULL);
    oac_gb_input(r.g, "position", OAC_T_INT64, "1");
    oac_input_file in2[] = { { "position", path } };
    oac_check_opts o2 = { .inputs = in2, .n_inputs = 1 };
    ck_assert_int_eq(fx_check(&r, &o2), OAC_OK);
    ck_assert_ptr_nonnull(diag_find(r.d, OAC_SHAPE_MISMATCH, NULL, "position", NULL));
    fx_end(&r);
    unlink(path);
}
END_TEST

START_TEST(test_input_usage_errors)
{
    int64_t p[] = { 5 };
    char path[256];
    snprintf(path, sizeof path, "%s", write_i64s("u", p, 1, NULL, 0));
    const oac_input_file bad[][1] = {
        { { "nosuch", path } },                           /* unknown input */
        { { "w", path } },                                /* an initializer */
    };
    const char *msg[] = { "nosuch", "w" };
    for (size_t i = 0; i < 2; i++) {
        fx r;
        fx_build(&r, NULL);
        oac_gb_input(r.g, "position", OAC_T_INT64, "");
        int64_t w[] = { 1 };
        oac_gb_init_i64(r.g, "w", "", w, 1);
        oac_check_opts o = { .inputs = bad[i], .n_inputs = 1 };
        ck_assert_int_eq(fx_check(&r, &o), OAC_EINVAL);
        ck_assert_ptr_nonnull(strstr(oac_errmsg(r.ctx), msg[i]));
        ck_assert_ptr_null(r.a);
        /* A usage error is not a finding of the model. */
        ck_assert_int_eq(diag_count(r.d, OAC_PARSE_ERROR), 0);
        fx_end(&r);
    }
    /* A missing file and unreadable contents are unreadable input, not
     * usage: one parse-error naming the input, and the check goes on
     * (issue 12: the report says why the exit status is 2). */
    FILE *f = fopen(path, "wb");
    fputs("\xff\xff\xff\xff garbage", f);
    fclose(f);
    const char *files[] = { "/nonexistent/dir/file.pb", path };
    for (size_t i = 0; i < 2; i++) {
        fx r;
        fx_build(&r, NULL);
        oac_gb_input(r.g, "position", OAC_T_INT64, "");
        oac_input_file in[] = { { "position", files[i] } };
        oac_check_opts o = { .inputs = in, .n_inputs = 1 };
        ck_assert_int_eq(fx_check(&r, &o), OAC_OK);
        ck_assert_ptr_nonnull(r.a);
        ck_assert_int_eq(diag_count(r.d, OAC_PARSE_ERROR), 1);
        fx_end(&r);
    }
    unlink(path);
}
END_TEST

/* Tensors the run's reader cannot take are refused by check as run
 * refuses them (check/inputs.c, fit_tensor; fuzz_inputs found check
 * accepting a segment): one parse-error naming the input and the reason,
 * and the input stays unknown.  The near miss, the same tensor whole, is
 * known. */
START_TEST(test_input_whole_tensors_only)
{
    static int64_t one[] = { 1 }, many[OAC_RT_MAX_RANK + 1];
    static const struct {
        const char *tag;
        bool segment;
        size_t rank;
        const char *why;     /* NULL: accepted */
    } rows[] = {
        { "segment", true, 1, "TensorProto.segment" },
        { "rank", false, OAC_RT_MAX_RANK + 1, "has rank 9" },
        { "whole", false, 1, NULL },
        { "rank_max", false, OAC_RT_MAX_RANK, NULL },
    };
    for (size_t i = 0; i < OAC_RT_MAX_RANK + 1; i++)
        many[i] = 1;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "/tmp/check_consts_%ld_%s.pb", (long)getpid(), rows[i].tag);
        int64_t p[] = { 5 };
        Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
        Onnx__TensorProto__Segment seg = ONNX__TENSOR_PROTO__SEGMENT__INIT;
        seg.has_begin = seg.has_end = 1;
        seg.begin = 0;
        seg.end = 1;
        t.has_data_type = 1;
        t.data_type = OAC_T_INT64;
        t.n_dims = rows[i].rank;
        t.dims = rows[i].rank == 1 ? one : many;
        t.n_int64_data = 1;
        t.int64_data = p;
        t.segment = rows[i].segment ? &seg : NULL;
        uint8_t buf[256];
        size_t len = onnx__tensor_proto__pack(&t, buf);
        ck_assert_uint_lt(len, sizeof buf);
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        fwrite(buf, 1, len, f);
        fclose(f);

        fx r;
        fx_build(&r, NULL);
        oac_gb_input(r.g, "position", OAC_T_INT64, "");
        oac_input_file in[] = { { "position", path } };
        oac_check_opts o = { .inputs = in, .n_inputs = 1 };
        ck_assert_int_eq(fx_check(&r, &o), OAC_OK);
        ck_assert_ptr_nonnull(r.a);
        const oac_diag *d = NULL;
        for (size_t k = 0; k < oac_diags_count(r.d); k++)
            if (oac_diags_get(r.d, k)->code == OAC_PARSE_ERROR)
                d = oac_diags_get(r.d, k);
        if (rows[i].why) {
            ck_assert_msg(d != NULL, "%s: no parse-error", rows[i].tag);
            ck_assert_str_eq(d->value, "position");
            ck_assert_msg(strstr(d->message, rows[i].why) && strstr(d->message, path),
                          "%s: %s", rows[i].tag, d->message);
            ck_assert_uint_eq(r.a->n_inputs, 0);
        } else {
            ck_assert_msg(d == NULL, "%s: %s", rows[i].tag, d ? d->message : "");
            ck_assert_uint_eq(r.a->n_inputs, 1);
        }
        fx_end(&r);
        unlink(path);
    }
}
END_TEST

START_TEST(test_alloc_failures_inputs)
{
    /* Fail each allocation of a check with --input and --dim in turn. */
    int64_t p[] = { 2 }, one[] = { 1 };
    char path[256];
    snprintf(path, sizeof path, "%s", write_i64s("chaos", p, 1, one, 1));
    bool done = false;
    for (unsigned long n = 1; n < 20000 && !done; n++) {
        fx r;
        fx_build(&r, NULL);
        oac_vi_access(r.g, oac_gb_input(r.g, "cache", OAC_T_FLOAT, "1,S,4"), 1);
        oac_gb_input(r.g, "values", OAC_T_FLOAT, "1,3,4");
        oac_gb_input(r.g, "position", OAC_T_INT64, "1");
        Onnx__NodeProto *nd = oac_gb_node(r.g, "CacheUpdate", "onnx_alias", "upd",
                                          "cache,values,position", "out");
        oac_node_attr_int(r.g, nd, "axis", 1);
        oac_node_alias(r.g, nd, 0, 0, 1);
        oac_vi_alias_of(r.g, oac_gb_output(r.g, "out", OAC_T_FLOAT, "1,S,4"), "cache");
        oac_input_file in[] = { { "position", path } };
        oac_dim_binding d[] = { { "S", 4 } };
        oac_check_opts o = { .inputs = in, .n_inputs = 1, .dims = d, .n_dims = 1 };
        fx_load(&r);
        oac_ctx_fail_alloc_after(r.ctx, n);
        int rc = oac_check(r.ctx, &r.a, r.m, &o, r.d);
        oac_ctx_fail_alloc_after(r.ctx, 0);
        ck_assert_msg(rc == OAC_OK || rc == OAC_ENOMEM, "rc %d at %lu: %s", rc, n,
                      oac_errmsg(r.ctx));
        if (rc == OAC_OK) {
            /* 2 + 3 > 4 from the --input position and the --dim capacity */
            ck_assert_ptr_nonnull(diag_find(r.d, OAC_CAPACITY_OVERFLOW, "upd", "cache", NULL));
            done = true;
        }
        fx_end(&r);
    }
    ck_assert(done);
    unlink(path);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("consts");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_sources);
    tcase_add_test(t, test_folding_list);
    tcase_add_test(t, test_overflow_unknown);
    tcase_add_test(t, test_shape_size_fold);
    tcase_add_test(t, test_large_initializer_not_read);
    tcase_add_test(t, test_input_file_known);
    tcase_add_test(t, test_input_usage_errors);
    tcase_add_test(t, test_input_whole_tensors_only);
    tcase_add_test(t, test_alloc_failures_inputs);
    suite_add_tcase(s, t);
    return s;
}

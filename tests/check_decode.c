/* check_decode.c: the direct decoder (lib/decode.c) against the loader's
 * former parser (tests/legacy_parse.c: wire pre-pass, protobuf-c unpack,
 * post-pass).
 *
 * Every input is decoded both ways and must give the same result: the
 * same parse-error message (byte offsets included), or messages whose
 * protobuf_c_message_pack output is byte-identical and the same external
 * data flag.  Inputs: every model of Debian's libonnx-testdata (when
 * installed) as ModelProto and its test data .pb files as TensorProto,
 * every example the build wrote, builder models with unknown fields and
 * large payloads, and seeded truncations, random bytes, byte mutations
 * and concatenations (which make every singular field occur twice, so
 * submessages merge) of those.
 */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "decode.h"
#include "legacy_parse.h"
#include "oac_build.h"
#include "oac_int.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next_rand(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return rng >> 17;
}

typedef struct stats {
    size_t inputs, ok, errors;
} stats;

static uint8_t *packed(const ProtobufCMessage *m, size_t *n)
{
    *n = protobuf_c_message_get_packed_size(m);
    uint8_t *b = malloc(*n ? *n : 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(protobuf_c_message_pack(m, b), *n);
    return b;
}

/* Decode buf both ways; the results must be the same. */
static void same(const ProtobufCMessageDescriptor *desc, const uint8_t *buf, size_t len,
                 const char *what, stats *st)
{
    oac_ctx *ctx = oac_ctx_new();
    /* an exact copy: sanitizers see reads past the end */
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    char err_old[256] = "", err_new[256] = "";
    legacy_tree *t;
    ProtobufCMessage *mo, *mn = NULL;
    bool ext_old, ext_new = false;
    int ro = legacy_parse(ctx, desc, copy, len, &t, &mo, &ext_old, err_old, sizeof err_old);
    oac_arena *a = oac_arena_new(ctx);
    ck_assert_ptr_nonnull(a);
    int rn;
    if (len == 0) {
        rn = OAC_EPARSE;
        snprintf(err_new, sizeof err_new, "empty file at byte 0");
    } else {
        rn = oac_decode(ctx, a, desc, copy, len, &mn, &ext_new, err_new, sizeof err_new);
    }
    ck_assert_msg(ro == rn, "%s (%zu bytes): old %d '%s', new %d '%s'", what, len, ro,
                  err_old, rn, err_new);
    st->inputs++;
    if (ro == OAC_OK) {
        size_t no, nn;
        uint8_t *po = packed(mo, &no), *pn = packed(mn, &nn);
        ck_assert_msg(no == nn && memcmp(po, pn, no) == 0,
                      "%s (%zu bytes): packed outputs differ (%zu vs %zu bytes)", what,
                      len, no, nn);
        ck_assert_msg(ext_old == ext_new, "%s: external flag differs", what);
        free(po);
        free(pn);
        st->ok++;
    } else {
        ck_assert_int_eq(ro, OAC_EPARSE);
        ck_assert_msg(strcmp(err_old, err_new) == 0, "%s (%zu bytes): old '%s', new '%s'",
                      what, len, err_old, err_new);
        st->errors++;
    }
    legacy_free(t);
    oac_arena_free(a);
    free(copy);
    oac_ctx_free(ctx);
}

/* The input, and variants of it: cut short, bytes changed, doubled. */
static void variants(const ProtobufCMessageDescriptor *desc, const uint8_t *buf, size_t len,
                     const char *what, int n_mut, stats *st)
{
    same(desc, buf, len, what, st);
    if (len == 0)
        return;
    uint8_t *b = malloc(2 * len + 16);
    /* truncations: a few at random, and near the end */
    for (int i = 0; i < n_mut; i++) {
        size_t cut = (size_t)(next_rand() % len);
        same(desc, buf, cut, what, st);
    }
    same(desc, buf, len - 1, what, st);
    /* mutations: one to four bytes set at random */
    for (int i = 0; i < n_mut; i++) {
        memcpy(b, buf, len);
        int k = 1 + (int)(next_rand() % 4);
        for (int j = 0; j < k; j++) {
            uint64_t r = next_rand();
            size_t at = (size_t)(r % len);
            switch ((r >> 40) % 4) {
            case 0: b[at] = (uint8_t)(r >> 24); break;
            case 1: b[at] ^= (uint8_t)(1u << ((r >> 24) % 8)); break;
            case 2: b[at] = (uint8_t)(b[at] + 1); break;
            default: b[at] = (uint8_t)(b[at] - 1); break;
            }
        }
        same(desc, b, len, what, st);
    }
    /* doubled: every singular field twice, submessages merge */
    memcpy(b, buf, len);
    memcpy(b + len, buf, len);
    same(desc, b, 2 * len, what, st);
    /* a slice of the input (starts mid-field) */
    size_t from = (size_t)(next_rand() % len);
    same(desc, buf + from, len - from, what, st);
    free(b);
}

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    ck_assert_int_ge(n, 0);
    rewind(f);
    uint8_t *b = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static size_t files(const char *pattern, const ProtobufCMessageDescriptor *desc, int n_mut,
                    stats *st)
{
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0)
        return 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t len;
        uint8_t *b = read_all(g.gl_pathv[i], &len);
        variants(desc, b, len, g.gl_pathv[i], n_mut, st);
        free(b);
    }
    size_t n = g.gl_pathc;
    globfree(&g);
    return n;
}

START_TEST(test_testdata_models)
{
    stats st = { 0 };
    size_t n = 0;
    static const char *dirs[] = { "node", "pytorch-converted", "pytorch-operator", "real",
                                  "simple" };
    char pat[256];
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        snprintf(pat, sizeof pat, "/usr/share/libonnx-testdata/data/%s/*/model.onnx", dirs[i]);
        n += files(pat, &onnx__model_proto__descriptor, 6, &st);
        snprintf(pat, sizeof pat, "/usr/share/libonnx-testdata/data/%s/*/test_data_set_0/*.pb",
                 dirs[i]);
        files(pat, &onnx__tensor_proto__descriptor, 2, &st);
    }
    if (n == 0)
        fprintf(stderr, "check_decode: no libonnx-testdata models here\n");
    fprintf(stderr, "testdata: %zu models, %zu inputs, %zu decoded, %zu parse errors\n", n,
            st.inputs, st.ok, st.errors);
}
END_TEST

START_TEST(test_examples)
{
    stats st = { 0 };
    size_t n = files(TOP_BUILDDIR "/examples/*.onnx", &onnx__model_proto__descriptor, 40, &st);
    fprintf(stderr, "examples: %zu models, %zu inputs, %zu decoded, %zu parse errors\n", n,
            st.inputs, st.ok, st.errors);
}
END_TEST

/* A builder model with contract fields, payloads of several sizes and
 * forms, subgraphs, and unknown fields small and large. */
static void builder_model(uint8_t **out, size_t *len, size_t big)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    oac_mb_metadata(mb, "k", "v");
    oac_gb *g = oac_mb_graph(mb);
    Onnx__ValueInfoProto *c = oac_gb_input(g, "cache", OAC_T_FLOAT, "1,2,batch,4");
    oac_vi_access(g, c, 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, "1,2,1,4");
    Onnx__ValueInfoProto *o = oac_gb_output(g, "out", OAC_T_FLOAT, "1,2,batch,4");
    oac_vi_alias_of(g, o, "cache");
    float *fv = malloc(big * sizeof *fv);
    for (size_t i = 0; i < big; i++)
        fv[i] = (float)i / 3.0f;
    char dims[32], half[32];
    snprintf(dims, sizeof dims, "%zu", big);
    snprintf(half, sizeof half, "%zu", big / 2 + 1);
    oac_gb_init_f32(g, "wf", dims, fv, big);
    oac_gb_init_raw(g, "wr", OAC_T_FLOAT, dims, fv, big * sizeof *fv);
    int64_t pos[3] = { 1, -2, 300 };
    oac_gb_init_i64(g, "pos", "3", pos, 3);
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "u", "cache,values,pos",
                                     "out");
    oac_node_alias(g, n, 0, 0, 1);
    oac_node_attr_int(g, n, "axis", -2);
    static uint8_t ld[2 + 300];
    ld[0] = (uint8_t)(300 | 0x80);
    ld[1] = (uint8_t)(300 >> 7);
    for (size_t j = 0; j < 300; j++)
        ld[2 + j] = (uint8_t)(j * 31);
    static const uint8_t small[1] = { 42 };
    static const uint8_t f32[4] = { 1, 2, 3, 4 };
    n->base.unknown_fields = oac_mb_alloc(mb, 4 * sizeof *n->base.unknown_fields);
    ck_assert_ptr_nonnull(n->base.unknown_fields);
    n->base.unknown_fields[0] = (ProtobufCMessageUnknownField){
        .tag = 3000, .wire_type = PROTOBUF_C_WIRE_TYPE_VARINT, .len = 1,
        .data = (uint8_t *)small };
    n->base.unknown_fields[1] = (ProtobufCMessageUnknownField){
        .tag = 3001, .wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED, .len = sizeof ld,
        .data = ld };
    n->base.unknown_fields[2] = (ProtobufCMessageUnknownField){
        .tag = 3000, .wire_type = PROTOBUF_C_WIRE_TYPE_32BIT, .len = 4,
        .data = (uint8_t *)f32 };
    n->base.unknown_fields[3] = (ProtobufCMessageUnknownField){
        .tag = 3002, .wire_type = PROTOBUF_C_WIRE_TYPE_VARINT, .len = 1,
        .data = (uint8_t *)small };
    n->base.n_unknown_fields = 4;
    Onnx__NodeProto *iff = oac_gb_node(g, "If", NULL, "if", "c", "y");
    oac_gb *th = oac_node_attr_graph(g, iff, "then_branch", "then");
    oac_gb_output(th, "y", OAC_T_FLOAT, "4");
    oac_gb_init_f32(th, "k", half, fv, big / 2 + 1);
    oac_gb_node(th, "Identity", NULL, NULL, "x", "y");
    oac_gb *f = oac_mb_function(mb, "local", "F", "a", "b");
    Onnx__NodeProto *k = oac_gb_node(f, "Constant", NULL, "k", "", "w");
    oac_node_attr_tensor(f, k, "value", oac_gb_tensor_raw(f, "w", OAC_T_FLOAT, dims, fv, big * sizeof *fv));
    free(fv);
    ck_assert_int_eq(oac_mb_pack(mb, out, len), 0);
    oac_mb_free(mb);
    oac_ctx_free(ctx);
}

START_TEST(test_builder_models)
{
    stats st = { 0 };
    static const size_t sizes[] = { 1, 4, 15, 16, 17, 40, 1000 };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        uint8_t *b;
        size_t len;
        builder_model(&b, &len, sizes[i]);
        variants(&onnx__model_proto__descriptor, b, len, "builder", 300, &st);
        /* every truncation of the smaller ones */
        if (len < 3000)
            for (size_t cut = 0; cut < len; cut++)
                same(&onnx__model_proto__descriptor, b, cut, "builder cut", &st);
        free(b);
    }
    fprintf(stderr, "builder: %zu inputs, %zu decoded, %zu parse errors\n", st.inputs, st.ok,
            st.errors);
}
END_TEST

/* Hand-made wire forms: duplicated oneofs, merges of messages holding
 * payloads, packed and unpacked scalars, unknown spans. */
START_TEST(test_wire_forms)
{
    stats st = { 0 };
    static const struct { const char *b; size_t n; } cases[] = {
        /* graph.value_info { name "x" type { } type { } }: empty oneofs merge */
        { "\x3a\x09\x6a\x07\x0a\x01\x78\x12\x00\x12\x00", 11 },
        /* type { tensor_type { elem_type 1 } } type { sequence_type { elem_type { } } } */
        { "\x3a\x11\x6a\x0f\x0a\x01\x78\x12\x04\x0a\x02\x08\x01\x12\x04\x22\x02"
          "\x0a\x00", 19 },
        /* type { tensor_type { elem_type 1 } } type { tensor_type { shape { dim 5 } } } */
        { "\x3a\x15\x6a\x13\x0a\x01\x78\x12\x04\x0a\x02\x08\x01\x12\x08\x0a\x06"
          "\x12\x04\x0a\x02\x08\x05", 23 },
        /* ir_version twice, graph twice with names */
        { "\x08\x01\x08\x02\x3a\x03\x12\x01\x61\x3a\x03\x12\x01\x62", 14 },
        /* unknown varints 77, 78, 77 */
        { "\xe8\x04\x01\xf0\x04\x02\xe8\x04\x03", 9 },
        /* an initializer's dims packed and unpacked */
        { "\x3a\x0a\x2a\x08\x0a\x02\x01\x02\x08\x03\x08\x04", 12 },
        /* a dimension's oneof: dim_value then dim_param */
        { "\x3a\x12\x6a\x10\x0a\x01\x78\x12\x0b\x0a\x09\x12\x07\x0a\x05\x08\x03"
          "\x12\x01\x4e", 20 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        variants(&onnx__model_proto__descriptor, (const uint8_t *)cases[i].b, cases[i].n,
                 "case", 50, &st);
    /* random bytes */
    for (int i = 0; i < 5000; i++) {
        size_t len = 1 + next_rand() % 200;
        uint8_t b[200];
        for (size_t j = 0; j < len; j++)
            b[j] = (uint8_t)next_rand();
        same(&onnx__model_proto__descriptor, b, len, "random", &st);
        same(&onnx__tensor_proto__descriptor, b, len, "random tensor", &st);
    }
    fprintf(stderr, "wire forms: %zu inputs, %zu decoded, %zu parse errors\n", st.inputs,
            st.ok, st.errors);
}
END_TEST

static Suite *decode_suite(void)
{
    Suite *s = suite_create("decode");
    TCase *tc = tcase_create("decode");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_wire_forms);
    tcase_add_test(tc, test_builder_models);
    tcase_add_test(tc, test_examples);
    tcase_add_test(tc, test_testdata_models);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(decode_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

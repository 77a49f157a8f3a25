/* check_decode.c: the direct decoder (lib/model/decode.c) against the loader's
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
#include "harness.h"
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/arena.h"
#include "model/decode.h"
#include "legacy_parse.h"

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
    /* every other input into a zeroed arena, as oac_model_load decodes
     * (messages then get only their non-zero words) */
    oac_arena *a = st->inputs & 1 ? oac_arena_new_zeroed(ctx) : oac_arena_new(ctx);
    ck_assert_ptr_nonnull(a);
    int rn;
    if (len == 0) {
        rn = OAC_EPARSE;
        snprintf(err_new, sizeof err_new, "empty file at byte 0");
    } else {
        rn = oac_decode(ctx, a, desc, copy, len, 0, &mn, &ext_new, err_new, sizeof err_new);
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

/* ---- many occurrences of a singular message ------------------------------ */

typedef struct wbuf {
    uint8_t *b;
    size_t n, cap;
} wbuf;

static void w_bytes(wbuf *w, const void *p, size_t n)
{
    if (w->n + n > w->cap) {
        w->cap = 2 * (w->n + n) + 64;
        w->b = realloc(w->b, w->cap);
        ck_assert_ptr_nonnull(w->b);
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void w_varint(wbuf *w, uint64_t v)
{
    uint8_t t[10];
    size_t k = 0;
    do {
        t[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            t[k] |= 0x80;
        k++;
    } while (v);
    w_bytes(w, t, k);
}

/* field number f, wire type 2, the bytes of sub (which is freed) */
static void w_sub(wbuf *w, uint32_t f, wbuf *sub)
{
    w_varint(w, (uint64_t)f << 3 | 2);
    w_varint(w, sub->n);
    w_bytes(w, sub->b, sub->n);
    free(sub->b);
    *sub = (wbuf){ 0 };
}

static void w_str(wbuf *w, uint32_t f, const char *s)
{
    w_varint(w, (uint64_t)f << 3 | 2);
    w_varint(w, strlen(s));
    w_bytes(w, s, strlen(s));
}

static void w_int(wbuf *w, uint32_t f, uint64_t v)
{
    w_varint(w, (uint64_t)f << 3);
    w_varint(w, v);
}

/* A ModelProto with graph (field 7) k times: occurrence i holds node
 * "n<i>", and some an input, an initializer with dims packed or not, an
 * attribute whose tensor t occurs several times (its dims merge), a name;
 * ir_version and opset_import in between. */
static void many_graphs(wbuf *w, size_t k)
{
    char name[32];
    for (size_t i = 0; i < k; i++) {
        wbuf g = { 0 }, n = { 0 }, sub = { 0 };
        snprintf(name, sizeof name, "n%zu", i);
        w_str(&n, 3, name);
        w_str(&n, 4, "Relu");
        if (i % 4 == 1) {
            wbuf at = { 0 };
            w_str(&at, 1, "value");
            for (size_t j = 0; j < 1 + i % 7; j++) {
                wbuf t = { 0 };
                w_int(&t, 1, j + 1);
                w_int(&t, 2, 1);
                w_sub(&at, 5, &t);
            }
            w_int(&at, 20, 4);
            w_sub(&n, 5, &at);
        }
        w_sub(&g, 1, &n);
        if (i % 3 == 0) {
            snprintf(name, sizeof name, "x%zu", i);
            w_str(&sub, 1, name);
            w_sub(&g, 11, &sub);
        }
        if (i % 5 == 2) {
            wbuf dims = { 0 };
            w_varint(&dims, i);
            w_varint(&dims, 300);
            w_sub(&sub, 1, &dims);
            w_int(&sub, 1, 7);
            w_int(&sub, 2, 7);
            snprintf(name, sizeof name, "w%zu", i);
            w_str(&sub, 8, name);
            w_sub(&g, 5, &sub);
        }
        if (i % 11 == 3) {
            snprintf(name, sizeof name, "g%zu", i);
            w_str(&g, 2, name);
        }
        w_sub(w, 7, &g);
        if (i % 13 == 0)
            w_int(w, 1, 7 + i);
        if (i % 17 == 5) {
            w_str(&sub, 1, "");
            w_int(&sub, 2, 17);
            w_sub(w, 8, &sub);
        }
    }
}

/* protobuf-c merges k occurrences in O(k^2): compared on small k only. */
START_TEST(test_repeated_singular_same)
{
    stats st = { 0 };
    static const size_t ks[] = { 1, 2, 3, 4, 5, 8, 9, 17, 33, 100, 257, 600 };
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        wbuf w = { 0 };
        many_graphs(&w, ks[i]);
        oac_ctx *ctx = oac_ctx_new();
        oac_model *m;
        ck_assert_int_eq(oac_model_load_buffer(ctx, &m, w.b, w.n, "many", NULL, NULL), 0);
        ck_assert_uint_eq(oac_model_proto(m)->graph->n_node, ks[i]);
        oac_model_free(m);
        oac_ctx_free(ctx);
        variants(&onnx__model_proto__descriptor, w.b, w.n, "many graphs", 20, &st);
        free(w.b);
    }
    fprintf(stderr, "repeated singular: %zu inputs, %zu decoded, %zu parse errors\n",
            st.inputs, st.ok, st.errors);
}
END_TEST

/* 50,000 occurrences of ModelProto.graph, each with one node: linear
 * work, checked by the allocations and bytes it takes (protobuf-c's
 * merge would copy 10 GB of node pointers in 50,000 allocations). */
START_TEST(test_repeated_singular_linear)
{
    enum { K = 50000 };
    wbuf w = { 0 };
    char name[32];
    for (size_t i = 0; i < K; i++) {
        wbuf g = { 0 }, n = { 0 };
        snprintf(name, sizeof name, "n%zu", i);
        w_str(&n, 3, name);
        w_sub(&g, 1, &n);
        w_sub(&w, 7, &g);
    }
    oac_ctx *ctx = oac_ctx_new();
    unsigned long before = oac_ctx_alloc_count(ctx);
    oac_model *m;
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, w.b, w.n, "many", NULL, NULL), 0);
    unsigned long allocs = oac_ctx_alloc_count(ctx) - before;
    size_t used = oac_arena_used(m->arena);
    const Onnx__GraphProto *g = oac_model_proto(m)->graph;
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(g->n_node, K);
    for (size_t i = 0; i < K; i++) {
        snprintf(name, sizeof name, "n%zu", i);
        ck_assert_str_eq(g->node[i]->name, name);
    }
    /* each occurrence: a graph, a node, a 4-slot array, a name; the
     * merged array at most doubles the final node pointers */
    size_t per = sizeof(Onnx__GraphProto) + sizeof(Onnx__NodeProto) + 4 * sizeof(void *) + 16;
    fprintf(stderr, "%d graph occurrences (%zu bytes): %lu allocations, %zu arena bytes\n", K,
            w.n, allocs, used);
    ck_assert_uint_le(used, (size_t)K * per + 4 * (size_t)K * sizeof(void *));
    ck_assert_uint_le(allocs, 200);

    /* and the same for a nested singular message: one attribute whose
     * tensor t occurs 50,000 times, one dimension each */
    wbuf at = { 0 }, n = { 0 }, g2 = { 0 }, w2 = { 0 };
    w_str(&at, 1, "value");
    for (size_t i = 0; i < K; i++) {
        wbuf t = { 0 };
        w_int(&t, 1, i);
        w_sub(&at, 5, &t);
    }
    w_sub(&n, 5, &at);
    w_sub(&g2, 1, &n);
    w_sub(&w2, 7, &g2);
    oac_model *m2;
    before = oac_ctx_alloc_count(ctx);
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m2, w2.b, w2.n, "many t", NULL, NULL), 0);
    allocs = oac_ctx_alloc_count(ctx) - before;
    used = oac_arena_used(m2->arena);
    const Onnx__TensorProto *t = oac_model_proto(m2)->graph->node[0]->attribute[0]->t;
    ck_assert_uint_eq(t->n_dims, K);
    for (size_t i = 0; i < K; i++)
        ck_assert_int_eq(t->dims[i], (int64_t)i);
    fprintf(stderr, "%d tensor occurrences (%zu bytes): %lu allocations, %zu arena bytes\n",
            K, w2.n, allocs, used);
    ck_assert_uint_le(used, (size_t)K * (sizeof(Onnx__TensorProto) + 4 * 8) + 4 * (size_t)K * 8);
    ck_assert_uint_le(allocs, 200);
    oac_model_free(m2);
    oac_model_free(m);
    free(w.b);
    free(w2.b);
    oac_ctx_free(ctx);
}
END_TEST

/* ---- resident pages of a mapped file ----------------------------------- */

/* Rss of the mapping that starts at addr, in KiB (/proc/self/smaps); -1
 * when unknown.  Address lines start with a lower-case hex digit, field
 * lines ("Rss:     12 kB") with a capital. */
static long mapping_rss_kb(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    bool in = false;
    long kb = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo;
        if ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')) {
            in = sscanf(line, "%lx-", &lo) == 1 && lo == (unsigned long)(uintptr_t)addr;
            continue;
        }
        if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

/* OAC_DECODE_DROP_PAGES: decoding a file mapping with many weights, the
 * pages the walk has passed leave the resident set as it goes (model/load.c
 * drops the rest after the walk), and payloads read back right after. */
START_TEST(test_drop_pages)
{
    enum { NT = 2048, TB = 16 * 1024 };
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    oac_gb *g = oac_mb_graph(mb);
    uint8_t *w = malloc(TB);
    char name[32], dims[32];
    snprintf(dims, sizeof dims, "%d", TB / 4);
    for (int i = 0; i < NT; i++) {
        for (int j = 0; j < TB; j++)
            w[j] = (uint8_t)(i * 31 + j);
        snprintf(name, sizeof name, "w%d", i);
        oac_gb_init_raw(g, name, OAC_T_FLOAT, dims, w, TB);
    }
    free(w);
    uint8_t *mbuf;
    size_t mlen;
    ck_assert_int_eq(oac_mb_pack(mb, &mbuf, &mlen), 0);
    oac_mb_free(mb);
    /* the graph alone, so that the walk ends in the initializers (in a
     * model, the top-level fields after the graph would drop its pages) */
    oac_model *m;
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, mbuf, mlen, "m", NULL, NULL), 0);
    size_t len;
    uint8_t *buf = packed(&oac_model_proto(m)->graph->base, &len);
    oac_model_free(m);
    free(mbuf);
    char path[] = "/tmp/oac_decode_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
    free(buf);
    /* in the page cache, where fault-around maps many pages per fault */
    uint8_t *back = malloc(len);
    ck_assert_int_eq(pread(fd, back, len, 0), (ssize_t)len);
    free(back);
    long kb[2];
    for (int drop = 0; drop < 2; drop++) {
        uint8_t *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        ck_assert(map != MAP_FAILED);
        (void)madvise(map, len, MADV_RANDOM);
        oac_arena *a = oac_arena_new(ctx);
        ProtobufCMessage *msg;
        char err[256];
        ck_assert_int_eq(oac_decode(ctx, a, &onnx__graph_proto__descriptor, map, len,
                                    drop ? OAC_DECODE_DROP_PAGES : 0, &msg, NULL, err,
                                    sizeof err), 0);
        kb[drop] = mapping_rss_kb(map);
        const Onnx__GraphProto *gp = (const Onnx__GraphProto *)msg;
        ck_assert_uint_eq(gp->n_initializer, NT);
        for (int i = 0; i < NT; i += 97) {
            oac_payload pl;
            ck_assert(oac_tensor_payload(gp->initializer[i], &pl));
            ck_assert_uint_eq(pl.len, TB);
            ck_assert(pl.bytes > map && pl.bytes + pl.len <= map + len);
            for (int j = 0; j < TB; j += 1000)
                ck_assert_uint_eq(pl.bytes[j], (uint8_t)(i * 31 + j));
        }
        oac_arena_free(a);
        munmap(map, len);
    }
    close(fd);
    unlink(path);
    fprintf(stderr, "%zu-byte file mapping after decoding: %ld KiB resident, %ld KiB "
            "with OAC_DECODE_DROP_PAGES\n", len, kb[0], kb[1]);
    if (kb[0] < 0 || kb[1] < 0) {
        fprintf(stderr, "test_drop_pages: no /proc/self/smaps here, skipped\n");
    } else {
        /* every tensor header is on a page of its own: without dropping,
         * at least those stay; with it, at most what the walk met since
         * the last drop, one step and a fault-around window */
        ck_assert_int_ge(kb[0], NT * 4);
        ck_assert_int_le(kb[1], (long)(OAC_DECODE_DROP_STEP / 1024) + 256);
    }
    oac_ctx_free(ctx);
}
END_TEST

/* ---- shared strings -------------------------------------------------------- */

/* The name of length n, variant v: the same first and last 8 bytes for
 * every v, v in the middle. */
static void shared_name(char *s, size_t n, int v)
{
    for (size_t i = 0; i < n; i++)
        s[i] = (char)('a' + i % 7);
    if (n)
        s[n / 2] = (char)('K' + v);
    s[n] = '\0';
}

/* A chain of nodes, each reading what the one before wrote: of every
 * length around the decoder's cases (copy_string), two names that differ
 * only in the middle.  A name read right after its definition is the
 * definition's copy, up to OAC_DECODE_SHARE_MAX bytes; every string is
 * right, whatever was shared. */
START_TEST(test_shared_strings)
{
    static const size_t lens[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 25,
                                   31, 32, 33, 100, OAC_DECODE_SHARE_MAX,
                                   OAC_DECODE_SHARE_MAX + 1, 1000 };
    enum { NL = sizeof lens / sizeof *lens };
    static char names[2 * NL][1001];
    size_t k = 0;
    for (size_t i = 0; i < NL; i++)
        for (int v = 0; v < (lens[i] ? 2 : 1); v++)
            shared_name(names[k++], lens[i], v);
    wbuf w = { 0 };
    for (size_t j = 0; j < k; j++) {
        wbuf n = { 0 };
        w_str(&n, 1, j ? names[j - 1] : "x");
        w_str(&n, 2, names[j]);
        w_sub(&w, 1, &n);
    }
    oac_ctx *ctx = oac_ctx_new();
    for (int zeroed = 0; zeroed < 2; zeroed++) {
        oac_arena *a = zeroed ? oac_arena_new_zeroed(ctx) : oac_arena_new(ctx);
        ProtobufCMessage *msg;
        char err[256];
        ck_assert_int_eq(oac_decode(ctx, a, &onnx__graph_proto__descriptor, w.b, w.n, 0,
                                    &msg, NULL, err, sizeof err), 0);
        const Onnx__GraphProto *gp = (const Onnx__GraphProto *)msg;
        ck_assert_uint_eq(gp->n_node, k);
        for (size_t j = 1; j < k; j++) {
            const Onnx__NodeProto *np = gp->node[j];
            ck_assert_uint_eq(np->n_input, 1);
            ck_assert_uint_eq(np->n_output, 1);
            ck_assert_str_eq(np->output[0], names[j]);
            ck_assert_str_eq(np->input[0], names[j - 1]);
            size_t len = strlen(names[j - 1]);
            if (len <= OAC_DECODE_SHARE_MAX)
                ck_assert_msg(np->input[0] == gp->node[j - 1]->output[0],
                              "a name of %zu bytes is not shared", len);
            else
                ck_assert_ptr_ne(np->input[0], gp->node[j - 1]->output[0]);
        }
        oac_arena_free(a);
    }
    oac_ctx_free(ctx);
    stats st = { 0 };
    variants(&onnx__graph_proto__descriptor, w.b, w.n, "shared strings", 50, &st);
    free(w.b);
}
END_TEST

/* Nodes with the same attributes, value_infos with the same dimensions:
 * equal leaf elements are one message, an attribute holding a tensor is
 * decoded each time; every value is right (and the same as the legacy
 * parser's on these bytes and their variants). */
START_TEST(test_shared_messages)
{
    enum { NN = 40 };
    wbuf w = { 0 };
    for (int j = 0; j < NN; j++) {
        wbuf n = { 0 }, at = { 0 }, ints = { 0 }, at2 = { 0 }, t = { 0 };
        char name[16];
        snprintf(name, sizeof name, "y%d", j);
        w_str(&n, 1, "x");
        w_str(&n, 2, name);
        w_str(&n, 4, "Transpose");
        w_str(&at, 1, "perm");
        for (int k = 0; k < 4; k++)
            w_varint(&ints, (uint64_t)(k == 1 ? 2 : k == 2 ? 1 : k));
        w_sub(&at, 8, &ints);
        w_int(&at, 20, 7);
        w_sub(&n, 5, &at);
        w_str(&at2, 1, "value");
        w_int(&t, 1, 1);
        w_int(&t, 2, 7);
        w_sub(&at2, 5, &t);
        w_int(&at2, 20, 4);
        w_sub(&n, 5, &at2);
        w_sub(&w, 1, &n);
    }
    for (int j = 0; j < NN; j++) {
        wbuf vi = { 0 }, tp = { 0 }, tt = { 0 }, sh = { 0 }, d0 = { 0 }, d1 = { 0 };
        char name[16];
        snprintf(name, sizeof name, "y%d", j);
        w_str(&vi, 1, name);
        w_int(&tt, 1, 1);
        w_str(&d0, 2, "batch");
        w_sub(&sh, 1, &d0);
        w_int(&d1, 1, 8 + (uint64_t)(j % 2));
        w_sub(&sh, 1, &d1);
        w_sub(&tt, 2, &sh);
        w_sub(&tp, 1, &tt);
        w_sub(&vi, 2, &tp);
        w_sub(&w, 13, &vi);
    }
    oac_ctx *ctx = oac_ctx_new();
    for (int zeroed = 0; zeroed < 2; zeroed++) {
        oac_arena *a = zeroed ? oac_arena_new_zeroed(ctx) : oac_arena_new(ctx);
        ProtobufCMessage *msg;
        char err[256];
        ck_assert_int_eq(oac_decode(ctx, a, &onnx__graph_proto__descriptor, w.b, w.n, 0,
                                    &msg, NULL, err, sizeof err), 0);
        const Onnx__GraphProto *gp = (const Onnx__GraphProto *)msg;
        ck_assert_uint_eq(gp->n_node, NN);
        ck_assert_uint_eq(gp->n_value_info, NN);
        for (int j = 0; j < NN; j++) {
            const Onnx__NodeProto *np = gp->node[j];
            ck_assert_uint_eq(np->n_attribute, 2);
            const Onnx__AttributeProto *perm = np->attribute[0], *val = np->attribute[1];
            ck_assert_str_eq(perm->name, "perm");
            ck_assert_uint_eq(perm->n_ints, 4);
            ck_assert(perm->ints[0] == 0 && perm->ints[1] == 2 && perm->ints[2] == 1 &&
                      perm->ints[3] == 3);
            ck_assert_ptr_eq(perm, gp->node[0]->attribute[0]);
            ck_assert_str_eq(val->name, "value");
            ck_assert_ptr_nonnull(val->t);
            ck_assert_uint_eq(val->t->n_dims, 1);
            ck_assert_int_eq(val->t->dims[0], 1);
            if (j)
                ck_assert_ptr_ne(val, gp->node[j - 1]->attribute[1]);
            const Onnx__TensorShapeProto *shp = gp->value_info[j]->type->tensor_type->shape;
            ck_assert_uint_eq(shp->n_dim, 2);
            ck_assert_str_eq(shp->dim[0]->dim_param, "batch");
            ck_assert_int_eq(shp->dim[1]->dim_value, 8 + j % 2);
            ck_assert_ptr_eq(shp->dim[0], gp->value_info[0]->type->tensor_type->shape->dim[0]);
            ck_assert_ptr_eq(shp->dim[1],
                             gp->value_info[j % 2]->type->tensor_type->shape->dim[1]);
            if (j)
                ck_assert_ptr_ne(shp, gp->value_info[j - 1]->type->tensor_type->shape);
        }
        oac_arena_free(a);
    }
    oac_ctx_free(ctx);
    stats st = { 0 };
    variants(&onnx__graph_proto__descriptor, w.b, w.n, "shared messages", 50, &st);
    free(w.b);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("decode");
    TCase *tc = tcase_create("decode");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_wire_forms);
    tcase_add_test(tc, test_builder_models);
    tcase_add_test(tc, test_repeated_singular_same);
    tcase_add_test(tc, test_repeated_singular_linear);
    tcase_add_test(tc, test_drop_pages);
    tcase_add_test(tc, test_shared_strings);
    tcase_add_test(tc, test_shared_messages);
    tcase_add_test(tc, test_examples);
    tcase_add_test(tc, test_testdata_models);
    suite_add_tcase(s, tc);
    return s;
}


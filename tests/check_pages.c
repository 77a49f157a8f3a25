/* check_pages.c: page-type-invalid in every form (lib/check/pages.c, contract
 * sections 1-3).  Models come from the builder (lib/oac_build.h) and
 * the example table; concrete pages from SequenceProto / MapProto files
 * this test writes into a temporary folder and passes as --input.  Each
 * broken case expects exactly one page-type-invalid, with its location and
 * the names its message must carry; each has a clean near miss. */
#include "harness.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE_DIMS "2,2,16,4"      /* 256 elements */
static const int64_t page_dims[4] = { 2, 2, 16, 4 };

static char tmpdir[64];

/* The paged_cache shape with knobs: declarations INT4_PAGE (0),
 * FP8_PAGE (1), INT2_PAGE (2), all FLOAT; the cache allows `allowed`. */
typedef struct knobs {
    const char *dims;        /* page dims; NULL: PAGE_DIMS */
    const int32_t *allowed;
    size_t n_allowed;
    int64_t attr;            /* -1: no quantized_type attribute */
    int32_t elem_type;       /* of the cache */
    int32_t fp8_data_type;   /* of FP8_PAGE */
    bool no_decls;
} knobs;

static const int32_t all3[3] = { 0, 1, 2 };

static knobs defaults(void)
{
    return (knobs){ NULL, all3, 3, 0, OAC_T_FLOAT, OAC_T_FLOAT, false };
}

static void build(oac_mb *mb, const knobs *k)
{
    if (!k->no_decls) {
        oac_mb_quant_linear(mb, "INT4_PAGE", OAC_T_FLOAT, OAC_T_INT4, 4, 1, 0.125f, 0);
        oac_mb_quant_fp8(mb, "FP8_PAGE", k->fp8_data_type);
        oac_mb_quant_linear(mb, "INT2_PAGE", OAC_T_FLOAT, OAC_T_UINT8, 2, 0, 0.5f, 2);
    }
    oac_gb *g = oac_mb_graph(mb);
    const char *dims = k->dims ? k->dims : PAGE_DIMS;
    Onnx__ValueInfoProto *c = oac_gb_input_paged(g, "cache", k->elem_type, dims,
                                                 k->allowed, k->n_allowed);
    oac_vi_access(g, c, 1);
    oac_gb_input(g, "page_id", OAC_T_INT64, "");
    oac_gb_input(g, "values", k->elem_type, k->dims ? "2,heads,1,4" : "2,2,1,4");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *n = oac_gb_node(g, "PagedCacheUpdate", "onnx_alias", "update",
                                     "cache,page_id,values,position", "updated_cache");
    if (k->attr >= 0)
        oac_node_attr_int(g, n, "quantized_type", k->attr);
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output_paged(g, "updated_cache", k->elem_type, dims,
                                           k->allowed, k->n_allowed), "cache");
}

/* Check a packed model (with an optional --input cache=path); returns the
 * diagnostics (caller frees) and asserts the check itself succeeded. */
static oac_diags *check_buf(oac_ctx *ctx, const uint8_t *buf, size_t len,
                            const char *input_path)
{
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m = NULL;
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, buf, len, "t.onnx", NULL, d), 0);
    oac_input_file in = { "cache", input_path };
    oac_check_opts opts = { .inputs = &in, .n_inputs = input_path ? 1 : 0 };
    oac_analysis *a = NULL;
    int rc = oac_check(ctx, &a, m, &opts, d);
    ck_assert_msg(rc == 0, "oac_check: %s", oac_errmsg(ctx));
    oac_analysis_free(a);
    oac_model_free(m);
    return d;
}

static oac_diags *check_mb(oac_ctx *ctx, oac_mb *mb, const char *input_path)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_mb_pack(mb, &buf, &len), 0);
    oac_diags *d = check_buf(ctx, buf, len, input_path);
    free(buf);
    return d;
}

static size_t count_pti(const oac_diags *d)
{
    size_t n = 0;
    for (size_t i = 0; i < oac_diags_count(d); i++)
        n += oac_diags_get(d, i)->code == OAC_PAGE_TYPE_INVALID;
    return n;
}

/* Exactly one page-type-invalid, at loc (when given), whose message
 * contains every one of the NULL-terminated words. */
static void expect_one(const oac_diags *d, const char *loc, ...)
{
    ck_assert_uint_eq(count_pti(d), 1);
    const oac_diag *x = oac_diags_get(d, (size_t)oac_diags_find(d, OAC_PAGE_TYPE_INVALID));
    if (loc) {
        ck_assert_ptr_nonnull(x->location);
        ck_assert_str_eq(x->location, loc);
    }
    va_list ap;
    va_start(ap, loc);
    for (const char *w; (w = va_arg(ap, const char *));)
        ck_assert_msg(strstr(x->message, w), "'%s' not in '%s'", w, x->message);
    va_end(ap);
}

static oac_diags *check_knobs(oac_ctx *ctx, const knobs *k, const char *input)
{
    oac_mb *mb = oac_mb_new(ctx);
    build(mb, k);
    oac_diags *d = check_mb(ctx, mb, input);
    oac_mb_free(mb);
    return d;
}

/* ---- the example table ---------------------------------------------------- */

static oac_diags *check_example(oac_ctx *ctx, const char *name)
{
    const oac_example *ex = oac_example_find(name);
    ck_assert_ptr_nonnull(ex);
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_example_pack(ctx, ex, &buf, &len), 0);
    oac_diags *d = check_buf(ctx, buf, len, NULL);
    free(buf);
    return d;
}

START_TEST(test_example_paged_cache_is_clean)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = check_example(ctx, "paged_cache");
    ck_assert_uint_eq(count_pti(d), 0);
    oac_diags_free(d);
    d = check_example(ctx, "paged_cache_broken");
    expect_one(d, "/graph/node/0/attribute/0", "'update'", "quantized_type 7",
               "out of range", "3 quantizations", NULL);
    ck_assert_str_eq(oac_diags_get(d, (size_t)oac_diags_find(d, OAC_PAGE_TYPE_INVALID))->value,
                     "cache");
    oac_diags_free(d);
    oac_ctx_free(ctx);
}
END_TEST

/* ---- declarations and declared types -------------------------------------- */

START_TEST(test_invalid_declaration)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_mb *mb = oac_mb_new(ctx);
    knobs k = defaults();
    build(mb, &k);
    oac_mb_quant(mb, 0)->linear->bits = 8;         /* 8 bits in INT4 */
    oac_diags *d = check_mb(ctx, mb, NULL);
    expect_one(d, "/quantizations/0", "'INT4_PAGE'", "bits 8 do not match storage type INT4", NULL);
    oac_diags_free(d);
    oac_mb_free(mb);

    /* Other page-type-invalid reasons, one model each. */
    const char *reasons[] = { "scale", "zero point", "axis 1", "1/5/11", "split_storage" };
    for (int r = 0; r < 5; r++) {
        mb = oac_mb_new(ctx);
        build(mb, &k);
        Onnx__QuantizationProto *q0 = oac_mb_quant(mb, 0), *q1 = oac_mb_quant(mb, 1),
                                *q2 = oac_mb_quant(mb, 2);
        switch (r) {
        case 0: q0->linear->scale_float = 0; break;
        case 1: q2->linear->zero_point = 4; break;          /* 2-bit: 0..3 */
        case 2: q0->linear->axis = 1; break;
        case 3: q1->floating_point->exponent_bits = 5;
                q1->floating_point->mantissa_bits = 11; break;   /* 17 bits */
        case 4: q1->floating_point->has_split_storage = 1;
                q1->floating_point->split_storage = 1; break;
        }
        d = check_mb(ctx, mb, NULL);
        expect_one(d, NULL, reasons[r], NULL);
        oac_diags_free(d);
        oac_mb_free(mb);
    }
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_allowed_out_of_range)
{
    oac_ctx *ctx = oac_ctx_new();
    const int32_t allowed[2] = { 0, 5 };
    knobs k = defaults();
    k.allowed = allowed;
    k.n_allowed = 2;
    /* Input and output both declare it: one finding each. */
    oac_diags *d = check_knobs(ctx, &k, NULL);
    ck_assert_uint_eq(count_pti(d), 2);
    const oac_diag *x = oac_diags_get(d, (size_t)oac_diags_find(d, OAC_PAGE_TYPE_INVALID));
    ck_assert_str_eq(x->location, "/graph/input/0/type/sequence_type/elem_type/"
                                  "quantized_tensor_type/allowed_quantized_type/1");
    ck_assert_str_eq(x->value, "cache");
    ck_assert_ptr_nonnull(strstr(x->message, "quantized type 5"));
    oac_diags_free(d);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_allowed_decodes_to_other_type)
{
    oac_ctx *ctx = oac_ctx_new();
    knobs k = defaults();
    k.fp8_data_type = OAC_T_FLOAT16;
    k.allowed = all3 + 1;     /* only FP8_PAGE */
    k.n_allowed = 1;
    k.attr = -1;
    oac_diags *d = check_knobs(ctx, &k, NULL);
    /* the input's and the output's types each */
    ck_assert_uint_eq(count_pti(d), 2);
    const oac_diag *x = oac_diags_get(d, (size_t)oac_diags_find(d, OAC_PAGE_TYPE_INVALID));
    ck_assert_ptr_nonnull(strstr(x->message, "'FP8_PAGE'"));
    ck_assert_ptr_nonnull(strstr(x->message, "decodes to FLOAT16, not the cache's FLOAT"));
    oac_diags_free(d);
    /* near miss: a FLOAT16 cache of FLOAT16 pages -- but then the other
     * declarations (FLOAT) are not allowed, so nothing is said of them */
    k.elem_type = OAC_T_FLOAT16;
    d = check_knobs(ctx, &k, NULL);
    ck_assert_uint_eq(count_pti(d), 0);
    oac_diags_free(d);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_node_attribute)
{
    oac_ctx *ctx = oac_ctx_new();
    const int32_t allowed[2] = { 0, 2 };
    knobs k = defaults();
    k.allowed = allowed;
    k.n_allowed = 2;
    k.attr = 1;                     /* in range, not allowed */
    oac_diags *d = check_knobs(ctx, &k, NULL);
    expect_one(d, "/graph/node/0/attribute/0", "quantized_type 1", "'FP8_PAGE'",
               "'cache'", "(0 'INT4_PAGE', 2 'INT2_PAGE')", NULL);
    oac_diags_free(d);
    k.attr = 2;                     /* near miss */
    d = check_knobs(ctx, &k, NULL);
    ck_assert_uint_eq(count_pti(d), 0);
    oac_diags_free(d);
    k.attr = -1;                    /* absent: fine */
    d = check_knobs(ctx, &k, NULL);
    ck_assert_uint_eq(count_pti(d), 0);
    oac_diags_free(d);

    /* Any declaration allowed, but the one named decodes to FLOAT16. */
    k = defaults();
    k.n_allowed = 0;
    k.fp8_data_type = OAC_T_FLOAT16;
    k.attr = 1;
    d = check_knobs(ctx, &k, NULL);
    expect_one(d, "/graph/node/0/attribute/0", "'FP8_PAGE'", "decodes to FLOAT16", NULL);
    oac_diags_free(d);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_container_forms)
{
    oac_ctx *ctx = oac_ctx_new();
    /* A page type that decodes to INT32 */
    knobs k = defaults();
    k.elem_type = OAC_T_INT32;
    k.attr = -1;
    oac_diags *d = check_knobs(ctx, &k, NULL);
    ck_assert_uint_ge(count_pti(d), 1);
    const oac_diag *x = oac_diags_get(d, (size_t)oac_diags_find(d, OAC_PAGE_TYPE_INVALID));
    ck_assert_str_eq(x->location, "/graph/input/0/type/sequence_type/elem_type/"
                                  "quantized_tensor_type/elem_type");
    ck_assert_ptr_nonnull(strstr(x->message, "not INT32"));
    oac_diags_free(d);

    /* A paged cache in a model without declarations */
    k = defaults();
    k.no_decls = true;
    k.n_allowed = 0;
    k.attr = -1;
    d = check_knobs(ctx, &k, NULL);
    ck_assert_uint_eq(count_pti(d), 2);   /* input and output */
    ck_assert_ptr_nonnull(strstr(oac_diags_get(d, (size_t)oac_diags_find(d,
        OAC_PAGE_TYPE_INVALID))->message, "declares no quantizations"));
    oac_diags_free(d);

    /* Map<int64, QuantizedTensor> as a graph input (value_info form). */
    oac_mb *mb = oac_mb_new(ctx);
    k = defaults();
    build(mb, &k);
    oac_gb *g = oac_mb_graph(mb);
    Onnx__ValueInfoProto *vi = oac_gb_input_paged(g, "pages_map", OAC_T_FLOAT, PAGE_DIMS,
                                                  (const int32_t[]){ 9 }, 1);
    /* turn Sequence<QT> into Map<int64, QT> */
    Onnx__TypeProto__Sequence *seq = vi->type->sequence_type;
    Onnx__TypeProto *inner = seq->elem_type;
    static Onnx__TypeProto__Map map = ONNX__TYPE_PROTO__MAP__INIT;
    map.has_key_type = 1;
    map.key_type = OAC_T_INT64;
    map.value_type = inner;
    vi->type->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
    vi->type->map_type = &map;
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_mb_pack(mb, &buf, &len), 0);
    /* restore the builder's own pointers before it frees its arena */
    vi->type->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    vi->type->sequence_type = seq;
    oac_mb_free(mb);
    d = check_buf(ctx, buf, len, NULL);
    free(buf);
    expect_one(d, "/graph/input/4/type/map_type/value_type/quantized_tensor_type/"
                  "allowed_quantized_type/0", "'pages_map'", "quantized type 9", NULL);
    oac_diags_free(d);
    oac_ctx_free(ctx);
}
END_TEST

/* ---- concrete pages (--input files) ---------------------------------------- */

typedef struct page {
    int32_t qtype;           /* -1: absent */
    Onnx__QuantizationProto *inline_q;
    const int64_t *dims;     /* 4 dims */
    size_t n_bytes;          /* raw_data size */
    int64_t n_bytes_field;   /* -1: absent; -2: = n_bytes */
} page;

static uint8_t payload[512];

static void fill_qt(Onnx__QuantizedTensorProto *q, const page *p)
{
    Onnx__QuantizedTensorProto init = ONNX__QUANTIZED_TENSOR_PROTO__INIT;
    *q = init;
    q->n_dims = 4;
    q->dims = (int64_t *)(p->dims ? p->dims : page_dims);
    q->has_raw_data = 1;
    q->raw_data.data = payload;
    q->raw_data.len = p->n_bytes;
    if (p->n_bytes_field != -1) {
        q->has_n_bytes = 1;
        q->n_bytes = p->n_bytes_field == -2 ? (int64_t)p->n_bytes : p->n_bytes_field;
    }
    if (p->qtype >= 0) {
        q->has_quantized_type = 1;
        q->quantized_type = p->qtype;
    }
    q->quantization = p->inline_q;
}

/* Write a SequenceProto (keys NULL) or MapProto of the pages. */
static char *write_pages(const page *pages, size_t n, const int64_t *keys,
                         const char *name)
{
    Onnx__QuantizedTensorProto qts[8], *ptrs[8];
    for (size_t i = 0; i < n; i++) {
        fill_qt(&qts[i], &pages[i]);
        ptrs[i] = &qts[i];
    }
    Onnx__SequenceProto seq = ONNX__SEQUENCE_PROTO__INIT;
    seq.has_elem_type = 1;
    seq.elem_type = ONNX__SEQUENCE_PROTO__DATA_TYPE__QUANTIZED_TENSOR;
    seq.n_quantized_tensor_values = n;
    seq.quantized_tensor_values = ptrs;
    Onnx__MapProto map = ONNX__MAP_PROTO__INIT;
    const ProtobufCMessage *msg = &seq.base;
    if (keys) {
        map.has_key_type = 1;
        map.key_type = OAC_T_INT64;
        map.n_keys = n;
        map.keys = (int64_t *)keys;
        map.values = &seq;
        msg = &map.base;
    }
    size_t len = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = malloc(len);
    protobuf_c_message_pack(msg, buf);
    char *path = malloc(strlen(tmpdir) + strlen(name) + 2);
    sprintf(path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
    fclose(f);
    free(buf);
    return path;
}

/* 256 elements: INT4 128 bytes, FP8 256 bytes, 2-bit 64 bytes.  Payloads
 * beyond 64 bytes stay in the loader's mapping, 64 and less are parsed:
 * both paths are covered. */
#define OK_INT4 { 0, NULL, NULL, 128, -2 }
#define OK_FP8  { 1, NULL, NULL, 256, -2 }
#define OK_INT2 { 2, NULL, NULL, 64, -1 }

static void check_one_page_file(const page *bad, const char *const *words)
{
    oac_ctx *ctx = oac_ctx_new();
    page pages[3] = { OK_INT4, OK_FP8, *bad };
    char *path = write_pages(pages, 3, NULL, "pages.pb");
    knobs k = defaults();
    oac_diags *d = check_knobs(ctx, &k, path);
    ck_assert_uint_eq(count_pti(d), 1);
    const oac_diag *x = oac_diags_get(d, (size_t)oac_diags_find(d, OAC_PAGE_TYPE_INVALID));
    ck_assert_str_eq(x->value, "cache");
    ck_assert_str_eq(x->location, "/graph/input/0");
    ck_assert_ptr_nonnull(strstr(x->message, "page 2"));
    ck_assert_ptr_nonnull(strstr(x->message, "pages.pb"));
    for (; *words; words++)
        ck_assert_msg(strstr(x->message, *words), "'%s' not in '%s'", *words, x->message);
    oac_diags_free(d);
    free(path);
    oac_ctx_free(ctx);
}

START_TEST(test_input_pages_clean)
{
    oac_ctx *ctx = oac_ctx_new();
    page pages[3] = { OK_INT4, OK_FP8, OK_INT2 };
    char *path = write_pages(pages, 3, NULL, "ok.pb");
    knobs k = defaults();
    oac_diags *d = check_knobs(ctx, &k, path);
    ck_assert_uint_eq(count_pti(d), 0);
    oac_diags_free(d);
    free(path);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_input_page_index_rules)
{
    Onnx__QuantizationProto q = ONNX__QUANTIZATION_PROTO__INIT;
    page both = { 2, &q, NULL, 64, -1 };
    check_one_page_file(&both, (const char *[]){ "exactly one", "both", NULL });
    page neither = { -1, NULL, NULL, 64, -1 };
    check_one_page_file(&neither, (const char *[]){ "neither", NULL });
    page range = { 9, NULL, NULL, 64, -1 };
    check_one_page_file(&range, (const char *[]){ "quantized_type 9", "out of range", NULL });
}
END_TEST

START_TEST(test_input_page_not_allowed)
{
    oac_ctx *ctx = oac_ctx_new();
    const int32_t allowed[2] = { 0, 1 };
    page pages[2] = { OK_INT4, OK_INT2 };
    char *path = write_pages(pages, 2, NULL, "na.pb");
    knobs k = defaults();
    k.allowed = allowed;
    k.n_allowed = 2;
    oac_diags *d = check_knobs(ctx, &k, path);
    /* The allowed types by index and name, not "(0, 1)" (issue 10, item 4). */
    expect_one(d, "/graph/input/0", "page 1", "quantized_type 2", "'INT2_PAGE'",
               "not among", "(0 'INT4_PAGE', 1 'FP8_PAGE')", NULL);
    oac_diags_free(d);
    free(path);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_input_page_shape_and_bytes)
{
    static const int64_t short_dims[4] = { 2, 2, 8, 4 };
    page shape = { 2, NULL, short_dims, 32, -1 };
    check_one_page_file(&shape, (const char *[]){ "dims [2, 2, 8, 4]", "[2, 2, 16, 4]", NULL });
    page nbytes = { 2, NULL, NULL, 64, 63 };
    check_one_page_file(&nbytes, (const char *[]){ "n_bytes 63", "64 bytes", NULL });
    page packed = { 2, NULL, NULL, 63, -2 };   /* n_bytes agrees, packing not */
    check_one_page_file(&packed, (const char *[]){ "63 bytes", "'INT2_PAGE'", "packs into 64", NULL });
    page fp8big = { 1, NULL, NULL, 255, -2 };  /* the mapped-payload path */
    check_one_page_file(&fp8big, (const char *[]){ "255 bytes", "'FP8_PAGE'", "packs into 256", NULL });
}
END_TEST

START_TEST(test_input_page_inline)
{
    Onnx__QuantizationProto q = ONNX__QUANTIZATION_PROTO__INIT;
    Onnx__LinearUniformProto l = ONNX__LINEAR_UNIFORM_PROTO__INIT;
    q.name = "INLINE_U4";
    q.has_data_type = 1;
    q.data_type = OAC_T_FLOAT;
    q.kind_case = ONNX__QUANTIZATION_PROTO__KIND_LINEAR;
    q.linear = &l;
    l.has_storage_type = l.has_bits = l.has_zero_point = 1;
    l.storage_type = OAC_T_UINT4;
    l.bits = 4;
    l.zero_point = 8;
    l.scale_case = ONNX__LINEAR_UNIFORM_PROTO__SCALE_SCALE_INT;
    l.scale_int = 2;

    oac_ctx *ctx = oac_ctx_new();
    page pages[2] = { OK_INT4, { -1, &q, NULL, 128, -2 } };
    char *path = write_pages(pages, 2, NULL, "inline.pb");
    knobs k = defaults();
    oac_diags *d = check_knobs(ctx, &k, path);
    ck_assert_uint_eq(count_pti(d), 0);      /* valid inline declaration */
    oac_diags_free(d);
    free(path);
    oac_ctx_free(ctx);

    q.data_type = OAC_T_BFLOAT16;
    page other = { -1, &q, NULL, 128, -2 };
    check_one_page_file(&other, (const char *[]){ "'INLINE_U4'", "decodes to BFLOAT16", NULL });
    q.data_type = OAC_T_FLOAT;
    l.zero_point = 16;
    page bad = { -1, &q, NULL, 128, -2 };
    check_one_page_file(&bad, (const char *[]){ "'INLINE_U4'", "zero point 16", NULL });
}
END_TEST

START_TEST(test_input_map_pages)
{
    oac_ctx *ctx = oac_ctx_new();
    /* The cache as Map<int64, QuantizedTensor>: pages named by key. */
    oac_mb *mb = oac_mb_new(ctx);
    knobs k = defaults();
    k.attr = -1;
    build(mb, &k);
    Onnx__GraphProto *gp = oac_gb_proto(oac_mb_graph(mb));
    Onnx__TypeProto *types[2] = { gp->input[0]->type, gp->output[0]->type };
    static Onnx__TypeProto__Map maps[2];
    Onnx__TypeProto__Sequence *seqs[2];
    for (int i = 0; i < 2; i++) {
        Onnx__TypeProto__Map init = ONNX__TYPE_PROTO__MAP__INIT;
        maps[i] = init;
        maps[i].has_key_type = 1;
        maps[i].key_type = OAC_T_INT64;
        seqs[i] = types[i]->sequence_type;
        maps[i].value_type = seqs[i]->elem_type;
        types[i]->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
        types[i]->map_type = &maps[i];
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_mb_pack(mb, &buf, &len), 0);
    for (int i = 0; i < 2; i++) {
        types[i]->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
        types[i]->sequence_type = seqs[i];
    }
    oac_mb_free(mb);

    page good[2] = { OK_INT4, OK_INT2 };
    const int64_t keys[2] = { 0, 3 };
    char *path = write_pages(good, 2, keys, "map_ok.pb");
    oac_diags *d = check_buf(ctx, buf, len, path);
    ck_assert_uint_eq(count_pti(d), 0);
    oac_diags_free(d);
    free(path);

    page bad[2] = { OK_INT4, { 2, NULL, NULL, 63, -1 } };
    path = write_pages(bad, 2, keys, "map_bad.pb");
    d = check_buf(ctx, buf, len, path);
    expect_one(d, "/graph/input/0", "page 3", "63 bytes", NULL);
    oac_diags_free(d);
    free(path);
    free(buf);
    oac_ctx_free(ctx);
}
END_TEST

/* Hostile dims where the cache's shape leaves them open (an unbound
 * symbol): negative, and a product that overflows; never a crash. */
START_TEST(test_input_page_hostile_dims)
{
    static const int64_t neg[4] = { 2, -1, 16, 4 };
    static const int64_t huge[4] = { 2, INT64_MAX, 16, 4 };
    static const int64_t two[4] = { 2, 2, 16, 4 };
    oac_ctx *ctx = oac_ctx_new();
    knobs k = defaults();
    k.dims = "2,heads,16,4";
    page pages[3] = { { 2, NULL, two, 64, -1 }, { 2, NULL, neg, 64, -1 },
                      { 2, NULL, huge, 64, -1 } };
    char *path = write_pages(pages, 3, NULL, "hostile.pb");
    oac_diags *d = check_knobs(ctx, &k, path);
    ck_assert_uint_eq(count_pti(d), 2);
    for (size_t i = 0; i < oac_diags_count(d); i++) {
        const oac_diag *x = oac_diags_get(d, i);
        if (x->code == OAC_PAGE_TYPE_INVALID)
            ck_assert_ptr_nonnull(strstr(x->message, "negative or too large"));
    }
    oac_diags_free(d);
    free(path);
    oac_ctx_free(ctx);
}
END_TEST

/* Every allocation of the pass may fail: never a crash, leak or a
 * finding lost silently (the check then fails with OAC_ENOMEM). */
START_TEST(test_alloc_failures)
{
    oac_ctx *ctx = oac_ctx_new();
    page pages[3] = { OK_INT4, OK_FP8, { 9, NULL, NULL, 64, -1 } };
    char *path = write_pages(pages, 3, NULL, "chaos.pb");
    oac_mb *mb = oac_mb_new(ctx);
    knobs k = defaults();
    k.attr = 7;
    build(mb, &k);
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(oac_mb_pack(mb, &buf, &len), 0);
    oac_mb_free(mb);
    bool completed = false;
    for (unsigned long n = 1; !completed && n < 5000; n++) {
        oac_diags *d = oac_diags_new(ctx);
        oac_model *m = NULL;
        if (oac_model_load_buffer(ctx, &m, buf, len, "t.onnx", NULL, d) == 0) {
            oac_input_file in = { "cache", path };
            oac_check_opts opts = { .inputs = &in, .n_inputs = 1 };
            oac_analysis *a = NULL;
            oac_ctx_fail_alloc_after(ctx, n);
            int rc = oac_check(ctx, &a, m, &opts, d);
            oac_ctx_fail_alloc_after(ctx, 0);
            if (rc == 0) {
                completed = true;
                ck_assert_uint_eq(count_pti(d), 2);   /* attribute 7, page 2 */
            } else {
                ck_assert_int_lt(rc, 0);
            }
            oac_analysis_free(a);
            oac_model_free(m);
        }
        oac_diags_free(d);
    }
    ck_assert(completed);
    free(buf);
    free(path);
    oac_ctx_free(ctx);
}
END_TEST

/* ---- case rows: page-type-invalid --------------------------------------- */

static void pages_default(oac_mb *mb)
{
    knobs k = defaults();
    build(mb, &k);
}

static void pages_int4_bits_8(oac_mb *mb)
{
    pages_default(mb);
    oac_mb_quant(mb, 0)->linear->bits = 8;
}

static void pages_attr_7(oac_mb *mb)
{
    knobs k = defaults();
    k.attr = 7;
    build(mb, &k);
}

static const model_case page_rows[] = {
    { "int4_bits_8", pages_int4_bits_8, WANT(OAC_PAGE_TYPE_INVALID), NULL, NULL,
      "/quantizations/0" },
    { "attr_7", pages_attr_7, WANT(OAC_PAGE_TYPE_INVALID), "update", "cache",
      "/graph/node/0/attribute/0" },
    { "declared_ok", pages_default, NEAR(OAC_PAGE_TYPE_INVALID) },
};
CASES_TEST(page_rows)

/* The folder the page files go to: made before the test case and removed
 * after it, in the runner's process (an unchecked fixture), so each
 * test's process finds it. */
static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/check_pages.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    /* remove what the tests wrote */
    const char *names[] = { "pages.pb", "ok.pb", "na.pb", "inline.pb", "map_ok.pb",
                            "map_bad.pb", "chaos.pb", "hostile.pb" };
    char p[128];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
        unlink(p);
    }
    rmdir(tmpdir);
}

Suite *test_suite(void)
{
    Suite *s = suite_create("pages");
    TCase *tc = tcase_create("core");
    tcase_add_unchecked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_add_test(tc, test_example_paged_cache_is_clean);
    tcase_add_test(tc, test_invalid_declaration);
    tcase_add_test(tc, test_allowed_out_of_range);
    tcase_add_test(tc, test_allowed_decodes_to_other_type);
    tcase_add_test(tc, test_node_attribute);
    tcase_add_test(tc, test_container_forms);
    tcase_add_test(tc, test_input_pages_clean);
    tcase_add_test(tc, test_input_page_index_rules);
    tcase_add_test(tc, test_input_page_not_allowed);
    tcase_add_test(tc, test_input_page_shape_and_bytes);
    tcase_add_test(tc, test_input_page_inline);
    tcase_add_test(tc, test_input_map_pages);
    tcase_add_test(tc, test_input_page_hostile_dims);
    tcase_add_test(tc, test_alloc_failures);
    ADD_CASES(tc, page_rows);
    suite_add_tcase(s, tc);
    return s;
}

/* check_paged_attn.c: the checker's rules for PagedCacheAttention (contract
 * section 11; lib/check/shapes.c operands, lib/check/capacity.c length
 * against the pages, lib/check/hazards.c reading the pre-update name).
 * Case tables in the style of check_pages.c: one model per broken form,
 * each with a clean near miss; the capacity rows read the cache's pages
 * from a SequenceProto --input this test writes. */
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE_DIMS "2,2,16,4"      /* kv_heads 2, page_size 16, head_size 4 */
static const int64_t page_dims[4] = { 2, 2, 16, 4 };

/* The decoder step's pattern: u = PagedCacheUpdate(cache, page_id, values,
 * position); out = PagedCacheAttention(query, u, length); with knobs for
 * every operand a rule reads. */
typedef struct knobs {
    const char *query_dims;
    int32_t query_type;
    int64_t num_heads;        /* -1: attribute absent */
    int64_t kv_num_heads;     /* -1: attribute absent */
    int32_t length_type;
    const char *reads;        /* the cache name the attention reads */
    int64_t page_id;          /* >= 0: a Constant; -1: an input */
    int64_t length;           /* >= 0: a Constant; -1: an input */
} knobs;

static knobs defaults(void)
{
    return (knobs){ "4,1,4", OAC_T_FLOAT, 4, 2, OAC_T_INT64, "u", -1, -1 };
}

static void build(oac_mb *mb, const knobs *k)
{
    int32_t allowed[2];
    allowed[0] = oac_mb_quant_linear(mb, "INT4_PAGE", OAC_T_FLOAT, OAC_T_INT4, 4, 1,
                                     0.125f, 0);
    allowed[1] = oac_mb_quant_fp8(mb, "FP8_PAGE", OAC_T_FLOAT);
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input_paged(g, "cache", OAC_T_FLOAT, PAGE_DIMS, allowed, 2), 1);
    if (k->page_id >= 0)
        oac_gb_constant_i64(g, "page_id", "", &k->page_id, 1);
    else
        oac_gb_input(g, "page_id", OAC_T_INT64, "");
    oac_gb_input(g, "values", OAC_T_FLOAT, "2,2,1,4");
    int64_t zero = 0;
    oac_gb_constant_i64(g, "position", "", &zero, 1);
    oac_gb_input(g, "query", k->query_type, k->query_dims);
    if (k->length >= 0)
        oac_gb_constant_i64(g, "length", "", &k->length, 1);
    else
        oac_gb_input(g, "length", k->length_type, "");
    Onnx__NodeProto *n = oac_gb_node(g, "PagedCacheUpdate", "onnx_alias", "update",
                                     "cache,page_id,values,position", "u");
    oac_node_alias(g, n, 0, 0, 1);
    char in[64];
    snprintf(in, sizeof in, "query,%s,length", k->reads);
    n = oac_gb_node(g, "PagedCacheAttention", "onnx_alias", "attend", in, "out");
    if (k->num_heads >= 0)
        oac_node_attr_int(g, n, "num_heads", k->num_heads);
    if (k->kv_num_heads >= 0)
        oac_node_attr_int(g, n, "kv_num_heads", k->kv_num_heads);
    oac_gb_output(g, "out", k->query_type, k->query_dims);
    oac_vi_alias_of(g, oac_gb_output_paged(g, "u", OAC_T_FLOAT, PAGE_DIMS, allowed, 2),
                    "cache");
}

#define ROW(fn, ...)                                                       \
    static void fn(oac_mb *mb)                                             \
    {                                                                      \
        knobs k = defaults();                                              \
        __VA_ARGS__;                                                       \
        build(mb, &k);                                                     \
    }

ROW(attn_ok, (void)0)
ROW(query_rank_2, k.query_dims = "4,4")
ROW(query_head_size_8, k.query_dims = "4,1,8")
ROW(query_heads_unlike_num_heads, k.query_dims = "8,1,4")
ROW(kv_heads_unlike_pages, k.kv_num_heads = 4)
ROW(num_heads_not_multiple, k.num_heads = 3; k.kv_num_heads = 2; k.query_dims = "3,1,4")
ROW(num_heads_absent, k.num_heads = -1; k.kv_num_heads = -1)
ROW(length_int32, k.length_type = OAC_T_INT32)
ROW(query_float16, k.query_type = OAC_T_FLOAT16)
ROW(kv_absent_means_num_heads_2, k.num_heads = 2; k.kv_num_heads = -1;
    k.query_dims = "2,1,4")
ROW(reads_pre_update_name, k.reads = "cache")

static const model_case attn_rows[] = {
    { "query_rank_2", query_rank_2, WANT(OAC_OPERAND_INVALID), "attend", "query",
      "/graph/node/2/input/0" },
    { "query_head_size_8", query_head_size_8, WANT(OAC_OPERAND_INVALID), "attend",
      "query", "/graph/node/2/input/0" },
    { "query_heads_unlike_num_heads", query_heads_unlike_num_heads,
      WANT(OAC_OPERAND_INVALID), "attend", "query", "/graph/node/2/input/0" },
    { "kv_heads_unlike_pages", kv_heads_unlike_pages, WANT(OAC_OPERAND_INVALID),
      "attend", NULL, NULL },
    { "num_heads_not_multiple", num_heads_not_multiple, WANT(OAC_OPERAND_INVALID),
      "attend", NULL, NULL },
    { "num_heads_absent", num_heads_absent, WANT(OAC_OPERAND_INVALID), "attend",
      NULL, NULL },
    { "length_int32", length_int32, WANT(OAC_OPERAND_INVALID), "attend", "length",
      "/graph/node/2/input/2" },
    { "query_float16", query_float16, WANT(OAC_OPERAND_INVALID), "attend", "query",
      "/graph/node/2/input/0" },
    { "attn_ok", attn_ok, NEAR(OAC_OPERAND_INVALID) },
    { "kv_absent_means_num_heads", kv_absent_means_num_heads_2,
      NEAR(OAC_OPERAND_INVALID) },
    /* The update makes `cache` stale: its reader must be ordered before the
     * update, and the attention reads it after (no dependency leads from
     * it to the update). */
    { "reads_pre_update_name", reads_pre_update_name, WANT(OAC_ALIAS_HAZARD), NULL,
      "cache", NULL },
    { "reads_updated_name", attn_ok, NEAR(OAC_ALIAS_HAZARD) },
};
CASES_TEST(attn_rows)

/* ---- capacity: a known length against a Sequence's pages --------------- */

static char tmpdir[64];
static uint8_t payload[128];   /* an INT4 page of 256 elements: all 0.0 */

/* A SequenceProto of n INT4 pages at tmpdir/name (the caller frees). */
static char *write_pages(size_t n, const char *name)
{
    Onnx__QuantizedTensorProto qts[4], *ptrs[4];
    ck_assert_uint_le(n, 4);
    for (size_t i = 0; i < n; i++) {
        Onnx__QuantizedTensorProto init = ONNX__QUANTIZED_TENSOR_PROTO__INIT;
        qts[i] = init;
        qts[i].n_dims = 4;
        qts[i].dims = (int64_t *)page_dims;
        qts[i].has_raw_data = 1;
        qts[i].raw_data.data = payload;
        qts[i].raw_data.len = sizeof payload;
        qts[i].has_n_bytes = 1;
        qts[i].n_bytes = sizeof payload;
        qts[i].has_quantized_type = 1;
        qts[i].quantized_type = 0;
        ptrs[i] = &qts[i];
    }
    Onnx__SequenceProto seq = ONNX__SEQUENCE_PROTO__INIT;
    seq.has_elem_type = 1;
    seq.elem_type = ONNX__SEQUENCE_PROTO__DATA_TYPE__QUANTIZED_TENSOR;
    seq.n_quantized_tensor_values = n;
    seq.quantized_tensor_values = ptrs;
    size_t len = protobuf_c_message_get_packed_size(&seq.base);
    uint8_t *buf = malloc(len);
    ck_assert_ptr_nonnull(buf);
    protobuf_c_message_pack(&seq.base, buf);
    char *path = malloc(strlen(tmpdir) + strlen(name) + 2);
    ck_assert_ptr_nonnull(path);
    sprintf(path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
    fclose(f);
    free(buf);
    return path;
}

/* Two pages in the file, the update creates the third (page_id 2): 48
 * positions.  length is a Constant. */
static void cap_scene(fx *f, int64_t length, int64_t page_id)
{
    oac_mb *mb;
    fx_build(f, &mb);
    knobs k = defaults();
    k.page_id = page_id;
    k.length = length;
    build(mb, &k);
    char *path = write_pages(2, "two.pb");
    oac_input_file in = { "cache", path };
    oac_check_opts opts = { .inputs = &in, .n_inputs = 1 };
    ck_assert_int_eq(fx_check(f, &opts), 0);
    free(path);
}

static void length_49_of_48(fx *f) { cap_scene(f, 49, 2); }
static void length_48_of_48(fx *f) { cap_scene(f, 48, 2); }
/* page_id 1 writes into the second page: no third, 32 positions. */
static void length_33_of_32(fx *f) { cap_scene(f, 33, 1); }
static void length_32_of_32(fx *f) { cap_scene(f, 32, 1); }

static const scene_case cap_rows[] = {
    { "length_49_of_48", length_49_of_48, WANT(OAC_CAPACITY_OVERFLOW), "attend",
      "u", "/graph/node/4/input/2" },
    { "length_33_of_32", length_33_of_32, WANT(OAC_CAPACITY_OVERFLOW), "attend",
      "u", "/graph/node/4/input/2" },
    { "length_48_of_48", length_48_of_48, NEAR(OAC_CAPACITY_OVERFLOW) },
    { "length_32_of_32", length_32_of_32, NEAR(OAC_CAPACITY_OVERFLOW) },
};
CASES_TEST(cap_rows)

/* The message says what was asked, what the pages hold and why. */
START_TEST(test_capacity_message)
{
    fx f;
    length_49_of_48(&f);
    const oac_diag *x = diag_expect(f.d, OAC_CAPACITY_OVERFLOW, "attend", "u", NULL);
    ck_assert_ptr_nonnull(strstr(x->message, "length 49 exceeds the 48 positions the "
                                             "3 pages of 'u' hold (page_size 16)"));
    fx_end(&f);
}
END_TEST

/* The output is typed from the query (the plan sizes it). */
START_TEST(test_output_typed)
{
    fx f;
    oac_mb *mb;
    fx_build(&f, &mb);
    knobs k = defaults();
    build(mb, &k);
    ck_assert_int_eq(fx_infer(&f, NULL), 0);
    char buf[64];
    ck_assert_str_eq(dims_of(&f, "out", buf, sizeof buf), "4,1,4");
    ck_assert_int_eq(elem_of(&f, "out"), OAC_T_FLOAT);
    fx_end(&f);
}
END_TEST

static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/check_paged_attn.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    char p[128];
    snprintf(p, sizeof p, "%s/two.pb", tmpdir);
    unlink(p);
    rmdir(tmpdir);
}

Suite *test_suite(void)
{
    Suite *s = suite_create("paged_attn");
    TCase *tc = tcase_create("core");
    tcase_add_unchecked_fixture(tc, make_tmpdir, remove_tmpdir);
    ADD_CASES(tc, attn_rows);
    ADD_CASES(tc, cap_rows);
    tcase_add_test(tc, test_capacity_message);
    tcase_add_test(tc, test_output_typed);
    suite_add_tcase(s, tc);
    return s;
}

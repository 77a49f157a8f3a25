/* check_kernel_paged_attn.c: the PagedCacheAttention kernel
 * (lib/kernels/paged_attn.c, contract section 11), through its core
 * oac_pattn_run on page tables this test fills (Sequence and Map caches,
 * pages of different formats), and through the runtime on one-node
 * models (the measured peak equals the plan, which counts the workspace).
 * The reference is attention in double over the pages as decoded. */
#include "harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "half.h"
#include "kernels/paged_attn.h"
#include "quant/quant.h"

enum { KVH = 2, PS = 16, HS = 4, NEL = 2 * KVH * PS * HS };
enum { Q_FP16, Q_FP8, Q_INT4, Q_INT2, N_Q };

typedef struct afx {
    oac_ctx *ctx;
    oac_mb *mb;
    oac_paged p;
    oac_page pages[8];
    int64_t keys[8];
    uint16_t q[8 * 4 * HS];      /* query, FLOAT16 */
    uint16_t out[8 * 4 * HS];
    uint8_t ws[4096];
} afx;

/* Element e of page id's slab s (0..3: K head 0, K head 1, V head 0, V
 * head 1), row r: in [-1, 1), distinct per position. */
static float pval(int id, int s, int r, int e)
{
    return (float)(((id * 53 + s * 29 + r * 13 + e * 7) % 41) - 20) / 21.0f;
}

static void setup(afx *f)
{
    memset(f, 0, sizeof *f);
    f->ctx = oac_ctx_new();
    f->mb = oac_mb_new(f->ctx);
    oac_mb_quant_float(f->mb, "FP16_PAGE", OAC_T_FLOAT16, 1, 5, 10, 15, 1, 1);
    oac_mb_quant_fp8(f->mb, "FP8_PAGE", OAC_T_FLOAT16);
    oac_mb_quant_linear(f->mb, "INT4_PAGE", OAC_T_FLOAT16, OAC_T_INT4, 4, 1, 0.125f, 0);
    oac_mb_quant_linear(f->mb, "INT2_PAGE", OAC_T_FLOAT16, OAC_T_UINT8, 2, 0, 0.5f, 2);
    f->p.elem_type = OAC_T_FLOAT16;
    const int64_t dims[4] = { 2, KVH, PS, HS };
    memcpy(f->p.page_dims, dims, sizeof dims);
    f->p.pages = f->pages;
    f->p.cap_pages = 8;
}

static void teardown(afx *f)
{
    for (size_t i = 0; i < f->p.n_pages; i++)
        free(f->pages[i].data);
    oac_mb_free(f->mb);
    oac_ctx_free(f->ctx);
}

static oac_qdesc qdesc(afx *f, int q)
{
    oac_qdesc d;
    char why[200];
    ck_assert_msg(oac_qdesc_from_proto(&d, oac_mb_proto(f->mb)->quantizations[q], why,
                                       sizeof why), "%s", why);
    return d;
}

/* Append page `id` in format q (its values pval(id, ...)). */
static void add_page(afx *f, int id, int q)
{
    oac_qdesc d = qdesc(f, q);
    uint64_t b;
    ck_assert(oac_qdesc_page_bytes(&d, NEL, &b));
    uint16_t v[NEL];
    for (int s = 0; s < 2 * KVH; s++)
        for (int r = 0; r < PS; r++)
            for (int e = 0; e < HS; e++)
                v[(s * PS + r) * HS + e] = oac_f32_to_f16(pval(id, s, r, e));
    oac_page *pg = &f->pages[f->p.n_pages];
    pg->quantized_type = q;
    pg->bytes = (size_t)b;
    pg->data = calloc(1, (size_t)b);
    ck_assert_int_eq(oac_quantize(f->ctx, &d, pg->data, pg->bytes, 0, OAC_T_FLOAT16,
                                  v, NEL), 0);
    f->keys[f->p.n_pages++] = id;
}

static void fill_query(afx *f, int heads, int q_len)
{
    for (int i = 0; i < heads * q_len * HS; i++)
        f->q[i] = oac_f32_to_f16((float)((i * 17 % 23) - 11) / 8.0f);
}

static oac_tensor t3(int32_t t, void *data, int64_t a, int64_t b, int64_t c)
{
    oac_tensor x = { .elem_type = t, .rank = 3, .dims = { a, b, c }, .data = data,
                     .bytes = (size_t)(a * b * c) * 2 };
    return x;
}

static int attend(afx *f, const int64_t *keys, int heads, int kv, int q_len,
                  int64_t length, oac_pattn_call *out)
{
    oac_tensor q = t3(OAC_T_FLOAT16, f->q, heads, q_len, HS);
    oac_tensor o = t3(OAC_T_FLOAT16, f->out, heads, q_len, HS);
    uint64_t wsb;
    ck_assert(oac_pattn_workspace_bytes(OAC_T_FLOAT16, f->p.page_dims, &wsb));
    ck_assert_uint_eq(wsb, 2 * 2 * PS * HS + 4 * (PS + HS));
    oac_pattn_call c = {
        .ctx = f->ctx, .model = oac_mb_proto(f->mb), .cache = &f->p, .keys = keys,
        .cache_name = "cache", .query = &q, .length = length, .num_heads = heads,
        .kv_num_heads = kv, .out = &o, .ws = f->ws, .ws_bytes = (size_t)wsb,
    };
    int rc = oac_pattn_run(&c);
    if (out)
        *out = c;
    return rc;
}

/* The page holding page_id id (keys: a Map), decoded to float. */
static void decoded(afx *f, const int64_t *keys, int id, float *dst)
{
    size_t k = 0;
    while (keys && keys[k] != id)
        k++;
    if (!keys)
        k = (size_t)id;
    const oac_page *pg = &f->pages[k];
    oac_qdesc d = qdesc(f, pg->quantized_type);
    uint16_t h[NEL];
    ck_assert_int_eq(oac_dequantize(f->ctx, &d, pg->data, pg->bytes, 0, OAC_T_FLOAT16,
                                    h, NEL), 0);
    for (int i = 0; i < NEL; i++)
        dst[i] = oac_f16_to_f32(h[i]);
}

/* Attention in double over the decoded pages; the output compared within
 * tol absolute (outputs are below 1 in magnitude). */
static void expect_reference(afx *f, const int64_t *keys, int heads, int kv, int q_len,
                             int64_t length, double tol)
{
    static float pages[8][NEL];
    int np = (int)((length + PS - 1) / PS);
    for (int p = 0; p < np; p++)
        decoded(f, keys, p, pages[p]);
    double scale = 1.0 / sqrt((double)HS);
    for (int h = 0; h < heads; h++)
        for (int i = 0; i < q_len; i++) {
            int kh = h / (heads / kv);
            int64_t n = length - q_len + i + 1;
            double s[8 * PS], mx = -INFINITY, sum = 0, acc[HS] = { 0 };
            for (int64_t j = 0; j < n; j++) {
                const float *pg = pages[j / PS];
                double d = 0;
                for (int e = 0; e < HS; e++)
                    d += (double)oac_f16_to_f32(f->q[(h * q_len + i) * HS + e]) *
                         pg[(kh * PS + j % PS) * HS + e];
                s[j] = d * scale;
                mx = s[j] > mx ? s[j] : mx;
            }
            for (int64_t j = 0; j < n; j++) {
                const float *pg = pages[j / PS];
                double w = exp(s[j] - mx);
                sum += w;
                for (int e = 0; e < HS; e++)
                    acc[e] += w * pg[((KVH + kh) * PS + j % PS) * HS + e];
            }
            for (int e = 0; e < HS; e++) {
                double want = acc[e] / sum;
                double got = oac_f16_to_f32(f->out[(h * q_len + i) * HS + e]);
                ck_assert_msg(fabs(got - want) <= tol, "head %d row %d elem %d: %g, "
                              "want %g", h, i, e, got, want);
            }
        }
}

/* IEEE half pages, GQA (4 query heads on 2 kv heads), two query rows at
 * positions 35 and 36 of 37: three pages, the last partly valid. */
START_TEST(test_half_pages_gqa)
{
    afx f;
    setup(&f);
    for (int id = 0; id < 3; id++)
        add_page(&f, id, Q_FP16);
    fill_query(&f, 4, 2);
    ck_assert_int_eq(attend(&f, NULL, 4, 2, 2, 37, NULL), 0);
    expect_reference(&f, NULL, 4, 2, 2, 37, 1e-3);
    teardown(&f);
}
END_TEST

/* Every page is read through its own format: INT4, FP8, half, INT2. */
START_TEST(test_mixed_formats)
{
    afx f;
    setup(&f);
    const int fmt[4] = { Q_INT4, Q_FP8, Q_FP16, Q_INT2 };
    for (int id = 0; id < 4; id++)
        add_page(&f, id, fmt[id]);
    fill_query(&f, 2, 1);
    ck_assert_int_eq(attend(&f, NULL, 2, 2, 1, 60, NULL), 0);
    expect_reference(&f, NULL, 2, 2, 1, 60, 1e-3);
    /* Causal: a row sees nothing past its position; position 0 alone
     * returns the values of position 0. */
    ck_assert_int_eq(attend(&f, NULL, 2, 2, 1, 1, NULL), 0);
    float v0[NEL];
    decoded(&f, NULL, 0, v0);
    for (int e = 0; e < HS; e++)
        ck_assert_float_eq_tol(oac_f16_to_f32(f.out[e]), v0[(KVH * PS) * HS + e], 1e-3);
    teardown(&f);
}
END_TEST

/* Reading never writes or moves a page. */
START_TEST(test_cache_untouched)
{
    afx f;
    setup(&f);
    for (int id = 0; id < 3; id++)
        add_page(&f, id, id == 1 ? Q_FP8 : Q_FP16);
    uint8_t before[3][2 * NEL];
    void *addr[3];
    for (int i = 0; i < 3; i++) {
        memcpy(before[i], f.pages[i].data, f.pages[i].bytes);
        addr[i] = f.pages[i].data;
    }
    fill_query(&f, 4, 2);
    ck_assert_int_eq(attend(&f, NULL, 4, 2, 2, 40, NULL), 0);
    for (int i = 0; i < 3; i++) {
        ck_assert_ptr_eq(f.pages[i].data, addr[i]);
        ck_assert(memcmp(before[i], f.pages[i].data, f.pages[i].bytes) == 0);
    }
    teardown(&f);
}
END_TEST

/* A Map cache: page ids are its keys, in any order; a position whose page
 * is absent is kernel-error naming the page id, and nothing is written. */
START_TEST(test_map_cache)
{
    afx f;
    setup(&f);
    add_page(&f, 2, Q_FP16);
    add_page(&f, 0, Q_INT4);
    add_page(&f, 1, Q_FP8);
    fill_query(&f, 4, 1);
    ck_assert_int_eq(attend(&f, f.keys, 4, 2, 1, 40, NULL), 0);
    expect_reference(&f, f.keys, 4, 2, 1, 40, 1e-3);

    f.keys[2] = 3;                       /* page 1 gone, 3 instead */
    memset(f.out, 0x55, sizeof f.out);
    oac_pattn_call c;
    ck_assert_int_eq(attend(&f, f.keys, 4, 2, 1, 40, &c), OAC_ERUNTIME);
    ck_assert_int_eq(c.code, OAC_KERNEL_ERROR);
    ck_assert_msg(strstr(c.msg, "position 16 is in page_id 1, which the cache does "
                         "not hold"), "%s", c.msg);
    ck_assert_uint_eq(f.out[0], 0x5555);
    /* A length that stays in pages 0 is fine with page 1 absent. */
    ck_assert_int_eq(attend(&f, f.keys, 4, 2, 1, 16, NULL), 0);
    teardown(&f);
}
END_TEST

/* Refusals of the operands and of a length the pages do not reach. */
START_TEST(test_refusals)
{
    afx f;
    setup(&f);
    add_page(&f, 0, Q_FP16);
    add_page(&f, 1, Q_FP16);
    fill_query(&f, 4, 2);
    oac_pattn_call c;
    ck_assert_int_eq(attend(&f, NULL, 4, 2, 2, 33, &c), OAC_ERUNTIME);
    ck_assert_int_eq(c.code, OAC_KERNEL_ERROR);                /* page 2 */
    ck_assert_ptr_nonnull(strstr(c.msg, "page_id 2"));
    ck_assert_int_eq(attend(&f, NULL, 4, 2, 2, 1, &c), OAC_ERUNTIME);
    ck_assert_int_eq(c.code, OAC_KERNEL_ERROR);                /* length < q_len */
    ck_assert_int_eq(attend(&f, NULL, 4, 4, 2, 8, &c), OAC_ERUNTIME);
    ck_assert_int_eq(c.code, OAC_OPERAND_INVALID);             /* kv heads 4 vs 2 */
    ck_assert_int_eq(attend(&f, NULL, 3, 2, 2, 8, &c), OAC_ERUNTIME);
    ck_assert_int_eq(c.code, OAC_OPERAND_INVALID);             /* 3 % 2 */
    f.pages[1].bytes -= 1;                                     /* a short page */
    ck_assert_int_eq(attend(&f, NULL, 4, 2, 2, 20, &c), OAC_ERUNTIME);
    ck_assert_int_eq(c.code, OAC_PAGE_TYPE_INVALID);
    f.pages[1].bytes += 1;
    ck_assert_int_eq(attend(&f, NULL, 4, 2, 2, 20, &c), 0);
    teardown(&f);
}
END_TEST

/* ---- through the runtime ------------------------------------------------ */

/* u = PagedCacheUpdate(cache, 0, values [2,2,3,4], 0) into an empty half
 * cache; out = PagedCacheAttention(query [4,2,4], u, length). */
static void one_layer(fx *f, int64_t length)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    int32_t q = oac_mb_quant_float(mb, "FP16_PAGE", OAC_T_FLOAT16, 1, 5, 10, 15, 1, 1);
    oac_vi_access(g, oac_gb_input_paged(g, "cache", OAC_T_FLOAT16, "2,2,16,4", &q, 1), 1);
    double v[2 * 2 * 3 * 4], qv[4 * 2 * 4];
    for (int i = 0; i < 48; i++)
        v[i] = (double)((i * 7 % 19) - 9) / 10.0;
    for (int i = 0; i < 32; i++)
        qv[i] = (double)((i * 5 % 13) - 6) / 6.0;
    kt_init(g, "values", OAC_T_FLOAT16, "2,2,3,4", v, 48);
    kt_init(g, "query", OAC_T_FLOAT16, "4,2,4", qv, 32);
    int64_t zero = 0;
    oac_gb_constant_i64(g, "page_id", "", &zero, 1);
    oac_gb_constant_i64(g, "position", "", &zero, 1);
    oac_gb_constant_i64(g, "length", "", &length, 1);
    oac_node_alias(g, oac_gb_node(g, "PagedCacheUpdate", "onnx_alias", "update",
                                  "cache,page_id,values,position", "u"), 0, 0, 1);
    Onnx__NodeProto *n = oac_gb_node(g, "PagedCacheAttention", "onnx_alias", "attend",
                                     "query,u,length", "out");
    oac_node_attr_int(g, n, "num_heads", 4);
    oac_node_attr_int(g, n, "kv_num_heads", 2);
    oac_gb_output(g, "out", OAC_T_FLOAT16, "4,2,4");
    oac_vi_alias_of(g, oac_gb_output_paged(g, "u", OAC_T_FLOAT16, "2,2,16,4", &q, 1),
                    "cache");
}

START_TEST(test_runtime_planned)
{
    fx f;
    one_layer(&f, 3);
    kt_val out;
    ck_assert_int_eq(kt_run(&f, true, "out", &out, 1), 0);   /* peak == plan */
    /* Reference over the three written positions (values as FLOAT16). */
    double want[32];
    for (int h = 0; h < 4; h++)
        for (int i = 0; i < 2; i++) {
            int kh = h / 2, n = 3 - 2 + i + 1;
            double s[3], mx = -INFINITY, sum = 0, acc[4] = { 0 };
            for (int j = 0; j < n; j++) {
                double d = 0;
                for (int e = 0; e < 4; e++)
                    d += kt_round(OAC_T_FLOAT16, (double)((((h * 2 + i) * 4 + e) * 5 % 13)
                                                          - 6) / 6.0) *
                         kt_round(OAC_T_FLOAT16,
                                  (double)((((kh * 3 + j) * 4 + e) * 7 % 19) - 9) / 10.0);
                s[j] = d / 2.0;
                mx = s[j] > mx ? s[j] : mx;
            }
            for (int j = 0; j < n; j++) {
                double w = exp(s[j] - mx);
                sum += w;
                for (int e = 0; e < 4; e++)
                    acc[e] += w * kt_round(OAC_T_FLOAT16,
                                           (double)(((((2 + kh) * 3 + j) * 4 + e) * 7 % 19)
                                                    - 9) / 10.0);
            }
            for (int e = 0; e < 4; e++)
                want[(h * 2 + i) * 4 + e] = acc[e] / sum;
        }
    kt_expect(&out, OAC_T_FLOAT16, "4,2,4", want, 32, 2e-3);
    kt_free(&out, 1);
    fx_end(&f);
}
END_TEST

/* length 17 reads page 1, which the one update never created: the check
 * cannot tell (the cache starts empty at run time, its pages unknown to
 * it), the run refuses at the node. */
START_TEST(test_runtime_absent_page)
{
    fx f;
    one_layer(&f, 17);
    kt_run_fail(&f, OAC_KERNEL_ERROR, "attend");
    const oac_diag *x = diag_expect_run(f.d, OAC_KERNEL_ERROR, "kernel-error");
    ck_assert_msg(strstr(x->message, "'u'") && strstr(x->message, "page_id 1"), "%s",
                  x->message);
    fx_end(&f);
}
END_TEST

/* A Map cache from --input (a MapProto): its keys are the page ids, in
 * any order.  out = PagedCacheAttention(query [4,1,4], cache, length). */
static char *map_file(const int64_t *keys, size_t n)
{
    static uint8_t payload[4][2 * 2 * 16 * 4 * 2];
    static const int64_t dims[4] = { 2, 2, 16, 4 };
    Onnx__QuantizedTensorProto qts[4], *ptrs[4];
    for (size_t i = 0; i < n; i++) {
        for (size_t e = 0; e < 256; e++) {
            uint16_t h = oac_f32_to_f16(pval((int)keys[i], (int)(e / 64), (int)(e / 4 % 16),
                                             (int)(e % 4)));
            payload[i][2 * e] = (uint8_t)h;
            payload[i][2 * e + 1] = (uint8_t)(h >> 8);
        }
        Onnx__QuantizedTensorProto init = ONNX__QUANTIZED_TENSOR_PROTO__INIT;
        qts[i] = init;
        qts[i].n_dims = 4;
        qts[i].dims = (int64_t *)dims;
        qts[i].has_raw_data = qts[i].has_n_bytes = qts[i].has_quantized_type = 1;
        qts[i].raw_data.data = payload[i];
        qts[i].raw_data.len = sizeof payload[i];
        qts[i].n_bytes = sizeof payload[i];
        qts[i].quantized_type = 0;
        ptrs[i] = &qts[i];
    }
    Onnx__SequenceProto seq = ONNX__SEQUENCE_PROTO__INIT;
    seq.has_elem_type = 1;
    seq.elem_type = ONNX__SEQUENCE_PROTO__DATA_TYPE__QUANTIZED_TENSOR;
    seq.n_quantized_tensor_values = n;
    seq.quantized_tensor_values = ptrs;
    Onnx__MapProto map = ONNX__MAP_PROTO__INIT;
    map.has_key_type = 1;
    map.key_type = OAC_T_INT64;
    map.n_keys = n;
    map.keys = (int64_t *)keys;
    map.values = &seq;
    size_t len = protobuf_c_message_get_packed_size(&map.base);
    uint8_t *buf = malloc(len);
    ck_assert_ptr_nonnull(buf);
    protobuf_c_message_pack(&map.base, buf);
    char *path = strdup("/tmp/check_kernel_paged_attn.XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
    close(fd);
    free(buf);
    return path;
}

static int map_scene(fx *f, const int64_t *keys, size_t n, int64_t length)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    int32_t q = oac_mb_quant_float(mb, "FP16_PAGE", OAC_T_FLOAT16, 1, 5, 10, 15, 1, 1);
    Onnx__ValueInfoProto *vi = oac_gb_input_paged(g, "cache", OAC_T_FLOAT16, "2,2,16,4",
                                                  &q, 1);
    Onnx__TypeProto__Map *mt = oac_mb_alloc(mb, sizeof *mt);
    ck_assert_ptr_nonnull(mt);
    onnx__type_proto__map__init(mt);
    mt->has_key_type = 1;
    mt->key_type = OAC_T_INT64;
    mt->value_type = vi->type->sequence_type->elem_type;
    vi->type->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
    vi->type->map_type = mt;
    double qv[16];
    for (int i = 0; i < 16; i++)
        qv[i] = (double)((i * 5 % 13) - 6) / 6.0;
    kt_init(g, "query", OAC_T_FLOAT16, "4,1,4", qv, 16);
    oac_gb_constant_i64(g, "length", "", &length, 1);
    Onnx__NodeProto *nd = oac_gb_node(g, "PagedCacheAttention", "onnx_alias", "attend",
                                      "query,cache,length", "out");
    oac_node_attr_int(g, nd, "num_heads", 4);
    oac_node_attr_int(g, nd, "kv_num_heads", 2);
    oac_gb_output(g, "out", OAC_T_FLOAT16, "4,1,4");
    char *path = map_file(keys, n);
    oac_input_file in = { "cache", path };
    oac_run_opts ro = { .steps = 1 };
    int rc = fx_check_run(f, NULL, 0, &in, 1, &ro, NULL);
    unlink(path);
    free(path);
    return rc;
}

/* Acceptance: a position whose page a Map cache lacks is kernel-error
 * naming the node, the value and the page id; with the key there (in any
 * order) the same node runs. */
START_TEST(test_runtime_map_absent_page)
{
    fx f;
    const int64_t gap[2] = { 2, 0 };
    ck_assert_int_eq(map_scene(&f, gap, 2, 40), OAC_ERUNTIME);
    const oac_diag *x = diag_expect_run(f.d, OAC_KERNEL_ERROR, "kernel-error");
    ck_assert_str_eq(x->node, "attend");
    ck_assert_msg(strstr(x->message, "node 'attend' (PagedCacheAttention): 'cache': "
                         "position 16 is in page_id 1, which the cache does not hold"),
                  "%s", x->message);
    fx_end(&f);
    const int64_t all[3] = { 2, 0, 1 };
    ck_assert_int_eq(map_scene(&f, all, 3, 40), OAC_OK);
    diag_expect_clean(f.d);
    fx_end(&f);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("kernel_paged_attn");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_half_pages_gqa);
    tcase_add_test(tc, test_mixed_formats);
    tcase_add_test(tc, test_cache_untouched);
    tcase_add_test(tc, test_map_cache);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_runtime_planned);
    tcase_add_test(tc, test_runtime_absent_page);
    tcase_add_test(tc, test_runtime_map_absent_page);
    suite_add_tcase(s, tc);
    return s;
}

/* roundtrip.c: load and save models, for tests/check_roundtrip.sh.
 *
 *   roundtrip --gen DIR     write the builder models below to DIR
 *   roundtrip OUTDIR < LIST load every path of LIST (one a line) and save
 *                           it as OUTDIR/<n>.onnx, n the line number
 *   roundtrip --tensors OUTDIR < LIST
 *                           load every path of LIST as a TensorProto file
 *                           (oac_pbfile_load) and write its elements as
 *                           oac_tensor_read decodes them to OUTDIR/<n>.bin,
 *                           or OUTDIR/<n>.skip when the type has no fixed
 *                           size (strings) or the file is not a tensor
 *
 * Prints "FAIL path: message" for each model that does not load or save
 * and exits 1 if any did; the comparison is done independently (python
 * onnx) by the script.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oac_build.h"
#include "oac_int.h"

static int gen(const char *dir)
{
    oac_ctx *ctx = oac_ctx_new();
    int rc = 0;
    char path[4096];

    /* 1: a cache update with every contract field, a paged cache,
     * quantizations, large and small initializers, metadata. */
    oac_mb *mb = oac_mb_new(ctx);
    oac_mb_metadata(mb, "k", "v");
    int q4 = oac_mb_quant_linear(mb, "INT4_PAGE", OAC_T_FLOAT, OAC_T_INT4, 4, 1, 0.5f, 0);
    oac_mb_quant_fp8(mb, "FP8", OAC_T_FLOAT);
    oac_gb *g = oac_mb_graph(mb);
    Onnx__ValueInfoProto *c = oac_gb_input(g, "cache", OAC_T_FLOAT, "1,2,batch,4");
    oac_vi_access(g, c, 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, "1,2,1,4");
    int32_t allowed[] = { q4 };
    oac_gb_input_paged(g, "pages", OAC_T_FLOAT, "2,2,16,4", allowed, 1);
    Onnx__ValueInfoProto *o = oac_gb_output(g, "out", OAC_T_FLOAT, "1,2,batch,4");
    oac_vi_alias_of(g, o, "cache");
    oac_vi_meta(g, o, "note", "x");
    static float big[1000];
    for (int i = 0; i < 1000; i++)
        big[i] = (float)i / 3.0f;
    oac_gb_init_f32(g, "wf", "1000", big, 1000);
    oac_gb_init_raw(g, "wr", OAC_T_FLOAT, "1000", big, sizeof big);
    int64_t pos = 1;
    oac_gb_init_i64(g, "pos", "", &pos, 1);
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "u", "cache,values,pos", "out");
    oac_node_alias(g, n, 0, 0, 1);
    oac_node_meta(g, n, "output_alias", "0:0");
    oac_node_attr_int(g, n, "axis", -2);
    /* Fields no schema knows, small and large (the large one is left in
     * the mapping on load), must survive too. */
    static uint8_t blob[300];
    for (size_t j = 0; j < sizeof blob; j++)
        blob[j] = (uint8_t)(j * 31);
    static const uint8_t small[1] = { 42 };
    n->base.unknown_fields = oac_mb_alloc(mb, 2 * sizeof *n->base.unknown_fields);
    if (n->base.unknown_fields) {
        n->base.unknown_fields[0] = (ProtobufCMessageUnknownField){
            .tag = 3000, .wire_type = PROTOBUF_C_WIRE_TYPE_VARINT,
            .len = 1, .data = (uint8_t *)small };
        /* length-delimited: data is the length varint then the bytes */
        static uint8_t ld[2 + sizeof blob];
        ld[0] = (uint8_t)(sizeof blob | 0x80);
        ld[1] = (uint8_t)(sizeof blob >> 7);
        memcpy(ld + 2, blob, sizeof blob);
        n->base.unknown_fields[1] = (ProtobufCMessageUnknownField){
            .tag = 3001, .wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED,
            .len = sizeof ld, .data = ld };
        n->base.n_unknown_fields = 2;
    }
    snprintf(path, sizeof path, "%s/contract.onnx", dir);
    if (oac_mb_write(mb, path) != 0)
        rc = 1;
    oac_mb_free(mb);

    /* 2: subgraphs and a local function. */
    mb = oac_mb_new(ctx);
    g = oac_mb_graph(mb);
    oac_gb_input(g, "c", OAC_T_BOOL, "");
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    oac_gb_output(g, "y", OAC_T_FLOAT, "4");
    n = oac_gb_node(g, "If", NULL, "if", "c", "y");
    oac_gb *th = oac_node_attr_graph(g, n, "then_branch", "then");
    oac_gb_output(th, "y", OAC_T_FLOAT, "4");
    oac_gb_init_f32(th, "k", "100", big, 100);
    oac_gb_node(th, "Identity", NULL, NULL, "x", "y");
    oac_gb *el = oac_node_attr_graph(g, n, "else_branch", "else");
    oac_gb_output(el, "y", OAC_T_FLOAT, "4");
    oac_gb_node(el, "Identity", NULL, NULL, "x", "y");
    oac_gb *f = oac_mb_function(mb, "local", "F", "a", "b");
    Onnx__NodeProto *k = oac_gb_node(f, "Constant", NULL, "k", "", "w");
    oac_node_attr_tensor(f, k, "value",
                         oac_gb_tensor_raw(f, "w", OAC_T_FLOAT, "200", big, 800));
    oac_gb_node(f, "Add", NULL, NULL, "a,w", "b");
    snprintf(path, sizeof path, "%s/subgraphs.onnx", dir);
    if (oac_mb_write(mb, path) != 0)
        rc = 1;
    oac_mb_free(mb);
    oac_ctx_free(ctx);
    return rc;
}

static int tensors(const char *outdir)
{
    char line[4096], out[4200];
    int bad = 0;
    unsigned long i = 0;
    oac_ctx *ctx = oac_ctx_new();
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        if (!*line)
            continue;
        unsigned long k = i++;
        oac_pbfile *f;
        if (oac_pbfile_load(ctx, &f, line, &onnx__tensor_proto__descriptor, NULL)) {
            printf("FAIL %s: %s\n", line, oac_errmsg(ctx));
            bad = 1;
            continue;
        }
        const Onnx__TensorProto *t = (const Onnx__TensorProto *)f->msg;
        uint64_t n, bytes;
        bool fixed = t->has_data_type && oac_tensor_numel(t, &n) &&
                     oac_elem_bytes(t->data_type, n, &bytes);
        snprintf(out, sizeof out, "%s/%lu.%s", outdir, k, fixed ? "bin" : "skip");
        FILE *o = fopen(out, "wb");
        if (fixed && o) {
            uint8_t *dst = malloc(bytes ? (size_t)bytes : 1);
            if (oac_tensor_read(ctx, NULL, t, dst, (size_t)bytes)) {
                printf("FAIL %s: %s\n", line, oac_errmsg(ctx));
                bad = 1;
            } else if (fwrite(dst, 1, (size_t)bytes, o) != bytes) {
                bad = 1;
            }
            free(dst);
        }
        if (!o || fclose(o) != 0)
            bad = 1;
        oac_pbfile_free(f);
    }
    oac_ctx_free(ctx);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--gen") == 0)
        return gen(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--tensors") == 0)
        return tensors(argv[2]);
    if (argc != 2) {
        fprintf(stderr, "usage: roundtrip --gen DIR | roundtrip OUTDIR < LIST\n");
        return 2;
    }
    char line[4096], out[4200];
    int bad = 0;
    unsigned long i = 0;
    oac_ctx *ctx = oac_ctx_new();
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        if (!*line)
            continue;
        snprintf(out, sizeof out, "%s/%lu.onnx", argv[1], i++);
        oac_diags *d = oac_diags_new(ctx);
        oac_model *m;
        int rc = oac_model_load(ctx, &m, line, d);
        if (rc == OAC_OK) {
            rc = oac_model_save(ctx, m, out);
            oac_model_free(m);
        }
        if (rc != OAC_OK) {
            printf("FAIL %s: %s\n", line, oac_errmsg(ctx));
            bad = 1;
        }
        oac_diags_free(d);
    }
    oac_ctx_free(ctx);
    return bad;
}

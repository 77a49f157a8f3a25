/* fuzz_load.c: libFuzzer entry point over oac_model_load_buffer.
 *
 * Build and run (from a build folder; needs clang with libFuzzer):
 *
 *     make fuzz                          # builds fuzz/fuzz_load
 *     make fuzz-smoke                    # 60 s over the seed corpus
 *     ./fuzz/fuzz_load -max_total_time=600 fuzz/corpus
 *
 * Neither is part of `make check`.  Each input is loaded as a model;
 * when it loads, it is saved back and reloaded, and the two saves must
 * be identical (the load/save round trip is a fixed point), its tensors'
 * payloads are decoded with bounded buffers, and a parse failure must
 * have left exactly one parse-error diagnostic.  Any crash, sanitizer
 * report, leak or abort() below is a bug.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oac_int.h"

static void decode_all(oac_ctx *ctx, const oac_model *m)
{
    const Onnx__GraphProto *g = oac_model_proto(m)->graph;
    for (size_t i = 0; g && i < g->n_initializer; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        uint64_t n, bytes;
        oac_payload pl;
        (void)oac_tensor_payload(t, &pl);
        int64_t v[16];
        size_t got;
        (void)oac_tensor_int64s(ctx, t, v, 16, &got);
        if (oac_tensor_numel(t, &n) && oac_elem_bytes(t->data_type, n, &bytes) &&
            bytes <= 1 << 16 &&
            !(t->has_data_location && t->data_location == 1)) {
            void *dst = malloc(bytes ? bytes : 1);
            (void)oac_tensor_read(ctx, m, t, dst, (size_t)bytes);
            free(dst);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m = NULL;
    /* base_dir points nowhere useful: external references are judged,
     * never followed outside it. */
    int rc = oac_model_load_buffer(ctx, &m, data, size, "fuzz.onnx",
                                   "/nonexistent", d);
    if (rc == OAC_OK) {
        decode_all(ctx, m);
        uint8_t *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        if (oac_model_save_buffer(ctx, &a, &na, m) != OAC_OK)
            abort();
        oac_model *m2 = NULL;
        if (oac_model_load_buffer(ctx, &m2, a, na, "fuzz2.onnx", "/nonexistent",
                                  NULL) != OAC_OK)
            abort();
        if (oac_model_save_buffer(ctx, &b, &nb, m2) != OAC_OK)
            abort();
        if (na != nb || memcmp(a, b, na) != 0)
            abort();
        oac_model_free(m2);
        oac_free(a);
        oac_free(b);
        oac_model_free(m);
    } else if (rc == OAC_EPARSE) {
        if (oac_diags_count(d) != 1 ||
            oac_diags_get(d, 0)->code != OAC_PARSE_ERROR)
            abort();
    } else {
        abort();   /* no other failure is possible from memory */
    }
    oac_diags_free(d);
    oac_ctx_free(ctx);
    return 0;
}

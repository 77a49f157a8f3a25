/* bench_quant.c: quantize-into-page throughput per format (INT8, INT4,
 * INT2, FP8 E4M3FN) beside memcpy of the same input bytes, in one run
 * (contract section 1 codecs, lib/quant*.c).
 *
 * For each format and source type the same input array is quantized into
 * a page the way the PagedCacheUpdate kernel does (oac_quantize at an
 * element offset), and memcpy copies the same input bytes; both are timed
 * over several rounds and the best round counts.  Throughput is input
 * bytes per second; the ratio quant / memcpy is the figure of merit
 * (target: >= 25%).  Run by hand: bench/bench_quant [MiB-of-floats].
 * Not a test: timings depend on the machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "half.h"
#include "quant.h"

#define ROUNDS 15

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static Onnx__QuantizationProto q;
static Onnx__LinearUniformProto lin;
static Onnx__FloatingPointUniformProto fp;

static int make_desc(oac_qdesc *d, const char *which)
{
    Onnx__QuantizationProto q0 = ONNX__QUANTIZATION_PROTO__INIT;
    Onnx__LinearUniformProto l0 = ONNX__LINEAR_UNIFORM_PROTO__INIT;
    Onnx__FloatingPointUniformProto f0 = ONNX__FLOATING_POINT_UNIFORM_PROTO__INIT;
    q = q0;
    lin = l0;
    fp = f0;
    q.has_data_type = 1;
    q.data_type = 1;
    if (!strcmp(which, "FP8")) {
        q.kind_case = ONNX__QUANTIZATION_PROTO__KIND_FLOATING_POINT;
        q.floating_point = &fp;
        fp.has_sign_bits = fp.has_exponent_bits = fp.has_mantissa_bits = 1;
        fp.sign_bits = 1;
        fp.exponent_bits = 4;
        fp.mantissa_bits = 3;
    } else {
        q.kind_case = ONNX__QUANTIZATION_PROTO__KIND_LINEAR;
        q.linear = &lin;
        lin.has_storage_type = lin.has_bits = 1;
        lin.scale_case = ONNX__LINEAR_UNIFORM_PROTO__SCALE_SCALE_FLOAT;
        lin.scale_float = 0.05f;
        if (!strcmp(which, "INT8")) {
            lin.storage_type = 3;
            lin.bits = 8;
        } else if (!strcmp(which, "INT4")) {
            lin.storage_type = 22;
            lin.bits = 4;
        } else {
            lin.storage_type = 2;
            lin.bits = 2;
            lin.has_zero_point = 1;
            lin.zero_point = 2;
        }
    }
    char why[200];
    if (!oac_qdesc_from_proto(d, &q, why, sizeof why)) {
        fprintf(stderr, "bench_quant: %s: %s\n", which, why);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 16;
    size_t n = (mib ? mib : 16) * 1024 * 1024 / sizeof(float);
    float *src = malloc(n * sizeof(float));
    uint16_t *src16 = malloc(n * sizeof(uint16_t));
    uint8_t *page = malloc(n);
    uint8_t *copy = malloc(n * sizeof(float));
    oac_ctx *ctx = oac_ctx_new();
    if (!src || !src16 || !page || !copy || !ctx) {
        fprintf(stderr, "bench_quant: out of memory\n");
        return 1;
    }
    uint32_t seed = 1;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        src[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 8.0f;
    }
    oac_f32_to_f16_n(src16, src, n);
    memset(page, 0, n);
    memset(copy, 0, n * sizeof(float));

    printf("%-6s %-8s %12s %12s %7s\n", "format", "source", "quant GB/s",
           "memcpy GB/s", "ratio");
    const char *formats[] = { "INT8", "INT4", "INT2", "FP8" };
    const struct { const char *name; int32_t type; const void *p; size_t esz; } srcs[] = {
        { "FLOAT", 1, src, 4 }, { "FLOAT16", 10, src16, 2 },
    };
    int rc = 0;
    for (size_t f = 0; f < 4; f++) {
        oac_qdesc d;
        if (make_desc(&d, formats[f]))
            return 1;
        uint64_t pb;
        oac_qdesc_page_bytes(&d, n, &pb);
        for (size_t s = 0; s < 2; s++) {
            size_t in_bytes = n * srcs[s].esz;
            double best_q = 1e30, best_m = 1e30;
            /* Interleave the two so both see the same machine state.
             * Offset 1 puts sub-byte formats off a byte boundary, as a
             * row written into the middle of a page would be. */
            for (int r = 0; r < ROUNDS; r++) {
                double t0 = now();
                if (oac_quantize(ctx, &d, page, pb, 1, srcs[s].type, srcs[s].p,
                                 n - 1)) {
                    fprintf(stderr, "bench_quant: %s\n", oac_errmsg(ctx));
                    return 1;
                }
                double t1 = now();
                memcpy(copy, srcs[s].p, in_bytes);
                double t2 = now();
                if (t1 - t0 < best_q) best_q = t1 - t0;
                if (t2 - t1 < best_m) best_m = t2 - t1;
            }
            double gq = in_bytes / best_q / 1e9, gm = in_bytes / best_m / 1e9;
            printf("%-6s %-8s %12.2f %12.2f %6.0f%%\n", formats[f],
                   srcs[s].name, gq, gm, 100.0 * gq / gm);
            /* Keep the results observable so nothing is optimized away. */
            rc += page[n / 3 * d.bits / 8] == 0xFF && copy[7] == 0xFF;
        }
    }
    oac_ctx_free(ctx);
    free(src);
    free(src16);
    free(page);
    free(copy);
    return rc > 1000;
}

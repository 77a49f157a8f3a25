/* bench_quant.c: quantize-into-page throughput per format (INT8, INT4,
 * INT2, FP8 E4M3FN) and per source type (FLOAT, FLOAT16, BFLOAT16) beside
 * memcpy of the same input bytes, in one run (contract section 1 codecs,
 * lib/quant*.c).
 *
 * For each format and source type the same input array is quantized into
 * a page the way the PagedCacheUpdate kernel does (oac_quantize at an
 * element offset, which picks the fastest path the CPU allows), then by
 * the portable C path alone, and memcpy copies the same input bytes; the
 * three are interleaved round by round so they see the same machine
 * state, and the best round of each counts.  Throughput is input bytes
 * per second; the ratio quant / memcpy is the figure of merit (target:
 * >= 25%, column "meets").  Run by hand: bench/bench_quant [MiB-of-floats
 * [rounds]].  Not a test: timings depend on the machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "half.h"
#include "quant/quant.h"

#define ROUNDS 15
#define TARGET 0.25

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
    int rounds = argc > 2 ? atoi(argv[2]) : ROUNDS;
    size_t n = (mib ? mib : 16) * 1024 * 1024 / sizeof(float);
    float *src = malloc(n * sizeof(float));
    uint16_t *src16 = malloc(n * sizeof(uint16_t));
    uint16_t *srcb16 = malloc(n * sizeof(uint16_t));
    uint8_t *page = malloc(n);
    uint8_t *copy = malloc(n * sizeof(float));
    oac_ctx *ctx = oac_ctx_new();
    if (!src || !src16 || !srcb16 || !page || !copy || !ctx) {
        fprintf(stderr, "bench_quant: out of memory\n");
        return 1;
    }
    if (rounds < 1)
        rounds = ROUNDS;
    uint32_t seed = 1;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        src[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 8.0f;
    }
    oac_f32_to_f16_n(src16, src, n);
    oac_f32_to_bf16_n(srcb16, src, n);
    memset(page, 0, n);
    memset(copy, 0, n * sizeof(float));

    printf("dispatched path: %s; %zu elements, best of %d rounds\n",
           oac_qpath_available(OAC_QPATH_AVX2_F16C) ? "AVX2+F16C" : "portable",
           n, rounds);
    printf("%-6s %-8s %11s %11s %6s %5s  %13s %6s\n", "format", "source",
           "quant GB/s", "memcpy GB/s", "ratio", "meets", "portable GB/s",
           "ratio");
    const char *formats[] = { "INT8", "INT4", "INT2", "FP8" };
    const struct { const char *name; int32_t type; const void *p; size_t esz; } srcs[] = {
        { "FLOAT", 1, src, 4 }, { "FLOAT16", 10, src16, 2 },
        { "BFLOAT16", 16, srcb16, 2 },
    };
    int rc = 0, missed = 0;
    for (size_t f = 0; f < 4; f++) {
        oac_qdesc d;
        if (make_desc(&d, formats[f]))
            return 1;
        uint64_t pb;
        oac_qdesc_page_bytes(&d, n, &pb);
        for (size_t s = 0; s < sizeof srcs / sizeof srcs[0]; s++) {
            size_t in_bytes = n * srcs[s].esz;
            double best_q = 1e30, best_p = 1e30, best_m = 1e30;
            /* Interleave the three so all see the same machine state.
             * Offset 1 puts sub-byte formats off a byte boundary, as a
             * row written into the middle of a page would be. */
            for (int r = 0; r < rounds; r++) {
                double t0 = now();
                if (oac_quantize(ctx, &d, page, pb, 1, srcs[s].type, srcs[s].p,
                                 n - 1)) {
                    fprintf(stderr, "bench_quant: %s\n", oac_errmsg(ctx));
                    return 1;
                }
                double t1 = now();
                memcpy(copy, srcs[s].p, in_bytes);
                double t2 = now();
                /* the same work as oac_quantize, on the portable path */
                if (d.kind == OAC_QK_FP8)
                    oac_fp8_encode_path(page + 1, srcs[s].type, srcs[s].p,
                                        n - 1, OAC_QPATH_PORTABLE);
                else
                    oac_qlinear_encode_path(&d, page, 1, srcs[s].type,
                                            srcs[s].p, n - 1,
                                            OAC_QPATH_PORTABLE);
                double t3 = now();
                if (t1 - t0 < best_q) best_q = t1 - t0;
                if (t2 - t1 < best_m) best_m = t2 - t1;
                if (t3 - t2 < best_p) best_p = t3 - t2;
            }
            double gq = in_bytes / best_q / 1e9, gm = in_bytes / best_m / 1e9;
            double gp = in_bytes / best_p / 1e9;
            int meets = gq / gm >= TARGET;
            missed += !meets;
            printf("%-6s %-8s %11.2f %11.2f %5.0f%% %5s  %13.2f %5.0f%%\n",
                   formats[f], srcs[s].name, gq, gm, 100.0 * gq / gm,
                   meets ? "yes" : "NO", gp, 100.0 * gp / gm);
            /* Keep the results observable so nothing is optimized away. */
            rc += page[n / 3 * d.bits / 8] == 0xFF && copy[7] == 0xFF;
        }
    }
    printf("%s\n", missed ? "some formats are below the 25% target"
                          : "every format and source meets the 25% target");
    oac_ctx_free(ctx);
    free(src);
    free(src16);
    free(srcb16);
    free(page);
    free(copy);
    return rc > 1000;
}

/* bench_update.c: the cost of one in-place CacheUpdate step (contract 2)
 * against (a) memcpy of exactly the update's bytes and (b) a copy of the
 * whole cache, for capacities of 1K..16K tokens, side by side in one run.
 *
 * Owns nothing of the library; run by hand (`bench/bench_update [reps]`),
 * never by make check.  Target: the update stays within 1.5x of (a) and
 * flat as the capacity grows, while (b) grows linearly with it.
 *
 * (a) is printed two ways.  memcpy_ns copies the update's bytes as one
 * contiguous block; but in a [.., heads, capacity, head_size] cache those
 * bytes are `heads` runs, one per head, capacity rows apart, so
 * strided_ns (the same bytes memcpy'd to the very addresses the update
 * writes) is the fair lower bound, and upd/strd the ratio the target is
 * about.
 *
 * The kernel is called directly through the kernel table with a
 * hand-made oac_kernel_call (the runtime's per-node bookkeeping is not
 * what is measured); positions cycle over the whole capacity, and the
 * memcpy baseline writes the same positions, so both touch the same
 * cache lines.  The call carries a kept state (oac_kstate), as the main
 * graph's CacheUpdate nodes do in a session: the first call resolves the
 * node's fixed part, later ones are the copy plus its checks; unbound_ns
 * is the same kernel without one (every call resolves everything).
 *
 * Times are CPU time of this thread (CLOCK_THREAD_CPUTIME_ID: the
 * machine is shared, and time spent descheduled is not the kernel's), the
 * median of ROUNDS interleaved rounds per variant; the ratios are of
 * those medians, measured side by side.  A benchmark reports: the exit
 * status is 0 whether the target is met or not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/kernel_api.h"

enum { HEADS = 8, HEAD_SIZE = 64, NEW = 1, ROUNDS = 7 };

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int run_kernel(oac_kernel_fn fn, oac_kernel_call *k, oac_ctx *ctx, long reps,
                      int64_t *pos, int64_t cap, double *ns)
{
    double t0 = now_ns();
    for (long r = 0; r < reps; r++) {
        *pos = r % (cap - NEW + 1);
        if (fn(k) != OAC_OK) {
            fprintf(stderr, "kernel failed: %s\n", oac_errmsg(ctx));
            return 1;
        }
    }
    *ns = (now_ns() - t0) / (double)reps;
    return 0;
}

static volatile uint8_t sink;

int main(int argc, char **argv)
{
    long reps = argc > 1 ? atol(argv[1]) : 200000;
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *diags = oac_diags_new(ctx);
    oac_ralloc ra;
    oac_ralloc_init(&ra, ctx);

    Onnx__AttributeProto axis = ONNX__ATTRIBUTE_PROTO__INIT;
    axis.name = "axis";
    axis.has_i = 1;
    axis.i = -2;
    axis.has_type = 1;
    axis.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    Onnx__AttributeProto *attrs[1] = { &axis };
    Onnx__NodeProto node = ONNX__NODE_PROTO__INIT;
    node.op_type = "CacheUpdate";
    node.domain = "onnx_alias";
    node.name = "bench";
    node.n_attribute = 1;
    node.attribute = attrs;
    oac_kernel_fn fn = oac_kernel_lookup("onnx_alias", "CacheUpdate");

    printf("# CacheUpdate, FLOAT [1, %d, capacity, %d], %d new token(s), axis -2\n",
           HEADS, HEAD_SIZE, NEW);
    printf("# CPU time per update, median of %d interleaved rounds of %ld\n", ROUNDS, reps);
    printf("%9s %10s %11s %10s %11s %13s %8s %9s %10s %9s\n", "capacity", "update_ns",
           "unbound_ns", "memcpy_ns", "strided_ns", "full_copy_ns", "upd/mem", "upd/strd",
           "unb/strd", "full/upd");
    bool met = true;
    for (int64_t cap = 1024; cap <= 16384; cap *= 2) {
        size_t row = HEAD_SIZE * sizeof(float);
        size_t cbytes = (size_t)HEADS * (size_t)cap * row;
        size_t ubytes = (size_t)HEADS * NEW * row;
        uint8_t *cache = malloc(cbytes), *copy = malloc(cbytes), *upd = malloc(ubytes);
        /* Touch every page first: page faults are not the update's cost. */
        memset(cache, 0, cbytes);
        memset(upd, 7, ubytes);
        memset(copy, 1, cbytes);
        int64_t pos = 0;
        oac_rtval vc = { .kind = OAC_RTV_TENSOR, .storage = OAC_STORE_BOUND, .writable = true,
                         .t = { .elem_type = OAC_T_FLOAT, .rank = 4,
                                .dims = { 1, HEADS, cap, HEAD_SIZE }, .data = cache,
                                .bytes = cbytes } };
        oac_rtval vu = { .kind = OAC_RTV_TENSOR, .storage = OAC_STORE_CONST,
                         .t = { .elem_type = OAC_T_FLOAT, .rank = 4,
                                .dims = { 1, HEADS, NEW, HEAD_SIZE }, .data = upd,
                                .bytes = ubytes } };
        oac_rtval vp = { .kind = OAC_RTV_TENSOR, .storage = OAC_STORE_CONST,
                         .t = { .elem_type = OAC_T_INT64, .rank = 0, .data = &pos,
                                .bytes = sizeof pos } };
        oac_rtval *in[3] = { &vc, &vu, &vp };
        oac_rtval *out[1] = { &vc };   /* the MUST_ALIAS view: the cache itself */
        int alias[1] = { 0 };
        oac_kernel_call k = { .ctx = ctx, .node = &node, .node_name = "bench",
                              .in = in, .n_in = 3, .out = out, .n_out = 1,
                              .out_alias = alias, .alloc = &ra, .diags = diags };

        oac_kstate kept = { .ready = false };
        /* Interleaved rounds, so no variant is always the one that runs on
         * a cold cache; the medians are compared. */
        double t_upd[ROUNDS], t_unb[ROUNDS], t_mem[ROUNDS], t_str[ROUNDS];
        for (int round = 0; round < ROUNDS; round++) {
            k.state = &kept;
            if (run_kernel(fn, &k, ctx, reps, &pos, cap, &t_upd[round]))
                return 1;
            k.state = NULL;
            if (run_kernel(fn, &k, ctx, reps, &pos, cap, &t_unb[round]))
                return 1;

            /* (a) one memcpy of exactly the update's bytes, same positions. */
            double t0 = now_ns();
            for (long r = 0; r < reps; r++) {
                size_t p = (size_t)(r % (cap - NEW + 1));
                memcpy(cache + p * row, upd, ubytes);
                sink = cache[p * row];
            }
            t_mem[round] = (now_ns() - t0) / (double)reps;

            /* (a') the same bytes as the HEADS strided runs they really
             * are in the cache: the fair lower bound. */
            t0 = now_ns();
            for (long r = 0; r < reps; r++) {
                size_t p = (size_t)(r % (cap - NEW + 1));
                for (size_t h = 0; h < HEADS; h++)
                    memcpy(cache + (h * (size_t)cap + p) * row, upd + h * NEW * row, NEW * row);
                sink = cache[p * row];
            }
            t_str[round] = (now_ns() - t0) / (double)reps;
        }
        double m_upd = median(t_upd, ROUNDS), m_unb = median(t_unb, ROUNDS);
        double m_mem = median(t_mem, ROUNDS), m_str = median(t_str, ROUNDS);
        met = met && m_upd <= 1.5 * m_str;

        /* (b) a copy of the whole cache (what an out-of-place update costs). */
        long full_reps = reps / 2000 > 4 ? reps / 2000 : 4;
        double t0 = now_ns();
        for (long r = 0; r < full_reps; r++) {
            memcpy(copy, cache, cbytes);
            sink = copy[(size_t)r % cbytes];
        }
        double t_full = (now_ns() - t0) / (double)full_reps;

        printf("%9lld %10.1f %11.1f %10.1f %11.1f %13.0f %8.2f %9.2f %10.2f %9.0f\n",
               (long long)cap, m_upd, m_unb, m_mem, m_str, t_full, m_upd / m_mem,
               m_upd / m_str, m_unb / m_str, t_full / m_upd);
        if (ra.calls)
            printf("# unexpected: %llu allocations in CacheUpdate\n",
                   (unsigned long long)ra.calls);
        free(cache);
        free(copy);
        free(upd);
    }
    printf("# target upd/strd <= 1.5 at every capacity: %s\n", met ? "met" : "MISSED");
    oac_diags_free(diags);
    oac_ctx_free(ctx);
    return 0;
}

/* bench_decode.c: decode cost of a GroupQueryAttention decoder against
 * its cache capacity, annotated (in place) against stock (copied), side
 * by side in one run (issue 11 item 7, acceptance 4).
 *
 * Owns nothing of the library; run by hand from a build folder, never by
 * make check:
 *
 *     bench/bench_decode [-o FILE.svg] [-r REPEATS] [-s DECODE_STEPS]
 *
 * The model, built here with the builder: a FLOAT16 decoder as ONNX
 * Runtime GenAI's model builder exports it for a static cache,
 * Gather(embedding) then LAYERS x (MatMul q, k, v -> com.microsoft
 * GroupQueryAttention over past_key_values.L.key/value [1, KV_HEADS,
 * C, HEAD] with seqlens_k and total_sequence_length -> MatMul o ->
 * residual Add) -> MatMul to the vocabulary.  Two forms of it per
 * capacity C:
 *   annotated: the pasts READ_WRITE, output_alias 1<-3 and 2<-4 on each
 *              GroupQueryAttention, alias_of on each present: the caches
 *              are bound once and updated in place;
 *   stock:     the same graph without those fields: `run` feeds each
 *              present back as the next past by copy, and the kernel
 *              writes each present into a buffer of its own, as a runtime
 *              without the contract does.
 * `run` drives input_ids, seqlens_k and total_sequence_length itself
 * (contract 8): a prompt of one token, then one token a step.
 *
 * Measured, for C = 1K, 2K, 4K, 8K, 16K: the time of each decode step
 * (steps 2 .. 1 + DECODE_STEPS; step 1 binds and fills the caches),
 * taken between the runtime's step_done hooks (run/kernel_api.h), so it
 * includes the feed-back copy of a stock run; per run the median step,
 * and of REPEATS runs per form the best (both forms alternate, so no
 * form always runs on a cold machine).  alloc_bytes and copied_bytes per
 * token are the runtime's own figures (oac_step_stats) of those steps.
 * A table goes to standard output and one SVG (written directly, no
 * plotting tool) shows per-token time and copied bytes against C.
 * Acceptance 4: annotated per-token time at 16K within 1.5x of 1K; stock
 * growing with C; the last lines say whether this run met it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "half.h"
#include "oac_build.h"
#include "run/kernel_api.h"

enum {
    LAYERS = 2, HEADS = 4, KV_HEADS = 2, HEAD = 16, HIDDEN = HEADS * HEAD,
    KV_HIDDEN = KV_HEADS * HEAD, VOCAB = 256, N_CAP = 5, MAX_STEPS = 256
};
static const int64_t capacities[N_CAP] = { 1024, 2048, 4096, 8192, 16384 };

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- the model --------------------------------------------------------- */

static uint32_t lcg = 12345;

/* A FLOAT16 initializer of rows x cols, uniform in [-amp, amp). */
static void weight(oac_gb *g, const char *name, int rows, int cols, float amp)
{
    size_t n = (size_t)rows * (size_t)cols;
    uint16_t *w = malloc(n * sizeof *w);
    if (!w) {
        fprintf(stderr, "bench_decode: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        lcg = lcg * 1664525u + 1013904223u;
        w[i] = oac_f32_to_f16(amp * ((float)(lcg >> 8) / 8388608.0f - 1.0f));
    }
    char dims[64];
    snprintf(dims, sizeof dims, "%d,%d", rows, cols);
    oac_gb_init_raw(g, name, OAC_T_FLOAT16, dims, w, n * sizeof *w);
    free(w);
}

/* The decoder at capacity cap, annotated or stock, packed (free() it). */
static uint8_t *build(oac_ctx *ctx, int64_t cap, bool annotated, size_t *len)
{
    oac_mb *mb = oac_mb_new(ctx);
    oac_mb_opset(mb, "", 21);
    oac_mb_opset(mb, "com.microsoft", 1);
    oac_gb *g = oac_mb_graph(mb);
    const int32_t t = OAC_T_FLOAT16;
    char cdims[64], a[256], b[160], c[160];
    snprintf(cdims, sizeof cdims, "1,%d,%lld,%d", KV_HEADS, (long long)cap, HEAD);
    lcg = 12345;   /* both forms get the same weights */

    oac_gb_input(g, "input_ids", OAC_T_INT64, "1,sequence_length");
    oac_gb_input(g, "seqlens_k", OAC_T_INT32, "1");
    oac_gb_input(g, "total_sequence_length", OAC_T_INT32, "");
    weight(g, "embed", VOCAB, HIDDEN, 1.0f);
    oac_gb_node(g, "Gather", NULL, "embed_tokens", "embed,input_ids", "x0");
    const char *x = "x0";
    char xs[LAYERS + 1][16];
    for (int l = 0; l < LAYERS; l++) {
        static const char *proj[] = { "q", "k", "v", "o" };
        for (int i = 0; i < 4; i++) {
            snprintf(a, sizeof a, "l%d.%s", l, proj[i]);
            weight(g, a, HIDDEN,
                   i == 1 || i == 2 ? KV_HIDDEN : HIDDEN, 0.25f);
        }
        char pk[64], pv[64], ok[64], ov[64];
        snprintf(pk, sizeof pk, "past_key_values.%d.key", l);
        snprintf(pv, sizeof pv, "past_key_values.%d.value", l);
        snprintf(ok, sizeof ok, "present.%d.key", l);
        snprintf(ov, sizeof ov, "present.%d.value", l);
        Onnx__ValueInfoProto *vk = oac_gb_input(g, pk, t, cdims);
        Onnx__ValueInfoProto *vv = oac_gb_input(g, pv, t, cdims);
        if (annotated) {
            oac_vi_access(g, vk, 1);
            oac_vi_access(g, vv, 1);
        }
        for (int i = 0; i < 3; i++) {
            snprintf(a, sizeof a, "%s,l%d.%s", x, l, proj[i]);
            snprintf(b, sizeof b, "l%d.%s_out", l, proj[i]);
            snprintf(c, sizeof c, "l%d.%s_proj", l, proj[i]);
            oac_gb_node(g, "MatMul", NULL, c, a, b);
        }
        snprintf(a, sizeof a, "l%d.q_out,l%d.k_out,l%d.v_out,%s,%s,seqlens_k,"
                 "total_sequence_length", l, l, l, pk, pv);
        snprintf(b, sizeof b, "l%d.attn,%s,%s", l, ok, ov);
        snprintf(c, sizeof c, "GQA_%d", l);
        Onnx__NodeProto *n = oac_gb_node(g, "GroupQueryAttention", "com.microsoft", c, a, b);
        oac_node_attr_int(g, n, "num_heads", HEADS);
        oac_node_attr_int(g, n, "kv_num_heads", KV_HEADS);
        if (annotated) {
            oac_node_alias(g, n, 1, 3, 1);
            oac_node_alias(g, n, 2, 4, 1);
        }
        snprintf(a, sizeof a, "l%d.attn,l%d.o", l, l);
        snprintf(b, sizeof b, "l%d.o_out", l);
        snprintf(c, sizeof c, "l%d.o_proj", l);
        oac_gb_node(g, "MatMul", NULL, c, a, b);
        snprintf(xs[l + 1], sizeof xs[l + 1], "x%d", l + 1);
        snprintf(a, sizeof a, "%s,l%d.o_out", x, l);
        snprintf(c, sizeof c, "l%d.residual", l);
        oac_gb_node(g, "Add", NULL, c, a, xs[l + 1]);
        x = xs[l + 1];
        Onnx__ValueInfoProto *o1 = oac_gb_output(g, ok, t, cdims);
        Onnx__ValueInfoProto *o2 = oac_gb_output(g, ov, t, cdims);
        if (annotated) {
            oac_vi_alias_of(g, o1, pk);
            oac_vi_alias_of(g, o2, pv);
        }
    }
    weight(g, "lm_head", HIDDEN, VOCAB, 0.25f);
    snprintf(a, sizeof a, "%s,lm_head", x);
    oac_gb_node(g, "MatMul", NULL, "lm_head_proj", a, "logits");
    oac_gb_output(g, "logits", t, "1,sequence_length,256");
    uint8_t *buf = NULL;
    if (oac_mb_pack(mb, &buf, len) != OAC_OK) {
        fprintf(stderr, "bench_decode: cannot build the model: %s\n", oac_errmsg(ctx));
        exit(1);
    }
    oac_mb_free(mb);
    return buf;
}

/* ---- one run ------------------------------------------------------------ */

typedef struct timing {
    double t[MAX_STEPS + 2];       /* ns at each step_done */
    uint64_t alloc[MAX_STEPS + 2], copied[MAX_STEPS + 2];
    size_t n;
} timing;

static void step_done(void *arg, const oac_step_stats *st)
{
    timing *tm = arg;
    if (tm->n < MAX_STEPS + 2) {
        tm->t[tm->n] = now_ns();
        tm->alloc[tm->n] = st->alloc_bytes;
        tm->copied[tm->n] = st->copied_bytes;
        tm->n++;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct result {
    double ns;                     /* per token: best of the runs' medians */
    double alloc, copied;          /* per token, mean over the decode steps */
} result;

/* One run of 1 + decode steps; folds its median step time into res. */
static void run_once(oac_ctx *ctx, const oac_model *m, int decode, result *res)
{
    oac_diags *d = oac_diags_new(ctx);
    oac_execution *e = NULL;
    timing tm = { .n = 0 };
    oac_run_hooks hooks = { .step_done = step_done, .step_arg = &tm };
    oac_run_opts ro = { .steps = (uint64_t)decode + 1 };
    int rc = oac_run_with_hooks(ctx, &e, m, NULL, &ro, &hooks, d);
    if (rc != OAC_OK || !e || e->steps_completed != ro.steps ||
        oac_diags_count_severity(d, OAC_SEV_ERROR)) {
        fprintf(stderr, "bench_decode: the run failed (%d): %s\n", rc, oac_errmsg(ctx));
        for (size_t i = 0; i < oac_diags_count(d); i++)
            fprintf(stderr, "  %s\n", oac_diags_get(d, i)->message);
        exit(1);
    }
    double dt[MAX_STEPS];
    double alloc = 0, copied = 0;
    for (int s = 0; s < decode; s++) {
        dt[s] = tm.t[s + 1] - tm.t[s];
        alloc += (double)tm.alloc[s + 1];
        copied += (double)tm.copied[s + 1];
    }
    qsort(dt, (size_t)decode, sizeof dt[0], cmp_double);
    double med = decode % 2 ? dt[decode / 2] : (dt[decode / 2 - 1] + dt[decode / 2]) / 2;
    if (med < res->ns)
        res->ns = med;
    res->alloc = alloc / decode;
    res->copied = copied / decode;
    oac_execution_free(e);
    oac_diags_free(d);
}

/* ---- the picture --------------------------------------------------------- */

/* One panel: x = log2 capacity, two series, y from 0 to a round top. */
static void panel(FILE *f, double x0, double y0, double w, double h, const char *title,
                  const char *unit, const double *ann, const double *stock)
{
    double top = 0;
    for (int i = 0; i < N_CAP; i++) {
        top = ann[i] > top ? ann[i] : top;
        top = stock[i] > top ? stock[i] : top;
    }
    double step = pow(10, floor(log10(top > 0 ? top : 1)));
    while (top / step > 6)
        step *= 2;
    top = ceil((top > 0 ? top : 1) / step) * step;
    fprintf(f, "<text x='%.0f' y='%.0f' font-size='15' font-weight='bold'>%s</text>\n",
            x0, y0 - 14, title);
    for (double v = 0; v <= top + step / 2; v += step) {
        double y = y0 + h - v / top * h;
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n", x0, y,
                x0 + w, y);
        fprintf(f, "<text x='%.1f' y='%.1f' font-size='11' text-anchor='end'>%g</text>\n",
                x0 - 6, y + 4, v);
    }
    fprintf(f, "<text x='%.0f' y='%.0f' font-size='12' transform='rotate(-90 %.0f %.0f)' "
            "text-anchor='middle'>%s</text>\n", x0 - 48, y0 + h / 2, x0 - 48, y0 + h / 2, unit);
    for (int i = 0; i < N_CAP; i++) {
        double x = x0 + w * i / (N_CAP - 1);
        fprintf(f, "<text x='%.1f' y='%.1f' font-size='11' text-anchor='middle'>%lldK</text>\n",
                x, y0 + h + 16, (long long)(capacities[i] / 1024));
    }
    fprintf(f, "<text x='%.0f' y='%.0f' font-size='12' text-anchor='middle'>cache capacity "
            "(tokens)</text>\n", x0 + w / 2, y0 + h + 34);
    fprintf(f, "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='none' "
            "stroke='#444'/>\n", x0, y0, w, h);
    const double *series[2] = { stock, ann };
    const char *color[2] = { "#c0392b", "#2471a3" };
    for (int s = 0; s < 2; s++) {
        fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2.5' points='", color[s]);
        for (int i = 0; i < N_CAP; i++)
            fprintf(f, "%.1f,%.1f ", x0 + w * i / (N_CAP - 1), y0 + h - series[s][i] / top * h);
        fprintf(f, "'/>\n");
        for (int i = 0; i < N_CAP; i++)
            fprintf(f, "<circle cx='%.1f' cy='%.1f' r='4' fill='%s'/>\n",
                    x0 + w * i / (N_CAP - 1), y0 + h - series[s][i] / top * h, color[s]);
    }
}

static int write_svg(const char *path, const result *ann, const result *stock, int decode)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    double at[N_CAP], st[N_CAP], ac[N_CAP], sc[N_CAP];
    for (int i = 0; i < N_CAP; i++) {
        at[i] = ann[i].ns / 1e3;
        st[i] = stock[i].ns / 1e3;
        ac[i] = ann[i].copied / 1048576.0;
        sc[i] = stock[i].copied / 1048576.0;
    }
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='980' height='440' "
            "font-family='sans-serif'>\n<rect width='100%%' height='100%%' fill='white'/>\n");
    fprintf(f, "<text x='20' y='26' font-size='17' font-weight='bold'>onnx-alias-check run: "
            "%d-layer FLOAT16 GroupQueryAttention decoder, one token per step</text>\n", LAYERS);
    panel(f, 90, 96, 360, 260, "time per token", "microseconds (median step, best run)", at,
          st);
    panel(f, 580, 96, 360, 260, "cache bytes copied per token", "MiB", ac, sc);
    fprintf(f, "<rect x='90' y='46' width='16' height='4' fill='#c0392b'/><text x='112' "
            "y='52' font-size='12'>stock (no annotations): each present copied, fed back "
            "by copy</text>\n");
    fprintf(f, "<rect x='580' y='46' width='16' height='4' fill='#2471a3'/><text x='602' "
            "y='52' font-size='12'>annotated (READ_WRITE, output_alias, alias_of): in "
            "place</text>\n");
    fprintf(f, "<text x='20' y='432' font-size='11' fill='#555'>bench/bench_decode: steps 2.."
            "%d of each run; %d heads (%d KV) of %d, hidden %d, vocabulary %d</text>\n",
            decode + 1, HEADS, KV_HEADS, HEAD, HIDDEN, VOCAB);
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- main ---------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *svg = "bench_decode.svg";
    int repeats = 5, decode = 16;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            svg = argv[++i];
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            decode = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-o FILE.svg] [-r REPEATS] [-s DECODE_STEPS]\n",
                    argv[0]);
            return 2;
        }
    }
    if (repeats < 1 || decode < 1 || decode > MAX_STEPS) {
        fprintf(stderr, "bench_decode: -r at least 1, -s from 1 to %d\n", MAX_STEPS);
        return 2;
    }
    oac_ctx *ctx = oac_ctx_new();
    oac_model *models[N_CAP][2];
    uint8_t *bufs[N_CAP][2];
    for (int i = 0; i < N_CAP; i++)
        for (int form = 0; form < 2; form++) {
            size_t len = 0;
            bufs[i][form] = build(ctx, capacities[i], form == 0, &len);
            oac_diags *d = oac_diags_new(ctx);
            if (oac_model_load_buffer(ctx, &models[i][form], bufs[i][form], len,
                                      form == 0 ? "annotated" : "stock", NULL, d) != OAC_OK) {
                fprintf(stderr, "bench_decode: cannot load the model: %s\n", oac_errmsg(ctx));
                return 1;
            }
            oac_diags_free(d);
        }
    result ann[N_CAP], stock[N_CAP];
    for (int i = 0; i < N_CAP; i++) {
        ann[i] = (result){ .ns = INFINITY };
        stock[i] = (result){ .ns = INFINITY };
    }
    /* Both forms alternate at every capacity, repeat after repeat. */
    for (int r = 0; r < repeats; r++)
        for (int i = 0; i < N_CAP; i++) {
            run_once(ctx, models[i][0], decode, &ann[i]);
            run_once(ctx, models[i][1], decode, &stock[i]);
        }

    printf("# %d-layer FLOAT16 GroupQueryAttention decoder (%d heads, %d KV heads of %d), "
           "one token per step;\n# per token: median of steps 2..%d, best of %d runs\n",
           LAYERS, HEADS, KV_HEADS, HEAD, decode + 1, repeats);
    printf("%9s | %12s %14s %14s | %12s %14s %14s | %7s\n", "capacity", "annot_us",
           "annot_alloc_B", "annot_copied_B", "stock_us", "stock_alloc_B", "stock_copied_B",
           "stock/a");
    for (int i = 0; i < N_CAP; i++)
        printf("%9lld | %12.1f %14.0f %14.0f | %12.1f %14.0f %14.0f | %7.1f\n",
               (long long)capacities[i], ann[i].ns / 1e3, ann[i].alloc, ann[i].copied,
               stock[i].ns / 1e3, stock[i].alloc, stock[i].copied, stock[i].ns / ann[i].ns);
    double flat = ann[N_CAP - 1].ns / ann[0].ns;
    bool grows = true;
    for (int i = 1; i < N_CAP; i++)
        grows = grows && stock[i].ns > stock[i - 1].ns && stock[i].copied > stock[i - 1].copied;
    printf("# annotated 16K / 1K: %.2fx (target <= 1.5x: %s); stock grows with capacity: %s\n",
           flat, flat <= 1.5 ? "met" : "NOT met", grows ? "yes" : "NO");
    int rc = 0;
    if (write_svg(svg, ann, stock, decode)) {
        fprintf(stderr, "bench_decode: cannot write %s\n", svg);
        rc = 1;
    } else {
        printf("# wrote %s\n", svg);
    }
    for (int i = 0; i < N_CAP; i++)
        for (int form = 0; form < 2; form++) {
            oac_model_free(models[i][form]);
            free(bufs[i][form]);
        }
    oac_ctx_free(ctx);
    return rc;
}

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
 * Measured, for C = 1K, 2K, 4K, 8K, 16K: the CPU time of each decode
 * step (steps 2 .. 1 + DECODE_STEPS; step 1 binds and fills the caches),
 * taken between the runtime's step_done hooks (run/kernel_api.h), so it
 * includes the feed-back copy of a stock run; per run the median step,
 * and of REPEATS (>= 5, default 9) runs per form the median (every form
 * alternates with the others at every capacity, so none always runs on
 * a cold machine).  9, not 5: on a shared 2-core machine the mid-size
 * decoder's time per token moved by up to 3x from run to run (its
 * weights stream from memory every token), and medians of 5 put its
 * 16K / 1K ratio at 1.33, 1.04, 0.71 and 1.90 in four runs of the same
 * binary; of 11 runs, 0.98.  alloc_bytes and copied_bytes per token are
 * the runtime's own figures (oac_step_stats) of those steps.
 *
 * A second, mid-size decoder (mid_cfg: hidden 512, 8 heads, 4 KV heads of
 * 64, 4 layers, vocabulary 1024, FLOAT16, annotated) runs in the same
 * rounds, and, when onnxruntime-node is there (--ort DIR, or ORT_NODE_PATH:
 * the node_modules folder of `npm install --ignore-scripts
 * onnxruntime-node@1.30.0`), so does ONNX Runtime on the same file
 * (bench/bench_decode_ort.js: one thread, present bound to past, the
 * median CPU time of its decode steps): a column each, and the ratio.
 *
 * A table goes to standard output and one SVG (written directly, no
 * plotting tool) shows per-token time and copied bytes against C for the
 * small decoder, and per-token time of both runtimes and their ratio for
 * the mid-size one.  The last lines say whether this run met the targets:
 * small annotated 16K within 1.5x of 1K, stock growing with C; mid-size
 * within 2x of ONNX Runtime at 1K and 16K within 1.2x of 1K.  A benchmark
 * reports: the exit status is 0 whether a target is met or not.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "half.h"
#include "oac_build.h"
#include "run/kernel_api.h"

enum { N_CAP = 5, MAX_STEPS = 256 };

/* A decoder's shape. */
typedef struct dcfg {
    const char *what;
    int layers, heads, kv_heads, head, vocab;
} dcfg;

/* The small decoder of the annotated / stock comparison, and the
 * mid-size one compared with ONNX Runtime (hidden 512). */
static const dcfg small_cfg = { "small", 2, 4, 2, 16, 256 };
static const dcfg mid_cfg = { "mid-size", 4, 8, 4, 64, 1024 };
static const int64_t capacities[N_CAP] = { 1024, 2048, 4096, 8192, 16384 };

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);   /* CPU time: a shared machine */
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

/* The decoder of shape cf at capacity cap, annotated or stock, packed
 * (free() it). */
static uint8_t *build(oac_ctx *ctx, const dcfg *cf, int64_t cap, bool annotated, size_t *len)
{
    const int LAYERS = cf->layers, HEADS = cf->heads, KV_HEADS = cf->kv_heads;
    const int HIDDEN = cf->heads * cf->head, KV_HIDDEN = cf->kv_heads * cf->head;
    oac_mb *mb = oac_mb_new(ctx);
    oac_mb_opset(mb, "", 21);
    oac_mb_opset(mb, "com.microsoft", 1);
    oac_gb *g = oac_mb_graph(mb);
    const int32_t t = OAC_T_FLOAT16;
    char cdims[64], a[256], b[160], c[160];
    snprintf(cdims, sizeof cdims, "1,%d,%lld,%d", KV_HEADS, (long long)cap, cf->head);
    lcg = 12345;   /* both forms get the same weights */

    oac_gb_input(g, "input_ids", OAC_T_INT64, "1,sequence_length");
    oac_gb_input(g, "seqlens_k", OAC_T_INT32, "1");
    oac_gb_input(g, "total_sequence_length", OAC_T_INT32, "");
    weight(g, "embed", cf->vocab, HIDDEN, 1.0f);
    oac_gb_node(g, "Gather", NULL, "embed_tokens", "embed,input_ids", "x0");
    const char *x = "x0";
    char xs[2][16];
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
        char *xn = xs[l % 2];
        snprintf(xn, sizeof xs[0], "x%d", l + 1);
        snprintf(a, sizeof a, "%s,l%d.o_out", x, l);
        snprintf(c, sizeof c, "l%d.residual", l);
        oac_gb_node(g, "Add", NULL, c, a, xn);
        x = xn;
        Onnx__ValueInfoProto *o1 = oac_gb_output(g, ok, t, cdims);
        Onnx__ValueInfoProto *o2 = oac_gb_output(g, ov, t, cdims);
        if (annotated) {
            oac_vi_alias_of(g, o1, pk);
            oac_vi_alias_of(g, o2, pv);
        }
    }
    weight(g, "lm_head", HIDDEN, cf->vocab, 0.25f);
    snprintf(a, sizeof a, "%s,lm_head", x);
    oac_gb_node(g, "MatMul", NULL, "lm_head_proj", a, "logits");
    snprintf(b, sizeof b, "1,sequence_length,%d", cf->vocab);
    oac_gb_output(g, "logits", t, b);
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

enum { MAX_REPEATS = 64 };

typedef struct result {
    double ns;                     /* per token: median of the runs' medians */
    double alloc, copied;          /* per token, mean over the decode steps */
    double runs[MAX_REPEATS];      /* each run's median step */
    int n;
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
    if (res->n < MAX_REPEATS)
        res->runs[res->n++] = med;
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

/* A series of per-token times in microseconds. */
static void us_of(const result *r, double *us)
{
    for (int i = 0; i < N_CAP; i++)
        us[i] = r[i].ns / 1e3;
}

static void legend(FILE *f, double x, double y, const char *color, const char *text)
{
    fprintf(f, "<rect x='%.0f' y='%.0f' width='16' height='4' fill='%s'/><text x='%.0f' "
            "y='%.0f' font-size='12'>%s</text>\n", x, y, color, x + 22, y + 6, text);
}

/* Top row: the small decoder, annotated against stock (time, copied
 * bytes); bottom row: the mid-size decoder against ONNX Runtime (when it
 * ran) and its ratio. */
static int write_svg(const char *path, const result *ann, const result *stock,
                     const result *mid, const result *ort, bool have_ort, int decode)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    double at[N_CAP], st[N_CAP], ac[N_CAP], sc[N_CAP], mt[N_CAP], ot[N_CAP], ratio[N_CAP];
    double one[N_CAP];
    us_of(ann, at);
    us_of(stock, st);
    us_of(mid, mt);
    us_of(ort, ot);
    for (int i = 0; i < N_CAP; i++) {
        ac[i] = ann[i].copied / 1048576.0;
        sc[i] = stock[i].copied / 1048576.0;
        ratio[i] = have_ort && ort[i].ns > 0 ? mid[i].ns / ort[i].ns : 0;
        one[i] = have_ort ? 1.0 : 0;
        if (!have_ort)
            ot[i] = 0;
    }
    const dcfg *c = &small_cfg, *m = &mid_cfg;
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='980' height='860' "
            "font-family='sans-serif'>\n<rect width='100%%' height='100%%' fill='white'/>\n");
    fprintf(f, "<text x='20' y='26' font-size='17' font-weight='bold'>onnx-alias-check run: "
            "%d-layer FLOAT16 GroupQueryAttention decoder, one token per step</text>\n",
            c->layers);
    panel(f, 90, 96, 360, 260, "time per token", "microseconds (CPU, median)", at, st);
    panel(f, 580, 96, 360, 260, "cache bytes copied per token", "MiB", ac, sc);
    legend(f, 90, 46, "#c0392b", "stock (no annotations): each present copied, fed back by copy");
    legend(f, 580, 46, "#2471a3", "annotated (READ_WRITE, output_alias, alias_of): in place");
    fprintf(f, "<text x='20' y='466' font-size='17' font-weight='bold'>mid-size: %d layers, "
            "hidden %d, FLOAT16, annotated, against ONNX Runtime (present bound to past, one "
            "thread)%s</text>\n", m->layers, m->heads * m->head,
            have_ort ? "" : ": ONNX Runtime not run");
    panel(f, 90, 536, 360, 260, "time per token", "microseconds (CPU, median)", mt, ot);
    panel(f, 580, 536, 360, 260, "onnx-alias-check / ONNX Runtime", "ratio", ratio, one);
    legend(f, 90, 486, "#c0392b", "ONNX Runtime 1.30 (onnxruntime-node), CPU");
    legend(f, 580, 486, "#2471a3", "onnx-alias-check run, annotated");
    fprintf(f, "<text x='20' y='852' font-size='11' fill='#555'>bench/bench_decode: steps 2.."
            "%d of each run; small: %d heads (%d KV) of %d, vocabulary %d; mid-size: %d heads "
            "(%d KV) of %d, vocabulary %d</text>\n", decode + 1, c->heads, c->kv_heads,
            c->head, c->vocab, m->heads, m->kv_heads, m->head, m->vocab);
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- ONNX Runtime ------------------------------------------------------ */

/* Per-token CPU ns of ONNX Runtime on the model file at capacity cap
 * (bench/bench_decode_ort.js through node); < 0 when it did not run. */
static double ort_once(const char *js, const char *modules, const char *file, int64_t cap,
                       int decode)
{
    char cmd[4096];
    const dcfg *m = &mid_cfg;
    snprintf(cmd, sizeof cmd, "NODE_PATH='%s' node '%s' '%s' %lld %d %d %d %d %d 2>&1", modules,
             js, file, (long long)cap, decode, m->layers, m->kv_heads, m->head, m->vocab);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[512] = "";
    double ns = -1;
    if (fgets(line, sizeof line, p) && sscanf(line, "%lf", &ns) != 1) {
        fprintf(stderr, "bench_decode: ONNX Runtime: %s", line);
        ns = -1;
    }
    while (fgets(cmd, sizeof cmd, p))
        ;
    if (pclose(p) != 0)
        ns = -1;
    return ns;
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- main ---------------------------------------------------------------- */

/* The median of a result's runs into ns. */
static void settle(result *r)
{
    double v[MAX_REPEATS];
    memcpy(v, r->runs, sizeof v);
    r->ns = r->n ? median_of(v, r->n) : 0;
}

static void load(oac_ctx *ctx, const dcfg *cf, int64_t cap, bool annotated, uint8_t **buf,
                 size_t *len, oac_model **m)
{
    *buf = build(ctx, cf, cap, annotated, len);
    oac_diags *d = oac_diags_new(ctx);
    if (oac_model_load_buffer(ctx, m, *buf, *len, annotated ? "annotated" : "stock", NULL,
                              d) != OAC_OK) {
        fprintf(stderr, "bench_decode: cannot load the model: %s\n", oac_errmsg(ctx));
        exit(1);
    }
    oac_diags_free(d);
}

int main(int argc, char **argv)
{
    const char *svg = "bench_decode.svg", *modules = getenv("ORT_NODE_PATH");
    const char *js = OAC_BENCH_DIR "/bench_decode_ort.js";
    int repeats = 9, decode = 16;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            svg = argv[++i];
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            decode = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ort") && i + 1 < argc)
            modules = argv[++i];
        else {
            fprintf(stderr, "usage: %s [-o FILE.svg] [-r REPEATS] [-s DECODE_STEPS] "
                    "[--ort NODE_MODULES]\n", argv[0]);
            return 2;
        }
    }
    if (repeats < 5 || repeats > MAX_REPEATS || decode < 1 || decode > MAX_STEPS) {
        fprintf(stderr, "bench_decode: -r from 5 to %d, -s from 1 to %d\n", MAX_REPEATS,
                MAX_STEPS);
        return 2;
    }
    oac_ctx *ctx = oac_ctx_new();
    oac_model *models[N_CAP][3];
    uint8_t *bufs[N_CAP][3];
    size_t lens[N_CAP][3];
    for (int i = 0; i < N_CAP; i++) {
        load(ctx, &small_cfg, capacities[i], true, &bufs[i][0], &lens[i][0], &models[i][0]);
        load(ctx, &small_cfg, capacities[i], false, &bufs[i][1], &lens[i][1], &models[i][1]);
        load(ctx, &mid_cfg, capacities[i], true, &bufs[i][2], &lens[i][2], &models[i][2]);
    }
    /* ONNX Runtime runs the mid-size files when node and onnxruntime-node
     * are there (ORT_NODE_PATH or --ort: the node_modules folder). */
    char tmpl[] = "/tmp/bench_decode.XXXXXX", files[N_CAP][64];
    bool have_ort = modules && *modules && mkdtemp(tmpl), wrote = have_ort;
    for (int i = 0; have_ort && i < N_CAP; i++) {
        snprintf(files[i], sizeof files[i], "%s/mid_%d.onnx", tmpl, i);
        FILE *f = fopen(files[i], "wb");
        have_ort = f && fwrite(bufs[i][2], 1, lens[i][2], f) == lens[i][2];
        if (f)
            have_ort = !fclose(f) && have_ort;
    }
    if (have_ort && ort_once(js, modules, files[0], capacities[0], 1) < 0) {
        fprintf(stderr, "bench_decode: ONNX Runtime did not run (%s, NODE_PATH %s); "
                "its column is left out\n", js, modules);
        have_ort = false;
    }
    result ann[N_CAP], stock[N_CAP], mid[N_CAP], ort[N_CAP];
    for (int i = 0; i < N_CAP; i++)
        ann[i] = stock[i] = mid[i] = ort[i] = (result){ .n = 0 };
    /* Every form alternates at every capacity, repeat after repeat. */
    for (int r = 0; r < repeats; r++)
        for (int i = 0; i < N_CAP; i++) {
            run_once(ctx, models[i][0], decode, &ann[i]);
            run_once(ctx, models[i][1], decode, &stock[i]);
            run_once(ctx, models[i][2], decode, &mid[i]);
            double ns = have_ort ? ort_once(js, modules, files[i], capacities[i], decode) : -1;
            if (ns >= 0)
                ort[i].runs[ort[i].n++] = ns;
        }
    for (int i = 0; i < N_CAP; i++) {
        settle(&ann[i]);
        settle(&stock[i]);
        settle(&mid[i]);
        settle(&ort[i]);
        have_ort = have_ort && ort[i].n == repeats;
    }

    const dcfg *c = &small_cfg, *m = &mid_cfg;
    printf("# CPU time per token: median over %d runs of each run's median of steps 2..%d; "
           "forms interleaved\n", repeats, decode + 1);
    printf("# small: %d-layer FLOAT16 GroupQueryAttention decoder (%d heads, %d KV heads of "
           "%d), annotated against stock\n", c->layers, c->heads, c->kv_heads, c->head);
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
           flat, flat <= 1.5 ? "met" : "MISSED", grows ? "yes" : "NO");
    printf("# mid-size: %d layers, hidden %d (%d heads, %d KV heads of %d), vocabulary %d, "
           "FLOAT16, annotated; ONNX Runtime: onnxruntime-node, one thread, present bound "
           "to past\n", m->layers, m->heads * m->head, m->heads, m->kv_heads, m->head,
           m->vocab);
    printf("%9s | %12s %14s | %12s | %7s\n", "capacity", "oac_us", "oac_copied_B", "ort_us",
           "oac/ort");
    for (int i = 0; i < N_CAP; i++) {
        if (have_ort)
            printf("%9lld | %12.1f %14.0f | %12.1f | %7.2f\n", (long long)capacities[i],
                   mid[i].ns / 1e3, mid[i].copied, ort[i].ns / 1e3, mid[i].ns / ort[i].ns);
        else
            printf("%9lld | %12.1f %14.0f | %12s | %7s\n", (long long)capacities[i],
                   mid[i].ns / 1e3, mid[i].copied, "-", "-");
    }
    double mflat = mid[N_CAP - 1].ns / mid[0].ns;
    printf("# mid-size 16K / 1K: %.2fx (target <= 1.2x: %s)\n", mflat,
           mflat <= 1.2 ? "met" : "MISSED");
    if (have_ort) {
        double rat = mid[0].ns / ort[0].ns;
        printf("# mid-size at 1K: %.2fx ONNX Runtime (target <= 2x: %s)\n", rat,
               rat <= 2.0 ? "met" : "MISSED");
    } else {
        printf("# ONNX Runtime not run (give --ort DIR/node_modules or ORT_NODE_PATH after "
               "`npm install --ignore-scripts onnxruntime-node@1.30.0`)\n");
    }
    if (write_svg(svg, ann, stock, mid, ort, have_ort, decode))
        fprintf(stderr, "bench_decode: cannot write %s\n", svg);
    else
        printf("# wrote %s\n", svg);
    for (int i = 0; i < N_CAP; i++)
        for (int form = 0; form < 3; form++) {
            oac_model_free(models[i][form]);
            free(bufs[i][form]);
            if (form == 2 && wrote)
                remove(files[i]);
        }
    if (wrote)
        rmdir(tmpl);
    oac_ctx_free(ctx);
    return 0;   /* a benchmark reports; a missed target is not a failure */
}

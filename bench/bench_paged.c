/* bench_paged.c: the memory a heterogeneous paged cache saves and the
 * accuracy it costs (contract section 11), side by side in one run.
 *
 * Owns nothing of the library; run by hand from a build folder, never by
 * make check:
 *
 *     bench/bench_paged [-o DIR] [-t TOKENS]
 *
 * Runs examples/paged_decoder (built here from the example table) for
 * TOKENS tokens (default 512) under three run --page-policy policies,
 *   fp16:       0:FP16_PAGE (every page IEEE half),
 *   fp16-fp8-int4: 0:FP16_PAGE,2:FP8_PAGE,8:INT4_PAGE,
 *   +int2:      the same and 16:INT2_PAGE,
 * and its dense twin examples/paged_decoder_dense once, with the
 * runtime's step_values hook (run/kernel_api.h).  Per step: the cache
 * bytes (both layers' pages; the dense twin's two FLOAT16 caches) and
 * the largest |logit - dense logit| relative to the dense step's largest
 * |logit|.  A table goes to standard output and DIR/bench_paged.md, an SVG
 * (written directly) to DIR/bench_paged.svg: cache bytes per token and
 * the error per step, one line per policy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oac_build.h"
#include "run/kernel_api.h"
#include "../examples/models.h"

enum { V = OAC_PAGED_VOCAB, MAX_TOKENS = OAC_PAGED_MAX_LEN, N_POL = 3 };

typedef struct trace {
    float (*logits)[V];
    double *bytes;                 /* per step: cache bytes, both layers */
    uint64_t steps;
} trace;

static void on_values(void *arg, uint64_t step, const oac_dump_value *v, size_t n)
{
    trace *t = arg;
    double b = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(v[i].name, "logits") && v[i].value->kind == OAC_RTV_TENSOR &&
            v[i].value->t.bytes == sizeof t->logits[0])
            memcpy(t->logits[step - 1], v[i].value->t.data, sizeof t->logits[0]);
        else if (!strncmp(v[i].name, "cache_", 6) && v[i].value->kind == OAC_RTV_PAGED)
            for (size_t k = 0; k < v[i].value->p.n_pages; k++)
                b += (double)v[i].value->p.pages[k].bytes;
        else if (!strncmp(v[i].name, "cache_", 6) && v[i].value->kind == OAC_RTV_TENSOR)
            b += (double)v[i].value->t.bytes;
    }
    t->bytes[step - 1] = b;
    t->steps = step;
}

static int run(oac_ctx *ctx, bool paged, const oac_page_rule *pol, size_t n_pol,
               uint64_t tokens, trace *t)
{
    const oac_example *ex = oac_example_find(paged ? "paged_decoder" : "paged_decoder_dense");
    uint8_t *buf = NULL;
    size_t len = 0;
    oac_model *m = NULL;
    oac_execution *e = NULL;
    oac_diags *d = oac_diags_new(ctx);
    int rc = ex && d ? oac_example_pack(ctx, ex, &buf, &len) : OAC_ENOMEM;
    if (!rc)
        rc = oac_model_load_buffer(ctx, &m, buf, len, ex->name, NULL, d);
    oac_run_opts ro = { .steps = tokens, .page_policy = pol, .n_page_policy = n_pol };
    oac_run_hooks h = { .step_values = on_values, .values_arg = t };
    if (!rc)
        rc = oac_run_with_hooks(ctx, &e, m, NULL, &ro, &h, d);
    if (rc)
        fprintf(stderr, "bench_paged: %s: %s\n", ex ? ex->name : "?", oac_errmsg(ctx));
    oac_execution_free(e);
    oac_model_free(m);
    oac_diags_free(d);
    free(buf);
    return rc ? rc : t->steps == tokens ? 0 : OAC_ERUNTIME;
}

static const char *names[N_POL] = { "fp16", "fp16-fp8-int4", "fp16-fp8-int4-int2" };
static const char *specs[N_POL] = { "0:FP16_PAGE", "0:FP16_PAGE,2:FP8_PAGE,8:INT4_PAGE",
                                    "0:FP16_PAGE,2:FP8_PAGE,8:INT4_PAGE,16:INT2_PAGE" };
static const oac_page_rule pol0[] = { { 0, "FP16_PAGE" } };
static const oac_page_rule pol1[] = { { 0, "FP16_PAGE" }, { 2, "FP8_PAGE" }, { 8, "INT4_PAGE" } };
static const oac_page_rule pol2[] = { { 0, "FP16_PAGE" }, { 2, "FP8_PAGE" }, { 8, "INT4_PAGE" },
                                      { 16, "INT2_PAGE" } };
static const oac_page_rule *pols[N_POL] = { pol0, pol1, pol2 };
static const size_t n_pols[N_POL] = { 1, 3, 4 };
static const char *colors[N_POL + 1] = { "#1b9e77", "#d95f02", "#7570b3", "#666666" };

/* err[s]: the step's largest error relative to the dense step's scale. */
static void errors(const trace *p, const trace *dn, double *err)
{
    for (uint64_t s = 0; s < dn->steps; s++) {
        double scale = 0, e = 0;
        for (int i = 0; i < V; i++) {
            scale = fmax(scale, fabs(dn->logits[s][i]));
            e = fmax(e, fabs((double)p->logits[s][i] - dn->logits[s][i]));
        }
        err[s] = scale > 0 ? e / scale : e;
    }
}

/* One polyline of y[0..n) over x = 1..n into the box (x0, y0, w, h). */
static void poly(FILE *f, const double *y, uint64_t n, double ymax, bool logy,
                 double ymin, int x0, int y0, int w, int h, const char *color)
{
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
    for (uint64_t i = 0; i < n; i++) {
        double v = y[i];
        double fy = logy ? (log10(fmax(v, ymin)) - log10(ymin)) / (log10(ymax) - log10(ymin))
                         : v / ymax;
        fprintf(f, "%.1f,%.1f ", x0 + (double)w * (double)i / (double)(n > 1 ? n - 1 : 1),
                y0 + h - (double)h * fmin(fmax(fy, 0), 1));
    }
    fprintf(f, "\"/>\n");
}

static void svg(const char *path, trace *t, trace *dn, double err[][MAX_TOKENS],
                uint64_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_paged: cannot write %s\n", path);
        return;
    }
    double bmax = 0, bmin = INFINITY;
    static double per_tok[N_POL + 1][MAX_TOKENS];
    for (int p = 0; p <= N_POL; p++) {
        const trace *x = p < N_POL ? &t[p] : dn;
        for (uint64_t s = 0; s < n; s++) {
            per_tok[p][s] = x->bytes[s] / (double)(s + 1);
            bmax = fmax(bmax, per_tok[p][s]);
            if (per_tok[p][s] > 0)
                bmin = fmin(bmin, per_tok[p][s]);
        }
    }
    if (!(bmin < bmax))
        bmin = bmax / 10;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"420\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"900\" height=\"420\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"60\" y=\"24\">cache bytes per token (log, %.0f .. %.0f)</text>\n",
            bmin, bmax);
    fprintf(f, "<text x=\"500\" y=\"24\">largest logit error per step / scale "
               "(log, 1e-7 .. 1)</text>\n");
    fprintf(f, "<rect x=\"60\" y=\"40\" width=\"360\" height=\"300\" fill=\"none\" "
               "stroke=\"black\"/>\n<rect x=\"500\" y=\"40\" width=\"360\" height=\"300\" "
               "fill=\"none\" stroke=\"black\"/>\n");
    for (int p = 0; p <= N_POL; p++)
        poly(f, per_tok[p], n, bmax, true, bmin, 60, 40, 360, 300, colors[p]);
    for (int p = 0; p < N_POL; p++)
        poly(f, err[p], n, 1.0, true, 1e-7, 500, 40, 360, 300, colors[p]);
    fprintf(f, "<text x=\"60\" y=\"360\">tokens 1 .. %llu</text>\n", (unsigned long long)n);
    for (int p = 0; p <= N_POL; p++)
        fprintf(f, "<text x=\"%d\" y=\"400\" fill=\"%s\">%s</text>\n", 60 + 210 * p,
                colors[p], p < N_POL ? names[p] : "dense FLOAT16 twin");
    fprintf(f, "</svg>\n");
    fclose(f);
}

static void table(FILE *f, trace *t, trace *dn, double err[][MAX_TOKENS], uint64_t n)
{
    fprintf(f, "| policy (--page-policy) | cache bytes at %llu tokens | bytes per token "
               "| vs dense | largest error per step (of scale) | mean error |\n"
               "|---|---|---|---|---|---|\n", (unsigned long long)n);
    for (int p = 0; p < N_POL; p++) {
        double w = 0, mean = 0;
        for (uint64_t s = 0; s < n; s++) {
            w = fmax(w, err[p][s]);
            mean += err[p][s] / (double)n;
        }
        double b = t[p].bytes[n - 1];
        fprintf(f, "| %s (`%s`) | %.0f | %.1f | %.3f | %.3g | %.3g |\n", names[p], specs[p],
                b, b / (double)n, b / dn->bytes[n - 1], w, mean);
    }
    fprintf(f, "| dense FLOAT16 twin (capacity %d) | %.0f | %.1f | 1 | 0 | 0 |\n",
            OAC_PAGED_MAX_LEN, dn->bytes[n - 1], dn->bytes[n - 1] / (double)n);
}

int main(int argc, char **argv)
{
    const char *dir = ".";
    uint64_t tokens = MAX_TOKENS;
    int opt;
    while ((opt = getopt(argc, argv, "o:t:")) != -1) {
        if (opt == 'o')
            dir = optarg;
        else if (opt == 't' && atoi(optarg) >= 1 && atoi(optarg) <= MAX_TOKENS)
            tokens = (uint64_t)atoi(optarg);
        else {
            fprintf(stderr, "usage: bench_paged [-o DIR] [-t TOKENS (1..%d)]\n", MAX_TOKENS);
            return 2;
        }
    }
    oac_ctx *ctx = oac_ctx_new();
    static trace t[N_POL + 1];
    static double err[N_POL][MAX_TOKENS];
    int rc = ctx ? 0 : 1;
    for (int p = 0; p <= N_POL && !rc; p++) {
        t[p].logits = calloc(MAX_TOKENS, sizeof *t[p].logits);
        t[p].bytes = calloc(MAX_TOKENS, sizeof *t[p].bytes);
        if (!t[p].logits || !t[p].bytes)
            rc = 1;
        else
            rc = p < N_POL ? run(ctx, true, pols[p], n_pols[p], tokens, &t[p])
                           : run(ctx, false, NULL, 0, tokens, &t[p]);
    }
    if (!rc) {
        for (int p = 0; p < N_POL; p++)
            errors(&t[p], &t[N_POL], err[p]);
        table(stdout, t, &t[N_POL], err, tokens);
        char path[4096];
        snprintf(path, sizeof path, "%s/bench_paged.md", dir);
        FILE *f = fopen(path, "w");
        if (f) {
            table(f, t, &t[N_POL], err, tokens);
            fclose(f);
        }
        snprintf(path, sizeof path, "%s/bench_paged.svg", dir);
        svg(path, t, &t[N_POL], err, tokens);
        printf("wrote %s/bench_paged.md and %s/bench_paged.svg\n", dir, dir);
    }
    for (int p = 0; p <= N_POL; p++) {
        free(t[p].logits);
        free(t[p].bytes);
    }
    oac_ctx_free(ctx);
    return rc ? 1 : 0;
}

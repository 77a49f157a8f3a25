/* fuzz_annotate.c: libFuzzer entry point over annotate (model bytes and
 * the genai_config.json bytes beside it).
 *
 * Build and run (from a build folder; needs clang with libFuzzer):
 *
 *     make fuzz                          # builds fuzz/fuzz_annotate too
 *     ./fuzz/fuzz_annotate -max_total_time=600 fuzz/corpus-annotate fuzz/seed-annotate
 *
 * Not part of `make check`.  An input is
 *
 *     FLAGS CONFIG "\0MODEL\0" MODEL      or      FLAGS MODEL
 *
 * FLAGS (one byte): bit 0 the config is given (--config) rather than
 * found beside the model, bit 1 --ignore-config, bit 2 --partial, bit 3
 * --capacity 16 (else the symbol).  Without the separator there is no
 * config at all.  The config is written to a private temporary folder
 * as fuzz.genai_config.json beside the model's name fuzz.onnx (the
 * model itself is handed over in memory: oac_annotate_json).
 *
 * Properties (abort() otherwise): oac_annotate_json returns OAC_OK or
 * OAC_ENOMEM (never a usage error for these options), always with a
 * report that is JSON whose "status" is "ok" or "error"; a model it
 * hands back loads again and checks with no error diagnostic (what the
 * check on the written model promised).  Any crash, sanitizer report or
 * leak is a bug.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "oac_int.h"

static char dir[64];
static char cfg_path[128];
static char model_name[128];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof dir, "/tmp/oac-fuzz-annotate-XXXXXX");
    if (!mkdtemp(dir))
        abort();
    snprintf(cfg_path, sizeof cfg_path, "%s/fuzz.genai_config.json", dir);
    snprintf(model_name, sizeof model_name, "%s/fuzz.onnx", dir);
    return 0;
}

static void write_config(const uint8_t *p, size_t n)
{
    int fd = open(cfg_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        abort();
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            abort();
        p += w;
        n -= (size_t)w;
    }
    close(fd);
}

static const char *status_of(const char *report)
{
    json_error_t err;
    json_t *j = json_loads(report, 0, &err);
    if (!j)
        abort();
    const char *s = json_string_value(json_object_get(j, "status"));
    const char *r = s && !strcmp(s, "ok") ? "ok" : s && !strcmp(s, "error") ? "error" : NULL;
    json_decref(j);
    if (!r)
        abort();
    return r;
}

/* The model annotate handed back: it loads and checks clean. */
static void recheck(oac_ctx *ctx, const uint8_t *bytes, size_t len)
{
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m = NULL;
    oac_analysis *a = NULL;
    if (!d)
        abort();
    if (oac_model_load_buffer(ctx, &m, bytes, len, "annotated.onnx", dir, d) != OAC_OK)
        abort();
    int rc = oac_check(ctx, &a, m, NULL, d);
    if (rc == OAC_OK && oac_diags_count_severity(d, OAC_SEV_ERROR) != 0) {
        for (size_t i = 0; i < oac_diags_count(d); i++)
            fprintf(stderr, "  %s: %s\n", oac_code_name(oac_diags_get(d, i)->code),
                    oac_diags_get(d, i)->message);
        abort();
    }
    oac_analysis_free(a);
    oac_model_free(m);
    oac_diags_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t flags = data[0];
    const uint8_t *rest = data + 1, *model = rest;
    size_t rest_n = size - 1, model_n = rest_n;
    static const char sep[] = "\0MODEL\0";
    const uint8_t *at = memmem(rest, rest_n, sep, sizeof sep - 1);
    bool have_config = at != NULL;
    if (have_config) {
        write_config(rest, (size_t)(at - rest));
        model = at + sizeof sep - 1;
        model_n = rest_n - (size_t)(model - rest);
    } else {
        unlink(cfg_path);
    }
    oac_annotate_opts o = {
        .config = have_config && (flags & 1) ? cfg_path : NULL,
        .ignore_config = (flags & 2) != 0,
        .partial = (flags & 4) != 0,
        .capacity = (flags & 8) ? 16 : 0,
    };
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *out = NULL;
    size_t out_n = 0;
    char *report = NULL;
    int rc = oac_annotate_json(ctx, &out, &out_n, &report, model_name, model, model_n, &o);
    if (rc != OAC_OK && rc != OAC_ENOMEM) {
        fprintf(stderr, "fuzz_annotate: returned %d (%s)\n", rc, oac_errmsg(ctx));
        abort();
    }
    if (rc == OAC_OK) {
        if (!report)
            abort();
        (void)status_of(report);
        if (out)
            recheck(ctx, out, out_n);
    }
    oac_free(out);
    oac_free(report);
    oac_ctx_free(ctx);
    return 0;
}

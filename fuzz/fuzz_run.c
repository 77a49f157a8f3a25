/* fuzz_run.c: libFuzzer entry point that reaches the executor (issue 12:
 * "fuzzing that reaches the executor").
 *
 * Build and run (from a build folder; needs clang with libFuzzer):
 *
 *     make fuzz                          # builds fuzz/fuzz_run too
 *     make fuzz-smoke                    # each harness FUZZ_TIME seconds
 *     ./fuzz/fuzz_run -max_total_time=600 -rss_limit_mb=2048 fuzz/corpus-run fuzz/seed
 *
 * Not part of `make check`.  Each input is loaded as a model; when it
 * loads, every dim_param of the main graph's inputs is bound to a small
 * value (1 to 3, from the name, so the same model always gets the same
 * dims) and the model is checked; when the check finds no error, it is
 * run for one step and, in a second run, two steps, each within a memory
 * budget of 64 MiB and a body budget of 2^14 units per step (so a Loop or
 * a call fan-out ends quickly), and its report is written as JSON and
 * text.  What a run returns must be what the library promises:
 *  - OAC_OK or OAC_ERUNTIME, the latter only with an error diagnostic
 *    (a finding, a refusal, the budget);
 *  - OAC_EINVAL (a usage error: a dimension left unknown);
 *  - OAC_EUNSUPPORTED only with an unsupported-operator diagnostic;
 *  - never OAC_EBUDGET (oac_run turns it into memory-budget), never
 *    OAC_EINTERNAL (a broken invariant is a bug), never OAC_ENOMEM (64
 *    MiB of data cannot exhaust the fuzzer's 2 GiB).
 * Any crash, sanitizer report, leak, timeout or abort() below is a bug.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "run/kernel_api.h"

#define MAX_DIMS 16

/* 1 to 3 from the name: the same model always runs at the same dims. */
static int64_t dim_value(const char *name)
{
    unsigned h = 0;
    for (const char *p = name; *p; p++)
        h = h * 31 + (unsigned char)*p;
    return 1 + (int64_t)(h % 3);
}

static void add_shape(const Onnx__TensorShapeProto *s, oac_dim_binding *b, size_t *n)
{
    for (size_t j = 0; s && j < s->n_dim && *n < MAX_DIMS; j++) {
        const Onnx__TensorShapeProto__Dimension *d = s->dim[j];
        if (!d || d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ||
            !d->dim_param || !d->dim_param[0])
            continue;
        bool seen = false;
        for (size_t k = 0; k < *n && !seen; k++)
            seen = !strcmp(b[k].name, d->dim_param);
        if (!seen)
            b[(*n)++] = (oac_dim_binding){ d->dim_param, dim_value(d->dim_param) };
    }
}

/* The dim_params of the main graph's inputs: tensors and paged caches. */
static size_t input_dims(const oac_model *m, oac_dim_binding *b)
{
    const Onnx__GraphProto *g = oac_model_proto(m)->graph;
    size_t n = 0;
    for (size_t i = 0; g && i < g->n_input; i++) {
        const Onnx__TypeProto *t = g->input[i] ? g->input[i]->type : NULL;
        if (!t)
            continue;
        if (t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && t->tensor_type)
            add_shape(t->tensor_type->shape, b, &n);
        else if (t->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE &&
                 t->sequence_type && t->sequence_type->elem_type &&
                 t->sequence_type->elem_type->value_case ==
                     ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE &&
                 t->sequence_type->elem_type->quantized_tensor_type)
            add_shape(t->sequence_type->elem_type->quantized_tensor_type->shape, b, &n);
    }
    return n;
}

static void report(oac_ctx *ctx, const oac_model *m, const oac_analysis *a,
                   const oac_diags *d, const oac_execution *e)
{
    oac_report_input in = { .path = "fuzz.onnx", .model = m, .diags = d,
                            .analysis = a, .execution = e };
    json_t *j = oac_report_json(ctx, &in);
    if (j) {
        char *s = json_dumps(j, JSON_COMPACT);
        free(s);
        json_decref(j);
    }
    oac_free(oac_report_text(ctx, &in));
}

static void run(oac_ctx *ctx, const oac_model *m, const oac_analysis *a,
                const oac_dim_binding *dims, size_t nd, uint64_t steps)
{
    oac_diags *d = oac_diags_new(ctx);
    if (!d)
        abort();
    oac_run_opts ro = { .steps = steps, .dims = dims, .n_dims = nd,
                        .max_memory = (uint64_t)64 << 20 };
    oac_run_hooks h = { .body_work = 1 << 14 };
    oac_execution *e = NULL;
    int rc = oac_run_with_hooks(ctx, &e, m, a, &ro, &h, d);
    size_t errors = oac_diags_count_severity(d, OAC_SEV_ERROR);
    bool kept;
    switch (rc) {
    case OAC_OK:
    case OAC_EINVAL:
        kept = true;
        break;
    case OAC_ERUNTIME:        /* a stop a diagnostic explains */
        kept = errors > 0;
        break;
    case OAC_EUNSUPPORTED:
        kept = oac_diags_find(d, OAC_UNSUPPORTED_OPERATOR) >= 0;
        break;
    default:                  /* EBUDGET escaped, a bug, out of memory */
        kept = false;
    }
    if (!kept) {
        fprintf(stderr, "fuzz_run: %llu step(s): oac_run returned %d (%s), %zu errors\n",
                (unsigned long long)steps, rc, oac_errmsg(ctx), errors);
        for (size_t i = 0; i < oac_diags_count(d); i++)
            fprintf(stderr, "  %s: %s\n", oac_code_name(oac_diags_get(d, i)->code),
                    oac_diags_get(d, i)->message);
        abort();
    }
    if (!e || e->steps_completed > steps || e->n_per_step > e->steps_completed ||
        (rc == OAC_OK && e->steps_completed != steps))
        abort();
    report(ctx, m, a, d, e);
    oac_execution_free(e);
    oac_diags_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m = NULL;
    if (!ctx || !d)
        abort();
    int rc = oac_model_load_buffer(ctx, &m, data, size, "fuzz.onnx", "/nonexistent", d);
    if (rc == OAC_OK) {
        oac_dim_binding dims[MAX_DIMS];
        size_t nd = input_dims(m, dims);
        oac_check_opts co = { .dims = dims, .n_dims = nd };
        oac_analysis *a = NULL;
        rc = oac_check(ctx, &a, m, &co, d);
        if (rc != OAC_OK && rc != OAC_EINVAL)
            abort();
        if (rc == OAC_OK && oac_diags_count_severity(d, OAC_SEV_ERROR) == 0) {
            run(ctx, m, a, dims, nd, 1);
            run(ctx, m, a, dims, nd, 2);
        }
        oac_analysis_free(a);
        oac_model_free(m);
    } else if (rc != OAC_EPARSE) {
        abort();
    }
    oac_diags_free(d);
    oac_ctx_free(ctx);
    return 0;
}

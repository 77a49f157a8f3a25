/* fuzz_check.c: libFuzzer entry point over the whole static pipeline.
 *
 * Build and run (from a build folder; needs clang with libFuzzer):
 *
 *     make fuzz                          # builds fuzz/fuzz_check too
 *     ./fuzz/fuzz_check -max_total_time=600 -rss_limit_mb=2048 corpus
 *
 * Not part of `make check`.  Each input is loaded as a model; when it
 * loads, it is checked with no options and, if the graph declares a
 * dim_param on an input, a second time with that dim bound to 2; each
 * analysis is reported as JSON (dumped to a string) and as text.  Any
 * crash, sanitizer report, leak or abort() below is a bug.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "oac_int.h"

/* The first dim_param of a graph input, or NULL. */
static const char *first_dim_param(const oac_model *m)
{
    const Onnx__GraphProto *g = oac_model_proto(m)->graph;
    for (size_t i = 0; g && i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        if (!vi || !vi->type ||
            vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
            !vi->type->tensor_type || !vi->type->tensor_type->shape)
            continue;
        const Onnx__TensorShapeProto *s = vi->type->tensor_type->shape;
        for (size_t j = 0; j < s->n_dim; j++)
            if (s->dim[j] && s->dim[j]->value_case ==
                    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                s->dim[j]->dim_param && s->dim[j]->dim_param[0])
                return s->dim[j]->dim_param;
    }
    return NULL;
}

static void check_and_report(oac_ctx *ctx, const oac_model *m,
                             const oac_check_opts *opts)
{
    oac_diags *d = oac_diags_new(ctx);
    oac_analysis *a = NULL;
    if (!d)
        return;
    int rc = oac_check(ctx, &a, m, opts, d);
    if (rc != OAC_OK && rc != OAC_EINVAL && rc != OAC_ENOMEM)
        abort();
    oac_report_input in = {
        .path = "fuzz.onnx", .model = m, .diags = d, .analysis = a,
        .execution = NULL, .werror = false,
    };
    json_t *j = oac_report_json(ctx, &in);
    if (j) {
        char *s = json_dumps(j, JSON_COMPACT);
        free(s);
        json_decref(j);
    }
    char *t = oac_report_text(ctx, &in);
    oac_free(t);
    (void)oac_report_failed(&in);
    oac_analysis_free(a);
    oac_diags_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m = NULL;
    int rc = oac_model_load_buffer(ctx, &m, data, size, "fuzz.onnx",
                                   "/nonexistent", d);
    if (rc == OAC_OK) {
        check_and_report(ctx, m, NULL);
        const char *dp = first_dim_param(m);
        if (dp) {
            oac_dim_binding b = { .name = dp, .value = 2 };
            oac_check_opts o = { .dims = &b, .n_dims = 1 };
            check_and_report(ctx, m, &o);
        }
        oac_model_free(m);
    } else if (rc != OAC_EPARSE) {
        abort();
    }
    oac_diags_free(d);
    oac_ctx_free(ctx);
    return 0;
}

/* fuzz_inputs.c: libFuzzer entry point over the --input readers (check's
 * inputs.c and pages.c, then the run's binding of what they read).
 *
 * Build and run (from a build folder; needs clang with libFuzzer):
 *
 *     make fuzz                          # builds fuzz/fuzz_inputs too
 *     OAC_FUZZ_WRITE_SEEDS=fuzz/seed-inputs ./fuzz/fuzz_inputs   # the seeds
 *     ./fuzz/fuzz_inputs -max_total_time=600 fuzz/corpus-inputs fuzz/seed-inputs
 *
 * Not part of `make check`.  An input is
 *
 *     MODEL INPUT FILE
 *
 * MODEL (one byte) picks an example model (examples/models.c, built at
 * start), INPUT (one byte) one of its main graph's inputs, and FILE is
 * the --input file given for it (written to a private temporary folder
 * that also holds w.bin, 4 KiB an external-data reference may name).
 * Each dim_param of the graph's inputs is bound to 2.
 *
 * Properties (abort() otherwise): oac_check returns OAC_OK, OAC_EINVAL
 * or OAC_ENOMEM; an --input that is not the message its input calls for,
 * or whose payload does not fit, is a parse-error; with no error the
 * model runs one step within a 64 MiB budget (control bodies bounded as
 * in fuzz_run), and a stopped run is
 * explained by an error diagnostic.  Both reports are built.  Any crash,
 * sanitizer report or leak is a bug.
 *
 * OAC_FUZZ_WRITE_SEEDS=DIR writes the seed corpus instead: for every
 * example and input a file of the input's declared type and the hostile
 * cases (two payloads, rank 100, dims overflowing a byte count, external
 * data in /etc/passwd or outside the folder, thousands of empty pages).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "run/kernel_api.h"   /* oac_run_with_hooks */
#include "../examples/models.h"

#define MAX_MODELS 32

static char dir[64];
static char in_path[128];
static oac_ctx *init_ctx;
static oac_model *models[MAX_MODELS];
static uint8_t *model_bytes[MAX_MODELS];   /* what each model was loaded from */
static size_t n_models;

static void write_file(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        abort();
    const uint8_t *b = p;
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w <= 0)
            abort();
        b += w;
        n -= (size_t)w;
    }
    close(fd);
}

static const Onnx__GraphProto *graph_of(const oac_model *m)
{
    return oac_model_proto(m)->graph;
}

/* ---- seeds ------------------------------------------------------------- */

static void pack_seed(const char *seeds, size_t mi, size_t ii, const char *tag,
                      const ProtobufCMessage *msg)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = malloc(n + 2);
    if (!buf)
        abort();
    buf[0] = (uint8_t)mi;
    buf[1] = (uint8_t)ii;
    protobuf_c_message_pack(msg, buf + 2);
    char path[512];
    snprintf(path, sizeof path, "%s/m%02zu-i%02zu-%s", seeds, mi, ii, tag);
    write_file(path, buf, n + 2);
    free(buf);
}

/* A tensor of the declared type, dims 2 where symbolic, zero raw_data. */
static void seed_tensor(const char *seeds, size_t mi, size_t ii,
                        const Onnx__ValueInfoProto *vi)
{
    const Onnx__TypeProto__Tensor *tt = vi->type->tensor_type;
    const Onnx__TensorShapeProto *s = tt->shape;
    int64_t dims[100];
    size_t rank = s ? s->n_dim : 0, bytes = 4;
    if (rank > 8)
        return;
    uint64_t numel = 1;
    for (size_t d = 0; d < rank; d++) {
        const Onnx__TensorShapeProto__Dimension *dm = s->dim[d];
        dims[d] = dm && dm->value_case ==
                      ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                  ? dm->dim_value : 2;
        numel *= (uint64_t)dims[d];
    }
    uint64_t want;
    if (!oac_elem_bytes(tt->elem_type, numel, &want) || want > 8192)
        return;
    bytes = (size_t)want;
    uint8_t *zeros = calloc(1, bytes + 8);   /* rank100 below stores 4 */
    Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
    t.name = vi->name;
    t.has_data_type = 1;
    t.data_type = tt->elem_type;
    t.n_dims = rank;
    t.dims = dims;
    t.has_raw_data = 1;
    t.raw_data.data = zeros;
    t.raw_data.len = bytes;
    pack_seed(seeds, mi, ii, "valid", &t.base);
    /* Two payloads: raw_data and int64_data. */
    int64_t two[2] = { 1, 2 };
    t.n_int64_data = 2;
    t.int64_data = two;
    pack_seed(seeds, mi, ii, "two-payloads", &t.base);
    t.n_int64_data = 0;
    /* External data: inside the folder (w.bin), /etc/passwd, outside. */
    Onnx__StringStringEntryProto loc = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
    Onnx__StringStringEntryProto len = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
    Onnx__StringStringEntryProto *ext[2] = { &loc, &len };
    char len_s[32];
    snprintf(len_s, sizeof len_s, "%zu", bytes);
    loc.key = (char *)"location";
    len.key = (char *)"length";
    len.value = len_s;
    t.has_raw_data = 0;
    t.has_data_location = 1;
    t.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    t.n_external_data = 2;
    t.external_data = ext;
    static const char *const where[] = { "w.bin", "/etc/passwd", "../w.bin" };
    static const char *const tags[] = { "ext-inside", "ext-passwd", "ext-outside" };
    for (int k = 0; k < 3; k++) {
        loc.value = (char *)where[k];
        pack_seed(seeds, mi, ii, tags[k], &t.base);
    }
    t.has_data_location = 0;
    t.n_external_data = 0;
    /* Rank 100, and dims whose byte count overflows. */
    int64_t many[100];
    for (int d = 0; d < 100; d++)
        many[d] = 1;
    t.dims = many;
    t.n_dims = 100;
    t.has_raw_data = 1;
    t.raw_data.len = 4;
    pack_seed(seeds, mi, ii, "rank100", &t.base);
    int64_t huge[2] = { (int64_t)1 << 62, 4 };
    t.dims = huge;
    t.n_dims = 2;
    t.raw_data.len = 0;
    pack_seed(seeds, mi, ii, "overflow", &t.base);
    free(zeros);
}

/* A sequence of n empty tensors: the empty pages of a paged cache. */
static void seed_sequence(const char *seeds, size_t mi, size_t ii,
                          const Onnx__ValueInfoProto *vi, size_t n, const char *tag)
{
    Onnx__SequenceProto s = ONNX__SEQUENCE_PROTO__INIT;
    Onnx__TensorProto *ts = calloc(n, sizeof *ts);
    Onnx__TensorProto **tp = calloc(n, sizeof *tp);
    if (!ts || !tp)
        abort();
    for (size_t k = 0; k < n; k++) {
        Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
        ts[k] = t;
        tp[k] = &ts[k];
    }
    s.name = vi->name;
    s.has_elem_type = 1;
    s.elem_type = ONNX__SEQUENCE_PROTO__DATA_TYPE__TENSOR;
    s.n_tensor_values = n;
    s.tensor_values = tp;
    pack_seed(seeds, mi, ii, tag, &s.base);
    free(tp);
    free(ts);
}

static void write_seeds(const char *seeds)
{
    for (size_t mi = 0; mi < n_models; mi++) {
        const Onnx__GraphProto *g = graph_of(models[mi]);
        for (size_t ii = 0; g && ii < g->n_input && ii < 256; ii++) {
            const Onnx__ValueInfoProto *vi = g->input[ii];
            if (!vi || !vi->type)
                continue;
            if (vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
                vi->type->tensor_type)
                seed_tensor(seeds, mi, ii, vi);
            else if (vi->type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE) {
                seed_sequence(seeds, mi, ii, vi, 2, "pages");
                seed_sequence(seeds, mi, ii, vi, 5000, "empty-pages");
            }
        }
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof dir, "/tmp/oac-fuzz-inputs-XXXXXX");
    if (!mkdtemp(dir))
        abort();
    snprintf(in_path, sizeof in_path, "%s/in.pb", dir);
    char w[128];
    static uint8_t weights[4096];
    snprintf(w, sizeof w, "%s/w.bin", dir);
    write_file(w, weights, sizeof weights);
    init_ctx = oac_ctx_new();
    for (size_t i = 0; i < oac_examples_count && n_models < MAX_MODELS; i++) {
        uint8_t *buf = NULL;
        size_t len = 0;
        oac_diags *d = oac_diags_new(init_ctx);
        if (oac_example_pack(init_ctx, &oac_examples[i], &buf, &len) == OAC_OK &&
            oac_model_load_buffer(init_ctx, &models[n_models], buf, len,
                                  oac_examples[i].name, dir, d) == OAC_OK)
            model_bytes[n_models++] = buf;   /* payloads point into it */
        else
            free(buf);
        oac_diags_free(d);
    }
    if (!n_models)
        abort();
    const char *seeds = getenv("OAC_FUZZ_WRITE_SEEDS");
    if (seeds && *seeds) {
        write_seeds(seeds);
        exit(0);
    }
    return 0;
}

/* ---- one input ----------------------------------------------------------- */

static size_t bind_dims(const Onnx__GraphProto *g, oac_dim_binding *b, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; g && i < g->n_input; i++) {
        const Onnx__TypeProto *t = g->input[i] ? g->input[i]->type : NULL;
        const Onnx__TensorShapeProto *s =
            t && t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && t->tensor_type
                ? t->tensor_type->shape : NULL;
        for (size_t d = 0; s && d < s->n_dim; d++) {
            const Onnx__TensorShapeProto__Dimension *dm = s->dim[d];
            if (!dm || dm->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ||
                !dm->dim_param || !dm->dim_param[0])
                continue;
            bool dup = false;
            for (size_t k = 0; k < n && !dup; k++)
                dup = !strcmp(b[k].name, dm->dim_param);
            if (!dup && n < max)
                b[n++] = (oac_dim_binding){ .name = dm->dim_param, .value = 2 };
        }
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
        free(json_dumps(j, JSON_COMPACT));
        json_decref(j);
    }
    oac_free(oac_report_text(ctx, &in));
}

static void run_once(oac_ctx *ctx, const oac_model *m, const oac_analysis *a,
                     const oac_run_opts *ro)
{
    oac_diags *d = oac_diags_new(ctx);
    oac_execution *e = NULL;
    /* A trip count or a sequence length from the file bounds the work of
     * control bodies, not a run's budget: bounded as fuzz_run bounds it. */
    oac_run_hooks h = { .body_work = 1 << 14 };
    int rc = oac_run_with_hooks(ctx, &e, m, a, ro, &h, d);
    size_t errors = oac_diags_count_severity(d, OAC_SEV_ERROR);
    bool kept = rc == OAC_OK || rc == OAC_EINVAL || rc == OAC_ENOMEM ||
                (rc == OAC_ERUNTIME && errors > 0) ||
                (rc == OAC_EUNSUPPORTED && oac_diags_find(d, OAC_UNSUPPORTED_OPERATOR) >= 0) ||
                oac_diags_find(d, OAC_PARSE_ERROR) >= 0;
    if (!kept) {
        fprintf(stderr, "fuzz_inputs: oac_run returned %d (%s), %zu errors\n", rc,
                oac_errmsg(ctx), errors);
        for (size_t i = 0; i < oac_diags_count(d); i++)
            fprintf(stderr, "  %s: %s\n", oac_code_name(oac_diags_get(d, i)->code),
                    oac_diags_get(d, i)->message);
        abort();
    }
    report(ctx, m, a, d, e);
    oac_execution_free(e);
    oac_diags_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const oac_model *m = models[data[0] % n_models];
    const Onnx__GraphProto *g = graph_of(m);
    if (!g || !g->n_input || !g->input[data[1] % g->n_input] ||
        !g->input[data[1] % g->n_input]->name)
        return 0;
    write_file(in_path, data + 2, size - 2);
    oac_input_file in = { .name = g->input[data[1] % g->n_input]->name, .path = in_path };
    oac_dim_binding dims[16];
    size_t nd = bind_dims(g, dims, 16);
    oac_check_opts o = { .dims = dims, .n_dims = nd, .inputs = &in, .n_inputs = 1 };
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = oac_diags_new(ctx);
    oac_analysis *a = NULL;
    int rc = oac_check(ctx, &a, m, &o, d);
    if (rc != OAC_OK && rc != OAC_EINVAL && rc != OAC_ENOMEM) {
        fprintf(stderr, "fuzz_inputs: oac_check returned %d (%s)\n", rc, oac_errmsg(ctx));
        abort();
    }
    if (rc == OAC_OK) {
        report(ctx, m, a, d, NULL);
        if (oac_diags_count_severity(d, OAC_SEV_ERROR) == 0) {
            oac_run_opts ro = { .steps = 1, .dims = dims, .n_dims = nd, .inputs = &in,
                                .n_inputs = 1, .max_memory = (uint64_t)64 << 20 };
            run_once(ctx, m, a, &ro);
        }
    }
    oac_analysis_free(a);
    oac_diags_free(d);
    oac_ctx_free(ctx);
    return 0;
}

/* builder.c: the model builder of lib/oac_build.h.
 *
 * Owns: struct oac_mb (a model under construction), struct oac_gb (one
 * graph or function body in it), the builder's arena, and the parsing of
 * the builder's string conventions (comma-separated name lists, dims
 * strings).  Contract section 1: every field the builder sets is a field
 * of the wire format there (output_alias, access, alias_of,
 * quantizations, quantized_tensor_type), packed by protobuf-c from the
 * generated descriptors, so what a test builds is what a user's file
 * holds.
 *
 * Invariants:
 *  1. Every byte the builder hands out (protos, strings, arrays) comes
 *     from the arena, itself allocated through oac_alloc, so
 *     oac_ctx_fail_alloc_after reaches the builder too; oac_mb_free
 *     releases all of it at once.  Callers may therefore set fields by
 *     hand without the builder ever freeing a pointer it did not make.
 *  2. Errors are sticky: after the first failure (allocation, or a dims
 *     string that cannot describe a tensor) every builder call returns
 *     NULL or does nothing, and oac_mb_pack / oac_mb_write return the
 *     first failure's status with its message on the context.
 *  3. Repeated fields grow geometrically.  The capacity of each array the
 *     builder made is kept in a side table keyed by the address of the
 *     field; an array the caller replaced by hand is not in the table (or
 *     not at that pointer) and is copied before it grows, so hand edits
 *     stay safe.  Benchmarks build graphs of ~50k nodes, which rules out
 *     copying on every append.
 *  4. Builder calls accept NULL builders, graphs, nodes and values and do
 *     nothing, so a chain of calls after a failed allocation needs no
 *     check at each step.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oac_int.h"
#include "oac_build.h"
#include "ops.h"

/* The op_type of a Constant node (its row of ops.def). */
static const char *constant_op(void)
{
    return oac_op_get(OAC_OP_CONSTANT)->op_type;
}

/* ---- the arena ------------------------------------------------------- */

typedef struct chunk {
    struct chunk *next;
    size_t used, size;
    max_align_t data[];   /* payload, aligned for any proto struct */
} chunk;

#define CHUNK_BYTES (64u * 1024u)

/* One capacity record (invariant 3). */
typedef struct cap_slot {
    void **field;   /* address of the array pointer in a proto; NULL: free */
    void *arr;      /* the array the builder made for it */
    size_t cap;     /* elements it can hold */
} cap_slot;

struct oac_gb {
    oac_mb *mb;
    Onnx__GraphProto *graph;      /* exactly one of graph, fn */
    Onnx__FunctionProto *fn;
};

struct oac_mb {
    oac_ctx *ctx;
    chunk *chunks;
    int status;                   /* first failure, sticky (invariant 2) */
    cap_slot *caps;               /* open addressing, power-of-two size */
    size_t n_caps, caps_size;
    Onnx__ModelProto *model;
    oac_gb *main;
};

static void *fail(oac_mb *mb, int status)
{
    if (mb->status == OAC_OK)
        mb->status = status;
    return NULL;
}

/* Zeroed, aligned memory from the arena. */
static void *arena_alloc(oac_mb *mb, size_t n)
{
    if (mb->status != OAC_OK)
        return NULL;
    size_t align = sizeof(max_align_t);
    if (n > SIZE_MAX - align)
        return fail(mb, oac_err(mb->ctx, OAC_ENOMEM, "model builder: %zu bytes", n));
    n = (n + align - 1) / align * align;
    chunk *c = mb->chunks;
    if (!c || c->size - c->used < n) {
        size_t size = n > CHUNK_BYTES / 2 ? n : CHUNK_BYTES;
        c = oac_alloc(mb->ctx, sizeof(chunk) + size);
        if (!c)
            return fail(mb, OAC_ENOMEM);
        c->size = size;
        c->used = 0;
        /* A big allocation gets its own chunk behind the current one, so
         * the current chunk's free space is not abandoned. */
        if (n > CHUNK_BYTES / 2 && mb->chunks) {
            c->next = mb->chunks->next;
            mb->chunks->next = c;
        } else {
            c->next = mb->chunks;
            mb->chunks = c;
        }
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

void *oac_mb_alloc(oac_mb *mb, size_t n)
{
    return mb ? arena_alloc(mb, n) : NULL;
}

char *oac_mb_strdup(oac_mb *mb, const char *s)
{
    if (!mb || !s)
        return NULL;
    size_t n = strlen(s);
    char *p = arena_alloc(mb, n + 1);
    if (p)
        memcpy(p, s, n + 1);
    return p;
}

static char *mb_strndup(oac_mb *mb, const char *s, size_t n)
{
    char *p = arena_alloc(mb, n + 1);
    if (p)
        memcpy(p, s, n);
    return p;
}

/* ---- growing repeated fields (invariant 3) --------------------------- */

static size_t cap_hash(void **field, size_t size)
{
    uintptr_t h = (uintptr_t)field;
    h ^= h >> 17;
    h *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 7) & (size - 1);
}

static cap_slot *cap_find(oac_mb *mb, void **field)
{
    if (!mb->caps_size)
        return NULL;
    for (size_t i = cap_hash(field, mb->caps_size);; i = (i + 1) & (mb->caps_size - 1)) {
        if (mb->caps[i].field == field)
            return &mb->caps[i];
        if (!mb->caps[i].field)
            return NULL;
    }
}

static int cap_set(oac_mb *mb, void **field, void *arr, size_t cap)
{
    cap_slot *s = cap_find(mb, field);
    if (s) {
        s->arr = arr;
        s->cap = cap;
        return OAC_OK;
    }
    if ((mb->n_caps + 1) * 2 > mb->caps_size) {
        size_t nsize = mb->caps_size ? mb->caps_size * 2 : 256;
        cap_slot *nt = oac_calloc(mb->ctx, nsize, sizeof *nt);
        if (!nt) {
            fail(mb, OAC_ENOMEM);
            return OAC_ENOMEM;
        }
        for (size_t i = 0; i < mb->caps_size; i++) {
            if (!mb->caps[i].field)
                continue;
            size_t j = cap_hash(mb->caps[i].field, nsize);
            while (nt[j].field)
                j = (j + 1) & (nsize - 1);
            nt[j] = mb->caps[i];
        }
        oac_dealloc(mb->ctx, mb->caps);
        mb->caps = nt;
        mb->caps_size = nsize;
    }
    size_t j = cap_hash(field, mb->caps_size);
    while (mb->caps[j].field)
        j = (j + 1) & (mb->caps_size - 1);
    mb->caps[j] = (cap_slot){ field, arr, cap };
    mb->n_caps++;
    return OAC_OK;
}

/* Make room for one more element in the repeated field (*field, *n) of
 * elements of size elem and return the new, zeroed slot; *n is
 * incremented.  NULL after a failure. */
static void *push(oac_mb *mb, void *field_, size_t *n, size_t elem)
{
    void **field = field_;
    if (mb->status != OAC_OK)
        return NULL;
    cap_slot *s = cap_find(mb, field);
    size_t cap = (s && s->arr == *field) ? s->cap : *n;
    if (*n >= cap) {
        size_t ncap = *n < 4 ? 4 : *n * 2;
        if (ncap > SIZE_MAX / elem)
            return fail(mb, oac_err(mb->ctx, OAC_ENOMEM, "model builder: array too large"));
        void *arr = arena_alloc(mb, ncap * elem);
        if (!arr)
            return NULL;
        if (*n)
            memcpy(arr, *field, *n * elem);
        *field = arr;
        if (cap_set(mb, field, arr, ncap) != OAC_OK)
            return NULL;
    }
    void *slot = (char *)*field + *n * elem;
    memset(slot, 0, elem);
    (*n)++;
    return slot;
}

/* Append a pointer to a repeated message or string field. */
static bool push_ptr(oac_mb *mb, void *field, size_t *n, void *p)
{
    if (!p)
        return false;
    void **slot = push(mb, field, n, sizeof(void *));
    if (!slot)
        return false;
    *slot = p;
    return true;
}

/* A new message of a generated type, initialised by its init function. */
#define NEW(mb, T, init) new_msg_(mb, sizeof(T), (void (*)(void *))(init))
static void *new_msg_(oac_mb *mb, size_t size, void (*init)(void *))
{
    void *m = arena_alloc(mb, size);
    if (m)
        init(m);
    return m;
}

/* ---- string conventions --------------------------------------------- */

/* Split "a,b,,c" into arena strings appended to (*field, *n); "" entries
 * are kept (omitted optional ports). */
static void push_names(oac_mb *mb, char ***field, size_t *n, const char *list)
{
    if (!list || !*list)
        return;
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (!push_ptr(mb, field, n, mb_strndup(mb, p, len)))
            return;
        if (!comma)
            return;
        p = comma + 1;
    }
}

/* Parse one dims token: returns 1 for a number (*v), 0 for "?", 2 for a
 * name. */
static int dim_token(const char *p, size_t len, int64_t *v)
{
    if (len == 1 && p[0] == '?')
        return 0;
    size_t i = (len && p[0] == '-') ? 1 : 0;
    if (i == len)
        return 2;
    int64_t acc = 0;
    for (; i < len; i++) {
        if (p[i] < '0' || p[i] > '9')
            return 2;
        if (oac_mul_overflow_i64(acc, 10, &acc) ||
            oac_add_overflow_i64(acc, p[i] - '0', &acc))
            return 2;   /* too long to be a number: treat as a symbol */
    }
    *v = p[0] == '-' ? -acc : acc;
    return 1;
}

/* A TensorShapeProto from a dims string (NULL: no shape). */
static Onnx__TensorShapeProto *make_shape(oac_mb *mb, const char *dims)
{
    if (!dims || mb->status != OAC_OK)
        return NULL;
    Onnx__TensorShapeProto *s = NEW(mb, Onnx__TensorShapeProto, onnx__tensor_shape_proto__init);
    if (!s || !*dims)
        return s;
    const char *p = dims;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        Onnx__TensorShapeProto__Dimension *d =
            NEW(mb, Onnx__TensorShapeProto__Dimension, onnx__tensor_shape_proto__dimension__init);
        if (!push_ptr(mb, &s->dim, &s->n_dim, d))
            return NULL;
        int64_t v = 0;
        switch (dim_token(p, len, &v)) {
        case 1:
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = v;
            break;
        case 2:
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = mb_strndup(mb, p, len);
            break;
        default:   /* "?": a dimension with neither field */
            break;
        }
        if (!comma)
            return mb->status == OAC_OK ? s : NULL;
        p = comma + 1;
    }
}

/* TensorProto.dims from a dims string; tensors have only numbers. */
static bool tensor_dims(oac_mb *mb, Onnx__TensorProto *t, const char *dims)
{
    if (!dims || !*dims)
        return true;
    const char *p = dims;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int64_t v = 0;
        if (dim_token(p, len, &v) != 1) {
            fail(mb, oac_err(mb->ctx, OAC_EINVAL,
                             "model builder: tensor dims \"%s\" are not all numbers", dims));
            return false;
        }
        int64_t *slot = push(mb, &t->dims, &t->n_dims, sizeof *slot);
        if (!slot)
            return false;
        *slot = v;
        if (!comma)
            return true;
        p = comma + 1;
    }
}

static Onnx__TypeProto *tensor_type(oac_mb *mb, int32_t elem_type, const char *dims)
{
    Onnx__TypeProto *tp = NEW(mb, Onnx__TypeProto, onnx__type_proto__init);
    Onnx__TypeProto__Tensor *tt = NEW(mb, Onnx__TypeProto__Tensor, onnx__type_proto__tensor__init);
    if (!tp || !tt)
        return NULL;
    tt->has_elem_type = 1;
    tt->elem_type = elem_type;
    tt->shape = make_shape(mb, dims);
    if (mb->status != OAC_OK)
        return NULL;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    return tp;
}

/* Sequence<QuantizedTensor{elem_type, dims, allowed}>. */
static Onnx__TypeProto *paged_type(oac_mb *mb, int32_t elem_type, const char *dims,
                                   const int32_t *allowed, size_t n_allowed)
{
    Onnx__TypeProto *outer = NEW(mb, Onnx__TypeProto, onnx__type_proto__init);
    Onnx__TypeProto__Sequence *seq = NEW(mb, Onnx__TypeProto__Sequence, onnx__type_proto__sequence__init);
    Onnx__TypeProto *inner = NEW(mb, Onnx__TypeProto, onnx__type_proto__init);
    Onnx__TypeProto__QuantizedTensor *qt =
        NEW(mb, Onnx__TypeProto__QuantizedTensor, onnx__type_proto__quantized_tensor__init);
    if (!outer || !seq || !inner || !qt)
        return NULL;
    for (size_t i = 0; i < n_allowed; i++) {
        int32_t *slot = push(mb, &qt->allowed_quantized_type, &qt->n_allowed_quantized_type,
                             sizeof *slot);
        if (!slot)
            return NULL;
        *slot = allowed[i];
    }
    qt->has_elem_type = 1;
    qt->elem_type = elem_type;
    qt->shape = make_shape(mb, dims);
    if (mb->status != OAC_OK)
        return NULL;
    inner->value_case = ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE;
    inner->quantized_tensor_type = qt;
    seq->elem_type = inner;
    outer->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    outer->sequence_type = seq;
    return outer;
}

static Onnx__StringStringEntryProto *entry(oac_mb *mb, const char *key, const char *value)
{
    Onnx__StringStringEntryProto *e =
        NEW(mb, Onnx__StringStringEntryProto, onnx__string_string_entry_proto__init);
    if (!e)
        return NULL;
    e->key = oac_mb_strdup(mb, key);
    e->value = oac_mb_strdup(mb, value);
    return mb->status == OAC_OK ? e : NULL;
}

/* ---- models ----------------------------------------------------------- */

static oac_gb *new_gb(oac_mb *mb, Onnx__GraphProto *graph, Onnx__FunctionProto *fn)
{
    oac_gb *g = arena_alloc(mb, sizeof *g);
    if (!g)
        return NULL;
    g->mb = mb;
    g->graph = graph;
    g->fn = fn;
    return g;
}

static Onnx__GraphProto *new_graph(oac_mb *mb, const char *name)
{
    Onnx__GraphProto *gp = NEW(mb, Onnx__GraphProto, onnx__graph_proto__init);
    if (gp)
        gp->name = oac_mb_strdup(mb, name);
    return mb->status == OAC_OK ? gp : NULL;
}

oac_mb *oac_mb_new(oac_ctx *ctx)
{
    oac_mb *mb = oac_calloc(ctx, 1, sizeof *mb);
    if (!mb)
        return NULL;
    mb->ctx = ctx;
    mb->model = NEW(mb, Onnx__ModelProto, onnx__model_proto__init);
    if (mb->model) {
        mb->model->has_ir_version = 1;
        mb->model->ir_version = 10;
        mb->model->producer_name = oac_mb_strdup(mb, OAC_TOOL_NAME);
        mb->model->producer_version = oac_mb_strdup(mb, OAC_VERSION);
        mb->model->graph = new_graph(mb, "main");
        mb->main = new_gb(mb, mb->model->graph, NULL);
    }
    oac_mb_opset(mb, "", 21);
    oac_mb_opset(mb, "onnx_alias", 1);
    if (mb->status != OAC_OK) {
        oac_mb_free(mb);
        return NULL;
    }
    return mb;
}

void oac_mb_free(oac_mb *mb)
{
    if (!mb)
        return;
    for (chunk *c = mb->chunks, *next; c; c = next) {
        next = c->next;
        oac_dealloc(mb->ctx, c);
    }
    oac_dealloc(mb->ctx, mb->caps);
    oac_dealloc(mb->ctx, mb);
}

Onnx__ModelProto *oac_mb_proto(oac_mb *mb)
{
    return mb ? mb->model : NULL;
}

oac_ctx *oac_mb_ctx(oac_mb *mb)
{
    return mb ? mb->ctx : NULL;
}

int oac_mb_status(oac_mb *mb)
{
    return mb ? mb->status : OAC_EINVAL;
}

void oac_mb_ir_version(oac_mb *mb, int64_t ir_version)
{
    if (!mb || mb->status != OAC_OK)
        return;
    mb->model->has_ir_version = 1;
    mb->model->ir_version = ir_version;
}

/* Add, replace or (version < 0) remove domain in an opset list. */
static void set_opset(oac_mb *mb, Onnx__OperatorSetIdProto ***list, size_t *n,
                      const char *domain, int64_t version)
{
    if (mb->status != OAC_OK)
        return;
    if (!domain)
        domain = "";
    for (size_t i = 0; i < *n; i++) {
        const char *d = (*list)[i]->domain ? (*list)[i]->domain : "";
        if (strcmp(d, domain) != 0)
            continue;
        if (version < 0) {
            memmove(&(*list)[i], &(*list)[i + 1], (*n - i - 1) * sizeof **list);
            (*n)--;
        } else {
            (*list)[i]->has_version = 1;
            (*list)[i]->version = version;
        }
        return;
    }
    if (version < 0)
        return;
    Onnx__OperatorSetIdProto *op = NEW(mb, Onnx__OperatorSetIdProto, onnx__operator_set_id_proto__init);
    if (!op)
        return;
    op->domain = oac_mb_strdup(mb, domain);
    op->has_version = 1;
    op->version = version;
    push_ptr(mb, list, n, op);
}

void oac_mb_opset(oac_mb *mb, const char *domain, int64_t version)
{
    if (!mb || !mb->model)
        return;
    set_opset(mb, &mb->model->opset_import, &mb->model->n_opset_import, domain, version);
}

void oac_mb_metadata(oac_mb *mb, const char *key, const char *value)
{
    if (!mb || mb->status != OAC_OK)
        return;
    push_ptr(mb, &mb->model->metadata_props, &mb->model->n_metadata_props,
             entry(mb, key, value));
}

oac_gb *oac_mb_graph(oac_mb *mb)
{
    return mb && mb->status == OAC_OK ? mb->main : NULL;
}

oac_gb *oac_mb_function(oac_mb *mb, const char *domain, const char *name,
                        const char *inputs, const char *outputs)
{
    if (!mb || mb->status != OAC_OK)
        return NULL;
    Onnx__FunctionProto *fn = NEW(mb, Onnx__FunctionProto, onnx__function_proto__init);
    if (!fn)
        return NULL;
    fn->domain = oac_mb_strdup(mb, domain ? domain : "");
    fn->name = oac_mb_strdup(mb, name);
    push_names(mb, &fn->input, &fn->n_input, inputs);
    push_names(mb, &fn->output, &fn->n_output, outputs);
    /* A function body resolves its operators through its own imports;
     * it starts with the model's, as a function written by hand would. */
    for (size_t i = 0; i < mb->model->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = mb->model->opset_import[i];
        set_opset(mb, &fn->opset_import, &fn->n_opset_import, op->domain, op->version);
    }
    if (!push_ptr(mb, &mb->model->functions, &mb->model->n_functions, fn))
        return NULL;
    return new_gb(mb, NULL, fn);
}

static Onnx__QuantizationProto *new_quant(oac_mb *mb, const char *name, int32_t data_type)
{
    Onnx__QuantizationProto *q = NEW(mb, Onnx__QuantizationProto, onnx__quantization_proto__init);
    if (!q)
        return NULL;
    q->name = oac_mb_strdup(mb, name);
    q->has_data_type = 1;
    q->data_type = data_type;
    return q;
}

static int add_quant(oac_mb *mb, Onnx__QuantizationProto *q)
{
    if (mb->status != OAC_OK || !q)
        return mb->status != OAC_OK ? mb->status : OAC_ENOMEM;
    if (!push_ptr(mb, &mb->model->quantizations, &mb->model->n_quantizations, q))
        return mb->status;
    return (int)(mb->model->n_quantizations - 1);
}

int oac_mb_quant_linear(oac_mb *mb, const char *name, int32_t data_type,
                        int32_t storage_type, int bits, int symmetric,
                        float scale, int64_t zero_point)
{
    if (!mb || mb->status != OAC_OK)
        return mb ? mb->status : OAC_EINVAL;
    Onnx__QuantizationProto *q = new_quant(mb, name, data_type);
    Onnx__LinearUniformProto *l = NEW(mb, Onnx__LinearUniformProto, onnx__linear_uniform_proto__init);
    if (!q || !l)
        return mb->status;
    l->has_storage_type = 1;
    l->storage_type = storage_type;
    l->has_bits = 1;
    l->bits = bits;
    l->has_symmetric = 1;
    l->symmetric = symmetric != 0;
    l->scale_case = ONNX__LINEAR_UNIFORM_PROTO__SCALE_SCALE_FLOAT;
    l->scale_float = scale;
    l->has_zero_point = 1;
    l->zero_point = zero_point;
    /* Written out: an absent axis reads as 0, which the contract rejects;
     * the builder's declarations are per tensor unless edited. */
    l->has_axis = 1;
    l->axis = -1;
    q->kind_case = ONNX__QUANTIZATION_PROTO__KIND_LINEAR;
    q->linear = l;
    return add_quant(mb, q);
}

int oac_mb_quant_float(oac_mb *mb, const char *name, int32_t data_type,
                       int sign_bits, int exponent_bits, int mantissa_bits,
                       int exponent_bias, int has_inf, int has_nan)
{
    if (!mb || mb->status != OAC_OK)
        return mb ? mb->status : OAC_EINVAL;
    Onnx__QuantizationProto *q = new_quant(mb, name, data_type);
    Onnx__FloatingPointUniformProto *f =
        NEW(mb, Onnx__FloatingPointUniformProto, onnx__floating_point_uniform_proto__init);
    if (!q || !f)
        return mb->status;
    f->has_sign_bits = 1;
    f->sign_bits = sign_bits;
    f->has_exponent_bits = 1;
    f->exponent_bits = exponent_bits;
    f->has_mantissa_bits = 1;
    f->mantissa_bits = mantissa_bits;
    f->has_exponent_bias = 1;
    f->exponent_bias = exponent_bias;
    f->has_has_inf = 1;
    f->has_inf = has_inf != 0;
    f->has_has_nan = 1;
    f->has_nan = has_nan != 0;
    q->kind_case = ONNX__QUANTIZATION_PROTO__KIND_FLOATING_POINT;
    q->floating_point = f;
    return add_quant(mb, q);
}

int oac_mb_quant_fp8(oac_mb *mb, const char *name, int32_t data_type)
{
    /* E4M3FN: 1 sign, 4 exponent, 3 mantissa bits, bias 7, NaN, no inf. */
    return oac_mb_quant_float(mb, name, data_type, 1, 4, 3, 7, 0, 1);
}

Onnx__QuantizationProto *oac_mb_quant(oac_mb *mb, int index)
{
    if (!mb || index < 0 || (size_t)index >= mb->model->n_quantizations)
        return NULL;
    return mb->model->quantizations[index];
}

/* ---- graphs ----------------------------------------------------------- */

Onnx__GraphProto *oac_gb_proto(oac_gb *g)
{
    return g ? g->graph : NULL;
}

Onnx__FunctionProto *oac_gb_function(oac_gb *g)
{
    return g ? g->fn : NULL;
}

oac_mb *oac_gb_model(oac_gb *g)
{
    return g ? g->mb : NULL;
}

static bool ok(oac_gb *g)
{
    return g && g->mb->status == OAC_OK;
}

static Onnx__ValueInfoProto *new_vi(oac_mb *mb, const char *name, Onnx__TypeProto *tp)
{
    if (!tp)
        return NULL;
    Onnx__ValueInfoProto *vi = NEW(mb, Onnx__ValueInfoProto, onnx__value_info_proto__init);
    if (!vi)
        return NULL;
    vi->name = oac_mb_strdup(mb, name);
    vi->type = tp;
    return mb->status == OAC_OK ? vi : NULL;
}

static bool has_name(char **names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] && name && strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* kind: 0 input, 1 output, 2 value_info.  A function keeps the names in
 * FunctionProto.input/output and the types (and alias_of) in its
 * value_info, where the contract looks for them. */
static Onnx__ValueInfoProto *add_vi(oac_gb *g, int kind, const char *name,
                                    Onnx__TypeProto *tp)
{
    oac_mb *mb = g->mb;
    Onnx__ValueInfoProto *vi = new_vi(mb, name, tp);
    if (!vi)
        return NULL;
    if (g->fn) {
        if (kind == 0 && !has_name(g->fn->input, g->fn->n_input, name))
            push_ptr(mb, &g->fn->input, &g->fn->n_input, oac_mb_strdup(mb, name));
        if (kind == 1 && !has_name(g->fn->output, g->fn->n_output, name))
            push_ptr(mb, &g->fn->output, &g->fn->n_output, oac_mb_strdup(mb, name));
        if (!push_ptr(mb, &g->fn->value_info, &g->fn->n_value_info, vi))
            return NULL;
        return vi;
    }
    Onnx__GraphProto *gp = g->graph;
    bool pushed = kind == 0 ? push_ptr(mb, &gp->input, &gp->n_input, vi)
                : kind == 1 ? push_ptr(mb, &gp->output, &gp->n_output, vi)
                : push_ptr(mb, &gp->value_info, &gp->n_value_info, vi);
    return pushed ? vi : NULL;
}

Onnx__ValueInfoProto *oac_gb_input(oac_gb *g, const char *name,
                                   int32_t elem_type, const char *dims)
{
    return ok(g) ? add_vi(g, 0, name, tensor_type(g->mb, elem_type, dims)) : NULL;
}

Onnx__ValueInfoProto *oac_gb_output(oac_gb *g, const char *name,
                                    int32_t elem_type, const char *dims)
{
    return ok(g) ? add_vi(g, 1, name, tensor_type(g->mb, elem_type, dims)) : NULL;
}

Onnx__ValueInfoProto *oac_gb_value_info(oac_gb *g, const char *name,
                                        int32_t elem_type, const char *dims)
{
    return ok(g) ? add_vi(g, 2, name, tensor_type(g->mb, elem_type, dims)) : NULL;
}

Onnx__ValueInfoProto *oac_gb_input_paged(oac_gb *g, const char *name,
                                         int32_t elem_type, const char *dims,
                                         const int32_t *allowed, size_t n_allowed)
{
    if (!ok(g))
        return NULL;
    return add_vi(g, 0, name, paged_type(g->mb, elem_type, dims, allowed, n_allowed));
}

Onnx__ValueInfoProto *oac_gb_output_paged(oac_gb *g, const char *name,
                                          int32_t elem_type, const char *dims,
                                          const int32_t *allowed, size_t n_allowed)
{
    if (!ok(g))
        return NULL;
    return add_vi(g, 1, name, paged_type(g->mb, elem_type, dims, allowed, n_allowed));
}

void oac_vi_access(oac_gb *g, Onnx__ValueInfoProto *vi, int access)
{
    if (!ok(g) || !vi)
        return;
    vi->has_access = 1;
    /* Any int is stored, so tests can write access values the contract
     * calls access-invalid. */
    vi->access = (Onnx__ValueInfoProto__Access)access;
}

void oac_vi_optional(oac_gb *g, Onnx__ValueInfoProto *vi)
{
    if (!ok(g) || !vi)
        return;
    Onnx__TypeProto *tp = NEW(g->mb, Onnx__TypeProto, onnx__type_proto__init);
    Onnx__TypeProto__Optional *opt =
        NEW(g->mb, Onnx__TypeProto__Optional, onnx__type_proto__optional__init);
    if (!tp || !opt)
        return;
    opt->elem_type = vi->type;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
    tp->optional_type = opt;
    vi->type = tp;
}

void oac_vi_alias_of(oac_gb *g, Onnx__ValueInfoProto *vi, const char *name)
{
    if (!ok(g) || !vi)
        return;
    vi->alias_of = oac_mb_strdup(g->mb, name);
}

void oac_vi_meta(oac_gb *g, Onnx__ValueInfoProto *vi, const char *key,
                 const char *value)
{
    if (!ok(g) || !vi)
        return;
    push_ptr(g->mb, &vi->metadata_props, &vi->n_metadata_props, entry(g->mb, key, value));
}

/* ---- nodes ------------------------------------------------------------ */

Onnx__NodeProto *oac_gb_node(oac_gb *g, const char *op_type,
                             const char *domain, const char *name,
                             const char *inputs, const char *outputs)
{
    if (!ok(g))
        return NULL;
    oac_mb *mb = g->mb;
    Onnx__NodeProto *n = NEW(mb, Onnx__NodeProto, onnx__node_proto__init);
    if (!n)
        return NULL;
    n->op_type = oac_mb_strdup(mb, op_type);
    /* "" is the ONNX domain; left absent, as exporters write it. */
    if (domain && *domain)
        n->domain = oac_mb_strdup(mb, domain);
    n->name = oac_mb_strdup(mb, name);
    push_names(mb, &n->input, &n->n_input, inputs);
    push_names(mb, &n->output, &n->n_output, outputs);
    bool pushed = g->fn ? push_ptr(mb, &g->fn->node, &g->fn->n_node, n)
                        : push_ptr(mb, &g->graph->node, &g->graph->n_node, n);
    return pushed && mb->status == OAC_OK ? n : NULL;
}

Onnx__ValueAliasProto *oac_node_alias(oac_gb *g, Onnx__NodeProto *n,
                                      int out, int in, int kind)
{
    if (!ok(g) || !n)
        return NULL;
    Onnx__ValueAliasProto *a = NEW(g->mb, Onnx__ValueAliasProto, onnx__value_alias_proto__init);
    if (!a)
        return NULL;
    a->has_output_index = 1;
    a->output_index = out;
    a->has_input_index = 1;
    a->input_index = in;
    if (kind >= 0) {
        a->has_kind = 1;
        a->kind = (Onnx__ValueAliasProto__Kind)kind;
    }
    return push_ptr(g->mb, &n->output_alias, &n->n_output_alias, a) ? a : NULL;
}

void oac_node_meta(oac_gb *g, Onnx__NodeProto *n, const char *key,
                   const char *value)
{
    if (!ok(g) || !n)
        return;
    push_ptr(g->mb, &n->metadata_props, &n->n_metadata_props, entry(g->mb, key, value));
}

static Onnx__AttributeProto *new_attr(oac_gb *g, Onnx__NodeProto *n, const char *name,
                                      Onnx__AttributeProto__AttributeType type)
{
    if (!ok(g) || !n)
        return NULL;
    Onnx__AttributeProto *a = NEW(g->mb, Onnx__AttributeProto, onnx__attribute_proto__init);
    if (!a)
        return NULL;
    a->name = oac_mb_strdup(g->mb, name);
    a->has_type = 1;
    a->type = type;
    if (!push_ptr(g->mb, &n->attribute, &n->n_attribute, a))
        return NULL;
    return g->mb->status == OAC_OK ? a : NULL;
}

Onnx__AttributeProto *oac_node_attr_int(oac_gb *g, Onnx__NodeProto *n,
                                        const char *name, int64_t v)
{
    Onnx__AttributeProto *a = new_attr(g, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (a) {
        a->has_i = 1;
        a->i = v;
    }
    return a;
}

Onnx__AttributeProto *oac_node_attr_float(oac_gb *g, Onnx__NodeProto *n,
                                          const char *name, float v)
{
    Onnx__AttributeProto *a = new_attr(g, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    if (a) {
        a->has_f = 1;
        a->f = v;
    }
    return a;
}

Onnx__AttributeProto *oac_node_attr_string(oac_gb *g, Onnx__NodeProto *n,
                                           const char *name, const char *v)
{
    Onnx__AttributeProto *a = new_attr(g, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    if (!a)
        return NULL;
    size_t len = v ? strlen(v) : 0;
    uint8_t *s = arena_alloc(g->mb, len + 1);
    if (!s)
        return NULL;
    if (len)
        memcpy(s, v, len);
    a->has_s = 1;
    a->s.data = s;
    a->s.len = len;
    return a;
}

Onnx__AttributeProto *oac_node_attr_ints(oac_gb *g, Onnx__NodeProto *n,
                                         const char *name, const int64_t *v,
                                         size_t count)
{
    Onnx__AttributeProto *a = new_attr(g, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    if (!a)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        int64_t *slot = push(g->mb, &a->ints, &a->n_ints, sizeof *slot);
        if (!slot)
            return NULL;
        *slot = v[i];
    }
    return a;
}

Onnx__AttributeProto *oac_node_attr_tensor(oac_gb *g, Onnx__NodeProto *n,
                                           const char *name,
                                           Onnx__TensorProto *t)
{
    if (!t)
        return NULL;
    Onnx__AttributeProto *a = new_attr(g, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    if (a)
        a->t = t;
    return a;
}

oac_gb *oac_node_attr_graph(oac_gb *g, Onnx__NodeProto *n, const char *name,
                            const char *graph_name)
{
    Onnx__AttributeProto *a = new_attr(g, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    if (!a)
        return NULL;
    a->g = new_graph(g->mb, graph_name);
    return a->g ? new_gb(g->mb, a->g, NULL) : NULL;
}

/* ---- tensors ---------------------------------------------------------- */

static Onnx__TensorProto *new_tensor(oac_gb *g, const char *name, int32_t elem_type,
                                     const char *dims)
{
    if (!ok(g))
        return NULL;
    Onnx__TensorProto *t = NEW(g->mb, Onnx__TensorProto, onnx__tensor_proto__init);
    if (!t)
        return NULL;
    t->name = oac_mb_strdup(g->mb, name);
    t->has_data_type = 1;
    t->data_type = elem_type;
    if (!tensor_dims(g->mb, t, dims))
        return NULL;
    return g->mb->status == OAC_OK ? t : NULL;
}

/* An initializer of g; in a function body, which has no initializers, a
 * Constant node of that name stands in for it. */
static Onnx__TensorProto *add_init(oac_gb *g, Onnx__TensorProto *t)
{
    if (!t)
        return NULL;
    if (g->fn) {
        Onnx__NodeProto *n = oac_gb_node(g, constant_op(), NULL, NULL, NULL, t->name);
        return oac_node_attr_tensor(g, n, "value", t) ? t : NULL;
    }
    return push_ptr(g->mb, &g->graph->initializer, &g->graph->n_initializer, t) ? t : NULL;
}

Onnx__TensorProto *oac_gb_tensor_raw(oac_gb *g, const char *name,
                                     int32_t elem_type, const char *dims,
                                     const void *raw, size_t len)
{
    Onnx__TensorProto *t = new_tensor(g, name, elem_type, dims);
    if (!t)
        return NULL;
    uint8_t *data = arena_alloc(g->mb, len ? len : 1);
    if (!data)
        return NULL;
    if (len)
        memcpy(data, raw, len);
    t->has_raw_data = 1;
    t->raw_data.data = data;
    t->raw_data.len = len;
    return t;
}

Onnx__TensorProto *oac_gb_init_raw(oac_gb *g, const char *name,
                                   int32_t elem_type, const char *dims,
                                   const void *raw, size_t len)
{
    return add_init(g, oac_gb_tensor_raw(g, name, elem_type, dims, raw, len));
}

/* Typed fields rather than raw_data: the readers of the library must
 * handle both, and the builder's raw helper covers the other. */
static Onnx__TensorProto *tensor_i64(oac_gb *g, const char *name, const char *dims,
                                     const int64_t *v, size_t count)
{
    Onnx__TensorProto *t = new_tensor(g, name, OAC_T_INT64, dims);
    if (!t)
        return NULL;
    int64_t *data = arena_alloc(g->mb, (count ? count : 1) * sizeof *data);
    if (!data)
        return NULL;
    if (count)
        memcpy(data, v, count * sizeof *data);
    t->n_int64_data = count;
    t->int64_data = data;
    return t;
}

Onnx__TensorProto *oac_gb_init_i64(oac_gb *g, const char *name,
                                   const char *dims, const int64_t *v,
                                   size_t count)
{
    return add_init(g, tensor_i64(g, name, dims, v, count));
}

Onnx__TensorProto *oac_gb_init_f32(oac_gb *g, const char *name,
                                   const char *dims, const float *v,
                                   size_t count)
{
    Onnx__TensorProto *t = new_tensor(g, name, OAC_T_FLOAT, dims);
    if (!t)
        return NULL;
    float *data = arena_alloc(g->mb, (count ? count : 1) * sizeof *data);
    if (!data)
        return NULL;
    if (count)
        memcpy(data, v, count * sizeof *data);
    t->n_float_data = count;
    t->float_data = data;
    return add_init(g, t);
}

Onnx__NodeProto *oac_gb_constant_i64(oac_gb *g, const char *name,
                                     const char *dims, const int64_t *v,
                                     size_t count)
{
    Onnx__TensorProto *t = tensor_i64(g, NULL, dims, v, count);
    if (!t)
        return NULL;
    Onnx__NodeProto *n = oac_gb_node(g, constant_op(), NULL, NULL, NULL, name);
    return oac_node_attr_tensor(g, n, "value", t) ? n : NULL;
}

/* ---- serialization ---------------------------------------------------- */

int oac_mb_pack(oac_mb *mb, uint8_t **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (!mb)
        return OAC_EINVAL;
    if (mb->status != OAC_OK)
        return mb->status;
    const ProtobufCMessage *m = &mb->model->base;
    size_t len = protobuf_c_message_get_packed_size(m);
    /* oac_alloc is malloc underneath, so the caller's free() matches. */
    uint8_t *buf = oac_alloc(mb->ctx, len ? len : 1);
    if (!buf)
        return OAC_ENOMEM;
    size_t wrote = protobuf_c_message_pack(m, buf);
    if (wrote != len) {
        oac_dealloc(mb->ctx, buf);
        return oac_err(mb->ctx, OAC_EINTERNAL,
                       "model builder: packed %zu bytes of %zu", wrote, len);
    }
    *out = buf;
    *out_len = len;
    return OAC_OK;
}

int oac_mb_write(oac_mb *mb, const char *path)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    FILE *f = NULL;
    int rc = oac_mb_pack(mb, &buf, &len);
    if (rc != OAC_OK)
        goto done;
    f = fopen(path, "wb");
    if (!f) {
        rc = oac_err(mb->ctx, OAC_EIO, "%s: %s", path, strerror(errno));
        goto done;
    }
    if (fwrite(buf, 1, len, f) != len) {
        rc = oac_err(mb->ctx, OAC_EIO, "%s: %s", path, strerror(errno));
        goto done;
    }
    if (fclose(f) != 0) {
        f = NULL;
        rc = oac_err(mb->ctx, OAC_EIO, "%s: %s", path, strerror(errno));
        goto done;
    }
    f = NULL;
done:
    if (f)
        fclose(f);
    if (buf)
        oac_dealloc(mb->ctx, buf);
    return rc;
}

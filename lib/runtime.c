/* runtime.c: the reference executor (contract section 4 `execution`,
 * section 5 `run`, runtime codes of section 3).
 *
 * Owns oac_run: turning a checked model into an execution plan (slots
 * for every value name of the main graph, nodes in file order with their
 * kernels, which output aliases which input, when each buffer is freed),
 * binding READ_WRITE inputs once, running --steps steps in one or more
 * sessions, advancing position inputs (also those that updates nested
 * in bodies and calls at any depth read), and filling oac_execution.  If,
 * Loop and calls of local functions are kernels (ops.def) that run
 * their bodies in frames (kernel_control.c) under the same memory rule;
 * an If output aliased through its branches is the outer value itself
 * (alias_slot), checked for pointer identity like a port alias.
 *
 * The memory rule is plan.c's (plan.h): a buffer is a node output that
 * does not must-alias an input; it is allocated by its producer's kernel
 * and freed right after the last node reading any member of its alias
 * class; never when a member is a graph output.  When the analysis has a
 * schedule (oac_analysis_schedule) its free points are used, so the
 * measured peak and the planned one follow the same rule by construction;
 * otherwise the same rule is computed here.  Measured figures come from
 * the instrumented allocator (alloc.c), never from the plan.
 *
 * Invariants:
 *  1. A MUST_ALIAS output is the same oac_value object as its input: no
 *     allocation, and after the node its storage pointer is compared with
 *     the one before (pointer identity; alias-broken when it moved).
 *  2. Every READ_WRITE input is bound once per run (bind.c) and fed back
 *     through its alias every step: the storage the caller bound is the
 *     storage every step updates.  Nothing ever copies a whole cache,
 *     except an update without output_alias, which runs out of place as
 *     the contract says and is counted in second_cache_bytes.
 *  3. Refusals (binding-*, unsupported-operator, also for nodes inside
 *     bodies and for nesting past OAC_MAX_DEPTH) happen before the first
 *     node runs; run-time findings (capacity-overflow, alias-broken,
 *     operand-invalid) stop the run at the node, with steps_completed
 *     counting whole steps only.  A failure that stops the run without a
 *     finding (unsupported rank, out of memory, a broken invariant) is
 *     reported as unsupported-operator at the node it stopped at, so the
 *     report's status says error; only usage errors and unreadable
 *     --input/--dump files stay operational failures alone.
 *  4. Sessions share only the model, the analysis, the run's read-only
 *     tables and the bindings; each has its own context, diagnostics,
 *     allocator and values, so K sessions on K threads race only for the
 *     binding owners.  Losers report binding-busy (numbered per session)
 *     and run nothing; the winner's figures fill oac_execution.
 *  5. What a model's values drive is bounded (runtime.h): no buffer above
 *     OAC_RT_MAX_BYTES is attempted (refused at the node for outputs and
 *     workspace, before the run for inputs, on first read for
 *     initializers), and bodies are charged against OAC_RT_MAX_BODY_WORK
 *     per step (kernel_control.c), which ends a Loop whose condition never
 *     turns false.  Building the tables is linear in the model: a local
 *     function's use of its inputs as positions is summarized once
 *     (pos_summary), however often it is called.
 *
 * Figures, where the contract leaves a choice (documented for the man
 * page): steps are numbered from 1; per_step lists completed steps only;
 * the identity totals count every check made, the stopped step's too
 * (alias-broken is checked, not held); measured_peak_bytes is the
 * largest, over steps, of what a step allocates above what earlier steps
 * left live (pages of a paged cache carried over are cache state, like a
 * bound cache), which for dense models is the allocator's absolute
 * high-water mark; planned_peak_bytes is the plan at the run's dims and
 * inputs (plan.c rule 10b: a Loop whose trip count input starts at 0
 * plans no body); peak_matches_plan is their equality, also after a
 * refusal (nothing measured matches a plan of 0); identity counts one
 * check per aliased output per node execution, bodies' nodes included
 * (a Loop body's update once per iteration); second_cache_bytes is the largest step's bytes of
 * out-of-place update outputs, like the plan's per-step figure.  An
 * update without output_alias is not fed back: its output is a new
 * buffer each step and the bound cache is left as it was.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "runtime.h"

/* ------------------------------------------------------------------ */
/* The run's tables (built once, read-only while sessions run)          */
/* ------------------------------------------------------------------ */

typedef enum pos_role { POS_NONE = 0, POS_POSITION, POS_PAGE } pos_role;

typedef struct rt_slot {
    const char *name;
    long producer;                 /* node index, -1 for inputs/initializers */
    size_t port;                   /* output port at producer */
    long root;                     /* slot whose storage this value is */
    long free_after;               /* owners only: node index, -1 never */
    bool graph_output;
    bool graph_input;
    bool constant_out;             /* output of a Constant node */
    const Onnx__ValueInfoProto *vi;
    const Onnx__TensorProto *init;
    long binding;                  /* index into run->bind, or -1 */
    pos_role pos;
    long page_slot;                /* POS_POSITION of a paged update: its page_id */
    /* Data of a non-RW tensor input, prepared once (zero or --input). */
    oac_tensor tmpl;
    bool paged;                    /* Sequence<QuantizedTensor> input */
    oac_paged ptmpl;
    oac_pbfile *file;
} rt_slot;

typedef struct rt_node {
    const Onnx__NodeProto *proto;
    char *name;                    /* node name or "#i" */
    char *location;                /* "/graph/node/i" */
    oac_kernel_fn fn;
    long *in;                      /* slot per input port, -1 omitted */
    long *out;                     /* slot per output port, -1 omitted */
    int *alias;                    /* per output: input port, -1, or
                                      OAC_ALIAS_OUTER (If through branches) */
    long *alias_slot;              /* OAC_ALIAS_OUTER: the outer value's slot */
    long *frees;                   /* owner slots freed after this node */
    size_t n_frees;
    bool cache_update;             /* counts toward second_cache_bytes */
    int values_port;               /* update values, for position lengths */
    bool paged;
    long pos_slot;                 /* position input slot, or -1 */
} rt_node;

typedef struct rt_run {
    oac_ctx *ctx;
    const oac_model *model;
    const oac_analysis *analysis;
    const oac_run_opts *opts;
    const oac_run_hooks *hooks;
    const Onnx__GraphProto *g;
    rt_slot *slots;
    size_t n_slots, cap_slots;
    oac_strmap names;              /* name -> slot index + 1 */
    rt_node *nodes;
    size_t n_nodes;
    size_t max_ports;
    oac_binding **bind;            /* acquisition order */
    oac_value **bind_val;          /* the shared value of each binding */
    long *bind_slot;
    const char **bind_why;         /* refusal reason decided by the run, or NULL */
    size_t n_bind;
    oac_binding *own_bind;         /* bindings this run made */
    oac_value *own_val;
    oac_ralloc balloc;             /* storage the run binds (excluded) */
    uint64_t steps;
} rt_run;

/* ------------------------------------------------------------------ */
/* Sessions                                                             */
/* ------------------------------------------------------------------ */

struct oac_session {
    rt_run *run;
    oac_ctx *ctx;
    oac_diags *diags;
    bool own_ctx;
    oac_ralloc alloc;
    oac_value *objs;               /* per slot: storage owner objects */
    oac_value **vals;              /* per slot: current value */
    bool *loaded;                  /* initializer read */
    void **ws;                     /* workspaces of the running node */
    size_t *ws_bytes;
    size_t n_ws, cap_ws;
    int64_t *pos_len;              /* per slot: length this step, -1 none */
    int64_t *page_size;            /* per slot: page size of its update */
    oac_value **in_buf, **out_buf;
    const void **before;           /* per output: storage before the kernel */
    oac_step_stats *steps;
    size_t n_steps, cap_steps;
    oac_step_stats *cur_step;      /* the running step's figures */
    uint64_t checked, held;
    uint64_t second_cache;         /* largest step's out-of-place bytes */
    uint64_t step_second;          /* this step's */
    uint64_t steps_completed;
    uint64_t work;                 /* body work charged this step */
    bool winner;
    unsigned number;               /* 1-based when several run; else 0 */
    long stop_node;                /* main-graph node the run stopped at, or -1 */
    int rc;
    pthread_t thread;
};

static const char *graph_name(const rt_run *r)
{
    return r->g->name ? r->g->name : "main";
}

static int node_fail(oac_session *s, const rt_node *n, oac_code code,
                     const char *fmt, ...) OAC_PRINTF(4, 5);
static int node_fail(oac_session *s, const rt_node *n, oac_code code,
                     const char *fmt, ...)
{
    oac_where w = { .graph = graph_name(s->run), .node = n->name,
                    .op_type = n->proto->op_type, .location = n->location };
    va_list ap;
    va_start(ap, fmt);
    int rc = oac_diag_vadd(s->diags, code, &w, fmt, ap);
    va_end(ap);
    return rc ? rc : OAC_ERUNTIME;
}

/* ---- kernel helpers (runtime.h) ---------------------------------- */

static const rt_node *call_node(const oac_kernel_call *k)
{
    return &k->session->run->nodes[k->node_index];
}

int oac_kernel_fail(oac_kernel_call *k, oac_code code, const char *fmt, ...)
{
    /* Inside a body the call names its own place; in the main graph the
     * node's. */
    oac_where w = { .graph = k->graph_name, .node = k->node_name,
                    .op_type = k->node->op_type, .location = k->location };
    if (!k->frame) {
        const rt_node *n = call_node(k);
        w = (oac_where){ .graph = graph_name(k->session->run), .node = n->name,
                         .op_type = n->proto->op_type, .location = n->location };
    }
    va_list ap;
    va_start(ap, fmt);
    int rc = oac_diag_vadd(k->diags, code, &w, fmt, ap);
    va_end(ap);
    return rc ? rc : OAC_ERUNTIME;
}

int oac_kernel_output(oac_kernel_call *k, size_t i, int32_t elem_type,
                      int rank, const int64_t *dims, oac_tensor **out)
{
    *out = NULL;
    if (i >= k->n_out || !k->out[i])
        return oac_err(k->ctx, OAC_EINTERNAL, "node %s: output %zu absent",
                       k->node_name, i);
    if (rank < 0 || rank > OAC_RT_MAX_RANK)
        return oac_err(k->ctx, OAC_EUNSUPPORTED,
                       "node %s: output rank %d exceeds %d", k->node_name,
                       rank, OAC_RT_MAX_RANK);
    oac_value *v = k->out[i];
    if (k->out_alias[i] >= 0) {
        /* The view is the input itself; an output that would not fit it
         * cannot alias it. */
        bool same = v->kind == OAC_VAL_TENSOR && v->t.elem_type == elem_type &&
                    v->t.rank == rank;
        for (int d = 0; same && d < rank; d++)
            same = v->t.dims[d] == dims[d];
        if (!same)
            return oac_kernel_fail(k, OAC_ALIAS_BROKEN,
                                   "node %s: output %zu must alias input %d but "
                                   "differs from it in type or shape",
                                   k->node_name, i, k->out_alias[i]);
        *out = &v->t;
        return OAC_OK;
    }
    if (v->kind != OAC_VAL_NONE)
        return oac_err(k->ctx, OAC_EINTERNAL, "node %s: output %zu produced twice",
                       k->node_name, i);
    oac_tensor t = { .elem_type = elem_type, .rank = rank };
    for (int d = 0; d < rank; d++)
        t.dims[d] = dims[d];
    uint64_t n, bytes;
    if (!oac_tensor_numel_rt(&t, &n) || !oac_elem_bytes(elem_type, n, &bytes) ||
        bytes > SIZE_MAX)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s: output %zu has an invalid or overflowing "
                               "shape or element type %d", k->node_name, i,
                               elem_type);
    if (bytes > OAC_RT_MAX_BYTES)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node %s: output %zu would need %" PRIu64 " bytes, above "
                               "the reference runtime's limit of %" PRIu64 " per buffer",
                               k->node_name, i, bytes, OAC_RT_MAX_BYTES);
    t.bytes = (size_t)bytes;
    t.data = bytes ? oac_ralloc_get(k->alloc, t.bytes, false) : NULL;
    if (bytes && !t.data)
        return OAC_ENOMEM;
    v->kind = OAC_VAL_TENSOR;
    v->storage = bytes ? OAC_STORE_OWNED : OAC_STORE_NONE;
    v->writable = true;
    v->t = t;
    *out = &v->t;
    return OAC_OK;
}

int oac_kernel_workspace(oac_kernel_call *k, size_t bytes, void **out)
{
    oac_session *s = k->session;
    *out = NULL;
    if ((uint64_t)bytes > OAC_RT_MAX_BYTES)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node %s: a workspace of %zu bytes is above the reference "
                               "runtime's limit of %" PRIu64 " per buffer", k->node_name,
                               bytes, OAC_RT_MAX_BYTES);
    if (s->n_ws == s->cap_ws) {
        size_t cap = s->cap_ws;
        if (oac_grow(s->ctx, (void **)&s->ws, &cap, s->n_ws + 1, sizeof *s->ws))
            return OAC_ENOMEM;
        size_t cap2 = s->cap_ws;
        if (oac_grow(s->ctx, (void **)&s->ws_bytes, &cap2, s->n_ws + 1,
                     sizeof *s->ws_bytes))
            return OAC_ENOMEM;
        s->cap_ws = cap < cap2 ? cap : cap2;
    }
    void *p = oac_ralloc_get(k->alloc, bytes, true);
    if (!p)
        return OAC_ENOMEM;
    s->ws[s->n_ws] = p;
    s->ws_bytes[s->n_ws++] = bytes;
    *out = p;
    return OAC_OK;
}

const oac_tensor *oac_kernel_tensor_in(oac_kernel_call *k, size_t i)
{
    if (i < k->n_in && k->in[i] && k->in[i]->kind == OAC_VAL_TENSOR)
        return &k->in[i]->t;
    oac_kernel_fail(k, OAC_OPERAND_INVALID,
                    "node %s (%s): input %zu is missing or not a tensor",
                    k->node_name, k->node->op_type, i);
    return NULL;
}

int oac_kernel_ints_in(oac_kernel_call *k, size_t i, int64_t *v, size_t max,
                       size_t *n)
{
    *n = 0;
    const oac_tensor *t = oac_kernel_tensor_in(k, i);
    if (!t)
        return OAC_ERUNTIME;
    uint64_t cnt;
    if (!oac_tensor_numel_rt(t, &cnt) || cnt > max)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node %s: input %zu has too many elements",
                               k->node_name, i);
    for (uint64_t j = 0; j < cnt; j++) {
        if (t->elem_type == OAC_T_INT64) {
            memcpy(&v[j], (const uint8_t *)t->data + j * 8, 8);
        } else if (t->elem_type == OAC_T_INT32) {
            int32_t x;
            memcpy(&x, (const uint8_t *)t->data + j * 4, 4);
            v[j] = x;
        } else {
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node %s: input %zu must be INT64 or INT32",
                                   k->node_name, i);
        }
    }
    *n = (size_t)cnt;
    return OAC_OK;
}

/* ------------------------------------------------------------------ */
/* Building the run's tables                                             */
/* ------------------------------------------------------------------ */

static long slot_of(const rt_run *r, const char *name)
{
    void *v = oac_strmap_get(&r->names, name);
    return v ? (long)((uintptr_t)v - 1) : -1;
}

static long slot_add(rt_run *r, const char *name)
{
    long s = slot_of(r, name);
    if (s >= 0)
        return s;
    if (oac_grow(r->ctx, (void **)&r->slots, &r->cap_slots, r->n_slots + 1,
                 sizeof *r->slots))
        return -2;
    rt_slot *sl = &r->slots[r->n_slots];
    memset(sl, 0, sizeof *sl);
    sl->name = name;
    sl->producer = -1;
    sl->root = (long)r->n_slots;
    sl->free_after = -1;
    sl->binding = -1;
    sl->page_slot = -1;
    if (oac_strmap_put(&r->names, name, (void *)(uintptr_t)(r->n_slots + 1)))
        return -2;
    return (long)r->n_slots++;
}

/* The concrete dims of a declared shape, resolving dim_params through the
 * run's --dim and the analysis.  OAC_EINVAL when one stays unknown. */
static int resolve_dims(rt_run *r, const char *what,
                        const Onnx__TensorShapeProto *shape, int *rank,
                        int64_t *dims)
{
    if (!shape)
        return oac_err(r->ctx, OAC_EINVAL, "input '%s' has no shape", what);
    if (shape->n_dim > OAC_RT_MAX_RANK)
        return oac_err(r->ctx, OAC_EUNSUPPORTED, "input '%s': rank %zu exceeds %d",
                       what, shape->n_dim, OAC_RT_MAX_RANK);
    *rank = (int)shape->n_dim;
    for (size_t i = 0; i < shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = shape->dim[i];
        int64_t v = -1;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            v = d->dim_value;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) {
            for (size_t j = 0; j < r->opts->n_dims; j++)
                if (r->opts->dims[j].name &&
                    !strcmp(r->opts->dims[j].name, d->dim_param))
                    v = r->opts->dims[j].value;
            if (v < 0 && r->analysis)
                v = oac_analysis_dim(r->analysis, d->dim_param);
            if (v < 0)
                return oac_err(r->ctx, OAC_EINVAL,
                               "dimension '%s' of input '%s' is unknown (give --dim %s=N)",
                               d->dim_param, what, d->dim_param);
        }
        if (v < 0)
            return oac_err(r->ctx, OAC_EINVAL, "dimension %zu of input '%s' is unknown",
                           i, what);
        dims[i] = v;
    }
    return OAC_OK;
}

static const oac_input_file *input_file(const rt_run *r, const char *name)
{
    for (size_t i = 0; i < r->opts->n_inputs; i++)
        if (r->opts->inputs[i].name && !strcmp(r->opts->inputs[i].name, name))
            return &r->opts->inputs[i];
    return NULL;
}

static bool is_readonly_opt(const rt_run *r, const char *name)
{
    for (size_t i = 0; i < r->opts->n_readonly; i++)
        if (r->opts->readonly[i] && !strcmp(r->opts->readonly[i], name))
            return true;
    return false;
}

static int tensor_bytes(rt_run *r, oac_tensor *t, const char *what)
{
    uint64_t n, b;
    if (!oac_tensor_numel_rt(t, &n) || !oac_elem_bytes(t->elem_type, n, &b) ||
        b > SIZE_MAX)
        return oac_err(r->ctx, OAC_EINVAL,
                       "input '%s': element type %d or shape has no fixed size",
                       what, t->elem_type);
    if (b > OAC_RT_MAX_BYTES)
        return oac_err(r->ctx, OAC_EUNSUPPORTED,
                       "input '%s' would need %" PRIu64 " bytes, above the reference "
                       "runtime's limit of %" PRIu64 " per buffer", what, b,
                       OAC_RT_MAX_BYTES);
    t->bytes = (size_t)b;
    return OAC_OK;
}

/* Fill a tensor template from an --input TensorProto file: the file's
 * dims win; the data is read into run-bound (excluded) storage. */
static int load_tensor_file(rt_run *r, rt_slot *sl, const oac_input_file *f,
                            oac_diags *diags)
{
    int rc = oac_pbfile_load(r->ctx, &sl->file, f->path,
                             &onnx__tensor_proto__descriptor, diags);
    if (rc)
        return rc;
    const Onnx__TensorProto *tp = (const Onnx__TensorProto *)sl->file->msg;
    if (tp->n_dims > OAC_RT_MAX_RANK)
        return oac_err(r->ctx, OAC_EUNSUPPORTED, "--input %s: rank too large", f->name);
    oac_tensor t = { .elem_type = tp->data_type, .rank = (int)tp->n_dims };
    for (size_t i = 0; i < tp->n_dims; i++)
        t.dims[i] = tp->dims[i];
    if ((rc = tensor_bytes(r, &t, f->name)))
        return rc;
    if (sl->tmpl.elem_type && t.elem_type != sl->tmpl.elem_type)
        return oac_err(r->ctx, OAC_EINVAL, "--input %s: element type %d, declared %d",
                       f->name, t.elem_type, sl->tmpl.elem_type);
    t.data = t.bytes ? oac_ralloc_bound(&r->balloc, t.bytes) : NULL;
    if (t.bytes && !t.data)
        return OAC_ENOMEM;
    sl->tmpl = t;
    return oac_tensor_read(r->ctx, r->model, tp, t.data, t.bytes);
}

static int load_paged_file(rt_run *r, rt_slot *sl, const oac_input_file *f,
                           oac_diags *diags)
{
    int rc = oac_pbfile_load(r->ctx, &sl->file, f->path,
                             &onnx__sequence_proto__descriptor, diags);
    if (rc)
        return rc;
    const Onnx__SequenceProto *sp = (const Onnx__SequenceProto *)sl->file->msg;
    if ((rc = oac_paged_reserve(r->ctx, &sl->ptmpl, sp->n_quantized_tensor_values)))
        return rc;
    for (size_t i = 0; i < sp->n_quantized_tensor_values; i++) {
        const Onnx__QuantizedTensorProto *q = sp->quantized_tensor_values[i];
        oac_payload pl;
        if (!oac_qtensor_payload(q, &pl) || (pl.len && !pl.bytes))
            return oac_err(r->ctx, OAC_EPARSE, "--input %s: page %zu has no raw_data",
                           f->name, i);
        oac_page *pg = &sl->ptmpl.pages[i];
        pg->quantized_type = q->has_quantized_type ? q->quantized_type : 0;
        pg->bytes = pl.len;
        pg->bound = true;
        pg->data = pl.len ? oac_ralloc_bound(&r->balloc, pl.len) : NULL;
        if (pl.len && !pg->data)
            return OAC_ENOMEM;
        if (pl.len)
            memcpy(pg->data, pl.bytes, pl.len);
        sl->ptmpl.n_pages = i + 1;
    }
    return OAC_OK;
}

/* Graph inputs: types, dims, --input data, bindings of READ_WRITE ones. */
static int setup_inputs(rt_run *r, oac_diags *diags)
{
    const Onnx__GraphProto *g = r->g;
    int rc;
    for (size_t i = 0; i < r->opts->n_inputs; i++) {
        long s = r->opts->inputs[i].name ? slot_of(r, r->opts->inputs[i].name) : -1;
        if (s < 0 || !r->slots[s].graph_input)
            return oac_err(r->ctx, OAC_EINVAL, "--input %s: no graph input of that name",
                           r->opts->inputs[i].name ? r->opts->inputs[i].name : "");
    }
    for (size_t i = 0; i < r->opts->n_readonly; i++) {
        long s = r->opts->readonly[i] ? slot_of(r, r->opts->readonly[i]) : -1;
        if (s < 0 || !r->slots[s].graph_input || !r->slots[s].vi->has_access ||
            r->slots[s].vi->access != ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE)
            return oac_err(r->ctx, OAC_EINVAL, "--readonly %s: no READ_WRITE cache of that name",
                           r->opts->readonly[i] ? r->opts->readonly[i] : "");
    }
    size_t n_rw = 0;
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        if (vi->has_access && vi->access == ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE)
            n_rw++;
    }
    r->own_bind = oac_calloc(r->ctx, n_rw ? n_rw : 1, sizeof *r->own_bind);
    r->own_val = oac_calloc(r->ctx, n_rw ? n_rw : 1, sizeof *r->own_val);
    r->bind = oac_calloc(r->ctx, n_rw ? n_rw : 1, sizeof *r->bind);
    r->bind_val = oac_calloc(r->ctx, n_rw ? n_rw : 1, sizeof *r->bind_val);
    r->bind_slot = oac_calloc(r->ctx, n_rw ? n_rw : 1, sizeof *r->bind_slot);
    r->bind_why = oac_calloc(r->ctx, n_rw ? n_rw : 1, sizeof *r->bind_why);
    if (!r->own_bind || !r->own_val || !r->bind || !r->bind_val || !r->bind_slot ||
        !r->bind_why)
        return OAC_ENOMEM;

    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        long s = slot_of(r, vi->name);
        rt_slot *sl = &r->slots[s];
        const Onnx__TypeProto *tp = vi->type;
        const oac_input_file *f = input_file(r, vi->name);
        bool rw = vi->has_access && vi->access == ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE;
        if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE &&
            tp->sequence_type->elem_type &&
            tp->sequence_type->elem_type->value_case == ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE) {
            const Onnx__TypeProto__QuantizedTensor *qt =
                tp->sequence_type->elem_type->quantized_tensor_type;
            int rank;
            int64_t dims[OAC_RT_MAX_RANK];
            if ((rc = resolve_dims(r, vi->name, qt->shape, &rank, dims)))
                return rc;
            if (rank != 4)
                return oac_err(r->ctx, OAC_EINVAL, "paged cache '%s' must have rank 4",
                               vi->name);
            sl->paged = true;
            sl->ptmpl.elem_type = qt->elem_type;
            memcpy(sl->ptmpl.page_dims, dims, sizeof sl->ptmpl.page_dims);
            sl->ptmpl.allowed = qt->allowed_quantized_type;
            sl->ptmpl.n_allowed = qt->n_allowed_quantized_type;
            if (f && (rc = load_paged_file(r, sl, f, diags)))
                return rc;
        } else if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
            sl->tmpl.elem_type = tp->tensor_type->elem_type;
            if (f) {
                if ((rc = load_tensor_file(r, sl, f, diags)))
                    return rc;
            } else {
                if ((rc = resolve_dims(r, vi->name, tp->tensor_type->shape,
                                       &sl->tmpl.rank, sl->tmpl.dims)))
                    return rc;
                if ((rc = tensor_bytes(r, &sl->tmpl, vi->name)))
                    return rc;
                /* An initializer that is also an input is its default. */
                if (!rw && sl->init) {
                    sl->tmpl.data = oac_ralloc_bound(&r->balloc, sl->tmpl.bytes);
                    if (sl->tmpl.bytes && !sl->tmpl.data)
                        return OAC_ENOMEM;
                    if ((rc = oac_tensor_read(r->ctx, r->model, sl->init,
                                              sl->tmpl.data, sl->tmpl.bytes)))
                        return rc;
                }
            }
        } else {
            return oac_err(r->ctx, OAC_EUNSUPPORTED,
                           "input '%s': the runtime runs tensors and paged caches only",
                           vi->name);
        }
        if (!rw)
            continue;

        /* Bind the cache: the caller's binding from the hooks, else
         * storage this run owns (zeroed, or the --input data). */
        size_t b = r->n_bind++;
        oac_binding *bd = NULL;
        for (size_t h = 0; r->hooks && h < r->hooks->n_bindings; h++)
            if (!strcmp(r->hooks->bindings[h]->name, vi->name))
                bd = r->hooks->bindings[h];
        oac_value *val = &r->own_val[b];
        if (sl->paged) {
            val->kind = OAC_VAL_PAGED;
            val->storage = OAC_STORE_BOUND;
            val->p = sl->ptmpl;
            sl->ptmpl.pages = NULL;       /* moved into the shared value */
            sl->ptmpl.n_pages = sl->ptmpl.cap_pages = 0;
            if (!bd) {
                bd = &r->own_bind[b];
                oac_binding_init(bd, vi->name, val, 0, true);
            }
        } else {
            /* The declared capacity, whatever an --input file holds. */
            oac_tensor decl = { .elem_type = sl->tmpl.elem_type };
            if ((rc = resolve_dims(r, vi->name, tp->tensor_type->shape, &decl.rank,
                                   decl.dims)) ||
                (rc = tensor_bytes(r, &decl, vi->name)))
                return rc;
            if (f && sl->tmpl.bytes >= decl.bytes) {
                bool same = sl->tmpl.rank == decl.rank;
                for (int d = 0; same && d < decl.rank; d++)
                    same = sl->tmpl.dims[d] == decl.dims[d];
                if (!same)
                    return oac_err(r->ctx, OAC_EINVAL,
                                   "--input %s: dims differ from the declared cache shape",
                                   vi->name);
            }
            if (!bd) {
                bd = &r->own_bind[b];
                void *data = sl->tmpl.data;
                if (!data && sl->tmpl.bytes) {
                    data = oac_ralloc_bound(&r->balloc, sl->tmpl.bytes);
                    if (!data)
                        return OAC_ENOMEM;
                    sl->tmpl.data = data;
                }
                oac_binding_init(bd, vi->name, data, sl->tmpl.bytes, true);
            }
            val->kind = OAC_VAL_TENSOR;
            val->storage = OAC_STORE_BOUND;
            val->t = decl;
            val->t.data = bd->data;
            val->t.bytes = decl.bytes;
        }
        /* Why this cache must not be written, decided by the run; a
         * caller's binding object is left as it was given. */
        const char *why = is_readonly_opt(r, vi->name) ? "storage declared read-only (--readonly)"
                        : sl->init ? "an initializer" : NULL;
        r->bind_why[b] = why;
        val->writable = !why && bd->writable && !bd->is_initializer && !bd->is_constant;
        r->bind[b] = bd;
        r->bind_val[b] = val;
        r->bind_slot[b] = s;
        sl->binding = (long)b;
    }
    return OAC_OK;
}

/* The storage need of binding b (its declared capacity). */
static uint64_t binding_need(const rt_run *r, size_t b)
{
    const oac_value *v = r->bind_val[b];
    return v->kind == OAC_VAL_TENSOR ? v->t.bytes : 0;
}

/* Which port of a cache-update node is its position, values and page:
 * its row's (ops.def), -1 for none. */
static void update_ports(const Onnx__NodeProto *n, int *pos, int *values,
                         int *page, bool *paged)
{
    const oac_op *op = oac_op_find(n->domain, n->op_type);
    *pos = op ? op->position_port : -1;
    *values = op ? op->values_port : -1;
    *page = op ? op->page_id_port : -1;
    *paged = oac_op_has(op, OAC_OPF_PAGED);
}

static oac_kernel_fn override_fn(const rt_run *r, const Onnx__NodeProto *n,
                                       bool *found)
{
    *found = false;
    const char *d = oac_domain_is_onnx(n->domain) ? "" : n->domain;
    for (size_t i = 0; r->hooks && i < r->hooks->n_overrides; i++) {
        const oac_kernel_override *o = &r->hooks->overrides[i];
        const char *od = oac_domain_is_onnx(o->domain) ? "" : o->domain;
        if (!strcmp(od, d) && o->op_type && !strcmp(o->op_type, n->op_type)) {
            *found = true;
            return o->fn;
        }
    }
    return NULL;
}

/* Cache updates inside bodies (If branches, Loop bodies, local functions,
 * nested in any way) whose position (or page_id) is a main-graph input:
 * that input advances after each step as for the main graph's updates.
 * Inside a subgraph a name is the enclosing scope's; inside a function
 * body it is the call's argument for that function input (anything else
 * is local to the function).  A body defining the same name itself is
 * not told apart (the input is then advanced by its own updates only,
 * as nothing records a length for it). */
static void mark_position(rt_run *r, const char *pos_name, const char *page_name)
{
    long ps = pos_name && *pos_name ? slot_of(r, pos_name) : -1;
    if (ps < 0 || !r->slots[ps].graph_input)
        return;
    r->slots[ps].pos = POS_POSITION;
    long gs = page_name && *page_name ? slot_of(r, page_name) : -1;
    if (gs >= 0 && r->slots[gs].graph_input) {
        r->slots[gs].pos = POS_PAGE;
        r->slots[ps].page_slot = gs;
    }
}

/* What a local function's body does with its inputs: input k feeds a
 * position port (its page_id being input page[k], or -1), through any
 * nesting.  Built once per function (the walk stays linear however often
 * functions call each other). */
typedef struct pos_summary {
    int state;                     /* 0 new, 1 being built, 2 done */
    bool *position;                /* per function input */
    long *page;
} pos_summary;

typedef struct pos_walk {
    rt_run *r;
    pos_summary *sums;             /* per ModelProto.functions entry */
    const Onnx__FunctionProto *f;  /* NULL: names are the main graph's */
    pos_summary *sum;              /* f's */
} pos_walk;

static long fn_input(const Onnx__FunctionProto *f, const char *name)
{
    for (size_t k = 0; name && *name && k < f->n_input; k++)
        if (f->input[k] && !strcmp(f->input[k], name))
            return (long)k;
    return -1;
}

static void pos_mark(pos_walk *w, const char *pos, const char *page)
{
    if (!w->f) {
        mark_position(w->r, pos, page);
        return;
    }
    long k = fn_input(w->f, pos);
    if (k < 0)
        return;
    w->sum->position[k] = true;
    long j = fn_input(w->f, page);
    if (j >= 0)
        w->sum->page[k] = j;
}

static int pos_nodes(pos_walk *w, Onnx__NodeProto *const *nodes, size_t n, int depth);

/* The summary of function f (fi its index), built on first use. */
static int pos_function(pos_walk *w, const Onnx__FunctionProto *f, size_t fi, int depth,
                        const pos_summary **out)
{
    pos_summary *sum = &w->sums[fi];
    *out = sum;
    if (sum->state)
        return OAC_OK;     /* done, or a recursive call (refused by the precheck) */
    sum->state = 1;
    size_t n = f->n_input ? f->n_input : 1;
    sum->position = oac_calloc(w->r->ctx, n, sizeof *sum->position);
    sum->page = oac_calloc(w->r->ctx, n, sizeof *sum->page);
    if (!sum->position || !sum->page)
        return OAC_ENOMEM;
    for (size_t k = 0; k < f->n_input; k++)
        sum->page[k] = -1;
    pos_walk in = { w->r, w->sums, f, sum };
    int rc = pos_nodes(&in, f->node, f->n_node, depth);
    sum->state = 2;
    return rc;
}

static int pos_nodes(pos_walk *w, Onnx__NodeProto *const *nodes, size_t n, int depth)
{
    if (depth > OAC_MAX_DEPTH)
        return OAC_OK;     /* refused by the precheck */
    const Onnx__ModelProto *mp = w->r->model->proto;
    for (size_t i = 0; i < n; i++) {
        const Onnx__NodeProto *m = nodes[i];
        int pos, values, page;
        bool paged;
        update_ports(m, &pos, &values, &page, &paged);
        if (pos >= 0 && (size_t)pos < m->n_input)
            pos_mark(w, m->input[pos],
                     page >= 0 && (size_t)page < m->n_input ? m->input[page] : NULL);
        for (size_t a = 0; a < m->n_attribute; a++) {
            const Onnx__AttributeProto *at = m->attribute[a];
            size_t ng = at->g ? 1 : at->n_graphs;
            for (size_t k = 0; k < ng; k++) {
                const Onnx__GraphProto *g = at->g ? at->g : at->graphs[k];
                int rc = pos_nodes(w, g->node, g->n_node, depth + 1);
                if (rc)
                    return rc;
            }
        }
        const Onnx__FunctionProto *f = oac_kernel_lookup(m->domain, m->op_type)
                                       ? NULL : oac_rt_function(mp, m);
        if (!f)
            continue;
        size_t fi = 0;
        while (fi < mp->n_functions && mp->functions[fi] != f)
            fi++;
        const pos_summary *sum;
        int rc = pos_function(w, f, fi, depth + 1, &sum);
        if (rc)
            return rc;
        for (size_t k = 0; sum->position && k < f->n_input && k < m->n_input; k++) {
            if (!sum->position[k])
                continue;
            long j = sum->page[k];
            pos_mark(w, m->input[k],
                     j >= 0 && (size_t)j < m->n_input ? m->input[j] : NULL);
        }
    }
    return OAC_OK;
}

/* The position inputs main-graph node np's bodies read (np's own ports
 * are build_nodes' business, but marking them again is harmless). */
static int mark_nested_positions(rt_run *r, const Onnx__NodeProto *np, pos_summary *sums)
{
    pos_walk w = { r, sums, NULL, NULL };
    Onnx__NodeProto *one[1] = { (Onnx__NodeProto *)np };
    return pos_nodes(&w, one, 1, 0);
}

int oac_rt_note_position(oac_session *s, const Onnx__NodeProto *np,
                         oac_value *const *in, const oac_where *w)
{
    int pos, values, page;
    bool paged;
    update_ports(np, &pos, &values, &page, &paged);
    if (pos < 0 || (size_t)pos >= np->n_input || !in[pos])
        return OAC_OK;
    rt_run *r = s->run;
    long sl = -1;
    for (size_t i = 0; i < r->n_slots && sl < 0; i++)
        if (r->slots[i].pos == POS_POSITION && s->vals[i] == in[pos])
            sl = (long)i;
    if (sl < 0)
        return OAC_OK;
    int64_t len = -1;
    const oac_value *v = values >= 0 && (size_t)values < np->n_input ? in[values] : NULL;
    if (v && v->kind == OAC_VAL_TENSOR && v->t.rank >= 1) {
        int64_t axis = paged ? -2 : oac_attr_int(np, "axis", -2);
        if (axis < 0)
            axis += v->t.rank;
        if (axis >= 0 && axis < v->t.rank)
            len = v->t.dims[axis];
    }
    int64_t *rec = &s->pos_len[sl];
    if (len >= 0 && *rec >= 0 && *rec != len) {
        int rc = oac_diag_add(s->diags, OAC_OPERAND_INVALID, w,
                              "position input '%s' feeds updates of different lengths "
                              "(%" PRId64 " and %" PRId64 ")", r->slots[sl].name, *rec, len);
        return rc ? rc : OAC_ERUNTIME;
    }
    if (len >= 0)
        *rec = len;
    if (paged && in[0] && in[0]->kind == OAC_VAL_PAGED)
        s->page_size[sl] = in[0]->p.page_dims[2];
    return OAC_OK;
}

static bool rt_has_kernel(void *arg, const Onnx__NodeProto *np)
{
    bool found;
    oac_kernel_fn fn = override_fn(arg, np, &found);
    return found ? fn != NULL : oac_kernel_lookup(np->domain, np->op_type) != NULL;
}

static bool holds_body(const rt_run *r, const Onnx__NodeProto *np)
{
    for (size_t a = 0; a < np->n_attribute; a++)
        if (np->attribute[a]->g || np->attribute[a]->n_graphs)
            return true;
    return oac_rt_function(r->model->proto, np) != NULL;
}

static int build_nodes_memo(rt_run *r, oac_diags *diags, int *fmemo,
                            pos_summary *sums);

static int build_nodes(rt_run *r, oac_diags *diags)
{
    int rc;
    size_t nf = r->model->proto->n_functions;
    int *fmemo = oac_calloc(r->ctx, nf ? nf : 1, sizeof *fmemo);
    pos_summary *sums = oac_calloc(r->ctx, nf ? nf : 1, sizeof *sums);
    rc = fmemo && sums ? build_nodes_memo(r, diags, fmemo, sums) : OAC_ENOMEM;
    for (size_t i = 0; sums && i < nf; i++) {
        oac_dealloc(r->ctx, sums[i].position);
        oac_dealloc(r->ctx, sums[i].page);
    }
    oac_dealloc(r->ctx, sums);
    oac_dealloc(r->ctx, fmemo);
    return rc;
}

static int build_nodes_memo(rt_run *r, oac_diags *diags, int *fmemo,
                            pos_summary *sums)
{
    const Onnx__GraphProto *g = r->g;
    int rc = OAC_OK;
    /* Slots: inputs, initializers, then node outputs in order. */
    for (size_t i = 0; i < g->n_input; i++) {
        long s = slot_add(r, g->input[i]->name ? g->input[i]->name : "");
        if (s < 0)
            return OAC_ENOMEM;
        r->slots[s].graph_input = true;
        r->slots[s].vi = g->input[i];
    }
    for (size_t i = 0; i < g->n_initializer; i++) {
        long s = slot_add(r, g->initializer[i]->name ? g->initializer[i]->name : "");
        if (s < 0)
            return OAC_ENOMEM;
        r->slots[s].init = g->initializer[i];
    }
    r->n_nodes = g->n_node;
    r->nodes = oac_calloc(r->ctx, g->n_node ? g->n_node : 1, sizeof *r->nodes);
    if (!r->nodes)
        return OAC_ENOMEM;
    bool unsupported = false;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *np = g->node[i];
        rt_node *n = &r->nodes[i];
        n->proto = np;
        n->pos_slot = -1;
        n->name = np->name && *np->name ? oac_strdup(r->ctx, np->name)
                                        : oac_asprintf(r->ctx, "#%zu", i);
        n->location = oac_asprintf(r->ctx, "/graph/node/%zu", i);
        n->in = oac_calloc(r->ctx, np->n_input + 1, sizeof *n->in);
        n->out = oac_calloc(r->ctx, np->n_output + 1, sizeof *n->out);
        n->alias = oac_calloc(r->ctx, np->n_output + 1, sizeof *n->alias);
        n->alias_slot = oac_calloc(r->ctx, np->n_output + 1, sizeof *n->alias_slot);
        if (!n->name || !n->location || !n->in || !n->out || !n->alias || !n->alias_slot)
            return OAC_ENOMEM;
        if (np->n_input > r->max_ports)
            r->max_ports = np->n_input;
        if (np->n_output > r->max_ports)
            r->max_ports = np->n_output;
        for (size_t j = 0; j < np->n_input; j++) {
            const char *nm = np->input[j];
            if (!nm || !*nm) {
                n->in[j] = -1;
                continue;
            }
            n->in[j] = slot_of(r, nm);
            if (n->in[j] < 0)
                return oac_err(r->ctx, OAC_EUNSUPPORTED,
                               "node %s reads '%s' before any node produces it "
                               "(the runtime runs nodes in file order)", n->name, nm);
        }
        for (size_t j = 0; j < np->n_output; j++) {
            n->alias[j] = -1;
            const char *nm = np->output[j];
            if (!nm || !*nm) {
                n->out[j] = -1;
                continue;
            }
            long s = slot_of(r, nm);
            if (s >= 0)
                return oac_err(r->ctx, OAC_EUNSUPPORTED, "value '%s' is produced twice", nm);
            if ((s = slot_add(r, nm)) < 0)
                return OAC_ENOMEM;
            r->slots[s].producer = (long)i;
            r->slots[s].port = j;
            r->slots[s].constant_out =
                oac_op_has(oac_op_find(np->domain, np->op_type), OAC_OPF_CONSTANT);
            n->out[j] = s;
        }
        for (size_t a = 0; a < np->n_output_alias; a++) {
            const Onnx__ValueAliasProto *va = np->output_alias[a];
            if (!va->has_kind || va->kind != ONNX__VALUE_ALIAS_PROTO__KIND__MUST_ALIAS)
                continue;
            if (va->output_index < 0 || (size_t)va->output_index >= np->n_output ||
                va->input_index < 0 || (size_t)va->input_index >= np->n_input ||
                n->out[va->output_index] < 0 || n->in[va->input_index] < 0)
                return oac_err(r->ctx, OAC_EUNSUPPORTED, "node %s: output_alias ports out of range "
                               "(the check reports alias-index-out-of-range)", n->name);
            n->alias[va->output_index] = va->input_index;
            n->alias_slot[va->output_index] = n->in[va->input_index];
            long os = n->out[va->output_index];
            r->slots[os].root = r->slots[n->in[va->input_index]].root;
        }
        /* Aliases the node states elsewhere: a local function's alias_of,
         * an If's branches (kernel_control.c decides, for frames too). */
        for (size_t j = 0; j < np->n_output; j++) {
            if (n->alias[j] >= 0 || n->out[j] < 0)
                continue;
            int port;
            const char *outer;
            rc = oac_rt_output_source(r->ctx, r->model, np, j, 0, &port, &outer);
            if (rc == OAC_EUNSUPPORTED) {
                rc = OAC_OK;       /* too deep: the precheck below refuses it */
                break;
            }
            if (rc)
                return rc;
            long src = port >= 0 ? n->in[port] : outer ? slot_of(r, outer) : -1;
            if (port < 0 && !outer)
                continue;
            if (src < 0)
                return oac_err(r->ctx, OAC_EUNSUPPORTED,
                               "node %s: output '%s' aliases '%s', which the main graph "
                               "does not define before it", n->name, np->output[j],
                               outer ? outer : np->input[port]);
            n->alias[j] = port >= 0 ? port : OAC_ALIAS_OUTER;
            n->alias_slot[j] = src;
            r->slots[n->out[j]].root = r->slots[src].root;
        }
        int pos, values, page;
        update_ports(np, &pos, &values, &page, &n->paged);
        n->cache_update = pos >= 0;
        n->values_port = values;
        if (pos >= 0 && (size_t)pos < np->n_input && n->in[pos] >= 0 &&
            r->slots[n->in[pos]].graph_input) {
            n->pos_slot = n->in[pos];
            r->slots[n->pos_slot].pos = POS_POSITION;
            if (page >= 0 && (size_t)page < np->n_input && n->in[page] >= 0 &&
                r->slots[n->in[page]].graph_input) {
                r->slots[n->in[page]].pos = POS_PAGE;
                r->slots[n->pos_slot].page_slot = n->in[page];
            }
        }
        bool found;
        n->fn = override_fn(r, np, &found);
        if (!found)
            n->fn = oac_kernel_lookup(np->domain, np->op_type);
        if (!found && !n->fn && oac_rt_function(r->model->proto, np))
            n->fn = oac_kernel_call_function;
        if ((rc = mark_nested_positions(r, np, sums)))
            return rc;
        if (n->fn && holds_body(r, np)) {
            /* Bodies are refused as a whole before anything runs. */
            oac_where w = { .graph = graph_name(r), .node = n->name,
                            .op_type = np->op_type, .location = n->location };
            int prc = oac_rt_precheck(r->ctx, r->model, np, &w, diags, rt_has_kernel, r,
                                      fmemo);
            if (prc == OAC_ERUNTIME)
                unsupported = true;
            else if (prc)
                return prc;
        }
        if (!n->fn) {
            oac_where w = { .graph = graph_name(r), .node = n->name,
                            .op_type = np->op_type, .location = n->location };
            if (oac_diag_add(diags, OAC_UNSUPPORTED_OPERATOR, &w,
                             "node %s: the reference runtime has no kernel for %s%s%s",
                             n->name, np->domain && *np->domain ? np->domain : "",
                             np->domain && *np->domain ? "::" : "",
                             np->op_type ? np->op_type : "(no op_type)"))
                return OAC_ENOMEM;
            unsupported = true;
        }
    }
    for (size_t i = 0; i < g->n_output; i++) {
        long s = g->output[i]->name ? slot_of(r, g->output[i]->name) : -1;
        if (s < 0)
            return oac_err(r->ctx, OAC_EUNSUPPORTED, "graph output '%s' is never produced",
                           g->output[i]->name ? g->output[i]->name : "");
        r->slots[s].graph_output = true;
    }
    return unsupported ? OAC_ERUNTIME : rc;
}

/* A read by node `node`'s subgraphs of a main-graph name: it keeps the
 * name's buffer alive until that node (plan rule 3). */
typedef struct outer_read {
    rt_run *r;
    long *last;
    long node;
} outer_read;

static int note_outer_read(void *arg, const char *name)
{
    outer_read *o = arg;
    long s = slot_of(o->r, name);
    if (s >= 0) {
        long root = o->r->slots[s].root;
        if (o->node > o->last[root])
            o->last[root] = o->node;
    }
    return OAC_OK;
}

/* Free points: plan.h's rule, from the analysis's schedule when it has
 * one, else computed here the same way. */
static int build_frees(rt_run *r)
{
    long *last = oac_calloc(r->ctx, r->n_slots ? r->n_slots : 1, sizeof *last);
    bool *never = oac_calloc(r->ctx, r->n_slots ? r->n_slots : 1, sizeof *never);
    int rc = OAC_OK;
    if (!last || !never) {
        rc = OAC_ENOMEM;
        goto done;
    }
    for (size_t s = 0; s < r->n_slots; s++)
        last[s] = r->slots[s].producer;
    for (size_t i = 0; i < r->n_nodes; i++) {
        const rt_node *n = &r->nodes[i];
        for (size_t j = 0; j < n->proto->n_input; j++)
            if (n->in[j] >= 0) {
                long root = r->slots[n->in[j]].root;
                if ((long)i > last[root])
                    last[root] = (long)i;
            }
        /* A must-alias output extends its root's life to its own reads;
         * its producer is a reader of the root already. */
        outer_read o = { r, last, (long)i };
        rc = oac_rt_outer_reads(r->ctx, n->proto, 0, note_outer_read, &o);
        if (rc == OAC_EUNSUPPORTED)
            rc = OAC_OK;   /* refused already (build_nodes) */
        if (rc)
            goto done;
    }
    for (size_t s = 0; s < r->n_slots; s++)
        if (r->slots[s].graph_output)
            never[r->slots[s].root] = true;
    for (size_t s = 0; s < r->n_slots; s++) {
        rt_slot *sl = &r->slots[s];
        if (sl->producer < 0 || sl->root != (long)s)
            continue;
        sl->free_after = never[s] ? -1 : last[s];
    }
    const oac_plan_sched *sched = r->analysis ? oac_analysis_schedule(r->analysis) : NULL;
    for (size_t b = 0; sched && b < sched->n_bufs; b++) {
        long s = sched->bufs[b].name ? slot_of(r, sched->bufs[b].name) : -1;
        if (s >= 0 && r->slots[s].root == s && r->slots[s].producer >= 0)
            r->slots[s].free_after = sched->bufs[b].free_after;
    }
    /* Per-node free lists. */
    for (size_t s = 0; s < r->n_slots; s++) {
        long fa = r->slots[s].free_after;
        if (r->slots[s].producer >= 0 && r->slots[s].root == (long)s &&
            fa >= 0 && (size_t)fa < r->n_nodes)
            r->nodes[fa].n_frees++;
    }
    for (size_t i = 0; i < r->n_nodes; i++) {
        r->nodes[i].frees = oac_calloc(r->ctx, r->nodes[i].n_frees + 1, sizeof(long));
        if (!r->nodes[i].frees) {
            rc = OAC_ENOMEM;
            goto done;
        }
        r->nodes[i].n_frees = 0;
    }
    for (size_t s = 0; s < r->n_slots; s++) {
        long fa = r->slots[s].free_after;
        if (r->slots[s].producer >= 0 && r->slots[s].root == (long)s &&
            fa >= 0 && (size_t)fa < r->n_nodes) {
            rt_node *n = &r->nodes[fa];
            n->frees[n->n_frees++] = (long)s;
        }
    }
done:
    oac_dealloc(r->ctx, last);
    oac_dealloc(r->ctx, never);
    return rc;
}

/* Caches whose alias root is immutable: an initializer, a Constant output
 * or a READ_ONLY graph input written in place.  Refused before running. */
static int check_roots(rt_run *r, oac_diags *diags)
{
    int rc = OAC_OK;
    for (size_t i = 0; i < r->n_nodes; i++) {
        const rt_node *n = &r->nodes[i];
        for (size_t j = 0; j < n->proto->n_output; j++) {
            if (n->alias[j] == -1)
                continue;
            const rt_slot *root = &r->slots[r->slots[n->out[j]].root];
            const char *why = NULL;
            if (root->binding >= 0)
                continue;          /* bindings are checked by bind.c */
            if (root->init)
                why = "an initializer";
            else if (root->constant_out)
                why = "a constant";
            else if (root->graph_input)
                why = "a READ_ONLY input";
            if (!why)
                continue;
            oac_where w = { .graph = graph_name(r), .node = n->name,
                            .op_type = n->proto->op_type, .location = n->location,
                            .value = root->name };
            if (oac_diag_add(diags, OAC_BINDING_READONLY, &w,
                             "node %s updates '%s' in place, but it is %s",
                             n->name, root->name, why))
                return OAC_ENOMEM;
            rc = OAC_ERUNTIME;
        }
    }
    return rc;
}

static void run_fini(rt_run *r)
{
    for (size_t s = 0; s < r->n_slots; s++) {
        rt_slot *sl = &r->slots[s];
        /* Own bindings point at tmpl.data: freed here, once. */
        if (sl->tmpl.data)
            oac_ralloc_unbound(&r->balloc, sl->tmpl.data, sl->tmpl.bytes);
        for (size_t p = 0; p < sl->ptmpl.n_pages; p++)
            oac_page_release(&r->balloc, &sl->ptmpl.pages[p]);
        oac_dealloc(r->ctx, sl->ptmpl.pages);
        oac_pbfile_free(sl->file);
    }
    for (size_t b = 0; b < r->n_bind; b++) {
        oac_value *v = r->bind_val[b];
        if (v && v->kind == OAC_VAL_PAGED) {
            for (size_t p = 0; p < v->p.n_pages; p++)
                oac_page_release(&r->balloc, &v->p.pages[p]);
            oac_dealloc(r->ctx, v->p.pages);
        }
    }
    for (size_t i = 0; r->nodes && i < r->n_nodes; i++) {
        rt_node *n = &r->nodes[i];
        oac_dealloc(r->ctx, n->name);
        oac_dealloc(r->ctx, n->location);
        oac_dealloc(r->ctx, n->in);
        oac_dealloc(r->ctx, n->out);
        oac_dealloc(r->ctx, n->alias);
        oac_dealloc(r->ctx, n->alias_slot);
        oac_dealloc(r->ctx, n->frees);
    }
    oac_dealloc(r->ctx, r->nodes);
    oac_dealloc(r->ctx, r->slots);
    oac_strmap_fini(&r->names);
    oac_dealloc(r->ctx, r->own_bind);
    oac_dealloc(r->ctx, r->own_val);
    oac_dealloc(r->ctx, r->bind);
    oac_dealloc(r->ctx, r->bind_val);
    oac_dealloc(r->ctx, r->bind_slot);
    oac_dealloc(r->ctx, r->bind_why);
}

/* ------------------------------------------------------------------ */
/* One session                                                          */
/* ------------------------------------------------------------------ */

static void release_value(oac_session *s, oac_value *v)
{
    if (v->kind == OAC_VAL_TENSOR && v->storage == OAC_STORE_OWNED)
        oac_ralloc_put(&s->alloc, v->t.data, v->t.bytes);
    else if (v->kind == OAC_VAL_TENSOR &&
             (v->storage == OAC_STORE_CONST || v->storage == OAC_STORE_BOUND))
        oac_ralloc_unbound(&s->alloc, v->t.data, v->t.bytes);
    else if (v->kind == OAC_VAL_PAGED) {
        for (size_t p = 0; p < v->p.n_pages; p++)
            oac_page_release(&s->alloc, &v->p.pages[p]);
        oac_dealloc(s->ctx, v->p.pages);
    }
    memset(v, 0, sizeof *v);
}

/* Release what node outputs of the last step still hold (graph outputs,
 * values of a stopped step). */
static void release_outputs(oac_session *s)
{
    rt_run *r = s->run;
    for (size_t i = 0; i < r->n_slots; i++)
        if (r->slots[i].producer >= 0) {
            release_value(s, &s->objs[i]);
            s->vals[i] = &s->objs[i];
        }
}

static void session_fini(oac_session *s)
{
    rt_run *r = s->run;
    if (s->objs) {
        for (size_t i = 0; i < r->n_slots; i++)
            release_value(s, &s->objs[i]);
    }
    oac_dealloc(s->ctx, s->objs);
    oac_dealloc(s->ctx, s->vals);
    oac_dealloc(s->ctx, s->loaded);
    oac_dealloc(s->ctx, s->ws);
    oac_dealloc(s->ctx, s->ws_bytes);
    oac_dealloc(s->ctx, s->pos_len);
    oac_dealloc(s->ctx, s->page_size);
    oac_dealloc(s->ctx, s->in_buf);
    oac_dealloc(s->ctx, s->out_buf);
    oac_dealloc(s->ctx, s->before);
    s->before = NULL;
    oac_dealloc(s->ctx, s->steps);
    s->objs = NULL;
    s->vals = NULL;
    s->loaded = NULL;
    s->steps = NULL;
    s->ws = NULL;
    s->ws_bytes = NULL;
    s->pos_len = NULL;
    s->page_size = NULL;
    s->in_buf = s->out_buf = NULL;
}

/* Per-session values of the inputs: bindings are shared; everything else
 * is this session's copy (positions advance per session). */
static int session_init(oac_session *s)
{
    rt_run *r = s->run;
    size_t n = r->n_slots ? r->n_slots : 1;
    oac_ralloc_init(&s->alloc, s->ctx);
    s->objs = oac_calloc(s->ctx, n, sizeof *s->objs);
    s->vals = oac_calloc(s->ctx, n, sizeof *s->vals);
    s->loaded = oac_calloc(s->ctx, n, sizeof *s->loaded);
    s->pos_len = oac_calloc(s->ctx, n, sizeof *s->pos_len);
    s->page_size = oac_calloc(s->ctx, n, sizeof *s->page_size);
    s->in_buf = oac_calloc(s->ctx, r->max_ports + 1, sizeof *s->in_buf);
    s->out_buf = oac_calloc(s->ctx, r->max_ports + 1, sizeof *s->out_buf);
    s->before = oac_calloc(s->ctx, r->max_ports + 1, sizeof *s->before);
    if (!s->objs || !s->vals || !s->loaded || !s->pos_len || !s->page_size ||
        !s->in_buf || !s->out_buf || !s->before)
        return OAC_ENOMEM;
    for (size_t i = 0; i < r->n_slots; i++) {
        rt_slot *sl = &r->slots[i];
        s->vals[i] = &s->objs[i];
        if (sl->binding >= 0) {
            s->vals[i] = r->bind_val[sl->binding];
            continue;
        }
        if (!sl->graph_input)
            continue;
        oac_value *v = &s->objs[i];
        if (sl->paged) {
            v->kind = OAC_VAL_PAGED;
            v->storage = OAC_STORE_BOUND;
            v->p = sl->ptmpl;
            v->p.pages = NULL;
            v->p.n_pages = v->p.cap_pages = 0;
            if (oac_paged_reserve(s->ctx, &v->p, sl->ptmpl.n_pages))
                return OAC_ENOMEM;
            for (size_t p = 0; p < sl->ptmpl.n_pages; p++) {
                oac_page pg = sl->ptmpl.pages[p];
                pg.data = pg.bytes ? oac_ralloc_bound(&s->alloc, pg.bytes) : NULL;
                if (pg.bytes && !pg.data)
                    return OAC_ENOMEM;
                if (pg.bytes)
                    memcpy(pg.data, sl->ptmpl.pages[p].data, pg.bytes);
                v->p.pages[v->p.n_pages++] = pg;
            }
            continue;
        }
        v->kind = OAC_VAL_TENSOR;
        v->storage = OAC_STORE_CONST;
        v->writable = false;
        v->t = sl->tmpl;
        v->t.data = sl->tmpl.bytes ? oac_ralloc_bound(&s->alloc, sl->tmpl.bytes) : NULL;
        if (sl->tmpl.bytes && !v->t.data)
            return OAC_ENOMEM;
        if (sl->tmpl.data && sl->tmpl.bytes)
            memcpy(v->t.data, sl->tmpl.data, sl->tmpl.bytes);
        s->loaded[i] = true;
    }
    return OAC_OK;
}

int oac_rt_load_initializer(oac_ctx *ctx, oac_ralloc *a, const oac_model *model,
                            const Onnx__TensorProto *tp, const char *name,
                            oac_value *v)
{
    if (tp->n_dims > OAC_RT_MAX_RANK)
        return oac_err(ctx, OAC_EUNSUPPORTED, "initializer '%s': rank too large", name);
    oac_tensor t = { .elem_type = tp->data_type, .rank = (int)tp->n_dims };
    for (size_t i = 0; i < tp->n_dims; i++)
        t.dims[i] = tp->dims[i];
    uint64_t n, b;
    if (!oac_tensor_numel_rt(&t, &n) || !oac_elem_bytes(t.elem_type, n, &b) || b > SIZE_MAX)
        return oac_err(ctx, OAC_EUNSUPPORTED, "initializer '%s': no fixed-size data", name);
    if (b > OAC_RT_MAX_BYTES)
        return oac_err(ctx, OAC_EUNSUPPORTED,
                       "initializer '%s' would need %" PRIu64 " bytes, above the "
                       "reference runtime's limit of %" PRIu64 " per buffer", name, b,
                       OAC_RT_MAX_BYTES);
    t.bytes = (size_t)b;
    t.data = t.bytes ? oac_ralloc_bound(a, t.bytes) : NULL;
    if (t.bytes && !t.data)
        return OAC_ENOMEM;
    v->kind = OAC_VAL_TENSOR;
    v->storage = OAC_STORE_CONST;
    v->writable = false;
    v->t = t;
    return oac_tensor_read(ctx, model, tp, t.data, t.bytes);
}

/* Initializers are read on first use (lazily, through oac_tensor_read,
 * into excluded storage) and kept for the session. */
static int ensure_loaded(oac_session *s, long slot)
{
    rt_run *r = s->run;
    rt_slot *sl = &r->slots[slot];
    if (s->loaded[slot] || !sl->init || sl->graph_input)
        return OAC_OK;
    int rc = oac_rt_load_initializer(s->ctx, &s->alloc, r->model, sl->init,
                                     sl->name, &s->objs[slot]);
    /* Once it holds storage the slot is loaded, read or not: never twice. */
    s->loaded[slot] = s->objs[slot].kind == OAC_VAL_TENSOR;
    return rc;
}

/* The update length along the capacity axis of node n's values. */
static int update_length(oac_session *s, const rt_node *n, int64_t *len)
{
    *len = -1;
    if (n->values_port < 0 || (size_t)n->values_port >= n->proto->n_input ||
        n->in[n->values_port] < 0)
        return OAC_OK;
    const oac_value *v = s->vals[n->in[n->values_port]];
    if (v->kind != OAC_VAL_TENSOR || v->t.rank < 1)
        return OAC_OK;
    int64_t axis = n->paged ? -2 : oac_attr_int(n->proto, "axis", -2);
    if (axis < 0)
        axis += v->t.rank;
    if (axis < 0 || axis >= v->t.rank)
        return OAC_OK;     /* the kernel reports the bad axis */
    *len = v->t.dims[axis];
    return OAC_OK;
}

static void saved_ptr(const oac_value *v, const void **p)
{
    *p = v->kind == OAC_VAL_TENSOR ? v->t.data : (const void *)v;
}

/* ---- what frames use (runtime.h, kernel_control.c) ----------------- */

oac_value *oac_rt_main_value(oac_session *s, const char *name, int *rc)
{
    *rc = OAC_OK;
    long sl = slot_of(s->run, name);
    if (sl < 0)
        return NULL;
    if ((*rc = ensure_loaded(s, sl)))
        return NULL;
    return s->vals[sl];
}

oac_kernel_fn oac_rt_kernel(oac_session *s, const Onnx__NodeProto *np)
{
    bool found;
    oac_kernel_fn fn = override_fn(s->run, np, &found);
    if (!found)
        fn = oac_kernel_lookup(np->domain, np->op_type);
    if (!found && !fn && oac_rt_function(s->run->model->proto, np))
        fn = oac_kernel_call_function;
    return fn;
}

const oac_plan_sched *oac_rt_schedule(oac_session *s)
{
    return s->run->analysis ? oac_analysis_schedule(s->run->analysis) : NULL;
}

void oac_rt_identity(oac_session *s, bool held)
{
    s->checked++;
    s->held += held;
    if (s->cur_step) {
        s->cur_step->identity_checked++;
        s->cur_step->identity_held += held;
    }
}

void oac_rt_release(oac_session *s, oac_value *v)
{
    release_value(s, v);
}

bool oac_rt_charge(oac_session *s, uint64_t units, uint64_t *limit)
{
    const oac_run_hooks *h = s->run->hooks;
    *limit = h && h->body_work ? h->body_work : OAC_RT_MAX_BODY_WORK;
    uint64_t w;
    if (oac_add_overflow_u64(s->work, units, &w) || w > *limit)
        return false;
    s->work = w;
    return true;
}

void oac_rt_end_node(oac_session *s)
{
    for (size_t w = 0; w < s->n_ws; w++)
        oac_ralloc_put(&s->alloc, s->ws[w], s->ws_bytes[w]);
    s->n_ws = 0;
}

static int run_node(oac_session *s, size_t i, oac_step_stats *st)
{
    rt_run *r = s->run;
    rt_node *n = &r->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    int rc;
    for (size_t j = 0; j < np->n_input; j++) {
        s->in_buf[j] = NULL;
        if (n->in[j] < 0)
            continue;
        if ((rc = ensure_loaded(s, n->in[j])))
            return rc;
        oac_value *v = s->vals[n->in[j]];
        if (v->kind == OAC_VAL_NONE)
            return node_fail(s, n, OAC_OPERAND_INVALID,
                             "node %s reads '%s', which has no value (not produced "
                             "before it in file order)", n->name, r->slots[n->in[j]].name);
        s->in_buf[j] = v;
    }
    const void **before = s->before;
    for (size_t j = 0; j < np->n_output; j++) {
        s->out_buf[j] = NULL;
        long os = n->out[j];
        if (os < 0)
            continue;
        if (n->alias[j] != -1) {
            /* The storage it reuses: an input port, or (If) an outer
             * value; either way that value's object. */
            long src_slot = n->alias_slot[j];
            oac_value *src = n->alias[j] >= 0 ? s->in_buf[n->alias[j]] : s->vals[src_slot];
            if (n->alias[j] == OAC_ALIAS_OUTER && (rc = ensure_loaded(s, src_slot)))
                return rc;
            if (src->kind == OAC_VAL_NONE)
                return node_fail(s, n, OAC_OPERAND_INVALID,
                                 "node %s: output '%s' aliases '%s', which has no value",
                                 n->name, r->slots[os].name, r->slots[src_slot].name);
            if (!src->writable)
                return node_fail(s, n, OAC_BINDING_READONLY,
                                 "node %s updates '%s' in place, but its storage is "
                                 "read-only", n->name, r->slots[src_slot].name);
            s->vals[os] = src;
            saved_ptr(src, &before[j]);
        } else {
            s->vals[os] = &s->objs[os];
        }
        s->out_buf[j] = s->vals[os];
    }
    if (n->pos_slot >= 0) {
        int64_t len;
        update_length(s, n, &len);
        int64_t *rec = &s->pos_len[n->pos_slot];
        if (len >= 0 && *rec >= 0 && *rec != len)
            return node_fail(s, n, OAC_OPERAND_INVALID,
                             "position input '%s' feeds updates of different lengths "
                             "(%" PRId64 " and %" PRId64 ")", r->slots[n->pos_slot].name,
                             *rec, len);
        if (len >= 0)
            *rec = len;
        if (n->paged && s->in_buf[0] && s->in_buf[0]->kind == OAC_VAL_PAGED)
            s->page_size[n->pos_slot] = s->in_buf[0]->p.page_dims[2];
    }
    oac_kernel_call k = {
        .ctx = s->ctx, .model = r->model, .node = np, .node_name = n->name,
        .node_index = i, .in = s->in_buf, .n_in = np->n_input,
        .out = s->out_buf, .n_out = np->n_output, .out_alias = n->alias,
        .alloc = &s->alloc, .diags = s->diags, .session = s,
        .graph_name = graph_name(r), .location = n->location,
    };
    rc = n->fn(&k);
    /* Workspace lives exactly as long as the node. */
    oac_rt_end_node(s);
    /* A kernel that refused wrote nothing; its step is not counted. */
    for (size_t j = 0; !rc && j < np->n_output; j++) {
        if (n->alias[j] == -1 || n->out[j] < 0)
            continue;
        /* Pointer identity: the output is the input's object, and its
         * storage did not move. */
        oac_value *v = s->vals[n->out[j]];
        const void *after;
        saved_ptr(v, &after);
        bool held = after == before[j];
        st->identity_checked++;
        s->checked++;
        if (held) {
            st->identity_held++;
            s->held++;
            continue;
        }
        /* Put the binding's storage back so nothing frees or dumps the
         * misbehaving kernel's buffer as the cache. */
        if (v->kind == OAC_VAL_TENSOR)
            v->t.data = (void *)before[j];
        rc = node_fail(s, n, OAC_ALIAS_BROKEN,
                       "node %s: output '%s' must alias input '%s' but came "
                       "back at another address", n->name,
                       r->slots[n->out[j]].name, r->slots[n->alias_slot[j]].name);
    }
    if (rc)
        return rc;
    for (size_t j = 0; j < np->n_output; j++) {
        long os = n->out[j];
        if (os < 0)
            continue;
        if (s->vals[os]->kind == OAC_VAL_NONE)
            return oac_err(s->ctx, OAC_EINTERNAL, "node %s: kernel produced no output %zu",
                           n->name, j);
        if (r->slots[os].constant_out)
            s->vals[os]->writable = false;
    }
    if (n->cache_update && np->n_output && n->out[0] >= 0 && n->alias[0] < 0) {
        const oac_value *v = s->vals[n->out[0]];
        if (v->kind == OAC_VAL_TENSOR)
            s->step_second += v->t.bytes;
    }
    for (size_t f = 0; f < n->n_frees; f++) {
        long sl = n->frees[f];
        release_value(s, &s->objs[sl]);
    }
    return OAC_OK;
}

/* After a step: every position input moves by its updates' length; a
 * page_id moves on when its page is full, its position back to 0. */
static int advance_positions(oac_session *s)
{
    rt_run *r = s->run;
    for (size_t i = 0; i < r->n_slots; i++) {
        rt_slot *sl = &r->slots[i];
        if (sl->pos != POS_POSITION || s->pos_len[i] < 0)
            continue;
        oac_value *v = s->vals[i];
        if (v->kind != OAC_VAL_TENSOR || v->t.elem_type != OAC_T_INT64)
            continue;
        size_t cnt = v->t.bytes / 8;
        bool page_full = false;
        for (size_t e = 0; e < cnt; e++) {
            int64_t p;
            memcpy(&p, (uint8_t *)v->t.data + e * 8, 8);
            if (oac_add_overflow_i64(p, s->pos_len[i], &p))
                return oac_err(s->ctx, OAC_ERUNTIME, "position '%s' overflows", sl->name);
            if (sl->page_slot >= 0 && s->page_size[i] > 0 && p >= s->page_size[i]) {
                p = 0;
                page_full = true;
            }
            memcpy((uint8_t *)v->t.data + e * 8, &p, 8);
        }
        if (page_full) {
            oac_value *pv = s->vals[sl->page_slot];
            if (pv->kind == OAC_VAL_TENSOR && pv->t.elem_type == OAC_T_INT64)
                for (size_t e = 0; e < pv->t.bytes / 8; e++) {
                    int64_t p;
                    memcpy(&p, (uint8_t *)pv->t.data + e * 8, 8);
                    p++;
                    memcpy((uint8_t *)pv->t.data + e * 8, &p, 8);
                }
        }
    }
    return OAC_OK;
}

static int dump_session(oac_session *s)
{
    rt_run *r = s->run;
    const Onnx__GraphProto *g = r->g;
    size_t n = g->n_output + r->n_bind;
    oac_dump_value *dv = oac_calloc(s->ctx, n ? n : 1, sizeof *dv);
    if (!dv)
        return OAC_ENOMEM;
    size_t k = 0;
    for (size_t b = 0; b < r->n_bind; b++)
        dv[k++] = (oac_dump_value){ r->bind[b]->name, r->bind_val[b], r->model };
    for (size_t i = 0; i < g->n_output; i++) {
        long sl = slot_of(r, g->output[i]->name);
        dv[k++] = (oac_dump_value){ g->output[i]->name, s->vals[sl], r->model };
    }
    int rc = oac_dump_values(s->ctx, s->diags, r->opts->dump_dir, dv, k);
    oac_dealloc(s->ctx, dv);
    return rc;
}

static int session_steps(oac_session *s)
{
    rt_run *r = s->run;
    int rc = session_init(s);
    if (rc)
        return rc;
    if ((rc = oac_bindings_acquire_all(r->bind, r->n_bind, s, s->number, s->diags)))
        return rc;
    s->winner = true;
    s->steps = oac_calloc(s->ctx, r->steps < 1024 ? r->steps : 1024, sizeof *s->steps);
    s->cap_steps = r->steps < 1024 ? r->steps : 1024;
    if (!s->steps)
        return OAC_ENOMEM;
    for (uint64_t step = 0; step < r->steps; step++) {
        release_outputs(s);
        oac_ralloc_step_begin(&s->alloc);
        oac_step_stats st = { .step = step + 1 };
        s->cur_step = &st;
        s->step_second = 0;
        s->work = 0;
        for (size_t i = 0; i < r->n_slots; i++)
            s->pos_len[i] = -1;
        for (size_t i = 0; i < r->n_nodes && !rc; i++)
            if ((rc = run_node(s, i, &st)))
                s->stop_node = (long)i;
        /* second_cache_bytes is a per-step figure, like the plan's: keep
         * the largest step. */
        if (s->step_second > s->second_cache)
            s->second_cache = s->step_second;
        if (rc)
            return rc;
        st.alloc_calls = s->alloc.step_calls;
        st.alloc_bytes = s->alloc.step_bytes;
        if (oac_grow(s->ctx, (void **)&s->steps, &s->cap_steps, s->n_steps + 1,
                     sizeof *s->steps))
            return OAC_ENOMEM;
        s->steps[s->n_steps++] = st;
        s->steps_completed = step + 1;
        if (step + 1 < r->steps && (rc = advance_positions(s)))
            return rc;
    }
    /* One dump per run: the binding winner's, or (nothing bound, every
     * session ran) the first session's, so no two threads write a file. */
    if (r->opts->dump_dir && (r->n_bind || s->number <= 1) && (rc = dump_session(s)))
        return rc;
    return OAC_OK;
}

static void *session_thread(void *arg)
{
    oac_session *s = arg;
    s->rc = session_steps(s);
    return NULL;
}

/* Copy a session's diagnostics into the caller's list. */
static int merge_diags(oac_diags *to, const oac_diags *from)
{
    for (size_t i = 0; i < oac_diags_count(from); i++) {
        const oac_diag *d = oac_diags_get(from, i);
        oac_where w = { d->graph, d->node, d->op_type, d->value, d->location };
        if (oac_diag_add(to, d->code, &w, "%s", d->message))
            return OAC_ENOMEM;
    }
    return OAC_OK;
}

/* ------------------------------------------------------------------ */
/* oac_run                                                              */
/* ------------------------------------------------------------------ */

/* Does graph input `name` start the run as one 0 (or false)?  Inputs not
 * given are zero-filled (their template has no data yet). */
static bool input_starts_zero(const rt_run *r, const char *name)
{
    long sl = name ? slot_of(r, name) : -1;
    if (sl < 0 || !r->slots[sl].graph_input || r->slots[sl].binding >= 0 ||
        r->slots[sl].paged)
        return false;
    const oac_tensor *t = &r->slots[sl].tmpl;
    uint64_t n;
    if (!oac_tensor_numel_rt(t, &n) || n != 1)
        return false;
    if (!t->data)
        return true;
    int64_t v = 1;
    if (t->elem_type == OAC_T_INT64 && t->bytes == 8)
        memcpy(&v, t->data, 8);
    else if (t->elem_type == OAC_T_INT32 && t->bytes == 4) {
        int32_t x;
        memcpy(&x, t->data, 4);
        v = x;
    } else if (t->elem_type == OAC_T_BOOL && t->bytes == 1)
        v = ((const uint8_t *)t->data)[0];
    return v <= 0;
}

/* The static plan at the run's inputs (plan.c rule 10b): the same walk,
 * except that a main-graph Loop whose trip count or condition input the
 * run starts at 0 (false) runs no body, so plans no transient.  Equal
 * to the analysis's peak_bytes when no such Loop exists. */
static oac_opt_u64 planned_at_inputs(const rt_run *r, oac_opt_u64 planned)
{
    const oac_plan_sched *p = r->analysis ? oac_analysis_schedule(r->analysis) : NULL;
    if (!p || !planned.known)
        return planned;
    bool skipped = false;
    uint64_t peak = 0;
    for (size_t i = 0; i < p->n_steps; i++) {
        oac_opt_u64 live = oac_plan_step_live(p, i);
        const oac_plan_extra *x = oac_plan_step_extra(p, i);
        bool skip = input_starts_zero(r, x->loop_trip_input) ||
                    input_starts_zero(r, x->loop_cond_input);
        skipped = skipped || skip;
        uint64_t here;
        if (!live.known || !x->workspace.known || (!skip && !x->transient.known) ||
            oac_add_overflow_u64(live.value, x->workspace.value, &here) ||
            (!skip && oac_add_overflow_u64(here, x->transient.value, &here)))
            return planned;
        if (here > peak)
            peak = here;
    }
    return skipped ? (oac_opt_u64){ true, peak } : planned;
}

static void fill_exec(oac_execution *e, const oac_session *s)
{
    e->steps_completed = s->steps_completed;
    e->identity_checked = s->checked;
    e->identity_held = s->held;
    e->second_cache_bytes = s->second_cache;
    /* Per step, above what earlier steps left live (pages): the plan's
     * quantity.  For dense models nothing is carried over, and this is
     * the allocator's absolute high-water mark. */
    e->measured_peak_bytes = s->alloc.step_peak_max;
    e->peak_matches_plan = e->planned_peak_bytes.known &&
                           e->planned_peak_bytes.value == e->measured_peak_bytes;
}

int oac_run_with_hooks(oac_ctx *ctx, oac_execution **out,
                       const oac_model *model, const oac_analysis *analysis,
                       const oac_run_opts *opts, const oac_run_hooks *hooks,
                       oac_diags *diags)
{
    static const oac_run_opts no_opts;
    *out = NULL;
    if (!opts)
        opts = &no_opts;
    if (!model || !model->proto || !model->proto->graph)
        return oac_err(ctx, OAC_EUNSUPPORTED, "the model has no main graph to run");
    size_t errors_before = oac_diags_count_severity(diags, OAC_SEV_ERROR);
    long stop_node = -1;
    rt_run r = { .ctx = ctx, .model = model, .analysis = analysis, .opts = opts,
                 .hooks = hooks, .g = model->proto->graph,
                 .steps = opts->steps ? opts->steps : 1 };
    unsigned n_sess = opts->sessions ? opts->sessions : 1;
    oac_session *sess = NULL;
    oac_execution *e = oac_calloc(ctx, 1, sizeof *e);
    int rc = OAC_OK;
    oac_strmap_init(&r.names, ctx);
    oac_ralloc_init(&r.balloc, ctx);
    if (!e) {
        rc = OAC_ENOMEM;
        goto done;
    }
    e->steps_requested = r.steps;
    if (analysis) {
        const oac_memory_plan *mp = oac_analysis_plan(analysis);
        if (mp)
            e->planned_peak_bytes = mp->peak_bytes;
    }
    /* Contract 5: nothing executes when the check found an error.  The
     * execution object still says how many steps were asked for and that
     * none ran, so every `run` report has one. */
    if (errors_before > 0)
        goto done;
    if (n_sess > 1024) {
        rc = oac_err(ctx, OAC_EINVAL, "--sessions %u: at most 1024", n_sess);
        goto done;
    }
    if ((rc = build_nodes(&r, diags)))
        goto done;
    if ((rc = setup_inputs(&r, diags)) || (rc = build_frees(&r)))
        goto done;
    e->planned_peak_bytes = planned_at_inputs(&r, e->planned_peak_bytes);
    /* Refusals before anything runs: each binding, overlaps, roots. */
    int refuse = OAC_OK;
    for (size_t b = 0; b < r.n_bind; b++) {
        int brc = oac_binding_check(r.bind[b], binding_need(&r, b), r.bind_why[b], diags);
        if (brc == OAC_ENOMEM) {
            rc = brc;
            goto done;
        }
        if (brc)
            refuse = brc;
        e->cache_bytes_bound += r.bind_val[b]->kind == OAC_VAL_TENSOR ? r.bind[b]->bytes : 0;
    }
    int orc = oac_bindings_check_overlap(r.bind, r.n_bind, diags);
    if (orc == OAC_ENOMEM) {
        rc = orc;
        goto done;
    }
    if (orc)
        refuse = orc;
    orc = check_roots(&r, diags);
    if (orc == OAC_ENOMEM) {
        rc = orc;
        goto done;
    }
    if (orc)
        refuse = orc;
    if (refuse) {
        rc = refuse;
        goto done;
    }

    sess = oac_calloc(ctx, n_sess, sizeof *sess);
    if (!sess) {
        rc = OAC_ENOMEM;
        goto done;
    }
    for (unsigned i = 0; i < n_sess; i++) {
        sess[i].run = &r;
        sess[i].stop_node = -1;
        if (n_sess == 1) {
            sess[i].ctx = ctx;
            sess[i].diags = diags;
            continue;
        }
        sess[i].own_ctx = true;
        sess[i].number = i + 1;
        sess[i].ctx = oac_ctx_new();
        sess[i].diags = sess[i].ctx ? oac_diags_new(sess[i].ctx) : NULL;
        if (!sess[i].diags) {
            rc = oac_err(ctx, OAC_ENOMEM, "out of memory (session %u)", i);
            goto done;
        }
    }
    if (n_sess == 1) {
        sess[0].rc = session_steps(&sess[0]);
    } else {
        unsigned started = 0;
        for (; started < n_sess; started++)
            if (pthread_create(&sess[started].thread, NULL, session_thread,
                               &sess[started])) {
                rc = oac_err(ctx, OAC_EINTERNAL, "cannot start session thread %u", started);
                break;
            }
        for (unsigned i = 0; i < started; i++)
            pthread_join(sess[i].thread, NULL);
        if (rc)
            goto done;
    }
    /* Outcome: the winner's figures; operational failures of any session
     * come first. */
    int winner_rc = OAC_ERUNTIME;
    bool filled = false;
    for (unsigned i = 0; i < n_sess; i++) {
        oac_session *s = &sess[i];
        if (n_sess > 1) {
            int mrc = merge_diags(diags, s->diags);
            if (mrc) {
                rc = oac_err(ctx, mrc, "out of memory merging diagnostics");
                goto done;
            }
        }
        if (s->rc != OAC_OK && stop_node < 0)
            stop_node = s->stop_node;
        if (s->rc != OAC_OK && s->rc != OAC_ERUNTIME && !rc) {
            rc = s->rc;
            if (s->own_ctx)
                oac_err(ctx, rc, "%s", oac_errmsg(s->ctx));
        }
        if (s->winner && !filled) {
            filled = true;
            fill_exec(e, s);
            winner_rc = s->rc;
            if (s->n_steps) {
                e->per_step = oac_calloc(ctx, s->n_steps, sizeof *e->per_step);
                if (!e->per_step) {
                    rc = OAC_ENOMEM;
                    goto done;
                }
                memcpy(e->per_step, s->steps, s->n_steps * sizeof *s->steps);
                e->n_per_step = s->n_steps;
            }
        }
    }
    if (!rc)
        rc = winner_rc;
done:
    /* A run that stopped must say so in the report, not only on ctx: a
     * failure no diagnostic explains becomes unsupported-operator at the
     * node it stopped at, so the report's status and the exit agree.
     * Usage errors (EINVAL) and unreadable --input/--dump files
     * (EPARSE, EIO) stay operational failures. */
    if (rc < 0 && rc != OAC_EINVAL && rc != OAC_EPARSE && rc != OAC_EIO &&
        oac_diags_count_severity(diags, OAC_SEV_ERROR) == errors_before) {
        const rt_node *n = stop_node >= 0 && (size_t)stop_node < r.n_nodes
                           ? &r.nodes[stop_node] : NULL;
        oac_where w = { .graph = graph_name(&r), .node = n ? n->name : NULL,
                        .op_type = n ? n->proto->op_type : NULL,
                        .location = n ? n->location : NULL };
        /* Best effort: out of memory may make this fail too. */
        (void)oac_diag_add(diags, OAC_UNSUPPORTED_OPERATOR, &w,
                           "the reference runtime stopped%s%s: %s",
                           n ? " at node " : "", n ? n->name : "",
                           *oac_errmsg(ctx) ? oac_errmsg(ctx) : "operational failure");
    }
    /* Equality at the run's dims, also after a refusal (nothing measured
     * then, which matches a plan of 0). */
    if (e)
        e->peak_matches_plan = e->planned_peak_bytes.known &&
                               e->planned_peak_bytes.value == e->measured_peak_bytes;
    for (unsigned i = 0; sess && i < n_sess; i++) {
        if (!sess[i].run)
            continue;
        session_fini(&sess[i]);
        if (sess[i].own_ctx) {
            oac_diags_free(sess[i].diags);
            oac_ctx_free(sess[i].ctx);
        }
    }
    for (unsigned i = 0; sess && i < n_sess; i++)
        oac_bindings_release_all(r.bind, r.n_bind, &sess[i]);
    oac_dealloc(ctx, sess);
    run_fini(&r);
    *out = e;
    return rc;
}

int oac_run(oac_ctx *ctx, oac_execution **out, const oac_model *model,
            const oac_analysis *analysis, const oac_run_opts *opts,
            oac_diags *diags)
{
    return oac_run_with_hooks(ctx, out, model, analysis, opts, NULL, diags);
}

void oac_execution_free(oac_execution *exec)
{
    if (!exec)
        return;
    oac_dealloc(NULL, exec->per_step);
    oac_dealloc(NULL, exec);
}

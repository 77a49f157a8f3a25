/* run/generate.c: the generation loop a run drives (contract section 8,
 * "Decoder inputs"; run/generate.h).
 *
 * Owns the table of GenAI's decoder inputs (the name each has by
 * default, the axis that grows and what each element holds), finding
 * them among a model's graph inputs, the symbols their dims bind, the
 * --dim bindings a run's check uses (oac_run_dims) and each step's
 * values.
 *
 * A decoder input is a main-graph input named as GenAI names it: by the
 * genai_config.json beside the model (model.decoder.inputs), else by
 * the defaults below; it is driven unless --input gives it.  A stock
 * pair is a past/present pair (paired by the one pairing, annotate/pairs.c:
 * structure, the config's templates and the name patterns) whose past is no
 * READ_WRITE input and no --input: its present is fed back as the next
 * past, and the past's symbol the present does not share (past_seq_len
 * against total_seq_len) is the past length.  Its element
 * type must be INT32 or INT64 (as declared: GroupQueryAttention wants
 * INT32 seqlens_k and total_sequence_length); its last axis is the
 * growing one for input_ids and position_ids (the new tokens) and
 * attention_mask (the total length); every other axis keeps one size:
 * static, its --dim, or 1 (one sequence).  A static growing axis must
 * hold what the loop feeds (an attention_mask of static length is the
 * static-cache form: ones over the total, zeros after).
 *
 * Invariants: run/generate.h.  Values are checked against the element type
 * before they are stored (a token or length beyond INT32 in an INT32
 * input is refused, never wrapped).
 */
#include <inttypes.h>
#include <string.h>

#include "annotate/pairs.h"
#include "run/generate.h"
#include "annotate/genai_config.h"
#include "check/graph.h"

/* What an element of a driven input holds, j its index on the growing
 * axis. */
typedef enum fill {
    FILL_TOKENS,           /* --tokens cycled, else 1, 2, 3, ... */
    FILL_ONES,             /* 1 for the total length (0 past it) */
    FILL_POSITIONS,        /* past + j */
    FILL_TOTAL_MINUS_1,    /* total - 1 */
    FILL_TOTAL,            /* total */
    FILL_PAST              /* past */
} fill;

/* GenAI's decoder inputs: the config key (model.decoder.inputs) and
 * default name, what grows on the last axis, what an element holds. */
static const struct role {
    const char *key;
    oac_dec_sym_kind grow;     /* OAC_DSYM_CONST: no growing axis */
    fill fill;
} roles[] = {
    { "input_ids", OAC_DSYM_NEW, FILL_TOKENS },
    { "attention_mask", OAC_DSYM_TOTAL, FILL_ONES },
    { "position_ids", OAC_DSYM_NEW, FILL_POSITIONS },
    { "seqlens_k", OAC_DSYM_CONST, FILL_TOTAL_MINUS_1 },
    { "total_sequence_length", OAC_DSYM_CONST, FILL_TOTAL },
    { "write_indices", OAC_DSYM_CONST, FILL_PAST },
    { "nonpad_kv_seqlen", OAC_DSYM_CONST, FILL_TOTAL },
};
enum { N_ROLES = sizeof roles / sizeof roles[0] };

static const char *kind_name(oac_dec_sym_kind k)
{
    switch (k) {
    case OAC_DSYM_CONST: return "a fixed size";
    case OAC_DSYM_NEW: return "the tokens fed in a step";
    case OAC_DSYM_TOTAL: return "the total length";
    case OAC_DSYM_PAST: return "the past length";
    }
    return "?";
}

void oac_decoder_free(oac_decoder *d)
{
    if (!d)
        return;
    oac_dealloc(d->ctx, d->in);
    oac_dealloc(d->ctx, d->syms);
    oac_dealloc(d->ctx, d->pairs);
    oac_dealloc(d->ctx, d);
}

/* The --dim binding of name, or -1. */
static int64_t opt_dim(const oac_run_opts *o, const char *name)
{
    for (size_t i = 0; i < o->n_dims; i++)
        if (o->dims[i].name && !strcmp(o->dims[i].name, name))
            return o->dims[i].value;
    return -1;
}

static bool given_by_input(const oac_run_opts *o, const char *name)
{
    for (size_t i = 0; i < o->n_inputs; i++)
        if (o->inputs[i].name && !strcmp(o->inputs[i].name, name))
            return true;
    return false;
}

/* Record that symbol name stands for kind (value for CONST); invariant 2
 * of run/generate.h.  `what` names the input for messages. */
static int add_sym(oac_decoder *d, const oac_run_opts *o, const char *name,
                   oac_dec_sym_kind kind, int64_t value, const char *what)
{
    if (kind != OAC_DSYM_CONST && opt_dim(o, name) >= 0)
        return oac_err(d->ctx, OAC_EINVAL,
                       "--dim %s: the run binds '%s' from its generation loop (%s of "
                       "'%s'); leave it out, or give '%s' with --input", name, name,
                       kind_name(kind), what, what);
    for (size_t i = 0; i < d->n_syms; i++) {
        oac_dec_sym *s = &d->syms[i];
        if (strcmp(s->name, name))
            continue;
        if (s->kind == kind && (kind != OAC_DSYM_CONST || s->value == value))
            return OAC_OK;
        return oac_err(d->ctx, OAC_EINVAL,
                       "dimension '%s' would be both %s and %s in the run's generation "
                       "loop (at '%s'): give the inputs that disagree with --input",
                       name, kind_name(s->kind), kind_name(kind), what);
    }
    if (oac_grow(d->ctx, (void **)&d->syms, &d->cap_syms, d->n_syms + 1, sizeof *d->syms))
        return OAC_ENOMEM;
    d->syms[d->n_syms++] = (oac_dec_sym){ name, kind, value };
    return OAC_OK;
}

/* The role of graph input `name`: the config's name for a role's key,
 * else the key itself (GenAI's default), or -1. */
static int role_of(const oac_genai_config *cfg, const char *name)
{
    for (int r = 0; name && r < N_ROLES; r++) {
        const char *n = cfg ? oac_genai_input(cfg, roles[r].key) : NULL;
        if (!strcmp(n ? n : roles[r].key, name))
            return r;
    }
    return -1;
}

static bool is_read_write(const Onnx__ValueInfoProto *vi)
{
    return vi->has_access && vi->access == ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE;
}

static const Onnx__TensorShapeProto *shape_of(const Onnx__ValueInfoProto *vi)
{
    const Onnx__TypeProto *t = vi ? vi->type : NULL;
    return t && t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? t->tensor_type->shape
                                                                     : NULL;
}

/* The pair (past, present) of a stock model: the past's axis whose
 * symbol the present does not share holds the past length. */
static int add_pair(oac_decoder *d, const oac_run_opts *o, const Onnx__GraphProto *g,
                    const oac_kv_pair *p)
{
    if (!p->present || p->present->output_index < 0 || p->past->input_index < 0)
        return OAC_OK;
    const Onnx__ValueInfoProto *pv = g->input[p->past->input_index];
    const Onnx__ValueInfoProto *qv = g->output[p->present->output_index];
    if (is_read_write(pv) || given_by_input(o, pv->name))
        return OAC_OK;
    if (oac_grow(d->ctx, (void **)&d->pairs, &d->cap_pairs, d->n_pairs + 1, sizeof *d->pairs))
        return OAC_ENOMEM;
    oac_dec_pair *dp = &d->pairs[d->n_pairs++];
    *dp = (oac_dec_pair){ (size_t)p->past->input_index, (size_t)p->present->output_index, -1 };
    const Onnx__TensorShapeProto *ps = shape_of(pv), *qs = shape_of(qv);
    for (size_t a = 0; ps && a < ps->n_dim; a++) {
        const Onnx__TensorShapeProto__Dimension *x = ps->dim[a];
        if (x->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ||
            !x->dim_param || !x->dim_param[0])
            continue;
        const Onnx__TensorShapeProto__Dimension *y =
            qs && qs->n_dim == ps->n_dim ? qs->dim[a] : NULL;
        if (y && y->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
            y->dim_param && !strcmp(y->dim_param, x->dim_param))
            continue;
        dp->seq_axis = (int)a;
        return add_sym(d, o, x->dim_param, OAC_DSYM_PAST, 0, pv->name);
    }
    return OAC_OK;
}

/* The stock pairs of the model (the one pairing, annotate/pairs.h). */
static int find_pairs(oac_decoder *d, const oac_run_opts *o, const oac_model *model,
                      const oac_genai_config *cfg)
{
    oac_graphs *gi = NULL;
    oac_kv_pair *p = NULL;
    size_t n = 0;
    int rc = oac_graphs_build(d->ctx, &gi, model->proto);
    const oac_scope *s = !rc && gi->n_scopes ? gi->scopes[0] : NULL;
    if (!rc && s && s->kind == OAC_SCOPE_MAIN)
        rc = oac_kv_pairs_find(d->ctx, &p, &n, cfg, s);
    for (size_t i = 0; !rc && i < n; i++)
        rc = add_pair(d, o, model->proto->graph, &p[i]);
    oac_kv_pairs_free(d->ctx, p, n);
    oac_graphs_free(gi);
    return rc;
}

/* Input vi (port `port`) as the driven input of role r. */
static int add_input(oac_decoder *d, const oac_run_opts *o, const Onnx__ValueInfoProto *vi,
                     size_t port, int r)
{
    const char *name = vi->name;
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        return oac_err(d->ctx, OAC_EINVAL,
                       "decoder input '%s' is not a tensor: give it with --input", name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    if (tt->elem_type != OAC_T_INT64 && tt->elem_type != OAC_T_INT32)
        return oac_err(d->ctx, OAC_EINVAL,
                       "decoder input '%s' is %s: the run drives INT32 and INT64 "
                       "decoder inputs only; give it with --input", name,
                       oac_elem_name(tt->elem_type));
    if (!tt->shape)
        return oac_err(d->ctx, OAC_EINVAL,
                       "decoder input '%s' has no declared shape: give it with --input",
                       name);
    if (tt->shape->n_dim > OAC_RT_MAX_RANK)
        return oac_err(d->ctx, OAC_EUNSUPPORTED, "decoder input '%s': rank %zu exceeds %d",
                       name, tt->shape->n_dim, OAC_RT_MAX_RANK);
    if (oac_grow(d->ctx, (void **)&d->in, &d->cap_in, d->n_in + 1, sizeof *d->in))
        return OAC_ENOMEM;
    oac_dec_input *in = &d->in[d->n_in];
    memset(in, 0, sizeof *in);
    in->port = port;
    in->role = r;
    in->elem_type = tt->elem_type;
    in->rank = (int)tt->shape->n_dim;
    /* A rank-1 input_ids ([batch]: an encoder-decoder's per-beam token)
     * is one token per row, not a sequence axis. */
    bool per_row = roles[r].fill == FILL_TOKENS && in->rank == 1;
    if (per_row && d->prompt != 1)
        return oac_err(d->ctx, OAC_EINVAL,
                       "decoder input '%s' has rank 1, one token per row (no sequence "
                       "axis): the run feeds it one token a step, so --prompt-length "
                       "must be 1, not %" PRId64, name, d->prompt);
    in->grow_axis = !per_row && roles[r].grow != OAC_DSYM_CONST && in->rank > 0
                        ? in->rank - 1 : -1;
    in->grow = per_row ? OAC_DSYM_CONST : roles[r].grow;
    for (int a = 0; a < in->rank; a++) {
        const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[a];
        bool param = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                     dm->dim_param && dm->dim_param[0];
        bool fixed = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        int rc;
        if (a == in->grow_axis) {
            in->dims[a] = fixed ? dm->dim_value : -1;
            if (fixed && in->grow == OAC_DSYM_NEW &&
                (dm->dim_value != d->prompt || (dm->dim_value != 1 && o->steps > 1)))
                return oac_err(d->ctx, OAC_EINVAL,
                               "decoder input '%s' has a static sequence dimension %" PRId64
                               ", which cannot take the %" PRId64 " prompt token%s and one "
                               "token per later step the run feeds: set --prompt-length, "
                               "or give '%s' with --input", name, dm->dim_value, d->prompt,
                               d->prompt == 1 ? "" : "s", name);
            if (param && (rc = add_sym(d, o, dm->dim_param, in->grow, 0, name)))
                return rc;
            continue;
        }
        int64_t v = fixed ? dm->dim_value : param ? opt_dim(o, dm->dim_param) : -1;
        if (v < 0)
            v = 1;                     /* one sequence */
        in->dims[a] = v;
        if (param && (rc = add_sym(d, o, dm->dim_param, OAC_DSYM_CONST, v, name)))
            return rc;
    }
    d->n_in++;
    return OAC_OK;
}

int oac_decoder_new(oac_ctx *ctx, oac_decoder **out, const oac_model *model,
                    const oac_run_opts *opts, oac_diags *diags)
{
    *out = NULL;
    oac_genai_config *cfg = NULL;
    char *cpath = NULL;
    oac_decoder *d = oac_calloc(ctx, 1, sizeof *d);
    if (!d)
        return OAC_ENOMEM;
    d->ctx = ctx;
    d->prompt = opts->prompt_length ? (int64_t)opts->prompt_length : 1;
    d->tokens = opts->n_tokens ? opts->tokens : NULL;
    d->n_tokens = opts->n_tokens;
    int rc = OAC_OK;
    if (opts->prompt_length > INT32_MAX) {
        rc = oac_err(ctx, OAC_EINVAL, "--prompt-length %" PRIu64 " is too large",
                     opts->prompt_length);
        goto done;
    }
    const Onnx__GraphProto *g = model && model->proto ? model->proto->graph : NULL;
    if (!g)
        goto done;
    /* The config beside the model, as annotate finds it. */
    if (model->path && !opts->ignore_config &&
        (rc = oac_genai_config_find(ctx, &cpath, model->path)))
        goto done;
    if (cpath && (rc = oac_genai_config_load(ctx, &cfg, cpath, diags)))
        goto done;
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        int r = vi ? role_of(cfg, vi->name) : -1;
        if (r < 0 || given_by_input(opts, vi->name))
            continue;
        if ((rc = add_input(d, opts, vi, i, r)))
            goto done;
    }
    rc = find_pairs(d, opts, model, cfg);
done:
    oac_genai_config_free(cfg);
    oac_dealloc(ctx, cpath);
    if (rc) {
        oac_decoder_free(d);
        return rc;
    }
    *out = d;
    return OAC_OK;
}

int64_t oac_decoder_sym(const oac_decoder *d, const char *name, int64_t past,
                        int64_t n)
{
    for (size_t i = 0; d && i < d->n_syms; i++) {
        const oac_dec_sym *s = &d->syms[i];
        if (strcmp(s->name, name))
            continue;
        switch (s->kind) {
        case OAC_DSYM_CONST: return s->value;
        case OAC_DSYM_NEW: return n;
        case OAC_DSYM_TOTAL: return past + n;
        case OAC_DSYM_PAST: return past;
        }
    }
    return -1;
}

int oac_decoder_fill(const oac_decoder *d, size_t i, int64_t past, int64_t n,
                     oac_ralloc *a, oac_tensor *t)
{
    const oac_dec_input *in = &d->in[i];
    const struct role *ro = &roles[in->role];
    int64_t total = past + n;
    memset(t, 0, sizeof *t);
    t->elem_type = in->elem_type;
    t->rank = in->rank;
    memcpy(t->dims, in->dims, sizeof t->dims);
    if (in->grow_axis >= 0 && in->dims[in->grow_axis] < 0)
        t->dims[in->grow_axis] = in->grow == OAC_DSYM_NEW ? n : total;
    uint64_t numel, bytes;
    if (!oac_tensor_numel_rt(t, &numel) || !oac_elem_bytes(t->elem_type, numel, &bytes) ||
        bytes > SIZE_MAX)
        return oac_err(d->ctx, OAC_EBUDGET, "decoder input %zu: more bytes than a 64-bit "
                       "count holds", i);
    t->bytes = (size_t)bytes;
    t->data = t->bytes ? oac_ralloc_bound(a, t->bytes) : NULL;
    if (t->bytes && !t->data)       /* the budget's refusal, or out of memory */
        return oac_ralloc_refusal(a, "decoder input", ro->key);
    int64_t inner = in->grow_axis >= 0 ? t->dims[in->grow_axis] : 1;
    for (uint64_t e = 0; e < numel; e++) {
        int64_t j = inner > 0 ? (int64_t)(e % (uint64_t)inner) : 0, v = 0;
        switch (ro->fill) {
        case FILL_TOKENS:
            v = d->tokens ? d->tokens[(uint64_t)(past + j) % d->n_tokens] : past + j + 1;
            break;
        case FILL_ONES: v = j < total; break;
        case FILL_POSITIONS: v = past + j; break;
        case FILL_TOTAL_MINUS_1: v = total - 1; break;
        case FILL_TOTAL: v = total; break;
        case FILL_PAST: v = past; break;
        }
        if (t->elem_type == OAC_T_INT64) {
            memcpy((uint8_t *)t->data + 8 * e, &v, 8);
            continue;
        }
        /* A token the option gave that the input cannot hold is one usage
         * error (contract 12); a length past INT32 is the model's limit. */
        if ((v < INT32_MIN || v > INT32_MAX) && ro->fill == FILL_TOKENS && d->tokens)
            return oac_err(d->ctx, OAC_EINVAL, "--tokens: %" PRId64 " does not fit decoder "
                           "input '%s', which is INT32", v, ro->key);
        if (v < INT32_MIN || v > INT32_MAX)
            return oac_err(d->ctx, OAC_EUNSUPPORTED,
                           "decoder input '%s' is INT32, but the step needs %" PRId64,
                           ro->key, v);
        int32_t w = (int32_t)v;
        memcpy((uint8_t *)t->data + 4 * e, &w, 4);
    }
    return OAC_OK;
}

bool oac_decoder_feeds_total(const oac_decoder *d)
{
    for (size_t i = 0; d && i < d->n_in; i++) {
        fill f = roles[d->in[i].role].fill;
        if (f == FILL_ONES || f == FILL_TOTAL || f == FILL_TOTAL_MINUS_1)
            return true;
    }
    return false;
}

bool oac_decoder_varies(const oac_decoder *d)
{
    for (size_t i = 0; d && i < d->n_syms; i++)
        if (d->syms[i].kind != OAC_DSYM_CONST)
            return true;
    return false;
}

/* The bindings of a check: o->dims, then the loop's symbols at past
 * length past with n new tokens (all: every symbol; else only those that
 * keep one number every step). */
static int dims_at(const oac_decoder *d, const oac_run_opts *o, bool all,
                   int64_t past, int64_t n_new, oac_dim_binding **out,
                   size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    size_t n = o->n_dims + d->n_syms;
    oac_dim_binding *b = oac_calloc(d->ctx, n ? n : 1, sizeof *b);
    if (!b)
        return OAC_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < o->n_dims; i++)
        b[k++] = o->dims[i];
    for (size_t i = 0; i < d->n_syms; i++) {
        const oac_dec_sym *s = &d->syms[i];
        if (opt_dim(o, s->name) >= 0 || (!all && s->kind != OAC_DSYM_CONST))
            continue;
        b[k++] = (oac_dim_binding){ s->name, oac_decoder_sym(d, s->name, past, n_new) };
    }
    *out = b;
    *n_out = k;
    return OAC_OK;
}

int oac_decoder_dims(const oac_decoder *d, const oac_run_opts *o, bool first_step,
                     oac_dim_binding **out, size_t *n_out)
{
    return dims_at(d, o, first_step, 0, d->prompt, out, n_out);
}

int oac_decoder_dims_at(const oac_decoder *d, const oac_run_opts *o, uint64_t k,
                        oac_dim_binding **out, size_t *n_out)
{
    /* Step k's past is what steps 0 .. k-1 fed: the prompt, then one
     * token a step. */
    int64_t past = k == 0 ? 0 : d->prompt + (int64_t)(k - 1);
    return dims_at(d, o, true, past, oac_decoder_new_tokens(d, k), out, n_out);
}

int oac_run_dims(oac_ctx *ctx, oac_dim_binding **out, size_t *n_out,
                 const oac_model *model, const oac_run_opts *opts, oac_diags *diags)
{
    static const oac_run_opts none;
    *out = NULL;
    *n_out = 0;
    if (!opts)
        opts = &none;
    oac_decoder *d;
    int rc = oac_decoder_new(ctx, &d, model, opts, diags);
    if (rc)
        return rc;
    rc = oac_decoder_dims(d, opts, true, out, n_out);
    oac_decoder_free(d);
    return rc;
}

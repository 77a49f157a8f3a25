/* run/bind.c: bindings of caller-owned storage to READ_WRITE inputs, and the
 * run's graph inputs (contract section 3, runtime codes binding-readonly,
 * binding-overlap, binding-busy, binding-too-small; section 5, "Inputs
 * not given are zero-filled", "each READ_WRITE input is bound once").
 *
 * Owns oac_binding and its refusals, and what a run binds to the main
 * graph's inputs (run/exec.h, rt_input): each input's type and dims (declared,
 * --dim, the analysis's dim_params, or its --input file's), its data (the
 * --input file the analysis read, or one the check was not given read by
 * the same reader, check/inputs.c; the initializer that is its default; else
 * zeros), and one binding per READ_WRITE input: the caller's (test
 * hooks) or storage the run owns.  A refusal is a diagnostic and the run
 * does not start: there is no fallback that copies the cache into fresh
 * storage.
 *
 * Invariants:
 *  1. owner is changed only by compare-and-swap from 0 to a session, and
 *     back to 0 only by the session holding it, so at most one session
 *     writes through a binding at any time.  The owner lives in the
 *     binding, never in a global, so independent runs do not interact.
 *  2. oac_bindings_acquire_all takes bindings in array order and gives
 *     back what it took on failure; since every session starts with the
 *     same first binding, the session winning it wins all of them, and K
 *     racing sessions yield exactly one winner.
 */
#include <inttypes.h>
#include <string.h>

#include "run/generate.h"
#include "run/exec.h"
#include "check/inputs.h"
#include "check/shapes_store.h"

void oac_binding_init(oac_binding *b, const char *name, void *data,
                      size_t bytes, bool writable)
{
    b->name = name;
    b->data = data;
    b->bytes = bytes;
    b->writable = writable;
    b->is_initializer = false;
    b->is_constant = false;
    b->invalid = false;
    atomic_init(&b->owner, 0);
}

void oac_binding_reset(oac_binding *b)
{
    b->invalid = false;
}

bool oac_binding_acquire(oac_binding *b, const void *session)
{
    uintptr_t want = 0;
    uintptr_t me = (uintptr_t)session;
    if (atomic_compare_exchange_strong(&b->owner, &want, me))
        return true;
    return want == me;
}

void oac_binding_release(oac_binding *b, const void *session)
{
    uintptr_t me = (uintptr_t)session;
    atomic_compare_exchange_strong(&b->owner, &me, 0);
}

int oac_binding_check(const oac_binding *b, uint64_t need,
                      const char *readonly_why, oac_diags *diags)
{
    oac_where w = { .value = b->name };
    int rc = OAC_OK;
    if (readonly_why || b->is_initializer || b->is_constant || !b->writable) {
        const char *why = readonly_why ? readonly_why
                        : b->is_initializer ? "an initializer"
                        : b->is_constant ? "a constant"
                        : "storage declared read-only";
        if (oac_diag_add(diags, OAC_BINDING_READONLY, &w,
                         "mutable cache '%s' is bound to %s", b->name, why))
            return OAC_ENOMEM;
        rc = OAC_ERUNTIME;
    }
    if ((uint64_t)b->bytes < need) {
        if (oac_diag_add(diags, OAC_BINDING_TOO_SMALL, &w,
                         "storage bound to '%s' holds %zu bytes, its declared "
                         "capacity needs %" PRIu64, b->name, b->bytes, need))
            return OAC_ENOMEM;
        rc = OAC_ERUNTIME;
    }
    return rc;
}

/* Byte ranges [a, a+na) and [b, b+nb) share a byte.  Compared as
 * integers: the storages are distinct objects, so pointer relational
 * operators would be undefined. */
static bool overlaps(const void *a, size_t na, const void *b, size_t nb)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    if (!na || !nb)
        return false;
    return x < y + nb && y < x + na;
}

int oac_bindings_check_overlap(oac_binding *const *b, size_t n,
                               oac_diags *diags)
{
    int rc = OAC_OK;
    for (size_t i = 0; i < n; i++) {
        if (!b[i]->writable)
            continue;
        for (size_t j = i + 1; j < n; j++) {
            if (!b[j]->writable ||
                !overlaps(b[i]->data, b[i]->bytes, b[j]->data, b[j]->bytes))
                continue;
            oac_where w = { .value = b[j]->name };
            if (oac_diag_add(diags, OAC_BINDING_OVERLAP, &w,
                             "mutable inputs '%s' and '%s' are bound to "
                             "overlapping storage", b[i]->name, b[j]->name))
                return OAC_ENOMEM;
            rc = OAC_ERUNTIME;
        }
    }
    return rc;
}

int oac_bindings_acquire_all(oac_binding *const *b, size_t n,
                             const void *session, unsigned session_no,
                             oac_diags *diags)
{
    for (size_t i = 0; i < n; i++) {
        if (oac_binding_acquire(b[i], session))
            continue;
        for (size_t j = 0; j < i; j++)
            oac_binding_release(b[j], session);
        oac_where w = { .value = b[i]->name };
        int rc = session_no
                 ? oac_diag_add(diags, OAC_BINDING_BUSY, &w,
                                "session %u: writable binding '%s' is already "
                                "held by another session", session_no, b[i]->name)
                 : oac_diag_add(diags, OAC_BINDING_BUSY, &w,
                                "writable binding '%s' is already held by "
                                "another session", b[i]->name);
        if (rc)
            return OAC_ENOMEM;
        return OAC_ERUNTIME;
    }
    return OAC_OK;
}

void oac_bindings_release_all(oac_binding *const *b, size_t n,
                              const void *session)
{
    for (size_t i = 0; i < n; i++)
        oac_binding_release(b[i], session);
}

/* ------------------------------------------------------------------ */
/* Writes through bindings (contract 8, binding-invalid)                */
/* ------------------------------------------------------------------ */

void oac_rt_binding_wrote(oac_session *s, const oac_rtval *v)
{
    const rt_run *r = s->run;
    for (size_t b = 0; b < r->n_bind; b++)
        if (r->bind_val[b] == v) {
            s->wrote[b] = true;
            return;
        }
}

int oac_rt_bindings_usable(oac_session *s)
{
    const rt_run *r = s->run;
    int rc = OAC_OK;
    for (size_t b = 0; b < r->n_bind; b++) {
        if (!r->bind[b]->invalid)
            continue;
        oac_where w = { .value = r->bind[b]->name };
        if (oac_diag_add(s->diags, OAC_BINDING_INVALID, &w,
                         "cache '%s' is bound to storage an earlier step left "
                         "half-written (it failed after writing it): no step runs "
                         "on it until the binding is reset", r->bind[b]->name))
            return OAC_ENOMEM;
        rc = OAC_ERUNTIME;
    }
    return rc;
}

void oac_rt_bindings_step_begin(oac_session *s)
{
    for (size_t b = 0; b < s->run->n_bind; b++)
        s->wrote[b] = false;
}

void oac_rt_bindings_step_failed(oac_session *s)
{
    const rt_run *r = s->run;
    for (size_t b = 0; b < r->n_bind; b++)
        if (s->wrote[b])
            r->bind[b]->invalid = true;
}

/* ------------------------------------------------------------------ */
/* The run's graph inputs                                               */
/* ------------------------------------------------------------------ */

/* The value of dim_param name: the run's --dim, else the generation
 * loop's first step (run/generate.h), else the analysis's; -1 when unknown. */
static int64_t sym_value(const rt_run *r, const char *name)
{
    int64_t v = -1;
    for (size_t j = 0; j < r->opts->n_dims; j++)
        if (r->opts->dims[j].name && !strcmp(r->opts->dims[j].name, name))
            v = r->opts->dims[j].value;
    /* A symbol the generation loop binds: its first step's. */
    if (v < 0)
        v = oac_decoder_sym(r->dec, name, 0, oac_decoder_new_tokens(r->dec, 0));
    if (v < 0)
        v = oac_analysis_dim(r->an, name);
    return v;
}

/* The concrete dims of a declared shape, resolving dim_params through
 * sym_value.  OAC_EINVAL when one stays unknown (missing_dims has named
 * every unknown symbol before this runs). */
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
            v = sym_value(r, d->dim_param);
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

/* The --input file the run was given for input in, or NULL: the one the
 * check read (the analysis keeps it), else read now by the same reader
 * (check/inputs.c), as the message the input's declared type calls for. */
static int input_file(rt_run *r, rt_input *in, const oac_pbfile **out)
{
    *out = NULL;
    for (size_t i = 0; i < r->opts->n_inputs; i++) {
        const oac_input_file *f = &r->opts->inputs[i];
        if (!f->name || strcmp(f->name, in->v->name))
            continue;
        if ((*out = oac_analysis_input(r->an, f->name)))
            return OAC_OK;
        const Onnx__TypeProto *t = oac_value_type(in->v);
        int kind = !t ? OAC_VK_TENSOR
                 : t->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? OAC_VK_SEQUENCE
                 : t->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE ? OAC_VK_MAP
                 : OAC_VK_TENSOR;
        int rc = oac_input_read(r->ctx, f, kind, &in->file);
        *out = in->file;
        return rc;
    }
    return OAC_OK;
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
    if (!oac_elem_name(t->elem_type))
        return oac_err(r->ctx, OAC_EINVAL, "input '%s': element type %d has no fixed size",
                       what, t->elem_type);
    /* A size whose byte count overflows is the model's (or its dims'),
     * a memory-budget finding with the report, never a usage error
     * (contract 12). */
    if (!oac_tensor_numel_rt(t, &n) || !oac_elem_bytes(t->elem_type, n, &b) ||
        b > SIZE_MAX)
        return oac_err(r->ctx, OAC_EBUDGET,
                       "input '%s' (%s) would need more bytes than a 64-bit count holds",
                       what, oac_elem_name(t->elem_type));
    if (b > OAC_RT_MAX_BYTES)
        return oac_err(r->ctx, OAC_EBUDGET,
                       "input '%s' would need %" PRIu64 " bytes, above the reference "
                       "runtime's limit of %" PRIu64 " per buffer", what, b,
                       OAC_RT_MAX_BYTES);
    t->bytes = (size_t)b;
    return OAC_OK;
}

/* A tensor input from its --input TensorProto: the file's dims win; the
 * data is read into run-bound (excluded) storage. */
static int load_tensor_file(rt_run *r, rt_input *in, const oac_pbfile *f,
                            const char *name)
{
    const Onnx__TensorProto *tp = (const Onnx__TensorProto *)f->msg;
    if (tp->n_dims > OAC_RT_MAX_RANK)
        return oac_err(r->ctx, OAC_EUNSUPPORTED, "--input %s: rank too large", name);
    oac_tensor t = { .elem_type = tp->data_type, .rank = (int)tp->n_dims };
    for (size_t i = 0; i < tp->n_dims; i++)
        t.dims[i] = tp->dims[i];
    int rc = tensor_bytes(r, &t, name);
    if (rc)
        return rc;
    if (in->tmpl.elem_type && t.elem_type != in->tmpl.elem_type)
        return oac_err(r->ctx, OAC_EINVAL, "--input %s: element type %d, declared %d",
                       name, t.elem_type, in->tmpl.elem_type);
    t.data = t.bytes ? oac_ralloc_bound(&r->balloc, t.bytes) : NULL;
    if (t.bytes && !t.data)
        return oac_ralloc_refusal(&r->balloc, "--input", name);
    in->tmpl = t;
    return oac_tensor_read(r->ctx, r->model, tp, t.data, t.bytes);
}

/* The pages of a paged input from its --input SequenceProto (a Map
 * cache: MapProto, its keys and its values' pages). */
static int load_paged_file(rt_run *r, rt_input *in, const oac_pbfile *f,
                           const char *name)
{
    const Onnx__SequenceProto *sp = (const Onnx__SequenceProto *)f->msg;
    const Onnx__MapProto *mp = NULL;
    if (in->ptmpl.map) {
        mp = (const Onnx__MapProto *)f->msg;
        if (f->msg->descriptor != &onnx__map_proto__descriptor || !mp->values ||
            mp->n_keys != mp->values->n_quantized_tensor_values)
            return oac_err(r->ctx, OAC_EPARSE, "--input %s: a Map cache needs a "
                           "MapProto with one INT64 key per page", name);
        sp = mp->values;
    }
    int rc = oac_paged_reserve(r->ctx, &in->ptmpl, sp->n_quantized_tensor_values);
    if (rc)
        return rc;
    for (size_t i = 0; i < sp->n_quantized_tensor_values; i++) {
        const Onnx__QuantizedTensorProto *q = sp->quantized_tensor_values[i];
        oac_payload pl;
        if (!oac_qtensor_payload(q, &pl) || (pl.len && !pl.bytes))
            return oac_err(r->ctx, OAC_EPARSE, "--input %s: page %zu has no raw_data",
                           name, i);
        oac_page *pg = &in->ptmpl.pages[i];
        pg->quantized_type = q->has_quantized_type ? q->quantized_type : 0;
        pg->key = mp ? mp->keys[i] : (int64_t)i;
        pg->bytes = pl.len;
        pg->bound = true;
        pg->data = pl.len ? oac_ralloc_bound(&r->balloc, pl.len) : NULL;
        if (pl.len && !pg->data)
            return oac_ralloc_refusal(&r->balloc, "a page of --input", name);
        if (pl.len)
            memcpy(pg->data, pl.bytes, pl.len);
        in->ptmpl.n_pages = i + 1;
    }
    return OAC_OK;
}

/* The main-graph input of that name, or -1. */
static long input_named(const rt_run *r, const char *name)
{
    const oac_value *v = name ? oac_scope_local(r->main, name) : NULL;
    return v && v->kind == OAC_VAL_INPUT && v->input_index >= 0 ? v->input_index : -1;
}

/* Usage errors of the run's options (OAC_EINVAL). */
static int check_options(rt_run *r)
{
    for (size_t i = 0; i < r->opts->n_inputs; i++) {
        const char *nm = r->opts->inputs[i].name;
        if (input_named(r, nm) < 0)
            return oac_err(r->ctx, OAC_EINVAL, "--input %s: no graph input of that name",
                           nm ? nm : "");
    }
    for (size_t i = 0; i < r->opts->n_readonly; i++) {
        long k = input_named(r, r->opts->readonly[i]);
        const Onnx__ValueInfoProto *vi = k >= 0 ? oac_value_vi(r->in[k].v) : NULL;
        if (!vi || !vi->has_access ||
            vi->access != ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE)
            return oac_err(r->ctx, OAC_EINVAL, "--readonly %s: no READ_WRITE cache of that name",
                           r->opts->readonly[i] ? r->opts->readonly[i] : "");
    }
    return OAC_OK;
}

/* Bind READ_WRITE input in (graph input vi): the caller's binding from
 * the hooks, else storage this run owns (zeroed, or the --input data). */
static int bind_cache(rt_run *r, rt_input *in, const Onnx__ValueInfoProto *vi,
                      const oac_pbfile *f)
{
    size_t b = r->n_bind++;
    oac_binding *bd = NULL;
    for (size_t h = 0; r->hooks && h < r->hooks->n_bindings; h++)
        if (!strcmp(r->hooks->bindings[h]->name, vi->name))
            bd = r->hooks->bindings[h];
    oac_rtval *val = &r->own_val[b];
    if (in->paged) {
        val->kind = OAC_RTV_PAGED;
        val->storage = OAC_STORE_BOUND;
        val->p = in->ptmpl;
        in->ptmpl.pages = NULL;       /* moved into the shared value */
        in->ptmpl.n_pages = in->ptmpl.cap_pages = 0;
        if (!bd) {
            bd = &r->own_bind[b];
            oac_binding_init(bd, vi->name, val, 0, true);
        }
    } else {
        /* The declared capacity, whatever an --input file holds. */
        oac_tensor decl = { .elem_type = in->tmpl.elem_type };
        int rc;
        if ((rc = resolve_dims(r, vi->name, vi->type->tensor_type->shape, &decl.rank,
                               decl.dims)) ||
            (rc = tensor_bytes(r, &decl, vi->name)))
            return rc;
        if (f && in->tmpl.bytes >= decl.bytes) {
            bool same = in->tmpl.rank == decl.rank;
            for (int d = 0; same && d < decl.rank; d++)
                same = in->tmpl.dims[d] == decl.dims[d];
            if (!same)
                return oac_err(r->ctx, OAC_EINVAL,
                               "--input %s: dims differ from the declared cache shape",
                               vi->name);
        }
        if (!bd) {
            bd = &r->own_bind[b];
            void *data = in->tmpl.data;
            if (!data && in->tmpl.bytes) {
                data = oac_ralloc_bound(&r->balloc, in->tmpl.bytes);
                if (!data)
                    return oac_ralloc_refusal(&r->balloc, "the storage bound to",
                                              vi->name);
                in->tmpl.data = data;
            }
            oac_binding_init(bd, vi->name, data, in->tmpl.bytes, true);
        }
        val->kind = OAC_RTV_TENSOR;
        val->storage = OAC_STORE_BOUND;
        val->t = decl;
        val->t.data = bd->data;
        val->t.bytes = decl.bytes;
    }
    /* Why this cache must not be written, decided by the run; a caller's
     * binding object is left as it was given. */
    const char *why = is_readonly_opt(r, vi->name) ? "storage declared read-only (--readonly)"
                    : oac_value_is_initializer(in->v) ? "an initializer" : NULL;
    r->bind_why[b] = why;
    val->writable = !why && bd->writable && !bd->is_initializer && !bd->is_constant;
    r->bind[b] = bd;
    r->bind_val[b] = val;
    in->binding = (long)b;
    return OAC_OK;
}

/* Has the run an --input file for graph input name? */
static bool has_input_opt(const rt_run *r, const char *name)
{
    for (size_t i = 0; i < r->opts->n_inputs; i++)
        if (r->opts->inputs[i].name && !strcmp(r->opts->inputs[i].name, name))
            return true;
    return false;
}

/* Every dim_param the inputs' bindings need (the shapes resolve_dims is
 * given below) that nothing binds, named in one OAC_EINVAL message, so
 * one run says every --dim it lacks (first seen first, each once). */
static int missing_dims(rt_run *r)
{
    enum { MAX_NAMED = 64 };
    const char *names[MAX_NAMED], *first_input = NULL;
    size_t n = 0, more = 0;
    for (size_t i = 0; i < r->n_in; i++) {
        const Onnx__ValueInfoProto *vi = oac_value_vi(r->in[i].v);
        const Onnx__TypeProto *tp = vi ? vi->type : NULL;
        const Onnx__TensorShapeProto *shape = NULL;
        bool rw = vi && vi->has_access &&
                  vi->access == ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE;
        if (!tp)
            continue;
        if (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE &&
            tp->sequence_type->elem_type &&
            tp->sequence_type->elem_type->value_case ==
                ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE)
            shape = tp->sequence_type->elem_type->quantized_tensor_type->shape;
        else if (tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
                 (rw || !has_input_opt(r, r->in[i].v->name)))
            shape = tp->tensor_type->shape;
        for (size_t k = 0; shape && k < shape->n_dim && k < OAC_RT_MAX_RANK; k++) {
            const Onnx__TensorShapeProto__Dimension *d = shape->dim[k];
            if (d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ||
                !d->dim_param || sym_value(r, d->dim_param) >= 0)
                continue;
            bool seen = false;
            for (size_t j = 0; j < n && !seen; j++)
                seen = !strcmp(names[j], d->dim_param);
            if (seen)
                continue;
            if (n == MAX_NAMED) {
                more++;
                continue;
            }
            if (!n)
                first_input = r->in[i].v->name;
            names[n++] = d->dim_param;
        }
    }
    if (n == 0)
        return OAC_OK;
    if (n == 1)
        return oac_err(r->ctx, OAC_EINVAL,
                       "dimension '%s' of input '%s' is unknown (give --dim %s=N)",
                       names[0], first_input, names[0]);
    /* "N dimensions are unknown: a, b (give --dim a=N --dim b=N)", cut
     * short with "..." where the message would not fit. */
    char list[512], give[512];
    size_t ll = 0, gl = 0, total = n + more;
    bool cut = more > 0;
    list[0] = give[0] = '\0';
    for (size_t j = 0; j < n; j++) {
        int a = snprintf(list + ll, sizeof list - ll, "%s%s", j ? ", " : "", names[j]);
        int b = snprintf(give + gl, sizeof give - gl, "%s--dim %s=N", j ? " " : "", names[j]);
        if (a < 0 || b < 0 || (size_t)a >= sizeof list - ll - 4 ||
            (size_t)b >= sizeof give - gl - 4) {
            list[ll] = give[gl] = '\0';
            cut = true;
            break;
        }
        ll += (size_t)a;
        gl += (size_t)b;
    }
    return oac_err(r->ctx, OAC_EINVAL, "%zu dimensions are unknown: %s%s (give %s%s)",
                   total, list, cut ? ", ..." : "", give, cut ? " ..." : "");
}

int oac_rt_bind_inputs(rt_run *r)
{
    const oac_scope *m = r->main;
    r->n_in = m->n_inputs;
    r->in = oac_calloc(r->ctx, r->n_in ? r->n_in : 1, sizeof *r->in);
    if (!r->in)
        return OAC_ENOMEM;
    for (size_t i = 0; i < r->n_in; i++) {
        r->in[i].v = m->inputs[i];
        r->in[i].binding = -1;
        r->in[i].page = -1;
        r->in[i].dec = -1;
        if (!r->in[i].v)
            return oac_err(r->ctx, OAC_EUNSUPPORTED, "graph input %zu has no name", i);
    }
    int rc = check_options(r);
    if (rc || (rc = missing_dims(r)))
        return rc;
    for (size_t k = 0; r->dec && k < r->dec->n_in; k++)
        if (r->dec->in[k].port < r->n_in)
            r->in[r->dec->in[k].port].dec = (long)k;
    size_t n_rw = 0;
    for (size_t i = 0; i < r->n_in; i++) {
        const Onnx__ValueInfoProto *vi = oac_value_vi(r->in[i].v);
        if (vi && vi->has_access && vi->access == ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE)
            n_rw++;
    }
    size_t n = n_rw ? n_rw : 1;
    r->own_bind = oac_calloc(r->ctx, n, sizeof *r->own_bind);
    r->own_val = oac_calloc(r->ctx, n, sizeof *r->own_val);
    r->bind = oac_calloc(r->ctx, n, sizeof *r->bind);
    r->bind_val = oac_calloc(r->ctx, n, sizeof *r->bind_val);
    r->bind_why = oac_calloc(r->ctx, n, sizeof *r->bind_why);
    if (!r->own_bind || !r->own_val || !r->bind || !r->bind_val || !r->bind_why)
        return OAC_ENOMEM;

    for (size_t i = 0; i < r->n_in; i++) {
        rt_input *in = &r->in[i];
        const Onnx__ValueInfoProto *vi = oac_value_vi(in->v);
        const Onnx__TypeProto *tp = vi ? vi->type : NULL;
        const char *name = in->v->name;
        const oac_pbfile *f;
        if ((rc = input_file(r, in, &f)))
            return rc;
        bool rw = vi && vi->has_access &&
                  vi->access == ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE;
        const Onnx__TypeProto *pt =
            tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type
                ? tp->sequence_type->elem_type
            : tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE && tp->map_type
                ? tp->map_type->value_type : NULL;
        if (pt && pt->value_case == ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE &&
            pt->quantized_tensor_type) {
            const Onnx__TypeProto__QuantizedTensor *qt = pt->quantized_tensor_type;
            in->ptmpl.map = tp->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
            int rank;
            int64_t dims[OAC_RT_MAX_RANK];
            if ((rc = resolve_dims(r, name, qt->shape, &rank, dims)))
                return rc;
            if (rank != 4)
                return oac_err(r->ctx, OAC_EINVAL, "paged cache '%s' must have rank 4",
                               name);
            in->paged = true;
            in->ptmpl.elem_type = qt->elem_type;
            memcpy(in->ptmpl.page_dims, dims, sizeof in->ptmpl.page_dims);
            in->ptmpl.allowed = qt->allowed_quantized_type;
            in->ptmpl.n_allowed = qt->n_allowed_quantized_type;
            if (f && (rc = load_paged_file(r, in, f, name)))
                return rc;
        } else if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
            in->tmpl.elem_type = tp->tensor_type->elem_type;
            if (f) {
                if ((rc = load_tensor_file(r, in, f, name)))
                    return rc;
            } else {
                if ((rc = resolve_dims(r, name, tp->tensor_type->shape,
                                       &in->tmpl.rank, in->tmpl.dims)))
                    return rc;
                if ((rc = tensor_bytes(r, &in->tmpl, name)))
                    return rc;
                /* An initializer that is also an input is its default. */
                const Onnx__TensorProto *init = oac_value_init(in->v);
                if (!rw && init) {
                    in->tmpl.data = oac_ralloc_bound(&r->balloc, in->tmpl.bytes);
                    if (in->tmpl.bytes && !in->tmpl.data)
                        return oac_ralloc_refusal(&r->balloc, "the default of input",
                                                  name);
                    if ((rc = oac_tensor_read(r->ctx, r->model, init, in->tmpl.data,
                                              in->tmpl.bytes)))
                        return rc;
                }
            }
        } else {
            return oac_err(r->ctx, OAC_EUNSUPPORTED,
                           "input '%s': the runtime runs tensors and paged caches only",
                           name);
        }
        if (rw && (rc = bind_cache(r, in, vi, f)))
            return rc;
    }
    return OAC_OK;
}

int oac_rt_check_bindings(rt_run *r, oac_diags *diags, uint64_t *cache_bytes)
{
    int refuse = OAC_OK;
    for (size_t b = 0; b < r->n_bind; b++) {
        const oac_rtval *v = r->bind_val[b];
        int brc = oac_binding_check(r->bind[b], v->kind == OAC_RTV_TENSOR ? v->t.bytes : 0,
                                    r->bind_why[b], diags);
        if (brc == OAC_ENOMEM)
            return brc;
        if (brc)
            refuse = brc;
        *cache_bytes += v->kind == OAC_RTV_TENSOR ? r->bind[b]->bytes : 0;
    }
    int orc = oac_bindings_check_overlap(r->bind, r->n_bind, diags);
    if (orc == OAC_ENOMEM)
        return orc;
    return orc ? orc : refuse;
}

void oac_rt_bind_fini(rt_run *r)
{
    for (size_t i = 0; r->in && i < r->n_in; i++) {
        rt_input *in = &r->in[i];
        /* Own bindings point at tmpl.data: freed here, once. */
        if (in->tmpl.data)
            oac_ralloc_unbound(&r->balloc, in->tmpl.data, in->tmpl.bytes);
        for (size_t p = 0; p < in->ptmpl.n_pages; p++)
            oac_page_release(&r->balloc, &in->ptmpl.pages[p]);
        oac_dealloc(r->ctx, in->ptmpl.pages);
        oac_pbfile_free(in->file);
    }
    for (size_t b = 0; b < r->n_bind; b++) {
        oac_rtval *v = r->bind_val[b];
        if (v && v->kind == OAC_RTV_PAGED) {
            for (size_t p = 0; p < v->p.n_pages; p++)
                oac_page_release(&r->balloc, &v->p.pages[p]);
            oac_dealloc(r->ctx, v->p.pages);
        }
    }
    oac_dealloc(r->ctx, r->in);
    oac_dealloc(r->ctx, r->own_bind);
    oac_dealloc(r->ctx, r->own_val);
    oac_dealloc(r->ctx, r->bind);
    oac_dealloc(r->ctx, r->bind_val);
    oac_dealloc(r->ctx, r->bind_why);
    r->in = NULL;
}

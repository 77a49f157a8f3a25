/* check/inputs.c: --input NAME=FILE.pb for check (and, through the analysis,
 * for run), the one reader of --input files.
 *
 * Owns: loading each --input file as the message its graph input's
 * declared type calls for (TensorProto for tensors, SequenceProto for
 * sequences, MapProto for maps), and seeding the shapes pass with what a
 * tensor file says: its dims are facts (they bind the input's symbols;
 * a contradiction is shape-mismatch) and a small integer tensor is a
 * known value.  Contract: section 3 ("a --input given to check" is
 * known; pages of --input files are validated by check/pages.c), section 5.
 *
 * Invariants:
 *  1. A name that is no input of the main graph, or the same name given
 *     twice (which file wins would be a guess), is a usage error:
 *     OAC_EINVAL with the message on ctx, nothing in the diagnostics.
 *  2. A file that cannot be read (missing, not a regular file: FIFOs are
 *     never waited on, model/load.c) or is malformed (not the message its input
 *     calls for, or a tensor in it whose payload is not its element count
 *     times its element size) is unreadable input: one parse-error
 *     diagnostic naming the input and the file, and the check goes on
 *     without it (the value stays unknown).  So the report says why the
 *     exit status is 2, and `run`, which checks first, never reads it.
 *  3. Files stay mapped (payloads are not copied) and are owned by the
 *     analysis (check/analysis.h), where the runtime reads them.
 *  4. With st->inputs_from (the shapes pass again over a made analysis,
 *     check/shapes_at.c), a file that analysis read is borrowed, not
 *     read, validated or reported again.
 */
#include <stdio.h>
#include <string.h>

#include "check/checker.h"
#include "check/graph.h"
#include "check/inputs.h"
#include "check/shapes.h"
#include "model/walk.h"

int oac_input_read(oac_ctx *ctx, const oac_input_file *in, int kind,
                   oac_pbfile **out)
{
    const ProtobufCMessageDescriptor *desc = &onnx__tensor_proto__descriptor;
    if (kind == OAC_VK_SEQUENCE)
        desc = &onnx__sequence_proto__descriptor;
    else if (kind == OAC_VK_MAP)
        desc = &onnx__map_proto__descriptor;
    *out = NULL;
    /* An input of the call, readable or not (guard.c). */
    int rc = oac_guard_add(ctx, in->path, "an --input file");
    if (rc != OAC_OK)
        return rc;
    rc = oac_pbfile_load(ctx, out, in->path, desc, NULL);
    if (rc == OAC_ENOMEM)
        return rc;
    if (rc) {
        /* The loader's message lives in ctx->errmsg, which oac_err
         * overwrites: copy it first. */
        char why[sizeof ctx->errmsg];
        snprintf(why, sizeof why, "%s", oac_errmsg(ctx));
        return oac_err(ctx, OAC_EINVAL, "--input %s=%s: %s", in->name,
                       in->path, why);
    }
    return OAC_OK;
}

/* The first tensor anywhere in a message (a TensorProto, or one inside
 * a SequenceProto, MapProto or OptionalProto, sparse parts included)
 * whose payload does not fit its dims, by the walk of model/walk.h;
 * external data refused exactly as the run's reader refuses it
 * (extdata.c), and a rank the runtime cannot hold refused here as run
 * refuses it, so check and run agree on every file. */
typedef struct fit {
    oac_ctx *ctx;
    const oac_model *model;
    char *why;
    size_t why_len;
} fit;

static int fit_tensor(fit *f, const Onnx__TensorProto *t)
{
    char part[400];
    const char *name = t->name ? t->name : "";
    if (oac_external_judge(f->ctx, f->model, t, part, sizeof part) != OAC_OK) {
        snprintf(f->why, f->why_len, "out of memory");
        return OAC_WALK_STOP;
    }
    if (part[0]) {
        snprintf(f->why, f->why_len, "tensor '%s': %s", name, part);
        return OAC_WALK_STOP;
    }
    /* A segment of a larger tensor: the run's reader takes whole tensors
     * only, so the check refuses it as the run would. */
    if (t->segment) {
        snprintf(f->why, f->why_len, "tensor '%s' is a segment of a larger tensor "
                 "(TensorProto.segment); give the whole tensor", name);
        return OAC_WALK_STOP;
    }
    if (t->n_dims > OAC_RT_MAX_RANK) {
        snprintf(f->why, f->why_len, "tensor '%s' has rank %zu; the reference runtime "
                 "holds tensors of rank %d at most", name, t->n_dims, OAC_RT_MAX_RANK);
        return OAC_WALK_STOP;
    }
    if (oac_tensor_payload_fits(f->ctx, t, part, sizeof part))
        return OAC_WALK_SKIP;
    snprintf(f->why, f->why_len, "tensor '%s' %s", name, part);
    return OAC_WALK_STOP;
}

static int fit_enter(void *arg, const ProtobufCMessage *m,
                     const ProtobufCFieldDescriptor *fd, long index, int depth)
{
    fit *f = arg;
    (void)fd;
    (void)index;
    if (depth > OAC_MAX_DEPTH) {
        snprintf(f->why, f->why_len, "nested deeper than %d levels", OAC_MAX_DEPTH);
        return OAC_WALK_STOP;
    }
    if (m->descriptor != &onnx__tensor_proto__descriptor)
        return OAC_WALK_ON;
    return fit_tensor(f, (const Onnx__TensorProto *)m);
}

/* Does every tensor in m fit?  false with why set. */
static bool tensors_fit(oac_ctx *ctx, const oac_model *model,
                        const ProtobufCMessage *m, char *why, size_t why_len)
{
    fit f = { ctx, model, why, why_len };
    const oac_msg_walker wk = { .enter = fit_enter, .arg = &f };
    return oac_msg_walk(&wk, m, 0) != OAC_WALK_STOP;
}

/* Invariant 2: the parse-error of --input name=path, what says why. */
static int unreadable(oac_check_state *st, const oac_value *v,
                      const oac_input_file *in, const char *what)
{
    char loc[64];
    snprintf(loc, sizeof loc, "/graph/input/%d", (int)v->input_index);
    oac_where w = { .graph = v->scope->name, .value = in->name, .location = loc };
    return oac_diag_add(st->diags, OAC_PARSE_ERROR, &w,
                        "--input %s=%s is unreadable: %s", in->name, in->path, what);
}

int oac_shapes_load_inputs(oac_check_state *st, oac_shapes *sh)
{
    const oac_check_opts *o = st->opts;
    if (!o || !o->n_inputs)
        return OAC_OK;
    oac_ctx *ctx = st->ctx;
    const oac_graphs *g = st->graphs;
    const oac_scope *main_s = g->n_scopes ? g->scopes[0] : NULL;
    oac_analysis *a = st->out;
    a->inputs = oac_calloc(ctx, o->n_inputs, sizeof *a->inputs);
    if (!a->inputs)
        return OAC_ENOMEM;
    for (size_t i = 0; i < o->n_inputs; i++) {
        const oac_input_file *in = &o->inputs[i];
        if (!in->name || !in->name[0] || !in->path)
            return oac_err(ctx, OAC_EINVAL, "--input: expected NAME=FILE.pb");
        for (size_t j = 0; j < i; j++)
            if (!strcmp(o->inputs[j].name, in->name))
                return oac_err(ctx, OAC_EINVAL, "--input %s given twice", in->name);
        oac_value *v = main_s ? oac_scope_local(main_s, in->name) : NULL;
        if (!v || v->kind != OAC_VAL_INPUT || v->scope != main_s)
            return oac_err(ctx, OAC_EINVAL,
                           "--input %s: the main graph has no input named '%s'",
                           in->name, in->name);
        /* Read, checked and reported once: a re-run of the shapes pass
         * over a made analysis takes its file (invariant 4). */
        const oac_pbfile *had = oac_analysis_input(st->inputs_from, in->name);
        if (had) {
            a->inputs[a->n_inputs++] = (oac_input_val){
                .name = in->name, .value_id = v->id,
                .file = (oac_pbfile *)had, .borrowed = true };
            continue;
        }
        oac_pbfile *f = NULL;
        int rc = oac_input_read(ctx, in, sh->vals[v->id].kind, &f);
        if (rc == OAC_ENOMEM)
            return rc;
        char why[sizeof ctx->errmsg];
        if (rc) {
            /* The reader's reason, without the "--input NAME=PATH: " it
             * starts with (unreadable() names the file); then the
             * context's message goes: this is a finding, not a failure
             * of the check. */
            const char *m = oac_errmsg(ctx);
            size_t pl = strlen(in->path);
            const char *at = strstr(m, in->path);
            if (at && !strncmp(at + pl, ": ", 2))
                m = at + pl + 2;
            if (!strncmp(m, in->path, pl) && !strncmp(m + pl, ": ", 2))
                m += pl + 2;
            snprintf(why, sizeof why, "%s", m);
            oac_err(ctx, OAC_OK, "%s", "");
            if ((rc = unreadable(st, v, in, why)))
                return rc;
            continue;
        }
        if (!tensors_fit(ctx, st->model, f->msg, why, sizeof why)) {
            oac_pbfile_free(f);
            if ((rc = unreadable(st, v, in, why)))
                return rc;
            continue;
        }
        a->inputs[a->n_inputs++] = (oac_input_val){
            .name = in->name, .value_id = v->id, .file = f };
    }
    return OAC_OK;
}

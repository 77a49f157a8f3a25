/* inputs.c: --input NAME=FILE.pb for check (and, through the analysis,
 * for run), the one reader of --input files.
 *
 * Owns: loading each --input file as the message its graph input's
 * declared type calls for (TensorProto for tensors, SequenceProto for
 * sequences, MapProto for maps), and seeding the shapes pass with what a
 * tensor file says: its dims are facts (they bind the input's symbols;
 * a contradiction is shape-mismatch) and a small integer tensor is a
 * known value.  Contract: section 3 ("a --input given to check" is
 * known; pages of --input files are validated by pages.c), section 5.
 *
 * Invariants:
 *  1. A missing or unreadable file, or a name that is no input of the
 *     main graph, is a usage error: OAC_EINVAL with the message on ctx.
 *     Nothing is added to the model's diagnostics for it.
 *  2. Files stay mapped (payloads are not copied) and are owned by the
 *     analysis (analysis.h), where the runtime reads them.
 *  3. The same name given twice is a usage error (which file wins would
 *     be a guess).
 */
#include <stdio.h>
#include <stdio.h>
#include <string.h>

#include "checker.h"
#include "graph.h"
#include "shapes.h"

int oac_input_read(oac_ctx *ctx, const oac_input_file *in, int kind,
                   oac_pbfile **out)
{
    const ProtobufCMessageDescriptor *desc = &onnx__tensor_proto__descriptor;
    if (kind == OAC_VK_SEQUENCE)
        desc = &onnx__sequence_proto__descriptor;
    else if (kind == OAC_VK_MAP)
        desc = &onnx__map_proto__descriptor;
    *out = NULL;
    int rc = oac_pbfile_load(ctx, out, in->path, desc, NULL);
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
        oac_pbfile *f = NULL;
        int rc = oac_input_read(ctx, in, sh->vals[v->id].kind, &f);
        if (rc)
            return rc;
        a->inputs[a->n_inputs++] = (oac_input_val){
            .name = in->name, .value_id = v->id, .file = f };
    }
    return OAC_OK;
}

/* check/structure.c: the structure every rule and the runtime rely on
 * (model-invalid).
 *
 * Owns oac_pass_structure, run right after the graph pass (check/check.c).
 * Contract: section 8, `model-invalid`: the model has a graph (rule 0),
 * and in every scope the graph index lists (main graph, subgraphs, local
 * function bodies),
 *
 *  1. every node names its operator (op_type);
 *  2. every graph input, output and initializer (sparse ones included)
 *     has a name, and no two inputs, no two outputs and no two
 *     initializers of one scope share one; a function's inputs and
 *     outputs the same.  An initializer named like a graph input is that
 *     input's default, not a duplicate;
 *  3. every tensor of the scope held inline (initializers, the values and
 *     indices of sparse initializers, and the tensors of node attributes,
 *     Constant's value among them) holds exactly its element count times
 *     its element size: raw_data's length, or the values of the typed
 *     field its data_type uses (a STRING tensor: one string_data entry per
 *     element).  External payloads are model/extdata.c's (external-data-invalid,
 *     checked at load);
 *  4. every node input names a value defined in its scope or an
 *     enclosing one (a function body sees only its own), and no node
 *     output names a value the scope already defines (an input, an
 *     initializer or an earlier node's output): each value has one
 *     definition, which the interpreter's frames rely on;
 *  5. every graph, subgraph and function output names a value defined
 *     there (or, for a subgraph, in an enclosing graph): an If branch
 *     returning a name nothing produces is refused here, not met by run;
 *  6. an initializer that is a graph input's default has the element
 *     type, rank and static dims the input declares (run reads it as
 *     that input's data);
 *  7. no name (a node's name, op_type, domain, inputs and outputs; a
 *     value_info's name and alias_of; an initializer's name; a
 *     function's inputs and outputs) holds a NUL byte: its C string ends
 *     there, so "cache\0x" would read as "cache", another value
 *     (oac_model.nul_strings, sorted at load).
 *
 * Each finding names the node or value and its location and says how to
 * mend it; findings in a function body are reported once per call site
 * (oac_scope_diag).  Later passes still run on a model with these errors
 * (check/check.c invariant 2) but `run` refuses it, so the runtime never meets a
 * node without an operator, a slot without a name or a short payload.
 *
 * Invariants:
 *  1. Linear in the model: one map of names per list, each name hashed
 *     once; payloads are measured by their length (raw_data, fixed-size
 *     fields) and only varint fields are read, never copied.
 *  2. Nothing here allocates beyond the name maps and diagnostics; an
 *     allocation failure is the pass's only negative return.
 */
#include <stdio.h>
#include <string.h>

#include "check/checker.h"
#include "check/graph.h"

static bool empty(const char *s)
{
    return !s || !*s;
}

/* ---- names ------------------------------------------------------------ */

/* One list of names (a scope's inputs, outputs or initializers): which
 * names it has seen, and where. */
typedef struct names {
    oac_check_state *st;
    const oac_scope *s;
    const char *what;          /* "graph input", "function output", ... */
    const char *field;         /* "input", "output", "initializer" */
    oac_strmap seen;           /* name -> 1 + first index */
} names;

static void names_init(names *l, oac_check_state *st, const oac_scope *s,
                       const char *what, const char *field)
{
    l->st = st;
    l->s = s;
    l->what = what;
    l->field = field;
    oac_strmap_init(&l->seen, st->ctx);
}

/* Name number i of the list, at field[k] of the scope (tail: "/values"
 * for a sparse initializer, else ""); the location is formatted only for
 * a diagnostic. */
static int names_add(names *l, size_t i, const char *name, const char *field, size_t k,
                     const char *tail)
{
    void *first = empty(name) ? NULL : oac_strmap_get(&l->seen, name);
    if (!empty(name) && !first)
        return oac_strmap_put(&l->seen, name, (void *)(uintptr_t)(i + 1));
    char loc[512];
    snprintf(loc, sizeof loc, "%s/%s/%zu%s", l->s->loc, field, k, tail);
    oac_where w = { .location = loc, .value = empty(name) ? NULL : name };
    if (empty(name))
        return oac_scope_diag(l->st, l->s, OAC_MODEL_INVALID, &w,
                              "%s %zu of '%s' has no name: it is bound and looked up by "
                              "name, so give it one of its own",
                              l->what, i, l->s->name);
    return oac_scope_diag(l->st, l->s, OAC_MODEL_INVALID, &w,
                          "%s '%s' is declared twice in '%s' (%s %zu and %zu): "
                          "rename one of them",
                          l->what, name, l->s->name, l->field,
                          (size_t)(uintptr_t)first - 1, i);
}

static int graph_names(oac_check_state *st, const oac_scope *s)
{
    const Onnx__GraphProto *gp = s->graph;
    int rc = OAC_OK;
    names in, out, init;
    names_init(&in, st, s, s->kind == OAC_SCOPE_MAIN ? "graph input" : "subgraph input",
               "input");
    names_init(&out, st, s, s->kind == OAC_SCOPE_MAIN ? "graph output" : "subgraph output",
               "output");
    names_init(&init, st, s, "initializer", "initializer");
    for (size_t i = 0; i < gp->n_input && !rc; i++)
        rc = names_add(&in, i, gp->input[i] ? gp->input[i]->name : NULL, "input", i, "");
    for (size_t i = 0; i < gp->n_output && !rc; i++)
        rc = names_add(&out, i, gp->output[i] ? gp->output[i]->name : NULL, "output", i, "");
    for (size_t i = 0; i < gp->n_initializer && !rc; i++)
        rc = names_add(&init, i, gp->initializer[i] ? gp->initializer[i]->name : NULL,
                       "initializer", i, "");
    /* A sparse initializer is named by its values tensor; it shares the
     * initializers' names (ONNX: one namespace of initializers). */
    for (size_t i = 0; i < gp->n_sparse_initializer && !rc; i++) {
        const Onnx__SparseTensorProto *sp = gp->sparse_initializer[i];
        rc = names_add(&init, gp->n_initializer + i,
                       sp && sp->values ? sp->values->name : NULL, "sparse_initializer", i,
                       "/values");
    }
    oac_strmap_fini(&in.seen);
    oac_strmap_fini(&out.seen);
    oac_strmap_fini(&init.seen);
    return rc;
}

static int function_names(oac_check_state *st, const oac_scope *s)
{
    const Onnx__FunctionProto *fp = s->func;
    int rc = OAC_OK;
    names in, out;
    names_init(&in, st, s, "function input", "input");
    names_init(&out, st, s, "function output", "output");
    for (size_t i = 0; i < fp->n_input && !rc; i++)
        rc = names_add(&in, i, fp->input[i], "input", i, "");
    for (size_t i = 0; i < fp->n_output && !rc; i++)
        rc = names_add(&out, i, fp->output[i], "output", i, "");
    oac_strmap_fini(&in.seen);
    oac_strmap_fini(&out.seen);
    return rc;
}

/* ---- payloads --------------------------------------------------------- */

/* The fast path of check_tensor: NULL or a payload that fits, with no
 * message formatted (most tensors). */
static bool tensor_fits(oac_check_state *st, const Onnx__TensorProto *t)
{
    char why[600];
    return !t || oac_tensor_payload_fits(st->ctx, t, why, sizeof why);
}

/* Does tensor t hold exactly its elements?  what names it for the
 * message ("initializer 'w'", "tensor 'cv' of attribute 'value' of node
 * c1"); w locates it. */
static int check_tensor(oac_check_state *st, const oac_scope *s,
                        const Onnx__TensorProto *t, const char *what,
                        const oac_where *w)
{
    char why[600];
    if (!t || oac_tensor_payload_fits(st->ctx, t, why, sizeof why))
        return OAC_OK;
    return oac_scope_diag(st, s, OAC_MODEL_INVALID, w, "%s %s", what, why);
}

/* The values and indices of sparse tensor sp (what: "sparse initializer
 * 'w'", ...) at loc. */
static int check_sparse(oac_check_state *st, const oac_scope *s,
                        const Onnx__SparseTensorProto *sp, const char *what,
                        const char *loc)
{
    if (!sp)
        return OAC_OK;
    char l[600], part[400];
    int rc;
    oac_where w = { .location = l };
    w.value = sp->values && !empty(sp->values->name) ? sp->values->name : NULL;
    snprintf(l, sizeof l, "%s/values", loc);
    snprintf(part, sizeof part, "the values of %s", what);
    if ((rc = check_tensor(st, s, sp->values, part, &w)))
        return rc;
    snprintf(l, sizeof l, "%s/indices", loc);
    snprintf(part, sizeof part, "the indices of %s", what);
    return check_tensor(st, s, sp->indices, part, &w);
}

/* "tensor 'cv' of attribute 'value' of node c1" (the tensor's name when
 * it has one). */
static const char *attr_what(char *buf, size_t len, const char *tname,
                             const Onnx__AttributeProto *at, const char *node)
{
    if (empty(tname))
        snprintf(buf, len, "the tensor of attribute '%s' of node %s",
                 at->name ? at->name : "", node);
    else
        snprintf(buf, len, "tensor '%s' of attribute '%s' of node %s", tname,
                 at->name ? at->name : "", node);
    return buf;
}

/* The tensors of node i's attributes. */
static int node_tensors(oac_check_state *st, const oac_scope *s, long i)
{
    const Onnx__NodeProto *np = s->nodes[i].proto;
    const char *node = s->nodes[i].display;
    char what[400], loc[600], suffix[96];
    int rc = OAC_OK;
    const char *value = np->n_output ? np->output[0] : NULL;
    for (size_t a = 0; a < np->n_attribute && !rc; a++) {
        const Onnx__AttributeProto *at = np->attribute[a];
        if (!at)
            continue;
        if (at->t && !tensor_fits(st, at->t)) {
            snprintf(suffix, sizeof suffix, "/attribute/%zu/t", a);
            oac_where w = oac_where_node(s, i, value, suffix, loc, sizeof loc);
            rc = check_tensor(st, s, at->t,
                              attr_what(what, sizeof what, at->t->name, at, node), &w);
        }
        for (size_t k = 0; k < at->n_tensors && !rc; k++) {
            if (tensor_fits(st, at->tensors[k]))
                continue;
            snprintf(suffix, sizeof suffix, "/attribute/%zu/tensors/%zu", a, k);
            oac_where w = oac_where_node(s, i, value, suffix, loc, sizeof loc);
            rc = check_tensor(st, s, at->tensors[k],
                              attr_what(what, sizeof what,
                                        at->tensors[k] ? at->tensors[k]->name : NULL,
                                        at, node), &w);
        }
        if (at->sparse_tensor && !rc) {
            snprintf(suffix, sizeof suffix, "/attribute/%zu/sparse_tensor", a);
            oac_where_node(s, i, value, suffix, loc, sizeof loc);
            rc = check_sparse(st, s, at->sparse_tensor,
                              attr_what(what, sizeof what, NULL, at, node), loc);
        }
        for (size_t k = 0; k < at->n_sparse_tensors && !rc; k++) {
            snprintf(suffix, sizeof suffix, "/attribute/%zu/sparse_tensors/%zu", a, k);
            oac_where_node(s, i, value, suffix, loc, sizeof loc);
            rc = check_sparse(st, s, at->sparse_tensors[k],
                              attr_what(what, sizeof what, NULL, at, node), loc);
        }
    }
    return rc;
}

static int graph_tensors(oac_check_state *st, const oac_scope *s)
{
    const Onnx__GraphProto *gp = s->graph;
    char loc[512];
    int rc = OAC_OK;
    char what[400];
    for (size_t i = 0; i < gp->n_initializer && !rc; i++) {
        const Onnx__TensorProto *t = gp->initializer[i];
        if (tensor_fits(st, t))
            continue;
        snprintf(loc, sizeof loc, "%s/initializer/%zu", s->loc, i);
        oac_where w = { .location = loc,
                        .value = t && !empty(t->name) ? t->name : NULL };
        snprintf(what, sizeof what, "initializer '%s'", w.value ? w.value : "");
        rc = check_tensor(st, s, t, what, &w);
    }
    for (size_t i = 0; i < gp->n_sparse_initializer && !rc; i++) {
        const Onnx__SparseTensorProto *sp = gp->sparse_initializer[i];
        snprintf(loc, sizeof loc, "%s/sparse_initializer/%zu", s->loc, i);
        snprintf(what, sizeof what, "sparse initializer '%s'",
                 sp && sp->values && sp->values->name ? sp->values->name : "");
        rc = check_sparse(st, s, sp, what, loc);
    }
    return rc;
}

/* ---- definitions -------------------------------------------------------- */

/* What defines value v of its scope, for messages ("graph input",
 * "initializer", "node n3"). */
static const char *definer(char *buf, size_t len, const oac_value *v)
{
    if (v->kind == OAC_VAL_INPUT)
        snprintf(buf, len, "%s input %d", v->scope->graph ? "graph" : "function",
                 (int)v->input_index);
    else if (v->kind == OAC_VAL_INITIALIZER)
        snprintf(buf, len, "initializer %d", (int)v->init_index);
    else
        snprintf(buf, len, "node %s", v->scope->nodes[v->producer].display);
    return buf;
}

/* Rule 4: node i's inputs and outputs. */
static int node_values(oac_check_state *st, const oac_scope *s, long i)
{
    const Onnx__NodeProto *np = s->nodes[i].proto;
    const char *node = s->nodes[i].display;
    char loc[512], suffix[64], by[300];
    int rc = OAC_OK;
    for (size_t j = 0; j < np->n_input && !rc; j++) {
        if (empty(np->input[j]) || oac_node_input(s, i, j))
            continue;
        snprintf(suffix, sizeof suffix, "/input/%zu", j);
        oac_where w = oac_where_node(s, i, np->input[j], suffix, loc, sizeof loc);
        rc = oac_scope_diag(st, s, OAC_MODEL_INVALID, &w,
                            "node %s of '%s' reads '%s', which no input, initializer or "
                            "node defines%s: connect it, or leave the port empty when "
                            "it is optional", node, s->name, np->input[j],
                            s->graph && s->kind != OAC_SCOPE_MAIN
                                ? " (here or in an enclosing graph)" : "");
    }
    for (size_t j = 0; j < np->n_output && !rc; j++) {
        if (empty(np->output[j]) || oac_node_output(s, i, j))
            continue;
        const oac_value *first = oac_scope_local(s, np->output[j]);
        snprintf(suffix, sizeof suffix, "/output/%zu", j);
        oac_where w = oac_where_node(s, i, np->output[j], suffix, loc, sizeof loc);
        rc = oac_scope_diag(st, s, OAC_MODEL_INVALID, &w,
                            "node %s of '%s' defines '%s', which %s already defines: "
                            "a value is defined once, so rename one of them",
                            node, s->name, np->output[j],
                            first ? definer(by, sizeof by, first) : "another definition");
    }
    return rc;
}

/* Rule 5: every output of the scope names a value something defines. */
static int scope_outputs(oac_check_state *st, const oac_scope *s)
{
    char loc[512];
    int rc = OAC_OK;
    for (size_t k = 0; k < s->n_outputs && !rc; k++) {
        const char *name = s->output_names[k];
        if (empty(name) || s->outputs[k])
            continue;
        snprintf(loc, sizeof loc, "%s/output/%zu", s->loc, k);
        oac_where w = { .location = loc, .value = name };
        const char *what = s->kind == OAC_SCOPE_MAIN ? "graph output"
                         : s->kind == OAC_SCOPE_FUNCTION ? "function output"
                                                         : "subgraph output";
        rc = oac_scope_diag(st, s, OAC_MODEL_INVALID, &w,
                            "%s '%s' of '%s' is defined by no node, input or "
                            "initializer%s: produce it, or remove it from the outputs",
                            what, name, s->name,
                            s->kind == OAC_SCOPE_SUBGRAPH ? " (here or in an enclosing "
                                                            "graph)" : "");
    }
    return rc;
}

/* Rule 6: an initializer that is a graph input's default is a value of
 * the type the input declares: its element type, its rank and every
 * static dimension (a dim_param takes the initializer's). */
static int input_defaults(oac_check_state *st, const oac_scope *s)
{
    char loc[512], want[128], got[128];
    int rc = OAC_OK;
    for (size_t i = 0; i < s->n_inputs && !rc; i++) {
        const oac_value *v = s->inputs[i];
        const Onnx__TensorProto *t = v && v->scope == s ? oac_value_init(v) : NULL;
        const Onnx__TypeProto *tp = t ? oac_value_type(v) : NULL;
        if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
            !tp->tensor_type)
            continue;
        const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
        bool type_ok = !tt->elem_type || tt->elem_type == t->data_type;
        const Onnx__TensorShapeProto *sh = tt->shape;
        bool rank_ok = !sh || sh->n_dim == t->n_dims, dims_ok = true;
        for (size_t d = 0; sh && rank_ok && d < sh->n_dim; d++)
            dims_ok = dims_ok && (!sh->dim[d] ||
                                  sh->dim[d]->value_case !=
                                      ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
                                  sh->dim[d]->dim_value == t->dims[d]);
        if (type_ok && rank_ok && dims_ok)
            continue;
        const char *wn = oac_elem_name(tt->elem_type), *gn = oac_elem_name(t->data_type);
        snprintf(want, sizeof want, "%s", wn ? wn : "an unknown type");
        snprintf(got, sizeof got, "%s", gn ? gn : "an unknown type");
        snprintf(loc, sizeof loc, "%s/initializer/%d", s->loc, (int)v->init_index);
        oac_where w = { .location = loc, .value = v->name };
        rc = oac_scope_diag(st, s, OAC_MODEL_INVALID, &w,
                            "initializer '%s' is the default of graph input %zu of '%s' "
                            "but no value of its type (the input is %s of rank %zu, the "
                            "initializer %s of rank %zu%s): give them one type and shape",
                            v->name, i, s->name, want, sh ? sh->n_dim : (size_t)0, got,
                            (size_t)t->n_dims, rank_ok && !dims_ok ? ", dims differ" : "");
    }
    return rc;
}

/* ---- rule 7: names with a NUL byte ------------------------------------------ */

/* One finding if name (at loc, what it is) held a NUL byte. */
static int nul_name(oac_check_state *st, const oac_scope *s, const oac_nul_set *ns,
                    oac_where *w, const char *name, const char *what)
{
    if (!oac_nul_held(ns, name))
        return OAC_OK;
    w->value = name;
    return oac_scope_diag(st, s, OAC_MODEL_INVALID, w,
                          "%s of '%s' holds a NUL byte after '%s': every reader that "
                          "takes it as text (this tool, C runtimes) stops there, so it "
                          "may name another value; remove the NUL and what follows, or "
                          "rename it", what, s->name, name);
}

/* Rule 7 over node i of s. */
static int nul_node(oac_check_state *st, const oac_scope *s, const oac_nul_set *ns, long i)
{
    const Onnx__NodeProto *np = s->nodes[i].proto;
    char loc[512], suffix[64], what[96];
    oac_where w = oac_where_node(s, i, NULL, NULL, loc, sizeof loc);
    int rc = OAC_OK;
    const char *own[3] = { np->name, np->op_type, np->domain };
    static const char *const own_what[3] = { "the name", "the op_type", "the domain" };
    for (int k = 0; k < 3 && !rc; k++) {
        snprintf(what, sizeof what, "%s of node %s", own_what[k], s->nodes[i].display);
        rc = nul_name(st, s, ns, &w, own[k], what);
    }
    for (int out = 0; out < 2 && !rc; out++) {
        size_t n = out ? np->n_output : np->n_input;
        char *const *names = out ? np->output : np->input;
        for (size_t j = 0; j < n && !rc; j++) {
            if (!oac_nul_held(ns, names[j]))
                continue;
            snprintf(suffix, sizeof suffix, "/%s/%zu", out ? "output" : "input", j);
            w = oac_where_node(s, i, NULL, suffix, loc, sizeof loc);
            snprintf(what, sizeof what, "%s %zu of node %s", out ? "output" : "input", j,
                     s->nodes[i].display);
            rc = nul_name(st, s, ns, &w, names[j], what);
        }
    }
    return rc;
}

/* Rule 7 over scope s: its nodes, declarations, initializers and a
 * function's interface. */
static int nul_scope(oac_check_state *st, const oac_scope *s, const oac_nul_set *ns)
{
    char loc[512];
    int rc = OAC_OK;
    for (size_t i = 0; i < s->n_nodes && !rc; i++)
        rc = nul_node(st, s, ns, (long)i);
    for (size_t k = 0; k < s->n_vinfos && !rc; k++) {
        const Onnx__ValueInfoProto *vi = s->vinfos[k].vi;
        oac_where w = { .location = s->vinfos[k].loc };
        if (vi && !(rc = nul_name(st, s, ns, &w, vi->name, "the name of a declaration")))
            rc = nul_name(st, s, ns, &w, vi->alias_of, "the alias_of of a declaration");
    }
    const Onnx__GraphProto *gp = s->graph;
    for (size_t i = 0; gp && i < gp->n_initializer && !rc; i++) {
        snprintf(loc, sizeof loc, "%s/initializer/%zu", s->loc, i);
        oac_where w = { .location = loc };
        if (gp->initializer[i])
            rc = nul_name(st, s, ns, &w, gp->initializer[i]->name, "an initializer's name");
    }
    const Onnx__FunctionProto *fp = s->func;
    for (int out = 0; fp && out < 2 && !rc; out++) {
        size_t n = out ? fp->n_output : fp->n_input;
        for (size_t j = 0; j < n && !rc; j++) {
            snprintf(loc, sizeof loc, "%s/%s/%zu", s->loc, out ? "output" : "input", j);
            oac_where w = { .location = loc };
            rc = nul_name(st, s, ns, &w, out ? fp->output[j] : fp->input[j],
                          out ? "a function output" : "a function input");
        }
    }
    return rc;
}

/* Rule 7: nothing to do unless the decoder listed a string that held a
 * NUL (the model's set, sorted once at load). */
static int nul_names(oac_check_state *st)
{
    const oac_nul_set *ns = &st->model->nul_strings;
    int rc = OAC_OK;
    for (size_t i = 0; ns->n && st->graphs && i < st->graphs->n_scopes && !rc; i++)
        rc = nul_scope(st, st->graphs->scopes[i], ns);
    return rc;
}

/* ---- the pass ------------------------------------------------------------- */

static int check_scope(oac_check_state *st, const oac_scope *s)
{
    int rc = s->graph ? graph_names(st, s) : function_names(st, s);
    if (!rc && s->graph)
        rc = graph_tensors(st, s);
    if (!rc && s->graph)
        rc = input_defaults(st, s);
    for (size_t i = 0; i < s->n_nodes && !rc; i++) {
        if (empty(s->nodes[i].proto->op_type)) {
            char loc[512];
            oac_where w = oac_where_node(s, (long)i, NULL, NULL, loc, sizeof loc);
            rc = oac_scope_diag(st, s, OAC_MODEL_INVALID, &w,
                                "node %s of '%s' has no op_type: set it to the operator "
                                "the node runs", s->nodes[i].display, s->name);
        }
        if (!rc)
            rc = node_tensors(st, s, (long)i);
        if (!rc)
            rc = node_values(st, s, (long)i);
    }
    if (!rc)
        rc = scope_outputs(st, s);
    return rc;
}

/* The function scope whose body s is (s itself or the one enclosing its
 * subgraph), or NULL for the main graph. */
static const oac_scope *function_of(const oac_scope *s)
{
    while (s && s->parent)
        s = s->parent;
    return s && s->kind == OAC_SCOPE_FUNCTION ? s : NULL;
}

/* ONNX forbids recursion among local functions: a call that closes a
 * cycle (a function calling itself, directly or through others) is
 * model-invalid at that node.  An iterative depth-first walk over the
 * callers of each function (its call sites), colours per scope. */
static int recursion(oac_check_state *st)
{
    const oac_graphs *g = st->graphs;
    size_t n = g->n_scopes;
    uint8_t *colour = oac_calloc(st->ctx, n ? n : 1, 1);       /* 0 new, 1 on path, 2 done */
    size_t *stk = oac_calloc(st->ctx, n ? n : 1, sizeof *stk);  /* scope index */
    size_t *next = oac_calloc(st->ctx, n ? n : 1, sizeof *next);/* call site to visit */
    int rc = colour && stk && next ? OAC_OK : OAC_ENOMEM;
    for (size_t root = 0; !rc && root < n; root++) {
        if (g->scopes[root]->kind != OAC_SCOPE_FUNCTION || colour[root])
            continue;
        size_t top = 0;
        stk[top++] = root;
        colour[root] = 1;
        next[root] = 0;
        while (top && !rc) {
            const oac_scope *u = g->scopes[stk[top - 1]];
            if (next[u->index] == u->n_calls) {
                colour[u->index] = 2;
                top--;
                continue;
            }
            const oac_callsite *c = &u->calls[next[u->index]++];
            const oac_scope *v = function_of(c->scope);
            if (!v || colour[v->index] == 2)
                continue;
            if (colour[v->index] == 1) {
                char loc[512];
                oac_where w = oac_where_node(c->scope, c->node, NULL, NULL, loc, sizeof loc);
                rc = oac_diag_add(st->diags, OAC_MODEL_INVALID, &w,
                                  "node %s of function '%s' calls '%s', which %s: ONNX "
                                  "forbids recursion among local functions; unroll it or "
                                  "use a Loop", c->scope->nodes[c->node].display, v->name,
                                  u->name, u == v ? "is that function itself"
                                                  : "calls back into it");
                continue;
            }
            colour[v->index] = 1;
            next[v->index] = 0;
            stk[top++] = v->index;
        }
    }
    oac_dealloc(st->ctx, colour);
    oac_dealloc(st->ctx, stk);
    oac_dealloc(st->ctx, next);
    return rc;
}

int oac_pass_structure(oac_check_state *st)
{
    const oac_graphs *g = st->graphs;
    int rc = OAC_OK;
    /* Rule 0: a model has a graph (ONNX requires one; a file of local
     * functions alone has nothing to check or run). */
    if (!oac_model_proto(st->model)->graph) {
        oac_where w = { .location = "/graph" };
        return oac_diag_add(st->diags, OAC_MODEL_INVALID, &w,
                            "the model has no graph: a ModelProto needs one (its "
                            "functions alone are not a model)");
    }
    for (size_t i = 0; g && i < g->n_scopes && !rc; i++)
        rc = check_scope(st, g->scopes[i]);
    if (!rc && g)
        rc = recursion(st);
    if (!rc)
        rc = nul_names(st);
    return rc;
}

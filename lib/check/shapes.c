/* check/shapes.c: the ShapesContext pass (oac_pass_shapes): declared types,
 * dimension symbols, --dim bindings, inference over every scope, the
 * type parts of operand-invalid, and alias-class unification.  What it
 * fills (symbols, interned dims, known values) is the store of
 * check/shapes_store.c; this file walks the scopes and reports.
 *
 * Contract: section 2 (operand types of CacheUpdate, PagedCacheUpdate,
 * TensorScatter), section 3 (type-mismatch, rank-mismatch,
 * shape-mismatch, --dim, known values), section 4 (alias_classes
 * elem_type, shape, dim_param, bytes).
 *
 * Invariants (see also check/shapes_store.h):
 *  1. Scopes are visited in check/graph.h's order (parents first), nodes in the
 *     schedule's order (check/order.h: topological, file order when the file
 *     is sorted); a value's facts are final once its producer was visited,
 *     except that symbol bindings learnt later still reach it (the
 *     union-find is consulted lazily).
 *  2. A symbol is bound once; a different second number is reported as
 *     shape-mismatch (both places named) and ignored.
 *  3. --dim errors (a name that is no dim_param of the model by
 *     oac_model_has_dim_param's rule, a conflicting repeat, a value < 0)
 *     are usage errors: OAC_EINVAL with the message on ctx, nothing
 *     reported.  A name of the model in a type this pass does not read
 *     (optional, sparse tensor, nested) is accepted and binds nothing.
 *  4. Everything is linear in the model: one strmap lookup per dim_param,
 *     near-constant union-find steps (path halving, union by binding),
 *     the rules read from the node's row (no lookup per node) and one
 *     probe of the dims table per new shape.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check/alias.h"
#include "check/analysis.h"
#include "check/checker.h"
#include "check/graph.h"
#include "ops.h"
#include "check/order.h"
#include "check/inputs.h"
#include "check/shapes.h"

/* ------------------------------------------------------------------ */
/* Node attributes (the rules read them too)                            */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Places: where a dimension was seen, for messages                     */
/* ------------------------------------------------------------------ */

typedef struct place {
    uint8_t kind;           /* oac_origin_kind */
    size_t value;           /* value id, SIZE_MAX for --dim */
    int32_t dim;            /* the value's dim; for --dim, the option's
                               index in opts->dims */
} place;

/* Output dims one operator made lately (interned): the nodes of one
 * type in a layer make a few shapes, and every layer the same. */
typedef struct op_recent {
    const oac_dimref *recent[4];
    int16_t recent_rank[4];
    unsigned next_recent;
} op_recent;

typedef struct pass {
    oac_check_state *st;
    oac_shapes *sh;
    oac_graphs *g;
    /* By row of ops.def: check/graph.c found the row of each node already
     * (oac_node.op), and the row carries the rules. */
    op_recent by_op[OAC_OP_COUNT];
} pass;

static const char *vname(const pass *p, size_t id)
{
    return id < p->g->n_values ? oac_graphs_value(p->g, id)->name : "?";
}

/* Location of a place: the declaration's dim for declared dims, the
 * producer node for inferred ones. */
static void place_loc(const pass *p, const place *pl, char *buf, size_t len)
{
    buf[0] = '\0';
    if (pl->value >= p->g->n_values)
        return;
    const oac_value *v = oac_graphs_value(p->g, pl->value);
    if (pl->kind == OAC_ORIGIN_INFERRED && v->producer >= 0) {
        oac_node_loc(buf, len, v->scope, v->producer, "/output/%d", v->port);
    } else if (oac_value_vi_loc(v)) {
        const Onnx__TypeProto *t = oac_value_type(v);
        const char *mid = "/type/tensor_type/shape/dim/";
        if (t && t->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE)
            mid = "/type/sequence_type/elem_type/quantized_tensor_type/shape/dim/";
        else if (t && t->value_case ==
                 ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE)
            mid = "/type/quantized_tensor_type/shape/dim/";
        snprintf(buf, len, "%s%s%d", oac_value_vi_loc(v), mid, pl->dim);
    } else if (v->kind == OAC_VAL_INITIALIZER && v->init_index >= 0) {
        snprintf(buf, len, "%s/initializer/%ld/dims/%d", v->scope->loc,
                 (long)v->init_index, pl->dim);
    }
}

static void place_desc(const pass *p, const place *pl, int64_t n,
                       const char *symname, char *buf, size_t len)
{
    char loc[512];
    place_loc(p, pl, loc, sizeof loc);
    switch (pl->kind) {
    case OAC_ORIGIN_OPTION: {
        /* The option as the user gave it, not the symbol it was unified
         * with (issue 10, item 4). */
        const oac_check_opts *o = p->st->opts;
        const char *opt = o && pl->dim >= 0 && (size_t)pl->dim < o->n_dims
            ? o->dims[pl->dim].name : symname;
        /* Where the value came from: the option, or the run's loop. */
        if (o && o->n_run_dims <= o->n_dims && pl->dim >= 0 &&
            (size_t)pl->dim >= o->n_dims - o->n_run_dims && (size_t)pl->dim < o->n_dims)
            snprintf(buf, len, "%s=%" PRId64 " (bound by the run's generation loop at "
                     "its first step, no --dim given)", opt ? opt : "?", n);
        else
            snprintf(buf, len, "--dim %s=%" PRId64, opt ? opt : "?", n);
        break;
    }
    case OAC_ORIGIN_INPUT_FILE:
        snprintf(buf, len, "the --input file of '%s' (dimension %d = %" PRId64 ")",
                 vname(p, pl->value), pl->dim, n);
        break;
    case OAC_ORIGIN_INFERRED:
        snprintf(buf, len, "'%s' (dimension %d inferred as %" PRId64 " at %s)",
                 vname(p, pl->value), pl->dim, n, loc);
        break;
    default:
        snprintf(buf, len, "'%s' (dimension %d declared %" PRId64 " at %s)",
                 vname(p, pl->value), pl->dim, n, loc);
        break;
    }
}

static const oac_scope *place_scope(const pass *p, const place *pl)
{
    if (pl->value < p->g->n_values)
        return oac_graphs_value(p->g, pl->value)->scope;
    return p->g->scopes[0];
}

/* The conflict of a (na) and b (nb); the finding is placed at b, or at
 * `at` (where two bound symbols meet) when given. */
static int report_dim_conflict(pass *p, const place *a, int64_t na,
                               const place *b, int64_t nb,
                               const char *symname, const place *at)
{
    char da[768], db[768], loc[512];
    place_desc(p, a, na, symname, da, sizeof da);
    place_desc(p, b, nb, symname, db, sizeof db);
    const place *w_at = at ? at : b;
    place_loc(p, w_at, loc, sizeof loc);
    const oac_scope *s = place_scope(p, w_at);
    const char *node = NULL, *op = NULL;
    if (w_at->value < p->g->n_values) {
        const oac_value *v = oac_graphs_value(p->g, w_at->value);
        if (v->producer >= 0) {
            node = v->scope->nodes[v->producer].display;
            op = v->scope->nodes[v->producer].proto->op_type;
        }
    }
    oac_where w = { .graph = s->name, .node = node, .op_type = op,
                    .value = w_at->value < p->g->n_values ? vname(p, w_at->value)
                                                          : NULL,
                    .location = loc[0] ? loc : NULL };
    if (at && at->value < p->g->n_values)
        return oac_scope_diag(p->st, s, OAC_SHAPE_MISMATCH, &w,
                              "dimension %d of '%s' joins two symbols bound to "
                              "different numbers: %" PRId64 " by %s and %" PRId64
                              " by %s", at->dim, vname(p, at->value), na, da,
                              nb, db);
    if (symname)
        return oac_scope_diag(p->st, s, OAC_SHAPE_MISMATCH, &w,
                              "dimension '%s' is %" PRId64 " from %s but %" PRId64
                              " from %s", symname, na, da, nb, db);
    return oac_scope_diag(p->st, s, OAC_SHAPE_MISMATCH, &w,
                          "dimension %d is %" PRId64 " in %s but %" PRId64
                          " in %s", b->dim, na, da, nb, db);
}

/* Bind the symbol of d (a reference) to n at place pl.  A symbol already
 * bound to another number is shape-mismatch. */
static int bind_sym(pass *p, size_t id, int64_t n, const place *pl)
{
    oac_shapes *sh = p->sh;
    size_t r = oac_shapes_sym_root(sh, id);
    const oac_sym *s = &sh->syms[r];
    if (s->value < 0) {
        oac_shapes_sym_bind(sh, r, n, pl->kind, pl->value, pl->dim);
        return OAC_OK;
    }
    if (s->value == n)
        return OAC_OK;
    place first = { s->origin, s->origin_value, s->origin_dim };
    const char *name = sh->syms[id].name ? sh->syms[id].name : s->name;
    return report_dim_conflict(p, &first, s->value, pl, n, name, NULL);
}

/* Unify dims a (seen at pa) and b (seen at pb).  Static-vs-static
 * disagreement is reported only when report_static is set (alias class
 * members); symbol conflicts always are (invariant 2).  *res is the
 * unified reference. */
static int unify_dim(pass *p, oac_dimref a, const place *pa, oac_dimref b,
                     const place *pb, bool report_static, oac_dimref *res)
{
    oac_shapes *sh = p->sh;
    *res = a;
    if (!OAC_DIM_IS_SYM(a) && !OAC_DIM_IS_SYM(b)) {
        if (a != b && report_static)
            return report_dim_conflict(p, pa, a, pb, b, NULL, NULL);
        return OAC_OK;
    }
    if (!OAC_DIM_IS_SYM(a))
        return bind_sym(p, OAC_DIM_SYM_ID(b), a, pa);
    if (!OAC_DIM_IS_SYM(b)) {
        *res = b;
        return bind_sym(p, OAC_DIM_SYM_ID(a), b, pb);
    }
    size_t ra = oac_shapes_sym_root(sh, OAC_DIM_SYM_ID(a));
    size_t rb = oac_shapes_sym_root(sh, OAC_DIM_SYM_ID(b));
    if (ra == rb)
        return OAC_OK;
    const oac_sym *A = &sh->syms[ra], *B = &sh->syms[rb];
    if (A->value >= 0 && B->value >= 0 && A->value != B->value) {
        place fa = { A->origin, A->origin_value, A->origin_dim };
        place fb = { B->origin, B->origin_value, B->origin_dim };
        const char *nm = A->name ? A->name : B->name;
        /* Reported where the two meet (a bound symbol's origin may be an
         * option, with no node or value), and joined, keeping A's
         * number, so the next place they meet adds nothing. */
        int rc = report_dim_conflict(p, &fa, A->value, &fb, B->value, nm,
                                     pb->value < p->g->n_values ? pb : pa);
        oac_shapes_sym_join(sh, ra, rb);
        return rc;
    }
    oac_shapes_sym_join(sh, ra, rb);
    return OAC_OK;
}

/* ------------------------------------------------------------------ */
/* Declared types                                                       */
/* ------------------------------------------------------------------ */

static int parse_shape(pass *p, const Onnx__TensorShapeProto *shp,
                       oac_vshape *out)
{
    if (!shp || shp->n_dim > OAC_SHAPE_MAX_RANK) {
        out->rank = -1;
        return OAC_OK;
    }
    oac_dimref dims[OAC_SHAPE_MAX_RANK];
    for (size_t i = 0; i < shp->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = shp->dim[i];
        int rc = OAC_OK;
        if (d && d->value_case ==
            ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
            d->dim_value >= 0)
            dims[i] = d->dim_value;
        else if (d && d->value_case ==
                 ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                 d->dim_param && d->dim_param[0])
            rc = oac_shapes_sym_named(p->sh, d->dim_param, &dims[i]);
        else
            rc = oac_shapes_fresh(p->sh, &dims[i]);
        if (rc)
            return rc;
    }
    if (!(out->dims = oac_shapes_intern(p->sh, dims, shp->n_dim)))
        return OAC_ENOMEM;
    out->rank = (int32_t)shp->n_dim;
    return OAC_OK;
}

/* A tensor-like element type: Tensor or QuantizedTensor. */
static int parse_elem(pass *p, const Onnx__TypeProto *t, oac_vshape *out)
{
    if (t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
        t->tensor_type) {
        out->elem_type = t->tensor_type->has_elem_type ?
                         t->tensor_type->elem_type : 0;
        return parse_shape(p, t->tensor_type->shape, out);
    }
    if (t->value_case == ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE &&
        t->quantized_tensor_type) {
        out->quantized = true;
        out->elem_type = t->quantized_tensor_type->has_elem_type ?
                         t->quantized_tensor_type->elem_type : 0;
        return parse_shape(p, t->quantized_tensor_type->shape, out);
    }
    out->kind = OAC_VK_OTHER;
    return OAC_OK;
}

static int parse_type(pass *p, const Onnx__TypeProto *t, oac_vshape *out)
{
    *out = (oac_vshape){ .kind = OAC_VK_UNKNOWN, .rank = -1 };
    if (!t)
        return OAC_OK;
    const Onnx__TypeProto *e = NULL;
    switch (t->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
    case ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE:
        out->kind = OAC_VK_TENSOR;
        return parse_elem(p, t, out);
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        out->kind = OAC_VK_SEQUENCE;
        e = t->sequence_type ? t->sequence_type->elem_type : NULL;
        break;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        out->kind = OAC_VK_MAP;
        e = t->map_type ? t->map_type->value_type : NULL;
        break;
    case ONNX__TYPE_PROTO__VALUE__NOT_SET:
        return OAC_OK;
    default:
        out->kind = OAC_VK_OTHER;
        return OAC_OK;
    }
    if (!e)
        return OAC_OK;
    uint8_t kind = out->kind;
    int rc = parse_elem(p, e, out);
    if (out->kind != OAC_VK_OTHER)
        out->kind = kind;
    return rc;
}

/* Merge what inference found (inf) into the declaration (decl) of value
 * id: the declaration wins, its symbols bind to inferred numbers. */
static int merge_declared(pass *p, size_t id, oac_vshape *decl,
                          const oac_vshape *inf)
{
    if (inf->kind == OAC_VK_UNKNOWN)
        return OAC_OK;
    if (decl->kind == OAC_VK_UNKNOWN) {
        *decl = *inf;
        return OAC_OK;
    }
    if (decl->kind != inf->kind || decl->quantized != inf->quantized)
        return OAC_OK;
    if (!decl->elem_type)
        decl->elem_type = inf->elem_type;
    if (decl->rank < 0) {
        decl->rank = inf->rank;
        decl->dims = inf->dims;
        return OAC_OK;
    }
    if (inf->rank != decl->rank)
        return OAC_OK;
    for (int32_t i = 0; i < decl->rank; i++) {
        place pd = { OAC_ORIGIN_DECLARED, id, i };
        place pi = { OAC_ORIGIN_INFERRED, id, i };
        oac_dimref r;
        int rc = unify_dim(p, decl->dims[i], &pd, inf->dims[i], &pi, false, &r);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

/* ------------------------------------------------------------------ */
/* --dim                                                                */
/* ------------------------------------------------------------------ */

static int apply_dim_options(pass *p)
{
    const oac_check_opts *o = p->st->opts;
    if (!o)
        return OAC_OK;
    for (size_t i = 0; i < o->n_dims; i++) {
        const oac_dim_binding *b = &o->dims[i];
        if (!b->name || !b->name[0])
            return oac_err(p->st->ctx, OAC_EINVAL, "--dim: empty dimension name");
        /* 0 is an empty dimension, as ONNX allows: a run binds a stock
         * past's length to 0 at its first step (run/generate.h).  The command
         * line's --dim still wants 1 or more (cli_opts.c). */
        if (b->value < 0)
            return oac_err(p->st->ctx, OAC_EINVAL,
                           "--dim %s=%" PRId64 ": the value must not be negative",
                           b->name, b->value);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(o->dims[j].name, b->name) && o->dims[j].value != b->value)
                return oac_err(p->st->ctx, OAC_EINVAL,
                               "--dim %s given twice with different values (%" PRId64
                               " and %" PRId64 ")", b->name, o->dims[j].value,
                               b->value);
        size_t id = oac_shapes_sym_by_name(p->sh, b->name);
        /* A name of the model (model/names.c, the command line's test
         * too) that no type the analysis reads carries (an optional or
         * sparse tensor type, a nested sequence): it binds nothing here,
         * and it is no usage error. */
        if (id == SIZE_MAX && oac_model_has_dim_param(p->st->model, b->name))
            continue;
        if (id == SIZE_MAX)
            return oac_err(p->st->ctx, OAC_EINVAL,
                           "--dim %s: no dimension of the model is named '%s'",
                           b->name, b->name);
        place pl = { OAC_ORIGIN_OPTION, SIZE_MAX, (int32_t)i };
        int rc = bind_sym(p, id, b->value, &pl);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

/* ------------------------------------------------------------------ */
/* Inference over scopes                                                */
/* ------------------------------------------------------------------ */

static int64_t onnx_opset(const oac_graphs *g, const oac_scope *s)
{
    Onnx__OperatorSetIdProto *const *imp = g->model->opset_import;
    size_t n = g->model->n_opset_import;
    if (s->kind == OAC_SCOPE_FUNCTION && s->func && s->func->n_opset_import) {
        imp = s->func->opset_import;
        n = s->func->n_opset_import;
    }
    for (size_t i = 0; i < n; i++)
        if (oac_domain_is_onnx(imp[i]->domain))
            return imp[i]->has_version ? imp[i]->version : 1;
    return 21;
}

static int seed_input_file(pass *p, const oac_value *v);

/* The known value of v from its tensor t (an initializer, an --input
 * file).  Over a made analysis (st->inputs_from: the run's later steps)
 * an external payload is not read again: its value is the made
 * analysis's, copied into this store. */
static int tensor_known(pass *p, const oac_value *v, const Onnx__TensorProto *t,
                        oac_known **out)
{
    const oac_analysis *from = p->st->inputs_from;
    if (!from || !t || t->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return oac_known_from_tensor(p->sh, p->st->model, t, out);
    *out = NULL;
    const oac_known *k = from->shapes ? oac_shapes_known(from->shapes, v->id) : NULL;
    if (!k)
        return OAC_OK;
    oac_known *c = oac_shapes_new_known(p->sh, k->elem_type, k->rank, k->n);
    if (!c)
        return OAC_ENOMEM;
    oac_shapes_copy(c->shape, k->shape, (size_t)k->rank * sizeof *c->shape);
    oac_shapes_copy(c->v, k->v, k->n * sizeof *c->v);
    *out = c;
    return OAC_OK;
}

/* Seed a value with no producer: declared type, initializer dims, known
 * initializer payload, --input. */
static int seed_value(pass *p, const oac_value *v)
{
    oac_shapes *sh = p->sh;
    oac_vshape *vs = &sh->vals[v->id];
    if (v->init_index >= 0) {
        const Onnx__TensorProto *t = oac_value_init(v);
        oac_vshape it = { .kind = OAC_VK_TENSOR,
                          .elem_type = t->has_data_type ? t->data_type : 0,
                          .rank = -1 };
        if (t->n_dims <= OAC_SHAPE_MAX_RANK) {
            bool ok = true;
            for (size_t i = 0; i < t->n_dims; i++)
                ok = ok && t->dims[i] >= 0;
            if (ok) {
                it.rank = (int32_t)t->n_dims;
                it.dims = oac_shapes_intern(sh, t->dims, t->n_dims);
                if (!it.dims)
                    return OAC_ENOMEM;
            }
        }
        /* An initializer's dims are facts of the data: they bind the
         * declaration's symbols. */
        int rc = merge_declared(p, v->id, vs, &it);
        if (rc)
            return rc;
        if (v->kind == OAC_VAL_INITIALIZER) {
            oac_known *k;
            if ((rc = tensor_known(p, v, t, &k)))
                return rc;
            if ((rc = oac_shapes_known_set(sh, v->id, k)))
                return rc;
        }
    }
    if (v->kind == OAC_VAL_INPUT && v->scope == p->g->scopes[0])
        return seed_input_file(p, v);
    return OAC_OK;
}

/* An --input tensor file of a main-graph input: its dims are facts
 * (they bind the declaration's symbols; a contradiction is
 * shape-mismatch) and a small integer payload is a known value. */
static int seed_input_file(pass *p, const oac_value *v)
{
    oac_shapes *sh = p->sh;
    const oac_analysis *a = p->st->out;
    for (size_t i = 0; a && i < a->n_inputs; i++) {
        if (a->inputs[i].value_id != v->id ||
            a->inputs[i].file->msg->descriptor != &onnx__tensor_proto__descriptor)
            continue;
        const Onnx__TensorProto *t = (const Onnx__TensorProto *)a->inputs[i].file->msg;
        oac_vshape *vs = &sh->vals[v->id];
        int rc;
        if (vs->kind == OAC_VK_UNKNOWN)
            vs->kind = OAC_VK_TENSOR;
        if (!vs->elem_type && t->has_data_type)
            vs->elem_type = t->data_type;
        /* The file's type disagreeing with the declaration is what `run`
         * refuses; say it here too, as the rank below. */
        if (vs->kind == OAC_VK_TENSOR && vs->elem_type && t->has_data_type &&
            t->data_type != vs->elem_type) {
            oac_where w = { .graph = v->scope->name, .value = v->name,
                            .location = oac_value_vi_loc(v) };
            rc = oac_scope_diag(p->st, v->scope, OAC_TYPE_MISMATCH, &w,
                                "the --input file of '%s' holds %s but '%s' is "
                                "declared %s", v->name,
                                oac_elem_name(t->data_type) ? oac_elem_name(t->data_type) : "an unknown type",
                                v->name,
                                oac_elem_name(vs->elem_type) ? oac_elem_name(vs->elem_type) : "another type");
            if (rc)
                return rc;
        }
        if (vs->kind == OAC_VK_TENSOR && t->n_dims <= OAC_SHAPE_MAX_RANK) {
            if (vs->rank < 0) {
                oac_dimref fresh[OAC_SHAPE_MAX_RANK];
                for (size_t k = 0; k < t->n_dims; k++)
                    if ((rc = oac_shapes_fresh(sh, &fresh[k])))
                        return rc;
                if (!(vs->dims = oac_shapes_intern(sh, fresh, t->n_dims)))
                    return OAC_ENOMEM;
                vs->rank = (int32_t)t->n_dims;
            }
            if ((size_t)vs->rank != t->n_dims) {
                oac_where w = { .graph = v->scope->name, .value = v->name,
                                .location = oac_value_vi_loc(v) };
                rc = oac_scope_diag(p->st, v->scope, OAC_SHAPE_MISMATCH, &w,
                                    "the --input file of '%s' has rank %zu but '%s' "
                                    "is declared with rank %d", v->name,
                                    t->n_dims, v->name, vs->rank);
                if (rc)
                    return rc;
            } else {
                for (size_t k = 0; k < t->n_dims; k++) {
                    if (t->dims[k] < 0)
                        continue;
                    place pd = { OAC_ORIGIN_DECLARED, v->id, (int32_t)k };
                    place pf = { OAC_ORIGIN_INPUT_FILE, v->id, (int32_t)k };
                    oac_dimref r;
                    if ((rc = unify_dim(p, vs->dims[k], &pd, t->dims[k], &pf,
                                        true, &r)))
                        return rc;
                }
            }
        }
        oac_known *k;
        if ((rc = tensor_known(p, v, t, &k)))
            return rc;
        if ((rc = oac_shapes_known_set(sh, v->id, k)))
            return rc;
    }
    return OAC_OK;
}

/* The interned dims of output 0, built in c->scratch.  Most outputs
 * have a shape the operator made lately (a layer repeats the previous
 * one) or the shape of an input (element-wise ops, projections): trying
 * those arrays, in that order, is cheaper than hashing.  What is found
 * becomes recent. */
static const oac_dimref *intern_out(oac_shapes *sh, const oac_infer *c,
                                    op_recent *m)
{
    int16_t rank = c->out[0].rank;
    size_t n = (size_t)rank;
    for (size_t k = 0; k < 4; k++)
        if (m->recent[k] && m->recent_rank[k] == rank &&
            oac_dims_eq(m->recent[k], c->scratch, n))
            return m->recent[k];
    const oac_dimref *d = NULL;
    for (size_t k = 0; k < c->n_in && !d; k++)
        if (c->in[k] && c->in[k]->rank == rank &&
            oac_dims_eq(c->in[k]->dims, c->scratch, n))
            d = c->in[k]->dims;
    if (!d)
        d = oac_shapes_intern(sh, c->scratch, n);
    if (d) {
        m->recent[m->next_recent % 4] = d;
        m->recent_rank[m->next_recent++ % 4] = rank;
    }
    return d;
}

static int visit_node(pass *p, oac_scope *s, long i, int64_t opset,
                      const oac_vshape **in, const oac_known **in_known,
                      oac_vshape *out, oac_known **out_known)
{
    oac_node *nd = &s->nodes[i];
    const Onnx__NodeProto *np = nd->proto;
    /* Field by field: an initializer would clear the scratch too. */
    oac_infer c;
    c.sh = p->sh;
    c.scope = s;
    c.node = i;
    c.proto = np;
    c.opset = opset;
    c.n_in = nd->n_in;
    c.in = in;
    c.in_known = in_known;
    c.n_out = nd->n_out;
    c.out = out;
    c.out_known = out_known;
    /* The node's row (NULL: no rules, the outputs stay unknown). */
    const oac_op *op = nd->op;
    int rc = OAC_OK;
    /* The ports check/graph.c resolved (oac_node_input's answers, without its
     * range checks per port). */
    oac_value *const *ports = nd->in_vals;
    for (size_t k = 0; k < nd->n_in; k++) {
        oac_value *v = ports ? ports[k] : oac_node_input(s, i, k);
        in[k] = v ? &p->sh->vals[v->id] : NULL;
        in_known[k] = v ? oac_shapes_known_get(p->sh, v->id) : NULL;
    }
    for (size_t k = 0; k < nd->n_out; k++) {
        out[k] = (oac_vshape){ .kind = OAC_VK_UNKNOWN, .rank = -1 };
        out_known[k] = NULL;
    }
    if (op && op->infer)
        rc = op->infer(&c);
    if (!rc && op && op->fold)
        rc = op->fold(&c);
    if (rc)
        return rc;
    /* Only a rule writes the scratch, so op is a row here. */
    if (nd->n_out && out[0].rank >= 0 && out[0].dims == c.scratch &&
        !(out[0].dims = intern_out(p->sh, &c, &p->by_op[op->id])))
        return OAC_ENOMEM;
    for (size_t k = 0; k < nd->n_out; k++) {
        oac_value *v = ports ? ports[nd->n_in + k] : oac_node_output(s, i, k);
        /* Only the defining node sets a value (check/graph.h invariant 2). */
        if (!v || v->producer != i || (size_t)v->port != k)
            continue;
        /* merge_declared's first two cases, inline: most values are
         * undeclared. */
        oac_vshape *vs = &p->sh->vals[v->id];
        if (out[k].kind == OAC_VK_UNKNOWN)
            ;
        else if (vs->kind == OAC_VK_UNKNOWN)
            *vs = out[k];
        else if ((rc = merge_declared(p, v->id, vs, &out[k])))
            return rc;
        if ((out_known[k] || oac_shapes_known_bit(p->sh, v->id)) &&
            (rc = oac_shapes_known_set(p->sh, v->id, out_known[k])))
            return rc;
    }
    return OAC_OK;
}

static int infer_scopes(pass *p)
{
    oac_graphs *g = p->g;
    int rc = OAC_OK;
    size_t cap = 0;
    const oac_vshape **in = NULL;
    const oac_known **in_known = NULL;
    oac_vshape *out = NULL;
    oac_known **out_known = NULL;

    /* Declarations first, everywhere: inference of one scope may read
     * outer values of another. */
    for (size_t id = 0; id < g->n_values; id++) {
        /* No declaration: the value stays as oac_pass_shapes made it. */
        const Onnx__TypeProto *t = oac_value_type(oac_graphs_value(g, id));
        if (t && (rc = parse_type(p, t, &p->sh->vals[id])))
            goto done;
    }
    /* A dim_param declared only on a value_info nothing defines is still
     * a name of the model (--dim may bind it). */
    for (size_t si = 0; si < g->n_scopes; si++) {
        const oac_scope *s = g->scopes[si];
        Onnx__ValueInfoProto *const *vi = s->graph ? s->graph->value_info :
                                          s->func ? s->func->value_info : NULL;
        size_t nvi = s->graph ? s->graph->n_value_info :
                     s->func ? s->func->n_value_info : 0;
        for (size_t k = 0; k < nvi; k++) {
            oac_vshape tmp;
            if (vi[k] && !oac_scope_local(s, vi[k]->name) &&
                (rc = parse_type(p, vi[k]->type, &tmp)))
                goto done;
        }
    }
    if ((rc = apply_dim_options(p)) || (rc = oac_shapes_load_inputs(p->st, p->sh)))
        goto done;
    for (size_t si = 0; si < g->n_scopes; si++) {
        oac_scope *s = g->scopes[si];
        int64_t opset = onnx_opset(g, s);
        for (size_t k = 0; k < s->n_values; k++)
            if (s->values_block[k].kind != OAC_VAL_NODE_OUTPUT &&
                (rc = seed_value(p, &s->values_block[k])))
                goto done;
        /* In the schedule's order (check/order.h): a value is typed before
         * its readers, whatever the file order. */
        const oac_scope_order *so = oac_sched_scope(p->st->schedule, s->index);
        for (size_t k = 0; k < s->n_nodes; k++) {
            size_t i = oac_sched_node(so, k);
            const oac_node *nd = &s->nodes[i];
            size_t need = nd->n_in > nd->n_out ? nd->n_in : nd->n_out;
            if (need > cap) {
                size_t ncap = need;
                void *a = oac_reallocarray(p->sh->ctx, in, ncap, sizeof *in);
                if (!a) { rc = OAC_ENOMEM; goto done; }
                in = a;
                a = oac_reallocarray(p->sh->ctx, in_known, ncap, sizeof *in_known);
                if (!a) { rc = OAC_ENOMEM; goto done; }
                in_known = a;
                a = oac_reallocarray(p->sh->ctx, out, ncap, sizeof *out);
                if (!a) { rc = OAC_ENOMEM; goto done; }
                out = a;
                a = oac_reallocarray(p->sh->ctx, out_known, ncap, sizeof *out_known);
                if (!a) { rc = OAC_ENOMEM; goto done; }
                out_known = a;
                cap = ncap;
            }
            if ((rc = visit_node(p, s, (long)i, opset, in, in_known, out, out_known)))
                goto done;
        }
    }
done:
    oac_dealloc(p->sh->ctx, in);
    oac_dealloc(p->sh->ctx, in_known);
    oac_dealloc(p->sh->ctx, out);
    oac_dealloc(p->sh->ctx, out_known);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Alias classes (contract 3: type/rank/shape-mismatch; 4: classes)     */
/* ------------------------------------------------------------------ */

static const char *elem_name(int32_t t)
{
    const char *n = oac_elem_name(t);
    return n ? n : "an unknown type";
}

static void value_where(const pass *p, const oac_value *v, char *loc,
                        size_t len, oac_where *w)
{
    loc[0] = '\0';
    *w = (oac_where){ .graph = v->scope->name, .value = v->name };
    if (v->producer >= 0) {
        const oac_node *n = &v->scope->nodes[v->producer];
        oac_node_loc(loc, len, v->scope, v->producer, "/output/%d", v->port);
        w->node = n->display;
        w->op_type = n->proto->op_type;
    }
    /* The declaration is what disagrees, when there is one. */
    if (oac_value_vi_loc(v))
        snprintf(loc, len, "%s/type", oac_value_vi_loc(v));
    w->location = loc[0] ? loc : NULL;
    (void)p;
}

static const char *kind_name(const oac_vshape *v)
{
    switch (v->kind) {
    case OAC_VK_TENSOR: return v->quantized ? "a quantized tensor" : "a tensor";
    case OAC_VK_SEQUENCE: return v->quantized ? "a sequence of quantized tensors" : "a sequence";
    case OAC_VK_MAP: return v->quantized ? "a map of quantized tensors" : "a map";
    default: return "of another type";
    }
}

static int unify_class(pass *p, const oac_aclass *cl, oac_vshape *m)
{
    oac_shapes *sh = p->sh;
    *m = (oac_vshape){ .kind = OAC_VK_UNKNOWN, .rank = -1 };
    const oac_value *type_from = NULL, *rank_from = NULL, *kind_from = NULL;
    /* The class's dims while members are merged in; interned after. */
    oac_dimref dims[OAC_SHAPE_MAX_RANK];
    char loc[512];
    oac_where w;
    int rc;
    for (size_t k = 0; k < cl->n_members; k++) {
        const oac_value *v = cl->members[k];
        const oac_vshape *vs = &sh->vals[v->id];
        if (vs->kind == OAC_VK_UNKNOWN)
            continue;
        if (m->kind == OAC_VK_UNKNOWN) {
            m->kind = vs->kind;
            m->quantized = vs->quantized;
            kind_from = v;
        } else if (m->kind != vs->kind || m->quantized != vs->quantized) {
            /* A tensor and a sequence of pages cannot share one buffer. */
            value_where(p, v, loc, sizeof loc, &w);
            rc = oac_scope_diag(p->st, cl->scope, OAC_TYPE_MISMATCH, &w,
                                "'%s' is %s but '%s' of the same alias class "
                                "(root '%s') is %s", v->name, kind_name(vs),
                                kind_from->name, cl->root->name, kind_name(m));
            if (rc)
                return rc;
            continue;
        }
        if (vs->elem_type) {
            if (!m->elem_type) {
                m->elem_type = vs->elem_type;
                type_from = v;
            } else if (m->elem_type != vs->elem_type) {
                value_where(p, v, loc, sizeof loc, &w);
                rc = oac_scope_diag(p->st, cl->scope, OAC_TYPE_MISMATCH, &w,
                                    "'%s' is %s but '%s' of the same alias class "
                                    "(root '%s') is %s", v->name,
                                    elem_name(vs->elem_type), type_from->name,
                                    cl->root->name, elem_name(m->elem_type));
                if (rc)
                    return rc;
            }
        }
        if (vs->rank < 0)
            continue;
        if (m->rank < 0) {
            m->rank = vs->rank;
            oac_shapes_copy(dims, vs->dims, (size_t)vs->rank * sizeof *dims);
            rank_from = v;
            continue;
        }
        if (m->rank != vs->rank) {
            value_where(p, v, loc, sizeof loc, &w);
            rc = oac_scope_diag(p->st, cl->scope, OAC_RANK_MISMATCH, &w,
                                "'%s' has rank %d but '%s' of the same alias class "
                                "(root '%s') has rank %d", v->name, vs->rank,
                                rank_from->name, cl->root->name, m->rank);
            if (rc)
                return rc;
            continue;
        }
        for (int32_t d = 0; d < m->rank; d++) {
            int64_t a = oac_shapes_dim(sh, dims[d]);
            int64_t b = oac_shapes_dim(sh, vs->dims[d]);
            if (a >= 0 && b >= 0 && a != b && !OAC_DIM_IS_SYM(dims[d]) &&
                !OAC_DIM_IS_SYM(vs->dims[d])) {
                value_where(p, v, loc, sizeof loc, &w);
                rc = oac_scope_diag(p->st, cl->scope, OAC_SHAPE_MISMATCH, &w,
                                    "'%s' has %" PRId64 " on axis %d but '%s' of the "
                                    "same alias class (root '%s') has %" PRId64,
                                    v->name, b, d, rank_from->name,
                                    cl->root->name, a);
                if (rc)
                    return rc;
                continue;
            }
            place pa = { OAC_ORIGIN_DECLARED, rank_from->id, d };
            place pb = { OAC_ORIGIN_DECLARED, v->id, d };
            if (rank_from->producer >= 0 && !oac_value_vi(rank_from))
                pa.kind = OAC_ORIGIN_INFERRED;
            if (v->producer >= 0 && !oac_value_vi(v))
                pb.kind = OAC_ORIGIN_INFERRED;
            oac_dimref r;
            if ((rc = unify_dim(p, dims[d], &pa, vs->dims[d], &pb, true, &r)))
                return rc;
            /* Keep a symbol when there is one: it carries the dim_param
             * the report names, and its binding is the number. */
            if (!OAC_DIM_IS_SYM(dims[d]) && OAC_DIM_IS_SYM(vs->dims[d]))
                dims[d] = vs->dims[d];
        }
    }
    if (m->rank >= 0 && !(m->dims = oac_shapes_intern(sh, dims, (size_t)m->rank)))
        return OAC_ENOMEM;
    /* What one name learnt holds for all (contract 3): members with
     * unknown parts take the class's. */
    for (size_t k = 0; k < cl->n_members; k++) {
        oac_vshape *vs = &sh->vals[cl->members[k]->id];
        if (vs->kind == OAC_VK_UNKNOWN && m->kind != OAC_VK_UNKNOWN)
            *vs = *m;
        if (vs->kind != m->kind)
            continue;
        if (!vs->elem_type)
            vs->elem_type = m->elem_type;
        if (vs->rank < 0 && m->rank >= 0) {
            vs->rank = m->rank;
            vs->dims = m->dims;
        }
    }
    return OAC_OK;
}

static int unify_classes(pass *p)
{
    const oac_aliases *a = p->st->aliases;
    if (!a)
        return OAC_OK;
    oac_vshape *merged = oac_calloc(p->st->ctx, a->n_classes ? a->n_classes : 1,
                                    sizeof *merged);
    if (!merged)
        return OAC_ENOMEM;
    int rc = OAC_OK;
    for (size_t i = 0; i < a->n_classes && !rc; i++)
        rc = unify_class(p, &a->classes[i], &merged[i]);
    /* Fill after every class is unified: a symbol bound by a later class
     * shows in an earlier one. */
    oac_analysis *out = p->st->out;
    for (size_t i = 0; i < a->n_classes && !rc && out; i++)
        if (i < out->n_classes)
            rc = oac_class_complete(out, i, p->sh, &merged[i]);
    oac_dealloc(p->st->ctx, merged);
    return rc;
}

/* The dim_params in force, for oac_analysis_dim. */
static int fill_dims(pass *p)
{
    oac_analysis *out = p->st->out;
    oac_ctx *ctx = p->st->ctx;
    if (!out)
        return OAC_OK;
    size_t n = 0;
    for (size_t i = 0; i < p->sh->n_syms; i++)
        if (p->sh->syms[i].name && oac_shapes_dim(p->sh, OAC_DIM_SYM(i)) >= 0 &&
            oac_shapes_sym_by_name(p->sh, p->sh->syms[i].name) == i)
            n++;
    if (!n)
        return OAC_OK;
    out->dim_names = oac_calloc(ctx, n, sizeof *out->dim_names);
    out->dim_values = oac_calloc(ctx, n, sizeof *out->dim_values);
    if (!out->dim_names || !out->dim_values)
        return OAC_ENOMEM;
    for (size_t i = 0; i < p->sh->n_syms; i++) {
        const oac_sym *s = &p->sh->syms[i];
        if (!s->name || oac_shapes_dim(p->sh, OAC_DIM_SYM(i)) < 0 ||
            oac_shapes_sym_by_name(p->sh, s->name) != i)
            continue;
        if (!(out->dim_names[out->n_dims] = oac_strdup(ctx, s->name)))
            return OAC_ENOMEM;
        out->dim_values[out->n_dims++] = oac_shapes_dim(p->sh, OAC_DIM_SYM(i));
    }
    return OAC_OK;
}

/* ------------------------------------------------------------------ */
/* The pass                                                             */
/* ------------------------------------------------------------------ */

int oac_pass_shapes(oac_check_state *st)
{
    if (!st->graphs)
        return OAC_OK;
    oac_shapes *sh;
    int rc = oac_shapes_new(st->ctx, st->graphs->n_values, &sh);
    if (rc)
        return rc;
    sh->graphs = st->graphs;
    /* The analysis owns it from here on (check/check.c hands it over, also
     * when a later step fails). */
    st->shapes = sh;

    pass p = { .st = st, .sh = sh, .g = st->graphs };
    rc = infer_scopes(&p);
    if (rc)
        return rc;
    if ((rc = unify_classes(&p)))
        return rc;
    oac_shapes_intern_done(sh);
    return fill_dims(&p);
}

/* check/operands.c: operand validity (oac_pass_operands, operand-invalid).
 *
 * Owns the one pass that judges a node's operands: a node of the
 * contract's domain (OAC_ALIAS_DOMAIN) in a model or function that does
 * not import it, and for the cache updates (OAC_OPF_CACHE_UPDATE rows)
 * their input and output counts, required inputs, integer and
 * closed-set attributes (the row's .axis_attr, a paged update's
 * quantized_type, .enum_attr), then their operand types: a dense cache
 * of a fixed-size numeric type and values that match it but on the
 * capacity axis, a paged cache of pages [2, heads, page_size,
 * head_size] and an INT64 scalar page_id, and an INT64 scalar position
 * or (OAC_OPF_WRITE_INDICES) write_indices INT64 [batch].  Contract:
 * section 2 (the operators' operands), section 3 (operand-invalid).
 *
 * Invariants:
 *  1. It runs after the shapes pass (check/passes.def) and reads its
 *     store (check/shapes_store.h); what is not known is no violation.
 *  2. Each node is visited once, in file order per scope; its structural
 *     findings come before its type findings, and its type check stops
 *     at a violation that makes the later ones moot (STOP).
 *  3. Every operator fact is its row's (ports, counts, flags, axis and
 *     enum attributes): no operator is named here.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check/checker.h"
#include "check/graph.h"
#include "check/shapes_store.h"
#include "ops.h"

#define LOC_MAX 512

typedef struct operands {
    oac_check_state *st;
    const oac_shapes *sh;
} operands;

static bool empty(const char *s)
{
    return !s || !*s;
}

static const Onnx__AttributeProto *find_attr(const Onnx__NodeProto *n,
                                             const char *name, size_t *idx)
{
    for (size_t a = 0; a < n->n_attribute; a++)
        if (n->attribute[a] && n->attribute[a]->name &&
            strcmp(n->attribute[a]->name, name) == 0) {
            if (idx)
                *idx = a;
            return n->attribute[a];
        }
    return NULL;
}

/* Is the attribute an int?  type INT, or (untyped, old writers) only i. */
static bool attr_is_int(const Onnx__AttributeProto *a)
{
    if (a->has_type)
        return a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    return !a->has_f && !a->s.len && !a->t && !a->g && !a->n_ints &&
           !a->n_floats && !a->n_strings && !a->n_tensors && !a->n_graphs;
}

/* ---- the node's form: domain, counts, attributes ------------------- */

/* A node of the contract's domain where it is not imported. */
static int check_domain(oac_check_state *st, oac_scope *s, long i)
{
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    char loc[LOC_MAX];
    if (s->imports_alias || oac_domain_is_onnx(np->domain) ||
        strcmp(np->domain, OAC_ALIAS_DOMAIN) != 0)
        return OAC_OK;
    oac_where w = oac_where_node(s, i, np->n_output ? np->output[0] : NULL,
                                 "/domain", loc, sizeof loc);
    return oac_scope_diag(st, s, OAC_OPERAND_INVALID, &w,
        "node '%s' (%s) of graph '%s' uses domain " OAC_ALIAS_DOMAIN ", which "
        "the %s does not import", n->display,
        np->op_type ? np->op_type : "", s->name,
        s->kind == OAC_SCOPE_FUNCTION ? "function" : "model");
}

/* A cache update's input count, required inputs and its one output.  The
 * where (a location printed from the node's loc) is made only for a
 * finding: every cache update comes here. */
static int check_counts(oac_check_state *st, oac_scope *s, long i)
{
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    const oac_op *op = n->op;
    const char *out0 = np->n_output ? np->output[0] : NULL;
    char loc[LOC_MAX];
    oac_where w;
    int rc = OAC_OK;
    if (op->min_inputs >= 0 &&
        (np->n_input < (size_t)op->min_inputs ||
         np->n_input > (size_t)op->max_inputs)) {
        w = oac_where_node(s, i, out0, NULL, loc, sizeof loc);
        if (op->min_inputs == op->max_inputs)
            rc = oac_scope_diag(st, s, OAC_OPERAND_INVALID, &w,
                "node '%s' (%s) of graph '%s' has %zu inputs; %s takes %d",
                n->display, op->op_type, s->name, np->n_input, op->op_type,
                op->min_inputs);
        else
            rc = oac_scope_diag(st, s, OAC_OPERAND_INVALID, &w,
                "node '%s' (%s) of graph '%s' has %zu inputs; %s takes %d to %d",
                n->display, op->op_type, s->name, np->n_input, op->op_type,
                op->min_inputs, op->max_inputs);
        if (rc)
            return rc;
    }
    /* Required operands (all but the optional tail) must be named. */
    for (size_t p = 0; p < np->n_input && p < (size_t)op->min_inputs; p++) {
        if (!empty(np->input[p]))
            continue;
        w = oac_where_node(s, i, out0, "", loc, sizeof loc);
        oac_node_loc(loc, sizeof loc, s, i, "/input/%zu", p);
        if ((rc = oac_scope_diag(st, s, OAC_OPERAND_INVALID, &w,
                "node '%s' (%s) of graph '%s' omits its required input %zu",
                n->display, op->op_type, s->name, p)))
            return rc;
    }
    if (np->n_output < 1 || empty(np->output[0])) {
        w = oac_where_node(s, i, out0, NULL, loc, sizeof loc);
        return oac_scope_diag(st, s, OAC_OPERAND_INVALID, &w,
                "node '%s' (%s) of graph '%s' has no output 0 (updated cache)",
                n->display, op->op_type, s->name);
    }
    if (np->n_output > 1) {
        w = oac_where_node(s, i, out0, NULL, loc, sizeof loc);
        return oac_scope_diag(st, s, OAC_OPERAND_INVALID, &w,
                "node '%s' (%s) of graph '%s' has %zu outputs; %s has one",
                n->display, op->op_type, s->name, np->n_output, op->op_type);
    }
    return OAC_OK;
}

/* The finding for attribute ai of node i, at /attribute/ai. */
static int attr_diag(oac_check_state *st, oac_scope *s, long i, size_t ai,
                     const char *what, const char *attr, const char *values)
{
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    char loc[LOC_MAX];
    oac_where w = oac_where_node(s, i, np->n_output ? np->output[0] : NULL, "",
                                 loc, sizeof loc);
    oac_node_loc(loc, sizeof loc, s, i, "/attribute/%zu", ai);
    return oac_scope_diag(st, s, OAC_OPERAND_INVALID, &w,
        "node '%s' (%s) of graph '%s': attribute '%s' must be %s%s",
        n->display, n->op->op_type, s->name, attr, what, values);
}

/* Integer attributes of the row (the capacity axis, and the page's
 * quantized_type for paged updates) and its closed-set string attribute
 * (.enum_attr). */
static int check_attrs(oac_check_state *st, oac_scope *s, long i)
{
    const oac_op *op = s->nodes[i].op;
    const Onnx__NodeProto *np = s->nodes[i].proto;
    const char *int_attrs[2] = { op->axis_attr,
        oac_op_has(op, OAC_OPF_PAGED) ? "quantized_type" : NULL };
    int rc;
    size_t ai;
    for (size_t k = 0; k < 2; k++) {
        const Onnx__AttributeProto *a;
        if (!int_attrs[k] || !(a = find_attr(np, int_attrs[k], &ai)))
            continue;
        if (!attr_is_int(a) &&
            (rc = attr_diag(st, s, i, ai, "an int", int_attrs[k], "")))
            return rc;
    }
    const Onnx__AttributeProto *ea = op->enum_attr
        ? find_attr(np, op->enum_attr, &ai) : NULL;
    if (!ea)
        return OAC_OK;
    bool is_str = ea->has_type
        ? ea->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING
        : ea->has_s;
    if (!is_str || !oac_op_enum_ok(op, (const char *)ea->s.data, ea->s.len))
        return attr_diag(st, s, i, ai, "one of ", op->enum_attr, op->enum_values);
    return OAC_OK;
}

/* ---- the operand types (from the shapes pass) ---------------------- */

/* INT64 scalar: shape [] or [1].  What is not known is no violation. */
static bool vs_is_int64_scalar(const operands *p, const oac_vshape *v)
{
    if (!v || v->kind == OAC_VK_UNKNOWN)
        return true;
    if (v->kind != OAC_VK_TENSOR || v->quantized)
        return false;
    if (v->elem_type && v->elem_type != 7 /* INT64 */)
        return false;
    if (v->rank <= 0)
        return true;
    if (v->rank != 1)
        return false;
    int64_t d = oac_shapes_dim(p->sh, v->dims[0]);
    return d < 0 || d == 1;
}

static const char *elem_name(int32_t t)
{
    const char *n = oac_elem_name(t);
    return n ? n : "an unknown type";
}

static int operand_diag(operands *p, oac_scope *s, long i, const char *value,
                        int port, const char *fmt, ...) OAC_PRINTF(6, 7);

static int operand_diag(operands *p, oac_scope *s, long i, const char *value,
                        int port, const char *fmt, ...)
{
    char buf[512], suffix[32], msg[1024];
    if (port >= 0)
        snprintf(suffix, sizeof suffix, "/input/%d", port);
    oac_where w = oac_where_node(s, i, value, port >= 0 ? suffix : NULL,
                                 buf, sizeof buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return oac_scope_diag(p->st, s, OAC_OPERAND_INVALID, &w, "%s", msg);
}

static const oac_vshape *port_shape(operands *p, oac_scope *s, long i, int port,
                                    const char **name)
{
    *name = NULL;
    if (port < 0)
        return NULL;
    oac_value *v = oac_node_input(s, i, (size_t)port);
    if (!v)
        return NULL;
    *name = v->name;
    return &p->sh->vals[v->id];
}

/* values must match cache except on the capacity axis. */
static int check_values_match(operands *p, oac_scope *s, long i, const char *nd,
                              const oac_vshape *c, const char *cn,
                              const oac_vshape *v, const char *vn, int vport,
                              int64_t axis)
{
    if (c->elem_type && v->elem_type && c->elem_type != v->elem_type)
        return operand_diag(p, s, i, vn, vport,
                            "node '%s': values '%s' are %s but the cache '%s' holds %s",
                            nd, vn, elem_name(v->elem_type), cn,
                            elem_name(c->elem_type));
    if (c->rank < 0 || v->rank < 0)
        return OAC_OK;
    if (c->rank != v->rank)
        return operand_diag(p, s, i, vn, vport,
                            "node '%s': values '%s' have rank %d but the cache '%s' has rank %d",
                            nd, vn, v->rank, cn, c->rank);
    for (int32_t d = 0; d < c->rank; d++) {
        if (d == axis)
            continue;
        int64_t a = oac_shapes_dim(p->sh, c->dims[d]);
        int64_t b = oac_shapes_dim(p->sh, v->dims[d]);
        if (a >= 0 && b >= 0 && a != b)
            return operand_diag(p, s, i, vn, vport,
                                "node '%s': values '%s' have %" PRId64
                                " on axis %d but the cache '%s' has %" PRId64,
                                nd, vn, b, d, cn, a);
    }
    return OAC_OK;
}


/* A type check's finding that makes the node's later ones moot: the
 * check functions below return STOP after one (and a negative status
 * on failure); check_values_match's findings do not stop. */
#define STOP 1
static int stop(int rc)
{
    return rc ? rc : STOP;
}
#define REPORT(...) stop(operand_diag(__VA_ARGS__))

/* Pages of a paged update: a Sequence<QuantizedTensor> of rank-4 pages
 * [2, heads, page_size, head_size], dense values that match them but on
 * the page's axis 2, an INT64 scalar page_id. */
static int check_paged_types(operands *p, oac_scope *s, long i,
                             const oac_vshape *c, const char *cn,
                             const oac_vshape *v, const char *vn)
{
    oac_node *nd = &s->nodes[i];
    const oac_op *op = nd->op;
    const char *gn;
    int rc;
    if (c && c->kind != OAC_VK_UNKNOWN &&
        !((c->kind == OAC_VK_SEQUENCE || c->kind == OAC_VK_MAP) && c->quantized))
        return REPORT(p, s, i, cn, 0,
                            "node '%s': the cache '%s' is not a Sequence<QuantizedTensor>",
                            nd->display, cn);
    if (c && c->rank >= 0 && c->rank != 4)
        return REPORT(p, s, i, cn, 0,
                            "node '%s': the pages of '%s' have rank %d, not 4 "
                            "[2, heads, page_size, head_size]", nd->display, cn,
                            c->rank);
    if (c && c->rank == 4) {
        int64_t two = oac_shapes_dim(p->sh, c->dims[0]);
        if (two >= 0 && two != 2)
            return REPORT(p, s, i, cn, 0,
                                "node '%s': the pages of '%s' have %" PRId64
                                " on axis 0, not 2 (key and value)",
                                nd->display, cn, two);
    }
    if (c && v) {
        if (v->kind != OAC_VK_UNKNOWN && (v->kind != OAC_VK_TENSOR || v->quantized))
            return REPORT(p, s, i, vn, op->values_port,
                                "node '%s': values '%s' are not a dense tensor",
                                nd->display, vn);
        if ((rc = check_values_match(p, s, i, nd->display, c, cn, v, vn,
                                     op->values_port, 2)))
            return rc;
    }
    const oac_vshape *pg = port_shape(p, s, i, op->page_id_port, &gn);
    if (pg && !vs_is_int64_scalar(p, pg))
        return REPORT(p, s, i, gn, op->page_id_port,
                            "node '%s': page_id '%s' is not an INT64 scalar",
                            nd->display, gn);
    return OAC_OK;
}

/* A dense cache of a fixed-size numeric type, an axis inside its rank,
 * dense values that match it but on that axis. */
static int check_dense_types(operands *p, oac_scope *s, long i,
                             const oac_vshape *c, const char *cn,
                             const oac_vshape *v, const char *vn)
{
    oac_node *nd = &s->nodes[i];
    const oac_op *op = nd->op;
    if (c && c->kind != OAC_VK_UNKNOWN &&
        (c->kind != OAC_VK_TENSOR || c->quantized))
        return REPORT(p, s, i, cn, 0,
                            "node '%s': the cache '%s' is not a dense tensor",
                            nd->display, cn);
    if (c && c->elem_type && (oac_elem_bits(c->elem_type) == 0 ||
                              c->elem_type == 9 /* BOOL */))
        return REPORT(p, s, i, cn, 0,
                            "node '%s': the cache '%s' holds %s, not a fixed-size numeric type",
                            nd->display, cn, elem_name(c->elem_type));
    int64_t axis = op->axis_default;
    if (op->axis_attr)
        axis = oac_attr_int(nd->proto, op->axis_attr, axis);
    if (c && c->rank >= 0) {
        if (axis < -(int64_t)c->rank || axis >= c->rank) {
            return REPORT(p, s, i, cn, -1,
                                "node '%s': axis %" PRId64
                                " is out of range for the rank-%d cache '%s'",
                                nd->display, axis, c->rank, cn);
        }
        if (axis < 0)
            axis += c->rank;
    } else {
        axis = -1;
    }
    if (v && v->kind != OAC_VK_UNKNOWN && (v->kind != OAC_VK_TENSOR || v->quantized))
        return REPORT(p, s, i, vn, op->values_port,
                            "node '%s': values '%s' are not a dense tensor",
                            nd->display, vn);
    if (c && v && axis >= 0)
        return check_values_match(p, s, i, nd->display, c, cn, v, vn,
                                  op->values_port, axis);
    return OAC_OK;
}

/* write_indices: INT64 [batch], as many as the cache's batch. */
static int check_write_indices(operands *p, oac_scope *s, long i,
                               const oac_vshape *pos, const char *pn,
                               const oac_vshape *c, const char *cn)
{
    oac_node *nd = &s->nodes[i];
    const oac_op *op = nd->op;
    if (pos && pos->kind == OAC_VK_TENSOR && pos->elem_type &&
        pos->elem_type != 7 /* INT64 */)
        return REPORT(p, s, i, pn, op->position_port,
                            "node '%s': write_indices '%s' are %s, not INT64",
                            nd->display, pn, elem_name(pos->elem_type));
    if (pos && pos->rank >= 0 && pos->rank != 1)
        return REPORT(p, s, i, pn, op->position_port,
                            "node '%s': write_indices '%s' have rank %d, not 1 ([batch])",
                            nd->display, pn, pos->rank);
    if (pos && c && pos->rank == 1 && c->rank >= 1) {
        int64_t b = oac_shapes_dim(p->sh, pos->dims[0]);
        int64_t cb = oac_shapes_dim(p->sh, c->dims[0]);
        if (b >= 0 && cb >= 0 && b != cb)
            return REPORT(p, s, i, pn, op->position_port,
                                "node '%s': write_indices '%s' have %" PRId64
                                " entries but the batch of '%s' is %" PRId64,
                                nd->display, pn, b, cn, cb);
    }
    return OAC_OK;
}

/* The operand types of cache update i: its first violation, if any. */
static int check_types(operands *p, oac_scope *s, long i)
{
    const oac_op *op = s->nodes[i].op;
    const char *cn, *vn, *pn;
    const oac_vshape *c = port_shape(p, s, i, 0, &cn);
    const oac_vshape *v = port_shape(p, s, i, op->values_port, &vn);
    const oac_vshape *pos = port_shape(p, s, i, op->position_port, &pn);
    int rc = oac_op_paged_update(op) ? check_paged_types(p, s, i, c, cn, v, vn)
                                     : check_dense_types(p, s, i, c, cn, v, vn);
    if (rc) {
        /* STOP or a failure */
    } else if (oac_op_has(op, OAC_OPF_WRITE_INDICES)) {
        /* Its closed-set mode is the attribute check's (check_attrs):
         * one finding for a bad mode. */
        rc = check_write_indices(p, s, i, pos, pn, c, cn);
    } else if (pos && !vs_is_int64_scalar(p, pos)) {
        rc = REPORT(p, s, i, pn, op->position_port,
                    "node '%s': position '%s' is not an INT64 scalar (shape [] or [1])",
                    s->nodes[i].display, pn);
    }
    return rc == STOP ? OAC_OK : rc;
}

/* PagedCacheAttention(query, cache, length) (contract 11): query
 * T[num_heads, q_len, head_size] of the pages' decoded type, pages
 * [2, kv_heads, page_size, head_size] with kv_heads = kv_num_heads,
 * num_heads % kv_num_heads == 0, length an INT64 scalar.  What is not
 * known is no violation. */
static int check_attn_operands(operands *p, oac_scope *s, long i)
{
    oac_node *nd = &s->nodes[i];
    const Onnx__NodeProto *np = nd->proto;
    if (np->n_input != 3 || !np->input[0][0] || !np->input[1][0] || !np->input[2][0])
        return operand_diag(p, s, i, NULL, -1,
                            "node '%s': PagedCacheAttention takes 3 named inputs "
                            "(query, cache, length), not %zu", nd->display,
                            np->n_input);
    int64_t nh = oac_attr_int(np, "num_heads", 0);
    int64_t kvn = oac_attr_int(np, "kv_num_heads", nh);
    if (nh < 1 || kvn < 1 || nh % kvn)
        return operand_diag(p, s, i, NULL, -1,
                            "node '%s': num_heads %" PRId64 " must be a positive "
                            "multiple of kv_num_heads %" PRId64, nd->display, nh, kvn);
    const char *qn, *cn, *ln;
    const oac_vshape *q = port_shape(p, s, i, 0, &qn);
    const oac_vshape *c = port_shape(p, s, i, 1, &cn);
    const oac_vshape *len = port_shape(p, s, i, 2, &ln);
    if (c && c->kind != OAC_VK_UNKNOWN &&
        !((c->kind == OAC_VK_SEQUENCE || c->kind == OAC_VK_MAP) && c->quantized))
        return operand_diag(p, s, i, cn, 1,
                            "node '%s': the cache '%s' is not a Sequence or Map of "
                            "QuantizedTensor pages", nd->display, cn);
    if (c && c->rank >= 0 && c->rank != 4)
        return operand_diag(p, s, i, cn, 1,
                            "node '%s': the pages of '%s' have rank %d, not 4 "
                            "[2, kv_heads, page_size, head_size]", nd->display, cn,
                            c->rank);
    if (q && q->kind != OAC_VK_UNKNOWN && (q->kind != OAC_VK_TENSOR || q->quantized))
        return operand_diag(p, s, i, qn, 0, "node '%s': query '%s' is not a dense "
                            "tensor", nd->display, qn);
    if (q && q->rank >= 0 && q->rank != 3)
        return operand_diag(p, s, i, qn, 0, "node '%s': query '%s' has rank %d, not 3 "
                            "[num_heads, q_len, head_size]", nd->display, qn, q->rank);
    if (q && q->elem_type && q->elem_type != 1 && q->elem_type != 10 &&
        q->elem_type != 16)
        return operand_diag(p, s, i, qn, 0, "node '%s': query '%s' is %s, not FLOAT, "
                            "FLOAT16 or BFLOAT16", nd->display, qn,
                            elem_name(q->elem_type));
    if (q && c && q->elem_type && c->elem_type && q->elem_type != c->elem_type)
        return operand_diag(p, s, i, qn, 0, "node '%s': query '%s' is %s but the pages "
                            "of '%s' decode to %s", nd->display, qn,
                            elem_name(q->elem_type), cn, elem_name(c->elem_type));
    int64_t qh = q && q->rank == 3 ? oac_shapes_dim(p->sh, q->dims[0]) : -1;
    int64_t qs = q && q->rank == 3 ? oac_shapes_dim(p->sh, q->dims[2]) : -1;
    int64_t two = c && c->rank == 4 ? oac_shapes_dim(p->sh, c->dims[0]) : -1;
    int64_t ck = c && c->rank == 4 ? oac_shapes_dim(p->sh, c->dims[1]) : -1;
    int64_t cs = c && c->rank == 4 ? oac_shapes_dim(p->sh, c->dims[3]) : -1;
    if (two >= 0 && two != 2)
        return operand_diag(p, s, i, cn, 1, "node '%s': the pages of '%s' have %"
                            PRId64 " on axis 0, not 2 (keys and values)",
                            nd->display, cn, two);
    if (qh >= 0 && qh != nh)
        return operand_diag(p, s, i, qn, 0, "node '%s': query '%s' has %" PRId64
                            " heads but num_heads is %" PRId64, nd->display, qn, qh, nh);
    if (qs >= 0 && cs >= 0 && qs != cs)
        return operand_diag(p, s, i, qn, 0, "node '%s': query '%s' has head_size %"
                            PRId64 " but the pages of '%s' have %" PRId64,
                            nd->display, qn, qs, cn, cs);
    if (ck >= 0 && ck != kvn)
        return operand_diag(p, s, i, cn, 1, "node '%s': the pages of '%s' have %"
                            PRId64 " kv heads but kv_num_heads is %" PRId64,
                            nd->display, cn, ck, kvn);
    if (len && !vs_is_int64_scalar(p, len))
        return operand_diag(p, s, i, ln, 2, "node '%s': length '%s' is not an INT64 "
                            "scalar (shape [] or [1])", nd->display, ln);
    return OAC_OK;
}

/* ---- the pass ------------------------------------------------------- */

int oac_pass_operands(oac_check_state *st)
{
    oac_graphs *g = st->graphs;
    if (!g)
        return OAC_OK;
    operands p = { .st = st, .sh = st->shapes };
    int rc = OAC_OK;
    for (size_t si = 0; si < g->n_scopes && !rc; si++) {
        oac_scope *s = g->scopes[si];
        for (size_t i = 0; i < s->n_nodes && !rc; i++) {
            bool update = oac_op_has(s->nodes[i].op, OAC_OPF_CACHE_UPDATE);
            /* Most nodes are of a domain the scope imports and no cache
             * update: nothing to judge. */
            if (!s->imports_alias && (rc = check_domain(st, s, (long)i)))
                break;
            if (oac_op_has(s->nodes[i].op, OAC_OPF_PAGED_READ) && p.sh &&
                (rc = check_attn_operands(&p, s, (long)i)))
                break;
            if (!update)
                continue;
            if ((rc = check_counts(st, s, (long)i)) ||
                (rc = check_attrs(st, s, (long)i)))
                break;
            if (p.sh)
                rc = check_types(&p, s, (long)i);
        }
    }
    return rc;
}

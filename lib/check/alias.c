/* check/alias.c: the alias forest's queries (check/alias.h).
 *
 * Owns what the later passes and the runtime ask of the alias forest
 * that check/alias_classes.c builds: a value's class, parent, root and
 * storage, the resolved must-alias port of a node output, a root's kind,
 * ancestry, the writer of an in-place update, and freeing the forest.
 * Contract: section 3 ("Details the rules rely on"), section 4
 * (alias_classes).
 *
 * Invariants:
 *  1. Read-only: nothing here changes the forest, so the analysis can
 *     hand it to the runtime and to threads of `run --sessions`.
 *  2. Constant time per question (forest numbers, preorder intervals).
 */
#include "check/alias.h"
#include "ops.h"

const oac_aclass *oac_value_class(const oac_aliases *a, const oac_value *v)
{
    size_t f = a && v && v->id < a->n_values && a->class_of
        ? oac_alias_ix(a, v) : 0;
    if (!f || a->class_of[f] < 0)
        return NULL;
    return &a->classes[a->class_of[f]];
}

bool oac_node_states_alias(const Onnx__NodeProto *np, int out, int in)
{
    for (size_t k = 0; k < np->n_output_alias; k++) {
        const Onnx__ValueAliasProto *e = np->output_alias[k];
        if (e && (e->has_output_index ? e->output_index : 0) == out &&
            (e->has_input_index ? e->input_index : 0) == in)
            return true;
    }
    return false;
}

int oac_node_alias_in(const oac_scope *s, long i, size_t out)
{
    oac_node *n = oac_scope_node(s, i);
    if (!n || !n->alias_in || out >= n->proto->n_output)
        return -1;
    return n->alias_in[out];
}

oac_value *oac_value_aliased_input(const oac_value *v)
{
    if (!v || v->producer < 0)
        return NULL;
    int in = oac_node_alias_in(v->scope, v->producer, (size_t)v->port);
    return in < 0 ? NULL : oac_node_input(v->scope, v->producer, (size_t)in);
}

oac_root_kind oac_value_root_kind(const oac_value *r)
{
    if (oac_value_is_initializer(r) || r->kind == OAC_VAL_INITIALIZER)
        return OAC_ROOT_INITIALIZER;
    const Onnx__ValueInfoProto *vi = oac_value_vi(r);
    if (r->kind == OAC_VAL_INPUT)
        return vi && vi->has_access &&
               vi->access == ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE
            ? OAC_ROOT_READ_WRITE_INPUT : OAC_ROOT_READ_ONLY_INPUT;
    const oac_node *n = oac_scope_node(r->scope, r->producer);
    if (n && oac_op_has(n->op, OAC_OPF_CONSTANT))
        return OAC_ROOT_CONSTANT;
    return OAC_ROOT_TEMPORARY;
}

bool oac_alias_reaches(const oac_aliases *al, const oac_value *a,
                       const oac_value *b)
{
    if (!al || !a || !b)
        return false;
    if (a == b)
        return true;
    /* A value outside the forest is an ancestor of none but itself. */
    size_t fa = al->tin ? oac_alias_ix(al, a) : 0, fb = fa ? oac_alias_ix(al, b) : 0;
    if (!fb || !al->root[fa] || al->root[fa] != al->root[fb])
        return false;
    return al->tin[fa] <= al->tin[fb] && al->tin[fb] < al->tout[fa];
}

bool oac_alias_writer(const oac_aliases *al, const oac_value *v,
                      oac_scope **scope, long *node)
{
    if (!al || !v || !oac_alias_parent(al, v))
        return false;
    if (oac_alias_edge(al, v) == OAC_EDGE_CARRIED) {
        *scope = v->scope->parent;
        *node = v->scope->owner_node;
    } else {
        *scope = v->scope;
        *node = v->producer;
    }
    return *scope != NULL && *node >= 0;
}

void oac_aliases_free(oac_aliases *a)
{
    if (!a)
        return;
    oac_ctx *ctx = a->ctx;
    oac_dealloc(ctx, a->classes);
    oac_dealloc(ctx, a->member_block);
    oac_dealloc(ctx, a->fid);
    oac_dealloc(ctx, a->value);
    oac_dealloc(ctx, a->class_of);
    oac_dealloc(ctx, a->parent);
    oac_dealloc(ctx, a->edge);
    oac_dealloc(ctx, a->root);
    oac_dealloc(ctx, a->child_start);
    oac_dealloc(ctx, a->children);
    oac_dealloc(ctx, a->tin);
    oac_dealloc(ctx, a->tout);
    oac_dealloc(ctx, a);
}


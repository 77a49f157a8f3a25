/* check/branches.c: aliases that flow through control flow (pass 5).
 *
 * Owns branch-mismatch and the Loop/Scan part of alias-implied.
 * Contract: section 3 and "Details the rules rely on":
 *  - an If output takes its alias from its branches: when one branch
 *    updates an outer value in place and returns it, every branch must
 *    return a value of that same root (returning the outer value
 *    untouched counts); aliased in one branch only is a mismatch;
 *  - Loop carried value i: node output i must-aliases input i+2, body
 *    input i+2 pairs with body output i+1; Scan state i: output i, input
 *    i, body input i, body output i.  A node that declares the alias
 *    needs a body that keeps it (else branch-mismatch); a body that keeps
 *    it under a node that does not declare it is alias-implied.
 *
 * Invariants:
 *  1. Reads the forest of check/alias_classes.c only; it adds no links, so its
 *     findings never change classes.  An If found mismatched is marked
 *     (oac_node_ext.branch_mismatch) so the hazards pass does not report
 *     its branches' writes again (issue 10, item 4: no cascades).
 *  2. Work per If output is bounded by its branches' sizes (the exit
 *     walk stays inside the branch); per Loop/Scan carried value O(1)
 *     thanks to the preorder intervals.
 */
#include <stdio.h>
#include <string.h>

#include "check/alias.h"
#include "check/graph.h"
#include "ops.h"

#define LOC_MAX 512

static int check_if(oac_check_state *st, oac_scope *s, long i)
{
    oac_aliases *al = st->aliases;
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    oac_scope *br[2] = { oac_node_subgraph(n, "then_branch"),
                         oac_node_subgraph(n, "else_branch") };
    static const char *const bname[2] = { "then_branch", "else_branch" };
    char loc[LOC_MAX];
    int rc = OAC_OK;
    if (!br[0] || !br[1])
        return OAC_OK;
    for (size_t p = 0; p < np->n_output && !rc; p++) {
        if (p >= br[0]->n_outputs || p >= br[1]->n_outputs)
            continue;
        oac_value *bo[2], *exit[2], *root[2];
        bool upd[2];
        for (int k = 0; k < 2; k++) {
            bo[k] = br[k]->outputs[p];
            exit[k] = oac_branch_exit(al, br[k], bo[k], &upd[k]);
            root[k] = exit[k] ? oac_alias_root(al, exit[k]) : NULL;
        }
        if (!upd[0] && !upd[1])
            continue;           /* no branch updates anything in place */
        if (root[0] && root[0] == root[1])
            continue;
        int a = upd[0] ? 0 : 1, o = 1 - a;   /* a updates; o is compared */
        if (n->ext)
            n->ext->branch_mismatch = true;  /* check/hazards.c: no cascade */
        const char *out = np->output[p] ? np->output[p] : "";
        oac_where w = oac_where_node(s, i, out, NULL, loc, sizeof loc);
        /* The second party: the branch that does not match the updating
         * one, at its output p. */
        char oloc[LOC_MAX];
        const char *ol = br[o]->output_vi_locs ? br[o]->output_vi_locs[p] : NULL;
        if (!ol) {
            snprintf(oloc, sizeof oloc, "%s/output/%zu", br[o]->loc, p);
            ol = oloc;
        }
        oac_where wo = { .graph = br[o]->name, .value = bo[o] ? bo[o]->name : NULL,
                         .location = ol };
        w.related = &wo;
        w.related_message = o == 1 ? "the else_branch output that differs"
                                   : "the then_branch output that differs";
        if (!root[o])
            rc = oac_scope_diag(st, s, OAC_BRANCH_MISMATCH, &w,
                "node '%s' (If) of graph '%s': output %zu ('%s') is aliased "
                "in one branch only: %s returns '%s' updating '%s' in place, "
                "%s returns '%s', which owns its storage", n->display,
                s->name, p, out, bname[a], bo[a]->name,
                root[a] ? root[a]->name : exit[a]->name, bname[o],
                bo[o] ? bo[o]->name : "");
        else
            rc = oac_scope_diag(st, s, OAC_BRANCH_MISMATCH, &w,
                "node '%s' (If) of graph '%s': output %zu ('%s') has different "
                "alias roots in its branches: %s returns '%s' (root '%s'), "
                "%s returns '%s' (root '%s')", n->display, s->name, p, out,
                bname[a], bo[a]->name, root[a] ? root[a]->name : "?",
                bname[o], bo[o] ? bo[o]->name : "", root[o]->name);
    }
    return rc;
}

static int check_carried(oac_check_state *st, oac_scope *s, long i)
{
    oac_aliases *al = st->aliases;
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    oac_scope *body = oac_node_subgraph(n, "body");
    bool loop = n->op->alias == OAC_AL_LOOP;
    char loc[LOC_MAX];
    int rc = OAC_OK;
    if (!body)
        return OAC_OK;
    long num_scan = 0;
    if (!loop) {
        num_scan = -1;
        for (size_t a = 0; a < np->n_attribute; a++)
            if (np->attribute[a] && np->attribute[a]->name &&
                strcmp(np->attribute[a]->name, "num_scan_inputs") == 0)
                num_scan = (long)np->attribute[a]->i;
        if (num_scan < 0)
            return OAC_OK;      /* a malformed Scan: nothing carried known */
    }
    for (size_t p = 0; p < np->n_output && !rc; p++) {
        int in = oac_op_alias_input(n->op, p, np->n_input, num_scan);
        if (in < 0)
            continue;
        size_t bin = (size_t)in, bout = loop ? p + 1 : p;
        if (bin >= body->n_inputs || bout >= body->n_outputs)
            continue;
        oac_value *bi = body->inputs[bin], *bo = body->outputs[bout];
        if (!bi || !bo)
            continue;
        bool declared = oac_node_alias_in(s, i, p) == in;
        bool kept = bo == bi || oac_alias_reaches(al, bi, bo);
        bool updated = bo != bi && oac_alias_reaches(al, bi, bo);
        const char *out = np->output[p] ? np->output[p] : "";
        if (declared && !kept) {
            oac_where w = oac_where_node(s, i, out, NULL, loc, sizeof loc);
            rc = oac_scope_diag(st, s, OAC_BRANCH_MISMATCH, &w,
                "node '%s' (%s) of graph '%s': output %zu ('%s') must-aliases "
                "input %d, but the body's output %zu ('%s') does not alias "
                "its input %zu ('%s')", n->display, n->op->op_type, s->name,
                p, out, in, bout, bo->name, bin, bi->name);
        } else if (!declared && updated) {
            oac_where w = oac_where_node(s, i, out, NULL, loc, sizeof loc);
            rc = oac_scope_diag(st, s, OAC_ALIAS_IMPLIED, &w,
                "node '%s' (%s) of graph '%s': the body updates carried value "
                "'%s' in place (body output %zu '%s'), but the node has no "
                "output_alias {output %zu, input %d, MUST_ALIAS}, so a runtime "
                "may allocate a second cache", n->display, n->op->op_type,
                s->name, bi->name, bout, bo->name, p, in);
        }
    }
    return rc;
}

int oac_pass_branches(oac_check_state *st)
{
    oac_graphs *g = st->graphs;
    int rc = OAC_OK;
    if (!st->aliases)
        return OAC_OK;
    for (size_t si = 0; si < g->n_scopes && !rc; si++) {
        oac_scope *s = g->scopes[si];
        for (size_t i = 0; i < s->n_nodes && !rc; i++) {
            const oac_op *op = s->nodes[i].op;
            if (!op)
                continue;
            if (op->alias == OAC_AL_BRANCH)
                rc = check_if(st, s, (long)i);
            else if (op->alias == OAC_AL_LOOP || op->alias == OAC_AL_SCAN)
                rc = check_carried(st, s, (long)i);
        }
    }
    return rc;
}

/* check/alias_classes.c: alias classes, and the rules about alias_of and roots.
 *
 * Owns pass 4 (oac_pass_classes): the alias forest over value names (one
 * parent per value, check/alias.h invariant 2), its roots, the equivalence
 * classes with their members in topological order, and the findings
 * alias-mismatch, alias-unknown-value, alias-unbacked, alias-cycle (for
 * cycles of alias links and of alias_of declarations),
 * alias-missing-boundary and alias-root-immutable.  Also creates
 * st->out->classes (root, graph, members, read_write) and completes each
 * (oac_class_complete: elem_type, shape, dim_params, bytes) once the
 * shapes pass has unified its members' types.  Contract: section 3 and "Details the rules rely on"
 * (boundary outputs name the root, chains, If outputs take their alias
 * from their branches, a node output may be a root), section 4
 * (alias_classes).
 *
 * Invariants:
 *  1. Parents come only from resolved ports (check/alias_rules.c), from Loop/
 *     Scan carried values the node must-aliases, and from If outputs whose
 *     branches agree; resolving an If recurses into its branches at most
 *     IF_DEPTH deep, deeper ones alias nothing and are listed unchecked.
 *  2. Roots are found with path compression and a per-walk stamp, so the
 *     whole pass is linear in values plus links; a link cycle (only in a
 *     cyclic, hostile graph) leaves its values without a root.
 *  3. Ancestor questions use the preorder interval of one DFS over the
 *     forest, never a walk per question.
 *  4. What outlives the pass is by forest number (check/alias.h): only values
 *     an edge touches have one, so it is sized by the caches, not by the
 *     model's values; per-value arrays are the pass's own, freed at its
 *     end (parent, edge and root until compact()).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/alias.h"
#include "check/graph.h"
#include "ops.h"
#include "check/order.h"
#include "check/shapes_store.h"

#define IF_DEPTH (4 * OAC_MAX_DEPTH)
#define LOC_MAX 512

/* ---- building the forest -------------------------------------------- */

enum { IF_NONE = 0, IF_PENDING = 1, IF_RESOLVING = 2 };

/* While the forest is built, al's parent, edge and root are by id + 1
 * (check/alias.h): dn(v). */
static size_t dn(const oac_value *v)
{
    return v->id + 1;
}

typedef struct build {
    oac_check_state *st;
    oac_aliases *al;
    uint8_t *if_state;    /* by id */
    uint32_t *stamp;      /* by id: walk that visits it */
    uint32_t next_stamp;
    uint8_t *cycle;       /* by id: on a link cycle */
    /* Bit id: link_edges gave the value a parent or a pending If; only
     * these can have one after find_root (invariant 2). */
    uint64_t *linked;
    uint64_t *targeted;   /* bit id: the value has an alias_of target */
    int rc;
} build;

static void set_bit(uint64_t *bits, size_t id)
{
    bits[id / 64] |= (uint64_t)1 << (id % 64);
}

/* The ids of bits[0 .. n/64], ascending, one per call: *id is the next
 * one from *w on (false when none is left; *m is the rest of word *w). */
static bool next_bit(const uint64_t *bits, size_t nwords, size_t *w,
                     uint64_t *m, size_t *id)
{
    while (!*m) {
        if (++*w >= nwords)
            return false;
        *m = bits[*w];
    }
    *id = *w * 64 + (size_t)__builtin_ctzll(*m);
    *m &= *m - 1;
    return true;
}

static bool empty(const char *s)
{
    return !s || !*s;
}

/* Is scope s the scope b or nested inside it? */
static bool scope_within(const oac_scope *s, const oac_scope *b)
{
    for (; s; s = s->parent)
        if (s == b)
            return true;
    return false;
}

static oac_value *find_root(build *b, oac_value *v, int depth);

/* Where the alias chain of bo leaves branch scope br: bo itself when it is
 * an outer value, the first outer value up its chain otherwise, NULL when
 * the chain ends inside the branch.  *updated: bo is defined inside the
 * branch and reaches an outer value (the branch updates it). */
oac_value *oac_branch_exit(const oac_aliases *al, const oac_scope *br,
                           oac_value *bo, bool *updated)
{
    *updated = false;
    if (!bo)
        return NULL;
    if (!scope_within(bo->scope, br))
        return bo;
    /* A value without a root sits on a link cycle: no exit.  Otherwise
     * the chain is acyclic, and bounded by the branch's size: every step
     * but the last stays inside it. */
    if (!oac_alias_root(al, bo))
        return NULL;
    for (oac_value *x = oac_alias_parent(al, bo); x;
         x = oac_alias_parent(al, x)) {
        if (!scope_within(x->scope, br)) {
            *updated = true;
            return x;
        }
    }
    return NULL;
}

/* Give the outputs of If node (s, i) their BRANCH parents. */
static void resolve_if(build *b, oac_scope *s, long i, int depth)
{
    oac_aliases *al = b->al;
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    for (size_t p = 0; p < np->n_output; p++) {
        oac_value *v = oac_node_output(s, i, p);
        if (v)
            b->if_state[v->id] = IF_RESOLVING;
    }
    if (depth > IF_DEPTH) {
        if (!b->rc)
            b->rc = oac_unchecked_add(b->st->out, "branches", s->name,
                                      n->display, NULL,
                                      "If nested too deeply to resolve its "
                                      "aliases");
        goto done;
    }
    oac_scope *br[2] = { oac_node_subgraph(n, oac_op_body(n->op, 0)),
                         oac_node_subgraph(n, oac_op_body(n->op, 1)) };
    if (!br[0] || !br[1])
        goto done;
    for (size_t p = 0; p < np->n_output; p++) {
        oac_value *v = oac_node_output(s, i, p);
        if (!v || p >= br[0]->n_outputs || p >= br[1]->n_outputs)
            continue;
        oac_value *exit[2], *root[2];
        bool upd[2], any = false, ok = true;
        for (int k = 0; k < 2; k++) {
            oac_value *bo = br[k]->outputs[p];
            if (bo)
                find_root(b, bo, depth + 1);
            exit[k] = oac_branch_exit(al, br[k], bo, &upd[k]);
            root[k] = exit[k] ? find_root(b, exit[k], depth + 1) : NULL;
            any |= upd[k];
            ok &= root[k] != NULL;
        }
        if (any && ok && root[0] == root[1] && exit[upd[0] ? 0 : 1] != v) {
            al->parent[dn(v)] = exit[upd[0] ? 0 : 1];
            al->edge[dn(v)] = OAC_EDGE_BRANCH;
        }
    }
done:
    for (size_t p = 0; p < np->n_output; p++) {
        oac_value *v = oac_node_output(s, i, p);
        if (v)
            b->if_state[v->id] = IF_NONE;
    }
}

/* The root of v (memoised, path-compressed); NULL on a link cycle. */
static oac_value *find_root(build *b, oac_value *v, int depth)
{
    oac_aliases *al = b->al;
    if (al->root[dn(v)] || b->cycle[v->id])
        return al->root[dn(v)];
    uint32_t stamp = ++b->next_stamp;
    oac_value *cur = v, *r = NULL;
    bool cyc = false;
    for (;;) {
        if (al->root[dn(cur)]) {
            r = al->root[dn(cur)];
            break;
        }
        if (b->cycle[cur->id]) {
            cyc = true;
            break;
        }
        if (b->if_state[cur->id] == IF_PENDING)
            resolve_if(b, cur->scope, cur->producer, depth + 1);
        else if (b->if_state[cur->id] == IF_RESOLVING) {
            /* Reached back into an If being resolved: a cycle. */
            cyc = true;
            break;
        }
        if (b->stamp[cur->id] == stamp) {
            cyc = true;
            break;
        }
        b->stamp[cur->id] = stamp;
        oac_value *p = al->parent[dn(cur)];
        if (!p) {
            r = cur;
            break;
        }
        cur = p;
    }
    /* Compress: everything walked gets r (or the cycle mark). */
    for (oac_value *x = v; x; x = al->parent[dn(x)]) {
        if (al->root[dn(x)] || b->cycle[x->id])
            break;
        if (cyc)
            b->cycle[x->id] = 1;
        else
            al->root[dn(x)] = r;
        if (x == r)
            break;
    }
    return cyc ? NULL : r;
}

/* The input of function f that output p's body updates in place: the
 * chain of must-alias ports (the ports pass's alias_in) from the output
 * back to a function input, or -1. */
static long body_input(const oac_scope *f, size_t p)
{
    oac_value *v = p < f->n_outputs ? f->outputs[p] : NULL;
    for (size_t step = 0; v && step <= f->n_nodes; step++) {
        if (v->scope != f)
            return -1;
        if (v->kind == OAC_VAL_INPUT)
            return v->input_index;
        v = oac_value_aliased_input(v);
    }
    return -1;
}

/* No cascades (issue 10, item 4): a call inherits its function's
 * alias_of (contract 3), but where that alias_of names another input
 * than the one the body updates (alias-mismatch in the function), the
 * call follows the body, so what only follows from that finding (the
 * caller's alias_of, its root, its shapes) is not reported again.  (A
 * missing alias_of keeps the contract's reading: the call aliases
 * nothing.) */
static void calls_follow_bodies(oac_graphs *g)
{
    for (size_t si = 0; si < g->n_scopes; si++) {
        oac_scope *s = g->scopes[si];
        for (size_t i = 0; i < s->n_nodes; i++) {
            oac_node *n = &s->nodes[i];
            const oac_scope *f = oac_node_x(n)->callee;
            const Onnx__NodeProto *np = n->proto;
            if (!f || !n->alias_in || np->n_output_alias)
                continue;       /* an explicit output_alias rules (ports) */
            for (size_t p = 0; p < np->n_output && p < f->n_outputs; p++) {
                const Onnx__ValueInfoProto *vi = f->output_vis[p];
                if (n->alias_in[p] < 0 || !vi || empty(vi->alias_of))
                    continue;
                long in = body_input(f, p);
                if (in < 0 || (size_t)in >= np->n_input || empty(np->input[in]) ||
                    empty(np->output[p]) || !strcmp(np->input[in], np->output[p]))
                    continue;
                n->alias_in[p] = (int)in;
            }
        }
    }
}

static int link_edges(build *b)
{
    oac_graphs *g = b->st->graphs;
    oac_aliases *al = b->al;
    for (size_t si = 0; si < g->n_scopes; si++) {
        oac_scope *s = g->scopes[si];
        for (size_t i = 0; i < s->n_nodes; i++) {
            oac_node *n = &s->nodes[i];
            const Onnx__NodeProto *np = n->proto;
            bool is_if = n->op && n->op->alias == OAC_AL_BRANCH;
            /* alias_in is -1 throughout unless the node has output_alias
             * entries or calls a function (check/alias_rules.c). */
            if (!is_if && !n->declares_alias && !oac_node_x(n)->callee)
                continue;
            for (size_t p = 0; p < n->n_out; p++) {
                oac_value *v = oac_node_output(s, (long)i, p);
                if (!v)
                    continue;
                int in = n->alias_in ? n->alias_in[p] : -1;
                oac_value *u = in >= 0 ? oac_node_input(s, (long)i, (size_t)in)
                                       : NULL;
                if (u && u != v) {
                    al->parent[dn(v)] = u;
                    al->edge[dn(v)] = OAC_EDGE_PORT;
                    set_bit(b->linked, v->id);
                } else if (is_if && in < 0) {
                    b->if_state[v->id] = IF_PENDING;
                    set_bit(b->linked, v->id);
                }
                /* Carried values: body input pairs with the node input. */
                if (!u || !n->op || in < 0 ||
                    (n->op->alias != OAC_AL_LOOP && n->op->alias != OAC_AL_SCAN))
                    continue;
                oac_scope *body = oac_node_subgraph(n, oac_op_body(n->op, 0));
                if (!body)
                    continue;
                long num_scan = 0;
                if (n->op->alias == OAC_AL_SCAN) {
                    num_scan = -1;
                    for (size_t a = 0; a < np->n_attribute; a++)
                        if (np->attribute[a] && np->attribute[a]->name &&
                            strcmp(np->attribute[a]->name, "num_scan_inputs") == 0)
                            num_scan = (long)np->attribute[a]->i;
                }
                if (oac_op_alias_input(n->op, p, np->n_input, num_scan) != in)
                    continue;
                oac_value *bi = (size_t)in < body->n_inputs ? body->inputs[in]
                                                            : NULL;
                if (bi && bi != u && !al->parent[dn(bi)]) {
                    al->parent[dn(bi)] = u;
                    al->edge[dn(bi)] = OAC_EDGE_CARRIED;
                    set_bit(b->linked, bi->id);
                }
            }
        }
    }
    return OAC_OK;
}

/* Children of one value in execution order: by the schedule's place of
 * the node of the parent's scope that writes them (a write inside a subgraph belongs to
 * its enclosing node), values inside a subgraph before the enclosing
 * node's own outputs (a branch's update happens before the If returns),
 * then by id.  This makes the preorder of make_classes a topological
 * order of the members. */
typedef struct child_key {
    long node;
    int outer;
    size_t id;
    oac_value *v;
} child_key;

static int cmp_child(const void *x, const void *y)
{
    const child_key *a = x, *b = y;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    if (a->outer != b->outer)
        return a->outer - b->outer;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int order_children(build *b)
{
    oac_aliases *al = b->al;
    size_t nf = al->n_forest, total = al->child_start[nf + 1];
    child_key *keys = NULL;
    for (size_t f = 1; f <= nf; f++) {
        size_t lo = al->child_start[f], hi = al->child_start[f + 1];
        if (hi - lo < 2)
            continue;
        if (!keys && !(keys = oac_calloc(b->st->ctx, total, sizeof *keys)))
            return OAC_ENOMEM;
        const oac_scope *ps = al->value[f]->scope;
        for (size_t c = lo; c < hi; c++) {
            oac_value *v = al->children[c];
            oac_scope *ws = NULL;
            long wn = -1;
            oac_alias_writer(al, v, &ws, &wn);
            while (ws && ws != ps) {
                wn = ws->owner_node;
                ws = ws->parent;
            }
            /* The writer's place in the schedule (check/order.h). */
            long at = ws ? (long)oac_sched_pos(oac_sched_scope(b->st->schedule, ps->index),
                                               (size_t)wn) : LONG_MAX;
            keys[c - lo] = (child_key){ at,
                                        v->scope == ps && oac_alias_edge(al, v) !=
                                            OAC_EDGE_CARRIED,
                                        v->id, v };
        }
        qsort(keys, hi - lo, sizeof *keys, cmp_child);
        for (size_t c = lo; c < hi; c++)
            al->children[c] = keys[c - lo].v;
    }
    oac_dealloc(b->st->ctx, keys);
    return OAC_OK;
}

/* Number the values some edge touches (check/alias.h), in id order, and move
 * parent, edge and root from by-id + 1 to by-number arrays.  Every later
 * walk (classes, findings, hazards) goes over the numbers, so a model's
 * many values that alias nothing cost nothing more. */
static int compact(build *b)
{
    oac_ctx *ctx = b->st->ctx;
    oac_graphs *g = b->st->graphs;
    oac_aliases *al = b->al;
    size_t nv = al->n_values, nf = 0;
    if (nv >= UINT32_MAX)
        return oac_err(ctx, OAC_ENOMEM, "graph too large (%zu values)", nv);
    uint32_t *fid = oac_calloc(ctx, nv ? nv : 1, sizeof *fid);
    if (!fid)
        return OAC_ENOMEM;
    /* Values with a parent are linked ones; they and their parents are
     * the touched ones, numbered in id order (bits of `touched`). */
    size_t nw = nv / 64 + 1, w = 0, id;
    uint64_t *touched = oac_calloc(ctx, nw, sizeof *touched);
    if (!touched) {
        oac_dealloc(ctx, fid);
        return OAC_ENOMEM;
    }
    for (uint64_t m = b->linked[0]; next_bit(b->linked, nw, &w, &m, &id);) {
        oac_value *p = al->parent[id + 1];
        if (p) {
            set_bit(touched, id);
            set_bit(touched, p->id);
        }
    }
    w = 0;
    for (uint64_t m = touched[0]; next_bit(touched, nw, &w, &m, &id);)
        fid[id] = (uint32_t)++nf;
    oac_value **value = oac_calloc(ctx, nf + 1, sizeof *value);
    oac_value **parent = oac_calloc(ctx, nf + 1, sizeof *parent);
    oac_value **root = oac_calloc(ctx, nf + 1, sizeof *root);
    uint8_t *edge = oac_calloc(ctx, nf + 1, sizeof *edge);
    if (!value || !parent || !root || !edge) {
        oac_dealloc(ctx, fid);
        oac_dealloc(ctx, touched);
        oac_dealloc(ctx, value);
        oac_dealloc(ctx, parent);
        oac_dealloc(ctx, root);
        oac_dealloc(ctx, edge);
        return OAC_ENOMEM;
    }
    w = 0;
    for (uint64_t m = touched[0]; next_bit(touched, nw, &w, &m, &id);) {
        size_t f = fid[id];
        value[f] = oac_graphs_value(g, id);
        parent[f] = al->parent[id + 1];
        edge[f] = al->edge[id + 1];
        root[f] = al->root[id + 1];
    }
    oac_dealloc(ctx, touched);
    oac_dealloc(ctx, al->parent);
    oac_dealloc(ctx, al->edge);
    oac_dealloc(ctx, al->root);
    al->fid = fid;
    al->n_forest = nf;
    al->value = value;
    al->parent = parent;
    al->edge = edge;
    al->root = root;
    return OAC_OK;
}

/* Children lists, preorder intervals and classes, over the numbers. */
static int make_classes(build *b)
{
    oac_check_state *st = b->st;
    oac_ctx *ctx = st->ctx;
    oac_aliases *al = b->al;
    size_t nf = al->n_forest;
    int rc = OAC_OK;
    size_t *stack = NULL, *pos = NULL;

    al->child_start = oac_calloc(ctx, nf + 2, sizeof *al->child_start);
    al->children = oac_calloc(ctx, nf ? nf : 1, sizeof *al->children);
    al->tin = oac_calloc(ctx, nf + 1, sizeof *al->tin);
    al->tout = oac_calloc(ctx, nf + 1, sizeof *al->tout);
    al->class_of = oac_alloc(ctx, (nf + 1) * sizeof *al->class_of);
    al->member_block = oac_calloc(ctx, nf ? nf : 1, sizeof *al->member_block);
    stack = oac_calloc(ctx, nf + 1, sizeof *stack);
    pos = oac_calloc(ctx, nf + 1, sizeof *pos);
    if (!al->child_start || !al->children || !al->tin || !al->tout ||
        !al->class_of || !al->member_block || !stack || !pos) {
        rc = OAC_ENOMEM;
        goto done;
    }
    for (size_t f = 0; f <= nf; f++)
        al->class_of[f] = -1;
    /* Counting sort by parent number keeps children in id order. */
    for (size_t f = 1; f <= nf; f++) {
        oac_value *p = al->parent[f];
        if (p && al->root[f])
            al->child_start[al->fid[p->id] + 1]++;
    }
    for (size_t f = 1; f <= nf; f++)
        al->child_start[f + 1] += al->child_start[f];
    for (size_t f = 1; f <= nf; f++)
        pos[f] = al->child_start[f];
    for (size_t f = 1; f <= nf; f++) {
        oac_value *p = al->parent[f];
        if (p && al->root[f])
            al->children[pos[al->fid[p->id]]++] = al->value[f];
    }
    if ((rc = order_children(b)))
        goto done;

    /* Roots with children, in id order, make the classes. */
    size_t ncls = 0;
    for (size_t f = 1; f <= nf; f++)
        if (!al->parent[f] && al->child_start[f + 1] > al->child_start[f])
            ncls++;
    al->classes = oac_calloc(ctx, ncls ? ncls : 1, sizeof *al->classes);
    st->out->classes = oac_calloc(ctx, ncls ? ncls : 1,
                                  sizeof *st->out->classes);
    if (!al->classes || !st->out->classes) {
        rc = OAC_ENOMEM;
        goto done;
    }
    /* A class's members are the numbers its DFS visits, consecutive in
     * preorder: member_block[tin] is the value. */
    size_t clock = 0;
    for (size_t f = 1; f <= nf; f++) {
        if (al->parent[f] || al->child_start[f + 1] == al->child_start[f])
            continue;
        oac_value *root = al->value[f];
        oac_aclass *c = &al->classes[al->n_classes];
        c->index = al->n_classes;
        c->root = root;
        c->scope = root->scope;
        c->read_write = oac_value_root_kind(root) == OAC_ROOT_READ_WRITE_INPUT &&
                        root->scope->kind == OAC_SCOPE_MAIN;
        al->n_classes++;
        /* Iterative preorder DFS: members in topological order. */
        size_t sp = 0, start = clock;
        stack[sp++] = f;
        pos[f] = al->child_start[f];
        al->member_block[clock] = root;
        al->tin[f] = clock++;
        al->class_of[f] = (long)c->index;
        while (sp) {
            size_t top = stack[sp - 1];
            if (pos[top] < al->child_start[top + 1]) {
                oac_value *ch = al->children[pos[top]++];
                size_t cf = al->fid[ch->id];
                pos[cf] = al->child_start[cf];
                al->member_block[clock] = ch;
                al->tin[cf] = clock++;
                al->class_of[cf] = (long)c->index;
                stack[sp++] = cf;
            } else {
                al->tout[top] = clock;
                sp--;
            }
        }
        c->members = al->member_block + start;
        c->n_members = clock - start;
    }
    /* The public classes (shapes completes types and sizes).  Their
     * strings live in the analysis's arena, so one copy serves the root
     * and members[0], and the classes of one graph share its name. */
    for (size_t k = 0; k < al->n_classes; k++) {
        oac_aclass *c = &al->classes[k];
        oac_alias_class *o = &st->out->classes[k];
        o->rank = -1;
        o->read_write = c->read_write;
        o->root = oac_analysis_strdup(st->out, c->root->name);
        o->graph = k && al->classes[k - 1].scope == c->scope
            ? st->out->classes[k - 1].graph
            : oac_analysis_strdup(st->out, c->scope->name);
        o->members = oac_analysis_calloc(st->out, c->n_members,
                                         sizeof *o->members);
        st->out->n_classes = k + 1;
        if (!o->root || !o->graph || !o->members) {
            rc = OAC_ENOMEM;
            goto done;
        }
        for (size_t m = 0; m < c->n_members; m++) {
            if (!(o->members[m] = c->members[m] == c->root ? o->root
                    : oac_analysis_strdup(st->out, c->members[m]->name))) {
                rc = OAC_ENOMEM;
                goto done;
            }
            o->n_members = m + 1;
        }
    }
done:
    oac_dealloc(ctx, stack);
    oac_dealloc(ctx, pos);
    return rc;
}

/* ---- findings ------------------------------------------------------- */

/* A where for value v: its producer node when it has one (location of
 * the declaration vinfo loc when given), else the declaration. */
static oac_where where_value(const oac_scope *s, const oac_value *v,
                             const char *name, const char *loc)
{
    oac_where w = { .graph = s->name, .value = name, .location = loc };
    const oac_node *n = v ? oac_scope_node(v->scope, v->producer) : NULL;
    if (n && v->scope == s) {
        w.node = n->display;
        w.op_type = n->proto->op_type;
    }
    return w;
}

/* where_value for v, into *w. */
static const oac_where *at(oac_where *w, const oac_scope *s,
                           const oac_value *v, const char *loc)
{
    *w = where_value(s, v, v->name, loc);
    return w;
}

static const char *node_desc(const oac_value *v, char *buf, size_t len)
{
    const oac_node *n = v ? oac_scope_node(v->scope, v->producer) : NULL;
    if (n)
        snprintf(buf, len, "node '%s' (%s)", n->display,
                 n->proto->op_type ? n->proto->op_type : "");
    else
        snprintf(buf, len, "graph '%s'", v ? v->scope->name : "");
    return buf;
}

static bool is_boundary_output(const oac_value *v)
{
    return v && v->output_index >= 0 &&
           (v->scope->kind == OAC_SCOPE_MAIN ||
            v->scope->kind == OAC_SCOPE_FUNCTION);
}

/* For an If output v without a parent: 1 when some branch updates a
 * value in place (so the branches disagree: branch-mismatch, reported by
 * check/branches.c), 2 when no branch updates anything but every branch
 * returns a value of the class of `a` (alias_of naming it is then
 * satisfied: contract, "valid when every branch returns a value of that
 * root"), else 0. */
static int if_branch_state(build *b, const oac_value *v, const oac_value *a)
{
    const oac_node *n = oac_scope_node(v->scope, v->producer);
    if (!n || !n->op || n->op->alias != OAC_AL_BRANCH)
        return 0;
    oac_scope *br[2] = { oac_node_subgraph(n, oac_op_body(n->op, 0)),
                         oac_node_subgraph(n, oac_op_body(n->op, 1)) };
    bool any = false, same = a != NULL;
    for (int k = 0; k < 2; k++) {
        bool upd = false;
        oac_value *exit = NULL;
        if (br[k] && (size_t)v->port < br[k]->n_outputs)
            exit = oac_branch_exit(b->al, br[k], br[k]->outputs[v->port], &upd);
        any |= upd;
        same &= exit && oac_alias_reaches(b->al, a, exit);
    }
    return any ? 1 : same ? 2 : 0;
}

static int check_alias_of(build *b, oac_scope *s, const oac_vinfo *e,
                          uint8_t *has_alias_of, oac_value **alias_target)
{
    oac_check_state *st = b->st;
    oac_aliases *al = b->al;
    const Onnx__ValueInfoProto *vi = e->vi;
    oac_value *v = e->value;
    const char *an = vi->alias_of;
    char d[LOC_MAX];
    if (!v)
        return OAC_OK;          /* declares a name nothing defines */
    has_alias_of[v->id] = 1;
    oac_where w;   /* filled (at) only for a finding */
    oac_value *a = oac_scope_lookup(s, an, NULL);
    if (!a)
        return oac_scope_diag(st, s, OAC_ALIAS_UNKNOWN_VALUE, at(&w, s, v, e->loc),
            "'%s' of graph '%s' has alias_of '%s', which names no value in "
            "scope", v->name, s->name, an);
    if (!alias_target[v->id]) {
        alias_target[v->id] = a;
        set_bit(b->targeted, v->id);
    }
    if (a == v)
        return oac_scope_diag(st, s, OAC_ALIAS_CYCLE, at(&w, s, v, e->loc),
            "'%s' of graph '%s' has alias_of naming itself", v->name,
            s->name);
    if (v->kind != OAC_VAL_NODE_OUTPUT)
        return oac_scope_diag(st, s, OAC_ALIAS_UNBACKED, at(&w, s, v, e->loc),
            "'%s' is %s of graph '%s' but has alias_of '%s': only an output "
            "of a node that declares output_alias can alias another value",
            v->name, v->kind == OAC_VAL_INPUT ? "an input" : "an initializer",
            s->name, an);
    if (b->cycle[v->id])
        return OAC_OK;          /* reported as a link cycle */
    oac_value *p = oac_alias_parent(al, v);
    if (!p) {
        if (if_branch_state(b, v, a))
            return OAC_OK;      /* branch-mismatch (check/branches.c), or a
                                   passthrough of a's class */
        if (oac_node_alias_in(v->scope, v->producer, (size_t)v->port) ==
            OAC_ALIAS_REFUSED)
            return OAC_OK;      /* its output_alias is alias-unsupported */
        return oac_scope_diag(st, s, OAC_ALIAS_UNBACKED, at(&w, s, v, e->loc),
            "%s of graph '%s': '%s' has alias_of '%s' but its producer "
            "declares no output_alias for that output, so it owns its "
            "storage", node_desc(v, d, sizeof d), s->name, v->name, an);
    }
    oac_value *r = oac_alias_root(al, v);
    if (is_boundary_output(v)) {
        const char *kind = s->kind == OAC_SCOPE_FUNCTION ? "function" : "graph";
        if (a != r && r && r->kind == OAC_VAL_NODE_OUTPUT)
            /* The chain stops at a node output (a fresh buffer): naming
             * that root would silence the finding, not share the cache. */
            return oac_scope_diag(st, s, OAC_ALIAS_MISMATCH, at(&w, s, v, e->loc),
                "%s: output '%s' of %s '%s' has alias_of '%s', but its alias chain "
                "stops at '%s', output %d of node %s, which declares no output_alias "
                "for it (a new buffer), so it reaches no input the caller binds; "
                "declare output_alias on %s for that output so the chain reaches "
                "'%s'", node_desc(v, d, sizeof d), v->name, kind, s->name, an,
                r->name, (int)r->port, r->scope->nodes[r->producer].display,
                r->scope->nodes[r->producer].display, an);
        if (a != r)
            return oac_scope_diag(st, s, OAC_ALIAS_MISMATCH, at(&w, s, v, e->loc),
                "%s: output '%s' of %s '%s' has alias_of '%s', but at the "
                "boundary it must name the alias root '%s' (the value the "
                "caller binds)", node_desc(v, d, sizeof d), v->name, kind,
                s->name, an, r ? r->name : "?");
        return OAC_OK;
    }
    if (!oac_alias_reaches(al, a, p))
        return oac_scope_diag(st, s, OAC_ALIAS_MISMATCH, at(&w, s, v, e->loc),
            "%s: '%s' alias_of names '%s' but %s resolves to '%s'",
            node_desc(v, d, sizeof d), v->name, an,
            oac_alias_edge(al, v) == OAC_EDGE_BRANCH ? "its branches"
                                               : "output_alias",
            p->name);
    return OAC_OK;
}

/* Cycles of alias_of declarations (each value's first target): a
 * functional graph, walked once with three colours. */
static int alias_of_cycles(build *b, oac_value **target)
{
    oac_check_state *st = b->st;
    oac_graphs *g = st->graphs;
    size_t nv = b->al->n_values;
    uint8_t *col = oac_calloc(st->ctx, nv ? nv : 1, 1);
    int rc = OAC_OK;
    if (!col)
        return OAC_ENOMEM;
    size_t w = 0, id;
    for (uint64_t m = b->targeted[0];
         !rc && next_bit(b->targeted, nv / 64 + 1, &w, &m, &id);) {
        /* A walk from a value without alias_of ends at once: only values
         * with one start walks (a later walk passes the others). */
        if (col[id])
            continue;
        oac_value *x = oac_graphs_value(g, id);
        while (x && !col[x->id]) {
            col[x->id] = 1;
            x = target[x->id];
        }
        if (x && col[x->id] == 1 && target[x->id] != x) {
            /* x is on a new cycle: report it once, at x. */
            oac_scope *s = x->scope;
            const char *loc = oac_value_vi_loc(x);
            if (!loc)
                loc = s->loc;
            for (size_t k = 0; k < s->n_vinfos; k++)
                if (s->vinfos[k].value == x && !empty(s->vinfos[k].vi->alias_of)) {
                    loc = s->vinfos[k].loc;
                    break;
                }
            oac_where w = where_value(s, x, x->name, loc);
            rc = oac_scope_diag(st, s, OAC_ALIAS_CYCLE, &w,
                "alias_of links of graph '%s' form a cycle through '%s' "
                "(alias_of '%s')", s->name, x->name, target[x->id]->name);
        }
        for (oac_value *y = oac_graphs_value(g, id); y && col[y->id] == 1;
             y = target[y->id])
            col[y->id] = 2;
    }
    oac_dealloc(st->ctx, col);
    return rc;
}

static int check_roots(build *b)
{
    oac_check_state *st = b->st;
    oac_aliases *al = b->al;
    int rc = OAC_OK;
    char loc[LOC_MAX];
    for (size_t k = 0; k < al->n_classes && !rc; k++) {
        oac_aclass *c = &al->classes[k];
        oac_value *r = c->root;
        oac_root_kind rk = oac_value_root_kind(r);
        /* Inputs of subgraphs and functions are bound by their enclosing
         * node or caller, whose own aliases are checked where they are. */
        if (rk == OAC_ROOT_TEMPORARY || rk == OAC_ROOT_READ_WRITE_INPUT)
            continue;
        if (rk == OAC_ROOT_READ_ONLY_INPUT && r->scope->kind != OAC_SCOPE_MAIN)
            continue;
        oac_value *first = c->n_members > 1 ? c->members[1] : NULL;
        oac_scope *ws = NULL;
        long wn = -1;
        oac_alias_writer(al, first, &ws, &wn);
        oac_node *wnode = ws ? oac_scope_node(ws, wn) : NULL;
        oac_scope *s = r->scope;
        oac_where w = { .graph = s->name, .value = r->name };
        if (wnode) {
            w.node = wnode->display;
            w.op_type = wnode->proto->op_type;
        }
        if (rk == OAC_ROOT_CONSTANT) {
            w.location = oac_node_loc(loc, sizeof loc, s, r->producer, NULL);
        } else if (oac_value_is_initializer(r) && r->kind == OAC_VAL_INITIALIZER) {
            snprintf(loc, sizeof loc, "%s/initializer/%ld", s->loc,
                     (long)r->init_index);
            w.location = loc;
        } else {
            w.location = oac_value_vi_loc(r);
            if (!w.location)
                w.location = s->loc;
        }
        static const char *const what[] = {
            "a READ_WRITE graph input", "a READ_ONLY graph input",
            "an initializer", "a constant", "a temporary" };
        const char *extra = rk == OAC_ROOT_INITIALIZER && r->kind == OAC_VAL_INPUT
            ? " (a graph input with an initializer default)" : "";
        /* The fix, where it is mechanical (issue 10, item 4). */
        char fix[LOC_MAX];
        if (rk == OAC_ROOT_READ_ONLY_INPUT)
            snprintf(fix, sizeof fix, "set access = READ_WRITE on '%s'", r->name);
        else if (rk == OAC_ROOT_INITIALIZER && r->kind == OAC_VAL_INPUT)
            snprintf(fix, sizeof fix, "remove the initializer '%s' and set "
                     "access = READ_WRITE on the graph input", r->name);
        else if (rk == OAC_ROOT_INITIALIZER)
            snprintf(fix, sizeof fix, "make '%s' a graph input with access = "
                     "READ_WRITE instead of an initializer", r->name);
        else
            snprintf(fix, sizeof fix, "update a graph input with access = "
                     "READ_WRITE instead of the Constant's output '%s'",
                     r->name);
        rc = oac_scope_diag(st, s, OAC_ALIAS_ROOT_IMMUTABLE, &w,
            "'%s' of graph '%s' roots an alias class updated in place by "
            "node '%s' (%s), but it is %s%s: %s", r->name, s->name,
            wnode ? wnode->display : "?",
            wnode && wnode->proto->op_type ? wnode->proto->op_type : "",
            what[rk], extra, fix);
    }
    return rc;
}

static int check_boundaries(build *b, const uint8_t *has_alias_of)
{
    oac_check_state *st = b->st;
    oac_graphs *g = st->graphs;
    oac_aliases *al = b->al;
    int rc = OAC_OK;
    char loc[LOC_MAX];
    for (size_t si = 0; si < g->n_scopes && !rc; si++) {
        oac_scope *s = g->scopes[si];
        if (s->kind == OAC_SCOPE_SUBGRAPH)
            continue;
        for (size_t k = 0; k < s->n_outputs && !rc; k++) {
            oac_value *v = s->outputs[k];
            if (!v || !oac_alias_parent(al, v) || has_alias_of[v->id])
                continue;
            oac_value *r = oac_alias_root(al, v);
            if (!r || r->scope != s || r->kind != OAC_VAL_INPUT)
                continue;
            const char *l = s->output_vi_locs[k];
            if (!l) {
                snprintf(loc, sizeof loc, "%s/output/%zu", s->loc, k);
                l = loc;
            }
            oac_where w = where_value(s, v, v->name, l);
            char d[LOC_MAX];
            rc = oac_scope_diag(st, s, OAC_ALIAS_MISSING_BOUNDARY, &w,
                "%s: output '%s' of %s '%s' must-aliases input '%s' but "
                "declares no alias_of (set alias_of = '%s'%s)",
                node_desc(v, d, sizeof d), v->name,
                s->kind == OAC_SCOPE_FUNCTION ? "function" : "graph",
                s->name, r->name, r->name,
                s->kind == OAC_SCOPE_FUNCTION ? " in FunctionProto.value_info"
                                              : "");
        }
    }
    return rc;
}

int oac_pass_classes(oac_check_state *st)
{
    oac_ctx *ctx = st->ctx;
    oac_graphs *g = st->graphs;
    size_t nv = g->n_values;
    int rc = OAC_OK;
    uint8_t *has_alias_of = NULL;
    oac_value **target = NULL;
    build b = { .st = st };

    oac_aliases *al = oac_calloc(ctx, 1, sizeof *al);
    if (!al)
        return OAC_ENOMEM;
    st->aliases = al;
    al->ctx = ctx;
    al->n_values = nv;
    size_t n1 = nv ? nv : 1;
    /* By id + 1 until compact() (check/alias.h). */
    al->parent = oac_calloc(ctx, nv + 1, sizeof *al->parent);
    al->edge = oac_calloc(ctx, nv + 1, 1);
    al->root = oac_calloc(ctx, nv + 1, sizeof *al->root);
    b.al = al;
    b.if_state = oac_calloc(ctx, n1, 1);
    b.stamp = oac_calloc(ctx, n1, sizeof *b.stamp);
    b.cycle = oac_calloc(ctx, n1, 1);
    b.linked = oac_calloc(ctx, nv / 64 + 1, sizeof *b.linked);
    b.targeted = oac_calloc(ctx, nv / 64 + 1, sizeof *b.targeted);
    has_alias_of = oac_calloc(ctx, n1, 1);
    target = oac_calloc(ctx, n1, sizeof *target);
    if (!al->parent || !al->edge || !al->root || !b.if_state || !b.stamp ||
        !b.cycle || !b.linked || !b.targeted || !has_alias_of || !target) {
        rc = OAC_ENOMEM;
        goto done;
    }

    calls_follow_bodies(g);
    if ((rc = link_edges(&b)))
        goto done;
    /* Roots of the linked values, in id order (which If resolves first,
     * and how deep, follows it).  Any other value is its own root, which
     * a walk reaching it finds and records (it has no parent); values no
     * walk reaches are in no class and get no number (compact). */
    size_t lw = 0, lid;
    for (uint64_t m = b.linked[0];
         next_bit(b.linked, nv / 64 + 1, &lw, &m, &lid);)
        find_root(&b, oac_graphs_value(g, lid), 0);
    if ((rc = b.rc))
        goto done;
    if ((rc = compact(&b)) || (rc = make_classes(&b)))
        goto done;

    /* Link cycles (cyclic graphs only): report each value once where its
     * producer declares the link.  A value on a cycle has a parent, so a
     * number. */
    for (size_t f = 1; f <= al->n_forest && !rc; f++) {
        oac_value *v = al->value[f];
        if (!b.cycle[v->id] || !al->parent[f])
            continue;
        char loc[LOC_MAX];
        oac_where w = oac_where_node(v->scope, v->producer, v->name, NULL,
                                     loc, sizeof loc);
        rc = oac_scope_diag(st, v->scope, OAC_ALIAS_CYCLE, &w,
            "'%s' of graph '%s' must-aliases '%s', whose alias chain leads "
            "back to '%s': the links form a cycle", v->name, v->scope->name,
            al->parent[f]->name, v->name);
    }
    for (size_t si = 0; si < g->n_scopes && !rc; si++) {
        oac_scope *s = g->scopes[si];
        for (size_t k = 0; k < s->n_vinfos && !rc; k++)
            if (s->vinfos[k].vi && !empty(s->vinfos[k].vi->alias_of))
                rc = check_alias_of(&b, s, &s->vinfos[k], has_alias_of,
                                    target);
    }
    if (!rc)
        rc = alias_of_cycles(&b, target);
    if (!rc)
        rc = check_boundaries(&b, has_alias_of);
    if (!rc)
        rc = check_roots(&b);
done:
    oac_dealloc(ctx, b.if_state);
    oac_dealloc(ctx, b.stamp);
    oac_dealloc(ctx, b.cycle);
    oac_dealloc(ctx, b.linked);
    oac_dealloc(ctx, b.targeted);
    oac_dealloc(ctx, has_alias_of);
    oac_dealloc(ctx, target);
    return rc;
}

/* ---- completing a class: its types (check/alias.h) ----------------- */

int oac_class_complete(oac_analysis *a, size_t k, const oac_shapes *sh,
                       const oac_vshape *m)
{
    oac_alias_class *out = &a->classes[k];
    out->elem_type = m->elem_type;
    out->rank = m->rank;
    out->bytes.known = false;
    out->bytes.value = 0;
    if (m->rank < 0)
        return OAC_OK;
    /* In the analysis's arena (check/checker.h), released with it. */
    out->dims = oac_analysis_calloc(a, m->rank ? (size_t)m->rank : 1,
                                    sizeof *out->dims);
    out->dim_params = oac_analysis_calloc(a, m->rank ? (size_t)m->rank : 1,
                                          sizeof *out->dim_params);
    if (!out->dims || !out->dim_params)
        return OAC_ENOMEM;
    for (int32_t d = 0; d < m->rank; d++) {
        out->dims[d] = oac_shapes_dim(sh, m->dims[d]);
        const char *nm = oac_shapes_dim_name(sh, m->dims[d]);
        if (nm && !(out->dim_params[d] = oac_analysis_strdup(a, nm)))
            return OAC_ENOMEM;
    }
    uint64_t b;
    if (m->kind == OAC_VK_TENSOR && oac_shapes_bytes(sh, m, &b)) {
        out->bytes.known = true;
        out->bytes.value = b;
    }
    return OAC_OK;
}

/* check/hazards.c: reads of stale names (pass 6, alias-hazard).
 *
 * Owns alias-hazard.  Contract: section 3 and "Details the rules rely on":
 * once node W updates value u in place (u's storage now holds W's
 * output), u is a stale name.  It is a hazard when
 *  (a) a node R other than W reads u and no data-dependency path leads
 *      from R to W (file order is not enough: runtimes reorder);
 *      Shape and Size read no storage and never count;
 *  (b) u is updated in place by two different nodes (written twice);
 *  (c) u is returned as an output of the graph that updates it.
 * A read or write of an outer name inside a subgraph belongs to the
 * enclosing node of u's scope (check/graph.h invariant 4), and writes through
 * If outputs and Loop/Scan carried values belong to that node too; within
 * the subgraph that writes an outer name, its other readers there must be
 * ordered before the writing node as well.  The writes inside an If
 * whose branches disagree (branch-mismatch, reported by check/branches.c) are
 * not counted: a hazard that follows only from that finding is not
 * reported again (issue 10, item 4).
 *
 * Invariants:
 *  1. Only values with an in-place writer are examined, and only their
 *     candidate readers (the writer and Shape/Size excluded) cost a
 *     reachability search; valid decoders have none, so the pass is
 *     linear for them.
 *  2. A search is one backward DFS from the writer, cut at the smallest
 *     topological index among the candidates and stamped per search; all
 *     searches together are capped at SEARCH_BUDGET steps per node and
 *     edge of the model, beyond which the rule is listed as unchecked
 *     rather than guessed.
 *  3. Topological indices are the schedule's places (check/order.h, pass 2),
 *     read once per scope, on demand (nodes on a cycle come after all
 *     others).
 */
#include <stdio.h>
#include <string.h>

#include "check/alias.h"
#include "check/graph.h"
#include "ops.h"
#include "check/order.h"

#define LOC_MAX 512
#define SEARCH_BUDGET 64

typedef struct scope_order {
    size_t *topo;        /* by node; NULL until computed */
    uint32_t *mark;      /* by node: search stamp */
} scope_order;

typedef struct hz {
    oac_check_state *st;
    oac_aliases *al;
    scope_order *ord;    /* by scope index */
    uint32_t stamp;
    uint64_t budget;
    bool over_budget;
    long *stack;
    size_t cap_stack;
} hz;

/* Predecessors of node x in s: producers in s of its inputs and of the
 * outer values its subgraphs read.  Calls fn(p) for each. */
#define FOR_EACH_PRED(s, x, p, BODY)                                        \
    do {                                                                    \
        const oac_node *fe_n = &(s)->nodes[x];                              \
        for (size_t fe_k = 0; fe_k < fe_n->proto->n_input; fe_k++) {        \
            oac_value *fe_v = oac_scope_local((s), fe_n->proto->input[fe_k]); \
            if (!fe_v || fe_v->producer < 0)                                \
                continue;                                                   \
            long p = fe_v->producer;                                        \
            BODY                                                            \
        }                                                                   \
        const oac_node_ext *fe_x = oac_node_x(fe_n);                        \
        for (size_t fe_k = 0; fe_k < fe_x->n_outer_reads; fe_k++) {         \
            oac_value *fe_v = fe_x->outer_reads[fe_k];                      \
            if (fe_v->scope != (s) || fe_v->producer < 0)                   \
                continue;                                                   \
            long p = fe_v->producer;                                        \
            BODY                                                            \
        }                                                                   \
    } while (0)

static int compute_topo(hz *h, oac_scope *s)
{
    oac_ctx *ctx = h->st->ctx;
    scope_order *o = &h->ord[s->index];
    size_t n = s->n_nodes;
    const oac_scope_order *so = oac_sched_scope(h->st->schedule, s->index);
    o->topo = oac_alloc(ctx, (n ? n : 1) * sizeof *o->topo);
    o->mark = oac_calloc(ctx, n ? n : 1, sizeof *o->mark);
    if (!o->topo || !o->mark)
        return OAC_ENOMEM;
    /* The schedule's places (check/order.h): a topological order, with the
     * nodes on a cycle after all others, in file order. */
    for (size_t i = 0; i < n; i++)
        o->topo[i] = oac_sched_pos(so, i);
    return OAC_OK;
}

/* Mark every node of s with a path to w whose topological index is at
 * least lo.  Returns false when the budget ran out. */
static int mark_ancestors(hz *h, oac_scope *s, long w, size_t lo, bool *ok)
{
    scope_order *o = &h->ord[s->index];
    uint32_t stamp = ++h->stamp;
    size_t sp = 0;
    *ok = true;
    if (stamp == 0) {               /* wrapped: clear the marks */
        memset(o->mark, 0, s->n_nodes * sizeof *o->mark);
        stamp = h->stamp = 1;
    }
    if (oac_grow(h->st->ctx, (void **)&h->stack, &h->cap_stack, 1,
                 sizeof *h->stack))
        return OAC_ENOMEM;
    o->mark[w] = stamp;
    h->stack[sp++] = w;
    while (sp) {
        long x = h->stack[--sp];
        FOR_EACH_PRED(s, x, p, {
            if (h->budget == 0) {
                *ok = false;
                return OAC_OK;
            }
            h->budget--;
            if (o->mark[p] == stamp || o->topo[p] < lo)
                continue;
            o->mark[p] = stamp;
            if (oac_grow(h->st->ctx, (void **)&h->stack, &h->cap_stack,
                         sp + 1, sizeof *h->stack))
                return OAC_ENOMEM;
            h->stack[sp++] = p;
        });
    }
    return OAC_OK;
}

/* Map a writer (ws, wn) to the node of scope s that encloses it, or -1. */
static long enclosing(const oac_scope *ws, long wn, const oac_scope *s)
{
    while (ws && ws != s) {
        wn = ws->owner_node;
        ws = ws->parent;
    }
    return ws == s ? wn : -1;
}

/* Is the write of node wn of scope ws, seen from u's scope s, inside an
 * If whose branches disagree (branch-mismatch, check/branches.c)?  Its
 * consequences in the same class are not reported again. */
static bool disowned(const oac_scope *ws, long wn, const oac_scope *s)
{
    long e = enclosing(ws, wn, s);
    return ws != s && e >= 0 && s->nodes[e].ext &&
           s->nodes[e].ext->branch_mismatch;
}

static bool reads_storage(const oac_scope *s, const oac_use *u)
{
    if (u->port < 0)
        return !u->meta_only;
    return !oac_op_has(s->nodes[u->node].op, OAC_OPF_NO_STORAGE_READ);
}

/* "/input/P", the location suffix of a read through input port P, in
 * buf; "" for a read in a subgraph (port < 0). */
static const char *read_suffix(char *buf, size_t len, int port)
{
    if (port >= 0)
        snprintf(buf, len, "/input/%d", port);
    else
        buf[0] = 0;
    return buf;
}

/* w's related location: node wn of t, the in-place update into `name`
 * (ww and its buffer loc hold it), and why it is named. */
static void relate(oac_where *w, oac_where *ww, const oac_scope *t, long wn,
                   const char *name, char *loc, size_t len, const char *why)
{
    *ww = oac_where_node(t, wn, name, NULL, loc, len);
    w->related = ww;
    w->related_message = why;
}

/* (a) inside a subgraph: the outer name u is written in place by node e
 * of subgraph scope t (or by a node nested in it); other nodes of t that
 * read u must be ordered before e within t.  The outer uses of u are not
 * indexed per subgraph, so t's nodes are scanned, charged to the search
 * budget (invariant 2). */
static int inner_reads(hz *h, oac_value *u, oac_scope *t, long e,
                       const oac_value *wout, const char *rname)
{
    oac_check_state *st = h->st;
    scope_order *o = &h->ord[t->index];
    char loc[LOC_MAX];
    int rc = OAC_OK;
    uint64_t cost = t->n_nodes;
    for (size_t i = 0; i < t->n_nodes; i++)
        cost += t->nodes[i].proto->n_input +
                oac_node_x(&t->nodes[i])->n_outer_reads;
    if (h->budget < cost) {
        h->over_budget = true;
        return oac_unchecked_add(st->out, "alias-hazard", t->name,
                                 t->nodes[e].display, u->name,
                                 "reads of outer '%s' inside graph '%s' not "
                                 "examined within the search budget",
                                 u->name, t->name);
    }
    h->budget -= cost;
    /* Pass 1: is anything but e reading u here? */
    size_t lo = SIZE_MAX;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < t->n_nodes; i++) {
            if ((long)i == e)
                continue;
            const oac_node *r = &t->nodes[i];
            int port = -2;
            for (size_t p = 0; p < r->proto->n_input && port == -2; p++)
                if (r->proto->input[p][0] &&
                    !oac_op_has(r->op, OAC_OPF_NO_STORAGE_READ) &&
                    oac_scope_lookup(t, r->proto->input[p], NULL) == u)
                    port = (int)p;
            const oac_node_ext *rx = oac_node_x(r);
            for (size_t k = 0; k < rx->n_outer_reads && port == -2; k++)
                if (rx->outer_reads[k] == u)
                    port = -1;
            if (port == -2)
                continue;
            if (pass == 0) {
                if (!o->topo && (rc = compute_topo(h, t)))
                    return rc;
                if (o->topo[i] < lo)
                    lo = o->topo[i];
                continue;
            }
            if (lo < o->topo[e] && o->mark[i] == h->stamp)
                continue;       /* ordered before the write */
            char suffix[64];
            const oac_node *w = &t->nodes[e];
            oac_where wh = oac_where_node(t, (long)i, u->name,
                read_suffix(suffix, sizeof suffix, port), loc, sizeof loc);
            char wloc[LOC_MAX];
            oac_where ww;
            relate(&wh, &ww, t, e, wout ? wout->name : NULL, wloc, sizeof wloc,
                   "the in-place update the read is not ordered before");
            if ((rc = oac_scope_diag(st, t, OAC_ALIAS_HAZARD, &wh,
                    "node '%s' (%s) of graph '%s' reads outer '%s', which "
                    "node '%s' (%s) of the same graph updates in place into "
                    "'%s' (alias class '%s'), but no data dependency orders "
                    "the read before the update", r->display,
                    r->proto->op_type ? r->proto->op_type : "", t->name,
                    u->name, w->display,
                    w->proto->op_type ? w->proto->op_type : "",
                    wout ? wout->name : "?", rname)))
                return rc;
        }
        if (lo == SIZE_MAX)
            return OAC_OK;      /* no other reader */
        if (pass == 0 && lo < o->topo[e]) {
            bool ok = true;
            if ((rc = mark_ancestors(h, t, e, lo, &ok)))
                return rc;
            if (!ok) {
                h->over_budget = true;
                return oac_unchecked_add(st->out, "alias-hazard", t->name,
                                         t->nodes[e].display, u->name,
                                         "ordering of reads of '%s' not decided "
                                         "within the search budget", u->name);
            }
        }
    }
    return OAC_OK;
}

/* One value u checked by check_value, and its distinct writers (two are
 * enough), as nodes of u's scope. */
typedef struct vcheck {
    hz *h;
    oac_value *u;
    oac_value **ch;           /* the values aliasing u */
    size_t n_ch;
    const char *rname;        /* its alias class's root */
    long writers[2];
    const oac_value *wout[2];
    long mute;                /* a disowned writer: its own reads are its write */
} vcheck;

/* u's writers; a second one is a double update. */
static int find_writers(vcheck *vc)
{
    oac_check_state *st = vc->h->st;
    oac_aliases *al = vc->h->al;
    oac_value *u = vc->u;
    oac_scope *s = u->scope;
    oac_value **ch = vc->ch;
    size_t n_ch = vc->n_ch;
    const char *rname = vc->rname;
    char loc[LOC_MAX];
    int rc = OAC_OK;
    /* Distinct writers of u, as nodes of u's scope (two are enough). */
    for (size_t c = 0; c < n_ch; c++) {
        oac_value *v = ch[c];
        oac_scope *ws;
        long wn;
        if (!oac_alias_writer(al, v, &ws, &wn))
            continue;
        if (disowned(ws, wn, s)) {
            vc->mute = enclosing(ws, wn, s);
            continue;
        }
        long e = enclosing(ws, wn, s);
        if (e < 0 || e == vc->writers[0] || e == vc->writers[1])
            continue;
        if (vc->writers[0] < 0) {
            vc->writers[0] = e;
            vc->wout[0] = v;
        } else if (vc->writers[1] < 0) {
            vc->writers[1] = e;
            vc->wout[1] = v;
            oac_node *a = &s->nodes[vc->writers[0]], *b = &s->nodes[e];
            oac_where w = oac_where_node(s, e, u->name, NULL, loc, sizeof loc);
            char aloc[LOC_MAX];
            oac_where wa;
            relate(&w, &wa, s, vc->writers[0], vc->wout[0] ? vc->wout[0]->name : NULL,
                   aloc, sizeof aloc, "the first in-place update of the same name");
            if ((rc = oac_scope_diag(st, s, OAC_ALIAS_HAZARD, &w,
                    "'%s' (alias class '%s') is updated in place twice in "
                    "graph '%s': by node '%s' (%s) and by node '%s' (%s); the "
                    "second update reads a stale name", u->name, rname,
                    s->name, a->display, a->proto->op_type ? a->proto->op_type : "",
                    b->display, b->proto->op_type ? b->proto->op_type : "")))
                return rc;
        }
    }
    return OAC_OK;
}

/* fn(vc, v, ws, wn) for each value v aliasing u (vc->ch, in order) that
 * node wn of scope ws updates in place, but the writes check/branches.c
 * disowned, until one fails. */
static int each_owned_write(vcheck *vc,
                            int (*fn)(vcheck *vc, oac_value *v, oac_scope *ws, long wn))
{
    int rc = OAC_OK;
    for (size_t c = 0; c < vc->n_ch && !rc; c++) {
        oac_scope *ws;
        long wn;
        if (oac_alias_writer(vc->h->al, vc->ch[c], &ws, &wn) &&
            !disowned(ws, wn, vc->u->scope))
            rc = fn(vc, vc->ch[c], ws, wn);
    }
    return rc;
}

/* (c) returned beside its update: outputs of every scope whose nodes
 * (or whose subgraphs' nodes) write u, here v's write by node wn of ws. */
static int returned_beside(vcheck *vc, oac_value *v, oac_scope *ws, long wn)
{
    oac_check_state *st = vc->h->st;
    oac_value *u = vc->u;
    oac_scope *s = u->scope;
    char loc[LOC_MAX];
    int rc;
    /* Every scope from the writer's up to u's holds the write. */
    for (oac_scope *t = ws; t; t = t->parent) {
        long e = enclosing(ws, wn, t);
        /* In u's own scope its first output index says it; a subgraph
         * returning the outer u has it among its outputs (few). */
        size_t k0 = 0, k1 = t->n_outputs;
        if (t == s) {
            k0 = u->output_index >= 0 ? (size_t)u->output_index : k1;
            k1 = k0 < k1 ? k0 + 1 : k1;
        }
        for (size_t k = k0; k < k1 && e >= 0; k++) {
            if (t->outputs[k] != u)
                continue;
            oac_node *wnode = &t->nodes[e];
            const char *l = t->output_vi_locs[k];
            if (!l) {
                snprintf(loc, sizeof loc, "%s/output/%zu", t->loc, k);
                l = loc;
            }
            oac_where w = { .graph = t->name, .node = wnode->display,
                            .op_type = wnode->proto->op_type,
                            .value = u->name, .location = l };
            char wloc[LOC_MAX];
            oac_where ww;
            relate(&w, &ww, t, e, v->name, wloc, sizeof wloc,
                   "the in-place update that overwrites the returned value");
            if ((rc = oac_scope_diag(st, t, OAC_ALIAS_HAZARD, &w,
                    "'%s' (alias class '%s') is returned as output %zu of "
                    "graph '%s' beside its in-place update by node '%s' "
                    "(%s): it holds the updated contents, not the old",
                    u->name, vc->rname, k, t->name, wnode->display,
                    wnode->proto->op_type ? wnode->proto->op_type : "")))
                return rc;
        }
        if (t == s)
            break;
    }
    return OAC_OK;
}

/* (a) stale reads inside the subgraphs that write u: those from ws, where
 * node wn writes v, up to u's scope. */
static int inner_stale(vcheck *vc, oac_value *v, oac_scope *ws, long wn)
{
    int rc;
    for (oac_scope *t = ws; t && t != vc->u->scope; t = t->parent)
        if ((rc = inner_reads(vc->h, vc->u, t, enclosing(ws, wn, t), v, vc->rname)))
            return rc;
    return OAC_OK;
}

/* A use of u that scope_stale judges: one that reads u's storage, by a
 * node that neither writes u nor is a disowned writer. */
static bool other_read(const vcheck *vc, const oac_use *us)
{
    return us->node != vc->writers[0] && us->node != vc->writers[1] &&
           us->node != vc->mute && reads_storage(vc->u->scope, us);
}

/* (a) stale reads in u's scope of what writer k updates: the reads no
 * data dependency orders before it. */
static int scope_stale(vcheck *vc, int k)
{
    hz *h = vc->h;
    oac_check_state *st = vc->h->st;
    oac_value *u = vc->u;
    oac_scope *s = u->scope;
    const char *rname = vc->rname;
    char loc[LOC_MAX];
    int rc = OAC_OK;
    long wn = vc->writers[k];
    size_t lo = SIZE_MAX;
    bool any = false;
    for (size_t j = 0; j < u->n_uses; j++) {
        const oac_use *us = &u->uses[j];
        if (!other_read(vc, us))
            continue;
        if (!h->ord[s->index].topo && (rc = compute_topo(h, s)))
            return rc;
        size_t t = h->ord[s->index].topo[us->node];
        if (t < lo)
            lo = t;
        any = true;
    }
    if (!any)
        return OAC_OK;
    scope_order *o = &h->ord[s->index];
    bool ok = true;
    if (lo < o->topo[wn] && (rc = mark_ancestors(h, s, wn, lo, &ok)))
        return rc;
    if (!ok) {
        h->over_budget = true;
        oac_node *wnode = &s->nodes[wn];
        if ((rc = oac_unchecked_add(st->out, "alias-hazard", s->name,
                wnode->display, u->name,
                "ordering of reads of '%s' before its update not decided "
                "within the search budget", u->name)))
            return rc;
        return OAC_OK;
    }
    bool searched = lo < o->topo[wn];
    long last = -1;
    for (size_t j = 0; j < u->n_uses; j++) {
        const oac_use *us = &u->uses[j];
        if (!other_read(vc, us) || us->node == last)
            continue;
        if (searched && o->mark[us->node] == h->stamp)
            continue;       /* a path leads from the read to the write */
        last = us->node;
        oac_node *r = &s->nodes[us->node], *wnode = &s->nodes[wn];
        char suffix[64];
        oac_where w = oac_where_node(s, us->node, u->name,
            read_suffix(suffix, sizeof suffix, us->port), loc, sizeof loc);
        char wloc[LOC_MAX];
        oac_where ww;
        relate(&w, &ww, s, wn, vc->wout[k] ? vc->wout[k]->name : NULL, wloc,
               sizeof wloc, "the in-place update the read is not ordered before");
        if ((rc = oac_scope_diag(st, s, OAC_ALIAS_HAZARD, &w,
                "node '%s' (%s) of graph '%s' reads '%s'%s, which node "
                "'%s' (%s) updates in place into '%s' (alias class '%s'), "
                "but no data dependency orders the read before the update",
                r->display, r->proto->op_type ? r->proto->op_type : "",
                s->name, u->name, us->port < 0 ? " in a subgraph" : "",
                wnode->display,
                wnode->proto->op_type ? wnode->proto->op_type : "",
                vc->wout[k] ? vc->wout[k]->name : "?", rname)))
            return rc;
    }
    return OAC_OK;
}

static int check_value(hz *h, oac_value *u)
{
    const oac_value *root = oac_alias_root(h->al, u);
    vcheck vc = { .h = h, .u = u, .writers = { -1, -1 }, .mute = -1 };
    vc.ch = oac_alias_children(h->al, u, &vc.n_ch);
    vc.rname = root ? root->name : u->name;
    int rc;
    if ((rc = find_writers(&vc)))
        return rc;
    if (vc.writers[0] < 0)
        return OAC_OK;
    if ((rc = each_owned_write(&vc, returned_beside)) ||
        (rc = each_owned_write(&vc, inner_stale)))
        return rc;
    for (int k = 0; k < 2 && vc.writers[k] >= 0; k++)
        if ((rc = scope_stale(&vc, k)))
            return rc;
    return OAC_OK;
}

int oac_pass_hazards(oac_check_state *st)
{
    oac_graphs *g = st->graphs;
    oac_aliases *al = st->aliases;
    if (!al || !al->child_start)
        return OAC_OK;
    hz h = { .st = st, .al = al };
    int rc = OAC_OK;
    uint64_t size = 0;
    for (size_t si = 0; si < g->n_scopes; si++) {
        oac_scope *s = g->scopes[si];
        size += s->n_nodes;
        for (size_t v = 0; v < s->n_values; v++)
            size += s->values_block[v].n_uses;
    }
    h.budget = SEARCH_BUDGET * (size + 1024);
    h.ord = oac_calloc(st->ctx, g->n_scopes ? g->n_scopes : 1, sizeof *h.ord);
    if (!h.ord)
        return OAC_ENOMEM;
    /* Values with children, in id order (the forest's numbering). */
    for (size_t f = 1; f <= al->n_forest && !rc; f++)
        if (al->child_start[f + 1] > al->child_start[f] && al->root[f])
            rc = check_value(&h, al->value[f]);
    for (size_t si = 0; si < g->n_scopes; si++) {
        oac_dealloc(st->ctx, h.ord[si].topo);
        oac_dealloc(st->ctx, h.ord[si].mark);
    }
    oac_dealloc(st->ctx, h.ord);
    oac_dealloc(st->ctx, h.stack);
    return rc;
}

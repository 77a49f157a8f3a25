/* check/graph.c: builds the graph index of check/graph.h (pass 1, oac_pass_graph).
 *
 * Owns: scopes, values, producers, consumers, outer-name resolution, call
 * sites of local functions, locations and display names, and the helper
 * that reports a finding once per call site of a function.  Contract:
 * section 3, "Details the rules rely on" (subgraph scopes, outer names
 * belong to the enclosing node, findings inside a function are reported
 * once per call site), section 4 (locations are RFC 6901 pointers).
 *
 * Invariants (beyond check/graph.h):
 *  1. One pass over each scope defines its values, a second records uses
 *     and descends into subgraphs, so a subgraph sees every value of its
 *     enclosing scopes whatever the node order; recursion depth is
 *     bounded by OAC_MAX_DEPTH.
 *  2. While the subgraphs of node i of scope P are indexed, the only
 *     implicit uses appended to values of P are those of node i, so
 *     "the last use is (i, -1)" suffices to keep each implicit use once.
 *  3. Strings the index makes (locations, "#3") live in an arena freed
 *     with the index, not one allocation per node or value.  Node ports (in_vals, then the outputs) are resolved once,
 *     into one block per scope, so oac_node_input and oac_node_output
 *     never hash a name.
 *  4. Use lists are counted first and then laid out in one exact block
 *     per scope (uses_block): explicit reads are counted while the ports
 *     are resolved; implicit reads (port -1) arrive while the subgraphs
 *     are indexed and wait in a list per nesting depth (the scopes being
 *     built form one chain, one per depth) until their scope lays out.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/arena.h"
#include "check/graph.h"
#include "ops.h"

_Static_assert(sizeof(oac_use) == 8, "a use is 8 bytes (check/graph.h)");
_Static_assert(sizeof(void *) != 8 || (sizeof(oac_value) == 64 &&
                                       sizeof(oac_node) == 56),
               "values and nodes without padding (check/graph.h)");

/* An implicit read waiting for its scope's layout (invariant 4). */
typedef struct pending_use {
    oac_value *v;
    int32_t node;
    bool meta_only;
} pending_use;

typedef struct pending_list {
    pending_use *e;
    size_t n, cap;
} pending_list;

struct oac_graphs_priv {
    oac_graphs pub;
    oac_arena *pool;                   /* strings the index makes */
    pending_list pending[OAC_MAX_DEPTH + 1]; /* by depth of the value's scope */
};

/* ---- string pool ---------------------------------------------------- */

/* n bytes of string from the pool (unaligned: only strings live here). */
static char *pool_alloc(oac_graphs *g, size_t n)
{
    struct oac_graphs_priv *p = (struct oac_graphs_priv *)g;
    if (!p->pool && !(p->pool = oac_arena_new(g->ctx)))
        return NULL;
    return oac_arena_bytes(p->pool, n);
}

static char *pool_vprintf(oac_graphs *g, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    char *s = pool_alloc(g, (size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

static char *pool_printf(oac_graphs *g, const char *fmt, ...) OAC_PRINTF(2, 3);
static char *pool_printf(oac_graphs *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = pool_vprintf(g, fmt, ap);
    va_end(ap);
    return s;
}

/* ---- small helpers -------------------------------------------------- */

static const char *norm_domain(const char *d)
{
    return oac_domain_is_onnx(d) ? "" : d;
}

static bool empty(const char *s)
{
    return !s || !*s;
}

/* oac_scope_local, inline into the loop that resolves every input port
 * (a call cost a tenth of a lookup there). */
static inline __attribute__((always_inline)) oac_value *
scope_local(const oac_scope *s, const char *name)
{
    if (!s || empty(name))
        return NULL;
    size_t e = oac_strindex_get(&s->by_name, name);
    return e == SIZE_MAX ? NULL : &s->values_block[e];
}

oac_value *oac_scope_local(const oac_scope *s, const char *name)
{
    return scope_local(s, name);
}

oac_value *oac_scope_lookup(const oac_scope *s, const char *name, bool *outer)
{
    if (outer)
        *outer = false;
    for (const oac_scope *c = s; c; c = c->parent) {
        oac_value *v = oac_scope_local(c, name);
        if (v) {
            if (outer)
                *outer = c != s;
            return v;
        }
    }
    return NULL;
}

/* Both resolved once by build_scope (in_vals); the lookups
 * below are what they hold. */
oac_value *oac_node_input_slow(const oac_scope *s, long i, size_t port)
{
    oac_node *n = oac_scope_node(s, i);
    if (!n || port >= n->proto->n_input)
        return NULL;
    if (n->in_vals)
        return n->in_vals[port];
    return oac_scope_lookup(s, n->proto->input[port], NULL);
}

oac_value *oac_node_output_slow(const oac_scope *s, long i, size_t port)
{
    oac_node *n = oac_scope_node(s, i);
    if (!n || port >= n->proto->n_output)
        return NULL;
    if (n->in_vals)
        return n->in_vals[n->proto->n_input + port];
    oac_value *v = oac_scope_local(s, n->proto->output[port]);
    /* A name defined twice belongs to its first definition (check/graph.h,
     * invariant 2); the later port defines nothing. */
    if (!v || v->producer != i || v->port != (int)port)
        return NULL;
    return v;
}

oac_scope *oac_node_subgraph(const oac_node *n, const char *name)
{
    const oac_node_ext *x = oac_node_x(n);
    for (size_t k = 0; name && k < x->n_subgraphs; k++)
        if (x->subgraphs[k]->attr_name &&
            strcmp(x->subgraphs[k]->attr_name, name) == 0)
            return x->subgraphs[k];
    return NULL;
}

oac_scope *oac_graphs_function(const oac_graphs *g, const char *domain,
                               const char *name)
{
    if (!g || empty(name) || oac_strmap_count(&g->func_by_key) == 0)
        return NULL;
    char stack[256];
    const char *d = norm_domain(domain);
    size_t need = strlen(d) + strlen(name) + 2;
    char *key = need <= sizeof stack ? stack : oac_alloc(g->ctx, need);
    if (!key)
        return NULL;
    snprintf(key, need, "%s\x1f%s", d, name);
    oac_scope *f = oac_strmap_get(&g->func_by_key, key);
    if (key != stack)
        oac_dealloc(g->ctx, key);
    return f;
}

/* ---- building ------------------------------------------------------- */

/* An implicit read (port -1) of v by node `node` of v's scope, kept once
 * per (value, node) when that scope lays out its uses (invariant 2). */
static int add_pending(oac_graphs *g, oac_value *v, long node, bool meta_only)
{
    struct oac_graphs_priv *p = (struct oac_graphs_priv *)g;
    pending_list *l = &p->pending[v->scope->depth];
    if (oac_grow(g->ctx, (void **)&l->e, &l->cap, l->n + 1, sizeof *l->e))
        return OAC_ENOMEM;
    l->e[l->n++] = (pending_use){ v, (int32_t)node, meta_only };
    return OAC_OK;
}

static int push_scope(oac_graphs *g, size_t *cap, oac_scope *s)
{
    if (oac_grow(g->ctx, (void **)&g->scopes, cap, g->n_scopes + 1,
                 sizeof *g->scopes))
        return OAC_ENOMEM;
    s->index = g->n_scopes;
    s->listed = true;
    g->scopes[g->n_scopes++] = s;
    return OAC_OK;
}

/* The scope's value storage: one block sized by an upper bound, so value
 * pointers never move. */
typedef struct scope_build {
    oac_value *block;
    size_t used, cap;
} scope_build;

static oac_value *new_value(oac_graphs *g, oac_scope *s, scope_build *b,
                            const char *name, oac_value_kind kind, int *rc)
{
    *rc = OAC_OK;
    if (empty(name))
        return NULL;
    if (b->used >= b->cap) {
        oac_value *old = oac_scope_local(s, name);
        if (old)
            return old;
        *rc = oac_err(g->ctx, OAC_EINTERNAL, "value block overflow");
        return NULL;
    }
    /* One hash and probe: the value already defined, or the next entry
     * of the block inserted under the name. */
    oac_value *v = &b->block[b->used];
    size_t old;
    if ((*rc = oac_strindex_get_or_add(&s->by_name, name, b->used, &old)))
        return NULL;
    if (old != SIZE_MAX)
        return &b->block[old];
    if (g->n_values >= UINT32_MAX) {
        *rc = oac_err(g->ctx, OAC_ENOMEM, "graph too large");
        return NULL;
    }
    b->used++;
    memset(v, 0, sizeof *v);
    v->name = name;
    v->scope = s;
    v->kind = kind;
    v->init_index = -1;
    v->input_index = v->output_index = -1;
    v->producer = -1;
    v->port = -1;
    v->id = (uint32_t)g->n_values++;
    s->n_values++;
    return v;
}

/* An outer value ov read inside subgraph s (by a node, or returned as an
 * output): walk to the defining scope, recording the read on every
 * enclosing node on the way and, in ov's own scope, as an implicit use
 * (port -1) by the node holding the subgraph. */
static int record_outer(oac_graphs *g, const oac_scope *s, oac_value *ov,
                        bool meta_only)
{
    int rc;
    if (!ov || ov->scope == s)
        return OAC_OK;
    for (const oac_scope *c = s; c && c != ov->scope && c->parent; c = c->parent) {
        /* The owner holds c, so it has its ext. */
        oac_node_ext *owner = c->parent->nodes[c->owner_node].ext;
        if (!owner)
            return oac_err(g->ctx, OAC_EINTERNAL, "subgraph owner without ext");
        /* The room is implied by the count (check/graph.h): full at 0, 4, 8,
         * 16, ... */
        uint32_t n = owner->n_outer_reads;
        if (n >= INT32_MAX)
            return oac_err(g->ctx, OAC_ENOMEM, "graph too large");
        if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
            oac_value **r = oac_reallocarray(g->ctx, owner->outer_reads,
                                             n ? (size_t)n * 2 : 4,
                                             sizeof *r);
            if (!r)
                return OAC_ENOMEM;
            owner->outer_reads = r;
        }
        owner->outer_reads[owner->n_outer_reads++] = ov;
        if (c->parent == ov->scope &&
            (rc = add_pending(g, ov, c->owner_node, meta_only)))
            return rc;
    }
    return OAC_OK;
}

static int build_scope(oac_graphs *g, size_t *scap, oac_scope *s);

/* Resolve the inputs of node i of s, counting the reads of local values
 * (laid out by lay_out_uses) and recording the outer ones. */
static int read_inputs(oac_graphs *g, oac_scope *s, size_t i)
{
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    int rc;
    /* Most reads are of what the node before defined (a chain of
     * operators): a string compare against its output 0 is cheaper than
     * a hash and probe, and the decoder mostly hands out the same copy
     * of a name (model/decode.c, copy_string), so the pointers compare first. */
    const oac_value *prev = NULL;
    if (i > 0 && s->nodes[i - 1].n_out)
        prev = s->nodes[i - 1].in_vals[s->nodes[i - 1].n_in];
    for (size_t p = 0; p < np->n_input; p++) {
        oac_value *v;
        const char *in = np->input[p];
        if (prev && in && (prev->name == in ||
                           (prev->name[0] == in[0] && strcmp(prev->name, in) == 0)))
            v = (oac_value *)prev;
        else
            v = scope_local(s, np->input[p]);
        n->in_vals[p] = v;
        if (v)
            v->n_uses++;
        else if (s->parent) {
            oac_value *ov = oac_scope_lookup(s, np->input[p], NULL);
            n->in_vals[p] = ov;
            if ((rc = record_outer(g, s, ov,
                                   oac_op_has(n->op, OAC_OPF_NO_STORAGE_READ))))
                return rc;
        }
    }
    return OAC_OK;
}

static int cmp_pending(const void *a, const void *b)
{
    const pending_use *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return x->v->id < y->v->id ? -1 : x->v->id > y->v->id;
}

/* The use lists of s in one block: the counted reads of every node in
 * file order, each node's ports first, then its implicit reads. */
static int lay_out_uses(oac_graphs *g, oac_scope *s)
{
    struct oac_graphs_priv *pv = (struct oac_graphs_priv *)g;
    pending_list *l = &pv->pending[s->depth];
    /* One implicit use per (node, value), reading only metadata when
     * every read was. */
    size_t k = 0;
    if (l->n) {
        qsort(l->e, l->n, sizeof *l->e, cmp_pending);
        for (size_t j = 0; j < l->n; j++) {
            if (k && l->e[k - 1].node == l->e[j].node &&
                l->e[k - 1].v == l->e[j].v) {
                l->e[k - 1].meta_only &= l->e[j].meta_only;
                continue;
            }
            l->e[k++] = l->e[j];
            l->e[j].v->n_uses++;
        }
    }
    l->n = 0;
    uint64_t total = 0;
    for (size_t v = 0; v < s->n_values; v++)
        total += s->values_block[v].n_uses;
    if (total > SIZE_MAX / sizeof(oac_use))
        return oac_err(g->ctx, OAC_ENOMEM, "graph too large");
    if (!total)
        return OAC_OK;
    s->uses_block = oac_alloc(g->ctx, (size_t)total * sizeof *s->uses_block);
    if (!s->uses_block)
        return OAC_ENOMEM;
    oac_prefault(s->uses_block, (size_t)total * sizeof *s->uses_block);
    oac_use *at = s->uses_block;
    for (size_t v = 0; v < s->n_values; v++) {
        oac_value *x = &s->values_block[v];
        x->uses = x->n_uses ? at : NULL;
        at += x->n_uses;
        x->n_uses = 0;
    }
    size_t j = 0;
    for (size_t i = 0; i < s->n_nodes; i++) {
        const oac_node *n = &s->nodes[i];
        for (size_t p = 0; p < n->proto->n_input; p++) {
            oac_value *v = n->in_vals[p];
            if (v && v->scope == s)
                v->uses[v->n_uses++] = (oac_use){ (int32_t)i, (int32_t)p, false };
        }
        for (; j < k && l->e[j].node == (int32_t)i; j++) {
            oac_value *v = l->e[j].v;
            v->uses[v->n_uses++] = (oac_use){ (int32_t)i, -1, l->e[j].meta_only };
        }
    }
    return OAC_OK;
}

/* The ext of node n of s, made empty when it has none; NULL when out of
 * memory. */
static oac_node_ext *node_ext(oac_graphs *g, oac_scope *s, oac_node *n)
{
    if (!n->ext) {
        n->ext = oac_calloc(g->ctx, 1, sizeof *n->ext);
        if (!n->ext)
            return NULL;
        s->has_ext = true;
    }
    return n->ext;
}

/* Index the subgraphs of node i of s. */
static int index_subgraphs(oac_graphs *g, size_t *scap, oac_scope *s,
                           size_t i)
{
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    int rc;
    size_t nsub = 0;
    for (size_t a = 0; a < np->n_attribute; a++) {
        const Onnx__AttributeProto *at = np->attribute[a];
        if (!at)
            continue;
        nsub += (at->g ? 1 : 0) + at->n_graphs;
    }
    if (!nsub)
        return OAC_OK;
    if (nsub > UINT32_MAX)
        return oac_err(g->ctx, OAC_ENOMEM, "graph too large");
    if (s->depth >= OAC_MAX_DEPTH) {
        s->truncated = true;
        return OAC_OK;
    }
    oac_node_ext *x = node_ext(g, s, n);
    if (!x)
        return OAC_ENOMEM;
    x->subgraphs = oac_calloc(g->ctx, nsub, sizeof *x->subgraphs);
    if (!x->subgraphs)
        return OAC_ENOMEM;
    for (size_t a = 0; a < np->n_attribute; a++) {
        const Onnx__AttributeProto *at = np->attribute[a];
        if (!at)
            continue;
        for (size_t k = 0; k < (at->g ? 1 : 0) + at->n_graphs; k++) {
            const Onnx__GraphProto *gp = at->g && k == 0 ? at->g
                : at->graphs[k - (at->g ? 1 : 0)];
            if (!gp)
                continue;
            oac_scope *c = oac_calloc(g->ctx, 1, sizeof *c);
            if (!c)
                return OAC_ENOMEM;
            oac_strindex_init(&c->by_name, g->ctx, NULL, 0, 0);
            c->kind = OAC_SCOPE_SUBGRAPH;
            c->parent = s;
            c->owner_node = (long)i;
            c->owner_attr = (long)a;
            c->attr_name = at->name;
            c->depth = s->depth + 1;
            c->graph = gp;
            c->imports_alias = s->imports_alias;
            c->name = empty(gp->name) ? (at->name ? at->name : "") : gp->name;
            if (at->g && k == 0)
                c->loc = pool_printf(g, "%s/node/%zu/attribute/%zu/g", s->loc,
                                     i, a);
            else
                c->loc = pool_printf(g, "%s/node/%zu/attribute/%zu/graphs/%zu",
                                     s->loc, i, a, k - (at->g ? 1 : 0));
            if (!c->loc || (rc = push_scope(g, scap, c))) {
                oac_strindex_fini(&c->by_name);
                oac_dealloc(g->ctx, c);
                return OAC_ENOMEM;
            }
            x->subgraphs[x->n_subgraphs++] = c;
            if ((rc = build_scope(g, scap, c)))
                return rc;
        }
    }
    return OAC_OK;
}

/* "<pre><n>" (lpre bytes of prefix, n in decimal) in the pool: a
 * declaration's location, its prefix made once per field of a scope. */
static char *pool_num(oac_graphs *g, const char *pre, size_t lpre, size_t n)
{
    char num[24];
    size_t k = sizeof num;
    do {
        num[--k] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    size_t ln = sizeof num - k;
    if (lpre > SIZE_MAX / 2)
        return NULL;
    char *s = pool_alloc(g, lpre + ln + 1);
    if (!s)
        return NULL;
    memcpy(s, pre, lpre);
    memcpy(s + lpre, num + k, ln);
    s[lpre + ln] = '\0';
    return s;
}

/* The declarations of one repeated field of a scope, in order. */
typedef struct vinfo_field {
    oac_vi_field f;
    char *pre;                     /* "<scope loc>/input/" */
    size_t lpre;
    const char *last;              /* the location made last, or NULL */
    size_t last_len, last_idx;
} vinfo_field;

/* The location of declaration idx of field vf.  Indices come in order,
 * so it is mostly the last one with its number incremented in place: a
 * copy, not a conversion to decimal. */
static const char *field_loc(oac_graphs *g, vinfo_field *vf, size_t idx)
{
    const char *p = vf->last;
    size_t len = vf->last_len, k = len;
    while (p && k > vf->lpre && p[k - 1] == '9')
        k--;
    char *loc;
    if (!p || idx != vf->last_idx + 1 || k == vf->lpre) {
        /* The first, out of order, or one digit longer (10, 100, ...). */
        loc = pool_num(g, vf->pre, vf->lpre, idx);
        if (!loc)
            return NULL;
        len = strlen(loc);
    } else {
        loc = pool_alloc(g, len + 1);
        if (!loc)
            return NULL;
        memcpy(loc, p, len + 1);
        loc[k - 1]++;
        memset(loc + k, '0', len - k);
    }
    vf->last = loc;
    vf->last_len = len;
    vf->last_idx = idx;
    return loc;
}

static int vinfo_field_init(oac_graphs *g, oac_scope *s, vinfo_field *vf,
                            oac_vi_field f)
{
    static const char *const fname[] = { "/input/", "/output/", "/value_info/" };
    vf->f = f;
    vf->last = NULL;
    vf->pre = pool_printf(g, "%s%s", s->loc, fname[f]);
    vf->lpre = vf->pre ? strlen(vf->pre) : 0;
    return vf->pre ? OAC_OK : OAC_ENOMEM;
}

/* Declaration idx of field vf: v is the value it names in s, which the
 * caller resolved (the scope's input or output of that port, or a
 * lookup for value_info). */
static int add_vinfo(oac_graphs *g, oac_scope *s, size_t *k,
                     const Onnx__ValueInfoProto *vi, vinfo_field *vf,
                     size_t idx, oac_value *v)
{
    oac_vinfo *e = &s->vinfos[(*k)++];
    e->vi = vi;
    e->field = vf->f;
    e->index = idx;
    e->loc = field_loc(g, vf, idx);
    if (!e->loc)
        return OAC_ENOMEM;
    e->value = vi ? v : NULL;
    if (e->value && !e->value->decl) {
        /* input > output > value_info: vinfos come in that order.  At
         * most UINT32_MAX - 1 of them (build_scope). */
        e->value->decl = (uint32_t)*k;
    }
    return OAC_OK;
}

/* oac_op_find through a small cache of the operator types a scope uses
 * (a few distinct ones over thousands of nodes): the result depends only
 * on op_type and on the domain (any ONNX spelling alike).  Direct-mapped
 * by the first three letters, so a hit costs one string compare (the
 * mix keeps the operators of a decoder layer in distinct slots). */
#define OP_CACHE 32
typedef struct op_cache {
    const char *type[OP_CACHE];    /* NULL: an empty slot */
    const char *dom[OP_CACHE];     /* NULL for the ONNX domain */
    const struct oac_op *op[OP_CACHE];
} op_cache;

static const struct oac_op *op_lookup(op_cache *c, const char *domain,
                                      const char *op_type)
{
    if (!op_type || !*op_type)
        return NULL;
    const char *d = oac_domain_is_onnx(domain) ? NULL : domain;
    unsigned char c0 = (unsigned char)op_type[0];
    unsigned char c1 = (unsigned char)op_type[1];
    unsigned char c2 = c1 ? (unsigned char)op_type[2] : 0;
    size_t at = (c0 * 7u + c1 * 3u + c2) % OP_CACHE;
    const char *t = c->type[at];
    if (t && (t == op_type || strcmp(t, op_type) == 0) &&
        (d ? c->dom[at] && strcmp(c->dom[at], d) == 0 : !c->dom[at])) {
        /* The decoder shares a name's copy only while its cache holds it
         * (model/decode.c, copy_string): the newest copy compares by pointer
         * on the nodes that follow. */
        c->type[at] = op_type;
        return c->op[at];
    }
    const struct oac_op *op = oac_op_find(domain, op_type);
    c->type[at] = op_type;
    c->dom[at] = d;
    c->op[at] = op;
    return op;
}

/* The scope's arrays, sized by the file: the value block, the ports,
 * the nodes, inputs and outputs, the name table (b->block, b->cap). */
static int alloc_scope(oac_graphs *g, oac_scope *s, scope_build *b)
{
    oac_ctx *ctx = g->ctx;
    int rc;
    const Onnx__GraphProto *gp = s->graph;
    const Onnx__FunctionProto *fp = s->func;
    size_t n_in = gp ? gp->n_input : fp->n_input;
    size_t n_out = gp ? gp->n_output : fp->n_output;
    size_t n_init = gp ? gp->n_initializer : 0;
    /* Upper bound of the values the scope defines, and the node ports. */
    uint64_t bound = (uint64_t)n_in + n_init, n_ports = 0;
    for (size_t i = 0; i < s->n_nodes; i++)
        if (s->node_protos[i]) {
            bound += s->node_protos[i]->n_output;
            n_ports += (uint64_t)s->node_protos[i]->n_input +
                       s->node_protos[i]->n_output;
        }
    /* 32-bit node indices, ports and use counts (check/graph.h). */
    if (bound > SIZE_MAX / sizeof(oac_value) || n_ports > INT32_MAX / 2 ||
        s->n_nodes > INT32_MAX || n_in > INT32_MAX || n_out > INT32_MAX ||
        n_init > INT32_MAX)
        return oac_err(ctx, OAC_ENOMEM, "graph too large");
    s->ports_block = oac_calloc(ctx, n_ports ? (size_t)n_ports : 1,
                                sizeof *s->ports_block);
    if (!s->ports_block)
        return OAC_ENOMEM;
    b->cap = (size_t)bound;
    s->first_id = g->n_values;      /* check/graph.h, invariant 3 */
    /* new_value initializes each entry it hands out; the rest is never
     * read (so not zeroed: its pages are never touched). */
    b->block = oac_alloc(ctx, (b->cap ? b->cap : 1) * sizeof *b->block);
    s->nodes = oac_calloc(ctx, s->n_nodes ? s->n_nodes : 1, sizeof *s->nodes);
    s->input_names = oac_calloc(ctx, n_in ? n_in : 1, sizeof *s->input_names);
    s->inputs = oac_calloc(ctx, n_in ? n_in : 1, sizeof *s->inputs);
    s->output_names = oac_calloc(ctx, n_out ? n_out : 1, sizeof *s->output_names);
    s->outputs = oac_calloc(ctx, n_out ? n_out : 1, sizeof *s->outputs);
    s->output_vis = oac_calloc(ctx, n_out ? n_out : 1, sizeof *s->output_vis);
    s->output_vi_locs = oac_calloc(ctx, n_out ? n_out : 1,
                                   sizeof *s->output_vi_locs);
    /* The block belongs to the scope from here on (freed with it). */
    s->values_block = b->block;
    if (!b->block || !s->nodes || !s->input_names ||
        !s->inputs || !s->output_names || !s->outputs || !s->output_vis ||
        !s->output_vi_locs)
        return OAC_ENOMEM;
    /* The ports and nodes are all written below, and the value block up
     * to its few omitted names: map their pages in one go. */
    oac_prefault(s->ports_block, (size_t)n_ports * sizeof *s->ports_block);
    oac_prefault(s->nodes, s->n_nodes * sizeof *s->nodes);
    oac_prefault(b->block, b->cap * sizeof *b->block);
    s->n_inputs = n_in;
    s->n_outputs = n_out;
    /* Size the table once, for every name that may define a value, not
     * through a chain of rehashes (nor twice the slots a power of two may
     * take).  Empty output names are counted too: like the value block,
     * the table stays linear in the file, and slots never probed are
     * never touched. */
    oac_strindex_init(&s->by_name, ctx, b->block, sizeof *b->block,
                      offsetof(oac_value, name));
    if ((rc = oac_strindex_reserve(&s->by_name, b->cap)))
        return rc;

    return OAC_OK;
}

/* Definitions: inputs, initializers, node outputs (invariant 1), and the
 * node's row and ports; the outputs the scope returns. */
static int define_values(oac_graphs *g, oac_scope *s, scope_build *b)
{
    op_cache oc = { .type = { NULL } };
    int rc = OAC_OK;
    const Onnx__GraphProto *gp = s->graph;
    const Onnx__FunctionProto *fp = s->func;
    size_t n_in = s->n_inputs, n_out = s->n_outputs;
    size_t n_init = gp ? gp->n_initializer : 0;
    size_t port_at = 0;
    for (size_t i = 0; i < n_in; i++) {
        const char *name = gp ? (gp->input[i] ? gp->input[i]->name : NULL)
                              : fp->input[i];
        s->input_names[i] = name;
        oac_value *v = new_value(g, s, b, name, OAC_VAL_INPUT, &rc);
        if (rc)
            return rc;
        if (v && v->input_index < 0)
            v->input_index = (int32_t)i;
        s->inputs[i] = v;
    }
    for (size_t i = 0; i < n_init; i++) {
        const Onnx__TensorProto *t = gp->initializer[i];
        if (!t)
            continue;
        oac_value *v = new_value(g, s, b, t->name, OAC_VAL_INITIALIZER, &rc);
        if (rc)
            return rc;
        if (v && !oac_value_is_initializer(v) &&
            (v->kind == OAC_VAL_INPUT || v->kind == OAC_VAL_INITIALIZER))
            v->init_index = (int32_t)i;
    }
    for (size_t i = 0; i < s->n_nodes; i++) {
        oac_node *n = &s->nodes[i];
        const Onnx__NodeProto *np = s->node_protos[i];
        static const Onnx__NodeProto empty_node = ONNX__NODE_PROTO__INIT;
        n->proto = np ? np : &empty_node;
        n->display = empty(n->proto->name) ? pool_num(g, "#", 1, i)
                                           : n->proto->name;
        if (!n->display)
            return OAC_ENOMEM;
        n->op = op_lookup(&oc, n->proto->domain, n->proto->op_type);
        /* Fewer than 2^30 ports in the scope (alloc_scope refused more),
         * so both counts fit their fields. */
        n->n_in = (uint32_t)n->proto->n_input;
        n->n_out = (uint32_t)n->proto->n_output;
        n->declares_alias = n->proto->n_output_alias > 0;
        n->has_metadata = n->proto->n_metadata_props > 0;
        n->in_vals = s->ports_block + port_at;
        port_at += n->n_in;
        oac_value **out_vals = s->ports_block + port_at;
        port_at += n->n_out;
        for (size_t p = 0; p < n->n_out; p++) {
            const char *name = n->proto->output[p];
            size_t before = g->n_values;
            oac_value *v = new_value(g, s, b, name, OAC_VAL_NODE_OUTPUT, &rc);
            if (rc)
                return rc;
            if (!v || g->n_values == before)
                continue;           /* omitted, or defined before */
            v->producer = (int32_t)i;
            v->port = (int32_t)p;
            out_vals[p] = v;
        }
    }
    for (size_t i = 0; i < n_out; i++) {
        const char *name = gp ? (gp->output[i] ? gp->output[i]->name : NULL)
                              : fp->output[i];
        s->output_names[i] = name;
        /* A subgraph may return an outer value as it is. */
        oac_value *v = oac_scope_lookup(s, name, NULL);
        s->outputs[i] = v;
        if (v && v->scope == s && v->output_index < 0)
            v->output_index = (int32_t)i;
        if (v && v->scope != s && (rc = record_outer(g, s, v, false)))
            return rc;
    }

    return OAC_OK;
}

/* Declarations: the scope's value_info entries (graph inputs, outputs,
 * value_info; a function's value_info) in that order. */
static int declare_values(oac_graphs *g, oac_scope *s)
{
    oac_ctx *ctx = g->ctx;
    int rc;
    const Onnx__GraphProto *gp = s->graph;
    const Onnx__FunctionProto *fp = s->func;
    size_t nvi = gp ? gp->n_input + gp->n_output + gp->n_value_info
                    : fp->n_value_info;
    if (nvi >= UINT32_MAX)          /* oac_value.decl */
        return oac_err(ctx, OAC_ENOMEM, "graph too large");
    s->vinfos = oac_calloc(ctx, nvi ? nvi : 1, sizeof *s->vinfos);
    if (!s->vinfos)
        return OAC_ENOMEM;
    size_t k = 0;
    vinfo_field vf;
    if (gp) {
        if (gp->n_input && (rc = vinfo_field_init(g, s, &vf, OAC_VI_INPUT)))
            return rc;
        /* The input and output of a port: what its declaration names. */
        for (size_t i = 0; i < gp->n_input; i++)
            if ((rc = add_vinfo(g, s, &k, gp->input[i], &vf, i, s->inputs[i])))
                return rc;
        if (gp->n_output && (rc = vinfo_field_init(g, s, &vf, OAC_VI_OUTPUT)))
            return rc;
        for (size_t i = 0; i < gp->n_output; i++) {
            oac_value *v = s->outputs[i];
            if ((rc = add_vinfo(g, s, &k, gp->output[i], &vf, i,
                                v && v->scope == s ? v : NULL)))
                return rc;
            s->output_vis[i] = gp->output[i];
            s->output_vi_locs[i] = s->vinfos[k - 1].loc;
        }
        if (gp->n_value_info &&
            (rc = vinfo_field_init(g, s, &vf, OAC_VI_VALUE_INFO)))
            return rc;
        for (size_t i = 0; i < gp->n_value_info; i++) {
            const Onnx__ValueInfoProto *vi = gp->value_info[i];
            if ((rc = add_vinfo(g, s, &k, vi, &vf, i,
                                vi ? oac_scope_local(s, vi->name) : NULL)))
                return rc;
        }
    } else {
        if (fp->n_value_info &&
            (rc = vinfo_field_init(g, s, &vf, OAC_VI_VALUE_INFO)))
            return rc;
        for (size_t i = 0; i < fp->n_value_info; i++) {
            const Onnx__ValueInfoProto *vi = fp->value_info[i];
            if ((rc = add_vinfo(g, s, &k, vi, &vf, i,
                                vi ? oac_scope_local(s, vi->name) : NULL)))
                return rc;
            /* The output it declares, through the value (a hash lookup,
             * not a scan of the outputs). */
            oac_value *v = s->vinfos[k - 1].value;
            if (v && v->output_index >= 0 && !s->output_vis[v->output_index]) {
                s->output_vis[v->output_index] = fp->value_info[i];
                s->output_vi_locs[v->output_index] = s->vinfos[k - 1].loc;
            }
        }
    }
    s->n_vinfos = k;

    return OAC_OK;
}

static int build_scope(oac_graphs *g, size_t *scap, oac_scope *s)
{
    const Onnx__GraphProto *gp = s->graph;
    const Onnx__FunctionProto *fp = s->func;
    s->node_protos = gp ? gp->node : fp->node;
    s->n_nodes = gp ? gp->n_node : fp->n_node;
    scope_build b = { 0 };
    int rc;
    if ((rc = alloc_scope(g, s, &b)) || (rc = define_values(g, s, &b)) ||
        (rc = declare_values(g, s)))
        return rc;

    /* 3. Reads, subgraphs node by node (invariant 2), then the use
     * lists (invariant 4). */
    for (size_t i = 0; i < s->n_nodes; i++)
        if ((rc = read_inputs(g, s, i)))
            return rc;
    for (size_t i = 0; i < s->n_nodes; i++)
        if ((rc = index_subgraphs(g, scap, s, i)))
            return rc;
    return lay_out_uses(g, s);
}

static bool imports_alias(Onnx__OperatorSetIdProto *const *ops, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ops[i] && ops[i]->domain && strcmp(ops[i]->domain, OAC_ALIAS_DOMAIN) == 0)
            return true;
    return false;
}

static int cmp_ptr(const void *a, const void *b)
{
    const oac_value *x = *(oac_value *const *)a, *y = *(oac_value *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* outer_reads collects one entry per read; keep each value once.  Only
 * nodes holding subgraphs (so with an ext) have any. */
static void dedupe_outer(oac_scope *s)
{
    if (!s->has_ext)
        return;
    for (size_t i = 0; i < s->n_nodes; i++) {
        oac_node_ext *n = s->nodes[i].ext;
        if (!n || n->n_outer_reads < 2)
            continue;
        qsort(n->outer_reads, n->n_outer_reads, sizeof *n->outer_reads,
              cmp_ptr);
        size_t k = 1;
        for (size_t j = 1; j < n->n_outer_reads; j++)
            if (n->outer_reads[j] != n->outer_reads[k - 1])
                n->outer_reads[k++] = n->outer_reads[j];
        n->n_outer_reads = k;
    }
}

int oac_graphs_build(oac_ctx *ctx, oac_graphs **out,
                     const Onnx__ModelProto *model)
{
    *out = NULL;
    struct oac_graphs_priv *p = oac_calloc(ctx, 1, sizeof *p);
    if (!p)
        return OAC_ENOMEM;
    oac_graphs *g = &p->pub;
    g->ctx = ctx;
    g->model = model;
    oac_strmap_init(&g->func_by_key, ctx);
    int rc = OAC_OK;
    size_t scap = 0;
    g->model_imports_alias = imports_alias(model->opset_import,
                                           model->n_opset_import);

    if (model->graph) {
        oac_scope *s = oac_calloc(ctx, 1, sizeof *s);
        if (!s) {
            rc = OAC_ENOMEM;
            goto done;
        }
        oac_strindex_init(&s->by_name, ctx, NULL, 0, 0);
        s->kind = OAC_SCOPE_MAIN;
        s->owner_node = s->owner_attr = -1;
        s->graph = model->graph;
        s->name = model->graph->name ? model->graph->name : "";
        s->loc = "/graph";
        s->imports_alias = g->model_imports_alias;
        if ((rc = push_scope(g, &scap, s))) {
            oac_strindex_fini(&s->by_name);
            oac_dealloc(ctx, s);
            goto done;
        }
    }

    /* Register functions before any body is indexed, so call sites in
     * the main graph and in other functions resolve. */
    g->n_functions = model->n_functions;
    g->functions = oac_calloc(ctx, g->n_functions ? g->n_functions : 1,
                              sizeof *g->functions);
    g->keys = oac_calloc(ctx, g->n_functions ? g->n_functions : 1,
                         sizeof *g->keys);
    if (!g->functions || !g->keys) {
        rc = OAC_ENOMEM;
        goto done;
    }
    for (size_t f = 0; f < model->n_functions; f++) {
        const Onnx__FunctionProto *fp = model->functions[f];
        if (!fp || empty(fp->name))
            continue;
        g->keys[f] = oac_asprintf(ctx, "%s\x1f%s", norm_domain(fp->domain),
                                  fp->name);
        if (!g->keys[f]) {
            rc = OAC_ENOMEM;
            goto done;
        }
        if (oac_strmap_has(&g->func_by_key, g->keys[f]))
            continue;               /* a duplicate: the first one is called */
        oac_scope *s = oac_calloc(ctx, 1, sizeof *s);
        if (!s) {
            rc = OAC_ENOMEM;
            goto done;
        }
        oac_strindex_init(&s->by_name, ctx, NULL, 0, 0);
        s->kind = OAC_SCOPE_FUNCTION;
        s->owner_node = s->owner_attr = -1;
        s->func = fp;
        s->name = fp->name;
        s->loc = pool_printf(g, "/functions/%zu", f);
        /* A function without its own imports uses the model's. */
        s->imports_alias = fp->n_opset_import
            ? imports_alias(fp->opset_import, fp->n_opset_import)
            : g->model_imports_alias;
        g->functions[f] = s;
        if (!s->loc || (rc = oac_strmap_put(&g->func_by_key, g->keys[f], s))) {
            g->functions[f] = NULL;
            oac_strindex_fini(&s->by_name);
            oac_dealloc(ctx, s);
            rc = OAC_ENOMEM;
            goto done;
        }
    }

    if (model->graph && (rc = build_scope(g, &scap, g->scopes[0])))
        goto done;
    for (size_t f = 0; f < g->n_functions; f++) {
        oac_scope *s = g->functions[f];
        if (!s)
            continue;
        /* Unlisted function scopes are freed by oac_graphs_free. */
        if ((rc = push_scope(g, &scap, s)))
            goto done;
        if ((rc = build_scope(g, &scap, s)))
            goto done;
    }

    if (g->n_scopes) {
        g->values0 = g->scopes[0]->values_block;
        g->n_values0 = g->scopes[0]->n_values;
    }

    /* Call sites, dedupe of outer reads. */
    for (size_t si = 0; si < g->n_scopes; si++) {
        oac_scope *s = g->scopes[si];
        dedupe_outer(s);
        /* Without local functions no node calls one. */
        for (size_t i = 0; oac_strmap_count(&g->func_by_key) && i < s->n_nodes; i++) {
            oac_node *n = &s->nodes[i];
            if (oac_domain_is_onnx(n->proto->domain) && n->op)
                continue;           /* ONNX operators are not local functions */
            oac_scope *f = oac_graphs_function(g, n->proto->domain,
                                               n->proto->op_type);
            if (!f)
                continue;
            oac_node_ext *x = node_ext(g, s, n);
            if (!x) {
                rc = OAC_ENOMEM;
                goto done;
            }
            x->callee = f;
            if (oac_grow(ctx, (void **)&f->calls, &f->cap_calls,
                         f->n_calls + 1, sizeof *f->calls)) {
                rc = OAC_ENOMEM;
                goto done;
            }
            f->calls[f->n_calls++] = (oac_callsite){ s, (long)i };
        }
    }

done:
    if (rc) {
        oac_graphs_free(g);
        return rc == OAC_ENOMEM ? oac_err(ctx, OAC_ENOMEM, "out of memory")
                                : rc;
    }
    *out = g;
    return OAC_OK;
}

static void scope_free(oac_ctx *ctx, oac_scope *s)
{
    if (!s)
        return;
    /* Use lists live in uses_block, alias_in entries in alias_block (the
     * ports pass makes the block before any entry); only nodes with an
     * ext own more. */
    if (s->nodes && s->has_ext)
        for (size_t i = 0; i < s->n_nodes; i++) {
            oac_node_ext *x = s->nodes[i].ext;
            if (!x)
                continue;
            oac_dealloc(ctx, x->subgraphs);
            oac_dealloc(ctx, x->outer_reads);
            oac_dealloc(ctx, x);
        }
    oac_dealloc(ctx, s->alias_block);
    oac_dealloc(ctx, s->nodes);
    oac_dealloc(ctx, s->values_block);
    oac_dealloc(ctx, s->uses_block);
    oac_dealloc(ctx, s->ports_block);
    oac_dealloc(ctx, s->input_names);
    oac_dealloc(ctx, s->inputs);
    oac_dealloc(ctx, s->output_names);
    oac_dealloc(ctx, s->outputs);
    oac_dealloc(ctx, s->output_vis);
    oac_dealloc(ctx, s->output_vi_locs);
    oac_dealloc(ctx, s->vinfos);
    oac_dealloc(ctx, s->calls);
    oac_strindex_fini(&s->by_name);
    oac_dealloc(ctx, s);
}

void oac_graphs_free(oac_graphs *g)
{
    if (!g)
        return;
    oac_ctx *ctx = g->ctx;
    struct oac_graphs_priv *p = (struct oac_graphs_priv *)g;
    /* Functions never listed (a failure half-way) are freed here, before
     * the listed scopes (whose flags this reads) go. */
    for (size_t f = 0; g->functions && f < g->n_functions; f++)
        if (g->functions[f] && !g->functions[f]->listed)
            scope_free(ctx, g->functions[f]);
    for (size_t i = 0; i < g->n_scopes; i++)
        scope_free(ctx, g->scopes[i]);
    oac_dealloc(ctx, g->scopes);
    oac_dealloc(ctx, g->functions);
    for (size_t f = 0; g->keys && f < g->n_functions; f++)
        oac_dealloc(ctx, g->keys[f]);
    oac_dealloc(ctx, g->keys);
    oac_strmap_fini(&g->func_by_key);
    for (size_t d = 0; d <= OAC_MAX_DEPTH; d++)
        oac_dealloc(ctx, p->pending[d].e);
    oac_arena_free(p->pool);
    oac_dealloc(ctx, p);
}

int oac_pass_graph(oac_check_state *st)
{
    if (!st->model || !st->model->proto)
        return oac_err(st->ctx, OAC_EINVAL, "no model to check");
    return oac_graphs_build(st->ctx, &st->graphs, st->model->proto);
}

/* ---- reporting ------------------------------------------------------ */

/* Append n bytes of src at *at in buf, cut as snprintf cuts (buflen > 0);
 * *at counts the full length. */
static void put_cut(char *buf, size_t buflen, size_t *at, const char *src,
                    size_t n)
{
    if (*at < buflen - 1) {
        size_t room = buflen - 1 - *at;
        memcpy(buf + *at, src, n < room ? n : room);
    }
    *at += n;
}

/* "<scope loc>/node/<i>" then suffix into buf (buflen > 0) without a
 * printf (some passes ask per node); the full length. */
static size_t put_node_loc(char *buf, size_t buflen, const oac_scope *s,
                           long i, const char *suffix)
{
    char num[24];
    size_t k = sizeof num;
    unsigned long u = i < 0 ? 0UL - (unsigned long)i : (unsigned long)i;
    do {
        num[--k] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (i < 0)
        num[--k] = '-';
    size_t at = 0;
    put_cut(buf, buflen, &at, s->loc, strlen(s->loc));
    put_cut(buf, buflen, &at, "/node/", 6);
    put_cut(buf, buflen, &at, num + k, sizeof num - k);
    if (suffix)
        put_cut(buf, buflen, &at, suffix, strlen(suffix));
    buf[at < buflen ? at : buflen - 1] = '\0';
    return at;
}

const char *oac_node_loc(char *buf, size_t buflen, const oac_scope *s,
                         long i, const char *fmt, ...)
{
    if (!buflen)
        return buf;
    size_t k = put_node_loc(buf, buflen, s, i, NULL);
    if (k < buflen && fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf + k, buflen - k, fmt, ap);
        va_end(ap);
    }
    return buf;
}

oac_where oac_where_node(const oac_scope *s, long i, const char *value,
                         const char *suffix, char *buf, size_t buflen)
{
    oac_where w = { .graph = s->name, .value = value };
    oac_node *n = oac_scope_node(s, i);
    if (n) {
        w.node = n->display;
        w.op_type = n->proto->op_type;
        if (buflen)
            put_node_loc(buf, buflen, s, i, suffix);
        w.location = buf;
    } else {
        snprintf(buf, buflen, "%s%s", s->loc, suffix ? suffix : "");
        w.location = buf;
    }
    return w;
}

int oac_scope_diag(oac_check_state *st, const oac_scope *s, oac_code code,
                   const oac_where *where, const char *fmt, ...)
{
    oac_where w = where ? *where : (oac_where){ 0 };
    if (!w.graph)
        w.graph = s->name;
    va_list ap;
    va_start(ap, fmt);
    char *msg = oac_vasprintf(st->ctx, fmt, ap);
    va_end(ap);
    if (!msg)
        return OAC_ENOMEM;
    int rc = OAC_OK;
    /* The function body a finding sits in (a subgraph of a function
     * reports through its function). */
    const oac_scope *f = s;
    while (f->parent)
        f = f->parent;
    if (f->kind != OAC_SCOPE_FUNCTION || f->n_calls == 0) {
        rc = oac_diag_add(st->diags, code, &w, "%s", msg);
    } else {
        for (size_t c = 0; c < f->n_calls && !rc; c++) {
            const oac_callsite *cs = &f->calls[c];
            const oac_node *n = &cs->scope->nodes[cs->node];
            rc = oac_diag_add(st->diags, code, &w,
                              "%s (in function '%s' called by node '%s' of graph '%s')",
                              msg, f->name, n->display, cs->scope->name);
        }
    }
    oac_dealloc(st->ctx, msg);
    return rc;
}

/* annotate/annotate.c: making an existing decoder's in-place cache update explicit
 * (contract, section 7).
 *
 * Owns oac_annotate, oac_annotation_write and the oac_annotation object:
 * which past input pairs with which present output, the trace from one to
 * the other through the operator table, the refusals, the annotations
 * written into the loaded model's tree, and the check of the file
 * written.  The operator facts come from ops.def through ops.h
 * (oac_op_pair_judge and the row's flags, axis and hint); the config from
 * annotate/genai_config.c; the graph from check/graph.c's index; nothing here names an
 * operator.
 *
 * Steps, each a function below, in contract order:
 *   1. pairs        annotate/pairs.c (structure, config templates and
 *                   name patterns, as a union); each past once, in graph
 *                   input order.
 *   2. config       GenAI's sharing rules (beam-search, config-disabled),
 *                   unless --ignore-config: config_reason beside the
 *                   trace's reason (contract 9.5).
 *   3. trace        present back through Identity links to one operator,
 *                   whose pair from the past must hold in place
 *                   (oac_op_pair_judge); the past side may pass Identity
 *                   links too.  The K and V pairs of one KV-cache node
 *                   are annotated together or not at all.
 *   4. annotations  existing ones are compared (kept, or a conflict);
 *                   then, when nothing is refused or --partial, written:
 *                   access, output_alias on every node of the chain,
 *                   alias_of, the capacity dims.
 *   5. write        oac_annotation_write: temporary file beside the
 *                   output, loaded back, oac_check, rename or remove;
 *                   oac_annotation_write_buffer: the same into memory.
 *
 * Invariants:
 *  1. The model's tree changes only in step 4 and only in the fields the
 *     contract names; new messages and strings come from the model's own
 *     arena, so unknown fields and payloads are written back as loaded.
 *     A Dimension is replaced, never written: the loader shares equal
 *     ones between values (model/decode.c).
 *  2. An annotation already in the model is never written twice: running
 *     annotate on its own output changes nothing, byte for byte.
 *  3. Work is linear in the model for the pairs that hold; a refused pair
 *     may cost one walk of the graph (is the present computed from the
 *     past at all?).  Walks are bounded by the graph's node count.
 *  4. Refusal messages say what to change in the export.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "annotate/annotate.h"
#include "check/analysis.h"
#include "model/arena.h"
#include "annotate/genai_config.h"
#include "check/graph.h"
#include "ops.h"

#define KV_CAPACITY "kv_capacity"

/* ---- the result object ------------------------------------------------ */

struct oac_annotation {
    oac_ctx *ctx;
    oac_arena *arena;          /* every string of pairs, config, output */
    oac_annotate_pair *pairs;
    size_t n_pairs, cap;
    const char *config;
    const char *output;
    bool partial;
    /* oac_annotate_trace: the pairs' names borrow the graph index and the
     * model (the trace is read and freed while both live), node_at holds
     * each pair's node index in the main graph (-1: none), and pair i's
     * path, the nodes from past to present of a pair the trace holds
     * (its Identity links and its operator), is path[path_at[i] ..
     * path_at[i + 1]). */
    bool borrowed;
    long *node_at;
    long *path;
    size_t n_path, cap_path;
    size_t *path_at;
};

static const struct {
    const char *name, *meaning;
} refusals[OAC_REFUSAL_COUNT] = {
    [OAC_REFUSAL_NONE] = { NULL, NULL },
#define OAC_REFUSAL(id, name, meaning) [OAC_REFUSAL_##id] = { name, meaning },
#include "oac_annotate.def"
#undef OAC_REFUSAL
};

const char *oac_refusal_name(oac_refusal r)
{
    return (unsigned)r < OAC_REFUSAL_COUNT ? refusals[r].name : NULL;
}

const char *oac_refusal_meaning(oac_refusal r)
{
    return (unsigned)r < OAC_REFUSAL_COUNT ? refusals[r].meaning : NULL;
}

const char *oac_verdict_name(oac_verdict v)
{
    switch (v) {
    case OAC_VERDICT_ANNOTATED: return "annotated";
    case OAC_VERDICT_KEPT: return "kept";
    case OAC_VERDICT_REFUSED: return "refused";
    }
    return NULL;
}

void oac_annotation_free(oac_annotation *a)
{
    if (!a)
        return;
    oac_dealloc(a->ctx, a->pairs);
    oac_dealloc(a->ctx, a->node_at);
    oac_dealloc(a->ctx, a->path);
    oac_dealloc(a->ctx, a->path_at);
    oac_arena_free(a->arena);
    oac_dealloc(a->ctx, a);
}

long oac_annotation_node_at(const oac_annotation *a, size_t i)
{
    return a && a->node_at && i < a->n_pairs ? a->node_at[i] : -1;
}

size_t oac_annotation_path(const oac_annotation *a, size_t i, const long **nodes)
{
    *nodes = NULL;
    if (!a || !a->path_at || i >= a->n_pairs || a->path_at[i + 1] == a->path_at[i])
        return 0;
    *nodes = a->path + a->path_at[i];
    return a->path_at[i + 1] - a->path_at[i];
}

size_t oac_annotation_pair_count(const oac_annotation *a)
{
    return a ? a->n_pairs : 0;
}

const oac_annotate_pair *oac_annotation_pair(const oac_annotation *a, size_t i)
{
    return a && i < a->n_pairs ? &a->pairs[i] : NULL;
}

const char *oac_annotation_config(const oac_annotation *a)
{
    return a ? a->config : NULL;
}

const char *oac_annotation_output(const oac_annotation *a)
{
    return a ? a->output : NULL;
}

size_t oac_annotation_count(const oac_annotation *a, oac_verdict v)
{
    size_t n = 0;
    for (size_t i = 0; a && i < a->n_pairs; i++)
        n += a->pairs[i].verdict == v;
    return n;
}

/* A copy of s (NULL for NULL) in the arena; *failed on OOM. */
static const char *keep(oac_arena *ar, const char *s, bool *failed)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = oac_arena_bytes(ar, n);
    if (!p) {
        *failed = true;
        return NULL;
    }
    return memcpy(p, s, n);
}

/* ---- the state of one oac_annotate ------------------------------------ */

/* The annotations one pair needs, found in step 3, judged in step 4. */
typedef struct work {
    oac_value *past, *present;
    long node;                 /* the cache operator, -1 before step 3 */
    int in, out;
    long *chain;               /* its Identity links (present side first) */
    size_t n_chain, cap_chain;
    size_t n_out_links;        /* chain[0 .. n_out_links): the present side */
    bool traced;               /* step 3 found the operator */
} work;

typedef struct ast {
    oac_ctx *ctx;
    oac_annotation *a;
    oac_model *model;
    const oac_annotate_opts *opts;
    oac_genai_config *cfg;
    oac_graphs *g;
    oac_scope *s;              /* the main graph */
    work *w;                   /* parallel to a->pairs */
    size_t cap_w;
    uint8_t *reach;            /* per value of s: reached from a past */
    uint32_t *queue;
    /* Names of the main graph declared with a non-empty alias_of (outputs
     * and value_info) -> that declaration, or &mixed when two of them
     * disagree. */
    oac_strmap alias_of;
    bool failed;               /* out of memory in a message */
    bool with_config;          /* the pairs came with a configuration */
} ast;

/* A name of a pair (past, present, node, op_type): borrowed in a trace
 * (struct oac_annotation), else a copy in the annotation's arena. */
static const char *pair_name(ast *st, const char *s)
{
    return st->a->borrowed ? s : keep(st->a->arena, s, &st->failed);
}

/* A message formatted into the annotation's arena (NULL and st->failed
 * when out of memory). */
static const char *vformat(ast *st, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    char *m = n >= 0 ? oac_arena_bytes(st->a->arena, (size_t)n + 1) : NULL;
    if (m)
        vsnprintf(m, (size_t)n + 1, fmt, ap);
    else
        st->failed = true;
    return m;
}

/* Pair k's verdict and message. */
static void verdict(ast *st, size_t k, oac_verdict v, oac_refusal reason,
                    const char *fmt, ...) OAC_PRINTF(5, 6);
static void verdict(ast *st, size_t k, oac_verdict v, oac_refusal reason,
                    const char *fmt, ...)
{
    oac_annotate_pair *p = &st->a->pairs[k];
    va_list ap;
    va_start(ap, fmt);
    p->message = vformat(st, fmt, ap);
    va_end(ap);
    p->verdict = v;
    p->reason = reason;
}

/* A message in the annotation's arena (NULL and st->failed on OOM). */
static const char *format(ast *st, const char *fmt, ...) OAC_PRINTF(2, 3);
static const char *format(ast *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *m = vformat(st, fmt, ap);
    va_end(ap);
    return m;
}

/* Refuse pair k for reason, saying why and what to change. */
#define refuse(st, k, reason, ...) \
    verdict((st), (k), OAC_VERDICT_REFUSED, (reason), __VA_ARGS__)

static bool refused(const ast *st, size_t k)
{
    return st->a->pairs[k].verdict == OAC_VERDICT_REFUSED;
}

/* ---- step 1: pairs ----------------------------------------------------- */

/* Add the pair (past, present name); present is copied.  The callers
 * visit each graph input once and pair it at most once. */
static int add_pair(ast *st, oac_value *past, const char *present)
{
    oac_annotation *a = st->a;
    if (oac_grow(st->ctx, (void **)&a->pairs, &a->cap, a->n_pairs + 1,
                 sizeof *a->pairs) != OAC_OK ||
        oac_grow(st->ctx, (void **)&st->w, &st->cap_w, a->n_pairs + 1,
                 sizeof *st->w) != OAC_OK)
        return OAC_ENOMEM;
    oac_annotate_pair *p = &a->pairs[a->n_pairs];
    work *w = &st->w[a->n_pairs];
    memset(p, 0, sizeof *p);
    memset(w, 0, sizeof *w);
    p->input_port = p->output_port = -1;
    p->past = pair_name(st, past->name);
    p->present = pair_name(st, present);
    w->past = past;
    w->present = oac_scope_local(st->s, present);
    w->node = -1;
    a->n_pairs++;
    return st->failed ? OAC_ENOMEM : OAC_OK;
}

/* Step 1 is annotate/pairs.c's (contract 9.1: structure, config and
 * names, one pairing for check, annotate and run). */
static int pairs_found(ast *st)
{
    oac_kv_pair *p = NULL;
    size_t n = 0;
    int rc = oac_kv_pairs_find(st->ctx, &p, &n, st->cfg, st->s);
    for (size_t i = 0; rc == OAC_OK && i < n; i++)
        rc = add_pair(st, (oac_value *)p[i].past, p[i].present_name);
    oac_kv_pairs_free(st->ctx, p, n);
    return rc;
}

/* ---- step 2: GenAI's sharing rules -------------------------------------- */

static bool has_input(const oac_scope *s, const char *name)
{
    oac_value *v = oac_scope_local(s, name);
    return v && v->kind == OAC_VAL_INPUT;
}

/* The configuration's refusal of every pair GenAI would not share
 * (contract 7 step 2): config_reason, beside the trace's reason (contract
 * 9.5: both are reported); a pair the trace kept becomes refused. */
static void config_rules(ast *st)
{
    const oac_genai_config *c = st->cfg;
    if (!c || st->opts->ignore_config)
        return;
    bool scatter = has_input(st->s, c->write_indices) &&
                   has_input(st->s, c->nonpad_kv_seqlen);
    for (size_t k = 0; k < st->a->n_pairs; k++) {
        oac_annotate_pair *p = &st->a->pairs[k];
        const char *m = NULL;
        if (c->num_beams != 1) {
            p->config_reason = OAC_REFUSAL_BEAM_SEARCH;
            m = format(st, "%s sets search.num_beams to %lld: GenAI gives each beam its "
                       "own cache and copies them when beams are reordered, so '%s' "
                       "cannot share '%s''s buffer; set num_beams to 1 (greedy or "
                       "sampling search), or pass --ignore-config to annotate for "
                       "another runtime", c->path, (long long)c->num_beams, p->present,
                       p->past);
        } else if (!c->share_buffer && !scatter) {
            p->config_reason = OAC_REFUSAL_CONFIG_DISABLED;
            m = format(st, "%s turns sharing off: search.past_present_share_buffer is "
                       "not true and the decoder lacks a '%s' or '%s' input (GenAI's "
                       "static-scatter cache), so GenAI gives '%s' a buffer of its own; "
                       "set search.past_present_share_buffer to true, or pass "
                       "--ignore-config", c->path, c->write_indices, c->nonpad_kv_seqlen,
                       p->present);
        }
        if (!m)
            continue;
        if (refused(st, k))
            p->message = format(st, "%s; and %s", p->message ? p->message : "", m);
        else
            verdict(st, k, OAC_VERDICT_REFUSED, OAC_REFUSAL_NONE, "%s", m);
    }
}

/* ---- step 3: tracing ------------------------------------------------------ */

static int push_chain(ast *st, work *w, long node)
{
    if (oac_grow(st->ctx, (void **)&w->chain, &w->cap_chain, w->n_chain + 1,
                 sizeof *w->chain) != OAC_OK)
        return OAC_ENOMEM;
    w->chain[w->n_chain++] = node;
    return OAC_OK;
}

/* v followed back through Identity links (port 0 -> 0) to the first value
 * no Identity made; the links passed are appended to w's chain when w is
 * not NULL.  NULL for a broken link (an Identity without input) or a
 * chain longer than the graph (a cycle in a hostile file). */
static oac_value *through_identity(ast *st, oac_value *v, work *w, int *rc)
{
    const oac_scope *s = st->s;
    for (size_t steps = 0; v && steps <= s->n_nodes; steps++) {
        if (v->kind != OAC_VAL_NODE_OUTPUT || v->port != 0 ||
            !oac_op_is(s->nodes[v->producer].op, OAC_OP_IDENTITY))
            return v;
        if (w && (*rc = push_chain(st, w, v->producer)) != OAC_OK)
            return NULL;
        v = oac_node_input(s, v->producer, 0);
    }
    return NULL;
}

/* The verdict for (in -> out) of node i: the section-6 table's, and for
 * the section-2 cache updates (pairs listed, off that table) their pair
 * under their condition. */
static oac_pair_verdict judge(const oac_scope *s, long i, int in, int out,
                              const char **why)
{
    const oac_node *n = &s->nodes[i];
    oac_pair_verdict v = oac_op_pair_judge(n->op, n->proto, in, out, why);
    if (v != OAC_PAIR_UNVERIFIED || !n->op || n->op->alias != OAC_AL_PAIRS)
        return v;
    for (size_t k = 0; k < n->op->n_pairs; k++)
        if (n->op->pairs[k].in == in && n->op->pairs[k].out == out)
            return oac_op_pair_in_place(n->op, n->proto, k, why)
                       ? OAC_PAIR_IN_PLACE : OAC_PAIR_CONDITION;
    return OAC_PAIR_NOT_IN_ROW;
}

/* Mark every value of s computed from `from` (itself included) in
 * st->reach: one walk over the uses, bounded by the scope's size. */
static int reach_from(ast *st, const oac_value *from)
{
    const oac_scope *s = st->s;
    size_t nv = s->n_values;
    if (!st->reach) {
        st->reach = oac_alloc(st->ctx, nv ? nv : 1);
        st->queue = oac_calloc(st->ctx, nv ? nv : 1, sizeof *st->queue);
        if (!st->reach || !st->queue)
            return OAC_ENOMEM;
    }
    memset(st->reach, 0, nv);
    size_t head = 0, tail = 0;
    uint32_t id0 = (uint32_t)(from->id - s->first_id);
    st->reach[id0] = 1;
    st->queue[tail++] = id0;
    while (head < tail) {
        const oac_value *v = &s->values_block[st->queue[head++]];
        for (uint32_t u = 0; u < v->n_uses; u++) {
            long ni = v->uses[u].node;
            const oac_node *n = &s->nodes[ni];
            for (size_t o = 0; o < n->proto->n_output; o++) {
                oac_value *x = oac_node_output(s, ni, o);
                if (!x || x->scope != s)
                    continue;
                uint32_t xi = (uint32_t)(x->id - s->first_id);
                if (!st->reach[xi]) {
                    st->reach[xi] = 1;
                    st->queue[tail++] = xi;
                }
            }
        }
    }
    return OAC_OK;
}

static bool reached(const ast *st, const oac_value *v)
{
    return v && v->scope == st->s && st->reach[v->id - st->s->first_id];
}

static const char *op_of(const oac_node *n)
{
    return n->proto->op_type ? n->proto->op_type : "";
}

/* Node i of the main graph is pair k's operator (its name, type and, in
 * a trace, its index). */
static void set_node(ast *st, size_t k, long i)
{
    const oac_node *n = &st->s->nodes[i];
    st->a->pairs[k].node = pair_name(st, n->display);
    st->a->pairs[k].op_type = pair_name(st, op_of(n));
    if (st->a->node_at)
        st->a->node_at[k] = i;
}

/* Record the operator found for pair k (node, ports, names). */
static void note_node(ast *st, size_t k, long i, int in, int out)
{
    oac_annotate_pair *p = &st->a->pairs[k];
    st->w[k].node = i;
    st->w[k].in = in;
    st->w[k].out = out;
    set_node(st, k, i);
    p->input_port = in;
    p->output_port = out;
}

/* The present v (not computed from the past): delta-output when a node
 * reading it also reads the past or a value computed from it (the update
 * the new positions go into), else not-derived. */
static void not_from_past(ast *st, size_t k, const oac_value *v)
{
    const oac_scope *s = st->s;
    const char *past = st->a->pairs[k].past, *present = st->a->pairs[k].present;
    for (uint32_t u = 0; v->scope == s && u < v->n_uses; u++) {
        long ni = v->uses[u].node;
        const oac_node *n = &s->nodes[ni];
        for (size_t j = 0; j < n->proto->n_input; j++) {
            if (!reached(st, oac_node_input(s, ni, j)))
                continue;
            /* The update the new positions go into is the cache operator
             * the report names (ports: none of it is the present). */
            set_node(st, k, ni);
            refuse(st, k, OAC_REFUSAL_DELTA_OUTPUT,
                   "'%s' holds only the new positions: it is what node '%s' (%s) "
                   "writes into '%s', not the updated cache; export the cache "
                   "operator's output (the whole cache, past and new positions) as "
                   "'%s'", present, n->display, op_of(n), past, present);
            return;
        }
    }
    refuse(st, k, OAC_REFUSAL_NOT_DERIVED,
           "'%s' is not computed from '%s': no path in the graph leads from the past "
           "to it, so they cannot be one buffer; export as '%s' the output of the "
           "operator that writes the new positions into '%s', or pair it with the "
           "past it is made from (--config)", present, past, present, past);
}

/* What a refused operator's message ends with: its row's hint, or the
 * general advice. */
static const char *advice(const char *why)
{
    return why ? why
               : "export the update as GroupQueryAttention (past_present_share_buffer), "
                 "or as TensorScatter into a fixed-capacity cache read by Attention "
                 "with nonpad_kv_seqlen";
}

/* The start of pair k's trace: the present followed back through
 * Identity links to the value that made it.  *v is that value, a node
 * output of an operator, when the trace goes on; NULL when this decided
 * the pair (a refusal, or an Identity state passed through). */
static int trace_start(ast *st, size_t k, oac_value **out)
{
    const oac_scope *s = st->s;
    work *w = &st->w[k];
    const char *past = st->a->pairs[k].past, *present = st->a->pairs[k].present;
    int rc = OAC_OK;
    *out = NULL;
    if (!w->present || w->present->output_index < 0) {
        refuse(st, k, OAC_REFUSAL_NOT_DERIVED,
               "the model has no output '%s' for '%s'%s; name the present output the "
               "decoder really has (config model.decoder.outputs)", present, past,
               st->with_config ? " although the config names it" : "");
        return OAC_OK;
    }
    oac_value *v = through_identity(st, w->present, w, &rc);
    if (rc)
        return rc;
    if (!v) {
        refuse(st, k, OAC_REFUSAL_UNSUPPORTED_CHAIN,
               "'%s' comes from an Identity chain that has no start (an Identity "
               "without input, or a cycle); repair the export", present);
        return OAC_OK;
    }
    if (v == w->past && w->n_chain) {
        /* Identity(past): a state passed through, in place by definition
         * (contract 9.1); the Identity reading the past is the operator,
         * the others its links. */
        long id = w->chain[--w->n_chain];
        w->n_out_links = w->n_chain;
        note_node(st, k, id, 0, 0);
        w->traced = true;
        return OAC_OK;
    }
    if (v == w->past) {
        refuse(st, k, OAC_REFUSAL_CONSTANT_PRESENT,
               "'%s' is the graph input '%s' returned unchanged: the model never "
               "writes the cache, so there is no update to make in place; export the "
               "present as the output of the operator that writes the new positions "
               "into '%s'", present, past, past);
        return OAC_OK;
    }
    if (v->kind != OAC_VAL_NODE_OUTPUT ||
        oac_op_has(s->nodes[v->producer].op, OAC_OPF_CONSTANT)) {
        const char *what = v->kind == OAC_VAL_INPUT ? "the graph input"
                           : v->kind == OAC_VAL_INITIALIZER ? "the initializer"
                           : "the output of Constant node";
        const char *name = v->kind == OAC_VAL_NODE_OUTPUT
                               ? s->nodes[v->producer].display : v->name;
        refuse(st, k, OAC_REFUSAL_CONSTANT_PRESENT,
               "'%s' is %s '%s': it is not computed from '%s', so nothing updates the "
               "cache; export the present as the output of the operator that writes "
               "the new positions into '%s'", present, what, name, past, past);
        return OAC_OK;
    }
    *out = v;
    return OAC_OK;
}

static int trace(ast *st, size_t k)
{
    const oac_scope *s = st->s;
    work *w = &st->w[k];
    const char *past = st->a->pairs[k].past, *present = st->a->pairs[k].present;
    oac_value *v = NULL;
    int rc = trace_start(st, k, &v);
    if (rc || !v)
        return rc;

    long ni = v->producer;
    int out = v->port;
    const oac_node *n = &s->nodes[ni];
    size_t chain_out = w->n_chain;
    /* Inputs of the operator that are the past through Identity links. */
    const char *why = NULL;
    bool grows = false, direct = false;
    oac_pair_verdict grow_kind = OAC_PAIR_GROWS;
    int grow_in = -1, other_in = -1;
    oac_pair_verdict other = OAC_PAIR_UNVERIFIED;
    for (size_t j = 0; j < n->proto->n_input && j <= INT32_MAX; j++) {
        w->n_chain = chain_out;
        oac_value *u = through_identity(st, oac_node_input(s, ni, j), w, &rc);
        if (rc)
            return rc;
        if (u != w->past)
            continue;
        direct = true;
        const char *y = NULL;
        oac_pair_verdict jv = judge(s, ni, (int)j, out, &y);
        if (jv == OAC_PAIR_IN_PLACE) {
            w->n_out_links = chain_out;
            note_node(st, k, ni, (int)j, out);
            w->traced = true;
            return OAC_OK;
        }
        if (jv == OAC_PAIR_GROWS || jv == OAC_PAIR_CONDITION) {
            if (!grows) {
                grows = true;
                grow_in = (int)j;
                grow_kind = jv;
                why = y;
            }
        } else if (other_in < 0) {
            other_in = (int)j;
            other = jv;
            if (!grows)
                why = y;
        }
    }
    w->n_chain = chain_out;
    if (grows) {
        note_node(st, k, ni, grow_in, out);
        refuse(st, k, OAC_REFUSAL_GROWING_CACHE,
               "'%s' is output %d of node '%s' (%s), which %s '%s' (input %d): %s",
               present, out, n->display, op_of(n),
               grow_kind == OAC_PAIR_GROWS ? "is always longer than"
                                           : "as configured in the file grows past",
               past, grow_in, advice(why));
        return OAC_OK;
    }
    if (direct) {
        note_node(st, k, ni, other_in, out);
        if (other == OAC_PAIR_NOT_IN_ROW)
            refuse(st, k, OAC_REFUSAL_UNSUPPORTED_CHAIN,
                   "'%s' is output %d of node '%s' (%s), which does not update its "
                   "input %d ('%s') in place: that output is not the operator's present; "
                   "export the operator's present output as '%s'%s%s", present, out,
                   n->display, op_of(n), other_in, past, present, why ? " (" : "",
                   why ? why : "");
        else
            refuse(st, k, OAC_REFUSAL_UNSUPPORTED_CHAIN,
                   "'%s' is computed from '%s' by node '%s' (%s), which is not a cache "
                   "operator annotate knows (doc/annotations.md lists them): %s", present, past,
                   n->display, op_of(n), advice(NULL));
        return OAC_OK;
    }

    /* The past does not reach this operator through Identity links alone. */
    if ((rc = reach_from(st, w->past)) != OAC_OK)
        return rc;
    if (!reached(st, v)) {
        not_from_past(st, k, v);
        return OAC_OK;
    }
    for (size_t j = 0; j < n->proto->n_input && j <= INT32_MAX; j++) {
        oac_value *u = through_identity(st, oac_node_input(s, ni, j), NULL, &rc);
        if (!reached(st, u))
            continue;
        const char *y = NULL;
        oac_pair_verdict jv = judge(s, ni, (int)j, out, &y);
        note_node(st, k, ni, (int)j, out);
        if (jv == OAC_PAIR_GROWS || jv == OAC_PAIR_CONDITION) {
            refuse(st, k, OAC_REFUSAL_GROWING_CACHE,
                   "'%s' is output %d of node '%s' (%s), which is longer than its "
                   "input %d (computed from '%s'): %s", present, out, n->display,
                   op_of(n), (int)j, past, advice(y));
            return OAC_OK;
        }
        if (jv == OAC_PAIR_IN_PLACE && u && u->kind == OAC_VAL_NODE_OUTPUT) {
            const oac_node *m = &s->nodes[u->producer];
            if (m->op && m->op->alias == OAC_AL_PAIRS) {
                /* Two cache operators in a row: in place if both say so,
                 * which only the model can state (contract 3's chain). */
                refuse(st, k, OAC_REFUSAL_UNSUPPORTED_CHAIN,
                       "'%s' reaches input %d of node '%s' (%s) through node '%s' (%s), "
                       "a second cache operator: annotate follows one cache operator from "
                       "past to present, so it cannot state this chain; declare "
                       "output_alias on both nodes and alias_of '%s' on '%s' by hand (a "
                       "chain of updates is in place when each is declared), or make it "
                       "one update", past, (int)j, n->display, op_of(n), m->display,
                       op_of(m), past, present);
                return OAC_OK;
            }
            refuse(st, k, OAC_REFUSAL_UNSUPPORTED_CHAIN,
                   "'%s' reaches input %d of node '%s' (%s) through node '%s' (%s): "
                   "annotate follows only Identity links and one cache operator from "
                   "past to present; feed '%s' to the cache operator directly (move "
                   "'%s' after the update or into the operator's attributes)",
                   past, (int)j, n->display, op_of(n), m->display, op_of(m), past,
                   m->display);
            return OAC_OK;
        }
    }
    note_node(st, k, ni, -1, out);
    st->a->pairs[k].input_port = -1;
    refuse(st, k, OAC_REFUSAL_UNSUPPORTED_CHAIN,
           "'%s' is made from '%s' by node '%s' (%s), which is not a cache operator "
           "annotate knows (doc/annotations.md lists them), e.g. a rank-changing Reshape: "
           "annotate follows only Identity links and one cache operator; make the "
           "cache operator's output the graph output '%s'", present, past, n->display,
           op_of(n), present);
    return OAC_OK;
}

/* The K and V pairs of one KV-cache node are shared together (contract 6:
 * declaring one half is alias-unsupported): a traced pair whose node has
 * another pair that is not traced to the past of a listed pair is
 * refused with the sibling's reason. */
static void kv_siblings(ast *st)
{
    const oac_scope *s = st->s;
    for (size_t k = 0; k < st->a->n_pairs; k++) {
        work *w = &st->w[k];
        if (!w->traced || refused(st, k))
            continue;
        const oac_node *n = &s->nodes[w->node];
        if (!oac_op_has(n->op, OAC_OPF_KV_CACHE))
            continue;
        oac_op_pair pp[OAC_OP_MAX_PAIRS];
        size_t np = oac_op_pairs(n->op, n->proto, pp, OAC_OP_MAX_PAIRS);
        for (size_t j = 0; j < np && j < OAC_OP_MAX_PAIRS && !refused(st, k); j++) {
            if (pp[j].in == w->in && pp[j].out == w->out)
                continue;
            size_t sib = SIZE_MAX;
            for (size_t m = 0; m < st->a->n_pairs; m++)
                if (m != k && st->w[m].node == w->node && st->w[m].in == pp[j].in &&
                    st->w[m].out == pp[j].out)
                    sib = m;
            const char *in_name = n->proto->input[pp[j].in];
            const char *out_name = n->proto->output[pp[j].out];
            if (sib == SIZE_MAX)
                refuse(st, k, OAC_REFUSAL_UNSUPPORTED_CHAIN,
                       "node '%s' (%s) also updates '%s' (input %d) into '%s' (output "
                       "%d), which is not paired with a past input: the operator shares "
                       "K and V together or not at all; pair both (config "
                       "past_key_names and past_value_names)", n->display, op_of(n),
                       in_name, pp[j].in, out_name, pp[j].out);
            else if (refused(st, sib))
                refuse(st, k, st->a->pairs[sib].reason,
                       "node '%s' (%s) shares K and V together, and its other pair "
                       "'%s' -> '%s' is refused (%s): %s", n->display, op_of(n),
                       st->a->pairs[sib].past, st->a->pairs[sib].present,
                       oac_refusal_name(st->a->pairs[sib].reason),
                       st->a->pairs[sib].message ? st->a->pairs[sib].message : "");
        }
    }
}

/* ---- step 4: annotations ------------------------------------------------- */

static Onnx__GraphProto *graph_of(ast *st)
{
    return st->model->proto->graph;
}

static Onnx__NodeProto *node_proto(ast *st, long i)
{
    return graph_of(st)->node[i];
}

/* Is output_alias {out, in, MUST_ALIAS} on node i already (1), missing
 * (0), or contradicted (-1, *what describes the entry)? */
static int alias_state(ast *st, long i, int out, int in, char *what, size_t len)
{
    const Onnx__NodeProto *n = node_proto(st, i);
    int found = 0;
    for (size_t e = 0; e < n->n_output_alias; e++) {
        const Onnx__ValueAliasProto *x = n->output_alias[e];
        int32_t o = x->has_output_index ? x->output_index : 0;
        int32_t ii = x->has_input_index ? x->input_index : 0;
        bool must = x->has_kind && x->kind == ONNX__VALUE_ALIAS_PROTO__KIND__MUST_ALIAS;
        if (o == out && ii == in && must) {
            found = 1;
        } else if (o == out || (ii == in && must)) {
            snprintf(what, len, "output_alias {output %d, input %d, %s} (entry %zu)", o, ii,
                     must ? "MUST_ALIAS" : "kind not MUST_ALIAS", e);
            return -1;
        }
    }
    return found;
}

/* Where vi declares tensor dim `axis` (its slot in the shape's dim
 * array), or NULL; *rank is the declared rank, -1 without a shape. */
static Onnx__TensorShapeProto__Dimension **dim_at(const Onnx__ValueInfoProto *vi,
                                                  int axis, int *rank)
{
    *rank = -1;
    if (!vi || !vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
        !vi->type->tensor_type || !vi->type->tensor_type->shape)
        return NULL;
    Onnx__TensorShapeProto *sh = vi->type->tensor_type->shape;
    *rank = sh->n_dim > INT32_MAX ? INT32_MAX : (int)sh->n_dim;
    return axis >= 0 && (size_t)axis < sh->n_dim && sh->dim[axis] ? &sh->dim[axis] : NULL;
}

/* The capacity axis of node i for a past of rank `rank`: the row's axis
 * attribute when the node sets it, else the row's default; -1 when out
 * of range. */
static int capacity_axis(ast *st, long i, int rank)
{
    const oac_node *n = &st->s->nodes[i];
    if (oac_op_is(n->op, OAC_OP_IDENTITY))
        return -1;             /* a state passed through: no capacity */
    int64_t ax = n->op ? n->op->axis_default : 0;
    for (size_t a = 0; n->op && n->op->axis_attr && a < n->proto->n_attribute; a++) {
        const Onnx__AttributeProto *at = n->proto->attribute[a];
        if (at->name && strcmp(at->name, n->op->axis_attr) == 0 && at->has_i)
            ax = at->i;
    }
    if (ax < 0)
        ax += rank;
    return rank > 0 && ax >= 0 && ax < rank ? (int)ax : -1;
}

static bool is_param(const Onnx__TensorShapeProto__Dimension *d)
{
    return d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
}

/* What the two capacity dims become: *set_p / *set_q true when they
 * change, to static *value (> 0) or the symbol (value 0).  false with a
 * message in what on a contradiction. */
static bool capacity_plan(ast *st, const Onnx__TensorShapeProto__Dimension *pd,
                          const Onnx__TensorShapeProto__Dimension *qd, bool *set_p,
                          bool *set_q, int64_t *value, char *what, size_t len)
{
    int64_t want = st->opts->capacity;
    *set_p = *set_q = false;
    *value = 0;
    /* Contract 9.5: the config's max_length (or context_length) when
     * --capacity is not given and neither dim is static already. */
    if (want == 0 && st->cfg && is_param(pd) && is_param(qd))
        want = st->cfg->max_length > 0 ? st->cfg->max_length : st->cfg->context_length;
    if (want > 0) {
        const Onnx__TensorShapeProto__Dimension *d[2] = { pd, qd };
        for (int i = 0; i < 2; i++)
            if (!is_param(d[i]) && d[i]->dim_value != want) {
                snprintf(what, len, "the %s declares a static capacity of %lld, and "
                         "--capacity asks for %lld", i ? "present" : "past",
                         (long long)d[i]->dim_value, (long long)want);
                return false;
            }
        *value = want;
        *set_p = is_param(pd);
        *set_q = is_param(qd);
        return true;
    }
    if (!is_param(pd) && !is_param(qd)) {
        if (pd->dim_value == qd->dim_value)
            return true;
        snprintf(what, len, "the past declares a static capacity of %lld and the "
                 "present %lld", (long long)pd->dim_value, (long long)qd->dim_value);
        return false;
    }
    if (!is_param(pd) || !is_param(qd)) {
        *value = is_param(pd) ? qd->dim_value : pd->dim_value;
        *set_p = is_param(pd);
        *set_q = is_param(qd);
        return true;
    }
    bool pn = pd->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
              pd->dim_param;
    bool qn = qd->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
              qd->dim_param;
    if (pn && qn && strcmp(pd->dim_param, qd->dim_param) == 0)
        return true;            /* one symbol for both already */
    *set_p = !pn || strcmp(pd->dim_param, KV_CAPACITY) != 0;
    *set_q = !qn || strcmp(qd->dim_param, KV_CAPACITY) != 0;
    return true;
}

/* The output declaration of the present (GraphProto.output). */
static Onnx__ValueInfoProto *present_vi(ast *st, const work *w)
{
    return graph_of(st)->output[w->present->output_index];
}

static Onnx__ValueInfoProto *past_vi(ast *st, const work *w)
{
    return graph_of(st)->input[w->past->input_index];
}

/* What a name declared with two different alias_of maps to. */
static const Onnx__ValueInfoProto mixed;

/* st->alias_of: the declarations of the main graph that state alias_of
 * (outputs, then value_info), one walk. */
static int index_alias_of(ast *st)
{
    const Onnx__GraphProto *g = graph_of(st);
    for (size_t f = 0; f < 2; f++) {
        Onnx__ValueInfoProto **vis = f ? g->value_info : g->output;
        size_t n = f ? g->n_value_info : g->n_output;
        for (size_t i = 0; i < n; i++) {
            const Onnx__ValueInfoProto *vi = vis[i];
            if (!vi->name || !vi->alias_of || !*vi->alias_of)
                continue;
            const Onnx__ValueInfoProto *had = oac_strmap_get(&st->alias_of, vi->name);
            if (had && (had == &mixed || strcmp(had->alias_of, vi->alias_of) == 0))
                continue;
            if (oac_strmap_put(&st->alias_of, vi->name, had ? (void *)&mixed
                                                            : (void *)vi) != OAC_OK)
                return OAC_ENOMEM;
        }
    }
    return OAC_OK;
}

/* Compare pair k's annotations with what the model has: refuse a
 * contradiction; *changes counts what step 4 would write. */
static void judge_existing(ast *st, size_t k, size_t *changes)
{
    work *w = &st->w[k];
    const char *past = st->a->pairs[k].past, *present = st->a->pairs[k].present;
    char what[256];
    *changes = 0;
    Onnx__ValueInfoProto *pv = past_vi(st, w);
    if (pv->has_access && pv->access != ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE) {
        refuse(st, k, OAC_REFUSAL_CONFLICTING_ANNOTATION,
               "'%s' is declared access = %s: the model says the cache is not written; "
               "remove that access field (or set it to READ_WRITE) and run annotate "
               "again", past, pv->access == ONNX__VALUE_INFO_PROTO__ACCESS__READ_ONLY
                                  ? "READ_ONLY" : "an unknown value");
        return;
    }
    *changes += !pv->has_access;
    /* Every node of the chain: the operator, and its Identity links. */
    for (size_t c = 0; c <= w->n_chain; c++) {
        long i = c < w->n_chain ? w->chain[c] : w->node;
        int out = c < w->n_chain ? 0 : w->out, in = c < w->n_chain ? 0 : w->in;
        int r = alias_state(st, i, out, in, what, sizeof what);
        if (r < 0) {
            refuse(st, k, OAC_REFUSAL_CONFLICTING_ANNOTATION,
                   "node '%s' (%s) already has %s, where '%s' -> '%s' needs "
                   "{output %d, input %d, MUST_ALIAS}; remove that entry (or annotate "
                   "the original export)", st->s->nodes[i].display,
                   op_of(&st->s->nodes[i]), what, past, present, out, in);
            return;
        }
        *changes += r == 0;
    }
    /* alias_of on the present, in every declaration of it. */
    const Onnx__ValueInfoProto *said = oac_strmap_get(&st->alias_of, present);
    if (said == &mixed || (said && strcmp(said->alias_of, past) != 0)) {
        refuse(st, k, OAC_REFUSAL_CONFLICTING_ANNOTATION,
               "'%s' is declared alias_of = '%s', not '%s'; remove that alias_of from "
               "its declarations (or annotate the original export)", present,
               said == &mixed ? "two different values" : said->alias_of, past);
        return;
    }
    *changes += !said;
    /* The capacity dims. */
    int rank, qrank;
    (void)dim_at(pv, -1, &rank);
    int ax = capacity_axis(st, w->node, rank);
    Onnx__TensorShapeProto__Dimension **pd = dim_at(pv, ax, &rank);
    Onnx__TensorShapeProto__Dimension **qd = dim_at(present_vi(st, w), ax, &qrank);
    bool sp, sq;
    int64_t value;
    if (pd && qd && rank == qrank) {
        if (!capacity_plan(st, *pd, *qd, &sp, &sq, &value, what, sizeof what)) {
            refuse(st, k, OAC_REFUSAL_CONFLICTING_ANNOTATION,
                   "%s on axis %d ('%s', '%s'): one buffer has one capacity; make the "
                   "two declarations agree%s", what, ax, past, present,
                   st->opts->capacity > 0 ? " or leave out --capacity" : "");
            return;
        }
        *changes += sp + sq;
    }
}

/* Pair k holds: its verdict and a message saying what annotates it. */
static void describe(ast *st, size_t k, size_t changes)
{
    oac_annotate_pair *p = &st->a->pairs[k];
    const work *w = &st->w[k];
    const oac_node *n = &st->s->nodes[w->node];
    size_t links = w->n_chain;
    char chain[64] = "";
    if (links)
        snprintf(chain, sizeof chain, " and %zu Identity link%s", links,
                 links == 1 ? "" : "s");
    verdict(st, k, changes ? OAC_VERDICT_ANNOTATED : OAC_VERDICT_KEPT, OAC_REFUSAL_NONE,
           "node '%s' (%s) writes '%s' (output %d) in place of '%s' (input %d)%s: "
           "access = READ_WRITE on '%s', output_alias on each node, alias_of = '%s' "
           "on '%s', one capacity for both%s", n->display, op_of(n), p->present, w->out,
           p->past, w->in, chain, p->past, p->past, p->present,
           changes ? "" : " (all already in the model)");
}

/* ---- step 4: writing into the tree ------------------------------------- */

static void *tree_alloc(ast *st, size_t n)
{
    void *p = oac_arena_alloc(st->model->arena, n);
    if (p && !oac_arena_zeroed(st->model->arena))
        memset(p, 0, n);
    return p;
}

static char *tree_str(ast *st, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = oac_arena_bytes(st->model->arena, n);
    return p ? memcpy(p, s, n) : NULL;
}

static int add_alias(ast *st, long i, int out, int in)
{
    char what[128];
    if (alias_state(st, i, out, in, what, sizeof what) != 0)
        return OAC_OK;          /* there already (kept), or judged before */
    Onnx__NodeProto *n = node_proto(st, i);
    Onnx__ValueAliasProto *e = tree_alloc(st, sizeof *e);
    Onnx__ValueAliasProto **arr = tree_alloc(st, (n->n_output_alias + 1) * sizeof *arr);
    if (!e || !arr)
        return OAC_ENOMEM;
    onnx__value_alias_proto__init(e);
    e->has_output_index = e->has_input_index = e->has_kind = 1;
    e->output_index = out;
    e->input_index = in;
    e->kind = ONNX__VALUE_ALIAS_PROTO__KIND__MUST_ALIAS;
    if (n->n_output_alias)
        memcpy(arr, n->output_alias, n->n_output_alias * sizeof *arr);
    arr[n->n_output_alias] = e;
    n->output_alias = arr;
    n->n_output_alias++;
    return OAC_OK;
}

/* Make *slot the static value (> 0) or the capacity symbol.  The loaded
 * tree shares equal Dimension messages between values (model/decode.c,
 * msg_slot), so the dimension is replaced by a new one, never written:
 * the other values that said past_seq_len keep saying it. */
static int set_dim(ast *st, Onnx__TensorShapeProto__Dimension **slot, int64_t value)
{
    Onnx__TensorShapeProto__Dimension *d = tree_alloc(st, sizeof *d);
    if (!d)
        return OAC_ENOMEM;
    *d = **slot;                /* its denotation and unknown fields */
    if (value > 0) {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = value;
    } else {
        if (!(d->dim_param = tree_str(st, KV_CAPACITY)))
            return OAC_ENOMEM;
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
    }
    *slot = d;
    return OAC_OK;
}

static int apply(ast *st, size_t k)
{
    work *w = &st->w[k];
    int rc;
    Onnx__ValueInfoProto *pv = past_vi(st, w), *qv = present_vi(st, w);
    pv->has_access = 1;
    pv->access = ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE;
    for (size_t c = 0; c <= w->n_chain; c++) {
        long i = c < w->n_chain ? w->chain[c] : w->node;
        if ((rc = c < w->n_chain ? add_alias(st, i, 0, 0)
                                 : add_alias(st, i, w->out, w->in)) != OAC_OK)
            return rc;
    }
    if (!qv->alias_of || strcmp(qv->alias_of, w->past->name) != 0) {
        if (!(qv->alias_of = tree_str(st, w->past->name)))
            return OAC_ENOMEM;
    }
    int rank, qrank;
    (void)dim_at(pv, -1, &rank);
    int ax = capacity_axis(st, w->node, rank);
    Onnx__TensorShapeProto__Dimension **pd = dim_at(pv, ax, &rank);
    Onnx__TensorShapeProto__Dimension **qd = dim_at(qv, ax, &qrank);
    bool sp, sq;
    int64_t value;
    char what[256];
    if (pd && qd && rank == qrank &&
        capacity_plan(st, *pd, *qd, &sp, &sq, &value, what, sizeof what)) {
        if ((sp && (rc = set_dim(st, pd, value)) != OAC_OK) ||
            (sq && (rc = set_dim(st, qd, value)) != OAC_OK))
            return rc;
    }
    return OAC_OK;
}

/* ---- oac_annotate ---------------------------------------------------------- */

static int find_config(ast *st, oac_diags *diags)
{
    const char *path = st->opts->config;
    char *found = NULL;
    int rc = OAC_OK;
    if (!path) {
        if ((rc = oac_genai_config_find(st->ctx, &found, st->model->path)) != OAC_OK)
            return rc;
        path = found;
    }
    if (path) {
        st->a->config = keep(st->a->arena, path, &st->failed);
        rc = st->failed ? OAC_ENOMEM : oac_genai_config_load(st->ctx, &st->cfg, path, diags);
    }
    oac_dealloc(st->ctx, found);
    return rc;
}

/* The traces' scratch (per pair chains, reach, queue), freed alike by
 * oac_annotate and oac_annotate_trace. */
static void trace_scratch_free(ast *st)
{
    for (size_t k = 0; st->a && st->w && k < st->a->n_pairs; k++)
        oac_dealloc(st->ctx, st->w[k].chain);
    oac_dealloc(st->ctx, st->w);
    oac_dealloc(st->ctx, st->reach);
    oac_dealloc(st->ctx, st->queue);
}

int oac_annotate(oac_ctx *ctx, oac_annotation **out, oac_model *model,
                 const oac_annotate_opts *opts, oac_diags *diags)
{
    static const oac_annotate_opts none = { 0 };
    if (!out)
        return oac_err(ctx, OAC_EINVAL, "annotate: no output");
    *out = NULL;
    if (!model || !model->proto || !diags)
        return oac_err(ctx, OAC_EINVAL, "annotate: no model or diagnostics");
    if (opts && opts->capacity < 0)
        return oac_err(ctx, OAC_EINVAL, "annotate: capacity %lld is negative",
                       (long long)opts->capacity);
    ast st = { .ctx = ctx, .model = model, .opts = opts ? opts : &none };
    int rc = OAC_OK;
    oac_strmap_init(&st.alias_of, ctx);
    if (!(st.a = oac_calloc(ctx, 1, sizeof *st.a))) {
        rc = OAC_ENOMEM;
        goto done;
    }
    st.a->ctx = ctx;
    if (!(st.a->arena = oac_arena_new(ctx))) {
        rc = OAC_ENOMEM;
        goto done;
    }
    st.a->partial = st.opts->partial;
    if ((rc = find_config(&st, diags)) != OAC_OK)
        goto done;
    if (!model->proto->graph)
        goto done;              /* no graph: no pairs */
    if ((rc = oac_graphs_build(ctx, &st.g, model->proto)) != OAC_OK)
        goto done;
    st.s = st.g->n_scopes ? st.g->scopes[0] : NULL;
    if (!st.s || st.s->kind != OAC_SCOPE_MAIN)
        goto done;
    /* 1. pairs */
    st.with_config = st.cfg != NULL;
    if ((rc = pairs_found(&st)) != OAC_OK)
        goto done;
    if (!st.a->n_pairs) {
        oac_where w = { .graph = st.s->name, .location = "/graph/output" };
        rc = oac_diag_add(diags, OAC_NO_CACHE_PAIRS, &w,
                          "annotate found no past/present pair in the main graph: no "
                          "graph output is reached from a graph input through a cache "
                          "operator (GroupQueryAttention, MultiHeadAttention, "
                          "DecoderMaskedMultiHeadAttention, Attention, SparseAttention, "
                          "PagedAttention, TensorScatter, CacheUpdate, PagedCacheUpdate), "
                          "%s%s, and no input follows the names past_key_values.N.key -> "
                          "present.N.key, past_N -> present_N or past* -> present*; "
                          "nothing was written",
                          st.cfg ? "the templates of " : "no configuration was given",
                          st.cfg ? st.cfg->path : "");
        goto done;
    }
    /* 3. trace (before 2: a model that cannot share keeps that reason) */
    for (size_t k = 0; k < st.a->n_pairs; k++)
        if ((rc = trace(&st, k)) != OAC_OK)
            goto done;
    kv_siblings(&st);
    /* 2. config */
    config_rules(&st);
    /* 4. existing annotations, then the tree */
    if ((rc = index_alias_of(&st)) != OAC_OK)
        goto done;
    for (size_t k = 0; k < st.a->n_pairs; k++) {
        size_t changes = 0;
        if (!refused(&st, k))
            judge_existing(&st, k, &changes);
        if (!refused(&st, k))
            describe(&st, k, changes);
    }
    /* A conflict on one half of a K/V node refuses the other half too. */
    kv_siblings(&st);
    size_t n_refused = 0;
    for (size_t k = 0; k < st.a->n_pairs; k++)
        n_refused += refused(&st, k);
    if (n_refused == 0 || st.opts->partial)
        for (size_t k = 0; k < st.a->n_pairs; k++)
            if (!refused(&st, k) && st.a->pairs[k].verdict == OAC_VERDICT_ANNOTATED &&
                (rc = apply(&st, k)) != OAC_OK)
                goto done;
    if (st.failed)
        rc = oac_err(ctx, OAC_ENOMEM, "out of memory");
done:
    trace_scratch_free(&st);
    oac_strmap_fini(&st.alias_of);
    oac_graphs_free(st.g);
    oac_genai_config_free(st.cfg);
    if (rc != OAC_OK && rc != OAC_EPARSE) {
        oac_annotation_free(st.a);
        return rc == OAC_ENOMEM ? oac_err(ctx, OAC_ENOMEM, "out of memory") : rc;
    }
    *out = st.a;
    return rc;
}

/* Pair k's path, past to present, appended to the trace's paths: the
 * past side's links (the chain's tail, read backwards), the operator,
 * the present side's (its head, backwards); nothing for a refused pair. */
static int keep_path(ast *st, size_t k)
{
    oac_annotation *a = st->a;
    const work *w = &st->w[k];
    a->path_at[k] = a->n_path;
    if (!w->traced) {
        a->path_at[k + 1] = a->n_path;
        return OAC_OK;
    }
    if (oac_grow(st->ctx, (void **)&a->path, &a->cap_path, a->n_path + w->n_chain + 1,
                 sizeof *a->path) != OAC_OK)
        return OAC_ENOMEM;
    for (size_t j = w->n_chain; j > w->n_out_links; j--)
        a->path[a->n_path++] = w->chain[j - 1];
    a->path[a->n_path++] = w->node;
    for (size_t j = w->n_out_links; j > 0; j--)
        a->path[a->n_path++] = w->chain[j - 1];
    a->path_at[k + 1] = a->n_path;
    return OAC_OK;
}

int oac_annotate_trace(oac_ctx *ctx, oac_annotation **out, const oac_scope *s,
                       const oac_kv_pair *p, size_t n, bool with_config)
{
    static const oac_annotate_opts none = { 0 };
    ast st = { .ctx = ctx, .s = (oac_scope *)s, .opts = &none, .with_config = with_config };
    int rc = OAC_ENOMEM;
    *out = NULL;
    if (!(st.a = oac_calloc(ctx, 1, sizeof *st.a)) || !(st.a->ctx = ctx) ||
        !(st.a->arena = oac_arena_new(ctx)))
        goto done;
    st.a->borrowed = true;
    if (!(st.a->node_at = oac_alloc(ctx, (n ? n : 1) * sizeof *st.a->node_at)) ||
        !(st.a->path_at = oac_calloc(ctx, n + 1, sizeof *st.a->path_at)))
        goto done;
    for (size_t i = 0; i < n; i++)
        st.a->node_at[i] = -1;
    /* Room for every pair at once (add_pair grows by doubling). */
    if (n && (oac_grow(ctx, (void **)&st.a->pairs, &st.a->cap, n, sizeof *st.a->pairs) ||
              oac_grow(ctx, (void **)&st.w, &st.cap_w, n, sizeof *st.w)))
        goto done;
    rc = OAC_OK;
    for (size_t i = 0; rc == OAC_OK && i < n; i++)
        rc = add_pair(&st, (oac_value *)p[i].past, p[i].present_name);
    for (size_t k = 0; rc == OAC_OK && k < st.a->n_pairs; k++)
        if ((rc = trace(&st, k)) == OAC_OK)
            rc = keep_path(&st, k);
    if (rc == OAC_OK && st.failed)
        rc = OAC_ENOMEM;
done:
    trace_scratch_free(&st);
    if (rc != OAC_OK) {
        oac_annotation_free(st.a);
        return oac_err(ctx, OAC_ENOMEM, "out of memory");
    }
    *out = st.a;
    return OAC_OK;
}

/* ---- step 5: writing and checking ---------------------------------------- */

int oac_annotation_write(oac_ctx *ctx, oac_annotation *a, const oac_model *model,
                         const char *path, oac_diags *diags)
{
    if (!a || !model || !path || !diags)
        return oac_err(ctx, OAC_EINVAL, "annotate: nothing to write");
    a->output = NULL;
    if ((oac_annotation_count(a, OAC_VERDICT_REFUSED) && !a->partial) || !a->n_pairs)
        return OAC_OK;          /* a refused pair, or none (no-cache-pairs), writes nothing */
    char *tmp = NULL;
    oac_model *back = NULL;
    oac_analysis *an = NULL;
    int rc = oac_model_save_temp(ctx, model, path, &tmp);
    if (rc == OAC_EIO)
        goto unwritten;
    if (rc != OAC_OK)
        goto done;
    /* The file as written, with its external data resolved beside it;
     * the call's own output, not one of its inputs (guard.c). */
    ctx->guard_off = true;
    rc = oac_model_load(ctx, &back, tmp, diags);
    ctx->guard_off = false;
    if (rc == OAC_OK)
        rc = oac_check_passes(ctx, &an, back, NULL, diags);
    if (rc != OAC_OK)
        goto done;
    if (oac_diags_count_severity(diags, OAC_SEV_ERROR) > 0)
        goto done;              /* on any error nothing is written */
    bool failed = false;
    const char *written = keep(a->arena, path, &failed);
    if (failed) {
        rc = oac_err(ctx, OAC_ENOMEM, "out of memory");
        goto done;
    }
    if (rename(tmp, path) != 0) {
        oac_err(ctx, OAC_EIO, "%s: cannot rename %s into place: %s", path, tmp,
                strerror(errno));
        goto unwritten;
    }
    oac_dealloc(ctx, tmp);
    tmp = NULL;
    a->output = written;
    goto done;
unwritten:
    /* A finding of the call, in the report (contract 8): a full disk or
     * a folder without write permission is no reason to lose the pairs. */
    rc = oac_diag_add(diags, OAC_OUTPUT_WRITE_FAILED, NULL,
                      "annotate: the annotated model was not written: %s", oac_errmsg(ctx));
done:
    oac_analysis_free(an);
    oac_model_free(back);
    if (tmp) {
        unlink(tmp);
        oac_dealloc(ctx, tmp);
    }
    return rc;
}

int oac_annotation_write_buffer(oac_ctx *ctx, oac_annotation *a, const oac_model *model,
                                uint8_t **out, size_t *out_len, oac_diags *diags)
{
    *out = NULL;
    *out_len = 0;
    if (!a || !model || !diags)
        return oac_err(ctx, OAC_EINVAL, "annotate: nothing to write");
    a->output = NULL;
    if ((oac_annotation_count(a, OAC_VERDICT_REFUSED) && !a->partial) || !a->n_pairs)
        return OAC_OK;          /* a refused pair, or none, writes nothing */
    uint8_t *bytes = NULL;
    size_t len = 0;
    oac_model *back = NULL;
    oac_analysis *an = NULL;
    int rc = oac_model_save_buffer(ctx, &bytes, &len, model);
    /* The bytes as written, with external data resolved where the
     * model's own is: what oac_annotation_write checks of its file. */
    if (rc == OAC_OK)
        rc = oac_model_load_buffer(ctx, &back, bytes, len, model->path, model->dir, diags);
    if (rc == OAC_OK)
        rc = oac_check_passes(ctx, &an, back, NULL, diags);
    if (rc != OAC_OK || oac_diags_count_severity(diags, OAC_SEV_ERROR) > 0)
        goto done;              /* on any error nothing is handed over */
    a->output = "";
    *out = bytes;
    *out_len = len;
    bytes = NULL;
done:
    oac_analysis_free(an);
    oac_model_free(back);
    oac_free(bytes);
    return rc;
}

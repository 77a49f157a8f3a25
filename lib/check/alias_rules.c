/* check/alias_rules.c: the node- and declaration-level alias rules.
 *
 * Owns three passes (check/passes.def):
 *  - access:   access-invalid (READ_WRITE off a graph input, on an input
 *              that is also an initializer, an access value not 0/1);
 *  - ports:    output_alias entries (alias-index-out-of-range,
 *              alias-kind-undefined, alias-duplicate, a node aliasing a
 *              value to itself = alias-cycle), the resolved must-alias
 *              port of every node output (oac_node.alias_in, also for
 *              calls of local functions, whose conflicting output_alias is
 *              alias-mismatch), alias-implied for cache updates and for
 *              the pairs of section 6's KV-cache operators that hold
 *              without output_alias, alias-unsupported (section 6: a pair
 *              the operator's row refuses, or half of a K/V pair; the
 *              port is then OAC_ALIAS_REFUSED) (operand-invalid is
 *              check/operands.c's);
 *  - metadata: metadata-alias (the prototype convention in metadata_props
 *              used where the real field is absent).
 * Contract: sections 2 and 3 and "Details the rules rely on", section 6.
 *
 * Invariants:
 *  1. alias_in[p] is set only for a MUST_ALIAS entry whose ports are in
 *     range, not omitted, not duplicated, and whose input is not the
 *     output's own name; every other entry aliases nothing.
 *  2. Each node is visited once per pass; per-node work is proportional
 *     to its ports and entries (duplicate checks use small per-node
 *     arrays), so the passes are linear in the model.
 *  3. Findings inside function bodies go through oac_scope_diag (once per
 *     call site).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check/alias.h"
#include "check/graph.h"
#include "ops.h"

#define LOC_MAX 512

static bool empty(const char *s)
{
    return !s || !*s;
}

/* ---- access ---------------------------------------------------- */

int oac_pass_access(oac_check_state *st)
{
    oac_graphs *g = st->graphs;
    int rc = OAC_OK;
    for (size_t si = 0; si < g->n_scopes && !rc; si++) {
        oac_scope *s = g->scopes[si];
        for (size_t k = 0; k < s->n_vinfos && !rc; k++) {
            const oac_vinfo *e = &s->vinfos[k];
            const Onnx__ValueInfoProto *vi = e->vi;
            if (!vi || !vi->has_access)
                continue;
            oac_where w = { .graph = s->name, .value = vi->name,
                            .location = e->loc };
            int acc = (int)vi->access;
            if (acc != 0 && acc != 1) {
                rc = oac_scope_diag(st, s, OAC_ACCESS_INVALID, &w,
                    "'%s' in graph '%s' has access %d, which is neither "
                    "READ_ONLY (0) nor READ_WRITE (1)",
                    vi->name ? vi->name : "", s->name, acc);
                continue;
            }
            if (acc != 1)
                continue;
            /* Graph inputs (of any graph) and, in a function body, the
             * function's inputs are what a caller binds. */
            bool is_input = e->field == OAC_VI_INPUT ||
                (s->kind == OAC_SCOPE_FUNCTION && e->value &&
                 e->value->kind == OAC_VAL_INPUT);
            if (!is_input) {
                static const char *const what[] = { "input", "output",
                                                    "value_info entry" };
                rc = oac_scope_diag(st, s, OAC_ACCESS_INVALID, &w,
                    "'%s' is declared READ_WRITE as a graph %s of graph '%s'; "
                    "only graph inputs may be READ_WRITE",
                    vi->name ? vi->name : "", what[e->field], s->name);
            } else if (e->value && oac_value_is_initializer(e->value)) {
                rc = oac_scope_diag(st, s, OAC_ACCESS_INVALID, &w,
                    "graph input '%s' of graph '%s' is READ_WRITE but is also "
                    "an initializer (a constant default cannot be updated)",
                    vi->name ? vi->name : "", s->name);
            }
        }
    }
    return rc;
}

/* ---- ports ----------------------------------------------------- */

/* Index of `name` among the function's inputs, or -1. */
static long func_input_index(const oac_scope *f, const char *name)
{
    oac_value *v = oac_scope_local(f, name);
    return v && v->kind == OAC_VAL_INPUT ? v->input_index : -1;
}

/* "/output_alias/K", the location suffix of entry k, in buf. */
static const char *entry_suffix(char *buf, size_t len, size_t k)
{
    snprintf(buf, len, "/output_alias/%zu", k);
    return buf;
}

/* ---- section 6: pairs of the table's operators ---------------------- */

/* "3->1, 4->2": the row's pairs, in buf. */
static const char *pair_list(const oac_op *op, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < op->n_pairs && op->alias == OAC_AL_PAIRS; k++) {
        int w = snprintf(buf + at, len - at, "%s%d->%d", k ? ", " : "",
                         op->pairs[k].in, op->pairs[k].out);
        if (w < 0 || (size_t)w >= len - at)
            break;
        at += (size_t)w;
    }
    return at ? buf : "none";
}

/* alias-unsupported on output_alias entry `entry` (of output p), and
 * the port refused. */
static int refuse(oac_check_state *st, oac_scope *s, long i, long entry,
                  size_t p, const char *fmt, ...) OAC_PRINTF(6, 7);

static int refuse(oac_check_state *st, oac_scope *s, long i, long entry,
                  size_t p, const char *fmt, ...)
{
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    char loc[LOC_MAX], suffix[64], msg[2048];
    entry_suffix(suffix, sizeof suffix, (size_t)entry);
    oac_where w = oac_where_node(s, i, np->output[p], suffix, loc, sizeof loc);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    n->alias_in[p] = OAC_ALIAS_REFUSED;
    return oac_scope_diag(st, s, OAC_ALIAS_UNSUPPORTED, &w, "%s", msg);
}

/* One declared pair of node i of s: output p must-aliases input `in`
 * through output_alias entry `entry` (the output's first). */
typedef struct declared {
    oac_check_state *st;
    oac_scope *s;
    long i;
    const oac_node *n;
    const char *op_type;
    long entry;
    size_t p;
    int in;
} declared;

/* judge(d) for each output of node i, in order, whose first entry
 * resolved to a must-alias input (alias_in), until one fails. */
static int each_declared(oac_check_state *st, oac_scope *s, long i,
                         const long *entry_of_out, int (*judge)(const declared *d))
{
    const oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    declared d = { .st = st, .s = s, .i = i, .n = n,
                   .op_type = np->op_type ? np->op_type : "" };
    int rc = OAC_OK;
    for (size_t p = 0; p < np->n_output && !rc; p++) {
        d.p = p;
        d.in = n->alias_in[p];
        d.entry = entry_of_out[p];
        if (d.in >= 0 && d.entry >= 0)
            rc = judge(&d);
    }
    return rc;
}

/* Section 6: a declared pair of a table operator must be a pair of its
 * row whose condition holds in the file. */
static int judge_table_pair(const declared *d)
{
    const Onnx__NodeProto *np = d->n->proto;
    const oac_op *op = d->n->op;
    const char *op_type = d->op_type;
    size_t p = d->p;
    int in = d->in;
    char pl[64];
    const char *why = NULL;
    oac_pair_verdict v = oac_op_pair_judge(op, np, in, (int)p, &why);
    if (v == OAC_PAIR_IN_PLACE || v == OAC_PAIR_UNVERIFIED)
        return OAC_OK;
    if (v == OAC_PAIR_NOT_IN_ROW)
        return refuse(d->st, d->s, d->i, d->entry, p,
            "node '%s' (%s) of graph '%s': output_alias pairs output %zu "
            "('%s') with input %d ('%s'), which is not a pair of %s "
            "(input->output: %s), so the output cannot share that input's "
            "storage. %s", d->n->display, op_type, d->s->name, p, np->output[p],
            in, np->input[in], op_type, pair_list(op, pl, sizeof pl),
            why ? why : "");
    return refuse(d->st, d->s, d->i, d->entry, p,
        "node '%s' (%s) of graph '%s': output %zu ('%s') cannot share "
        "the storage of input %d ('%s') as the node is %s. %s",
        d->n->display, op_type, d->s->name, p, np->output[p], in,
        np->input[in],
        v == OAC_PAIR_GROWS ? "defined: the output grows"
                            : "configured in the file",
        why ? why : "");
}

/* Section 6: every declared pair of a table operator must be a pair of
 * its row whose condition holds in the file (judge_table_pair), and a
 * K/V row's two pairs are declared together.  entry_of_out: each
 * output's first entry. */
static int check_table_pairs(oac_check_state *st, oac_scope *s, long i,
                             const long *entry_of_out)
{
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    const oac_op *op = n->op;
    const char *op_type = np->op_type ? np->op_type : "";
    int rc = each_declared(st, s, i, entry_of_out, judge_table_pair);
    if (rc || !oac_op_has(op, OAC_OPF_KV_CACHE))
        return rc;
    /* Both halves of a K/V pair, or neither. */
    oac_op_pair pairs[OAC_OP_MAX_PAIRS];
    size_t np_ = oac_op_pairs(op, np, pairs, OAC_OP_MAX_PAIRS);
    if (np_ != 2)
        return OAC_OK;
    for (size_t k = 0; k < 2 && !rc; k++) {
        oac_op_pair a = pairs[k], b = pairs[1 - k];
        bool a_on = n->alias_in[a.out] == a.in;
        bool b_declared = entry_of_out[b.out] >= 0;
        if (!a_on || b_declared)
            continue;
        rc = refuse(st, s, i, entry_of_out[a.out], (size_t)a.out,
            "node '%s' (%s) of graph '%s': output_alias pairs output %d ('%s') "
            "with input %d ('%s') but not output %d ('%s') with input %d "
            "('%s'): the two halves of a K/V pair share their storage "
            "together or not at all; declare both (onnx-alias-check "
            "annotate writes them)", n->display, op_type, s->name, a.out,
            np->output[a.out], a.in, np->input[a.in], b.out,
            np->output[b.out], b.in, np->input[b.in]);
    }
    return rc;
}

/* Section 2's cache updates (CacheUpdate, PagedCacheUpdate,
 * TensorScatter) share only their listed pair (0->0): output_alias on
 * another input (the position, the new values) is alias-unsupported, not
 * an advice to make that input writable. */
static int judge_update_pair(const declared *d)
{
    const Onnx__NodeProto *np = d->n->proto;
    const oac_op *op = d->n->op;
    char pl[64];
    bool listed = false;
    for (size_t k = 0; k < op->n_pairs; k++)
        listed |= op->pairs[k].in == d->in && op->pairs[k].out == (int)d->p;
    if (listed)
        return OAC_OK;
    return refuse(d->st, d->s, d->i, d->entry, d->p,
        "node '%s' (%s) of graph '%s': output_alias pairs output %zu "
        "('%s') with input %d ('%s'), but %s's only pair is %s: only "
        "the cache shares the output's storage; declare output_alias "
        "{output %d, input %d, MUST_ALIAS}", d->n->display, d->op_type,
        d->s->name, d->p, np->output[d->p], d->in, np->input[d->in], d->op_type,
        pair_list(op, pl, sizeof pl), op->n_pairs ? op->pairs[0].out : 0,
        op->n_pairs ? op->pairs[0].in : 0);
}

/* alias-implied for a section-6 KV-cache operator: each pair whose
 * condition holds in the file but whose present states no output_alias
 * (a node that states any entry on its pairs' outputs was judged by
 * check_table_pairs instead). */
static int implied_pairs(oac_check_state *st, oac_scope *s, long i,
                         const long *entry_of_out)
{
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    const oac_op *op = n->op;
    oac_op_pair pairs[OAC_OP_MAX_PAIRS];
    size_t count = oac_op_pairs(op, np, pairs, OAC_OP_MAX_PAIRS);
    if (count > OAC_OP_MAX_PAIRS)
        count = OAC_OP_MAX_PAIRS;
    for (size_t k = 0; k < count; k++)
        if (entry_of_out && entry_of_out[pairs[k].out] >= 0)
            return OAC_OK;
    if (!oac_op_cond_holds(op, np))
        return OAC_OK;          /* the present grows: nothing to share */
    int rc = OAC_OK;
    char loc[LOC_MAX];
    for (size_t k = 0; k < count && !rc; k++) {
        oac_op_pair p = pairs[k];
        oac_where w = oac_where_node(s, i, np->output[p.out], NULL, loc,
                                     sizeof loc);
        rc = oac_scope_diag(st, s, OAC_ALIAS_IMPLIED, &w,
            "node '%s' (%s) of graph '%s': '%s' (output %d) can share the "
            "storage of '%s' (input %d), but the node has no output_alias "
            "{output %d, input %d, MUST_ALIAS}: the model relies on a "
            "runtime's configuration to avoid a second cache; "
            "`onnx-alias-check annotate` writes the annotation", n->display,
            np->op_type ? np->op_type : "", s->name, np->output[p.out], p.out,
            np->input[p.in], p.in, p.out, p.in);
    }
    return rc;
}

/* What check_ports shares with its parts: node i of s, its output_alias
 * entries so far (the first entry per output, the first output
 * must-aliasing each input). */
typedef struct ports {
    oac_check_state *st;
    oac_scope *s;
    long i;
    const char *op_type;
    long *entry_of_out;
    long *out_of_in;
} ports;

/* alias-index-out-of-range on entry k (at its output oname) when its
 * `what` port ("output" or "input") idx is not one of the node's `count`
 * ports of that kind or is an omitted one (its name empty); *ok is then
 * false. */
static int port_in_range(const ports *pt, size_t k, const char *oname, const char *what,
                         int32_t idx, size_t count, const char *name, bool *ok)
{
    if (idx >= 0 && (size_t)idx < count && !empty(name))
        return OAC_OK;
    oac_scope *s = pt->s;
    const oac_node *n = &s->nodes[pt->i];
    char loc[LOC_MAX], suffix[64];
    oac_where w = oac_where_node(s, pt->i, oname,
        entry_suffix(suffix, sizeof suffix, k), loc, sizeof loc);
    *ok = false;
    if (idx < 0 || (size_t)idx >= count)
        return oac_scope_diag(pt->st, s, OAC_ALIAS_INDEX_OUT_OF_RANGE, &w,
            "node '%s' (%s) of graph '%s': output_alias %zu names "
            "%s %d, but the node has %zu %ss",
            n->display, pt->op_type, s->name, k, what, (int)idx, count, what);
    return oac_scope_diag(pt->st, s, OAC_ALIAS_INDEX_OUT_OF_RANGE, &w,
        "node '%s' (%s) of graph '%s': output_alias %zu names "
        "%s %d, an omitted optional %s",
        n->display, pt->op_type, s->name, k, what, (int)idx, what);
}

/* Entry k of the node's output_alias: its ports in range and named, its
 * kind, duplicates, a value aliased to itself; n->alias_in of its output
 * when it holds (-2 for a port two entries claim). */
static int check_entry(ports *pt, size_t k)
{
    oac_check_state *st = pt->st;
    oac_scope *s = pt->s;
    long i = pt->i;
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    const Onnx__ValueAliasProto *e = np->output_alias[k];
    size_t n_out = np->n_output, n_in = np->n_input;
    const char *op_type = pt->op_type;
    long *entry_of_out = pt->entry_of_out, *out_of_in = pt->out_of_in;
    char loc[LOC_MAX];
    int rc;
    if (!e)
        return OAC_OK;
    /* The location suffix is printed only for a finding. */
    char suffix[64];
    int32_t oi = e->has_output_index ? e->output_index : 0;
    int32_t ii = e->has_input_index ? e->input_index : 0;
    bool ok = true;
    const char *oname = oi >= 0 && (size_t)oi < n_out ? np->output[oi] : NULL;
    const char *iname = ii >= 0 && (size_t)ii < n_in ? np->input[ii] : NULL;

    if ((rc = port_in_range(pt, k, oname, "output", oi, n_out, oname, &ok)) ||
        (rc = port_in_range(pt, k, oname, "input", ii, n_in, iname, &ok)))
        return rc;
    if (!e->has_kind || e->kind != ONNX__VALUE_ALIAS_PROTO__KIND__MUST_ALIAS) {
        oac_where w = oac_where_node(s, i, oname,
            entry_suffix(suffix, sizeof suffix, k), loc, sizeof loc);
        if (!e->has_kind)
            rc = oac_scope_diag(st, s, OAC_ALIAS_KIND_UNDEFINED, &w,
                "node '%s' (%s) of graph '%s': output_alias %zu has no "
                "kind (UNDEFINED)", n->display, op_type, s->name, k);
        else
            rc = oac_scope_diag(st, s, OAC_ALIAS_KIND_UNDEFINED, &w,
                "node '%s' (%s) of graph '%s': output_alias %zu has kind "
                "%d, not MUST_ALIAS", n->display, op_type, s->name, k,
                (int)e->kind);
        if (rc)
            return rc;
        ok = false;
    }
    if (oi >= 0 && (size_t)oi < n_out) {
        if (entry_of_out[oi] >= 0) {
            oac_where w = oac_where_node(s, i, oname,
                entry_suffix(suffix, sizeof suffix, k), loc, sizeof loc);
            if ((rc = oac_scope_diag(st, s, OAC_ALIAS_DUPLICATE, &w,
                    "node '%s' (%s) of graph '%s': output %d ('%s') has "
                    "two output_alias entries (%ld and %zu)", n->display,
                    op_type, s->name, (int)oi, oname ? oname : "",
                    entry_of_out[oi], k)))
                return rc;
            /* The port aliases nothing: which entry wins is unknown. */
            n->alias_in[oi] = -2;
            return OAC_OK;
        }
        entry_of_out[oi] = (long)k;
    }
    if (!ok)
        return OAC_OK;
    if (out_of_in[ii] >= 0) {
        oac_where w = oac_where_node(s, i, oname,
            entry_suffix(suffix, sizeof suffix, k), loc, sizeof loc);
        if ((rc = oac_scope_diag(st, s, OAC_ALIAS_DUPLICATE, &w,
                "node '%s' (%s) of graph '%s': outputs %ld and %d both "
                "must-alias input %d ('%s')", n->display, op_type,
                s->name, out_of_in[ii], (int)oi, (int)ii, iname)))
            return rc;
        return OAC_OK;
    }
    out_of_in[ii] = oi;
    if (strcmp(oname, iname) == 0) {
        oac_where w = oac_where_node(s, i, oname,
            entry_suffix(suffix, sizeof suffix, k), loc, sizeof loc);
        if ((rc = oac_scope_diag(st, s, OAC_ALIAS_CYCLE, &w,
                "node '%s' (%s) of graph '%s' aliases '%s' to itself "
                "(output %d and input %d are the same value)", n->display,
                op_type, s->name, oname, (int)oi, (int)ii)))
            return rc;
        return OAC_OK;
    }
    if (n->alias_in[oi] == -1)
        n->alias_in[oi] = ii;
    return OAC_OK;
}

/* A call of a local function inherits the function's alias_of on its
 * outputs (contract 3, "Details"); an output_alias of the call that says
 * otherwise is alias-mismatch. */
static int inherit_callee(ports *pt)
{
    oac_check_state *st = pt->st;
    oac_scope *s = pt->s;
    long i = pt->i;
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    size_t n_out = np->n_output, n_in = np->n_input;
    const char *op_type = pt->op_type;
    long *entry_of_out = pt->entry_of_out;
    char loc[LOC_MAX];
    int rc = OAC_OK;
    oac_scope *f = oac_node_x(n)->callee;
    for (size_t p = 0; p < n_out && p < f->n_outputs; p++) {
        const Onnx__ValueInfoProto *vi = f->output_vis[p];
        long fin = vi && !empty(vi->alias_of)
            ? func_input_index(f, vi->alias_of) : -1;
        bool declared = entry_of_out && entry_of_out[p] >= 0;
        if (fin >= 0 && (size_t)fin >= n_in)
            fin = -1;       /* the call omits that input */
        if (fin >= 0 && empty(np->input[fin]))
            fin = -1;
        if (declared && n->alias_in[p] != (fin >= 0 ? (int)fin : -1)) {
            char suffix[64];
            snprintf(suffix, sizeof suffix, "/output_alias/%ld",
                     entry_of_out[p]);
            oac_where w = oac_where_node(s, i, np->output[p], suffix, loc,
                                         sizeof loc);
            if (fin >= 0)
                rc = oac_scope_diag(st, s, OAC_ALIAS_MISMATCH, &w,
                    "node '%s' (%s) of graph '%s': output_alias on output "
                    "%zu ('%s') conflicts with function '%s', whose "
                    "output aliases input %ld ('%s')", n->display,
                    op_type, s->name, p, np->output[p], f->name, fin,
                    np->input[fin]);
            else
                rc = oac_scope_diag(st, s, OAC_ALIAS_MISMATCH, &w,
                    "node '%s' (%s) of graph '%s': output_alias on output "
                    "%zu ('%s') conflicts with function '%s', whose "
                    "output aliases no input", n->display, op_type,
                    s->name, p, np->output[p], f->name);
            if (rc)
                return rc;
        }
        if (fin >= 0 && strcmp(np->output[p], np->input[fin]) != 0)
            n->alias_in[p] = (int)fin;
    }
    return OAC_OK;
}

/* alias-implied: a cache update without output_alias 0 <- 0.  An entry
 * for 0 <- 0 that is broken otherwise was reported by check_entry. */
static int implied_update(ports *pt)
{
    oac_check_state *st = pt->st;
    oac_scope *s = pt->s;
    long i = pt->i;
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    const char *op_type = pt->op_type;
    char loc[LOC_MAX];
    int rc;
    bool stated = oac_node_states_alias(np, 0, 0);
    /* A refused entry on output 0 is that finding's, reported alone. */
    if (!stated && n->alias_in[0] != OAC_ALIAS_REFUSED) {
        oac_where w = oac_where_node(s, i, np->output[0], NULL, loc,
                                     sizeof loc);
        if ((rc = oac_scope_diag(st, s, OAC_ALIAS_IMPLIED, &w,
                "node '%s' (%s) of graph '%s' has no output_alias "
                "{output 0, input 0, MUST_ALIAS}: '%s' may be allocated "
                "as a second cache instead of updating '%s' in place; "
                "`onnx-alias-check annotate` writes the annotation",
                n->display, op_type, s->name,
                empty(np->output[0]) ? "" : np->output[0],
                empty(np->input[0]) ? "" : np->input[0])))
            return rc;
    }
    return OAC_OK;
}

static int check_ports(oac_check_state *st, oac_scope *s, long i, int *alias_in)
{
    oac_ctx *ctx = st->ctx;
    oac_node *n = &s->nodes[i];
    const Onnx__NodeProto *np = n->proto;
    int rc = OAC_OK;
    size_t n_out = np->n_output, n_in = np->n_input;
    long *entry_of_out = NULL;   /* first entry per output port */
    long *out_of_in = NULL;      /* first output must-aliasing an input */
    /* Most nodes with output_alias have a few ports: their arrays live on
     * the stack, a larger node's on the heap. */
    enum { SMALL_PORTS = 8 };
    long small_out[SMALL_PORTS], small_in[SMALL_PORTS];

    if (n_out) {
        n->alias_in = alias_in;
        for (size_t p = 0; p < n_out; p++)
            n->alias_in[p] = -1;
    }
    if (np->n_output_alias) {
        entry_of_out = n_out <= SMALL_PORTS ? small_out
            : oac_alloc(ctx, n_out * sizeof *entry_of_out);
        out_of_in = n_in <= SMALL_PORTS ? small_in
            : oac_alloc(ctx, n_in * sizeof *out_of_in);
        if (!entry_of_out || !out_of_in) {
            rc = OAC_ENOMEM;
            goto done;
        }
        for (size_t p = 0; p < n_out; p++)
            entry_of_out[p] = -1;
        for (size_t p = 0; p < n_in; p++)
            out_of_in[p] = -1;
    }
    const char *op_type = np->op_type ? np->op_type : "";

    ports pt = { .st = st, .s = s, .i = i, .op_type = op_type,
                 .entry_of_out = entry_of_out, .out_of_in = out_of_in };
    for (size_t k = 0; k < np->n_output_alias; k++)
        if ((rc = check_entry(&pt, k)))
            goto done;
    for (size_t p = 0; p < n_out; p++)
        if (n->alias_in[p] < -1)
            n->alias_in[p] = -1;

    if (oac_node_x(n)->callee && (rc = inherit_callee(&pt)))
        goto done;

    /* Section 6: the table's operators honour only their pairs. */
    if (oac_op_has(n->op, OAC_OPF_ALIAS_TABLE) && entry_of_out &&
        (rc = check_table_pairs(st, s, i, entry_of_out)))
        goto done;
    if (oac_op_has(n->op, OAC_OPF_KV_CACHE) &&
        (rc = implied_pairs(st, s, i, entry_of_out)))
        goto done;
    if (oac_op_has(n->op, OAC_OPF_CACHE_UPDATE) && n->op->alias == OAC_AL_PAIRS &&
        entry_of_out &&
        (rc = each_declared(st, s, i, entry_of_out, judge_update_pair)))
        goto done;

    /* alias-implied: a cache update without output_alias 0 <- 0.  An entry
     * for 0 <- 0 that is broken otherwise was reported above. */
    if (oac_op_has(n->op, OAC_OPF_CACHE_UPDATE) && n_out > 0 && n_in > 0 &&
        (rc = implied_update(&pt)))
        goto done;
done:
    if (entry_of_out && entry_of_out != small_out)
        oac_dealloc(ctx, entry_of_out);
    if (out_of_in && out_of_in != small_in)
        oac_dealloc(ctx, out_of_in);
    return rc;
}

int oac_pass_ports(oac_check_state *st)
{
    oac_graphs *g = st->graphs;
    int rc = OAC_OK;
    for (size_t si = 0; si < g->n_scopes && !rc; si++) {
        oac_scope *s = g->scopes[si];
        /* One block of alias_in entries per scope (check/graph.h), not one
         * allocation per node. */
        uint64_t n_out = 0;
        for (size_t i = 0; i < s->n_nodes; i++)
            n_out += s->nodes[i].n_out;
        if (!s->alias_block) {
            if (n_out > SIZE_MAX / sizeof *s->alias_block)
                return oac_err(st->ctx, OAC_ENOMEM, "graph too large");
            s->alias_block = oac_alloc(st->ctx, n_out ? (size_t)n_out * sizeof *s->alias_block
                                                      : sizeof *s->alias_block);
            if (!s->alias_block)
                return OAC_ENOMEM;
        }
        /* Every port aliases nothing until an entry says otherwise. */
        for (size_t k = 0; k < n_out; k++)
            s->alias_block[k] = -1;
        size_t at = 0;
        for (size_t i = 0; i < s->n_nodes && !rc; i++) {
            oac_node *n = &s->nodes[i];
            bool update = oac_op_has(n->op, OAC_OPF_CACHE_UPDATE);
            bool kv = oac_op_has(n->op, OAC_OPF_KV_CACHE);
            /* Most nodes have no entries, call nothing and update
             * nothing (their operands are check/operands.c's). */
            if (n->declares_alias || oac_node_x(n)->callee || update || kv)
                rc = check_ports(st, s, (long)i, s->alias_block + at);
            else if (n->n_out)
                n->alias_in = s->alias_block + at;
            at += n->n_out;
        }
    }
    return rc;
}

/* ---- metadata -------------------------------------------------- */

int oac_pass_metadata(oac_check_state *st)
{
    oac_graphs *g = st->graphs;
    int rc = OAC_OK;
    char loc[LOC_MAX];
    for (size_t si = 0; si < g->n_scopes && !rc; si++) {
        oac_scope *s = g->scopes[si];
        for (size_t k = 0; k < s->n_vinfos && !rc; k++) {
            const oac_vinfo *e = &s->vinfos[k];
            const Onnx__ValueInfoProto *vi = e->vi;
            if (!vi || !empty(vi->alias_of))
                continue;
            for (size_t m = 0; m < vi->n_metadata_props && !rc; m++) {
                const Onnx__StringStringEntryProto *p = vi->metadata_props[m];
                if (!p || !p->key || strcmp(p->key, "alias_of") != 0)
                    continue;
                snprintf(loc, sizeof loc, "%s/metadata_props/%zu", e->loc, m);
                oac_where w = { .graph = s->name, .value = vi->name,
                                .location = loc };
                rc = oac_scope_diag(st, s, OAC_METADATA_ALIAS, &w,
                    "'%s' of graph '%s' states alias_of = '%s' only in "
                    "metadata_props, which generic tools ignore; set the "
                    "alias_of field", vi->name ? vi->name : "", s->name,
                    p->value ? p->value : "");
            }
        }
        for (size_t i = 0; i < s->n_nodes && !rc; i++) {
            oac_node *n = &s->nodes[i];
            if (n->declares_alias || !n->has_metadata)
                continue;
            const Onnx__NodeProto *np = n->proto;
            for (size_t m = 0; m < np->n_metadata_props && !rc; m++) {
                const Onnx__StringStringEntryProto *p = np->metadata_props[m];
                if (!p || !p->key || strcmp(p->key, "output_alias") != 0)
                    continue;
                char suffix[64];
                snprintf(suffix, sizeof suffix, "/metadata_props/%zu", m);
                oac_where w = oac_where_node(s, (long)i,
                    np->n_output ? np->output[0] : NULL, suffix, loc,
                    sizeof loc);
                rc = oac_scope_diag(st, s, OAC_METADATA_ALIAS, &w,
                    "node '%s' (%s) of graph '%s' states output_alias '%s' "
                    "only in metadata_props, which generic tools ignore; "
                    "set the output_alias field", n->display,
                    np->op_type ? np->op_type : "", s->name,
                    p->value ? p->value : "");
            }
        }
    }
    return rc;
}

/* annotate/caches.c: a verdict for every cache (contract, section 9.2),
 * kv_caches (9.3) and the configuration checked against the model (9.4).
 *
 * Owns the public oac_check: the checker's passes (check/check.c,
 * oac_check_passes), then the pairs of the main graph (annotate/pairs.c),
 * each traced as annotate traces it (oac_annotate_trace,
 * annotate/annotate.c: one trace in the library) and given its verdict:
 *   in-place     the present's alias root (check/alias.h) is the past;
 *   implied      the trace holds: alias-implied at each Identity of the
 *                pair's path (its links, or the Identity of a state
 *                passed through) that declares no output_alias {0, 0},
 *                each its own finding (implied_links); the checker
 *                itself reports the cache operators' own;
 *   copied       growing-cache, delta-output, unsupported-chain:
 *                cache-copied at the node where sharing stops (unless
 *                alias-unsupported already refused that node's alias);
 *   not-a-cache  constant-present, not-derived.
 * With a configuration: config-mismatch and config-no-sharing (for the
 * one given, check --config; the one found beside the model for `run`,
 * oac_check_opts.config_beside, adds pairs only, contract 9.1).
 *
 * Invariants:
 *  1. The verdicts read the analysis and append diagnostics, never
 *     change the model.
 *  2. Byte counts are products checked for overflow (oac_elem_bytes); an
 *     unknown or overflowing one is null with its formula in the dims'
 *     symbols.
 *  3. Work is linear in the graph for every pair that holds; a refused
 *     pair may cost one walk of the graph (annotate/annotate.c, inv. 3).
 *     What every pair looks up (its node's index, an alias-unsupported at
 *     that node) is found through maps built once, never by a search per
 *     pair (that was quadratic: 4,096 pairs x 43,011 nodes on the
 *     2048-layer decoder, 90% of its check).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "annotate/annotate.h"
#include "annotate/pairs.h"
#include "check/alias.h"
#include "check/analysis.h"
#include "check/shapes.h"
#include "ops.h"
#include "rulebook.h"

/* ---- bytes per token and capacity ------------------------------------- */

/* The capacity axis of pair entry e: the cache operator's (its axis
 * attribute, else its row's default) for an operator with a capacity,
 * else the first axis on which past and present differ; -1 when none. */
static int capacity_axis(const oac_scope *s, const oac_shapes *sh, const oac_kv_pair *p,
                         long node)
{
    const oac_vshape *pv = oac_shapes_value(sh, p->past->id);
    if (!pv || pv->kind != OAC_VK_TENSOR || pv->rank <= 0)
        return -1;
    const oac_node *n = node >= 0 ? &s->nodes[node] : NULL;
    if (n && n->op && n->op->alias == OAC_AL_PAIRS &&
        oac_op_has(n->op, OAC_OPF_CACHE_UPDATE | OAC_OPF_KV_CACHE)) {
        int64_t ax = n->op->axis_attr
                         ? oac_attr_int(n->proto, n->op->axis_attr, n->op->axis_default)
                         : n->op->axis_default;
        return (int)oac_capacity_axis(ax, pv->rank);
    }
    const oac_vshape *qv = p->present ? oac_shapes_value(sh, p->present->id) : NULL;
    if (!qv || qv->kind != OAC_VK_TENSOR || qv->rank != pv->rank)
        return -1;
    for (int a = 0; a < pv->rank; a++) {
        int64_t x = oac_shapes_dim(sh, pv->dims[a]), y = oac_shapes_dim(sh, qv->dims[a]);
        if (x >= 0 && y >= 0 ? x != y : pv->dims[a] != qv->dims[a])
            return a;
    }
    return -1;
}

/* A dim's name for a formula: its symbol, else "?". */
static const char *dim_word(const oac_shapes *sh, oac_dimref d)
{
    const char *w = oac_shapes_dim_name(sh, d);
    return w && *w ? w : "?";
}

/* d's number for a cache's capacity and bytes: none for a dim `run`'s
 * loop bound at its first step (options lo .. hi-1): a past length of 0
 * there is no capacity, nor step 1's lengths the largest. */
static int64_t cache_dim(const oac_shapes *sh, oac_dimref d, size_t lo, size_t hi)
{
    return oac_shapes_dim_from_options(sh, d, lo, hi) ? -1 : oac_shapes_dim(sh, d);
}

/* e's bytes_per_token (the present's bytes at the capacity: axis ax at
 * max when max > 0) and capacity (the past's dim on ax); dims the run's
 * loop bound (options lo .. hi-1) count as their symbols. */
static int bytes_and_capacity(oac_analysis *an, oac_kv_cache *e, const oac_kv_pair *p,
                              int ax, int64_t max, size_t lo, size_t hi)
{
    const oac_shapes *sh = an->shapes;
    e->capacity = -1;
    const oac_vshape *pv = oac_shapes_value(sh, p->past->id);
    if (ax >= 0 && pv && pv->kind == OAC_VK_TENSOR && ax < pv->rank) {
        int64_t c = cache_dim(sh, pv->dims[ax], lo, hi);
        e->capacity = c;
        if (c < 0 && !(e->capacity_symbol = oac_analysis_strdup(an, dim_word(sh, pv->dims[ax]))))
            return OAC_ENOMEM;
        if (c < 0 && !strcmp(e->capacity_symbol, "?"))
            e->capacity_symbol = NULL;
    }
    const oac_vshape *qv = p->present ? oac_shapes_value(sh, p->present->id) : NULL;
    uint64_t es = 0;
    if (!qv || qv->kind != OAC_VK_TENSOR || qv->rank < 0 ||
        !oac_elem_bytes(qv->elem_type, 1, &es) || es == 0)
        return OAC_OK;
    uint64_t count = 1;
    bool overflow = false;
    char formula[512] = "";
    size_t used = 0;
    for (int a = 0; a < qv->rank; a++) {
        int64_t d = cache_dim(sh, qv->dims[a], lo, hi);
        if (d < 0 && a == ax && max > 0)
            d = max;
        if (d >= 0) {
            overflow |= oac_mul_overflow_u64(count, (uint64_t)d, &count);
        } else if (used < sizeof formula) {
            int w = snprintf(formula + used, sizeof formula - used, " x %s",
                             dim_word(sh, qv->dims[a]));
            used += w > 0 ? (size_t)w : 0;
        }
    }
    uint64_t bytes = 0;
    overflow |= !oac_elem_bytes(qv->elem_type, count, &bytes);
    if (!used && !overflow) {
        e->bytes_per_token = (oac_opt_u64){ true, bytes };
        return OAC_OK;
    }
    char *f = overflow ? oac_asprintf(an->ctx, "more than %" PRIu64 " bytes", UINT64_MAX)
                       : oac_asprintf(an->ctx, "%" PRIu64 "%s bytes", bytes, formula);
    e->bytes_formula = f ? oac_analysis_strdup(an, f) : NULL;
    oac_dealloc(an->ctx, f);
    return e->bytes_formula ? OAC_OK : OAC_ENOMEM;
}

/* "16384 bytes" or the formula, for a message. */
static void bytes_text(const oac_kv_cache *e, char *buf, size_t len)
{
    if (e->bytes_per_token.known)
        snprintf(buf, len, "%" PRIu64 " bytes", e->bytes_per_token.value);
    else
        snprintf(buf, len, "%s", e->bytes_formula ? e->bytes_formula : "an unknown number of bytes");
}

/* ---- verdicts ----------------------------------------------------------- */

typedef struct kvst {
    oac_ctx *ctx;
    oac_analysis *an;
    const oac_model *model;
    const oac_genai_config *cfg;
    bool deployed;             /* cfg is set and check --config's: checked against the model */
    /* opts->dims[run_lo, run_hi): what `run`'s loop bound at its first
     * step (oac_check_opts.n_run_dims); empty for check. */
    size_t run_lo, run_hi;
    const oac_scope *s;
    oac_diags *diags;
    oac_kv_pair *p;
    size_t n;
    oac_annotation *tr;        /* the trace of every pair */
    oac_strmap refused;        /* nodes with alias-unsupported (collect_refused) */
    char loc[64];
} kvst;

/* Pair k's node in st->s (the one its trace names), or -1. */
static long node_at(const kvst *st, size_t k)
{
    return oac_annotation_node_at(st->tr, k);
}

static oac_where where_at(kvst *st, size_t k, const oac_kv_cache *e)
{
    long i = node_at(st, k);
    const oac_value *q = st->p[k].present;
    /* The node where sharing stops, else the present's declaration. */
    if (i >= 0)
        snprintf(st->loc, sizeof st->loc, "/graph/node/%ld", i);
    else if (q)
        snprintf(st->loc, sizeof st->loc, "/graph/output/%d", q->output_index);
    else
        snprintf(st->loc, sizeof st->loc, "/graph/output");
    return (oac_where){ .graph = st->s->name, .node = e->node, .op_type = e->op_type,
                        .value = e->present, .location = st->loc };
}

static oac_kv_verdict verdict_of(const kvst *st, size_t k, const oac_annotate_pair *t)
{
    const oac_kv_pair *p = &st->p[k];
    if (p->present && st->an->aliases &&
        oac_alias_root(st->an->aliases, p->present) == p->past)
        return OAC_KV_IN_PLACE;
    if (t->verdict != OAC_VERDICT_REFUSED)
        return OAC_KV_IMPLIED;
    if (t->reason == OAC_REFUSAL_CONSTANT_PRESENT || t->reason == OAC_REFUSAL_NOT_DERIVED)
        return OAC_KV_NOT_A_CACHE;
    return OAC_KV_COPIED;
}

/* The capacity a configuration asks for: search.max_length, else
 * model.context_length; 0 without. */
static int64_t config_capacity(const oac_genai_config *c)
{
    return !c ? 0 : c->max_length > 0 ? c->max_length : c->context_length;
}

/* Has the checker refused an output_alias declared at node already
 * (alias-unsupported)?  Then the copy is that finding's, reported alone. */
static bool refused_at(const kvst *st, const char *node)
{
    return node && oac_strmap_has(&st->refused, node);
}

/* st->refused: the nodes of the passes' alias-unsupported findings,
 * collected once (the pairs' own findings follow them in diags). */
static int collect_refused(kvst *st)
{
    int rc = OAC_OK;
    for (size_t i = 0; rc == OAC_OK && i < oac_diags_count(st->diags); i++) {
        const oac_diag *d = oac_diags_get(st->diags, i);
        if (d->code == OAC_ALIAS_UNSUPPORTED && d->node)
            rc = oac_strmap_put(&st->refused, d->node, (void *)d);
    }
    return rc;
}

/* alias-implied for implied pair k: one at each Identity on its path
 * (oac_annotation_path) that states no output_alias {0, 0} (of any kind:
 * a broken one is the ports pass's finding), naming that
 * node, since each such link is one a user must declare before the pair
 * is in place.  The path's cache operator is the checker's
 * (check/alias_rules.c: implied_update, implied_pairs); ScatterND and
 * ScatterElements get none (contract 6). */
static int implied_links(kvst *st, size_t k, const oac_kv_cache *e)
{
    const long *path;
    size_t n = oac_annotation_path(st->tr, k, &path);
    char bytes[600];
    bytes_text(e, bytes, sizeof bytes);
    int rc = OAC_OK;
    for (size_t j = 0; rc == OAC_OK && j < n; j++) {
        const oac_node *nd = &st->s->nodes[path[j]];
        const Onnx__NodeProto *np = nd->proto;
        if (!oac_op_is(nd->op, OAC_OP_IDENTITY) || oac_node_states_alias(np, 0, 0) ||
            np->n_input < 1 || np->n_output < 1)
            continue;
        oac_where w = oac_where_node(st->s, path[j], np->output[0], NULL, st->loc,
                                     sizeof st->loc);
        rc = oac_diag_add(st->diags, OAC_ALIAS_IMPLIED, &w,
                          "Identity node '%s' passes '%s' on as '%s' on the path of cache "
                          "'%s' -> '%s', which can be updated in place, but has no "
                          "output_alias {output 0, input 0, MUST_ALIAS}: nothing declares "
                          "that '%s' shares the cache's storage, so a runtime not told so "
                          "allocates a second buffer of %s; add that output_alias to '%s' "
                          "(and alias_of '%s' on '%s'), or run onnx-alias-check annotate, "
                          "which writes both",
                          nd->display, np->input[0], np->output[0], e->past, e->present,
                          np->output[0], bytes, nd->display, e->past, e->present);
    }
    return rc;
}

/* Entry k of kv_caches, and its diagnostic. */
static int judge_pair(kvst *st, size_t k)
{
    const oac_kv_pair *p = &st->p[k];
    const oac_annotate_pair *t = oac_annotation_pair(st->tr, k);
    oac_analysis *an = st->an;
    oac_kv_cache *e = &an->kv[k];
    long ni = node_at(st, k);
    const oac_node *n = ni >= 0 ? &st->s->nodes[ni] : NULL;
    /* The model's own strings where there are some (the analysis borrows
     * the model, oac.h): the past's name, the present's when it is an
     * output, the node's name and op_type.  Copied: a present only the
     * configuration names, an unnamed node's "#<index>". */
    e->past = p->past->name;
    e->present = p->present ? p->present->name : oac_analysis_strdup(an, p->present_name);
    e->found_by = p->found_by;
    e->verdict = verdict_of(st, k, t);
    e->reason = e->verdict == OAC_KV_COPIED || e->verdict == OAC_KV_NOT_A_CACHE
                    ? (t->reason ? (int)t->reason : (int)OAC_REFUSAL_UNSUPPORTED_CHAIN) : 0;
    e->node = !n ? NULL : n->proto->name && *n->proto->name ? n->proto->name
                                                             : oac_analysis_strdup(an, n->display);
    e->op_type = !n ? NULL : n->proto->op_type ? n->proto->op_type : "";
    if (!e->present || (n && !e->node))
        return OAC_ENOMEM;
    int ax = capacity_axis(st->s, an->shapes, p, ni);
    if (an->shapes && bytes_and_capacity(an, e, p, ax, config_capacity(st->cfg), st->run_lo,
                                         st->run_hi) != OAC_OK)
        return OAC_ENOMEM;
    if (e->verdict == OAC_KV_IMPLIED)
        return implied_links(st, k, e);
    if (e->verdict != OAC_KV_COPIED || refused_at(st, e->node))
        return OAC_OK;      /* in place, not a cache, or reported by another finding */
    oac_where w = where_at(st, k, e);
    char bytes[600];
    bytes_text(e, bytes, sizeof bytes);
    return oac_diag_add(st->diags, OAC_CACHE_COPIED, &w,
                        "cache '%s' -> '%s' is copied every token, not updated in "
                        "place (%s): %s; a runtime writes %s into the new buffer for "
                        "each token at the largest known length", e->past, e->present,
                        oac_refusal_name((oac_refusal)e->reason),
                        t->message ? t->message : "", bytes);
}

/* ---- the configuration (section 9.4) ------------------------------------ */

static bool has_input(const oac_scope *s, const char *name)
{
    const oac_value *v = name ? oac_scope_local(s, name) : NULL;
    return v && v->kind == OAC_VAL_INPUT;
}

/* Does the configuration let GenAI share past and present? */
static bool config_shares(const oac_genai_config *c, const oac_scope *s)
{
    bool scatter = has_input(s, c->write_indices) && has_input(s, c->nonpad_kv_seqlen);
    return c->num_beams == 1 && (c->share_buffer || scatter);
}

/* The configuration's key of past's present ("present_key_names"): the
 * first template matching past, as the pairing takes it. */
static const char *present_key(const oac_genai_config *c, const char *past)
{
    for (size_t t = 0; t < c->n_names; t++) {
        long layer;
        const char *k = c->names[t].key;
        if (oac_genai_match(c->names[t].past, past, &layer) && !strncmp(k, "past", 4))
            return k + 4;
    }
    return "_names";
}

/* config-mismatch for pair p when the configuration's present for its
 * past is no graph output, or another output than the one structure or
 * names pair it with (that pair stands: a configuration only adds). */
static int config_present(kvst *st, const oac_kv_pair *p)
{
    const oac_genai_config *c = st->cfg;
    oac_where wo = { .graph = st->s->name, .location = "/graph/output" };
    if (!p->present && (p->found_by & OAC_KV_BY_CONFIG))
        return oac_diag_add(st->diags, OAC_CONFIG_MISMATCH, &wo,
                            "%s: model.decoder.outputs.present%s names '%s' as the present "
                            "of '%s', but the model has no such output; give the template "
                            "of the decoder's present outputs", c->path,
                            present_key(c, p->past->name), p->present_name, p->past->name);
    if (!p->config_present)
        return OAC_OK;
    const oac_value *v = oac_scope_local(st->s, p->config_present);
    bool output = v && v->output_index >= 0;
    const char *key = present_key(c, p->past->name);
    if (p->present)
        snprintf(st->loc, sizeof st->loc, "/graph/output/%d", p->present->output_index);
    oac_where w = { .graph = st->s->name, .value = p->present_name,
                    .location = p->present ? st->loc : "/graph/output" };
    if (!output)
        return oac_diag_add(st->diags, OAC_CONFIG_MISMATCH, &w,
                            "%s: model.decoder.outputs.present%s names '%s' as the present "
                            "of '%s', but the model has no such output: it pairs '%s' "
                            "with '%s'; give the template of the decoder's present outputs",
                            c->path, key, p->config_present, p->past->name, p->past->name,
                            p->present_name);
    return oac_diag_add(st->diags, OAC_CONFIG_MISMATCH, &w,
                        "%s: model.decoder.outputs.present%s names '%s' as the present of "
                        "'%s', but the model pairs '%s' with '%s': a runtime following the "
                        "configuration feeds '%s' back as '%s'; give the template of the "
                        "decoder's present outputs", c->path, key, p->config_present,
                        p->past->name, p->past->name, p->present_name, p->config_present,
                        p->past->name);
}

/* config-mismatch for every decoder name the model lacks. */
static int config_names(kvst *st)
{
    const oac_genai_config *c = st->cfg;
    /* Where a name is missing: the graph's inputs, or its outputs. */
    oac_where w = { .graph = st->s->name, .location = "/graph/input" };
    int rc = OAC_OK;
    /* GenAI feeds the optional decoder inputs (attention_mask,
     * position_ids, ...) only when the model has them; input_ids and the
     * caches it always binds. */
    for (size_t i = 0; rc == OAC_OK && i < c->n_inputs; i++)
        if (!strcmp(c->inputs[i].key, "input_ids") && !has_input(st->s, c->inputs[i].name))
            rc = oac_diag_add(st->diags, OAC_CONFIG_MISMATCH, &w,
                              "%s: model.decoder.inputs.%s names '%s', which is not an "
                              "input of the model; name the decoder's real input there "
                              "(or remove the key)", c->path, c->inputs[i].key,
                              c->inputs[i].name);
    for (size_t t = 0; rc == OAC_OK && t < c->n_names; t++) {
        bool any = false;
        for (size_t i = 0; i < st->s->n_inputs && !any; i++) {
            long layer;
            const oac_value *v = st->s->inputs[i];
            any = v && v->name && oac_genai_match(c->names[t].past, v->name, &layer);
        }
        if (!any)
            rc = oac_diag_add(st->diags, OAC_CONFIG_MISMATCH, &w,
                              "%s: model.decoder.inputs.%s is '%s', which names no input "
                              "of the model; give the template of the decoder's past inputs",
                              c->path, c->names[t].key, c->names[t].past);
    }
    for (size_t k = 0; rc == OAC_OK && k < st->n; k++)
        rc = config_present(st, &st->p[k]);
    return rc;
}

/* Sharing on (a copied or not-a-cache pair), max_length past a static
 * capacity, or sharing off for pairs that could share. */
static int config_sharing(kvst *st)
{
    const oac_genai_config *c = st->cfg;
    bool shares = config_shares(c, st->s);
    size_t can = 0, first = SIZE_MAX;
    int rc = OAC_OK;
    for (size_t k = 0; rc == OAC_OK && k < st->n; k++) {
        const oac_kv_cache *e = &st->an->kv[k];
        oac_where w = where_at(st, k, e);
        bool ok = e->verdict == OAC_KV_IN_PLACE || e->verdict == OAC_KV_IMPLIED;
        can += ok;
        if (ok && first == SIZE_MAX)
            first = k;
        if (shares && !ok)
            rc = oac_diag_add(st->diags, OAC_CONFIG_MISMATCH, &w,
                              "%s turns sharing on (%s), but '%s' is %s from '%s' (%s): "
                              "the runtime binds one buffer of the capacity to both names "
                              "and fails or copies; set search.past_present_share_buffer "
                              "to false, or export an in-place update", c->path,
                              c->share_buffer ? "search.past_present_share_buffer is true"
                                              : "the static-scatter inputs are present",
                              e->present, e->verdict == OAC_KV_COPIED ? "copied"
                                                                      : "not computed",
                              e->past, oac_refusal_name((oac_refusal)e->reason));
        else if (ok && c->max_length > 0 && e->capacity > 0 && c->max_length > e->capacity)
            rc = oac_diag_add(st->diags, OAC_CONFIG_MISMATCH, &w,
                              "%s sets search.max_length to %" PRId64 ", but '%s' has a "
                              "static capacity of %" PRId64 ": the runtime writes past "
                              "the end of the cache; set search.max_length to at most %"
                              PRId64 " or export a larger cache", c->path, c->max_length,
                              e->past, e->capacity, e->capacity);
    }
    if (rc == OAC_OK && !shares && can) {
        /* At the first past that could share. */
        snprintf(st->loc, sizeof st->loc, "/graph/input/%d", st->p[first].past->input_index);
        oac_where w = { .graph = st->s->name, .value = st->p[first].past->name,
                        .location = st->loc };
        rc = oac_diag_add(st->diags, OAC_CONFIG_NO_SHARING, &w,
                          "%s turns sharing off (%s), but %zu of the model's %zu caches "
                          "can be updated in place: the deployment copies them every "
                          "token for nothing; set %s", c->path,
                          c->num_beams != 1 ? "search.num_beams is not 1"
                                            : "search.past_present_share_buffer is not true",
                          can, st->n,
                          c->num_beams != 1 ? "search.num_beams to 1"
                                            : "search.past_present_share_buffer to true");
    }
    return rc;
}

/* ---- oac_check ------------------------------------------------------------ */

/* kv_caches of an analysis whose passes ran. */
static int judge_all(kvst *st)
{
    const oac_graphs *g = st->an->graphs;
    st->s = g && g->n_scopes ? g->scopes[0] : NULL;
    if (!st->s || st->s->kind != OAC_SCOPE_MAIN)
        return OAC_OK;
    int rc = oac_kv_pairs_find(st->ctx, &st->p, &st->n, st->cfg, st->s);
    if (rc == OAC_OK && st->n) {
        rc = oac_annotate_trace(st->ctx, &st->tr, st->s, st->p, st->n, st->cfg != NULL);
        st->an->kv = oac_analysis_calloc(st->an, st->n, sizeof *st->an->kv);
        if (rc == OAC_OK && !st->an->kv)
            rc = OAC_ENOMEM;
        if (rc == OAC_OK)
            rc = collect_refused(st);
    }
    if (rc == OAC_OK)
        st->an->n_kv = st->n;
    for (size_t k = 0; rc == OAC_OK && k < st->n; k++)
        rc = judge_pair(st, k);
    if (rc == OAC_OK && st->deployed)
        rc = config_names(st);
    if (rc == OAC_OK && st->deployed)
        rc = config_sharing(st);
    return rc;
}

int oac_check(oac_ctx *ctx, oac_analysis **out, const oac_model *model,
              const oac_check_opts *opts, oac_diags *diags)
{
    kvst st = { .ctx = ctx, .model = model, .diags = diags };
    oac_genai_config *cfg = NULL;
    oac_strmap_init(&st.refused, ctx);
    int rc = oac_check_passes(ctx, out, model, opts, diags);
    if (rc != OAC_OK)
        return rc;
    st.an = *out;
    /* An unreadable configuration is config-invalid (OAC_EPARSE); the
     * pairs still get their verdicts, without it. */
    char *beside = NULL;
    const char *cpath = opts ? opts->config : NULL;
    int crc = OAC_OK;
    if (!cpath && opts && opts->config_beside && model && model->path &&
        (crc = oac_genai_config_find(ctx, &beside, model->path)) == OAC_OK)
        cpath = beside;
    if (crc == OAC_OK && cpath)
        crc = oac_genai_config_load(ctx, &cfg, cpath, diags);
    if (crc != OAC_OK && crc != OAC_EPARSE) {
        oac_dealloc(ctx, beside);
        rc = crc;
        goto done;
    }
    st.cfg = cfg;
    st.deployed = cfg && !beside;
    if (opts && opts->n_run_dims <= opts->n_dims) {
        st.run_lo = opts->n_dims - opts->n_run_dims;
        st.run_hi = opts->n_dims;
    }
    oac_dealloc(ctx, beside);
    rc = judge_all(&st);
    if (rc == OAC_OK)
        rc = crc;
done:
    oac_kv_pairs_free(ctx, st.p, st.n);
    oac_annotation_free(st.tr);
    oac_strmap_fini(&st.refused);
    oac_genai_config_free(cfg);
    if (rc == OAC_ENOMEM) {
        oac_analysis_free(*out);
        *out = NULL;
        return oac_err(ctx, OAC_ENOMEM, "out of memory");
    }
    return rc;
}

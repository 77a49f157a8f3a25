/* annotate/pairs.c: the one KV pairing (contract, section 9.1).
 *
 * Owns oac_kv_pairs_find and the name patterns of section 7 step 1: which
 * past input a runtime feeds back from which present output, as the union
 * of the structure (Identity links and one cache operator at the ports of
 * its row), a configuration's templates and the names.  check's verdicts
 * (annotate/caches.c), annotate (annotate/annotate.c) and run's
 * generation loop (run/generate.c) pair through it alone.
 *
 * Invariants:
 *  1. The pairing reads the graph index and the configuration only.
 *  2. Each past is paired once, in graph input order; a configuration
 *     adds pairs and never hides one the structure or the names found
 *     (a different present it names is kept beside the pair, for check's
 *     config-mismatch).
 *  3. Work is linear in the graph (each output followed back through
 *     Identity links bounded by the node count).
 */
#include <stdio.h>
#include <string.h>

#include "annotate/pairs.h"
#include "ops.h"

/* ---- pairing ------------------------------------------------------------ */

const oac_value *oac_kv_through_identity(const oac_scope *s, const oac_value *v,
                                         size_t *links)
{
    size_t n = 0;
    for (size_t steps = 0; v && steps <= s->n_nodes; steps++) {
        if (v->kind != OAC_VAL_NODE_OUTPUT || v->port != 0 ||
            !oac_op_is(s->nodes[v->producer].op, OAC_OP_IDENTITY)) {
            if (links)
                *links = n;
            return v;
        }
        n++;
        v = oac_node_input(s, v->producer, 0);
    }
    return NULL;
}

static bool is_output(const oac_scope *s, const char *name)
{
    oac_value *v = oac_scope_local(s, name);
    return v && v->output_index >= 0;
}

/* name with every "past" replaced by "present" (malloc'ed), or NULL. */
static char *every_past(oac_ctx *ctx, const char *name, size_t n)
{
    char *out = oac_alloc(ctx, strlen(name) + 3 * n + 1);
    if (!out)
        return NULL;
    char *o = out;
    for (const char *q = name; *q;) {
        if (strncmp(q, "past", 4) == 0) {
            memcpy(o, "present", 7);
            o += 7;
            q += 4;
        } else {
            *o++ = *q++;
        }
    }
    *o = '\0';
    return out;
}

/* The present name a pattern of contract 7 step 1 gives past, when it is
 * a graph output (malloc'ed into *out), else NULL.  In order:
 * "past_key_values.REST" -> "present.REST"; the first "past" replaced by
 * "present" (past_N, past_key_self_N, ...); every "past" replaced. */
static int pattern_present(oac_ctx *ctx, const oac_scope *s, const char *past, char **out)
{
    static const char pkv[] = "past_key_values.";
    *out = NULL;
    char *cand[3] = { NULL, NULL, NULL };
    bool want[3] = { false, false, false };
    if (strncmp(past, pkv, sizeof pkv - 1) == 0 && past[sizeof pkv - 1]) {
        want[0] = true;
        cand[0] = oac_asprintf(ctx, "present.%s", past + sizeof pkv - 1);
    }
    const char *p = strstr(past, "past");
    if (p) {
        size_t n = 0;
        for (const char *q = p; q; q = strstr(q + 4, "past"))
            n++;
        want[1] = true;
        cand[1] = oac_asprintf(ctx, "%.*spresent%s", (int)(p - past), past, p + 4);
        if (n > 1) {
            want[2] = true;
            cand[2] = every_past(ctx, past, n);
        }
    }
    int rc = OAC_OK;
    for (int i = 0; i < 3; i++)
        if (want[i] && !cand[i])
            rc = OAC_ENOMEM;
    for (int i = 0; i < 3 && rc == OAC_OK && !*out; i++)
        if (cand[i] && is_output(s, cand[i])) {
            *out = cand[i];
            cand[i] = NULL;
        }
    for (int i = 0; i < 3; i++)
        oac_dealloc(ctx, cand[i]);
    return rc;
}

/* Is v a graph input of main graph s (not an initializer's default)? */
static bool graph_input(const oac_scope *s, const oac_value *v)
{
    return v && v->scope == s && v->kind == OAC_VAL_INPUT && v->input_index >= 0 &&
           (size_t)v->input_index < s->n_inputs && s->inputs[v->input_index] == v;
}

/* Section 9.1, 1: the past each graph output is reached from through
 * Identity links and one cache operator at the ports of its row, in
 * slot[past's input index]. */
static void by_structure(const oac_scope *s, const oac_value **slot)
{
    for (size_t o = 0; o < s->n_outputs; o++) {
        const oac_value *q = s->outputs[o];
        if (!q || q->output_index != (int32_t)o)
            continue;
        const oac_value *v = oac_kv_through_identity(s, q, NULL);
        if (!v || v->kind != OAC_VAL_NODE_OUTPUT)
            continue;
        const oac_node *n = &s->nodes[v->producer];
        if (!n->op || n->op->alias != OAC_AL_PAIRS ||
            !oac_op_has(n->op, OAC_OPF_CACHE_UPDATE | OAC_OPF_KV_CACHE))
            continue;
        for (size_t k = 0; k < n->op->n_pairs; k++) {
            if (n->op->pairs[k].out != v->port ||
                (size_t)n->op->pairs[k].in >= n->proto->n_input)
                continue;
            const oac_value *u = oac_kv_through_identity(
                s, oac_node_input(s, v->producer, (size_t)n->op->pairs[k].in), NULL);
            if (graph_input(s, u) && !slot[u->input_index])
                slot[u->input_index] = q;
        }
    }
}

/* Section 9.1, 2: the present the configuration's templates give past
 * (malloc'ed), or NULL. */
static int by_config(oac_ctx *ctx, const oac_genai_config *cfg, const char *past,
                     char **out)
{
    *out = NULL;
    for (size_t t = 0; cfg && t < cfg->n_names; t++) {
        long layer;
        if (!oac_genai_match(cfg->names[t].past, past, &layer))
            continue;
        *out = oac_genai_expand(ctx, cfg->names[t].present, layer);
        return *out ? OAC_OK : OAC_ENOMEM;
    }
    return OAC_OK;
}

void oac_kv_pairs_free(oac_ctx *ctx, oac_kv_pair *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++) {
        oac_dealloc(ctx, p[i].owned);
        oac_dealloc(ctx, p[i].config_present);
    }
    oac_dealloc(ctx, p);
}

/* Pair input i of s from what the three ways found (names malloc'ed):
 * the structure's present, else the names', else the configuration's.
 * A configuration adds a pair and never hides one (invariant 2): a
 * different present it names is kept in config_present, for check. */
static void settle(oac_kv_pair *p, const oac_scope *s, const oac_value *st,
                   char **cfg_name, char **pat_name)
{
    char **names[2] = { pat_name, cfg_name };
    unsigned bits[2] = { OAC_KV_BY_NAMES, OAC_KV_BY_CONFIG };
    if (st) {
        p->present = st;
        p->present_name = st->name;
        p->found_by = OAC_KV_BY_STRUCTURE;
    }
    for (int w = 0; w < 2; w++) {
        char *name = *names[w];
        if (!name)
            continue;
        if (!p->present_name) {
            p->present = oac_scope_local(s, name);
            if (p->present && p->present->output_index < 0)
                p->present = NULL;
            p->present_name = p->present ? p->present->name : name;
            if (!p->present) {      /* the config's name, kept */
                p->owned = name;
                *names[w] = NULL;
            }
            p->found_by |= bits[w];
        } else if (strcmp(p->present_name, name) == 0) {
            p->found_by |= bits[w];
        } else if (bits[w] == OAC_KV_BY_CONFIG) {
            p->config_present = name;
            *names[w] = NULL;
        }
    }
}

int oac_kv_pairs_find(oac_ctx *ctx, oac_kv_pair **out, size_t *n,
                      const oac_genai_config *cfg, const oac_scope *s)
{
    *out = NULL;
    *n = 0;
    size_t ni = s->n_inputs;
    const oac_value **slot = oac_calloc(ctx, ni ? ni : 1, sizeof *slot);
    oac_kv_pair *p = oac_calloc(ctx, ni ? ni : 1, sizeof *p);
    size_t k = 0;
    int rc = slot && p ? OAC_OK : OAC_ENOMEM;
    if (rc == OAC_OK)
        by_structure(s, slot);
    for (size_t i = 0; rc == OAC_OK && i < ni; i++) {
        const oac_value *v = s->inputs[i];
        if (!graph_input(s, v) || !v->name)
            continue;
        char *c = NULL, *q = NULL;
        if ((rc = by_config(ctx, cfg, v->name, &c)) == OAC_OK)
            rc = pattern_present(ctx, s, v->name, &q);
        if (rc == OAC_OK && (slot[i] || c || q)) {
            p[k] = (oac_kv_pair){ .past = v };
            settle(&p[k], s, slot[i], &c, &q);
            k++;
        }
        oac_dealloc(ctx, c);
        oac_dealloc(ctx, q);
    }
    oac_dealloc(ctx, slot);
    if (rc != OAC_OK) {
        oac_kv_pairs_free(ctx, p, k);
        return oac_err(ctx, OAC_ENOMEM, "out of memory");
    }
    *out = p;
    *n = k;
    return OAC_OK;
}


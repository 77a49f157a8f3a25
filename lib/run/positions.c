/* run/positions.c: position and page_id inputs of a run (contract section 5:
 * "A position input is a graph input wired directly to a position or
 * write_indices port: it starts at 0 (or its --input) and advances by its
 * nodes' update length after each step (differing lengths are
 * operand-invalid); a page_id input advances when its page fills, its
 * position returning to 0").
 *
 * Owns: which main-graph inputs are positions, page ids and paged
 * attention lengths (marked once per run from the graph index), the update length each step records for
 * them, and their advance after the step.
 *
 * Invariants:
 *  1. An input is a position when the position port of a cache update
 *     (the operator table's position_port) reads it, at any depth: a
 *     subgraph reads it as an outer value (check/graph.h resolves the name), a
 *     local function through the argument its call passes for that
 *     function input.  Function inputs are followed back to their call
 *     sites once each, so marking is linear in the model.
 *  2. Lengths are recorded by the interpreter before the update's kernel
 *     runs, per session, and reset at every step; the advance changes
 *     only the session's own copy of an input (positions are never bound
 *     caches).
 */
#include <inttypes.h>
#include <string.h>

#include "ops.h"
#include "run/exec.h"

/* The main-graph input v is, or -1. */
static long main_input(const rt_run *r, const oac_value *v)
{
    return v && v->scope == r->main && v->kind == OAC_VAL_INPUT && v->input_index >= 0 &&
           (size_t)v->input_index < r->n_in ? v->input_index : -1;
}

typedef struct marker {
    rt_run *r;
    bool *seen;          /* by value id: a function input followed already */
} marker;

/* Mark what the position value pos (and the page_id value page, or NULL)
 * of one update stand for (invariant 1). */
static int mark(marker *m, const oac_value *pos, const oac_value *page, int depth)
{
    rt_run *r = m->r;
    if (!pos || depth > OAC_MAX_DEPTH)
        return OAC_OK;     /* deeper: refused before the run */
    long pi = main_input(r, pos);
    if (pi >= 0 && r->in[pi].dec >= 0)
        return OAC_OK;     /* driven by the generation loop (run/generate.h) */
    if (pi >= 0) {
        r->in[pi].pos = RT_POS_POSITION;
        long gi = main_input(r, page);
        if (gi >= 0) {
            r->in[gi].pos = RT_POS_PAGE;
            r->in[pi].page = gi;
        }
        return OAC_OK;
    }
    const oac_scope *f = pos->scope;
    if (f->kind != OAC_SCOPE_FUNCTION || pos->kind != OAC_VAL_INPUT || m->seen[pos->id])
        return OAC_OK;
    m->seen[pos->id] = true;
    bool page_arg = page && page->scope == f && page->kind == OAC_VAL_INPUT;
    for (size_t c = 0; c < f->n_calls; c++) {
        const oac_scope *cs = f->calls[c].scope;
        long ci = f->calls[c].node;
        if (r->fn[cs->index][ci] != r->call_fn)
            continue;      /* a kernel of that name runs instead */
        const oac_value *a = oac_node_input(cs, ci, (size_t)pos->input_index);
        const oac_value *b = page_arg ? oac_node_input(cs, ci, (size_t)page->input_index)
                                      : NULL;
        int rc = mark(m, a, b, depth + 1);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

/* Contract 11: a main-graph input read as PagedCacheAttention's length,
 * which neither --input nor the loop's own roles give, gets the loop's
 * total length each step (run/steps.c). */
static void mark_length(rt_run *r, const oac_value *v)
{
    long i = main_input(r, v);
    if (i < 0 || r->in[i].dec >= 0 || r->in[i].pos != RT_POS_NONE)
        return;
    for (size_t k = 0; k < r->opts->n_inputs; k++)
        if (r->opts->inputs[k].name && !strcmp(r->opts->inputs[k].name, v->name))
            return;
    r->in[i].pos = RT_POS_LENGTH;
}

int oac_rt_positions_mark(rt_run *r)
{
    const oac_graphs *g = r->g;
    marker m = { r, oac_calloc(r->ctx, g->n_values ? g->n_values : 1, sizeof *m.seen) };
    int rc = m.seen ? OAC_OK : OAC_ENOMEM;
    for (size_t i = 0; i < r->n_in; i++)
        r->in[i].page = -1;
    for (size_t si = 0; !rc && si < g->n_scopes; si++) {
        const oac_scope *s = g->scopes[si];
        for (size_t i = 0; !rc && i < s->n_nodes; i++) {
            const oac_op *op = s->nodes[i].op;
            if (op && op->id == OAC_OP_PAGED_CACHE_ATTENTION)
                mark_length(r, oac_node_input(s, (long)i, 2));
            if (!op || op->position_port < 0 || !r->fn[si][i])
                continue;
            const oac_value *page = op->page_id_port >= 0
                ? oac_node_input(s, (long)i, (size_t)op->page_id_port) : NULL;
            rc = mark(&m, oac_node_input(s, (long)i, (size_t)op->position_port), page, 0);
        }
    }
    oac_dealloc(r->ctx, m.seen);
    size_t n = 0;
    for (size_t i = 0; i < r->n_in; i++)
        n += r->in[i].pos == RT_POS_POSITION;
    if (!rc && n && !(r->positions = oac_calloc(r->ctx, n, sizeof *r->positions)))
        rc = OAC_ENOMEM;
    for (size_t i = 0; !rc && i < r->n_in; i++)
        if (r->in[i].pos == RT_POS_POSITION)
            r->positions[r->n_positions++] = i;
    return rc;
}

int oac_rt_positions_note(oac_session *s, const oac_node *nd,
                          const Onnx__NodeProto *np, oac_rtval *const *in,
                          const oac_where *w)
{
    const oac_op *op = nd->op;
    if (!op || op->position_port < 0 || (size_t)op->position_port >= np->n_input ||
        !in[op->position_port])
        return OAC_OK;
    rt_run *r = s->run;
    const oac_scope *m = r->main;
    long p = -1;
    for (size_t k = 0; k < r->n_positions && p < 0; k++) {
        size_t i = r->positions[k];
        if (s->main->vals[r->in[i].v->id - m->first_id] == in[op->position_port])
            p = (long)i;
    }
    if (p < 0)
        return OAC_OK;
    int64_t len = -1;
    const oac_rtval *v = op->values_port >= 0 && (size_t)op->values_port < np->n_input
        ? in[op->values_port] : NULL;
    if (v && v->kind == OAC_RTV_TENSOR && v->t.rank >= 1) {
        int64_t axis = op->axis_attr ? oac_attr_int(np, op->axis_attr, op->axis_default)
                                     : op->axis_default;
        if (axis < 0)
            axis += v->t.rank;
        if (axis >= 0 && axis < v->t.rank)
            len = v->t.dims[axis];     /* else the kernel reports the axis */
    }
    int64_t *rec = &s->pos_len[p];
    if (len >= 0 && *rec >= 0 && *rec != len) {
        int rc = oac_diag_add(s->diags, OAC_OPERAND_INVALID, w,
                              "position input '%s' feeds updates of different lengths "
                              "(%" PRId64 " and %" PRId64 ")", r->in[p].v->name, *rec, len);
        return rc ? rc : OAC_ERUNTIME;
    }
    if (len >= 0)
        *rec = len;
    bool paged = oac_op_has(op, OAC_OPF_PAGED);
    if (paged && in[0] && in[0]->kind == OAC_RTV_PAGED)
        s->page_size[p] = in[0]->p.page_dims[2];
    return OAC_OK;
}

void oac_rt_positions_reset(oac_session *s)
{
    for (size_t i = 0; i < s->run->n_in; i++)
        s->pos_len[i] = -1;
}

int oac_rt_positions_advance(oac_session *s)
{
    rt_run *r = s->run;
    const oac_scope *m = r->main;
    for (size_t k = 0; k < r->n_positions; k++) {
        size_t i = r->positions[k];
        const rt_input *in = &r->in[i];
        if (s->pos_len[i] < 0)
            continue;
        oac_rtval *v = s->main->vals[in->v->id - m->first_id];
        if (v->kind != OAC_RTV_TENSOR || v->t.elem_type != OAC_T_INT64)
            continue;
        size_t cnt = v->t.bytes / 8;
        bool page_full = false;
        for (size_t e = 0; e < cnt; e++) {
            int64_t p;
            memcpy(&p, (uint8_t *)v->t.data + e * 8, 8);
            if (oac_add_overflow_i64(p, s->pos_len[i], &p))
                return oac_err(s->ctx, OAC_ERUNTIME, "position '%s' overflows",
                               in->v->name);
            if (in->page >= 0 && s->page_size[i] > 0 && p >= s->page_size[i]) {
                p = 0;
                page_full = true;
            }
            memcpy((uint8_t *)v->t.data + e * 8, &p, 8);
        }
        if (page_full) {
            oac_rtval *pv = s->main->vals[r->in[in->page].v->id - m->first_id];
            if (pv->kind == OAC_RTV_TENSOR && pv->t.elem_type == OAC_T_INT64)
                for (size_t e = 0; e < pv->t.bytes / 8; e++) {
                    int64_t p;
                    memcpy(&p, (uint8_t *)pv->t.data + e * 8, 8);
                    p++;
                    memcpy((uint8_t *)pv->t.data + e * 8, &p, 8);
                }
        }
    }
    return OAC_OK;
}

/* run/pages.c: paged caches between steps (contract section 11): the
 * re-tiering of run --page-policy and the execution.pages records.
 *
 * Owns, per session: the policy's rules resolved against the model's
 * declarations, the re-encoding of aged pages after each step, and the
 * bounded per-step records of every bound paged cache (pages, bytes per
 * declaration, re-encodings), exported into oac_execution.
 *
 * Invariants:
 *  1. A re-encoding touches one page: it decodes that page into counted
 *     workspace (E elements), allocates the new page, encodes it, frees the
 *     workspace and the old page.  The page-table slot keeps its place;
 *     no other page is read, written or moved.
 *  2. Re-encodings run after the step's nodes, inside the step's
 *     allocation counts (alloc_calls, alloc_bytes: two calls each, the
 *     workspace and the page) but not in its measured peak, which is what
 *     the plan predicts for the nodes (the peak before them is kept).
 *  3. A rule naming no declaration, or one that does not decode to the
 *     cache's type or is not among its allowed types, is a usage error
 *     (OAC_EINVAL) before any page changes.
 *  4. Records keep the first OAC_PER_STEP_HEAD and the last
 *     OAC_PER_STEP_TAIL steps (a ring), as the steps' records do.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant/quant.h"
#include "run/exec.h"

enum { KEPT = OAC_PER_STEP_HEAD + OAC_PER_STEP_TAIL };

typedef struct cache_rec {
    size_t bind;                   /* index into run->bind */
    oac_page_step rec[KEPT];       /* head, then the tail ring */
    uint64_t *qbytes;              /* KEPT * n_q */
    uint64_t n_steps;
} cache_rec;

struct oac_rt_pages {
    size_t n_q;
    int64_t *rule_q;               /* per policy rule: declaration index */
    cache_rec *c;
    size_t n_c;
};

static void free_state(oac_ctx *ctx, struct oac_rt_pages *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_c; i++)
        oac_dealloc(ctx, p->c[i].qbytes);
    oac_dealloc(ctx, p->c);
    oac_dealloc(ctx, p->rule_q);
    oac_dealloc(ctx, p);
}

void oac_rt_pages_free(oac_session *s)
{
    free_state(s->ctx, s->pages);
    s->pages = NULL;
}

/* Rule i's declaration: a name, else a decimal index. */
static int resolve(oac_session *s, const Onnx__ModelProto *m, const char *q, int64_t *out)
{
    for (size_t i = 0; q && i < m->n_quantizations; i++)
        if (m->quantizations[i]->name && !strcmp(m->quantizations[i]->name, q)) {
            *out = (int64_t)i;
            return OAC_OK;
        }
    char *end = NULL;
    long long v = q && *q ? strtoll(q, &end, 10) : -1;
    if (!q || !*q || *end || v < 0 || (uint64_t)v >= m->n_quantizations)
        return oac_err(s->ctx, OAC_EINVAL, "--page-policy: '%s' names none of the "
                       "model's %zu quantization declarations", q ? q : "",
                       m->n_quantizations);
    *out = v;
    return OAC_OK;
}

/* Rules usable on cache p (invariant 3). */
static int rules_fit(oac_session *s, const struct oac_rt_pages *st, const oac_paged *p,
                     const char *name)
{
    const Onnx__ModelProto *m = s->run->model->proto;
    for (size_t i = 0; i < s->run->opts->n_page_policy; i++) {
        int64_t q = st->rule_q[i];
        oac_qdesc d;
        char why[200];
        bool allowed = !p->n_allowed;
        for (size_t k = 0; k < p->n_allowed; k++)
            allowed |= p->allowed[k] == q;
        if (!oac_qdesc_from_proto(&d, m->quantizations[q], why, sizeof why))
            return oac_err(s->ctx, OAC_EINVAL, "--page-policy: declaration %lld is "
                           "not a page format: %s", (long long)q, why);
        if (d.data_type != p->elem_type || !allowed)
            return oac_err(s->ctx, OAC_EINVAL, "--page-policy: declaration %lld "
                           "cannot hold the pages of '%s' (%s, or not among its "
                           "allowed types)", (long long)q, name,
                           oac_elem_name(p->elem_type));
    }
    return OAC_OK;
}

static int init_state(oac_session *s)
{
    rt_run *r = s->run;
    const Onnx__ModelProto *m = r->model->proto;
    struct oac_rt_pages *st = oac_calloc(s->ctx, 1, sizeof *st);
    if (!st)
        return OAC_ENOMEM;
    s->pages = st;
    st->n_q = m->n_quantizations;
    size_t nr = r->opts->n_page_policy;
    st->rule_q = oac_calloc(s->ctx, nr ? nr : 1, sizeof *st->rule_q);
    st->c = oac_calloc(s->ctx, r->n_bind ? r->n_bind : 1, sizeof *st->c);
    if (!st->rule_q || !st->c)
        return OAC_ENOMEM;
    int rc;
    for (size_t i = 0; i < nr; i++)
        if ((rc = resolve(s, m, r->opts->page_policy[i].quant, &st->rule_q[i])))
            return rc;
    for (size_t b = 0; b < r->n_bind; b++) {
        if (r->bind_val[b]->kind != OAC_RTV_PAGED)
            continue;
        if ((rc = rules_fit(s, st, &r->bind_val[b]->p, r->bind[b]->name)))
            return rc;
        cache_rec *c = &st->c[st->n_c];
        c->bind = b;
        c->qbytes = oac_calloc(s->ctx, KEPT * (st->n_q ? st->n_q : 1), sizeof *c->qbytes);
        if (!c->qbytes)
            return OAC_ENOMEM;
        st->n_c++;
    }
    return OAC_OK;
}

/* The declaration the policy gives a page of that age, or -1. */
static int64_t target(const oac_session *s, uint64_t age)
{
    const oac_run_opts *o = s->run->opts;
    int64_t q = -1;
    uint64_t best = 0;
    for (size_t i = 0; i < o->n_page_policy; i++)
        if (age >= o->page_policy[i].age && (q < 0 || o->page_policy[i].age >= best)) {
            best = o->page_policy[i].age;
            q = s->pages->rule_q[i];
        }
    return q;
}

/* Invariant 1: page pg of p re-encoded to q; *made its new bytes. */
static int reencode(oac_session *s, oac_paged *p, oac_page *pg, int64_t q, uint64_t *made)
{
    const Onnx__ModelProto *m = s->run->model->proto;
    oac_qdesc from, to;
    char why[200];
    uint64_t n = 1, nb, wb;
    for (int k = 0; k < 4; k++)
        if (p->page_dims[k] < 0 || oac_mul_overflow_u64(n, (uint64_t)p->page_dims[k], &n))
            return oac_err(s->ctx, OAC_EINVAL, "a page shape overflows");
    if (pg->quantized_type < 0 || (size_t)pg->quantized_type >= m->n_quantizations ||
        !oac_qdesc_from_proto(&from, m->quantizations[pg->quantized_type], why, sizeof why) ||
        !oac_qdesc_from_proto(&to, m->quantizations[q], why, sizeof why) ||
        !oac_qdesc_page_bytes(&to, n, &nb) || nb > SIZE_MAX ||
        oac_mul_overflow_u64(n, oac_elem_bits(p->elem_type) / 8, &wb) || wb > SIZE_MAX)
        return oac_err(s->ctx, OAC_EINVAL, "a page cannot be re-encoded to "
                       "declaration %lld", (long long)q);
    void *ws = oac_ralloc_get(&s->alloc, (size_t)wb, false);
    if (wb && !ws)
        return oac_ralloc_failed(&s->alloc);
    uint8_t *data = oac_ralloc_get(&s->alloc, (size_t)nb, true);
    int rc = nb && !data ? oac_ralloc_failed(&s->alloc) : OAC_OK;
    if (!rc)
        rc = oac_dequantize(s->ctx, &from, pg->data, pg->bytes, 0, p->elem_type, ws, (size_t)n);
    if (!rc)
        rc = oac_quantize(s->ctx, &to, data, (size_t)nb, 0, p->elem_type, ws, (size_t)n);
    oac_ralloc_put(&s->alloc, ws, (size_t)wb);
    if (rc) {
        oac_ralloc_put(&s->alloc, data, (size_t)nb);
        return rc;
    }
    oac_page_release(&s->alloc, pg);
    *pg = (oac_page){ .quantized_type = (int32_t)q, .data = data, .bytes = (size_t)nb };
    *made = nb;
    return OAC_OK;
}

/* The record of this step for cache c (invariant 4). */
static void record(struct oac_rt_pages *st, cache_rec *c, const oac_paged *p,
                   uint64_t step, uint64_t re_pages, uint64_t re_bytes)
{
    uint64_t k = c->n_steps++;
    size_t slot = k < OAC_PER_STEP_HEAD ? (size_t)k
                : OAC_PER_STEP_HEAD + (size_t)((k - OAC_PER_STEP_HEAD) % OAC_PER_STEP_TAIL);
    uint64_t *qb = c->qbytes + slot * st->n_q;
    memset(qb, 0, st->n_q * sizeof *qb);
    uint64_t total = 0;
    for (size_t i = 0; i < p->n_pages; i++) {
        const oac_page *pg = &p->pages[i];
        if (pg->quantized_type >= 0 && (size_t)pg->quantized_type < st->n_q)
            qb[pg->quantized_type] += pg->bytes;
        total += pg->bytes;
    }
    c->rec[slot] = (oac_page_step){ .step = step, .pages = p->n_pages,
                                    .bytes_by_quantization = qb, .total_bytes = total,
                                    .re_encoded_pages = re_pages,
                                    .re_encoded_bytes = re_bytes };
}

int oac_rt_pages_begin(oac_session *s)
{
    return s->pages ? OAC_OK : init_state(s);
}

int oac_rt_pages_step(oac_session *s, uint64_t step)
{
    rt_run *r = s->run;
    int rc;
    if (!s->pages && (rc = init_state(s)))
        return rc;
    struct oac_rt_pages *st = s->pages;
    uint64_t keep = s->alloc.step_peak_max;   /* invariant 2 */
    uint64_t keep_peak = s->alloc.step_peak;
    for (size_t i = 0; i < st->n_c; i++) {
        oac_paged *p = &r->bind_val[st->c[i].bind]->p;
        uint64_t re_pages = 0, re_bytes = 0;
        for (size_t k = 0; r->opts->n_page_policy && k < p->n_pages; k++) {
            int64_t q = target(s, (uint64_t)(p->n_pages - 1 - k));
            if (q < 0 || p->pages[k].quantized_type == q)
                continue;
            uint64_t made = 0;
            if ((rc = reencode(s, p, &p->pages[k], q, &made)))
                return rc;
            re_pages++;
            re_bytes += made;
        }
        record(st, &st->c[i], p, step, re_pages, re_bytes);
    }
    s->alloc.step_peak_max = keep;
    s->alloc.step_peak = keep_peak > s->alloc.live ? keep_peak : s->alloc.live;
    return OAC_OK;
}

/* Record c's kept steps in order into e's record out. */
static int export_one(oac_ctx *ctx, const struct oac_rt_pages *st, const cache_rec *c,
                      const char *name, const Onnx__ModelProto *m, oac_page_record *out)
{
    size_t n = c->n_steps < KEPT ? (size_t)c->n_steps : KEPT;
    out->cache = name;
    out->n_quantizations = st->n_q;
    out->per_step_omitted = c->n_steps - n;
    /* One block: the steps, their byte arrays, the names. */
    size_t bytes = n * sizeof *out->per_step + n * st->n_q * sizeof(uint64_t) +
                   st->n_q * sizeof(char *);
    uint8_t *blk = oac_calloc(ctx, 1, bytes ? bytes : 1);
    if (!blk)
        return OAC_ENOMEM;
    out->per_step = (oac_page_step *)(void *)blk;
    uint64_t *qb = (uint64_t *)(void *)(blk + n * sizeof *out->per_step);
    const char **names = (const char **)(void *)(qb + n * st->n_q);
    for (size_t i = 0; i < st->n_q; i++)
        names[i] = m->quantizations[i]->name && *m->quantizations[i]->name
                   ? m->quantizations[i]->name : NULL;
    out->quantization_names = names;
    uint64_t after = c->n_steps > OAC_PER_STEP_HEAD ? c->n_steps - OAC_PER_STEP_HEAD : 0;
    uint64_t tail = after < OAC_PER_STEP_TAIL ? after : OAC_PER_STEP_TAIL;
    size_t k = 0;
    for (uint64_t j = 0; j < c->n_steps && j < OAC_PER_STEP_HEAD; j++, k++)
        out->per_step[k] = c->rec[j];
    for (uint64_t j = after - tail; j < after; j++, k++)
        out->per_step[k] = c->rec[OAC_PER_STEP_HEAD + j % OAC_PER_STEP_TAIL];
    for (size_t i = 0; i < k; i++) {
        memcpy(qb + i * st->n_q, out->per_step[i].bytes_by_quantization,
               st->n_q * sizeof *qb);
        out->per_step[i].bytes_by_quantization = qb + i * st->n_q;
    }
    out->n_per_step = k;
    return OAC_OK;
}

int oac_rt_pages_export(const oac_session *s, oac_ctx *ctx, oac_execution *e)
{
    const struct oac_rt_pages *st = s->pages;
    if (!st || !st->n_c)
        return OAC_OK;
    e->pages = oac_calloc(ctx, st->n_c, sizeof *e->pages);
    if (!e->pages)
        return OAC_ENOMEM;
    for (size_t i = 0; i < st->n_c; i++) {
        int rc = export_one(ctx, st, &st->c[i], s->run->bind[st->c[i].bind]->name,
                            s->run->model->proto, &e->pages[i]);
        if (rc)
            return rc;
        e->n_pages = i + 1;
    }
    return OAC_OK;
}

void oac_rt_pages_release(oac_execution *e)
{
    for (size_t i = 0; i < e->n_pages; i++)
        oac_dealloc(NULL, e->pages[i].per_step);
    oac_dealloc(NULL, e->pages);
    e->pages = NULL;
    e->n_pages = 0;
}

/* steps.c: one session's steps on the reference runtime (contract section
 * 4 `execution`: per_step, pointer_identity, second_cache_bytes; section
 * 5 `run`: --steps, position inputs, --dump).
 *
 * Owns a session's life after the run's tables are made: its main frame
 * (depth 0) and per-input position state, acquiring the bindings, each
 * step (the main graph's outputs of the previous step released, the
 * allocator's step started, the main frame run, the step's figures
 * recorded, the positions advanced) and the dump of the last step.
 *
 * Invariants:
 *  1. per_step lists completed steps only; a step stopped by a finding
 *     or a failure is not counted, its node is the session's stop_node.
 *  2. second_cache_bytes is a per-step figure like the plan's: the
 *     largest step's.
 *  3. One dump per run: the binding winner's, or (nothing bound, every
 *     session ran) the first session's, so no two threads write a file.
 *  4. Records are bounded (issue 12): a session keeps the first
 *     OAC_PER_STEP_HEAD and the last OAC_PER_STEP_TAIL step records,
 *     whatever --steps is; totals (identity, second-cache, peak) are
 *     over every step.
 */
#include <string.h>

#include "rt.h"

static int dump_session(oac_session *s)
{
    rt_run *r = s->run;
    const oac_scope *m = r->main;
    size_t n = m->n_outputs + r->n_bind;
    oac_dump_value *dv = oac_calloc(s->ctx, n ? n : 1, sizeof *dv);
    if (!dv)
        return OAC_ENOMEM;
    size_t k = 0;
    for (size_t b = 0; b < r->n_bind; b++)
        dv[k++] = (oac_dump_value){ r->bind[b]->name, r->bind_val[b], r->model };
    int rc = OAC_OK;
    for (size_t i = 0; i < m->n_outputs && !rc; i++) {
        const oac_rtval *v = oac_frame_value(s->main, m->outputs[i], &rc);
        if (v)
            dv[k++] = (oac_dump_value){ m->output_names[i], v, r->model };
    }
    if (!rc)
        rc = oac_dump_values(s->ctx, s->diags, r->opts->dump_dir, dv, k);
    oac_dealloc(s->ctx, dv);
    return rc;
}

void oac_rt_session_fini(oac_session *s)
{
    if (s->main) {
        oac_frame_leave(s->main);
        oac_dealloc(s->ctx, s->main);
    }
    oac_dealloc(s->ctx, s->ws);
    oac_dealloc(s->ctx, s->ws_bytes);
    oac_dealloc(s->ctx, s->pos_len);
    oac_dealloc(s->ctx, s->page_size);
    s->main = NULL;
    s->ws = NULL;
    s->ws_bytes = NULL;
    s->pos_len = NULL;
    s->page_size = NULL;
}

/* Invariant 4: the step's record, kept when it is one of the first
 * HEAD steps or (for now) of the last TAIL ones. */
static void record(oac_session *s, const oac_step_stats *st)
{
    uint64_t k = s->steps_completed;     /* 0-based index of this step */
    if (k < OAC_PER_STEP_HEAD)
        s->head[k] = *st;
    else
        s->tail[(k - OAC_PER_STEP_HEAD) % OAC_PER_STEP_TAIL] = *st;
}

size_t oac_rt_steps_kept(const oac_session *s, oac_step_stats *out)
{
    uint64_t n = s->steps_completed;
    size_t k = 0;
    for (; k < n && k < OAC_PER_STEP_HEAD; k++)
        out[k] = s->head[k];
    if (n <= OAC_PER_STEP_HEAD)
        return k;
    uint64_t after = n - OAC_PER_STEP_HEAD;      /* steps past the head */
    uint64_t m = after < OAC_PER_STEP_TAIL ? after : OAC_PER_STEP_TAIL;
    for (uint64_t i = after - m; i < after; i++)
        out[k++] = s->tail[i % OAC_PER_STEP_TAIL];
    return k;
}

static int session_init(oac_session *s)
{
    rt_run *r = s->run;
    size_t n = r->n_in ? r->n_in : 1;
    oac_ralloc_init(&s->alloc, s->ctx);
    s->alloc.budget = &r->budget;
    s->pos_len = oac_calloc(s->ctx, n, sizeof *s->pos_len);
    s->page_size = oac_calloc(s->ctx, n, sizeof *s->page_size);
    s->main = oac_calloc(s->ctx, 1, sizeof *s->main);
    if (!s->pos_len || !s->page_size || !s->main)
        return OAC_ENOMEM;
    return oac_frame_main(s->main, s);
}

int oac_rt_session_steps(oac_session *s)
{
    rt_run *r = s->run;
    int rc = session_init(s);
    if (rc)
        return rc;
    if ((rc = oac_bindings_acquire_all(r->bind, r->n_bind, s, s->number, s->diags)))
        return rc;
    s->winner = true;
    for (uint64_t step = 0; step < r->steps; step++) {
        oac_frame_reset(s->main);
        oac_ralloc_step_begin(&s->alloc);
        oac_step_stats st = { .step = step + 1 };
        s->cur_step = &st;
        s->step_second = 0;
        s->work = 0;
        oac_rt_positions_reset(s);
        rc = oac_frame_run(s->main, &s->stop_node);
        s->cur_step = NULL;
        /* Invariant 2: the largest step's. */
        if (s->step_second > s->second_cache)
            s->second_cache = s->step_second;
        if (rc)
            return rc;
        st.alloc_calls = s->alloc.step_calls;
        st.alloc_bytes = s->alloc.step_bytes;
        record(s, &st);
        s->steps_completed = step + 1;
        if (step + 1 < r->steps && (rc = oac_rt_positions_advance(s)))
            return rc;
    }
    /* Invariant 3. */
    if (r->opts->dump_dir && (r->n_bind || s->number <= 1) && (rc = dump_session(s)))
        return rc;
    return OAC_OK;
}

/* run/steps.c: one session's steps on the reference runtime (contract section
 * 4 `execution`: per_step, pointer_identity, second_cache_bytes; section
 * 5 `run`: --steps, position inputs, --dump).
 *
 * Owns a session's life after the run's tables are made: its main frame
 * (depth 0) and per-input position state, acquiring the bindings, each
 * step (the main graph's outputs of the previous step released, the
 * allocator's step started, the decoder inputs fed, the capacity
 * pre-check, the main frame run, the step's figures recorded, the
 * positions and the loop's past length advanced) and the dump of the
 * last step.
 *
 * Invariants:
 *  1. per_step lists completed steps only; a step stopped by a finding
 *     or a failure is not counted, its node is the session's stop_node.
 *  2. second_cache_bytes is a per-step figure like the plan's: the
 *     largest step's.
 *  3. One dump per run: the binding winner's, or (nothing bound, every
 *     session ran) the first session's, so no two threads write a file.
 *     It is written after the last step, or when the capacity pre-check
 *     refuses a step: then nothing ran, and the bound caches and graph
 *     outputs are what the last completed step left.
 *  4. A step runs nothing on an invalid binding (binding-invalid); a step
 *     that fails marks invalid every binding it wrote (run/bind.c), so a
 *     caller's binding a failed step half-wrote is refused until reset.
 *  5. Before any node of a step runs: the driven decoder inputs hold the
 *     step's values (run/generate.h) and the capacity pre-check passed
 *     (run/precheck.c); a refused step executes no node.
 *  6. A stock model's present is fed back as the next past by copy (a
 *     runtime without the contract); copied_bytes counts that copy and
 *     every stock present a kernel wrote into a buffer of its own.  An
 *     annotated cache is bound and updated in place: it adds nothing.
 *  7. Records are bounded (issue 12): a session keeps the first
 *     OAC_PER_STEP_HEAD and the last OAC_PER_STEP_TAIL step records,
 *     whatever --steps is; totals (identity, second-cache, peak, copied
 *     bytes) are over every step.
 */
#include <string.h>

#include "run/generate.h"
#include "run/exec.h"

/* Issue 11 item 5, a runtime without the contract: each stock pair's
 * present of the step that just ended, copied into a fresh buffer as
 * this step's past (an input: bound storage, not in alloc_bytes; its
 * bytes are copied_bytes).  Before the main frame's outputs are
 * released. */
static int feed_back(oac_session *s, oac_step_stats *st)
{
    rt_run *r = s->run;
    const oac_decoder *d = r->dec;
    for (size_t i = 0; i < d->n_pairs; i++) {
        const oac_dec_pair *p = &d->pairs[i];
        const rt_input *in = &r->in[p->past];
        int rc;
        const oac_rtval *q = p->present < r->main->n_outputs
            ? oac_frame_value(s->main, r->main->outputs[p->present], &rc) : NULL;
        if (!q || q->kind != OAC_RTV_TENSOR)
            continue;
        oac_tensor qt = q->t;
        oac_rtval *v = &s->main->objs[in->v->id - r->main->first_id];
        bool same = qt.elem_type == in->tmpl.elem_type && qt.rank == in->tmpl.rank;
        for (int a = 0; same && a < qt.rank; a++)
            same = a == p->seq_axis || qt.dims[a] == in->tmpl.dims[a];
        if (!same)
            return oac_err(s->ctx, OAC_EUNSUPPORTED,
                           "present '%s' (%s, rank %d) cannot be fed back as past '%s': "
                           "its type or a dimension other than the past length differs",
                           r->main->output_names[p->present], oac_elem_name(qt.elem_type),
                           qt.rank, in->v->name);
        void *data = qt.bytes ? oac_ralloc_bound(&s->alloc, qt.bytes) : NULL;
        if (qt.bytes && !data)      /* the budget's refusal, or out of memory */
            return oac_ralloc_refusal(&s->alloc, "the past fed back as", in->v->name);
        if (qt.bytes)
            memcpy(data, qt.data, qt.bytes);
        oac_rtval_release(s->ctx, &s->alloc, v);
        v->kind = OAC_RTV_TENSOR;
        v->storage = OAC_STORE_CONST;
        v->writable = false;
        v->t = qt;
        v->t.data = data;
        st->copied_bytes += qt.bytes;
    }
    return OAC_OK;
}

/* The bytes of the step's stock presents a kernel wrote into buffers of
 * their own (Concat, an update without output_alias: the cache copied
 * or grown), not views of a cache updated in place. */
static uint64_t presents_copied(oac_session *s)
{
    rt_run *r = s->run;
    uint64_t n = 0;
    for (size_t i = 0; i < r->dec->n_pairs; i++) {
        size_t o = r->dec->pairs[i].present;
        int rc;
        const oac_rtval *q = o < r->main->n_outputs
            ? oac_frame_value(s->main, r->main->outputs[o], &rc) : NULL;
        if (q && q->kind == OAC_RTV_TENSOR && q->storage == OAC_STORE_OWNED)
            n += q->t.bytes;
    }
    return n;
}

/* The step's values of the driven decoder inputs (run/generate.h), in place
 * of the previous step's: this session's copies, bound storage like
 * every input (not counted). */
static int feed_inputs(oac_session *s)
{
    rt_run *r = s->run;
    for (size_t i = 0; i < r->n_in; i++) {
        const rt_input *in = &r->in[i];
        if (in->pos == RT_POS_LENGTH && oac_decoder_active(r->dec)) {
            /* Contract 11: the total length, in the session's copy. */
            oac_rtval *v = s->main->vals[in->v->id - r->main->first_id];
            int64_t total = s->past + s->n_new;
            if (v && v->kind == OAC_RTV_TENSOR && v->t.elem_type == OAC_T_INT64 &&
                v->t.bytes == 8 && v->t.data)
                memcpy(v->t.data, &total, 8);
            continue;
        }
        if (in->dec < 0)
            continue;
        oac_rtval *v = &s->main->objs[in->v->id - r->main->first_id];
        oac_rtval_release(s->ctx, &s->alloc, v);
        v->kind = OAC_RTV_TENSOR;
        v->storage = OAC_STORE_CONST;
        v->writable = false;
        int rc = oac_decoder_fill(r->dec, (size_t)in->dec, s->past, s->n_new, &s->alloc,
                                  &v->t);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

/* The bound caches and graph outputs (what --dump writes) into *out
 * (oac_dealloc it), *n of them. */
static int session_values(oac_session *s, oac_dump_value **out, size_t *n)
{
    rt_run *r = s->run;
    const oac_scope *m = r->main;
    size_t cap = m->n_outputs + r->n_bind;
    oac_dump_value *dv = oac_calloc(s->ctx, cap ? cap : 1, sizeof *dv);
    if (!dv)
        return OAC_ENOMEM;
    size_t k = 0;
    for (size_t b = 0; b < r->n_bind; b++)
        dv[k++] = (oac_dump_value){ r->bind[b]->name, r->bind_val[b], r->model };
    int rc = OAC_OK;
    for (size_t i = 0; i < m->n_outputs && !rc; i++) {
        const oac_rtval *v = oac_frame_value(s->main, m->outputs[i], &rc);
        if (v && v->kind != OAC_RTV_NONE)     /* none before a first step */
            dv[k++] = (oac_dump_value){ m->output_names[i], v, r->model };
    }
    *out = dv;
    *n = k;
    return rc;
}

static int dump_session(oac_session *s)
{
    oac_dump_value *dv = NULL;
    size_t k = 0;
    int rc = session_values(s, &dv, &k);
    if (!rc)
        rc = oac_dump_values(s->ctx, s->diags, s->run->opts->dump_dir, dv, k);
    oac_dealloc(s->ctx, dv);
    return rc;
}

/* The step_values hook (kernel_api.h), for the session that dumps. */
static int hook_values(oac_session *s, uint64_t step)
{
    rt_run *r = s->run;
    if (!r->hooks || !r->hooks->step_values || !(r->n_bind || s->number <= 1))
        return OAC_OK;
    oac_dump_value *dv = NULL;
    size_t k = 0;
    int rc = session_values(s, &dv, &k);
    if (!rc)
        r->hooks->step_values(r->hooks->values_arg, step, dv, k);
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
    oac_dealloc(s->ctx, s->wrote);
    oac_rt_pages_free(s);
    s->main = NULL;
    s->ws = NULL;
    s->ws_bytes = NULL;
    s->pos_len = NULL;
    s->page_size = NULL;
    s->wrote = NULL;
}

/* Invariant 7: the step's record, kept when it is one of the first
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
    s->wrote = oac_calloc(s->ctx, r->n_bind ? r->n_bind : 1, sizeof *s->wrote);
    s->main = oac_calloc(s->ctx, 1, sizeof *s->main);
    if (!s->pos_len || !s->page_size || !s->wrote || !s->main)
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
    if ((rc = oac_rt_pages_begin(s)))
        return rc;
    for (uint64_t step = 0; step < r->steps; step++) {
        /* Invariant 4: a binding a failed step wrote runs nothing. */
        if ((rc = oac_rt_bindings_usable(s)))
            return rc;
        oac_rt_bindings_step_begin(s);
        oac_step_stats st = { .step = step + 1,
                              .past_length = oac_decoder_active(r->dec) ? s->past : -1 };
        /* Invariant 6: the previous step's presents become the pasts. */
        if (step > 0 && (rc = feed_back(s, &st)))
            return rc;
        s->n_new = oac_decoder_new_tokens(r->dec, step);
        if ((rc = feed_inputs(s)))
            return rc;
        /* Invariant 5: an overflow known before the step runs nothing;
         * what the last step left is still there to dump (invariant 3). */
        if ((rc = oac_rt_precheck(s))) {
            if (rc == OAC_ERUNTIME && r->opts->dump_dir && (r->n_bind || s->number <= 1)) {
                int drc = dump_session(s);
                if (drc)
                    return drc;
            }
            return rc;
        }
        oac_frame_reset(s->main);
        oac_ralloc_step_begin(&s->alloc);
        s->cur_step = &st;
        s->step_second = 0;
        s->work = 0;
        oac_rt_positions_reset(s);
        rc = oac_frame_run(s->main, &s->stop_node);
        s->cur_step = NULL;
        /* Invariant 2: the largest step's. */
        if (s->step_second > s->second_cache)
            s->second_cache = s->step_second;
        if (rc) {
            oac_rt_bindings_step_failed(s);
            return rc;
        }
        /* Contract 11: aged pages re-encoded, pages recorded. */
        if ((rc = oac_rt_pages_step(s, step + 1)))
            return rc;
        st.alloc_calls = s->alloc.step_calls;
        st.alloc_bytes = s->alloc.step_bytes;
        st.copied_bytes += presents_copied(s);
        record(s, &st);
        s->steps_completed = step + 1;
        s->copied += st.copied_bytes;
        if (r->hooks && r->hooks->step_done)
            r->hooks->step_done(r->hooks->step_arg, &st);
        if ((rc = hook_values(s, step + 1)))
            return rc;
        s->past += s->n_new;
        if (step + 1 < r->steps && (rc = oac_rt_positions_advance(s)))
            return rc;
    }
    /* Invariant 3. */
    if (r->opts->dump_dir && (r->n_bind || s->number <= 1) && (rc = dump_session(s)))
        return rc;
    return OAC_OK;
}

/* run/session.c: oac_run, the reference runtime's entry (contract section 4
 * `execution`, section 5 `run`, runtime codes of section 3).
 *
 * Owns a run: taking the analysis (the caller's, or one made here with
 * the run's --dim and --input when the caller gives none), making the
 * run's tables from it (run/setup.c, run/bind.c, run/positions.c), the refusals
 * before anything runs, one or more sessions (threads for --sessions),
 * and the execution report: the winner's figures, the plan at the run's
 * inputs, and a diagnostic for any failure that stopped the run.
 *
 * Invariants:
 *  1. Nothing executes when the check found an error (contract 5); the
 *     execution object still says how many steps were asked for and that
 *     none ran, so every `run` report has one.
 *  2. Refusals (unsupported-operator, model-invalid, binding-*, and
 *     memory-budget for a known need past the budget, run/budget.c) happen
 *     before anything is allocated; run-time findings (capacity-overflow,
 *     alias-broken, operand-invalid, memory-budget for an allocation)
 *     stop the run at the node, with steps_completed counting whole steps
 *     only.  A failure that stops the run without a finding is reported
 *     at the node it stopped at, so the report's status says error: an
 *     input past the budget as memory-budget (OAC_ERUNTIME then), a rank
 *     or type the runtime does not run as unsupported-operator, out of
 *     memory or a broken invariant as analysis-failed (the tool failing,
 *     not the model; the status stays the failure's); only usage errors
 *     and unreadable --input/--dump files stay operational failures
 *     alone.
 *  3. Sessions share only the model, the analysis, the run's read-only
 *     tables and the bindings (run/exec.h invariant 1); losers of the binding
 *     race report binding-busy (numbered per session) and run nothing;
 *     the winner's figures fill oac_execution.
 *
 * Figures, where the contract leaves a choice (the man page says them):
 * steps are numbered from 1; per_step lists completed steps only; the
 * identity totals count every check made, the stopped step's too
 * (alias-broken is checked, not held); measured_peak_bytes is the
 * largest, over steps, of what a step allocates above what earlier steps
 * left live (pages of a paged cache carried over are cache state, like a
 * bound cache), which for dense models is the allocator's absolute
 * high-water mark; planned_peak_bytes is the plan at the run's dims and
 * inputs (check/plan.c rule 10b: a Loop whose trip count input starts at 0
 * plans no body); peak_matches_plan is their equality, also after a
 * refusal (nothing measured matches a plan of 0); identity counts one
 * check per aliased output per node execution, bodies' nodes included
 * (a Loop body's update once per iteration); second_cache_bytes is the
 * largest step's bytes of out-of-place update outputs, like the plan's
 * per-step figure.  An update of a bound cache without output_alias is
 * not fed back: its output is a new buffer each step and the bound cache
 * is left as it was; a stock model's present is fed back as its next
 * past by copy (run/steps.c, run/generate.h), counted in copied_bytes, and its
 * growing caches make peak_matches_plan false (the plan is the first
 * step's).
 */
#include <string.h>

#include "run/generate.h"
#include "run/exec.h"

static void *session_thread(void *arg)
{
    oac_session *s = arg;
    s->rc = oac_rt_session_steps(s);
    return NULL;
}

/* Copy a session's diagnostics into the caller's list. */
static int merge_diags(oac_diags *to, const oac_diags *from)
{
    for (size_t i = 0; i < oac_diags_count(from); i++) {
        const oac_diag *d = oac_diags_get(from, i);
        oac_where r = { .graph = d->related.graph, .node = d->related.node,
                        .value = d->related.value, .location = d->related.location };
        oac_where w = { d->graph, d->node, d->op_type, d->value, d->location,
                        &r, d->related.message };
        if (oac_diag_add(to, d->code, &w, "%s", d->message))
            return OAC_ENOMEM;
    }
    return OAC_OK;
}

/* Does graph input `name` start the run as one 0 (or false)?  Inputs not
 * given are zero-filled (their template has no data yet). */
static bool input_starts_zero(const rt_run *r, const char *name)
{
    const oac_value *v = name ? oac_scope_local(r->main, name) : NULL;
    if (!v || v->kind != OAC_VAL_INPUT || v->input_index < 0)
        return false;
    const rt_input *in = &r->in[v->input_index];
    if (in->binding >= 0 || in->paged)
        return false;
    const oac_tensor *t = &in->tmpl;
    uint64_t n;
    if (!oac_tensor_numel_rt(t, &n) || n != 1)
        return false;
    if (!t->data)
        return true;
    int64_t x = 1;
    if (t->elem_type == OAC_T_INT64 && t->bytes == 8)
        memcpy(&x, t->data, 8);
    else if (t->elem_type == OAC_T_INT32 && t->bytes == 4) {
        int32_t y;
        memcpy(&y, t->data, 4);
        x = y;
    } else if (t->elem_type == OAC_T_BOOL && t->bytes == 1)
        x = ((const uint8_t *)t->data)[0];
    return x <= 0;
}

/* The static plan at the run's inputs (check/plan.c rule 10b): the same walk,
 * except that a main-graph Loop whose trip count or condition input the
 * run starts at 0 (false) runs no body, so plans no transient.  Equal
 * to the analysis's peak_bytes when no such Loop exists. */
static oac_opt_u64 planned_at_inputs(const rt_run *r, oac_opt_u64 planned)
{
    const oac_plan_sched *p = oac_analysis_schedule(r->an);
    if (!p || !planned.known)
        return planned;
    bool skipped = false;
    uint64_t peak = 0;
    for (size_t i = 0; i < p->n_steps; i++) {
        oac_opt_u64 live = oac_plan_step_live(p, i);
        const oac_plan_extra *x = oac_plan_step_extra(p, i);
        bool skip = input_starts_zero(r, x->loop_trip_input) ||
                    input_starts_zero(r, x->loop_cond_input);
        skipped = skipped || skip;
        uint64_t here;
        if (!live.known || !x->workspace.known || (!skip && !x->transient.known) ||
            oac_add_overflow_u64(live.value, x->workspace.value, &here) ||
            (!skip && oac_add_overflow_u64(here, x->transient.value, &here)))
            return planned;
        if (here > peak)
            peak = here;
    }
    return skipped ? (oac_opt_u64){ true, peak } : planned;
}

static void fill_exec(oac_execution *e, const oac_session *s)
{
    e->steps_completed = s->steps_completed;
    e->identity_checked = s->checked;
    e->identity_held = s->held;
    e->second_cache_bytes = s->second_cache;
    e->copied_bytes = s->copied;
    /* Per step, above what earlier steps left live (pages): the plan's
     * quantity.  For dense models nothing is carried over, and this is
     * the allocator's absolute high-water mark. */
    e->measured_peak_bytes = s->alloc.step_peak_max;
    e->peak_matches_plan = e->planned_peak_bytes.known &&
                           e->planned_peak_bytes.value == e->measured_peak_bytes;
}

/* A check of the model made for the run (its findings are not the
 * run's): at the run's --dim and --input, with the loop's symbols at the
 * first step (first_step) or only those that never change. */
static int own_check(rt_run *r, bool first_step, oac_analysis **out)
{
    oac_dim_binding *dims;
    size_t n_dims;
    int rc = oac_decoder_dims(r->dec, r->opts, first_step, &dims, &n_dims);
    if (rc)
        return rc;
    oac_check_opts co = { .dims = dims, .n_dims = n_dims,
                          .inputs = r->opts->inputs, .n_inputs = r->opts->n_inputs };
    oac_diags *scratch = oac_diags_new(r->ctx);
    if (scratch)
        rc = oac_check(r->ctx, out, r->model, &co, scratch);
    else
        rc = oac_err(r->ctx, OAC_ENOMEM, "out of memory");
    oac_diags_free(scratch);
    oac_dealloc(r->ctx, dims);
    return rc;
}

/* The analysis the run reads: the caller's, or one made here with the
 * run's --dim and --input when the caller gives none or a trimmed one
 * (its findings are not the run's: the caller checked, or chose not to). */
static int take_analysis(rt_run *r, const oac_analysis *given)
{
    if (given && given->model != r->model)
        return oac_err(r->ctx, OAC_EINVAL, "the analysis is of another model");
    if (given && given->graphs) {
        r->an = given;
    } else {
        /* The check a run makes for itself binds what the run's first step
         * binds (oac_run_dims), like the caller's should. */
        int rc = own_check(r, true, &r->own_an);
        if (rc)
            return rc;
        r->an = r->own_an;
    }
    /* The pre-check reads dims from an analysis where the symbols the
     * loop changes from step to step stay symbols (run/precheck.c). */
    r->pre_shapes = r->an->shapes;
    if (oac_decoder_varies(r->dec)) {
        int rc = own_check(r, false, &r->pre_an);
        if (rc)
            return rc;
        r->pre_shapes = r->pre_an->shapes;
    }
    r->g = r->an->graphs;
    r->al = r->an->aliases;
    r->sched = r->an->schedule;
    if (!r->g || !r->g->n_scopes || r->g->scopes[0]->kind != OAC_SCOPE_MAIN || !r->sched)
        return oac_err(r->ctx, OAC_EUNSUPPORTED, "the model has no main graph to run");
    r->main = r->g->scopes[0];
    return OAC_OK;
}

int oac_run_with_hooks(oac_ctx *ctx, oac_execution **out,
                       const oac_model *model, const oac_analysis *analysis,
                       const oac_run_opts *opts, const oac_run_hooks *hooks,
                       oac_diags *diags)
{
    static const oac_run_opts no_opts;
    *out = NULL;
    if (!opts)
        opts = &no_opts;
    if (!model || !model->proto)
        return oac_err(ctx, OAC_EINVAL, "no model to run");
    /* Contract 12: a dump that would write over an input of the call or
     * the -o file, or into a symbolic link, is a usage error before any
     * step (dump.c). */
    if (opts->dump_dir) {
        int grc = oac_dump_gate(ctx, model, opts->dump_dir);
        if (grc != OAC_OK)
            return grc;
    }
    size_t errors_before = oac_diags_count_severity(diags, OAC_SEV_ERROR);
    long stop_node = -1;
    rt_run r = { .ctx = ctx, .model = model, .opts = opts, .hooks = hooks,
                 .steps = opts->steps ? opts->steps : 1 };
    unsigned n_sess = opts->sessions ? opts->sessions : 1;
    oac_session *sess = NULL;
    oac_execution *e = oac_calloc(ctx, 1, sizeof *e);
    int rc = OAC_OK;
    oac_membudget_init(&r.budget, opts->max_memory);
    oac_ralloc_init(&r.balloc, ctx);
    r.balloc.budget = &r.budget;
    if (!e) {
        rc = OAC_ENOMEM;
        goto done;
    }
    e->steps_requested = r.steps;
    if (analysis) {
        const oac_memory_plan *mp = oac_analysis_plan(analysis);
        if (mp)
            e->planned_peak_bytes = mp->peak_bytes;
    }
    /* Invariant 1. */
    if (errors_before > 0)
        goto done;
    if (!model->proto->graph) {
        /* The check's model-invalid (check/structure.c), for a caller that did
         * not check. */
        oac_where w = { .location = "/graph" };
        rc = oac_diag_add(diags, OAC_MODEL_INVALID, &w, "the model has no graph to run");
        rc = rc ? rc : OAC_ERUNTIME;
        goto done;
    }
    if (n_sess > 1024) {
        rc = oac_err(ctx, OAC_EINVAL, "--sessions %u: at most 1024", n_sess);
        goto done;
    }
    if ((rc = oac_decoder_new(ctx, &r.dec, model, opts, diags)))
        goto done;
    if ((rc = take_analysis(&r, analysis)))
        goto done;
    /* Invariant 2: refusals before anything is allocated: operators,
     * then the memory budget. */
    if ((rc = oac_rt_setup(&r, diags)) || (rc = oac_rt_budget_precheck(&r, n_sess, diags)) ||
        (rc = oac_rt_bind_inputs(&r)) || (rc = oac_rt_positions_mark(&r)))
        goto done;
    e->planned_peak_bytes = planned_at_inputs(&r, e->planned_peak_bytes);
    /* Invariant 2: refusals before anything runs: each binding, overlaps,
     * roots. */
    int refuse = oac_rt_check_bindings(&r, diags, &e->cache_bytes_bound);
    if (refuse == OAC_ENOMEM) {
        rc = refuse;
        goto done;
    }
    int orc = oac_rt_check_roots(&r, diags);
    if (orc == OAC_ENOMEM) {
        rc = orc;
        goto done;
    }
    if (orc)
        refuse = orc;
    if (refuse) {
        rc = refuse;
        goto done;
    }

    sess = oac_calloc(ctx, n_sess, sizeof *sess);
    if (!sess) {
        rc = OAC_ENOMEM;
        goto done;
    }
    for (unsigned i = 0; i < n_sess; i++) {
        sess[i].run = &r;
        sess[i].stop_node = -1;
        if (n_sess == 1) {
            sess[i].ctx = ctx;
            sess[i].diags = diags;
            continue;
        }
        sess[i].own_ctx = true;
        sess[i].number = i + 1;
        sess[i].ctx = oac_ctx_new();
        sess[i].diags = sess[i].ctx ? oac_diags_new(sess[i].ctx) : NULL;
        if (!sess[i].diags) {
            rc = oac_err(ctx, OAC_ENOMEM, "out of memory (session %u)", i);
            goto done;
        }
    }
    if (n_sess == 1) {
        sess[0].rc = oac_rt_session_steps(&sess[0]);
    } else {
        unsigned started = 0;
        for (; started < n_sess; started++)
            if (pthread_create(&sess[started].thread, NULL, session_thread,
                               &sess[started])) {
                rc = oac_err(ctx, OAC_EINTERNAL, "cannot start session thread %u", started);
                break;
            }
        for (unsigned i = 0; i < started; i++)
            pthread_join(sess[i].thread, NULL);
        if (rc)
            goto done;
    }
    /* Outcome: the winner's figures; operational failures of any session
     * come first. */
    int winner_rc = OAC_ERUNTIME;
    bool filled = false;
    for (unsigned i = 0; i < n_sess; i++) {
        oac_session *s = &sess[i];
        if (n_sess > 1) {
            int mrc = merge_diags(diags, s->diags);
            if (mrc) {
                rc = oac_err(ctx, mrc, "out of memory merging diagnostics");
                goto done;
            }
        }
        if (s->rc != OAC_OK && stop_node < 0)
            stop_node = s->stop_node;
        if (s->rc != OAC_OK && s->rc != OAC_ERUNTIME && !rc) {
            rc = s->rc;
            if (s->own_ctx)
                oac_err(ctx, rc, "%s", oac_errmsg(s->ctx));
        }
        if (s->winner && !filled) {
            filled = true;
            fill_exec(e, s);
            winner_rc = s->rc;
            if (s->steps_completed) {
                e->per_step = oac_calloc(ctx, OAC_PER_STEP_HEAD + OAC_PER_STEP_TAIL,
                                         sizeof *e->per_step);
                if (!e->per_step) {
                    rc = OAC_ENOMEM;
                    goto done;
                }
                e->n_per_step = oac_rt_steps_kept(s, e->per_step);
                e->per_step_omitted = s->steps_completed - e->n_per_step;
            }
        }
    }
    if (!rc)
        rc = winner_rc;
done:
    /* Invariant 2: a run that stopped must say so in the report, not only
     * on ctx.  Usage errors (EINVAL) and unreadable --input/--dump files
     * (EPARSE, EIO) stay operational failures. */
    if (rc < 0 && rc != OAC_EINVAL && rc != OAC_EPARSE && rc != OAC_EIO &&
        (rc == OAC_EBUDGET ||
         oac_diags_count_severity(diags, OAC_SEV_ERROR) == errors_before)) {
        const oac_node *n = r.main && stop_node >= 0 ? oac_scope_node(r.main, stop_node)
                                                     : NULL;
        char loc[OAC_RT_LOC_MAX];
        oac_where w = { .graph = r.main ? oac_rt_scope_name(r.main) : NULL,
                        .node = n ? n->display : NULL,
                        .op_type = n ? n->proto->op_type : NULL,
                        .location = n ? oac_node_loc(loc, sizeof loc, r.main, stop_node, NULL)
                                      : NULL };
        if (!w.graph && model->proto->graph)
            w.graph = model->proto->graph->name ? model->proto->graph->name : "main";
        /* The budget (an input's bindings or data) is a finding that
         * explains the stop; a broken invariant or out of memory is the
         * tool failing, not the model; what the runtime cannot execute
         * (a rank, a type) is unsupported-operator. */
        oac_code code = oac_status_code(rc);
        /* Best effort: out of memory may make this fail too. */
        int drc = oac_diag_add(diags, code, &w, "the reference runtime stopped%s%s: %s",
                               n ? " at node " : "", n ? n->display : "",
                               *oac_errmsg(ctx) ? oac_errmsg(ctx) : "operational failure");
        /* Explained by that finding: the stop is the run's, one code. */
        if ((rc == OAC_EBUDGET || rc == OAC_EUNSUPPORTED) && !drc)
            rc = OAC_ERUNTIME;
    }
    /* Equality at the run's dims, also after a refusal (nothing measured
     * then, which matches a plan of 0). */
    if (e)
        e->memory_peak_bytes = atomic_load(&r.budget.peak);
    if (e)
        e->peak_matches_plan = e->planned_peak_bytes.known &&
                               e->planned_peak_bytes.value == e->measured_peak_bytes;
    for (unsigned i = 0; sess && i < n_sess; i++) {
        if (!sess[i].run)
            continue;
        oac_rt_session_fini(&sess[i]);
        if (sess[i].own_ctx) {
            oac_diags_free(sess[i].diags);
            oac_ctx_free(sess[i].ctx);
        }
    }
    for (unsigned i = 0; sess && i < n_sess; i++)
        oac_bindings_release_all(r.bind, r.n_bind, &sess[i]);
    oac_dealloc(ctx, sess);
    if (r.g)
        oac_rt_bind_fini(&r);
    oac_dealloc(ctx, r.positions);
    oac_rt_setup_fini(&r);
    oac_analysis_free(r.own_an);
    oac_analysis_free(r.pre_an);
    oac_decoder_free(r.dec);
    *out = e;
    return rc;
}

int oac_run(oac_ctx *ctx, oac_execution **out, const oac_model *model,
            const oac_analysis *analysis, const oac_run_opts *opts,
            oac_diags *diags)
{
    return oac_run_with_hooks(ctx, out, model, analysis, opts, NULL, diags);
}

void oac_execution_free(oac_execution *exec)
{
    if (!exec)
        return;
    oac_dealloc(NULL, exec->per_step);
    oac_dealloc(NULL, exec);
}

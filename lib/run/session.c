/* run/session.c: oac_run, the reference runtime's entry (contract section 4
 * `execution`, section 5 `run`, runtime codes of section 3).
 *
 * Owns a run, in three parts: setup (taking the analysis -- the
 * caller's, or one made here with the run's --dim and --input when the
 * caller gives none -- making the run's tables from it: run/setup.c,
 * run/bind.c, run/positions.c, and the refusals before anything runs),
 * sessions (one, or threads for --sessions) and the outcome (the
 * winner's figures, the plan at the run's inputs, and the one
 * classification of a failure that stopped the run into a diagnostic).
 *
 * Invariants:
 *  1. Nothing executes when the check found an error (contract 5); the
 *     execution object still says how many steps were asked for and that
 *     none ran, so every `run` report has one.  An analysis with
 *     structure errors (model-invalid) the caller's diagnostics do not
 *     show is refused with the findings of the run's own check: no
 *     runtime file restates the check's structure rules.
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
 * plans no body), and when the loop's symbols change from step to step
 * the largest of each step's plan at its own dims (plan_steps: the
 * shapes and plan passes again, not a check); peak_matches_plan is their
 * equality, also after a refusal (nothing measured matches a plan of 0);
 * identity counts one check per aliased output per node execution,
 * bodies' nodes included
 * (a Loop body's update once per iteration); second_cache_bytes is the
 * largest step's bytes of out-of-place update outputs, like the plan's
 * per-step figure.  An update of a bound cache without output_alias is
 * not fed back: its output is a new buffer each step and the bound cache
 * is left as it was; a stock model's present is fed back as its next
 * past by copy (run/steps.c, run/generate.h), counted in copied_bytes; its
 * growing caches are planned at each step's length.
 */
#include <string.h>

#include "check/shapes_at.h"
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

/* Does main-graph input value `id` start the run as one 0 (or false)?
 * Inputs not given are zero-filled (their template has no data yet). */
static bool input_starts_zero(const void *arg, int64_t id)
{
    const rt_run *r = arg;
    const oac_value *v = id >= 0 && (size_t)id < r->g->n_values
                             ? oac_graphs_value(r->g, (size_t)id) : NULL;
    if (!v || v->scope != r->main || v->kind != OAC_VAL_INPUT || v->input_index < 0)
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

/* step_opts' k for the symbols that keep one number every step only. */
#define STEP_CONSTANTS UINT64_MAX

/* The options of a check the run makes: its --dim and --input, with the
 * loop's symbols at step k (oac_decoder_dims_at; STEP_CONSTANTS: only
 * the symbols that never change).  co->dims is the caller's to free. */
static int step_opts(const rt_run *r, uint64_t k, oac_check_opts *co)
{
    oac_dim_binding *dims;
    size_t n_dims;
    int rc = k == STEP_CONSTANTS
             ? oac_decoder_dims(r->dec, r->opts, false, &dims, &n_dims)
             : oac_decoder_dims_at(r->dec, r->opts, k, &dims, &n_dims);
    *co = (oac_check_opts){ .dims = dims, .n_dims = n_dims,
                            .inputs = r->opts->inputs,
                            .n_inputs = r->opts->n_inputs };
    return rc;
}

/* The static plan of analysis an at the run's inputs: its own figure
 * (oac_plan_peak_at_inputs, check/plan.c rule 10b) with the Loops the
 * run starts at 0 left out; `planned` when none is, or one is unknown. */
static oac_opt_u64 planned_peak(const rt_run *r, const oac_analysis *an,
                                oac_opt_u64 planned)
{
    uint64_t peak;
    bool skipped;
    if (planned.known &&
        oac_plan_peak_at_inputs(oac_analysis_schedule(an), input_starts_zero, r,
                                &peak, &skipped) && skipped)
        return (oac_opt_u64){ true, peak };
    return planned;
}

/* The plan at step k's dims (oac_decoder_dims_at): the shapes and plan
 * passes over the run's analysis (check/shapes_at.h), no full check. */
static int plan_step(const rt_run *r, uint64_t k, oac_opt_u64 *out)
{
    oac_check_opts co;
    int rc = step_opts(r, k, &co);
    oac_analysis *at = NULL;
    if (!rc && !(rc = oac_check_plan_at(r->ctx, r->an, &co, &at)))
        *out = planned_peak(r, at, at->plan.peak_bytes);
    oac_analysis_free(at);
    oac_dealloc(r->ctx, (void *)co.dims);
    return rc;
}

/* planned_peak_bytes when the loop's symbols change from step to step
 * (a stock decoder's fed-back caches grow, a prompt's step is wider):
 * the largest of the plans of the steps that ran, each at its own dims,
 * as measured_peak_bytes is the largest step's.  Steps 1 .. last (the
 * stopped one included, it may have allocated); *planned is step 0's.
 * Unknown when a step's plan is. */
static int plan_steps(const rt_run *r, uint64_t last, oac_opt_u64 *planned)
{
    if (!planned->known || !oac_decoder_varies(r->dec))
        return OAC_OK;
    for (uint64_t k = 1; k <= last; k++) {
        oac_opt_u64 at = { false, 0 };
        int rc = plan_step(r, k, &at);
        if (rc)
            return rc;
        if (!at.known) {
            *planned = at;
            return OAC_OK;
        }
        if (at.value > planned->value)
            planned->value = at.value;
    }
    return OAC_OK;
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

/* Copy the model-invalid findings of `from` into `to`, counted in *n. */
static int keep_invalid(oac_diags *to, const oac_diags *from, size_t *n)
{
    for (size_t i = 0; i < oac_diags_count(from); i++) {
        const oac_diag *d = oac_diags_get(from, i);
        if (d->code != OAC_MODEL_INVALID)
            continue;
        oac_where r = { .graph = d->related.graph, .node = d->related.node,
                        .value = d->related.value, .location = d->related.location };
        oac_where w = { d->graph, d->node, d->op_type, d->value, d->location,
                        &r, d->related.message };
        if (oac_diag_add(to, d->code, &w, "%s", d->message))
            return OAC_ENOMEM;
        (*n)++;
    }
    return OAC_OK;
}

/* The check a run makes for itself, at the run's --dim and --input with
 * the loop's symbols at the first step (oac_run_dims), like the caller's
 * should.  Its structure errors (model-invalid) are the run's: kept in
 * diags and counted in *invalid; its other findings are not (the caller
 * checked, or chose not to). */
static int own_check(rt_run *r, oac_diags *diags, size_t *invalid)
{
    oac_check_opts co;
    int rc = step_opts(r, 0, &co);
    oac_diags *found = rc ? NULL : oac_diags_new(r->ctx);
    if (found)
        rc = oac_check(r->ctx, &r->own_an, r->model, &co, found);
    else if (!rc)
        rc = oac_err(r->ctx, OAC_ENOMEM, "out of memory");
    if (!rc && r->own_an->n_invalid)
        rc = keep_invalid(diags, found, invalid);
    oac_diags_free(found);
    oac_dealloc(r->ctx, (void *)co.dims);
    return rc;
}

/* The dims the pre-check reads (run/precheck.c): the analysis's, or,
 * when the loop changes symbols from step to step, the shapes pass alone
 * at the dims that never change, so those stay symbols
 * (check/shapes_at.h; no second check). */
static int pre_shapes(rt_run *r)
{
    r->pre_shapes = r->an->shapes;
    if (!oac_decoder_varies(r->dec))
        return OAC_OK;
    oac_check_opts co;
    int rc = step_opts(r, STEP_CONSTANTS, &co);
    if (!rc && !(rc = oac_check_shapes_at(r->ctx, r->an, &co, &r->pre_an)))
        r->pre_shapes = r->pre_an->shapes;
    oac_dealloc(r->ctx, (void *)co.dims);
    return rc;
}

/* The analysis the run reads: the caller's, or the run's own when the
 * caller gives none, a trimmed one, or one with structure errors its
 * diagnostics do not show.  An analysis with structure errors runs
 * nothing (invariant 1): the own check's model-invalid findings say why. */
static int take_analysis(rt_run *r, const oac_analysis *given, oac_diags *diags)
{
    if (given && given->model != r->model)
        return oac_err(r->ctx, OAC_EINVAL, "the analysis is of another model");
    int rc;
    if (given && given->graphs && !given->n_invalid) {
        r->an = given;
    } else {
        size_t invalid = 0;
        if ((rc = own_check(r, diags, &invalid)))
            return rc;
        r->an = r->own_an;
        if (invalid)
            return OAC_ERUNTIME;
    }
    if ((rc = pre_shapes(r)))
        return rc;
    r->g = r->an->graphs;
    r->al = r->an->aliases;
    r->sched = r->an->schedule;
    if (!r->g || !r->g->n_scopes || r->g->scopes[0]->kind != OAC_SCOPE_MAIN || !r->sched)
        return oac_err(r->ctx, OAC_EUNSUPPORTED, "the model has no main graph to run");
    r->main = r->g->scopes[0];
    return OAC_OK;
}

/* ---- setup, sessions, outcome --------------------------------------- */

/* Everything before a session starts: the analysis, the run's tables,
 * and the refusals (invariant 2: operators, then the memory budget,
 * before anything is allocated; then each binding, overlaps, roots,
 * before anything runs). */
static int run_setup(rt_run *r, const oac_analysis *analysis, unsigned n_sess,
                     oac_execution *e, oac_diags *diags)
{
    int rc;
    if (n_sess > 1024)
        return oac_err(r->ctx, OAC_EINVAL, "--sessions %u: at most 1024", n_sess);
    if ((rc = oac_decoder_new(r->ctx, &r->dec, r->model, r->opts, diags)) ||
        (rc = take_analysis(r, analysis, diags)))
        return rc;
    if ((rc = oac_rt_setup(r, diags)) || (rc = oac_rt_budget_precheck(r, n_sess, diags)) ||
        (rc = oac_rt_bind_inputs(r)) || (rc = oac_rt_positions_mark(r)))
        return rc;
    e->planned_peak_bytes = planned_peak(r, r->an, e->planned_peak_bytes);
    int refuse = oac_rt_check_bindings(r, diags, &e->cache_bytes_bound);
    if (refuse == OAC_ENOMEM)
        return refuse;
    int orc = oac_rt_check_roots(r, diags);
    return orc ? orc : refuse;
}

/* n sessions (invariant 3): one shares the caller's context and
 * diagnostics; several have their own, numbered from 1.  *out is set
 * also when a later one fails (run_free frees what was made). */
static int sessions_new(rt_run *r, unsigned n, oac_diags *diags, oac_session **out)
{
    oac_session *sess = oac_calloc(r->ctx, n, sizeof *sess);
    *out = sess;
    if (!sess)
        return OAC_ENOMEM;
    for (unsigned i = 0; i < n; i++) {
        sess[i].run = r;
        sess[i].stop_node = -1;
        if (n == 1) {
            sess[i].ctx = r->ctx;
            sess[i].diags = diags;
            continue;
        }
        sess[i].own_ctx = true;
        sess[i].number = i + 1;
        sess[i].ctx = oac_ctx_new();
        sess[i].diags = sess[i].ctx ? oac_diags_new(sess[i].ctx) : NULL;
        if (!sess[i].diags)
            return oac_err(r->ctx, OAC_ENOMEM, "out of memory (session %u)", i);
    }
    return OAC_OK;
}

/* Run the sessions: in the caller's thread for one, a thread each for
 * several. */
static int sessions_run(rt_run *r, oac_session *sess, unsigned n)
{
    if (n == 1) {
        sess[0].rc = oac_rt_session_steps(&sess[0]);
        return OAC_OK;
    }
    int rc = OAC_OK;
    unsigned started = 0;
    for (; started < n; started++)
        if (pthread_create(&sess[started].thread, NULL, session_thread, &sess[started])) {
            rc = oac_err(r->ctx, OAC_EINTERNAL, "cannot start session thread %u", started);
            break;
        }
    for (unsigned i = 0; i < started; i++)
        pthread_join(sess[i].thread, NULL);
    return rc;
}

/* The winner's figures into e; the sessions' findings into diags; the
 * first stopped session's node in *stop_node.  The run's status:
 * operational failures of any session first, else the winner's. */
static int outcome(rt_run *r, oac_session *sess, unsigned n, oac_execution *e,
                   oac_diags *diags, long *stop_node)
{
    int rc = OAC_OK, winner_rc = OAC_ERUNTIME;
    bool filled = false;
    for (unsigned i = 0; i < n; i++) {
        oac_session *s = &sess[i];
        if (n > 1) {
            int mrc = merge_diags(diags, s->diags);
            if (mrc)
                return oac_err(r->ctx, mrc, "out of memory merging diagnostics");
        }
        if (s->rc != OAC_OK && *stop_node < 0)
            *stop_node = s->stop_node;
        if (s->rc != OAC_OK && s->rc != OAC_ERUNTIME && !rc) {
            rc = s->rc;
            if (s->own_ctx)
                oac_err(r->ctx, rc, "%s", oac_errmsg(s->ctx));
        }
        if (!s->winner || filled)
            continue;
        filled = true;
        uint64_t last = s->steps_completed < r->steps ? s->steps_completed
                                                      : r->steps - 1;
        int prc = plan_steps(r, last, &e->planned_peak_bytes);
        if (prc)
            return prc;
        fill_exec(e, s);
        winner_rc = s->rc;
        if (s->steps_completed) {
            e->per_step = oac_calloc(r->ctx, OAC_PER_STEP_HEAD + OAC_PER_STEP_TAIL,
                                     sizeof *e->per_step);
            if (!e->per_step)
                return OAC_ENOMEM;
            e->n_per_step = oac_rt_steps_kept(s, e->per_step);
            e->per_step_omitted = s->steps_completed - e->n_per_step;
            prc = oac_rt_pages_export(s, r->ctx, e);   /* contract 11 */
            if (prc)
                return prc;
        }
    }
    return rc ? rc : winner_rc;
}

/* The failure classification (invariant 2), status -> code: a run that
 * stopped with status rc and no new error saying why gets one at the node
 * it stopped at.  The budget (an input's bindings or data) is a finding
 * that explains the stop (memory-budget); what the runtime cannot
 * execute (a rank, a type) is unsupported-operator (either way the status
 * becomes OAC_ERUNTIME, explained by that one finding); a broken invariant or out of memory is the tool
 * failing, not the model (analysis-failed).  Usage errors (EINVAL) and
 * unreadable --input/--dump files (EPARSE, EIO) stay operational
 * failures.  Returns the run's status. */
static int classify(const rt_run *r, int rc, long stop_node, size_t errors_before,
                    oac_diags *diags)
{
    if (rc >= 0 || rc == OAC_EINVAL || rc == OAC_EPARSE || rc == OAC_EIO ||
        (rc != OAC_EBUDGET &&
         oac_diags_count_severity(diags, OAC_SEV_ERROR) != errors_before))
        return rc;
    const oac_node *n = r->main && stop_node >= 0 ? oac_scope_node(r->main, stop_node) : NULL;
    char loc[OAC_RT_LOC_MAX];
    oac_where w = { .graph = r->main ? oac_rt_scope_name(r->main) : NULL,
                    .node = n ? n->display : NULL,
                    .op_type = n ? n->proto->op_type : NULL,
                    .location = n ? oac_node_loc(loc, sizeof loc, r->main, stop_node, NULL)
                                  : NULL };
    const Onnx__GraphProto *g = r->model->proto->graph;
    if (!w.graph && g)
        w.graph = g->name ? g->name : "main";
    oac_code code = oac_status_code(rc);   /* the one status -> code map */
    /* Best effort: out of memory may make this fail too. */
    int drc = oac_diag_add(diags, code, &w, "the reference runtime stopped%s%s: %s",
                           n ? " at node " : "", n ? n->display : "",
                           *oac_errmsg(r->ctx) ? oac_errmsg(r->ctx) : "operational failure");
    /* Explained by that finding: the stop is the run's, one code. */
    return (rc == OAC_EBUDGET || rc == OAC_EUNSUPPORTED) && !drc ? OAC_ERUNTIME : rc;
}

/* Everything the run made, whatever happened. */
static void run_free(rt_run *r, oac_session *sess, unsigned n)
{
    for (unsigned i = 0; sess && i < n; i++) {
        if (!sess[i].run)
            continue;
        oac_rt_session_fini(&sess[i]);
        if (sess[i].own_ctx) {
            oac_diags_free(sess[i].diags);
            oac_ctx_free(sess[i].ctx);
        }
    }
    for (unsigned i = 0; sess && i < n; i++)
        oac_bindings_release_all(r->bind, r->n_bind, &sess[i]);
    oac_dealloc(r->ctx, sess);
    if (r->g)
        oac_rt_bind_fini(r);
    oac_dealloc(r->ctx, r->positions);
    oac_rt_setup_fini(r);
    oac_analysis_free(r->own_an);
    oac_analysis_free(r->pre_an);
    oac_decoder_free(r->dec);
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
    const oac_memory_plan *mp = analysis ? oac_analysis_plan(analysis) : NULL;
    if (mp)
        e->planned_peak_bytes = mp->peak_bytes;
    /* Invariant 1: nothing runs after the check found an error. */
    if (errors_before > 0)
        goto done;
    if ((rc = run_setup(&r, analysis, n_sess, e, diags)) ||
        (rc = sessions_new(&r, n_sess, diags, &sess)) ||
        (rc = sessions_run(&r, sess, n_sess)))
        goto done;
    rc = outcome(&r, sess, n_sess, e, diags, &stop_node);
done:
    rc = classify(&r, rc, stop_node, errors_before, diags);
    /* Equality at the run's dims, also after a refusal (nothing measured
     * then, which matches a plan of 0). */
    if (e) {
        e->memory_peak_bytes = atomic_load(&r.budget.peak);
        e->peak_matches_plan = e->planned_peak_bytes.known &&
                               e->planned_peak_bytes.value == e->measured_peak_bytes;
    }
    run_free(&r, sess, n_sess);
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
    oac_rt_pages_release(exec);
    oac_dealloc(NULL, exec);
}

/* run/exec.h: how a run executes on the reference runtime (contract sections
 * 4 `execution`, 5 `run`, 8).
 *
 * Owns the structures the runtime's files share, each file one concept:
 *  - run/setup.c   the run's tables, made once from the analysis and
 *                 shared read-only by its sessions: the kernel of every
 *                 node of every scope, the refusals before anything runs
 *                 (unsupported operators, nesting, immutable roots);
 *  - run/bind.c       the run's graph inputs: their data, the bindings of
 *                 READ_WRITE ones, and the binding refusals;
 *  - run/positions.c  position and page_id inputs: which they are, the
 *                 lengths a step's updates record, the advance after it;
 *  - run/generate.c    the generation loop (run/generate.h): decoder inputs, stock
 *                 pairs fed back, the symbols the loop binds each step;
 *  - run/precheck.c   the capacity pre-check before a step runs any node;
 *  - run/interp.c     the interpreter: frames (one type for the main graph
 *                 at depth 0, If/Loop bodies and local-function calls)
 *                 and the one node executor;
 *  - run/kcall.c      the kernel call interface (run/kernel_api.h);
 *  - run/steps.c      one session's steps (inputs fed, pre-check, run,
 *                 stock presents fed back, figures recorded);
 *  - run/budget.c     the run's memory budget and its refusal before
 *                 anything is allocated;
 *  - run/session.c    oac_run: the run, its sessions and threads, the
 *                 execution report.
 * Everything about the model comes from the analysis (check/analysis.h): the
 * graph index (values by id), the alias forest (which output reuses
 * which storage), the schedule (the order nodes run in), the memory plan
 * of every scope (when each buffer is freed) and the --input files.  The
 * runtime keeps no name index, alias rule, free-point rule or input
 * parser of its own.
 *
 * Invariants:
 *  1. The run's tables are written only by run/setup.c and run/bind.c before
 *     the first session starts, then only read, so K sessions on K threads
 *     share them; each session has its own context, allocator, frames and
 *     values, and races only for binding owners (run/bind.c).
 *  2. A frame's values are indexed by the scope's local value index
 *     (value id - scope->first_id); a value of an enclosing scope is read
 *     through the frame chain (up), which stops at a function body.
 *  3. Frames run nodes in the schedule's order and free buffers where the
 *     scope's memory plan frees them, so what is measured follows the
 *     plan's rule by construction.
 */
#ifndef OAC_RT_H
#define OAC_RT_H

#include <pthread.h>

#include "check/alias.h"
#include "check/analysis.h"
#include "check/graph.h"
#include "ops.h"
#include "check/plan.h"
#include "run/kernel_api.h"
#include "check/order.h"

/* A location string of a node (RFC 6901), deep enough for subgraphs
 * nested OAC_MAX_DEPTH levels. */
#define OAC_RT_LOC_MAX 4096

/* RT_POS_LENGTH: read by PagedCacheAttention's length port (contract 11):
 * each step the generation loop's total length. */
typedef enum rt_pos_role { RT_POS_NONE = 0, RT_POS_POSITION, RT_POS_PAGE,
                           RT_POS_LENGTH } rt_pos_role;

/* One input of the main graph (by its input port). */
typedef struct rt_input {
    const oac_value *v;            /* the graph index's value */
    long binding;                  /* index in run->bind, or -1 */
    rt_pos_role pos;               /* run/positions.c */
    long page;                     /* RT_POS_POSITION of a paged update:
                                      the input index of its page_id, or -1 */
    bool paged;                    /* Sequence<QuantizedTensor> */
    oac_tensor tmpl;               /* a tensor input's type, dims and data
                                      (zero-filled when data is NULL) */
    oac_paged ptmpl;               /* a paged input's pages (--input) */
    long dec;                      /* its index in run->dec->in, or -1 */
    oac_pbfile *file;              /* an --input file the check was not
                                      given, read for the run (owned) */
} rt_input;

typedef struct rt_run {
    oac_ctx *ctx;
    const oac_model *model;
    const oac_analysis *an;        /* the caller's, or own_an */
    const oac_graphs *g;
    const oac_aliases *al;
    const oac_schedule *sched;
    const oac_scope *main;         /* g->scopes[0] */
    const oac_run_opts *opts;
    const oac_run_hooks *hooks;
    oac_analysis *own_an;          /* made for a caller that gave none */
    /* run/setup.c: the kernel of node i of scope s, fn[s->index][i]; NULL:
     * none (unsupported-operator).  Calls of local functions have
     * oac_kernel_call_function. */
    oac_kernel_fn **fn;
    oac_kernel_fn call_fn;         /* the kernel of such a call */
    size_t max_ports;              /* largest n_input/n_output of any node */
    /* run/bind.c */
    rt_input *in;                  /* main->n_inputs */
    size_t n_in;
    oac_binding **bind;            /* acquisition order */
    oac_rtval **bind_val;          /* the shared value of each binding */
    const char **bind_why;         /* refusal reason decided by the run, or NULL */
    size_t n_bind;
    oac_binding *own_bind;         /* bindings this run made */
    oac_rtval *own_val;
    oac_ralloc balloc;             /* storage the run binds (excluded) */
    /* run/generate.h: the generation loop the run drives (never NULL once
     * made; n_in 0 when the model has no decoder input). */
    struct oac_decoder *dec;
    /* run/precheck.c: the types whose dims it reads: the analysis's, or
     * pre_an's (made by the run) when the loop's symbols change. */
    const struct oac_shapes *pre_shapes;
    oac_analysis *pre_an;
    oac_membudget budget;          /* every allocator's (run/budget.c) */
    /* run/positions.c: the inputs with pos == RT_POS_POSITION, ascending */
    size_t *positions;
    size_t n_positions;
    uint64_t steps;
} rt_run;

struct oac_session {
    rt_run *run;
    oac_ctx *ctx;
    oac_diags *diags;
    bool own_ctx;
    oac_ralloc alloc;
    struct oac_frame *main;        /* the main graph's frame, all steps */
    /* Workspaces of the running nodes (run/kcall.c), a stack: a node frees
     * those it got (its mark) when it ends. */
    void **ws;
    size_t *ws_bytes;
    size_t n_ws, cap_ws;
    int64_t *pos_len;              /* per input: this step's update length,
                                      -1 none (run/positions.c) */
    int64_t *page_size;            /* per input: page size of its update */
    bool *wrote;                   /* per binding: written this step (run/bind.c) */
    struct oac_rt_pages *pages;    /* paged caches between steps (run/pages.c) */
    /* Records of completed steps (run/steps.c), bounded: the first
     * OAC_PER_STEP_HEAD, and the last OAC_PER_STEP_TAIL in a ring
     * indexed by (step - HEAD - 1) % TAIL; steps_completed counts all. */
    oac_step_stats head[OAC_PER_STEP_HEAD];
    oac_step_stats tail[OAC_PER_STEP_TAIL];
    oac_step_stats *cur_step;      /* the running step's figures */
    int64_t past;                  /* the loop's past length (run/generate.h) */
    int64_t n_new;                 /* tokens the running step feeds */
    uint64_t checked, held;
    uint64_t second_cache;         /* largest step's out-of-place bytes */
    uint64_t step_second;          /* this step's */
    uint64_t copied;               /* copied_bytes of the completed steps */
    uint64_t steps_completed;
    uint64_t work;                 /* body work charged this step */
    bool winner;
    unsigned number;               /* 1-based when several run; else 0 */
    long stop_node;                /* main-graph node the run stopped at, or -1 */
    int rc;
    pthread_t thread;
};

/* The scope a frame runs, and its values (invariant 2). */
typedef struct oac_frame {
    struct oac_frame *up;          /* enclosing scope's frame; NULL at depth
                                      0 and for a function body */
    oac_session *s;
    const oac_scope *scope;
    const oac_scope_order *order;   /* check/order.h */
    const oac_plan_sched *plan;    /* the scope's frees (check/plan.h) */
    oac_kernel_fn *fn;             /* run->fn[scope->index] */
    int depth;                     /* 0: the main graph */
    oac_kernel_call *k;            /* the control node running it (NULL at 0) */
    const Onnx__NodeProto *call;   /* innermost local-function call (its */
    const Onnx__FunctionProto *func; /* attributes for ref_attr_name), or NULL */
    const char *name;              /* the graph's name in diagnostics */
    size_t n;                      /* scope->n_values */
    oac_rtval **vals;              /* current value of each local value */
    oac_rtval *objs;               /* storage the frame owns */
    bool *loaded;                  /* an initializer read */
    oac_rtval **in_buf, **out_buf; /* the running node's ports */
    int *alias;
    const void **before;
    oac_kstate **kstate;           /* per node at depth 0 (run/kernel_api.h), or NULL */
    oac_kstate *kstates;           /* their storage */
} oac_frame;

/* ---- run/pages.c (contract 11) -------------------------------------- */

/* After step `step`'s nodes: re-encode the aged pages of every bound paged
 * cache (run --page-policy) and record the step's pages.  OAC_EINVAL for a
 * rule the model cannot honour (message on ctx). */
int oac_rt_pages_step(oac_session *s, uint64_t step);
/* The policy resolved against the model and the bound caches, before the
 * first step (invariant 3 of run/pages.c). */
int oac_rt_pages_begin(oac_session *s);
/* The records into e->pages (allocated on ctx); oac_rt_pages_release
 * frees them (oac_execution_free). */
int oac_rt_pages_export(const oac_session *s, oac_ctx *ctx, oac_execution *e);
void oac_rt_pages_release(oac_execution *e);
void oac_rt_pages_free(oac_session *s);

/* ---- run/setup.c --------------------------------------------------- */

/* Build the kernels table and make the refusals before anything runs:
 * unsupported-operator (diagnostics) for a node without a kernel, Scan,
 * Loop scan outputs, a body nested past OAC_MAX_DEPTH (recursive
 * functions included), a node reading a value nothing defines, a value
 * defined twice, a graph output never produced, a graph whose nodes form
 * a cycle.  OAC_ERUNTIME after a refusal diagnostic, other statuses for
 * operational failures (EUNSUPPORTED with the reason on ctx). */
int oac_rt_setup(rt_run *r, oac_diags *diags);
/* binding-readonly for a main-graph node updating in place a value whose
 * alias root is an initializer, a constant or a READ_ONLY input without
 * a binding (bindings are run/bind.c's). */
int oac_rt_check_roots(rt_run *r, oac_diags *diags);
void oac_rt_setup_fini(rt_run *r);

/* ---- run/budget.c ----------------------------------------------------- */

/* Before anything is allocated: the run's known need (bindings, input
 * data, initializers, planned peak, for n_sess sessions) against its
 * memory budget; memory-budget and OAC_ERUNTIME when it passes it. */
int oac_rt_budget_precheck(rt_run *r, unsigned n_sess, oac_diags *diags);

/* ---- run/bind.c ------------------------------------------------------- */

/* The main graph's inputs: types and dims (--dim, the analysis), the
 * --input data the analysis holds, the bindings of READ_WRITE ones.
 * OAC_EINVAL for usage errors. */
int oac_rt_bind_inputs(rt_run *r);
/* The refusals of each binding and their overlaps (diagnostics);
 * cache_bytes receives the bound cache bytes. */
int oac_rt_check_bindings(rt_run *r, oac_diags *diags, uint64_t *cache_bytes);
void oac_rt_bind_fini(rt_run *r);
/* Contract 8, binding-invalid.  A node wrote through v (an output that
 * reuses v's storage): when v is a binding's value, this step wrote that
 * cache.  A step starts with nothing written; a failed step marks every
 * binding it wrote invalid.  oac_rt_bindings_usable refuses (one
 * binding-invalid each, OAC_ERUNTIME) the invalid ones the session holds,
 * before a step runs anything. */
void oac_rt_binding_wrote(oac_session *s, const oac_rtval *v);
void oac_rt_bindings_step_begin(oac_session *s);
void oac_rt_bindings_step_failed(oac_session *s);
int oac_rt_bindings_usable(oac_session *s);

/* ---- run/positions.c -------------------------------------------------- */

/* Mark the main graph's position and page_id inputs: inputs that reach a
 * position (or page_id) port of a cache update at any depth, through
 * subgraphs' outer reads and the arguments of local-function calls. */
int oac_rt_positions_mark(rt_run *r);
/* A cache update (any depth; np its proto with attributes resolved)
 * whose position input is a main-graph position input: record its
 * update length for the advance after the step (operand-invalid at w
 * when lengths differ).  No-op otherwise. */
int oac_rt_positions_note(oac_session *s, const oac_node *nd,
                          const Onnx__NodeProto *np, oac_rtval *const *in,
                          const oac_where *w);
void oac_rt_positions_reset(oac_session *s);
/* After a step: every position input moves by its updates' length; a
 * page_id moves on when its page is full, its position back to 0. */
int oac_rt_positions_advance(oac_session *s);

/* ---- run/interp.c ----------------------------------------------------- */

/* The graph's name in diagnostics (main: "main" when it has none; a
 * body: its name, else its attribute's; a function: its name, else
 * "function"). */
static inline const char *oac_rt_scope_name(const oac_scope *s)
{
    if (s->kind == OAC_SCOPE_MAIN)
        return s->graph->name ? s->graph->name : "main";
    if (s->kind == OAC_SCOPE_FUNCTION)
        return s->func->name && *s->func->name ? s->func->name : "function";
    return s->graph->name && *s->graph->name ? s->graph->name
                                             : s->attr_name ? s->attr_name : "";
}

/* The main graph's frame of session s (depth 0), its inputs the
 * session's values.  oac_frame_leave releases it. */
int oac_frame_main(oac_frame *fr, oac_session *s);
/* Enter body scope `body` for control node k (k->frame is the frame it
 * runs in): the frame's inputs are inputs[0 .. n_inputs) (borrowed; NULL
 * for an omitted one); a function body sees no enclosing scope.  The run
 * is charged for the body first (OAC_RT_MAX_BODY_WORK).  On failure the
 * frame is still left to oac_frame_leave. */
int oac_frame_enter(oac_frame *fr, oac_kernel_call *k, const oac_scope *body,
                    oac_rtval *const *inputs, size_t n_inputs);
/* Run every node in the schedule's order.  *stop (may be NULL) receives
 * the node it stopped at. */
int oac_frame_run(oac_frame *fr, long *stop);
/* The value body output i came back as (NULL when omitted). */
oac_rtval *oac_frame_output(oac_frame *fr, size_t i, int *rc);
/* Is v a buffer a node of this frame produced (its storage can be moved
 * out instead of copied)? */
bool oac_frame_owns(const oac_frame *fr, const oac_rtval *v);
/* Release what the frame still holds and its arrays. */
void oac_frame_leave(oac_frame *fr);
/* Release the node outputs of the main frame (a new step). */
void oac_frame_reset(oac_frame *fr);
/* The current value of graph value v in fr or an enclosing frame; NULL
 * when none holds it. */
oac_rtval *oac_frame_value(oac_frame *fr, const oac_value *v, int *rc);

/* ---- run/kcall.c ------------------------------------------------------ */

/* Free the workspaces got since mark (the running node's). */
void oac_kcall_end(oac_session *s, size_t mark);

/* ---- run/precheck.c --------------------------------------------------- */

/* Contract 8: before a step runs any node, the position and length of
 * every main-graph cache update known then against its capacity; the
 * first overflow is capacity-overflow at its node (s->stop_node) and
 * OAC_ERUNTIME. */
int oac_rt_precheck(oac_session *s);

/* ---- run/steps.c ------------------------------------------------------ */

/* A session's steps: bind, run, record, advance, dump. */
int oac_rt_session_steps(oac_session *s);
/* The records kept of s's completed steps, in step order, into out
 * (room for OAC_PER_STEP_HEAD + OAC_PER_STEP_TAIL); returns how many. */
size_t oac_rt_steps_kept(const oac_session *s, oac_step_stats *out);
void oac_rt_session_fini(oac_session *s);

#endif /* OAC_RT_H */

/* run/kernel_api.h: the reference runtime's values, allocator, bindings and
 * kernel interface (contract sections 2, 3 runtime codes, 4 `execution`,
 * 5 `run`, 8).
 *
 * Owns what kernels and the runtime's files share: oac_tensor / oac_paged
 * / oac_rtval (what flows along graph edges at run time, run/values.c), the
 * instrumented allocator oac_ralloc (run/alloc.c), bindings of caller-owned
 * storage (run/bind.c), the kernel call record and the helpers kernels use
 * (run/kcall.c), the kernel lookup (kernels/lookup.c; the kernels are a column of
 * ops.def) and the run's test hooks.  How a run executes (the run's
 * tables, sessions, frames, the interpreter) is run/exec.h's.
 *
 * Invariants:
 *  1. Every byte the runtime allocates for node outputs, kernel workspace
 *     and pages goes through one oac_ralloc, which counts calls, live and
 *     peak bytes, overall and per step.  Excluded from that accounting, by
 *     the contract: caller-bound inputs (bindings, zero-filled or --input
 *     data, initializers read for the run) and page-table arrays.
 *  2. A MUST_ALIAS output is never allocated: before its kernel runs, the
 *     interpreter sets it to the aliased value itself (a writable view of
 *     its storage), and after the kernel it checks that the output still
 *     points there (alias-broken otherwise).  The same holds for an If
 *     output that aliases an outer value through its branches
 *     (OAC_ALIAS_OUTER) and a call's output through its function's
 *     alias_of, at every depth.
 *  3. Kernels never copy a whole cache to update it, never fall back
 *     silently and never reallocate on overflow; a failure is a
 *     diagnostic (oac_kernel_fail) plus a negative status.
 *  4. A binding is owned by at most one session at a time (an atomic owner
 *     field in the binding; no global state), so K sessions racing for the
 *     same storage yield one winner and K-1 binding-busy.
 */
#ifndef OAC_RUNTIME_H
#define OAC_RUNTIME_H

#include <stdatomic.h>

#include "oac_int.h"
#include "op_fns.h"
#include "ops.h"

/* OAC_RT_MAX_RANK (oac_int.h): ranks above it are refused with
 * OAC_EUNSUPPORTED, and --input files of a higher rank by check too. */

/* Limits on what a model's values can make the runtime do (man page,
 * `run`).  Both are refusals, never attempted:
 *  - one buffer (node output, workspace, page, input or initializer data)
 *    above OAC_RT_MAX_BYTES is refused before it is allocated;
 *  - bodies (If branches, Loop iterations, function calls, at any depth)
 *    are charged 1 + their node count (nested subgraphs' included) each
 *    time they run; a step whose charge would exceed OAC_RT_MAX_BODY_WORK
 *    stops at the control node that would pass it (unsupported-operator),
 *    so a Loop whose condition never turns false, a huge trip count or
 *    calls fanning out exponentially end in bounded time;
 *  - a kernel's work is linear in its buffers, except MatMul's, which
 *    refuses more than OAC_RT_MAX_KERNEL_OPS multiply-adds per node. */
#define OAC_RT_MAX_BYTES ((uint64_t)1 << 34)
#define OAC_RT_MAX_KERNEL_OPS ((uint64_t)1 << 34)
#define OAC_RT_MAX_BODY_WORK ((uint64_t)1 << 20)

/* ------------------------------------------------------------------ */
/* Values                                                               */
/* ------------------------------------------------------------------ */

/* A dense tensor: elem_type's little-endian elements, row-major. */
typedef struct oac_tensor {
    int32_t elem_type;              /* TensorProto.DataType */
    int rank;
    int64_t dims[OAC_RT_MAX_RANK];
    void *data;                     /* NULL only when bytes == 0 */
    size_t bytes;                   /* oac_elem_bytes(elem_type, numel) */
} oac_tensor;

/* t has rank `rank` and dims d (the kernels' shape checks and
 * CacheUpdate's kept plan).  One branch for all the dims, not one per
 * dim: a kept CacheUpdate step tests two shapes, and the early-exit loop
 * was about a third of that step's fixed cost (bench/bench_update). */
static inline bool oac_tensor_dims_are(const oac_tensor *t, int rank, const int64_t *d)
{
    if (t->rank != rank)
        return false;
    uint64_t diff = 0;
    for (int i = 0; i < rank; i++)
        diff |= (uint64_t)(t->dims[i] ^ d[i]);
    return diff == 0;
}

/* One page of a paged cache (contract 1, QuantizedTensorProto). */
typedef struct oac_page {
    int32_t quantized_type;         /* index into ModelProto.quantizations */
    void *data;                     /* packed codes */
    size_t bytes;                   /* ceil(prod(page_dims) * bits / 8) */
    bool bound;                     /* from an --input file (not counted);
                                       false: from oac_ralloc_get */
    int64_t key;                    /* a Map cache: the page's page_id */
} oac_page;

/* Sequence<QuantizedTensor{elem_type, [2, heads, page_size, head_size]}>.
 * pages[] (the page table) grows through the context allocator and is
 * excluded from accounting; each page's data goes through oac_ralloc. */
typedef struct oac_paged {
    int32_t elem_type;              /* decoded logical type */
    int64_t page_dims[4];           /* [2, heads, page_size, head_size] */
    const int32_t *allowed;         /* borrowed from the model; may be NULL */
    size_t n_allowed;               /* 0: any declaration */
    oac_page *pages;
    size_t n_pages;
    size_t cap_pages;
    /* Map<int64, QuantizedTensor> (contract 1): page_id is each page's
     * key, pages[] in the file's order; false: a Sequence, page i is
     * page_id i. */
    bool map;
} oac_paged;

typedef enum oac_rtval_kind {
    OAC_RTV_NONE = 0,               /* not produced (yet), or omitted port */
    OAC_RTV_TENSOR,
    OAC_RTV_PAGED
} oac_rtval_kind;

/* Where a value's storage comes from; decides who frees it and whether
 * it counts toward the measured peak. */
typedef enum oac_storage {
    OAC_STORE_NONE = 0,
    OAC_STORE_OWNED,                /* oac_ralloc, counted, freed by runtime */
    OAC_STORE_BOUND,                /* caller-bound (run/bind.c), not counted */
    OAC_STORE_VIEW,                 /* another value's storage (an alias) */
    OAC_STORE_CONST                 /* initializer or input data, read-only */
} oac_storage;

typedef struct oac_rtval {
    oac_rtval_kind kind;
    oac_storage storage;
    bool writable;                  /* kernels may write only these */
    union {
        oac_tensor t;               /* kind == OAC_RTV_TENSOR */
        oac_paged p;                /* kind == OAC_RTV_PAGED */
    };
} oac_rtval;

/* Number of elements of t (product of dims; 1 for rank 0).  False on a
 * negative dimension or overflow (run/values.c). */
bool oac_tensor_numel_rt(const oac_tensor *t, uint64_t *out);

/* ------------------------------------------------------------------ */
/* The instrumented allocator (run/alloc.c)                                 */
/* ------------------------------------------------------------------ */

/* The run's memory budget (run/budget.c; oac_run_opts.max_memory): the
 * bytes of tensor data every allocator of one run holds, counted and
 * bound alike, shared by the run's sessions (threads), so it is atomic. */
typedef struct oac_membudget {
    uint64_t limit;                 /* 0: no budget */
    _Atomic uint64_t used;          /* bytes held now */
    _Atomic uint64_t peak;          /* most ever held */
} oac_membudget;

void oac_membudget_init(oac_membudget *b, uint64_t limit);
/* Take n bytes: OAC_OK, or OAC_EBUDGET with the need and the budget on
 * ctx (nothing taken) when they would pass the limit.  b NULL: OK. */
int oac_membudget_take(oac_membudget *b, oac_ctx *ctx, uint64_t n);
/* Give back n bytes taken before (b NULL: nothing). */
void oac_membudget_give(oac_membudget *b, uint64_t n);

typedef struct oac_ralloc {
    oac_ctx *ctx;                   /* where failures are reported */
    oac_membudget *budget;          /* the run's, or NULL (none) */
    int failed;                     /* status of the last refused call */
    uint64_t calls;                 /* counted allocations, whole run */
    uint64_t bytes;                 /* counted bytes allocated, whole run */
    uint64_t live;                  /* counted bytes currently allocated */
    uint64_t peak;                  /* max of live */
    uint64_t step_calls;            /* since oac_ralloc_step_begin */
    uint64_t step_bytes;
    uint64_t step_base;             /* live when the step began */
    uint64_t step_peak;             /* max of live since then */
    uint64_t step_peak_max;         /* max over steps of step_peak - step_base:
                                       the measured peak of contract 4 */
    uint64_t bound_bytes;           /* excluded storage currently held */
} oac_ralloc;

/* No budget until one is given (a->budget). */
void oac_ralloc_init(oac_ralloc *a, oac_ctx *ctx);
/* Counted allocation of n bytes (zeroed when zero is set).  NULL with
 * OAC_ENOMEM on ctx when out of memory or when live would overflow. */
void *oac_ralloc_get(oac_ralloc *a, size_t n, bool zero);
/* Both allocations refuse, without trying, n > OAC_RT_MAX_BYTES and n
 * that would pass the budget: NULL with OAC_EBUDGET on ctx.  After any
 * NULL, a->failed holds the status (oac_ralloc_failed). */
static inline int oac_ralloc_failed(const oac_ralloc *a)
{
    return a->failed ? a->failed : OAC_ENOMEM;
}
/* The same, with the message on ctx prefixed by what was allocated
 * ("input 'x'"), for a caller with no node to name. */
int oac_ralloc_refusal(oac_ralloc *a, const char *what, const char *name);
/* Release a counted allocation of n bytes (the size it was got with);
 * NULL is a no-op. */
void oac_ralloc_put(oac_ralloc *a, void *p, size_t n);
/* Storage excluded from accounting (bindings, input data, initializers):
 * zeroed, released with oac_ralloc_unbound. */
void *oac_ralloc_bound(oac_ralloc *a, size_t n);
void oac_ralloc_unbound(oac_ralloc *a, void *p, size_t n);
/* Read initializer tp (shown as `name` in messages) into v as a
 * read-only tensor in storage bound on a (contract 4: initializers are
 * not counted).  Errors on ctx; v holds the storage once it is allocated,
 * also when reading fails (run/values.c; frames read initializers on first
 * use). */
int oac_rt_load_initializer(oac_ctx *ctx, oac_ralloc *a, const oac_model *model,
                            const Onnx__TensorProto *tp, const char *name,
                            oac_rtval *v);
/* Start counting a new step (resets step_calls, step_bytes).  What is
 * live then (pages created by earlier steps: cache state carried over,
 * like bound caches) is the step's baseline, so step_peak_max measures
 * what one step adds, the quantity the static plan predicts. */
void oac_ralloc_step_begin(oac_ralloc *a);

/* Release what v holds the way it was got (counted, bound or a page
 * table on ctx) and clear it; views and NONE are only cleared
 * (run/values.c). */
void oac_rtval_release(oac_ctx *ctx, oac_ralloc *a, oac_rtval *v);

/* ------------------------------------------------------------------ */
/* Bindings (run/bind.c)                                                    */
/* ------------------------------------------------------------------ */

/* Caller-owned storage for one READ_WRITE graph input.  Created once per
 * run, shared by every session of that run; a session must acquire it
 * before writing through it. */
typedef struct oac_binding {
    const char *name;               /* graph input (borrowed) */
    void *data;
    size_t bytes;                   /* size of the storage */
    bool writable;                  /* false: --readonly, initializer, ... */
    bool is_initializer;            /* storage comes from an initializer */
    bool is_constant;               /* ... or from a Constant node */
    /* A step failed after writing through it (contract 8): its contents
     * may be half-written, so every later step on it is refused
     * (binding-invalid) until oac_binding_reset.  Written only by the
     * session holding it. */
    bool invalid;
    atomic_uintptr_t owner;         /* 0: free, else the holding session */
} oac_binding;

/* A binding over caller storage (owner free). */
void oac_binding_init(oac_binding *b, const char *name, void *data,
                      size_t bytes, bool writable);

/* Acquire for session (any unique non-NULL address, e.g. the session
 * object): true when this session now owns it (or already did).
 * Compare-and-swap on owner: of K racing sessions exactly one succeeds. */
bool oac_binding_acquire(oac_binding *b, const void *session);
/* Release if session holds it; otherwise nothing. */
void oac_binding_release(oac_binding *b, const void *session);
/* Make an invalid binding usable again (contract 8): whoever bound the
 * storage has restored or re-initialized what it holds and vouches for
 * it; the contents are not touched.  A valid binding stays as it is. */
void oac_binding_reset(oac_binding *b);

/* Refusals, each a diagnostic (returns OAC_ERUNTIME after adding it, or
 * OAC_OK when the binding is acceptable): binding-readonly when a
 * mutable cache is bound to storage that is not writable, an initializer
 * or a constant, or when the run says why it must not be written
 * (readonly_why, e.g. --readonly; NULL: the binding's own flags decide,
 * so a caller's binding is never modified by a run); binding-too-small
 * when bytes < need. */
int oac_binding_check(const oac_binding *b, uint64_t need,
                      const char *readonly_why, oac_diags *diags);
/* binding-overlap over every pair of mutable bindings. */
int oac_bindings_check_overlap(oac_binding *const *b, size_t n,
                               oac_diags *diags);
/* Acquire every binding in array order for session; on the first one
 * held by another session, release what this call took and report
 * binding-busy (naming session_no, 1-based, when not 0, so the refusals
 * of K sessions stay K distinct diagnostics).  Fixed order makes the race
 * have exactly one winner. */
int oac_bindings_acquire_all(oac_binding *const *b, size_t n,
                             const void *session, unsigned session_no,
                             oac_diags *diags);
void oac_bindings_release_all(oac_binding *const *b, size_t n,
                              const void *session);

/* ------------------------------------------------------------------ */
/* The kernel call (run/kcall.c); kernels are ops.def's .kernel column     */
/* ------------------------------------------------------------------ */

typedef struct oac_session oac_session;   /* run/exec.h */
struct oac_frame;                         /* run/exec.h */

/* What a kernel resolves once for a node of a session and keeps across
 * its steps (attributes, axes, strides, byte sizes): the main graph's
 * frame, which lives for every step, holds one for each node of an
 * operator flagged OAC_OPF_CACHE_UPDATE, zeroed when the session binds
 * (run/interp.c); every other call has state NULL.  A kernel keys what it
 * keeps on everything it was resolved from and resolves again when any
 * of it differs, so a kept state never changes a result. */
typedef struct oac_kstate {
    bool ready;
    uint64_t w[40];
} oac_kstate;

/* One node's execution.  in[i] is NULL for an omitted optional port.
 * out[i] is OAC_RTV_NONE on entry, except for a MUST_ALIAS output, which
 * is already the aliased value (out_alias[i] says which input, or
 * OAC_ALIAS_OUTER); the kernel writes through it in place and must not
 * replace its storage. */
typedef struct oac_kernel_call {
    oac_ctx *ctx;
    const oac_model *model;         /* attributes, quantization table */
    const Onnx__NodeProto *node;    /* attributes resolved (ref_attr_name) */
    const char *node_name;          /* node name, or "#<index>" */
    size_t node_index;              /* in its scope (check/graph.h) */
    oac_rtval *const *in;
    size_t n_in;
    oac_rtval *const *out;
    size_t n_out;
    const int *out_alias;           /* per output: aliased input, -1, or
                                       OAC_ALIAS_OUTER (If through branches) */
    oac_ralloc *alloc;
    oac_diags *diags;
    oac_session *session;           /* workspaces; NULL outside a run */
    /* Where the node sits, for diagnostics: its graph (or function) name
     * and RFC 6901 location. */
    const char *graph_name;
    const char *location;
    /* The frame the node runs in (run/exec.h; the main graph's is at depth 0):
     * control kernels run their bodies from it.  NULL outside a run. */
    struct oac_frame *frame;
    oac_kstate *state;              /* this node's kept state, or NULL */
} oac_kernel_call;

/* out_alias value of an If output that aliases an outer value through
 * its branches (the output is already that value, as for a port). */
#define OAC_ALIAS_OUTER (-2)

/* A kernel (oac_kernel_fn, ops.h; the .kernel column of ops.def,
 * declared in op_fns.h) returns 0 on success; a negative oac_status on
 * failure, after a diagnostic (oac_kernel_fail) for run-time findings or
 * oac_err for operational failures. */

/* The kernel of the row for (domain, op_type) (oac_op_find: "" and
 * "ai.onnx" are the ONNX domain); NULL when the runtime has none
 * (unsupported-operator).  Callers holding the row read op->kernel. */
oac_kernel_fn oac_kernel_lookup(const char *domain, const char *op_type);
/* A call of a local function (run/control.c; not a table row: the
 * interpreter runs it for a node that calls one and has no kernel). */
int oac_kernel_call_function(oac_kernel_call *k);

/* Helpers kernels use (run/kcall.c). */

/* Produce output i as a tensor of the given type and shape: allocates it
 * (counted) unless it is a MUST_ALIAS view, in which case the view must
 * already have that type and shape (else alias-broken).  *out receives
 * the tensor to write.  An output the node omits (no name, or past its
 * last) is workspace, dropped when the node ends. */
int oac_kernel_output(oac_kernel_call *k, size_t i, int32_t elem_type,
                      int rank, const int64_t *dims, oac_tensor **out);
/* Counted kernel workspace, freed by the runtime right after the node. */
int oac_kernel_workspace(oac_kernel_call *k, size_t bytes, void **out);
/* Add a diagnostic located at this node and return OAC_ERUNTIME. */
int oac_kernel_fail(oac_kernel_call *k, oac_code code, const char *fmt, ...)
    OAC_PRINTF(3, 4);
/* The same, naming value (a value of the graph: the diagnostic's value
 * field, so a report says which tensor, not only its message). */
int oac_kernel_fail_value(oac_kernel_call *k, oac_code code, const char *value,
                          const char *fmt, ...) OAC_PRINTF(4, 5);
/* Input i as a tensor, or NULL with a kernel-error diagnostic naming
 * the node and the input when it is absent or not a dense tensor
 * (oac_kernel_tensor_missing, out of line: the test is inline because
 * every kernel step makes it). */
const oac_tensor *oac_kernel_tensor_missing(oac_kernel_call *k, size_t i);
static inline const oac_tensor *oac_kernel_tensor_in(oac_kernel_call *k, size_t i)
{
    if (i < k->n_in && k->in[i] && k->in[i]->kind == OAC_RTV_TENSOR)
        return &k->in[i]->t;
    return oac_kernel_tensor_missing(k, i);
}
/* Read input i as int64 values (INT64/INT32 tensors): up to max. */
int oac_kernel_ints_in(oac_kernel_call *k, size_t i, int64_t *v, size_t max,
                       size_t *n);


/* Page-table growth for paged caches (run/values.c): the array lives on ctx
 * (excluded from accounting); the pages' data is the caller's to get
 * from ralloc. */
int oac_paged_reserve(oac_ctx *ctx, oac_paged *p, size_t n_pages);
/* Free one page's data the way it was allocated (counted or bound) and
 * clear it; the page-table slot stays. */
void oac_page_release(oac_ralloc *a, oac_page *pg);

/* ------------------------------------------------------------------ */
/* Runs (run/session.c)                                                     */
/* ------------------------------------------------------------------ */

/* Test hook: replace the kernel of (domain, op_type) for one session,
 * e.g. with a deliberately misbehaving one.  NULL restores the table's. */
typedef struct oac_kernel_override {
    const char *domain;
    const char *op_type;
    oac_kernel_fn fn;
} oac_kernel_override;

struct oac_dump_value;   /* below */

/* Internal run options beyond oac_run_opts (tests and benches). */
typedef struct oac_run_hooks {
    const oac_kernel_override *overrides;
    size_t n_overrides;
    /* Caller-made bindings for READ_WRITE inputs (by name), used instead
     * of storage the run would allocate; they may be shared with other
     * runs on other threads (binding-busy) or overlap (binding-overlap).
     * Inputs without one get storage from the run as usual. */
    oac_binding *const *bindings;
    size_t n_bindings;
    /* Body work per step (OAC_RT_MAX_BODY_WORK when 0), so tests reach
     * the limit quickly. */
    uint64_t body_work;
    /* Called by the session after each completed step with its figures,
     * step_arg passed back (bench/bench_decode times steps with it);
     * NULL: nothing is called. */
    void (*step_done)(void *step_arg, const oac_step_stats *st);
    void *step_arg;
    /* Called after each completed step (of the session holding the
     * bindings, or the only one) with the bound caches and the graph
     * outputs, as --dump would write them (values borrowed for the call
     * only); NULL: nothing is called.  Tests and benches compare outputs
     * step by step with it. */
    void (*step_values)(void *values_arg, uint64_t step,
                        const struct oac_dump_value *v, size_t n);
    void *values_arg;
} oac_run_hooks;

int oac_run_with_hooks(oac_ctx *ctx, oac_execution **out,
                       const oac_model *model, const oac_analysis *analysis,
                       const oac_run_opts *opts, const oac_run_hooks *hooks,
                       oac_diags *diags);

/* The final values of a run (graph outputs and bound caches), kept for
 * --dump (run/dump.c): one file each in dir; a file that cannot be written is
 * an output-write-failed diagnostic in diags and makes the call return
 * OAC_ERUNTIME after writing the others. */
typedef struct oac_dump_value {
    const char *name;
    const oac_rtval *value;
    const oac_model *model;
} oac_dump_value;
int oac_dump_values(oac_ctx *ctx, oac_diags *diags, const char *dir,
                    const oac_dump_value *v, size_t n);
/* Before a run (contract 12): OAC_EINVAL with the reason on ctx when dir
 * is a symbolic link or a file the dump may write (one per output and
 * READ_WRITE input of model's main graph) is an input of the call or another
 * writer's output (guard.c); OAC_ENOMEM; else OAC_OK. */
int oac_dump_gate(oac_ctx *ctx, const oac_model *model, const char *dir);

#endif /* OAC_RUNTIME_H */

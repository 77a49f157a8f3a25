/* oac.h: the public interface of libonnx-alias-check.
 *
 * Installed as <onnx-alias-check/oac.h>, beside the code tables it
 * includes; compile and link with `pkg-config --cflags --libs
 * onnx-alias-check` (examples/embed.c).
 *
 * The library loads an ONNX model (with the alias and quantization fields
 * of the contract, doc/annotations.md), checks that its KV caches
 * are updated in place, plans its memory, runs it on a reference runtime
 * and describes all of that as data.  It never prints, never exits, and
 * never reads argv or the environment: the command-line tool in src/ does.
 *
 * Conventions, stated once for every function below:
 *
 * - Contexts.  Every call takes an oac_ctx.  A context holds the message of
 *   the last operational failure (oac_errmsg) and the allocator; it is not
 *   thread-safe, so use one context per thread.  Nothing is global.
 *
 * - Two kinds of trouble.  A finding about the model (an alias cycle, an
 *   overflowing position) is a diagnostic appended to an oac_diags list;
 *   the call still succeeds and analysis goes on, so one run reports every
 *   problem.  An operational failure (out of memory, unreadable file, bad
 *   option) is a negative oac_status return, with the message on the
 *   context.  0 is success.
 *
 * - Ownership.  Output parameters come first after the context and are
 *   named out; what comes back through `**out` belongs to the caller and is
 *   released with the matching *_free function: oac_model_free, ...; a
 *   plain buffer (oac_model_save_buffer, oac_report_text) with oac_free.
 *   Every *_free accepts NULL.  Pointers returned by accessors (const
 *   results) are borrowed: they live as long as the object they came from.
 *   Objects keep a borrowed pointer to their context; free them before the
 *   context.
 *
 * - Untrusted input.  Model and data files are hostile: every length,
 *   index and dimension product is checked, recursion is bounded
 *   (OAC_MAX_DEPTH), and payload bytes (weights) are never copied to check
 *   a model.
 *
 * The shared library exports exactly the functions declared here: it is
 * built with hidden visibility, and the declarations below are marked
 * default (tests/check_exports.sh compares both ways).
 */
#ifndef OAC_H
#define OAC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility push(default)
#endif

#define OAC_TOOL_NAME "onnx-alias-check"
#define OAC_VERSION "0.1.0"

/* Nesting limit for messages and subgraphs in one model. */
#define OAC_MAX_DEPTH 64

/* ------------------------------------------------------------------ */
/* Contexts and status codes                                           */
/* ------------------------------------------------------------------ */

typedef enum oac_status {
    OAC_OK = 0,
    OAC_ENOMEM = -1,     /* an allocation failed */
    OAC_EIO = -2,        /* a file could not be opened, mapped or written */
    OAC_EPARSE = -3,     /* a file is not a readable model or value */
    OAC_EINVAL = -4,     /* bad argument or option (usage error) */
    OAC_EUNSUPPORTED = -5, /* the runtime cannot execute the model */
    OAC_ERUNTIME = -6,   /* the run stopped; diagnostics say why */
    OAC_EINTERNAL = -7,  /* a broken invariant: a bug in this library */
    OAC_EBUDGET = -8     /* a run would pass its memory budget
                            (oac_run_opts.max_memory) */
} oac_status;

typedef struct oac_ctx oac_ctx;

/* New context with the system allocator; NULL only when that fails. */
oac_ctx *oac_ctx_new(void);
void oac_ctx_free(oac_ctx *ctx);
/* Message of the last failure on this context ("" when none). */
const char *oac_errmsg(const oac_ctx *ctx);
/* Make the nth allocation from now on (1-based) and all after it fail;
 * 0 turns failure off.  For tests of every error path. */
void oac_ctx_fail_alloc_after(oac_ctx *ctx, unsigned long n);
/* Allocations made through this context so far. */
unsigned long oac_ctx_alloc_count(const oac_ctx *ctx);
/* Release a buffer the library returned (oac_model_save_buffer,
 * oac_report_text); NULL is fine. */
void oac_free(void *buf);

/* ------------------------------------------------------------------ */
/* Diagnostics                                                          */
/* ------------------------------------------------------------------ */

typedef enum oac_severity {
    OAC_SEV_ERROR = 0,
    OAC_SEV_WARNING = 1,
    OAC_SEV_NOTE = 2
} oac_severity;

typedef enum oac_code {
#define OAC_DIAG(id, name, sev, meaning) OAC_##id,
#include "oac_diag.def"
#undef OAC_DIAG
    OAC_CODE_COUNT
} oac_code;

/* The stable name ("alias-cycle"), default severity and one-line meaning
 * of a code; NULL / ERROR for a value out of range. */
const char *oac_code_name(oac_code code);
oac_severity oac_code_severity(oac_code code);
const char *oac_code_meaning(oac_code code);
/* The code with that name, or -1. */
int oac_code_lookup(const char *name);
const char *oac_severity_name(oac_severity sev); /* "error", ... */
/* A code's documentation (the library's table of rules, issue 13): why
 * the finding matters, how to fix it (the `help` of every diagnostic
 * with that code), and a wrong and a right example (ONNX text-format
 * fragments; lines separated by '\n').  NULL for a value out of range. */
const char *oac_code_why(oac_code code);
const char *oac_code_help(oac_code code);
const char *oac_code_example(oac_code code, bool right);
/* True for the codes that say the tool could not do its work on a model
 * (parse-error, analysis-failed, output-write-failed) rather than a
 * finding about it: the tool never ignores them (oac_diags_ignore). */
bool oac_code_is_failure(oac_code code);
/* A code's whole documentation, as --explain prints it (markdown false)
 * or as Markdown (SARIF's help.markdown): the code and severity, what is
 * wrong, why it matters, how to fix it, a wrong and a right example.  A
 * new string (oac_free); NULL when out of memory or out of range. */
char *oac_code_explain(oac_ctx *ctx, oac_code code, bool markdown);
/* The code whose name is nearest to `name` (edit distance at most 3, or
 * a prefix), for "did you mean"; -1 when none is near. */
int oac_code_suggest(const char *name);

/* One finding.  Strings other than message are NULL where they do not
 * apply.  location is an RFC 6901 pointer over proto field names with
 * 0-based indices, e.g. "/graph/node/3/output_alias/0". */
/* The second party of a finding, where it has one: the node that writes
 * in place for a hazard, the other branch for a branch mismatch.  All
 * NULL when there is none; message says what the party is. */
typedef struct oac_related {
    char *message;
    char *graph;
    char *node;
    char *value;
    char *location;
} oac_related;

typedef struct oac_diag {
    oac_code code;
    oac_severity severity;
    char *message;
    char *graph;
    char *node;      /* node name, or "#<index>" for an unnamed node */
    char *op_type;
    char *value;
    char *location;
    oac_related related;
} oac_diag;

typedef struct oac_diags oac_diags;

oac_diags *oac_diags_new(oac_ctx *ctx);
void oac_diags_free(oac_diags *diags);
size_t oac_diags_count(const oac_diags *diags);
const oac_diag *oac_diags_get(const oac_diags *diags, size_t i);
size_t oac_diags_count_severity(const oac_diags *diags, oac_severity sev);
/* Index of the first diagnostic with that code, or -1. */
long oac_diags_find(const oac_diags *diags, oac_code code);
/* Contract 12: at most OAC_DIAG_LIST_MAX diagnostics of one code are
 * listed per list; the rest are counted, not kept (their messages are
 * never formatted).  oac_diags_omitted: those of code; _severity: those
 * of that severity; oac_diags_full: whether code is at the cap (a pass
 * may skip building a finding's message then).  A report's status counts
 * omitted findings as if listed. */
#define OAC_DIAG_LIST_MAX 1000
uint64_t oac_diags_omitted(const oac_diags *diags, oac_code code);
uint64_t oac_diags_omitted_severity(const oac_diags *diags, oac_severity sev);
bool oac_diags_full(const oac_diags *diags, oac_code code);
/* The one classification of a failure status (contract 12): parse-error
 * for OAC_EIO and OAC_EPARSE, memory-budget for OAC_EBUDGET,
 * unsupported-operator for OAC_EUNSUPPORTED, analysis-failed otherwise. */
oac_code oac_status_code(int status);
/* The caller's work on a model stopped with an operational failure
 * (status < 0, from a call on ctx): one diagnostic says so, "what: " and
 * ctx's message, so that the report says what the exit status says
 * (contract 8), of the code oac_status_code gives: parse-error for
 * OAC_EIO and OAC_EPARSE (input that could not be read), memory-budget for
 * OAC_EBUDGET, unsupported-operator for OAC_EUNSUPPORTED, analysis-failed
 * for anything else (out of memory, a bug).
 * Allocation failures injected with oac_ctx_fail_alloc_after end here
 * (a real failure leaves memory to report with once the failed call has
 * released what it took).  OAC_ENOMEM when even that fails. */
int oac_diags_add_failure(oac_diags *diags, oac_ctx *ctx, int status,
                          const char *what);
/* --select/--ignore (issue 13): remove every diagnostic whose code has
 * keep[code] false, counting it in oac_diags_ignored instead; keep has
 * OAC_CODE_COUNT entries.  A caller keeps the failures
 * (oac_code_is_failure), as the tool does, so a report still says why a
 * model could not be checked.  Returns the number removed by this call. */
size_t oac_diags_ignore(oac_diags *diags, const bool *keep);
/* Diagnostics removed by oac_diags_ignore so far, and whether it was
 * called at all (the JSON summary then has `ignored`). */
size_t oac_diags_ignored(const oac_diags *diags);
bool oac_diags_filtered(const oac_diags *diags);

/* ------------------------------------------------------------------ */
/* Models: loading and saving                                           */
/* ------------------------------------------------------------------ */

typedef struct oac_model oac_model;

/* Map and parse the model at path.  Payloads (raw_data, large typed data
 * arrays, large Constant values) are not copied: they stay in the mapping
 * and are read on demand.  External data is validated without reading it.
 * An unreadable file appends one parse-error diagnostic (with the byte
 * offset when known) and returns OAC_EPARSE; findings such as
 * external-data-invalid are diagnostics on a successful load. */
int oac_model_load(oac_ctx *ctx, oac_model **out, const char *path,
                   oac_diags *diags);
/* The same from memory; buf must outlive the model.  name stands for the
 * path in messages; external data is resolved relative to base_dir (NULL:
 * the current directory). */
int oac_model_load_buffer(oac_ctx *ctx, oac_model **out, const void *buf,
                          size_t len, const char *name, const char *base_dir,
                          oac_diags *diags);
/* The largest model oac_model_load_fd reads from a stream: protobuf's
 * 2 GiB message limit (a larger ONNX model keeps its weights in external
 * data). */
#define OAC_MAX_STREAM_BYTES ((size_t)INT32_MAX)
/* The same from the open file descriptor fd, e.g. standard input (fd is
 * neither closed nor rewound).  A regular file is mapped as by
 * oac_model_load; a pipe or another stream is read to its end into
 * memory the model owns, at most max_bytes (0 or above
 * OAC_MAX_STREAM_BYTES: that limit): the first byte past them is a
 * parse-error and nothing after it is read.  name (NULL: "-") stands for
 * the path in messages; external data is resolved relative to base_dir
 * (NULL: the current directory). */
int oac_model_load_fd(oac_ctx *ctx, oac_model **out, int fd, size_t max_bytes,
                      const char *name, const char *base_dir, oac_diags *diags);
void oac_model_free(oac_model *model);

/* Write the model back.  A model read and written back differs only where
 * it was changed: unknown fields and payloads are kept. */
int oac_model_save(oac_ctx *ctx, const oac_model *model, const char *path);
/* The same into a new buffer of *out_len bytes (release it with
 * oac_free). */
int oac_model_save_buffer(oac_ctx *ctx, uint8_t **out, size_t *out_len,
                          const oac_model *model);

const char *oac_model_path(const oac_model *model);
/* Whether dim_param `name` occurs in a declared type of the model: an
 * input, output or value_info of the main graph, of any subgraph or of a
 * local function, at any nesting of sequence, optional and map types
 * (the names --dim may bind, contract 5). */
bool oac_model_has_dim_param(const oac_model *model, const char *name);
/* Whether `name` is an input of the main graph (the names --input may
 * give values, contract 5). */
bool oac_model_has_input(const oac_model *model, const char *name);

/* ------------------------------------------------------------------ */
/* Analysis: alias classes, shapes, capacity, memory plan               */
/* ------------------------------------------------------------------ */

/* An unsigned quantity that may be unknown (null in the report). */
typedef struct oac_opt_u64 {
    bool known;
    uint64_t value;
} oac_opt_u64;

typedef struct oac_dim_binding {
    const char *name;   /* a dim_param */
    int64_t value;      /* >= 1 (0, an empty dimension, from a library caller) */
} oac_dim_binding;

typedef struct oac_input_file {
    const char *name;   /* graph input */
    const char *path;   /* ONNX TensorProto / SequenceProto / MapProto file */
} oac_input_file;

typedef struct oac_check_opts {
    const oac_dim_binding *dims;
    size_t n_dims;
    const oac_input_file *inputs;
    size_t n_inputs;
    /* The genai_config.json the model will be deployed with (NULL:
     * none): its names add past/present pairs, and it is checked
     * against the model (config-mismatch, config-no-sharing).  A file
     * that cannot be read is config-invalid and OAC_EPARSE. */
    const char *config;
    /* The last n_run_dims entries of dims are not the caller's --dim but
     * what `run` binds at its first step (oac_run_dims: its generation
     * loop); messages say so.  0: every entry is an option. */
    size_t n_run_dims;
    /* With config NULL: look for the genai_config.json beside the model
     * (MODEL-stem.genai_config.json, else genai_config.json in its
     * folder), as oac_annotate does (`run`).  Its names add pairs; it is
     * not checked against the model (no config-mismatch nor
     * config-no-sharing: those are for the config given).  A file that
     * cannot be read is config-invalid and OAC_EPARSE. */
    bool config_beside;
} oac_check_opts;

/* One alias class: value names sharing one buffer. */
typedef struct oac_alias_class {
    char *root;          /* graph/function input, or the node output starting it */
    char *graph;         /* graph or function the root belongs to */
    char **members;      /* topological order, root first */
    size_t n_members;
    int32_t elem_type;   /* TensorProto.DataType, 0 when unknown */
    int rank;            /* -1 when unknown */
    int64_t *dims;       /* rank entries; -1 where unknown */
    char **dim_params;   /* rank entries; the symbol, or NULL */
    oac_opt_u64 bytes;   /* size of its one buffer */
    bool read_write;     /* rooted at a READ_WRITE graph input */
} oac_alias_class;

/* A rule that could not be decided, listed rather than skipped. */
typedef struct oac_unchecked {
    char *rule;          /* e.g. "capacity" */
    char *graph;
    char *node;
    char *value;
    char *reason;        /* why, and what would decide it (an option) */
    /* `run` decides it as it executes (a capacity rule: before each step,
     * or in the kernel before it writes), so a run's report drops it. */
    bool run_decides;
} oac_unchecked;

/* Contract section 4: the static memory plan at the dims known. */
typedef struct oac_memory_plan {
    oac_opt_u64 persistent_cache_bytes;
    oac_opt_u64 planned_output_bytes;
    oac_opt_u64 workspace_bytes;
    oac_opt_u64 peak_bytes;
    oac_opt_u64 second_cache_bytes;
} oac_memory_plan;

typedef struct oac_analysis oac_analysis;

/* A verdict for every cache (kv_caches of the report): how a past input
 * and the present output a runtime feeds back as the next past share
 * storage. */
typedef enum oac_kv_verdict {
    OAC_KV_IN_PLACE = 0,   /* the present's alias root is the past */
    OAC_KV_IMPLIED = 1,    /* not annotated, but every node on the path can share */
    OAC_KV_COPIED = 2,     /* a new buffer computed from the past (reason) */
    OAC_KV_NOT_A_CACHE = 3 /* not computed from the past (reason) */
} oac_kv_verdict;
const char *oac_kv_verdict_name(oac_kv_verdict v);  /* "in-place", ... */

/* How a pair was found (oac_kv_cache.found_by, or'ed). */
#define OAC_KV_BY_STRUCTURE 1u
#define OAC_KV_BY_CONFIG 2u
#define OAC_KV_BY_NAMES 4u

typedef struct oac_kv_cache {
    const char *past;
    const char *present;
    oac_kv_verdict verdict;
    int reason;              /* oac_refusal (below), 0 for none */
    unsigned found_by;       /* OAC_KV_BY_* */
    const char *node;        /* where the present stops sharing or is updated; NULL */
    const char *op_type;     /* NULL with node */
    oac_opt_u64 bytes_per_token; /* the present's bytes at the capacity */
    const char *bytes_formula;   /* the same in the dims' symbols when unknown, or NULL */
    int64_t capacity;        /* static capacity, -1 when not static */
    const char *capacity_symbol; /* its dim_param when symbolic, or NULL */
} oac_kv_cache;

/* Check every static rule of the contract.  Findings go to diags; the
 * return value is an oac_status (OAC_EINVAL for a bad --dim or --input,
 * with the message on ctx).  *out receives the results even when the model
 * has errors.  The analysis borrows the model (oac_run runs on it): use
 * it only while the model lives. */
int oac_check(oac_ctx *ctx, oac_analysis **out, const oac_model *model,
              const oac_check_opts *opts, oac_diags *diags);
void oac_analysis_free(oac_analysis *analysis);
/* Release what only oac_run reads (the graph index, schedule, alias
 * forest, types, --input files and per-graph plans); the accessors below
 * and the reports read what stays.  oac_run on a trimmed analysis makes
 * its own from its options.  For a caller that only reports. */
void oac_analysis_trim(oac_analysis *analysis);

size_t oac_analysis_class_count(const oac_analysis *a);
const oac_alias_class *oac_analysis_class(const oac_analysis *a, size_t i);
size_t oac_analysis_unchecked_count(const oac_analysis *a);
const oac_unchecked *oac_analysis_unchecked(const oac_analysis *a, size_t i);
/* Drop unchecked entries, so the reports list them no more: every one
 * (`--ignore unchecked`), or only those a run decides (run_decides: a
 * run's report, after it executed). */
void oac_analysis_unchecked_drop(oac_analysis *a, bool run_decided_only);
const oac_memory_plan *oac_analysis_plan(const oac_analysis *a);
/* The value a dim_param is bound to (declared, --dim or unified), or -1. */
int64_t oac_analysis_dim(const oac_analysis *a, const char *dim_param);
/* The model's past/present pairs with their verdicts, in the order of
 * the past inputs (none without a pair). */
size_t oac_analysis_kv_count(const oac_analysis *a);
const oac_kv_cache *oac_analysis_kv(const oac_analysis *a, size_t i);

/* ------------------------------------------------------------------ */
/* Reference runtime                                                     */
/* ------------------------------------------------------------------ */

typedef struct oac_run_opts {
    uint64_t steps;                /* 0 means 1 */
    const oac_dim_binding *dims;
    size_t n_dims;
    const oac_input_file *inputs;
    size_t n_inputs;
    const char *const *readonly;   /* caches bound read-only */
    size_t n_readonly;
    unsigned sessions;             /* 0 means 1 */
    const char *dump_dir;          /* NULL: no dump; made (one level) when
                                      the dump is written */
    /* The generation loop (contract 8, decoder inputs): tokens fed at the
     * first step (0 means 1), and the token ids input_ids cycles through
     * (NULL or none: 1, 2, 3, ...). */
    uint64_t prompt_length;
    const int64_t *tokens;
    size_t n_tokens;
    /* The memory budget: bytes of tensor data the run may hold at once,
     * over all its sessions; 0: no budget.  Counted: the storage bound
     * to READ_WRITE inputs, input data (zero-filled, --input or an
     * initializer default, and each session's copy), initializers read
     * for the run, node outputs, kernel workspace and cache pages.  Not
     * counted: the model, the analysis and the runtime's bookkeeping
     * (frames, page tables, per-step records, diagnostics), which grow
     * with the model, not with its data.  A run whose known need (the
     * planned peak at the run's dims plus its bindings, input data and
     * main-graph initializers) passes it is refused before anything is
     * allocated; every allocation is checked against it as well.  Either
     * is a memory-budget diagnostic and OAC_ERUNTIME.  The library never
     * picks a budget itself: the command-line tool's default is a
     * fraction of physical memory. */
    uint64_t max_memory;
    /* Re-tiering of paged caches (contract 11, run --page-policy): after
     * each step, every page of a bound paged cache whose age (0: the page
     * with the highest page id, which a decoder's last update wrote; 1:
     * the one before, ...) is at least a rule's age, for the largest such
     * age, is re-encoded to that rule's declaration when its format
     * differs.  None: pages keep their formats. */
    const struct oac_page_rule *page_policy;
    size_t n_page_policy;
    /* Read no genai_config.json beside the model (run --ignore-config):
     * the decoder inputs are the default names and the pairs come from
     * structure and names only. */
    bool ignore_config;
} oac_run_opts;

/* One AGE:QUANT of run --page-policy. */
typedef struct oac_page_rule {
    uint64_t age;
    /* A QuantizationProto.name of the model, or a decimal index into
     * ModelProto.quantizations. */
    const char *quant;
} oac_page_rule;

/* One step of one paged cache (execution.pages[].per_step[]). */
typedef struct oac_page_step {
    uint64_t step;
    uint64_t pages;
    /* Bytes of its pages per declaration, by index into
     * ModelProto.quantizations (oac_page_record.n_quantizations entries). */
    const uint64_t *bytes_by_quantization;
    uint64_t total_bytes;
    uint64_t re_encoded_pages;     /* this step's re-encodings */
    uint64_t re_encoded_bytes;     /* bytes of the pages they made */
} oac_page_step;

/* execution.pages[]: a bound paged cache, per step (the first
 * OAC_PER_STEP_HEAD and last OAC_PER_STEP_TAIL kept, as per_step). */
typedef struct oac_page_record {
    const char *cache;             /* borrowed from the model */
    oac_page_step *per_step;
    size_t n_per_step;
    uint64_t per_step_omitted;
    size_t n_quantizations;
    /* Declaration names (borrowed from the model; NULL: unnamed, shown
     * as "#<index>"). */
    const char *const *quantization_names;
} oac_page_record;

typedef struct oac_step_stats {
    uint64_t step;
    uint64_t alloc_calls;
    uint64_t alloc_bytes;
    uint64_t identity_checked;
    uint64_t identity_held;
    /* Bytes written into fresh buffers that hold cache contents: a
     * present a kernel wrote into a new buffer (Concat, an update without
     * output_alias) and the copy that feeds it back as the next past. */
    uint64_t copied_bytes;
    /* The generation loop's past length when the step began; -1 when the
     * run drives no loop. */
    int64_t past_length;
} oac_step_stats;

/* per_step keeps the first OAC_PER_STEP_HEAD and the last
 * OAC_PER_STEP_TAIL completed steps, in step order; the ones between are
 * counted in per_step_omitted, so records stay bounded however many
 * steps run.  Totals are over every step. */
#define OAC_PER_STEP_HEAD 8
#define OAC_PER_STEP_TAIL 8

/* Contract section 4, `execution`. */
typedef struct oac_execution {
    uint64_t steps_requested;
    uint64_t steps_completed;
    uint64_t identity_checked;
    uint64_t identity_held;
    oac_step_stats *per_step;      /* at most HEAD + TAIL entries */
    size_t n_per_step;
    uint64_t per_step_omitted;     /* completed steps not in per_step */
    uint64_t second_cache_bytes;
    uint64_t copied_bytes;         /* oac_step_stats.copied_bytes, all steps */
    uint64_t measured_peak_bytes;  /* the largest step's */
    /* The plan at the run's dims; when the generation loop's dims change
     * from step to step, the largest of the steps' plans, each at its
     * own dims. */
    oac_opt_u64 planned_peak_bytes;
    bool peak_matches_plan;
    uint64_t cache_bytes_bound;    /* caller-bound cache storage, once */
    /* The most the run held at once of what its memory budget counts
     * (oac_run_opts.max_memory), budget or not: a --max-memory it fits. */
    uint64_t memory_peak_bytes;
    /* Contract 11: one record per bound paged cache (none: NULL, 0). */
    oac_page_record *pages;
    size_t n_pages;
} oac_execution;

/* Run a checked model (analysis from oac_check of this model with the
 * same dims and inputs; NULL: the run makes one with the options', whose
 * findings it does not report but its structure errors).  A model with
 * structure errors (model-invalid) never runs: when diags does not
 * already hold them, the run adds its own check's and returns
 * OAC_ERUNTIME.  Refusals and run-time findings are diagnostics; the
 * return is an oac_status.  *out receives what was measured, also after
 * a refusal. */
int oac_run(oac_ctx *ctx, oac_execution **out, const oac_model *model,
            const oac_analysis *analysis, const oac_run_opts *opts,
            oac_diags *diags);
void oac_execution_free(oac_execution *exec);
/* The --dim bindings the check of a run uses (contract 8, decoder
 * inputs): opts->dims, then every symbol the run binds at its first step
 * from its generation loop (the prompt length, a total length equal to
 * it, a stock past's length 0, a batch of 1 unless --dim says
 * otherwise), so the static plan is the first step's.  *out (release it
 * with oac_free) borrows its names from opts and model.  OAC_EINVAL for
 * a --dim on a symbol the loop binds, or a decoder input the loop cannot
 * feed; OAC_EPARSE after a config-invalid diagnostic in diags when the
 * genai_config.json beside the model cannot be read. */
int oac_run_dims(oac_ctx *ctx, oac_dim_binding **out, size_t *n,
                 const oac_model *model, const oac_run_opts *opts,
                 oac_diags *diags);

/* ------------------------------------------------------------------ */
/* Annotate: making an existing decoder's in-place update explicit      */
/* ------------------------------------------------------------------ */

/* Contract section 7.  oac_annotate pairs each past input of a decoder
 * with its present output (by the genai_config.json beside the model or
 * given, else by name patterns), traces the present back to the past
 * through the operator table, and writes the annotations into the loaded
 * model (access, output_alias, alias_of, one capacity symbol).
 * oac_annotation_write then saves that model, checks what it wrote as
 * oac_check does, and keeps the file only when the check finds no error. */

typedef enum oac_refusal {
    OAC_REFUSAL_NONE = 0,
#define OAC_REFUSAL(id, name, meaning) OAC_REFUSAL_##id,
#include "oac_annotate.def"
#undef OAC_REFUSAL
    OAC_REFUSAL_COUNT
} oac_refusal;

/* "growing-cache"; NULL for OAC_REFUSAL_NONE or out of range. */
const char *oac_refusal_name(oac_refusal reason);
const char *oac_refusal_meaning(oac_refusal reason);

typedef enum oac_verdict {
    OAC_VERDICT_ANNOTATED = 0,   /* annotations written (or to be) */
    OAC_VERDICT_KEPT = 1,        /* every annotation was already there */
    OAC_VERDICT_REFUSED = 2      /* reason says why */
} oac_verdict;
const char *oac_verdict_name(oac_verdict v);  /* "annotated", ... */

typedef struct oac_annotate_opts {
    const char *config;    /* genai_config.json; NULL: look beside the model */
    bool ignore_config;    /* names from the config, but not its sharing rules */
    int64_t capacity;      /* > 0: this static capacity; 0: symbol kv_capacity */
    bool partial;          /* write the other pairs when one is refused */
} oac_annotate_opts;

/* One past/present pair.  Strings are NULL where unknown (node, op_type
 * of a pair refused before an operator was found). */
typedef struct oac_annotate_pair {
    const char *past;
    const char *present;
    const char *node;      /* the cache operator's node, "#<index>" unnamed */
    const char *op_type;
    int input_port;        /* its past port, -1 when unknown */
    int output_port;       /* its present port, -1 when unknown */
    oac_verdict verdict;
    oac_refusal reason;    /* the trace's refusal, OAC_REFUSAL_NONE when it holds */
    const char *message;
    /* The configuration's refusal (beam-search, config-disabled), or
     * OAC_REFUSAL_NONE; the verdict is refused when either is set. */
    oac_refusal config_reason;
} oac_annotate_pair;

typedef struct oac_annotation oac_annotation;

/* Decide every pair of model and, when every pair holds (or
 * opts->partial), write the annotations into model's tree (nothing else
 * changes; unknown fields stay).  Findings about the inputs are
 * diagnostics: a config that cannot be read or has the wrong structure
 * is config-invalid and returns OAC_EPARSE.  *out receives the pairs on
 * OAC_OK and OAC_EPARSE.  After OAC_ENOMEM the model may hold part of
 * the annotations: free it rather than save it. */
int oac_annotate(oac_ctx *ctx, oac_annotation **out, oac_model *model,
                 const oac_annotate_opts *opts, oac_diags *diags);
/* Save the annotated model to path unless a pair was refused without
 * opts->partial: written to a new temporary file beside path, loaded
 * back and checked with oac_check (its findings go to diags), renamed
 * onto path only when that check has no error, removed otherwise.  A
 * file that cannot be written is an output-write-failed diagnostic
 * (nothing left behind); the return is OAC_ENOMEM or OAC_OK. */
int oac_annotation_write(oac_ctx *ctx, oac_annotation *a,
                         const oac_model *model, const char *path,
                         oac_diags *diags);
void oac_annotation_free(oac_annotation *a);

size_t oac_annotation_pair_count(const oac_annotation *a);
const oac_annotate_pair *oac_annotation_pair(const oac_annotation *a, size_t i);
/* The config used (its path), or NULL when pairs came from names. */
const char *oac_annotation_config(const oac_annotation *a);
/* The path written by oac_annotation_write ("" when oac_annotate_json
 * handed the model over in memory), or NULL when nothing was. */
const char *oac_annotation_output(const oac_annotation *a);
/* Pairs with that verdict. */
size_t oac_annotation_count(const oac_annotation *a, oac_verdict v);

/* ------------------------------------------------------------------ */
/* Reports                                                              */
/* ------------------------------------------------------------------ */

/* What one model's report is made of; NULL members are unknown. */
typedef struct oac_report_input {
    const char *path;
    const oac_model *model;        /* NULL when unreadable */
    const oac_diags *diags;
    const oac_analysis *analysis;  /* NULL when not analysed */
    const oac_execution *execution;/* NULL unless run */
    bool werror;
    /* annotate's reports only: the pairs (NULL when the model or its
     * config could not be read) and the -o path asked for. */
    const oac_annotation *annotation;
    const char *output;
    /* SARIF and GitLab reports (issue 13): the folder artifact paths are
     * written relative to (the working directory, absolute; SARIF's
     * %SRCROOT%), NULL: paths as given.  A path outside it stays
     * absolute (a file:// URI in SARIF). */
    const char *srcroot;
    /* Text only: notes (unchecked rules, related parties, note
     * diagnostics) are counted, not printed (-q). */
    bool quiet;
} oac_report_input;

struct json_t;

/* The contract's JSON report object for one model (new reference). */
struct json_t *oac_report_json(oac_ctx *ctx, const oac_report_input *in);
/* A SARIF 2.1.0 log with one run over several models (new reference);
 * %SRCROOT% is in[0].srcroot when absolute. */
struct json_t *oac_report_sarif(oac_ctx *ctx, const oac_report_input *in,
                                size_t n);
/* The same log in pieces, for a writer that streams it model by model
 * (check of many models keeps one model at a time, contract 12):
 * oac_report_sarif equals oac_report_sarif_log(ctx, srcroot, R, A,
 * success, N) where R holds every model's oac_report_sarif_results in
 * order, A every model's oac_report_sarif_artifact, and the keys of
 * runs[0] come as tool, originalUriBaseIds, results, artifacts,
 * invocations, so results and artifacts can each be written element by
 * element into the text of a log made with both empty.
 *  _results: model in's results (a new JSON array), in->srcroot the
 *   log's; index is its artifact index (its position among the models);
 *   its notifications of omitted findings are appended to notes (a JSON
 *   array, or NULL); *failure is set when one of its diagnostics means
 *   the tool could not do its job (left alone otherwise).
 *  _artifact: model path's artifact object.
 *  _log: the log around results, artifacts and notes (each a JSON array,
 *   stolen, NULL: empty); executionSuccessful is success.
 * NULL with the message on ctx when out of memory. */
struct json_t *oac_report_sarif_results(oac_ctx *ctx, const oac_report_input *in,
                                        size_t index, struct json_t *notes,
                                        bool *failure);
struct json_t *oac_report_sarif_artifact(oac_ctx *ctx, const char *path,
                                         const char *srcroot);
struct json_t *oac_report_sarif_log(oac_ctx *ctx, const char *srcroot,
                                    struct json_t *results, struct json_t *artifacts,
                                    bool success, struct json_t *notes);
/* GitLab Code Quality: one JSON array over several models, an object
 * per diagnostic {description, check_name, fingerprint, severity,
 * location {path, lines {begin}}} (new reference). */
struct json_t *oac_report_gitlab(oac_ctx *ctx, const oac_report_input *in,
                                 size_t n);
/* GCC-style text: one line per diagnostic (with indented help: and note:
 * lines), the analysis's unchecked rules as notes, then a summary line.
 * Returns a new string (release it with oac_free), or NULL on allocation
 * failure. */
char *oac_report_text(oac_ctx *ctx, const oac_report_input *in);
/* "ok" or "error" under the report's rules (errors, or warnings with
 * werror). */
bool oac_report_failed(const oac_report_input *in);

/* annotate's report (contract 7): the JSON object {tool, model, config,
 * output, status, pairs, diagnostics} (new reference), and its text, one
 * line per pair, the diagnostics and a summary line (free() it). */
struct json_t *oac_annotate_report_json(oac_ctx *ctx, const oac_report_input *in);
char *oac_annotate_report_text(oac_ctx *ctx, const oac_report_input *in);
/* annotate's "error" status: an error diagnostic or a refused pair. */
bool oac_annotate_report_failed(const oac_report_input *in);

/* ------------------------------------------------------------------ */
/* One model, one call: for bindings (python/onnx_alias_check)          */
/* ------------------------------------------------------------------ */

/* What `check --format=json` (oac_check_json) and `annotate --format=json`
 * (oac_annotate_json) do for one model, in one call that needs none of
 * the structures above but the options: for a binding such as Python's
 * ctypes.  The model is the file at name when buf is NULL, else the len
 * bytes at buf (name, NULL for "<buffer>", stands for its path in the
 * report; external data is relative to the current directory).
 *
 * *out (oac_check_json) and *report (oac_annotate_json) receive the JSON
 * report text (release it with oac_free) whenever the command line would
 * print a report: for an unreadable model too (parse-error in it), and
 * for work that stopped (analysis-failed); the report's "status" is the
 * verdict.  The return is OAC_OK then.  OAC_EINVAL, no report and the
 * message on ctx: a usage error (a dim name the model does not declare,
 * a negative value, a bad --input); OAC_ENOMEM: not even a report. */
int oac_check_json(oac_ctx *ctx, char **out, const char *name, const void *buf,
                   size_t len, const oac_check_opts *opts, bool werror);
/* annotate in memory: nothing is written to disk.  *out receives the
 * annotated model (*out_len bytes, release with oac_free) when every pair
 * holds (or opts->partial) and the model written checks without error
 * (as oac_annotation_write checks its file); else NULL, and the report
 * says why.  In the report, output.path is null and output.written true
 * exactly when *out is set.  opts NULL: the defaults.  Without
 * opts->config the config is looked for beside name, as for a file of
 * that name (a buffer without a name: genai_config.json in the current
 * directory). */
int oac_annotate_json(oac_ctx *ctx, uint8_t **out, size_t *out_len, char **report,
                      const char *name, const void *buf, size_t len,
                      const oac_annotate_opts *opts);

/* ------------------------------------------------------------------ */
/* Output files                                                         */
/* ------------------------------------------------------------------ */

/* The inputs of a call (contract 12): the models, their external-data
 * files, every --input file and its external data, the genai_config.json
 * given or found.  The context records each file the library reads for
 * the call; oac_guard_add records one more (what: a static phrase such
 * as "the model").  oac_guard_add_output records a file the call writes
 * (-o), which no other writer of the call may name (writer: the
 * writer's name, e.g. "-o").  oac_guard_check is the gate: OAC_EINVAL
 * (the reason on ctx) when path is an input of the call (same device and
 * inode, or for a file not there yet the same resolved path) or another
 * writer's output; oac_outfile_open and annotate's writer pass it
 * themselves.  OAC_ENOMEM only otherwise. */
int oac_guard_add(oac_ctx *ctx, const char *path, const char *what);
int oac_guard_add_output(oac_ctx *ctx, const char *path, const char *writer);
int oac_guard_check(oac_ctx *ctx, const char *path, const char *writer);

/* A file written whole or not at all, never through a symbolic link
 * (contract 8: -o and --dump).  oac_outfile_open refuses a final path
 * that is a symbolic link, a folder or a special file other than a
 * character device or a FIFO (OAC_EIO, the reason on the context); a
 * regular or new file is written to a new temporary file in the same
 * folder (O_EXCL, O_NOFOLLOW) and renamed over the path by
 * oac_outfile_commit; a character device or a FIFO with a reader is
 * written in place.  Write through oac_outfile_stream.  commit and abort
 * free the object (commit: OAC_EIO when anything failed, the old file
 * then as it was); abort removes the temporary file. */
typedef struct oac_outfile oac_outfile;
int oac_outfile_open(oac_ctx *ctx, oac_outfile **out, const char *path);
FILE *oac_outfile_stream(oac_outfile *file);
int oac_outfile_commit(oac_outfile *file);
void oac_outfile_abort(oac_outfile *file);

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* OAC_H */

/* harness.h: the one helper header of the Check programs (tests/check_*.c).
 *
 * Each tests/check_<module>.c is one Check suite: it includes this header,
 * defines `Suite *test_suite(void)` and keeps everything else static.
 * tests/runner.c holds the only main(), linked into every program.
 *
 * Owns (implemented in tests/harness.c):
 *  - the fixture fx: a context and a diagnostics list; a model built with
 *    the builder (fx_build) or a shipped example (fx_example), packed and
 *    loaded from memory the way a user of the library would (fx_load);
 *    checking it (fx_check, fx_check_model), running the passes up to
 *    shapes by hand so the graph index stays for lookups (fx_infer), or
 *    checking and running it (fx_check_run); fx_end frees all of it;
 *  - questions and assertions over diagnostics (diag_*);
 *  - the case tables: one row per model (model_case) or per scenario
 *    (scene_case) and the finding it must produce, WANT(code), or the
 *    code it is a clean near miss of, NEAR(code).  tests/consistency.sh
 *    reads these rows: every code of include/oac_diag.def needs a WANT
 *    row and a NEAR row somewhere (HACKING.md, "Tests");
 *  - model fragments around cache updates (cu_*), the inferred dims and
 *    element types of values (dims_of, elem_of), TensorProto input files
 *    (write_tensor) and the every-allocation-fails loop of the runtime.
 *
 * The runtime's helpers are in tests/harness_run.c; tests of the runtime
 * include run/kernel_api.h, tests of the checker's passes check/graph.h (the two may
 * be included together: the runtime's value type is oac_rtval).
 *
 * Invariants: every helper frees what it took (in fx_end for the
 * fixture's objects); nothing here prints except Check's failure
 * messages, which carry diag_dump's list of what was found.
 */
#ifndef OAC_TESTS_HARNESS_H
#define OAC_TESTS_HARNESS_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oac.h"
#include "oac_int.h"
#include "oac_build.h"
#include "check/checker.h"
#include "../examples/models.h"

/* The suite of this program's module (defined once per tests/check_*.c;
 * run by tests/runner.c). */
Suite *test_suite(void);

/* ---- the fixture ------------------------------------------------------ */

typedef struct fx {
    oac_ctx *ctx;
    oac_diags *d;
    oac_mb *mb;            /* the model being built (fx_build) ... */
    oac_gb *g;             /* ... and its main graph */
    uint8_t *buf;          /* the packed model */
    size_t len;
    oac_model *m;
    oac_analysis *a;       /* fx_check */
    oac_execution *e;      /* fx_check_run */
    oac_check_state st;    /* fx_infer only: passes 1-8 by hand */
    int rc;                /* status of the last check or run */
} fx;

typedef void (*model_fn)(oac_mb *mb);
struct oac_run_hooks;   /* lib/run/kernel_api.h */

/* A context and an empty diagnostics list. */
void fx_begin(fx *f);
/* fx_begin and a builder (f->mb, also in *mb unless NULL); returns its
 * main graph (f->g). */
oac_gb *fx_build(fx *f, oac_mb **mb);
/* Pack the builder's model and load it (asserting both succeed). */
void fx_load(fx *f);
/* fx_begin and the example row `name`, loaded. */
void fx_example(fx *f, const char *name);
/* Check the model (loading the built one first when not loaded yet);
 * returns and keeps in f->rc the status, which is not asserted. */
int fx_check(fx *f, const oac_check_opts *opts);
/* Build with `build`, load and check (no options); the check must
 * succeed. */
void fx_check_model(fx *f, model_fn build);
/* Load the built model and run passes 1-8 (graph .. shapes) by hand,
 * keeping f->st.graphs and f->st.shapes for lookups. */
int fx_infer(fx *f, const oac_check_opts *opts);
/* Check with the run's dims and inputs (no error allowed), then run with
 * ro (its dims and inputs set from these) and hooks h (NULL: none).  The
 * check binds what the run's first step binds (oac_run_dims of ro, as
 * `run` does). */
int fx_check_run(fx *f, const oac_dim_binding *dims, size_t nd,
                 const oac_input_file *in, size_t ni, oac_run_opts *ro,
                 const struct oac_run_hooks *h);
void fx_end(fx *f);

/* Dims of a main-graph value after fx_infer, as "2,S,?" (symbol names
 * where the symbol is unbound, '?' for anonymous unknowns); "none" when
 * the rank is unknown. */
const char *dims_of(fx *f, const char *name, char *buf, size_t len);
/* Its element type after fx_infer. */
int32_t elem_of(fx *f, const char *name);

/* ---- diagnostics ------------------------------------------------------ */

size_t diag_count(const oac_diags *d, oac_code code);
/* The first diagnostic with that code and, where not NULL, that node,
 * value and location; NULL when none. */
const oac_diag *diag_find(const oac_diags *d, oac_code code, const char *node,
                          const char *value, const char *loc);
/* A finding of the checker: found, with its code's severity, a message,
 * and the graph and location (a JSON pointer) that say where it is. */
const oac_diag *diag_expect(const oac_diags *d, oac_code code,
                            const char *node, const char *value,
                            const char *loc);
/* diag_expect, and the stable code string reports carry for it
 * (contract 3), pinned through the public API. */
const oac_diag *diag_expect_named(const oac_diags *d, oac_code code,
                                  const char *name, const char *node,
                                  const char *value);
/* A finding of the reference runtime (which may have no location): the
 * first with that code, with its stable name and its code's severity. */
const oac_diag *diag_expect_run(const oac_diags *d, oac_code code,
                                const char *name);
/* No error and no warning at all. */
void diag_expect_clean(const oac_diags *d);
/* Every diagnostic, one per line, for failure messages (a static
 * buffer, overwritten by the next call). */
const char *diag_dump(const oac_diags *d);

/* ---- case tables -------------------------------------------------------
 *
 * A row either triggers a code,
 *     { "name", fn, WANT(OAC_X), node, value, location },
 * expecting a diagnostic with that code, its code's severity and, where
 * not NULL, that node, value and location (a JSON pointer); or it is a
 * clean near miss of a code,
 *     { "name", fn, NEAR(OAC_X) },
 * a model or scenario that differs from a triggering one by what makes it
 * valid and yields no error and no warning at all.  One code per row
 * (repeat a model to make it the near miss of another code).  A table is
 * run by CASES_TEST(table), which defines its test, and
 * ADD_CASES(tc, table), which adds that test to a test case.
 * tests/consistency.sh reads the rows of the tables registered so: every
 * code of include/oac_diag.def needs a WANT row and a NEAR row.
 */
#define WANT(code) (code), false
#define NEAR(code) (code), true, NULL, NULL, NULL

/* A model checked with oac_check (no options).  A WANT row's finding
 * must also say where it is (a location; the graph, when that lies in a
 * graph or function) and, when it names a node, the node's op_type. */
typedef struct model_case {
    const char *name;
    model_fn build;
    oac_code code;
    bool near;
    const char *node;
    const char *value;
    const char *loc;
} model_case;

/* Any scenario: scene() fills the fixture (fx_begin / fx_example /
 * fx_build ...) and loads, checks or runs what it needs to; the row's
 * expectation is then asserted on f->d (a finding of the runtime may have
 * no location: give NULL). */
typedef struct scene_case {
    const char *name;
    void (*scene)(fx *f);
    oac_code code;
    bool near;
    const char *node;
    const char *value;
    const char *loc;
} scene_case;

void model_case_run(const model_case *c);
void scene_case_run(const scene_case *c);

#define CASE_RUN(row)                                                   \
    _Generic((row), const model_case *: model_case_run,                 \
             const scene_case *: scene_case_run)(row)
#define CASES_TEST(table)                                               \
    START_TEST(test_rows_##table) { CASE_RUN(&(table)[_i]); }           \
    END_TEST
#define ADD_CASES(tc, table)                                            \
    tcase_add_loop_test((tc), test_rows_##table, 0,                     \
                        (int)(sizeof(table) / sizeof(table)[0]))

/* ---- model fragments -------------------------------------------------- */

/* The checker's cache [1, 2, 16, 4] FLOAT, update [1, 2, 1, 4]. */
#define CU_CACHE "1,2,16,4"
#define CU_UPD "1,2,1,4"

/* Graph input `name` shaped CU_CACHE; access >= 0 sets its access field
 * (1: READ_WRITE). */
Onnx__ValueInfoProto *cu_cache_input(oac_gb *g, const char *name, int access);
/* Inputs "values" (CU_UPD FLOAT) and "pos" (INT64 scalar). */
void cu_update_inputs(oac_gb *g);
/* name: out = CacheUpdate(inputs), output_alias 0<-0 unless alias is
 * false. */
Onnx__NodeProto *cu_node(oac_gb *g, const char *name, const char *inputs,
                         const char *out, bool alias);
/* name: out = CacheUpdate(cache, values, pos). */
Onnx__NodeProto *cu_update(oac_gb *g, const char *name, const char *cache,
                           const char *out, bool alias);
/* The main graph of most checker models: a READ_WRITE cache input "cache"
 * and the inputs of its updates (cu_update_inputs). */
oac_gb *cu_cache_graph(oac_mb *mb);
/* Graph output `name`, shaped CU_CACHE, declared alias_of `of`. */
Onnx__ValueInfoProto *cu_output_alias(oac_gb *g, const char *name,
                                      const char *of);
/* The dense model: upd = CacheUpdate(cache), output alias_of cache. */
void cu_dense(oac_mb *mb);
/* FLOAT16 inputs: cache (cache_dims, READ_WRITE), values [1,2,1,4] and
 * position (INT64 scalar). */
void cu_f16_inputs(oac_gb *g, const char *cache_dims);

/* ---- files and failures ----------------------------------------------- */

/* A TensorProto file DIR/NAME.pb of raw little-endian data; the path is
 * the caller's to unlink and free. */
char *write_tensor(const char *dir, const char *name, int32_t type,
                   const int64_t *dims, size_t nd, const void *raw, size_t len);

/* Run each example `steps` steps with the nth allocation failing, for
 * every n until the run succeeds: each attempt fails cleanly with
 * OAC_ENOMEM (ASan/valgrind see no leak).  dims (nd of them) serve the
 * examples dims_for says need them. */
void fail_each_allocation(const char *const *names, size_t n_names,
                          const oac_dim_binding *dims, size_t nd,
                          bool (*dims_for)(const char *name), uint64_t steps,
                          unsigned long max_n);

/* ---- kernels: one-node models (harness_kernel.c) ---------------------- */

/* A value read back from a run's dump. */
typedef struct kt_val {
    int32_t type;
    int rank;
    int64_t dims[8];
    size_t n;              /* elements */
    uint8_t *data;         /* raw little-endian elements (kt_free) */
} kt_val;

/* Initializer `name` of element type `type` and dims holding v[0..n)
 * converted to the type (16-bit floats rounded to nearest even through
 * float, integers truncated, BOOL v != 0). */
Onnx__TensorProto *kt_init(oac_gb *g, const char *name, int32_t type,
                           const char *dims, const double *v, size_t n);
/* The same tensor standalone (an attribute's value). */
Onnx__TensorProto *kt_tensor(oac_gb *g, const char *name, int32_t type,
                             const char *dims, const double *v, size_t n);
/* A reference value rounded as a store in `type` rounds it (float types;
 * other types unchanged). */
double kt_round(int32_t type, double v);
/* Load the built model if needed, check it (no error allowed), run one
 * step dumping into a temporary folder and read the graph outputs named
 * in `outs` (comma-separated) into out[0..n).  On success the measured
 * peak equals a known plan, and planned requires the plan to be known.
 * Returns the run's status (out zeroed unless OAC_OK). */
int kt_run(fx *f, bool planned, const char *outs, kt_val *out, size_t n);
/* kt_run over `steps` steps with run hooks h (NULL: none), e.g. bindings
 * of caller storage for the model's caches. */
int kt_run_with(fx *f, const struct oac_run_hooks *h, uint64_t steps, bool planned,
                const char *outs, kt_val *out, size_t n);
/* Read the graph outputs named in `outs` (comma-separated) from the
 * dump folder dir of a run of f into out[0..n), as kt_run does; for a
 * test that runs the model itself (with input files, say). */
void kt_read_outs(fx *f, const char *dir, const char *outs, kt_val *out, size_t n);
/* kt_run that must fail (OAC_ERUNTIME) with a finding `code` at node
 * (NULL: any node). */
int kt_run_fail(fx *f, oac_code code, const char *node);
/* Element i as a double (any type kt_init writes) or as int64. */
double kt_get(const kt_val *v, size_t i);
int64_t kt_get_i64(const kt_val *v, size_t i);
/* v has that type and dims ("2,3"; "" for a scalar) and its elements
 * equal want[0..n) within tol relative to max(1, |want|) (0: exactly;
 * NaN matches NaN). */
void kt_expect(const kt_val *v, int32_t type, const char *dims,
               const double *want, size_t n, double tol);
void kt_free(kt_val *v, size_t n);

#endif /* OAC_TESTS_HARNESS_H */

/* ops.h: the operator table (ops.def) as data.
 *
 * Owns: lookup of an operator row by (domain, op_type) and the questions
 * the passes ask of a row.  Contract: section 2, section 3 "Details".
 * Invariants: the table is constant; lookups never allocate; every fact
 * about a specific operator lives in ops.def, not in the passes.
 */
#ifndef OAC_OPS_H
#define OAC_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum oac_op_alias {
    OAC_AL_NONE = 0,
    OAC_AL_PORT0 = 1,   /* output 0 may alias input 0 */
    OAC_AL_LOOP = 2,    /* Loop: output i <- input i+2 */
    OAC_AL_SCAN = 3,    /* Scan: state output i <- input i */
    OAC_AL_BRANCH = 4   /* If: outputs alias through their branches */
} oac_op_alias;

enum {
    OAC_OPF_CACHE_UPDATE = 1 << 0,    /* alias-implied without output_alias 0<-0 */
    OAC_OPF_PAGED = 1 << 1,           /* cache is a sequence of pages */
    OAC_OPF_CONTROL = 1 << 2,         /* If / Loop / Scan */
    OAC_OPF_CONSTANT = 1 << 3,        /* its output is "a constant" */
    OAC_OPF_NO_STORAGE_READ = 1 << 4, /* reads only metadata (Shape, Size) */
    OAC_OPF_FOLD = 1 << 5             /* a known value folds through it */
};

typedef enum oac_op_id {
#define OAC_OP(id, dom, op, al, axa, axd, pos, val, page, mi, ma, fl, ea, ev) \
    OAC_OP_##id,
#include "ops.def"
#undef OAC_OP
    OAC_OP_COUNT
} oac_op_id;

typedef struct oac_op {
    oac_op_id id;
    const char *domain;       /* "" is the ONNX domain */
    const char *op_type;
    oac_op_alias alias;
    const char *axis_attr;    /* capacity-axis attribute, or NULL */
    int axis_default;
    int position_port;        /* -1: none */
    int values_port;          /* -1: none */
    int page_id_port;         /* -1: none */
    int min_inputs;           /* -1: unchecked */
    int max_inputs;
    unsigned flags;
    const char *enum_attr;    /* closed-set string attribute, or NULL */
    const char *enum_values;  /* "a|b", the first the default */
} oac_op;

/* The row for (domain, op_type), or NULL.  domain NULL, "" and "ai.onnx"
 * are the ONNX domain. */
const oac_op *oac_op_find(const char *domain, const char *op_type);
/* Is value (len bytes) one of op->enum_values?  True without enum_attr. */
bool oac_op_enum_ok(const oac_op *op, const char *value, size_t len);

/* The row of an id (never NULL for id < OAC_OP_COUNT). */
const oac_op *oac_op_get(oac_op_id id);

static inline bool oac_op_has(const oac_op *op, unsigned flag)
{
    return op && (op->flags & flag);
}

/* For an op whose aliasing is fixed by the table (PORT0, LOOP, SCAN):
 * the input port output `out` may alias given n_in inputs and (Scan)
 * num_scan_inputs, or -1.  Loop: out i <- in i+2 for i < n_in-2; Scan:
 * out i <- in i for i < n_in - num_scan_inputs. */
int oac_op_alias_input(const oac_op *op, size_t out, size_t n_in,
                       long num_scan_inputs);

#endif /* OAC_OPS_H */

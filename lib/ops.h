/* ops.h: the operator table (ops.def) as data.
 *
 * Owns: struct oac_op (one row per operator: alias facts, cache-update
 * ports, shape inference, constant folding, capacity rule, kernel), the
 * lookup of a row
 * by (domain, op_type), the one answer to "is this the ONNX domain", and
 * the questions the passes ask of a row, among them section 6's: which
 * pairs a node can state and whether a stated pair holds in place as the
 * node is configured (oac_op_pairs, oac_op_pair_judge).  Contract:
 * section 2, section 3 "Details", section 6 (its table is the rows with
 * OAC_OPF_ALIAS_TABLE: pairs, condition, length rule, hint).
 * Invariants: the table is constant; lookups never allocate; every fact
 * about a specific operator lives in its ops.def row, not in the passes
 * or kernels (tests/op_names.sh: no quoted operator name elsewhere in
 * lib/, but for a kernel naming its own operator).  This header stays
 * light: the rule and kernel signatures name their structs only by
 * forward declaration (the functions are declared in op_fns.h).
 */
#ifndef OAC_OPS_H
#define OAC_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct Onnx__NodeProto;   /* onnx.pb-c.h */
struct oac_infer;         /* check/shapes.h */
struct oac_cap;           /* check/capacity.c */
struct oac_kernel_call;   /* run/kernel_api.h */

/* A shape inference or constant-folding rule (check/infer.c, check/consts.c): fills
 * the node's output facts; fails only with OAC_ENOMEM. */
typedef int (*oac_rule_fn)(struct oac_infer *c);
/* A capacity rule (check/capacity.c): capacity-overflow findings of one node. */
typedef int (*oac_capacity_fn)(struct oac_cap *c);
/* A kernel of the reference runtime (kernel_*.c); see run/kernel_api.h. */
typedef int (*oac_kernel_fn)(struct oac_kernel_call *k);

/* How outputs may alias inputs. */
typedef enum oac_op_alias {
    OAC_AL_NONE = 0,
    OAC_AL_PAIRS = 1,   /* the row's pairs[] (output_alias must state them) */
    OAC_AL_LOOP = 2,    /* Loop: output i <- input i+2 */
    OAC_AL_SCAN = 3,    /* Scan: state output i <- input i */
    OAC_AL_BRANCH = 4   /* If: outputs alias through their branches */
} oac_op_alias;

/* One pairing of a past input with its present output (NodeProto ports). */
typedef struct oac_op_pair {
    int8_t in, out;
} oac_op_pair;
#define OAC_OP_MAX_PAIRS 2

/* When the pairs of an OAC_AL_PAIRS row hold in place. */
typedef enum oac_op_cond {
    OAC_COND_ALWAYS = 0,    /* whenever output_alias states them */
    OAC_COND_INPUT,         /* input cond_port is present */
    OAC_COND_ATTR,          /* int attribute cond_attr is 1 */
    OAC_COND_NEVER          /* never: the output grows; the listed pairs
                               (ONNX Attention) or, on a row without
                               pairs (Concat, Pad), any pair is refused */
} oac_op_cond;

/* What length an update leaves, checked against the capacity (the past
 * input's dim on the capacity axis, the row's .axis_default): data for
 * a .capacity rule that reads it (section 6, oac_capacity_length and
 * the scatter rules).  The section-2 operators' rules are functions of
 * their own (position + values length, check/capacity.c). */
typedef enum oac_op_len {
    OAC_LEN_NONE = 0,       /* nothing checked by this column */
    OAC_LEN_VALUE,          /* known value of input `port` + `plus` +
                               (seq_port >= 0: dim seq_axis of seq_port) */
    OAC_LEN_INDICES,        /* known indices must lie inside the data */
    OAC_LEN_UNCHECKED       /* listed as not checkable (block tables) */
} oac_op_len;

typedef struct oac_op_length {
    oac_op_len kind;
    int8_t port;            /* -1: none */
    int8_t seq_port;        /* -1: none */
    int8_t seq_axis;
    int8_t plus;
} oac_op_length;

/* Properties a pass asks about; derived facts (folds: fold != NULL;
 * control flow: alias LOOP/SCAN/BRANCH) are not flags. */
enum {
    OAC_OPF_CACHE_UPDATE = 1 << 0,    /* alias-implied without output_alias 0<-0 */
    OAC_OPF_PAGED = 1 << 1,           /* cache is a sequence of pages */
    OAC_OPF_CONSTANT = 1 << 2,        /* its output is "a constant" */
    OAC_OPF_NO_STORAGE_READ = 1 << 3, /* reads only metadata (Shape, Size) */
    /* Section 6's table: output_alias on this operator is verified
     * against its pairs and condition (alias-unsupported). */
    OAC_OPF_ALIAS_TABLE = 1 << 4,
    /* A KV-cache operator of section 6 (com.microsoft): a pair whose
     * condition holds but whose present lacks output_alias is
     * alias-implied; the pairs of a K/V row are declared together. */
    OAC_OPF_KV_CACHE = 1 << 5,
    /* The operator defines its present as the past's buffer (its present
     * has the past's shape): the length rule holds with or without
     * output_alias.  Without it, the rule holds where the pair is in
     * place: declared, configured in the file (OAC_COND_INPUT/ATTR), or,
     * on an OAC_COND_ALWAYS row, where the node's present is declared as
     * long as its past on the capacity axis (check/capacity.c,
     * pair_shared). */
    OAC_OPF_PRESENT_IS_PAST = 1 << 6,
    /* Control flow the reference runtime runs (run/control.c): the node
     * runs its .bodies, and its memory plan holds theirs (plan rules
     * 9-10).  A row with .bodies but without it (Scan) is refused by the
     * runtime. */
    OAC_OPF_CONTROL = 1 << 7,
    /* The position port holds write_indices, INT64 [batch] (one position
     * per batch row), not a scalar position (TensorScatter). */
    OAC_OPF_WRITE_INDICES = 1 << 8,
    /* The operator reads a paged cache one page at a time into workspace
     * of one decoded page (PagedCacheAttention; plan rule 5c). */
    OAC_OPF_PAGED_READ = 1 << 9
};

/* The contract's operator domain (its rows' DOMAIN; what a model must
 * import to use them).  The one spelling of it in lib/. */
#define OAC_ALIAS_DOMAIN "onnx_alias"

/* The most subgraph attributes a row names (.bodies). */
#define OAC_OP_MAX_BODIES 2

typedef enum oac_op_id {
#define OAC_OP(id, dom, op, ...) OAC_OP_##id,
#include "ops.def"
#undef OAC_OP
    OAC_OP_COUNT
} oac_op_id;

/* One row.  Port fields are NodeProto input indices, -1 for none (the
 * row macro's defaults, ops.c). */
typedef struct oac_op {
    oac_op_id id;
    const char *domain;       /* "" is the ONNX domain */
    const char *op_type;
    unsigned flags;           /* OAC_OPF_* */

    /* Aliasing (contract 2, 3 "Details", 6). */
    oac_op_alias alias;
    uint8_t n_pairs;          /* OAC_AL_PAIRS: pairs[0 .. n_pairs) */
    oac_op_pair pairs[OAC_OP_MAX_PAIRS];
    oac_op_cond cond;
    int cond_port;            /* OAC_COND_INPUT */
    const char *cond_attr;    /* OAC_COND_ATTR */
    oac_op_length length;
    /* Section 6: why a refused pair cannot share the input's storage
     * and what would (alias-unsupported's message, annotate's refusals);
     * NULL off the table. */
    const char *alias_hint;

    /* Operands of the cache updates (contract 2). */
    const char *axis_attr;    /* capacity-axis attribute, or NULL */
    int axis_default;         /* the capacity axis when it is absent */
    int position_port;        /* position / write_indices */
    int values_port;          /* the update values */
    int page_id_port;
    /* A fixed block pool addressed through a block table (section 10,
     * PagedAttention): ports of the block table [B, max_blocks], the past
     * lengths [B] and the queries' cumulative lengths [B + 1]; the pools
     * are the pairs' pasts [num_blocks, block_size, ...]. -1: none. */
    struct { int8_t table, past, cu; } blocks;
    int min_inputs;           /* input count bounds (operand-invalid); */
    int max_inputs;           /*   -1: unchecked */
    const char *enum_attr;    /* closed-set string attribute, or NULL */
    const char *enum_values;  /* "a|b", the first the default */

    /* Control flow (contract 3 "Details"): the attributes holding the
     * subgraphs the node runs, in the row's order (If: the branch taken
     * when cond is true, then the other; Loop, Scan: the body); NULL
     * past n_bodies. */
    const char *bodies[OAC_OP_MAX_BODIES];
    uint8_t n_bodies;

    /* What the passes run for it; NULL: nothing (outputs unknown, no
     * folding, unsupported-operator at run time). */
    oac_rule_fn infer;        /* shape inference (check/infer.c) */
    oac_rule_fn fold;         /* known-value folding (check/consts.c), after infer */
    oac_capacity_fn capacity; /* capacity-overflow (check/capacity.c) */
    oac_kernel_fn kernel;     /* the runtime's kernel (kernel_*.c) */
} oac_op;

/* Is domain the ONNX domain?  NULL, "" and "ai.onnx" are. */
bool oac_domain_is_onnx(const char *domain);

/* The row for (domain, op_type), or NULL.  Case-sensitive; any ONNX
 * spelling of the domain finds the ONNX rows. */
const oac_op *oac_op_find(const char *domain, const char *op_type);
/* Is value (len bytes) one of op->enum_values?  True without enum_attr. */
bool oac_op_enum_ok(const oac_op *op, const char *value, size_t len);

/* The row of an id (never NULL for id < OAC_OP_COUNT). */
const oac_op *oac_op_get(oac_op_id id);

static inline bool oac_op_has(const oac_op *op, unsigned flag)
{
    return op && (op->flags & flag);
}

/* Is op the row `id`?  (NULL is no row.) */
static inline bool oac_op_is(const oac_op *op, oac_op_id id)
{
    return op && op->id == id;
}

/* Is op a cache update whose cache is a sequence of pages
 * (PagedCacheUpdate)? */
static inline bool oac_op_paged_update(const oac_op *op)
{
    return oac_op_has(op, OAC_OPF_CACHE_UPDATE) && oac_op_has(op, OAC_OPF_PAGED);
}

/* Body k of op's row (.bodies), or NULL. */
static inline const char *oac_op_body(const oac_op *op, size_t k)
{
    return op && k < op->n_bodies ? op->bodies[k] : NULL;
}

/* Does attribute `name` hold one of the bodies op runs? */
bool oac_op_is_body(const oac_op *op, const char *name);

/* For an op whose aliasing is fixed by the table (PAIRS, LOOP, SCAN):
 * the input port output `out` may alias given n_in inputs and (Scan)
 * num_scan_inputs, or -1.  PAIRS: the pair of output `out` when its
 * input exists; Loop: out i <- in i+2 for i < n_in-2; Scan: out i <- in i
 * for i < n_in - num_scan_inputs.  Conditions (cond) are not judged. */
int oac_op_alias_input(const oac_op *op, size_t out, size_t n_in,
                       long num_scan_inputs);

/* ---- section 6: the pairs a node states ------------------------------- */

/* The row's pairs node n can state: those whose input and output ports n
 * names (non-empty), in row order.  Writes at most max of them to out
 * (out may be NULL with max 0) and returns how many there are.  Rows
 * that never hold in place (OAC_COND_NEVER) list their pairs too (ONNX
 * Attention's past -> present), so a caller can name what it refuses;
 * rows without pairs give 0. */
size_t oac_op_pairs(const oac_op *row, const struct Onnx__NodeProto *n,
                    oac_op_pair *out, size_t max);

/* Can output `out` of node n share the storage of its input `in`? */
typedef enum oac_pair_verdict {
    OAC_PAIR_IN_PLACE = 0,  /* a pair of the row whose condition holds */
    OAC_PAIR_UNVERIFIED,    /* operator outside section 6's table (or no
                               row): output_alias stays unverified */
    OAC_PAIR_NOT_IN_ROW,    /* the row has no such pair */
    OAC_PAIR_CONDITION,     /* the row's condition fails in the file (an
                               input or attribute is missing) */
    OAC_PAIR_GROWS          /* never in place: the output is longer than
                               the input (Concat, Pad, ONNX Attention) */
} oac_pair_verdict;

/* The verdict for (in, out) on node n of row `row`; *why (when why is
 * not NULL) gets the row's hint (alias_hint: why not and what would) for
 * CONDITION and GROWS and NOT_IN_ROW, NULL otherwise.  Reads only n's
 * ports and attributes; never allocates. */
oac_pair_verdict oac_op_pair_judge(const oac_op *row,
                                   const struct Onnx__NodeProto *n,
                                   int in, int out, const char **why);

/* Pair k of the row (k < row->n_pairs) holds in place on node n: its
 * ports are named and its condition holds (on any OAC_AL_PAIRS row: the
 * section-2 cache updates' 0 -> 0 too).  *why as oac_op_pair_judge. */
bool oac_op_pair_in_place(const oac_op *row, const struct Onnx__NodeProto *n,
                          size_t k, const char **why);

/* Does the row's condition hold on node n (OAC_COND_ALWAYS: yes, NEVER:
 * no, INPUT: input cond_port is named, ATTR: int attribute cond_attr is
 * 1)? */
bool oac_op_cond_holds(const oac_op *row, const struct Onnx__NodeProto *n);

#endif /* OAC_OPS_H */

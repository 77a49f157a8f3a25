/* check/shapes_store.h: the store of shapes, dimension symbols and known
 * values (ShapesContext) the checker's later passes and the runtime read.
 *
 * Owns: struct oac_shapes and its readers and writers, the store of
 * check/shapes_store.c: symbols, interned dims, known values.  It is
 * filled by oac_pass_shapes (check/shapes.c) over every scope of
 * check/graph.h, with per-op rules in check/infer.c and known-value
 * folding in check/consts.c (their interface is check/shapes.h) and
 * --input files in check/inputs.c (check/inputs.h).  A pass or the
 * runtime that only reads types and known values includes this header
 * alone.  Contract: section 2 (operand types), section 3
 * (type-/rank-/shape-mismatch, "A value is known when", --dim), section
 * 4 (alias_classes elem_type/shape/dim_param/bytes).
 *
 * Invariants:
 *  1. A dimension is an oac_dimref: >= 0 a static size, < 0 a reference
 *     to symbol -(ref+1).  Every dim_param of the model is one symbol
 *     (same name, same symbol, in every scope: --dim binds it
 *     everywhere); every unknown dimension ("?", or one inference cannot
 *     tell) is a fresh anonymous symbol.  Symbols unify through a
 *     union-find, so a binding learnt late (an alias class member, a
 *     declared output) reaches every value that copied the reference.
 *  2. A symbol root is bound to at most one number.  A second, different
 *     number is shape-mismatch naming both places; the first binding wins.
 *  3. Per-value facts live in arrays indexed by check/graph.h's dense value id;
 *     known values, which few values have, in a hash table by id behind
 *     a bitmap of the ids that have one.
 *  4. Known values are small integer tensors (at most OAC_KNOWN_MAX
 *     elements), read through oac_tensor_int64s only after the element
 *     count is checked: large weights are never read.  Overflow while
 *     folding makes the value unknown, never wraps.
 *  5. Nothing here prints; failures are negative oac_status with oac_err.
 *  6. Ownership: the analysis keeps the object (analysis->shapes, freed
 *     with oac_shapes_free) beside the graph index it is indexed by
 *     (graphs, borrowed from the analysis too), so value ids stay
 *     meaningful as long as the analysis.
 *  7. Dims arrays are interned: equal arrays are one arena block, shared
 *     by every value with that shape, and never written once made (a
 *     rule builds its output's dims in oac_infer.scratch; the pass
 *     interns them).  Decoder graphs repeat a few shapes thousands of
 *     times, so the dims cost little more than the distinct shapes.
 *
 * This header names no check/graph.h type except struct oac_scope (opaque here),
 * so the runtime (whose run/kernel_api.h has oac_rtval, its own value) can include it.
 */
#ifndef OAC_SHAPES_STORE_H
#define OAC_SHAPES_STORE_H

#include "oac_int.h"

struct oac_scope;
struct oac_graphs;
struct oac_check_state;

/* Largest element count of a value folded as known (shape tensors,
 * positions, indices; not weights). */
#define OAC_KNOWN_MAX 1024
/* Largest rank inference works with; higher ranks stay unknown. */
#define OAC_SHAPE_MAX_RANK 64

typedef int64_t oac_dimref;
#define OAC_DIM_SYM(id) ((oac_dimref)(-(int64_t)(id) - 1))
#define OAC_DIM_IS_SYM(d) ((d) < 0)
#define OAC_DIM_SYM_ID(d) ((size_t)(-((d) + 1)))

typedef enum oac_vkind {
    OAC_VK_UNKNOWN = 0,
    OAC_VK_TENSOR = 1,      /* dense tensor */
    OAC_VK_SEQUENCE = 2,    /* Sequence<T>: elem_type/dims describe T */
    OAC_VK_MAP = 3,         /* Map<K, T>: elem_type/dims describe T */
    OAC_VK_OTHER = 4        /* optional, sparse, opaque: not tracked */
} oac_vkind;

/* What the checker knows of one value's type.  For sequences and maps
 * the element's tensor type is described; quantized says the element is
 * a QuantizedTensor (elem_type is then the decoded type). */
typedef struct oac_vshape {
    uint8_t kind;           /* oac_vkind */
    bool quantized;
    int16_t rank;           /* -1 unknown, else <= OAC_SHAPE_MAX_RANK */
    int32_t elem_type;      /* 0 unknown */
    const oac_dimref *dims; /* rank entries (arena, shared: invariant 7) */
} oac_vshape;

/* A known integer tensor. */
typedef struct oac_known {
    int32_t elem_type;
    int32_t rank;
    int64_t *shape;         /* rank entries, all static */
    size_t n;               /* element count */
    int64_t *v;             /* n values */
} oac_known;

/* Where a symbol got its number (for shape-mismatch messages). */
typedef enum oac_origin_kind {
    OAC_ORIGIN_NONE = 0,
    OAC_ORIGIN_DECLARED,    /* a value's declared type */
    OAC_ORIGIN_INFERRED,    /* a node's output, by inference */
    OAC_ORIGIN_OPTION,      /* --dim NAME=VALUE */
    OAC_ORIGIN_INPUT_FILE   /* dims of an --input file */
} oac_origin_kind;

typedef struct oac_sym {
    size_t parent;
    int64_t value;          /* bound number at the root, or -1 */
    const char *name;       /* dim_param (borrowed), NULL if anonymous */
    uint8_t origin;         /* oac_origin_kind of the binding */
    int32_t origin_dim;     /* axis of the binding (--dim: the option's index) */
    size_t origin_value;    /* value id of the binding (SIZE_MAX: none) */
} oac_sym;

typedef struct oac_shapes {
    oac_ctx *ctx;
    struct oac_arena *arena;        /* dims, knowns */
    /* Interned dims arrays (invariant 7), open addressing at most half
     * full; only while the pass runs (freed at its end). */
    struct oac_dims_slot *dims_tab;
    size_t n_dims_tab, cap_dims_tab;
    /* The arrays interned last, tried before hashing: consecutive
     * declarations and initializers mostly repeat a shape. */
    const oac_dimref *dims_recent[4];
    int16_t dims_recent_rank[4];
    unsigned dims_next;
    const struct oac_graphs *graphs;/* borrowed from the analysis */
    oac_sym *syms;
    size_t n_syms, cap_syms;
    oac_strmap sym_by_name;         /* dim_param -> (void *)(id + 1) */
    size_t n_values;
    oac_vshape *vals;               /* by value id */
    /* Known values by value id (invariant 3): bit id of known_bits is
     * set when the table holds one. */
    uint64_t *known_bits;
    struct oac_known_slot *known_tab;   /* open addressing, at most half full */
    size_t n_known, cap_known;
} oac_shapes;

/* ---- the store (check/shapes_store.c) ---- */

/* An empty store for n_values values (every value unknown, rank -1). */
int oac_shapes_new(oac_ctx *ctx, size_t n_values, oac_shapes **out);
void oac_shapes_free(oac_shapes *sh);

/* The number symbol reference d (< 0) stands for, or -1 when unknown. */
int64_t oac_shapes_sym_value(const oac_shapes *sh, oac_dimref d);
/* The number d stands for, or -1 when unknown.  Inline: inference and
 * the later passes ask for every dim, and most are static. */
static inline int64_t oac_shapes_dim(const oac_shapes *sh, oac_dimref d)
{
    return OAC_DIM_IS_SYM(d) ? oac_shapes_sym_value(sh, d) : d;
}
/* Was d's number given by dims option lo .. hi-1 (oac_check_opts.dims:
 * `run`'s loop binds the last n_run_dims)?  false for a static dim. */
bool oac_shapes_dim_from_options(const oac_shapes *sh, oac_dimref d, size_t lo,
                                 size_t hi);
/* The dim_param d resolves to (its root's or any unified name), or NULL. */
const char *oac_shapes_dim_name(const oac_shapes *sh, oac_dimref d);
/* A fresh anonymous symbol (an unknown dimension); 0 is never returned:
 * on failure *out is untouched and OAC_ENOMEM is returned. */
int oac_shapes_fresh(oac_shapes *sh, oac_dimref *out);

/* Type facts of a value id, or NULL (out of range). */
const oac_vshape *oac_shapes_value(const oac_shapes *sh, size_t id);
const oac_known *oac_shapes_known(const oac_shapes *sh, size_t id);
/* Bytes of a tensor shape when element type and every dim are known;
 * false when unknown or on overflow (never wraps). */
bool oac_shapes_bytes(const oac_shapes *sh, const oac_vshape *v,
                      uint64_t *out);

/* ---- the store's writers: the shapes pass and its rules (check/shapes.c,
 * check/infer.c, check/consts.c, check/inputs.c) ---- */

/* memcpy that accepts (NULL, 0): empty dims arrays of protobuf-c are NULL. */
static inline void oac_shapes_copy(void *dst, const void *src, size_t n)
{
    if (n)
        __builtin_memcpy(dst, src, n);
}

static inline bool oac_dims_eq(const oac_dimref *a, const oac_dimref *b,
                               size_t n)
{
    /* Ranks are small: a loop beats a call to memcmp. */
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* Arena allocation of n int64s (NULL with OAC_ENOMEM on ctx). */
int64_t *oac_shapes_new_i64(oac_shapes *sh, size_t n);
/* The interned copy of dims d[0..n) (invariant 7; never NULL on success,
 * also for n == 0): NULL with OAC_ENOMEM on ctx. */
const oac_dimref *oac_shapes_intern(oac_shapes *sh, const oac_dimref *d,
                                    size_t n);
/* Interning is over: drop its table (the arrays stay). */
void oac_shapes_intern_done(oac_shapes *sh);
/* A known value with room for n elements of rank `rank` (or NULL). */
oac_known *oac_shapes_new_known(oac_shapes *sh, int32_t elem_type,
                                int32_t rank, size_t n);

/* Symbols: the root of symbol id (path halving); the symbol of a
 * dim_param, made on first use; the id of a dim_param's symbol, or
 * SIZE_MAX when the model has none of that name. */
size_t oac_shapes_sym_root(oac_shapes *sh, size_t id);
int oac_shapes_sym_named(oac_shapes *sh, const char *name, oac_dimref *out);
size_t oac_shapes_sym_by_name(const oac_shapes *sh, const char *name);
/* Bind root (unbound) to n, remembering where (oac_origin_kind, value
 * id, axis) for messages. */
void oac_shapes_sym_bind(oac_shapes *sh, size_t root, int64_t n,
                         uint8_t origin, size_t origin_value, int32_t origin_dim);
/* Join root rb into root ra (ra != rb; their bindings agree or one is
 * unbound): ra keeps a binding and a name, whichever side has them. */
void oac_shapes_sym_join(oac_shapes *sh, size_t ra, size_t rb);

/* Known values by value id (invariant 3).  Inline: the pass asks for
 * every input of every node. */
struct oac_known_slot {
    size_t id;
    oac_known *k;           /* NULL: a free slot */
};

static inline size_t oac_shapes_known_slot(const struct oac_known_slot *tab,
                                           size_t cap, size_t id)
{
    size_t i = (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15u) >> 32) & (cap - 1);
    while (tab[i].k && tab[i].id != id)
        i = (i + 1) & (cap - 1);
    return i;
}

static inline bool oac_shapes_known_bit(const oac_shapes *sh, size_t id)
{
    return (sh->known_bits[id / 64] >> (id % 64)) & 1;
}

static inline oac_known *oac_shapes_known_get(const oac_shapes *sh, size_t id)
{
    if (!oac_shapes_known_bit(sh, id))
        return NULL;
    return sh->known_tab[oac_shapes_known_slot(sh->known_tab, sh->cap_known, id)].k;
}

/* Value id is known as k (NULL: unknown from now on). */
int oac_shapes_known_set(oac_shapes *sh, size_t id, oac_known *k);

#endif /* OAC_SHAPES_STORE_H */

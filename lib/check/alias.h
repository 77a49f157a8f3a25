/* check/alias.h: alias classes and resolved must-alias ports, as the later
 * passes (shapes, capacity, pages, plan, runtime) read them.
 *
 * Owns: the union-find result of check/alias_classes.c over value names, per
 * scope, from output_alias and alias_of.  Contract: section 3
 * (alias-mismatch ... alias-root-immutable, "Details the rules rely on"),
 * section 4 (alias_classes: root, members in topological order).
 *
 * Invariants:
 *  1. A class has exactly one root: a graph or function input, or the
 *     node output that starts it (a fresh temporary), or (broken models)
 *     an initializer / Constant output.  Its scope is the root's; members
 *     may sit in subgraphs (a body updating an outer cache, a carried
 *     Loop/Scan value).
 *  2. Only resolved must-alias edges join values (each value has at most
 *     one parent, the value whose storage it reuses):
 *       OAC_EDGE_PORT     a valid MUST_ALIAS output_alias entry, or a call
 *                         of a local function whose output's alias_of
 *                         names one of its inputs;
 *       OAC_EDGE_BRANCH   an If output, when every branch returns a value
 *                         of one root and one branch updates it;
 *       OAC_EDGE_CARRIED  a Loop/Scan body input, to the node's input,
 *                         when the node must-aliases that carried value.
 *     Nothing else (alias_of alone, metadata_props) joins a class.
 *  3. Members are in topological order of the edges, root first.
 *  4. Values in no class (not aliased by anything) have no class: only
 *     values that are the input or output of a must-alias edge do.
 *  5. Class i here is class i of st->out->classes (same order).
 *  6. The forest outlives the check: the analysis keeps it (check/analysis.h)
 *     and the runtime reads it; its queries are check/alias.c's.
 */
#ifndef OAC_ALIAS_H
#define OAC_ALIAS_H

#include "check/graph.h"

typedef struct oac_aclass {
    size_t index;                  /* in aliases->classes and out->classes */
    oac_scope *scope;
    oac_value *root;
    oac_value **members;           /* root first, topological order */
    size_t n_members;
    bool read_write;               /* root is a READ_WRITE graph input */
} oac_aclass;

typedef enum oac_edge_kind {
    OAC_EDGE_NONE = 0, OAC_EDGE_PORT = 1, OAC_EDGE_BRANCH = 2,
    OAC_EDGE_CARRIED = 3
} oac_edge_kind;

typedef struct oac_aliases {
    oac_ctx *ctx;
    oac_aclass *classes;
    size_t n_classes;
    size_t n_values;
    /* The alias forest (invariant 2) holds only the values a must-alias
     * edge touches (a model's caches, not its thousands of temporaries),
     * numbered from 1 in value id order: fid[v->id] is v's number, 0 for
     * a value no edge touches (its own root, with no parent, children or
     * class).  The arrays below are by that number, entry 0 unused; read
     * them through the accessors below.  While check/alias_classes.c builds
     * the forest, fid is NULL and a value's number is its id + 1. */
    uint32_t *fid;
    size_t n_forest;               /* numbers 1 .. n_forest */
    oac_value **value;             /* the value of a number */
    oac_value **parent;            /* the value whose storage it reuses */
    uint8_t *edge;                 /* oac_edge_kind of that link */
    oac_value **root;              /* its root (itself when no parent);
                                      NULL when on a cycle */
    size_t *child_start;           /* children of f: children[child_start[f]
                                      .. child_start[f+1]) */
    oac_value **children;
    size_t *tin, *tout;            /* preorder interval: a is an ancestor of
                                      b iff tin[a] <= tin[b] < tout[a] */
    long *class_of;                /* class index or -1 */
    oac_value **member_block;      /* storage of every class's members */
} oac_aliases;

/* v's number in the forest, 0 when no must-alias edge touches it. */
static inline size_t oac_alias_ix(const oac_aliases *al, const oac_value *v)
{
    return al->fid ? al->fid[v->id] : v->id + 1;
}

static inline oac_value *oac_alias_parent(const oac_aliases *al,
                                          const oac_value *v)
{
    return al->parent[oac_alias_ix(al, v)];
}

static inline oac_edge_kind oac_alias_edge(const oac_aliases *al,
                                           const oac_value *v)
{
    return (oac_edge_kind)al->edge[oac_alias_ix(al, v)];
}

/* v's root; NULL when v is on a link cycle. */
static inline oac_value *oac_alias_root(const oac_aliases *al,
                                        const oac_value *v)
{
    size_t f = oac_alias_ix(al, v);
    return f ? al->root[f] : (oac_value *)v;
}

/* The values whose storage reuses v's, in execution order (*n of them). */
static inline oac_value **oac_alias_children(const oac_aliases *al,
                                             const oac_value *v, size_t *n)
{
    size_t f = oac_alias_ix(al, v);
    *n = f ? al->child_start[f + 1] - al->child_start[f] : 0;
    return f ? al->children + al->child_start[f] : NULL;
}

/* Does value v (a node output) overwrite the storage of the value it
 * must-aliases?  Returns that input value, or NULL. */
oac_value *oac_value_aliased_input(const oac_value *v);

/* The value whose storage v reuses through any resolved must-alias edge
 * (port, If branch, Loop/Scan carried value), or NULL: a node output
 * without one is a buffer of its own.  The one rule check/plan.c and the
 * runtime both follow.  Without a forest (al NULL, or no edges), the
 * resolved output_alias port alone.  Inline: the plan asks per output. */
static inline oac_value *oac_storage_parent(const oac_aliases *al, const oac_value *v)
{
    if (!v)
        return NULL;
    if (al && al->parent && v->id < al->n_values)
        return oac_alias_parent(al, v);
    return oac_value_aliased_input(v);
}

/* Is a the same value as b, or does b (transitively) reuse a's storage? */
bool oac_alias_reaches(const oac_aliases *al, const oac_value *a,
                       const oac_value *b);
/* The node that writes parent(v) in place to make v: the producer for
 * PORT and BRANCH links, the Loop/Scan node for CARRIED links. */
bool oac_alias_writer(const oac_aliases *al, const oac_value *v,
                      oac_scope **scope, long *node);

void oac_aliases_free(oac_aliases *a);

/* The class of v, or NULL (v in no alias class). */
const oac_aclass *oac_value_class(const oac_aliases *a, const oac_value *v);

struct oac_shapes;
struct oac_vshape;
/* Complete public class k of analysis a (made by the classes pass) with
 * the type its members unify to (m, merged by the shapes pass over
 * store sh): elem_type, rank, dims, dim_params (in the analysis's arena)
 * and bytes when known.  OAC_ENOMEM only. */
int oac_class_complete(oac_analysis *a, size_t k, const struct oac_shapes *sh,
                       const struct oac_vshape *m);

/* The input port that output port `out` of node i of s must-aliases after
 * the ports pass, or -1: a valid MUST_ALIAS output_alias entry (in range,
 * not omitted, not a duplicate) or, for a call of a local function, the
 * function's alias_of on that output naming one of its inputs. */
int oac_node_alias_in(const oac_scope *s, long i, size_t out);

/* Does np state an output_alias entry for output `out` and input `in`, of
 * any kind (a broken one is the ports pass's finding, not a missing
 * declaration)?  An absent index is 0, as protobuf reads it. */
bool oac_node_states_alias(const Onnx__NodeProto *np, int out, int in);


/* Where the alias chain of bo (an output of branch scope br) leaves the
 * branch: bo itself when it is an outer value, the first outer value up
 * its chain otherwise, NULL when the chain ends inside the branch.
 * *updated: bo is defined inside the branch and reaches an outer value,
 * i.e. the branch updates that value in place. */
oac_value *oac_branch_exit(const oac_aliases *al, const oac_scope *br,
                           oac_value *bo, bool *updated);

/* Root kind as the rules see it. */
typedef enum oac_root_kind {
    OAC_ROOT_READ_WRITE_INPUT = 0,
    OAC_ROOT_READ_ONLY_INPUT = 1,
    OAC_ROOT_INITIALIZER = 2,    /* initializer (also one that is an input) */
    OAC_ROOT_CONSTANT = 3,       /* output of a Constant node */
    OAC_ROOT_TEMPORARY = 4       /* another node output */
} oac_root_kind;
oac_root_kind oac_value_root_kind(const oac_value *root);

#endif /* OAC_ALIAS_H */

/* check/graph.h: the graph index every pass of the checker walks.
 *
 * Owns: scopes (the main graph, every subgraph held by a graph-valued
 * attribute of any node, every local function body), their nodes in file
 * order, the values each scope defines, producers, consumers, outer-scope
 * resolution and the locations and display names diagnostics use.
 * Contract: section 3 ("Details the rules rely on": scopes of If/Loop/Scan
 * bodies, outer names, local functions).  Built by oac_pass_graph
 * (check/graph.c), read-only afterwards.
 *
 * Invariants:
 *  1. Scopes are stored parents first: scopes[0] is the main graph (when
 *     the model has one), a subgraph comes after the scope holding its
 *     owner node, function bodies come after every graph scope (in
 *     ModelProto.functions order, each followed by its own subgraphs).
 *  2. A value is defined once per scope (first definition wins: input,
 *     then initializer, then node outputs in file order); names are
 *     borrowed from the parsed model, never copied.
 *  3. value->id is dense over all scopes (0 .. graphs->n_values-1), so a
 *     pass keeps per-value facts in a plain array.  A scope's values have
 *     consecutive ids, increasing with the scope's index (each scope
 *     defines its values before any scope after it is listed).
 *  4. Uses live in the value's own scope.  A read of an outer name inside
 *     a subgraph is an implicit use (port -1) by the node of the value's
 *     scope that holds the subgraph, because for ordering and hazards it
 *     belongs to that enclosing node; every enclosing node on the way
 *     lists the value in outer_reads.  A subgraph output naming an outer
 *     value counts as such a read.
 *  5. Nesting is bounded by OAC_MAX_DEPTH: scopes of depth 0 to
 *     OAC_MAX_DEPTH are indexed (the runtime runs bodies that deep); a
 *     deeper subgraph is not, and the scope that holds it is marked
 *     truncated.
 *  6. Everything is linear in the size of the model: lookups go through
 *     strmap.c's maps, no pass scans a scope per value.
 *  7. A scope has at most INT32_MAX nodes, inputs, outputs and
 *     initializers and fewer than 2^30 node ports (a larger one is
 *     refused: its file would pass 2 GB), so indices and counts in
 *     values, nodes and uses are 32-bit, a use's port 31.
 */
#ifndef OAC_GRAPH_H
#define OAC_GRAPH_H

#include "check/checker.h"

struct oac_op;        /* ops.h */
struct oac_scope;

typedef enum oac_scope_kind {
    OAC_SCOPE_MAIN = 0,      /* ModelProto.graph */
    OAC_SCOPE_SUBGRAPH = 1,  /* a graph-valued attribute (g or graphs[i]) */
    OAC_SCOPE_FUNCTION = 2   /* a FunctionProto body */
} oac_scope_kind;

typedef enum oac_value_kind {
    OAC_VAL_INPUT = 0,       /* graph input / function input */
    OAC_VAL_INITIALIZER = 1, /* initializer that is not also an input */
    OAC_VAL_NODE_OUTPUT = 2  /* output of a node of the scope */
} oac_value_kind;

/* One read of a value.  port >= 0: NodeProto.input[port] of node `node`
 * of the scope the use is listed in.  port == -1: an implicit read, a
 * subgraph of node `node` reads the name as an outer value. */
typedef struct oac_use {
    int32_t node;                  /* a scope has at most INT32_MAX nodes */
    int32_t port : 31;             /* and fewer than 2^30 ports (invariant 7) */
    /* port -1 only: every read inside the subgraphs is by an operator
     * that reads no storage (Shape, Size).  A bit: a use is 8 bytes. */
    bool meta_only : 1;
} oac_use;

/* Counts and indices are 32-bit (check/graph.c refuses a scope of more than
 * INT32_MAX nodes, invariant 7) and the fields are ordered without padding:
 * a large model has tens of thousands of values, all live at once. */
typedef struct oac_value {
    const char *name;
    struct oac_scope *scope;       /* scope that defines it */
    /* Reads in the defining scope, file order of nodes (invariant 4).
     * Owned by the scope (its uses_block), never freed on its own. */
    oac_use *uses;
    /* Declaration: graph input, output, or value_info, in that order of
     * preference (FunctionProto.value_info for functions), as 1 + its
     * index in scope->vinfos; 0 when not declared.  Read through
     * oac_value_vi and oac_value_vi_loc; its type and the initializer are
     * oac_value_type and oac_value_init. */
    uint32_t decl;
    uint32_t id;                   /* dense over all scopes (invariant 3) */
    uint32_t n_uses;
    int32_t input_index;           /* port in graph/function input, or -1 */
    int32_t init_index;            /* index in GraphProto.initializer, or -1 */
    int32_t output_index;          /* first index in graph/function output, or -1 */
    int32_t producer;              /* node index in scope, or -1 */
    int32_t port;                  /* producer's output port, or -1 */
    oac_value_kind kind : 8;       /* a byte, so the struct is 64 bytes */
} oac_value;

/* What few nodes have (NULL ext for the others): a called local
 * function, subgraphs, and the outer values those read. */
typedef struct oac_node_ext {
    struct oac_scope *callee;      /* called local function, or NULL */
    /* Subgraphs held by its attributes (scopes owned by graphs). */
    struct oac_scope **subgraphs;
    /* Outer values (of any enclosing scope) read by its subgraphs,
     * transitively, each once. */
    oac_value **outer_reads;
    uint32_t n_subgraphs;
    uint32_t n_outer_reads;        /* room grows in powers of two from 4 */
    /* An If whose branches were found to disagree (branch-mismatch, set
     * by check/branches.c): its branches' in-place writes are not counted
     * again by the hazards pass (no cascades). */
    bool branch_mismatch;
} oac_node_ext;

/* alias_in of a port whose output_alias section 6 refused: no alias, and
 * nothing that follows only from that (alias_of on the output) is
 * reported again. */
#define OAC_ALIAS_REFUSED (-3)

typedef struct oac_node {
    const Onnx__NodeProto *proto;
    const char *display;           /* node name, or "#<index>" */
    const struct oac_op *op;       /* operator table row, or NULL */
    /* Read through oac_node_x: most nodes have none, and a model has
     * tens of thousands of nodes, all live at once. */
    oac_node_ext *ext;
    /* Resolved must-alias per output port: the input port, or -1
     * (OAC_ALIAS_REFUSED: a declared pair section 6 refused, reported as
     * alias-unsupported; it aliases nothing either).  Filled by the ports
     * pass (check/alias_rules.c), in the scope's alias_block; NULL before it. */
    int *alias_in;
    /* What oac_node_input and oac_node_output return, per port, resolved
     * once while the index is built: n_input entries, then the n_output
     * entries of the outputs, in the scope's ports block. */
    oac_value **in_vals;
    /* proto->n_input, proto->n_output (fewer than 2^30 ports a scope,
     * invariant 7) and whether it has output_alias entries and
     * metadata_props: the passes that walk every node read these, not
     * the proto, whose first touch is a cache miss a node. */
    uint32_t n_in;
    uint32_t n_out : 30;
    uint32_t declares_alias : 1;
    uint32_t has_metadata : 1;
} oac_node;

/* The node's ext, or an empty one (no callee, subgraphs or outer reads). */
static inline const oac_node_ext *oac_node_x(const oac_node *n)
{
    static const oac_node_ext none = { 0 };
    return n->ext ? n->ext : &none;
}

typedef struct oac_scope {
    oac_scope_kind kind;
    size_t index;                  /* in graphs->scopes */
    const char *name;              /* graph name, or function name */
    const char *loc;               /* "/graph", "/graph/node/3/attribute/0/g",
                                      "/graph/node/1/attribute/0/graphs/2",
                                      "/functions/1" */
    struct oac_scope *parent;      /* enclosing scope of a subgraph, else NULL */
    long owner_node;               /* node in parent holding it, or -1 */
    long owner_attr;               /* AttributeProto index in that node, or -1 */
    const char *attr_name;         /* then_branch, body, ... or NULL */
    int depth;                     /* 0 for main graph and function bodies */
    bool truncated;                /* a nested graph beyond OAC_MAX_DEPTH */
    bool has_ext;                  /* a node of it has an ext */
    bool listed;                   /* in graphs->scopes (owned through it) */
    const Onnx__GraphProto *graph; /* NULL for a function */
    const Onnx__FunctionProto *func;/* NULL for a graph */
    /* Imports in force: the model's, or the function's own list. */
    bool imports_alias;            /* domain onnx_alias imported */

    Onnx__NodeProto *const *node_protos;
    size_t n_nodes;
    oac_node *nodes;               /* n_nodes entries */

    /* Interface, in port order.  A name may be NULL/"" (omitted) and the
     * value may be NULL (an output nothing defines).  A subgraph output
     * may be an outer value (returned as it is). */
    const char **input_names;
    oac_value **inputs;
    size_t n_inputs;
    const char **output_names;
    oac_value **outputs;
    size_t n_outputs;

    /* Every ValueInfoProto of the scope (input, output, value_info), in
     * that order, with its location; value is the one it names in this
     * scope (NULL when none). */
    struct oac_vinfo *vinfos;
    size_t n_vinfos;
    /* For each output port, its declaration: the GraphProto.output entry,
     * or for a function the value_info entry of that name (else NULL). */
    const Onnx__ValueInfoProto **output_vis;
    const char **output_vi_locs;

    /* The values defined here, in definition order (owned); their ids
     * are first_id .. first_id + n_values - 1. */
    oac_value *values_block;
    size_t n_values;
    size_t first_id;
    oac_strindex by_name;          /* name -> its entry of values_block */
    oac_use *uses_block;           /* storage of the values' uses (owned) */
    oac_value **ports_block;       /* storage of nodes' in_vals and outputs (owned) */
    int *alias_block;              /* storage of nodes' alias_in, set by the
                                      ports pass (owned; NULL before it) */

    /* Call sites of a function body: (scope, node) pairs, file order of
     * scopes.  Empty for graphs. */
    struct oac_callsite *calls;
    size_t n_calls;
    size_t cap_calls;
} oac_scope;

typedef enum oac_vi_field {
    OAC_VI_INPUT = 0, OAC_VI_OUTPUT = 1, OAC_VI_VALUE_INFO = 2
} oac_vi_field;

typedef struct oac_vinfo {
    const Onnx__ValueInfoProto *vi;
    oac_vi_field field;
    size_t index;                  /* in that repeated field */
    const char *loc;               /* "/graph/output/0", "/functions/1/value_info/2" */
    oac_value *value;              /* named value defined in the scope, or NULL */
} oac_vinfo;

typedef struct oac_callsite {
    oac_scope *scope;
    long node;
} oac_callsite;

typedef struct oac_graphs {
    oac_ctx *ctx;
    const Onnx__ModelProto *model;
    oac_scope **scopes;            /* invariant 1 */
    size_t n_scopes;
    size_t n_values;               /* ids are 0 .. n_values-1 */
    /* The values of scopes[0] (ids 0 .. n_values0-1): most models have
     * one scope, and oac_graphs_value finds them without a search. */
    oac_value *values0;
    size_t n_values0;
    oac_scope **functions;         /* ModelProto.functions order; NULL entry
                                      for a duplicate (domain, name) */
    size_t n_functions;
    oac_strmap func_by_key;        /* "domain\x1fname" -> oac_scope* */
    char **keys;                   /* owned strings of func_by_key */
    bool model_imports_alias;
} oac_graphs;

/* Build and free the index (check/graph.c; oac_pass_graph stores it in
 * st->graphs). */
int oac_graphs_build(oac_ctx *ctx, oac_graphs **out,
                     const Onnx__ModelProto *model);
void oac_graphs_free(oac_graphs *g);

/* The value `name` visible in scope s: defined in s or, for subgraphs, in
 * an enclosing scope (innermost first).  NULL when none; "" is never a
 * value.  *outer (may be NULL) is set when it comes from an enclosing
 * scope. */
oac_value *oac_scope_lookup(const oac_scope *s, const char *name,
                            bool *outer);
/* Only the values defined in s itself. */
oac_value *oac_scope_local(const oac_scope *s, const char *name);

/* Node i of s; NULL when out of range. */
static inline oac_node *oac_scope_node(const oac_scope *s, long i)
{
    return (i >= 0 && (size_t)i < s->n_nodes) ? &s->nodes[i] : NULL;
}

/* Lookups for a node whose ports are not resolved (check/graph.c). */
oac_value *oac_node_input_slow(const oac_scope *s, long i, size_t port);
oac_value *oac_node_output_slow(const oac_scope *s, long i, size_t port);

/* The value read at input port `port` of node i (NULL for an omitted
 * optional input or an unknown name).  Inline: every pass calls it per
 * port, and build_scope resolved it already (in_vals). */
static inline oac_value *oac_node_input(const oac_scope *s, long i,
                                        size_t port)
{
    oac_node *n = oac_scope_node(s, i);
    if (!n || !n->in_vals)
        return n ? oac_node_input_slow(s, i, port) : NULL;
    return port < n->n_in ? n->in_vals[port] : NULL;
}

/* The value defined by output port `port` of node i (NULL when omitted). */
static inline oac_value *oac_node_output(const oac_scope *s, long i,
                                         size_t port)
{
    oac_node *n = oac_scope_node(s, i);
    if (!n || !n->in_vals)
        return n ? oac_node_output_slow(s, i, port) : NULL;
    return port < n->n_out ? n->in_vals[n->n_in + port] : NULL;
}

/* The value whose id is id (< g->n_values): the last scope whose ids
 * start at or before it holds it (invariant 3), found by bisection past
 * the first scope, so the index keeps no table of all values. */
static inline oac_value *oac_graphs_value(const oac_graphs *g, size_t id)
{
    if (id < g->n_values0)
        return &g->values0[id];
    size_t lo = 0, hi = g->n_scopes;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->scopes[mid]->first_id <= id)
            lo = mid;
        else
            hi = mid;
    }
    const oac_scope *s = g->scopes[lo];
    return &s->values_block[id - s->first_id];
}

/* The declaration of v (oac_value.decl), or NULL. */
static inline const Onnx__ValueInfoProto *oac_value_vi(const oac_value *v)
{
    return v->decl ? v->scope->vinfos[v->decl - 1].vi : NULL;
}

/* Its location ("/graph/input/0"), or NULL when not declared. */
static inline const char *oac_value_vi_loc(const oac_value *v)
{
    return v->decl ? v->scope->vinfos[v->decl - 1].loc : NULL;
}

/* The declared type of v (its vi's), or NULL. */
static inline const Onnx__TypeProto *oac_value_type(const oac_value *v)
{
    const Onnx__ValueInfoProto *vi = oac_value_vi(v);
    return vi ? vi->type : NULL;
}

/* Is v in GraphProto.initializer (also when it is a graph input)? */
static inline bool oac_value_is_initializer(const oac_value *v)
{
    return v->init_index >= 0;
}

/* The initializer of v (GraphProto.initializer[init_index]), or NULL. */
static inline const Onnx__TensorProto *oac_value_init(const oac_value *v)
{
    return v->init_index >= 0 ? v->scope->graph->initializer[v->init_index]
                              : NULL;
}

/* The subgraph of node n held by its attribute `name` (then_branch,
 * body, ...), or NULL. */
oac_scope *oac_node_subgraph(const oac_node *n, const char *name);

/* The local function a node calls, by (domain, op_type); NULL if none. */
oac_scope *oac_graphs_function(const oac_graphs *g, const char *domain,
                               const char *name);

/* Report a finding in scope s.  In a function body the finding is
 * repeated once per call site (contract 3: "findings inside a function
 * are reported once per call site"), its message followed by
 * " (in function 'F' called by node 'N' of graph 'G')"; an uncalled
 * function reports it once.  where->graph defaults to s->name. */
int oac_scope_diag(oac_check_state *st, const oac_scope *s, oac_code code,
                   const oac_where *where, const char *fmt, ...)
    OAC_PRINTF(5, 6);

/* The location of node i of s ("/graph/node/3"), then fmt (NULL for
 * nothing) formatted, in buf (cut to buflen as snprintf cuts); returns
 * buf.  Made on demand: a report needs a few, a model has many nodes. */
const char *oac_node_loc(char *buf, size_t buflen, const oac_scope *s,
                         long i, const char *fmt, ...) OAC_PRINTF(5, 6);

/* Convenience: a where for node i of s (graph, node, op_type, location =
 * node loc + suffix, e.g. "/output_alias/0"; suffix may be NULL) and a
 * value name.  The location string is written into buf. */
oac_where oac_where_node(const oac_scope *s, long i, const char *value,
                         const char *suffix, char *buf, size_t buflen);

#endif /* OAC_GRAPH_H */

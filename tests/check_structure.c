/* check_structure.c: lib/check/structure.c — model-invalid (contract 8): a
 * node without op_type, unnamed and duplicate inputs, outputs and
 * initializers in every kind of scope, inline payloads that are not
 * their element count times their element size, a read of a name nothing
 * defines, a value defined twice, and a graph, branch or function output
 * nothing defines; each beside the model that differs by what makes it
 * valid.  (tests/cli_hostile.sh runs the
 * same reproducers through the command line, where `run` refuses them.)
 */
#include "harness.h"

/* x FLOAT[2] -> Neg -> y. */
static oac_gb *neg_graph(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "Neg", NULL, "neg", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
    return g;
}

/* ---- op_type ---------------------------------------------------------- */

static void op_main(oac_mb *mb, const char *op)
{
    oac_gb *g = neg_graph(mb);
    oac_gb_node(g, "Identity", NULL, "copy", "y", "z")->op_type = (char *)op;
    oac_gb_output(g, "z", OAC_T_FLOAT, "2");
}
static void noop_main(oac_mb *mb) { op_main(mb, ""); }
static void noop_main_null(oac_mb *mb) { op_main(mb, NULL); }
static void op_main_ok(oac_mb *mb) { op_main(mb, "Identity"); }

/* In a Loop body (a subgraph scope). */
static void op_loop(oac_mb *mb, const char *op, bool unnamed_input)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    int64_t two = 2;
    oac_gb_init_i64(g, "trips", "", &two, 1);
    Onnx__NodeProto *n = oac_gb_node(g, "Loop", NULL, "loop", "trips,,x", "z");
    oac_gb *b = oac_node_attr_graph(g, n, "body", "body_g");
    oac_gb_input(b, "i", OAC_T_INT64, "");
    oac_gb_input(b, "cond_in", OAC_T_BOOL, "");
    /* The body's own x: a name of the main graph again, in another scope,
     * is no duplicate. */
    oac_gb_input(b, unnamed_input ? "" : "x", OAC_T_FLOAT, "2");
    oac_gb_node(b, "Identity", NULL, "keep", "cond_in", "cond_out");
    oac_gb_node(b, "Neg", NULL, "body_neg", "x", "x_out")->op_type = (char *)op;
    oac_gb_output(b, "cond_out", OAC_T_BOOL, "");
    oac_gb_output(b, "x_out", OAC_T_FLOAT, "2");
    oac_gb_output(g, "z", OAC_T_FLOAT, "2");
}
static void noop_loop(oac_mb *mb) { op_loop(mb, "", false); }
static void op_loop_ok(oac_mb *mb) { op_loop(mb, "Neg", false); }
static void unnamed_body_input(oac_mb *mb) { op_loop(mb, "Neg", true); }

/* In a local function called once. */
static void op_function(oac_mb *mb, const char *op, bool dup_input)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "F", "a,b", "r");
    oac_gb_node(f, "Add", NULL, "fadd", "a,b", "r")->op_type = (char *)op;
    if (dup_input)
        oac_gb_function(f)->input[1] = (char *)"a";
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "F", "local", "call", "x,x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
}
static void noop_function(oac_mb *mb) { op_function(mb, "", false); }
static void op_function_ok(oac_mb *mb) { op_function(mb, "Add", false); }
static void dup_function_input(oac_mb *mb) { op_function(mb, "Add", true); }

/* Local functions F and G, the main graph calling F.  F's body calls
 * `f_calls` (F itself, G, or Add), G's calls `g_calls` (F: a cycle
 * through two functions; Add: none).  ONNX forbids recursion. */
static void calls(oac_mb *mb, const char *f_calls, const char *g_calls)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "F", "a", "r");
    oac_gb_node(f, f_calls, strcmp(f_calls, "Add") ? "local" : NULL, "f_inner", "a,a", "r");
    oac_gb *gf = oac_mb_function(mb, "local", "G", "a", "r");
    oac_gb_node(gf, g_calls, strcmp(g_calls, "Add") ? "local" : NULL, "g_inner", "a,a", "r");
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "F", "local", "call", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
}
static void self_recursive(oac_mb *mb) { calls(mb, "F", "Add"); }
static void mutual_recursive(oac_mb *mb) { calls(mb, "G", "F"); }
static void calls_acyclic(oac_mb *mb) { calls(mb, "G", "Add"); }

/* ---- definitions ------------------------------------------------------ */

/* neg_graph and node copy reading `in` and defining `out`. */
static void copy_main(oac_mb *mb, const char *in, const char *out)
{
    oac_gb *g = neg_graph(mb);
    oac_gb_node(g, "Identity", NULL, "copy", in, out);
    oac_gb_output(g, "z", OAC_T_FLOAT, "2");
}
/* A read of a name nothing defines. */
static void undefined_read(oac_mb *mb) { copy_main(mb, "nowhere", "z"); }
/* An output redefining the graph input x (z: the graph output, never
 * produced then, a second finding). */
static void twice_defined(oac_mb *mb) { copy_main(mb, "y", "x"); }

/* If whose then branch returns `ret`: its node's "ty", the main graph's
 * "y" (an outer value, returned as it is) or "tz" (nothing). */
static void if_return(oac_mb *mb, const char *ret)
{
    oac_gb *g = neg_graph(mb);
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "branch", "cond", "z");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then_g");
    oac_gb_node(t, "Identity", NULL, "then_copy", "y", "ty");
    oac_gb_output(t, ret, OAC_T_FLOAT, "2");
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else_g");
    oac_gb_node(e, "Neg", NULL, "else_neg", "y", "ey");
    oac_gb_output(e, "ey", OAC_T_FLOAT, "2");
    oac_gb_output(g, "z", OAC_T_FLOAT, "2");
}
static void branch_unproduced(oac_mb *mb) { if_return(mb, "tz"); }
static void branch_produced(oac_mb *mb) { if_return(mb, "ty"); }
static void branch_outer(oac_mb *mb) { if_return(mb, "y"); }

/* A local function whose second output nothing in its body defines. */
static void function_unproduced(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "F", "a,b", "r,s");
    oac_gb_node(f, "Add", NULL, "fadd", "a,b", "r");
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "F", "local", "call", "x,x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
}

/* ---- names ------------------------------------------------------------ */

/* A dense cache updated in place, and one more input `extra` named name. */
static void cache_and(oac_mb *mb, const char *name, int access)
{
    oac_gb *g = cu_cache_graph(mb);
    cu_update(g, "update", "cache", "updated", true);
    cu_output_alias(g, "updated", "cache");
    Onnx__ValueInfoProto *vi = cu_cache_input(g, "extra", access);
    vi->name = (char *)name;
}
static void unnamed_input(oac_mb *mb) { cache_and(mb, "", -1); }
static void named_input(oac_mb *mb) { cache_and(mb, "extra", -1); }
static void dup_rw_input(oac_mb *mb) { cache_and(mb, "cache", 1); }
static void other_rw_input(oac_mb *mb) { cache_and(mb, "cache2", 1); }

static void inits(oac_mb *mb, const char *second, bool also_input)
{
    float v[2] = { 1, 2 };
    oac_gb *g = neg_graph(mb);
    if (also_input)
        oac_gb_input(g, "w", OAC_T_FLOAT, "2");
    oac_gb_init_f32(g, "w", "2", v, 2);
    if (second)
        oac_gb_init_f32(g, "w2", "2", v, 2)->name = (char *)second;
}
static void unnamed_init(oac_mb *mb) { inits(mb, "", false); }
static void dup_init(oac_mb *mb) { inits(mb, "w", false); }
static void two_inits(oac_mb *mb) { inits(mb, "w2", false); }
/* An initializer named like a graph input is its default. */
static void init_default(oac_mb *mb) { inits(mb, NULL, true); }

/* Graph input x declared `decl` (FLOAT) with an initializer default of
 * type `type` and dims `dims`. */
static void input_default(oac_mb *mb, const char *decl, int32_t type, const char *dims)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, decl);
    int64_t v[3] = { 1, 2, 3 };
    if (type == OAC_T_INT64)
        oac_gb_init_i64(g, "x", dims, v, strcmp(dims, "3") ? 2 : 3);
    else {
        float f[3] = { 1, 2, 3 };
        oac_gb_init_f32(g, "x", dims, f, strcmp(dims, "3") ? 2 : 3);
    }
    oac_gb_node(g, "Neg", NULL, "neg", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, decl);
}
static void default_other_type(oac_mb *mb) { input_default(mb, "2", OAC_T_INT64, "2"); }
static void default_other_dims(oac_mb *mb) { input_default(mb, "2", OAC_T_FLOAT, "3"); }
static void default_other_rank(oac_mb *mb) { input_default(mb, "2", OAC_T_FLOAT, "1,2"); }
static void default_same(oac_mb *mb) { input_default(mb, "2", OAC_T_FLOAT, "2"); }
/* A dim_param takes the initializer's size. */
static void default_symbolic(oac_mb *mb) { input_default(mb, "N", OAC_T_FLOAT, "3"); }

static void outputs(oac_mb *mb, const char *second)
{
    oac_gb *g = neg_graph(mb);
    oac_gb_node(g, "Identity", NULL, "copy", "y", "y2");
    oac_gb_output(g, "y2", OAC_T_FLOAT, "2")->name = (char *)second;
}
static void unnamed_output(oac_mb *mb) { outputs(mb, ""); }
static void dup_output(oac_mb *mb) { outputs(mb, "y"); }
static void two_outputs(oac_mb *mb) { outputs(mb, "y2"); }

/* ---- payloads --------------------------------------------------------- */

/* y = Add(x, w), w FLOAT[4] from len bytes of raw_data. */
static void raw(oac_mb *mb, size_t len)
{
    float v[5] = { 1, 2, 3, 4, 5 };
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    oac_gb_init_raw(g, "w", OAC_T_FLOAT, "4", v, len);
    oac_gb_node(g, "Add", NULL, "add", "x,w", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "4");
}
static void raw_short(oac_mb *mb) { raw(mb, 12); }
static void raw_long(oac_mb *mb) { raw(mb, 20); }
static void raw_exact(oac_mb *mb) { raw(mb, 16); }

/* A FLOAT[32] initializer from len bytes of raw_data, or from n of 32
 * float_data values: over the loader's threshold, so the payload stays in
 * the file as an unknown field (lib/model/decode.h) and is measured there. */
static void big(oac_mb *mb, size_t len, size_t n)
{
    float v[40] = { 0 };
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "32");
    if (len)
        oac_gb_init_raw(g, "w", OAC_T_FLOAT, "32", v, len);
    else
        oac_gb_init_f32(g, "w", "32", v, 32)->n_float_data = n;
    oac_gb_node(g, "Add", NULL, "add", "x,w", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "32");
}
static void big_raw_short(oac_mb *mb) { big(mb, 124, 0); }
static void big_raw_long(oac_mb *mb) { big(mb, 160, 0); }
static void big_raw_exact(oac_mb *mb) { big(mb, 128, 0); }
static void big_floats_short(oac_mb *mb) { big(mb, 0, 31); }
static void big_floats_exact(oac_mb *mb) { big(mb, 0, 32); }

/* float_data with n of 4 values. */
static void floats(oac_mb *mb, size_t n)
{
    float v[4] = { 1, 2, 3, 4 };
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    oac_gb_init_f32(g, "w", "4", v, 4)->n_float_data = n;
    oac_gb_node(g, "Add", NULL, "add", "x,w", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "4");
}
static void floats_short(oac_mb *mb) { floats(mb, 3); }
static void floats_exact(oac_mb *mb) { floats(mb, 4); }

/* INT64[3] with n int64_data values (varints). */
static void ints(oac_mb *mb, size_t n)
{
    int64_t v[3] = { 1, 2, 3 };
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_INT64, "3");
    oac_gb_init_i64(g, "w", "3", v, 3)->n_int64_data = n;
    oac_gb_node(g, "Add", NULL, "add", "x,w", "y");
    oac_gb_output(g, "y", OAC_T_INT64, "3");
}
static void ints_short(oac_mb *mb) { ints(mb, 2); }
static void ints_exact(oac_mb *mb) { ints(mb, 3); }

/* A FLOAT[4] initializer that stores its values in int64_data, the field
 * of another type: its own field holds nothing. */
static void wrong_field(oac_mb *mb)
{
    ints(mb, 3);
    Onnx__TensorProto *t = oac_gb_proto(oac_mb_graph(mb))->initializer[0];
    t->data_type = OAC_T_FLOAT;
}

/* A Constant whose value holds len of 16 bytes, in a Loop body. */
static void constant_in_body(oac_mb *mb, size_t len)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    int64_t two = 2;
    oac_gb_init_i64(g, "trips", "", &two, 1);
    Onnx__NodeProto *n = oac_gb_node(g, "Loop", NULL, "loop", "trips,,x", "z");
    oac_gb *b = oac_node_attr_graph(g, n, "body", "body_g");
    oac_gb_input(b, "i", OAC_T_INT64, "");
    oac_gb_input(b, "cond_in", OAC_T_BOOL, "");
    oac_gb_input(b, "x_in", OAC_T_FLOAT, "4");
    oac_gb_node(b, "Identity", NULL, "keep", "cond_in", "cond_out");
    float v[4] = { 1, 2, 3, 4 };
    Onnx__TensorProto *t = oac_gb_tensor_raw(b, "cv", OAC_T_FLOAT, "4", v, len);
    oac_node_attr_tensor(b, oac_gb_node(b, "Constant", NULL, "k", NULL, "c"), "value", t);
    oac_gb_node(b, "Add", NULL, "body_add", "x_in,c", "x_out");
    oac_gb_output(b, "cond_out", OAC_T_BOOL, "");
    oac_gb_output(b, "x_out", OAC_T_FLOAT, "4");
    oac_gb_output(g, "z", OAC_T_FLOAT, "4");
}
static void constant_short(oac_mb *mb) { constant_in_body(mb, 8); }
static void constant_exact(oac_mb *mb) { constant_in_body(mb, 16); }

/* A STRING[2] Constant with n strings. */
static void strings(oac_mb *mb, size_t n)
{
    oac_gb *g = oac_mb_graph(mb);
    Onnx__TensorProto *t = oac_gb_tensor_raw(g, "s", OAC_T_UINT8, "2", "ab", 2);
    t->has_raw_data = 0;
    t->raw_data.len = 0;
    t->raw_data.data = NULL;
    t->data_type = OAC_T_STRING;
    ProtobufCBinaryData *sd = oac_mb_alloc(oac_gb_model(g), 2 * sizeof *sd);
    if (sd) {
        sd[0] = (ProtobufCBinaryData){ 1, (uint8_t *)"a" };
        sd[1] = (ProtobufCBinaryData){ 1, (uint8_t *)"b" };
    }
    t->string_data = sd;
    t->n_string_data = n;
    oac_node_attr_tensor(g, oac_gb_node(g, "Constant", NULL, "k", NULL, "c"), "value", t);
    oac_gb_output(g, "c", OAC_T_STRING, "2");
}
static void strings_short(oac_mb *mb) { strings(mb, 1); }
static void strings_exact(oac_mb *mb) { strings(mb, 2); }

/* An initializer with a negative dimension. */
static void negative_dim(oac_mb *mb)
{
    raw(mb, 16);
    oac_gb_proto(oac_mb_graph(mb))->initializer[0]->dims[0] = -4;
}

/* A sparse initializer whose values hold 4 of 8 bytes (FLOAT[2]). */
static void sparse(oac_mb *mb, size_t len)
{
    oac_gb *g = neg_graph(mb);
    Onnx__GraphProto *gp = oac_gb_proto(g);
    float v[2] = { 1, 2 };
    int64_t at[2] = { 0, 3 };
    Onnx__SparseTensorProto *sp = oac_mb_alloc(oac_gb_model(g), sizeof *sp);
    Onnx__SparseTensorProto **arr = oac_mb_alloc(oac_gb_model(g), sizeof *arr);
    if (!sp || !arr)
        return;
    onnx__sparse_tensor_proto__init(sp);
    sp->values = oac_gb_tensor_raw(g, "sw", OAC_T_FLOAT, "2", v, len);
    sp->indices = oac_gb_tensor_raw(g, "sw_at", OAC_T_INT64, "2", at, sizeof at);
    int64_t *dims = oac_mb_alloc(oac_gb_model(g), sizeof *dims);
    if (dims)
        dims[0] = 4;
    sp->dims = dims;
    sp->n_dims = 1;
    arr[0] = sp;
    gp->sparse_initializer = arr;
    gp->n_sparse_initializer = 1;
}
static void sparse_short(oac_mb *mb) { sparse(mb, 4); }
static void sparse_exact(oac_mb *mb) { sparse(mb, 8); }

static const model_case cases[] = {
    /* op_type: main graph (empty and absent), Loop body, function. */
    { "noop_main", noop_main, WANT(OAC_MODEL_INVALID), NULL, NULL, "/graph/node/1" },
    { "noop_main_null", noop_main_null, WANT(OAC_MODEL_INVALID), NULL, NULL, "/graph/node/1" },
    { "op_main_ok", op_main_ok, NEAR(OAC_MODEL_INVALID) },
    { "noop_loop", noop_loop, WANT(OAC_MODEL_INVALID), NULL, NULL,
      "/graph/node/0/attribute/0/g/node/1" },
    { "op_loop_ok", op_loop_ok, NEAR(OAC_MODEL_INVALID) },
    { "noop_function", noop_function, WANT(OAC_MODEL_INVALID), NULL, NULL,
      "/functions/0/node/0" },
    { "op_function_ok", op_function_ok, NEAR(OAC_MODEL_INVALID) },
    /* Recursion among local functions (issue 18). */
    { "self_recursive", self_recursive, WANT(OAC_MODEL_INVALID), "f_inner", NULL,
      "/functions/0/node/0" },
    { "mutual_recursive", mutual_recursive, WANT(OAC_MODEL_INVALID), NULL, NULL, NULL },
    { "calls_acyclic", calls_acyclic, NEAR(OAC_MODEL_INVALID) },
    /* Names: inputs (also a subgraph's and a function's), initializers,
     * outputs. */
    { "unnamed_input", unnamed_input, WANT(OAC_MODEL_INVALID), NULL, NULL, "/graph/input/3" },
    { "named_input", named_input, NEAR(OAC_MODEL_INVALID) },
    { "dup_rw_input", dup_rw_input, WANT(OAC_MODEL_INVALID), NULL, "cache", "/graph/input/3" },
    { "other_rw_input", other_rw_input, NEAR(OAC_MODEL_INVALID) },
    { "unnamed_body_input", unnamed_body_input, WANT(OAC_MODEL_INVALID), NULL, NULL,
      "/graph/node/0/attribute/0/g/input/2" },
    { "dup_function_input", dup_function_input, WANT(OAC_MODEL_INVALID), NULL, "a",
      "/functions/0/input/1" },
    { "unnamed_init", unnamed_init, WANT(OAC_MODEL_INVALID), NULL, NULL,
      "/graph/initializer/1" },
    { "dup_init", dup_init, WANT(OAC_MODEL_INVALID), NULL, "w", "/graph/initializer/1" },
    { "two_inits", two_inits, NEAR(OAC_MODEL_INVALID) },
    { "init_default", init_default, NEAR(OAC_MODEL_INVALID) },
    { "default_other_type", default_other_type, WANT(OAC_MODEL_INVALID), NULL, "x",
      "/graph/initializer/0" },
    { "default_other_dims", default_other_dims, WANT(OAC_MODEL_INVALID), NULL, "x",
      "/graph/initializer/0" },
    { "default_other_rank", default_other_rank, WANT(OAC_MODEL_INVALID), NULL, "x",
      "/graph/initializer/0" },
    { "default_same", default_same, NEAR(OAC_MODEL_INVALID) },
    { "default_symbolic", default_symbolic, NEAR(OAC_MODEL_INVALID) },
    { "unnamed_output", unnamed_output, WANT(OAC_MODEL_INVALID), NULL, NULL, "/graph/output/1" },
    { "dup_output", dup_output, WANT(OAC_MODEL_INVALID), NULL, "y", "/graph/output/1" },
    { "two_outputs", two_outputs, NEAR(OAC_MODEL_INVALID) },
    /* Payloads. */
    { "raw_short", raw_short, WANT(OAC_MODEL_INVALID), NULL, "w", "/graph/initializer/0" },
    { "raw_long", raw_long, WANT(OAC_MODEL_INVALID), NULL, "w", "/graph/initializer/0" },
    { "raw_exact", raw_exact, NEAR(OAC_MODEL_INVALID) },
    { "big_raw_short", big_raw_short, WANT(OAC_MODEL_INVALID), NULL, "w",
      "/graph/initializer/0" },
    { "big_raw_long", big_raw_long, WANT(OAC_MODEL_INVALID), NULL, "w",
      "/graph/initializer/0" },
    { "big_raw_exact", big_raw_exact, NEAR(OAC_MODEL_INVALID) },
    { "big_floats_short", big_floats_short, WANT(OAC_MODEL_INVALID), NULL, "w",
      "/graph/initializer/0" },
    { "big_floats_exact", big_floats_exact, NEAR(OAC_MODEL_INVALID) },
    { "floats_short", floats_short, WANT(OAC_MODEL_INVALID), NULL, "w", "/graph/initializer/0" },
    { "floats_exact", floats_exact, NEAR(OAC_MODEL_INVALID) },
    { "ints_short", ints_short, WANT(OAC_MODEL_INVALID), NULL, "w", "/graph/initializer/0" },
    { "ints_exact", ints_exact, NEAR(OAC_MODEL_INVALID) },
    { "wrong_field", wrong_field, WANT(OAC_MODEL_INVALID), NULL, "w", "/graph/initializer/0" },
    { "negative_dim", negative_dim, WANT(OAC_MODEL_INVALID), NULL, "w",
      "/graph/initializer/0" },
    { "constant_short", constant_short, WANT(OAC_MODEL_INVALID), "k", "c",
      "/graph/node/0/attribute/0/g/node/1/attribute/0/t" },
    { "constant_exact", constant_exact, NEAR(OAC_MODEL_INVALID) },
    { "strings_short", strings_short, WANT(OAC_MODEL_INVALID), "k", "c",
      "/graph/node/0/attribute/0/t" },
    { "strings_exact", strings_exact, NEAR(OAC_MODEL_INVALID) },
    { "sparse_short", sparse_short, WANT(OAC_MODEL_INVALID), NULL, "sw",
      "/graph/sparse_initializer/0/values" },
    { "sparse_exact", sparse_exact, NEAR(OAC_MODEL_INVALID) },
    /* definitions */
    { "undefined_read", undefined_read, WANT(OAC_MODEL_INVALID), "copy", "nowhere",
      "/graph/node/1/input/0" },
    { "twice_defined", twice_defined, WANT(OAC_MODEL_INVALID), "copy", "x",
      "/graph/node/1/output/0" },
    { "branch_unproduced", branch_unproduced, WANT(OAC_MODEL_INVALID), NULL, "tz",
      "/graph/node/1/attribute/0/g/output/0" },
    { "branch_produced", branch_produced, NEAR(OAC_MODEL_INVALID) },
    { "branch_outer", branch_outer, NEAR(OAC_MODEL_INVALID) },
    { "function_unproduced", function_unproduced, WANT(OAC_MODEL_INVALID), NULL, "s",
      "/functions/0/output/1" },
};
CASES_TEST(cases)

/* The messages say what is wrong and how to mend it. */
START_TEST(test_messages)
{
    static const struct {
        model_fn build;
        const char *text;
    } want[] = {
        { noop_main, "node copy of 'main' has no op_type: set it to the operator" },
        { dup_rw_input, "graph input 'cache' is declared twice in 'main' (input 0 and 3): "
                        "rename one of them" },
        { raw_short, "initializer 'w' (FLOAT[4]) holds 12 bytes of data, but its 4 "
                     "elements need 16: store exactly its elements" },
        { strings_short, "(STRING[2]) holds 1 strings for 2 elements" },
        { noop_function, "(in function 'F' called by node 'call' of graph 'main')" },
        { undefined_read, "node copy of 'main' reads 'nowhere', which no input, "
                          "initializer or node defines" },
        { branch_unproduced, "subgraph output 'tz' of 'then_g' is defined by no node, "
                             "input or initializer (here or in an enclosing graph)" },
        { function_unproduced, "function output 's' of 'F' is defined by no node" },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        fx f;
        fx_check_model(&f, want[i].build);
        ck_assert_uint_eq(diag_count(f.d, OAC_MODEL_INVALID), 1);
        const oac_diag *d = diag_find(f.d, OAC_MODEL_INVALID, NULL, NULL, NULL);
        ck_assert_msg(strstr(d->message, want[i].text), "'%s' lacks '%s'", d->message,
                      want[i].text);
        fx_end(&f);
    }
}
END_TEST

START_TEST(test_no_graph)
{
    /* ir_version 10, opset "" 21 and no graph (fuzz_run found `run`
     * stopping on it as a failure of the tool): model-invalid for check,
     * and run refuses it with the same code, its execution reported. */
    static const uint8_t no_graph[] = { 0x08, 0x0a, 0x42, 0x04, 0x0a, 0x00, 0x10, 0x15 };
    fx f;
    fx_begin(&f);
    ck_assert_int_eq(oac_model_load_buffer(f.ctx, &f.m, no_graph, sizeof no_graph,
                                           "no_graph.onnx", NULL, f.d), OAC_OK);
    ck_assert_int_eq(fx_check(&f, NULL), OAC_OK);
    ck_assert_uint_eq(oac_diags_count(f.d), 1);
    ck_assert_str_eq(diag_expect_run(f.d, OAC_MODEL_INVALID, "model-invalid")->location,
                     "/graph");
    oac_run_opts ro = { .steps = 1 };
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, f.a, &ro, f.d), OAC_OK);
    ck_assert_ptr_nonnull(f.e);
    ck_assert_uint_eq(f.e->steps_completed, 0);
    oac_execution_free(f.e);
    f.e = NULL;
    oac_diags *d = oac_diags_new(f.ctx);
    ck_assert_int_eq(oac_run(f.ctx, &f.e, f.m, NULL, &ro, d), OAC_ERUNTIME);
    ck_assert_ptr_nonnull(f.e);
    ck_assert_uint_eq(oac_diags_count(d), 1);
    ck_assert_int_eq(oac_diags_get(d, 0)->code, OAC_MODEL_INVALID);
    oac_diags_free(d);
    fx_end(&f);
}
END_TEST

/* Every allocation of the pass may fail: OAC_ENOMEM, nothing leaked
 * (the sanitizer build's leak check). */
START_TEST(test_alloc_failures)
{
    bool done = false;
    for (unsigned long n = 1; n < 20000 && !done; n++) {
        fx f;
        fx_build(&f, NULL);
        dup_rw_input(f.mb);
        fx_load(&f);
        oac_ctx_fail_alloc_after(f.ctx, n);
        int rc = fx_check(&f, NULL);
        if (rc == OAC_OK) {
            ck_assert_uint_eq(diag_count(f.d, OAC_MODEL_INVALID), 1);
            done = true;
        } else {
            ck_assert_int_eq(rc, OAC_ENOMEM);
        }
        oac_ctx_fail_alloc_after(f.ctx, 0);
        fx_end(&f);
    }
    ck_assert(done);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("structure");
    TCase *tc = tcase_create("structure");
    tcase_set_timeout(tc, 120);
    ADD_CASES(tc, cases);
    tcase_add_test(tc, test_messages);
    tcase_add_test(tc, test_no_graph);
    tcase_add_test(tc, test_alloc_failures);
    suite_add_tcase(s, tc);
    return s;
}

/* hostile_models.c: writes the reproducers of issue 12 (hostile files)
 * and their clean near-misses, which tests/cli_hostile.sh feeds to the
 * command line.
 *
 *   hostile_models DIR      writes DIR/<name>.onnx for every row below
 *                           (and the external data files some rows use),
 *                           and the --input files x4.pb (FLOAT[4] named
 *                           x, 16 bytes) and x4_short.pb (12 bytes),
 *                           x4_two.pb (raw_data and float_data),
 *                           x4_rank100.pb, x4_passwd.pb (external data
 *                           in /etc/passwd), x4_ext.pb (external data
 *                           x4.bin beside it, 16 bytes)
 *
 * Each broken row breaks one structure every rule and the runtime rely on
 * (contract section 8, model-invalid and external-data-invalid); its
 * near-miss is the same model with that one thing right, so the script
 * can tell the new check from an accident.  Built with the public builder
 * (include/oac_build.h), edited by hand where the builder keeps a model
 * well formed; exit 1 when a model cannot be written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oac_build.h"

static const char *dir;

/* x FLOAT[2] -> Neg -> y: the smallest runnable graph. */
static oac_gb *neg_graph(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "Neg", NULL, "neg", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
    return g;
}

/* ---- a node without op_type -------------------------------------------- */

/* op: the op_type of the node under test ("" breaks it, "Identity" is the
 * near-miss). */
static void op_main(oac_mb *mb, const char *op)
{
    oac_gb *g = neg_graph(mb);
    Onnx__NodeProto *n = oac_gb_node(g, "Identity", NULL, "copy", "y", "z");
    n->op_type = (char *)op;
    oac_gb_output(g, "z", OAC_T_FLOAT, "2");
}
static void noop_main(oac_mb *mb) { op_main(mb, ""); }
static void noop_main_near(oac_mb *mb) { op_main(mb, "Identity"); }

/* The same inside both branches of an If. */
static void op_if(oac_mb *mb, const char *op)
{
    oac_gb *g = neg_graph(mb);
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "branch", "cond", "z");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then_g");
    oac_gb_node(t, "Identity", NULL, "then_copy", "y", "ty")->op_type = (char *)op;
    oac_gb_output(t, "ty", OAC_T_FLOAT, "2");
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else_g");
    oac_gb_node(e, "Neg", NULL, "else_neg", "y", "ey");
    oac_gb_output(e, "ey", OAC_T_FLOAT, "2");
    oac_gb_output(g, "z", OAC_T_FLOAT, "2");
}
static void noop_if(oac_mb *mb) { op_if(mb, ""); }
static void noop_if_near(oac_mb *mb) { op_if(mb, "Identity"); }

/* The same inside a Loop body (trip count 2, carried value x). */
static void op_loop(oac_mb *mb, const char *op)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    int64_t two = 2;
    oac_gb_init_i64(g, "trips", "", &two, 1);
    Onnx__NodeProto *n = oac_gb_node(g, "Loop", NULL, "loop", "trips,,x", "z");
    oac_gb *b = oac_node_attr_graph(g, n, "body", "body_g");
    oac_gb_input(b, "i", OAC_T_INT64, "");
    oac_gb_input(b, "cond_in", OAC_T_BOOL, "");
    oac_gb_input(b, "x_in", OAC_T_FLOAT, "2");
    oac_gb_node(b, "Identity", NULL, "keep", "cond_in", "cond_out");
    oac_gb_node(b, "Neg", NULL, "body_neg", "x_in", "x_out")->op_type = (char *)op;
    oac_gb_output(b, "cond_out", OAC_T_BOOL, "");
    oac_gb_output(b, "x_out", OAC_T_FLOAT, "2");
    oac_gb_output(g, "z", OAC_T_FLOAT, "2");
}
static void noop_loop(oac_mb *mb) { op_loop(mb, NULL); }
static void noop_loop_near(oac_mb *mb) { op_loop(mb, "Neg"); }

/* The same inside a local function, called once. */
static void op_function(oac_mb *mb, const char *op)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "F", "a", "r");
    oac_gb_node(f, "Neg", NULL, "fneg", "a", "r")->op_type = (char *)op;
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "F", "local", "call", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
}
static void noop_function(oac_mb *mb) { op_function(mb, ""); }
static void noop_function_near(oac_mb *mb) { op_function(mb, "Neg"); }

/* ---- names ----------------------------------------------------------------- */

/* A static dense cache updated in place (runnable without --dim), plus
 * `extra` more graph inputs named name (NULL: unnamed). */
static oac_gb *cache_graph(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "cache", OAC_T_FLOAT, "1,1,4,2"), 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, "1,1,1,2");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "update",
                                     "cache,values,position", "updated_cache");
    oac_node_attr_int(g, n, "axis", -2);
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT, "1,1,4,2"), "cache");
    return g;
}

/* A graph input without a name (issue 12 item 2: slots[-1]). */
static void unnamed_input(oac_mb *mb)
{
    oac_gb *g = cache_graph(mb);
    oac_gb_input(g, "extra", OAC_T_FLOAT, "2")->name = (char *)"";
}
static void unnamed_input_near(oac_mb *mb)
{
    oac_gb_input(cache_graph(mb), "extra", OAC_T_FLOAT, "2");
}

/* Two READ_WRITE graph inputs named cache (item 9). */
static void dup_input(oac_mb *mb)
{
    oac_gb *g = cache_graph(mb);
    Onnx__ValueInfoProto *vi = oac_gb_input(g, "cache2", OAC_T_FLOAT, "1,1,4,2");
    oac_vi_access(g, vi, 1);
    vi->name = (char *)"cache";
}
static void dup_input_near(oac_mb *mb)
{
    oac_gb *g = cache_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "cache2", OAC_T_FLOAT, "1,1,4,2"), 1);
}

/* An initializer without a name, two with one name, two graph outputs
 * with one name. */
static void unnamed_initializer(oac_mb *mb)
{
    float v[2] = { 1, 2 };
    oac_gb_init_f32(neg_graph(mb), "w", "2", v, 2)->name = (char *)"";
}
static void dup_initializer(oac_mb *mb)
{
    float v[2] = { 1, 2 };
    oac_gb *g = neg_graph(mb);
    oac_gb_init_f32(g, "w", "2", v, 2);
    oac_gb_init_f32(g, "w2", "2", v, 2)->name = (char *)"w";
}
/* An initializer that is also a graph input is a default, not a
 * duplicate. */
static void initializer_default(oac_mb *mb)
{
    float v[2] = { 1, 2 };
    oac_gb *g = neg_graph(mb);
    oac_gb_input(g, "w", OAC_T_FLOAT, "2");
    oac_gb_init_f32(g, "w", "2", v, 2);
}
static void unnamed_output(oac_mb *mb)
{
    oac_gb *g = neg_graph(mb);
    oac_gb_output(g, "x2", OAC_T_FLOAT, "2")->name = (char *)"";
}
static void dup_output(oac_mb *mb)
{
    oac_gb *g = neg_graph(mb);
    oac_gb_output(g, "y2", OAC_T_FLOAT, "2")->name = (char *)"y";
}
/* A function with two inputs named a. */
static void dup_function_input(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "F", "a,b", "r");
    oac_gb_node(f, "Add", NULL, "fadd", "a,b", "r");
    oac_gb_function(f)->input[1] = (char *)"a";
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "F", "local", "call", "x,x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2");
}
/* A Loop body whose carried input has no name. */
static void unnamed_body_input(oac_mb *mb)
{
    op_loop(mb, "Neg");
    Onnx__GraphProto *body = oac_mb_proto(mb)->graph->node[0]->attribute[0]->g;
    body->input[2]->name = (char *)"";
}

/* ---- payloads -------------------------------------------------------------- */

/* y = Add(x, w), w FLOAT[4] from raw_data of len bytes. */
static void raw_init(oac_mb *mb, size_t len)
{
    float v[5] = { 1, 2, 3, 4, 5 };
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    oac_gb_init_raw(g, "w", OAC_T_FLOAT, "4", v, len);
    oac_gb_node(g, "Add", NULL, "add", "x,w", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "4");
}
static void raw_short(oac_mb *mb) { raw_init(mb, 12); }
static void raw_long(oac_mb *mb) { raw_init(mb, 20); }
static void raw_near(oac_mb *mb) { raw_init(mb, 16); }

/* w FLOAT[4] from float_data of 3 values. */
static void typed_short(oac_mb *mb)
{
    float v[4] = { 1, 2, 3, 4 };
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    Onnx__TensorProto *t = oac_gb_init_f32(g, "w", "4", v, 4);
    t->n_float_data = 3;
    oac_gb_node(g, "Add", NULL, "add", "x,w", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "4");
}
/* An INT64 initializer of dims [3] with two int64_data values. */
static void varint_short(oac_mb *mb)
{
    int64_t v[3] = { 1, 2, 3 };
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_INT64, "3");
    oac_gb_init_i64(g, "w", "3", v, 3)->n_int64_data = 2;
    oac_gb_node(g, "Add", NULL, "add", "x,w", "y");
    oac_gb_output(g, "y", OAC_T_INT64, "3");
}
/* A Constant whose value holds 8 bytes for FLOAT[4]. */
static void constant_short(oac_mb *mb)
{
    float v[4] = { 1, 2, 3, 4 };
    oac_gb *g = oac_mb_graph(mb);
    Onnx__TensorProto *t = oac_gb_tensor_raw(g, "cv", OAC_T_FLOAT, "4", v, 8);
    oac_node_attr_tensor(g, oac_gb_node(g, "Constant", NULL, "const", NULL, "c"), "value", t);
    oac_gb_output(g, "c", OAC_T_FLOAT, "4");
}
/* The same Constant inside a Loop body (a subgraph scope). */
static void constant_short_body(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    int64_t two = 2;
    oac_gb_init_i64(g, "trips", "", &two, 1);
    Onnx__NodeProto *n = oac_gb_node(g, "Loop", NULL, "loop", "trips,,x", "z");
    oac_gb *b = oac_node_attr_graph(g, n, "body", "body_g");
    oac_gb_input(b, "i", OAC_T_INT64, "");
    oac_gb_input(b, "cond_in", OAC_T_BOOL, "");
    oac_gb_input(b, "x_in", OAC_T_FLOAT, "2");
    oac_gb_node(b, "Identity", NULL, "keep", "cond_in", "cond_out");
    float v[2] = { 1, 2 };
    Onnx__TensorProto *t = oac_gb_tensor_raw(b, "cv", OAC_T_FLOAT, "2", v, 4);
    oac_node_attr_tensor(b, oac_gb_node(b, "Constant", NULL, "body_const", NULL, "c"),
                         "value", t);
    oac_gb_node(b, "Add", NULL, "body_add", "x_in,c", "x_out");
    oac_gb_output(b, "cond_out", OAC_T_BOOL, "");
    oac_gb_output(b, "x_out", OAC_T_FLOAT, "2");
    oac_gb_output(g, "z", OAC_T_FLOAT, "2");
}

/* ---- external data ----------------------------------------------------------- */

static int write_file(const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(p, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* y = Add(x, w), w FLOAT[4] external in file (written with file_len
 * bytes), with `length` len (NULL: absent). */
static void ext_init_at(oac_mb *mb, const char *file, const char *location,
                        size_t file_len, const char *len)
{
    float v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    if (write_file(file, v, file_len) != 0) {
        fprintf(stderr, "hostile_models: cannot write %s/%s\n", dir, file);
        exit(1);
    }
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    Onnx__TensorProto *t = oac_gb_init_raw(g, "w", OAC_T_FLOAT, "4", v, 16);
    t->has_raw_data = 0;
    t->raw_data.len = 0;
    t->raw_data.data = NULL;
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    size_t n = len ? 2 : 1;
    Onnx__StringStringEntryProto **e = oac_mb_alloc(mb, n * sizeof *e);
    for (size_t i = 0; e && i < n; i++) {
        e[i] = oac_mb_alloc(mb, sizeof **e);
        if (!e[i])
            return;
        onnx__string_string_entry_proto__init(e[i]);
    }
    if (!e)
        return;
    e[0]->key = (char *)"location";
    e[0]->value = oac_mb_strdup(mb, location);
    if (len) {
        e[1]->key = (char *)"length";
        e[1]->value = (char *)len;
    }
    t->n_external_data = n;
    t->external_data = e;
    oac_gb_node(g, "Add", NULL, "add", "x,w", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "4");
}
static void ext_init(oac_mb *mb, const char *file, size_t file_len, const char *len)
{
    ext_init_at(mb, file, file, file_len, len);
}
/* length 12 of 16 (item 7: 4 bytes short), and its near-miss. */
static void ext_short(oac_mb *mb) { ext_init(mb, "ext_short.bin", 16, "12"); }
static void ext_near(oac_mb *mb) { ext_init(mb, "ext_near.bin", 16, "16"); }
/* Weights in y.pb beside a model whose output is y: `run --dump .` would
 * write the output over them (issue 18, F4). */
static void ext_y(oac_mb *mb) { ext_init(mb, "y.pb", 16, "16"); }
/* No length: the tensor's 16 bytes, from a file of 12 (and of 16). */
static void ext_rest_short(oac_mb *mb) { ext_init(mb, "ext_rest_short.bin", 12, NULL); }
static void ext_rest_near(oac_mb *mb) { ext_init(mb, "ext_rest_near.bin", 16, NULL); }
/* location "ext_nul.bin\0.evil": the text before the NUL names a valid
 * file.  The builder writes C strings, so main() patches the '#' of
 * "ext_nul.bin#.evil" into a NUL in the packed bytes. */
#define NUL_LOCATION "ext_nul.bin#.evil"
static void ext_nul(oac_mb *mb)
{
    ext_init_at(mb, "ext_nul.bin", NUL_LOCATION, 16, "16");
}

/* A node input "x\0NUL" (the builder writes "x#NUL"; main() makes each
 * '#' of "#NUL" a NUL in the packed bytes): its C string is "x", a graph
 * input, so it would read another value than the file names. */
#define NUL_MARK "#NUL"
static void nul_input(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "4");
    oac_gb_node(g, "Neg", NULL, "neg", "x" NUL_MARK, "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "4");
}

/* ---- the runtime ------------------------------------------------------------- */

/* Gather over a tensor with a zero dimension (item 3). */
static void gather_zero(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "data", OAC_T_FLOAT, "3,0");
    int64_t idx[2] = { 0, 2 };
    oac_gb_init_i64(g, "idx", "2", idx, 2);
    oac_gb_node(g, "Gather", NULL, "gather", "data,idx", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2,0");
}

/* Every kernel over tensors with a zero dimension: none may pass NULL
 * to memcpy (the sanitizer build aborts on it). */
static void zero_dims(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "a", OAC_T_FLOAT, "3,0");
    oac_gb_input(g, "b", OAC_T_FLOAT, "0,4");
    oac_gb_input(g, "w", OAC_T_FLOAT, "4,2");
    int64_t shape[2] = { 0, 3 }, axes[1] = { 0 }, starts[1] = { 0 }, ends[1] = { 2 };
    oac_gb_init_i64(g, "shape", "2", shape, 2);
    oac_gb_init_i64(g, "axes", "1", axes, 1);
    oac_gb_init_i64(g, "starts", "1", starts, 1);
    oac_gb_init_i64(g, "ends", "1", ends, 1);
    oac_gb_node(g, "Neg", NULL, "neg", "a", "a1");
    oac_gb_node(g, "Add", NULL, "add", "a1,a", "a2");
    oac_gb_node(g, "Mul", NULL, "mul", "a2,a", "a3");
    oac_gb_node(g, "Identity", NULL, "copy", "a3", "a4");
    oac_node_attr_int(g, oac_gb_node(g, "Cast", NULL, "cast", "a4", "a5"), "to", OAC_T_DOUBLE);
    oac_gb_node(g, "Transpose", NULL, "transpose", "a", "t");
    Onnx__NodeProto *r = oac_gb_node(g, "Reshape", NULL, "reshape", "t,shape", "r");
    oac_node_attr_int(g, r, "allowzero", 1);
    oac_node_attr_int(g, oac_gb_node(g, "Concat", NULL, "concat", "a,a", "c"), "axis", 0);
    oac_gb_node(g, "Slice", NULL, "slice", "a,starts,ends,axes", "s");
    oac_gb_node(g, "Unsqueeze", NULL, "unsqueeze", "a,axes", "u");
    oac_gb_node(g, "Squeeze", NULL, "squeeze", "u,axes", "q");
    oac_gb_node(g, "MatMul", NULL, "matmul", "b,w", "m");
    oac_node_attr_int(g, oac_gb_node(g, "Softmax", NULL, "softmax", "m", "sm"), "axis", -1);
    int64_t idx[2] = { 0, 2 };
    oac_gb_init_i64(g, "idx", "2", idx, 2);
    oac_gb_node(g, "Gather", NULL, "gather", "a,idx", "gz");
    oac_gb_output(g, "a5", OAC_T_DOUBLE, "3,0");
    oac_gb_output(g, "r", OAC_T_FLOAT, "0,3");
    oac_gb_output(g, "c", OAC_T_FLOAT, "6,0");
    oac_gb_output(g, "s", OAC_T_FLOAT, "2,0");
    oac_gb_output(g, "q", OAC_T_FLOAT, "3,0");
    oac_gb_output(g, "sm", OAC_T_FLOAT, "0,2");
    oac_gb_output(g, "gz", OAC_T_FLOAT, "2,0");
}

/* Input 'in/x' FLOAT[4]; outputs 'a/b' = -x, 'a_b' = x, '.hidden' = x
 * and '%2F' = -x: four distinct files under --dump, and a dump read back
 * through --input 'in/x'. */
static void dump_names(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "in/x", OAC_T_FLOAT, "4");
    oac_gb_node(g, "Neg", NULL, "n1", "in/x", "a/b");
    oac_gb_node(g, "Identity", NULL, "n2", "in/x", "a_b");
    oac_gb_node(g, "Identity", NULL, "n3", "in/x", ".hidden");
    oac_gb_node(g, "Neg", NULL, "n4", "a_b", "%2F");
    oac_gb_output(g, "a/b", OAC_T_FLOAT, "4");
    oac_gb_output(g, "a_b", OAC_T_FLOAT, "4");
    oac_gb_output(g, ".hidden", OAC_T_FLOAT, "4");
    oac_gb_output(g, "%2F", OAC_T_FLOAT, "4");
}

/* An output whose name is longer than any file name may be (300 bytes),
 * beside an ordinary one. */
static void dump_long_name(oac_mb *mb)
{
    char name[301];
    memset(name, 'n', 300);
    name[300] = '\0';
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "Neg", NULL, "n1", "x", "short");
    oac_gb_node(g, "Identity", NULL, "n2", "x", name);
    oac_gb_output(g, "short", OAC_T_FLOAT, "2");
    oac_gb_output(g, name, OAC_T_FLOAT, "2");
}

/* ---- a branch output nothing produces (issue 12 item 8) -------------- */

/* The then branch returns `ret`: "ty" (its node's output) or "tz", which
 * no node, input or initializer defines. */
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
static void branch_unproduced_near(oac_mb *mb) { if_return(mb, "ty"); }

/* ---- memory (issue 12 item 6; contract 8, memory-budget) ---------------- */

/* x FLOAT[n] -> Neg -> y, outputs copies of Neg: a model of a hundred
 * bytes whose run holds (1 + copies) * 4n bytes. */
static void neg_copies(oac_mb *mb, const char *n, int copies)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, n);
    for (int i = 0; i < copies; i++) {
        char y[16];
        snprintf(y, sizeof y, "y%d", i);
        oac_gb_node(g, "Neg", NULL, y, "x", y);
        oac_gb_output(g, y, OAC_T_FLOAT, n);
    }
}
/* 800M floats: 3.2 GB of input and 3.2 GB of output. */
static void huge_input(oac_mb *mb) { neg_copies(mb, "800000000", 1); }
/* Eight outputs of 2^32 floats, all graph outputs: a plan of 128 GiB. */
static void plan_128g(oac_mb *mb) { neg_copies(mb, "4294967296", 8); }
/* 2^62 floats: a byte count that overflows 64 bits (issue 18, F5), and
 * the same size through a symbol (--dim n=2^62). */
static void overflow_neg(oac_mb *mb) { neg_copies(mb, "4611686018427387904", 1); }
static void symbolic_neg(oac_mb *mb) { neg_copies(mb, "n", 1); }
/* The smallest graph without a cache, for many steps. */
static void tiny_neg(oac_mb *mb) { neg_copies(mb, "4", 1); }

/* Input x FLOAT[N] whose initializer default holds 3 values: --dim N=2
 * contradicts it. */
static void default_symbolic(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "N");
    float f[3] = { 1, 2, 3 };
    oac_gb_init_f32(g, "x", "3", f, 3);
    oac_gb_node(g, "Neg", NULL, "neg", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "N");
}

static const struct row {
    const char *name;
    void (*build)(oac_mb *);
} rows[] = {
    { "noop_main", noop_main },
    { "noop_main_near", noop_main_near },
    { "noop_if", noop_if },
    { "noop_if_near", noop_if_near },
    { "noop_loop", noop_loop },
    { "noop_loop_near", noop_loop_near },
    { "noop_function", noop_function },
    { "noop_function_near", noop_function_near },
    { "unnamed_input", unnamed_input },
    { "unnamed_input_near", unnamed_input_near },
    { "dup_input", dup_input },
    { "dup_input_near", dup_input_near },
    { "unnamed_initializer", unnamed_initializer },
    { "dup_initializer", dup_initializer },
    { "initializer_default", initializer_default },
    { "unnamed_output", unnamed_output },
    { "dup_output", dup_output },
    { "dup_function_input", dup_function_input },
    { "unnamed_body_input", unnamed_body_input },
    { "raw_short", raw_short },
    { "raw_long", raw_long },
    { "raw_near", raw_near },
    { "typed_short", typed_short },
    { "varint_short", varint_short },
    { "constant_short", constant_short },
    { "constant_short_body", constant_short_body },
    { "ext_short", ext_short },
    { "ext_near", ext_near },
    { "ext_y", ext_y },
    { "ext_rest_short", ext_rest_short },
    { "ext_rest_near", ext_rest_near },
    { "ext_nul", ext_nul },
    { "nul_input", nul_input },
    { "gather_zero", gather_zero },
    { "zero_dims", zero_dims },
    { "dump_names", dump_names },
    { "dump_long_name", dump_long_name },
    { "branch_unproduced", branch_unproduced },
    { "branch_unproduced_near", branch_unproduced_near },
    { "huge_input", huge_input },
    { "plan_128g", plan_128g },
    { "tiny_neg", tiny_neg },
    { "overflow_neg", overflow_neg },
    { "symbolic_neg", symbolic_neg },
    { "default_symbolic", default_symbolic },
};

/* DIR/file: a TensorProto x FLOAT[4] whose raw_data holds len bytes. */
static int write_input(const char *file, size_t len)
{
    float v[4] = { 1, 2, 3, 4 };
    int64_t dims[1] = { 4 };
    Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
    t.name = (char *)"x";
    t.n_dims = 1;
    t.dims = dims;
    t.has_data_type = 1;
    t.data_type = OAC_T_FLOAT;
    t.has_raw_data = 1;
    t.raw_data.len = len;
    t.raw_data.data = (uint8_t *)v;
    uint8_t buf[128];
    size_t n = protobuf_c_message_get_packed_size(&t.base);
    if (n > sizeof buf)
        return -1;
    protobuf_c_message_pack(&t.base, buf);
    return write_file(file, buf, n);
}

/* DIR/file: x FLOAT[4] as write_input, but hostile (issue 18): raw_data
 * and float_data both (two payloads), rank 100 (dims of 1 and one 4), or
 * its data external at location. */
enum { IN_TWO_PAYLOADS, IN_RANK100, IN_EXTERNAL };
static int write_input_hostile(const char *file, int kind, const char *location)
{
    float v[4] = { 1, 2, 3, 4 };
    int64_t dims[100];
    for (int i = 0; i < 100; i++)
        dims[i] = 1;
    dims[99] = 4;
    Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
    t.name = (char *)"x";
    t.n_dims = kind == IN_RANK100 ? 100 : 1;
    t.dims = kind == IN_RANK100 ? dims : dims + 99;
    t.has_data_type = 1;
    t.data_type = OAC_T_FLOAT;
    Onnx__StringStringEntryProto loc = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
    Onnx__StringStringEntryProto *ext[1] = { &loc };
    if (kind == IN_EXTERNAL) {
        loc.key = (char *)"location";
        loc.value = (char *)location;
        t.has_data_location = 1;
        t.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
        t.n_external_data = 1;
        t.external_data = ext;
    } else {
        t.has_raw_data = 1;
        t.raw_data.len = sizeof v;
        t.raw_data.data = (uint8_t *)v;
    }
    if (kind == IN_TWO_PAYLOADS) {
        t.n_float_data = 4;
        t.float_data = v;
    }
    uint8_t buf[1024];
    size_t n = protobuf_c_message_get_packed_size(&t.base);
    if (n > sizeof buf)
        return -1;
    protobuf_c_message_pack(&t.base, buf);
    return write_file(file, buf, n);
}

/* The '#' of NUL_LOCATION in the packed model, made a NUL. */
static int patch_nul(uint8_t *buf, size_t len)
{
    size_t k = strlen(NUL_LOCATION);
    for (size_t i = 0; i + k <= len; i++)
        if (memcmp(buf + i, NUL_LOCATION, k) == 0) {
            buf[i + strlen("ext_nul.bin")] = 0;
            return 0;
        }
    return -1;
}

/* The '#' of every NUL_MARK in the packed model, made a NUL; -1 if none. */
static int patch_marks(uint8_t *buf, size_t len)
{
    size_t k = strlen(NUL_MARK);
    int found = -1;
    for (size_t i = 0; i + k <= len; i++)
        if (memcmp(buf + i, NUL_MARK, k) == 0) {
            buf[i] = 0;
            found = 0;
        }
    return found;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: hostile_models DIR\n");
        return 2;
    }
    dir = argv[1];
    oac_ctx *ctx = oac_ctx_new();
    int rc = ctx ? 0 : 1;
    char path[4096];
    for (size_t i = 0; ctx && i < sizeof rows / sizeof rows[0]; i++) {
        oac_mb *mb = oac_mb_new(ctx);
        rows[i].build(mb);
        snprintf(path, sizeof path, "%s/%s.onnx", dir, rows[i].name);
        uint8_t *buf = NULL;
        size_t len = 0;
        FILE *f = NULL;
        if (oac_mb_pack(mb, &buf, &len) != OAC_OK ||
            (rows[i].build == ext_nul && patch_nul(buf, len) != 0) ||
            (rows[i].build == nul_input && patch_marks(buf, len) != 0) ||
            !(f = fopen(path, "wb")) || fwrite(buf, 1, len, f) != len) {
            fprintf(stderr, "hostile_models: %s: cannot write (%s)\n", path, oac_errmsg(ctx));
            rc = 1;
        }
        if (f && fclose(f) != 0)
            rc = 1;
        free(buf);
        oac_mb_free(mb);
    }
    float w[4] = { 1, 2, 3, 4 };
    if (write_input("x4.pb", 16) || write_input("x4_short.pb", 12) ||
        write_input_hostile("x4_two.pb", IN_TWO_PAYLOADS, NULL) ||
        write_input_hostile("x4_rank100.pb", IN_RANK100, NULL) ||
        write_input_hostile("x4_passwd.pb", IN_EXTERNAL, "/etc/passwd") ||
        write_input_hostile("x4_ext.pb", IN_EXTERNAL, "x4.bin") ||
        write_file("x4.bin", w, sizeof w)) {
        fprintf(stderr, "hostile_models: cannot write the --input files\n");
        rc = 1;
    }
    oac_ctx_free(ctx);
    return rc;
}

/* cli_models.c: writes the small models tests/cli_contract.sh feeds to the
 * command line (contract, sections 3 to 5).
 *
 *   cli_models DIR      writes DIR/<name>.onnx for every row below
 *
 * Each model isolates one rule of "Details the rules rely on" or one
 * report detail (unnamed nodes, unknown dims, topological order); the
 * script says what the tool must report for it.  Built with the public
 * builder (lib/oac_build.h); exit 1 when a model cannot be written.
 */
#include <stdio.h>
#include <string.h>

#include "oac_build.h"

#define CACHE "2,batch,heads,max_length,head_size"
#define VALUES "2,batch,heads,new_length,head_size"

static Onnx__NodeProto *update(oac_gb *g, const char *name, const char *cache,
                               const char *out, int alias)
{
    char in[128];
    snprintf(in, sizeof in, "%s,values,position", cache);
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", name, in, out);
    oac_node_attr_int(g, n, "axis", -2);
    if (alias)
        oac_node_alias(g, n, 0, 0, alias);
    return n;
}

static oac_gb *inputs(oac_mb *mb, const char *cache_dims, int access)
{
    oac_gb *g = oac_mb_graph(mb);
    Onnx__ValueInfoProto *c = oac_gb_input(g, "cache", OAC_T_FLOAT16, cache_dims);
    if (access >= 0)
        oac_vi_access(g, c, access);
    oac_gb_input(g, "values", OAC_T_FLOAT16, VALUES);
    oac_gb_input(g, "position", OAC_T_INT64, "");
    return g;
}

/* An unnamed aliased update whose output_alias has no kind. */
static void kind_absent(oac_mb *mb)
{
    oac_gb *g = inputs(mb, CACHE, 1);
    oac_gb_node(g, "Identity", NULL, "first", "values", "v2");
    update(g, NULL, "cache", "updated_cache", -1);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE), "cache");
    oac_gb_output(g, "v2", OAC_T_FLOAT16, VALUES);
}

/* alias_of on a graph input. */
static void input_alias_of(oac_mb *mb)
{
    oac_gb *g = inputs(mb, CACHE, 1);
    oac_vi_alias_of(g, oac_gb_proto(g)->input[1], "cache");
    update(g, "update", "cache", "updated_cache", 1);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE), "cache");
}

/* access 2: neither READ_ONLY nor READ_WRITE. */
static void access_two(oac_mb *mb)
{
    oac_gb *g = inputs(mb, CACHE, 1);
    Onnx__ValueInfoProto *vi = oac_gb_proto(g)->input[1];
    vi->has_access = 1;
    vi->access = (Onnx__ValueInfoProto__Access)2;
    update(g, "update", "cache", "updated_cache", 1);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE), "cache");
}

/* A READ_WRITE input nothing writes. */
static void rw_unwritten(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "x", OAC_T_FLOAT, "2,3"), 1);
    oac_gb_node(g, "Neg", NULL, "neg", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "2,3");
}

/* A READ_WRITE input that is also an initializer; rooted: it roots the
 * class of an in-place update. */
static void rw_initializer(oac_mb *mb, int rooted)
{
    oac_gb *g = oac_mb_graph(mb);
    float z[16] = { 0 };
    oac_vi_access(g, oac_gb_input(g, "cache", OAC_T_FLOAT, "1,1,4,4"), 1);
    oac_gb_init_f32(g, "cache", "1,1,4,4", z, 16);
    oac_gb_input(g, "values", OAC_T_FLOAT, "1,1,1,4");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    if (rooted) {
        Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "update",
                                         "cache,values,position", "updated_cache");
        oac_node_alias(g, n, 0, 0, 1);
        oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT, "1,1,4,4"), "cache");
    } else {
        oac_gb_node(g, "Neg", NULL, "neg", "cache", "y");
        oac_gb_output(g, "y", OAC_T_FLOAT, "1,1,4,4");
    }
}
static void rw_initializer_rooted(oac_mb *mb) { rw_initializer(mb, 1); }
static void rw_initializer_unrooted(oac_mb *mb) { rw_initializer(mb, 0); }

/* u1 = CacheUpdate(cache), u2 = CacheUpdate(u1), written in reverse file
 * order; members must still come in topological order. */
static void chain_reversed(oac_mb *mb)
{
    oac_gb *g = inputs(mb, CACHE, 1);
    update(g, "update2", "u1", "u2", 1);
    update(g, "update1", "cache", "u1", 1);
    oac_vi_alias_of(g, oac_gb_output(g, "u2", OAC_T_FLOAT16, CACHE), "cache");
}

/* Static capacity 16 in the input, dim_param max_length in the output. */
static void static_vs_param(oac_mb *mb)
{
    oac_gb *g = inputs(mb, "2,1,2,16,4", 1);
    update(g, "update", "cache", "updated_cache", 1);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, "2,1,2,max_length,4"),
                    "cache");
}

/* A cache with an unknown ("?") dimension. */
static void unknown_dim(oac_mb *mb)
{
    oac_gb *g = inputs(mb, "2,?,2,8,4", 1);
    update(g, "update", "cache", "updated_cache", 1);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, "2,?,2,8,4"), "cache");
}

/* A non-aliasing output whose size depends on a dim_param, next to a
 * fully static cache. */
static void plan_unknown(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "cache", OAC_T_FLOAT16, "2,1,2,8,4"), 1);
    oac_gb_input(g, "values", OAC_T_FLOAT16, "2,1,2,1,4");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    update(g, "update", "cache", "updated_cache", 1);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, "2,1,2,8,4"), "cache");
    oac_gb_input(g, "x", OAC_T_FLOAT, "rows,4");
    oac_gb_node(g, "Neg", NULL, "neg", "x", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "rows,4");
}

/* PagedCacheUpdate / TensorScatter without output_alias (alias-implied),
 * TensorScatter with it (nothing), a plain op (nothing). */
static void paged_implied(oac_mb *mb)
{
    int32_t allowed[1];
    allowed[0] = oac_mb_quant_linear(mb, "INT4_PAGE", OAC_T_FLOAT, OAC_T_INT4, 4, 1, 0.125f, 0);
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input_paged(g, "cache", OAC_T_FLOAT, "2,2,16,4", allowed, 1), 1);
    oac_gb_input(g, "page_id", OAC_T_INT64, "");
    oac_gb_input(g, "values", OAC_T_FLOAT, "2,2,1,4");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    oac_gb_node(g, "PagedCacheUpdate", "onnx_alias", "update",
                "cache,page_id,values,position", "updated_cache");
    oac_gb_output_paged(g, "updated_cache", OAC_T_FLOAT, "2,2,16,4", allowed, 1);
}

static void scatter(oac_mb *mb, int alias)
{
    oac_mb_ir_version(mb, 12);
    oac_mb_opset(mb, "", 24);
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "past_cache", OAC_T_FLOAT, "1,4,16,8"), 1);
    oac_gb_input(g, "update", OAC_T_FLOAT, "1,4,2,8");
    oac_gb_input(g, "write_indices", OAC_T_INT64, "1");
    Onnx__NodeProto *n = oac_gb_node(g, "TensorScatter", NULL, "scatter",
                                     "past_cache,update,write_indices", "present_cache");
    oac_node_attr_int(g, n, "axis", -2);
    Onnx__ValueInfoProto *o = oac_gb_output(g, "present_cache", OAC_T_FLOAT, "1,4,16,8");
    if (alias) {
        oac_node_alias(g, n, 0, 0, 1);
        oac_vi_alias_of(g, o, "past_cache");
    }
}
static void scatter_implied(oac_mb *mb) { scatter(mb, 0); }
static void scatter_aliased(oac_mb *mb) { scatter(mb, 1); }

/* A Loop whose body updates its carried cache in place, but the Loop node
 * lacks output_alias. */
static void loop_implied(oac_mb *mb)
{
    oac_gb *g = inputs(mb, CACHE, 1);
    oac_gb_input(g, "trip_count", OAC_T_INT64, "");
    Onnx__NodeProto *n = oac_gb_node(g, "Loop", NULL, "steps", "trip_count,,cache", "final_cache");
    oac_gb *body = oac_node_attr_graph(g, n, "body", "step");
    oac_gb_input(body, "iter", OAC_T_INT64, "");
    oac_gb_input(body, "cond_in", OAC_T_BOOL, "");
    oac_gb_input(body, "cache_in", OAC_T_FLOAT16, CACHE);
    oac_gb_node(body, "Identity", NULL, "keep_going", "cond_in", "cond_out");
    update(body, "update", "cache_in", "cache_out", 1);
    oac_gb_output(body, "cond_out", OAC_T_BOOL, "");
    oac_gb_output(body, "cache_out", OAC_T_FLOAT16, CACHE);
    oac_gb_output(g, "final_cache", OAC_T_FLOAT16, CACHE);
}

/* A Loop whose body's update is unnamed and its output_alias has no
 * kind: the diagnostic points into the body. */
static void loop_body_unnamed(oac_mb *mb)
{
    oac_gb *g = inputs(mb, CACHE, 1);
    oac_gb_input(g, "trip_count", OAC_T_INT64, "");
    Onnx__NodeProto *n = oac_gb_node(g, "Loop", NULL, "steps", "trip_count,,cache", "final_cache");
    oac_node_alias(g, n, 0, 2, 1);
    oac_gb *body = oac_node_attr_graph(g, n, "body", "step");
    oac_gb_input(body, "iter", OAC_T_INT64, "");
    oac_gb_input(body, "cond_in", OAC_T_BOOL, "");
    oac_gb_input(body, "cache_in", OAC_T_FLOAT16, CACHE);
    oac_gb_node(body, "Identity", NULL, "keep_going", "cond_in", "cond_out");
    update(body, NULL, "cache_in", "cache_out", -1);
    oac_gb_output(body, "cond_out", OAC_T_BOOL, "");
    oac_gb_output(body, "cache_out", OAC_T_FLOAT16, CACHE);
    oac_vi_alias_of(g, oac_gb_output(g, "final_cache", OAC_T_FLOAT16, CACHE), "cache");
}

/* A local function whose unnamed update has output_alias port 5. */
static void function_bad_port(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "UpdateCache", "c,v,p", "u");
    Onnx__NodeProto *n = oac_gb_node(f, "CacheUpdate", "onnx_alias", NULL, "c,v,p", "u");
    oac_node_alias(f, n, 0, 5, 1);
    oac_gb *g = inputs(mb, CACHE, 1);
    oac_gb_node(g, "UpdateCache", "local", "call", "cache,values,position", "updated_cache");
    oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE);
}

/* dense_cache stating its aliasing in the fields and in metadata_props
 * both: the fields are there, so no metadata-alias. */
static void fields_and_metadata(oac_mb *mb)
{
    oac_gb *g = inputs(mb, CACHE, 1);
    oac_node_meta(g, update(g, "update", "cache", "updated_cache", 1), "output_alias", "0:0");
    Onnx__ValueInfoProto *o = oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE);
    oac_vi_alias_of(g, o, "cache");
    oac_vi_meta(g, o, "alias_of", "cache");
}

/* A Scan carrying the cache as state 0, its body updating it in place,
 * the Scan node without output_alias. */
static void scan_implied(oac_mb *mb)
{
    oac_gb *g = inputs(mb, CACHE, 1);
    oac_gb_input(g, "xs", OAC_T_FLOAT16, "3,2");
    Onnx__NodeProto *n = oac_gb_node(g, "Scan", NULL, "scan", "cache,xs", "final_cache,ys");
    oac_node_attr_int(g, n, "num_scan_inputs", 1);
    oac_gb *body = oac_node_attr_graph(g, n, "body", "step");
    oac_gb_input(body, "cache_in", OAC_T_FLOAT16, CACHE);
    oac_gb_input(body, "x", OAC_T_FLOAT16, "2");
    update(body, "update", "cache_in", "cache_out", 1);
    oac_gb_node(body, "Identity", NULL, "copy", "x", "y");
    oac_gb_output(body, "cache_out", OAC_T_FLOAT16, CACHE);
    oac_gb_output(body, "y", OAC_T_FLOAT16, "2");
    oac_gb_output(g, "final_cache", OAC_T_FLOAT16, CACHE);
    oac_gb_output(g, "ys", OAC_T_FLOAT16, "3,2");
}

/* An update without output_alias whose output still says alias_of. */
static void implied_alias_of(oac_mb *mb)
{
    oac_gb *g = inputs(mb, CACHE, 1);
    update(g, "update", "cache", "updated_cache", 0);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE), "cache");
}

/* output_alias {0 -> 1}: output 0 has no output_alias to input 0. */
static void alias_wrong_input(oac_mb *mb)
{
    oac_gb *g = inputs(mb, CACHE, 1);
    Onnx__NodeProto *n = update(g, "update", "cache", "updated_cache", 0);
    oac_node_alias(g, n, 0, 1, 1);
    oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE);
}

/* If whose else branch's unnamed update has an output_alias without a
 * kind, behind an unnamed Identity: the pointer goes through attribute 1. */
static void if_else_unnamed(oac_mb *mb)
{
    oac_gb *g = inputs(mb, CACHE, 1);
    oac_gb_input(g, "cond", OAC_T_BOOL, "");
    Onnx__NodeProto *n = oac_gb_node(g, "If", NULL, "branch", "cond", "updated_cache");
    oac_gb *t = oac_node_attr_graph(g, n, "then_branch", "then_g");
    update(t, "then_update", "cache", "then_cache", 1);
    oac_gb_output(t, "then_cache", OAC_T_FLOAT16, CACHE);
    oac_gb *e = oac_node_attr_graph(g, n, "else_branch", "else_g");
    oac_gb_node(e, "Identity", NULL, NULL, "values", "v_copy");
    update(e, NULL, "cache", "else_cache", -1);
    oac_gb_output(e, "else_cache", OAC_T_FLOAT16, CACHE);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE), "cache");
}

/* Shape reads no storage; Identity of the stale cache, not ordered
 * before the update, is a hazard (reader: "shape" or "copy"). */
static void stale_reader(oac_mb *mb, const char *op)
{
    oac_gb *g = inputs(mb, CACHE, 1);
    update(g, "update", "cache", "updated_cache", 1);
    oac_gb_node(g, op, NULL, "reader", "cache", "read");
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, CACHE), "cache");
    oac_gb_output(g, "read", strcmp(op, "Shape") ? OAC_T_FLOAT16 : OAC_T_INT64,
                  strcmp(op, "Shape") ? CACHE : "5");
}
static void stale_shape(oac_mb *mb) { stale_reader(mb, "Shape"); }
static void stale_copy(oac_mb *mb) { stale_reader(mb, "Identity"); }

/* function_bad_port called twice: reported once per call site. */
static void function_two_calls(oac_mb *mb)
{
    oac_mb_opset(mb, "local", 1);
    oac_gb *f = oac_mb_function(mb, "local", "UpdateCache", "c,v,p", "u");
    Onnx__NodeProto *n = oac_gb_node(f, "CacheUpdate", "onnx_alias", "inner", "c,v,p", "u");
    oac_node_alias(f, n, 0, 5, 1);
    oac_gb *g = inputs(mb, CACHE, 1);
    oac_gb_node(g, "UpdateCache", "local", "call1", "cache,values,position", "u1");
    oac_gb_node(g, "UpdateCache", "local", "call2", "u1,values,position", "u2");
    oac_gb_output(g, "u2", OAC_T_FLOAT16, CACHE);
}

/* A fresh temporary as the root: t = Neg(values), t updated in place. */
static void temp_root(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "1,1,4,4");
    oac_gb_input(g, "values", OAC_T_FLOAT, "1,1,1,4");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    oac_gb_node(g, "Neg", NULL, "fresh", "x", "t");
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "update",
                                     "t,values,position", "y");
    oac_node_alias(g, n, 0, 0, 1);
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,1,4,4");
}

/* The root is a Constant's output. */
static void constant_root(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    float z[16] = { 0 };
    Onnx__TensorProto *t = oac_gb_tensor_raw(g, "cv", OAC_T_FLOAT, "1,1,4,4", z, sizeof z);
    oac_node_attr_tensor(g, oac_gb_node(g, "Constant", NULL, "const", NULL, "c"), "value", t);
    oac_gb_input(g, "values", OAC_T_FLOAT, "1,1,1,4");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "update",
                                     "c,values,position", "y");
    oac_node_alias(g, n, 0, 0, 1);
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,1,4,4");
}

/* Known positions: an initializer (known), an initializer that is also a
 * graph input (an overridable default, not known), Add of constants. */
static void position_model(oac_mb *mb, int how)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "cache", OAC_T_FLOAT, "1,1,4,4"), 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, "1,1,2,4");
    int64_t three = 3, one = 1, two = 2;
    if (how == 0) {
        oac_gb_init_i64(g, "position", "", &three, 1);
    } else if (how == 1) {
        oac_gb_input(g, "position", OAC_T_INT64, "");
        oac_gb_init_i64(g, "position", "", &three, 1);
    } else {
        oac_gb_constant_i64(g, "a", "", &one, 1);
        oac_gb_constant_i64(g, "b", "", &two, 1);
        oac_gb_node(g, "Add", NULL, "sum", "a,b", "position");
    }
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "update",
                                     "cache,values,position", "updated_cache");
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT, "1,1,4,4"), "cache");
}
static void position_initializer(oac_mb *mb) { position_model(mb, 0); }
static void position_default(oac_mb *mb) { position_model(mb, 1); }
static void position_folded(oac_mb *mb) { position_model(mb, 2); }

/* TensorScatter without write_indices (writes at 0): 20 > 16 overflows. */
static void scatter_no_indices(oac_mb *mb)
{
    oac_mb_ir_version(mb, 12);
    oac_mb_opset(mb, "", 24);
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "past_cache", OAC_T_FLOAT, "1,4,16,8"), 1);
    oac_gb_input(g, "update", OAC_T_FLOAT, "1,4,20,8");
    Onnx__NodeProto *n = oac_gb_node(g, "TensorScatter", NULL, "scatter",
                                     "past_cache,update", "present_cache");
    oac_node_attr_int(g, n, "axis", -2);
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "present_cache", OAC_T_FLOAT, "1,4,16,8"), "past_cache");
}

/* TensorScatter circular, write_indices 15 + 2 > 16 but circular: fine. */
static void scatter_circular(oac_mb *mb)
{
    oac_mb_ir_version(mb, 12);
    oac_mb_opset(mb, "", 24);
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "past_cache", OAC_T_FLOAT, "1,4,16,8"), 1);
    oac_gb_input(g, "update", OAC_T_FLOAT, "1,4,2,8");
    int64_t at = 15;
    oac_gb_constant_i64(g, "write_indices", "1", &at, 1);
    Onnx__NodeProto *n = oac_gb_node(g, "TensorScatter", NULL, "scatter",
                                     "past_cache,update,write_indices", "present_cache");
    oac_node_attr_int(g, n, "axis", -2);
    oac_node_attr_string(g, n, "mode", "circular");
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "present_cache", OAC_T_FLOAT, "1,4,16,8"), "past_cache");
}

/* PagedCacheUpdate with a known page_id -1. */
static void paged_negative(oac_mb *mb)
{
    int32_t allowed[1];
    allowed[0] = oac_mb_quant_linear(mb, "INT4_PAGE", OAC_T_FLOAT, OAC_T_INT4, 4, 1, 0.125f, 0);
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input_paged(g, "cache", OAC_T_FLOAT, "2,2,16,4", allowed, 1), 1);
    int64_t minus = -1;
    oac_gb_constant_i64(g, "page_id", "", &minus, 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, "2,2,1,4");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    Onnx__NodeProto *n = oac_gb_node(g, "PagedCacheUpdate", "onnx_alias", "update",
                                     "cache,page_id,values,position", "updated_cache");
    oac_node_alias(g, n, 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output_paged(g, "updated_cache", OAC_T_FLOAT, "2,2,16,4", allowed, 1),
                    "cache");
}

/* An intermediate (not a boundary) may name any member: u2.alias_of =
 * "u1" inside, the output u3 names the root. */
static void chain_inner_member(oac_mb *mb)
{
    oac_gb *g = inputs(mb, CACHE, 1);
    update(g, "update1", "cache", "u1", 1);
    update(g, "update2", "u1", "u2", 1);
    update(g, "update3", "u2", "u3", 1);
    oac_vi_alias_of(g, oac_gb_value_info(g, "u2", OAC_T_FLOAT16, CACHE), "u1");
    oac_vi_alias_of(g, oac_gb_output(g, "u3", OAC_T_FLOAT16, CACHE), "cache");
}

/* Runnable: a static dense cache (nothing left to --dim). */
static void static_dense(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "cache", OAC_T_FLOAT16, "2,1,2,8,4"), 1);
    oac_gb_input(g, "values", OAC_T_FLOAT16, "2,1,2,1,4");
    oac_gb_input(g, "position", OAC_T_INT64, "");
    update(g, "update", "cache", "updated_cache", 1);
    oac_vi_alias_of(g, oac_gb_output(g, "updated_cache", OAC_T_FLOAT16, "2,1,2,8,4"), "cache");
}

/* A state passed through unchanged under names no pattern pairs:
 * sout = Identity(sin).  Structure alone makes no pair of an Identity;
 * a genai_config.json naming them does (tests/cli_run.sh). */
static void identity_unpaired(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "sin", OAC_T_FLOAT, "1,4");
    oac_gb_node(g, "Identity", NULL, "pass", "sin", "sout");
    oac_gb_output(g, "sout", OAC_T_FLOAT, "1,4");
}

static const struct row {
    const char *name;
    void (*build)(oac_mb *);
} rows[] = {
    { "kind_absent", kind_absent },
    { "input_alias_of", input_alias_of },
    { "access_two", access_two },
    { "rw_unwritten", rw_unwritten },
    { "rw_initializer_rooted", rw_initializer_rooted },
    { "rw_initializer_unrooted", rw_initializer_unrooted },
    { "chain_reversed", chain_reversed },
    { "static_vs_param", static_vs_param },
    { "unknown_dim", unknown_dim },
    { "plan_unknown", plan_unknown },
    { "paged_implied", paged_implied },
    { "scatter_implied", scatter_implied },
    { "scatter_aliased", scatter_aliased },
    { "loop_implied", loop_implied },
    { "static_dense", static_dense },
    { "stale_shape", stale_shape },
    { "stale_copy", stale_copy },
    { "function_two_calls", function_two_calls },
    { "temp_root", temp_root },
    { "constant_root", constant_root },
    { "position_initializer", position_initializer },
    { "position_default", position_default },
    { "position_folded", position_folded },
    { "scatter_no_indices", scatter_no_indices },
    { "scatter_circular", scatter_circular },
    { "paged_negative", paged_negative },
    { "chain_inner_member", chain_inner_member },
    { "if_else_unnamed", if_else_unnamed },
    { "implied_alias_of", implied_alias_of },
    { "alias_wrong_input", alias_wrong_input },
    { "fields_and_metadata", fields_and_metadata },
    { "scan_implied", scan_implied },
    { "loop_body_unnamed", loop_body_unnamed },
    { "function_bad_port", function_bad_port },
    { "identity_unpaired", identity_unpaired },
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cli_models DIR\n");
        return 2;
    }
    oac_ctx *ctx = oac_ctx_new();
    int rc = 0;
    char path[4096];
    for (size_t i = 0; ctx && i < sizeof rows / sizeof rows[0]; i++) {
        oac_mb *mb = oac_mb_new(ctx);
        rows[i].build(mb);
        snprintf(path, sizeof path, "%s/%s.onnx", argv[1], rows[i].name);
        if (oac_mb_write(mb, path) != OAC_OK) {
            fprintf(stderr, "cli_models: %s: %s\n", path, oac_errmsg(ctx));
            rc = 1;
        }
        oac_mb_free(mb);
    }
    oac_ctx_free(ctx);
    return ctx ? rc : 1;
}

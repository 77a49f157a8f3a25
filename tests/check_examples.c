/* check_examples.c: the example table (examples/models.c) is what it says.
 *
 * Other tests iterate the table and trust its rows; these tests make sure
 * each row is a well-formed model that obeys the contract's operand rules
 * where it claims to be valid, independently of the checker: every name
 * is defined once and before use (scopes included), onnx_alias is
 * imported where used, positions are INT64 scalars, boundaries that alias
 * name a root, the toy decoder uses only the runtime's operators, and
 * the twins pair up.
 */
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static Onnx__ModelProto *unpack_row(const oac_example *ex)
{
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_msg(oac_example_pack(ctx, ex, &buf, &len) == OAC_OK, "%s: %s", ex->name,
                  oac_errmsg(ctx));
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    oac_ctx_free(ctx);
    ck_assert_msg(m != NULL, "%s does not unpack", ex->name);
    return m;
}

/* ---- scopes: defined once, before use --------------------------------- */

typedef struct scope {
    const struct scope *outer;
    const char *names[4096];
    size_t n;
} scope;

static bool in_scope(const scope *s, const char *name)
{
    for (; s; s = s->outer)
        for (size_t i = 0; i < s->n; i++)
            if (strcmp(s->names[i], name) == 0)
                return true;
    return false;
}

static void define(scope *s, const char *row, const char *name)
{
    if (!*name)
        return;   /* an omitted optional output */
    ck_assert_msg(!in_scope(s, name), "%s: '%s' defined twice", row, name);
    ck_assert_msg(s->n < 4096, "%s: scope too big for this test", row);
    s->names[s->n++] = name;
}

static void check_nodes(const char *row, Onnx__NodeProto **nodes, size_t n_nodes, scope *s);

static void check_graph(const char *row, const Onnx__GraphProto *g, const scope *outer)
{
    scope *s = calloc(1, sizeof *s);
    s->outer = outer;
    for (size_t i = 0; i < g->n_input; i++)
        define(s, row, g->input[i]->name);
    for (size_t i = 0; i < g->n_initializer; i++)
        define(s, row, g->initializer[i]->name);
    check_nodes(row, g->node, g->n_node, s);
    for (size_t i = 0; i < g->n_output; i++)
        ck_assert_msg(in_scope(s, g->output[i]->name), "%s: output '%s' undefined", row,
                      g->output[i]->name);
    free(s);
}

static void check_nodes(const char *row, Onnx__NodeProto **nodes, size_t n_nodes, scope *s)
{
    for (size_t i = 0; i < n_nodes; i++) {
        const Onnx__NodeProto *n = nodes[i];
        for (size_t j = 0; j < n->n_input; j++)
            ck_assert_msg(!*n->input[j] || in_scope(s, n->input[j]),
                          "%s: %s reads '%s' before it is defined", row, n->op_type, n->input[j]);
        for (size_t j = 0; j < n->n_attribute; j++)
            if (n->attribute[j]->g)
                check_graph(row, n->attribute[j]->g, s);
        for (size_t j = 0; j < n->n_output; j++)
            define(s, row, n->output[j]);
    }
}

/* ---- helpers over the unpacked model ---------------------------------- */

static bool imports(Onnx__OperatorSetIdProto **ops, size_t n, const char *domain)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(ops[i]->domain ? ops[i]->domain : "", domain) == 0)
            return true;
    return false;
}

static const Onnx__ValueInfoProto *find_vi(Onnx__ValueInfoProto **v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i]->name, name) == 0)
            return v[i];
    return NULL;
}

static bool is_update(const Onnx__NodeProto *n)
{
    return strcmp(n->op_type, "CacheUpdate") == 0 || strcmp(n->op_type, "PagedCacheUpdate") == 0 ||
           strcmp(n->op_type, "TensorScatter") == 0;
}

/* Contract fields anywhere in a graph (recursively). */
static size_t contract_fields(const Onnx__GraphProto *g)
{
    size_t k = 0;
    Onnx__ValueInfoProto **lists[3] = { g->input, g->output, g->value_info };
    size_t counts[3] = { g->n_input, g->n_output, g->n_value_info };
    for (int l = 0; l < 3; l++)
        for (size_t i = 0; i < counts[l]; i++)
            k += lists[l][i]->has_access + (lists[l][i]->alias_of != NULL);
    for (size_t i = 0; i < g->n_node; i++) {
        k += g->node[i]->n_output_alias;
        for (size_t j = 0; j < g->node[i]->n_attribute; j++)
            if (g->node[i]->attribute[j]->g)
                k += contract_fields(g->node[i]->attribute[j]->g);
    }
    return k;
}

/* The INT64 scalar rule for a position-like port fed by a graph input. */
static void check_scalar_port(const char *row, const Onnx__GraphProto *g, const char *name)
{
    const Onnx__ValueInfoProto *vi = find_vi(g->input, g->n_input, name);
    if (!vi)
        return;   /* a node output or an outer value: checked where declared */
    const Onnx__TypeProto__Tensor *t = vi->type->tensor_type;
    ck_assert_msg(vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
                  t->elem_type == OAC_T_INT64 && t->shape &&
                  (t->shape->n_dim == 0 ||
                   (t->shape->n_dim == 1 && t->shape->dim[0]->dim_value == 1)),
                  "%s: '%s' is not an INT64 scalar", row, name);
}

/* ---- tests ------------------------------------------------------------- */

START_TEST(test_rows_are_well_formed)
{
    ck_assert_uint_ge(oac_examples_count, 19);
    for (size_t r = 0; r < oac_examples_count; r++) {
        const oac_example *ex = &oac_examples[r];
        ck_assert_ptr_eq(oac_example_find(ex->name), ex);
        ck_assert_msg(ex->description && *ex->description, "%s: no description", ex->name);
        for (int i = 0; ex->expect[i]; i++)
            ck_assert_msg(oac_code_lookup(ex->expect[i]) >= 0, "%s: unknown code %s", ex->name,
                          ex->expect[i]);
        /* A _broken twin reports an error and has its model in the table. */
        const char *suffix = strstr(ex->name, "_broken");
        if (suffix && suffix[7] == '\0') {
            char base[64];
            snprintf(base, sizeof base, "%.*s", (int)(suffix - ex->name), ex->name);
            ck_assert_msg(oac_example_find(base) != NULL, "%s has no twin", ex->name);
            ck_assert_msg(ex->expect[0] != NULL, "%s expects nothing", ex->name);
            int code = oac_code_lookup(ex->expect[0]);
            ck_assert_int_eq(oac_code_severity(code), OAC_SEV_ERROR);
        }
        Onnx__ModelProto *m = unpack_row(ex);
        check_graph(ex->name, m->graph, NULL);
        for (size_t f = 0; f < m->n_functions; f++) {
            const Onnx__FunctionProto *fn = m->functions[f];
            scope *s = calloc(1, sizeof *s);
            for (size_t i = 0; i < fn->n_input; i++)
                define(s, ex->name, fn->input[i]);
            check_nodes(ex->name, fn->node, fn->n_node, s);
            for (size_t i = 0; i < fn->n_output; i++)
                ck_assert(in_scope(s, fn->output[i]));
            free(s);
            ck_assert_msg(imports(m->opset_import, m->n_opset_import, fn->domain),
                          "%s: function domain %s not imported", ex->name, fn->domain);
        }
        onnx__model_proto__free_unpacked(m, NULL);
    }
    ck_assert_ptr_null(oac_example_find("no_such_row"));
    ck_assert_ptr_null(oac_example_find(NULL));
}
END_TEST

/* Rows a checker must accept follow section 2's operand rules. */
START_TEST(test_valid_rows_follow_operand_rules)
{
    for (size_t r = 0; r < oac_examples_count; r++) {
        const oac_example *ex = &oac_examples[r];
        bool valid = true;
        for (int i = 0; ex->expect[i]; i++)
            if (oac_code_severity(oac_code_lookup(ex->expect[i])) == OAC_SEV_ERROR)
                valid = false;
        if (!valid)
            continue;
        Onnx__ModelProto *m = unpack_row(ex);
        const Onnx__GraphProto *g = m->graph;
        for (size_t i = 0; i < g->n_node; i++) {
            const Onnx__NodeProto *n = g->node[i];
            if (n->domain && strcmp(n->domain, "onnx_alias") == 0)
                ck_assert_msg(imports(m->opset_import, m->n_opset_import, "onnx_alias"),
                              "%s: onnx_alias used, not imported", ex->name);
            if (strcmp(n->op_type, "CacheUpdate") == 0)
                check_scalar_port(ex->name, g, n->input[2]);
            if (strcmp(n->op_type, "PagedCacheUpdate") == 0) {
                check_scalar_port(ex->name, g, n->input[1]);
                check_scalar_port(ex->name, g, n->input[3]);
            }
            if (strcmp(n->op_type, "CacheUpdate") == 0 && n->n_output_alias) {
                /* values: the cache's type and rank. */
                const Onnx__ValueInfoProto *c = find_vi(g->input, g->n_input, n->input[0]);
                const Onnx__ValueInfoProto *v = find_vi(g->input, g->n_input, n->input[1]);
                if (c && v) {
                    ck_assert_int_eq(c->type->tensor_type->elem_type,
                                     v->type->tensor_type->elem_type);
                    ck_assert_uint_eq(c->type->tensor_type->shape->n_dim,
                                      v->type->tensor_type->shape->n_dim);
                }
            }
        }
        /* Every main-graph output produced by an aliasing update names a
         * READ_WRITE graph input as its root. */
        for (size_t o = 0; o < g->n_output; o++) {
            const Onnx__ValueInfoProto *out = g->output[o];
            for (size_t i = 0; i < g->n_node; i++) {
                const Onnx__NodeProto *n = g->node[i];
                if (!is_update(n) || !n->n_output_alias || strcmp(n->output[0], out->name) != 0)
                    continue;
                ck_assert_msg(out->alias_of != NULL, "%s: %s lacks alias_of", ex->name, out->name);
                const Onnx__ValueInfoProto *root = find_vi(g->input, g->n_input, out->alias_of);
                ck_assert_msg(root && root->has_access && root->access == 1,
                              "%s: %s's root is not a READ_WRITE input", ex->name, out->name);
            }
        }
        onnx__model_proto__free_unpacked(m, NULL);
    }
}
END_TEST

START_TEST(test_specific_rows)
{
    /* dense_cache: exactly the contract's example. */
    Onnx__ModelProto *m = unpack_row(oac_example_find("dense_cache"));
    const Onnx__GraphProto *g = m->graph;
    ck_assert_uint_eq(g->n_node, 1);
    ck_assert_str_eq(g->node[0]->domain, "onnx_alias");
    ck_assert_int_eq(g->node[0]->attribute[0]->i, -2);
    ck_assert_int_eq(g->node[0]->output_alias[0]->kind, 1);
    ck_assert_int_eq(g->input[0]->type->tensor_type->elem_type, OAC_T_FLOAT16);
    ck_assert_str_eq(g->input[0]->type->tensor_type->shape->dim[3]->dim_param, "max_length");
    ck_assert_str_eq(g->output[0]->alias_of, "cache");
    onnx__model_proto__free_unpacked(m, NULL);

    m = unpack_row(oac_example_find("chained_updates_broken"));
    ck_assert_str_eq(m->graph->output[0]->alias_of, "u1");
    onnx__model_proto__free_unpacked(m, NULL);

    /* loop_cache: output 0 aliases input 2 (the first carried value). */
    m = unpack_row(oac_example_find("loop_cache"));
    ck_assert_str_eq(m->graph->node[0]->op_type, "Loop");
    ck_assert_int_eq(m->graph->node[0]->output_alias[0]->input_index, 2);
    ck_assert_str_eq(m->graph->node[0]->input[2], "cache");
    ck_assert_uint_eq(m->graph->node[0]->attribute[0]->g->n_input, 3);
    onnx__model_proto__free_unpacked(m, NULL);

    /* function_cache: alias_of in FunctionProto.value_info. */
    m = unpack_row(oac_example_find("function_cache"));
    ck_assert_uint_eq(m->n_functions, 1);
    ck_assert_str_eq(m->functions[0]->value_info[0]->alias_of, "c");
    ck_assert(imports(m->functions[0]->opset_import, m->functions[0]->n_opset_import, "onnx_alias"));
    onnx__model_proto__free_unpacked(m, NULL);

    /* tensor_scatter: opset 24; the twin's write index is a Constant. */
    m = unpack_row(oac_example_find("tensor_scatter_broken"));
    ck_assert(imports(m->opset_import, m->n_opset_import, ""));
    for (size_t i = 0; i < m->n_opset_import; i++)
        if (!m->opset_import[i]->domain || !*m->opset_import[i]->domain)
            ck_assert_int_eq(m->opset_import[i]->version, 24);
    ck_assert_str_eq(m->graph->node[0]->op_type, "Constant");
    ck_assert_int_eq(m->graph->node[0]->attribute[0]->t->int64_data[0], 15);
    onnx__model_proto__free_unpacked(m, NULL);

    /* paged_cache: INT4, FP8 E4M3FN and 2-bit declarations, all FLOAT. */
    m = unpack_row(oac_example_find("paged_cache"));
    ck_assert_uint_eq(m->n_quantizations, 3);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(m->quantizations[i]->data_type, OAC_T_FLOAT);
    ck_assert_int_eq(m->quantizations[0]->linear->storage_type, OAC_T_INT4);
    ck_assert_int_eq(m->quantizations[0]->linear->bits, 4);
    ck_assert_int_eq(m->quantizations[1]->floating_point->exponent_bias, 7);
    ck_assert(!m->quantizations[1]->floating_point->has_inf);
    ck_assert_int_eq(m->quantizations[2]->linear->storage_type, OAC_T_UINT8);
    ck_assert_int_eq(m->quantizations[2]->linear->bits, 2);
    const Onnx__TypeProto *t = m->graph->input[0]->type;
    ck_assert_int_eq(t->value_case, ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE);
    ck_assert_int_eq(t->sequence_type->elem_type->value_case,
                     ONNX__TYPE_PROTO__VALUE_QUANTIZED_TENSOR_TYPE);
    ck_assert_int_eq(m->graph->input[0]->access, 1);
    onnx__model_proto__free_unpacked(m, NULL);
    m = unpack_row(oac_example_find("paged_cache_broken"));
    ck_assert_int_ge(m->graph->node[0]->attribute[0]->i, 3);   /* past the 3 declared */
    onnx__model_proto__free_unpacked(m, NULL);

    /* stock_no_annotations: nothing of the contract at all. */
    m = unpack_row(oac_example_find("stock_no_annotations"));
    ck_assert_uint_eq(contract_fields(m->graph), 0);
    ck_assert_uint_eq(m->n_quantizations, 0);
    ck_assert(!imports(m->opset_import, m->n_opset_import, "onnx_alias"));
    onnx__model_proto__free_unpacked(m, NULL);
}
END_TEST

START_TEST(test_toy_decoder_ops)
{
    static const char *const allowed[] = {
        "Identity", "Add", "Mul", "MatMul", "Cast", "Reshape", "Transpose", "Slice", "Concat",
        "Softmax", "Gather", "Shape", "Constant", "Unsqueeze", "Squeeze", NULL
    };
    const char *rows[] = { "toy_decoder", "toy_decoder_concat" };
    for (int r = 0; r < 2; r++) {
        Onnx__ModelProto *m = unpack_row(oac_example_find(rows[r]));
        const Onnx__GraphProto *g = m->graph;
        size_t updates = 0;
        for (size_t i = 0; i < g->n_node; i++) {
            const Onnx__NodeProto *n = g->node[i];
            if (strcmp(n->op_type, "CacheUpdate") == 0) {
                updates++;
                ck_assert_uint_eq(n->n_output_alias, 1);
                ck_assert_str_eq(n->input[2], "position");   /* wired directly */
                continue;
            }
            bool ok = false;
            for (int a = 0; allowed[a]; a++)
                ok = ok || strcmp(n->op_type, allowed[a]) == 0;
            ck_assert_msg(ok, "%s uses %s", rows[r], n->op_type);
        }
        size_t rw = 0;
        for (size_t i = 0; i < g->n_input; i++)
            rw += g->input[i]->has_access && g->input[i]->access == 1;
        if (r == 0) {
            /* K and V per layer, every one READ_WRITE and updated. */
            ck_assert_uint_eq(updates, 2 * OAC_TOY_LAYERS);
            ck_assert_uint_eq(rw, 2 * OAC_TOY_LAYERS);
            ck_assert_ptr_nonnull(find_vi(g->input, g->n_input, "position"));
            for (size_t i = 0; i < g->n_input; i++)
                if (g->input[i]->has_access) {
                    const Onnx__TensorShapeProto *s = g->input[i]->type->tensor_type->shape;
                    for (size_t d = 0; d < s->n_dim; d++)   /* concrete dims */
                        ck_assert_int_eq(s->dim[d]->value_case,
                                         ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE);
                }
        } else {
            ck_assert_uint_eq(updates, 0);
            ck_assert_uint_eq(contract_fields(g), 0);
        }
        ck_assert_uint_ge(g->n_initializer, 4 * OAC_TOY_LAYERS);
        onnx__model_proto__free_unpacked(m, NULL);
    }
}
END_TEST

START_TEST(test_write_and_alloc_failures)
{
    oac_ctx *ctx = oac_ctx_new();
    char dir[] = "/tmp/check_examples_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/dense_cache.onnx", dir);
    ck_assert_int_eq(oac_example_write(ctx, oac_example_find("dense_cache"), path), OAC_OK);
    ck_assert_int_eq(access(path, R_OK), 0);
    unlink(path);
    rmdir(dir);
    ck_assert_int_eq(oac_example_write(ctx, oac_example_find("dense_cache"),
                                       "/nonexistent-dir/x.onnx"), OAC_EIO);
    /* Failing each allocation of a row in turn: ENOMEM, never a crash. */
    const oac_example *ex = oac_example_find("if_branches");
    unsigned long before = oac_ctx_alloc_count(ctx);
    uint8_t *buf;
    size_t len;
    ck_assert_int_eq(oac_example_pack(ctx, ex, &buf, &len), OAC_OK);
    free(buf);
    unsigned long total = oac_ctx_alloc_count(ctx) - before;
    for (unsigned long n = 1; n <= total; n++) {
        oac_ctx_fail_alloc_after(ctx, n);
        ck_assert_int_eq(oac_example_pack(ctx, ex, &buf, &len), OAC_ENOMEM);
        ck_assert_ptr_null(buf);
        oac_ctx_fail_alloc_after(ctx, 0);
    }
    oac_ctx_free(ctx);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("examples");
    TCase *tc = tcase_create("examples");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_rows_are_well_formed);
    tcase_add_test(tc, test_valid_rows_follow_operand_rules);
    tcase_add_test(tc, test_specific_rows);
    tcase_add_test(tc, test_toy_decoder_ops);
    tcase_add_test(tc, test_write_and_alloc_failures);
    suite_add_tcase(s, tc);
    return s;
}

/* check_ops.c: lib/ops.c, lib/ops.def — the one operator table.
 * Contract section 2 (ports of CacheUpdate, PagedCacheUpdate,
 * TensorScatter), section 3 "Details" (Loop/Scan carried values,
 * Shape/Size read no storage, Constant, the ops known values fold
 * through, the ops alias-implied applies to), section 5 (kernels).
 *
 * The table is proved consistent row by row: one row per operator, every
 * field in range, every folding row also infers, lookups find each row
 * under every spelling of its domain and under no other spelling of its
 * name.  Which rows fold, read no storage or are cache updates is
 * checked against the contract's own lists, so a row that gains or
 * loses a column the contract fixes fails here.  That a named function
 * exists is the linker's business; what can fail is a row naming
 * another operator's kernel, which the distinct-kernel test catches.
 */
#include <ctype.h>

#include "harness.h"
#include "ops.h"

static bool same_domain(const char *a, const char *b)
{
    bool oa = oac_domain_is_onnx(a), ob = oac_domain_is_onnx(b);
    return oa || ob ? oa && ob : strcmp(a, b) == 0;
}

START_TEST(test_onnx_domain)
{
    ck_assert(oac_domain_is_onnx(NULL));
    ck_assert(oac_domain_is_onnx(""));
    ck_assert(oac_domain_is_onnx("ai.onnx"));
    ck_assert(!oac_domain_is_onnx("onnx_alias"));
    ck_assert(!oac_domain_is_onnx("ai.onnx.ml"));
    ck_assert(!oac_domain_is_onnx("ai.onn"));
    ck_assert(!oac_domain_is_onnx("AI.ONNX"));
}
END_TEST

START_TEST(test_lookup_domains)
{
    const oac_op *cu = oac_op_find("onnx_alias", "CacheUpdate");
    ck_assert_ptr_nonnull(cu);
    ck_assert_int_eq(cu->id, OAC_OP_CACHE_UPDATE);
    /* Domain matters: no CacheUpdate in the ONNX domain. */
    ck_assert_ptr_null(oac_op_find("", "CacheUpdate"));
    ck_assert_ptr_null(oac_op_find(NULL, "CacheUpdate"));
    ck_assert_ptr_null(oac_op_find("onnx_alias", "TensorScatter"));
    ck_assert_ptr_null(oac_op_find("com.microsoft", "Add"));
    /* "", NULL and "ai.onnx" are the ONNX domain. */
    ck_assert_ptr_eq(oac_op_find("", "TensorScatter"),
                     oac_op_get(OAC_OP_TENSOR_SCATTER));
    ck_assert_ptr_eq(oac_op_find(NULL, "Loop"), oac_op_get(OAC_OP_LOOP));
    ck_assert_ptr_eq(oac_op_find("ai.onnx", "Scan"), oac_op_get(OAC_OP_SCAN));
    ck_assert_ptr_null(oac_op_find("", "Conv"));
    ck_assert_ptr_null(oac_op_find("", ""));
    ck_assert_ptr_null(oac_op_find("", NULL));
    ck_assert_ptr_null(oac_op_find("", "cacheupdate"));
    ck_assert_ptr_null(oac_op_find("", "Ad"));
    ck_assert_ptr_null(oac_op_find("", "Addx"));
}
END_TEST

/* Every row is found under its own (domain, op_type), under every
 * spelling of the ONNX domain when it is an ONNX row and under none when
 * it is not, and not under its name with one letter's case flipped. */
START_TEST(test_lookup_every_row)
{
    for (int i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *op = oac_op_get((oac_op_id)i);
        ck_assert_ptr_nonnull(op);
        ck_assert_int_eq(op->id, i);
        ck_assert_ptr_eq(oac_op_find(op->domain, op->op_type), op);
        bool onnx = oac_domain_is_onnx(op->domain);
        ck_assert(onnx == (oac_op_find(NULL, op->op_type) == op));
        ck_assert(onnx == (oac_op_find("ai.onnx", op->op_type) == op));
        ck_assert(onnx == (oac_op_find("", op->op_type) == op));
        ck_assert(oac_op_find("x.other", op->op_type) != op);
        char flip[128];
        size_t n = strlen(op->op_type);
        ck_assert_uint_lt(n, sizeof flip);
        for (size_t k = 0; k < n; k++) {
            memcpy(flip, op->op_type, n + 1);
            unsigned char c = (unsigned char)flip[k];
            if (!isalpha(c))
                continue;
            flip[k] = (char)(isupper(c) ? tolower(c) : toupper(c));
            ck_assert_msg(oac_op_find(op->domain, flip) != op,
                          "%s found as %s", op->op_type, flip);
        }
    }
    ck_assert_ptr_null(oac_op_get(OAC_OP_COUNT));
}
END_TEST

START_TEST(test_one_row_per_operator)
{
    for (int i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *a = oac_op_get((oac_op_id)i);
        /* The ONNX domain is spelled "" in the table, so this holds. */
        ck_assert_msg(strcmp(a->domain, "ai.onnx") != 0, "%s", a->op_type);
        for (int j = i + 1; j < OAC_OP_COUNT; j++) {
            const oac_op *b = oac_op_get((oac_op_id)j);
            ck_assert_msg(!(same_domain(a->domain, b->domain) &&
                            strcmp(a->op_type, b->op_type) == 0),
                          "two rows for %s::%s", a->domain, a->op_type);
        }
    }
}
END_TEST

static void port_in_range(const oac_op *op, const char *what, int port)
{
    ck_assert_msg(port >= -1, "%s: %s %d", op->op_type, what, port);
    if (op->max_inputs >= 0)
        ck_assert_msg(port < op->max_inputs, "%s: %s %d past its %d inputs",
                      op->op_type, what, port, op->max_inputs);
}

START_TEST(test_fields_in_range)
{
    for (int i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *op = oac_op_get((oac_op_id)i);
        const char *t = op->op_type;
        /* A name tests/op_names.sh can search for as a C string. */
        ck_assert_ptr_nonnull(t);
        ck_assert(t[0] != '\0');
        for (const char *c = t; *c; c++)
            ck_assert_msg(isalnum((unsigned char)*c) || *c == '_', "%s", t);
        ck_assert_ptr_nonnull(op->domain);

        /* Input counts: both unchecked, or 0 <= min <= max. */
        ck_assert_msg((op->min_inputs < 0) == (op->max_inputs < 0), "%s", t);
        ck_assert_int_ge(op->min_inputs, -1);
        ck_assert_int_le(op->min_inputs, op->max_inputs);
        port_in_range(op, "position_port", op->position_port);
        port_in_range(op, "values_port", op->values_port);
        port_in_range(op, "page_id_port", op->page_id_port);
        port_in_range(op, "cond_port", op->cond_port);
        port_in_range(op, "length.port", op->length.port);
        port_in_range(op, "length.seq_port", op->length.seq_port);
        ck_assert_msg((op->enum_attr == NULL) == (op->enum_values == NULL), "%s", t);
        if (op->enum_values)
            ck_assert(oac_op_enum_ok(op, op->enum_values,
                                     strcspn(op->enum_values, "|")));

        /* Aliasing: pairs only on PAIRS rows, 1..MAX of them, one pair
         * per output; length rules and conditions other than NEVER (an
         * output that grows refuses any pair) only with pairs. */
        ck_assert_int_le(op->alias, OAC_AL_BRANCH);
        ck_assert_int_le(op->cond, OAC_COND_NEVER);
        if (op->alias == OAC_AL_PAIRS) {
            ck_assert_uint_ge(op->n_pairs, 1);
            ck_assert_uint_le(op->n_pairs, OAC_OP_MAX_PAIRS);
        } else {
            ck_assert_msg(op->n_pairs == 0, "%s", t);
            ck_assert_msg(op->cond == OAC_COND_ALWAYS || op->cond == OAC_COND_NEVER,
                          "%s", t);
            ck_assert_msg(op->length.kind == OAC_LEN_NONE, "%s", t);
        }
        for (size_t k = 0; k < op->n_pairs; k++) {
            ck_assert_int_ge(op->pairs[k].out, 0);
            ck_assert_int_ge(op->pairs[k].in, 0);
            port_in_range(op, "pair input", op->pairs[k].in);
            for (size_t m = k + 1; m < op->n_pairs; m++)
                ck_assert_msg(op->pairs[k].out != op->pairs[m].out, "%s", t);
        }
        ck_assert_msg(op->cond != OAC_COND_INPUT || op->cond_port >= 0, "%s", t);
        ck_assert_msg(op->cond != OAC_COND_ATTR || op->cond_attr, "%s", t);
        ck_assert_msg(op->length.kind != OAC_LEN_VALUE || op->length.port >= 0,
                      "%s", t);

        /* A cache update (contract 2) pairs output 0 with input 0 and
         * names its position and values ports inside its input range. */
        if (oac_op_has(op, OAC_OPF_CACHE_UPDATE)) {
            ck_assert_int_eq(op->alias, OAC_AL_PAIRS);
            ck_assert_int_eq(oac_op_alias_input(op, 0, (size_t)op->max_inputs, 0), 0);
            ck_assert_int_ge(op->position_port, 1);
            ck_assert_int_ge(op->values_port, 1);
            ck_assert_int_ne(op->position_port, op->values_port);
            ck_assert_int_ge(op->max_inputs, 1);
            /* "position + new_length > capacity is an error". */
            ck_assert_msg(op->capacity != NULL, "%s: no capacity rule", t);
        }
        ck_assert_msg(!oac_op_has(op, OAC_OPF_PAGED) ||
                      (oac_op_has(op, OAC_OPF_CACHE_UPDATE) && op->page_id_port >= 0),
                      "%s", t);

        /* Folding runs after inference and reads its output shape. */
        ck_assert_msg(!op->fold || op->infer, "%s folds but infers nothing", t);
    }
}
END_TEST

/* Each kernel implements one operator: a row naming another row's kernel
 * is a copy-paste slip the linker cannot see. */
START_TEST(test_kernels_distinct)
{
    for (int i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *a = oac_op_get((oac_op_id)i);
        if (!a->kernel)
            continue;
        for (int j = i + 1; j < OAC_OP_COUNT; j++)
            ck_assert_msg(oac_op_get((oac_op_id)j)->kernel != a->kernel,
                          "%s and %s share a kernel", a->op_type,
                          oac_op_get((oac_op_id)j)->op_type);
    }
}
END_TEST

/* Is op one of the names (ONNX domain unless it says otherwise)? */
static bool listed(const oac_op *op, const char *const *names, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (oac_op_find(op->domain, names[k]) == op)
            return true;
    return false;
}

#define N_OF(a) (sizeof (a) / sizeof (a)[0])

/* Contract 3: "A value is known when it is a Constant output, ... or the
 * result of Add, Sub, Mul, Neg, Min, Max, Identity, Cast, Squeeze,
 * Unsqueeze, Reshape over known values, or of Shape/Size ...  Nothing
 * else is folded."  Shape and Size read no storage; "constant" means a
 * Constant node's output; alias-implied applies to the three cache
 * updates of section 2. */
START_TEST(test_contract_lists)
{
    static const char *const folds[] = {
        "Constant", "Add", "Sub", "Mul", "Neg", "Min", "Max", "Identity",
        "Cast", "Squeeze", "Unsqueeze", "Reshape", "Shape", "Size",
    };
    static const char *const no_read[] = { "Shape", "Size" };
    static const char *const constant[] = { "Constant" };
    size_t n_fold = 0;
    for (int i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *op = oac_op_get((oac_op_id)i);
        bool onnx = oac_domain_is_onnx(op->domain);
        ck_assert_msg((op->fold != NULL) == (onnx && listed(op, folds, N_OF(folds))),
                      "%s: fold", op->op_type);
        n_fold += op->fold != NULL;
        ck_assert_msg(oac_op_has(op, OAC_OPF_NO_STORAGE_READ) ==
                      (onnx && listed(op, no_read, N_OF(no_read))),
                      "%s: no storage read", op->op_type);
        ck_assert_msg(oac_op_has(op, OAC_OPF_CONSTANT) ==
                      (onnx && listed(op, constant, N_OF(constant))),
                      "%s: constant", op->op_type);
        bool update = op == oac_op_find("onnx_alias", "CacheUpdate") ||
                      op == oac_op_find("onnx_alias", "PagedCacheUpdate") ||
                      op == oac_op_find("", "TensorScatter");
        ck_assert_msg(oac_op_has(op, OAC_OPF_CACHE_UPDATE) == update,
                      "%s: cache update", op->op_type);
    }
    ck_assert_uint_eq(n_fold, N_OF(folds));
    /* Control flow aliases through bodies (contract 3). */
    ck_assert_int_eq(oac_op_find("", "If")->alias, OAC_AL_BRANCH);
    ck_assert_int_eq(oac_op_find("", "Loop")->alias, OAC_AL_LOOP);
    ck_assert_int_eq(oac_op_find("", "Scan")->alias, OAC_AL_SCAN);
}
END_TEST

START_TEST(test_section2_ports)
{
    const oac_op *cu = oac_op_get(OAC_OP_CACHE_UPDATE);
    ck_assert_str_eq(cu->axis_attr, "axis");
    ck_assert_int_eq(cu->axis_default, -2);
    ck_assert_int_eq(cu->values_port, 1);
    ck_assert_int_eq(cu->position_port, 2);
    ck_assert_int_eq(cu->page_id_port, -1);
    ck_assert_int_eq(cu->min_inputs, 3);
    ck_assert_int_eq(cu->max_inputs, 3);
    const oac_op *pc = oac_op_get(OAC_OP_PAGED_CACHE_UPDATE);
    ck_assert_int_eq(pc->page_id_port, 1);
    ck_assert_int_eq(pc->values_port, 2);
    ck_assert_int_eq(pc->position_port, 3);
    ck_assert_ptr_null(pc->axis_attr);      /* always axis -2 */
    ck_assert_int_eq(pc->axis_default, -2);
    ck_assert(oac_op_has(pc, OAC_OPF_PAGED));
    ck_assert(!oac_op_has(cu, OAC_OPF_PAGED));
    const oac_op *ts = oac_op_get(OAC_OP_TENSOR_SCATTER);
    ck_assert_int_eq(ts->values_port, 1);
    ck_assert_int_eq(ts->position_port, 2);   /* write_indices */
    ck_assert_int_eq(ts->min_inputs, 2);      /* write_indices is optional */
    ck_assert_int_eq(ts->max_inputs, 3);
    /* Every row without a port says -1, not 0 (the default). */
    const oac_op *add = oac_op_find("", "Add");
    ck_assert_int_eq(add->position_port, -1);
    ck_assert_int_eq(add->values_port, -1);
    ck_assert_int_eq(add->page_id_port, -1);
    ck_assert_int_eq(add->min_inputs, -1);
    ck_assert_int_eq(add->alias, OAC_AL_NONE);
    ck_assert(!oac_op_has(NULL, OAC_OPF_CONSTANT));
    ck_assert(oac_op_enum_ok(ts, "linear", 6));
    ck_assert(oac_op_enum_ok(ts, "circular", 8));
    ck_assert(!oac_op_enum_ok(ts, "circ", 4));
    ck_assert(!oac_op_enum_ok(ts, "linearx", 7));
    ck_assert(!oac_op_enum_ok(ts, "", 0));
    ck_assert(oac_op_enum_ok(cu, "anything", 8));   /* no enum attribute */
}
END_TEST

START_TEST(test_alias_mapping)
{
    const oac_op *cu = oac_op_get(OAC_OP_CACHE_UPDATE);
    ck_assert_int_eq(oac_op_alias_input(cu, 0, 3, 0), 0);
    ck_assert_int_eq(oac_op_alias_input(cu, 1, 3, 0), -1);
    ck_assert_int_eq(oac_op_alias_input(cu, 0, 0, 0), -1);
    /* Loop(M, cond, a, b) -> (a', b', scan...): out i <- in i+2. */
    const oac_op *lp = oac_op_get(OAC_OP_LOOP);
    ck_assert_int_eq(oac_op_alias_input(lp, 0, 4, 0), 2);
    ck_assert_int_eq(oac_op_alias_input(lp, 1, 4, 0), 3);
    ck_assert_int_eq(oac_op_alias_input(lp, 2, 4, 0), -1);  /* a scan output */
    ck_assert_int_eq(oac_op_alias_input(lp, 0, 2, 0), -1);
    ck_assert_int_eq(oac_op_alias_input(lp, 0, 1, 0), -1);
    /* Scan(s0, s1, x) with num_scan_inputs 1: state i <- input i. */
    const oac_op *sc = oac_op_get(OAC_OP_SCAN);
    ck_assert_int_eq(oac_op_alias_input(sc, 0, 3, 1), 0);
    ck_assert_int_eq(oac_op_alias_input(sc, 1, 3, 1), 1);
    ck_assert_int_eq(oac_op_alias_input(sc, 2, 3, 1), -1);
    ck_assert_int_eq(oac_op_alias_input(sc, 0, 3, 4), -1);  /* malformed */
    ck_assert_int_eq(oac_op_alias_input(sc, 0, 3, -1), -1);
    ck_assert_int_eq(oac_op_alias_input(oac_op_get(OAC_OP_IF), 0, 1, 0), -1);
    ck_assert_int_eq(oac_op_alias_input(NULL, 0, 1, 0), -1);
    ck_assert_int_eq(oac_op_alias_input(oac_op_find("", "Add"), 0, 2, 0), -1);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("ops");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, test_onnx_domain);
    tcase_add_test(tc, test_lookup_domains);
    tcase_add_test(tc, test_lookup_every_row);
    tcase_add_test(tc, test_one_row_per_operator);
    tcase_add_test(tc, test_fields_in_range);
    tcase_add_test(tc, test_kernels_distinct);
    tcase_add_test(tc, test_contract_lists);
    tcase_add_test(tc, test_section2_ports);
    tcase_add_test(tc, test_alias_mapping);
    suite_add_tcase(s, tc);
    return s;
}

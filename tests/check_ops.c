/* check_ops.c: lib/ops.c, lib/ops.def — the operator table.  Contract
 * section 2 (ports of CacheUpdate, PagedCacheUpdate, TensorScatter),
 * section 3 "Details" (Loop/Scan carried values, Shape/Size, Constant,
 * the ops known values fold through).
 */
#include "harness.h"
#include "ops.h"

START_TEST(test_lookup_domains)
{
    const oac_op *cu = oac_op_find("onnx_alias", "CacheUpdate");
    ck_assert_ptr_nonnull(cu);
    ck_assert_int_eq(cu->id, OAC_OP_CACHE_UPDATE);
    /* Domain matters: no CacheUpdate in the ONNX domain. */
    ck_assert_ptr_null(oac_op_find("", "CacheUpdate"));
    ck_assert_ptr_null(oac_op_find(NULL, "CacheUpdate"));
    ck_assert_ptr_null(oac_op_find("onnx_alias", "TensorScatter"));
    /* "", NULL and "ai.onnx" are the ONNX domain. */
    ck_assert_ptr_eq(oac_op_find("", "TensorScatter"),
                     oac_op_get(OAC_OP_TENSOR_SCATTER));
    ck_assert_ptr_eq(oac_op_find(NULL, "Loop"), oac_op_get(OAC_OP_LOOP));
    ck_assert_ptr_eq(oac_op_find("ai.onnx", "Scan"), oac_op_get(OAC_OP_SCAN));
    ck_assert_ptr_null(oac_op_find("", "Conv"));
    ck_assert_ptr_null(oac_op_find("", ""));
    ck_assert_ptr_null(oac_op_find("", NULL));
    ck_assert_ptr_null(oac_op_find("", "cacheupdate"));
}
END_TEST

START_TEST(test_rows_consistent)
{
    for (int i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *op = oac_op_get((oac_op_id)i);
        ck_assert_ptr_nonnull(op);
        ck_assert_int_eq(op->id, i);
        ck_assert_ptr_eq(oac_op_find(op->domain, op->op_type), op);
        if (oac_op_has(op, OAC_OPF_CACHE_UPDATE)) {
            /* Every cache update aliases output 0 to input 0 and names its
             * position and values ports inside its input range. */
            ck_assert_int_eq(op->alias, OAC_AL_PORT0);
            ck_assert_int_ge(op->position_port, 0);
            ck_assert_int_lt(op->position_port, op->max_inputs);
            ck_assert_int_ge(op->values_port, 1);
            ck_assert_int_lt(op->values_port, op->max_inputs);
            ck_assert_int_le(op->min_inputs, op->max_inputs);
        }
    }
    ck_assert_ptr_null(oac_op_get(OAC_OP_COUNT));
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
    const oac_op *pc = oac_op_get(OAC_OP_PAGED_CACHE_UPDATE);
    ck_assert_int_eq(pc->page_id_port, 1);
    ck_assert_int_eq(pc->values_port, 2);
    ck_assert_int_eq(pc->position_port, 3);
    ck_assert(oac_op_has(pc, OAC_OPF_PAGED));
    ck_assert(!oac_op_has(cu, OAC_OPF_PAGED));
    const oac_op *ts = oac_op_get(OAC_OP_TENSOR_SCATTER);
    ck_assert_int_eq(ts->values_port, 1);
    ck_assert_int_eq(ts->position_port, 2);   /* write_indices */
    ck_assert_int_eq(ts->min_inputs, 2);
    ck_assert(oac_op_has(oac_op_find("", "Shape"), OAC_OPF_NO_STORAGE_READ));
    ck_assert(oac_op_has(oac_op_find("", "Size"), OAC_OPF_NO_STORAGE_READ));
    ck_assert(!oac_op_has(oac_op_find("", "Identity"), OAC_OPF_NO_STORAGE_READ));
    ck_assert(oac_op_has(oac_op_find("", "Constant"), OAC_OPF_CONSTANT));
    ck_assert(oac_op_has(oac_op_find("", "Reshape"), OAC_OPF_FOLD));
    ck_assert(!oac_op_has(NULL, OAC_OPF_FOLD));
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
    tcase_add_test(tc, test_lookup_domains);
    tcase_add_test(tc, test_rows_consistent);
    tcase_add_test(tc, test_section2_ports);
    tcase_add_test(tc, test_alias_mapping);
    suite_add_tcase(s, tc);
    return s;
}

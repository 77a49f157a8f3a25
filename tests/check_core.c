/* check_core.c: contexts, the allocator, diagnostics, strmap, elem. */
#include "harness.h"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_codes_table)
{
    ck_assert_str_eq(oac_code_name(OAC_ALIAS_CYCLE), "alias-cycle");
    ck_assert_int_eq(oac_code_severity(OAC_ALIAS_IMPLIED), OAC_SEV_WARNING);
    ck_assert_int_eq(oac_code_severity(OAC_METADATA_ALIAS), OAC_SEV_WARNING);
    ck_assert_int_eq(oac_code_severity(OAC_PARSE_ERROR), OAC_SEV_ERROR);
    ck_assert_int_eq(oac_code_lookup("binding-busy"), OAC_BINDING_BUSY);
    ck_assert_int_eq(oac_code_lookup("no-such-code"), -1);
    ck_assert_ptr_null(oac_code_name(OAC_CODE_COUNT));
    for (int i = 0; i < OAC_CODE_COUNT; i++)
        ck_assert_int_eq(oac_code_lookup(oac_code_name(i)), i);
}
END_TEST

START_TEST(test_diag_dedup_and_counts)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = oac_diags_new(ctx);
    oac_where w = { .graph = "g", .node = "n1", .value = "v", .location = "/graph/node/0" };
    ck_assert_int_eq(oac_diag_add(d, OAC_ALIAS_CYCLE, &w, "cycle through '%s'", "v"), 0);
    ck_assert_int_eq(oac_diag_add(d, OAC_ALIAS_CYCLE, &w, "cycle through '%s'", "v"), 0);
    ck_assert_int_eq(oac_diag_add(d, OAC_ALIAS_IMPLIED, NULL, "implied"), 0);
    ck_assert_uint_eq(oac_diags_count(d), 2);
    ck_assert_uint_eq(oac_diags_count_severity(d, OAC_SEV_ERROR), 1);
    ck_assert_uint_eq(oac_diags_count_severity(d, OAC_SEV_WARNING), 1);
    const oac_diag *x = oac_diags_get(d, 0);
    ck_assert_str_eq(x->message, "cycle through 'v'");
    ck_assert_str_eq(x->node, "n1");
    ck_assert_ptr_null(oac_diags_get(d, 1)->node);
    ck_assert_int_eq(oac_diags_find(d, OAC_ALIAS_IMPLIED), 1);
    ck_assert_int_eq(oac_diags_find(d, OAC_ALIAS_HAZARD), -1);
    oac_diags_free(d);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_alloc_chaos)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = oac_diags_new(ctx);
    /* Fail each allocation of one append in turn: never a crash or leak,
     * and the list stays consistent. */
    for (unsigned long n = 1; n < 12; n++) {
        oac_ctx_fail_alloc_after(ctx, n);
        oac_where w = { .graph = "g", .node = "n", .value = "v", .location = "/x" };
        int rc = oac_diag_add(d, OAC_ALIAS_HAZARD, &w, "m%lu", n);
        oac_ctx_fail_alloc_after(ctx, 0);
        if (rc == OAC_ENOMEM)
            ck_assert_str_eq(oac_errmsg(ctx) + 0, oac_errmsg(ctx));
        else
            ck_assert_int_eq(rc, 0);
    }
    ck_assert_uint_gt(oac_diags_count(d), 0);
    oac_diags_free(d);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_strmap)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_strmap m;
    oac_strmap_init(&m, ctx);
    static char keys[1000][8];
    for (int i = 0; i < 1000; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d", i);
        ck_assert_int_eq(oac_strmap_put(&m, keys[i], &keys[i]), 0);
    }
    ck_assert_uint_eq(oac_strmap_count(&m), 1000);
    for (int i = 0; i < 1000; i++)
        ck_assert_ptr_eq(oac_strmap_get(&m, keys[i]), &keys[i]);
    ck_assert_ptr_null(oac_strmap_get(&m, "absent"));
    ck_assert_int_eq(oac_strmap_put(&m, "k7", keys[0]), 0);
    ck_assert_uint_eq(oac_strmap_count(&m), 1000);
    ck_assert_ptr_eq(oac_strmap_get(&m, "k7"), keys[0]);
    oac_strmap_fini(&m);
    oac_ctx_free(ctx);
}
END_TEST

/* A strindex over caller-stored entries: sized to its keys (not a power
 * of two), grown by get_or_add past its reserve, keys of every length
 * the hash's tail handles. */
START_TEST(test_strindex)
{
    oac_ctx *ctx = oac_ctx_new();
    struct entry { int pad; const char *name; };
    static struct entry ent[3000];
    static char keys[3000][32];
    oac_strindex x;
    oac_strindex_init(&x, ctx, ent, sizeof ent[0], offsetof(struct entry, name));
    ck_assert_int_eq(oac_strindex_reserve(&x, 5), 0);
    ck_assert_uint_gt(x.cap * 3, 4 * 5);
    ck_assert_uint_lt(x.cap, 16);
    for (int i = 0; i < 3000; i++) {
        /* Lengths 1 .. 31: "a", "bb", ... then a number. */
        int len = 1 + i % 31;
        for (int k = 0; k < len; k++)
            keys[i][k] = (char)('a' + (i + k) % 26);
        keys[i][len] = '\0';
        if (len > 6)
            snprintf(keys[i] + len - 6, 7, "%06d", i);
        size_t found;
        ck_assert_int_eq(oac_strindex_get_or_add(&x, keys[i], (size_t)i, &found), 0);
        if (found == SIZE_MAX) {
            ent[i].name = keys[i];
        } else {
            ck_assert_str_eq(ent[found].name, keys[i]);
            ent[i].name = "";
        }
    }
    for (int i = 0; i < 3000; i++) {
        size_t e = oac_strindex_get(&x, keys[i]);
        ck_assert_uint_ne(e, SIZE_MAX);
        ck_assert_str_eq(ent[e].name, keys[i]);
        ck_assert_uint_le(e, (size_t)i);
        size_t found;
        ck_assert_int_eq(oac_strindex_get_or_add(&x, keys[i], 2999, &found), 0);
        ck_assert_uint_eq(found, e);
    }
    ck_assert_uint_eq(oac_strindex_get(&x, "absent"), SIZE_MAX);
    ck_assert_uint_eq(oac_strindex_get(&x, ""), SIZE_MAX);
    ck_assert_uint_lt(x.count * 4, x.cap * 3);
    oac_strindex_fini(&x);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_elem)
{
    uint64_t b;
    ck_assert_str_eq(oac_elem_name(10), "FLOAT16");
    ck_assert(oac_elem_bytes(10, 3, &b));
    ck_assert_uint_eq(b, 6);
    ck_assert(oac_elem_bytes(22, 3, &b)); /* INT4: 12 bits -> 2 bytes */
    ck_assert_uint_eq(b, 2);
    ck_assert(!oac_elem_bytes(8, 3, &b));  /* STRING has no fixed size */
    ck_assert(!oac_elem_bytes(11, UINT64_MAX / 2, &b)); /* overflow */
    ck_assert_ptr_null(oac_elem_name(999));
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_codes_table);
    tcase_add_test(tc, test_diag_dedup_and_counts);
    tcase_add_test(tc, test_alloc_chaos);
    tcase_add_test(tc, test_strmap);
    tcase_add_test(tc, test_strindex);
    tcase_add_test(tc, test_elem);
    suite_add_tcase(s, tc);
    return s;
}

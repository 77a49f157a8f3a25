/* check_rulebook.c: the capacity rule and its one wording (lib/rulebook.c;
 * contract 2, 3 and 6), row by row: the verdict of each position, length,
 * capacity and mode, and the message every caller (check, the run's
 * pre-check, the cache kernels) gives for it.
 */
#include "harness.h"
#include <stdint.h>
#include <string.h>

#include "rulebook.h"

typedef struct rule_row {
    const char *name;
    int64_t pos, len, cap;
    oac_cap_mode mode;
    oac_cap_verdict want;
    const char *what, *row;
    const char *says;          /* the whole message; NULL for none */
} rule_row;

static const rule_row rows[] = {
    { "fits exactly", 31, 1, 32, OAC_CAP_NORMAL, OAC_CAP_FITS, "position", "", "" },
    { "one past", 32, 1, 32, OAC_CAP_NORMAL, OAC_CAP_EXCEEDS, "position", "",
      "position 32 + length 1 = 33 exceeds the capacity 32 of 'kv'" },
    { "the issue's example", 40, 1, 32, OAC_CAP_NORMAL, OAC_CAP_EXCEEDS, "position", "",
      "position 40 + length 1 = 41 exceeds the capacity 32 of 'kv'" },
    { "negative, nothing known", -1, -1, -1, OAC_CAP_NORMAL, OAC_CAP_NEGATIVE,
      "position", "", "position -1 is negative (cache 'kv', length not known, "
      "capacity not known)" },
    { "negative row", -3, 2, 8, OAC_CAP_CIRCULAR, OAC_CAP_NEGATIVE, "write_indices",
      "[1] = ", "write_indices [1] = -3 is negative (cache 'kv', length 2, capacity 8)" },
    { "sum past int64", INT64_MAX, 1, 8, OAC_CAP_NORMAL, OAC_CAP_WRAPS, "position", "",
      "position 9223372036854775807 + length 1 overflows and exceeds the capacity 8 "
      "of 'kv'" },
    { "length unknown", 3, -1, 8, OAC_CAP_NORMAL, OAC_CAP_UNKNOWN, "position", "", "" },
    { "capacity unknown", 3, 1, -1, OAC_CAP_NORMAL, OAC_CAP_UNKNOWN, "position", "", "" },
    { "circular wraps the position", 100, 8, 8, OAC_CAP_CIRCULAR, OAC_CAP_FITS,
      "write_indices", "[0] = ", "" },
    { "circular too long", 0, 9, 8, OAC_CAP_CIRCULAR, OAC_CAP_EXCEEDS, "write_indices",
      "[0] = ", "update length 9 exceeds the capacity 8 of 'kv' (circular mode)" },
    { "empty update at the end", 8, 0, 8, OAC_CAP_NORMAL, OAC_CAP_FITS, "position", "", "" },
};

START_TEST(test_rule_rows)
{
    const rule_row *r = &rows[_i];
    oac_cap_verdict v = oac_capacity_rule(r->pos, r->len, r->cap, r->mode);
    ck_assert_msg(v == r->want, "%s: verdict %d, want %d", r->name, v, r->want);
    oac_cap_case c = { .verdict = v, .mode = r->mode, .what = r->what, .row = r->row,
                       .pos_known = true, .pos = r->pos, .len = r->len, .cap = r->cap,
                       .cache = "kv" };
    char buf[256];
    oac_capacity_say(buf, sizeof buf, &c);
    ck_assert_msg(!strcmp(buf, r->says), "%s: says \"%s\"", r->name, buf);
}
END_TEST

START_TEST(test_length_alone_and_cut)
{
    oac_cap_case c = { .verdict = oac_capacity_rule(0, 20, 16, OAC_CAP_NORMAL),
                       .what = "position", .row = "", .pos_known = false,
                       .len = 20, .cap = 16, .cache = "past" };
    char buf[256];
    oac_capacity_say(buf, sizeof buf, &c);
    ck_assert_str_eq(buf, "the update length 20 alone exceeds the capacity 16 of "
                          "'past', whatever the position (never negative)");
    /* A short buffer is cut, never overrun. */
    char small[12];
    memset(small, 'x', sizeof small);
    oac_capacity_say(small, 8, &c);
    ck_assert_uint_eq(strlen(small), 7);
    ck_assert_int_eq(small[8], 'x');
}
END_TEST

START_TEST(test_total_words)
{
    char parts[128], buf[256];
    oac_capacity_parts(parts, sizeof parts, 6, "total", true, 9, 1, "q", 0);
    ck_assert_str_eq(parts, "input 6 'total' = 9 + 1 new position of 'q'");
    oac_capacity_say_total(buf, sizeof buf, OAC_CAP_EXCEEDS, true, 10, parts, "past_key",
                           8, 2);
    ck_assert_str_eq(buf, "the update leaves 10 positions (input 6 'total' = 9 + 1 new "
                          "position of 'q') in 'past_key', whose capacity is 8 (dim 2)");
    oac_capacity_parts(parts, sizeof parts, 5, "seqlens", false, 0, -1, NULL, 1);
    ck_assert_str_eq(parts, "input 5 'seqlens' not known, at least 0 + 1 new");
    oac_capacity_say_total(buf, sizeof buf, OAC_CAP_WRAPS, false, 0, parts, "k", 8, 2);
    ck_assert_str_eq(buf, "the length after the update (input 5 'seqlens' not known, "
                          "at least 0 + 1 new) overflows and exceeds the capacity 8 of 'k'");
    oac_capacity_say_total(buf, sizeof buf, OAC_CAP_FITS, true, 3, parts, "k", 8, 2);
    ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(test_axis)
{
    ck_assert_int_eq(oac_capacity_axis(-2, 4), 2);
    ck_assert_int_eq(oac_capacity_axis(3, 4), 3);
    ck_assert_int_eq(oac_capacity_axis(4, 4), -1);
    ck_assert_int_eq(oac_capacity_axis(-5, 4), -1);
    ck_assert_int_eq(oac_capacity_axis(0, -1), -1);
    ck_assert_int_eq(oac_capacity_axis(0, 0), -1);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("rulebook");
    TCase *tc = tcase_create("capacity");
    tcase_add_loop_test(tc, test_rule_rows, 0, (int)(sizeof rows / sizeof rows[0]));
    tcase_add_test(tc, test_length_alone_and_cut);
    tcase_add_test(tc, test_total_words);
    tcase_add_test(tc, test_axis);
    suite_add_tcase(s, tc);
    return s;
}

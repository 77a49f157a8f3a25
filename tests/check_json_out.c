/* check_json_out.c: the command line's JSON writer (src/json_out.c)
 * writes what jansson's json_dump_callback(j, ..., JSON_INDENT(2)) writes,
 * byte for byte, with `indent` spaces after every newline.
 *
 * The oracle is jansson itself: each tree is dumped both ways and the
 * texts compared, at indents 0, 2 and 9.  The trees: one made to reach
 * every spelling rule of the writer's file top (escapes, UTF-8, empty
 * containers, integers at their limits, reals, nesting), and the JSON,
 * SARIF and GitLab reports of every shipped example, checked.  Where the
 * writer must fail (a string that is not UTF-8, which json_stringn_nocheck
 * can make; nesting past its bound), it fails.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "harness.h"

/* The writer's text of j at indent (malloc'ed), or NULL when it failed. */
static char *ours(const json_t *j, int indent)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    int rc = cli_json_write(j, f, indent);
    ck_assert_int_eq(fclose(f), 0);
    if (rc != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* jansson's text of j, with indent spaces after every newline (malloc'ed). */
static char *theirs(const json_t *j, int indent)
{
    char *t = json_dumps(j, JSON_INDENT(2));
    if (!t)
        return NULL;
    size_t lines = 0;
    for (const char *p = t; *p; p++)
        lines += *p == '\n';
    char *out = malloc(strlen(t) + lines * (size_t)indent + 1), *o = out;
    ck_assert_ptr_nonnull(out);
    for (const char *p = t; *p; p++) {
        *o++ = *p;
        if (*p == '\n')
            for (int k = 0; k < indent; k++)
                *o++ = ' ';
    }
    *o = '\0';
    free(t);
    return out;
}

static void same(const json_t *j, const char *what)
{
    static const int indents[] = { 0, 2, 9 };
    for (size_t i = 0; i < sizeof indents / sizeof indents[0]; i++) {
        char *a = ours(j, indents[i]), *b = theirs(j, indents[i]);
        ck_assert_msg(a && b, "%s: a dump failed (ours %p, jansson's %p)", what, (void *)a,
                      (void *)b);
        if (strcmp(a, b)) {
            size_t k = 0;
            while (a[k] == b[k])
                k++;
            ck_abort_msg("%s, indent %d: differs at byte %zu: ours '%.40s', jansson's '%.40s'",
                         what, indents[i], k, a + k, b + k);
        }
        free(a);
        free(b);
    }
}

/* ---- the spelling rules ---------------------------------------------------- */

START_TEST(test_rules)
{
    json_t *j = json_object();
    /* Rule 2: every byte below 0x20, the two mandatory escapes, '/',
     * UTF-8 of two, three and four bytes, an embedded NUL. */
    char ctl[40];
    for (int c = 1; c < 0x20; c++)
        ctl[c - 1] = (char)c;
    ctl[31] = '"';
    ctl[32] = '\\';
    ctl[33] = '/';
    json_object_set_new(j, "controls", json_stringn(ctl, 34));
    json_object_set_new(j, "nul", json_stringn("a\0b", 3));
    json_object_set_new(j, "utf8", json_string("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 end"));
    json_object_set_new(j, "", json_string(""));
    json_object_set_new(j, "key \"quoted\"\n", json_true());
    /* Rule 1: empty and nested containers. */
    json_object_set_new(j, "empty_array", json_array());
    json_object_set_new(j, "empty_object", json_object());
    json_t *a = json_array();
    json_array_append_new(a, json_array());
    json_array_append_new(a, json_object());
    json_t *inner = json_object();
    json_object_set_new(inner, "x", json_array());
    json_array_append_new(json_object_get(inner, "x"), json_integer(1));
    json_array_append_new(a, inner);
    json_array_append_new(a, json_null());
    json_array_append_new(a, json_false());
    json_object_set_new(j, "nested", a);
    /* Rule 3: integers at their limits, reals. */
    json_t *n = json_array();
    json_array_append_new(n, json_integer(0));
    json_array_append_new(n, json_integer(-1));
    json_array_append_new(n, json_integer(INT64_MAX));
    json_array_append_new(n, json_integer(INT64_MIN));
    json_array_append_new(n, json_real(0.1));
    json_array_append_new(n, json_real(3.0));
    json_array_append_new(n, json_real(-1e300));
    json_array_append_new(n, json_real(6.02e-23));
    json_object_set_new(j, "numbers", n);
    /* Nesting 60 deep (reports go about 8): lines indented by more than
     * the writer's line of 128 spaces. */
    json_t *deep = json_array(), *at = deep;
    for (int d = 0; d < 60; d++) {
        json_t *next = d % 2 ? json_array() : json_object();
        if (json_is_array(at))
            json_array_append_new(at, next);
        else
            json_object_set_new(at, "k", next);
        at = next;
    }
    json_object_set_new(j, "deep", deep);
    same(j, "rules");
    /* An array at the top, as GitLab's report is. */
    json_t *top = json_array();
    json_array_append(top, j);
    json_array_append_new(top, json_string("last"));
    same(top, "top array");
    json_decref(top);
    json_decref(j);
}
END_TEST

/* Invariant 2: what jansson cannot write, the writer refuses. */
START_TEST(test_refused)
{
    static const char *const bad[] = {
        "\xc0\x80",             /* overlong NUL */
        "\xe0\x80\xaf",         /* overlong '/' */
        "\xed\xa0\x80",         /* a surrogate */
        "\xf4\x90\x80\x80",     /* above U+10FFFF */
        "\xe2\x82",             /* cut short */
        "\x80",                 /* a continuation byte first */
        "\xf5\x80\x80\x80",     /* no such first byte */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *j = json_array();
        json_array_append_new(j, json_stringn_nocheck(bad[i], strlen(bad[i])));
        char *t = json_dumps(j, JSON_INDENT(2));
        ck_assert_msg(t == NULL, "jansson wrote bad string %zu", i);
        ck_assert_msg(ours(j, 0) == NULL, "the writer wrote bad string %zu", i);
        json_decref(j);
    }
    /* Nesting past the bound, a scalar at the top, no tree. */
    json_t *deep = json_array(), *at = deep;
    for (int d = 0; d < 80; d++) {
        json_t *next = json_array();
        json_array_append_new(at, next);
        at = next;
    }
    ck_assert_ptr_null(ours(deep, 0));
    json_decref(deep);
    json_t *s = json_string("alone");
    ck_assert_ptr_null(ours(s, 0));
    json_decref(s);
    ck_assert_ptr_null(ours(NULL, 0));
}
END_TEST

/* ---- the reports of every example ------------------------------------------ */

START_TEST(test_example_reports)
{
    const oac_example *ex = &oac_examples[_i];
    fx f;
    fx_example(&f, ex->name);
    fx_check(&f, NULL);
    oac_report_input in = { .path = ex->name, .model = f.m, .diags = f.d, .analysis = f.a };
    json_t *j = oac_report_json(f.ctx, &in);
    ck_assert_ptr_nonnull(j);
    same(j, ex->name);
    json_decref(j);
    j = oac_report_sarif(f.ctx, &in, 1);
    ck_assert_ptr_nonnull(j);
    same(j, ex->name);
    json_decref(j);
    j = oac_report_gitlab(f.ctx, &in, 1);
    ck_assert_ptr_nonnull(j);
    same(j, ex->name);
    json_decref(j);
    fx_end(&f);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("json_out");
    TCase *tc = tcase_create("json_out");
    tcase_add_test(tc, test_rules);
    tcase_add_test(tc, test_refused);
    tcase_add_loop_test(tc, test_example_reports, 0, (int)oac_examples_count);
    suite_add_tcase(s, tc);
    return s;
}

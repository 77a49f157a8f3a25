/* rules.c: the documentation of every diagnostic code (issue 13).
 *
 * Owns the companion table lib/rules.def (why a finding matters, how to
 * fix it, a wrong and a right example, and whether the code is a finding
 * or a failure of the tool), its accessors (oac_code_why, oac_code_help,
 * oac_code_example, oac_code_is_failure), "did you mean" for code names
 * (oac_code_suggest), and the one rendering of a code's documentation as
 * text or Markdown (oac_code_explain): --explain prints it, SARIF's
 * rules carry it as help.text and help.markdown.
 * Contract section 3 (the codes); the man page's DIAGNOSTICS section.
 *
 * Invariants:
 *  1. rules.def has one row per code of include/oac_diag.def, in its
 *     order: the static assertions below fail the build otherwise.
 *  2. Nothing here prints; explain returns a new string.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "oac_int.h"
#include "strbuf.h"

/* The documentation of each code (lib/rules.def), in the codes' order:
 * one row per code, which the assertions below prove. */
enum { RULE_MODEL = 0, RULE_TOOL = 1 };
static const struct {
    int kind;
    const char *why, *fix, *wrong, *right;
} rules[] = {
#define OAC_RULE(id, kind, why, fix, wrong, right) \
    { RULE_##kind, why, fix, wrong, right },
#include "rules.def"
#undef OAC_RULE
};
enum {
#define OAC_RULE(id, kind, why, fix, wrong, right) RULE_AT_##id,
#include "rules.def"
#undef OAC_RULE
    RULE_COUNT
};
_Static_assert((int)RULE_COUNT == (int)OAC_CODE_COUNT,
               "lib/rules.def needs one row per code of oac_diag.def");
#define OAC_RULE(id, kind, why, fix, wrong, right) \
    _Static_assert((int)RULE_AT_##id == (int)OAC_##id, "lib/rules.def: row " #id \
                   " is not in the order of oac_diag.def");
#include "rules.def"
#undef OAC_RULE

const char *oac_code_why(oac_code code)
{
    return (unsigned)code < OAC_CODE_COUNT ? rules[code].why : NULL;
}

const char *oac_code_help(oac_code code)
{
    return (unsigned)code < OAC_CODE_COUNT ? rules[code].fix : NULL;
}

const char *oac_code_example(oac_code code, bool right)
{
    if ((unsigned)code >= OAC_CODE_COUNT)
        return NULL;
    return right ? rules[code].right : rules[code].wrong;
}

bool oac_code_is_failure(oac_code code)
{
    return (unsigned)code < OAC_CODE_COUNT && rules[code].kind == RULE_TOOL;
}

/* A code's letters as compared: case ignored, '_' is '-'
 * ("ALIAS_MISMATCH" is alias-mismatch). */
static int fold(char c)
{
    return c == '_' ? '-' : tolower((unsigned char)c);
}

/* Levenshtein distance of two short names (letters folded), capped at 9. */
static int distance(const char *a, const char *b)
{
    enum { MAX = 48 };
    size_t la = strlen(a), lb = strlen(b);
    int row[MAX + 1];
    if (la > MAX || lb > MAX)
        return 9;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (fold(a[i - 1]) != fold(b[j - 1]));
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] < 9 ? row[lb] : 9;
}

int oac_code_suggest(const char *name)
{
    int best = -1, best_d = 4;
    size_t n = name ? strlen(name) : 0;
    if (!n)
        return -1;
    for (int i = 0; i < OAC_CODE_COUNT; i++) {
        int d = distance(name, oac_code_name((oac_code)i));
        /* "alias-hazrd" and "hazard" are both near "alias-hazard". */
        if (d > 3 && n >= 4 && strstr(oac_code_name((oac_code)i), name))
            d = 3;
        if (d < best_d) {
            best_d = d;
            best = i;
        }
    }
    return best;
}

/* A sentence: s with its first letter capitalized and a full stop,
 * unless its first word is a name (output_alias, alias_of: one with
 * '_', a digit or an upper-case letter), which keeps its spelling. */
static void sentence(oac_sb *b, const char *s)
{
    size_t w = strcspn(s, " ,:;.(");
    bool name = false;
    for (size_t i = 0; i < w; i++)
        name = name || s[i] == '_' || isdigit((unsigned char)s[i]) ||
               isupper((unsigned char)s[i]);
    if (name)
        oac_sb_add(b, "%s.", s);
    else
        oac_sb_add(b, "%c%s.", toupper((unsigned char)s[0]), s + 1);
}

/* Each line of an example, after a prefix ("    " or nothing). */
static void lines(oac_sb *b, const char *prefix, const char *s)
{
    while (*s) {
        size_t n = strcspn(s, "\n");
        oac_sb_add(b, "%s%.*s\n", prefix, (int)n, s);
        s += n;
        if (*s)
            s++;
    }
}

char *oac_code_explain(oac_ctx *ctx, oac_code code, bool markdown)
{
    oac_sb b = { .ctx = ctx };
    if ((unsigned)code >= OAC_CODE_COUNT) {
        oac_err(ctx, OAC_EINVAL, "no such code");
        return NULL;
    }
    const char *name = oac_code_name(code);
    const char *sev = oac_severity_name(oac_code_severity(code));
    if (markdown) {
        oac_sb_add(&b, "**%s** (%s): ", name, sev);
        sentence(&b, oac_code_meaning(code));
        oac_sb_add(&b, "\n\n**Why it matters.** ");
        sentence(&b, rules[code].why);
        oac_sb_add(&b, "\n\n**How to fix.** ");
        sentence(&b, rules[code].fix);
        oac_sb_add(&b, "\n\nWrong:\n\n```\n");
        lines(&b, "", rules[code].wrong);
        oac_sb_add(&b, "```\n\nRight:\n\n```\n");
        lines(&b, "", rules[code].right);
        oac_sb_add(&b, "```\n");
    } else {
        oac_sb_add(&b, "%s (%s): ", name, sev);
        sentence(&b, oac_code_meaning(code));
        oac_sb_add(&b, "\n\nWhy it matters: ");
        sentence(&b, rules[code].why);
        oac_sb_add(&b, "\n\nHow to fix: ");
        sentence(&b, rules[code].fix);
        oac_sb_add(&b, "\n\nWrong:\n");
        lines(&b, "    ", rules[code].wrong);
        oac_sb_add(&b, "\nRight:\n");
        lines(&b, "    ", rules[code].right);
    }
    if (b.failed) {
        oac_dealloc(ctx, b.s);
        oac_err(ctx, OAC_ENOMEM, "out of memory");
        return NULL;
    }
    return b.s;
}

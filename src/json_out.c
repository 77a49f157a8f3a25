/* json_out.c: the command line's JSON writer.
 *
 * Owns cli_json_write (cli.h): a report tree to a stream, as
 * json_dump_callback(tree, ..., JSON_INDENT(2)) writes it, byte for byte,
 * at a quarter of its cost.  jansson hands its dump over a few bytes at a
 * time, looks each container up in a table of the ones it is inside (a
 * cycle check the reports cannot need: they are trees) and decodes every
 * character as UTF-8; on the 2048-layer bench decoder's 3 MB report that
 * was as long as the check itself.
 *
 * Contract: section 4 (the JSON report) says what the report holds; this
 * file only says how it is spelled, which is jansson's:
 *   1. JSON_INDENT(2): a non-empty array or object puts each element on
 *      its own line, indented two spaces a level, with "," after each but
 *      the last and the closing bracket on a line of its own at the outer
 *      level; an empty one is [] or {}.  Keys are followed by ": ".
 *   2. Strings: '"' and '\\' escaped, \b \f \n \r \t, any other byte below
 *      0x20 as \u00XX (upper-case hex); everything else as it is (UTF-8,
 *      '/' unescaped).
 *   3. Integers in decimal; reals exactly as jansson writes them (its own
 *      dump of the one value, a path no report takes today).
 *
 * Invariants:
 *   1. The output is jansson's dump with `indent` spaces after every
 *      newline (an element of an array at that depth);
 *      tests/check_json_out.c compares the two on every example's reports
 *      and on trees made to reach each rule above.
 *   2. A string that is not valid UTF-8 (jansson's json_string refuses to
 *      make one; json_stringn_nocheck could) fails the write, as it fails
 *      jansson's; so do a NULL tree and nesting deeper than MAX_DEPTH.
 *   3. Bytes go to the stream in blocks of up to 64 KiB; a failed write
 *      stops the rest and is reported once, as -1.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_DEPTH 64          /* reports nest about 8 deep */
#define BLOCK 65536

typedef struct writer {
    FILE *out;
    size_t len;
    int indent;               /* spaces after each newline */
    bool failed;
    char buf[BLOCK];
} writer;

static void flush(writer *w)
{
    if (w->len && !w->failed && fwrite(w->buf, 1, w->len, w->out) != w->len)
        w->failed = true;
    w->len = 0;
}

static void put_slow(writer *w, const char *p, size_t n)
{
    while (n && !w->failed) {
        if (w->len == BLOCK)
            flush(w);
        size_t k = BLOCK - w->len < n ? BLOCK - w->len : n;
        memcpy(w->buf + w->len, p, k);
        w->len += k;
        p += k;
        n -= k;
    }
}

/* Most writes are a few bytes into a block with room: one memcpy. */
static inline void put(writer *w, const char *p, size_t n)
{
    if (n <= BLOCK - w->len) {
        memcpy(w->buf + w->len, p, n);
        w->len += n;
    } else {
        put_slow(w, p, n);
    }
}

/* A newline and the indentation of level depth (rule 1): one write from
 * a line of spaces while it is long enough. */
static void newline(writer *w, int depth)
{
    static const char line[] = "\n"
        "                                                                "
        "                                                                ";
    size_t n = (size_t)w->indent + 2 * (size_t)depth;
    if (n < sizeof line - 1) {
        put(w, line, n + 1);
        return;
    }
    put(w, line, sizeof line - 1);
    for (n -= sizeof line - 2; n; ) {
        size_t k = n < sizeof line - 2 ? n : sizeof line - 2;
        put(w, line + 1, k);
        n -= k;
    }
}

/* Length of the UTF-8 sequence at p (at most n bytes, p[0] >= 0x80), 0
 * when it is not a valid one: overlong, a surrogate, above U+10FFFF, or
 * cut short.  The rule jansson and lib/report/str.h apply; src/ may not
 * include lib/ (tests/layers.sh), and tests/check_json_out.c holds this
 * copy to jansson. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (c < 0xC2 || c > 0xF4 || n < len)
        return 0;
    uint32_t cp = c & (0x3Fu >> (len - 1));
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/* Rule 2. */
static int string(writer *w, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n, *run = p;
    put(w, "\"", 1);
    while (p < end) {
        unsigned c = *p;
        if (c >= 0x80) {
            size_t k = utf8_len(p, (size_t)(end - p));
            if (!k)
                return -1;
            p += k;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\') {
            p++;
            continue;
        }
        put(w, (const char *)run, (size_t)(p - run));
        char esc[8];
        const char *e = esc;
        size_t el = 2;
        switch (c) {
        case '"': e = "\\\""; break;
        case '\\': e = "\\\\"; break;
        case '\b': e = "\\b"; break;
        case '\f': e = "\\f"; break;
        case '\n': e = "\\n"; break;
        case '\r': e = "\\r"; break;
        case '\t': e = "\\t"; break;
        default:
            snprintf(esc, sizeof esc, "\\u%04X", c);
            el = 6;
        }
        put(w, e, el);
        run = ++p;
    }
    put(w, (const char *)run, (size_t)(p - run));
    put(w, "\"", 1);
    return 0;
}

static int value(writer *w, const json_t *j, int depth);

static int array(writer *w, const json_t *j, int depth)
{
    size_t n = json_array_size(j);
    put(w, "[", 1);
    for (size_t i = 0; i < n; i++) {
        newline(w, depth + 1);
        if (value(w, json_array_get(j, i), depth + 1))
            return -1;
        if (i + 1 < n)
            put(w, ",", 1);
    }
    if (n)
        newline(w, depth);
    put(w, "]", 1);
    return 0;
}

static int object(writer *w, const json_t *j, int depth)
{
    void *it = json_object_iter((json_t *)j);
    bool any = it != NULL;
    put(w, "{", 1);
    while (it) {
        void *next = json_object_iter_next((json_t *)j, it);
        newline(w, depth + 1);
        if (string(w, json_object_iter_key(it), json_object_iter_key_len(it)))
            return -1;
        put(w, ": ", 2);
        if (value(w, json_object_iter_value(it), depth + 1))
            return -1;
        if (next)
            put(w, ",", 1);
        it = next;
    }
    if (any)
        newline(w, depth);
    put(w, "}", 1);
    return 0;
}

/* Rule 3's reals: jansson's own spelling of the one value. */
static int real(writer *w, const json_t *j)
{
    char *t = json_dumps(j, JSON_ENCODE_ANY);
    if (!t)
        return -1;
    put(w, t, strlen(t));
    free(t);
    return 0;
}

static int value(writer *w, const json_t *j, int depth)
{
    if (!j || depth > MAX_DEPTH)
        return -1;
    char num[32];
    switch (json_typeof(j)) {
    case JSON_OBJECT: return object(w, j, depth);
    case JSON_ARRAY: return array(w, j, depth);
    case JSON_STRING: return string(w, json_string_value(j), json_string_length(j));
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
        put(w, num, strlen(num));
        return 0;
    case JSON_REAL: return real(w, j);
    case JSON_TRUE: put(w, "true", 4); return 0;
    case JSON_FALSE: put(w, "false", 5); return 0;
    case JSON_NULL: put(w, "null", 4); return 0;
    }
    return -1;
}

int cli_json_write(const json_t *j, FILE *out, int indent)
{
    writer *w = malloc(sizeof *w);
    if (!w)
        return -1;
    w->out = out;
    w->len = 0;
    w->indent = indent < 0 ? 0 : indent;
    w->failed = false;
    int rc = j && (json_is_object(j) || json_is_array(j)) ? value(w, j, 0) : -1;
    flush(w);
    rc = rc || w->failed ? -1 : 0;
    free(w);
    return rc;
}

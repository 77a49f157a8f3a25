/* report/str.h: JSON strings for the JSON and SARIF reports (contract,
 * section 4).
 *
 * Owns oac_json_str: names, messages and paths come from the model file
 * and the command line as bytes, which ONNX (proto2) does not check for
 * UTF-8, while a JSON string must be UTF-8 (jansson refuses anything
 * else).  Invariant: every byte sequence gives a string, so an odd name
 * can never cost a model its report; valid UTF-8 is kept as is, and each
 * byte that is not part of a valid sequence becomes U+FFFD.
 */
#ifndef OAC_REPORT_STR_H
#define OAC_REPORT_STR_H

#include <jansson.h>
#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static inline size_t oac_utf8_len(const unsigned char *s, size_t n)
{
    size_t len;
    unsigned int cp;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        cp = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        cp = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    /* Overlong forms, surrogates and code points past U+10FFFF. */
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* Whether s is valid UTF-8 throughout. */
static inline bool oac_utf8_valid(const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0, k; i < n; i += k)
        if (!(k = oac_utf8_len((const unsigned char *)s + i, n - i)))
            return false;
    return true;
}

/* json_string that never refuses for bad UTF-8 (NULL only when out of
 * memory); s must not be NULL. */
static inline json_t *oac_json_str(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    size_t n = strlen(s);
    if (n > (SIZE_MAX - 1) / 3)
        return NULL;
    /* jansson's allocator, as for the rest of the report's memory. */
    json_malloc_t jmalloc;
    json_free_t jfree;
    json_get_alloc_funcs(&jmalloc, &jfree);
    char *t = jmalloc(3 * n + 1);   /* each bad byte: 3 bytes of U+FFFD */
    if (!t)
        return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, o = 0;
    while (i < n) {
        size_t k = oac_utf8_len(p + i, n - i);
        if (k) {
            memcpy(t + o, p + i, k);
            o += k;
            i += k;
        } else {
            memcpy(t + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    t[o] = '\0';
    j = json_string(t);
    jfree(t);
    return j;
}

#endif /* OAC_REPORT_STR_H */

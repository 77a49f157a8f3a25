/* strbuf.c: the text outputs' growing string (strbuf.h).
 *
 * Owns oac_sb_add, oac_sb_raw, oac_sb_flat.  Contract: section 5, text
 * output.  Invariants: strbuf.h's (a failed append leaves `failed` set
 * and the string as it was).
 */
#include <stdarg.h>
#include <string.h>

#include "strbuf.h"

/* Append n bytes of s and a NUL. */
static void append(oac_sb *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (oac_grow(b->ctx, (void **)&b->s, &b->cap, b->len + n + 1, 1) != OAC_OK) {
        b->failed = true;
        return;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void oac_sb_add(oac_sb *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *piece = oac_vasprintf(b->ctx, fmt, ap);
    va_end(ap);
    if (!piece) {
        b->failed = true;
        return;
    }
    append(b, piece, strlen(piece));
    oac_dealloc(b->ctx, piece);
}

void oac_sb_raw(oac_sb *b, const char *s)
{
    append(b, s, strlen(s));
}

void oac_sb_flat(oac_sb *b, const char *s)
{
    size_t start = b->len;
    oac_sb_raw(b, s ? s : "");
    for (size_t i = start; !b->failed && i < b->len; i++)
        if ((unsigned char)b->s[i] < 0x20 || b->s[i] == 0x7f)
            b->s[i] = ' ';
}

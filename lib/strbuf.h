/* strbuf.h: a growing string the text outputs build (the text report,
 * annotate's text, --explain).
 *
 * Owns oac_sb: append formatted (oac_sb_add), as is (oac_sb_raw) or with
 * control characters flattened to spaces (oac_sb_flat, so a name from a
 * model cannot break a line).  Contract: section 5, text output.
 *
 * Invariants:
 *  1. After the first failed allocation `failed` is true and every later
 *     append does nothing; the caller frees `s` with oac_dealloc and
 *     reports out of memory.  Otherwise `s` is NUL-terminated (or NULL
 *     when nothing was appended) and allocated through the context, so
 *     the allocation-failure tests reach every path.
 */
#ifndef OAC_STRBUF_H
#define OAC_STRBUF_H

#include "oac_int.h"

typedef struct oac_sb {
    oac_ctx *ctx;
    char *s;
    size_t len, cap;
    bool failed;
} oac_sb;

void oac_sb_add(oac_sb *b, const char *fmt, ...) OAC_PRINTF(2, 3);
void oac_sb_raw(oac_sb *b, const char *s);
void oac_sb_flat(oac_sb *b, const char *s);

#endif

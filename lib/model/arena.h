/* model/arena.h: a bump allocator that owns every byte of a parsed message.
 *
 * Owns struct oac_arena.  A loaded model's protobuf-c tree is decoded
 * into one arena by model/decode.c (contract 1: the tree is graph-sized,
 * payloads stay in the mapping), so the tree is released at once by
 * oac_arena_free and nothing ever tries to free memory that points into
 * a file mapping.
 *
 * Invariants:
 *  1. Every chunk comes from oac_alloc on the arena's context, so
 *     oac_ctx_fail_alloc_after reaches arena growth too.
 *  2. Blocks are aligned for 64-bit integers, doubles and pointers (what
 *     protobuf-c structs and the shapes pass hold) and never move; byte
 *     blocks (oac_arena_bytes: strings, copied bytes) are not aligned.
 *  3. A failed allocation returns NULL; nothing is released before
 *     oac_arena_free.
 *  4. In an arena from oac_arena_new_zeroed every block is zero-filled
 *     when handed out (its chunks and big blocks are oac_calloc'd, and
 *     no byte is handed out twice).
 */
#ifndef OAC_ARENA_H
#define OAC_ARENA_H

#include "oac_int.h"

typedef struct oac_arena oac_arena;

oac_arena *oac_arena_new(oac_ctx *ctx);
/* An arena whose blocks come zero-filled (the decoder's: a message then
 * needs only its non-zero words written). */
oac_arena *oac_arena_new_zeroed(oac_ctx *ctx);
bool oac_arena_zeroed(const oac_arena *a);
void oac_arena_free(oac_arena *a);            /* NULL is fine */

/* What the inline fast paths see: the first member of struct oac_arena
 * (model/arena.c), the free bytes [cur, lim) of the newest chunk.  Aligned
 * blocks are taken from the bottom (cur up), byte blocks from the top
 * (lim down), so strings pack without padding and without a chunk of
 * their own. */
typedef struct oac_arena_head {
    unsigned char *cur, *lim;
} oac_arena_head;
#define OAC_ARENA_ALIGN 8
void *oac_arena_alloc_slow(oac_arena *a, size_t n);
void *oac_arena_bytes_slow(oac_arena *a, size_t n);

/* n bytes aligned to OAC_ARENA_ALIGN; NULL on OOM (ctx errmsg set).
 * Inline: the decoder allocates a few times per field of a model. */
static inline void *oac_arena_alloc(oac_arena *a, size_t n)
{
    oac_arena_head *h = (oac_arena_head *)a;
    size_t r = (n + OAC_ARENA_ALIGN - 1) & ~(size_t)(OAC_ARENA_ALIGN - 1);
    /* r - 1 < free: 0 < r <= free (0 is n == 0 or a rounding overflow,
     * which the slow path sorts out) */
    if (r - 1 < (size_t)(h->lim - h->cur)) {
        void *p = h->cur;
        h->cur += r;
        return p;
    }
    return oac_arena_alloc_slow(a, n);
}
/* n bytes with no alignment (strings, copied bytes); NULL on OOM.  The
 * decoder copies a quarter of a million names out of a large graph:
 * rounding each to 8 bytes costs a quarter more. */
static inline void *oac_arena_bytes(oac_arena *a, size_t n)
{
    oac_arena_head *h = (oac_arena_head *)a;
    if (n - 1 < (size_t)(h->lim - h->cur)) {
        h->lim -= n;
        return h->lim;
    }
    return oac_arena_bytes_slow(a, n);
}

/* Bytes handed out so far (for tests of "memory follows the graph"):
 * counted from the chunks' fill, not on every allocation. */
size_t oac_arena_used(const oac_arena *a);

#endif /* OAC_ARENA_H */

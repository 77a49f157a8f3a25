/* model/arena.c: the bump allocator behind every parsed message (model/arena.h).
 *
 * Contract 1 (loading without copying payloads): model/decode.c allocates the
 * decoded tree here.  Chunks grow geometrically from 16 KiB up to 2 MiB
 * so a small model costs one or two allocations and a large graph a few
 * dozen; large chunks are mapped at once (oac_prefault), the 2 MiB ones
 * as transparent huge pages (HUGE_CHUNK), and capping them keeps the
 * unused end of the newest one bounded.  A request of 8 KiB or more that does not fit in the newest
 * chunk gets a block of its own.  Aligned blocks grow up from the bottom
 * of the newest chunk and unaligned byte blocks down from its top.
 * In a zeroed arena (the decoder's) chunks and big blocks come from
 * oac_calloc, so the decoder need not clear the messages it allocates.
 * Zeroing is not free: on the 2048-layer decoder the zeroed arena costs
 * about 250 more page faults (some cleared memory is never used), which
 * only the decoder's saved initialisation pays for, so other arenas take
 * oac_alloc's memory.
 *
 * Invariants: see model/arena.h.  Chunks and big blocks form two singly linked
 * lists freed in oac_arena_free; no block is freed before.
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "model/arena.h"

/* Everything allocated here (protobuf-c structs, strings, arrays of
 * scalars and pointers, oac_dimref) needs at most the alignment of a
 * 64-bit integer, a double or a pointer; not max_align_t's 16 (long
 * double), which would waste 8 bytes on half of the many short strings. */
typedef union arena_align_u {
    uint64_t u;
    double d;
    void *p;
    size_t z;
} arena_align_u;
#define ARENA_ALIGN (alignof(arena_align_u))
_Static_assert(ARENA_ALIGN == OAC_ARENA_ALIGN, "model/arena.h's fast path aligns as model/arena.c");
#define CHUNK_MIN ((size_t)16 * 1024)
/* From HUGE_CHUNK on, a chunk is one transparent huge page: its block
 * has HUGE_CHUNK bytes of slack (address space only, never touched) so
 * that the data can start on a HUGE_CHUNK boundary, and the kernel maps
 * it with one fault instead of 512 (the 2048-layer decoder's tree is 14
 * MB: seven of them, where 4 KiB pages cost it half its system time). */
#define HUGE_CHUNK ((size_t)2 * 1024 * 1024)
#define CHUNK_MAX HUGE_CHUNK
/* Requests from this size up (the arrays of a large graph) that do not
 * fit get a block of their own instead of leaving the rest of a chunk
 * unused. */
#define BIG_MIN ((size_t)8 * 1024)

struct chunk {
    struct chunk *next;
    unsigned char *data;   /* size bytes: right after the header, or the
                              aligned huge page inside the block */
    alignas(arena_align_u) unsigned char inline_data[];
};

struct big {
    struct big *next;
    alignas(arena_align_u) unsigned char data[];
};

struct oac_arena {
    oac_arena_head h;      /* first: model/arena.h's fast path reads it */
    oac_ctx *ctx;
    struct chunk *head;    /* newest first; blocks come from the newest */
    struct big *big;       /* big blocks, newest first */
    size_t next_size;
    /* bytes handed out from big blocks and from the chunks before the
     * newest; the newest chunk's are [data, cur) and [lim, top) */
    size_t used;
    unsigned char *top;
    bool zeroed;
};

oac_arena *oac_arena_new(oac_ctx *ctx)
{
    oac_arena *a = oac_calloc(ctx, 1, sizeof *a);
    if (a) {
        a->ctx = ctx;
        a->next_size = CHUNK_MIN;
        /* no chunk yet: an empty range at a valid address */
        a->h.cur = a->h.lim = a->top = (unsigned char *)a;
    }
    return a;
}

oac_arena *oac_arena_new_zeroed(oac_ctx *ctx)
{
    oac_arena *a = oac_arena_new(ctx);
    if (a)
        a->zeroed = true;
    return a;
}

bool oac_arena_zeroed(const oac_arena *a)
{
    return a->zeroed;
}

/* Memory for a chunk or a big block. */
static void *block(oac_arena *a, size_t n)
{
    return a->zeroed ? oac_calloc(a->ctx, 1, n) : oac_alloc(a->ctx, n);
}

void oac_arena_free(oac_arena *a)
{
    if (!a)
        return;
    struct chunk *c = a->head;
    while (c) {
        struct chunk *next = c->next;
        oac_dealloc(a->ctx, c);
        c = next;
    }
    struct big *b = a->big;
    while (b) {
        struct big *next = b->next;
        oac_dealloc(a->ctx, b);
        b = next;
    }
    oac_dealloc(a->ctx, a);
}

static void *nomem(oac_arena *a, size_t n)
{
    oac_err(a->ctx, OAC_ENOMEM, "out of memory (%zu bytes)", n);
    return NULL;
}

static void *big_alloc(oac_arena *a, size_t n)
{
    if (n > SIZE_MAX - sizeof(struct big))
        return nomem(a, n);
    struct big *b = block(a, sizeof(struct big) + n);
    if (!b)
        return NULL;
    oac_prefault(b->data, n);
    b->next = a->big;
    a->big = b;
    a->used += n;
    return b->data;
}

/* Make the newest chunk have n free bytes (n < BIG_MIN); false on OOM. */
static bool room_for(oac_arena *a, size_t n)
{
    if ((size_t)(a->h.lim - a->h.cur) >= n)
        return true;
    size_t size = a->next_size;
    bool huge = size >= HUGE_CHUNK;
    struct chunk *c = block(a, sizeof(struct chunk) + size + (huge ? HUGE_CHUNK : 0));
    if (!c)
        return false;
    c->data = c->inline_data;
    if (huge) {
        c->data = (unsigned char *)(((uintptr_t)c->inline_data + HUGE_CHUNK - 1) &
                                    ~(uintptr_t)(HUGE_CHUNK - 1));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        (void)madvise(c->data, size, MADV_HUGEPAGE);   /* a hint; 4 KiB pages otherwise */
#endif
    }
    /* Chunks are filled to the end (but the newest), so mapping their
     * pages at once saves a fault per page. */
    oac_prefault(c->data, size);
    if (a->head)
        a->used += (size_t)(a->h.cur - a->head->data) + (size_t)(a->top - a->h.lim);
    c->next = a->head;
    a->head = c;
    a->h.cur = c->data;
    a->h.lim = a->top = c->data + size;
    if (a->next_size < CHUNK_MAX)
        a->next_size *= 2;
    return true;
}

void *oac_arena_alloc_slow(oac_arena *a, size_t n)
{
    if (n == 0)
        n = 1;
    /* Round up so the next block stays aligned; overflow means no. */
    if (n > SIZE_MAX - ARENA_ALIGN)
        return nomem(a, n);
    n = (n + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
    if (n >= BIG_MIN)
        return big_alloc(a, n);
    if (!room_for(a, n))
        return NULL;
    void *p = a->h.cur;
    a->h.cur += n;
    return p;
}

void *oac_arena_bytes_slow(oac_arena *a, size_t n)
{
    if (n == 0)
        n = 1;
    if (n >= BIG_MIN)
        return big_alloc(a, n);
    if (!room_for(a, n))
        return NULL;
    /* lim need not stay aligned: aligned blocks only compare it with cur. */
    a->h.lim -= n;
    return a->h.lim;
}

size_t oac_arena_used(const oac_arena *a)
{
    if (!a->head)
        return a->used;
    return a->used + (size_t)(a->h.cur - a->head->data) + (size_t)(a->top - a->h.lim);
}

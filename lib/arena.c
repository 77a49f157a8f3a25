/* arena.c: the bump allocator behind every parsed message (arena.h).
 *
 * Contract 1 (loading without copying payloads): protobuf-c allocates the
 * unpacked tree here.  Chunks grow geometrically from 16 KiB up to 1 MiB
 * so a small model costs one or two allocations and a large graph a few
 * hundred; a request of 8 KiB or more gets a block of its own.
 *
 * Invariants: see arena.h.  Chunks form a singly linked list freed in
 * oac_arena_free; small blocks have no per-block free, big blocks are
 * released by the protobuf-c allocator's free (a doubly linked list).
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

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
#define CHUNK_MIN ((size_t)16 * 1024)
#define CHUNK_MAX ((size_t)1024 * 1024)
/* Requests from this size up get a block of their own, which pb_free
 * releases: protobuf-c's scratch (the scanned-member slabs of a message
 * with many fields, about 4 MiB for a graph of 50 000 nodes) is freed
 * as soon as that message is unpacked instead of living as long as the
 * tree. */
#define BIG_MIN ((size_t)8 * 1024)

struct chunk {
    struct chunk *next;
    size_t size;   /* usable bytes after the header */
    size_t used;
    alignas(arena_align_u) unsigned char data[];
};

struct big {
    struct big *next, *prev;
    size_t size;
    alignas(arena_align_u) unsigned char data[];
};

struct oac_arena {
    oac_ctx *ctx;
    struct chunk *head;
    struct big *big;       /* live big blocks, newest first */
    size_t next_size;
    size_t used;
    bool failed;
};

oac_arena *oac_arena_new(oac_ctx *ctx)
{
    oac_arena *a = oac_calloc(ctx, 1, sizeof *a);
    if (a) {
        a->ctx = ctx;
        a->next_size = CHUNK_MIN;
    }
    return a;
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
    a->failed = true;
    oac_err(a->ctx, OAC_ENOMEM, "out of memory (%zu bytes)", n);
    return NULL;
}

static void *big_alloc(oac_arena *a, size_t n)
{
    if (n > SIZE_MAX - sizeof(struct big))
        return nomem(a, n);
    struct big *b = oac_alloc(a->ctx, sizeof(struct big) + n);
    if (!b) {
        a->failed = true;
        return NULL;
    }
    b->size = n;
    b->prev = NULL;
    b->next = a->big;
    if (a->big)
        a->big->prev = b;
    a->big = b;
    a->used += n;
    return b->data;
}

void *oac_arena_alloc(oac_arena *a, size_t n)
{
    if (n == 0)
        n = 1;
    /* Round up so the next block stays aligned; overflow means no. */
    if (n > SIZE_MAX - ARENA_ALIGN)
        return nomem(a, n);
    n = (n + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
    if (n >= BIG_MIN)
        return big_alloc(a, n);
    struct chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t size = a->next_size;
        c = oac_alloc(a->ctx, sizeof(struct chunk) + size);
        if (!c) {
            a->failed = true;
            return NULL;
        }
        c->size = size;
        c->used = 0;
        c->next = a->head;
        a->head = c;
        if (a->next_size < CHUNK_MAX)
            a->next_size *= 2;
    }
    void *p = c->data + c->used;
    c->used += n;
    a->used += n;
    return p;
}

/* How deep arena_release looks among the live big blocks: the slabs it
 * is meant for are among the newest, and protobuf-c's cleanup after a
 * failed unpack frees every pointer of the tree, which must not cost
 * a search of all big blocks each. */
#define RELEASE_DEPTH 64

/* Release p when it is one of the newest live big blocks (protobuf-c
 * frees a message's slabs right after allocating what the message
 * holds); anything else is released with the arena. */
static void arena_release(oac_arena *a, void *p)
{
    int depth = 0;
    for (struct big *b = a->big; b && p && depth < RELEASE_DEPTH; b = b->next, depth++) {
        if ((void *)b->data != p)
            continue;
        if (b->prev)
            b->prev->next = b->next;
        else
            a->big = b->next;
        if (b->next)
            b->next->prev = b->prev;
        a->used -= b->size;
        oac_dealloc(a->ctx, b);
        return;
    }
}

bool oac_arena_failed(const oac_arena *a)
{
    return a->failed;
}

size_t oac_arena_used(const oac_arena *a)
{
    return a->used;
}

static void *pb_alloc(void *data, size_t n)
{
    return oac_arena_alloc(data, n);
}

static void pb_free(void *data, void *p)
{
    arena_release(data, p);
}

ProtobufCAllocator oac_arena_allocator(oac_arena *a)
{
    ProtobufCAllocator al = { pb_alloc, pb_free, a };
    return al;
}

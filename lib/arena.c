/* arena.c: the bump allocator behind every parsed message (arena.h).
 *
 * Contract 1 (loading without copying payloads): protobuf-c allocates the
 * unpacked tree here.  Chunks grow geometrically from 16 KiB up to 1 MiB
 * so a small model costs one or two allocations and a large graph a few
 * hundred; a request larger than a chunk gets a chunk of its own.
 *
 * Invariants: see arena.h.  Chunks form a singly linked list freed in
 * oac_arena_free; there is no per-block free.
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

#define ARENA_ALIGN (alignof(max_align_t))
#define CHUNK_MIN ((size_t)16 * 1024)
#define CHUNK_MAX ((size_t)1024 * 1024)

struct chunk {
    struct chunk *next;
    size_t size;   /* usable bytes after the header */
    size_t used;
    alignas(max_align_t) unsigned char data[];
};

struct oac_arena {
    oac_ctx *ctx;
    struct chunk *head;
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
    oac_dealloc(a->ctx, a);
}

void *oac_arena_alloc(oac_arena *a, size_t n)
{
    if (n == 0)
        n = 1;
    /* Round up so the next block stays aligned; overflow means no. */
    if (n > SIZE_MAX - ARENA_ALIGN) {
        a->failed = true;
        oac_err(a->ctx, OAC_ENOMEM, "out of memory (%zu bytes)", n);
        return NULL;
    }
    n = (n + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
    struct chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t size = n > a->next_size ? n : a->next_size;
        if (size > SIZE_MAX - sizeof(struct chunk)) {
            a->failed = true;
            oac_err(a->ctx, OAC_ENOMEM, "out of memory (%zu bytes)", n);
            return NULL;
        }
        c = oac_alloc(a->ctx, sizeof(struct chunk) + size);
        if (!c) {
            a->failed = true;
            return NULL;
        }
        c->size = size;
        c->used = 0;
        /* Keep filling the newest chunk unless this one was a one-off big
         * block; then the old head may still have room. */
        if (size > a->next_size && a->head) {
            c->next = a->head->next;
            a->head->next = c;
            c->used = n;
            a->used += n;
            return c->data;
        }
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
    (void)data;
    (void)p;   /* released with the arena */
}

ProtobufCAllocator oac_arena_allocator(oac_arena *a)
{
    ProtobufCAllocator al = { pb_alloc, pb_free, a };
    return al;
}

/* arena.h: a bump allocator that owns every byte of a parsed message.
 *
 * Owns struct oac_arena.  A loaded model's protobuf-c tree is unpacked
 * into one arena (contract 1: the tree is graph-sized, payloads stay in
 * the mapping), so the tree is released at once by oac_arena_free and
 * nothing ever tries to free memory that points into a file mapping.
 *
 * Invariants:
 *  1. Every chunk comes from oac_alloc on the arena's context, so
 *     oac_ctx_fail_alloc_after reaches arena growth too.
 *  2. Blocks are aligned for 64-bit integers, doubles and pointers (what
 *     protobuf-c structs and the shapes pass hold) and never move.
 *  3. A failed allocation sets `failed`; protobuf-c only sees NULL, so the
 *     loader reads the flag to tell out-of-memory from a bad file.
 */
#ifndef OAC_ARENA_H
#define OAC_ARENA_H

#include <protobuf-c/protobuf-c.h>

#include "oac_int.h"

typedef struct oac_arena oac_arena;

oac_arena *oac_arena_new(oac_ctx *ctx);
void oac_arena_free(oac_arena *a);            /* NULL is fine */
void *oac_arena_alloc(oac_arena *a, size_t n);  /* NULL (and failed) on OOM */
bool oac_arena_failed(const oac_arena *a);
/* Bytes handed out so far (for tests of "memory follows the graph"). */
size_t oac_arena_used(const oac_arena *a);
/* A protobuf-c allocator over the arena; free releases blocks of 8 KiB
 * and more (protobuf-c's scratch), and is a no-op for smaller ones. */
ProtobufCAllocator oac_arena_allocator(oac_arena *a);

#endif /* OAC_ARENA_H */

/* models.h: the example models, one table for examples, tests and docs.
 *
 * Each row names a model, the builder function that makes it, the
 * diagnostic codes a conforming checker reports for it (contract section
 * 3; none for a valid model) and a one-line description.  Rows come in
 * pairs: a model and its `_broken` twin that breaks exactly one rule.
 *
 * examples/gen_examples writes every row to examples/<name>.onnx in the
 * build folder; tests link examples/models.c to iterate the table (so it
 * has no main()).  Row names are fixed: other tests look them up.
 */
#ifndef OAC_EXAMPLES_MODELS_H
#define OAC_EXAMPLES_MODELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oac_build.h"

#define OAC_EXAMPLE_MAX_CODES 4

typedef struct oac_example {
    const char *name;        /* file name without ".onnx" */
    /* Fill mb, a fresh builder from oac_mb_new.  Failures are the
     * builder's sticky ones, seen by oac_mb_pack. */
    void (*build)(oac_mb *mb);
    /* Contract codes ("alias-mismatch") expected from `check`, each once
     * however often it is reported; NULL-terminated, empty when valid. */
    const char *expect[OAC_EXAMPLE_MAX_CODES + 1];
    const char *description;
} oac_example;

extern const oac_example oac_examples[];
extern const size_t oac_examples_count;

/* The row of that name, or NULL. */
const oac_example *oac_example_find(const char *name);
/* Build a row into a new malloc'ed ONNX buffer (free() it). */
int oac_example_pack(oac_ctx *ctx, const oac_example *ex, uint8_t **out,
                     size_t *out_len);
/* Build a row and write it to path. */
int oac_example_write(oac_ctx *ctx, const oac_example *ex, const char *path);

/* The toy decoder with any number of layers (the benchmark uses 2048):
 * aliased, K/V caches READ_WRITE and updated in place by CacheUpdate at
 * graph input `position`; otherwise present = Concat(past, new). */
void oac_example_toy_decoder(oac_mb *mb, int layers, bool aliased);
/* The same decoder at other sizes (the benchmark's weights): caches
 * [1, heads, OAC_TOY_MAX_LEN, head_size], projections q, k, v of
 * hidden x (heads * head_size) and o of (heads * head_size) x hidden,
 * embedding OAC_TOY_VOCAB x hidden, lm_head hidden x OAC_TOY_VOCAB, all
 * FLOAT initializers; scale 1 / sqrt(head_size).  Weight bytes:
 * 4 * (4 * layers * hidden * heads * head_size + 2 * OAC_TOY_VOCAB *
 * hidden).  oac_example_toy_decoder is this with OAC_TOY_HEADS,
 * OAC_TOY_HEAD_SIZE and OAC_TOY_HIDDEN.  OAC_EINVAL (and mb untouched)
 * unless heads, head_size, hidden and heads * head_size are in
 * 1..OAC_TOY_MAX_DIM; otherwise OAC_OK, builder failures being sticky. */
int oac_example_toy_decoder_sized(oac_mb *mb, int layers, bool aliased, int heads,
                                  int head_size, int hidden);

/* Toy decoder dimensions, for tests that feed it (all rows use them).
 * The vocabulary holds the tokens `run` feeds by default (1, 2, 3, ...,
 * contract 8) until past the capacity, where the run must stop with
 * capacity-overflow at the update, not at the embedding. */
enum {
    OAC_TOY_LAYERS = 2, OAC_TOY_HEADS = 2, OAC_TOY_HEAD_SIZE = 4,
    OAC_TOY_HIDDEN = 8, OAC_TOY_MAX_LEN = 16, OAC_TOY_VOCAB = 32
};
/* The paged decoder of contract 11 (examples/paged_decoder.c): two layers,
 * K/V caches FLOAT16.  paged: each cache a Sequence of pages [2,
 * OAC_PAGED_KV_HEADS, OAC_PAGED_PAGE_SIZE, OAC_PAGED_HEAD_SIZE] in
 * declarations FP16_PAGE (0, IEEE half), FP8_PAGE (1, E4M3FN), INT4_PAGE
 * (2) and INT2_PAGE (3), written by PagedCacheUpdate at graph inputs
 * page_id and position and read by PagedCacheAttention; otherwise its
 * dense twin: caches [2, OAC_PAGED_KV_HEADS, OAC_PAGED_MAX_LEN,
 * OAC_PAGED_HEAD_SIZE] updated by CacheUpdate at `position`, attention in
 * ONNX operators.  Same weights; outputs `logits` and l<i>_u (the updated
 * caches).  broken: layer 0's attention reads the pre-update name
 * (alias-hazard). */
void oac_example_paged_decoder(oac_mb *mb, bool paged, bool broken);
enum {
    OAC_PAGED_HEADS = 4, OAC_PAGED_KV_HEADS = 2, OAC_PAGED_HEAD_SIZE = 8,
    OAC_PAGED_HIDDEN = 32, OAC_PAGED_VOCAB = 600, OAC_PAGED_PAGE_SIZE = 16,
    OAC_PAGED_MAX_LEN = 512
};
#define OAC_PAGED_INT4_SCALE 0.25f
#define OAC_PAGED_INT2_SCALE 0.75f

/* Largest dimension oac_example_toy_decoder_sized accepts. */
enum { OAC_TOY_MAX_DIM = 65536 };

#endif /* OAC_EXAMPLES_MODELS_H */

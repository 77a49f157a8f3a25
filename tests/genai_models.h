/* genai_models.h: builder-made look-alikes of the decoders ONNX Runtime
 * GenAI ships (contract, section 7; issue 10, acceptance 2), for the tests
 * of `annotate`: tests/check_annotate.c (the library) and
 * tests/annotate_models.c (writes them for tests/cli_annotate.sh).
 *
 * Each row is a small decoder built with the public builder and, where
 * GenAI would have one, the genai_config.json written beside it as
 * <name>.genai_config.json.  Which pairs a row has and what annotate must
 * say of each is the tests' business, not this table's.
 */
#ifndef OAC_TESTS_GENAI_MODELS_H
#define OAC_TESTS_GENAI_MODELS_H

#include <stddef.h>

#include "oac_build.h"

typedef struct genai_model {
    const char *name;
    void (*build)(oac_mb *mb);
    const char *config;     /* the JSON of its config, or NULL for none */
} genai_model;

extern const genai_model genai_models[];
extern const size_t genai_n_models;

/* The row called name, or NULL. */
const genai_model *genai_model_find(const char *name);
/* Write DIR/<name>.onnx and, when the row has one, its config; an
 * oac_status (message on ctx). */
int genai_model_write(oac_ctx *ctx, const genai_model *m, const char *dir);

#endif /* OAC_TESTS_GENAI_MODELS_H */

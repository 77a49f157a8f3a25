/* annotate/genai_config.h: what the project reads of ONNX Runtime GenAI's
 * genai_config.json (contract, section 7 steps 1-2; section 8 names the
 * same file for run's decoder inputs).
 *
 * Owns struct oac_genai_config: the past/present name templates of
 * model.decoder.inputs/outputs, the names of the static-scatter inputs,
 * and the search options that decide whether GenAI shares past and
 * present.  annotate/genai_config.c parses the file with jansson and copies what
 * it needs (the JSON tree is released at once, so everything here comes
 * from the context's allocator).
 */
#ifndef OAC_GENAI_CONFIG_H
#define OAC_GENAI_CONFIG_H

#include "oac_int.h"

/* One past/present template pair: model.decoder.inputs[key] and
 * model.decoder.outputs[key with "past" replaced by "present"], e.g.
 * "past_key_values.%d.key" and "present.%d.key".  A template holds at
 * most one "%d" (the layer) and no other '%'. */
typedef struct oac_genai_names {
    char *key;            /* "past_key_names" */
    char *past;
    char *present;
} oac_genai_names;

typedef struct oac_genai_config {
    oac_ctx *ctx;
    char *path;
    oac_genai_names *names;
    size_t n_names;
    /* search.num_beams (1 when absent) and
     * search.past_present_share_buffer (false when absent). */
    int64_t num_beams;
    bool share_buffer;
    /* search.max_length and model.context_length, 0 when absent. */
    int64_t max_length;
    int64_t context_length;
    /* The graph input names of decoder.inputs.write_indices and
     * .nonpad_kv_seqlen, or those words when the config has none. */
    char *write_indices;
    char *nonpad_kv_seqlen;
    /* Every other string of model.decoder.inputs (input_ids,
     * attention_mask, position_ids, ...), key and graph input name:
     * run's decoder inputs (contract 8) read them through
     * oac_genai_input. */
    struct oac_genai_input {
        char *key;
        char *name;
    } *inputs;
    size_t n_inputs;
} oac_genai_config;

/* Read the config at path.  A file that cannot be read, is not JSON, or
 * gives a key of model.decoder or search the wrong type appends one
 * config-invalid diagnostic saying which and returns OAC_EPARSE (the
 * message on ctx too); OAC_ENOMEM when out of memory. */
int oac_genai_config_load(oac_ctx *ctx, oac_genai_config **out,
                          const char *path, oac_diags *diags);
void oac_genai_config_free(oac_genai_config *c);

/* The config beside model_path: "<dir>/<stem>.genai_config.json" (stem:
 * the file name without its last ".onnx"), else "<dir>/genai_config.json";
 * *out NULL when neither exists.  OAC_ENOMEM only. */
int oac_genai_config_find(oac_ctx *ctx, char **out, const char *model_path);

/* The graph input model.decoder.inputs[key] names, or NULL when the
 * config has no such string. */
const char *oac_genai_input(const oac_genai_config *c, const char *key);

/* Does name match template t (one "%d" standing for a decimal layer
 * number without sign or leading zeros, or t itself without "%d")?  On a
 * match *layer is the number (0 without "%d"). */
bool oac_genai_match(const char *t, const char *name, long *layer);
/* Template t with "%d" replaced by layer, malloc'ed on ctx (NULL on OOM). */
char *oac_genai_expand(oac_ctx *ctx, const char *t, long layer);

#endif /* OAC_GENAI_CONFIG_H */

/* annotate/annotate.h: what annotate/annotate.c offers the rest of the library besides the
 * public oac_annotate (contract 7 step 1; contract 8 and issue 11 item 5:
 * `run` feeds a stock decoder's presents back as its pasts, paired as
 * annotate pairs them).
 *
 * Owns nothing but the declarations; the pairing itself is annotate/annotate.c's
 * (one pairing in the library).
 */
#ifndef OAC_ANNOTATE_H
#define OAC_ANNOTATE_H

#include "annotate/genai_config.h"
#include "check/graph.h"

/* One past input and the present output it pairs with (values of the
 * graph index the pairs were found in; present NULL when the name the
 * config gives is no value of the graph). */
typedef struct oac_kv_pair {
    const oac_value *past;
    const oac_value *present;
} oac_kv_pair;

/* Contract 7 step 1 alone: the pairs of main graph s, by cfg's templates
 * (cfg not NULL) or else by the name patterns, each past once, in graph
 * input order; nothing is traced, judged or written.  *out (n of them)
 * on the context's allocator; OAC_ENOMEM only. */
int oac_annotate_pairs(oac_ctx *ctx, oac_kv_pair **out, size_t *n,
                       const oac_genai_config *cfg, const oac_scope *s);

/* oac_annotation_write into memory (oac_annotate_json, report/api_json.c): the
 * annotated model's bytes, checked as oac_annotation_write checks its
 * file (loaded back with external data beside the model read); *out
 * (release it with oac_free, *out_len bytes) only when that check has no
 * error, and then a's output is "" (written, to no path).  NULL when a
 * pair was refused without partial or the check found an error.
 * OAC_OK or OAC_ENOMEM. */
int oac_annotation_write_buffer(oac_ctx *ctx, oac_annotation *a, const oac_model *model,
                                uint8_t **out, size_t *out_len, oac_diags *diags);

#endif /* OAC_ANNOTATE_H */

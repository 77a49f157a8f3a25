/* annotate/pairs.h: the one KV pairing of the library (contract, section
 * 9.1), for check, annotate and run.
 *
 * Owns the declarations of annotate/pairs.c: which past input a runtime
 * feeds back from which present output (structure, configuration and
 * names, as a union).  The verdicts of the pairs (the public oac_check,
 * kv_caches, cache-copied, check --config) are annotate/caches.c's.
 *
 * Invariants:
 *  1. One pairing: annotate (annotate/annotate.c), run's generation loop
 *     (run/generate.c) and check's verdicts (annotate/caches.c) call
 *     oac_kv_pairs_find and nothing else pairs past and present.
 *  2. A configuration adds pairs and never hides one found by structure
 *     or names; each past is paired once, in graph input order.
 */
#ifndef OAC_PAIRS_H
#define OAC_PAIRS_H

#include "annotate/genai_config.h"
#include "check/graph.h"

/* One past input and the present output it pairs with (values of the
 * graph index the pairs were found in).  present is NULL when the name
 * the configuration gives (present_name) is no output of the graph.
 * config_present is the configuration's present for this past when it
 * differs from the pair that structure or names found (that pair stands:
 * the configuration only adds pairs; check reports the difference). */
typedef struct oac_kv_pair {
    const oac_value *past;
    const oac_value *present;
    const char *present_name;  /* present's name, or the config's */
    unsigned found_by;         /* OAC_KV_BY_* of oac.h */
    char *owned;               /* present_name when allocated (freed with the pairs) */
    char *config_present;      /* the config's other present, or NULL (freed with the pairs) */
} oac_kv_pair;

/* The pairs of main graph s (section 9.1): structure, then the name
 * patterns of section 7 step 1, then cfg's templates (cfg may be NULL)
 * for a past neither paired; each past once, in graph input order.
 * *out (n of them) on the context's allocator, released with
 * oac_kv_pairs_free.  OAC_ENOMEM only. */
int oac_kv_pairs_find(oac_ctx *ctx, oac_kv_pair **out, size_t *n,
                      const oac_genai_config *cfg, const oac_scope *s);
void oac_kv_pairs_free(oac_ctx *ctx, oac_kv_pair *p, size_t n);

/* v followed back through Identity links (port 0 -> 0) to the first value
 * no Identity made; *links counts them (may be NULL).  NULL for a broken
 * link or a chain longer than the graph. */
const oac_value *oac_kv_through_identity(const oac_scope *s, const oac_value *v,
                                         size_t *links);

#endif /* OAC_PAIRS_H */

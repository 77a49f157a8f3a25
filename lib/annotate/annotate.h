/* annotate/annotate.h: what annotate/annotate.c offers the rest of the library besides the
 * public oac_annotate (contract 7 step 1; contract 8 and issue 11 item 5:
 * check gives every pair of annotate/pairs.c a verdict from annotate's
 * trace).
 *
 * Owns nothing but the declarations; the pairing is annotate/pairs.c's,
 * the trace annotate/annotate.c's (one of each in the library).
 */
#ifndef OAC_ANNOTATE_H
#define OAC_ANNOTATE_H

#include "annotate/genai_config.h"
#include "annotate/pairs.h"
#include "check/graph.h"

/* Contract 7 step 3 alone, for check's verdicts (annotate/pairs.c): the
 * trace of pairs p (n of them, of main graph s) without a configuration's
 * sharing rules and without writing anything.  *out holds one
 * oac_annotate_pair per p, in order: verdict annotated when the trace
 * holds (node and ports of the operator, an Identity for a state passed
 * through), refused with the reason and message otherwise; with_config
 * says the pairs came with a configuration (messages say so).  The
 * pairs' names (past, present, node, op_type) are borrowed from s and p,
 * not copied: read *out while they live, and release it with
 * oac_annotation_free.  OAC_ENOMEM only. */
int oac_annotate_trace(oac_ctx *ctx, oac_annotation **out, const oac_scope *s,
                       const oac_kv_pair *p, size_t n, bool with_config);
/* The index in the main graph's nodes of pair i's node (the operator the
 * trace names), or -1: none, or an annotation not made by
 * oac_annotate_trace. */
long oac_annotation_node_at(const oac_annotation *a, size_t i);
/* Pair i's path in a trace of oac_annotate_trace: *nodes holds the
 * indices in the main graph's nodes of every node from the past to the
 * present (the past side's Identity links, the operator, the present
 * side's links), for a pair whose trace holds; 0 and *nodes NULL
 * otherwise (refused, or an annotation not made by oac_annotate_trace). */
size_t oac_annotation_path(const oac_annotation *a, size_t i, const long **nodes);

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

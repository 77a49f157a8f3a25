/* check/inputs.h: --input files, the one reader (check/inputs.c).
 *
 * Owns the declarations of check/inputs.c: loading --input files for
 * the check, and reading one for the runtime.  Contract: section 3 ("a
 * --input given to check" is known), section 5.
 * Invariants: see check/inputs.c (usage errors are OAC_EINVAL; an
 * unreadable file is a parse-error diagnostic).
 */
#ifndef OAC_INPUTS_H
#define OAC_INPUTS_H

#include "check/shapes_store.h"

struct oac_check_state;

/* --input files (check/inputs.c): load each opts->inputs entry as the message
 * its graph input's declared type calls for, into st->out->inputs
 * (check/analysis.h).  A name that is no graph input of the main graph, or
 * given twice, is OAC_EINVAL; a file that cannot be read or is malformed
 * is a parse-error diagnostic, and the input stays unknown. */
int oac_shapes_load_inputs(struct oac_check_state *st, oac_shapes *sh);
/* Read one --input file as the message a value of kind (oac_vkind:
 * OAC_VK_SEQUENCE, OAC_VK_MAP, else a tensor) calls for: the one reader,
 * which the runtime also uses for a file the check was not given.  An
 * unreadable file is OAC_EINVAL (message on ctx); *out is the caller's
 * (oac_pbfile_free). */
int oac_input_read(oac_ctx *ctx, const oac_input_file *in, int kind,
                   oac_pbfile **out);

#endif /* OAC_INPUTS_H */

/* report/loc.h: where a finding is, for the reports CI systems read
 * (SARIF and GitLab Code Quality; issue 13).  lib/report/loc.c. */
#ifndef OAC_REPORT_LOC_H
#define OAC_REPORT_LOC_H

#include <stdint.h>

#include "oac_int.h"

/* path as the report writes it: relative to srcroot when it lies under
 * it (*relative true), else absolute (*relative false); with srcroot
 * NULL, path as given (*relative: it does not start with '/').  A new
 * string (oac_dealloc), NULL when out of memory. */
char *oac_report_relpath(oac_ctx *ctx, const char *path, const char *srcroot,
                         bool *relative);

/* One fingerprint per diagnostic of diags (*out, oac_dealloc; NULL with
 * no diagnostic): a hash of the code, the model path as written (rel),
 * the location, node and value and the related party's, never of the
 * message (whose numbers change with --dim), so it is stable across runs;
 * diagnostics that agree on all of those are told apart by their rank
 * among them, so fingerprints are unique within a report.  OAC_ENOMEM or
 * OAC_OK. */
int oac_report_fingerprints(oac_ctx *ctx, uint64_t **out, const oac_diags *diags,
                            const char *rel);

#endif /* OAC_REPORT_LOC_H */

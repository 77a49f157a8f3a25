/* report/text.c: the GCC-style text report of one model (contract,
 * section 5, "Text (the default)").
 *
 * Owns oac_report_text, and annotate's text (oac_annotate_report_text,
 * at the end, with its own shape).  The shape of check's, one line each:
 *
 *     PATH: SEVERITY: MESSAGE [CODE]          per diagnostic, in list order
 *       help: HOW TO FIX                      the code's help (lib/rules.def)
 *       note: WHAT: GRAPH/NODE/VALUE (LOCATION)  its related party, if any
 *     PATH: unchecked: RULE not checked ...: REASON [unchecked]
 *                                             per entry of `unchecked`
 *       run: ...                              only when the model was run:
 *       ...                                   a short execution summary
 *     PATH: N errors, M warnings, K notes[, U unchecked][, I ignored] (status: ok|error)
 *
 * Invariants:
 *  1. Every diagnostic line matches `^PATH: (error|warning|note): .* \[CODE\]$`
 *     and the summary is the last line starting with `PATH:`; execution,
 *     help: and related note: lines are indented so they never look like
 *     either.  An unchecked rule's line is "PATH: unchecked: ... [unchecked]":
 *     it is no diagnostic (a rule not decided, not a finding).
 *  2. A message or path cannot break a line: control characters in them
 *     are written as spaces, so one diagnostic is always one line.
 *  3. Counts are taken from the diagnostics, as in the JSON report (K
 *     notes is summary.notes); U unchecked (only when not 0) counts the
 *     `unchecked` entries; I ignored (only when not 0) is oac_diags_ignored.  -q (in->quiet)
 *     hides every note line (note diagnostics, related parties, unchecked
 *     entries) but still counts them.
 *  4. The result is malloc'ed through the context allocator (so it is
 *     free()d by the caller, and chaos tests reach its failure path).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "oac_int.h"
#include "strbuf.h"

static const char *plural(size_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* One line per diagnostic: PATH: SEVERITY: MESSAGE [CODE], then its
 * help and related party, indented. */
static void add_diags(oac_sb *b, const char *path, const oac_diags *diags, bool quiet)
{
    for (size_t i = 0; i < oac_diags_count(diags); i++) {
        const oac_diag *d = oac_diags_get(diags, i);
        if (quiet && d->severity == OAC_SEV_NOTE)
            continue;
        oac_sb_flat(b, path);
        oac_sb_raw(b, ": ");
        oac_sb_raw(b, oac_severity_name(d->severity));
        oac_sb_raw(b, ": ");
        oac_sb_flat(b, d->message);
        oac_sb_raw(b, " [");
        oac_sb_raw(b, oac_code_name(d->code));
        oac_sb_raw(b, "]\n");
        if (d->severity != OAC_SEV_NOTE) {
            oac_sb_raw(b, "  help: ");
            oac_sb_flat(b, oac_code_help(d->code));
            oac_sb_raw(b, "\n");
        }
        const oac_related *r = &d->related;
        if (r->message && !quiet) {
            oac_sb_raw(b, "  note: ");
            oac_sb_flat(b, r->message);
            const char *sep = ": ";
            if (r->node) {
                oac_sb_add(b, "%snode '", sep);
                oac_sb_flat(b, r->node);
                oac_sb_raw(b, "'");
                sep = ", ";
            }
            if (r->value) {
                oac_sb_add(b, "%svalue '", sep);
                oac_sb_flat(b, r->value);
                oac_sb_raw(b, "'");
                sep = ", ";
            }
            if (r->graph && *r->graph) {
                oac_sb_add(b, "%sgraph '", sep);
                oac_sb_flat(b, r->graph);
                oac_sb_raw(b, "'");
            }
            if (r->location) {
                oac_sb_raw(b, " (");
                oac_sb_flat(b, r->location);
                oac_sb_raw(b, ")");
            }
            oac_sb_raw(b, "\n");
        }
    }
}

/* The analysis's undecided rules: PATH: unchecked: ... [unchecked]. */
static size_t add_unchecked(oac_sb *b, const char *path, const oac_analysis *a, bool quiet)
{
    size_t n = oac_analysis_unchecked_count(a);
    for (size_t i = 0; i < n && !quiet; i++) {
        const oac_unchecked *u = oac_analysis_unchecked(a, i);
        oac_sb_flat(b, path);
        oac_sb_raw(b, ": unchecked: ");
        oac_sb_flat(b, u->rule ? u->rule : "");
        oac_sb_raw(b, " not checked");
        if (u->node) {
            oac_sb_raw(b, " at node '");
            oac_sb_flat(b, u->node);
            oac_sb_raw(b, "'");
        }
        if (u->value) {
            oac_sb_raw(b, " for '");
            oac_sb_flat(b, u->value);
            oac_sb_raw(b, "'");
        }
        oac_sb_raw(b, ": ");
        oac_sb_flat(b, u->reason ? u->reason : "");
        oac_sb_raw(b, " [unchecked]\n");
    }
    return n;
}

static void add_execution(oac_sb *b, const oac_execution *e)
{
    oac_sb_add(b, "  run: %" PRIu64 " of %" PRIu64 " steps completed\n",
        e->steps_completed, e->steps_requested);
    /* Held identities with no bytes bound: paged caches, which start
     * empty and take pages as the run writes them. */
    oac_sb_add(b, "  cache bytes bound once: %" PRIu64 "%s\n", e->cache_bytes_bound,
               !e->cache_bytes_bound && e->identity_checked
               ? " (paged caches start empty and take pages as the run writes them)" : "");
    oac_sb_add(b, "  second-cache bytes: %" PRIu64 "\n", e->second_cache_bytes);
    /* Copied bytes, then per step (the first and last few of a long run). */
    oac_sb_add(b, "  copied bytes: %" PRIu64, e->copied_bytes);
    if (e->n_per_step) {
        oac_sb_raw(b, " (per step:");
        for (size_t i = 0; i < e->n_per_step; i++) {
            if (e->n_per_step > 12 && i == 6) {
                oac_sb_raw(b, " ...");
                i = e->n_per_step - 6;
            }
            oac_sb_add(b, " %" PRIu64, e->per_step[i].copied_bytes);
        }
        oac_sb_raw(b, ")");
    }
    oac_sb_raw(b, "\n");
    oac_sb_add(b, "  pointer identity: %" PRIu64 "/%" PRIu64 " held\n",
        e->identity_held, e->identity_checked);
    /* Contract 11: one line per paged cache, at its last step. */
    for (size_t i = 0; i < e->n_pages; i++) {
        const oac_page_record *r = &e->pages[i];
        if (!r->n_per_step)
            continue;
        const oac_page_step *st = &r->per_step[r->n_per_step - 1];
        uint64_t re_p = 0, re_b = 0;
        for (size_t k = 0; k < r->n_per_step; k++) {
            re_p += r->per_step[k].re_encoded_pages;
            re_b += r->per_step[k].re_encoded_bytes;
        }
        oac_sb_raw(b, "  pages of '");
        oac_sb_flat(b, r->cache ? r->cache : "");
        oac_sb_add(b, "': %" PRIu64 " pages, %" PRIu64 " bytes (", st->pages,
                   st->total_bytes);
        bool first = true;
        for (size_t q = 0; q < r->n_quantizations; q++) {
            if (!st->bytes_by_quantization[q])
                continue;
            if (r->quantization_names[q]) {
                oac_sb_raw(b, first ? "" : ", ");
                oac_sb_flat(b, r->quantization_names[q]);
            } else {
                oac_sb_add(b, "%s#%zu", first ? "" : ", ", q);
            }
            oac_sb_add(b, " %" PRIu64, st->bytes_by_quantization[q]);
            first = false;
        }
        oac_sb_add(b, "), re-encoded %" PRIu64 " pages (%" PRIu64 " bytes)%s\n", re_p,
                   re_b, r->per_step_omitted ? " in the steps kept" : "");
    }
    if (e->planned_peak_bytes.known)
        oac_sb_add(b, "  peak bytes: measured %" PRIu64 ", planned %" PRIu64 " (%s)\n",
            e->measured_peak_bytes, e->planned_peak_bytes.value,
            e->peak_matches_plan ? "matches plan" : "differs from plan");
    else
        oac_sb_add(b, "  peak bytes: measured %" PRIu64 ", planned unknown\n",
            e->measured_peak_bytes);
}

/* Contract 9.3: "KV caches: I in place, M implied, C copied, N not a
 * cache", only when the model has pairs. */
static void add_kv_line(oac_sb *b, const oac_analysis *a)
{
    size_t n[4] = { 0, 0, 0, 0 };
    size_t total = oac_analysis_kv_count(a);
    for (size_t i = 0; i < total; i++)
        n[oac_analysis_kv(a, i)->verdict & 3]++;
    if (total)
        oac_sb_add(b, "KV caches: %zu in place, %zu implied, %zu copied, %zu not a cache\n",
                   n[OAC_KV_IN_PLACE], n[OAC_KV_IMPLIED], n[OAC_KV_COPIED],
                   n[OAC_KV_NOT_A_CACHE]);
}

char *oac_report_text(oac_ctx *ctx, const oac_report_input *in)
{
    oac_sb b = { .ctx = ctx };
    const char *path = in->path ? in->path : "";

    /* Start with an empty string so a model without findings or summary
     * pieces still returns a valid buffer. */
    oac_sb_add(&b, "%s", "");
    add_diags(&b, path, in->diags, in->quiet);
    size_t unchecked = in->analysis ? add_unchecked(&b, path, in->analysis, in->quiet) : 0;
    if (in->execution)
        add_execution(&b, in->execution);
    add_kv_line(&b, in->analysis);
    size_t errors = oac_diags_count_severity(in->diags, OAC_SEV_ERROR);
    size_t warnings = oac_diags_count_severity(in->diags, OAC_SEV_WARNING);
    size_t notes = oac_diags_count_severity(in->diags, OAC_SEV_NOTE);
    size_t ignored = oac_diags_ignored(in->diags);
    oac_sb_flat(&b, path);
    oac_sb_add(&b, ": %zu %s, %zu %s, %zu %s",
        errors, plural(errors, "error", "errors"),
        warnings, plural(warnings, "warning", "warnings"),
        notes, plural(notes, "note", "notes"));
    if (unchecked)
        oac_sb_add(&b, ", %zu unchecked", unchecked);
    if (ignored)
        oac_sb_add(&b, ", %zu ignored", ignored);
    /* Contract 12: findings past the listing cap, counted per code. */
    for (int c = 0; c < OAC_CODE_COUNT; c++)
        if (oac_diags_omitted(in->diags, (oac_code)c))
            oac_sb_add(&b, ", %llu more %s omitted",
                       (unsigned long long)oac_diags_omitted(in->diags, (oac_code)c),
                       oac_code_name((oac_code)c));
    oac_sb_add(&b, " (status: %s)\n", oac_report_failed(in) ? "error" : "ok");
    if (b.failed) {
        oac_dealloc(ctx, b.s);
        oac_err(ctx, OAC_ENOMEM, "out of memory writing the text report");
        return NULL;
    }
    return b.s;
}

/* annotate's text (contract 7, step 6), one line each:
 *
 *     PATH: 'PAST' -> 'PRESENT': VERDICT: MESSAGE       per pair
 *     PATH: 'PAST' -> 'PRESENT': refused [REASON]: MESSAGE
 *     PATH: SEVERITY: MESSAGE [CODE]                    per diagnostic
 *     PATH: N pairs: A annotated, K kept, R refused; wrote OUT (status: ok|error)
 *
 * with "nothing written" for "wrote OUT" when no file was written. */
char *oac_annotate_report_text(oac_ctx *ctx, const oac_report_input *in)
{
    oac_sb b = { .ctx = ctx };
    const char *path = in->path ? in->path : "";
    const oac_annotation *an = in->annotation;
    size_t np = oac_annotation_pair_count(an);

    oac_sb_add(&b, "%s", "");
    for (size_t i = 0; i < np; i++) {
        const oac_annotate_pair *p = oac_annotation_pair(an, i);
        oac_sb_flat(&b, path);
        oac_sb_add(&b, ": '");
        oac_sb_flat(&b, p->past);
        oac_sb_add(&b, "' -> '");
        oac_sb_flat(&b, p->present);
        oac_sb_add(&b, "': %s", oac_verdict_name(p->verdict));
        if (p->reason != OAC_REFUSAL_NONE && p->config_reason != OAC_REFUSAL_NONE)
            oac_sb_add(&b, " [%s, %s]", oac_refusal_name(p->reason),
                       oac_refusal_name(p->config_reason));
        else if (p->reason != OAC_REFUSAL_NONE || p->config_reason != OAC_REFUSAL_NONE)
            oac_sb_add(&b, " [%s]", oac_refusal_name(p->reason != OAC_REFUSAL_NONE
                                                         ? p->reason : p->config_reason));
        oac_sb_add(&b, ": ");
        oac_sb_flat(&b, p->message);
        oac_sb_add(&b, "\n");
    }
    add_diags(&b, path, in->diags, false);
    size_t na = oac_annotation_count(an, OAC_VERDICT_ANNOTATED);
    size_t nk = oac_annotation_count(an, OAC_VERDICT_KEPT);
    size_t nr = oac_annotation_count(an, OAC_VERDICT_REFUSED);
    oac_sb_flat(&b, path);
    oac_sb_add(&b, ": %zu %s: %zu annotated, %zu kept, %zu refused; ", np,
        plural(np, "pair", "pairs"), na, nk, nr);
    if (oac_annotation_output(an)) {
        oac_sb_add(&b, "wrote ");
        oac_sb_flat(&b, oac_annotation_output(an));
    } else {
        oac_sb_add(&b, "nothing written");
    }
    oac_sb_add(&b, " (status: %s)\n", oac_annotate_report_failed(in) ? "error" : "ok");
    if (b.failed) {
        oac_dealloc(ctx, b.s);
        oac_err(ctx, OAC_ENOMEM, "out of memory writing the text report");
        return NULL;
    }
    return b.s;
}

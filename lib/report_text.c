/* report_text.c: the GCC-style text report of one model (contract,
 * section 5, "Text (the default)").
 *
 * Owns oac_report_text, and annotate's text (oac_annotate_report_text,
 * at the end, with its own shape).  The shape of check's, one line each:
 *
 *     PATH: SEVERITY: MESSAGE [CODE]          per diagnostic, in list order
 *       help: HOW TO FIX                      the code's help (lib/rules.def)
 *       note: WHAT: GRAPH/NODE/VALUE (LOCATION)  its related party, if any
 *     PATH: note: RULE not checked ...: REASON [unchecked]
 *                                             per entry of `unchecked`
 *       run: ...                              only when the model was run:
 *       ...                                   a short execution summary
 *     PATH: N errors, M warnings, K notes[, I ignored] (status: ok|error)
 *
 * Invariants:
 *  1. Every diagnostic line matches `^PATH: (error|warning|note): .* \[CODE\]$`
 *     and the summary is the last line starting with `PATH:`; execution,
 *     help: and related note: lines are indented so they never look like
 *     either.  An unchecked rule's note ends in "[unchecked]", which is no
 *     code.
 *  2. A message or path cannot break a line: control characters in them
 *     are written as spaces, so one diagnostic is always one line.
 *  3. Counts are taken from the diagnostics, as in the JSON report, except
 *     that K notes also counts the `unchecked` entries shown as notes;
 *     I ignored (only when not 0) is oac_diags_ignored.  -q (in->quiet)
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

typedef struct buf {
    oac_ctx *ctx;
    char *s;
    size_t len, cap;
    bool failed;
} buf;

static void add(buf *b, const char *fmt, ...) OAC_PRINTF(2, 3);

static void add(buf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *piece = oac_vasprintf(b->ctx, fmt, ap);
    va_end(ap);
    if (!piece) {
        b->failed = true;
        return;
    }
    size_t n = strlen(piece);
    if (oac_grow(b->ctx, (void **)&b->s, &b->cap, b->len + n + 1, 1) != OAC_OK) {
        b->failed = true;
    } else {
        memcpy(b->s + b->len, piece, n + 1);
        b->len += n;
    }
    oac_dealloc(b->ctx, piece);
}

/* Append s as it is: no formatting, one copy. */
static void add_raw(buf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->failed)
        return;
    if (oac_grow(b->ctx, (void **)&b->s, &b->cap, b->len + n + 1, 1) != OAC_OK) {
        b->failed = true;
        return;
    }
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

/* Append s with control characters flattened to spaces (invariant 2). */
static void add_flat(buf *b, const char *s)
{
    size_t start = b->len;
    add_raw(b, s ? s : "");
    for (size_t i = start; !b->failed && i < b->len; i++)
        if ((unsigned char)b->s[i] < 0x20 || b->s[i] == 0x7f)
            b->s[i] = ' ';
}

static const char *plural(size_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* One line per diagnostic: PATH: SEVERITY: MESSAGE [CODE], then its
 * help and related party, indented. */
static void add_diags(buf *b, const char *path, const oac_diags *diags, bool quiet)
{
    for (size_t i = 0; i < oac_diags_count(diags); i++) {
        const oac_diag *d = oac_diags_get(diags, i);
        if (quiet && d->severity == OAC_SEV_NOTE)
            continue;
        add_flat(b, path);
        add_raw(b, ": ");
        add_raw(b, oac_severity_name(d->severity));
        add_raw(b, ": ");
        add_flat(b, d->message);
        add_raw(b, " [");
        add_raw(b, oac_code_name(d->code));
        add_raw(b, "]\n");
        if (d->severity != OAC_SEV_NOTE) {
            add_raw(b, "  help: ");
            add_flat(b, oac_code_help(d->code));
            add_raw(b, "\n");
        }
        const oac_related *r = &d->related;
        if (r->message && !quiet) {
            add_raw(b, "  note: ");
            add_flat(b, r->message);
            const char *sep = ": ";
            if (r->node) {
                add(b, "%snode '", sep);
                add_flat(b, r->node);
                add_raw(b, "'");
                sep = ", ";
            }
            if (r->value) {
                add(b, "%svalue '", sep);
                add_flat(b, r->value);
                add_raw(b, "'");
                sep = ", ";
            }
            if (r->graph && *r->graph) {
                add(b, "%sgraph '", sep);
                add_flat(b, r->graph);
                add_raw(b, "'");
            }
            if (r->location) {
                add_raw(b, " (");
                add_flat(b, r->location);
                add_raw(b, ")");
            }
            add_raw(b, "\n");
        }
    }
}

/* The analysis's undecided rules as notes: PATH: note: ... [unchecked]. */
static size_t add_unchecked(buf *b, const char *path, const oac_analysis *a, bool quiet)
{
    size_t n = oac_analysis_unchecked_count(a);
    for (size_t i = 0; i < n && !quiet; i++) {
        const oac_unchecked *u = oac_analysis_unchecked(a, i);
        add_flat(b, path);
        add_raw(b, ": note: ");
        add_flat(b, u->rule ? u->rule : "");
        add_raw(b, " not checked");
        if (u->node) {
            add_raw(b, " at node '");
            add_flat(b, u->node);
            add_raw(b, "'");
        }
        if (u->value) {
            add_raw(b, " for '");
            add_flat(b, u->value);
            add_raw(b, "'");
        }
        add_raw(b, ": ");
        add_flat(b, u->reason ? u->reason : "");
        add_raw(b, " [unchecked]\n");
    }
    return n;
}

static void add_execution(buf *b, const oac_execution *e)
{
    add(b, "  run: %" PRIu64 " of %" PRIu64 " steps completed\n",
        e->steps_completed, e->steps_requested);
    add(b, "  cache bytes bound once: %" PRIu64 "\n", e->cache_bytes_bound);
    add(b, "  second-cache bytes: %" PRIu64 "\n", e->second_cache_bytes);
    /* Copied bytes, then per step (the first and last few of a long run). */
    add(b, "  copied bytes: %" PRIu64, e->copied_bytes);
    if (e->n_per_step) {
        add_raw(b, " (per step:");
        for (size_t i = 0; i < e->n_per_step; i++) {
            if (e->n_per_step > 12 && i == 6) {
                add_raw(b, " ...");
                i = e->n_per_step - 6;
            }
            add(b, " %" PRIu64, e->per_step[i].copied_bytes);
        }
        add_raw(b, ")");
    }
    add_raw(b, "\n");
    add(b, "  pointer identity: %" PRIu64 "/%" PRIu64 " held\n",
        e->identity_held, e->identity_checked);
    if (e->planned_peak_bytes.known)
        add(b, "  peak bytes: measured %" PRIu64 ", planned %" PRIu64 " (%s)\n",
            e->measured_peak_bytes, e->planned_peak_bytes.value,
            e->peak_matches_plan ? "matches plan" : "differs from plan");
    else
        add(b, "  peak bytes: measured %" PRIu64 ", planned unknown\n",
            e->measured_peak_bytes);
}

char *oac_report_text(oac_ctx *ctx, const oac_report_input *in)
{
    buf b = { .ctx = ctx };
    const char *path = in->path ? in->path : "";

    /* Start with an empty string so a model without findings or summary
     * pieces still returns a valid buffer. */
    add(&b, "%s", "");
    add_diags(&b, path, in->diags, in->quiet);
    size_t unchecked = in->analysis ? add_unchecked(&b, path, in->analysis, in->quiet) : 0;
    if (in->execution)
        add_execution(&b, in->execution);
    size_t errors = oac_diags_count_severity(in->diags, OAC_SEV_ERROR);
    size_t warnings = oac_diags_count_severity(in->diags, OAC_SEV_WARNING);
    size_t notes = oac_diags_count_severity(in->diags, OAC_SEV_NOTE) + unchecked;
    size_t ignored = oac_diags_ignored(in->diags);
    add_flat(&b, path);
    add(&b, ": %zu %s, %zu %s, %zu %s",
        errors, plural(errors, "error", "errors"),
        warnings, plural(warnings, "warning", "warnings"),
        notes, plural(notes, "note", "notes"));
    if (ignored)
        add(&b, ", %zu ignored", ignored);
    add(&b, " (status: %s)\n", oac_report_failed(in) ? "error" : "ok");
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
    buf b = { .ctx = ctx };
    const char *path = in->path ? in->path : "";
    const oac_annotation *an = in->annotation;
    size_t np = oac_annotation_pair_count(an);

    add(&b, "%s", "");
    for (size_t i = 0; i < np; i++) {
        const oac_annotate_pair *p = oac_annotation_pair(an, i);
        add_flat(&b, path);
        add(&b, ": '");
        add_flat(&b, p->past);
        add(&b, "' -> '");
        add_flat(&b, p->present);
        add(&b, "': %s", oac_verdict_name(p->verdict));
        if (p->reason != OAC_REFUSAL_NONE)
            add(&b, " [%s]", oac_refusal_name(p->reason));
        add(&b, ": ");
        add_flat(&b, p->message);
        add(&b, "\n");
    }
    add_diags(&b, path, in->diags, false);
    size_t na = oac_annotation_count(an, OAC_VERDICT_ANNOTATED);
    size_t nk = oac_annotation_count(an, OAC_VERDICT_KEPT);
    size_t nr = oac_annotation_count(an, OAC_VERDICT_REFUSED);
    add_flat(&b, path);
    add(&b, ": %zu %s: %zu annotated, %zu kept, %zu refused; ", np,
        plural(np, "pair", "pairs"), na, nk, nr);
    if (oac_annotation_output(an)) {
        add(&b, "wrote ");
        add_flat(&b, oac_annotation_output(an));
    } else {
        add(&b, "nothing written");
    }
    add(&b, " (status: %s)\n", oac_annotate_report_failed(in) ? "error" : "ok");
    if (b.failed) {
        oac_dealloc(ctx, b.s);
        oac_err(ctx, OAC_ENOMEM, "out of memory writing the text report");
        return NULL;
    }
    return b.s;
}

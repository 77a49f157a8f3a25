/* report_text.c: the GCC-style text report of one model (contract,
 * section 5, "Text (the default)").
 *
 * Owns oac_report_text, and annotate's text (oac_annotate_report_text,
 * at the end, with its own shape).  The shape of check's, one line each:
 *
 *     PATH: SEVERITY: MESSAGE [CODE]          per diagnostic, in list order
 *       run: ...                              only when the model was run:
 *       ...                                   a short execution summary
 *     PATH: N errors, M warnings, K notes (status: ok|error)
 *
 * Invariants:
 *  1. Every diagnostic line matches `^PATH: (error|warning|note): .* \[CODE\]$`
 *     and the summary is the last line starting with `PATH:`; execution
 *     lines are indented so they never look like either.
 *  2. A message or path cannot break a line: control characters in them
 *     are written as spaces, so one diagnostic is always one line.
 *  3. Counts are taken from the diagnostics, as in the JSON report.
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

/* Append s with control characters flattened to spaces (invariant 2). */
static void add_flat(buf *b, const char *s)
{
    size_t start = b->len;
    add(b, "%s", s ? s : "");
    for (size_t i = start; !b->failed && i < b->len; i++)
        if ((unsigned char)b->s[i] < 0x20 || b->s[i] == 0x7f)
            b->s[i] = ' ';
}

static const char *plural(size_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* One line per diagnostic: PATH: SEVERITY: MESSAGE [CODE]. */
static void add_diags(buf *b, const char *path, const oac_diags *diags)
{
    for (size_t i = 0; i < oac_diags_count(diags); i++) {
        const oac_diag *d = oac_diags_get(diags, i);
        add_flat(b, path);
        add(b, ": %s: ", oac_severity_name(d->severity));
        add_flat(b, d->message);
        add(b, " [%s]\n", oac_code_name(d->code));
    }
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
        add(b, " (per step:");
        for (size_t i = 0; i < e->n_per_step; i++) {
            if (e->n_per_step > 12 && i == 6) {
                add(b, " ...");
                i = e->n_per_step - 6;
            }
            add(b, " %" PRIu64, e->per_step[i].copied_bytes);
        }
        add(b, ")");
    }
    add(b, "\n");
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
    add_diags(&b, path, in->diags);
    if (in->execution)
        add_execution(&b, in->execution);
    size_t errors = oac_diags_count_severity(in->diags, OAC_SEV_ERROR);
    size_t warnings = oac_diags_count_severity(in->diags, OAC_SEV_WARNING);
    size_t notes = oac_diags_count_severity(in->diags, OAC_SEV_NOTE);
    add_flat(&b, path);
    add(&b, ": %zu %s, %zu %s, %zu %s (status: %s)\n",
        errors, plural(errors, "error", "errors"),
        warnings, plural(warnings, "warning", "warnings"),
        notes, plural(notes, "note", "notes"),
        oac_report_failed(in) ? "error" : "ok");
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
    add_diags(&b, path, in->diags);
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

/* diag.c: the diagnostic codes table and the list findings go to.
 *
 * Owns oac_diags.  The codes, severities and meanings come from one table,
 * include/oac_diag.def (contract, section 3); nothing else in the library
 * spells a code string.  Identical findings (same code, location, value
 * and message) are kept once, so a rule reached twice through one path
 * does not report twice.  Each code's documentation is lib/rules.c's.
 * --select/--ignore remove findings through oac_diags_ignore, which
 * counts them (never a silent drop).
 *
 * Contract 12: at most OAC_DIAG_LIST_MAX findings of one code are listed;
 * the rest are counted per code (oac_diags_omitted), their messages never
 * formatted, so a million findings cost a counter, not a million
 * messages.  The report's status counts them as if listed
 * (oac_diags_count_failing); duplicates past the cap cannot be told
 * apart and are counted too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oac_int.h"

static const struct {
    const char *name;
    oac_severity severity;
    const char *meaning;
} codes[] = {
#define OAC_DIAG(id, name, sev, meaning) { name, OAC_SEV_##sev, meaning },
#include "oac_diag.def"
#undef OAC_DIAG
};


/* Duplicates are found through a hash set over the items (open
 * addressing, load at most 1/2), so adding stays O(1) however many
 * findings a model has. */
struct dslot {
    uint64_t hash;
    size_t idx1;           /* index + 1 into items; 0: empty */
};

struct oac_diags {
    oac_ctx *ctx;
    oac_diag *items;
    size_t count;
    size_t cap;
    size_t ignored;        /* removed by oac_diags_ignore */
    bool filtered;         /* oac_diags_ignore was called */
    struct dslot *set;
    size_t set_cap;        /* power of two or 0 */
    size_t listed[OAC_CODE_COUNT];   /* items of each code */
    uint64_t omitted[OAC_CODE_COUNT];/* past OAC_DIAG_LIST_MAX */
};

const char *oac_code_name(oac_code code)
{
    return (unsigned)code < OAC_CODE_COUNT ? codes[code].name : NULL;
}

oac_severity oac_code_severity(oac_code code)
{
    return (unsigned)code < OAC_CODE_COUNT ? codes[code].severity : OAC_SEV_ERROR;
}

const char *oac_code_meaning(oac_code code)
{
    return (unsigned)code < OAC_CODE_COUNT ? codes[code].meaning : NULL;
}

int oac_code_lookup(const char *name)
{
    for (int i = 0; name && i < OAC_CODE_COUNT; i++)
        if (strcmp(codes[i].name, name) == 0)
            return i;
    return -1;
}

const char *oac_severity_name(oac_severity sev)
{
    switch (sev) {
    case OAC_SEV_ERROR: return "error";
    case OAC_SEV_WARNING: return "warning";
    case OAC_SEV_NOTE: return "note";
    }
    return "error";
}

oac_diags *oac_diags_new(oac_ctx *ctx)
{
    oac_diags *d = oac_calloc(ctx, 1, sizeof *d);
    if (d)
        d->ctx = ctx;
    return d;
}

static void diag_fini(oac_ctx *ctx, oac_diag *d)
{
    oac_dealloc(ctx, d->message);
    oac_dealloc(ctx, d->graph);
    oac_dealloc(ctx, d->node);
    oac_dealloc(ctx, d->op_type);
    oac_dealloc(ctx, d->value);
    oac_dealloc(ctx, d->location);
    oac_dealloc(ctx, d->related.message);
    oac_dealloc(ctx, d->related.graph);
    oac_dealloc(ctx, d->related.node);
    oac_dealloc(ctx, d->related.value);
    oac_dealloc(ctx, d->related.location);
}

void oac_diags_free(oac_diags *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->count; i++)
        diag_fini(d->ctx, &d->items[i]);
    oac_dealloc(d->ctx, d->items);
    oac_dealloc(d->ctx, d->set);
    oac_dealloc(d->ctx, d);
}

oac_ctx *oac_diags_ctx(const oac_diags *d)
{
    return d->ctx;
}

size_t oac_diags_count(const oac_diags *d)
{
    return d ? d->count : 0;
}

const oac_diag *oac_diags_get(const oac_diags *d, size_t i)
{
    return d && i < d->count ? &d->items[i] : NULL;
}

size_t oac_diags_count_severity(const oac_diags *d, oac_severity sev)
{
    size_t n = 0;
    for (size_t i = 0; d && i < d->count; i++)
        n += d->items[i].severity == sev;
    return n;
}

uint64_t oac_diags_omitted(const oac_diags *d, oac_code code)
{
    return d && (unsigned)code < OAC_CODE_COUNT ? d->omitted[code] : 0;
}

uint64_t oac_diags_omitted_severity(const oac_diags *d, oac_severity sev)
{
    uint64_t n = 0;
    for (int c = 0; d && c < OAC_CODE_COUNT; c++)
        if (codes[c].severity == sev)
            n += d->omitted[c];
    return n;
}

bool oac_diags_full(const oac_diags *d, oac_code code)
{
    return d && (unsigned)code < OAC_CODE_COUNT && d->listed[code] >= OAC_DIAG_LIST_MAX;
}

long oac_diags_find(const oac_diags *d, oac_code code)
{
    for (size_t i = 0; d && i < d->count; i++)
        if (d->items[i].code == code)
            return (long)i;
    return -1;
}

static bool same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* FNV-1a step over a string; NULL differs from "" as in same(). */
static uint64_t mix_str(uint64_t h, const char *s)
{
    if (!s)
        return (h ^ 0xa5) * 1099511628211ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (h ^ 0x5a) * 1099511628211ULL;
}

/* Over exactly the fields the duplicate test compares. */
static uint64_t diag_hash(oac_code code, const char *location, const char *value,
                          const char *node, const char *message)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)(unsigned)code;
    h = mix_str(h, location);
    h = mix_str(h, value);
    h = mix_str(h, node);
    return mix_str(h, message);
}

/* Room in the set for one more item; false on out of memory. */
static bool set_reserve(oac_diags *d)
{
    if ((d->count + 1) * 2 <= d->set_cap)
        return true;
    size_t ncap = d->set_cap ? d->set_cap * 2 : 64;
    if (ncap > SIZE_MAX / 4 / sizeof *d->set)
        return false;
    struct dslot *set = oac_calloc(d->ctx, ncap, sizeof *set);
    if (!set)
        return false;
    for (size_t i = 0; i < d->set_cap; i++) {
        if (!d->set[i].idx1)
            continue;
        size_t j = d->set[i].hash & (ncap - 1);
        while (set[j].idx1)
            j = (j + 1) & (ncap - 1);
        set[j] = d->set[i];
    }
    oac_dealloc(d->ctx, d->set);
    d->set = set;
    d->set_cap = ncap;
    return true;
}

int oac_diag_vadd(oac_diags *d, oac_code code, const oac_where *w,
                  const char *fmt, va_list ap)
{
    static const oac_where nowhere;
    oac_ctx *ctx = d->ctx;
    oac_diag item = { .code = code, .severity = oac_code_severity(code) };
    if (!w)
        w = &nowhere;
    if ((unsigned)code < OAC_CODE_COUNT && d->listed[code] >= OAC_DIAG_LIST_MAX) {
        d->omitted[code]++;
        return OAC_OK;
    }
    item.message = oac_vasprintf(ctx, fmt, ap);
    if (!item.message)
        return OAC_ENOMEM;
    if (!set_reserve(d)) {
        oac_dealloc(ctx, item.message);
        return oac_err(ctx, OAC_ENOMEM, "out of memory");
    }
    uint64_t h = diag_hash(code, w->location, w->value, w->node, item.message);
    size_t j = h & (d->set_cap - 1);
    for (; d->set[j].idx1; j = (j + 1) & (d->set_cap - 1)) {
        if (d->set[j].hash != h)
            continue;
        const oac_diag *o = &d->items[d->set[j].idx1 - 1];
        if (o->code == code && same(o->location, w->location) &&
            same(o->value, w->value) && same(o->node, w->node) &&
            strcmp(o->message, item.message) == 0) {
            oac_dealloc(ctx, item.message);
            return OAC_OK;
        }
    }
    item.graph = oac_strdup(ctx, w->graph);
    item.node = oac_strdup(ctx, w->node);
    item.op_type = oac_strdup(ctx, w->op_type);
    item.value = oac_strdup(ctx, w->value);
    item.location = oac_strdup(ctx, w->location);
    const oac_where *r = w->related;
    bool rel_ok = true;
    if (r && w->related_message) {
        oac_related *ir = &item.related;
        ir->message = oac_strdup(ctx, w->related_message);
        ir->graph = oac_strdup(ctx, r->graph);
        ir->node = oac_strdup(ctx, r->node);
        ir->value = oac_strdup(ctx, r->value);
        ir->location = oac_strdup(ctx, r->location);
        rel_ok = ir->message && (!r->graph || ir->graph) && (!r->node || ir->node) &&
                 (!r->value || ir->value) && (!r->location || ir->location);
    }
    if ((w->graph && !item.graph) || (w->node && !item.node) ||
        (w->op_type && !item.op_type) || (w->value && !item.value) ||
        (w->location && !item.location) || !rel_ok ||
        oac_grow(ctx, (void **)&d->items, &d->cap, d->count + 1,
                 sizeof *d->items) != OAC_OK) {
        diag_fini(ctx, &item);
        return OAC_ENOMEM;
    }
    d->items[d->count++] = item;
    if ((unsigned)code < OAC_CODE_COUNT)
        d->listed[code]++;
    /* j is the empty slot the probe stopped at. */
    d->set[j].hash = h;
    d->set[j].idx1 = d->count;
    return OAC_OK;
}

size_t oac_diags_ignored(const oac_diags *d)
{
    return d ? d->ignored : 0;
}

bool oac_diags_filtered(const oac_diags *d)
{
    return d && d->filtered;
}

size_t oac_diags_ignore(oac_diags *d, const bool *keep)
{
    size_t k = 0, removed = 0;
    if (!d || !keep)
        return 0;
    d->filtered = true;
    for (size_t i = 0; i < d->count; i++) {
        oac_diag *it = &d->items[i];
        if (keep[it->code]) {
            d->items[k++] = *it;
        } else {
            d->listed[it->code]--;
            diag_fini(d->ctx, it);
            removed++;
        }
    }
    /* Omitted findings of a code removed are removed with it. */
    for (int c = 0; c < OAC_CODE_COUNT; c++)
        if (!keep[c] && d->omitted[c]) {
            removed += d->omitted[c];
            d->omitted[c] = 0;
        }
    d->count = k;
    d->ignored += removed;
    /* The duplicate set indexes items: rebuild it over those kept. */
    if (removed && d->set_cap) {
        memset(d->set, 0, d->set_cap * sizeof *d->set);
        for (size_t i = 0; i < d->count; i++) {
            const oac_diag *o = &d->items[i];
            uint64_t h = diag_hash(o->code, o->location, o->value, o->node, o->message);
            size_t j = h & (d->set_cap - 1);
            while (d->set[j].idx1)
                j = (j + 1) & (d->set_cap - 1);
            d->set[j].hash = h;
            d->set[j].idx1 = i + 1;
        }
    }
    return removed;
}

int oac_diag_add(oac_diags *d, oac_code code, const oac_where *w,
                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = oac_diag_vadd(d, code, w, fmt, ap);
    va_end(ap);
    return rc;
}

oac_code oac_status_code(int status)
{
    switch (status) {
    case OAC_EIO:
    case OAC_EPARSE:
        return OAC_PARSE_ERROR;          /* input that could not be read */
    case OAC_EBUDGET:
        return OAC_MEMORY_BUDGET;        /* a size the budget refuses */
    case OAC_EUNSUPPORTED:
        return OAC_UNSUPPORTED_OPERATOR; /* what the runtime cannot execute */
    default:
        return OAC_ANALYSIS_FAILED;      /* the tool failing, not the model */
    }
}

int oac_diags_add_failure(oac_diags *d, oac_ctx *ctx, int status, const char *what)
{
    if (!d || !ctx || status >= 0)
        return OAC_EINVAL;
    /* Injected failures end here: a real one leaves memory to report
     * with once the failed call has released what it took. */
    oac_ctx_fail_alloc_after(ctx, 0);
    oac_code code = oac_status_code(status);
    const char *why = ctx->errmsg[0] ? ctx->errmsg
                      : status == OAC_ENOMEM ? "out of memory" : "operational failure";
    return oac_diag_add(d, code, NULL, "%s: %s", what ? what : "stopped", why);
}

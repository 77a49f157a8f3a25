/* diag.c: the diagnostic codes table and the list findings go to.
 *
 * Owns oac_diags.  The codes, severities and meanings come from one table,
 * include/oac_diag.def (contract, section 3); nothing else in the library
 * spells a code string.  Identical findings (same code, location, value
 * and message) are kept once, so a rule reached twice through one path
 * does not report twice.
 */
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

struct oac_diags {
    oac_ctx *ctx;
    oac_diag *items;
    size_t count;
    size_t cap;
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
}

void oac_diags_free(oac_diags *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->count; i++)
        diag_fini(d->ctx, &d->items[i]);
    oac_dealloc(d->ctx, d->items);
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

int oac_diag_vadd(oac_diags *d, oac_code code, const oac_where *w,
                  const char *fmt, va_list ap)
{
    static const oac_where nowhere;
    oac_ctx *ctx = d->ctx;
    oac_diag item = { .code = code, .severity = oac_code_severity(code) };
    if (!w)
        w = &nowhere;
    item.message = oac_vasprintf(ctx, fmt, ap);
    if (!item.message)
        return OAC_ENOMEM;
    for (size_t i = 0; i < d->count; i++) {
        const oac_diag *o = &d->items[i];
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
    if ((w->graph && !item.graph) || (w->node && !item.node) ||
        (w->op_type && !item.op_type) || (w->value && !item.value) ||
        (w->location && !item.location) ||
        oac_grow(ctx, (void **)&d->items, &d->cap, d->count + 1,
                 sizeof *d->items) != OAC_OK) {
        diag_fini(ctx, &item);
        return OAC_ENOMEM;
    }
    d->items[d->count++] = item;
    return OAC_OK;
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

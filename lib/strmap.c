/* strmap.c: an open-addressing hash map from borrowed strings to pointers.
 *
 * Keys are not copied: they point into the parsed model, which outlives
 * every map built over it.  Lookups are O(1) so analysis stays linear in
 * the size of the graph.  Both kinds of map share one probe: a strindex
 * indexes entries its owner stores (check/graph.c's values), and a strmap is
 * a strindex over its own (key, value) entries.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oac_int.h"

/* An entry: 16 bytes, no padding.  The hash lives in the probe slot
 * (struct oac_strmap_idx), so a probe compares it without touching the
 * entry and growing the table rehashes no key (struct oac_strmap_idx,
 * oac_int.h). */
struct oac_strmap_slot {
    const char *key;
    void *val;
};

void oac_strmap_init(oac_strmap *m, oac_ctx *ctx)
{
    oac_strindex_init(&m->x, ctx, NULL, sizeof *m->slots,
                      offsetof(struct oac_strmap_slot, key));
    m->slots = NULL;
    m->ecap = 0;
}

void oac_strmap_fini(oac_strmap *m)
{
    oac_dealloc(m->x.ctx, m->slots);
    oac_strindex_fini(&m->x);
    m->slots = NULL;
    m->x.base = NULL;
    m->ecap = 0;
}

/* Room for n entries (n > ecap); the index follows them (x.base). */
static int grow_entries(oac_strmap *m, size_t n)
{
    if (n > SIZE_MAX / sizeof *m->slots)
        return oac_err(m->x.ctx, OAC_ENOMEM, "map too large");
    struct oac_strmap_slot *e = oac_realloc(m->x.ctx, m->slots, n * sizeof *e);
    if (!e)
        return OAC_ENOMEM;
    m->slots = e;
    m->x.base = e;
    m->ecap = n;
    return OAC_OK;
}

int oac_strmap_reserve(oac_strmap *m, size_t n)
{
    int rc;
    if (n > m->ecap && (rc = grow_entries(m, n)))
        return rc;
    return oac_strindex_reserve(&m->x, n);
}

int oac_strmap_put(oac_strmap *m, const char *key, void *val)
{
    size_t e = m->x.count, found;
    int rc;
    /* The entry the index may record next exists before it does. */
    if (e == m->ecap) {
        if (m->ecap > SIZE_MAX / 4)
            return oac_err(m->x.ctx, OAC_ENOMEM, "map too large");
        if ((rc = grow_entries(m, m->ecap ? m->ecap * 2 : 12)))
            return rc;
    }
    if ((rc = oac_strindex_get_or_add(&m->x, key, e, &found)))
        return rc;
    if (found != SIZE_MAX)
        m->slots[found].val = val;
    else
        m->slots[e] = (struct oac_strmap_slot){ key, val };
    return OAC_OK;
}

void *oac_strmap_get(const oac_strmap *m, const char *key)
{
    size_t e = oac_strindex_get(&m->x, key);
    return e == SIZE_MAX ? NULL : m->slots[e].val;
}

bool oac_strmap_has(const oac_strmap *m, const char *key)
{
    return oac_strmap_get(m, key) != NULL;
}

/* ---- strindex: probe slots over entries the caller stores ----------- */

void oac_strindex_init(oac_strindex *x, oac_ctx *ctx, const void *base,
                       size_t stride, size_t key_off)
{
    memset(x, 0, sizeof *x);
    x->ctx = ctx;
    x->base = base;
    x->stride = stride;
    x->key_off = key_off;
}

void oac_strindex_fini(oac_strindex *x)
{
    oac_dealloc(x->ctx, x->idx);
    x->idx = NULL;
    x->cap = x->count = 0;
}

/* 32-bit entry indices and hashes, so at most 2^31 slots; keys are
 * distinct, so each takes the first empty slot, and none is hashed
 * again. */
static int index_rehash(oac_ctx *ctx, struct oac_strmap_idx **pidx,
                        size_t *pcap, size_t ncap)
{
    if (ncap > ((size_t)1 << 31) ||
        ncap > SIZE_MAX / sizeof(struct oac_strmap_idx))
        return oac_err(ctx, OAC_ENOMEM, "map too large");
    struct oac_strmap_idx *idx = oac_calloc(ctx, ncap, sizeof *idx);
    if (!idx)
        return OAC_ENOMEM;
    for (size_t j = 0; j < *pcap; j++) {
        if (!(*pidx)[j].e)
            continue;
        size_t i = oac_hash_slot((*pidx)[j].h, ncap);
        while (idx[i].e)
            i = i + 1 < ncap ? i + 1 : 0;
        idx[i] = (*pidx)[j];
    }
    oac_dealloc(ctx, *pidx);
    *pidx = idx;
    *pcap = ncap;
    return OAC_OK;
}

int oac_strindex_reserve(oac_strindex *x, size_t n)
{
    /* Not a power of two (oac_hash_slot): n keys fill 70% of the slots,
     * below get_or_add's 3/4 load and with short probe runs. */
    if (n > SIZE_MAX / 16)
        return oac_err(x->ctx, OAC_ENOMEM, "map too large");
    size_t cap = (n * 10 + 6) / 7 + 2;
    return cap > x->cap ? index_rehash(x->ctx, &x->idx, &x->cap, cap)
                        : OAC_OK;
}

int oac_strindex_grow(oac_strindex *x)
{
    if (x->cap > SIZE_MAX / 4)
        return oac_err(x->ctx, OAC_ENOMEM, "map too large");
    return index_rehash(x->ctx, &x->idx, &x->cap, x->cap ? x->cap * 2 : 16);
}

/* strmap.c: an open-addressing hash map from borrowed strings to pointers.
 *
 * Keys are not copied: they point into the parsed model, which outlives
 * every map built over it.  Lookups are O(1) so analysis stays linear in
 * the size of the graph.
 */
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
    memset(m, 0, sizeof *m);
    m->ctx = ctx;
}

void oac_strmap_fini(oac_strmap *m)
{
    oac_dealloc(m->ctx, m->slots);
    oac_dealloc(m->ctx, m->idx);
    m->slots = NULL;
    m->idx = NULL;
    m->cap = m->count = m->ecap = 0;
}

/* Two blocks: the entries in insertion order, grown on their own (a
 * reserve makes them exactly as many as asked for, so a map sized once
 * wastes no entry), and cap probe slots (entry index and hash, 8 bytes)
 * probed linearly below a 3/4 load.  The probes walk a small array, and
 * entries inserted close together (a value and the nodes reading it) sit
 * close together in memory, so lookups mostly hit the cache. */

/* The probe slot of key: holding its entry, or the empty slot where it
 * would go. */
static inline size_t find(const oac_strmap *m, const char *key, uint32_t h)
{
    const struct oac_strmap_idx *idx = m->idx;
    size_t cap = m->cap;
    for (size_t i = oac_hash_slot(h, cap);; i = i + 1 < cap ? i + 1 : 0) {
        uint32_t e = idx[i].e;
        if (!e)
            return i;
        if (idx[i].h == h) {
            const char *k = m->slots[e - 1].key;
            if (k == key || strcmp(k, key) == 0)
                return i;
        }
    }
}

static int index_rehash(oac_ctx *ctx, struct oac_strmap_idx **pidx,
                        size_t *pcap, size_t ncap);

static int rehash(oac_strmap *m, size_t ncap)
{
    return index_rehash(m->ctx, &m->idx, &m->cap, ncap);
}

/* Room for n entries (n > ecap). */
static int grow_entries(oac_strmap *m, size_t n)
{
    if (n > SIZE_MAX / sizeof *m->slots)
        return oac_err(m->ctx, OAC_ENOMEM, "map too large");
    struct oac_strmap_slot *e = oac_realloc(m->ctx, m->slots, n * sizeof *e);
    if (!e)
        return OAC_ENOMEM;
    m->slots = e;
    m->ecap = n;
    return OAC_OK;
}

int oac_strmap_reserve(oac_strmap *m, size_t n)
{
    /* The smallest power of two that holds n keys below put's 3/4 load. */
    if (n > SIZE_MAX / 8)
        return oac_err(m->ctx, OAC_ENOMEM, "map too large");
    size_t cap = m->cap ? m->cap : 16;
    while ((n + 1) * 4 >= cap * 3) {
        if (cap > SIZE_MAX / 4 / sizeof(struct oac_strmap_idx))
            return oac_err(m->ctx, OAC_ENOMEM, "map too large");
        cap *= 2;
    }
    int rc;
    if (n > m->ecap && (rc = grow_entries(m, n)))
        return rc;
    return cap > m->cap ? rehash(m, cap) : OAC_OK;
}

/* Room for one more key (index below its load, an entry free); *grew
 * set when the probe slots moved. */
static int make_room(oac_strmap *m, bool *grew)
{
    int rc;
    *grew = false;
    if ((m->count + 1) * 4 >= m->cap * 3) {
        if (m->cap > SIZE_MAX / 4)
            return oac_err(m->ctx, OAC_ENOMEM, "map too large");
        if ((rc = rehash(m, m->cap ? m->cap * 2 : 16)))
            return rc;
        *grew = true;
    }
    if (m->count == m->ecap) {
        if (m->ecap > SIZE_MAX / 4)
            return oac_err(m->ctx, OAC_ENOMEM, "map too large");
        if ((rc = grow_entries(m, m->ecap ? m->ecap * 2 : 12)))
            return rc;
    }
    return OAC_OK;
}

static void insert_at(oac_strmap *m, size_t i, const char *key, void *val,
                      uint32_t h)
{
    m->slots[m->count] = (struct oac_strmap_slot){ key, val };
    m->idx[i] = (struct oac_strmap_idx){ (uint32_t)(m->count + 1), h };
    m->count++;
}

int oac_strmap_put(oac_strmap *m, const char *key, void *val)
{
    bool grew;
    int rc = make_room(m, &grew);
    if (rc)
        return rc;
    uint32_t h = oac_str_hash(key);
    size_t i = find(m, key, h);
    if (m->idx[i].e) {
        m->slots[m->idx[i].e - 1].val = val;
        return OAC_OK;
    }
    insert_at(m, i, key, val, h);
    return OAC_OK;
}

void *oac_strmap_get(const oac_strmap *m, const char *key)
{
    if (!m->cap || !key)
        return NULL;
    uint32_t e = m->idx[find(m, key, oac_str_hash(key))].e;
    return e ? m->slots[e - 1].val : NULL;
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

/* The probe slots of a strmap and a strindex grow alike: 32-bit entry
 * indices and hashes, so at most 2^31 slots; keys are distinct, so each
 * takes the first empty slot, and none is hashed again. */
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

/* strmap.c: an open-addressing hash map from borrowed strings to pointers.
 *
 * Keys are not copied: they point into the parsed model, which outlives
 * every map built over it.  Lookups are O(1) so analysis stays linear in
 * the size of the graph.
 */
#include <stdint.h>
#include <string.h>

#include "oac_int.h"

struct oac_strmap_slot {
    const char *key;
    void *val;
    uint64_t hash;
};

/* Eight bytes at a time, then a murmur-style finalizer: value names are
 * short and a byte-at-a-time hash was most of a lookup.  Keys come from
 * the model, so the finalizer's avalanche keeps probe runs short for
 * ordinary names; no adversarial key control is worth more here. */
static uint64_t hash_str(const char *s)
{
    size_t n = strlen(s);
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n;
    const uint64_t k = 0xff51afd7ed558ccdULL;
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * k;
        h ^= h >> 32;
    }
    if (n) {
        /* The tail as one word (its byte order only moves slots). */
        uint64_t w = 0;
        memcpy(&w, s, n);
        h = (h ^ w) * k;
    }
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

void oac_strmap_init(oac_strmap *m, oac_ctx *ctx)
{
    memset(m, 0, sizeof *m);
    m->ctx = ctx;
}

void oac_strmap_fini(oac_strmap *m)
{
    oac_dealloc(m->ctx, m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}

/* Layout of the one block at m->slots (a "compact" table): the entries
 * in insertion order, room for cap * 3/4 of them (put keeps the load
 * below that), then cap 32-bit indices (entry + 1, 0 for an empty
 * slot) probed linearly.  The probes walk a small array, and entries
 * inserted close together (a value and the nodes reading it) sit close
 * together in memory, so lookups mostly hit the cache. */
static size_t entries_cap(size_t cap)
{
    return cap / 4 * 3;
}

static uint32_t *index_of(const oac_strmap *m)
{
    return (uint32_t *)(void *)(m->slots + entries_cap(m->cap));
}

/* The index slot of key: holding its entry, or the empty slot where it
 * would go. */
static size_t find(const oac_strmap *m, const char *key, uint64_t h)
{
    const uint32_t *idx = index_of(m);
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t e = idx[i];
        if (!e)
            return i;
        const struct oac_strmap_slot *s = &m->slots[e - 1];
        if (s->hash == h && (s->key == key || strcmp(s->key, key) == 0))
            return i;
    }
}

static int rehash(oac_strmap *m, size_t ncap)
{
    /* 32-bit indices: at most 2^31 slots. */
    if (ncap > ((size_t)1 << 31) ||
        ncap > SIZE_MAX / (sizeof(struct oac_strmap_slot) + sizeof(uint32_t)))
        return oac_err(m->ctx, OAC_ENOMEM, "map too large");
    size_t ecap = entries_cap(ncap);
    struct oac_strmap_slot *slots =
        oac_alloc(m->ctx, ecap * sizeof *slots + ncap * sizeof(uint32_t));
    if (!slots)
        return OAC_ENOMEM;
    if (m->count)
        memcpy(slots, m->slots, m->count * sizeof *slots);
    uint32_t *idx = (uint32_t *)(void *)(slots + ecap);
    memset(idx, 0, ncap * sizeof *idx);
    /* Keys are distinct: each entry takes the first empty slot. */
    for (size_t e = 0; e < m->count; e++) {
        size_t i = slots[e].hash & (ncap - 1);
        while (idx[i])
            i = (i + 1) & (ncap - 1);
        idx[i] = (uint32_t)(e + 1);
    }
    oac_dealloc(m->ctx, m->slots);
    m->slots = slots;
    m->cap = ncap;
    return OAC_OK;
}

int oac_strmap_reserve(oac_strmap *m, size_t n)
{
    /* The smallest power of two that holds n keys below put's 3/4 load. */
    if (n > SIZE_MAX / 8)
        return oac_err(m->ctx, OAC_ENOMEM, "map too large");
    size_t cap = m->cap ? m->cap : 16;
    while ((n + 1) * 4 >= cap * 3) {
        if (cap > SIZE_MAX / 4 / sizeof(struct oac_strmap_slot))
            return oac_err(m->ctx, OAC_ENOMEM, "map too large");
        cap *= 2;
    }
    return cap > m->cap ? rehash(m, cap) : OAC_OK;
}

int oac_strmap_put(oac_strmap *m, const char *key, void *val)
{
    if ((m->count + 1) * 4 >= m->cap * 3) {
        if (m->cap > SIZE_MAX / 4)
            return oac_err(m->ctx, OAC_ENOMEM, "map too large");
        int rc = rehash(m, m->cap ? m->cap * 2 : 16);
        if (rc)
            return rc;
    }
    uint64_t h = hash_str(key);
    size_t i = find(m, key, h);
    uint32_t *idx = index_of(m);
    if (idx[i]) {
        m->slots[idx[i] - 1].val = val;
        return OAC_OK;
    }
    struct oac_strmap_slot *s = &m->slots[m->count];
    s->key = key;
    s->hash = h;
    s->val = val;
    idx[i] = (uint32_t)(m->count + 1);
    m->count++;
    return OAC_OK;
}

/* The value of key when present (*found, map unchanged); else inserts
 * (key, val) and sets *found to NULL: one hash and (unless the table
 * grows) one probe instead of a get followed by a put (graph.c defines
 * values this way). */
int oac_strmap_get_or_put(oac_strmap *m, const char *key, void *val,
                          void **found)
{
    *found = NULL;
    uint64_t h = hash_str(key);
    size_t i = 0;
    if (m->cap) {
        i = find(m, key, h);
        uint32_t e = index_of(m)[i];
        if (e) {
            *found = m->slots[e - 1].val;
            return OAC_OK;
        }
    }
    /* Absent: grow as put would, then insert. */
    if ((m->count + 1) * 4 >= m->cap * 3) {
        if (m->cap > SIZE_MAX / 4)
            return oac_err(m->ctx, OAC_ENOMEM, "map too large");
        int rc = rehash(m, m->cap ? m->cap * 2 : 16);
        if (rc)
            return rc;
        i = find(m, key, h);
    }
    uint32_t *idx = index_of(m);
    struct oac_strmap_slot *s = &m->slots[m->count];
    s->key = key;
    s->hash = h;
    s->val = val;
    idx[i] = (uint32_t)(m->count + 1);
    m->count++;
    return OAC_OK;
}

void *oac_strmap_get(const oac_strmap *m, const char *key)
{
    if (!m->cap || !key)
        return NULL;
    uint32_t e = index_of(m)[find(m, key, hash_str(key))];
    return e ? m->slots[e - 1].val : NULL;
}

bool oac_strmap_has(const oac_strmap *m, const char *key)
{
    return oac_strmap_get(m, key) != NULL;
}

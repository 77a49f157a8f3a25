/* strmap.c: an open-addressing hash map from borrowed strings to pointers.
 *
 * Keys are not copied: they point into the parsed model, which outlives
 * every map built over it.  Lookups are O(1) so analysis stays linear in
 * the size of the graph.
 */
#include <string.h>

#include "oac_int.h"

struct oac_strmap_slot {
    const char *key;
    void *val;
    uint64_t hash;
};

/* FNV-1a: short value names, no adversarial key control worth more. */
static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
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

static struct oac_strmap_slot *find(const oac_strmap *m, const char *key,
                                    uint64_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        struct oac_strmap_slot *s = &m->slots[i];
        if (!s->key || (s->hash == h && strcmp(s->key, key) == 0))
            return s;
    }
}

static int rehash(oac_strmap *m, size_t ncap)
{
    struct oac_strmap_slot *old = m->slots;
    size_t ocap = m->cap;
    struct oac_strmap_slot *slots = oac_calloc(m->ctx, ncap, sizeof *slots);
    if (!slots)
        return OAC_ENOMEM;
    m->slots = slots;
    m->cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].key)
            *find(m, old[i].key, old[i].hash) = old[i];
    oac_dealloc(m->ctx, old);
    return OAC_OK;
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
    struct oac_strmap_slot *s = find(m, key, h);
    if (!s->key) {
        s->key = key;
        s->hash = h;
        m->count++;
    }
    s->val = val;
    return OAC_OK;
}

void *oac_strmap_get(const oac_strmap *m, const char *key)
{
    if (!m->cap || !key)
        return NULL;
    struct oac_strmap_slot *s = find(m, key, hash_str(key));
    return s->key ? s->val : NULL;
}

bool oac_strmap_has(const oac_strmap *m, const char *key)
{
    return oac_strmap_get(m, key) != NULL;
}

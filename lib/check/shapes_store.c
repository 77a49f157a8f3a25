/* check/shapes_store.c: the store of symbols and known values behind struct
 * oac_shapes (check/shapes_store.h), apart from the pass that fills it (check/shapes.c).
 *
 * Owns: creating and freeing the store; the arena of dims and knowns;
 * interning of dims arrays; the dimension symbols (creation, names, the
 * union-find with path halving, joining and binding roots); the
 * known-value table by value id.  It reports nothing: whether a binding
 * conflicts is the pass's finding (shape-mismatch, check/shapes.c).
 * Contract: section 3 (a dim_param is one symbol everywhere, --dim binds
 * it; "A value is known when"), section 4 (the dims an alias class
 * reports).
 *
 * Invariants (check/shapes_store.h 1, 3, 7):
 *  1. A symbol's root holds its binding and, when any member has one,
 *     a name; a root is bound at most once through oac_shapes_sym_bind,
 *     and a join keeps whichever side's binding and name exist (callers
 *     join only roots whose bindings agree).
 *  2. Interned dims are arena blocks, equal arrays one block, never
 *     written once made; the hash table exists only while the pass runs
 *     (oac_shapes_intern_done).
 *  3. The known table is open addressing at most half full, behind a
 *     bitmap of the ids that hold a value (check/shapes_store.h, the inline readers).
 *  4. Every allocation goes through the context's allocator; failure is
 *     OAC_ENOMEM (with oac_err where a pointer is returned).
 */
#include <string.h>

#include "model/arena.h"
#include "check/shapes_store.h"

/* ------------------------------------------------------------------ */
/* The store                                                            */
/* ------------------------------------------------------------------ */

int oac_shapes_new(oac_ctx *ctx, size_t n_values, oac_shapes **out)
{
    *out = NULL;
    oac_shapes *sh = oac_calloc(ctx, 1, sizeof *sh);
    if (!sh)
        return OAC_ENOMEM;
    sh->ctx = ctx;
    oac_strmap_init(&sh->sym_by_name, ctx);
    sh->arena = oac_arena_new(ctx);
    sh->n_values = n_values;
    sh->vals = oac_calloc(ctx, n_values ? n_values : 1, sizeof *sh->vals);
    sh->known_bits = oac_calloc(ctx, n_values / 64 + 1, sizeof *sh->known_bits);
    if (!sh->arena || !sh->vals || !sh->known_bits) {
        oac_shapes_free(sh);
        return OAC_ENOMEM;
    }
    oac_prefault(sh->vals, n_values * sizeof *sh->vals);   /* all written next */
    for (size_t i = 0; i < n_values; i++)
        sh->vals[i].rank = -1;
    *out = sh;
    return OAC_OK;
}

/* ------------------------------------------------------------------ */
/* Allocation and interned dims                                         */
/* ------------------------------------------------------------------ */

int64_t *oac_shapes_new_i64(oac_shapes *sh, size_t n)
{
    if (n > SIZE_MAX / sizeof(int64_t)) {
        oac_err(sh->ctx, OAC_ENOMEM, "shape too large");
        return NULL;
    }
    int64_t *d = oac_arena_alloc(sh->arena, n ? n * sizeof *d : 1);
    if (!d)
        oac_err(sh->ctx, OAC_ENOMEM, "out of memory");
    return d;
}

/* One interned dims array (check/shapes_store.h invariant 7). */
struct oac_dims_slot {
    const oac_dimref *dims;         /* NULL: free slot */
    uint32_t hash;
    int32_t rank;
};

static inline struct oac_dims_slot *dims_probe(struct oac_dims_slot *tab,
                                               size_t cap, uint32_t hash,
                                               const oac_dimref *d, size_t n)
{
    size_t i = hash & (cap - 1);
    while (tab[i].dims &&
           (tab[i].hash != hash || (size_t)tab[i].rank != n ||
            !oac_dims_eq(tab[i].dims, d, n)))
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

static int dims_grow(oac_shapes *sh)
{
    size_t cap = sh->cap_dims_tab ? 2 * sh->cap_dims_tab : 256;
    struct oac_dims_slot *t = oac_calloc(sh->ctx, cap, sizeof *t);
    if (!t)
        return OAC_ENOMEM;
    for (size_t i = 0; i < sh->cap_dims_tab; i++) {
        const struct oac_dims_slot *o = &sh->dims_tab[i];
        if (o->dims)
            *dims_probe(t, cap, o->hash, o->dims, (size_t)o->rank) = *o;
    }
    oac_dealloc(sh->ctx, sh->dims_tab);
    sh->dims_tab = t;
    sh->cap_dims_tab = cap;
    return OAC_OK;
}

const oac_dimref *oac_shapes_intern(oac_shapes *sh, const oac_dimref *d,
                                    size_t n)
{
    if (n > OAC_SHAPE_MAX_RANK) {
        oac_err(sh->ctx, OAC_ENOMEM, "shape too large");
        return NULL;
    }
    for (size_t k = 0; k < 4; k++)
        if (sh->dims_recent[k] && (size_t)sh->dims_recent_rank[k] == n &&
            oac_dims_eq(sh->dims_recent[k], d, n))
            return sh->dims_recent[k];
    if (2 * (sh->n_dims_tab + 1) > sh->cap_dims_tab && dims_grow(sh))
        return NULL;
    uint64_t x = n;
    for (size_t i = 0; i < n; i++)
        x = (x ^ (uint64_t)d[i]) * 0x9E3779B97F4A7C15u;
    uint32_t h = (uint32_t)(x >> 32) ^ (uint32_t)x;
    struct oac_dims_slot *slot = dims_probe(sh->dims_tab, sh->cap_dims_tab, h, d, n);
    if (!slot->dims) {
        oac_dimref *copy = oac_shapes_new_i64(sh, n);
        if (!copy)
            return NULL;
        oac_shapes_copy(copy, d, n * sizeof *d);
        *slot = (struct oac_dims_slot){ .dims = copy, .hash = h, .rank = (int32_t)n };
        sh->n_dims_tab++;
    }
    sh->dims_recent[sh->dims_next % 4] = slot->dims;
    sh->dims_recent_rank[sh->dims_next++ % 4] = (int16_t)n;
    return slot->dims;
}

/* The table is only for building: values keep their arrays. */
void oac_shapes_intern_done(oac_shapes *sh)
{
    oac_dealloc(sh->ctx, sh->dims_tab);
    sh->dims_tab = NULL;
    sh->n_dims_tab = sh->cap_dims_tab = 0;
    for (size_t k = 0; k < 4; k++)
        sh->dims_recent[k] = NULL;
}

oac_known *oac_shapes_new_known(oac_shapes *sh, int32_t elem_type,
                                int32_t rank, size_t n)
{
    if (n > OAC_KNOWN_MAX || rank < 0 || rank > OAC_SHAPE_MAX_RANK)
        return NULL;
    oac_known *k = oac_arena_alloc(sh->arena, sizeof *k);
    int64_t *shape = oac_shapes_new_i64(sh, (size_t)rank);
    int64_t *v = oac_shapes_new_i64(sh, n);
    if (!k || !shape || !v) {
        oac_err(sh->ctx, OAC_ENOMEM, "out of memory");
        return NULL;
    }
    k->elem_type = elem_type;
    k->rank = rank;
    k->shape = shape;
    k->n = n;
    k->v = v;
    return k;
}

/* ------------------------------------------------------------------ */
/* Symbols                                                              */
/* ------------------------------------------------------------------ */

static size_t sym_find(const oac_shapes *sh, size_t i)
{
    /* Path halving would write; lookups from const readers walk only. */
    while (sh->syms[i].parent != i)
        i = sh->syms[i].parent;
    return i;
}

size_t oac_shapes_sym_root(oac_shapes *sh, size_t i)
{
    while (sh->syms[i].parent != i) {
        sh->syms[i].parent = sh->syms[sh->syms[i].parent].parent;
        i = sh->syms[i].parent;
    }
    return i;
}

static int sym_new(oac_shapes *sh, const char *name, size_t *out)
{
    if (oac_grow(sh->ctx, (void **)&sh->syms, &sh->cap_syms, sh->n_syms + 1,
                 sizeof *sh->syms))
        return OAC_ENOMEM;
    size_t id = sh->n_syms++;
    sh->syms[id] = (oac_sym){ .parent = id, .value = -1, .name = name,
                              .origin_value = SIZE_MAX };
    *out = id;
    return OAC_OK;
}

int oac_shapes_fresh(oac_shapes *sh, oac_dimref *out)
{
    size_t id;
    if (sym_new(sh, NULL, &id))
        return OAC_ENOMEM;
    *out = OAC_DIM_SYM(id);
    return OAC_OK;
}

int oac_shapes_sym_named(oac_shapes *sh, const char *name, oac_dimref *out)
{
    void *hit = oac_strmap_get(&sh->sym_by_name, name);
    size_t id;
    if (hit) {
        id = (size_t)(uintptr_t)hit - 1;
    } else {
        if (sym_new(sh, name, &id) ||
            oac_strmap_put(&sh->sym_by_name, name, (void *)(uintptr_t)(id + 1)))
            return OAC_ENOMEM;
    }
    *out = OAC_DIM_SYM(id);
    return OAC_OK;
}

size_t oac_shapes_sym_by_name(const oac_shapes *sh, const char *name)
{
    void *hit = oac_strmap_get(&sh->sym_by_name, name);
    return hit ? (size_t)(uintptr_t)hit - 1 : SIZE_MAX;
}

void oac_shapes_sym_bind(oac_shapes *sh, size_t root, int64_t n,
                         uint8_t origin, size_t origin_value, int32_t origin_dim)
{
    oac_sym *s = &sh->syms[root];
    s->value = n;
    s->origin = origin;
    s->origin_value = origin_value;
    s->origin_dim = origin_dim;
}

void oac_shapes_sym_join(oac_shapes *sh, size_t ra, size_t rb)
{
    oac_sym *A = &sh->syms[ra], *B = &sh->syms[rb];
    /* The root keeps a binding and a name, whichever side has them. */
    if (A->value < 0 && B->value >= 0)
        oac_shapes_sym_bind(sh, ra, B->value, B->origin, B->origin_value,
                            B->origin_dim);
    if (!A->name)
        A->name = B->name;
    B->parent = ra;
}

int64_t oac_shapes_sym_value(const oac_shapes *sh, oac_dimref d)
{
    if (!OAC_DIM_IS_SYM(d))
        return d;
    size_t id = OAC_DIM_SYM_ID(d);
    if (!sh || id >= sh->n_syms)
        return -1;
    return sh->syms[sym_find(sh, id)].value;
}

bool oac_shapes_dim_from_options(const oac_shapes *sh, oac_dimref d, size_t lo,
                                 size_t hi)
{
    if (!OAC_DIM_IS_SYM(d) || !sh || OAC_DIM_SYM_ID(d) >= sh->n_syms)
        return false;
    const oac_sym *r = &sh->syms[sym_find(sh, OAC_DIM_SYM_ID(d))];
    return r->value >= 0 && r->origin == OAC_ORIGIN_OPTION && r->origin_dim >= 0 &&
           (size_t)r->origin_dim >= lo && (size_t)r->origin_dim < hi;
}

const char *oac_shapes_dim_name(const oac_shapes *sh, oac_dimref d)
{
    if (!OAC_DIM_IS_SYM(d))
        return NULL;
    size_t id = OAC_DIM_SYM_ID(d);
    if (!sh || id >= sh->n_syms)
        return NULL;
    if (sh->syms[id].name)
        return sh->syms[id].name;
    return sh->syms[sym_find(sh, id)].name;
}

const oac_vshape *oac_shapes_value(const oac_shapes *sh, size_t id)
{
    return sh && id < sh->n_values ? &sh->vals[id] : NULL;
}

/* ------------------------------------------------------------------ */
/* Known values (the readers are inline in check/shapes_store.h)                 */
/* ------------------------------------------------------------------ */

int oac_shapes_known_set(oac_shapes *sh, size_t id, oac_known *k)
{
    if (oac_shapes_known_bit(sh, id)) {
        /* Values are set once in practice; a NULL keeps the slot (the
         * bit, not the slot, says whether there is a value). */
        struct oac_known_slot *sl =
            &sh->known_tab[oac_shapes_known_slot(sh->known_tab, sh->cap_known, id)];
        if (k) {
            sl->k = k;
            return OAC_OK;
        }
        sh->known_bits[id / 64] &= ~((uint64_t)1 << (id % 64));
        return OAC_OK;
    }
    if (!k)
        return OAC_OK;
    if (2 * (sh->n_known + 1) > sh->cap_known) {
        size_t cap = sh->cap_known ? 2 * sh->cap_known : 64;
        struct oac_known_slot *t = oac_calloc(sh->ctx, cap, sizeof *t);
        if (!t)
            return OAC_ENOMEM;
        for (size_t i = 0; i < sh->cap_known; i++)
            if (sh->known_tab[i].k)
                t[oac_shapes_known_slot(t, cap, sh->known_tab[i].id)] = sh->known_tab[i];
        oac_dealloc(sh->ctx, sh->known_tab);
        sh->known_tab = t;
        sh->cap_known = cap;
    }
    sh->known_tab[oac_shapes_known_slot(sh->known_tab, sh->cap_known, id)] =
        (struct oac_known_slot){ .id = id, .k = k };
    sh->n_known++;
    sh->known_bits[id / 64] |= (uint64_t)1 << (id % 64);
    return OAC_OK;
}

const oac_known *oac_shapes_known(const oac_shapes *sh, size_t id)
{
    return sh && id < sh->n_values ? oac_shapes_known_get(sh, id) : NULL;
}

bool oac_shapes_bytes(const oac_shapes *sh, const oac_vshape *v,
                      uint64_t *out)
{
    if (!v || v->kind != OAC_VK_TENSOR || v->quantized || v->rank < 0 ||
        !v->elem_type)
        return false;
    uint64_t n = 1;
    for (int32_t i = 0; i < v->rank; i++) {
        int64_t d = oac_shapes_dim(sh, v->dims[i]);
        if (d < 0 || oac_mul_overflow_u64(n, (uint64_t)d, &n))
            return false;
    }
    return oac_elem_bytes(v->elem_type, n, out);
}

void oac_shapes_free(oac_shapes *sh)
{
    if (!sh)
        return;
    oac_ctx *ctx = sh->ctx;
    oac_strmap_fini(&sh->sym_by_name);
    oac_dealloc(ctx, sh->syms);
    oac_dealloc(ctx, sh->vals);
    oac_dealloc(ctx, sh->known_bits);
    oac_dealloc(ctx, sh->known_tab);
    oac_shapes_intern_done(sh);
    oac_arena_free(sh->arena);
    oac_dealloc(ctx, sh);
}


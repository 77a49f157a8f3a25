/* model/nulset.c: the strings of a model that held a NUL byte, as a set
 * (oac_int.h, oac_nul_set).
 *
 * Owns oac_nul_set_make (model/load.c, from the decoder's list) and
 * oac_nul_held (model/extdata.c: locations; check/structure.c: names).
 * Contract 3 (external-data-invalid), section 8 (model-invalid).
 *
 * Invariants:
 *  1. One sort at load, then a bisection per question: a hostile file may
 *     hold many such strings, and every name or location may be asked
 *     about, so no question scans the list.
 *  2. The set lives in the model's arena and is never written after it
 *     is made.
 */
#include <stdint.h>
#include <stdlib.h>

#include "model/arena.h"
#include "model/decode.h"
#include "oac_int.h"

static int cmp_addr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(const char *const *)a, y = (uintptr_t)*(const char *const *)b;
    return x < y ? -1 : x > y;
}

bool oac_nul_held(const oac_nul_set *ns, const char *s)
{
    return s && ns->n && bsearch(&s, ns->p, ns->n, sizeof *ns->p, cmp_addr) != NULL;
}

int oac_nul_set_make(oac_arena *arena, const oac_decode_nul *l, oac_nul_set *out)
{
    size_t n = 0;
    for (const oac_decode_nul *e = l; e; e = e->next)
        n++;
    *out = (oac_nul_set){ NULL, 0 };
    if (!n)
        return OAC_OK;
    /* n list entries are in the arena already: n pointers fit. */
    if (!(out->p = oac_arena_alloc(arena, n * sizeof *out->p)))
        return OAC_ENOMEM;
    for (const oac_decode_nul *e = l; e; e = e->next)
        out->p[out->n++] = e->s;
    qsort(out->p, out->n, sizeof *out->p, cmp_addr);
    return OAC_OK;
}

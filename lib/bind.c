/* bind.c: bindings of caller-owned storage to READ_WRITE inputs
 * (contract section 3, runtime codes binding-readonly, binding-overlap,
 * binding-busy, binding-too-small; section 5, "each READ_WRITE input is
 * bound once").
 *
 * Owns oac_binding and its refusals.  A refusal is a diagnostic and the
 * run does not start: there is no fallback that copies the cache into
 * fresh storage.
 *
 * Invariants:
 *  1. owner is changed only by compare-and-swap from 0 to a session, and
 *     back to 0 only by the session holding it, so at most one session
 *     writes through a binding at any time.  The owner lives in the
 *     binding, never in a global, so independent runs do not interact.
 *  2. oac_bindings_acquire_all takes bindings in array order and gives
 *     back what it took on failure; since every session starts with the
 *     same first binding, the session winning it wins all of them, and K
 *     racing sessions yield exactly one winner.
 */
#include <inttypes.h>

#include "runtime.h"

void oac_binding_init(oac_binding *b, const char *name, void *data,
                      size_t bytes, bool writable)
{
    b->name = name;
    b->data = data;
    b->bytes = bytes;
    b->writable = writable;
    b->is_initializer = false;
    b->is_constant = false;
    atomic_init(&b->owner, 0);
}

bool oac_binding_acquire(oac_binding *b, const void *session)
{
    uintptr_t want = 0;
    uintptr_t me = (uintptr_t)session;
    if (atomic_compare_exchange_strong(&b->owner, &want, me))
        return true;
    return want == me;
}

void oac_binding_release(oac_binding *b, const void *session)
{
    uintptr_t me = (uintptr_t)session;
    atomic_compare_exchange_strong(&b->owner, &me, 0);
}

int oac_binding_check(const oac_binding *b, uint64_t need,
                      const char *readonly_why, oac_diags *diags)
{
    oac_where w = { .value = b->name };
    int rc = OAC_OK;
    if (readonly_why || b->is_initializer || b->is_constant || !b->writable) {
        const char *why = readonly_why ? readonly_why
                        : b->is_initializer ? "an initializer"
                        : b->is_constant ? "a constant"
                        : "storage declared read-only";
        if (oac_diag_add(diags, OAC_BINDING_READONLY, &w,
                         "mutable cache '%s' is bound to %s", b->name, why))
            return OAC_ENOMEM;
        rc = OAC_ERUNTIME;
    }
    if ((uint64_t)b->bytes < need) {
        if (oac_diag_add(diags, OAC_BINDING_TOO_SMALL, &w,
                         "storage bound to '%s' holds %zu bytes, its declared "
                         "capacity needs %" PRIu64, b->name, b->bytes, need))
            return OAC_ENOMEM;
        rc = OAC_ERUNTIME;
    }
    return rc;
}

/* Byte ranges [a, a+na) and [b, b+nb) share a byte.  Compared as
 * integers: the storages are distinct objects, so pointer relational
 * operators would be undefined. */
static bool overlaps(const void *a, size_t na, const void *b, size_t nb)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    if (!na || !nb)
        return false;
    return x < y + nb && y < x + na;
}

int oac_bindings_check_overlap(oac_binding *const *b, size_t n,
                               oac_diags *diags)
{
    int rc = OAC_OK;
    for (size_t i = 0; i < n; i++) {
        if (!b[i]->writable)
            continue;
        for (size_t j = i + 1; j < n; j++) {
            if (!b[j]->writable ||
                !overlaps(b[i]->data, b[i]->bytes, b[j]->data, b[j]->bytes))
                continue;
            oac_where w = { .value = b[j]->name };
            if (oac_diag_add(diags, OAC_BINDING_OVERLAP, &w,
                             "mutable inputs '%s' and '%s' are bound to "
                             "overlapping storage", b[i]->name, b[j]->name))
                return OAC_ENOMEM;
            rc = OAC_ERUNTIME;
        }
    }
    return rc;
}

int oac_bindings_acquire_all(oac_binding *const *b, size_t n,
                             const void *session, unsigned session_no,
                             oac_diags *diags)
{
    for (size_t i = 0; i < n; i++) {
        if (oac_binding_acquire(b[i], session))
            continue;
        for (size_t j = 0; j < i; j++)
            oac_binding_release(b[j], session);
        oac_where w = { .value = b[i]->name };
        int rc = session_no
                 ? oac_diag_add(diags, OAC_BINDING_BUSY, &w,
                                "session %u: writable binding '%s' is already "
                                "held by another session", session_no, b[i]->name)
                 : oac_diag_add(diags, OAC_BINDING_BUSY, &w,
                                "writable binding '%s' is already held by "
                                "another session", b[i]->name);
        if (rc)
            return OAC_ENOMEM;
        return OAC_ERUNTIME;
    }
    return OAC_OK;
}

void oac_bindings_release_all(oac_binding *const *b, size_t n,
                              const void *session)
{
    for (size_t i = 0; i < n; i++)
        oac_binding_release(b[i], session);
}

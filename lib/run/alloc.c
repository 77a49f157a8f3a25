/* run/alloc.c: the runtime's instrumented allocator (contract section 4,
 * `execution`: per_step alloc_calls/alloc_bytes, measured_peak_bytes).
 *
 * Owns oac_ralloc.  Every byte the reference runtime allocates for node
 * outputs, kernel workspace and cache pages passes through
 * oac_ralloc_get/oac_ralloc_put, so the measured peak is the allocator's
 * own high-water mark, not an estimate.  Storage the contract excludes
 * (caller-bound inputs, initializers read for the run) goes through
 * oac_ralloc_bound, which is tracked separately and never touches the
 * counted figures.
 *
 * Invariants:
 *  1. live == sum of sizes got and not yet put; peak >= live at all times;
 *     step_peak >= live within a step, step_peak_max >= step_peak - step_base.
 *  2. Sizes are passed back on put (the caller knows them); the allocator
 *     keeps no per-block table, so it never allocates for itself.
 *  3. All memory comes from oac_alloc/oac_calloc on the context, so
 *     oac_ctx_fail_alloc_after reaches the runtime's error paths.
 *  4. No single allocation above OAC_RT_MAX_BYTES is attempted: sizes a
 *     model's dims or values produce are refused, whatever the system's
 *     overcommit policy would have let through.
 *  5. Every byte got, counted or bound, is taken from the run's memory
 *     budget (when it has one) before it is allocated and given back
 *     when it is released, so the budget's `used` is what the run's
 *     allocators hold; a refusal allocates nothing and counts nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "run/kernel_api.h"

void oac_ralloc_init(oac_ralloc *a, oac_ctx *ctx)
{
    memset(a, 0, sizeof *a);
    a->ctx = ctx;
}

/* May n bytes be got?  Invariants 4 and 5: refused (a->failed, the
 * reason on ctx) above the per-buffer limit or past the budget; else
 * taken from the budget. */
static bool admit(oac_ralloc *a, size_t n)
{
    if ((uint64_t)n > OAC_RT_MAX_BYTES) {
        a->failed = oac_err(a->ctx, OAC_EBUDGET,
                            "a buffer of %zu bytes is above the reference runtime's "
                            "limit of %" PRIu64 " bytes per buffer", n, OAC_RT_MAX_BYTES);
        return false;
    }
    if ((a->failed = oac_membudget_take(a->budget, a->ctx, n)))
        return false;
    return true;
}

/* A failed allocation of n admitted bytes: back to the budget. */
static void *refused(oac_ralloc *a, size_t n)
{
    oac_membudget_give(a->budget, n);
    a->failed = OAC_ENOMEM;
    return NULL;
}

int oac_ralloc_refusal(oac_ralloc *a, const char *what, const char *name)
{
    char why[sizeof a->ctx->errmsg];
    snprintf(why, sizeof why, "%s", oac_errmsg(a->ctx));
    return oac_err(a->ctx, oac_ralloc_failed(a), "%s '%s': %s", what, name ? name : "", why);
}

void *oac_ralloc_get(oac_ralloc *a, size_t n, bool zero)
{
    uint64_t live;
    /* Refuse before allocating: a live count that wraps would make the
     * measured peak a lie. */
    if (oac_add_overflow_u64(a->live, n, &live)) {
        a->failed = oac_err(a->ctx, OAC_ENOMEM,
                            "runtime allocation of %zu bytes overflows", n);
        return NULL;
    }
    if (!admit(a, n))
        return NULL;
    void *p = zero ? oac_calloc(a->ctx, 1, n) : oac_alloc(a->ctx, n);
    if (!p)
        return refused(a, n);
    a->calls++;
    a->bytes += n;
    a->step_calls++;
    a->step_bytes += n;
    a->live = live;
    if (live > a->peak)
        a->peak = live;
    if (live > a->step_peak)
        a->step_peak = live;
    if (a->step_peak - a->step_base > a->step_peak_max)
        a->step_peak_max = a->step_peak - a->step_base;
    return p;
}

void oac_ralloc_put(oac_ralloc *a, void *p, size_t n)
{
    if (!p)
        return;
    /* A size larger than live is a caller bug; clamp rather than wrap. */
    a->live = n <= a->live ? a->live - n : 0;
    oac_membudget_give(a->budget, n);
    oac_dealloc(a->ctx, p);
}

void *oac_ralloc_bound(oac_ralloc *a, size_t n)
{
    if (!admit(a, n))
        return NULL;
    void *p = oac_calloc(a->ctx, 1, n);
    if (!p)
        return refused(a, n);
    a->bound_bytes += n;
    return p;
}

void oac_ralloc_unbound(oac_ralloc *a, void *p, size_t n)
{
    if (!p)
        return;
    a->bound_bytes = n <= a->bound_bytes ? a->bound_bytes - n : 0;
    oac_membudget_give(a->budget, n);
    oac_dealloc(a->ctx, p);
}

void oac_ralloc_step_begin(oac_ralloc *a)
{
    a->step_calls = 0;
    a->step_bytes = 0;
    a->step_base = a->live;
    a->step_peak = a->live;
}

/* alloc.c: the runtime's instrumented allocator (contract section 4,
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
 */
#include <string.h>

#include "runtime.h"

void oac_ralloc_init(oac_ralloc *a, oac_ctx *ctx)
{
    memset(a, 0, sizeof *a);
    a->ctx = ctx;
}

/* A size no model value may make the runtime allocate (runtime.h). */
static bool too_large(oac_ralloc *a, size_t n)
{
    if ((uint64_t)n <= OAC_RT_MAX_BYTES)
        return false;
    oac_err(a->ctx, OAC_EUNSUPPORTED,
            "a buffer of %zu bytes exceeds the reference runtime's limit of %llu",
            n, (unsigned long long)OAC_RT_MAX_BYTES);
    return true;
}

void *oac_ralloc_get(oac_ralloc *a, size_t n, bool zero)
{
    uint64_t live;
    if (too_large(a, n))
        return NULL;
    /* Refuse before allocating: a live count that wraps would make the
     * measured peak a lie. */
    if (oac_add_overflow_u64(a->live, n, &live)) {
        oac_err(a->ctx, OAC_ENOMEM, "runtime allocation of %zu bytes overflows", n);
        return NULL;
    }
    void *p = zero ? oac_calloc(a->ctx, 1, n) : oac_alloc(a->ctx, n);
    if (!p)
        return NULL;
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
    oac_dealloc(a->ctx, p);
}

void *oac_ralloc_bound(oac_ralloc *a, size_t n)
{
    if (too_large(a, n))
        return NULL;
    void *p = oac_calloc(a->ctx, 1, n);
    if (p)
        a->bound_bytes += n;
    return p;
}

void oac_ralloc_unbound(oac_ralloc *a, void *p, size_t n)
{
    if (!p)
        return;
    a->bound_bytes = n <= a->bound_bytes ? a->bound_bytes - n : 0;
    oac_dealloc(a->ctx, p);
}

void oac_ralloc_step_begin(oac_ralloc *a)
{
    a->step_calls = 0;
    a->step_bytes = 0;
    a->step_base = a->live;
    a->step_peak = a->live;
}

/* ctx.c: contexts, the one allocator, and failure messages.
 *
 * Owns struct oac_ctx.  Every allocation of the library goes through
 * oac_alloc and friends so a test can make the nth one fail
 * (oac_ctx_fail_alloc_after) and walk every error path, as jansson's
 * test_chaos does; oac_free releases what they handed to a caller.
 * Messages of operational failures live on the context, never in a
 * global: contexts are per thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "oac_int.h"

oac_ctx *oac_ctx_new(void)
{
    return calloc(1, sizeof(oac_ctx));
}

void oac_ctx_free(oac_ctx *ctx)
{
    /* The guard's list (model/guard.c): oac_alloc is malloc underneath. */
    oac_guard *g = ctx ? ctx->guard : NULL;
    for (size_t i = 0; g && i < g->n; i++) {
        free(g->e[i].real);
        free(g->e[i].shown);
    }
    if (g)
        free(g->e);
    free(g);
    free(ctx);
}

const char *oac_errmsg(const oac_ctx *ctx)
{
    return ctx ? ctx->errmsg : "no context";
}

void oac_ctx_fail_alloc_after(oac_ctx *ctx, unsigned long n)
{
    ctx->fail_after = n ? ctx->alloc_calls + n : 0;
}

unsigned long oac_ctx_alloc_count(const oac_ctx *ctx)
{
    return ctx->alloc_calls;
}

/* Buffers handed to the caller come from oac_alloc, malloc underneath. */
void oac_free(void *buf)
{
    free(buf);
}

int oac_err(oac_ctx *ctx, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
    va_end(ap);
    return status;
}

/* True when this allocation must fail: out of memory for real, or the
 * test asked for it. */
static bool chaos(oac_ctx *ctx)
{
    ctx->alloc_calls++;
    return ctx->fail_after && ctx->alloc_calls >= ctx->fail_after;
}

static void *nomem(oac_ctx *ctx, size_t n)
{
    oac_err(ctx, OAC_ENOMEM, "out of memory (%zu bytes)", n);
    return NULL;
}

/* Blocks from this size up (a large graph's index and plan arrays, a few
 * MiB each) may be mapped with transparent huge pages: the whole 2 MiB
 * windows inside one are, so that the pages the checker then fills fault
 * in 2 MiB at a time rather than 4 KiB (a hint: where huge pages are off
 * or short, nothing changes). */
#define HUGE_WINDOW ((uintptr_t)2 * 1024 * 1024)

static void *huge_hint(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p && n > HUGE_WINDOW) {
        uintptr_t lo = ((uintptr_t)p + HUGE_WINDOW - 1) & ~(HUGE_WINDOW - 1);
        uintptr_t hi = ((uintptr_t)p + n) & ~(HUGE_WINDOW - 1);
        if (hi > lo)
            (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#else
    (void)n;
#endif
    return p;
}

void *oac_alloc(oac_ctx *ctx, size_t n)
{
    void *p = chaos(ctx) ? NULL : huge_hint(malloc(n ? n : 1), n);
    return p ? p : nomem(ctx, n);
}

void *oac_calloc(oac_ctx *ctx, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return nomem(ctx, SIZE_MAX);
    void *p = chaos(ctx) ? NULL : huge_hint(calloc(1, total ? total : 1), total);
    return p ? p : nomem(ctx, total);
}

void *oac_realloc(oac_ctx *ctx, void *old, size_t n)
{
    void *p = chaos(ctx) ? NULL : realloc(old, n ? n : 1);
    return p ? p : nomem(ctx, n);
}

void *oac_reallocarray(oac_ctx *ctx, void *old, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return nomem(ctx, SIZE_MAX);
    return oac_realloc(ctx, old, total);
}

/* Blocks from this size up are worth a system call (glibc maps blocks
 * of 128 KiB and more on their own, so their pages are all new). */
#define PREFAULT_MIN ((size_t)128 * 1024)

void oac_prefault(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    if (!p || n < PREFAULT_MIN)
        return;
    /* The whole pages inside the block: the ones at its ends may be
     * shared with other blocks, which the kernel would not mind, but
     * they are not ours to touch. */
    uintptr_t page = 4096;
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(page - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)n;
#endif
}

void oac_dealloc(oac_ctx *ctx, void *p)
{
    (void)ctx;
    free(p);
}

char *oac_strndup(oac_ctx *ctx, const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *p = oac_alloc(ctx, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

char *oac_strdup(oac_ctx *ctx, const char *s)
{
    return s ? oac_strndup(ctx, s, strlen(s)) : NULL;
}

char *oac_vasprintf(oac_ctx *ctx, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) {
        oac_err(ctx, OAC_EINTERNAL, "bad format string");
        return NULL;
    }
    char *p = oac_alloc(ctx, (size_t)n + 1);
    if (p)
        vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *oac_asprintf(oac_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = oac_vasprintf(ctx, fmt, ap);
    va_end(ap);
    return p;
}

int oac_grow(oac_ctx *ctx, void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return OAC_OK;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return oac_err(ctx, OAC_ENOMEM, "array too large");
        ncap *= 2;
    }
    void *p = oac_reallocarray(ctx, *arr, ncap, size);
    if (!p)
        return OAC_ENOMEM;
    *arr = p;
    *cap = ncap;
    return OAC_OK;
}

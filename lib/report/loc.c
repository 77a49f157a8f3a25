/* report/loc.c: paths and fingerprints for the reports CI systems read
 * (issue 13: SARIF for code scanning, GitLab Code Quality).
 *
 * Owns oac_report_relpath and oac_report_fingerprints (report/loc.h).
 * Contract section 5 (SARIF), and the additions of the man page's
 * OUTPUT section (paths relative to the working directory, stable
 * fingerprints).
 *
 * Invariants:
 *  1. Paths are compared lexically ("." and ".." folded, no file system
 *     access): the library reads no working directory of its own, the
 *     tool hands it over as srcroot.
 *  2. A fingerprint depends on the code, the path as written, the
 *     diagnostic's location, node and value and its related party's,
 *     and on nothing else (not the message, whose sizes and positions
 *     change with --dim); equal keys are numbered in report order, so
 *     fingerprints are unique within one report.
 */
#include <stdlib.h>
#include <string.h>

#include "report/loc.h"

/* Fold "." and ".." and repeated '/' of an absolute path, in place. */
static void normalize(char *p)
{
    char *out = p;          /* write position; p[0] == '/' */
    const char *in = p;
    while (*in) {
        while (*in == '/')
            in++;
        if (!*in)
            break;
        const char *end = strchr(in, '/');
        size_t n = end ? (size_t)(end - in) : strlen(in);
        if (n == 1 && in[0] == '.') {
            /* nothing */
        } else if (n == 2 && in[0] == '.' && in[1] == '.') {
            while (out > p && *--out != '/')
                ;
        } else {
            *out++ = '/';
            memmove(out, in, n);
            out += n;
        }
        in += n;
    }
    if (out == p)
        *out++ = '/';
    *out = '\0';
}

char *oac_report_relpath(oac_ctx *ctx, const char *path, const char *srcroot,
                         bool *relative)
{
    char *abs = NULL, *root = NULL, *res = NULL;
    if (!srcroot || srcroot[0] != '/') {
        *relative = path[0] != '/';
        return oac_strdup(ctx, path);
    }
    abs = path[0] == '/' ? oac_asprintf(ctx, "%s", path)
                         : oac_asprintf(ctx, "%s/%s", srcroot, path);
    root = oac_strdup(ctx, srcroot);
    if (!abs || !root)
        goto done;
    normalize(abs);
    normalize(root);
    size_t n = strlen(root);
    if (n == 1)
        n = 0;              /* the root folder: every path lies under it */
    if (strncmp(abs, root, n) == 0 && abs[n] == '/' && abs[n + 1]) {
        *relative = true;
        res = oac_strdup(ctx, abs + n + 1);
    } else {
        *relative = false;
        res = oac_strdup(ctx, abs);
    }
done:
    oac_dealloc(ctx, abs);
    oac_dealloc(ctx, root);
    return res;
}

static uint64_t mix(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    /* A separator, and NULL apart from "". */
    return (h ^ (s ? 0x1f : 0x1e)) * 1099511628211ULL;
}

/* A final avalanche (splitmix64's), so close keys give distant hashes. */
static uint64_t finish(uint64_t h)
{
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

typedef struct keyed {
    uint64_t key;
    size_t index;
} keyed;

static int by_key(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

int oac_report_fingerprints(oac_ctx *ctx, uint64_t **out, const oac_diags *diags,
                            const char *rel)
{
    size_t n = oac_diags_count(diags);
    keyed *k = NULL;
    uint64_t *fp = NULL;
    int rc = OAC_ENOMEM;
    *out = NULL;
    if (n == 0)
        return OAC_OK;
    k = oac_calloc(ctx, n, sizeof *k);
    fp = oac_calloc(ctx, n, sizeof *fp);
    if (!k || !fp)
        goto done;
    for (size_t i = 0; i < n; i++) {
        const oac_diag *d = oac_diags_get(diags, i);
        uint64_t h = 1469598103934665603ULL;
        h = mix(h, oac_code_name(d->code));
        h = mix(h, rel);
        h = mix(h, d->location);
        h = mix(h, d->node);
        h = mix(h, d->value);
        h = mix(h, d->related.location);
        h = mix(h, d->related.node);
        h = mix(h, d->related.value);
        k[i].key = h;
        k[i].index = i;
    }
    qsort(k, n, sizeof *k, by_key);
    for (size_t i = 0, rank = 0; i < n; i++) {
        rank = i > 0 && k[i].key == k[i - 1].key ? rank + 1 : 0;
        /* The rank of a key among equal ones, in report order. */
        fp[k[i].index] = finish(k[i].key + rank * 0x9e3779b97f4a7c15ULL);
    }
    *out = fp;
    fp = NULL;
    rc = OAC_OK;
done:
    oac_dealloc(ctx, k);
    oac_dealloc(ctx, fp);
    if (rc != OAC_OK)
        oac_err(ctx, OAC_ENOMEM, "out of memory");
    return rc;
}

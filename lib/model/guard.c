/* guard.c: the inputs of a call, and the one gate every writer passes.
 *
 * Owns oac_guard_add, oac_guard_add_output and oac_guard_check (oac.h).
 * Contract section 12: the inputs of a call are the models, their
 * external-data files, every --input file and its external data, and
 * the configuration given or found beside the model; -o, annotate -o and
 * every file --dump writes never name one of them, and -o and --dump
 * never name the same file.
 *
 * The context carries the call's list.  The library records every file
 * it reads for the call (load.c: the model and each external-data file
 * it references, found or not; inputs.c: each --input file; extdata.c:
 * their external data; genai_config.c: the config read), and the writers
 * ask before writing: oac_outfile_open (-o, --dump files) and annotate's
 * writer; the command line asks once more where the call is set up, so a
 * refusal comes before anything runs or is written.
 *
 * Invariants:
 *  1. An entry is kept by device and inode when its file exists, and
 *     always by its resolved path (resolve: realpath of its longest
 *     folder that exists plus the rest, "." and ".." taken lexically).
 *     A target matches an entry with the same device and inode (hard
 *     links, other spellings) or, for a target or entry without a file,
 *     the same resolved path.
 *  2. An output entry (oac_guard_add_output: -o) is refused to every
 *     other writer, never to the writer that registered it.
 *  3. Nothing here reads or writes a file; stat and realpath only.  The
 *     list belongs to the context: oac_ctx_free (ctx.c) releases it
 *     (oac_int.h has its layout), so ctx.c needs nothing of this file.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oac_int.h"

/* rest (components separated by '/') appended to the resolved folder in
 * buf (PATH_MAX bytes): "" and "." dropped, ".." taking off the last
 * component (lexically: nothing below buf exists).  false when too long. */
static bool append_rest(char *buf, const char *rest)
{
    size_t n = strlen(buf);
    while (*rest) {
        const char *e = strchr(rest, '/');
        size_t k = e ? (size_t)(e - rest) : strlen(rest);
        if (k == 2 && rest[0] == '.' && rest[1] == '.') {
            while (n > 1 && buf[n - 1] != '/')
                n--;
            if (n > 1)
                n--;
            buf[n] = '\0';
        } else if (k && !(k == 1 && rest[0] == '.')) {
            bool root = n == 1 && buf[0] == '/';
            if (n + !root + k >= PATH_MAX)
                return false;
            if (!root)
                buf[n++] = '/';
            memcpy(buf + n, rest, k);
            n += k;
            buf[n] = '\0';
        }
        rest += k + (e != NULL);
    }
    return true;
}

/* path resolved: realpath of the whole, else realpath of its longest
 * folder that exists plus the rest with "." and ".." taken lexically
 * (so "./new/f" and "new//f" are one entry while "new" is not made
 * yet), else path as given.  NULL when out of memory. */
static char *resolve(oac_ctx *ctx, const char *path)
{
    char *buf = oac_alloc(ctx, PATH_MAX);
    if (!buf)
        return NULL;
    if (realpath(path, buf)) {
        /* The entry keeps its length, not PATH_MAX (a folder of 66,000
         * models is 66,000 entries). */
        char *out = oac_strdup(ctx, buf);
        oac_dealloc(ctx, buf);
        return out;
    }
    char *abs = path[0] == '/' ? oac_strdup(ctx, path)
                : getcwd(buf, PATH_MAX) ? oac_asprintf(ctx, "%s/%s", buf, path) : NULL;
    if (!abs) {
        oac_dealloc(ctx, buf);
        return oac_strdup(ctx, path);
    }
    /* abs[0, cut) is the folder tried (its trailing '/' off), shorter
     * each time; "/" always resolves. */
    size_t cut = strlen(abs);
    bool ok = false;
    while (!ok && cut > 1) {
        while (cut > 1 && abs[cut - 1] != '/')
            cut--;
        while (cut > 1 && abs[cut - 1] == '/')
            cut--;
        char keep = abs[cut];
        abs[cut] = '\0';
        ok = realpath(abs, buf) != NULL;
        abs[cut] = keep;
    }
    char *out = ok && append_rest(buf, abs + cut + (abs[cut] == '/')) ? oac_strdup(ctx, buf)
                                                                       : NULL;
    if (out)
        oac_dealloc(ctx, abs);
    else
        out = abs;          /* as given, made absolute */
    oac_dealloc(ctx, buf);
    return out;
}

static int add(oac_ctx *ctx, const char *path, const char *what, const char *writer)
{
    if (!path || !*path || !strcmp(path, "-") || ctx->guard_off)
        return OAC_OK;
    if (!ctx->guard && !(ctx->guard = oac_calloc(ctx, 1, sizeof *ctx->guard)))
        return OAC_ENOMEM;
    oac_guard *g = ctx->guard;
    oac_guard_entry e = { .what = what, .writer = writer };
    struct stat st;
    if (stat(path, &st) == 0) {
        e.dev = st.st_dev;
        e.ino = st.st_ino;
        e.has_id = true;
    }
    if (!(e.real = resolve(ctx, path)))
        return OAC_ENOMEM;
    /* The same file as the last one (a model's weights file named by each
     * of its tensors): one entry.  No search of the whole list, which a
     * folder of many models makes long. */
    for (size_t i = g->n > 8 ? g->n - 8 : 0; i < g->n; i++)
        if (!g->e[i].writer == !writer && !strcmp(g->e[i].real, e.real) &&
            g->e[i].has_id == e.has_id) {
            oac_dealloc(ctx, e.real);
            return OAC_OK;
        }
    if (!(e.shown = oac_strdup(ctx, path)) ||
        oac_grow(ctx, (void **)&g->e, &g->cap, g->n + 1, sizeof *g->e) != OAC_OK) {
        oac_dealloc(ctx, e.real);
        oac_dealloc(ctx, e.shown);
        return OAC_ENOMEM;
    }
    g->e[g->n++] = e;
    return OAC_OK;
}

int oac_guard_add(oac_ctx *ctx, const char *path, const char *what)
{
    return add(ctx, path, what ? what : "an input", NULL);
}

int oac_guard_add_output(oac_ctx *ctx, const char *path, const char *writer)
{
    return add(ctx, path, "the file", writer ? writer : "-o");
}

int oac_guard_check(oac_ctx *ctx, const char *path, const char *writer)
{
    const oac_guard *g = ctx->guard;
    if (!g || !g->n || !path)
        return OAC_OK;
    struct stat st;
    bool has_id = stat(path, &st) == 0;
    char *real = resolve(ctx, path);
    if (!real)
        return OAC_ENOMEM;
    const oac_guard_entry *hit = NULL;
    for (size_t i = 0; i < g->n && !hit; i++) {
        const oac_guard_entry *e = &g->e[i];
        if (e->writer && writer && !strcmp(e->writer, writer))
            continue;      /* invariant 2 */
        if (has_id && e->has_id ? e->dev == st.st_dev && e->ino == st.st_ino
                                : !strcmp(e->real, real))
            hit = e;
    }
    oac_dealloc(ctx, real);
    if (!hit)
        return OAC_OK;
    if (hit->writer)
        return oac_err(ctx, OAC_EINVAL, "%s: is %s %s also writes (%s); give them "
                       "different files", path, hit->what, hit->writer, hit->shown);
    return oac_err(ctx, OAC_EINVAL, "%s: is %s (%s), which this call reads: writing "
                   "there would destroy it; name another file", path, hit->what,
                   hit->shown);
}

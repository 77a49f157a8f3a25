/* cli_paths.c: from MODEL arguments to the models of a call (contract,
 * section 5; the man page, MODELS).
 *
 * Owns what a MODEL argument names before anything is loaded: a file (as
 * given), "-" (standard input, read by cli_model_load), a folder (`check`
 * only: every regular file named *.onnx below it), or a word that is no
 * file at all (a misspelt command: a usage error with a suggestion).
 *
 * Invariants:
 *  1. A folder's models replace it at its place in argument order, sorted
 *     by path, byte by byte (`find DIR -name '*.onnx' | LC_ALL=C sort`).
 *  2. The walk never follows a symbolic link below the folder named
 *     (entries are examined with AT_SYMLINK_NOFOLLOW and folders opened
 *     with O_NOFOLLOW), descends at most CLI_MAX_DIR_DEPTH levels (one
 *     open descriptor per level), and adds no file twice: a file found in
 *     a folder whose device and inode is already a model of the call (an
 *     argument, a hard link, a folder given twice) is skipped.  Files named
 *     as arguments keep one report each, as before.
 *  3. A folder that cannot be read, nests deeper than the bound or holds no
 *     model is a usage error (exit 2) found before any model is read.
 *  4. A "word" is an argument without '/' or '.' (so never a path someone
 *     meant to be read); when no such file exists it is a usage error,
 *     never a parse-error report about a file that was never meant.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

enum { CLI_MAX_DIR_DEPTH = 32 };

typedef struct file_id {
    dev_t dev;
    ino_t ino;
} file_id;

typedef struct found {
    char *path;
    file_id id;
} found;

typedef struct walk {
    const char *top;             /* the argument */
    found *files;
    size_t n, cap;
    const char *why;             /* the usage error, when set */
    char why_buf[512];
} walk;

static bool is_word(const char *a)
{
    return *a && !strchr(a, '/') && !strchr(a, '.');
}

static bool has_onnx_suffix(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && !strcmp(name + n - 5, ".onnx");
}

static bool walk_fail(walk *w, const char *fmt, const char *a, const char *b)
{
    snprintf(w->why_buf, sizeof w->why_buf, fmt, a, b);
    w->why = w->why_buf;
    return false;
}

static bool add_found(walk *w, char *path, const struct stat *st)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        found *f = realloc(w->files, cap * sizeof *f);
        if (!f) {
            free(path);
            return walk_fail(w, "%s%s", "out of memory", "");
        }
        w->files = f;
        w->cap = cap;
    }
    w->files[w->n].path = path;
    w->files[w->n].id = (file_id){ st->st_dev, st->st_ino };
    w->n++;
    return true;
}

static char *join(const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    bool slash = dl && dir[dl - 1] == '/';
    size_t n = dl + !slash + strlen(name) + 1;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s%s%s", dir, slash ? "" : "/", name);
    return p;
}

/* Walk the folder open on fd (consumed), whose path is path, depth levels
 * below the argument. */
static bool walk_dir(walk *w, int fd, const char *path, int depth)
{
    DIR *d = fdopendir(fd);
    bool ok = true;
    if (!d) {
        close(fd);
        return walk_fail(w, "cannot read folder %s: %s", path, strerror(errno));
    }
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            if (errno)
                ok = walk_fail(w, "cannot read folder %s: %s", path, strerror(errno));
            break;
        }
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;            /* gone since readdir */
        if (S_ISREG(st.st_mode) && has_onnx_suffix(e->d_name)) {
            char *p = join(path, e->d_name);
            if (!p || !add_found(w, p, &st)) {
                ok = p ? false : walk_fail(w, "%s%s", "out of memory", "");
                break;
            }
        } else if (S_ISDIR(st.st_mode)) {
            char *p = join(path, e->d_name);
            if (!p) {
                ok = walk_fail(w, "%s%s", "out of memory", "");
                break;
            }
            if (depth + 1 > CLI_MAX_DIR_DEPTH) {
                snprintf(w->why_buf, sizeof w->why_buf,
                         "%s: folders nest deeper than %d levels below %s; name the "
                         "deeper folder itself", p, CLI_MAX_DIR_DEPTH, w->top);
                w->why = w->why_buf;
                free(p);
                ok = false;
                break;
            }
            /* O_NOFOLLOW: a folder swapped for a link since fstatat is
             * refused, never followed. */
            int sub = openat(dirfd(d), e->d_name,
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                ok = walk_fail(w, "cannot open folder %s: %s", p, strerror(errno));
                free(p);
                break;
            }
            ok = walk_dir(w, sub, p, depth + 1);
            free(p);
            if (!ok)
                break;
        }
        /* Symbolic links, FIFOs, devices and other files: not models. */
    }
    closedir(d);
    return ok;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const found *)a)->path, ((const found *)b)->path);
}

static bool seen(const file_id *ids, size_t n, file_id id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i].dev == id.dev && ids[i].ino == id.ino)
            return true;
    return false;
}

bool cli_models_expand(cli *c)
{
    const char **models = NULL;
    size_t n_models = 0, cap = 0, n_ids = 0;
    file_id *ids = calloc(c->n_models ? c->n_models : 1, sizeof *ids);
    bool ok = false;
    walk w = { 0 };

    if (!ids) {
        cli_error("out of memory");
        return false;
    }
    /* The files named as arguments: a folder's walk skips them. */
    for (size_t i = 0; i < c->n_models; i++) {
        struct stat st;
        if (strcmp(c->models[i], "-") && stat(c->models[i], &st) == 0 &&
            S_ISREG(st.st_mode))
            ids[n_ids++] = (file_id){ st.st_dev, st.st_ino };
    }
    for (size_t i = 0; i < c->n_models; i++) {
        const char *a = c->models[i];
        struct stat st;
        size_t first = w.n;
        if (!strcmp(a, "-") || stat(a, &st) != 0 || !S_ISDIR(st.st_mode)) {
            if (strcmp(a, "-") && is_word(a) && lstat(a, &st) != 0 && errno == ENOENT) {
                char hint[64];
                if (cli_suggest(a, hint, sizeof hint) && !strcmp(hint, a))
                    cli_usage("'%s' is no file, and a command comes first ('%s %s ...')",
                              a, OAC_TOOL_NAME, a);
                else if (cli_suggest(a, hint, sizeof hint))
                    cli_usage("'%s' is no file and no command; did you mean '%s'?", a, hint);
                else
                    cli_usage("'%s' is no file and no command (commands: check, run, "
                              "annotate, help)", a);
                goto done;
            }
            if (n_models == cap) {
                const char **m = realloc(models, (cap ? 2 * cap : 16) * sizeof *m);
                if (!m) {
                    cli_error("out of memory");
                    goto done;
                }
                models = m;
                cap = cap ? 2 * cap : 16;
            }
            models[n_models++] = a;
            continue;
        }
        if (c->cmd != CLI_CMD_CHECK) {
            cli_usage("'%s' takes one model file, not a folder (%s)", cli_cmd_name(c->cmd), a);
            goto done;
        }
        int fd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            cli_usage("cannot open folder %s: %s", a, strerror(errno));
            goto done;
        }
        w.top = a;
        if (!walk_dir(&w, fd, a, 0)) {
            cli_usage("%s", w.why);
            goto done;
        }
        if (w.n > first)
            qsort(w.files + first, w.n - first, sizeof *w.files, by_path);
        for (size_t k = first; k < w.n; k++) {
            if (seen(ids, n_ids, w.files[k].id))
                continue;
            file_id *ni = realloc(ids, (n_ids + 1) * sizeof *ni);
            if (!ni) {
                cli_error("out of memory");
                goto done;
            }
            ids = ni;
            if (n_models == cap) {
                const char **m = realloc(models, (cap ? 2 * cap : 16) * sizeof *m);
                if (!m) {
                    cli_error("out of memory");
                    goto done;
                }
                models = m;
                cap = cap ? 2 * cap : 16;
            }
            ids[n_ids++] = w.files[k].id;
            models[n_models++] = w.files[k].path;
        }
        if (w.n == first) {
            cli_usage("%s: no *.onnx model in this folder or below (symbolic links "
                      "are not followed)", a);
            goto done;
        }
    }
    /* The paths found are owned by c from here on. */
    char **owned = calloc(w.n ? w.n : 1, sizeof *owned);
    if (!owned) {
        cli_error("out of memory");
        goto done;
    }
    for (size_t k = 0; k < w.n; k++) {
        owned[k] = w.files[k].path;
        w.files[k].path = NULL;
    }
    free(c->models);
    c->models = models;
    c->n_models = n_models;
    c->owned = owned;
    c->n_owned = w.n;
    models = NULL;
    ok = true;
done:
    for (size_t k = 0; k < w.n; k++)
        free(w.files[k].path);
    free(w.files);
    free(models);
    free(ids);
    return ok;
}

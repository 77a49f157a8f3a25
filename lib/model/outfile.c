/* model/outfile.c: files written whole or not at all, never through a symlink.
 *
 * Owns oac_outfile (oac.h): the one way the tool writes a file it was
 * asked for, the report of `-o FILE` and every file of `run --dump DIR`
 * (run/dump.c).  Contract 8: "-o and --dump never follow a symlink they did
 * not create and never write two values to one file".
 *
 *  1. The final path is looked at without following it (lstat): a
 *     symbolic link is refused (OAC_EIO, the reason on the context); so
 *     is a path that cannot be looked at (a name too long, a missing
 *     folder).
 *  2. A regular file, or a path that does not exist yet, is written to a
 *     new temporary file in the same folder (O_CREAT | O_EXCL |
 *     O_NOFOLLOW: it never reuses or follows anything already there,
 *     ".oac-tmp-PID-NNN-K" in hex, at most 29 bytes: it fits NAME_MAX
 *     whenever the target's name does), flushed and synced, then renamed
 *     over the
 *     final path, which replaces the path itself and never what a link
 *     there might point to.  A failure anywhere removes the temporary
 *     file and leaves the old file as it was.  A file it replaces keeps
 *     its permission bits; a new one gets 0666 less the umask.
 *  3. Contract 12: anything else already at the path (a folder, a
 *     character device such as /dev/null, a FIFO, a socket) is refused
 *     with OAC_EINVAL, a usage error: nothing is replaced or written.
 *  4. A path that is an input of the call, or another writer's output
 *     (guard.c), is refused with OAC_EINVAL before any file is made.
 *
 * Invariants: nothing is left behind after oac_outfile_abort or a
 * failed commit; the stream belongs to the object.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oac_int.h"

struct oac_outfile {
    oac_ctx *ctx;
    char *path;        /* the final path */
    char *tmp;         /* the temporary file */
    const char *writer;/* "-o", "--dump" (static) */
    FILE *f;
};

/* The folder of path, with a trailing '/', as a prefix ("" for none). */
static char *folder_of(oac_ctx *ctx, const char *path)
{
    const char *slash = strrchr(path, '/');
    return oac_strndup(ctx, path, slash ? (size_t)(slash - path) + 1 : 0);
}

int oac_tempfile_open(oac_ctx *ctx, const char *target, const struct stat *old,
                      char **tmp_out)
{
    *tmp_out = NULL;
    char *dir = folder_of(ctx, target);
    if (!dir)
        return OAC_ENOMEM;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int fd = -1, err = EEXIST;
    char *tmp = NULL;
    /* ".oac-tmp-" and at most 8 + 8 + 2 hex digits: 29 bytes, a name that
     * fits NAME_MAX whatever the target's own name (invariant 2). */
    for (unsigned k = 0; k < 64 && fd < 0 && err == EEXIST; k++) {
        tmp = oac_asprintf(ctx, "%s.oac-tmp-%lx-%lx-%x", dir,
                           (unsigned long)getpid() & 0xffffffffUL,
                           (unsigned long)ts.tv_nsec & 0xffffffffUL, k);
        if (!tmp) {
            oac_dealloc(ctx, dir);
            return OAC_ENOMEM;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        err = errno;
        if (fd < 0) {
            oac_dealloc(ctx, tmp);
            tmp = NULL;
        }
    }
    oac_dealloc(ctx, dir);
    if (fd < 0)
        return oac_err(ctx, OAC_EIO, "%s: cannot create a file beside it: %s", target,
                       strerror(err));
    if (old)
        (void)fchmod(fd, old->st_mode & 07777);
    *tmp_out = tmp;
    return fd;
}

int oac_outfile_open(oac_ctx *ctx, oac_outfile **out, const char *path)
{
    return oac_outfile_open_as(ctx, out, path, "-o");
}

int oac_outfile_open_as(oac_ctx *ctx, oac_outfile **out, const char *path,
                        const char *writer)
{
    *out = NULL;
    if (!path || !*path)
        return oac_err(ctx, OAC_EINVAL, "no output path");
    oac_outfile *o = oac_calloc(ctx, 1, sizeof *o);
    if (!o)
        return OAC_ENOMEM;
    o->ctx = ctx;
    o->writer = writer;
    int rc = OAC_OK, fd = -1;
    if (!(o->path = oac_strdup(ctx, path))) {
        rc = OAC_ENOMEM;
        goto done;
    }
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    if (!exists && errno != ENOENT) {
        rc = oac_err(ctx, OAC_EIO, "%s: %s", path, strerror(errno));
        goto done;
    }
    if (exists && S_ISLNK(st.st_mode)) {
        rc = oac_err(ctx, OAC_EIO, "%s: is a symbolic link, which is not followed", path);
        goto done;
    }
    if (exists && !S_ISREG(st.st_mode)) {
        /* Invariant 3: only a regular file is replaced. */
        rc = oac_err(ctx, OAC_EINVAL, "%s: is %s, not a regular file; %s writes a "
                     "regular file (or creates one) and replaces nothing else", path,
                     S_ISDIR(st.st_mode) ? "a folder" : S_ISCHR(st.st_mode) ?
                     "a character device" : S_ISBLK(st.st_mode) ? "a block device" :
                     S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ?
                     "a socket" : "a special file", writer);
        goto done;
    }
    /* Invariant 4: never an input of the call. */
    if ((rc = oac_guard_check(ctx, path, writer)) != OAC_OK)
        goto done;
    if ((fd = oac_tempfile_open(ctx, path, exists ? &st : NULL, &o->tmp)) < 0) {
        rc = fd;
        fd = -1;
        goto done;
    }
    if (!(o->f = fdopen(fd, "wb"))) {
        rc = oac_err(ctx, OAC_EIO, "%s: %s", path, strerror(errno));
        goto done;
    }
    fd = -1;
done:
    if (fd >= 0)
        close(fd);
    if (rc) {
        oac_outfile_abort(o);
        return rc;
    }
    *out = o;
    return OAC_OK;
}

FILE *oac_outfile_stream(oac_outfile *o)
{
    return o ? o->f : NULL;
}

void oac_outfile_abort(oac_outfile *o)
{
    if (!o)
        return;
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    oac_dealloc(o->ctx, o->tmp);
    oac_dealloc(o->ctx, o->path);
    oac_dealloc(o->ctx, o);
}

int oac_outfile_commit(oac_outfile *o)
{
    if (!o)
        return OAC_OK;
    oac_ctx *ctx = o->ctx;
    int err = 0;
    errno = 0;
    if (ferror(o->f) || fflush(o->f) != 0)
        err = errno ? errno : EIO;
    /* A full disk may only say so when the data reaches it. */
    if (!err && o->tmp && fsync(fileno(o->f)) != 0)
        err = errno;
    if (fclose(o->f) != 0 && !err)
        err = errno ? errno : EIO;
    o->f = NULL;
    /* Invariant 4 once more: an input found since the open (the external
     * data of a model checked after it) is never replaced. */
    int rc = err ? OAC_OK : oac_guard_check(ctx, o->path, o->writer);
    if (rc != OAC_OK) {
        oac_outfile_abort(o);
        return rc;
    }
    if (!err && o->tmp && rename(o->tmp, o->path) != 0)
        err = errno;
    if (err)
        rc = oac_err(ctx, OAC_EIO, "%s: cannot write: %s", o->path, strerror(err));
    else {
        oac_dealloc(ctx, o->tmp);   /* renamed: nothing to remove */
        o->tmp = NULL;
    }
    oac_outfile_abort(o);
    return rc;
}

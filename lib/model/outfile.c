/* model/outfile.c: files written whole or not at all, never through a symlink.
 *
 * Owns oac_outfile (oac.h): the one way the tool writes a file it was
 * asked for, the report of `-o FILE` and every file of `run --dump DIR`
 * (run/dump.c).  Contract 8: "-o and --dump never follow a symlink they did
 * not create and never write two values to one file".
 *
 *  1. The final path is looked at without following it (lstat): a
 *     symbolic link, a folder or anything but a regular file, a character
 *     device or a FIFO is refused (OAC_EIO, the reason on the context);
 *     so is a path that cannot be looked at (a name too long, a missing
 *     folder).
 *  2. A regular file, or a path that does not exist yet, is written to a
 *     new temporary file in the same folder (O_CREAT | O_EXCL |
 *     O_NOFOLLOW: it never reuses or follows anything already there,
 *     ".oac-tmp-PID-NNN-K"), flushed and synced, then renamed over the
 *     final path, which replaces the path itself and never what a link
 *     there might point to.  A failure anywhere removes the temporary
 *     file and leaves the old file as it was.  A file it replaces keeps
 *     its permission bits; a new one gets 0666 less the umask.
 *  3. A character device (/dev/null) or a FIFO is written in place,
 *     opened with O_NOFOLLOW and O_NONBLOCK (a FIFO nobody reads from is
 *     an error at once, never a hang), then blocking again.
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
    char *tmp;         /* the temporary file, NULL when written in place */
    FILE *f;
};

/* The folder of path, with a trailing '/', as a prefix ("" for none). */
static char *folder_of(oac_ctx *ctx, const char *path)
{
    const char *slash = strrchr(path, '/');
    return oac_strndup(ctx, path, slash ? (size_t)(slash - path) + 1 : 0);
}

/* A new temporary file beside o->path (invariant 2). */
static int open_temp(oac_outfile *o, const struct stat *old)
{
    oac_ctx *ctx = o->ctx;
    char *dir = folder_of(ctx, o->path);
    if (!dir)
        return OAC_ENOMEM;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int fd = -1, err = EEXIST;
    for (unsigned k = 0; k < 64 && fd < 0 && err == EEXIST; k++) {
        o->tmp = oac_asprintf(ctx, "%s.oac-tmp-%ld-%lx-%u", dir, (long)getpid(),
                              (unsigned long)ts.tv_nsec, k);
        if (!o->tmp) {
            oac_dealloc(ctx, dir);
            return OAC_ENOMEM;
        }
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        err = errno;
        if (fd < 0) {
            oac_dealloc(ctx, o->tmp);
            o->tmp = NULL;
        }
    }
    oac_dealloc(ctx, dir);
    if (fd < 0)
        return oac_err(ctx, OAC_EIO, "%s: cannot create a file beside it: %s", o->path,
                       strerror(err));
    if (old)
        (void)fchmod(fd, old->st_mode & 07777);
    return fd;
}

int oac_outfile_open(oac_ctx *ctx, oac_outfile **out, const char *path)
{
    *out = NULL;
    if (!path || !*path)
        return oac_err(ctx, OAC_EINVAL, "no output path");
    oac_outfile *o = oac_calloc(ctx, 1, sizeof *o);
    if (!o)
        return OAC_ENOMEM;
    o->ctx = ctx;
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
    if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
        /* Invariant 3: in place, never blocking in open. */
        fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
        if (fd < 0 || fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
            rc = oac_err(ctx, OAC_EIO, "%s: cannot open for writing: %s", path,
                         errno == ENXIO ? "a FIFO nobody reads from" : strerror(errno));
            goto done;
        }
    } else if (exists && !S_ISREG(st.st_mode)) {
        rc = oac_err(ctx, OAC_EIO, "%s: is %s, not a file", path,
                     S_ISDIR(st.st_mode) ? "a folder" : "a special file");
        goto done;
    } else if ((fd = open_temp(o, exists ? &st : NULL)) < 0) {
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
    if (!err && o->tmp && rename(o->tmp, o->path) != 0)
        err = errno;
    int rc = OAC_OK;
    if (err)
        rc = oac_err(ctx, OAC_EIO, "%s: cannot write: %s", o->path, strerror(err));
    else {
        oac_dealloc(ctx, o->tmp);   /* renamed: nothing to remove */
        o->tmp = NULL;
    }
    oac_outfile_abort(o);
    return rc;
}

/* model/save.c: writing a loaded model back (contract 1 and 5: "the library's
 * load and save keep unknown fields").
 *
 * Owns oac_model_save and oac_model_save_buffer.  protobuf-c packs known
 * fields in field-number order and then every unknown field verbatim;
 * the loader left large payloads as unknown fields with their original
 * tag pointing into the mapping, so writing streams them from the file
 * without a whole-model buffer.
 *
 * Invariants:
 *  1. oac_model_save never holds the serialized model in memory: bytes go
 *     through a ProtobufCBuffer straight to stdio.
 *  2. A short write, a failed flush or close is OAC_EIO with the path and
 *     the system's reason.  A regular file (or a new one) is written to a
 *     temporary file beside it and renamed over it at the end, so a
 *     failed save leaves the old file intact, and saving a model over the
 *     very file it is mapped from cannot truncate the mapping under us
 *     (the mapping keeps the old inode).  Anything else (a device, a
 *     pipe) is written directly and never removed.
 *  3. The model is not modified.
 *     oac_model_save_temp writes the temporary file only and hands its
 *     name to the caller (annotate checks the file before renaming it);
 *     it refuses (OAC_EINVAL) a target that exists and is no regular file
 *     and one that is an input of the call (guard.c).  Temporary files
 *     are named by outfile.c (they fit NAME_MAX whenever the target's
 *     name does) and synced before the rename.
 *  4. Payload bytes that come from the file mapping are written in 8 MiB
 *     slices and their pages dropped after each (MADV_DONTNEED: the
 *     mapping is private, read-only and never written, so the pages are
 *     simply re-read if touched again); saving a 1 GiB model therefore
 *     does not make 1 GiB of it resident.
 *  5. The file is written in WRITE_BUF (1 MiB) pieces, not stdio's
 *     default 4 KiB: protobuf-c hands over a model in small pieces, and a
 *     file written 4 KiB at a time stays in the page cache as 4 KiB pages,
 *     which the next load maps with one fault each (on Linux 6.18 and
 *     ext4, an annotated 2048-layer decoder: 1,385 page faults and 25-28
 *     ms to load, against 342 and 13-17 ms for the same bytes written
 *     1 MiB at a time; bench/bench_check.sh's files come from one write).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oac_int.h"

#define SLICE ((size_t)8 << 20)
#define WRITE_BUF ((size_t)1 << 20)

typedef struct file_sink {
    ProtobufCBuffer base;
    FILE *f;
    const uint8_t *map;   /* the model's file mapping, or NULL */
    size_t map_len;
    size_t page;
    int err;              /* first errno seen, 0 while all is well */
} file_sink;

static void sink_write(file_sink *s, const uint8_t *data, size_t len)
{
    if (fwrite(data, 1, len, s->f) != len)
        s->err = errno ? errno : EIO;
}

static void sink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    file_sink *s = (file_sink *)b;
    if (s->err || len == 0)
        return;
    bool mapped = s->map && data >= s->map && len <= s->map_len &&
                  (size_t)(data - s->map) <= s->map_len - len;
    if (!mapped || len < SLICE) {
        sink_write(s, data, len);
        return;
    }
    for (size_t done = 0; done < len && !s->err;) {
        size_t n = len - done < SLICE ? len - done : SLICE;
        sink_write(s, data + done, n);
        /* Whole pages of this slice that lie in the mapping. */
        uintptr_t lo = ((uintptr_t)(data + done) + s->page - 1) & ~(uintptr_t)(s->page - 1);
        uintptr_t hi = ((uintptr_t)(data + done + n)) & ~(uintptr_t)(s->page - 1);
        if (!s->err && hi > lo)
            (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
        done += n;
    }
}

/* A new temporary file beside target (outfile.c names it). */
static int open_temp(oac_ctx *ctx, const char *target, const struct stat *old,
                     char **tmp_out)
{
    return oac_tempfile_open(ctx, target, old, tmp_out);
}

/* Pack the model into f, sync it when it is a regular file, and close
 * f: 0, or the first errno of writing, flushing, syncing or closing.
 * The stream gets a WRITE_BUF buffer (invariant 5); without one (out of
 * memory) it keeps stdio's own. */
static int pack_close(oac_ctx *ctx, const oac_model *model, FILE *f)
{
    char *vbuf = oac_alloc(ctx, WRITE_BUF);
    if (vbuf && setvbuf(f, vbuf, _IOFBF, WRITE_BUF) != 0) {
        oac_dealloc(ctx, vbuf);
        vbuf = NULL;
    }
    file_sink s = { .base = { .append = sink_append }, .f = f };
    if (model->mapped) {
        long pg = sysconf(_SC_PAGESIZE);
        s.map = model->map;
        s.map_len = model->map_len;
        s.page = pg > 0 ? (size_t)pg : 4096;
    }
    errno = 0;
    protobuf_c_message_pack_to_buffer(&model->proto->base, &s.base);
    if (!s.err && fflush(f) != 0)
        s.err = errno ? errno : EIO;
    struct stat st;
    /* Synced before the rename: after a crash the name holds the old
     * file or the whole new one. */
    if (!s.err && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
        fsync(fileno(f)) != 0)
        s.err = errno ? errno : EIO;
    if (fclose(f) != 0 && !s.err)
        s.err = errno ? errno : EIO;
    oac_dealloc(ctx, vbuf);     /* the stream is closed: nothing uses it */
    return s.err;
}

int oac_model_save_temp(oac_ctx *ctx, const oac_model *model, const char *target,
                        char **tmp_out)
{
    *tmp_out = NULL;
    if (!model || !model->proto || !target)
        return oac_err(ctx, OAC_EINVAL, "save: no model or no path");
    struct stat st;
    bool exists = lstat(target, &st) == 0;
    /* Contract 12: annotate -o replaces only a regular file or makes one,
     * and never an input of the call (guard.c). */
    if (exists && !S_ISREG(st.st_mode))
        return oac_err(ctx, OAC_EINVAL, "%s: is %s, not a regular file; annotate -o "
                       "writes a regular file (or creates one) and replaces nothing else",
                       target, S_ISLNK(st.st_mode) ? "a symbolic link" :
                       S_ISDIR(st.st_mode) ? "a folder" : S_ISCHR(st.st_mode) ?
                       "a character device" : S_ISFIFO(st.st_mode) ? "a FIFO" :
                       S_ISSOCK(st.st_mode) ? "a socket" : "a special file");
    int rc = oac_guard_check(ctx, target, "annotate -o");
    if (rc != OAC_OK)
        return rc;
    char *tmp = NULL;
    int fd = open_temp(ctx, target, exists ? &st : NULL, &tmp);
    if (fd < 0)
        return fd;
    FILE *f = fdopen(fd, "wb");
    int err = f ? pack_close(ctx, model, f) : errno ? errno : EIO;
    if (!f)
        close(fd);
    if (err) {
        unlink(tmp);
        oac_dealloc(ctx, tmp);
        return oac_err(ctx, OAC_EIO, "%s: write failed: %s", target, strerror(err));
    }
    *tmp_out = tmp;
    return OAC_OK;
}

int oac_model_save(oac_ctx *ctx, const oac_model *model, const char *path)
{
    if (!model || !model->proto || !path)
        return oac_err(ctx, OAC_EINVAL, "save: no model or no path");
    int rc = OAC_OK;
    char *real = NULL, *tmp = NULL;
    const char *target = path;
    FILE *f = NULL;
    struct stat st;
    bool exists = stat(path, &st) == 0;
    bool direct = exists && !S_ISREG(st.st_mode);
    if (exists && !direct) {
        /* Replace what a symlink points to, not the link. */
        real = oac_alloc(ctx, PATH_MAX);
        if (!real) {
            rc = OAC_ENOMEM;
            goto done;
        }
        if (realpath(path, real))
            target = real;
    }
    if (direct) {
        f = fopen(path, "wb");
    } else {
        int fd = open_temp(ctx, target, exists ? &st : NULL, &tmp);
        if (fd < 0) {
            rc = fd;
            goto done;
        }
        f = fdopen(fd, "wb");
        if (!f)
            close(fd);
    }
    if (!f) {
        rc = oac_err(ctx, OAC_EIO, "%s: cannot open for writing: %s", path, strerror(errno));
        goto done;
    }
    int err = pack_close(ctx, model, f);
    if (!err && tmp && rename(tmp, target) != 0)
        err = errno ? errno : EIO;
    if (err) {
        rc = oac_err(ctx, OAC_EIO, "%s: write failed: %s", path, strerror(err));
    } else {
        oac_dealloc(ctx, tmp);   /* renamed: nothing left to remove */
        tmp = NULL;
    }
done:
    if (tmp) {
        unlink(tmp);
        oac_dealloc(ctx, tmp);
    }
    oac_dealloc(ctx, real);
    return rc;
}

int oac_model_save_buffer(oac_ctx *ctx, uint8_t **out, size_t *out_len,
                          const oac_model *model)
{
    *out = NULL;
    *out_len = 0;
    if (!model || !model->proto)
        return oac_err(ctx, OAC_EINVAL, "save: no model");
    size_t n = protobuf_c_message_get_packed_size(&model->proto->base);
    /* oac_alloc is malloc underneath: the caller's oac_free releases it. */
    uint8_t *buf = oac_alloc(ctx, n);
    if (!buf)
        return OAC_ENOMEM;
    size_t w = protobuf_c_message_pack(&model->proto->base, buf);
    if (w != n) {
        oac_dealloc(ctx, buf);
        return oac_err(ctx, OAC_EINTERNAL, "save: packed %zu bytes, expected %zu",
                       w, n);
    }
    *out = buf;
    *out_len = n;
    return OAC_OK;
}

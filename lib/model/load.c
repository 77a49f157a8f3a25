/* model/load.c: mapping and parsing models and standalone protobuf files.
 *
 * Owns oac_model_load, oac_model_load_buffer, oac_model_load_fd (a model
 * read from a stream such as standard input), oac_model_free, the model
 * accessors and oac_pbfile_load/free.  Contract 1 (wire format, unknown
 * fields survive), 3 (parse-error) and 5 (an unopenable path is
 * unreadable); oac.h: payloads are never copied.
 *
 * How a file is read, and why:
 *
 *  1. map: open + fstat + mmap(PROT_READ, MAP_PRIVATE) + MADV_RANDOM, so
 *     the kernel reads only the pages we touch, never ahead into weights.
 *     The open is O_NONBLOCK (cleared once the file is known to be
 *     regular): a FIFO, socket or device is "not a regular file" at once,
 *     where a blocking open of a FIFO would wait forever for a writer.
 *  2. decode (model/decode.c): one walk of the wire format, guided by the
 *     protobuf-c descriptors and bounded by OAC_MAX_DEPTH, validates
 *     every tag, wire type, varint and length (a bad file fails with a
 *     byte offset) and builds the protobuf-c structs directly in an
 *     arena (model/arena.c).  Payload spans (large TensorProto data fields
 *     4,5,7,9,10,11, QuantizedTensorProto.raw_data, large unknown fields)
 *     are skipped by their length, never read, and become unknown fields
 *     with their original tag whose data points into the mapping.
 *     protobuf-c packs unknown fields verbatim, so save writes payloads
 *     back byte for byte; nothing ever frees them because the arena only
 *     releases blocks it handed out itself.  The walk also notes whether
 *     any TensorProto has a data_location: without one, the
 *     external-data walk (model/extdata.c) would find nothing and is skipped.
 *     As it goes, every OAC_DECODE_DROP_STEP (2 MiB) the walk drops the
 *     pages it has passed (OAC_DECODE_DROP_PAGES): reading a tensor's
 *     header faults in the cached file pages around it (fault-around
 *     ignores MADV_RANDOM), which would otherwise keep most of the
 *     weights resident until the end of the walk.
 *  3. drop the rest of the mapping's pages from the resident set
 *     (MADV_DONTNEED): later reads of payloads fault theirs back in from
 *     the file.
 *
 * Memory therefore follows the graph, not the weight bytes: the tree is
 * graph-sized.
 *
 * Invariants:
 *  1. No read outside [buf, buf+len) (model/decode.c).
 *  2. Recursion depth <= OAC_MAX_DEPTH.
 *  3. A payload that would be lost (protobuf-c's semantics drop a
 *     repeated singular message's earlier unknown fields) is a
 *     parse-error, never a silently dropped payload.
 *  4. A failure appends at most one parse-error diagnostic and returns
 *     OAC_EPARSE with the same message on ctx; out of memory is OAC_ENOMEM
 *     with nothing half-built left behind.
 *
 * A stream (oac_model_load_fd on a pipe, socket or terminal) cannot be
 * mapped: it is read into one buffer the model owns, at most the caller's
 * limit (OAC_MAX_STREAM_BYTES, protobuf's 2 GiB, by default); reading
 * stops at the first byte past it, which is a parse-error.  The bytes are
 * then parsed exactly as a mapped file's are.
 *
 * Limits, by design: large payloads are only validated when decoded
 * (model/tensor.c), since validating them would read them; large known string
 * and bytes fields other than payloads (doc_string, AttributeProto.s,
 * string_data) are copied like the rest of the graph; and, as with any
 * mapping, a model file must not be truncated while it is loaded (model/save.c
 * replaces files by rename for that reason).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/arena.h"
#include "model/decode.h"
#include "oac_int.h"

/* ---- errors ---------------------------------------------------------- */

/* One parse-error diagnostic and the same message on ctx. */
static int parse_error(oac_ctx *ctx, oac_diags *diags, const char *fmt, ...)
    OAC_PRINTF(3, 4);
static int parse_error(oac_ctx *ctx, oac_diags *diags, const char *fmt, ...)
{
    char msg[sizeof ctx->errmsg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (diags && oac_diag_add(diags, OAC_PARSE_ERROR, NULL, "%s", msg) != OAC_OK)
        return OAC_ENOMEM;
    return oac_err(ctx, OAC_EPARSE, "%s", msg);
}

/* ---- parsing one buffer ----------------------------------------------- */

/* Decode buf as a message of type desc.  On success the tree lives in
 * *arena_out and points into buf; *facts (may be NULL) tells whether
 * any TensorProto has a data_location field and which entry strings held
 * a NUL byte.  mapped: buf is our file
 * mapping, whose pages the walk may drop as it goes. */
static int parse_into(oac_ctx *ctx, const ProtobufCMessageDescriptor *desc,
                      const uint8_t *buf, size_t len, bool mapped, const char *name,
                      oac_diags *diags, oac_arena **arena_out,
                      ProtobufCMessage **msg_out, oac_decode_facts *facts)
{
    oac_decode_facts none;
    *arena_out = NULL;
    *msg_out = NULL;
    if (!facts)
        facts = &none;
    facts->external = false;
    facts->nul = NULL;
    if (len == 0)
        return parse_error(ctx, diags, "%s: empty file at byte 0", name);
    oac_arena *arena = oac_arena_new_zeroed(ctx);
    if (!arena)
        return OAC_ENOMEM;
    char err[256];
    int rc = oac_decode_ex(ctx, arena, desc, buf, len, mapped ? OAC_DECODE_DROP_PAGES : 0,
                           msg_out, facts, err, sizeof err);
    if (rc == OAC_EPARSE)
        rc = parse_error(ctx, diags, "%s: %s", name, err);
    if (rc != OAC_OK) {
        oac_arena_free(arena);
        return rc;
    }
    *arena_out = arena;
    return OAC_OK;
}

/* ---- files ------------------------------------------------------------ */

/* Map the regular file open on fd (st its fstat), whole. */
static int map_fd(oac_ctx *ctx, int fd, const struct stat *st, const char *path,
                  oac_diags *diags, const uint8_t **map, size_t *len)
{
    /* mmap of 0 bytes fails; an empty file is simply not a model. */
    if (st->st_size == 0)
        return parse_error(ctx, diags, "%s: empty file at byte 0", path);
    if ((uint64_t)st->st_size > SIZE_MAX)
        return parse_error(ctx, diags, "%s: file too large", path);
    void *p = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return parse_error(ctx, diags, "%s: cannot map: %s", path, strerror(errno));
    /* No readahead: pages of skipped payloads must stay untouched. */
    (void)madvise(p, (size_t)st->st_size, MADV_RANDOM);
    *map = p;
    *len = (size_t)st->st_size;
    return OAC_OK;
}

static int map_file(oac_ctx *ctx, const char *path, oac_diags *diags,
                    const uint8_t **map, size_t *len)
{
    *map = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return parse_error(ctx, diags, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int rc = OAC_OK;
    if (fstat(fd, &st) != 0) {
        rc = parse_error(ctx, diags, "%s: cannot stat: %s", path, strerror(errno));
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = parse_error(ctx, diags, "%s: not a regular file", path);
        goto done;
    }
    /* A regular file: back to ordinary (blocking) semantics. */
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        rc = parse_error(ctx, diags, "%s: cannot read: %s", path, strerror(errno));
        goto done;
    }
    rc = map_fd(ctx, fd, &st, path, diags, map, len);
done:
    close(fd);
    return rc;
}

/* Read the stream on fd to its end into a new buffer (oac_alloc), at
 * most max bytes: the first byte past them is a parse-error and nothing
 * after it is read. */
static int read_stream(oac_ctx *ctx, int fd, size_t max, const char *name,
                       oac_diags *diags, uint8_t **buf_out, size_t *len_out)
{
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = OAC_OK;
    *buf_out = NULL;
    *len_out = 0;
    for (;;) {
        if (len == cap) {
            /* Room for max + 1 bytes at most: the one byte that proves
             * the stream too long. */
            size_t want = cap ? (cap > (max + 1) / 2 ? max + 1 : cap * 2) : 65536;
            if (want > max + 1)
                want = max + 1;
            uint8_t *nb = oac_realloc(ctx, buf, want);
            if (!nb) {
                rc = OAC_ENOMEM;
                goto done;
            }
            buf = nb;
            cap = want;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pfd = { .fd = fd, .events = POLLIN };
            (void)poll(&pfd, 1, -1);
            continue;
        }
        if (n < 0) {
            rc = parse_error(ctx, diags, "%s: cannot read: %s", name, strerror(errno));
            goto done;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > max) {
            rc = parse_error(ctx, diags, "%s: more than %zu bytes, the limit of a model "
                             "read from a stream; reading stopped there", name, max);
            goto done;
        }
    }
    if (len == 0) {
        rc = parse_error(ctx, diags, "%s: empty file at byte 0", name);
        goto done;
    }
    *buf_out = buf;
    *len_out = len;
    buf = NULL;
done:
    oac_dealloc(ctx, buf);
    return rc;
}

static char *dir_of(oac_ctx *ctx, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return oac_strdup(ctx, ".");
    if (slash == path)
        return oac_strdup(ctx, "/");
    return oac_strndup(ctx, path, (size_t)(slash - path));
}

/* Build the model over buf (which it owns when mapped or owned, even on
 * failure). */
static int model_from(oac_ctx *ctx, oac_model **out, const uint8_t *buf,
                      size_t len, bool mapped, bool owned, const char *name,
                      const char *dir, oac_diags *diags)
{
    int rc = OAC_OK;
    oac_model *m = oac_calloc(ctx, 1, sizeof *m);
    if (!m) {
        if (mapped)
            munmap((void *)(uintptr_t)buf, len);
        if (owned)
            oac_dealloc(ctx, (void *)(uintptr_t)buf);
        return OAC_ENOMEM;
    }
    m->ctx = ctx;
    m->map = buf;
    m->map_len = len;
    m->mapped = mapped;
    m->owned = owned;
    m->path = oac_strdup(ctx, name);
    m->dir = dir ? oac_strdup(ctx, dir) : dir_of(ctx, name);
    if (!m->path || !m->dir) {
        rc = OAC_ENOMEM;
        goto done;
    }
    ProtobufCMessage *msg = NULL;
    oac_decode_facts facts;
    rc = parse_into(ctx, &onnx__model_proto__descriptor, buf, len, mapped, name, diags,
                    &m->arena, &msg, &facts);
    if (rc != OAC_OK)
        goto done;
    m->proto = (Onnx__ModelProto *)msg;
    if ((rc = oac_nul_set_make(m->arena, facts.nul, &m->nul_strings)) != OAC_OK)
        goto done;          /* the arena said why */
    /* The walk read the pages of the graph; from here on only payloads
     * are read, and seldom.  Drop the pages from our resident set (the
     * mapping is private and never written, so a later read faults the
     * same bytes back in from the file). */
    if (mapped)
        (void)madvise((void *)(uintptr_t)buf, len, MADV_DONTNEED);
    /* Only a tensor with a data_location can be external: without one the
     * walk would find nothing to check. */
    if (facts.external)
        rc = oac_external_data_check(ctx, m, diags);
done:
    if (rc != OAC_OK) {
        oac_model_free(m);
        m = NULL;
    }
    *out = m;
    return rc;
}

int oac_model_load(oac_ctx *ctx, oac_model **out, const char *path,
                   oac_diags *diags)
{
    *out = NULL;
    if (!path)
        return oac_err(ctx, OAC_EINVAL, "load: no path");
    const uint8_t *map;
    size_t len;
    /* An input of the call, read or not (guard.c). */
    int rc = oac_guard_add(ctx, path, "the model");
    if (rc == OAC_OK)
        rc = map_file(ctx, path, diags, &map, &len);
    if (rc != OAC_OK)
        return rc;
    return model_from(ctx, out, map, len, true, false, path, NULL, diags);
}

int oac_model_load_buffer(oac_ctx *ctx, oac_model **out, const void *buf,
                          size_t len, const char *name, const char *base_dir,
                          oac_diags *diags)
{
    *out = NULL;
    if (!buf && len)
        return oac_err(ctx, OAC_EINVAL, "load: no buffer");
    return model_from(ctx, out, buf, len, false, false, name ? name : "<buffer>",
                      base_dir ? base_dir : ".", diags);
}

int oac_model_load_fd(oac_ctx *ctx, oac_model **out, int fd, size_t max_bytes,
                      const char *name, const char *base_dir, oac_diags *diags)
{
    *out = NULL;
    if (fd < 0)
        return oac_err(ctx, OAC_EINVAL, "load: no file descriptor");
    if (!name)
        name = "-";
    if (!base_dir)
        base_dir = ".";
    if (!max_bytes || max_bytes > OAC_MAX_STREAM_BYTES)
        max_bytes = OAC_MAX_STREAM_BYTES;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return parse_error(ctx, diags, "%s: cannot stat: %s", name, strerror(errno));
    if (S_ISREG(st.st_mode)) {
        /* Redirected from a file: mapped like one, from its start. */
        const uint8_t *map;
        size_t len;
        int rc = map_fd(ctx, fd, &st, name, diags, &map, &len);
        if (rc != OAC_OK)
            return rc;
        return model_from(ctx, out, map, len, true, false, name, base_dir, diags);
    }
    if (S_ISDIR(st.st_mode))
        return parse_error(ctx, diags, "%s: is a folder", name);
    uint8_t *buf;
    size_t len;
    int rc = read_stream(ctx, fd, max_bytes, name, diags, &buf, &len);
    if (rc != OAC_OK)
        return rc;
    return model_from(ctx, out, buf, len, false, true, name, base_dir, diags);
}

void oac_model_free(oac_model *m)
{
    if (!m)
        return;
    oac_arena_free(m->arena);
    if (m->mapped && m->map)
        munmap((void *)(uintptr_t)m->map, m->map_len);
    if (m->owned)
        oac_dealloc(m->ctx, (void *)(uintptr_t)m->map);
    oac_dealloc(m->ctx, m->path);
    oac_dealloc(m->ctx, m->dir);
    oac_dealloc(m->ctx, m);
}

const char *oac_model_path(const oac_model *m)
{
    return m ? m->path : NULL;
}

const Onnx__ModelProto *oac_model_proto(const oac_model *m)
{
    return m ? m->proto : NULL;
}

int oac_pbfile_load(oac_ctx *ctx, oac_pbfile **out, const char *path,
                    const ProtobufCMessageDescriptor *desc, oac_diags *diags)
{
    *out = NULL;
    if (!path || !desc)
        return oac_err(ctx, OAC_EINVAL, "load: no path or no message type");
    const uint8_t *map;
    size_t len;
    int rc = map_file(ctx, path, diags, &map, &len);
    if (rc != OAC_OK)
        return rc;
    oac_pbfile *f = oac_calloc(ctx, 1, sizeof *f);
    if (!f) {
        munmap((void *)(uintptr_t)map, len);
        return OAC_ENOMEM;
    }
    f->ctx = ctx;
    f->map = map;
    f->map_len = len;
    f->mapped = true;
    f->path = oac_strdup(ctx, path);
    if (!f->path) {
        rc = OAC_ENOMEM;
        goto done;
    }
    rc = parse_into(ctx, desc, map, len, true, path, diags, &f->arena, &f->msg, NULL);
done:
    if (rc != OAC_OK) {
        oac_pbfile_free(f);
        f = NULL;
    }
    *out = f;
    return rc;
}

void oac_pbfile_free(oac_pbfile *f)
{
    if (!f)
        return;
    oac_arena_free(f->arena);
    if (f->mapped && f->map)
        munmap((void *)(uintptr_t)f->map, f->map_len);
    oac_dealloc(f->ctx, f->path);
    oac_dealloc(f->ctx, f);
}

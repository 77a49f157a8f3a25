/* model/extdata.c: validation of external-data references, without reading
 * the data.
 *
 * Owns oac_external_data_check (contract 3, `external-data-invalid`).
 * Called by model/load.c after parsing.  Every TensorProto anywhere in the model
 * (graph and subgraphs, sparse tensors, attributes, functions, training
 * info, and any message the contract adds) is found by the generic walk
 * over the protobuf-c descriptors (model/walk.h), so no container of tensors is missed
 * as the schema grows.  For each one with data_location = EXTERNAL:
 *
 *  - `location` is present, relative, has no `..` component and no NUL
 *    byte (the decoder lists such strings, oac_model.nul_strings: the C
 *    string would be only the text before it);
 *  - realpath(folder/location) lies inside realpath(folder) (no symlink
 *    escape) and is an existing regular file;
 *  - `offset` and `length`, when present, are non-negative decimal
 *    integers and offset + length <= file size (overflow-checked);
 *  - `length`, when present, is exactly the tensor's element count times
 *    its element size, when its dims and type give one (contract 8: a
 *    payload that does not hold exactly that is external-data-invalid;
 *    inline ones are model-invalid, check/structure.c).  Without a length the
 *    payload is that many bytes from `offset` on (as ONNX Runtime reads
 *    it), which must lie inside the file; without a size either, the rest
 *    of the file.
 *
 * Each violation is one diagnostic naming the tensor and its location
 * pointer (e.g. /graph/initializer/3); the load still succeeds (exit 1,
 * not a parse error).
 *
 * Also owns oac_external_read, which oac_tensor_read uses to read an
 * external payload with pread after the same checks (done again, since
 * the files may have changed since the load).
 *
 * Invariants:
 *  1. The check never reads payload bytes: only stat() and realpath().
 *     Nothing opened here blocks: the data file is opened O_NONBLOCK and
 *     must still be a regular file when read.
 *  2. Recursion is bounded by OAC_MAX_DEPTH; the pointer buffer is
 *     bounded and truncation is marked, never overrun.
 *  3. Allocation only through oac_alloc (realpath gets our buffer).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/decode.h"
#include "model/walk.h"
#include "oac_int.h"

#define PTR_MAX 4096

typedef struct walk {
    oac_ctx *ctx;
    const oac_model *model;
    oac_diags *diags;
    char *dir_real;          /* realpath of the model's folder, or NULL */
    char ptr[PTR_MAX];       /* RFC 6901 pointer of the current message */
    size_t ptr_len;
    const char *graph;       /* name of the innermost graph */
    /* By depth: the pointer's length and the graph before the message
     * there was entered (the walk never enters deeper than one past
     * OAC_MAX_DEPTH). */
    size_t ptr_old[OAC_MAX_DEPTH + 2];
    const char *graph_old[OAC_MAX_DEPTH + 2];
} walk;

static const char *ext_get(const Onnx__TensorProto *t, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i < t->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = t->external_data[i];
        if (e && e->key && strcmp(e->key, key) == 0)
            v = e->value ? e->value : "";
    }
    return v;
}

/* A non-negative decimal integer that fits in uint64. */
static bool parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || oac_mul_overflow_u64(v, 10, &v) ||
            oac_add_overflow_u64(v, (uint64_t)(*s - '0'), &v))
            return false;
    }
    *out = v;
    return true;
}

static bool has_dotdot(const char *loc)
{
    const char *p = loc;
    while (*p) {
        size_t n = strcspn(p, "/\\");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return true;
        p += n;
        if (*p)
            p++;
    }
    return false;
}

static int report(walk *w, const Onnx__TensorProto *t, const char *fmt, ...)
    OAC_PRINTF(3, 4);
static int report(walk *w, const Onnx__TensorProto *t, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *name = t->name && *t->name ? t->name : NULL;
    oac_where where = { .graph = w->graph, .value = name,
                        .location = w->ptr_len ? w->ptr : "" };
    return oac_diag_add(w->diags, OAC_EXTERNAL_DATA_INVALID, &where,
                        "tensor '%s': %s", name ? name : "", msg);
}

/* A resolved external reference.  why is empty when the reference is
 * valid, else says what is wrong with it. */
typedef struct ext_ref {
    char *real;          /* realpath of the data file (PATH_MAX buffer) */
    uint64_t off, len;   /* len: the `length` entry, or the rest of the file */
    char why[512];
} ext_ref;

static int invalid(ext_ref *r, const char *fmt, ...) OAC_PRINTF(2, 3);
static int invalid(ext_ref *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
    return OAC_OK;
}

/* Resolve t's reference against the folder dir (whose realpath is
 * dir_real, NULL when it has none); nul holds the model's strings that
 * held a NUL byte.  OAC_OK with r->why empty: valid; OAC_OK with r->why
 * set: invalid; negative: out of memory.  r->real is allocated either
 * way; the caller frees it. */
static int ext_resolve(oac_ctx *ctx, const char *dir, const char *dir_real,
                       const oac_nul_set *nul, const Onnx__TensorProto *t,
                       ext_ref *r)
{
    const char *loc = ext_get(t, "location");
    const char *off_s = ext_get(t, "offset");
    const char *len_s = ext_get(t, "length");
    r->off = r->len = 0;
    r->why[0] = '\0';
    r->real = oac_alloc(ctx, PATH_MAX);
    if (!r->real)
        return OAC_ENOMEM;
    r->real[0] = '\0';
    if (!loc || !*loc)
        return invalid(r, "external data has no location");
    if (nul && oac_nul_held(nul, loc))
        return invalid(r, "external data location '%s...' contains a NUL byte; "
                       "a location is a relative file name without one", loc);
    if (loc[0] == '/' || loc[0] == '\\')
        return invalid(r, "external data location '%s' is an absolute path", loc);
    if (has_dotdot(loc))
        return invalid(r, "external data location '%s' has a '..' component", loc);
    if (off_s && !parse_u64(off_s, &r->off))
        return invalid(r, "external data offset '%s' is not a non-negative integer", off_s);
    if (len_s && !parse_u64(len_s, &r->len))
        return invalid(r, "external data length '%s' is not a non-negative integer", len_s);
    if (!dir_real)
        return invalid(r, "external data location '%s': the model folder cannot be resolved",
                       loc);
    char *path = oac_asprintf(ctx, "%s/%s", dir, loc);
    if (!path)
        return OAC_ENOMEM;
    bool found = realpath(path, r->real) != NULL;
    int err = errno;
    oac_dealloc(ctx, path);
    if (!found)
        return invalid(r, "external data file '%s' is missing (%s)", loc, strerror(err));
    /* Inside means below the folder: a symlink out of it is an escape. */
    size_t dl = strlen(dir_real);
    bool inside = strncmp(r->real, dir_real, dl) == 0 &&
                  (r->real[dl] == '/' || (dl == 1 && dir_real[0] == '/'));
    if (!inside)
        return invalid(r, "external data location '%s' resolves outside the model folder", loc);
    struct stat st;
    if (stat(r->real, &st) != 0 || !S_ISREG(st.st_mode))
        return invalid(r, "external data location '%s' is not a regular file", loc);
    /* The tensor's size, when its dims and type give one. */
    uint64_t n, want = 0, size = (uint64_t)st.st_size, end;
    const char *type = oac_elem_name(t->data_type);
    bool sized = type && oac_tensor_numel(t, &n) && oac_elem_bytes(t->data_type, n, &want);
    if (!len_s)
        r->len = sized ? want : r->off <= size ? size - r->off : 0;
    if (oac_add_overflow_u64(r->off, r->len, &end))
        return invalid(r, "external data offset %llu + length %llu overflows",
                       (unsigned long long)r->off, (unsigned long long)r->len);
    if (r->off > size || end > size)
        return invalid(r, "external data offset %llu + length %llu%s lies past the end of "
                       "'%s' (%llu bytes)",
                       (unsigned long long)r->off, (unsigned long long)r->len,
                       len_s ? "" : " (the tensor's size)", loc, (unsigned long long)size);
    if (sized && r->len != want)
        return invalid(r, "external data length %llu disagrees with the tensor's "
                       "%llu elements of %s (%llu bytes); set length to %llu",
                       (unsigned long long)r->len, (unsigned long long)n,
                       type, (unsigned long long)want, (unsigned long long)want);
    return OAC_OK;
}

static bool is_external(const Onnx__TensorProto *t)
{
    return t->has_data_location &&
           t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

static int check_tensor(walk *w, const Onnx__TensorProto *t)
{
    if (!is_external(t))
        return OAC_OK;
    ext_ref r;
    int rc = ext_resolve(w->ctx, w->model->dir, w->dir_real, &w->model->nul_strings,
                         t, &r);
    if (rc == OAC_OK && r.why[0])
        rc = report(w, t, "%s", r.why);
    /* The file it names is an input of the call, found or not (guard.c):
     * the file it resolves to, else the name beside the model. */
    const char *loc = ext_get(t, "location");
    if (rc == OAC_OK && r.real && r.real[0])
        rc = oac_guard_add(w->ctx, r.real, "the model's external data");
    else if (rc == OAC_OK && loc && *loc && w->model->dir) {
        char *p = oac_asprintf(w->ctx, "%s/%s", w->model->dir, loc);
        rc = p ? oac_guard_add(w->ctx, p, "the model's external data") : OAC_ENOMEM;
        oac_dealloc(w->ctx, p);
    }
    oac_dealloc(w->ctx, r.real);
    return rc;
}

int oac_external_read(oac_ctx *ctx, const oac_model *model,
                      const Onnx__TensorProto *t, void *dst, size_t len)
{
    const char *name = t->name ? t->name : "";
    if (!is_external(t))
        return oac_err(ctx, OAC_EINVAL, "tensor '%s': not external", name);
    const char *dir = model && model->dir ? model->dir : ".";
    ext_ref r = { 0 };
    int rc = OAC_OK;
    int fd = -1;
    char *dir_real = oac_alloc(ctx, PATH_MAX);
    if (!dir_real) {
        rc = OAC_ENOMEM;
        goto done;
    }
    /* The checks of the load again: the files may have changed since, and
     * a model made in memory was never checked. */
    if ((rc = ext_resolve(ctx, dir, realpath(dir, dir_real) ? dir_real : NULL,
                          model ? &model->nul_strings : NULL, t, &r)))
        goto done;
    if (r.why[0]) {
        rc = oac_err(ctx, OAC_EPARSE, "tensor '%s': %s", name, r.why);
        goto done;
    }
    if (r.len != len) {
        rc = oac_err(ctx, OAC_EPARSE, "tensor '%s': external data holds %llu bytes, expected %zu",
                     name, (unsigned long long)r.len, len);
        goto done;
    }
    if (r.off > (uint64_t)INT64_MAX - len) {
        rc = oac_err(ctx, OAC_EPARSE, "tensor '%s': external offset out of range", name);
        goto done;
    }
    /* O_NONBLOCK: a FIFO put in the file's place since the check must not
     * block the open; it is then refused as not a regular file. */
    fd = open(r.real, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        rc = oac_err(ctx, OAC_EIO, "%s: cannot open: %s", r.real, strerror(errno));
        goto done;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = oac_err(ctx, OAC_EPARSE, "tensor '%s': external data file %s is not a regular file",
                     name, r.real);
        goto done;
    }
    for (size_t got = 0; got < len;) {
        ssize_t n = pread(fd, (uint8_t *)dst + got, len - got, (off_t)(r.off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = oac_err(ctx, OAC_EIO, "%s: short read at byte %llu", r.real,
                         (unsigned long long)(r.off + got));
            goto done;
        }
        got += (size_t)n;
    }
done:
    if (fd >= 0)
        close(fd);
    oac_dealloc(ctx, r.real);
    oac_dealloc(ctx, dir_real);
    return rc;
}

int oac_external_judge(oac_ctx *ctx, const oac_model *model,
                       const Onnx__TensorProto *t, char *why, size_t why_len)
{
    if (why_len)
        why[0] = '\0';
    if (!is_external(t))
        return OAC_OK;
    const char *dir = model && model->dir ? model->dir : ".";
    ext_ref r = { 0 };
    char *dir_real = oac_alloc(ctx, PATH_MAX);
    if (!dir_real)
        return OAC_ENOMEM;
    int rc = ext_resolve(ctx, dir, realpath(dir, dir_real) ? dir_real : NULL,
                         model ? &model->nul_strings : NULL, t, &r);
    if (rc == OAC_OK && r.why[0])
        snprintf(why, why_len, "%s", r.why);
    /* Read or refused, the file it names is an input of the call. */
    if (rc == OAC_OK && r.real && r.real[0])
        rc = oac_guard_add(ctx, r.real, "external data of an --input file");
    oac_dealloc(ctx, r.real);
    oac_dealloc(ctx, dir_real);
    return rc;
}

/* Append "/name" or "/name/index" to the pointer; returns the old length
 * to restore.  Truncates (marked with "...") rather than overrun. */
static size_t ptr_push(walk *w, const char *name, long index)
{
    size_t old = w->ptr_len;
    int n = index >= 0
        ? snprintf(w->ptr + old, PTR_MAX - old, "/%s/%ld", name, index)
        : snprintf(w->ptr + old, PTR_MAX - old, "/%s", name);
    if (n < 0 || (size_t)n >= PTR_MAX - old) {
        memcpy(w->ptr + PTR_MAX - 4, "...", 4);
        w->ptr_len = PTR_MAX - 1;
    } else {
        w->ptr_len = old + (size_t)n;
    }
    return old;
}

static void ptr_pop(walk *w, size_t old)
{
    w->ptr_len = old;
    w->ptr[old] = '\0';
}

/* The walk (model/walk.h) enters message m: its pointer, the graph it
 * names, the check of a tensor.  Deeper than OAC_MAX_DEPTH: nothing. */
static int enter(void *arg, const ProtobufCMessage *m,
                 const ProtobufCFieldDescriptor *fd, long index, int depth)
{
    walk *w = arg;
    if (fd)
        w->ptr_old[depth] = ptr_push(w, fd->name, index);
    if (depth > OAC_MAX_DEPTH)
        return OAC_WALK_SKIP;
    const ProtobufCMessageDescriptor *d = m->descriptor;
    int rc;
    if (d == &onnx__tensor_proto__descriptor &&
        (rc = check_tensor(w, (const Onnx__TensorProto *)m)))
        return rc;
    if (d == &onnx__graph_proto__descriptor) {
        w->graph_old[depth] = w->graph;
        w->graph = ((const Onnx__GraphProto *)m)->name;
    }
    return OAC_WALK_ON;
}

static void leave(void *arg, const ProtobufCMessage *m,
                  const ProtobufCFieldDescriptor *fd, long index, int depth)
{
    walk *w = arg;
    (void)index;
    if (depth <= OAC_MAX_DEPTH && m->descriptor == &onnx__graph_proto__descriptor)
        w->graph = w->graph_old[depth];
    if (fd)
        ptr_pop(w, w->ptr_old[depth]);
}

int oac_external_data_check(oac_ctx *ctx, const oac_model *model,
                            oac_diags *diags)
{
    if (!model || !model->proto || !diags)
        return OAC_OK;
    walk *w = oac_calloc(ctx, 1, sizeof *w);
    if (!w)
        return OAC_ENOMEM;
    w->ctx = ctx;
    w->model = model;
    w->diags = diags;
    int rc = OAC_OK;
    w->dir_real = oac_alloc(ctx, PATH_MAX);
    if (!w->dir_real) {
        rc = OAC_ENOMEM;
        goto done;
    }
    if (!realpath(model->dir ? model->dir : ".", w->dir_real)) {
        oac_dealloc(ctx, w->dir_real);
        w->dir_real = NULL;   /* every external reference is then invalid */
    }
    const oac_msg_walker wk = { .enter = enter, .leave = leave, .arg = w };
    rc = oac_msg_walk(&wk, &model->proto->base, 1);
done:
    oac_dealloc(ctx, w->dir_real);
    oac_dealloc(ctx, w);
    return rc;
}

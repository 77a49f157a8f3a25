/* run/dump.c: `run --dump DIR` (contract sections 5 and 8): every graph
 * output and bound cache after the last step, one file per value.
 *
 * Owns the file format of a dump and its file names.  A dense value is an
 * ONNX TensorProto (name, dims, data_type, raw_data), a paged cache a
 * SequenceProto of QuantizedTensorProto pages (elem_type
 * QUANTIZED_TENSOR), as in ONNX test data folders, so `--input
 * NAME=DIR/<file>` reads them back.  The file is DIR/<encoded>.pb, where
 * <encoded> is the value name with every byte outside [A-Za-z0-9._-], and
 * a leading '.', written as '%' and two upper-case hex digits ('a/b' is
 * a%2Fb, 'a%b' a%25b, '.x' %2Ex): one name, one file, and no file outside
 * DIR or hidden in it.
 *
 * Invariants:
 *  1. Messages point at the runtime's buffers (raw_data is not copied
 *     before packing); only the packed bytes are allocated.
 *  2. Each file is written through oac_outfile (model/outfile.c): whole or not
 *     at all, never through a symlink already in DIR.  A value that cannot
 *     be written is an output-write-failed diagnostic naming the value and
 *     the file; the other values are still written, and the call then
 *     returns OAC_ERUNTIME (explained by the diagnostics).
 *  3. A name met twice is written once.
 *  4. Contract 12: before the run (oac_dump_gate), the folder must not be
 *     a symbolic link, however it is spelled ("link", "link/", "link/."),
 *     nor the -o file or an input of the call, and no file the dump may
 *     write (one per output and READ_WRITE input
 *     of the main graph) may be an input of the call or the -o file
 *     (guard.c): a usage error, nothing run or written.
 *  5. The folder is made (one level) by oac_dump_values, when there is
 *     something to write: a run refused or stopped before its dump leaves
 *     no folder behind.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "run/kernel_api.h"

static bool plain(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

/* The length of dir without its trailing "/" and "/." (which name the
 * same folder): lstat follows a link named with them (invariant 4), and
 * file names are made from the folder itself. */
static size_t folder_len(const char *dir)
{
    size_t n = strlen(dir);
    for (;;) {
        while (n > 1 && dir[n - 1] == '/')
            n--;
        if (n <= 2 || dir[n - 1] != '.' || dir[n - 2] != '/')
            return n;
        n -= 2;
    }
}

/* DIR/<encoded name>.pb (see the top of the file). */
static char *file_name(oac_ctx *ctx, const char *dir, const char *name)
{
    size_t n = strlen(name), dl = folder_len(dir), k = dl + 1;
    /* at most three bytes per byte of the name */
    if (n > (SIZE_MAX - dl - 8) / 3) {
        oac_err(ctx, OAC_ENOMEM, "value name too long");
        return NULL;
    }
    char *p = oac_alloc(ctx, dl + 1 + 3 * n + 4);
    if (!p)
        return NULL;
    memcpy(p, dir, dl);
    p[dl] = '/';
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (plain(c) && !(i == 0 && c == '.')) {
            p[k++] = (char)c;
        } else {
            p[k++] = '%';
            p[k++] = hex[c >> 4];
            p[k++] = hex[c & 15];
        }
    }
    memcpy(p + k, ".pb", 4);
    return p;
}

/* Write m to path; invariant 2: a failure is a diagnostic about value. */
static int write_message(oac_ctx *ctx, oac_diags *diags, const char *value,
                         const char *path, const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = oac_alloc(ctx, len ? len : 1);
    if (!buf)
        return OAC_ENOMEM;
    protobuf_c_message_pack(m, buf);
    oac_outfile *f = NULL;
    int rc = oac_outfile_open_as(ctx, &f, path, "--dump");
    if (rc == OAC_OK) {
        if (len && fwrite(buf, 1, len, oac_outfile_stream(f)) != len) {
            oac_outfile_abort(f);
            rc = oac_err(ctx, OAC_EIO, "%s: cannot write", path);
        } else {
            rc = oac_outfile_commit(f);
        }
    }
    oac_dealloc(ctx, buf);
    if (rc == OAC_ENOMEM)
        return rc;
    if (rc) {
        oac_where w = { .value = value };
        rc = oac_diag_add(diags, OAC_OUTPUT_WRITE_FAILED, &w,
                          "--dump: value '%s' was not written: %s", value, oac_errmsg(ctx));
        return rc ? rc : OAC_ERUNTIME;
    }
    return OAC_OK;
}

static int dump_tensor(oac_ctx *ctx, oac_diags *diags, const char *path,
                       const char *name, const oac_tensor *t)
{
    /* An empty tensor has no storage; protobuf-c would memcpy from it. */
    static uint8_t none;
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    int64_t dims[OAC_RT_MAX_RANK];
    for (int i = 0; i < t->rank; i++)
        dims[i] = t->dims[i];
    tp.n_dims = (size_t)t->rank;
    tp.dims = dims;
    tp.has_data_type = 1;
    tp.data_type = t->elem_type;
    tp.name = (char *)name;
    tp.has_raw_data = 1;
    tp.raw_data.len = t->bytes;
    tp.raw_data.data = t->bytes ? t->data : &none;
    return write_message(ctx, diags, name, path, &tp.base);
}

static int dump_paged(oac_ctx *ctx, oac_diags *diags, const char *path,
                      const char *name, const oac_paged *p)
{
    static uint8_t none;
    Onnx__SequenceProto sp = ONNX__SEQUENCE_PROTO__INIT;
    Onnx__QuantizedTensorProto *q = oac_calloc(ctx, p->n_pages ? p->n_pages : 1, sizeof *q);
    Onnx__QuantizedTensorProto **qp = oac_calloc(ctx, p->n_pages ? p->n_pages : 1, sizeof *qp);
    int rc = OAC_ENOMEM;
    if (!q || !qp)
        goto done;
    int64_t dims[4];
    memcpy(dims, p->page_dims, sizeof dims);
    for (size_t i = 0; i < p->n_pages; i++) {
        Onnx__QuantizedTensorProto init = ONNX__QUANTIZED_TENSOR_PROTO__INIT;
        q[i] = init;
        q[i].n_dims = 4;
        q[i].dims = dims;
        q[i].has_raw_data = 1;
        q[i].raw_data.len = p->pages[i].bytes;
        q[i].raw_data.data = p->pages[i].bytes ? p->pages[i].data : &none;
        q[i].has_n_bytes = 1;
        q[i].n_bytes = (int64_t)p->pages[i].bytes;
        q[i].has_quantized_type = 1;
        q[i].quantized_type = p->pages[i].quantized_type;
        qp[i] = &q[i];
    }
    sp.name = (char *)name;
    sp.has_elem_type = 1;
    sp.elem_type = ONNX__SEQUENCE_PROTO__DATA_TYPE__QUANTIZED_TENSOR;
    sp.n_quantized_tensor_values = p->n_pages;
    sp.quantized_tensor_values = qp;
    rc = write_message(ctx, diags, name, path, &sp.base);
done:
    oac_dealloc(ctx, q);
    oac_dealloc(ctx, qp);
    return rc;
}

/* The files of vi[0..n) (only the READ_WRITE ones, the caches a run
 * binds, when caches_only) are no input of the call and no -o. */
static int gate_names(oac_ctx *ctx, const char *dir, Onnx__ValueInfoProto **vi,
                      size_t n, bool caches_only)
{
    for (size_t i = 0; i < n; i++) {
        if (!vi[i] || !vi[i]->name || !*vi[i]->name)
            continue;
        if (caches_only && !(vi[i]->has_access &&
                             vi[i]->access == ONNX__VALUE_INFO_PROTO__ACCESS__READ_WRITE))
            continue;
        char *path = file_name(ctx, dir, vi[i]->name);
        if (!path)
            return OAC_ENOMEM;
        int rc = oac_guard_check(ctx, path, "--dump");
        oac_dealloc(ctx, path);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

/* Is the folder dir names a symbolic link?  A link among the folders
 * above it is the user's own path. */
static int dir_is_link(oac_ctx *ctx, const char *dir, bool *link)
{
    char *p = oac_strndup(ctx, dir, folder_len(dir));
    if (!p)
        return OAC_ENOMEM;
    struct stat st;
    *link = strcmp(p, ".") && lstat(p, &st) == 0 && S_ISLNK(st.st_mode);
    oac_dealloc(ctx, p);
    return OAC_OK;
}

/* The guard's refusal (its message on ctx) said as --dump's: of the
 * folder itself (the guard names its path), or of a file in it. */
static int refusal(oac_ctx *ctx, const char *dir, bool file)
{
    char why[sizeof ctx->errmsg];
    snprintf(why, sizeof why, "%s", oac_errmsg(ctx));
    return file ? oac_err(ctx, OAC_EINVAL, "--dump %s: the file %s", dir, why)
                : oac_err(ctx, OAC_EINVAL, "--dump %s", why);
}

int oac_dump_gate(oac_ctx *ctx, const oac_model *model, const char *dir)
{
    bool link = false;
    int rc = dir_is_link(ctx, dir, &link);
    if (rc == OAC_OK && link)
        return oac_err(ctx, OAC_EINVAL, "--dump %s: is a symbolic link, which is not "
                       "followed; name the folder itself", dir);
    /* The folder itself may not be the -o file or an input of the call
     * (it would be made where that file goes, or fail after the run). */
    if (rc == OAC_OK && (rc = oac_guard_check(ctx, dir, "--dump")) == OAC_EINVAL)
        return refusal(ctx, dir, false);
    const Onnx__GraphProto *g = model->proto ? model->proto->graph : NULL;
    if (rc == OAC_OK && g && (rc = gate_names(ctx, dir, g->input, g->n_input, true)) == OAC_OK)
        rc = gate_names(ctx, dir, g->output, g->n_output, false);
    return rc == OAC_EINVAL ? refusal(ctx, dir, true) : rc;
}

int oac_dump_values(oac_ctx *ctx, oac_diags *diags, const char *dir,
                    const oac_dump_value *v, size_t n)
{
    int failed = OAC_OK;
    /* Invariant 5: made when missing; when it cannot be, each file is
     * its output-write-failed below. */
    if (n)
        (void)mkdir(dir, 0777);
    for (size_t i = 0; i < n; i++) {
        if (!v[i].name || !*v[i].name || !v[i].value || v[i].value->kind == OAC_RTV_NONE)
            continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = v[j].name && !strcmp(v[j].name, v[i].name);
        if (seen)
            continue;
        char *path = file_name(ctx, dir, v[i].name);
        if (!path)
            return OAC_ENOMEM;
        int rc = v[i].value->kind == OAC_RTV_PAGED
                 ? dump_paged(ctx, diags, path, v[i].name, &v[i].value->p)
                 : dump_tensor(ctx, diags, path, v[i].name, &v[i].value->t);
        oac_dealloc(ctx, path);
        if (rc == OAC_ERUNTIME)
            failed = rc;
        else if (rc)
            return rc;
    }
    return failed;
}

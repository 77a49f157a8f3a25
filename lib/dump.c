/* dump.c: `run --dump DIR` (contract section 5): every graph output and
 * bound cache after the last step, one file per value.
 *
 * Owns the file format of a dump: a dense value is an ONNX TensorProto
 * (name, dims, data_type, raw_data), a paged cache a SequenceProto of
 * QuantizedTensorProto pages (elem_type QUANTIZED_TENSOR), as in ONNX
 * test data folders, so `--input NAME=DIR/NAME.pb` reads them back.  The
 * file is DIR/<value name>.pb, with '/' and '\\' in the name replaced by
 * '_' and a leading '.' by '_' so a name cannot leave DIR.
 *
 * Invariants:
 *  1. Messages point at the runtime's buffers (raw_data is not copied
 *     before packing); only the packed bytes are allocated.
 *  2. A file is written whole or the call fails with OAC_EIO naming it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtime.h"

static char *file_name(oac_ctx *ctx, const char *dir, const char *name)
{
    char *p = oac_asprintf(ctx, "%s/%s.pb", dir, name);
    if (!p)
        return NULL;
    char *base = p + strlen(dir) + 1;
    if (*base == '.')
        *base = '_';
    for (char *c = base; *c; c++)
        if (*c == '/' || *c == '\\')
            *c = '_';
    return p;
}

static int write_message(oac_ctx *ctx, const char *path, const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = oac_alloc(ctx, len ? len : 1);
    if (!buf)
        return OAC_ENOMEM;
    protobuf_c_message_pack(m, buf);
    int rc = OAC_OK;
    FILE *f = fopen(path, "wb");
    if (!f) {
        rc = oac_err(ctx, OAC_EIO, "--dump: cannot create %s: %s", path, strerror(errno));
        goto done;
    }
    size_t w = len ? fwrite(buf, 1, len, f) : 0;
    if (fclose(f) != 0 || w != len)
        rc = oac_err(ctx, OAC_EIO, "--dump: cannot write %s", path);
done:
    oac_dealloc(ctx, buf);
    return rc;
}

static int dump_tensor(oac_ctx *ctx, const char *path, const char *name,
                       const oac_tensor *t)
{
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
    tp.raw_data.data = t->data;
    return write_message(ctx, path, &tp.base);
}

static int dump_paged(oac_ctx *ctx, const char *path, const char *name,
                      const oac_paged *p)
{
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
        q[i].raw_data.data = p->pages[i].data;
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
    rc = write_message(ctx, path, &sp.base);
done:
    oac_dealloc(ctx, q);
    oac_dealloc(ctx, qp);
    return rc;
}

int oac_dump_values(oac_ctx *ctx, const char *dir, const oac_dump_value *v,
                    size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!v[i].name || !v[i].value || v[i].value->kind == OAC_RTV_NONE)
            continue;
        char *path = file_name(ctx, dir, v[i].name);
        if (!path)
            return OAC_ENOMEM;
        int rc = v[i].value->kind == OAC_RTV_PAGED
                 ? dump_paged(ctx, path, v[i].name, &v[i].value->p)
                 : dump_tensor(ctx, path, v[i].name, &v[i].value->t);
        oac_dealloc(ctx, path);
        if (rc)
            return rc;
    }
    return OAC_OK;
}

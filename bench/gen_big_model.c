/* gen_big_model.c: write a model with large inline initializers, for
 * bench/bench_load_rss.sh (oac.h: payloads are not copied, so loading
 * and checking it must take graph-sized memory).
 *
 *   gen_big_model FILE [MIB] [TENSORS]
 *
 * writes a ModelProto (IR 8, opset 17: what onnx 1.12, Debian's, reads, so
 * bench/bench_check.sh can compare with its checker) whose graph adds TENSORS float
 * initializers (default 4) of MIB/TENSORS MiB each (default 1024 MiB in
 * all) to an input x, as raw_data.  The file is streamed: the small parts
 * are encoded in memory, each payload is written in 1 MiB chunks, so this
 * program's own memory does not grow with MIB.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) {
            perror("realloc");
            exit(1);
        }
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static size_t varint(uint8_t *o, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        o[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    o[n++] = (uint8_t)v;
    return n;
}

static void put_varint(buf *b, uint64_t v)
{
    uint8_t t[10];
    put(b, t, varint(t, v));
}

static void put_tag(buf *b, unsigned field, unsigned wt)
{
    put_varint(b, ((uint64_t)field << 3) | wt);
}

static void put_int(buf *b, unsigned field, uint64_t v)
{
    put_tag(b, field, 0);
    put_varint(b, v);
}

static void put_bytes(buf *b, unsigned field, const void *p, size_t n)
{
    put_tag(b, field, 2);
    put_varint(b, n);
    put(b, p, n);
}

static void put_str(buf *b, unsigned field, const char *s)
{
    put_bytes(b, field, s, strlen(s));
}

/* ValueInfoProto{name, type{tensor_type{elem_type FLOAT, shape{dim{k}}}}} */
static void put_value_info(buf *g, unsigned field, const char *name, uint64_t k)
{
    buf dim = { 0 }, shape = { 0 }, tensor = { 0 }, type = { 0 }, vi = { 0 };
    put_int(&dim, 1, k);
    put_bytes(&shape, 1, dim.p, dim.n);
    put_int(&tensor, 1, 1);
    put_bytes(&tensor, 2, shape.p, shape.n);
    put_bytes(&type, 1, tensor.p, tensor.n);
    put_str(&vi, 1, name);
    put_bytes(&vi, 2, type.p, type.n);
    put_bytes(g, field, vi.p, vi.n);
    free(dim.p); free(shape.p); free(tensor.p); free(type.p); free(vi.p);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gen_big_model FILE [MIB] [TENSORS]\n");
        return 2;
    }
    uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 10) : 1024;
    unsigned nt = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 4;
    if (nt == 0 || mib == 0 || mib % nt) {
        fprintf(stderr, "gen_big_model: MIB must be a positive multiple of TENSORS\n");
        return 2;
    }
    uint64_t bytes = mib / nt * 1024 * 1024;   /* per tensor */
    uint64_t k = bytes / 4;                    /* floats per tensor */

    /* The small parts of the graph, in field-number order around the
     * initializers (5): node (1) and name (2) before, input (11) and
     * output (12) after, so that a load + save gives the same bytes. */
    buf small = { 0 }, tail = { 0 };
    char prev[32] = "x", out[32], w[32];
    for (unsigned i = 0; i < nt; i++) {
        buf node = { 0 };
        snprintf(w, sizeof w, "w%u", i);
        snprintf(out, sizeof out, "y%u", i);
        put_str(&node, 1, prev);
        put_str(&node, 1, w);
        put_str(&node, 2, out);
        put_str(&node, 3, out);
        put_str(&node, 4, "Add");
        put_bytes(&small, 1, node.p, node.n);
        free(node.p);
        strcpy(prev, out);
    }
    put_str(&small, 2, "big");
    put_value_info(&tail, 11, "x", k);
    put_value_info(&tail, 12, prev, k);

    /* Each initializer: its header (dims, data_type, name, raw_data tag
     * and length) then the payload. */
    buf *heads = calloc(nt, sizeof *heads);
    uint64_t graph_len = small.n + tail.n;
    for (unsigned i = 0; i < nt; i++) {
        buf *h = &heads[i];
        snprintf(w, sizeof w, "w%u", i);
        put_int(h, 1, k);
        put_int(h, 2, 1);
        put_str(h, 8, w);
        put_tag(h, 9, 2);
        put_varint(h, bytes);
        uint64_t tlen = h->n + bytes;
        uint8_t t[10];
        graph_len += 1 + varint(t, tlen) + tlen;
    }

    FILE *f = fopen(argv[1], "wb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    buf head = { 0 }, opset = { 0 };
    put_int(&head, 1, 8);                        /* ir_version */
    put_str(&head, 2, "gen_big_model");          /* producer_name */
    put_tag(&head, 7, 2);                        /* graph */
    put_varint(&head, graph_len);
    fwrite(head.p, 1, head.n, f);
    fwrite(small.p, 1, small.n, f);
    size_t chunk = 1 << 20;
    uint8_t *data = malloc(chunk);
    for (size_t j = 0; j < chunk; j++)
        data[j] = (uint8_t)(j * 13 + 7);
    for (unsigned i = 0; i < nt; i++) {
        buf init = { 0 };
        put_tag(&init, 5, 2);                    /* initializer */
        put_varint(&init, heads[i].n + bytes);
        fwrite(init.p, 1, init.n, f);
        fwrite(heads[i].p, 1, heads[i].n, f);
        for (uint64_t left = bytes; left;) {
            size_t n = left < chunk ? (size_t)left : chunk;
            if (fwrite(data, 1, n, f) != n) {
                perror("fwrite");
                return 1;
            }
            left -= n;
        }
        free(init.p);
        free(heads[i].p);
    }
    fwrite(tail.p, 1, tail.n, f);
    put_str(&opset, 1, "");
    put_int(&opset, 2, 17);
    buf last = { 0 };
    put_bytes(&last, 8, opset.p, opset.n);       /* opset_import, after graph */
    fwrite(last.p, 1, last.n, f);
    free(last.p);
    free(tail.p);
    if (ferror(f) || fclose(f) != 0) {
        perror("fclose");
        return 1;
    }
    free(data);
    free(heads);
    free(head.p);
    free(opset.p);
    free(small.p);
    return 0;
}

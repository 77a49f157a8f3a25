/* check_load.c: the loader (lib/model/load.c, model/arena.c, model/tensor.c, model/save.c).
 *
 * What the contract and oac.h promise and these tests hold the loader to:
 *  - a model loads, its payloads stay in the mapping (no copy) and decode
 *    to the right bytes, and it saves back unchanged (byte for byte for
 *    models written in field order, unknown fields included);
 *  - every unreadable input (empty, truncated at any byte, random bytes,
 *    wrong wire types, groups, overlong varints, nesting past
 *    OAC_MAX_DEPTH) is exactly one parse-error and OAC_EPARSE, with the
 *    byte offset where it is known;
 *  - every allocation failure during a load is OAC_ENOMEM, no leak (run
 *    the sanitizer build);
 *  - save reports short writes.
 */
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/arena.h"

/* ---- helpers ---------------------------------------------------------- */

static char tmpdir[] = "/tmp/oac_load_XXXXXX";

static void setup(void)
{
    strcpy(tmpdir, "/tmp/oac_load_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

static char *tmp_path(const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(p, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* A small model with the contract's fields, a large raw initializer
 * (left in the mapping), a small typed one (kept) and a Constant. */
#define BIG 4096
static void build_model_n(oac_ctx *ctx, uint8_t **out, size_t *len, size_t big)
{
    oac_mb *mb = oac_mb_new(ctx);
    oac_gb *g = oac_mb_graph(mb);
    Onnx__ValueInfoProto *in = oac_gb_input(g, "cache", OAC_T_FLOAT, "1,2,8,4");
    oac_vi_access(g, in, 1);
    oac_gb_input(g, "values", OAC_T_FLOAT, "1,2,1,4");
    Onnx__ValueInfoProto *o = oac_gb_output(g, "out", OAC_T_FLOAT, "1,2,8,4");
    oac_vi_alias_of(g, o, "cache");
    uint8_t *raw = malloc(big);
    for (size_t i = 0; i < big; i++)
        raw[i] = (uint8_t)(i * 7 + 3);
    char dims[32];
    snprintf(dims, sizeof dims, "%zu", big);
    oac_gb_init_raw(g, "w", OAC_T_UINT8, dims, raw, big);
    free(raw);
    int64_t pos = 3;
    oac_gb_init_i64(g, "pos", "", &pos, 1);
    int64_t shape[] = { 1, 2, 8, 4 };
    oac_gb_constant_i64(g, "shape", "4", shape, 4);
    Onnx__NodeProto *n = oac_gb_node(g, "CacheUpdate", "onnx_alias", "upd",
                                     "cache,values,pos", "out");
    oac_node_alias(g, n, 0, 0, 1);
    oac_node_attr_int(g, n, "axis", -2);
    ck_assert_int_eq(oac_mb_pack(mb, out, len), 0);
    oac_mb_free(mb);
}

static void build_model(oac_ctx *ctx, uint8_t **out, size_t *len)
{
    build_model_n(ctx, out, len, BIG);
}

static const Onnx__TensorProto *init_named(const Onnx__ModelProto *m, const char *name)
{
    for (size_t i = 0; i < m->graph->n_initializer; i++)
        if (strcmp(m->graph->initializer[i]->name, name) == 0)
            return m->graph->initializer[i];
    return NULL;
}

/* Load buf, expecting failure: exactly one parse-error and OAC_EPARSE. */
static void expect_parse_error(const void *buf, size_t len, const char *needle)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m = (oac_model *)1;
    int rc = oac_model_load_buffer(ctx, &m, buf, len, "m.onnx", NULL, d);
    ck_assert_int_eq(rc, OAC_EPARSE);
    ck_assert_ptr_null(m);
    ck_assert_uint_eq(oac_diags_count(d), 1);
    const oac_diag *x = oac_diags_get(d, 0);
    ck_assert_int_eq(x->code, OAC_PARSE_ERROR);
    ck_assert_str_eq(x->message, oac_errmsg(ctx));
    ck_assert_msg(strncmp(x->message, "m.onnx: ", 8) == 0, "%s", x->message);
    if (needle)
        ck_assert_msg(strstr(x->message, needle), "'%s' lacks '%s'", x->message, needle);
    oac_diags_free(d);
    oac_ctx_free(ctx);
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static size_t varint_len(uint64_t v)
{
    uint8_t b[10];
    return put_varint(b, v);
}

/* ---- loading and no-copy ---------------------------------------------- */

START_TEST(test_load_fields_and_no_copy)
{
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *buf;
    size_t len;
    build_model(ctx, &buf, &len);
    write_file(tmp_path("m.onnx"), buf, len);
    oac_diags *d = oac_diags_new(ctx);
    oac_model *m;
    ck_assert_int_eq(oac_model_load(ctx, &m, tmp_path("m.onnx"), d), 0);
    ck_assert_uint_eq(oac_diags_count(d), 0);
    ck_assert_str_eq(oac_model_path(m), tmp_path("m.onnx"));
    ck_assert_str_eq(m->dir, tmpdir);
    const Onnx__ModelProto *p = oac_model_proto(m);
    ck_assert_int_eq(p->ir_version, 10);
    ck_assert_str_eq(p->graph->name, "main");
    ck_assert_uint_eq(p->graph->n_node, 2);
    const Onnx__NodeProto *upd = p->graph->node[1];
    ck_assert_str_eq(upd->op_type, "CacheUpdate");
    ck_assert_uint_eq(upd->n_output_alias, 1);
    ck_assert_int_eq(upd->output_alias[0]->kind, 1);
    ck_assert_int_eq(p->graph->input[0]->access, 1);
    ck_assert_str_eq(p->graph->output[0]->alias_of, "cache");

    /* The big payload is not in the struct: it is an unknown field with
     * its original tag whose bytes are the mapping's. */
    const Onnx__TensorProto *w = init_named(p, "w");
    ck_assert_ptr_nonnull(w);
    ck_assert(!w->has_raw_data);
    oac_payload pl;
    ck_assert(oac_tensor_payload(w, &pl));
    ck_assert_int_eq(pl.field, 9);
    ck_assert_uint_eq(pl.len, BIG);
    ck_assert(pl.bytes >= m->map && pl.bytes + pl.len <= m->map + m->map_len);
    ck_assert(m->mapped);
    uint8_t got[BIG];
    ck_assert_int_eq(oac_tensor_read(ctx, m, w, got, BIG), 0);
    for (size_t i = 0; i < BIG; i++)
        ck_assert_uint_eq(got[i], (uint8_t)(i * 7 + 3));
    /* A wrong destination size is refused, not overrun. */
    ck_assert_int_eq(oac_tensor_read(ctx, m, w, got, BIG - 1), OAC_EINVAL);
    /* The parsed tree is graph-sized, not weight-sized: the same model
     * with a payload 256 times larger takes exactly as much memory. */
    uint8_t *big;
    size_t big_len;
    build_model_n(ctx, &big, &big_len, (size_t)BIG * 256);
    oac_model *mb;
    ck_assert_int_eq(oac_model_load_buffer(ctx, &mb, big, big_len, "big", NULL, NULL), 0);
    ck_assert_uint_eq(oac_arena_used(mb->arena), oac_arena_used(m->arena));
    ck_assert_uint_lt(oac_arena_used(mb->arena), 16384);
    oac_model_free(mb);
    free(big);

    /* The small typed initializer stays in the struct. */
    const Onnx__TensorProto *pos = init_named(p, "pos");
    ck_assert_uint_eq(pos->n_int64_data, 1);
    int64_t v[4];
    size_t n;
    ck_assert_int_eq(oac_tensor_int64s(ctx, pos, v, 4, &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(v[0], 3);
    const Onnx__TensorProto *shape = p->graph->node[0]->attribute[0]->t;
    ck_assert_int_eq(oac_tensor_int64s(ctx, shape, v, 4, &n), 0);
    ck_assert_uint_eq(n, 4);
    ck_assert_int_eq(v[2], 8);

    /* Saved back byte for byte (the builder writes in field order and the
     * payload field is the last one set in its tensor). */
    uint8_t *out;
    size_t out_len;
    ck_assert_int_eq(oac_model_save_buffer(ctx, &out, &out_len, m), 0);
    ck_assert_uint_eq(out_len, len);
    ck_assert_int_eq(memcmp(out, buf, len), 0);
    oac_free(out);
    ck_assert_int_eq(oac_model_save(ctx, m, tmp_path("o.onnx")), 0);
    FILE *f = fopen(tmp_path("o.onnx"), "rb");
    uint8_t *back = malloc(len + 1);
    ck_assert_uint_eq(fread(back, 1, len + 1, f), len);
    fclose(f);
    ck_assert_int_eq(memcmp(back, buf, len), 0);
    free(back);

    oac_model_free(m);
    oac_diags_free(d);
    free(buf);
    oac_ctx_free(ctx);
}
END_TEST

/* Pages of the file that hold a skipped payload are never read by a
 * load: evict the file from the page cache, load it, and ask mincore()
 * which pages of the payload came back.  Skipped (not failed) where the
 * file system cannot evict (tmpfs). */
START_TEST(test_payload_pages_untouched)
{
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *buf;
    size_t len;
    size_t big = (size_t)8 << 20;
    build_model_n(ctx, &buf, &len, big);
    const char *path = tmp_path("pages.onnx");
    write_file(path, buf, len);
    free(buf);
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(fsync(fd), 0);
    ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t npages = (len + page - 1) / page;
    unsigned char *vec = malloc(npages);
    void *probe = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    ck_assert(probe != MAP_FAILED);
    ck_assert_int_eq(mincore(probe, len, vec), 0);
    size_t before = 0;
    for (size_t i = 0; i < npages; i++)
        before += vec[i] & 1;
    munmap(probe, len);
    close(fd);
    if (before > npages / 10) {
        fprintf(stderr, "test_payload_pages_untouched: cannot evict pages here, skipped\n");
    } else {
        oac_model *m;
        ck_assert_int_eq(oac_model_load(ctx, &m, path, NULL), 0);
        oac_payload pl;
        ck_assert(oac_tensor_payload(init_named(oac_model_proto(m), "w"), &pl));
        ck_assert_uint_eq(pl.len, big);
        /* whole pages strictly inside the payload */
        uintptr_t lo = ((uintptr_t)pl.bytes + page - 1) & ~(uintptr_t)(page - 1);
        uintptr_t hi = ((uintptr_t)pl.bytes + pl.len) & ~(uintptr_t)(page - 1);
        size_t n = (hi - lo) / page, resident = 0;
        ck_assert_int_eq(mincore((void *)lo, hi - lo, vec), 0);
        for (size_t i = 0; i < n; i++)
            resident += vec[i] & 1;
        ck_assert_msg(resident == 0, "%zu of %zu payload pages resident after load",
                      resident, n);
        /* decoding reads them, of course */
        uint8_t *dst = malloc(big);
        ck_assert_int_eq(oac_tensor_read(ctx, m, init_named(oac_model_proto(m), "w"),
                                         dst, big), 0);
        ck_assert_uint_eq(dst[big / 2], (uint8_t)((big / 2) * 7 + 3));
        free(dst);
        /* ... and mincore sees that: the measurement above can fail. */
        ck_assert_int_eq(mincore((void *)lo, hi - lo, vec), 0);
        resident = 0;
        for (size_t i = 0; i < n; i++)
            resident += vec[i] & 1;
        ck_assert_uint_gt(resident, n / 2);
        oac_model_free(m);
    }
    free(vec);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_save_errors)
{
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *buf;
    size_t len;
    build_model(ctx, &buf, &len);
    oac_model *m;
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, buf, len, "b.onnx", NULL, NULL), 0);
    ck_assert(!m->mapped);
    ck_assert_int_eq(oac_model_save(ctx, m, "/nonexistent-dir/x.onnx"), OAC_EIO);
    ck_assert(strstr(oac_errmsg(ctx), "/nonexistent-dir/x.onnx"));
    /* A device is written directly and, on failure, left alone. */
    struct stat st;
    if (stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) {
        ck_assert_int_eq(oac_model_save(ctx, m, "/dev/full"), OAC_EIO);
        ck_assert(strstr(oac_errmsg(ctx), "write failed"));
        ck_assert_int_eq(stat("/dev/full", &st), 0);
        ck_assert(S_ISCHR(st.st_mode));
    }
    oac_model_free(m);

    /* Saving a model over the very file it is mapped from: the new file
     * replaces the old by rename, the mapping keeps the old bytes, and no
     * temporary file is left behind. */
    write_file(tmp_path("self.onnx"), buf, len);
    ck_assert_int_eq(chmod(tmp_path("self.onnx"), 0640), 0);
    ck_assert_int_eq(oac_model_load(ctx, &m, tmp_path("self.onnx"), NULL), 0);
    ck_assert_int_eq(oac_model_save(ctx, m, tmp_path("self.onnx")), 0);
    ck_assert_int_eq(oac_model_save(ctx, m, tmp_path("self.onnx")), 0);
    const Onnx__TensorProto *w = init_named(oac_model_proto(m), "w");
    uint8_t got[BIG];
    ck_assert_int_eq(oac_tensor_read(ctx, m, w, got, BIG), 0);
    ck_assert_uint_eq(got[BIG - 1], (uint8_t)((BIG - 1) * 7 + 3));
    oac_model_free(m);
    ck_assert_int_eq(stat(tmp_path("self.onnx"), &st), 0);
    ck_assert_uint_eq((size_t)st.st_size, len);
    ck_assert_uint_eq(st.st_mode & 0777, 0640);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "test $(ls '%s' | grep -c oac-tmp) -eq 0", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    /* Every allocation of a save may fail: OAC_ENOMEM, the old file kept,
     * no temporary file left. */
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, buf, len, "b", NULL, NULL), 0);
    int rc = OAC_ENOMEM;
    for (unsigned long n = 1; rc == OAC_ENOMEM && n < 20; n++) {
        oac_ctx_fail_alloc_after(ctx, n);
        rc = oac_model_save(ctx, m, tmp_path("self.onnx"));
        oac_ctx_fail_alloc_after(ctx, 0);
        ck_assert(rc == OAC_OK || rc == OAC_ENOMEM);
        ck_assert_int_eq(system(cmd), 0);
        ck_assert_int_eq(stat(tmp_path("self.onnx"), &st), 0);
        ck_assert_uint_eq((size_t)st.st_size, len);
    }
    ck_assert_int_eq(rc, OAC_OK);
    oac_model_free(m);
    /* Through a symlink: the file it points to is replaced, the link kept. */
    ck_assert_int_eq(symlink("self.onnx", tmp_path("link.onnx")), 0);
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, buf, len, "b", NULL, NULL), 0);
    ck_assert_int_eq(oac_model_save(ctx, m, tmp_path("link.onnx")), 0);
    ck_assert_int_eq(lstat(tmp_path("link.onnx"), &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    oac_model_free(m);
    free(buf);
    oac_ctx_free(ctx);
}
END_TEST

/* ---- unreadable inputs -------------------------------------------------- */

START_TEST(test_empty_and_missing)
{
    write_file(tmp_path("empty.onnx"), "", 0);
    const char *paths[] = { tmp_path("empty.onnx"), "/nonexistent/model.onnx", "/tmp" };
    const char *needles[] = { "empty file at byte 0", "cannot open", "not a regular file" };
    for (int i = 0; i < 3; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s", paths[i]);
        oac_ctx *ctx = oac_ctx_new();
        oac_diags *d = oac_diags_new(ctx);
        oac_model *m = (oac_model *)1;
        ck_assert_int_eq(oac_model_load(ctx, &m, path, d), OAC_EPARSE);
        ck_assert_ptr_null(m);
        ck_assert_uint_eq(oac_diags_count(d), 1);
        ck_assert_int_eq(oac_diags_get(d, 0)->code, OAC_PARSE_ERROR);
        ck_assert_msg(strstr(oac_errmsg(ctx), needles[i]), "%s", oac_errmsg(ctx));
        ck_assert_msg(strstr(oac_errmsg(ctx), path), "%s", oac_errmsg(ctx));
        oac_diags_free(d);
        oac_ctx_free(ctx);
    }
    expect_parse_error("", 0, "empty file at byte 0");
}
END_TEST

/* Offsets where the top-level message may legally end: a cut there is a
 * valid, shorter model (protobuf has no end marker). */
static void top_boundaries(const uint8_t *buf, size_t len, bool *ok)
{
    size_t p = 0;
    ok[0] = false;   /* an empty file is not a model */
    while (p < len) {
        uint64_t tag = 0, v = 0;
        int s = 0;
        while (buf[p] & 0x80) tag |= (uint64_t)(buf[p++] & 0x7f) << (7 * s++);
        tag |= (uint64_t)buf[p++] << (7 * s);
        switch (tag & 7) {
        case 0: while (buf[p++] & 0x80) {} break;
        case 1: p += 8; break;
        case 5: p += 4; break;
        case 2:
            s = 0;
            while (buf[p] & 0x80) v |= (uint64_t)(buf[p++] & 0x7f) << (7 * s++);
            v |= (uint64_t)buf[p++] << (7 * s);
            p += v;
            break;
        }
        ok[p] = true;
    }
}

START_TEST(test_truncation_every_byte)
{
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *buf;
    size_t len;
    build_model(ctx, &buf, &len);
    bool *ok = calloc(len + 1, 1);
    top_boundaries(buf, len, ok);
    ck_assert(ok[len]);
    size_t errors = 0;
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);   /* exact size: ASan sees overreads */
        memcpy(copy, buf, cut);
        if (ok[cut]) {
            oac_diags *d = oac_diags_new(ctx);
            oac_model *m;
            ck_assert_int_eq(oac_model_load_buffer(ctx, &m, copy, cut, "m.onnx", NULL, d), 0);
            ck_assert_uint_eq(oac_diags_count(d), 0);
            oac_model_free(m);
            oac_diags_free(d);
        } else {
            expect_parse_error(copy, cut, cut ? " at byte " : "empty file");
            errors++;
        }
        free(copy);
    }
    ck_assert_uint_gt(errors, len * 9 / 10);
    free(ok);
    free(buf);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_random_bytes)
{
    /* Seeded: every run sees the same inputs.  Random bytes are either a
     * (meaningless) valid message or exactly one parse-error. */
    uint64_t state = 0x9e3779b97f4a7c15ull;
    size_t failures = 0;
    for (int i = 0; i < 3000; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        size_t len = 1 + (state >> 33) % 300;
        uint8_t *b = malloc(len);
        for (size_t j = 0; j < len; j++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            b[j] = (uint8_t)(state >> 56);
        }
        oac_ctx *ctx = oac_ctx_new();
        oac_diags *d = oac_diags_new(ctx);
        oac_model *m;
        int rc = oac_model_load_buffer(ctx, &m, b, len, "r.onnx", NULL, d);
        if (rc == OAC_OK) {
            ck_assert_int_eq(oac_diags_find(d, OAC_PARSE_ERROR), -1);
            uint8_t *out;
            size_t out_len;
            ck_assert_int_eq(oac_model_save_buffer(ctx, &out, &out_len, m), 0);
            oac_free(out);
            oac_model_free(m);
        } else {
            ck_assert_int_eq(rc, OAC_EPARSE);
            ck_assert_uint_eq(oac_diags_count(d), 1);
            ck_assert_int_eq(oac_diags_get(d, 0)->code, OAC_PARSE_ERROR);
            failures++;
        }
        oac_diags_free(d);
        oac_ctx_free(ctx);
        free(b);
    }
    ck_assert_uint_gt(failures, 2000);
}
END_TEST

START_TEST(test_wire_errors)
{
    /* ir_version (field 1, int64) sent length-delimited */
    expect_parse_error("\x0a\x00", 2, "wrong wire type 2 for field ir_version of ModelProto at byte 0");
    /* graph (field 7, message) sent as a varint, after a valid field */
    expect_parse_error("\x08\x07\x38\x01", 4, "wrong wire type 0 for field graph of ModelProto at byte 2");
    /* groups */
    expect_parse_error("\x08\x07\x0b", 3, "group wire type 3 (groups are not supported) at byte 2");
    expect_parse_error("\x0c", 1, "group wire type 4");
    /* invalid wire types 6 and 7 */
    expect_parse_error("\x0e", 1, "invalid wire type 6 at byte 0");
    expect_parse_error("\x0f\x00", 2, "invalid wire type 7");
    /* field number 0 */
    expect_parse_error("\x00\x01", 2, "field number 0 at byte 0");
    /* overlong and truncated varints */
    expect_parse_error("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12,
                       "overlong varint at byte 1");
    expect_parse_error("\x08\xff\xff", 3, "truncated varint at byte 1");
    expect_parse_error("\xf8", 1, "truncated tag at byte 0");
    /* a length past the end, at top level and inside a nested message */
    expect_parse_error("\x3a\x05\x00", 3, "truncated length-delimited field (length 5, 1 bytes left) at byte 1");
    expect_parse_error("\x3a\x04\x0a\x05\x61\x62", 6, "truncated length-delimited field (length 5, 2 bytes left) at byte 3");
    /* a packed field whose size is not a multiple of its element: TensorProto
     * float_data inside graph.initializer */
    expect_parse_error("\x3a\x05\x2a\x03\x22\x01\x00", 7, "packed field float_data holds 1 bytes");
    /* a packed varint cut inside its element */
    expect_parse_error("\x3a\x05\x2a\x03\x3a\x01\x80", 7, "malformed packed varint in field int64_data");
    /* an unknown field is fine ... */
    oac_ctx *ctx = oac_ctx_new();
    oac_model *m;
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, "\x08\x07\xa0\x06\x05", 5, "u", NULL, NULL), 0);
    uint8_t *out;
    size_t n;
    ck_assert_int_eq(oac_model_save_buffer(ctx, &out, &n, m), 0);
    ck_assert_uint_eq(n, 5);
    ck_assert_int_eq(memcmp(out, "\x08\x07\xa0\x06\x05", 5), 0);
    oac_free(out);
    oac_model_free(m);
    oac_ctx_free(ctx);
    /* ... but a truncated one is not */
    expect_parse_error("\x08\x07\xa2\x06\x05\x01", 6, "at byte 4");
}
END_TEST

/* value_info { name: "x" type: TypeProto{ sequence_type { elem_type {
 * sequence_type ... } } } } depth levels deep, written outer-first. */
static uint8_t *deep_sequence(size_t levels, size_t *out_len)
{
    /* sizes[i]: length of the i-th TypeProto from the inside */
    size_t *tp = calloc(levels + 1, sizeof *tp);
    tp[0] = 0;                                   /* innermost: empty TypeProto */
    for (size_t i = 1; i <= levels; i++) {
        size_t seq = 1 + varint_len(tp[i - 1]) + tp[i - 1];   /* Sequence{elem_type=1} */
        tp[i] = 1 + varint_len(seq) + seq;                    /* TypeProto{sequence_type=4} */
    }
    size_t vi = 3 + 1 + varint_len(tp[levels]) + tp[levels];  /* name "x" + type=2 */
    size_t gr = 1 + varint_len(vi) + vi;                      /* input=11 */
    size_t total = 1 + varint_len(gr) + gr;                   /* graph=7 */
    uint8_t *b = malloc(total), *p = b;
    *p++ = 0x3a; p += put_varint(p, gr);
    *p++ = 0x5a; p += put_varint(p, vi);
    *p++ = 0x0a; *p++ = 1; *p++ = 'x';
    *p++ = 0x12; p += put_varint(p, tp[levels]);
    for (size_t i = levels; i >= 1; i--) {
        size_t seq = 1 + varint_len(tp[i - 1]) + tp[i - 1];
        *p++ = 0x22; p += put_varint(p, seq);
        *p++ = 0x0a; p += put_varint(p, tp[i - 1]);
    }
    ck_assert_uint_eq((size_t)(p - b), total);
    free(tp);
    *out_len = total;
    return b;
}

/* graph { node { attribute { name "body" type GRAPH g { ... } } } } */
static size_t attr_size(size_t inner)
{
    /* name=1 "body" (6 bytes), type=20 GRAPH (3 bytes), g=6 (tag, length, inner) */
    return 6 + 3 + 1 + varint_len(inner) + inner;
}

static uint8_t *deep_subgraphs(size_t levels, size_t *out_len)
{
    size_t *g = calloc(levels + 1, sizeof *g);   /* GraphProto sizes from the inside */
    g[0] = 0;
    for (size_t i = 1; i <= levels; i++) {
        size_t at = attr_size(g[i - 1]);
        size_t node = 1 + varint_len(at) + at;   /* NodeProto{attribute=5} */
        g[i] = 1 + varint_len(node) + node;      /* GraphProto{node=1} */
    }
    size_t total = 1 + varint_len(g[levels]) + g[levels];
    uint8_t *b = malloc(total), *p = b;
    *p++ = 0x3a; p += put_varint(p, g[levels]);
    for (size_t i = levels; i >= 1; i--) {
        size_t at = attr_size(g[i - 1]);
        size_t node = 1 + varint_len(at) + at;
        *p++ = 0x0a; p += put_varint(p, node);
        *p++ = 0x2a; p += put_varint(p, at);
        memcpy(p, "\x0a\x04" "body" "\xa0\x01\x05", 9); p += 9;
        *p++ = 0x32; p += put_varint(p, g[i - 1]);
    }
    ck_assert_uint_eq((size_t)(p - b), total);
    free(g);
    *out_len = total;
    return b;
}

START_TEST(test_deep_nesting)
{
    size_t len;
    uint8_t *b = deep_sequence(10000, &len);
    expect_parse_error(b, len, "messages nested deeper than 64");
    free(b);
    b = deep_subgraphs(1000, &len);
    expect_parse_error(b, len, "messages nested deeper than 64");
    free(b);
    /* Nesting well inside the bound loads: 15 subgraph levels are 47
     * messages deep, 20 sequence levels 45. */
    oac_ctx *ctx = oac_ctx_new();
    oac_model *m;
    b = deep_subgraphs(15, &len);
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, b, len, "d", NULL, NULL), 0);
    const Onnx__GraphProto *g = oac_model_proto(m)->graph;
    for (int i = 0; i < 15; i++) {
        ck_assert_uint_eq(g->n_node, 1);
        g = g->node[0]->attribute[0]->g;
    }
    ck_assert_uint_eq(g->n_node, 0);
    oac_model_free(m);
    free(b);
    b = deep_sequence(20, &len);
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, b, len, "d", NULL, NULL), 0);
    oac_model_free(m);
    free(b);
    oac_ctx_free(ctx);
}
END_TEST

/* Unknown fields anywhere, small and large, and the largest legal field
 * number (the former loader's marker), come back byte for byte. */
START_TEST(test_unknown_fields_round_trip)
{
    uint8_t b[1024], *p = b;
    uint8_t node[600], *q = node;
    /* NodeProto: op_type=4 "Foo", unknown 77 varint, unknown 78 bytes of
     * 200 (large: left in the mapping), field 536870911 as a varint and
     * as bytes, unknown fixed32 and fixed64. */
    memcpy(q, "\x22\x03" "Foo", 5); q += 5;
    q += put_varint(q, 77 << 3); q += put_varint(q, 12345);
    q += put_varint(q, (78 << 3) | 2); q += put_varint(q, 200);
    for (int i = 0; i < 200; i++) *q++ = (uint8_t)i;
    q += put_varint(q, (uint64_t)536870911 << 3); q += put_varint(q, 1);
    q += put_varint(q, ((uint64_t)536870911 << 3) | 2); q += put_varint(q, 3);
    memcpy(q, "abc", 3); q += 3;
    q += put_varint(q, (79 << 3) | 5); memcpy(q, "\x01\x02\x03\x04", 4); q += 4;
    q += put_varint(q, (80 << 3) | 1); memcpy(q, "\x01\x02\x03\x04\x05\x06\x07\x08", 8); q += 8;
    size_t nl = (size_t)(q - node);
    size_t gl = 1 + varint_len(nl) + nl;
    *p++ = 0x08; *p++ = 0x09;                       /* ir_version 9 */
    *p++ = 0x3a; p += put_varint(p, gl);            /* graph */
    *p++ = 0x0a; p += put_varint(p, nl);            /* node */
    memcpy(p, node, nl); p += nl;
    p += put_varint(p, (1500 << 3) | 2); p += put_varint(p, 2); *p++ = 'h'; *p++ = 'i';
    size_t len = (size_t)(p - b);

    oac_ctx *ctx = oac_ctx_new();
    oac_model *m;
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, b, len, "u", NULL, NULL), 0);
    const Onnx__NodeProto *n = oac_model_proto(m)->graph->node[0];
    ck_assert_str_eq(n->op_type, "Foo");
    /* Small unknown fields are copied one by one, in order. */
    ck_assert_uint_eq(n->base.n_unknown_fields, 6);
    ck_assert_uint_eq(n->base.unknown_fields[0].tag, 77);
    ck_assert_uint_eq(n->base.unknown_fields[1].tag, 78);
    /* the large one points into the caller's buffer */
    ck_assert(n->base.unknown_fields[1].data > b && n->base.unknown_fields[1].data < b + len);
    ck_assert_uint_eq(n->base.unknown_fields[2].tag, 536870911);
    ck_assert_uint_eq(n->base.unknown_fields[2].wire_type, PROTOBUF_C_WIRE_TYPE_VARINT);
    ck_assert_uint_eq(n->base.unknown_fields[3].tag, 536870911);
    ck_assert_uint_eq(n->base.unknown_fields[3].wire_type, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
    ck_assert(n->base.unknown_fields[3].data < b || n->base.unknown_fields[3].data >= b + len);
    ck_assert_uint_eq(n->base.unknown_fields[4].tag, 79);
    ck_assert_uint_eq(n->base.unknown_fields[5].tag, 80);
    uint8_t *out;
    size_t out_len;
    ck_assert_int_eq(oac_model_save_buffer(ctx, &out, &out_len, m), 0);
    ck_assert_uint_eq(out_len, len);
    ck_assert_int_eq(memcmp(out, b, len), 0);
    oac_free(out);
    oac_model_free(m);
    oac_ctx_free(ctx);
}
END_TEST

/* A model whose only initializer is the given TensorProto fields. */
static size_t wrap_tensor(uint8_t *b, const uint8_t *t, size_t tl)
{
    uint8_t *p = b;
    size_t gl = 1 + varint_len(tl) + tl;
    *p++ = 0x3a; p += put_varint(p, gl);
    *p++ = 0x2a; p += put_varint(p, tl);
    memcpy(p, t, tl);
    return (size_t)(p - b) + tl;
}

START_TEST(test_typed_payloads)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_model *m;
    uint8_t t[2048], b[2200], *q;
    size_t len;

    /* FLOAT, 20 values as 20 non-packed float_data fields: one span of
     * 100 bytes left in the mapping, decoded in order. */
    q = t;
    memcpy(q, "\x08\x14\x10\x01", 4); q += 4;        /* dims [20], FLOAT */
    for (int i = 0; i < 20; i++) {
        float f = (float)i * 1.5f;
        *q++ = 0x25;
        memcpy(q, &f, 4); q += 4;
    }
    len = wrap_tensor(b, t, (size_t)(q - t));
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, b, len, "f", NULL, NULL), 0);
    const Onnx__TensorProto *x = oac_model_proto(m)->graph->initializer[0];
    ck_assert_uint_eq(x->n_float_data, 0);
    oac_payload pl;
    ck_assert(oac_tensor_payload(x, &pl));
    ck_assert_int_eq(pl.field, 4);
    ck_assert_ptr_null(pl.bytes);              /* not one contiguous run */
    float fv[20];
    ck_assert_int_eq(oac_tensor_read(ctx, m, x, fv, sizeof fv), 0);
    for (int i = 0; i < 20; i++)
        ck_assert_float_eq(fv[i], (float)i * 1.5f);
    uint8_t *out;
    size_t out_len;
    ck_assert_int_eq(oac_model_save_buffer(ctx, &out, &out_len, m), 0);
    ck_assert_uint_eq(out_len, len);
    ck_assert_int_eq(memcmp(out, b, len), 0);
    oac_free(out);
    oac_model_free(m);

    /* DOUBLE, 30 values in packed double_data: one contiguous mapped run,
     * copied at once; and a destination one element short is refused. */
    q = t;
    memcpy(q, "\x08\x1e\x10\x0b", 4); q += 4;        /* dims [30], DOUBLE */
    *q++ = 0x52; *q++ = 240;  *q++ = 1;             /* double_data, 240 bytes */
    for (int i = 0; i < 30; i++) {
        double v = i * 0.25 - 3;
        memcpy(q, &v, 8); q += 8;
    }
    len = wrap_tensor(b, t, (size_t)(q - t));
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, b, len, "d", NULL, NULL), 0);
    x = oac_model_proto(m)->graph->initializer[0];
    ck_assert_uint_eq(x->n_double_data, 0);
    ck_assert(oac_tensor_payload(x, &pl));
    ck_assert_int_eq(pl.field, 10);
    ck_assert_uint_eq(pl.len, 240);
    ck_assert(pl.bytes > b && pl.bytes + pl.len <= b + len);
    double dv[30];
    ck_assert_int_eq(oac_tensor_read(ctx, m, x, dv, sizeof dv), 0);
    for (int i = 0; i < 30; i++)
        ck_assert_double_eq(dv[i], i * 0.25 - 3);
    ((Onnx__TensorProto *)x)->dims[0] = 31;
    double dv31[31];
    ck_assert_int_eq(oac_tensor_read(ctx, m, x, dv31, sizeof dv31), OAC_EPARSE);
    ((Onnx__TensorProto *)x)->dims[0] = 29;
    ck_assert_int_eq(oac_tensor_read(ctx, m, x, dv, 29 * sizeof(double)), OAC_EPARSE);
    oac_model_free(m);

    /* FLOAT16, 40 values in packed int32_data (3-byte varints): mapped,
     * decoded to 80 little-endian bytes. */
    q = t;
    memcpy(q, "\x08\x28\x10\x0a", 4); q += 4;        /* dims [40], FLOAT16 */
    uint8_t packed[200], *pp = packed;
    for (int i = 0; i < 40; i++)
        pp += put_varint(pp, 0x3c00u + (unsigned)i);
    *q++ = 0x2a; q += put_varint(q, (size_t)(pp - packed));
    memcpy(q, packed, (size_t)(pp - packed)); q += pp - packed;
    len = wrap_tensor(b, t, (size_t)(q - t));
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, b, len, "h", NULL, NULL), 0);
    x = oac_model_proto(m)->graph->initializer[0];
    ck_assert_uint_eq(x->n_int32_data, 0);
    ck_assert(oac_tensor_payload(x, &pl));
    ck_assert_int_eq(pl.field, 5);
    ck_assert(pl.bytes > b && pl.bytes + pl.len <= b + len);
    uint16_t hv[40];
    ck_assert_int_eq(oac_tensor_read(ctx, m, x, hv, sizeof hv), 0);
    for (int i = 0; i < 40; i++)
        ck_assert_uint_eq(hv[i], 0x3c00u + (unsigned)i);
    /* too few values for the dims: refused, not zero-filled */
    Onnx__TensorProto *xw = (Onnx__TensorProto *)x;
    xw->dims[0] = 41;
    uint16_t hv41[41];
    ck_assert_int_eq(oac_tensor_read(ctx, m, x, hv41, sizeof hv41), OAC_EPARSE);
    oac_model_free(m);

    /* INT8 in int32_data with negatives (10-byte varints), mapped: read
     * gives bytes, int64s gives signed values. */
    q = t;
    memcpy(q, "\x08\x0c\x10\x03", 4); q += 4;        /* dims [12], INT8 */
    pp = packed;
    for (int i = 0; i < 12; i++)
        pp += put_varint(pp, (uint64_t)(int64_t)(i - 6));
    *q++ = 0x2a; q += put_varint(q, (size_t)(pp - packed));
    memcpy(q, packed, (size_t)(pp - packed)); q += pp - packed;
    len = wrap_tensor(b, t, (size_t)(q - t));
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, b, len, "i", NULL, NULL), 0);
    x = oac_model_proto(m)->graph->initializer[0];
    int8_t iv[12];
    ck_assert_int_eq(oac_tensor_read(ctx, m, x, iv, sizeof iv), 0);
    int64_t lv[12];
    size_t n;
    ck_assert_int_eq(oac_tensor_int64s(ctx, x, lv, 12, &n), 0);
    ck_assert_uint_eq(n, 12);
    for (int i = 0; i < 12; i++) {
        ck_assert_int_eq(iv[i], i - 6);
        ck_assert_int_eq(lv[i], i - 6);
    }
    /* max bounds what is written */
    lv[3] = 99;
    ck_assert_int_eq(oac_tensor_int64s(ctx, x, lv, 3, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(lv[3], 99);
    oac_model_free(m);

    /* INT64 raw_data of the wrong size: a clean error. */
    q = t;
    memcpy(q, "\x08\x0a\x10\x07", 4); q += 4;        /* dims [10], INT64 */
    *q++ = 0x4a; *q++ = 72;                          /* raw_data: 72 bytes, not 80 */
    memset(q, 1, 72); q += 72;
    len = wrap_tensor(b, t, (size_t)(q - t));
    ck_assert_int_eq(oac_model_load_buffer(ctx, &m, b, len, "r", NULL, NULL), 0);
    x = oac_model_proto(m)->graph->initializer[0];
    ck_assert_int_eq(oac_tensor_int64s(ctx, x, lv, 12, &n), OAC_EPARSE);
    ck_assert(strstr(oac_errmsg(ctx), "raw_data holds 72 bytes"));
    oac_model_free(m);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_pbfile)
{
    oac_ctx *ctx = oac_ctx_new();
    /* SequenceProto { tensor_values: TensorProto{dims [256], UINT8, raw} } */
    uint8_t t[400], b[600], *q = t;
    memcpy(q, "\x08\x80\x02\x10\x02\x4a\x80\x02", 8); q += 8;
    for (int i = 0; i < 256; i++) *q++ = (uint8_t)(255 - i);
    size_t tl = (size_t)(q - t);
    uint8_t *p = b;
    memcpy(p, "\x0a\x02kv", 4); p += 4;              /* name */
    *p++ = 0x10; *p++ = 0x01;                        /* elem_type TENSOR */
    *p++ = 0x1a; p += put_varint(p, tl);             /* tensor_values=3 */
    memcpy(p, t, tl); p += tl;
    write_file(tmp_path("seq.pb"), b, (size_t)(p - b));
    oac_pbfile *f;
    oac_diags *d = oac_diags_new(ctx);
    ck_assert_int_eq(oac_pbfile_load(ctx, &f, tmp_path("seq.pb"),
                                     &onnx__sequence_proto__descriptor, d), 0);
    const Onnx__SequenceProto *s = (const Onnx__SequenceProto *)f->msg;
    ck_assert_str_eq(s->name, "kv");
    ck_assert_uint_eq(s->n_tensor_values, 1);
    oac_payload pl;
    ck_assert(oac_tensor_payload(s->tensor_values[0], &pl));
    ck_assert(pl.bytes >= f->map && pl.bytes + 256 <= f->map + f->map_len);
    uint8_t v[256];
    ck_assert_int_eq(oac_tensor_read(ctx, NULL, s->tensor_values[0], v, 256), 0);
    ck_assert_uint_eq(v[0], 255);
    ck_assert_uint_eq(v[255], 0);
    oac_pbfile_free(f);
    /* the same bytes cut short: one parse-error naming the file */
    write_file(tmp_path("cut.pb"), b, 100);
    ck_assert_int_eq(oac_pbfile_load(ctx, &f, tmp_path("cut.pb"),
                                     &onnx__sequence_proto__descriptor, d), OAC_EPARSE);
    ck_assert_ptr_null(f);
    ck_assert_uint_eq(oac_diags_count(d), 1);
    ck_assert(strstr(oac_diags_get(d, 0)->message, "cut.pb: truncated"));
    oac_diags_free(d);
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_alloc_chaos)
{
    oac_ctx *ctx = oac_ctx_new();
    uint8_t *buf;
    size_t len;
    build_model(ctx, &buf, &len);
    write_file(tmp_path("m.onnx"), buf, len);
    oac_ctx_free(ctx);
    unsigned long n;
    for (n = 1; n < 10000; n++) {
        ctx = oac_ctx_new();
        oac_diags *d = oac_diags_new(ctx);
        oac_model *m = (oac_model *)1;
        oac_ctx_fail_alloc_after(ctx, n);
        int rc = oac_model_load(ctx, &m, tmp_path("m.onnx"), d);
        if (rc == OAC_OK) {
            oac_ctx_fail_alloc_after(ctx, 0);
            uint8_t *out;
            size_t out_len;
            ck_assert_int_eq(oac_model_save_buffer(ctx, &out, &out_len, m), 0);
            ck_assert_int_eq(memcmp(out, buf, len), 0);
            oac_free(out);
            oac_model_free(m);
            oac_diags_free(d);
            oac_ctx_free(ctx);
            break;
        }
        ck_assert_msg(rc == OAC_ENOMEM, "n=%lu rc=%d %s", n, rc, oac_errmsg(ctx));
        ck_assert_ptr_null(m);
        ck_assert_int_eq(oac_diags_find(d, OAC_PARSE_ERROR), -1);
        oac_diags_free(d);
        oac_ctx_free(ctx);
    }
    ck_assert_uint_gt(n, 3);
    ck_assert_uint_lt(n, 10000);
    free(buf);
}
END_TEST

/* ---- streams: oac_model_load_fd (the tool's "-") --------------------- */

/* A pipe whose read end holds the n bytes of p, then end of file (n must
 * fit the pipe's buffer). */
static int pipe_with(const void *p, size_t n)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(write(fds[1], p, n), (ssize_t)n);
    close(fds[1]);
    return fds[0];
}

/* Bytes left unread in fd. */
static size_t drain(int fd)
{
    char b[4096];
    size_t n = 0;
    ssize_t k;
    while ((k = read(fd, b, sizeof b)) > 0)
        n += (size_t)k;
    return n;
}

START_TEST(test_load_fd)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = oac_diags_new(ctx);
    uint8_t *buf, *out;
    size_t len, out_len;
    oac_model *m;
    build_model(ctx, &buf, &len);
    ck_assert_uint_lt(len, 16384);

    /* A pipe: read into memory, parsed as the bytes are, saved back the same. */
    int fd = pipe_with(buf, len);
    ck_assert_int_eq(oac_model_load_fd(ctx, &m, fd, 0, NULL, NULL, d), OAC_OK);
    ck_assert_str_eq(oac_model_path(m), "-");
    ck_assert_int_eq(oac_model_save_buffer(ctx, &out, &out_len, m), 0);
    ck_assert_uint_eq(out_len, len);
    ck_assert_int_eq(memcmp(out, buf, len), 0);
    oac_free(out);
    oac_model_free(m);
    close(fd);

    /* Exactly the limit is a model; one byte more is a parse-error, and
     * reading stopped at that byte: the rest is still in the pipe. */
    fd = pipe_with(buf, len);
    ck_assert_int_eq(oac_model_load_fd(ctx, &m, fd, len, "<in>", NULL, d), OAC_OK);
    oac_model_free(m);
    close(fd);
    fd = pipe_with(buf, len);
    m = (oac_model *)1;
    ck_assert_int_eq(oac_model_load_fd(ctx, &m, fd, 100, "<in>", NULL, d), OAC_EPARSE);
    ck_assert_ptr_null(m);
    ck_assert_uint_eq(oac_diags_count(d), 1);
    ck_assert_int_eq(oac_diags_get(d, 0)->code, OAC_PARSE_ERROR);
    ck_assert_msg(strstr(oac_errmsg(ctx), "<in>: more than 100 bytes"), "%s", oac_errmsg(ctx));
    ck_assert_uint_eq(drain(fd), len - 101);
    close(fd);

    /* The same hostile-input rules as a file: a cut model, nothing at all. */
    oac_diags_free(d);
    d = oac_diags_new(ctx);
    fd = pipe_with(buf, len - 1);
    ck_assert_int_eq(oac_model_load_fd(ctx, &m, fd, 0, NULL, NULL, d), OAC_EPARSE);
    ck_assert_uint_eq(oac_diags_count(d), 1);
    close(fd);
    fd = pipe_with("", 0);
    ck_assert_int_eq(oac_model_load_fd(ctx, &m, fd, 0, NULL, NULL, d), OAC_EPARSE);
    ck_assert_msg(strstr(oac_errmsg(ctx), "-: empty file at byte 0"), "%s", oac_errmsg(ctx));
    close(fd);

    /* Redirected from a file: mapped, whatever the limit; a folder is refused. */
    write_file(tmp_path("m.onnx"), buf, len);
    fd = open(tmp_path("m.onnx"), O_RDONLY);
    ck_assert_int_eq(oac_model_load_fd(ctx, &m, fd, 0, "-", NULL, d), OAC_OK);
    oac_model_free(m);
    close(fd);
    fd = open(tmpdir, O_RDONLY | O_DIRECTORY);
    ck_assert_int_eq(oac_model_load_fd(ctx, &m, fd, 0, "-", NULL, d), OAC_EPARSE);
    ck_assert_msg(strstr(oac_errmsg(ctx), "is a folder"), "%s", oac_errmsg(ctx));
    close(fd);
    ck_assert_int_eq(oac_model_load_fd(ctx, &m, -1, 0, "-", NULL, d), OAC_EINVAL);

    /* Every allocation of a stream's load may fail: ENOMEM, nothing left. */
    unsigned long n;
    for (n = 1; n < 10000; n++) {
        oac_ctx *c2 = oac_ctx_new();
        oac_diags *d2 = oac_diags_new(c2);
        fd = pipe_with(buf, len);
        oac_ctx_fail_alloc_after(c2, n);
        m = (oac_model *)1;
        int rc = oac_model_load_fd(c2, &m, fd, 0, NULL, NULL, d2);
        close(fd);
        oac_model_free(rc == OAC_OK ? m : NULL);
        oac_diags_free(d2);
        oac_ctx_free(c2);
        if (rc == OAC_OK)
            break;
        ck_assert_msg(rc == OAC_ENOMEM, "n=%lu rc=%d", n, rc);
        ck_assert_ptr_null(m);
    }
    ck_assert_uint_gt(n, 3);
    ck_assert_uint_lt(n, 10000);
    free(buf);
    oac_diags_free(d);
    oac_ctx_free(ctx);
}
END_TEST

/* ---- case rows: parse-error ------------------------------------------ */

/* build_model's model loaded from memory, whole or with its last `cut`
 * bytes missing (cut < 0: only its first half). */
static void load_cut(fx *f, long cut)
{
    fx_begin(f);
    build_model(f->ctx, &f->buf, &f->len);
    size_t len = cut < 0 ? f->len / 2 : f->len - (size_t)cut;
    int rc = oac_model_load_buffer(f->ctx, &f->m, f->buf, len, "m.onnx", NULL, f->d);
    ck_assert_int_eq(rc, cut ? OAC_EPARSE : OAC_OK);
}

static void load_whole(fx *f) { load_cut(f, 0); }
static void load_last_byte_cut(fx *f) { load_cut(f, 1); }
static void load_half(fx *f) { load_cut(f, -1); }

static const scene_case parse_rows[] = {
    { "last_byte_cut", load_last_byte_cut, WANT(OAC_PARSE_ERROR), NULL, NULL, NULL },
    { "half", load_half, WANT(OAC_PARSE_ERROR), NULL, NULL, NULL },
    { "whole", load_whole, NEAR(OAC_PARSE_ERROR) },
};
CASES_TEST(parse_rows)

Suite *test_suite(void)
{
    Suite *s = suite_create("load");
    TCase *tc = tcase_create("load");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_load_fields_and_no_copy);
    tcase_add_test(tc, test_payload_pages_untouched);
    tcase_add_test(tc, test_save_errors);
    tcase_add_test(tc, test_empty_and_missing);
    tcase_add_test(tc, test_truncation_every_byte);
    tcase_add_test(tc, test_random_bytes);
    tcase_add_test(tc, test_wire_errors);
    tcase_add_test(tc, test_deep_nesting);
    tcase_add_test(tc, test_unknown_fields_round_trip);
    tcase_add_test(tc, test_typed_payloads);
    tcase_add_test(tc, test_pbfile);
    tcase_add_test(tc, test_alloc_chaos);
    tcase_add_test(tc, test_load_fd);
    ADD_CASES(tc, parse_rows);
    suite_add_tcase(s, tc);
    return s;
}


/* oac_int.h: what the library's files share and the public header hides.
 *
 * Owns: the context layout, the one allocator every file allocates
 * through, checked arithmetic, the diagnostic appender, the model layout
 * and the lazy payload accessors.  Module headers (check/graph.h, check/shapes.h,
 * run/kernel_api.h, quant/quant.h, ...) include this one.
 *
 * Invariants:
 *  1. Every allocation goes through oac_alloc and friends, so that
 *     oac_ctx_fail_alloc_after can fail any one of them in tests.
 *  2. No file prints, exits or keeps mutable state outside a context or an
 *     object; messages of failures go to ctx->errmsg via oac_err.
 */
#ifndef OAC_INT_H
#define OAC_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oac.h"
#include "onnx.pb-c.h"

/* ONNX TensorProto.DataType numbers, for readability at call sites. */
enum {
    OAC_T_FLOAT = 1, OAC_T_UINT8 = 2, OAC_T_INT8 = 3, OAC_T_UINT16 = 4,
    OAC_T_INT16 = 5, OAC_T_INT32 = 6, OAC_T_INT64 = 7, OAC_T_STRING = 8,
    OAC_T_BOOL = 9, OAC_T_FLOAT16 = 10, OAC_T_DOUBLE = 11, OAC_T_UINT32 = 12,
    OAC_T_UINT64 = 13, OAC_T_BFLOAT16 = 16, OAC_T_FLOAT8E4M3FN = 17,
    OAC_T_UINT4 = 21, OAC_T_INT4 = 22
};

#define OAC_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* ---- ctx.c ---------------------------------------------------------- */

/* The reference runtime's largest rank (the contract's caches are rank
 * 4; the toy decoder stays below 6): run/ refuses higher ones with
 * OAC_EUNSUPPORTED, check/inputs.c an --input file of a higher rank. */
#define OAC_RT_MAX_RANK 8

struct oac_ctx {
    char errmsg[1024];
    unsigned long alloc_calls;   /* allocations attempted */
    unsigned long fail_after;    /* 0: never fail; else fail from this call on */
    struct oac_guard *guard;     /* the inputs of the call (guard.c), NULL: none yet */
    bool guard_off;              /* reading the call's own output: not an input */
};
/* The inputs of a call (model/guard.c fills and reads it; oac_ctx_free
 * releases it): per entry its resolved path, the path as given, what it
 * is ("the model"), the writer of an output entry (NULL for inputs), and
 * its device and inode when it existed. */
typedef struct oac_guard_entry {
    char *real;
    char *shown;
    const char *what;
    const char *writer;
    dev_t dev;
    ino_t ino;
    bool has_id;
} oac_guard_entry;
typedef struct oac_guard {
    oac_guard_entry *e;
    size_t n, cap;
} oac_guard;

/* Store a failure message on the context and return status. */
int oac_err(oac_ctx *ctx, int status, const char *fmt, ...) OAC_PRINTF(3, 4);

void *oac_alloc(oac_ctx *ctx, size_t n);                  /* uninitialised */
void *oac_calloc(oac_ctx *ctx, size_t n, size_t size);    /* zeroed, n*size checked */
void *oac_realloc(oac_ctx *ctx, void *p, size_t n);
void *oac_reallocarray(oac_ctx *ctx, void *p, size_t n, size_t size);
void oac_dealloc(oac_ctx *ctx, void *p);
/* Map the pages of a fresh block of n bytes that the caller is about to
 * fill, in one system call instead of one page fault per page (half of
 * a large check's time was page faults).  Only an optimisation: blocks
 * under a few pages and systems without MADV_POPULATE_WRITE are left as
 * they are, and a failure changes nothing. */
void oac_prefault(void *p, size_t n);
char *oac_strdup(oac_ctx *ctx, const char *s);            /* NULL in, NULL out */
char *oac_strndup(oac_ctx *ctx, const char *s, size_t n);
char *oac_asprintf(oac_ctx *ctx, const char *fmt, ...) OAC_PRINTF(2, 3);
char *oac_vasprintf(oac_ctx *ctx, const char *fmt, va_list ap);

/* Grow *arr (of *cap elements of size) so that it holds at least need. */
int oac_grow(oac_ctx *ctx, void **arr, size_t *cap, size_t need, size_t size);

/* Checked arithmetic: true when the result overflowed. */
static inline bool oac_mul_overflow_u64(uint64_t a, uint64_t b, uint64_t *r)
{ return __builtin_mul_overflow(a, b, r); }
static inline bool oac_add_overflow_u64(uint64_t a, uint64_t b, uint64_t *r)
{ return __builtin_add_overflow(a, b, r); }
static inline bool oac_add_overflow_i64(int64_t a, int64_t b, int64_t *r)
{ return __builtin_add_overflow(a, b, r); }
static inline bool oac_sub_overflow_i64(int64_t a, int64_t b, int64_t *r)
{ return __builtin_sub_overflow(a, b, r); }
static inline bool oac_mul_overflow_i64(int64_t a, int64_t b, int64_t *r)
{ return __builtin_mul_overflow(a, b, r); }

/* ---- diag.c --------------------------------------------------------- */

/* Where a finding is; any member may be NULL. */
typedef struct oac_where {
    const char *graph;
    const char *node;
    const char *op_type;
    const char *value;
    const char *location;
    /* The finding's second party (oac_diag.related): where it is, and
     * what it is ("the in-place update"); NULL when none. */
    const struct oac_where *related;
    const char *related_message;
} oac_where;

/* Append a diagnostic with the code's default severity.  An identical
 * diagnostic (same code, location, value and message) is kept once.
 * Returns OAC_OK or OAC_ENOMEM. */
int oac_diag_add(oac_diags *diags, oac_code code, const oac_where *where,
                 const char *fmt, ...) OAC_PRINTF(4, 5);
int oac_diag_vadd(oac_diags *diags, oac_code code, const oac_where *where,
                  const char *fmt, va_list ap);
oac_ctx *oac_diags_ctx(const oac_diags *diags);

/* ---- strmap.c: string-keyed hash map (keys borrowed, not copied) ----- */

/* A probe slot of a strmap or strindex: the entry and its key's hash, so
 * a probe compares the hash without touching the entry. */
struct oac_strmap_idx {
    uint32_t e;    /* entry + 1, 0 for an empty slot */
    uint32_t h;    /* the key's 32-bit hash; its low bits pick the slot */
};

/* The first probe slot of hash h in cap slots: the high bits of h * cap,
 * so cap need not be a power of two and an index is sized to its keys. */
static inline size_t oac_hash_slot(uint32_t h, size_t cap)
{
    return (size_t)(((uint64_t)h * cap) >> 32);
}

/* The 32-bit hash both maps use.  Eight bytes at a time, then a
 * murmur-style finalizer: value names are short and a byte-at-a-time
 * hash was most of a lookup.  Keys come from the model, so the
 * finalizer's avalanche keeps probe runs short for ordinary names; no
 * adversarial key control is worth more here.  Inline: check/graph.c hashes
 * every name of a model once, and a call cost a third of a hash. */
static inline uint32_t oac_str_hash(const char *s)
{
    size_t n = __builtin_strlen(s);
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n;
    const uint64_t k = 0xff51afd7ed558ccdULL;
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t w;
        __builtin_memcpy(&w, s, 8);
        h = (h ^ w) * k;
        h ^= h >> 32;
    }
    if (n) {
        /* The 1-7 byte tail in fixed-size loads that stay inside the key
         * (two overlapping halves, or first/middle/last byte): a copy
         * of variable length cost more than the rest of the hash. */
        uint64_t w;
        if (n >= 4) {
            uint32_t a, b;
            __builtin_memcpy(&a, s, 4);
            __builtin_memcpy(&b, s + n - 4, 4);
            w = (uint64_t)a << 32 | b;
        } else {
            w = (uint64_t)(unsigned char)s[0] << 16 |
                (uint64_t)(unsigned char)s[n >> 1] << 8 |
                (unsigned char)s[n - 1];
        }
        h = (h ^ w) * k;
    }
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return (uint32_t)(h ^ (h >> 32));
}

/* An index over entries the caller stores (an array at base, which the
 * caller updates when the array moves; each entry's string key at
 * key_off): probe slots only (8 bytes each), no copy of keys or values.  check/graph.c names a scope's values this way,
 * once per name of the model, so the probes are inline. */
typedef struct oac_strindex {
    oac_ctx *ctx;
    struct oac_strmap_idx *idx;
    size_t cap;    /* at most 2^31, or 0 */
    size_t count;
    const void *base;
    size_t stride, key_off;
} oac_strindex;

void oac_strindex_init(oac_strindex *x, oac_ctx *ctx, const void *base,
                       size_t stride, size_t key_off);
void oac_strindex_fini(oac_strindex *x);
/* Room for n keys without growing (a hint): n / 0.7 probe slots. */
int oac_strindex_reserve(oac_strindex *x, size_t n);
/* Twice the probe slots (strmap.c; the slow path of get_or_add). */
int oac_strindex_grow(oac_strindex *x);

/* A map from borrowed strings to pointers: its entries (key, value) in
 * insertion order, found through a strindex over them. */
typedef struct oac_strmap {
    oac_strindex x;                 /* probe slots; x.base is slots */
    struct oac_strmap_slot *slots;  /* entries, insertion order */
    size_t ecap;                    /* room in slots */
} oac_strmap;

void oac_strmap_init(oac_strmap *m, oac_ctx *ctx);
void oac_strmap_fini(oac_strmap *m);
/* Insert or replace; key must outlive the map. */
int oac_strmap_put(oac_strmap *m, const char *key, void *val);
/* Room for n keys in all without growing (a hint; OAC_ENOMEM on failure). */
int oac_strmap_reserve(oac_strmap *m, size_t n);
/* The value, or NULL when absent (so do not store NULL values). */
void *oac_strmap_get(const oac_strmap *m, const char *key);
bool oac_strmap_has(const oac_strmap *m, const char *key);
static inline size_t oac_strmap_count(const oac_strmap *m)
{
    return m->x.count;
}


/* The probe slot of key (hash h): holding its entry, or the empty slot
 * where it would go.  x->cap > 0, and below a 3/4 load, so one is
 * empty. */
static inline size_t oac_strindex_slot(const oac_strindex *x,
                                       const char *key, uint32_t h)
{
    const struct oac_strmap_idx *idx = x->idx;
    size_t cap = x->cap;
    for (size_t i = oac_hash_slot(h, cap);; i = i + 1 < cap ? i + 1 : 0) {
        uint32_t e = idx[i].e;
        if (!e)
            return i;
        if (idx[i].h == h) {
            const char *k;
            __builtin_memcpy(&k, (const char *)x->base +
                             (size_t)(e - 1) * x->stride + x->key_off,
                             sizeof k);
            if (k == key || __builtin_strcmp(k, key) == 0)
                return i;
        }
    }
}

/* The entry whose key is key, or SIZE_MAX. */
static inline size_t oac_strindex_get(const oac_strindex *x, const char *key)
{
    if (!x->cap || !key)
        return SIZE_MAX;
    uint32_t e = x->idx[oac_strindex_slot(x, key, oac_str_hash(key))].e;
    return e ? (size_t)e - 1 : SIZE_MAX;
}

/* The entry of key when present (*found); else records entry e under
 * key (*found = SIZE_MAX), whose key the caller stores next.  One hash
 * and one probe.  OAC_ENOMEM on failure. */
static inline int oac_strindex_get_or_add(oac_strindex *x, const char *key,
                                          size_t e, size_t *found)
{
    *found = SIZE_MAX;
    if (e >= UINT32_MAX)
        return oac_err(x->ctx, OAC_ENOMEM, "map too large");
    uint32_t h = oac_str_hash(key);
    size_t i = 0;
    if (x->cap) {
        i = oac_strindex_slot(x, key, h);
        if (x->idx[i].e) {
            *found = (size_t)x->idx[i].e - 1;
            return OAC_OK;
        }
    }
    if ((x->count + 1) * 4 >= x->cap * 3) {
        int rc = oac_strindex_grow(x);
        if (rc)
            return rc;
        i = oac_strindex_slot(x, key, h);
    }
    x->idx[i] = (struct oac_strmap_idx){ (uint32_t)(e + 1), h };
    x->count++;
    return OAC_OK;
}

/* ---- elem.c: TensorProto.DataType facts ----------------------------- */

/* "FLOAT16" for 10; NULL when unknown. */
const char *oac_elem_name(int32_t elem_type);
/* Bits per element: 32 for FLOAT, 4 for INT4, 0 for STRING/unknown. */
unsigned oac_elem_bits(int32_t elem_type);
/* Bytes of n elements (sub-byte types packed); false on overflow or an
 * element type without a fixed size. */
bool oac_elem_bytes(int32_t elem_type, uint64_t n, uint64_t *out);

/* ---- model/load.c / model/save.c / model/extdata.c: models ---------------------------- */

/* The strings of a parsed model whose bytes held a NUL byte
 * (model/decode.c lists them), sorted by address once at load
 * (model/nulset.c): p[0 .. n), in the model's arena; empty when none. */
typedef struct oac_nul_set {
    const char **p;
    size_t n;
} oac_nul_set;
/* Is s (a string of the model's tree) one of them?  A bisection. */
bool oac_nul_held(const oac_nul_set *ns, const char *s);
struct oac_arena;
struct oac_decode_nul;
/* The set of the decoder's list l, in arena (model/nulset.c); OAC_ENOMEM
 * with the arena's message. */
int oac_nul_set_make(struct oac_arena *arena, const struct oac_decode_nul *l,
                     oac_nul_set *out);

struct oac_model {
    oac_ctx *ctx;
    char *path;              /* as given */
    char *dir;               /* folder external data is relative to */
    const uint8_t *map;      /* the whole file, read-only; NULL for buffers */
    size_t map_len;
    bool mapped;             /* map came from mmap and must be unmapped */
    bool owned;              /* map is ours (oac_alloc, a stream read into
                              * memory) and is freed with the model */
    Onnx__ModelProto *proto;
    struct oac_arena *arena; /* owns every byte of proto */
    /* The strings of proto whose bytes held a NUL (oac_nul_set): such a
     * string is only the text before the NUL (model/extdata.c refuses it
     * as a location, check/structure.c as a name). */
    oac_nul_set nul_strings;
};

/* The parsed ModelProto (model/load.c); borrowed, as long as the model. */
const Onnx__ModelProto *oac_model_proto(const oac_model *model);

/* Payload access that works whether a field was kept in the parsed
 * message or left in the mapping (model/load.c).  Raw little-endian bytes of
 * the tensor's raw_data, or of a packed typed field. */
typedef struct oac_payload {
    int field;               /* TensorProto field number: 4,5,7,9,10,11 */
    const uint8_t *bytes;    /* packed wire bytes, or raw_data */
    size_t len;
} oac_payload;

/* Find the tensor's data field, wherever it lives; false when none.
 * bytes is NULL (len 0) when the field is present but has no contiguous
 * wire form to point at: varint fields kept in the struct, or data split
 * over several occurrences; oac_tensor_read/oac_tensor_int64s decode
 * every form.  A large payload of a loaded model is left in the file
 * mapping as an unknown field, so read t->raw_data only through this. */
bool oac_tensor_payload(const Onnx__TensorProto *t, oac_payload *out);
/* The same for QuantizedTensorProto.raw_data (field 2). */
bool oac_qtensor_payload(const Onnx__QuantizedTensorProto *q, oac_payload *out);
/* Number of elements the dims describe; false on overflow or a negative
 * dimension (elem.c). */
bool oac_tensor_numel(const Onnx__TensorProto *t, uint64_t *out);
/* The bytes of dense data (what raw_data would hold) that t's inline
 * payload stands for: raw_data's length, or the values stored in the
 * typed field its data_type uses (float_data, int32_data, ...) times the
 * bytes each stands for; values in another typed field do not count.
 * Fixed-size fields are measured by their length, varint fields are
 * counted (read, never copied).  OAC_EPARSE on a malformed payload,
 * OAC_EUNSUPPORTED for a type without a typed field (STRING, UNDEFINED,
 * unknown), with the message on ctx.  Not for EXTERNAL tensors. */
int oac_tensor_payload_bytes(oac_ctx *ctx, const Onnx__TensorProto *t,
                             uint64_t *out);
/* Does t's inline payload hold exactly its element count times its
 * element size (a STRING tensor: one string_data entry per element)?
 * True also when that cannot be judged here (EXTERNAL data, model/extdata.c's;
 * segments; types without a fixed size).  False with why set to what is
 * wrong and how to mend it, a phrase to follow the tensor's name
 * ("(FLOAT[4]) holds 12 bytes of data, but its 4 elements need 16: ...").
 * ctx's message is left as it was. */
bool oac_tensor_payload_fits(oac_ctx *ctx, const Onnx__TensorProto *t,
                             char *why, size_t why_len);
/* Decode an integer tensor (INT64, INT32, INT16, INT8, UINT*, BOOL) into
 * int64 values; at most max, count in *n.  OAC_EPARSE on malformed
 * data, with the message on ctx. */
int oac_tensor_int64s(oac_ctx *ctx, const Onnx__TensorProto *t,
                      int64_t *out, size_t max, size_t *n);
/* The same, reading an EXTERNAL tensor of at most max elements as
 * oac_tensor_read does (relative to model's folder); with model NULL an
 * external tensor is OAC_EUNSUPPORTED, as for oac_tensor_int64s. */
int oac_tensor_int64s_in(oac_ctx *ctx, const oac_model *model, const Onnx__TensorProto *t,
                         int64_t *out, size_t max, size_t *n);
/* Decode the tensor's elements into dst as dense little-endian bytes of
 * its data_type (what raw_data would hold).  dst_len must equal the
 * tensor's byte size. */
int oac_tensor_read(oac_ctx *ctx, const oac_model *model,
                    const Onnx__TensorProto *t, void *dst, size_t dst_len);

/* Parse one standalone protobuf file (an ONNX TensorProto, SequenceProto
 * or MapProto as in test data folders, or a --input) with the same
 * bounds and no-copy rules as a model.  The message is owned by *out. */
typedef struct oac_pbfile {
    oac_ctx *ctx;
    char *path;
    const uint8_t *map;
    size_t map_len;
    bool mapped;
    ProtobufCMessage *msg;
    struct oac_arena *arena;
} oac_pbfile;
int oac_pbfile_load(oac_ctx *ctx, oac_pbfile **out, const char *path,
                    const ProtobufCMessageDescriptor *desc, oac_diags *diags);
void oac_pbfile_free(oac_pbfile *f);

/* Write the model to a new temporary file beside target (model/save.c; the
 * mode of target when it is a regular file) and return its name in
 * *tmp_out (oac_dealloc it); the caller renames or removes it.  OAC_EIO
 * with nothing left behind when writing fails. */
int oac_model_save_temp(oac_ctx *ctx, const oac_model *model, const char *target,
                        char **tmp_out);

/* A new temporary file beside target (model/outfile.c), named so that it fits
 * NAME_MAX whenever target's name does, O_EXCL | O_NOFOLLOW, with old's
 * permission bits when old is given: its fd, *tmp_out its path
 * (oac_dealloc it); negative with the reason on ctx. */
struct stat;
int oac_tempfile_open(oac_ctx *ctx, const char *target, const struct stat *old,
                      char **tmp_out);
/* oac_outfile_open for the named writer ("-o", "--dump"): guard.c's
 * output entries of another writer are refused too. */
int oac_outfile_open_as(oac_ctx *ctx, oac_outfile **out, const char *path,
                        const char *writer);

/* Validate every external-data reference of the model (model/extdata.c). */
int oac_external_data_check(oac_ctx *ctx, const oac_model *model,
                            oac_diags *diags);
/* Read an EXTERNAL tensor's len payload bytes into dst (model/extdata.c), after
 * the same checks; OAC_EPARSE when the reference is invalid or holds
 * another size, OAC_EIO when reading fails. */
int oac_external_read(oac_ctx *ctx, const oac_model *model,
                      const Onnx__TensorProto *t, void *dst, size_t len);

/* Judge an --input file's EXTERNAL tensor t as oac_external_read would
 * before reading it (relative to model's folder): OAC_OK with why empty
 * when run could read it, with why set when run refuses it; OAC_ENOMEM.
 * The file it resolves to is recorded as an input of the call (guard.c).
 * Not external: OAC_OK, why empty. */
int oac_external_judge(oac_ctx *ctx, const oac_model *model,
                       const Onnx__TensorProto *t, char *why, size_t why_len);

/* A node's attributes (attr.c), for the checker's rules and the kernels
 * alike: the first attribute of that name, or NULL; an INT or FLOAT
 * attribute whose value field is absent holds 0; def when absent. */
const Onnx__AttributeProto *oac_node_attr(const Onnx__NodeProto *n,
                                          const char *name);
int64_t oac_attr_int(const Onnx__NodeProto *n, const char *name, int64_t def);
float oac_attr_float(const Onnx__NodeProto *n, const char *name, float def);
/* The string attribute into buf (NUL-terminated, truncated); def if absent. */
const char *oac_attr_string(const Onnx__NodeProto *n, const char *name,
                            const char *def, char *buf, size_t len);

#endif /* OAC_INT_H */

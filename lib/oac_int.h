/* oac_int.h: what the library's files share and the public header hides.
 *
 * Owns: the context layout, the one allocator every file allocates
 * through, checked arithmetic, the diagnostic appender, the model layout
 * and the lazy payload accessors.  Module headers (graph.h, shapes.h,
 * runtime.h, quant.h, ...) include this one.
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

#include "oac.h"
#include "onnx.pb-c.h"

#define OAC_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* ---- ctx.c ---------------------------------------------------------- */

struct oac_ctx {
    char errmsg[1024];
    unsigned long alloc_calls;   /* allocations attempted */
    unsigned long fail_after;    /* 0: never fail; else fail from this call on */
};

/* Store a failure message on the context and return status. */
int oac_err(oac_ctx *ctx, int status, const char *fmt, ...) OAC_PRINTF(3, 4);

void *oac_alloc(oac_ctx *ctx, size_t n);                  /* uninitialised */
void *oac_calloc(oac_ctx *ctx, size_t n, size_t size);    /* zeroed, n*size checked */
void *oac_realloc(oac_ctx *ctx, void *p, size_t n);
void *oac_reallocarray(oac_ctx *ctx, void *p, size_t n, size_t size);
void oac_dealloc(oac_ctx *ctx, void *p);
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

typedef struct oac_strmap {
    oac_ctx *ctx;
    struct oac_strmap_slot *slots;  /* entries, insertion order */
    struct oac_strmap_idx *idx;     /* cap probe slots */
    size_t cap;    /* power of two or 0 */
    size_t count;
    size_t ecap;   /* room in slots */
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

/* An index over entries the caller stores (an array that never moves,
 * each entry's string key at key_off): probe slots only (8 bytes each),
 * no copy of keys or values.  graph.c names a scope's values this way. */
typedef struct oac_strindex {
    oac_ctx *ctx;
    struct oac_strmap_idx *idx;
    size_t cap;    /* power of two or 0 */
    size_t count;
    const void *base;
    size_t stride, key_off;
} oac_strindex;

void oac_strindex_init(oac_strindex *x, oac_ctx *ctx, const void *base,
                       size_t stride, size_t key_off);
void oac_strindex_fini(oac_strindex *x);
/* Room for n keys without growing (a hint). */
int oac_strindex_reserve(oac_strindex *x, size_t n);
/* The entry whose key is key, or SIZE_MAX. */
size_t oac_strindex_get(const oac_strindex *x, const char *key);
/* The entry of key when present (*found); else records entry e under
 * key (*found = SIZE_MAX), whose key the caller stores next.  One hash
 * and one probe.  OAC_ENOMEM on failure. */
int oac_strindex_get_or_add(oac_strindex *x, const char *key, size_t e,
                            size_t *found);

/* ---- elem.c: TensorProto.DataType facts ----------------------------- */

/* "FLOAT16" for 10; NULL when unknown. */
const char *oac_elem_name(int32_t elem_type);
/* Bits per element: 32 for FLOAT, 4 for INT4, 0 for STRING/unknown. */
unsigned oac_elem_bits(int32_t elem_type);
/* Bytes of n elements (sub-byte types packed); false on overflow or an
 * element type without a fixed size. */
bool oac_elem_bytes(int32_t elem_type, uint64_t n, uint64_t *out);

/* ---- load.c / save.c / extdata.c: models ---------------------------- */

struct oac_model {
    oac_ctx *ctx;
    char *path;              /* as given */
    char *dir;               /* folder external data is relative to */
    const uint8_t *map;      /* the whole file, read-only; NULL for buffers */
    size_t map_len;
    bool mapped;             /* map came from mmap and must be unmapped */
    Onnx__ModelProto *proto;
    struct oac_arena *arena; /* owns every byte of proto */
};

/* Payload access that works whether a field was kept in the parsed
 * message or left in the mapping (load.c).  Raw little-endian bytes of
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
 * dimension. */
bool oac_tensor_numel(const Onnx__TensorProto *t, uint64_t *out);
/* Decode an integer tensor (INT64, INT32, INT16, INT8, UINT*, BOOL) into
 * int64 values; at most max, count in *n.  OAC_EPARSE on malformed
 * data, with the message on ctx. */
int oac_tensor_int64s(oac_ctx *ctx, const Onnx__TensorProto *t,
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

/* Validate every external-data reference of the model (extdata.c). */
int oac_external_data_check(oac_ctx *ctx, const oac_model *model,
                            oac_diags *diags);
/* Read an EXTERNAL tensor's len payload bytes into dst (extdata.c), after
 * the same checks; OAC_EPARSE when the reference is invalid or holds
 * another size, OAC_EIO when reading fails. */
int oac_external_read(oac_ctx *ctx, const oac_model *model,
                      const Onnx__TensorProto *t, void *dst, size_t len);

#endif /* OAC_INT_H */

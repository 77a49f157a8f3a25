/* model/decode.h: protobuf wire format straight into protobuf-c structs.
 *
 * Owns oac_decode (model/decode.c), the loader's parser (model/load.c): one pass per
 * message over the bytes, driven by the protobuf-c descriptors, building
 * the same structs protobuf_c_message_unpack would, in an arena, with
 * large payload fields left in the buffer as unknown fields (contract 1).
 */
#ifndef OAC_DECODE_H
#define OAC_DECODE_H

#include <protobuf-c/protobuf-c.h>

#include "model/arena.h"
#include "oac_int.h"

/* Spans of payload fields (and unknown fields) longer than this stay in
 * the buffer. */
#define OAC_DECODE_THRESHOLD 64

/* flags: buf is a read-only private file mapping; every
 * OAC_DECODE_DROP_STEP bytes the walk drops the pages it has passed from
 * the resident set (madvise MADV_DONTNEED), so the file pages resident
 * while decoding stay around that step, not the file's size.  Never for
 * memory that is not such a mapping (anonymous pages would read back as
 * zeros). */
#define OAC_DECODE_DROP_PAGES 1u
#define OAC_DECODE_DROP_STEP ((uintptr_t)2 << 20)

/* Strings up to this length may share one copy in the arena with equal
 * strings decoded shortly before (model/decode.c, copy_string); longer ones get
 * a copy each. */
#define OAC_DECODE_SHARE_MAX 256

/* Decode buf[0, len) (len > 0) as a message of type desc into arena.
 * OAC_OK: *out is the message; it points into buf for payloads, so buf
 * must outlive it; *external (may be NULL) tells whether a TensorProto
 * has a data_location field.  Equal strings of the tree may be one copy,
 * and equal AttributeProtos or TensorShapeProto.Dimensions that hold no
 * message one message: the tree is read-only, and released only with the
 * arena.  OAC_EPARSE:
 * err holds the reason, without a file name ("truncated tag at byte
 * 12").  OAC_ENOMEM: out of memory.  Whatever was allocated stays in the
 * arena either way. */
int oac_decode(oac_ctx *ctx, oac_arena *arena,
               const ProtobufCMessageDescriptor *desc, const uint8_t *buf,
               size_t len, unsigned flags, ProtobufCMessage **out, bool *external,
               char *err, size_t err_size);

/* What oac_decode_ex learns on the way besides the tree. */
typedef struct oac_decode_nul {
    const char *s;                 /* the string as stored in the tree */
    struct oac_decode_nul *next;
} oac_decode_nul;
typedef struct oac_decode_facts {
    bool external;       /* a TensorProto has a data_location field */
    /* The strings whose bytes held a NUL (names, external-data
     * locations), so that the C string in the tree is only the text
     * before it; a list in the arena, NULL when none. */
    oac_decode_nul *nul;
} oac_decode_facts;

/* oac_decode, with everything it learns in *facts (filled on success). */
int oac_decode_ex(oac_ctx *ctx, oac_arena *arena,
                  const ProtobufCMessageDescriptor *desc, const uint8_t *buf,
                  size_t len, unsigned flags, ProtobufCMessage **out,
                  oac_decode_facts *facts, char *err, size_t err_size);

#endif /* OAC_DECODE_H */

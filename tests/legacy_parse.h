/* legacy_parse.h: the loader's former parser, a test oracle (legacy_parse.c). */
#ifndef OAC_TESTS_LEGACY_PARSE_H
#define OAC_TESTS_LEGACY_PARSE_H

#include <protobuf-c/protobuf-c.h>

#include "oac_int.h"

typedef struct legacy_tree legacy_tree;

/* Parse buf as desc the way lib/model/load.c did before lib/model/decode.c.  OAC_OK:
 * *msg_out lives in *tree (free with legacy_free).  OAC_EPARSE: err holds
 * the message without a file name.  OAC_ENOMEM: out of memory. */
int legacy_parse(oac_ctx *ctx, const ProtobufCMessageDescriptor *desc,
                 const uint8_t *buf, size_t len, legacy_tree **tree,
                 ProtobufCMessage **msg_out, bool *external,
                 char *err, size_t err_size);
void legacy_free(legacy_tree *t);

#endif /* OAC_TESTS_LEGACY_PARSE_H */

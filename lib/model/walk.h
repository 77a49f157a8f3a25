/* model/walk.h: the one walk over every message of a decoded protobuf,
 * guided by the protobuf-c descriptors.
 *
 * Owns oac_msg_walk: the generic depth-first visit of a message and every
 * message it holds (singular, repeated, the set member of a oneof), in
 * descriptor field order, so no container of tensors is missed as the
 * schema grows.  Users: model/extdata.c (every TensorProto of a model),
 * check/inputs.c (every tensor of an --input file).  Contract: section 1
 * (the model as protobuf-c structs), section 3 (a hostile file: bounded
 * recursion).
 *
 * Invariants:
 *  1. Only non-NULL messages are visited; enter is called before a
 *     message's fields, leave after them (also when enter skipped them;
 *     not once the walk stops).
 *  2. Recursion is bounded: a message at depth > OAC_MAX_DEPTH is entered
 *     (so the visitor can say so) but its fields are never walked.
 *  3. It reads the structs only; it allocates and reports nothing.
 */
#ifndef OAC_MODEL_WALK_H
#define OAC_MODEL_WALK_H

#include <protobuf-c/protobuf-c.h>

/* What enter returns besides a negative oac_status (which stops the
 * walk and is returned by it): */
enum {
    OAC_WALK_ON = 0,     /* walk the message's fields */
    OAC_WALK_SKIP = 1,   /* not its fields; go on with the next message */
    OAC_WALK_STOP = 2    /* stop; oac_msg_walk returns OAC_WALK_STOP */
};

typedef struct oac_msg_walker {
    /* Message m, held by field fd of its parent (NULL for the root) at
     * index (-1: a singular field), at depth (the root's as given). */
    int (*enter)(void *arg, const ProtobufCMessage *m,
                 const ProtobufCFieldDescriptor *fd, long index, int depth);
    /* After m's fields (optional), with enter's arguments. */
    void (*leave)(void *arg, const ProtobufCMessage *m,
                  const ProtobufCFieldDescriptor *fd, long index, int depth);
    void *arg;
} oac_msg_walker;

/* Walk m (NULL: nothing) and what it holds; OAC_OK (0), OAC_WALK_STOP,
 * or enter's negative status. */
int oac_msg_walk(const oac_msg_walker *w, const ProtobufCMessage *m, int depth);

#endif /* OAC_MODEL_WALK_H */

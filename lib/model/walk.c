/* model/walk.c: the descriptor walk of model/walk.h.
 *
 * Owns oac_msg_walk.  Contract: section 1 (every message of the file,
 * whatever the schema adds), section 3 (recursion bounded by
 * OAC_MAX_DEPTH).
 *
 * Invariants (model/walk.h): fields in descriptor order, repeated
 * elements in order, a oneof's field only when it is the set member;
 * no field below OAC_MAX_DEPTH; nothing allocated.
 */
#include <string.h>

#include "model/walk.h"
#include "oac_int.h"

static int visit(const oac_msg_walker *w, const ProtobufCMessage *m,
                 const ProtobufCFieldDescriptor *at, long index, int depth);

/* The message fields of m, each element visited at depth + 1. */
static int fields(const oac_msg_walker *w, const ProtobufCMessage *m, int depth)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    int rc = OAC_OK;
    for (unsigned f = 0; f < d->n_fields && rc == OAC_OK; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            uint32_t which;
            memcpy(&which, base + fd->quantifier_offset, sizeof which);
            if (which != fd->id)
                continue;
        }
        if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n;
            ProtobufCMessage **arr;
            memcpy(&n, base + fd->quantifier_offset, sizeof n);
            memcpy(&arr, base + fd->offset, sizeof arr);
            for (size_t j = 0; arr && j < n && rc == OAC_OK; j++)
                rc = visit(w, arr[j], fd, (long)j, depth + 1);
        } else {
            ProtobufCMessage *sub;
            memcpy(&sub, base + fd->offset, sizeof sub);
            rc = visit(w, sub, fd, -1, depth + 1);
        }
    }
    return rc;
}

static int visit(const oac_msg_walker *w, const ProtobufCMessage *m,
                 const ProtobufCFieldDescriptor *at, long index, int depth)
{
    if (!m)
        return OAC_OK;
    int rc = w->enter(w->arg, m, at, index, depth);
    if (rc < 0 || rc == OAC_WALK_STOP)
        return rc;
    if (rc != OAC_WALK_SKIP && depth <= OAC_MAX_DEPTH)
        rc = fields(w, m, depth);
    else
        rc = OAC_OK;
    if (w->leave && rc == OAC_OK)
        w->leave(w->arg, m, at, index, depth);
    return rc;
}

int oac_msg_walk(const oac_msg_walker *w, const ProtobufCMessage *m, int depth)
{
    return visit(w, m, NULL, -1, depth);
}

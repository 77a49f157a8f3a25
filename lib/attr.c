/* attr.c: a node's attributes, as every pass and kernel reads them.
 *
 * Owns oac_node_attr, oac_attr_int, oac_attr_float and oac_attr_string
 * (oac_int.h): the one reader of NodeProto.attribute for the checker's
 * rules (shapes, folding, capacity, plan) and the runtime's kernels, so
 * both read an attribute the same way.  Contract: section 2 (the cache
 * updates' attributes), section 6 (conditions on attributes).
 *
 * Invariants:
 *  1. The first attribute of that name wins (a repeated name is the
 *     file's problem, not a reason to read two values).
 *  2. An attribute of type INT or FLOAT whose value field is absent holds
 *     the field's default 0 (protobuf semantics); one of another type
 *     without the field gives the caller's default.
 *  3. Pure reads of the parsed model: no allocation, no state.
 */
#include <string.h>

#include "oac_int.h"

const Onnx__AttributeProto *oac_node_attr(const Onnx__NodeProto *n,
                                          const char *name)
{
    /* The first byte settles most misses without a call: the checker
     * asks for an attribute of every node it infers. */
    for (size_t i = 0; i < n->n_attribute; i++) {
        const char *an = n->attribute[i]->name;
        if (an && an[0] == name[0] && !strcmp(an, name))
            return n->attribute[i];
    }
    return NULL;
}

int64_t oac_attr_int(const Onnx__NodeProto *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = oac_node_attr(n, name);
    return a && (a->has_i || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
           ? a->i : def;
}

float oac_attr_float(const Onnx__NodeProto *n, const char *name, float def)
{
    const Onnx__AttributeProto *a = oac_node_attr(n, name);
    return a && (a->has_f || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
           ? a->f : def;
}

const char *oac_attr_string(const Onnx__NodeProto *n, const char *name,
                            const char *def, char *buf, size_t len)
{
    const Onnx__AttributeProto *a = oac_node_attr(n, name);
    if (!a || !a->has_s || !len)
        return def;
    size_t m = a->s.len < len - 1 ? a->s.len : len - 1;
    if (m)
        memcpy(buf, a->s.data, m);
    buf[m] = '\0';
    return buf;
}

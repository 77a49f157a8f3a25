/* ops.c: the operator table of ops.def and its lookups.
 *
 * Owns: the one place the project learns facts about operators (which
 * output aliases which input, capacity axis, position / values / page_id
 * ports, flags, and the shape inference, folding and kernel functions),
 * and the one predicate for the ONNX domain.  Contract: section 2,
 * section 3 "Details the rules rely on", section 5 (kernels).
 * Invariants: the table is const and rows are in ops.def order, so
 * oac_op_get(id) is an index; lookups are a short linear scan over the
 * rows with a first-character filter, O(1) in the size of the model
 * (graph.c keeps a per-scope cache in front of it).
 */
#include <string.h>

#include "op_fns.h"
#include "ops.h"

/* What a row does not say: no port, input counts unchecked.  Rows
 * override these with designated initializers, which is what GCC's
 * -Woverride-init (in -Wextra) and clang's -Winitializer-overrides
 * would flag: silenced for the table only. */
#define OAC_OP_DEFAULTS                                                   \
    .cond_port = -1, .length = { .port = -1, .seq_port = -1 },            \
    .position_port = -1, .values_port = -1, .page_id_port = -1,           \
    .min_inputs = -1, .max_inputs = -1

/* OAC_PAIRS({in, out}, ...): an OAC_AL_PAIRS row's pairs. */
#define OAC_PAIRS(...)                                                    \
    .alias = OAC_AL_PAIRS, .pairs = { __VA_ARGS__ },                      \
    .n_pairs = sizeof((oac_op_pair[]){ __VA_ARGS__ }) / sizeof(oac_op_pair)
/* OAC_LENGTH(kind, port, seq_port, seq_axis, plus): section 6's rule. */
#define OAC_LENGTH(kind, port, seq_port, seq_axis, plus)                  \
    { kind, port, seq_port, seq_axis, plus }

#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winitializer-overrides"
#elif defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#endif
static const oac_op table[OAC_OP_COUNT] = {
#define OAC_OP(id_, dom, op, ...)                                          \
    [OAC_OP_##id_] = { OAC_OP_DEFAULTS, .id = OAC_OP_##id_, .domain = dom, \
                       .op_type = op, __VA_ARGS__ },
#include "ops.def"
#undef OAC_OP
};
#if defined(__clang__)
#pragma clang diagnostic pop
#elif defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

bool oac_domain_is_onnx(const char *domain)
{
    return !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
}

const oac_op *oac_op_find(const char *domain, const char *op_type)
{
    if (!op_type || !*op_type)
        return NULL;
    bool onnx = oac_domain_is_onnx(domain);
    for (size_t i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *r = &table[i];
        if (r->op_type[0] != op_type[0] || strcmp(r->op_type, op_type) != 0)
            continue;
        if (oac_domain_is_onnx(r->domain) ? onnx
                                          : (!onnx && strcmp(r->domain, domain) == 0))
            return r;
    }
    return NULL;
}

bool oac_op_enum_ok(const oac_op *op, const char *value, size_t len)
{
    if (!op || !op->enum_attr)
        return true;
    for (const char *p = op->enum_values; *p;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && (len == 0 || memcmp(p, value, len) == 0))
            return true;
        if (!bar)
            break;
        p = bar + 1;
    }
    return false;
}

const oac_op *oac_op_get(oac_op_id id)
{
    return (unsigned)id < OAC_OP_COUNT ? &table[id] : NULL;
}

int oac_op_alias_input(const oac_op *op, size_t out, size_t n_in,
                       long num_scan_inputs)
{
    if (!op)
        return -1;
    switch (op->alias) {
    case OAC_AL_PAIRS:
        for (size_t k = 0; k < op->n_pairs; k++)
            if ((size_t)op->pairs[k].out == out && op->pairs[k].in >= 0 &&
                (size_t)op->pairs[k].in < n_in)
                return op->pairs[k].in;
        return -1;
    case OAC_AL_LOOP:
        /* Loop(M, cond, v_initial...) -> (v_final..., scan outputs...) */
        return n_in >= 2 && out < n_in - 2 && out <= (size_t)INT32_MAX - 2
                   ? (int)out + 2 : -1;
    case OAC_AL_SCAN: {
        /* Scan(state..., scan inputs...) -> (state..., scan outputs...) */
        if (num_scan_inputs < 0 || (size_t)num_scan_inputs > n_in)
            return -1;
        size_t n_state = n_in - (size_t)num_scan_inputs;
        return out < n_state && out <= INT32_MAX ? (int)out : -1;
    }
    default:
        return -1;
    }
}

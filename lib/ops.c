/* ops.c: the operator table of ops.def and its lookups.
 *
 * Owns: the one place the checker learns facts about operators (which
 * output aliases which input, capacity axis, position / values / page_id
 * ports, cache-update and no-storage-read flags).  Contract: section 2,
 * section 3 "Details the rules rely on".
 * Invariants: the table is const and rows are in ops.def order, so
 * oac_op_get(id) is an index; lookups are a short linear scan over ~20
 * rows with a first-character filter, O(1) in the size of the model.
 */
#include <string.h>

#include "ops.h"

static const oac_op table[OAC_OP_COUNT] = {
#define OAC_OP(id, dom, op, al, axa, axd, pos, val, page, mi, ma, fl, ea, ev) \
    { OAC_OP_##id, dom, op, al, axa, axd, pos, val, page, mi, ma, fl, ea, ev },
#include "ops.def"
#undef OAC_OP
};

static bool is_onnx(const char *d)
{
    return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

const oac_op *oac_op_find(const char *domain, const char *op_type)
{
    if (!op_type || !*op_type)
        return NULL;
    bool onnx = is_onnx(domain);
    for (size_t i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *r = &table[i];
        if (r->op_type[0] != op_type[0] || strcmp(r->op_type, op_type) != 0)
            continue;
        if (is_onnx(r->domain) ? onnx : (!onnx && strcmp(r->domain, domain) == 0))
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
    case OAC_AL_PORT0:
        return out == 0 && n_in > 0 ? 0 : -1;
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

/* ops.c: the operator table of ops.def and its lookups.
 *
 * Owns: the one place the project learns facts about operators (which
 * output aliases which input, capacity axis, position / values / page_id
 * ports, flags, and the shape inference, folding and kernel functions),
 * and the one predicate for the ONNX domain.  Contract: section 2,
 * section 3 "Details the rules rely on", section 5 (kernels).
 * Invariants: the table is const and rows are in ops.def order, so
 * oac_op_get(id) is an index; a lookup scans the rows' name lengths 8 at
 * a time and compares the names of equal length only: O(1) in the size
 * of the model (graph.c keeps a per-scope cache in front of it).
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

/* The length of each row's op_type, apart from the rows and padded to
 * whole words of 8 (the padding 0 matches no name): the scan compares 8
 * lengths per step before it reads any row's name. */
#define NAME_WORDS ((OAC_OP_COUNT + 7) / 8)
static const uint8_t name_len[NAME_WORDS * 8] = {
#define OAC_OP(id_, dom, op, ...) [OAC_OP_##id_] = sizeof(op) - 1,
#include "ops.def"
#undef OAC_OP
};

bool oac_domain_is_onnx(const char *domain)
{
    return !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
}

/* Is row i op_type in the domain asked for (onnx: the ONNX domain)? */
static bool row_matches(size_t i, const char *domain, bool onnx,
                        const char *op_type, size_t n)
{
    if (i >= OAC_OP_COUNT)
        return false;           /* padding */
    const oac_op *r = &table[i];
    if (r->op_type[0] != op_type[0] || memcmp(r->op_type, op_type, n) != 0)
        return false;
    return oac_domain_is_onnx(r->domain) ? onnx
                                         : !onnx && strcmp(r->domain, domain) == 0;
}

const oac_op *oac_op_find(const char *domain, const char *op_type)
{
    if (!op_type || !*op_type)
        return NULL;
    size_t n = strlen(op_type);
    if (n > UINT8_MAX)
        return NULL;
    bool onnx = oac_domain_is_onnx(domain);
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    for (size_t w = 0; w < NAME_WORDS; w++) {
        /* Byte k (from the low end) of x is row 8w+k's length. */
        uint64_t x;
        memcpy(&x, name_len + 8 * w, sizeof x);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        x = __builtin_bswap64(x);
#endif
        x ^= ones * n;                      /* a zero byte: that length */
        /* The high bit of each zero byte, and maybe of some above one (a
         * borrow): every candidate is compared in full, so a false one
         * costs only time. */
        uint64_t m = (x - ones) & ~x & highs;
        for (; m; m &= m - 1) {
            size_t i = 8 * w + (size_t)__builtin_ctzll(m) / 8;
            if (row_matches(i, domain, onnx, op_type, n))
                return &table[i];
        }
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

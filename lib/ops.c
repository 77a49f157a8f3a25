/* ops.c: the operator table of ops.def and its lookups.
 *
 * Owns: the one place the project learns facts about operators (which
 * output aliases which input, capacity axis, position / values / page_id
 * ports, flags, and the shape inference, folding and kernel functions),
 * and the one predicate for the ONNX domain; section 6's questions of a
 * node (which pairs it can state, whether a stated pair holds in place).
 * Contract: section 2, section 3 "Details the rules rely on", section 5
 * (kernels), section 6 (the table's pairs and conditions).
 * Invariants: the table is const and rows are in ops.def order, so
 * oac_op_get(id) is an index; a lookup scans the rows' name lengths 8 at
 * a time and compares the names of equal length only: O(1) in the size
 * of the model (check/graph.c keeps a per-scope cache in front of it).
 */
#include <string.h>

#include "onnx.pb-c.h"
#include "op_fns.h"
#include "ops.h"

/* What a row does not say: no port, input counts unchecked.  Rows
 * override these with designated initializers, which is what GCC's
 * -Woverride-init (in -Wextra) and clang's -Winitializer-overrides
 * would flag: silenced for the table only. */
#define OAC_OP_DEFAULTS                                                   \
    .cond_port = -1, .length = { .port = -1, .seq_port = -1 },            \
    .position_port = -1, .values_port = -1, .page_id_port = -1,           \
    .blocks = { -1, -1, -1 },                                             \
    .min_inputs = -1, .max_inputs = -1

/* OAC_PAIRS({in, out}, ...): an OAC_AL_PAIRS row's pairs. */
#define OAC_PAIRS(...)                                                    \
    .alias = OAC_AL_PAIRS, .pairs = { __VA_ARGS__ },                      \
    .n_pairs = sizeof((oac_op_pair[]){ __VA_ARGS__ }) / sizeof(oac_op_pair)
/* OAC_BLOCKS(table, past_seqlens, cu_seqlens): a block table's ports. */
#define OAC_BLOCKS(table_, past_, cu_) .blocks = { table_, past_, cu_ }
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

/* ---- section 6 ---------------------------------------------------------- */

static bool port_named(char **names, size_t n, int port)
{
    return port >= 0 && (size_t)port < n && names[port] && names[port][0];
}

bool oac_op_cond_holds(const oac_op *row, const Onnx__NodeProto *n)
{
    if (!row || !n)
        return false;
    switch (row->cond) {
    case OAC_COND_ALWAYS:
        return true;
    case OAC_COND_INPUT:
        return port_named(n->input, n->n_input, row->cond_port);
    case OAC_COND_ATTR:
        for (size_t a = 0; a < n->n_attribute; a++) {
            const Onnx__AttributeProto *at = n->attribute[a];
            if (!at || !at->name || strcmp(at->name, row->cond_attr) != 0)
                continue;
            bool is_int = at->has_type
                ? at->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT
                : at->has_i;
            return is_int && at->i == 1;
        }
        return false;
    default:
        return false;
    }
}

size_t oac_op_pairs(const oac_op *row, const Onnx__NodeProto *n,
                    oac_op_pair *out, size_t max)
{
    size_t count = 0;
    if (!row || !n || row->alias != OAC_AL_PAIRS)
        return 0;
    for (size_t k = 0; k < row->n_pairs; k++) {
        oac_op_pair p = row->pairs[k];
        if (!port_named(n->input, n->n_input, p.in) ||
            !port_named(n->output, n->n_output, p.out))
            continue;
        if (out && count < max)
            out[count] = p;
        count++;
    }
    return count;
}

oac_pair_verdict oac_op_pair_judge(const oac_op *row, const Onnx__NodeProto *n,
                                   int in, int out, const char **why)
{
    if (why)
        *why = NULL;
    if (!row || !n || !(row->flags & OAC_OPF_ALIAS_TABLE))
        return OAC_PAIR_UNVERIFIED;
    bool listed = false;
    for (size_t k = 0; k < row->n_pairs && row->alias == OAC_AL_PAIRS; k++)
        listed |= row->pairs[k].in == in && row->pairs[k].out == out;
    oac_pair_verdict v;
    if (row->cond == OAC_COND_NEVER)
        v = OAC_PAIR_GROWS;     /* listed or not: the output grows */
    else if (!listed)
        v = OAC_PAIR_NOT_IN_ROW;
    else if (!oac_op_cond_holds(row, n))
        v = OAC_PAIR_CONDITION;
    else
        return OAC_PAIR_IN_PLACE;
    if (why)
        *why = row->alias_hint;
    return v;
}

bool oac_op_pair_in_place(const oac_op *row, const Onnx__NodeProto *n,
                          size_t k, const char **why)
{
    if (why)
        *why = NULL;
    if (!row || !n || row->alias != OAC_AL_PAIRS || k >= row->n_pairs)
        return false;
    oac_op_pair p = row->pairs[k];
    if (!port_named(n->input, n->n_input, p.in) ||
        !port_named(n->output, n->n_output, p.out))
        return false;
    /* Rows off section 6's table (the cache updates of section 2) hold
     * their pairs as listed, under their condition. */
    if (!(row->flags & OAC_OPF_ALIAS_TABLE))
        return oac_op_cond_holds(row, n);
    return oac_op_pair_judge(row, n, p.in, p.out, why) == OAC_PAIR_IN_PLACE;
}

/* check_ops.c: lib/ops.c, lib/ops.def — the one operator table.
 * Contract section 2 (ports of CacheUpdate, PagedCacheUpdate,
 * TensorScatter), section 3 "Details" (Loop/Scan carried values,
 * Shape/Size read no storage, Constant, the ops known values fold
 * through, the ops alias-implied applies to), section 5 (kernels).
 *
 * The table is proved consistent row by row: one row per operator, every
 * field in range, every folding row also infers, lookups find each row
 * under every spelling of its domain and under no other spelling of its
 * name.  Which rows fold, read no storage or are cache updates is
 * checked against the contract's own lists, so a row that gains or
 * loses a column the contract fixes fails here.  That a named function
 * exists is the linker's business; what can fail is a row naming
 * another operator's kernel, which the distinct-kernel test catches.
 */
#include <ctype.h>

#include "harness.h"
#include "ops.h"

static bool same_domain(const char *a, const char *b)
{
    bool oa = oac_domain_is_onnx(a), ob = oac_domain_is_onnx(b);
    return oa || ob ? oa && ob : strcmp(a, b) == 0;
}

START_TEST(test_onnx_domain)
{
    ck_assert(oac_domain_is_onnx(NULL));
    ck_assert(oac_domain_is_onnx(""));
    ck_assert(oac_domain_is_onnx("ai.onnx"));
    ck_assert(!oac_domain_is_onnx("onnx_alias"));
    ck_assert(!oac_domain_is_onnx("ai.onnx.ml"));
    ck_assert(!oac_domain_is_onnx("ai.onn"));
    ck_assert(!oac_domain_is_onnx("AI.ONNX"));
}
END_TEST

START_TEST(test_lookup_domains)
{
    const oac_op *cu = oac_op_find("onnx_alias", "CacheUpdate");
    ck_assert_ptr_nonnull(cu);
    ck_assert_int_eq(cu->id, OAC_OP_CACHE_UPDATE);
    /* Domain matters: no CacheUpdate in the ONNX domain. */
    ck_assert_ptr_null(oac_op_find("", "CacheUpdate"));
    ck_assert_ptr_null(oac_op_find(NULL, "CacheUpdate"));
    ck_assert_ptr_null(oac_op_find("onnx_alias", "TensorScatter"));
    ck_assert_ptr_null(oac_op_find("com.microsoft", "Add"));
    /* "", NULL and "ai.onnx" are the ONNX domain. */
    ck_assert_ptr_eq(oac_op_find("", "TensorScatter"),
                     oac_op_get(OAC_OP_TENSOR_SCATTER));
    ck_assert_ptr_eq(oac_op_find(NULL, "Loop"), oac_op_get(OAC_OP_LOOP));
    ck_assert_ptr_eq(oac_op_find("ai.onnx", "Scan"), oac_op_get(OAC_OP_SCAN));
    ck_assert_ptr_null(oac_op_find("", "Conv"));
    ck_assert_ptr_null(oac_op_find("", ""));
    ck_assert_ptr_null(oac_op_find("", NULL));
    ck_assert_ptr_null(oac_op_find("", "cacheupdate"));
    ck_assert_ptr_null(oac_op_find("", "Ad"));
    ck_assert_ptr_null(oac_op_find("", "Addx"));
}
END_TEST

/* Every row is found under its own (domain, op_type), under every
 * spelling of the ONNX domain when it is an ONNX row and under none when
 * it is not, and not under its name with one letter's case flipped. */
START_TEST(test_lookup_every_row)
{
    for (int i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *op = oac_op_get((oac_op_id)i);
        ck_assert_ptr_nonnull(op);
        ck_assert_int_eq(op->id, i);
        ck_assert_ptr_eq(oac_op_find(op->domain, op->op_type), op);
        bool onnx = oac_domain_is_onnx(op->domain);
        ck_assert(onnx == (oac_op_find(NULL, op->op_type) == op));
        ck_assert(onnx == (oac_op_find("ai.onnx", op->op_type) == op));
        ck_assert(onnx == (oac_op_find("", op->op_type) == op));
        ck_assert(oac_op_find("x.other", op->op_type) != op);
        char flip[128];
        size_t n = strlen(op->op_type);
        ck_assert_uint_lt(n, sizeof flip);
        for (size_t k = 0; k < n; k++) {
            memcpy(flip, op->op_type, n + 1);
            unsigned char c = (unsigned char)flip[k];
            if (!isalpha(c))
                continue;
            flip[k] = (char)(isupper(c) ? tolower(c) : toupper(c));
            ck_assert_msg(oac_op_find(op->domain, flip) != op,
                          "%s found as %s", op->op_type, flip);
        }
    }
    ck_assert_ptr_null(oac_op_get(OAC_OP_COUNT));
}
END_TEST

START_TEST(test_one_row_per_operator)
{
    for (int i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *a = oac_op_get((oac_op_id)i);
        /* The ONNX domain is spelled "" in the table, so this holds. */
        ck_assert_msg(strcmp(a->domain, "ai.onnx") != 0, "%s", a->op_type);
        for (int j = i + 1; j < OAC_OP_COUNT; j++) {
            const oac_op *b = oac_op_get((oac_op_id)j);
            ck_assert_msg(!(same_domain(a->domain, b->domain) &&
                            strcmp(a->op_type, b->op_type) == 0),
                          "two rows for %s::%s", a->domain, a->op_type);
        }
    }
}
END_TEST

static void port_in_range(const oac_op *op, const char *what, int port)
{
    ck_assert_msg(port >= -1, "%s: %s %d", op->op_type, what, port);
    if (op->max_inputs >= 0)
        ck_assert_msg(port < op->max_inputs, "%s: %s %d past its %d inputs",
                      op->op_type, what, port, op->max_inputs);
}

START_TEST(test_fields_in_range)
{
    for (int i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *op = oac_op_get((oac_op_id)i);
        const char *t = op->op_type;
        /* A name tests/op_names.sh can search for as a C string. */
        ck_assert_ptr_nonnull(t);
        ck_assert(t[0] != '\0');
        for (const char *c = t; *c; c++)
            ck_assert_msg(isalnum((unsigned char)*c) || *c == '_', "%s", t);
        ck_assert_ptr_nonnull(op->domain);

        /* Input counts: both unchecked, or 0 <= min <= max. */
        ck_assert_msg((op->min_inputs < 0) == (op->max_inputs < 0), "%s", t);
        ck_assert_int_ge(op->min_inputs, -1);
        ck_assert_int_le(op->min_inputs, op->max_inputs);
        port_in_range(op, "position_port", op->position_port);
        port_in_range(op, "values_port", op->values_port);
        port_in_range(op, "page_id_port", op->page_id_port);
        port_in_range(op, "cond_port", op->cond_port);
        port_in_range(op, "length.port", op->length.port);
        port_in_range(op, "length.seq_port", op->length.seq_port);
        ck_assert_msg((op->enum_attr == NULL) == (op->enum_values == NULL), "%s", t);
        if (op->enum_values)
            ck_assert(oac_op_enum_ok(op, op->enum_values,
                                     strcspn(op->enum_values, "|")));

        /* Aliasing: pairs only on PAIRS rows, 1..MAX of them, one pair
         * per output; length rules and conditions other than NEVER (an
         * output that grows refuses any pair) only with pairs. */
        ck_assert_int_le(op->alias, OAC_AL_BRANCH);
        ck_assert_int_le(op->cond, OAC_COND_NEVER);
        if (op->alias == OAC_AL_PAIRS) {
            ck_assert_uint_ge(op->n_pairs, 1);
            ck_assert_uint_le(op->n_pairs, OAC_OP_MAX_PAIRS);
        } else {
            ck_assert_msg(op->n_pairs == 0, "%s", t);
            ck_assert_msg(op->cond == OAC_COND_ALWAYS || op->cond == OAC_COND_NEVER,
                          "%s", t);
            ck_assert_msg(op->length.kind == OAC_LEN_NONE, "%s", t);
        }
        for (size_t k = 0; k < op->n_pairs; k++) {
            ck_assert_int_ge(op->pairs[k].out, 0);
            ck_assert_int_ge(op->pairs[k].in, 0);
            port_in_range(op, "pair input", op->pairs[k].in);
            for (size_t m = k + 1; m < op->n_pairs; m++)
                ck_assert_msg(op->pairs[k].out != op->pairs[m].out, "%s", t);
        }
        ck_assert_msg(op->cond != OAC_COND_INPUT || op->cond_port >= 0, "%s", t);
        ck_assert_msg(op->cond != OAC_COND_ATTR || op->cond_attr, "%s", t);
        ck_assert_msg(op->length.kind != OAC_LEN_VALUE || op->length.port >= 0,
                      "%s", t);

        /* A cache update (contract 2) pairs output 0 with input 0 and
         * names its position and values ports inside its input range. */
        if (oac_op_has(op, OAC_OPF_CACHE_UPDATE)) {
            ck_assert_int_eq(op->alias, OAC_AL_PAIRS);
            ck_assert_int_eq(oac_op_alias_input(op, 0, (size_t)op->max_inputs, 0), 0);
            ck_assert_int_ge(op->position_port, 1);
            ck_assert_int_ge(op->values_port, 1);
            ck_assert_int_ne(op->position_port, op->values_port);
            ck_assert_int_ge(op->max_inputs, 1);
            /* "position + new_length > capacity is an error". */
            ck_assert_msg(op->capacity != NULL, "%s: no capacity rule", t);
        }
        ck_assert_msg(!oac_op_has(op, OAC_OPF_PAGED) ||
                      (oac_op_has(op, OAC_OPF_CACHE_UPDATE) && op->page_id_port >= 0),
                      "%s", t);

        /* Folding runs after inference and reads its output shape. */
        ck_assert_msg(!op->fold || op->infer, "%s folds but infers nothing", t);
    }
}
END_TEST

/* Each kernel implements one operator: a row naming another row's kernel
 * is a copy-paste slip the linker cannot see. */
START_TEST(test_kernels_distinct)
{
    for (int i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *a = oac_op_get((oac_op_id)i);
        if (!a->kernel)
            continue;
        for (int j = i + 1; j < OAC_OP_COUNT; j++)
            ck_assert_msg(oac_op_get((oac_op_id)j)->kernel != a->kernel,
                          "%s and %s share a kernel", a->op_type,
                          oac_op_get((oac_op_id)j)->op_type);
    }
}
END_TEST

/* Is op one of the names (ONNX domain unless it says otherwise)? */
static bool listed(const oac_op *op, const char *const *names, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (oac_op_find(op->domain, names[k]) == op)
            return true;
    return false;
}

#define N_OF(a) (sizeof (a) / sizeof (a)[0])

/* Contract 3: "A value is known when it is a Constant output, ... or the
 * result of Add, Sub, Mul, Neg, Min, Max, Identity, Cast, Squeeze,
 * Unsqueeze, Reshape over known values, or of Shape/Size ...  Nothing
 * else is folded."  Shape and Size read no storage; "constant" means a
 * Constant node's output; alias-implied applies to the three cache
 * updates of section 2. */
START_TEST(test_contract_lists)
{
    static const char *const folds[] = {
        "Constant", "Add", "Sub", "Mul", "Neg", "Min", "Max", "Identity",
        "Cast", "Squeeze", "Unsqueeze", "Reshape", "Shape", "Size",
    };
    static const char *const no_read[] = { "Shape", "Size" };
    static const char *const constant[] = { "Constant" };
    size_t n_fold = 0;
    for (int i = 0; i < OAC_OP_COUNT; i++) {
        const oac_op *op = oac_op_get((oac_op_id)i);
        bool onnx = oac_domain_is_onnx(op->domain);
        ck_assert_msg((op->fold != NULL) == (onnx && listed(op, folds, N_OF(folds))),
                      "%s: fold", op->op_type);
        n_fold += op->fold != NULL;
        ck_assert_msg(oac_op_has(op, OAC_OPF_NO_STORAGE_READ) ==
                      (onnx && listed(op, no_read, N_OF(no_read))),
                      "%s: no storage read", op->op_type);
        ck_assert_msg(oac_op_has(op, OAC_OPF_CONSTANT) ==
                      (onnx && listed(op, constant, N_OF(constant))),
                      "%s: constant", op->op_type);
        bool update = op == oac_op_find("onnx_alias", "CacheUpdate") ||
                      op == oac_op_find("onnx_alias", "PagedCacheUpdate") ||
                      op == oac_op_find("", "TensorScatter");
        ck_assert_msg(oac_op_has(op, OAC_OPF_CACHE_UPDATE) == update,
                      "%s: cache update", op->op_type);
    }
    ck_assert_uint_eq(n_fold, N_OF(folds));
    /* Control flow aliases through bodies (contract 3). */
    ck_assert_int_eq(oac_op_find("", "If")->alias, OAC_AL_BRANCH);
    ck_assert_int_eq(oac_op_find("", "Loop")->alias, OAC_AL_LOOP);
    ck_assert_int_eq(oac_op_find("", "Scan")->alias, OAC_AL_SCAN);
}
END_TEST

START_TEST(test_section2_ports)
{
    const oac_op *cu = oac_op_get(OAC_OP_CACHE_UPDATE);
    ck_assert_str_eq(cu->axis_attr, "axis");
    ck_assert_int_eq(cu->axis_default, -2);
    ck_assert_int_eq(cu->values_port, 1);
    ck_assert_int_eq(cu->position_port, 2);
    ck_assert_int_eq(cu->page_id_port, -1);
    ck_assert_int_eq(cu->min_inputs, 3);
    ck_assert_int_eq(cu->max_inputs, 3);
    const oac_op *pc = oac_op_get(OAC_OP_PAGED_CACHE_UPDATE);
    ck_assert_int_eq(pc->page_id_port, 1);
    ck_assert_int_eq(pc->values_port, 2);
    ck_assert_int_eq(pc->position_port, 3);
    ck_assert_ptr_null(pc->axis_attr);      /* always axis -2 */
    ck_assert_int_eq(pc->axis_default, -2);
    ck_assert(oac_op_has(pc, OAC_OPF_PAGED));
    ck_assert(!oac_op_has(cu, OAC_OPF_PAGED));
    const oac_op *ts = oac_op_get(OAC_OP_TENSOR_SCATTER);
    ck_assert_int_eq(ts->values_port, 1);
    ck_assert_int_eq(ts->position_port, 2);   /* write_indices */
    ck_assert_int_eq(ts->min_inputs, 2);      /* write_indices is optional */
    ck_assert_int_eq(ts->max_inputs, 3);
    /* Every row without a port says -1, not 0 (the default). */
    const oac_op *add = oac_op_find("", "Add");
    ck_assert_int_eq(add->position_port, -1);
    ck_assert_int_eq(add->values_port, -1);
    ck_assert_int_eq(add->page_id_port, -1);
    ck_assert_int_eq(add->min_inputs, -1);
    ck_assert_int_eq(add->alias, OAC_AL_NONE);
    ck_assert(!oac_op_has(NULL, OAC_OPF_CONSTANT));
    ck_assert(oac_op_enum_ok(ts, "linear", 6));
    ck_assert(oac_op_enum_ok(ts, "circular", 8));
    ck_assert(!oac_op_enum_ok(ts, "circ", 4));
    ck_assert(!oac_op_enum_ok(ts, "linearx", 7));
    ck_assert(!oac_op_enum_ok(ts, "", 0));
    ck_assert(oac_op_enum_ok(cu, "anything", 8));   /* no enum attribute */
}
END_TEST

START_TEST(test_alias_mapping)
{
    const oac_op *cu = oac_op_get(OAC_OP_CACHE_UPDATE);
    ck_assert_int_eq(oac_op_alias_input(cu, 0, 3, 0), 0);
    ck_assert_int_eq(oac_op_alias_input(cu, 1, 3, 0), -1);
    ck_assert_int_eq(oac_op_alias_input(cu, 0, 0, 0), -1);
    /* Loop(M, cond, a, b) -> (a', b', scan...): out i <- in i+2. */
    const oac_op *lp = oac_op_get(OAC_OP_LOOP);
    ck_assert_int_eq(oac_op_alias_input(lp, 0, 4, 0), 2);
    ck_assert_int_eq(oac_op_alias_input(lp, 1, 4, 0), 3);
    ck_assert_int_eq(oac_op_alias_input(lp, 2, 4, 0), -1);  /* a scan output */
    ck_assert_int_eq(oac_op_alias_input(lp, 0, 2, 0), -1);
    ck_assert_int_eq(oac_op_alias_input(lp, 0, 1, 0), -1);
    /* Scan(s0, s1, x) with num_scan_inputs 1: state i <- input i. */
    const oac_op *sc = oac_op_get(OAC_OP_SCAN);
    ck_assert_int_eq(oac_op_alias_input(sc, 0, 3, 1), 0);
    ck_assert_int_eq(oac_op_alias_input(sc, 1, 3, 1), 1);
    ck_assert_int_eq(oac_op_alias_input(sc, 2, 3, 1), -1);
    ck_assert_int_eq(oac_op_alias_input(sc, 0, 3, 4), -1);  /* malformed */
    ck_assert_int_eq(oac_op_alias_input(sc, 0, 3, -1), -1);
    ck_assert_int_eq(oac_op_alias_input(oac_op_get(OAC_OP_IF), 0, 1, 0), -1);
    ck_assert_int_eq(oac_op_alias_input(NULL, 0, 1, 0), -1);
    ck_assert_int_eq(oac_op_alias_input(oac_op_find("", "Add"), 0, 2, 0), -1);
}
END_TEST


/* ---- section 6: the table's rows as the checker applies them ----------
 *
 * For every row of contract section 6's table: a valid annotated model
 * and its broken twins, built from the operators' definitions (ONNX
 * Runtime's ContribOperators.md, ONNX's Operators.md; the ports below
 * are written from those pages, not read from ops.def, so a wrong row
 * fails here).  Caches are BNSH with capacity 16 on axis 2 (combined
 * [2, B, N, S, H]: axis 3). */

typedef struct io6 {
    const char *name;       /* "" = an omitted optional input */
    int32_t type;
    const char *dims;
} io6;

typedef struct row6 {
    const char *domain, *op, *node;
    io6 in[10];
    size_t n_in;
    io6 out[3];
    size_t n_out;
    int pin[2], pout[2];    /* past input -> present output */
    size_t n_pairs;
    int len_port;           /* the length input a twin makes known, or -1 */
    const char *cond_attr;  /* int attribute set to 1 when in place */
} row6;

#define F OAC_T_FLOAT
#define I32 OAC_T_INT32

static const row6 gqa6 = {
    "com.microsoft", "GroupQueryAttention", "gqa",
    { { "query", F, "1,1,8" }, { "key", F, "1,1,4" }, { "value", F, "1,1,4" },
      { "past_key", F, "1,1,16,4" }, { "past_value", F, "1,1,16,4" },
      { "seqlens_k", I32, "1" }, { "total_sequence_length", I32, "" } }, 7,
    { { "out", F, "1,1,8" }, { "present_key", F, "1,1,16,4" },
      { "present_value", F, "1,1,16,4" } }, 3,
    { 3, 4 }, { 1, 2 }, 2, 6, NULL
};
static const row6 mha6 = {
    "com.microsoft", "MultiHeadAttention", "mha",
    { { "query", F, "1,1,8" }, { "key", F, "1,1,8" }, { "value", F, "1,1,8" },
      { "", 0, NULL }, { "", 0, NULL }, { "", 0, NULL },
      { "past_key", F, "1,2,16,4" }, { "past_value", F, "1,2,16,4" },
      { "past_sequence_length", I32, "1" } }, 9,
    { { "out", F, "1,1,8" }, { "present_key", F, "1,2,16,4" },
      { "present_value", F, "1,2,16,4" } }, 3,
    { 6, 7 }, { 1, 2 }, 2, 8, NULL
};
static const row6 dmmha6 = {
    "com.microsoft", "DecoderMaskedMultiHeadAttention", "dmmha",
    { { "query", F, "1,1,8" }, { "key", F, "1,1,8" }, { "value", F, "1,1,8" },
      { "", 0, NULL }, { "", 0, NULL },
      { "past_key", F, "1,2,16,4" }, { "past_value", F, "1,2,16,4" },
      { "past_sequence_length", I32, "1" } }, 8,
    { { "out", F, "1,1,8" }, { "present_key", F, "1,2,16,4" },
      { "present_value", F, "1,2,16,4" } }, 3,
    { 5, 6 }, { 1, 2 }, 2, 7, "past_present_share_buffer"
};
static const row6 msattn6 = {
    "com.microsoft", "Attention", "attn",
    { { "input", F, "1,1,8" }, { "weights", F, "8,24" }, { "bias", F, "24" },
      { "", 0, NULL }, { "past", F, "2,1,2,16,4" }, { "", 0, NULL },
      { "past_sequence_length", I32, "1" } }, 7,
    { { "out", F, "1,1,8" }, { "present", F, "2,1,2,16,4" } }, 2,
    { 4, -1 }, { 1, -1 }, 1, 6, "past_present_share_buffer"
};
static const row6 paged6 = {
    "com.microsoft", "PagedAttention", "paged",
    { { "query", OAC_T_FLOAT16, "3,8" }, { "key", OAC_T_FLOAT16, "3,4" },
      { "value", OAC_T_FLOAT16, "3,4" },
      { "key_cache", OAC_T_FLOAT16, "4,16,1,4" },
      { "value_cache", OAC_T_FLOAT16, "4,16,1,4" },
      { "cumulative_sequence_length", I32, "2" }, { "past_seqlens", I32, "1" },
      { "block_table", I32, "1,4" } }, 8,
    { { "out", OAC_T_FLOAT16, "3,8" },
      { "key_cache_out", OAC_T_FLOAT16, "4,16,1,4" },
      { "value_cache_out", OAC_T_FLOAT16, "4,16,1,4" } }, 3,
    { 3, 4 }, { 1, 2 }, 2, -1, NULL
};
static const row6 sparse6 = {
    "com.microsoft", "SparseAttention", "sparse",
    { { "query", F, "1,1,8" }, { "key", F, "1,1,4" }, { "value", F, "1,1,4" },
      { "past_key", F, "1,1,16,4" }, { "past_value", F, "1,1,16,4" },
      { "block_row_indices", I32, "1,2" }, { "block_col_indices", I32, "1,1" },
      { "total_sequence_length", I32, "1" },
      { "key_total_sequence_lengths", I32, "1" } }, 9,
    { { "out", F, "1,1,8" }, { "present_key", F, "1,1,16,4" },
      { "present_value", F, "1,1,16,4" } }, 3,
    { 3, 4 }, { 1, 2 }, 2, 7, NULL
};

typedef enum v6 {
    V6_ANNOTATED,   /* every pair declared, past READ_WRITE, alias_of */
    V6_STOCK,       /* as exported: no annotation */
    V6_HALF,        /* only the first pair declared */
    V6_WRONG,       /* the first present declared on input 0 */
    V6_NO_COND      /* annotated, but the condition's input / attribute
                       is missing */
} v6;

/* r's model in variant v; len >= 0 makes the length input a known
 * initializer of that value (INT32). */
static void build6(oac_mb *mb, const row6 *r, v6 v, int32_t len)
{
    oac_mb_opset(mb, r->domain, 1);
    oac_gb *g = oac_mb_graph(mb);
    char ins[512] = "", outs[256] = "";
    size_t n_in = r->n_in;
    if (v == V6_NO_COND && !r->cond_attr && r->len_port == (int)n_in - 1)
        n_in--;                     /* drop the condition input (MHA 8) */
    for (size_t k = 0; k < n_in; k++) {
        const io6 *x = &r->in[k];
        strcat(ins, k ? "," : "");
        strcat(ins, x->name);
        if (!x->name[0])
            continue;
        if ((int)k == r->len_port && len >= 0) {
            oac_gb_init_raw(g, x->name, I32, x->dims, &len, sizeof len);
            continue;
        }
        Onnx__ValueInfoProto *vi = oac_gb_input(g, x->name, x->type, x->dims);
        bool past = (int)k == r->pin[0] || (r->n_pairs > 1 && (int)k == r->pin[1]);
        bool declared = (v == V6_ANNOTATED || v == V6_NO_COND) ||
                        ((v == V6_HALF || v == V6_WRONG) && (int)k == r->pin[0]);
        if (past && declared)
            oac_vi_access(g, vi, 1);
    }
    for (size_t k = 0; k < r->n_out; k++) {
        strcat(outs, k ? "," : "");
        strcat(outs, r->out[k].name);
    }
    Onnx__NodeProto *n = oac_gb_node(g, r->op, r->domain, r->node, ins, outs);
    if (r->cond_attr)
        oac_node_attr_int(g, n, r->cond_attr, v == V6_NO_COND ? 0 : 1);
    for (size_t k = 0; k < r->n_pairs; k++) {
        bool declared = v == V6_ANNOTATED || v == V6_NO_COND ||
                        ((v == V6_HALF || v == V6_WRONG) && k == 0);
        if (declared)
            oac_node_alias(g, n, r->pout[k], v == V6_WRONG ? 0 : r->pin[k], 1);
    }
    for (size_t k = 0; k < r->n_out; k++) {
        const io6 *x = &r->out[k];
        Onnx__ValueInfoProto *vi = oac_gb_output(g, x->name, x->type, x->dims);
        for (size_t p = 0; p < r->n_pairs; p++) {
            bool declared = v == V6_ANNOTATED || v == V6_NO_COND ||
                            ((v == V6_HALF || v == V6_WRONG) && p == 0);
            if ((int)k == r->pout[p] && declared)
                oac_vi_alias_of(g, vi, r->in[r->pin[p]].name);
        }
    }
}

#define M6(fn, row, v, len) \
    static void fn(oac_mb *mb) { build6(mb, &(row), (v), (len)); }
M6(gqa_annotated, gqa6, V6_ANNOTATED, -1)
M6(gqa_stock, gqa6, V6_STOCK, -1)
M6(gqa_half, gqa6, V6_HALF, -1)
M6(gqa_wrong, gqa6, V6_WRONG, -1)
M6(gqa_total_17, gqa6, V6_ANNOTATED, 17)
M6(gqa_total_16, gqa6, V6_ANNOTATED, 16)
M6(gqa_stock_total_17, gqa6, V6_STOCK, 17)   /* present = the past's 16 */
M6(gqa_stock_total_16, gqa6, V6_STOCK, 16)
M6(mha_annotated, mha6, V6_ANNOTATED, -1)
M6(mha_stock, mha6, V6_STOCK, -1)
M6(mha_half, mha6, V6_HALF, -1)
M6(mha_no_past_len, mha6, V6_NO_COND, -1)
M6(mha_past_16, mha6, V6_ANNOTATED, 16)
M6(mha_past_15, mha6, V6_ANNOTATED, 15)
M6(dmmha_annotated, dmmha6, V6_ANNOTATED, -1)
M6(dmmha_stock, dmmha6, V6_STOCK, -1)
M6(dmmha_unshared, dmmha6, V6_NO_COND, -1)
M6(dmmha_wrong, dmmha6, V6_WRONG, -1)
M6(dmmha_past_16, dmmha6, V6_ANNOTATED, 16)
M6(dmmha_past_15, dmmha6, V6_ANNOTATED, 15)
M6(msattn_annotated, msattn6, V6_ANNOTATED, -1)
M6(msattn_stock, msattn6, V6_STOCK, -1)
M6(msattn_unshared, msattn6, V6_NO_COND, -1)
M6(msattn_wrong, msattn6, V6_WRONG, -1)
M6(msattn_past_16, msattn6, V6_ANNOTATED, 16)
M6(msattn_past_15, msattn6, V6_ANNOTATED, 15)
M6(paged_annotated, paged6, V6_ANNOTATED, -1)
M6(paged_stock, paged6, V6_STOCK, -1)
M6(paged_half, paged6, V6_HALF, -1)
M6(sparse_annotated, sparse6, V6_ANNOTATED, -1)
M6(sparse_stock, sparse6, V6_STOCK, -1)
M6(sparse_half, sparse6, V6_HALF, -1)
M6(sparse_total_17, sparse6, V6_ANNOTATED, 17)
M6(sparse_stock_total_17, sparse6, V6_STOCK, 17)
M6(sparse_total_16, sparse6, V6_ANNOTATED, 16)

static const model_case kv_cases[] = {
    /* GroupQueryAttention: 3->1, 4->2, always; total_sequence_length. */
    { "gqa_stock", gqa_stock, WANT(OAC_ALIAS_IMPLIED), "gqa", "present_key",
      "/graph/node/0" },
    { "gqa_annotated", gqa_annotated, NEAR(OAC_ALIAS_IMPLIED) },
    { "gqa_half", gqa_half, WANT(OAC_ALIAS_UNSUPPORTED), "gqa", "present_key",
      "/graph/node/0/output_alias/0" },
    { "gqa_wrong", gqa_wrong, WANT(OAC_ALIAS_UNSUPPORTED), "gqa", "present_key",
      "/graph/node/0/output_alias/0" },
    { "gqa_annotated", gqa_annotated, NEAR(OAC_ALIAS_UNSUPPORTED) },
    { "gqa_total_17", gqa_total_17, WANT(OAC_CAPACITY_OVERFLOW), "gqa",
      "past_key", "/graph/node/0/input/6" },
    { "gqa_total_16", gqa_total_16, NEAR(OAC_CAPACITY_OVERFLOW) },
    /* Unannotated, the present declared with the past's 16 positions (one
     * buffer, as the caller binds it): the same rule (its near miss at
     * 16 keeps its alias-implied warnings: test_gqa_stock_forms). */
    { "gqa_stock_total_17", gqa_stock_total_17, WANT(OAC_CAPACITY_OVERFLOW), "gqa",
      "past_key", "/graph/node/0/input/6" },
    /* MultiHeadAttention: 6->1, 7->2 when input 8 is present. */
    { "mha_stock", mha_stock, WANT(OAC_ALIAS_IMPLIED), "mha", "present_key",
      "/graph/node/0" },
    { "mha_annotated", mha_annotated, NEAR(OAC_ALIAS_IMPLIED) },
    { "mha_no_past_len", mha_no_past_len, WANT(OAC_ALIAS_UNSUPPORTED), "mha",
      "present_key", "/graph/node/0/output_alias/0" },
    { "mha_half", mha_half, WANT(OAC_ALIAS_UNSUPPORTED), "mha", "present_key",
      "/graph/node/0/output_alias/0" },
    { "mha_annotated", mha_annotated, NEAR(OAC_ALIAS_UNSUPPORTED) },
    { "mha_past_16", mha_past_16, WANT(OAC_CAPACITY_OVERFLOW), "mha",
      "past_key", "/graph/node/0/input/8" },
    { "mha_past_15", mha_past_15, NEAR(OAC_CAPACITY_OVERFLOW) },
    /* DecoderMaskedMultiHeadAttention: 5->1, 6->2 with
     * past_present_share_buffer = 1; input 7 + 1. */
    { "dmmha_stock", dmmha_stock, WANT(OAC_ALIAS_IMPLIED), "dmmha",
      "present_key", "/graph/node/0" },
    { "dmmha_annotated", dmmha_annotated, NEAR(OAC_ALIAS_IMPLIED) },
    { "dmmha_unshared", dmmha_unshared, WANT(OAC_ALIAS_UNSUPPORTED), "dmmha",
      "present_key", "/graph/node/0/output_alias/0" },
    { "dmmha_wrong", dmmha_wrong, WANT(OAC_ALIAS_UNSUPPORTED), "dmmha",
      "present_key", "/graph/node/0/output_alias/0" },
    { "dmmha_past_16", dmmha_past_16, WANT(OAC_CAPACITY_OVERFLOW), "dmmha",
      "past_key", "/graph/node/0/input/7" },
    { "dmmha_past_15", dmmha_past_15, NEAR(OAC_CAPACITY_OVERFLOW) },
    /* com.microsoft Attention: 4->1 combined, past_present_share_buffer;
     * input 6 + sequence length, capacity on axis 3. */
    { "msattn_stock", msattn_stock, WANT(OAC_ALIAS_IMPLIED), "attn",
      "present", "/graph/node/0" },
    { "msattn_annotated", msattn_annotated, NEAR(OAC_ALIAS_IMPLIED) },
    { "msattn_unshared", msattn_unshared, WANT(OAC_ALIAS_UNSUPPORTED), "attn",
      "present", "/graph/node/0/output_alias/0" },
    { "msattn_wrong", msattn_wrong, WANT(OAC_ALIAS_UNSUPPORTED), "attn",
      "present", "/graph/node/0/output_alias/0" },
    { "msattn_past_16", msattn_past_16, WANT(OAC_CAPACITY_OVERFLOW), "attn",
      "past", "/graph/node/0/input/6" },
    { "msattn_past_15", msattn_past_15, NEAR(OAC_CAPACITY_OVERFLOW) },
    /* PagedAttention: 3->1, 4->2, always; length unchecked. */
    { "paged_stock", paged_stock, WANT(OAC_ALIAS_IMPLIED), "paged",
      "key_cache_out", "/graph/node/0" },
    { "paged_annotated", paged_annotated, NEAR(OAC_ALIAS_IMPLIED) },
    { "paged_half", paged_half, WANT(OAC_ALIAS_UNSUPPORTED), "paged",
      "key_cache_out", "/graph/node/0/output_alias/0" },
    /* SparseAttention: 3->1, 4->2, always; total_sequence_length (7),
     * checked with or without output_alias (one buffer by definition). */
    { "sparse_stock", sparse_stock, WANT(OAC_ALIAS_IMPLIED), "sparse",
      "present_key", "/graph/node/0" },
    { "sparse_annotated", sparse_annotated, NEAR(OAC_ALIAS_IMPLIED) },
    { "sparse_half", sparse_half, WANT(OAC_ALIAS_UNSUPPORTED), "sparse",
      "present_key", "/graph/node/0/output_alias/0" },
    { "sparse_total_17", sparse_total_17, WANT(OAC_CAPACITY_OVERFLOW),
      "sparse", "past_key", "/graph/node/0/input/7" },
    { "sparse_stock_total_17", sparse_stock_total_17,
      WANT(OAC_CAPACITY_OVERFLOW), "sparse", "past_key",
      "/graph/node/0/input/7" },
    { "sparse_total_16", sparse_total_16, NEAR(OAC_CAPACITY_OVERFLOW) },
};
CASES_TEST(kv_cases)


/* Stock forms whose condition fails (no past_sequence_length, no
 * past_present_share_buffer): the present grows, nothing can be shared,
 * nothing is implied (the real GPT-2 Attention decoder's form). */
static void mha_stock_no_past_len(oac_mb *mb)
{
    row6 r = mha6;
    r.n_in = 8;                 /* inputs 0..7: no past_sequence_length */
    r.out[1].dims = r.out[2].dims = "1,2,17,4";
    build6(mb, &r, V6_STOCK, -1);
}

static void msattn_stock_unshared(oac_mb *mb)
{
    row6 r = msattn6;
    r.cond_attr = NULL;         /* past_present_share_buffer absent */
    r.n_in = 5;
    r.out[1].dims = "2,1,2,17,4";
    build6(mb, &r, V6_STOCK, -1);
}

/* ---- the ONNX rows: ScatterND, ScatterElements, Identity, and the
 * never-in-place Concat, Pad, Attention (opset 23+). */

/* data (READ_WRITE when annotated) [4,3]; out = Scatter*(data, idx, upd). */
static void scatter6(oac_mb *mb, const char *op, bool annotate, int in,
                     const int64_t *idx, const char *idx_dims, size_t n_idx,
                     const char *upd_dims)
{
    oac_gb *g = oac_mb_graph(mb);
    Onnx__ValueInfoProto *d = oac_gb_input(g, "data", F, "4,3");
    if (annotate)
        oac_vi_access(g, d, 1);
    oac_gb_input(g, "updates", F, upd_dims);
    oac_gb_init_i64(g, "indices", idx_dims, idx, n_idx);
    Onnx__NodeProto *n = oac_gb_node(g, op, NULL, "scatter",
                                     "data,indices,updates", "out");
    if (annotate)
        oac_node_alias(g, n, 0, in, 1);
    Onnx__ValueInfoProto *o = oac_gb_output(g, "out", F, "4,3");
    if (annotate && in == 0)
        oac_vi_alias_of(g, o, "data");
}

static const int64_t nd_ok[] = { 3, -4 }, nd_bad[] = { 3, 4 };
static const int64_t el_ok[] = { 0, 3, -4 }, el_bad[] = { 0, 3, 4 };
static void nd_annotated(oac_mb *mb) { scatter6(mb, "ScatterND", true, 0, nd_ok, "2,1", 2, "2,3"); }
static void nd_stock(oac_mb *mb) { scatter6(mb, "ScatterND", false, 0, nd_ok, "2,1", 2, "2,3"); }
static void nd_index_4(oac_mb *mb) { scatter6(mb, "ScatterND", true, 0, nd_bad, "2,1", 2, "2,3"); }
static void nd_on_updates(oac_mb *mb) { scatter6(mb, "ScatterND", true, 2, nd_ok, "2,1", 2, "2,3"); }
static void el_annotated(oac_mb *mb) { scatter6(mb, "ScatterElements", true, 0, el_ok, "1,3", 3, "1,3"); }
static void el_stock(oac_mb *mb) { scatter6(mb, "ScatterElements", false, 0, el_ok, "1,3", 3, "1,3"); }
static void el_index_4(oac_mb *mb) { scatter6(mb, "ScatterElements", true, 0, el_bad, "1,3", 3, "1,3"); }
static void el_on_indices(oac_mb *mb) { scatter6(mb, "ScatterElements", true, 1, el_ok, "1,3", 3, "1,3"); }

/* x (READ_WRITE) -> Identity -> y, alias_of x. */
static void identity_annotated(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_vi_access(g, oac_gb_input(g, "x", F, "1,2,16,4"), 1);
    oac_node_alias(g, oac_gb_node(g, "Identity", NULL, "id", "x", "y"), 0, 0, 1);
    oac_vi_alias_of(g, oac_gb_output(g, "y", F, "1,2,16,4"), "x");
}

/* present = Concat(past, new) on axis 2 (or Pad by one row): it grows;
 * annotated, output_alias {0, 0} and the past READ_WRITE. */
static void grows6(oac_mb *mb, bool pad, bool annotate)
{
    oac_gb *g = oac_mb_graph(mb);
    Onnx__ValueInfoProto *p = oac_gb_input(g, "past", F, "1,2,16,4");
    if (annotate)
        oac_vi_access(g, p, 1);
    Onnx__NodeProto *n;
    if (pad) {
        static const int64_t pads[] = { 0, 0, 0, 0, 0, 0, 1, 0 };
        oac_gb_init_i64(g, "pads", "8", pads, 8);
        n = oac_gb_node(g, "Pad", NULL, "grow", "past,pads", "present");
    } else {
        oac_gb_input(g, "new", F, "1,2,1,4");
        n = oac_gb_node(g, "Concat", NULL, "grow", "past,new", "present");
        oac_node_attr_int(g, n, "axis", 2);
    }
    if (annotate)
        oac_node_alias(g, n, 0, 0, 1);
    oac_gb_output(g, "present", F, "1,2,17,4");
}
static void concat_annotated(oac_mb *mb) { grows6(mb, false, true); }
static void concat_stock(oac_mb *mb) { grows6(mb, false, false); }
static void pad_annotated(oac_mb *mb) { grows6(mb, true, true); }
static void pad_stock(oac_mb *mb) { grows6(mb, true, false); }

/* ONNX Attention (opset 23), 4-D: present = past ++ new. */
static void onnx_attention(oac_mb *mb, bool annotate)
{
    oac_mb_opset(mb, "", 23);
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "Q", F, "1,2,1,4");
    oac_gb_input(g, "K", F, "1,2,1,4");
    oac_gb_input(g, "V", F, "1,2,1,4");
    Onnx__ValueInfoProto *pk = oac_gb_input(g, "past_key", F, "1,2,16,4");
    Onnx__ValueInfoProto *pv = oac_gb_input(g, "past_value", F, "1,2,16,4");
    Onnx__NodeProto *n = oac_gb_node(g, "Attention", NULL, "attn",
                                     "Q,K,V,,past_key,past_value",
                                     "Y,present_key,present_value");
    if (annotate) {
        oac_vi_access(g, pk, 1);
        oac_vi_access(g, pv, 1);
        oac_node_alias(g, n, 1, 4, 1);
        oac_node_alias(g, n, 2, 5, 1);
    }
    oac_gb_output(g, "Y", F, "1,2,1,4");
    oac_gb_output(g, "present_key", F, "1,2,17,4");
    oac_gb_output(g, "present_value", F, "1,2,17,4");
}
static void attention_annotated(oac_mb *mb) { onnx_attention(mb, true); }
static void attention_stock(oac_mb *mb) { onnx_attention(mb, false); }

static const model_case onnx_cases[] = {
    { "mha_stock_no_past_len", mha_stock_no_past_len, WANT(OAC_CACHE_COPIED), "mha",
      "present_key", "/graph/node/0" },
    { "msattn_stock_unshared", msattn_stock_unshared, WANT(OAC_CACHE_COPIED), "attn",
      "present", "/graph/node/0" },
    /* ScatterND: 0->0, indices inside the data. */
    { "nd_annotated", nd_annotated, NEAR(OAC_CAPACITY_OVERFLOW) },
    { "nd_index_4", nd_index_4, WANT(OAC_CAPACITY_OVERFLOW), "scatter", "data",
      "/graph/node/0/input/1" },
    { "nd_on_updates", nd_on_updates, WANT(OAC_ALIAS_UNSUPPORTED), "scatter",
      "out", "/graph/node/0/output_alias/0" },
    { "nd_stock", nd_stock, NEAR(OAC_ALIAS_IMPLIED) },
    /* ScatterElements: 0->0, indices inside dim `axis` (0). */
    { "el_annotated", el_annotated, NEAR(OAC_ALIAS_UNSUPPORTED) },
    { "el_index_4", el_index_4, WANT(OAC_CAPACITY_OVERFLOW), "scatter", "data",
      "/graph/node/0/input/1" },
    { "el_on_indices", el_on_indices, WANT(OAC_ALIAS_UNSUPPORTED), "scatter",
      "out", "/graph/node/0/output_alias/0" },
    { "el_stock", el_stock, NEAR(OAC_ALIAS_IMPLIED) },
    /* Identity: 0->0, always. */
    { "identity_annotated", identity_annotated, NEAR(OAC_ALIAS_UNSUPPORTED) },
    /* Never in place: Concat, Pad, ONNX Attention. */
    { "concat_annotated", concat_annotated, WANT(OAC_ALIAS_UNSUPPORTED),
      "grow", "present", "/graph/node/0/output_alias/0" },
    { "concat_stock", concat_stock, WANT(OAC_CACHE_COPIED), "grow", "present",
      "/graph/node/0" },
    { "pad_annotated", pad_annotated, WANT(OAC_ALIAS_UNSUPPORTED), "grow",
      "present", "/graph/node/0/output_alias/0" },
    { "pad_stock", pad_stock, WANT(OAC_CACHE_COPIED), "grow", "present",
      "/graph/node/0" },
    { "attention_annotated", attention_annotated, WANT(OAC_ALIAS_UNSUPPORTED),
      "attn", "present_key", "/graph/node/0/output_alias/0" },
    { "attention_stock", attention_stock, WANT(OAC_CACHE_COPIED), "attn",
      "present_key", "/graph/node/0" },
};
CASES_TEST(onnx_cases)

/* A stock growing update (no output_alias) is a copied cache: its pair
 * is cache-copied, and nothing else (no alias-implied: it cannot share;
 * no alias-unsupported: nothing is declared). */
static const model_fn stock_growing[] = {
    mha_stock_no_past_len, msattn_stock_unshared, concat_stock, pad_stock, attention_stock,
};

START_TEST(test_stock_growing_copied)
{
    fx f;
    fx_check_model(&f, stock_growing[_i]);
    ck_assert_msg(diag_count(f.d, OAC_CACHE_COPIED) >= 1 &&
                  oac_diags_count_severity(f.d, OAC_SEV_ERROR) == 0 &&
                  oac_diags_count_severity(f.d, OAC_SEV_WARNING) ==
                      diag_count(f.d, OAC_CACHE_COPIED), "%s", diag_dump(f.d));
    for (size_t i = 0; i < oac_analysis_kv_count(f.a); i++)
        ck_assert_int_eq(oac_analysis_kv(f.a, i)->verdict, OAC_KV_COPIED);
    fx_end(&f);
}
END_TEST

/* What a refusal reports is the refusal only: the present's alias_of
 * (which names the refused input) is not also alias-unbacked, nothing
 * is implied, and both pairs of MultiHeadAttention are refused. */
START_TEST(test_refusal_no_cascade)
{
    fx f;
    fx_check_model(&f, mha_no_past_len);
    ck_assert_msg(diag_count(f.d, OAC_ALIAS_UNSUPPORTED) == 2, "%s", diag_dump(f.d));
    ck_assert_msg(oac_diags_count_severity(f.d, OAC_SEV_ERROR) == 2 && oac_diags_count_severity(f.d, OAC_SEV_WARNING) == 0,
                  "%s", diag_dump(f.d));
    const oac_diag *x = diag_expect(f.d, OAC_ALIAS_UNSUPPORTED, "mha",
                                    "present_value", "/graph/node/0/output_alias/1");
    ck_assert_ptr_nonnull(strstr(x->message, "past_sequence_length"));
    ck_assert_ptr_nonnull(strstr(x->message, "GroupQueryAttention"));
    fx_end(&f);

    fx_check_model(&f, gqa_half);
    ck_assert_msg(oac_diags_count_severity(f.d, OAC_SEV_ERROR) == 1 && oac_diags_count_severity(f.d, OAC_SEV_WARNING) == 0,
                  "%s", diag_dump(f.d));
    x = diag_expect(f.d, OAC_ALIAS_UNSUPPORTED, "gqa", "present_key", NULL);
    ck_assert_ptr_nonnull(strstr(x->message, "present_value"));
    fx_end(&f);

    fx_check_model(&f, concat_annotated);
    ck_assert_msg(oac_diags_count_severity(f.d, OAC_SEV_ERROR) == 1, "%s", diag_dump(f.d));
    x = diag_expect(f.d, OAC_ALIAS_UNSUPPORTED, "grow", "present", NULL);
    ck_assert_ptr_nonnull(strstr(x->message, "TensorScatter"));
    fx_end(&f);

    fx_check_model(&f, attention_annotated);
    ck_assert_msg(diag_count(f.d, OAC_ALIAS_UNSUPPORTED) == 2, "%s", diag_dump(f.d));
    x = diag_expect(f.d, OAC_ALIAS_UNSUPPORTED, "attn", "present_value", NULL);
    ck_assert_ptr_nonnull(strstr(x->message, "nonpad_kv_seqlen"));
    fx_end(&f);
}
END_TEST

/* alias-implied names the pair and suggests annotate, once per pair. */
START_TEST(test_implied_message)
{
    fx f;
    fx_check_model(&f, gqa_stock);
    ck_assert_uint_eq(diag_count(f.d, OAC_ALIAS_IMPLIED), 2);
    ck_assert_msg(oac_diags_count_severity(f.d, OAC_SEV_ERROR) == 0, "%s", diag_dump(f.d));
    const oac_diag *x = diag_expect(f.d, OAC_ALIAS_IMPLIED, "gqa",
                                    "present_value", "/graph/node/0");
    ck_assert_ptr_nonnull(strstr(x->message, "{output 2, input 4, MUST_ALIAS}"));
    ck_assert_ptr_nonnull(strstr(x->message, "past_value"));
    ck_assert_ptr_nonnull(strstr(x->message, "onnx-alias-check annotate"));
    fx_end(&f);
}
END_TEST

/* The API annotate traces through: pairs a node names, verdicts. */
START_TEST(test_pair_api)
{
    fx f;
    fx_build(&f, NULL);
    mha_no_past_len(f.mb);
    const Onnx__GraphProto *gp = oac_gb_proto(f.g);
    const Onnx__NodeProto *n = gp->node[0];
    const oac_op *mha = oac_op_find(n->domain, n->op_type);
    ck_assert_ptr_eq(mha, oac_op_get(OAC_OP_MULTI_HEAD_ATTENTION));
    oac_op_pair pairs[2];
    ck_assert_uint_eq(oac_op_pairs(mha, n, pairs, 2), 2);
    ck_assert_int_eq(pairs[0].in, 6);
    ck_assert_int_eq(pairs[0].out, 1);
    ck_assert_int_eq(pairs[1].in, 7);
    ck_assert_int_eq(pairs[1].out, 2);
    ck_assert_uint_eq(oac_op_pairs(mha, n, NULL, 0), 2);
    const char *why = NULL;
    ck_assert_int_eq(oac_op_pair_judge(mha, n, 6, 1, &why), OAC_PAIR_CONDITION);
    ck_assert_ptr_eq(why, mha->alias_hint);
    ck_assert(!oac_op_pair_in_place(mha, n, 0, &why));
    ck_assert_int_eq(oac_op_pair_judge(mha, n, 0, 1, &why), OAC_PAIR_NOT_IN_ROW);
    ck_assert_int_eq(oac_op_pair_judge(oac_op_get(OAC_OP_CONCAT), n, 0, 0, &why),
                     OAC_PAIR_GROWS);
    ck_assert_int_eq(oac_op_pair_judge(oac_op_find("", "Add"), n, 0, 0, &why),
                     OAC_PAIR_UNVERIFIED);
    ck_assert_ptr_null(why);
    ck_assert_int_eq(oac_op_pair_judge(NULL, n, 0, 0, NULL), OAC_PAIR_UNVERIFIED);
    fx_end(&f);

    fx_build(&f, NULL);
    mha_annotated(f.mb);
    n = oac_gb_proto(f.g)->node[0];
    ck_assert_int_eq(oac_op_pair_judge(mha, n, 7, 2, &why), OAC_PAIR_IN_PLACE);
    ck_assert_ptr_null(why);
    ck_assert(oac_op_pair_in_place(mha, n, 1, NULL));
    ck_assert(!oac_op_pair_in_place(mha, n, 2, NULL));
    fx_end(&f);

    /* The section-2 updates hold their 0->0 (annotate traces them). */
    fx_build(&f, NULL);
    cu_dense(f.mb);
    n = oac_gb_proto(f.g)->node[0];
    ck_assert(oac_op_pair_in_place(oac_op_get(OAC_OP_CACHE_UPDATE), n, 0, NULL));
    fx_end(&f);
}
END_TEST

/* An annotated model has one alias class per pair, rooted at its
 * READ_WRITE past, with the present as its member. */
START_TEST(test_annotated_classes)
{
    static const struct { model_fn fn; size_t n; const char *root, *member; } m[] = {
        { gqa_annotated, 2, "past_key", "present_key" },
        { mha_annotated, 2, "past_key", "present_key" },
        { dmmha_annotated, 2, "past_value", "present_value" },
        { msattn_annotated, 1, "past", "present" },
        { paged_annotated, 2, "key_cache", "key_cache_out" },
        { sparse_annotated, 2, "past_value", "present_value" },
        { nd_annotated, 1, "data", "out" },
        { el_annotated, 1, "data", "out" },
        { identity_annotated, 1, "x", "y" },
    };
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
        fx f;
        fx_check_model(&f, m[k].fn);
        ck_assert_uint_eq(oac_analysis_class_count(f.a), m[k].n);
        bool found = false;
        for (size_t c = 0; c < m[k].n; c++) {
            const oac_alias_class *cl = oac_analysis_class(f.a, c);
            ck_assert(cl->read_write);
            ck_assert_uint_eq(cl->n_members, 2);
            found |= !strcmp(cl->root, m[k].root) && !strcmp(cl->members[1], m[k].member);
        }
        ck_assert_msg(found, "%s: no class %s -> %s", m[k].root, m[k].root, m[k].member);
        fx_end(&f);
    }
}
END_TEST

/* The lengths come from --input and --dim too ("whenever they are
 * known", section 6). */
START_TEST(test_length_from_options)
{
    char dir[] = "/tmp/oac_ops6_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    /* --input total_sequence_length=17 (INT32 scalar) on the annotated
     * GroupQueryAttention: 17 > 16; 16 fits. */
    for (int32_t total = 16; total <= 17; total++) {
        char *path = write_tensor(dir, "total", OAC_T_INT32, NULL, 0, &total,
                                  sizeof total);
        fx f;
        fx_build(&f, NULL);
        gqa_annotated(f.mb);
        oac_input_file in = { "total_sequence_length", path };
        oac_check_opts o = { .inputs = &in, .n_inputs = 1 };
        ck_assert_int_eq(fx_check(&f, &o), OAC_OK);
        if (total == 17)
            diag_expect(f.d, OAC_CAPACITY_OVERFLOW, "gqa", "past_key",
                        "/graph/node/0/input/6");
        else
            diag_expect_clean(f.d);
        fx_end(&f);
        unlink(path);
        free(path);
    }
    rmdir(dir);

    /* --dim: com.microsoft Attention fed 20 tokens at once into a
     * 16-position cache overflows whatever past_sequence_length (not
     * known: a graph input) holds; 16 tokens may fit. */
    for (int64_t seq = 16; seq <= 20; seq += 4) {
        fx f;
        fx_build(&f, NULL);
        row6 r = msattn6;
        r.in[0].dims = "1,seq,8";
        r.out[0].dims = "1,seq,8";
        build6(f.mb, &r, V6_ANNOTATED, -1);
        oac_dim_binding d = { "seq", seq };
        oac_check_opts o = { .dims = &d, .n_dims = 1 };
        ck_assert_int_eq(fx_check(&f, &o), OAC_OK);
        if (seq == 20) {
            const oac_diag *x = diag_expect(f.d, OAC_CAPACITY_OVERFLOW, "attn",
                                            "past", "/graph/node/0/input/0");
            ck_assert_msg(strstr(x->message, "at least 20"), "%s", x->message);
        } else {
            diag_expect_clean(f.d);
        }
        fx_end(&f);
    }
}
END_TEST

/* PagedAttention's length lives in its block table: listed unchecked,
 * never capacity-overflow. */
START_TEST(test_paged_unchecked)
{
    fx f;
    fx_check_model(&f, paged_annotated);
    diag_expect_clean(f.d);
    bool found = false;
    for (size_t k = 0; k < oac_analysis_unchecked_count(f.a); k++) {
        const oac_unchecked *u = oac_analysis_unchecked(f.a, k);
        found |= !strcmp(u->rule, "capacity") && !strcmp(u->node, "paged") &&
                 strstr(u->reason, "block table") != NULL;
    }
    ck_assert(found);
    fx_end(&f);
}
END_TEST

static size_t capacity_unchecked(const fx *f, const char *reason)
{
    size_t n = 0;
    for (size_t k = 0; k < oac_analysis_unchecked_count(f->a); k++) {
        const oac_unchecked *u = oac_analysis_unchecked(f->a, k);
        n += !strcmp(u->rule, "capacity") && strstr(u->reason, reason) != NULL;
    }
    return n;
}

/* A stock GroupQueryAttention in its growing form: the present declared
 * with total_sequence_length's 17 positions, the past's 16 its past
 * length (ONNX Runtime without a shared buffer). */
static void gqa_stock_grows_17(oac_mb *mb)
{
    row6 r = gqa6;
    r.out[1].dims = r.out[2].dims = "1,1,17,4";
    build6(mb, &r, V6_STOCK, 17);
}

/* The real GenAI export's form: past past_seq_len, present
 * total_seq_len; the file does not say whether they are one buffer. */
static void gqa_stock_symbolic(oac_mb *mb)
{
    row6 r = gqa6;
    r.in[3].dims = r.in[4].dims = "1,1,past_seq_len,4";
    r.out[1].dims = r.out[2].dims = "1,1,total_seq_len,4";
    build6(mb, &r, V6_STOCK, -1);
}

/* A stock GroupQueryAttention (always in place, contract 6) has its
 * length checked where the file shows past and present as one buffer
 * (the present declared with the past's length on the capacity axis),
 * as an annotated one: an overflow (kv_cases), the near miss at the
 * capacity, an unknown total listed.  Where the file shows the present
 * longer than the past (the growing form) there is no buffer to
 * overflow; where it cannot tell, the rule is listed, never skipped. */
START_TEST(test_gqa_stock_forms)
{
    fx f;
    fx_check_model(&f, gqa_stock_total_16);
    ck_assert_msg(oac_diags_count_severity(f.d, OAC_SEV_ERROR) == 0 &&
                  oac_diags_count_severity(f.d, OAC_SEV_WARNING) == 2 &&
                  diag_count(f.d, OAC_ALIAS_IMPLIED) == 2, "%s", diag_dump(f.d));
    ck_assert_uint_eq(capacity_unchecked(&f, ""), 0);
    fx_end(&f);

    fx_check_model(&f, gqa_stock_grows_17);
    ck_assert_msg(oac_diags_count_severity(f.d, OAC_SEV_ERROR) == 0 &&
                  diag_count(f.d, OAC_ALIAS_IMPLIED) == 2, "%s", diag_dump(f.d));
    ck_assert_uint_eq(capacity_unchecked(&f, ""), 0);
    fx_end(&f);

    fx_check_model(&f, gqa_stock);
    ck_assert_uint_eq(capacity_unchecked(&f, "total sequence length is not known"), 2);
    ck_assert_uint_eq(capacity_unchecked(&f, "--input total_sequence_length="), 2);
    fx_end(&f);

    fx_check_model(&f, gqa_stock_symbolic);
    ck_assert_msg(oac_diags_count_severity(f.d, OAC_SEV_ERROR) == 0, "%s", diag_dump(f.d));
    ck_assert_uint_eq(capacity_unchecked(&f, "one buffer"), 2);
    fx_end(&f);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("ops");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, test_onnx_domain);
    tcase_add_test(tc, test_lookup_domains);
    tcase_add_test(tc, test_lookup_every_row);
    tcase_add_test(tc, test_one_row_per_operator);
    tcase_add_test(tc, test_fields_in_range);
    tcase_add_test(tc, test_kernels_distinct);
    tcase_add_test(tc, test_contract_lists);
    tcase_add_test(tc, test_section2_ports);
    tcase_add_test(tc, test_alias_mapping);
    suite_add_tcase(s, tc);
    TCase *t6 = tcase_create("section6");
    ADD_CASES(t6, kv_cases);
    tcase_add_test(t6, test_gqa_stock_forms);
    ADD_CASES(t6, onnx_cases);
    tcase_add_test(t6, test_refusal_no_cascade);
    tcase_add_loop_test(t6, test_stock_growing_copied, 0,
                        (int)(sizeof stock_growing / sizeof stock_growing[0]));
    tcase_add_test(t6, test_implied_message);
    tcase_add_test(t6, test_pair_api);
    tcase_add_test(t6, test_paged_unchecked);
    tcase_add_test(t6, test_length_from_options);
    tcase_add_test(t6, test_annotated_classes);
    suite_add_tcase(s, t6);
    return s;
}

/* run/generate.h: the generation loop a run drives (contract section 8,
 * "Decoder inputs"; issue 11 items 3 and 5).
 *
 * Owns struct oac_decoder, made once per run from the model and the
 * run's options (run/generate.c): which main-graph inputs are decoder inputs
 * and what each step feeds them, which pasts of a stock model take the
 * previous step's present, and the dimension symbols the run binds from
 * the loop's numbers.  The loop, per step k (from 0): n tokens are
 * fed (the prompt, --prompt-length P, at step 0; one token after), the
 * past length p is what earlier steps fed (0 at step 0), the total is
 * p + n.  oac_run_dims gives the check the symbols at step 0, so the
 * check's static plan is the first step's; the runtime asks each step's
 * values (oac_decoder_sym, oac_decoder_fill) and plans each later step
 * it ran at that step's (oac_decoder_dims_at).
 *
 * Invariants:
 *  1. An input given by --input is never driven; a driven input is not a
 *     position input of contract 5 (run/positions.c skips it).
 *  2. A symbol has one meaning: the same number every step (batch-like,
 *     bound to its --dim or 1), the new tokens' count, the total length,
 *     or the past length; a symbol that would need two is a usage error
 *     (OAC_EINVAL), as is a --dim binding a symbol the loop drives.
 *  3. Everything here comes from the model's main graph inputs and the
 *     options, never from an analysis: oac_run_dims runs before the check.
 */
#ifndef OAC_DECODER_H
#define OAC_DECODER_H

#include "oac_int.h"
#include "run/kernel_api.h"

/* What a symbol stands for. */
typedef enum oac_dec_sym_kind {
    OAC_DSYM_CONST = 0,        /* a fixed number (batch) */
    OAC_DSYM_NEW,              /* tokens fed this step */
    OAC_DSYM_TOTAL,            /* past + new */
    OAC_DSYM_PAST              /* past length */
} oac_dec_sym_kind;

typedef struct oac_dec_sym {
    const char *name;          /* dim_param, borrowed from the model */
    oac_dec_sym_kind kind;
    int64_t value;             /* OAC_DSYM_CONST */
} oac_dec_sym;

/* One driven input. */
typedef struct oac_dec_input {
    size_t port;               /* GraphProto.input index */
    int role;                  /* run/generate.c's role table */
    int32_t elem_type;         /* INT32 or INT64, as declared */
    int rank;
    int64_t dims[OAC_RT_MAX_RANK]; /* fixed axes; the growing axis's
                                      entry is set per step */
    int grow_axis;             /* axis holding new or total, or -1 */
    oac_dec_sym_kind grow;     /* OAC_DSYM_NEW or _TOTAL on grow_axis */
} oac_dec_input;

/* A past/present pair a stock model leaves unannotated (its past is no
 * READ_WRITE input, no --input gives it): `run` feeds the present back
 * as the next step's past, copying it (issue 11 item 5). */
typedef struct oac_dec_pair {
    size_t past;               /* GraphProto.input index */
    size_t present;            /* GraphProto.output index */
    int seq_axis;              /* the past's axis holding the past length
                                  (its symbol is OAC_DSYM_PAST), or -1 */
} oac_dec_pair;

typedef struct oac_decoder {
    oac_ctx *ctx;
    int64_t prompt;            /* P >= 1 */
    const int64_t *tokens;     /* borrowed from the options; NULL: 1, 2, 3, ... */
    size_t n_tokens;
    oac_dec_input *in;
    size_t n_in, cap_in;
    oac_dec_sym *syms;
    size_t n_syms, cap_syms;
    oac_dec_pair *pairs;
    size_t n_pairs, cap_pairs;
} oac_decoder;

/* The loop of model under opts: its decoder inputs (named by the
 * genai_config.json beside the model, else by GenAI's defaults) and its
 * stock pairs (the one pairing, annotate/pairs.h).  A model
 * without either gets an empty one.  OAC_EINVAL for usage errors
 * (invariant 2, a decoder input whose type the loop cannot feed);
 * OAC_EPARSE after a config-invalid diagnostic in diags for a config
 * that cannot be read. */
int oac_decoder_new(oac_ctx *ctx, oac_decoder **out, const oac_model *model,
                    const oac_run_opts *opts, oac_diags *diags);
void oac_decoder_free(oac_decoder *d);

/* Does the run drive a generation loop (past_length is reported)? */
static inline bool oac_decoder_active(const oac_decoder *d)
{
    return d && (d->n_in > 0 || d->n_pairs > 0);
}

/* Does a symbol take another number at a later step than at the first
 * (a new-tokens count, a total or a past length)? */
bool oac_decoder_varies(const oac_decoder *d);

/* The --dim bindings of a check: o->dims, then the loop's symbols at the
 * first step (first_step) or only those that keep one number every step
 * (the check the pre-check reads dims from, which must not fold a
 * first-step number into a later step).  *out on the context's
 * allocator, names borrowed. */
int oac_decoder_dims(const oac_decoder *d, const oac_run_opts *o, bool first_step,
                     oac_dim_binding **out, size_t *n);

/* The --dim bindings of a check at step k (from 0; step 0 is
 * oac_decoder_dims' first step): o->dims, then every symbol the loop
 * drives at that step's past length and new tokens.  The run plans each
 * step it ran at these (run/session.c).  *out on the context's
 * allocator, names borrowed. */
int oac_decoder_dims_at(const oac_decoder *d, const oac_run_opts *o, uint64_t k,
                        oac_dim_binding **out, size_t *n);
/* Does the loop feed an input that carries the total length
 * (attention_mask, seqlens_k, total_sequence_length, nonpad_kv_seqlen)?
 * A length the graph computes from it is then the loop's total
 * (run/precheck.c). */
bool oac_decoder_feeds_total(const oac_decoder *d);

/* Tokens fed at step k (from 0). */
static inline int64_t oac_decoder_new_tokens(const oac_decoder *d, uint64_t k)
{
    return k == 0 ? d->prompt : 1;
}

/* The value of symbol `name` at a step with past length past and new
 * tokens n, or -1 when the loop does not drive it. */
int64_t oac_decoder_sym(const oac_decoder *d, const char *name, int64_t past,
                        int64_t n);

/* Driven input i at that step: t's type and dims set, its data
 * allocated as bound storage on a (excluded from the figures, like every
 * input) and filled.  t must be empty.  OAC_EUNSUPPORTED when a value
 * does not fit the input's element type. */
int oac_decoder_fill(const oac_decoder *d, size_t i, int64_t past, int64_t n,
                     oac_ralloc *a, oac_tensor *t);

#endif /* OAC_DECODER_H */

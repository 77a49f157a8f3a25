/* kernels/embed.c: com.microsoft EmbedLayerNormalization, the embedding
 * of BERT and GPT-2 exports (contract section 10).
 *
 * Owns its semantics, from ONNX Runtime's ContribOperators.md and its CPU
 * kernel (compared with ONNX Runtime 1.30 in FLOAT and FLOAT16,
 * tests/ort_diff.sh; BFLOAT16 follows the same definition, computed in
 * double): per token (b, s)
 *   e = word_embedding[input_ids[b, s]] + position_embedding[p]
 *       (+ segment_embedding[segment_ids[b, s]] when both are given),
 *   p = position_ids[b, s] (or [0, s] for a (1, S) position_ids), else s;
 *   output = (e - mean(e)) / sqrt(var(e) + epsilon) * gamma (+ beta);
 *   embedding_sum (output 2, optional) = e;
 *   mask_index (output 1, INT32 [B]) = the number of ones in mask[b, :]
 *   (input 7), zeros without a mask.
 * epsilon defaults to 1e-12, as the operator's definition.
 * Invariants: every id and position is checked against its table before
 * an output is allocated (kernel-error naming the input and the index);
 * no workspace: each row is read in passes, accumulating in double.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/elem_io.h"

enum { EL_IDS, EL_SEG_IDS, EL_WORD, EL_POS, EL_SEG, EL_GAMMA, EL_BETA, EL_MASK, EL_POS_IDS };

typedef struct eln {
    const oac_tensor *ids, *seg_ids, *word, *pos, *seg, *gamma, *beta, *mask, *pos_ids;
    int64_t B, S, D;
} eln;

#define T16 (OAC_EKM(OAC_T_FLOAT) | OAC_EKM(OAC_T_FLOAT16) | OAC_EKM(OAC_T_BFLOAT16))

static int bad(oac_kernel_call *k, size_t i, const char *want)
{
    return oac_kernel_error(k, oac_kin_name(k, i), "shape is not %s", want);
}

static bool is_bs(const oac_tensor *t, int64_t B, int64_t S)
{
    return t->rank == 2 && t->dims[0] == B && t->dims[1] == S;
}

/* Every id of input i in [0, rows) (INT32). */
static int ids_ok(oac_kernel_call *k, size_t i, const oac_tensor *t, int64_t rows)
{
    uint64_t n;
    if (!oac_tensor_numel_rt(t, &n))
        return bad(k, i, "countable");
    for (uint64_t e = 0; e < n; e++) {
        int64_t v = ((const int32_t *)t->data)[e];
        if (v < 0 || v >= rows)
            return oac_kernel_error(k, oac_kin_name(k, i), "index %" PRId64 " at element %"
                                    PRIu64 " is outside the table's %" PRId64 " rows", v, e,
                                    rows);
    }
    return OAC_OK;
}

static int eln_inputs(oac_kernel_call *k, eln *e)
{
    int rc = OAC_OK;
    uint32_t I = OAC_EKM(OAC_T_INT32);
    e->ids = oac_kin_typed(k, EL_IDS, I);
    e->word = e->ids ? oac_kin_typed(k, EL_WORD, T16) : NULL;
    if (!e->word)
        return OAC_ERUNTIME;
    uint32_t T = OAC_EKM(e->word->elem_type);
    e->pos = oac_kin_typed(k, EL_POS, T);
    e->gamma = e->pos ? oac_kin_typed(k, EL_GAMMA, T) : NULL;
    if (!e->gamma)
        return OAC_ERUNTIME;
    e->seg_ids = oac_kin_opt(k, EL_SEG_IDS, I, &rc);
    e->seg = rc ? NULL : oac_kin_opt(k, EL_SEG, T, &rc);
    e->beta = rc ? NULL : oac_kin_opt(k, EL_BETA, T, &rc);
    e->mask = rc ? NULL : oac_kin_opt(k, EL_MASK, I, &rc);
    e->pos_ids = rc ? NULL : oac_kin_opt(k, EL_POS_IDS, I, &rc);
    if (rc)
        return rc;
    if (e->ids->rank != 2)
        return bad(k, EL_IDS, "(batch, sequence)");
    e->B = e->ids->dims[0], e->S = e->ids->dims[1];
    if (e->word->rank != 2 || e->word->dims[1] < 1)
        return bad(k, EL_WORD, "(vocabulary, hidden)");
    int64_t D = e->D = e->word->dims[1];
    if (e->pos->rank != 2 || e->pos->dims[1] != D)
        return bad(k, EL_POS, "(max_position, hidden)");
    if (e->gamma->rank != 1 || e->gamma->dims[0] != D)
        return bad(k, EL_GAMMA, "(hidden)");
    if (e->beta && (e->beta->rank != 1 || e->beta->dims[0] != D))
        return bad(k, EL_BETA, "(hidden)");
    if (!e->seg_ids != !e->seg)
        return oac_kernel_pair_missing(k, e->seg ? EL_SEG : EL_SEG_IDS,
                                       e->seg ? EL_SEG_IDS : EL_SEG,
                                       "segment_ids and segment_embedding must be given together");
    if (e->seg_ids && !is_bs(e->seg_ids, e->B, e->S))
        return bad(k, EL_SEG_IDS, "(batch, sequence)");
    if (e->seg && (e->seg->rank != 2 || e->seg->dims[1] != D))
        return bad(k, EL_SEG, "(segments, hidden)");
    if (e->mask && !is_bs(e->mask, e->B, e->S))
        return bad(k, EL_MASK, "(batch, sequence)");
    if (e->pos_ids && !is_bs(e->pos_ids, e->B, e->S) && !is_bs(e->pos_ids, 1, e->S))
        return bad(k, EL_POS_IDS, "(batch, sequence) or (1, sequence)");
    if ((rc = ids_ok(k, EL_IDS, e->ids, e->word->dims[0])))
        return rc;
    if (e->seg_ids && (rc = ids_ok(k, EL_SEG_IDS, e->seg_ids, e->seg->dims[0])))
        return rc;
    if (e->pos_ids)
        return ids_ok(k, EL_POS_IDS, e->pos_ids, e->pos->dims[0]);
    if (e->S > e->pos->dims[0])
        return oac_kernel_error(k, oac_kin_name(k, EL_POS), "%" PRId64 " positions do not "
                                "hold a sequence of %" PRId64, e->pos->dims[0], e->S);
    return OAC_OK;
}

/* Element d of token (b, s)'s embedding sum. */
static double esum(const eln *e, int64_t b, int64_t s, int64_t d)
{
    int64_t t = b * e->S + s, D = e->D;
    int64_t w = ((const int32_t *)e->ids->data)[t];
    int64_t p = !e->pos_ids ? s : ((const int32_t *)e->pos_ids->data)[e->pos_ids->dims[0] == 1
                                                                      ? s : t];
    int32_t T = e->word->elem_type;
    double v = oac_ek_getd(T, e->word->data, (uint64_t)(w * D + d)) +
               oac_ek_getd(T, e->pos->data, (uint64_t)(p * D + d));
    if (e->seg) {
        int64_t g = ((const int32_t *)e->seg_ids->data)[t];
        v += oac_ek_getd(T, e->seg->data, (uint64_t)(g * D + d));
    }
    return v;
}

int oac_kernel_embed_layer_normalization(oac_kernel_call *k)
{
    eln e = { 0 };
    int rc = eln_inputs(k, &e);
    if (rc)
        return rc;
    double eps = oac_attr_float(k->node, "epsilon", 1e-12f);
    int32_t T = e.word->elem_type;
    int64_t B = e.B, S = e.S, D = e.D;
    oac_tensor *y, *mi, *sum = NULL;
    const int64_t yd[3] = { B, S, D }, md[1] = { B };
    if ((rc = oac_kout(k, 0, T, 3, yd, &y)) ||
        (rc = oac_kout(k, 1, OAC_T_INT32, 1, md, &mi)) ||
        (k->n_out > 2 && k->out[2] && (rc = oac_kout(k, 2, T, 3, yd, &sum))))
        return rc;
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < S; s++) {
            uint64_t o = (uint64_t)((b * S + s) * D);
            double mean = 0, var = 0;
            for (int64_t d = 0; d < D; d++)
                mean += esum(&e, b, s, d);
            mean /= (double)D;
            for (int64_t d = 0; d < D; d++) {
                double c = esum(&e, b, s, d) - mean;
                var += c * c;
            }
            double inv = 1 / sqrt(var / (double)D + eps);
            for (int64_t d = 0; d < D; d++) {
                double v = esum(&e, b, s, d);
                if (sum)
                    oac_ek_setd(T, sum->data, o + (uint64_t)d, v);
                double r = (v - mean) * inv * oac_ek_getd(T, e.gamma->data, (uint64_t)d);
                if (e.beta)
                    r += oac_ek_getd(T, e.beta->data, (uint64_t)d);
                oac_ek_setd(T, y->data, o + (uint64_t)d, r);
            }
        }
    for (int64_t b = 0; b < B; b++) {
        int32_t c = 0;
        for (int64_t s = 0; e.mask && s < S; s++)
            c += ((const int32_t *)e.mask->data)[b * S + s] == 1;
        ((int32_t *)mi->data)[b] = c;
    }
    return OAC_OK;
}

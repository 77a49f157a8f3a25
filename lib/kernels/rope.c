/* kernels/rope.c: the rotary position embedding kernels, ONNX
 * RotaryEmbedding (opset 23) and com.microsoft RotaryEmbedding
 * (contract sections 5 and 8).
 *
 * Owns their numeric semantics, checked against ONNX's reference
 * implementation and ONNX Runtime 1.30 (CPU):
 *  - the input is 4-D (batch, heads, sequence, head_size) or 3-D
 *    (batch, sequence, heads * head_size); the first rotary_dim elements
 *    of each head (rotary_embedding_dim, 0 meaning the whole head) are
 *    rotated as pairs (i, i + rotary_dim/2), or (2i, 2i + 1) when
 *    interleaved, by the cosine and sine of the token's position; the
 *    rest pass through;
 *  - ONNX: position_ids (batch, sequence) index cos_cache/sin_cache
 *    (max_position, rotary_dim/2); without them the caches are already
 *    gathered, (batch, sequence, rotary_dim/2).  3-D input needs
 *    num_heads.
 *  - com.microsoft: position_ids is required, either (batch, sequence)
 *    or one start position (token s at start + s); 3-D input without
 *    num_heads takes head_size = 2 * cos_cache's last dimension.
 *    is_packed_batching and scale are accepted and, as on ONNX Runtime's
 *    CPU, have no effect.
 *
 * Invariants:
 *  1. Every position is checked against the caches' rows before the
 *     output is allocated (kernel-error naming position_ids); shapes that
 *     disagree are kernel-error naming the input; element types outside
 *     FLOAT, FLOAT16, BFLOAT16 (and DOUBLE for ONNX) are
 *     unsupported-operator.
 *  2. No workspace: a head's row is rotated in a stack buffer of
 *     OAC_ATTN_MAX_HEAD doubles; only the output is allocated.
 */
#include <inttypes.h>

#include "kernels/attn.h"

/* What the two operators' inputs and attributes come to. */
typedef struct rope {
    const oac_tensor *x, *cos, *sin, *pos;
    size_t x_port, pos_port, cos_port;
    bool interleaved;
    bool gathered;       /* ONNX without position_ids: caches (B, S, half) */
    bool start;          /* com.microsoft: one start position */
    int64_t num_heads, rot_dim;
    bool ms;             /* com.microsoft rules for head_size */
} rope;

static int shape_err(oac_kernel_call *k, size_t port, const char *want)
{
    return oac_kernel_error(k, oac_kin_name(k, port), "shape is not %s", want);
}

static int run_rope(oac_kernel_call *k, const rope *r)
{
    const oac_tensor *x = r->x;
    int64_t B, S, N, H;
    bool r4 = x->rank == 4;
    if (r4) {
        B = x->dims[0], N = x->dims[1], S = x->dims[2], H = x->dims[3];
    } else if (x->rank == 3) {
        B = x->dims[0], S = x->dims[1];
        int64_t D = x->dims[2];
        if (r->num_heads > 0) {
            N = r->num_heads;
        } else if (r->ms && r->rot_dim == 0 && r->cos->rank >= 1 &&
                   r->cos->dims[r->cos->rank - 1] > 0 &&
                   D % (2 * r->cos->dims[r->cos->rank - 1]) == 0) {
            N = D / (2 * r->cos->dims[r->cos->rank - 1]);
        } else {
            return oac_kernel_error(k, "num_heads", "3-D input needs num_heads%s",
                                    r->ms ? " (or rotary_embedding_dim 0 and "
                                    "cos_cache of head_size / 2)" : "");
        }
        if (N < 1 || D % N)
            return shape_err(k, r->x_port, "(batch, sequence, num_heads * head_size)");
        H = D / N;
    } else {
        return shape_err(k, r->x_port, "3-D or 4-D");
    }
    int64_t rot = r->rot_dim ? r->rot_dim : H;
    if (rot < 2 || rot % 2 || rot > H)
        return oac_kernel_error(k, "rotary_embedding_dim", "rotary dimension %" PRId64
                                " is not even and within the head size %" PRId64, rot, H);
    if (H > OAC_ATTN_MAX_HEAD)
        return oac_kernel_fail(k, OAC_UNSUPPORTED_OPERATOR,
                               "node '%s' (%s): head size %" PRId64 " exceeds the reference "
                               "runtime's limit of %d", k->node_name, k->node->op_type,
                               H, OAC_ATTN_MAX_HEAD);
    int64_t half = rot / 2, rows;
    const oac_tensor *cos = r->cos, *sin = r->sin;
    if (r->gathered) {
        const int64_t cd[3] = { B, S, half };
        if (!oac_tensor_dims_are(cos, 3, cd))
            return shape_err(k, r->cos_port, "(batch, sequence, rotary_dim / 2) "
                             "without position_ids");
        rows = B * S;
    } else {
        if (cos->rank != 2 || cos->dims[1] != half)
            return shape_err(k, r->cos_port, "(max_position, rotary_dim / 2)");
        rows = cos->dims[0];
    }
    if (!oac_tensor_dims_are(sin, cos->rank, cos->dims))
        return shape_err(k, r->cos_port + 1, "cos_cache's");
    const int64_t *pos = r->pos ? (const int64_t *)r->pos->data : NULL;
    if (r->pos) {
        const int64_t pd[2] = { B, S };
        bool one = r->start && r->pos->rank == 1 && r->pos->dims[0] == 1;
        if (!one && !oac_tensor_dims_are(r->pos, 2, pd))
            return shape_err(k, r->pos_port, r->ms ? "(batch, sequence) or (1)"
                                                   : "(batch, sequence)");
        for (int64_t b = 0; b < B; b++)
            for (int64_t s = 0; s < S; s++) {
                /* One start position p0 gives token s position p0 + s
                 * (checked as s < rows - p0: no overflow). */
                int64_t p0 = one ? pos[0] : pos[b * S + s];
                if (p0 < 0 || p0 >= rows || (one && s >= rows - p0))
                    return oac_kernel_error(k, oac_kin_name(k, r->pos_port),
                                            "position %" PRId64 "%s of batch %" PRId64
                                            " token %" PRId64 " is outside the "
                                            "caches' %" PRId64 " rows", p0,
                                            one ? " + token" : "", b, s, rows);
            }
    }
    oac_tensor *y;
    int rc = oac_kout(k, 0, x->elem_type, x->rank, x->dims, &y);
    if (rc)
        return rc;
    bool one = pos && r->pos->rank == 1;
    double row[OAC_ATTN_MAX_HEAD];
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < S; s++) {
            int64_t p = !pos ? b * S + s : one ? pos[0] + s : pos[b * S + s];
            for (int64_t h = 0; h < N; h++) {
                uint64_t at = (uint64_t)(r4 ? ((b * N + h) * S + s) * H
                                            : (b * S + s) * N * H + h * H);
                for (int64_t d = 0; d < H; d++)
                    row[d] = oac_ek_getd(x->elem_type, x->data, at + (uint64_t)d);
                oac_attn_rope_row(row, rot, cos, sin, (uint64_t)(p * half), r->interleaved);
                for (int64_t d = 0; d < H; d++)
                    oac_ek_setd(y->elem_type, y->data, at + (uint64_t)d, row[d]);
            }
        }
    return OAC_OK;
}

#define T_ROPE (OAC_EKM(OAC_T_FLOAT) | OAC_EKM(OAC_T_FLOAT16) | OAC_EKM(OAC_T_BFLOAT16))

/* ONNX RotaryEmbedding(X, cos_cache, sin_cache, position_ids?). */
int oac_kernel_rotary_embedding(oac_kernel_call *k)
{
    int rc = OAC_OK;
    rope r = { .x_port = 0, .cos_port = 1, .pos_port = 3 };
    r.x = oac_kin_typed(k, 0, T_ROPE);
    r.cos = r.x ? oac_kin_typed(k, 1, OAC_EKM(r.x->elem_type)) : NULL;
    r.sin = r.cos ? oac_kin_typed(k, 2, OAC_EKM(r.x->elem_type)) : NULL;
    if (!r.sin)
        return OAC_ERUNTIME;
    r.pos = oac_kin_opt(k, 3, OAC_EKM(OAC_T_INT64), &rc);
    if (rc)
        return rc;
    r.gathered = !r.pos;
    r.interleaved = oac_attr_int(k->node, "interleaved", 0) != 0;
    r.num_heads = oac_attr_int(k->node, "num_heads", 0);
    r.rot_dim = oac_attr_int(k->node, "rotary_embedding_dim", 0);
    if (r.num_heads < 0 || r.rot_dim < 0 || r.rot_dim > OAC_ATTN_MAX_HEAD)
        return oac_kernel_error(k, r.num_heads < 0 ? "num_heads" : "rotary_embedding_dim",
                                "out of range");
    return run_rope(k, &r);
}

/* com.microsoft RotaryEmbedding(input, position_ids, cos_cache, sin_cache). */
int oac_kernel_ms_rotary_embedding(oac_kernel_call *k)
{
    rope r = { .x_port = 0, .pos_port = 1, .cos_port = 2, .start = true, .ms = true };
    r.x = oac_kin_typed(k, 0, T_ROPE);
    r.pos = r.x ? oac_kin_typed(k, 1, OAC_EKM(OAC_T_INT64)) : NULL;
    r.cos = r.pos ? oac_kin_typed(k, 2, OAC_EKM(r.x->elem_type)) : NULL;
    r.sin = r.cos ? oac_kin_typed(k, 3, OAC_EKM(r.x->elem_type)) : NULL;
    if (!r.sin)
        return OAC_ERUNTIME;
    r.interleaved = oac_attr_int(k->node, "interleaved", 0) != 0;
    r.num_heads = oac_attr_int(k->node, "num_heads", 0);
    r.rot_dim = oac_attr_int(k->node, "rotary_embedding_dim", 0);
    if (r.num_heads < 0 || r.rot_dim < 0 || r.rot_dim > OAC_ATTN_MAX_HEAD)
        return oac_kernel_error(k, r.num_heads < 0 ? "num_heads" : "rotary_embedding_dim",
                                "out of range");
    return run_rope(k, &r);
}

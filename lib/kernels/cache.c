/* kernels/cache.c: the cache-update kernels, CacheUpdate (onnx_alias) and
 * ONNX TensorScatter (opset 24) (contract section 2).
 *
 * Owns the in-place write of an update into a cache.  With output_alias
 * the output is the cache itself (a view set up by the runtime) and the
 * kernel writes exactly the update's bytes into it, one memcpy per
 * contiguous run of the capacity axis: no temporary, no allocation.
 * Without output_alias the update runs out of place, as the contract
 * says: a new output the size of the cache is allocated, the cache copied
 * into it and the update written there (the runtime counts that buffer
 * in second_cache_bytes).
 *
 * Invariants:
 *  1. Every bound is checked before the first byte is written: position
 *     < 0 or position + new_length > capacity is capacity-overflow, naming
 *     node, position, length, capacity and cache (the rule and its words
 *     are rulebook.h's, as the check's); nothing is reallocated, the
 *     cache is left as it was and the run stops.
 *  2. Writes stay inside the cache: offsets are computed with overflow
 *     checks from dims already validated against the tensors' byte sizes.
 *  3. What does not change between steps (the axis attribute, operand
 *     checks, the layout) is resolved on a node's first step of a session
 *     and kept in its oac_kstate (run/kernel_api.h) while the cache's
 *     storage, type and dims, the update's dims and the in-place output
 *     stay the same; a later step is the position's checks, the capacity
 *     verdict and the copy.  Anything else resolves again.
 *  4. Sub-byte element types (INT4, UINT2, ...) use the same plan in bits:
 *     when a run along the capacity axis is not a whole number of bytes,
 *     exactly its bits are copied and the neighbouring elements' bits in
 *     shared bytes are kept.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rulebook.h"
#include "run/kernel_api.h"

/* Layout of a write along one axis: outer runs of cap (cache) or len
 * (update) rows of row_bits each. */
typedef struct span {
    uint64_t outer;      /* product of dims before the axis (from start) */
    uint64_t row_bits;   /* bits of one index step along the axis */
} span;

/* Copy n bits from src at bit offset so to dst at bit offset do, packed
 * little-endian (first element in the lowest bits, as ONNX packs INT4).
 * Whole bytes go through memcpy; only misaligned runs go bit by bit. */
static void copy_bits(uint8_t *dst, uint64_t d0, const uint8_t *src, uint64_t s0,
                      uint64_t n)
{
    if (!(d0 % 8) && !(s0 % 8) && !(n % 8)) {
        if (n)
            memcpy(dst + d0 / 8, src + s0 / 8, (size_t)(n / 8));
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t sb = s0 + i, db = d0 + i;
        unsigned bit = (src[sb / 8] >> (sb % 8)) & 1u;
        dst[db / 8] = (uint8_t)((dst[db / 8] & ~(1u << (db % 8))) | (bit << (db % 8)));
    }
}

static int layout(oac_kernel_call *k, const oac_tensor *t, int first, int axis,
                  span *out)
{
    uint64_t outer = 1, inner = 1, bits;
    for (int i = first; i < axis; i++)
        if (oac_mul_overflow_u64(outer, (uint64_t)t->dims[i], &outer))
            return oac_err(k->ctx, OAC_EINVAL, "node '%s': cache too large", k->node_name);
    for (int i = axis + 1; i < t->rank; i++)
        if (oac_mul_overflow_u64(inner, (uint64_t)t->dims[i], &inner))
            return oac_err(k->ctx, OAC_EINVAL, "node '%s': cache too large", k->node_name);
    if (oac_mul_overflow_u64(inner, oac_elem_bits(t->elem_type), &bits))
        return oac_err(k->ctx, OAC_EINVAL, "node '%s': cache too large", k->node_name);
    out->outer = outer;
    out->row_bits = bits;
    return OAC_OK;
}

/* Common operand checks: same type and rank, fixed-size type, equal dims
 * except on axis (and, for TensorScatter, the batch). */
static int check_operands(oac_kernel_call *k, const oac_tensor *cache,
                          const oac_tensor *upd, int64_t *axis)
{
    if (!oac_elem_bits(cache->elem_type))
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node '%s': cache element type %d has no fixed size",
                               k->node_name, cache->elem_type);
    if (cache->elem_type != upd->elem_type || cache->rank != upd->rank)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node '%s': values (%s, rank %d) do not match the "
                               "cache (%s, rank %d)", k->node_name,
                               oac_elem_name(upd->elem_type), upd->rank,
                               oac_elem_name(cache->elem_type), cache->rank);
    int64_t a = oac_capacity_axis(*axis, cache->rank);
    if (a < 0)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node '%s': axis %" PRId64 " out of range for rank %d",
                               k->node_name, *axis, cache->rank);
    for (int i = 0; i < cache->rank; i++)
        if (i != a && cache->dims[i] != upd->dims[i])
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node '%s': values dim %d is %" PRId64
                                   ", cache has %" PRId64, k->node_name, i,
                                   upd->dims[i], cache->dims[i]);
    *axis = a;
    return OAC_OK;
}

/* capacity-overflow in the capacity rule's one wording (rulebook.h),
 * naming the cache (input 0), when the verdict is not "fits". */
static int overflows(oac_kernel_call *k, oac_cap_case *c)
{
    if (c->verdict == OAC_CAP_FITS || c->verdict == OAC_CAP_UNKNOWN)
        return OAC_OK;
    char msg[384];
    c->cache = k->node->n_input ? k->node->input[0] : NULL;
    oac_capacity_say(msg, sizeof msg, c);
    return oac_kernel_fail(k, OAC_CAPACITY_OVERFLOW, "node '%s': %s", k->node_name, msg);
}

/* The tensor output 0 writes into: the cache itself when aliased, else a
 * new buffer holding a copy of it (out-of-place semantics). */
static int target(oac_kernel_call *k, const oac_tensor *cache, oac_tensor **out)
{
    int rc = oac_kernel_output(k, 0, cache->elem_type, cache->rank,
                               cache->dims, out);
    if (rc)
        return rc;
    if ((*out)->data != cache->data && cache->bytes)
        memcpy((*out)->data, cache->data, cache->bytes);
    return OAC_OK;
}

/* What a CacheUpdate step needs that does not change between steps,
 * resolved once when the session binds (run/kernel_api.h, oac_kstate) and
 * keyed on everything it came from: the cache's storage, type and dims,
 * the update's dims, and that the output is the cache itself. */
typedef struct cu_plan {
    const void *data;               /* the cache's storage */
    int32_t elem_type;
    int rank;
    int64_t cdims[OAC_RT_MAX_RANK], udims[OAC_RT_MAX_RANK];
    int64_t axis, cap, len;
    span s;
} cu_plan;

_Static_assert(sizeof(cu_plan) <= sizeof(((oac_kstate *)0)->w), "cu_plan fits oac_kstate");

/* The position input: an INT64 scalar (or [1]). */
static int position(oac_kernel_call *k, int64_t *pos)
{
    const oac_tensor *pt = oac_kernel_tensor_in(k, 2);
    if (!pt)
        return OAC_ERUNTIME;
    if (pt->elem_type != OAC_T_INT64 || pt->rank > 1 ||
        (pt->rank == 1 && pt->dims[0] != 1))
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node '%s': position must be an INT64 scalar",
                               k->node_name);
    memcpy(pos, pt->data, sizeof *pos);
    return OAC_OK;
}

/* The capacity verdict of one step: the rulebook's capacity rule and its
 * wording (invariant 1). */
static int capacity_verdict(oac_kernel_call *k, int64_t pos, int64_t len, int64_t cap)
{
    oac_cap_verdict v = oac_capacity_rule(pos, len, cap, OAC_CAP_NORMAL);
    if (v == OAC_CAP_FITS)
        return OAC_OK;      /* a step that fits builds no message case */
    oac_cap_case c = { .verdict = v, .what = "position", .row = "", .pos_known = true,
                       .pos = pos, .len = len, .cap = cap };
    return overflows(k, &c);
}

/* n bytes of one run.  A cache's runs are short (a head's rows: a few
 * hundred bytes) and there are heads x batch of them per step; a call to
 * the library's memcpy for each costs more than its bytes, so runs up to
 * SHORT_RUN bytes are copied in fixed blocks the compiler turns into
 * plain vector moves: 128 bytes (eight 16-byte moves) at a time, then
 * 32, then the last bytes.  In bench/bench_update (11 interleaved runs of
 * each, medians) 128-byte blocks took upd/strd at 1K..16K from 1.57 1.53
 * 1.59 1.46 1.34 (32-byte blocks alone) to 1.53 1.48 1.37 1.10 1.15;
 * 64-byte blocks, 256-byte ones and 32-byte AVX moves (chosen at run
 * time) did no better. */
enum { SHORT_RUN = 1024 };
static inline void copy_run(uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n > SHORT_RUN) {
        memcpy(dst, src, n);
        return;
    }
    size_t i = 0;
    for (; i + 128 <= n; i += 128)
        memcpy(dst + i, src + i, 128);
    for (; i + 32 <= n; i += 32)
        memcpy(dst + i, src + i, 32);
    for (; i < n; i++)
        dst[i] = src[i];
}

/* len rows of the update at row pos of each outer run of the cache. */
static void cu_copy(uint8_t *dst, const uint8_t *src, const span *s, int64_t cap,
                    int64_t pos, int64_t len)
{
    uint64_t run = (uint64_t)len * s->row_bits;
    if (!(s->row_bits % 8)) {
        size_t rb = (size_t)(s->row_bits / 8), rn = (size_t)run / 8;
        for (uint64_t o = 0; o < s->outer && rn; o++)
            copy_run(dst + ((size_t)o * (size_t)cap + (size_t)pos) * rb,
                     src + (size_t)o * rn, rn);
        return;
    }
    for (uint64_t o = 0; o < s->outer && run; o++)
        copy_bits(dst, (o * (uint64_t)cap + (uint64_t)pos) * s->row_bits, src, o * run, run);
}

/* The kept plan still describes this call: same cache storage, type and
 * dims, same update dims, the output the cache itself. */
static bool plan_holds(const oac_kernel_call *k, const cu_plan *p, const oac_tensor *cache,
                       const oac_tensor *upd)
{
    return k->n_out >= 1 && k->out[0] == k->in[0] && k->out_alias[0] >= 0 &&
           cache->data == p->data && cache->elem_type == p->elem_type &&
           upd->elem_type == p->elem_type &&
           oac_tensor_dims_are(cache, p->rank, p->cdims) &&
           oac_tensor_dims_are(upd, p->rank, p->udims);
}

/* Everything but the position and the layout, from the tensors and the
 * attributes (the layout follows the verdict, as it always did). */
static int cu_resolve(oac_kernel_call *k, const oac_tensor *cache, const oac_tensor *upd,
                      cu_plan *p)
{
    int64_t axis = oac_attr_int(k->node, "axis", -2);
    int rc = check_operands(k, cache, upd, &axis);
    if (rc)
        return rc;
    p->data = cache->data;
    p->elem_type = cache->elem_type;
    p->rank = cache->rank;
    memcpy(p->cdims, cache->dims, sizeof p->cdims);
    memcpy(p->udims, upd->dims, sizeof p->udims);
    p->axis = axis;
    p->cap = cache->dims[axis];
    p->len = upd->dims[axis];
    return OAC_OK;
}

/* A step without a plan that holds: resolve everything, judge, write, and
 * keep the plan when the call has a state (invariant 3).  Out of line, so
 * that the kept step's frame stays small. */
static __attribute__((noinline)) int cu_first(oac_kernel_call *k, const oac_tensor *cache,
                                              const oac_tensor *upd, int64_t pos,
                                              cu_plan *kept)
{
    cu_plan p;
    int rc;
    if ((rc = cu_resolve(k, cache, upd, &p)) ||
        (rc = capacity_verdict(k, pos, p.len, p.cap)) ||
        (rc = layout(k, cache, 0, (int)p.axis, &p.s)))
        return rc;
    oac_tensor *out;
    if ((rc = target(k, cache, &out)))
        return rc;
    cu_copy(out->data, upd->data, &p.s, p.cap, pos, p.len);
    if (kept) {
        *kept = p;
        k->state->ready = plan_holds(k, kept, cache, upd);
    }
    return OAC_OK;
}

int oac_kernel_cache_update(oac_kernel_call *k)
{
    const oac_tensor *cache = oac_kernel_tensor_in(k, 0);
    const oac_tensor *upd = cache ? oac_kernel_tensor_in(k, 1) : NULL;
    if (!upd)
        return OAC_ERUNTIME;
    int64_t pos = 0;
    int rc = position(k, &pos);
    if (rc)
        return rc;
    cu_plan *kept = k->state ? (cu_plan *)(void *)k->state->w : NULL;
    if (!kept || !k->state->ready || !plan_holds(k, kept, cache, upd))
        return cu_first(k, cache, upd, pos, kept);
    /* A step: the position's checks, the verdict and the copy. */
    if ((rc = capacity_verdict(k, pos, kept->len, kept->cap)))
        return rc;
    cu_copy(k->out[0]->t.data, upd->data, &kept->s, kept->cap, pos, kept->len);
    return OAC_OK;
}

int oac_kernel_tensor_scatter(oac_kernel_call *k)
{
    const oac_tensor *cache = oac_kernel_tensor_in(k, 0);
    const oac_tensor *upd = cache ? oac_kernel_tensor_in(k, 1) : NULL;
    if (!upd)
        return OAC_ERUNTIME;
    int64_t axis = oac_attr_int(k->node, "axis", -2);
    int rc = check_operands(k, cache, upd, &axis);
    if (rc)
        return rc;
    if (axis == 0)
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node '%s': TensorScatter axis cannot be the batch axis",
                               k->node_name);
    char mbuf[16];
    const char *mode = oac_attr_string(k->node, "mode", "linear", mbuf, sizeof mbuf);
    bool circular = !strcmp(mode, "circular");
    if (!circular && strcmp(mode, "linear"))
        return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                               "node '%s': unknown TensorScatter mode '%s'",
                               k->node_name, mode);
    int64_t batch = cache->dims[0], cap = cache->dims[axis], len = upd->dims[axis];
    const int64_t *wi = NULL;
    const oac_tensor *wt = k->n_in > 2 && k->in[2] && k->in[2]->kind ? oac_kernel_tensor_in(k, 2) : NULL;
    if (wt) {
        if (wt->elem_type != OAC_T_INT64 || wt->rank != 1 || wt->dims[0] != batch)
            return oac_kernel_fail(k, OAC_OPERAND_INVALID,
                                   "node '%s': write_indices must be INT64[%" PRId64 "]",
                                   k->node_name, batch);
        wi = wt->data;
    }
    /* Check every batch before writing any: a refused update leaves the
     * cache untouched. */
    for (int64_t b = 0; b < batch; b++) {
        int64_t p = 0;
        char row[48] = "";
        if (wi) {
            memcpy(&p, &wi[b], sizeof p);
            snprintf(row, sizeof row, "[%" PRId64 "] = ", b);
        }
        oac_cap_mode cm = circular ? OAC_CAP_CIRCULAR : OAC_CAP_NORMAL;
        oac_cap_case c = { .verdict = oac_capacity_rule(p, len, cap, cm), .mode = cm,
                           .what = wi ? "write_indices" : "position", .row = row,
                           .pos_known = true, .pos = p, .len = len, .cap = cap };
        if ((rc = overflows(k, &c)))
            return rc;
    }
    span s;
    if ((rc = layout(k, cache, 1, (int)axis, &s)))
        return rc;
    oac_tensor *out;
    if ((rc = target(k, cache, &out)))
        return rc;
    uint8_t *dst = out->data;
    const uint8_t *src = upd->data;
    uint64_t rb = s.row_bits;
    for (int64_t b = 0; b < batch; b++) {
        int64_t p = 0;
        if (wi)
            memcpy(&p, &wi[b], sizeof p);
        for (uint64_t o = 0; o < s.outer; o++) {
            uint64_t co = ((uint64_t)b * s.outer + o) * (uint64_t)cap;
            uint64_t uo = ((uint64_t)b * s.outer + o) * (uint64_t)len;
            if (!circular) {
                copy_bits(dst, (co + (uint64_t)p) * rb, src, uo * rb, (uint64_t)len * rb);
                continue;
            }
            /* Circular: at most two runs, before and after the wrap. */
            if (!cap)
                continue;
            uint64_t start = (uint64_t)(p % cap);
            uint64_t first = (uint64_t)len < (uint64_t)cap - start ? (uint64_t)len
                                                                   : (uint64_t)cap - start;
            copy_bits(dst, (co + start) * rb, src, uo * rb, first * rb);
            if ((uint64_t)len > first)
                copy_bits(dst, co * rb, src, (uo + first) * rb, ((uint64_t)len - first) * rb);
        }
    }
    return OAC_OK;
}

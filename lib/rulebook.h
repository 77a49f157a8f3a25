/* rulebook.h: each contract rule that holds at both times, one function
 * for the check (lib/check/) and the run (lib/run/, lib/kernels/).
 *
 * Owns the capacity rule of contract section 2 (and section 3's
 * TensorScatter modes, section 6's length rules): what decides whether
 * an update of `length` rows at `position` fits a cache of `capacity`
 * rows, and the one wording of its verdict, the check's (position,
 * length, their sum, then the capacity and the cache's name quoted; one
 * format string in rulebook.c).  The static pass
 * (check/capacity.c), the run's pre-check (run/precheck.c) and both
 * cache kernels (kernels/cache.c, kernels/paged.c) call it; each adds
 * only where it stands ("node 'n': ", "checked before the step ...").
 * Also the normalisation of a capacity axis against a rank, and whether
 * a section-6 pair is one buffer (oac_pair_one_buffer), which the check
 * and the pre-check share.
 *
 * Invariants:
 *  1. A negative position is an overflow before anything else is looked
 *     at, whatever is known of the length and capacity (contract 2:
 *     "position < 0 or position + new_length > capacity").
 *  2. position + length is overflow-checked: a sum past int64 exceeds
 *     every capacity (OAC_CAP_WRAPS), never wraps.
 *  3. Circular mode (TensorScatter, contract 3) checks only length <=
 *     capacity and position >= 0.
 *  4. Pure functions: no allocation, no context; a message is cut to the
 *     buffer, never overrun.
 */
#ifndef OAC_RULEBOOK_H
#define OAC_RULEBOOK_H

#include "oac_int.h"

typedef enum oac_cap_mode {
    OAC_CAP_NORMAL,      /* position + length <= capacity */
    OAC_CAP_CIRCULAR     /* length <= capacity; the write wraps */
} oac_cap_mode;

typedef enum oac_cap_verdict {
    OAC_CAP_FITS,
    OAC_CAP_UNKNOWN,     /* length or capacity not known (< 0) */
    OAC_CAP_NEGATIVE,    /* position < 0 */
    OAC_CAP_WRAPS,       /* position + length past int64 */
    OAC_CAP_EXCEEDS      /* past the capacity */
} oac_cap_verdict;

/* The capacity rule: `len` and `cap` < 0 are not known.  Inline (still
 * this one definition): the cache kernels judge every step by it, and
 * a kept CacheUpdate step is a few dozen nanoseconds (bench/bench_update). */
static inline oac_cap_verdict oac_capacity_rule(int64_t pos, int64_t len, int64_t cap,
                                                oac_cap_mode mode)
{
    if (pos < 0)
        return OAC_CAP_NEGATIVE;            /* invariant 1 */
    if (len < 0 || cap < 0)
        return OAC_CAP_UNKNOWN;
    if (mode == OAC_CAP_CIRCULAR)
        return len > cap ? OAC_CAP_EXCEEDS : OAC_CAP_FITS;
    int64_t end;
    if (oac_add_overflow_i64(pos, len, &end))
        return OAC_CAP_WRAPS;
    return end > cap ? OAC_CAP_EXCEEDS : OAC_CAP_FITS;
}

/* An update judged by oac_capacity_rule, as its message names it. */
typedef struct oac_cap_case {
    oac_cap_verdict verdict;
    oac_cap_mode mode;
    const char *what;    /* "position", "write_indices", "input 6 'x'" */
    const char *row;     /* between what and the number: "", "[1] = ", "= " */
    bool pos_known;      /* false: the length alone exceeds (EXCEEDS only) */
    int64_t pos, len, cap;
    const char *cache;   /* the cache's name, quoted */
} oac_cap_case;

/* The verdict's one wording into buf (n bytes, NUL-terminated): the
 * check's, e.g. for position 40, length 1, capacity 32: "position 40 +
 * length 1 = 41" and the capacity and cache after it.  Empty for FITS
 * and UNKNOWN. */
void oac_capacity_say(char *buf, size_t n, const oac_cap_case *c);

/* A section-6 length rule's verdict (WRAPS or EXCEEDS of the total
 * `total` = value + new positions, described by `parts`, against `cap`,
 * dim `axis` of `cache`; `exact` false when `total` is a lower bound). */
void oac_capacity_say_total(char *buf, size_t n, oac_cap_verdict v, bool exact,
                            int64_t total, const char *parts, const char *cache,
                            int64_t cap, int axis);

/* The words of a section-6 total: "input 6 'total' = 9 + 1 new position
 * of 'q' + 1 new" (value not known: "input 6 'total' not known, at least
 * 0"; seq < 0: no new positions named; plus 0: no "+ n new"). */
void oac_capacity_parts(char *buf, size_t n, int port, const char *vname,
                        bool v_known, int64_t val, int64_t seq, const char *sname,
                        int plus);

struct oac_op;

/* The mode of an update node: circular when the row's closed-set
 * attribute (.enum_attr, TensorScatter's mode) says "circular", else
 * normal. */
oac_cap_mode oac_capacity_mode(const struct oac_op *op,
                               const Onnx__NodeProto *np);

/* Is a pair of a section-6 row one buffer on its node, so that the row's
 * length rule applies to its past's capacity? */
typedef enum oac_share {
    OAC_SHARE_NO,        /* a new buffer (the growing form, a condition that fails) */
    OAC_SHARE_YES,
    OAC_SHARE_UNKNOWN    /* the file cannot tell: the check lists it */
} oac_share;
/* Pair (in, out) of op on node np: declared in place (the caller's
 * resolved output_alias), or in place as configured (oac_op_pair_judge)
 * with the file making past and present one buffer: by the operator's
 * definition (OAC_OPF_PRESENT_IS_PAST), by the input or attribute of its
 * condition, or, on a row in place always because the caller binds one
 * buffer (GroupQueryAttention), by the present's length on the capacity
 * axis being the past's: same_len 1 (the same number or dim_param), 0
 * (another: the growing form), -1 (cannot tell).  The check
 * (check/capacity.c) and the run's pre-check (run/precheck.c) both ask
 * here. */
oac_share oac_pair_one_buffer(const struct oac_op *op, const Onnx__NodeProto *np, int in,
                              int out, bool declared, int same_len);

/* `axis` (negative counts from the end) of a cache of rank `rank`,
 * normalised to 0..rank-1; -1 when the rank is not known (< 0) or the
 * axis is out of range. */
int64_t oac_capacity_axis(int64_t axis, int64_t rank);

#endif /* OAC_RULEBOOK_H */

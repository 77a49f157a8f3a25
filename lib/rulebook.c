/* rulebook.c: the rules that hold both statically and at run time, one
 * function each (rulebook.h).
 *
 * Owns the wording of the capacity rule (contract sections 2, 3 and 6),
 * the check's words, which the run's pre-check and the cache kernels
 * speak too; the rule itself is inline in rulebook.h.  Invariants:
 * rulebook.h.
 */
#include <inttypes.h>
#include <stdio.h>

#include <string.h>

#include "oac_int.h"
#include "ops.h"
#include "rulebook.h"

/* The subject, then the capacity and the cache's name, then the tail:
 * the one place the words of an overflow are. */
static void exceeds(char *buf, size_t n, const char *subject, int64_t cap,
                    const char *cache, const char *tail)
{
    snprintf(buf, n, "%s exceeds the capacity %" PRId64 " of '%s'%s", subject, cap, cache, tail);
}

void oac_capacity_say(char *buf, size_t n, const oac_cap_case *c)
{
    char subject[256], tail[96] = "";
    const char *cache = c->cache ? c->cache : "";
    if (!n)
        return;
    buf[0] = '\0';
    switch (c->verdict) {
    case OAC_CAP_NEGATIVE: {
        char capbuf[32] = "not known", lenbuf[32] = "not known";
        if (c->cap >= 0)
            snprintf(capbuf, sizeof capbuf, "%" PRId64, c->cap);
        if (c->len >= 0)
            snprintf(lenbuf, sizeof lenbuf, "%" PRId64, c->len);
        snprintf(buf, n, "%s %s%" PRId64 " is negative (cache '%s', length %s, capacity %s)",
                 c->what, c->row, c->pos, cache, lenbuf, capbuf);
        return;
    }
    case OAC_CAP_WRAPS:
        snprintf(subject, sizeof subject, "%s %s%" PRId64 " + length %" PRId64
                 " overflows and", c->what, c->row, c->pos, c->len);
        break;
    case OAC_CAP_EXCEEDS:
        if (!c->pos_known) {
            snprintf(subject, sizeof subject, "the update length %" PRId64 " alone",
                     c->len);
            snprintf(tail, sizeof tail, ", whatever the %s (never negative)", c->what);
        } else if (c->mode == OAC_CAP_CIRCULAR) {
            snprintf(subject, sizeof subject, "update length %" PRId64, c->len);
            snprintf(tail, sizeof tail, " (circular mode)");
        } else {
            snprintf(subject, sizeof subject, "%s %s%" PRId64 " + length %" PRId64
                     " = %" PRId64, c->what, c->row, c->pos, c->len, c->pos + c->len);
        }
        break;
    default:
        return;
    }
    exceeds(buf, n, subject, c->cap, cache, tail);
}

void oac_capacity_say_total(char *buf, size_t n, oac_cap_verdict v, bool exact,
                            int64_t total, const char *parts, const char *cache,
                            int64_t cap, int axis)
{
    char subject[320];
    if (!n)
        return;
    buf[0] = '\0';
    if (v == OAC_CAP_WRAPS) {
        snprintf(subject, sizeof subject, "the length after the update (%s) overflows and",
                 parts);
        exceeds(buf, n, subject, cap, cache ? cache : "", "");
    } else if (v == OAC_CAP_EXCEEDS) {
        snprintf(buf, n, "the update leaves %s%" PRId64 " positions (%s) in '%s', whose "
                 "capacity is %" PRId64 " (dim %d)", exact ? "" : "at least ", total,
                 parts, cache ? cache : "", cap, axis);
    }
}

int64_t oac_capacity_axis(int64_t axis, int64_t rank)
{
    if (rank < 0 || axis < -rank || axis >= rank)
        return -1;
    return axis < 0 ? axis + rank : axis;
}

void oac_capacity_parts(char *buf, size_t n, int port, const char *vname,
                        bool v_known, int64_t val, int64_t seq, const char *sname,
                        int plus)
{
    int at;
    if (!n)
        return;
    if (v_known)
        at = snprintf(buf, n, "input %d '%s' = %" PRId64, port, vname ? vname : "", val);
    else
        at = snprintf(buf, n, "input %d '%s' not known, at least 0", port,
                      vname ? vname : "");
    if (seq >= 0 && at >= 0 && (size_t)at < n)
        at += snprintf(buf + at, n - (size_t)at, " + %" PRId64 " new position%s of '%s'",
                       seq, seq == 1 ? "" : "s", sname ? sname : "");
    if (plus && at >= 0 && (size_t)at < n)
        snprintf(buf + at, n - (size_t)at, " + %d new", plus);
}

oac_cap_mode oac_capacity_mode(const oac_op *op, const Onnx__NodeProto *np)
{
    char buf[16];
    if (!op || !op->enum_attr)
        return OAC_CAP_NORMAL;
    const char *mode = oac_attr_string(np, op->enum_attr, "", buf, sizeof buf);
    return !strcmp(mode, "circular") ? OAC_CAP_CIRCULAR : OAC_CAP_NORMAL;
}

oac_share oac_pair_one_buffer(const oac_op *op, const Onnx__NodeProto *np, int in,
                              int out, bool declared, int same_len)
{
    if (declared)
        return OAC_SHARE_YES;
    if (oac_op_pair_judge(op, np, in, out, NULL) != OAC_PAIR_IN_PLACE)
        return OAC_SHARE_NO;
    if (oac_op_has(op, OAC_OPF_PRESENT_IS_PAST) || op->cond != OAC_COND_ALWAYS)
        return OAC_SHARE_YES;
    return same_len > 0 ? OAC_SHARE_YES : same_len == 0 ? OAC_SHARE_NO : OAC_SHARE_UNKNOWN;
}

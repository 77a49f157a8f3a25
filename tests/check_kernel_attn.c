/* check_kernel_attn.c: the attention and rotary kernels (lib/kernels/attn.c,
 * lib/kernels/rope.c; contract sections 5, 6 and 8).
 *
 * Every case builds a one-node model with the builder, runs it through
 * oac_run and reads the outputs back through --dump; the expected values
 * come from a naive implementation written here (every score of a query
 * row materialised, a two-pass softmax, rotations element by element,
 * present caches assembled row by row), not from the kernels.  Inputs are
 * rounded to the element type under test first, so the two differ only
 * by summation order and the final rounding (tol_of).  Every run also
 * asserts that the measured peak equals the static plan (kt_run), which
 * checks the shape inference rules against what the kernels allocate.
 *
 * GroupQueryAttention is run in shared-buffer mode over several steps on
 * caller storage: the new rows land where seqlens_k says, the rest of the
 * buffer keeps its bytes, and the output equals naive attention over the
 * valid prefix.  Refusals leave the caller's storage untouched.
 */
#include <math.h>

#include "harness.h"
#include "half.h"
#include "run/kernel_api.h"

/* The relative tolerance of a result rounded once to type t (the
 * reference and the kernel differ by summation order and that rounding). */
static double tol_of(int32_t t)
{
    switch (t) {
    case OAC_T_FLOAT: return 2e-6;
    case OAC_T_FLOAT16: return 2e-3;     /* 2^-10, twice at most */
    case OAC_T_BFLOAT16: return 1.6e-2;  /* 2^-7 */
    default: return 1e-12;
    }
}

/* n deterministic values in [-1, 1) from *seed, as type t holds them. */
static void fill(int32_t t, double *v, size_t n, uint32_t *seed)
{
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        v[i] = kt_round(t, (double)(*seed >> 8) / (double)(1u << 23) - 1.0);
    }
}

/* kt_expect; dims NULL: whatever dims v has (the caller checks them
 * elsewhere, or the count and layout say enough). */
static void expect(const kt_val *v, int32_t t, const char *dims, const double *want,
                   size_t n, double tol)
{
    char got[128] = "";
    for (int i = 0; !dims && i < v->rank; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? "," : "",
                 (long long)v->dims[i]);
    kt_expect(v, t, dims ? dims : got, want, n, tol);
}

/* ---- the naive reference -------------------------------------------- */

/* out[0 .. hv) = softmax over the included scores x[j] (plus a sink logit
 * in the denominator) of the rows V[j * vs ..]; zeros when no score is
 * included. */
static void ref_row(const double *x, const bool *inc, size_t n, const double *V,
                    size_t vs, size_t hv, bool sink, double sink_logit, double *out)
{
    double m = sink ? sink_logit : -INFINITY;
    bool any = false;
    for (size_t j = 0; j < n; j++)
        if (inc[j] && x[j] != -INFINITY) {
            any = true;
            if (x[j] > m)
                m = x[j];
        }
    for (size_t d = 0; d < hv; d++)
        out[d] = 0;
    if (!any)
        return;
    double sum = sink ? exp(sink_logit - m) : 0;
    for (size_t j = 0; j < n; j++)
        if (inc[j] && x[j] != -INFINITY)
            sum += exp(x[j] - m);
    for (size_t j = 0; j < n; j++)
        if (inc[j] && x[j] != -INFINITY)
            for (size_t d = 0; d < hv; d++)
                out[d] += exp(x[j] - m) / sum * V[j * vs + d];
}

/* Rotate x[0 .. rot) by cos/sin rows c, s (rot / 2 each). */
static void ref_rope(double *x, int64_t rot, const double *c, const double *s, bool il)
{
    int64_t half = rot / 2;
    double y[2048];
    memcpy(y, x, sizeof(double) * (size_t)rot);
    for (int64_t i = 0; i < half; i++) {
        int64_t a = il ? 2 * i : i, z = il ? 2 * i + 1 : i + half;
        y[a] = x[a] * c[i] - x[z] * s[i];
        y[z] = x[a] * s[i] + x[z] * c[i];
    }
    memcpy(x, y, sizeof(double) * (size_t)rot);
}

static double *vals(size_t n)
{
    double *v = calloc(n ? n : 1, sizeof *v);
    ck_assert_ptr_nonnull(v);
    return v;
}

static const int32_t float_types[] = { OAC_T_FLOAT, OAC_T_FLOAT16, OAC_T_BFLOAT16 };
#define N_FLOAT_TYPES 3

static char *dims_s(char *buf, size_t len, int rank, const int64_t *d)
{
    buf[0] = 0;
    for (int i = 0; i < rank; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%lld", i ? "," : "",
                 (long long)d[i]);
    return buf;
}

/* ---- GroupQueryAttention (stock: present = a new buffer) ------------ */

typedef struct gqa_cfg {
    int64_t B, S, N, KVN, H, P, TS;
    int32_t seqlens[4];
    bool packed, rotary, interleaved, pos_ids, bias, sink, smooth;
    int64_t half, maxpos, lws;
    double softcap, scale;
} gqa_cfg;

static void gqa_case(const gqa_cfg *c, int32_t t)
{
    int64_t B = c->B, S = c->S, N = c->N, KVN = c->KVN, H = c->H, P = c->P, TS = c->TS;
    int64_t Tp = TS > P ? TS : P, g = N / KVN, Tb = Tp;
    uint32_t seed = 11u + (uint32_t)t;
    size_t nq = (size_t)(B * S * N * H), nk = (size_t)(B * S * KVN * H),
           np = (size_t)(B * KVN * P * H), nc = (size_t)(c->maxpos * c->half);
    double *q = vals(nq), *k = vals(nk), *v = vals(nk), *pk = vals(np), *pv = vals(np);
    double *cs = vals(nc), *sn = vals(nc), *bias = vals((size_t)(B * N * S * Tb)),
           *sink = vals((size_t)N), *pos = vals((size_t)(B * S));
    fill(t, q, nq, &seed);
    fill(t, k, nk, &seed);
    fill(t, v, nk, &seed);
    fill(t, pk, np, &seed);
    fill(t, pv, np, &seed);
    fill(t, cs, nc, &seed);
    fill(t, sn, nc, &seed);
    fill(t, bias, (size_t)(B * N * S * Tb), &seed);
    fill(t, sink, (size_t)N, &seed);
    for (int64_t i = 0; i < B * S && c->maxpos; i++)
        pos[i] = (double)((i * 5 + 3) % c->maxpos);

    fx f;
    oac_mb *mb;
    oac_gb *gb = fx_build(&f, &mb);
    oac_mb_opset(mb, "com.microsoft", 1);
    char d1[64], d2[64];
    int64_t qd[3] = { B, S, c->packed ? (N + 2 * KVN) * H : N * H };
    if (c->packed) {
        /* One packed tensor: per token, q heads, then k, then v. */
        double *pq = vals((size_t)(B * S * qd[2]));
        for (int64_t r = 0; r < B * S; r++) {
            memcpy(pq + r * qd[2], q + r * N * H, sizeof(double) * (size_t)(N * H));
            memcpy(pq + r * qd[2] + N * H, k + r * KVN * H, sizeof(double) * (size_t)(KVN * H));
            memcpy(pq + r * qd[2] + (N + KVN) * H, v + r * KVN * H,
                   sizeof(double) * (size_t)(KVN * H));
        }
        kt_init(gb, "q", t, dims_s(d1, sizeof d1, 3, qd), pq, (size_t)(B * S * qd[2]));
        free(pq);
    } else {
        kt_init(gb, "q", t, dims_s(d1, sizeof d1, 3, qd), q, nq);
        int64_t kd[3] = { B, S, KVN * H };
        kt_init(gb, "k", t, dims_s(d1, sizeof d1, 3, kd), k, nk);
        kt_init(gb, "v", t, d1, v, nk);
    }
    int64_t pd[4] = { B, KVN, P, H };
    if (P) {
        kt_init(gb, "pk", t, dims_s(d1, sizeof d1, 4, pd), pk, np);
        kt_init(gb, "pv", t, d1, pv, np);
    }
    double sl[4], ts = (double)TS;
    for (int64_t b = 0; b < B; b++)
        sl[b] = c->seqlens[b];
    snprintf(d1, sizeof d1, "%lld", (long long)B);
    kt_init(gb, "sl", OAC_T_INT32, d1, sl, (size_t)B);
    kt_init(gb, "ts", OAC_T_INT32, "", &ts, 1);
    if (c->rotary) {
        int64_t cd[2] = { c->maxpos, c->half };
        kt_init(gb, "cos", t, dims_s(d1, sizeof d1, 2, cd), cs, nc);
        kt_init(gb, "sin", t, d1, sn, nc);
    }
    if (c->pos_ids) {
        int64_t xd[2] = { B, S };
        kt_init(gb, "pos", OAC_T_INT64, dims_s(d1, sizeof d1, 2, xd), pos, (size_t)(B * S));
    }
    if (c->bias) {
        int64_t bd[4] = { B, N, S, Tb };
        kt_init(gb, "bias", t, dims_s(d1, sizeof d1, 4, bd), bias, (size_t)(B * N * S * Tb));
    }
    if (c->sink) {
        snprintf(d1, sizeof d1, "%lld", (long long)N);
        kt_init(gb, "sink", t, d1, sink, (size_t)N);
    }
    char ins[128];
    snprintf(ins, sizeof ins, "q,%s,%s,%s,%s,sl,ts,%s,%s,%s,%s,%s",
             c->packed ? "" : "k", c->packed ? "" : "v", P ? "pk" : "", P ? "pv" : "",
             c->rotary ? "cos" : "", c->rotary ? "sin" : "", c->pos_ids ? "pos" : "",
             c->bias ? "bias" : "", c->sink ? "sink" : "");
    Onnx__NodeProto *n = oac_gb_node(gb, "GroupQueryAttention", "com.microsoft", "gqa",
                                     ins, "o,pko,pvo");
    oac_node_attr_int(gb, n, "num_heads", N);
    oac_node_attr_int(gb, n, "kv_num_heads", KVN);
    if (c->rotary)
        oac_node_attr_int(gb, n, "do_rotary", 1);
    if (c->interleaved)
        oac_node_attr_int(gb, n, "rotary_interleaved", 1);
    if (c->lws)
        oac_node_attr_int(gb, n, "local_window_size", c->lws);
    if (c->softcap)
        oac_node_attr_float(gb, n, "softcap", (float)c->softcap);
    if (c->scale)
        oac_node_attr_float(gb, n, "scale", (float)c->scale);
    if (c->smooth)
        oac_node_attr_int(gb, n, "smooth_softmax", 1);
    int64_t od[3] = { B, S, N * H }, prd[4] = { B, KVN, Tp, H };
    oac_gb_output(gb, "o", t, dims_s(d1, sizeof d1, 3, od));
    oac_gb_output(gb, "pko", t, dims_s(d2, sizeof d2, 4, prd));
    oac_gb_output(gb, "pvo", t, d2);
    fx_load(&f);
    static const char names[] = "o,pko,pvo";
    kt_val out[3];
    int rc = kt_run_with(&f, NULL, 1, true, names, out, 3);
    ck_assert_msg(rc == OAC_OK, "%s: rc %d %s", oac_elem_name(t), rc, diag_dump(f.d));

    /* Reference: the present caches row by row, then every score. */
    size_t npr = (size_t)(B * KVN * Tp * H);
    double *rk = vals(npr), *rv = vals(npr), *want = vals(nq);
    bool first = S == TS;
    double qr[1024], sc[64], V[64 * 64], o[1024];
    bool inc[64];
    /* Attributes are FLOAT: the kernel sees them rounded. */
    double scale = c->scale ? (float)c->scale : 1 / sqrt((double)H);
    double softcap = (float)c->softcap;
    for (int64_t b = 0; b < B; b++) {
        int64_t total = c->seqlens[b] + 1, past = first ? 0 : total - S;
        for (int64_t h = 0; h < KVN; h++) {
            for (int64_t j = 0; j < past; j++)
                for (int64_t d = 0; d < H; d++) {
                    rk[((b * KVN + h) * Tp + j) * H + d] = pk[((b * KVN + h) * P + j) * H + d];
                    rv[((b * KVN + h) * Tp + j) * H + d] = pv[((b * KVN + h) * P + j) * H + d];
                }
            for (int64_t s = 0; s < S; s++) {
                double kr[1024];
                int64_t p = c->pos_ids ? (int64_t)pos[b * S + s] : past + s;
                memcpy(kr, k + ((b * S + s) * KVN + h) * H, sizeof(double) * (size_t)H);
                if (c->rotary)
                    ref_rope(kr, 2 * c->half, cs + p * c->half, sn + p * c->half,
                             c->interleaved);
                for (int64_t d = 0; d < H; d++) {
                    rk[((b * KVN + h) * Tp + past + s) * H + d] = kt_round(t, kr[d]);
                    rv[((b * KVN + h) * Tp + past + s) * H + d] =
                        v[((b * S + s) * KVN + h) * H + d];
                }
            }
        }
        for (int64_t s = 0; s < S; s++)
            for (int64_t h = 0; h < N; h++) {
                int64_t p = c->pos_ids ? (int64_t)pos[b * S + s] : past + s;
                memcpy(qr, q + ((b * S + s) * N + h) * H, sizeof(double) * (size_t)H);
                if (c->rotary)
                    ref_rope(qr, 2 * c->half, cs + p * c->half, sn + p * c->half,
                             c->interleaved);
                int64_t end = past + s + 1 < total ? past + s + 1 : total;
                int64_t start = c->lws > 0 && end - c->lws > 0 ? end - c->lws : 0;
                int64_t kh = h / g;
                for (int64_t j = 0; j < end; j++) {
                    double x = 0;
                    for (int64_t d = 0; d < H; d++)
                        x += qr[d] * rk[((b * KVN + kh) * Tp + j) * H + d];
                    x *= scale;
                    if (c->softcap)
                        x = softcap * tanh(x / softcap);
                    if (c->bias)
                        x += bias[((b * N + h) * S + s) * Tb + j];
                    sc[j] = x;
                    inc[j] = j >= start;
                    for (int64_t d = 0; d < H; d++)
                        V[j * H + d] = rv[((b * KVN + kh) * Tp + j) * H + d];
                }
                ref_row(sc, inc, (size_t)end, V, (size_t)H, (size_t)H, c->sink || c->smooth,
                        c->sink ? sink[h] : 0, o);
                for (int64_t d = 0; d < H; d++)
                    want[((b * S + s) * N + h) * H + d] = o[d];
            }
    }
    expect(&out[0], t, dims_s(d1, sizeof d1, 3, od), want, nq, tol_of(t));
    expect(&out[1], t, dims_s(d1, sizeof d1, 4, prd), rk, npr, tol_of(t));
    expect(&out[2], t, d1, rv, npr, tol_of(t));
    kt_free(out, 3);
    fx_end(&f);
    free(q), free(k), free(v), free(pk), free(pv), free(cs), free(sn), free(bias);
    free(sink), free(pos), free(rk), free(rv), free(want);
}

START_TEST(gqa_token_generation)
{
    /* Two sequences of different lengths: rows at 5 and 3. */
    gqa_cfg c = { .B = 2, .S = 1, .N = 4, .KVN = 2, .H = 8, .P = 5, .TS = 6,
                  .seqlens = { 5, 3 } };
    for (int i = 0; i < N_FLOAT_TYPES; i++)
        gqa_case(&c, float_types[i]);
}
END_TEST

START_TEST(gqa_prompts)
{
    /* First prompt (one sequence padded: total 2 of 4), a prompt after
     * past context, a past longer than the total, packed QKV, MQA. */
    const gqa_cfg cs[] = {
        { .B = 2, .S = 4, .N = 4, .KVN = 2, .H = 8, .P = 0, .TS = 4, .seqlens = { 3, 1 } },
        { .B = 1, .S = 3, .N = 4, .KVN = 2, .H = 8, .P = 4, .TS = 7, .seqlens = { 6 } },
        { .B = 1, .S = 1, .N = 4, .KVN = 2, .H = 8, .P = 9, .TS = 6, .seqlens = { 5 } },
        { .B = 2, .S = 1, .N = 4, .KVN = 2, .H = 8, .P = 5, .TS = 6, .seqlens = { 5, 3 },
          .packed = true },
        { .B = 2, .S = 1, .N = 4, .KVN = 1, .H = 8, .P = 5, .TS = 6, .seqlens = { 5, 2 } },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int j = 0; j < N_FLOAT_TYPES; j++)
            gqa_case(&cs[i], float_types[j]);
}
END_TEST

START_TEST(gqa_options)
{
    /* Rotary (half split, interleaved, partial, position_ids), a local
     * window, softcap with attention_bias, head_sink, smooth softmax, a
     * custom scale. */
    const gqa_cfg cs[] = {
        { .B = 2, .S = 1, .N = 4, .KVN = 2, .H = 16, .P = 5, .TS = 6, .seqlens = { 5, 3 },
          .rotary = true, .half = 8, .maxpos = 16 },
        { .B = 1, .S = 3, .N = 4, .KVN = 2, .H = 16, .P = 0, .TS = 3, .seqlens = { 2 },
          .rotary = true, .interleaved = true, .half = 8, .maxpos = 16 },
        { .B = 1, .S = 3, .N = 4, .KVN = 2, .H = 16, .P = 4, .TS = 7, .seqlens = { 6 },
          .rotary = true, .half = 4, .maxpos = 16 },
        { .B = 2, .S = 1, .N = 4, .KVN = 2, .H = 16, .P = 5, .TS = 6, .seqlens = { 5, 3 },
          .rotary = true, .pos_ids = true, .half = 8, .maxpos = 16 },
        { .B = 1, .S = 5, .N = 4, .KVN = 2, .H = 8, .P = 0, .TS = 5, .seqlens = { 4 },
          .lws = 2 },
        { .B = 2, .S = 1, .N = 4, .KVN = 2, .H = 8, .P = 5, .TS = 6, .seqlens = { 5, 3 },
          .softcap = 0.5, .bias = true, .scale = 0.3 },
        { .B = 2, .S = 1, .N = 4, .KVN = 2, .H = 8, .P = 5, .TS = 6, .seqlens = { 5, 3 },
          .sink = true },
        { .B = 2, .S = 1, .N = 4, .KVN = 2, .H = 8, .P = 5, .TS = 6, .seqlens = { 5, 3 },
          .smooth = true },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int j = 0; j < N_FLOAT_TYPES; j++)
            gqa_case(&cs[i], float_types[j]);
}
END_TEST

/* ---- GroupQueryAttention on a shared buffer, step by step ---------- */

enum { SB_B = 2, SB_KVN = 2, SB_N = 4, SB_H = 8, SB_CAP = 8 };
#define SB_N_ELEM ((size_t)(SB_B * SB_KVN * SB_CAP * SB_H))

/* One step of a shared-buffer GQA on caller storage sk/sv of type t.
 * Returns the run's status; *o receives the output (B, S, N*H). */
static int sb_step(int32_t t, void *sk, void *sv, size_t bytes, int64_t S, int64_t TS,
                   const int32_t *seqlens, const double *q, const double *k,
                   const double *v, kt_val *o, fx *f)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_mb_opset(mb, "com.microsoft", 1);
    char cd[32], d[32];
    snprintf(cd, sizeof cd, "%d,%d,%d,%d", SB_B, SB_KVN, SB_CAP, SB_H);
    oac_vi_access(g, oac_gb_input(g, "past_key", t, cd), 1);
    oac_vi_access(g, oac_gb_input(g, "past_value", t, cd), 1);
    snprintf(d, sizeof d, "%d,%lld,%d", SB_B, (long long)S, SB_N * SB_H);
    kt_init(g, "q", t, d, q, (size_t)(SB_B * S * SB_N * SB_H));
    snprintf(d, sizeof d, "%d,%lld,%d", SB_B, (long long)S, SB_KVN * SB_H);
    kt_init(g, "k", t, d, k, (size_t)(SB_B * S * SB_KVN * SB_H));
    kt_init(g, "v", t, d, v, (size_t)(SB_B * S * SB_KVN * SB_H));
    double sl[SB_B], ts = (double)TS;
    for (int b = 0; b < SB_B; b++)
        sl[b] = seqlens[b];
    kt_init(g, "seqlens_k", OAC_T_INT32, "2", sl, SB_B);
    kt_init(g, "total_sequence_length", OAC_T_INT32, "", &ts, 1);
    Onnx__NodeProto *n = oac_gb_node(g, "GroupQueryAttention", "com.microsoft", "gqa",
                                     "q,k,v,past_key,past_value,seqlens_k,"
                                     "total_sequence_length", "o,present_key,present_value");
    oac_node_attr_int(g, n, "num_heads", SB_N);
    oac_node_attr_int(g, n, "kv_num_heads", SB_KVN);
    oac_node_alias(g, n, 1, 3, 1);
    oac_node_alias(g, n, 2, 4, 1);
    snprintf(d, sizeof d, "%d,%lld,%d", SB_B, (long long)S, SB_N * SB_H);
    oac_gb_output(g, "o", t, d);
    oac_vi_alias_of(g, oac_gb_output(g, "present_key", t, cd), "past_key");
    oac_vi_alias_of(g, oac_gb_output(g, "present_value", t, cd), "past_value");
    fx_load(f);
    oac_binding bk, bv;
    oac_binding_init(&bk, "past_key", sk, bytes, true);
    oac_binding_init(&bv, "past_value", sv, bytes, true);
    oac_binding *bl[2] = { &bk, &bv };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 2 };
    static const char names[] = "o";
    return kt_run_with(f, &h, 1, true, names, o, 1);
}

static void store_vals(int32_t t, void *raw, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t *p = (uint8_t *)raw + i * (oac_elem_bits(t) / 8);
        if (t == OAC_T_FLOAT) {
            float x = (float)v[i];
            memcpy(p, &x, 4);
        } else {
            uint16_t x = t == OAC_T_FLOAT16 ? oac_f32_to_f16((float)v[i])
                                            : oac_f32_to_bf16((float)v[i]);
            memcpy(p, &x, 2);
        }
    }
}

START_TEST(gqa_shared_buffer_steps)
{
    /* A prompt of 3 (sequence 1 padded to total 2), then three tokens;
     * sequence 1 lags one row behind and rewrites its padding row. */
    static const struct { int64_t S, TS; int32_t sl[SB_B]; } steps[] = {
        { 3, 3, { 2, 1 } }, { 1, 4, { 3, 2 } }, { 1, 5, { 4, 3 } }, { 1, 6, { 5, 4 } },
    };
    for (int ti = 0; ti < N_FLOAT_TYPES; ti++) {
        int32_t t = float_types[ti];
        size_t w = oac_elem_bits(t) / 8, bytes = SB_N_ELEM * w;
        uint8_t *sk = malloc(bytes), *sv = malloc(bytes);
        double *rk = vals(SB_N_ELEM), *rv = vals(SB_N_ELEM);
        /* The buffer starts as a sentinel nothing writes: 7. */
        for (size_t i = 0; i < SB_N_ELEM; i++)
            rk[i] = rv[i] = 7;
        store_vals(t, sk, rk, SB_N_ELEM);
        store_vals(t, sv, rv, SB_N_ELEM);
        uint32_t seed = 5;
        for (size_t st = 0; st < sizeof steps / sizeof steps[0]; st++) {
            int64_t S = steps[st].S;
            size_t nq = (size_t)(SB_B * S * SB_N * SB_H), nk = (size_t)(SB_B * S * SB_KVN * SB_H);
            double *q = vals(nq), *k = vals(nk), *v = vals(nk), *want = vals(nq);
            fill(t, q, nq, &seed);
            fill(t, k, nk, &seed);
            fill(t, v, nk, &seed);
            fx f;
            kt_val o;
            int rc = sb_step(t, sk, sv, bytes, S, steps[st].TS, steps[st].sl, q, k, v, &o, &f);
            ck_assert_msg(rc == OAC_OK, "step %zu: %s", st, diag_dump(f.d));
            /* In place: both presents held their storage, and the step
             * allocated only the output. */
            ck_assert_uint_eq(f.e->identity_checked, 2);
            ck_assert_uint_eq(f.e->identity_held, 2);
            ck_assert_uint_eq(f.e->per_step[0].alloc_bytes, nq * w);
            /* Reference: rows at total - S .. total - 1 (0 .. S - 1 on
             * the first prompt). */
            bool first = S == steps[st].TS;
            for (int b = 0; b < SB_B; b++) {
                int64_t total = steps[st].sl[b] + 1, past = first ? 0 : total - S;
                for (int h = 0; h < SB_KVN; h++)
                    for (int64_t s = 0; s < S; s++)
                        for (int d = 0; d < SB_H; d++) {
                            size_t at = (size_t)(((b * SB_KVN + h) * SB_CAP + past + s) * SB_H + d);
                            rk[at] = k[((b * S + s) * SB_KVN + h) * SB_H + d];
                            rv[at] = v[((b * S + s) * SB_KVN + h) * SB_H + d];
                        }
                for (int64_t s = 0; s < S; s++)
                    for (int h = 0; h < SB_N; h++) {
                        int kh = h / (SB_N / SB_KVN);
                        int64_t end = past + s + 1 < total ? past + s + 1 : total;
                        double x[SB_CAP], V[SB_CAP * SB_H], out[SB_H];
                        bool inc[SB_CAP];
                        for (int64_t j = 0; j < end; j++) {
                            x[j] = 0;
                            for (int d = 0; d < SB_H; d++) {
                                size_t at = (size_t)(((b * SB_KVN + kh) * SB_CAP + j) * SB_H + d);
                                x[j] += q[((b * S + s) * SB_N + h) * SB_H + d] * rk[at];
                                V[j * SB_H + d] = rv[at];
                            }
                            x[j] /= sqrt((double)SB_H);
                            inc[j] = true;
                        }
                        ref_row(x, inc, (size_t)end, V, SB_H, SB_H, false, 0, out);
                        for (int d = 0; d < SB_H; d++)
                            want[((b * S + s) * SB_N + h) * SB_H + d] = out[d];
                    }
            }
            /* Every element of the caller's buffers, written or not. */
            kt_val ck = { .type = t, .n = SB_N_ELEM, .data = sk },
                   cv = { .type = t, .n = SB_N_ELEM, .data = sv };
            for (size_t i = 0; i < SB_N_ELEM; i++) {
                ck_assert_msg(kt_get(&ck, i) == rk[i], "%s step %zu key[%zu] = %g, want %g",
                              oac_elem_name(t), st, i, kt_get(&ck, i), rk[i]);
                ck_assert_msg(kt_get(&cv, i) == rv[i], "%s step %zu value[%zu]",
                              oac_elem_name(t), st, i);
            }
            expect(&o, t, NULL, want, nq, tol_of(t));
            kt_free(&o, 1);
            fx_end(&f);
            free(q), free(k), free(v), free(want);
        }
        free(sk), free(sv), free(rk), free(rv);
    }
}
END_TEST

START_TEST(gqa_seqlens_past_the_buffer)
{
    /* seqlens_k = 8 puts the new row at 8 of a buffer of 8 rows although
     * total_sequence_length (8, all the checker sees) fits: refused by the
     * kernel before anything is written, the caller's bytes kept. */
    int32_t t = OAC_T_FLOAT;
    size_t bytes = SB_N_ELEM * 4;
    float *sk = malloc(bytes), *sv = malloc(bytes), *ck = malloc(bytes);
    for (size_t i = 0; i < SB_N_ELEM; i++)
        sk[i] = sv[i] = ck[i] = (float)i;
    double q[SB_B * SB_N * SB_H], k[SB_B * SB_KVN * SB_H], v[SB_B * SB_KVN * SB_H];
    uint32_t seed = 3;
    fill(t, q, sizeof q / sizeof q[0], &seed);
    fill(t, k, sizeof k / sizeof k[0], &seed);
    fill(t, v, sizeof v / sizeof v[0], &seed);
    static const int32_t bad[2][SB_B] = { { 3, SB_CAP }, { -5, 2 } };
    for (int i = 0; i < 2; i++) {
        fx f;
        kt_val o;
        int rc = sb_step(t, sk, sv, bytes, 1, SB_CAP, bad[i], q, k, v, &o, &f);
        ck_assert_int_eq(rc, OAC_ERUNTIME);
        diag_expect_run(f.d, OAC_KERNEL_ERROR, "kernel-error");
        ck_assert_ptr_nonnull(strstr(diag_find(f.d, OAC_KERNEL_ERROR, NULL, NULL, NULL)
                                         ->message, "seqlens_k"));
        ck_assert(!memcmp(sk, ck, bytes));
        ck_assert(!memcmp(sv, ck, bytes));
        fx_end(&f);
    }
    free(sk), free(sv), free(ck);
}
END_TEST

/* The case rows of kernel-error: seqlens_k past the shared buffer, and
 * the same step one row lower. */
static void gqa_step_scene(fx *f, int32_t last)
{
    static float sk[SB_N_ELEM], sv[SB_N_ELEM];
    double q[SB_B * SB_N * SB_H] = { 0 }, kv[SB_B * SB_KVN * SB_H] = { 0 };
    const int32_t sl[SB_B] = { 3, last };
    kt_val o;
    if (sb_step(OAC_T_FLOAT, sk, sv, sizeof sk, 1, SB_CAP, sl, q, kv, kv, &o, f) == OAC_OK)
        kt_free(&o, 1);
}

static void gqa_seqlens_past_buffer(fx *f) { gqa_step_scene(f, SB_CAP); }
static void gqa_seqlens_last_row(fx *f) { gqa_step_scene(f, SB_CAP - 1); }

static const scene_case kernel_error_cases[] = {
    { "gqa_seqlens_past_buffer", gqa_seqlens_past_buffer, WANT(OAC_KERNEL_ERROR),
      "gqa", NULL, NULL },
    { "gqa_seqlens_last_row", gqa_seqlens_last_row, NEAR(OAC_KERNEL_ERROR) },
};
CASES_TEST(kernel_error_cases)

/* A GQA node over initializers for refusal tests: query type t, head
 * size H, rotary positions 0 .. maxpos-1. */
static void gqa_small(fx *f, int32_t t, int64_t H, int64_t maxpos, int64_t position)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_mb_opset(mb, "com.microsoft", 1);
    uint32_t seed = 1;
    char d[32];
    size_t n = (size_t)(2 * H);
    double *x = vals(n * (size_t)(maxpos > 0 ? maxpos : 1));
    fill(t == OAC_T_DOUBLE ? OAC_T_FLOAT : t, x, n, &seed);
    snprintf(d, sizeof d, "1,1,%lld", (long long)(2 * H));
    kt_init(g, "q", t, d, x, n);
    snprintf(d, sizeof d, "1,1,%lld", (long long)H);
    kt_init(g, "k", t, d, x, (size_t)H);
    kt_init(g, "v", t, d, x, (size_t)H);
    double sl = 0, ts = 1, pos = (double)position;
    kt_init(g, "sl", OAC_T_INT32, "1", &sl, 1);
    kt_init(g, "ts", OAC_T_INT32, "", &ts, 1);
    const char *ins = "q,k,v,,,sl,ts";
    Onnx__NodeProto *nd;
    if (maxpos > 0) {
        snprintf(d, sizeof d, "%lld,%lld", (long long)maxpos, (long long)(H / 2));
        kt_init(g, "cos", t, d, x, (size_t)(maxpos * H / 2));
        kt_init(g, "sin", t, d, x, (size_t)(maxpos * H / 2));
        kt_init(g, "pos", OAC_T_INT64, "1,1", &pos, 1);
        ins = "q,k,v,,,sl,ts,cos,sin,pos";
    }
    nd = oac_gb_node(g, "GroupQueryAttention", "com.microsoft", "gqa", ins, "o,pko,pvo");
    oac_node_attr_int(g, nd, "num_heads", 2);
    oac_node_attr_int(g, nd, "kv_num_heads", 1);
    if (maxpos > 0)
        oac_node_attr_int(g, nd, "do_rotary", 1);
    oac_gb_output(g, "o", t, NULL);
    oac_gb_output(g, "pko", t, NULL);
    oac_gb_output(g, "pvo", t, NULL);
    fx_load(f);
    free(x);
}

START_TEST(gqa_refusals)
{
    /* DOUBLE is outside GroupQueryAttention's types; a head of 1040
     * passes the stack bound; a position outside the rotary caches. */
    fx f;
    kt_val o;
    static const char names[] = "o";
    gqa_small(&f, OAC_T_DOUBLE, 8, 0, 0);
    ck_assert_int_eq(kt_run_with(&f, NULL, 1, true, names, &o, 1), OAC_ERUNTIME);
    ck_assert_ptr_nonnull(strstr(diag_expect_run(f.d, OAC_UNSUPPORTED_OPERATOR,
                                                 "unsupported-operator")->message, "DOUBLE"));
    fx_end(&f);
    gqa_small(&f, OAC_T_FLOAT, 1040, 0, 0);
    ck_assert_int_eq(kt_run_with(&f, NULL, 1, true, names, &o, 1), OAC_ERUNTIME);
    ck_assert_ptr_nonnull(strstr(diag_expect_run(f.d, OAC_UNSUPPORTED_OPERATOR,
                                                 "unsupported-operator")->message, "1024"));
    fx_end(&f);
    gqa_small(&f, OAC_T_FLOAT, 16, 4, 4);
    ck_assert_int_eq(kt_run_with(&f, NULL, 1, true, names, &o, 1), OAC_ERUNTIME);
    ck_assert_ptr_nonnull(strstr(diag_expect_run(f.d, OAC_KERNEL_ERROR,
                                                 "kernel-error")->message, "'pos'"));
    fx_end(&f);
    gqa_small(&f, OAC_T_FLOAT, 16, 4, 3);
    ck_assert_int_eq(kt_run_with(&f, NULL, 1, true, names, &o, 1), OAC_OK);
    kt_free(&o, 1);
    fx_end(&f);
}
END_TEST

/* ---- MultiHeadAttention --------------------------------------------- */

typedef struct mha_cfg {
    int64_t B, S, L, N, H, Hv, P;
    bool bias, kpm_lens, kpm_2d, kpm_3d, ab, uni, cross, presents;
    double scale, mfv;
} mha_cfg;

static void mha_case(const mha_cfg *c, int32_t t)
{
    int64_t B = c->B, S = c->S, L = c->L, N = c->N, H = c->H, Hv = c->Hv, P = c->P,
            T = P + L, D = N * H, Dv = N * Hv;
    uint32_t seed = 17u + (uint32_t)t;
    size_t nq = (size_t)(B * S * D), nk = (size_t)(B * L * D), nv = (size_t)(B * L * Dv),
           npk = (size_t)(B * N * P * H), npv = (size_t)(B * N * P * Hv),
           nb = (size_t)(2 * D + Dv), nm = (size_t)(B * S * T), nab = (size_t)(N * S * T);
    double *q = vals(nq), *k = vals(nk), *v = vals(nv), *pk = vals(npk), *pv = vals(npv),
           *bias = vals(nb), *m = vals(nm), *ab = vals(nab);
    fill(t, q, nq, &seed);
    fill(t, k, nk, &seed);
    fill(t, v, nv, &seed);
    fill(t, pk, npk, &seed);
    fill(t, pv, npv, &seed);
    fill(t, bias, nb, &seed);
    fill(t, ab, nab, &seed);
    for (size_t i = 0; i < nm; i++)
        m[i] = (i * 7 + 3) % 5 != 0;
    double lens[4] = { (double)T - 1, (double)T - 2, (double)T, 1 };

    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_mb_opset(mb, "com.microsoft", 1);
    char d[64];
    snprintf(d, sizeof d, "%lld,%lld,%lld", (long long)B, (long long)S, (long long)D);
    kt_init(g, "q", t, d, q, nq);
    if (c->cross) {
        /* k and v in BNSH: the same numbers, read at transposed places. */
        snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)N,
                 (long long)L, (long long)H);
        kt_init(g, "k", t, d, k, nk);
        snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)N,
                 (long long)L, (long long)Hv);
        kt_init(g, "v", t, d, v, nv);
    } else {
        snprintf(d, sizeof d, "%lld,%lld,%lld", (long long)B, (long long)L, (long long)D);
        kt_init(g, "k", t, d, k, nk);
        snprintf(d, sizeof d, "%lld,%lld,%lld", (long long)B, (long long)L, (long long)Dv);
        kt_init(g, "v", t, d, v, nv);
    }
    if (c->bias) {
        snprintf(d, sizeof d, "%zu", nb);
        kt_init(g, "bias", t, d, bias, nb);
    }
    if (c->kpm_lens) {
        snprintf(d, sizeof d, "%lld", (long long)B);
        kt_init(g, "kpm", OAC_T_INT32, d, lens, (size_t)B);
    } else if (c->kpm_2d) {
        snprintf(d, sizeof d, "%lld,%lld", (long long)B, (long long)T);
        kt_init(g, "kpm", OAC_T_INT32, d, m, (size_t)(B * T));
    } else if (c->kpm_3d) {
        snprintf(d, sizeof d, "%lld,%lld,%lld", (long long)B, (long long)S, (long long)T);
        kt_init(g, "kpm", OAC_T_INT32, d, m, nm);
    }
    if (c->ab) {
        snprintf(d, sizeof d, "1,%lld,%lld,%lld", (long long)N, (long long)S, (long long)T);
        kt_init(g, "ab", t, d, ab, nab);
    }
    if (P) {
        snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)N,
                 (long long)P, (long long)H);
        kt_init(g, "pk", t, d, pk, npk);
        snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)N,
                 (long long)P, (long long)Hv);
        kt_init(g, "pv", t, d, pv, npv);
    }
    char ins[96];
    bool kpm = c->kpm_lens || c->kpm_2d || c->kpm_3d;
    snprintf(ins, sizeof ins, "q,k,v,%s,%s,%s,%s,%s", c->bias ? "bias" : "",
             kpm ? "kpm" : "", c->ab ? "ab" : "", P ? "pk" : "", P ? "pv" : "");
    Onnx__NodeProto *n = oac_gb_node(g, "MultiHeadAttention", "com.microsoft", "mha", ins,
                                     c->presents ? "o,pko,pvo" : "o");
    oac_node_attr_int(g, n, "num_heads", N);
    if (c->uni)
        oac_node_attr_int(g, n, "unidirectional", 1);
    if (c->scale)
        oac_node_attr_float(g, n, "scale", (float)c->scale);
    if (c->mfv)
        oac_node_attr_float(g, n, "mask_filter_value", (float)c->mfv);
    snprintf(d, sizeof d, "%lld,%lld,%lld", (long long)B, (long long)S, (long long)Dv);
    oac_gb_output(g, "o", t, d);
    if (c->presents) {
        snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)N,
                 (long long)T, (long long)H);
        oac_gb_output(g, "pko", t, d);
        snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)N,
                 (long long)T, (long long)Hv);
        oac_gb_output(g, "pvo", t, d);
    }
    fx_load(&f);
    kt_val out[3];
    size_t nout = c->presents ? 3 : 1;
    int rc = kt_run_with(&f, NULL, 1, true, "o,pko,pvo", out, nout);
    ck_assert_msg(rc == OAC_OK, "%s: %s", oac_elem_name(t), diag_dump(f.d));

    /* Reference: K = past ++ (k + bias) per head, BNSH. */
    double *K = vals((size_t)(B * N * T * H)), *VV = vals((size_t)(B * N * T * Hv)),
           *want = vals((size_t)(B * S * Dv));
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < N; h++)
            for (int64_t j = 0; j < T; j++) {
                for (int64_t e = 0; e < H; e++) {
                    double x = j < P ? pk[((b * N + h) * P + j) * H + e]
                             : c->cross ? k[((b * N + h) * L + j - P) * H + e]
                             : k[((b * L + j - P) * N + h) * H + e] +
                               (c->bias ? bias[D + h * H + e] : 0);
                    K[((b * N + h) * T + j) * H + e] = j < P || !c->bias ? x : kt_round(t, x);
                }
                for (int64_t e = 0; e < Hv; e++) {
                    double x = j < P ? pv[((b * N + h) * P + j) * Hv + e]
                             : c->cross ? v[((b * N + h) * L + j - P) * Hv + e]
                             : v[((b * L + j - P) * N + h) * Hv + e] +
                               (c->bias ? bias[2 * D + h * Hv + e] : 0);
                    VV[((b * N + h) * T + j) * Hv + e] = j < P || !c->bias ? x : kt_round(t, x);
                }
            }
    double scale = c->scale ? (float)c->scale : 1 / sqrt((double)H);
    double mfv = c->mfv ? (float)c->mfv : -10000;
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < S; s++)
            for (int64_t h = 0; h < N; h++) {
                double x[64], o[64];
                bool inc[64];
                for (int64_t j = 0; j < T; j++) {
                    double a = 0;
                    for (int64_t e = 0; e < H; e++)
                        a += (q[((b * S + s) * N + h) * H + e] + (c->bias ? bias[h * H + e] : 0)) *
                             K[((b * N + h) * T + j) * H + e];
                    a *= scale;
                    if (c->kpm_lens && j >= (int64_t)lens[b])
                        a += mfv;
                    if (c->kpm_2d && !m[b * T + j])
                        a += mfv;
                    if (c->kpm_3d && !m[(b * S + s) * T + j])
                        a += mfv;
                    if (c->ab)
                        a += ab[(h * S + s) * T + j];
                    x[j] = a;
                    inc[j] = !c->uni || j <= P + s;
                }
                ref_row(x, inc, (size_t)T, VV + (b * N + h) * T * Hv, (size_t)Hv, (size_t)Hv,
                        false, 0, o);
                for (int64_t e = 0; e < Hv; e++)
                    want[((b * S + s) * N + h) * Hv + e] = o[e];
            }
    /* With a bias the kernel adds it to unrounded q, k: allow a rounding. */
    double tol = tol_of(t) * (c->bias ? 4 : 1);
    expect(&out[0], t, NULL, want, (size_t)(B * S * Dv), tol);
    if (c->presents) {
        expect(&out[1], t, NULL, K, (size_t)(B * N * T * H), tol);
        expect(&out[2], t, NULL, VV, (size_t)(B * N * T * Hv), tol);
    }
    kt_free(out, nout);
    fx_end(&f);
    free(q), free(k), free(v), free(pk), free(pv), free(bias), free(m), free(ab);
    free(K), free(VV), free(want);
}

START_TEST(mha_forms)
{
    const mha_cfg cs[] = {
        { .B = 2, .S = 3, .L = 4, .N = 2, .H = 8, .Hv = 8 },
        { .B = 2, .S = 3, .L = 4, .N = 2, .H = 8, .Hv = 4, .bias = true, .kpm_2d = true,
          .ab = true, .presents = true },
        { .B = 2, .S = 3, .L = 4, .N = 2, .H = 8, .Hv = 8, .kpm_lens = true, .scale = 0.3,
          .mfv = -50 },
        { .B = 2, .S = 3, .L = 3, .N = 2, .H = 8, .Hv = 8, .P = 5, .uni = true,
          .kpm_3d = true, .presents = true },
        { .B = 1, .S = 1, .L = 1, .N = 2, .H = 8, .Hv = 8, .P = 6, .uni = true,
          .presents = true },
        { .B = 2, .S = 3, .L = 4, .N = 2, .H = 8, .Hv = 6, .cross = true },
        /* Key lengths with a past count the past's rows too (T = P + L). */
        { .B = 2, .S = 2, .L = 2, .N = 2, .H = 8, .Hv = 8, .P = 3, .kpm_lens = true,
          .uni = true, .presents = true },
        { .B = 2, .S = 1, .L = 1, .N = 2, .H = 8, .Hv = 8, .P = 5, .kpm_lens = true,
          .presents = true },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int j = 0; j < N_FLOAT_TYPES; j++)
            mha_case(&cs[i], float_types[j]);
}
END_TEST

/* MultiHeadAttention with past_sequence_length on caller storage: the
 * whole buffer is past and present; rows go at past_sequence_length. */
static int mha_share_step(float *sk, float *sv, size_t bytes, int64_t cap, int64_t P,
                          const double *q, const double *kv, kt_val *o, fx *f)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_mb_opset(mb, "com.microsoft", 1);
    char cd[32];
    snprintf(cd, sizeof cd, "1,2,%lld,4", (long long)cap);
    oac_vi_access(g, oac_gb_input(g, "past_key", OAC_T_FLOAT, cd), 1);
    oac_vi_access(g, oac_gb_input(g, "past_value", OAC_T_FLOAT, cd), 1);
    kt_init(g, "q", OAC_T_FLOAT, "1,1,8", q, 8);
    kt_init(g, "k", OAC_T_FLOAT, "1,1,8", kv, 8);
    kt_init(g, "v", OAC_T_FLOAT, "1,1,8", kv + 8, 8);
    /* past_sequence_length comes out of a ReduceSum, which the checker
     * does not fold: only the kernel sees its value. */
    double pl = (double)P;
    kt_init(g, "past_len_1", OAC_T_INT32, "1", &pl, 1);
    Onnx__NodeProto *r = oac_gb_node(g, "ReduceSum", NULL, "len", "past_len_1", "past_len");
    oac_node_attr_int(g, r, "keepdims", 0);
    Onnx__NodeProto *n = oac_gb_node(g, "MultiHeadAttention", "com.microsoft", "mha",
                                     "q,k,v,,,,past_key,past_value,past_len",
                                     "o,present_key,present_value");
    oac_node_attr_int(g, n, "num_heads", 2);
    oac_node_attr_int(g, n, "unidirectional", 1);
    oac_node_alias(g, n, 1, 6, 1);
    oac_node_alias(g, n, 2, 7, 1);
    oac_gb_output(g, "o", OAC_T_FLOAT, "1,1,8");
    oac_vi_alias_of(g, oac_gb_output(g, "present_key", OAC_T_FLOAT, cd), "past_key");
    oac_vi_alias_of(g, oac_gb_output(g, "present_value", OAC_T_FLOAT, cd), "past_value");
    fx_load(f);
    oac_binding bk, bv;
    oac_binding_init(&bk, "past_key", sk, bytes, true);
    oac_binding_init(&bv, "past_value", sv, bytes, true);
    oac_binding *bl[2] = { &bk, &bv };
    oac_run_hooks h = { .bindings = bl, .n_bindings = 2 };
    static const char names[] = "o";
    return kt_run_with(f, &h, 1, true, names, o, 1);
}

START_TEST(mha_past_sequence_length_in_place)
{
    enum { CAP = 6, STEPS = 4 };
    float sk[2 * CAP * 4], sv[2 * CAP * 4];
    double rk[2 * CAP * 4], rv[2 * CAP * 4];
    for (int i = 0; i < 2 * CAP * 4; i++)
        sk[i] = sv[i] = 9, rk[i] = rv[i] = 9;
    uint32_t seed = 2;
    for (int st = 0; st < STEPS; st++) {
        double q[8], kv[16], want[8];
        fill(OAC_T_FLOAT, q, 8, &seed);
        fill(OAC_T_FLOAT, kv, 16, &seed);
        fx f;
        kt_val o;
        int rc = mha_share_step(sk, sv, sizeof sk, CAP, st, q, kv, &o, &f);
        ck_assert_msg(rc == OAC_OK, "%s", diag_dump(f.d));
        ck_assert_uint_eq(f.e->identity_held, 2);
        for (int h = 0; h < 2; h++) {
            for (int e = 0; e < 4; e++) {
                rk[(h * CAP + st) * 4 + e] = kv[h * 4 + e];
                rv[(h * CAP + st) * 4 + e] = kv[8 + h * 4 + e];
            }
            double x[CAP], out[4];
            bool inc[CAP];
            for (int j = 0; j <= st; j++) {
                x[j] = 0;
                for (int e = 0; e < 4; e++)
                    x[j] += q[h * 4 + e] * rk[(h * CAP + j) * 4 + e];
                x[j] /= 2;
                inc[j] = true;
            }
            ref_row(x, inc, (size_t)st + 1, rv + h * CAP * 4, 4, 4, false, 0, out);
            memcpy(want + h * 4, out, sizeof out);
        }
        for (int i = 0; i < 2 * CAP * 4; i++)
            ck_assert(sk[i] == (float)rk[i] && sv[i] == (float)rv[i]);
        expect(&o, OAC_T_FLOAT, "1,1,8", want, 8, tol_of(OAC_T_FLOAT));
        kt_free(&o, 1);
        fx_end(&f);
    }
    /* past_sequence_length 6 leaves no room for the new row. */
    float ck[2 * CAP * 4];
    memcpy(ck, sk, sizeof ck);
    double q[8] = { 0 }, kv[16] = { 0 };
    fx f;
    kt_val o;
    ck_assert_int_eq(mha_share_step(sk, sv, sizeof sk, CAP, CAP, q, kv, &o, &f), OAC_ERUNTIME);
    ck_assert_ptr_nonnull(strstr(diag_expect_run(f.d, OAC_KERNEL_ERROR, "kernel-error")
                                     ->message, "'past_len'"));
    ck_assert(!memcmp(ck, sk, sizeof ck));
    fx_end(&f);
}
END_TEST

/* ---- ONNX Attention ------------------------------------------------- */

typedef struct att_cfg {
    bool r3;
    int64_t B, Nq, Nk, Sq, Skv, H, Hv, P;
    int mask;               /* 0 none, 1 bool, 2 float */
    int mask_rank;          /* 2: (Sq, len), 4: (B, 1, Sq, len) */
    int64_t mask_len;
    bool causal, nonpad;
    int64_t nonpad_v[2];
    double softcap, scale;  /* scale 0: default */
    int qk_mode;            /* -1: no qk output */
    int opset;
} att_cfg;

static void att_case(const att_cfg *c, int32_t t)
{
    int64_t B = c->B, Nq = c->Nq, Nk = c->Nk, Sq = c->Sq, Skv = c->Skv, H = c->H,
            Hv = c->Hv, P = c->P, T = P + Skv, ml = c->mask_len;
    uint32_t seed = 23u + (uint32_t)t;
    size_t nq = (size_t)(B * Nq * Sq * H), nk = (size_t)(B * Nk * Skv * H),
           nv = (size_t)(B * Nk * Skv * Hv), npk = (size_t)(B * Nk * P * H),
           npv = (size_t)(B * Nk * P * Hv), nm = (size_t)(B * Sq * ml);
    /* Values kept in BNSH; 3-D inputs are written from them. */
    double *q = vals(nq), *k = vals(nk), *v = vals(nv), *pk = vals(npk), *pv = vals(npv),
           *m = vals(nm);
    fill(t, q, nq, &seed);
    fill(t, k, nk, &seed);
    fill(t, v, nv, &seed);
    fill(t, pk, npk, &seed);
    fill(t, pv, npv, &seed);
    fill(t, m, nm, &seed);
    for (size_t i = 0; i < nm && c->mask == 1; i++)
        m[i] = m[i] > -0.4;
    if (c->mask == 1 && nm)
        for (int64_t j = 0; j < ml; j++)
            m[j] = 0;      /* batch 0's first query row: every key masked */

    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_mb_opset(mb, "", c->opset);
    char d[64];
    /* BNSH [B, N, S, X] -> BSNH [B, S, N * X] */
#define TO3(src, N_, S_, X_, dst)                                                    \
    for (int64_t b_ = 0; b_ < B; b_++)                                               \
        for (int64_t n_ = 0; n_ < (N_); n_++)                                        \
            for (int64_t s_ = 0; s_ < (S_); s_++)                                    \
                for (int64_t x_ = 0; x_ < (X_); x_++)                                \
                    (dst)[((b_ * (S_) + s_) * (N_) + n_) * (X_) + x_] =              \
                        (src)[((b_ * (N_) + n_) * (S_) + s_) * (X_) + x_];
    if (c->r3) {
        double *q3 = vals(nq), *k3 = vals(nk), *v3 = vals(nv);
        TO3(q, Nq, Sq, H, q3);
        TO3(k, Nk, Skv, H, k3);
        TO3(v, Nk, Skv, Hv, v3);
        snprintf(d, sizeof d, "%lld,%lld,%lld", (long long)B, (long long)Sq, (long long)(Nq * H));
        kt_init(g, "q", t, d, q3, nq);
        snprintf(d, sizeof d, "%lld,%lld,%lld", (long long)B, (long long)Skv, (long long)(Nk * H));
        kt_init(g, "k", t, d, k3, nk);
        snprintf(d, sizeof d, "%lld,%lld,%lld", (long long)B, (long long)Skv, (long long)(Nk * Hv));
        kt_init(g, "v", t, d, v3, nv);
        free(q3), free(k3), free(v3);
    } else {
        snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)Nq,
                 (long long)Sq, (long long)H);
        kt_init(g, "q", t, d, q, nq);
        snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)Nk,
                 (long long)Skv, (long long)H);
        kt_init(g, "k", t, d, k, nk);
        snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)Nk,
                 (long long)Skv, (long long)Hv);
        kt_init(g, "v", t, d, v, nv);
    }
    if (c->mask) {
        if (c->mask_rank == 2)
            snprintf(d, sizeof d, "%lld,%lld", (long long)Sq, (long long)ml);
        else
            snprintf(d, sizeof d, "%lld,1,%lld,%lld", (long long)B, (long long)Sq,
                     (long long)ml);
        kt_init(g, "mask", c->mask == 1 ? OAC_T_BOOL : t, d, m,
                  c->mask_rank == 2 ? (size_t)(Sq * ml) : nm);
    }
    if (P) {
        snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)Nk,
                 (long long)P, (long long)H);
        kt_init(g, "pk", t, d, pk, npk);
        snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)Nk,
                 (long long)P, (long long)Hv);
        kt_init(g, "pv", t, d, pv, npv);
    }
    if (c->nonpad) {
        double nv2[2] = { (double)c->nonpad_v[0], (double)c->nonpad_v[1] };
        snprintf(d, sizeof d, "%lld", (long long)B);
        kt_init(g, "nonpad", OAC_T_INT64, d, nv2, (size_t)B);
    }
    char ins[96], outs[64];
    snprintf(ins, sizeof ins, "q,k,v,%s,%s,%s%s", c->mask ? "mask" : "", P ? "pk" : "",
             P ? "pv" : "", c->nonpad ? ",nonpad" : "");
    snprintf(outs, sizeof outs, "y,pko,pvo%s", c->qk_mode >= 0 ? ",qk" : "");
    Onnx__NodeProto *n = oac_gb_node(g, "Attention", NULL, "att", ins, outs);
    if (c->r3) {
        oac_node_attr_int(g, n, "q_num_heads", Nq);
        oac_node_attr_int(g, n, "kv_num_heads", Nk);
    }
    if (c->causal)
        oac_node_attr_int(g, n, "is_causal", 1);
    if (c->softcap)
        oac_node_attr_float(g, n, "softcap", (float)c->softcap);
    if (c->scale)
        oac_node_attr_float(g, n, "scale", (float)c->scale);
    if (c->qk_mode >= 0)
        oac_node_attr_int(g, n, "qk_matmul_output_mode", c->qk_mode);
    oac_gb_output(g, "y", t, NULL);
    oac_gb_output(g, "pko", t, NULL);
    oac_gb_output(g, "pvo", t, NULL);
    if (c->qk_mode >= 0)
        oac_gb_output(g, "qk", t, NULL);
    fx_load(&f);
    const char *names = c->qk_mode >= 0 ? "y,pko,pvo,qk" : "y,pko,pvo";
    kt_val out[4];
    int rc = kt_run_with(&f, NULL, 1, true, names, out, c->qk_mode >= 0 ? 4 : 3);
    ck_assert_msg(rc == OAC_OK, "%s: %s", oac_elem_name(t), diag_dump(f.d));

    /* Reference, BNSH: K = past ++ k; scores per the ONNX definition. */
    double *K = vals((size_t)(B * Nk * T * H)), *VV = vals((size_t)(B * Nk * T * Hv));
    double *Y = vals((size_t)(B * Nq * Sq * Hv)), *QK = vals((size_t)(B * Nq * Sq * T));
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Nk; h++)
            for (int64_t j = 0; j < T; j++) {
                for (int64_t e = 0; e < H; e++)
                    K[((b * Nk + h) * T + j) * H + e] = j < P
                        ? pk[((b * Nk + h) * P + j) * H + e]
                        : k[((b * Nk + h) * Skv + j - P) * H + e];
                for (int64_t e = 0; e < Hv; e++)
                    VV[((b * Nk + h) * T + j) * Hv + e] = j < P
                        ? pv[((b * Nk + h) * P + j) * Hv + e]
                        : v[((b * Nk + h) * Skv + j - P) * Hv + e];
            }
    double scale = c->scale ? (float)c->scale : 1 / sqrt((double)H);
    double softcap = (float)c->softcap;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Nq; h++)
            for (int64_t s = 0; s < Sq; s++) {
                int64_t kh = h / (Nq / Nk);
                int64_t off = c->nonpad ? c->nonpad_v[b] - Sq : P;
                double x[64], o[64];
                bool inc[64];
                for (int64_t j = 0; j < T; j++) {
                    double a = 0;
                    for (int64_t e = 0; e < H; e++)
                        a += q[((b * Nq + h) * Sq + s) * H + e] * K[((b * Nk + kh) * T + j) * H + e];
                    a *= scale;
                    double raw = a;
                    if (c->softcap)
                        a = softcap * tanh(a / softcap);
                    double capped = a;
                    bool in = true;
                    if (c->causal && j > s + off)
                        in = false;
                    if (c->nonpad && j >= c->nonpad_v[b])
                        in = false;
                    if (c->mask) {
                        double mv = j >= ml ? (c->mask == 1 ? 0 : -INFINITY)
                            : m[(c->mask_rank == 2 ? s : b * Sq + s) * ml + j];
                        if (c->mask == 1)
                            in = in && mv != 0;
                        else
                            a += mv;
                    }
                    x[j] = in ? a : -INFINITY;
                    inc[j] = in;
                    double *qk = &QK[((b * Nq + h) * Sq + s) * T + j];
                    *qk = c->qk_mode == 0 ? raw : c->qk_mode == 1 ? capped : x[j];
                }
                ref_row(x, inc, (size_t)T, VV + (b * Nk + kh) * T * Hv, (size_t)Hv,
                        (size_t)Hv, false, 0, o);
                for (int64_t e = 0; e < Hv; e++)
                    Y[((b * Nq + h) * Sq + s) * Hv + e] = o[e];
                if (c->qk_mode == 3) {
                    /* The probabilities: o for a one-hot V. */
                    double mx = -INFINITY, sum = 0;
                    for (int64_t j = 0; j < T; j++)
                        if (inc[j] && x[j] > mx)
                            mx = x[j];
                    for (int64_t j = 0; j < T; j++)
                        if (inc[j] && x[j] != -INFINITY)
                            sum += exp(x[j] - mx);
                    for (int64_t j = 0; j < T; j++)
                        QK[((b * Nq + h) * Sq + s) * T + j] =
                            inc[j] && x[j] != -INFINITY ? exp(x[j] - mx) / sum : 0;
                }
            }
    double tol = tol_of(t);
    if (c->r3) {
        double *y3 = vals((size_t)(B * Nq * Sq * Hv));
        TO3(Y, Nq, Sq, Hv, y3);
        snprintf(d, sizeof d, "%lld,%lld,%lld", (long long)B, (long long)Sq, (long long)(Nq * Hv));
        expect(&out[0], t, d, y3, (size_t)(B * Nq * Sq * Hv), tol);
        free(y3);
    } else {
        snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)Nq,
                 (long long)Sq, (long long)Hv);
        expect(&out[0], t, d, Y, (size_t)(B * Nq * Sq * Hv), tol);
    }
#undef TO3
    snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)Nk, (long long)T,
             (long long)H);
    expect(&out[1], t, d, K, (size_t)(B * Nk * T * H), tol);
    expect(&out[2], t, NULL, VV, (size_t)(B * Nk * T * Hv), tol);
    if (c->qk_mode >= 0) {
        snprintf(d, sizeof d, "%lld,%lld,%lld,%lld", (long long)B, (long long)Nq,
                 (long long)Sq, (long long)T);
        expect(&out[3], t, d, QK, (size_t)(B * Nq * Sq * T), tol);
    }
    kt_free(out, c->qk_mode >= 0 ? 4 : 3);
    fx_end(&f);
    free(q), free(k), free(v), free(pk), free(pv), free(m), free(K), free(VV), free(Y);
    free(QK);
}

START_TEST(attention_forms)
{
    static const int32_t types[] = { OAC_T_FLOAT, OAC_T_FLOAT16, OAC_T_BFLOAT16,
                                     OAC_T_DOUBLE };
    const att_cfg cs[] = {
        /* The static-scatter decoder's form: 3-D, grouped heads, the
         * whole cache with nonpad_kv_seqlen, a causal frontier per batch. */
        { .r3 = true, .B = 2, .Nq = 4, .Nk = 2, .Sq = 3, .Skv = 5, .H = 8, .Hv = 8,
          .causal = true, .nonpad = true, .nonpad_v = { 4, 2 }, .qk_mode = -1, .opset = 24 },
        /* A bool mask shorter than the keys, one row fully masked. */
        { .r3 = true, .B = 2, .Nq = 4, .Nk = 2, .Sq = 3, .Skv = 5, .H = 8, .Hv = 8,
          .mask = 1, .mask_rank = 4, .mask_len = 4, .qk_mode = -1, .opset = 23 },
        /* 4-D with a past, a float mask, softcap, scale and every qk mode. */
        { .B = 2, .Nq = 4, .Nk = 2, .Sq = 3, .Skv = 2, .H = 8, .Hv = 6, .P = 3,
          .mask = 2, .mask_rank = 2, .mask_len = 5, .causal = true, .softcap = 0.5,
          .scale = 0.4, .qk_mode = 0, .opset = 23 },
        { .B = 2, .Nq = 4, .Nk = 2, .Sq = 3, .Skv = 2, .H = 8, .Hv = 6, .P = 3,
          .causal = true, .softcap = 0.5, .qk_mode = 1, .opset = 23 },
        { .B = 2, .Nq = 4, .Nk = 2, .Sq = 3, .Skv = 2, .H = 8, .Hv = 6, .P = 3,
          .mask = 2, .mask_rank = 2, .mask_len = 5, .qk_mode = 2, .opset = 23 },
        { .B = 2, .Nq = 4, .Nk = 2, .Sq = 3, .Skv = 2, .H = 8, .Hv = 6, .P = 3,
          .causal = true, .qk_mode = 3, .opset = 24 },
        /* More query rows than keys: the leading rows see nothing. */
        { .r3 = true, .B = 2, .Nq = 2, .Nk = 2, .Sq = 3, .Skv = 4, .H = 4, .Hv = 4,
          .causal = true, .nonpad = true, .nonpad_v = { 1, 4 }, .qk_mode = -1, .opset = 24 },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (size_t j = 0; j < sizeof types / sizeof types[0]; j++)
            att_case(&cs[i], types[j]);
}
END_TEST

START_TEST(attention_nonpad_with_past_refused)
{
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_mb_opset(mb, "", 24);
    double z[32] = { 0 }, np = 1;
    kt_init(g, "q", OAC_T_FLOAT, "1,1,1,4", z, 4);
    kt_init(g, "k", OAC_T_FLOAT, "1,1,1,4", z, 4);
    kt_init(g, "v", OAC_T_FLOAT, "1,1,1,4", z, 4);
    kt_init(g, "pk", OAC_T_FLOAT, "1,1,2,4", z, 8);
    kt_init(g, "pv", OAC_T_FLOAT, "1,1,2,4", z, 8);
    kt_init(g, "np", OAC_T_INT64, "1", &np, 1);
    oac_gb_node(g, "Attention", NULL, "att", "q,k,v,,pk,pv,np", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, NULL);
    fx_load(&f);
    static const char names[] = "y";
    kt_val o;
    ck_assert_int_eq(kt_run_with(&f, NULL, 1, true, names, &o, 1), OAC_ERUNTIME);
    ck_assert_ptr_nonnull(strstr(diag_expect_run(f.d, OAC_KERNEL_ERROR, "kernel-error")
                                     ->message, "'np'"));
    fx_end(&f);
}
END_TEST

/* ---- RotaryEmbedding (both domains) --------------------------------- */

typedef struct rope_cfg {
    bool ms, r4, il;
    int pos;            /* 0: none (gathered caches), 1: (B, S), 2: one start */
    int64_t B, S, N, H, rot;
    bool num_heads;     /* give num_heads */
} rope_cfg;

static void rope_case(const rope_cfg *c, int32_t t)
{
    int64_t B = c->B, S = c->S, N = c->N, H = c->H, rot = c->rot ? c->rot : H,
            half = rot / 2, maxpos = 12;
    int64_t rows = c->pos ? maxpos : B * S;
    uint32_t seed = 31u + (uint32_t)t;
    size_t nx = (size_t)(B * S * N * H), nc = (size_t)(rows * half);
    double *x = vals(nx), *cs = vals(nc), *sn = vals(nc), *want = vals(nx);
    double pos[64];
    fill(t, x, nx, &seed);
    fill(t, cs, nc, &seed);
    fill(t, sn, nc, &seed);
    for (int64_t i = 0; i < B * S; i++)
        pos[i] = (double)((i * 7 + 2) % maxpos);
    if (c->pos == 2)
        pos[0] = 4;

    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_mb_opset(mb, "", 23);
    oac_mb_opset(mb, "com.microsoft", 1);
    char d[64], xd[64];
    if (c->r4)
        snprintf(xd, sizeof xd, "%lld,%lld,%lld,%lld", (long long)B, (long long)N,
                 (long long)S, (long long)H);
    else
        snprintf(xd, sizeof xd, "%lld,%lld,%lld", (long long)B, (long long)S,
                 (long long)(N * H));
    kt_init(g, "x", t, xd, x, nx);
    if (c->pos)
        snprintf(d, sizeof d, "%lld,%lld", (long long)maxpos, (long long)half);
    else
        snprintf(d, sizeof d, "%lld,%lld,%lld", (long long)B, (long long)S, (long long)half);
    kt_init(g, "cos", t, d, cs, nc);
    kt_init(g, "sin", t, d, sn, nc);
    if (c->pos == 1) {
        snprintf(d, sizeof d, "%lld,%lld", (long long)B, (long long)S);
        kt_init(g, "pos", OAC_T_INT64, d, pos, (size_t)(B * S));
    } else if (c->pos == 2) {
        kt_init(g, "pos", OAC_T_INT64, "1", pos, 1);
    }
    Onnx__NodeProto *n = c->ms
        ? oac_gb_node(g, "RotaryEmbedding", "com.microsoft", "rope", "x,pos,cos,sin", "y")
        : oac_gb_node(g, "RotaryEmbedding", NULL, "rope", c->pos ? "x,cos,sin,pos" : "x,cos,sin",
                      "y");
    if (c->il)
        oac_node_attr_int(g, n, "interleaved", 1);
    if (c->num_heads)
        oac_node_attr_int(g, n, "num_heads", N);
    if (c->rot)
        oac_node_attr_int(g, n, "rotary_embedding_dim", c->rot);
    oac_gb_output(g, "y", t, xd);
    fx_load(&f);
    static const char names[] = "y";
    kt_val o;
    int rc = kt_run_with(&f, NULL, 1, true, names, &o, 1);
    ck_assert_msg(rc == OAC_OK, "%s: %s", oac_elem_name(t), diag_dump(f.d));
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < S; s++) {
            int64_t p = c->pos == 0 ? b * S + s : c->pos == 2 ? (int64_t)pos[0] + s
                      : (int64_t)pos[b * S + s];
            for (int64_t h = 0; h < N; h++) {
                int64_t at = c->r4 ? ((b * N + h) * S + s) * H : ((b * S + s) * N + h) * H;
                double r[1024];
                memcpy(r, x + at, sizeof(double) * (size_t)H);
                ref_rope(r, rot, cs + p * half, sn + p * half, c->il);
                memcpy(want + at, r, sizeof(double) * (size_t)H);
            }
        }
    expect(&o, t, xd, want, nx, tol_of(t));
    kt_free(&o, 1);
    fx_end(&f);
    free(x), free(cs), free(sn), free(want);
}

START_TEST(rotary_forms)
{
    const rope_cfg cs[] = {
        { .B = 2, .S = 3, .N = 4, .H = 8, .pos = 1, .num_heads = true },
        { .B = 2, .S = 3, .N = 4, .H = 8, .pos = 1, .il = true, .num_heads = true },
        { .B = 2, .S = 3, .N = 4, .H = 8, .pos = 1, .r4 = true },
        { .B = 2, .S = 3, .N = 4, .H = 8, .pos = 0, .num_heads = true },
        { .B = 2, .S = 3, .N = 4, .H = 8, .pos = 1, .rot = 4, .num_heads = true, .il = true },
        { .ms = true, .B = 2, .S = 3, .N = 4, .H = 8, .pos = 1 },
        { .ms = true, .B = 2, .S = 3, .N = 4, .H = 8, .pos = 2, .il = true },
        { .ms = true, .B = 2, .S = 3, .N = 4, .H = 8, .pos = 1, .r4 = true },
        { .ms = true, .B = 2, .S = 3, .N = 4, .H = 8, .pos = 1, .rot = 4, .num_heads = true },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int j = 0; j < N_FLOAT_TYPES; j++)
            rope_case(&cs[i], float_types[j]);
}
END_TEST

START_TEST(rotary_position_out_of_range)
{
    /* One start position 10 with 3 tokens reads rows 10..12 of 12. */
    fx f;
    oac_mb *mb;
    oac_gb *g = fx_build(&f, &mb);
    oac_mb_opset(mb, "com.microsoft", 1);
    double z[96] = { 0 }, p = 10;
    kt_init(g, "x", OAC_T_FLOAT, "1,3,8", z, 24);
    kt_init(g, "cos", OAC_T_FLOAT, "12,4", z, 48);
    kt_init(g, "sin", OAC_T_FLOAT, "12,4", z, 48);
    kt_init(g, "start", OAC_T_INT64, "1", &p, 1);
    oac_gb_node(g, "RotaryEmbedding", "com.microsoft", "rope", "x,start,cos,sin", "y");
    oac_gb_output(g, "y", OAC_T_FLOAT, "1,3,8");
    fx_load(&f);
    static const char names[] = "y";
    kt_val o;
    ck_assert_int_eq(kt_run_with(&f, NULL, 1, true, names, &o, 1), OAC_ERUNTIME);
    ck_assert_ptr_nonnull(strstr(diag_expect_run(f.d, OAC_KERNEL_ERROR, "kernel-error")
                                     ->message, "'start'"));
    fx_end(&f);
}
END_TEST

/* ---- a decoder of these operators, 8 steps -------------------------- */

/* RMSNormalization -> RotaryEmbedding (q, k) -> GroupQueryAttention on
 * bound caches (in place) -> SkipSimplifiedLayerNormalization with
 * outputs 1 and 2 omitted, FLOAT16. */
static void small_decoder(fx *f)
{
    oac_mb *mb;
    oac_gb *g = fx_build(f, &mb);
    oac_mb_opset(mb, "", 23);
    oac_mb_opset(mb, "com.microsoft", 1);
    int32_t t = OAC_T_FLOAT16;
    uint32_t seed = 9;
    double x[32], w[32], cs[16 * 4], sn[16 * 4], pos = 3, sl = 3, ts = 4;
    fill(t, x, 32, &seed);
    fill(t, w, 32, &seed);
    fill(t, cs, 64, &seed);
    fill(t, sn, 64, &seed);
    kt_init(g, "x", t, "1,1,32", x, 32);
    kt_init(g, "w", t, "32", w, 32);
    kt_init(g, "cos", t, "16,4", cs, 64);
    kt_init(g, "sin", t, "16,4", sn, 64);
    kt_init(g, "pos", OAC_T_INT64, "1,1", &pos, 1);
    kt_init(g, "sl", OAC_T_INT32, "1", &sl, 1);
    kt_init(g, "ts", OAC_T_INT32, "", &ts, 1);
    oac_vi_access(g, oac_gb_input(g, "past_key", t, "1,4,16,8"), 1);
    oac_vi_access(g, oac_gb_input(g, "past_value", t, "1,4,16,8"), 1);
    oac_gb_node(g, "RMSNormalization", NULL, "norm", "x,w", "h");
    Onnx__NodeProto *n = oac_gb_node(g, "RotaryEmbedding", NULL, "rope", "h,cos,sin,pos", "qr");
    oac_node_attr_int(g, n, "num_heads", 4);
    n = oac_gb_node(g, "GroupQueryAttention", "com.microsoft", "gqa",
                    "qr,qr,h,past_key,past_value,sl,ts", "a,present_key,present_value");
    oac_node_attr_int(g, n, "num_heads", 4);
    oac_node_attr_int(g, n, "kv_num_heads", 4);
    oac_node_alias(g, n, 1, 3, 1);
    oac_node_alias(g, n, 2, 4, 1);
    oac_gb_node(g, "SkipSimplifiedLayerNormalization", "com.microsoft", "post", "a,x,w",
                "y,,,sum");
    oac_gb_output(g, "y", t, "1,1,32");
    oac_gb_output(g, "sum", t, "1,1,32");
    oac_vi_alias_of(g, oac_gb_output(g, "present_key", t, "1,4,16,8"), "past_key");
    oac_vi_alias_of(g, oac_gb_output(g, "present_value", t, "1,4,16,8"), "past_value");
    fx_load(f);
}

START_TEST(decoder_eight_steps_match_the_plan)
{
    /* Every step's peak is the plan's and the caches are never copied. */
    fx f;
    small_decoder(&f);
    static const char names[] = "y";
    kt_val o;
    ck_assert_msg(kt_run_with(&f, NULL, 8, true, names, &o, 1) == OAC_OK, "%s", diag_dump(f.d));
    ck_assert_uint_eq(f.e->steps_completed, 8);
    ck_assert_uint_eq(f.e->identity_held, 16);
    ck_assert_uint_eq(f.e->second_cache_bytes, 0);
    ck_assert(f.e->planned_peak_bytes.known);
    for (size_t s = 0; s < f.e->n_per_step; s++)
        ck_assert_uint_eq(f.e->per_step[s].alloc_bytes, f.e->per_step[0].alloc_bytes);
    ck_assert_uint_eq(o.n, 32);
    kt_free(&o, 1);
    fx_end(&f);
}
END_TEST

START_TEST(decoder_every_allocation_fails)
{
    /* The nth allocation fails, for every n until the run succeeds: each
     * attempt ends with OAC_ENOMEM and nothing leaks (ASan, valgrind). */
    bool ran = false;
    unsigned long tried = 0;
    for (unsigned long n = 1; n < 4000 && !ran; n++) {
        fx f;
        small_decoder(&f);
        ck_assert_int_eq(fx_check(&f, NULL), OAC_OK);
        oac_run_opts ro = { .steps = 2 };
        oac_ctx_fail_alloc_after(f.ctx, n);
        int rc = oac_run(f.ctx, &f.e, f.m, f.a, &ro, f.d);
        oac_ctx_fail_alloc_after(f.ctx, 0);
        if (rc == OAC_OK)
            ran = true;
        else
            ck_assert_msg(rc == OAC_ENOMEM, "n=%lu: rc %d %s %s", n, rc, oac_errmsg(f.ctx),
                          diag_dump(f.d));
        fx_end(&f);
        tried = n;
    }
    ck_assert(ran);
    /* The run allocates: some attempts failed before one succeeded. */
    ck_assert_uint_gt(tried, 10);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("kernel_attn");
    TCase *tc = tcase_create("gqa");
    tcase_add_test(tc, gqa_token_generation);
    tcase_add_test(tc, gqa_prompts);
    tcase_add_test(tc, gqa_options);
    tcase_add_test(tc, gqa_shared_buffer_steps);
    tcase_add_test(tc, gqa_seqlens_past_the_buffer);
    tcase_add_test(tc, gqa_refusals);
    ADD_CASES(tc, kernel_error_cases);
    suite_add_tcase(s, tc);
    tc = tcase_create("mha");
    tcase_add_test(tc, mha_forms);
    tcase_add_test(tc, mha_past_sequence_length_in_place);
    suite_add_tcase(s, tc);
    tc = tcase_create("attention");
    tcase_add_test(tc, attention_forms);
    tcase_add_test(tc, attention_nonpad_with_past_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("rotary");
    tcase_add_test(tc, rotary_forms);
    tcase_add_test(tc, rotary_position_out_of_range);
    suite_add_tcase(s, tc);
    tc = tcase_create("decoder");
    tcase_add_test(tc, decoder_eight_steps_match_the_plan);
    tcase_add_test(tc, decoder_every_allocation_fails);
    suite_add_tcase(s, tc);
    return s;
}

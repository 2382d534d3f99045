/* Reduced precision on the CPU (engine/forward/precision.c, the rounding hook in engine/forward/encoder.c)
 * against the independent torch reference of gen_precision.py (fixtures/).
 *
 * 1. Rounding, bit for bit: torch's bf16 / fp16 conversions of 21856 values (ties, NaN,
 *    infinities, subnormals, 65504 / 65519 / 65520, FLT_MAX, random bit patterns); every
 *    fp16 and bf16 value round-trips; every midpoint between neighbouring fp16 values rounds
 *    to the even one; the F16C path equals the scalar one on 2^22 random patterns; the
 *    overflow count.
 * 2. Forward passes of the demo model and a random BERT-shaped model in fp32, bf16, fp16:
 *    - the operands are rounded where the reference rounds them: every captured Q, K, V is
 *      a value of the format, and layer 0's Q equals the reference's rounded Q bit for bit
 *      except where the reference's unrounded value lies within the accumulation-order
 *      noise of a rounding midpoint (then one ulp apart, the two neighbours of that
 *      midpoint);
 *    - attention and hidden states agree with the reference.  Tolerance: the two forwards
 *      sum the same rounded operands in a different order (OpenBLAS vs torch), which moves
 *      a sum of n products by about n 2^-24 sum|a b| (measured: fp32 maps agree to 7e-7 on
 *      the demo model); an operand rounds to the other neighbour only when that noise
 *      straddles a midpoint (probability ~ 1e-6 / 2^-8 per value), moving it by one ulp.
 *      So the mean |difference| must stay at noise level (at most 1/20 of the mean
 *      reduced-precision effect |p_prec - p_fp32| the reference shows, and 2e-6 for fp32),
 *      and the largest one below half of the largest effect (an isolated flip moves one
 *      map by a fraction of what rounding does as a whole).
 * 3. fp16 overflow: a model whose layer-0 feed-forward activations pass 65504 and with one
 *    weight of 70000: the counts per layer and operand equal the reference's exactly (no
 *    value is within 1e-4 of the threshold, gen_precision.py checks), the layer is flagged
 *    non-finite; bf16 does not overflow there.
 * 4. Weights rounded once and kept; a toy model's copy follows its edits; ALBERT's shared
 *    layers; fp32 unchanged by the option (bit for bit with a run without it). */
#include "check.h"
#include "core/model-private.h"
#include "forward/fp16.h"
#include "forward/precision.h"
#include "common/test-floats.h"

#include <cjson/cJSON.h>
#include <stdint.h>

static char root[2048];

static bool same_bits(float a, float b) { return (isnan(a) && isnan(b)) || bits_of(a) == bits_of(b); }

static float *load_npy(const char *name, size_t *count) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/precision/fixtures/%s", root, name);
    float *data = NULL;
    int64_t shape[8];
    int ndim = 0;
    atn_error err = {0};
    if (atn_npy_read_f32(path, &data, shape, &ndim, 8, &err)) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        exit(1);
    }
    size_t c = 1;
    for (int i = 0; i < ndim; i++)
        c *= (size_t)shape[i];
    *count = c;
    return data;
}

/* ---- 1. rounding ------------------------------------------------------------------- */

static void rounding_table(void) {
    size_t count;
    float *t = load_npy("rounding.npy", &count);
    size_t rows = count / 3, bad_bf = 0, bad_h = 0, bad_arr = 0;
    float *in = malloc(rows * sizeof(float)), *out = malloc(rows * sizeof(float));
    for (size_t i = 0; i < rows; i++) {
        float x = t[3 * i], bf = t[3 * i + 1], h = t[3 * i + 2];
        in[i] = x;
        if (!same_bits(atn_round_bf16(x), bf) && bad_bf++ < 5)
            fprintf(stderr, "bf16(%08x) = %08x, torch %08x\n", bits_of(x), bits_of(atn_round_bf16(x)), bits_of(bf));
        if (!same_bits(atn_round_fp16(x), h) && bad_h++ < 5)
            fprintf(stderr, "fp16(%08x) = %08x, torch %08x\n", bits_of(x), bits_of(atn_round_fp16(x)), bits_of(h));
    }
    CHECK_MSG(bad_bf == 0, "%zu of %zu bf16 roundings differ from torch", bad_bf, rows);
    CHECK_MSG(bad_h == 0, "%zu of %zu fp16 roundings differ from torch", bad_h, rows);
    /* the array paths (F16C when present) give the same bits */
    atn_precision ps[2] = {ATN_PRECISION_BF16, ATN_PRECISION_FP16};
    for (int p = 0; p < 2; p++) {
        atn_round_array(out, in, rows, ps[p]);
        for (size_t i = 0; i < rows; i++)
            bad_arr += !same_bits(out[i], t[3 * i + 1 + p]);
    }
    CHECK_MSG(bad_arr == 0, "%zu array roundings differ from torch", bad_arr);
    CHECK(rows > 20000);
    free(in);
    free(out);
    free(t);
}

static void rounding_edges(void) {
    CHECK(atn_round_fp16(65504.0f) == 65504.0f);
    CHECK(atn_round_fp16(65519.0f) == 65504.0f);
    CHECK(atn_round_fp16(nextafterf(65520.0f, 0.0f)) == 65504.0f);
    CHECK(isinf(atn_round_fp16(65520.0f)) && atn_round_fp16(65520.0f) > 0);
    CHECK(isinf(atn_round_fp16(-65520.0f)) && atn_round_fp16(-65520.0f) < 0);
    CHECK(atn_round_fp16(ldexpf(1.0f, -25)) == 0.0f);                       /* tie to even: 0 */
    CHECK(atn_round_fp16(nextafterf(ldexpf(1.0f, -25), 1.0f)) == ldexpf(1.0f, -24));
    CHECK(atn_round_fp16(3 * ldexpf(1.0f, -25)) == ldexpf(1.0f, -23));       /* 1.5 ulp: to 2 */
    CHECK(atn_round_fp16(1.0f + ldexpf(1.0f, -11)) == 1.0f);                 /* tie: even */
    CHECK(atn_round_fp16(1.0f + 3 * ldexpf(1.0f, -11)) == 1.0f + ldexpf(1.0f, -9));
    CHECK(atn_round_bf16(1.0f + ldexpf(1.0f, -8)) == 1.0f);
    CHECK(atn_round_bf16(1.0f + 3 * ldexpf(1.0f, -8)) == 1.0f + ldexpf(1.0f, -6));
    CHECK(isinf(atn_round_bf16(3.4028234663852886e38f)));
    CHECK(isnan(atn_round_bf16(NAN)) && isnan(atn_round_fp16(NAN)));
    CHECK(isnan(atn_round_bf16(float_of(0x7f800001u))));   /* a signalling NaN stays a NaN */
    CHECK(isnan(atn_round_fp16(float_of(0x7f800001u))));
    CHECK(isinf(atn_round_bf16(INFINITY)) && isinf(atn_round_fp16(-INFINITY)));
    CHECK(atn_round_bf16(float_of(1)) == float_of(1) * 0.0f || atn_round_bf16(float_of(1)) == 0.0f);
    CHECK(bits_of(atn_round_bf16(-0.0f)) == 0x80000000u && bits_of(atn_round_fp16(-0.0f)) == 0x80000000u);

    /* every fp16 value and every bf16 value round-trips; every midpoint of two finite
       neighbouring fp16 values goes to the even one, a hair either side to the nearer */
    size_t bad = 0;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float f = atn_f16_to_f32((uint16_t)h);
        bad += !same_bits(atn_round_fp16(f), f);
        bad += atn_f32_to_f16_bits(f) != h && !isnan(f);
        float b = float_of(h << 16);
        bad += !same_bits(atn_round_bf16(b), b);
        if ((h & 0x7fffu) < 0x7bffu) {   /* h and h+1 finite and of the same sign */
            float lo = f, hi = atn_f16_to_f32((uint16_t)(h + 1));
            double mid = ((double)lo + hi) / 2;
            float m = (float)mid;    /* exact: a float has 13 more bits */
            float even = (h & 1u) ? hi : lo;
            bad += atn_round_fp16(m) != even;
            bad += atn_round_fp16(nextafterf(m, lo)) != lo;
            bad += atn_round_fp16(nextafterf(m, hi)) != hi;
        }
    }
    CHECK_MSG(bad == 0, "%zu round-trip / midpoint failures", bad);

    /* F16C (when the CPU has it) equals the scalar function on random patterns; counts */
    enum { N = 1 << 22 };
    float *x = malloc(N * sizeof(float)), *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float));
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < N; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = float_of((uint32_t)(s >> 16));
    }
    int64_t over_a = atn_round_array(a, x, N, ATN_PRECISION_FP16), over_b = atn_round_array_scalar(b, x, N,
                                                                                                 ATN_PRECISION_FP16);
    size_t diff = 0;
    int64_t want = 0;
    for (size_t i = 0; i < N; i++) {
        diff += !same_bits(a[i], b[i]);
        want += isfinite(x[i]) && fabsf(x[i]) >= 65520.0f;
    }
    CHECK_MSG(diff == 0, "F16C and scalar fp16 differ in %zu of %d values", diff, N);
    CHECK(over_a == want && over_b == want);
    fprintf(stderr, "fp16 rounding through %s; %lld of %d random patterns overflow\n",
            atn_round_uses_f16c() ? "F16C" : "the scalar path", (long long)want, N);
    float odd[3] = {70000.0f, -1e6f, 1.0f};
    CHECK(atn_round_array(odd, odd, 3, ATN_PRECISION_FP16) == 2 && isinf(odd[0]) && odd[1] < 0 && odd[2] == 1.0f);
    free(x);
    free(a);
    free(b);
}

/* ---- 2. forward passes against the reference ------------------------------------- */

static int32_t *ints(const cJSON *a, int32_t *n) {
    *n = cJSON_GetArraySize(a);
    int32_t *v = malloc((size_t)*n * sizeof *v);
    int32_t i = 0;
    for (const cJSON *e = a->child; e; e = e->next)
        v[i++] = (int32_t)e->valuedouble;
    return v;
}

static atn_model *open_case(const cJSON *c, atn_encoding **enc) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, cJSON_GetObjectItem(c, "model")->valuestring);
    atn_error err = {0};
    atn_model *m = atn_model_open(path, NULL, NULL, &err);
    if (!m) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        exit(1);
    }
    int32_t n, nt, nm;
    int32_t *ids = ints(cJSON_GetObjectItem(c, "ids"), &n), *types = ints(cJSON_GetObjectItem(c, "types"), &nt);
    int32_t *mask = ints(cJSON_GetObjectItem(c, "mask"), &nm);
    if (atn_model_encode_ids(m, ids, types, mask, n, enc, &err)) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        exit(1);
    }
    free(ids);
    free(types);
    free(mask);
    return m;
}

static const atn_capture *run_at(atn_run *r, const atn_encoding *enc, atn_precision p) {
    atn_run_options o;
    atn_run_options_init(&o);
    o.precision = p;
    atn_error err = {0};
    atn_status st = atn_run_forward(r, enc, &o, &err);
    CHECK_MSG(st == ATN_OK, "%s", err.message);
    return st == ATN_OK ? atn_run_capture(r) : NULL;
}

static bool representable(float x, atn_precision p) {
    return p == ATN_PRECISION_FP32 || same_bits(x, p == ATN_PRECISION_BF16 ? atn_round_bf16(x) : atn_round_fp16(x));
}

static double mean_abs_diff(const float *a, const float *b, size_t n, double *mx) {
    double s = 0;
    *mx = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        s += d;
        if (!(d <= *mx))
            *mx = d;
    }
    return s / (double)n;
}

static void forward_case(const char *name, const cJSON *c) {
    atn_encoding *enc;
    atn_model *m = open_case(c, &enc);
    const atn_config *cfg = atn_model_config(m);
    atn_run *r = atn_run_new(m);
    size_t n = (size_t)enc->n, d = (size_t)cfg->d_model, L = (size_t)cfg->n_layers;
    size_t na = L * cfg->n_heads * n * n, nh = (L + 1) * n * d;
    char fn[256];
    size_t cnt;
    snprintf(fn, sizeof fn, "%s-fp32-attn.npy", name);
    float *ref32 = load_npy(fn, &cnt);
    CHECK(cnt == na);
    atn_precision ps[3] = {ATN_PRECISION_FP32, ATN_PRECISION_BF16, ATN_PRECISION_FP16};
    for (int pi = 0; pi < 3; pi++) {
        atn_precision p = ps[pi];
        const char *pn = atn_precision_name(p);
        const atn_capture *cap = run_at(r, enc, p);
        if (!cap)
            continue;
        CHECK(cap->precision == p);
        CHECK(p == ATN_PRECISION_FP16 ? cap->fp16_overflow != NULL && cap->fp16_overflow_total == 0
                                      : cap->fp16_overflow == NULL);
        float *attn, *hid, *q, *qpre;
        snprintf(fn, sizeof fn, "%s-%s-attn.npy", name, pn);
        attn = load_npy(fn, &cnt);
        CHECK(cnt == na);
        snprintf(fn, sizeof fn, "%s-%s-hidden.npy", name, pn);
        hid = load_npy(fn, &cnt);
        CHECK(cnt == nh);
        snprintf(fn, sizeof fn, "%s-%s-q.npy", name, pn);
        q = load_npy(fn, &cnt);
        snprintf(fn, sizeof fn, "%s-%s-qpre.npy", name, pn);
        qpre = load_npy(fn, &cnt);
        CHECK(cnt == n * d);

        /* the operands QK^T and PV read are values of the format */
        size_t not_rep = 0;
        for (size_t i = 0; i < L * n * d; i++)
            not_rep += !representable(cap->q[i], p) + !representable(cap->k[i], p) + !representable(cap->v[i], p);
        CHECK_MSG(not_rep == 0, "%s %s: %zu captured Q/K/V values are not %s values", name, pn, not_rep, pn);

        /* layer 0's Q: the reference's rounded Q bit for bit, but at midpoints within noise */
        size_t flips = 0, unexplained = 0;
        for (size_t i = 0; i < n * d && p != ATN_PRECISION_FP32; i++) {
            if (same_bits(cap->q[i], q[i]))
                continue;
            flips++;
            double lo = fmin(cap->q[i], q[i]), hi = fmax(cap->q[i], q[i]), mid = (lo + hi) / 2;
            /* neighbours: the value 3/4 of the way from lo rounds to hi, so nothing of the
               format lies between them */
            float up = p == ATN_PRECISION_BF16 ? atn_round_bf16((float)(lo + (hi - lo) * 0.75))
                                               : atn_round_fp16((float)(lo + (hi - lo) * 0.75));
            bool adjacent = up == (float)hi;
            double noise = 1e-5 * fabs(mid) + 1e-7;
            if (!adjacent || fabs((double)qpre[i] - mid) > noise)
                unexplained++;
        }
        CHECK_MSG(unexplained == 0, "%s %s: %zu of layer 0's rounded Q differ from the reference beyond a "
                  "midpoint flip", name, pn, unexplained);
        CHECK_MSG(flips * 100 <= n * d, "%s %s: %zu midpoint flips in layer 0's Q", name, pn, flips);

        double mx, mean = mean_abs_diff(cap->attn, attn, na, &mx), effect_mx, effect = 0;
        double hmx, hmean = mean_abs_diff(cap->hidden, hid, nh, &hmx);
        if (p == ATN_PRECISION_FP32) {
            CHECK_MSG(mx <= 1e-5 && mean <= 2e-6, "%s fp32: attention max %.3g mean %.3g", name, mx, mean);
            CHECK_MSG(hmx <= 1e-4, "%s fp32: hidden max %.3g", name, hmx);
        } else {
            effect = mean_abs_diff(attn, ref32, na, &effect_mx);
            /* A midpoint flip (an fp32 value the two BLAS kernels add up in another order, on
               the other side of a rounding midpoint) makes one operand differ by an ulp of the
               format, and that difference travels through every later layer's rounding: on
               the AVX-512 VM (OpenBLAS SkylakeX) one flip in the demo's layer 0 Q gave fp16
               attention mean 1.22e-5 against a rounding effect of 3.35e-5 (0 flips on the AVX2
               VM: within effect / 20).  With a flip the run must still be nearer torch's run
               in the format than torch's fp32 run is, by half */
            double share = flips ? 2 : 20, share_mx = flips ? 1 : 2;
            CHECK_MSG(mean <= effect / share && mx <= effect_mx / share_mx,
                      "%s %s: attention vs the reference: max %.3g mean %.3g; the rounding's own effect max "
                      "%.3g mean %.3g", name, pn, mx, mean, effect_mx, effect);
            CHECK_MSG(hmean <= 1e-4, "%s %s: hidden mean %.3g", name, pn, hmean);
        }
        fprintf(stderr, "%s %s: attention vs torch max %.3g mean %.3g (rounding effect mean %.3g); hidden max "
                "%.3g mean %.3g; %zu midpoint flips in layer 0's Q\n", name, pn, mx, mean, effect, hmx, hmean,
                flips);
        free(attn);
        free(hid);
        free(q);
        free(qpre);
    }
    free(ref32);
    atn_run_free(r);
    atn_encoding_free(enc);
    atn_model_free(m);
}

/* ---- 3. fp16 overflow ---------------------------------------------------------------- */

static void overflow_case(const cJSON *c) {
    atn_encoding *enc;
    atn_model *m = open_case(c, &enc);
    const atn_config *cfg = atn_model_config(m);
    atn_run *r = atn_run_new(m);
    const atn_capture *cap = run_at(r, enc, ATN_PRECISION_FP16);
    const cJSON *want = cJSON_GetObjectItem(c, "fp16_overflow");
    CHECK(cap && cap->fp16_overflow && cJSON_GetArraySize(want) == cfg->n_layers + 1);
    int64_t total = 0;
    int row = 0;
    for (const cJSON *rw = want ? want->child : NULL; cap && cap->fp16_overflow && rw; rw = rw->next, row++) {
        int op = 0;
        for (const cJSON *e = rw->child; e; e = e->next, op++) {
            int64_t got = cap->fp16_overflow[(size_t)row * ATN_OPERAND_COUNT + op];
            CHECK_MSG(got == (int64_t)e->valuedouble, "row %d %s: %lld overflows, torch %lld", row,
                      atn_operand_name((atn_operand)op), (long long)got, (long long)e->valuedouble);
            total += (int64_t)e->valuedouble;
        }
        CHECK(op == ATN_OPERAND_COUNT);
    }
    CHECK(cap && cap->fp16_overflow_total == total && total > 50);
    CHECK(cap && cap->nonfinite_layer == 0);
    cap = run_at(r, enc, ATN_PRECISION_BF16);
    CHECK(cap && cap->fp16_overflow == NULL && cap->nonfinite_layer < 0);
    atn_run_free(r);
    atn_encoding_free(enc);
    atn_model_free(m);
}

/* ---- 4. the rounded weights' life; toy and ALBERT models; fp32 unchanged ------------- */

static void weights_and_models(const cJSON *c) {
    atn_encoding *enc;
    atn_model *m = open_case(c, &enc);
    CHECK(atn_rounded_pending_bytes(m, ATN_PRECISION_BF16) > 0);
    const atn_rounded_weights *a = atn_rounded_weights_get(m, ATN_PRECISION_BF16);
    CHECK(atn_rounded_pending_bytes(m, ATN_PRECISION_BF16) == 0);
    CHECK(atn_rounded_pending_bytes(m, ATN_PRECISION_FP16) > 0);
    CHECK(a && atn_rounded_weights_get(m, ATN_PRECISION_BF16) == a && !a->temporary);
    size_t dd = (size_t)m->cfg.d_model * m->cfg.d_model, bad = 0;
    for (size_t i = 0; a && i < dd; i++)
        bad += !same_bits(a->layers[1].wq[i], atn_round_bf16(m->w.layers[1].wq[i]));
    CHECK(bad == 0);
    CHECK(a && a->layers[0].bq == m->w.layers[0].bq && a->layers[0].ln1_g == m->w.layers[0].ln1_g);

    /* fp32 through the option is the plain run, bit for bit */
    atn_run *r1 = atn_run_new(m), *r2 = atn_run_new(m);
    const atn_capture *c1 = atn_run_forward(r1, enc, NULL, NULL) == ATN_OK ? atn_run_capture(r1) : NULL;
    const atn_capture *c2 = run_at(r2, enc, ATN_PRECISION_FP32);
    size_t na = (size_t)m->cfg.n_layers * m->cfg.n_heads * enc->n * enc->n;
    CHECK(c1 && c2 && memcmp(c1->attn, c2->attn, na * sizeof(float)) == 0);
    CHECK(c1 && c2 && memcmp(c1->hidden, c2->hidden, (size_t)(m->cfg.n_layers + 1) * enc->n * m->cfg.d_model *
                                                     sizeof(float)) == 0);
    /* a bf16 run after an fp32 run on the same run object, and back */
    const atn_capture *c3 = run_at(r2, enc, ATN_PRECISION_BF16);
    CHECK(c3 && memcmp(c1->attn, c3->attn, na * sizeof(float)) != 0);
    c2 = run_at(r2, enc, ATN_PRECISION_FP32);
    CHECK(c2 && memcmp(c1->attn, c2->attn, na * sizeof(float)) == 0);
    atn_run_options o;
    atn_run_options_init(&o);
    o.precision = (atn_precision)7;
    atn_error err = {0};
    CHECK(atn_run_forward(r2, enc, &o, &err) == ATN_E_INVALID && strstr(err.message, "precision"));
    atn_run_free(r1);
    atn_run_free(r2);
    atn_encoding_free(enc);
    atn_model_free(m);

    /* a toy model: rounded per run, so an edit shows in the next bf16 run */
    char path[4096];
    snprintf(path, sizeof path, "%s/data/models/worked-example.json", root);
    atn_model *toy = atn_model_open_toy_json(path, &err);
    CHECK_MSG(toy != NULL, "%s", err.message);
    if (toy) {
        atn_encoding *te = NULL;
        CHECK(atn_model_encode_toy(toy, NULL, &te, &err) == ATN_OK);
        atn_run *tr = atn_run_new(toy);
        const atn_capture *t1 = run_at(tr, te, ATN_PRECISION_BF16);
        float p01 = t1 ? t1->attn[1] : 0;
        /* X rounded to bf16: 1.1 -> 1.1015625, 0.1 -> 0.10009765625 ...; Q = X (W_Q = I) */
        CHECK(t1 && t1->q[1] == atn_round_bf16(1.1f) && t1->q[3] == atn_round_bf16(0.1f));
        CHECK(atn_model_toy_set(toy, ATN_TOY_WQ, 0, 0, 0, 2.0f, &err) == ATN_OK);
        const atn_capture *t2 = run_at(tr, te, ATN_PRECISION_BF16);
        CHECK(t2 && t2->attn[1] != p01 && t2->q[0] == atn_round_bf16(2.0f * atn_round_bf16(0.5f)));
        CHECK(atn_rounded_pending_bytes(toy, ATN_PRECISION_BF16) > 0);   /* never kept */
        atn_run_free(tr);
        atn_encoding_free(te);
        atn_model_free(toy);
    }

    /* ALBERT (layers share one stored layer): rounded once, every layer reads it */
    snprintf(path, sizeof path, "%s/tests/hf/models/albert-f32", root);
    atn_model *al = atn_model_open(path, NULL, NULL, &err);
    CHECK_MSG(al != NULL, "%s", err.message);
    if (al) {
        const atn_rounded_weights *rw = atn_rounded_weights_get(al, ATN_PRECISION_FP16);
        CHECK(rw && al->cfg.n_layers >= 2);
        for (int32_t l = 1; rw && l < al->cfg.n_layers; l++)
            if (al->w.layers[l].wq == al->w.layers[0].wq)
                CHECK(rw->layers[l].wq == rw->layers[0].wq);
        CHECK(rw && rw->emb_proj_w != NULL && rw->emb_proj_w != al->w.emb_proj_w);
        int32_t ids[5] = {2, 7, 9, 11, 3};
        atn_encoding *ae = NULL;
        CHECK(atn_model_encode_ids(al, ids, NULL, NULL, 5, &ae, &err) == ATN_OK);
        atn_run *ar = atn_run_new(al);
        const atn_capture *ac = ae ? run_at(ar, ae, ATN_PRECISION_FP16) : NULL;
        size_t nr = 0;
        for (size_t i = 0; ac && i < (size_t)al->cfg.n_layers * 5 * al->cfg.d_model; i++)
            nr += !representable(ac->k[i], ATN_PRECISION_FP16);
        CHECK(ac && nr == 0 && ac->nonfinite_layer < 0);
        atn_run_free(ar);
        atn_encoding_free(ae);
        atn_model_free(al);
    }
}

int main(void) {
    const char *src = getenv("ATN_SOURCE_ROOT");
    snprintf(root, sizeof root, "%s", src ? src : ".");
    rounding_table();
    rounding_edges();
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/precision/fixtures/cases.json", root);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f)
        return check_summary("precision");
    char *text = malloc(1 << 20);
    size_t len = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    text[len] = 0;
    cJSON *js = cJSON_Parse(text);
    const cJSON *cases = cJSON_GetObjectItem(js, "cases");
    forward_case("demo", cJSON_GetObjectItem(cases, "demo"));
    forward_case("rand", cJSON_GetObjectItem(cases, "rand"));
    overflow_case(cJSON_GetObjectItem(cases, "big"));
    weights_and_models(cJSON_GetObjectItem(cases, "rand"));
    cJSON_Delete(js);
    free(text);
    return check_summary("precision");
}

/* cuda-agreement's CPU half: every kernel of engine/cuda/kernels.cu, compiled for the host
 * and run block by block, thread by thread by the CPU launcher (engine/cuda/cpu-launch.cc),
 * against the reference op (engine/forward/ops-ref.c, encoder.c, precision.c, layer.c) on
 * the same inputs: bias + activation (the three activations), the embeddings sum (with and
 * without positions and types) and its LayerNorm, LayerNorm with a residual, the residual
 * add, the plain softmax with the capture and masks, the gated softmax (ALiBi, temperature,
 * heads off zero / uniform, all keys masked), the non-finite check, and the fp16 / bf16
 * casts (bit for bit, overflow, NaN, subnormals).  The launcher's pointers are host memory,
 * so the kernels read and write the test's arrays directly.
 *
 * The reference softmax is reached through the reference ops' attend (atn_ops_ref) with K
 * and V the identity of each head (k = n): then the scores are Q itself and the context is
 * the probabilities, so any score matrix can be fed to both sides. */
#include "check.h"
#include "forward/layer.h"
#include "forward/precision.h"
#include "forward/fp16.h"
#include "synth-model.h"

#include <float.h>
#include <stdint.h>

int cuda_kernels_cpu_half(char *why, size_t len);

#ifndef ATN_HAVE_HOST_KERNELS

int cuda_kernels_cpu_half(char *why, size_t len) {
    snprintf(why, len, "the CUDA module was not built (no nvcc), so kernels.cu has no host build");
    return -1;
}

#else
#include "kernels.h"

/* A deterministic value in [-1, 1). */
static float uniform(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((*s >> 40) & 0xffffff) / (float)(1 << 23) - 1.0f;
}

static float *random_array(size_t count, float scale, uint64_t seed) {
    float *x = malloc((count ? count : 1) * sizeof *x);
    for (size_t i = 0; i < count; i++)
        x[i] = scale * uniform(&seed);
    return x;
}

/* Largest |got - want| / max(1, |want|); NaN on either side counts as infinite unless both are. */
static double worst_rel(const float *got, const float *want, size_t n) {
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(got[i]) && isnan(want[i]))
            continue;
        double w = fabs((double)want[i]), d = fabs((double)got[i] - (double)want[i]) / (w > 1 ? w : 1);
        if (got[i] == want[i])
            d = 0;
        if (!(d <= worst))
            worst = isnan(d) ? INFINITY : d;
    }
    return worst;
}

static void agree(const char *what, const float *got, const float *want, size_t n, double tol) {
    double d = worst_rel(got, want, n);
    CHECK_MSG(d <= tol, "%s: the kernel differs from the reference op by %.3g (tol %g)", what, d, tol);
    fprintf(stderr, "  cpu launcher  %-44s max rel diff %.2e\n", what, d);
}

/* A walk for the reference ops over M rows of d (one sequence), no rounding. */
static atn_walk ref_walk(atn_layer_desc *desc, atn_walk_seq *seq, atn_layer_weights *lw, int32_t M) {
    atn_walk w;
    memset(&w, 0, sizeof w);
    w.desc = *desc;
    w.ops = &atn_ops_ref;
    w.layers = lw;
    w.seq = seq;
    w.count = 1;
    w.M = M;
    w.temperature = 1.0f;
    return w;
}

static void bias_activation(void) {
    const int32_t n = 13, o = 70;
    const atn_activation acts[] = {ATN_ACT_GELU, ATN_ACT_GELU_TANH, ATN_ACT_RELU};
    const char *names[] = {"bias + GELU (erf)", "bias + GELU (tanh)", "bias + ReLU"};
    float *x = random_array((size_t)n * o, 6.0f, 1), *b = random_array(o, 1.0f, 2);
    float *got = malloc((size_t)n * o * sizeof *got), *want = malloc((size_t)n * o * sizeof *want);
    for (int a = 0; a < 3; a++) {
        /* the reference: ops-ref's project with an identity weight and the bias, then act */
        atn_layer_desc desc = {.d = o, .f = o, .heads = 1, .d_head = o};
        atn_layer_weights lw = {.b1 = b};
        atn_walk w = ref_walk(&desc, NULL, &lw, n);
        w.ops->project(&w, 0, 1, want, x, 0, ATN_W_FFN_IN, NULL, (int)acts[a], o, o);
        memcpy(got, x, (size_t)n * o * sizeof *got);
        CHECK(atn_cu_bias_act(got, b, n, o, (int)acts[a], NULL) == cudaSuccess);
        agree(names[a], got, want, (size_t)n * o, 2e-6);
    }
    /* no bias, no activation: nothing to do, x untouched */
    memcpy(got, x, (size_t)n * o * sizeof *got);
    CHECK(atn_cu_bias_act(got, NULL, n, o, ATN_CU_ACT_NONE, NULL) == cudaSuccess);
    CHECK(memcmp(got, x, (size_t)n * o * sizeof *got) == 0);
    free(x), free(b), free(got), free(want);
}

static void norms_and_adds(void) {
    const int32_t dims[] = {48, 300, 768}, n = 9;
    for (int t = 0; t < 3; t++) {
        int32_t d = dims[t];
        size_t nd = (size_t)n * d;
        float *x = random_array(nd, 3.0f, 10 + t), *r = random_array(nd, 2.0f, 20 + t);
        float *g = random_array(d, 0.3f, 30 + t), *b = random_array(d, 0.2f, 40 + t);
        for (int32_t c = 0; c < d; c++)
            g[c] += 1.0f;
        for (int32_t c = 0; c < d; c++)   /* a large common offset: the two-pass variance matters */
            x[c] += 100.0f;
        float *want = malloc(nd * sizeof *want), *got = malloc(nd * sizeof *got);
        atn_layer_desc desc = {.d = d, .heads = 1, .d_head = d, .eps = 1e-12f};
        atn_walk w = ref_walk(&desc, NULL, NULL, n);
        char what[64];
        /* LayerNorm(x + r): the post-LN step, the ops' norm with a residual */
        w.ops->norm(&w, 0, 1, want, x, r, g, b);
        CHECK(atn_cu_layernorm(got, x, r, g, b, n, d, 1e-12f, NULL) == cudaSuccess);
        snprintf(what, sizeof what, "LayerNorm(x + residual), d %d", d);
        agree(what, got, want, nd, 2e-5);
        /* in place, no gain or bias (a toy model's identity norm), GPT-2's eps */
        desc.eps = 1e-5f;
        w = ref_walk(&desc, NULL, NULL, n);
        w.ops->norm(&w, 0, 1, want, x, NULL, NULL, NULL);
        memcpy(got, x, nd * sizeof *got);
        CHECK(atn_cu_layernorm(got, got, NULL, NULL, NULL, n, d, 1e-5f, NULL) == cudaSuccess);
        snprintf(what, sizeof what, "LayerNorm in place, no gain/bias, d %d", d);
        agree(what, got, want, nd, 2e-5);
        /* the residual add: the CPU's row step */
        w.ops->add(&w, 0, 1, want, x, r);
        memcpy(got, x, nd * sizeof *got);
        CHECK(atn_cu_add(got, r, nd, NULL) == cudaSuccess);
        snprintf(what, sizeof what, "residual add, d %d", d);
        CHECK(memcmp(got, want, nd * sizeof *got) == 0);   /* one float add: the same bits */
        agree(what, got, want, nd, 0);
        free(x), free(r), free(g), free(b), free(want), free(got);
    }
}

/* The embeddings of a synthetic BERT (token types) and the same read without positions, and
 * with an embedding projection's E-wide rows, against atn_cpu_embeddings. */
static void embeddings(void) {
    synth_shape sh = {"emb", 1, 40, 4, 64, 90, 64, ATN_ACT_GELU, false, false};
    atn_model *m = synth_model_new(&sh, 7);
    atn_encoding *enc = m ? synth_encoding(m, 21, 3, 8) : NULL;
    CHECK(m && enc);
    if (!enc) {
        atn_model_free(m);
        return;
    }
    int32_t n = enc->n, d = m->cfg.d_model;
    size_t nd = (size_t)n * d;
    int32_t *pos = malloc((size_t)n * sizeof *pos);
    for (int32_t i = 0; i < n; i++)   /* a shuffle's order: not 0..n-1 */
        pos[i] = (i * 7 + 3) % n;
    float *want = malloc(nd * sizeof *want), *got = malloc(nd * sizeof *got), *scratch = malloc(nd * sizeof *scratch);
    for (int np = 0; np < 2; np++) {
        atn_cpu_embeddings(want, scratch, m, enc, pos, np == 1);
        CHECK(atn_cu_embed(got, enc->ids, pos, enc->type_ids, m->w.word_emb, np ? NULL : m->w.pos_emb, m->w.type_emb,
                           n, d, NULL) == cudaSuccess);
        CHECK(atn_cu_layernorm(got, got, NULL, m->w.emb_ln_g, m->w.emb_ln_b, n, d, m->cfg.ln_eps, NULL) ==
              cudaSuccess);
        agree(np ? "embeddings without positions + LayerNorm" : "embeddings (word + pos + type) + LayerNorm", got,
              want, nd, 2e-5);
    }
    /* no token types (GPT-2's wte + wpe, no LayerNorm): the plain sum, bit for bit */
    CHECK(atn_cu_embed(got, enc->ids, pos, NULL, m->w.word_emb, m->w.pos_emb, NULL, n, d, NULL) == cudaSuccess);
    int bad = 0;
    for (int32_t i = 0; i < n; i++)
        for (int32_t c = 0; c < d; c++)
            bad += got[(size_t)i * d + c] !=
                   m->w.word_emb[(size_t)enc->ids[i] * d + c] + m->w.pos_emb[(size_t)pos[i] * d + c];
    CHECK_MSG(bad == 0, "%d of GPT-2's embedding sums differ", bad);
    free(pos), free(want), free(got), free(scratch);
    atn_encoding_free(enc);
    atn_model_free(m);
}

/* The softmax: plain, and with each of the what-if gates, on heads x n scores. */
typedef struct softmax_case {
    const char *name;
    int32_t n, heads;
    int mask;              /* 0 none, 1 padding (last 3 keys), 2 causal, 3 a query row all masked */
    bool alibi;
    float temperature;
    int off;               /* 0 no head off, 1 head 1 zero, 2 head 1 uniform */
} softmax_case;

static void softmax_one(const softmax_case *sc) {
    int32_t n = sc->n, H = sc->heads, d = H * n;
    size_t nn = (size_t)n * n;
    float *mask = calloc(nn, sizeof *mask);
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++) {
            bool masked = (sc->mask == 1 && j >= n - 3 && n > 3) || (sc->mask == 2 && j > i) ||
                          (sc->mask == 3 && i == 1);
            mask[(size_t)i * n + j] = masked ? ATN_MASK_MIN : 0.0f;
        }
    /* Q holds the scores (row i of head h at columns h n ..), K and V the identity per head */
    float *q = random_array((size_t)n * d, 8.0f, 100 + n), *k = calloc((size_t)n * d, sizeof(float)),
          *v = calloc((size_t)n * d, sizeof(float)), *ctx = calloc((size_t)n * d, sizeof(float));
    for (int32_t h = 0; h < H; h++)
        for (int32_t i = 0; i < n; i++)
            k[(size_t)i * d + h * n + i] = v[(size_t)i * d + h * n + i] = 1.0f;
    float *want = calloc((size_t)H * nn, sizeof *want), *got = malloc((size_t)H * nn * sizeof *got);
    float slopes[16];
    atn_alibi_slopes(H, slopes);
    uint8_t off[16] = {0};
    if (sc->off)
        off[1] = 1;
    atn_head_mode mode = sc->off == 2 ? ATN_HEAD_UNIFORM : ATN_HEAD_ZERO;
    bool gated = sc->alibi || sc->temperature != 1.0f || sc->off;
    atn_layer_desc desc = {.d = d, .heads = H, .d_head = n, .scale_none = true};
    atn_walk_seq seq = {.row = 0, .n = n, .attn = want, .mask = mask, .heads_off = sc->off ? off : NULL,
                        .nonfinite_layer = -1};
    atn_walk w = ref_walk(&desc, &seq, NULL, n);
    w.gated = gated;
    w.slopes = sc->alibi ? slopes : NULL;
    w.temperature = sc->temperature;
    w.head_mode = mode;
    /* the same scores for the kernel, laid out [H][n][n] as the GPU's batched QK^T writes them */
    for (int32_t h = 0; h < H; h++)
        for (int32_t i = 0; i < n; i++)
            memcpy(got + (size_t)h * nn + (size_t)i * n, q + (size_t)i * d + h * n, (size_t)n * sizeof(float));
    w.ops->attend(&w, 0, 1, 0, q, k, v, ctx);
    cudaError_t e = gated ? atn_cu_softmax_gated(got, mask, (int64_t)H * n, n, w.slopes, sc->temperature,
                                                 sc->off ? off : NULL, (int)mode, NULL)
                          : atn_cu_softmax(got, mask, (int64_t)H * n, n, NULL);
    CHECK_MSG(e == cudaSuccess, "%s: launch status %d", sc->name, (int)e);
    agree(sc->name, got, want, (size_t)H * nn, 1e-6);
    /* masked keys get exactly 0 (a query with every key masked: the reference's uniform row) */
    int bad = 0;
    for (int32_t h = 0; h < H; h++)
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = 0; j < n; j++)
                if (mask[(size_t)i * n + j] != 0.0f && sc->mask != 3)
                    bad += got[(size_t)h * nn + (size_t)i * n + j] != 0.0f;
    CHECK_MSG(bad == 0, "%s: %d masked keys got a probability", sc->name, bad);
    free(mask), free(q), free(k), free(v), free(ctx), free(want), free(got);
}

static void softmaxes(void) {
    static const softmax_case cases[] = {
        {"softmax, one token", 1, 2, 0, false, 1.0f, 0},
        {"softmax, 7 keys, padding mask", 7, 3, 1, false, 1.0f, 0},
        {"softmax, 33 keys, causal mask", 33, 5, 2, false, 1.0f, 0},
        {"softmax, 300 keys (> 256 threads), padding", 300, 2, 1, false, 1.0f, 0},
        {"gated softmax, ALiBi (causal)", 33, 4, 2, true, 1.0f, 0},
        {"gated softmax, temperature 0.5, padding", 20, 3, 1, false, 0.5f, 0},
        {"gated softmax, temperature 3 + ALiBi", 17, 8, 0, true, 3.0f, 0},
        {"gated softmax, head 1 off (zero)", 12, 3, 1, false, 1.0f, 1},
        {"gated softmax, head 1 off (uniform), causal", 12, 3, 2, false, 1.0f, 2},
        {"gated softmax, a query with every key masked", 6, 2, 3, false, 0.7f, 2},
        {"gated softmax, 300 keys, ALiBi + T 0.25", 300, 2, 1, true, 0.25f, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        softmax_one(&cases[i]);
}

static void nonfinite(void) {
    const size_t count = 5000;   /* several blocks of 256 threads */
    float *x = random_array(count, 1.0f, 3);
    int32_t flag = 0;
    CHECK(atn_cu_nonfinite(&flag, x, count, NULL) == cudaSuccess);
    CHECK_MSG(flag == 0, "finite values flagged");
    const float bad[] = {NAN, INFINITY, -INFINITY};
    const size_t where[] = {0, 2600, count - 1};
    for (int t = 0; t < 3; t++) {
        float keep = x[where[t]];
        x[where[t]] = bad[t];
        flag = 0;
        CHECK(atn_cu_nonfinite(&flag, x, count, NULL) == cudaSuccess);
        /* the reference: the CPU walk's check of one sequence's rows */
        atn_layer_desc desc = {.d = 50, .heads = 1, .d_head = 50};
        atn_walk_seq seq = {.row = 0, .n = 100, .nonfinite_layer = -1};
        atn_walk w = ref_walk(&desc, &seq, NULL, 100);
        atn_walk_check_finite(&w, 0, 1, x, 4);
        CHECK_MSG(flag == 1 && seq.nonfinite_layer == 4, "%g at %zu: kernel flag %d, reference layer %d",
                  (double)bad[t], where[t], flag, seq.nonfinite_layer);
        x[where[t]] = keep;
    }
    fprintf(stderr, "  cpu launcher  %-44s NaN, +inf, -inf found as the CPU finds them\n", "non-finite check");
    free(x);
}

static void half_casts(void) {
    const size_t count = 4096;
    float *x = random_array(count, 4.0f, 5);
    const float specials[] = {0.0f, -0.0f, 65504.0f, 65520.0f, 1e6f, -1e6f, 6e-8f, 3e-5f, 1e-40f, INFINITY,
                              -INFINITY, NAN, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 3.4e38f, 1.00390625f};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        x[i] = specials[i];
    for (size_t i = 100; i < 200; i++)   /* a spread of magnitudes */
        x[i] *= ldexpf(1.0f, (int)(i % 60) - 30);
    uint16_t *h = malloc(count * sizeof *h);
    float *got = malloc(count * sizeof *got), *want = malloc(count * sizeof *want);
    for (int bf = 0; bf < 2; bf++) {
        atn_precision p = bf ? ATN_PRECISION_BF16 : ATN_PRECISION_FP16;
        CHECK(atn_cu_to_half(h, x, count, bf, NULL) == cudaSuccess);
        for (size_t i = 0; i < count; i++)
            got[i] = bf ? atn_bf16_to_f32(h[i]) : atn_f16_to_f32(h[i]);
        atn_round_array(want, x, count, p);   /* the reference's rounding (precision.c) */
        int differ = 0;
        for (size_t i = 0; i < count; i++)
            differ += !(got[i] == want[i] || (isnan(got[i]) && isnan(want[i])));
        CHECK_MSG(differ == 0, "%s: %d of %zu casts differ from atn_round_array", bf ? "bf16" : "fp16", differ, count);
        fprintf(stderr, "  cpu launcher  %-44s %zu values, %d differ (bit for bit)\n",
                bf ? "fp32 -> bf16 cast" : "fp32 -> fp16 cast", count, differ);
    }
    free(x), free(h), free(got), free(want);
}

/* A launch the GPU would refuse is refused here too. */
static void launch_errors(void) {
    float x[4] = {0};
    /* a row kernel over rows of n: more than 2^31 rows is the launcher wrapper's refusal */
    CHECK(atn_cu_softmax(x, x, (int64_t)1 << 40, 4, NULL) == cudaErrorInvalidValue);
    CHECK(atn_cu_softmax_gated(x, x, 1, 4, NULL, 0.0f, NULL, 0, NULL) == cudaErrorInvalidValue);
    CHECK(atn_cu_softmax(x, x, 0, 4, NULL) == cudaSuccess);
}

int cuda_kernels_cpu_half(char *why, size_t len) {
    (void)why, (void)len;
    fprintf(stderr, "CPU half: kernels.cu compiled for the host, each grid run block by block and thread by thread "
                    "by the CPU launcher (engine/cuda/cpu-launch.cc), against the reference ops\n");
    bias_activation();
    norms_and_adds();
    embeddings();
    softmaxes();
    nonfinite();
    half_casts();
    launch_errors();
    fprintf(stderr, "CPU half: %d checks, %d failed\n", check_count, check_failures);
    return check_failures;
}

#endif

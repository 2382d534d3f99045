/* cuda-agreement, in two halves.
 *
 * The CPU half (kernels-cpu.c) runs every kernel of engine/cuda/kernels.cu, compiled for the
 * host, on the CPU launcher against the reference ops: wherever nvcc built the module, GPU
 * or not.  The whole CUDA walk on the CPU launcher (cuBLAS and cudart stood in for) is the
 * same program with --mock (meson: cuda-mock-host-logic).
 *
 * The device half is the GPU against the CPU: the same capture (every probability, hidden
 * state and trace input) within 1e-4 in fp32, on the torch-checked toy models and on
 * synthetic BERT shapes with odd head counts, padding masks, identity projections and missing
 * biases, GPT-2 (pre-LN, causal), ALBERT / ELECTRA's embedding projection, the what-if
 * gates and a forward from a middle layer; also the per-layer bookkeeping (reused runs of
 * other lengths, runs that keep less, cancelling, a layer that turns NaN, editing a toy
 * model between runs, two threads on one model).  fp16 / bf16 report how far each head's map moves from fp32 and must stay within a
 * loose bound.  Without a usable GPU it is not run, and says so.
 *
 * Exit: 0 when every half that ran passed; 77 (skipped) when neither could run, or with
 * --device-only when there is no GPU.
 * Usage: test-cuda-agreement [--module PATH] [--mock] [--quick] [--device-only]
 *   --module       load this module (ATTNSCOPE_CUDA_MODULE) instead of the one found
 *   --mock         the module is the CPU stand-in (tests/cuda/mock-cuda.c): the device half
 *                  on the CPU launcher; skip the big shapes (the stand-in's products are naive
 *                  loops) and the CPU half
 *   --device-only  the device half alone (meson: cuda-agreement-device; gpu-check.sh) */
#include "check.h"
#include "forward/backend.h"
#include "forward/run.h"
#include "core/family.h"
#include "synth-model.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>

static bool mock, quick, device_only;

int cuda_kernels_cpu_half(char *why, size_t len);   /* kernels-cpu.c: failures, or -1 when it cannot run */

/* Max |got - want| / max(1, |want|) over n values; NaN counts as infinite. */
static double rel_diff(const float *got, const float *want, size_t n, size_t *where) {
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double w = fabs((double)want[i]), d = fabs((double)got[i] - (double)want[i]) / (w > 1 ? w : 1);
        if (!(d <= worst)) {
            worst = isnan(d) ? INFINITY : d;
            *where = i;
        }
    }
    return worst;
}

static void compare_tensor(const char *what, const char *name, const float *got, const float *want, size_t n,
                           double tol) {
    if (!got || !want) {
        CHECK_MSG(!got && !want, "%s: %s present on one side only", what, name);
        return;
    }
    size_t at = 0;
    double d = rel_diff(got, want, n, &at);
    CHECK_MSG(d <= tol, "%s: %s differs by %.3g at %zu (gpu %.8g, cpu %.8g; tol %g)", what, name, d, at, got[at],
              want[at], tol);
}

/* Runs enc on both devices with the same options and compares the whole capture. */
static void agree(const atn_model *m, const atn_encoding *enc, const atn_run_options *base, const char *what) {
    atn_run_options o = *base;
    atn_error err = {0};
    atn_run *rc = atn_run_new(m), *rg = atn_run_new(m);
    o.device = ATN_DEVICE_CPU;
    CHECK_MSG(atn_run_forward(rc, enc, &o, &err) == ATN_OK, "%s: cpu: %s", what, err.message);
    o.device = ATN_DEVICE_CUDA;
    CHECK_MSG(atn_run_forward(rg, enc, &o, &err) == ATN_OK, "%s: cuda: %s", what, err.message);
    CHECK(atn_run_device_used(rg) == ATN_DEVICE_CUDA);
    const atn_capture *c = atn_run_capture(rc), *g = atn_run_capture(rg);
    if (c && g) {
        size_t L = (size_t)c->n_layers, n = (size_t)c->n, nd = n * c->d_model;
        compare_tensor(what, "attention", g->attn, c->attn, L * c->n_heads * n * n, 1e-4);
        compare_tensor(what, "hidden", g->hidden, c->hidden, (L + 1) * nd, 1e-4);
        compare_tensor(what, "q", g->q, c->q, L * nd, 1e-4);
        compare_tensor(what, "k", g->k, c->k, L * nd, 1e-4);
        compare_tensor(what, "v", g->v, c->v, L * nd, 1e-4);
        compare_tensor(what, "ctx", g->ctx, c->ctx, L * nd, 1e-4);
        compare_tensor(what, "attn_out", g->attn_out, c->attn_out, L * nd, 1e-4);
        CHECK_MSG(g->nonfinite_layer == c->nonfinite_layer, "%s: nonfinite_layer gpu %d cpu %d", what,
                  g->nonfinite_layer, c->nonfinite_layer);
        CHECK(g->has_trace_inputs == c->has_trace_inputs);
        if (g->attn && !base->interventions) {   /* padded keys get exactly 0, as on the CPU (a what-if
                                                     mask may leave a padded query no key: uniform) */
            int bad = 0;
            for (size_t r = 0; r < L * c->n_heads * n; r++)
                for (size_t j = 0; j < n; j++)
                    bad += !enc->mask[j] && g->attn[r * n + j] != 0.0f;
            CHECK_MSG(bad == 0, "%s: %d probabilities of masked keys are not 0", what, bad);
        }
    }
    fprintf(stderr, "  fp32 %-34s %s\n", what, check_failures ? "(failures so far)" : "agrees");
    atn_run_free(rc);
    atn_run_free(rg);
}

static void precision_report(const atn_model *m, const atn_encoding *enc, atn_precision p, const char *what) {
    const atn_config *c = &m->cfg;
    size_t lh = (size_t)c->n_layers * c->n_heads;
    float *mx = calloc(lh, sizeof *mx), *mean = calloc(lh, sizeof *mean);
    atn_error err = {0};
    const char *pname = p == ATN_PRECISION_FP16 ? "fp16" : "bf16";
    /* loose bounds: fp16 keeps 11 significant bits, bf16 8; products accumulate in fp32 */
    double max_tol = p == ATN_PRECISION_FP16 ? 2e-2 : 1e-1, mean_tol = p == ATN_PRECISION_FP16 ? 1e-3 : 1e-2;
    atn_status st = atn_compare_precision(m, enc, p, mx, mean, &err);
    CHECK_MSG(st == ATN_OK, "%s %s: %s", what, pname, err.message);
    if (st == ATN_OK) {
        double worst = 0, avg = 0;
        fprintf(stderr, "  %s %s: |p - p_fp32| per head (layer.head max/mean):", pname, what);
        for (size_t i = 0; i < lh; i++) {
            if (i % 6 == 0)
                fprintf(stderr, "\n   ");
            fprintf(stderr, " %zu.%zu %.2e/%.2e", i / c->n_heads, i % c->n_heads, mx[i], mean[i]);
            worst = mx[i] > worst ? mx[i] : worst;
            avg += mean[i] / (double)lh;
            CHECK_MSG(mx[i] <= max_tol && mean[i] <= mean_tol, "%s %s: head %zu.%zu moves by max %.3g mean %.3g",
                      what, pname, i / c->n_heads, i % c->n_heads, mx[i], mean[i]);
        }
        fprintf(stderr, "\n  %s %s: worst head max %.3e, mean over heads %.3e (bounds %.0e / %.0e)\n", pname, what,
                worst, avg, max_tol, mean_tol);
    }
    free(mx);
    free(mean);
}

static bool cancel_second(double fraction, atn_stage stage, void *user_data) {
    (void)fraction, (void)stage;
    return ++*(int *)user_data < 2;
}

static const char *const fixtures[] = {"small-relu", "odd-heads-gelu", "five-heads-masked", "wide-one-head-masked",
                                       "seven-heads-3-layers", NULL};

static void toy_cases(const atn_run_options *o) {
    const char *root = getenv("ATN_SOURCE_ROOT");
    char path[1024];
    atn_error err = {0};
    for (int t = 0; fixtures[t]; t++) {
        snprintf(path, sizeof path, "%s/tests/reference/fixtures/%s.json", root ? root : ".", fixtures[t]);
        atn_model *m = atn_model_open(path, NULL, NULL, &err);
        CHECK_MSG(m != NULL, "%s", err.message);
        if (!m)
            continue;
        int32_t mask[256];
        int nm = 0, v;
        snprintf(path, sizeof path, "%s/tests/reference/fixtures/%s.mask", root ? root : ".", fixtures[t]);
        FILE *f = fopen(path, "r");
        while (f && nm < 256 && fscanf(f, "%d,", &v) == 1)
            mask[nm++] = v;
        if (f)
            fclose(f);
        atn_encoding *enc = NULL;
        CHECK(atn_model_encode_toy(m, nm ? mask : NULL, &enc, &err) == ATN_OK);
        if (enc)
            agree(m, enc, o, fixtures[t]);
        atn_encoding_free(enc);
        atn_model_free(m);
    }

    /* identity projections; then a cell edited between runs reaches the GPU too */
    atn_model *we = atn_model_open("worked-example", NULL, NULL, &err);
    CHECK_MSG(we != NULL, "%s", err.message);
    if (we) {
        atn_encoding *enc = NULL;
        int32_t mask[3] = {1, 1, 0};
        CHECK(atn_model_encode_toy(we, mask, &enc, &err) == ATN_OK);
        agree(we, enc, o, "worked-example (identity)");
        CHECK(atn_model_toy_set(we, ATN_TOY_WQ, 0, 0, 1, 0.75f, &err) == ATN_OK);
        CHECK(atn_model_toy_set(we, ATN_TOY_X, 0, 1, 2, -0.5f, &err) == ATN_OK);
        agree(we, enc, o, "worked-example (edited)");
        atn_encoding_free(enc);
        atn_model_free(we);
    }
}

/* The families beyond BERT's layout, from tests/hf/models: GPT-2 (pre-LN, causal, ln_f,
 * Conv1D; with scale_attn_by_inverse_layer_idx), ALBERT (shared layers, E-wide embeddings
 * projected to d), ELECTRA's discriminator (projection). */
static void family_cases(const atn_run_options *o) {
    static const char *const models[] = {"gpt2-f32", "gpt2-scaled5", "albert-f32", "electra-disc", NULL};
    const char *root = getenv("ATN_SOURCE_ROOT");
    for (int t = 0; models[t]; t++) {
        char path[1024];
        atn_error err = {0};
        snprintf(path, sizeof path, "%s/tests/hf/models/%s", root ? root : ".", models[t]);
        atn_model *m = atn_model_open(path, NULL, NULL, &err);
        CHECK_MSG(m != NULL, "%s: %s", models[t], err.message);
        if (!m)
            continue;
        int32_t ids[9] = {5, 11, 12, 13, 14, 15, 16, 17, 6}, mask[9] = {1, 1, 1, 1, 1, 1, 1, 0, 0}, types[9] = {0};
        atn_encoding *enc = NULL;
        CHECK_MSG(atn_model_encode_ids(m, ids, types, mask, 9, &enc, &err) == ATN_OK, "%s: %s", models[t],
                  err.message);
        if (enc)
            agree(m, enc, o, models[t]);
        atn_encoding_free(enc);
        atn_model_free(m);
    }
}

/* The what-if terms on the GPU's gated softmax and embeddings: heads off (zero, uniform),
 * ALiBi, temperature, no positions, a shuffle, per-layer masks. */
static void whatif_cases(void) {
    synth_shape sh = {"whatif", 3, 40, 5, 64, 80, 64, ATN_ACT_GELU, false, false};
    atn_model *m = synth_model_new(&sh, 31);
    CHECK(m != NULL);
    if (!m)
        return;
    atn_encoding *enc = synth_encoding(m, 19, 3, 4);
    uint8_t off[15] = {0}, layers[3] = {1, 0, 1};
    off[1 * 5 + 2] = off[2 * 5 + 0] = 1;
    for (int t = 0; t < 6; t++) {
        atn_interventions iv;
        atn_interventions_init(&iv);
        const char *what = "";
        switch (t) {
        case 0: iv.heads_off = off, iv.head_mode = ATN_HEAD_ZERO, what = "what-if: heads off (zero)"; break;
        case 1: iv.heads_off = off, iv.head_mode = ATN_HEAD_UNIFORM, what = "what-if: heads off (uniform)"; break;
        case 2: iv.alibi = true, iv.causal = true, what = "what-if: ALiBi + causal"; break;
        case 3: iv.temperature = 0.4f, iv.window = 2, what = "what-if: temperature 0.4 + window 2"; break;
        case 4: iv.no_positions = true, iv.shuffle = false, what = "what-if: no positions"; break;
        case 5: iv.causal = true, iv.mask_layers = layers, iv.shuffle = true, iv.shuffle_seed = 7,
                what = "what-if: causal in layers 0,2 + shuffle"; break;
        }
        atn_run_options o;
        atn_run_options_init(&o);
        o.interventions = &iv;
        agree(m, enc, &o, what);
    }
    atn_encoding_free(enc);
    atn_model_free(m);
}

/* atn_run_forward_from (importance's reuse of the lower layers): from a CPU base capture,
 * layers 1.. again with a head of layer 2 off, on both devices; the layers run agree. */
static void from_layer_case(void) {
    synth_shape sh = {"from-layer", 4, 40, 5, 64, 80, 64, ATN_ACT_GELU, false, false};
    atn_model *m = synth_model_new(&sh, 41);
    CHECK(m != NULL);
    if (!m)
        return;
    atn_encoding *enc = synth_encoding(m, 17, 2, 5);
    atn_error err = {0};
    atn_run *base = atn_run_new(m), *rc = atn_run_new(m), *rg = atn_run_new(m);
    CHECK(atn_run_forward(base, enc, NULL, &err) == ATN_OK);
    uint8_t off[20] = {0};
    off[2 * 5 + 3] = 1;
    atn_interventions iv;
    atn_interventions_init(&iv);
    iv.heads_off = off;
    atn_run_options o;
    atn_run_options_init(&o);
    o.interventions = &iv;
    o.device = ATN_DEVICE_CPU;
    CHECK_MSG(atn_run_forward_from(rc, enc, &o, atn_run_capture(base), 1, &err) == ATN_OK, "cpu: %s", err.message);
    o.device = ATN_DEVICE_CUDA;
    CHECK_MSG(atn_run_forward_from(rg, enc, &o, atn_run_capture(base), 1, &err) == ATN_OK, "cuda: %s", err.message);
    CHECK(atn_run_device_used(rg) == ATN_DEVICE_CUDA);
    const atn_capture *c = atn_run_capture(rc), *g = atn_run_capture(rg);
    if (c && g) {
        size_t n = (size_t)c->n, nd = n * 40, nn = n * n;
        /* hidden[0..1] given, layers 1..3 run: hidden[2..4], their attention and trace inputs */
        compare_tensor("from layer 1", "hidden", g->hidden, c->hidden, 5 * nd, 1e-4);
        compare_tensor("from layer 1", "attention", g->attn + 5 * nn, c->attn + 5 * nn, 3 * 5 * nn, 1e-4);
        compare_tensor("from layer 1", "ctx", g->ctx + nd, c->ctx + nd, 3 * nd, 1e-4);
        int zero = 0;
        for (size_t i = 0; i < nn; i++)
            zero += g->attn[(2 * 5 + 3) * nn + i] == 0.0f;
        CHECK_MSG(zero == (int)nn, "the head switched off in layer 2 has %zu non-zero cells", nn - (size_t)zero);
        CHECK(g->nonfinite_layer == c->nonfinite_layer);
    }
    fprintf(stderr, "  fp32 %-34s %s\n", "forward from layer 1 (a head off)", check_failures ? "(failures so far)"
                                                                                               : "agrees");
    atn_run_free(base);
    atn_run_free(rc);
    atn_run_free(rg);
    atn_encoding_free(enc);
    atn_model_free(m);
}

typedef struct synth_case {
    synth_shape shape;
    int32_t n, n_pad;
    bool big;   /* skipped with --mock / --quick */
} synth_case;

static const synth_case cases[] = {
    {{"tiny-3-heads", 2, 12, 3, 20, 40, 16, ATN_ACT_GELU, false, false}, 7, 2, false},
    {{"5-heads-gelu-tanh", 3, 40, 5, 64, 80, 64, ATN_ACT_GELU_TANH, false, false}, 33, 5, false},
    {{"7-heads-relu", 2, 56, 7, 100, 80, 64, ATN_ACT_RELU, false, false}, 50, 0, false},
    {{"1-head-one-real-token", 1, 32, 1, 48, 40, 32, ATN_ACT_GELU, false, false}, 17, 16, false},
    {{"6-heads-no-biases", 2, 48, 6, 96, 60, 32, ATN_ACT_GELU, true, false}, 20, 3, false},
    {{"4-heads-identity-qkv", 2, 24, 4, 40, 30, 16, ATN_ACT_GELU, false, true}, 9, 1, false},
    {{"bert-base-width-2-layers", 2, 768, 12, 3072, 1000, 512, ATN_ACT_GELU, false, false}, 128, 28, true},
    {{"long-odd-length", 1, 64, 4, 128, 500, 512, ATN_ACT_GELU, false, false}, 301, 7, true},
    {{"bert-large-width-1-layer", 1, 1024, 16, 4096, 1000, 512, ATN_ACT_GELU, false, false}, 200, 0, true},
};

static void synth_cases(const atn_run_options *o) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const synth_case *sc = &cases[i];
        if (sc->big && (mock || quick))
            continue;
        atn_model *m = synth_model_new(&sc->shape, 1000 + i);
        CHECK(m != NULL);
        atn_encoding *enc = m ? synth_encoding(m, sc->n, sc->n_pad, 77 + i) : NULL;
        CHECK(enc != NULL);
        if (enc)
            agree(m, enc, o, sc->shape.name);
        atn_encoding_free(enc);
        atn_model_free(m);
    }
}

/* One run object through several lengths (the device block grows and is reused), the
 * strides of a run that keeps less, cancelling, and a layer that turns NaN. */
static void bookkeeping(void) {
    synth_shape sh = {"bookkeeping", 3, 40, 5, 64, 80, 128, ATN_ACT_GELU, false, false};
    atn_model *m = synth_model_new(&sh, 5);
    CHECK(m != NULL);
    if (!m)
        return;
    atn_error err = {0};
    atn_run_options o;
    atn_run_options_init(&o);
    atn_run *cpu = atn_run_new(m), *gpu = atn_run_new(m);
    const int32_t lengths[] = {10, 100, 3, 64};
    for (int t = 0; t < 4; t++) {
        atn_encoding *enc = synth_encoding(m, lengths[t], t, 300 + t);
        o.device = ATN_DEVICE_CPU;
        CHECK(atn_run_forward(cpu, enc, &o, &err) == ATN_OK);
        o.device = ATN_DEVICE_CUDA;
        CHECK_MSG(atn_run_forward(gpu, enc, &o, &err) == ATN_OK, "%s", err.message);
        const atn_capture *c = atn_run_capture(cpu), *g = atn_run_capture(gpu);
        if (c && g) {
            size_t n = (size_t)c->n;
            char what[64];
            snprintf(what, sizeof what, "reused run, %d tokens", lengths[t]);
            compare_tensor(what, "attention", g->attn, c->attn, 3 * 5 * n * n, 1e-4);
            compare_tensor(what, "hidden", g->hidden, c->hidden, 4 * n * 40, 1e-4);
            compare_tensor(what, "ctx", g->ctx, c->ctx, 3 * n * 40, 1e-4);
        }
        atn_encoding_free(enc);
    }
    fprintf(stderr, "  reused run through 10, 100, 3, 64 tokens: %s\n", check_failures ? "failures" : "agrees");

    atn_encoding *enc = synth_encoding(m, 21, 4, 9);
    atn_run_options_init(&o);
    for (int keep = 0; keep < 3; keep++) {
        o.keep_attention = keep != 1;
        o.keep_trace_inputs = keep != 2;
        agree(m, enc, &o, keep == 0 ? "keeps everything" : keep == 1 ? "keeps no attention" : "keeps no trace");
    }

    atn_run_options_init(&o);
    o.device = ATN_DEVICE_CUDA;
    int calls = 0;
    o.progress = cancel_second;
    o.user_data = &calls;
    atn_status st = atn_run_forward(gpu, enc, &o, &err);
    CHECK_MSG(st == ATN_E_CANCELLED, "cancel: status %d (%s)", st, err.message);
    o.progress = NULL;
    CHECK_MSG(atn_run_forward(gpu, enc, &o, &err) == ATN_OK, "after a cancel: %s", err.message);
    fprintf(stderr, "  cancel at layer 1, then run again: %s\n", st == ATN_E_CANCELLED ? "ok" : "FAILED");

    /* a NaN in layer 1's value bias: both devices report layer 1 */
    ((float *)m->w.layers[1].bv)[3] = NAN;
    atn_run_options_init(&o);
    atn_run_free(cpu);
    atn_run_free(gpu);
    cpu = atn_run_new(m), gpu = atn_run_new(m);
    /* a fresh model state: the weights were uploaded before the change */
    m->backend_state_free(m->backend_state);
    m->backend_state = NULL;
    m->backend_state_free = NULL;
    CHECK(atn_run_forward(cpu, enc, &o, &err) == ATN_OK);
    o.device = ATN_DEVICE_CUDA;
    CHECK_MSG(atn_run_forward(gpu, enc, &o, &err) == ATN_OK, "%s", err.message);
    if (atn_run_capture(cpu) && atn_run_capture(gpu)) {
        int a = atn_run_capture(cpu)->nonfinite_layer, b = atn_run_capture(gpu)->nonfinite_layer;
        CHECK_MSG(a == 1 && b == 1, "nonfinite_layer cpu %d gpu %d, expected 1", a, b);
        fprintf(stderr, "  NaN in layer 1: cpu says %d, gpu says %d\n", a, b);
    }
    atn_encoding_free(enc);
    atn_run_free(cpu);
    atn_run_free(gpu);
    atn_model_free(m);
}

/* Two threads run one fresh model at once: the upload happens once, runs take turns on the
 * model's GPU state, and each gets its own right answer. */
typedef struct worker {
    const atn_model *m;
    const atn_encoding *enc;
    const float *want;   /* the CPU's attention */
    size_t count;
    int bad;
} worker;

static void *work(void *arg) {
    worker *w = arg;
    atn_run_options o;
    atn_run_options_init(&o);
    o.device = ATN_DEVICE_CUDA;
    atn_run *r = atn_run_new(w->m);
    for (int i = 0; i < 3; i++) {
        atn_error err = {0};
        if (atn_run_forward(r, w->enc, &o, &err) != ATN_OK) {
            fprintf(stderr, "thread: %s\n", err.message);
            w->bad++;
            continue;
        }
        size_t at = 0;
        if (rel_diff(atn_run_capture(r)->attn, w->want, w->count, &at) > 1e-4)
            w->bad++;
    }
    atn_run_free(r);
    return NULL;
}

static void concurrent(void) {
    synth_shape sh = {"threads", 2, 32, 4, 64, 50, 64, ATN_ACT_GELU, false, false};
    atn_model *m = synth_model_new(&sh, 99);
    CHECK(m != NULL);
    if (!m)
        return;
    worker w[2];
    atn_run *cpu[2];
    atn_encoding *enc[2];
    for (int t = 0; t < 2; t++) {
        enc[t] = synth_encoding(m, t ? 30 : 11, t, 50 + t);
        cpu[t] = atn_run_new(m);
        CHECK(atn_run_forward(cpu[t], enc[t], NULL, NULL) == ATN_OK);
        const atn_capture *c = atn_run_capture(cpu[t]);
        w[t] = (worker){m, enc[t], c->attn, (size_t)2 * 4 * c->n * c->n, 0};
    }
    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        CHECK(pthread_create(&th[t], NULL, work, &w[t]) == 0);
    for (int t = 0; t < 2; t++) {
        pthread_join(th[t], NULL);
        CHECK_MSG(w[t].bad == 0, "thread %d: %d runs went wrong", t, w[t].bad);
        atn_run_free(cpu[t]);
        atn_encoding_free(enc[t]);
    }
    fprintf(stderr, "  two threads, one model, 3 runs each: %s\n", w[0].bad + w[1].bad ? "FAILED" : "agrees");
    atn_model_free(m);
}

/* atn_run_options.pinned_host: a run reused through several lengths keeps one page-locked
 * block while it is big enough, grows it when not, gives the same capture as the CPU, and
 * frees it with the run.  With the mock, its counters say what was allocated; with
 * ATN_MOCK_CUDA_PINNED=0 (pinning refused) the run falls back to plain memory. */
static void pinned_cases(void) {
    synth_shape sh = {"pinned", 2, 40, 5, 64, 80, 64, ATN_ACT_GELU, false, false};
    atn_model *m = synth_model_new(&sh, 9);
    CHECK(m != NULL);
    if (!m)
        return;
    void (*counts)(int *, int *) = NULL;
    void *h = mock ? dlopen(atn_backend_cuda_module_path(), RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (h)
        counts = (void (*)(int *, int *))dlsym(h, "atn_mock_cuda_pinned_counts");
    CHECK(!mock || counts != NULL);
    atn_run_options o;
    atn_run_options_init(&o);
    o.pinned_host = true;
    atn_encoding *first = synth_encoding(m, 12, 2, 3);
    agree(m, first, &o, "pinned, a fresh run");
    atn_encoding_free(first);
    int a0 = 0, live0 = 0, a = 0, live = 0;
    if (counts)
        counts(&a0, &live0);
    atn_run_options cpu = o;
    cpu.device = ATN_DEVICE_CPU;
    o.device = ATN_DEVICE_CUDA;
    atn_run *rg = atn_run_new(m);
    const int32_t lengths[] = {20, 33, 9, 33};
    const int allocs_after[] = {1, 2, 2, 2};   /* grows at 33, then reuses */
    for (int i = 0; i < 4; i++) {
        atn_encoding *enc = synth_encoding(m, lengths[i], i, 50 + i);
        atn_run *rc = atn_run_new(m);
        atn_error err = {0};
        CHECK_MSG(atn_run_forward(rg, enc, &o, &err) == ATN_OK, "pinned n=%d: %s", lengths[i], err.message);
        CHECK(atn_run_forward(rc, enc, &cpu, &err) == ATN_OK);
        const atn_capture *g = atn_run_capture(rg), *c = atn_run_capture(rc);
        if (g && c) {
            size_t n = (size_t)c->n;
            compare_tensor("pinned reuse", "attention", g->attn, c->attn, (size_t)c->n_layers * c->n_heads * n * n,
                           1e-4);
            compare_tensor("pinned reuse", "hidden", g->hidden, c->hidden, (size_t)(c->n_layers + 1) * n * c->d_model,
                           1e-4);
        }
        if (counts) {
            counts(&a, &live);
            const char *refused = getenv("ATN_MOCK_CUDA_PINNED");
            bool off = refused && !strcmp(refused, "0");
            CHECK_MSG(a - a0 == (off ? 0 : allocs_after[i]), "n=%d: %d page-locked blocks allocated", lengths[i],
                      a - a0);
            CHECK_MSG(live - live0 == (off ? 0 : 1), "n=%d: %d page-locked blocks live", lengths[i], live - live0);
        }
        atn_run_free(rc);
        atn_encoding_free(enc);
    }
    atn_run_free(rg);
    if (counts) {
        counts(&a, &live);
        CHECK_MSG(live == live0, "%d page-locked blocks left after the runs were freed", live - live0);
    }
    const char *refused = getenv("ATN_MOCK_CUDA_PINNED");
    fprintf(stderr, "  pinned host memory: %s\n",
            !counts ? "captures agree"
            : refused && !strcmp(refused, "0") ? "refused by the mock: plain memory used, captures agree"
                                               : "allocated, reused, grown and freed as expected");
    atn_model_free(m);
}

/* The inputs the engine decides once per run on the host (engine/forward/run.c): the position ids
 * of the model family's rule and the [n][n] additive mask.  Both devices' captures carry
 * the same mask, padded keys get ATN_MASK_MIN in every query row, the trace reads it; and
 * with the mock, the arrays its embedding and softmax kernels were given are these, bit
 * for bit (the backend has no other source for them). */
static void host_inputs_cases(void) {
    synth_shape sh = {"inputs", 2, 48, 3, 64, 90, 40, ATN_ACT_GELU, false, false};
    atn_model *m = synth_model_new(&sh, 21);
    CHECK(m != NULL);
    if (!m)
        return;
    void (*seen)(const int32_t **, int32_t *, const float **, size_t *) = NULL;
    void *h = mock ? dlopen(atn_backend_cuda_module_path(), RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (h)
        seen = (void (*)(const int32_t **, int32_t *, const float **, size_t *))dlsym(h, "atn_mock_cuda_seen_inputs");
    CHECK(!mock || seen != NULL);
    const int32_t n = 29, n_pad = 7;
    atn_encoding *enc = synth_encoding(m, n, n_pad, 77);
    atn_run_options o;
    atn_run_options_init(&o);
    atn_run *rc = atn_run_new(m), *rg = atn_run_new(m);
    atn_error err = {0};
    CHECK(atn_run_forward(rc, enc, &o, &err) == ATN_OK);
    o.device = ATN_DEVICE_CUDA;
    CHECK_MSG(atn_run_forward(rg, enc, &o, &err) == ATN_OK, "%s", err.message);
    const atn_capture *c = atn_run_capture(rc), *g = atn_run_capture(rg);
    if (c && g) {
        size_t nn = (size_t)n * n;
        CHECK(c->mask_add && g->mask_add && memcmp(c->mask_add, g->mask_add, nn * sizeof(float)) == 0);
        int bad = 0;
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = 0; j < n; j++)
                bad += g->mask_add[(size_t)i * n + j] != (enc->mask[j] ? 0.0f : ATN_MASK_MIN);
        CHECK_MSG(bad == 0, "%d mask entries differ from the padding mask", bad);
        atn_trace *t = NULL;
        CHECK(atn_trace_compute(m, g, 1, 2, n - 1, &t, &err) == ATN_OK);
        if (t) {
            for (int32_t j = 0; j < n; j++)
                bad += t->mask_term[j] != (double)g->mask_add[(size_t)(n - 1) * n + j];
            CHECK_MSG(bad == 0 && t->mask_term[n - 1] == (double)ATN_MASK_MIN, "the trace's mask_term is not the "
                      "capture's mask");
            atn_trace_free(t);
        }
        if (seen) {
            const int32_t *pos;
            const float *mask;
            int32_t n_pos = 0;
            size_t n_mask = 0;
            seen(&pos, &n_pos, &mask, &n_mask);
            int32_t want[29];
            atn_family_position_ids(m->family, &m->cfg, enc, want);
            CHECK_MSG(n_pos == n && pos && memcmp(pos, want, sizeof want) == 0, "the embeddings kernel got %d "
                      "position ids, not the family's %d", n_pos, n);
            CHECK_MSG(n_mask == nn && mask && memcmp(mask, g->mask_add, nn * sizeof(float)) == 0,
                      "the softmax kernel got a mask of %zu floats, not the run's %zu", n_mask, nn);
        }
    }
    fprintf(stderr, "  host inputs: %s\n", seen ? "position ids and the [n][n] mask reach the kernels as built"
                                                : "both captures carry the same [n][n] mask");
    atn_run_free(rc);
    atn_run_free(rg);
    atn_encoding_free(enc);
    atn_model_free(m);
}

static void precision_cases(void) {
    const char *root = getenv("ATN_SOURCE_ROOT");
    char path[1024];
    atn_error err = {0};
    snprintf(path, sizeof path, "%s/tests/reference/fixtures/five-heads-masked.json", root ? root : ".");
    atn_model *toy = atn_model_open(path, NULL, NULL, &err);
    if (toy) {
        int32_t mask[9] = {1, 1, 1, 1, 1, 1, 0, 0, 0};
        atn_encoding *enc = NULL;
        CHECK(atn_model_encode_toy(toy, mask, &enc, &err) == ATN_OK);
        precision_report(toy, enc, ATN_PRECISION_FP16, "five-heads-masked");
        precision_report(toy, enc, ATN_PRECISION_BF16, "five-heads-masked");
        atn_encoding_free(enc);
        atn_model_free(toy);
    }
    synth_shape sh = mock || quick ? (synth_shape){"small", 2, 64, 4, 128, 100, 64, ATN_ACT_GELU, false, false}
                                   : (synth_shape){"bert-base", 12, 768, 12, 3072, 30522, 512, ATN_ACT_GELU, false,
                                                   false};
    atn_model *m = synth_model_new(&sh, 2024);
    CHECK(m != NULL);
    if (!m)
        return;
    atn_encoding *enc = synth_encoding(m, mock || quick ? 24 : 128, 4, 3);
    precision_report(m, enc, ATN_PRECISION_FP16, sh.name);
    precision_report(m, enc, ATN_PRECISION_BF16, sh.name);
    atn_encoding_free(enc);
    atn_model_free(m);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--module") && i + 1 < argc)
            setenv("ATTNSCOPE_CUDA_MODULE", argv[++i], 1);
        else if (!strcmp(argv[i], "--mock"))
            mock = true;
        else if (!strcmp(argv[i], "--quick"))
            quick = true;
        else if (!strcmp(argv[i], "--device-only"))
            device_only = true;
        else {
            fprintf(stderr, "usage: %s [--module PATH] [--mock] [--quick] [--device-only]\n", argv[0]);
            return 2;
        }
    }
    int cpu_half = -1;
    char why[256] = "";
    if (!mock && !device_only) {
        cpu_half = cuda_kernels_cpu_half(why, sizeof why);
        if (cpu_half < 0)
            fprintf(stderr, "CPU half: not run: %s\n", why);
    }
    atn_error err = {0};
    const atn_backend *b = atn_backend_cuda(&err);
    if (!b) {
        fprintf(stderr, "device half: NOT RUN -- no usable GPU here, so no kernel ran on a GPU: %s\n", err.message);
        if (cpu_half < 0) {
            fprintf(stderr, "SKIP: neither half could run here\n");
            return 77;
        }
        fprintf(stderr, "cuda-agreement: CPU half %s; device half not run\n", cpu_half ? "FAILED" : "passed");
        return cpu_half ? 1 : 0;
    }
    atn_backend_device dev;
    if (b->device_info(0, &dev, &err) == ATN_OK)
        fprintf(stderr, "GPU 0: %s, compute capability %d.%d, %s\nmodule: %s\n", dev.name, dev.cc_major,
                dev.cc_minor, dev.runtime, atn_backend_cuda_module_path());
    if (mock)
        fprintf(stderr, "NOTE: the module is the CPU stand-in for CUDA (tests/cuda/mock-cuda.c): this checks the "
                        "backend's host logic and kernels.cu's arithmetic on the CPU launcher, not a GPU\n");
    atn_run_options o;
    atn_run_options_init(&o);
    toy_cases(&o);
    synth_cases(&o);
    family_cases(&o);
    whatif_cases();
    from_layer_case();
    bookkeeping();
    pinned_cases();
    host_inputs_cases();
    concurrent();
    precision_cases();
    if (cpu_half > 0)
        check_failures += cpu_half;
    return check_summary(mock ? "cuda-agreement (mock CUDA: the device half on the CPU launcher)"
                              : "cuda-agreement (device half on a GPU)");
}

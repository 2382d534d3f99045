/* When the GPU cannot be used: --device cuda fails with ATN_E_DEVICE and a message that
 * names the problem, and --device auto gives exactly the CPU's capture and keeps that
 * message as the reason (atn_run_fallback_reason).
 * Usage: test-cuda-fallback NEEDLE MODULE [NAME=VALUE ...]
 *   MODULE is put in ATTNSCOPE_CUDA_MODULE (the real module, the mock one, or a missing
 *   file), the NAME=VALUE pairs in the environment, before the backend is first asked for;
 *   NEEDLE is a piece of the expected message ("CUDA module is missing", ...). */
#include "check.h"
#include "forward/backend.h"
#include "synth-model.h"

static const char *needle;

static bool same(const float *a, const float *b, size_t n) { return (!a && !b) || (a && b && !memcmp(a, b, n * 4)); }

static void check_model(atn_model *m, const int32_t *toy_mask, const char *what) {
    atn_error err = {0};
    atn_encoding *enc = NULL;
    if (atn_model_kind_of(m) == ATN_MODEL_TOY)
        CHECK(atn_model_encode_toy(m, toy_mask, &enc, &err) == ATN_OK);
    else
        enc = synth_encoding(m, 24, 5, 7);
    CHECK(enc != NULL);
    if (!enc)
        return;
    atn_run *cpu = atn_run_new(m), *gpu = atn_run_new(m), *aut = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    /* fp16 everywhere: the CPU rounds as the GPU would (engine/forward/precision.c), so AUTO's fallback
       must give the CPU's own fp16 numbers */
    o.precision = ATN_PRECISION_FP16;
    CHECK_MSG(atn_run_forward(cpu, enc, &o, &err) == ATN_OK, "%s: %s", what, err.message);
    CHECK(atn_run_fallback_reason(cpu) == NULL);   /* asked for the CPU: no fallback */

    o.device = ATN_DEVICE_CUDA;
    for (int twice = 0; twice < 2; twice++) {   /* the second answer comes from the cache */
        atn_error gerr = {0};
        atn_status st = atn_run_forward(gpu, enc, &o, &gerr);
        CHECK_MSG(st == ATN_E_DEVICE, "%s: --device cuda gave status %d (%s)", what, st, gerr.message);
        CHECK_MSG(strstr(gerr.message, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what, gerr.message, needle);
        CHECK(atn_run_capture(gpu) == NULL);
        CHECK(atn_run_fallback_reason(gpu) == NULL);   /* CUDA outright fails, it does not fall back */
        if (!twice)
            fprintf(stderr, "%s: --device cuda: %s\n", what, gerr.message);
    }
    o.device = ATN_DEVICE_AUTO;
    CHECK_MSG(atn_run_forward(aut, enc, &o, &err) == ATN_OK, "%s: auto: %s", what, err.message);
    CHECK(atn_run_device_used(aut) == ATN_DEVICE_CPU);
    const char *why = atn_run_fallback_reason(aut);
    CHECK_MSG(why && strstr(why, needle), "%s: auto fell back with reason \"%s\", expected \"%s\"", what,
              why ? why : "(none)", needle);
    /* the reason is the last forward's: a CPU run on the same run object clears it */
    o.device = ATN_DEVICE_CPU;
    CHECK(atn_run_forward(aut, enc, &o, &err) == ATN_OK && atn_run_fallback_reason(aut) == NULL);
    o.device = ATN_DEVICE_AUTO;
    CHECK(atn_run_forward(aut, enc, &o, &err) == ATN_OK && atn_run_fallback_reason(aut) != NULL);
    CHECK(atn_run_fallback_reason(NULL) == NULL);
    CHECK(atn_run_device_used(cpu) == ATN_DEVICE_CPU);
    const atn_capture *a = atn_run_capture(cpu), *b = atn_run_capture(aut);
    if (a && b) {
        size_t L = (size_t)a->n_layers, nd = (size_t)a->n * a->d_model;
        CHECK(same(a->attn, b->attn, L * a->n_heads * a->n * a->n));
        CHECK(same(a->hidden, b->hidden, (L + 1) * nd));
        CHECK(same(a->q, b->q, L * nd) && same(a->k, b->k, L * nd) && same(a->v, b->v, L * nd));
        CHECK(same(a->ctx, b->ctx, L * nd) && same(a->attn_out, b->attn_out, L * nd));
        CHECK(a->nonfinite_layer == b->nonfinite_layer);
    }
    float mx[64], mean[64];
    if ((size_t)m->cfg.n_layers * m->cfg.n_heads <= 64) {
        atn_error perr = {0};
        CHECK(atn_compare_precision(m, enc, ATN_PRECISION_FP16, mx, mean, &perr) == ATN_E_DEVICE);
        CHECK(strstr(perr.message, needle) != NULL);
    }
    atn_run_free(cpu);
    atn_run_free(gpu);
    atn_run_free(aut);
    atn_encoding_free(enc);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s NEEDLE MODULE [NAME=VALUE ...]\n", argv[0]);
        return 2;
    }
    needle = argv[1];
    setenv("ATTNSCOPE_CUDA_MODULE", argv[2], 1);
    for (int i = 3; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (eq) {
            *eq = 0;
            setenv(argv[i], eq + 1, 1);
        }
    }
    const char *root = getenv("ATN_SOURCE_ROOT");
    char path[1024];
    atn_error err = {0};

    atn_model *we = atn_model_open("worked-example", NULL, NULL, &err);
    CHECK_MSG(we != NULL, "%s", err.message);
    if (we) {
        int32_t mask[3] = {1, 1, 0};
        check_model(we, mask, "worked-example");
        atn_model_free(we);
    }
    snprintf(path, sizeof path, "%s/tests/reference/fixtures/five-heads-masked.json", root ? root : ".");
    atn_model *toy = atn_model_open(path, NULL, NULL, &err);
    CHECK_MSG(toy != NULL, "%s", err.message);
    if (toy) {
        int32_t mask[9] = {1, 1, 1, 1, 1, 1, 0, 0, 0};
        check_model(toy, mask, "five-heads-masked");
        atn_model_free(toy);
    }
    synth_shape sh = {"synthetic", 2, 48, 6, 96, 50, 64, ATN_ACT_GELU, false, false};
    atn_model *syn = synth_model_new(&sh, 11);
    CHECK(syn != NULL);
    if (syn) {
        check_model(syn, NULL, "synthetic");
        atn_model_free(syn);
    }
    return check_summary("cuda-fallback");
}

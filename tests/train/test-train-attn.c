/* The training lab's attention variants (engine/train/train-attn-variants.c) beyond their
 * gradients (those are train-grads, against torch):
 *  - which keys each query sees, read from the probe's attention (a hidden cell is exactly
 *    0, a seen one positive), against patterns written out by hand from the definitions:
 *    Longformer in a decoder (window 1, [CLS] and position 5 global) and in an encoder,
 *    chunked blocks of 3;
 *  - Linformer's attention is [heads][n][k], each row a distribution over the k projected
 *    keys; it has no induction score, is refused by atn_trainer_save naming it, and its E and
 *    F are tensors of their own;
 *  - bad knobs are ATN_E_INVALID naming the option;
 *  - a saved window or Longformer model (GPT-2 or BERT folder) run with the what-if
 *    --window W --global-tokens has the trainer's attention (within 2e-6), as
 *    docs/training.md says;
 *  - each variant learns the copy task (6 symbols of 6, 2 layers, d_model 32, 300 steps),
 *    and its mask decides what can be learnt: a decoder's answer y_i is predicted at query
 *    L+1+i from key 1+i, 7 tokens back.  Longformer with window 2 copies only when those
 *    keys are global (--globals first:7: >= 0.9; none: near chance 1/6); chunks of 10 keep
 *    query and key together for i = 0, 1, 2 only (7..9 with 1..3), so the accuracy is about
 *    3/6 + 3/6 x 1/6 = 0.58, one chunk of 14 copies everything; a Linformer encoder with
 *    k = 8 copies through its projections, in FP32 and in BF16 (its projections rounded). */
#include "check.h"
#include "train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atn_train_options small(bool decoder, atn_train_attn attn) {
    atn_train_options o;
    atn_train_options_init(&o);
    o.decoder = decoder;
    o.norm = decoder ? ATN_TRAIN_PRE_LN : ATN_TRAIN_POST_LN;
    o.attention = attn;
    o.layers = 2, o.d_model = 32, o.heads = 4, o.batch = 16;
    o.task = ATN_TASK_COPY, o.length = 6, o.symbols = 6;
    o.lr = 3e-3f, o.seed = 7;
    return o;
}

/* The probe's layer-0 head-0 attention as a pattern: '.' seen (> 0), 'x' hidden (== 0). */
static void check_pattern(const char *what, atn_train_options o, const char *const *want) {
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(&o, &err);
    CHECK_MSG(t != NULL, "%s: %s", what, err.message);
    if (!t)
        return;
    int32_t n = atn_trainer_tokens(t), ids[64];
    for (int32_t i = 0; i < n; i++)
        ids[i] = 5 + i % 4;
    CHECK(atn_trainer_probe(t, ids, n, &err) == ATN_OK);
    CHECK(atn_trainer_attention_keys(t) == n);
    for (int32_t l = 0; l < o.layers; l++)
        for (int32_t h = 0; h < o.heads; h++) {
            const float *p = atn_trainer_attention(t, l, NULL) + (size_t)h * n * n;
            for (int32_t i = 0; i < n; i++) {
                char row[65];
                for (int32_t j = 0; j < n; j++)
                    row[j] = p[(size_t)i * n + j] > 0 ? '.' : p[(size_t)i * n + j] == 0 ? 'x' : '?';
                row[n] = 0;
                CHECK_MSG(!strcmp(row, want[i]), "%s: layer %d head %d row %d: %s, want %s", what, (int)l, (int)h,
                          (int)i, row, want[i]);
            }
        }
    atn_trainer_free(t);
}

static void test_patterns(void) {
    /* copy of 3: [CLS] x x x [SEP] y y y, n = 8 */
    atn_train_options o = small(true, ATN_ATTN_LONGFORMER);
    o.length = 3, o.window = 1, o.global_first = 1, o.n_globals = 1, o.globals[0] = 5;
    /* causal; |i - j| <= 1; key 0 and key 5 seen by every later query; query 0 and 5 see all
       earlier keys */
    const char *const dec[] = {".xxxxxxx", "..xxxxxx", "...xxxxx", ".x..xxxx",
                               ".xx..xxx", "......xx", ".xxxx..x", ".xxxx..."};
    check_pattern("longformer decoder", o, dec);
    o = small(false, ATN_ATTN_LONGFORMER);
    o.length = 3, o.window = 1, o.global_first = 0, o.n_globals = 2, o.globals[0] = 3, o.globals[1] = 6;
    const char *const enc[] = {"..x.xx.x", "....xx.x", "x...xx.x", "........",
                               "xxx....x", "xxx....x", "........", "xxx.xx.."};
    check_pattern("longformer encoder", o, enc);
    o = small(false, ATN_ATTN_CHUNKED);
    o.length = 3, o.chunk = 3;
    const char *const chunk[] = {"...xxxxx", "...xxxxx", "...xxxxx", "xxx...xx",
                                 "xxx...xx", "xxx...xx", "xxxxxx..", "xxxxxx.."};
    check_pattern("chunked encoder", o, chunk);
    o = small(true, ATN_ATTN_CHUNKED);
    o.length = 3, o.chunk = 3;
    const char *const cdec[] = {".xxxxxxx", "..xxxxxx", "...xxxxx", "xxx.xxxx",
                                "xxx..xxx", "xxx...xx", "xxxxxx.x", "xxxxxx.."};
    check_pattern("chunked decoder", o, cdec);
}

static void test_linformer(const char *dir) {
    atn_train_options o = small(false, ATN_ATTN_LINFORMER);
    o.length = 3, o.linformer_k = 3;
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(&o, &err);
    CHECK_MSG(t != NULL, "%s", err.message);
    if (!t)
        return;
    int32_t n = atn_trainer_tokens(t), ids[8] = {2, 5, 6, 7, 3, 5, 6, 7};
    CHECK(n == 8 && atn_trainer_attention_keys(t) == 3);
    CHECK(atn_trainer_probe(t, ids, n, &err) == ATN_OK);
    for (int32_t l = 0; l < 2; l++) {
        const float *p = atn_trainer_attention(t, l, NULL);
        for (int32_t r = 0; r < o.heads * n; r++) {
            double sum = 0;
            for (int32_t c = 0; c < 3; c++) {
                sum += p[(size_t)r * 3 + c];
                CHECK(p[(size_t)r * 3 + c] > 0);
            }
            CHECK_MSG(fabs(sum - 1) < 1e-6, "layer %d row %d sums to %.8f", (int)l, (int)r, sum);
        }
    }
    float ind[8];
    CHECK(atn_trainer_induction_scores(t, ind) == 0);
    for (int i = 0; i < 8; i++)
        CHECK(ind[i] == 0);
    /* E and F by name, [k][n] */
    int64_t shape[2];
    int found = 0;
    for (int32_t i = 0; i < atn_trainer_tensor_count(t); i++) {
        const char *name = atn_trainer_tensor_name(t, i, shape, NULL);
        if (strstr(name, "linformer_")) {
            found++;
            CHECK(shape[0] == 3 && shape[1] == 8);
        }
    }
    CHECK(found == 4);
    CHECK(atn_trainer_save(t, dir, &err) == ATN_E_UNSUPPORTED);
    CHECK_MSG(strstr(err.message, "--attention linformer") != NULL, "%s", err.message);
    CHECK(atn_train_options_check(&o, false, &err) == ATN_OK);
    CHECK(atn_train_options_check(&o, true, &err) == ATN_E_UNSUPPORTED);
    atn_trainer_free(t);
}

static void expect_invalid(const char *what, atn_train_options o, const char *option) {
    atn_error err = {0};
    CHECK_MSG(atn_train_options_check(&o, false, &err) == ATN_E_INVALID, "%s: accepted", what);
    CHECK_MSG(strstr(err.message, option) != NULL, "%s: \"%s\" does not name %s", what, err.message, option);
    atn_trainer *t = atn_trainer_new(&o, &err);
    CHECK(t == NULL);
}

static void test_bad_knobs(void) {
    atn_train_options o = small(true, ATN_ATTN_LONGFORMER);   /* n = 14 */
    o.n_globals = 1, o.globals[0] = 14;
    expect_invalid("global outside", o, "--globals");
    o.globals[0] = -1;
    expect_invalid("global negative", o, "--globals");
    o = small(true, ATN_ATTN_LONGFORMER);
    o.global_first = 15;
    expect_invalid("first 15 of 14", o, "--globals");
    o = small(true, ATN_ATTN_CHUNKED);
    o.chunk = 0;
    expect_invalid("chunk 0", o, "--chunk");
    o = small(false, ATN_ATTN_LINFORMER);
    o.linformer_k = 15;
    expect_invalid("k 15 of 14", o, "--linformer-k");
    o.linformer_k = 0;
    expect_invalid("k 0", o, "--linformer-k");
    o = small(true, ATN_ATTN_LINFORMER);
    expect_invalid("linformer decoder", o, "--attention linformer");
    o = small(false, ATN_ATTN_LINFORMER);
    o.positions = ATN_POS_ALIBI;
    expect_invalid("linformer alibi", o, "--attention linformer");
}

/* Trains 20 steps, saves, opens the folder and runs it with the what-if window and global
 * tokens: every layer's attention is the trainer's on the same ids. */
static void test_saved_runs_as_whatif(bool decoder, atn_train_attn attn, const char *dir) {
    atn_train_options o = small(decoder, attn);
    o.window = 2, o.global_first = 0, o.n_globals = 2, o.globals[0] = 0, o.globals[1] = 9;
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(&o, &err);
    CHECK(t != NULL);
    if (!t)
        return;
    atn_train_stats st;
    for (int s = 0; s < 20; s++) {
        CHECK(atn_trainer_compute(t, &st, &err) == ATN_OK);
        CHECK(atn_trainer_update(t, &st, &err) == ATN_OK);
    }
    CHECK_MSG(atn_trainer_save(t, dir, &err) == ATN_OK, "%s", err.message);
    int32_t n = atn_trainer_tokens(t), ids[64];
    for (int32_t i = 0; i < n; i++)
        ids[i] = 5 + (i * 7 + 3) % 6;
    ids[0] = 2, ids[n / 2] = 3;
    CHECK(atn_trainer_probe(t, ids, n, &err) == ATN_OK);
    atn_model *m = atn_model_open(dir, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s: %s", dir, err.message);
    atn_encoding *enc = NULL;
    if (m)
        CHECK(atn_model_encode_ids(m, ids, NULL, NULL, n, &enc, &err) == ATN_OK);
    if (m && enc) {
        atn_run *run = atn_run_new(m);
        atn_run_options ro;
        atn_run_options_init(&ro);
        atn_interventions iv;
        atn_interventions_init(&iv);
        iv.window = o.window;
        if (attn == ATN_ATTN_LONGFORMER)
            iv.global_tokens = o.globals, iv.n_global = o.n_globals;
        ro.interventions = &iv;
        CHECK_MSG(atn_run_forward(run, enc, &ro, &err) == ATN_OK, "%s", err.message);
        const atn_capture *cap = atn_run_capture(run);
        for (int32_t l = 0; l < o.layers && cap; l++) {
            char what[96];
            snprintf(what, sizeof what, "%s %s layer %d attention", decoder ? "gpt2" : "bert",
                     attn == ATN_ATTN_LONGFORMER ? "longformer" : "window", (int)l);
            CHECK_ARRAY_NEAR(what, cap->attn + (size_t)l * o.heads * n * n, atn_trainer_attention(t, l, NULL),
                             (size_t)o.heads * n * n, 2e-6);
        }
        atn_run_free(run);
    }
    atn_encoding_free(enc);
    atn_model_free(m);
    atn_trainer_free(t);
}

/* Trains steps, then the mean accuracy on 4 fresh batches. */
static double learn(const char *what, atn_train_options o, int steps) {
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(&o, &err);
    CHECK_MSG(t != NULL, "%s: %s", what, err.message);
    if (!t)
        return 0;
    atn_train_stats st;
    for (int s = 0; s < steps; s++) {
        CHECK(atn_trainer_compute(t, &st, &err) == ATN_OK);
        CHECK(atn_trainer_update(t, &st, &err) == ATN_OK);
    }
    double acc = 0;
    for (int k = 0; k < 4; k++) {
        CHECK(atn_trainer_compute(t, &st, &err) == ATN_OK);
        acc += st.accuracy / 4.0;
    }
    fprintf(stderr, "%s: accuracy %.3f after %d steps\n", what, acc, steps);
    atn_trainer_free(t);
    return acc;
}

static void test_learns(void) {
    atn_train_options o = small(true, ATN_ATTN_LONGFORMER);
    o.window = 2, o.global_first = 7;
    double a = learn("longformer decoder, window 2, globals first:7", o, 300);
    CHECK_MSG(a >= 0.9, "%.3f", a);
    o.global_first = 0;
    a = learn("longformer decoder, window 2, no globals", o, 300);
    CHECK_MSG(a < 0.35, "%.3f", a);
    o = small(true, ATN_ATTN_CHUNKED);
    o.chunk = 14;
    a = learn("chunked decoder, one chunk of 14", o, 300);
    CHECK_MSG(a >= 0.9, "%.3f", a);
    o.chunk = 10;
    a = learn("chunked decoder, chunks of 10", o, 300);
    CHECK_MSG(a > 0.45 && a < 0.72, "%.3f (want about 0.58)", a);
    o = small(false, ATN_ATTN_LINFORMER);
    o.linformer_k = 8;
    a = learn("linformer encoder, k 8", o, 300);
    CHECK_MSG(a >= 0.9, "%.3f", a);
    o.precision = ATN_PRECISION_BF16;
    a = learn("linformer encoder, k 8, bf16", o, 300);
    CHECK_MSG(a >= 0.9, "%.3f", a);
}

int main(void) {
    char dir[] = "/tmp/attnscope-train-attn-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char sub[300];
    snprintf(sub, sizeof sub, "%s/linformer", dir);
    test_patterns();
    test_linformer(sub);
    test_bad_knobs();
    snprintf(sub, sizeof sub, "%s/dec-longformer", dir);
    test_saved_runs_as_whatif(true, ATN_ATTN_LONGFORMER, sub);
    snprintf(sub, sizeof sub, "%s/enc-longformer", dir);
    test_saved_runs_as_whatif(false, ATN_ATTN_LONGFORMER, sub);
    snprintf(sub, sizeof sub, "%s/enc-window", dir);
    test_saved_runs_as_whatif(false, ATN_ATTN_WINDOW, sub);
    test_learns();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_summary("train-attn");
}

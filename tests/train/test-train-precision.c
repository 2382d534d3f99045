/* Mixed-precision training (engine/train/train-precision.c):
 *  - the loss scaler, by hand: GradScaler's update rule step by step, and an injected
 *    overflow in a real FP16 step (the scale set so high that the first product's rounded
 *    gradient is inf): the step is skipped (weights and AdamW's state unchanged bit for
 *    bit), the scale halves, one skipped step is counted; the next good step updates;
 *  - an overflow in the forward (a weight above 65504): a NaN loss is no error in fp16,
 *    the step is skipped;
 *  - BF16 and FP16 (scale 2^16) loss and gradients of gen_grads.py's model against
 *    tests/train/precision.json (gen_precision.py: torch float32 with the same rounding,
 *    written from scratch as a torch.autograd.Function), and a BF16 BERT with Linformer
 *    attention (its projections E K and F V rounded as every product), within 1e-4 of each gradient's
 *    largest value; the same gradients without rounding differ from the reference by
 *    more than 10x that in every case, so the test sees the rounding;
 *  - `test-train-precision copy bf16|fp16` (meson tests train-copy-bf16 / -fp16): a small
 *    decoder still learns the copy task (>= 99% on fresh batches). */
#include "check.h"
#include "common/test-files.h"
#include "train/train-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* gen_grads.py's weight() (as test-train-grads.c). */
static void formula(const char *name, float *w, size_t count) {
    unsigned j = 0;
    for (const char *c = name; *c; c++)
        j += (unsigned char)*c;
    j %= 97;
    size_t len = strlen(name);
    bool gain = (len > 16 && !strcmp(name + len - 16, "LayerNorm.weight")) ||
                (strstr(name, ".ln_") && len > 7 && !strcmp(name + len - 7, ".weight"));
    for (size_t k = 0; k < count; k++) {
        double v = 0.3 * sin(0.37 * (double)k + 1.1 * j);
        w[k] = (float)(gain ? 1.0 + 0.1 * v : v);
    }
}

static atn_train_options tiny(atn_precision p) {
    atn_train_options o;
    atn_train_options_init(&o);
    o.layers = 2, o.d_model = 16, o.heads = 2, o.batch = 4, o.length = 4, o.symbols = 4;
    o.precision = p;
    return o;
}

/* GradScaler's _amp_update_scale_ by hand. */
static void test_scaler_rule(void) {
    atn_tr_scaler s;
    atn_tr_scaler_init(&s);
    CHECK(s.scale == 65536.0f && s.growth == 2.0f && s.backoff == 0.5f && s.interval == 2000);
    atn_tr_scaler_update(&s, true);   /* overflow: 65536 * 0.5 */
    CHECK(s.scale == 32768.0f && s.tracker == 0);
    s.interval = 3;
    atn_tr_scaler_update(&s, false), atn_tr_scaler_update(&s, false);
    CHECK(s.scale == 32768.0f && s.tracker == 2);
    atn_tr_scaler_update(&s, false);   /* the third good step in a row: x2 */
    CHECK(s.scale == 65536.0f && s.tracker == 0);
    atn_tr_scaler_update(&s, false), atn_tr_scaler_update(&s, true);   /* an overflow resets the count */
    CHECK(s.scale == 32768.0f && s.tracker == 0);
    s.scale = 3e38f, s.tracker = 2;   /* growth past FLT_MAX is not taken */
    atn_tr_scaler_update(&s, false);
    CHECK(s.scale == 3e38f && s.tracker == 0);
}

/* An overflow injected into a real FP16 step. */
static void test_scaler_skip(void) {
    atn_train_options o = tiny(ATN_PRECISION_FP16);
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(&o, &err);
    CHECK_MSG(t != NULL, "%s", err.message);
    if (!t)
        return;
    atn_train_stats st;
    /* one good step first, so AdamW's moments are not zero */
    CHECK(atn_trainer_compute(t, &st, &err) == ATN_OK && atn_trainer_update(t, &st, &err) == ATN_OK);
    CHECK(st.loss_scale == 65536.0f && !st.overflow && st.skipped_steps == 0 && t->optim_steps == 1);
    size_t bytes = 4 * t->total * sizeof(float);
    float *before = malloc(bytes);
    memcpy(before, t->arena, bytes);
    /* dlogits x 2^120 rounds to inf in fp16 (above 65504) in the head's first product */
    t->scaler.scale = 0x1p120f;
    CHECK(atn_trainer_compute(t, &st, &err) == ATN_OK);
    CHECK_MSG(st.overflow && isfinite(st.loss) && st.loss_scale == 0x1p120f, "overflow %d loss %g", st.overflow,
              st.loss);
    CHECK(atn_trainer_update(t, &st, &err) == ATN_OK);
    CHECK_MSG(st.skipped_steps == 1, "skipped %d", st.skipped_steps);
    CHECK(t->scaler.scale == 0x1p119f && t->scaler.tracker == 0);
    CHECK(t->optim_steps == 1 && atn_trainer_steps_done(t) == 2);
    /* the parameters, Adam's m and v unchanged bit for bit (the gradients are the step's) */
    CHECK(!memcmp(before, t->arena, t->total * sizeof(float)));
    CHECK(!memcmp(before + 2 * t->total, t->arena + 2 * t->total, 2 * t->total * sizeof(float)));
    /* the default scale again: the step is taken */
    t->scaler.scale = 65536.0f;
    CHECK(atn_trainer_compute(t, &st, &err) == ATN_OK && atn_trainer_update(t, &st, &err) == ATN_OK);
    CHECK(!st.overflow && st.skipped_steps == 1 && t->optim_steps == 2 && t->scaler.tracker == 1);
    CHECK(memcmp(before, t->arena, t->total * sizeof(float)) != 0);
    free(before);
    atn_trainer_free(t);
}

/* An overflow in the forward: a weight above fp16's largest (65504) rounds to inf in its
 * product, the loss is not finite, compute says so without an error and update skips the
 * step (GradScaler sees inf gradients alike); in fp32 the same weights are a plain error. */
static void test_forward_overflow(void) {
    atn_error err = {0};
    for (int fp16 = 1; fp16 >= 0; fp16--) {
        atn_train_options o = tiny(fp16 ? ATN_PRECISION_FP16 : ATN_PRECISION_FP32);
        atn_trainer *t = atn_trainer_new(&o, &err);
        CHECK(t != NULL);
        if (!t)
            return;
        float *w = t->params[t->layers[0].wq].p;
        for (int32_t k = 0; k < o.d_model * o.d_model; k++)
            w[k] = k % 2 ? 1e5f : -1e5f;
        float before = w[0];
        atn_train_stats st;
        atn_status s = atn_trainer_compute(t, &st, &err);
        if (fp16) {
            CHECK_MSG(s == ATN_OK && st.overflow && !isfinite(st.loss), "fp16: status %d overflow %d loss %g", (int)s,
                      st.overflow, st.loss);
            CHECK(atn_trainer_update(t, &st, &err) == ATN_OK);
            CHECK(st.skipped_steps == 1 && w[0] == before && t->scaler.scale == 32768.0f);
        } else {
            CHECK_MSG(s == ATN_E_INVALID || (isfinite(st.loss) && !st.overflow), "fp32: status %d loss %g", (int)s,
                      st.loss);
        }
        atn_trainer_free(t);
    }
}

static double check_case(const cJSON *sizes, const cJSON *c) {
    const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
    const char *prec = cJSON_GetObjectItem(c, "precision")->valuestring;
    atn_train_options o;
    atn_train_options_init(&o);
    o.decoder = cJSON_IsTrue(cJSON_GetObjectItem(c, "decoder"));
    o.norm = !strcmp(cJSON_GetObjectItem(c, "norm")->valuestring, "pre") ? ATN_TRAIN_PRE_LN : ATN_TRAIN_POST_LN;
    o.positions = !strcmp(cJSON_GetObjectItem(c, "positions")->valuestring, "rotary") ? ATN_POS_ROTARY
                                                                                        : ATN_POS_LEARNED;
    const cJSON *lin_k = cJSON_GetObjectItem(c, "linformer_k");
    o.attention = lin_k && lin_k->valueint ? ATN_ATTN_LINFORMER : ATN_ATTN_FULL;
    o.linformer_k = lin_k && lin_k->valueint ? lin_k->valueint : o.linformer_k;
    o.precision = !strcmp(prec, "bf16") ? ATN_PRECISION_BF16 : ATN_PRECISION_FP16;
    o.length = cJSON_GetObjectItem(sizes, "length")->valueint, o.symbols = cJSON_GetObjectItem(sizes, "symbols")->valueint;
    o.d_model = cJSON_GetObjectItem(sizes, "d_model")->valueint, o.heads = cJSON_GetObjectItem(sizes, "heads")->valueint;
    o.d_ffn = cJSON_GetObjectItem(sizes, "d_ffn")->valueint, o.layers = cJSON_GetObjectItem(sizes, "layers")->valueint;
    o.batch = cJSON_GetObjectItem(sizes, "batch")->valueint;
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(&o, &err);
    CHECK_MSG(t != NULL, "%s: %s", name, err.message);
    if (!t)
        return 0;
    for (int32_t i = 0; i < atn_trainer_tensor_count(t); i++) {
        int64_t shape[2];
        const char *tn = atn_trainer_tensor_name(t, i, shape, NULL);
        if (t->params[t->tensors[i].parts[0]].fixed)
            continue;
        size_t count = (size_t)(shape[0] * shape[1]);
        float *w = malloc(count * sizeof(float));
        formula(tn, w, count);
        CHECK(atn_trainer_tensor_set(t, tn, w, count, &err) == ATN_OK);
        free(w);
    }
    int32_t nids = 0, nlab = 0;
    int32_t *ids = json_ints(cJSON_GetObjectItem(c, "ids"), &nids);
    int32_t *labels = json_ints(cJSON_GetObjectItem(c, "labels"), &nlab);
    CHECK(atn_trainer_set_batch(t, ids, labels, o.batch, t->n, &err) == ATN_OK);
    atn_train_stats st;
    CHECK(atn_trainer_compute(t, &st, &err) == ATN_OK);
    double want = cJSON_GetObjectItem(c, "loss")->valuedouble, want32 = cJSON_GetObjectItem(c, "loss_fp32")->valuedouble;
    CHECK(st.loss_scale == (float)cJSON_GetObjectItem(c, "loss_scale")->valuedouble && !st.overflow);
    CHECK_MSG(fabs(st.loss - want) <= 1e-5 * fabs(want), "%s: loss %.8g, torch %.8g", name, st.loss, want);
    const cJSON *grads = cJSON_GetObjectItem(c, "grads"), *grads32 = cJSON_GetObjectItem(c, "grads_fp32");
    double worst = 0, worst32 = 0;   /* the largest |diff| / the gradient's largest value */
    int compared = 0;
    for (const cJSON *e = grads->child; e; e = e->next) {
        size_t count = (size_t)cJSON_GetArraySize(e);
        float *got = malloc(count * sizeof(float));
        CHECK_MSG(atn_trainer_tensor_get(t, e->string, true, got, count, &err) == ATN_OK, "%s: %s", name, err.message);
        const cJSON *e32 = cJSON_GetObjectItem(grads32, e->string);
        double big = 0, diff = 0, diff32 = 0;
        int k = 0;
        for (const cJSON *v = e->child, *v32 = e32->child; v && v32; v = v->next, v32 = v32->next, k++) {
            big = fmax(big, fabs(v->valuedouble));
            diff = fmax(diff, fabs(got[k] - v->valuedouble));
            diff32 = fmax(diff32, fabs(v32->valuedouble - v->valuedouble));
        }
        if (big > 0) {
            CHECK_MSG(diff <= 1e-4 * big, "%s %s: |C - torch| %.3g of the largest %.3g", name, e->string, diff, big);
            worst = fmax(worst, diff / big), worst32 = fmax(worst32, diff32 / big);
        }
        free(got);
        compared++;
    }
    fprintf(stderr, "%s: loss %.7f (torch %.7f, fp32 %.7f), %d gradients: C vs torch at most %.2e of the largest, "
            "fp32 vs torch %.2e\n", name, st.loss, want, want32, compared, worst, worst32);
    CHECK_MSG(worst32 > 10 * 1e-4, "%s: the rounding moves the gradients by %.2e only", name, worst32);
    free(ids), free(labels);
    atn_trainer_free(t);
    return worst;
}

static int test_copy(const char *prec) {
    atn_train_options o;
    atn_train_options_init(&o);
    o.precision = !strcmp(prec, "bf16") ? ATN_PRECISION_BF16 : ATN_PRECISION_FP16;
    o.d_model = 32, o.batch = 16, o.lr = 3e-3f, o.length = 8;
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(&o, &err);
    CHECK(t != NULL);
    if (!t)
        return check_summary("train-copy-precision");
    atn_train_stats st = {0};
    for (int s = 0; s < 150; s++)
        CHECK(atn_trainer_compute(t, &st, &err) == ATN_OK && atn_trainer_update(t, &st, &err) == ATN_OK);
    double acc = 0;
    for (int k = 0; k < 4; k++) {
        CHECK(atn_trainer_compute(t, &st, &err) == ATN_OK);
        acc += st.accuracy / 4.0;
    }
    fprintf(stderr, "%s copy of 8: accuracy %.4f on 4 fresh batches after 150 steps, %d steps skipped, scale %g\n",
            prec, acc, (int)st.skipped_steps, (double)t->scaler.scale);
    CHECK_MSG(acc >= 0.99, "accuracy %.4f", acc);
    atn_trainer_free(t);
    return check_summary("train-copy-precision");
}

int main(int argc, char **argv) {
    if (argc > 2 && !strcmp(argv[1], "copy"))
        return test_copy(argv[2]);
    test_scaler_rule();
    test_scaler_skip();
    test_forward_overflow();
    const char *root = getenv("ATN_SOURCE_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/train/precision.json", root ? root : ".");
    cJSON *j = read_json(path);
    if (!j)
        return 1;
    const cJSON *sizes = cJSON_GetObjectItem(j, "sizes"), *cases = cJSON_GetObjectItem(j, "cases");
    CHECK(cJSON_GetArraySize(cases) == 5);
    for (int i = 0; i < cJSON_GetArraySize(cases); i++)
        check_case(sizes, cJSON_GetArrayItem(cases, i));
    cJSON_Delete(j);
    return check_summary("train-precision");
}

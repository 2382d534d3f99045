/* Train short, test long (train-exp.h, atn_trainer_eval_length) computes what it says:
 *  - at the training length and at a longer one (rotary, ALiBi, sinusoidal) its loss and
 *    accuracy equal those of a second path: a trainer built for that length by hand, the
 *    trained tensors copied into it by Hugging Face name (atn_trainer_tensor_get/set), run
 *    on the same batch (the eval's seed draws it);
 *  - a model that always predicts the symbol "0" (every weight 0 but ln_f's bias e and the
 *    embedding row of "0", e: logit c^2 there, 0 elsewhere) has the accuracy and loss
 *    counted by hand from the batches' labels: share of answers that are "0", and
 *    log(e^z + V - 1) - z for them, log(e^z + V - 1) for the others;
 *  - learned positions are refused past the trained table (the message names them), and a
 *    shorter length is measured; bad arguments are refused by name. */
#include "check.h"
#include "train-exp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atn_train_options small(atn_train_pos pos) {
    atn_train_options o;
    atn_train_options_init(&o);
    o.layers = 2, o.d_model = 16, o.heads = 2, o.batch = 8;
    o.task = ATN_TASK_COPY, o.length = 5, o.symbols = 6;
    o.lr = 3e-3f, o.seed = 3, o.positions = pos;
    return o;
}

static atn_trainer *trained(atn_train_pos pos, int steps) {
    atn_train_options o = small(pos);
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(&o, &err);
    CHECK_MSG(t != NULL, "%s", err.message);
    for (int s = 0; t && s < steps; s++) {
        CHECK(atn_trainer_compute(t, NULL, &err) == ATN_OK);
        CHECK(atn_trainer_update(t, NULL, &err) == ATN_OK);
    }
    return t;
}

/* The second path: a trainer at length with data seed seed, the trained tensors copied in by
 * name (the position table only where the shapes agree: a fixed table is the length's own),
 * its first batch's loss and accuracy. */
static void by_hand(const atn_trainer *src, atn_train_pos pos, int32_t length, uint64_t seed, float *loss,
                    float *acc) {
    atn_train_options o = small(pos);
    o.length = length, o.seed = seed;
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(&o, &err);
    CHECK_MSG(t != NULL, "%s", err.message);
    if (!t)
        return;
    int copied = 0;
    for (int32_t i = 0; i < atn_trainer_tensor_count(src); i++) {
        int64_t sh[2], sh2[2];
        int nd, nd2;
        const char *name = atn_trainer_tensor_name(src, i, sh, &nd);
        atn_trainer_tensor_name(t, i, sh2, &nd2);
        size_t count = (size_t)sh[0] * (size_t)(nd == 2 ? sh[1] : 1);
        if (strstr(name, "wpe")) {
            CHECK(pos != ATN_POS_LEARNED || length == small(pos).length);
            if (pos != ATN_POS_LEARNED)
                continue;
        }
        float *buf = malloc(count * sizeof *buf);
        CHECK(atn_trainer_tensor_get(src, name, false, buf, count, &err) == ATN_OK);
        CHECK_MSG(atn_trainer_tensor_set(t, name, buf, count, &err) == ATN_OK, "%s: %s", name, err.message);
        free(buf);
        copied++;
    }
    CHECK(copied > 10);
    atn_train_stats st;
    CHECK(atn_trainer_compute(t, &st, &err) == ATN_OK);
    *loss = st.loss, *acc = st.accuracy;
    atn_trainer_free(t);
}

static void test_agrees(atn_train_pos pos, int32_t length) {
    atn_trainer *t = trained(pos, 60);
    if (!t)
        return;
    atn_train_eval ev;
    atn_error err = {0};
    CHECK_MSG(atn_trainer_eval_length(t, length, 1, 99, &ev, &err) == ATN_OK, "%s", err.message);
    float loss = -1, acc = -1;
    by_hand(t, pos, length, 99, &loss, &acc);
    CHECK_MSG(ev.loss == loss && ev.accuracy == acc, "positions %d length %d: eval %.7g / %.4f, by hand %.7g / %.4f",
              (int)pos, (int)length, (double)ev.loss, (double)ev.accuracy, (double)loss, (double)acc);
    CHECK(ev.tokens == 2 * length + 2);
    CHECK(ev.accuracy > 0.0f);
    atn_trainer_free(t);
}

/* The model that always says "0", at length 11 over 2 batches, against the labels counted. */
static void test_constant_model(void) {
    atn_trainer *t = trained(ATN_POS_SINUSOIDAL, 0);
    if (!t)
        return;
    atn_error err = {0};
    int32_t V = atn_trainer_vocab_size(t), d = 16, zero = 5;
    CHECK_STR(atn_trainer_token(t, zero), "0");
    for (int32_t i = 0; i < atn_trainer_tensor_count(t); i++) {
        int64_t sh[2];
        int nd;
        const char *name = atn_trainer_tensor_name(t, i, sh, &nd);
        if (strstr(name, "wpe"))
            continue;
        size_t count = (size_t)sh[0] * (size_t)(nd == 2 ? sh[1] : 1);
        float *z = calloc(count, sizeof *z);
        if (!strcmp(name, "transformer.ln_f.bias"))
            z[0] = 1.5f;
        if (!strcmp(name, "transformer.wte.weight"))
            z[(size_t)zero * d] = 1.5f;
        CHECK_MSG(atn_trainer_tensor_set(t, name, z, count, &err) == ATN_OK, "%s", err.message);
        free(z);
    }
    atn_train_eval ev;
    CHECK_MSG(atn_trainer_eval_length(t, 11, 2, 42, &ev, &err) == ATN_OK, "%s", err.message);
    /* the batches: a trainer at length 11 with the data seed 42 draws them */
    atn_train_options o = small(ATN_POS_SINUSOIDAL);
    o.length = 11, o.seed = 42;
    atn_trainer *r = atn_trainer_new(&o, &err);
    double z = 1.5 * 1.5, lse = log(exp(z) + (V - 1)), loss = 0, acc = 0;
    for (int b = 0; r && b < 2; b++) {
        CHECK(atn_trainer_compute(r, NULL, &err) == ATN_OK);
        const int32_t *ids, *labels;
        int32_t B, n;
        atn_trainer_batch(r, &ids, &labels, &B, &n);
        CHECK(n == 24);
        int hits = 0, count = 0;
        double sum = 0;
        for (int32_t s = 0; s < B; s++)
            for (int32_t i = 1; i < n; i++) {   /* shifted: position 0 predicts nothing */
                int32_t y = labels[(size_t)s * n + i];
                if (y == -100)
                    continue;
                count++;
                hits += y == zero;
                sum += y == zero ? lse - z : lse;
            }
        CHECK(count == B * 11);
        acc += (double)hits / count / 2, loss += sum / count / 2;
    }
    CHECK_NEAR(ev.accuracy, acc, 1e-6);
    CHECK_NEAR(ev.loss, loss, 1e-5);
    CHECK(acc > 0.05 && acc < 0.4);   /* about 1/6: the batch has "0"s and others */
    atn_trainer_free(r);
    atn_trainer_free(t);
}

static void test_refusals(void) {
    atn_trainer *t = trained(ATN_POS_LEARNED, 2);
    if (!t)
        return;
    atn_train_eval ev = {0};
    atn_error err = {0};
    CHECK(atn_trainer_eval_length(t, 6, 1, 1, &ev, &err) == ATN_E_UNSUPPORTED);
    CHECK_MSG(strstr(err.message, "--positions learned") && strstr(err.message, "12 rows"), "%s", err.message);
    CHECK(ev.tokens == 0);
    CHECK(atn_trainer_eval_length(t, 4, 1, 1, &ev, &err) == ATN_OK);   /* shorter: the first rows */
    CHECK(ev.tokens == 10);
    CHECK(atn_trainer_eval_length(t, 1, 1, 1, &ev, &err) == ATN_E_INVALID);
    CHECK(strstr(err.message, "test length 1"));
    CHECK(atn_trainer_eval_length(t, 5, 0, 1, &ev, &err) == ATN_E_INVALID);
    CHECK(atn_trainer_eval_length(NULL, 5, 1, 1, &ev, &err) == ATN_E_INVALID);
    atn_trainer_free(t);
}

int main(void) {
    test_agrees(ATN_POS_LEARNED, 5);
    test_agrees(ATN_POS_ROTARY, 5);
    test_agrees(ATN_POS_ROTARY, 9);
    test_agrees(ATN_POS_ALIBI, 9);
    test_agrees(ATN_POS_SINUSOIDAL, 9);
    test_agrees(ATN_POS_NONE, 9);
    test_constant_model();
    test_refusals();
    return check_summary("train-exp");
}

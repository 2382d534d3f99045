/* Mixed-precision training, as torch.autocast with torch.amp.GradScaler: BF16 / FP16 round
 * the operands of every matrix product of the forward and the backward to the format
 * (nearest, ties to even: forward/precision.h's atn_round_array, the inference path's
 * rounding) and keep FP32 sums, FP32 master weights, an FP32 loss and FP32 optimiser
 * state.  FP16 also scales the loss dynamically: the backward starts from dlogits times the
 * scale, the gradients are multiplied by the scale's reciprocal afterwards, and a step
 * whose gradients hold an inf or NaN is skipped (train.h, atn_trainer_update).
 *
 * What is rounded (the rest of the walk is FP32): a linear's input and weight, and in its
 * backward the incoming gradient (so din = r(dout) r(W), dW = r(dout)^T r(in)); attention's
 * Q and K (after rotary), V and the dropped probabilities, and in the backward the context
 * gradient and scale x dS (train-ops.c).  tests/train/gen_precision.py writes the same
 * arithmetic with a torch.autograd.Function. */
#include "train/train-private.h"
#include "train/train-ops.h"
#include "forward/precision.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void atn_tr_scaler_init(atn_tr_scaler *s) {
    memset(s, 0, sizeof *s);
    s->scale = 65536.0f, s->growth = 2.0f, s->backoff = 0.5f, s->interval = 2000;
}

void atn_tr_scaler_update(atn_tr_scaler *s, bool found_inf) {
    if (found_inf) {
        s->scale *= s->backoff;
        s->tracker = 0;
        return;
    }
    if (s->tracker + 1 == s->interval) {
        float grown = s->scale * s->growth;
        if (isfinite(grown))
            s->scale = grown;
        s->tracker = 0;
    } else {
        s->tracker++;
    }
}

/* dst = src rounded to p: bf16 by a plain loop of atn_round_bf16 (no overflow count, so
 * the compiler vectorises it; the same bits as atn_round_array), fp16 by atn_round_array
 * (F16C). */
static void round_to(float *dst, const float *src, size_t count, atn_precision p) {
    if (p != ATN_PRECISION_BF16) {
        atn_round_array(dst, src, count, p);
        return;
    }
    for (size_t i = 0; i < count; i++)
        dst[i] = atn_round_bf16(src[i]);
}

atn_status atn_tr_precision_build(atn_trainer *t, atn_error *err) {
    atn_tr_scaler_init(&t->scaler);
    if (t->o.precision == ATN_PRECISION_FP32)
        return ATN_OK;
    size_t w = (size_t)t->o.d_model;
    if ((size_t)t->desc.f > w)
        w = (size_t)t->desc.f;
    if ((size_t)t->V > w)
        w = (size_t)t->V;
    t->round_floats = (size_t)t->M * w;
    t->rw = malloc(t->total * sizeof(float));
    t->round_a = malloc(t->round_floats * sizeof(float));
    t->round_b = malloc(t->round_floats * sizeof(float));
    if (!t->rw || !t->round_a || !t->round_b)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory: %zu floats for %s rounding", 2 * t->round_floats,
                             atn_precision_name(t->o.precision));
    t->act_bytes += 2 * t->round_floats * sizeof(float);
    return ATN_OK;
}

void atn_tr_precision_free(atn_trainer *t) {
    free(t->rw), free(t->round_a), free(t->round_b);
}

void atn_tr_precision_begin(atn_trainer *t) {
    if (t->rw)
        round_to(t->rw, t->arena, t->total, t->o.precision);
}

const float *atn_tr_mm_w(const atn_trainer *t, int i) {
    const float *p = t->params[i].p;
    return t->rw ? t->rw + (p - t->arena) : p;
}

const float *atn_tr_mm_x(const atn_trainer *t, const float *x, size_t count, int slot) {
    if (!t->rw)
        return x;
    float *dst = slot ? t->round_b : t->round_a;
    round_to(dst, x, count, t->o.precision);
    return dst;
}

void atn_tr_mm_round(const atn_trainer *t, float *x, size_t count) {
    if (t->rw)
        round_to(x, x, count, t->o.precision);
}

void atn_tr_p_linear_forward(const atn_trainer *t, float *out, const float *in, int w, int b, int32_t M, int32_t i,
                             int32_t o) {
    atn_tr_linear_forward(out, atn_tr_mm_x(t, in, (size_t)M * i, 0), atn_tr_mm_w(t, w), b >= 0 ? t->params[b].p : NULL,
                          M, i, o);
}

void atn_tr_p_linear_backward(const atn_trainer *t, float *din, int w, int b, const float *dout, const float *in,
                              int32_t M, int32_t i, int32_t o) {
    float *dw = t->params[w].g, *db = b >= 0 ? t->params[b].g : NULL;
    if (!t->rw) {
        atn_tr_linear_backward(din, dw, db, dout, in, t->params[w].p, M, i, o);
        return;
    }
    atn_tr_linear_backward(din, dw, NULL, atn_tr_mm_x(t, dout, (size_t)M * o, 0), atn_tr_mm_x(t, in, (size_t)M * i, 1),
                           atn_tr_mm_w(t, w), M, i, o);
    if (db)
        atn_tr_linear_backward(NULL, NULL, db, dout, NULL, NULL, M, i, o);
}

void atn_tr_precision_scale_loss(atn_trainer *t) {
    if (t->o.precision != ATN_PRECISION_FP16)
        return;
    size_t count = (size_t)t->M * t->V;
    float s = t->scaler.scale;
    for (size_t i = 0; i < count; i++)
        t->dlogits[i] *= s;
}

void atn_tr_precision_unscale(atn_trainer *t) {
    t->scaler.found_inf = false;
    if (t->o.precision != ATN_PRECISION_FP16)
        return;
    /* GradScaler: inv_scale = scale.double().reciprocal().float(); every gradient times it,
       found_inf when any is not finite */
    float inv = (float)(1.0 / (double)t->scaler.scale);
    bool found = false;
    for (int i = 0; i < t->n_params; i++) {
        atn_tr_param *p = &t->params[i];
        if (p->fixed)
            continue;
        size_t count = (size_t)p->rows * p->cols;
        for (size_t k = 0; k < count; k++) {
            found |= !isfinite(p->g[k]);
            p->g[k] *= inv;
        }
    }
    t->scaler.found_inf = found;
}

size_t atn_trainer_activation_bytes(const atn_trainer *t, size_t *per_layer) {
    if (per_layer)
        *per_layer = t ? t->act_layer_bytes : 0;
    return t ? t->act_bytes : 0;
}

/* The training lab's optimisers: SGD (with momentum) and AdamW, as torch.optim writes them
 * (torch/optim/sgd.py and adamw.py, the single-tensor loops), a linear warm-up of the
 * learning rate, and the global gradient norm that clipping reads
 * (torch.nn.utils.clip_grad_norm_). */
#include "train/train-private.h"

#include <math.h>

float atn_tr_grad_norm(const atn_trainer *t) {
    double sum = 0;
    for (int i = 0; i < t->n_params; i++) {
        const atn_tr_param *p = &t->params[i];
        if (p->fixed)
            continue;
        size_t count = (size_t)p->rows * p->cols;
        for (size_t k = 0; k < count; k++)
            sum += (double)p->g[k] * p->g[k];
    }
    return (float)sqrt(sum);
}

float atn_trainer_layer_grad_norm(const atn_trainer *t, int32_t layer) {
    if (!t || layer < 0 || layer >= t->o.layers)
        return -1.0f;
    const atn_tr_layer *y = &t->layers[layer];
    const int ids[] = {y->ln1_g, y->ln1_b, y->wq, y->bq, y->wk, y->bk, y->wv, y->bv,
                       y->wo, y->bo, y->ln2_g, y->ln2_b, y->w1, y->b1, y->w2, y->b2, y->lin_e, y->lin_f};
    double sum = 0;
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        if (ids[i] < 0)
            continue;
        const atn_tr_param *p = &t->params[ids[i]];
        size_t count = (size_t)p->rows * p->cols;
        for (size_t k = 0; k < count; k++)
            sum += (double)p->g[k] * p->g[k];
    }
    return (float)sqrt(sum);
}

float atn_tr_lr_at(const atn_train_options *o, int32_t step) {
    if (o->warmup > 0 && step < o->warmup)
        return o->lr * (float)(step + 1) / (float)o->warmup;
    return o->lr;
}

void atn_tr_optim_step(atn_trainer *t, float lr, float clip_scale) {
    const atn_train_options *o = &t->o;
    int32_t step = t->optim_steps + 1;   /* torch's state["step"]: FP16's skipped steps not counted */
    /* AdamW's bias corrections for this step */
    double bc1 = 1.0 - pow(o->beta1, step), bc2 = 1.0 - pow(o->beta2, step);
    float step_size = (float)(lr / bc1), bc2_sqrt = (float)sqrt(bc2);
    for (int i = 0; i < t->n_params; i++) {
        atn_tr_param *p = &t->params[i];
        if (p->fixed)
            continue;
        size_t count = (size_t)p->rows * p->cols;
        for (size_t k = 0; k < count; k++) {
            float g = p->g[k] * clip_scale;
            if (o->optim == ATN_OPTIM_SGD) {
                if (o->weight_decay > 0)
                    g += o->weight_decay * p->p[k];
                if (o->momentum > 0) {
                    p->m[k] = t->optim_steps ? o->momentum * p->m[k] + g : g;
                    g = p->m[k];
                }
                p->p[k] -= lr * g;
                continue;
            }
            /* AdamW: decoupled decay, then the moments, then the bias-corrected step */
            p->p[k] *= 1.0f - lr * o->weight_decay;
            p->m[k] = o->beta1 * p->m[k] + (1.0f - o->beta1) * g;
            p->v[k] = o->beta2 * p->v[k] + (1.0f - o->beta2) * g * g;
            float denom = sqrtf(p->v[k]) / bc2_sqrt + o->adam_eps;
            p->p[k] -= step_size * p->m[k] / denom;
        }
    }
}

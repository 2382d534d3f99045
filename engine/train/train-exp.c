/* Train short, test long (train-exp.h): a trained model's parameters in a trainer built for
 * another task length, evaluated on fresh batches. */
#include "train-exp.h"
#include "train/train-private.h"

#include <string.h>

atn_status atn_trainer_eval_length(const atn_trainer *trained, int32_t length, int32_t batches, uint64_t seed,
                                   atn_train_eval *out, atn_error *err) {
    if (!trained || !out)
        return atn_error_set(err, ATN_E_INVALID, "atn_trainer_eval_length: NULL argument");
    if (length < 2 || length > 255)
        return atn_error_set(err, ATN_E_INVALID, "test length %d: must be 2..255", (int)length);
    if (batches < 1 || batches > 10000)
        return atn_error_set(err, ATN_E_INVALID, "%d evaluation batches: must be 1..10000", (int)batches);
    atn_train_options o = trained->o;
    o.length = length, o.seed = seed, o.dropout_attn = 0, o.dropout_hidden = 0, o.steps = 0;
    int32_t n = atn_tr_task_tokens(&o);
    if (o.positions == ATN_POS_LEARNED && n > trained->P)
        return atn_error_set(err, ATN_E_UNSUPPORTED,
                             "--positions learned: the table has %d rows (the %d tokens of --length %d); "
                             "--length %d needs %d: learned positions are not defined there",
                             (int)trained->P, (int)trained->n, (int)trained->o.length, (int)length, (int)n);
    atn_trainer *t = atn_trainer_new(&o, err);
    if (!t)
        return err ? err->status : ATN_E_NOMEM;
    /* same options but the length: the same parameters in the same order; only the position
       table's rows differ */
    atn_status st = ATN_OK;
    for (int i = 0; i < t->n_params && st == ATN_OK; i++) {
        const atn_tr_param *src = &trained->params[i];
        atn_tr_param *dst = &t->params[i];
        if (i == t->wpe) {
            if (dst->fixed)
                continue;   /* the new length's own fixed table */
            /* learned: the first rows (a shorter length uses the first positions, as HF does) */
            memcpy(dst->p, src->p, (size_t)dst->rows * (size_t)dst->cols * sizeof(float));
            continue;
        }
        if (src->rows != dst->rows || src->cols != dst->cols)
            st = atn_error_set(err, ATN_E_INVALID, "parameter %s: %dx%d, the trained one %dx%d", dst->name,
                               (int)dst->rows, (int)dst->cols, (int)src->rows, (int)src->cols);
        else
            memcpy(dst->p, src->p, (size_t)dst->rows * (size_t)dst->cols * sizeof(float));
    }
    double loss = 0, acc = 0;
    atn_train_stats s;
    for (int32_t b = 0; b < batches && st == ATN_OK; b++) {
        st = atn_trainer_compute(t, &s, err);
        loss += s.loss, acc += s.accuracy;
    }
    if (st == ATN_OK) {
        out->loss = (float)(loss / batches), out->accuracy = (float)(acc / batches), out->tokens = n;
    }
    atn_trainer_free(t);
    return st;
}

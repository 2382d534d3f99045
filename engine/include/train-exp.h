/* The training lab's experiments that need more than one step at a time (engine/train/
 * train-exp.c): a trained model evaluated at another task length (train short, test long).
 * Contract as train.h: errors name the option; a trainer used by one thread at a time. */
#ifndef ATN_TRAIN_EXP_H
#define ATN_TRAIN_EXP_H

#include "train.h"

/* What an evaluation measured: the mean over the batches of each batch's loss and accuracy
 * (the trainer's own: mean cross-entropy over the labelled positions, share of them whose
 * argmax is the label). */
typedef struct atn_train_eval {
    float loss, accuracy;
    int32_t tokens;            /* tokens per sequence at that length */
} atn_train_eval;

/* Evaluates trained's weights on its task at --length `length` (its own length or another):
 * a new trainer with trained's options except length, the data seed `seed` and no dropout,
 * every parameter copied from trained, then `batches` fresh batches through the forward
 * (no update; trained is not changed).  Positions: sinusoidal, rotary, ALiBi and none are
 * defined at every position and are the new length's own; learned positions are a table
 * with one row per trained token, so a length with more tokens is refused
 * (ATN_E_UNSUPPORTED naming --positions learned and both token counts), never extended.
 * ATN_E_INVALID: length or batches out of range (the message names them); ATN_E_NOMEM.
 * out is written on success only. */
atn_status atn_trainer_eval_length(const atn_trainer *trained, int32_t length, int32_t batches, uint64_t seed,
                                   atn_train_eval *out, atn_error *err);

#endif

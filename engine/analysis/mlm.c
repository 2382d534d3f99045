/* Masked-word prediction with the model family's masked-LM head (BERT: cls.predictions.*,
 * RoBERTa: lm_head.*, ...; its tensor names in engine/core/family.h, bound by the loader):
 * logits = LayerNorm(act(h W_t^T + b_t)) D^T + b, D the decoder, usually the word
 * embeddings (tied); W_t maps d to the embedding width. */
#include "forward/encoder.h"
#include "core/family.h"
#include "tokenize/tokenizer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The top_k of logits[V] into out, most likely first, with softmax probabilities. */
static _Thread_local const float *sort_logits;   /* qsort has no user pointer */

static int by_logit(const void *a, const void *b) {
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    float x = sort_logits[i], y = sort_logits[j];
    return x > y ? -1 : x < y ? 1 : (i > j) - (i < j);
}

/* The largest logit in *mx and the sum of exp(logit - *mx) in double: softmax's denominator,
 * shifted, for the top-k probabilities and the log-probabilities alike. */
static double shifted_exp_sum(const float *logits, int32_t V, float *mx) {
    float top = -INFINITY;
    for (int32_t i = 0; i < V; i++)
        top = logits[i] > top ? logits[i] : top;
    double sum = 0;
    for (int32_t i = 0; i < V; i++)
        sum += exp((double)logits[i] - top);
    *mx = top;
    return sum;
}

static void top_k_of(const atn_model *m, const float *logits, int32_t V, int32_t top_k, atn_prediction *out) {
    float mx;
    double sum = shifted_exp_sum(logits, V, &mx);
    /* top_k by repeated selection when k is small (5); a sort of every id otherwise (a
       caller asking for the whole vocabulary), in the same order: larger logit first, the
       lower id first among equal ones */
    int32_t *order = top_k > 16 ? malloc((size_t)V * sizeof *order) : NULL;
    if (order) {
        for (int32_t i = 0; i < V; i++)
            order[i] = i;
        sort_logits = logits;
        qsort(order, (size_t)V, sizeof *order, by_logit);
    }
    for (int32_t r = 0; r < top_k; r++) {
        int32_t best = -1;
        for (int32_t i = 0; !order && i < V; i++) {
            bool taken = false;
            for (int32_t q = 0; q < r; q++)
                taken |= out[q].id == i;
            if (!taken && (best < 0 || logits[i] > logits[best]))
                best = i;
        }
        if (order)
            best = order[r];
        out[r].id = best;
        out[r].prob = (float)(exp((double)logits[best] - mx) / sum);
        atn_vocab_entry v;
        if (m->tokenizer && atn_tokenizer_id_info(m->tokenizer, best, &v)) {
            out[r].token = v.text;
            out[r].surface = v.surface;
            out[r].continuation = v.continuation;
        } else {
            out[r].token = out[r].surface = "?";
            out[r].continuation = false;
        }
    }
    free(order);
}

/* ln(softmax(logits)[id]), in double, shifted by the largest logit. */
static double log_softmax_at(const float *logits, int32_t V, int32_t id) {
    float mx;
    double sum = shifted_exp_sum(logits, V, &mx);
    return (double)logits[id] - mx - log(sum);
}

/* The family's masked-LM head at pos: dense maps d to E (ALBERT, ELECTRA's generator; E == d
 * elsewhere), the activation (RoBERTa's and ELECTRA's heads use exact gelu whatever
 * hidden_act is), LayerNorm, the decoder (or the tied word embeddings).  The V logits
 * (caller frees), or NULL: out of memory. */
static float *mlm_logits(const atn_model *m, const atn_capture *cap, int32_t pos) {
    const atn_config *c = &m->cfg;
    const atn_weights *w = &m->w;
    int32_t d = c->d_model, V = c->vocab_size, E = atn_d_embed(c);
    const float *h = cap->hidden + ((size_t)c->n_layers * cap->n + pos) * d;
    float *t = malloc((size_t)E * sizeof(float));
    float *logits = malloc((size_t)V * sizeof(float));
    if (!t || !logits) {
        free(t);
        free(logits);
        return NULL;
    }
    atn_linear(t, h, w->mlm_dense_w, w->mlm_dense_b, 1, d, E);
    atn_activate(t, (size_t)E, m->family->mlm.act_gelu ? ATN_ACT_GELU : c->act);
    atn_layernorm(t, t, w->mlm_ln_g, w->mlm_ln_b, 1, E, c->ln_eps);
    const float *dec = w->mlm_decoder_w ? w->mlm_decoder_w : w->word_emb;
    atn_linear(logits, t, dec, w->mlm_decoder_b, 1, E, V);
    free(t);
    return logits;
}

/* One LM head's logits at a position: V floats (caller frees), or NULL when out of memory. */
typedef float *(*head_logits_fn)(const atn_model *m, const atn_capture *cap, int32_t pos);

/* The top_k (clamped into 1..V) guesses of head at pos, for atn_predict_position and
 * atn_predict_next once each has checked that the model has that head. */
static atn_status predict_top_k(const atn_model *m, const atn_capture *cap, int32_t pos, int32_t top_k,
                                head_logits_fn head, atn_prediction *out, atn_error *err) {
    int32_t npos = cap && cap->n_stacks ? cap->n_tgt : cap ? cap->n : 0;   /* an encoder-decoder: the target's */
    if (!cap || pos < 0 || pos >= npos)
        return atn_error_set(err, ATN_E_INVALID, "position %d out of range 0..%d", pos, npos - 1);
    int32_t V = m->cfg.vocab_size;
    if (top_k < 1)
        top_k = 1;
    if (top_k > V)
        top_k = V;
    float *logits = head(m, cap, pos);
    if (!logits)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    top_k_of(m, logits, V, top_k, out);
    free(logits);
    return ATN_OK;
}

/* The log-probability head gives token id at pos, for atn_predict_log_prob and
 * atn_predict_next_log_prob once each has checked that the model has that head. */
static atn_status predict_log_prob(const atn_model *m, const atn_capture *cap, int32_t pos, int32_t id,
                                   head_logits_fn head, double *logp, atn_error *err) {
    int32_t npos = cap && cap->n_stacks ? cap->n_tgt : cap ? cap->n : 0;   /* an encoder-decoder: the target's */
    if (!cap || !logp || pos < 0 || pos >= npos)
        return atn_error_set(err, ATN_E_INVALID, "position %d out of range 0..%d", pos, npos - 1);
    int32_t V = m->cfg.vocab_size;
    if (id < 0 || id >= V)
        return atn_error_set(err, ATN_E_INVALID, "token id %d outside the vocabulary 0..%d", id, V - 1);
    float *logits = head(m, cap, pos);
    if (!logits)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    *logp = log_softmax_at(logits, V, id);
    free(logits);
    return ATN_OK;
}

atn_status atn_predict_position(const atn_model *m, const atn_capture *cap, int32_t pos, int32_t top_k,
                                atn_prediction *out, atn_error *err) {
    if (!atn_model_has_mlm_head(m))
        return atn_error_set(err, ATN_E_UNSUPPORTED, "model \"%s\" has no masked-LM head (%s "
                             "tensors), so it cannot predict masked words%s", m->name, m->family->mlm.what,
                             m->family->causal ? "; it guesses the next token instead" : "");
    return predict_top_k(m, cap, pos, top_k, mlm_logits, out, err);
}

/* GPT2LMHeadModel: lm_logits = lm_head(hidden_states), hidden_states after ln_f, lm_head
 * a bias-free Linear tied to wte.  The V logits at pos (caller frees), or NULL: out of memory. */
static float *next_token_logits(const atn_model *m, const atn_capture *cap, int32_t pos) {
    const atn_config *c = &m->cfg;
    if (m->family->encdec) {
        /* T5ForConditionalGeneration: the decoder's last hidden state (after its final norm),
           times d^-0.5 when the head is the shared embeddings, through lm_head (+ BART's
           final_logits_bias) */
        const atn_encdec *e = &m->encdec;
        int32_t d = c->d_model, V = c->vocab_size;
        float *logits = malloc((size_t)V * sizeof(float)), *h = malloc((size_t)d * sizeof(float));
        if (logits && h) {
            const float *x = cap->dec_hidden + ((size_t)e->n_dec_layers * cap->n_tgt + pos) * d;
            for (int32_t j = 0; j < d; j++)
                h[j] = x[j] * e->lm_scale;
            atn_linear(logits, h, e->lm_head ? e->lm_head : m->w.word_emb, e->final_logits_bias, 1, d, V);
        } else {
            free(logits), logits = NULL;
        }
        free(h);
        return logits;
    }
    int32_t d = c->d_model, V = c->vocab_size;
    const float *h = cap->hidden + ((size_t)c->n_layers * cap->n + pos) * d;
    float *logits = malloc((size_t)V * sizeof(float));
    if (logits)
        atn_linear(logits, h, m->w.lm_head_w ? m->w.lm_head_w : m->w.word_emb, NULL, 1, d, V);
    float fcap = m->rotary.final_softcap;   /* Gemma 2: tanh(logits / c) c (final_logit_softcapping) */
    for (int32_t i = 0; logits && fcap > 0.0f && i < V; i++)
        logits[i] = tanhf(logits[i] / fcap) * fcap;
    return logits;
}

atn_status atn_predict_next(const atn_model *m, const atn_capture *cap, int32_t pos, int32_t top_k,
                            atn_prediction *out, atn_error *err) {
    if (!m || !(atn_model_is_causal(m) || m->family->encdec) || !m->w.word_emb)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "model \"%s\" is not a causal language model, so it "
                             "has no next-token guesses%s", m ? m->name : "(none)",
                             m && atn_model_has_mlm_head(m) ? " (it predicts [MASK] tokens instead)" : "");
    return predict_top_k(m, cap, pos, top_k, next_token_logits, out, err);
}

atn_status atn_predict_log_prob(const atn_model *m, const atn_capture *cap, int32_t pos, int32_t id, double *logp,
                                atn_error *err) {
    if (!atn_model_has_mlm_head(m))
        return atn_error_set(err, ATN_E_UNSUPPORTED, "model \"%s\" has no masked-LM head (%s "
                             "tensors), so it cannot predict masked words", m->name, m->family->mlm.what);
    return predict_log_prob(m, cap, pos, id, mlm_logits, logp, err);   /* atn_predict_position's head */
}

/* The log-softmax of atn_predict_next's logits at id. */
atn_status atn_predict_next_log_prob(const atn_model *m, const atn_capture *cap, int32_t pos, int32_t id,
                                     double *logp, atn_error *err) {
    if (!m || !(atn_model_is_causal(m) || m->family->encdec) || !m->w.word_emb)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "model \"%s\" is not a causal language model, so it "
                             "has no next-token probabilities", m ? m->name : "(none)");
    return predict_log_prob(m, cap, pos, id, next_token_logits, logp, err);
}

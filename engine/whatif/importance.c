/* Head importance by ablation (analysis.h, atn_importance_compute): the masked-LM loss of
 * the model with each head switched off alone, and with each head kept alone in its layer,
 * against the plain model's, over sentences masked with a fixed seed. */
#include "analysis.h"
#include "forward/batch.h"
#include "forward/run.h"
#include "tokenize/encoding.h"
#include "whatif/interventions.h"
#include "core/model-private.h"
#include "tokenize/tokenizer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void atn_importance_free(atn_importance *imp) {
    if (!imp)
        return;
    free(imp->off_delta);
    free(imp->keep_delta);
    free(imp);
}

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

atn_status atn_mlm_mask_words(const atn_model *m, const atn_encoding *enc, double rate, uint64_t seed,
                              atn_encoding **masked, int32_t *positions, int32_t *count, atn_error *err) {
    if (masked)
        *masked = NULL;
    if (!m || !enc || !masked || !positions || !count)
        return atn_error_set(err, ATN_E_INVALID, "mask words: NULL argument");
    if (!(rate > 0 && rate <= 1))
        return atn_error_set(err, ATN_E_INVALID, "mask words: rate %g is outside (0, 1]", rate);
    int32_t mask_id = atn_tokenizer_special_id(m->tokenizer, ATN_TOKEN_MASK);
    if (mask_id < 0)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "model \"%s\" has no [MASK] token", m->name);
    int32_t words = 0;
    for (int32_t i = 0; i < enc->n; i++)
        positions[words] = i, words += !enc->tokens[i].special && enc->mask[i];
    if (!words)
        return atn_error_set(err, ATN_E_INVALID, "mask words: the input has no word to mask");
    uint64_t s = seed;
    for (int32_t i = words - 1; i > 0; i--) {
        int32_t r = (int32_t)(splitmix64(&s) % (uint64_t)(i + 1));
        int32_t t = positions[i];
        positions[i] = positions[r];
        positions[r] = t;
    }
    int32_t k = (int32_t)lround(rate * words);
    k = k < 1 ? 1 : k;
    qsort(positions, (size_t)k, sizeof *positions, cmp_i32);
    atn_encoding *e = atn_encoding_copy(enc);
    if (!e)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    for (int32_t i = 0; i < k; i++)
        e->ids[positions[i]] = mask_id;
    *count = k;
    *masked = e;
    return ATN_OK;
}

/* The summed -ln p(original id) over the masked positions of one capture; for a causal
 * model (next) the summed -ln p(id of token pos + 1 | tokens 0..pos). */
static atn_status loss_of(const atn_model *m, const atn_capture *cap, const atn_encoding *orig, const int32_t *pos,
                          int32_t k, bool next, double *sum, atn_error *err) {
    *sum = 0;
    for (int32_t i = 0; i < k; i++) {
        double lp;
        atn_status st = next ? atn_predict_next_log_prob(m, cap, pos[i], orig->ids[pos[i] + 1], &lp, err)
                             : atn_predict_log_prob(m, cap, pos[i], orig->ids[pos[i]], &lp, err);
        if (st)
            return st;
        *sum -= lp;
    }
    return ATN_OK;
}

/* The forward passes' per-layer callback: the caller's progress at the fraction reached, so
 * that a cancel stops inside a pass (a long sentence's pass can take seconds) rather than
 * after it. */
typedef struct layer_progress {
    atn_progress_fn progress;
    void *user_data;
    double fraction;
} layer_progress;

static bool layer_cb(double fraction, atn_stage stage, void *user) {
    (void)fraction, (void)stage;
    layer_progress *lp = user;
    return lp->progress(lp->fraction, ATN_STAGE_CORPUS, lp->user_data);
}

/* One stacked layer of ablations: configuration i is head i / 2 (i / 1 when H == 1) off
 * (even i) or kept alone (odd i), in the loop's order. */
typedef struct abl_job {
    const atn_model *m;
    const atn_encoding *orig;
    const int32_t *pos;
    int32_t k, l, s, n, per_head;
    double *off_sum, *keep_sum;
    atn_progress_fn progress;
    void *user_data;
    bool next;   /* a causal model: the next-token loss */
} abl_job;

static atn_status abl_each(int32_t i, const atn_capture *cap, void *user, atn_error *err) {
    abl_job *j = user;
    int32_t H = j->m->cfg.n_heads, h = i / j->per_head, keep = i % j->per_head;
    size_t lh = (size_t)j->m->cfg.n_layers * H;
    double v;
    atn_status st = loss_of(j->m, cap, j->orig, j->pos, j->k, j->next, &v, err);
    if (!st)
        (keep ? j->keep_sum : j->off_sum)[(size_t)j->l * H + h] += v;
    if (!st && j->progress &&
        !j->progress(((double)j->s + (double)(j->l * H + h + 1) / (double)lh) / j->n, ATN_STAGE_CORPUS, j->user_data))
        st = atn_error_set(err, ATN_E_CANCELLED, "cancelled at sentence %d", j->s);
    return st;
}

static atn_status importance_impl(const atn_model *m, atn_encoding *const *sents, int32_t n, double rate,
                                  uint64_t seed, atn_head_mode mode, bool reuse_lower, int32_t rows,
                                  const atn_run_options *opts, atn_progress_fn progress, void *user_data,
                                  atn_importance **out, atn_error *err);

atn_status atn_importance_compute(const atn_model *m, atn_encoding *const *sents, int32_t n, double rate,
                                  uint64_t seed, atn_head_mode mode, bool reuse_lower, const atn_run_options *opts,
                                  atn_progress_fn progress, void *user_data, atn_importance **out, atn_error *err) {
    return importance_impl(m, sents, n, rate, seed, mode, reuse_lower, 1, opts, progress, user_data, out, err);
}

atn_status atn_importance_compute_stacked(const atn_model *m, atn_encoding *const *sents, int32_t n, double rate,
                                          uint64_t seed, atn_head_mode mode, bool reuse_lower, int32_t rows,
                                          const atn_run_options *opts, atn_progress_fn progress, void *user_data,
                                          atn_importance **out, atn_error *err) {
    return importance_impl(m, sents, n, rate, seed, mode, reuse_lower, rows < 1 ? ATN_BATCH_ROWS : rows, opts,
                           progress, user_data, out, err);
}

static atn_status importance_impl(const atn_model *m, atn_encoding *const *sents, int32_t n, double rate,
                                  uint64_t seed, atn_head_mode mode, bool reuse_lower, int32_t rows,
                                  const atn_run_options *opts, atn_progress_fn progress, void *user_data,
                                  atn_importance **out, atn_error *err) {
    if (out)
        *out = NULL;
    if (!m || !sents || !out || n < 0)
        return atn_error_set(err, ATN_E_INVALID, "importance: NULL argument");
    bool next = atn_model_is_causal(m);   /* a causal model: the next-token loss */
    if (!next && !atn_model_has_mlm_head(m))
        return atn_error_set(err, ATN_E_UNSUPPORTED, "model \"%s\" has no masked-LM head: head importance "
                             "measures the masked-LM loss (or a causal model's next-token loss)", m->name);
    const atn_config *c = &m->cfg;
    int32_t L = c->n_layers, H = c->n_heads;
    size_t lh = (size_t)L * H;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    atn_importance *imp = calloc(1, sizeof *imp);
    uint8_t *gate = calloc(lh, 1);
    double *off_sum = calloc(lh, sizeof(double)), *keep_sum = calloc(lh, sizeof(double));
    atn_run *base = atn_run_new(m), *abl = atn_run_new(m);
    atn_batch *batch = rows > 1 ? atn_batch_new(m) : NULL;
    uint8_t *gates = rows > 1 ? calloc(2 * lh, (size_t)H) : NULL;   /* [2H][L][H] */
    atn_status st = ATN_OK;
    if (!imp || !gate || !off_sum || !keep_sum || !base || !abl || (rows > 1 && (!batch || !gates))) {
        st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
        goto done;
    }
    imp->n_layers = L, imp->n_heads = H;
    imp->next_token = next;
    atn_run_options o;
    if (opts)
        o = *opts;
    else
        atn_run_options_init(&o);
    o.keep_attention = false;
    o.keep_trace_inputs = false;
    layer_progress lp = {progress, user_data, 0};
    o.progress = progress ? layer_cb : NULL;
    o.user_data = &lp;
    atn_interventions iv;
    atn_interventions_init(&iv);
    iv.head_mode = mode;
    iv.heads_off = gate;
    double base_sum = 0;
    for (int32_t s = 0; s < n && st == ATN_OK; s++) {
        int32_t *pos = malloc((size_t)(sents[s]->n > 0 ? sents[s]->n : 1) * sizeof *pos), k = 0;
        atn_encoding *me = NULL;
        atn_error e2 = {0};
        if (!pos) {
            st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
            break;
        }
        atn_status ms;
        if (next) {   /* every real token followed by a real token predicts it; nothing masked */
            for (int32_t i = 0; i + 1 < sents[s]->n; i++)
                if (sents[s]->mask[i] && sents[s]->mask[i + 1])
                    pos[k++] = i;
            me = k ? atn_encoding_copy(sents[s]) : NULL;
            ms = !k ? ATN_E_INVALID : me ? ATN_OK : atn_error_set(&e2, ATN_E_NOMEM, "out of memory");
        } else {
            ms = atn_mlm_mask_words(m, sents[s], rate, seed + (uint64_t)s, &me, pos, &k, &e2);
        }
        if (ms == ATN_E_INVALID) {   /* no word to mask (causal: no token to predict): skipped */
            free(pos);
            continue;
        }
        if (ms) {
            *err = e2;
            st = ms;
            free(pos);
            break;
        }
        o.interventions = NULL;
        double b;
        st = atn_run_forward(base, me, &o, err);
        if (!st)
            st = loss_of(m, atn_run_capture(base), sents[s], pos, k, next, &b, err);
        base_sum += st ? 0 : b;
        o.interventions = &iv;
        if (batch) {   /* each layer's ablations stacked: the gates per copy of the sentence */
            atn_batch_set_rows(batch, rows);
            atn_batch_set_exact(batch, false);
            int32_t per_head = H == 1 ? 1 : 2;   /* kept alone = the plain model when H == 1 */
            for (int32_t l = 0; l < L && !st; l++) {
                memset(gates, 0, (size_t)per_head * H * lh);
                for (int32_t h = 0; h < H; h++)
                    for (int keep = 0; keep < per_head; keep++)
                        for (int32_t x = 0; x < H; x++)
                            gates[(size_t)(h * per_head + keep) * lh + (size_t)l * H + x] = keep ? x != h : x == h;
                if (H == 1)
                    keep_sum[(size_t)l * H] += b;
                abl_job aj = {m, sents[s], pos, k, l, s, n, per_head, off_sum, keep_sum, progress, user_data, next};
                int32_t start = reuse_lower && l > 0 ? l : 0;
                st = atn_batch_forward_gates(batch, me, per_head * H, gates, mode, atn_run_capture(base), start, &o,
                                             abl_each, &aj, err);
            }
        }
        for (int32_t l = 0; l < L && !st && !batch; l++)
            for (int32_t h = 0; h < H && !st; h++)
                for (int keep = 0; keep < 2 && !st; keep++) {
                    memset(gate, 0, lh);
                    for (int32_t x = 0; x < H; x++)
                        gate[(size_t)l * H + x] = keep ? x != h : x == h;
                    if (keep && H == 1) {   /* kept alone = the plain model */
                        keep_sum[(size_t)l * H + h] += b;
                        continue;
                    }
                    st = reuse_lower && l > 0 ? atn_run_forward_from(abl, me, &o, atn_run_capture(base), l, err)
                                              : atn_run_forward(abl, me, &o, err);
                    double v;
                    if (!st)
                        st = loss_of(m, atn_run_capture(abl), sents[s], pos, k, next, &v, err);
                    if (!st)
                        (keep ? keep_sum : off_sum)[(size_t)l * H + h] += v;
                    lp.fraction = ((double)s + (double)(l * H + h + 1) / (double)lh) / n;
                    if (!st && progress && !progress(lp.fraction, ATN_STAGE_CORPUS, user_data))
                        st = atn_error_set(err, ATN_E_CANCELLED, "cancelled at sentence %d", s);
                }
        imp->sentences++;
        imp->masked += k;
        free(pos);
        atn_encoding_free(me);
    }
    if (!st && imp->masked == 0)
        st = atn_error_set(err, ATN_E_INVALID, next ? "importance: no sentence has two tokens (a token to "
                           "predict the next one from)" : "importance: no sentence has a word to mask");
    if (!st) {
        imp->base_loss = base_sum / (double)imp->masked;
        imp->off_delta = malloc(lh * sizeof(double));
        imp->keep_delta = malloc(lh * sizeof(double));
        if (!imp->off_delta || !imp->keep_delta) {
            st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
        } else {
            for (size_t i = 0; i < lh; i++) {
                imp->off_delta[i] = off_sum[i] / (double)imp->masked - imp->base_loss;
                imp->keep_delta[i] = keep_sum[i] / (double)imp->masked - imp->base_loss;
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (imp)
        imp->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (!st && progress)
        progress(1.0, ATN_STAGE_CORPUS, user_data);
done:
    atn_run_free(base);
    atn_run_free(abl);
    atn_batch_free(batch);
    free(gates);
    free(gate);
    free(off_sum);
    free(keep_sum);
    if (st) {
        atn_importance_free(imp);
        return st;
    }
    *out = imp;
    return ATN_OK;
}

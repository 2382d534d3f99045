/* The trainer's public face (train.h): options, construction, one step (compute, update),
 * the tensors by Hugging Face name, and the seeded random streams every part draws from. */
#include "train/train-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random streams -------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void atn_tr_rng_seed(atn_tr_rng *r, uint64_t seed, uint64_t stream) {
    uint64_t x = seed * 0x100000001b3ULL ^ (stream * 0x9e3779b97f4a7c15ULL);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

uint64_t atn_tr_rng_next(atn_tr_rng *r) {
    uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
    return out;
}

double atn_tr_rng_uniform(atn_tr_rng *r) {
    return (double)(atn_tr_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

double atn_tr_rng_normal(atn_tr_rng *r) {
    double u = atn_tr_rng_uniform(r), v = atn_tr_rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u)) * cos(2.0 * M_PI * v);
}

int32_t atn_tr_rng_below(atn_tr_rng *r, int32_t n) {
    return (int32_t)(atn_tr_rng_uniform(r) * n);
}

/* ---- options ------------------------------------------------------------------------------ */

static const char *task_names[] = {"copy", "reverse", "sort", "induction", "brackets", "modadd", "text"};

const char *atn_train_task_name(atn_train_task t) {
    return (unsigned)t < sizeof task_names / sizeof *task_names ? task_names[t] : "?";
}

int atn_train_task_parse(const char *name) {
    for (int i = 0; i < (int)(sizeof task_names / sizeof *task_names); i++)
        if (name && !strcmp(name, task_names[i]))
            return i;
    return -1;
}

void atn_train_options_init(atn_train_options *o) {
    memset(o, 0, sizeof *o);
    o->decoder = true;
    o->layers = 2, o->d_model = 64, o->heads = 4;
    o->norm = ATN_TRAIN_PRE_LN;
    o->init = ATN_INIT_NORMAL, o->init_std = 0.02f;
    o->positions = ATN_POS_LEARNED;
    o->attention = ATN_ATTN_FULL, o->window = 4;
    o->global_first = 1, o->chunk = 4, o->linformer_k = 4;
    o->seed = 1;
    o->optim = ATN_OPTIM_ADAMW;
    o->lr = 1e-3f, o->beta1 = 0.9f, o->beta2 = 0.999f, o->adam_eps = 1e-8f, o->weight_decay = 0.01f;
    o->clip = 1.0f;
    o->batch = 32, o->steps = 3000;
    o->task = ATN_TASK_COPY, o->length = 16, o->symbols = 10;
    o->mask_prob = 0.15f;
}

void atn_train_options_induction(atn_train_options *o) {
    atn_train_options_init(o);
    o->task = ATN_TASK_INDUCTION;
    o->attention_only = true;
    o->positions = ATN_POS_ROTARY, o->rms_norm = true;   /* relative positions; saved as Llama */
    o->layers = 2, o->heads = 4, o->d_model = 64;
    o->length = 12, o->symbols = 62;
    o->lr = 1e-3f, o->batch = 32, o->steps = 800;
}

atn_status atn_train_options_check(const atn_train_options *o, bool for_saving, atn_error *err) {
    if (o->layers < 1 || o->layers > 12)
        return atn_error_set(err, ATN_E_INVALID, "--layers %d: between 1 and 12", (int)o->layers);
    if (o->d_model < 2 || o->d_model > 1024)
        return atn_error_set(err, ATN_E_INVALID, "--d-model %d: between 2 and 1024", (int)o->d_model);
    if (o->heads < 1 || o->heads > 64 || o->d_model % o->heads)
        return atn_error_set(err, ATN_E_INVALID, "--heads %d: must divide --d-model %d (at most 64)", (int)o->heads,
                             (int)o->d_model);
    if (o->d_ffn < 0 || o->d_ffn > 8192)
        return atn_error_set(err, ATN_E_INVALID, "--d-ffn %d: between 1 and 8192 (0: 4 d_model)", (int)o->d_ffn);
    if (o->batch < 1 || o->batch > 256)
        return atn_error_set(err, ATN_E_INVALID, "--batch %d: between 1 and 256", (int)o->batch);
    if (o->steps < 0)
        return atn_error_set(err, ATN_E_INVALID, "--steps %d: not negative", (int)o->steps);
    if (o->symbols < 2 || o->symbols > 62)
        return atn_error_set(err, ATN_E_INVALID, "--symbols %d: between 2 and 62", (int)o->symbols);
    if (o->length < 2 || o->length > 512)
        return atn_error_set(err, ATN_E_INVALID, "--length %d: between 2 and 512", (int)o->length);
    if (o->task == ATN_TASK_BRACKETS && o->length % 2)
        return atn_error_set(err, ATN_E_INVALID, "--length %d: the brackets task needs an even length",
                             (int)o->length);
    if (o->task == ATN_TASK_TEXT && (!o->text_path || !*o->text_path))
        return atn_error_set(err, ATN_E_INVALID, "--task text needs --text FILE");
    if (!(o->dropout_attn >= 0 && o->dropout_attn < 1) || !(o->dropout_hidden >= 0 && o->dropout_hidden < 1))
        return atn_error_set(err, ATN_E_INVALID, "--dropout: a probability in [0, 1)");
    if (!(o->lr > 0) || !isfinite(o->lr))
        return atn_error_set(err, ATN_E_INVALID, "--lr %g: a positive number", (double)o->lr);
    if (!(o->init_std > 0))
        return atn_error_set(err, ATN_E_INVALID, "--init-std %g: a positive number", (double)o->init_std);
    if (o->window < 0)
        return atn_error_set(err, ATN_E_INVALID, "--window %d: not negative", (int)o->window);
    if (!(o->clip >= 0) || o->warmup < 0 || !(o->weight_decay >= 0))
        return atn_error_set(err, ATN_E_INVALID, "--clip, --warmup, --weight-decay: not negative");
    if (o->positions == ATN_POS_ROTARY && (o->d_model / o->heads) % 2)
        return atn_error_set(err, ATN_E_INVALID, "--positions rotary: the head width %d must be even",
                             (int)(o->d_model / o->heads));
    if ((unsigned)o->precision > ATN_PRECISION_BF16)
        return atn_error_set(err, ATN_E_INVALID, "--precision %d: fp32, bf16 or fp16", (int)o->precision);
    if (atn_tr_attn_check(o, err) != ATN_OK)   /* train-attn-variants.c */
        return err ? err->status : ATN_E_INVALID;
    if (o->rms_norm && o->norm == ATN_TRAIN_NO_LN)
        return atn_error_set(err, ATN_E_INVALID, "--rms-norm with --norm none: there is no norm to change");
    if (for_saving) {
        /* rotary: Llama (RMSNorm, SwiGLU, no position table), so an RMSNorm pre-LN decoder
           without MLP, whose SwiGLU is 0; RMSNorm: Llama's, so rotary */
        if (o->attention == ATN_ATTN_LINFORMER)
            return atn_error_set(err, ATN_E_UNSUPPORTED,
                                 "--attention linformer cannot be saved: no Hugging Face family holds its "
                                 "projections E and F (train, probe and log it without -o)");
        bool llama_ok = o->decoder && o->norm == ATN_TRAIN_PRE_LN && o->rms_norm && o->attention_only;
        if (o->positions == ATN_POS_ROTARY && !llama_ok)
            return atn_error_set(err, ATN_E_UNSUPPORTED,
                                 "--positions rotary is saved as Llama, which needs a pre-LN decoder with "
                                 "--rms-norm and --attention-only (Llama's MLP is SwiGLU; train without -o "
                                 "otherwise)");
        if (o->rms_norm && o->positions != ATN_POS_ROTARY)
            return atn_error_set(err, ATN_E_UNSUPPORTED,
                                 "--rms-norm is saved as Llama, which has rotary positions: use --positions "
                                 "rotary (or train without -o)");
        if (o->decoder && o->norm != ATN_TRAIN_PRE_LN)
            return atn_error_set(err, ATN_E_UNSUPPORTED,
                                 "a decoder is saved as GPT-2, which is pre-LN: --norm %s cannot be saved (train "
                                 "without -o, or use --norm pre)",
                                 o->norm == ATN_TRAIN_POST_LN ? "post" : "none");
        if (!o->decoder && o->norm != ATN_TRAIN_POST_LN)
            return atn_error_set(err, ATN_E_UNSUPPORTED,
                                 "an encoder is saved as BERT, which is post-LN: --norm %s cannot be saved (train "
                                 "without -o, or use --norm post)",
                                 o->norm == ATN_TRAIN_PRE_LN ? "pre" : "none");
    }
    return ATN_OK;
}

/* ---- the trainer ---------------------------------------------------------------------------- */

void atn_trainer_free(atn_trainer *t) {
    if (!t)
        return;
    if (t->vocab)
        for (int32_t i = 0; i < t->V; i++)
            free(t->vocab[i]);
    free(t->vocab);
    free(t->text_ids);
    free(t->params);
    free(t->arena);
    free(t->layers);
    free(t->tensors);
    free(t->hidden);
    free(t->acts);
    free(t->ids);
    free(t->labels);
    free(t->target);
    free(t->act_block);
    free(t->slopes);
    free(t->ckpt_rng);
    free(t->ckpt_probs);
    atn_tr_precision_free(t);
    free(t);
}

atn_trainer *atn_trainer_new(const atn_train_options *o, atn_error *err) {
    if (!o) {
        atn_error_set(err, ATN_E_INVALID, "no training options");
        return NULL;
    }
    if (atn_train_options_check(o, false, err) != ATN_OK)
        return NULL;
    atn_trainer *t = calloc(1, sizeof *t);
    if (!t) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        return NULL;
    }
    t->o = *o;
    atn_layer_desc *d = &t->desc;
    d->norm_place = o->norm == ATN_TRAIN_POST_LN ? ATN_NORM_POST : o->norm == ATN_TRAIN_PRE_LN ? ATN_NORM_PRE
                                                                                                : ATN_NORM_NONE;
    d->norm_type = ATN_NORM_LAYERNORM;
    d->residual = true;
    d->mlp = ATN_MLP_PLAIN;
    /* the families the folder opens as: GPT-2's gelu_new, BERT's exact gelu */
    d->act = o->decoder ? ATN_ACT_GELU_TANH : ATN_ACT_GELU;
    d->final_norm = d->norm_place == ATN_NORM_PRE;
    d->eps = 1e-5f;
    d->d = o->d_model, d->f = o->attention_only ? 1 : o->d_ffn ? o->d_ffn : 4 * o->d_model, d->heads = o->heads;
    d->d_head = o->d_model / o->heads;
    t->n = atn_tr_task_tokens(o);
    t->B = o->batch;
    t->M = t->B * t->n;
    t->P = t->n;
    atn_tr_rng_seed(&t->data_rng, o->seed, 2);
    atn_tr_rng_seed(&t->drop_rng, o->seed, 3);
    if (atn_tr_vocab_build(t, err) != ATN_OK)
        goto fail;
    if (o->task == ATN_TASK_TEXT) {   /* the window length is the task's n; known only now */
        t->n = atn_tr_task_tokens(o);
        t->M = t->B * t->n, t->P = t->n;
    }
    t->ids = calloc((size_t)t->M, sizeof(int32_t));
    t->labels = calloc((size_t)t->M, sizeof(int32_t));
    t->target = calloc((size_t)t->M, sizeof(int32_t));
    if (!t->ids || !t->labels || !t->target) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        goto fail;
    }
    if (atn_tr_model_build(t, err) != ATN_OK)
        goto fail;
    return t;
fail:
    atn_trainer_free(t);
    return NULL;
}

/* The rows' targets: a decoder's labels shifted by one (GPT2LMHeadModel), an encoder's as
 * they are. */
static void set_targets(atn_trainer *t) {
    for (int32_t b = 0; b < t->B; b++)
        for (int32_t i = 0; i < t->n; i++) {
            size_t r = (size_t)b * t->n + i;
            if (t->o.decoder)
                t->target[r] = i + 1 < t->n ? t->labels[r + 1] : -100;
            else
                t->target[r] = t->labels[r];
            if (t->target[r] < 0)
                t->target[r] = -1;
        }
}

atn_status atn_trainer_set_batch(atn_trainer *t, const int32_t *ids, const int32_t *labels, int32_t batch,
                                 int32_t n, atn_error *err) {
    if (!t || !ids || !labels)
        return atn_error_set(err, ATN_E_INVALID, "atn_trainer_set_batch: NULL argument");
    if (batch != t->B || n != t->n)
        return atn_error_set(err, ATN_E_INVALID, "batch [%d][%d]: the trainer takes [%d][%d]", (int)batch, (int)n,
                             (int)t->B, (int)t->n);
    for (int32_t i = 0; i < batch * n; i++)
        if (ids[i] < 0 || ids[i] >= t->V || labels[i] >= t->V || (labels[i] < 0 && labels[i] != -100))
            return atn_error_set(err, ATN_E_INVALID, "batch entry %d: id %d / label %d outside the vocabulary of %d",
                                 (int)i, (int)ids[i], (int)labels[i], (int)t->V);
    memcpy(t->ids, ids, (size_t)t->M * sizeof(int32_t));
    memcpy(t->labels, labels, (size_t)t->M * sizeof(int32_t));
    t->batch_set = true;
    return ATN_OK;
}

void atn_trainer_batch(const atn_trainer *t, const int32_t **ids, const int32_t **labels, int32_t *batch,
                       int32_t *n) {
    *ids = t->ids, *labels = t->labels, *batch = t->B, *n = t->n;
}

atn_status atn_trainer_compute(atn_trainer *t, atn_train_stats *out, atn_error *err) {
    if (!t)
        return atn_error_set(err, ATN_E_INVALID, "atn_trainer_compute: NULL trainer");
    if (!t->batch_set)
        atn_tr_task_batch(t);
    t->batch_set = false;
    set_targets(t);
    float scale = t->o.precision == ATN_PRECISION_FP16 ? t->scaler.scale : 1.0f;
    atn_tr_forward_backward(t);
    if (out) {
        memset(out, 0, sizeof *out);
        out->step = t->steps_done, out->loss = t->loss, out->accuracy = t->accuracy;
        out->loss_scale = scale, out->overflow = t->scaler.found_inf, out->skipped_steps = t->scaler.skipped;
    }
    if (!isfinite(t->loss) && !t->scaler.found_inf)   /* FP16's overflow: update skips the step */
        return atn_error_set(err, ATN_E_INVALID, "step %d: the loss is not finite (lower --lr?)", (int)t->steps_done);
    return ATN_OK;
}

atn_status atn_trainer_update(atn_trainer *t, atn_train_stats *out, atn_error *err) {
    if (!t)
        return atn_error_set(err, ATN_E_INVALID, "atn_trainer_update: NULL trainer");
    float norm = atn_tr_grad_norm(t);
    float clip = 1.0f;
    if (t->o.clip > 0) {   /* torch.nn.utils.clip_grad_norm_ */
        float coef = t->o.clip / (norm + 1e-6f);
        clip = coef < 1.0f ? coef : 1.0f;
    }
    float lr = atn_tr_lr_at(&t->o, t->steps_done);
    if (t->o.precision == ATN_PRECISION_FP16) {   /* GradScaler.step, then .update */
        bool found_inf = t->scaler.found_inf;
        if (found_inf)
            t->scaler.skipped++;
        else
            atn_tr_optim_step(t, lr, clip), t->optim_steps++;
        atn_tr_scaler_update(&t->scaler, found_inf);
        t->scaler.found_inf = false;   /* one skip per overflowing compute */
    } else {
        atn_tr_optim_step(t, lr, clip);
        t->optim_steps++;
    }
    t->steps_done++;
    if (out)
        out->grad_norm = norm, out->lr = lr, out->skipped_steps = t->scaler.skipped;
    return ATN_OK;
}

int32_t atn_trainer_steps_done(const atn_trainer *t) {
    return t ? t->steps_done : 0;
}

int32_t atn_trainer_tensor_count(const atn_trainer *t) {
    return t ? t->n_tensors : 0;
}

const char *atn_trainer_tensor_name(const atn_trainer *t, int32_t i, int64_t shape[2], int *ndim) {
    if (!t || i < 0 || i >= t->n_tensors)
        return NULL;
    const atn_tr_tensor *x = &t->tensors[i];
    if (shape)
        shape[0] = x->shape[0], shape[1] = x->shape[1];
    if (ndim)
        *ndim = x->ndim;
    return x->name;
}

/* Copies between the HF layout of tensor x and its parameters (to_hf: params -> buf). */
static void copy_tensor(const atn_trainer *t, const atn_tr_tensor *x, bool grad, float *buf, bool to_hf) {
    size_t off = 0;
    int64_t out_total = x->in_out ? x->shape[1] : 0;
    for (int k = 0; k < x->nparts; k++) {
        const atn_tr_param *p = &t->params[x->parts[k]];
        float *src = grad ? p->g : p->p;
        size_t count = (size_t)p->rows * p->cols;
        if (!x->in_out) {
            if (to_hf)
                memcpy(buf + off, src, count * sizeof(float));
            else
                memcpy(src, buf + off, count * sizeof(float));
            off += count;
            continue;
        }
        /* [in][out_total]: element [i][k rows + o] = W_k[o][i] */
        for (int32_t o = 0; o < p->rows; o++)
            for (int32_t i = 0; i < p->cols; i++) {
                float *hf = buf + (size_t)i * out_total + (size_t)k * p->rows + o;
                if (to_hf)
                    *hf = src[(size_t)o * p->cols + i];
                else
                    src[(size_t)o * p->cols + i] = *hf;
            }
    }
}

static const atn_tr_tensor *tensor_named(const atn_trainer *t, const char *name, size_t count, atn_error *err) {
    int i = t && name ? atn_tr_find_tensor(t, name) : -1;
    if (i < 0) {
        atn_error_set(err, ATN_E_INVALID, "no tensor named \"%s\" in this model", name ? name : "(null)");
        return NULL;
    }
    const atn_tr_tensor *x = &t->tensors[i];
    size_t want = (size_t)x->shape[0] * (size_t)x->shape[1];
    if (count != want) {
        atn_error_set(err, ATN_E_INVALID, "tensor \"%s\" has %zu values, not %zu", name, want, count);
        return NULL;
    }
    return x;
}

atn_status atn_trainer_tensor_get(const atn_trainer *t, const char *name, bool grad, float *out, size_t count,
                                  atn_error *err) {
    const atn_tr_tensor *x = tensor_named(t, name, count, err);
    if (!x)
        return err ? err->status : ATN_E_INVALID;
    copy_tensor(t, x, grad, out, true);
    return ATN_OK;
}

atn_status atn_trainer_tensor_set(atn_trainer *t, const char *name, const float *in, size_t count, atn_error *err) {
    const atn_tr_tensor *x = tensor_named(t, name, count, err);
    if (!x)
        return err ? err->status : ATN_E_INVALID;
    copy_tensor(t, x, false, (float *)in, false);
    return ATN_OK;
}

atn_status atn_trainer_probe(atn_trainer *t, const int32_t *ids, int32_t n, atn_error *err) {
    if (!t || !ids)
        return atn_error_set(err, ATN_E_INVALID, "atn_trainer_probe: NULL argument");
    if (n != t->n)
        return atn_error_set(err, ATN_E_INVALID, "probe of %d tokens: the model takes %d", (int)n, (int)t->n);
    for (int32_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= t->V)
            return atn_error_set(err, ATN_E_INVALID, "probe id %d outside the vocabulary of %d", (int)ids[i],
                                 (int)t->V);
    for (int32_t b = 0; b < t->B; b++) {
        memcpy(t->ids + (size_t)b * n, ids, (size_t)n * sizeof(int32_t));
        for (int32_t i = 0; i < n; i++)
            t->labels[(size_t)b * n + i] = -100;
    }
    set_targets(t);
    atn_tr_forward_eval(t);
    return ATN_OK;
}

const float *atn_trainer_attention(const atn_trainer *t, int32_t layer, int32_t *n) {
    if (!t || layer < 0 || layer >= t->o.layers)
        return NULL;
    if (n)
        *n = t->n;
    return atn_tr_layer_probs(t, layer);   /* sequence 0 comes first: [H][n][keys] */
}

int32_t atn_trainer_attention_keys(const atn_trainer *t) {
    return t ? t->keys : 0;
}

int32_t atn_trainer_induction_scores(const atn_trainer *t, float *out) {
    if (!t || !out)
        return 0;
    int32_t n = t->n, H = t->o.heads, L = t->o.layers, rows = 0;
    const int32_t *ids = t->ids;   /* the first sequence */
    if (t->keys != n) {   /* Linformer: a column is a projected key, not a token */
        memset(out, 0, (size_t)L * H * sizeof *out);
        return 0;
    }
    for (int32_t l = 0; l < L; l++)
        for (int32_t h = 0; h < H; h++) {
            const float *p = atn_tr_layer_probs(t, l) + (size_t)h * n * n;
            double sum = 0;
            int32_t nr = 0;
            for (int32_t i = 1; i < n; i++) {
                double w = 0;
                bool any = false;
                for (int32_t j = 1; j + 1 < i; j++)
                    if (ids[j] == ids[i] && ids[j - 1] == ids[i - 1])
                        w += p[(size_t)i * n + j + 1], any = true;
                if (any)
                    sum += w, nr++;
            }
            out[l * H + h] = nr ? (float)(sum / nr) : 0.0f;
            rows = nr;
        }
    return rows;
}

int32_t atn_trainer_tokens(const atn_trainer *t) {
    return t ? t->n : 0;
}

int32_t atn_trainer_vocab_size(const atn_trainer *t) {
    return t ? t->V : 0;
}

const char *atn_trainer_token(const atn_trainer *t, int32_t id) {
    return t && id >= 0 && id < t->V ? t->vocab[id] : NULL;
}

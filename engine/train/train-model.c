/* The trained model: its parameters (values, gradients and Adam's state in one arena),
 * their Hugging Face names, their initialisation, and the walk forward and back over the
 * layers that atn_layer_desc describes (post-LN, pre-LN or none; the MLP; the final norm),
 * as engine/forward/layer.c walks them for every family.  The ops are train-ops.c's.
 *
 * Per layer (x its input):
 *     attn_in = pre ? LN1(x) : x;   q, k, v = attn_in W^T + b;   ctx = attention(q, k, v)
 *     r = x + drop(ctx Wo^T + bo);  post: r = LN1(r)
 *     ffn_in = pre ? LN2(r) : r;    s = r + drop(act(ffn_in W1^T + b1) W2^T + b2)
 *     out = post ? LN2(s) : s
 * The embeddings are wte[id] + wpe[pos] (+ the token type row, and LN in a post-LN encoder: BERT's),
 * dropped; the final norm is ln_f (pre-LN: GPT-2's); the head is tied to wte (a decoder,
 * GPT-2's lm_head) or BERT's cls.predictions (dense, GELU, LayerNorm, tied decoder, bias). */
#include "train/train-private.h"
#include "train/train-ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the parameters ------------------------------------------------------------------ */

static int add_param(atn_trainer *t, const char *name, int32_t rows, int32_t cols, bool fixed) {
    atn_tr_param *p = &t->params[t->n_params];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->rows = rows, p->cols = cols, p->fixed = fixed;
    return t->n_params++;
}

static void add_tensor(atn_trainer *t, const char *name, bool in_out, int a, int b, int c) {
    if (a < 0)
        return;
    atn_tr_tensor *x = &t->tensors[t->n_tensors++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->parts[0] = a, x->parts[1] = b, x->parts[2] = c;
    x->nparts = c >= 0 ? 3 : b >= 0 ? 2 : 1;
    x->in_out = in_out;
    const atn_tr_param *p = &t->params[a];
    int64_t out = (int64_t)p->rows * x->nparts;
    bool vector = p->rows == 1 && a != t->wtt && !p->matrix;   /* the token-type table is [1][d] */
    if (vector && x->nparts == 1) {
        x->ndim = 1, x->shape[0] = p->cols, x->shape[1] = 1;
    } else if (vector) {   /* fused biases */
        x->ndim = 1, x->shape[0] = (int64_t)p->cols * x->nparts, x->shape[1] = 1;
    } else if (in_out) {
        x->ndim = 2, x->shape[0] = p->cols, x->shape[1] = out;
    } else {
        x->ndim = 2, x->shape[0] = out, x->shape[1] = p->cols;
    }
}

int atn_tr_find_tensor(const atn_trainer *t, const char *name) {
    for (int i = 0; i < t->n_tensors; i++)
        if (!strcmp(t->tensors[i].name, name))
            return i;
    return -1;
}

static void name_tensors(atn_trainer *t) {
    char s[96];
    int32_t L = t->o.layers;
    if (t->o.decoder && t->o.rms_norm) {   /* LlamaForCausalLM (attention_bias, tied head) */
        add_tensor(t, "model.embed_tokens.weight", false, t->wte, -1, -1);
        for (int32_t l = 0; l < L; l++) {
            const atn_tr_layer *y = &t->layers[l];
#define T(suffix, a) (snprintf(s, sizeof s, "model.layers.%d.%s", (int)l, suffix), add_tensor(t, s, false, a, -1, -1))
            T("input_layernorm.weight", y->ln1_g);
            T("self_attn.q_proj.weight", y->wq);
            T("self_attn.q_proj.bias", y->bq);
            T("self_attn.k_proj.weight", y->wk);
            T("self_attn.k_proj.bias", y->bk);
            T("self_attn.v_proj.weight", y->wv);
            T("self_attn.v_proj.bias", y->bv);
            T("self_attn.o_proj.weight", y->wo);
            T("self_attn.o_proj.bias", y->bo);
            T("post_attention_layernorm.weight", y->ln2_g);
            /* SwiGLU's three matrices: saved only for an attention-only model, whose MLP is 0
               (silu(0) 0 = 0), so gate and up are the same zeros */
            T("mlp.gate_proj.weight", y->w1);
            T("mlp.up_proj.weight", y->w1);
            T("mlp.down_proj.weight", y->w2);
#undef T
        }
        add_tensor(t, "model.norm.weight", false, t->lnf_g, -1, -1);
        return;
    }
    if (t->o.decoder) {   /* GPT2LMHeadModel */
        add_tensor(t, "transformer.wte.weight", false, t->wte, -1, -1);
        add_tensor(t, "transformer.wpe.weight", false, t->wpe, -1, -1);
        for (int32_t l = 0; l < L; l++) {
            const atn_tr_layer *y = &t->layers[l];
#define T(suffix, io, a, b, c) (snprintf(s, sizeof s, "transformer.h.%d.%s", (int)l, suffix), add_tensor(t, s, io, a, b, c))
            T("ln_1.weight", false, y->ln1_g, -1, -1);
            T("ln_1.bias", false, y->ln1_b, -1, -1);
            T("attn.c_attn.weight", true, y->wq, y->wk, y->wv);
            T("attn.c_attn.bias", false, y->bq, y->bk, y->bv);
            T("attn.c_proj.weight", true, y->wo, -1, -1);
            T("attn.c_proj.bias", false, y->bo, -1, -1);
            T("ln_2.weight", false, y->ln2_g, -1, -1);
            T("ln_2.bias", false, y->ln2_b, -1, -1);
            T("mlp.c_fc.weight", true, y->w1, -1, -1);
            T("mlp.c_fc.bias", false, y->b1, -1, -1);
            T("mlp.c_proj.weight", true, y->w2, -1, -1);
            T("mlp.c_proj.bias", false, y->b2, -1, -1);
#undef T
        }
        add_tensor(t, "transformer.ln_f.weight", false, t->lnf_g, -1, -1);
        add_tensor(t, "transformer.ln_f.bias", false, t->lnf_b, -1, -1);
        return;
    }
    /* BertForMaskedLM */
    add_tensor(t, "bert.embeddings.word_embeddings.weight", false, t->wte, -1, -1);
    add_tensor(t, "bert.embeddings.position_embeddings.weight", false, t->wpe, -1, -1);
    add_tensor(t, "bert.embeddings.token_type_embeddings.weight", false, t->wtt, -1, -1);
    add_tensor(t, "bert.embeddings.LayerNorm.weight", false, t->emb_g, -1, -1);
    add_tensor(t, "bert.embeddings.LayerNorm.bias", false, t->emb_b, -1, -1);
    for (int32_t l = 0; l < L; l++) {
        const atn_tr_layer *y = &t->layers[l];
#define T(suffix, a) (snprintf(s, sizeof s, "bert.encoder.layer.%d.%s", (int)l, suffix), add_tensor(t, s, false, a, -1, -1))
        T("attention.self.query.weight", y->wq);
        T("attention.self.query.bias", y->bq);
        T("attention.self.key.weight", y->wk);
        T("attention.self.key.bias", y->bk);
        T("attention.self.value.weight", y->wv);
        T("attention.self.value.bias", y->bv);
        T("attention.self.linformer_e.weight", y->lin_e);   /* Linformer only (no HF family) */
        T("attention.self.linformer_f.weight", y->lin_f);
        T("attention.output.dense.weight", y->wo);
        T("attention.output.dense.bias", y->bo);
        T("attention.output.LayerNorm.weight", y->ln1_g);
        T("attention.output.LayerNorm.bias", y->ln1_b);
        T("intermediate.dense.weight", y->w1);
        T("intermediate.dense.bias", y->b1);
        T("output.dense.weight", y->w2);
        T("output.dense.bias", y->b2);
        T("output.LayerNorm.weight", y->ln2_g);
        T("output.LayerNorm.bias", y->ln2_b);
#undef T
    }
    add_tensor(t, "bert.encoder.ln_f.weight", false, t->lnf_g, -1, -1);   /* pre-LN only (no HF family) */
    add_tensor(t, "bert.encoder.ln_f.bias", false, t->lnf_b, -1, -1);
    add_tensor(t, "cls.predictions.transform.dense.weight", false, t->hd_w, -1, -1);
    add_tensor(t, "cls.predictions.transform.dense.bias", false, t->hd_b, -1, -1);
    add_tensor(t, "cls.predictions.transform.LayerNorm.weight", false, t->hln_g, -1, -1);
    add_tensor(t, "cls.predictions.transform.LayerNorm.bias", false, t->hln_b, -1, -1);
    add_tensor(t, "cls.predictions.bias", false, t->h_bias, -1, -1);
}

/* ---- initialisation ------------------------------------------------------------------- */

static void init_normal(atn_tr_rng *r, float *w, size_t count, float std) {
    for (size_t i = 0; i < count; i++)
        w[i] = (float)(atn_tr_rng_normal(r) * std);
}

/* torch.nn.init.orthogonal_: rows (or columns, whichever are fewer) orthonormal, from a
 * Gaussian matrix by Gram-Schmidt in double (the same span as QR with the sign fix). */
static void init_orthogonal(atn_tr_rng *r, float *w, int32_t rows, int32_t cols) {
    int32_t nv = rows <= cols ? rows : cols, len = rows <= cols ? cols : rows;
    double *a = malloc((size_t)nv * len * sizeof(double));
    if (!a) {
        init_normal(r, w, (size_t)rows * cols, 1.0f / sqrtf((float)cols));
        return;
    }
    for (size_t i = 0; i < (size_t)nv * len; i++)
        a[i] = atn_tr_rng_normal(r);
    for (int32_t i = 0; i < nv; i++) {
        double *vi = a + (size_t)i * len;
        for (int32_t j = 0; j < i; j++) {
            const double *vj = a + (size_t)j * len;
            double dot = 0;
            for (int32_t c = 0; c < len; c++)
                dot += vi[c] * vj[c];
            for (int32_t c = 0; c < len; c++)
                vi[c] -= dot * vj[c];
        }
        double nrm = 0;
        for (int32_t c = 0; c < len; c++)
            nrm += vi[c] * vi[c];
        nrm = sqrt(nrm);
        for (int32_t c = 0; c < len; c++)
            vi[c] /= nrm;
    }
    for (int32_t i = 0; i < rows; i++)
        for (int32_t c = 0; c < cols; c++)
            w[(size_t)i * cols + c] = (float)(rows <= cols ? a[(size_t)i * len + c] : a[(size_t)c * len + i]);
    free(a);
}

static void init_matrix(const atn_train_options *o, atn_tr_rng *r, atn_tr_param *p) {
    size_t count = (size_t)p->rows * p->cols;
    switch (o->init) {
    case ATN_INIT_NORMAL:
        init_normal(r, p->p, count, o->init_std);
        break;
    case ATN_INIT_XAVIER: {   /* torch.nn.init.xavier_uniform_ */
        double a = sqrt(6.0 / (double)(p->rows + p->cols));
        for (size_t i = 0; i < count; i++)
            p->p[i] = (float)((2.0 * atn_tr_rng_uniform(r) - 1.0) * a);
        break;
    }
    case ATN_INIT_ORTHOGONAL:
        init_orthogonal(r, p->p, p->rows, p->cols);
        break;
    }
}

/* The fixed position tables: sinusoidal (Vaswani et al., as DistilBERT's
 * create_sinusoidal_embeddings: sin in even columns, cos in odd) or zero. */
static void init_positions(const atn_trainer *t, atn_tr_param *p) {
    int32_t d = p->cols;
    for (int32_t pos = 0; pos < p->rows; pos++)
        for (int32_t j = 0; j < d; j++) {
            float v = 0.0f;
            if (t->o.positions == ATN_POS_SINUSOIDAL) {
                double angle = pos / pow(10000.0, 2.0 * (j / 2) / (double)d);
                v = (float)(j % 2 ? cos(angle) : sin(angle));
            }
            p->p[(size_t)pos * d + j] = v;
        }
}

/* ---- building ---------------------------------------------------------------------------- */

static float *take(float **cur, size_t count) {
    float *p = *cur;
    *cur += count;
    return p;
}

/* Lays the activations out from base (NULL: only counts); returns the floats needed. */
static size_t layout_acts(atn_trainer *t, float *base) {
    float *c = base;
    size_t M = (size_t)t->M, d = (size_t)t->o.d_model, f = (size_t)t->desc.f, V = (size_t)t->V;
    size_t att = (size_t)t->B * t->o.heads * t->n * t->keys;
    bool lin = t->o.attention == ATN_ATTN_LINFORMER;
    size_t kd = (size_t)t->B * t->keys * d;
    bool drop_h = t->o.dropout_hidden > 0, drop_a = t->o.dropout_attn > 0;
    int32_t L = t->o.layers;
    bool round = t->o.precision != ATN_PRECISION_FP32;
    t->emb_sum = take(&c, M * d), t->emb_mean = take(&c, M), t->emb_rstd = take(&c, M);
    t->keep_emb = drop_h ? take(&c, M * d) : NULL;
    float *layers_start = c;
    for (int32_t l = 0; l <= L; l++)
        t->hidden[l] = take(&c, M * d);
    for (int32_t l = 0; l < L; l++) {
        atn_tr_acts *a = &t->acts[l];
        if (t->o.checkpoint && l > 0) {   /* one set for all layers, recomputed in the backward */
            *a = t->acts[0];
            a->x = t->hidden[l];
            continue;
        }
        a->x = t->hidden[l];
        a->attn_in = take(&c, M * d);
        a->ln1_in = take(&c, M * d), a->ln1_mean = take(&c, M), a->ln1_rstd = take(&c, M);
        a->q = take(&c, M * d), a->k = take(&c, M * d), a->v = take(&c, M * d);
        a->ctx = take(&c, M * d), a->ao = take(&c, M * d);
        a->probs = take(&c, att);
        a->probs_d = drop_a || round ? take(&c, att) : a->probs;
        a->keep_attn = drop_a ? take(&c, att) : NULL;
        a->kp = lin ? take(&c, kd) : NULL;
        a->vp = lin ? take(&c, kd) : NULL;
        a->keep_ao = drop_h ? take(&c, M * d) : NULL;
        a->keep_h2 = drop_h ? take(&c, M * d) : NULL;
        a->r = take(&c, M * d), a->ffn_in = take(&c, M * d);
        a->ln2_in = take(&c, M * d), a->ln2_mean = take(&c, M), a->ln2_rstd = take(&c, M);
        a->f_pre = take(&c, M * f), a->f_act = take(&c, M * f);
        a->h2 = take(&c, M * d), a->s = take(&c, M * d);
    }
    t->act_layer_bytes = (size_t)(c - layers_start) * sizeof(float);
    t->fin = take(&c, M * d), t->fin_mean = take(&c, M), t->fin_rstd = take(&c, M);
    t->hd_pre = take(&c, M * d), t->hd_act = take(&c, M * d), t->hd_out = take(&c, M * d);
    t->hd_mean = take(&c, M), t->hd_rstd = take(&c, M);
    t->logits = take(&c, M * V), t->dlogits = take(&c, M * V);
    t->d_a = take(&c, M * d), t->d_b = take(&c, M * d), t->d_c = take(&c, M * d);
    t->d_q = take(&c, M * d), t->d_k = take(&c, M * d), t->d_v = take(&c, M * d);
    t->d_f = take(&c, 2 * M * f), t->d_att = take(&c, (size_t)t->n * t->n);
    t->mask = take(&c, (size_t)t->n * t->n);
    t->d_lin = lin ? take(&c, (size_t)t->n * t->keys + 2 * (size_t)t->keys * d) : NULL;
    return (size_t)(c - base);
}

atn_status atn_tr_model_build(atn_trainer *t, atn_error *err) {
    const atn_train_options *o = &t->o;
    int32_t L = o->layers, d = o->d_model, f = t->desc.f, V = t->V, P = t->P;
    bool post = o->norm == ATN_TRAIN_POST_LN, pre = o->norm == ATN_TRAIN_PRE_LN, ln = o->norm != ATN_TRAIN_NO_LN;
    t->keys = o->attention == ATN_ATTN_LINFORMER ? o->linformer_k : t->n;
    t->params = calloc((size_t)(18 * L + 20), sizeof *t->params);
    t->layers = calloc((size_t)L, sizeof *t->layers);
    t->tensors = calloc((size_t)(18 * L + 20), sizeof *t->tensors);
    t->hidden = calloc((size_t)L + 1, sizeof *t->hidden);
    t->acts = calloc((size_t)L, sizeof *t->acts);
    if (!t->params || !t->layers || !t->tensors || !t->hidden || !t->acts)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory building the model");
    t->wte = add_param(t, "wte", V, d, false);
    t->wpe = add_param(t, "wpe", P, d, o->positions != ATN_POS_LEARNED);
    t->wtt = o->decoder ? -1 : add_param(t, "wtt", 1, d, false);
    /* BERT's embedding LayerNorm: post-LN encoders only (GPT-1-style post-LN decoders have none) */
    t->emb_g = post && !o->decoder ? add_param(t, "emb_ln.g", 1, d, false) : -1;
    t->emb_b = post && !o->decoder ? add_param(t, "emb_ln.b", 1, d, false) : -1;
    for (int32_t l = 0; l < L; l++) {
        atn_tr_layer *y = &t->layers[l];
        y->ln1_g = ln ? add_param(t, "ln1.g", 1, d, false) : -1;
        y->ln1_b = ln ? add_param(t, "ln1.b", 1, d, o->rms_norm) : -1;   /* RMSNorm: no bias (0) */
        y->wq = add_param(t, "wq", d, d, false), y->bq = add_param(t, "bq", 1, d, false);
        y->wk = add_param(t, "wk", d, d, false), y->bk = add_param(t, "bk", 1, d, false);
        y->wv = add_param(t, "wv", d, d, false), y->bv = add_param(t, "bv", 1, d, false);
        y->wo = add_param(t, "wo", d, d, false), y->bo = add_param(t, "bo", 1, d, false);
        y->ln2_g = ln ? add_param(t, "ln2.g", 1, d, false) : -1;
        y->ln2_b = ln ? add_param(t, "ln2.b", 1, d, o->rms_norm) : -1;
        /* attention only: an MLP of width 1 whose weights stay 0 (fixed), so it adds nothing
           and a GPT-2 or BERT folder still holds the model */
        bool mlp_off = o->attention_only;
        y->w1 = add_param(t, "w1", f, d, mlp_off), y->b1 = add_param(t, "b1", 1, f, mlp_off);
        y->w2 = add_param(t, "w2", d, f, mlp_off), y->b2 = add_param(t, "b2", 1, d, mlp_off);
        t->params[y->w1].matrix = true;
        bool lin = o->attention == ATN_ATTN_LINFORMER;
        y->lin_e = lin ? add_param(t, "lin_e", t->keys, t->n, false) : -1;
        y->lin_f = lin ? add_param(t, "lin_f", t->keys, t->n, false) : -1;
    }
    t->lnf_g = pre ? add_param(t, "ln_f.g", 1, d, false) : -1;
    t->lnf_b = pre ? add_param(t, "ln_f.b", 1, d, o->rms_norm) : -1;
    t->hd_w = t->hd_b = t->hln_g = t->hln_b = t->h_bias = -1;
    if (!o->decoder) {
        t->hd_w = add_param(t, "head.dense.w", d, d, false), t->hd_b = add_param(t, "head.dense.b", 1, d, false);
        t->hln_g = add_param(t, "head.ln.g", 1, d, false), t->hln_b = add_param(t, "head.ln.b", 1, d, false);
        t->h_bias = add_param(t, "head.bias", 1, V, false);
    }
    size_t total = 0;
    for (int i = 0; i < t->n_params; i++)
        total += (size_t)t->params[i].rows * t->params[i].cols;
    t->total = total;
    t->arena = calloc(4 * total, sizeof(float));
    if (!t->arena)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory: %zu parameters", total);
    size_t off = 0;
    for (int i = 0; i < t->n_params; i++) {
        atn_tr_param *p = &t->params[i];
        p->p = t->arena + off, p->g = t->arena + total + off;
        p->m = t->arena + 2 * total + off, p->v = t->arena + 3 * total + off;
        off += (size_t)p->rows * p->cols;
    }
    name_tensors(t);

    /* initial values: matrices by the chosen scheme, embeddings N(0, init_std), norms 1 and
       0, biases 0; one stream, in parameter order */
    atn_tr_rng r;
    atn_tr_rng_seed(&r, o->seed, 1);
    for (int i = 0; i < t->n_params; i++) {
        atn_tr_param *p = &t->params[i];
        size_t count = (size_t)p->rows * p->cols;
        if (i == t->wpe && p->fixed)
            init_positions(t, p);
        else if (p->fixed && !strstr(p->name, ".g"))
            continue;   /* an attention-only model's MLP, an RMSNorm's bias: zeros */
        else if (i == t->wte || i == t->wpe || i == t->wtt)
            init_normal(&r, p->p, count, o->init_std);
        else if (!strncmp(p->name, "lin_", 4))   /* Linformer's E, F: each projected row a mix of
                                                    the n rows of unit expected norm */
            init_normal(&r, p->p, count, 1.0f / sqrtf((float)t->n));
        else if (p->rows > 1)
            init_matrix(o, &r, p);
        else if (strstr(p->name, ".g"))
            for (size_t k = 0; k < count; k++)
                p->p[k] = 1.0f;
    }

    size_t acts = layout_acts(t, NULL);
    t->act_block = calloc(acts, sizeof(float));
    if (!t->act_block)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory: %zu floats of activations", acts);
    layout_acts(t, t->act_block);
    t->act_bytes = acts * sizeof(float);
    if (o->checkpoint) {
        size_t probe = (size_t)L * o->heads * t->n * t->keys;
        t->ckpt_rng = calloc((size_t)L, sizeof *t->ckpt_rng);
        t->ckpt_probs = calloc(probe, sizeof(float));
        if (!t->ckpt_rng || !t->ckpt_probs)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        size_t extra = probe * sizeof(float) + (size_t)L * sizeof *t->ckpt_rng;
        t->act_bytes += extra, t->act_layer_bytes += extra;
    }
    atn_status st = atn_tr_precision_build(t, err);
    if (st != ATN_OK)
        return st;
    atn_tr_attn_mask(o, t->n, t->mask);   /* train-attn-variants.c */
    t->slopes = calloc((size_t)o->heads, sizeof(float));
    if (!t->slopes)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    atn_alibi_slopes(o->heads, t->slopes);
    return ATN_OK;
}

/* ---- the walk ------------------------------------------------------------------------- */

/* The norm: LayerNorm, or with rms_norm Llama's RMSNorm (mean left at 0, no bias). */
static void norm_fwd(const atn_trainer *t, float *out, float *mean, float *rstd, const float *in, const float *g,
                     const float *b, int32_t M, int32_t d, float eps) {
    if (!t->o.rms_norm) {
        atn_tr_layernorm_forward(out, mean, rstd, in, g, b, M, d, eps);
        return;
    }
    atn_tr_rmsnorm_forward(out, rstd, in, g, M, d, eps);
    memset(mean, 0, (size_t)M * sizeof *mean);
}
static void norm_bwd(const atn_trainer *t, float *din, float *dg, float *db, const float *dout, const float *in,
                     const float *mean, const float *rstd, const float *g, int32_t M, int32_t d) {
    if (!t->o.rms_norm)
        atn_tr_layernorm_backward(din, dg, db, dout, in, mean, rstd, g, M, d);
    else
        atn_tr_rmsnorm_backward(din, dg, dout, in, rstd, g, M, d);
}

#define PP(i) (t->params[i].p)
#define GG(i) (t->params[i].g)

static void fill_keep(atn_tr_rng *r, float *keep, size_t count, float p) {
    float scale = 1.0f / (1.0f - p);
    for (size_t i = 0; i < count; i++)
        keep[i] = atn_tr_rng_uniform(r) < p ? 0.0f : scale;
}

/* Layer l's forward from its input a->x (train: dropout on), into its activations and
 * hidden[l + 1]; checkpointing runs it again in the backward. */
static void layer_forward(atn_trainer *t, int32_t l, bool train) {
    const atn_train_options *o = &t->o;
    int32_t M = t->M, d = o->d_model, f = t->desc.f, n = t->n, H = o->heads;
    size_t Md = (size_t)M * d;
    float eps = t->desc.eps, scale = atn_layer_scale(&t->desc, 0);
    bool post = t->desc.norm_place == ATN_NORM_POST, pre = t->desc.norm_place == ATN_NORM_PRE;
    bool drop_h = train && o->dropout_hidden > 0, drop_a = train && o->dropout_attn > 0;
    size_t att = (size_t)t->B * H * n * t->keys;
    const atn_tr_layer *y = &t->layers[l];
    atn_tr_acts *a = &t->acts[l];
    if (pre) {
        memcpy(a->ln1_in, a->x, Md * sizeof(float));
        norm_fwd(t, a->attn_in, a->ln1_mean, a->ln1_rstd, a->x, PP(y->ln1_g), PP(y->ln1_b), M, d,
                                 eps);
    } else {
        memcpy(a->attn_in, a->x, Md * sizeof(float));
    }
    atn_tr_p_linear_forward(t, a->q, a->attn_in, y->wq, y->bq, M, d, d);
    atn_tr_p_linear_forward(t, a->k, a->attn_in, y->wk, y->bk, M, d, d);
    atn_tr_p_linear_forward(t, a->v, a->attn_in, y->wv, y->bv, M, d, d);
    if (o->positions == ATN_POS_ROTARY) {   /* q and k keep the rotated values */
        atn_tr_rotary(a->q, M, n, d, H, 10000.0f, 1);
        atn_tr_rotary(a->k, M, n, d, H, 10000.0f, 1);
    }
    /* QK^T and P·V read q, k and v rounded (kept so for the backward's products) */
    atn_tr_mm_round(t, a->q, Md), atn_tr_mm_round(t, a->k, Md), atn_tr_mm_round(t, a->v, Md);
    if (a->keep_attn) {
        if (drop_a)
            fill_keep(&t->drop_rng, a->keep_attn, att, o->dropout_attn);
        else
            for (size_t i = 0; i < att; i++)
                a->keep_attn[i] = 1.0f;
    }
    if (o->attention == ATN_ATTN_LINFORMER)   /* E and F read rounded, as a linear's weights */
        atn_tr_linformer_forward(a->ctx, a->probs, a->probs_d, a->kp, a->vp, a->q, a->k, a->v,
                                 atn_tr_mm_w(t, y->lin_e), atn_tr_mm_w(t, y->lin_f), a->keep_attn, scale, t->B, n,
                                 t->keys, d, H, o->precision);
    else
        atn_tr_attention_forward(a->ctx, a->probs, a->probs_d, a->q, a->k, a->v, t->mask,
                                 o->positions == ATN_POS_ALIBI ? t->slopes : NULL, a->keep_attn, scale, t->B, n, d,
                                 H, o->precision);
    atn_tr_p_linear_forward(t, a->ao, a->ctx, y->wo, y->bo, M, d, d);
    if (a->keep_ao) {
        if (drop_h)
            fill_keep(&t->drop_rng, a->keep_ao, Md, o->dropout_hidden);
        else
            for (size_t i = 0; i < Md; i++)
                a->keep_ao[i] = 1.0f;
        atn_tr_dropout(a->ao, a->keep_ao, Md);
    }
    if (post) {
        for (size_t i = 0; i < Md; i++)
            a->ln1_in[i] = a->x[i] + a->ao[i];
        norm_fwd(t, a->r, a->ln1_mean, a->ln1_rstd, a->ln1_in, PP(y->ln1_g), PP(y->ln1_b), M, d,
                                 eps);
    } else {
        for (size_t i = 0; i < Md; i++)
            a->r[i] = a->x[i] + a->ao[i];
    }
    if (pre) {
        memcpy(a->ln2_in, a->r, Md * sizeof(float));
        norm_fwd(t, a->ffn_in, a->ln2_mean, a->ln2_rstd, a->r, PP(y->ln2_g), PP(y->ln2_b), M, d,
                                 eps);
    } else {
        memcpy(a->ffn_in, a->r, Md * sizeof(float));
    }
    atn_tr_p_linear_forward(t, a->f_pre, a->ffn_in, y->w1, y->b1, M, d, f);
    atn_tr_act_forward(a->f_act, a->f_pre, (size_t)M * f, t->desc.act);
    atn_tr_p_linear_forward(t, a->h2, a->f_act, y->w2, y->b2, M, f, d);
    if (a->keep_h2) {
        if (drop_h)
            fill_keep(&t->drop_rng, a->keep_h2, Md, o->dropout_hidden);
        else
            for (size_t i = 0; i < Md; i++)
                a->keep_h2[i] = 1.0f;
        atn_tr_dropout(a->h2, a->keep_h2, Md);
    }
    for (size_t i = 0; i < Md; i++)
        a->s[i] = a->r[i] + a->h2[i];
    if (post) {
        memcpy(a->ln2_in, a->s, Md * sizeof(float));
        norm_fwd(t, t->hidden[l + 1], a->ln2_mean, a->ln2_rstd, a->s, PP(y->ln2_g), PP(y->ln2_b), M,
                                 d, eps);
    } else {
        memcpy(t->hidden[l + 1], a->s, Md * sizeof(float));
    }
}

/* The forward of the batch's B sequences (train: dropout on). */
static void forward(atn_trainer *t, bool train) {
    const atn_train_options *o = &t->o;
    int32_t M = t->M, d = o->d_model, V = t->V, n = t->n, H = o->heads;
    size_t Md = (size_t)M * d;
    float eps = t->desc.eps;
    bool pre = t->desc.norm_place == ATN_NORM_PRE;
    bool drop_h = train && o->dropout_hidden > 0;

    atn_tr_precision_begin(t);
    /* embeddings */
    for (int32_t r = 0; r < M; r++) {
        const float *we = PP(t->wte) + (size_t)t->ids[r] * d, *wp = PP(t->wpe) + (size_t)(r % n) * d;
        float *e = t->emb_sum + (size_t)r * d;
        for (int32_t c = 0; c < d; c++)
            e[c] = we[c] + wp[c];
        if (t->wtt >= 0)
            for (int32_t c = 0; c < d; c++)
                e[c] += PP(t->wtt)[c];
    }
    if (t->emb_g >= 0)
        norm_fwd(t, t->hidden[0], t->emb_mean, t->emb_rstd, t->emb_sum, PP(t->emb_g), PP(t->emb_b), M,
                                 d, eps);
    else
        memcpy(t->hidden[0], t->emb_sum, Md * sizeof(float));
    if (t->keep_emb) {
        if (drop_h)
            fill_keep(&t->drop_rng, t->keep_emb, Md, o->dropout_hidden);
        else
            for (size_t i = 0; i < Md; i++)
                t->keep_emb[i] = 1.0f;
        atn_tr_dropout(t->hidden[0], t->keep_emb, Md);
    }

    for (int32_t l = 0; l < o->layers; l++) {
        if (t->ckpt_rng)   /* the backward's recompute draws the same dropout masks */
            t->ckpt_rng[l] = t->drop_rng;
        layer_forward(t, l, train);
        if (t->ckpt_probs)   /* the layers share one set: sequence 0's maps kept apart */
            memcpy(t->ckpt_probs + (size_t)l * H * n * t->keys, t->acts[l].probs,
                   (size_t)H * n * t->keys * sizeof(float));
    }

    const float *h = t->hidden[o->layers];
    if (pre)
        norm_fwd(t, t->fin, t->fin_mean, t->fin_rstd, h, PP(t->lnf_g), PP(t->lnf_b), M, d, eps);
    else
        memcpy(t->fin, h, Md * sizeof(float));
    if (o->decoder) {
        atn_tr_p_linear_forward(t, t->logits, t->fin, t->wte, -1, M, d, V);
    } else {
        atn_tr_p_linear_forward(t, t->hd_pre, t->fin, t->hd_w, t->hd_b, M, d, d);
        atn_tr_act_forward(t->hd_act, t->hd_pre, Md, t->desc.act);
        norm_fwd(t, t->hd_out, t->hd_mean, t->hd_rstd, t->hd_act, PP(t->hln_g), PP(t->hln_b), M, d, eps);
        atn_tr_p_linear_forward(t, t->logits, t->hd_out, t->wte, t->h_bias, M, d, V);
    }
    int64_t correct = 0, count = 0;
    t->loss = atn_tr_crossentropy(t->dlogits, &correct, &count, t->logits, t->target, M, V);
    t->accuracy = count ? (float)correct / (float)count : 0.0f;
}

static void backward(atn_trainer *t) {
    const atn_train_options *o = &t->o;
    int32_t M = t->M, d = o->d_model, f = t->desc.f, V = t->V, n = t->n, H = o->heads;
    size_t Md = (size_t)M * d, Mf = (size_t)M * f, bytes = Md * sizeof(float);
    float scale = atn_layer_scale(&t->desc, 0);
    bool post = t->desc.norm_place == ATN_NORM_POST, pre = t->desc.norm_place == ATN_NORM_PRE;
    memset(t->arena + t->total, 0, t->total * sizeof(float));

    /* the head: dfin into d_a */
    memset(t->d_a, 0, bytes);
    if (o->decoder) {
        atn_tr_p_linear_backward(t, t->d_a, t->wte, -1, t->dlogits, t->fin, M, d, V);
    } else {
        memset(t->d_b, 0, bytes);
        atn_tr_p_linear_backward(t, t->d_b, t->wte, t->h_bias, t->dlogits, t->hd_out, M, d, V);
        memset(t->d_c, 0, bytes);
        norm_bwd(t, t->d_c, GG(t->hln_g), GG(t->hln_b), t->d_b, t->hd_act, t->hd_mean, t->hd_rstd,
                                  PP(t->hln_g), M, d);
        memset(t->d_b, 0, bytes);
        atn_tr_act_backward(t->d_b, t->d_c, t->hd_pre, Md, t->desc.act);
        atn_tr_p_linear_backward(t, t->d_a, t->hd_w, t->hd_b, t->d_b, t->fin, M, d, d);
    }
    if (pre) {
        memset(t->d_b, 0, bytes);
        norm_bwd(t, t->d_b, GG(t->lnf_g), GG(t->lnf_b), t->d_a, t->hidden[o->layers], t->fin_mean,
                                  t->fin_rstd, PP(t->lnf_g), M, d);
        memcpy(t->d_a, t->d_b, bytes);
    }

    /* the layers, last first: d_a holds d(out) on entry and d(x) on exit */
    atn_tr_rng after_forward = t->drop_rng;
    for (int32_t l = o->layers - 1; l >= 0; l--) {
        const atn_tr_layer *y = &t->layers[l];
        atn_tr_acts *a = &t->acts[l];
        if (t->ckpt_rng) {   /* checkpointing: the layer's activations again, as the forward made them */
            t->drop_rng = t->ckpt_rng[l];
            layer_forward(t, l, true);
        }
        float *ds = t->d_a;
        if (post) {
            memset(t->d_b, 0, bytes);
            norm_bwd(t, t->d_b, GG(y->ln2_g), GG(y->ln2_b), t->d_a, a->ln2_in, a->ln2_mean, a->ln2_rstd,
                                      PP(y->ln2_g), M, d);
            ds = t->d_b;
        }
        /* the MLP */
        memcpy(t->d_c, ds, bytes);
        if (a->keep_h2)
            atn_tr_dropout(t->d_c, a->keep_h2, Md);
        float *dfact = t->d_f, *dfpre = t->d_f + Mf;
        memset(dfact, 0, Mf * sizeof(float));
        atn_tr_p_linear_backward(t, dfact, y->w2, y->b2, t->d_c, a->f_act, M, f, d);
        memset(dfpre, 0, Mf * sizeof(float));
        atn_tr_act_backward(dfpre, dfact, a->f_pre, Mf, t->desc.act);
        memset(t->d_c, 0, bytes);
        atn_tr_p_linear_backward(t, t->d_c, y->w1, y->b1, dfpre, a->ffn_in, M, d, f);
        float *dr = ds;   /* d(r) = ds + d(ffn_in) through LN2 (pre-LN) */
        if (pre)
            norm_bwd(t, dr, GG(y->ln2_g), GG(y->ln2_b), t->d_c, a->ln2_in, a->ln2_mean, a->ln2_rstd,
                                      PP(y->ln2_g), M, d);
        else
            for (size_t i = 0; i < Md; i++)
                dr[i] += t->d_c[i];
        /* d(x + ao) into d_a */
        if (post) {
            memset(t->d_a, 0, bytes);
            norm_bwd(t, t->d_a, GG(y->ln1_g), GG(y->ln1_b), dr, a->ln1_in, a->ln1_mean, a->ln1_rstd,
                                      PP(y->ln1_g), M, d);
        }
        /* attention */
        memcpy(t->d_c, t->d_a, bytes);
        if (a->keep_ao)
            atn_tr_dropout(t->d_c, a->keep_ao, Md);
        memset(t->d_b, 0, bytes);
        atn_tr_p_linear_backward(t, t->d_b, y->wo, y->bo, t->d_c, a->ctx, M, d, d);
        atn_tr_mm_round(t, t->d_b, Md);   /* the context's gradient, as P·V's backward reads it */
        memset(t->d_q, 0, bytes), memset(t->d_k, 0, bytes), memset(t->d_v, 0, bytes);
        if (o->attention == ATN_ATTN_LINFORMER)
            atn_tr_linformer_backward(t->d_q, t->d_k, t->d_v, GG(y->lin_e), GG(y->lin_f), t->d_lin, t->d_b, a->q,
                                      a->k, a->v, atn_tr_mm_w(t, y->lin_e), atn_tr_mm_w(t, y->lin_f), a->kp, a->vp,
                                      a->probs, a->probs_d, a->keep_attn, scale, t->B, n, t->keys, d, H,
                                      o->precision);
        else
            atn_tr_attention_backward(t->d_q, t->d_k, t->d_v, t->d_att, t->d_b, a->q, a->k, a->v, a->probs,
                                      a->probs_d, a->keep_attn, scale, t->B, n, d, H, o->precision);
        if (o->positions == ATN_POS_ROTARY) {   /* back through the rotation: its transpose */
            atn_tr_rotary(t->d_q, M, n, d, H, 10000.0f, -1);
            atn_tr_rotary(t->d_k, M, n, d, H, 10000.0f, -1);
        }
        memset(t->d_c, 0, bytes);
        atn_tr_p_linear_backward(t, t->d_c, y->wq, y->bq, t->d_q, a->attn_in, M, d, d);
        atn_tr_p_linear_backward(t, t->d_c, y->wk, y->bk, t->d_k, a->attn_in, M, d, d);
        atn_tr_p_linear_backward(t, t->d_c, y->wv, y->bv, t->d_v, a->attn_in, M, d, d);
        if (pre)
            norm_bwd(t, t->d_a, GG(y->ln1_g), GG(y->ln1_b), t->d_c, a->ln1_in, a->ln1_mean, a->ln1_rstd,
                                      PP(y->ln1_g), M, d);
        else
            for (size_t i = 0; i < Md; i++)
                t->d_a[i] += t->d_c[i];
    }

    t->drop_rng = after_forward;

    /* the embeddings */
    if (t->keep_emb)
        atn_tr_dropout(t->d_a, t->keep_emb, Md);
    float *de = t->d_a;
    if (t->emb_g >= 0) {
        memset(t->d_b, 0, bytes);
        norm_bwd(t, t->d_b, GG(t->emb_g), GG(t->emb_b), t->d_a, t->emb_sum, t->emb_mean, t->emb_rstd,
                                  PP(t->emb_g), M, d);
        de = t->d_b;
    }
    bool pos_grad = !t->params[t->wpe].fixed;
    for (int32_t r = 0; r < M; r++) {
        const float *g = de + (size_t)r * d;
        float *gw = GG(t->wte) + (size_t)t->ids[r] * d, *gp = GG(t->wpe) + (size_t)(r % n) * d;
        for (int32_t c = 0; c < d; c++)
            gw[c] += g[c];
        if (pos_grad)
            for (int32_t c = 0; c < d; c++)
                gp[c] += g[c];
        if (t->wtt >= 0)
            for (int32_t c = 0; c < d; c++)
                GG(t->wtt)[c] += g[c];
    }
}

void atn_tr_forward_backward(atn_trainer *t) {
    forward(t, true);
    atn_tr_precision_scale_loss(t);
    backward(t);
    atn_tr_precision_unscale(t);
}

const float *atn_tr_layer_probs(const atn_trainer *t, int32_t l) {
    const atn_train_options *o = &t->o;
    return t->ckpt_probs ? t->ckpt_probs + (size_t)l * o->heads * t->n * t->keys : t->acts[l].probs;
}

void atn_tr_forward_eval(atn_trainer *t) {
    forward(t, false);
}

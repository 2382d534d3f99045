/* An encoder-decoder's config.json and tensors (T5 / mT5 / Flan-T5), as transformers'
 * T5Config and T5ForConditionalGeneration (modeling_t5.py) have them:
 *
 *   shared.weight [V, d]                                  the embeddings of both stacks
 *   encoder.block.<i>.layer.0.SelfAttention.{q,k,v}.weight [H k, d], .o.weight [d, H k]
 *   encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight [buckets, H]
 *   encoder.block.<i>.layer.0.layer_norm.weight [d]       (T5LayerNorm: RMS, no bias)
 *   encoder.block.<i>.layer.1.DenseReluDense.{wi,wo}.weight, or wi_0 (gate) / wi_1 (up)
 *   encoder.block.<i>.layer.1.layer_norm.weight, encoder.final_layer_norm.weight
 *   decoder.block.<i>.layer.0.SelfAttention.*   (relative_attention_bias in block 0 only)
 *   decoder.block.<i>.layer.1.EncDecAttention.{q,k,v,o}.weight, layer.1.layer_norm.weight
 *   decoder.block.<i>.layer.2.DenseReluDense.*, layer.2.layer_norm.weight
 *   decoder.final_layer_norm.weight, lm_head.weight (untied only)
 *
 * No biases anywhere, no score scaling (T5 folds 1/sqrt(k) into its initialisation). */
#include "formats/hf-encdec.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atn_status get_int(const char *path, const cJSON *root, const char *key, int32_t def, int32_t min,
                          int32_t max, int32_t *out, atn_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!it || cJSON_IsNull(it)) {
        *out = def;
        return ATN_OK;
    }
    if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be an integer", path, key);
    if (it->valuedouble < min || it->valuedouble > max)
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" is %g; expected %d..%d", path, key, it->valuedouble,
                             min, max);
    *out = (int32_t)it->valuedouble;
    return ATN_OK;
}

static atn_status get_bool(const char *path, const cJSON *root, const char *key, bool def, bool *out,
                           atn_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!it || cJSON_IsNull(it)) {
        *out = def;
        return ATN_OK;
    }
    if (!cJSON_IsBool(it))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be true or false", path, key);
    *out = cJSON_IsTrue(it);
    return ATN_OK;
}

/* T5Config: feed_forward_proj "[gated-]act"; "gated-gelu" means gelu_new. */
static atn_status t5_activation(const char *path, const cJSON *root, atn_config *c, atn_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "feed_forward_proj");
    const char *v = "relu";
    if (it && !cJSON_IsNull(it)) {
        if (!cJSON_IsString(it))
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"feed_forward_proj\" must be a string", path);
        v = it->valuestring;
    }
    bool gated = strncmp(v, "gated-", 6) == 0;
    const char *act = gated ? v + 6 : v;
    if (strcmp(v, "gated-gelu") == 0)
        c->act = ATN_ACT_GELU_TANH;   /* T5Config: dense_act_fn "gelu_new" */
    else if (strcmp(act, "relu") == 0)
        c->act = ATN_ACT_RELU;
    else if (strcmp(act, "gelu") == 0)
        c->act = ATN_ACT_GELU;
    else if (strcmp(act, "gelu_new") == 0 || strcmp(act, "gelu_pytorch_tanh") == 0)
        c->act = ATN_ACT_GELU_TANH;
    else if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0)
        c->act = ATN_ACT_SILU;
    else
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"feed_forward_proj\" is \"%.64s\"; supported: relu, "
                             "gelu, gelu_new, silu, each optionally \"gated-\"", path, v);
    c->gated_ffn = gated;
    return ATN_OK;
}

/* BartConfig / MarianConfig: one head count, FFN width and activation for both stacks. */
static atn_status bart_config(const char *path, const cJSON *root, atn_config *c, atn_hf_encdec *out,
                              atn_error *err) {
    bool marian = out->kind == ATN_ENCDEC_MARIAN;
    int32_t dec_heads, dec_ffn, pad;
    bool scale = false;
    atn_status st;
    if ((st = get_int(path, root, "decoder_layers", 12, 1, 1000, &out->n_dec_layers, err)) ||
        (st = get_int(path, root, "decoder_attention_heads", c->n_heads, 1, 65536, &dec_heads, err)) ||
        (st = get_int(path, root, "decoder_ffn_dim", c->d_ffn, 1, 1 << 20, &dec_ffn, err)) ||
        (st = get_int(path, root, "pad_token_id", marian ? 58100 : 1, 0, 1 << 30, &pad, err)) ||
        (st = get_int(path, root, "decoder_start_token_id", marian ? pad : 2, 0, c->vocab_size - 1,
                      &out->decoder_start_id, err)) ||
        (st = get_bool(path, root, "scale_embedding", false, &scale, err)) ||
        (st = get_bool(path, root, "tie_word_embeddings", true, &out->tie_word_embeddings, err)))
        return st;
    if (dec_heads != c->n_heads)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"decoder_attention_heads\" %d differs from "
                             "\"encoder_attention_heads\" %d; attnscope runs one head count", path, dec_heads, c->n_heads);
    if (dec_ffn != c->d_ffn)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"decoder_ffn_dim\" %d differs from \"encoder_ffn_dim\" "
                             "%d; attnscope runs one FFN width", path, dec_ffn, c->d_ffn);
    if (marian) {   /* one vocabulary and one embedding table for both sides, as the OPUS-MT models */
        bool share = true;
        int32_t dec_vocab = c->vocab_size;
        if ((st = get_bool(path, root, "share_encoder_decoder_embeddings", true, &share, err)) ||
            (st = get_int(path, root, "decoder_vocab_size", c->vocab_size, 1, 1 << 26, &dec_vocab, err)))
            return st;
        if (!share || dec_vocab != c->vocab_size)
            return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"%s\" is %s: the decoder has a vocabulary of its own, "
                                 "which attnscope does not run yet", path, share ? "decoder_vocab_size" :
                                 "share_encoder_decoder_embeddings", share ? "different from vocab_size" : "false");
    }
    static const char *const pre_norm[] = {"normalize_before", "add_final_layer_norm", "normalize_embedding_before",
                                           NULL};
    for (int i = 0; pre_norm[i]; i++) {
        bool on = false;
        if ((st = get_bool(path, root, pre_norm[i], false, &on, err)))
            return st;
        if (on)
            return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"%s\" is true (mBART's pre-norm layers); attnscope "
                                 "runs BART's and Marian's post-norm layers", path, pre_norm[i]);
    }
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "activation_function");
    const char *act = it && cJSON_IsString(it) ? it->valuestring : "gelu";
    if (it && !cJSON_IsString(it) && !cJSON_IsNull(it))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"activation_function\" must be a string", path);
    if (strcmp(act, "gelu") == 0)
        c->act = ATN_ACT_GELU;
    else if (strcmp(act, "gelu_new") == 0 || strcmp(act, "gelu_pytorch_tanh") == 0)
        c->act = ATN_ACT_GELU_TANH;
    else if (strcmp(act, "relu") == 0)
        c->act = ATN_ACT_RELU;
    else if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0)
        c->act = ATN_ACT_SILU;
    else
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"activation_function\" is \"%.64s\"; supported: gelu, "
                             "gelu_new, relu, silu (swish)", path, act);
    out->emb_scale = scale ? (float)sqrt((double)c->d_model) : 1.0f;
    c->n_kv_heads = c->n_heads;
    return ATN_OK;
}

atn_status atn_hf_encdec_config(const char *path, const cJSON *root, const atn_family *fam, atn_config *c,
                                atn_hf_encdec *out, atn_error *err) {
    memset(out, 0, sizeof *out);
    out->kind = (atn_encdec_kind)fam->encdec;
    if (out->kind != ATN_ENCDEC_T5)
        return bart_config(path, root, c, out, err);
    atn_status st;
    int32_t pad = 0;
    if ((st = get_int(path, root, "d_kv", 64, 1, 65536, &c->d_head, err)) ||
        (st = get_int(path, root, "num_decoder_layers", c->n_layers, 1, 1000, &out->n_dec_layers, err)) ||
        (st = get_int(path, root, "relative_attention_num_buckets", 32, 2, 1 << 16, &out->num_buckets, err)) ||
        (st = get_int(path, root, "relative_attention_max_distance", 128, 2, 1 << 20, &out->max_distance, err)) ||
        (st = get_int(path, root, "pad_token_id", 0, 0, c->vocab_size - 1, &pad, err)) ||
        (st = get_int(path, root, "decoder_start_token_id", pad, 0, c->vocab_size - 1, &out->decoder_start_id,
                      err)) ||
        (st = get_bool(path, root, "tie_word_embeddings", true, &out->tie_word_embeddings, err)) ||
        (st = t5_activation(path, root, c, err)))
        return st;
    /* bidirectional buckets halve the count: max_exact = buckets / 4 must be at least 1, and
       the logarithmic part needs max_distance above it */
    if (out->num_buckets < 4 || out->max_distance <= out->num_buckets / 4)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"relative_attention_num_buckets\" %d with "
                             "\"relative_attention_max_distance\" %d leaves no logarithmic buckets", path,
                             out->num_buckets, out->max_distance);
    bool enc_dec = true;
    if ((st = get_bool(path, root, "is_encoder_decoder", true, &enc_dec, err)))
        return st;
    if (!enc_dec)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"is_encoder_decoder\" is false (an encoder-only T5); "
                             "attnscope runs the whole encoder-decoder", path);
    c->n_kv_heads = c->n_heads;
    return ATN_OK;
}

static atn_status want(const atn_hf_binder *b, const float **dst, int64_t d0, int64_t d1, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static atn_status want(const atn_hf_binder *b, const float **dst, int64_t d0, int64_t d1, const char *fmt, ...) {
    char name[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return b->want(b->loader, dst, false, d0, d1, name);
}

/* One T5 block's attention sub-layer k ("SelfAttention" / "EncDecAttention") at layer.<sub>. */
static atn_status t5_attention(const atn_hf_binder *b, const char *stack, int32_t i, int32_t sub, const char *kind,
                               const float **wq, const float **wk, const float **wv, const float **wo,
                               const float **ln, int64_t d, int64_t dq) {
    atn_status st;
    if ((st = want(b, wq, dq, d, "%s.block.%d.layer.%d.%s.q.weight", stack, i, sub, kind)) ||
        (st = want(b, wk, dq, d, "%s.block.%d.layer.%d.%s.k.weight", stack, i, sub, kind)) ||
        (st = want(b, wv, dq, d, "%s.block.%d.layer.%d.%s.v.weight", stack, i, sub, kind)) ||
        (st = want(b, wo, d, dq, "%s.block.%d.layer.%d.%s.o.weight", stack, i, sub, kind)) ||
        (st = want(b, ln, d, -1, "%s.block.%d.layer.%d.layer_norm.weight", stack, i, sub)))
        return st;
    return ATN_OK;
}

static atn_status t5_ffn(const atn_hf_binder *b, const atn_config *c, const char *stack, int32_t i, int32_t sub,
                         atn_layer_weights *l) {
    int64_t d = c->d_model, f = c->d_ffn;
    atn_status st;
    if (c->gated_ffn) {   /* T5DenseGatedActDense: act(wi_0 x) * wi_1 x, then wo */
        if ((st = want(b, &l->wg, f, d, "%s.block.%d.layer.%d.DenseReluDense.wi_0.weight", stack, i, sub)) ||
            (st = want(b, &l->w1, f, d, "%s.block.%d.layer.%d.DenseReluDense.wi_1.weight", stack, i, sub)))
            return st;
    } else if ((st = want(b, &l->w1, f, d, "%s.block.%d.layer.%d.DenseReluDense.wi.weight", stack, i, sub))) {
        return st;
    }
    if ((st = want(b, &l->w2, d, f, "%s.block.%d.layer.%d.DenseReluDense.wo.weight", stack, i, sub)) ||
        (st = want(b, &l->ln2_g, d, -1, "%s.block.%d.layer.%d.layer_norm.weight", stack, i, sub)))
        return st;
    return ATN_OK;
}

/* One BART / Marian attention block's q, k, v, out projections (weights and biases). */
static atn_status bart_attention(const atn_hf_binder *b, const char *base, const char *kind, const float **w[4],
                                 const float **bias[4], int64_t d) {
    static const char *const proj[] = {"q_proj", "k_proj", "v_proj", "out_proj"};
    atn_status st;
    for (int i = 0; i < 4; i++)
        if ((st = want(b, w[i], d, d, "%s%s.%s.weight", base, kind, proj[i])) ||
            (st = want(b, bias[i], d, -1, "%s%s.%s.bias", base, kind, proj[i])))
            return st;
    return ATN_OK;
}

static atn_status bart_layer(const atn_hf_binder *b, const atn_config *c, const char *base, atn_layer_weights *l,
                             bool decoder) {
    int64_t d = c->d_model, f = c->d_ffn;
    const float **w[4] = {&l->wq, &l->wk, &l->wv, &l->wo}, **bb[4] = {&l->bq, &l->bk, &l->bv, &l->bo};
    const float **cw[4] = {&l->cq, &l->ck, &l->cv, &l->co}, **cb[4] = {&l->bcq, &l->bck, &l->bcv, &l->bco};
    atn_status st;
    if ((st = bart_attention(b, base, "self_attn", w, bb, d)) ||
        (st = want(b, &l->ln1_g, d, -1, "%sself_attn_layer_norm.weight", base)) ||
        (st = want(b, &l->ln1_b, d, -1, "%sself_attn_layer_norm.bias", base)) ||
        (decoder && ((st = bart_attention(b, base, "encoder_attn", cw, cb, d)) ||
                     (st = want(b, &l->lnc_g, d, -1, "%sencoder_attn_layer_norm.weight", base)) ||
                     (st = want(b, &l->lnc_b, d, -1, "%sencoder_attn_layer_norm.bias", base)))) ||
        (st = want(b, &l->w1, f, d, "%sfc1.weight", base)) || (st = want(b, &l->b1, f, -1, "%sfc1.bias", base)) ||
        (st = want(b, &l->w2, d, f, "%sfc2.weight", base)) || (st = want(b, &l->b2, d, -1, "%sfc2.bias", base)) ||
        (st = want(b, &l->ln2_g, d, -1, "%sfinal_layer_norm.weight", base)) ||
        (st = want(b, &l->ln2_b, d, -1, "%sfinal_layer_norm.bias", base)))
        return st;
    return ATN_OK;
}

/* BartForConditionalGeneration / MarianMTModel: "model." (or none, BartModel) before
 * shared.weight, encoder.* and decoder.*; final_logits_bias [1, V] and lm_head.weight
 * unprefixed. */
static atn_status bart_bind(const atn_hf_binder *b, atn_model *m, const atn_hf_encdec *cfg) {
    const atn_config *c = &m->cfg;
    atn_encdec *e = &m->encdec;
    int64_t d = c->d_model, V = c->vocab_size, P = (int64_t)c->max_positions + 2;
    bool bart = cfg->kind == ATN_ENCDEC_BART;
    const char *p = b->has(b->loader, "model.shared.weight") ? "model." : "";
    atn_status st;
    if ((st = want(b, &m->w.word_emb, V, d, "%sshared.weight", p)) ||
        (bart && ((st = want(b, &m->w.pos_emb, P, d, "%sencoder.embed_positions.weight", p)) ||
                  (st = want(b, &e->dec_pos_emb, P, d, "%sdecoder.embed_positions.weight", p)) ||
                  (st = want(b, &m->w.emb_ln_g, d, -1, "%sencoder.layernorm_embedding.weight", p)) ||
                  (st = want(b, &m->w.emb_ln_b, d, -1, "%sencoder.layernorm_embedding.bias", p)) ||
                  (st = want(b, &e->dec_emb_ln_g, d, -1, "%sdecoder.layernorm_embedding.weight", p)) ||
                  (st = want(b, &e->dec_emb_ln_b, d, -1, "%sdecoder.layernorm_embedding.bias", p)))) ||
        (st = b->want(b->loader, &e->final_logits_bias, true, 1, V, "final_logits_bias")))
        return st;
    char base[256];
    for (int32_t i = 0; i < c->n_layers; i++) {
        snprintf(base, sizeof base, "%sencoder.layers.%d.", p, i);
        if ((st = bart_layer(b, c, base, &m->w.layers[i], false)))
            return st;
    }
    for (int32_t i = 0; i < cfg->n_dec_layers; i++) {
        snprintf(base, sizeof base, "%sdecoder.layers.%d.", p, i);
        if ((st = bart_layer(b, c, base, &e->dec_layers[i], true)))
            return st;
    }
    e->pos_offset = bart ? 2 : 0;   /* BartLearnedPositionalEmbedding: position + 2 */
    e->lm_scale = 1.0f;
    if (!cfg->tie_word_embeddings && (st = want(b, &e->lm_head, V, d, "lm_head.weight")))
        return st;
    return ATN_OK;
}

atn_status atn_hf_encdec_finish(atn_model *m, atn_error *err) {
    atn_encdec *e = &m->encdec;
    const atn_config *c = &m->cfg;
    int32_t d = c->d_model;
    if (e->kind == ATN_ENCDEC_BART) {   /* rows 0 and 1 are never read: start the tables at row 2 */
        m->w.pos_emb += (size_t)e->pos_offset * d;
        e->dec_pos_emb += (size_t)e->pos_offset * d;
    } else if (e->kind == ATN_ENCDEC_MARIAN) {
        /* MarianSinusoidalPositionalEmbedding: column j < d/2 is sin, j >= d/2 cos, of
           pos / 10000^(2 (j' / 2) / d) with j' = 2j (sin) or 2(j - d/2) + 1 (cos) */
        float *t = atn_model_alloc_floats(m, (size_t)c->max_positions * d);
        if (!t)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        int32_t half = d / 2 + d % 2;
        for (int32_t pos = 0; pos < c->max_positions; pos++)
            for (int32_t j = 0; j < d; j++) {
                int32_t src = j < half ? 2 * j : 2 * (j - half) + 1;
                double a = pos / pow(10000.0, 2.0 * (src / 2) / d);
                t[(size_t)pos * d + j] = (float)(j < half ? sin(a) : cos(a));
            }
        m->w.pos_emb = t;
        e->dec_pos_emb = t;
    }
    return ATN_OK;
}

atn_status atn_hf_encdec_bind(const atn_hf_binder *b, atn_model *m, const atn_hf_encdec *cfg, atn_error *err) {
    const atn_config *c = &m->cfg;
    atn_encdec *e = &m->encdec;
    int64_t d = c->d_model, V = c->vocab_size, dq = (int64_t)c->n_heads * c->d_head, H = c->n_heads;
    e->kind = cfg->kind;
    e->n_dec_layers = cfg->n_dec_layers;
    e->num_buckets = cfg->num_buckets;
    e->max_distance = cfg->max_distance;
    e->decoder_start_id = cfg->decoder_start_id;
    e->emb_scale = cfg->kind == ATN_ENCDEC_T5 ? 1.0f : cfg->emb_scale;
    m->attn_no_scale = cfg->kind == ATN_ENCDEC_T5;   /* T5Attention: scores = q k^T, no 1/sqrt(k) */
    /* the encoder's layers as every model's (freed with it), the decoder's owned by it */
    size_t bytes = (size_t)cfg->n_dec_layers * sizeof(atn_layer_weights);
    m->w.layers = calloc((size_t)c->n_layers, sizeof(atn_layer_weights));
    atn_layer_weights *dec = calloc(1, bytes);
    if (!m->w.layers || !dec || !atn_model_own(m, dec, bytes, false))
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    e->dec_layers = dec;
    atn_status st;
    if (cfg->kind != ATN_ENCDEC_T5)
        return bart_bind(b, m, cfg);
    if ((st = want(b, &m->w.word_emb, V, d, "shared.weight")) ||
        (st = want(b, &e->enc_rel_bias, cfg->num_buckets, H,
                   "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight")) ||
        (st = want(b, &e->dec_rel_bias, cfg->num_buckets, H,
                   "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight")) ||
        (st = want(b, &m->w.final_ln_g, d, -1, "encoder.final_layer_norm.weight")) ||
        (st = want(b, &e->dec_final_g, d, -1, "decoder.final_layer_norm.weight")))
        return st;
    for (int32_t i = 0; i < c->n_layers; i++) {
        atn_layer_weights *l = &m->w.layers[i];
        if ((st = t5_attention(b, "encoder", i, 0, "SelfAttention", &l->wq, &l->wk, &l->wv, &l->wo, &l->ln1_g, d, dq)) ||
            (st = t5_ffn(b, c, "encoder", i, 1, l)))
            return st;
    }
    for (int32_t i = 0; i < cfg->n_dec_layers; i++) {
        atn_layer_weights *l = &e->dec_layers[i];
        if ((st = t5_attention(b, "decoder", i, 0, "SelfAttention", &l->wq, &l->wk, &l->wv, &l->wo, &l->ln1_g, d, dq)) ||
            (st = t5_attention(b, "decoder", i, 1, "EncDecAttention", &l->cq, &l->ck, &l->cv, &l->co, &l->lnc_g, d,
                               dq)) ||
            (st = t5_ffn(b, c, "decoder", i, 2, l)))
            return st;
    }
    e->dec_emb = NULL;   /* the shared embeddings: m->w.word_emb once converted (encoder.c reads it) */
    if (cfg->tie_word_embeddings) {
        e->lm_head = NULL;   /* tied: word_emb, the decoder's output scaled by d^-0.5 first */
        e->lm_scale = (float)(1.0 / sqrt((double)d));
    } else {
        e->lm_scale = 1.0f;
        if ((st = want(b, &e->lm_head, V, d, "lm_head.weight")))
            return st;
    }
    return ATN_OK;
}

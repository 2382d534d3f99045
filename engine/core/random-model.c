/* BERT-shaped models with random weights (declared in attnscope.h): what `attnscope bench
 * --shape` runs, so that the benchmark needs no download.  The generator is counter-based
 * (splitmix64's mixer over seed, tensor and element index) so that bench/peer_torch.py can
 * rebuild exactly the same weights in NumPy and compare the numbers, not just the time. */
#include "attnscope.h"
#include "forward/encoder.h"
#include "core/family.h"
#include "core/random-decoder.h"
#include "core/random-fill.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct shape {
    const char *name;
    int32_t layers, d, heads, ffn;
    /* the other families (atn_model_new_random_shape): model_type, vocabulary, position
       rows, token types, embedding width (0: d), layer groups (0: a layer each); 0 / NULL:
       BERT's */
    const char *model_type;
    int32_t vocab, positions, types, embed, groups;
} shape;

static const shape shapes[] = {
    {"bert-tiny", 2, 128, 2, 512},      /* google/bert_uncased_L-2_H-128_A-2 */
    {"bert-base", 12, 768, 12, 3072},
    {"bert-large", 24, 1024, 16, 4096},
    {"roberta-base", 12, 768, 12, 3072, "roberta", 50265, 514, 1, 0, 0},
    {"distilbert-base", 6, 768, 12, 3072, "distilbert", 30522, 512, 1, 0, 0},
    {"albert-base", 12, 768, 12, 3072, "albert", 30000, 512, 2, 128, 1},   /* albert-base-v2 */
    /* openai-community/gpt2 (124M): pre-LN, causal, tanh GELU, eps 1e-5, ln_f */
    {"gpt2", 12, 768, 12, 3072, "gpt2", 50257, 1024, 1, 0, 0},
    /* microsoft/deberta-v3-base: relative attention (c2p + p2c, 256 log buckets up to 512,
       share_att_key, the LayerNorm on rel_embeddings), no absolute positions or token types */
    {"deberta-v3-base", 12, 768, 12, 3072, "deberta-v2", 128100, 512, 1, 0, 0},
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

const char *const *atn_random_shape_names(void) {
    static const char *const names[] = {"bert-tiny", "bert-base", "bert-large", "roberta-base", "distilbert-base",
                                        "albert-base", "gpt2", "deberta-v3-base", "qwen2.5-0.5b", "smollm2-135m",
                                        "llama-3.2-1b", "modernbert-base", "t5-small", NULL};
    return names;
}

atn_status atn_random_shape_config(const char *name, atn_config *cfg, atn_error *err) {
    if (atn_random_decoder_known(name))   /* the rotary decoders, ModernBERT, T5: core/random-decoder.c */
        return atn_random_decoder_config(name, cfg, err);
    for (int i = 0; i < N_SHAPES; i++) {
        if (name && strcmp(name, shapes[i].name) == 0) {
            const shape *s = &shapes[i];
            memset(cfg, 0, sizeof *cfg);
            cfg->n_layers = s->layers;
            cfg->d_model = s->d;
            cfg->n_heads = s->heads;
            cfg->d_head = s->d / s->heads;
            cfg->d_ffn = s->ffn;
            cfg->act = ATN_ACT_GELU;
            cfg->ln_eps = 1e-12f;
            cfg->max_positions = s->positions ? s->positions : 512;
            cfg->vocab_size = s->vocab ? s->vocab : 30522;
            cfg->type_vocab_size = s->types ? s->types : 2;
            cfg->d_embed = s->embed;
            if (s->model_type && strcmp(s->model_type, "roberta") == 0)
                cfg->pad_token_id = 1;
            if (s->model_type && strcmp(s->model_type, "albert") == 0)
                cfg->act = ATN_ACT_GELU_TANH;   /* albert-base-v2: gelu_new */
            cfg->use_bias = cfg->use_layernorm = cfg->use_ffn = cfg->use_residual = cfg->use_embeddings = true;
            if (s->model_type && strcmp(s->model_type, "gpt2") == 0) {
                cfg->act = ATN_ACT_GELU_TANH;   /* gelu_new */
                cfg->ln_eps = 1e-5f;
            }
            if (s->model_type && strcmp(s->model_type, "deberta-v2") == 0)
                cfg->ln_eps = 1e-7f;
            return ATN_OK;
        }
    }
    return atn_error_set(err, ATN_E_INVALID, "unknown model shape \"%s\" (known: bert-tiny, bert-base, bert-large, "
                         "roberta-base, distilbert-base, albert-base, gpt2, deberta-v3-base, qwen2.5-0.5b, "
                         "smollm2-135m, llama-3.2-1b, modernbert-base, t5-small)", name ? name : "(null)");
}

#define W_SCALE 0.0346f
#define B_SCALE 0.02f
#define G_SCALE 0.1f

/* Fills one BERT layer's tensors from p in the order every random model uses (Q, K, V, O
 * with their biases, LayerNorm 1, the MLP, LayerNorm 2), tensors numbered from *tp on:
 * returns the first float after them. */
static float *fill_layer(atn_layer_weights *lw, float *p, size_t d, size_t f, uint64_t seed, uint64_t *tp) {
    uint64_t t = *tp;
    const float **mats[4][2] = {{&lw->wq, &lw->bq}, {&lw->wk, &lw->bk}, {&lw->wv, &lw->bv}, {&lw->wo, &lw->bo}};
    for (int j = 0; j < 4; j++) {
        *mats[j][0] = p, p = atn_random_fill(p, d * d, seed, t++, 0.0f, W_SCALE);
        *mats[j][1] = p, p = atn_random_fill(p, d, seed, t++, 0.0f, B_SCALE);
    }
    lw->ln1_g = p, p = atn_random_fill(p, d, seed, t++, 1.0f, G_SCALE);
    lw->ln1_b = p, p = atn_random_fill(p, d, seed, t++, 0.0f, B_SCALE);
    lw->w1 = p, p = atn_random_fill(p, f * d, seed, t++, 0.0f, W_SCALE);
    lw->b1 = p, p = atn_random_fill(p, f, seed, t++, 0.0f, B_SCALE);
    lw->w2 = p, p = atn_random_fill(p, d * f, seed, t++, 0.0f, W_SCALE);
    lw->b2 = p, p = atn_random_fill(p, d, seed, t++, 0.0f, B_SCALE);
    lw->ln2_g = p, p = atn_random_fill(p, d, seed, t++, 1.0f, G_SCALE);
    lw->ln2_b = p, p = atn_random_fill(p, d, seed, t++, 0.0f, B_SCALE);
    *tp = t;
    return p;
}

atn_model *atn_model_new_random(const atn_config *cfg, const char *name, uint64_t seed, atn_error *err) {
    if (atn_config_validate(cfg, err) != ATN_OK)
        return NULL;
    if (!cfg->use_embeddings || cfg->vocab_size <= 0 || cfg->max_positions <= 0 || cfg->type_vocab_size <= 0) {
        atn_error_set(err, ATN_E_INVALID, "a random BERT model needs embeddings (vocabulary, positions, types)");
        return NULL;
    }
    size_t d = (size_t)cfg->d_model, f = (size_t)cfg->d_ffn, L = (size_t)cfg->n_layers;
    size_t per_layer = 4 * (d * d + d) + 2 * d + (f * d + f) + (d * f + d) + 2 * d;
    size_t total = ((size_t)cfg->vocab_size + (size_t)cfg->max_positions + (size_t)cfg->type_vocab_size) * d + 2 * d +
                   L * per_layer;
    char title[96];
    snprintf(title, sizeof title, "%s (random weights)", name ? name : "random");
    atn_model *m = atn_model_alloc(ATN_MODEL_BERT, title, "");
    if (!m) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        return NULL;
    }
    m->cfg = *cfg;
    m->cfg.d_embed = 0;        /* a BERT of that shape: d-wide embeddings, positions from 0 */
    m->cfg.pad_token_id = 0;
    m->w.layers = calloc(L, sizeof *m->w.layers);
    float *p = m->w.layers ? atn_alloc_big(total * sizeof(float)) : NULL;
    if (!p || !atn_model_own(m, p, total * sizeof(float), false)) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory for %zu weights (%.1f MB)", total, total * 4 / 1e6);
        atn_model_free(m);
        return NULL;
    }
    atn_weights *w = &m->w;
    uint64_t t = 0;
    w->word_emb = p, p = atn_random_fill(p, (size_t)cfg->vocab_size * d, seed, t++, 0.0f, W_SCALE);
    w->pos_emb = p, p = atn_random_fill(p, (size_t)cfg->max_positions * d, seed, t++, 0.0f, W_SCALE);
    w->type_emb = p, p = atn_random_fill(p, (size_t)cfg->type_vocab_size * d, seed, t++, 0.0f, W_SCALE);
    w->emb_ln_g = p, p = atn_random_fill(p, d, seed, t++, 1.0f, G_SCALE);
    w->emb_ln_b = p, p = atn_random_fill(p, d, seed, t++, 0.0f, B_SCALE);
    for (size_t l = 0; l < L; l++) {
        atn_layer_weights *lw = &w->layers[l];
        p = fill_layer(lw, p, d, f, seed, &t);
    }
    return m;
}

/* The other families' shapes: the family's table, its embeddings (RoBERTa: 514 position rows
 * after padding_idx 1 and one token type; DistilBERT: none; ALBERT: 128 wide, projected to
 * 768) and ALBERT's one shared layer, run 12 times.  Weights come from the same generator:
 * the BERT tensors first (embeddings E wide), then the projection (ALBERT), so a
 * BERT-layout shape gets exactly atn_model_new_random's weights. */
atn_model *atn_model_new_random_shape(const char *name, uint64_t seed, atn_error *err) {
    return atn_model_new_random_shape_positions(name, seed, 0, err);
}

atn_model *atn_model_new_random_shape_positions(const char *name, uint64_t seed, int32_t positions, atn_error *err) {
    if (atn_random_decoder_known(name))   /* opened as its folder would be: core/random-decoder.c */
        return atn_random_decoder_new(name, seed, positions, err);
    atn_config cfg;
    if (atn_random_shape_config(name, &cfg, err) != ATN_OK)
        return NULL;
    if (positions > cfg.max_positions)   /* more rows of the same table: the first ones unchanged */
        cfg.max_positions = positions;
    const shape *s = NULL;
    for (int i = 0; i < N_SHAPES; i++)
        if (strcmp(name, shapes[i].name) == 0)
            s = &shapes[i];
    if (!s->model_type)
        return atn_model_new_random(&cfg, name, seed, err);
    const atn_family *fam = atn_family_lookup(s->model_type, NULL, err);
    if (!fam)
        return NULL;
    size_t d = (size_t)cfg.d_model, f = (size_t)cfg.d_ffn, E = (size_t)atn_d_embed(&cfg);
    size_t stored = s->groups ? (size_t)s->groups : (size_t)cfg.n_layers;
    size_t per_layer = 4 * (d * d + d) + 2 * d + (f * d + f) + (d * f + d) + 2 * d;
    size_t types = fam->token_types ? (size_t)cfg.type_vocab_size : 0;
    size_t rel_rows = fam->disentangled ? 2 * 256 : 0;   /* DeBERTa-v3: rel_embeddings [2 x 256, d] + LayerNorm */
    size_t total = ((size_t)cfg.vocab_size + (size_t)cfg.max_positions + types) * E + 2 * E + stored * per_layer +
                   (E != d || s->groups ? d * E + d : 0) + (fam->pre_ln ? 2 * d : 0) +
                   (rel_rows ? rel_rows * d + 2 * d + rel_rows * d : 0);
    char title[96];
    snprintf(title, sizeof title, "%s (random weights)", name);
    atn_model *m = atn_model_alloc(ATN_MODEL_BERT, title, "");
    if (!m) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        return NULL;
    }
    m->cfg = cfg;
    m->family = fam;
    m->w.layers = calloc((size_t)cfg.n_layers, sizeof *m->w.layers);
    float *p = m->w.layers ? atn_alloc_big(total * sizeof(float)) : NULL;
    if (!p || !atn_model_own(m, p, total * sizeof(float), false)) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory for %zu weights (%.1f MB)", total, total * 4 / 1e6);
        atn_model_free(m);
        return NULL;
    }
    atn_weights *w = &m->w;
    uint64_t t = 0;
    w->word_emb = p, p = atn_random_fill(p, (size_t)cfg.vocab_size * E, seed, t++, 0.0f, W_SCALE);
    w->pos_emb = p, p = atn_random_fill(p, (size_t)cfg.max_positions * E, seed, t++, 0.0f, W_SCALE);
    if (types)
        w->type_emb = p, p = atn_random_fill(p, types * E, seed, t++, 0.0f, W_SCALE);
    w->emb_ln_g = p, p = atn_random_fill(p, E, seed, t++, 1.0f, G_SCALE);
    w->emb_ln_b = p, p = atn_random_fill(p, E, seed, t++, 0.0f, B_SCALE);
    for (size_t l = 0; l < stored; l++) {
        atn_layer_weights *lw = &w->layers[l];
        p = fill_layer(lw, p, d, f, seed, &t);
    }
    if (E != d || s->groups) {
        w->emb_proj_w = p, p = atn_random_fill(p, d * E, seed, t++, 0.0f, W_SCALE);
        w->emb_proj_b = p, p = atn_random_fill(p, d, seed, t++, 0.0f, B_SCALE);
    }
    if (s->groups) {   /* ALBERT: every application runs group int(i / (L / groups)), one inner layer */
        m->layer_groups = s->groups, m->layer_inner = 1, m->layer_applied = cfg.n_layers;
        for (int32_t l = 0; l < cfg.n_layers; l++) {
            int32_t g, j;
            atn_family_layer_source(l, cfg.n_layers, s->groups, 1, &g, &j);
            w->layers[l] = w->layers[g];
        }
    }
    if (fam->pre_ln) {   /* GPT-2: ln_f, the two tensors after the layers */
        w->final_ln_g = p, p = atn_random_fill(p, d, seed, t++, 1.0f, G_SCALE);
        w->final_ln_b = p, p = atn_random_fill(p, d, seed, t++, 0.0f, B_SCALE);
    }
    if (rel_rows) {   /* DeBERTa-v3: the BERT tensors above, without positions and types */
        atn_deberta *r = &m->deberta;
        *r = (atn_deberta){.on = true, .relative = true, .c2p = true, .p2c = true, .share_att_key = true,
                           .norm_rel_ebd = true, .buckets = 256, .max_relative = 512, .span = 256, .scale_factor = 3};
        w->pos_emb = NULL, w->type_emb = NULL;
        float *raw = p;
        p = atn_random_fill(p, rel_rows * d, seed, t++, 0.0f, W_SCALE);
        r->rel_ln_g = p, p = atn_random_fill(p, d, seed, t++, 1.0f, G_SCALE);
        r->rel_ln_b = p, p = atn_random_fill(p, d, seed, t++, 0.0f, B_SCALE);
        atn_layernorm(p, raw, r->rel_ln_g, r->rel_ln_b, (int32_t)rel_rows, (int32_t)d, cfg.ln_eps);
        r->rel_emb = p, p += rel_rows * d;
        for (int32_t l = 0; l < cfg.n_layers; l++) {
            atn_layer_weights *lw = &w->layers[l];
            lw->wpk = lw->wk, lw->bpk = lw->bk, lw->wpq = lw->wq, lw->bpq = lw->bq;
        }
    }
    return m;
}

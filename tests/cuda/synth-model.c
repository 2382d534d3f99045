/* Synthetic BERT-shaped models with random weights (see synth-model.h). */
#include "synth-model.h"

#include <stdlib.h>

static uint64_t next_u64(uint64_t *s) {   /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *s) { return ((next_u64(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

/* Uniform with the given standard deviation: cheap enough for bert-large's 335M weights. */
static double spread(uint64_t *s) { return 1.7320508075688772 * (2.0 * uniform(s) - 1.0); }

static const float *fill(atn_model *m, size_t count, double mean, double std, uint64_t *seed) {
    float *p = atn_model_alloc_floats(m, count);
    if (p)
        for (size_t i = 0; i < count; i++)
            p[i] = (float)(mean + std * spread(seed));
    return p;
}

atn_model *synth_model_new(const synth_shape *sh, uint64_t seed) {
    atn_model *m = atn_model_alloc(ATN_MODEL_BERT, sh->name, "");
    if (!m)
        return NULL;
    atn_config *c = &m->cfg;
    c->n_layers = sh->layers;
    c->d_model = sh->d_model;
    c->n_heads = sh->heads;
    c->d_head = sh->d_model / sh->heads;
    c->d_ffn = sh->d_ffn;
    c->act = sh->act;
    c->ln_eps = 1e-12f;
    c->max_positions = sh->max_positions;
    c->vocab_size = sh->vocab;
    c->type_vocab_size = 2;
    c->use_bias = c->use_layernorm = c->use_ffn = c->use_residual = c->use_embeddings = true;
    size_t d = (size_t)sh->d_model, f = (size_t)sh->d_ffn;
    bool ok = true;
#define W(count, mean, std) (ok ? fill(m, (count), (mean), (std), &seed) : NULL)
#define B(count, mean, std) (sh->null_biases ? NULL : W(count, mean, std))
    m->w.word_emb = W((size_t)sh->vocab * d, 0, 1);
    m->w.pos_emb = W((size_t)sh->max_positions * d, 0, 1);
    m->w.type_emb = W(2 * d, 0, 1);
    m->w.emb_ln_g = B(d, 1, 0.1);
    m->w.emb_ln_b = B(d, 0, 0.1);
    m->w.layers = calloc((size_t)sh->layers, sizeof *m->w.layers);
    ok = ok && m->w.layers && m->w.word_emb;
    for (int32_t l = 0; ok && l < sh->layers; l++) {
        atn_layer_weights *w = &m->w.layers[l];
        if (!sh->identity_qkv) {
            w->wq = W(d * d, 0, 0.02 * 4);   /* larger Q/K: attention maps that are not flat */
            w->wk = W(d * d, 0, 0.02 * 4);
            w->wv = W(d * d, 0, 0.02);
        }
        w->bq = B(d, 0, 0.02);
        w->bk = B(d, 0, 0.02);
        w->bv = B(d, 0, 0.02);
        w->wo = W(d * d, 0, 0.02);
        w->bo = B(d, 0, 0.02);
        w->ln1_g = B(d, 1, 0.1);
        w->ln1_b = B(d, 0, 0.1);
        w->w1 = W(f * d, 0, 0.02);
        w->b1 = B(f, 0, 0.02);
        w->w2 = W(d * f, 0, 0.02);
        w->b2 = B(d, 0, 0.02);
        w->ln2_g = B(d, 1, 0.1);
        w->ln2_b = B(d, 0, 0.1);
        ok = ok && w->w2;
    }
#undef W
#undef B
    if (!ok) {
        atn_model_free(m);
        return NULL;
    }
    return m;
}

atn_encoding *synth_encoding(const atn_model *model, int32_t n, int32_t n_pad, uint64_t seed) {
    int32_t *ids = malloc((size_t)n * sizeof *ids), *types = malloc((size_t)n * sizeof *types),
            *mask = malloc((size_t)n * sizeof *mask);
    atn_encoding *enc = NULL;
    if (ids && types && mask) {
        for (int32_t i = 0; i < n; i++) {
            ids[i] = (int32_t)(next_u64(&seed) % (uint64_t)model->cfg.vocab_size);
            types[i] = i < n / 2 ? 0 : 1;
            mask[i] = i < n - n_pad ? 1 : 0;
        }
        atn_model_encode_ids(model, ids, types, mask, n, &enc, NULL);
    }
    free(ids);
    free(types);
    free(mask);
    return enc;
}

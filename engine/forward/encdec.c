/* An encoder-decoder's decoder (T5 / mT5 / Flan-T5): its memory, its inputs (the causal
 * mask, the cross mask from the source's padding, T5's bucket biases) and its forward, the
 * one layer walk (engine/forward/layer.c) over the decoder's layers with cross-attention
 * (atn_walk.cross_seq) to the encoder's output.  The encoder is the run's usual forward
 * (encoder.c), with T5's bias as its sequence's score_bias.  Reference ops only: the packed
 * and CUDA ops are not taken for these models (fast_path_applies, backend.c). */
#include "forward/encoder.h"
#include "forward/layer.h"

#include <string.h>

double atn_encdec_floats(const atn_model *m, int32_t n, int32_t t, bool keep) {
    const atn_config *c = &m->cfg;
    double d = c->d_model, H = c->n_heads, Ld = m->encdec.n_dec_layers, f = c->d_ffn * 2.0;
    double dq = (double)c->n_heads * c->d_head, w = dq > d ? dq : d;
    bool t5 = m->encdec.kind == ATN_ENCDEC_T5;
    return t + (Ld + 1) * t * d + Ld * H * t * t + Ld * H * t * n + (double)t * t + (double)t * n +
           (t5 ? H * n * n + H * t * t : 0) + (keep ? Ld : 1.0) * (8.0 * t * w + 2.0 * n * w) + t * w + t * f;
}

void atn_encdec_layout(atn_encdec_acts *e, float *p, const atn_model *m, int32_t n, int32_t t, bool keep) {
    const atn_config *c = &m->cfg;
    size_t d = (size_t)c->d_model, H = (size_t)c->n_heads, Ld = (size_t)m->encdec.n_dec_layers, T = (size_t)t;
    size_t dq = (size_t)c->n_heads * c->d_head, w = dq > d ? dq : d, per = keep ? Ld : 1;
    memset(e, 0, sizeof *e);
    e->n_tgt = t;
    e->keep = keep;
    e->ids = (int32_t *)p, p += T;
    e->hidden = p, p += (Ld + 1) * T * d;
    e->attn_self = p, p += Ld * H * T * T;
    e->attn_cross = p, p += Ld * H * T * (size_t)n;
    e->mask_self = p, p += T * T;
    e->mask_cross = p, p += T * (size_t)n;
    if (m->encdec.kind == ATN_ENCDEC_T5) {
        e->bias_enc = p, p += H * (size_t)n * n;
        e->bias_self = p, p += H * T * T;
    }
    /* each layer's rows one after the other when kept (the trace reads them) */
    float **rows_t[] = {&e->q, &e->k, &e->v, &e->ctx, &e->ao, &e->cq, &e->cctx, &e->cao};
    for (size_t i = 0; i < sizeof rows_t / sizeof *rows_t; i++)
        *rows_t[i] = p, p += per * T * w;
    e->ck = p, p += per * (size_t)n * w;
    e->cv = p, p += per * (size_t)n * w;
    e->h1 = p, p += T * w;
    e->ffn = p;
}

void atn_encdec_inputs(atn_encdec_acts *e, const atn_model *m, const int32_t *ids, const int32_t *src_mask,
                       int32_t n) {
    const atn_encdec *ed = &m->encdec;
    int32_t t = e->n_tgt, H = m->cfg.n_heads;
    memcpy(e->ids, ids, (size_t)t * sizeof(int32_t));
    for (int32_t i = 0; i < t; i++) {
        for (int32_t j = 0; j < t; j++)   /* HF's causal mask: finfo.min for later keys */
            e->mask_self[(size_t)i * t + j] = j > i ? ATN_MASK_MIN : 0.0f;
        for (int32_t j = 0; j < n; j++)   /* the encoder's padding, in every cross-attention row */
            e->mask_cross[(size_t)i * n + j] = src_mask[j] ? 0.0f : ATN_MASK_MIN;
    }
    if (ed->kind == ATN_ENCDEC_T5) {   /* T5Stack: layer 0's compute_bias, shared by every layer */
        atn_t5_position_bias(e->bias_enc, ed->enc_rel_bias, H, n, n, true, ed->num_buckets, ed->max_distance);
        atn_t5_position_bias(e->bias_self, ed->dec_rel_bias, H, t, t, false, ed->num_buckets, ed->max_distance);
    }
}

void atn_cpu_decoder_forward(const atn_model *m, const atn_activations *a) {
    const atn_config *c = &m->cfg;
    const atn_encdec *ed = &m->encdec;
    atn_encdec_acts *e = a->encdec;
    int32_t n = a->n, t = e->n_tgt, d = c->d_model, H = c->n_heads;
    /* the decoder's embeddings: the shared table (times BART's / Marian's embed_scale), its own
       positions 0..t-1 (BART's from row 2: the pointer starts there), BART's
       layernorm_embedding */
    const float *emb = ed->dec_emb ? ed->dec_emb : m->w.word_emb;
    for (int32_t i = 0; i < t; i++) {
        float *x = e->hidden + (size_t)i * d;
        const float *we = emb + (size_t)e->ids[i] * d, *pe = ed->dec_pos_emb ? ed->dec_pos_emb + (size_t)i * d : NULL;
        for (int32_t j = 0; j < d; j++)
            x[j] = we[j] * ed->emb_scale + (pe ? pe[j] : 0.0f);
    }
    if (ed->dec_emb_ln_g)
        atn_layernorm(e->hidden, e->hidden, ed->dec_emb_ln_g, ed->dec_emb_ln_b, t, d, c->ln_eps);
    atn_walk_seq self = {
        .row = 0, .n = t, .attn = e->attn_self, .attn_stride = (size_t)H * t * t, .mask = e->mask_self,
        .score_bias = e->bias_self, .nonfinite_layer = -1,
    };
    atn_walk_seq cross = {
        .row = 0, .n = t, .attn = e->attn_cross, .attn_stride = (size_t)H * t * n, .mask = e->mask_cross,
        .key_row = 0, .n_keys = n, .nonfinite_layer = -1,
    };
    atn_walk w = {
        .m = m, .n_layers = ed->n_dec_layers, .layers = ed->dec_layers, .final_g = ed->dec_final_g,
        .final_b = ed->dec_final_b, .seq = &self, .count = 1, .M = t,
        .hidden = e->hidden, .q = e->q, .k = e->k, .v = e->v, .ctx = e->ctx, .ao = e->ao,
        .trace_stride = e->keep ? (size_t)t * d : 0,   /* the cross rows follow it (cross_block) */
        .h1 = e->h1, .ffn = e->ffn, .temperature = 1.0f, .head_mode = ATN_HEAD_ZERO,
        .cross_mem = a->hidden + (size_t)c->n_layers * n * d, .cross_M = n, .cross_seq = &cross,
        .cq = e->cq, .ck = e->ck, .cv = e->cv, .cctx = e->cctx, .cao = e->cao, .ops = &atn_ops_ref,
    };
    atn_layer_desc_of(m, &w.desc);
    atn_layer_walk(&w, 0, 1);
}

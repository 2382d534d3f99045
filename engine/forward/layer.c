/* The transformer layer, written once: a family's description (atn_layer_desc_of) and the
 * one walk that executes it with a backend's ops (atn_layer_walk).  engine/forward/layer.h
 * has the op list and what each backend provides; docs/ARCHITECTURE.md ("The layer") says
 * where rotary positions, score biases, grouped K/V heads, cross-attention and the backward
 * would go.
 *
 * Threads: the walk runs on every thread of the CPU team at once (the packed ops) or on
 * one (the reference ops).  Each op does the calling thread's share and the walk puts a
 * barrier after it, except between two row-wise steps on the same rows: the walk's own row
 * steps (add, copy, the finiteness check) and the ops' norm split the M rows the same way
 * (atn_team_split), so a thread reads only rows it wrote itself. */
#include "forward/layer.h"
#include "core/family.h"
#include "forward/cpu-team.h"   /* atn_team_split (inline): the walk links no team code */

#include <math.h>
#include <string.h>

void atn_layer_desc_of(const atn_model *m, atn_layer_desc *d) {
    const atn_config *c = &m->cfg;
    memset(d, 0, sizeof *d);
    d->norm_place = !c->use_layernorm ? ATN_NORM_NONE : m->family->pre_ln ? ATN_NORM_PRE : ATN_NORM_POST;
    d->norm_type = ATN_NORM_LAYERNORM;
    d->residual = c->use_residual;
    d->mlp = c->use_ffn ? ATN_MLP_PLAIN : ATN_MLP_NONE;
    d->act = c->act;
    d->final_norm = m->family->pre_ln;   /* GPT-2's ln_f */
    d->eps = c->ln_eps;
    d->scale_none = m->attn_no_scale;
    d->scale_by_layer = m->attn_scale_by_layer;
    d->d = c->d_model, d->f = c->d_ffn, d->heads = c->n_heads, d->d_head = c->d_head;
    d->kv_heads = c->n_kv_heads > 0 ? c->n_kv_heads : c->n_heads;
    d->d_q = d->heads * d->d_head, d->d_kv = d->kv_heads * d->d_head;
    if (m->rotary.on) {   /* Llama, Qwen2, Qwen3, Mistral; ModernBERT (LayerNorm, two bases) */
        d->norm_type = m->rotary.rms_norm ? ATN_NORM_RMSNORM : ATN_NORM_LAYERNORM;
        d->inv_freq = m->rotary.inv_freq;
        d->qk_norm = m->rotary.qk_norm;
        d->inv_freq_local = m->rotary.inv_freq_local;
        d->global_every = m->rotary.global_every;
        d->attn_norm_optional = m->rotary.global_every > 0;
        d->local_layers = m->rotary.local_layers;   /* Gemma 2 / 3 */
        d->scale = m->rotary.query_scale;
        d->softcap = m->rotary.attn_softcap;
        d->sandwich = m->family->gemma;
    }
    if (c->gated_ffn && c->use_ffn)
        d->mlp = ATN_MLP_GATED;
    if (m->deberta.on) {   /* DeBERTa-v2/v3: post-LN BERT layers, disentangled scores */
        d->scale_factor = m->deberta.scale_factor;
        d->disentangled = m->deberta.relative && (m->deberta.c2p || m->deberta.p2c);
        d->xsoftmax = true;
    }
    if (m->encdec.kind == ATN_ENCDEC_T5)   /* T5LayerNorm: RMS without the mean, no bias */
        d->norm_type = ATN_NORM_RMSNORM;
}

float atn_layer_scale(const atn_layer_desc *d, int32_t layer) {
    /* GPT-2 (modeling_gpt2.py, eager): w / value.size(-1) ** 0.5 when scale_attn_weights,
       then w / float(layer_idx + 1) when scale_attn_by_inverse_layer_idx; BERT: 1/sqrt(k) */
    if (d->scale > 0.0f)   /* Gemma: query_pre_attn_scalar ** -0.5, as HF's self.scaling */
        return d->scale;
    /* DeBERTa: scores / sqrt(d_head scale_factor), the product made in float32 as
       torch.sqrt(torch.tensor(k, dtype=float) * scale_factor) makes it */
    float s = d->scale_none ? 1.0f
              : d->scale_factor > 0 ? 1.0f / sqrtf((float)d->d_head * (float)d->scale_factor)
                                    : 1.0f / sqrtf((float)d->d_head);
    if (d->scale_by_layer)
        s /= (float)(layer + 1);
    return s;
}

static void between_ops(const atn_walk *w) {
    if (w->team)
        w->barrier(w->team);
}

/* out = a + b (b NULL: a copy) over this thread's rows of [M][d]. */
void atn_walk_add_rows(const atn_walk *w, int tid, int nt, float *out, const float *a, const float *b) {
    int lo, hi;
    atn_team_split(w->M, tid, nt, &lo, &hi);
    size_t d = (size_t)w->desc.d, i0 = (size_t)lo * d, i1 = (size_t)hi * d;
    if (!b) {
        if (out != a)
            memcpy(out + i0, a + i0, (i1 - i0) * sizeof(float));
        return;
    }
    for (size_t i = i0; i < i1; i++)
        out[i] = a[i] + b[i];
}

/* Marks each sequence with a NaN or infinity in this thread's rows of out [M][d] as going
 * non-finite at layer l (the first such layer wins; read only after the walk). */
void atn_walk_check_finite(atn_walk *w, int tid, int nt, const float *out, int32_t l) {
    int lo, hi;
    atn_team_split(w->M, tid, nt, &lo, &hi);
    size_t d = (size_t)w->desc.d;
    for (int32_t s = 0; s < w->count; s++) {
        atn_walk_seq *q = &w->seq[s];
        int32_t r0 = q->row > lo ? q->row : lo, r1 = q->row + q->n < hi ? q->row + q->n : hi;
        if (r0 >= r1 || __atomic_load_n(&q->nonfinite_layer, __ATOMIC_RELAXED) >= 0)
            continue;
        const float *x = out + (size_t)r0 * d;
        size_t count = (size_t)(r1 - r0) * d;
        bool ok = true;
        for (size_t i = 0; i < count; i++)
            ok &= isfinite(x[i]) != 0;
        if (!ok) {
            int32_t none = -1;
            __atomic_compare_exchange_n(&q->nonfinite_layer, &none, l, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        }
    }
}

/* An encoder-decoder's cross-attention in decoder layer l, between the self-attention block
 * and the MLP (T5LayerCrossAttention, BartDecoderLayer's encoder_attn): queries from the
 * decoder's rows, keys and values from the encoder's output (w->cross_mem, cross_M rows),
 * the same attend op over cross_seq (keys of another length: atn_walk_seq.n_keys).
 * Pre-norm (T5): out += Wo attend(LNc(out) Wq, mem Wk, mem Wv), h1 = LN2(out);
 * post-norm (BART): h1 = LNc(h1 + Wo attend(h1 Wq, mem Wk, mem Wv)). */
static void cross_block(const atn_walk *w, int tid, int nt, int32_t l, float *out, float *h1) {
    const atn_layer_desc *D = &w->desc;
    const atn_layer_ops *ops = w->ops;
    const atn_layer_weights *lw = &w->layers[l];
    int32_t d = D->d, dq = atn_desc_d_q(D), dkv = atn_desc_d_kv(D);
    /* with trace_stride, layer l's rows of each (the trace reads them): [L][M] and [L][cross_M] */
    size_t lq = w->trace_stride ? (size_t)l * (size_t)w->M : 0, lk = w->trace_stride ? (size_t)l * (size_t)w->cross_M : 0;
    float *cq = w->cq + lq * (size_t)dq, *cctx = w->cctx + lq * (size_t)dq, *cao = w->cao + lq * (size_t)d;
    float *ck = w->ck + lk * (size_t)dkv, *cv = w->cv + lk * (size_t)dkv;
    const float *xin = h1;
    if (D->norm_place == ATN_NORM_PRE) {
        ops->norm(w, tid, nt, h1, out, NULL, lw->lnc_g, lw->lnc_b);
        between_ops(w);
    }
    ops->project(w, tid, nt, cq, xin, l, ATN_W_CQ, NULL, -1, d, dq);
    atn_walk kw = *w;   /* the keys' and values' rows: the encoder's */
    kw.M = w->cross_M;
    ops->project(&kw, tid, nt, ck, w->cross_mem, l, ATN_W_CK, NULL, -1, d, dkv);
    ops->project(&kw, tid, nt, cv, w->cross_mem, l, ATN_W_CV, NULL, -1, d, dkv);
    between_ops(w);
    atn_walk cw = *w;   /* no position term, no what-if gate in cross-attention */
    cw.seq = w->cross_seq;
    cw.slopes = NULL, cw.temperature = 1.0f, cw.gated = false;
    ops->attend(&cw, tid, nt, l, cq, ck, cv, cctx);
    between_ops(w);
    ops->project(w, tid, nt, cao, cctx, l, ATN_W_CO, NULL, -1, dq, d);
    between_ops(w);
    if (D->norm_place == ATN_NORM_PRE) {
        ops->add(w, tid, nt, out, out, cao);
        ops->norm(w, tid, nt, h1, out, NULL, lw->ln2_g, lw->ln2_b);
    } else {
        ops->norm(w, tid, nt, h1, cao, h1, lw->lnc_g, lw->lnc_b);
    }
    between_ops(w);
}

void atn_layer_walk(atn_walk *w, int tid, int nt) {
    const atn_layer_desc *D = &w->desc;
    const atn_layer_ops *ops = w->ops;
    const atn_model *m = w->m;
    int32_t L = w->n_layers > 0 ? w->n_layers : m->cfg.n_layers, M = w->M, d = D->d, f = D->f;
    size_t Md = (size_t)M * d;
    for (int32_t l = w->start; l < L; l++) {
        if (tid == 0) {
            const atn_run_options *o = w->opts;
            if (o && o->progress && !o->progress((double)l / L, ATN_STAGE_LAYER, o->user_data)) {
                w->stop = true;
                w->stop_layer = l;
            }
        }
        between_ops(w);
        if (w->stop)
            return;
        const atn_layer_weights *lw = &w->layers[l];   /* the norms' gains and biases */
        /* a layer's trace inputs are rows * width apart (trace_stride = rows d, or 0) */
        size_t rows_l = w->trace_stride / (size_t)d * (size_t)l;
        int32_t dq = atn_desc_d_q(D), dkv = atn_desc_d_kv(D);
        size_t tq = rows_l * (size_t)dq, tkv = rows_l * (size_t)dkv, t = rows_l * (size_t)d;
        const float *x = w->hidden + (size_t)l * Md;   /* [M][d] the layer input */
        float *out = w->hidden + (size_t)(l + 1) * Md;
        float *q = w->q + tq, *k = w->k + tkv, *v = w->v + tkv, *ctx = w->ctx + tq, *ao = w->ao + t;
        float *h1 = w->h1, *ffn = w->ffn;

        /* normalise (pre-LN) and project: Q, K, V = x W^T + b */
        const float *xin = x;
        if (D->norm_place == ATN_NORM_PRE && !(D->attn_norm_optional && !lw->ln1_g)) {
            ops->norm(w, tid, nt, h1, x, NULL, lw->ln1_g, lw->ln1_b);
            between_ops(w);
            xin = h1;
        }
        xin = ops->operand(w, xin, Md, l, ATN_OPERAND_INPUT);
        ops->project(w, tid, nt, q, xin, l, ATN_W_Q, NULL, -1, d, dq);
        ops->project(w, tid, nt, k, xin, l, ATN_W_K, NULL, -1, d, dkv);
        ops->project(w, tid, nt, v, xin, l, ATN_W_V, NULL, -1, d, dkv);
        between_ops(w);
        /* positions that act on Q and K (rotary), per head, before attend */
        if (D->inv_freq && (!w->no_positions || D->qk_norm)) {   /* NoPE keeps Qwen3's / Gemma 3's q/k norms */
            ops->positions(w, tid, nt, l, q, k);
            between_ops(w);
        }

        /* scores, scale, mask, gates, softmax (captured), weighted sum */
        ops->attend(w, tid, nt, l, q, k, v, ctx);
        between_ops(w);

        /* output projection, residual, normalise */
        ops->project(w, tid, nt, ao, ops->operand(w, ctx, (size_t)M * dq, l, ATN_OPERAND_CONTEXT), l, ATN_W_O,
                     NULL, -1, dq, d);
        between_ops(w);
        switch (D->norm_place) {
        case ATN_NORM_POST:   /* h1 = LN1(x + attn_out) */
            ops->norm(w, tid, nt, h1, ao, D->residual ? x : NULL, lw->ln1_g, lw->ln1_b);
            break;
        case ATN_NORM_NONE:
            ops->add(w, tid, nt, h1, ao, D->residual ? x : NULL);
            break;
        case ATN_NORM_PRE:    /* out = x + attn_out, the residual stream; h1 = LN2(out) */
            if (D->sandwich && lw->post_attn_g) {
                /* Gemma: out = x + norm(attn_out) (post_attention_layernorm), into h1 first
                   so the capture keeps the projection's output */
                ops->norm(w, tid, nt, h1, ao, NULL, lw->post_attn_g, NULL);
                between_ops(w);
                ops->add(w, tid, nt, out, x, h1);
            } else {
                ops->add(w, tid, nt, out, x, ao);
            }
            if (!w->cross_seq)
                ops->norm(w, tid, nt, h1, out, NULL, lw->ln2_g, lw->ln2_b);
            break;
        }
        between_ops(w);
        if (w->cross_seq)   /* the decoder's cross-attention, then h1 as above */
            cross_block(w, tid, nt, l, out, h1);

        /* the MLP, residual, normalise */
        if (D->mlp == ATN_MLP_NONE) {
            if (D->norm_place != ATN_NORM_PRE)
                ops->add(w, tid, nt, out, h1, NULL);
        } else {
            const float *fin = ops->operand(w, h1, Md, l, ATN_OPERAND_FFN_IN);
            if (D->mlp == ATN_MLP_GATED) {   /* ffn = act(h1 Wg^T + bg) * (h1 W1^T + b1) */
                float *up = ffn + (size_t)M * f;
                ops->project(w, tid, nt, ffn, fin, l, ATN_W_FFN_GATE, NULL, (int)D->act, d, f);
                ops->project(w, tid, nt, up, fin, l, ATN_W_FFN_IN, NULL, -1, d, f);
                between_ops(w);
                ops->mul(w, tid, nt, ffn, up, (size_t)M * f);
            } else {
                ops->project(w, tid, nt, ffn, fin, l, ATN_W_FFN_IN, NULL, (int)D->act, d, f);
            }
            between_ops(w);
            const float *mid = ops->operand(w, ffn, (size_t)M * f, l, ATN_OPERAND_FFN_MID);
            if (D->norm_place == ATN_NORM_PRE && D->sandwich && lw->post_ffn_g) {
                /* Gemma: out += norm(ffn W2^T + b2) (post_feedforward_layernorm) */
                ops->project(w, tid, nt, h1, mid, l, ATN_W_FFN_OUT, NULL, -1, f, d);
                between_ops(w);
                ops->norm(w, tid, nt, h1, h1, NULL, lw->post_ffn_g, NULL);
                between_ops(w);
                ops->add(w, tid, nt, out, out, h1);
            } else if (D->norm_place == ATN_NORM_PRE) {
                /* h1 = ffn W2^T + b2 + out (the product may not write where its residual
                   is read), copied back into out */
                ops->project(w, tid, nt, h1, mid, l, ATN_W_FFN_OUT, out, -1, f, d);
                between_ops(w);
                ops->add(w, tid, nt, out, h1, NULL);
            } else {
                ops->project(w, tid, nt, out, mid, l, ATN_W_FFN_OUT, D->residual ? h1 : NULL, -1, f, d);
                if (D->norm_place == ATN_NORM_POST) {
                    between_ops(w);
                    ops->norm(w, tid, nt, out, out, NULL, lw->ln2_g, lw->ln2_b);
                }
            }
        }
        if (D->final_norm && l == L - 1)   /* the last hidden state is after it, as HF's */
            ops->norm(w, tid, nt, out, out, NULL, w->final_g, w->final_b);
        if (D->mlp != ATN_MLP_NONE && D->norm_place == ATN_NORM_NONE)
            between_ops(w);   /* the product wrote columns, the check reads rows */
        ops->end_layer(w, tid, nt, out, l);
        between_ops(w);
        if (w->status && *w->status)
            return;
    }
}

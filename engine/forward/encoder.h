/* The encoder forward pass on the CPU, and the activation buffers every backend fills. */
#ifndef ATN_ENCODER_H
#define ATN_ENCODER_H

#include "core/model-private.h"

/* An encoder-decoder's decoder side of one run (engine/forward/encdec.c lays it out in one
 * block the run owns).  Sizes: n source tokens, t target tokens, Ld decoder layers. */
typedef struct atn_encdec_acts {
    int32_t n_tgt;
    int32_t *ids;          /* [t] the decoder's input ids */
    float *hidden;         /* [Ld+1][t][d] */
    float *attn_self;      /* [Ld][H][t][t] */
    float *attn_cross;     /* [Ld][H][t][n] */
    float *mask_self;      /* [t][t] causal */
    float *mask_cross;     /* [t][n] the source's padding */
    float *bias_enc;       /* [H][n][n] T5's bucket bias of the encoder, or NULL (BART, Marian) */
    float *bias_self;      /* [H][t][t] the decoder's, or NULL */
    /* q, ctx, cq, cctx [t][d_q]; k, v [t][d_kv]; ck, cv [n][d_kv]; ao, cao [t][d]: with keep
       (a run that keeps trace inputs) every decoder layer's, [Ld][rows][width] (the trace
       reads them), else one layer's, reused.  h1 [t][d], ffn [t][2f]: scratch */
    float *q, *k, *v, *ctx, *ao, *h1, *ffn, *cq, *ck, *cv, *cctx, *cao;
    bool keep;
} atn_encdec_acts;

/* Floats atn_encdec_layout needs for n source and t target tokens, keeping every layer's
 * projections or not (a double: a huge input is refused by the caller, not wrapped). */
double atn_encdec_floats(const atn_model *model, int32_t n, int32_t t, bool keep);
/* Lays e out in block (atn_encdec_floats(model, n, t, keep) floats; ids point into it too). */
void atn_encdec_layout(atn_encdec_acts *e, float *block, const atn_model *model, int32_t n, int32_t t, bool keep);
/* The decoder's inputs: its ids, the causal and cross masks (src_mask: the source's 1/0 per
 * token) and T5's bucket biases. */
void atn_encdec_inputs(atn_encdec_acts *e, const atn_model *model, const int32_t *ids, const int32_t *src_mask,
                       int32_t n);

/* Where one forward writes.  Sizes: L layers, H heads, n tokens, d width, f ffn width.
 * When a run keeps no trace inputs, q/k/v/ctx/attn_out are one layer's worth, reused
 * (trace_stride 0); when it keeps no attention, attn is one layer's [H][n][n]. */
typedef struct atn_activations {
    int32_t n;
    float *hidden;        /* [L+1][n][d] */
    float *q, *k, *v;     /* [L][n][d] (or [n][d]) */
    float *ctx;           /* [L][n][d] (or [n][d]) */
    float *attn_out;      /* [L][n][d] (or [n][d]) */
    size_t trace_stride;  /* n*d or 0 */
    float *attn;          /* [L][H][n][n] (or [H][n][n]) */
    size_t attn_stride;   /* H*n*n or 0 */
    float *h1;            /* [n][d] scratch: after attention + residual + LayerNorm */
    float *ffn;           /* [n][f] scratch */
    float *mask_add;      /* [n][n] additive mask, row = query, column = key, added to the
                             scaled scores before the softmax by every backend and read by
                             the trace.  Built once per run by engine/forward/run.c (build_mask):
                             0, or ATN_MASK_MIN (HF's finfo.min) for a padded key.  One
                             mask for all heads; later interventions (causal, windows,
                             ALiBi's per-head bias would add a head stride) add to it */
    float *mask_base;            /* [n][n] the mask without the what-if masks, for the layers
                                    mask_layers leaves out; NULL: mask_add in every layer */
    const uint8_t *mask_layers;  /* [L] 1 = mask_add, 0 = mask_base (with mask_base) */
    int mask_form;               /* atn_mask_form (layer.h): what mask_add holds, checked by run.c
                                    after build_mask; 0 (ATN_MASK_READ): read it */
    int32_t *pos_ids;     /* [n] row of the position embeddings of each token (engine/forward/run.c
                             fills it by the model family's rule before the forward; every
                             backend's embeddings read it) */
    /* the per-head interventions (atn_interventions, attnscope.h), set by engine/forward/run.c;
       all off (NULL, 1, NULL, false) for a plain run.  Only the reference ops apply them: the
       packed ops are not taken while any is set (correct by construction), and the CUDA
       backend refuses them (engine/forward/backend.c) */
    const float *alibi_slopes;   /* [H]: scores += -m_h |i-j| */
    float temperature;           /* scores (scaled + mask + ALiBi) / temperature; 1: none */
    const uint8_t *heads_off;    /* [L][H] 1 = switched off */
    atn_head_mode head_mode;
    bool no_positions;           /* embeddings without the position term; rotary: no rotation */
    /* the what-if lab's rotary knobs (rope_theta, rope_factor): the frequencies every layer
       (inv_freq) and the local layers (inv_freq_local) turn q and k by instead of the
       model's, [d_head / 2] each, owned by the run; NULL: the model's */
    const float *inv_freq, *inv_freq_local;
    int32_t start_layer;         /* > 0: hidden[0..start_layer] are given (atn_run_forward_from):
                                    the CPU runs only layers start_layer.. (the GPU refuses) */
    int32_t nonfinite_layer;
    /* reduced precision on the CPU (engine/forward/precision.h), set by engine/forward/run.c: FP32 (every
       field below unused), or the operands of every product rounded: the weights from the
       model's rounded copy, the activations into round_buf (Q, K, V in place, so the
       capture holds what QK^T and PV read) */
    atn_precision precision;
    float *round_buf;            /* [atn_round_scratch_floats] */
    int64_t *overflow;           /* [L+1][ATN_OPERAND_COUNT] values that became +-inf in fp16
                                    (row 0: the embedding projection; row l+1: layer l), or NULL */
    bool attn_one_head;          /* attn is one [n][n] that every head of every layer writes in
                                    turn (heads on demand or a head sink: nothing reads a head
                                    after its weighted sum); the packed ops get one [n][n] per
                                    team thread of their own (atn_packed_attend_heads) */
    bool ran_packed;             /* out: the CPU forward ran the packed ops (atn_cpu_attend_head
                                    makes a head again with the same ones) */
    atn_encdec_acts *encdec;     /* an encoder-decoder's decoder side, or NULL */
} atn_activations;

/* The decoder over the encoder's output (a->hidden's last layer), by the one layer walk with
 * its cross-attention (the reference ops). */
void atn_cpu_decoder_forward(const atn_model *model, const atn_activations *a);

/* True when a has a per-head intervention only the reference ops apply (ops-ref.c). */
static inline bool atn_activations_gated(const atn_activations *a) {
    return a->alibi_slopes || a->temperature != 1.0f || a->heads_off || a->no_positions || a->start_layer > 0 ||
           a->mask_base;
}

/* The additive mask layer l adds (mask_add, or mask_base where the what-if masks skip it). */
static inline const float *atn_layer_mask(const atn_activations *a, int32_t l) {
    return a->mask_base && !a->mask_layers[l] ? a->mask_base : a->mask_add;
}

/* The additive mask value for a padded key, as Hugging Face uses (torch.finfo(float32).min). */
#define ATN_MASK_MIN (-3.4028234663852886e38f)

/* Bytes the CPU forward would still allocate for model's packed weights on its first run (0
 * when they exist or the packed ops do not apply): run.c counts them in its memory check. */
size_t atn_cpu_pack_pending_bytes(const atn_model *model);

/* ---- what the stacked forward of several sequences (engine/forward/batch.c) uses ---------- */

/* One layer's weights packed for the AVX-512 kernels (atn_pack_weight layout). */
typedef struct atn_packed_layer {
    const float *wq, *wk, *wv, *wo, *w1, *w2;
} atn_packed_layer;

struct atn_walk;
/* Whether atn_cpu_forward takes the packed ops for model (before any per-head intervention). */
bool atn_cpu_fast_applies(const atn_model *model);
/* The embeddings of one sequence into hidden0 [n][d] (scratch: n x max(E, d) floats), as the
 * forward makes them. */
void atn_cpu_embeddings(float *hidden0, float *scratch, const atn_model *model, const atn_encoding *enc,
                        const int32_t *pos_ids, bool no_positions);
/* Threads for a walk of M rows whose sequences' squared lengths sum to S2: opts->threads
 * (0: OpenBLAS's count), but at least ~25 MFLOP of each layer per thread. */
int atn_cpu_walk_threads(const atn_model *model, int32_t M, size_t S2, const atn_run_options *opts);
/* Runs the walk w (engine/forward/layer.h: everything set but ops, team and packed, and
 * scratch for nt threads) with the packed ops on the process's CPU team of nt threads
 * (fewer when threads cannot be had), packing the model's weights on first use, holding the
 * team's lock.  ATN_E_NOMEM when the packed copy cannot be made (nothing run). */
atn_status atn_cpu_walk_packed(struct atn_walk *w, int nt, atn_error *err);

atn_status atn_cpu_forward(const atn_model *model, const atn_encoding *enc, atn_activations *act,
                           const atn_run_options *opts, atn_error *err);

/* Head h of layer l of the CPU forward that filled a (which kept every layer's Q, K, V:
 * trace_stride > 0) into out [n][n], by the attend op of the ops that forward ran, on this
 * thread: the bits that forward's capture would hold.  Reads a only (mask, gates, Q, K, V
 * as the forward left them).  ATN_E_NOMEM for the scratch. */
atn_status atn_cpu_attend_head(const atn_model *model, const atn_activations *a, int32_t l, int32_t h, float *out,
                               atn_error *err);

/* Building blocks (engine/forward/ops-ref.c), also used by the masked-LM head. */
/* out[n,o] = in[n,i] W^T + b, W [o,i]; W NULL means identity (o == i); b NULL means zero. */
void atn_linear(float *out, const float *in, const float *w, const float *b, int32_t n, int32_t i, int32_t o);
/* LayerNorm over rows of d; in == out allowed; g/b NULL mean 1/0. */
void atn_layernorm(float *out, const float *in, const float *g, const float *b, int32_t n, int32_t d, float eps);
void atn_activate(float *x, size_t count, atn_activation act);
/* RMSNorm over rows of d (Llama's): x / sqrt(mean(x^2) + eps) * g; in == out allowed; g NULL means 1. */
void atn_rmsnorm(float *out, const float *in, const float *g, int32_t n, int32_t d, float eps);
/* Rotates one head's d_head values x at position pos in place (rotate-half: pairs i and
 * i + d_head / 2 by the angle pos inv_freq[i]), as HF's apply_rotary_pos_emb. */
void atn_rope_rotate(float *x, const float *inv_freq, int32_t d_head, int32_t pos);
/* The same in two steps, for many heads at one position: the angles' cos and sin
 * [d_head / 2] each (caller's memory), then a head rotated by them; bit for bit
 * atn_rope_rotate. */
void atn_rope_angles(float *cos_out, float *sin_out, const float *inv_freq, int32_t d_head, int32_t pos);
void atn_rope_rotate_cs(float *x, const float *c, const float *s, int32_t d_head);
/* The operand a product reads under a's precision: in itself (a NULL or fp32), or in
 * rounded into a->round_buf (valid until the next call), counting fp16 overflows in row
 * (0: embeddings, l + 1: layer l) under op. */
const float *atn_round_operand(const atn_activations *a, const float *in, size_t count, int32_t row,
                               atn_operand op);

#endif

/* The transformer layer, written once (engine/forward/layer.c).
 *
 * A family's layer is described by data (atn_layer_desc: where the norms sit, which norm,
 * whether there is a residual, the MLP, the score scale) and executed by one walk over a
 * short list of ops (atn_layer_walk):
 *
 *     normalise (pre-LN) -> project Q, K, V -> [positions on Q/K] -> attend (scores, scale,
 *     [score biases], mask, softmax-and-capture, weighted sum) -> output projection ->
 *     residual / normalise -> MLP -> residual / normalise -> [final norm]
 *
 * Each op is written once per backend (atn_layer_ops): the portable reference (plain C +
 * cblas, engine/forward/ops-ref.c, the path every other is tested against) and the AVX-512
 * packed kernels (engine/forward/ops-packed.c).  The walk runs on one thread (the reference
 * ops: OpenBLAS threads each product itself) or on every thread of the CPU team at once
 * (the packed ops split each op's rows, panels or heads; the walk puts a barrier between
 * ops).  Stacked-row batching (several sequences' rows in every product, engine/forward/
 * batch.c) and the what-if head gates are parameters of the walk: a plain run is a stack of
 * one sequence.
 *
 * Rotary positions are the positions op between the projections and attend, grouped K/V
 * heads a head -> K/V-head map in attend (the reference ops; docs/ARCHITECTURE.md, "Rotary
 * decoders").  Room left for what comes next ("The layer"): biases added to the scores
 * (ALiBi today, relative buckets, disentangled terms) live in attend's per-head term; cross-attention is a
 * walk whose K/V rows come from another stack; a backward per op sits beside its forward
 * in the same ops table. */
#ifndef ATN_LAYER_H
#define ATN_LAYER_H

#include "core/model-private.h"
#include "forward/encoder.h"

/* Where the layer normalises (with which norm: atn_norm_type). */
typedef enum atn_norm_place {
    ATN_NORM_POST = 0,   /* BERT: h1 = LN1(x + attn), out = LN2(h1 + mlp(h1)) */
    ATN_NORM_PRE,        /* GPT-2: r = x + attn(LN1(x)), out = r + mlp(LN2(r)); LN_f at the end */
    ATN_NORM_NONE,       /* toy models without LayerNorm */
} atn_norm_place;

typedef enum atn_norm_type {
    ATN_NORM_LAYERNORM = 0,   /* (x - mean) / sqrt(var + eps) * g + b */
    ATN_NORM_RMSNORM,         /* x / sqrt(mean(x^2) + eps) * g (Llama's LlamaRMSNorm) */
} atn_norm_type;

typedef enum atn_mlp_kind {
    ATN_MLP_NONE = 0,    /* toy models without a feed-forward block */
    ATN_MLP_PLAIN,       /* act(x W1^T + b1) W2^T + b2, act as atn_layer_desc.act */
    ATN_MLP_GATED,       /* (act(x Wg^T + bg) * (x W1^T + b1)) W2^T + b2: SwiGLU with act silu */
} atn_mlp_kind;

/* Which weight of a layer a projection reads (atn_layer_weights' names). */
typedef enum atn_weight_id {
    ATN_W_Q = 0, ATN_W_K, ATN_W_V, ATN_W_O, ATN_W_FFN_IN, ATN_W_FFN_OUT,
    ATN_W_FFN_GATE,      /* the gated MLP's gate (wg) */
    ATN_W_CQ, ATN_W_CK, ATN_W_CV, ATN_W_CO,   /* an encoder-decoder's cross-attention */
} atn_weight_id;

/* Weight `which` of layer lw and its bias (*bias; NULL: zero). */
static inline const float *atn_layer_weight(const atn_layer_weights *lw, atn_weight_id which, const float **bias) {
    switch (which) {
    case ATN_W_Q: return *bias = lw->bq, lw->wq;
    case ATN_W_K: return *bias = lw->bk, lw->wk;
    case ATN_W_V: return *bias = lw->bv, lw->wv;
    case ATN_W_O: return *bias = lw->bo, lw->wo;
    case ATN_W_FFN_IN: return *bias = lw->b1, lw->w1;
    case ATN_W_FFN_OUT: return *bias = lw->b2, lw->w2;
    case ATN_W_FFN_GATE: return *bias = lw->bg, lw->wg;
    case ATN_W_CQ: return *bias = lw->bcq, lw->cq;
    case ATN_W_CK: return *bias = lw->bck, lw->ck;
    case ATN_W_CV: return *bias = lw->bcv, lw->cv;
    case ATN_W_CO: return *bias = lw->bco, lw->co;
    }
    return *bias = NULL, NULL;
}

/* A family's layer, as data (atn_layer_desc_of). */
typedef struct atn_layer_desc {
    atn_norm_place norm_place;
    atn_norm_type norm_type;
    bool residual;            /* false: toy models without the residual connection */
    atn_mlp_kind mlp;
    atn_activation act;       /* the MLP's activation */
    bool final_norm;          /* the model's final norm after the last layer (GPT-2's ln_f) */
    float eps;                /* the norms' epsilon */
    /* the score scale: 1/sqrt(k) (scale_none: 1), divided by layer + 1 when scale_by_layer
       (GPT-2's scale_attn_weights / scale_attn_by_inverse_layer_idx) */
    bool scale_none, scale_by_layer;
    int32_t d, f, heads, d_head;
    /* the attention's widths: kv_heads K/V heads (query head h reads K/V head
       h / (heads / kv_heads)), q and ctx rows d_q = heads d_head wide, k and v rows d_kv =
       kv_heads d_head; heads, d and d, without grouped heads or a head_dim of its own */
    int32_t kv_heads, d_q, d_kv;
    /* rotary positions (the positions op): q and k of each head at position p rotated by
       p inv_freq[i] in the pairs (i, i + d_head / 2) (rotate-half, as HF's
       apply_rotary_pos_emb); NULL: none.  qk_norm: each head's q and k RMS-normalised
       first with the layer's q_norm_g / k_norm_g (Qwen3) */
    const float *inv_freq;
    bool qk_norm;
    /* ModernBERT: layer l with global_every > 0 and l % global_every != 0 is local and turns
       q and k by inv_freq_local (atn_desc_inv_freq); attn_norm_optional: a layer without
       attention-norm weights (ln1_g NULL, layer 0's nn.Identity) reads its input as is */
    const float *inv_freq_local;
    int32_t global_every;
    bool attn_norm_optional;
    /* Gemma 2 / 3: local_layers[l] 1 for a sliding layer (turned by inv_freq_local when set),
       NULL: none; scale: the score factor (query_pre_attn_scalar^-1/2; 0: 1/sqrt(d_head) and
       the GPT-2 switches); softcap: scores become tanh(s / softcap) softcap after the scale,
       before the mask (0: none); sandwich: a layer with post_attn_g / post_ffn_g normalises
       the attention's and the MLP's outputs before their residuals */
    const uint8_t *local_layers;
    float scale, softcap;
    bool sandwich;
    /* DeBERTa-v2/v3 (atn_deberta): scale_factor > 0 makes the score scale
       1/sqrt(d_head scale_factor); disentangled adds the c2p / p2c terms to each head's
       scaled scores in attend (engine/forward/deberta.h; not with "no positions");
       xsoftmax zeroes a row whose every key is masked (XSoftmax: a padded query's row,
       which the run's mask hides whole) instead of spreading it evenly */
    int32_t scale_factor;
    bool disentangled, xsoftmax;
} atn_layer_desc;

/* Whether layer l of d is local (ModernBERT's global_every, Gemma's local_layers). */
static inline bool atn_desc_local_layer(const atn_layer_desc *d, int32_t l) {
    if (d->local_layers)
        return d->local_layers[l] != 0;
    return d->global_every > 0 && l % d->global_every != 0;
}

/* The frequencies layer l turns q and k by (NULL: no rotation). */
static inline const float *atn_desc_inv_freq(const atn_layer_desc *d, int32_t l) {
    return atn_desc_local_layer(d, l) && d->inv_freq_local ? d->inv_freq_local : d->inv_freq;
}

/* The attention's widths of d, with a description written by hand (tests) that leaves the
 * fields at 0 read as every head its own K/V head and rows d wide. */
static inline int32_t atn_desc_kv_heads(const atn_layer_desc *d) { return d->kv_heads > 0 ? d->kv_heads : d->heads; }
static inline int32_t atn_desc_d_q(const atn_layer_desc *d) { return d->d_q > 0 ? d->d_q : d->d; }
static inline int32_t atn_desc_d_kv(const atn_layer_desc *d) { return d->d_kv > 0 ? d->d_kv : d->d; }

/* The description of model's layers (every layer of one model is alike today). */
void atn_layer_desc_of(const atn_model *model, atn_layer_desc *desc);

/* The factor layer l's scores are multiplied by before the mask and the softmax. */
float atn_layer_scale(const atn_layer_desc *desc, int32_t layer);

/* One sequence of a walk's stack: rows row..row+n-1 of every [M][*] buffer. */
/* What a sequence's mask holds, when it is known without reading it: the softmax then adds
 * the same value by the cell's index (0, or ATN_MASK_MIN for a causal model's later key)
 * instead of reading the [n][n] mask (67 MB at 4,096 tokens): the same sums, bit for bit. */
typedef enum atn_mask_form {
    ATN_MASK_READ = 0,   /* anything: read it (the default) */
    ATN_MASK_ZEROS,      /* 0 everywhere (no padding, no window, no what-if mask) */
    ATN_MASK_CAUSAL,     /* 0 where key j <= query i, ATN_MASK_MIN where j > i */
} atn_mask_form;

typedef struct atn_walk_seq {
    int32_t row, n;
    float *attn;                 /* [L][H][n][n], or [H][n][n] reused per layer */
    size_t attn_stride;          /* H n n, or 0 */
    const float *mask;           /* [n][n] the additive mask (row = query) */
    const float *mask_base;      /* [n][n] the mask for the layers mask_layers leaves out, or NULL */
    const uint8_t *mask_layers;  /* [L] 1 = mask, 0 = mask_base (with mask_base) */
    atn_mask_form mask_form;     /* what `mask` holds (ATN_MASK_READ: read it); n_keys 0 only */
    const uint8_t *heads_off;    /* [L][H] 1 = switched off, or NULL */
    bool attn_one_head;          /* no layer's heads kept (heads on demand, a head sink): attn is
                                    one [n][n] every head writes in turn (the reference ops), or
                                    one per thread (the packed ops: atn_packed_attend_heads) */
    /* called with each head's probabilities [n][n] once made (before the weighted sum; the
       packed ops from the thread that made it, several heads at once), or NULL */
    void (*head_done)(void *user, int32_t layer, int32_t head, const float *att_h, int32_t n);
    void *head_user;
    const int32_t *pos_ids;      /* [n] each token's position (the rotation's angle), or NULL */
    int32_t nonfinite_layer;     /* in: -1, or 0 when the embeddings were not finite; out: the
                                    first layer whose output has a NaN or an infinity */
    /* keys other than the queries (cross-attention): rows key_row..key_row+n_keys-1 of k and
       v, attn [L][H][n][n_keys] and mask [n][n_keys]; n_keys 0: the sequence's own rows */
    int32_t key_row, n_keys;
    /* [H][n][n_keys] added to every layer's scores before the mask (T5's relative position
       buckets, made once and shared by every layer as T5Stack shares them), or NULL */
    const float *score_bias;
} atn_walk_seq;

struct atn_team;
struct atn_layer_ops;

/* Everything one walk reads and writes.  Sizes: L layers, M rows (all sequences), d width,
 * f ffn width, H heads. */
typedef struct atn_walk {
    const atn_model *m;
    atn_layer_desc desc;
    int32_t n_layers;                  /* the layers of this stack; 0: the model's cfg.n_layers */
    /* an encoder-decoder's decoder: after the self-attention block each layer attends from
       its rows (queries) to cross_mem's (the encoder's output, cross_M rows: keys and values)
       with the ATN_W_C* weights, each sequence's cross_seq[s] saying where; NULL: none.
       cq, cctx [M][d_q], ck, cv [cross_M][d_kv], cao [M][d]: scratch, or with trace_stride
       every layer's ([L][M][d_q], [L][cross_M][d_kv], [L][M][d]), which the trace reads */
    const float *cross_mem;
    int32_t cross_M;
    atn_walk_seq *cross_seq;
    float *cq, *ck, *cv, *cctx, *cao;
    const struct atn_layer_ops *ops;
    const atn_layer_weights *layers;   /* [L] the weights (fp32, rounded, or on the device); the
                                          norms' gains and biases are read from here by every backend */
    const float *final_g, *final_b;    /* [d] the final norm (desc.final_norm) */
    const atn_packed_layer *packed;    /* [L] the packed ops' weights (biases from m->w.layers) */
    atn_walk_seq *seq;
    int32_t count, M;
    float *hidden;                     /* [L+1][M][d] */
    float *q, *k, *v, *ctx, *ao;       /* [L][M][d], or [M][d] (trace_stride 0) */
    size_t trace_stride;
    float *h1, *ffn;                   /* [M][d], [M][f] scratch ([M][2f] for a gated MLP: the
                                          up projection in the second half) */
    /* the what-if interventions every sequence shares (heads off are per sequence) */
    const float *slopes;               /* [H] ALiBi, or NULL */
    float temperature;                 /* 1: none */
    atn_head_mode head_mode;
    bool no_positions;                 /* the what-if lab's "no positions": no rotation */
    bool gated;                        /* any intervention (the attention's gated softmax) */
    int32_t start;                     /* layers start.. run; hidden[0..start] are given */
    /* reduced precision (the reference ops): the rounding hook's state, or NULL (fp32) */
    const atn_activations *round;
    /* the CPU team (NULL: one thread; barrier called between ops when set) and the packed
       attention's scratch and costs */
    struct atn_team *team;
    void (*barrier)(struct atn_team *team);
    float *scratch;                    /* [threads][scratch_floats] */
    size_t scratch_floats;
    const double *cost;                /* [count H + 1] running n^2 cost of (sequence, head), or NULL */
    const atn_run_options *opts;       /* progress (NULL: none, the GPU reports its own) */
    void *backend;                     /* the backend's own state for its ops (the GPU's), or NULL */
    atn_status *status;                /* where an op that can fail (the GPU's) puts its error; the
                                          walk stops after the layer when it is set; NULL: none */
    bool stop;                         /* the progress callback cancelled at layer stop_layer */
    int32_t stop_layer;
    /* the on-demand head (atn_cpu_attend_head): attend computes head `head` of one sequence
       only, into seq[0].attn as [n][n], from the Q, K, V its forward kept (already rounded
       there); the weighted sum into ctx only where the ops cannot skip it */
    bool one_head;
    int32_t head;
} atn_walk;

/* One backend's ops.  Each is called by every thread of the walk (tid of nt) and does that
 * thread's share; the walk puts a barrier after each. */
typedef struct atn_layer_ops {
    const char *name;
    /* The operand a product reads: in itself, or (reduced precision, the reference ops) in
       rounded into the run's scratch, counting fp16 overflows of layer l under op.  Valid
       until the next call. */
    const float *(*operand)(const atn_walk *w, const float *in, size_t count, int32_t l, atn_operand op);
    /* out[M, o] = in[M, i] W^T + b (+ res[M, o]), then act (-1: none), W = weight `which` of
       layer l.  out may not be res or in. */
    void (*project)(const atn_walk *w, int tid, int nt, float *out, const float *in, int32_t l, atn_weight_id which,
                    const float *res, int act, int32_t i, int32_t o);
    /* out[M, d] = norm(in + res) (res NULL: in) with gain g and bias b; in == out allowed. */
    void (*norm)(const atn_walk *w, int tid, int nt, float *out, const float *in, const float *res, const float *g,
                 const float *b);
    /* Every sequence's and head's attention of layer l: scores, scale, mask, the gates,
       softmax into the sequence's attn (the capture), ctx = P V.  q, k, v may be rounded in
       place (reduced precision). */
    void (*attend)(const atn_walk *w, int tid, int nt, int32_t l, float *q, float *k, float *v, float *ctx);
    /* out[M, d] = a + b (b NULL: a copy of a); the CPU's is atn_walk_add_rows. */
    void (*add)(const atn_walk *w, int tid, int nt, float *out, const float *a, const float *b);
    /* After layer l wrote out [M, d]: marks the sequences that went non-finite there (the
       CPU's is atn_walk_check_finite; the GPU's flags them on the device). */
    void (*end_layer)(atn_walk *w, int tid, int nt, const float *out, int32_t l);
    /* (Added after the first six, so tables written in order keep their meaning.)
       Rotary positions of layer l (desc.inv_freq set): each sequence's q [M, d_q] and k
       [M, d_kv] rows, head by head, RMS-normalised first when desc.qk_norm, rotated by the
       token's position id.  NULL in a backend that does not run rotary models (the packed
       and CUDA ops: those models are routed to the reference ops or refused). */
    void (*positions)(const atn_walk *w, int tid, int nt, int32_t l, float *q, float *k);
    /* out[i] *= by[i] over count floats (the gated MLP's product); NULL as positions. */
    void (*mul)(const atn_walk *w, int tid, int nt, float *out, const float *by, size_t count);
} atn_layer_ops;

/* The CPU's row steps (host memory), split by rows as the packed norm splits them. */
void atn_walk_add_rows(const atn_walk *w, int tid, int nt, float *out, const float *a, const float *b);
void atn_walk_check_finite(atn_walk *w, int tid, int nt, const float *out, int32_t l);

extern const atn_layer_ops atn_ops_ref;      /* engine/forward/ops-ref.c */
extern const atn_layer_ops atn_ops_packed;   /* engine/forward/ops-packed.c */

/* The packed ops' attend for a walk of one sequence that keeps no layer's heads
 * (seq[0].attn_one_head: heads on demand, or a head sink with no capture): thread tid of nt
 * makes heads tid, tid + nt, ... whole, each into its own [n][n] at seq[0].attn + tid n^2,
 * and hands each to seq[0].head_done (when set) as soon as it is made, so the walk holds
 * atn_packed_heads_held(nt, H) [n][n] and never a layer's [H][n][n] unless the team has a
 * thread per head.  rows makes rows [r0, r1) of one head and their context:
 * atn_attention_rows (cpu-kernels.h) in the forward; a test may pass a stand-in of the same
 * contract, which lets a machine without AVX-512 run this schedule.  The same bits as the
 * layer-wide branch (the kernel makes each query row alone). */
typedef void (*atn_attention_rows_fn)(float *ctx, float *att_h, const float *q, const float *k, const float *v,
                                      size_t ld, const float *mask_add, int32_t n, int32_t kd, int32_t r0, int32_t r1,
                                      float scale, float *scratch, bool repack);
void atn_packed_attend_heads(const atn_walk *w, int tid, int nt, int32_t layer, float *q, float *k, float *v,
                             float *ctx, atn_attention_rows_fn rows);
/* How many [n][n] the packed ops hold in such a walk of nt threads and n_heads heads: one per
 * thread that gets a head, min(nt, n_heads) (at least 1).  The reference ops hold one. */
int32_t atn_packed_heads_held(int nt, int32_t n_heads);

/* Runs layers w->start.. of every sequence (called by each thread of the team, tid of nt;
 * team NULL when nt is 1).  Sets w->stop when the progress callback cancels, and each
 * sequence's nonfinite_layer. */
void atn_layer_walk(atn_walk *w, int tid, int nt);

#endif

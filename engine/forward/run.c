/* A run: the activation memory for one sequence length, the forward pass on the chosen
 * device, and the capture it leaves behind.  One allocation holds every activation;
 * it is reused while the sequence length and options stay the same. */
#include "forward/encoder.h"
#include "forward/backend.h"
#include "forward/run.h"
#include "forward/layer.h"
#include "tokenize/encoding.h"
#include "core/family.h"
#include "whatif/interventions.h"
#include "core/memlimit.h"
#include "core/model-private.h"
#include "forward/precision.h"
#include "formats/hf-rotary.h"
#include "formats/attention-lazy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct atn_run {
    const atn_model *model;
    atn_encoding *enc;        /* a copy of the last input */
    atn_activations act;
    atn_capture cap;
    float *block;             /* all activations */
    size_t block_floats;      /* its capacity: it grows, never shrinks */
    const atn_backend *block_owner;   /* the backend whose host_alloc made it, or NULL (malloc) */
    bool pin_failed;          /* host_alloc said no once: plain memory from then on */
    atn_device used;
    atn_error fallback;       /* why the last forward went to the CPU instead of the GPU; "" if not */
    float *slopes;            /* [H] ALiBi's slopes when the last forward had ALiBi */
    uint8_t *heads_off;       /* [L][H] the last forward's switched-off heads */
    uint8_t *mask_layers;     /* [L] the layers the last forward's what-if masks applied in,
                                 when they skipped some (atn_interventions.mask_layers) */
    int64_t *overflow;        /* [L+1][ATN_OPERAND_COUNT] an fp16 CPU forward's overflow counts */
    float *rope;              /* [2][d_head / 2] the what-if rotary frequencies (global, local) */
    int32_t slide_w;          /* > 0: the window of the layers the what-if sliding knob turned on */
    bool base_unwindowed;     /* mask_base leaves out the model's own window (sliding turned off) */
    /* an encoder-decoder's decoder side (engine/forward/encdec.c): its block and the stacks */
    float *ed_block;
    size_t ed_floats;
    atn_encdec_acts ed;
    atn_stack stacks[3];
};

void atn_run_options_init(atn_run_options *o) {
    memset(o, 0, sizeof *o);
    o->device = ATN_DEVICE_CPU;
    o->precision = ATN_PRECISION_FP32;
    o->keep_attention = true;
    o->keep_trace_inputs = true;
    o->on_demand_over_budget = true;
}

atn_run *atn_run_new(const atn_model *model) {
    atn_run *r = calloc(1, sizeof *r);
    if (r)
        r->model = model;
    return r;
}

static void free_block(atn_run *run) {
    if (run->block_owner)
        run->block_owner->host_free(run->block);
    else
        free(run->block);
    run->block = NULL;
    run->block_floats = 0;
    run->block_owner = NULL;
}

/* The backend to pin this run's memory with, or NULL for plain memory. */
static const atn_backend *pinning_backend(const atn_run_options *o) {
    if (!o->pinned_host || o->device == ATN_DEVICE_CPU)
        return NULL;
    atn_error e = {0};
    const atn_backend *b = atn_backend_cuda(&e);   /* loads the module once; NULL without a GPU */
    return b && b->host_alloc && b->host_free ? b : NULL;
}

void atn_run_free(atn_run *run) {
    if (!run)
        return;
    free_block(run);
    atn_encoding_free(run->enc);
    free(run->slopes);
    free(run->heads_off);
    free(run->mask_layers);
    free(run->rope);
    free(run->overflow);
    free(run->ed_block);
    free(run);
}

const atn_capture *atn_run_capture(const atn_run *run) { return run->enc ? &run->cap : NULL; }

const atn_stack *atn_capture_stack(const atn_capture *cap, atn_stack_kind kind) {
    for (int32_t i = 0; cap && i < cap->n_stacks; i++)
        if (cap->stacks[i].kind == kind)
            return &cap->stacks[i];
    return NULL;
}

const float *atn_stack_head_read(const atn_capture *cap, const atn_stack *s, int32_t layer, int32_t head,
                                 float *scratch, atn_error *err) {
    if (!cap || !s || layer < 0 || layer >= s->n_layers || head < 0 || head >= s->n_heads) {
        atn_error_set(err, ATN_E_INVALID, "stack head: %s layer %d head %d is outside 0..%d x 0..%d",
                      s ? s->name : "no stack,", layer, head, s ? s->n_layers - 1 : -1, s ? s->n_heads - 1 : -1);
        return NULL;
    }
    if (s->attn)
        return s->attn + ((size_t)layer * s->n_heads + head) * s->n_q * s->n_k;
    if (s->kind == ATN_STACK_ENCODER)
        return atn_capture_head_read(cap, layer, head, scratch, err);
    if (!scratch) {
        atn_error_set(err, ATN_E_INVALID, "stack head: no room given for %s layer %d head %d", s->name, layer, head);
        return NULL;
    }
    if (!cap->attn_on_demand || cap->run) {
        atn_error_set(err, ATN_E_INVALID, "stack head: the %s stack holds no attention", s->name);
        return NULL;
    }
    return atn_attn_file_stack_head(cap, s->kind, layer, head, scratch, err) == ATN_OK ? scratch : NULL;
}

bool atn_stack_kind_parse(const char *name, atn_stack_kind *kind) {
    static const char *const names[] = {"encoder", "decoder", "cross"};
    for (int i = 0; name && i < 3; i++)
        if (strcmp(name, names[i]) == 0) {
            *kind = (atn_stack_kind)i;
            return true;
        }
    return false;
}

/* An encoder-decoder's decoder side for a source of n tokens: the target (o's, or the decoder
 * start token alone) checked, its memory (within limit less need bytes), its inputs. */
static atn_status setup_decoder(atn_run *run, const atn_run_options *o, int32_t n, size_t need, size_t limit,
                                atn_error *err) {
    const atn_model *m = run->model;
    int32_t start = m->encdec.decoder_start_id;
    const int32_t *ids = o->target_ids ? o->target_ids : &start;
    int32_t t = o->target_ids ? o->n_target : 1;
    if (t <= 0)
        return atn_error_set(err, ATN_E_INVALID, "empty target: the decoder needs at least its start token");
    if (m->encdec.dec_pos_emb && t > m->cfg.max_positions)   /* BART, Marian: a position table */
        return atn_error_set(err, ATN_E_INVALID, "%d target tokens, but model \"%s\" allows at most %d positions", t,
                             m->name, m->cfg.max_positions);
    for (int32_t i = 0; i < t; i++)
        if (ids[i] < 0 || ids[i] >= m->cfg.vocab_size)
            return atn_error_set(err, ATN_E_INVALID, "target token id %d at position %d is outside the vocabulary "
                                 "(0..%d)", ids[i], i, m->cfg.vocab_size - 1);
    double floats = atn_encdec_floats(m, n, t, o->keep_trace_inputs);
    if (floats * sizeof(float) > (double)(limit > need ? limit - need : 0))
        return atn_error_set(err, ATN_E_NOMEM, "the decoder's %d target tokens over %d source tokens need %.1f MB "
                             "more than the %.1f MB allowed", t, n, floats * sizeof(float) / 1e6, limit / 1e6);
    if ((size_t)floats > run->ed_floats) {
        free(run->ed_block);
        run->ed_block = malloc((size_t)floats * sizeof(float));
        run->ed_floats = run->ed_block ? (size_t)floats : 0;
        if (!run->ed_block)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory for the decoder");
    }
    atn_encdec_layout(&run->ed, run->ed_block, m, n, t, o->keep_trace_inputs);
    atn_encdec_inputs(&run->ed, m, ids, run->enc->mask, n);
    return ATN_OK;
}

const float *atn_capture_layer_mask(const atn_capture *cap, int32_t layer) {
    if (!cap || layer < 0 || layer >= cap->n_layers)
        return NULL;
    return cap->mask_base && cap->mask_layers && !cap->mask_layers[layer] ? cap->mask_base : cap->mask_add;
}
atn_device atn_run_device_used(const atn_run *run) { return run->used; }
const char *atn_run_fallback_reason(const atn_run *run) {
    return run && run->fallback.message[0] ? run->fallback.message : NULL;
}

atn_status atn_capture_head(const atn_capture *cap, int32_t layer, int32_t head, float *out, atn_error *err) {
    if (!cap || !out)
        return atn_error_set(err, ATN_E_INVALID, "head on demand: no capture or no output");
    if (layer < 0 || layer >= cap->n_layers || head < 0 || head >= cap->n_heads)
        return atn_error_set(err, ATN_E_INVALID, "head on demand: layer %d head %d is outside 0..%d x 0..%d", layer,
                             head, cap->n_layers - 1, cap->n_heads - 1);
    size_t nn = (size_t)cap->n * cap->n;
    if (cap->attn) {
        memcpy(out, cap->attn + ((size_t)layer * cap->n_heads + head) * nn, nn * sizeof(float));
        return ATN_OK;
    }
    if (cap->attn_on_demand && !cap->run)   /* an attention file read lazily */
        return atn_attn_file_capture_head(cap, layer, head, out, err);
    if (!cap->attn_on_demand)
        return atn_error_set(err, ATN_E_INVALID, "head on demand: the run kept no attention and no Q, K, V");
    return atn_cpu_attend_head(cap->run->model, &cap->run->act, layer, head, out, err);
}

const float *atn_capture_head_read(const atn_capture *cap, int32_t layer, int32_t head, float *scratch,
                                   atn_error *err) {
    if (cap && cap->attn && layer >= 0 && layer < cap->n_layers && head >= 0 && head < cap->n_heads)
        return cap->attn + ((size_t)layer * cap->n_heads + head) * cap->n * cap->n;
    if (cap && !cap->attn && !scratch) {
        atn_error_set(err, ATN_E_INVALID, "head on demand: no room given for layer %d head %d", layer, head);
        return NULL;
    }
    return atn_capture_head(cap, layer, head, scratch, err) == ATN_OK ? scratch : NULL;
}

bool atn_capture_has_heads(const atn_capture *cap) { return cap && (cap->attn || cap->attn_on_demand); }

bool atn_capture_head_present(const atn_capture *cap, int32_t layer, int32_t head) {
    if (!cap || layer < 0 || layer >= cap->n_layers || head < 0 || head >= cap->n_heads)
        return false;
    return !cap->layer_heads || head < cap->layer_heads[layer];
}

/* Floats of each buffer, in the order they are laid out in the block. */
typedef struct run_layout {
    size_t hidden, trace, attn, h1, ffn, mask, pos, round;
} run_layout;

/* Whether iv uses the what-if sliding knob (a layer's window turned on or off, or a window
 * size given): the run then keeps a second [n][n] mask, with and without the window. */
static bool slides(const atn_interventions *iv, int32_t n_layers) {
    if (!iv)
        return false;
    bool any = iv->sliding_window > 0;
    for (int32_t l = 0; iv->sliding && l < n_layers; l++)
        any |= iv->sliding[l] != 0;
    return any;
}

static bool layout_for(const atn_config *c, int32_t n, const atn_run_options *o, bool two_masks, run_layout *lay) {
    /* computed in double first: a huge n must be refused, not wrap around; on-demand heads
       keep Q, K, V and one layer's attention */
    double nd = (double)n * c->d_model, L = c->n_layers;
    bool keep_attn = o->keep_attention && !o->attention_on_demand;
    bool keep_trace = o->keep_trace_inputs || o->attention_on_demand;
    bool one_head = o->attention_on_demand || (o->head_sink && !o->keep_attention);   /* the reference ops' */
    double attn = (double)n * n * (keep_attn ? L * c->n_heads : one_head ? 1 : c->n_heads);
    /* q and ctx rows are n_heads d_head wide, which a rotary decoder's head_dim may make
       wider than d_model (Qwen3); k and v rows are no wider */
    double width = (double)c->n_heads * c->d_head > c->d_model ? (double)c->n_heads * c->d_head : c->d_model;
    double trace = (double)n * width * (keep_trace ? L : 1);
    /* the ffn buffer also holds the embeddings before their projection to d when they are
       wider than the FFN (ELECTRA's generators; encoder.c); a gated MLP's up projection
       goes in its second half */
    double ffn = c->use_ffn ? (double)c->d_ffn * (c->gated_ffn ? 2 : 1) : 1;
    if (c->use_embeddings && atn_d_embed(c) != c->d_model && atn_d_embed(c) > ffn)
        ffn = atn_d_embed(c);
    /* reduced precision: the scratch the CPU rounds operands into (engine/forward/precision.h) */
    double round = o->precision != ATN_PRECISION_FP32 ? (double)atn_round_scratch_floats(c, n) : 0;
    /* a second [n][n] mask when the what-if masks skip some layers (atn_layer_mask) */
    double masks = two_masks || atn_interventions_masks_some_layers(o->interventions, c->n_layers) ||
                   slides(o->interventions, c->n_layers) ? 2 : 1;
    double total = nd * (L + 1) + 5 * trace + attn + nd + (double)n * ffn + masks * n * n + n + round;
    if (total * sizeof(float) > (double)SIZE_MAX / 2)
        return false;
    lay->hidden = (size_t)(nd * (L + 1));
    lay->trace = (size_t)trace;
    lay->attn = (size_t)attn;
    lay->h1 = (size_t)nd;
    lay->ffn = (size_t)(n * ffn);
    lay->mask = (size_t)masks * n * n;
    lay->pos = (size_t)n;   /* int32 position ids, one float's room each */
    lay->round = (size_t)round;
    return true;
}

size_t atn_run_bytes_needed(const atn_config *c, int32_t n, const atn_run_options *o) {
    run_layout lay;
    if (!layout_for(c, n, o, false, &lay))   /* ModernBERT's second mask (n n floats) not counted */
        return SIZE_MAX;
    return (lay.hidden + 5 * lay.trace + lay.attn + lay.h1 + lay.ffn + lay.mask + lay.pos + lay.round) * sizeof(float);
}


static atn_status copy_encoding(atn_encoding **dst, const atn_encoding *src, atn_error *err) {
    atn_encoding *e = atn_encoding_copy(src);
    if (!e)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    atn_encoding_free(*dst);
    *dst = e;
    return ATN_OK;
}

static void format_bytes(char *buf, size_t len, double bytes) {
    if (bytes >= 1e9)
        snprintf(buf, len, "%.1f GB", bytes / 1e9);
    else
        snprintf(buf, len, "%.1f MB", bytes / 1e6);
}

/* The run's additive mask [n][n] (row = query, column = key): 0 where key j is a real token
 * (enc->mask[j]), ATN_MASK_MIN where it is padding (or, for a causal family, later than
 * the query), the same in every query row but for the causal term.  The one
 * place the mask is decided: every backend adds it, the trace reads it from the capture,
 * and per-query masks (causal, windows) are further terms added here. */
static void build_mask(float *mask_add, const atn_encoding *enc, bool causal, int32_t window, int32_t local_half,
                       bool query_rows, const atn_interventions *iv) {
    int32_t n = enc->n;
    for (int32_t j = 0; j < n; j++)
        mask_add[j] = enc->mask[j] ? 0.0f : ATN_MASK_MIN;
    for (int32_t i = 1; i < n; i++)
        memcpy(mask_add + (size_t)i * n, mask_add, (size_t)n * sizeof(float));
    /* DeBERTa (query_rows): the mask is query mask x key mask (DebertaV2Encoder's
       get_attention_mask), so a padded query's whole row is hidden; XSoftmax makes it 0 */
    for (int32_t i = 0; query_rows && i < n; i++)
        if (!enc->mask[i])
            for (int32_t j = 0; j < n; j++)
                mask_add[(size_t)i * n + j] = ATN_MASK_MIN;
    /* a causal family (GPT-2): query i sees keys 0..i.  A later key gets ATN_MASK_MIN,
       not MIN plus the padding term: Hugging Face's eager GPT-2 puts finfo.min in the
       masked places of one combined mask, so a score there is s + finfo.min, which is
       finfo.min in float32 for any score of ordinary size */
    if (causal)
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = i + 1; j < n; j++)
                mask_add[(size_t)i * n + j] = ATN_MASK_MIN;
    /* a rotary decoder's sliding window (Mistral; Qwen2 with use_sliding_window; Gemma's
       sliding layers, this mask being theirs): query i
       sees key j only when i - j < window, HF's sliding_window_overlay (kv_idx > q_idx -
       sliding_window), the same finfo.min where it hides a key */
    if (window > 0)
        for (int32_t i = window; i < n; i++)
            for (int32_t j = 0; j <= i - window; j++)
                mask_add[(size_t)i * n + j] = ATN_MASK_MIN;
    /* ModernBERT's local layers (this mask is theirs, mask_base the global layers'): query i
       sees key j only when |i - j| <= local_half, HF's _update_attention_mask (distance <=
       local_attention // 2, finfo.min outside) */
    if (local_half > 0)
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = 0; j < n; j++)
                if (abs(i - j) > local_half)
                    mask_add[(size_t)i * n + j] = ATN_MASK_MIN;
    /* the what-if lab's masks (causal, window + global, strided, hidden keys): the same
       ATN_MASK_MIN in the cells they hide (engine/whatif/interventions.c) */
    atn_interventions_apply_mask(mask_add, n, iv);
}

/* What mask_add [n][n] holds (atn_mask_form): all 0, or 0 up to the diagonal and
 * ATN_MASK_MIN after it, or anything else (read it).  One pass over the mask, stopping at
 * the first cell that fits neither; the softmax then makes these cells by index. */
static int mask_form_of(const float *mask_add, int32_t n) {
    bool zeros = true, causal = true;
    for (int32_t i = 0; i < n && (zeros || causal); i++) {
        const float *row = mask_add + (size_t)i * n;
        for (int32_t j = 0; j < n && (zeros || causal); j++) {
            uint32_t bits, zero = 0, min_bits;
            float mn = ATN_MASK_MIN;
            memcpy(&bits, row + j, sizeof bits);   /* bit for bit: -0 is not 0 here */
            memcpy(&min_bits, &mn, sizeof min_bits);
            zeros &= bits == zero;
            causal &= bits == (j <= i ? zero : min_bits);
        }
    }
    return zeros ? ATN_MASK_ZEROS : causal ? ATN_MASK_CAUSAL : ATN_MASK_READ;
}

/* The what-if rotary knobs (atn_interventions: rope_theta, rope_factor, sliding): the
 * frequencies into run->rope, the layers' windows into run->mask_layers (mask_add with the
 * window, mask_base without).  Refused by name on a model without rotary positions, and
 * sliding together with the what-if masks (a third mask would be needed). */
static atn_status rotary_knobs(atn_run *run, const atn_interventions *iv, atn_error *err) {
    const atn_model *m = run->model;
    const atn_config *c = &m->cfg;
    const atn_rotary *r = &m->rotary;
    bool freq = iv->rope_theta > 0.0 || (iv->rope_factor > 0.0 && iv->rope_factor != 1.0) || iv->rope_llama3 > 0.0;
    bool slide = slides(iv, c->n_layers);
    if (!freq && !slide)
        return ATN_OK;
    if (!r->on || !r->inv_freq)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: model \"%s\" (%s) has no rotary positions; the rotary "
                             "what-ifs are for Llama, Qwen, Mistral, Gemma and ModernBERT",
                             iv->rope_theta > 0.0    ? "rope_theta"
                             : iv->rope_llama3 > 0.0 ? "rope_llama3"
                             : freq                  ? "rope_factor"
                                                     : "sliding",
                             m->name,
                             m->family->name);
    if (freq) {
        int32_t half = c->d_head / 2;
        run->rope = malloc((size_t)2 * (size_t)(half > 0 ? half : 1) * sizeof(float));
        if (!run->rope)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        atn_rotary t = *r;
        if (iv->rope_theta > 0.0)
            t.theta = iv->rope_theta;
        if (iv->rope_llama3 > 0.0) {   /* Llama 3's rule with this factor, in place of the model's scaling */
            if (strcmp(r->scaling, "llama3") != 0) {   /* Llama 3.1's other parameters */
                t.low_freq_factor = 1.0, t.high_freq_factor = 4.0;
                t.original_max_positions = 8192;
            }
            t.scaling = "llama3";
            t.factor = iv->rope_llama3;
        }
        atn_hf_rotary_inv_freq(&t, c->d_head, run->rope);
        double f = iv->rope_factor > 0.0 ? iv->rope_factor : 1.0;
        for (int32_t i = 0; i < half; i++) {
            run->rope[i] = (float)((double)run->rope[i] / f);   /* transformers' linear: inv_freq / factor */
            if (r->inv_freq_local)
                run->rope[half + i] = (float)((double)r->inv_freq_local[i] / f);
        }
    }
    if (!slide)
        return ATN_OK;
    if (iv->causal || iv->window >= 0 || iv->strided > 0 || iv->n_hide > 0 || iv->mask_layers)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "sliding: a layer's window turned on or off cannot be combined "
                             "with the what-if masks (causal, window, strided, hidden tokens, mask layers)");
    bool own = r->window > 0 || atn_rotary_has_local(r);
    bool on = false;
    for (int32_t l = 0; iv->sliding && l < c->n_layers; l++)
        on |= iv->sliding[l] > 0;
    if (iv->sliding_window > 0 && own)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "sliding_window: model \"%s\" has a sliding window of its own "
                             "(%d tokens); its layers can turn it on or off, not change its size", m->name,
                             r->window > 0 ? r->window : r->local_window > 0 ? r->local_window : 2 * r->local_half + 1);
    if (on && !own && iv->sliding_window <= 0)
        return atn_error_set(err, ATN_E_INVALID, "sliding: model \"%s\" has no sliding window: give sliding_window, "
                             "the window of the layers turned on", m->name);
    if (!run->mask_layers) {   /* Mistral's window in every layer, or none (Llama) */
        run->mask_layers = malloc((size_t)c->n_layers);
        if (!run->mask_layers)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        for (int32_t l = 0; l < c->n_layers; l++)
            run->mask_layers[l] = r->window > 0;
    }
    for (int32_t l = 0; iv->sliding && l < c->n_layers; l++)
        if (iv->sliding[l])
            run->mask_layers[l] = iv->sliding[l] > 0;
    run->slide_w = own ? 0 : iv->sliding_window;
    run->base_unwindowed = r->window > 0;
    return ATN_OK;
}

/* Checks iv and copies the arrays the forward keeps (ALiBi's slopes, the head gate) into
 * the run.  A head gate with no head off is dropped (heads_off stays NULL in the run). */
static atn_status set_interventions(atn_run *run, const atn_interventions *iv, atn_error *err) {
    const atn_config *c = &run->model->cfg;
    size_t lh = (size_t)c->n_layers * c->n_heads;
    free(run->slopes), run->slopes = NULL;
    free(run->heads_off), run->heads_off = NULL;
    free(run->mask_layers), run->mask_layers = NULL;
    free(run->rope), run->rope = NULL;
    run->slide_w = 0, run->base_unwindowed = false;
    const atn_rotary *r = &run->model->rotary;
    if (atn_rotary_has_local(r)) {
        /* ModernBERT, Gemma: the run's mask (with the window) in its local layers, mask_base
           (padding and causal only) in the global ones; the what-if masks would need a third */
        if (iv && (iv->causal || iv->window >= 0 || iv->strided > 0 || iv->n_hide > 0 || iv->mask_layers))
            return atn_error_set(err, ATN_E_UNSUPPORTED, "what-if masks on %s: its local layers have a window "
                                 "of their own, which the what-if masks do not combine with yet",
                                 run->model->family->name);
        run->mask_layers = malloc((size_t)c->n_layers);
        if (!run->mask_layers)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        for (int32_t l = 0; l < c->n_layers; l++)
            run->mask_layers[l] = atn_rotary_local_layer(r, l);
    }
    bool model_alibi = run->model->family->alibi;   /* BLOOM: its own slopes, in every run */
    if (iv && iv->alibi && model_alibi)
        return atn_error_set(err, ATN_E_INVALID, "%s models already add ALiBi's bias to every head's scores",
                             run->model->family->name);
    if (!iv && !model_alibi)
        return ATN_OK;
    atn_status st = iv ? atn_interventions_check(iv, c->n_layers, c->n_heads, run->enc->n, err) : ATN_OK;
    if (st)
        return st;
    if (model_alibi || iv->alibi) {
        run->slopes = malloc((size_t)c->n_heads * sizeof(float));
        if (!run->slopes)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        atn_alibi_slopes(c->n_heads, run->slopes);
    }
    if (!iv)
        return ATN_OK;
    bool any = false;
    for (size_t i = 0; iv->heads_off && i < lh; i++)
        any |= iv->heads_off[i] != 0;
    if (any) {
        run->heads_off = malloc(lh);
        if (!run->heads_off)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        for (size_t i = 0; i < lh; i++)
            run->heads_off[i] = iv->heads_off[i] != 0;
    }
    if (!atn_rotary_has_local(r) && atn_interventions_masks_some_layers(iv, c->n_layers)) {
        run->mask_layers = malloc((size_t)c->n_layers);
        if (!run->mask_layers)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        for (int32_t l = 0; l < c->n_layers; l++)
            run->mask_layers[l] = iv->mask_layers[l] != 0;
    }
    return rotary_knobs(run, iv, err);
}

/* Checks the encoding fits the model before any memory is touched. */
static atn_status check_input(const atn_model *m, const atn_encoding *enc, atn_error *err) {
    const atn_config *c = &m->cfg;
    if (!enc || enc->n <= 0)
        return atn_error_set(err, ATN_E_INVALID, "empty input: no tokens to run");
    if (!c->use_embeddings) {
        if (enc->n != m->toy_n)
            return atn_error_set(err, ATN_E_INVALID, "toy model \"%s\" has %d tokens, the input has %d", m->name,
                                 m->toy_n, enc->n);
    } else {
        int32_t most = atn_family_max_tokens(m->family, c);   /* RoBERTa: max_positions - padding_idx - 1 */
        if (enc->n > most)
            return atn_error_set(err, ATN_E_INVALID, "%d tokens, but model \"%s\" allows at most %d positions",
                                 enc->n, m->name, most);
        for (int32_t i = 0; i < enc->n; i++) {
            if (enc->ids[i] < 0 || enc->ids[i] >= c->vocab_size)
                return atn_error_set(err, ATN_E_INVALID, "token id %d at position %d is outside the vocabulary "
                                     "(0..%d)", enc->ids[i], i, c->vocab_size - 1);
            /* a family without token types (DistilBERT) reads none */
            if (enc->type_ids[i] < 0 || (atn_model_reads_types(m, m->family->token_types) && enc->type_ids[i] >= c->type_vocab_size))
                return atn_type_id_error(m, enc->type_ids[i], i, err);
        }
    }
    bool any = false;
    for (int32_t i = 0; i < enc->n; i++)
        any |= enc->mask[i] != 0;
    if (!any)
        return atn_error_set(err, ATN_E_INVALID, "every token is masked: attention has nothing to attend to");
    return ATN_OK;
}

static atn_status forward_impl(atn_run *run, const atn_encoding *enc, const atn_run_options *opts_in,
                               const atn_capture *base, int32_t start, atn_error *err);

/* engine/forward/run.h: the checks and inputs of atn_run_forward, for the stacked forward */
atn_status atn_run_check(const atn_model *m, const atn_encoding *enc, const atn_interventions *iv, atn_error *err) {
    atn_status st = check_input(m, enc, err);
    if (st == ATN_OK && iv)
        st = atn_interventions_check(iv, m->cfg.n_layers, m->cfg.n_heads, enc->n, err);
    return st;
}

void atn_run_inputs(const atn_model *m, const atn_encoding *enc, const atn_interventions *iv, int32_t *pos_ids,
                    float *mask_add) {
    atn_family_position_ids(m->family, &m->cfg, enc, pos_ids);
    atn_interventions_shuffle_positions(pos_ids, enc, iv);
    build_mask(mask_add, enc, m->family->causal, m->rotary.window, 0, m->family->disentangled, iv);   /* batch.c: no ModernBERT */
}

atn_status atn_run_forward(atn_run *run, const atn_encoding *enc, const atn_run_options *opts_in,
                           atn_error *err) {
    return forward_impl(run, enc, opts_in, NULL, 0, err);
}

atn_status atn_run_forward_from(atn_run *run, const atn_encoding *enc, const atn_run_options *opts,
                                const atn_capture *base, int32_t start_layer, atn_error *err) {
    const atn_config *c = &run->model->cfg;
    if (!base || start_layer < 0 || start_layer > c->n_layers || base->n != (enc ? enc->n : -1) ||
        base->n_layers != c->n_layers || base->d_model != c->d_model)
        return atn_error_set(err, ATN_E_INVALID, "forward from layer %d: no base capture of this model and input",
                             start_layer);
    return forward_impl(run, enc, opts, base, start_layer, err);
}

static atn_status forward_impl(atn_run *run, const atn_encoding *enc, const atn_run_options *opts_in,
                               const atn_capture *base, int32_t start, atn_error *err) {
    atn_run_options dflt;
    if (!opts_in) {
        atn_run_options_init(&dflt);
        opts_in = &dflt;
    }
    /* the options as run: on-demand heads keep the trace inputs and one layer's attention */
    atn_run_options eff = *opts_in;
    if (eff.attention_on_demand) {
        if (eff.device == ATN_DEVICE_CUDA)
            return atn_error_set(err, ATN_E_UNSUPPORTED, "heads on demand are made on the CPU: run it with "
                                 "device cpu (or auto)");
        eff.device = ATN_DEVICE_CPU;
        eff.keep_attention = false;
        eff.keep_trace_inputs = true;
    }
    const atn_run_options *o = &eff;
    const atn_model *m = run->model;
    const atn_config *c = &m->cfg;
    /* statistics from the heads as they are made (head_sink): the CPU's walk without the
       capture; where that cannot be (a GPU, the three stacks) the capture keeps the attention
       and the sink is not called (attnscope.h) */
    if (eff.head_sink && !eff.keep_attention && !eff.attention_on_demand) {
        atn_error no_gpu = {0};
        if (eff.device == ATN_DEVICE_CUDA || m->family->encdec ||
            (eff.device == ATN_DEVICE_AUTO && atn_backend_cuda(&no_gpu))) {
            eff.head_sink = NULL;
            eff.keep_attention = true;
        } else {
            eff.device = ATN_DEVICE_CPU;
        }
    } else {
        eff.head_sink = NULL;
    }
    atn_error_clear(&run->fallback);
    atn_status st = check_input(m, enc, err);
    if (st)
        return st;
    if (o->precision != ATN_PRECISION_FP32 && o->precision != ATN_PRECISION_FP16 &&
        o->precision != ATN_PRECISION_BF16)
        return atn_error_set(err, ATN_E_INVALID, "precision %d is not fp32, fp16 or bf16", (int)o->precision);
    if (m->family->encdec && (o->interventions || o->attention_on_demand || o->device == ATN_DEVICE_CUDA ||
                              o->stats_rows))
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s models run on the CPU without what-if changes, heads on "
                             "demand or streamed statistics yet", m->family->name);
    if (o->precision != ATN_PRECISION_FP32 && (m->rotary.on || m->family->alibi || m->deberta.on || m->family->encdec))
        return atn_error_set(err, ATN_E_UNSUPPORTED, "reduced precision is not available for %s models yet "
                             "(rotary positions, grouped K/V heads, ALiBi, disentangled attention): run them in fp32", m->family->name);
    int32_t n = enc->n;

    run_layout lay;
    /* the bound: the caller's, else physical memory, the memory cgroup and RLIMIT_AS
       (memlimit.h): a cgroup kills without a message and OpenBLAS cannot fail cleanly, so a
       run that would not fit is refused here, before anything is allocated */
    atn_memlimit ml = {o->memory_limit, ATN_MEMLIMIT_PHYSICAL, 0, 0};
    if (!o->memory_limit)
        atn_memlimit_probe(NULL, NULL, &ml);
    size_t limit = ml.bytes;
    char source[160] = "", because[200] = "";
    atn_memlimit_describe(&ml, source, sizeof source);
    if (source[0])
        snprintf(because, sizeof because, " by %s", source);
    size_t need = atn_run_bytes_needed(c, n, o), lazy_tried = 0;
    /* the CPU's first run packs the weights (fp32) or rounds a copy of them (bf16, fp16) */
    size_t pack_cpu = o->precision != ATN_PRECISION_FP32 ? atn_rounded_pending_bytes(m, o->precision)
                                                          : atn_cpu_pack_pending_bytes(m);
    size_t pack_now = o->device == ATN_DEVICE_CUDA ? 0 : pack_cpu;
    if ((need > limit || pack_now > limit - need) && o->keep_attention && o->on_demand_over_budget &&
        o->device != ATN_DEVICE_CUDA && !m->family->encdec) {   /* no heads on demand for the three stacks yet */
        /* the full capture (with the packed weights) does not fit: keep Q, K, V and make heads
           on demand, if that fits with them */
        atn_run_options lazy = eff;
        lazy.attention_on_demand = true;
        lazy.keep_attention = false;
        lazy.keep_trace_inputs = true;
        lazy.device = ATN_DEVICE_CPU;
        size_t lazy_need = atn_run_bytes_needed(c, n, &lazy);
        if (lazy_need <= limit && pack_cpu <= limit - lazy_need) {
            eff = lazy;
            need = lazy_need;
        } else {
            lazy_tried = lazy_need;
        }
    }
    /* ModernBERT's and Gemma's second [n][n] mask (the global layers'), which the public count
       leaves out */
    if (atn_rotary_has_local(&m->rotary) && need != SIZE_MAX)
        need += (size_t)n * n * sizeof(float);
    size_t pack = o->device == ATN_DEVICE_CUDA ? 0 : pack_cpu;
    if (!layout_for(c, n, o, atn_rotary_has_local(&m->rotary), &lay) || need > limit) {
        char a[32], b[32], od[80] = "";
        format_bytes(a, sizeof a, (double)need);
        format_bytes(b, sizeof b, (double)limit);
        if (lazy_tried) {   /* heads on demand were tried: say what they need too */
            char l[32];
            format_bytes(l, sizeof l, (double)lazy_tried);
            snprintf(od, sizeof od, " or %s with heads made on demand", lazy_tried == SIZE_MAX ? "too much" : l);
        }
        return atn_error_set(err, ATN_E_NOMEM, "a run of %d tokens through %d layers x %d heads needs %s of "
                             "memory (attention alone: %d x %d x %d x %d floats)%s, more than the %s allowed%s",
                             n, c->n_layers, c->n_heads, need == SIZE_MAX ? "too much" : a, c->n_layers,
                             c->n_heads, n, n, od, b, because);
    }
    if (pack > limit - need) {
        char a[32], b[32], p[32];
        format_bytes(a, sizeof a, (double)need);
        format_bytes(b, sizeof b, (double)limit);
        format_bytes(p, sizeof p, (double)pack);
        return atn_error_set(err, ATN_E_NOMEM, "a run of %d tokens through %d layers x %d heads needs %s of "
                             "memory and the first run %s more for the CPU's packed or rounded copy of the weights, more "
                             "than the %s allowed%s", n, c->n_layers, c->n_heads, a, p, b, because);
    }
    size_t floats = need / sizeof(float);
    const atn_backend *pin = run->pin_failed ? NULL : pinning_backend(o);
    if (floats > run->block_floats || (pin != NULL) != (run->block_owner != NULL)) {
        free_block(run);
        if (pin) {
            run->block = pin->host_alloc(floats * sizeof(float));
            run->block_owner = run->block ? pin : NULL;
            run->pin_failed = !run->block;
        }
        if (!run->block)
            run->block = atn_alloc_big(floats * sizeof(float));
        run->block_floats = run->block ? floats : 0;
        if (!run->block) {
            run->enc = (atn_encoding_free(run->enc), NULL);
            return atn_error_set(err, ATN_E_NOMEM, "out of memory allocating %zu bytes for %d tokens", need, n);
        }
    }
    st = copy_encoding(&run->enc, enc, err);
    if (st)
        return st;
    const atn_interventions *iv = o->interventions;
    st = set_interventions(run, iv, err);
    run->act.encdec = NULL;
    if (st == ATN_OK && m->family->encdec && (st = setup_decoder(run, o, n, need, limit, err)) == ATN_OK)
        run->act.encdec = &run->ed;
    if (st) {
        run->enc = (atn_encoding_free(run->enc), NULL);
        return st;
    }

    atn_activations *a = &run->act;
    float *p = run->block;
    a->n = n;
    a->hidden = p, p += lay.hidden;
    a->q = p, p += lay.trace;
    a->k = p, p += lay.trace;
    a->v = p, p += lay.trace;
    a->ctx = p, p += lay.trace;
    a->attn_out = p, p += lay.trace;
    a->attn = p, p += lay.attn;
    a->h1 = p, p += lay.h1;
    a->ffn = p, p += lay.ffn;
    a->mask_add = p, p += (size_t)n * n;
    a->mask_base = run->mask_layers ? p : NULL;   /* the second mask (layout_for) */
    a->mask_layers = run->mask_layers;
    p += lay.mask - (size_t)n * n;
    a->pos_ids = (int32_t *)p, p += lay.pos;
    a->precision = o->precision == ATN_PRECISION_FP16 || o->precision == ATN_PRECISION_BF16 ? o->precision
                                                                                          : ATN_PRECISION_FP32;
    a->round_buf = lay.round ? p : NULL;
    free(run->overflow), run->overflow = NULL;
    if (a->precision == ATN_PRECISION_FP16) {
        run->overflow = calloc((size_t)(c->n_layers + 1) * ATN_OPERAND_COUNT, sizeof(int64_t));
        if (!run->overflow) {
            run->enc = (atn_encoding_free(run->enc), NULL);
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        }
    }
    a->overflow = run->overflow;
    a->trace_stride = o->keep_trace_inputs ? (size_t)n * c->d_model : 0;
    a->attn_stride = o->keep_attention ? (size_t)c->n_heads * n * n : 0;
    a->attn_one_head = o->attention_on_demand || o->head_sink;   /* head_sink: streamed, no capture (above) */
    a->nonfinite_layer = -1;
    /* the inputs every backend reads, decided here once: the family's position ids and the
       additive mask (the trace reads the same mask through the capture) */
    atn_family_position_ids(m->family, c, run->enc, a->pos_ids);
    atn_interventions_shuffle_positions(a->pos_ids, run->enc, iv);
    /* a model with local layers: mask_add is theirs (Gemma's causal window, ModernBERT's
       |i - j| window), mask_base the global layers' */
    int32_t window = run->slide_w > 0 ? run->slide_w : m->rotary.window > 0 ? m->rotary.window : m->rotary.local_window;
    build_mask(a->mask_add, run->enc, m->family->causal, window, m->rotary.local_half, m->family->disentangled, iv);
    a->mask_form = mask_form_of(a->mask_add, n);
    if (a->mask_base)   /* the layers the what-if masks skip (ModernBERT, Gemma: the global layers;
                           the layers whose window the what-if sliding knob turned off) */
        build_mask(a->mask_base, run->enc, m->family->causal, run->base_unwindowed ? 0 : m->rotary.window, 0,
                   m->family->disentangled, NULL);
    a->alibi_slopes = (iv && iv->alibi) || m->family->alibi ? run->slopes : NULL;
    a->temperature = iv && iv->temperature > 0.0f ? iv->temperature : 1.0f;
    a->heads_off = iv && iv->heads_off ? run->heads_off : NULL;
    a->head_mode = iv ? iv->head_mode : ATN_HEAD_ZERO;
    a->no_positions = iv && iv->no_positions && c->use_embeddings;
    a->inv_freq = run->rope;
    a->inv_freq_local = run->rope && m->rotary.inv_freq_local ? run->rope + c->d_head / 2 : NULL;
    a->start_layer = start;
    if (start > 0)   /* the layers below start are the base capture's (the caller's promise) */
        memmove(a->hidden, base->hidden, (size_t)(start + 1) * n * c->d_model * sizeof(float));

    /* the weights are read from the file's mapping: a file changed since the open is refused
       before the forward, and one that shrank during it (the SIGBUS guard read zeros) after */
    st = atn_model_check_files(m, err);
    if (st == ATN_OK && o->head_sink && o->head_sink->begin)
        st = o->head_sink->begin(o->head_sink->user, run->enc, err);
    if (st == ATN_OK)
        st = atn_backend_forward(m, run->enc, a, o, &run->used, &run->fallback, err);
    if (st == ATN_OK)
        st = atn_model_check_files(m, err);
    atn_capture *cap = &run->cap;
    memset(cap, 0, sizeof *cap);
    if (st) {
        run->enc = (atn_encoding_free(run->enc), NULL);
        atn_error_clear(&run->fallback);
        return st;
    }
    cap->n_layers = c->n_layers;
    cap->n_heads = c->n_heads;
    cap->n = n;
    cap->d_model = c->d_model;
    cap->d_head = c->d_head;
    cap->n_kv_heads = c->n_kv_heads > 0 ? c->n_kv_heads : c->n_heads;
    cap->d_q = c->n_heads * c->d_head;
    cap->d_kv = cap->n_kv_heads * c->d_head;
    cap->enc = run->enc;
    cap->attn = o->keep_attention ? a->attn : NULL;
    cap->attn_on_demand = o->attention_on_demand;
    cap->run = run;
    cap->hidden = a->hidden;
    cap->mask_add = a->mask_add;
    cap->mask_base = a->mask_base;
    cap->mask_layers = a->mask_base ? a->mask_layers : NULL;
    cap->alibi_slopes = a->alibi_slopes;
    cap->temperature = a->temperature;
    cap->heads_off = a->heads_off;
    cap->head_mode = a->head_mode;
    cap->pos_ids = c->use_embeddings ? a->pos_ids : NULL;
    cap->no_positions = a->no_positions;
    cap->inv_freq = a->inv_freq;
    cap->inv_freq_local = a->inv_freq_local;
    cap->has_trace_inputs = o->keep_trace_inputs;
    if (o->keep_trace_inputs) {
        cap->q = a->q;
        cap->k = a->k;
        cap->v = a->v;
        cap->ctx = a->ctx;
        cap->attn_out = a->attn_out;
    }
    cap->nonfinite_layer = a->nonfinite_layer;
    cap->precision = a->precision;
    if (a->encdec) {   /* the three stacks: encoder self, decoder self, cross */
        const atn_encdec_acts *e = a->encdec;
        int32_t t = e->n_tgt, Ld = m->encdec.n_dec_layers, H = c->n_heads;
        run->stacks[0] = (atn_stack){ATN_STACK_ENCODER, "encoder", c->n_layers, H, n, n, cap->attn, run->enc->ids,
                                     run->enc->ids};
        run->stacks[1] = (atn_stack){ATN_STACK_DECODER, "decoder", Ld, H, t, t, e->attn_self, e->ids, e->ids};
        run->stacks[2] = (atn_stack){ATN_STACK_CROSS, "cross", Ld, H, t, n, e->attn_cross, e->ids, run->enc->ids};
        cap->n_stacks = 3;
        cap->stacks = run->stacks;
        cap->n_dec_layers = Ld;
        cap->n_tgt = t;
        cap->target_ids = e->ids;
        cap->dec_hidden = e->hidden;
        cap->dec_mask = e->mask_self;
        cap->cross_mask = e->mask_cross;
        if (e->keep) {   /* the decoder's trace inputs, every layer's */
            cap->dec_q = e->q, cap->dec_k = e->k, cap->dec_v = e->v, cap->dec_ctx = e->ctx;
            cap->cross_q = e->cq, cap->cross_k = e->ck, cap->cross_v = e->cv, cap->cross_ctx = e->cctx;
        }
    }
    if (run->overflow && run->used == ATN_DEVICE_CPU) {
        cap->fp16_overflow = run->overflow;
        for (size_t i = 0; i < (size_t)(c->n_layers + 1) * ATN_OPERAND_COUNT; i++)
            cap->fp16_overflow_total += run->overflow[i];
    }
    return ATN_OK;
}

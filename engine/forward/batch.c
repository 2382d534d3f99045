/* Several sequences per forward (attnscope.h, atn_batch_*): the corpus pass's way to run
 * short sentences near the GEMM rate of long ones.
 *
 * Every product of the encoder (Q, K, V, W_O, the FFN) maps token rows to token rows, so the
 * rows of consecutive sequences are stacked, M = sum of their lengths, and each product runs
 * once over all of them: the packed weights are streamed once per stack instead of once per
 * sentence (at 8-40 tokens that streaming is most of a forward; docs/PERFORMANCE.md).  No
 * padding: attention stays per sequence and head, an n_s x n_s block with the sequence's own
 * mask and position ids.
 *
 * Identical results, bit for bit: the AVX-512 product (cpu-kernels.c, atn_gemm_packed)
 * computes each output row with the same fused multiply-adds in the same order whatever the
 * number of rows (the bias is the accumulators' start, the depth blocks depend on the input
 * width only, a row's accumulators never meet another row's), LayerNorm and the embeddings
 * are per row, and attention runs the same kernel on the same n_s x n_s block.  So the
 * stacked forward is the one layer walk (engine/forward/layer.c) with the packed ops over
 * M rows.
 *
 * The cblas path (CPUs without AVX-512, per-head interventions) is not exact that way:
 * OpenBLAS's sgemm gives a row different last bits depending on how many rows the product
 * has (its kernels for the row tail add in another order; measured with Debian's OpenBLAS
 * 0.3.21, Zen kernel: a row alone and the same row inside a taller product differ for most
 * heights).  So there the batch stacks only when asked to (atn_batch_set_exact false:
 * results within ~1e-7 of one at a time, relative); by default, and for toy models and the
 * GPU, it runs one atn_run_forward per sequence. */
#include "attnscope.h"
#include "forward/backend.h"
#include "forward/batch.h"
#include "forward/run.h"
#include "forward/cpu-kernels.h"
#include "forward/encoder.h"
#include "forward/layer.h"
#include "core/family.h"
#include "whatif/interventions.h"
#include "core/memlimit.h"
#include "core/model-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct atn_batch {
    const atn_model *model;
    int32_t rows;           /* token rows per stack; 1: one sequence per forward */
    bool exact;             /* stack only where the bits are those of one at a time */
    atn_run *single;        /* for what is not stacked */
    float *block;           /* the stack's activations */
    size_t block_floats;    /* capacity: grows, never shrinks */
    int64_t stacked, alone; /* forwards of the last atn_batch_forward */
    float *slopes;          /* [H] ALiBi's, when the interventions have it */
    uint8_t *gate;          /* [L][H] 0/1 heads off, when any is */
};

atn_batch *atn_batch_new(const atn_model *model) {
    if (!model)
        return NULL;
    atn_batch *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->model = model;
    b->rows = ATN_BATCH_ROWS;
    b->exact = true;
    b->single = atn_run_new(model);
    if (!b->single) {
        free(b);
        return NULL;
    }
    return b;
}

void atn_batch_free(atn_batch *b) {
    if (!b)
        return;
    atn_run_free(b->single);
    free(b->block);
    free(b->slopes);
    free(b->gate);
    free(b);
}

void atn_batch_set_rows(atn_batch *b, int32_t rows) {
    if (b)
        b->rows = rows < 1 ? ATN_BATCH_ROWS : rows;
}

void atn_batch_set_exact(atn_batch *b, bool exact) {
    if (b)
        b->exact = exact;
}

void atn_batch_counts(const atn_batch *b, int64_t *stacked, int64_t *single) {
    if (stacked)
        *stacked = b ? b->stacked : 0;
    if (single)
        *single = b ? b->alone : 0;
}

/* How a stack runs: not at all (one atn_run_forward per sequence), on the CPU's fast path
 * (AVX-512 kernels, no per-head intervention) or on its cblas path (everything else the CPU
 * runs but toy models), as atn_cpu_forward would run each sequence. */
typedef enum stack_mode { STACK_NONE, STACK_FAST, STACK_BLAS } stack_mode;

static bool gated(const atn_model *m, const atn_interventions *iv) {
    if (!iv)
        return false;
    if (iv->alibi || (iv->no_positions && m->cfg.use_embeddings) || (iv->temperature > 0.0f && iv->temperature != 1.0f))
        return true;
    size_t lh = (size_t)m->cfg.n_layers * m->cfg.n_heads;
    for (size_t i = 0; iv->heads_off && i < lh; i++)
        if (iv->heads_off[i])
            return true;
    return false;
}

static stack_mode stack_mode_for(const atn_model *m, const atn_run_options *o, bool exact) {
    if (o->device == ATN_DEVICE_CUDA || o->precision != ATN_PRECISION_FP32 || m->kind == ATN_MODEL_TOY ||
        !m->cfg.use_embeddings || m->rotary.on || m->family->alibi || m->deberta.on ||
        m->family->encdec)   /* rotary and ALiBi decoders, DeBERTa, encoder-decoders: one
                                                  atn_run_forward each */
        return STACK_NONE;
    if (o->device == ATN_DEVICE_AUTO) {   /* AUTO runs the GPU when there is one */
        atn_error e = {0};
        if (atn_backend_cuda(&e))
            return STACK_NONE;
    }
    if (atn_interventions_masks_some_layers(o->interventions, m->cfg.n_layers))
        return STACK_NONE;   /* a mask per layer: one atn_run_forward per sequence */
    if (atn_cpu_fast_applies(m) && !gated(m, o->interventions))
        return STACK_FAST;
    return exact ? STACK_NONE : STACK_BLAS;
}

/* ---- the stacked forward ------------------------------------------------------- */

/* What a stack keeps beside the walk's sequences (engine/forward/layer.h, atn_walk_seq). */
typedef struct seq_view {
    const atn_encoding *enc;
    float *mask;          /* [n][n] */
    int32_t *pos;         /* [n] */
} seq_view;

/* Floats of a stack of count sequences of M rows in all, S2 = sum of n^2, the longest nmax:
 * the activations, then the staging of one sequence's capture. */
typedef struct stack_layout {
    size_t hidden, trace, attn, h1, ffn, mask, pos, stage_hidden, stage_trace;
} stack_layout;

static size_t stack_floats(const atn_config *c, const atn_run_options *o, int32_t M, size_t S2, int32_t nmax,
                           stack_layout *lay) {
    size_t L = (size_t)c->n_layers, d = (size_t)c->d_model, H = (size_t)c->n_heads;
    size_t ffn_w = (size_t)c->d_ffn;
    if (atn_d_embed(c) != c->d_model && (size_t)atn_d_embed(c) > ffn_w)
        ffn_w = (size_t)atn_d_embed(c);
    lay->hidden = (L + 1) * M * d;
    lay->trace = (o->keep_trace_inputs ? L : 1) * M * d;
    lay->attn = (o->keep_attention ? L : 1) * H * S2;
    lay->h1 = (size_t)M * d;
    lay->ffn = (size_t)M * ffn_w;
    lay->mask = S2;
    lay->pos = (size_t)M;
    lay->stage_hidden = (L + 1) * nmax * d;
    lay->stage_trace = o->keep_trace_inputs ? L * nmax * d : 0;
    return lay->hidden + 5 * lay->trace + lay->attn + lay->h1 + lay->ffn + lay->mask + lay->pos + lay->stage_hidden +
           5 * lay->stage_trace;
}

/* Copies rows row..row+n-1 of each of `layers` [M][d] blocks (layer stride M d, or 0: one
 * block) into dst [layers][n][d]. */
static void gather_rows(float *dst, const float *src, size_t stride, int32_t layers, int32_t M, int32_t row,
                        int32_t n, int32_t d) {
    (void)M;
    for (int32_t l = 0; l < layers; l++)
        memcpy(dst + (size_t)l * n * d, src + stride * l + (size_t)row * d, (size_t)n * d * sizeof(float));
}

/* Runs encs[0..count) (count >= 2, all checked) as one stack and hands each capture on. */
/* gates (NULL: the interventions' own): per sequence [L][H] heads off, or NULL; start > 0:
 * hidden[0..start] of every sequence are base's (the same input), layers start.. run. */
static atn_status run_stack(atn_batch *b, stack_mode mode, atn_encoding *const *encs, int32_t first, int32_t count,
                            const atn_run_options *o, const stack_layout *lay, int32_t M, size_t S2, int32_t nmax,
                            const uint8_t *const *gates, int32_t start, const atn_capture *base, int32_t index0,
                            atn_batch_fn each, void *user, int32_t *failed, atn_error *err) {
    const atn_model *m = b->model;
    const atn_config *c = &m->cfg;
    int32_t L = c->n_layers, H = c->n_heads, d = c->d_model, kd = d / H;
    const atn_interventions *iv = o->interventions;
    int nt = mode == STACK_FAST ? atn_cpu_walk_threads(m, M, S2, o) : 1;
    size_t per_thread = mode == STACK_FAST ? (atn_attention_scratch_floats(nmax, kd) + 15) / 16 * 16 : 16;
    seq_view *view = calloc((size_t)count, sizeof *view);
    atn_walk_seq *seq = calloc((size_t)count, sizeof *seq);
    double *cost = malloc(((size_t)count * H + 1) * sizeof *cost);
    float *scratch = aligned_alloc(64, (size_t)nt * per_thread * sizeof(float));
    atn_status st = ATN_OK;
    if (!view || !seq || !cost || !scratch) {
        st = atn_error_set(err, ATN_E_NOMEM, "out of memory for a stack of %d sequences", count);
        goto done;
    }
    float *p = b->block;
    atn_walk j = {.m = m, .opts = o, .seq = seq, .count = count, .M = M, .layers = m->w.layers,
                 .final_g = m->w.final_ln_g, .final_b = m->w.final_ln_b};
    atn_layer_desc_of(m, &j.desc);
    j.hidden = p, p += lay->hidden;
    j.q = p, p += lay->trace;
    j.k = p, p += lay->trace;
    j.v = p, p += lay->trace;
    j.ctx = p, p += lay->trace;
    j.ao = p, p += lay->trace;
    float *attn = p;
    p += lay->attn;
    j.h1 = p, p += lay->h1;
    j.ffn = p, p += lay->ffn;
    float *mask = p;
    p += lay->mask;
    int32_t *pos = (int32_t *)p;
    p += lay->pos;
    float *stage_hidden = p;
    p += lay->stage_hidden;
    float *stage_trace = p;
    j.trace_stride = o->keep_trace_inputs ? (size_t)M * d : 0;
    j.scratch = scratch, j.scratch_floats = per_thread;
    j.cost = cost;
    /* the interventions as engine/forward/run.c gives them to a run (the reference ops) */
    j.slopes = iv && iv->alibi ? b->slopes : NULL;
    j.temperature = iv && iv->temperature > 0.0f ? iv->temperature : 1.0f;
    j.head_mode = iv ? iv->head_mode : ATN_HEAD_ZERO;
    bool no_positions = iv && iv->no_positions && c->use_embeddings;
    j.gated = j.slopes || j.temperature != 1.0f || no_positions || start > 0;
    j.start = start;
    size_t at_attn = 0, at_mask = 0;
    int32_t row = 0;
    cost[0] = 0;
    for (int32_t s = 0; s < count; s++) {
        seq_view *v = &view[s];
        atn_walk_seq *w = &seq[s];
        const atn_encoding *e = encs[first + s];
        int32_t n = e->n;
        size_t nn = (size_t)n * n;
        v->enc = e, w->n = n, w->row = row;
        w->attn = attn + at_attn;
        w->attn_stride = o->keep_attention ? (size_t)H * nn : 0;
        v->mask = mask + at_mask;
        w->mask = v->mask;
        v->pos = pos + row;
        w->heads_off = gates ? gates[s] : iv && iv->heads_off ? b->gate : NULL;
        at_attn += (o->keep_attention ? (size_t)L : 1) * H * nn;
        at_mask += nn;
        atn_run_inputs(m, e, iv, v->pos, v->mask);
        /* the embeddings; scratch for the E-wide rows as atn_cpu_forward gives it; or the
           base's hidden states up to start */
        if (start > 0)
            for (int32_t l = 0; l <= start; l++)
                memcpy(j.hidden + ((size_t)l * M + row) * d, base->hidden + (size_t)l * n * d,
                       (size_t)n * d * sizeof(float));
        else
            atn_cpu_embeddings(j.hidden + (size_t)row * d, atn_d_embed(c) == d ? j.h1 : j.ffn, m, e, v->pos,
                               no_positions);
        /* as atn_cpu_forward: the first hidden state's NaN or infinity is layer 0's */
        w->nonfinite_layer = -1;
        for (size_t i = 0, nd = (size_t)n * d; i < nd && w->nonfinite_layer < 0; i++)
            if (!isfinite(j.hidden[(size_t)row * d + i]))
                w->nonfinite_layer = 0;
        for (int32_t h = 0; h < H; h++)
            cost[(size_t)s * H + h + 1] = cost[(size_t)s * H + h] + (double)n * (n + 6);
        row += n;
    }
    st = atn_model_check_files(m, err);
    if (st == ATN_OK) {
        if (mode == STACK_FAST)
            st = atn_cpu_walk_packed(&j, nt, err);
        else {
            j.ops = &atn_ops_ref;
            atn_layer_walk(&j, 0, 1);
        }
    }
    if (st == ATN_OK && j.stop)
        st = atn_error_set(err, ATN_E_CANCELLED, "cancelled at layer %d", j.stop_layer);
    if (st == ATN_OK)
        st = atn_model_check_files(m, err);
    if (st == ATN_OK && o->progress)
        o->progress(1.0, ATN_STAGE_DONE, o->user_data);
    if (st) {
        if (failed)
            *failed = index0;
        goto done;
    }
    b->stacked++;
    for (int32_t s = 0; s < count && st == ATN_OK; s++) {
        const seq_view *v = &view[s];
        const atn_walk_seq *w = &seq[s];
        int32_t n = w->n;
        size_t nd = (size_t)n * d;
        gather_rows(stage_hidden, j.hidden, (size_t)M * d, L + 1, M, w->row, n, d);
        atn_capture cap;
        memset(&cap, 0, sizeof cap);
        cap.n_layers = L, cap.n_heads = H, cap.n = n, cap.d_model = d, cap.d_head = c->d_head;
        cap.enc = v->enc;
        cap.attn = o->keep_attention ? w->attn : NULL;
        cap.hidden = stage_hidden;
        cap.mask_add = v->mask;
        cap.alibi_slopes = j.slopes;
        cap.temperature = j.temperature;
        cap.heads_off = w->heads_off;
        cap.head_mode = j.head_mode;
        cap.no_positions = no_positions;
        cap.pos_ids = v->pos;
        cap.has_trace_inputs = o->keep_trace_inputs;
        if (o->keep_trace_inputs) {
            const float *src[5] = {j.q, j.k, j.v, j.ctx, j.ao};
            const float **dst[5] = {&cap.q, &cap.k, &cap.v, &cap.ctx, &cap.attn_out};
            for (int t = 0; t < 5; t++) {
                float *to = stage_trace + (size_t)t * L * nd;
                gather_rows(to, src[t], j.trace_stride, L, M, w->row, n, d);
                *dst[t] = to;
            }
        }
        cap.nonfinite_layer = w->nonfinite_layer;
        st = each(index0 + s, &cap, user, err);
        if (st && failed)
            *failed = index0 + s;
    }
done:
    free(view);
    free(seq);
    free(cost);
    free(scratch);
    return st;
}

static atn_status run_alone(atn_batch *b, atn_encoding *const *encs, int32_t i, const atn_run_options *o,
                            atn_batch_fn each, void *user, int32_t *failed, atn_error *err) {
    atn_status st = atn_run_forward(b->single, encs[i], o, err);
    if (st == ATN_OK) {
        b->alone++;
        st = each(i, atn_run_capture(b->single), user, err);
    }
    if (st && failed)
        *failed = i;
    return st;
}

atn_status atn_batch_forward(atn_batch *b, atn_encoding *const *encs, int32_t count, const atn_run_options *opts,
                             atn_batch_fn each, void *user, int32_t *failed, atn_error *err) {
    if (failed)
        *failed = -1;
    if (!b || (count > 0 && !encs) || !each || count < 0)
        return atn_error_set(err, ATN_E_INVALID, "batch forward: NULL batch, sequences or callback");
    b->stacked = b->alone = 0;
    atn_run_options dflt;
    if (!opts) {
        atn_run_options_init(&dflt);
        opts = &dflt;
    }
    /* a stack keeps its attention and calls no head sink (attnscope.h): its sequences are
       short (ATN_BATCH_ROWS rows in all), the long ones run alone with the sink */
    atn_run_options in_stack = *opts;
    if (in_stack.head_sink) {
        in_stack.head_sink = NULL;
        in_stack.keep_attention = true;
    }
    const atn_model *m = b->model;
    const atn_config *c = &m->cfg;
    stack_mode mode = b->rows > 1 ? stack_mode_for(m, opts, b->exact) : STACK_NONE;
    bool stack = mode != STACK_NONE;
    size_t limit = 0;
    const atn_interventions *iv = opts->interventions;
    free(b->slopes), b->slopes = NULL;
    free(b->gate), b->gate = NULL;
    if (stack && iv) {   /* as engine/forward/run.c's set_interventions keeps them */
        size_t lh = (size_t)c->n_layers * c->n_heads;
        bool any = false;
        for (size_t i = 0; iv->heads_off && i < lh; i++)
            any |= iv->heads_off[i] != 0;
        b->slopes = iv->alibi ? malloc((size_t)c->n_heads * sizeof(float)) : NULL;
        b->gate = any ? malloc(lh) : NULL;
        if ((iv->alibi && !b->slopes) || (any && !b->gate))
            stack = false;
        if (b->slopes)
            atn_alibi_slopes(c->n_heads, b->slopes);
        for (size_t i = 0; b->gate && i < lh; i++)
            b->gate[i] = iv->heads_off[i] != 0;
    }
    if (stack) {
        atn_memlimit ml = {opts->memory_limit, ATN_MEMLIMIT_PHYSICAL, 0, 0};
        if (!opts->memory_limit)
            atn_memlimit_probe(NULL, NULL, &ml);
        size_t pack = atn_cpu_pack_pending_bytes(m);
        limit = ml.bytes > pack ? ml.bytes - pack : 0;
    }
    atn_status st = ATN_OK;
    for (int32_t i = 0; i < count && st == ATN_OK;) {
        /* consecutive sequences that pass atn_run_forward's checks, up to b->rows rows */
        int32_t e = i, M = 0, nmax = 0;
        size_t S2 = 0;
        atn_error ignore = {0};
        /* stacks of about equal rows: the remaining rows over as many stacks as they need */
        int64_t left = 0;
        for (int32_t s = i; stack && s < count; s++)
            left += encs[s] ? encs[s]->n : 0;
        int64_t stacks = (left + b->rows - 1) / b->rows, target = stacks > 0 ? (left + stacks - 1) / stacks : 0;
        while (stack && e < count && M < target && encs[e] && encs[e]->n > 0 && M + encs[e]->n <= b->rows &&
               atn_run_check(m, encs[e], opts->interventions, &ignore) == ATN_OK) {
            M += encs[e]->n;
            S2 += (size_t)encs[e]->n * encs[e]->n;
            nmax = encs[e]->n > nmax ? encs[e]->n : nmax;
            e++;
        }
        stack_layout lay = {0};
        size_t floats = 0;
        while (e - i >= 2) {   /* within the memory limit, or fewer sequences */
            floats = stack_floats(c, &in_stack, M, S2, nmax, &lay);
            if (floats * sizeof(float) <= limit)
                break;
            e--;
            M -= encs[e]->n;
            S2 -= (size_t)encs[e]->n * encs[e]->n;
            nmax = 0;
            for (int32_t s = i; s < e; s++)
                nmax = encs[s]->n > nmax ? encs[s]->n : nmax;
        }
        if (e - i < 2) {
            st = run_alone(b, encs, i, opts, each, user, failed, err);
            i++;
            continue;
        }
        if (floats > b->block_floats) {
            free(b->block);
            b->block = atn_alloc_big(floats * sizeof(float));
            b->block_floats = b->block ? floats : 0;
            if (!b->block) {   /* as a run of the first sequence would say, were it alone */
                st = run_alone(b, encs, i, opts, each, user, failed, err);
                i++;
                continue;
            }
        }
        st = run_stack(b, mode, encs, i, e - i, &in_stack, &lay, M, S2, nmax, NULL, 0, NULL, i, each, user, failed,
                       err);
        i = e;
    }
    return st;
}

/* ---- ablations: one input, several head gates (engine/whatif/importance.c) ------------- */

static atn_status gate_alone(atn_batch *b, const atn_encoding *enc, const uint8_t *gate, atn_head_mode mode,
                             const atn_capture *base, int32_t start, const atn_run_options *opts, int32_t index,
                             atn_batch_fn each, void *user, atn_error *err) {
    atn_interventions iv;
    atn_interventions_init(&iv);
    iv.head_mode = mode;
    iv.heads_off = gate;
    atn_run_options o = *opts;
    o.interventions = &iv;
    atn_status st = start > 0 ? atn_run_forward_from(b->single, enc, &o, base, start, err)
                              : atn_run_forward(b->single, enc, &o, err);
    if (st == ATN_OK) {
        b->alone++;
        st = each(index, atn_run_capture(b->single), user, err);
    }
    return st;
}

atn_status atn_batch_forward_gates(atn_batch *b, const atn_encoding *enc, int32_t copies, const uint8_t *gates,
                                   atn_head_mode mode, const atn_capture *base, int32_t start,
                                   const atn_run_options *opts, atn_batch_fn each, void *user, atn_error *err) {
    if (!b || !enc || copies < 0 || (copies > 0 && !gates) || !each || !opts || (start > 0 && !base))
        return atn_error_set(err, ATN_E_INVALID, "batch of gates: NULL argument");
    const atn_model *m = b->model;
    const atn_config *c = &m->cfg;
    size_t lh = (size_t)c->n_layers * c->n_heads;
    b->stacked = b->alone = 0;
    atn_run_options o = *opts;
    atn_interventions iv;
    atn_interventions_init(&iv);
    iv.head_mode = mode;
    o.interventions = &iv;   /* no heads off here: the gates are per copy */
    bool stack = b->rows > 1 && !b->exact && stack_mode_for(m, &o, false) != STACK_NONE &&
                 atn_run_check(m, enc, NULL, err) == ATN_OK && enc->n <= b->rows / 2 &&
                 (start == 0 || (base->n == enc->n && base->n_layers == c->n_layers && start <= c->n_layers));
    int32_t n = enc->n, per = stack ? b->rows / n : 1;
    size_t limit = 0;
    if (stack) {
        atn_memlimit ml = {opts->memory_limit, ATN_MEMLIMIT_PHYSICAL, 0, 0};
        if (!opts->memory_limit)
            atn_memlimit_probe(NULL, NULL, &ml);
        limit = ml.bytes;
    }
    atn_encoding **same = stack ? malloc((size_t)per * sizeof *same) : NULL;
    const uint8_t **gp = stack ? malloc((size_t)per * sizeof *gp) : NULL;
    if (stack && (!same || !gp))
        stack = false;
    for (int32_t s = 0; stack && s < per; s++)
        same[s] = (atn_encoding *)enc;   /* read only: run_stack never writes its inputs */
    atn_status st = ATN_OK;
    for (int32_t i = 0; i < copies && st == ATN_OK;) {
        int32_t left = copies - i, stacks = (left + per - 1) / per, k = (left + stacks - 1) / stacks;
        stack_layout lay = {0};
        size_t floats = 0;
        while (stack && k >= 2) {
            floats = stack_floats(c, &o, k * n, (size_t)k * n * n, n, &lay);
            if (floats * sizeof(float) <= limit)
                break;
            k--;
        }
        if (!stack || k < 2) {
            st = gate_alone(b, enc, gates + (size_t)i * lh, mode, base, start, opts, i, each, user, err);
            i++;
            continue;
        }
        if (floats > b->block_floats) {
            free(b->block);
            b->block = atn_alloc_big(floats * sizeof(float));
            b->block_floats = b->block ? floats : 0;
            if (!b->block) {
                st = gate_alone(b, enc, gates + (size_t)i * lh, mode, base, start, opts, i, each, user, err);
                i++;
                continue;
            }
        }
        for (int32_t s = 0; s < k; s++)
            gp[s] = gates + (size_t)(i + s) * lh;
        st = run_stack(b, STACK_BLAS, same, 0, k, &o, &lay, k * n, (size_t)k * n * n, n, gp, start, base, i,
                       each, user, NULL, err);
        i += k;
    }
    free(same);
    free(gp);
    return st;
}

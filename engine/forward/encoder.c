/* The CPU forward pass: the embeddings, then the one layer walk (engine/forward/layer.c)
 * with one of two op sets:
 *  - the AVX-512 packed ops (engine/forward/ops-packed.c) for models whose layers have every
 *    weight, on a CPU with AVX-512 and no per-head intervention or rounding: the layer
 *    weights are packed once per model (packed_for below) and a team of threads
 *    (cpu-team.c) runs each layer together;
 *  - the reference ops (engine/forward/ops-ref.c, cblas_sgemm) for everything else (toy
 *    models, whose weights the GUI edits; other CPUs; what-if gates; reduced precision; or
 *    ATTNSCOPE_CPU_KERNELS=blas).
 * This file owns the process's CPU team and the packed weights; docs/PERFORMANCE.md has
 * the measurements behind the split. */
#include "forward/encoder.h"
#include "core/family.h"
#include "forward/cpu-kernels.h"
#include "forward/cpu-team.h"
#include "forward/layer.h"
#include "forward/precision.h"

#include "analysis.h"   /* atn_stats_rows_add: statistics fed as the heads are made */

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *atn_alloc_big(size_t bytes) {
    enum { HUGE = 2 << 20 };
    if (bytes < 2 * (size_t)HUGE)
        return malloc(bytes ? bytes : 1);
    if (bytes > SIZE_MAX - HUGE)
        return NULL;
    size_t rounded = (bytes + HUGE - 1) / HUGE * HUGE;
    void *p = aligned_alloc(HUGE, rounded);
#ifdef MADV_HUGEPAGE
    if (p)
        madvise(p, rounded, MADV_HUGEPAGE);   /* advice only: failure changes nothing */
#endif
    return p;
}

/* hidden0[n,d] = LayerNorm(word[id] + pos[pos_ids[i]] + type[t]), or the toy model's given
 * vectors.  Position ids come from the family's rule (act->pos_ids, made by engine/forward/run.c);
 * a family without token types has no type embeddings (type_emb NULL).  ALBERT and ELECTRA
 * embed at width E and project to d (emb_proj_w): the E-wide rows are built in scratch
 * (n x E floats) and hidden0 = scratch proj^T + b. */
static void embeddings_forward(float *hidden0, float *scratch, const atn_model *m, const atn_encoding *enc,
                               const int32_t *pos_ids, bool no_positions, const atn_activations *a,
                               const float *proj_w) {
    const atn_config *c = &m->cfg;
    int32_t n = enc->n, d = c->d_model, E = atn_d_embed(c);
    if (!c->use_embeddings) {
        memcpy(hidden0, m->toy_x, (size_t)n * d * sizeof(float));
        return;
    }
    const atn_weights *w = &m->w;
    float *e = w->emb_proj_w ? scratch : hidden0;
    for (int32_t i = 0; i < n; i++) {
        float *x = e + (size_t)i * E;
        const float *we = w->word_emb + (size_t)enc->ids[i] * E;
        const float *pe = w->pos_emb ? w->pos_emb + (size_t)pos_ids[i] * E : NULL;
        float s = m->family->encdec ? m->encdec.emb_scale : 1.0f;
        if (!pe && !w->type_emb && m->rotary.embed_scale > 0.0f) {   /* Gemma: times sqrt(hidden) */
            for (int32_t j = 0; j < E; j++)
                x[j] = we[j] * m->rotary.embed_scale;
        } else if (s != 1.0f) {   /* BART / Marian scale_embedding: embed_tokens(ids) * sqrt(d), then + positions */
            for (int32_t j = 0; j < E; j++)
                x[j] = we[j] * s + (pe && !no_positions ? pe[j] : 0.0f);
        } else if (!pe && !w->type_emb) {   /* rotary families: positions act on q and k instead */
            memcpy(x, we, (size_t)E * sizeof(float));
        } else if (no_positions || !pe) {   /* the what-if lab: the same sum without the position term */
            const float *te = w->type_emb ? w->type_emb + (size_t)enc->type_ids[i] * E : NULL;
            for (int32_t j = 0; j < E; j++)
                x[j] = te ? we[j] + te[j] : we[j];
        } else if (w->type_emb) {
            const float *te = w->type_emb + (size_t)enc->type_ids[i] * E;
            for (int32_t j = 0; j < E; j++)
                x[j] = we[j] + pe[j] + te[j];
        } else {
            for (int32_t j = 0; j < E; j++)
                x[j] = we[j] + pe[j];
        }
    }
    /* GPT-2 has no embedding norm (h0 = wte + wpe); BLOOM and ModernBERT have one */
    if ((!m->family->pre_ln && !(m->family->encdec && !w->emb_ln_g)) || m->family->alibi || m->family->rotary_encoder)   /* Marian: none */
        atn_layernorm(e, e, w->emb_ln_g, w->emb_ln_b, n, E, c->ln_eps);
    /* DeBERTa (DebertaV2Embeddings): embeddings * mask, a padded token's row is zero */
    if (m->family->disentangled && enc->mask)
        for (int32_t i = 0; i < n; i++)
            if (!enc->mask[i])
                memset(e + (size_t)i * E, 0, (size_t)E * sizeof(float));
    if (w->emb_proj_w)
        atn_linear(hidden0, atn_round_operand(a, e, (size_t)n * E, 0, ATN_OPERAND_INPUT), proj_w, w->emb_proj_b, n, E, d);
}

/* The what-if lab's rotary frequencies (a->inv_freq, a->inv_freq_local) into a layer
 * description made by atn_layer_desc_of, where the model has rotary positions. */
static void atn_desc_rotary_knobs(atn_layer_desc *d, const atn_activations *a) {
    if (d->inv_freq && a->inv_freq)
        d->inv_freq = a->inv_freq;
    if (d->inv_freq_local && a->inv_freq_local)
        d->inv_freq_local = a->inv_freq_local;
}

static bool all_finite(const float *x, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

/* ---- the CPU team and the packed weights ------------------------------------------ */

enum { MAX_THREADS = 64 };

/* One process-wide team; a forward holds the lock while it uses it (and while it packs a
 * model's weights, which writes model->cpu_packed). */
static pthread_mutex_t team_lock = PTHREAD_MUTEX_INITIALIZER;
static atn_team *team;

/* The packed copy of one model's layer weights (model->cpu_packed). */
typedef atn_packed_layer packed_layer;   /* encoder.h */

typedef struct packed_weights {
    int32_t n_layers;
    size_t bytes;
    packed_layer *layers;
} packed_weights;

size_t atn_cpu_packed_bytes(const atn_model *model) {
    pthread_mutex_lock(&team_lock);
    const packed_weights *pk = model->cpu_packed;
    size_t bytes = pk ? pk->bytes : 0;   /* shared layers (ALBERT) counted once */
    pthread_mutex_unlock(&team_lock);
    return bytes;
}

/* fork() copies the team pointer but not its threads: a child must start its own.  The
 * lock is taken around the fork, so no forward is halfway through in the child. */
static void before_fork(void) { pthread_mutex_lock(&team_lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&team_lock); }
static void after_fork_child(void) {
    team = NULL;   /* its memory is leaked in the child; its threads do not exist there */
    pthread_mutex_unlock(&team_lock);
}
static void register_fork_handlers(void) { pthread_atfork(before_fork, after_fork_parent, after_fork_child); }
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

__attribute__((destructor)) static void team_release(void) {
    if (pthread_mutex_trylock(&team_lock) == 0) {
        atn_team_free(team);
        team = NULL;
        pthread_mutex_unlock(&team_lock);
    }
}

static bool fast_path_applies(const atn_model *m) {
    const atn_config *c = &m->cfg;
    if (m->kind != ATN_MODEL_BERT || !c->use_embeddings || !c->use_bias || !c->use_layernorm || !c->use_ffn ||
        !c->use_residual || !atn_cpu_kernels_usable() || !m->w.layers)   /* no layers: nothing to pack */
        return false;
    /* the packed ops have no RMSNorm, gated MLP, rotation or grouped K/V heads (their
       positions and mul ops are NULL): rotary decoders take the reference ops */
    if (m->rotary.on || m->family->alibi || m->deberta.on || m->family->encdec || c->gated_ffn || (c->n_kv_heads > 0 && c->n_kv_heads != c->n_heads) ||
        c->d_head * c->n_heads != c->d_model)
        return false;
    for (int32_t l = 0; l < c->n_layers; l++) {
        const atn_layer_weights *w = &m->w.layers[l];
        if (!w->wq || !w->wk || !w->wv || !w->wo || !w->w1 || !w->w2)
            return false;
    }
    return true;
}

static size_t pack_bytes(const atn_config *c) {
    int32_t d = c->d_model, f = c->d_ffn;
    size_t per_layer = 4 * atn_packed_floats(d, d) + atn_packed_floats(f, d) + atn_packed_floats(d, f);
    return (size_t)c->n_layers * per_layer * sizeof(float);
}

size_t atn_cpu_pack_pending_bytes(const atn_model *model) {
    if (!fast_path_applies(model))
        return 0;
    pthread_mutex_lock(&team_lock);
    size_t bytes = model->cpu_packed ? 0 : pack_bytes(&model->cfg);
    pthread_mutex_unlock(&team_lock);
    return bytes;
}

typedef struct pack_job {
    const atn_model *m;
    packed_weights *pk;
    atn_team *team;        /* NULL: one thread */
} pack_job;

/* The first captured layer that runs the same weights as layer l (ALBERT shares them):
 * l itself when none before it does. */
static int32_t first_sharing(const atn_model *m, int32_t l) {
    const atn_layer_weights *w = &m->w.layers[l];
    for (int32_t e = 0; e < l; e++) {
        const atn_layer_weights *x = &m->w.layers[e];
        if (x->wq == w->wq && x->wk == w->wk && x->wv == w->wv && x->wo == w->wo && x->w1 == w->w1 && x->w2 == w->w2)
            return e;
    }
    return l;
}

/* Packs every matrix, the panels of each split between the threads; a layer whose weights
 * an earlier layer already has is not packed again (packed_for points it there).  Once a
 * layer is packed, the pages of its F32 matrices that are a mapping of the model's file are
 * given back (atn_model_release_file_pages): from here on the forward reads the packed copy,
 * and keeping both would hold the layer weights twice (issue 18: bert-base at 512 tokens
 * peaked at 1.58x weights + capture).  Layer by layer, so that the peak never holds both
 * copies of more than one layer. */
static void pack_worker(void *arg, int tid, int nt) {
    pack_job *j = arg;
    const atn_config *c = &j->m->cfg;
    int32_t d = c->d_model, f = c->d_ffn;
    for (int32_t l = 0; l < c->n_layers; l++) {
        if (first_sharing(j->m, l) != l)
            continue;
        const atn_layer_weights *w = &j->m->w.layers[l];
        packed_layer *p = &j->pk->layers[l];
        const float *src[6] = {w->wq, w->wk, w->wv, w->wo, w->w1, w->w2};
        const float *dst[6] = {p->wq, p->wk, p->wv, p->wo, p->w1, p->w2};
        int32_t outs[6] = {d, d, d, d, f, d}, ins[6] = {d, d, d, d, d, f};
        for (int t = 0; t < 6; t++) {
            int lo, hi;
            atn_team_split(atn_panels(outs[t]), tid, nt, &lo, &hi);
            atn_pack_weight((float *)dst[t], src[t], outs[t], ins[t], lo, hi);
        }
        if (j->team)
            atn_team_barrier(j->team);   /* every thread is done reading this layer's matrices */
        if (tid == 0)
            for (int t = 0; t < 6; t++)
                (void)atn_model_release_file_pages(j->m, src[t], (size_t)outs[t] * ins[t] * sizeof(float));
    }
}

/* The model's packed weights, made on first use by team t (NULL: this thread alone), with
 * team_lock held.  NULL when memory is short: the forward then fails with ATN_E_NOMEM. */
static const packed_weights *packed_for(const atn_model *model, atn_team *t) {
    atn_model *m = (atn_model *)model;   /* cpu_packed is a cache: filling it does not change the model */
    if (m->cpu_packed)
        return m->cpu_packed;
    const atn_config *c = &m->cfg;
    int32_t d = c->d_model, f = c->d_ffn, L = c->n_layers;
    size_t per_layer = 4 * atn_packed_floats(d, d) + atn_packed_floats(f, d) + atn_packed_floats(d, f);
    packed_weights *pk = calloc(1, sizeof *pk + (size_t)L * sizeof(packed_layer));
    if (!pk)
        return NULL;
    int32_t distinct = 0;   /* ALBERT: the stored layers, packed once however often they run */
    for (int32_t l = 0; l < L; l++)
        distinct += first_sharing(m, l) == l;
    size_t bytes = (size_t)distinct * per_layer * sizeof(float);
    pk->n_layers = L;
    pk->bytes = bytes;
    pk->layers = (packed_layer *)(pk + 1);
    float *block = atn_alloc_big(bytes);
    if (!block) {
        free(pk);
        return NULL;
    }
    float *p = block;
    for (int32_t l = 0; l < L; l++) {
        packed_layer *pl = &pk->layers[l];
        int32_t first = first_sharing(m, l);
        if (first != l) {
            *pl = pk->layers[first];
            continue;
        }
        pl->wq = p, p += atn_packed_floats(d, d);
        pl->wk = p, p += atn_packed_floats(d, d);
        pl->wv = p, p += atn_packed_floats(d, d);
        pl->wo = p, p += atn_packed_floats(d, d);
        pl->w1 = p, p += atn_packed_floats(f, d);
        pl->w2 = p, p += atn_packed_floats(d, f);
    }
    pack_job job = {m, pk, t};
    if (t)
        atn_team_run(t, pack_worker, &job);
    else
        pack_worker(&job, 0, 1);
    if (!atn_model_own(m, block, bytes, false)) {   /* frees block */
        free(pk);
        return NULL;
    }
    if (!atn_model_own(m, pk, sizeof *pk, false))   /* the block stays owned; only pk is lost */
        return NULL;
    m->cpu_packed = pk;
    return pk;
}

/* Threads for a forward of n tokens: opts->threads (0: as many as OpenBLAS would use), but
 * at least ~25 MFLOP of each layer per thread.  Below that a layer takes well under a
 * millisecond and its eight barriers would cost more than a second thread saves (on a
 * loaded machine, a barrier can cost a whole scheduler time slice). */
static int team_threads(const atn_config *c, int32_t M, size_t S2, const atn_run_options *opts) {
    int nt = opts->threads > 0 ? opts->threads : openblas_get_num_threads();
    double d = c->d_model, layer_flops = 8.0 * M * d * d + 4.0 * (double)S2 * d + 4.0 * M * d * c->d_ffn;
    double most = layer_flops / 25e6;
    if (nt > most)
        nt = (int)most;
    return nt < 1 ? 1 : nt > MAX_THREADS ? MAX_THREADS : nt;
}

/* Runs the walk on the process's CPU team of nt threads (fewer when threads cannot be had)
 * with the model's packed weights (packed on first use), holding the team's lock.
 * ATN_E_NOMEM (nothing run) when the packed copy cannot be made: memory is short, and the
 * reference path would then go into OpenBLAS's allocator, which under RLIMIT_AS loops
 * instead of failing; never fall back into a path that cannot fail cleanly. */
static void walk_trampoline(void *arg, int tid, int nt) { atn_layer_walk(arg, tid, nt); }

atn_status atn_cpu_walk_packed(atn_walk *w, int nt, atn_error *err) {
    const atn_model *m = w->m;
    nt = nt < 1 ? 1 : nt > MAX_THREADS ? MAX_THREADS : nt;
    pthread_once(&fork_once, register_fork_handlers);
    pthread_mutex_lock(&team_lock);
    if (nt > 1 && (!team || atn_team_size(team) != nt)) {
        atn_team_free(team);
        team = atn_team_new(nt);
        if (!team)
            nt = 1;   /* no threads to be had: run on this one */
    }
    atn_team *use = nt > 1 ? team : NULL;   /* a one-thread forward leaves the team as it is */
    const packed_weights *pk = packed_for(m, use);
    if (!pk) {
        pthread_mutex_unlock(&team_lock);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory packing the weights for the CPU (%.1f MB)",
                             pack_bytes(&m->cfg) / 1e6);
    }
    w->ops = &atn_ops_packed;
    w->team = use;
    w->barrier = atn_team_barrier;
    w->packed = pk->layers;
    if (use)
        atn_team_run(use, walk_trampoline, w);
    else
        atn_layer_walk(w, 0, 1);
    w->team = NULL;
    pthread_mutex_unlock(&team_lock);
    return ATN_OK;
}

int atn_cpu_walk_threads(const atn_model *m, int32_t M, size_t S2, const atn_run_options *opts) {
    return team_threads(&m->cfg, M, S2, opts);
}

/* ---- for the stacked forward of several sequences (engine/forward/batch.c) ------------- */

bool atn_cpu_fast_applies(const atn_model *m) { return fast_path_applies(m); }

void atn_cpu_embeddings(float *hidden0, float *scratch, const atn_model *m, const atn_encoding *enc,
                        const int32_t *pos_ids, bool no_positions) {
    embeddings_forward(hidden0, scratch, m, enc, pos_ids, no_positions, NULL, m->w.emb_proj_w);
}

/* atn_run_options.stats_rows: one head's rows, in query order */
static void feed_stats(void *user, int32_t l, int32_t h, const float *att_h, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        atn_stats_rows_add(user, l, h, i, att_h + (size_t)i * n);
}

/* head_done: each head's probabilities, once made, to the run's statistics rows (the
 * reference ops only: after a walk on the packed ops feed_stats_after feeds them) and its
 * head sink (atn_run_options; the packed ops call it from the thread that made the head). */
static void feed_heads(void *user, int32_t l, int32_t h, const float *att_h, int32_t n) {
    const atn_run_options *o = user;
    if (o->stats_rows)
        feed_stats(o->stats_rows, l, h, att_h, n);
    if (o->head_sink)
        o->head_sink->head(o->head_sink->user, l, h, att_h, n);
}

static void sink_head(void *user, int32_t l, int32_t h, const float *att_h, int32_t n) {
    const atn_head_sink *hs = ((const atn_run_options *)user)->head_sink;
    hs->head(hs->user, l, h, att_h, n);
}

/* The same after a walk on the packed ops (whose threads share a head's rows): each head
 * from the capture, or made again when the run keeps heads on demand. */
static atn_status feed_stats_after(const atn_model *m, const atn_activations *a, struct atn_stats_rows *rows,
                                   atn_error *err) {
    const atn_config *c = &m->cfg;
    size_t nn = (size_t)a->n * a->n;
    if (!a->attn_stride && !a->trace_stride)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "statistics during the forward need the attention or the Q, K, V "
                             "it was made from (keep_attention or keep_trace_inputs)");
    float *buf = a->attn_stride ? NULL : malloc(nn * sizeof(float));
    if (!a->attn_stride && !buf)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory for a head of %d tokens", a->n);
    atn_status st = ATN_OK;
    for (int32_t l = a->start_layer; l < c->n_layers && st == ATN_OK; l++)
        for (int32_t h = 0; h < c->n_heads && st == ATN_OK; h++) {
            const float *att_h = a->attn_stride ? a->attn + a->attn_stride * l + (size_t)h * nn : buf;
            if (!a->attn_stride)
                st = atn_cpu_attend_head(m, a, l, h, buf, err);
            if (st == ATN_OK)
                feed_stats(rows, l, h, att_h, a->n);
        }
    free(buf);
    return st;
}

atn_status atn_cpu_forward(const atn_model *m, const atn_encoding *enc, atn_activations *a,
                           const atn_run_options *opts, atn_error *err) {
    const atn_config *c = &m->cfg;
    int32_t n = enc->n, d = c->d_model;
    size_t nd = (size_t)n * d;
    /* reduced precision: the model's rounded weights (made once; a toy model's per run) */
    const atn_rounded_weights *rw = NULL;
    if (a->precision != ATN_PRECISION_FP32) {
        if (!a->round_buf || !(rw = atn_rounded_weights_get(m, a->precision)))
            return atn_error_set(err, ATN_E_NOMEM, "out of memory rounding the weights to %s",
                                 atn_precision_name(a->precision));
        for (int32_t r = a->start_layer > 0 ? a->start_layer + 1 : 0; a->overflow && r <= c->n_layers; r++)
            a->overflow[(size_t)r * ATN_OPERAND_COUNT + ATN_OPERAND_WEIGHTS] += rw->weight_overflow[r];
    }
    /* the embeddings before their projection: E-wide rows in the ffn buffer (run.c sizes it
       for them), or in h1 when E == d (ALBERT always projects) */
    if (a->start_layer == 0)
        embeddings_forward(a->hidden, atn_d_embed(c) == d ? a->h1 : a->ffn, m, enc, a->pos_ids, a->no_positions, a,
                           rw ? rw->emb_proj_w : m->w.emb_proj_w);
    atn_walk_seq seq = {
        .row = 0, .n = n, .attn = a->attn, .attn_stride = a->attn_stride, .mask = a->mask_add,
        .mask_form = a->mask_base ? ATN_MASK_READ : (atn_mask_form)a->mask_form, .mask_base = a->mask_base,
        .mask_layers = a->mask_layers, .heads_off = a->heads_off,
        .pos_ids = a->pos_ids, .nonfinite_layer = all_finite(a->hidden, nd) ? -1 : 0,
        .score_bias = a->encdec ? a->encdec->bias_enc : NULL,   /* T5's buckets */
    };
    atn_walk w = {
        .m = m, .layers = rw ? rw->layers : m->w.layers, .final_g = m->w.final_ln_g, .final_b = m->w.final_ln_b,
        .seq = &seq, .count = 1, .M = n,
        .hidden = a->hidden, .q = a->q, .k = a->k, .v = a->v, .ctx = a->ctx, .ao = a->attn_out,
        .trace_stride = a->trace_stride, .h1 = a->h1, .ffn = a->ffn,
        .slopes = a->alibi_slopes, .temperature = a->temperature, .head_mode = a->head_mode,
        .no_positions = a->no_positions, .gated = atn_activations_gated(a), .start = a->start_layer, .round = rw ? a : NULL, .opts = opts,
    };
    atn_layer_desc_of(m, &w.desc);
    atn_desc_rotary_knobs(&w.desc, a);
    atn_status st = ATN_OK, walk_st = ATN_OK;   /* walk_st: an op that ran out of memory (DeBERTa's terms) */
    w.status = &walk_st;
    /* the packed ops read the mask (so masks need nothing of them) but apply no per-head
       intervention and no rounding: with one, the reference ops run */
    a->ran_packed = fast_path_applies(m) && !w.gated && !rw;
    int nt = a->ran_packed ? team_threads(c, n, (size_t)n * n, opts) : 1;
    float *thread_attn = NULL;   /* no layer's heads kept, packed ops: one [n][n] per thread with a head */
    seq.attn_one_head = a->attn_one_head;
    if (a->attn_one_head && a->ran_packed) {
        thread_attn = atn_alloc_big((size_t)atn_packed_heads_held(nt, c->n_heads) * n * n * sizeof(float));
        if (!thread_attn)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory for the attention of %d tokens", n);
        seq.attn = thread_attn;
        if (opts->head_sink)
            seq.head_done = sink_head, seq.head_user = (void *)opts;
    } else if (opts->stats_rows || opts->head_sink) {
        seq.head_done = feed_heads, seq.head_user = (void *)opts;
    }
    if (a->ran_packed) {
        size_t per_thread = (atn_attention_scratch_floats(n, c->d_model / c->n_heads) + 15) / 16 * 16;
        float *scratch = aligned_alloc(64, (size_t)nt * per_thread * sizeof(float));
        if (!scratch) {
            free(thread_attn);
            return atn_error_set(err, ATN_E_NOMEM, "out of memory for the attention scratch of %d tokens", n);
        }
        w.scratch = scratch, w.scratch_floats = per_thread;
        st = atn_cpu_walk_packed(&w, nt, err);
        free(scratch);
    } else {
        w.ops = &atn_ops_ref;
        atn_layer_walk(&w, 0, 1);
    }
    atn_rounded_weights_free(rw);
    free(thread_attn);
    a->nonfinite_layer = seq.nonfinite_layer;
    if (st == ATN_OK && walk_st)
        st = atn_error_set(err, walk_st, "out of memory for the relative-position terms of %d tokens", n);
    if (st == ATN_OK && !w.stop && a->encdec)   /* an encoder-decoder: the decoder over the encoder's output */
        atn_cpu_decoder_forward(m, a);
    if (st == ATN_OK && w.stop)
        st = atn_error_set(err, ATN_E_CANCELLED, "cancelled at layer %d", w.stop_layer);
    if (st == ATN_OK && opts->stats_rows && a->ran_packed)
        st = feed_stats_after(m, a, opts->stats_rows, err);
    if (st == ATN_OK && opts->progress)
        opts->progress(1.0, ATN_STAGE_DONE, opts->user_data);
    return st;
}

/* The on-demand head: the walk's attend op alone, for one head of one layer, on this thread
 * (docs/ARCHITECTURE.md, "The layer": one code path for the numbers). */
atn_status atn_cpu_attend_head(const atn_model *m, const atn_activations *a, int32_t l, int32_t h, float *out,
                               atn_error *err) {
    const atn_config *c = &m->cfg;
    int32_t n = a->n, d = c->d_model;
    /* the layer's rows (trace_stride = n d) of q [n][d_q] and of k, v [n][d_kv] (a rotary
       decoder's widths; d for every other model) */
    int32_t dq = c->n_heads * c->d_head, dkv = (c->n_kv_heads > 0 ? c->n_kv_heads : c->n_heads) * c->d_head;
    size_t rows_l = a->trace_stride / (size_t)d * (size_t)l;
    float *ctx = malloc((size_t)n * (dq > d ? dq : d) * sizeof(float));   /* the packed kernel writes the head's context */
    float *scratch = NULL;
    size_t per_thread = 0;
    if (a->ran_packed) {
        per_thread = (atn_attention_scratch_floats(n, d / c->n_heads) + 15) / 16 * 16;
        scratch = aligned_alloc(64, per_thread * sizeof(float));
    }
    if (!ctx || (a->ran_packed && !scratch)) {
        free(ctx), free(scratch);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory making a head of %d tokens", n);
    }
    /* reduced precision: the rounding state without its overflow counts (the forward counted
       them; Q, K, V are already rounded in place) */
    atn_activations round = *a;
    round.overflow = NULL;
    atn_walk_seq seq = {
        .row = 0, .n = n, .attn = out, .attn_stride = 0, .mask = a->mask_add, .mask_base = a->mask_base,
        .mask_form = a->mask_base ? ATN_MASK_READ : (atn_mask_form)a->mask_form,
        .mask_layers = a->mask_layers, .heads_off = a->heads_off, .nonfinite_layer = -1,
        .score_bias = a->encdec ? a->encdec->bias_enc : NULL,
    };
    atn_walk w = {
        .m = m, .layers = m->w.layers, .seq = &seq, .count = 1, .M = n,
        .slopes = a->alibi_slopes, .temperature = a->temperature, .head_mode = a->head_mode,
        .gated = atn_activations_gated(a), .start = a->start_layer, .no_positions = a->no_positions,
        .round = a->precision != ATN_PRECISION_FP32 ? &round : NULL,
        .ops = a->ran_packed ? &atn_ops_packed : &atn_ops_ref, .scratch = scratch, .scratch_floats = per_thread,
        .one_head = true, .head = h,
    };
    atn_layer_desc_of(m, &w.desc);
    atn_desc_rotary_knobs(&w.desc, a);
    atn_status walk_st = ATN_OK;
    w.status = &walk_st;
    w.ops->attend(&w, 0, 1, l, a->q + rows_l * dq, a->k + rows_l * dkv, a->v + rows_l * dkv, ctx);
    free(ctx);
    free(scratch);
    if (walk_st)
        return atn_error_set(err, walk_st, "out of memory for the relative-position terms of %d tokens", n);
    return ATN_OK;
}

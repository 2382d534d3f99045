/* AtnResult: one finished run, shared read-only by the views. */
#include "atn-result.h"
#include "atn-result-test.h"
#include "attention-file.h"

#include <math.h>
#include <string.h>
#include <time.h>
#ifdef __SSE2__
#include <emmintrin.h>
#include <immintrin.h>
#endif

struct _AtnResult {
    GObject parent_instance;
    AtnModelHandle *model;
    atn_run *run;              /* NULL for an attention file (the capture is then the file's) */
    atn_encoding *enc;         /* NULL for an attention file */
    const atn_capture *cap;    /* the run's capture, or the attention file's */
    char **tokens;
    double elapsed_ms;
    double stats_ms, thumbs_ms, colour_ms;   /* the worker's time after the run */
    double late_stats_ms;                    /* atn_result_compute_stats, after publishing */
    gint64 done_us, received_us, received_cpu_us;
    int n_masks;
    AtnMaskGuesses *guesses;   /* [n_masks], or NULL without a masked-LM head */
    char *gpu_failure;
    atn_stats *stats;          /* or NULL, and then stats_error says why */
    char *stats_error;
    gboolean stats_pending;    /* made by new_full without stats_now, not yet set */
    gboolean causal;           /* a causal model (GPT-2) */
    int last;                  /* the last real token */
    AtnMaskGuesses *next;      /* [n] next-token guesses (causal only); next[i].n == 0: not yet */
    int thumb_side;
    float *thumb_own;          /* the reduced thumbnails, or NULL: the capture's attention itself */
    float *ranges;             /* [L*H][2] */
    GMutex thumb_lock;         /* guards coloured: workers add, the main thread reads */
    AtnThumbPixels *coloured[2];   /* the thumbnails coloured in the last two styles, newest first */
    /* heads made on demand (a capture without attention) for atn_result_get_head: the last
       RESULT_MADE_HEADS, newest first; the main thread only */
    float *made[8];
    int made_head[8];             /* layer * H + head of made[i]; -1: none */
    /* an attention file read lazily (atn_attn_file_capture_lazy): the thumbnails and ranges
       are made with the statistics, in their worker, into these, and published with them
       (atn_result_set_stats, the main thread) */
    gboolean thumbs_deferred;
    int pending_side;
    float *pending_own, *pending_ranges;
    char *head_error;             /* the last head that could not be read: why (main thread) */
};

enum { SIGNAL_HEAD_FAILED, N_RESULT_SIGNALS };
static guint result_signals[N_RESULT_SIGNALS];

enum { RESULT_MADE_HEADS = 8 };

struct AtnThumbPixels {
    gatomicrefcount rc;
    atn_colormap cm;
    gboolean shared;
    double vmin, vmax;        /* the shared range (with shared) */
    int side, count;
    guint8 *px;               /* [count][side][side * 4] */
};

AtnThumbPixels *atn_thumb_pixels_ref(AtnThumbPixels *pix) {
    g_return_val_if_fail(pix != NULL, NULL);
    g_atomic_ref_count_inc(&pix->rc);
    return pix;
}

void atn_thumb_pixels_unref(AtnThumbPixels *pix) {
    if (pix && g_atomic_ref_count_dec(&pix->rc)) {
        g_free(pix->px);
        g_free(pix);
    }
}

atn_colormap atn_thumb_pixels_get_colormap(const AtnThumbPixels *pix) {
    g_return_val_if_fail(pix != NULL, ATN_CMAP_VIRIDIS);
    return pix->cm;
}

gboolean atn_thumb_pixels_get_shared_range(const AtnThumbPixels *pix, double *vmin, double *vmax) {
    g_return_val_if_fail(pix != NULL, FALSE);
    if (vmin)
        *vmin = pix->vmin;
    if (vmax)
        *vmax = pix->vmax;
    return pix->shared;
}

int atn_thumb_pixels_get_side(const AtnThumbPixels *pix) {
    g_return_val_if_fail(pix != NULL, 0);
    return pix->side;
}

int atn_thumb_pixels_get_count(const AtnThumbPixels *pix) {
    g_return_val_if_fail(pix != NULL, 0);
    return pix->count;
}

guint8 *atn_thumb_pixels_get_head(AtnThumbPixels *pix, int c) {
    g_return_val_if_fail(pix != NULL, NULL);
    if (c < 0 || c >= pix->count)
        return NULL;
    return pix->px + (size_t)c * pix->side * pix->side * 4;
}

G_DEFINE_FINAL_TYPE(AtnResult, atn_result, G_TYPE_OBJECT)

static void atn_result_finalize(GObject *object) {
    AtnResult *self = ATN_RESULT(object);
    if (self->run)
        atn_model_handle_give_run(self->model, self->run);   /* its memory serves the next run */
    atn_encoding_free(self->enc);
    atn_render_token_labels_free(self->tokens);
    g_free(self->guesses);
    g_free(self->next);
    g_free(self->gpu_failure);
    atn_stats_free(self->stats);
    g_free(self->stats_error);
    g_free(self->thumb_own);
    g_free(self->ranges);
    g_free(self->pending_own);
    g_free(self->pending_ranges);
    g_free(self->head_error);
    for (int i = 0; i < RESULT_MADE_HEADS; i++)
        g_free(self->made[i]);
    atn_thumb_pixels_unref(self->coloured[0]);
    atn_thumb_pixels_unref(self->coloured[1]);
    g_mutex_clear(&self->thumb_lock);
    g_clear_object(&self->model);
    G_OBJECT_CLASS(atn_result_parent_class)->finalize(object);
}

static void atn_result_class_init(AtnResultClass *klass) {
    G_OBJECT_CLASS(klass)->finalize = atn_result_finalize;
    /* "head-failed" (message): atn_result_get_head could not read a head (an attention file's
       layer checked on its first read: NaN, Inf or a negative value), emitted on the main
       thread once per message; the session shows it as an error */
    result_signals[SIGNAL_HEAD_FAILED] = g_signal_new("head-failed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                      NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void atn_result_init(AtnResult *self) {
    g_mutex_init(&self->thumb_lock);
    for (int i = 0; i < RESULT_MADE_HEADS; i++)
        self->made_head[i] = -1;
}

/* One row-block of a head: over its rows, each column's largest finite value into cmax
 * (NaN: none yet), and the finite range into mn / mx, all by column, four at a time.
 * Branch-free SSE2 (the x86-64 baseline) for what the scalar loop did, with its results:
 * a maximum or minimum is the same whichever order the values come in (attention never
 * holds -0, the one value that compares equal to another and differs). */
#if defined(__x86_64__) && defined(__GNUC__)
/* block_columns eight columns at a time, for the CPUs that have AVX2 (the build's baseline is
 * SSE2); the same comparisons, so the same results.  Returns the first column it left. */
__attribute__((target("avx2"))) static int block_columns_avx2(const float *a, int n, int i0, int i1, float *cmax,
                                                              float *mn, float *mx) {
    int j = 0;
    const __m256 zero = _mm256_setzero_ps();
    for (; j + 8 <= n; j += 8) {
        __m256 c = cmax ? _mm256_loadu_ps(cmax + j) : zero;
        __m256 lo = _mm256_loadu_ps(mn + j), hi = _mm256_loadu_ps(mx + j);
        for (int i = i0; i < i1; i++) {
            __m256 v = _mm256_loadu_ps(a + (size_t)i * n + j);
            __m256 fin = _mm256_cmp_ps(_mm256_sub_ps(v, v), zero, _CMP_EQ_OQ);
            c = _mm256_blendv_ps(c, v, _mm256_and_ps(fin, _mm256_cmp_ps(c, v, _CMP_NGE_UQ)));
            lo = _mm256_blendv_ps(lo, v, _mm256_and_ps(fin, _mm256_cmp_ps(v, lo, _CMP_LT_OQ)));
            hi = _mm256_blendv_ps(hi, v, _mm256_and_ps(fin, _mm256_cmp_ps(v, hi, _CMP_GT_OQ)));
        }
        if (cmax)
            _mm256_storeu_ps(cmax + j, c);
        _mm256_storeu_ps(mn + j, lo);
        _mm256_storeu_ps(mx + j, hi);
    }
    return j;
}
#endif

static void block_columns(const float *a, int n, int i0, int i1, float *cmax, float *mn, float *mx) {
    int j = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    if (atn_cpu_features()->avx2)   /* probed once (pthread_once): cheap per block */
        j = block_columns_avx2(a, n, i0, i1, cmax, mn, mx);
#endif
#ifdef __SSE2__
    const __m128 zero = _mm_setzero_ps();
    for (; j + 4 <= n; j += 4) {   /* what AVX2 left, or all of it */
        __m128 c = cmax ? _mm_loadu_ps(cmax + j) : zero, lo = _mm_loadu_ps(mn + j), hi = _mm_loadu_ps(mx + j);
        for (int i = i0; i < i1; i++) {
            __m128 v = _mm_loadu_ps(a + (size_t)i * n + j);
            __m128 fin = _mm_cmpeq_ps(_mm_sub_ps(v, v), zero);   /* finite: v - v is 0, else NaN */
            __m128 take = _mm_and_ps(fin, _mm_cmpnge_ps(c, v));   /* !(c >= v): NaN (empty) or smaller */
            c = _mm_or_ps(_mm_and_ps(take, v), _mm_andnot_ps(take, c));
            __m128 l = _mm_and_ps(fin, _mm_cmplt_ps(v, lo)), h = _mm_and_ps(fin, _mm_cmpgt_ps(v, hi));
            lo = _mm_or_ps(_mm_and_ps(l, v), _mm_andnot_ps(l, lo));
            hi = _mm_or_ps(_mm_and_ps(h, v), _mm_andnot_ps(h, hi));
        }
        if (cmax)
            _mm_storeu_ps(cmax + j, c);
        _mm_storeu_ps(mn + j, lo);
        _mm_storeu_ps(mx + j, hi);
    }
#endif
    for (; j < n; j++)
        for (int i = i0; i < i1; i++) {
            float v = a[(size_t)i * n + j];
            if (!isfinite(v))
                continue;
            mn[j] = v < mn[j] ? v : mn[j];
            mx[j] = v > mx[j] ? v : mx[j];
            if (cmax && !(cmax[j] >= v))
                cmax[j] = v;
        }
}

/* Heads [c0, c1) of make_thumbs: each head's finite range and, when self->thumb_own is
 * there, its max-pooled thumbnail. */
typedef struct thumbs_part {
    float *own, *ranges;   /* where the thumbnails ([count][side][side], or NULL) and ranges go */
    int side;
    const atn_capture *cap;
    const int *first;   /* thumbnail row (column) b holds tokens first[b] .. first[b+1]-1 */
    int c0, c1;
} thumbs_part;

static gpointer thumbs_range(gpointer data) {
    const thumbs_part *p = data;
    const atn_capture *cap = p->cap;
    const int *first = p->first;
    int n = cap->n, side = p->side;
    size_t nn = (size_t)n * n, ss = (size_t)side * side;
    float *cmax = g_new(float, 3 * (size_t)n), *mn = cmax + n, *mx = cmax + 2 * n;
    float *scratch = cap->attn ? NULL : g_try_new(float, nn);   /* heads on demand: one at a time */
    for (int c = p->c0; c < p->c1; c++) {
        const float *a = cap->attn || scratch ? atn_capture_head_read(cap, c / cap->n_heads, c % cap->n_heads,
                                                                      scratch, NULL) : NULL;
        float *t = p->own ? p->own + c * ss : NULL;
        if (!a) {   /* out of memory, or a bad layer of a file: no range, an empty thumbnail */
            p->ranges[2 * c] = p->ranges[2 * c + 1] = NAN;
            for (size_t i = 0; t && i < ss; i++)
                t[i] = NAN;
            continue;
        }
        for (int j = 0; j < n; j++)
            mn[j] = INFINITY, mx[j] = -INFINITY;
        if (!t) {
            block_columns(a, n, 0, n, NULL, mn, mx);
        } else {
            for (int b = 0; b < side; b++) {
                for (int j = 0; j < n; j++)
                    cmax[j] = NAN;
                block_columns(a, n, first[b], first[b + 1], cmax, mn, mx);
                float *trow = t + (size_t)b * side;
                for (int k = 0; k < side; k++) {
                    float m = NAN;
                    for (int j = first[k]; j < first[k + 1]; j++)
                        if (!(m >= cmax[j]))   /* cmax[j] NaN: that column had no finite value */
                            m = isnan(cmax[j]) ? m : cmax[j];
                    trow[k] = m;
                }
            }
        }
        float lo = INFINITY, hi = -INFINITY;
        for (int j = 0; j < n; j++) {
            lo = mn[j] < lo ? mn[j] : lo;
            hi = mx[j] > hi ? mx[j] : hi;
        }
        p->ranges[2 * c] = hi >= lo ? lo : NAN;
        p->ranges[2 * c + 1] = hi >= lo ? hi : NAN;
    }
    g_free(cmax);
    g_free(scratch);
    return NULL;
}

/* Below this many attention weights in all, one thread: starting another costs more. */
#define THUMBS_PARALLEL_MIN (1 << 19)
enum { THUMBS_MAX_THREADS = 4 };

/* Each head's finite range and, for long inputs, its max-pooled thumbnail (see
 * atn_result_get_thumb_values): one pass over the probabilities, in the worker, its heads
 * shared out between as many threads as there are cores (up to THUMBS_MAX_THREADS; the
 * forward's own threads are idle by then, and the threads started here inherit the worker's
 * lowered priority).  Rows are taken a thumbnail row's block at a time, columns by the vector
 * (block_columns), then each block's columns are pooled into their thumbnail cells.  Every
 * head is computed by one thread, alone, so the figures do not depend on the split. */
static void make_thumbs(const atn_capture *cap, int *side_out, float **own_out, float **ranges_out) {
    if (!atn_capture_has_heads(cap))
        return;
    int count = cap->n_layers * cap->n_heads, n = cap->n;
    int side = MIN(n, ATN_RESULT_THUMB_MAX);
    size_t ss = (size_t)side * side;
    float *own = NULL, *ranges = g_new(float, 2 * (size_t)count);
    if (side < n || !cap->attn)   /* heads on demand: the thumbnails are kept, at most THUMB_MAX² each */
        own = g_new(float, count * ss);
    *side_out = side;
    *own_out = own;
    *ranges_out = ranges;
    int *first = g_new(int, side + 1);
    for (int b = 0, i = 0; b <= side; b++) {
        while (i < n && (int)((long long)i * side / n) < b)
            i++;
        first[b] = i;
    }
    int nt = (double)count * n * n < THUMBS_PARALLEL_MIN ? 1 : MIN(MIN((int)g_get_num_processors(), count),
                                                                    THUMBS_MAX_THREADS);
    thumbs_part parts[THUMBS_MAX_THREADS];
    GThread *threads[THUMBS_MAX_THREADS] = {0};
    for (int t = 0; t < nt; t++) {
        parts[t] = (thumbs_part){own, ranges, side, cap, first, (int)((long long)count * t / nt),
                                 (int)((long long)count * (t + 1) / nt)};
        /* a thread that cannot be started leaves its heads to this one */
        if (t > 0 && !(threads[t] = g_thread_try_new("atn-thumbs", thumbs_range, &parts[t], NULL)))
            thumbs_range(&parts[t]);
    }
    thumbs_range(&parts[0]);
    for (int t = 1; t < nt; t++)
        if (threads[t])
            g_thread_join(threads[t]);
    g_free(first);
}

/* The rest of a new result, from its capture: tokens, guesses (with a model), statistics,
 * thumbnails. */
static AtnResult *finish_new(AtnResult *self, const atn_capture *cap, gboolean stats_now);

AtnResult *atn_result_new_full(AtnModelHandle *model, atn_run *run, atn_encoding *enc, double elapsed_ms,
                               gboolean stats_now) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(model), NULL);
    AtnResult *self = g_object_new(ATN_TYPE_RESULT, NULL);
    self->model = g_object_ref(model);
    self->run = run;
    self->enc = enc;
    self->elapsed_ms = elapsed_ms;
    self->causal = atn_model_is_causal(atn_model_handle_get_model(model));
    return finish_new(self, atn_run_capture(run), stats_now);
}

AtnResult *atn_result_new_attention(AtnModelHandle *file, const atn_capture *cap, double elapsed_ms,
                                    gboolean stats_now) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(file) && cap, NULL);
    atn_attn_file *f = atn_model_handle_get_attention_file(file);
    g_return_val_if_fail(f != NULL, NULL);
    AtnResult *self = g_object_new(ATN_TYPE_RESULT, NULL);
    self->model = g_object_ref(file);
    self->elapsed_ms = elapsed_ms;
    self->causal = atn_attn_file_get_info(f).causal;
    return finish_new(self, cap, stats_now);
}

static AtnResult *finish_new(AtnResult *self, const atn_capture *cap, gboolean stats_now) {
    self->cap = cap;
    const atn_model *m = atn_model_handle_get_model(self->model);   /* NULL for an attention file */
    /* the tokens as every view shows them ("␣the", not "\u0120the") */
    self->tokens = atn_render_token_labels(m, cap->enc);
    if (!self->tokens)
        g_error("out of memory for %d token labels", cap->n);
    for (int i = 0; i < cap->n; i++)
        self->n_masks += cap->enc->tokens[i].role == ATN_TOKEN_MASK;
    if (self->n_masks > 0 && m && atn_model_has_mlm_head(m)) {
        self->guesses = g_new0(AtnMaskGuesses, self->n_masks);
        int k = 0;
        for (int i = 0; i < cap->n; i++) {
            if (cap->enc->tokens[i].role != ATN_TOKEN_MASK)
                continue;
            AtnMaskGuesses *g = &self->guesses[k++];
            g->position = i;
            atn_error err = {0};
            if (atn_predict_position(m, cap, i, ATN_RESULT_TOP_GUESSES, g->top, &err) == ATN_OK)
                g->n = ATN_RESULT_TOP_GUESSES;
            else
                g_warning("predicting [MASK] at %d: %s", i, err.message);
        }
    }
    for (int i = 0; i < cap->n; i++)
        if (cap->enc->mask[i])
            self->last = i;
    if (self->causal && m) {   /* next-token guesses need the model's head */
        self->next = g_new0(AtnMaskGuesses, cap->n);
        atn_result_get_next_guesses(self, self->last);
    } else if (cap->n_stacks > 0 && cap->n_tgt > 0 && m) {   /* an encoder-decoder: the decoder's, by target position */
        self->next = g_new0(AtnMaskGuesses, cap->n_tgt);
        atn_result_get_next_guesses(self, cap->n_tgt - 1);
    }
    /* the head statistics, once: the Model grid's labels, the Statistics table and its CSV and
       the clearest head all read these */
    atn_error err = {0};
    gint64 t0 = g_get_monotonic_time();
    /* an attention file read lazily: nothing is read now (its layers are checked when first
       read); the statistics and the thumbnails follow, in the statistics' worker */
    self->thumbs_deferred = !self->run && !cap->attn && cap->attn_on_demand;
    if (!stats_now || self->thumbs_deferred)
        self->stats_pending = TRUE;
    else if (atn_stats_compute_progress(cap, NULL, NULL, &self->stats, &err) != ATN_OK)
        self->stats_error = g_strdup(err.message);
    gint64 t1 = g_get_monotonic_time();
    if (!self->thumbs_deferred)
        make_thumbs(cap, &self->thumb_side, &self->thumb_own, &self->ranges);
    self->stats_ms = (t1 - t0) / 1000.0;
    self->thumbs_ms = (g_get_monotonic_time() - t1) / 1000.0;
    return self;
}

const float *atn_result_get_thumb_values(AtnResult *self, int *side) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    if (side)
        *side = self->thumb_side;
    return self->thumb_own ? self->thumb_own : self->cap->attn;
}

const float *atn_result_get_head_ranges(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    return self->ranges;
}

static gsize thumb_cells_coloured;   /* atomic */

guint64 atn_result_get_thumb_cells_coloured(void) { return (guint64)g_atomic_pointer_get(&thumb_cells_coloured); }

/* Under thumb_lock: the kept pixels of that style (borrowed), or NULL. */
static AtnThumbPixels *find_coloured(AtnResult *self, atn_colormap cm, gboolean shared) {
    for (int i = 0; i < 2; i++)
        if (self->coloured[i] && self->coloured[i]->cm == cm && self->coloured[i]->shared == shared)
            return self->coloured[i];
    return NULL;
}

AtnThumbPixels *atn_result_dup_thumb_pixels(AtnResult *self, atn_colormap cm, gboolean shared_range,
                                            gboolean any_style) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    g_mutex_lock(&self->thumb_lock);
    AtnThumbPixels *p = find_coloured(self, cm, !!shared_range);
    if (!p && any_style)
        p = self->coloured[0];
    if (p)
        atn_thumb_pixels_ref(p);
    g_mutex_unlock(&self->thumb_lock);
    return p;
}

/* Colours as the Model view always has: each head in its own range, or every head in the
 * range of all of them, both resolved from the head ranges (atn_value_range_resolve), which
 * give what the heads' own values would. */
AtnThumbPixels *atn_result_color_thumbs(AtnResult *self, atn_colormap cm, gboolean shared_range,
                                        GCancellable *cancellable) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    gboolean shared = !!shared_range;
    AtnThumbPixels *kept = atn_result_dup_thumb_pixels(self, cm, shared, FALSE);
    if (kept)
        return kept;
    const atn_capture *cap = self->cap;
    int count = cap->n_layers * cap->n_heads, side = 0;
    const float *vals = atn_result_get_thumb_values(self, &side);
    if (!atn_capture_has_heads(cap) || !vals || !self->ranges || side <= 0 || count <= 0)
        return NULL;
    size_t ss = (size_t)side * side;
    AtnThumbPixels *p = g_try_new0(AtnThumbPixels, 1);
    if (p)
        p->px = g_try_malloc(ss * 4 * (size_t)count);
    if (!p || !p->px) {
        g_free(p);
        return NULL;
    }
    g_atomic_ref_count_init(&p->rc);
    p->cm = cm;
    p->shared = shared;
    p->side = side;
    p->count = count;
    atn_value_range r = {.automatic = true};
    atn_value_range_resolve(&r, self->ranges, count, 2, 0, cm, &p->vmin, &p->vmax);
    for (int c = 0; c < count; c++) {
        if (c % 16 == 0 && g_cancellable_is_cancelled(cancellable)) {
            atn_thumb_pixels_unref(p);
            return NULL;
        }
        double lo = p->vmin, hi = p->vmax;
        if (!shared)
            atn_value_range_resolve(&r, self->ranges + 2 * c, 1, 2, 0, cm, &lo, &hi);
        atn_render_matrix_pixels(vals + c * ss, side, side, 0, cm, lo, hi, atn_thumb_pixels_get_head(p, c),
                                 (size_t)side * 4);
    }
    g_atomic_pointer_add(&thumb_cells_coloured, (gssize)(ss * count));
    g_mutex_lock(&self->thumb_lock);
    AtnThumbPixels *raced = find_coloured(self, cm, shared);   /* another thread was quicker */
    if (raced) {
        atn_thumb_pixels_unref(p);
        p = raced;
    } else {
        atn_thumb_pixels_unref(self->coloured[1]);
        self->coloured[1] = self->coloured[0];
        self->coloured[0] = p;
    }
    atn_thumb_pixels_ref(p);
    g_mutex_unlock(&self->thumb_lock);
    return p;
}

gboolean atn_result_is_causal(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), FALSE);
    return self->causal;
}

int atn_result_get_split(AtnResult *self) {
    if (!self || !ATN_IS_RESULT(self))
        return 0;
    return atn_render_pair_split(self->cap->enc);
}

int atn_result_get_last_position(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), 0);
    return self->last;
}

const AtnMaskGuesses *atn_result_get_next_guesses(AtnResult *self, int position) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    const atn_capture *cap = self->cap;
    if (!self->next || position < 0 || position >= (cap->n_stacks > 0 ? cap->n_tgt : cap->n))
        return NULL;
    AtnMaskGuesses *g = &self->next[position];
    if (g->n == 0) {
        atn_error err = {0};
        g->position = position;
        if (atn_predict_next(atn_model_handle_get_model(self->model), cap, position, ATN_RESULT_TOP_GUESSES, g->top,
                             &err) == ATN_OK)
            g->n = ATN_RESULT_TOP_GUESSES;
        else
            g_warning("next-token guesses after %d: %s", position, err.message);
    }
    return g->n ? g : NULL;
}

const atn_stats *atn_result_get_stats(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    return self->stats;
}

gboolean atn_result_get_stats_pending(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), FALSE);
    return self->stats_pending;
}

static bool stats_cancel_cb(double fraction, atn_stage stage, void *user_data) {
    return !g_cancellable_is_cancelled(user_data);
}

atn_stats *atn_result_compute_stats(AtnResult *self, GCancellable *cancellable, GError **error) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    atn_error err = {0};
    atn_stats *st = NULL;
    gint64 t0 = g_get_monotonic_time();
    atn_status s = atn_stats_compute_progress(self->cap, cancellable ? stats_cancel_cb : NULL,
                                              cancellable, &st, &err);
    if (s != ATN_E_CANCELLED && self->thumbs_deferred && !self->pending_ranges &&
        !(cancellable && g_cancellable_is_cancelled(cancellable)))   /* published by atn_result_set_stats */
        make_thumbs(self->cap, &self->pending_side, &self->pending_own, &self->pending_ranges);
    if (s == ATN_E_CANCELLED)
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
    else if (s != ATN_OK)
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, err.message);
    else
        self->late_stats_ms = (g_get_monotonic_time() - t0) / 1000.0;   /* read by the harness once set */
    return st;
}

void atn_result_set_stats(AtnResult *self, atn_stats *st, const char *error) {
    g_return_if_fail(ATN_IS_RESULT(self));
    if (!self->stats_pending) {
        atn_stats_free(st);
        g_return_if_reached();
    }
    self->stats_pending = FALSE;
    self->stats = st;
    if (self->thumbs_deferred && self->pending_ranges && !self->ranges) {   /* made with the statistics */
        self->thumb_side = self->pending_side;
        self->thumb_own = g_steal_pointer(&self->pending_own);
        self->ranges = g_steal_pointer(&self->pending_ranges);
    }
    self->stats_error = st ? NULL : g_strdup(error ? error : "");
}

const char *atn_result_get_stats_error(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    return self->stats_error;
}

int atn_result_get_n_masks(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), 0);
    return self->n_masks;
}

const char *atn_result_get_gpu_failure(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    return self->gpu_failure;
}

void atn_result_set_gpu_failure(AtnResult *self, const char *why) {
    g_return_if_fail(ATN_IS_RESULT(self));
    g_free(self->gpu_failure);
    self->gpu_failure = g_strdup(why);
}

const AtnMaskGuesses *atn_result_get_mask_guesses(AtnResult *self, int i) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    return self->guesses && i >= 0 && i < self->n_masks ? &self->guesses[i] : NULL;
}

AtnModelHandle *atn_result_get_model(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    return self->model;
}
gboolean atn_result_has_weights(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), FALSE);
    return atn_model_handle_has_weights(self->model);
}
gboolean atn_result_can_trace(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), FALSE);
    return atn_model_handle_has_weights(self->model) ||
           atn_attn_file_get_info(atn_model_handle_get_attention_file(self->model)).has_qkv;
}
atn_status atn_result_trace(AtnResult *self, int layer, int head, int query, atn_trace **out, atn_error *err) {
    return atn_result_trace_stack(self, ATN_STACK_ENCODER, layer, head, query, out, err);
}
atn_status atn_result_trace_stack(AtnResult *self, atn_stack_kind stack, int layer, int head, int query,
                                  atn_trace **out, atn_error *err) {
    g_return_val_if_fail(ATN_IS_RESULT(self) && out, ATN_E_INVALID);
    if (atn_model_handle_has_weights(self->model))
        return atn_trace_compute_stack(atn_model_handle_get_model(self->model), self->cap, stack, layer, head, query,
                                       out, err);
    if (stack != ATN_STACK_ENCODER)
        return atn_error_set(err, ATN_E_INVALID, "an attention file's decoder and cross-attention have no trace");
    return atn_attn_file_trace(atn_model_handle_get_attention_file(self->model), layer, head, query, out, err);
}
const atn_capture *atn_result_get_capture(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    return self->cap;
}
const atn_encoding *atn_result_get_encoding(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    return self->cap->enc;
}
int atn_result_get_n_tokens(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), 0);
    return self->cap->n;
}
int atn_result_get_n_layers(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), 0);
    return self->cap->n_layers;
}
int atn_result_get_n_heads(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), 0);
    return self->cap->n_heads;
}
const char *const *atn_result_get_tokens(AtnResult *self) { return (const char *const *)self->tokens; }
const int32_t *atn_result_get_mask(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    return self->cap->enc->mask;
}
double atn_result_get_elapsed_ms(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), 0);
    return self->elapsed_ms;
}
void atn_result_get_worker_times(AtnResult *self, double *stats_ms, double *late_stats_ms, double *thumbs_ms,
                                 double *colour_ms, gint64 *done_us) {
    g_return_if_fail(ATN_IS_RESULT(self));
    if (stats_ms)
        *stats_ms = self->stats_ms;
    if (late_stats_ms)
        *late_stats_ms = self->stats_pending ? 0 : self->late_stats_ms;
    if (thumbs_ms)
        *thumbs_ms = self->thumbs_ms;
    if (colour_ms)
        *colour_ms = self->colour_ms;
    if (done_us)
        *done_us = self->done_us;
}

void atn_result_set_worker_done(AtnResult *self, double colour_ms) {
    g_return_if_fail(ATN_IS_RESULT(self));
    self->colour_ms = colour_ms;
    self->done_us = g_get_monotonic_time();
}

void atn_result_mark_received(AtnResult *self) {
    g_return_if_fail(ATN_IS_RESULT(self));
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    self->received_cpu_us = (gint64)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    self->received_us = g_get_monotonic_time();
}

void atn_result_get_received(AtnResult *self, gint64 *received_us, gint64 *received_cpu_us) {
    g_return_if_fail(ATN_IS_RESULT(self));
    if (received_us)
        *received_us = self->received_us;
    if (received_cpu_us)
        *received_cpu_us = self->received_cpu_us;
}

atn_device atn_result_get_device(AtnResult *self) {
    g_return_val_if_fail(ATN_IS_RESULT(self), ATN_DEVICE_CPU);
    return self->run ? atn_run_device_used(self->run) : ATN_DEVICE_CPU;
}

const float *atn_result_get_head(AtnResult *self, int layer, int head) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    const atn_capture *cap = self->cap;
    if (!atn_capture_has_heads(cap) || layer < 0 || layer >= cap->n_layers || head < 0 || head >= cap->n_heads)
        return NULL;
    if (cap->attn)
        return atn_capture_head_read(cap, layer, head, NULL, NULL);
    int id = layer * cap->n_heads + head, at = RESULT_MADE_HEADS - 1;
    for (int i = 0; i < RESULT_MADE_HEADS; i++)
        if (self->made_head[i] == id)
            at = i;
    float *buf = self->made[at];
    gboolean have = self->made_head[at] == id;
    /* to the front: the newest first, the oldest (the one reused) last */
    memmove(self->made + 1, self->made, (size_t)at * sizeof *self->made);
    memmove(self->made_head + 1, self->made_head, (size_t)at * sizeof *self->made_head);
    self->made[0] = buf;
    self->made_head[0] = have ? id : -1;
    if (have)
        return buf;
    if (!buf && !(self->made[0] = buf = g_try_new(float, (size_t)cap->n * cap->n)))
        return NULL;
    atn_error err = {0};
    if (!atn_capture_head_read(cap, layer, head, buf, &err)) {
        if (g_strcmp0(err.message, self->head_error)) {   /* said once: the views ask again on every change */
            g_free(self->head_error);
            self->head_error = g_strdup(err.message);
            g_signal_emit(self, result_signals[SIGNAL_HEAD_FAILED], 0, err.message);
        }
        return NULL;
    }
    self->made_head[0] = id;
    return buf;
}

const float *atn_result_read_head(AtnResult *self, int layer, int head, float *scratch) {
    g_return_val_if_fail(ATN_IS_RESULT(self), NULL);
    return atn_capture_head_read(self->cap, layer, head, scratch, NULL);
}

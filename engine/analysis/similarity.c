/* Head-to-head similarity: Jensen-Shannon distance between attention rows (Clark et al.
 * 2019), cosine and Pearson of the flattened maps; for one layer or the whole model; for
 * one capture or averaged over a corpus; with an average-linkage clustering order.
 *
 * Speed: bert-base has 144 heads, so the model scope compares 10,296 pairs; at 128 tokens
 * that is 169 million (p, q) entries for JS, each needing a logarithm of (p + q) / 2.  The
 * JS kernel therefore uses a vectorised log2 (exponent bits plus a degree-8 polynomial,
 * ~2.5e-7 absolute error) compiled for AVX-512F, AVX2 and baseline x86-64 (picked at load time by CPU
 * feature, not model: "arch=" clones match exact CPU models only), and splits
 * the pairs over threads.  The row entropies H(P) are computed once per head with the same
 * code, so identical heads give exactly 0.  Cosine and Pearson are one sgemm (a Gram
 * matrix). */
#include "analysis.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* What an atn_similarity carries that callers do not see: the running sums of the corpus
 * mode and the progress callback.  atn_similarity_new allocates this; the public struct is
 * its first member, so the pointer handed out converts back. */
typedef struct sim_acc {
    atn_similarity pub;
    double *sum;              /* [count][count] sums over the sentences added */
    bool finished;
    atn_progress_fn progress;
    void *progress_user;
    int32_t *layer_heads;     /* [n_layers] the heads each layer has (atn_similarity_new_capture of a
                                 capture with absent heads: only those are compared); NULL: all */
} sim_acc;

static sim_acc *acc_of(const atn_similarity *s) { return (sim_acc *)s; }

/* ---- names ------------------------------------------------------------------------ */

const char *atn_metric_name(atn_metric m) {
    switch (m) {
    case ATN_METRIC_COSINE: return "cosine";
    case ATN_METRIC_PEARSON: return "pearson";
    default: return "js";
    }
}

const char *atn_metric_title(atn_metric m) {
    switch (m) {
    case ATN_METRIC_COSINE: return "cosine similarity";
    case ATN_METRIC_PEARSON: return "Pearson correlation";
    default: return "Jensen-Shannon distance";
    }
}

bool atn_metric_from_name(const char *name, atn_metric *out) {
    if (!name)
        return false;
    if (!strcasecmp(name, "js") || !strcasecmp(name, "jensen-shannon") || !strcasecmp(name, "jsd"))
        *out = ATN_METRIC_JS;
    else if (!strcasecmp(name, "cosine") || !strcasecmp(name, "cos"))
        *out = ATN_METRIC_COSINE;
    else if (!strcasecmp(name, "pearson") || !strcasecmp(name, "correlation"))
        *out = ATN_METRIC_PEARSON;
    else
        return false;
    return true;
}

bool atn_metric_is_distance(atn_metric m) { return m == ATN_METRIC_JS; }

const char *atn_scope_name(atn_scope s) { return s == ATN_SCOPE_MODEL ? "model" : "layer"; }

bool atn_scope_from_name(const char *name, atn_scope *out) {
    if (!name)
        return false;
    if (!strcasecmp(name, "layer"))
        *out = ATN_SCOPE_LAYER;
    else if (!strcasecmp(name, "model") || !strcasecmp(name, "all"))
        *out = ATN_SCOPE_MODEL;
    else
        return false;
    return true;
}

/* ---- the JS kernel ------------------------------------------------------------------- */

/* GCC/clang vector extensions: 16 floats, lowered to whatever each clone's ISA has.  The
 * helpers taking and returning them are always inlined, so the ABI note does not apply. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
#define VW 16

#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(__SANITIZE_ADDRESS__)
#define MULTIVERSION __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef MULTIVERSION
#define MULTIVERSION
#endif

static inline __attribute__((always_inline)) v16f splat(float x) {
    return (v16f){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
}
static inline __attribute__((always_inline)) v16i splati(int32_t x) {
    return (v16i){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
}

/* s * log2(s) for s >= 0 (s = 0 gives 0): s = 2^e * (1 + f), f in [0, 1), and
 * log2(1 + f) = f * q(f) with q of degree 7 (a Chebyshev fit made with numpy; max error
 * 2.5e-7 evaluated in float).  No clamp is needed: s = 0 reads as 2^-127 * 1, so s * log2
 * is 0 * -127 = 0; subnormal s contribute ~1e-38.  Weights are never negative or NaN here
 * (the callers replace non-finite ones by 0). */
static inline __attribute__((always_inline)) v16f slog2s(v16f sv) {
    v16i bits = (v16i)sv;
    v16f e = __builtin_convertvector((bits >> 23) - splati(127), v16f);
    v16f f = (v16f)((bits & splati(0x007fffff)) | splati(0x3f800000)) - splat(1.0f);
    v16f q = splat(-9.118613060e-03f);
    q = q * f + splat(5.115636602e-02f);
    q = q * f + splat(-1.358066707e-01f);
    q = q * f + splat(2.401829440e-01f);
    q = q * f + splat(-3.463918877e-01f);
    q = q * f + splat(4.784177501e-01f);
    q = q * f + splat(-7.211279532e-01f);
    q = q * f + splat(1.442687955e+00f);
    return sv * (q * f + e);
}

/* sum over the rows of sqrt(max(0, H(M) - (H(P) + H(Q)) / 2)), M = (P + Q) / 2, for
 * rows of `cols` floats stored contiguously; hp, hq hold the row entropies.  With p == q
 * it writes the row entropies themselves into ent (when not NULL). */
MULTIVERSION
static double js_rows(const float *p, const float *q, int32_t rows, int32_t cols, const float *hp,
                      const float *hq, float *ent) {
    double total = 0;
    int32_t full = cols / VW * VW, tail = cols - full;
    for (int32_t r = 0; r < rows; r++) {
        const float *pr = p + (size_t)r * cols, *qr = q + (size_t)r * cols;
        /* with s = p + q and m = s / 2:  H(M) = -sum m log2 m = (sum s - sum s log2 s) / 2 */
        v16f acc = splat(0.0f), sum = splat(0.0f);
        for (int32_t j = 0; j < full; j += VW) {
            v16f a, b;
            memcpy(&a, pr + j, sizeof a);
            memcpy(&b, qr + j, sizeof b);
            v16f sv = a + b;
            acc += slog2s(sv);
            sum += sv;
        }
        if (tail) { /* the last partial vector, zero padded */
            v16f a = splat(0.0f), b = splat(0.0f);
            memcpy(&a, pr + full, (size_t)tail * sizeof(float));
            memcpy(&b, qr + full, (size_t)tail * sizeof(float));
            v16f sv = a + b;
            acc += slog2s(sv);
            sum += sv;
        }
        /* pairwise reduction: halves added as vectors, not 16 scalar adds in a chain */
        v16f d = sum - acc;
        float v8[8], v4[4];
        for (int k = 0; k < 8; k++)
            v8[k] = d[k] + d[k + 8];
        for (int k = 0; k < 4; k++)
            v4[k] = v8[k] + v8[k + 4];
        float hm = 0.5f * ((v4[0] + v4[2]) + (v4[1] + v4[3]));
        if (ent) {
            ent[r] = hm;
            continue;
        }
        double jsd = (double)hm - 0.5 * ((double)hp[r] + (double)hq[r]);
        total += jsd > 0 ? sqrt(jsd) : 0.0;
    }
    return total;
}

typedef struct js_job {
    const float *heads;      /* [count][rows][cols], contiguous */
    const float *ent;        /* [count][rows] */
    int32_t count, rows, cols;
    double *out;
    int64_t pair_begin, pair_end;  /* pairs (a < b) in row-major order */
    int *stop;               /* shared by the jobs: set when progress said stop */
    atn_progress_fn progress;      /* job 0 only (the calling thread) */
    void *progress_user;
} js_job;

static void *js_worker(void *arg) {
    js_job *j = arg;
    size_t hsz = (size_t)j->rows * j->cols;
    int64_t idx = 0;
    for (int32_t a = 0; a < j->count; a++) {
        int64_t row_pairs = j->count - a - 1;
        if (idx + row_pairs <= j->pair_begin) {
            idx += row_pairs;
            continue;
        }
        for (int32_t b = a + 1; b < j->count; b++, idx++) {
            if (idx < j->pair_begin)
                continue;
            if (idx >= j->pair_end)
                return NULL;
            if (j->progress) {
                double done = (double)(idx - j->pair_begin) / (double)(j->pair_end - j->pair_begin);
                if (!j->progress(done, ATN_STAGE_SIMILARITY, j->progress_user))
                    __atomic_store_n(j->stop, 1, __ATOMIC_RELAXED);
            }
            if (__atomic_load_n(j->stop, __ATOMIC_RELAXED))
                return NULL;
            double s = js_rows(j->heads + a * hsz, j->heads + b * hsz, j->rows, j->cols,
                               j->ent + (size_t)a * j->rows, j->ent + (size_t)b * j->rows, NULL);
            double v = j->rows ? s / j->rows : 0.0;
            j->out[(size_t)a * j->count + b] = v;
            j->out[(size_t)b * j->count + a] = v;
        }
    }
    return NULL;
}

static int n_threads_for(double work) {
    if (work < 2e6)
        return 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("ATTNSCOPE_THREADS");
    if (env && atoi(env) > 0)
        n = atoi(env);
    return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

static atn_status js_matrix(const float *heads, int32_t count, int32_t rows, int32_t cols, double *out,
                            atn_progress_fn progress, void *progress_user, atn_error *err) {
    float *ent = malloc((size_t)count * (rows ? rows : 1) * sizeof *ent);
    if (!ent)
        return atn_error_set(err, ATN_E_NOMEM, "similarity: out of memory for %d row entropies", count * rows);
    size_t hsz = (size_t)rows * cols;
    for (int32_t c = 0; c < count; c++) {
        js_rows(heads + c * hsz, heads + c * hsz, rows, cols, NULL, NULL, ent + (size_t)c * rows);
        out[(size_t)c * count + c] = 0.0;
    }
    int64_t pairs = (int64_t)count * (count - 1) / 2;
    int nt = n_threads_for((double)pairs * rows * cols);
    if (nt > pairs)
        nt = pairs > 0 ? (int)pairs : 1;
    js_job jobs[16];
    pthread_t tid[16];
    bool started[16] = {0};
    int stop = 0;
    for (int t = 0; t < nt; t++) {
        jobs[t] = (js_job){heads, ent, count, rows, cols, out, pairs * t / nt, pairs * (t + 1) / nt, &stop,
                           t == 0 ? progress : NULL, progress_user};
        if (t > 0)
            started[t] = pthread_create(&tid[t], NULL, js_worker, &jobs[t]) == 0;
    }
    js_worker(&jobs[0]);
    for (int t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            js_worker(&jobs[t]); /* no thread: do its share here */
    }
    free(ent);
    if (stop)
        return atn_error_set(err, ATN_E_CANCELLED, "similarity: cancelled");
    return ATN_OK;
}

/* cosine / Pearson: Gram matrix of the flattened maps (centred for Pearson) */
static atn_status gram_matrix(const float *heads, int32_t count, size_t len, bool center, double *out,
                              atn_error *err) {
    /* only Pearson needs a (centred) copy: fresh pages are expensive on some VMs */
    float *copy = center ? malloc((size_t)count * len * sizeof *copy) : NULL;
    float *g = malloc((size_t)count * count * sizeof *g);
    if ((center && !copy) || !g) {
        free(copy);
        free(g);
        return atn_error_set(err, ATN_E_NOMEM, "similarity: out of memory for %d maps of %zu values", count, len);
    }
    const float *x = heads;
    if (center) {
        memcpy(copy, heads, (size_t)count * len * sizeof *copy);
        x = copy;
        for (int32_t c = 0; c < count; c++) {
            float *r = copy + (size_t)c * len;
            double mean = 0;
            for (size_t i = 0; i < len; i++)
                mean += r[i];
            mean /= (double)(len ? len : 1);
            for (size_t i = 0; i < len; i++)
                r[i] = (float)(r[i] - mean);
        }
    }
    /* norms in double, so the diagonal does not depend on sgemm's summation order */
    double *norm = malloc((size_t)count * sizeof *norm);
    if (!norm) {
        free(copy);
        free(g);
        return atn_error_set(err, ATN_E_NOMEM, "similarity: out of memory");
    }
    for (int32_t c = 0; c < count; c++) {
        const float *r = x + (size_t)c * len;
        double s = 0;
        for (size_t i = 0; i < len; i++)
            s += (double)r[i] * r[i];
        norm[c] = sqrt(s);
    }
    cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, count, (int)len, 1.0f, x, (int)len, 0.0f, g, count);
    for (int32_t a = 0; a < count; a++) {
        out[(size_t)a * count + a] = norm[a] > 0 ? 1.0 : 0.0;
        for (int32_t b = a + 1; b < count; b++) {
            double d = norm[a] * norm[b];
            /* a constant map has no variance: its correlation is undefined; report 0 */
            double v = d > 0 ? g[(size_t)a * count + b] / d : 0.0;
            v = v > 1 ? 1 : v < -1 ? -1 : v;
            out[(size_t)a * count + b] = out[(size_t)b * count + a] = v;
        }
    }
    free(norm);
    free(copy);
    free(g);
    return ATN_OK;
}

atn_status atn_similarity_matrix(const float *heads, int32_t count, int32_t rows, int32_t cols, atn_metric metric,
                                 double *out, atn_error *err) {
    if (count <= 0 || rows < 0 || cols < 0 || !heads || !out)
        return atn_error_set(err, ATN_E_INVALID, "similarity: bad sizes (count %d, rows %d, cols %d)", count, rows,
                             cols);
    if (metric != ATN_METRIC_JS)
        return gram_matrix(heads, count, (size_t)rows * cols, metric == ATN_METRIC_PEARSON, out, err);
    return js_matrix(heads, count, rows, cols, out, NULL, NULL, err);
}

/* ---- the similarity object ---------------------------------------------------------- */

atn_similarity *atn_similarity_new(int32_t n_layers, int32_t n_heads, atn_metric metric, atn_scope scope,
                                   int32_t layer, atn_error *err) {
    if (n_layers <= 0 || n_heads <= 0 || n_layers > 4096 || n_heads > 4096) {
        atn_error_set(err, ATN_E_INVALID, "similarity: model shape %d layers x %d heads is not valid", n_layers,
                      n_heads);
        return NULL;
    }
    if ((unsigned)metric > ATN_METRIC_PEARSON || (unsigned)scope > ATN_SCOPE_MODEL) {
        atn_error_set(err, ATN_E_INVALID, "similarity: unknown metric or scope");
        return NULL;
    }
    if (scope == ATN_SCOPE_LAYER && (layer < 0 || layer >= n_layers)) {
        atn_error_set(err, ATN_E_INVALID, "similarity: layer %d is out of range (the model has layers 0..%d)", layer,
                      n_layers - 1);
        return NULL;
    }
    int32_t count = scope == ATN_SCOPE_LAYER ? n_heads : n_layers * n_heads;
    if (count > 65536) {
        atn_error_set(err, ATN_E_NOMEM, "similarity: %d heads are too many to compare pairwise", count);
        return NULL;
    }
    sim_acc *a = calloc(1, sizeof *a);
    if (!a) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        return NULL;
    }
    atn_similarity *s = &a->pub;
    s->metric = metric;
    s->scope = scope;
    s->layer = scope == ATN_SCOPE_LAYER ? layer : -1;
    s->n_layers = n_layers;
    s->n_heads = n_heads;
    s->count = count;
    size_t cc = (size_t)count * count;
    s->layer_of = malloc((size_t)count * sizeof *s->layer_of);
    s->head_of = malloc((size_t)count * sizeof *s->head_of);
    s->values = calloc(cc, sizeof *s->values);
    a->sum = calloc(cc, sizeof *a->sum);
    s->order = malloc((size_t)count * sizeof *s->order);
    s->merge_a = malloc((size_t)count * sizeof *s->merge_a);
    s->merge_b = malloc((size_t)count * sizeof *s->merge_b);
    s->merge_height = malloc((size_t)count * sizeof *s->merge_height);
    if (!s->layer_of || !s->head_of || !s->values || !a->sum || !s->order || !s->merge_a || !s->merge_b ||
        !s->merge_height) {
        atn_similarity_free(s);
        atn_error_set(err, ATN_E_NOMEM, "similarity: out of memory for %d x %d values", count, count);
        return NULL;
    }
    for (int32_t c = 0; c < count; c++) {
        s->layer_of[c] = scope == ATN_SCOPE_LAYER ? layer : c / n_heads;
        s->head_of[c] = c % n_heads;
        s->order[c] = c;
    }
    return s;
}

void atn_similarity_free(atn_similarity *s) {
    if (!s)
        return;
    free(s->layer_of);
    free(s->head_of);
    free(s->values);
    free(acc_of(s)->sum);
    free(s->order);
    free(s->merge_a);
    free(s->merge_b);
    free(s->merge_height);
    free(acc_of(s)->layer_heads);
    free(acc_of(s));
}

/* Whether cap's layers lack heads (atn_capture.layer_heads below n_heads somewhere). */
static bool has_absent(const atn_capture *cap) {
    for (int32_t l = 0; cap->layer_heads && l < cap->n_layers; l++)
        if (cap->layer_heads[l] < cap->n_heads)
            return true;
    return false;
}

atn_similarity *atn_similarity_new_capture(const atn_capture *cap, atn_metric metric, atn_scope scope, int32_t layer,
                                           atn_error *err) {
    if (!cap) {
        atn_error_set(err, ATN_E_INVALID, "similarity: no capture");
        return NULL;
    }
    atn_similarity *s = atn_similarity_new(cap->n_layers, cap->n_heads, metric, scope, layer, err);
    if (!s || !has_absent(cap))
        return s;
    sim_acc *a = acc_of(s);
    if (!(a->layer_heads = malloc((size_t)cap->n_layers * sizeof *a->layer_heads))) {
        atn_similarity_free(s);
        atn_error_set(err, ATN_E_NOMEM, "similarity: out of memory");
        return NULL;
    }
    memcpy(a->layer_heads, cap->layer_heads, (size_t)cap->n_layers * sizeof *a->layer_heads);
    /* the heads the layers have, in the same order; the arrays (made for every head) have room */
    int32_t c = 0;
    for (int32_t l = scope == ATN_SCOPE_LAYER ? layer : 0; l < (scope == ATN_SCOPE_LAYER ? layer + 1 : cap->n_layers);
         l++)
        for (int32_t h = 0; h < cap->layer_heads[l]; h++, c++) {
            s->layer_of[c] = l;
            s->head_of[c] = h;
            s->order[c] = c;
        }
    s->count = c;
    return s;
}

/* Adds one sentence's maps: attn [L - l0][H][nq][nk] from layer l0 on (l0 0: a capture's
 * [L][H][nq][nk]; l0 = the scope's layer: that layer's heads alone, atn_similarity_add_layer),
 * or, when attn is NULL, heads read one at a time: stack's (atn_stack_head_read), else cap's own
 * (nq = nk = cap->n, atn_capture_head_read); the query rows whose qmask is set and the keys
 * whose kmask is set (NULL: all). */
static atn_status sim_add_maps(atn_similarity *s, const atn_capture *cap, const atn_stack *stack, const float *attn,
                               int32_t l0, int32_t nq, int32_t nk, const int32_t *qmask, const int32_t *kmask,
                               atn_error *err) {
    int32_t *qkeep = malloc((size_t)(nq > 0 ? nq : 1) * sizeof *qkeep);
    int32_t *kkeep = malloc((size_t)(nk > 0 ? nk : 1) * sizeof *kkeep);
    if (!qkeep || !kkeep) {
        free(qkeep);
        free(kkeep);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    int32_t mq = 0, mk = 0;
    for (int32_t i = 0; i < nq; i++)
        if (!qmask || qmask[i])
            qkeep[mq++] = i;
    for (int32_t i = 0; i < nk; i++)
        if (!kmask || kmask[i])
            kkeep[mk++] = i;
    if (mq == 0 || mk == 0) { /* nothing unmasked: this sentence adds nothing */
        free(qkeep);
        free(kkeep);
        return ATN_OK;
    }
    /* The compared heads are contiguous in the capture ([L][H][nq][nk]: one layer's heads, or
     * all of them).  Use them in place when nothing is masked and every weight is finite;
     * otherwise pack the unmasked rows and keys, with non-finite weights (a diverged
     * model) counted as 0 so they do not poison every pair. */
    size_t map = (size_t)nq * nk;
    const float *base = attn ? attn + (size_t)(s->layer_of[0] - l0) * s->n_heads * map : NULL;
    size_t total = (size_t)s->count * map;
    /* heads on demand are made one at a time and packed; so are the heads of layers that lack
       some (not contiguous) */
    bool in_place = mq == nq && mk == nk && base && !acc_of(s)->layer_heads;
    float *scratch = base ? NULL : malloc(map * sizeof *scratch);
    for (size_t i = 0; in_place && i < total; i++)
        in_place = isfinite(base[i]);
    size_t hsz = (size_t)mq * mk;
    float *packed = in_place ? NULL : malloc((size_t)s->count * hsz * sizeof *packed);
    double *vals = malloc((size_t)s->count * s->count * sizeof *vals);
    if ((!in_place && !packed) || !vals || (!base && !scratch)) {
        free(scratch);
        free(qkeep);
        free(kkeep);
        free(packed);
        free(vals);
        return atn_error_set(err, ATN_E_NOMEM, "similarity: out of memory packing %d heads of %d x %d tokens",
                             s->count, mq, mk);
    }
    for (int32_t c = 0; packed && c < s->count; c++) {
        const float *a = attn ? attn + ((size_t)(s->layer_of[c] - l0) * s->n_heads + s->head_of[c]) * map
                         : stack ? atn_stack_head_read(cap, stack, s->layer_of[c], s->head_of[c], scratch, err)
                                 : atn_capture_head_read(cap, s->layer_of[c], s->head_of[c], scratch, err);
        if (!a) {
            free(scratch);
            free(qkeep);
            free(kkeep);
            free(packed);
            free(vals);
            return err ? err->status : ATN_E_INVALID;
        }
        float *dst = packed + c * hsz;
        for (int32_t r = 0; r < mq; r++) {
            const float *src = a + (size_t)qkeep[r] * nk;
            float *d = dst + (size_t)r * mk;
            for (int32_t k = 0; k < mk; k++) {
                float v = src[kkeep[k]];
                d[k] = isfinite(v) ? v : 0.0f;
            }
        }
    }
    const float *heads = packed ? packed : base;
    atn_status st;
    if (s->metric == ATN_METRIC_JS)
        st = js_matrix(heads, s->count, mq, mk, vals, acc_of(s)->progress, acc_of(s)->progress_user, err);
    else
        st = gram_matrix(heads, s->count, hsz, s->metric == ATN_METRIC_PEARSON, vals, err);
    if (st == ATN_OK) {
        for (size_t i = 0; i < (size_t)s->count * s->count; i++)
            acc_of(s)->sum[i] += vals[i];
        s->n_sentences++;
    }
    free(scratch);
    free(qkeep);
    free(kkeep);
    free(packed);
    free(vals);
    return st;
}

/* The checks every add makes before reading a capture. */
static atn_status sim_check(const atn_similarity *s, const atn_capture *cap, atn_error *err) {
    if (!s || !cap)
        return atn_error_set(err, ATN_E_INVALID, "similarity: no capture");
    if (acc_of(s)->finished)
        return atn_error_set(err, ATN_E_INVALID, "similarity: add after finish");
    if (!atn_capture_has_heads(cap))
        return atn_error_set(err, ATN_E_INVALID, "similarity: the run kept no attention (keep_attention is off)");
    return ATN_OK;
}

atn_status atn_similarity_add(atn_similarity *s, const atn_capture *cap, atn_error *err) {
    atn_status st = sim_check(s, cap, err);
    if (st)
        return st;
    if (cap->n_layers != s->n_layers || cap->n_heads != s->n_heads)
        return atn_error_set(err, ATN_E_SHAPE, "similarity: capture has %d layers x %d heads, expected %d x %d",
                             cap->n_layers, cap->n_heads, s->n_layers, s->n_heads);
    const int32_t *lh = acc_of(s)->layer_heads;
    if (lh ? !cap->layer_heads || memcmp(lh, cap->layer_heads, (size_t)s->n_layers * sizeof *lh) : has_absent(cap))
        return atn_error_set(err, ATN_E_SHAPE, "similarity: the capture's layers have %s head counts than the "
                             "comparison was made for (atn_similarity_new_capture)", lh ? "other" : "fewer");
    const int32_t *mask = cap->enc ? cap->enc->mask : NULL;
    return sim_add_maps(s, cap, NULL, cap->attn, 0, cap->n, cap->n, mask, mask, err);
}

atn_status atn_similarity_add_layer(atn_similarity *s, const atn_encoding *enc, const float *heads, atn_error *err) {
    if (!s || !enc || !heads)
        return atn_error_set(err, ATN_E_INVALID, "similarity: no sentence or no heads");
    if (s->scope != ATN_SCOPE_LAYER)
        return atn_error_set(err, ATN_E_INVALID, "similarity: one layer's heads need a layer-scope similarity");
    if (acc_of(s)->finished)
        return atn_error_set(err, ATN_E_INVALID, "similarity: add after finish");
    if (acc_of(s)->layer_heads)   /* a streamed forward's layer has every head */
        return atn_error_set(err, ATN_E_SHAPE, "similarity: one layer's heads go to a comparison of every head "
                             "(atn_similarity_new)");
    return sim_add_maps(s, NULL, NULL, heads, s->layer, enc->n, enc->n, enc->mask, enc->mask, err);
}

atn_status atn_similarity_add_stack(atn_similarity *s, const atn_capture *cap, atn_stack_kind kind,
                                    atn_error *err) {
    if (kind == ATN_STACK_ENCODER)
        return atn_similarity_add(s, cap, err);
    atn_status st = sim_check(s, cap, err);
    if (st)
        return st;
    const atn_stack *k = atn_capture_stack(cap, kind);
    if (!k)
        return atn_error_set(err, ATN_E_INVALID, "similarity: the capture has no %s stack (not an "
                             "encoder-decoder's)", kind == ATN_STACK_CROSS ? "cross" : "decoder");
    if (k->n_layers != s->n_layers || k->n_heads != s->n_heads)
        return atn_error_set(err, ATN_E_SHAPE, "similarity: the %s stack has %d layers x %d heads, expected %d x %d",
                             k->name, k->n_layers, k->n_heads, s->n_layers, s->n_heads);
    /* the target has no padding: every query row; cross keys: the source's unmasked tokens */
    const int32_t *kmask = kind == ATN_STACK_CROSS && cap->enc ? cap->enc->mask : NULL;
    if (kind == ATN_STACK_CROSS && cap->enc && cap->enc->n != k->n_k)
        return atn_error_set(err, ATN_E_SHAPE, "similarity: the cross stack has %d source keys, the source %d tokens",
                             k->n_k, cap->enc->n);
    return sim_add_maps(s, cap, k, k->attn, 0, k->n_q, k->n_k, NULL, kmask, err);
}

atn_status atn_similarity_finish(atn_similarity *s, atn_error *err) {
    if (!s)
        return atn_error_set(err, ATN_E_INVALID, "similarity: NULL");
    if (acc_of(s)->finished)
        return ATN_OK;
    int32_t c = s->count;
    size_t cc = (size_t)c * c;
    for (size_t i = 0; i < cc; i++)
        s->values[i] = s->n_sentences ? acc_of(s)->sum[i] / (double)s->n_sentences : 0.0;
    double *dist = malloc(cc * sizeof *dist);
    if (!dist)
        return atn_error_set(err, ATN_E_NOMEM, "similarity: out of memory");
    bool is_dist = atn_metric_is_distance(s->metric);
    for (size_t i = 0; i < cc; i++)
        dist[i] = is_dist ? s->values[i] : 1.0 - s->values[i];
    for (int32_t a = 0; a < c; a++)
        dist[(size_t)a * c + a] = 0.0;
    atn_status st = atn_cluster_average_linkage(dist, c, s->order, s->merge_a, s->merge_b, s->merge_height, err);
    free(dist);
    if (st == ATN_OK) {
        acc_of(s)->finished = true;
        s->clustered = true;
    }
    return st;
}

void atn_similarity_set_progress(atn_similarity *s, atn_progress_fn progress, void *user_data) {
    if (!s)
        return;
    acc_of(s)->progress = progress;
    acc_of(s)->progress_user = user_data;
}

atn_status atn_similarity_compute(const atn_capture *cap, atn_metric metric, atn_scope scope, int32_t layer,
                                  atn_similarity **out, atn_error *err) {
    return atn_similarity_compute_progress(cap, metric, scope, layer, NULL, NULL, out, err);
}

atn_status atn_similarity_compute_progress(const atn_capture *cap, atn_metric metric, atn_scope scope,
                                           int32_t layer, atn_progress_fn progress, void *user_data,
                                           atn_similarity **out, atn_error *err) {
    *out = NULL;
    if (!cap)
        return atn_error_set(err, ATN_E_INVALID, "similarity: no capture");
    atn_similarity *s = atn_similarity_new_capture(cap, metric, scope, layer, err);
    if (!s)
        return err ? err->status : ATN_E_INVALID;
    atn_similarity_set_progress(s, progress, user_data);
    atn_status st = atn_similarity_add(s, cap, err);
    if (st == ATN_OK)
        st = atn_similarity_finish(s, err);
    if (st) {
        atn_similarity_free(s);
        return st;
    }
    *out = s;
    return ATN_OK;
}

atn_status atn_similarity_compute_stack(const atn_capture *cap, atn_stack_kind kind, atn_metric metric,
                                        atn_scope scope, int32_t layer, atn_progress_fn progress, void *user_data,
                                        atn_similarity **out, atn_error *err) {
    *out = NULL;
    if (!cap)
        return atn_error_set(err, ATN_E_INVALID, "similarity: no capture");
    if (kind == ATN_STACK_ENCODER)
        return atn_similarity_compute_progress(cap, metric, scope, layer, progress, user_data, out, err);
    const atn_stack *k = atn_capture_stack(cap, kind);
    if (!k)
        return atn_error_set(err, ATN_E_INVALID, "similarity: the capture has no %s stack (not an "
                             "encoder-decoder's)", kind == ATN_STACK_CROSS ? "cross" : "decoder");
    atn_similarity *s = atn_similarity_new(k->n_layers, k->n_heads, metric, scope, layer, err);
    if (!s)
        return err ? err->status : ATN_E_INVALID;
    atn_similarity_set_progress(s, progress, user_data);
    atn_status st = atn_similarity_add_stack(s, cap, kind, err);
    if (st == ATN_OK)
        st = atn_similarity_finish(s, err);
    if (st) {
        atn_similarity_free(s);
        return st;
    }
    *out = s;
    return ATN_OK;
}

const char *atn_similarity_label(const atn_similarity *s, int32_t c, char *buf, size_t size) {
    if (!s || c < 0 || c >= s->count)
        snprintf(buf, size, "?");
    else if (s->scope == ATN_SCOPE_MODEL)
        snprintf(buf, size, "L%d\xc2\xb7H%d", s->layer_of[c], s->head_of[c]);
    else
        snprintf(buf, size, "H%d", s->head_of[c]);
    return buf;
}

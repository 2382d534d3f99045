/* attnscope bench: how fast the forward pass runs here, measured against this machine's own
 * sgemm in the same process (the machine is shared and noisy, so only same-run ratios are
 * worth quoting), what the capture costs, and how much memory it takes. */
#include "cli.h"
#include "bench-corpus.h"
#include "attnscope.h"

#include <cblas.h>
#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum { BENCH_MAX_LENGTHS = 32 };

typedef struct bench_result {
    int32_t n;
    int32_t repeat;
    double flops;               /* per forward, formula in forward_flops */
    double cap_med, cap_min;    /* seconds, full capture */
    double cap_cpu_med;         /* CPU seconds (all threads) per forward with full capture */
    double first;               /* seconds of the first forward (includes one-time packing) */
    double nocap_med, nocap_min;/* seconds, keep_attention = keep_trace_inputs = false */
    double overhead;            /* median over pairs of (with capture / without) - 1 */
    double sgemm_gflops;        /* median, at the model's largest GEMM shape for n tokens */
    int32_t sgemm_m, sgemm_n, sgemm_k;
    size_t run_bytes, run_bytes_nocap, attn_bytes;
    long rss_kb;                /* peak RSS with the model and one full-capture run */
    /* --precision bf16|fp16: the same forward in fp32, each right after the reduced one */
    double fp32_med;            /* seconds, full capture, fp32 */
    double speedup;             /* median over pairs of (fp32 time / reduced time) */
    /* --heads-on-demand: the "capture" run keeps Q, K, V; one head per layer made again */
    double head_med, head_max;  /* seconds per atn_capture_head */
    double head_cpu_med;        /* its CPU seconds (all threads), median */
} bench_result;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double min_of(const double *v, int n) {
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

/* FLOPs of one forward, matrix products only; a multiply-add counts 2.
 *   per layer:  Q, K, V and W_O projections   2·n·d·(2·dq + 2·dkv)
 *               scores Q_h K_h^T, all heads   H · 2·n·n·k = 2·n·n·dq
 *               context P_h V_h, all heads    2·n·n·dq
 *               FFN up [n,d]x[d,f], down      2 · 2·n·d·f   (gated, SwiGLU: gate too, 3 · 2·n·d·f)
 *   dq = H·k, dkv = KV·k (grouped K/V heads: KV < H); BERT: dq = dkv = d, so
 *   total = L · (8·n·d² + 4·n²·d + 4·n·d·f)
 * A causal model's scores are counted in full: both tools compute the n x n products
 * whole and mask them, as Hugging Face's eager attention does.
 * Not counted: embeddings, LayerNorm / RMSNorm, softmax, GELU / SiLU, the rotation, bias and
 * residual adds (O(n·d + H·n²) each, a few percent of the arithmetic at most). */
static double forward_flops(const atn_config *c, int32_t n) {
    double L = c->n_layers, d = c->d_model, f = c->use_ffn ? c->d_ffn : 0, nn = n;
    double k = c->d_head > 0 ? c->d_head : d / c->n_heads, dq = c->n_heads * k;
    double dkv = (c->n_kv_heads > 0 ? c->n_kv_heads : c->n_heads) * k, mats = c->gated_ffn ? 3 : 2;
    return L * (2 * nn * d * (2 * dq + 2 * dkv) + 4 * nn * nn * dq + 2 * mats * nn * d * f);
}

/* An encoder-decoder's decoder (T5, BART, Marian) over t target tokens and n source tokens,
 * the same products counted the same way, per decoder layer:
 *   self-attention          2·t·d·4dq + 4·t²·dq
 *   cross-attention         2·t·d·2dq (Q, W_O) + 2·n·d·2dq (K, V of the encoder's output)
 *                           + 4·t·n·dq (scores, context)
 *   FFN                     2·mats·t·d·f
 * (the bench's target is the start token alone, t = 1: the cross K/V projections of the n
 * source rows are most of it).  0 for any other model. */
static double decoder_flops(const atn_model *m, const atn_config *c, int32_t n, int32_t t) {
    if (!atn_model_is_encoder_decoder(m))
        return 0;
    double Ld = atn_model_decoder_layers(m), d = c->d_model, f = c->use_ffn ? c->d_ffn : 0, nn = n, tt = t;
    double dq = c->n_heads * (c->d_head > 0 ? c->d_head : d / c->n_heads), mats = c->gated_ffn ? 3 : 2;
    return Ld * (2 * tt * d * 4 * dq + 4 * tt * tt * dq + 2 * tt * d * 2 * dq + 2 * nn * d * 2 * dq + 4 * tt * nn * dq +
                 2 * mats * tt * d * f);
}

/* Bytes of layer weights one forward reads (each matrix once): 340 MB for bert-base.  Biases
 * and norms as BERT has them (a few KB either way for the others). */
static double layer_weight_bytes(const atn_config *c) {
    double d = c->d_model, f = c->use_ffn ? c->d_ffn : 0;
    double k = c->d_head > 0 ? c->d_head : d / c->n_heads, dq = c->n_heads * k;
    double dkv = (c->n_kv_heads > 0 ? c->n_kv_heads : c->n_heads) * k, mats = c->gated_ffn ? 3 : 2;
    return c->n_layers * (d * (2 * dq + 2 * dkv) + dq + 2 * dkv + d + 2 * d + mats * d * f + f + d + 2 * d) *
           sizeof(float);
}

/* Bytes of all F32 weights: the layers and the embeddings (words, positions, types, their
 * LayerNorm); 438 MB for bert-base (the pooler and heads aside).  A rotary decoder has no
 * position or type table: the words and the final norm (the head tied to the words). */
static double model_weight_bytes(const atn_config *c) {
    double e = c->d_model;
    if (c->gated_ffn)
        return layer_weight_bytes(c) + ((double)c->vocab_size + 1) * e * sizeof(float);
    return layer_weight_bytes(c) + ((double)c->vocab_size + c->max_positions + c->type_vocab_size + 2) * e * sizeof(float);
}

/* GFLOP/s of cblas_sgemm at C[m,n] = A[m,k] · B[n,k]^T (the layout atn_linear uses),
 * median of `repeat` timed calls after one warm-up. */
static double sgemm_gflops(int32_t m, int32_t n, int32_t k, int repeat) {
    float *a = malloc((size_t)m * k * sizeof(float)), *b = malloc((size_t)n * k * sizeof(float));
    float *c = malloc((size_t)m * n * sizeof(float));
    double *t = malloc((size_t)repeat * sizeof(double));
    double g = 0;
    if (a && b && c && t) {
        for (size_t i = 0; i < (size_t)m * k; i++)
            a[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
        for (size_t i = 0; i < (size_t)n * k; i++)
            b[i] = (float)((i * 40503u) % 1000) * 1e-3f - 0.5f;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
        for (int r = 0; r < repeat; r++) {
            double t0 = now_s();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
            t[r] = now_s() - t0;
        }
        g = 2.0 * m * n * k / median(t, repeat) / 1e9;
    }
    free(a), free(b), free(c), free(t);
    return g;
}

/* ---- memory read bandwidth: the limit at a few tokens --------------------------- */

typedef struct read_part {
    const uint64_t *p;
    size_t n;
    uint64_t x;
} read_part;

/* Reads its part as four sequential streams at once (more misses in flight than one
 * stream: 30-65 GB/s here against 28-32 for one stream per thread). */
static void *read_thread(void *arg) {
    read_part *r = arg;
    size_t q = r->n / 4;
    const uint64_t *s0 = r->p, *s1 = s0 + q, *s2 = s1 + q, *s3 = s2 + q;
    uint64_t a = 0, b = 0, c = 0, d = 0;
    for (size_t i = 0; i + 2 <= q; i += 2) {
        a ^= s0[i] ^ s0[i + 1];
        b ^= s1[i] ^ s1[i + 1];
        c ^= s2[i] ^ s2[i + 1];
        d ^= s3[i] ^ s3[i + 1];
    }
    r->x = a ^ b ^ c ^ d;
    return NULL;
}

/* GB/s of `threads` threads each reading its share of a 256 MB buffer (bigger than a
 * core's cache here), best of 3 passes after a warm-up pass. */
static double read_gbps(int threads) {
    enum { MAXT = 64 };
    size_t bytes = (size_t)256 << 20, words = bytes / sizeof(uint64_t);
    uint64_t *buf = atn_alloc_big(bytes);
    if (!buf)
        return 0;
    for (size_t i = 0; i < words; i++)
        buf[i] = i * 0x9E3779B97F4A7C15ull;
    threads = threads < 1 ? 1 : threads > MAXT ? MAXT : threads;
    double best = 0;
    uint64_t sink = 0;
    for (int pass = 0; pass < 4; pass++) {
        read_part parts[MAXT];
        pthread_t tids[MAXT];
        bool started[MAXT] = {false};
        double t0 = now_s();
        for (int t = 0; t < threads; t++) {
            parts[t] = (read_part){buf + words / threads * t, words / threads, 0};
            if (t && !(started[t] = pthread_create(&tids[t], NULL, read_thread, &parts[t]) == 0))
                read_thread(&parts[t]);   /* no thread: read it here */
        }
        read_thread(&parts[0]);
        for (int t = 1; t < threads; t++)
            if (started[t])
                pthread_join(tids[t], NULL);
        double gbps = bytes / (now_s() - t0) / 1e9;
        for (int t = 0; t < threads; t++)
            sink ^= parts[t].x;
        if (pass > 0 && gbps > best)
            best = gbps;
    }
    free(buf);
    return sink == 42 ? best * 1.0000001 : best;   /* keeps the reads */
}

/* The benchmark input: [CLS] some ids [SEP] with both token types, nothing padded.
 * bench/peer_torch.py builds the same ids. */
static atn_status bench_encoding(const atn_model *m, int32_t n, atn_encoding **enc, atn_error *err) {
    if (atn_model_kind_of(m) == ATN_MODEL_TOY)
        return atn_model_encode_toy(m, NULL, enc, err);
    return cli_encode_tokens(m, n, enc, err);   /* the ids --tokens N gives every command */
}

static long peak_rss_kb(void) {
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/* One sequence length: warm-up, then `repeat` forwards with full capture, alternating with
 * `repeat` forwards without capture (alternating, so drift on a shared machine hits both). */
static atn_status bench_length(const atn_model *m, int32_t n, int repeat, bool capture_cost,
                               const atn_run_options *base, bench_result *r, atn_run **keep, atn_error *err) {
    const atn_config *c = atn_model_config(m);
    memset(r, 0, sizeof *r);
    atn_encoding *enc = NULL;
    atn_status st = bench_encoding(m, n, &enc, err);
    if (st)
        return st;
    n = enc->n;
    r->n = n;
    r->repeat = repeat;
    r->flops = forward_flops(c, n) + decoder_flops(m, c, n, 1);   /* the run's target: the start token */

    /* the model's largest product: the FFN, [n,d] x [d,f] (or the projections without one) */
    r->sgemm_m = n;
    r->sgemm_n = c->use_ffn ? c->d_ffn : c->d_model;
    r->sgemm_k = c->d_model;
    if (base->device != ATN_DEVICE_CUDA)
        r->sgemm_gflops = sgemm_gflops(r->sgemm_m, r->sgemm_n, r->sgemm_k, repeat < 20 ? 20 : repeat);

    atn_run_options cap = *base, nocap = *base;
    cap.keep_attention = cap.keep_trace_inputs = true;   /* base->attention_on_demand: Q, K, V only */
    nocap.keep_attention = nocap.keep_trace_inputs = false;
    nocap.attention_on_demand = false;
    r->run_bytes = atn_run_bytes_needed(c, n, &cap);
    r->run_bytes_nocap = atn_run_bytes_needed(c, n, &nocap);
    r->attn_bytes = (size_t)c->n_layers * c->n_heads * n * n * sizeof(float);

    bool reduced = base->precision != ATN_PRECISION_FP32;
    atn_run_options cap32 = cap;
    cap32.precision = ATN_PRECISION_FP32;
    atn_run *run_cap = atn_run_new(m), *run_nocap = capture_cost ? atn_run_new(m) : NULL;
    atn_run *run32 = reduced ? atn_run_new(m) : NULL;
    double *tc = calloc((size_t)repeat, sizeof *tc), *tn = calloc((size_t)repeat, sizeof *tn);
    double *tcpu = calloc((size_t)repeat, sizeof *tcpu), *t32 = calloc((size_t)repeat, sizeof *t32);
    if (!run_cap || (capture_cost && !run_nocap) || (reduced && !run32) || !tc || !tn || !tcpu || !t32) {
        st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
        goto done;
    }
    double t_first = now_s();
    if ((st = atn_run_forward(run_cap, enc, &cap, err)))
        goto done;
    r->first = now_s() - t_first;
    r->rss_kb = peak_rss_kb();   /* the model and one run with full capture */
    if (capture_cost && (st = atn_run_forward(run_nocap, enc, &nocap, err)))
        goto done;
    if (reduced && (st = atn_run_forward(run32, enc, &cap32, err)))
        goto done;
    for (int i = 0; i < repeat; i++) {
        double t0 = now_s(), c0 = cpu_s();
        if ((st = atn_run_forward(run_cap, enc, &cap, err)))
            goto done;
        tc[i] = now_s() - t0;
        tcpu[i] = cpu_s() - c0;
        if (capture_cost) {
            t0 = now_s();
            if ((st = atn_run_forward(run_nocap, enc, &nocap, err)))
                goto done;
            tn[i] = now_s() - t0;
        }
        if (reduced) {
            t0 = now_s();
            if ((st = atn_run_forward(run32, enc, &cap32, err)))
                goto done;
            t32[i] = now_s() - t0;
        }
    }
    if (reduced) {
        double *ratio = calloc((size_t)repeat, sizeof *ratio);
        if (ratio) {
            for (int i = 0; i < repeat; i++)
                ratio[i] = t32[i] / tc[i];
            r->speedup = median(ratio, repeat);
            free(ratio);
        }
        r->fp32_med = median(t32, repeat);
    }
    if (capture_cost) {
        /* each forward with capture is paired with the one without right after it: the median
           of the pair ratios is steadier than a ratio of medians when the machine drifts */
        double *ratio = calloc((size_t)repeat, sizeof *ratio);
        if (ratio) {
            for (int i = 0; i < repeat; i++)
                ratio[i] = tc[i] / tn[i];
            r->overhead = median(ratio, repeat) - 1;
            free(ratio);
        }
    }
    if (base->attention_on_demand) {   /* one head per layer (head l mod H), made again */
        const atn_capture *cc = atn_run_capture(run_cap);
        float *head = malloc((size_t)n * n * sizeof(float));
        double *th = calloc((size_t)c->n_layers * 2, sizeof *th), *thc = th ? th + c->n_layers : NULL;
        for (int32_t l = 0; head && th && l < c->n_layers && st == ATN_OK; l++) {
            double t0 = now_s(), c0 = cpu_s();
            st = atn_capture_head(cc, l, l % c->n_heads, head, err);
            th[l] = now_s() - t0;
            thc[l] = cpu_s() - c0;
        }
        if (head && th && st == ATN_OK) {
            r->head_cpu_med = median(thc, c->n_layers);
            r->head_med = median(th, c->n_layers);
            r->head_max = th[0];
            for (int32_t l = 1; l < c->n_layers; l++)
                r->head_max = th[l] > r->head_max ? th[l] : r->head_max;
        } else if (st == ATN_OK) {
            st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
        }
        free(head), free(th);
        if (st)
            goto done;
    }
    r->cap_min = min_of(tc, repeat);
    r->cap_med = median(tc, repeat);
    r->cap_cpu_med = median(tcpu, repeat);
    if (capture_cost) {
        r->nocap_min = min_of(tn, repeat);
        r->nocap_med = median(tn, repeat);
    }
done:
    free(tc), free(tn), free(tcpu), free(t32);
    atn_run_free(run_nocap);
    atn_run_free(run32);
    if (st == ATN_OK && keep) {
        atn_run_free(*keep);
        *keep = run_cap;
    } else {
        atn_run_free(run_cap);
    }
    atn_encoding_free(enc);
    return st;
}

/* Writes PREFIX.attn.npy [L,H,n,n] and PREFIX.hidden.npy [L+1,n,d] of the last run, for
 * bench/peer_torch.py --check. */
static bool dump_capture(const char *prefix, const atn_capture *cap) {
    char path[4096];
    atn_error err = {0};
    int64_t s3[3] = {cap->n_layers + 1, cap->n, cap->d_model};
    snprintf(path, sizeof path, "%s.attn.npy", prefix);   /* heads on demand: made one at a time */
    if (atn_npy_write_attention(path, cap, NULL, NULL, &err) != ATN_OK)
        return cli_fail(&err), false;
    snprintf(path, sizeof path, "%s.hidden.npy", prefix);
    if (atn_npy_write_f32(path, cap->hidden, s3, 3, &err) != ATN_OK)
        return cli_fail(&err), false;
    return true;
}

static void print_text(const char *title, const atn_config *c, const atn_run_options *o, const bench_result *res,
                       int nres, bool capture_cost, size_t packed, double rbw) {
    printf("attnscope bench: %s, %d layers x %d heads, d %d, f %d", title, c->n_layers, c->n_heads, c->d_model,
           c->d_ffn);
    if (c->n_kv_heads > 0 && c->n_kv_heads != c->n_heads)   /* grouped-query attention */
        printf(" (%s), %d K/V heads, heads %d wide", c->gated_ffn ? "gated" : "plain", c->n_kv_heads, c->d_head);
    printf("\n");
    if (o->device == ATN_DEVICE_CUDA)
        printf("device cuda; the sgemm reference is not measured on a GPU\n");
    else
        printf("device cpu: OpenBLAS kernel %s, %d threads; sgemm reference at the FFN shape [n,%d]x[%d,%d]\n",
               atn_blas_core_name(), openblas_get_num_threads(), c->d_model, c->d_model,
               c->use_ffn ? c->d_ffn : c->d_model);
    printf("%6s %9s %9s %9s %8s %8s %7s", "tokens", "fwd ms", "min ms", "cpu ms", "GFLOP/s", "sgemm", "% sgemm");
    if (capture_cost)
        printf(" %10s %8s", "nocap ms", "capture");
    bool reduced = o->precision != ATN_PRECISION_FP32;
    if (reduced)
        printf(" %9s %8s", "fp32 ms", "vs fp32");
    printf(" %9s %9s %10s\n", "wts GB/s", "peak RSS", "capture MB");
    for (int i = 0; i < nres; i++) {
        const bench_result *r = &res[i];
        double g = r->flops / r->cap_med / 1e9;
        printf("%6d %9.2f %9.2f %9.2f %8.1f", r->n, r->cap_med * 1e3, r->cap_min * 1e3, r->cap_cpu_med * 1e3, g);
        if (r->sgemm_gflops > 0)
            printf(" %8.1f %6.0f%%", r->sgemm_gflops, 100 * g / r->sgemm_gflops);
        else
            printf(" %8s %7s", "-", "-");
        if (capture_cost)
            printf(" %10.2f %+7.1f%%", r->nocap_med * 1e3, 100 * r->overhead);
        if (reduced)
            printf(" %9.2f %7.2fx", r->fp32_med * 1e3, r->speedup);
        printf(" %9.1f %6.0f MB %10.1f\n", layer_weight_bytes(c) / r->cap_med / 1e9, r->rss_kb * 1024.0 / 1e6,
               (r->run_bytes - r->run_bytes_nocap) / 1e6);
        if (o->attention_on_demand)
            printf("       heads on demand (Q, K, V kept, no [L][H][n][n]): one head per layer made again in %.1f ms "
                   "median, %.1f ms at most (CPU, all threads: %.1f ms median)\n", r->head_med * 1e3, r->head_max * 1e3,
                   r->head_cpu_med * 1e3);
    }
    if (c->gated_ffn)
        printf("GFLOP/s = L(2nd(2dq + 2dkv) + 4n²dq + 6ndf) / median time, dq = H k = %d, dkv = KV k = %d (the gated\n"
               "MLP's three products; the causal scores counted in full, as both tools compute them);\n",
               c->n_heads * c->d_head, (c->n_kv_heads > 0 ? c->n_kv_heads : c->n_heads) * c->d_head);
    else
        printf("GFLOP/s = L(8nd² + 4n²d + 4ndf) / median time; ");
    printf("cpu ms = CPU time of all threads per forward;\n"
           "capture = median over pairs of (forward with full capture / the one without right after) - 1;\n"
           "wts GB/s = %.0f MB of layer weights / median time; peak RSS = model + one full-capture run;\n"
           "capture MB = what keeping attention and trace inputs adds to the run's memory.\n",
           layer_weight_bytes(c) / 1e6);
    if (rbw > 0)
        printf("memory read bandwidth, same process (%d threads reading 256 MB): %.1f GB/s; the forward streamed "
               "its layer weights at %.0f%% of it at %d tokens\n", o->threads > 0 ? o->threads :
               openblas_get_num_threads(), rbw, 100 * layer_weight_bytes(c) / res[0].cap_med / 1e9 / rbw, res[0].n);
    if (reduced)
        printf("precision %s: every product's operands rounded to %s, fp32 sums; vs fp32 = median over pairs of\n"
               "(the same forward in fp32 right after / this one).  %% sgemm is against the fp32 sgemm:\n%s\n",
               atn_precision_name(o->precision), atn_precision_name(o->precision),
               o->device == ATN_DEVICE_CUDA ? "not measured on a GPU."
               : "with no bf16/fp16 instructions in use there is no reduced-precision peak to measure, so a\n"
                 "% of peak is not meaningful here (the CPU emulates the rounding in fp32).");
    printf("first forward of the process: %.1f ms at %d tokens", res[0].first * 1e3, res[0].n);
    if (packed)
        printf(" (includes packing the layer weights for the CPU kernels, once per model: %.1f MB)", packed / 1e6);
    printf("\n");
}

static void print_json(const char *title, const char *shape, const atn_config *c, const atn_run_options *o,
                       const bench_result *res, int nres, bool capture_cost, size_t packed, double rbw) {
    printf("{\"tool\": \"attnscope\", \"model\": ");
    cli_json_string(stdout, title);
    printf(", \"shape\": ");
    if (shape)
        cli_json_string(stdout, shape);
    else
        printf("null");
    printf(", \"layers\": %d, \"heads\": %d, \"kv_heads\": %d, \"d_head\": %d, \"d_model\": %d, \"d_ffn\": %d, "
           "\"gated_ffn\": %s, \"vocab_size\": %d, \"device\": \"%s\", \"blas_kernel\": ", c->n_layers, c->n_heads,
           c->n_kv_heads > 0 ? c->n_kv_heads : c->n_heads, c->d_head > 0 ? c->d_head : c->d_model / c->n_heads,
           c->d_model, c->d_ffn, c->gated_ffn ? "true" : "false", c->vocab_size,
           o->device == ATN_DEVICE_CUDA ? "cuda" : "cpu");
    cli_json_string(stdout, atn_blas_core_name());
    printf(", \"threads\": %d, \"layer_weight_bytes\": %.0f, \"model_weight_bytes\": %.0f, "
           "\"packed_weight_bytes\": %zu, \"first_forward_ms\": %.3f, \"read_gbps\": ",
           o->threads > 0 ? o->threads : openblas_get_num_threads(), layer_weight_bytes(c), model_weight_bytes(c), packed,
           res[0].first * 1e3);
    cli_json_number(stdout, rbw > 0 ? rbw : 0.0 / 0.0);
    printf(", \"precision\": \"%s\"", atn_precision_name(o->precision));
    printf(", \"results\": [");
    for (int i = 0; i < nres; i++) {
        const bench_result *r = &res[i];
        printf("%s\n  {\"tokens\": %d, \"repeat\": %d, \"flops\": %.0f, \"forward_ms_median\": %.4f, "
               "\"forward_ms_min\": %.4f, \"forward_cpu_ms_median\": %.4f, \"gflops\": %.3f, ", i ? "," : "",
               r->n, r->repeat, r->flops, r->cap_med * 1e3, r->cap_min * 1e3, r->cap_cpu_med * 1e3,
               r->flops / r->cap_med / 1e9);
        printf("\"sgemm_shape\": [%d, %d, %d], \"sgemm_gflops\": ", r->sgemm_m, r->sgemm_n, r->sgemm_k);
        cli_json_number(stdout, r->sgemm_gflops > 0 ? r->sgemm_gflops : 0.0 / 0.0);
        printf(", \"percent_of_sgemm\": ");
        cli_json_number(stdout, r->sgemm_gflops > 0 ? 100 * r->flops / r->cap_med / 1e9 / r->sgemm_gflops : 0.0 / 0.0);
        printf(", \"nocapture_ms_median\": ");
        cli_json_number(stdout, capture_cost ? r->nocap_med * 1e3 : 0.0 / 0.0);
        printf(", \"nocapture_ms_min\": ");
        cli_json_number(stdout, capture_cost ? r->nocap_min * 1e3 : 0.0 / 0.0);
        printf(", \"capture_overhead_percent\": ");
        cli_json_number(stdout, capture_cost ? 100 * r->overhead : 0.0 / 0.0);
        printf(", \"percent_of_read_bandwidth\": ");
        cli_json_number(stdout, rbw > 0 ? 100 * layer_weight_bytes(c) / r->cap_med / 1e9 / rbw : 0.0 / 0.0);
        if (o->precision != ATN_PRECISION_FP32)
            printf(", \"fp32_ms_median\": %.4f, \"speedup_vs_fp32\": %.4f", r->fp32_med * 1e3, r->speedup);
        printf(", \"weights_gbps\": %.3f, \"peak_rss_bytes\": %.0f, \"run_bytes\": %zu, "
               "\"run_bytes_nocapture\": %zu, \"capture_bytes\": %zu, \"attention_bytes\": %zu",
               layer_weight_bytes(c) / r->cap_med / 1e9, r->rss_kb * 1024.0, r->run_bytes, r->run_bytes_nocap,
               r->run_bytes - r->run_bytes_nocap, r->attn_bytes);
        if (o->attention_on_demand)
            printf(", \"head_on_demand_ms_median\": %.4f, \"head_on_demand_ms_max\": %.4f, "
                   "\"head_on_demand_cpu_ms_median\": %.4f", r->head_med * 1e3, r->head_max * 1e3, r->head_cpu_med * 1e3);
        printf("}");
    }
    printf("\n]}\n");
}

/* --versus SHAPE: the same lengths on a random model of another shape in the same process,
 * and each length's GFLOP/s side by side (the GPT-2 shape against bert-base: the pre-LN
 * blocks should cost what BERT's do). */
static int bench_versus(const char *shape, uint64_t seed, const char *title,
                        const int32_t *lengths, int nlen, int repeat, const atn_run_options *opts,
                        const bench_result *res, bool json) {
    atn_error err = {0};
    atn_model *v = atn_model_new_random_shape(shape, seed, &err);
    if (!v) {
        atn_error_prefix(&err, "--versus");
        return cli_fail(&err);
    }
    bench_result vr[BENCH_MAX_LENGTHS];
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < nlen && rc == CLI_EXIT_OK; i++) {
        if (lengths[i] > atn_model_config(v)->max_positions) {
            cli_error("bench: --versus %s: --length %d is past its %d positions", shape, lengths[i],
                      atn_model_config(v)->max_positions);
            rc = CLI_EXIT_USAGE;
        } else if (bench_length(v, lengths[i], repeat, false, opts, &vr[i], NULL, &err)) {
            rc = cli_fail(&err);
        }
    }
    if (rc == CLI_EXIT_OK) {
        if (json) {
            printf("{\"versus\": ");
            cli_json_string(stdout, shape);
            printf(", \"lengths\": [");
            for (int i = 0; i < nlen; i++)
                printf("%s\n  {\"tokens\": %d, \"gflops\": %.3f, \"versus_gflops\": %.3f, \"ratio\": %.4f, "
                       "\"cpu_ratio\": %.4f}",
                       i ? "," : "", res[i].n, res[i].flops / res[i].cap_med / 1e9, vr[i].flops / vr[i].cap_med / 1e9,
                       (res[i].flops / res[i].cap_med) / (vr[i].flops / vr[i].cap_med),
                       (res[i].flops / res[i].cap_cpu_med) / (vr[i].flops / vr[i].cap_cpu_med));
            printf("\n]}\n");
        } else {
            printf("versus %s (random weights, seed %llu), same process, same lengths:\n", shape,
                   (unsigned long long)seed);
            printf("%6s %12s %12s %8s %10s\n", "tokens", "GFLOP/s", shape, "ratio", "cpu ratio");
            for (int i = 0; i < nlen; i++) {
                double g = res[i].flops / res[i].cap_med / 1e9, gv = vr[i].flops / vr[i].cap_med / 1e9;
                double gc = res[i].flops / res[i].cap_cpu_med, gvc = vr[i].flops / vr[i].cap_cpu_med;
                printf("%6d %12.1f %12.1f %7.1f%% %9.1f%%\n", res[i].n, g, gv, 100 * g / gv, 100 * gc / gvc);
            }
            printf("(first column: %s; cpu ratio: from the median CPU time per forward,\n"
                   "which leaves out the time a loaded machine makes a thread wait for a core)\n", title);
        }
    }
    atn_model_free(v);
    return rc;
}

/* Whether shape is one of atn_random_shape_names; if not, says so, naming the option and
 * listing the shapes. */
static bool shape_known(const char *option, const char *shape) {
    const char *const *names = atn_random_shape_names();
    char list[512] = "";
    for (int i = 0; names[i]; i++) {
        if (strcmp(names[i], shape) == 0)
            return true;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
    }
    cli_error("bench: %s \"%s\" is not a shape attnscope knows; the shapes: %s", option, shape, list);
    return false;
}

static void usage(void) {
    printf("Usage: attnscope bench [--model M | --shape bert-base|bert-large|bert-tiny|roberta-base|\n"
           "       distilbert-base|albert-base|gpt2|deberta-v3-base|qwen2.5-0.5b|smollm2-135m|llama-3.2-1b|\n"
           "       modernbert-base|t5-small]\n"
           "                       [--length N[,N...] | --tokens N[,N...]]\n"
           "                       [--repeat R] [--threads T] [--device cpu|cuda] [--precision fp32|bf16|fp16]\n"
           "                       [--json] [--no-capture] [--heads-on-demand]\n"
           "                       [--seed S] [--dump PREFIX] [--no-bandwidth] [--versus SHAPE]\n\n"
           "Times R forwards with full capture (median and min) and reports GFLOP/s from the FLOP count\n"
           "L(8nd² + 4n²d + 4ndf), next to cblas_sgemm's GFLOP/s at the model's largest GEMM shape measured\n"
           "in the same process.  --shape builds a model of that shape and family with random weights (default\n"
           "bert-base; nothing is downloaded).  qwen2.5-0.5b, smollm2-135m and llama-3.2-1b are those decoders'\n"
           "shapes (grouped K/V heads, rotary positions, gated MLP, their vocabularies), opened as their folders\n"
           "would be, from config.json keys as published and F32 weights held in memory (llama-3.2-1b: 4.9 GB);\n"
           "their FLOP count is L(2nd(2dq + 2dkv) + 4n²dq + 6ndf), dq = H k, dkv = KV k.  modernbert-base\n"
           "(GeGLU, a 128-token window in two layers of three: counted as dense, as Hugging Face computes it)\n"
           "and t5-small (encoder and decoder, the target the start token alone: the decoder's cross-attention\n"
           "K/V of the n source rows added to the count) open the same way.  Also times the same\n"
           "forward without capture (the capture's cost; --no-capture skips it), and reports peak RSS and the\n"
           "capture's bytes.  --length (or --tokens) takes a comma-separated list (default 128).  --dump PREFIX\n"
           "writes PREFIX.attn.npy and PREFIX.hidden.npy of the last length (bench/peer_torch.py --check\n"
           "compares them with PyTorch).  Last, it measures this machine's memory read bandwidth (the limit\n"
           "at a few tokens; --no-bandwidth skips it).\n"
           "--shape gpt2 is a GPT-2 (pre-LN, causal) of gpt2's size.  --versus SHAPE then times a random model\n"
           "of SHAPE at the same lengths in the same process and prints both GFLOP/s and their ratio, by\n"
           "wall time and by CPU time (e.g. --shape gpt2 --length 128,512 --versus bert-base).\n"
           "--precision bf16|fp16 times the reduced-precision forward and, paired with it in the same run,\n"
           "the fp32 one (\"vs fp32\").\n"
           "--heads-on-demand: the runs keep each layer's Q, K, V instead of every head's n x n (what a run\n"
           "over the memory budget does; peak RSS and capture MB say what that holds) and one head per layer\n"
           "is made again from them (atn_capture_head), its median and largest time printed.\n"
           "--corpus N [--corpus-lengths LO,HI] [--dump-corpus FILE]: a corpus pass instead, N sentences of\n"
           "LO..HI tokens (default 8,40) with the attention kept: one forward per sentence, stacked forwards\n"
           "exact (bit for bit; AVX-512 only) and stacked on any CPU; sentences/s, GFLOP/s and their ratio;\n"
           "FILE gets the sentences' ids for bench/peer_torch.py --corpus.\n");
}

int cmd_bench(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", "json", "no-capture", "no-bandwidth", "heads-on-demand", NULL};
    if (!cli_parse(&a, "attnscope bench", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help")) {
        usage();
        return 0;
    }
    bool ok = true, json = cli_flag(&a, "json"), capture_cost = !cli_flag(&a, "no-capture");
    bool no_bandwidth = cli_flag(&a, "no-bandwidth");
    atn_run_options opts;
    atn_run_options_init(&opts);
    ok = cli_run_options(&a, &opts);
    opts.pinned_host = true;   /* the run is reused for every repetition */
    opts.attention_on_demand = cli_flag(&a, "heads-on-demand");
    /* a benchmark measures the capture it names: a full capture over the budget is refused,
       not switched to heads on demand behind the figures' back */
    opts.on_demand_over_budget = false;
    long repeat = cli_get_int(&a, "repeat", 10, 1, 100000, &ok);
    long seed = cli_get_int(&a, "seed", 1, 0, LONG_MAX, &ok);
    const char *model_name = cli_get(&a, "model"), *shape = cli_get(&a, "shape");
    const char *lengths_s = cli_get(&a, "length"), *dump = cli_get(&a, "dump");
    const char *tokens_s = cli_get(&a, "tokens");   /* what other commands call it */
    const char *versus = cli_get(&a, "versus");
    long corpus = cli_get_int(&a, "corpus", 0, 1, 1000000, &ok);
    const char *corpus_lengths = cli_get(&a, "corpus-lengths"), *dump_ids = cli_get(&a, "dump-corpus");
    if (!ok || !cli_check_unused(&a))
        return CLI_EXIT_USAGE;
    if (model_name && shape) {
        cli_error("bench: give --model or --shape, not both");
        return CLI_EXIT_USAGE;
    }
    if (lengths_s && tokens_s) {
        cli_error("bench: give --length or --tokens (the same), not both");
        return CLI_EXIT_USAGE;
    }
    if (tokens_s)
        lengths_s = tokens_s;
    if ((shape && !shape_known("--shape", shape)) || (versus && !shape_known("--versus", versus)))
        return CLI_EXIT_USAGE;
    int32_t *lengths = NULL;
    int nlen = 1;
    if (lengths_s) {
        nlen = cli_parse_int_list(lengths_s, "--length", &lengths);
        if (nlen < 0)
            return CLI_EXIT_USAGE;
        if (nlen < 1 || nlen > BENCH_MAX_LENGTHS) {
            cli_error("bench: --length takes 1 to %d lengths", BENCH_MAX_LENGTHS);
            free(lengths);
            return CLI_EXIT_USAGE;
        }
    } else {
        lengths = malloc(sizeof *lengths);
        if (!lengths)
            return CLI_EXIT_FAIL;
        lengths[0] = 128;
    }

    atn_error err = {0};
    atn_model *m = NULL;
    char title[256];
    if (model_name) {
        m = atn_model_open(model_name, cli_progress, NULL, &err);
        snprintf(title, sizeof title, "%s", m ? atn_model_name(m) : model_name);
    } else {
        if (!shape)
            shape = "bert-base";
        m = atn_model_new_random_shape(shape, (uint64_t)seed, &err);
        snprintf(title, sizeof title, "%s (random weights, seed %ld)", shape, seed);
    }
    if (!m) {
        free(lengths);
        return cli_fail(&err);
    }
    const atn_config *c = atn_model_config(m);
    if (corpus) {   /* a corpus pass: loop against stacks (app/bench-corpus.c) */
        int32_t *lh = NULL, lo = 8, hi = 40;
        int got = corpus_lengths ? cli_parse_int_list(corpus_lengths, "--corpus-lengths", &lh) : 0;
        if (got < 0 || (corpus_lengths && (got != 2 || lh[0] < 1 || lh[1] < lh[0] || lh[1] > c->max_positions ||
                                           lh[1] > 512))) {
            if (got >= 0)
                cli_error("bench: --corpus-lengths takes LO,HI with 1 <= LO <= HI <= %d",
                          c->max_positions < 512 ? c->max_positions : 512);
            free(lh), free(lengths);
            atn_model_free(m);
            return CLI_EXIT_USAGE;
        }
        if (lh)
            lo = lh[0], hi = lh[1];
        free(lh);
        if (atn_model_kind_of(m) == ATN_MODEL_TOY) {
            cli_error("bench: --corpus needs a model with embeddings, not toy model \"%s\"", atn_model_name(m));
            free(lengths);
            atn_model_free(m);
            return CLI_EXIT_USAGE;
        }
        if (opts.threads > 0)
            openblas_set_num_threads(opts.threads);
        int rc = bench_corpus(m, title, corpus, lo, hi, (uint64_t)seed, &opts, dump_ids, json);
        free(lengths);
        atn_model_free(m);
        return rc;
    }
    for (int i = 0; i < nlen; i++) {
        bool toy = atn_model_kind_of(m) == ATN_MODEL_TOY;
        if (!toy && (lengths[i] < 1 || lengths[i] > c->max_positions)) {
            cli_error("bench: --length %d is outside 1..%d (the model's positions)", lengths[i],
                      c->max_positions);
            free(lengths);
            atn_model_free(m);
            return CLI_EXIT_USAGE;
        }
        if (toy && lengths_s && lengths[i] != atn_model_toy_n_tokens(m))
            fprintf(stderr, "attnscope: notice: toy model \"%s\" has its own %d tokens; --length is ignored\n",
                    atn_model_name(m), atn_model_toy_n_tokens(m));
    }
    if (opts.threads > 0)
        openblas_set_num_threads(opts.threads);

    bench_result res[BENCH_MAX_LENGTHS];
    atn_run *last = NULL;
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < nlen; i++) {
        atn_status st = bench_length(m, lengths[i], (int)repeat, capture_cost, &opts, &res[i],
                                     i == nlen - 1 && dump ? &last : NULL, &err);
        if (st) {
            rc = cli_fail(&err);
            break;
        }
        if (!json && nlen > 1)
            fprintf(stderr, "attnscope bench: %d tokens done\n", res[i].n);
    }
    if (rc == CLI_EXIT_OK) {
        size_t packed = atn_cpu_packed_bytes(m);
        /* after every RSS reading: its buffer would count in the peak */
        double rbw = opts.device != ATN_DEVICE_CUDA && !no_bandwidth
                         ? read_gbps(opts.threads > 0 ? opts.threads : openblas_get_num_threads()) : 0;
        if (json)
            print_json(title, model_name ? NULL : shape, c, &opts, res, nlen, capture_cost, packed, rbw);
        else
            print_text(title, c, &opts, res, nlen, capture_cost, packed, rbw);
        if (dump && last && !dump_capture(dump, atn_run_capture(last)))
            rc = CLI_EXIT_FAIL;
    }
    if (rc == CLI_EXIT_OK && versus)
        rc = bench_versus(versus, (uint64_t)seed, title, lengths, nlen, (int)repeat, &opts, res, json);
    atn_run_free(last);
    atn_model_free(m);
    free(lengths);
    return rc;
}

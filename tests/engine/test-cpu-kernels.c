/* The CPU forward's two paths (engine/forward/encoder.c) against a plain double-precision BERT
 * written here: the AVX-512 kernels with a team of 1, 2 and 3 threads (whole heads per
 * thread, heads split by rows, panels of 64 with a partial last one, head width 32 and 64,
 * padded keys) and, in a child process with ATTNSCOPE_CPU_KERNELS=blas, the cblas_sgemm
 * path.  Also: every thread count gives the same bits, masked keys get exactly 0, rows sum
 * to 1 within 1e-6, NaN is reported at the right layer, and cancelling works.
 * (Agreement with PyTorch: tests/hf and bench/peer_torch.py --check.) */
#include "check.h"
#include "forward/cpu-kernels.h"
#include "forward/encoder.h"
#include "core/family.h"
#include "attnscope.h"

#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the reference: y = x W^T + b etc. in double, straight from the definitions ---- */

static void ref_linear(double *y, const double *x, const float *w, const float *b, int n, int in, int out) {
    for (int r = 0; r < n; r++)
        for (int o = 0; o < out; o++) {
            double s = b ? b[o] : 0;
            for (int i = 0; i < in; i++)
                s += x[r * in + i] * w[(size_t)o * in + i];
            y[r * out + o] = s;
        }
}

static void ref_layernorm(double *x, const float *g, const float *b, int n, int d, double eps) {
    for (int r = 0; r < n; r++) {
        double m = 0, v = 0;
        for (int c = 0; c < d; c++)
            m += x[r * d + c];
        m /= d;
        for (int c = 0; c < d; c++)
            v += (x[r * d + c] - m) * (x[r * d + c] - m);
        v /= d;
        for (int c = 0; c < d; c++)
            x[r * d + c] = (x[r * d + c] - m) / sqrt(v + eps) * g[c] + b[c];
    }
}

/* att [L][H][n][n] and hidden [L+1][n][d] of model m on ids/types/mask */
static double gelu_tanh(double x) { return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }

/* gpt2: GPT-2's pre-LN blocks (h + Attn(LN1 h), then h + FFN(LN2 h)), no embedding LayerNorm
 * or token types, the causal mask, tanh GELU and ln_f after the last block. */
static void ref_forward(const atn_model *m, const int32_t *ids, const int32_t *types, const int32_t *mask, int n,
                        double *att, double *hidden, bool gpt2) {
    const atn_config *c = &m->cfg;
    int d = c->d_model, f = c->d_ffn, H = c->n_heads, k = d / H;
    const atn_weights *w = &m->w;
    double *x = hidden;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < d; j++)
            x[i * d + j] = (double)w->word_emb[(size_t)ids[i] * d + j] + w->pos_emb[(size_t)i * d + j] +
                           (gpt2 ? 0.0 : w->type_emb[(size_t)types[i] * d + j]);
    if (!gpt2)
        ref_layernorm(x, w->emb_ln_g, w->emb_ln_b, n, d, c->ln_eps);
    double *xn = malloc(sizeof(double) * n * d);
    double *q = malloc(sizeof(double) * n * d), *kk = malloc(sizeof(double) * n * d);
    double *v = malloc(sizeof(double) * n * d), *ctx = malloc(sizeof(double) * n * d);
    double *h1 = malloc(sizeof(double) * n * d), *ff = malloc(sizeof(double) * n * f);
    for (int l = 0; l < c->n_layers; l++) {
        const atn_layer_weights *lw = &w->layers[l];
        x = hidden + (size_t)l * n * d;
        double *out = x + (size_t)n * d;
        memcpy(xn, x, sizeof(double) * n * d);
        if (gpt2)
            ref_layernorm(xn, lw->ln1_g, lw->ln1_b, n, d, c->ln_eps);
        ref_linear(q, xn, lw->wq, lw->bq, n, d, d);
        ref_linear(kk, xn, lw->wk, lw->bk, n, d, d);
        ref_linear(v, xn, lw->wv, lw->bv, n, d, d);
        for (int h = 0; h < H; h++)
            for (int i = 0; i < n; i++) {
                double *p = att + (((size_t)l * H + h) * n + i) * n, mx = -INFINITY, sum = 0;
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int e = 0; e < k; e++)
                        s += q[i * d + h * k + e] * kk[j * d + h * k + e];
                    p[j] = s / sqrt((double)k);
                    if (mask[j] && !(gpt2 && j > i) && p[j] > mx)
                        mx = p[j];
                }
                for (int j = 0; j < n; j++)
                    sum += p[j] = mask[j] && !(gpt2 && j > i) ? exp(p[j] - mx) : 0;
                for (int j = 0; j < n; j++)
                    p[j] /= sum;
                for (int e = 0; e < k; e++) {
                    double s = 0;
                    for (int j = 0; j < n; j++)
                        s += p[j] * v[j * d + h * k + e];
                    ctx[i * d + h * k + e] = s;
                }
            }
        ref_linear(h1, ctx, lw->wo, lw->bo, n, d, d);
        if (gpt2) {
            for (int i = 0; i < n * d; i++)
                out[i] = x[i] + h1[i];   /* the residual stream */
            memcpy(h1, out, sizeof(double) * n * d);
            ref_layernorm(h1, lw->ln2_g, lw->ln2_b, n, d, c->ln_eps);
            ref_linear(ff, h1, lw->w1, lw->b1, n, d, f);
            for (int i = 0; i < n * f; i++)
                ff[i] = gelu_tanh(ff[i]);
            ref_linear(h1, ff, lw->w2, lw->b2, n, f, d);
            for (int i = 0; i < n * d; i++)
                out[i] += h1[i];
            if (l == c->n_layers - 1)
                ref_layernorm(out, w->final_ln_g, w->final_ln_b, n, d, c->ln_eps);
            continue;
        }
        for (int i = 0; i < n * d; i++)
            h1[i] += x[i];
        ref_layernorm(h1, lw->ln1_g, lw->ln1_b, n, d, c->ln_eps);
        ref_linear(ff, h1, lw->w1, lw->b1, n, d, f);
        for (int i = 0; i < n * f; i++)
            ff[i] = 0.5 * ff[i] * erfc(-ff[i] / sqrt(2.0));
        ref_linear(out, ff, lw->w2, lw->b2, n, f, d);
        for (int i = 0; i < n * d; i++)
            out[i] += h1[i];
        ref_layernorm(out, lw->ln2_g, lw->ln2_b, n, d, c->ln_eps);
    }
    free(q), free(kk), free(v), free(ctx), free(h1), free(ff), free(xn);
}

static double max_diff(const float *got, const double *want, size_t count) {
    double m = 0;
    for (size_t i = 0; i < count; i++) {
        double e = fabs(got[i] - want[i]);
        if (!(e <= m))
            m = e;
    }
    return m;
}

static int stop_at = -1;
static bool progress_fn(double fraction, atn_stage stage, void *user_data) {
    int *calls = user_data;
    (*calls)++;
    (void)stage;
    return stop_at < 0 || fraction * 2 < stop_at - 0.5;   /* 2 layers: fractions 0, 0.5, then 1 when done */
}

/* One configuration: d, heads, ffn width, tokens, padded tail. */
/* gpt2: the same random weights read as a GPT-2 (pre-LN, causal, tanh GELU, ln_f = the
 * embedding LayerNorm's tensors, no token types). */
static void check_config(int d, int H, int f, int n, int padded, bool blas, bool gpt2) {
    atn_config cfg;
    atn_error err = {0};
    CHECK(atn_random_shape_config("bert-tiny", &cfg, &err) == ATN_OK);
    cfg.d_model = d, cfg.n_heads = H, cfg.d_head = d / H, cfg.d_ffn = f, cfg.n_layers = 2;
    if (gpt2)
        cfg.act = ATN_ACT_GELU_TANH;
    atn_model *m = atn_model_new_random(&cfg, "test", 7, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return;
    if (gpt2) {
        m->family = atn_family_gpt2();
        m->w.final_ln_g = m->w.emb_ln_g;
        m->w.final_ln_b = m->w.emb_ln_b;
        m->w.type_emb = NULL;
    }
    int32_t *ids = malloc(sizeof *ids * n), *types = malloc(sizeof *types * n), *mask = malloc(sizeof *mask * n);
    for (int i = 0; i < n; i++) {
        ids[i] = (i * 7919 + 11) % cfg.vocab_size;
        types[i] = gpt2 ? 0 : i >= n / 2;
        mask[i] = i < n - padded;
    }
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_ids(m, ids, types, mask, n, &enc, &err) == ATN_OK);
    size_t na = (size_t)cfg.n_layers * H * n * n, nh = (size_t)(cfg.n_layers + 1) * n * d;
    double *att = malloc(sizeof(double) * na), *hid = malloc(sizeof(double) * nh);
    ref_forward(m, ids, types, mask, n, att, hid, gpt2);

    float *first_att = malloc(sizeof(float) * na), *first_hid = malloc(sizeof(float) * nh);
    for (int threads = 1; threads <= 3; threads++) {
        atn_run_options o;
        atn_run_options_init(&o);
        o.threads = threads;
        atn_run *run = atn_run_new(m);
        CHECK_MSG(atn_run_forward(run, enc, &o, &err) == ATN_OK, "%s", err.message);
        const atn_capture *cap = atn_run_capture(run);
        double da = max_diff(cap->attn, att, na), dh = max_diff(cap->hidden, hid, nh);
        fprintf(stderr, "%s%s d %d heads %d f %d n %d (%d padded), %d threads: max |attention - ref| %.2g, "
                "|hidden - ref| %.2g\n", blas ? "cblas" : "kernels", gpt2 ? " gpt2" : "", d, H, f, n, padded, threads,
                da, dh);
        CHECK_MSG(da <= 1e-5, "attention differs from the double reference by %g", da);
        CHECK_MSG(dh <= 2e-5, "hidden states differ from the double reference by %g", dh);
        CHECK(cap->nonfinite_layer == -1);
        double worst = 0;
        size_t masked_nonzero = 0;
        for (size_t r = 0; r < na / n; r++) {
            double s = 0;
            for (int j = 0; j < n; j++) {
                s += cap->attn[r * n + j];
                masked_nonzero += (!mask[j] || (gpt2 && j > (int)(r % n))) && cap->attn[r * n + j] != 0.0f;
            }
            worst = fabs(s - 1) > worst ? fabs(s - 1) : worst;
        }
        CHECK_MSG(worst <= 1e-6, "a row sums to 1 %+g", worst);
        CHECK(masked_nonzero == 0);
        if (threads == 1) {
            memcpy(first_att, cap->attn, sizeof(float) * na);
            memcpy(first_hid, cap->hidden, sizeof(float) * nh);
        } else {
            CHECK_MSG(memcmp(first_att, cap->attn, sizeof(float) * na) == 0 &&
                      memcmp(first_hid, cap->hidden, sizeof(float) * nh) == 0,
                      "%d threads do not give the same bits as 1", threads);
        }
        /* without capture: the same layer output */
        o.keep_attention = o.keep_trace_inputs = false;
        atn_run *bare = atn_run_new(m);
        CHECK(atn_run_forward(bare, enc, &o, &err) == ATN_OK);
        CHECK(memcmp(atn_run_capture(bare)->hidden, first_hid, sizeof(float) * nh) == 0);
        atn_run_free(bare);
        atn_run_free(run);
    }
    size_t want_packed = (size_t)cfg.n_layers * (4 * atn_packed_floats(d, d) + atn_packed_floats(f, d) +
                                                 atn_packed_floats(d, f)) * sizeof(float);
    CHECK_MSG(atn_cpu_packed_bytes(m) == (!blas && atn_cpu_kernels_usable() ? want_packed : 0),
              "packed bytes %zu", atn_cpu_packed_bytes(m));

    /* cancelling at layer 1, from the progress callback */
    atn_run_options o;
    atn_run_options_init(&o);
    o.threads = 2;
    int calls = 0;
    o.progress = progress_fn, o.user_data = &calls;
    stop_at = 1;
    atn_run *run = atn_run_new(m);
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_E_CANCELLED);
    CHECK(calls == 2);
    stop_at = -1;
    calls = 0;
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_OK);
    CHECK(calls == 3);
    atn_run_free(run);

    free(att), free(hid), free(first_att), free(first_hid);
    free(ids), free(types), free(mask);
    atn_encoding_free(enc);
    atn_model_free(m);
}

/* NaN in layer 1's output LayerNorm: reported as layer 1, whatever the thread count. */
static void check_nonfinite(void) {
    atn_config cfg;
    atn_error err = {0};
    atn_random_shape_config("bert-tiny", &cfg, &err);
    atn_model *m = atn_model_new_random(&cfg, "nan", 3, &err);
    ((float *)m->w.layers[1].ln2_g)[5] = NAN;
    int32_t ids[300];
    for (int i = 0; i < 300; i++)
        ids[i] = 1000 + i;
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_ids(m, ids, NULL, NULL, 300, &enc, &err) == ATN_OK);
    for (int threads = 1; threads <= 2; threads++) {
        atn_run_options o;
        atn_run_options_init(&o);
        o.threads = threads;
        atn_run *run = atn_run_new(m);
        CHECK(atn_run_forward(run, enc, &o, &err) == ATN_OK);
        CHECK_MSG(atn_run_capture(run)->nonfinite_layer == 1, "nonfinite_layer %d with %d threads",
                  atn_run_capture(run)->nonfinite_layer, threads);
        atn_run_free(run);
    }
    atn_encoding_free(enc);
    atn_model_free(m);
}

int main(int argc, char **argv) {
    const char *env = getenv("ATTNSCOPE_CPU_KERNELS");
    bool blas = env && strcmp(env, "blas") == 0;
    (void)argc;
    if (!blas)
        fprintf(stderr, "AVX-512 kernels %s on this CPU\n", atn_cpu_kernels_usable() ? "used" : "not usable");
    check_config(128, 2, 512, 300, 0, blas, false);     /* whole heads per thread, k 64 */
    check_config(96, 3, 200, 300, 17, blas, false);     /* 3 heads on 2 threads: rows split; k 32; f 200 */
    check_config(64, 1, 64, 37, 5, blas, false);        /* one head, too small for a second thread */
    check_config(128, 2, 512, 300, 0, blas, true);      /* GPT-2's pre-LN causal blocks, the same shapes */
    check_config(96, 3, 200, 300, 17, blas, true);
    check_config(64, 1, 64, 37, 5, blas, true);
    check_nonfinite();
    int rc = check_summary(blas ? "cpu-kernels (cblas path)" : "cpu-kernels");
    if (!blas) {   /* the same checks on the cblas path, in a child */
        pid_t pid = fork();
        if (pid == 0) {
            setenv("ATTNSCOPE_CPU_KERNELS", "blas", 1);
            execv("/proc/self/exe", argv);
            _exit(127);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "the cblas path failed (status %d)\n", status);
            rc = 1;
        }
    }
    return rc;
}

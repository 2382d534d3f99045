/* The one layer walk (engine/forward/layer.c): the description each kind of model gets
 * (atn_layer_desc_of, atn_layer_scale), and the ops the walk calls for it, in order, with
 * the right operands — recorded by an ops table that only writes down its calls, on real
 * models (BERT post-LN, GPT-2 pre-LN with its final norm, the worked example without norms
 * or MLP).  The numbers the walk computes are checked elsewhere against torch fixtures
 * (hf-families, golden, whatif, precision); this checks its structure. */
#include "check.h"
#include "attnscope.h"
#include "core/model-private.h"
#include "forward/layer.h"
#include "common/test-models.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The calls, as text: one line per op, e.g. "norm h1=N(x)" or "project q=x*Q". */
static char trail[8192];

/* Names a buffer of the walk (the walk is given distinct fake addresses, never read). */
static const char *name_of(const atn_walk *w, const void *p, int32_t l) {
    size_t t = w->trace_stride * (size_t)l, Md = (size_t)w->M * w->desc.d;
    if (!p)
        return "-";
    if (p == w->hidden + (size_t)l * Md)
        return "x";
    if (p == w->hidden + (size_t)(l + 1) * Md)
        return "out";
    if (p == w->q + t)
        return "q";
    if (p == w->k + t)
        return "k";
    if (p == w->v + t)
        return "v";
    if (p == w->ctx + t)
        return "ctx";
    if (p == w->ao + t)
        return "ao";
    if (p == w->h1)
        return "h1";
    if (p == w->ffn)
        return "ffn";
    if (p == w->final_g)
        return "final";
    const atn_layer_weights *lw = &w->layers[l];
    if (p == lw->ln1_g)
        return "ln1";
    if (p == lw->ln2_g)
        return "ln2";
    return "?";
}

static int32_t cur_layer;

static void say(const char *line) {
    strncat(trail, line, sizeof trail - strlen(trail) - 1);
    strncat(trail, "\n", sizeof trail - strlen(trail) - 1);
}

static const float *rec_operand(const atn_walk *w, const float *in, size_t count, int32_t l, atn_operand op) {
    (void)count;
    static const char *ops[] = {"weights", "input", "q", "k", "v", "probs", "context", "ffn_in", "ffn_mid"};
    char b[96];
    snprintf(b, sizeof b, "operand %s %s", ops[op], name_of(w, in, l));
    say(b);
    return in;
}

static void rec_project(const atn_walk *w, int tid, int nt, float *out, const float *in, int32_t l,
                        atn_weight_id which, const float *res, int act, int32_t i, int32_t o) {
    (void)tid, (void)nt;
    static const char *ws[] = {"Q", "K", "V", "O", "W1", "W2"};
    char b[128];
    snprintf(b, sizeof b, "project %s=%s*%s%s%s%s %dx%d", name_of(w, out, l), name_of(w, in, l), ws[which],
             res ? "+" : "", res ? name_of(w, res, l) : "", act >= 0 ? " act" : "", i, o);
    say(b);
}

static void rec_norm(const atn_walk *w, int tid, int nt, float *out, const float *in, const float *res,
                     const float *g, const float *bias) {
    (void)tid, (void)nt, (void)bias;
    char b[128];
    snprintf(b, sizeof b, "norm %s=%s(%s%s%s)", name_of(w, out, cur_layer), name_of(w, g, cur_layer),
             name_of(w, in, cur_layer), res ? "+" : "", res ? name_of(w, res, cur_layer) : "");
    say(b);
}

static void rec_attend(const atn_walk *w, int tid, int nt, int32_t l, float *q, float *k, float *v, float *ctx) {
    (void)tid, (void)nt;
    char b[96];
    snprintf(b, sizeof b, "attend %s=A(%s,%s,%s) scale %.6g", name_of(w, ctx, l), name_of(w, q, l), name_of(w, k, l),
             name_of(w, v, l), atn_layer_scale(&w->desc, l));
    say(b);
}

static void rec_add(const atn_walk *w, int tid, int nt, float *out, const float *a, const float *b2) {
    (void)tid, (void)nt;
    char b[96];
    snprintf(b, sizeof b, "add %s=%s%s%s", name_of(w, out, cur_layer), name_of(w, a, cur_layer), b2 ? "+" : "",
             b2 ? name_of(w, b2, cur_layer) : "");
    say(b);
}

static void rec_end(atn_walk *w, int tid, int nt, const float *out, int32_t l) {
    (void)tid, (void)nt;
    char b[64];
    snprintf(b, sizeof b, "END %s", name_of(w, out, l));
    say(b);
    cur_layer = l + 1;
}

static const atn_layer_ops rec_ops = {"record", rec_operand, rec_project, rec_norm, rec_attend, rec_add, rec_end};

/* The calls of layer `layer` of model m (a walk over all of them, one sequence of 3 rows,
 * buffers at fake distinct addresses). */
static const char *walk_trail(const atn_model *m, int32_t layer) {
    static float arena[1];   /* the addresses below are only compared, never read */
    const atn_config *c = &m->cfg;
    size_t M = 3, d = (size_t)c->d_model, L = (size_t)c->n_layers;
    char *base = (char *)arena;
    atn_walk_seq seq = {.row = 0, .n = 3, .nonfinite_layer = -1};
    atn_walk w = {.m = m, .ops = &rec_ops, .layers = m->w.layers, .final_g = m->w.final_ln_g,
                  .final_b = m->w.final_ln_b, .seq = &seq, .count = 1, .M = (int32_t)M, .temperature = 1.0f};
    size_t span = (L + 1) * M * d * sizeof(float) + 4096;
    w.hidden = (float *)(uintptr_t)(base + span);
    w.q = (float *)(uintptr_t)(base + 2 * span), w.k = (float *)(uintptr_t)(base + 3 * span);
    w.v = (float *)(uintptr_t)(base + 4 * span), w.ctx = (float *)(uintptr_t)(base + 5 * span);
    w.ao = (float *)(uintptr_t)(base + 6 * span), w.h1 = (float *)(uintptr_t)(base + 7 * span);
    w.ffn = (float *)(uintptr_t)(base + 8 * span);
    atn_layer_desc_of(m, &w.desc);
    static char one[4096];
    trail[0] = 0;
    cur_layer = 0;
    atn_layer_walk(&w, 0, 1);
    /* keep the lines of the wanted layer: those after the (layer)th "end" */
    const char *p = trail;
    for (int32_t e = 0; e < layer && p; e++) {
        p = strstr(p, "END ");
        p = p ? strchr(p, '\n') + 1 : NULL;
    }
    snprintf(one, sizeof one, "%s", p ? p : "");
    char *stop = strstr(one, "END ");
    if (stop)
        stop[strcspn(stop, "\n") + 1] = 0;
    return one;
}

static atn_model *open_hf(const char *name) {
    char path[4096];
    atn_error err = {0};
    atn_model *m = atn_model_open(hf_model_path(path, sizeof path, name), NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s: %s", name, err.message);
    return m;
}

static void bert_post_ln(void) {
    atn_model *m = open_hf("f32");
    if (!m)
        return;
    atn_layer_desc D;
    atn_layer_desc_of(m, &D);
    CHECK(D.norm_place == ATN_NORM_POST && D.norm_type == ATN_NORM_LAYERNORM && D.residual);
    CHECK(D.mlp == ATN_MLP_PLAIN && D.act == ATN_ACT_GELU && !D.final_norm);
    CHECK(D.d == 32 && D.f == 64 && D.heads == 4 && D.d_head == 8);
    CHECK_NEAR(D.eps, 1e-12, 1e-18);
    CHECK(atn_layer_scale(&D, 0) == 1.0f / sqrtf(8.0f) && atn_layer_scale(&D, 1) == atn_layer_scale(&D, 0));
    const char *want = "operand input x\n"
                       "project q=x*Q 32x32\nproject k=x*K 32x32\nproject v=x*V 32x32\n"
                       "attend ctx=A(q,k,v) scale 0.353553\n"
                       "operand context ctx\nproject ao=ctx*O 32x32\n"
                       "norm h1=ln1(ao+x)\n"
                       "operand ffn_in h1\nproject ffn=h1*W1 act 32x64\n"
                       "operand ffn_mid ffn\nproject out=ffn*W2+h1 64x32\n"
                       "norm out=ln2(out)\n"
                       "END out\n";
    CHECK_STR(walk_trail(m, 1), want);
    atn_model_free(m);
}

static void gpt2_pre_ln(void) {
    atn_model *m = open_hf("gpt2-scaled5");   /* scale_attn_by_inverse_layer_idx */
    if (!m)
        return;
    atn_layer_desc D;
    atn_layer_desc_of(m, &D);
    CHECK(D.norm_place == ATN_NORM_PRE && D.final_norm && D.residual && D.mlp == ATN_MLP_PLAIN);
    CHECK(D.scale_by_layer && !D.scale_none && D.d_head == 4);
    /* modeling_gpt2.py: w / value.size(-1) ** 0.5, then / float(layer_idx + 1) */
    for (int32_t l = 0; l < 3; l++)
        CHECK(atn_layer_scale(&D, l) == 0.5f / (float)(l + 1));
    const char *first = "norm h1=ln1(x)\noperand input h1\n"
                        "project q=h1*Q 20x20\nproject k=h1*K 20x20\nproject v=h1*V 20x20\n"
                        "attend ctx=A(q,k,v) scale 0.5\n"
                        "operand context ctx\nproject ao=ctx*O 20x20\n"
                        "add out=x+ao\nnorm h1=ln2(out)\n"
                        "operand ffn_in h1\nproject ffn=h1*W1 act 20x80\n"
                        "operand ffn_mid ffn\nproject h1=ffn*W2+out 80x20\n"
                        "add out=h1\n"
                        "END out\n";
    CHECK_STR(walk_trail(m, 0), first);
    /* the last layer ends with the final norm (ln_f), before the non-finite check */
    const char *last = walk_trail(m, 2);
    CHECK(strstr(last, "scale 0.166667\n") != NULL);
    CHECK(strstr(last, "add out=h1\nnorm out=final(out)\nEND out\n") != NULL);
    atn_model_free(m);
}

static void toy_without_norms(void) {
    atn_error err = {0};
    atn_model *m = atn_model_open("worked-example", NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return;
    atn_layer_desc D;
    atn_layer_desc_of(m, &D);
    /* the source article's example: no LayerNorm, no feed-forward, no residual */
    CHECK(D.norm_place == ATN_NORM_NONE && D.mlp == ATN_MLP_NONE && !D.residual && !D.final_norm);
    CHECK(atn_layer_scale(&D, 0) == 1.0f / sqrtf(2.0f));
    const char *want = "operand input x\n"
                       "project q=x*Q 4x4\nproject k=x*K 4x4\nproject v=x*V 4x4\n"
                       "attend ctx=A(q,k,v) scale 0.707107\n"
                       "operand context ctx\nproject ao=ctx*O 4x4\n"
                       "add h1=ao\nadd out=h1\n"
                       "END out\n";
    CHECK_STR(walk_trail(m, 0), want);
    atn_model_free(m);
}

/* ---- the packed ops' heads one at a time -------------------------------------------- */

/* The kernel's contract (cpu-kernels.h, atn_attention_rows) in plain C: rows [r0, r1) of one
 * head's softmax(scale q k^T + mask) and its context, in double. */
static void rows_stand_in(float *ctx, float *att_h, const float *q, const float *k, const float *v, size_t ld,
                          const float *mask, int32_t n, int32_t kd, int32_t r0, int32_t r1, float scale,
                          float *scratch, bool repack) {
    (void)scratch, (void)repack;
    for (int32_t i = r0; i < r1; i++) {
        double s[64], mx = -1e300, sum = 0;
        for (int32_t j = 0; j < n; j++) {
            double dot = 0;
            for (int32_t c = 0; c < kd; c++)
                dot += (double)q[(size_t)i * ld + c] * k[(size_t)j * ld + c];
            s[j] = dot * scale + mask[(size_t)i * n + j];
            mx = s[j] > mx ? s[j] : mx;
        }
        for (int32_t j = 0; j < n; j++)
            sum += (s[j] = exp(s[j] - mx));
        for (int32_t j = 0; j < n; j++)
            att_h[(size_t)i * n + j] = (float)(s[j] / sum);
        for (int32_t c = 0; c < kd; c++) {
            double acc = 0;
            for (int32_t j = 0; j < n; j++)
                acc += (double)att_h[(size_t)i * n + j] * v[(size_t)j * ld + c];
            ctx[(size_t)i * ld + c] = (float)acc;
        }
    }
}

typedef struct handed {
    const float *slots;      /* the walk's seq[0].attn */
    int32_t n, held, tid, count[16], last[16], bad;
    const float *want;       /* [H][n][n] each head made alone */
} handed;

static void on_head_done(void *user, int32_t l, int32_t h, const float *att, int32_t n) {
    handed *r = user;
    size_t nn = (size_t)n * n;
    /* from this thread's own [n][n], one of `held`, the head's whole probabilities, in order */
    if (l != 1 || h < 0 || h >= 16 || n != r->n || att != r->slots + (size_t)r->tid * nn || r->tid >= r->held ||
        h <= r->last[r->tid] || memcmp(att, r->want + (size_t)h * nn, nn * sizeof *att) != 0)
        r->bad++;
    if (h >= 0 && h < 16)
        r->count[h]++;
    if (r->tid < 16)
        r->last[r->tid] = h;
}

static void packed_heads_schedule(void) {
    CHECK(atn_packed_heads_held(1, 12) == 1 && atn_packed_heads_held(2, 12) == 2 &&
          atn_packed_heads_held(12, 12) == 12 && atn_packed_heads_held(16, 12) == 12 &&
          atn_packed_heads_held(0, 12) == 1 && atn_packed_heads_held(4, 1) == 1);
    enum { H = 12, KD = 4, N = 7 };
    const int32_t d = H * KD, n = N;
    static float q[N * H * KD], k[N * H * KD], v[N * H * KD], ctx[N * H * KD], want_ctx[N * H * KD];
    static float mask[N * N], want[H * N * N], slots[16 * N * N];
    for (int32_t i = 0; i < n * d; i++) {
        q[i] = (float)sin(0.37 * i), k[i] = (float)cos(0.23 * i + 1), v[i] = (float)sin(0.11 * i + 2);
    }
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++)
            mask[i * n + j] = j > i + 2 ? -1e4f : 0.0f;   /* something to honour */
    atn_layer_desc D = {.d = d, .heads = H, .d_head = KD};
    float scale = atn_layer_scale(&D, 1);
    for (int32_t h = 0; h < H; h++)
        rows_stand_in(want_ctx + h * KD, want + (size_t)h * n * n, q + h * KD, k + h * KD, v + h * KD, (size_t)d, mask,
                      n, KD, 0, n, scale, NULL, true);
    static const int threads[] = {1, 2, 5, 12, 16};
    for (int t = 0; t < 5; t++) {
        int nt = threads[t];
        handed r = {.slots = slots, .n = n, .held = atn_packed_heads_held(nt, H), .want = want};
        for (int i = 0; i < 16; i++)
            r.last[i] = -1;
        atn_walk_seq seq = {.n = n, .attn = slots, .mask = mask, .attn_one_head = true, .head_done = on_head_done,
                            .head_user = &r, .nonfinite_layer = -1};
        static float scratch[16];
        atn_walk w = {.seq = &seq, .count = 1, .M = n, .desc = D, .scratch = scratch, .scratch_floats = 1};
        memset(ctx, 0, sizeof ctx);
        memset(slots, 0, sizeof slots);
        for (int tid = 0; tid < nt; tid++) {   /* the team's threads, one after the other */
            r.tid = tid;
            atn_packed_attend_heads(&w, tid, nt, 1, q, k, v, ctx, rows_stand_in);
        }
        int once = 0;
        for (int32_t h = 0; h < H; h++)
            once += r.count[h] == 1;
        CHECK_MSG(once == H && r.bad == 0, "%d threads: %d of %d heads handed over once, %d bad", nt, once, H, r.bad);
        CHECK_MSG(memcmp(ctx, want_ctx, sizeof ctx) == 0, "%d threads: the context differs", nt);
        CHECK_MSG(nt >= H || r.held < H, "%d threads hold %d [n][n]", nt, r.held);
        /* nothing written past the slots held */
        bool clean = true;
        for (size_t i = (size_t)r.held * n * n; i < sizeof slots / sizeof *slots; i++)
            clean &= slots[i] == 0.0f;
        CHECK_MSG(clean, "%d threads wrote past their %d [n][n]", nt, r.held);
    }
}

int main(void) {
    packed_heads_schedule();
    bert_post_ln();
    gpt2_pre_ln();
    toy_without_norms();
    return check_summary("layer");
}

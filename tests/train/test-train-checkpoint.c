/* Gradient checkpointing (train.h's checkpoint; engine/train/train-model.c):
 *  - the gradients, weights and probe attention of 3 steps equal those without it bit for
 *    bit: a pre-LN decoder and a post-LN encoder with attention and hidden dropout on (the
 *    recompute draws the same masks), and a BF16 decoder; the attention variants too
 *    (Longformer in a decoder and an encoder, chunked, Linformer in FP32 and BF16: its
 *    projections K' = E K and V' = F V are recomputed with the layer);
 *  - memory, measured: at 4 layers the bytes the trainer allocates for the layers'
 *    activations (atn_trainer_activation_bytes, counted as allocated) fall by at least 3x,
 *    and the peak resident memory (getrusage's ru_maxrss of a child process that builds the
 *    trainer and runs one step, via wait4) falls by at least 80% of the counted saving, so
 *    the count is memory the process really stopped touching. */
#include "check.h"
#include "train/train-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void same_as_without(atn_train_options o, const char *what) {
    atn_error err = {0};
    o.checkpoint = false;
    atn_trainer *a = atn_trainer_new(&o, &err);
    o.checkpoint = true;
    atn_trainer *b = atn_trainer_new(&o, &err);
    CHECK_MSG(a && b, "%s: %s", what, err.message);
    if (!a || !b) {
        atn_trainer_free(a), atn_trainer_free(b);
        return;
    }
    atn_train_stats sa, sb;
    for (int s = 0; s < 3; s++) {
        CHECK(atn_trainer_compute(a, &sa, &err) == ATN_OK && atn_trainer_compute(b, &sb, &err) == ATN_OK);
        CHECK_MSG(sa.loss == sb.loss, "%s step %d: loss %.9g vs %.9g", what, s, sa.loss, sb.loss);
        CHECK_MSG(!memcmp(a->arena + a->total, b->arena + b->total, a->total * sizeof(float)),
                  "%s step %d: the gradients differ", what, s);
        CHECK(atn_trainer_update(a, &sa, &err) == ATN_OK && atn_trainer_update(b, &sb, &err) == ATN_OK);
    }
    CHECK_MSG(!memcmp(a->arena, b->arena, 4 * a->total * sizeof(float)), "%s: the weights differ", what);
    /* the probe's attention, every layer (the checkpointed trainer keeps sequence 0's apart) */
    int32_t n = atn_trainer_tokens(a), *ids = calloc((size_t)n, sizeof *ids);
    for (int32_t i = 0; i < n; i++)
        ids[i] = ATN_TR_NSPECIAL + i % 4;
    CHECK(atn_trainer_probe(a, ids, n, &err) == ATN_OK && atn_trainer_probe(b, ids, n, &err) == ATN_OK);
    int32_t keys = atn_trainer_attention_keys(a);   /* n, or Linformer's k */
    CHECK(keys == atn_trainer_attention_keys(b));
    for (int32_t l = 0; l < o.layers; l++)
        CHECK_MSG(!memcmp(atn_trainer_attention(a, l, NULL), atn_trainer_attention(b, l, NULL),
                          (size_t)o.heads * n * keys * sizeof(float)),
                  "%s: layer %d's probe attention differs", what, (int)l);
    free(ids);
    size_t la = 0, lb = 0;
    atn_trainer_activation_bytes(a, &la), atn_trainer_activation_bytes(b, &lb);
    fprintf(stderr, "%s: 3 steps equal bit for bit; the layers' activations %zu -> %zu bytes\n", what, la, lb);
    atn_trainer_free(a), atn_trainer_free(b);
}

static atn_train_options mem_options(bool checkpoint) {
    atn_train_options o;
    atn_train_options_init(&o);
    o.layers = 4, o.d_model = 128, o.heads = 4, o.batch = 32, o.length = 16;
    o.checkpoint = checkpoint;
    return o;
}

/* Peak RSS in bytes of a child that builds the trainer and runs one compute (0: failed). */
static long long child_peak(bool checkpoint) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        atn_train_options o = mem_options(checkpoint);
        atn_error err = {0};
        atn_trainer *t = atn_trainer_new(&o, &err);
        int ok = t && atn_trainer_compute(t, NULL, &err) == ATN_OK;
        _exit(ok ? 0 : 1);   /* no free: the peak is what counts */
    }
    int status = 0;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        return 0;
    return (long long)ru.ru_maxrss * 1024;
}

static void test_memory(void) {
    long long peak_full = child_peak(false), peak_ckpt = child_peak(true);
    CHECK(peak_full > 0 && peak_ckpt > 0);
    atn_error err = {0};
    atn_train_options o = mem_options(false);
    atn_trainer *a = atn_trainer_new(&o, &err);
    o.checkpoint = true;
    atn_trainer *b = atn_trainer_new(&o, &err);
    CHECK(a && b);
    if (!a || !b) {
        atn_trainer_free(a), atn_trainer_free(b);
        return;
    }
    size_t la = 0, lb = 0, ta = atn_trainer_activation_bytes(a, &la), tb = atn_trainer_activation_bytes(b, &lb);
    double saved = (double)ta - (double)tb, rss_saved = (double)(peak_full - peak_ckpt);
    fprintf(stderr,
            "4 layers, d_model 128, batch 32, 34 tokens: activations %.2f -> %.2f MiB (the layers' %.2f -> %.2f MiB, "
            "%.2fx); peak RSS of a child %.2f -> %.2f MiB (%.2f MiB less, counted %.2f MiB)\n",
            ta / 1048576.0, tb / 1048576.0, la / 1048576.0, lb / 1048576.0, (double)la / (double)lb,
            peak_full / 1048576.0, peak_ckpt / 1048576.0, rss_saved / 1048576.0, saved / 1048576.0);
    CHECK_MSG((double)la >= 3.0 * (double)lb, "the layers' activations fell %.2fx only", (double)la / (double)lb);
    CHECK_MSG(rss_saved >= 0.8 * saved, "peak RSS fell %.0f bytes, the count says %.0f", rss_saved, saved);
    atn_trainer_free(a), atn_trainer_free(b);
}

int main(void) {
    test_memory();   /* first: the children start from a small process */
    atn_train_options o;
    atn_train_options_init(&o);
    o.layers = 3, o.d_model = 16, o.heads = 2, o.batch = 4, o.length = 5;
    o.dropout_attn = 0.2f, o.dropout_hidden = 0.1f;
    same_as_without(o, "pre-LN decoder, dropout");
    o.decoder = false, o.norm = ATN_TRAIN_POST_LN, o.attention = ATN_ATTN_FULL;
    same_as_without(o, "post-LN encoder, dropout");
    atn_train_options_init(&o);
    o.layers = 2, o.d_model = 16, o.heads = 2, o.batch = 4, o.length = 5, o.precision = ATN_PRECISION_BF16;
    o.positions = ATN_POS_ROTARY;
    same_as_without(o, "bf16 rotary decoder");
    /* the attention variants: each recomputed inside the layer (dropout on) */
    atn_train_options_init(&o);
    o.layers = 3, o.d_model = 16, o.heads = 2, o.batch = 4, o.length = 5;
    o.dropout_attn = 0.2f, o.dropout_hidden = 0.1f;
    o.attention = ATN_ATTN_LONGFORMER, o.window = 1, o.global_first = 1, o.n_globals = 1, o.globals[0] = 7;
    same_as_without(o, "Longformer decoder, dropout");
    o.decoder = false, o.norm = ATN_TRAIN_POST_LN;
    same_as_without(o, "Longformer encoder, dropout");
    o.attention = ATN_ATTN_CHUNKED, o.chunk = 3;
    same_as_without(o, "chunked encoder, dropout");
    o.attention = ATN_ATTN_LINFORMER, o.linformer_k = 4;
    same_as_without(o, "Linformer encoder, dropout");
    o.precision = ATN_PRECISION_BF16, o.positions = ATN_POS_ROTARY, o.norm = ATN_TRAIN_PRE_LN;
    same_as_without(o, "bf16 rotary Linformer encoder, dropout");
    return check_summary("train-checkpoint");
}

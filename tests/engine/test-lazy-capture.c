/* Attention at any length (issue 35): heads made on demand from the Q, K, V a run kept
 * (atn_capture_head, engine/forward/encoder.c atn_cpu_attend_head), and statistics row by
 * row (atn_stats_rows_*, engine/analysis/head-stats.c).
 *
 *  - On BERT, RoBERTa, DistilBERT, ALBERT, ELECTRA and GPT-2 test folders (tests/hf/models)
 *    and random models: a run with attention_on_demand gives every head bit for bit what
 *    the full capture holds, with padding, with the what-if gates (heads off, ALiBi,
 *    temperature, masks in some layers) and in bf16; its hidden states are the full run's.
 *  - The statistics of a capture with on-demand heads are the full capture's (bit for
 *    bit), rows fed one by one give atn_stats_compute's numbers (within 1e-6; they are in
 *    fact the same bits), and so do the statistics the forward feeds as it makes each head
 *    (atn_run_options.stats_rows) in a run with heads on demand.
 *  - A full capture over the memory budget turns into on-demand heads by itself when the
 *    caller leaves on_demand_over_budget on (the default), is refused without; one whose Q, K, V do not fit
 *    either is still refused.
 *  - 4,096 tokens (a bert-tiny shape with 4,096 positions): the run's block is a full run's
 *    less every layer's attention but one, the peak (VmHWM) stays within it plus one head
 *    (below a full run's), and a head made on demand there is a probability distribution
 *    per row, equal to one made from a second identical run. */
#include "check.h"
#include "analysis.h"
#include "common/test-models.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int32_t *ids_for(const atn_config *c, int32_t n) {
    int32_t *ids = malloc((size_t)n * sizeof *ids);
    for (int32_t i = 0; i < n; i++)
        ids[i] = (int32_t)((i * 7 + 3) % (c->vocab_size > 5 ? c->vocab_size - 1 : 1)) + 1;
    return ids;
}

/* Every head of lazy equals full's bit for bit; returns the number that differ. */
static int compare_heads(const atn_capture *full, const atn_capture *lazy, const char *what) {
    size_t nn = (size_t)full->n * full->n;
    float *buf = malloc(nn * sizeof(float)), *copy = malloc(nn * sizeof(float));
    int bad = 0;
    for (int32_t l = 0; l < full->n_layers; l++)
        for (int32_t h = 0; h < full->n_heads; h++) {
            atn_error err = {0};
            memset(buf, 0xff, nn * sizeof(float));
            atn_status st = atn_capture_head(lazy, l, h, buf, &err);
            CHECK_MSG(st == ATN_OK, "%s: head %d.%d: %s", what, l, h, err.message);
            const float *want = full->attn + ((size_t)l * full->n_heads + h) * nn;
            if (st == ATN_OK && memcmp(buf, want, nn * sizeof(float)) != 0) {
                if (!bad)
                    CHECK_ARRAY_NEAR(what, buf, want, nn, 0.0);
                bad++;
            }
            /* the full capture answers with a copy of its block */
            CHECK(atn_capture_head(full, l, h, copy, NULL) == ATN_OK && memcmp(copy, want, nn * sizeof(float)) == 0);
        }
    CHECK_MSG(bad == 0, "%s: %d heads differ", what, bad);
    free(buf);
    free(copy);
    return bad;
}

static void check_stats_same(const atn_stats *a, const atn_stats *b, const char *what, double tol) {
    size_t heads = (size_t)a->n_layers * a->n_heads;
    CHECK(a->n_layers == b->n_layers && a->n_heads == b->n_heads && a->n_tokens == b->n_tokens);
    for (size_t i = 0; i < heads; i++) {
        const atn_head_stats *x = &a->heads[i], *y = &b->heads[i];
        const double xs[] = {x->entropy, x->entropy_norm, x->cls, x->sep, x->punct, x->self, x->prev, x->next,
                             x->local, x->same_segment, x->distance};
        const double ys[] = {y->entropy, y->entropy_norm, y->cls, y->sep, y->punct, y->self, y->prev, y->next,
                             y->local, y->same_segment, y->distance};
        for (int k = 0; k < 11; k++)
            if (tol == 0)
                CHECK_MSG(memcmp(&xs[k], &ys[k], sizeof(double)) == 0, "%s: head %zu number %d: %.17g vs %.17g",
                          what, i, k, xs[k], ys[k]);
            else
                CHECK_NEAR(xs[k], ys[k], tol);
        CHECK(x->pattern == y->pattern);
    }
}

/* Statistics row by row from cap's rows (query order per head; heads in reverse order, to
 * show the heads are independent) against atn_stats_compute of the same capture. */
static void check_streaming_stats(const atn_capture *cap, const char *what) {
    atn_stats *want = NULL, *got = atn_stats_new(cap->n_layers, cap->n_heads, NULL);
    atn_stats_rows *rows = NULL;
    CHECK(atn_stats_compute(cap, &want, NULL) == ATN_OK);
    CHECK(atn_stats_rows_new(cap->enc, cap->n_layers, cap->n_heads, &rows, NULL) == ATN_OK);
    if (!want || !rows || !got)
        return;
    size_t n = (size_t)cap->n;
    /* every head but the last first: folding then must refuse (a head lacks its rows) */
    for (int32_t l = cap->n_layers - 1; l >= 0; l--)
        for (int32_t h = cap->n_heads - 1; h >= 0; h--) {
            if (l == cap->n_layers - 1 && h == cap->n_heads - 1)
                continue;
            for (size_t i = 0; i < n; i++)
                atn_stats_rows_add(rows, l, h, (int32_t)i, cap->attn + (((size_t)l * cap->n_heads + h) * n + i) * n);
        }
    atn_error err = {0};
    CHECK(atn_stats_rows_fold(rows, got, &err) == ATN_E_INVALID && strstr(err.message, "query rows"));
    int32_t l = cap->n_layers - 1, h = cap->n_heads - 1;
    for (size_t i = 0; i < n; i++)
        atn_stats_rows_add(rows, l, h, (int32_t)i, cap->attn + (((size_t)l * cap->n_heads + h) * n + i) * n);
    atn_stats_rows_add(rows, 99, 0, 0, cap->attn);   /* out of range: ignored */
    CHECK(atn_stats_rows_fold(rows, got, NULL) == ATN_OK);
    CHECK(atn_stats_finish(got, NULL) == ATN_OK);
    check_stats_same(got, want, what, 1e-6);
    check_stats_same(got, want, what, 0.0);
    atn_stats_rows_free(rows);
    atn_stats_free(got);
    atn_stats_free(want);
}

/* One model: full against on-demand, plain, gated and bf16. */
static void check_model(atn_model *m, const char *what, int32_t n, bool pad) {
    const atn_config *c = atn_model_config(m);
    int32_t most = c->max_positions - (c->pad_token_id > 0 ? c->pad_token_id + 1 : 0);
    if (n > most)
        n = most;
    int32_t *ids = ids_for(c, n), *mask = malloc((size_t)n * sizeof *mask);
    for (int32_t i = 0; i < n; i++)
        mask[i] = !(pad && i == n - 2);
    atn_encoding *enc = NULL;
    atn_error err = {0};
    CHECK_MSG(atn_model_encode_ids(m, ids, NULL, mask, n, &enc, &err) == ATN_OK, "%s: %s", what, err.message);
    size_t lh = (size_t)c->n_layers * c->n_heads;
    uint8_t *off = calloc(lh, 1), *layers = calloc((size_t)c->n_layers, 1);
    off[1] = 1;
    layers[0] = 1;
    for (int variant = 0; enc && variant < 4; variant++) {
        atn_run_options o;
        atn_run_options_init(&o);
        atn_interventions iv;
        atn_interventions_init(&iv);
        const char *vname = "plain";
        if (variant == 1) {   /* the gated softmax: a head off, ALiBi, temperature, a window in layer 0 */
            iv.heads_off = off;
            iv.head_mode = ATN_HEAD_UNIFORM;
            iv.alibi = true;
            iv.temperature = 1.7f;
            iv.window = 2;
            iv.mask_layers = c->n_layers > 1 ? layers : NULL;
            o.interventions = &iv;
            vname = "gated";
        } else if (variant == 2) {
            o.precision = ATN_PRECISION_BF16;
            vname = "bf16";
        } else if (variant == 3) {
            o.precision = ATN_PRECISION_FP16;
            iv.heads_off = off;   /* zero mode */
            o.interventions = &iv;
            vname = "fp16 + head off";
        }
        char label[160];
        snprintf(label, sizeof label, "%s (%s)", what, vname);
        atn_run *full = atn_run_new(m), *lazy = atn_run_new(m);
        CHECK_MSG(atn_run_forward(full, enc, &o, &err) == ATN_OK, "%s: %s", label, err.message);
        o.attention_on_demand = true;
        atn_stats_rows *rows = NULL;   /* statistics fed by the forward as it makes each head */
        CHECK(atn_stats_rows_new(enc, c->n_layers, c->n_heads, &rows, NULL) == ATN_OK);
        o.stats_rows = rows;
        CHECK_MSG(atn_run_forward(lazy, enc, &o, &err) == ATN_OK, "%s: %s", label, err.message);
        const atn_capture *fc = atn_run_capture(full), *lc = atn_run_capture(lazy);
        if (fc && lc) {
            CHECK(fc->attn && !fc->attn_on_demand);
            CHECK(!lc->attn && lc->attn_on_demand && lc->has_trace_inputs);
            CHECK(memcmp(fc->hidden, lc->hidden, (size_t)(c->n_layers + 1) * n * c->d_model * sizeof(float)) == 0);
            compare_heads(fc, lc, label);
            atn_stats *sf = NULL, *sl = NULL;
            CHECK(atn_stats_compute(fc, &sf, NULL) == ATN_OK);
            CHECK(atn_stats_compute(lc, &sl, NULL) == ATN_OK);
            if (sf && sl)
                check_stats_same(sl, sf, label, 0.0);
            atn_stats *fed = atn_stats_new(c->n_layers, c->n_heads, NULL);
            CHECK_MSG(atn_stats_rows_fold(rows, fed, &err) == ATN_OK, "%s: %s", label, err.message);
            CHECK(atn_stats_finish(fed, NULL) == ATN_OK);
            if (sf && fed->n_sentences == 1)
                check_stats_same(fed, sf, label, 0.0);
            atn_stats_free(fed);
            atn_stats_free(sf), atn_stats_free(sl);
            if (variant == 0)
                check_streaming_stats(fc, label);
        }
        atn_stats_rows_free(rows);
        atn_run_free(full);
        atn_run_free(lazy);
    }
    free(off), free(layers), free(ids), free(mask);
    atn_encoding_free(enc);
}

/* A full capture over the budget becomes on-demand heads; Q, K, V over it is refused. */
static void check_budget(atn_model *m) {
    const atn_config *c = atn_model_config(m);
    int32_t n = 20, *ids = ids_for(c, n);
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_ids(m, ids, NULL, NULL, n, &enc, NULL) == ATN_OK);
    atn_run_options o, lazy;
    atn_run_options_init(&o);
    lazy = o;
    lazy.attention_on_demand = true;
    size_t full_b = atn_run_bytes_needed(c, n, &o), lazy_b = atn_run_bytes_needed(c, n, &lazy);
    CHECK_MSG(lazy_b < full_b, "on-demand %zu bytes, full %zu", lazy_b, full_b);
    atn_run *r = atn_run_new(m);
    atn_error err = {0};
    CHECK(atn_run_forward(r, enc, &o, &err) == ATN_OK);   /* packs the weights where the packed ops run */
    o.memory_limit = (full_b + lazy_b) / 2;
    CHECK(o.on_demand_over_budget);   /* the default */
    o.on_demand_over_budget = false;
    CHECK(atn_run_forward(r, enc, &o, &err) == ATN_E_NOMEM);   /* a caller that reads capture->attn itself */
    o.on_demand_over_budget = true;
    CHECK_MSG(atn_run_forward(r, enc, &o, &err) == ATN_OK, "%s", err.message);
    const atn_capture *cap = atn_run_capture(r);
    CHECK(cap && !cap->attn && cap->attn_on_demand);
    /* atn_capture_head_read: made into the scratch, which an on-demand capture needs */
    float *sc = malloc((size_t)n * n * sizeof *sc), *want = malloc((size_t)n * n * sizeof *want);
    CHECK(atn_capture_head_read(cap, 1, 0, NULL, &err) == NULL && err.status == ATN_E_INVALID);
    CHECK(atn_capture_head(cap, 1, 0, want, &err) == ATN_OK);
    CHECK(atn_capture_head_read(cap, 1, 0, sc, &err) == sc && memcmp(sc, want, (size_t)n * n * sizeof *sc) == 0);
    free(sc), free(want);
    o.memory_limit = lazy_b - 1;
    CHECK(atn_run_forward(r, enc, &o, &err) == ATN_E_NOMEM);
    o.memory_limit = full_b;   /* fits: the full capture, as before */
    CHECK(atn_run_forward(r, enc, &o, &err) == ATN_OK);
    cap = atn_run_capture(r);
    CHECK(cap && cap->attn && !cap->attn_on_demand);
    /* atn_capture_head_read: a full capture's head in place, scratch untouched (and not needed) */
    CHECK(atn_capture_head_read(cap, 1, 1, NULL, &err) == cap->attn + ((size_t)1 * c->n_heads + 1) * n * n);
    CHECK(atn_capture_head_read(cap, c->n_layers, 0, NULL, &err) == NULL && err.status == ATN_E_INVALID);
    CHECK(!atn_capture_has_heads(NULL) && atn_capture_has_heads(cap));
    float out[4];
    CHECK(atn_capture_head(cap, c->n_layers, 0, out, &err) == ATN_E_INVALID);
    CHECK(atn_capture_head(cap, 0, -1, out, &err) == ATN_E_INVALID);
    CHECK(atn_capture_head(NULL, 0, 0, out, &err) == ATN_E_INVALID);
    lazy.device = ATN_DEVICE_CUDA;
    CHECK(atn_run_forward(r, enc, &lazy, &err) == ATN_E_UNSUPPORTED);
    atn_run_free(r);
    atn_encoding_free(enc);
    free(ids);
}

static long vm_hwm_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

/* 4,096 tokens through a bert-tiny shape (2 layers x 2 heads, d 128) with 4,096 positions:
 * the full capture is 2 x 2 x 4096^2 floats = 268 MB; on demand the run holds Q, K, V and
 * one layer's [2][n][n] (134 MB) at most. */
static void check_long(void) {
    atn_config cfg;
    CHECK(atn_random_shape_config("bert-tiny", &cfg, NULL) == ATN_OK);
    cfg.max_positions = 4096;
    atn_error err = {0};
    atn_model *m = atn_model_new_random(&cfg, "long", 1, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return;
    int32_t n = 4096, *ids = ids_for(&cfg, n);
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_ids(m, ids, NULL, NULL, n, &enc, NULL) == ATN_OK);
    atn_run_options o;
    atn_run_options_init(&o);
    o.attention_on_demand = true;
    size_t full = (size_t)cfg.n_layers * cfg.n_heads * n * n * sizeof(float);
    size_t need = atn_run_bytes_needed(&cfg, n, &o);
    atn_run_options o_full;
    atn_run_options_init(&o_full);
    size_t full_need = atn_run_bytes_needed(&cfg, n, &o_full);
    /* the run's block: the full one less the attention but one head's [n][n] */
    CHECK_MSG(need == full_need - full + (size_t)n * n * sizeof(float), "on demand needs %zu bytes, a full run %zu",
              need, full_need);
    long before = vm_hwm_kb();
    atn_run *r = atn_run_new(m), *r2 = atn_run_new(m);
    CHECK_MSG(atn_run_forward(r, enc, &o, &err) == ATN_OK, "%s", err.message);
    size_t nn = (size_t)n * n;
    float *head = malloc(nn * sizeof(float));
    const atn_capture *cap = atn_run_capture(r);
    CHECK(cap && atn_capture_head(cap, 1, 1, head, &err) == ATN_OK);
    long after = vm_hwm_kb();
    double grew = (after - before) * 1024.0;
    fprintf(stderr, "4096 tokens on demand: peak grew %.0f MB (run block %.0f MB; a full run's %.0f MB)\n",
            grew / 1e6, need / 1e6, full_need / 1e6);
    CHECK_MSG(before > 0 && grew < (double)need + nn * sizeof(float) + 48e6 && grew < (double)full_need,
              "peak grew %.0f MB; a full run needs %.0f MB", grew / 1e6, full_need / 1e6);
    double worst = 0;
    for (int32_t i = 0; i < n; i += 97) {
        double s = 0;
        for (int32_t j = 0; j < n; j++)
            s += head[(size_t)i * n + j];
        worst = fabs(s - 1) > worst ? fabs(s - 1) : worst;
    }
    CHECK_MSG(worst < 1e-4, "a row sums to 1 +- %g", worst);
    /* the same head from a second run of the same input: the same bits */
    CHECK(atn_run_forward(r2, enc, &o, &err) == ATN_OK);
    float *again = malloc(nn * sizeof(float));
    CHECK(atn_capture_head(atn_run_capture(r2), 1, 1, again, &err) == ATN_OK);
    CHECK(memcmp(head, again, nn * sizeof(float)) == 0);
    free(again), free(head), free(ids);
    atn_run_free(r), atn_run_free(r2);
    atn_encoding_free(enc);
    atn_model_free(m);
}

int main(void) {
    static const char *const folders[] = {"f32", "gpt2-f32", "roberta-f32", "distilbert-f32", "albert-f32",
                                          "electra-disc", "gpt2-scaled5", NULL};
    for (int i = 0; folders[i]; i++) {
        char path[4096];
        atn_error err = {0};
        atn_model *m = atn_model_open(hf_model_path(path, sizeof path, folders[i]), NULL, NULL, &err);
        CHECK_MSG(m != NULL, "%s: %s", folders[i], err.message);
        if (!m)
            continue;
        check_model(m, folders[i], 16, true);
        if (i == 0)
            check_budget(m);
        atn_model_free(m);
    }
    atn_error err = {0};
    atn_model *m = atn_model_open("random:bert-tiny@3", NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (m) {
        check_model(m, "random:bert-tiny", 96, true);
        atn_model_free(m);
    }
    check_long();
    return check_summary("engine-lazy-capture");
}

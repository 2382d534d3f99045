/* Statistics made from the forward's heads as they are made (atn_run_options.head_sink,
 * engine/forward/run.c and encoder.c; atn_cs_rows_*, engine/analysis/corpus-stats-rows.c):
 *
 *  - On the BERT, GPT-2, DeBERTa-v3 and ALBERT test folders, sentences with a repeated span (the
 *    induction sums), punctuation and a masked token: a corpus partial made from a run with a
 *    head sink and keep_attention false is byte for byte (its file) the partial
 *    atn_corpus_stats_add makes from the full capture, with and without the query / key role
 *    filters; atn_stats from the same run's rows (atn_stats_rows through the sink) equals
 *    atn_stats_add's, bit for bit; the hidden states are the full run's.
 *  - That run keeps no attention (capture->attn NULL, atn_capture_has_heads false) and asks for
 *    (L H - 1) n^2 floats less than the full run (atn_run_bytes_needed).
 *  - The sink's begin gets the capture's encoding before the first head; an error from begin
 *    ends the run with it.  A fold refuses a head short of its rows and a line not after the
 *    last.
 *  - 512 tokens through a 4 x 16-head random model: the peak (VmHWM) grows by the run's block
 *    and the rows, not by the 67 MB capture, and the partial is the full capture's.
 *  - The layer scope's similarity (js, pearson) from the last layer's heads as the sink got
 *    them (atn_similarity_add_layer, as similarity --corpus --scope layer streams) equals
 *    atn_similarity_add's over the captures, bit for bit; a model-scope one is refused.
 *  - atn_batch_forward with stacks (exact off): stacked sentences come with their attention and
 *    no sink call; a sentence that runs alone streams. */
#include "check.h"
#include "analysis.h"
#include "corpus-stats.h"
#include "common/test-models.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The sink under test: a partial's rows and atn_stats rows for the sentence begun. */
typedef struct sink_state {
    atn_corpus_stats *cs;
    int32_t L, H;
    atn_cs_rows *rows;
    atn_stats_rows *srows;
    const atn_encoding *begun;
    int begins, heads;
    bool fail_begin;
    bool keep_last;          /* keep the last layer's heads in kept */
    float *kept;             /* [H][n][n] of the last layer (the layer-scope similarity's), or NULL */
} sink_state;

static atn_status on_begin(void *user, const atn_encoding *enc, atn_error *err) {
    sink_state *s = user;
    s->begins++;
    if (s->fail_begin)
        return atn_error_set(err, ATN_E_NOMEM, "sink: refused on purpose");
    atn_cs_rows_free(s->rows);
    atn_stats_rows_free(s->srows);
    s->rows = NULL, s->srows = NULL;
    s->begun = enc;
    free(s->kept);
    s->kept = s->keep_last ? malloc((size_t)s->H * enc->n * enc->n * sizeof *s->kept) : NULL;
    atn_status st = atn_cs_rows_new(s->cs, enc, &s->rows, err);
    if (st == ATN_OK)
        st = atn_stats_rows_new(enc, s->L, s->H, &s->srows, err);
    return st;
}

static void on_head(void *user, int32_t l, int32_t h, const float *att, int32_t n) {
    sink_state *s = user;
    __atomic_add_fetch(&s->heads, 1, __ATOMIC_RELAXED);
    atn_cs_rows_head(s->rows, l, h, att, n);
    if (l == s->L - 1 && s->kept)
        memcpy(s->kept + (size_t)h * n * n, att, (size_t)n * n * sizeof *att);
    for (int32_t i = 0; i < n; i++)
        atn_stats_rows_add(s->srows, l, h, i, att + (size_t)i * n);
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    char *b = malloc(*len ? *len : 1);
    if (fread(b, 1, *len, f) != *len)
        *len = 0;
    fclose(f);
    return b;
}

static bool same_file(const atn_corpus_stats *a, const atn_corpus_stats *b, const char *dir) {
    char pa[512], pb[512];
    snprintf(pa, sizeof pa, "%s/a.safetensors", dir);
    snprintf(pb, sizeof pb, "%s/b.safetensors", dir);
    atn_error err = {0};
    if (atn_corpus_stats_save(a, pa, &err) || atn_corpus_stats_save(b, pb, &err)) {
        fprintf(stderr, "save: %s\n", err.message);
        return false;
    }
    size_t la = 0, lb = 0;
    char *x = slurp(pa, &la), *y = slurp(pb, &lb);
    bool same = x && y && la == lb && la > 0 && memcmp(x, y, la) == 0;
    free(x), free(y);
    return same;
}

static bool stats_same(const atn_stats *a, const atn_stats *b) {
    if (a->n_sentences != b->n_sentences || a->n_tokens != b->n_tokens)
        return false;
    return memcmp(a->heads, b->heads, (size_t)a->n_layers * a->n_heads * sizeof *a->heads) == 0;
}

static const char *const lines[] = {
    "the cat sat on the mat , and the cat sat on the mat again .",
    "a b c d a b c d ; e f !",
    "one sentence , no repeats here ?",
};

/* One model and one role filter: three sentences through the full capture and through the sink. */
static void check_model(atn_model *m, const char *what, const char *qrole, const char *krole, const char *dir) {
    const atn_config *c = atn_model_config(m);
    atn_cs_identity id = {.model = what, .revision = "r", .tokenizer = "t", .precision = "fp32", .settings = "s",
                          .corpus = "c.txt", .corpus_lines = 3, .n_layers = c->n_layers, .n_heads = c->n_heads,
                          .top_k = 5, .query_role = qrole, .key_role = krole};
    atn_error err = {0};
    atn_corpus_stats *want = atn_corpus_stats_new(&id, &err), *got = atn_corpus_stats_new(&id, &err);
    atn_stats *swant = atn_stats_new(c->n_layers, c->n_heads, NULL), *sgot = atn_stats_new(c->n_layers, c->n_heads, NULL);
    sink_state s = {.cs = got, .L = c->n_layers, .H = c->n_heads, .keep_last = true};
    atn_head_sink sink = {on_begin, on_head, &s};
    atn_run *full = atn_run_new(m), *streamed = atn_run_new(m);
    /* the layer scope's similarity from the last layer's heads alone, as similarity --corpus
       --scope layer streams it, against the capture's */
    atn_similarity *simwant[2], *simgot[2];
    static const atn_metric metrics[2] = {ATN_METRIC_JS, ATN_METRIC_PEARSON};
    for (int k = 0; k < 2; k++) {
        simwant[k] = atn_similarity_new(c->n_layers, c->n_heads, metrics[k], ATN_SCOPE_LAYER, c->n_layers - 1, NULL);
        simgot[k] = atn_similarity_new(c->n_layers, c->n_heads, metrics[k], ATN_SCOPE_LAYER, c->n_layers - 1, NULL);
    }
    for (int k = 0; k < 3 && want && got; k++) {
        atn_encoding *enc = NULL;
        CHECK_MSG(atn_model_encode(m, lines[k], NULL, &enc, &err) == ATN_OK, "%s: %s", what, err.message);
        if (!enc)
            continue;
        if (k == 1 && enc->mask && enc->n > 4)
            enc->mask[3] = 0;   /* a masked token: its row and column left out */
        atn_run_options o;
        atn_run_options_init(&o);
        o.keep_trace_inputs = false;
        CHECK_MSG(atn_run_forward(full, enc, &o, &err) == ATN_OK, "%s: %s", what, err.message);
        o.keep_attention = false;
        o.head_sink = &sink;
        s.heads = 0;
        CHECK_MSG(atn_run_forward(streamed, enc, &o, &err) == ATN_OK, "%s: %s", what, err.message);
        const atn_capture *fc = atn_run_capture(full), *sc = atn_run_capture(streamed);
        CHECK(fc && fc->attn && sc && !sc->attn && !atn_capture_has_heads(sc));
        CHECK(sc && s.begun == sc->enc);
        CHECK_MSG(s.heads == c->n_layers * c->n_heads, "%s: %d heads fed", what, s.heads);
        if (fc && sc)
            CHECK(memcmp(fc->hidden, sc->hidden, (size_t)(c->n_layers + 1) * enc->n * c->d_model * sizeof(float)) == 0);
        CHECK_MSG(atn_corpus_stats_add(want, fc, k + 1, &err) == ATN_OK, "%s: %s", what, err.message);
        CHECK_MSG(atn_cs_rows_fold(s.rows, got, k + 1, &err) == ATN_OK, "%s: %s", what, err.message);
        CHECK(atn_cs_rows_fold(s.rows, got, k + 1, &err) == ATN_E_INVALID && strstr(err.message, "comes after"));
        CHECK(atn_stats_add(swant, fc, NULL) == ATN_OK);
        for (int q = 0; q < 2 && sc; q++) {
            CHECK(atn_similarity_add(simwant[q], fc, NULL) == ATN_OK);
            CHECK_MSG(atn_similarity_add_layer(simgot[q], sc->enc, s.kept, &err) == ATN_OK, "%s: %s", what, err.message);
        }
        CHECK_MSG(atn_stats_rows_fold(s.srows, sgot, &err) == ATN_OK, "%s: %s", what, err.message);
        /* the memory asked for: no [L][H][n][n], one [n][n] */
        atn_run_options keep;
        atn_run_options_init(&keep);
        keep.keep_trace_inputs = false;
        size_t nn = (size_t)enc->n * enc->n, lh = (size_t)c->n_layers * c->n_heads;
        CHECK(atn_run_bytes_needed(c, enc->n, &keep) - atn_run_bytes_needed(c, enc->n, &o) == (lh - 1) * nn * sizeof(float));
        atn_encoding_free(enc);
    }
    CHECK(atn_corpus_stats_cover(want, 1, 3, 0, 0, NULL) == ATN_OK && atn_corpus_stats_cover(got, 1, 3, 0, 0, NULL) == ATN_OK);
    CHECK_MSG(same_file(got, want, dir), "%s (query role \"%s\", key role \"%s\"): the streamed partial's bytes differ",
              what, qrole, krole);
    CHECK(atn_stats_finish(swant, NULL) == ATN_OK && atn_stats_finish(sgot, NULL) == ATN_OK);
    CHECK_MSG(stats_same(sgot, swant), "%s: the streamed statistics differ", what);
    for (int k = 0; k < 2; k++) {
        CHECK(atn_similarity_finish(simwant[k], NULL) == ATN_OK && atn_similarity_finish(simgot[k], NULL) == ATN_OK);
        size_t cc = (size_t)simwant[k]->count * simwant[k]->count;
        CHECK_MSG(simgot[k]->n_sentences == 3 && simwant[k]->n_sentences == 3 &&
                  memcmp(simgot[k]->values, simwant[k]->values, cc * sizeof(double)) == 0,
                  "%s: the %s similarity from the streamed layer differs", what, atn_metric_name(metrics[k]));
        atn_similarity_free(simwant[k]);
        atn_similarity_free(simgot[k]);
    }
    /* refusals: a model-scope similarity, no heads */
    atn_similarity *ms = atn_similarity_new(c->n_layers, c->n_heads, ATN_METRIC_JS, ATN_SCOPE_MODEL, 0, NULL);
    CHECK(atn_similarity_add_layer(ms, s.begun, s.kept, &err) == ATN_E_INVALID && strstr(err.message, "layer-scope"));
    CHECK(atn_similarity_add_layer(ms, s.begun, NULL, &err) == ATN_E_INVALID);
    atn_similarity_free(ms);
    free(s.kept);
    atn_cs_rows_free(s.rows);
    atn_stats_rows_free(s.srows);
    atn_run_free(full), atn_run_free(streamed);
    atn_corpus_stats_free(want), atn_corpus_stats_free(got);
    atn_stats_free(swant), atn_stats_free(sgot);
}

/* Refusals: begin's error, a head short of rows. */
static void check_refusals(atn_model *m) {
    const atn_config *c = atn_model_config(m);
    atn_cs_identity id = {.model = "m", .revision = "r", .tokenizer = "t", .precision = "fp32", .settings = "s",
                          .corpus = "c.txt", .corpus_lines = 3, .n_layers = c->n_layers, .n_heads = c->n_heads,
                          .top_k = 5};
    atn_error err = {0};
    atn_corpus_stats *cs = atn_corpus_stats_new(&id, &err);
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode(m, lines[0], NULL, &enc, &err) == ATN_OK);
    sink_state s = {.cs = cs, .L = c->n_layers, .H = c->n_heads, .fail_begin = true};
    atn_head_sink sink = {on_begin, on_head, &s};
    atn_run_options o;
    atn_run_options_init(&o);
    o.keep_attention = false;
    o.head_sink = &sink;
    atn_run *r = atn_run_new(m);
    CHECK(atn_run_forward(r, enc, &o, &err) == ATN_E_NOMEM && strstr(err.message, "on purpose") && s.heads == 0);
    atn_cs_rows *rows = NULL;
    CHECK(atn_cs_rows_new(cs, enc, &rows, &err) == ATN_OK);
    size_t nn = (size_t)enc->n * enc->n;
    float *att = calloc(nn, sizeof *att);
    for (int32_t i = 0; i < enc->n; i++)
        att[(size_t)i * enc->n + i] = 1;
    for (int32_t l = 0; l < c->n_layers; l++)
        for (int32_t h = 0; h < c->n_heads; h++)
            if (!(l == c->n_layers - 1 && h == 1))
                atn_cs_rows_head(rows, l, h, att, enc->n);
    CHECK(atn_cs_rows_fold(rows, cs, 1, &err) == ATN_E_INVALID && strstr(err.message, "query rows"));
    atn_cs_rows_add(rows, c->n_layers, 0, 0, att);   /* out of range: nothing */
    atn_cs_rows_head(rows, c->n_layers - 1, 1, att, enc->n);
    CHECK_MSG(atn_cs_rows_fold(rows, cs, 1, &err) == ATN_OK, "%s", err.message);
    atn_cs_rows_free(rows);
    CHECK(atn_cs_rows_new(NULL, enc, &rows, &err) == ATN_E_INVALID && !rows);
    free(att);
    atn_run_free(r);
    atn_encoding_free(enc);
    atn_corpus_stats_free(cs);
}

/* The batch: stacks keep their attention and call no sink; a sentence alone streams. */
typedef struct batch_seen {
    sink_state *s;
    int with_heads, streamed;
} batch_seen;

static atn_status batch_each(int32_t i, const atn_capture *cap, void *user, atn_error *err) {
    (void)i, (void)err;
    batch_seen *b = user;
    if (atn_capture_has_heads(cap))
        b->with_heads++;
    else if (b->s->begun == cap->enc)
        b->streamed++;
    return ATN_OK;
}

static void check_batch(atn_model *m) {
    const atn_config *c = atn_model_config(m);
    atn_cs_identity id = {.model = "m", .revision = "r", .tokenizer = "t", .precision = "fp32", .settings = "s",
                          .corpus = "c.txt", .corpus_lines = 3, .n_layers = c->n_layers, .n_heads = c->n_heads,
                          .top_k = 5};
    atn_corpus_stats *cs = atn_corpus_stats_new(&id, NULL);
    sink_state s = {.cs = cs, .L = c->n_layers, .H = c->n_heads};
    atn_head_sink sink = {on_begin, on_head, &s};
    atn_encoding *encs[3] = {NULL};
    for (int k = 0; k < 3; k++)
        CHECK(atn_model_encode(m, lines[k], NULL, &encs[k], NULL) == ATN_OK);
    atn_batch *b = atn_batch_new(m);
    atn_batch_set_exact(b, false);   /* stacks on every CPU */
    atn_run_options o;
    atn_run_options_init(&o);
    o.keep_attention = false;
    o.keep_trace_inputs = false;
    o.head_sink = &sink;
    batch_seen seen = {&s, 0, 0};
    atn_error err = {0};
    CHECK_MSG(atn_batch_forward(b, encs, 3, &o, batch_each, &seen, NULL, &err) == ATN_OK, "%s", err.message);
    int64_t stacked = 0, alone = 0;
    atn_batch_counts(b, &stacked, &alone);
    CHECK_MSG(stacked >= 1 && seen.with_heads >= 2 && seen.with_heads + seen.streamed == 3 && s.begins == alone,
              "stacks %lld, alone %lld, with heads %d, streamed %d, begins %d", (long long)stacked, (long long)alone,
              seen.with_heads, seen.streamed, s.begins);
    atn_batch_set_rows(b, 1);   /* one at a time: every sentence streams */
    seen = (batch_seen){&s, 0, 0};
    s.begins = 0;
    CHECK(atn_batch_forward(b, encs, 3, &o, batch_each, &seen, NULL, &err) == ATN_OK);
    CHECK_MSG(seen.streamed == 3 && seen.with_heads == 0 && s.begins == 3, "streamed %d", seen.streamed);
    atn_batch_free(b);
    for (int k = 0; k < 3; k++)
        atn_encoding_free(encs[k]);
    atn_cs_rows_free(s.rows);
    atn_stats_rows_free(s.srows);
    atn_corpus_stats_free(cs);
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

/* 512 tokens through a 4 x 16-head model (d 128): the full capture is 4 x 16 x 512^2 floats
 * (67 MB); streamed, the process's peak grows by the run's block and the rows at most (plus,
 * where the packed ops run, one [n][n] per thread, at most the 16 heads' 17 MB), and the partial
 * is the full run's.
 * First in the process: VmHWM is a high-water mark. */
static void check_peak(const char *dir) {
    atn_config cfg;
    CHECK(atn_random_shape_config("bert-tiny", &cfg, NULL) == ATN_OK);
    cfg.max_positions = 512;
    cfg.n_layers = 4;
    cfg.n_heads = 16;
    cfg.d_head = cfg.d_model / cfg.n_heads;
    atn_error err = {0};
    atn_model *m = atn_model_new_random(&cfg, "peak", 1, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return;
    int32_t n = 512, *ids = malloc((size_t)n * sizeof *ids);
    for (int32_t i = 0; i < n; i++)
        ids[i] = 1 + (i * 7 + 3) % 97;   /* repeats: induction targets */
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_ids(m, ids, NULL, NULL, n, &enc, NULL) == ATN_OK);
    atn_cs_identity id = {.model = "peak", .revision = "r", .tokenizer = "t", .precision = "fp32", .settings = "s",
                          .corpus = "c.txt", .corpus_lines = 1, .n_layers = cfg.n_layers, .n_heads = cfg.n_heads,
                          .top_k = 8};
    atn_corpus_stats *want = atn_corpus_stats_new(&id, &err), *got = atn_corpus_stats_new(&id, &err);
    sink_state s = {.cs = got, .L = cfg.n_layers, .H = cfg.n_heads};
    atn_head_sink sink = {on_begin, on_head, &s};
    atn_run_options o, full_o;
    atn_run_options_init(&o);
    atn_run_options_init(&full_o);
    o.keep_attention = false, o.keep_trace_inputs = false, o.head_sink = &sink;
    full_o.keep_trace_inputs = false;
    size_t need = atn_run_bytes_needed(&cfg, n, &o), full_need = atn_run_bytes_needed(&cfg, n, &full_o);
    size_t nn = (size_t)n * n, capture = (size_t)cfg.n_layers * cfg.n_heads * nn * sizeof(float);
    CHECK(full_need - need == capture - nn * sizeof(float));
    long before = vm_hwm_kb();
    atn_run *r = atn_run_new(m);
    CHECK_MSG(atn_run_forward(r, enc, &o, &err) == ATN_OK, "%s", err.message);
    CHECK(atn_cs_rows_fold(s.rows, got, 1, &err) == ATN_OK);
    long after = vm_hwm_kb();
    double grew = (after - before) * 1024.0, rows = 32.0 * n * cfg.n_layers * cfg.n_heads + 2.0 * n * n * 4;
    fprintf(stderr, "512 tokens streamed: peak grew %.1f MB (run block %.1f MB, rows %.1f MB; the full capture alone "
            "%.1f MB)\n", grew / 1e6, need / 1e6, rows / 1e6, capture / 1e6);
    CHECK_MSG(before > 0 && grew < (double)need + rows + (double)cfg.n_heads * nn * sizeof(float) + 8e6 &&
              grew < (double)capture / 2, "peak grew %.1f MB", grew / 1e6);
    atn_run_free(r);
    r = atn_run_new(m);
    CHECK(atn_run_forward(r, enc, &full_o, &err) == ATN_OK);
    CHECK(atn_corpus_stats_add(want, atn_run_capture(r), 1, &err) == ATN_OK);
    CHECK(atn_corpus_stats_cover(want, 1, 1, 0, 0, NULL) == ATN_OK && atn_corpus_stats_cover(got, 1, 1, 0, 0, NULL) == ATN_OK);
    CHECK_MSG(same_file(got, want, dir), "512 tokens: the streamed partial's bytes differ");
    atn_run_free(r);
    atn_cs_rows_free(s.rows);
    atn_stats_rows_free(s.srows);
    atn_corpus_stats_free(want), atn_corpus_stats_free(got);
    atn_encoding_free(enc);
    free(ids);
    atn_model_free(m);
}

int main(void) {
    char dir[] = "/tmp/attnscope-head-sink-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    check_peak(dir);
    static const char *const folders[] = {"f32", "gpt2-f32", "deberta-v3-f32", "albert-f32", NULL};
    for (int i = 0; folders[i]; i++) {
        char path[4096];
        atn_error err = {0};
        atn_model *m = atn_model_open(hf_model_path(path, sizeof path, folders[i]), NULL, NULL, &err);
        CHECK_MSG(m != NULL, "%s: %s", folders[i], err.message);
        if (!m)
            continue;
        check_model(m, folders[i], "", "", dir);
        if (i == 0) {
            check_model(m, folders[i], "word", "", dir);
            check_model(m, folders[i], "", "word", dir);
            check_refusals(m);
            check_batch(m);
        }
        atn_model_free(m);
    }
    char p[600];
    snprintf(p, sizeof p, "%s/a.safetensors", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/b.safetensors", dir);
    unlink(p);
    rmdir(dir);
    return check_summary("engine-head-sink");
}

/* engine/analysis/corpus-stats.c and corpus-stats-file.c on constructed captures: the sums
 * against hand-computed figures, exemplar ties in their total order, the histograms' bins,
 * merge laws (order, grouping, refusals), the file round trip and refusals of bad files. */
#define _GNU_SOURCE   /* memmem */
#include "corpus-stats.h"
#include "fake-capture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            failures++;                                                                                      \
            fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond);                                 \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
        }                                                                                                    \
    } while (0)

static const char *const texts[6] = {"[CLS]", "the", "cat", ",", "sat", "[SEP]"};

static atn_cs_identity ident(int32_t k) {
    return (atn_cs_identity){.model = "m", .revision = "r", .tokenizer = "t", .precision = "fp32", .settings = "s",
                             .corpus = "c.txt", .corpus_lines = 100, .n_layers = 1, .n_heads = 2, .top_k = k};
}

/* head 0 uniform over the 6 tokens (every row's heaviest non-special key ties: key 1 wins),
 * head 1 previous-token (row 0 on itself) scaled by `w` with the rest on [SEP] */
static void sentence(fake *f, float w) {
    fake_init(f, 1, 2, 6, texts);
    set_pattern(head_of(f, 0, 0), 6, 4);
    float *a = head_of(f, 0, 1);
    set_pattern(a, 6, 0);
    for (int i = 0; i < 36; i++)
        a[i] *= w;
    for (int i = 0; i < 6; i++)
        a[i * 6 + 5] += 1 - w;
}

static atn_corpus_stats *part(int64_t first, int64_t last, const float *w, int32_t k) {
    atn_error err = {0};
    atn_cs_identity id = ident(k);
    atn_corpus_stats *cs = atn_corpus_stats_new(&id, &err);
    for (int64_t line = first; line <= last; line++) {
        fake f;
        sentence(&f, w[line - 1]);
        CHECK(atn_corpus_stats_add(cs, &f.cap, line, &err) == ATN_OK, "%s", err.message);
    }
    CHECK(atn_corpus_stats_cover(cs, first, last, 0, 0, &err) == ATN_OK, "%s", err.message);
    return cs;
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
    if (atn_corpus_stats_save(a, pa, &err) || atn_corpus_stats_save(b, pb, &err))
        return false;
    size_t la, lb;
    char *x = slurp(pa, &la), *y = slurp(pb, &lb);
    bool same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x), free(y);
    return same;
}

/* Induction from partials: head 0 of "[CLS] a b c a b c [SEP]" puts w on the token after the
 * earlier copy in the two rows of the repeated span (row 5 "b": key 3 "c"; row 6 "c": key 4
 * "a"), the rest on itself, the other rows uniform; head 1 is previous-token.  The partial's
 * means (induction share and pattern) equal atn_stats over the full captures, its corpus label
 * says "induction", and the sums survive a merge and the file. */
static void test_induction(const char *dir) {
    static const char *const rep[8] = {"[CLS]", "a", "b", "c", "a", "b", "c", "[SEP]"};
    const float w[3] = {0.9f, 0.8f, 0.95f};
    atn_error err = {0};
    atn_cs_identity id = ident(4);
    id.n_layers = 1, id.n_heads = 2;
    atn_corpus_stats *a = atn_corpus_stats_new(&id, &err), *b = atn_corpus_stats_new(&id, &err);
    atn_stats *full = atn_stats_new(1, 2, &err);
    double want = 0;
    for (int line = 1; line <= 3; line++) {
        fake f;
        fake_init(&f, 1, 2, 8, rep);
        float *h0 = head_of(&f, 0, 0);
        for (int i = 0; i < 8; i++)
            for (int k = 0; k < 8; k++)
                h0[i * 8 + k] = 1.0f / 8;
        float v = w[line - 1];
        for (int i = 5; i <= 6; i++) {
            for (int k = 0; k < 8; k++)
                h0[i * 8 + k] = 0;
            h0[i * 8 + (i - 2)] = v;   /* 5 -> 3, 6 -> 4 */
            h0[i * 8 + i] = 1 - v;
        }
        want += v;   /* the sentence's share: the mean over its two rows */
        set_pattern(head_of(&f, 0, 1), 8, 0);   /* previous */
        CHECK(atn_corpus_stats_add(line < 3 ? a : b, &f.cap, line, &err) == ATN_OK, "%s", err.message);
        CHECK(atn_stats_add(full, &f.cap, &err) == ATN_OK, "%s", err.message);
    }
    want /= 3;
    CHECK(atn_corpus_stats_cover(a, 1, 2, 0, 0, &err) == ATN_OK, "%s", err.message);
    CHECK(atn_corpus_stats_cover(b, 3, 3, 0, 0, &err) == ATN_OK, "%s", err.message);
    CHECK(atn_corpus_stats_merge(a, b, &err) == ATN_OK, "%s", err.message);
    char path[256];
    snprintf(path, sizeof path, "%s/ind.safetensors", dir);
    CHECK(atn_corpus_stats_save(a, path, &err) == ATN_OK, "%s", err.message);
    atn_corpus_stats *back = atn_corpus_stats_load(path, &err);
    CHECK(back != NULL, "%s", err.message);
    CHECK(atn_stats_finish(full, &err) == ATN_OK, "%s", err.message);
    atn_stats *st = NULL;
    CHECK(back && atn_corpus_stats_means(back, &st, &err) == ATN_OK, "%s", err.message);
    for (int h = 0; st && h < 2; h++) {
        CHECK(fabs(st->heads[h].induction - full->heads[h].induction) < 1e-12, "head %d induction %.17g, full %.17g",
              h, st->heads[h].induction, full->heads[h].induction);
        CHECK(st->heads[h].pattern == full->heads[h].pattern, "head %d pattern %s, full %s", h,
              atn_pattern_name(st->heads[h].pattern), atn_pattern_name(full->heads[h].pattern));
    }
    CHECK(st && fabs(st->heads[0].induction - want) < 1e-7, "induction %.17g, by hand %.17g",
          st ? st->heads[0].induction : 0, want);
    CHECK(full->heads[0].pattern == ATN_PATTERN_INDUCTION, "full-capture pattern %s",
          atn_pattern_name(full->heads[0].pattern));
    const char *l0 = back ? atn_corpus_stats_label(back, 0, 0, NULL, 0) : NULL;
    const char *l1 = back ? atn_corpus_stats_label(back, 0, 1, NULL, 0) : NULL;
    CHECK(l0 && !strcmp(l0, "induction"), "head 0 label %s", l0 ? l0 : "(null)");
    CHECK(l1 && !strcmp(l1, "previous token"), "head 1 label %s", l1 ? l1 : "(null)");
    atn_stats_free(st);
    atn_stats_free(full);
    atn_corpus_stats_free(back);
    atn_corpus_stats_free(a);
    atn_corpus_stats_free(b);
    remove(path);
}

/* Positional labels from the per-offset sums: "[CLS] a b c d e f g h [SEP]" (10 tokens);
 * head 0 puts all of row i on token i - 3 (rows 0-2 on themselves), head 1 spreads 0.2 on each
 * of offsets -2..+2 that exists and the rest on itself.  By hand: head 0's mean weight at offset
 * -3 is 1 over the 7 rows per sentence with a token 3 back (rows 3-9), at -2 it is 0; head 1's
 * rows each put 1.0 within 2 tokens; its weight at offset +1 is 0.2 over 9 rows per sentence.
 * Labels "positional" (offset -3) and "local window"; the sums merge in any grouping to the
 * whole's bytes, survive the file, and a partial without them degrades by name. */
static void test_offsets(const char *dir) {
    static const char *const tx[10] = {"[CLS]", "a", "b", "c", "d", "e", "f", "g", "h", "[SEP]"};
    atn_error err = {0};
    atn_cs_identity id = ident(3);
    atn_corpus_stats *whole = atn_corpus_stats_new(&id, &err), *p1 = atn_corpus_stats_new(&id, &err),
                     *p2 = atn_corpus_stats_new(&id, &err), *p3 = atn_corpus_stats_new(&id, &err);
    for (int line = 1; line <= 5; line++) {
        fake f;
        fake_init(&f, 1, 2, 10, tx);
        float *h0 = head_of(&f, 0, 0), *h1 = head_of(&f, 0, 1);
        memset(h0, 0, 100 * sizeof *h0);
        memset(h1, 0, 100 * sizeof *h1);
        for (int i = 0; i < 10; i++) {
            h0[i * 10 + (i >= 3 ? i - 3 : i)] = 1;
            float rest = 1;
            for (int d = -2; d <= 2; d++)
                if (d && i + d >= 0 && i + d < 10)
                    h1[i * 10 + i + d] = 0.2f, rest -= 0.2f;
            h1[i * 10 + i] = rest;
        }
        CHECK(atn_corpus_stats_add(whole, &f.cap, line, &err) == ATN_OK, "%s", err.message);
        atn_corpus_stats *into = line <= 2 ? p1 : line <= 4 ? p2 : p3;
        CHECK(atn_corpus_stats_add(into, &f.cap, line, &err) == ATN_OK, "%s", err.message);
    }
    CHECK(atn_corpus_stats_cover(whole, 1, 5, 0, 0, &err) == ATN_OK, "%s", err.message);
    CHECK(atn_corpus_stats_cover(p1, 1, 2, 0, 0, &err) == ATN_OK, "%s", err.message);
    CHECK(atn_corpus_stats_cover(p2, 3, 4, 0, 0, &err) == ATN_OK, "%s", err.message);
    CHECK(atn_corpus_stats_cover(p3, 5, 5, 0, 0, &err) == ATN_OK, "%s", err.message);
    double w;
    int64_t rows;
    CHECK(atn_corpus_stats_offset(whole, 0, 0, -3, &w, &rows) && w == 1.0 && rows == 35, "offset -3: %.17g over %lld",
          w, (long long)rows);
    CHECK(atn_corpus_stats_offset(whole, 0, 0, -2, &w, &rows) && w == 0 && rows == 40, "offset -2: %g over %lld", w,
          (long long)rows);
    CHECK(atn_corpus_stats_offset(whole, 0, 1, 1, &w, &rows) && fabs(w - 0.2) < 1e-7 && rows == 45,
          "head 1 offset +1: %.17g over %lld", w, (long long)rows);
    CHECK(!atn_corpus_stats_offset(whole, 0, 0, 9, &w, &rows), "offset 9 is out of range");
    atn_cs_label_info in;
    CHECK(atn_corpus_stats_label_info(whole, 0, 0, &in) && in.kind == ATN_CS_LABEL_POSITIONAL && in.offset == -3 &&
              in.value == 1.0 && in.rows == 35 && in.has_offsets,
          "head 0: %s offset %d value %g rows %lld", in.label, in.offset, in.value, (long long)in.rows);
    char why[300];
    const char *lab = atn_corpus_stats_label(whole, 0, 0, why, sizeof why);
    CHECK(lab && !strcmp(lab, "positional") &&
              !strcmp(why, "mean weight 1.000 on the token 3 before the query (offset -3) over 35 query rows"),
          "head 0: %s (%s)", lab, why);
    lab = atn_corpus_stats_label(whole, 0, 1, why, sizeof why);
    CHECK(lab && !strcmp(lab, "local window") && strstr(why, "mean weight 1.000 within 2 tokens") &&
              strstr(why, "over 50 query rows"), "head 1: %s (%s)", lab, why);
    /* merge laws with the offset sums: (p1 p2) p3 and p3 (p2 p1) are the whole's bytes */
    atn_corpus_stats *q1 = atn_corpus_stats_new(&id, &err);
    CHECK(atn_corpus_stats_merge(q1, p3, &err) == ATN_OK && atn_corpus_stats_merge(q1, p2, &err) == ATN_OK &&
              atn_corpus_stats_merge(q1, p1, &err) == ATN_OK, "%s", err.message);
    CHECK(atn_corpus_stats_merge(p1, p2, &err) == ATN_OK && atn_corpus_stats_merge(p1, p3, &err) == ATN_OK, "%s",
          err.message);
    CHECK(same_file(p1, whole, dir), "(p1 p2) p3 differs from the whole");
    CHECK(same_file(q1, whole, dir), "p3 (p2 p1) differs from the whole");
    char path[512];
    snprintf(path, sizeof path, "%s/off.safetensors", dir);
    CHECK(atn_corpus_stats_save(whole, path, &err) == ATN_OK, "%s", err.message);
    atn_corpus_stats *back = atn_corpus_stats_load(path, &err);
    lab = back ? atn_corpus_stats_label(back, 0, 0, why, sizeof why) : NULL;
    CHECK(lab && !strcmp(lab, "positional") && atn_corpus_stats_has_offsets(back), "read back: %s", lab ? lab : "-");
    atn_corpus_stats_free(back);
    /* a partial of before the sums: the two tensors renamed away (same lengths: the offsets stay
       valid) read as none; its label says so; a merge with a newer partial refuses */
    size_t len;
    char *bytes = slurp(path, &len);
    char *o1 = bytes ? memmem(bytes, len, "\"offsets\"", 9) : NULL;
    char *o2 = bytes ? memmem(bytes, len, "\"offsets.rows\"", 14) : NULL;
    CHECK(o1 && o2, "no offsets tensors in the file");
    if (o1 && o2) {
        memcpy(o1, "\"zffsets\"", 9);
        memcpy(o2, "\"zffsets.rows\"", 14);
        FILE *t = fopen(path, "wb");
        fwrite(bytes, 1, len, t);
        fclose(t);
    }
    free(bytes);
    atn_corpus_stats *old = atn_corpus_stats_load(path, &err);
    CHECK(old && !atn_corpus_stats_has_offsets(old), "an old partial: %s", old ? "has offsets" : err.message);
    lab = old ? atn_corpus_stats_label(old, 0, 0, why, sizeof why) : NULL;
    CHECK(lab && strcmp(lab, "positional") && strstr(why, "no per-offset sums in this partial"), "old: %s (%s)",
          lab ? lab : "-", why);
    CHECK(old && !atn_corpus_stats_offset(old, 0, 0, -3, &w, &rows) && rows == 0, "old offsets");
    atn_corpus_stats *fresh = atn_corpus_stats_new(&id, &err);
    CHECK(old && atn_corpus_stats_merge(fresh, old, &err) == ATN_E_INVALID &&
              strstr(err.message, "the second partial has no per-offset sums"), "merge new + old: %s", err.message);
    atn_corpus_stats_free(fresh), atn_corpus_stats_free(old);
    atn_corpus_stats_free(whole), atn_corpus_stats_free(p1), atn_corpus_stats_free(p2), atn_corpus_stats_free(p3);
    atn_corpus_stats_free(q1);
    remove(path);
}

int main(void) {
    char dir[] = "/tmp/atn-cs-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    atn_error err = {0};
    float w[12];
    for (int i = 0; i < 12; i++)
        w[i] = 0.3f + 0.05f * (float)i;   /* 0.3 .. 0.85 */

    /* sums, by hand: head 1's prev share of sentence s is w (rows 1..5 put w on i-1), its self
       share w/6 (row 0 on itself); the mean over lines 1..4 */
    atn_corpus_stats *whole = part(1, 12, w, 4);
    atn_stats *st = NULL;
    CHECK(atn_corpus_stats_means(whole, &st, &err) == ATN_OK, "%s", err.message);
    double want_prev = 0, want_sq = 0;
    for (int i = 0; i < 12; i++) {
        want_prev += w[i];
        want_sq += (double)w[i] * w[i];
    }
    want_prev /= 12, want_sq /= 12;
    CHECK(fabs(st->heads[1].prev - want_prev) < 1e-15, "prev %.17g, want %.17g", st->heads[1].prev, want_prev);
    double mean, sd, lo, hi;
    CHECK(atn_corpus_stats_spread(whole, 0, 1, 6, &mean, &sd, &lo, &hi), "spread");
    CHECK(fabs(sd - sqrt(want_sq - want_prev * want_prev)) < 1e-12, "std %.17g", sd);
    CHECK(lo == (double)w[0] && hi == (double)w[11], "min %g max %g", lo, hi);
    CHECK(fabs(st->heads[0].entropy - log2(6.0)) < 1e-6, "uniform entropy %.17g", st->heads[0].entropy);
    atn_stats_free(st);

    /* histograms: head 0's rows have entropy log2 6 = 2.585 bits (bin 10 of 1/4 bit), sink 1/6
       (bin 3 of 1/20), distance (sum_k |i-k|)/6: rows 0..5 give 2.5 1.83 1.5 1.5 1.83 2.5 */
    int32_t bins;
    const uint64_t *he = atn_corpus_stats_histogram(whole, 0, 0, 0, &bins);
    CHECK(bins == ATN_CS_ENTROPY_BINS && he[10] == 72, "entropy bin 10: %llu", (unsigned long long)he[10]);
    const uint64_t *hs = atn_corpus_stats_histogram(whole, 0, 0, 2, &bins);
    CHECK(hs[3] == 72, "sink bin 3: %llu", (unsigned long long)hs[3]);
    const uint64_t *hd = atn_corpus_stats_histogram(whole, 0, 0, 1, &bins);
    CHECK(hd[1] == 48 && hd[2] == 24, "distance bins 1, 2: %llu %llu", (unsigned long long)hd[1],
          (unsigned long long)hd[2]);

    /* exemplars: head 0 ties everywhere (1/6 on every key): the first lines, then queries, win;
       the key is the first non-special one (1); head 1: the heaviest w, line 12 first */
    const atn_cs_exemplar *ex;
    int32_t n = atn_corpus_stats_exemplars(whole, 0, 0, &ex);
    CHECK(n == 4, "count %d", n);
    for (int32_t i = 0; i < n; i++)
        CHECK(ex[i].line == 1 && ex[i].query == i && ex[i].key == 1 && !strcmp(ex[i].key_text, "the"),
              "head 0 exemplar %d: line %lld query %d key %d", i, (long long)ex[i].line, ex[i].query, ex[i].key);
    n = atn_corpus_stats_exemplars(whole, 0, 1, &ex);
    CHECK(n == 4 && ex[0].line == 12 && ex[0].query == 2 && ex[0].key == 1 && ex[0].weight == w[11] &&
          !strcmp(ex[0].query_text, "cat") && ex[3].line == 12 && ex[3].query == 5,
          "head 1 exemplar 0: line %lld query %d key %d w %g", (long long)ex[0].line, ex[0].query, ex[0].key,
          ex[0].weight);

    /* labels from the evidence: head 0 uniform (entropy 1 normalised; 4 of 6 rows within distance 2,
       under 70%), head 1 previous-token */
    char why[200];
    const char *lab = atn_corpus_stats_label(whole, 0, 0, why, sizeof why);
    CHECK(lab && !strcmp(lab, "broad") && strstr(why, "1.000"), "head 0: %s (%s)", lab, why);
    lab = atn_corpus_stats_label(whole, 0, 1, why, sizeof why);
    CHECK(lab && !strcmp(lab, "previous token") && strstr(why, "mean weight 0.575"), "head 1: %s (%s)", lab, why);
    CHECK(!atn_corpus_stats_label(whole, 1, 0, NULL, 0), "a layer out of range");
    {   /* a sink head: every row on the first token */
        atn_cs_identity sid = ident(2);
        atn_corpus_stats *sk = atn_corpus_stats_new(&sid, &err);
        fake g;
        fake_init(&g, 1, 2, 6, texts);
        set_pattern(head_of(&g, 0, 0), 6, 2);
        set_pattern(head_of(&g, 0, 1), 6, 5);
        CHECK(atn_corpus_stats_add(sk, &g.cap, 1, &err) == ATN_OK, "%s", err.message);
        lab = atn_corpus_stats_label(sk, 0, 0, why, sizeof why);
        CHECK(lab && !strcmp(lab, "sink") && strstr(why, "100% of 6 query rows"), "sink: %s (%s)", lab, why);
        lab = atn_corpus_stats_label(sk, 0, 1, why, sizeof why);
        CHECK(lab && !strcmp(lab, "delimiter"), "[SEP] head: %s (%s)", lab, why);
        atn_corpus_stats_free(sk);
    }
    {   /* a next-token head and a head on itself */
        atn_cs_identity sid = ident(2);
        atn_corpus_stats *sk = atn_corpus_stats_new(&sid, &err);
        fake g;
        fake_init(&g, 1, 2, 6, texts);
        set_pattern(head_of(&g, 0, 0), 6, 1);
        float *self = head_of(&g, 0, 1);
        memset(self, 0, 36 * sizeof *self);
        for (int i = 0; i < 6; i++)
            self[i * 6 + i] = 1;
        CHECK(atn_corpus_stats_add(sk, &g.cap, 1, &err) == ATN_OK, "%s", err.message);
        atn_cs_label_info in;
        lab = atn_corpus_stats_label(sk, 0, 0, why, sizeof why);
        CHECK(lab && !strcmp(lab, "next token") && atn_corpus_stats_label_info(sk, 0, 0, &in) &&
              in.kind == ATN_CS_LABEL_NEXT && in.value >= 0.5, "next head: %s (%s)", lab, why);
        lab = atn_corpus_stats_label(sk, 0, 1, why, sizeof why);
        CHECK(lab && !strcmp(lab, "self") && atn_corpus_stats_label_info(sk, 0, 1, &in) &&
              in.kind == ATN_CS_LABEL_SELF && fabs(in.value - 1) < 1e-12, "self head: %s (%s)", lab, why);
        atn_corpus_stats_free(sk);
    }

    /* merge laws: ((a b) c), (c (b a)) and the whole, byte for byte */
    atn_corpus_stats *a = part(1, 3, w, 4), *b = part(4, 9, w, 4), *c = part(10, 12, w, 4);
    atn_corpus_stats *x = part(1, 3, w, 4), *y = part(10, 12, w, 4);
    CHECK(atn_corpus_stats_merge(a, b, &err) == ATN_OK && atn_corpus_stats_merge(a, c, &err) == ATN_OK, "%s",
          err.message);
    CHECK(atn_corpus_stats_merge(y, b, &err) == ATN_OK && atn_corpus_stats_merge(y, x, &err) == ATN_OK, "%s",
          err.message);
    CHECK(same_file(a, whole, dir), "(a b) c differs from the whole");
    CHECK(same_file(y, whole, dir), "c (b a) differs from the whole");
    int64_t f0, l0;
    CHECK(atn_corpus_stats_ranges(y, &f0, &l0, 1) == 1 && f0 == 1 && l0 == 12, "ranges");
    CHECK(atn_corpus_stats_missing(y, &f0, &l0, 1) == 1 && f0 == 13 && l0 == 100, "missing %lld-%lld",
          (long long)f0, (long long)l0);
    /* refusals: an overlap, another identity; `into` unchanged after one */
    CHECK(atn_corpus_stats_merge(a, b, &err) == ATN_E_INVALID && strstr(err.message, "lines 4-9 are covered twice"),
          "overlap: %s", err.message);
    CHECK(same_file(a, whole, dir), "a refused merge changed the partial");
    atn_cs_identity other = ident(4);
    other.precision = "bf16";
    atn_corpus_stats *o = atn_corpus_stats_new(&other, &err);
    CHECK(atn_corpus_stats_merge(o, c, &err) == ATN_E_INVALID &&
              !strcmp(err.message, "different precision: \"bf16\" and \"fp32\""), "identity: %s", err.message);
    fake f;
    sentence(&f, 0.5f);
    CHECK(atn_corpus_stats_add(whole, &f.cap, 12, &err) == ATN_E_INVALID, "a line added twice");

    /* the file: round trip, then refusals */
    char p[512];
    snprintf(p, sizeof p, "%s/w.safetensors", dir);
    CHECK(atn_corpus_stats_save(whole, p, &err) == ATN_OK, "%s", err.message);
    atn_corpus_stats *back = atn_corpus_stats_load(p, &err);
    CHECK(back && same_file(back, whole, dir), "round trip: %s", err.message);
    size_t len;
    char *bytes = slurp(p, &len);
    FILE *t = fopen(p, "wb");
    fwrite(bytes, 1, len - 9, t);   /* truncated */
    fclose(t);
    atn_corpus_stats *bad = atn_corpus_stats_load(p, &err);
    CHECK(!bad && err.status == ATN_E_FORMAT && strstr(err.message, p), "truncated: %s", err.message);
    char *fmt = memmem(bytes, len, "attnscope-corpus-stats", 22);
    if (fmt)
        fmt[0] = 'A';
    t = fopen(p, "wb");
    fwrite(bytes, 1, len, t);
    fclose(t);
    bad = atn_corpus_stats_load(p, &err);
    CHECK(!bad && err.status == ATN_E_FORMAT && strstr(err.message, "not a corpus statistics file"), "format: %s",
          err.message);
    free(bytes);
    remove(p);
    snprintf(p, sizeof p, "%s/a.safetensors", dir), remove(p);
    snprintf(p, sizeof p, "%s/b.safetensors", dir), remove(p);
    test_induction(dir);
    test_offsets(dir);
    remove(dir);
    atn_corpus_stats_free(back), atn_corpus_stats_free(o), atn_corpus_stats_free(whole);
    atn_corpus_stats_free(a), atn_corpus_stats_free(b), atn_corpus_stats_free(c);
    atn_corpus_stats_free(x), atn_corpus_stats_free(y);
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

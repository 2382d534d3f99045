/* Per-head statistics in the manner of Clark et al. 2019 ("What Does BERT Look At?"):
 * entropy of the attention rows, average attention to [CLS], [SEP], punctuation, the token
 * itself, the previous and the next token, mean attention distance; and a pattern label
 * read off those numbers.  Averaged over sentences for the corpus mode. */
#include "analysis.h"
#include "head-stats-private.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The accumulator behind an atn_stats (atn_stats_new allocates this; the public struct is
 * its first member): whether finish has turned the sums into means. */
typedef struct stats_acc {
    atn_stats pub;
    bool finished;
} stats_acc;

static stats_acc *acc_of(const atn_stats *st) { return (stats_acc *)st; }

bool stats_is_finished(const atn_stats *st) { return acc_of(st)->finished; }

#include "tokenize/unicode-tables.h"

/* ---- the pattern label: thresholds ----------------------------------------------------
 * A head gets the first label whose test passes, in this order:
 *   induction                   induction >= INDUCTION (0.5) and above each of prev, next, self
 *                               (measured on repeated spans only: a text without repeats has 0)
 *   previous / next / diagonal  the largest of prev, next, self is >= POSITIONAL (0.5)
 *   vertical [CLS] / [SEP]      cls or sep (the larger) >= VERTICAL (0.5)
 *   vertical punctuation        punct >= VERTICAL (0.5)
 *   block                       local (|i-j| <= 2) >= LOCAL (0.7) while entropy_norm < BROAD
 *                               (in a short input every key is within 2, which says nothing),
 *                               or, for sentence pairs, same_segment >= SEGMENT (0.9) with
 *                               cls + sep < SEGMENT_SPECIAL (0.5)
 *   broad                       entropy_norm >= BROAD (0.75)
 *   mixed                       otherwise
 * The 0.5 thresholds follow Clark et al.'s observation that specialised heads put more
 * than half their attention on one kind of target; LOCAL and BROAD were set by eye on
 * bert-base heatmaps.  tests/analysis/test-head-stats.c checks each rule just below, at and
 * just above its threshold: moving one fails that test. */
#define TH_INDUCTION 0.5
#define TH_POSITIONAL 0.5
#define TH_VERTICAL 0.5
#define TH_LOCAL 0.7
#define TH_SEGMENT 0.9
#define TH_BROAD 0.75
#define TH_SEGMENT_SPECIAL 0.5

static const char *const pattern_names[ATN_PATTERN_COUNT] = {
    "diagonal", "previous", "next", "vertical [CLS]", "vertical [SEP]", "vertical punctuation", "block", "broad",
    "mixed", "induction",
};

const char *atn_pattern_name(atn_pattern p) {
    return (unsigned)p < ATN_PATTERN_COUNT ? pattern_names[p] : "mixed";
}

atn_pattern atn_pattern_classify(const atn_head_stats *s, bool has_pairs) {
    double pos = fmax(s->self, fmax(s->prev, s->next));
    if (s->induction >= TH_INDUCTION && s->induction > pos)
        return ATN_PATTERN_INDUCTION;
    if (pos >= TH_POSITIONAL) {
        if (s->prev == pos)
            return ATN_PATTERN_PREVIOUS;
        if (s->next == pos)
            return ATN_PATTERN_NEXT;
        return ATN_PATTERN_DIAGONAL;
    }
    if (fmax(s->cls, s->sep) >= TH_VERTICAL)
        return s->cls >= s->sep ? ATN_PATTERN_CLS : ATN_PATTERN_SEP;
    if (s->punct >= TH_VERTICAL)
        return ATN_PATTERN_PUNCT;
    if ((s->local >= TH_LOCAL && s->entropy_norm < TH_BROAD) || (has_pairs && s->same_segment >= TH_SEGMENT && s->cls + s->sep < TH_SEGMENT_SPECIAL))
        return ATN_PATTERN_BLOCK;
    if (s->entropy_norm >= TH_BROAD)
        return ATN_PATTERN_BROAD;
    return ATN_PATTERN_MIXED;
}

/* ---- punctuation ------------------------------------------------------------------------ */

static uint32_t next_cp(const unsigned char **pp) {
    const unsigned char *p = *pp;
    uint32_t c = p[0];
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (len > 1) {
        c &= 0x3f >> (len - 1);
        for (int i = 1; i < len; i++) {
            if ((p[i] & 0xc0) != 0x80) { /* malformed: not punctuation */
                *pp = p + i;
                return 0xfffd;
            }
            c = (c << 6) | (p[i] & 0x3f);
        }
    }
    *pp = p + len;
    return c;
}

bool atn_token_is_punct(const char *text) {
    if (!text)
        return false;
    const unsigned char *p = (const unsigned char *)text;
    if (p[0] == '#' && p[1] == '#' && p[2]) /* WordPiece continuation: look at the piece */
        p += 2;
    if (!*p)
        return false;
    while (*p) {
        uint32_t c = next_cp(&p);
        bool punct;
        if (c < 0x80) /* ASCII as BERT's tokenizer sees it: every non-alphanumeric printable */
            punct = (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
        else
            punct = atn_uc_class_of(c) == ATN_UC_PUNCT;
        if (!punct)
            return false;
    }
    return true;
}

/* ---- accumulation ------------------------------------------------------------------------ */

atn_stats *atn_stats_new(int32_t n_layers, int32_t n_heads, atn_error *err) {
    if (n_layers <= 0 || n_heads <= 0 || n_layers > 4096 || n_heads > 4096) {
        atn_error_set(err, ATN_E_INVALID, "stats: model shape %d layers x %d heads is not valid", n_layers, n_heads);
        return NULL;
    }
    stats_acc *acc = calloc(1, sizeof *acc);
    atn_stats *st = acc ? &acc->pub : NULL;
    if (st)
        st->heads = calloc((size_t)n_layers * n_heads, sizeof *st->heads);
    if (!st || !st->heads) {
        atn_stats_free(st);
        atn_error_set(err, ATN_E_NOMEM, "stats: out of memory");
        return NULL;
    }
    st->n_layers = n_layers;
    st->n_heads = n_heads;
    return st;
}

void atn_stats_free(atn_stats *st) {
    if (!st)
        return;
    free(st->heads);
    free(acc_of(st));
}

/* What makes two positions the same token for the induction targets: their ids, or where the
 * capture has none (an attention file without token_ids reads them as -1) their texts, each
 * position keyed by the first position with its text.  NULL with *owned NULL when there is no
 * encoding; *owned is the caller's to free.  false when out of memory. */
static bool same_token_keys(const atn_encoding *enc, int32_t n, const int32_t **keys, int32_t **owned) {
    *keys = NULL, *owned = NULL;
    if (!enc)
        return true;
    bool all_ids = true;
    for (int32_t i = 0; i < n && all_ids; i++)
        all_ids = enc->ids[i] >= 0;
    if (all_ids) {
        *keys = enc->ids;
        return true;
    }
    int32_t *k = malloc((size_t)n * sizeof *k);
    if (!k)
        return false;
    for (int32_t i = 0; i < n; i++) {
        k[i] = i;
        const char *t = enc->tokens[i].text;
        for (int32_t j = 0; j < i && t; j++)
            if (enc->tokens[j].text && !strcmp(enc->tokens[j].text, t)) {
                k[i] = k[j];
                break;
            }
    }
    *keys = *owned = k;
    return true;
}

/* The induction targets of each kept row r (position i = keep[r]): the positions j + 1 after
 * each earlier copy of the pair (i - 1, i), i.e. ids[j - 1] = ids[i - 1] and ids[j] = ids[i]
 * with j + 1 < i and j - 1, j, j + 1 all kept.  Into *start ([m + 1]) and *key (owned by the
 * caller; both NULL when ids is NULL or no row has a target).  false when out of memory. */
static bool induction_targets(const int32_t *ids, const int32_t *keep, int32_t m, int32_t n, int32_t **start,
                              int32_t **key) {
    *start = NULL, *key = NULL;
    if (!ids || m < 4)
        return true;
    /* kept[p]: p is a kept position (the rows' neighbours must be real tokens) */
    unsigned char *kept = calloc((size_t)n, 1);
    if (!kept)
        return false;
    for (int32_t r = 0; r < m; r++)
        kept[keep[r]] = 1;
    size_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t r = 0; r < m; r++) {
            int32_t i = keep[r];
            if (pass == 1)
                (*start)[r] = (int32_t)total;
            if (i < 1 || !kept[i - 1])
                continue;
            for (int32_t jj = 1; jj + 1 < i; jj++)
                if (ids[jj] == ids[i] && ids[jj - 1] == ids[i - 1] && kept[jj - 1] && kept[jj] && kept[jj + 1]) {
                    if (pass == 1)
                        (*key)[total] = jj + 1;
                    total++;
                }
        }
        if (pass == 0) {
            if (total == 0) {
                free(kept);
                return true;
            }
            *start = malloc((size_t)(m + 1) * sizeof **start);
            *key = malloc(total * sizeof **key);
            if (!*start || !*key) {
                free(*start);
                free(*key);
                *start = NULL, *key = NULL;
                free(kept);
                return false;
            }
            total = 0;
        }
    }
    (*start)[m] = (int32_t)total;
    free(kept);
    return true;
}

atn_status stats_sentence_open(stats_sentence *sent, const atn_capture *cap, atn_error *err) {
    memset(sent, 0, sizeof *sent);
    int32_t n = cap->n;
    const atn_encoding *enc = cap->enc;
    unsigned char *kind = calloc((size_t)(n > 0 ? n : 1), 2);   /* kind[n], then special[n] */
    int32_t *keep = malloc((size_t)(n > 0 ? n : 1) * sizeof *keep);
    if (!kind || !keep) {
        free(kind);
        free(keep);
        return atn_error_set(err, ATN_E_NOMEM, "stats: out of memory");
    }
    unsigned char *special = kind + (n > 0 ? n : 1);
    int32_t m = 0;
    bool pair = false;
    for (int32_t i = 0; i < n; i++) {
        bool on = !enc || !enc->mask || enc->mask[i];
        if (!on)
            continue;
        keep[m++] = i;
        const atn_token *tk = enc && enc->tokens ? &enc->tokens[i] : NULL;
        const char *text = tk ? tk->text : NULL;
        if (tk && tk->role == ATN_TOKEN_CLS)
            kind[i] = KIND_CLS;
        else if (tk && tk->role == ATN_TOKEN_SEP)
            kind[i] = KIND_SEP;
        else if (text && !(enc->tokens[i].special) && atn_token_is_punct(text))
            kind[i] = KIND_PUNCT;
        special[i] = tk && (tk->special || tk->role == ATN_TOKEN_CLS || tk->role == ATN_TOKEN_SEP ||
                            tk->role == ATN_TOKEN_PAD);
        if (enc && enc->type_ids && enc->type_ids[i] != 0)
            pair = true;
    }
    sent->n = n;
    sent->m = m;
    sent->keep = keep;
    sent->kind = kind;
    sent->special = special;
    sent->seg = enc ? enc->type_ids : NULL;
    sent->log2m = m > 1 ? log2((double)m) : 1.0;
    sent->pair = pair;
    int32_t *ind_start, *ind_key;
    const int32_t *same;
    int32_t *same_owned;
    bool ok = same_token_keys(enc, n, &same, &same_owned) &&
              induction_targets(same, keep, m, n, &ind_start, &ind_key);
    free(same_owned);
    if (!ok) {
        stats_sentence_close(sent);
        return atn_error_set(err, ATN_E_NOMEM, "stats: out of memory");
    }
    sent->ind_start = ind_start;
    sent->ind_key = ind_key;
    return ATN_OK;
}

void stats_sentence_close(stats_sentence *sent) {
    free((void *)sent->kind);
    free((void *)sent->keep);
    free((void *)sent->ind_start);
    free((void *)sent->ind_key);
    memset(sent, 0, sizeof *sent);
}

/* Adds query row r (the r-th kept token; row [n] its probabilities over every key) of one
 * head to h, and its per-row figures to rows (NULL: none).  The one place the numbers are
 * made: the whole-matrix pass (stats_head_sentence) and the row-by-row accumulator
 * (atn_stats_rows_add) both call it, row after row in query order, so they give the same
 * bits. */
static void row_sums(const stats_sentence *sent, int32_t r, const float *row, head_sums *h, const stats_rows *rows) {
    const unsigned char *kind = sent->kind, *special = sent->special;
    const int32_t *keep = sent->keep, *seg = sent->seg;
    int32_t m = sent->m, i = keep[r];
    double e = 0, row_dist = 0;
    int32_t best = -1;
    float best_w = 0;
    for (int32_t c = 0; c < m; c++) {
        int32_t k = keep[c];
        double w = row[k];
        if (!isfinite(w))
            w = 0;
        if (w > 0)
            e -= w * log2(w);
        if (kind[k] == KIND_CLS)
            h->cls += w;
        else if (kind[k] == KIND_SEP)
            h->sep += w;
        else if (kind[k] == KIND_PUNCT)
            h->punct += w;
        int32_t dd = i > k ? i - k : k - i;
        if (dd <= 2)
            h->local += w;
        h->dist += w * dd;
        if (!seg || seg[k] == seg[i])
            h->same += w;
        if (rows) {   /* the per-row figures the corpus partials keep (corpus-stats.c) */
            row_dist += w * dd;
            if (!special[k] && (best < 0 || (float)w > best_w)) {
                best = k;
                best_w = (float)w;
            }
        }
    }
    h->ent += e;
    h->ent_n += m > 1 ? e / sent->log2m : 0.0;
    h->self += isfinite(row[i]) ? row[i] : 0;
    if (r > 0 && keep[r - 1] == i - 1) {
        h->prev += isfinite(row[i - 1]) ? row[i - 1] : 0;
        h->n_prev++;
    }
    if (r + 1 < m && keep[r + 1] == i + 1) {
        h->next += isfinite(row[i + 1]) ? row[i + 1] : 0;
        h->n_next++;
    }
    if (sent->ind_start && sent->ind_start[r + 1] > sent->ind_start[r]) {   /* a row in a repeated span */
        for (int32_t t = sent->ind_start[r]; t < sent->ind_start[r + 1]; t++)
            h->ind += isfinite(row[sent->ind_key[t]]) ? row[sent->ind_key[t]] : 0;
        h->n_ind++;
    }
    if (rows) {
        float sink = row[keep[0]];
        rows->entropy[r] = e;
        rows->distance[r] = row_dist;
        rows->sink[r] = isfinite(sink) ? sink : 0;
        rows->best_key[r] = best;
        rows->best_weight[r] = best_w;
    }
    h->rows++;
}

void stats_row_add(const stats_sentence *sent, int32_t r, const float *row, head_sums *h, const stats_rows *rows) {
    row_sums(sent, r, row, h, rows);
}

/* The per-sentence means of a head's sums over its m rows. */
static void head_means(const head_sums *h, int32_t m, double out[STATS_COUNT]) {
    out[STATS_ENTROPY] = h->ent / m;
    out[STATS_ENTROPY_NORM] = h->ent_n / m;
    out[STATS_CLS] = h->cls / m;
    out[STATS_SEP] = h->sep / m;
    out[STATS_PUNCT] = h->punct / m;
    out[STATS_SELF] = h->self / m;
    out[STATS_PREV] = h->n_prev ? h->prev / h->n_prev : 0.0;
    out[STATS_NEXT] = h->n_next ? h->next / h->n_next : 0.0;
    out[STATS_LOCAL] = h->local / m;
    out[STATS_SAME_SEGMENT] = h->same / m;
    out[STATS_DISTANCE] = h->dist / m;
}

/* A head's induction share in one sentence (not one of STATS_*: the corpus partials'
 * files keep those): 0 without rows in a repeated span. */
static double head_induction(const head_sums *h) { return h->n_ind ? h->ind / h->n_ind : 0.0; }

void stats_head_means(const head_sums *h, int32_t m, double out[STATS_COUNT]) { head_means(h, m, out); }

double stats_head_induction(const head_sums *h) { return head_induction(h); }

/* One head's matrix a [n][n] of the sentence: its means (and per-row figures); returns its
 * induction share. */
static double head_of_matrix(const stats_sentence *sent, const float *a, double out[STATS_COUNT],
                             const stats_rows *rows) {
    head_sums h = {0};
    for (int32_t r = 0; r < sent->m; r++)
        if (!sent->row_on || sent->row_on[r])
            row_sums(sent, r, a + (size_t)sent->keep[r] * sent->n, &h, rows);
    head_means(&h, sent->row_on ? sent->m_on : sent->m, out);
    return head_induction(&h);
}

double stats_head_sentence(const stats_sentence *sent, const float *a, double out[STATS_COUNT], const stats_rows *rows) {
    return head_of_matrix(sent, a, out, rows);
}

static void add_means(atn_head_stats *s, const double v[STATS_COUNT]) {
    s->entropy += v[STATS_ENTROPY];
    s->entropy_norm += v[STATS_ENTROPY_NORM];
    s->cls += v[STATS_CLS];
    s->sep += v[STATS_SEP];
    s->punct += v[STATS_PUNCT];
    s->self += v[STATS_SELF];
    s->prev += v[STATS_PREV];
    s->next += v[STATS_NEXT];
    s->local += v[STATS_LOCAL];
    s->same_segment += v[STATS_SAME_SEGMENT];
    s->distance += v[STATS_DISTANCE];
}

/* One sentence's sums for heads, shared by the threads that split them (each head's sums
 * are its own, so any split gives the same bits). */
typedef struct stats_job {
    atn_stats *st;
    const atn_capture *cap;
    const stats_sentence *sent;
    float *buf;                  /* [n][n] a head made on demand (a capture without attention), or NULL */
    int32_t first, step;         /* this thread's heads: first, first + step, ... */
    atn_progress_fn progress;    /* or NULL */
    void *user_data;
    int *stop;                   /* set when progress said stop: every thread's heads end */
    atn_status status;           /* a head that could not be made */
    atn_error err;
} stats_job;

static bool add_head(stats_job *j, int32_t idx) {
    double v[STATS_COUNT], ind;
    if (!atn_capture_head_present(j->cap, idx / j->st->n_heads, idx % j->st->n_heads)) {
        atn_head_stats *s = &j->st->heads[idx];   /* a head the layer does not have: no numbers */
        s->entropy = s->entropy_norm = s->cls = s->sep = s->punct = s->self = s->prev = s->next = NAN;
        s->local = s->same_segment = s->distance = s->induction = NAN;
        return true;
    }
    const float *a = atn_capture_head_read(j->cap, idx / j->st->n_heads, idx % j->st->n_heads, j->buf, &j->err);
    if (!a) {
        j->status = j->err.status;
        return false;
    }
    ind = head_of_matrix(j->sent, a, v, NULL);
    add_means(&j->st->heads[idx], v);
    j->st->heads[idx].induction += ind;
    return true;
}

static void *stats_worker(void *arg) {
    stats_job *j = arg;
    int32_t heads = j->st->n_layers * j->st->n_heads, mine = (heads - j->first + j->step - 1) / j->step, done = 0;
    for (int32_t idx = j->first; idx < heads; idx += j->step) {
        if (j->stop && __atomic_load_n(j->stop, __ATOMIC_RELAXED))
            return NULL;
        if (!add_head(j, idx)) {
            __atomic_store_n(j->stop, 1, __ATOMIC_RELAXED);
            return NULL;
        }
        done++;
        if (j->progress && !j->progress(mine ? (double)done / mine : 1.0, ATN_STAGE_STATISTICS, j->user_data))
            __atomic_store_n(j->stop, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static atn_status stats_add(atn_stats *st, const atn_capture *cap, atn_progress_fn progress, void *user_data,
                            atn_error *err);

atn_status atn_stats_add(atn_stats *st, const atn_capture *cap, atn_error *err) {
    return stats_add(st, cap, NULL, NULL, err);
}

static atn_status stats_add(atn_stats *st, const atn_capture *cap, atn_progress_fn progress, void *user_data,
                            atn_error *err) {
    if (!st || !cap)
        return atn_error_set(err, ATN_E_INVALID, "stats: no capture");
    if (acc_of(st)->finished)
        return atn_error_set(err, ATN_E_INVALID, "stats: add after finish");
    if (!cap->attn && !cap->attn_on_demand)
        return atn_error_set(err, ATN_E_INVALID, "stats: the run kept no attention (keep_attention is off)");
    if (cap->n_layers != st->n_layers || cap->n_heads != st->n_heads)
        return atn_error_set(err, ATN_E_SHAPE, "stats: capture has %d layers x %d heads, expected %d x %d",
                             cap->n_layers, cap->n_heads, st->n_layers, st->n_heads);
    int32_t n = cap->n;
    stats_sentence sent;
    atn_status prep = stats_sentence_open(&sent, cap, err);
    if (prep != ATN_OK)
        return prep;
    int32_t m = sent.m;
    if (m == 0) {
        stats_sentence_close(&sent);
        return ATN_OK;
    }
    enum { MAX_THREADS = 8 };
    stats_job jobs[MAX_THREADS];
    int32_t heads = st->n_layers * st->n_heads, threads = 1;
    /* bert-base at 512 tokens: 38M weights, each with a log2 (~0.4 s on one core); small
       inputs stay on this thread */
    if ((double)m * m * heads >= 1 << 20) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int32_t)cores;
        threads = threads > heads ? heads : threads;
    }
    pthread_t tid[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    int stop = 0;
    for (int32_t t = 0; t < threads; t++) {
        jobs[t] = (stats_job){st, cap, &sent, NULL, t, threads, progress, user_data, &stop, ATN_OK, {0}};
        if (!cap->attn && !(jobs[t].buf = malloc((size_t)n * n * sizeof(float)))) {
            for (int32_t u = 0; u < t; u++)
                free(jobs[u].buf);
            stats_sentence_close(&sent);
            return atn_error_set(err, ATN_E_NOMEM, "stats: out of memory for a head of %d tokens", n);
        }
    }
    for (int32_t t = 1; t < threads; t++)
        started[t] = pthread_create(&tid[t], NULL, stats_worker, &jobs[t]) == 0;
    stats_worker(&jobs[0]);
    for (int32_t t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            stats_worker(&jobs[t]); /* no thread: do its share here */
    }
    bool pair = sent.pair;
    stats_sentence_close(&sent);
    for (int32_t t = 0; t < threads; t++)
        free(jobs[t].buf);
    for (int32_t t = 0; t < threads; t++)
        if (jobs[t].status) {
            if (err)
                *err = jobs[t].err;
            return jobs[t].status;
        }
    if (__atomic_load_n(&stop, __ATOMIC_RELAXED))
        return atn_error_set(err, ATN_E_CANCELLED, "stats: cancelled");
    st->n_sentences++;
    st->n_tokens += m;
    st->has_pairs |= pair;
    return ATN_OK;
}

/* ---- row by row: the statistics of rows as a forward makes them -------------------------- */

struct atn_stats_rows {
    stats_sentence sent;
    int32_t *rank;      /* [n] token i's place among the kept tokens, -1 for a masked one */
    int32_t n_layers, n_heads;
    head_sums *heads;   /* [L][H] */
};

atn_status atn_stats_rows_new(const atn_encoding *enc, int32_t n_layers, int32_t n_heads, atn_stats_rows **out,
                              atn_error *err) {
    *out = NULL;
    if (!enc || enc->n <= 0)
        return atn_error_set(err, ATN_E_INVALID, "stats: no tokens");
    if (n_layers <= 0 || n_heads <= 0 || n_layers > 4096 || n_heads > 4096)
        return atn_error_set(err, ATN_E_INVALID, "stats: model shape %d layers x %d heads is not valid", n_layers,
                             n_heads);
    atn_stats_rows *r = calloc(1, sizeof *r);
    if (!r)
        return atn_error_set(err, ATN_E_NOMEM, "stats: out of memory");
    atn_capture tokens = {.n = enc->n, .enc = enc};   /* what stats_sentence_open reads */
    atn_status st = stats_sentence_open(&r->sent, &tokens, err);
    if (st) {
        free(r);
        return st;
    }
    r->rank = malloc((size_t)enc->n * sizeof *r->rank);
    r->heads = calloc((size_t)n_layers * n_heads, sizeof *r->heads);
    if (!r->rank || !r->heads) {
        atn_stats_rows_free(r);
        return atn_error_set(err, ATN_E_NOMEM, "stats: out of memory");
    }
    for (int32_t i = 0; i < enc->n; i++)
        r->rank[i] = -1;
    for (int32_t k = 0; k < r->sent.m; k++)
        r->rank[r->sent.keep[k]] = k;
    r->n_layers = n_layers, r->n_heads = n_heads;
    *out = r;
    return ATN_OK;
}

void atn_stats_rows_add(atn_stats_rows *r, int32_t layer, int32_t head, int32_t query, const float *row) {
    if (!r || !row || layer < 0 || layer >= r->n_layers || head < 0 || head >= r->n_heads || query < 0 ||
        query >= r->sent.n || r->rank[query] < 0)
        return;
    row_sums(&r->sent, r->rank[query], row, &r->heads[(size_t)layer * r->n_heads + head], NULL);
}

atn_status atn_stats_rows_fold(atn_stats_rows *r, atn_stats *st, atn_error *err) {
    if (!r || !st)
        return atn_error_set(err, ATN_E_INVALID, "stats: NULL");
    if (acc_of(st)->finished)
        return atn_error_set(err, ATN_E_INVALID, "stats: add after finish");
    if (r->n_layers != st->n_layers || r->n_heads != st->n_heads)
        return atn_error_set(err, ATN_E_SHAPE, "stats: rows of %d layers x %d heads, expected %d x %d", r->n_layers,
                             r->n_heads, st->n_layers, st->n_heads);
    size_t heads = (size_t)r->n_layers * r->n_heads;
    for (size_t i = 0; i < heads; i++)
        if (r->heads[i].rows != r->sent.m)
            return atn_error_set(err, ATN_E_INVALID, "stats: layer %zu head %zu got %d of its %d query rows",
                                 i / (size_t)r->n_heads, i % (size_t)r->n_heads, r->heads[i].rows, r->sent.m);
    if (r->sent.m == 0)
        return ATN_OK;
    for (size_t i = 0; i < heads; i++) {
        double v[STATS_COUNT];
        head_means(&r->heads[i], r->sent.m, v);
        add_means(&st->heads[i], v);
        st->heads[i].induction += head_induction(&r->heads[i]);
    }
    st->n_sentences++;
    st->n_tokens += r->sent.m;
    st->has_pairs |= r->sent.pair;
    return ATN_OK;
}

void atn_stats_rows_free(atn_stats_rows *r) {
    if (!r)
        return;
    stats_sentence_close(&r->sent);
    free(r->rank);
    free(r->heads);
    free(r);
}

atn_status atn_stats_finish(atn_stats *st, atn_error *err) {
    if (!st)
        return atn_error_set(err, ATN_E_INVALID, "stats: NULL");
    if (acc_of(st)->finished)
        return ATN_OK;
    double k = st->n_sentences ? 1.0 / (double)st->n_sentences : 0.0;
    for (size_t i = 0; i < (size_t)st->n_layers * st->n_heads; i++) {
        atn_head_stats *s = &st->heads[i];
        s->entropy *= k;
        s->entropy_norm *= k;
        s->cls *= k;
        s->sep *= k;
        s->punct *= k;
        s->self *= k;
        s->prev *= k;
        s->next *= k;
        s->induction *= k;
        s->local *= k;
        s->same_segment *= k;
        s->distance *= k;
        s->pattern = st->n_sentences ? atn_pattern_classify(s, st->has_pairs) : ATN_PATTERN_MIXED;
    }
    acc_of(st)->finished = true;
    return ATN_OK;
}

atn_status atn_stats_compute(const atn_capture *cap, atn_stats **out, atn_error *err) {
    return atn_stats_compute_progress(cap, NULL, NULL, out, err);
}

atn_status atn_stats_compute_progress(const atn_capture *cap, atn_progress_fn progress, void *user_data,
                                      atn_stats **out, atn_error *err) {
    *out = NULL;
    if (!cap)
        return atn_error_set(err, ATN_E_INVALID, "stats: no capture");
    atn_stats *st = atn_stats_new(cap->n_layers, cap->n_heads, err);
    if (!st)
        return err ? err->status : ATN_E_NOMEM;
    atn_status s = stats_add(st, cap, progress, user_data, err);
    if (s == ATN_OK)
        s = atn_stats_finish(st, err);
    if (s) {
        atn_stats_free(st);
        return s;
    }
    *out = st;
    return ATN_OK;
}

bool atn_head_stats_absent(const atn_head_stats *s) { return s && isnan(s->entropy) && isnan(s->distance); }

static double max2(double a, double b) { return a > b ? a : b; }

bool atn_stats_clearest_head(const atn_stats *st, int32_t *layer, int32_t *head) {
    if (!st || !st->heads || st->n_layers <= 0 || st->n_heads <= 0)
        return false;
    int64_t best = 0;
    double best_score = -1;
    for (int64_t k = 0; k < (int64_t)st->n_layers * st->n_heads; k++) {
        const atn_head_stats *h = &st->heads[k];
        double score = max2(max2(h->prev, h->next), max2(h->self, max2(h->cls, h->sep)));
        if (score > best_score + 1e-9) {
            best_score = score;
            best = k;
        }
    }
    if (!(best_score >= ATN_CLEAREST_HEAD_MIN))
        return false;
    if (layer)
        *layer = (int32_t)(best / st->n_heads);
    if (head)
        *head = (int32_t)(best % st->n_heads);
    return true;
}

atn_status atn_stats_write_csv(const atn_stats *st, FILE *f, atn_error *err) {
    if (!st || !f)
        return atn_error_set(err, ATN_E_INVALID, "statistics: nothing to write");
    fputs("layer,head,entropy,entropy_norm,cls,sep,punct,self,prev,next,local,same_segment,distance,pattern\n", f);
    for (int32_t l = 0; l < st->n_layers; l++)
        for (int32_t h = 0; h < st->n_heads; h++) {
            const atn_head_stats *s = &st->heads[(size_t)l * st->n_heads + h];
            fprintf(f, "%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,\"%s\"\n", l, h, s->entropy,
                    s->entropy_norm, s->cls, s->sep, s->punct, s->self, s->prev, s->next, s->local, s->same_segment,
                    s->distance, atn_head_stats_absent(s) ? "" : atn_pattern_name(s->pattern));
        }
    if (ferror(f))
        return atn_error_set(err, ATN_E_IO, "statistics: write error");
    return ATN_OK;
}

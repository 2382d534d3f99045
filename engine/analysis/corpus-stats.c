/* Corpus statistics in parts that merge (corpus-stats.h): adding a sentence, merging two
 * partials, and reading the means, spreads, histograms and exemplars back.  Every sum is an
 * integer (fixed point or a count) and every other field a min, a max or a top-k under a total
 * order, so merging is associative and commutative bit for bit. */
#include "corpus-stats-private.h"
#include "head-stats-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- fixed point ------------------------------------------------------------------------ */

static void fx_add(uint64_t *acc, const uint64_t *v) {
    uint64_t carry = 0;
    for (int i = 0; i < CS_FX_WORDS; i++) {
        uint64_t a = acc[i], s = a + v[i];
        uint64_t c1 = s < a;
        uint64_t t = s + carry;
        uint64_t c2 = t < s;
        acc[i] = t;
        carry = c1 | c2;
    }
}

static void fx_negate(uint64_t *v) {
    uint64_t one[CS_FX_WORDS] = {1};
    for (int i = 0; i < CS_FX_WORDS; i++)
        v[i] = ~v[i];
    fx_add(v, one);
}

/* v rounded to the nearest multiple of 2^-CS_FX_FRAC (halves up in magnitude).  false when
 * |v| >= 2^(191 - CS_FX_FRAC) or v is not finite. */
static bool fx_from_double(double v, uint64_t *out) {
    memset(out, 0, CS_FX_WORDS * sizeof *out);
    if (!isfinite(v))
        return false;
    if (v == 0)
        return true;
    bool neg = v < 0;
    int e;
    double m = frexp(fabs(v), &e);                  /* |v| = m 2^e, m in [0.5, 1) */
    uint64_t mant = (uint64_t)ldexp(m, 53);         /* exact: |v| = mant 2^(e-53) */
    int shift = e - 53 + CS_FX_FRAC;                /* where mant's lowest bit goes */
    if (shift + 53 > 64 * CS_FX_WORDS - 1)
        return false;
    if (shift < 0) {
        int s = -shift;
        if (s > 54)
            return true;                            /* below half the last place: 0 */
        uint64_t r = s == 64 ? 0 : mant >> s;
        if ((mant >> (s - 1)) & 1)
            r++;
        out[0] = r;
    } else {
        int w = shift / 64, b = shift % 64;
        out[w] = mant << b;
        if (b && w + 1 < CS_FX_WORDS)
            out[w + 1] = mant >> (64 - b);
    }
    if (neg)
        fx_negate(out);
    return true;
}

/* The nearest double, near enough (each word rounded, then summed): the same bits for the
 * same integer, whatever order the integer was summed in. */
static double fx_to_double(const uint64_t *a) {
    uint64_t v[CS_FX_WORDS];
    memcpy(v, a, sizeof v);
    bool neg = v[CS_FX_WORDS - 1] >> 63;
    if (neg)
        fx_negate(v);
    double d = 0;
    for (int i = CS_FX_WORDS - 1; i >= 0; i--)
        d += ldexp((double)v[i], 64 * i - CS_FX_FRAC);
    return neg ? -d : d;
}

/* ---- the partial ------------------------------------------------------------------------ */

static size_t n_heads_of(const atn_corpus_stats *cs) { return (size_t)cs->id.n_layers * cs->id.n_heads; }

atn_status cs_alloc(atn_corpus_stats *cs, atn_error *err) {
    size_t heads = n_heads_of(cs), k = (size_t)cs->id.top_k;
    cs->sums = calloc(heads * ATN_CS_STATS * 2 * CS_FX_WORDS, sizeof *cs->sums);
    cs->min = malloc(heads * ATN_CS_STATS * sizeof *cs->min);
    cs->max = malloc(heads * ATN_CS_STATS * sizeof *cs->max);
    cs->hist = calloc(heads * CS_HIST_BINS, sizeof *cs->hist);
    cs->ind = calloc(heads * CS_FX_WORDS, sizeof *cs->ind);
    cs->off = calloc(heads * ATN_CS_OFFSETS * CS_FX_WORDS, sizeof *cs->off);
    cs->has_off = true;
    cs->ex = calloc(heads * k, sizeof *cs->ex);
    cs->n_ex = calloc(heads, sizeof *cs->n_ex);
    cs->ex_heap = calloc(heads, 1);
    if (!cs->sums || !cs->min || !cs->max || !cs->hist || !cs->ind || !cs->off || !cs->ex || !cs->n_ex ||
        !cs->ex_heap)
        return atn_error_set(err, ATN_E_NOMEM, "corpus statistics: out of memory");
    for (size_t i = 0; i < heads * ATN_CS_STATS; i++) {
        cs->min[i] = INFINITY;
        cs->max[i] = -INFINITY;
    }
    return ATN_OK;
}

void cs_fx_add(uint64_t *acc, const uint64_t *v) { fx_add(acc, v); }
double cs_fx_to_double(const uint64_t *a) { return fx_to_double(a); }

atn_status cs_set_identity(atn_corpus_stats *cs, const atn_cs_identity *id, bool keep_version, atn_error *err) {
    const char *src[CS_N_STRS] = {id->model, id->revision, id->tokenizer, id->precision, id->settings, id->corpus,
                                  keep_version ? id->version : atn_version(),
                                  id->query_role ? id->query_role : "", id->key_role ? id->key_role : ""};
    for (int r = 7; r < CS_N_STRS; r++)
        if (!strcmp(src[r], "any"))
            src[r] = "";
    for (int r = 7; r < CS_N_STRS; r++)
        if (!atn_cs_role_valid(src[r]))
            return atn_error_set(err, ATN_E_INVALID, "corpus statistics: no token role \"%s\" (the roles: %s)", src[r],
                                 ATN_CS_ROLES);
    if (id->n_kv_heads < 0 || (id->n_kv_heads && (id->n_kv_heads >= id->n_heads || id->n_heads % id->n_kv_heads)))
        return atn_error_set(err, ATN_E_INVALID, "corpus statistics: %d K/V heads for %d query heads", id->n_kv_heads,
                             id->n_heads);
    for (int i = 0; i < CS_N_STRS; i++) {
        if (!src[i])
            return atn_error_set(err, ATN_E_INVALID, "corpus statistics: a provenance string is missing");
        free(cs->strs[i]);
        cs->strs[i] = strdup(src[i]);
        if (!cs->strs[i])
            return atn_error_set(err, ATN_E_NOMEM, "corpus statistics: out of memory");
    }
    cs->id = *id;
    cs->id.model = cs->strs[0], cs->id.revision = cs->strs[1], cs->id.tokenizer = cs->strs[2];
    cs->id.precision = cs->strs[3], cs->id.settings = cs->strs[4], cs->id.corpus = cs->strs[5];
    cs->id.version = cs->strs[6];
    cs->id.query_role = cs->strs[7], cs->id.key_role = cs->strs[8];
    return ATN_OK;
}

atn_corpus_stats *atn_corpus_stats_new(const atn_cs_identity *id, atn_error *err) {
    if (!id || id->n_layers <= 0 || id->n_heads <= 0 || id->n_layers > 4096 || id->n_heads > 4096 ||
        id->top_k < 1 || id->top_k > ATN_CS_TOP_MAX || id->corpus_lines < 0) {
        atn_error_set(err, ATN_E_INVALID, "corpus statistics: a bad shape (%d layers x %d heads), k %d or line count",
                      id ? id->n_layers : 0, id ? id->n_heads : 0, id ? id->top_k : 0);
        return NULL;
    }
    atn_corpus_stats *cs = calloc(1, sizeof *cs);
    if (!cs) {
        atn_error_set(err, ATN_E_NOMEM, "corpus statistics: out of memory");
        return NULL;
    }
    if (cs_set_identity(cs, id, false, err) != ATN_OK || cs_alloc(cs, err) != ATN_OK) {
        atn_corpus_stats_free(cs);
        return NULL;
    }
    return cs;
}

void atn_corpus_stats_free(atn_corpus_stats *cs) {
    if (!cs)
        return;
    for (int i = 0; i < CS_N_STRS; i++)
        free(cs->strs[i]);
    free(cs->ranges);
    free(cs->sums), free(cs->min), free(cs->max), free(cs->hist), free(cs->ind), free(cs->off), free(cs->ex), free(cs->n_ex), free(cs->ex_heap);
    free(cs);
}

/* ---- exemplars ---------------------------------------------------------------------------- */

int atn_cs_exemplar_compare(const atn_cs_exemplar *a, const atn_cs_exemplar *b) {
    if (a->weight != b->weight)
        return a->weight > b->weight ? -1 : 1;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    if (a->query != b->query)
        return a->query < b->query ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return 0;
}

/* Where e goes among a head's n (sorted) exemplars, or -1 when it does not make the k best. */
static int32_t ex_slot(const atn_cs_exemplar *list, int32_t n, int32_t k, const atn_cs_exemplar *e) {
    if (n == k && atn_cs_exemplar_compare(e, &list[n - 1]) >= 0)
        return -1;
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (atn_cs_exemplar_compare(&list[mid], e) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void ex_insert(atn_cs_exemplar *list, int32_t *n, int32_t k, int32_t at, const atn_cs_exemplar *e) {
    int32_t keep = *n < k ? *n : k - 1;   /* entries that stay, shifted down from at */
    if (keep > at)
        memmove(&list[at + 1], &list[at], (size_t)(keep - at) * sizeof *list);
    list[at] = *e;
    if (*n < k)
        (*n)++;
}

/* While sentences are added a head's exemplars are a binary heap, the worst at [0] (a row's
 * candidate costs O(log k), not the O(k) shift of a sorted insert: 4,096 exemplars a head took
 * minutes), and sorted best first (ex_sort) for anything that reads them: merge, save, the
 * getter.  The order is total, so the k kept and their sorted order do not depend on this. */
static int ex_worse(const atn_cs_exemplar *a, const atn_cs_exemplar *b) { return atn_cs_exemplar_compare(a, b) > 0; }

static void ex_sift_down(atn_cs_exemplar *h, int32_t n, int32_t i) {
    for (;;) {
        int32_t w = i, l = 2 * i + 1, r = l + 1;
        if (l < n && ex_worse(&h[l], &h[w]))
            w = l;
        if (r < n && ex_worse(&h[r], &h[w]))
            w = r;
        if (w == i)
            return;
        atn_cs_exemplar t = h[i];
        h[i] = h[w], h[w] = t;
        i = w;
    }
}

static int ex_cmp_qsort(const void *a, const void *b) { return atn_cs_exemplar_compare(a, b); }

/* Head h's exemplars sorted best first (from the heap form, if that is what they are in).  The
 * partial is logically unchanged: const callers may call it (one thread per partial). */
static void ex_sort(const atn_corpus_stats *ccs, size_t h) {
    atn_corpus_stats *cs = (atn_corpus_stats *)ccs;
    if (!cs->ex_heap[h])
        return;
    qsort(cs->ex + h * (size_t)cs->id.top_k, (size_t)cs->n_ex[h], sizeof *cs->ex, ex_cmp_qsort);
    cs->ex_heap[h] = 0;
}

void cs_sort_exemplars(const atn_corpus_stats *cs) {
    for (size_t h = 0; h < (size_t)cs->id.n_layers * cs->id.n_heads; h++)
        ex_sort(cs, h);
}

/* Head h's list as a heap: a sorted best-first list reversed is one (each parent after its
 * children in the order, so worse). */
static void ex_heapify(atn_corpus_stats *cs, size_t h) {
    if (cs->ex_heap[h])
        return;
    atn_cs_exemplar *l = cs->ex + h * (size_t)cs->id.top_k;
    for (int32_t i = 0, j = cs->n_ex[h] - 1; i < j; i++, j--) {
        atn_cs_exemplar t = l[i];
        l[i] = l[j], l[j] = t;
    }
    cs->ex_heap[h] = 1;
}

/* Where e goes in head h's heap: the slot to fill (then ex_heap_place), or NULL when e does
 * not make the k best. */
static atn_cs_exemplar *ex_heap_slot(atn_corpus_stats *cs, size_t h, const atn_cs_exemplar *e) {
    atn_cs_exemplar *l = cs->ex + h * (size_t)cs->id.top_k;
    int32_t n = cs->n_ex[h];
    if (n < cs->id.top_k)
        return &l[n];
    return atn_cs_exemplar_compare(e, &l[0]) < 0 ? &l[0] : NULL;
}

/* Restores the heap after *slot (from ex_heap_slot) was written. */
static void ex_heap_place(atn_corpus_stats *cs, size_t h, atn_cs_exemplar *slot) {
    atn_cs_exemplar *l = cs->ex + h * (size_t)cs->id.top_k;
    int32_t n = cs->n_ex[h];
    if (slot == &l[n] && n < cs->id.top_k) {   /* appended: up */
        int32_t i = n;
        cs->n_ex[h] = n + 1;
        while (i > 0 && ex_worse(&l[i], &l[(i - 1) / 2])) {
            atn_cs_exemplar t = l[i];
            l[i] = l[(i - 1) / 2], l[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
    } else {   /* the worst replaced: down */
        ex_sift_down(l, n, 0);
    }
}

/* A token's text, cut to fit at a character boundary. */
static void copy_text(char *dst, const char *src) {
    size_t n = src ? strlen(src) : 0;
    if (n > ATN_CS_TEXT_MAX - 1) {
        n = ATN_CS_TEXT_MAX - 1;
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            n--;
    }
    memset(dst, 0, ATN_CS_TEXT_MAX);
    if (n)
        memcpy(dst, src, n);
}

/* ---- adding ------------------------------------------------------------------------------ */

static int32_t bin_of(double v, double per_unit, int32_t bins) {
    double b = floor(v * per_unit);
    return b < 0 ? 0 : b >= bins ? bins - 1 : (int32_t)b;
}

bool atn_cs_role_valid(const char *name) {
    static const char *const roles[] = {"", "any", "word", "special", "cls", "sep", "mask", "pad", "unk"};
    for (size_t i = 0; name && i < sizeof roles / sizeof roles[0]; i++)
        if (!strcmp(name, roles[i]))
            return true;
    return false;
}

/* Whether token t has role `role` (a valid name; "" matches every token). */
static bool role_matches(const char *role, const atn_token *t) {
    bool special = t->special || t->role == ATN_TOKEN_CLS || t->role == ATN_TOKEN_SEP || t->role == ATN_TOKEN_PAD ||
                   t->role == ATN_TOKEN_MASK;
    if (!*role)
        return true;
    if (!strcmp(role, "word"))
        return t->role == ATN_TOKEN_WORD && !special;
    if (!strcmp(role, "special"))
        return special;
    if (!strcmp(role, "cls"))
        return t->role == ATN_TOKEN_CLS;
    if (!strcmp(role, "sep"))
        return t->role == ATN_TOKEN_SEP;
    if (!strcmp(role, "mask"))
        return t->role == ATN_TOKEN_MASK;
    if (!strcmp(role, "pad"))
        return t->role == ATN_TOKEN_PAD;
    return !strcmp(role, "unk") && t->role == ATN_TOKEN_UNK;
}

atn_status cs_sentence_open(const atn_corpus_stats *cs, const atn_capture *cap, cs_sentence *s, atn_error *err) {
    memset(s, 0, sizeof *s);
    const char *qrole = cs->id.query_role, *krole = cs->id.key_role;
    const atn_encoding *enc = cap->enc;
    if ((*qrole || *krole) && (!enc || !enc->tokens))
        return atn_error_set(err, ATN_E_INVALID, "corpus statistics: role filters need the tokens' roles (a run of a "
                                                 "model with a tokenizer)");
    atn_status st = stats_sentence_open(&s->sent, cap, err);
    if (st != ATN_OK)
        return st;
    s->enc = enc;
    int32_t m = s->sent.m;
    if (*qrole && m > 0) {
        if (!(s->row_on = malloc((size_t)m))) {
            cs_sentence_close(s);
            return atn_error_set(err, ATN_E_NOMEM, "corpus statistics: out of memory");
        }
        s->sent.m_on = 0;
        for (int32_t r = 0; r < m; r++)
            s->sent.m_on += s->row_on[r] = role_matches(qrole, &enc->tokens[s->sent.keep[r]]);
        s->sent.row_on = s->row_on;
        s->none = s->sent.m_on == 0;   /* no row of the role: the sentence adds nothing */
        if (s->none)
            return ATN_OK;
    }
    /* the per-offset sums: which positions are kept (unmasked), and the rows that have a kept
       token at each offset (the same for every head) */
    if (m && !(s->kept = calloc((size_t)cap->n, 1))) {
        cs_sentence_close(s);
        return atn_error_set(err, ATN_E_NOMEM, "corpus statistics: out of memory");
    }
    for (int32_t r = 0; r < m; r++)
        s->kept[s->sent.keep[r]] = 1;
    for (int32_t r = 0; r < m; r++) {
        if (s->row_on && !s->row_on[r])
            continue;
        for (int32_t d = -ATN_CS_OFFSET_MAX; d <= ATN_CS_OFFSET_MAX; d++) {
            int32_t key = s->sent.keep[r] + d;
            s->off_rows[d + ATN_CS_OFFSET_MAX] += key >= 0 && key < cap->n && s->kept[key];
        }
    }
    return ATN_OK;
}

void cs_sentence_close(cs_sentence *s) {
    stats_sentence_close(&s->sent);
    free(s->row_on);
    free(s->kept);
    memset(s, 0, sizeof *s);
}

bool cs_head_init(cs_head *h, int32_t m) {
    memset(h, 0, sizeof *h);
    if (m == 0)
        return true;
    double *dbuf = malloc((size_t)m * 3 * sizeof *dbuf);
    int32_t *best = malloc((size_t)m * sizeof *best);
    float *best_w = malloc((size_t)m * sizeof *best_w);
    if (!dbuf || !best || !best_w) {
        free(dbuf), free(best), free(best_w);
        return false;
    }
    h->rows = (stats_rows){dbuf, dbuf + m, dbuf + 2 * (size_t)m, best, best_w};
    return true;
}

void cs_head_reset(cs_head *h) {
    memset(&h->sums, 0, sizeof h->sums);
    memset(h->off_sum, 0, sizeof h->off_sum);
}

void cs_head_free(cs_head *h) {
    free(h->rows.entropy), free(h->rows.best_key), free(h->rows.best_weight);
    memset(h, 0, sizeof *h);
}

void cs_head_row(const atn_corpus_stats *cs, const cs_sentence *s, cs_head *h, int32_t r, const float *arow) {
    const stats_sentence *sent = &s->sent;
    if (s->row_on && !s->row_on[r])
        return;
    stats_row_add(sent, r, arow, &h->sums, &h->rows);
    /* this sentence's offset sums, in row order: its bits are the sentence's */
    for (int32_t d = -ATN_CS_OFFSET_MAX; d <= ATN_CS_OFFSET_MAX; d++) {
        int32_t key = sent->keep[r] + d;
        if (key >= 0 && key < sent->n && s->kept[key] && isfinite(arow[key]))
            h->off_sum[d + ATN_CS_OFFSET_MAX] += arow[key];
    }
    if (*cs->id.key_role) {   /* the row's heaviest key of the role, the first of equal weights */
        h->rows.best_key[r] = -1;
        for (int32_t c = 0; c < sent->m; c++) {
            int32_t key = sent->keep[c];
            float w = arow[key];
            if (isfinite(w) && role_matches(cs->id.key_role, &s->enc->tokens[key]) &&
                (h->rows.best_key[r] < 0 || w > h->rows.best_weight[r]))
                h->rows.best_key[r] = key, h->rows.best_weight[r] = w;
        }
    }
}

void cs_head_fold(atn_corpus_stats *cs, size_t idx, const cs_sentence *s, const cs_head *h, int64_t line) {
    const stats_sentence *sent = &s->sent;
    const atn_encoding *enc = s->enc;
    int32_t m = sent->m;
    double v[STATS_COUNT];
    stats_head_means(&h->sums, s->row_on ? sent->m_on : m, v);
    uint64_t ind_fx[CS_FX_WORDS];
    fx_from_double(stats_head_induction(&h->sums), ind_fx);
    fx_add(cs->ind + idx * CS_FX_WORDS, ind_fx);
    for (int st = 0; st < ATN_CS_STATS; st++) {
        uint64_t fx[CS_FX_WORDS], *sum = cs->sums + ((idx * ATN_CS_STATS + st) * 2) * CS_FX_WORDS;
        fx_from_double(v[st], fx);   /* finite, far below 2^95: the weights are */
        fx_add(sum, fx);
        fx_from_double(v[st] * v[st], fx);
        fx_add(sum + CS_FX_WORDS, fx);
        double *lo = &cs->min[idx * ATN_CS_STATS + st], *hi = &cs->max[idx * ATN_CS_STATS + st];
        *lo = v[st] < *lo ? v[st] : *lo;
        *hi = v[st] > *hi ? v[st] : *hi;
    }
    for (int d = 0; d < ATN_CS_OFFSETS; d++) {
        uint64_t fx[CS_FX_WORDS];
        fx_from_double(h->off_sum[d], fx);
        fx_add(cs->off + (idx * ATN_CS_OFFSETS + (size_t)d) * CS_FX_WORDS, fx);
    }
    uint64_t *hist = cs->hist + idx * CS_HIST_BINS;
    const stats_rows *rows = &h->rows;
    ex_heapify(cs, idx);
    for (int32_t r = 0; r < m; r++) {
        if (s->row_on && !s->row_on[r])
            continue;
        hist[bin_of(rows->entropy[r], 4, ATN_CS_ENTROPY_BINS)]++;
        hist[ATN_CS_ENTROPY_BINS + bin_of(rows->distance[r], 1, ATN_CS_DISTANCE_BINS)]++;
        hist[ATN_CS_ENTROPY_BINS + ATN_CS_DISTANCE_BINS + bin_of(rows->sink[r], ATN_CS_SINK_BINS, ATN_CS_SINK_BINS)]++;
        if (rows->best_key[r] < 0)
            continue;
        atn_cs_exemplar e = {.line = line, .query = sent->keep[r], .key = rows->best_key[r],
                             .weight = rows->best_weight[r]};
        atn_cs_exemplar *slot = ex_heap_slot(cs, idx, &e);
        if (!slot)
            continue;
        const atn_token *tq = enc && enc->tokens ? &enc->tokens[e.query] : NULL;
        const atn_token *tk = enc && enc->tokens ? &enc->tokens[e.key] : NULL;
        e.query_start = tq ? tq->start : -1, e.query_end = tq ? tq->end : -1;
        e.key_start = tk ? tk->start : -1, e.key_end = tk ? tk->end : -1;
        copy_text(e.query_text, tq ? tq->text : NULL);
        copy_text(e.key_text, tk ? tk->text : NULL);
        *slot = e;
        ex_heap_place(cs, idx, slot);
    }
}

void cs_sentence_fold(atn_corpus_stats *cs, const cs_sentence *s, int64_t line) {
    cs->last_line = line;
    if (s->none)
        return;
    cs->counts[CS_SENTENCES]++;
    cs->counts[CS_TOKENS] += s->row_on ? s->sent.m_on : s->sent.m;
    for (int d = 0; d < ATN_CS_OFFSETS; d++)
        cs->off_rows[d] += s->off_rows[d];
    cs->counts[CS_TRUNCATED] += s->enc && s->enc->truncated;
    cs->counts[CS_PAIRS] += s->sent.pair;
}

atn_status cs_check_line(const atn_corpus_stats *cs, int64_t line, atn_error *err) {
    if (line <= cs->last_line)
        return atn_error_set(err, ATN_E_INVALID, "corpus statistics: line %lld comes after line %lld",
                             (long long)line, (long long)cs->last_line);
    return ATN_OK;
}

atn_status atn_corpus_stats_add(atn_corpus_stats *cs, const atn_capture *cap, int64_t line, atn_error *err) {
    if (!cs || !cap || !atn_capture_has_heads(cap))
        return atn_error_set(err, ATN_E_INVALID, "corpus statistics: no capture or no attention");
    if (cap->n_layers != cs->id.n_layers || cap->n_heads != cs->id.n_heads)
        return atn_error_set(err, ATN_E_SHAPE, "corpus statistics: capture has %d layers x %d heads, expected %d x %d",
                             cap->n_layers, cap->n_heads, cs->id.n_layers, cs->id.n_heads);
    atn_status st = cs_check_line(cs, line, err);
    if (st != ATN_OK)
        return st;
    cs_sentence s;
    if ((st = cs_sentence_open(cs, cap, &s, err)) != ATN_OK)
        return st;
    int32_t m = s.none ? 0 : s.sent.m;
    cs_head h;
    /* room for a head made on demand (a full capture's heads are read in place) */
    float *scratch = m && !cap->attn ? malloc((size_t)cap->n * cap->n * sizeof *scratch) : NULL;
    if (!cs_head_init(&h, m) || (m && !cap->attn && !scratch)) {
        free(scratch);
        cs_sentence_close(&s);
        return atn_error_set(err, ATN_E_NOMEM, "corpus statistics: out of memory");
    }
    for (size_t idx = 0; m > 0 && idx < n_heads_of(cs); idx++) {
        const float *a = atn_capture_head_read(cap, (int32_t)(idx / cap->n_heads), (int32_t)(idx % cap->n_heads),
                                               scratch, err);
        if (!a) {
            free(scratch);
            cs_head_free(&h);
            cs_sentence_close(&s);
            return err ? err->status : ATN_E_INVALID;
        }
        cs_head_reset(&h);
        for (int32_t r = 0; r < m; r++)
            cs_head_row(cs, &s, &h, r, a + (size_t)s.sent.keep[r] * s.sent.n);
        cs_head_fold(cs, idx, &s, &h, line);
    }
    cs_sentence_fold(cs, &s, line);
    free(scratch);
    cs_head_free(&h);
    cs_sentence_close(&s);
    return ATN_OK;
}

atn_status cs_add_range(atn_corpus_stats *cs, int64_t first, int64_t last, atn_error *err) {
    if (first < 1 || last < first)
        return atn_error_set(err, ATN_E_INVALID, "corpus statistics: lines %lld-%lld are not a range",
                             (long long)first, (long long)last);
    int32_t at = 0;
    while (at < cs->n_ranges && cs->ranges[2 * at + 1] < first)
        at++;
    if (at < cs->n_ranges && cs->ranges[2 * at] <= last)
        return atn_error_set(err, ATN_E_INVALID, "lines %lld-%lld are covered twice (by %lld-%lld too)",
                             (long long)(first > cs->ranges[2 * at] ? first : cs->ranges[2 * at]),
                             (long long)(last < cs->ranges[2 * at + 1] ? last : cs->ranges[2 * at + 1]),
                             (long long)cs->ranges[2 * at], (long long)cs->ranges[2 * at + 1]);
    bool join_prev = at > 0 && cs->ranges[2 * (at - 1) + 1] + 1 == first;
    bool join_next = at < cs->n_ranges && cs->ranges[2 * at] == last + 1;
    if (join_prev && join_next) {
        cs->ranges[2 * (at - 1) + 1] = cs->ranges[2 * at + 1];
        memmove(&cs->ranges[2 * at], &cs->ranges[2 * (at + 1)], (size_t)(cs->n_ranges - at - 1) * 2 * sizeof(int64_t));
        cs->n_ranges--;
    } else if (join_prev) {
        cs->ranges[2 * (at - 1) + 1] = last;
    } else if (join_next) {
        cs->ranges[2 * at] = first;
    } else {
        if (cs->n_ranges == cs->cap_ranges) {
            int32_t cap = cs->cap_ranges ? 2 * cs->cap_ranges : 8;
            int64_t *r = realloc(cs->ranges, (size_t)cap * 2 * sizeof *r);
            if (!r)
                return atn_error_set(err, ATN_E_NOMEM, "corpus statistics: out of memory");
            cs->ranges = r, cs->cap_ranges = cap;
        }
        memmove(&cs->ranges[2 * (at + 1)], &cs->ranges[2 * at], (size_t)(cs->n_ranges - at) * 2 * sizeof(int64_t));
        cs->ranges[2 * at] = first, cs->ranges[2 * at + 1] = last;
        cs->n_ranges++;
    }
    return ATN_OK;
}

atn_status atn_corpus_stats_cover(atn_corpus_stats *cs, int64_t first, int64_t last, int64_t cut, int64_t skipped,
                                  atn_error *err) {
    if (!cs)
        return atn_error_set(err, ATN_E_INVALID, "corpus statistics: NULL");
    if (cs->n_ranges && first <= cs->ranges[2 * (cs->n_ranges - 1) + 1])
        return atn_error_set(err, ATN_E_INVALID, "corpus statistics: lines %lld-%lld do not follow line %lld",
                             (long long)first, (long long)last, (long long)cs->ranges[2 * (cs->n_ranges - 1) + 1]);
    if (cs->last_line > last)
        return atn_error_set(err, ATN_E_INVALID, "corpus statistics: line %lld was added but lines end at %lld",
                             (long long)cs->last_line, (long long)last);
    atn_status st = cs_add_range(cs, first, last, err);
    if (st != ATN_OK)
        return st;
    cs->counts[CS_CUT] += cut;
    cs->counts[CS_SKIPPED] += skipped;
    cs->last_line = last;
    return ATN_OK;
}

/* ---- merging ------------------------------------------------------------------------------ */

atn_status atn_corpus_stats_merge(atn_corpus_stats *into, const atn_corpus_stats *from, atn_error *err) {
    if (!into || !from)
        return atn_error_set(err, ATN_E_INVALID, "corpus statistics: NULL");
    const atn_cs_identity *a = &into->id, *b = &from->id;
    static const char *const names[CS_N_STRS] = {"model", "revision", "tokenizer", "precision", "settings",
                                                 "corpus", "attnscope version", "query role filter (--query-role)",
                                                 "key role filter (--key-role)"};
    for (int i = 0; i < CS_N_STRS; i++)
        if (strcmp(into->strs[i], from->strs[i]))
            return atn_error_set(err, ATN_E_INVALID, "different %s: \"%s\" and \"%s\"", names[i],
                                 i >= 7 && !*into->strs[i] ? "any" : into->strs[i],
                                 i >= 7 && !*from->strs[i] ? "any" : from->strs[i]);
    if (a->corpus_lines != b->corpus_lines)
        return atn_error_set(err, ATN_E_INVALID, "different corpus line counts: %lld and %lld",
                             (long long)a->corpus_lines, (long long)b->corpus_lines);
    if (a->n_layers != b->n_layers || a->n_heads != b->n_heads)
        return atn_error_set(err, ATN_E_INVALID, "different shapes: %d x %d and %d x %d heads", a->n_layers,
                             a->n_heads, b->n_layers, b->n_heads);
    if (a->top_k != b->top_k)
        return atn_error_set(err, ATN_E_INVALID, "different exemplar counts (--top): %d and %d", a->top_k, b->top_k);
    if (a->n_kv_heads != b->n_kv_heads)
        return atn_error_set(err, ATN_E_INVALID, "different K/V heads per layer (n_kv_heads): %d and %d (0: none "
                             "recorded; make the partial again with this attnscope)", a->n_kv_heads, b->n_kv_heads);
    if (into->has_off != from->has_off)
        return atn_error_set(err, ATN_E_INVALID, "the %s partial has no per-offset sums (made by an attnscope before "
                             "them: make it again to merge it with newer ones)", into->has_off ? "second" : "first");
    /* the ranges first, on a copy: a refusal leaves `into` as it was */
    int64_t *saved = into->n_ranges ? malloc((size_t)into->n_ranges * 2 * sizeof *saved) : NULL;
    int32_t saved_n = into->n_ranges;
    if (into->n_ranges && !saved)
        return atn_error_set(err, ATN_E_NOMEM, "corpus statistics: out of memory");
    if (saved)
        memcpy(saved, into->ranges, (size_t)saved_n * 2 * sizeof *saved);
    for (int32_t r = 0; r < from->n_ranges; r++) {
        atn_status st = cs_add_range(into, from->ranges[2 * r], from->ranges[2 * r + 1], err);
        if (st != ATN_OK) {
            if (saved)
                memcpy(into->ranges, saved, (size_t)saved_n * 2 * sizeof *saved);
            into->n_ranges = saved_n;
            free(saved);
            return st;
        }
    }
    free(saved);
    for (int c = 0; c < CS_COUNTS; c++)
        into->counts[c] += from->counts[c];
    into->last_line = into->last_line > from->last_line ? into->last_line : from->last_line;
    size_t heads = n_heads_of(into), k = (size_t)a->top_k;
    for (size_t i = 0; i < heads * ATN_CS_STATS * 2; i++)
        fx_add(into->sums + i * CS_FX_WORDS, from->sums + i * CS_FX_WORDS);
    for (size_t i = 0; i < heads; i++)
        fx_add(into->ind + i * CS_FX_WORDS, from->ind + i * CS_FX_WORDS);
    for (size_t i = 0; into->has_off && i < heads * ATN_CS_OFFSETS; i++)
        fx_add(into->off + i * CS_FX_WORDS, from->off + i * CS_FX_WORDS);
    for (int d = 0; d < ATN_CS_OFFSETS; d++)
        into->off_rows[d] += from->off_rows[d];
    for (size_t i = 0; i < heads * ATN_CS_STATS; i++) {
        into->min[i] = from->min[i] < into->min[i] ? from->min[i] : into->min[i];
        into->max[i] = from->max[i] > into->max[i] ? from->max[i] : into->max[i];
    }
    for (size_t i = 0; i < heads * CS_HIST_BINS; i++)
        into->hist[i] += from->hist[i];
    for (size_t h = 0; h < heads; h++) {
        ex_sort(into, h);
        ex_sort(from, h);
        atn_cs_exemplar *list = into->ex + h * k;
        const atn_cs_exemplar *other = from->ex + h * k;
        for (int32_t j = 0; j < from->n_ex[h]; j++) {
            int32_t at = ex_slot(list, into->n_ex[h], (int32_t)k, &other[j]);
            if (at < 0)
                break;   /* sorted: the rest make it even less */
            ex_insert(list, &into->n_ex[h], (int32_t)k, at, &other[j]);
        }
    }
    return ATN_OK;
}

/* ---- reading ------------------------------------------------------------------------------ */

const atn_cs_identity *atn_corpus_stats_identity(const atn_corpus_stats *cs) { return &cs->id; }

void atn_corpus_stats_counts(const atn_corpus_stats *cs, int64_t *sentences, int64_t *tokens, int64_t *truncated,
                             int64_t *cut, int64_t *skipped) {
    if (sentences)
        *sentences = cs->counts[CS_SENTENCES];
    if (tokens)
        *tokens = cs->counts[CS_TOKENS];
    if (truncated)
        *truncated = cs->counts[CS_TRUNCATED];
    if (cut)
        *cut = cs->counts[CS_CUT];
    if (skipped)
        *skipped = cs->counts[CS_SKIPPED];
}

int32_t atn_corpus_stats_ranges(const atn_corpus_stats *cs, int64_t *first, int64_t *last, int32_t cap) {
    for (int32_t i = 0; i < cs->n_ranges && i < cap; i++) {
        first[i] = cs->ranges[2 * i];
        last[i] = cs->ranges[2 * i + 1];
    }
    return cs->n_ranges;
}

int32_t atn_corpus_stats_missing(const atn_corpus_stats *cs, int64_t *first, int64_t *last, int32_t cap) {
    int32_t n = 0;
    int64_t next = 1;   /* the first line not yet accounted for */
    for (int32_t i = 0; i <= cs->n_ranges; i++) {
        int64_t upto = i < cs->n_ranges ? cs->ranges[2 * i] - 1 : cs->id.corpus_lines;
        if (upto >= next) {
            if (n < cap) {
                first[n] = next;
                last[n] = upto;
            }
            n++;
        }
        if (i < cs->n_ranges)
            next = cs->ranges[2 * i + 1] + 1;
    }
    return n;
}

atn_status atn_corpus_stats_means(const atn_corpus_stats *cs, atn_stats **out, atn_error *err) {
    *out = NULL;
    atn_stats *st = atn_stats_new(cs->id.n_layers, cs->id.n_heads, err);
    if (!st)
        return err ? err->status : ATN_E_NOMEM;
    st->n_sentences = cs->counts[CS_SENTENCES];
    st->n_tokens = cs->counts[CS_TOKENS];
    st->has_pairs = cs->counts[CS_PAIRS] > 0;
    for (size_t i = 0; i < n_heads_of(cs); i++) {
        double v[ATN_CS_STATS];
        for (int s = 0; s < ATN_CS_STATS; s++)
            v[s] = fx_to_double(cs->sums + ((i * ATN_CS_STATS + s) * 2) * CS_FX_WORDS);
        atn_head_stats *h = &st->heads[i];
        h->entropy = v[STATS_ENTROPY], h->entropy_norm = v[STATS_ENTROPY_NORM], h->cls = v[STATS_CLS];
        h->sep = v[STATS_SEP], h->punct = v[STATS_PUNCT], h->self = v[STATS_SELF], h->prev = v[STATS_PREV];
        h->next = v[STATS_NEXT], h->local = v[STATS_LOCAL], h->same_segment = v[STATS_SAME_SEGMENT];
        h->distance = v[STATS_DISTANCE];
        h->induction = fx_to_double(cs->ind + i * CS_FX_WORDS);
    }
    atn_status s = atn_stats_finish(st, err);   /* the sums times 1/sentences, as atn_stats does */
    if (s != ATN_OK) {
        atn_stats_free(st);
        return s;
    }
    *out = st;
    return ATN_OK;
}

bool atn_corpus_stats_spread(const atn_corpus_stats *cs, int32_t layer, int32_t head, int32_t s, double *mean,
                             double *std, double *min, double *max) {
    if (layer < 0 || layer >= cs->id.n_layers || head < 0 || head >= cs->id.n_heads || s < 0 || s >= ATN_CS_STATS)
        return false;
    size_t i = (size_t)layer * cs->id.n_heads + head;
    const uint64_t *sum = cs->sums + ((i * ATN_CS_STATS + s) * 2) * CS_FX_WORDS;
    double n = (double)cs->counts[CS_SENTENCES];
    double mu = n > 0 ? fx_to_double(sum) / n : 0, sq = n > 0 ? fx_to_double(sum + CS_FX_WORDS) / n : 0;
    double var = sq - mu * mu;
    if (mean)
        *mean = mu;
    if (std)
        *std = var > 0 ? sqrt(var) : 0;
    if (min)
        *min = n > 0 ? cs->min[i * ATN_CS_STATS + s] : 0;
    if (max)
        *max = n > 0 ? cs->max[i * ATN_CS_STATS + s] : 0;
    return true;
}

const uint64_t *atn_corpus_stats_histogram(const atn_corpus_stats *cs, int32_t layer, int32_t head, int which,
                                           int32_t *bins) {
    if (layer < 0 || layer >= cs->id.n_layers || head < 0 || head >= cs->id.n_heads || which < 0 || which > 2)
        return NULL;
    const uint64_t *h = cs->hist + ((size_t)layer * cs->id.n_heads + head) * CS_HIST_BINS;
    static const int32_t nb[3] = {ATN_CS_ENTROPY_BINS, ATN_CS_DISTANCE_BINS, ATN_CS_SINK_BINS};
    static const int32_t at[3] = {0, ATN_CS_ENTROPY_BINS, ATN_CS_ENTROPY_BINS + ATN_CS_DISTANCE_BINS};
    if (bins)
        *bins = nb[which];
    return h + at[which];
}

int32_t atn_corpus_stats_exemplars(const atn_corpus_stats *cs, int32_t layer, int32_t head,
                                   const atn_cs_exemplar **out) {
    *out = NULL;
    if (layer < 0 || layer >= cs->id.n_layers || head < 0 || head >= cs->id.n_heads)
        return 0;
    size_t i = (size_t)layer * cs->id.n_heads + head;
    ex_sort(cs, i);
    *out = cs->n_ex[i] ? cs->ex + i * (size_t)cs->id.top_k : NULL;
    return cs->n_ex[i];
}

bool atn_corpus_stats_has_offsets(const atn_corpus_stats *cs) { return cs && cs->has_off; }

bool atn_corpus_stats_offset(const atn_corpus_stats *cs, int32_t layer, int32_t head, int32_t d, double *mean,
                             int64_t *rows) {
    if (rows)
        *rows = 0;
    if (mean)
        *mean = 0;
    if (!cs || !cs->has_off || layer < 0 || layer >= cs->id.n_layers || head < 0 || head >= cs->id.n_heads ||
        d < -ATN_CS_OFFSET_MAX || d > ATN_CS_OFFSET_MAX)
        return false;
    int64_t n = cs->off_rows[d + ATN_CS_OFFSET_MAX];
    size_t at = ((size_t)layer * cs->id.n_heads + head) * ATN_CS_OFFSETS + (size_t)(d + ATN_CS_OFFSET_MAX);
    if (rows)
        *rows = n;
    if (mean)
        *mean = n > 0 ? fx_to_double(cs->off + at * CS_FX_WORDS) / (double)n : 0;
    return true;
}

bool atn_corpus_stats_label_info(const atn_corpus_stats *cs, int32_t layer, int32_t head, atn_cs_label_info *info) {
    if (!cs || !info || layer < 0 || layer >= cs->id.n_layers || head < 0 || head >= cs->id.n_heads ||
        cs->counts[CS_SENTENCES] == 0)
        return false;
    memset(info, 0, sizeof *info);
    double m[ATN_CS_STATS], sd[ATN_CS_STATS];
    for (int s = 0; s < ATN_CS_STATS; s++)
        atn_corpus_stats_spread(cs, layer, head, s, &m[s], &sd[s], NULL, NULL);
    info->sentences = cs->counts[CS_SENTENCES];
    info->has_offsets = cs->has_off;
    int32_t nb;
    const uint64_t *sink = atn_corpus_stats_histogram(cs, layer, head, 2, &nb);
    const uint64_t *dist = atn_corpus_stats_histogram(cs, layer, head, 1, &nb);
    uint64_t rows = 0, sunk = 0;
    for (int32_t b = 0; b < ATN_CS_SINK_BINS; b++) {
        rows += sink[b];
        sunk += b >= ATN_CS_SINK_BINS / 2 ? sink[b] : 0;   /* bins from 0.5 up */
    }
    double sunk_share = rows ? (double)sunk / (double)rows : 0;
    double near_share = rows ? (double)(dist[0] + dist[1]) / (double)rows : 0;
#define PICK(k, l) (info->kind = (k), info->label = (l), true)
    /* induction first, as atn_pattern_classify: a mean share of 0.5 or more on the tokens after
       the earlier copies, above the positional weights */
    double ind = fx_to_double(cs->ind + ((size_t)layer * cs->id.n_heads + head) * CS_FX_WORDS) /
                 (double)info->sentences;
    if (ind >= 0.5 && ind > m[STATS_PREV] && ind > m[STATS_NEXT] && ind > m[STATS_SELF]) {
        info->value = ind;
        return PICK(ATN_CS_LABEL_INDUCTION, "induction");
    }
    int pos = m[STATS_PREV] >= m[STATS_NEXT] && m[STATS_PREV] >= m[STATS_SELF] ? STATS_PREV
              : m[STATS_NEXT] >= m[STATS_SELF]                                 ? STATS_NEXT
                                                                               : STATS_SELF;
    if (m[pos] >= 0.5) {
        info->value = m[pos], info->value2 = sd[pos];
        return pos == STATS_PREV   ? PICK(ATN_CS_LABEL_PREVIOUS, "previous token")
               : pos == STATS_NEXT ? PICK(ATN_CS_LABEL_NEXT, "next token")
                                   : PICK(ATN_CS_LABEL_SELF, "self");
    }
    if (sunk_share >= 0.5) {
        info->value = sunk_share, info->rows = (int64_t)rows;
        return PICK(ATN_CS_LABEL_SINK, "sink");
    }
    if (m[STATS_SEP] + m[STATS_PUNCT] >= 0.5) {
        info->value = m[STATS_SEP], info->value2 = m[STATS_PUNCT];
        return PICK(ATN_CS_LABEL_DELIMITER, "delimiter");
    }
    /* a fixed distance back or ahead, 2 or more tokens away (the nearest first on ties), tested
       after the sink and the delimiters: a head parked on [CLS] or [SEP] has weight 1 at offset -i
       or n-1-i in the few rows that reach that far, so an offset counts only where a quarter or
       more of the rows have a token there */
    if (cs->has_off) {
        double best = -1;
        int32_t best_d = 0;
        for (int32_t dist_abs = 2; dist_abs <= ATN_CS_OFFSET_MAX; dist_abs++)
            for (int sign = -1; sign <= 1; sign += 2) {
                double w;
                int64_t with;
                atn_corpus_stats_offset(cs, layer, head, sign * dist_abs, &w, &with);
                if (4 * with >= cs->off_rows[ATN_CS_OFFSET_MAX] && w > best)
                    best = w, best_d = sign * dist_abs;
            }
        if (best >= 0.5) {
            info->value = best, info->offset = best_d;
            atn_corpus_stats_offset(cs, layer, head, best_d, NULL, &info->rows);
            return PICK(ATN_CS_LABEL_POSITIONAL, "positional");
        }
    }
    if (cs->has_off) {
        /* the weight within offsets -2..+2 summed over the rows, over the rows (every row has
           offset 0): each row's share within 2 tokens, averaged */
        double near = 0;
        int64_t all_rows = cs->off_rows[ATN_CS_OFFSET_MAX];
        size_t at = ((size_t)layer * cs->id.n_heads + head) * ATN_CS_OFFSETS + ATN_CS_OFFSET_MAX;
        for (int32_t d = -2; d <= 2; d++)
            near += fx_to_double(cs->off + (at + (size_t)d) * CS_FX_WORDS);
        near = all_rows > 0 ? near / (double)all_rows : 0;
        if (near >= 0.7) {
            info->value = near, info->rows = cs->off_rows[ATN_CS_OFFSET_MAX];
            return PICK(ATN_CS_LABEL_LOCAL, "local window");
        }
    } else if (near_share >= 0.7) {
        info->value = near_share, info->rows = (int64_t)rows;
        return PICK(ATN_CS_LABEL_LOCAL, "local window");
    }
    if (m[STATS_ENTROPY_NORM] >= 0.75) {
        info->value = m[STATS_ENTROPY_NORM];
        return PICK(ATN_CS_LABEL_BROAD, "broad");
    }
    return PICK(ATN_CS_LABEL_MIXED, "mixed");
#undef PICK
}

const char *atn_corpus_stats_label(const atn_corpus_stats *cs, int32_t layer, int32_t head, char *why,
                                   size_t size) {
    atn_cs_label_info in;
    if (!atn_corpus_stats_label_info(cs, layer, head, &in))
        return NULL;
    if (!why || !size)
        return in.label;
    long long sentences = (long long)in.sentences, rows = (long long)in.rows;
    int n = 0;
    switch (in.kind) {
    case ATN_CS_LABEL_INDUCTION:
        n = snprintf(why, size, "mean induction share %.3f over %lld sentences (the weight on the token after an "
                     "earlier copy of the query's pair)", in.value, sentences);
        break;
    case ATN_CS_LABEL_PREVIOUS:
    case ATN_CS_LABEL_NEXT:
    case ATN_CS_LABEL_SELF:
        n = snprintf(why, size, "mean weight %.3f on %s over %lld sentences (sd %.3f)", in.value,
                     in.kind == ATN_CS_LABEL_PREVIOUS ? "the previous token"
                     : in.kind == ATN_CS_LABEL_NEXT   ? "the next token"
                                                      : "itself",
                     sentences, in.value2);
        break;
    case ATN_CS_LABEL_POSITIONAL:
        n = snprintf(why, size, "mean weight %.3f on the token %d %s the query (offset %+d) over %lld query rows",
                     in.value, abs(in.offset), in.offset < 0 ? "before" : "after", in.offset, rows);
        break;
    case ATN_CS_LABEL_SINK:
        n = snprintf(why, size, "%.0f%% of %lld query rows put 0.5 or more on the first token", 100 * in.value, rows);
        break;
    case ATN_CS_LABEL_DELIMITER:
        n = snprintf(why, size, "mean weight %.3f on [SEP] and %.3f on punctuation over %lld sentences", in.value,
                     in.value2, sentences);
        break;
    case ATN_CS_LABEL_LOCAL:
        n = in.has_offsets ? snprintf(why, size, "mean weight %.3f within 2 tokens of the query (offsets -2..+2) "
                                      "over %lld query rows", in.value, rows)
                           : snprintf(why, size, "%.0f%% of %lld query rows attend within a mean distance of 2 tokens",
                                      100 * in.value, rows);
        break;
    case ATN_CS_LABEL_BROAD:
        n = snprintf(why, size, "mean normalised entropy %.3f over %lld sentences", in.value, sentences);
        break;
    case ATN_CS_LABEL_MIXED:
        n = snprintf(why, size, "no figure passes its threshold over %lld sentences", sentences);
        break;
    }
    if (!in.has_offsets && n >= 0 && (size_t)n < size)
        snprintf(why + n, size - (size_t)n, " (no per-offset sums in this partial: positional labels not tested)");
    return in.label;
}

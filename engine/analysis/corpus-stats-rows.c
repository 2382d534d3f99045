/* A sentence's corpus statistics made row by row as a forward makes its heads
 * (corpus-stats.h, atn_cs_rows_*): the same per-row code as atn_corpus_stats_add
 * (corpus-stats.c's cs_head_row), in the same query order, so the partial's bytes are the
 * same, without a capture of [L][H][n][n]. */
#include "corpus-stats-private.h"

#include <stdlib.h>
#include <string.h>

struct atn_cs_rows {
    const atn_corpus_stats *cs;   /* the partial it was made for: its filters and shape */
    cs_sentence s;
    int32_t *rank;                /* [n] token i's place among the kept tokens, -1 for a masked one */
    int32_t n_layers, n_heads;
    cs_head *heads;               /* [L][H] */
};

atn_status atn_cs_rows_new(const atn_corpus_stats *cs, const atn_encoding *enc, atn_cs_rows **out, atn_error *err) {
    *out = NULL;
    if (!cs || !enc || enc->n <= 0)
        return atn_error_set(err, ATN_E_INVALID, "corpus statistics: no partial or no tokens");
    atn_cs_rows *r = calloc(1, sizeof *r);
    if (!r)
        return atn_error_set(err, ATN_E_NOMEM, "corpus statistics: out of memory");
    r->cs = cs;
    r->n_layers = cs->id.n_layers, r->n_heads = cs->id.n_heads;
    atn_capture tokens = {.n = enc->n, .enc = enc};   /* what cs_sentence_open reads */
    atn_status st = cs_sentence_open(cs, &tokens, &r->s, err);
    if (st) {
        free(r);
        return st;
    }
    size_t heads = (size_t)r->n_layers * r->n_heads;
    int32_t m = r->s.none ? 0 : r->s.sent.m;
    r->rank = malloc((size_t)enc->n * sizeof *r->rank);
    r->heads = calloc(heads, sizeof *r->heads);
    bool ok = r->rank && r->heads;
    for (size_t i = 0; ok && i < heads; i++)
        ok = cs_head_init(&r->heads[i], m);
    if (!ok) {
        atn_cs_rows_free(r);
        return atn_error_set(err, ATN_E_NOMEM, "corpus statistics: out of memory for the rows of %d tokens", enc->n);
    }
    for (int32_t i = 0; i < enc->n; i++)
        r->rank[i] = -1;
    for (int32_t k = 0; k < m; k++)
        r->rank[r->s.sent.keep[k]] = k;
    *out = r;
    return ATN_OK;
}

void atn_cs_rows_add(atn_cs_rows *r, int32_t layer, int32_t head, int32_t query, const float *row) {
    if (!r || !row || layer < 0 || layer >= r->n_layers || head < 0 || head >= r->n_heads || query < 0 ||
        query >= r->s.sent.n || r->rank[query] < 0)
        return;
    cs_head_row(r->cs, &r->s, &r->heads[(size_t)layer * r->n_heads + head], r->rank[query], row);
}

void atn_cs_rows_head(atn_cs_rows *r, int32_t layer, int32_t head, const float *att, int32_t n) {
    if (!r || !att || n != r->s.sent.n)
        return;
    for (int32_t i = 0; i < n; i++)
        atn_cs_rows_add(r, layer, head, i, att + (size_t)i * n);
}

atn_status atn_cs_rows_fold(atn_cs_rows *r, atn_corpus_stats *cs, int64_t line, atn_error *err) {
    if (!r || !cs)
        return atn_error_set(err, ATN_E_INVALID, "corpus statistics: NULL");
    if (cs != r->cs)
        return atn_error_set(err, ATN_E_INVALID, "corpus statistics: rows made for another partial");
    atn_status st = cs_check_line(cs, line, err);
    if (st)
        return st;
    size_t heads = (size_t)r->n_layers * r->n_heads;
    int32_t want = r->s.none ? 0 : r->s.row_on ? r->s.sent.m_on : r->s.sent.m;
    for (size_t i = 0; i < heads; i++)
        if (r->heads[i].sums.rows != want)
            return atn_error_set(err, ATN_E_INVALID, "corpus statistics: layer %zu head %zu got %d of its %d query rows",
                                 i / (size_t)r->n_heads, i % (size_t)r->n_heads, r->heads[i].sums.rows, want);
    for (size_t i = 0; want > 0 && i < heads; i++)
        cs_head_fold(cs, i, &r->s, &r->heads[i], line);
    cs_sentence_fold(cs, &r->s, line);
    return ATN_OK;
}

void atn_cs_rows_free(atn_cs_rows *r) {
    if (!r)
        return;
    for (size_t i = 0; r->heads && i < (size_t)r->n_layers * r->n_heads; i++)
        cs_head_free(&r->heads[i]);
    free(r->heads);
    free(r->rank);
    cs_sentence_close(&r->s);
    free(r);
}

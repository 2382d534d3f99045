/* The per-sentence, per-head figures behind atn_stats (head-stats.c), shared with the corpus
 * partials (corpus-stats.c) so that both read a sentence the same way: the same tokens kept,
 * the same kinds, the same sums in the same order. */
#ifndef ATN_HEAD_STATS_PRIVATE_H
#define ATN_HEAD_STATS_PRIVATE_H

#include "analysis.h"

/* The statistics of atn_head_stats, in its order. */
enum {
    STATS_ENTROPY = 0, STATS_ENTROPY_NORM, STATS_CLS, STATS_SEP, STATS_PUNCT, STATS_SELF, STATS_PREV,
    STATS_NEXT, STATS_LOCAL, STATS_SAME_SEGMENT, STATS_DISTANCE, STATS_COUNT
};

/* A token's kind (stats_sentence.kind). */
typedef enum { KIND_OTHER = 0, KIND_CLS = 1, KIND_SEP = 2, KIND_PUNCT = 4 } token_kind;

/* One capture as the statistics see it: the m unmasked tokens keep[0..m) of n, each's kind
 * ([CLS], [SEP], punctuation) and whether it is special.  Borrowed from the capture, which
 * must outlive it. */
typedef struct stats_sentence {
    int32_t n, m;
    const int32_t *keep;            /* [m] */
    const unsigned char *kind;      /* [n] */
    const unsigned char *special;   /* [n]: [CLS], [SEP], [PAD], [MASK]...: never an exemplar's key */
    const int32_t *seg;             /* [n] type ids, or NULL */
    double log2m;
    bool pair;                      /* some token of the second segment */
    /* the induction targets (head-stats.c): row r's are ind_key[ind_start[r] .. ind_start[r + 1]),
       the positions after the earlier copies of the row's token pair; both NULL when none */
    const int32_t *ind_start, *ind_key;
    /* the query rows that count ([m], 1 = counts) and how many, for a partial restricted to a
       query role (corpus-stats.c); NULL: every row (m_on unused).  Set by the caller after open. */
    const unsigned char *row_on;
    int32_t m_on;
} stats_sentence;

/* ATN_E_NOMEM, else ATN_OK (m may be 0: nothing to add).  close frees what open allocated. */
atn_status stats_sentence_open(stats_sentence *sent, const atn_capture *cap, atn_error *err);
void stats_sentence_close(stats_sentence *sent);

/* Per query row r (0..m), when asked: the row's entropy in bits, its attention distance
 * sum_k a |i-k|, its weight on the first kept token (the sink), and its heaviest key that is
 * not special (best_key -1 when every key is; the first of equal weights). */
typedef struct stats_rows {
    double *entropy, *distance, *sink;   /* [m] */
    int32_t *best_key;                   /* [m] token positions */
    float *best_weight;                  /* [m] */
} stats_rows;

/* One head's [n][n] a (atn_capture_head_read's) of one sentence with m > 0: out[STATS_*]
 * its per-sentence means, exactly the amounts atn_stats_add adds; rows (NULL: none) filled
 * as above.  With row_on, the means are over the m_on rows on (m_on > 0) and only their rows
 * are filled.  Returns the sentence's induction share for the head (what atn_stats_add adds
 * to induction). */
double stats_head_sentence(const stats_sentence *sent, const float *a, double out[STATS_COUNT], const stats_rows *rows);

/* Whether atn_stats_finish has run on st (an accumulator atn_stats_new made). */
bool stats_is_finished(const atn_stats *st);
/* One head's sums over the query rows of a sentence seen so far (zero to start). */
typedef struct head_sums {
    double ent, ent_n, cls, sep, punct, self, prev, next, local, same, dist;
    int32_t n_prev, n_next, rows;
    double ind;       /* weight on the induction targets, over the n_ind rows that have some */
    int32_t n_ind;
} head_sums;

/* Adds query row r (the r-th kept token; row [n] its probabilities over every key) of one
 * head to h, and its per-row figures to rows (NULL: none): the one place the numbers are
 * made.  Rows added in query order give stats_head_sentence's bits. */
void stats_row_add(const stats_sentence *sent, int32_t r, const float *row, head_sums *h, const stats_rows *rows);
/* The per-sentence means of h over m rows (stats_head_sentence's out), and its induction share
 * (what it returns). */
void stats_head_means(const head_sums *h, int32_t m, double out[STATS_COUNT]);
double stats_head_induction(const head_sums *h);

#endif

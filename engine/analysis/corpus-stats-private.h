/* The inside of a corpus partial (corpus-stats.h), shared by the accumulator (corpus-stats.c)
 * and its file (corpus-stats-file.c). */
#ifndef ATN_CORPUS_STATS_PRIVATE_H
#define ATN_CORPUS_STATS_PRIVATE_H

#include "corpus-stats.h"
#include "head-stats-private.h"

/* A 192-bit two's complement fixed-point number, 96 bits after the point, little-endian words. */
enum { CS_FX_WORDS = 3, CS_FX_FRAC = 96 };

/* counts[] */
enum { CS_SENTENCES = 0, CS_TOKENS, CS_TRUNCATED, CS_CUT, CS_SKIPPED, CS_PAIRS, CS_COUNTS };

enum { CS_N_STRS = 9 };   /* the identity's strings (strs) */

struct atn_corpus_stats {
    atn_cs_identity id;          /* strings owned (strs) */
    char *strs[CS_N_STRS];       /* model, revision, tokenizer, precision, settings, corpus, version,
                                    query role, key role ("" = any) */
    int64_t counts[CS_COUNTS];
    int64_t *ranges;             /* [n_ranges][2] first, last: sorted, disjoint, not adjacent */
    int32_t n_ranges, cap_ranges;
    int64_t last_line;           /* the last line added or covered (0: none) */
    uint64_t *sums;              /* [L*H][ATN_CS_STATS][2: sum, sum of squares][CS_FX_WORDS] */
    double *min, *max;           /* [L*H][ATN_CS_STATS] */
    uint64_t *ind;               /* [L*H][CS_FX_WORDS]: the sum of the sentences' induction shares
                                    (head-stats.c's, 0 for a sentence without repeated spans) */
    uint64_t *off;               /* [L*H][ATN_CS_OFFSETS][CS_FX_WORDS]: the weight at each offset, summed
                                    over the rows (NULL: a partial of before these sums, has_off false) */
    int64_t off_rows[ATN_CS_OFFSETS];   /* the rows that had a token at each offset */
    bool has_off;
    uint64_t *hist;              /* [L*H][CS_HIST_BINS]: entropy, distance, sink bins */
    atn_cs_exemplar *ex;         /* [L*H][top_k], best first */
    int32_t *n_ex;               /* [L*H] */
    unsigned char *ex_heap;      /* [L*H]: 1 while that head's exemplars are a heap, the worst at [0]
                                    (sentences being added); 0: sorted best first (cs_sort_exemplars) */
};

enum { CS_HIST_BINS = ATN_CS_ENTROPY_BINS + ATN_CS_DISTANCE_BINS + ATN_CS_SINK_BINS };

/* The fixed point's add (acc += v) and its value as a double, for the files beside corpus-stats.c. */
void cs_fx_add(uint64_t *acc, const uint64_t *v);
double cs_fx_to_double(const uint64_t *a);

/* Allocates the arrays for cs->id's shape (zeroed; min/max at +inf/-inf; the offset sums and
 * has_off too).  ATN_E_NOMEM. */
atn_status cs_alloc(atn_corpus_stats *cs, atn_error *err);
/* Sorts every head's exemplars best first (a partial being added to keeps them as heaps);
 * logically const: the file writer calls it. */
void cs_sort_exemplars(const atn_corpus_stats *cs);
/* Copies the identity's strings into cs (id->version too when keep_version). */
atn_status cs_set_identity(atn_corpus_stats *cs, const atn_cs_identity *id, bool keep_version, atn_error *err);
/* One sentence as a partial adds it: the statistics' view of its tokens, the query rows of
 * the role filter, the kept positions and the rows with a token at each offset.  Borrows
 * the capture's encoding. */
typedef struct cs_sentence {
    stats_sentence sent;
    const atn_encoding *enc;
    unsigned char *row_on;              /* [m] the query role's rows, or NULL (every row) */
    unsigned char *kept;                /* [n] 1 = an unmasked position */
    int64_t off_rows[ATN_CS_OFFSETS];
    bool none;                          /* no row of the query role: the sentence adds nothing */
} cs_sentence;

/* One head's figures of one sentence, added row by row (cs_head_row) in query order. */
typedef struct cs_head {
    head_sums sums;
    double off_sum[ATN_CS_OFFSETS];
    stats_rows rows;                    /* [m] each (the histograms' and exemplars' rows) */
} cs_head;

/* cap->n and cap->enc are what is read (a capture without attention will do).  ATN_E_NOMEM,
 * ATN_E_INVALID (role filters without the tokens' roles). */
atn_status cs_sentence_open(const atn_corpus_stats *cs, const atn_capture *cap, cs_sentence *s, atn_error *err);
void cs_sentence_close(cs_sentence *s);
/* Zeroed sums with rows for m query rows (false: out of memory); reset zeroes the sums
 * (the rows are overwritten); free frees the rows. */
bool cs_head_init(cs_head *h, int32_t m);
void cs_head_reset(cs_head *h);
void cs_head_free(cs_head *h);
/* Query row r (the r-th kept token) of the head: arow[n] its probabilities.  Rows not of the
 * query role are skipped. */
void cs_head_row(const atn_corpus_stats *cs, const cs_sentence *s, cs_head *h, int32_t r, const float *arow);
/* Adds head idx's figures of the sentence of corpus line `line` into cs (s not none, m > 0). */
void cs_head_fold(atn_corpus_stats *cs, size_t idx, const cs_sentence *s, const cs_head *h, int64_t line);
/* Adds the sentence's counts (after its heads) and makes line the last added. */
void cs_sentence_fold(atn_corpus_stats *cs, const cs_sentence *s, int64_t line);
/* ATN_E_INVALID unless line comes after every line added or covered. */
atn_status cs_check_line(const atn_corpus_stats *cs, int64_t line, atn_error *err);

/* Appends [first, last] to the ranges, joining it to a neighbour; keeps them sorted.  Refuses
 * (ATN_E_INVALID) an overlap. */
atn_status cs_add_range(atn_corpus_stats *cs, int64_t first, int64_t last, atn_error *err);

#endif

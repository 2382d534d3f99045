/* Statistics from a corpus forward's heads as they are made (atn_run_options.head_sink):
 * `stats --corpus`, `stats --shard` and the window's Statistics corpus pass use it when only
 * statistics are asked for, so that a sentence's run holds one head's n x n (one per thread
 * on the packed ops), not the capture's [L][H][n][n] (docs/ARCHITECTURE.md, "Attention at
 * any length").  One stream serves one corpus pass on one thread at a time (the forward's
 * threads call its sink, each head from one thread). */
#ifndef ATN_STATS_STREAM_H
#define ATN_STATS_STREAM_H

#include "analysis.h"
#include "corpus-stats.h"

typedef struct atn_stats_stream {
    atn_head_sink sink;            /* user: this struct */
    atn_stats *st;                 /* the plain statistics (borrowed), or NULL */
    atn_corpus_stats *cs;          /* a partial (borrowed), or NULL */
    const atn_encoding *enc;       /* the sentence begun (the run's), or NULL */
    atn_stats_rows *rows;          /* its rows for st */
    atn_cs_rows *cs_rows;          /* its rows for cs */
    int64_t streamed;              /* sentences added from the rows the forward streamed */
    int64_t from_heads;            /* sentences added from a capture's heads */
} atn_stats_stream;

/* For exactly one of st and cs (borrowed: they outlive the stream); s is the caller's. */
void atn_stats_stream_init(atn_stats_stream *s, atn_stats *st, atn_corpus_stats *cs);
/* Has the corpus pass's forwards feed the stream: no attention kept, the sink set (opts
 * borrows s). */
void atn_stats_stream_use(atn_stats_stream *s, atn_run_options *opts);
/* Adds the sentence of cap (corpus line `line`, for a partial): its heads when the capture
 * has them (a stack, a GPU run, an on-demand capture), else the rows the forward streamed
 * for it.  The errors of atn_stats_add / atn_corpus_stats_add and the folds; ATN_E_INVALID
 * when neither heads nor rows are there.  The sentence's rows are freed either way. */
atn_status atn_stats_stream_add(atn_stats_stream *s, const atn_capture *cap, int64_t line, atn_error *err);
/* Frees the rows of a sentence begun and not added (not st or cs); s may be NULL. */
void atn_stats_stream_free(atn_stats_stream *s);

#endif

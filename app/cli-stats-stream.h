/* Statistics from a corpus forward's heads as they are made (atn_run_options.head_sink):
 * `stats --corpus` and `stats --shard` use it when only statistics are asked for, so that a
 * sentence's run holds one head's n x n, not the capture's [L][H][n][n]
 * (docs/ARCHITECTURE.md, "Attention at any length"). */
#ifndef ATN_CLI_STATS_STREAM_H
#define ATN_CLI_STATS_STREAM_H

#include "analysis.h"
#include "corpus-stats.h"

typedef struct cli_stats_stream {
    atn_head_sink sink;            /* user: this struct */
    atn_stats *st;                 /* the plain statistics (borrowed), or NULL */
    atn_corpus_stats *cs;          /* a partial (borrowed), or NULL */
    const atn_encoding *enc;       /* the sentence begun (the run's), or NULL */
    atn_stats_rows *rows;          /* its rows for st */
    atn_cs_rows *cs_rows;          /* its rows for cs */
} cli_stats_stream;

/* For exactly one of st and cs (borrowed: they outlive the stream). */
void cli_stats_stream_init(cli_stats_stream *s, atn_stats *st, atn_corpus_stats *cs);
/* Has the corpus pass's forwards feed the stream: no attention kept, the sink set. */
void cli_stats_stream_use(cli_stats_stream *s, atn_run_options *opts);
/* Adds the sentence of cap (corpus line `line`, for a partial): its heads when the capture
 * has them (a stack, a GPU run, an on-demand capture), else the rows the forward streamed
 * for it.  The errors of atn_stats_add / atn_corpus_stats_add and the folds; ATN_E_INVALID
 * when neither heads nor rows are there. */
atn_status cli_stats_stream_add(cli_stats_stream *s, const atn_capture *cap, int64_t line, atn_error *err);
void cli_stats_stream_free(cli_stats_stream *s);

#endif

/* The head sink behind stats --corpus, stats --shard and the window's corpus pass (stats-stream.h). */
#include "stats-stream.h"

#include <string.h>

static void drop_rows(atn_stats_stream *s) {
    atn_stats_rows_free(s->rows);
    atn_cs_rows_free(s->cs_rows);
    s->rows = NULL, s->cs_rows = NULL, s->enc = NULL;
}

static atn_status sink_begin(void *user, const atn_encoding *enc, atn_error *err) {
    atn_stats_stream *s = user;
    drop_rows(s);
    atn_status st = s->cs ? atn_cs_rows_new(s->cs, enc, &s->cs_rows, err)
                          : atn_stats_rows_new(enc, s->st->n_layers, s->st->n_heads, &s->rows, err);
    if (st == ATN_OK)
        s->enc = enc;
    return st;
}

static void sink_head(void *user, int32_t layer, int32_t head, const float *att, int32_t n) {
    atn_stats_stream *s = user;
    if (s->cs_rows)
        atn_cs_rows_head(s->cs_rows, layer, head, att, n);
    for (int32_t i = 0; s->rows && i < n; i++)
        atn_stats_rows_add(s->rows, layer, head, i, att + (size_t)i * n);
}

void atn_stats_stream_init(atn_stats_stream *s, atn_stats *st, atn_corpus_stats *cs) {
    memset(s, 0, sizeof *s);
    s->st = st, s->cs = cs;
    s->sink = (atn_head_sink){sink_begin, sink_head, s};
}

void atn_stats_stream_use(atn_stats_stream *s, atn_run_options *opts) {
    opts->keep_attention = false;
    opts->head_sink = &s->sink;
}

atn_status atn_stats_stream_add(atn_stats_stream *s, const atn_capture *cap, int64_t line, atn_error *err) {
    atn_status st;
    if (atn_capture_has_heads(cap)) {
        st = s->cs ? atn_corpus_stats_add(s->cs, cap, line, err) : atn_stats_add(s->st, cap, err);
        s->from_heads += st == ATN_OK;
    } else if (!s->enc || s->enc != cap->enc) {
        st = atn_error_set(err, ATN_E_INVALID, "statistics: the run kept no attention and streamed none");
    } else {
        st = s->cs ? atn_cs_rows_fold(s->cs_rows, s->cs, line, err) : atn_stats_rows_fold(s->rows, s->st, err);
        s->streamed += st == ATN_OK;
    }
    drop_rows(s);
    return st;
}

void atn_stats_stream_free(atn_stats_stream *s) {
    if (s)
        drop_rows(s);
}

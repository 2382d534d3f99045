/* A pass over a corpus file (one sentence per line) in a worker thread: atn_corpus_run with
 * the window's model, each capture handed to consume in the worker.  Shared by the
 * Statistics and Similarity views' "Corpus…". */
#pragma once

#include <gtk/gtk.h>

#include "atn-model-handle.h"
#include "stats-stream.h"

G_BEGIN_DECLS

typedef atn_status (*AtnCorpusConsume)(const atn_capture *cap, gpointer data, atn_error *err);

/* Starts the pass.  consume_data is the caller's (an atn_stats, an atn_similarity) and must
 * stay alive until callback; *permille (0..1000, the fraction of the file read) is written
 * by the worker and read by the caller whenever it likes, so it must live as long too (a
 * field of source: the task keeps source alive).  Runs on device (AUTO falls back).
 * stream (the caller's, alive until callback, or NULL): the forwards keep no attention and
 * feed it their heads as they make them (atn_stats_stream_use), so consume adds a sentence
 * with atn_stats_stream_add; NULL: each capture keeps the sentence's [L][H][n][n]. */
void atn_corpus_pass_async(GObject *source, AtnModelHandle *model, const char *path, atn_device device,
                           atn_stats_stream *stream, AtnCorpusConsume consume, gpointer consume_data, gint *permille,
                           GCancellable *cancel, GAsyncReadyCallback callback, gpointer user_data);
/* TRUE when every line was read and at least one sentence consumed; report says what was
 * done either way.  Errors: G_IO_ERROR_CANCELLED, or a message naming the file. */
gboolean atn_corpus_pass_finish(GAsyncResult *result, atn_corpus_report *report, GError **error);

/* "Averaged over 12 sentences of “corpus.txt” (1 line skipped: not UTF-8 text)": what a
 * finished pass covered, for the views' info lines. */
char *atn_corpus_pass_describe(const char *path, const atn_corpus_report *report);

/* The "Corpus…" buttons' dialog (text files first); chosen(path, data) when the user picks
 * one.  from (a widget in the window) is kept alive until then. */
typedef void (*AtnCorpusChosen)(GtkWidget *from, const char *path);
void atn_corpus_choose_file(GtkWidget *from, AtnCorpusChosen chosen);

G_END_DECLS

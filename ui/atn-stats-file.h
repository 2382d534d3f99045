/* A merged corpus statistics file (engine/include/corpus-stats.h: what `attnscope stats
 * --shard` and `stats merge` write) in the window: read in a worker with progress and Cancel
 * (AtnStatsFile), and the panel the Statistics view shows beside its table for one
 * (AtnStatsFilePanel): the head grid coloured by any statistic and the Examples of the
 * selected head, each of which can be opened as its sentence in the Head view.
 *
 * The exemplars' sentences are the corpus's lines: the corpus named in the file's provenance
 * is looked for beside the file (its name, in the same folder) and used when it has the line
 * count the file records; otherwise the examples show their tokens only and cannot be run. */
#pragma once

#include <gtk/gtk.h>

#include "corpus-stats.h"

G_BEGIN_DECLS

/* ---- the file, read ------------------------------------------------------------------------- */

typedef struct AtnStatsFile AtnStatsFile;

/* Reads path in a worker: the partial (atn_corpus_stats_load), its means and per-head labels,
 * and the exemplars' lines from the corpus beside it.  *permille is written by the worker:
 * -1 while the partial is read (no fraction known), then 0..1000 through the corpus; it must
 * live until callback (a field of source).  Cancelling stops between steps and every 64 KiB
 * of the corpus. */
void atn_stats_file_load_async(GObject *source, const char *path, gint *permille, GCancellable *cancel,
                               GAsyncReadyCallback callback, gpointer user_data);
/* The file (a new reference), or NULL with the engine's message (naming the file and the
 * tensor or key) or G_IO_ERROR_CANCELLED. */
AtnStatsFile *atn_stats_file_load_finish(GAsyncResult *result, GError **error);

AtnStatsFile *atn_stats_file_ref(AtnStatsFile *file);
void atn_stats_file_unref(AtnStatsFile *file);   /* NULL: nothing */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AtnStatsFile, atn_stats_file_unref)

/* Borrowed, valid while the file is. */
const atn_corpus_stats *atn_stats_file_get_stats(const AtnStatsFile *file);
const atn_stats *atn_stats_file_get_means(const AtnStatsFile *file);
const char *atn_stats_file_get_path(const AtnStatsFile *file);
/* Head c = layer * heads + head's label from the corpus evidence, translated. */
const char *atn_stats_file_get_label(const AtnStatsFile *file, int c);
/* The corpus file found beside it, or NULL. */
const char *atn_stats_file_get_corpus_path(const AtnStatsFile *file);
/* Corpus line `line`'s text (without its newline) when an exemplar needs it and the corpus
 * was found, else NULL. */
const char *atn_stats_file_get_line(const AtnStatsFile *file, int64_t line);
/* "12,345 sentences of “corpus.txt” (lines 1-20000 of 20000) · demo · fp32": the info line. */
char *atn_stats_file_describe(const AtnStatsFile *file);

/* A label's evidence (atn_corpus_stats_label_info) worded in the UI's language: in English the
 * same words as atn_corpus_stats_label's why.  Newly allocated (g_free). */
char *atn_stats_file_explain(const atn_cs_label_info *in);
/* The corpus labels (atn_corpus_stats_label's English) translated. */
const char *atn_stats_file_translate_label(const char *label);

/* ---- the panel -------------------------------------------------------------------------------- */

#define ATN_TYPE_STATS_FILE_PANEL (atn_stats_file_panel_get_type())
G_DECLARE_FINAL_TYPE(AtnStatsFilePanel, atn_stats_file_panel, ATN, STATS_FILE_PANEL, GtkWidget)

/* Signals: "head-selected" (int layer, int head) when a grid cell is clicked;
 * "exemplar-activated" (int layer, int head, int query, int key, string text, string model)
 * when an example is clicked whose sentence is known. */
GtkWidget *atn_stats_file_panel_new(void);
/* The file shown (referenced; NULL: none).  Selects head 0 of layer 0. */
void atn_stats_file_panel_set_file(AtnStatsFilePanel *self, AtnStatsFile *file);
void atn_stats_file_panel_select_head(AtnStatsFilePanel *self, int layer, int head);
/* The statistic the grid is coloured by: 0..ATN_CS_STATS-1, atn_head_stats's order. */
void atn_stats_file_panel_set_statistic(AtnStatsFilePanel *self, int statistic);

/* For tests: the selected head; the grid cell's value and colour as drawn (FALSE out of range);
 * the examples listed, an example's text, and a click on one. */
void atn_stats_file_panel_get_head(AtnStatsFilePanel *self, int *layer, int *head);
gboolean atn_stats_file_panel_get_cell(AtnStatsFilePanel *self, int layer, int head, double *value, double rgb[3]);
guint atn_stats_file_panel_get_n_examples(AtnStatsFilePanel *self);
const char *atn_stats_file_panel_get_example_text(AtnStatsFilePanel *self, guint i);
void atn_stats_file_panel_activate_example(AtnStatsFilePanel *self, guint i);
/* The line above the examples ("why" of the head's label, or why examples cannot be run). */
const char *atn_stats_file_panel_get_note(AtnStatsFilePanel *self);

G_END_DECLS

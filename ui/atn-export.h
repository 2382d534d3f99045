/* Exporting: the save dialogs (GtkFileChooserNative) for a figure (PNG/SVG/PDF with a
 * scale for slides) and for text (the trace as Markdown).  Files are written in a worker
 * thread through a temporary file and a rename. */
#pragma once

#include <gtk/gtk.h>

#include "atn-figure.h"
#include "atn-heatmap.h"
#include "atn-result.h"

G_BEGIN_DECLS

/* The file a figure export writes when the dialog returned typed with Format chosen_format
 * ("png", "svg", "pdf"; NULL: png): typed itself when it ends in a figure extension (the
 * typed extension decides the format), else typed with the chosen format's extension.
 * Newly allocated. */
char *atn_export_figure_path(const char *typed, const char *chosen_format);

/* Asks where to save fig (taken over) and writes it: the typed extension decides the format
 * (Format applies to a name without one), and a file that the name with the added extension
 * would replace is asked about first.  The result is the path written. */
void atn_export_figure_async(GtkWindow *parent, AtnFigure *fig, GAsyncReadyCallback callback, gpointer user_data);

/* The same dialog for a figure already written in each format (the paths of its PNG, SVG and
 * PDF, copied): the file of the format decided is copied to the path chosen (the Scale choice
 * is the files' own).  basename: the suggested name without its extension. */
void atn_export_figure_files_async(GtkWindow *parent, const char *png, const char *svg, const char *pdf,
                                   const char *basename, GAsyncReadyCallback callback, gpointer user_data);


/* Asks where to save text (taken over, UTF-8), in a dialog titled title, and writes it. */
void atn_export_text_async(GtkWindow *parent, char *text, const char *title, const char *suggested_name,
                           GAsyncReadyCallback callback, gpointer user_data);
/* Either of the two above: the path written (G_IO_ERROR_CANCELLED when the dialog was closed). */
char *atn_export_finish(GAsyncResult *result, GError **error);

/* Every head of result as a heatmap drawn with look (taken over), one file per head
 * (FOLDER/PREFIX-L<l>-H<h>.<format>, the command line's --all-heads names).  PREFIX "decoder"
 * or "cross" with an encoder-decoder's result: that stack's heads (ui/atn-encdec.h), whose
 * [n_q][n_k] shape look must have (the Head view's look while it shows that stack); a head an
 * attention file's layer lacks (atn_capture_head_present) gets no file.  Asks for the
 * folder, format and scale, then writes in a worker thread.  progress (main thread) is
 * called after each file with (done, total); cancel stops between files, keeping the files
 * written.  The result is the number of files written (atn_export_all_heads_finish). */
typedef void (*AtnExportProgress)(int done, int total, gpointer user_data);
void atn_export_all_heads_async(GtkWindow *parent, AtnResult *result, AtnHeatmapLook *look, const char *prefix,
                                GCancellable *cancel, AtnExportProgress progress, GAsyncReadyCallback callback,
                                gpointer user_data);
/* The same without the dialog: into folder as format ("png", "svg", "pdf") at scale. */
void atn_export_all_heads_to_async(GtkWindow *parent, AtnResult *result, AtnHeatmapLook *look, const char *prefix,
                                   const char *folder, const char *format, double scale, GCancellable *cancel,
                                   AtnExportProgress progress, GAsyncReadyCallback callback, gpointer user_data);
/* Files written, or -1 with error (G_IO_ERROR_CANCELLED when the dialog or the export was
 * cancelled; *folder and *written still say what was done). */
int atn_export_all_heads_finish(GAsyncResult *result, char **folder, int *written, GError **error);

G_END_DECLS

/* Exporting: the save dialogs (GtkFileChooserNative) for a figure (PNG/SVG/PDF with a
 * scale for slides) and for text (the trace as Markdown).  Files are written in a worker
 * thread through a temporary file and a rename. */
#pragma once

#include <gtk/gtk.h>

#include "atn-figure.h"

G_BEGIN_DECLS

/* Asks where to save fig (taken over) and writes it.  The result is the path written. */
void atn_export_figure_async(GtkWindow *parent, AtnFigure *fig, GAsyncReadyCallback callback, gpointer user_data);
char *atn_export_figure_finish(GAsyncResult *result, GError **error);

/* Asks where to save text (taken over, UTF-8) and writes it. */
void atn_export_text_async(GtkWindow *parent, char *text, const char *suggested_name, GAsyncReadyCallback callback,
                           gpointer user_data);
char *atn_export_text_finish(GAsyncResult *result, GError **error);

G_END_DECLS

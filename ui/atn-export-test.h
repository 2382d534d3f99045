/* What atn-export.c keeps for the tests: the question before replacing a file. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* The "Replace …?" dialog an export is waiting on (a GtkMessageDialog; answer it with
 * gtk_dialog_response, GTK_RESPONSE_ACCEPT replaces), or NULL. */
GtkWidget *atn_export_get_replace_question(void);

G_END_DECLS

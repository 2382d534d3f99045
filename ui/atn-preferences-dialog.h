/* AtnPreferencesDialog: colour map and text size (the device is chosen in the header bar);
 * changes apply at once and persist through AtnPrefs. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ATN_TYPE_PREFERENCES_DIALOG (atn_preferences_dialog_get_type())
G_DECLARE_FINAL_TYPE(AtnPreferencesDialog, atn_preferences_dialog, ATN, PREFERENCES_DIALOG, GtkWindow)

GtkWidget *atn_preferences_dialog_new(GtkWindow *parent);

G_END_DECLS

/* What atn-get-model-dialog.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-get-model-dialog.h"

G_BEGIN_DECLS

/* What the buttons do (also for tests): set the id, Look Up, Download, Cancel. */
void atn_get_model_dialog_set_id(AtnGetModelDialog *self, const char *id);
void atn_get_model_dialog_look_up(AtnGetModelDialog *self);
void atn_get_model_dialog_download(AtnGetModelDialog *self);
void atn_get_model_dialog_cancel(AtnGetModelDialog *self);

AtnGetModelState atn_get_model_dialog_get_state(AtnGetModelDialog *self);
/* The suggested models' buttons, in order (borrowed list and widgets); each has its Hub id
 * as the object data "id".  Clicking one sets the id and looks it up. */
GList *atn_get_model_dialog_get_suggestions(AtnGetModelDialog *self);
/* The status line (borrowed, valid until the state changes): the error, the totals, … */
const char *atn_get_model_dialog_get_message(AtnGetModelDialog *self);
/* The listed files (0 before a lookup) and the fraction downloaded (0..1). */
int atn_get_model_dialog_get_n_files(AtnGetModelDialog *self);
double atn_get_model_dialog_get_fraction(AtnGetModelDialog *self);

G_END_DECLS

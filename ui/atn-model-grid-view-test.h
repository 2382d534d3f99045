/* What atn-model-grid-view.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-model-grid-view.h"

G_BEGIN_DECLS

/* The what-if menu of a head (a secondary click on its thumbnail, or Shift+F10 / Menu for
 * the selected head): switch it off (outputs zero), off attending uniformly, keep only it in
 * its layer, back on, and restore the original model; each item is the view's action
 * "whatif.head" with target (layer, head, atn_whatif_head_change_name) or "whatif.restore",
 * which replace the session's changes (atn_session_set_whatif).  The popover, and the head
 * it was last opened for. */
GtkPopover *atn_model_grid_view_get_head_menu(AtnModelGridView *self, int *layer, int *head);

G_END_DECLS

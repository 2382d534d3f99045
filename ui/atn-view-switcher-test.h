/* What atn-view-switcher.h leaves out: functions only the tests (tests/ui/) call, to read back what
 * the widget shows or to drive it as a user would.  Included by the tests and by the .c
 * files that define them. */
#pragma once

#include "atn-view-switcher.h"

G_BEGIN_DECLS

GtkStack *atn_view_switcher_get_stack(AtnViewSwitcher *self);
/* The form shown since the last allocation (WIDE before the first). */
AtnViewSwitcherForm atn_view_switcher_get_form(AtnViewSwitcher *self);
/* The widget of a form (borrowed): a GtkStackSwitcher for WIDE and COMPACT, a GtkMenuButton
 * for MENU. */
GtkWidget *atn_view_switcher_get_form_widget(AtnViewSwitcher *self, AtnViewSwitcherForm form);

G_END_DECLS

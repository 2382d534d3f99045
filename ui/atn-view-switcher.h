/* AtnViewSwitcher: the header bar's view switcher, in the form that fits the width the
 * header bar gives it (as libadwaita's AdwViewSwitcherTitle does; GTK 4.8 has no such widget):
 * the stack's pages as a row of buttons of the theme's width (a GtkStackSwitcher), else as a
 * compact row (buttons as wide as their titles), else one menu button named after the visible
 * page whose menu lists every page (a check at the visible one).  Its minimum width is the
 * menu button's, its natural width the full row's, so a header bar never makes the window
 * wider than the screen for its sake and shows the full row whenever it fits. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ATN_TYPE_VIEW_SWITCHER (atn_view_switcher_get_type())
G_DECLARE_FINAL_TYPE(AtnViewSwitcher, atn_view_switcher, ATN, VIEW_SWITCHER, GtkWidget)

typedef enum {
    ATN_VIEW_SWITCHER_WIDE,      /* the full row (GtkStackSwitcher) */
    ATN_VIEW_SWITCHER_COMPACT,   /* the row with narrow buttons */
    ATN_VIEW_SWITCHER_MENU,      /* one menu button */
    ATN_VIEW_SWITCHER_N_FORMS
} AtnViewSwitcherForm;

GtkWidget *atn_view_switcher_new(void);
/* The stack whose pages it switches (a reference is kept; NULL: none). */
void atn_view_switcher_set_stack(AtnViewSwitcher *self, GtkStack *stack);

G_END_DECLS

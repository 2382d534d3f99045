/* AtnWrapBox: a row of controls that wraps onto a second line (at most max-lines lines, 2 by
 * default) when the width it is given is less than the row needs, as a view's controls bar
 * must at a large text size on a small screen.  It wraps only when the children do not fit
 * on fewer lines at their minimum widths (until then it shrinks them, as a GtkBox does).
 * Children keep their order and widths between their minimum and natural; a line's spare
 * width goes to its children that expand horizontally.  Its minimum width is the least width at which the children fit in max-lines
 * lines (not one child per line, which would make the window's minimum height grow without
 * bound), its natural width the whole row.  Children are added with gtk_widget_set_parent or
 * <child> in a .ui file; a group that must stay together (a label and its control) goes in a
 * GtkBox of its own. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ATN_TYPE_WRAP_BOX (atn_wrap_box_get_type())
G_DECLARE_FINAL_TYPE(AtnWrapBox, atn_wrap_box, ATN, WRAP_BOX, GtkWidget)

GtkWidget *atn_wrap_box_new(int spacing);
/* A child (a status line that asks for no width, AtnFitLabel) that should start a new line
 * rather than be given less than width px, where that takes at most one line more than
 * max-lines; the box's minimum width does not count it.  0: none (the default). */
void atn_wrap_box_set_child_want(GtkWidget *child, int width);
/* The number of lines of the last allocation (1 before the first). */
int atn_wrap_box_get_n_lines(AtnWrapBox *self);

G_END_DECLS

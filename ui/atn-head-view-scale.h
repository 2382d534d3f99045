/* The Head view's controls for long inputs and attention sinks (issue 35): the colour scale
 * (linear, log, rank in its row), "leave out the first token", and what a pooled block shows
 * (its largest or its mean weight), wired to the view's heatmap.  Main thread. */
#pragma once

#include <gtk/gtk.h>

#include "atn-heatmap.h"

G_BEGIN_DECLS

/* A box of the three controls driving heatmap (borrowed: the box lives inside the same view). */
GtkWidget *atn_head_view_scale_controls_new(AtnHeatmap *heatmap);

/* The token span typed in its box ("120-180", both ends included; "" all): crops the heatmap's
 * axes to it (atn_heatmap_show_block); FALSE, the box marked as an error and nothing changed,
 * when it is not a span inside the matrix.  The box follows the heatmap: a span dragged along
 * an axis is written in it, and it empties when the view leaves the span; "Whole input", shown
 * while a span is, shows every token again. */
gboolean atn_head_view_scale_set_span(GtkWidget *box, const char *text);

/* For tests: the controls in the box, to set them as a user does. */
GtkDropDown *atn_head_view_scale_get_scale_dropdown(GtkWidget *box);
GtkCheckButton *atn_head_view_scale_get_drop_first(GtkWidget *box);
GtkDropDown *atn_head_view_scale_get_pool_dropdown(GtkWidget *box);
GtkEntry *atn_head_view_scale_get_span(GtkWidget *box);
GtkButton *atn_head_view_scale_get_whole(GtkWidget *box);   /* "Whole input", shown while a span is */

G_END_DECLS

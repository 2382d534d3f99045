/* AtnModelGrid: every layer × head of a result as thumbnails (ui/render's model grid).  The
 * thumbnails' pixels are made once per result and colour map; the figure is cached as a
 * render node per size; hover and selection are outlines on top.  Emits "head-activated"
 * (layer, head) on click and "head-menu" (layer, head) on a secondary click.  The heads the
 * result's what-if changes switched off are dimmed and marked in red: a cross (outputs
 * zero) or level bars (attends uniformly). */
#pragma once

#include <gtk/gtk.h>

#include "atn-figure.h"
#include "atn-result.h"

G_BEGIN_DECLS

#define ATN_TYPE_MODEL_GRID (atn_model_grid_get_type())
G_DECLARE_FINAL_TYPE(AtnModelGrid, atn_model_grid, ATN, MODEL_GRID, GtkWidget)

GtkWidget *atn_model_grid_new(void);
void atn_model_grid_set_result(AtnModelGrid *self, AtnResult *result);
void atn_model_grid_set_colormap(AtnModelGrid *self, atn_colormap cm);
void atn_model_grid_set_font_scale(AtnModelGrid *self, double scale);
void atn_model_grid_set_shared_range(AtnModelGrid *self, gboolean shared);
/* Short notes under each thumbnail ([L*H], copied), or NULL for none. */
void atn_model_grid_set_notes(AtnModelGrid *self, const char *const *notes);
void atn_model_grid_set_selected(AtnModelGrid *self, int layer, int head);
/* An encoder-decoder's stack to draw (an atn_stack_kind, ui/atn-encdec.h; default the
 * encoder's, which is the capture's attention): a decoder or cross stack is drawn from its
 * maps, without the result's thumbnails or pattern labels. */
void atn_model_grid_set_stack(AtnModelGrid *self, int stack);
/* Where thumbnail (layer, head) is drawn, in the widget's coordinates; FALSE without a result
 * or out of range. */
gboolean atn_model_grid_get_head_rect(AtnModelGrid *self, int layer, int head, graphene_rect_t *rect);
/* Drops every cache (benchmarks measure a cold draw). */
void atn_model_grid_invalidate(AtnModelGrid *self);
AtnFigure *atn_model_grid_dup_figure(AtnModelGrid *self);

/* A colour map or scale the result has no pixels for is coloured by a worker
 * (atn_result_color_thumbs); TRUE while one is in flight.  A new result cancels it, and so
 * does atn_model_grid_cancel_recolour (the Model view calls it when a run starts, which
 * colours its result in the new style anyway); atn_model_grid_update_colours starts it
 * again when the picture still has the old style.  n_recolours: the workers started. */
void atn_model_grid_cancel_recolour(AtnModelGrid *self);
void atn_model_grid_update_colours(AtnModelGrid *self);

G_END_DECLS

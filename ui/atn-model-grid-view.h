/* AtnModelGridView: the Model page — every head as a thumbnail, with a shared-scale switch
 * and pattern labels; clicking a head emits "head-activated" (layer, head). */
#pragma once

#include <gtk/gtk.h>

#include "atn-model-grid.h"
#include "atn-session.h"

G_BEGIN_DECLS

#define ATN_TYPE_MODEL_GRID_VIEW (atn_model_grid_view_get_type())
G_DECLARE_FINAL_TYPE(AtnModelGridView, atn_model_grid_view, ATN, MODEL_GRID_VIEW, GtkWidget)

GtkWidget *atn_model_grid_view_new(void);
void atn_model_grid_view_set_session(AtnModelGridView *self, AtnSession *session);
void atn_model_grid_view_set_colormap(AtnModelGridView *self, atn_colormap cm);
void atn_model_grid_view_set_font_scale(AtnModelGridView *self, double scale);
AtnModelGrid *atn_model_grid_view_get_grid(AtnModelGridView *self);

G_END_DECLS

/* AtnHeadView: one head — its heatmap with layer and head selectors (also on the keyboard:
 * Left/Right change the head, Up/Down and Page Up/Page Down the layer) and the token lines
 * beside it.  Clicking a row selects that query token. */
#pragma once

#include <gtk/gtk.h>

#include "atn-heatmap.h"
#include "atn-session.h"

G_BEGIN_DECLS

#define ATN_TYPE_HEAD_VIEW (atn_head_view_get_type())
G_DECLARE_FINAL_TYPE(AtnHeadView, atn_head_view, ATN, HEAD_VIEW, GtkWidget)

GtkWidget *atn_head_view_new(void);
void atn_head_view_set_session(AtnHeadView *self, AtnSession *session);
void atn_head_view_set_colormap(AtnHeadView *self, atn_colormap cm);
void atn_head_view_set_font_scale(AtnHeadView *self, double scale);
/* The "One query" toggle: the selected query's row as bars over the keys. */
AtnHeatmap *atn_head_view_get_heatmap(AtnHeadView *self);
GtkWidget *atn_head_view_get_token_lines(AtnHeadView *self);
/* The Raw / Norm / Rollout / Flow switch (atn-head-methods.h), owned by the view. */
struct _AtnHeadMethods *atn_head_view_get_methods(AtnHeadView *self);

G_END_DECLS

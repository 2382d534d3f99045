/* AtnFigure: a figure a view can hand to the exporter — a ui/render draw function with its
 * own copy of what it draws, and its natural size — and AtnFigureSource, the interface of
 * views that have one (the window asks the visible view). */
#pragma once

#include <gtk/gtk.h>

#include "render.h"

G_BEGIN_DECLS

typedef struct AtnFigure {
    double width, height;     /* natural size in points (PNG pixels at scale 1) */
    atn_draw_fn draw;
    gpointer data;
    GDestroyNotify destroy;   /* frees data */
    char *basename;           /* suggested file name without extension, e.g. "head-L3-H7" */
} AtnFigure;

/* Takes ownership of data (freed with destroy). */
AtnFigure *atn_figure_new(double width, double height, atn_draw_fn draw, gpointer data, GDestroyNotify destroy,
                          const char *basename);
void atn_figure_free(AtnFigure *fig);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AtnFigure, atn_figure_free)

/* Draws the figure into a new PNG texture at scale (for the clipboard and tests). */
GdkTexture *atn_figure_to_texture(AtnFigure *fig, double scale, GError **error);
/* Writes PNG/SVG/PDF (chosen by the extension) through a temporary file and a rename. */
gboolean atn_figure_save(AtnFigure *fig, const char *path, double scale, GError **error);

#define ATN_TYPE_FIGURE_SOURCE (atn_figure_source_get_type())
G_DECLARE_INTERFACE(AtnFigureSource, atn_figure_source, ATN, FIGURE_SOURCE, GtkWidget)

struct _AtnFigureSourceInterface {
    GTypeInterface parent_iface;
    /* The figure the view shows now, or NULL when it shows nothing (no result yet). */
    AtnFigure *(*dup_figure)(AtnFigureSource *self);
};

AtnFigure *atn_figure_source_dup_figure(AtnFigureSource *self);

/* The render style matching a widget's colours (dark theme, font scale). */
void atn_render_style_for_widget(GtkWidget *widget, double font_scale, atn_render_style *style);

G_END_DECLS

/* AtnView: what a page of the window's view stack gives the window, so that the window
 * iterates over its views instead of naming each one.  A view is a GtkWidget that implements
 * this interface (and AtnFigureSource when Export saves its figure); adding one means its own
 * files and one GtkStackPage in atn-window.ui (the page's name and title are the view's name
 * in win.view and its label in the switcher).
 *
 * The window, for every page whose child is an AtnView: gives it the session at start-up,
 * the colour map and font scale whenever they change, connects its "head-activated" signal
 * (if the view has one: (int layer, int head), the window shows the Head view on that head),
 * and asks the visible one what Export saves. */
#pragma once

#include <gtk/gtk.h>

#include "atn-figure.h"
#include "atn-session.h"
#include "render.h"

G_BEGIN_DECLS

#define ATN_TYPE_VIEW (atn_view_get_type())
G_DECLARE_INTERFACE(AtnView, atn_view, ATN, VIEW, GtkWidget)

/* What the window's Export saves for a view. */
typedef enum {
    ATN_VIEW_EXPORT_NONE,     /* nothing */
    ATN_VIEW_EXPORT_FIGURE,   /* its figure as PNG/SVG/PDF (it implements AtnFigureSource) */
    ATN_VIEW_EXPORT_TEXT,     /* a text file (dup_export_text), e.g. a CSV table */
} AtnViewExport;

struct _AtnViewInterface {
    GTypeInterface parent_iface;
    /* Required: the session the view observes (a ref is the view's; NULL detaches). */
    void (*set_session)(AtnView *self, AtnSession *session);
    /* Optional (NULL: the view has no colour map / draws at the theme's size). */
    void (*set_colormap)(AtnView *self, atn_colormap cm);
    void (*set_font_scale)(AtnView *self, double scale);
    /* What Export saves; NULL means ATN_VIEW_EXPORT_FIGURE when the view implements
     * AtnFigureSource, else ATN_VIEW_EXPORT_NONE. */
    AtnViewExport (*get_export)(AtnView *self);
    /* ATN_VIEW_EXPORT_TEXT views: the text (newly allocated, g_free) or NULL with error set;
     * the save dialog's title and suggested file name (static, translated). */
    char *(*dup_export_text)(AtnView *self, GError **error);
    const char *export_title;
    const char *export_file_name;
};

/* In a view's .c file: registers its type when the program starts, so that atn-window.ui can
 * name it with no g_type_ensure in the window (GtkBuilder looks registered types up by
 * name).  type_name is the view's prefix, e.g. atn_head_view. */
#define ATN_VIEW_REGISTER(type_name) \
    __attribute__((constructor)) static void type_name##_register(void) { g_type_ensure(type_name##_get_type()); }

void atn_view_set_session(AtnView *self, AtnSession *session);
/* Do nothing for views without a colour map / font scale. */
void atn_view_set_colormap(AtnView *self, atn_colormap cm);
void atn_view_set_font_scale(AtnView *self, double scale);
AtnViewExport atn_view_get_export(AtnView *self);
/* The figure the view shows now (a new AtnFigure), or NULL when it has none (not a figure
 * view, or nothing shown yet). */
AtnFigure *atn_view_dup_figure(AtnView *self);
/* For ATN_VIEW_EXPORT_TEXT views (NULL with G_IO_ERROR_NOT_SUPPORTED for the others). */
char *atn_view_dup_export_text(AtnView *self, GError **error);
const char *atn_view_get_export_title(AtnView *self);
const char *atn_view_get_export_file_name(AtnView *self);

G_END_DECLS

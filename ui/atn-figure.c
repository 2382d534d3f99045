/* AtnFigure and AtnFigureSource: figures for export, drawn by ui/render. */
#include "atn-figure.h"

#include <gio/gio.h>
#include <stdlib.h>

G_DEFINE_INTERFACE(AtnFigureSource, atn_figure_source, GTK_TYPE_WIDGET)

static void atn_figure_source_default_init(AtnFigureSourceInterface *iface) {}

AtnFigure *atn_figure_source_dup_figure(AtnFigureSource *self) {
    g_return_val_if_fail(ATN_IS_FIGURE_SOURCE(self), NULL);
    AtnFigureSourceInterface *iface = ATN_FIGURE_SOURCE_GET_IFACE(self);
    return iface->dup_figure ? iface->dup_figure(self) : NULL;
}

AtnFigure *atn_figure_new(double width, double height, atn_draw_fn draw, gpointer data, GDestroyNotify destroy,
                          const char *basename) {
    g_return_val_if_fail(draw != NULL, NULL);
    AtnFigure *fig = g_new0(AtnFigure, 1);
    fig->width = width;
    fig->height = height;
    fig->draw = draw;
    fig->data = data;
    fig->destroy = destroy;
    fig->basename = g_strdup(basename ? basename : "figure");
    return fig;
}

void atn_figure_free(AtnFigure *fig) {
    if (!fig)
        return;
    if (fig->destroy)
        fig->destroy(fig->data);
    g_free(fig->basename);
    g_free(fig);
}

GdkTexture *atn_figure_to_texture(AtnFigure *fig, double scale, GError **error) {
    g_return_val_if_fail(fig != NULL && fig->draw != NULL, NULL);
    g_return_val_if_fail(scale > 0, NULL);
    unsigned char *data = NULL;
    size_t len = 0;
    atn_error err = {0};
    if (atn_render_to_memory(ATN_OUTPUT_PNG, fig->width, fig->height, scale, fig->draw, fig->data, &data, &len,
                             &err) != ATN_OK) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, err.message);
        return NULL;
    }
    g_autoptr(GBytes) bytes = g_bytes_new_with_free_func(data, len, free, data);
    return gdk_texture_new_from_bytes(bytes, error);
}

gboolean atn_figure_save(AtnFigure *fig, const char *path, double scale, GError **error) {
    g_return_val_if_fail(fig != NULL && fig->draw != NULL, FALSE);
    g_return_val_if_fail(path != NULL, FALSE);
    g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
    atn_output_format fmt;
    if (!atn_output_format_from_path(path, &fmt)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_FILENAME,
                    "%s: the file name must end in .png, .svg or .pdf", path);
        return FALSE;
    }
    atn_error err = {0};
    if (atn_render_to_file(path, fmt, fig->width, fig->height, scale, fig->draw, fig->data, &err) != ATN_OK) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, err.message);
        return FALSE;
    }
    return TRUE;
}

void atn_render_style_for_widget(GtkWidget *widget, double font_scale, atn_render_style *style) {
    g_return_if_fail(GTK_IS_WIDGET(widget));
    g_return_if_fail(style != NULL);
    GdkRGBA fg;
    gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
    /* light text means a dark theme */
    gboolean dark = 0.299 * fg.red + 0.587 * fg.green + 0.114 * fg.blue > 0.5;
    atn_render_style_init(style, dark);
    style->fg[0] = fg.red;
    style->fg[1] = fg.green;
    style->fg[2] = fg.blue;
    style->transparent = TRUE;
    style->font_scale = font_scale;
}

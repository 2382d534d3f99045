/* AtnView: the interface of the window's views (see atn-view.h). */
#include "atn-view.h"

#include <glib/gi18n.h>

G_DEFINE_INTERFACE(AtnView, atn_view, GTK_TYPE_WIDGET)

static void atn_view_default_init(AtnViewInterface *iface) {}

void atn_view_set_session(AtnView *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_VIEW(self));
    g_return_if_fail(session == NULL || ATN_IS_SESSION(session));
    AtnViewInterface *iface = ATN_VIEW_GET_IFACE(self);
    g_return_if_fail(iface->set_session != NULL);
    iface->set_session(self, session);
}

void atn_view_set_colormap(AtnView *self, atn_colormap cm) {
    g_return_if_fail(ATN_IS_VIEW(self));
    AtnViewInterface *iface = ATN_VIEW_GET_IFACE(self);
    if (iface->set_colormap)
        iface->set_colormap(self, cm);
}

void atn_view_set_font_scale(AtnView *self, double scale) {
    g_return_if_fail(ATN_IS_VIEW(self));
    g_return_if_fail(scale > 0);
    AtnViewInterface *iface = ATN_VIEW_GET_IFACE(self);
    if (iface->set_font_scale)
        iface->set_font_scale(self, scale);
}

AtnViewExport atn_view_get_export(AtnView *self) {
    g_return_val_if_fail(ATN_IS_VIEW(self), ATN_VIEW_EXPORT_NONE);
    AtnViewInterface *iface = ATN_VIEW_GET_IFACE(self);
    if (iface->get_export)
        return iface->get_export(self);
    return ATN_IS_FIGURE_SOURCE(self) ? ATN_VIEW_EXPORT_FIGURE : ATN_VIEW_EXPORT_NONE;
}

AtnFigure *atn_view_dup_figure(AtnView *self) {
    g_return_val_if_fail(ATN_IS_VIEW(self), NULL);
    return ATN_IS_FIGURE_SOURCE(self) ? atn_figure_source_dup_figure(ATN_FIGURE_SOURCE(self)) : NULL;
}

char *atn_view_dup_export_text(AtnView *self, GError **error) {
    g_return_val_if_fail(ATN_IS_VIEW(self), NULL);
    g_return_val_if_fail(error == NULL || *error == NULL, NULL);
    AtnViewInterface *iface = ATN_VIEW_GET_IFACE(self);
    if (atn_view_get_export(self) != ATN_VIEW_EXPORT_TEXT || !iface->dup_export_text) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _("This view has nothing to export yet."));
        return NULL;
    }
    return iface->dup_export_text(self, error);
}

const char *atn_view_get_export_title(AtnView *self) {
    g_return_val_if_fail(ATN_IS_VIEW(self), NULL);
    const char *t = ATN_VIEW_GET_IFACE(self)->export_title;
    return t ? _(t) : _("Export");
}

const char *atn_view_get_export_file_name(AtnView *self) {
    g_return_val_if_fail(ATN_IS_VIEW(self), NULL);
    const char *f = ATN_VIEW_GET_IFACE(self)->export_file_name;
    return f ? f : "export.txt";
}

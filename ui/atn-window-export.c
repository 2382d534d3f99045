/* AtnWindow's export: the visible view's figure or table (Export, Copy Figure), every head's
 * heatmap in a worker with the progress bar and Cancel, and the trace as Markdown. */
#include "atn-window-private.h"
#include "atn-window-test.h"

#include <glib/gi18n.h>

#include "atn-encdec.h"
#include "atn-export.h"
#include "atn-figure.h"
#include "atn-head-view.h"
#include "atn-trace-view.h"

static AtnFigure *current_figure(AtnWindow *self) {
    GtkWidget *page = gtk_stack_get_visible_child(self->stack);
    return page && ATN_IS_VIEW(page) && atn_view_get_export(ATN_VIEW(page)) == ATN_VIEW_EXPORT_FIGURE
               ? atn_view_dup_figure(ATN_VIEW(page)) : NULL;
}

gboolean atn_window_export_to(AtnWindow *self, const char *path, double scale, GError **error) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), FALSE);
    g_autoptr(AtnFigure) fig = current_figure(self);
    if (!fig) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("This view has nothing to export yet."));
        return FALSE;
    }
    return atn_figure_save(fig, path, scale, error);
}

/* A file written from a save dialog (a figure, the trace as Markdown, the statistics as CSV). */
static void export_done(GObject *source, GAsyncResult *res, gpointer data) {
    AtnWindow *self = ATN_WINDOW(source);
    g_autoptr(GError) error = NULL;
    g_autofree char *path = atn_export_finish(res, &error);
    if (error && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        _atn_window_show_error(self, error->message);
    else if (path) {
        g_autofree char *msg = g_strdup_printf(_("Saved %s"), path);
        _atn_window_say(self, msg);
    }
}

static void export_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    GtkWidget *page = gtk_stack_get_visible_child(self->stack);
    AtnView *view = page && ATN_IS_VIEW(page) ? ATN_VIEW(page) : NULL;
    if (view && atn_view_get_export(view) == ATN_VIEW_EXPORT_TEXT) {   /* a table: CSV */
        g_autoptr(GError) error = NULL;
        char *text = atn_view_dup_export_text(view, &error);
        if (text)
            atn_export_text_async(GTK_WINDOW(self), text, atn_view_get_export_title(view),
                                  atn_view_get_export_file_name(view), export_done, NULL);
        else
            _atn_window_show_error(self, error->message);
        return;
    }
    AtnFigure *fig = current_figure(self);
    if (!fig) {
        _atn_window_show_error(self, _("This view has nothing to export yet."));
        return;
    }
    atn_export_figure_async(GTK_WINDOW(self), fig, export_done, NULL);
}

/* ---- every head ---- */

static void on_export_progress(int done, int total, gpointer user_data) {
    AtnWindow *self = user_data;
    if (!self->export_cancel)
        return;
    g_autofree char *text = g_strdup_printf(_("Exporting every head: %d of %d"), done, total);
    _atn_window_show_progress(self, text, NULL, total > 0 ? (double)done / total : 0);
}

static void export_all_done(GObject *source, GAsyncResult *res, gpointer data) {
    AtnWindow *self = ATN_WINDOW(source);
    g_autoptr(GError) error = NULL;
    g_autofree char *folder = NULL;
    int written = 0;
    int n = atn_export_all_heads_finish(res, &folder, &written, &error);
    if (gtk_widget_in_destruction(GTK_WIDGET(self)))
        return;   /* the window closed while the files were written */
    g_clear_object(&self->export_cancel);
    gtk_revealer_set_reveal_child(self->progress_revealer, FALSE);
    _atn_window_sync_progress(self);   /* an open may still be going on */
    if (n >= 0) {
        g_autofree char *msg = g_strdup_printf(ngettext("Wrote %d figure to %s", "Wrote %d figures to %s", n), n,
                                               folder);
        _atn_window_show_notice(self, msg);
    } else if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        AtnResult *r = atn_session_get_result(self->session);
        int L = 0, H = 0;
        if (r)   /* an encoder-decoder: the stack exported */
            atn_encdec_dims(r, atn_session_get_stack(self->session), &L, &H, NULL);
        int total = r ? L * H : written;
        g_autofree char *msg = g_strdup_printf(_("Export cancelled after %d of %d figures; those files are kept."),
                                               written, total);
        if (folder)   /* not just the dialog closed */
            _atn_window_show_notice(self, msg);
    } else {
        _atn_window_show_error(self, error->message);
    }
}

static void start_export_all(AtnWindow *self, const char *folder, const char *format, double scale) {
    AtnResult *r = atn_session_get_result(self->session);
    if (!r) {
        _atn_window_show_error(self, _("This view has nothing to export yet."));
        return;
    }
    if (self->export_cancel) {
        _atn_window_show_error(self, _("An export of every head is already running."));
        return;
    }

    /* the figures look like the Head view's heatmap */
    AtnView *head = _atn_window_get_view(self, "head");
    g_return_if_fail(head && ATN_IS_HEAD_VIEW(head));
    AtnHeatmapLook *look = atn_heatmap_dup_look(atn_head_view_get_heatmap(ATN_HEAD_VIEW(head)));
    /* an encoder-decoder's decoder or cross stack (the Head view shows it, so the look has its
       shape): files decoder-L…-H… / cross-L…-H…, as `export heatmap --all-heads --stack` names them */
    const atn_stack *st = atn_result_get_stack(r, atn_session_get_stack(self->session));
    const char *prefix = st && st->kind != ATN_STACK_ENCODER ? st->name : "heatmap";
    /* one scale for every file, 0..1, as `attnscope export --all-heads` draws them: the files
       compare (the view's own scale, a head's maximum, differs from head to head) */
    atn_heatmap_look_set_range(look, 0, 1, _("fixed 0–1"));
    self->export_cancel = g_cancellable_new();
    if (folder)
        atn_export_all_heads_to_async(GTK_WINDOW(self), r, look, prefix, folder, format, scale, self->export_cancel,
                                      on_export_progress, export_all_done, self);
    else
        atn_export_all_heads_async(GTK_WINDOW(self), r, look, prefix, self->export_cancel, on_export_progress,
                                   export_all_done, self);
}

static void export_all_action(GtkWidget *widget, const char *name, GVariant *param) {
    start_export_all(ATN_WINDOW(widget), NULL, NULL, 0);
}

void atn_window_export_all_heads_to(AtnWindow *self, const char *folder, const char *format, double scale) {
    g_return_if_fail(ATN_IS_WINDOW(self));
    start_export_all(self, folder, format, scale);
}

gboolean atn_window_get_exporting(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), FALSE);
    return self->export_cancel != NULL;
}

void atn_window_cancel_export(AtnWindow *self) {
    g_return_if_fail(ATN_IS_WINDOW(self));
    if (self->export_cancel)
        g_cancellable_cancel(self->export_cancel);
}

static void copy_figure_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    g_autoptr(AtnFigure) fig = current_figure(self);
    if (!fig) {
        _atn_window_show_error(self, _("This view has nothing to copy yet."));
        return;
    }
    g_autoptr(GError) error = NULL;
    g_autoptr(GdkTexture) tex = atn_figure_to_texture(fig, 2.0, &error);
    if (!tex) {
        _atn_window_show_error(self, error->message);
        return;
    }
    gdk_clipboard_set_texture(gtk_widget_get_clipboard(widget), tex);
    _atn_window_say(self, _("Figure copied to the clipboard"));
}


static char *trace_markdown(AtnWindow *self) {
    g_autoptr(GError) error = NULL;
    AtnView *trace = _atn_window_get_view(self, "trace");
    g_return_val_if_fail(trace && ATN_IS_TRACE_VIEW(trace), NULL);
    char *md = atn_trace_view_dup_markdown(ATN_TRACE_VIEW(trace), &error);
    if (!md)
        _atn_window_show_error(self, error->message);
    return md;
}

static void export_trace_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    char *md = trace_markdown(self);
    if (md)
        atn_export_text_async(GTK_WINDOW(self), md, _("Export Trace"), "trace.md", export_done, NULL);
}

static void copy_trace_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    g_autofree char *md = trace_markdown(self);
    if (md) {
        gdk_clipboard_set_text(gtk_widget_get_clipboard(widget), md);
        _atn_window_say(self, _("Trace copied to the clipboard as Markdown"));
    }
}

void _atn_window_class_export_init(GtkWidgetClass *wc) {
    gtk_widget_class_install_action(wc, "win.export", NULL, export_action);
    gtk_widget_class_install_action(wc, "win.export-all-heads", NULL, export_all_action);
    gtk_widget_class_install_action(wc, "win.copy-figure", NULL, copy_figure_action);
    gtk_widget_class_install_action(wc, "win.export-trace", NULL, export_trace_action);
    gtk_widget_class_install_action(wc, "win.copy-trace", NULL, copy_trace_action);
}

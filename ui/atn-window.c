/* AtnWindow: the main window — its banners, the progress bar, the model chooser, the device
 * switch, the sentence entries, the status line, presentation mode and the views.  Its
 * actions are in atn-window-actions.c, its export in atn-window-export.c, its struct in
 * atn-window-private.h.  Over 1,000 lines on purpose: what is left is the window's own
 * widgets, each section short, all tied to the window's state. */
#include "atn-window-private.h"
#include "atn-window-test.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "atn-application.h"
#include "atn-encdec.h"
#include "atn-whatif.h"
#include "config.h"
#include "hf-cache.h"
#include "render.h"

enum { PRESENTATION_HIDE_MS = 2500, PRESENTATION_HINT_MS = 7000 };
/* the pointer this close to the top of the screen (px, times the text size) shows the
   header bar with the view switcher in presentation mode */
#define PRESENTATION_TOP_PX 12.0

G_DEFINE_FINAL_TYPE(AtnWindow, atn_window, GTK_TYPE_APPLICATION_WINDOW)

/* ---- banners ---------------------------------------------------------------------------- */

void _atn_window_show_error(AtnWindow *self, const char *message) {
    gtk_label_set_text(self->error_label, message);
    gtk_info_bar_set_revealed(self->error_bar, TRUE);
}

void _atn_window_show_notice(AtnWindow *self, const char *message) {
    gtk_label_set_text(self->notice_label, message);
    gtk_info_bar_set_revealed(self->notice_bar, TRUE);
}

static void on_bar_response(GtkInfoBar *bar, int response, AtnWindow *self) { gtk_info_bar_set_revealed(bar, FALSE); }

const char *atn_window_get_error(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return gtk_info_bar_get_revealed(self->error_bar) ? gtk_label_get_text(self->error_label) : NULL;
}

const char *atn_window_get_notice(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return gtk_info_bar_get_revealed(self->notice_bar) ? gtk_label_get_text(self->notice_label) : NULL;
}

static void on_session_error(AtnSession *s, const char *message, AtnWindow *self) { _atn_window_show_error(self, message); }
static void on_session_notice(AtnSession *s, const char *message, AtnWindow *self) {
    _atn_window_show_notice(self, message);
    self->notice_is_run = FALSE;
}

/* ---- the what-if badge ------------------------------------------------------------------ */

/* Every view shows the session's model as the what-if lab changed it: a line above the views
 * says so and how, with a button back to the original; the What-if page itself says it at
 * length and has its own Reset, so the line leaves it the room. */
static void on_whatif_changed(AtnSession *s, AtnWindow *self) {
    AtnWhatif *w = atn_session_get_whatif(self->session);
    if (w) {
        g_autofree char *what = atn_whatif_describe(w);
        /* Translators: above every view while the what-if lab has changed the model */
        g_autofree char *line = g_strdup_printf(_("What-if: %s — every view shows the changed model"), what);
        gtk_label_set_text(self->whatif_label, line);
    }
    gtk_revealer_set_reveal_child(self->whatif_revealer,
                                  w != NULL && g_strcmp0(gtk_stack_get_visible_child_name(self->stack), "whatif"));
}

static void on_view_for_badge(GtkStack *stack, GParamSpec *p, AtnWindow *self) { on_whatif_changed(NULL, self); }

static void on_whatif_restore(GtkButton *b, AtnWindow *self) { atn_session_set_whatif(self->session, NULL); }

const char *atn_window_get_whatif_badge(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return gtk_revealer_get_reveal_child(self->whatif_revealer) ? gtk_label_get_text(self->whatif_label) : NULL;
}

GtkWidget *atn_window_get_whatif_restore_button(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return GTK_WIDGET(self->whatif_restore_button);
}

/* ---- model chooser ---------------------------------------------------------------------- */

static void rebuild_model_menu(AtnWindow *self);

GMenuModel *atn_window_get_model_menu(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return G_MENU_MODEL(self->model_menu);
}

void atn_window_refresh_models(AtnWindow *self) {
    g_return_if_fail(ATN_IS_WINDOW(self));
    rebuild_model_menu(self);
}

/* Each time the chooser opens: the cache may have changed meanwhile (a download by
 * `attnscope download` or Python's transformers in another program), so the list is made
 * afresh from it; the menu model stays the same object. */
static void model_menu_about_to_open(GtkMenuButton *button, gpointer user_data) {
    rebuild_model_menu(ATN_WINDOW(user_data));
}

/* The last n components of path ("" when it has fewer), without a trailing slash. */
static char *path_tail(const char *path, int n, gboolean *whole) {
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    size_t i = len;
    int got = 0;
    while (i > 0 && got < n) {
        i--;
        if (path[i] == '/' && i + 1 < len)
            got++;
    }
    *whole = got < n || i == 0;
    return g_strndup(path + (*whole ? 0 : i + 1), len - (*whole ? 0 : i + 1));
}

char *atn_window_recent_label(const char *const *all, const char *path) {
    g_return_val_if_fail(all != NULL && path != NULL, NULL);
    for (int n = 1;; n++) {
        gboolean whole;
        g_autofree char *mine = path_tail(path, n, &whole);
        gboolean unique = TRUE;
        for (const char *const *o = all; *o && unique; o++) {
            if (!strcmp(*o, path))
                continue;
            gboolean other_whole;
            g_autofree char *theirs = path_tail(*o, n, &other_whole);
            unique = strcmp(mine + (mine[0] == '/'), theirs + (theirs[0] == '/')) != 0;   /* same components */
        }
        if (unique || whole) {
            const char *home = g_get_home_dir();
            size_t hl = home ? strlen(home) : 0;
            if (whole && hl > 1 && !strncmp(mine, home, hl) && mine[hl] == '/')
                return g_strconcat("~", mine + hl, NULL);
            return whole || n == 1 ? g_steal_pointer(&mine) : g_strconcat("…/", mine, NULL);
        }
    }
}

/* The entries hold what the model can read and a margin: a sentence of P positions needs at
 * most a few characters a token, and Pango shaping a 60k-mark line froze drawing for seconds
 * (GtkEntry's buffer stops at 65535 characters anyway). */
static int entry_cap(int max_positions) {
    long cap = (long)max_positions * 16;
    return cap < 1000 ? 1000 : cap > 65535 ? 65535 : (int)cap;
}

static void cap_entries(AtnWindow *self, int max_positions) {
    int cap = entry_cap(max_positions);
    self->entry_cap_positions = max_positions;
    gtk_entry_set_max_length(self->text_entry, cap);
    gtk_entry_set_max_length(self->pair_entry, cap);
}

static void rebuild_model_menu(AtnWindow *self) {
    g_menu_remove_all(self->model_menu);
    g_autoptr(GMenu) builtins = g_menu_new();
    for (const char *const *n = atn_builtin_model_names(); n && *n; n++) {
        g_autoptr(GMenuItem) item = g_menu_item_new(*n, NULL);
        g_menu_item_set_action_and_target_value(item, "win.open-model", g_variant_new_string(*n));
        g_menu_append_item(builtins, item);
    }
    g_menu_append_section(self->model_menu, _("Built-in Models"), G_MENU_MODEL(builtins));
    /* the Hugging Face cache: each model's revision with config.json and weights; main (or
     * the only one) by its id, the others as id@commit */
    atn_hf_cache_list *cached = NULL;
    if (atn_hf_cache_list_models(NULL, &cached, NULL) == ATN_OK && cached) {
        g_autoptr(GMenu) down = g_menu_new();
        for (int32_t i = 0; i < cached->n; i++) {
            const atn_hf_cached_model *cm = &cached->models[i];
            for (int32_t j = 0; j < cm->n_revisions; j++) {
                const atn_hf_revision *r = &cm->revisions[j];
                if (!r->has_config || !r->has_weights)
                    continue;
                gboolean main_rev = !strcmp(r->refs, "main") || g_str_has_prefix(r->refs, "main,") ||
                                    strstr(r->refs, ",main") != NULL;
                g_autofree char *spec = main_rev ? g_strdup(cm->id) : g_strdup_printf("%s@%s", cm->id, r->commit);
                g_autofree char *label = main_rev ? g_strdup(cm->id)
                                         : g_strdup_printf("%s @ %.*s", cm->id, 8, *r->refs ? r->refs : r->commit);
                g_autoptr(GMenuItem) item = g_menu_item_new(label, NULL);
                g_menu_item_set_action_and_target_value(item, "win.open-model", g_variant_new_string(spec));
                g_menu_append_item(down, item);
            }
        }
        if (g_menu_model_get_n_items(G_MENU_MODEL(down)) > 0)
            g_menu_append_section(self->model_menu, _("Downloaded Models"), G_MENU_MODEL(down));
    }
    atn_hf_cache_list_free(cached);
    g_autoptr(GMenu) open = g_menu_new();
    g_menu_append(open, _("_Get a Model…"), "win.get-model");
    g_menu_append(open, _("Open Model _Folder…"), "win.open-folder");
    g_menu_append(open, _("Open _Toy Model File…"), "win.open-file");
    g_menu_append(open, _("Open _Attention…"), "win.open-attention");
    g_menu_append(open, _("Open _Statistics…"), "win.open-stats");
    g_menu_append_section(self->model_menu, NULL, G_MENU_MODEL(open));
    g_autoptr(GMenu) sessions = g_menu_new();
    g_menu_append(sessions, _("Open S_ession…"), "win.open-session");
    g_menu_append(sessions, _("Save Sessi_on…"), "win.save-session");
    g_menu_append_section(self->model_menu, NULL, G_MENU_MODEL(sessions));
    const char *const *recent = atn_prefs_get_recent_models(self->prefs);
    if (recent && recent[0]) {
        g_autoptr(GMenu) rec = g_menu_new();
        for (const char *const *all = recent; *recent; recent++) {
            /* a path by enough of its end to tell it from the others; a Hugging Face id
               ("org/name") as it is */
            g_autofree char *base = g_file_test(*recent, G_FILE_TEST_EXISTS) || **recent == '/'
                                        ? atn_window_recent_label(all, *recent) : g_strdup(*recent);
            g_autoptr(GMenuItem) item = g_menu_item_new(base, NULL);
            g_menu_item_set_action_and_target_value(item, "win.open-model", g_variant_new_string(*recent));
            g_menu_append_item(rec, item);
        }
        g_menu_append_section(self->model_menu, _("Recent"), G_MENU_MODEL(rec));
    }
}

enum { MODEL_LABEL_CHARS = 28 };   /* the longest model name shown whole */

/* The header bar's layout (issue 40): the model's name is never shortened while it has at
 * most MODEL_LABEL_CHARS characters (hfl/chinese-roberta-wwm-ext has 27): the label's least
 * width is the whole name, so the header bar takes the room for it from the view switcher in
 * the middle, which then shows its compact row (below about 1,400 px with a long name) or its
 * menu (AtnViewSwitcher picks the form that fits).  A longer name is cut in the middle at
 * that many characters, so it never widens the header bar past the screen; the whole name is
 * the tooltip. */
static void update_model_button(AtnWindow *self) {
    const char *opening = atn_session_get_opening(self->session);
    AtnModelHandle *m = atn_session_get_model(self->session);
    g_autofree char *label = NULL;
    if (opening && !m) {
        g_autofree char *base = g_path_get_basename(opening);
        label = g_strdup_printf(_("Opening %s…"), base);
    }
    else if (m)
        label = g_strdup(atn_model_handle_get_name(m));
    else
        label = g_strdup(_("No Model"));
    glong chars = g_utf8_strlen(label, -1);
    gtk_label_set_ellipsize(self->model_label, chars > MODEL_LABEL_CHARS ? PANGO_ELLIPSIZE_MIDDLE : PANGO_ELLIPSIZE_NONE);
    gtk_label_set_width_chars(self->model_label, (int)MIN(chars, MODEL_LABEL_CHARS));
    gtk_label_set_text(self->model_label, label);
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->model_button), label);
}

/* A toy model reads its own tokens: the entries say so instead of showing the sentence of
 * the model before, greyed out; the sentence (kept by the session) comes back with the next
 * model that reads text.  Neither the session nor the saved sentence changes. */
static void show_toy_text(AtnWindow *self, gboolean toy, const char *placeholder) {
    if (toy == self->toy_text_shown) {
        if (toy)
            gtk_entry_set_placeholder_text(self->text_entry, placeholder);
        return;
    }
    self->toy_text_shown = toy;
    self->syncing_text = TRUE;
    if (toy) {
        gtk_editable_set_text(GTK_EDITABLE(self->text_entry), "");
        gtk_editable_set_text(GTK_EDITABLE(self->pair_entry), "");
        gtk_toggle_button_set_active(self->pair_toggle, FALSE);
        gtk_entry_set_placeholder_text(self->text_entry, placeholder);
    } else {
        const char *text = atn_session_get_text(self->session), *pair = atn_session_get_text_pair(self->session);
        g_autofree char *example = pair && *pair ? g_strconcat(text ? text : "", " ||| ", pair, NULL)
                                                 : g_strdup(text ? text : "");
        _atn_window_set_example(self, example);
        gtk_entry_set_placeholder_text(self->text_entry, _("Type a sentence…"));
    }
    self->syncing_text = FALSE;
}

static void on_model(AtnSession *s, GParamSpec *p, AtnWindow *self) {
    AtnModelHandle *m = atn_session_get_model(self->session);
    update_model_button(self);
    if (!m)
        return;
    /* a toy model and an attention file (no weights: nothing to run) bring their own tokens */
    gboolean file = !atn_model_handle_has_weights(m);
    gboolean toy = atn_model_handle_is_toy(m) || file;
    GtkWidget *focus = gtk_window_get_focus(GTK_WINDOW(self));
    if (toy && focus && (focus == GTK_WIDGET(self->text_entry) ||
                         gtk_widget_is_ancestor(focus, GTK_WIDGET(self->text_entry)) ||
                         focus == GTK_WIDGET(self->pair_entry) ||
                         gtk_widget_is_ancestor(focus, GTK_WIDGET(self->pair_entry))))
        /* GTK warns when a focused entry is disabled (the pair's too: a window that starts
           with a remembered pair and then opens a toy model) */
        if (!gtk_widget_child_focus(GTK_WIDGET(self->stack), GTK_DIR_TAB_FORWARD))   /* into the view */
            gtk_window_set_focus(GTK_WINDOW(self), NULL);
    gtk_widget_set_visible(GTK_WIDGET(self->toy_label), toy && !file);
    if (!toy)
        cap_entries(self, atn_model_config(atn_model_handle_get_model(m))->max_positions);
    show_toy_text(self, toy, file ? _("An attention file brings its own tokens") : _("A toy model reads its own tokens"));
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.save-toy", toy && !file);
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.precision-diff", !file);   /* reruns the model */
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.revert-toy",
                                  toy && !file && atn_model_handle_get_edited(m));
    gtk_widget_set_sensitive(GTK_WIDGET(self->text_entry), !toy);
    gtk_widget_set_sensitive(GTK_WIDGET(self->pair_toggle), !toy);
    gtk_widget_set_sensitive(GTK_WIDGET(self->pair_entry), !toy);
    gtk_widget_set_sensitive(GTK_WIDGET(self->examples_button), !toy);
    gtk_info_bar_set_revealed(self->error_bar, FALSE);
    const char *source = atn_model_handle_get_source(m);
    if (atn_model_handle_get_fallback(m) || file)
        return;   /* not the user's choice, or not a model: remember the one they asked for */
    atn_prefs_set_last_model(self->prefs, source);
    if (strchr(source, '/')) {
        atn_prefs_add_recent_model(self->prefs, source);
        rebuild_model_menu(self);
    }
}

/* ---- progress of long work ------------------------------------------------------------- */

void _atn_window_show_progress(AtnWindow *self, const char *text, const char *tooltip, double fraction) {
    gtk_label_set_text(self->progress_label, text);
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->progress_label), tooltip);
    gtk_progress_bar_set_fraction(self->progress_bar, fraction);
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->progress_cancel_button),
                                self->export_cancel ? _("Stop the export; the files written so far are kept")
                                                    : _("Stop opening this model and keep the current one"));
    gtk_revealer_set_reveal_child(self->progress_revealer, TRUE);
}

static void update_open_progress(AtnWindow *self) {
    const char *opening = atn_session_get_opening(self->session);
    if (!opening || self->export_cancel || !gtk_revealer_get_reveal_child(self->progress_revealer))
        return;
    g_autofree char *base = g_path_get_basename(opening);
    const char *stage = atn_session_get_open_stage(self->session);
    g_autofree char *text = *stage ? g_strdup_printf(_("Opening “%s”: %s"), base, stage)
                                   : g_strdup_printf(_("Opening “%s”…"), base);
    _atn_window_show_progress(self, text, opening, atn_session_get_open_fraction(self->session));
}

static gboolean reveal_open_cb(gpointer user_data) {
    AtnWindow *self = user_data;
    self->open_reveal_id = 0;
    if (atn_session_get_opening(self->session) && !self->export_cancel) {
        gtk_revealer_set_reveal_child(self->progress_revealer, TRUE);
        update_open_progress(self);
    }
    return G_SOURCE_REMOVE;
}

static gboolean is_builtin_model(const char *source) {
    for (const char *const *n = atn_builtin_model_names(); n && *n; n++)
        if (!strcmp(*n, source))
            return TRUE;
    return FALSE;
}

static void on_opening(AtnSession *s, GParamSpec *p, AtnWindow *self) {
    update_model_button(self);
    const char *opening = atn_session_get_opening(self->session);
    if (opening) {
        /* a folder or file: the model's name and the bar at once (a bert-base folder takes
           seconds; the model shown stays usable meanwhile); a built-in model over one shown
           takes milliseconds: no bar unless it is still opening after 300 ms */
        gboolean quick = is_builtin_model(opening) && atn_session_get_model(self->session);
        if (!quick && !self->export_cancel) {
            g_clear_handle_id(&self->open_reveal_id, g_source_remove);
            gtk_revealer_set_reveal_child(self->progress_revealer, TRUE);
        } else if (!self->open_reveal_id && !gtk_revealer_get_reveal_child(self->progress_revealer)) {
            self->open_reveal_id = g_timeout_add(300, reveal_open_cb, self);
        }
        update_open_progress(self);
    } else {
        g_clear_handle_id(&self->open_reveal_id, g_source_remove);
        if (!self->export_cancel)
            gtk_revealer_set_reveal_child(self->progress_revealer, FALSE);
    }
}

void _atn_window_sync_progress(AtnWindow *self) { on_opening(self->session, NULL, self); }

static void on_open_fraction(AtnSession *s, GParamSpec *p, AtnWindow *self) { update_open_progress(self); }

static void on_progress_cancel(GtkButton *b, AtnWindow *self) {
    if (self->export_cancel)
        g_cancellable_cancel(self->export_cancel);
    else
        atn_session_cancel_open(self->session);
}

gboolean atn_window_get_open_progress_shown(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), FALSE);
    return gtk_revealer_get_reveal_child(self->progress_revealer) && !self->export_cancel;
}

const char *atn_window_get_progress_text(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return gtk_label_get_text(self->progress_label);
}

const char *atn_window_get_model_label(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return gtk_label_get_text(self->model_label);
}


/* ---- device -------------------------------------------------------------------------------- */

static void on_gpu_available(AtnSession *s, GParamSpec *p, AtnWindow *self) {
    gboolean ok = atn_session_get_gpu_available(self->session);
    gtk_widget_set_sensitive(GTK_WIDGET(self->gpu_button), ok);
    g_autofree char *tip = ok ? g_strdup(_("Run the model on the GPU (CUDA)"))
                              : g_strdup_printf(_("No usable GPU: %s"), atn_session_get_gpu_reason(self->session));
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->gpu_button), tip);
    if (ok && self->want_gpu)
        gtk_toggle_button_set_active(self->gpu_button, TRUE);
}

/* the session went back to the CPU by itself (a GPU failure) */
static void on_device(AtnSession *s, GParamSpec *p, AtnWindow *self) {
    gboolean gpu = atn_session_get_device(self->session) != ATN_DEVICE_CPU;
    if (gtk_toggle_button_get_active(self->gpu_button) == gpu)
        return;
    self->syncing_device = TRUE;   /* not the user's choice: the saved preference stays */
    gtk_toggle_button_set_active(gpu ? self->gpu_button : self->cpu_button, TRUE);
    self->syncing_device = FALSE;
}

static void on_device_toggled(GtkToggleButton *b, AtnWindow *self) {
    if (!gtk_toggle_button_get_active(b) || self->syncing_device)
        return;
    gboolean gpu = b == self->gpu_button;
    atn_session_set_device(self->session, gpu ? ATN_DEVICE_CUDA : ATN_DEVICE_CPU);
    atn_prefs_set_device(self->prefs, gpu ? "gpu" : "cpu");
    self->want_gpu = gpu;
}

/* ---- text and examples ------------------------------------------------------------------- */

static void on_text_changed(GtkEditable *e, AtnWindow *self) {
    if (self->syncing_text)
        return;
    const char *text = gtk_editable_get_text(GTK_EDITABLE(self->text_entry));
    const char *pair = gtk_toggle_button_get_active(self->pair_toggle)
                           ? gtk_editable_get_text(GTK_EDITABLE(self->pair_entry)) : "";
    /* at the cap, a warning icon on the entry says so for as long as the text is that long */
    int cap = gtk_entry_get_max_length(self->text_entry);
    GtkEntry *entries[2] = {self->text_entry, self->pair_entry};
    for (int i = 0; i < 2; i++) {
        const char *t = gtk_editable_get_text(GTK_EDITABLE(entries[i]));
        gboolean full = cap > 0 && g_utf8_strlen(t, -1) >= cap;
        if (full) {
            g_autofree char *say = g_strdup_printf(_("The sentence stops at %d characters: the model reads at most "
                                                     "%d tokens"), cap, self->entry_cap_positions);
            gtk_entry_set_icon_from_icon_name(entries[i], GTK_ENTRY_ICON_SECONDARY, "dialog-warning-symbolic");
            gtk_entry_set_icon_tooltip_text(entries[i], GTK_ENTRY_ICON_SECONDARY, say);
            if (i == 0) {
                g_free(self->entry_note);
                self->entry_note = g_steal_pointer(&say);
            }
        } else if (gtk_entry_get_icon_name(entries[i], GTK_ENTRY_ICON_SECONDARY)) {
            gtk_entry_set_icon_from_icon_name(entries[i], GTK_ENTRY_ICON_SECONDARY, NULL);
            gtk_entry_set_icon_tooltip_text(entries[i], GTK_ENTRY_ICON_SECONDARY, NULL);
            if (i == 0)
                g_clear_pointer(&self->entry_note, g_free);
        }
    }
    atn_session_set_text(self->session, text, pair);
    g_autofree char *saved = *pair ? g_strconcat(text, " ||| ", pair, NULL) : g_strdup(text);
    atn_prefs_set_example_text(self->prefs, saved);
}

static void on_pair_toggled(GtkToggleButton *b, AtnWindow *self) {
    if (self->syncing_text)
        return;
    on_text_changed(NULL, self);
    if (gtk_toggle_button_get_active(b))
        gtk_widget_grab_focus(GTK_WIDGET(self->pair_entry));
}

/* Sets both entries from "text" or "text ||| pair". */
void _atn_window_set_example(AtnWindow *self, const char *example) {
    g_auto(GStrv) parts = g_strsplit(example, " ||| ", 2);
    gboolean has_pair = parts[0] && parts[1];
    gtk_editable_set_text(GTK_EDITABLE(self->pair_entry), has_pair ? parts[1] : "");
    gtk_toggle_button_set_active(self->pair_toggle, has_pair);
    gtk_editable_set_text(GTK_EDITABLE(self->text_entry), parts[0] ? parts[0] : "");
}

void atn_window_set_text(AtnWindow *self, const char *text) {
    g_return_if_fail(ATN_IS_WINDOW(self));
    _atn_window_set_example(self, text);
}

const char *atn_window_get_entry_note(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return self->entry_note;
}

const char *atn_window_get_text(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return gtk_editable_get_text(GTK_EDITABLE(self->text_entry));
}

/* Makes entry's text `text` as typing would: only the part that differs is deleted and
 * inserted, through the editable's own edits, so Ctrl+Z undoes it (gtk_editable_set_text
 * cannot be undone; GTK 4.8's entry records the two edits apart: a second Ctrl+Z puts back
 * what was deleted); the focus goes to the entry, the cursor after the new part.  A click on
 * a guess left the focus on a button the new result destroys, from where it fell to the
 * Layer spin, whose Ctrl+Z then emptied it (issue 40). */
static void edit_entry_text(GtkEntry *entry, const char *text) {
    GtkEditable *e = GTK_EDITABLE(entry);
    const char *now = gtk_editable_get_text(e);
    size_t a = strlen(now), b = strlen(text), pre = 0, suf = 0;
    while (pre < a && pre < b && now[pre] == text[pre])
        pre++;
    while (pre > 0 && (now[pre] & 0xC0) == 0x80)   /* back to a character's start */
        pre--;
    while (suf < a - pre && suf < b - pre && now[a - 1 - suf] == text[b - 1 - suf])
        suf++;
    while (suf > 0 && (now[a - suf] & 0xC0) == 0x80)
        suf--;
    int start = (int)g_utf8_pointer_to_offset(now, now + pre);
    int old_end = (int)g_utf8_pointer_to_offset(now, now + a - suf);
    g_autofree char *middle = g_strndup(text + pre, b - pre - suf);
    gtk_entry_grab_focus_without_selecting(entry);
    if (old_end > start)
        gtk_editable_delete_text(e, start, old_end);
    int pos = start;
    if (*middle)
        gtk_editable_insert_text(e, middle, -1, &pos);
    gtk_editable_set_position(e, pos);
}

/* A masked-word guess was clicked: it replaces its [MASK] (by the token's byte span) in the
 * sentence, or in the second sentence of a pair; a continuation piece joins the word before. */
static void on_fill(AtnPredictions *p, int position, int rank, AtnWindow *self) {
    AtnResult *r = atn_session_get_result(self->session);
    if (!r || position < 0 || position >= atn_result_get_n_tokens(r) || rank < 0)
        return;
    if (atn_result_is_causal(r)) {
        /* a next-token guess after the last token: the text goes on with it (a continuation
           piece joins the last word, a word gets a space) */
        const AtnMaskGuesses *ng = atn_result_get_next_guesses(r, position);
        if (!ng || rank >= ng->n || position != atn_result_get_last_position(r) || !ng->top[rank].surface)
            return;
        GtkEditable *entry = GTK_EDITABLE(self->text_entry);
        const char *text = gtk_editable_get_text(entry);
        gboolean join = ng->top[rank].continuation || !text[0] || g_str_has_suffix(text, " ");
        g_autofree char *more = g_strconcat(text, join ? "" : " ", ng->top[rank].surface, NULL);
        edit_entry_text(self->text_entry, more);
        return;
    }
    const AtnMaskGuesses *g = NULL;
    for (int i = 0; i < atn_result_get_n_masks(r) && !g; i++) {
        const AtnMaskGuesses *gi = atn_result_get_mask_guesses(r, i);
        g = gi && gi->position == position ? gi : NULL;
    }
    if (!g || rank >= g->n)
        return;
    const atn_token *tok = &atn_result_get_encoding(r)->tokens[position];
    GtkEntry *entry = tok->segment == 1 ? self->pair_entry : self->text_entry;
    char *filled = atn_fill_guess(gtk_editable_get_text(GTK_EDITABLE(entry)), tok, &g->top[rank]);
    if (filled)   /* NULL: the text no longer holds the [MASK] there; leave it alone */
        edit_entry_text(entry, filled);
    free(filled);
}


static gboolean is_cjk(const char *s) {
    for (const char *p = s; *p; p = g_utf8_next_char(p))
        if (g_utf8_get_char(p) >= 0x2E80)
            return TRUE;
    return FALSE;
}

const char *_atn_window_example_model(const char *line, char **model) {
    *model = NULL;
    const char *end = line[0] == '{' ? strstr(line, "} ") : NULL;
    if (!end || end == line + 1)
        return line;
    *model = g_strndup(line + 1, end - line - 1);
    return end + 2;
}

static void load_examples(AtnWindow *self) {
    g_autoptr(GBytes) bytes =
        g_resources_lookup_data("/io/github/attnscope/Attnscope/examples.txt", G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
    g_autoptr(GMenu) menu = g_menu_new();
    g_autoptr(GMenu) en = g_menu_new();
    g_autoptr(GMenu) zh = g_menu_new();
    if (bytes) {
        g_autofree char *text = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
            g_strstrip(*l);
            if (!**l || **l == '#')
                continue;
            int i = (int)self->examples->len;
            g_ptr_array_add(self->examples, g_strdup(*l));
            g_autofree char *model = NULL;
            const char *sentence = _atn_window_example_model(*l, &model);
            g_autofree char *label = model ? g_strdup_printf("%s  (%s)", sentence, model) : g_strdup(sentence);
            char *sep = strstr(label, " ||| ");
            if (sep)
                memcpy(sep, "  +  ", 5);   /* same length: "a ||| b" -> "a  +  b" */
            g_autoptr(GMenuItem) item = g_menu_item_new(label, NULL);
            g_menu_item_set_action_and_target_value(item, "win.example", g_variant_new_int32(i));
            g_menu_append_item(is_cjk(sentence) ? zh : en, item);
        }
    }
    g_menu_append_section(menu, _("English"), G_MENU_MODEL(en));
    g_menu_append_section(menu, _("Chinese"), G_MENU_MODEL(zh));
    gtk_menu_button_set_menu_model(self->examples_button, G_MENU_MODEL(menu));
}

/* The first example sentence, the first Chinese one when the interface speaks Chinese (one
 * the demo model's vocabulary reads whole: 他把书放在桌子上，然后开始读它。). */
static const char *first_example(AtnWindow *self) {
    gboolean zh = g_str_has_prefix(atn_gui_language(), "zh");
    for (guint i = 0; i < self->examples->len; i++)
        if (is_cjk(g_ptr_array_index(self->examples, i)) == zh)
            return g_ptr_array_index(self->examples, i);
    return self->examples->len ? g_ptr_array_index(self->examples, 0) : "";
}

/* ---- status and results ---------------------------------------------------------------------- */

static void show_run_status(AtnWindow *self);

static void on_result(AtnSession *s, GParamSpec *p, AtnWindow *self) {
    AtnResult *r = atn_session_get_result(self->session);
    AtnModelHandle *shown = atn_session_get_model(self->session);
    /* an edit or a revert runs the toy model again: Revert is there while there is an edit */
    gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.revert-toy",
                                  shown && atn_model_handle_is_toy(shown) && atn_model_handle_get_edited(shown));
    const char *run_notice = atn_session_get_run_notice(self->session);
    if (run_notice) {
        _atn_window_show_notice(self, run_notice);
        self->notice_is_run = TRUE;
    } else if (self->notice_is_run) {
        gtk_info_bar_set_revealed(self->notice_bar, FALSE);
        self->notice_is_run = FALSE;
    }
    if (!r)
        return;
    const char *dev = atn_result_get_device(r) == ATN_DEVICE_CUDA ? _("GPU") : _("CPU");
    int n = atn_result_get_n_tokens(r);
    g_autofree char *tokens = g_strdup_printf(ngettext("%d token", "%d tokens", n), n);
    int L = atn_result_get_n_layers(r), H = atn_result_get_n_heads(r);
    g_autofree char *layers = g_strdup_printf(ngettext("%d layer", "%d layers", L), L);
    g_autofree char *heads = g_strdup_printf(ngettext("%d head", "%d heads", H), H);
    const atn_stack *cross = atn_result_get_stack(r, ATN_STACK_CROSS);
    if (cross) {   /* an encoder-decoder: source and target, encoder and decoder */
        g_free(tokens);
        tokens = g_strdup_printf(_("%d source + %d target tokens"), cross->n_k, cross->n_q);
        g_free(layers);
        layers = g_strdup_printf(_("%d encoder + %d decoder layers"), L, cross->n_layers);
    }
    /* Translators: model · 12 tokens · 4 layers × 4 heads · ran in 3.2 ms on the CPU */
    g_free(self->run_status);
    if (!atn_result_has_weights(r))
        /* Translators: model · 12 tokens · 4 layers × 4 heads · attention file, no weights */
        self->run_status = g_strdup_printf(_("%s · %s · %s × %s · attention file, no weights"),
                                           atn_model_handle_get_name(atn_result_get_model(r)), tokens, layers, heads);
    else
        self->run_status = g_strdup_printf(_("%s · %s · %s × %s · ran in %.1f ms on the %s"),
                                           atn_model_handle_get_name(atn_result_get_model(r)), tokens, layers, heads,
                                           atn_result_get_elapsed_ms(r), dev);
    show_run_status(self);
}

/* The first result after atn_window_start_on_head: were the options inside the model? */
static void check_start_head(AtnSession *s, GParamSpec *p, AtnWindow *self) {
    AtnResult *r = atn_session_get_result(s);
    if (!r)
        return;
    g_signal_handlers_disconnect_by_func(s, check_start_head, self);
    int L = atn_result_get_n_layers(r), H = atn_result_get_n_heads(r);
    const char *name = atn_model_handle_get_name(atn_result_get_model(r));
    g_autoptr(GString) msg = g_string_new(NULL);
    if (self->start_layer >= L)
        /* Translators: --layer 99: “demo” has layers 0 to 3; showing layer 3. */
        g_string_append_printf(msg, _("--layer %d: “%s” has layers 0 to %d; showing layer %d."), self->start_layer,
                               name, L - 1, atn_session_get_layer(s));
    if (self->start_head >= H) {
        if (msg->len)
            g_string_append_c(msg, ' ');
        g_string_append_printf(msg, _("--head %d: “%s” has heads 0 to %d; showing head %d."), self->start_head,
                               name, H - 1, atn_session_get_head(s));
    }
    if (!msg->len)
        return;
    g_printerr("attnscope: %s\n", msg->str);
    _atn_window_show_notice(self, msg->str);
    self->notice_is_run = FALSE;
}

void atn_window_start_on_head(AtnWindow *self, int layer, int head) {
    g_return_if_fail(ATN_IS_WINDOW(self));
    if (layer < 0 && head < 0)
        return;
    self->start_layer = layer;
    self->start_head = head;
    atn_session_select_head(self->session, MAX(layer, 0), MAX(head, 0));
    g_signal_handlers_disconnect_by_func(self->session, check_start_head, self);
    if (atn_session_get_result(self->session))
        check_start_head(self->session, NULL, self);
    else
        g_signal_connect(self->session, "notify::result", G_CALLBACK(check_start_head), self);
}

static void show_run_status(AtnWindow *self) {
    g_clear_handle_id(&self->say_timeout_id, g_source_remove);
    gtk_label_set_text(self->status_label, self->run_status ? self->run_status : "");
}

static gboolean say_timeout_cb(gpointer data) {
    AtnWindow *self = data;
    self->say_timeout_id = 0;
    show_run_status(self);
    return G_SOURCE_REMOVE;
}

void _atn_window_say(AtnWindow *self, const char *message) {
    gtk_label_set_text(self->status_label, message);
    g_clear_handle_id(&self->say_timeout_id, g_source_remove);
    self->say_timeout_id = g_timeout_add_seconds(8, say_timeout_cb, self);
}

/* the next action after a message: the line is about the result again */
static void on_moved_on(GObject *o, GParamSpec *p, AtnWindow *self) {
    if (self->say_timeout_id)
        show_run_status(self);
}

const char *atn_window_get_status(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return gtk_label_get_text(self->status_label);
}

/* A spinner redraws every frame (each one a main-thread frame and a trip to the display
 * server, taken from the forward's threads on a small machine): it turns only while a model
 * opens; a run shows its layers in the run bar, updated ten times a second. */
static void on_busy(AtnSession *s, GParamSpec *p, AtnWindow *self) {
    gtk_spinner_set_spinning(self->spinner, atn_session_get_opening(self->session) != NULL);
}

static void on_run_fraction(AtnSession *s, GParamSpec *p, AtnWindow *self) {
    /* an overlay along the top of the views, shown or hidden by opacity: nothing moves */
    double f = atn_session_get_run_fraction(self->session);
    gtk_widget_set_opacity(GTK_WIDGET(self->run_bar), f >= 0 ? 1 : 0);
    gtk_progress_bar_set_fraction(self->run_bar, MAX(f, 0));
}

static void on_head_activated(GtkWidget *view, int layer, int head, AtnWindow *self) {
    /* Model and Statistics: the session stack's heads (a corpus's statistics set the encoder's) */
    atn_session_select_head(self->session, layer, head);
    atn_window_show_view(self, "head");
}


enum { CLOSE_DISCARD = 1, CLOSE_SAVE = 2 };

static void on_close_prompt_response(GtkDialog *d, int response, AtnWindow *self) {
    g_autoptr(GPtrArray) unsaved = atn_session_dup_unsaved_toys(self->session);
    gtk_window_destroy(GTK_WINDOW(d));
    self->close_prompt = NULL;
    if (response == CLOSE_DISCARD) {
        self->closing_anyway = TRUE;
        gtk_window_close(GTK_WINDOW(self));
    } else if (response == CLOSE_SAVE && unsaved->len > 0) {
        _atn_window_save_toy_dialog(self, g_ptr_array_index(unsaved, 0), TRUE);
    }
}

/* Closing with toy-model edits that are in no file: ask first. */
static gboolean on_close_request(GtkWindow *window, gpointer data) {
    AtnWindow *self = ATN_WINDOW(window);
    if (self->closing_anyway || !self->session)
        return FALSE;
    g_autoptr(GPtrArray) unsaved = atn_session_dup_unsaved_toys(self->session);
    if (unsaved->len == 0)
        return FALSE;
    if (self->close_prompt)
        return TRUE;
    const char *name = atn_model_handle_get_name(g_ptr_array_index(unsaved, 0));
    GtkWidget *d = gtk_message_dialog_new(window, GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
                                          GTK_MESSAGE_QUESTION, GTK_BUTTONS_NONE,
                                          _("Save the changes to the toy model “%s”?"), name);
    gtk_message_dialog_format_secondary_text(GTK_MESSAGE_DIALOG(d),
                                             _("You changed its numbers in the Trace view; they are in no file yet."));
    gtk_dialog_add_buttons(GTK_DIALOG(d), _("Close _Without Saving"), CLOSE_DISCARD, _("_Cancel"),
                           GTK_RESPONSE_CANCEL, _("_Save As…"), CLOSE_SAVE, NULL);
    gtk_dialog_set_default_response(GTK_DIALOG(d), CLOSE_SAVE);
    g_signal_connect(d, "response", G_CALLBACK(on_close_prompt_response), self);
    self->close_prompt = d;
    gtk_window_present(GTK_WINDOW(d));
    return TRUE;   /* not yet */
}

GtkWidget *atn_window_get_close_prompt(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return self->close_prompt;
}

/* ---- views ---------------------------------------------------------------------------------------- */

const char *const *atn_window_get_view_names(void) {
    static const char *const names[] = {"head", "model", "similarity", "trace", "statistics", "whatif", "train", NULL};
    return names;
}

void atn_window_show_view(AtnWindow *self, const char *name) {
    g_return_if_fail(ATN_IS_WINDOW(self));
    gtk_stack_set_visible_child_name(self->stack, name);
}
const char *atn_window_get_view(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return gtk_stack_get_visible_child_name(self->stack);
}
GtkWidget *atn_window_get_view_widget(AtnWindow *self, const char *name) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return gtk_stack_get_child_by_name(self->stack, name);
}

AtnView *_atn_window_get_view(AtnWindow *self, const char *name) {
    GtkWidget *page = gtk_stack_get_child_by_name(self->stack, name);
    return page && ATN_IS_VIEW(page) ? ATN_VIEW(page) : NULL;
}
GtkWidget *atn_window_get_token_chips(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return GTK_WIDGET(self->chips);
}
GtkWidget *atn_window_get_predictions(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return GTK_WIDGET(self->predictions);
}


static void apply_style(AtnWindow *self) {
    atn_colormap cm = ATN_CMAP_VIRIDIS;
    atn_colormap_from_name(atn_prefs_get_colormap(self->prefs), &cm);
    double scale = atn_prefs_get_font_scale(self->prefs) * (self->presentation ? 1.6 : 1.0);
    for (GtkWidget *page = gtk_widget_get_first_child(GTK_WIDGET(self->stack)); page;
         page = gtk_widget_get_next_sibling(page)) {
        if (ATN_IS_VIEW(page)) {
            atn_view_set_colormap(ATN_VIEW(page), cm);
            atn_view_set_font_scale(ATN_VIEW(page), scale);
        }
    }

    /* the text of the window: the theme's font size times the scale */
    GtkSettings *settings = gtk_widget_get_settings(GTK_WIDGET(self));
    g_autofree char *font = NULL;
    g_object_get(settings, "gtk-font-name", &font, NULL);
    PangoFontDescription *desc = pango_font_description_from_string(font ? font : "Sans 10");
    double pt = pango_font_description_get_size(desc) / (double)PANGO_SCALE;
    pango_font_description_free(desc);
    if (pt <= 0)
        pt = 10;
    /* the theme sizes some classes in points (Adwaita: .heading 11pt, .caption 9pt, the
       titles): scaled too, so the trace's step titles and captions grow with the rest */
    g_autofree char *css = g_strdup_printf(
        "window.atn-window { font-size: %.2fpt; }\n"
        "window.atn-window .heading { font-size: %.2fpt; }\n"
        "window.atn-window .body { font-size: %.2fpt; }\n"
        "window.atn-window .caption, window.atn-window .caption-heading { font-size: %.2fpt; }\n"
        "window.atn-window .title-1 { font-size: %.2fpt; }\n"
        "window.atn-window .title-2, window.atn-window .title-3 { font-size: %.2fpt; }\n"
        "window.atn-window .title-4 { font-size: %.2fpt; }\n"
        "window.atn-window label.presentation-hint { font-size: %.2fpt; }\n",
        pt * scale, 11 * scale, 11 * scale, 9 * scale, 20 * scale, 15 * scale, 13 * scale, pt * scale * 1.1);
    gtk_css_provider_load_from_data(self->font_css, scale == 1.0 ? "" : css, -1);
}

static void on_prefs_changed(AtnPrefs *prefs, GParamSpec *p, AtnWindow *self) { apply_style(self); }

static atn_precision precision_from_name(const char *name) {
    return !g_strcmp0(name, "bf16") ? ATN_PRECISION_BF16 : !g_strcmp0(name, "fp16") ? ATN_PRECISION_FP16
                                                                                  : ATN_PRECISION_FP32;
}

static void on_precision_changed(AtnPrefs *prefs, GParamSpec *p, AtnWindow *self) {
    atn_session_set_precision(self->session, precision_from_name(atn_prefs_get_precision(prefs)));
}

/* ---- presentation mode -------------------------------------------------------------------------- */

/* Presentation mode: the figure alone on the screen.  The header bar (with the view
 * switcher) and the sentence come back when the pointer reaches the top of the screen, stay
 * while it is over them or the focus is in them, and go PRESENTATION_HIDE_MS after it leaves;
 * moving the pointer over the figure (pointing at cells for an audience) changes nothing.  The
 * first time, a hint says how to leave and how to change views. */

static double controls_bottom(AtnWindow *self) {
    graphene_rect_t b;
    if (gtk_revealer_get_child_revealed(self->controls_revealer) &&
        gtk_widget_compute_bounds(GTK_WIDGET(self->controls_revealer), GTK_WIDGET(self), &b))
        return b.origin.y + b.size.height;
    if (gtk_widget_get_visible(GTK_WIDGET(self->header)) &&
        gtk_widget_compute_bounds(GTK_WIDGET(self->header), GTK_WIDGET(self), &b))
        return b.origin.y + b.size.height;
    return 0;
}

static gboolean focus_in_controls(AtnWindow *self) {
    GtkWidget *f = gtk_root_get_focus(GTK_ROOT(self));
    return f && (gtk_widget_is_ancestor(f, GTK_WIDGET(self->controls_revealer)) ||
                 gtk_widget_is_ancestor(f, GTK_WIDGET(self->header)));
}

static void show_controls(AtnWindow *self, gboolean show) {
    gtk_revealer_set_reveal_child(self->controls_revealer, show);
    gtk_widget_set_visible(GTK_WIDGET(self->header), show);
    if (show && self->hint_revealer && self->presentation) {   /* the hint's advice was taken: its line goes */
        g_clear_handle_id(&self->hint_id, g_source_remove);
        gtk_revealer_set_reveal_child(self->hint_revealer, FALSE);
    }
}

static gboolean hide_controls_cb(gpointer data) {
    AtnWindow *self = data;
    self->hide_controls_id = 0;
    if (!self->presentation)
        return G_SOURCE_REMOVE;
    if (focus_in_controls(self) || (self->pointer_in && self->last_motion_y <= controls_bottom(self))) {
        self->hide_controls_id = g_timeout_add(PRESENTATION_HIDE_MS, hide_controls_cb, self);   /* still in use */
        return G_SOURCE_REMOVE;
    }
    show_controls(self, FALSE);
    return G_SOURCE_REMOVE;
}

static double top_strip(AtnWindow *self) {
    return PRESENTATION_TOP_PX * MAX(1.0, atn_prefs_get_font_scale(self->prefs));
}

static void on_window_motion(GtkEventControllerMotion *c, double x, double y, AtnWindow *self) {
    self->pointer_in = TRUE;
    if (!self->presentation || (fabs(x - self->last_motion_x) < 1 && fabs(y - self->last_motion_y) < 1))
        return;
    self->last_motion_x = x;
    self->last_motion_y = y;
    gboolean shown = gtk_widget_get_visible(GTK_WIDGET(self->header));
    if (y <= top_strip(self) || (shown && y <= controls_bottom(self))) {
        show_controls(self, TRUE);
        g_clear_handle_id(&self->hide_controls_id, g_source_remove);
    } else if (shown && !self->hide_controls_id) {
        self->hide_controls_id = g_timeout_add(PRESENTATION_HIDE_MS, hide_controls_cb, self);
    }
}

static void on_window_leave(GtkEventControllerMotion *c, AtnWindow *self) { self->pointer_in = FALSE; }

static gboolean hide_hint_cb(gpointer data) {
    AtnWindow *self = data;
    self->hint_id = 0;
    gtk_revealer_set_reveal_child(self->hint_revealer, FALSE);
    return G_SOURCE_REMOVE;
}

/* The hint, over the top of the views, where the view's own controls are (it lets the
 * pointer through to them), not over the figure: at the bottom it hid the key axis.  An
 * overlay: it takes no room from the figure (a line of its own squeezed the Similarity view's
 * pair maps at 1280x720 for its seven seconds). */
static void build_presentation_hint(AtnWindow *self) {
    GtkWidget *overlay = gtk_widget_get_parent(GTK_WIDGET(self->stack));
    g_return_if_fail(GTK_IS_OVERLAY(overlay));   /* atn-window.ui's views_overlay */
    self->hint_revealer = GTK_REVEALER(gtk_revealer_new());
    gtk_revealer_set_transition_type(self->hint_revealer, GTK_REVEALER_TRANSITION_TYPE_CROSSFADE);
    gtk_widget_set_halign(GTK_WIDGET(self->hint_revealer), GTK_ALIGN_CENTER);
    gtk_widget_set_valign(GTK_WIDGET(self->hint_revealer), GTK_ALIGN_START);
    gtk_widget_set_margin_top(GTK_WIDGET(self->hint_revealer), 4);
    gtk_widget_set_can_target(GTK_WIDGET(self->hint_revealer), FALSE);
    /* Translators: shown once over the figure when presentation mode starts */
    self->hint_label = GTK_LABEL(gtk_label_new(_("Presentation mode · F11 or Esc leaves it · Alt+1…7 change the view · "
                                                 "the pointer at the top shows the view switcher")));
    gtk_label_set_wrap(self->hint_label, TRUE);
    gtk_label_set_justify(self->hint_label, GTK_JUSTIFY_CENTER);
    gtk_widget_add_css_class(GTK_WIDGET(self->hint_label), "osd");
    gtk_widget_add_css_class(GTK_WIDGET(self->hint_label), "presentation-hint");
    gtk_revealer_set_child(self->hint_revealer, GTK_WIDGET(self->hint_label));
    gtk_overlay_add_overlay(GTK_OVERLAY(overlay), GTK_WIDGET(self->hint_revealer));
}

GtkWidget *atn_window_get_view_switcher(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return GTK_WIDGET(self->switcher);
}

gboolean atn_window_get_view_switcher_shown(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), FALSE);
    return gtk_widget_get_visible(GTK_WIDGET(self->header));
}

GtkWidget *atn_window_get_presentation_hint(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return GTK_WIDGET(self->hint_revealer);
}

/* GTK hides a fullscreen window's titlebar whatever its widgets say: in presentation mode the
 * header bar lives at the top of the content, where the pointer at the top of the screen
 * finds it, and goes back to the titlebar after. */
static void move_header(AtnWindow *self, gboolean into_content) {
    GtkWidget *header = GTK_WIDGET(self->header);
    GtkWidget *to = GTK_WIDGET(into_content ? self->content : self->titlebar_slot);
    if (gtk_widget_get_parent(header) == to)
        return;
    g_object_ref(header);
    gtk_box_remove(GTK_BOX(gtk_widget_get_parent(header)), header);
    gtk_box_prepend(GTK_BOX(to), header);
    g_object_unref(header);
    /* the empty slot keeps the titlebar's style (a header bar's height): hidden meanwhile */
    gtk_widget_set_visible(GTK_WIDGET(self->titlebar_slot), !into_content);
}

void atn_window_set_presentation(AtnWindow *self, gboolean on) {
    g_return_if_fail(ATN_IS_WINDOW(self));
    if (on == self->presentation)
        return;
    self->presentation = on;
    move_header(self, on);
    if (on) {
        gtk_widget_add_css_class(GTK_WIDGET(self), "presentation");
        gtk_window_fullscreen(GTK_WINDOW(self));
        g_clear_handle_id(&self->hide_controls_id, g_source_remove);
        show_controls(self, FALSE);   /* at once: the figure gets the whole screen */
        gtk_widget_set_visible(GTK_WIDGET(self->status_label), FALSE);
        if (!self->hint_done) {
            self->hint_done = TRUE;
            gtk_revealer_set_reveal_child(self->hint_revealer, TRUE);
            g_clear_handle_id(&self->hint_id, g_source_remove);
            self->hint_id = g_timeout_add(PRESENTATION_HINT_MS, hide_hint_cb, self);
        }
    } else {
        gtk_widget_remove_css_class(GTK_WIDGET(self), "presentation");
        gtk_window_unfullscreen(GTK_WINDOW(self));
        g_clear_handle_id(&self->hide_controls_id, g_source_remove);
        g_clear_handle_id(&self->hint_id, g_source_remove);
        gtk_revealer_set_reveal_child(self->hint_revealer, FALSE);
        show_controls(self, TRUE);
        gtk_widget_set_visible(GTK_WIDGET(self->status_label), TRUE);
    }
    GAction *a = g_action_map_lookup_action(G_ACTION_MAP(self), "presentation");
    if (a)
        g_simple_action_set_state(G_SIMPLE_ACTION(a), g_variant_new_boolean(on));
    apply_style(self);
}



/* ---- GObject --------------------------------------------------------------------------------------- */

static void atn_window_dispose(GObject *object) {
    AtnWindow *self = ATN_WINDOW(object);
    g_clear_handle_id(&self->hide_controls_id, g_source_remove);
    g_clear_handle_id(&self->hint_id, g_source_remove);
    g_clear_handle_id(&self->open_reveal_id, g_source_remove);
    g_clear_handle_id(&self->say_timeout_id, g_source_remove);
    g_clear_pointer(&self->run_status, g_free);
    g_clear_pointer(&self->entry_note, g_free);
    if (self->export_cancel)
        g_cancellable_cancel(self->export_cancel);
    g_clear_object(&self->export_cancel);
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    if (self->prefs)
        g_signal_handlers_disconnect_by_data(self->prefs, self);
    if (self->font_css) {
        gtk_style_context_remove_provider_for_display(gtk_widget_get_display(GTK_WIDGET(self)),
                                                      GTK_STYLE_PROVIDER(self->font_css));
        g_clear_object(&self->font_css);
    }
    /* no gtk_widget_dispose_template here: GtkWindow unparents its own child and titlebar */
    g_clear_object(&self->session);
    g_clear_object(&self->model_menu);
    g_clear_pointer(&self->examples, g_ptr_array_unref);
    G_OBJECT_CLASS(atn_window_parent_class)->dispose(object);
}

static void atn_window_class_init(AtnWindowClass *klass) {
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = atn_window_dispose;
    g_type_ensure(ATN_TYPE_TOKEN_CHIPS);
    g_type_ensure(ATN_TYPE_TARGET_ENTRY);
    g_type_ensure(ATN_TYPE_PREDICTIONS);
    g_type_ensure(ATN_TYPE_VIEW_SWITCHER);
    gtk_widget_class_set_template_from_resource(wc, "/io/github/attnscope/Attnscope/atn-window.ui");
#define BIND(name) gtk_widget_class_bind_template_child(wc, AtnWindow, name)
    BIND(header);
    BIND(titlebar_slot);
    BIND(content);
    BIND(model_button);
    BIND(cpu_button);
    BIND(gpu_button);
    BIND(spinner);
    BIND(run_bar);
    BIND(switcher);
    BIND(error_bar);
    BIND(notice_bar);
    BIND(error_label);
    BIND(notice_label);
    BIND(controls_revealer);
    BIND(whatif_revealer);
    BIND(whatif_label);
    BIND(lessons_menu);
    BIND(whatif_restore_button);
    BIND(progress_revealer);
    BIND(progress_label);
    BIND(progress_bar);
    BIND(progress_cancel_button);
    BIND(text_entry);
    BIND(pair_entry);
    BIND(pair_toggle);
    BIND(examples_button);
    BIND(toy_label);
    BIND(chips);
    BIND(target_entry);
    BIND(predictions);
    BIND(stack);
    BIND(status_label);
#undef BIND

    _atn_window_class_actions_init(wc);
    _atn_window_class_stats_init(wc);
    _atn_window_class_session_init(wc);
    _atn_window_class_lessons_init(wc);
    _atn_window_class_export_init(wc);
}

static void atn_window_init(AtnWindow *self) {
    gtk_widget_init_template(GTK_WIDGET(self));
    cap_entries(self, 512);   /* until a model says how many positions it reads */
    gtk_widget_add_css_class(GTK_WIDGET(self), "atn-window");
    self->prefs = atn_prefs_get_default();
    self->session = atn_session_new();
    self->examples = g_ptr_array_new_with_free_func(g_free);
    self->start_layer = self->start_head = -1;
    self->model_menu = g_menu_new();
    gtk_menu_button_set_menu_model(self->model_button, G_MENU_MODEL(self->model_menu));
    gtk_menu_button_set_create_popup_func(self->model_button, model_menu_about_to_open, self, NULL);
    /* the model's name in full up to MODEL_LABEL_CHARS characters; update_model_button */
    self->model_label = GTK_LABEL(gtk_label_new(NULL));
    gtk_label_set_max_width_chars(self->model_label, MODEL_LABEL_CHARS);
    gtk_menu_button_set_child(self->model_button, GTK_WIDGET(self->model_label));
    rebuild_model_menu(self);
    load_examples(self);

    _atn_window_actions_init(self);

    self->font_css = gtk_css_provider_new();
    gtk_style_context_add_provider_for_display(gtk_widget_get_display(GTK_WIDGET(self)),
                                               GTK_STYLE_PROVIDER(self->font_css),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION + 1);

    atn_token_chips_set_session(self->chips, self->session);
    atn_target_entry_set_session(self->target_entry, self->session);
    atn_predictions_set_session(self->predictions, self->session);
    g_signal_connect(self->predictions, "fill", G_CALLBACK(on_fill), self);
    /* the views: whatever pages atn-window.ui has */
    for (GtkWidget *page = gtk_widget_get_first_child(GTK_WIDGET(self->stack)); page;
         page = gtk_widget_get_next_sibling(page)) {
        if (!ATN_IS_VIEW(page)) {
            g_critical("atn-window.ui: the page %s is not an AtnView", G_OBJECT_TYPE_NAME(page));
            continue;
        }
        atn_view_set_session(ATN_VIEW(page), self->session);
        if (g_signal_lookup("head-activated", G_OBJECT_TYPE(page)))
            g_signal_connect(page, "head-activated", G_CALLBACK(on_head_activated), self);
    }
    _atn_window_stats_init(self);
    _atn_window_session_init(self);
    _atn_window_lessons_init(self);
    _atn_window_fill_lessons_menu(self, self->lessons_menu);

    g_signal_connect(self->session, "error", G_CALLBACK(on_session_error), self);
    g_signal_connect(self->session, "notice", G_CALLBACK(on_session_notice), self);
    g_signal_connect(self->session, "notify::model", G_CALLBACK(on_model), self);
    g_signal_connect(self->session, "notify::opening", G_CALLBACK(on_opening), self);
    g_signal_connect(self->session, "notify::open-fraction", G_CALLBACK(on_open_fraction), self);
    g_signal_connect(self->progress_cancel_button, "clicked", G_CALLBACK(on_progress_cancel), self);
    g_signal_connect(self->session, "notify::result", G_CALLBACK(on_result), self);
    g_signal_connect(self->session, "notify::busy", G_CALLBACK(on_busy), self);
    g_signal_connect(self->session, "notify::run-fraction", G_CALLBACK(on_run_fraction), self);
    g_signal_connect(self->session, "notify::opening", G_CALLBACK(on_busy), self);
    g_signal_connect(self->session, "notify::gpu-available", G_CALLBACK(on_gpu_available), self);
    g_signal_connect(self->session, "notify::device", G_CALLBACK(on_device), self);
    const char *moves[] = {"notify::layer", "notify::head", "notify::query", "notify::model", "notify::opening"};
    for (guint i = 0; i < G_N_ELEMENTS(moves); i++)
        g_signal_connect(self->session, moves[i], G_CALLBACK(on_moved_on), self);
    g_signal_connect(self->stack, "notify::visible-child", G_CALLBACK(on_moved_on), self);
    g_signal_connect(self, "close-request", G_CALLBACK(on_close_request), NULL);
    g_signal_connect(self->prefs, "notify::colormap", G_CALLBACK(on_prefs_changed), self);
    g_signal_connect(self->prefs, "notify::font-scale", G_CALLBACK(on_prefs_changed), self);
    g_signal_connect(self->prefs, "notify::precision", G_CALLBACK(on_precision_changed), self);
    atn_session_set_precision(self->session, precision_from_name(atn_prefs_get_precision(self->prefs)));
    g_signal_connect(self->session, "whatif-changed", G_CALLBACK(on_whatif_changed), self);
    g_signal_connect(self->stack, "notify::visible-child", G_CALLBACK(on_view_for_badge), self);
    g_signal_connect(self->whatif_restore_button, "clicked", G_CALLBACK(on_whatif_restore), self);
    g_signal_connect(self->error_bar, "response", G_CALLBACK(on_bar_response), self);
    g_signal_connect(self->notice_bar, "response", G_CALLBACK(on_bar_response), self);
    g_signal_connect(self->cpu_button, "toggled", G_CALLBACK(on_device_toggled), self);
    g_signal_connect(self->gpu_button, "toggled", G_CALLBACK(on_device_toggled), self);
    g_signal_connect(self->text_entry, "changed", G_CALLBACK(on_text_changed), self);
    g_signal_connect(self->pair_entry, "changed", G_CALLBACK(on_text_changed), self);
    g_signal_connect(self->pair_toggle, "toggled", G_CALLBACK(on_pair_toggled), self);

    GtkEventController *motion = gtk_event_controller_motion_new();
    g_signal_connect(motion, "motion", G_CALLBACK(on_window_motion), self);
    g_signal_connect(motion, "leave", G_CALLBACK(on_window_leave), self);
    gtk_widget_add_controller(GTK_WIDGET(self), motion);
    build_presentation_hint(self);

    self->want_gpu = !g_strcmp0(atn_prefs_get_device(self->prefs), "gpu");
    on_gpu_available(self->session, NULL, self);
    apply_style(self);

    /* the last sentence (or the first example in the interface's language), then the last
       model (or the demo) */
    const char *text = atn_prefs_get_example_text(self->prefs);
    _atn_window_set_example(self, text && *text ? text : first_example(self));
    update_model_button(self);
}

AtnWindow *atn_window_new(GtkApplication *app, const char *model) {
    AtnWindow *self = g_object_new(ATN_TYPE_WINDOW, "application", app, NULL);
    atn_session_open_default(self->session, model ? model : atn_prefs_get_last_model(self->prefs));
    return self;
}

AtnSession *atn_window_get_session(AtnWindow *self) {
    g_return_val_if_fail(ATN_IS_WINDOW(self), NULL);
    return self->session;
}

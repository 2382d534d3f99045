/* AtnWindow and lessons (atn-lesson.h, docs/lessons.md): the main menu's Lessons submenu (the
 * built-in lessons under the data folder's lessons/, and Open Lesson File…), and the lesson
 * panel above the views: the lesson's title and step, the question, Back / Next / Reveal
 * Answer and a close button.  Each step sets the window's state as a session does
 * (_atn_window_apply_state); a revealed answer's placeholders are filled from the result
 * shown, and again whenever a new result comes. */
#include "atn-window-private.h"
#include "atn-window-test.h"
#include "atn-application.h"
#include "atn-lesson.h"
#include "atn-session-file.h"

#include <glib/gi18n.h>
#include <string.h>

typedef struct lesson_panel {
    AtnWindow *window;          /* not a ref: the panel is the window's */
    GtkRevealer *revealer;
    GtkLabel *title, *step, *question, *answer;
    GtkButton *back, *next, *reveal;
    AtnLesson *lesson;
    int index;
    gboolean revealed;
} lesson_panel;

#define PANEL_KEY "atn-lesson-panel"

static lesson_panel *panel_of(AtnWindow *self) { return g_object_get_data(G_OBJECT(self), PANEL_KEY); }

/* ---- the numbers of the result shown ------------------------------------------------------- */

static gboolean value_attn(gpointer data, int layer, int head, int q, int k, double *out) {
    AtnResult *r = data;
    if (!r || layer >= atn_result_get_n_layers(r) || head >= atn_result_get_n_heads(r))
        return FALSE;
    int n = atn_result_get_n_tokens(r);
    if (q >= n || k >= n)
        return FALSE;
    const float *a = atn_result_get_head(r, layer, head);
    if (!a)
        return FALSE;
    *out = a[(size_t)q * n + k];
    return TRUE;
}

static int value_n_tokens(gpointer data) { return data ? atn_result_get_n_tokens(data) : -1; }

static char *value_token(gpointer data, int i) {
    AtnResult *r = data;
    if (!r || i >= atn_result_get_n_tokens(r))
        return NULL;
    return g_strdup(atn_result_get_tokens(r)[i]);
}

static char *fill(AtnWindow *self, const char *text) {
    AtnResult *r = atn_session_get_result(self->session);
    AtnLessonValues v = {value_attn, value_n_tokens, value_token, r};
    return atn_lesson_fill(text, r ? &v : NULL);
}

char *atn_window_dup_lesson_answer(AtnWindow *self) {
    lesson_panel *p = panel_of(self);
    if (!p || !p->lesson)
        return NULL;
    AtnLessonStep *st = g_ptr_array_index(p->lesson->steps, p->index);
    return fill(self, st->answer);
}

/* ---- the panel ---------------------------------------------------------------------------- */

/* The question and (when revealed) the answer, their placeholders filled from the result shown. */
static void show_answer(lesson_panel *p) {
    AtnLessonStep *st = g_ptr_array_index(p->lesson->steps, p->index);
    g_autofree char *question = fill(p->window, st->question);
    gtk_label_set_text(p->question, question);
    g_autofree char *text = p->revealed ? atn_window_dup_lesson_answer(p->window) : NULL;
    gtk_label_set_text(p->answer, text ? text : "");
    gtk_widget_set_visible(GTK_WIDGET(p->answer), p->revealed);
    gtk_widget_set_sensitive(GTK_WIDGET(p->reveal), !p->revealed);
}

static void show_step(lesson_panel *p) {
    AtnLessonStep *st = g_ptr_array_index(p->lesson->steps, p->index);
    int n = (int)p->lesson->steps->len;
    gtk_label_set_text(p->title, p->lesson->title);
    g_autofree char *where = g_strdup_printf(_("Step %d of %d"), p->index + 1, n);
    gtk_label_set_text(p->step, where);
    gtk_widget_set_sensitive(GTK_WIDGET(p->back), p->index > 0);
    gtk_widget_set_sensitive(GTK_WIDGET(p->next), p->index + 1 < n);
    p->revealed = FALSE;
    show_answer(p);
    gtk_revealer_set_reveal_child(p->revealer, TRUE);
    _atn_window_apply_state(p->window, &st->state);
}

void atn_window_lesson_go(AtnWindow *self, int index) {
    lesson_panel *p = panel_of(self);
    if (!p || !p->lesson || index < 0 || index >= (int)p->lesson->steps->len)
        return;
    p->index = index;
    show_step(p);
}

int atn_window_get_lesson_step(AtnWindow *self) {
    lesson_panel *p = panel_of(self);
    return p && p->lesson ? p->index : -1;
}

void atn_window_lesson_reveal(AtnWindow *self) {
    lesson_panel *p = panel_of(self);
    if (!p || !p->lesson)
        return;
    p->revealed = TRUE;
    show_answer(p);
}

const char *atn_window_get_lesson_text(AtnWindow *self, const char *which) {
    lesson_panel *p = panel_of(self);
    if (!p || !p->lesson)
        return NULL;
    if (!strcmp(which, "question"))
        return gtk_label_get_text(p->question);
    if (!strcmp(which, "title"))
        return gtk_label_get_text(p->title);
    return gtk_widget_get_visible(GTK_WIDGET(p->answer)) ? gtk_label_get_text(p->answer) : NULL;
}

gboolean atn_window_open_lesson(AtnWindow *self, const char *path) {
    lesson_panel *p = panel_of(self);
    GError *error = NULL;
    AtnLesson *lesson = atn_lesson_load(path, atn_gui_language(), &error);
    if (!lesson) {
        _atn_window_show_error(self, error->message);
        g_error_free(error);
        return FALSE;
    }
    atn_lesson_free(p->lesson);
    p->lesson = lesson;
    p->index = 0;
    show_step(p);
    return TRUE;
}

void atn_window_close_lesson(AtnWindow *self) {
    lesson_panel *p = panel_of(self);
    gtk_revealer_set_reveal_child(p->revealer, FALSE);
    g_clear_pointer(&p->lesson, atn_lesson_free);
}

static void on_back(GtkButton *b, lesson_panel *p) { atn_window_lesson_go(p->window, p->index - 1); }
static void on_next(GtkButton *b, lesson_panel *p) { atn_window_lesson_go(p->window, p->index + 1); }
static void on_reveal(GtkButton *b, lesson_panel *p) { atn_window_lesson_reveal(p->window); }
static void on_close(GtkButton *b, lesson_panel *p) { atn_window_close_lesson(p->window); }

static void on_result(AtnSession *s, GParamSpec *ps, AtnWindow *self) {
    lesson_panel *p = panel_of(self);
    if (p && p->lesson)
        show_answer(p);
}

static void panel_free(gpointer data) {
    lesson_panel *p = data;
    atn_lesson_free(p->lesson);
    g_free(p);
}

static GtkWidget *label(const char *css, gboolean wrap) {
    GtkWidget *l = gtk_label_new(NULL);
    gtk_label_set_xalign(GTK_LABEL(l), 0);
    gtk_label_set_wrap(GTK_LABEL(l), wrap);
    gtk_label_set_wrap_mode(GTK_LABEL(l), PANGO_WRAP_WORD_CHAR);
    if (css)
        gtk_widget_add_css_class(l, css);
    return l;
}

static void build_panel(AtnWindow *self) {
    lesson_panel *p = g_new0(lesson_panel, 1);
    p->window = self;
    g_object_set_data_full(G_OBJECT(self), PANEL_KEY, p, panel_free);
    p->revealer = GTK_REVEALER(gtk_revealer_new());
    gtk_revealer_set_transition_type(p->revealer, GTK_REVEALER_TRANSITION_TYPE_SLIDE_DOWN);
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_widget_add_css_class(box, "lesson-panel");
    GtkWidget *top = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
    p->title = GTK_LABEL(label("heading", FALSE));
    gtk_label_set_ellipsize(p->title, PANGO_ELLIPSIZE_END);
    p->step = GTK_LABEL(label("dim-label", FALSE));
    gtk_box_append(GTK_BOX(top), GTK_WIDGET(p->title));
    gtk_box_append(GTK_BOX(top), GTK_WIDGET(p->step));
    GtkWidget *spacer = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
    gtk_widget_set_hexpand(spacer, TRUE);
    gtk_box_append(GTK_BOX(top), spacer);
    p->back = GTK_BUTTON(gtk_button_new_with_mnemonic(_("_Back")));
    p->reveal = GTK_BUTTON(gtk_button_new_with_mnemonic(_("_Reveal Answer")));
    p->next = GTK_BUTTON(gtk_button_new_with_mnemonic(_("_Next")));
    gtk_widget_add_css_class(GTK_WIDGET(p->next), "suggested-action");
    GtkWidget *close = gtk_button_new_from_icon_name("window-close-symbolic");
    gtk_widget_add_css_class(close, "flat");
    gtk_widget_set_tooltip_text(close, _("Close the lesson"));
    gtk_box_append(GTK_BOX(top), GTK_WIDGET(p->back));
    gtk_box_append(GTK_BOX(top), GTK_WIDGET(p->reveal));
    gtk_box_append(GTK_BOX(top), GTK_WIDGET(p->next));
    gtk_box_append(GTK_BOX(top), close);
    p->question = GTK_LABEL(label("lesson-question", TRUE));
    p->answer = GTK_LABEL(label("lesson-answer", TRUE));
    gtk_label_set_selectable(p->answer, TRUE);
    gtk_box_append(GTK_BOX(box), top);
    /* the texts scroll rather than push the views off the screen: up to 160 px, as the space
       allows (the box gives them their natural height before the views grow), at least 32 (a
       line; 64 made the window's minimum 752 px at 1280x720 with demo-gpt2's lesson, issue
       40: tests/ui/test-fit.c's lesson case) */
    GtkWidget *texts = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_box_append(GTK_BOX(texts), GTK_WIDGET(p->question));
    gtk_box_append(GTK_BOX(texts), GTK_WIDGET(p->answer));
    GtkWidget *scroll = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroll), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_propagate_natural_height(GTK_SCROLLED_WINDOW(scroll), TRUE);
    gtk_scrolled_window_set_max_content_height(GTK_SCROLLED_WINDOW(scroll), 160);
    gtk_scrolled_window_set_min_content_height(GTK_SCROLLED_WINDOW(scroll), 32);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), texts);
    gtk_box_append(GTK_BOX(box), scroll);
    gtk_revealer_set_child(p->revealer, box);
    g_signal_connect(p->back, "clicked", G_CALLBACK(on_back), p);
    g_signal_connect(p->next, "clicked", G_CALLBACK(on_next), p);
    g_signal_connect(p->reveal, "clicked", G_CALLBACK(on_reveal), p);
    g_signal_connect(close, "clicked", G_CALLBACK(on_close), p);
    /* between the banners and the what-if badge, above the views */
    gtk_box_insert_child_after(self->content, GTK_WIDGET(p->revealer),
                               gtk_widget_get_prev_sibling(GTK_WIDGET(self->whatif_revealer)));
    g_signal_connect_object(self->session, "notify::result", G_CALLBACK(on_result), self, 0);
}

/* ---- the menu and its actions -------------------------------------------------------------- */

static void lesson_action(GtkWidget *widget, const char *name, GVariant *param) {
    atn_window_open_lesson(ATN_WINDOW(widget), g_variant_get_string(param, NULL));
}

static void on_open_response(GtkNativeDialog *d, int response, AtnWindow *self) {
    if (response == GTK_RESPONSE_ACCEPT) {
        g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(d));
        g_autofree char *path = file ? g_file_get_path(file) : NULL;
        if (path)
            atn_window_open_lesson(self, path);
    }
    g_object_unref(d);
}

static void open_lesson_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    GtkFileChooserNative *d = gtk_file_chooser_native_new(_("Open Lesson"), GTK_WINDOW(self),
                                                          GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
    gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(d), TRUE);
    g_autoptr(GtkFileFilter) f = gtk_file_filter_new();
    gtk_file_filter_set_name(f, _("attnscope lessons"));
    gtk_file_filter_add_pattern(f, "*.json");
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(d), f);
    g_signal_connect(d, "response", G_CALLBACK(on_open_response), self);
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(d));
}

static void lesson_nav_action(GtkWidget *widget, const char *name, GVariant *param) {
    AtnWindow *self = ATN_WINDOW(widget);
    lesson_panel *p = panel_of(self);
    if (!p->lesson)
        return;
    if (!strcmp(name, "win.lesson-next"))
        atn_window_lesson_go(self, p->index + 1);
    else if (!strcmp(name, "win.lesson-back"))
        atn_window_lesson_go(self, p->index - 1);
    else
        atn_window_lesson_reveal(self);
}

/* The Lessons submenu: each built-in lesson by its title in the interface's language. */
void _atn_window_fill_lessons_menu(AtnWindow *self, GMenu *menu) {
    g_menu_remove_all(menu);
    g_autoptr(GMenu) builtin = g_menu_new();
    g_auto(GStrv) paths = atn_lesson_builtin_paths();
    for (char **p = paths; p && *p; p++) {
        g_autoptr(AtnLesson) l = atn_lesson_load(*p, atn_gui_language(), NULL);
        if (!l)
            continue;   /* a broken built-in lesson is the package's fault: left out (the lessons test catches it) */
        g_autoptr(GMenuItem) item = g_menu_item_new(l->title, NULL);
        g_menu_item_set_action_and_target_value(item, "win.lesson", g_variant_new_string(*p));
        g_menu_append_item(builtin, item);
    }
    g_menu_append_section(menu, NULL, G_MENU_MODEL(builtin));
    g_autoptr(GMenu) open = g_menu_new();
    g_menu_append(open, _("Open _Lesson File…"), "win.open-lesson");
    g_menu_append_section(menu, NULL, G_MENU_MODEL(open));
}

void _atn_window_class_lessons_init(GtkWidgetClass *wc) {
    gtk_widget_class_install_action(wc, "win.lesson", "s", lesson_action);
    gtk_widget_class_install_action(wc, "win.open-lesson", NULL, open_lesson_action);
    gtk_widget_class_install_action(wc, "win.lesson-next", NULL, lesson_nav_action);
    gtk_widget_class_install_action(wc, "win.lesson-back", NULL, lesson_nav_action);
    gtk_widget_class_install_action(wc, "win.lesson-reveal", NULL, lesson_nav_action);
}

void _atn_window_lessons_init(AtnWindow *self) { build_panel(self); }

GMenuModel *atn_window_get_lessons_menu(AtnWindow *self) { return G_MENU_MODEL(self->lessons_menu); }

/* AtnApplication: application actions, accelerators, stylesheet, translations. */
#include "atn-application.h"
#include "atn-memory-limit.h"

#include <glib/gi18n.h>
#include <pango/pangocairo.h>
#include <locale.h>
#include <string.h>

#include "atn-color-scheme.h"
#include "atn-preferences-dialog.h"
#include "atn-session.h"
#include "atn-lesson.h"
#include "atn-session-file.h"
#include "atn-window.h"
#include "attnscope.h"
#include "corpus-stats.h"
#include "render.h"
#include "config.h"

struct _AtnApplication {
    GtkApplication parent_instance;
    char *opt_model, *opt_text, *opt_view;
    char *opt_attention;        /* an attention file to show (attnscope view FILE) */
    char *opt_stats;            /* a merged corpus statistics file to show (attnscope view FILE) */
    char *opt_session;          /* a session file to open (--session, attnscope FILE) */
    char *opt_lesson;           /* a lesson file to start (--lesson) */
    int opt_layer, opt_head;    /* -1: not given */
    int32_t *opt_ids;           /* --ids / --tokens: the input as token ids (random:SHAPE has no
                                   tokenizer), opt_n_ids of them; NULL: the text */
    int opt_n_ids;
};

G_DEFINE_FINAL_TYPE(AtnApplication, atn_application, GTK_TYPE_APPLICATION)

static const char *render_translate(const char *msgid) { return g_dgettext(GETTEXT_PACKAGE, msgid); }

void atn_gui_init_i18n(void) {
    static gboolean done;
    if (done)
        return;
    done = TRUE;
    setlocale(LC_ALL, "");
    const char *dir = g_getenv("ATTNSCOPE_LOCALEDIR");
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (!dir && exe && g_str_has_prefix(exe, ATN_BUILD_DIR "/"))
        dir = ATN_BUILD_LOCALEDIR;
    bindtextdomain(GETTEXT_PACKAGE, dir ? dir : ATN_LOCALEDIR);
    bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
    textdomain(GETTEXT_PACKAGE);
    atn_render_set_translator(render_translate);   /* exported figures speak the window's language */
    /* Han characters in the face of the interface's language (Noto Sans CJK SC for zh-cn),
       on screen and in exported files, even where the locale alone (C.UTF-8) says nothing */
    const char *lang = atn_gui_language();
    if (strcmp(lang, "en") != 0)
        atn_render_set_language(lang);
}

const char *atn_gui_language(void) {
    /* TRANSLATORS: the language tag of this translation (BCP 47, as Pango reads it:
       zh-cn for Simplified Chinese); it picks the face of Han characters in figures */
    return g_dpgettext2(GETTEXT_PACKAGE, "language tag", "en");
}

void atn_gui_load_css(void) {
    static gboolean done;
    GdkDisplay *display = gdk_display_get_default();
    if (done || !display)
        return;
    done = TRUE;
    GtkCssProvider *css = gtk_css_provider_new();
    gtk_css_provider_load_from_resource(css, "/io/github/attnscope/Attnscope/style.css");
    gtk_style_context_add_provider_for_display(display, GTK_STYLE_PROVIDER(css),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_unref(css);
    /* In a Chinese interface Han characters in the widgets take the language's face too:
       GTK shapes with the locale's language (none in C.UTF-8), and fontconfig's first CJK
       face is Noto Sans CJK JP.  The interface font, then the face that font picks for 国
       in the interface's language, as the window's family list (monospace text keeps its
       own family). */
    const char *lang = atn_gui_language();
    if (strcmp(lang, "en") != 0) {
        g_autofree char *font = NULL;
        g_object_get(gtk_settings_get_for_display(display), "gtk-font-name", &font, NULL);
        PangoFontDescription *fd = pango_font_description_from_string(font && *font ? font : "Sans 10");
        PangoContext *ctx = pango_font_map_create_context(pango_cairo_font_map_get_default());
        /* the face the interface font is for Latin text ("Sans" is an alias: listed before
           a CJK family it would no longer be the first choice for Latin letters) */
        PangoFontset *latin_fs = pango_context_load_fontset(ctx, fd, pango_language_from_string("en"));
        PangoFont *latin = latin_fs ? pango_fontset_get_font(latin_fs, 'a') : NULL;
        PangoFontDescription *ld = latin ? pango_font_describe(latin) : NULL;
        g_autofree char *family = g_strdup(ld && pango_font_description_get_family(ld)
                                               ? pango_font_description_get_family(ld)
                                               : pango_font_description_get_family(fd) ? pango_font_description_get_family(fd)
                                                                                         : "Sans");
        if (ld)
            pango_font_description_free(ld);
        if (latin)
            g_object_unref(latin);
        if (latin_fs)
            g_object_unref(latin_fs);
        PangoFontset *fs = pango_context_load_fontset(ctx, fd, pango_language_from_string(lang));
        PangoFont *han = fs ? pango_fontset_get_font(fs, 0x56FD) : NULL;
        PangoFontDescription *hd = han ? pango_font_describe(han) : NULL;
        const char *han_family = hd ? pango_font_description_get_family(hd) : NULL;
        if (han_family && !strchr(han_family, '"') && !strchr(family, '"')) {
            g_autofree char *rule = g_strdup_printf("window { font-family: \"%s\", \"%s\", sans-serif; }", family,
                                                    han_family);
            GtkCssProvider *cjk = gtk_css_provider_new();
            gtk_css_provider_load_from_data(cjk, rule, -1);
            gtk_style_context_add_provider_for_display(display, GTK_STYLE_PROVIDER(cjk),
                                                       GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
            g_object_unref(cjk);
        }
        if (hd)
            pango_font_description_free(hd);
        if (han)
            g_object_unref(han);
        if (fs)
            g_object_unref(fs);
        g_object_unref(ctx);
        pango_font_description_free(fd);
    }
    /* the app icon when running uninstalled (GtkApplication adds <base>/icons itself) */
    gtk_icon_theme_add_resource_path(gtk_icon_theme_get_for_display(display), "/io/github/attnscope/Attnscope/icons");
}

/* Closes the windows the way their close buttons do, so a window with unsaved toy-model
 * edits can ask first; the application ends with its last window. */
static void quit_activated(GSimpleAction *a, GVariant *p, gpointer app) {
    g_autoptr(GList) windows = g_list_copy(gtk_application_get_windows(GTK_APPLICATION(app)));
    for (GList *l = windows; l; l = l->next)
        gtk_window_close(GTK_WINDOW(l->data));
}

static void preferences_activated(GSimpleAction *a, GVariant *p, gpointer app) {
    GtkWindow *win = gtk_application_get_active_window(GTK_APPLICATION(app));
    gtk_window_present(GTK_WINDOW(atn_preferences_dialog_new(win)));
}

static void about_activated(GSimpleAction *a, GVariant *p, gpointer app) {
    static const char *authors[] = {"The attnscope authors", NULL};
    GtkWindow *win = gtk_application_get_active_window(GTK_APPLICATION(app));
    g_autofree char *version = g_strdup_printf("%s (OpenBLAS %s)", atn_version(), atn_blas_core_name());
    gtk_show_about_dialog(win, "program-name", "attnscope", "version", version, "comments",
                          _("See what every attention head of a transformer looks at, and work out its arithmetic."),
                          "logo-icon-name", ATN_APP_ID, "license-type", GTK_LICENSE_MIT_X11, "authors", authors,
                          "translator-credits", _("translator-credits"), "website",
                          "https://github.com/attnscope/attnscope", NULL);
}

static const GActionEntry app_entries[] = {
    {"quit", quit_activated, NULL, NULL, NULL},
    {"preferences", preferences_activated, NULL, NULL, NULL},
    {"about", about_activated, NULL, NULL, NULL},
};

static void atn_application_startup(GApplication *app) {
    G_APPLICATION_CLASS(atn_application_parent_class)->startup(app);
    g_action_map_add_action_entries(G_ACTION_MAP(app), app_entries, G_N_ELEMENTS(app_entries), app);
    struct { const char *action; const char *accels[3]; } accels[] = {
        {"app.quit", {"<Control>q", NULL}},
        {"app.preferences", {"<Control>comma", NULL}},
        {"win.presentation", {"F11", NULL}},
        {"win.show-help-overlay", {"<Control>question", "<Control>F1", NULL}},
        {"window.close", {"<Control>w", NULL}},
    };
    for (guint i = 0; i < G_N_ELEMENTS(accels); i++)
        gtk_application_set_accels_for_action(GTK_APPLICATION(app), accels[i].action, accels[i].accels);
    atn_gui_load_css();
    atn_color_scheme_follow_system();
}

static void atn_application_activate(GApplication *app) {
    AtnApplication *self = ATN_APPLICATION(app);
    GtkWindow *win = gtk_application_get_active_window(GTK_APPLICATION(app));
    if (!win) {
        AtnWindow *w = atn_window_new(GTK_APPLICATION(app), self->opt_model);
        if (self->opt_attention)   /* replaces the model the window started opening */
            atn_session_open_attention(atn_window_get_session(w), self->opt_attention);
        if (self->opt_stats)
            atn_window_open_stats(w, self->opt_stats);
        if (self->opt_session)   /* checked in handle_local_options: opens its model */
            atn_window_open_session(w, self->opt_session);
        if (self->opt_lesson)    /* checked there too: its first step sets the window */
            atn_window_open_lesson(w, self->opt_lesson);
        if (self->opt_text)
            atn_window_set_text(w, self->opt_text);
        if (self->opt_ids)
            atn_session_set_ids(atn_window_get_session(w), self->opt_ids, self->opt_n_ids);
        if (self->opt_view && !self->opt_stats)
            atn_window_show_view(w, self->opt_view);
        atn_window_start_on_head(w, self->opt_layer, self->opt_head);
        win = GTK_WINDOW(w);
    }
    gtk_window_present(win);
}

/* A second instance's --layer / --head for the file it handed over: applied (through
 * atn_window_start_on_head, so a head outside the file is said as at start-up) when that
 * file's result is shown, not to a result of the model before that comes in meanwhile;
 * dropped when the session reports an error first (the file refused).  Lives as long as its
 * two handlers on the session (freed with the result handler). */
typedef struct handover_head {
    GWeakRef win;
    char *path;
    int layer, head;
    gulong result_id, error_id;
} handover_head;

static void handover_head_free(gpointer data, GClosure *closure) {
    handover_head *h = data;
    g_weak_ref_clear(&h->win);
    g_free(h->path);
    g_free(h);
}

static void handover_head_done(AtnSession *s, handover_head *h) {
    g_signal_handler_disconnect(s, h->error_id);    /* no destroy notify */
    g_signal_handler_disconnect(s, h->result_id);   /* frees h */
}

static void handover_head_result(AtnSession *s, GParamSpec *p, handover_head *h) {
    AtnResult *r = atn_session_get_result(s);
    if (atn_session_get_opening(s) || !r ||
        g_strcmp0(atn_model_handle_get_source(atn_result_get_model(r)), h->path))
        return;
    AtnWindow *w = g_weak_ref_get(&h->win);
    int layer = h->layer, head = h->head;
    handover_head_done(s, h);
    if (w) {
        atn_window_start_on_head(w, layer, head);
        g_object_unref(w);
    }
}

static void handover_head_error(AtnSession *s, const char *message, handover_head *h) { handover_head_done(s, h); }

static void start_on_head_of(AtnWindow *w, const char *path, int layer, int head) {
    AtnSession *s = atn_window_get_session(w);
    /* a file handed over before this one no longer picks the head (its result handler frees it) */
    g_signal_handlers_disconnect_matched(s, G_SIGNAL_MATCH_FUNC, 0, 0, NULL, handover_head_error, NULL);
    g_signal_handlers_disconnect_matched(s, G_SIGNAL_MATCH_FUNC, 0, 0, NULL, handover_head_result, NULL);
    handover_head *h = g_new0(handover_head, 1);
    g_weak_ref_init(&h->win, w);
    h->path = g_strdup(path);
    h->layer = layer;
    h->head = head;
    h->result_id = g_signal_connect_data(s, "notify::result", G_CALLBACK(handover_head_result), h,
                                         handover_head_free, 0);
    h->error_id = g_signal_connect(s, "error", G_CALLBACK(handover_head_error), h);
}

/* The hint a second instance sends with its file: "attention" or "stats", then its window
 * options as ";view=NAME", ";layer=L", ";head=H" (checked before they were sent). */
static char *handover_hint(AtnApplication *self) {
    GString *hint = g_string_new(self->opt_attention ? "attention" : "stats");
    if (self->opt_view)
        g_string_append_printf(hint, ";view=%s", self->opt_view);
    if (self->opt_layer >= 0)
        g_string_append_printf(hint, ";layer=%d", self->opt_layer);
    if (self->opt_head >= 0)
        g_string_append_printf(hint, ";head=%d", self->opt_head);
    return g_string_free(hint, FALSE);
}

/* Files handed to the running window: a second instance's `attnscope view FILE [--view V]
 * [--layer L] [--head H]` (or a file manager's `attnscope FILE`) forwards its file and window
 * options here over D-Bus (handle_local_options, handover_hint) instead of opening a second
 * window.  hint "stats": a merged statistics file; else the file's content decides (a
 * statistics file by its magic, anything else an attention file).  The options apply to an
 * attention file as they do at start-up: the view now, the head once the file is shown. */
static void atn_application_open(GApplication *app, GFile **files, int n_files, const char *hint) {
    GtkWindow *win = gtk_application_get_active_window(GTK_APPLICATION(app));
    if (!win) {
        g_application_activate(app);
        win = gtk_application_get_active_window(GTK_APPLICATION(app));
    }
    if (!win)
        return;
    AtnWindow *w = ATN_WINDOW(win);
    g_auto(GStrv) parts = g_strsplit(hint ? hint : "", ";", -1);
    const char *view = NULL;
    int layer = -1, head = -1;
    for (int i = 1; parts[i]; i++) {   /* what handover_hint wrote; anything else is ignored */
        if (g_str_has_prefix(parts[i], "view=") && g_strv_contains(atn_window_get_view_names(), parts[i] + 5))
            view = parts[i] + 5;
        else if (g_str_has_prefix(parts[i], "layer="))
            layer = (int)CLAMP(g_ascii_strtoll(parts[i] + 6, NULL, 10), -1, G_MAXINT);
        else if (g_str_has_prefix(parts[i], "head="))
            head = (int)CLAMP(g_ascii_strtoll(parts[i] + 5, NULL, 10), -1, G_MAXINT);
    }
    for (int i = 0; i < n_files; i++) {   /* one window shows one file: the last wins */
        g_autofree char *path = g_file_get_path(files[i]);
        if (!path)
            continue;
        if (!g_strcmp0(parts[0], "stats") || atn_corpus_stats_sniff(path)) {
            atn_window_open_stats(w, path);
            continue;
        }
        atn_session_open_attention(atn_window_get_session(w), path);
        if (view)
            atn_window_show_view(w, view);
        if (layer >= 0 || head >= 0)
            start_on_head_of(w, path, layer, head);
    }
    gtk_window_present(win);
}

/* --ids 1,2,3 or --tokens N (N made-up ids, as the commands' --tokens make them: 101, then
 * 1000 + (i · 7919) mod (V − 1000), then 102; a random:SHAPE's vocabulary V) into opt_ids; a
 * random:SHAPE shorter than N positions is opened with N (random:SHAPE#N), as the commands do.
 * FALSE (the message printed): a bad list or count, both given, or with --text. */
static gboolean parse_ids(AtnApplication *self, GVariantDict *options) {
    const char *ids_s = NULL, *tokens_s = NULL;
    gboolean has_ids = g_variant_dict_lookup(options, "ids", "&s", &ids_s);
    gboolean has_tokens = g_variant_dict_lookup(options, "tokens", "&s", &tokens_s);
    if (!has_ids && !has_tokens)
        return TRUE;
    if ((has_ids && has_tokens) || self->opt_text) {
        g_printerr(_("attnscope: give one input: --text, --ids or --tokens\n"));
        return FALSE;
    }
    if (has_ids) {
        g_auto(GStrv) parts = g_strsplit(ids_s, ",", -1);
        int n = (int)g_strv_length(parts);
        self->opt_ids = g_new(int32_t, MAX(n, 1));
        for (int i = 0; i < n; i++) {
            char *end = NULL;
            gint64 v = g_ascii_strtoll(g_strstrip(parts[i]), &end, 10);
            if (!parts[i][0] || *end || v < 0 || v > G_MAXINT32) {
                g_printerr(_("attnscope: --ids is a comma-separated list of token ids (0 or more), not \"%s\"\n"),
                           ids_s);
                return FALSE;
            }
            self->opt_ids[i] = (int32_t)v;
        }
        self->opt_n_ids = n;
        return n > 0;
    }
    atn_config c;
    const char *m = self->opt_model;
    g_autofree char *shape = NULL;
    if (m && g_str_has_prefix(m, ATN_RANDOM_PREFIX)) {
        shape = g_strdup(m + strlen(ATN_RANDOM_PREFIX));
        shape[strcspn(shape, "@#")] = 0;
    }
    if (!shape || atn_random_shape_config(shape, &c, NULL) != ATN_OK) {
        g_printerr(_("attnscope: --tokens N makes up ids for a random:SHAPE model (e.g. --model random:gpt2); give "
                     "another model --text or --ids\n"));
        return FALSE;
    }
    char *end = NULL;
    gint64 tokens = g_ascii_strtoll(tokens_s, &end, 10);
    if (!tokens_s[0] || *end || tokens < 1 || tokens > 1000000) {
        g_printerr(_("attnscope: --tokens must be an integer in 1..1000000, not \"%s\"\n"), tokens_s);
        return FALSE;
    }
    self->opt_ids = g_new(int32_t, tokens);
    self->opt_n_ids = (int)tokens;
    int32_t V = c.vocab_size;
    for (int i = 0; i < (int)tokens; i++)
        self->opt_ids[i] = V > 2000 ? (i == 0 ? 101 : i == (int)tokens - 1 ? 102 : 1000 + (int32_t)(((int64_t)i * 7919) % (V - 1000)))
                                    : i % V;
    if (tokens > c.max_positions && !strchr(m, '#')) {   /* more positions, as the commands' --tokens */
        char *grown = g_strdup_printf("%s#%d", m, (int)tokens);
        g_free(self->opt_model);
        self->opt_model = grown;
    }
    return TRUE;
}

static int atn_application_handle_local_options(GApplication *app, GVariantDict *options) {
    AtnApplication *self = ATN_APPLICATION(app);
    g_variant_dict_lookup(options, "model", "s", &self->opt_model);
    g_variant_dict_lookup(options, "text", "s", &self->opt_text);
    g_variant_dict_lookup(options, "view", "s", &self->opt_view);
    g_variant_dict_lookup(options, "attention", "^ay", &self->opt_attention);
    g_variant_dict_lookup(options, "stats", "^ay", &self->opt_stats);
    g_variant_dict_lookup(options, "session", "^ay", &self->opt_session);
    g_variant_dict_lookup(options, "lesson", "^ay", &self->opt_lesson);
    if (self->opt_lesson) {   /* a bad lesson file exits 2 naming the file, the step and the key */
        GError *error = NULL;
        AtnLesson *lesson = atn_lesson_load(self->opt_lesson, atn_gui_language(), &error);
        if (!lesson) {
            g_printerr("attnscope: %s\n", error->message);
            g_error_free(error);
            return 2;
        }
        atn_lesson_free(lesson);
    }
    if (!parse_ids(self, options))
        return 2;
    g_variant_dict_lookup(options, "layer", "i", &self->opt_layer);
    g_variant_dict_lookup(options, "head", "i", &self->opt_head);
    const char *limit = NULL;
    if (g_variant_dict_lookup(options, "memory-limit", "&s", &limit)) {
        size_t bytes = 0;
        if (!atn_ui_parse_size(limit, &bytes)) {
            g_printerr(_("attnscope: --memory-limit must be a size such as 800M, 2G or 1500000000 (bytes), not "
                         "\"%s\"\n"), limit);
            return 2;
        }
        atn_ui_set_memory_limit(bytes);
    }
    if (self->opt_layer < -1 || self->opt_head < -1) {
        g_printerr(_("attnscope: --layer and --head count from 0\n"));
        return 2;
    }
    if (self->opt_session) {   /* a bad session file exits 2 naming the file and the key */
        AtnSessionState st;
        atn_session_state_init(&st);
        GError *error = NULL;
        gboolean ok = atn_session_file_load(self->opt_session, &st, &error) &&
                      atn_session_state_check_model(&st, self->opt_session, &error);
        atn_session_state_clear(&st);
        if (!ok) {
            g_printerr("attnscope: %s\n", error->message);
            g_error_free(error);
            return 2;
        }
        if (self->opt_model || self->opt_text || self->opt_attention) {
            g_printerr(_("attnscope: --session %s: the session names its model and text; leave out --model, --text and --attention\n"),
                       self->opt_session);
            return 2;
        }
    }
    if (self->opt_view && !g_strv_contains(atn_window_get_view_names(), self->opt_view)) {
        g_autofree char *views = g_strjoinv(", ", (char **)atn_window_get_view_names());
        g_printerr(_("attnscope: --view %s: no such view; the views are %s\n"), self->opt_view, views);
        return 2;
    }
    /* a file while a window is already running: hand it over, as GNOME applications do */
    const char *file = self->opt_attention ? self->opt_attention : self->opt_stats;
    g_autoptr(GError) error = NULL;
    if (file && g_application_register(app, NULL, &error) && g_application_get_is_remote(app)) {
        g_autoptr(GFile) gf = g_file_new_for_commandline_arg(file);
        g_autofree char *hint = handover_hint(self);
        g_application_open(app, &gf, 1, hint);
        GDBusConnection *bus = g_application_get_dbus_connection(app);
        if (bus)
            g_dbus_connection_flush_sync(bus, NULL, NULL);
        return 0;
    }
    return -1;
}

static void atn_application_finalize(GObject *object) {
    AtnApplication *self = ATN_APPLICATION(object);
    g_free(self->opt_model);
    g_free(self->opt_text);
    g_free(self->opt_ids);
    g_free(self->opt_view);
    g_free(self->opt_attention);
    g_free(self->opt_stats);
    g_free(self->opt_session);
    g_free(self->opt_lesson);
    G_OBJECT_CLASS(atn_application_parent_class)->finalize(object);
}

static void atn_application_class_init(AtnApplicationClass *klass) {
    G_OBJECT_CLASS(klass)->finalize = atn_application_finalize;
    GApplicationClass *ac = G_APPLICATION_CLASS(klass);
    ac->startup = atn_application_startup;
    ac->activate = atn_application_activate;
    ac->handle_local_options = atn_application_handle_local_options;
    ac->open = atn_application_open;
}

static void atn_application_init(AtnApplication *self) {
    static const GOptionEntry entries[] = {
        {"model", 'm', 0, G_OPTION_ARG_STRING, NULL, N_("Open this model (a built-in name, a toy JSON file, a "
                                                        "Hugging Face folder, or org/name[@revision] from the "
                                                        "Hugging Face cache)"), N_("MODEL")},
        {"text", 't', 0, G_OPTION_ARG_STRING, NULL, N_("Start with this sentence (\"a ||| b\" for a pair)"),
         N_("TEXT")},
        {"ids", 0, 0, G_OPTION_ARG_STRING, NULL, N_("Start with these token ids (a model without a tokenizer, such "
                                                    "as random:gpt2)"), N_("1,2,3")},
        {"tokens", 0, 0, G_OPTION_ARG_STRING, NULL, N_("Start with N made-up token ids on a random:SHAPE model, as the "
                                                    "commands' --tokens"), N_("N")},
        {"attention", 0, 0, G_OPTION_ARG_FILENAME, NULL, N_("Show this attention file (computed elsewhere; "
                                                             "docs/attention-file.md) instead of a model"),
         N_("FILE")},
        {"stats", 0, 0, G_OPTION_ARG_FILENAME, NULL, N_("Show this merged corpus statistics file (attnscope stats "
                                                         "merge) in the Statistics view"), N_("FILE")},
        {"session", 0, 0, G_OPTION_ARG_FILENAME, NULL, N_("Open this session file (File → Save Session…; "
                                                           "docs/session-file.md): its model, text, view and head"),
         N_("FILE")},
        {"lesson", 0, 0, G_OPTION_ARG_FILENAME, NULL, N_("Start this lesson file (docs/lessons.md): its first "
                                                          "step, with the lesson panel"),
         N_("FILE")},
        {"view", 0, 0, G_OPTION_ARG_STRING, NULL, N_("Start on this view: head, model, similarity, trace, statistics, whatif or train"),
         N_("VIEW")},
        {"layer", 0, 0, G_OPTION_ARG_INT, NULL, N_("Start on this layer (from 0; default: the clearest head's)"),
         N_("L")},
        {"head", 0, 0, G_OPTION_ARG_INT, NULL, N_("Start on this head (from 0; default: the head with the clearest "
                                                  "pattern)"), N_("H")},
        {"memory-limit", 0, 0, G_OPTION_ARG_STRING, NULL, N_("Bound each run's memory (e.g. 800M, 2G; default: "
                                                             "physical memory and any cgroup limit): a run whose "
                                                             "attention does not fit makes each head on demand"),
         N_("SIZE")},
        {NULL},
    };
    self->opt_layer = self->opt_head = -1;
    g_application_add_main_option_entries(G_APPLICATION(self), entries);
}

AtnApplication *atn_application_new(void) {
    return g_object_new(ATN_TYPE_APPLICATION, "application-id", ATN_APP_ID, "resource-base-path",
                        "/io/github/attnscope/Attnscope", "flags", G_APPLICATION_HANDLES_OPEN, NULL);
}

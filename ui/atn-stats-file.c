/* A merged corpus statistics file in the window: read in a worker, and the panel of the
 * Statistics view that shows its head grid and examples (atn-stats-file.h). */
#include "atn-stats-file.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render.h"

/* ---- the file ----------------------------------------------------------------------------------- */

struct AtnStatsFile {
    gint refs;
    char *path;
    atn_corpus_stats *cs;
    atn_stats *means;
    const char **labels;    /* [L*H], translated, static */
    char **why;             /* [L*H] the figure behind each label (translated: atn_stats_file_explain) */
    char *corpus_path;      /* found beside the file (the corpus, or the @LIST's list), or NULL */
    GHashTable *lines;      /* int64 line -> char* text: the exemplars' lines */
};

AtnStatsFile *atn_stats_file_ref(AtnStatsFile *file) {
    g_atomic_int_inc(&file->refs);
    return file;
}

void atn_stats_file_unref(AtnStatsFile *file) {
    if (!file || !g_atomic_int_dec_and_test(&file->refs))
        return;
    int count = file->means ? file->means->n_layers * file->means->n_heads : 0;
    for (int c = 0; file->why && c < count; c++)
        g_free(file->why[c]);
    g_free(file->why);
    g_free(file->labels);
    atn_stats_free(file->means);
    atn_corpus_stats_free(file->cs);
    g_free(file->path);
    g_free(file->corpus_path);
    if (file->lines)
        g_hash_table_unref(file->lines);
    g_free(file);
}

const atn_corpus_stats *atn_stats_file_get_stats(const AtnStatsFile *file) { return file->cs; }
const atn_stats *atn_stats_file_get_means(const AtnStatsFile *file) { return file->means; }
const char *atn_stats_file_get_path(const AtnStatsFile *file) { return file->path; }
const char *atn_stats_file_get_corpus_path(const AtnStatsFile *file) { return file->corpus_path; }

const char *atn_stats_file_get_label(const AtnStatsFile *file, int c) {
    int count = file->means->n_layers * file->means->n_heads;
    return c >= 0 && c < count ? file->labels[c] : "";
}

const char *atn_stats_file_get_line(const AtnStatsFile *file, int64_t line) {
    return file->lines ? g_hash_table_lookup(file->lines, &line) : NULL;
}

const char *atn_stats_file_translate_label(const char *label) {
    static const struct { const char *en; const char *tr; } labels[] = {
        {"previous token", NC_("corpus label", "previous token")}, {"next token", NC_("corpus label", "next token")},
        {"self", NC_("corpus label", "self")}, {"sink", NC_("corpus label", "sink")},
        {"delimiter", NC_("corpus label", "delimiter")}, {"local window", NC_("corpus label", "local window")},
        {"broad", NC_("corpus label", "broad")}, {"mixed", NC_("corpus label", "mixed")},
        {"induction", NC_("corpus label", "induction")}, {"positional", NC_("corpus label", "positional")},
    };
    for (size_t i = 0; label && i < G_N_ELEMENTS(labels); i++)
        if (!strcmp(label, labels[i].en))
            return g_dpgettext2(NULL, "corpus label", labels[i].tr);
    return label ? label : "";
}

char *atn_stats_file_explain(const atn_cs_label_info *in) {
    long long sentences = (long long)in->sentences, rows = (long long)in->rows;
    char *text = NULL;
    switch (in->kind) {
    case ATN_CS_LABEL_INDUCTION:
        text = g_strdup_printf(_("mean induction share %.3f over %lld sentences (the weight on the token after an "
                                 "earlier copy of the query's pair)"), in->value, sentences);
        break;
    case ATN_CS_LABEL_PREVIOUS:
        text = g_strdup_printf(_("mean weight %.3f on the previous token over %lld sentences (sd %.3f)"), in->value,
                               sentences, in->value2);
        break;
    case ATN_CS_LABEL_NEXT:
        text = g_strdup_printf(_("mean weight %.3f on the next token over %lld sentences (sd %.3f)"), in->value,
                               sentences, in->value2);
        break;
    case ATN_CS_LABEL_SELF:
        text = g_strdup_printf(_("mean weight %.3f on itself over %lld sentences (sd %.3f)"), in->value, sentences,
                               in->value2);
        break;
    case ATN_CS_LABEL_POSITIONAL:
        text = in->offset < 0
                   ? g_strdup_printf(_("mean weight %.3f on the token %d before the query (offset %+d) over %lld "
                                       "query rows"), in->value, -in->offset, in->offset, rows)
                   : g_strdup_printf(_("mean weight %.3f on the token %d after the query (offset %+d) over %lld "
                                       "query rows"), in->value, in->offset, in->offset, rows);
        break;
    case ATN_CS_LABEL_SINK:
        text = g_strdup_printf(_("%.0f%% of %lld query rows put 0.5 or more on the first token"), 100 * in->value,
                               rows);
        break;
    case ATN_CS_LABEL_DELIMITER:
        text = g_strdup_printf(_("mean weight %.3f on [SEP] and %.3f on punctuation over %lld sentences"), in->value,
                               in->value2, sentences);
        break;
    case ATN_CS_LABEL_LOCAL:
        text = in->has_offsets
                   ? g_strdup_printf(_("mean weight %.3f within 2 tokens of the query (offsets -2..+2) over %lld "
                                       "query rows"), in->value, rows)
                   : g_strdup_printf(_("%.0f%% of %lld query rows attend within a mean distance of 2 tokens"),
                                     100 * in->value, rows);
        break;
    case ATN_CS_LABEL_BROAD:
        text = g_strdup_printf(_("mean normalised entropy %.3f over %lld sentences"), in->value, sentences);
        break;
    case ATN_CS_LABEL_MIXED:
        text = g_strdup_printf(_("no figure passes its threshold over %lld sentences"), sentences);
        break;
    }
    if (!text)
        text = g_strdup("");
    if (!in->has_offsets) {
        g_autofree char *old = text;
        text = g_strdup_printf("%s %s", old, _("(no per-offset sums in this partial: positional labels not tested)"));
    }
    return text;
}

char *atn_stats_file_describe(const AtnStatsFile *file) {
    const atn_cs_identity *id = atn_corpus_stats_identity(file->cs);
    int64_t sentences = 0, first[1], last[1];
    atn_corpus_stats_counts(file->cs, &sentences, NULL, NULL, NULL, NULL);
    int32_t n_ranges = atn_corpus_stats_ranges(file->cs, first, last, 1);
    int32_t n_missing = atn_corpus_stats_missing(file->cs, NULL, NULL, 0);
    g_autofree char *base = g_path_get_basename(file->path);
    g_autofree char *covered = NULL;
    if (n_ranges == 1 && n_missing == 0)
        covered = g_strdup_printf(_("every line of %lld"), (long long)id->corpus_lines);
    else
        /* Translators: lines of a corpus a merged file covers, e.g. "3 ranges of 20000 lines, 2 missing" */
        covered = g_strdup_printf(_("%d ranges of %lld lines, %d missing"), (int)n_ranges, (long long)id->corpus_lines,
                                  (int)n_missing);
    if (*id->query_role || *id->key_role) {
        /* Translators: a partial's role filters (--query-role, --key-role), the roles as typed: word, special... */
        g_autofree char *roles = g_strdup_printf(_("queries: %s · keys: %s"), *id->query_role ? id->query_role : "any",
                                                 *id->key_role ? id->key_role : "any");
        g_autofree char *with = g_strdup_printf("%s · %s", covered, roles);
        g_free(covered);
        covered = g_steal_pointer(&with);
    }
    /* Translators: “all.safetensors”: 1,234 sentences of “corpus.txt” (every line of 2000) · demo · fp32 */
    return g_strdup_printf(_("“%s”: %lld sentences of “%s” (%s) · %s · %s. Per sentence the mean over its query "
                             "tokens, then the mean over sentences; the labels read the whole corpus's evidence."),
                           base, (long long)sentences, id->corpus, covered, id->model, id->precision);
}

typedef struct load_job {
    char *path;
    gint *permille;
} load_job;

static void load_job_free(gpointer p) {
    load_job *j = p;
    g_free(j->path);
    g_free(j);
}

static void free_line_key(gpointer p) { g_free(p); }

/* The exemplars' lines of the corpus beside the file: the files `corpus` (n of them, numbered as
 * one corpus, file after file, as `stats --corpus @LIST` numbers them).  NULL when one is missing
 * or not a regular file, or the line count is not the one recorded. */
static GHashTable *read_lines(AtnStatsFile *file, char **corpus, int n_files, gint *permille, GCancellable *cancel) {
    const atn_cs_identity *id = atn_corpus_stats_identity(file->cs);
    g_autoptr(GHashTable) want = g_hash_table_new_full(g_int64_hash, g_int64_equal, free_line_key, g_free);
    for (int32_t l = 0; l < id->n_layers; l++)
        for (int32_t h = 0; h < id->n_heads; h++) {
            const atn_cs_exemplar *ex = NULL;
            int32_t n = atn_corpus_stats_exemplars(file->cs, l, h, &ex);
            for (int32_t i = 0; i < n; i++)
                if (!g_hash_table_contains(want, &ex[i].line))
                    g_hash_table_insert(want, g_memdup2(&ex[i].line, sizeof ex[i].line), NULL);
        }
    double size = 0;
    for (int i = 0; i < n_files; i++) {
        GStatBuf sb;
        if (g_stat(corpus[i], &sb) != 0 || !S_ISREG(sb.st_mode))
            return NULL;
        size += (double)sb.st_size;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int64_t no = 0;
    double done = 0, next_check = 0;
    for (int fi = 0; fi < n_files && !g_cancellable_is_cancelled(cancel); fi++) {
    FILE *f = fopen(corpus[fi], "rb");
    if (!f) {
        free(line);
        return NULL;
    }
    while ((got = getline(&line, &cap, f)) >= 0) {
        no++;
        done += (double)got;
        if (done >= next_check) {
            next_check = done + 65536;
            g_atomic_int_set(permille, size > 0 ? (gint)(1000 * done / size) : 0);
            if (g_cancellable_is_cancelled(cancel))
                break;
        }
        if (g_hash_table_contains(want, &no)) {
            if (got > 0 && line[got - 1] == '\n')
                line[--got] = 0;
            if (got > 0 && line[got - 1] == '\r')
                line[--got] = 0;
            g_hash_table_replace(want, g_memdup2(&no, sizeof no), g_strndup(line, (gsize)got));
        }
    }
    fclose(f);
    }
    free(line);
    if (no != id->corpus_lines || g_cancellable_is_cancelled(cancel))
        return NULL;   /* another file of that name: its lines would not be the exemplars' */
    return g_steal_pointer(&want);
}

/* The files a corpus list names (as `stats --corpus @LIST` reads it: one a line, relative to the
 * list's folder unless absolute, blank and '#' lines skipped); NULL when it cannot be read. */
static GStrv list_files(const char *list) {
    g_autofree char *text = NULL;
    if (!g_file_get_contents(list, &text, NULL, NULL))
        return NULL;
    g_autofree char *folder = g_path_get_dirname(list);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    GPtrArray *out = g_ptr_array_new();
    for (int i = 0; lines[i]; i++) {
        char *l = lines[i];
        size_t len = strlen(l);
        while (len > 0 && l[len - 1] == '\r')
            l[--len] = 0;
        if (!len || l[0] == '#')
            continue;
        g_ptr_array_add(out, g_path_is_absolute(l) ? g_strdup(l) : g_build_filename(folder, l, NULL));
    }
    g_ptr_array_add(out, NULL);
    return (GStrv)g_ptr_array_free(out, FALSE);
}

static void load_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancel) {
    load_job *j = data;
    atn_error err = {0};
    g_atomic_int_set(j->permille, -1);
    AtnStatsFile *file = g_new0(AtnStatsFile, 1);
    file->refs = 1;
    file->path = g_strdup(j->path);
    file->cs = atn_corpus_stats_load(j->path, &err);
    if (!file->cs || atn_corpus_stats_means(file->cs, &file->means, &err) != ATN_OK) {
        atn_stats_file_unref(file);
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", err.message);
        return;
    }
    int count = file->means->n_layers * file->means->n_heads;
    file->labels = g_new0(const char *, count);
    file->why = g_new0(char *, count);
    for (int c = 0; c < count; c++) {
        atn_cs_label_info in;
        bool any = atn_corpus_stats_label_info(file->cs, c / file->means->n_heads, c % file->means->n_heads, &in);
        file->labels[c] = any ? atn_stats_file_translate_label(in.label) : "";
        file->why[c] = any ? atn_stats_file_explain(&in) : g_strdup("");
    }
    if (g_task_return_error_if_cancelled(task)) {
        atn_stats_file_unref(file);
        return;
    }
    g_autofree char *folder = g_path_get_dirname(j->path);
    const char *corpus = atn_corpus_stats_identity(file->cs)->corpus;
    g_autofree char *beside = NULL;
    g_auto(GStrv) files = NULL;
    if (corpus[0] == '@') {   /* "@LIST (N files, HASH)": the list beside the file, its files beside it */
        const char *end = strstr(corpus, " (");
        g_autofree char *name = g_strndup(corpus + 1, end ? (gsize)(end - corpus - 1) : strlen(corpus + 1));
        beside = g_build_filename(folder, name, NULL);
        files = list_files(beside);
    } else if (*corpus) {
        beside = g_build_filename(folder, corpus, NULL);
        files = g_new0(char *, 2);
        files[0] = g_strdup(beside);
    }
    if (files && files[0]) {
        file->lines = read_lines(file, files, (int)g_strv_length(files), j->permille, cancel);
        if (file->lines)
            file->corpus_path = g_steal_pointer(&beside);
    }
    if (g_task_return_error_if_cancelled(task)) {
        atn_stats_file_unref(file);
        return;
    }
    g_task_return_pointer(task, file, (GDestroyNotify)atn_stats_file_unref);
}

void atn_stats_file_load_async(GObject *source, const char *path, gint *permille, GCancellable *cancel,
                               GAsyncReadyCallback callback, gpointer user_data) {
    GTask *task = g_task_new(source, cancel, callback, user_data);
    load_job *j = g_new0(load_job, 1);
    j->path = g_strdup(path);
    j->permille = permille;
    g_task_set_task_data(task, j, load_job_free);
    g_task_set_return_on_cancel(task, FALSE);
    g_task_run_in_thread(task, load_thread);
    g_object_unref(task);
}

AtnStatsFile *atn_stats_file_load_finish(GAsyncResult *result, GError **error) {
    return g_task_propagate_pointer(G_TASK(result), error);
}

/* ---- the panel ------------------------------------------------------------------------------------ */

struct _AtnStatsFilePanel {
    GtkWidget parent_instance;
    GtkWidget *box;
    GtkDropDown *statistic_menu;
    GtkDrawingArea *grid;
    GtkLabel *examples_title, *note;
    GtkListBox *examples;
    AtnStatsFile *file;
    int statistic;          /* what the grid is coloured by */
    int layer, head;        /* the selected head */
    double vmin, vmax;      /* the statistic's range over the heads */
    GPtrArray *texts;       /* the examples' texts as listed (plain) */
};

G_DEFINE_FINAL_TYPE(AtnStatsFilePanel, atn_stats_file_panel, GTK_TYPE_WIDGET)

enum { SIGNAL_HEAD_SELECTED, SIGNAL_EXEMPLAR_ACTIVATED, N_PANEL_SIGNALS };
static guint panel_signals[N_PANEL_SIGNALS];

/* atn_head_stats's order, as the partials keep them */
static const char *statistic_name(int s) {
    static const char *const names[ATN_CS_STATS] = {
        N_("Entropy (bits)"), N_("Entropy (normalised)"), N_("→ [CLS]"), N_("→ [SEP]"), N_("→ punctuation"),
        N_("→ itself"), N_("→ previous"), N_("→ next"), N_("Within 2 tokens"), N_("Same segment"), N_("Distance"),
    };
    return s >= 0 && s < ATN_CS_STATS ? _(names[s]) : "";
}

enum { GRID_LEFT = 34, GRID_TOP = 18, GRID_CELL_MAX = 28 };

static void grid_geometry(AtnStatsFilePanel *self, int width, int height, double *cell) {
    const atn_cs_identity *id = atn_corpus_stats_identity(self->file->cs);
    double cw = (width - GRID_LEFT - 2.0) / id->n_heads, ch = (height - GRID_TOP - 2.0) / id->n_layers;
    *cell = MAX(2.0, MIN(GRID_CELL_MAX, MIN(cw, ch)));
}

static double head_value(AtnStatsFilePanel *self, int layer, int head) {
    double mean = 0, sd, mn, mx;
    atn_corpus_stats_spread(self->file->cs, layer, head, self->statistic, &mean, &sd, &mn, &mx);
    return mean;
}

static void value_rgb(AtnStatsFilePanel *self, double v, double rgb[3]) {
    double t = self->vmax > self->vmin ? (v - self->vmin) / (self->vmax - self->vmin) : 0.5;
    atn_colormap_rgb(ATN_CMAP_VIRIDIS, t, rgb);
}

static void update_range(AtnStatsFilePanel *self) {
    self->vmin = INFINITY, self->vmax = -INFINITY;
    const atn_cs_identity *id = atn_corpus_stats_identity(self->file->cs);
    for (int l = 0; l < id->n_layers; l++)
        for (int h = 0; h < id->n_heads; h++) {
            double v = head_value(self, l, h);
            self->vmin = MIN(self->vmin, v), self->vmax = MAX(self->vmax, v);
        }
}

static void draw_grid(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data) {
    AtnStatsFilePanel *self = data;
    if (!self->file)
        return;
    const atn_cs_identity *id = atn_corpus_stats_identity(self->file->cs);
    double cell;
    grid_geometry(self, width, height, &cell);
    GdkRGBA fg;
    gtk_style_context_get_color(gtk_widget_get_style_context(GTK_WIDGET(area)), &fg);
    PangoLayout *layout = gtk_widget_create_pango_layout(GTK_WIDGET(area), NULL);
    PangoFontDescription *font = pango_font_description_from_string("Sans 8");
    pango_layout_set_font_description(layout, font);
    pango_font_description_free(font);
    gdk_cairo_set_source_rgba(cr, &fg);
    /* numbers that fit: every head's when its widest number does, else every 2nd, 4th ... */
    char widest[16];
    g_snprintf(widest, sizeof widest, "%d", MAX(id->n_heads, id->n_layers) - 1);
    pango_layout_set_text(layout, widest, -1);
    int ww, wh;
    pango_layout_get_pixel_size(layout, &ww, &wh);
    int step = 1, lstep = 1;   /* heads across (width), layers down (height) */
    while (step * cell < ww + 4 && step < 64)
        step *= 2;
    while (lstep * cell < wh && lstep < 64)
        lstep *= 2;
    for (int l = 0; l < id->n_layers; l += lstep) {
        char t[16];
        g_snprintf(t, sizeof t, "L%d", l);
        pango_layout_set_text(layout, t, -1);
        int tw, th;
        pango_layout_get_pixel_size(layout, &tw, &th);
        cairo_move_to(cr, GRID_LEFT - 4 - tw, GRID_TOP + (l + 0.5) * cell - th / 2.0);
        pango_cairo_show_layout(cr, layout);
    }
    for (int h = 0; h < id->n_heads; h += step) {
        char t[16];
        g_snprintf(t, sizeof t, "%d", h);
        pango_layout_set_text(layout, t, -1);
        int tw, th;
        pango_layout_get_pixel_size(layout, &tw, &th);
        cairo_move_to(cr, GRID_LEFT + (h + 0.5) * cell - tw / 2.0, GRID_TOP - 2 - th);
        pango_cairo_show_layout(cr, layout);
    }
    g_object_unref(layout);
    for (int l = 0; l < id->n_layers; l++)
        for (int h = 0; h < id->n_heads; h++) {
            double rgb[3];
            value_rgb(self, head_value(self, l, h), rgb);
            cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
            cairo_rectangle(cr, GRID_LEFT + h * cell, GRID_TOP + l * cell, cell - (cell > 6 ? 1 : 0),
                            cell - (cell > 6 ? 1 : 0));
            cairo_fill(cr);
        }
    gdk_cairo_set_source_rgba(cr, &fg);
    cairo_set_line_width(cr, 2);
    cairo_rectangle(cr, GRID_LEFT + self->head * cell - 1, GRID_TOP + self->layer * cell - 1, cell + 1, cell + 1);
    cairo_stroke(cr);
}

static gboolean grid_head_at(AtnStatsFilePanel *self, double x, double y, int *layer, int *head) {
    if (!self->file)
        return FALSE;
    const atn_cs_identity *id = atn_corpus_stats_identity(self->file->cs);
    double cell;
    grid_geometry(self, gtk_widget_get_width(GTK_WIDGET(self->grid)), gtk_widget_get_height(GTK_WIDGET(self->grid)),
                  &cell);
    int h = (int)floor((x - GRID_LEFT) / cell), l = (int)floor((y - GRID_TOP) / cell);
    if (x < GRID_LEFT || y < GRID_TOP || h >= id->n_heads || l >= id->n_layers)
        return FALSE;
    *layer = l, *head = h;
    return TRUE;
}

static void on_grid_click(GtkGestureClick *g, int n, double x, double y, AtnStatsFilePanel *self) {
    int l, h;
    if (!grid_head_at(self, x, y, &l, &h))
        return;
    atn_stats_file_panel_select_head(self, l, h);
    g_signal_emit(self, panel_signals[SIGNAL_HEAD_SELECTED], 0, l, h);
}

static gboolean on_grid_tooltip(GtkWidget *w, int x, int y, gboolean kb, GtkTooltip *tip, AtnStatsFilePanel *self) {
    int l, h;
    if (!grid_head_at(self, x, y, &l, &h))
        return FALSE;
    const atn_cs_identity *id = atn_corpus_stats_identity(self->file->cs);
    /* Translators: a head of the grid: "L3 · H2 — Entropy (bits): 1.234 · sink" */
    g_autofree char *text = g_strdup_printf(_("L%d · H%d — %s: %.3f · %s"), l, h, statistic_name(self->statistic),
                                            head_value(self, l, h),
                                            atn_stats_file_get_label(self->file, l * id->n_heads + h));
    gtk_tooltip_set_text(tip, text);
    return TRUE;
}

/* The line's text with the byte span [s, e) in <b>, the other [s2, e2) underlined too. */
static char *marked_line(const char *line, const atn_cs_exemplar *ex) {
    size_t n = strlen(line);
    GString *out = g_string_new(NULL);
    int qs = ex->query_start, qe = ex->query_end, ks = ex->key_start, ke = ex->key_end;
    if (qs < 0 || qe > (int)n || qs > qe || ks < 0 || ke > (int)n || ks > ke || !g_utf8_validate(line, -1, NULL)) {
        g_autofree char *esc = g_markup_escape_text(line, -1);
        g_string_append(out, esc);
        return g_string_free(out, FALSE);
    }
    for (size_t i = 0; i < n;) {
        size_t next = n;   /* the next boundary */
        int cuts[4] = {qs, qe, ks, ke};
        for (int c = 0; c < 4; c++)
            if ((size_t)cuts[c] > i && (size_t)cuts[c] < next)
                next = (size_t)cuts[c];
        gboolean in_q = (int)i >= qs && (int)i < qe, in_k = (int)i >= ks && (int)i < ke;
        g_autofree char *esc = g_markup_escape_text(line + i, (gssize)(next - i));
        if (in_q)
            g_string_append_printf(out, "<u><b>%s</b></u>", esc);
        else if (in_k)
            g_string_append_printf(out, "<span background=\"#f5c21180\"><b>%s</b></span>", esc);
        else
            g_string_append(out, esc);
        i = next;
    }
    return g_string_free(out, FALSE);
}

static void fill_examples(AtnStatsFilePanel *self) {
    for (GtkWidget *c; (c = gtk_widget_get_first_child(GTK_WIDGET(self->examples)));)   /* remove_all: GTK 4.12 */
        gtk_list_box_remove(self->examples, c);
    g_ptr_array_set_size(self->texts, 0);
    if (!self->file)
        return;
    const atn_cs_identity *id = atn_corpus_stats_identity(self->file->cs);
    int c = self->layer * id->n_heads + self->head;
    /* Translators: the examples of a head: "Examples — L3 · H2 (sink)" */
    g_autofree char *title = g_strdup_printf(_("Examples — L%d · H%d (%s)"), self->layer, self->head,
                                             atn_stats_file_get_label(self->file, c));
    gtk_label_set_text(self->examples_title, title);
    const atn_cs_exemplar *ex = NULL;
    int32_t n = atn_corpus_stats_exemplars(self->file->cs, self->layer, self->head, &ex);
    const char *corpus_note = self->file->corpus_path
                                  ? _("Click an example to open its sentence in the Head view, the query "
                                      "underlined, the key highlighted.")
                                  : NULL;
    g_autofree char *missing = self->file->corpus_path
                                   ? NULL
                                   : g_strdup_printf(_("The corpus “%s” is not beside the file (or has other lines): "
                                                       "the examples show their tokens only."),
                                                     id->corpus);
    g_autofree char *note = g_strdup_printf("%s\n%s", self->file->why[c], corpus_note ? corpus_note : missing);
    gtk_label_set_text(self->note, note);
    for (int32_t i = 0; i < n; i++) {
        const char *line = atn_stats_file_get_line(self->file, ex[i].line);
        g_autofree char *qt = g_markup_escape_text(ex[i].query_text, -1);
        g_autofree char *kt = g_markup_escape_text(ex[i].key_text, -1);
        g_autofree char *body = line ? marked_line(line, &ex[i]) : NULL;
        /* Translators: one example: its weight, its corpus line, the query and key tokens */
        g_autofree char *head = g_strdup_printf(_("<b>%.3f</b>  line %lld · %d “%s” → %d “%s”"), ex[i].weight,
                                                (long long)ex[i].line, ex[i].query, qt, ex[i].key, kt);
        g_autofree char *markup = body ? g_strdup_printf("%s\n<small>%s</small>", head, body) : g_strdup(head);
        GtkWidget *label = gtk_label_new(NULL);
        gtk_label_set_markup(GTK_LABEL(label), markup);
        gtk_label_set_xalign(GTK_LABEL(label), 0);
        gtk_label_set_wrap(GTK_LABEL(label), TRUE);
        gtk_label_set_wrap_mode(GTK_LABEL(label), PANGO_WRAP_WORD_CHAR);
        gtk_widget_set_margin_top(label, 3);
        gtk_widget_set_margin_bottom(label, 3);
        gtk_widget_set_margin_start(label, 4);
        gtk_list_box_append(self->examples, label);
        GtkListBoxRow *row = gtk_list_box_get_row_at_index(self->examples, i);
        gtk_list_box_row_set_activatable(row, line != NULL);
        g_ptr_array_add(self->texts, g_strdup(gtk_label_get_text(GTK_LABEL(label))));
    }
}

static void on_row_activated(GtkListBox *box, GtkListBoxRow *row, AtnStatsFilePanel *self) {
    atn_stats_file_panel_activate_example(self, (guint)gtk_list_box_row_get_index(row));
}

static void on_statistic(GtkDropDown *d, GParamSpec *p, AtnStatsFilePanel *self) {
    atn_stats_file_panel_set_statistic(self, (int)gtk_drop_down_get_selected(d));
}

static void atn_stats_file_panel_dispose(GObject *object) {
    AtnStatsFilePanel *self = ATN_STATS_FILE_PANEL(object);
    g_clear_pointer(&self->file, atn_stats_file_unref);
    g_clear_pointer(&self->box, gtk_widget_unparent);
    g_clear_pointer(&self->texts, g_ptr_array_unref);
    G_OBJECT_CLASS(atn_stats_file_panel_parent_class)->dispose(object);
}

static void atn_stats_file_panel_class_init(AtnStatsFilePanelClass *klass) {
    G_OBJECT_CLASS(klass)->dispose = atn_stats_file_panel_dispose;
    gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
    panel_signals[SIGNAL_HEAD_SELECTED] = g_signal_new("head-selected", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                                       0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
    panel_signals[SIGNAL_EXEMPLAR_ACTIVATED] =
        g_signal_new("exemplar-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                     G_TYPE_NONE, 6, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT, G_TYPE_STRING, G_TYPE_STRING);
}

static void atn_stats_file_panel_init(AtnStatsFilePanel *self) {
    self->texts = g_ptr_array_new_with_free_func(g_free);
    self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_widget_set_parent(self->box, GTK_WIDGET(self));
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    GtkWidget *by = gtk_label_new(_("Colour the heads by"));
    gtk_box_append(GTK_BOX(row), by);
    const char *names[ATN_CS_STATS + 1];
    for (int s = 0; s < ATN_CS_STATS; s++)
        names[s] = statistic_name(s);
    names[ATN_CS_STATS] = NULL;
    self->statistic_menu = GTK_DROP_DOWN(gtk_drop_down_new_from_strings(names));
    gtk_widget_set_hexpand(GTK_WIDGET(self->statistic_menu), TRUE);
    gtk_box_append(GTK_BOX(row), GTK_WIDGET(self->statistic_menu));
    gtk_box_append(GTK_BOX(self->box), row);
    self->grid = GTK_DRAWING_AREA(gtk_drawing_area_new());
    gtk_drawing_area_set_content_height(self->grid, 160);
    gtk_drawing_area_set_draw_func(self->grid, draw_grid, self, NULL);
    gtk_widget_set_has_tooltip(GTK_WIDGET(self->grid), TRUE);
    g_signal_connect(self->grid, "query-tooltip", G_CALLBACK(on_grid_tooltip), self);
    GtkGesture *click = gtk_gesture_click_new();
    g_signal_connect(click, "pressed", G_CALLBACK(on_grid_click), self);
    gtk_widget_add_controller(GTK_WIDGET(self->grid), GTK_EVENT_CONTROLLER(click));
    gtk_box_append(GTK_BOX(self->box), GTK_WIDGET(self->grid));
    self->examples_title = GTK_LABEL(gtk_label_new(NULL));
    gtk_label_set_xalign(self->examples_title, 0);
    gtk_label_set_ellipsize(self->examples_title, PANGO_ELLIPSIZE_END);
    gtk_widget_add_css_class(GTK_WIDGET(self->examples_title), "heading");
    gtk_box_append(GTK_BOX(self->box), GTK_WIDGET(self->examples_title));
    /* the wrapped text scrolls: a wrapping label's height depends on the width the pane gives
       it, which a GtkPaned's measure does not pass on (GTK warns of overlapping widgets) */
    GtkWidget *scroller = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_widget_set_vexpand(scroller, TRUE);
    GtkWidget *inner = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    self->note = GTK_LABEL(gtk_label_new(NULL));
    gtk_label_set_xalign(self->note, 0);
    gtk_label_set_wrap(self->note, TRUE);
    gtk_widget_add_css_class(GTK_WIDGET(self->note), "dim-label");
    gtk_box_append(GTK_BOX(inner), GTK_WIDGET(self->note));
    self->examples = GTK_LIST_BOX(gtk_list_box_new());
    gtk_list_box_set_selection_mode(self->examples, GTK_SELECTION_NONE);
    gtk_widget_add_css_class(GTK_WIDGET(self->examples), "rich-list");
    g_signal_connect(self->examples, "row-activated", G_CALLBACK(on_row_activated), self);
    gtk_box_append(GTK_BOX(inner), GTK_WIDGET(self->examples));
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroller), inner);
    gtk_box_append(GTK_BOX(self->box), scroller);
    g_signal_connect(self->statistic_menu, "notify::selected", G_CALLBACK(on_statistic), self);
}

GtkWidget *atn_stats_file_panel_new(void) { return g_object_new(ATN_TYPE_STATS_FILE_PANEL, NULL); }

void atn_stats_file_panel_set_file(AtnStatsFilePanel *self, AtnStatsFile *file) {
    g_return_if_fail(ATN_IS_STATS_FILE_PANEL(self));
    if (file)
        atn_stats_file_ref(file);
    g_clear_pointer(&self->file, atn_stats_file_unref);
    self->file = file;
    self->layer = self->head = 0;
    if (file) {
        const atn_cs_identity *id = atn_corpus_stats_identity(file->cs);
        gtk_drawing_area_set_content_height(self->grid, MIN(GRID_TOP + 2 + id->n_layers * 16, 260));
        update_range(self);
    }
    fill_examples(self);
    gtk_widget_queue_draw(GTK_WIDGET(self->grid));
}

void atn_stats_file_panel_select_head(AtnStatsFilePanel *self, int layer, int head) {
    g_return_if_fail(ATN_IS_STATS_FILE_PANEL(self));
    if (!self->file)
        return;
    const atn_cs_identity *id = atn_corpus_stats_identity(self->file->cs);
    if (layer < 0 || layer >= id->n_layers || head < 0 || head >= id->n_heads)
        return;
    self->layer = layer, self->head = head;
    fill_examples(self);
    gtk_widget_queue_draw(GTK_WIDGET(self->grid));
}

void atn_stats_file_panel_set_statistic(AtnStatsFilePanel *self, int statistic) {
    g_return_if_fail(ATN_IS_STATS_FILE_PANEL(self));
    if (statistic < 0 || statistic >= ATN_CS_STATS)
        return;
    self->statistic = statistic;
    if (gtk_drop_down_get_selected(self->statistic_menu) != (guint)statistic)
        gtk_drop_down_set_selected(self->statistic_menu, (guint)statistic);
    if (self->file)
        update_range(self);
    gtk_widget_queue_draw(GTK_WIDGET(self->grid));
}

void atn_stats_file_panel_get_head(AtnStatsFilePanel *self, int *layer, int *head) {
    *layer = self->layer, *head = self->head;
}

gboolean atn_stats_file_panel_get_cell(AtnStatsFilePanel *self, int layer, int head, double *value, double rgb[3]) {
    if (!self->file)
        return FALSE;
    const atn_cs_identity *id = atn_corpus_stats_identity(self->file->cs);
    if (layer < 0 || layer >= id->n_layers || head < 0 || head >= id->n_heads)
        return FALSE;
    *value = head_value(self, layer, head);
    value_rgb(self, *value, rgb);
    return TRUE;
}

guint atn_stats_file_panel_get_n_examples(AtnStatsFilePanel *self) { return self->texts->len; }

const char *atn_stats_file_panel_get_example_text(AtnStatsFilePanel *self, guint i) {
    return i < self->texts->len ? g_ptr_array_index(self->texts, i) : NULL;
}

const char *atn_stats_file_panel_get_note(AtnStatsFilePanel *self) { return gtk_label_get_text(self->note); }

void atn_stats_file_panel_activate_example(AtnStatsFilePanel *self, guint i) {
    g_return_if_fail(ATN_IS_STATS_FILE_PANEL(self));
    if (!self->file)
        return;
    const atn_cs_exemplar *ex = NULL;
    int32_t n = atn_corpus_stats_exemplars(self->file->cs, self->layer, self->head, &ex);
    if (i >= (guint)n)
        return;
    const char *line = atn_stats_file_get_line(self->file, ex[i].line);
    if (!line)
        return;
    g_signal_emit(self, panel_signals[SIGNAL_EXEMPLAR_ACTIVATED], 0, self->layer, self->head, ex[i].query, ex[i].key,
                  line, atn_corpus_stats_identity(self->file->cs)->model);
}

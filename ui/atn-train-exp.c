/* The Train page's Experiments window (atn-train-exp.h): the form, the command it runs, the
 * progress read from the command's lines, and the figure and table it wrote. */
#include "atn-train-exp.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "atn-export.h"

typedef enum { EXP_SWEEP, EXP_TEST_LONG, EXP_GRAD_DEPTHS } exp_kind;

struct _AtnTrainExp {
    GtkWindow parent_instance;
    AtnTrainExpRead read;
    gpointer owner;
    GHashTable *controls;       /* name -> widget (borrowed) */
    GtkWidget *form, *sweep_box, *long_box, *depth_box;
    GSubprocess *proc;          /* the command while it runs */
    GCancellable *cancel;       /* the reads and the wait of the run shown; cancelled on dispose */
    GDataInputStream *err_lines;
    gboolean exited, err_done;  /* the command has ended; its stderr is read to the end */
    char *folder;               /* the last run's files */
    char *last_line;            /* the command's last line on stderr (its message on failure) */
    int done, total, exit_status;
};

G_DEFINE_FINAL_TYPE(AtnTrainExp, atn_train_exp, GTK_TYPE_WINDOW)

static GtkWidget *control(AtnTrainExp *self, const char *name) { return g_hash_table_lookup(self->controls, name); }
static const char *entry_text(AtnTrainExp *self, const char *name) {
    return gtk_editable_get_text(GTK_EDITABLE(control(self, name)));
}

/* ---- the command line ----------------------------------------------------------------------- */

/* The program the window runs: $ATTNSCOPE_EXE (the tests' build), else this program, else
 * attnscope on the PATH. */
static char *command_path(void) {
    const char *env = g_getenv("ATTNSCOPE_EXE");
    if (env && *env)
        return g_strdup(env);
    char *self = g_file_read_link("/proc/self/exe", NULL);
    if (self)
        return self;
    return g_find_program_in_path("attnscope");
}

static void arg(GPtrArray *a, const char *s) { g_ptr_array_add(a, g_strdup(s)); }
static void arg_int(GPtrArray *a, const char *name, long v) {
    arg(a, name);
    g_ptr_array_add(a, g_strdup_printf("%ld", v));
}
static void arg_num(GPtrArray *a, const char *name, double v) {
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    arg(a, name);
    arg(a, g_ascii_dtostr(buf, sizeof buf, v));
}

/* The options of o as `attnscope train` reads them, less those the experiment varies (the
 * positions of train short / test long, the norm and the layers of the gradient norms, the
 * dropouts of a sweep over a dropout: --dropout-attn would override the swept --dropout). */
static void settings_args(GPtrArray *a, const atn_train_options *o, exp_kind kind, const char *swept) {
    static const char *const pos[] = {"learned", "sinusoidal", "none", "alibi", "rotary"};
    static const char *const norms[] = {"post", "pre", "none"};
    static const char *const attns[] = {"full", "causal", "window", "longformer", "chunked", "linformer"};
    static const char *const precs[] = {"fp32", "fp16", "bf16"};
    arg(a, "--task"), arg(a, atn_train_task_name(o->task));
    if (o->task == ATN_TASK_TEXT && o->text_path)
        arg(a, "--text"), arg(a, o->text_path);
    arg(a, o->decoder ? "--decoder" : "--encoder");
    arg_int(a, "--length", o->length), arg_int(a, "--symbols", o->symbols);
    if (kind != EXP_GRAD_DEPTHS)
        arg_int(a, "--layers", o->layers);
    arg_int(a, "--heads", o->heads), arg_int(a, "--d-model", o->d_model);
    if (o->attention_only)
        arg(a, "--attention-only");
    static const char *const inits[] = {"normal", "xavier", "orthogonal"};
    arg(a, "--init"), arg(a, inits[o->init]), arg_num(a, "--init-std", o->init_std);
    if (!swept || !g_str_has_prefix(swept, "dropout"))
        arg_num(a, "--dropout-attn", o->dropout_attn), arg_num(a, "--dropout-hidden", o->dropout_hidden);
    if (o->rms_norm)
        arg(a, "--rms-norm");
    if (kind != EXP_GRAD_DEPTHS)
        arg(a, "--norm"), arg(a, norms[o->norm]);
    if (kind != EXP_TEST_LONG)
        arg(a, "--positions"), arg(a, pos[o->positions]);
    if (o->attention != ATN_ATTN_FULL)   /* full: the command's default (causal in a decoder) */
        arg(a, "--attention"), arg(a, attns[o->attention]);
    if (o->attention == ATN_ATTN_WINDOW || o->attention == ATN_ATTN_LONGFORMER)
        arg_int(a, "--window", o->window);
    else if (o->attention == ATN_ATTN_CHUNKED)
        arg_int(a, "--chunk", o->chunk);
    else if (o->attention == ATN_ATTN_LINFORMER)
        arg_int(a, "--linformer-k", o->linformer_k);
    arg(a, "--optim"), arg(a, o->optim == ATN_OPTIM_SGD ? "sgd" : "adamw");
    if (o->optim == ATN_OPTIM_SGD)
        arg_num(a, "--momentum", o->momentum);
    arg_num(a, "--lr", o->lr), arg_int(a, "--warmup", o->warmup), arg_num(a, "--clip", o->clip);
    arg(a, "--precision"), arg(a, precs[o->precision]);
    if (o->checkpoint)
        arg(a, "--checkpoint");
    arg_int(a, "--batch", o->batch), arg_int(a, "--steps", o->steps), arg_int(a, "--seed", (long)o->seed);
}

/* The non-empty items of a comma-separated list. */
static int count_list(const char *s) {
    g_auto(GStrv) items = g_strsplit(s, ",", -1);
    int n = 0;
    for (char **q = items; *q; q++)
        n += **q != '\0';
    return n;
}

static const char *const files[] = {"experiment.csv", "experiment.png", "experiment.svg", "experiment.pdf",
                                    "table.txt"};

/* Removes a run's folder and the files the command writes there. */
static void remove_folder(const char *folder) {
    if (!folder)
        return;
    for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *f = g_build_filename(folder, files[i], NULL);
        g_remove(f);
    }
    g_rmdir(folder);
}

/* ---- the run -------------------------------------------------------------------------------- */

static void set_running(AtnTrainExp *self, gboolean running) {
    gtk_widget_set_sensitive(self->form, !running);
    gtk_widget_set_sensitive(control(self, "run"), !running);
    gtk_widget_set_sensitive(control(self, "cancel"), running);
    gboolean have = !running && self->folder;
    g_autofree char *png = self->folder ? g_build_filename(self->folder, "experiment.png", NULL) : NULL;
    g_autofree char *csv = self->folder ? g_build_filename(self->folder, "experiment.csv", NULL) : NULL;
    gtk_widget_set_sensitive(control(self, "save-figure"), have && g_file_test(png, G_FILE_TEST_EXISTS));
    gtk_widget_set_sensitive(control(self, "save-csv"), have && g_file_test(csv, G_FILE_TEST_EXISTS));
}

static void show_progress(AtnTrainExp *self) {
    GtkProgressBar *bar = GTK_PROGRESS_BAR(control(self, "progress"));
    gtk_progress_bar_set_fraction(bar, self->total ? MIN(1.0, (double)self->done / self->total) : 0);
    g_autofree char *text = g_strdup_printf(_("%d of %d models trained"), self->done, self->total);
    gtk_progress_bar_set_text(bar, text);
}

static void read_line(AtnTrainExp *self);
static void finish(AtnTrainExp *self);

static void line_read(GObject *src, GAsyncResult *res, gpointer data) {
    g_autoptr(GError) error = NULL;
    char *line = g_data_input_stream_read_line_finish_utf8(G_DATA_INPUT_STREAM(src), res, NULL, &error);
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;   /* the window went (data may be gone) */
    AtnTrainExp *self = data;
    if (!line) {   /* the end (or unreadable) */
        self->err_done = TRUE;
        finish(self);
        return;
    }
    /* a model finished: "heads=4 seed 1: loss ...", "positions=alibi seed 1: 400 steps (...",
       "pre-LN, 6 layers: 50 steps (..." */
    if (strstr(line, ": loss ") || strstr(line, " steps (")) {
        self->done++;
        show_progress(self);
    }
    if (*g_strstrip(line)) {
        g_free(self->last_line);
        self->last_line = line;
    } else {
        g_free(line);
    }
    read_line(self);
}

static void read_line(AtnTrainExp *self) {
    g_data_input_stream_read_line_async(self->err_lines, G_PRIORITY_DEFAULT, self->cancel, line_read, self);
}

static void show_results(AtnTrainExp *self) {
    g_autofree char *png = g_build_filename(self->folder, "experiment.png", NULL);
    g_autofree char *table = g_build_filename(self->folder, "table.txt", NULL);
    GtkPicture *pic = GTK_PICTURE(control(self, "plot"));
    if (g_file_test(png, G_FILE_TEST_EXISTS))
        gtk_picture_set_filename(pic, png);
    else
        gtk_picture_set_paintable(pic, NULL);
    g_autofree char *text = NULL;
    g_file_get_contents(table, &text, NULL, NULL);
    gtk_label_set_text(GTK_LABEL(control(self, "table")), text ? text : "");
}

static void proc_done(GObject *src, GAsyncResult *res, gpointer data) {
    g_autoptr(GError) error = NULL;
    gboolean ok = g_subprocess_wait_finish(G_SUBPROCESS(src), res, &error);
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
    AtnTrainExp *self = data;
    GSubprocess *p = G_SUBPROCESS(src);
    self->exit_status = !ok ? -1 : g_subprocess_get_if_exited(p) ? g_subprocess_get_exit_status(p)
                               : g_subprocess_get_if_signaled(p) ? 128 + g_subprocess_get_term_sig(p)
                                                                 : -1;
    self->exited = TRUE;
    if (!ok && !self->last_line)
        self->last_line = g_strdup(error->message);
    finish(self);
}

/* Once the command has ended and its last line is read: the status, the figure and the
 * table. */
static void finish(AtnTrainExp *self) {
    if (!self->exited || !self->err_done || !self->proc)
        return;
    int status = self->exit_status;
    g_clear_object(&self->proc);
    g_autofree char *msg = NULL;
    if (status == 0)
        msg = g_strdup_printf(_("Finished: %d models trained."), self->done);
    else if (status == 130)
        msg = g_strdup_printf(_("Cancelled after %d models; the finished ones are shown where the experiment keeps "
                                "them."),
                              self->done);
    else
        msg = g_strdup_printf(_("The experiment stopped: %s"), self->last_line ? self->last_line : _("no message"));
    gtk_label_set_text(GTK_LABEL(control(self, "status")), msg);
    show_results(self);
    set_running(self, FALSE);
}

static void on_run(GtkButton *b, AtnTrainExp *self) {
    (void)b;
    if (self->proc)
        return;
    atn_train_options o;
    self->read(self->owner, &o);
    exp_kind kind = (exp_kind)gtk_drop_down_get_selected(GTK_DROP_DOWN(control(self, "kind")));
    int seeds = gtk_spin_button_get_value_as_int(GTK_SPIN_BUTTON(control(self, "seeds")));
    g_autofree char *exe = command_path();
    g_autoptr(GError) error = NULL;
    g_autofree char *folder = g_dir_make_tmp("attnscope-experiment-XXXXXX", &error);
    if (!exe || !folder) {
        gtk_label_set_text(GTK_LABEL(control(self, "status")), error ? error->message : _("attnscope was not found"));
        return;
    }
    g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(g_free);
    arg(a, exe), arg(a, "train");
    guint k = gtk_drop_down_get_selected(GTK_DROP_DOWN(control(self, "knob")));
    GtkStringList *knobs = GTK_STRING_LIST(gtk_drop_down_get_model(GTK_DROP_DOWN(control(self, "knob"))));
    const char *knob = gtk_string_list_get_string(knobs, k);
    settings_args(a, &o, kind, kind == EXP_SWEEP ? knob : NULL);
    if (kind == EXP_SWEEP) {
        arg(a, "--sweep");
        g_ptr_array_add(a, g_strdup_printf("%s=%s", knob, entry_text(self, "values")));
        self->total = count_list(entry_text(self, "values")) * seeds;
    } else if (kind == EXP_TEST_LONG) {
        arg(a, "--test-lengths"), arg(a, entry_text(self, "lengths"));
        int schemes = count_list(entry_text(self, "schemes"));
        if (schemes)
            arg(a, "--schemes"), arg(a, entry_text(self, "schemes"));
        self->total = (schemes ? schemes : 5) * seeds;
    } else {
        arg(a, "--grad-depths"), arg(a, entry_text(self, "depths"));
        int placements = count_list(entry_text(self, "placements"));
        if (placements)
            arg(a, "--placements"), arg(a, entry_text(self, "placements"));
        self->total = (placements ? placements : 2) * count_list(entry_text(self, "depths")) * seeds;
    }
    arg_int(a, "--seeds", seeds);
    g_autofree char *csv = g_build_filename(folder, "experiment.csv", NULL);
    arg(a, "--log"), arg(a, csv);
    static const char *const exts[] = {"png", "svg", "pdf"};
    for (int i = 0; i < 3; i++) {
        g_autofree char *name = g_strconcat("experiment.", exts[i], NULL);
        arg(a, "--plot");
        g_ptr_array_add(a, g_build_filename(folder, name, NULL));
    }
    g_ptr_array_add(a, NULL);
    g_autofree char *table = g_build_filename(folder, "table.txt", NULL);
    g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDERR_PIPE);
    g_subprocess_launcher_set_stdout_file_path(l, table);
    GSubprocess *p = g_subprocess_launcher_spawnv(l, (const char *const *)a->pdata, &error);
    if (!p) {
        gtk_label_set_text(GTK_LABEL(control(self, "status")), error->message);
        g_rmdir(folder);
        return;
    }
    remove_folder(self->folder);
    g_free(self->folder);
    self->folder = g_steal_pointer(&folder);
    g_clear_pointer(&self->last_line, g_free);
    self->proc = p;
    self->done = 0, self->exit_status = -1, self->exited = self->err_done = FALSE;
    if (self->cancel)
        g_cancellable_cancel(self->cancel), g_object_unref(self->cancel);
    self->cancel = g_cancellable_new();
    g_clear_object(&self->err_lines);
    self->err_lines = g_data_input_stream_new(g_subprocess_get_stderr_pipe(p));
    read_line(self);
    g_subprocess_wait_async(p, self->cancel, proc_done, self);
    gtk_label_set_text(GTK_LABEL(control(self, "status")), _("Training…"));
    gtk_picture_set_paintable(GTK_PICTURE(control(self, "plot")), NULL);
    gtk_label_set_text(GTK_LABEL(control(self, "table")), "");
    show_progress(self);
    set_running(self, TRUE);
}

static void on_cancel(GtkButton *b, AtnTrainExp *self) {
    (void)b;
    if (self->proc)   /* as Ctrl-C: the command keeps the finished models' results */
        g_subprocess_send_signal(self->proc, SIGINT);
}

/* ---- saving --------------------------------------------------------------------------------- */

static void export_done(GObject *source, GAsyncResult *res, gpointer data) {
    (void)source;
    AtnTrainExp *self = data;
    g_autoptr(GError) error = NULL;
    g_autofree char *path = atn_export_finish(res, &error);
    if (error && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        gtk_label_set_text(GTK_LABEL(control(self, "status")), error->message);
    else if (path) {
        g_autofree char *msg = g_strdup_printf(_("Saved %s"), path);
        gtk_label_set_text(GTK_LABEL(control(self, "status")), msg);
    }
    g_object_unref(self);
}

static void on_save_figure(GtkButton *b, AtnTrainExp *self) {
    (void)b;
    if (!self->folder)
        return;
    g_autofree char *png = g_build_filename(self->folder, "experiment.png", NULL);
    g_autofree char *svg = g_build_filename(self->folder, "experiment.svg", NULL);
    g_autofree char *pdf = g_build_filename(self->folder, "experiment.pdf", NULL);
    atn_export_figure_files_async(GTK_WINDOW(self), png, svg, pdf, "experiment", export_done, g_object_ref(self));
}

static void on_save_csv(GtkButton *b, AtnTrainExp *self) {
    (void)b;
    if (!self->folder)
        return;
    g_autofree char *csv = g_build_filename(self->folder, "experiment.csv", NULL);
    char *text = NULL;
    if (!g_file_get_contents(csv, &text, NULL, NULL))
        return;
    atn_export_text_async(GTK_WINDOW(self), text, _("Save the Experiment as CSV"), "experiment.csv", export_done,
                          g_object_ref(self));
}

/* ---- the form ------------------------------------------------------------------------------- */

/* The knobs a sweep may vary (`attnscope train --sweep`'s), and values to start from. */
static const struct {
    const char *knob, *values;
} sweep_knobs[] = {
    {"heads", "1,2,4,8"},          {"layers", "1,2,3,4"},     {"d-model", "32,64,128"},
    {"lr", "0.0003,0.001,0.003"},  {"positions", "learned,sinusoidal,rotary,alibi,none"},
    {"norm", "post,pre,none"},     {"attention", "full,window"}, {"dropout", "0,0.1,0.2"},
    {"init", "normal,xavier,orthogonal"}, {"warmup", "0,50,200"}, {"clip", "0,1"},
    {"batch", "8,16,32"},          {"length", "8,16,32"},     {"precision", "fp32,bf16,fp16"},
};

static void on_knob(GObject *dd, GParamSpec *ps, AtnTrainExp *self) {
    (void)ps;
    guint k = gtk_drop_down_get_selected(GTK_DROP_DOWN(dd));
    if (k < G_N_ELEMENTS(sweep_knobs))
        gtk_editable_set_text(GTK_EDITABLE(control(self, "values")), sweep_knobs[k].values);
}

static void on_kind(GObject *dd, GParamSpec *ps, AtnTrainExp *self) {
    (void)ps;
    guint k = gtk_drop_down_get_selected(GTK_DROP_DOWN(dd));
    gtk_widget_set_visible(self->sweep_box, k == EXP_SWEEP);
    gtk_widget_set_visible(self->long_box, k == EXP_TEST_LONG);
    gtk_widget_set_visible(self->depth_box, k == EXP_GRAD_DEPTHS);
}

static GtkWidget *row(AtnTrainExp *self, GtkWidget *grid, int *r, const char *label, const char *name, GtkWidget *w,
                      const char *tip) {
    GtkWidget *l = gtk_label_new_with_mnemonic(label);
    gtk_label_set_xalign(GTK_LABEL(l), 0);
    gtk_label_set_mnemonic_widget(GTK_LABEL(l), w);
    gtk_widget_set_hexpand(w, TRUE);
    if (tip)
        gtk_widget_set_tooltip_text(w, tip);
    gtk_grid_attach(GTK_GRID(grid), l, 0, *r, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), w, 1, (*r)++, 1, 1);
    g_hash_table_insert(self->controls, (gpointer)name, w);
    return w;
}

static GtkWidget *grid_new(void) {
    GtkWidget *g = gtk_grid_new();
    gtk_grid_set_row_spacing(GTK_GRID(g), 4);
    gtk_grid_set_column_spacing(GTK_GRID(g), 8);
    return g;
}

static GtkWidget *entry(const char *text) {
    GtkWidget *e = gtk_entry_new();
    gtk_editable_set_text(GTK_EDITABLE(e), text);
    return e;
}

static void atn_train_exp_init(AtnTrainExp *self) {
    self->controls = g_hash_table_new(g_str_hash, g_str_equal);
    self->exit_status = -1;
    gtk_window_set_title(GTK_WINDOW(self), _("Experiments"));
    gtk_window_set_default_size(GTK_WINDOW(self), 900, 640);

    GtkWidget *left = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_widget_set_margin_start(left, 10), gtk_widget_set_margin_end(left, 6);
    gtk_widget_set_margin_top(left, 10), gtk_widget_set_margin_bottom(left, 10);
    self->form = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    GtkWidget *intro = gtk_label_new(_("Each model is trained with the Train page's settings; the experiment varies "
                                       "one of them and repeats each model with several seeds."));
    gtk_label_set_wrap(GTK_LABEL(intro), TRUE);
    gtk_label_set_max_width_chars(GTK_LABEL(intro), 36);
    gtk_label_set_xalign(GTK_LABEL(intro), 0);
    gtk_widget_add_css_class(intro, "dim-label");
    gtk_box_append(GTK_BOX(self->form), intro);
    GtkWidget *g = grid_new();
    int r = 0;
    const char *kinds[] = {_("Sweep one knob"), _("Train short, test long"), _("Post-LN vs Pre-LN gradient norms"), NULL};
    row(self, g, &r, _("E_xperiment"), "kind", gtk_drop_down_new_from_strings(kinds), NULL);
    GtkWidget *seeds = gtk_spin_button_new_with_range(1, 20, 1);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(seeds), 3);
    row(self, g, &r, _("S_eeds"), "seeds", seeds,
        _("Each model is trained with seeds Seed, Seed + 1, …: the figure shows their mean and one standard "
          "deviation"));
    gtk_box_append(GTK_BOX(self->form), g);

    self->sweep_box = grid_new();
    r = 0;
    const char *knob_names[G_N_ELEMENTS(sweep_knobs) + 1];
    for (guint i = 0; i < G_N_ELEMENTS(sweep_knobs); i++)
        knob_names[i] = sweep_knobs[i].knob;
    knob_names[G_N_ELEMENTS(sweep_knobs)] = NULL;
    row(self, self->sweep_box, &r, _("_Knob"), "knob", gtk_drop_down_new_from_strings(knob_names),
        _("The option of attnscope train that the sweep varies"));
    row(self, self->sweep_box, &r, _("_Values"), "values", entry(sweep_knobs[0].values),
        _("The knob's values, separated by commas: one model per value and seed"));
    gtk_box_append(GTK_BOX(self->form), self->sweep_box);

    self->long_box = grid_new();
    r = 0;
    row(self, self->long_box, &r, _("Test _lengths"), "lengths", entry("32,64"),
        _("Each model is trained at the page's Length and tested at these lengths too"));
    row(self, self->long_box, &r, _("_Schemes"), "schemes", entry(""),
        _("Position schemes among learned, sinusoidal, rotary, alibi, none (empty: all five)"));
    gtk_box_append(GTK_BOX(self->form), self->long_box);

    self->depth_box = grid_new();
    r = 0;
    row(self, self->depth_box, &r, _("_Depths"), "depths", entry("2,6,12"),
        _("Layer counts, separated by commas (1 to 12): one model per placement, depth and seed"));
    row(self, self->depth_box, &r, _("_Placements"), "placements", entry(""),
        _("LayerNorm placements among post, pre, none (empty: post and pre)"));
    gtk_box_append(GTK_BOX(self->form), self->depth_box);
    gtk_box_append(GTK_BOX(left), self->form);

    GtkWidget *buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_widget_set_margin_top(buttons, 6);
    GtkWidget *run = gtk_button_new_with_mnemonic(_("_Run"));
    gtk_widget_add_css_class(run, "suggested-action");
    GtkWidget *cancel = gtk_button_new_with_mnemonic(_("_Cancel"));
    gtk_box_append(GTK_BOX(buttons), run);
    gtk_box_append(GTK_BOX(buttons), cancel);
    gtk_box_append(GTK_BOX(left), buttons);
    GtkWidget *progress = gtk_progress_bar_new();
    gtk_progress_bar_set_show_text(GTK_PROGRESS_BAR(progress), TRUE);
    gtk_box_append(GTK_BOX(left), progress);
    GtkWidget *status = gtk_label_new(_("Pick an experiment and press Run."));
    gtk_label_set_wrap(GTK_LABEL(status), TRUE);
    gtk_label_set_wrap_mode(GTK_LABEL(status), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_max_width_chars(GTK_LABEL(status), 36);
    gtk_label_set_xalign(GTK_LABEL(status), 0);
    gtk_label_set_selectable(GTK_LABEL(status), TRUE);
    gtk_box_append(GTK_BOX(left), status);
    GtkWidget *saves = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    GtkWidget *save_fig = gtk_button_new_with_mnemonic(_("Save _Figure…"));
    GtkWidget *save_csv = gtk_button_new_with_mnemonic(_("Save _CSV…"));
    gtk_widget_set_tooltip_text(save_fig, _("The figure as PNG, SVG or PDF"));
    gtk_widget_set_tooltip_text(save_csv, _("Every model's results, as attnscope train --log writes them"));
    gtk_box_append(GTK_BOX(saves), save_fig);
    gtk_box_append(GTK_BOX(saves), save_csv);
    gtk_box_append(GTK_BOX(left), saves);

    GtkWidget *right = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    gtk_widget_set_margin_start(right, 6), gtk_widget_set_margin_end(right, 10);
    gtk_widget_set_margin_top(right, 10), gtk_widget_set_margin_bottom(right, 10);
    GtkWidget *plot = gtk_picture_new();
    gtk_picture_set_content_fit(GTK_PICTURE(plot), GTK_CONTENT_FIT_CONTAIN);
    gtk_widget_set_size_request(plot, 200, 150);
    gtk_widget_set_vexpand(plot, TRUE);
    gtk_widget_set_hexpand(plot, TRUE);
    gtk_box_append(GTK_BOX(right), plot);
    GtkWidget *table = gtk_label_new("");
    gtk_label_set_xalign(GTK_LABEL(table), 0);
    gtk_label_set_selectable(GTK_LABEL(table), TRUE);
    gtk_widget_add_css_class(table, "monospace");
    GtkWidget *table_scroll = gtk_scrolled_window_new();
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(table_scroll), table);
    gtk_scrolled_window_set_min_content_height(GTK_SCROLLED_WINDOW(table_scroll), 90);
    gtk_box_append(GTK_BOX(right), table_scroll);

    GtkWidget *left_scroll = gtk_scrolled_window_new();
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(left_scroll), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_propagate_natural_width(GTK_SCROLLED_WINDOW(left_scroll), TRUE);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(left_scroll), left);
    GtkWidget *paned = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
    gtk_paned_set_start_child(GTK_PANED(paned), left_scroll);
    gtk_paned_set_end_child(GTK_PANED(paned), right);
    gtk_paned_set_resize_start_child(GTK_PANED(paned), FALSE);
    gtk_paned_set_shrink_start_child(GTK_PANED(paned), FALSE);
    gtk_window_set_child(GTK_WINDOW(self), paned);

    static const char *const names[] = {"run", "cancel", "progress", "status", "save-figure", "save-csv", "plot", "table"};
    GtkWidget *ws[] = {run, cancel, progress, status, save_fig, save_csv, plot, table};
    for (guint i = 0; i < G_N_ELEMENTS(ws); i++)
        g_hash_table_insert(self->controls, (gpointer)names[i], ws[i]);
    g_signal_connect(run, "clicked", G_CALLBACK(on_run), self);
    g_signal_connect(cancel, "clicked", G_CALLBACK(on_cancel), self);
    g_signal_connect(save_fig, "clicked", G_CALLBACK(on_save_figure), self);
    g_signal_connect(save_csv, "clicked", G_CALLBACK(on_save_csv), self);
    g_signal_connect(control(self, "kind"), "notify::selected", G_CALLBACK(on_kind), self);
    g_signal_connect(control(self, "knob"), "notify::selected", G_CALLBACK(on_knob), self);
    on_kind(G_OBJECT(control(self, "kind")), NULL, self);
    set_running(self, FALSE);
}

static void atn_train_exp_dispose(GObject *object) {
    AtnTrainExp *self = ATN_TRAIN_EXP(object);
    if (self->cancel)
        g_cancellable_cancel(self->cancel);
    if (self->proc)
        g_subprocess_force_exit(self->proc);
    g_clear_object(&self->proc);
    g_clear_object(&self->err_lines);
    g_clear_object(&self->cancel);
    G_OBJECT_CLASS(atn_train_exp_parent_class)->dispose(object);
}

static void atn_train_exp_finalize(GObject *object) {
    AtnTrainExp *self = ATN_TRAIN_EXP(object);
    g_hash_table_unref(self->controls);
    remove_folder(self->folder);
    g_free(self->folder);
    g_free(self->last_line);
    G_OBJECT_CLASS(atn_train_exp_parent_class)->finalize(object);
}

static void atn_train_exp_class_init(AtnTrainExpClass *klass) {
    G_OBJECT_CLASS(klass)->dispose = atn_train_exp_dispose;
    G_OBJECT_CLASS(klass)->finalize = atn_train_exp_finalize;
}

AtnTrainExp *atn_train_exp_new(GtkWindow *parent, AtnTrainExpRead read, gpointer owner) {
    g_return_val_if_fail(read != NULL, NULL);
    AtnTrainExp *self = g_object_new(ATN_TYPE_TRAIN_EXP, NULL);
    self->read = read, self->owner = owner;
    if (parent)
        gtk_window_set_transient_for(GTK_WINDOW(self), parent);
    return self;
}

/* ---- for the tests -------------------------------------------------------------------------- */

GtkWidget *atn_train_exp_get_control(AtnTrainExp *self, const char *name) {
    g_return_val_if_fail(ATN_IS_TRAIN_EXP(self), NULL);
    return control(self, name);
}
gboolean atn_train_exp_get_running(AtnTrainExp *self) {
    g_return_val_if_fail(ATN_IS_TRAIN_EXP(self), FALSE);
    return self->proc != NULL;
}
const char *atn_train_exp_get_folder(AtnTrainExp *self) {
    g_return_val_if_fail(ATN_IS_TRAIN_EXP(self), NULL);
    return self->folder;
}
int atn_train_exp_get_exit_status(AtnTrainExp *self) {
    g_return_val_if_fail(ATN_IS_TRAIN_EXP(self), -1);
    return self->exit_status;
}
int atn_train_exp_get_pid(AtnTrainExp *self) {
    g_return_val_if_fail(ATN_IS_TRAIN_EXP(self), 0);
    const char *id = self->proc ? g_subprocess_get_identifier(self->proc) : NULL;
    return id ? atoi(id) : 0;
}
void atn_train_exp_get_models(AtnTrainExp *self, int *done, int *total) {
    g_return_if_fail(ATN_IS_TRAIN_EXP(self));
    *done = self->done, *total = self->total;
}

/* The Train page's knobs (atn-train-view-private.h): the form of training settings in three
 * sections (Task, Model, Optimiser), the presets that fill it, and the options it says.
 * Every control is kept in the page's `controls` table by name, which the page and the
 * tests (atn-train-view-test.h) read. */
#include "atn-train-view-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "atn-corpus-pass.h"

GtkWidget *atn_train_control(AtnTrainView *self, const char *name) { return g_hash_table_lookup(self->controls, name); }
static GtkWidget *control(AtnTrainView *self, const char *name) { return atn_train_control(self, name); }
static int spin_int(AtnTrainView *self, const char *name) {
    return gtk_spin_button_get_value_as_int(GTK_SPIN_BUTTON(control(self, name)));
}
static double spin(AtnTrainView *self, const char *name) {
    return gtk_spin_button_get_value(GTK_SPIN_BUTTON(control(self, name)));
}
static guint pick(AtnTrainView *self, const char *name) {
    return gtk_drop_down_get_selected(GTK_DROP_DOWN(control(self, name)));
}
static void set_spin(AtnTrainView *self, const char *name, double v) {
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(control(self, name)), v);
}
static void set_pick(AtnTrainView *self, const char *name, guint i) {
    gtk_drop_down_set_selected(GTK_DROP_DOWN(control(self, name)), i);
}

void atn_train_knobs_read(AtnTrainView *self, atn_train_options *o) {
    atn_train_options_init(o);
    o->task = (atn_train_task)pick(self, "task");
    o->decoder = pick(self, "objective") == 0;
    o->layers = spin_int(self, "layers");
    o->heads = spin_int(self, "heads");
    o->d_model = spin_int(self, "d-model");
    o->attention_only = !gtk_check_button_get_active(GTK_CHECK_BUTTON(control(self, "mlp")));
    o->positions = (atn_train_pos)pick(self, "positions");
    /* the list's order: full, window, Longformer, chunked, Linformer; the Window spinner is
       also the block size and Linformer's k */
    static const atn_train_attn attns[] = {ATN_ATTN_FULL, ATN_ATTN_WINDOW, ATN_ATTN_LONGFORMER, ATN_ATTN_CHUNKED,
                                           ATN_ATTN_LINFORMER};
    o->attention = attns[MIN(pick(self, "attention"), G_N_ELEMENTS(attns) - 1)];
    o->window = o->chunk = o->linformer_k = spin_int(self, "window");
    guint norm = pick(self, "norm");   /* the fourth: pre-LN with RMSNorm */
    o->norm = norm == 3 ? ATN_TRAIN_PRE_LN : (atn_train_norm)norm;
    o->rms_norm = norm == 3;
    o->init = (atn_train_init)pick(self, "init");
    o->init_std = (float)spin(self, "init-std");
    o->dropout_attn = (float)spin(self, "dropout-attn");
    o->dropout_hidden = (float)spin(self, "dropout-hidden");
    o->length = spin_int(self, "length");
    o->symbols = spin_int(self, "symbols");
    o->optim = pick(self, "optim") == 0 ? ATN_OPTIM_ADAMW : ATN_OPTIM_SGD;
    o->lr = (float)spin(self, "lr");
    o->warmup = spin_int(self, "warmup");
    o->clip = (float)spin(self, "clip");
    static const atn_precision precisions[] = {ATN_PRECISION_FP32, ATN_PRECISION_BF16, ATN_PRECISION_FP16};
    o->precision = precisions[MIN(pick(self, "precision"), 2u)];
    o->checkpoint = gtk_check_button_get_active(GTK_CHECK_BUTTON(control(self, "checkpoint")));
    o->batch = spin_int(self, "batch");
    o->steps = spin_int(self, "steps");
    o->seed = (uint64_t)spin_int(self, "seed");
    o->text_path = o->task == ATN_TASK_TEXT ? self->text_path : NULL;
    if (o->optim == ATN_OPTIM_SGD)
        o->momentum = 0.9f;
}

/* ---- the knobs ------------------------------------------------------------------------- */

/* The induction-head recipe (docs/training.md): a 2-layer attention-only decoder on
 * repeated random runs, learned positions. */
static void apply_preset(AtnTrainView *self, train_preset p) {
    if (p == PRESET_CUSTOM)
        return;
    self->applying_preset = TRUE;
    set_pick(self, "objective", 0);
    set_pick(self, "positions", ATN_POS_LEARNED);
    set_pick(self, "attention", 0);
    set_pick(self, "norm", ATN_TRAIN_PRE_LN);
    set_pick(self, "init", ATN_INIT_NORMAL);
    set_spin(self, "init-std", 0.02);
    set_spin(self, "dropout-attn", 0);
    set_spin(self, "dropout-hidden", 0);
    set_pick(self, "optim", 0);
    gtk_check_button_set_active(GTK_CHECK_BUTTON(control(self, "mlp")), TRUE);
    set_spin(self, "warmup", 0);
    set_spin(self, "clip", 1);
    set_pick(self, "precision", 0);
    gtk_check_button_set_active(GTK_CHECK_BUTTON(control(self, "checkpoint")), FALSE);
    set_spin(self, "batch", 32);
    set_spin(self, "seed", 1);
    switch (p) {
    case PRESET_COPY:
        set_pick(self, "task", ATN_TASK_COPY);
        set_spin(self, "layers", 2), set_spin(self, "heads", 4), set_spin(self, "d-model", 32);
        set_spin(self, "length", 16), set_spin(self, "symbols", 10), set_spin(self, "batch", 16);
        set_spin(self, "lr", 0.003), set_spin(self, "steps", 400), set_spin(self, "every", 20);
        break;
    case PRESET_INDUCTION: {   /* the engine's recipe (atn_train_options_induction) */
        atn_train_options o;
        atn_train_options_induction(&o);
        set_pick(self, "task", o.task);
        gtk_check_button_set_active(GTK_CHECK_BUTTON(control(self, "mlp")), !o.attention_only);
        set_pick(self, "positions", o.positions);
        set_pick(self, "norm", o.rms_norm ? 3 : o.norm);
        set_spin(self, "layers", o.layers), set_spin(self, "heads", o.heads), set_spin(self, "d-model", o.d_model);
        set_spin(self, "length", o.length), set_spin(self, "symbols", o.symbols), set_spin(self, "batch", o.batch);
        set_spin(self, "lr", o.lr), set_spin(self, "steps", o.steps), set_spin(self, "warmup", o.warmup);
        set_spin(self, "seed", (double)o.seed), set_spin(self, "every", 100);
        break;
    }
    case PRESET_SORT:
        set_pick(self, "task", ATN_TASK_SORT);
        set_spin(self, "layers", 2), set_spin(self, "heads", 4), set_spin(self, "d-model", 64);
        set_spin(self, "length", 8), set_spin(self, "symbols", 10);
        set_spin(self, "lr", 0.001), set_spin(self, "steps", 1500), set_spin(self, "every", 50);
        break;
    case PRESET_MODADD:
        set_pick(self, "task", ATN_TASK_MODADD);
        set_spin(self, "layers", 1), set_spin(self, "heads", 4), set_spin(self, "d-model", 64);
        set_spin(self, "length", 2), set_spin(self, "symbols", 23);
        set_spin(self, "lr", 0.003), set_spin(self, "steps", 3000), set_spin(self, "every", 100);
        break;
    default: break;
    }
    self->applying_preset = FALSE;
}

static void on_preset(GObject *dd, GParamSpec *ps, AtnTrainView *self) {
    (void)ps;
    apply_preset(self, (train_preset)gtk_drop_down_get_selected(GTK_DROP_DOWN(dd)));
}

/* A knob changed by hand: the preset says Custom. */
static void on_knob(GObject *w, GParamSpec *ps, AtnTrainView *self) {
    (void)w, (void)ps;
    if (!self->applying_preset)
        gtk_drop_down_set_selected(GTK_DROP_DOWN(control(self, "preset")), PRESET_CUSTOM);
}

static GtkWidget *add_row(AtnTrainView *self, GtkGrid *grid, int *row, const char *label, const char *name,
                          GtkWidget *w) {
    GtkWidget *l = gtk_label_new_with_mnemonic(label);
    gtk_label_set_xalign(GTK_LABEL(l), 0);
    gtk_label_set_wrap(GTK_LABEL(l), TRUE);
    gtk_label_set_mnemonic_widget(GTK_LABEL(l), w);
    gtk_widget_set_hexpand(w, TRUE);
    gtk_grid_attach(grid, l, 0, *row, 1, 1);
    gtk_grid_attach(grid, w, 1, *row, 1, 1);
    (*row)++;
    g_hash_table_insert(self->controls, (gpointer)name, w);
    if (strcmp(name, "preset")) {
        if (GTK_IS_DROP_DOWN(w))
            g_signal_connect(w, "notify::selected", G_CALLBACK(on_knob), self);
        else if (GTK_IS_SPIN_BUTTON(w))
            g_signal_connect(w, "notify::value", G_CALLBACK(on_knob), self);
        else if (GTK_IS_CHECK_BUTTON(w))
            g_signal_connect(w, "notify::active", G_CALLBACK(on_knob), self);
    }
    return w;
}

void atn_train_knobs_set_text_file(AtnTrainView *self, const char *path) {
    char *copy = g_strdup(path);
    g_ptr_array_add(self->text_paths, copy);
    self->text_path = copy;
    g_autofree char *base = g_path_get_basename(path);
    gtk_button_set_label(GTK_BUTTON(control(self, "text-file")), base);
    gtk_widget_set_tooltip_text(control(self, "text-file"), path);
}

static void on_text_chosen(GtkWidget *from, const char *path) { atn_train_knobs_set_text_file(ATN_TRAIN_VIEW(from), path); }

static void on_choose_text(GtkButton *b, AtnTrainView *self) {
    (void)b;
    atn_corpus_choose_file(GTK_WIDGET(self), on_text_chosen);
}

static GtkWidget *dropdown(const char *const *items, guint selected) {
    GtkWidget *d = gtk_drop_down_new_from_strings(items);
    gtk_drop_down_set_selected(GTK_DROP_DOWN(d), selected);
    return d;
}

static GtkWidget *spinner(double lo, double hi, double step, int digits, double value) {
    GtkWidget *s = gtk_spin_button_new_with_range(lo, hi, step);
    gtk_spin_button_set_digits(GTK_SPIN_BUTTON(s), (guint)digits);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(s), value);
    return s;
}

static GtkWidget *section(GtkBox *box, const char *title) {
    GtkWidget *l = gtk_label_new(title);
    gtk_label_set_xalign(GTK_LABEL(l), 0);
    gtk_widget_add_css_class(l, "heading");
    gtk_widget_set_margin_top(l, 6);
    gtk_box_append(box, l);
    GtkWidget *g = gtk_grid_new();
    gtk_grid_set_row_spacing(GTK_GRID(g), 4);
    gtk_grid_set_column_spacing(GTK_GRID(g), 8);
    gtk_box_append(box, g);
    return g;
}

GtkWidget *atn_train_knobs_build(AtnTrainView *self) {
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_widget_set_margin_start(box, 10);
    gtk_widget_set_margin_end(box, 10);
    gtk_widget_set_margin_top(box, 6);
    gtk_widget_set_margin_bottom(box, 10);
    int row = 0;
    const char *presets[] = {_("Custom"), _("Copy, quick"), _("Induction head"), _("Sort"), _("Modular addition"), NULL};
    const char *tasks[] = {_("copy"), _("reverse"), _("sort"), _("induction"), _("brackets"), _("modular addition"),
                           _("text"), NULL};
    const char *objectives[] = {_("next token (decoder)"), _("masked (encoder)"), NULL};
    const char *positions[] = {_("learned"), _("sinusoidal"), _("none"), _("ALiBi"), _("rotary"), NULL};
    const char *attention[] = {_("full (causal in a decoder)"), _("sliding window"),
                               _("Longformer: window, first token global"), _("blocks of Window tokens"),
                               _("Linformer: k = Window (encoder)"), NULL};
    const char *norms[] = {_("post-LN"), _("pre-LN"), _("none"), _("pre-LN, RMSNorm (Llama)"), NULL};
    const char *inits[] = {_("normal (σ)"), _("Xavier uniform"), _("orthogonal"), NULL};
    const char *optims[] = {_("AdamW"), _("SGD with momentum"), NULL};
    const char *precisions[] = {_("FP32"), _("BF16 (mixed precision)"), _("FP16 (mixed, loss scaling)"), NULL};

    GtkGrid *g = GTK_GRID(section(GTK_BOX(box), _("Task")));
    add_row(self, g, &row, _("_Preset"), "preset", dropdown(presets, PRESET_COPY));
    add_row(self, g, &row, _("_Task"), "task", dropdown(tasks, ATN_TASK_COPY));
    add_row(self, g, &row, _("_Length"), "length", spinner(2, 64, 1, 0, 16));
    add_row(self, g, &row, _("S_ymbols"), "symbols", spinner(2, 62, 1, 0, 10));
    GtkWidget *file = gtk_button_new_with_label(_("Choose…"));
    gtk_widget_set_tooltip_text(file, _("The text task's file (UTF-8): one token per character"));
    g_signal_connect(file, "clicked", G_CALLBACK(on_choose_text), self);
    add_row(self, g, &row, _("Text _file"), "text-file", file);
    row = 0;
    g = GTK_GRID(section(GTK_BOX(box), _("Model")));
    add_row(self, g, &row, _("_Objective"), "objective", dropdown(objectives, 0));
    add_row(self, g, &row, _("La_yers"), "layers", spinner(1, 4, 1, 0, 2));
    add_row(self, g, &row, _("_Heads"), "heads", spinner(1, 16, 1, 0, 4));
    add_row(self, g, &row, _("_d__model"), "d-model", spinner(8, 256, 8, 0, 64));
    GtkWidget *mlp = gtk_check_button_new_with_mnemonic(_("_MLP in each layer"));
    gtk_check_button_set_active(GTK_CHECK_BUTTON(mlp), TRUE);
    add_row(self, g, &row, "", "mlp", mlp);
    add_row(self, g, &row, _("Po_sitions"), "positions", dropdown(positions, ATN_POS_LEARNED));
    add_row(self, g, &row, _("_Attention"), "attention", dropdown(attention, 0));
    add_row(self, g, &row, _("_Window"), "window", spinner(0, 64, 1, 0, 4));
    gtk_widget_set_tooltip_text(control(self, "window"),
                                _("Sliding window and Longformer: keys within this distance of the query; "
                                  "blocks: the block size; Linformer: the number of projected keys"));
    add_row(self, g, &row, _("_LayerNorm"), "norm", dropdown(norms, ATN_TRAIN_PRE_LN));
    add_row(self, g, &row, _("_Initialisation"), "init", dropdown(inits, ATN_INIT_NORMAL));
    add_row(self, g, &row, _("Init _σ"), "init-std", spinner(0.001, 1, 0.005, 3, 0.02));
    gtk_widget_set_tooltip_text(control(self, "init-std"),
                                _("The normal initialisation's standard deviation (the embeddings' always)"));
    add_row(self, g, &row, _("Dropout, _attention"), "dropout-attn", spinner(0, 0.9, 0.05, 2, 0));
    add_row(self, g, &row, _("Dropout, _hidden"), "dropout-hidden", spinner(0, 0.9, 0.05, 2, 0));
    row = 0;
    g = GTK_GRID(section(GTK_BOX(box), _("Optimiser")));
    add_row(self, g, &row, _("Opt_imiser"), "optim", dropdown(optims, 0));
    add_row(self, g, &row, _("Learning _rate"), "lr", spinner(0.0001, 1, 0.0001, 4, 0.001));
    add_row(self, g, &row, _("Wa_rm-up steps"), "warmup", spinner(0, 10000, 10, 0, 0));
    add_row(self, g, &row, _("_Clip gradient norm"), "clip", spinner(0, 100, 0.5, 1, 1));
    add_row(self, g, &row, _("Precisio_n"), "precision", dropdown(precisions, 0));
    GtkWidget *ckpt = gtk_check_button_new_with_mnemonic(_("Gradient chec_kpointing"));
    gtk_widget_set_tooltip_text(ckpt, _("Recompute each layer's activations in the backward: the same gradients, "
                                        "less memory, about one more forward per step"));
    add_row(self, g, &row, "", "checkpoint", ckpt);
    add_row(self, g, &row, _("_Batch"), "batch", spinner(1, 64, 1, 0, 32));
    add_row(self, g, &row, _("S_teps"), "steps", spinner(1, 100000, 100, 0, 400));
    add_row(self, g, &row, _("S_eed"), "seed", spinner(0, 1e9, 1, 0, 1));
    add_row(self, g, &row, _("Redraw attention every"), "every", spinner(1, 1000, 5, 0, 20));
    g_signal_connect(control(self, "preset"), "notify::selected", G_CALLBACK(on_preset), self);
    apply_preset(self, PRESET_COPY);
    return box;
}

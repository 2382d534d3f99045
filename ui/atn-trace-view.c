/* AtnTraceView: one head's arithmetic as a worked solution, editable for toy models.
 *
 * The numbers come as a plan (atn-trace-plan.h: per step a formula, a table of strings, a
 * note) and are applied to the widgets: when the tables keep their shape (typing in a toy model's
 * cell, switching heads) the labels are updated in place, so the page never flickers and
 * the cell being edited keeps its focus.
 *
 * Just over 1,000 lines since the Trace at any length (session 16: the top-k keys, the "m
 * others" rows and "show all").  The plan (atn-trace-plan.c) and Check my work
 * (atn-check-work.c) are already separate; the way out is the "show all n keys" table and
 * the building-while-hidden section moving to a file of their own. */
#include "atn-check-work.h"
#include "atn-trace-view-private.h"
#include "atn-trace-view-test.h"

#include "atn-view.h"
#include "atn-wrap-box.h"

#include <glib/gi18n.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "atn-encdec.h"
#include "atn-figure.h"
#include "atn-whatif.h"
#include "atn-labels.h"
#include "atn-trace-markdown.h"
#include "atn-trace-plan.h"
#include "attention-file.h"
#include "trace-keys.h"

static void figure_source_iface_init(AtnFigureSourceInterface *iface);
static void view_iface_init(AtnViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(AtnTraceView, atn_trace_view, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_FIGURE_SOURCE, figure_source_iface_init)
                              G_IMPLEMENT_INTERFACE(ATN_TYPE_VIEW, view_iface_init))

/* ---- applying the plan to widgets --------------------------------------------------------------- */

static void clear_step_widgets(tstep_widgets *w) {
    g_free(w->cells);
    g_strfreev(w->list_cells);
    memset(w, 0, sizeof *w);
}

static void set_cell_flags(GtkWidget *label, guint8 flags) {
    if (flags & ATN_TRACE_CELL_HEADER)
        gtk_widget_add_css_class(label, "header");
    else
        gtk_widget_remove_css_class(label, "header");
    if (flags & ATN_TRACE_CELL_ACCENT)
        gtk_widget_add_css_class(label, "accent");
    else
        gtk_widget_remove_css_class(label, "accent");
}

/* A long table's row: one label per column, filled from the kept text when the row is shown. */
static void list_setup(GtkSignalListItemFactory *f, GtkListItem *item, gpointer col) {
    GtkWidget *l = gtk_label_new(NULL);
    gtk_label_set_xalign(GTK_LABEL(l), GPOINTER_TO_INT(col) == 1 ? 0.0f : 1.0f);
    gtk_widget_add_css_class(l, "numeric");
    gtk_list_item_set_child(item, l);
}

static void list_bind(GtkSignalListItemFactory *f, GtkListItem *item, gpointer data) {
    tstep_widgets *w = data;
    int c = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(f), "col"));
    int r = atoi(gtk_string_object_get_string(GTK_STRING_OBJECT(gtk_list_item_get_item(item))));
    const char *t = w->list_cells && r < w->rows ? w->list_cells[r * w->cols + c] : NULL;
    gtk_label_set_text(GTK_LABEL(gtk_list_item_get_child(item)), t ? t : "");
}

static void build_step(AtnTraceView *self, int s, const AtnTracePlanStep *p) {
    tstep_widgets *w = &self->steps[s];
    if (w->box)
        gtk_box_remove(self->steps_box, w->box);
    clear_step_widgets(w);
    w->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_widget_add_css_class(w->box, "trace-step");
    g_autofree char *title = g_strdup_printf("%d · %s", s + 1, atn_label_trace_step(s));
    GtkWidget *tl = gtk_label_new(title);
    gtk_label_set_xalign(GTK_LABEL(tl), 0);
    gtk_widget_add_css_class(tl, "heading");
    gtk_box_append(GTK_BOX(w->box), tl);
    w->formula = GTK_LABEL(gtk_label_new(NULL));
    gtk_label_set_xalign(w->formula, 0);
    gtk_label_set_wrap(w->formula, TRUE);
    gtk_widget_add_css_class(GTK_WIDGET(w->formula), "formula");
    gtk_box_append(GTK_BOX(w->box), GTK_WIDGET(w->formula));
    w->rows = p->rows;
    w->cols = p->cols;
    w->cells = g_new0(GtkLabel *, (size_t)p->rows * p->cols);
    if (!p->vector && p->rows > ATN_TRACE_LIST_ROWS) {
        /* every key of a long input: a list that makes the visible rows only */
        g_free(w->cells);
        w->cells = NULL;
        GtkStringList *rows = gtk_string_list_new(NULL);
        for (int r = 1; r < p->rows; r++) {
            char buf[16];
            g_snprintf(buf, sizeof buf, "%d", r);
            gtk_string_list_append(rows, buf);
        }
        w->list = GTK_COLUMN_VIEW(gtk_column_view_new(GTK_SELECTION_MODEL(gtk_no_selection_new(G_LIST_MODEL(rows)))));
        gtk_widget_add_css_class(GTK_WIDGET(w->list), "data-table");   /* compact rows */
        for (int c = 0; c < p->cols; c++) {
            GtkListItemFactory *f = gtk_signal_list_item_factory_new();
            g_object_set_data(G_OBJECT(f), "col", GINT_TO_POINTER(c));
            g_signal_connect(f, "setup", G_CALLBACK(list_setup), GINT_TO_POINTER(c));
            g_signal_connect(f, "bind", G_CALLBACK(list_bind), w);
            GtkColumnViewColumn *col = gtk_column_view_column_new(p->cells[c] ? p->cells[c] : "", f);
            gtk_column_view_append_column(w->list, col);
            g_object_unref(col);
        }
        GtkWidget *sc = gtk_scrolled_window_new();
        gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(sc), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
        gtk_scrolled_window_set_propagate_natural_width(GTK_SCROLLED_WINDOW(sc), TRUE);
        gtk_widget_set_size_request(sc, -1, (int)(360 * self->font_scale));
        gtk_widget_set_halign(sc, GTK_ALIGN_START);
        gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(sc), GTK_WIDGET(w->list));
        gtk_box_append(GTK_BOX(w->box), sc);
    } else if (p->vector && p->rows == 2) {
        /* a vector: index over value, column by column, wrapping into as many lines as the
           pane needs (a 128-wide concat never runs under the side pane) */
        w->flow = GTK_FLOW_BOX(gtk_flow_box_new());
        gtk_flow_box_set_selection_mode(w->flow, GTK_SELECTION_NONE);
        gtk_flow_box_set_max_children_per_line(w->flow, (guint)p->cols);
        gtk_flow_box_set_column_spacing(w->flow, (guint)(14 * self->font_scale));
        gtk_flow_box_set_row_spacing(w->flow, (guint)(6 * self->font_scale));
        gtk_widget_add_css_class(GTK_WIDGET(w->flow), "trace-table");
        gtk_widget_set_halign(GTK_WIDGET(w->flow), GTK_ALIGN_FILL);   /* START would break height-for-width */
        gtk_box_append(GTK_BOX(w->box), GTK_WIDGET(w->flow));
        for (int c = 0; c < p->cols; c++) {
            GtkWidget *col = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
            for (int r = 0; r < 2; r++) {
                GtkWidget *l = gtk_label_new(NULL);
                gtk_label_set_xalign(GTK_LABEL(l), c == 0 ? 0.0f : 1.0f);
                gtk_widget_add_css_class(l, "numeric");
                gtk_box_append(GTK_BOX(col), l);
                w->cells[r * p->cols + c] = GTK_LABEL(l);
            }
            gtk_flow_box_append(w->flow, col);
            gtk_widget_set_focusable(gtk_widget_get_parent(col), FALSE);
        }
    } else {
    w->grid = GTK_GRID(gtk_grid_new());
    gtk_grid_set_column_spacing(w->grid, (int)(14 * self->font_scale));
    gtk_grid_set_row_spacing(w->grid, 2);
    gtk_widget_add_css_class(GTK_WIDGET(w->grid), "trace-table");
    gtk_widget_set_halign(GTK_WIDGET(w->grid), GTK_ALIGN_START);
    gtk_box_append(GTK_BOX(w->box), GTK_WIDGET(w->grid));
    for (int r = 0; r < p->rows; r++)
        for (int c = 0; c < p->cols; c++) {
            GtkWidget *l = gtk_label_new(NULL);
            gtk_label_set_xalign(GTK_LABEL(l), c == 1 && p->rows > 2 ? 0.0f : 1.0f);
            gtk_label_set_selectable(GTK_LABEL(l), FALSE);
            gtk_widget_add_css_class(l, "numeric");
            gtk_grid_attach(w->grid, l, c, r, 1, 1);
            w->cells[r * p->cols + c] = GTK_LABEL(l);
        }
    }
    w->note = GTK_LABEL(gtk_label_new(NULL));
    gtk_label_set_xalign(w->note, 0);
    gtk_label_set_wrap(w->note, TRUE);
    gtk_widget_add_css_class(GTK_WIDGET(w->note), "dim-label");
    gtk_box_append(GTK_BOX(w->box), GTK_WIDGET(w->note));
    gtk_box_append(self->steps_box, w->box);
}

/* Removes the widgets of step s and of every step after it (steps are appended in order). */
static void drop_steps_from(AtnTraceView *self, int s) {
    for (int s2 = s; s2 < ATN_TRACE_STEP_COUNT; s2++)
        if (self->steps[s2].box) {
            gtk_box_remove(self->steps_box, self->steps[s2].box);
            clear_step_widgets(&self->steps[s2]);
        }
}

static void apply_plan(AtnTraceView *self, AtnTracePlanStep plans[ATN_TRACE_STEP_COUNT]) {
    /* steps are appended in order, so a rebuild of one means rebuilding those after it */
    gboolean rebuild = FALSE;
    for (int s = 0; s < ATN_TRACE_STEP_COUNT; s++) {
        tstep_widgets *w = &self->steps[s];
        const AtnTracePlanStep *p = &plans[s];
        if (rebuild || !w->box || w->rows != p->rows || w->cols != p->cols || (w->flow != NULL) != p->vector) {
            if (!rebuild)
                drop_steps_from(self, s);
            rebuild = TRUE;
            build_step(self, s, p);
        }
        gtk_label_set_markup(w->formula, p->formula ? p->formula : "");
        gtk_label_set_markup(w->note, p->note ? p->note : "");
        gtk_widget_set_visible(GTK_WIDGET(w->note), p->note != NULL);
        if (w->list) {   /* the rows' text, which the list shows as they scroll into view */
            g_strfreev(w->list_cells);
            w->list_cells = g_new0(char *, (size_t)p->rows * p->cols + 1);
            for (int i = 0; i < p->rows * p->cols; i++)
                w->list_cells[i] = g_strdup(p->cells[i] ? p->cells[i] : "");
            GListModel *m = G_LIST_MODEL(gtk_column_view_get_model(w->list));
            g_list_model_items_changed(m, 0, g_list_model_get_n_items(m), g_list_model_get_n_items(m));
            continue;
        }
        for (int i = 0; i < p->rows * p->cols; i++) {
            gtk_label_set_text(w->cells[i], p->cells[i] ? p->cells[i] : "");
            set_cell_flags(GTK_WIDGET(w->cells[i]), p->flags[i]);
        }
    }
}

/* ---- recomputing ----------------------------------------------------------------------------------- */

static void update_marks(AtnTraceView *self) {
    if (!self->trace) {
        atn_heatmap_set_marks(self->heatmap, -1, NULL, 0);
        return;
    }
    int i = self->trace->query;
    switch (self->step) {
    case ATN_TRACE_STEP_KEYS:
    case ATN_TRACE_STEP_VALUES:
        atn_heatmap_set_marks(self->heatmap, -1, NULL, 0);   /* every column: each key / value */
        break;
    case ATN_TRACE_STEP_QUERY:
    case ATN_TRACE_STEP_SCORES:
    case ATN_TRACE_STEP_SCALE:
    case ATN_TRACE_STEP_MASK:
    case ATN_TRACE_STEP_SOFTMAX:
    case ATN_TRACE_STEP_OUTPUT:
        atn_heatmap_set_marks(self->heatmap, i, NULL, 0);    /* the query's row */
        break;
    default:
        atn_heatmap_set_marks(self->heatmap, -1, NULL, 0);
        atn_heatmap_set_selected_row(self->heatmap, i);
        return;
    }
    if (self->step == ATN_TRACE_STEP_KEYS || self->step == ATN_TRACE_STEP_VALUES) {
        g_autofree gboolean *all = g_new(gboolean, self->trace->n);
        for (int j = 0; j < self->trace->n; j++)
            all[j] = TRUE;
        atn_heatmap_set_marks(self->heatmap, -1, all, self->trace->n);
    }
    atn_heatmap_set_selected_row(self->heatmap, i);
}

static void update_step_ui(AtnTraceView *self) {
    gboolean hiding = self->reveal && self->step >= 0;
    for (int s = 0; s < ATN_TRACE_STEP_COUNT; s++) {
        GtkWidget *box = self->steps[s].box;
        if (!box)
            continue;
        gtk_widget_set_visible(box, !hiding || s <= self->step);
        if (s == self->step)
            gtk_widget_add_css_class(box, "current");
        else
            gtk_widget_remove_css_class(box, "current");
        if (self->step >= 0 && s != self->step)
            gtk_widget_add_css_class(box, "inactive");
        else
            gtk_widget_remove_css_class(box, "inactive");
    }
    g_autofree char *label = self->step >= 0
                                 ? g_strdup_printf(_("Step %d of %d: %s"), self->step + 1, ATN_TRACE_STEP_COUNT,
                                                   atn_label_trace_step(self->step))
                                 : g_strdup(_("All steps"));
    gtk_label_set_text(self->step_label, label);
    gtk_widget_set_sensitive(GTK_WIDGET(self->prev_button), self->step != 0);
    /* the heatmap is the softmax's result: in reveal mode it waits for that step */
    gboolean weights_hidden = hiding && self->step < ATN_TRACE_STEP_SOFTMAX;
    gtk_widget_set_visible(GTK_WIDGET(self->heatmap), !weights_hidden);
    gtk_widget_set_visible(GTK_WIDGET(self->hidden_label), weights_hidden);
    update_marks(self);
}

static void scroll_now(AtnTraceView *self) {
    if (self->step < 0 || !self->steps[self->step].box)
        return;
    graphene_point_t p;
    if (!gtk_widget_compute_point(self->steps[self->step].box, GTK_WIDGET(self->sheet), &GRAPHENE_POINT_INIT(0, 0), &p))
        return;
    GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment(self->scroller);
    gtk_adjustment_set_value(adj, MAX(0, p.y - 12));
}

static gboolean scroll_tick(GtkWidget *w, GdkFrameClock *clock, gpointer data) {
    AtnTraceView *self = ATN_TRACE_VIEW(w);
    scroll_now(self);
    if (--self->scroll_frames > 0)
        return G_SOURCE_CONTINUE;
    self->scroll_tick_id = 0;
    return G_SOURCE_REMOVE;
}

/* Now, and again at the next two frames (ticks run before a frame's layout): a step that was
 * hidden a moment ago (reveal mode) has no position until it is laid out. */
static void scroll_to_step(AtnTraceView *self) {
    scroll_now(self);
    self->scroll_frames = 2;
    if (!self->scroll_tick_id)
        self->scroll_tick_id = gtk_widget_add_tick_callback(GTK_WIDGET(self), scroll_tick, NULL, NULL);
}

/* The layer and head pickers follow the session (the Head view's choice is the same one). */
static void update_where(AtnTraceView *self) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    self->syncing = TRUE;
    int nl = r ? atn_result_get_n_layers(r) : 1, nh = r ? atn_result_get_n_heads(r) : 1;
    gtk_spin_button_set_range(self->layer_spin, 0, MAX(0, nl - 1));
    gtk_spin_button_set_range(self->head_spin, 0, MAX(0, nh - 1));
    if (self->session) {
        gtk_spin_button_set_value(self->layer_spin, atn_session_get_layer(self->session));
        gtk_spin_button_set_value(self->head_spin, atn_session_get_head(self->session));
    }
    gtk_widget_set_sensitive(GTK_WIDGET(self->layer_spin), r != NULL);
    gtk_widget_set_sensitive(GTK_WIDGET(self->head_spin), r != NULL);
    self->syncing = FALSE;
}

static void on_pick(GtkSpinButton *b, AtnTraceView *self) {
    if (self->syncing || !self->session)
        return;
    atn_session_select_head(self->session, gtk_spin_button_get_value_as_int(self->layer_spin),
                            gtk_spin_button_get_value_as_int(self->head_spin));
}

/* The query drop-down's items ("i  token") follow the result's tokens.  Only the run of
 * items that differ is replaced, in one splice: a new list for 512 tokens cost 20-50 ms of a
 * switch to this view (the drop-down rebuilds its rows for a new model), and a keystroke
 * changes a few tokens. */
static atn_stack_kind trace_stack(AtnTraceView *self, AtnResult *r);

/* An encoder-decoder's decoder or cross head: its queries are the target's tokens. */
static void sync_query_drop(AtnTraceView *self, gboolean tokens_changed) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    self->syncing = TRUE;
    if (tokens_changed) {
        atn_stack_kind stack = trace_stack(self, r);
        const char *const *tok = stack != ATN_STACK_ENCODER ? atn_result_get_stack_tokens(r, stack, FALSE) : NULL;
        int n = 0;
        if (tok)
            atn_encdec_dims(r, stack, NULL, NULL, &n);
        else if (r)
            n = atn_result_get_n_tokens(r), tok = atn_result_get_tokens(r);
        g_auto(GStrv) items = g_new0(char *, n + 1);
        for (int i = 0; i < n; i++)
            items[i] = g_strdup_printf("%d  %s", i, tok[i]);
        GListModel *old = gtk_drop_down_get_model(self->query_drop);
        if (GTK_IS_STRING_LIST(old)) {
            GtkStringList *list = GTK_STRING_LIST(old);
            guint have = g_list_model_get_n_items(old), first = 0, tail = 0;
            while (first < have && first < (guint)n && !g_strcmp0(gtk_string_list_get_string(list, first), items[first]))
                first++;
            while (tail < have - first && tail < (guint)n - first &&
                   !g_strcmp0(gtk_string_list_get_string(list, have - 1 - tail), items[n - 1 - tail]))
                tail++;
            if (first < have || first < (guint)n) {
                char *saved = items[n - tail];   /* the replaced run, NULL-terminated for the splice */
                items[n - tail] = NULL;
                gtk_string_list_splice(list, first, have - first - tail, (const char *const *)items + first);
                items[n - tail] = saved;
            }
        } else {
            g_autoptr(GtkStringList) list = gtk_string_list_new((const char *const *)items);
            gtk_drop_down_set_model(self->query_drop, G_LIST_MODEL(list));
        }
    }
    if (r)
        gtk_drop_down_set_selected(self->query_drop, atn_session_get_query(self->session));
    self->syncing = FALSE;
}

static gboolean same_tokens(AtnResult *a, AtnResult *b) {
    if (!a || !b || atn_result_get_n_tokens(a) != atn_result_get_n_tokens(b))
        return FALSE;
    const char *const *ta = atn_result_get_tokens(a), *const *tb = atn_result_get_tokens(b);
    for (int i = 0; ta[i]; i++)
        if (g_strcmp0(ta[i], tb[i]))
            return FALSE;
    return TRUE;
}

/* Why an attention file (no weights) has no trace, as markup: the trace recomputes one head
 * from the model's weights; q, k and v saved in the file could stand for them, but the
 * engine does not build a trace from them yet. */
static const char *trace_off_reason(void) {
    return _("<b>The trace is off.</b> It recomputes a head from the model's weights (or from q, k "
             "and v saved in the file), and this attention file has neither. The head's attention "
             "is shown.");
}

/* The stack the trace follows: the session's for an encoder-decoder's result, else the encoder. */
static atn_stack_kind trace_stack(AtnTraceView *self, AtnResult *r) {
    return r && self->session && atn_result_is_encdec(r) ? (atn_stack_kind)atn_session_get_stack(self->session)
                                                         : ATN_STACK_ENCODER;
}

/* The keys' labels of a trace of stack in r (the target's tokens for a decoder head). */
static const char *const *key_labels(AtnResult *r, atn_stack_kind stack) {
    const char *const *l = stack != ATN_STACK_ENCODER ? atn_result_get_stack_tokens(r, stack, TRUE) : NULL;
    return l ? l : atn_result_get_tokens(r);
}

/* The query token's label (a target token for a decoder or cross head), or NULL: the keys'. */
static const char *query_label(AtnResult *r, const atn_trace *t) {
    const char *const *l = t->stack != ATN_STACK_ENCODER ? atn_result_get_stack_tokens(r, t->stack, FALSE) : NULL;
    return l && t->query < t->n_queries ? l[t->query] : NULL;
}

static void mark_dirty(AtnTraceView *self);

/* The keys the tables list: the top-k box's k, or 0 (every key) with "Show all n keys". */
static int view_top_k(AtnTraceView *self) {
    if (gtk_check_button_get_active(self->all_keys))
        return 0;
    return gtk_spin_button_get_value_as_int(self->top_spin);
}

/* The keys row: shown above 16 keys (shorter traces list every key), its check saying n. */
static void sync_keys_box(AtnTraceView *self, int n) {
    gtk_widget_set_visible(self->keys_box, n > 16);
    g_autofree char *all = g_strdup_printf(ngettext("Show all %d key", "Show all %d keys", n), n);
    gtk_check_button_set_label(self->all_keys, all);
    gtk_widget_set_sensitive(GTK_WIDGET(self->top_spin), !gtk_check_button_get_active(self->all_keys));
}

static void on_keys_changed(AtnTraceView *self) {
    if (self->trace)
        mark_dirty(self);
}

void atn_trace_view_refresh(AtnTraceView *self) {
    g_return_if_fail(ATN_IS_TRACE_VIEW(self));
    self->dirty = FALSE;
    _atn_trace_view_build_inputs(self);
    update_where(self);
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    /* the source's tokens, or (a decoder or cross head) the target's: listed again */
    if (!same_tokens(r, self->result) || !r || trace_stack(self, r) != ATN_STACK_ENCODER ||
        self->drop_stack != ATN_STACK_ENCODER)
        sync_query_drop(self, TRUE);
    else
        sync_query_drop(self, FALSE);
    self->drop_stack = trace_stack(self, r);
    atn_check_work_set_trace(ATN_CHECK_WORK(self->check), NULL, NULL, GTK_WIDGET(self));   /* borrows the trace */
    g_clear_pointer(&self->trace, atn_trace_free);
    g_set_object(&self->result, r);
    if (!r) {
        atn_heatmap_set_matrix(self->heatmap, NULL, NULL, 0, 0, NULL, NULL, NULL);
        return;
    }
    int layer = atn_session_get_layer(self->session), head = atn_session_get_head(self->session);
    int query = atn_session_get_query(self->session);
    atn_error err = {0};
    atn_stack_kind stack = trace_stack(self, r);   /* an encoder-decoder: the session's stack */
    gboolean traced = atn_result_can_trace(r);
    gtk_widget_set_visible(GTK_WIDGET(self->steps_box), traced);
    gtk_widget_set_sensitive(GTK_WIDGET(self->reveal_button), traced);   /* nothing to step through */
    gtk_widget_set_sensitive(GTK_WIDGET(self->all_button), traced);
    gtk_widget_set_sensitive(GTK_WIDGET(self->next_button), traced);
    if (!traced) {   /* an attention file without q/k/v: the head's matrix, and why no trace */
        gtk_label_set_markup(self->intro_label, trace_off_reason());
        int n = atn_result_get_n_tokens(r);
        atn_heatmap_set_causal(self->heatmap, atn_result_is_causal(r));
        atn_heatmap_set_matrix(self->heatmap, G_OBJECT(r), atn_result_get_head(r, layer, head), n, n,
                               atn_result_get_tokens(r), atn_result_get_tokens(r), atn_result_get_mask(r));
        atn_heatmap_set_split(self->heatmap, atn_result_get_split(r));
        gtk_widget_set_sensitive(GTK_WIDGET(self->prev_button), FALSE);   /* update_step_ui sets it again */
        return;
    }
    if (atn_result_trace_stack(r, stack, layer, head, query, &self->trace, &err) != ATN_OK) {
        g_autofree char *msg = g_markup_printf_escaped("<b>%s</b> %s", _("No trace:"), err.message);
        gtk_label_set_markup(self->intro_label, msg);
        return;
    }
    const atn_trace *t = self->trace;
    self->trace_gen++;
    int n_heads = atn_result_get_n_heads(r);
    const char *const *keys = key_labels(r, stack);
    const char *qlabel = query_label(r, t);
    g_autofree char *intro = stack == ATN_STACK_DECODER
        ? g_markup_printf_escaped(_("Decoder self-attention: how head %d of decoder layer %d mixes the target tokens "
                                    "for target token %d “%s” (causal: it sees target tokens 0–%d); d<sub>k</sub> = "
                                    "%d dimensions."),
                                  head, layer, query, qlabel ? qlabel : "?", query, t->d_head)
        : stack == ATN_STACK_CROSS
        ? g_markup_printf_escaped(_("Cross-attention: how head %d of decoder layer %d mixes the source tokens for "
                                    "target token %d “%s”. The query comes from the decoder (its hidden state of the "
                                    "target token); the keys and values come from the encoder's output (the source "
                                    "tokens); d<sub>k</sub> = %d dimensions."),
                                  head, layer, query, qlabel ? qlabel : "?", t->d_head)
        : t->from_file
        ? g_markup_printf_escaped(_("How head %d of layer %d mixes the tokens for token %d “%s”, from the attention "
                                    "file's q, k and v: %d heads of d<sub>k</sub> = %d dimensions (no weights: the "
                                    "output projection is left out)."),
                                  head, layer, query, atn_result_get_tokens(r)[query], n_heads, t->d_head)
        : atn_trace_plan_intro(t, atn_result_get_tokens(r)[query], n_heads);
    gtk_label_set_markup(self->intro_label, intro);

    AtnTracePlanStep plans[ATN_TRACE_STEP_COUNT];
    memset(plans, 0, sizeof plans);
    atn_trace_plan_make_top(t, keys, qlabel, n_heads, self->max_cols, view_top_k(self), plans);
    sync_keys_box(self, t->n);
    apply_plan(self, plans);
    if (self->max_cols == 8)
        _atn_trace_view_measure_cols(self, &plans[ATN_TRACE_STEP_KEYS]);   /* the same plan fit_cols would make */
    for (int s = 0; s < ATN_TRACE_STEP_COUNT; s++)
        atn_trace_plan_step_clear(&plans[s]);

    if (!atn_encdec_show_head(self->heatmap, r, stack, layer, head)) {   /* a decoder or cross head: its matrix */
        int n = atn_result_get_n_tokens(r);
        atn_heatmap_set_causal(self->heatmap, atn_result_is_causal(r));
        atn_heatmap_set_matrix(self->heatmap, G_OBJECT(r), atn_result_get_head(r, layer, head), n, n,
                               atn_result_get_tokens(r), atn_result_get_tokens(r), atn_result_get_mask(r));
        atn_heatmap_set_split(self->heatmap, atn_result_get_split(r));   /* a pair's A/B boundary */
    }
    g_autofree char *title = g_strdup_printf(_("layer %d · head %d"), layer, head);
    atn_heatmap_set_title(self->heatmap, title);
    update_step_ui(self);
    atn_check_work_set_trace(ATN_CHECK_WORK(self->check), t, keys, GTK_WIDGET(self));
}

/* ---- building while hidden ------------------------------------------------------------------- */

/* The first switch to this view after a model is opened built ~700 labels (10 steps' tables)
 * and laid them out for the first time: ~90-140 ms of the main thread at 512 tokens, against
 * ~20-30 ms for a switch that finds them built (docs/PERFORMANCE.md, "first switch").  So a
 * result that reaches the hidden view builds the tables it will need, one step per idle at
 * low priority (each a few ms: a keystroke is never kept waiting a frame), and measures each
 * once, so that its labels' styles and text layouts are made too; the switch then only fills
 * in the numbers (apply_plan finds every table of the right shape). */
static void warm_stop(AtnTraceView *self) {
    g_clear_handle_id(&self->warm_id, g_source_remove);
    if (self->warm_plans) {
        for (int s = 0; s < ATN_TRACE_STEP_COUNT; s++)
            atn_trace_plan_step_clear(&self->warm_plans[s]);
        g_clear_pointer(&self->warm_plans, g_free);
    }
}

static gboolean warm_cb(gpointer data) {
    AtnTraceView *self = ATN_TRACE_VIEW(data);
    if (gtk_widget_get_mapped(GTK_WIDGET(self)) || !self->dirty || !self->session) {
        self->warm_id = 0;   /* shown meanwhile (refreshed at map), or nothing to show */
        warm_stop(self);
        return G_SOURCE_REMOVE;
    }
    if (!self->warm_plans) {   /* the shapes: the trace of the head the view will show */
        AtnResult *r = atn_session_get_result(self->session);
        atn_trace *t = NULL;
        atn_error err = {0};
        if (!r || !atn_result_can_trace(r) ||
            atn_result_trace_stack(r, trace_stack(self, r), atn_session_get_layer(self->session),
                                   atn_session_get_head(self->session), atn_session_get_query(self->session), &t,
                                   &err) != ATN_OK) {
            self->warm_id = 0;
            return G_SOURCE_REMOVE;   /* the switch says why (atn_trace_view_refresh) */
        }
        self->warm_plans = g_new0(AtnTracePlanStep, ATN_TRACE_STEP_COUNT);
        atn_trace_plan_make_top(t, key_labels(r, t->stack), query_label(r, t), atn_result_get_n_heads(r),
                                self->max_cols, view_top_k(self), self->warm_plans);
        atn_trace_free(t);
        self->warm_step = 0;
        return G_SOURCE_CONTINUE;
    }
    int s = self->warm_step++;
    tstep_widgets *w = &self->steps[s];
    const AtnTracePlanStep *p = &self->warm_plans[s];
    if (!w->box || w->rows != p->rows || w->cols != p->cols || (w->flow != NULL) != p->vector) {
        /* as apply_plan would: the steps after a rebuilt one are rebuilt too, in order */
        drop_steps_from(self, s);
        build_step(self, s, p);
        for (int i = 0; w->cells && i < p->rows * p->cols; i++) {   /* this result's text: the layouts the switch will want */
            gtk_label_set_text(w->cells[i], p->cells[i] ? p->cells[i] : "");
            set_cell_flags(GTK_WIDGET(w->cells[i]), p->flags[i]);
        }
        int min, nat;
        gtk_widget_measure(w->box, GTK_ORIENTATION_HORIZONTAL, -1, &min, &nat, NULL, NULL);
    }
    if (self->warm_step < ATN_TRACE_STEP_COUNT)
        return G_SOURCE_CONTINUE;
    self->warm_id = 0;
    warm_stop(self);
    return G_SOURCE_REMOVE;
}

/* TRUE when the tables may be missing or of other shapes than r's trace needs: none built yet,
 * or r is of another model than they were built for (its dimensions decide the shapes; a new
 * sentence of the same model keeps them, or apply_plan rebuilds the few that change). */
static gboolean needs_tables(AtnTraceView *self, AtnResult *r) {
    return self->steps[0].box == NULL || self->tables_model != atn_result_get_model(r);
}

static void mark_dirty(AtnTraceView *self) {
    self->dirty = TRUE;
    if (gtk_widget_get_mapped(GTK_WIDGET(self)))
        atn_trace_view_refresh(self);
    else if (self->session && !self->warm_id) {
        AtnResult *r = atn_session_get_result(self->session);
        if (r && needs_tables(self, r)) {
            self->tables_model = atn_result_get_model(r);
            self->warm_id = g_idle_add_full(G_PRIORITY_LOW, warm_cb, self, NULL);
        }
    }
}

static void on_session_changed(AtnSession *s, GParamSpec *p, AtnTraceView *self) { mark_dirty(self); }

static void on_hover(AtnSession *s, GParamSpec *p, AtnTraceView *self) {
    atn_heatmap_set_highlight_token(self->heatmap, atn_session_get_hover_token(s));
}

static void on_query_selected(GtkDropDown *d, GParamSpec *p, AtnTraceView *self) {
    if (self->syncing || !self->session)
        return;
    guint sel = gtk_drop_down_get_selected(d);
    if (sel != GTK_INVALID_LIST_POSITION)
        atn_session_set_query(self->session, (int)sel);
}

static void on_cell_clicked(AtnHeatmap *h, int row, int col, AtnTraceView *self) {
    if (self->session)
        atn_session_set_query(self->session, row);
}

static void atn_trace_view_map(GtkWidget *widget) {
    GTK_WIDGET_CLASS(atn_trace_view_parent_class)->map(widget);
    AtnTraceView *self = ATN_TRACE_VIEW(widget);
    if (self->dirty)
        atn_trace_view_refresh(self);
}

void atn_trace_view_set_step(AtnTraceView *self, int step) {
    g_return_if_fail(ATN_IS_TRACE_VIEW(self));
    if (step < -1 || step >= ATN_TRACE_STEP_COUNT)
        step = -1;
    self->step = step;
    update_step_ui(self);
    scroll_to_step(self);
}

int atn_trace_view_get_step(AtnTraceView *self) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), 0);
    return self->step;
}

void atn_trace_view_set_reveal(AtnTraceView *self, gboolean reveal) {
    g_return_if_fail(ATN_IS_TRACE_VIEW(self));
    reveal = !!reveal;
    if (gtk_toggle_button_get_active(self->reveal_button) != reveal) {
        gtk_toggle_button_set_active(self->reveal_button, reveal);   /* comes back through on_reveal */
        return;
    }
    self->reveal = reveal;
    if (reveal && self->step < 0)
        self->step = 0;   /* a lesson starts at the first step */
    update_step_ui(self);
    scroll_to_step(self);
}

gboolean atn_trace_view_get_reveal(AtnTraceView *self) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), FALSE);
    return self->reveal;
}

GtkWidget *atn_trace_view_get_step_widget(AtnTraceView *self, atn_trace_step step) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), NULL);
    if (self->dirty)
        atn_trace_view_refresh(self);
    return step >= 0 && step < ATN_TRACE_STEP_COUNT ? self->steps[step].box : NULL;
}

static void on_reveal(GtkToggleButton *b, GParamSpec *p, AtnTraceView *self) {
    atn_trace_view_set_reveal(self, gtk_toggle_button_get_active(b));
}

static void on_prev(GtkButton *b, AtnTraceView *self) {
    atn_trace_view_set_step(self, self->step < 0 ? ATN_TRACE_STEP_COUNT - 1 : self->step - 1);
}

static void on_next(GtkButton *b, AtnTraceView *self) {
    atn_trace_view_set_step(self, self->step + 1 >= ATN_TRACE_STEP_COUNT ? -1 : self->step + 1);
}

static void on_all(GtkButton *b, AtnTraceView *self) { atn_trace_view_set_step(self, -1); }

static gboolean on_key(GtkEventControllerKey *c, guint keyval, guint code, GdkModifierType state, AtnTraceView *self) {
    if (!(state & GDK_CONTROL_MASK))
        return FALSE;
    if (keyval == GDK_KEY_Page_Down) {
        on_next(NULL, self);
        return TRUE;
    }
    if (keyval == GDK_KEY_Page_Up) {
        on_prev(NULL, self);
        return TRUE;
    }
    return FALSE;
}

char *atn_trace_view_dup_step_text(AtnTraceView *self, atn_trace_step step) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), NULL);
    if (self->dirty)
        atn_trace_view_refresh(self);
    tstep_widgets *w = &self->steps[step];
    if (!w->box)
        return NULL;
    GString *g = g_string_new(NULL);
    if (w->list) {   /* a long table: the text its rows show */
        for (int r = 0; r < w->rows; r++) {
            for (int c = 0; c < w->cols; c++) {
                if (c)
                    g_string_append_c(g, '\t');
                g_string_append(g, w->list_cells ? w->list_cells[r * w->cols + c] : "");
            }
            g_string_append_c(g, '\n');
        }
        return g_string_free(g, FALSE);
    }
    for (int r = 0; r < w->rows; r++) {
        for (int c = 0; c < w->cols; c++) {
            if (c)
                g_string_append_c(g, '\t');
            g_string_append(g, gtk_label_get_text(w->cells[r * w->cols + c]));
        }
        g_string_append_c(g, '\n');
    }
    return g_string_free(g, FALSE);
}

char *atn_trace_view_dup_markdown(AtnTraceView *self, GError **error) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), NULL);
    if (self->dirty || !self->trace)
        atn_trace_view_refresh(self);
    if (!self->trace && self->result && !atn_result_can_trace(self->result)) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                            _("The trace is off: this attention file has neither weights nor q, k and v to trace a head with."));
        return NULL;
    }
    if (!self->trace) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("There is no trace yet: run the model first."));
        return NULL;
    }
    return atn_trace_to_markdown_top(self->trace, key_labels(self->result, self->trace->stack),
                                     query_label(self->result, self->trace),
                                     atn_model_handle_get_name(atn_result_get_model(self->result)),
                                     atn_result_get_n_heads(self->result), view_top_k(self));   /* as listed */
}

/* ---- the figure: ui/render's trace sheet ------------------------------------------------------------- */

typedef struct sheet_figure {
    atn_trace_sheet_spec spec;
    atn_render_style style;
    AtnResult *result;   /* keeps the trace's tokens alive */
    atn_trace *trace;
    char *model_name;
} sheet_figure;

static void sheet_figure_free(gpointer data) {
    sheet_figure *f = data;
    atn_trace_free(f->trace);
    g_clear_object(&f->result);
    g_free(f->model_name);
    g_free(f);
}

static void sheet_figure_draw(cairo_t *cr, double width, double height, void *data) {
    sheet_figure *f = data;
    atn_render_trace_sheet(cr, &f->spec, width, height);
}

/* The figure's data: the trace sheet's spec as Export and Copy draw it, or NULL. */
static sheet_figure *figure_data(AtnTraceView *self) {
    if (self->dirty || !self->trace)
        atn_trace_view_refresh(self);
    if (!self->trace)
        return NULL;
    sheet_figure *f = g_new0(sheet_figure, 1);
    atn_render_style_init(&f->style, FALSE);
    f->result = g_object_ref(self->result);
    atn_error err = {0};
    if (atn_result_trace_stack(self->result, self->trace->stack, self->trace->layer, self->trace->head,
                               self->trace->query, &f->trace, &err) != ATN_OK) {
        sheet_figure_free(f);
        return NULL;
    }
    f->model_name = atn_whatif_title(atn_whatif_of_result(self->result),
                                     atn_model_handle_get_name(atn_result_get_model(self->result)));
    atn_trace_sheet_spec_init(&f->spec);
    f->spec.trace = f->trace;
    f->spec.token_labels = key_labels(f->result, f->trace->stack);   /* the target's for a decoder head */
    f->spec.model_name = f->model_name;
    f->spec.n_heads = atn_result_get_n_heads(self->result);
    f->spec.highlight_step = self->step;
    /* the rows the tables list; "show all n keys" is a scrolling table, too long for a page:
       the picture then lists the top k the spin button says */
    f->spec.top_k = view_top_k(self) > 0 ? view_top_k(self) : gtk_spin_button_get_value_as_int(self->top_spin);
    f->spec.style = &f->style;
    return f;
}

static AtnFigure *dup_figure(AtnFigureSource *source) {
    sheet_figure *f = figure_data(ATN_TRACE_VIEW(source));
    if (!f)
        return NULL;
    double w, h;
    atn_render_trace_sheet_natural_size(&f->spec, &w, &h);
    g_autofree char *name = g_strdup_printf("trace-L%d-H%d-q%d", f->trace->layer, f->trace->head, f->trace->query);
    return atn_figure_new(w, h, sheet_figure_draw, f, sheet_figure_free, name);
}

static void figure_source_iface_init(AtnFigureSourceInterface *iface) { iface->dup_figure = dup_figure; }

char *atn_trace_view_dup_figure_text(AtnTraceView *self) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), NULL);
    sheet_figure *f = figure_data(self);
    if (!f)
        return NULL;
    double w, h;
    atn_render_trace_sheet_natural_size(&f->spec, &w, &h);
    char *text = atn_render_trace_sheet_text(&f->spec, w);
    char *copy = g_strdup(text);
    free(text);
    sheet_figure_free(f);
    return copy;
}

/* ---- GObject --------------------------------------------------------------------------------------- */

static void atn_trace_view_dispose(GObject *object) {
    AtnTraceView *self = ATN_TRACE_VIEW(object);
    if (self->scroll_tick_id) {
        gtk_widget_remove_tick_callback(GTK_WIDGET(self), self->scroll_tick_id);
        self->scroll_tick_id = 0;
    }
    g_clear_handle_id(&self->cols_idle_id, g_source_remove);
    g_clear_handle_id(&self->stack_idle_id, g_source_remove);
    warm_stop(self);
    if (self->stacked)   /* back in the template's place, which disposes it */
        _atn_trace_view_set_stacked(self, FALSE);
    g_clear_pointer(&self->colw_font, g_free);
    g_clear_pointer(&self->colw_cache, g_hash_table_unref);
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_clear_object(&self->session);
    if (self->check)
        atn_check_work_set_trace(ATN_CHECK_WORK(self->check), NULL, NULL, NULL);
    g_clear_pointer(&self->trace, atn_trace_free);
    g_clear_object(&self->result);
    g_clear_object(&self->inputs_model);
    for (int s = 0; s < ATN_TRACE_STEP_COUNT; s++)
        clear_step_widgets(&self->steps[s]);
    gtk_widget_dispose_template(GTK_WIDGET(self), ATN_TYPE_TRACE_VIEW);
    g_clear_pointer(&self->inputs, g_hash_table_unref);
    G_OBJECT_CLASS(atn_trace_view_parent_class)->dispose(object);
}

static void atn_trace_view_class_init(AtnTraceViewClass *klass) {
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = atn_trace_view_dispose;
    wc->map = atn_trace_view_map;
    wc->size_allocate = _atn_trace_view_size_allocate;
    wc->measure = _atn_trace_view_measure;
    g_type_ensure(ATN_TYPE_HEATMAP);
    g_type_ensure(ATN_TYPE_WRAP_BOX);
    gtk_widget_class_set_template_from_resource(wc, "/io/github/attnscope/Attnscope/atn-trace-view.ui");
#define BIND(name) gtk_widget_class_bind_template_child(wc, AtnTraceView, name)
    BIND(box);
    BIND(query_drop);
    BIND(layer_spin);
    BIND(head_spin);
    BIND(reveal_button);
    BIND(hidden_label);
    BIND(paned);
    BIND(side_box);
    BIND(step_label);
    BIND(intro_label);
    BIND(legend_label);
    BIND(prev_button);
    BIND(next_button);
    BIND(all_button);
    BIND(scroller);
    BIND(sheet);
    BIND(inputs_box);
    BIND(steps_box);
    BIND(heatmap);
#undef BIND
    gtk_widget_class_set_css_name(wc, "traceview");
}

static void atn_trace_view_init(AtnTraceView *self) {
    gtk_widget_init_template(GTK_WIDGET(self));
    self->step = -1;
    self->font_scale = 1.0;
    self->max_cols = 8;
    self->inputs_layer = -1;
    /* at a large text size (presentation mode) the side heatmap's labels never below the
       normal size while that keeps every label: it drew them at 0.8 of it, half the size of
       everything else on the page (issue 40) */
    atn_heatmap_set_min_label_scale(self->heatmap, 1.0);
    self->inputs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    /* the keys a long trace lists (issue 35): top k by weight, or every key */
    self->keys_box = atn_wrap_box_new(8);   /* up to 4 lines at a large text size in a narrow sheet */
    g_object_set(self->keys_box, "max-lines", 4, NULL);
    GtkWidget *kl = gtk_label_new_with_mnemonic(_("_Keys listed: the top"));
    self->top_spin = GTK_SPIN_BUTTON(gtk_spin_button_new_with_range(1, 256, 1));
    gtk_spin_button_set_value(self->top_spin, ATN_TRACE_TOP_DEFAULT);
    gtk_label_set_mnemonic_widget(GTK_LABEL(kl), GTK_WIDGET(self->top_spin));
    GtkWidget *kr = gtk_label_new(_("by weight, the first and last 2, the query"));
    gtk_widget_add_css_class(kr, "dim-label");
    gtk_label_set_wrap(GTK_LABEL(kr), TRUE);
    gtk_label_set_xalign(GTK_LABEL(kr), 0);
    self->all_keys = GTK_CHECK_BUTTON(gtk_check_button_new_with_label(""));
    GtkWidget *top = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);   /* the label stays with its box */
    gtk_box_append(GTK_BOX(top), kl);
    gtk_box_append(GTK_BOX(top), GTK_WIDGET(self->top_spin));
    gtk_widget_set_parent(top, self->keys_box);
    gtk_widget_set_parent(kr, self->keys_box);
    gtk_widget_set_parent(GTK_WIDGET(self->all_keys), self->keys_box);
    gtk_widget_set_visible(self->keys_box, FALSE);
    gtk_box_insert_child_after(self->sheet, self->keys_box, GTK_WIDGET(self->intro_label));
    g_signal_connect_swapped(self->top_spin, "value-changed", G_CALLBACK(on_keys_changed), self);
    g_signal_connect_swapped(self->all_keys, "notify::active", G_CALLBACK(on_keys_changed), self);
    self->check = atn_check_work_new();   /* "Check my work", between the inputs and the steps */
    gtk_box_insert_child_after(self->sheet, self->check, GTK_WIDGET(self->inputs_box));
    self->colw_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_signal_connect(self->query_drop, "notify::selected", G_CALLBACK(on_query_selected), self);
    g_signal_connect(self->prev_button, "clicked", G_CALLBACK(on_prev), self);
    g_signal_connect(self->next_button, "clicked", G_CALLBACK(on_next), self);
    g_signal_connect(self->all_button, "clicked", G_CALLBACK(on_all), self);
    g_signal_connect(self->layer_spin, "value-changed", G_CALLBACK(on_pick), self);
    g_signal_connect(self->head_spin, "value-changed", G_CALLBACK(on_pick), self);
    g_signal_connect(self->reveal_button, "notify::active", G_CALLBACK(on_reveal), self);
    g_signal_connect(self->paned, "notify::max-position", G_CALLBACK(_atn_trace_view_on_paned_width), self);
    g_signal_connect(self->heatmap, "cell-clicked", G_CALLBACK(on_cell_clicked), self);
    GtkEventController *keys = gtk_event_controller_key_new();
    g_signal_connect(keys, "key-pressed", G_CALLBACK(on_key), self);
    gtk_widget_add_controller(GTK_WIDGET(self), keys);
    update_step_ui(self);
}

GtkWidget *atn_trace_view_new(void) { return g_object_new(ATN_TYPE_TRACE_VIEW, NULL); }

void atn_trace_view_set_session(AtnTraceView *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_TRACE_VIEW(self));
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    if (session) {
        static const char *const watched[] = {"notify::result", "notify::layer", "notify::head", "notify::query",
                                              "notify::model", "notify::stack"};
        for (guint i = 0; i < G_N_ELEMENTS(watched); i++)
            g_signal_connect(session, watched[i], G_CALLBACK(on_session_changed), self);
        g_signal_connect(session, "notify::hover-token", G_CALLBACK(on_hover), self);
    }
    mark_dirty(self);
}

void atn_trace_view_set_colormap(AtnTraceView *self, atn_colormap cm) {
    g_return_if_fail(ATN_IS_TRACE_VIEW(self));
    atn_heatmap_set_colormap(self->heatmap, cm);
}

void atn_trace_view_set_font_scale(AtnTraceView *self, double scale) {
    g_return_if_fail(ATN_IS_TRACE_VIEW(self));
    self->font_scale = scale;
    atn_heatmap_set_font_scale(self->heatmap, scale);
    if (!self->stacked)
        gtk_widget_set_size_request(self->side_box, _atn_trace_view_side_floor(self), -1);
    for (int s = 0; s < ATN_TRACE_STEP_COUNT; s++)
        if (self->steps[s].grid)
            gtk_grid_set_column_spacing(self->steps[s].grid, (int)(14 * scale));
        else if (self->steps[s].flow)
            gtk_flow_box_set_column_spacing(self->steps[s].flow, (guint)(14 * scale));
    self->paned_width = 0;
    _atn_trace_view_on_paned_width(self->paned, NULL, self);
}

guint atn_trace_view_get_key_widths(AtnTraceView *self, int *fixed, int *ell, int w[8]) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), 0);
    if (self->dirty)
        atn_trace_view_refresh(self);
    if (self->trace && self->result)
        _atn_trace_view_measure_cols(self, NULL);
    *fixed = self->colw_fixed;
    *ell = self->colw_ell;
    memcpy(w, self->colw, sizeof self->colw);
    return self->colw_measured;
}

GtkCheckButton *atn_trace_view_get_all_keys(AtnTraceView *self) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), NULL);
    return self->all_keys;
}

GtkSpinButton *atn_trace_view_get_top_spin(AtnTraceView *self) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), NULL);
    return self->top_spin;
}

const atn_trace *atn_trace_view_get_trace(AtnTraceView *self) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), NULL);
    return self->trace;
}

gboolean atn_trace_view_get_stacked(AtnTraceView *self) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), FALSE);
    return self->stacked;
}

const char *atn_trace_view_get_intro(AtnTraceView *self) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), NULL);
    return gtk_label_get_text(self->intro_label);
}

AtnHeatmap *atn_trace_view_get_heatmap(AtnTraceView *self) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), NULL);
    return self->heatmap;
}

/* ---- AtnView ---------------------------------------------------------------------------------- */

static void view_set_session(AtnView *view, AtnSession *session) { atn_trace_view_set_session(ATN_TRACE_VIEW(view), session); }
static void view_set_colormap(AtnView *view, atn_colormap cm) { atn_trace_view_set_colormap(ATN_TRACE_VIEW(view), cm); }
static void view_set_font_scale(AtnView *view, double scale) { atn_trace_view_set_font_scale(ATN_TRACE_VIEW(view), scale); }

ATN_VIEW_REGISTER(atn_trace_view)

static void view_iface_init(AtnViewInterface *iface) {
    iface->set_session = view_set_session;
    iface->set_colormap = view_set_colormap;
    iface->set_font_scale = view_set_font_scale;
}

/* AtnTraceView's layout: how many columns of d_k the key and value tables show (measured
 * in the cells' font, cached), where the divider goes, when the heatmap moves into the
 * sheet above the steps (stacked), and the view's measure and allocation.  See
 * docs/ARCHITECTURE.md (Conventions, the Trace view's divider) and
 * atn-trace-view-private.h for how the view is split. */
#include "atn-trace-view-private.h"
#include "atn-trace-view-test.h"

#include <string.h>

/* The width (px) of a cell's text in the cells' font (style.css: monospace, bold for headers
 * and the query row's accent), from the view's width cache: a monospace font gives every digit
 * the same advance, so the text is keyed with its digits as 0 ("-0.1234" and "-0.5678" are one
 * measurement) and a new trace's 170 key-table cells need a handful of Pango layouts, not 170
 * (they were 8% of a switch to this view on a new result). The cache belongs to one font
 * (colw_font) and is cleared when it changes or grows past 4096 texts. */
static int cell_text_width(AtnTraceView *self, PangoLayout *l, const PangoFontDescription *base,
                           const PangoFontDescription *bold, const char *t, gboolean is_bold) {
    if (!t || !*t)
        return 0;
    GString *key = g_string_sized_new(strlen(t) + 2);
    g_string_append_c(key, is_bold ? 'b' : 'r');
    for (const char *c = t; *c; c++)
        g_string_append_c(key, g_ascii_isdigit(*c) ? '0' : *c);
    gpointer hit;
    if (g_hash_table_lookup_extended(self->colw_cache, key->str, NULL, &hit)) {
        g_string_free(key, TRUE);
        return GPOINTER_TO_INT(hit);
    }
    self->colw_measured++;
    pango_layout_set_font_description(l, is_bold ? bold : base);
    pango_layout_set_text(l, t, -1);
    PangoRectangle logical;
    pango_layout_get_pixel_extents(l, NULL, &logical);
    if (g_hash_table_size(self->colw_cache) >= 4096)
        g_hash_table_remove_all(self->colw_cache);
    g_hash_table_insert(self->colw_cache, g_string_free(key, FALSE), GINT_TO_POINTER(logical.width));
    return logical.width;
}

/* The widths the key table's columns take (the widest table: j, token and up to 8 numbers
 * of d_k; the value table has the same columns), measured from the text of the full 8-column
 * plan at the view's current font size: once per trace and font. keys8 is that plan's key
 * step when the caller has it (refresh, at 8 columns), else NULL: it is made here. */
void _atn_trace_view_measure_cols(AtnTraceView *self, const AtnTracePlanStep *keys8) {
    PangoContext *ctx = gtk_widget_get_pango_context(GTK_WIDGET(self));
    PangoFontDescription *base = pango_font_description_copy(pango_context_get_font_description(ctx));
    pango_font_description_set_family(base, "monospace");
    g_autofree char *key = pango_font_description_to_string(base);
    if (self->colw_gen == self->trace_gen && !g_strcmp0(key, self->colw_font)) {
        pango_font_description_free(base);
        return;
    }
    if (g_strcmp0(key, self->colw_font))
        g_hash_table_remove_all(self->colw_cache);
    g_free(self->colw_font);
    self->colw_font = g_steal_pointer(&key);
    self->colw_gen = self->trace_gen;
    AtnTracePlanStep plans[ATN_TRACE_STEP_COUNT];
    memset(plans, 0, sizeof plans);
    if (!keys8) {
        atn_trace_plan_make_labelled(self->trace, atn_result_get_tokens(self->result),
                                     atn_result_get_n_heads(self->result), 8, plans);
        keys8 = &plans[ATN_TRACE_STEP_KEYS];
    }
    const AtnTracePlanStep *p = keys8;
    PangoLayout *l = pango_layout_new(ctx);
    PangoFontDescription *bold = pango_font_description_copy(base);
    pango_font_description_set_weight(bold, PANGO_WEIGHT_BOLD);
    int *w = g_new0(int, p->cols);
    for (int r = 0; r < p->rows; r++)
        for (int c = 0; c < p->cols; c++) {
            guint8 f = p->flags[r * p->cols + c];
            int tw = cell_text_width(self, l, base, bold, p->cells[r * p->cols + c],
                                     (f & (ATN_TRACE_CELL_HEADER | ATN_TRACE_CELL_ACCENT)) != 0);
            w[c] = MAX(w[c], tw);
        }
    self->colw_ell = cell_text_width(self, l, base, bold, "…", TRUE);
    /* the plan's columns: j, token, then d_k's shown at 8 (all of them, or 0..3 … k-3..k-1) */
    int k = self->trace->d_head;
    self->colw_k = k;
    self->colw_fixed = w[0] + w[1];
    memset(self->colw, 0, sizeof self->colw);
    for (int c = 2, i = 0; c < p->cols && i < 8; c++) {
        const char *h = p->cells[c];
        if (h && !strcmp(h, "…")) {
            self->colw_ell = MAX(self->colw_ell, w[c]);
            continue;
        }
        self->colw[i++] = w[c];   /* the i-th shown d_k column: 0.. from the left, the last ones from the right */
    }
    g_free(w);
    g_object_unref(l);
    pango_font_description_free(bold);
    pango_font_description_free(base);
    for (int st = 0; st < ATN_TRACE_STEP_COUNT; st++)
        atn_trace_plan_step_clear(&plans[st]);
}

/* The key table's width with at most m columns of d_k (as atn_trace_plan_make_cols lays
 * them out: all when k <= m, else the first m/2, "…", the last m/2 - 1). */
static int table_width(AtnTraceView *self, int m) {
    int k = self->colw_k, spacing = (int)(14 * self->font_scale);
    int shown = MIN(k, 8), total = self->colw_fixed, cols = 2;
    if (k <= m) {
        for (int i = 0; i < shown; i++)
            total += self->colw[i];
        cols += shown;
    } else {
        /* colw[] holds the 8-wide plan's columns: the first 4 and the last 3 when k > 8 */
        int left = m / 2, right = m / 2 - 1;
        int nl = k > 8 ? 4 : k, off_right = k > 8 ? 4 : 0;
        for (int i = 0; i < left; i++)
            total += self->colw[i];
        for (int i = 0; i < right; i++)
            total += k > 8 ? self->colw[off_right + 3 - right + i] : self->colw[nl - right + i];
        total += self->colw_ell;
        cols += left + right + 1;
    }
    return total + spacing * (cols - 1);
}

/* The most columns of d_k (4..8) whose key table fits beside the side pane, from the pane's
 * position and the measured text: one pass, the same answer for the same width, font and
 * trace however fast the machine draws (the old fitting measured the built table a few frames
 * after a change, and on a slow machine, under AddressSanitizer, measured it before the new
 * text size applied and never looked again). */
/* The sheet's and the step's padding and border, and the scroll bar: the sheet's width less
 * its tables' */
static int sheet_chrome(AtnTraceView *self) { return (int)(44 * self->font_scale) + 14; }

static int fit_cols(AtnTraceView *self) {
    int pos = self->stacked ? gtk_widget_get_width(GTK_WIDGET(self->paned)) : gtk_paned_get_position(self->paned);
    if (!self->trace || !self->result || pos <= 0)
        return self->max_cols;
    _atn_trace_view_measure_cols(self, NULL);
    int avail = pos - sheet_chrome(self);
    for (int m = 8; m > 4; m--)
        if (table_width(self, m) <= avail)
            return m;
    return 4;
}

/* The least width of the sheet: its key table with 4 columns of d_k (0 before a trace). */
static int sheet_need(AtnTraceView *self) {
    if (!self->trace || !self->result)
        return 0;
    _atn_trace_view_measure_cols(self, NULL);
    return table_width(self, 4) + sheet_chrome(self);
}

/* The side pane's least width: 320 px at the normal text size; above it the side pane gives
 * way to the sheet, down to 160 px (a narrow window at Text size 2.0). */
int _atn_trace_view_side_floor(AtnTraceView *self) { return self->font_scale > 1.0 ? 160 : 320; }

/* Where the divider goes in a paned w px wide: the side pane (the heatmap) takes about a
 * third of a wide view, never less than 320 px times the text size, unless the sheet would
 * then be narrower than its 4-column tables: the sheet then gets what they need, the side
 * pane what is left, down to _atn_trace_view_side_floor (below that the sheet scrolls sideways). */
static int divider_for(AtnTraceView *self, int w) {
    int side = (int)MAX(MAX(320, 260 * self->font_scale), 0.34 * w);
    int pos = MAX(w / 3, w - side);
    int need = sheet_need(self);
    if (need > pos)
        pos = MAX(pos, MIN(need, w - _atn_trace_view_side_floor(self)));
    return pos;
}

/* The least width at which the heatmap's pane beside the sheet is of use (its labels and
 * cells readable).  Below it (Text size 2.0 in a 900-px window left it 160 px) the pane goes
 * inside the sheet, above the steps, as wide as the sheet (stacked). */
enum { SIDE_USEFUL = 240 };

static gboolean want_stacked(AtnTraceView *self, int w) { return w > 0 && w - divider_for(self, w) < SIDE_USEFUL; }

/* The height of the heatmap inside the sheet: square up to the sheet's width, 200 px times
 * the text size at most (the first step still starts on the first screen). */
static int stacked_height(AtnTraceView *self, int w) {
    return (int)MAX(160, MIN(w - sheet_chrome(self), 200 * self->font_scale));
}

void _atn_trace_view_set_stacked(AtnTraceView *self, gboolean stacked) {
    if (stacked == self->stacked)
        return;
    self->stacked = stacked;
    g_object_ref(self->side_box);
    if (stacked) {
        gtk_paned_set_end_child(self->paned, NULL);
        gtk_box_insert_child_after(self->sheet, self->side_box, GTK_WIDGET(self->inputs_box));
        gtk_widget_set_size_request(self->side_box, -1, -1);
        int w = gtk_widget_get_width(GTK_WIDGET(self->paned));
        gtk_widget_set_size_request(GTK_WIDGET(self->heatmap), -1, stacked_height(self, w));
    } else {
        gtk_box_remove(self->sheet, self->side_box);
        gtk_paned_set_end_child(self->paned, self->side_box);
        gtk_widget_set_size_request(self->side_box, _atn_trace_view_side_floor(self), -1);
        gtk_widget_set_size_request(GTK_WIDGET(self->heatmap), -1, -1);
    }
    /* inside the scrolled sheet the wheel scrolls it; Ctrl+wheel zooms */
    atn_heatmap_set_wheel_needs_ctrl(self->heatmap, stacked);
    g_object_unref(self->side_box);
    self->paned_width = 0;   /* the divider again for the new children */
}

static gboolean stack_idle_cb(gpointer data) {
    AtnTraceView *self = ATN_TRACE_VIEW(data);
    self->stack_idle_id = 0;
    int w = gtk_widget_get_width(GTK_WIDGET(self->paned));
    if (w > 0)
        _atn_trace_view_set_stacked(self, want_stacked(self, w));
    if (w > 0 && self->stacked)
        gtk_widget_set_size_request(GTK_WIDGET(self->heatmap), -1, stacked_height(self, w));
    return G_SOURCE_REMOVE;
}

static gboolean cols_idle_cb(gpointer data) {
    AtnTraceView *self = ATN_TRACE_VIEW(data);
    self->cols_idle_id = 0;
    if (self->want_cols != self->max_cols) {
        self->max_cols = self->want_cols;
        atn_trace_view_refresh(self);
    }
    return G_SOURCE_REMOVE;
}

/* The view is its box (as a bin layout would be, but with our own allocation). */
void _atn_trace_view_measure(GtkWidget *widget, GtkOrientation o, int for_size, int *min, int *nat, int *min_base,
                                   int *nat_base) {
    gtk_widget_measure(ATN_TRACE_VIEW(widget)->box, o, for_size, min, nat, min_base, nat_base);
}

/* Each allocation (the styles are current then) checks the fit; a change of the column count
 * rebuilds the tables from an idle, and the next allocation finds the same count. */
void _atn_trace_view_size_allocate(GtkWidget *widget, int width, int height, int baseline) {
    AtnTraceView *self = ATN_TRACE_VIEW(widget);
    gtk_widget_allocate(self->box, width, height, baseline, NULL);
    if (self->dirty)
        return;   /* refreshed at map, then allocated again */
    /* a new trace or font may need a wider sheet than the width alone gave (_atn_trace_view_on_paned_width) */
    int pw = gtk_widget_get_width(GTK_WIDGET(self->paned));
    if (pw > 0 && want_stacked(self, pw) != self->stacked && !self->stack_idle_id)
        self->stack_idle_id = g_idle_add_full(G_PRIORITY_HIGH_IDLE, stack_idle_cb, self, NULL);
    if (pw > 0 && self->stacked) {
        int hh = stacked_height(self, pw);
        int cur;
        gtk_widget_get_size_request(GTK_WIDGET(self->heatmap), NULL, &cur);
        if (cur != hh && !self->stack_idle_id)   /* a new width or font: resized from an idle */
            self->stack_idle_id = g_idle_add_full(G_PRIORITY_HIGH_IDLE, stack_idle_cb, self, NULL);
    }
    if (pw > 0 && self->paned_width == pw && !self->stacked) {
        int pos = divider_for(self, pw);
        if (pos != self->paned_pos) {
            self->paned_pos = pos;
            gtk_paned_set_position(self->paned, pos);
        }
    }
    self->want_cols = fit_cols(self);
    if (self->want_cols != self->max_cols && !self->cols_idle_id)
        self->cols_idle_id = g_idle_add_full(G_PRIORITY_HIGH_IDLE, cols_idle_cb, self, NULL);
}

/* The divider (divider_for), set again whenever the view's width changes, so presentation
 * mode and a resized window get a heatmap that fills its pane. */
void _atn_trace_view_on_paned_width(GtkPaned *paned, GParamSpec *p, AtnTraceView *self) {
    int w = gtk_widget_get_width(GTK_WIDGET(paned));
    if (w <= 0 || w == self->paned_width)
        return;
    self->paned_width = w;
    self->paned_pos = divider_for(self, w);
    gtk_paned_set_position(paned, self->paned_pos);
}


char *atn_trace_view_dup_step_words(AtnTraceView *self, atn_trace_step step) {
    g_return_val_if_fail(ATN_IS_TRACE_VIEW(self), NULL);
    g_return_val_if_fail((int)step >= 0 && step < ATN_TRACE_STEP_COUNT, NULL);
    if (self->dirty)
        atn_trace_view_refresh(self);
    tstep_widgets *w = &self->steps[step];
    if (!w->box)
        return NULL;
    const char *note = gtk_widget_get_visible(GTK_WIDGET(w->note)) ? gtk_label_get_text(w->note) : "";
    return g_strdup_printf("%s\n%s", gtk_label_get_text(w->formula), note);
}

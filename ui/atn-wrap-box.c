/* AtnWrapBox (see atn-wrap-box.h): lines are broken greedily with every child at its minimum
 * width (the breaking the minimum width was computed for), each line's spare width then given
 * back toward the natural widths, the smallest gap first; when breaking at the natural widths
 * takes no more lines, it is used instead (each child at its natural width). */
#include "atn-wrap-box.h"

struct _AtnWrapBox {
    GtkWidget parent_instance;
    int spacing, row_spacing, max_lines;
    int n_lines;
};

G_DEFINE_FINAL_TYPE(AtnWrapBox, atn_wrap_box, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_SPACING, PROP_ROW_SPACING, PROP_MAX_LINES, N_PROPS };
static GParamSpec *props[N_PROPS];

typedef struct item {
    GtkWidget *w;
    int min, nat;   /* horizontal */
    int want;       /* atn_wrap_box_set_child_want's width, else 0 */
    int width;      /* given */
    int line;
} item;

static GArray *collect(AtnWrapBox *self) {
    GArray *a = g_array_new(FALSE, TRUE, sizeof(item));
    for (GtkWidget *c = gtk_widget_get_first_child(GTK_WIDGET(self)); c; c = gtk_widget_get_next_sibling(c)) {
        if (!gtk_widget_should_layout(c))
            continue;
        item it = {c, 0, 0, GPOINTER_TO_INT(g_object_get_data(G_OBJECT(c), "atn-wrap-box-want")), 0, 0};
        gtk_widget_measure(c, GTK_ORIENTATION_HORIZONTAL, -1, &it.min, &it.nat, NULL, NULL);
        it.nat = MAX(it.nat, it.min);
        g_array_append_val(a, it);
    }
    return a;
}

/* Greedy breaking at width W with every child at its natural (nat) or minimum width, and
 * (want) at least its wanted width: sets each item's line, returns the number of lines. */
static int break_lines(AtnWrapBox *self, GArray *a, int W, gboolean nat, gboolean want) {
    int lines = 0, x = 0;
    for (guint i = 0; i < a->len; i++) {
        item *it = &g_array_index(a, item, i);
        int w = nat ? MIN(it->nat, MAX(W, it->min)) : it->min;
        if (want)
            w = MAX(w, MIN(it->want, W));
        if (lines == 0 || x + self->spacing + w > W) {
            lines++;
            x = w;
        } else {
            x += self->spacing + w;
        }
        it->line = lines - 1;
    }
    return lines;
}

static int min_width(AtnWrapBox *self, GArray *a) {
    int lo = 0, hi = 0;
    for (guint i = 0; i < a->len; i++) {
        item *it = &g_array_index(a, item, i);
        lo = MAX(lo, it->min);
        hi += it->min + (i ? self->spacing : 0);
    }
    while (lo < hi) {   /* the line count only falls as the width grows */
        int mid = lo + (hi - lo) / 2;
        if (break_lines(self, a, mid, FALSE, FALSE) <= self->max_lines)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static int cmp_gap(gconstpointer pa, gconstpointer pb) {
    const item *a = *(item *const *)pa, *b = *(item *const *)pb;
    return (a->nat - a->min) - (b->nat - b->min);
}

/* Lines and widths at width W; returns the number of lines. */
static int layout(AtnWrapBox *self, GArray *a, int W) {
    /* as few lines as the minimum widths allow (a row that fits shrinks its children, as a
       GtkBox does, rather than wrapping); at the natural widths when that takes no more; the
       wanted widths counted when they fit in one line more than max_lines: a wanted child
       takes a line of its own rather than a sliver of one (a character a line, 110 px tall,
       for the Similarity summary at Text size 2.0 in a 900 px window); the minimum width,
       which ignores wanted widths, is what max_lines allows */
    gboolean want = break_lines(self, a, W, FALSE, TRUE) <= self->max_lines + 1;
    int n_min = break_lines(self, a, W, FALSE, want);
    gboolean nat = break_lines(self, a, W, TRUE, want) == n_min;
    int n_lines = nat ? n_min : break_lines(self, a, W, FALSE, want);
    for (int l = 0; l < n_lines; l++) {
        g_autoptr(GPtrArray) line = g_ptr_array_new();
        int used = 0, n_expand = 0;
        for (guint i = 0; i < a->len; i++) {
            item *it = &g_array_index(a, item, i);
            if (it->line != l)
                continue;
            it->width = nat ? MIN(it->nat, MAX(W, it->min)) : it->min;
            used += it->width + (line->len ? self->spacing : 0);
            n_expand += gtk_widget_compute_expand(it->w, GTK_ORIENTATION_HORIZONTAL);
            g_ptr_array_add(line, it);
        }
        int extra = MAX(0, W - used);
        if (!nat) {   /* toward the natural widths, the smallest gap first */
            g_ptr_array_sort(line, cmp_gap);
            for (guint k = 0; k < line->len && extra > 0; k++) {
                item *it = line->pdata[k];
                int give = MIN(it->nat - it->width, extra / (int)(line->len - k));
                it->width += give;
                extra -= give;
            }
        }
        for (guint k = 0; k < line->len && n_expand > 0 && extra > 0; k++) {
            item *it = line->pdata[k];
            if (gtk_widget_compute_expand(it->w, GTK_ORIENTATION_HORIZONTAL)) {
                int give = extra / n_expand--;
                it->width += give;
                extra -= give;
            }
        }
    }
    return n_lines;
}

/* Each line's minimum and natural height for the widths layout() gave. */
static void line_heights(GArray *a, int n_lines, int *mins, int *nats) {
    for (int l = 0; l < n_lines; l++)
        mins[l] = nats[l] = 0;
    for (guint i = 0; i < a->len; i++) {
        item *it = &g_array_index(a, item, i);
        int m, n;
        gtk_widget_measure(it->w, GTK_ORIENTATION_VERTICAL, it->width, &m, &n, NULL, NULL);
        mins[it->line] = MAX(mins[it->line], m);
        nats[it->line] = MAX(nats[it->line], n);
    }
}

static GtkSizeRequestMode request_mode(GtkWidget *w) { return GTK_SIZE_REQUEST_HEIGHT_FOR_WIDTH; }

static void measure(GtkWidget *widget, GtkOrientation o, int for_size, int *min, int *nat, int *min_base,
                    int *nat_base) {
    AtnWrapBox *self = ATN_WRAP_BOX(widget);
    g_autoptr(GArray) a = collect(self);
    *min = *nat = 0;
    if (a->len == 0)
        return;
    if (o == GTK_ORIENTATION_HORIZONTAL) {
        *min = min_width(self, a);
        for (guint i = 0; i < a->len; i++)
            *nat += g_array_index(a, item, i).nat + (i ? self->spacing : 0);
        return;
    }
    int W = for_size < 0 ? min_width(self, a) : for_size;
    int n_lines = layout(self, a, W);
    int mins[a->len], nats[a->len];
    line_heights(a, n_lines, mins, nats);
    for (int l = 0; l < n_lines; l++) {
        *min += mins[l] + (l ? self->row_spacing : 0);
        *nat += nats[l] + (l ? self->row_spacing : 0);
    }
}

static void size_allocate(GtkWidget *widget, int width, int height, int baseline) {
    AtnWrapBox *self = ATN_WRAP_BOX(widget);
    g_autoptr(GArray) a = collect(self);
    if (a->len == 0)
        return;
    int n_lines = layout(self, a, width);
    self->n_lines = n_lines;
    int mins[a->len], nats[a->len], nat_total = 0;
    line_heights(a, n_lines, mins, nats);
    for (int l = 0; l < n_lines; l++)
        nat_total += nats[l] + (l ? self->row_spacing : 0);
    const int *hs = height >= nat_total ? nats : mins;
    gboolean rtl = gtk_widget_get_direction(widget) == GTK_TEXT_DIR_RTL;
    int y = 0, line = 0, x = 0;
    for (guint i = 0; i < a->len; i++) {
        item *it = &g_array_index(a, item, i);
        while (line < it->line) {
            y += hs[line++] + self->row_spacing;
            x = 0;
        }
        int cx = rtl ? width - x - it->width : x;
        gtk_widget_size_allocate(it->w, &(GtkAllocation){cx, y, it->width, hs[line]}, -1);
        x += it->width + self->spacing;
    }
}

void atn_wrap_box_set_child_want(GtkWidget *child, int width) {
    g_return_if_fail(GTK_IS_WIDGET(child));
    g_object_set_data(G_OBJECT(child), "atn-wrap-box-want", GINT_TO_POINTER(MAX(0, width)));
    GtkWidget *parent = gtk_widget_get_parent(child);
    if (parent)
        gtk_widget_queue_resize(parent);
}

int atn_wrap_box_get_n_lines(AtnWrapBox *self) {
    g_return_val_if_fail(ATN_IS_WRAP_BOX(self), 0);
    return self->n_lines;
}

GtkWidget *atn_wrap_box_new(int spacing) { return g_object_new(ATN_TYPE_WRAP_BOX, "spacing", spacing, NULL); }

static void get_property(GObject *o, guint id, GValue *v, GParamSpec *p) {
    AtnWrapBox *self = ATN_WRAP_BOX(o);
    switch (id) {
    case PROP_SPACING: g_value_set_int(v, self->spacing); break;
    case PROP_ROW_SPACING: g_value_set_int(v, self->row_spacing); break;
    case PROP_MAX_LINES: g_value_set_int(v, self->max_lines); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(o, id, p);
    }
}

static void set_property(GObject *o, guint id, const GValue *v, GParamSpec *p) {
    AtnWrapBox *self = ATN_WRAP_BOX(o);
    int *field = id == PROP_SPACING ? &self->spacing : id == PROP_ROW_SPACING ? &self->row_spacing
                                                   : id == PROP_MAX_LINES ? &self->max_lines : NULL;
    if (!field) {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(o, id, p);
        return;
    }
    if (*field != g_value_get_int(v)) {
        *field = g_value_get_int(v);
        gtk_widget_queue_resize(GTK_WIDGET(self));
        g_object_notify_by_pspec(o, p);
    }
}

static void dispose(GObject *o) {
    GtkWidget *c;
    while ((c = gtk_widget_get_first_child(GTK_WIDGET(o))))
        gtk_widget_unparent(c);
    G_OBJECT_CLASS(atn_wrap_box_parent_class)->dispose(o);
}

static void atn_wrap_box_class_init(AtnWrapBoxClass *klass) {
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    oc->get_property = get_property;
    oc->set_property = set_property;
    oc->dispose = dispose;
    wc->get_request_mode = request_mode;
    wc->measure = measure;
    wc->size_allocate = size_allocate;
    const GParamFlags f = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
    props[PROP_SPACING] = g_param_spec_int("spacing", NULL, NULL, 0, G_MAXINT16, 6, f);
    props[PROP_ROW_SPACING] = g_param_spec_int("row-spacing", NULL, NULL, 0, G_MAXINT16, 6, f);
    props[PROP_MAX_LINES] = g_param_spec_int("max-lines", NULL, NULL, 1, G_MAXINT16, 2, f);
    g_object_class_install_properties(oc, N_PROPS, props);
    gtk_widget_class_set_css_name(wc, "wrapbox");
    gtk_widget_class_set_accessible_role(wc, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void atn_wrap_box_init(AtnWrapBox *self) {
    self->spacing = self->row_spacing = 6;
    self->max_lines = 2;
    self->n_lines = 1;
}

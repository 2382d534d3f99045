/* Cropping a heatmap by dragging along an axis (atn-heatmap-crop.h). */
#include "atn-heatmap-crop.h"
#include "atn-heatmap-test.h"

#include <glib/gi18n.h>
#include <math.h>

/* A press that moves less than this is a click (a double click gives the whole input back). */
#define DRAG_MIN_PX 3.0

typedef struct {
    atn_heatmap_layout layout;   /* the figure's when the drag began (the view does not move during it) */
    int k, n;                    /* the pooling's block side, the tokens */
    atn_crop_axis axis;          /* NONE: no drag going on */
    double p0;                   /* where it began along the axis */
    gboolean moved;              /* past DRAG_MIN_PX: a crop, not a click */
} crop_drag;

atn_crop_axis atn_heatmap_crop_axis_at(const atn_heatmap_layout *L, double x, double y) {
    const atn_rect *c = &L->cells;
    if (c->w <= 0 || c->h <= 0)
        return ATN_CROP_AXIS_NONE;
    if (x < c->x && y >= c->y && y < c->y + c->h)
        return ATN_CROP_AXIS_ROWS;
    if (y >= c->y + c->h && x >= c->x && x < c->x + c->w)
        return ATN_CROP_AXIS_COLS;
    return ATN_CROP_AXIS_NONE;
}

gboolean atn_heatmap_crop_span(const atn_heatmap_layout *L, int k, int n, atn_crop_axis axis, double p0, double p1,
                               int *first, int *count) {
    *first = *count = 0;
    if (axis == ATN_CROP_AXIS_NONE)
        return FALSE;
    gboolean rows = axis == ATN_CROP_AXIS_ROWS;
    double origin = rows ? L->cells.y : L->cells.x, size = rows ? L->cell_h : L->cell_w;
    int view0 = rows ? L->view_row0 : L->view_col0, shown = rows ? L->view_rows : L->view_cols;
    if (size <= 0 || shown <= 0 || n <= 0)
        return FALSE;
    k = MAX(k, 1);
    int t[2];
    double p[2] = {MIN(p0, p1), MAX(p0, p1)};
    for (int i = 0; i < 2; i++)   /* the token under the pixel, within the visible ones */
        t[i] = view0 + CLAMP((int)floor((p[i] - origin) / size), 0, shown - 1);
    /* whole blocks, as the pooled cells are drawn: [a·k, a·k + k) */
    int a = t[0] / k * k, b = MIN(n, (t[1] / k + 1) * k) - 1;
    *first = a;
    *count = b - a + 1;
    return TRUE;
}

static crop_drag *drag_of(AtnHeatmap *hm) { return g_object_get_data(G_OBJECT(hm), "atn-crop-drag"); }

static void band_for(crop_drag *d, double p1, AtnHeatmapCropBand *band) {
    band->axis = d->axis;
    atn_heatmap_crop_span(&d->layout, d->k, d->n, d->axis, d->p0, p1, &band->first, &band->count);
}

/* The steps of a drag, for the gesture and the tests (atn_heatmap_axis_drag).  TRUE: it is a
 * drag along an axis (begin) or one going on. */
static gboolean drag_begin(AtnHeatmap *hm, double x, double y) {
    crop_drag *d = drag_of(hm);
    d->axis = ATN_CROP_AXIS_NONE;
    if (!atn_heatmap_get_axis_crop(hm) || !atn_heatmap_get_layout(hm, &d->layout))
        return FALSE;   /* no figure laid out, or one query's bars */
    d->axis = atn_heatmap_crop_axis_at(&d->layout, x, y);
    if (d->axis == ATN_CROP_AXIS_NONE)
        return FALSE;
    d->k = atn_heatmap_get_pool(hm, NULL);
    d->n = atn_heatmap_get_rows(hm);
    d->p0 = d->axis == ATN_CROP_AXIS_ROWS ? y : x;
    d->moved = FALSE;
    return TRUE;
}

static gboolean drag_update(AtnHeatmap *hm, double x, double y) {
    crop_drag *d = drag_of(hm);
    if (d->axis == ATN_CROP_AXIS_NONE)
        return FALSE;
    double p1 = d->axis == ATN_CROP_AXIS_ROWS ? y : x;
    d->moved = d->moved || fabs(p1 - d->p0) >= DRAG_MIN_PX;
    if (d->moved) {
        AtnHeatmapCropBand band;
        band_for(d, p1, &band);
        atn_heatmap_set_band(hm, &band);
    }
    return TRUE;
}

static void drag_end(AtnHeatmap *hm, double x, double y) {
    crop_drag *d = drag_of(hm);
    if (d->axis == ATN_CROP_AXIS_NONE)
        return;
    drag_update(hm, x, y);
    AtnHeatmapCropBand band;
    band_for(d, d->axis == ATN_CROP_AXIS_ROWS ? y : x, &band);
    gboolean crop = d->moved;
    d->axis = ATN_CROP_AXIS_NONE;
    atn_heatmap_set_band(hm, NULL);
    if (crop && band.count >= 2)   /* the zoom stops at two tokens */
        atn_heatmap_show_block(hm, band.first, band.count);
}

void atn_heatmap_crop_cancel(AtnHeatmap *hm) {
    crop_drag *d = drag_of(hm);
    if (d)
        d->axis = ATN_CROP_AXIS_NONE;
    atn_heatmap_set_band(hm, NULL);
}

void atn_heatmap_axis_drag(AtnHeatmap *hm, int stage, double x, double y) {
    g_return_if_fail(drag_of(hm));
    if (stage == 0)
        drag_begin(hm, x, y);
    else if (stage == 1)
        drag_update(hm, x, y);
    else
        drag_end(hm, x, y);
}

static void on_begin(GtkGestureDrag *g, double x, double y, AtnHeatmap *hm) {
    if (!drag_begin(hm, x, y))   /* not on an axis: the cells' own drag pans */
        gtk_gesture_set_state(GTK_GESTURE(g), GTK_EVENT_SEQUENCE_DENIED);
}

static void on_update(GtkGestureDrag *g, double dx, double dy, AtnHeatmap *hm) {
    double x, y;
    gtk_gesture_drag_get_start_point(g, &x, &y);
    crop_drag *d = drag_of(hm);
    gboolean was = d->moved;
    if (drag_update(hm, x + dx, y + dy) && d->moved && !was)   /* a drag, not a click: ours */
        gtk_gesture_set_state(GTK_GESTURE(g), GTK_EVENT_SEQUENCE_CLAIMED);
}

static void on_end(GtkGestureDrag *g, double dx, double dy, AtnHeatmap *hm) {
    double x, y;
    gtk_gesture_drag_get_start_point(g, &x, &y);
    drag_end(hm, x + dx, y + dy);
}

static void on_cancel(GtkGesture *g, GdkEventSequence *seq, AtnHeatmap *hm) { atn_heatmap_crop_cancel(hm); }

void atn_heatmap_crop_attach(AtnHeatmap *hm) {
    crop_drag *d = g_new0(crop_drag, 1);
    d->axis = ATN_CROP_AXIS_NONE;
    g_object_set_data_full(G_OBJECT(hm), "atn-crop-drag", d, g_free);
    GtkGesture *drag = gtk_gesture_drag_new();
    g_signal_connect(drag, "drag-begin", G_CALLBACK(on_begin), hm);
    g_signal_connect(drag, "drag-update", G_CALLBACK(on_update), hm);
    g_signal_connect(drag, "drag-end", G_CALLBACK(on_end), hm);
    g_signal_connect(drag, "cancel", G_CALLBACK(on_cancel), hm);
    gtk_widget_add_controller(GTK_WIDGET(hm), GTK_EVENT_CONTROLLER(drag));
}

/* r clipped to clip; FALSE when nothing is left. */
static gboolean clip(graphene_rect_t *r, const atn_rect *c) {
    graphene_rect_t cr = GRAPHENE_RECT_INIT(c->x, c->y, c->w, c->h);
    return graphene_rect_intersection(r, &cr, r);
}

void atn_heatmap_crop_snapshot(GtkWidget *widget, GtkSnapshot *s, const atn_heatmap_layout *L,
                               const AtnHeatmapCropBand *band) {
    static const GdkRGBA fill = {0.21f, 0.52f, 0.89f, 0.30f}, edge = {0.21f, 0.52f, 0.89f, 1.0f};
    int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
    double x0 = L->cells.x + (band->first - L->view_col0) * L->cell_w;
    double y0 = L->cells.y + (band->first - L->view_row0) * L->cell_h;
    double bw = band->count * L->cell_w, bh = band->count * L->cell_h;
    /* the band over the labels of the axis dragged */
    graphene_rect_t r = band->axis == ATN_CROP_AXIS_ROWS
                            ? GRAPHENE_RECT_INIT(0, y0, L->cells.x, bh)
                            : GRAPHENE_RECT_INIT(x0, L->cells.y + L->cells.h, bw, h - (L->cells.y + L->cells.h));
    atn_rect strip = band->axis == ATN_CROP_AXIS_ROWS ? (atn_rect){0, L->cells.y, L->cells.x, L->cells.h}
                                                      : (atn_rect){L->cells.x, 0, L->cells.w, h};
    if (clip(&r, &strip))
        gtk_snapshot_append_color(s, &fill, &r);
    /* the square both axes are cropped to, on the diagonal */
    graphene_rect_t sq = GRAPHENE_RECT_INIT(x0, y0, bw, bh);
    if (clip(&sq, &L->cells)) {
        gtk_snapshot_append_color(s, &(GdkRGBA){0.21f, 0.52f, 0.89f, 0.12f}, &sq);
        GskRoundedRect rr;
        gsk_rounded_rect_init_from_rect(&rr, &sq, 0);
        gtk_snapshot_append_border(s, &rr, (float[4]){2, 2, 2, 2}, (GdkRGBA[4]){edge, edge, edge, edge});
    }
    /* which tokens, in a box at the square's corner (kept inside the widget) */
    /* Translators: shown while dragging along a heatmap's axis: the tokens the crop will keep */
    g_autofree char *text = g_strdup_printf(_("tokens %d–%d (%d)"), band->first, band->first + band->count - 1,
                                            band->count);
    PangoLayout *pl = gtk_widget_create_pango_layout(widget, text);
    int tw, th;
    pango_layout_get_pixel_size(pl, &tw, &th);
    double tx = CLAMP(MAX(x0, L->cells.x) + 4, 0, MAX(0, w - tw - 8));
    double ty = CLAMP(MAX(y0, L->cells.y) + 4, 0, MAX(0, h - th - 4));
    gtk_snapshot_append_color(s, &(GdkRGBA){1, 1, 1, 0.9f}, &GRAPHENE_RECT_INIT(tx, ty, tw + 8, th + 4));
    gtk_snapshot_save(s);
    gtk_snapshot_translate(s, &GRAPHENE_POINT_INIT(tx + 4, ty + 2));
    gtk_snapshot_append_layout(s, pl, &(GdkRGBA){0, 0, 0, 1});
    gtk_snapshot_restore(s);
    g_object_unref(pl);
}

/* The model view: every layer × head as a small heatmap, layers down, heads across, with
 * row and column labels; one layout function serves drawing and hit-testing. */
#include <stdlib.h>

#include "render-private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void atn_grid_spec_init(atn_grid_spec *s) {
    memset(s, 0, sizeof *s);
    s->colormap = ATN_CMAP_VIRIDIS;
    s->selected_layer = s->selected_head = -1;
    s->hover_layer = s->hover_head = -1;
}

typedef struct grid_layout {
    atn_rect title;
    double x0, y0;          /* top-left of thumbnail (0, 0) */
    double thumb, step_x, step_y;
    double row_label_w, col_label_h, note_h;
    atn_rect colorbar;
    double vmin, vmax;      /* shared range */
} grid_layout;

/* Whether the heads are drawn in K/V groups (more than one query head per K/V head, and
 * more than one group: MQA's single group says nothing a bracket would). */
static bool grouped(const atn_grid_spec *s) {
    return s->kv_group > 1 && s->n_heads > s->kv_group && s->n_heads % s->kv_group == 0;
}

static void grid_layout_with(rtext *t, const atn_grid_spec *s, double w, double h, grid_layout *G) {
    memset(G, 0, sizeof *G);
    double fs = t->fs, pad = 10 * fs, gap = 4 * fs;
    double sh = rt_line_height(t, RT_SMALL);
    double x0 = pad, y0 = pad, x1 = w - pad, y1 = h - pad;
    if (s->title && s->title[0]) {
        double th = rt_line_height(t, RT_TITLE);
        G->title = (atn_rect){x0, y0, x1 - x0, th};
        y0 += th + 2 * gap;
    }
    char buf[32];
    snprintf(buf, sizeof buf, "L%d", s->n_layers > 0 ? s->n_layers - 1 : 0);
    double lw;
    rt_measure(t, buf, RT_SMALL, true, &lw, NULL);
    for (int32_t l = 0; s->layer_labels && l < s->n_layers; l++) {
        double w1 = 0;
        if (s->layer_labels[l])
            rt_measure(t, s->layer_labels[l], RT_SMALL, true, &w1, NULL);
        lw = fmax(lw, w1);
    }
    G->row_label_w = lw + 2 * gap;
    G->col_label_h = sh + gap + (grouped(s) ? sh + gap : 0);   /* the K/V groups' row above */
    G->note_h = s->head_notes ? sh : 0;
    double cb = 0;
    if (s->shared_range && s->shared_vmin_vmax) {
        G->vmin = s->shared_vmin_vmax[0];
        G->vmax = s->shared_vmin_vmax[1];
        cb = rt_colorbar_width(t, G->vmin, G->vmax, false) + 3 * gap;
    } else if (s->shared_range && s->attn) {
        atn_value_range r = {.automatic = true};
        atn_value_range_resolve(&r, s->attn, s->n_layers * s->n_heads * s->n, s->n_k > 0 ? s->n_k : s->n, 0,
                                s->colormap, &G->vmin, &G->vmax);
        cb = rt_colorbar_width(t, G->vmin, G->vmax, false) + 3 * gap;
    } else if (s->shared_range && s->cap && s->n > 0) {
        /* one head at a time: the largest finite value (|value|) of all is the largest of each's */
        int32_t nk = s->stack && s->n_k > 0 ? s->n_k : s->n;
        bool whole = s->stack ? s->stack->attn != NULL : s->cap->attn != NULL;
        float *scratch = whole ? NULL : malloc((size_t)s->n * nk * sizeof(float));
        bool first = true;
        for (int32_t c = 0; (whole || scratch) && c < s->n_layers * s->n_heads; c++) {
            const float *a = s->stack ? atn_stack_head_read(s->cap, s->stack, c / s->n_heads, c % s->n_heads, scratch,
                                                            NULL)
                                      : atn_capture_head_read(s->cap, c / s->n_heads, c % s->n_heads, scratch, NULL);
            double lo, hi;
            atn_value_range r = {.automatic = true};
            if (!a)
                continue;
            atn_value_range_resolve(&r, a, s->n, nk, 0, s->colormap, &lo, &hi);
            G->vmin = first || lo < G->vmin ? lo : G->vmin;
            G->vmax = first || hi > G->vmax ? hi : G->vmax;
            first = false;
        }
        free(scratch);
        if (!first)
            cb = rt_colorbar_width(t, G->vmin, G->vmax, false) + 3 * gap;
    }
    int32_t L = s->n_layers > 0 ? s->n_layers : 1, H = s->n_heads > 0 ? s->n_heads : 1;
    double aw = fmax(1, x1 - x0 - G->row_label_w - cb), ah = fmax(1, y1 - y0 - G->col_label_h);
    /* thumb + gap per column; the gap is 8% of a thumbnail, at least 2 units */
    double tw = aw / (H + 0.08 * (H - 1)), th2 = (ah - L * G->note_h) / (L + 0.08 * (L - 1));
    double thumb = fmax(1, fmin(tw, th2));
    double g = fmax(2 * fs, 0.08 * thumb);
    thumb = fmax(1, fmin((aw - g * (H - 1)) / H, (ah - L * G->note_h - g * (L - 1)) / L));
    G->thumb = thumb;
    G->step_x = thumb + g;
    G->step_y = thumb + g + G->note_h;
    double gw = G->row_label_w + H * thumb + (H - 1) * g + cb;
    double extra = fmax(0, (x1 - x0) - gw);
    G->x0 = x0 + extra / 2 + G->row_label_w;
    G->y0 = y0 + G->col_label_h;
    if (cb > 0)
        G->colorbar = (atn_rect){G->x0 + H * thumb + (H - 1) * g + 3 * gap, G->y0, cb - 3 * gap,
                                 fmax(L * G->step_y - g, fmin(200 * fs, y1 - G->y0))};
}

atn_rect atn_render_model_grid_cell_rect(const atn_grid_spec *s, double w, double h, int32_t layer, int32_t head) {
    rtext t;
    rt_begin(&t, s->style);
    grid_layout G;
    grid_layout_with(&t, s, w, h, &G);
    rt_end(&t);
    return (atn_rect){G.x0 + head * G.step_x, G.y0 + layer * G.step_y, G.thumb, G.thumb};
}

bool atn_render_model_grid_head_at(const atn_grid_spec *s, double w, double h, double x, double y, int32_t *layer,
                                   int32_t *head) {
    rtext t;
    rt_begin(&t, s->style);
    grid_layout G;
    grid_layout_with(&t, s, w, h, &G);
    rt_end(&t);
    *layer = *head = -1;
    double fx = (x - G.x0) / G.step_x, fy = (y - G.y0) / G.step_y;
    if (!(fx >= 0 && fy >= 0 && fx < s->n_heads && fy < s->n_layers))
        return false;
    int32_t hh = (int32_t)fx, ll = (int32_t)fy;
    /* the gaps (and the note under a thumbnail) belong to no head */
    if (x - (G.x0 + hh * G.step_x) > G.thumb || y - (G.y0 + ll * G.step_y) > G.thumb + G.note_h)
        return false;
    *layer = ll;
    *head = hh;
    return true;
}

void atn_render_model_grid(cairo_t *cr, const atn_grid_spec *s, double w, double h) {
    rtext t;
    rt_begin(&t, s->style);
    grid_layout G;
    grid_layout_with(&t, s, w, h, &G);
    double fs = t.fs, gap = 4 * fs, sh = rt_line_height(&t, RT_SMALL);
    cairo_save(cr);
    rt_background(cr, &t, w, h);
    rt_rgb(cr, t.st.fg, 1.0);
    if (s->title && s->title[0])
        rt_draw(cr, &t, s->title, RT_TITLE, true, G.title.x + G.title.w / 2, G.title.y, 0.5, G.title.w);
    char buf[32];
    /* thin the column labels when thumbnails are narrower than "H11" */
    double hw;
    snprintf(buf, sizeof buf, "H%d", s->n_heads > 0 ? s->n_heads - 1 : 0);
    rt_measure(&t, buf, RT_SMALL, true, &hw, NULL);
    int32_t hstep = G.step_x >= hw + 2 ? 1 : (int32_t)ceil((hw + 2) / G.step_x);
    int32_t lstep = G.step_y >= sh ? 1 : (int32_t)ceil(sh / G.step_y);
    for (int32_t hh = 0; hh < s->n_heads; hh += hstep) {
        bool sel = hh == s->selected_head || hh == s->hover_head;
        rt_rgb(cr, sel ? t.st.accent : t.st.fg, 1.0);
        snprintf(buf, sizeof buf, "H%d", hh);
        rt_draw(cr, &t, buf, RT_SMALL, sel, G.x0 + hh * G.step_x + G.thumb / 2, G.y0 - sh - gap, 0.5, 0);
    }
    /* grouped-query attention: "KVg" over a bracket spanning the query heads that read K/V head g */
    for (int32_t g = 0; grouped(s) && g < s->n_heads / s->kv_group; g++) {
        double xa = G.x0 + g * s->kv_group * G.step_x, xb = xa + (s->kv_group - 1) * G.step_x + G.thumb;
        double yb = G.y0 - sh - gap - gap / 2;
        bool sel = s->selected_head / s->kv_group == g && s->selected_head >= 0;
        rt_rgb(cr, sel ? t.st.accent : t.st.fg, 0.8);
        cairo_set_line_width(cr, fmax(1.0, fs));
        cairo_move_to(cr, xa, yb + gap / 2);
        cairo_line_to(cr, xa, yb);
        cairo_line_to(cr, xb, yb);
        cairo_line_to(cr, xb, yb + gap / 2);
        cairo_stroke(cr);
        snprintf(buf, sizeof buf, "KV%d", g);
        rt_rgb(cr, sel ? t.st.accent : t.st.fg, 1.0);
        rt_draw(cr, &t, buf, RT_SMALL, sel, (xa + xb) / 2, G.y0 - G.col_label_h, 0.5, xb - xa);
    }
    for (int32_t l = 0; l < s->n_layers; l += lstep) {
        bool sel = l == s->selected_layer || l == s->hover_layer;
        rt_rgb(cr, sel ? t.st.accent : t.st.fg, 1.0);
        snprintf(buf, sizeof buf, "L%d", l);
        const char *label = s->layer_labels && s->layer_labels[l] ? s->layer_labels[l] : buf;
        rt_draw(cr, &t, label, RT_SMALL, sel, G.x0 - gap, G.y0 + l * G.step_y + G.thumb / 2 - sh / 2, 1.0, 0);
    }
    int32_t nk = s->n_k > 0 && (s->attn || s->stack) ? s->n_k : s->n;   /* cross-attention: n x n_k heads */
    size_t nn = (size_t)s->n * nk;
    const atn_capture *cap = s->attn ? NULL : s->cap;
    bool whole = cap && (s->stack ? s->stack->attn != NULL : cap->attn != NULL);
    float *scratch = cap && !whole && s->n > 0 ? malloc(nn * sizeof(float)) : NULL;
    for (int32_t l = 0; (s->attn || (cap && (whole || scratch))) && s->n > 0 && l < s->n_layers; l++)
        for (int32_t hh = 0; hh < s->n_heads; hh++) {
            size_t c = (size_t)l * s->n_heads + hh;
            if (s->cap && !s->stack && !atn_capture_head_present(s->cap, l, hh)) {
                /* an attention file's layer with fewer heads: a dashed empty place, not zeros */
                atn_rect r = {G.x0 + hh * G.step_x, G.y0 + l * G.step_y, G.thumb, G.thumb};
                double dash[] = {3 * fs, 3 * fs};
                rt_rgb(cr, t.st.fg, 0.35);
                cairo_set_line_width(cr, fs);
                cairo_set_dash(cr, dash, 2, 0);
                cairo_rectangle(cr, r.x + fs / 2, r.y + fs / 2, r.w - fs, r.h - fs);
                cairo_stroke(cr);
                cairo_set_dash(cr, NULL, 0, 0);
                rt_rgb(cr, t.st.fg, 0.7);
                rt_draw(cr, &t, rt_tr(N_("no head")), RT_SMALL * 0.85, false, r.x + r.w / 2,
                        r.y + r.h / 2 - rt_line_height(&t, RT_SMALL * 0.85) / 2, 0.5, r.w);
                continue;
            }
            bool cached = s->thumbs && s->thumbs[c];
            const float *a = s->attn ? s->attn + c * nn
                             : cached ? NULL
                             : s->stack ? atn_stack_head_read(cap, s->stack, l, hh, scratch, NULL)
                                        : atn_capture_head_read(cap, l, hh, scratch, NULL);
            if (!a && !cached)
                continue;
            cairo_surface_t *img = s->thumbs ? s->thumbs[c] : NULL;
            if (!img) {
                double lo = G.vmin, hi = G.vmax;
                if (!s->shared_range) {
                    atn_value_range r = {.automatic = true};
                    atn_value_range_resolve(&r, a, s->n, nk, 0, s->colormap, &lo, &hi);
                }
                img = atn_render_matrix_surface(a, s->n, nk, 0, s->colormap, lo, hi, NULL);
            }
            atn_rect r = {G.x0 + hh * G.step_x, G.y0 + l * G.step_y, G.thumb, G.thumb};
            if (img && img == (s->thumbs ? s->thumbs[c] : NULL))   /* a cached one: its own size */
                rt_draw_cells(cr, img, r, cairo_image_surface_get_height(img), cairo_image_surface_get_width(img));
            else if (img)
                rt_draw_cells(cr, img, r, s->n, nk);
            rt_cell_mask m = {.causal = s->causal && nk == s->n};
            rt_draw_cell_mask(cr, &m, r, 0, 0, s->n, nk, r.w >= 40 * fs, fs * 0.6);
            if (img && (!s->thumbs || img != s->thumbs[c]))
                cairo_surface_destroy(img);
            if (s->head_notes && s->head_notes[c]) {
                rt_rgb(cr, t.st.fg, 0.85);
                rt_draw(cr, &t, s->head_notes[c], RT_SMALL * 0.85, false, r.x + r.w / 2, r.y + r.h, 0.5,
                        G.step_x);
            }
        }
    free(scratch);
    double lw = fmax(1.0, 2.5 * fs);
    if (s->hover_layer >= 0 && s->hover_head >= 0 && s->hover_layer < s->n_layers && s->hover_head < s->n_heads) {
        rt_rgb(cr, t.st.fg, 1.0);
        cairo_set_line_width(cr, lw / 2);
        cairo_rectangle(cr, G.x0 + s->hover_head * G.step_x - lw / 2, G.y0 + s->hover_layer * G.step_y - lw / 2,
                        G.thumb + lw, G.thumb + lw);
        cairo_stroke(cr);
    }
    if (s->selected_layer >= 0 && s->selected_head >= 0 && s->selected_layer < s->n_layers &&
        s->selected_head < s->n_heads) {
        rt_rgb(cr, t.st.accent, 1.0);
        cairo_set_line_width(cr, lw);
        cairo_rectangle(cr, G.x0 + s->selected_head * G.step_x - lw / 2,
                        G.y0 + s->selected_layer * G.step_y - lw / 2, G.thumb + lw, G.thumb + lw);
        cairo_stroke(cr);
    }
    if (G.colorbar.w > 0)
        rt_colorbar(cr, &t, s->colormap, G.vmin, G.vmax, NULL, false, G.colorbar);
    cairo_restore(cr);
    rt_end(&t);
}

void atn_render_model_grid_natural_size(const atn_grid_spec *s, double *width, double *height) {
    rtext t;
    rt_begin(&t, s->style);
    double fs = t.fs;
    int32_t n = s->n_k > s->n ? s->n_k : s->n;
    double thumb = (n <= 16 ? 72 : n <= 64 ? 84 : 96) * fs;
    if (s->n_heads > 12 || s->n_layers > 12)
        thumb *= 0.75;
    double g = 0.08 * thumb, sh = rt_line_height(&t, RT_SMALL);
    double note = s->head_notes ? sh : 0;
    double lw;
    rt_measure(&t, "L00", RT_SMALL, true, &lw, NULL);
    double th = s->title ? rt_line_height(&t, RT_TITLE) + 8 * fs : 0;
    double cb = s->shared_range ? rt_colorbar_width(&t, 0, 1, false) + 12 * fs : 0;
    double title_w = 0;
    if (s->title)
        rt_measure(&t, s->title, RT_TITLE, true, &title_w, NULL);
    *width = ceil(fmax(20 * fs + lw + 8 * fs + s->n_heads * (thumb + g) + cb, title_w + 20 * fs));
    *height = ceil(20 * fs + th + sh + 4 * fs + (grouped(s) ? sh + 4 * fs : 0) + s->n_layers * (thumb + g + note));
    rt_end(&t);
}

/* The long-sequence cost chart: what each mask variant keeps of the n x n attention maps at
 * the current length, and what the dense capture weighs (render.h, atn_render_cost_chart). */
#include "render-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void atn_render_format_bytes(char *buf, size_t size, double bytes) {
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024 && u < 5)
        bytes /= 1024, u++;
    if (u == 0)
        snprintf(buf, size, "%.0f %s", bytes, unit[u]);
    else
        snprintf(buf, size, bytes < 10 ? "%.2f %s" : bytes < 100 ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

/* 262144 -> "262,144" */
static void format_count(char *buf, size_t size, int64_t v) {
    char raw[32];
    snprintf(raw, sizeof raw, "%lld", (long long)v);
    size_t len = strlen(raw), o = 0;
    for (size_t i = 0; i < len && o + 2 < size; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[i];
    }
    buf[o] = 0;
}

static void format_flops(char *buf, size_t size, double f) {
    static const char *const unit[] = {"", "k", "M", "G", "T", "P"};
    int u = 0;
    while (f >= 1000 && u < 5)
        f /= 1000, u++;
    snprintf(buf, size, f < 10 ? "%.2f %sFLOP" : f < 100 ? "%.1f %sFLOP" : "%.0f %sFLOP", f, unit[u]);
}

static bool is_mask(const atn_interventions *iv) {
    return iv && (iv->causal || iv->window >= 0 || iv->strided > 0 || iv->n_hide > 0);
}

/* Layers of n_layers the masks apply in (iv->mask_layers; every layer without it). */
static int32_t masked_layers(const atn_interventions *iv, int32_t n_layers) {
    int32_t count = 0;
    for (int32_t l = 0; l < n_layers; l++)
        count += !iv->mask_layers || iv->mask_layers[l];
    return count;
}

static bool same_mask(const atn_interventions *a, const atn_interventions *b, int32_t n_layers) {
    if (masked_layers(a, n_layers) != masked_layers(b, n_layers))
        return false;
    if (a->causal != b->causal || a->window != b->window || a->strided != b->strided || a->n_hide != b->n_hide ||
        (a->window >= 0 && a->n_global != b->n_global))
        return false;
    if (a->window >= 0 && a->n_global && memcmp(a->global_tokens, b->global_tokens, (size_t)a->n_global * 4))
        return false;
    return true;
}

int32_t atn_cost_variants(int32_t n, int32_t n_layers, int32_t n_heads, int32_t d_head, int32_t batch,
                          int32_t window, const int32_t *global_tokens, int32_t n_global, int32_t strided,
                          const atn_interventions *chosen, atn_cost_row *rows, atn_error *err) {
    if (window < 0)
        window = n / 8 > 1 ? n / 8 : 1;
    if (strided <= 0) {
        strided = (int32_t)lround(sqrt((double)n));
        strided = strided < 2 ? 2 : strided;
    }
    static const int32_t token0 = 0;
    if (!global_tokens || n_global <= 0)
        global_tokens = &token0, n_global = 1;
    atn_interventions v[ATN_COST_VARIANTS_MAX];
    int32_t count = 0;
    for (int i = 0; i < 5; i++)
        atn_interventions_init(&v[i]);
    snprintf(rows[count].label, sizeof rows[count].label, "%s", rt_tr(N_("dense")));
    count++;
    v[count].causal = true;
    snprintf(rows[count].label, sizeof rows[count].label, "%s", rt_tr(N_("causal")));
    count++;
    v[count].window = window;
    snprintf(rows[count].label, sizeof rows[count].label, rt_tr(N_("sliding window ±%d")), window);
    count++;
    v[count].window = window;
    v[count].global_tokens = global_tokens;
    v[count].n_global = n_global;
    snprintf(rows[count].label, sizeof rows[count].label, rt_tr(N_("Longformer ±%d + %d global")), window, n_global);
    count++;
    v[count].strided = strided;
    snprintf(rows[count].label, sizeof rows[count].label, rt_tr(N_("strided (block-sparse), step %d")), strided);
    count++;
    if (is_mask(chosen)) {
        bool known = false;
        for (int i = 1; i < count; i++)
            known |= same_mask(chosen, &v[i], n_layers);
        if (!known) {
            atn_interventions_init(&v[count]);
            v[count].causal = chosen->causal;
            v[count].window = chosen->window;
            v[count].global_tokens = chosen->global_tokens;
            v[count].n_global = chosen->window >= 0 ? chosen->n_global : 0;
            v[count].strided = chosen->strided;
            v[count].hide_tokens = chosen->hide_tokens;
            v[count].n_hide = chosen->n_hide;
            v[count].mask_layers = chosen->mask_layers;
            int32_t in = masked_layers(chosen, n_layers);
            if (in < n_layers)   /* --mask-layers: the other layers keep every cell */
                snprintf(rows[count].label, sizeof rows[count].label, rt_tr(N_("the chosen mask in %d of %d layers")),
                         in, n_layers);
            else
                snprintf(rows[count].label, sizeof rows[count].label, "%s", rt_tr(N_("the chosen mask")));
            count++;
        }
    }
    for (int32_t i = 0; i < count; i++)
        if (atn_attention_cost_compute(n, n_layers, n_heads, d_head, batch, &v[i], &rows[i].cost, err) != ATN_OK)
            return -1;
    return count;
}

typedef struct cost_geom {
    double pad, gap, row_h, label_w, bar_x, bar_w, note_x, note_w, title_h, line_h, top;
} cost_geom;

static void row_note(char *buf, size_t size, const atn_cost_row *r, const atn_cost_row *dense) {
    char cells[32], flops[32];
    format_count(cells, sizeof cells, r->cost.kept_head);
    format_flops(flops, sizeof flops, r->cost.flops_kept_layer);
    double share = dense->cost.cells_head ? 100.0 * (double)r->cost.kept_head / (double)dense->cost.cells_head : 0;
    snprintf(buf, size, rt_tr(N_("%s cells per head (%.1f%%) · %s per layer")), cells, share, flops);
}

static void header_line(char *buf, size_t size, const atn_cost_row *dense) {
    const atn_attention_cost *c = &dense->cost;
    char cells[32], bh[32], bl[32], bc[32], bb[32];
    format_count(cells, sizeof cells, c->cells_head);
    atn_render_format_bytes(bh, sizeof bh, (double)c->bytes_head);
    atn_render_format_bytes(bl, sizeof bl, (double)c->bytes_layer);
    atn_render_format_bytes(bc, sizeof bc, (double)c->bytes_capture);
    atn_render_format_bytes(bb, sizeof bb, (double)c->bytes_batch);
    snprintf(buf, size,
             rt_tr(N_("At %d tokens a head's map has %s cells: %s as float32; %s per layer (%d heads), %s per "
                      "capture (%d layers), %s for a batch of %d.")),
             c->n, cells, bh, bl, c->n_heads, bc, c->n_layers, bb, c->batch);
}

static void geometry(rtext *t, const atn_cost_chart_spec *s, double w, cost_geom *g) {
    double fs = t->fs;
    g->pad = 10 * fs;
    g->gap = 6 * fs;
    g->line_h = rt_line_height(t, RT_SMALL);
    g->row_h = fmax(rt_line_height(t, RT_LABEL), 14 * fs) + g->gap;
    g->title_h = s->title && s->title[0] ? rt_line_height(t, RT_TITLE) + g->gap : 0;
    g->label_w = 0;
    for (int32_t i = 0; i < s->n_rows; i++) {
        double lw;
        rt_measure(t, s->rows[i].label, RT_LABEL, false, &lw, NULL);
        g->label_w = fmax(g->label_w, lw);
    }
    g->note_w = 0;
    char buf[256];
    for (int32_t i = 0; i < s->n_rows; i++) {
        double nw;
        row_note(buf, sizeof buf, &s->rows[i], &s->rows[0]);
        rt_measure(t, buf, RT_SMALL, false, &nw, NULL);
        g->note_w = fmax(g->note_w, nw);
    }
    g->bar_x = g->pad + g->label_w + g->gap;
    g->bar_w = fmax(40 * fs, w - g->bar_x - g->gap - g->note_w - g->pad);
    g->note_x = g->bar_x + g->bar_w + g->gap;
    g->top = g->pad + g->title_h + 2 * g->line_h + g->gap;
}

void atn_render_cost_chart_natural_size(const atn_cost_chart_spec *s, double *width, double *height) {
    rtext t;
    rt_begin(&t, s->style);
    cost_geom g;
    geometry(&t, s, 0, &g);
    *width = g.bar_x + 220 * t.fs + g.gap + g.note_w + g.pad;
    *height = g.top + g.row_h * (s->n_rows > 0 ? s->n_rows : 1) + g.pad;
    rt_end(&t);
}

void atn_render_cost_chart(cairo_t *cr, const atn_cost_chart_spec *s, double w, double h) {
    rtext t;
    rt_begin(&t, s->style);
    rt_background(cr, &t, w, h);
    if (s->n_rows < 1 || !s->rows) {
        rt_end(&t);
        return;
    }
    cost_geom g;
    geometry(&t, s, w, &g);
    double y = g.pad;
    rt_rgb(cr, t.st.fg, 1);
    if (g.title_h > 0) {
        rt_draw(cr, &t, s->title, RT_TITLE, true, g.pad, y, 0, w - 2 * g.pad);
        y += g.title_h;
    }
    char buf[512];
    header_line(buf, sizeof buf, &s->rows[0]);
    PangoLayout *lay = rt_layout(&t, buf, RT_SMALL, false, false);
    pango_layout_set_width(lay, (int)((w - 2 * g.pad) * PANGO_SCALE));
    pango_layout_set_wrap(lay, PANGO_WRAP_WORD);
    pango_layout_set_height(lay, -2);
    pango_layout_set_ellipsize(lay, PANGO_ELLIPSIZE_END);
    cairo_move_to(cr, g.pad, y);
    pango_cairo_show_layout(cr, lay);
    g_object_unref(lay);
    double dense = (double)s->rows[0].cost.cells_head;
    for (int32_t i = 0; i < s->n_rows; i++) {
        double ry = g.top + i * g.row_h, bh = g.row_h - g.gap;
        rt_rgb(cr, t.st.fg, 1);
        rt_draw(cr, &t, s->rows[i].label, RT_LABEL, false, g.pad, ry, 0, g.label_w + 1);
        /* the dense extent as an outline, the kept cells filled */
        cairo_set_line_width(cr, 1);
        rt_rgb(cr, t.st.fg, 0.35);
        cairo_rectangle(cr, g.bar_x + 0.5, ry + 0.5, g.bar_w - 1, bh - 1);
        cairo_stroke(cr);
        double frac = dense > 0 ? (double)s->rows[i].cost.kept_head / dense : 0;
        rt_rgb(cr, t.st.accent, 0.85);
        cairo_rectangle(cr, g.bar_x, ry, g.bar_w * frac, bh);
        cairo_fill(cr);
        rt_rgb(cr, t.st.fg, 1);
        row_note(buf, sizeof buf, &s->rows[i], &s->rows[0]);
        rt_draw(cr, &t, buf, RT_SMALL, false, g.note_x, ry + (bh - g.line_h) / 2, 0, 0);
    }
    rt_end(&t);
}

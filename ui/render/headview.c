/* The head view, as bertviz draws it: the tokens in two columns (queries on the left,
 * keys on the right) joined by lines whose opacity is the attention weight; several heads
 * overlay in their own colours.  With a selected query only its lines are drawn and the
 * keys are shaded by their weight.  Cross-attention has two sequences: n target tokens on
 * the left, n_k source tokens on the right, both columns from the top at one row height. */
#include "render-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void atn_headview_spec_init(atn_headview_spec *s) {
    memset(s, 0, sizeof *s);
    s->selected_query = -1;
    s->hover_token = -1;
    s->focus_key = -1;
    s->min_weight = 0.01;
}

/* The keys: their count, labels and mask (the queries' own unless n_k is set). */
static int32_t keys_n(const atn_headview_spec *s) { return s->n_k > 0 ? s->n_k : s->n; }
static const char *const *keys_tokens(const atn_headview_spec *s) {
    return s->n_k > 0 && s->key_tokens ? s->key_tokens : s->tokens;
}
static const int32_t *keys_mask(const atn_headview_spec *s) { return s->n_k > 0 ? s->key_mask : s->mask; }

/* Whether the line i -> j of head k is drawn: the one rule for drawing and counting. */
static bool line_drawn(const atn_headview_spec *s, int32_t k, int32_t i, int32_t j) {
    int32_t n = s->n, nk = keys_n(s);
    const int32_t *km = keys_mask(s);
    if (s->selected_query >= 0 && s->selected_query < n && i != s->selected_query)
        return false;
    if (s->focus_key >= 0 && s->focus_key < nk && (s->selected_query < 0 || s->selected_query >= n) && j != s->focus_key)
        return false;
    if ((s->mask && !s->mask[i]) || (km && !km[j]))
        return false;
    double v = s->attn[k][(size_t)i * (s->stride > 0 ? s->stride : nk) + j];
    return v > s->min_weight;
}

int64_t atn_render_headview_lines(const atn_headview_spec *s, int32_t k, int32_t *from, int32_t *to, int64_t max) {
    if (k < 0 || k >= s->n_shown || k >= ATN_HEADVIEW_MAX_HEADS || !s->attn[k])
        return 0;
    int64_t c = 0;
    int32_t n = s->n, nk = keys_n(s);
    int32_t q = s->selected_query >= 0 && s->selected_query < n ? s->selected_query : -1;
    for (int32_t i = q >= 0 ? q : 0; i < (q >= 0 ? q + 1 : n); i++)
        for (int32_t j = 0; j < nk; j++)
            if (line_drawn(s, k, i, j)) {
                if (c < max) {
                    if (from)
                        from[c] = i;
                    if (to)
                        to[c] = j;
                }
                c++;
            }
    return c;
}

void atn_render_head_color(int32_t head, double rgb[3]) {
    /* matplotlib's tab10 = d3's schemeCategory10, the palette bertviz uses */
    static const uint32_t tab10[10] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                       0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
    uint32_t c = tab10[((head % 10) + 10) % 10];
    rgb[0] = ((c >> 16) & 0xff) / 255.0;
    rgb[1] = ((c >> 8) & 0xff) / 255.0;
    rgb[2] = (c & 0xff) / 255.0;
}

/* Token i's label on one side (0 the queries, 1 the keys), with its position when labels are
 * thinned ("200 the"), in buf when it needs one. */
static const char *side_label_text(const atn_headview_spec *s, int side, int32_t step, int32_t i, char *buf,
                                   size_t size) {
    const char *const *toks = side ? keys_tokens(s) : s->tokens;
    int32_t n = side ? keys_n(s) : s->n;
    const char *tok = toks && i >= 0 && i < n && toks[i] ? toks[i] : "";
    if (step <= 1 && s->first <= 0)
        return tok;
    snprintf(buf, size, "%d %s", i + s->first, tok);
    return buf;
}

const char *atn_render_headview_label_text(const atn_headview_spec *s, int32_t step, int32_t i, char *buf,
                                           size_t size) {
    return side_label_text(s, 0, step, i, buf, size);
}

/* The labels drawn wherever they fall on one side: the selected query's, the hovered token's
 * and the focused key's; with two sequences (n_k set) the first two are the queries' and the
 * last the keys'. */
static int side_specials(const atn_headview_spec *s, int side, int32_t out[3]) {
    bool pair = s->n_k > 0;
    int k = 0;
    if (!pair || side == 0)
        out[k++] = s->selected_query, out[k++] = s->hover_token;
    if (!pair || side == 1)
        out[k++] = s->focus_key;
    return k;
}

/* Whether token i's label on one side is drawn: a special one always; a thinned one on the
 * step unless within a step of a special one, which it would overlap. */
static bool side_label_shown(const atn_headview_spec *s, int side, int32_t step, int32_t i) {
    int32_t n = side ? keys_n(s) : s->n, sp[3];
    if (i < 0 || i >= n)
        return false;
    int k = side_specials(s, side, sp);
    for (int j = 0; j < k; j++)
        if (i == sp[j])
            return true;
    if ((i + s->first) % (step > 0 ? step : 1))
        return false;
    for (int j = 0; j < k; j++)
        if (sp[j] >= 0 && sp[j] < n && abs(i - sp[j]) < step)
            return false;
    return true;
}

typedef struct hv_layout {
    atn_rect title;
    double y0, row_h;        /* token i's centre: y0 + (i + 0.5) row_h */
    double left_x1;          /* right edge of the left labels */
    double right_x0;         /* left edge of the right labels */
    double label_w;
    int32_t label_step;
    double label_size;       /* the token labels' font size */
} hv_layout;

static void hv_layout_sized(rtext *t, const atn_headview_spec *s, double w, double h, double label_size,
                            hv_layout *H) {
    memset(H, 0, sizeof *H);
    H->label_size = label_size;
    double fs = t->fs, pad = 10 * fs, gap = 6 * fs;
    double y0 = pad;
    if (s->title && s->title[0]) {
        double th = rt_line_height(t, RT_TITLE);
        H->title = (atn_rect){pad, pad, w - 2 * pad, th};
        y0 += th + 2 * gap;
    }
    /* every token gets a row, however thin (4,096 tokens in 400 px: 0.1 px), so the whole
       input is in view; labels every k-th token, k round, with their positions ("200 the") */
    double lh = rt_line_height(t, label_size);
    int32_t n = s->n > keys_n(s) ? s->n : keys_n(s);   /* the longer column */
    n = n > 0 ? n : 1;
    H->row_h = fmin(lh * 1.35, fmax(1e-3, (h - y0 - pad) / n));
    H->y0 = y0;
    H->label_step = H->row_h >= lh * 0.95 ? 1 : rt_round_step(lh * 0.95 / H->row_h);
    double lw = 0;
    char buf[320];
    for (int side = 0; side < 2; side++) {   /* one width for both columns */
        for (int32_t i = 0; i < (side ? keys_n(s) : s->n); i++) {
            if (H->label_step > 1 && (i + s->first) % H->label_step)
                continue;
            double tw;
            rt_measure(t, side_label_text(s, side, H->label_step, i, buf, sizeof buf), label_size, true, &tw, NULL);
            lw = fmax(lw, tw);
        }
    }
    lw = fmin(lw + 2 * gap, 0.3 * w);
    double lines_w = fmax(40 * fs, w - 2 * pad - 2 * lw);
    double used = 2 * lw + lines_w;
    double x = fmax(pad, (w - used) / 2);
    H->label_w = lw;
    H->left_x1 = x + lw;
    H->right_x0 = x + lw + lines_w;
}

/* As the heatmap's labels (ui/render/heatmap.c layout_with): with larger-than-normal text,
 * labels that would be thinned are drawn smaller instead, down to 0.8 of the normal size. */
static void hv_layout_with(rtext *t, const atn_headview_spec *s, double w, double h, hv_layout *H) {
    hv_layout_sized(t, s, w, h, RT_LABEL, H);
    if (t->fs <= 1.0 || H->label_step <= 1)
        return;
    double lh = rt_line_height(t, RT_LABEL);
    double k = fmax(0.8 / t->fs, fmin(1.0, H->row_h / (lh * 0.95)));
    if (k < 1.0)
        hv_layout_sized(t, s, w, h, RT_LABEL * k, H);
}

bool atn_render_headview_label_shown(const atn_headview_spec *s, int32_t step, int32_t i) {
    return side_label_shown(s, 0, step, i);
}

bool atn_render_headview_label_place(const atn_headview_spec *s, double w, double h, int32_t i, double *y,
                                     int32_t *step) {
    rtext t;
    rt_begin(&t, s->style);
    hv_layout H;
    hv_layout_with(&t, s, w, h, &H);
    rt_end(&t);
    if (y)
        *y = H.y0 + (i + 0.5) * H.row_h;
    if (step)
        *step = H.label_step;
    return atn_render_headview_label_shown(s, H.label_step, i);
}

bool atn_render_headview_token_at(const atn_headview_spec *s, double w, double h, double x, double y, int *side,
                                  int32_t *token) {
    rtext t;
    rt_begin(&t, s->style);
    hv_layout H;
    hv_layout_with(&t, s, w, h, &H);
    rt_end(&t);
    *side = -1;
    *token = -1;
    double fy = (y - H.y0) / H.row_h;
    int sd;
    if (x >= H.left_x1 - H.label_w && x <= H.left_x1)
        sd = 0;
    else if (x >= H.right_x0 && x <= H.right_x0 + H.label_w)
        sd = 1;
    else
        return false;
    if (!(fy >= 0 && fy < (sd ? keys_n(s) : s->n)))
        return false;
    *side = sd;
    *token = (int32_t)fy;
    return true;
}

void atn_render_headview(cairo_t *cr, const atn_headview_spec *s, double w, double h) {
    rtext t;
    rt_begin(&t, s->style);
    hv_layout H;
    hv_layout_with(&t, s, w, h, &H);
    double fs = t.fs, gap = 6 * fs, lh = rt_line_height(&t, H.label_size);
    cairo_save(cr);
    rt_background(cr, &t, w, h);
    rt_rgb(cr, t.st.fg, 1.0);
    if (s->title && s->title[0])
        rt_draw(cr, &t, s->title, RT_TITLE, true, H.title.x + H.title.w / 2, H.title.y, 0.5, H.title.w);
    int32_t n = s->n, nk = keys_n(s);
    const char *const *ktok = keys_tokens(s);
    const int32_t *km = keys_mask(s);
    double xl = H.left_x1 + gap / 2, xr = H.right_x0 - gap / 2;
    int32_t q = s->selected_query >= 0 && s->selected_query < n ? s->selected_query : -1;
    double line_w = fmax(0.5, fmin(2.0 * fs, H.row_h * 0.6));
    cairo_set_line_width(cr, line_w);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
    /* keys shaded by the weight the selected query gives them (first head shown) */
    if (q >= 0 && s->n_shown > 0 && s->attn[0]) {
        for (int32_t k = 0; k < s->n_shown && k < ATN_HEADVIEW_MAX_HEADS; k++) {
            if (!s->attn[k])
                continue;
            double rgb[3];
            atn_render_head_color(s->head_ids[k], rgb);
            for (int32_t j = 0; j < nk; j++) {
                double a = s->attn[k][(size_t)q * (s->stride > 0 ? s->stride : nk) + j];
                if (!(a > s->min_weight))
                    continue;
                rt_rgb(cr, rgb, fmin(1.0, a) * 0.6 / s->n_shown);
                cairo_rectangle(cr, H.right_x0, H.y0 + j * H.row_h, H.label_w, H.row_h);
                cairo_fill(cr);
            }
        }
        rt_rgb(cr, t.st.accent, 0.25);
        cairo_rectangle(cr, H.left_x1 - H.label_w, H.y0 + q * H.row_h, H.label_w, H.row_h);
        cairo_fill(cr);
    }
    for (int32_t k = 0; k < s->n_shown && k < ATN_HEADVIEW_MAX_HEADS; k++) {
        const float *a = s->attn[k];
        if (!a)
            continue;
        double rgb[3];
        atn_render_head_color(s->head_ids[k], rgb);
        for (int32_t i = q >= 0 ? q : 0; i < (q >= 0 ? q + 1 : n); i++) {
            if (s->mask && !s->mask[i])
                continue;
            double yi = H.y0 + (i + 0.5) * H.row_h;
            for (int32_t j = 0; j < nk; j++) {
                double v = a[(size_t)i * (s->stride > 0 ? s->stride : nk) + j];
                if (!line_drawn(s, k, i, j))
                    continue;
                rt_rgb(cr, rgb, fmin(1.0, v));
                cairo_move_to(cr, xl, yi);
                cairo_line_to(cr, xr, H.y0 + (j + 0.5) * H.row_h);
                cairo_stroke(cr);
            }
        }
    }
    /* the labels: the left column's (queries) and the right's (keys), each token of a
       thinned column still shown when it is selected, hovered or focused */
    bool pair = s->n_k > 0;
    char buf[320];
    for (int32_t i = 0; i < (n > nk ? n : nk); i++) {
        double y = H.y0 + (i + 0.5) * H.row_h - lh / 2;
        if (s->tokens && side_label_shown(s, 0, H.label_step, i)) {
            bool hi = i == q || i == s->hover_token;
            rt_rgb(cr, hi ? t.st.accent : t.st.fg, s->mask && !s->mask[i] ? 0.4 : 1.0);
            rt_draw(cr, &t, side_label_text(s, 0, H.label_step, i, buf, sizeof buf), H.label_size, hi,
                    H.left_x1 - gap / 2, y, 1.0, H.label_w - gap / 2);
        }
        bool key_hi = pair ? i == s->focus_key : i == s->hover_token;
        if (ktok && side_label_shown(s, 1, H.label_step, i)) {
            rt_rgb(cr, key_hi ? t.st.accent : t.st.fg, km && !km[i] ? 0.4 : 1.0);
            rt_draw(cr, &t, side_label_text(s, 1, H.label_step, i, buf, sizeof buf), H.label_size, key_hi,
                    H.right_x0 + gap / 2, y, 0.0, H.label_w - gap / 2);
        }
    }
    cairo_restore(cr);
    rt_end(&t);
}

void atn_render_headview_natural_size(const atn_headview_spec *s, double *width, double *height) {
    rtext t;
    rt_begin(&t, s->style);
    double lw = 0;
    for (int side = 0; side < 2; side++) {
        const char *const *tok = side ? keys_tokens(s) : s->tokens;
        for (int32_t i = 0; i < (side ? keys_n(s) : s->n) && tok; i++) {
            double tw;
            rt_measure(&t, tok[i], RT_LABEL, true, &tw, NULL);
            lw = fmax(lw, tw);
        }
    }
    double title_w = 0;
    if (s->title)
        rt_measure(&t, s->title, RT_TITLE, true, &title_w, NULL);
    double lh = rt_line_height(&t, RT_LABEL);
    double th = s->title ? rt_line_height(&t, RT_TITLE) + 12 * t.fs : 0;
    *width = ceil(fmax(2 * fmin(lw + 12 * t.fs, 300 * t.fs) + 220 * t.fs + 20 * t.fs, title_w + 20 * t.fs));
    /* a row a line tall, up to 8,000 px of rows: longer inputs get thinner rows and thinned
       labels (as in the window), so a PNG stays under cairo's 32,767 px at --scale 2 */
    *height = ceil(20 * t.fs + th + fmin((s->n > keys_n(s) ? s->n : keys_n(s)) * lh * 1.35, 8000 * t.fs));
    rt_end(&t);
}

/* Helpers shared by the figure files: text through pango with a fixed measuring context
 * (so geometry never depends on the target surface), colours, small number formatting. */
#ifndef ATN_RENDER_PRIVATE_H
#define ATN_RENDER_PRIVATE_H

#include <pango/pangocairo.h>

#include "render.h"

/* A figure's English text in the language the program chose (atn_render_set_translator);
 * N_() marks strings for xgettext where they are defined. */
const char *rt_tr(const char *msgid) __attribute__((format_arg(1)));
#ifndef N_
#define N_(s) (s)
#endif

/* Font sizes in user units (the measuring context runs at 72 dpi, so 1 pt = 1 unit). */
#define RT_LABEL 12.0
#define RT_SMALL 10.0
#define RT_TITLE 15.0

typedef struct rtext {
    PangoContext *ctx;
    PangoContext *vctx;            /* vertical lines (East gravity), made on first use */
    PangoLayout *layout;           /* reused for measuring */
    atn_render_style st;           /* resolved style (defaults filled in) */
    double fs;                     /* font scale */
    char family[384];              /* the family list used ("" = st.font_family), see text.c */
    /* the font descriptions set_font made, by size and weight (text.c): measuring 512 token
       labels parsed the family string 512 times */
    struct rt_font { PangoFontDescription *fd; double size; bool bold; } fonts[4];
    int n_fonts, next_font;
} rtext;

void rt_begin(rtext *t, const atn_render_style *style);
void rt_end(rtext *t);

/* A new layout (caller unrefs) for text at size (RT_*), bold or not; markup when asked. */
PangoLayout *rt_layout(rtext *t, const char *text, double size, bool bold, bool markup);
/* Logical size of text at size (reuses one layout). */
void rt_measure(rtext *t, const char *text, double size, bool bold, double *w, double *h);
double rt_line_height(rtext *t, double size);
/* Draws text with its top-left at (x, y); halign 0 left, 0.5 centre, 1 right of x.  When
 * max_w > 0 the text is ellipsized to that width. */
void rt_draw(cairo_t *cr, rtext *t, const char *text, double size, bool bold, double x, double y, double halign,
             double max_w);
/* Draws text rotated a quarter turn anticlockwise (reading upwards), its end at (x, y_end)
 * and its vertical centre on x.  Text with CJK characters (rt_has_cjk) is a column read
 * downwards from y_end instead, the characters upright, over the same span (cut at its end
 * when max_w > 0). */
void rt_draw_up(cairo_t *cr, rtext *t, const char *text, double size, bool bold, double x, double y_end,
                double max_w);
bool rt_has_cjk(const char *s);
void rt_draw_markup(cairo_t *cr, rtext *t, const char *markup, double size, double x, double y, double max_w);
/* text centred on x in a column max_w wide from y, wrapped at words into at most max_lines
 * lines (the last one ellipsized if even that is short); returns the height drawn.
 * rt_wrapped_height measures the same without drawing. */
double rt_draw_wrapped(cairo_t *cr, rtext *t, const char *text, double size, bool bold, double x, double y,
                       double max_w, int max_lines);
double rt_wrapped_height(rtext *t, const char *text, double size, bool bold, double max_w, int max_lines);
/* Whether text wrapped so is cut (ellipsized: max_lines were too few); lines (may be NULL):
 * the lines it takes. */
bool rt_wrapped_cut(rtext *t, const char *text, double size, bool bold, double max_w, int max_lines, int *lines);
/* As rt_draw_wrapped, the lines left-aligned in the column from x to x + max_w. */
double rt_draw_wrapped_left(cairo_t *cr, rtext *t, const char *text, double size, bool bold, double x, double y,
                            double max_w, int max_lines);

static inline void rt_rgb(cairo_t *cr, const double c[3], double alpha) {
    cairo_set_source_rgba(cr, c[0], c[1], c[2], alpha);
}

/* Paints the background unless the style is transparent. */
void rt_background(cairo_t *cr, const rtext *t, double w, double h);

/* Number shown to people: 4 significant decimals by default ("0.3760", "-12.50", "1.2e-05"). */
void rt_format(char *buf, size_t size, double v);
/* v in a column's one format: "%.4f", or "%.3e" when sci (a column with a number ≥ 1e5);
 * a nonzero v that rounds to 0 reads "<0.0001" (">-0.0001"); NaN/Inf as rt_format. */
void rt_format_fixed(char *buf, size_t size, double v, bool sci);

/* Nice colour-bar ticks between lo and hi: writes up to max values, returns the count and
 * the step (for choosing the decimals). */
int rt_ticks(double lo, double hi, int max, double *ticks, double *step);
void rt_format_tick(char *buf, size_t size, double v, double step);

/* A label step: every k-th token, k a round number (1, 2, 5, 10, 20, 50, ...) at least need,
 * so the positions drawn are 0, 20, 40, ... (the heatmap's and the token lines'). */
int32_t rt_round_step(double need);

/* Relative luminance of a colour: pick black or white text on top of it. */
double rt_luminance(const double rgb[3]);

/* Colour-bar width (bar and ticks) for this range and style, and the bar itself in box. */
double rt_colorbar_width(rtext *t, double vmin, double vmax, bool show_nonfinite);
void rt_colorbar(cairo_t *cr, rtext *t, atn_colormap cm, double vmin, double vmax, const char *label,
                 bool show_nonfinite, atn_rect box);
/* The same with a second line under the label (what the colours span), or NULL. */
void rt_colorbar_noted(cairo_t *cr, rtext *t, atn_colormap cm, double vmin, double vmax, const char *label,
                       const char *note, bool reversed, bool show_nonfinite, atn_rect box);

/* A matrix image (cols x rows pixels) stretched over r with nearest-neighbour filtering. */
void rt_draw_cells(cairo_t *cr, cairo_surface_t *img, atn_rect r, int32_t rows, int32_t cols);
/* Only the block of nr x nc cells from (r0, c0) of a rows x cols image, stretched over r. */
void rt_draw_cells_part(cairo_t *cr, cairo_surface_t *img, atn_rect r, int32_t rows, int32_t cols, int32_t r0,
                        int32_t c0, int32_t nr, int32_t nc);

/* Which cells of a map are masked, "not attended to, by construction" rather than a weight
 * of 0: a causal model's future cells (causal: col > row, keys after their query) and the
 * cells an additive mask hides (add: [rows][cols], row length cols, a cell below -1e30, the
 * float's lowest: a key the what-if lab's window, stride or hidden tokens hide, or padding;
 * NULL: none).  Borrowed: add must outlive the mask. */
typedef struct rt_cell_mask {
    bool causal;
    const float *add;
    int32_t cols;
} rt_cell_mask;

/* Whether cell (row, col) is masked; row and col inside add's matrix when add is set. */
bool rt_cell_masked(const rt_cell_mask *m, int32_t row, int32_t col);
/* Over the block of rows [row0, row0 + rows) x columns [col0, col0 + cols) drawn at r, the
 * masked cells in grey (each row's runs as one rectangle: a causal mask is a staircase),
 * hatched when hatch is true (lines max(0.8, fs) wide, max(5 fs, 4) apart).  Nothing for an
 * empty block or when no cell of it is masked.  The one drawing of masked cells: the
 * heatmap, its overview and the model grid's thumbnails. */
void rt_draw_cell_mask(cairo_t *cr, const rt_cell_mask *m, atn_rect r, int32_t row0, int32_t col0, int32_t rows,
                       int32_t cols, bool hatch, double fs);

#endif

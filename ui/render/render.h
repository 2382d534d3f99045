/* ui/render: attnscope's figures drawn with cairo and pango alone (no GTK), shared by the
 * GUI (which draws them in snapshot()) and the command line (which writes PNG/SVG/PDF).
 * A figure on screen and in a file is the same picture because both call these functions.
 *
 * How to use it
 *  - Each figure has a spec struct: fill it with atn_<figure>_spec_init() and set the
 *    fields you need.  Specs only borrow: nothing here frees what a spec points to.
 *  - atn_render_<figure>(cr, spec, width, height) draws into the rectangle
 *    (0, 0, width, height) of cr's user space (translate/scale cr to place it).
 *  - Geometry depends only on the spec and the size (text is measured with a fixed
 *    resolution, hinting off), so the hit-test helpers (atn_render_<figure>_..._at) map a
 *    pointer position to the same cell that was drawn, whatever cr is.
 *  - Colours: attention heatmaps turn their n×n floats into one pixel per cell
 *    (atn_render_matrix_pixels) and draw that image scaled with CAIRO_FILTER_NEAREST: crisp
 *    cells, no seams in PDF, fast at 512 tokens.  Non-finite values (NaN, ±Inf) get a
 *    colour of their own (ATN_RENDER_NONFINITE_RGB) and a legend entry.
 *  - Every function is safe to call from any single thread at a time per cairo_t; the text
 *    measuring context is created per call, so different threads may draw different
 *    figures at once.
 */
#ifndef ATN_RENDER_H
#define ATN_RENDER_H

#include <cairo.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "attnscope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- colour maps -------------------------------------------------------------- */

/* Tables of 256 entries sampled from matplotlib (tools/gen-colormaps.py writes
 * colormap-data.c); index = floor(t * 256) clamped to 0..255, as matplotlib does. */
typedef enum atn_colormap {
    ATN_CMAP_VIRIDIS = 0,  /* the default */
    ATN_CMAP_MAGMA,
    ATN_CMAP_CIVIDIS,      /* colour-vision-deficiency friendly */
    ATN_CMAP_GREYS,        /* white (low) to black (high), matplotlib "Greys" */
    ATN_CMAP_RDBU,         /* diverging, matplotlib "RdBu_r": blue (low) - white - red (high) */
    ATN_CMAP_COUNT
} atn_colormap;

/* The colour non-finite values are drawn in (magenta: in none of the maps). */
#define ATN_RENDER_NONFINITE_RGB 1.0, 0.0, 1.0

/* NULL-terminated list of names: "viridis", "magma", "cividis", "greys", "rdbu". */
const char *const *atn_colormap_names(void);
const char *atn_colormap_name(atn_colormap cm);
/* Case-insensitive; also accepts "gray"/"grey", "diverging" (rdbu).  false if unknown. */
bool atn_colormap_from_name(const char *name, atn_colormap *out);
bool atn_colormap_is_diverging(atn_colormap cm);
/* t in [0, 1] (clamped; NaN gives the non-finite colour) -> rgb in [0, 1]. */
void atn_colormap_rgb(atn_colormap cm, double t, double rgb[3]);
/* The 256-entry table as 0xRRGGBB (for the GUI's colour-map chooser swatches). */
const uint32_t *atn_colormap_table(atn_colormap cm);

/* ---- matrix -> pixels ------------------------------------------------------------- */

/* The value range a matrix is coloured with.  auto: vmin = 0 and vmax = the largest finite
 * value (for a diverging map: ±the largest finite |value|); a constant matrix still gets a
 * non-empty range. */
typedef struct atn_value_range {
    bool automatic;   /* default true */
    double vmin, vmax;
} atn_value_range;

/* Resolves r for this matrix (rows × cols, row stride `stride` floats) and colour map;
 * returns the range actually used (vmin < vmax, both finite). */
void atn_value_range_resolve(const atn_value_range *r, const float *values, int32_t rows, int32_t cols,
                             size_t stride, atn_colormap cm, double *vmin, double *vmax);

/* One pixel per cell: writes rows × cols pixels into `pixels` (row pitch `pixel_stride`
 * bytes, at least cols * 4) in cairo's CAIRO_FORMAT_ARGB32 layout — a native-endian
 * uint32 0xAARRGGBB, opaque.  On little-endian machines that is GdkMemoryTexture's
 * GDK_MEMORY_B8G8R8A8_PREMULTIPLIED (= GDK_MEMORY_DEFAULT).  Values map to t = (v - vmin) /
 * (vmax - vmin); non-finite values get ATN_RENDER_NONFINITE_RGB.  Returns true when the
 * matrix had any non-finite value. */
bool atn_render_matrix_pixels(const float *values, int32_t rows, int32_t cols, size_t stride,
                              atn_colormap cm, double vmin, double vmax, uint8_t *pixels,
                              size_t pixel_stride);

/* The same as a new cairo image surface (cols × rows pixels); NULL when out of memory.
 * Callers may cache it and pass it back through a spec's `cells` field. */
cairo_surface_t *atn_render_matrix_surface(const float *values, int32_t rows, int32_t cols, size_t stride,
                                           atn_colormap cm, double vmin, double vmax, bool *has_nonfinite);

/* ---- common style ------------------------------------------------------------------ */

typedef struct atn_render_style {
    double font_scale;      /* 1.0 = 10 pt-ish labels at 96 dpi; presentation mode uses ~1.6 */
    const char *font_family;/* pango family list; default "Sans" (CJK falls back to Noto CJK) */
    double fg[3];           /* text and lines */
    double bg[3];           /* background */
    double accent[3];       /* highlights (selected/hovered row, column, cell) */
    bool transparent;       /* leave the background unpainted (GUI widgets) */
} atn_render_style;

/* Light (black on white) or dark (light grey on near-black) defaults. */
void atn_render_style_init(atn_render_style *st, bool dark);

/* The words inside figures (a colour bar's "JS distance", the trace sheet's step titles and
 * sentences) are English unless the program sets a translator: the window passes gettext's,
 * so its exports speak the interface's language; the command line, English like its
 * messages, sets none.  Set it once, before drawing (it is read without a lock). */
typedef const char *(*atn_render_translate_fn)(const char *msgid);
void atn_render_set_translator(atn_render_translate_fn translate);

/* The language figures are shaped in (a BCP 47 / Pango tag such as "zh-cn"; NULL or "" to
 * go back to the default: the first of PANGO_LANGUAGE / LANGUAGE, else the locale's).  It
 * picks the face for Han characters (Noto Sans CJK SC for zh-cn, JP for ja) on screen and
 * in PNG, SVG and PDF files.  Set it once, before drawing, like the translator. */
void atn_render_set_language(const char *lang);

typedef struct atn_rect {
    double x, y, w, h;
} atn_rect;

/* ---- colour bar ------------------------------------------------------------------- */

/* A vertical bar in `box` with tick values on its right, an optional label above; when
 * show_nonfinite, a swatch "NaN/Inf" below it. */
void atn_render_colorbar(cairo_t *cr, const atn_render_style *st, atn_colormap cm, double vmin, double vmax,
                         const char *label, bool show_nonfinite, atn_rect box);

/* ---- heatmap of one matrix (one head, a rollout, a difference map) ------------------ */

typedef struct atn_heatmap_spec {
    const float *values;             /* [rows][cols], row stride `stride` floats (0: cols) */
    int32_t rows, cols;
    size_t stride;
    const char *const *row_labels;   /* [rows] or NULL (query tokens) */
    const char *const *col_labels;   /* [cols] or NULL (key tokens) */
    const int32_t *row_mask;         /* [rows] 0 = padding (label dimmed) or NULL */
    const int32_t *col_mask;
    const char *title;               /* e.g. "demo · layer 3 · head 7"; NULL for none */
    const char *row_axis;            /* e.g. "query"; NULL for none */
    const char *col_axis;            /* e.g. "key" */
    const char *colorbar_label;      /* e.g. "weight"; NULL for none */
    const char *colorbar_note;       /* a second line under the label saying what the colours
                                        span ("fixed 0–1", "0 to this head's max"); NULL none */
    atn_colormap colormap;
    atn_value_range range;
    bool show_colorbar;              /* default true */
    bool show_labels;                /* default true */
    bool show_values;                /* print the number in each cell when cells are big enough */
    bool square_cells;               /* default true */
    double max_cell_aspect;          /* with square_cells: a cell may be up to this many times
                                        wider than tall when the width allows (fills a wide
                                        window); 0 or 1 (default) = square */
    int32_t highlight_row;           /* -1 none: outlines a query row */
    int32_t highlight_col;           /* -1 none */
    int32_t hover_row, hover_col;    /* -1 none: outlines one cell */
    cairo_surface_t *cells;          /* optional cached atn_render_matrix_surface() of values
                                        (same colormap and range); NULL: made on each draw */
    /* Zoom: the visible block of cells, rows view_row0 .. view_row0 + view_rows - 1 and the
     * same for columns; view_rows/view_cols 0 = every row/column (clamped into the matrix).
     * Labels, numbers and hit-testing follow the visible block; once zoomed (fewer cells
     * visible than the matrix has) an overview of the whole matrix with the visible block
     * outlined is drawn in the cells' bottom-right corner (show_overview, default true). */
    int32_t view_row0, view_col0, view_rows, view_cols;
    bool show_overview;
    bool reversed;                   /* the colour map upside down: the low end bright (a
                                        distance drawn so that bright = similar, as for a
                                        similarity); the colour bar is flipped to match, and a
                                        cached `cells` must have been made with vmin/vmax swapped */
    const char *legend;              /* a sentence under the title saying what a cell is; NULL none */
    double min_label_scale;          /* 0 (default): token labels that would be thinned to every
                                        k-th are drawn smaller only above normal text size, down to
                                        0.8 of the normal size; > 0: also down to this fraction of
                                        the normal size (RT_LABEL at font scale 1), at any text
                                        size, when that keeps every label (small multiples such as
                                        the Similarity view's pair) */
    const atn_render_style *style;   /* NULL: light default */
    bool causal;                     /* a causal model's head (GPT-2): the cells of keys after
                                        their query (col > row) are masked, drawn grey and
                                        hatched with no number, not as weight 0 */
    int32_t split;                   /* a sentence pair: its second sentence's first token (the
                                        first of type id 1); a line across the cells before that
                                        row and before that column marks where A ends and B
                                        begins.  0 (default) or out of range: none */
    const float *cell_mask;          /* [rows][cols] the run's additive mask (atn_capture's
                                        mask_add) or NULL: cells at the float's lowest value
                                        (below -1e30: a key the what-if lab's window, stride or
                                        hidden tokens hide, or padding) are drawn masked as
                                        causal ones are */
    const float *number_values;      /* [rows][cols], row stride number_stride (0: cols), or
                                        NULL (values): what the cells' numbers print (and their
                                        decimals are fitted to) when values are a colour scale's
                                        (log₁₀ or rank: issue 35) — the weights, so a log scale
                                        still prints ".0123", not "-1.9101"; the numbers' ink
                                        follows the colour under them (values) */
    size_t number_stride;
} atn_heatmap_spec;

void atn_heatmap_spec_init(atn_heatmap_spec *spec);

typedef struct atn_heatmap_layout {
    atn_rect title;
    atn_rect cells;            /* the visible cells: cell (i, j) is at cells.x + (j - view_col0)*cell_w,
                                  cells.y + (i - view_row0)*cell_h */
    double cell_w, cell_h;
    int32_t view_row0, view_col0, view_rows, view_cols;   /* the visible block, resolved */
    atn_rect overview;         /* the overview (minimap) when zoomed; all zero otherwise */
    int32_t value_decimals;    /* numbers in cells: at most this many decimals; 0 = no numbers */
    double value_w;            /* the widest number drawn (0 without numbers); fits in cell_w */
    atn_rect row_labels, col_labels;
    atn_rect colorbar;
    int32_t row_label_step;    /* every k-th label is drawn (long token lists thin their labels) */
    int32_t col_label_step;
    bool col_labels_rotated;
    double vmin, vmax;         /* the resolved colour range */
    double label_size;         /* the token labels' font size (points at font scale 1: 12 unless
                                  larger-than-normal text was shrunk to keep every label) */
    int32_t title_lines;       /* 0 without a title; 1; 2 when it is wider than the figure */
    bool title_cut;            /* the title is ellipsized even on two lines */
} atn_heatmap_layout;

void atn_render_heatmap_layout(const atn_heatmap_spec *spec, double width, double height, atn_heatmap_layout *out);
/* The number cell (row, col) prints in a figure laid out as L (atn_render_heatmap_layout of the
 * same spec), written to buf: number_values' (else values') entry in L->value_decimals
 * decimals.  FALSE (buf "") when the cell prints none: no numbers fit, the cell is masked, out
 * of the visible block, or too small a weight for the decimals. */
bool atn_render_heatmap_cell_text(const atn_heatmap_spec *spec, const atn_heatmap_layout *L, int32_t row, int32_t col,
                                  char *buf, size_t size);
/* How many heatmap layouts (label measuring included) this process has made, in any thread:
 * for tests that count a widget's layouts per hover or per draw. */
unsigned long atn_render_heatmap_layout_count(void);
void atn_render_heatmap(cairo_t *cr, const atn_heatmap_spec *spec, double width, double height);
/* The same drawn with the layout atn_render_heatmap_layout gave for this spec and size (a
 * widget that keeps it for hit-testing measures the labels once, not twice); NULL: made here. */
void atn_render_heatmap_laid_out(cairo_t *cr, const atn_heatmap_spec *spec, double width, double height,
                                 const atn_heatmap_layout *layout);
/* Only the labels of the hovered row and column (spec->hover_row/hover_col), at the edges
 * of the visible cells, bold on a background box, drawn even where the thinned labels skip
 * them.  atn_render_heatmap draws them too; the window draws them over its cached figure. */
void atn_render_heatmap_hover_labels(cairo_t *cr, const atn_heatmap_spec *spec, double width, double height,
                                     const atn_heatmap_layout *layout);   /* layout: the figure's, as
                                     atn_render_heatmap_layout gave it for this spec and size (so a
                                     hover costs two labels, not a layout of every label); NULL: made here */
/* Whether the thinned token label i (a row's when row, else a column's) is left out because
 * it lies within one label step of the selected (highlight_row/col) or hovered one, whose label
 * is drawn wherever it falls: so those never overlap another.  false when labels are not
 * thinned. */
bool atn_render_heatmap_label_hidden(const atn_heatmap_spec *spec, const atn_heatmap_layout *layout, int32_t i,
                                     bool row);
/* The number printed inside a cell with exactly `decimals` (1..4) decimals, the one format of
 * every cell of a figure (issue 40: ".376" beside ".4487" read as two precisions): no leading
 * zero (".3760", "-.2500"), trailing zeros kept ("1.0000", ".50"), values that round to zero
 * as "<.001" (">-.001" below zero; "0" only for exactly 0, a masked key), "NaN", "Inf". */
void atn_render_cell_number(char *buf, size_t size, double v, int decimals);
/* Pointer -> cell; false (row/col = -1) outside the matrix. */
bool atn_render_heatmap_cell_at(const atn_heatmap_spec *spec, double width, double height, double x, double y,
                                int32_t *row, int32_t *col);
/* A good default size for a file export (grows with the number of tokens). */
void atn_render_heatmap_natural_size(const atn_heatmap_spec *spec, double *width, double *height);

/* ---- one query: a row of a head as bars over the keys -------------------------------- */

/* The selected query row of a heatmap drawn as a bar chart: one bar per key, its height
 * the weight (the value axis runs over the same range as the heatmap's colours, so a bar
 * has the colour its cell has), the key labels that fit under the bars, and the keys with
 * the largest weights named above their bars whatever the length: readable at 512 keys. */
typedef struct atn_query_bars_spec {
    const float *values;             /* [n]: one row (the query's weights over the keys) */
    int32_t n;
    const char *const *labels;       /* [n] key tokens or NULL */
    const int32_t *mask;             /* [n] 0 = padding or NULL */
    const char *title;               /* NULL none */
    const char *value_axis;          /* e.g. "weight"; NULL none */
    const char *key_axis;            /* e.g. "key" */
    atn_colormap colormap;
    atn_value_range range;           /* as the heatmap's: automatic = 0..the row's matrix max */
    double vmin, vmax;               /* when range.automatic and vmax > vmin: this range (the
                                        whole head's, so bars and cells agree); else resolved */
    int32_t view_col0, view_cols;    /* zoom over the keys; view_cols 0 = all */
    int32_t hover_col;               /* -1 none: that bar outlined and its label drawn */
    int32_t top_labels;              /* the k largest bars are named (default 8) */
    const atn_render_style *style;
} atn_query_bars_spec;

typedef struct atn_query_bars_layout {
    atn_rect title;
    atn_rect plot;                   /* bar j (visible) spans plot.x + (j - view_col0)*bar_w, width bar_w,
                                        from the bottom plot.y + plot.h up (v - vmin)/(vmax - vmin)*plot.h */
    double bar_w;
    int32_t view_col0, view_cols;
    int32_t label_step;              /* every k-th key label under the bars */
    atn_rect labels;
    double vmin, vmax;
} atn_query_bars_layout;

void atn_query_bars_spec_init(atn_query_bars_spec *spec);
void atn_render_query_bars_layout(const atn_query_bars_spec *spec, double width, double height,
                                  atn_query_bars_layout *out);
void atn_render_query_bars(cairo_t *cr, const atn_query_bars_spec *spec, double width, double height);
/* Pointer -> key (the bar's column, anywhere over the plot's height); false outside. */
bool atn_render_query_bars_key_at(const atn_query_bars_spec *spec, double width, double height, double x, double y,
                                  int32_t *key);
void atn_render_query_bars_natural_size(const atn_query_bars_spec *spec, double *width, double *height);

/* ---- model view: all layers × heads as thumbnails -------------------------------- */

typedef struct atn_grid_spec {
    const float *attn;               /* [L][H][n][n], as atn_capture.attn, or NULL: */
    const atn_capture *cap;          /* with attn NULL, the capture whose heads are drawn, each
                                        read through atn_capture_head_read (heads on demand:
                                        made one at a time into one [n][n] scratch) */
    int32_t n_layers, n_heads, n;
    int32_t n_k;                     /* key columns of each head when they are not n (an
                                        encoder-decoder's cross-attention: attn [L][H][n][n_k],
                                        drawn stretched into square thumbnails; needs attn or
                                        stack); 0: n */
    const atn_stack *stack;          /* an encoder-decoder's decoder or cross stack of cap drawn
                                        with attn NULL: each head read through
                                        atn_stack_head_read into one [n][n_k] scratch; NULL */
    const char *title;
    const char *const *head_notes;   /* [L*H] short text under each thumbnail (pattern labels) or NULL */
    atn_colormap colormap;
    bool shared_range;               /* false (default): each thumbnail 0..its own max */
    int32_t selected_layer, selected_head;   /* -1 none */
    int32_t hover_layer, hover_head;         /* -1 none */
    cairo_surface_t *const *thumbs;  /* optional cached [L*H] atn_render_matrix_surface()s, each
                                        drawn over its whole thumbnail whatever its size (a
                                        reduced copy of a long input's heads) */
    const double *shared_vmin_vmax;  /* optional [2]: the shared range, already resolved over
                                        every head (else the figure reads all of attn) */
    const atn_render_style *style;
    bool causal;                     /* as atn_heatmap_spec's: masked cells grey (hatched when
                                        thumbnails are big enough) */
    const char *const *layer_labels; /* [L] the row labels, or NULL: "L0", "L1", ... (ALBERT's
                                        shared layers: "L2 ≡ L0") */
    int32_t kv_group;                /* grouped-query attention: query heads per K/V head (heads
                                        g kv_group.. share K/V head g), labelled "KV0", "KV1"...
                                        over a bracket above their columns; 0 or 1: none */
} atn_grid_spec;

void atn_grid_spec_init(atn_grid_spec *spec);
void atn_render_model_grid(cairo_t *cr, const atn_grid_spec *spec, double width, double height);
/* The thumbnail rectangle of (layer, head) in the figure. */
atn_rect atn_render_model_grid_cell_rect(const atn_grid_spec *spec, double width, double height, int32_t layer,
                                         int32_t head);
bool atn_render_model_grid_head_at(const atn_grid_spec *spec, double width, double height, double x, double y,
                                   int32_t *layer, int32_t *head);
void atn_render_model_grid_natural_size(const atn_grid_spec *spec, double *width, double *height);

/* ---- head-to-head similarity matrix ------------------------------------------------- */

typedef struct atn_similarity_spec {
    const atn_similarity *sim;       /* from atn_similarity_compute / the corpus accumulator */
    bool clustered;                  /* default true: rows/columns in sim->order */
    const char *title;               /* NULL: made from the metric and scope */
    atn_colormap colormap;           /* default viridis; Pearson defaults to rdbu when left at
                                        viridis and auto_diverging is set */
    bool auto_diverging;             /* default true */
    int32_t highlight_a, highlight_b;/* -1 none; head indices into sim (not display positions) */
    int32_t hover_a, hover_b;
    bool show_dendrogram;            /* default true when clustered: the merge tree above */
    const atn_render_style *style;
    /* [sim->count] the rows' and columns' names by index into sim (K/V groups: "KV1"); NULL:
       atn_similarity_label's (L3·H7); borrowed */
    const char *const *labels;
    const char *legend;              /* what a cell is (borrowed); NULL: the metric's sentence */
} atn_similarity_spec;

void atn_similarity_spec_init(atn_similarity_spec *spec);
void atn_render_similarity(cairo_t *cr, const atn_similarity_spec *spec, double width, double height);
/* Pointer -> the pair of heads (indices into sim->values, i.e. before reordering). */
bool atn_render_similarity_cell_at(const atn_similarity_spec *spec, double width, double height, double x,
                                   double y, int32_t *a, int32_t *b);
void atn_render_similarity_natural_size(const atn_similarity_spec *spec, double *width, double *height);
/* Where the figure puts its parts at width x height: the matrix's heatmap layout (its
 * rectangles in the figure's coordinates), the title and the legend sentence (what a cell is),
 * each cut or not; side: the legend in a column right of the matrix, as a wide, short
 * figure has it.  False when there is no similarity. */
typedef struct atn_similarity_layout {
    atn_heatmap_layout matrix;
    atn_rect title, legend;
    bool title_cut, legend_cut;
    bool side;
} atn_similarity_layout;
bool atn_render_similarity_layout(const atn_similarity_spec *spec, double width, double height,
                                  atn_similarity_layout *out);
/* atn_render_similarity_cell_at from the figure's layout (atn_render_similarity_layout gave it
 * for this spec and size): nothing laid out, so a widget that keeps the layout hit-tests a
 * hover for nothing. */
bool atn_render_similarity_cell_at_layout(const atn_similarity_spec *spec, const atn_similarity_layout *layout,
                                          double x, double y, int32_t *a, int32_t *b);

/* ---- head view: bertviz-style token lines ------------------------------------------ */

enum { ATN_HEADVIEW_MAX_HEADS = 16 };

typedef struct atn_headview_spec {
    const float *attn[ATN_HEADVIEW_MAX_HEADS];  /* each [n][n_k]; lines of several heads overlay */
    int32_t head_ids[ATN_HEADVIEW_MAX_HEADS];    /* picks each head's colour (bertviz palette) */
    int32_t n_shown;                             /* how many of attn[] are set */
    int32_t n;                       /* queries: the left column */
    const char *const *tokens;       /* [n] */
    const int32_t *mask;             /* [n] or NULL */
    /* Two sequences (cross-attention: the target's tokens on the left, the source's on the
       right, as bertviz draws it): n_k > 0 keys with their own labels and mask.  n_k 0 (the
       default): the keys are the queries (n, tokens, mask). */
    int32_t n_k;
    const char *const *key_tokens;   /* [n_k]; NULL: tokens (n_k == n only) */
    const int32_t *key_mask;         /* [n_k] or NULL: every key shown */
    const char *title;
    int32_t selected_query;          /* -1: every query's lines; i: only token i's */
    int32_t focus_key;               /* -1 (default); j: only the lines into key j (with
                                        selected_query -1); key j's label is highlighted */
    int32_t hover_token;             /* -1 none; a token under the pointer (either side; with
                                        n_k > 0 a query) */
    double min_weight;               /* lines lighter than this are skipped (default 0.01) */
    int32_t stride;                  /* a row of attn[] is this many floats (0: n): a span of
                                        a larger head, attn[] pointing at its first cell */
    int32_t first;                   /* the position of token 0 in the input (a span's first;
                                        0 default): labels carry positions from it */
    const atn_render_style *style;
} atn_headview_spec;

void atn_headview_spec_init(atn_headview_spec *spec);
void atn_render_headview(cairo_t *cr, const atn_headview_spec *spec, double width, double height);
/* side: 0 = left column (queries, token < n), 1 = right column (keys, token < n_k or n). */
bool atn_render_headview_token_at(const atn_headview_spec *spec, double width, double height, double x, double y,
                                  int *side, int32_t *token);
/* A file's size: a row a label line tall, the rows at most 8,000 px × text size (more tokens:
 * thinner rows, thinned labels). */
void atn_render_headview_natural_size(const atn_headview_spec *spec, double *width, double *height);
/* The token labels of a long input: every token gets a row however thin, so the whole input is
 * in view, and labels come every step-th token (step a round number: 1, 2, 5, 10, 20, ...)
 * with their positions ("200 the"); the selected query's, the hovered token's and the focused
 * key's are drawn wherever they fall, and the thinned ones within a step of them are left
 * out, so none overlap.  label_place: whether token i's label is drawn in a figure of
 * width x height, its row's centre (*y) and the step (either may be NULL).  label_shown: the
 * same rule for a given step; label_text: the label as drawn, in buf when it needs one. */
bool atn_render_headview_label_place(const atn_headview_spec *spec, double width, double height, int32_t i,
                                     double *y, int32_t *step);
bool atn_render_headview_label_shown(const atn_headview_spec *spec, int32_t step, int32_t i);
const char *atn_render_headview_label_text(const atn_headview_spec *spec, int32_t step, int32_t i, char *buf,
                                           size_t size);
/* The lines atn_render_headview draws for head k of the spec (query -> key pairs above
 * min_weight, filtered by selected_query / focus_key, masked tokens left out): their count,
 * and the first max of them in from[] / to[] (either may be NULL). */
int64_t atn_render_headview_lines(const atn_headview_spec *spec, int32_t k, int32_t *from, int32_t *to, int64_t max);
/* The colour of head h in the overlay palette (matplotlib's tab10, as bertviz uses). */
void atn_render_head_color(int32_t head, double rgb[3]);

/* ---- trace sheet: one head's arithmetic laid out as a worked solution -------------- */

typedef enum atn_trace_step {
    ATN_TRACE_STEP_QUERY = 0,   /* q_i */
    ATN_TRACE_STEP_KEYS,        /* k_j table */
    ATN_TRACE_STEP_SCORES,      /* s_j = q_i · k_j */
    ATN_TRACE_STEP_SCALE,       /* s_j / sqrt(d_k) */
    ATN_TRACE_STEP_MASK,        /* + mask */
    ATN_TRACE_STEP_SOFTMAX,     /* exp(s - max) / sum */
    ATN_TRACE_STEP_VALUES,      /* v_j table */
    ATN_TRACE_STEP_OUTPUT,      /* o = sum_j a_j v_j */
    ATN_TRACE_STEP_CONCAT,      /* all heads' outputs */
    ATN_TRACE_STEP_PROJECT,     /* concat W_O + b_O */
    ATN_TRACE_STEP_COUNT
} atn_trace_step;

/* "Query", "Keys", "Scores q·k", ... (English; the GUI translates its own labels). */
const char *atn_trace_step_title(atn_trace_step step);

typedef struct atn_trace_sheet_spec {
    const atn_trace *trace;
    const char *const *token_labels; /* [trace->n] the tokens as shown (atn_render_token_labels);
                                        NULL: the encoding's texts */
    const char *model_name;          /* for the heading; may be NULL */
    int32_t n_heads;                 /* for the heading and the concat step */
    int32_t highlight_step;          /* -1 none: that step's block gets the accent colour */
    int32_t max_rows;                /* token rows shown before eliding the middle (default 16) */
    int32_t max_cols;                /* vector entries shown before eliding (default 8) */
    int32_t top_k;                   /* above max_rows keys: the rows the Trace view's tables list
                                        (atn_trace_key_rows: the top_k keys by weight, the first
                                        and last ATN_TRACE_EDGE_DEFAULT, the query, the largest
                                        score; each run left out one "m others" row, Σ of its
                                        weights in the softmax), and the weighted sum's top_k
                                        contributions a_j·‖v_j‖ (atn_trace_top_contributions);
                                        <= 0: the first and last rows, as before (default
                                        ATN_TRACE_TOP_DEFAULT) */
    const atn_render_style *style;
} atn_trace_sheet_spec;

void atn_trace_sheet_spec_init(atn_trace_sheet_spec *spec);
/* The height the sheet needs at this width (it is a document: lay it out in a scrolled area). */
double atn_render_trace_sheet_height(const atn_trace_sheet_spec *spec, double width);
void atn_render_trace_sheet(cairo_t *cr, const atn_trace_sheet_spec *spec, double width, double height);
/* Where each step's block is (for scrolling to a step); all zero for steps not drawn. */
void atn_render_trace_sheet_step_rects(const atn_trace_sheet_spec *spec, double width,
                                       atn_rect rects[ATN_TRACE_STEP_COUNT]);
/* Pointer -> step, or -1. */
int atn_render_trace_sheet_step_at(const atn_trace_sheet_spec *spec, double width, double x, double y);
void atn_render_trace_sheet_natural_size(const atn_trace_sheet_spec *spec, double *width, double *height);
/* The numbers of every table the sheet draws at this width, as drawn: a table row a line,
 * cells tab-separated, a blank line after each table (for tests and a screen reader).
 * Returns a malloc'd string (free()); never NULL except when out of memory. */
char *atn_render_trace_sheet_text(const atn_trace_sheet_spec *spec, double width);

/* ---- output: PNG, SVG, PDF ---------------------------------------------------------- */

typedef enum atn_output_format {
    ATN_OUTPUT_PNG = 0,
    ATN_OUTPUT_SVG,
    ATN_OUTPUT_PDF,
} atn_output_format;

/* From a file name's extension (.png .svg .pdf, any case); false if none of them. */
bool atn_output_format_from_path(const char *path, atn_output_format *out);
const char *atn_output_format_ext(atn_output_format fmt);   /* "png" ... */
/* The file name of one head in an export of every head, the same for the command line
 * (`export … --all-heads`) and the window (Export Every Head): "<prefix>-L<layer>-H<head>.<ext>"
 * with the layer and head zero-padded to the width of the model's largest index (at least 2
 * digits), so that the names sort in layer/head order: "heatmap-L00-H02.png" for a model of
 * 4 layers × 16 heads, "heatmap-L003-H100.svg" for 120 layers × 1000.  ext without the dot;
 * NULL prefix or ext count as "".  Returns a malloc'ed string (caller frees), NULL when out
 * of memory. */
char *atn_render_head_file_name(const char *prefix, int32_t layer, int32_t head, int32_t n_layers, int32_t n_heads,
                                const char *ext);

/* Budgets that bound a figure's memory by what was asked for: a PNG of more than
 * ATN_RENDER_MAX_PIXELS pixels (4 bytes each while drawing) is refused with its size (a
 * 512-token heatmap at scale 2 is ~64 million); an SVG's heatmap cells are enlarged (against
 * viewers' smoothing) up to ATN_RENDER_MAX_SVG_CELL_PIXELS pixels in all, then embedded at
 * their own size. */
#define ATN_RENDER_MAX_PIXELS (128.0 * 1024 * 1024)
#define ATN_RENDER_MAX_SVG_CELL_PIXELS (16.0 * 1024 * 1024)

/* Draws a figure of width × height (points; PNG pixels = size × scale). */
typedef void (*atn_draw_fn)(cairo_t *cr, double width, double height, void *user_data);

/* Renders into memory: *data (malloc'ed, caller frees) and *len.  For the clipboard.
 * ATN_E_INVALID for a size that is not positive or a PNG over 32767 pixels a side or
 * ATN_RENDER_MAX_PIXELS in all (the message names the pixel size asked for). */
atn_status atn_render_to_memory(atn_output_format fmt, double width, double height, double scale,
                                atn_draw_fn draw, void *user_data, unsigned char **data, size_t *len,
                                atn_error *err);
/* Renders and writes path through a temporary file in the same folder and a rename, so an
 * interrupted export never replaces a good file with half of one. */
atn_status atn_render_to_file(const char *path, atn_output_format fmt, double width, double height, double scale,
                              atn_draw_fn draw, void *user_data, atn_error *err);

/* ---- the what-if lab: what attention costs at a length ------------------------------- */

/* One mask variant's cost (engine/include/analysis.h, atn_attention_cost) and its name. */
enum { ATN_COST_VARIANTS_MAX = 6 };
typedef struct atn_cost_row {
    char label[128];
    atn_attention_cost cost;
} atn_cost_row;

/* The variants compared at n tokens, into rows[ATN_COST_VARIANTS_MAX]: dense; causal; a
 * sliding window of window each side (window < 0: max(1, n / 8)); Longformer, that window
 * plus the global tokens (NULL / 0: token 0); strided with step strided (<= 0: round(sqrt
 * n), at least 2); and chosen (NULL: none) when it has a mask (causal, window, strided,
 * hidden keys) that is none of those (a mask limited to some layers, mask_layers, never
 * is).  Labels are English or, once the program set a translator, in its language.  Returns the number of rows, or -1 with err set
 * (atn_attention_cost_compute's errors). */
int32_t atn_cost_variants(int32_t n, int32_t n_layers, int32_t n_heads, int32_t d_head, int32_t batch,
                          int32_t window, const int32_t *global_tokens, int32_t n_global, int32_t strided,
                          const atn_interventions *chosen, atn_cost_row *rows, atn_error *err);

typedef struct atn_cost_chart_spec {
    const atn_cost_row *rows;          /* rows[0] is the dense one the others are drawn against */
    int32_t n_rows;
    const char *title;                 /* NULL: none */
    const atn_render_style *style;
} atn_cost_chart_spec;

/* A bar per variant: the cells each head computes (kept / n^2), with the count, the share
 * of dense and the attention FLOPs per layer; above them a line on the dense capture's
 * bytes (per head, per layer, per capture, per batch). */
void atn_render_cost_chart(cairo_t *cr, const atn_cost_chart_spec *spec, double width, double height);
void atn_render_cost_chart_natural_size(const atn_cost_chart_spec *spec, double *width, double *height);
/* "1.0 MiB", "4.5 GiB" (binary units), into buf. */
void atn_render_format_bytes(char *buf, size_t size, double bytes);

/* ---- the training lab's curves (train-curve.c) ---- */

typedef struct atn_train_curve_spec {
    const float *x;                  /* [n] each point's step (ignored with x_names) */
    const float *loss;               /* [n] drawn on a log scale; non-positive or NaN: a gap */
    const float *accuracy;           /* [n] shares 0..1 on the right axis; NULL: no accuracy */
    const float *loss_sd, *accuracy_sd;   /* [n] error bars (one standard deviation) with
                                        x_names; NULL: none */
    int32_t n;
    float x_max;                     /* the x axis ends here (the steps asked for); 0: the last x */
    const char *const *x_names;      /* [n] a sweep: one category per point, dots and bars;
                                        NULL: a curve over x */
    const char *x_label;             /* NULL: "step" */
    const char *title;               /* NULL: none */
    const char *empty_text;          /* said in the plot while n is 0; NULL: nothing */
    const atn_render_style *style;
} atn_train_curve_spec;

void atn_train_curve_spec_init(atn_train_curve_spec *spec);
/* The loss (left axis, powers of ten) and the accuracy (right axis, 0-100 %) in a
 * width x height box: a curve over the steps, at most one vertex per pixel column (the mean
 * of the points there), or with x_names a dot per value with its error bar.  Borrowed
 * arrays, read during the call only.  Too small a box for the text: as
 * atn_render_line_chart. */
void atn_render_train_curve(cairo_t *cr, const atn_train_curve_spec *spec, double width, double height);

/* ---- lines of several series (line-chart.c) ---- */

typedef struct atn_line_series {
    const char *name;        /* the legend's text (borrowed) */
    const float *x, *y;      /* [n]; a y that is NaN (or <= 0 on a log axis): a gap, no dot */
    int32_t n;
    bool dashed;
    bool own_color;          /* coloured as atn_render_head_color(color), not by its index */
    int32_t color;
    const float *err;        /* [n] or NULL: a bar from y - err to y + err at each point (one
                                standard deviation over seeds); on a log axis the bar's lower
                                end is cut at the axis where y - err <= 0 */
} atn_line_series;

typedef struct atn_line_chart_spec {
    const atn_line_series *series;   /* [n_series], series k coloured as atn_render_head_color(k)
                                        unless own_color */
    int32_t n_series;
    bool y_log;                      /* powers of ten */
    bool y_percent;                  /* ticks read "50 %" (y a share 0..1) */
    bool y_fixed;                    /* the y axis is y_min..y_max, not the data's range */
    float y_min, y_max;
    bool x_integer;                  /* ticks on whole numbers only (layers) */
    const char *x_label, *y_label, *title;   /* NULL: none */
    const char *empty_text;          /* said while n_series is 0; NULL: nothing */
    const atn_render_style *style;
} atn_line_chart_spec;

void atn_line_chart_spec_init(atn_line_chart_spec *spec);
/* Each series a line over one shared x axis (a dot per point for series of at most 50
 * points), a legend above; borrowed
 * arrays, read during the call only.  In a box too small for the plot beside its text at the
 * style's size, the text shrinks (x0.8 at a time, down to font_scale 0.5); smaller still,
 * nothing but the background is drawn. */
void atn_render_line_chart(cairo_t *cr, const atn_line_chart_spec *spec, double width, double height);

/* ---- token labels (token-label.c) ---- */

/* What every view and figure shows for a token whose vocabulary entry is text and whose
 * tokenizer says info (NULL: no tokenizer, e.g. a toy model; text as it is): pieces as users
 * know them.  A byte-level or SentencePiece word start ("\u0120the", "\u2581the", whose
 * surface is " the") shows as "␣the"; a byte-level piece that is only part of a UTF-8
 * character shows its bytes (\xNN); WordPiece's "##ing" and special tokens stay as they are.
 * malloc'd (the caller frees it); NULL only when out of memory. */
char *atn_render_token_label(const char *text, const atn_token_info *info);
/* atn_render_token_label for each token of enc with model's tokenizer (NULL model: the texts
 * as they are): a NULL-terminated array of enc->n malloc'd strings, freed with
 * atn_render_token_labels_free; NULL for a NULL enc or when out of memory. */
char **atn_render_token_labels(const atn_model *model, const atn_encoding *enc);
/* A sentence pair's boundary: the first token of the second sentence (the first of type id 1,
 * else of segment 1), for atn_heatmap_spec.split; 0 for one sentence or a NULL enc. */
int32_t atn_render_pair_split(const atn_encoding *enc);
/* atn_render_token_label for a guess of model (atn_predict_position, atn_predict_next):
 * "␣the" for GPT-2's "\u0120the".  malloc'd; NULL for a NULL guess or out of memory. */
char *atn_render_prediction_label(const atn_model *model, const atn_prediction *guess);
void atn_render_token_labels_free(char **labels);   /* NULL: nothing */


#ifdef __cplusplus
}
#endif
#endif

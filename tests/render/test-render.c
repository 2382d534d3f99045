/* ui/render: colour maps against matplotlib's published values, PNG output that decodes at
 * the requested size with the largest weight in the map's top colour, NaN in its own
 * colour, hit-testing that agrees with the drawing, SVG/PDF output that other tools read,
 * CJK labels with no missing glyphs, and atomic writes. */
#include "check.h"
#include "render.h"
#include "colour-scale.h"
#include "word-merge.h"

#include <pango/pangocairo.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint32_t pixel(cairo_surface_t *s, double x, double y) {
    int ix = (int)x, iy = (int)y;
    const uint32_t *p = (const uint32_t *)(void *)(cairo_image_surface_get_data(s) +
                                                   (size_t)iy * cairo_image_surface_get_stride(s));
    return p[ix] & 0xffffff;
}

static void test_colormaps(void) {
    double rgb[3];
    /* matplotlib: viridis(0) = #440154, viridis(1) = #fde725; magma(1) = #fcfdbf; cividis(0) = #00224e */
    atn_colormap_rgb(ATN_CMAP_VIRIDIS, 0.0, rgb);
    CHECK(atn_colormap_table(ATN_CMAP_VIRIDIS)[0] == 0x440154);
    CHECK_NEAR(rgb[0], 0x44 / 255.0, 1e-12);
    CHECK(atn_colormap_table(ATN_CMAP_VIRIDIS)[255] == 0xfde725);
    CHECK(atn_colormap_table(ATN_CMAP_MAGMA)[255] == 0xfcfdbf);
    CHECK(atn_colormap_table(ATN_CMAP_CIVIDIS)[0] == 0x00224e);
    CHECK(atn_colormap_table(ATN_CMAP_GREYS)[0] == 0xffffff && atn_colormap_table(ATN_CMAP_GREYS)[255] == 0x000000);
    /* RdBu_r: dark blue low, near white middle, dark red high */
    uint32_t lo = atn_colormap_table(ATN_CMAP_RDBU)[0], mid = atn_colormap_table(ATN_CMAP_RDBU)[128],
             hi = atn_colormap_table(ATN_CMAP_RDBU)[255];
    CHECK((lo & 0xff) > ((lo >> 16) & 0xff));
    CHECK(((hi >> 16) & 0xff) > (hi & 0xff));
    CHECK(((mid >> 16) & 0xff) > 0xe0 && (mid & 0xff) > 0xe0);
    /* index = floor(t * 256) like matplotlib: 0.5 -> entry 128 */
    atn_colormap_rgb(ATN_CMAP_VIRIDIS, 0.5, rgb);
    uint32_t c128 = atn_colormap_table(ATN_CMAP_VIRIDIS)[128];
    CHECK_NEAR(rgb[1], ((c128 >> 8) & 0xff) / 255.0, 1e-12);
    atn_colormap_rgb(ATN_CMAP_VIRIDIS, NAN, rgb);
    CHECK(rgb[0] == 1.0 && rgb[1] == 0.0 && rgb[2] == 1.0);
    atn_colormap cm;
    CHECK(atn_colormap_from_name("Magma", &cm) && cm == ATN_CMAP_MAGMA);
    CHECK(atn_colormap_from_name("gray", &cm) && cm == ATN_CMAP_GREYS);
    CHECK(!atn_colormap_from_name("jet", &cm));
    int k = 0;
    for (const char *const *n = atn_colormap_names(); *n; n++)
        k++;
    CHECK(k == ATN_CMAP_COUNT);

    /* pixels: auto range 0..max, the max in the top colour, NaN magenta */
    float m[4] = {0.0f, 0.5f, 1.0f, NAN};
    uint32_t px[4];
    double vmin, vmax;
    atn_value_range r = {.automatic = true};
    atn_value_range_resolve(&r, m, 2, 2, 0, ATN_CMAP_VIRIDIS, &vmin, &vmax);
    CHECK(vmin == 0.0 && vmax == 1.0);
    CHECK(atn_render_matrix_pixels(m, 2, 2, 0, ATN_CMAP_VIRIDIS, vmin, vmax, (uint8_t *)px, 8));
    CHECK(px[0] == (0xff000000u | 0x440154));
    CHECK(px[2] == (0xff000000u | 0xfde725));
    CHECK(px[3] == 0xffff00ffu);
    /* diverging maps get a symmetric range */
    float d[2] = {-0.2f, 0.5f};
    atn_value_range_resolve(&r, d, 1, 2, 0, ATN_CMAP_RDBU, &vmin, &vmax);
    CHECK_NEAR(vmin, -0.5, 1e-7);
    CHECK_NEAR(vmax, 0.5, 1e-7);
}

/* ---- a heatmap in a PNG ------------------------------------------------------------------ */

static const char *const tokens8[8] = {"[CLS]", "\xe6\x88\x91", "\xe7\x88\xb1", "\xe4\xbd\xa0",
                                       "attention", ",", "##ing", "[SEP]"};

static void fill(float *a, int n) {
    for (int i = 0; i < n * n; i++)
        a[i] = 0.02f * (float)((i * 7) % 13);
    a[2 * n + 5] = 0.9f; /* the largest weight */
    a[6 * n + 1] = 0.0f;
}

typedef struct ctx {
    atn_heatmap_spec *hm;
} ctx;

static void draw(cairo_t *cr, double w, double h, void *u) { atn_render_heatmap(cr, ((ctx *)u)->hm, w, h); }

static cairo_status_t read_mem(void *closure, unsigned char *data, unsigned int len) {
    unsigned char **p = closure;
    memcpy(data, *p, len);
    *p += len;
    return CAIRO_STATUS_SUCCESS;
}

static void test_heatmap_png(void) {
    float a[64];
    fill(a, 8);
    atn_heatmap_spec hm;
    atn_heatmap_spec_init(&hm);
    hm.values = a;
    hm.rows = hm.cols = 8;
    hm.row_labels = hm.col_labels = tokens8;
    hm.title = "test \xc2\xb7 layer 0 \xc2\xb7 head 0";
    hm.show_values = false;
    ctx c = {&hm};
    unsigned char *data;
    size_t len;
    CHECK(atn_render_to_memory(ATN_OUTPUT_PNG, 400, 300, 2.0, draw, &c, &data, &len, NULL) == ATN_OK);
    unsigned char *p = data;
    cairo_surface_t *img = cairo_image_surface_create_from_png_stream(read_mem, &p);
    CHECK(cairo_surface_status(img) == CAIRO_STATUS_SUCCESS);
    CHECK(cairo_image_surface_get_width(img) == 800 && cairo_image_surface_get_height(img) == 600);
    free(data);

    /* the cell of the largest weight has viridis' top colour; a zero cell its bottom one */
    atn_heatmap_layout L;
    atn_render_heatmap_layout(&hm, 400, 300, &L);
    CHECK(L.vmin == 0.0 && fabs(L.vmax - 0.9) < 1e-7);
    CHECK(L.cell_w > 5 && L.cell_w == L.cell_h);
    double cx = (L.cells.x + (5 + 0.5) * L.cell_w) * 2, cy = (L.cells.y + (2 + 0.5) * L.cell_h) * 2;
    CHECK_MSG(pixel(img, cx, cy) == 0xfde725, "top cell is %06x", pixel(img, cx, cy));
    cx = (L.cells.x + 1.5 * L.cell_w) * 2, cy = (L.cells.y + 6.5 * L.cell_h) * 2;
    CHECK_MSG(pixel(img, cx, cy) == 0x440154, "zero cell is %06x", pixel(img, cx, cy));
    /* the background outside the figure's cells is the style's (white) */
    CHECK(pixel(img, 1, 1) == 0xffffff);
    cairo_surface_destroy(img);

    /* hit-testing uses the drawn geometry */
    int32_t row, col;
    CHECK(atn_render_heatmap_cell_at(&hm, 400, 300, L.cells.x + 5.5 * L.cell_w, L.cells.y + 2.5 * L.cell_h, &row,
                                     &col));
    CHECK(row == 2 && col == 5);
    CHECK(atn_render_heatmap_cell_at(&hm, 400, 300, L.cells.x + 0.01, L.cells.y + L.cells.h - 0.01, &row, &col));
    CHECK(row == 7 && col == 0);
    CHECK(!atn_render_heatmap_cell_at(&hm, 400, 300, L.cells.x - 1, L.cells.y + 1, &row, &col));
    CHECK(row == -1 && col == -1);
    CHECK(!atn_render_heatmap_cell_at(&hm, 400, 300, 2, 2, &row, &col));

    /* a NaN cell is drawn magenta and the colour bar gets a legend */
    a[3 * 8 + 3] = NAN;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 400, 300);
    cairo_t *cr = cairo_create(s);
    atn_render_heatmap(cr, &hm, 400, 300);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    atn_render_heatmap_layout(&hm, 400, 300, &L);
    CHECK(pixel(s, L.cells.x + 3.5 * L.cell_w, L.cells.y + 3.5 * L.cell_h) == 0xff00ff);
    cairo_surface_destroy(s);

    /* drawn with the layout already measured (the window's heatmap keeps one): the same pixels
       as a drawing that lays the figure out itself, numbers, labels, title and bar included */
    a[3 * 8 + 3] = 0.25f;
    hm.show_values = true;
    hm.highlight_row = 2;
    cairo_surface_t *own = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 800, 600);
    cairo_surface_t *given = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 800, 600);
    cr = cairo_create(own);
    atn_render_heatmap(cr, &hm, 800, 600);
    cairo_destroy(cr);
    atn_render_heatmap_layout(&hm, 800, 600, &L);
    cr = cairo_create(given);
    atn_render_heatmap_laid_out(cr, &hm, 800, 600, &L);
    cairo_destroy(cr);
    cairo_surface_flush(own);
    cairo_surface_flush(given);
    int stride = cairo_image_surface_get_stride(own), differ = 0;
    for (int y = 0; y < 600; y++)
        differ += memcmp(cairo_image_surface_get_data(own) + (size_t)y * stride,
                         cairo_image_surface_get_data(given) + (size_t)y * stride, 800 * 4) != 0;
    CHECK_MSG(differ == 0, "%d rows differ between the heatmap laid out by itself and with its layout", differ);
    CHECK(L.value_decimals > 0);   /* the numbers were drawn in both */
    cairo_surface_destroy(own);
    cairo_surface_destroy(given);
    hm.show_values = false;
    hm.highlight_row = -1;

    /* 512 tokens: labels are thinned, not overlapped */
    float *big = calloc(512 * 512, sizeof *big);
    for (int i = 0; i < 512; i++)
        big[i * 512 + i] = 1;
    hm.values = big;
    hm.rows = hm.cols = 512;
    hm.row_labels = hm.col_labels = NULL;
    atn_render_heatmap_layout(&hm, 900, 900, &L);
    CHECK(L.row_label_step > 1 && L.row_label_step * L.cell_h >= 10);
    CHECK(L.col_labels_rotated && L.col_label_step > 1);
    free(big);
}


/* ---- long inputs: zoom, numbers that fit, the fixed colour scale, one query's bars ------------ */

static uint32_t rgb_hex(const double c[3]) {
    return ((uint32_t)(c[0] * 255 + 0.5) << 16) | ((uint32_t)(c[1] * 255 + 0.5) << 8) | (uint32_t)(c[2] * 255 + 0.5);
}

static void test_heatmap_zoom(void) {
    enum { N = 512 };
    float *a = calloc((size_t)N * N, sizeof *a);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            a[(size_t)i * N + j] = (float)((i * 31 + j * 17) % 97) / 97.0f;
    atn_heatmap_spec hm;
    atn_heatmap_spec_init(&hm);
    hm.values = a;
    hm.rows = hm.cols = N;
    atn_heatmap_layout L;
    atn_render_heatmap_layout(&hm, 1000, 1000, &L);
    CHECK(L.view_row0 == 0 && L.view_col0 == 0 && L.view_rows == N && L.view_cols == N);
    CHECK(L.cell_w < 2 && L.overview.w == 0);   /* under 2 px a cell: no zoom, no overview */
    CHECK(L.value_decimals == 0);                /* no numbers in such cells */
    /* zoomed to 20 x 30 cells from (100, 200): the cells grow, the overview appears */
    hm.view_row0 = 100;
    hm.view_col0 = 200;
    hm.view_rows = 20;
    hm.view_cols = 30;
    atn_render_heatmap_layout(&hm, 1000, 1000, &L);
    CHECK(L.view_row0 == 100 && L.view_col0 == 200 && L.view_rows == 20 && L.view_cols == 30);
    CHECK(L.cell_w > 20 && L.cells.w == L.cell_w * 30);
    CHECK(L.overview.w > 24 && L.overview.x + L.overview.w <= L.cells.x + L.cells.w);
    int32_t row, col;
    CHECK(atn_render_heatmap_cell_at(&hm, 1000, 1000, L.cells.x + 0.5 * L.cell_w, L.cells.y + 0.5 * L.cell_h, &row,
                                     &col));
    CHECK_MSG(row == 100 && col == 200, "the first visible cell hit-tests as (%d, %d)", row, col);
    CHECK(atn_render_heatmap_cell_at(&hm, 1000, 1000, L.cells.x + 29.5 * L.cell_w, L.cells.y + 19.5 * L.cell_h, &row,
                                     &col));
    CHECK(row == 119 && col == 229);
    /* a block past the end is clamped into the matrix */
    hm.view_row0 = 600;
    hm.view_col0 = -5;
    atn_render_heatmap_layout(&hm, 1000, 1000, &L);
    CHECK(L.view_row0 == N - 20 && L.view_col0 == 0);
    /* the drawn cells are the block's: cell (row0, col0)'s colour at the top-left */
    hm.view_row0 = 100;
    hm.view_col0 = 200;
    hm.show_values = false;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1000, 1000);
    cairo_t *cr = cairo_create(s);
    atn_render_heatmap(cr, &hm, 1000, 1000);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    atn_render_heatmap_layout(&hm, 1000, 1000, &L);
    for (int k = 0; k < 3; k++) {
        int i = 100 + k * 7, j = 200 + k * 11;
        double rgb[3];
        atn_colormap_rgb(ATN_CMAP_VIRIDIS, (a[(size_t)i * N + j] - L.vmin) / (L.vmax - L.vmin), rgb);
        uint32_t got = pixel(s, L.cells.x + (j - 200 + 0.5) * L.cell_w, L.cells.y + (i - 100 + 0.5) * L.cell_h);
        CHECK_MSG(got == rgb_hex(rgb), "cell (%d, %d) drawn %06x, want %06x", i, j, got, rgb_hex(rgb));
    }
    cairo_surface_destroy(s);
    free(a);
}

static void test_cell_numbers(void) {
    struct { double v; int d; const char *want; } cases[] = {
        {0.3760, 4, ".3760"}, {0.4487, 4, ".4487"}, {0.0003, 4, ".0003"}, {0.00004, 4, "<.0001"},
        {2.754e-05, 3, "<.001"}, {1.0, 4, "1.0000"}, {0.0, 4, "0"}, {0.5, 2, ".50"}, {-0.25, 4, "-.2500"},
        {-0.00001, 3, ">-.001"}, {12.5, 4, "12.5000"}, {0.99996, 4, "1.0000"}, {0.125, 1, ".1"}, {0.9, 1, ".9"},
        {1.0, 1, "1.0"},
    };
    char buf[32];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        atn_render_cell_number(buf, sizeof buf, cases[k].v, cases[k].d);
        CHECK_MSG(!strcmp(buf, cases[k].want), "%g at %d decimals: \"%s\", want \"%s\"", cases[k].v, cases[k].d, buf,
                  cases[k].want);
    }
    /* the fits check: numbers only when the widest one fits in the cell, never 2.754e-05 */
    float a[16 * 16];
    for (int i = 0; i < 256; i++)
        a[i] = i % 3 == 0 ? 2.754e-05f : (float)(i % 10) / 9.0f * 0.37f;
    atn_heatmap_spec hm;
    atn_heatmap_spec_init(&hm);
    hm.values = a;
    hm.rows = hm.cols = 16;
    hm.show_labels = false;
    hm.show_colorbar = false;
    int prev = 5, seen_some = 0, seen_none = 0;
    for (double side = 1000; side >= 60; side *= 0.85) {
        atn_heatmap_layout L;
        atn_render_heatmap_layout(&hm, side, side, &L);
        CHECK(L.value_decimals >= 0 && L.value_decimals <= 4);
        CHECK_MSG(L.value_decimals <= prev, "smaller cells got more decimals (%d after %d)", L.value_decimals, prev);
        prev = L.value_decimals;
        if (L.value_decimals > 0) {
            seen_some++;
            CHECK_MSG(L.value_w > 0 && L.value_w < L.cell_w, "numbers %.1f wide in cells %.1f wide", L.value_w,
                      L.cell_w);
        } else {
            seen_none++;
        }
    }
    CHECK(seen_some > 0 && seen_none > 0);
    /* measured independently: at the size where 4 decimals were chosen, "<.0001" fits */
    atn_heatmap_layout L;
    atn_render_heatmap_layout(&hm, 1000, 1000, &L);
    CHECK(L.value_decimals == 4);
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 10, 10);
    cairo_t *cr = cairo_create(s);
    PangoLayout *pl = pango_cairo_create_layout(cr);
    PangoFontDescription *fd = pango_font_description_from_string("Sans 10");
    pango_layout_set_font_description(pl, fd);
    pango_layout_set_text(pl, "<.0001", -1);
    int pw, ph;
    pango_layout_get_size(pl, &pw, &ph);
    CHECK(pw / (double)PANGO_SCALE < L.cell_w);
    pango_font_description_free(fd);
    g_object_unref(pl);
    cairo_destroy(cr);
    cairo_surface_destroy(s);
    hm.show_values = false;
    atn_render_heatmap_layout(&hm, 1000, 1000, &L);
    CHECK(L.value_decimals == 0);
}

/* A uniform 1/3 head on the fixed 0..1 scale is drawn in the colour the colour bar has at 1/3
 * (on its own 0..max scale it would be the top colour). */
static void test_fixed_scale(void) {
    enum { N = 3 };
    float a[N * N];
    for (int i = 0; i < N * N; i++)
        a[i] = 1.0f / 3.0f;
    atn_heatmap_spec hm;
    atn_heatmap_spec_init(&hm);
    hm.values = a;
    hm.rows = hm.cols = N;
    hm.show_values = false;
    hm.range.automatic = false;
    hm.range.vmin = 0;
    hm.range.vmax = 1;
    hm.colorbar_label = "weight";
    hm.colorbar_note = "fixed 0\xe2\x80\x93" "1";
    for (int fixed = 1; fixed >= 0; fixed--) {
        hm.range.automatic = !fixed;
        cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 500, 400);
        cairo_t *cr = cairo_create(s);
        atn_render_heatmap(cr, &hm, 500, 400);
        cairo_destroy(cr);
        cairo_surface_flush(s);
        atn_heatmap_layout L;
        atn_render_heatmap_layout(&hm, 500, 400, &L);
        uint32_t cell = pixel(s, L.cells.x + 1.5 * L.cell_w, L.cells.y + 1.5 * L.cell_h);
        /* the bar: the column 7 px into the colour bar box, the rows drawn in the map's colours */
        const uint32_t *tab = atn_colormap_table(ATN_CMAP_VIRIDIS);
        double bx = L.colorbar.x + 7;
        int top = -1, bottom = -1, same0 = -1, same1 = -1;
        for (int y = (int)L.colorbar.y; y < (int)(L.colorbar.y + L.colorbar.h); y++) {
            uint32_t p = pixel(s, bx, y);
            bool in_map = false;
            for (int k = 0; k < 256; k++)
                in_map |= tab[k] == p;
            if (in_map && top < 0)
                top = y;
            if (in_map)
                bottom = y;
            if (p == cell && same0 < 0)
                same0 = y;
            if (p == cell)
                same1 = y;
        }
        CHECK_MSG(top > 0 && bottom > top + 50, "colour bar rows %d..%d", top, bottom);
        double third = bottom + 1 - (bottom + 1 - top) / 3.0;   /* where the bar shows 1/3 */
        double rgb[3];
        atn_colormap_rgb(ATN_CMAP_VIRIDIS, 1.0 / 3.0, rgb);
        if (fixed) {
            CHECK_MSG(same0 > 0 && fabs((same0 + same1 + 1) / 2.0 - third) <= 1.5,
                      "the 1/3 cell's colour %06x is at rows %d..%d of the bar, 1/3 is at %.1f", cell, same0, same1,
                      third);
            CHECK(cell == rgb_hex(rgb));
        } else {
            CHECK_MSG(cell == 0xfde725, "on its own scale a uniform head is the top colour, not %06x", cell);
        }
        cairo_surface_destroy(s);
    }
}

static void test_query_bars(void) {
    enum { N = 512 };
    float row[N];
    for (int j = 0; j < N; j++)
        row[j] = 0.5f / N;
    row[7] = 0.3f;
    row[400] = 0.2f;
    atn_query_bars_spec qb;
    atn_query_bars_spec_init(&qb);
    qb.values = row;
    qb.n = N;
    qb.range.automatic = false;
    qb.range.vmin = 0;
    qb.range.vmax = 1;
    atn_query_bars_layout B;
    atn_render_query_bars_layout(&qb, 1200, 500, &B);
    CHECK(B.vmin == 0 && B.vmax == 1 && B.view_cols == N && B.label_step > 1);
    CHECK(fabs(B.bar_w * N - B.plot.w) < 1e-6);
    /* the bar of key 7 is drawn 0.3 of the plot high, in the colour of 0.3 */
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1200, 500);
    cairo_t *cr = cairo_create(s);
    qb.view_col0 = 0;
    qb.view_cols = 32;   /* zoomed to the first 32 keys */
    atn_render_query_bars(cr, &qb, 1200, 500);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    atn_render_query_bars_layout(&qb, 1200, 500, &B);
    CHECK(B.view_cols == 32 && B.label_step == 1);
    double xc = B.plot.x + 7.5 * B.bar_w, base = B.plot.y + B.plot.h;
    double rgb[3];
    atn_colormap_rgb(ATN_CMAP_VIRIDIS, 0.3, rgb);
    CHECK(pixel(s, xc, base - 0.29 * B.plot.h) == rgb_hex(rgb));
    CHECK(pixel(s, xc, base - 0.31 * B.plot.h) != rgb_hex(rgb));
    int32_t key;
    CHECK(atn_render_query_bars_key_at(&qb, 1200, 500, xc, base - 1, &key) && key == 7);
    cairo_surface_destroy(s);
}

/* Similarity colours mean the same for every metric: identical heads (JS distance 0, cosine
 * 1) are the bright end, the least alike the dark end; the colour bar is flipped for JS. */
static void test_similarity_direction(void) {
    int32_t layer_of[2] = {0, 0}, head_of[2] = {0, 1};
    for (int m = 0; m < 2; m++) {
        double js[4] = {0, 0.6, 0.6, 0}, cos[4] = {1, 0.2, 0.2, 1};
        atn_similarity sim;
        memset(&sim, 0, sizeof sim);
        sim.metric = m == 0 ? ATN_METRIC_JS : ATN_METRIC_COSINE;
        sim.scope = ATN_SCOPE_LAYER;
        sim.count = 2;
        sim.layer_of = layer_of;
        sim.head_of = head_of;
        sim.values = m == 0 ? js : cos;
        sim.n_sentences = 1;
        atn_similarity_spec sp;
        atn_similarity_spec_init(&sp);
        sp.sim = &sim;
        sp.clustered = false;
        cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 500, 500);
        cairo_t *cr = cairo_create(s);
        atn_render_similarity(cr, &sp, 500, 500);
        cairo_destroy(cr);
        cairo_surface_flush(s);
        /* find the diagonal and off-diagonal cells by hit-testing a grid of points */
        uint32_t diag = 0, off = 0;
        for (int y = 0; y < 500 && !(diag && off); y += 20)
            for (int x = 0; x < 500 && !(diag && off); x += 20) {
                int32_t a, b;
                if (!atn_render_similarity_cell_at(&sp, 500, 500, x, y, &a, &b))
                    continue;
                int32_t a2, b2;   /* well inside the cell: its neighbours hit the same cell */
                if (!atn_render_similarity_cell_at(&sp, 500, 500, x + 6, y + 6, &a2, &b2) || a2 != a || b2 != b ||
                    !atn_render_similarity_cell_at(&sp, 500, 500, x - 6, y - 6, &a2, &b2) || a2 != a || b2 != b)
                    continue;
                if (a == b && !diag)
                    diag = pixel(s, x, y);
                if (a != b && !off)
                    off = pixel(s, x, y);
            }
        CHECK_MSG(diag == 0xfde725, "%s: identical heads drawn %06x, not the bright end", m ? "cosine" : "js", diag);
        /* JS: 0.6 is the top of its 0..0.6 range, drawn dark; cosine 0.2 on 0..1, near the dark end */
        double rgb[3];
        atn_colormap_rgb(ATN_CMAP_VIRIDIS, m == 0 ? 0.0 : 0.2, rgb);
        CHECK_MSG(off == rgb_hex(rgb), "%s: the least alike drawn %06x, want %06x", m ? "cosine" : "js", off,
                  rgb_hex(rgb));
        cairo_surface_destroy(s);
    }
}

/* ---- the other figures: geometry and hit-testing ---------------------------------------------- */

static void test_grid_and_headview(void) {
    enum { L = 3, H = 4, N = 5 };
    static float attn[L * H * N * N];
    for (int i = 0; i < L * H * N * N; i++)
        attn[i] = 1.0f / N;
    atn_grid_spec g;
    atn_grid_spec_init(&g);
    g.attn = attn;
    g.n_layers = L;
    g.n_heads = H;
    g.n = N;
    g.title = "grid";
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            atn_rect r = atn_render_model_grid_cell_rect(&g, 600, 450, l, h);
            int32_t ll, hh;
            CHECK(r.w > 10 && r.w == r.h);
            CHECK(atn_render_model_grid_head_at(&g, 600, 450, r.x + r.w / 2, r.y + r.h / 2, &ll, &hh));
            CHECK(ll == l && hh == h);
        }
    int32_t ll, hh;
    CHECK(!atn_render_model_grid_head_at(&g, 600, 450, 1, 1, &ll, &hh) && ll == -1);
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 600, 450);
    cairo_t *cr = cairo_create(s);
    atn_render_model_grid(cr, &g, 600, 450);
    CHECK(cairo_status(cr) == CAIRO_STATUS_SUCCESS);
    cairo_destroy(cr);
    /* a uniform head is constant: with its own range 0..max every cell is the top colour */
    cairo_surface_flush(s);
    atn_rect r = atn_render_model_grid_cell_rect(&g, 600, 450, 1, 2);
    CHECK(pixel(s, r.x + r.w / 2, r.y + r.h / 2) == 0xfde725);
    cairo_surface_destroy(s);

    /* grouped-query attention: heads 0-1 and 2-3 share K/V heads 0 and 1; the "KVg" row and
       its bracket sit above the head labels (the thumbnails move down for them, hit-testing
       follows), and the bracket crosses the gap between heads 0 and 1, where nothing is
       drawn without groups */
    g.title = NULL;
    atn_rect plain = atn_render_model_grid_cell_rect(&g, 600, 450, 0, 0);
    g.kv_group = 2;
    atn_rect grp = atn_render_model_grid_cell_rect(&g, 600, 450, 0, 0);
    CHECK_MSG(grp.y > plain.y, "K/V row: cells at %g, %g without groups", grp.y, plain.y);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            atn_rect c = atn_render_model_grid_cell_rect(&g, 600, 450, l, h);
            CHECK(atn_render_model_grid_head_at(&g, 600, 450, c.x + c.w / 2, c.y + c.h / 2, &ll, &hh) && ll == l &&
                  hh == h);
        }
    int lines[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        g.kv_group = k ? 2 : 0;
        atn_rect c0 = atn_render_model_grid_cell_rect(&g, 600, 450, 0, 0);
        atn_rect c1 = atn_render_model_grid_cell_rect(&g, 600, 450, 0, 1);
        cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 600, 450);
        cairo_t *c2 = cairo_create(img);
        atn_render_model_grid(c2, &g, 600, 450);
        cairo_destroy(c2);
        cairo_surface_flush(img);
        double gx = (c0.x + c0.w + c1.x) / 2;
        uint32_t bgc = pixel(img, 1, 1);
        for (int y = 2; y < (int)c0.y - 1; y++)
            lines[k] += pixel(img, gx, y) != bgc;
        cairo_surface_destroy(img);
    }
    CHECK_MSG(lines[0] == 0 && lines[1] > 0, "the K/V bracket: %d pixels without groups, %d with", lines[0], lines[1]);
    g.kv_group = 0;

    atn_headview_spec hv;
    atn_headview_spec_init(&hv);
    hv.attn[0] = attn;
    hv.n_shown = 1;
    hv.n = N;
    static const char *const toks[N] = {"[CLS]", "a", "b", "c", "[SEP]"};
    hv.tokens = toks;
    int side;
    int32_t tok;
    bool found[2][N] = {{0}};
    for (double y = 0; y < 300; y += 2)
        for (double x = 0; x < 400; x += 16)
            if (atn_render_headview_token_at(&hv, 400, 300, x, y, &side, &tok))
                found[side][tok] = true;
    for (int i = 0; i < N; i++)
        CHECK(found[0][i] && found[1][i]);
    double rgb[3];
    atn_render_head_color(0, rgb);
    CHECK_NEAR(rgb[0], 0x1f / 255.0, 1e-12);

    /* cross-attention: 2 target tokens on the left, 5 source tokens on the right (the last
       masked), rows of weights set by hand: the lines are (i, j) with a[i][j] > 0.01 in the
       [2][5] layout, the key column has 5 labels and the query column 2 */
    static const float cross[2 * 5] = {0.5f, 0.005f, 0.2f, 0.0f, 0.295f,   /* target 0 */
                                       0.0f, 0.1f, 0.0f, 0.7f, 0.2f};      /* target 1 */
    static const char *const tgt[2] = {"<s>", "Das"};
    static const int32_t src_mask[5] = {1, 1, 1, 1, 0};
    atn_headview_spec cv;
    atn_headview_spec_init(&cv);
    cv.attn[0] = cross;
    cv.n_shown = 1;
    cv.n = 2;
    cv.tokens = tgt;
    cv.n_k = 5;
    cv.key_tokens = toks;
    cv.key_mask = src_mask;
    int32_t from[8], to[8];
    int64_t nl = atn_render_headview_lines(&cv, 0, from, to, 8);
    CHECK_MSG(nl == 4, "cross lines: %lld, want 4 (0->0, 0->2, 1->1, 1->3)", (long long)nl);
    CHECK(from[0] == 0 && to[0] == 0 && from[1] == 0 && to[1] == 2 && from[2] == 1 && to[2] == 1 && from[3] == 1 &&
          to[3] == 3);
    cv.selected_query = 1;   /* target 1's lines only */
    CHECK(atn_render_headview_lines(&cv, 0, from, to, 8) == 2 && to[0] == 1 && to[1] == 3);
    cv.selected_query = -1;
    cv.focus_key = 2;   /* the lines into source 2: from target 0 */
    CHECK(atn_render_headview_lines(&cv, 0, from, to, 8) == 1 && from[0] == 0 && to[0] == 2);
    cv.focus_key = -1;
    bool cfound[2][N] = {{0}};
    for (double y = 0; y < 300; y += 2)
        for (double x = 0; x < 400; x += 16)
            if (atn_render_headview_token_at(&cv, 400, 300, x, y, &side, &tok)) {
                CHECK(tok >= 0 && tok < (side ? 5 : 2));
                cfound[side][tok] = true;
            }
    for (int i = 0; i < N; i++)
        CHECK_MSG(cfound[1][i] && cfound[0][i] == (i < 2), "cross token %d: query side %d, key side %d", i,
                  cfound[0][i], cfound[1][i]);
    double cw, ch, sw, sh;
    atn_render_headview_natural_size(&cv, &cw, &ch);
    atn_render_headview_natural_size(&hv, &sw, &sh);
    CHECK(ch == sh);   /* as tall as the longer column: 5 rows, as the 5 x 5 head */
    cairo_surface_t *cimg = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 400, 300);
    cairo_t *ccr = cairo_create(cimg);
    atn_render_headview(ccr, &cv, 400, 300);
    CHECK(cairo_status(ccr) == CAIRO_STATUS_SUCCESS);
    cairo_destroy(ccr);
    cairo_surface_destroy(cimg);
}

/* The token lines at 4,096 tokens in a 400 x 300 figure (the Head view's pane, issue 35): every
 * token gets a row, so the last one is inside the figure; labels come every step-th token, step
 * a round number large enough for the labels not to touch, with their positions ("200 t200");
 * the selected query's label is drawn and no other within a step of it; at 6 tokens every
 * label is drawn, without positions. */
static void test_headview_long(void) {
    enum { N = 4096 };
    float *attn = calloc((size_t)N * N, sizeof *attn);
    char **toks = calloc(N, sizeof *toks);
    for (int i = 0; i < N; i++) {
        attn[(size_t)i * N + (i > 0 ? i - 1 : 0)] = 1;
        toks[i] = malloc(16);
        snprintf(toks[i], 16, "t%d", i);
    }
    atn_render_style st;
    atn_render_style_init(&st, false);
    atn_headview_spec hv;
    atn_headview_spec_init(&hv);
    hv.attn[0] = attn;
    hv.n_shown = 1;
    hv.n = N;
    hv.tokens = (const char *const *)toks;
    hv.selected_query = 2001;
    hv.style = &st;
    double y_last, y, y_sel;
    int32_t step;
    atn_render_headview_label_place(&hv, 400, 300, N - 1, &y_last, &step);
    CHECK_MSG(y_last > 0 && y_last < 300, "the last token's row at y %.1f of 300", y_last);
    CHECK_MSG(step == 100 || step == 200 || step == 500, "a label every %d tokens", step);
    int drawn = 0, near = 0;
    atn_render_headview_label_place(&hv, 400, 300, 2001, &y_sel, NULL);
    CHECK(atn_render_headview_label_shown(&hv, step, 2001));
    double prev = -1e9, min_gap = 1e9;
    for (int i = 0; i < N; i++) {
        if (!atn_render_headview_label_place(&hv, 400, 300, i, &y, NULL))
            continue;
        drawn++;
        CHECK(i % step == 0 || i == 2001);
        near += i != 2001 && abs(i - 2001) < step;
        min_gap = fmin(min_gap, y - prev);
        prev = y;
    }
    CHECK_MSG(near == 0, "%d labels within a step of the selected one", near);
    CHECK_MSG(drawn >= N / step - 1 && drawn <= N / step + 2, "%d labels drawn at step %d", drawn, step);
    atn_render_headview_label_place(&hv, 400, 300, step, &y, NULL);
    double y0;
    atn_render_headview_label_place(&hv, 400, 300, 0, &y0, NULL);
    CHECK_MSG(y - y0 >= 12, "labels %.1f px apart", y - y0);   /* a 12-point label's line, at least */
    char buf[64];
    CHECK(!strcmp(atn_render_headview_label_text(&hv, step, 2000, buf, sizeof buf), "2000 t2000"));
    /* drawing it is quick enough to try: it does not crash at 0.07 px a row */
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 400, 300);
    cairo_t *cr = cairo_create(img);
    atn_render_headview(cr, &hv, 400, 300);
    cairo_destroy(cr);
    cairo_surface_destroy(img);
    /* a file of it: at most 8,000 px of rows (it was 4,096 rows a line tall: 90,000 px, over
       cairo's 32,767), the last row inside, labels thinned */
    double nw, nh;
    hv.selected_query = -1;
    atn_render_headview_natural_size(&hv, &nw, &nh);
    CHECK_MSG(nh <= 8200 && nh >= 8000, "a 4,096-token file %.0f px tall", nh);
    atn_render_headview_label_place(&hv, nw, nh, N - 1, &y, &step);
    CHECK(y < nh && step > 1);
    /* short inputs: every label, no positions */
    hv.n = 6;
    atn_render_headview_label_place(&hv, 400, 300, 5, &y, &step);
    CHECK(step == 1 && y < 300);
    CHECK(!strcmp(atn_render_headview_label_text(&hv, step, 3, buf, sizeof buf), "t3"));
    for (int i = 0; i < 6; i++)
        CHECK(atn_render_headview_label_place(&hv, 400, 300, i, NULL, NULL));
    for (int i = 0; i < N; i++)
        free(toks[i]);
    free(toks);
    free(attn);
}

static void test_similarity_view(void) {
    enum { L = 2, H = 2, N = 4 };
    static float attn[L * H * N * N];
    static atn_token tk[N];
    static int32_t mask[N] = {1, 1, 1, 1};
    for (int h = 0; h < L * H; h++)
        for (int i = 0; i < N; i++)
            attn[(h * N + i) * N + (h % 2 ? i : 0)] = 1; /* heads 0, 2: [CLS]; 1, 3: self */
    atn_encoding enc = {.n = N, .tokens = tk, .mask = mask};
    atn_capture cap = {.n_layers = L, .n_heads = H, .n = N, .enc = &enc, .attn = attn};
    atn_similarity *sim;
    CHECK(atn_similarity_compute(&cap, ATN_METRIC_JS, ATN_SCOPE_MODEL, 0, &sim, NULL) == ATN_OK);
    atn_similarity_spec sp;
    atn_similarity_spec_init(&sp);
    sp.sim = sim;
    /* every display cell maps back to heads whose JS distance matches the drawn order */
    int hits = 0;
    for (double y = 0; y < 500; y += 12)
        for (double x = 0; x < 500; x += 12) {
            int32_t a, b;
            if (atn_render_similarity_cell_at(&sp, 500, 500, x, y, &a, &b)) {
                hits++;
                CHECK(a >= 0 && a < 4 && b >= 0 && b < 4);
            }
        }
    CHECK(hits > 50);
    /* the clustered order keeps {0,2} and {1,3} together */
    CHECK((sim->order[0] % 2) == (sim->order[1] % 2) && (sim->order[2] % 2) == (sim->order[3] % 2));
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 500, 500);
    cairo_t *cr = cairo_create(s);
    atn_render_similarity(cr, &sp, 500, 500);
    CHECK(cairo_status(cr) == CAIRO_STATUS_SUCCESS);
    cairo_destroy(cr);
    cairo_surface_destroy(s);
    atn_similarity_free(sim);
}

static void test_trace_sheet(void) {
    atn_error err = {0};
    atn_model *m = atn_model_open("worked-example", NULL, NULL, &err);
    if (!m) {
        fprintf(stderr, "worked-example: %s\n", err.message);
        CHECK(m != NULL);
        return;
    }
    atn_encoding *enc;
    CHECK(atn_model_encode_toy(m, NULL, &enc, &err) == ATN_OK);
    atn_run *run = atn_run_new(m);
    CHECK(atn_run_forward(run, enc, NULL, &err) == ATN_OK);
    atn_trace *tr;
    CHECK(atn_trace_compute(m, atn_run_capture(run), 0, 0, 0, &tr, &err) == ATN_OK);
    atn_trace_sheet_spec sp;
    atn_trace_sheet_spec_init(&sp);
    sp.trace = tr;
    sp.n_heads = 2;
    sp.model_name = "worked-example";
    double h = atn_render_trace_sheet_height(&sp, 600);
    CHECK(h > 400);
    atn_rect r[ATN_TRACE_STEP_COUNT];
    atn_render_trace_sheet_step_rects(&sp, 600, r);
    for (int i = 0; i < ATN_TRACE_STEP_COUNT; i++) {
        CHECK_MSG(r[i].h > 0, "step %d", i);
        if (i > 0)
            CHECK(r[i].y >= r[i - 1].y + r[i - 1].h - 1);
        CHECK(atn_render_trace_sheet_step_at(&sp, 600, r[i].x + 20, r[i].y + r[i].h / 2) == i);
    }
    CHECK(r[ATN_TRACE_STEP_COUNT - 1].y + r[ATN_TRACE_STEP_COUNT - 1].h <= h);
    CHECK_STR(atn_trace_step_title(ATN_TRACE_STEP_SOFTMAX), "Softmax");
    atn_trace_free(tr);
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(m);
}

/* ---- fonts: CJK glyphs are found (not boxes) ---------------------------------------------- */

static void test_cjk_glyphs(void) {
    PangoContext *pctx = pango_font_map_create_context(pango_cairo_font_map_get_default());
    PangoLayout *l = pango_layout_new(pctx);
    PangoFontDescription *fd = pango_font_description_from_string("Sans 12");
    pango_layout_set_font_description(l, fd);
    pango_layout_set_text(l, "\xe6\x88\x91\xe7\x88\xb1\xe4\xbd\xa0 attention \xe3\x80\x82", -1);
    int unknown = pango_layout_get_unknown_glyphs_count(l);
    CHECK_MSG(unknown == 0, "%d glyphs missing: is fonts-noto-cjk installed?", unknown);
    pango_font_description_free(fd);
    g_object_unref(l);
    g_object_unref(pctx);
}

/* ---- CJK key labels stand upright: a column of characters, not a line on its side --------- */

typedef struct ink {
    int x0, y0, x1, y1;   /* bounding box of dark pixels, x1/y1 exclusive; x0 > x1 when none */
    int runs;             /* separate groups of inked pixel rows, top to bottom */
} ink;

static ink ink_in(cairo_surface_t *s, double fx0, double fy0, double fx1, double fy1) {
    ink k = {1 << 20, 1 << 20, -1, -1, 0};
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    int x0 = (int)fmax(0, fx0), y0 = (int)fmax(0, fy0), x1 = (int)fmin(w, fx1), y1 = (int)fmin(h, fy1);
    bool prev = false;
    for (int y = y0; y < y1; y++) {
        bool any = false;
        for (int x = x0; x < x1; x++) {
            uint32_t p = pixel(s, x, y);
            if (((p >> 16) & 0xff) < 0xa0 && ((p >> 8) & 0xff) < 0xa0 && (p & 0xff) < 0xa0) {
                any = true;
                k.x0 = x < k.x0 ? x : k.x0, k.x1 = x + 1 > k.x1 ? x + 1 : k.x1;
                k.y0 = y < k.y0 ? y : k.y0, k.y1 = y + 1 > k.y1 ? y + 1 : k.y1;
            }
        }
        if (any && !prev)
            k.runs++;
        prev = any;
    }
    return k;
}

static void test_upright_cjk_labels(void) {
    float a[9] = {0.2f, 0.3f, 0.5f, 0.1f, 0.8f, 0.1f, 0.6f, 0.2f, 0.2f};
    /* "一" is a horizontal stroke: upright it is about 1 em wide and a stroke tall; lying on
       its side it is a stroke wide.  Three of them upright are three separate bars. */
    const char *labels[3] = {"\xe4\xb8\x80\xe4\xb8\x80\xe4\xb8\x80", "Hello", "\xe4\xba\xba\xe5\xb7\xa5"};
    atn_heatmap_spec hm;
    atn_heatmap_spec_init(&hm);
    hm.values = a;
    hm.rows = hm.cols = 3;
    hm.row_labels = hm.col_labels = labels;
    hm.row_axis = "\xe4\xb8\x80\xe4\xb8\x80";   /* the axis title, drawn up the left side */
    hm.show_values = false;
    hm.show_colorbar = false;
    double W = 150, H = 260, scale = 2;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)(W * scale), (int)(H * scale));
    cairo_t *cr = cairo_create(s);
    cairo_scale(cr, scale, scale);
    atn_render_heatmap(cr, &hm, W, H);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    atn_heatmap_layout L;
    atn_render_heatmap_layout(&hm, W, H, &L);
    CHECK_MSG(L.col_labels_rotated, "labels wider than the cells (%.1f) turn to the vertical", L.cell_w);
    double em = 12 * scale;   /* RT_LABEL at font scale 1 */
    ink k = ink_in(s, (L.cells.x) * scale, L.col_labels.y * scale, (L.cells.x + L.cell_w) * scale,
                   (L.col_labels.y + L.col_labels.h) * scale);
    CHECK_MSG(k.x1 - k.x0 >= 0.5 * em, "key label 一一一 is %d px wide (upright: ~%.0f, on its side: a stroke)",
              k.x1 - k.x0, 0.9 * em);
    CHECK_MSG(k.y1 - k.y0 > 2 * (k.x1 - k.x0), "key label 一一一 is a column: %d px tall, %d wide", k.y1 - k.y0,
              k.x1 - k.x0);
    CHECK_MSG(k.runs == 3, "key label 一一一 shows %d separate strokes, want 3", k.runs);
    /* read from the cells down: the first character starts next to the cells */
    CHECK_MSG(k.y0 < (L.col_labels.y + 0.5 * 12) * scale, "the column starts at the cells (ink from %d px, labels at %.0f)",
              k.y0, L.col_labels.y * scale);
    /* a Latin label still lies on its side, reading upwards: taller than wide, one em across */
    ink h = ink_in(s, (L.cells.x + L.cell_w) * scale, L.col_labels.y * scale, (L.cells.x + 2 * L.cell_w) * scale,
                   (L.col_labels.y + L.col_labels.h) * scale);
    CHECK_MSG(h.x1 - h.x0 <= 1.1 * em && h.y1 - h.y0 > 2 * (h.x1 - h.x0), "Hello: %d x %d px", h.x1 - h.x0, h.y1 - h.y0);
    /* the axis title on the left: upright too */
    ink ax = ink_in(s, 0, L.cells.y * scale, (L.row_labels.x - 1) * scale, (L.cells.y + L.cells.h) * scale);
    double small = 10 * scale;
    CHECK_MSG(ax.x1 - ax.x0 >= 0.5 * small && ax.runs == 2, "axis title 一一: %d px wide, %d strokes", ax.x1 - ax.x0,
              ax.runs);
    if (getenv("ATN_RENDER_KEEP"))
        cairo_surface_write_to_png(s, getenv("ATN_RENDER_KEEP"));
    cairo_surface_destroy(s);
}

/* ---- SVG, PDF, atomic files ---------------------------------------------------------------- */

static bool have(const char *tool) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

static void test_files(void) {
    char dir[] = "/tmp/atn-render-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    float a[64];
    fill(a, 8);
    atn_heatmap_spec hm;
    atn_heatmap_spec_init(&hm);
    hm.values = a;
    hm.rows = hm.cols = 8;
    hm.row_labels = hm.col_labels = tokens8;
    hm.title = "\xe6\x88\x91 & <escaped>";
    ctx c = {&hm};
    char svg[256], pdf[256], png[256], cmd[1024];
    snprintf(svg, sizeof svg, "%s/h.svg", dir);
    snprintf(pdf, sizeof pdf, "%s/h.pdf", dir);
    snprintf(png, sizeof png, "%s/h.png", dir);
    atn_output_format f;
    CHECK(atn_output_format_from_path(svg, &f) && f == ATN_OUTPUT_SVG);
    CHECK(atn_output_format_from_path("X.PDF", &f) && f == ATN_OUTPUT_PDF);
    CHECK(!atn_output_format_from_path("x.jpg", &f));
    CHECK(atn_render_to_file(svg, ATN_OUTPUT_SVG, 400, 300, 1, draw, &c, NULL) == ATN_OK);
    CHECK(atn_render_to_file(pdf, ATN_OUTPUT_PDF, 400, 300, 1, draw, &c, NULL) == ATN_OK);
    CHECK(atn_render_to_file(png, ATN_OUTPUT_PNG, 400, 300, 1, draw, &c, NULL) == ATN_OK);
    if (have("xmllint")) {
        snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", svg);
        CHECK_MSG(system(cmd) == 0, "%s does not parse as XML", svg);
    } else {
        fprintf(stderr, "note: xmllint not found; SVG not parsed\n");
    }
    if (have("pdftoppm")) {
        snprintf(cmd, sizeof cmd, "pdftoppm -png -r 72 -singlefile '%s' '%s/p' && test -s '%s/p.png'", pdf, dir, dir);
        CHECK_MSG(system(cmd) == 0, "pdftoppm could not render %s", pdf);
        /* the rendered page decodes as a 400 x 300 image */
        snprintf(cmd, sizeof cmd, "%s/p.png", dir);
        cairo_surface_t *img = cairo_image_surface_create_from_png(cmd);
        CHECK(cairo_surface_status(img) == CAIRO_STATUS_SUCCESS && cairo_image_surface_get_width(img) == 400);
        cairo_surface_destroy(img);
    } else {
        fprintf(stderr, "note: pdftoppm not found; PDF not rendered\n");
    }
    /* a failed export leaves the good file in place and no temporary behind */
    atn_error err = {0};
    CHECK(atn_render_to_file(png, ATN_OUTPUT_PNG, 40000, 300, 1, draw, &c, &err) != ATN_OK);
    CHECK(strstr(err.message, "h.png") != NULL);
    cairo_surface_t *img = cairo_image_surface_create_from_png(png);
    CHECK(cairo_surface_status(img) == CAIRO_STATUS_SUCCESS && cairo_image_surface_get_width(img) == 400);
    cairo_surface_destroy(img);
    snprintf(cmd, sizeof cmd, "test $(ls '%s' | grep -c tmp) -eq 0", dir);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* The names of an export of every head: zero-padded to the model's counts, so they sort. */
static void test_head_file_names(void) {
    struct { const char *prefix; int l, h, L, H; const char *ext, *want; } cases[] = {
        {"heatmap", 0, 2, 4, 16, "png", "heatmap-L00-H02.png"},
        {"heatmap", 3, 15, 4, 16, "png", "heatmap-L03-H15.png"},
        {"trace", 0, 1, 1, 2, "svg", "trace-L00-H01.svg"},
        {"heatmap", 11, 9, 12, 12, "pdf", "heatmap-L11-H09.pdf"},
        {"heatmap", 3, 100, 120, 1000, "svg", "heatmap-L003-H100.svg"},
        {"heatmap", 99, 7, 100, 8, "png", "heatmap-L99-H07.png"},
        {"heatmap", 100, 7, 101, 8, "png", "heatmap-L100-H07.png"},
        {NULL, 1, 1, 2, 2, NULL, "-L01-H01."},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *name = atn_render_head_file_name(cases[i].prefix, cases[i].l, cases[i].h, cases[i].L, cases[i].H,
                                               cases[i].ext);
        CHECK_MSG(name && !strcmp(name, cases[i].want), "case %zu: %s, expected %s", i, name ? name : "NULL",
                  cases[i].want);
        free(name);
    }
    /* every head of a 12 x 12 model: byte order is layer/head order */
    char *prev = NULL;
    for (int l = 0; l < 12; l++)
        for (int h = 0; h < 12; h++) {
            char *name = atn_render_head_file_name("heatmap", l, h, 12, 12, "png");
            CHECK_MSG(!prev || strcmp(prev, name) < 0, "%s sorts before %s", name, prev);
            free(prev);
            prev = name;
        }
    free(prev);
}


/* Colour scales (colour-scale.h) on a 3 x 4 head whose first key is a sink, against values
 * worked out by hand: log10 of each weight, each weight's rank in its row (ties share their
 * mean rank), and the first column left out of the range with its mean share. */
static void test_colour_scales(void) {
    const float v[3][4] = {{0.7f, 0.1f, 0.1f, 0.1f}, {0.9f, 0.05f, 0.04f, 0.01f}, {0.6f, 0.0f, 0.3f, 0.1f}};
    float out[12];
    double lo, hi, share;
    atn_colour_scale sc;
    CHECK(atn_colour_scale_parse("log", &sc) && sc == ATN_SCALE_LOG && !atn_colour_scale_parse("cubic", &sc) &&
          !atn_colour_scale_parse(NULL, &sc));
    CHECK(atn_colour_scale_apply(&v[0][0], 3, 4, 4, ATN_SCALE_LOG, false, false, out, &lo, &hi, &share));
    CHECK(out[0] == (float)log10(0.7f) && out[5] == (float)log10(0.05f) && out[9] == -6.0f);   /* 0 -> the floor */
    CHECK(fabs(lo - log10(0.01f)) < 1e-12 && fabs(hi - log10(0.9f)) < 1e-12);
    CHECK(fabs(share - (0.7 + 0.9 + 0.6) / 3) < 1e-7);
    CHECK(atn_colour_scale_apply(&v[0][0], 3, 4, 4, ATN_SCALE_RANK, false, false, out, &lo, &hi, &share));
    /* row 0: 0.7 is the largest (1), the three 0.1 tie for ranks 0, 1, 2 of 3: mean 1/3 */
    CHECK(out[0] == 1.0f && out[1] == (float)(1.0 / 3) && out[3] == (float)(1.0 / 3) && lo == 0 && hi == 1);
    CHECK(out[4] == 1.0f && out[5] == (float)(2.0 / 3) && out[6] == (float)(1.0 / 3) && out[7] == 0.0f);
    /* the first column left out: ranks over keys 1..3, column 0 in the top colour; range without it */
    CHECK(atn_colour_scale_apply(&v[0][0], 3, 4, 4, ATN_SCALE_RANK, true, false, out, &lo, &hi, &share));
    CHECK(out[4] == 1.0f && out[5] == 1.0f && out[6] == 0.5f && out[7] == 0.0f && out[9] == 0.0f);
    CHECK(atn_colour_scale_apply(&v[0][0], 3, 4, 4, ATN_SCALE_LINEAR, true, false, out, &lo, &hi, &share));
    CHECK(lo == 0 && hi == (double)0.3f && out[0] == 0.7f);
    /* causal: row 1 sees keys 0..1 only; with the first left out its one key ranks 1 */
    CHECK(atn_colour_scale_apply(&v[0][0], 3, 4, 4, ATN_SCALE_RANK, true, true, out, &lo, &hi, &share));
    CHECK(out[5] == 1.0f && out[6] == 0.0f && out[9] == 0.0f && out[10] == 1.0f);
    /* a stride: the 2 x 2 block at (1, 2) */
    CHECK(atn_colour_scale_apply(&v[1][2], 2, 2, 4, ATN_SCALE_LINEAR, false, false, out, &lo, &hi, &share));
    CHECK(out[0] == 0.04f && out[3] == 0.1f && hi == (double)0.3f);
}

/* Word pieces merged into words (word-merge.h) on a known tokenization, [CLS] un ##believ
 * ##able to [SEP] (3 pieces make one word), against sums and means worked out by hand. */
static void test_word_merge(void) {
    atn_token t[6] = {{.word = -1, .segment = -1}, {.word = 0}, {.word = 0, .continuation = true},
                      {.word = 0, .continuation = true}, {.word = 1}, {.word = -1, .segment = -1}};
    const char *const labels[6] = {"[CLS]", "un", "##believ", "##able", "to", "[SEP]"};
    float v[6][6];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            v[i][j] = (float)(i * 6 + j) / 100.0f;
    int32_t start[7], nw;
    atn_word_groups(t, 6, start, &nw);
    CHECK(nw == 4 && start[0] == 0 && start[1] == 1 && start[2] == 4 && start[3] == 5 && start[4] == 6);
    float out[16];
    atn_word_merge(&v[0][0], 6, start, nw, out);
    /* [CLS] row, "unbelievable" column: .01 + .02 + .03 */
    CHECK(out[1] == (float)(0.01 + 0.02 + 0.03) || fabs(out[1] - 0.06) < 1e-7);
    /* "unbelievable" row: the mean of rows 1..3; its own column: the sum of columns 1..3 */
    double want = 0;
    for (int i = 1; i <= 3; i++)
        for (int j = 1; j <= 3; j++)
            want += v[i][j];
    CHECK(fabs(out[1 * 4 + 1] - want / 3) < 1e-6);
    CHECK(fabs(out[1 * 4 + 0] - (v[1][0] + v[2][0] + v[3][0]) / 3.0) < 1e-6);   /* -> [CLS] */
    CHECK(out[3 * 4 + 3] == v[5][5] && out[2 * 4 + 0] == v[4][0]);   /* single pieces unchanged */
    char **w = atn_word_labels(labels, start, nw);
    CHECK(w && !strcmp(w[0], "[CLS]") && !strcmp(w[1], "unbelievable") && !strcmp(w[2], "to"));
    for (int i = 0; w && i < nw; i++)
        free(w[i]);
    free(w);
}

int main(void) {
    test_word_merge();
    test_colour_scales();
    test_head_file_names();
    test_colormaps();
    test_heatmap_png();
    test_heatmap_zoom();
    test_cell_numbers();
    test_fixed_scale();
    test_query_bars();
    test_similarity_direction();
    test_grid_and_headview();
    test_headview_long();
    test_similarity_view();
    test_trace_sheet();
    test_cjk_glyphs();
    test_upright_cjk_labels();
    test_files();
    return check_summary("render");
}

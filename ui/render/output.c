/* Figures to PNG, SVG and PDF: the same draw function on an image, SVG or PDF surface,
 * first into memory, then into the file through a temporary name and a rename. */
#include "render.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool atn_output_format_from_path(const char *path, atn_output_format *out) {
    const char *dot = path ? strrchr(path, '.') : NULL;
    if (!dot)
        return false;
    if (!strcasecmp(dot, ".png"))
        *out = ATN_OUTPUT_PNG;
    else if (!strcasecmp(dot, ".svg"))
        *out = ATN_OUTPUT_SVG;
    else if (!strcasecmp(dot, ".pdf"))
        *out = ATN_OUTPUT_PDF;
    else
        return false;
    return true;
}

const char *atn_output_format_ext(atn_output_format fmt) {
    switch (fmt) {
    case ATN_OUTPUT_SVG: return "svg";
    case ATN_OUTPUT_PDF: return "pdf";
    default: return "png";
    }
}

static int index_width(int32_t count) {
    int w = 1;
    for (int32_t top = count > 1 ? count - 1 : 0; top >= 10; top /= 10)
        w++;
    return w < 2 ? 2 : w;
}

char *atn_render_head_file_name(const char *prefix, int32_t layer, int32_t head, int32_t n_layers, int32_t n_heads,
                                const char *ext) {
    const char *p = prefix ? prefix : "", *e = ext ? ext : "";
    int wl = index_width(n_layers), wh = index_width(n_heads);
    int n = snprintf(NULL, 0, "%s-L%0*d-H%0*d.%s", p, wl, (int)layer, wh, (int)head, e);
    char *name = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (name)
        snprintf(name, (size_t)n + 1, "%s-L%0*d-H%0*d.%s", p, wl, (int)layer, wh, (int)head, e);
    return name;
}

typedef struct membuf {
    unsigned char *data;
    size_t len, cap;
    bool failed;
} membuf;

static cairo_status_t mem_write(void *closure, const unsigned char *data, unsigned int length) {
    membuf *m = closure;
    if (m->failed)
        return CAIRO_STATUS_WRITE_ERROR;
    if (m->len + length > m->cap) {
        size_t cap = m->cap ? m->cap : 65536;
        while (cap < m->len + length)
            cap *= 2;
        unsigned char *d = realloc(m->data, cap);
        if (!d) {
            m->failed = true;
            return CAIRO_STATUS_NO_MEMORY;
        }
        m->data = d;
        m->cap = cap;
    }
    memcpy(m->data + m->len, data, length);
    m->len += length;
    return CAIRO_STATUS_SUCCESS;
}

/* PNG through libpng rather than cairo_surface_write_to_png: cairo uses zlib's default
 * level and every filter, ~5x slower on a 512-token heatmap for a file ~20% smaller.  Here:
 * zlib level 3 and the Up filter only, which suits heatmaps (nearest-neighbour cells repeat
 * whole rows); RGB when the image is opaque, else un-premultiplied RGBA. */
static void png_write_mem(png_structp png, png_bytep data, png_size_t len) {
    membuf *m = png_get_io_ptr(png);
    if (mem_write(m, data, (unsigned int)len) != CAIRO_STATUS_SUCCESS)
        png_error(png, "out of memory");
}

static void png_flush_mem(png_structp png) { (void)png; }

static cairo_status_t write_png(cairo_surface_t *surf, membuf *m) {
    cairo_surface_flush(surf);
    int w = cairo_image_surface_get_width(surf), h = cairo_image_surface_get_height(surf);
    int stride = cairo_image_surface_get_stride(surf);
    const unsigned char *data = cairo_image_surface_get_data(surf);
    bool opaque = true;
    for (int y = 0; y < h && opaque; y++) {
        const uint32_t *px = (const uint32_t *)(const void *)(data + (size_t)y * stride);
        for (int x = 0; x < w; x++)
            if ((px[x] >> 24) != 0xff) {
                opaque = false;
                break;
            }
    }
    int ch = opaque ? 3 : 4;
    unsigned char *row = malloc((size_t)w * ch);
    if (!row)
        return CAIRO_STATUS_NO_MEMORY;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        free(row);
        return CAIRO_STATUS_NO_MEMORY;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(row);
        return CAIRO_STATUS_WRITE_ERROR;
    }
    png_set_write_fn(png, m, png_write_mem, png_flush_mem);
    png_set_compression_level(png, 3);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, opaque ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGBA,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    png_write_info(png, info);
    for (int y = 0; y < h; y++) {
        const uint32_t *px = (const uint32_t *)(const void *)(data + (size_t)y * stride);
        unsigned char *o = row;
        for (int x = 0; x < w; x++) {
            uint32_t p = px[x], a = p >> 24, r = (p >> 16) & 0xff, g = (p >> 8) & 0xff, b = p & 0xff;
            if (!opaque) {
                if (a == 0) {
                    r = g = b = 0;
                } else if (a != 0xff) { /* cairo stores premultiplied colour */
                    r = (r * 255 + a / 2) / a;
                    g = (g * 255 + a / 2) / a;
                    b = (b * 255 + a / 2) / a;
                }
            }
            *o++ = (unsigned char)r;
            *o++ = (unsigned char)g;
            *o++ = (unsigned char)b;
            if (!opaque)
                *o++ = (unsigned char)a;
        }
        png_write_row(png, row);
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(row);
    return m->failed ? CAIRO_STATUS_NO_MEMORY : CAIRO_STATUS_SUCCESS;
}

/* cairo's image surfaces stop at 32767 pixels a side */
#define MAX_PIXELS 32767.0

atn_status atn_render_to_memory(atn_output_format fmt, double width, double height, double scale, atn_draw_fn draw,
                                void *user_data, unsigned char **data, size_t *len, atn_error *err) {
    *data = NULL;
    *len = 0;
    if (!(scale > 0) || !isfinite(scale))
        scale = 1.0;
    if (!(width >= 1 && height >= 1) || !isfinite(width) || !isfinite(height))
        return atn_error_set(err, ATN_E_INVALID, "figure size %gx%g is not a positive size", width, height);
    membuf m = {0};
    cairo_surface_t *surf;
    if (fmt == ATN_OUTPUT_PNG) {
        double pw = ceil(width * scale), ph = ceil(height * scale);
        if (pw > MAX_PIXELS || ph > MAX_PIXELS)
            return atn_error_set(err, ATN_E_INVALID,
                                 "a PNG of %.0fx%.0f pixels is larger than cairo allows (32767 a side); lower "
                                 "--scale or the size, or write SVG/PDF", pw, ph);
        if (pw * ph > ATN_RENDER_MAX_PIXELS)
            return atn_error_set(err, ATN_E_INVALID,
                                 "a PNG of %.0fx%.0f pixels (%.0f million, %.1f GB to draw) is over the %.0f-million-"
                                 "pixel budget; lower --scale or the size, or write SVG/PDF", pw, ph, pw * ph / 1e6,
                                 pw * ph * 4 / 1e9, ATN_RENDER_MAX_PIXELS / 1e6);
        surf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)pw, (int)ph);
    } else if (fmt == ATN_OUTPUT_SVG) {
        surf = cairo_svg_surface_create_for_stream(mem_write, &m, width, height);
    } else {
        surf = cairo_pdf_surface_create_for_stream(mem_write, &m, width, height);
        if (cairo_surface_status(surf) == CAIRO_STATUS_SUCCESS)
            cairo_pdf_surface_set_metadata(surf, CAIRO_PDF_METADATA_CREATOR, "attnscope");
    }
    if (cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS) {
        atn_status st = atn_error_set(err, ATN_E_NOMEM, "cannot create a %s surface of %gx%g: %s",
                                      atn_output_format_ext(fmt), width, height,
                                      cairo_status_to_string(cairo_surface_status(surf)));
        cairo_surface_destroy(surf);
        free(m.data);
        return st;
    }
    cairo_t *cr = cairo_create(surf);
    if (fmt == ATN_OUTPUT_PNG)
        cairo_scale(cr, ceil(width * scale) / width, ceil(height * scale) / height);
    draw(cr, width, height, user_data);
    cairo_status_t cs = cairo_status(cr);
    cairo_destroy(cr);
    if (cs == CAIRO_STATUS_SUCCESS && fmt == ATN_OUTPUT_PNG)
        cs = write_png(surf, &m);
    cairo_surface_finish(surf);
    if (cs == CAIRO_STATUS_SUCCESS)
        cs = cairo_surface_status(surf);
    cairo_surface_destroy(surf);
    if (cs != CAIRO_STATUS_SUCCESS || m.failed) {
        free(m.data);
        return atn_error_set(err, m.failed ? ATN_E_NOMEM : ATN_E_IO, "drawing the %s figure failed: %s",
                             atn_output_format_ext(fmt), m.failed ? "out of memory" : cairo_status_to_string(cs));
    }
    *data = m.data;
    *len = m.len;
    return ATN_OK;
}

atn_status atn_render_to_file(const char *path, atn_output_format fmt, double width, double height, double scale,
                              atn_draw_fn draw, void *user_data, atn_error *err) {
    unsigned char *data;
    size_t len;
    atn_status st = atn_render_to_memory(fmt, width, height, scale, draw, user_data, &data, &len, err);
    if (st) {
        atn_error_prefix(err, "%s", path);
        return st;
    }
    st = atn_write_file_atomic(path, data, len, err);
    free(data);
    return st;
}

/* Colour maps: names, lookups, value ranges, and a matrix turned into one pixel per cell. */
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "colormap-private.h"

static const char *const names[] = {"viridis", "magma", "cividis", "greys", "rdbu", NULL};

static const uint32_t *const tables[ATN_CMAP_COUNT] = {
    atn_cmap_viridis, atn_cmap_magma, atn_cmap_cividis, atn_cmap_greys, atn_cmap_rdbu,
};

const char *const *atn_colormap_names(void) { return names; }

const char *atn_colormap_name(atn_colormap cm) {
    return (unsigned)cm < ATN_CMAP_COUNT ? names[cm] : "viridis";
}

bool atn_colormap_from_name(const char *name, atn_colormap *out) {
    if (!name)
        return false;
    for (int i = 0; names[i]; i++)
        if (!strcasecmp(name, names[i])) {
            *out = (atn_colormap)i;
            return true;
        }
    if (!strcasecmp(name, "grey") || !strcasecmp(name, "gray") || !strcasecmp(name, "grays")) {
        *out = ATN_CMAP_GREYS;
        return true;
    }
    if (!strcasecmp(name, "diverging") || !strcasecmp(name, "rdbu_r")) {
        *out = ATN_CMAP_RDBU;
        return true;
    }
    return false;
}

bool atn_colormap_is_diverging(atn_colormap cm) { return cm == ATN_CMAP_RDBU; }

const uint32_t *atn_colormap_table(atn_colormap cm) {
    return tables[(unsigned)cm < ATN_CMAP_COUNT ? cm : ATN_CMAP_VIRIDIS];
}

static inline int index_of(double t) {
    /* matplotlib: floor(t * N), t == 1 maps to the last entry */
    int i = (int)(t * 256.0);
    return i < 0 ? 0 : i > 255 ? 255 : i;
}

void atn_colormap_rgb(atn_colormap cm, double t, double rgb[3]) {
    if (!isfinite(t)) {
        rgb[0] = 1.0, rgb[1] = 0.0, rgb[2] = 1.0;
        return;
    }
    uint32_t c = atn_colormap_table(cm)[index_of(t)];
    rgb[0] = ((c >> 16) & 0xff) / 255.0;
    rgb[1] = ((c >> 8) & 0xff) / 255.0;
    rgb[2] = (c & 0xff) / 255.0;
}

void atn_value_range_resolve(const atn_value_range *r, const float *values, int32_t rows, int32_t cols,
                             size_t stride, atn_colormap cm, double *vmin, double *vmax) {
    double lo, hi;
    if (r && !r->automatic && isfinite(r->vmin) && isfinite(r->vmax) && r->vmin < r->vmax) {
        *vmin = r->vmin;
        *vmax = r->vmax;
        return;
    }
    if (!stride)
        stride = (size_t)cols;
    float mx = -INFINITY, mn = INFINITY;
    for (int32_t i = 0; values && i < rows; i++) {
        const float *row = values + (size_t)i * stride;
        for (int32_t j = 0; j < cols; j++) {
            float v = row[j];
            if (isfinite(v)) {
                mx = v > mx ? v : mx;
                mn = v < mn ? v : mn;
            }
        }
    }
    if (mx < mn) /* no finite value at all */
        mn = 0, mx = 1;
    if (atn_colormap_is_diverging(cm)) {
        hi = fmax(fabs(mn), fabs(mx));
        lo = -hi;
    } else {
        /* attention is non-negative: 0 at the bottom keeps "no attention" one colour */
        lo = mn < 0 ? mn : 0;
        hi = mx;
    }
    if (!(hi > lo)) {
        double m = fabs(hi) > 0 ? fabs(hi) : 1.0;
        lo = lo - (lo < 0 ? m : 0);
        hi = lo + m;
        if (!(hi > lo))
            hi = lo + 1;
    }
    *vmin = lo;
    *vmax = hi;
}

bool atn_render_matrix_pixels(const float *values, int32_t rows, int32_t cols, size_t stride, atn_colormap cm,
                              double vmin, double vmax, uint8_t *pixels, size_t pixel_stride) {
    const uint32_t *tab = atn_colormap_table(cm);
    if (!stride)
        stride = (size_t)cols;
    /* index = floor((v - vmin) * 256 / (vmax - vmin)) in float: one multiply-add per cell */
    float k = (float)(256.0 / (vmax - vmin)), off = (float)(-vmin * 256.0 / (vmax - vmin));
    const uint32_t nonfinite = 0xffff00ffu;
    bool bad = false;
    for (int32_t i = 0; i < rows; i++) {
        const float *row = values + (size_t)i * stride;
        uint32_t *px = (uint32_t *)(void *)(pixels + (size_t)i * pixel_stride);
        for (int32_t j = 0; j < cols; j++) {
            float v = row[j];
            if (!isfinite(v)) {
                px[j] = nonfinite;
                bad = true;
                continue;
            }
            float f = v * k + off;
            int idx = f <= 0.0f ? 0 : f >= 255.0f ? 255 : (int)f;
            px[j] = 0xff000000u | tab[idx];
        }
    }
    return bad;
}

cairo_surface_t *atn_render_matrix_surface(const float *values, int32_t rows, int32_t cols, size_t stride,
                                           atn_colormap cm, double vmin, double vmax, bool *has_nonfinite) {
    if (rows <= 0 || cols <= 0)
        return NULL;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, cols, rows);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(s);
        return NULL;
    }
    cairo_surface_flush(s);
    bool bad = atn_render_matrix_pixels(values, rows, cols, stride, cm, vmin, vmax, cairo_image_surface_get_data(s),
                                        (size_t)cairo_image_surface_get_stride(s));
    cairo_surface_mark_dirty(s);
    if (has_nonfinite)
        *has_nonfinite = bad;
    return s;
}

/* Pooling a heatmap's cells into blocks for an overview with more tokens than pixels
 * (atn-heatmap-pool.h). */
#include "atn-heatmap-pool.h"

#include <math.h>
#include <string.h>

int atn_pool_factor(int cells, double pixels) {
    if (cells <= 0 || !(pixels > 0) || cells <= pixels)
        return 1;
    return (int)ceil(cells / pixels);
}

float *atn_pool_blocks(const float *values, int rows, int cols, int k, atn_pool_mode mode, gboolean causal,
                       const float *cell_mask, int *prows, int *pcols) {
    k = MAX(k, 1);
    int pr = (rows + k - 1) / k, pc = (cols + k - 1) / k;
    *prows = pr;
    *pcols = pc;
    float *out = g_new0(float, (size_t)pr * pc);
    double *acc = g_new0(double, pc);
    int *count = g_new0(int, pc);
    for (int a = 0; a < pr; a++) {
        for (int b = 0; b < pc; b++) {
            acc[b] = mode == ATN_POOL_MAX ? -INFINITY : 0;
            count[b] = 0;
        }
        for (int i = a * k; i < MIN(rows, a * k + k); i++) {
            const float *row = values + (size_t)i * cols;
            const float *mrow = cell_mask ? cell_mask + (size_t)i * cols : NULL;
            int jend = causal ? MIN(cols, i + 1) : cols;   /* keys after the query are masked */
            for (int j = 0; j < jend; j++) {
                if (mrow && mrow[j] < -1e30f)
                    continue;
                int b = j / k;
                double v = row[j];
                if (mode == ATN_POOL_MAX)
                    acc[b] = isnan(v) || isnan(acc[b]) ? NAN : fmax(acc[b], v);
                else
                    acc[b] += v;
                count[b]++;
            }
        }
        for (int b = 0; b < pc; b++)
            out[(size_t)a * pc + b] = count[b] == 0 ? 0.0f
                                      : mode == ATN_POOL_MAX ? (float)acc[b]
                                                             : (float)(acc[b] / count[b]);
    }
    g_free(acc);
    g_free(count);
    return out;
}

cairo_surface_t *atn_pool_surface(const float *pooled, int rows, int cols, int k, atn_colormap cm, double vmin,
                                  double vmax) {
    k = MAX(k, 1);
    int pr = (rows + k - 1) / k, pc = (cols + k - 1) / k;
    uint32_t *small = g_try_new(uint32_t, (size_t)pr * pc);
    if (!small)
        return NULL;
    atn_render_matrix_pixels(pooled, pr, pc, pc, cm, vmin, vmax, (uint8_t *)small, (size_t)pc * 4);
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, cols, rows);
    if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(img);
        g_free(small);
        return NULL;
    }
    cairo_surface_flush(img);
    unsigned char *dst = cairo_image_surface_get_data(img);
    int ds = cairo_image_surface_get_stride(img);
    for (int i = 0; i < rows; i++) {
        uint32_t *d = (uint32_t *)(void *)(dst + (size_t)i * ds);
        const uint32_t *s = small + (size_t)(i / k) * pc;
        if (i % k != 0) {   /* the same as the block's first row */
            memcpy(d, dst + (size_t)(i - i % k) * ds, (size_t)cols * 4);
            continue;
        }
        for (int j = 0; j < cols; j++)
            d[j] = s[j / k];
    }
    cairo_surface_mark_dirty(img);
    g_free(small);
    return img;
}

double atn_pool_block_value(const float *values, int rows, int cols, int k, atn_pool_mode mode, gboolean causal,
                            const float *cell_mask, int row, int col) {
    k = MAX(k, 1);
    int a = row / k * k, b = col / k * k, count = 0;
    double acc = mode == ATN_POOL_MAX ? -INFINITY : 0;
    for (int i = a; i < MIN(rows, a + k); i++)
        for (int j = b; j < MIN(cols, b + k); j++) {
            if ((causal && j > i) || (cell_mask && cell_mask[(size_t)i * cols + j] < -1e30f))
                continue;
            double v = values[(size_t)i * cols + j];
            acc = mode == ATN_POOL_MAX ? (isnan(v) || isnan(acc) ? NAN : fmax(acc, v)) : acc + v;
            count++;
        }
    return count == 0 ? 0 : mode == ATN_POOL_MAX ? acc : acc / count;
}

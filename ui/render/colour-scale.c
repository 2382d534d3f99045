/* Colour scales that survive attention sinks (colour-scale.h). */
#include "colour-scale.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LOG_FLOOR (-6.0)

bool atn_colour_scale_parse(const char *name, atn_colour_scale *out) {
    if (!name)
        return false;
    if (!strcmp(name, "linear"))
        *out = ATN_SCALE_LINEAR;
    else if (!strcmp(name, "log"))
        *out = ATN_SCALE_LOG;
    else if (!strcmp(name, "rank"))
        *out = ATN_SCALE_RANK;
    else
        return false;
    return true;
}

const char *atn_colour_scale_name(atn_colour_scale scale) {
    return scale == ATN_SCALE_LOG ? "log" : scale == ATN_SCALE_RANK ? "rank" : "linear";
}

const char *atn_colour_scale_label(atn_colour_scale scale) {
    return scale == ATN_SCALE_LOG ? "log10 weight" : scale == ATN_SCALE_RANK ? "rank in its row" : "weight";
}

typedef struct {
    float v;
    int32_t j;
} ranked;

static int by_value(const void *a, const void *b) {
    float x = ((const ranked *)a)->v, y = ((const ranked *)b)->v;
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);   /* NaN last */
    return (x > y) - (x < y);
}

bool atn_colour_scale_apply(const float *values, int32_t rows, int32_t cols, size_t stride, atn_colour_scale scale,
                            bool drop_first, bool causal, float *out, double *vmin, double *vmax,
                            double *first_share) {
    ranked *row = NULL;
    if (scale == ATN_SCALE_RANK && cols > 0 && !(row = malloc((size_t)cols * sizeof *row)))
        return false;
    double share = 0, lo = INFINITY, hi = -INFINITY, pos_lo = INFINITY;
    int32_t j0 = drop_first ? 1 : 0;
    for (int32_t i = 0; i < rows; i++) {
        const float *v = values + (size_t)i * stride;
        float *o = out + (size_t)i * cols;
        int32_t jend = causal ? (i + 1 < cols ? i + 1 : cols) : cols;   /* the keys not masked */
        if (cols > 0)
            share += v[0];
        for (int32_t j = j0; j < jend; j++)
            if (isfinite(v[j])) {
                lo = fmin(lo, v[j]);
                hi = fmax(hi, v[j]);
                if (v[j] > 0)
                    pos_lo = fmin(pos_lo, v[j]);
            }
        switch (scale) {
        case ATN_SCALE_LINEAR: memcpy(o, v, (size_t)cols * sizeof *o); break;
        case ATN_SCALE_LOG:
            for (int32_t j = 0; j < cols; j++)
                o[j] = v[j] > 0 ? (float)fmax(log10(v[j]), LOG_FLOOR) : isnan(v[j]) ? v[j] : (float)LOG_FLOOR;
            break;
        case ATN_SCALE_RANK: {
            for (int32_t j = 0; j < cols; j++)
                o[j] = 0;
            int32_t m = 0;
            for (int32_t j = j0; j < jend; j++)
                row[m++] = (ranked){v[j], j};
            qsort(row, (size_t)m, sizeof *row, by_value);
            for (int32_t a = 0; a < m;) {   /* ties share their mean rank */
                int32_t b = a + 1;
                while (b < m && row[b].v == row[a].v)
                    b++;
                double r = m > 1 ? (a + b - 1) / 2.0 / (m - 1) : 1.0;
                for (int32_t t = a; t < b; t++)
                    o[row[t].j] = isnan(row[t].v) ? row[t].v : (float)r;
                a = b;
            }
            if (drop_first && cols > 0)
                o[0] = 1.0f;   /* left out: drawn in the top colour */
            break;
        }
        }
    }
    *first_share = rows > 0 ? share / rows : NAN;
    if (!isfinite(lo)) {
        lo = 0;
        hi = 1;
    }
    switch (scale) {
    case ATN_SCALE_LINEAR:
        *vmin = fmin(0, lo);   /* attention weights: 0 to the largest, as the automatic range */
        *vmax = hi > *vmin ? hi : *vmin + 1;
        break;
    case ATN_SCALE_LOG:
        *vmax = hi > 0 ? fmax(log10(hi), LOG_FLOOR) : 0;
        *vmin = isfinite(pos_lo) ? fmax(log10(pos_lo), LOG_FLOOR) : LOG_FLOOR;
        if (*vmin >= *vmax)
            *vmin = *vmax - 1;
        break;
    case ATN_SCALE_RANK:
        *vmin = 0;
        *vmax = 1;
        break;
    }
    free(row);
    return true;
}

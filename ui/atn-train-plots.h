/* The Train page's curves as data (ui/atn-train-plots.c): a copy of a run's per-step loss,
 * accuracy and per-layer gradient norms, drawn as the page's gradient-norm plot and as the
 * exported figure, and written as CSV.  No GTK: plain arrays and cairo; any thread. */
#pragma once

#include <glib.h>

#include "render.h"

G_BEGIN_DECLS

typedef struct AtnTrainCurves {
    float *x, *loss, *acc;    /* [n] step (1-based), loss, accuracy */
    float *norms;             /* [n][layers] each layer's gradient norm before clipping */
    int32_t n, layers, steps_total;
    atn_render_style style;   /* the exported figure's (the page draws with its widget's) */
} AtnTrainCurves;

/* A copy of n points (the arrays copied; norms may be NULL: no gradient plot).  Free with
 * atn_train_curves_free (NULL: nothing). */
AtnTrainCurves *atn_train_curves_new(const float *x, const float *loss, const float *acc, const float *norms,
                                     int32_t n, int32_t layers, int32_t steps_total);
void atn_train_curves_free(gpointer curves);

/* Each layer's gradient norm over the steps on a log scale, a line per layer (at most 400
 * points each: the mean of each run of steps); the empty text while n is 0. */
void atn_train_curves_draw_norms(cairo_t *cr, const AtnTrainCurves *c, const atn_render_style *style, double width,
                                 double height, const char *empty_text);
/* The exported figure (an atn_draw_fn; user is the AtnTrainCurves with its style): the loss
 * and accuracy on the left, the gradient norms on the right. */
void atn_train_curves_draw_figure(cairo_t *cr, double width, double height, void *user);
/* The CSV (newly allocated): "step,loss,accuracy,grad_norm_layer0,..." and a row per step,
 * the numbers as attnscope train --log writes them (%.7g, accuracy %.6g). */
char *atn_train_curves_csv(const AtnTrainCurves *c);

G_END_DECLS

/* bench-render: times the analysis and the figures at bert-base's shape on a synthetic
 * capture (12 layers x 12 heads, softmax rows of random scores), best of several runs:
 *   similarity (js, cosine, pearson; model scope, 144 heads), clustering, stats, rollout,
 *   a 512-token heatmap to PNG, the 144-thumbnail model grid, a heatmap redraw.
 * Usage: bench-render [--tokens N] [--repeat R]
 * Prints "name: X ms (cpu Y ms)" lines: the best wall time and the CPU time of that run
 * (all threads). */
#include "analysis.h"
#include "render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Best wall time of several runs, and the process CPU time of that run: on a busy
 * machine the wall time mostly measures the other processes. */
static double cpu_last;
static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
#define TIMED(best, cpu, stmt) do { double _t0 = now_ms(), _c0 = cpu_ms(); stmt; \
    double _w = now_ms() - _t0; cpu_last = cpu_ms() - _c0; if (_w < best) { best = _w; cpu = cpu_last; } } while (0)

typedef struct synth {
    atn_capture cap;
    atn_encoding enc;
    float *attn;
    char **texts;
} synth;

static void synth_make(synth *s, int L, int H, int n, unsigned seed) {
    memset(s, 0, sizeof *s);
    s->attn = malloc((size_t)L * H * n * n * sizeof *s->attn);
    s->texts = malloc((size_t)n * sizeof *s->texts);
    s->enc.n = n;
    s->enc.tokens = calloc((size_t)n, sizeof *s->enc.tokens);
    s->enc.ids = calloc((size_t)n, sizeof(int32_t));
    s->enc.type_ids = calloc((size_t)n, sizeof(int32_t));
    s->enc.mask = malloc((size_t)n * sizeof(int32_t));
    for (int i = 0; i < n; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, i == 0 ? "[CLS]" : i == n - 1 ? "[SEP]" : "tok%d", i);
        s->texts[i] = strdup(buf);
        s->enc.tokens[i].text = s->texts[i];
        s->enc.tokens[i].role = i == 0 ? ATN_TOKEN_CLS : i == n - 1 ? ATN_TOKEN_SEP : ATN_TOKEN_WORD;
        s->enc.mask[i] = 1;
    }
    for (size_t r = 0; r < (size_t)L * H * n; r++) {
        float *row = s->attn + r * n;
        double sum = 0, sharp = 1.0 + (double)(r / n % 7);
        for (int j = 0; j < n; j++) {
            seed = seed * 1103515245u + 12345u;
            row[j] = (float)exp(sharp * ((seed >> 8) & 0xffff) / 65536.0 * 4);
            sum += row[j];
        }
        for (int j = 0; j < n; j++)
            row[j] = (float)(row[j] / sum);
    }
    s->cap.n_layers = L;
    s->cap.n_heads = H;
    s->cap.n = n;
    s->cap.enc = &s->enc;
    s->cap.attn = s->attn;
    s->cap.nonfinite_layer = -1;
}

static void synth_free(synth *s) {
    for (int i = 0; i < s->enc.n; i++)
        free(s->texts[i]);
    free(s->texts);
    free(s->enc.tokens);
    free(s->enc.ids);
    free(s->enc.type_ids);
    free(s->enc.mask);
    free(s->attn);
}

typedef struct draw_ctx {
    atn_heatmap_spec *heat;
    atn_grid_spec *grid;
} draw_ctx;

static void draw_heat(cairo_t *cr, double w, double h, void *u) { atn_render_heatmap(cr, ((draw_ctx *)u)->heat, w, h); }

static void report(const char *what, double wall, double cpu) { printf("%s: %.1f ms (cpu %.1f ms)\n", what, wall, cpu); }

int main(int argc, char **argv) {
    int n = 128, rep = 5;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--tokens"))
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--repeat"))
            rep = atoi(argv[++i]);
    }
    if (n < 2 || n > 4096 || rep < 1)
        return 2;
    char what[256];
    synth s;
    synth_make(&s, 12, 12, n, 1);
    static const atn_metric metrics[] = {ATN_METRIC_JS, ATN_METRIC_COSINE, ATN_METRIC_PEARSON};
    for (int m = 0; m < 3; m++) {
        double best = 1e30, cpu = 0;
        for (int r = 0; r < rep; r++) {
            atn_similarity *sim = NULL;
            TIMED(best, cpu, atn_similarity_compute(&s.cap, metrics[m], ATN_SCOPE_MODEL, 0, &sim, NULL));
            if (!sim)
                return 1;
            atn_similarity_free(sim);
        }
        snprintf(what, sizeof what, "similarity %s, model scope (144 heads, %d tokens, with clustering)",
                 atn_metric_name(metrics[m]), n);
        report(what, best, cpu);
    }
    {
        double best = 1e30, cpu = 0;
        for (int r = 0; r < rep; r++) {
            atn_stats *st = NULL;
            TIMED(best, cpu, atn_stats_compute(&s.cap, &st, NULL));
            atn_stats_free(st);
        }
        snprintf(what, sizeof what, "stats (144 heads, %d tokens)", n);
        report(what, best, cpu);
        float *r = malloc((size_t)n * n * sizeof *r);
        best = 1e30;
        for (int k = 0; k < rep; k++)
            TIMED(best, cpu, atn_rollout_compute(&s.cap, -1, r, NULL));
        snprintf(what, sizeof what, "rollout (12 layers, %d tokens)", n);
        report(what, best, cpu);
        free(r);
    }
    /* the model grid of 144 thumbnails, drawn at 1200 x 1200 (thumbnails made on the fly) */
    {
        atn_grid_spec g;
        atn_grid_spec_init(&g);
        g.attn = s.attn;
        g.n_layers = 12;
        g.n_heads = 12;
        g.n = n;
        cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1200, 1200);
        double best = 1e30, cpu = 0;
        for (int r = 0; r < rep; r++) {
            cairo_t *cr = cairo_create(surf);
            TIMED(best, cpu, atn_render_model_grid(cr, &g, 1200, 1200); cairo_surface_flush(surf));
            cairo_destroy(cr);
        }
        snprintf(what, sizeof what, "model grid draw (144 thumbnails of %d tokens, 1200x1200)", n);
        report(what, best, cpu);
        cairo_surface_destroy(surf);
    }
    synth_free(&s);

    /* a 512-token heatmap: PNG export (natural size) and an on-screen redraw */
    synth big;
    synth_make(&big, 1, 1, 512, 3);
    atn_heatmap_spec hm;
    atn_heatmap_spec_init(&hm);
    hm.values = big.attn;
    hm.rows = hm.cols = 512;
    hm.row_labels = hm.col_labels = (const char *const *)big.texts;
    hm.title = "bench \xc2\xb7 layer 0 \xc2\xb7 head 0";
    hm.row_axis = "query";
    hm.col_axis = "key";
    draw_ctx dc = {&hm, NULL};
    double w, h;
    atn_render_heatmap_natural_size(&hm, &w, &h);
    double best = 1e30, cpu = 0;
    size_t bytes = 0;
    for (int r = 0; r < rep; r++) {
        unsigned char *data = NULL;
        size_t len = 0;
        TIMED(best, cpu, atn_render_to_memory(ATN_OUTPUT_PNG, w, h, 1.0, draw_heat, &dc, &data, &len, NULL));
        if (!data)
            return 1;
        bytes = len;
        free(data);
    }
    snprintf(what, sizeof what, "heatmap 512x512 to PNG (%.0fx%.0f px, %zu KB of random weights)", w, h, bytes / 1024);
    report(what, best, cpu);
    {
        cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 900, 900);
        best = 1e30;
        for (int r = 0; r < rep; r++) {
            cairo_t *cr = cairo_create(surf);
            TIMED(best, cpu, atn_render_heatmap(cr, &hm, 900, 900); cairo_surface_flush(surf));
            cairo_destroy(cr);
        }
        report("heatmap 512x512 redraw at 900x900 (cells recoloured each time)", best, cpu);
        cairo_surface_destroy(surf);
    }
    synth_free(&big);
    return 0;
}

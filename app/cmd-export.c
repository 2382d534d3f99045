/* attnscope export: the figures of ui/render as PNG, SVG or PDF files — one head's heatmap,
 * the model grid, the head-to-head similarity matrix, the head view, the trace sheet and
 * the attention rollout, attention flow and norm-based attention.  Files go through a temporary name and a rename. */
#include "cli.h"
#include "trace-keys.h"
#include "cli-figure.h"
#include "render.h"
#include "colour-scale.h"
#include "word-merge.h"

#include <math.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef enum fig_kind { FIG_HEATMAP, FIG_GRID, FIG_SIMILARITY, FIG_HEADVIEW, FIG_TRACE, FIG_ROLLOUT, FIG_FLOW,
                         FIG_NORM } fig_kind;

static const char *const kind_names[] = {"heatmap", "grid", "similarity", "headview", "trace", "rollout", "flow", "norm", NULL};

typedef struct export_opts {
    fig_kind kind;
    long layer, head, query;
    long top;   /* trace: the keys listed above 16 (trace-keys.h), as trace --top and the window */
    bool layer_given, query_given;
    atn_metric metric;
    atn_scope scope;
    atn_colormap cmap;
    double scale, width, height, font_scale;
    const char *title;
    atn_render_style style;
    bool no_values;
    const char *range;    /* --range A:B: heatmap and rollout cropped to tokens A..B-1 on both axes */
    bool fixed_scale;     /* --color-scale fixed: 0..1 for every head (the default with --all-heads) */
    const char *color_scale;
    atn_colour_scale colours;   /* --scale linear|log|rank (or --color-scale log|rank): heatmap, rollout */
    bool drop_first;            /* --drop-first: the first key column left out of the colours */
    bool words;                 /* --words: word pieces merged into words (heatmap, rollout) */
    const char *folder;   /* --all-heads: made when its first file is written */
    char whatif[256];     /* the what-if options given, for the titles ("" none) */
    bool stack_given;     /* --stack encoder|decoder|cross: an encoder-decoder's stack */
    atn_stack_kind stack;
} export_opts;

/* One figure to draw: the spec of its kind. */
typedef struct figure {
    fig_kind kind;
    atn_heatmap_spec heat;
    atn_grid_spec grid;
    atn_similarity_spec sim;
    atn_headview_spec head;
    atn_trace_sheet_spec trace;
} figure;

static void draw_figure(cairo_t *cr, double w, double h, void *user) {
    figure *f = user;
    switch (f->kind) {
    case FIG_HEATMAP:
    case FIG_ROLLOUT:
    case FIG_FLOW:
    case FIG_NORM: atn_render_heatmap(cr, &f->heat, w, h); break;
    case FIG_GRID: atn_render_model_grid(cr, &f->grid, w, h); break;
    case FIG_SIMILARITY: atn_render_similarity(cr, &f->sim, w, h); break;
    case FIG_HEADVIEW: atn_render_headview(cr, &f->head, w, h); break;
    case FIG_TRACE: atn_render_trace_sheet(cr, &f->trace, w, h); break;
    }
}

static void natural_size(figure *f, double *w, double *h) {
    switch (f->kind) {
    case FIG_HEATMAP:
    case FIG_ROLLOUT:
    case FIG_FLOW:
    case FIG_NORM: atn_render_heatmap_natural_size(&f->heat, w, h); break;
    case FIG_GRID: atn_render_model_grid_natural_size(&f->grid, w, h); break;
    case FIG_SIMILARITY: atn_render_similarity_natural_size(&f->sim, w, h); break;
    case FIG_HEADVIEW: atn_render_headview_natural_size(&f->head, w, h); break;
    case FIG_TRACE: atn_render_trace_sheet_natural_size(&f->trace, w, h); break;
    }
}

static int write_figure(figure *f, const export_opts *o, const char *path, atn_output_format fmt) {
    double w, h;
    natural_size(f, &w, &h);
    if (o->width > 0 && o->height > 0) {
        w = o->width;
        h = o->height;
    } else if (o->width > 0) {
        h = f->kind == FIG_TRACE ? atn_render_trace_sheet_height(&f->trace, o->width) : h * o->width / w;
        w = o->width;
    } else if (o->height > 0) {
        w = w * o->height / h;
        h = o->height;
    }
    return cli_write_figure(path, fmt, w, h, o->scale, draw_figure, f, o->folder);
}

static bool ends_with_slash(const char *s) {
    size_t n = strlen(s);
    return n > 0 && s[n - 1] == '/';
}

static int usage(void) {
    printf("Usage: attnscope export KIND --model M [--text T] [options] -o FILE.png|svg|pdf\n\n"
           "KIND is one of:\n"
           "  heatmap     one head's attention (--layer L --head H); --all-heads -o DIR/ writes every head\n"
           "  grid        every layer x head as thumbnails\n"
           "  similarity  head-to-head similarity (--metric js|cosine|pearson, --scope layer|model)\n"
           "  headview    token lines as bertviz draws them (--layer L --head H [--query I])\n"
           "  trace       one head's arithmetic for one query token (--layer L --head H --query I [--top K]:\n"
           "              above 16 keys the top K by weight, the first and last 2, the query and the\n"
           "              largest score, and the weighted sum's K largest a_j·‖v_j‖; default 8)\n"
           "  rollout     attention rollout (Abnar & Zuidema) through layers 0..L (--layer, default all)\n"
           "  flow        attention flow (Abnar & Zuidema): max-flow through layers 0..L (--layer, default\n"
           "              all); slow for long inputs (n^2 max-flows), Ctrl-C stops it\n"
           "  norm        norm-based attention ||a f(x)|| (Kobayashi et al.) of one head (--layer L --head H,\n"
           "              --head all: the layer's heads summed); BERT-like encoders and GPT-2\n\n"
           "Options:\n"
           "  --colormap viridis|magma|cividis|greys|rdbu   (default viridis)\n"
           "  --scale S          PNG pixels per point, e.g. 2 for slides (default 1)\n"
           "  --width W --height H   figure size in points (default: grows with the tokens)\n"
           "  --font-scale F     larger or smaller text (default 1)\n"
           "  --title TEXT       replace the title;  --dark  light text on a dark background\n"
           "  --no-values        never print numbers inside heatmap cells\n"
           "  --range A:B        heatmap, rollout, flow, norm: only tokens A..B-1 on both axes (as a Python slice;\n"
           "                     the colours from 0 to the crop's largest weight)\n"
           "  --color-scale head|fixed   heatmap colours from 0 to the head's largest weight, or\n"
           "                     0 to 1 for every head (default: head; fixed with --all-heads,\n"
           "                     so the files compare)\n"
           "  --scale linear|log|rank   heatmap, rollout: colours by the weight, its log10, or its\n"
           "                     rank in its query row (attention sinks leave the rest visible)\n"
           "  --drop-first       heatmap, rollout: the first token's column left out of the colours\n"
           "                     (its mean share is said under the title)\n"
           "  --words            heatmap, rollout: word pieces merged into words (a word's row: the\n"
           "                     mean of its pieces' rows; its column: the sum of their columns)\n"
           "  --format png|svg|pdf   for --all-heads (default png)\n"
           "  --stack encoder|decoder|cross   an encoder-decoder's (T5, BART, Marian; --target TEXT)\n"
           "                     heatmap, grid and headview of that stack: cross-attention has the target\n"
           "                     tokens down (headview: on the left) and the source tokens across (on the\n"
           "                     right; default encoder)\n"
           "Common: --model M, --text T [--text-pair T2], --ids ..., --device cpu|cuda|auto\n"
           "   or: --attention FILE (an attention file, docs/attention-file.md: every figure but trace)\n");
    return 0;
}

static bool parse_opts(cli_args *a, export_opts *o, const char **out, const char **format, bool *all_heads) {
    bool ok = true;
    memset(o, 0, sizeof *o);
    const char *kind = a->n_positional > 0 ? a->positional[0] : NULL;
    if (!kind) {
        cli_error("attnscope export: which figure? heatmap, grid, similarity, headview, trace, rollout, flow "
                  "or norm");
        return false;
    }
    int k = 0;
    while (kind_names[k] && strcmp(kind_names[k], kind))
        k++;
    if (!kind_names[k]) {
        cli_error("attnscope export: unknown figure \"%s\" (heatmap, grid, similarity, headview, trace, rollout, "
                  "flow, norm)",
                  kind);
        return false;
    }
    /* the kind is consumed: drop it so the unknown-argument check does not see it */
    for (int i = 1; i < a->n_positional; i++)
        a->positional[i - 1] = a->positional[i];
    a->n_positional--;
    o->kind = (fig_kind)k;
    o->layer_given = cli_get(a, "layer") != NULL;
    o->query_given = cli_get(a, "query") != NULL;
    /* -1: rollout and flow through every layer; headview with no query picked; norm's
       --head all: the layer's heads summed (-1) */
    bool through = o->kind == FIG_ROLLOUT || o->kind == FIG_FLOW;
    o->layer = cli_get_int(a, "layer", through ? -1 : 0, through ? -1 : 0, CLI_MAX_INDEX, &ok);
    const char *head_arg = cli_get(a, "head");
    if (o->kind == FIG_NORM && head_arg && !strcmp(head_arg, "all"))
        o->head = -1;
    else
        o->head = cli_get_int(a, "head", 0, 0, CLI_MAX_INDEX, &ok);
    o->query = cli_get_int(a, "query", o->kind == FIG_HEADVIEW ? -1 : 0, o->kind == FIG_HEADVIEW ? -1 : 0,
                           CLI_MAX_INDEX, &ok);
    o->top = cli_get_int(a, "top", ATN_TRACE_TOP_DEFAULT, 1, CLI_MAX_INDEX, &ok);
    if (cli_get(a, "top") && o->kind != FIG_TRACE) {
        cli_error("attnscope export: --top goes with trace (the keys its tables list)");
        ok = false;
    }
    /* --scale is the PNG's pixels per point, or, as a word, the heatmap's colour scale */
    const char *scale_word = cli_get(a, "scale");
    o->colours = ATN_SCALE_LINEAR;
    if (scale_word && atn_colour_scale_parse(scale_word, &o->colours))
        o->scale = 1.0;
    else if (scale_word && isalpha((unsigned char)scale_word[0])) {
        cli_error("attnscope export: --scale must be a number (pixels per point) or linear, log or rank, not \"%s\"",
                  scale_word);
        ok = false;
    } else
        o->scale = cli_get_double(a, "scale", 1.0, 0.05, 16, &ok);
    o->drop_first = cli_flag(a, "drop-first");
    o->words = cli_flag(a, "words");
    o->width = cli_get_double(a, "width", 0, 0, 100000, &ok);     /* 0: grows with the tokens */
    o->height = cli_get_double(a, "height", 0, 0, 100000, &ok);
    o->font_scale = cli_get_double(a, "font-scale", 1.0, 0.25, 8, &ok);
    o->title = cli_get(a, "title");
    o->no_values = cli_flag(a, "no-values");
    o->range = cli_get(a, "range");
    if (o->range && o->kind != FIG_HEATMAP && o->kind != FIG_ROLLOUT && o->kind != FIG_FLOW && o->kind != FIG_NORM) {
        cli_error("attnscope export: --range goes with heatmap, rollout, flow and norm");
        return false;
    }
    o->color_scale = cli_get(a, "color-scale");
    if (o->color_scale && (!strcmp(o->color_scale, "log") || !strcmp(o->color_scale, "rank"))) {
        atn_colour_scale_parse(o->color_scale, &o->colours);
        o->color_scale = NULL;
    } else if (o->color_scale && strcmp(o->color_scale, "head") && strcmp(o->color_scale, "fixed")) {
        cli_error("attnscope export: --color-scale must be head, fixed, log or rank, not \"%s\"", o->color_scale);
        ok = false;
    }
    if ((o->colours != ATN_SCALE_LINEAR || o->drop_first) && o->kind != FIG_HEATMAP && o->kind != FIG_ROLLOUT) {
        cli_error("attnscope export: --scale %s and --drop-first go with heatmap and rollout",
                  atn_colour_scale_name(o->colours));
        ok = false;
    }
    if (o->color_scale && !strcmp(o->color_scale, "fixed") && o->kind == FIG_NORM) {
        cli_error("attnscope export norm: --color-scale fixed is a 0 to 1 scale; norms are not shares (use head)");
        ok = false;
    }
    if (o->words && o->kind != FIG_HEATMAP && o->kind != FIG_ROLLOUT) {
        cli_error("attnscope export: --words goes with heatmap and rollout");
        ok = false;
    }
    atn_render_style_init(&o->style, cli_flag(a, "dark"));
    o->style.font_scale = o->font_scale;
    const char *metric = cli_get(a, "metric"), *scope = cli_get(a, "scope"), *cmap = cli_get(a, "colormap");
    o->metric = ATN_METRIC_JS;
    o->scope = o->layer_given ? ATN_SCOPE_LAYER : ATN_SCOPE_MODEL;
    o->cmap = ATN_CMAP_VIRIDIS;
    if (metric && !atn_metric_from_name(metric, &o->metric)) {
        cli_error("attnscope export: --metric must be js, cosine or pearson, not \"%s\"", metric);
        ok = false;
    }
    if (scope && !atn_scope_from_name(scope, &o->scope)) {
        cli_error("attnscope export: --scope must be layer or model, not \"%s\"", scope);
        ok = false;
    }
    if (cmap && !atn_colormap_from_name(cmap, &o->cmap)) {
        cli_error("attnscope export: unknown --colormap \"%s\" (viridis, magma, cividis, greys, rdbu)", cmap);
        ok = false;
    }
    const char *stack = cli_get(a, "stack");
    if (stack) {
        o->stack_given = true;
        if (!atn_stack_kind_parse(stack, &o->stack)) {
            cli_error("attnscope export: --stack must be encoder, decoder or cross, not \"%s\"", stack);
            ok = false;
        } else if (o->stack != ATN_STACK_ENCODER && o->kind != FIG_HEATMAP && o->kind != FIG_GRID &&
                   o->kind != FIG_HEADVIEW) {
            /* similarity, the trace and rollout read square self-attention maps */
            cli_error("attnscope export %s: --stack %s: only heatmap, grid and headview draw the decoder's and the "
                      "cross-attention stacks; %s reads the encoder's self-attention (--stack encoder)",
                      kind_names[o->kind], stack, kind_names[o->kind]);
            ok = false;
        } else if (o->stack != ATN_STACK_ENCODER && o->range) {
            cli_error("attnscope export: --range crops the encoder's tokens; it does not go with --stack %s", stack);
            ok = false;
        }
    }
    *out = cli_get(a, "output");
    *format = cli_get(a, "format");
    *all_heads = cli_flag(a, "all-heads");
    return ok;
}

static bool check_index(const char *what, long v, long n) {
    if (v < 0 || v >= n) {
        cli_error("attnscope export: --%s %ld is out of range (the model has %s 0..%ld)", what, v,
                  !strcmp(what, "layer") ? "layers" : !strcmp(what, "head") ? "heads" : "tokens", n - 1);
        return false;
    }
    return true;
}

/* --layer / --head in range, and a head the layer has (an attention file's layers may have
 * fewer: a head they lack is not drawn as zeros). */
static bool check_head(const atn_capture *cap, long layer, long head) {
    if (!check_index("layer", layer, cap->n_layers) || !check_index("head", head, cap->n_heads))
        return false;
    if (!atn_capture_head_present(cap, (int32_t)layer, (int32_t)head)) {
        cli_error("attnscope export: --head %ld: layer %ld has no head %ld (the attention file's layer has %d heads, "
                  "0..%d)", head, layer, head, cap->layer_heads[layer], cap->layer_heads[layer] - 1);
        return false;
    }
    return true;
}

/* Where the attention comes from: a model's run, or an attention file (model NULL). */
typedef struct source {
    const atn_model *model;
    const atn_capture *cap;
    const char *name;     /* the model's name, or the file's model_id (else its path) */
    bool causal;
    const char **target_tokens;   /* an encoder-decoder's target tokens as shown ([n_tgt]), or NULL */
} source;

/* An attention file's decoder tokens (metadata query_tokens, [n_tgt]) as labels, read as a
 * run's are without a tokenizer ("\u2581The" as "\u2423The"); NULL with err when it has none. */
static char **file_target_labels(const atn_attn_file *file, int32_t n_tgt, atn_error *err) {
    int32_t nq = 0;
    const char *const *q = atn_attn_file_query_tokens(file, &nq);
    if (!q || nq != n_tgt) {
        snprintf(err->message, sizeof err->message, "attnscope export: the attention file has no query_tokens for "
                 "its %d target tokens", (int)n_tgt);
        return NULL;
    }
    char **labels = calloc((size_t)n_tgt + 1, sizeof *labels);
    for (int32_t i = 0; labels && i < n_tgt; i++) {
        char *guess = atn_token_surface_guess(q[i]);
        atn_token_info info = {.text = q[i], .surface = guess};
        labels[i] = atn_render_token_label(q[i], guess ? &info : NULL);
        free(guess);
        if (!labels[i]) {
            atn_render_token_labels_free(labels);
            return NULL;
        }
    }
    return labels;
}

/* The stack the figure draws: --stack's of an encoder-decoder, NULL for the capture's own
 * attention (any other model, or the encoder's stack, which is the capture's attention). */
static const atn_stack *chosen_stack(const export_opts *o, const source *src) {
    if (!o->stack_given || o->stack == ATN_STACK_ENCODER)
        return NULL;
    return atn_capture_stack(src->cap, o->stack);
}

/* " · cross-attention" for an encoder-decoder's figure ("" for any other model). */
static const char *stack_title(const export_opts *o, const source *src) {
    if (!src->cap->n_stacks)
        return "";
    switch (o->stack_given ? o->stack : ATN_STACK_ENCODER) {
    case ATN_STACK_DECODER: return " \xc2\xb7 decoder self-attention";
    case ATN_STACK_CROSS: return " \xc2\xb7 cross-attention";
    default: return " \xc2\xb7 encoder self-attention";
    }
}

/* A decoder or cross head (layer, head) of stack st as a heatmap: the target tokens down, the
 * source (cross) or target (decoder, causal) tokens across, axes "target" / "source" for
 * cross-attention. */
static int stack_heatmap(atn_heatmap_spec *s, const atn_stack *st, const source *src, const char **tokens,
                         long layer, long head, void **owned) {
    if (!check_index("layer", layer, st->n_layers) || !check_index("head", head, st->n_heads))
        return CLI_EXIT_USAGE;
    bool cross = st->kind == ATN_STACK_CROSS;
    s->rows = st->n_q;
    s->cols = st->n_k;
    /* the head alone (an attention file read lazily: read and checked now) */
    float *scratch = st->attn ? NULL : malloc((size_t)st->n_q * st->n_k * sizeof *scratch);
    *owned = scratch;
    if (!st->attn && !scratch) {
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    atn_error err = {0};
    if (!(s->values = atn_stack_head_read(src->cap, st, (int32_t)layer, (int32_t)head, scratch, &err)))
        return cli_fail(&err);
    s->row_labels = src->target_tokens;
    s->col_labels = cross ? tokens : src->target_tokens;
    s->row_mask = NULL;
    s->col_mask = cross ? src->cap->enc->mask : NULL;
    s->causal = !cross;   /* the decoder: later target tokens masked */
    s->split = 0;
    s->row_axis = cross ? "target" : "query";
    s->col_axis = cross ? "source" : "key";
    return CLI_EXIT_OK;
}

/* --range A:B against n tokens: 0 <= A < B <= n.  False with the message printed. */
static bool parse_range(const char *text, int32_t n, int32_t *a0, int32_t *b0) {
    char *end = NULL;
    errno = 0;
    long a = strtol(text, &end, 10), b = -1;
    if (end != text && *end == ':' && isdigit((unsigned char)end[1])) {
        const char *t = end + 1;
        b = strtol(t, &end, 10);
    }
    if (errno || *end || b < 0 || a < 0 || a >= b || b > n || !isdigit((unsigned char)text[0])) {
        cli_error("attnscope export: --range must be A:B with 0 <= A < B <= %d (the tokens), not \"%s\"", n, text);
        return false;
    }
    *a0 = (int32_t)a, *b0 = (int32_t)b;
    return true;
}

/* The flow's progress on stderr (cli_report: a bar on a terminal) and Ctrl-C. */
static bool flow_progress(double fraction, atn_stage stage, void *user) {
    (void)stage, (void)user;
    return cli_report(fraction, "attention flow");
}

/* Builds the figure for (layer, head); things it allocates go in *owned (freed by caller). */
static int build(figure *f, const export_opts *o, const source *src, const char **tokens,
                 long layer, long head, void **owned1, void **owned2, char *title, size_t title_size) {
    const atn_capture *cap = src->cap;
    const atn_encoding *enc = cap->enc;
    int32_t n = cap->n;
    atn_error err = {0};
    memset(f, 0, sizeof *f);
    f->kind = o->kind;
    const char *mname = src->name;
    switch (o->kind) {
    case FIG_HEATMAP:
    case FIG_ROLLOUT:
    case FIG_FLOW:
    case FIG_NORM: {
        atn_heatmap_spec *s = &f->heat;
        atn_heatmap_spec_init(s);
        s->rows = s->cols = n;
        s->row_labels = s->col_labels = tokens;
        s->row_mask = s->col_mask = enc->mask;
        s->causal = src->causal;   /* GPT-2: later keys drawn as masked */
        s->split = atn_render_pair_split(enc);   /* a pair's A/B boundary */
        s->colormap = o->cmap;
        s->style = &o->style;
        s->show_values = !o->no_values;
        s->row_axis = "query";
        if (o->fixed_scale && o->kind != FIG_NORM) {   /* norms are not shares: no 0..1 scale */
            s->range.automatic = false;
            s->range.vmin = 0;
            s->range.vmax = 1;
            s->colorbar_note = "fixed 0\xe2\x80\x93" "1";
        } else {
            s->colorbar_note = o->kind == FIG_HEATMAP || o->kind == FIG_NORM ? "0 to head max" : "0 to max";
        }
        const atn_stack *stk = o->kind == FIG_HEATMAP ? chosen_stack(o, src) : NULL;
        if (stk) {
            int rc = stack_heatmap(s, stk, src, tokens, layer, head, owned1);
            if (rc != CLI_EXIT_OK)
                return rc;
            s->colorbar_label = "weight";
            snprintf(title, title_size, "%s%s \xc2\xb7 layer %ld \xc2\xb7 head %ld", mname, stack_title(o, src), layer,
                     head);
        } else if (o->kind == FIG_HEATMAP) {
            if (!check_head(cap, layer, head))
                return CLI_EXIT_USAGE;
            float *scratch = cap->attn ? NULL : malloc((size_t)n * n * sizeof *scratch);   /* on demand */
            *owned1 = scratch;
            if (!cap->attn && !scratch) {
                cli_error("out of memory");
                return CLI_EXIT_FAIL;
            }
            if (!(s->values = atn_capture_head_read(cap, (int32_t)layer, (int32_t)head, scratch, &err)))
                return cli_fail(&err);
            s->col_axis = "key";
            s->colorbar_label = "weight";
            snprintf(title, title_size, "%s%s \xc2\xb7 layer %ld \xc2\xb7 head %ld", mname, stack_title(o, src), layer,
                     head);
        } else if (o->kind == FIG_NORM) {
            if (!src->model) {
                cli_error("attnscope export norm: norm-based attention reads the model's W_O and the run's V; an "
                          "attention file has neither (use --model)");
                return CLI_EXIT_USAGE;
            }
            if (!check_index("layer", layer, cap->n_layers) || (head != -1 && !check_index("head", head, cap->n_heads)))
                return CLI_EXIT_USAGE;
            float *r = malloc((size_t)n * n * sizeof *r);
            if (!r) {
                cli_error("out of memory");
                return CLI_EXIT_FAIL;
            }
            *owned1 = r;
            if (atn_norm_attention_compute(src->model, cap, (int32_t)layer, (int32_t)head, r, &err))
                return cli_fail(&err);
            s->values = r;
            s->col_axis = "key";
            s->colorbar_label = "\xe2\x80\x96\xce\xb1 f(x)\xe2\x80\x96";
            if (head < 0)
                snprintf(title, title_size, "%s \xc2\xb7 layer %ld \xc2\xb7 norm-based attention, heads summed",
                         mname, layer);
            else
                snprintf(title, title_size, "%s \xc2\xb7 layer %ld \xc2\xb7 head %ld \xc2\xb7 norm-based attention",
                         mname, layer, head);
        } else {
            if (layer >= cap->n_layers || layer < -1) {
                check_index("layer", layer, cap->n_layers);
                return CLI_EXIT_USAGE;
            }
            float *r = malloc((size_t)n * n * sizeof *r);
            if (!r) {
                cli_error("out of memory");
                return CLI_EXIT_FAIL;
            }
            *owned1 = r;
            atn_status st = o->kind == FIG_FLOW ? atn_flow_compute(cap, (int32_t)layer, r, flow_progress, NULL, &err)
                                                : atn_rollout_compute(cap, (int32_t)layer, r, &err);
            if (st)
                return cli_fail(&err);
            s->values = r;
            s->col_axis = "input token";
            s->colorbar_label = "share";
            long last = layer < 0 ? cap->n_layers - 1 : layer;
            const char *what = o->kind == FIG_FLOW ? "attention flow" : "attention rollout";
            if (last == 0)
                snprintf(title, title_size, "%s \xc2\xb7 %s of layer 0", mname, what);
            else
                snprintf(title, title_size, "%s \xc2\xb7 %s through layers 0\xe2\x80\x93%ld", mname, what, last);
        }
        int32_t crop0 = 0;   /* the first token shown (--range) */
        if (o->range) {
            int32_t a0, b0;
            if (!parse_range(o->range, n, &a0, &b0))
                return CLI_EXIT_USAGE;
            s->stride = (size_t)n;   /* the block [a0, b0) x [a0, b0) of the head, in place */
            s->values += (size_t)a0 * n + a0;
            s->rows = s->cols = b0 - a0;
            s->row_labels = s->col_labels = tokens + a0;
            s->row_mask = s->col_mask = enc->mask + a0;
            crop0 = a0;
            size_t len = strlen(title);
            snprintf(title + len, title_size - len, " \xc2\xb7 tokens %d\xe2\x80\x93%d", a0, b0 - 1);
        }
        float *scaled_room = NULL;   /* with --words: where the colour scale writes (inside owned2) */
        if (o->words) {   /* rows: mean over a word's pieces; columns: sum over them */
            int32_t m = s->rows, nw;
            int32_t *start = malloc(((size_t)m + 1) * sizeof *start);
            if (!start) {
                cli_error("out of memory");
                return CLI_EXIT_FAIL;
            }
            atn_word_groups(enc->tokens + crop0, m, start, &nw);
            char **labels = atn_word_labels(s->row_labels, start, nw);
            size_t cells = (size_t)nw * nw, text = 0;
            for (int32_t w = 0; labels && w < nw; w++)
                text += strlen(labels[w]) + 1;
            /* one block: the merged values, room for a colour scale's and its legend, the labels */
            char *block = labels ? malloc(2 * cells * sizeof(float) + 160 + (size_t)nw * sizeof(char *) + text) : NULL;
            if (!block) {
                for (int32_t w = 0; labels && w < nw; w++)
                    free(labels[w]);
                free(labels);
                free(start);
                cli_error("out of memory");
                return CLI_EXIT_FAIL;
            }
            float *wv = (float *)(void *)block;
            atn_word_merge(s->values, s->stride ? s->stride : (size_t)s->cols, start, nw, wv);
            scaled_room = wv + cells;
            char **lab = (char **)(void *)(block + 2 * cells * sizeof(float) + 160);
            char *p = (char *)(lab + nw);
            for (int32_t w = 0; w < nw; w++) {
                size_t len = strlen(labels[w]) + 1;
                memcpy(p, labels[w], len);
                lab[w] = p;
                p += len;
                free(labels[w]);
            }
            free(labels);
            int32_t split = 0;
            for (int32_t w = 0; w < nw; w++)
                if (s->split > 0 && start[w] + crop0 == s->split)
                    split = w;
            free(start);
            *owned2 = block;
            s->values = wv;
            s->stride = 0;
            s->rows = s->cols = nw;
            s->row_labels = s->col_labels = (const char *const *)lab;
            s->row_mask = s->col_mask = NULL;
            s->split = split;
            size_t len = strlen(title);
            snprintf(title + len, title_size - len, " \xc2\xb7 words");
        }
        if (o->colours != ATN_SCALE_LINEAR || o->drop_first) {   /* log, rank, the first column left out */
            size_t cells = (size_t)s->rows * s->cols;
            /* the values, then the legend's text */
            float *v = scaled_room ? scaled_room : malloc(cells * sizeof *v + 160);
            double vmin, vmax, share;
            if (!v || !atn_colour_scale_apply(s->values, s->rows, s->cols, s->stride ? s->stride : (size_t)s->cols,
                                              o->colours, o->drop_first, s->causal, v, &vmin, &vmax, &share)) {
                if (v != scaled_room)
                    free(v);
                cli_error("out of memory");
                return CLI_EXIT_FAIL;
            }
            if (v != scaled_room)
                *owned2 = v;
            s->number_values = s->values;   /* the cells' numbers stay the weights */
            s->number_stride = s->stride;
            s->values = v;
            s->stride = 0;
            if (!(o->colours == ATN_SCALE_LINEAR && o->fixed_scale)) {
                s->range = (atn_value_range){.automatic = false, .vmin = vmin, .vmax = vmax};
                s->colorbar_note = o->colours == ATN_SCALE_LOG    ? "smallest to largest"
                                   : o->colours == ATN_SCALE_RANK ? "0 lowest, 1 highest"
                                                                  : "0 to max without 1st";
            }
            if (o->colours != ATN_SCALE_LINEAR)
                s->colorbar_label = atn_colour_scale_label(o->colours);
            if (o->drop_first) {
                char *legend = (char *)(v + cells);
                snprintf(legend, 160,
                         "First token's column left out of the colours (top colour): it takes %.0f%% of each row on "
                         "average",
                         100 * share);
                s->legend = legend;
            }
        }
        s->title = o->title ? o->title : title;
        break;
    }
    case FIG_GRID: {
        atn_grid_spec *s = &f->grid;
        atn_grid_spec_init(s);
        s->attn = cap->attn;
        s->cap = cap;   /* heads on demand: drawn one at a time */
        s->n_layers = cap->n_layers;
        s->n_heads = cap->n_heads;
        s->n = n;
        s->causal = src->causal;
        s->colormap = o->cmap;
        s->style = &o->style;
        s->kv_group = cap->n_kv_heads > 0 ? cap->n_heads / cap->n_kv_heads : 1;   /* GQA: the K/V groups */
        atn_stats *st = NULL;
        if (atn_stats_compute(cap, &st, &err) == ATN_OK) {
            const char **notes = malloc((size_t)cap->n_layers * cap->n_heads * sizeof *notes);
            if (notes)
                for (int32_t c = 0; c < cap->n_layers * cap->n_heads; c++)
                    notes[c] = atn_head_stats_absent(&st->heads[c]) ? NULL : atn_pattern_name(st->heads[c].pattern);
            s->head_notes = notes;
            *owned1 = notes;
            *owned2 = st;
        }
        snprintf(title, title_size, "%s%s \xc2\xb7 every head (%d layers \xc3\x97 %d heads, %d tokens)", mname,
                 stack_title(o, src), cap->n_layers, cap->n_heads, n);
        const atn_stack *sk = chosen_stack(o, src);
        if (sk) {   /* a decoder or cross stack: its heads, no pattern labels (those are the encoder's) */
            s->attn = sk->attn;   /* NULL: its heads read one at a time (atn_stack_head_read) */
            s->cap = src->cap;
            s->stack = sk;
            s->n_layers = sk->n_layers;
            s->n = sk->n_q;
            s->n_k = sk->n_k;
            s->causal = sk->kind == ATN_STACK_DECODER;
            s->head_notes = NULL;
            s->kv_group = 1;
            if (sk->kind == ATN_STACK_CROSS)
                snprintf(title, title_size, "%s%s \xc2\xb7 every head (%d layers \xc3\x97 %d heads, %d target "
                         "\xc3\x97 %d source tokens)", mname, stack_title(o, src), sk->n_layers, sk->n_heads, sk->n_q,
                         sk->n_k);
            else
                snprintf(title, title_size, "%s%s \xc2\xb7 every head (%d layers \xc3\x97 %d heads, %d tokens)", mname,
                         stack_title(o, src), sk->n_layers, sk->n_heads, sk->n_q);
        }
        s->title = o->title ? o->title : title;
        break;
    }
    case FIG_SIMILARITY: {
        if (o->scope == ATN_SCOPE_LAYER && !check_index("layer", layer, cap->n_layers))
            return CLI_EXIT_USAGE;
        atn_similarity *sim;
        if (atn_similarity_compute_progress(cap, o->metric, o->scope, (int32_t)layer, cli_keep_going, NULL, &sim,
                                            &err))
            return cli_fail(&err);
        *owned2 = sim;
        atn_similarity_spec *s = &f->sim;
        atn_similarity_spec_init(s);
        s->sim = sim;
        s->colormap = o->cmap;
        s->style = &o->style;
        s->title = o->title;
        break;
    }
    case FIG_HEADVIEW: {
        const atn_stack *stk = chosen_stack(o, src);
        if (stk) {   /* a decoder or cross head: target tokens left, the stack's keys right */
            if (!check_index("layer", layer, stk->n_layers) || !check_index("head", head, stk->n_heads) ||
                (o->query_given && o->query != -1 && !check_index("query", o->query, stk->n_q)))
                return CLI_EXIT_USAGE;
            bool cross = stk->kind == ATN_STACK_CROSS;
            atn_headview_spec *s = &f->head;
            atn_headview_spec_init(s);
            /* the head alone (an attention file read lazily: read and checked now) */
            float *hs = stk->attn ? NULL : malloc((size_t)stk->n_q * stk->n_k * sizeof *hs);
            *owned1 = hs;
            if (!stk->attn && !hs) {
                cli_error("out of memory");
                return CLI_EXIT_FAIL;
            }
            atn_error herr = {0};
            if (!(s->attn[0] = atn_stack_head_read(src->cap, stk, (int32_t)layer, (int32_t)head, hs, &herr)))
                return cli_fail(&herr);
            s->head_ids[0] = (int32_t)head;
            s->n_shown = 1;
            s->n = stk->n_q;
            s->tokens = src->target_tokens;
            s->n_k = stk->n_k;
            s->key_tokens = cross ? tokens : src->target_tokens;
            s->key_mask = cross ? enc->mask : NULL;
            s->selected_query = (int32_t)o->query;
            s->style = &o->style;
            snprintf(title, title_size, "%s%s \xc2\xb7 layer %ld \xc2\xb7 head %ld", mname, stack_title(o, src), layer,
                     head);
            s->title = o->title ? o->title : title;
            break;
        }
        if (!check_head(cap, layer, head))
            return CLI_EXIT_USAGE;
        if (o->query_given && o->query != -1 && !check_index("query", o->query, n))
            return CLI_EXIT_USAGE;
        atn_headview_spec *s = &f->head;
        atn_headview_spec_init(s);
        float *scratch = cap->attn ? NULL : malloc((size_t)n * n * sizeof *scratch);   /* on demand */
        *owned1 = scratch;
        if (!cap->attn && !scratch) {
            cli_error("out of memory");
            return CLI_EXIT_FAIL;
        }
        if (!(s->attn[0] = atn_capture_head_read(cap, (int32_t)layer, (int32_t)head, scratch, &err)))
            return cli_fail(&err);
        s->head_ids[0] = (int32_t)head;
        s->n_shown = 1;
        s->n = n;
        s->tokens = tokens;
        s->mask = enc->mask;
        s->selected_query = (int32_t)o->query;
        s->style = &o->style;
        snprintf(title, title_size, "%s \xc2\xb7 layer %ld \xc2\xb7 head %ld", mname, layer, head);
        s->title = o->title ? o->title : title;
        break;
    }
    case FIG_TRACE: {
        atn_trace *t;
        if (atn_trace_compute(src->model, cap, (int32_t)layer, (int32_t)head, (int32_t)o->query, &t, &err))
            return cli_fail(&err);
        *owned2 = t;
        atn_trace_sheet_spec *s = &f->trace;
        atn_trace_sheet_spec_init(s);
        s->trace = t;
        s->token_labels = tokens;
        s->model_name = mname;
        s->n_heads = cap->n_heads;
        s->top_k = (int32_t)o->top;
        s->style = &o->style;
        break;
    }
    }
    return CLI_EXIT_OK;
}

static void release(const export_opts *o, void *owned1, void *owned2) {
    free(owned1);
    if (!owned2)
        return;
    switch (o->kind) {
    case FIG_HEATMAP:
    case FIG_ROLLOUT: free(owned2); break;   /* the values on a log / rank scale */
    case FIG_GRID: atn_stats_free(owned2); break;
    case FIG_SIMILARITY: atn_similarity_free(owned2); break;
    case FIG_TRACE: atn_trace_free(owned2); break;
    default: break;
    }
}

static int export_one(const export_opts *o, const source *src, const char **tokens,
                      long layer, long head, const char *path, atn_output_format fmt) {
    figure f;
    void *owned1 = NULL, *owned2 = NULL;
    char title[512];
    title[0] = 0;
    int rc = build(&f, o, src, tokens, layer, head, &owned1, &owned2, title, sizeof title);
    if (rc == CLI_EXIT_OK && !o->title && title[0] && o->whatif[0]) {   /* a changed model's figure says so */
        size_t len = strlen(title);
        snprintf(title + len, sizeof title - len, " \xc2\xb7 %s", o->whatif);
    }
    if (rc == CLI_EXIT_OK)
        rc = write_figure(&f, o, path, fmt);
    release(o, owned1, owned2);
    return rc;
}

int cmd_export(int argc, char **argv) {
    cli_args a;
    static const char *const flags[] = {"help", "all-heads", "dark", "no-values", "drop-first", "words", CLI_INTERVENTION_FLAGS,
                                        NULL};
    if (!cli_parse(&a, "attnscope export", argc, argv, flags))
        return CLI_EXIT_USAGE;
    if (cli_flag(&a, "help"))
        return usage();
    export_opts o;
    const char *out, *format;
    bool all_heads;
    if (!parse_opts(&a, &o, &out, &format, &all_heads))
        return CLI_EXIT_USAGE;
    if (!out) {
        cli_error("attnscope export: -o FILE.png|svg|pdf is required (or -o DIR/ with --all-heads)");
        return CLI_EXIT_USAGE;
    }
    atn_output_format fmt = ATN_OUTPUT_PNG;
    if (all_heads) {
        if (o.kind != FIG_HEATMAP && o.kind != FIG_HEADVIEW && o.kind != FIG_TRACE && o.kind != FIG_NORM) {
            cli_error("attnscope export: --all-heads goes with heatmap, headview, trace or norm");
            return CLI_EXIT_USAGE;
        }
        if (format) {
            char probe[16];
            snprintf(probe, sizeof probe, "x.%s", format);
            if (!atn_output_format_from_path(probe, &fmt)) {
                cli_error("attnscope export: --format must be png, svg or pdf, not \"%s\"", format);
                return CLI_EXIT_USAGE;
            }
        }
    } else {
        if (format) {
            cli_error("attnscope export: --format goes with --all-heads; name the file FILE.png|svg|pdf");
            return CLI_EXIT_USAGE;
        }
        if (!atn_output_format_from_path(out, &fmt)) {
            cli_error("attnscope export: output \"%s\" must end in .png, .svg or .pdf", out);
            return CLI_EXIT_USAGE;
        }
    }
    if (all_heads) {
        /* a folder that is not there yet is made with the first file (write_figure), so a
         * model that fails to load leaves nothing behind; something else there is refused now */
        struct stat sb;
        if (stat(out, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
            cli_error("%s: --all-heads needs a folder here", out);
            return CLI_EXIT_USAGE;
        }
        o.folder = out;
    }
    /* one shared scale for a folder of heads, so the files compare; one head: its own */
    o.fixed_scale = o.color_scale ? !strcmp(o.color_scale, "fixed") : all_heads;
    atn_model *model = NULL;
    atn_encoding *enc = NULL;
    atn_run *run = NULL;
    cli_attention at = {0};
    source src = {0};
    int rc;
    if (cli_attention_wanted(&a)) {
        if (o.kind == FIG_NORM) {
            cli_error("attnscope export norm: norm-based attention reads the model's W_O and the run's V; an "
                      "attention file has neither (use --model)");
            return CLI_EXIT_USAGE;
        }
        if (o.kind == FIG_TRACE) {
            cli_error("attnscope export trace: the trace recomputes one head from the model's weights; an "
                      "attention file has none (use --model)");
            return CLI_EXIT_USAGE;
        }
        /* a heatmap reads one head: the file's other layers are not read; a decoder or cross
           stack's figure reads that stack's heads alone (an encoder-decoder's other stacks are
           neither read nor checked) */
        bool one_stack = o.stack_given && o.stack != ATN_STACK_ENCODER;
        rc = o.kind == FIG_HEATMAP || one_stack ? cli_attention_open_lazy(&a, &at) : cli_attention_open(&a, &at);
        src = (source){NULL, at.cap, at.name, at.causal};
    } else {
        rc = cli_model_run(&a, &model, &enc, &run);
        if (rc == CLI_EXIT_OK) {
            src = (source){model, atn_run_capture(run), atn_model_name(model), atn_model_is_causal(model)};
            cli_whatif_title(&a, o.whatif, sizeof o.whatif);   /* the what-if options, for the titles */
        }
    }
    char **target_labels = NULL;
    if (rc == CLI_EXIT_OK && o.stack_given && !src.cap->n_stacks) {
        cli_error("attnscope export: --stack is for encoder-decoder models (T5, BART, Marian); \"%s\" has one "
                  "stack of self-attention", src.name);
        rc = CLI_EXIT_USAGE;
    } else if (rc == CLI_EXIT_OK && src.cap->n_stacks && src.cap->target_ids) {
        /* the target's tokens as the source's are shown ("▁Das") */
        atn_encoding *te = NULL;
        atn_error terr = {0};
        if (!model)   /* an attention file: its query_tokens */
            target_labels = file_target_labels(at.file, src.cap->n_tgt, &terr);
        else if (atn_model_encode_ids(model, src.cap->target_ids, NULL, NULL, src.cap->n_tgt, &te, &terr) == ATN_OK)
            target_labels = atn_render_token_labels(model, te);
        atn_encoding_free(te);
        if (!target_labels) {
            cli_error("%s", terr.message[0] ? terr.message : "out of memory");
            rc = CLI_EXIT_FAIL;
        }
        src.target_tokens = (const char **)target_labels;
    }
    if (rc == CLI_EXIT_OK) {
        const atn_capture *cap = src.cap;
        /* the tokens as the window shows them ("␣the" for GPT-2's "\u0120the"; an attention
           file's texts as they are) */
        char **labels = atn_render_token_labels(model, cap->enc);
        const char **tokens = (const char **)labels;
        if (!tokens) {
            cli_error("out of memory");
            rc = CLI_EXIT_FAIL;
        } else if (!all_heads) {
            rc = export_one(&o, &src, tokens, o.layer, o.head, out, fmt);
        } else {
            size_t len = strlen(out) + 64;
            char *path = malloc(len);
            const atn_stack *st = chosen_stack(&o, &src);   /* a decoder or cross stack: its layers */
            int32_t n_layers = st ? st->n_layers : cap->n_layers;
            int32_t l_from = o.layer_given ? (int32_t)o.layer : 0, l_to = o.layer_given ? (int32_t)o.layer
                                                                                        : n_layers - 1;
            if (o.layer_given && !check_index("layer", o.layer, n_layers))
                rc = CLI_EXIT_USAGE;
            int written = 0;
            for (int32_t l = l_from; path && rc == CLI_EXIT_OK && l <= l_to; l++)
                for (int32_t h = 0; rc == CLI_EXIT_OK && h < cap->n_heads; h++) {
                    if (!st && !atn_capture_head_present(cap, l, h))
                        continue;   /* a head an attention file's layer lacks: no file, not zeros */
                    char *name = atn_render_head_file_name(kind_names[o.kind], l, h, n_layers,
                                                           cap->n_heads, atn_output_format_ext(fmt));
                    snprintf(path, len, "%s%s%s", out, ends_with_slash(out) ? "" : "/", name ? name : "");
                    free(name);
                    rc = export_one(&o, &src, tokens, l, h, path, fmt);
                    if (rc == CLI_EXIT_OK)
                        written++;
                    if (!cli_report((double)written / ((l_to - l_from + 1) * cap->n_heads), "exporting")) {
                        cli_error("interrupted after %d files", written);
                        rc = CLI_EXIT_FAIL;
                    }
                }
            if (!path)
                rc = CLI_EXIT_FAIL;
            else if (rc == CLI_EXIT_OK)
                fprintf(stderr, "attnscope: wrote %d files to %s\n", written, out);
            free(path);
        }
        atn_render_token_labels_free(labels);
    }
    atn_render_token_labels_free(target_labels);
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(model);
    cli_attention_free(&at);
    return rc;
}

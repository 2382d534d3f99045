/* AtnTokenLines: one head as lines between two token columns, drawn by ui/render.
 *
 * Small inputs are drawn in snapshot() into a cached node.  Long ones (hundreds of lines to
 * stroke, tens of ms) are drawn into an image in a worker thread and shown as a texture when
 * ready, so switching heads redraws the heatmap at once and the lines a frame or two later. */
#include "atn-token-lines.h"
#include "atn-token-lines-test.h"

#include "atn-head-words.h"
#include "atn-encdec.h"
#include "atn-worker.h"

#include <glib/gi18n.h>
#include <math.h>

/* At most this many lines are drawn: the strongest ones.  A broad head of 128 tokens has
 * 16,384 faint lines (200+ ms to stroke, and a grey fog to look at); the strongest few per
 * query carry the picture. */
enum { MAX_LINES = 512, ASYNC_MIN_TOKENS = 40 };

struct _AtnTokenLines {
    GtkWidget parent_instance;
    AtnSession *session;
    double font_scale;
    GskRenderNode *node;   /* cached figure (drawn here, or the worker's texture) */
    int node_w, node_h;
    gboolean stale;        /* node shows older data; a worker is drawing the new one */
    GCancellable *job;     /* the drawing in flight */
    guint serial;
    gboolean all_lines;    /* every token's lines; FALSE (default): the focused token's only */
    double threshold;      /* lines at or below this weight are not drawn (default 0.01) */
    int hover_side;        /* the side of the token hovered here: 0 query, 1 key, -1 none */
    GObject *words_owner;  /* keeps words alive (atn_token_lines_set_words), or NULL: tokens */
    const AtnHeadWords *words;
    int32_t *word_mask;    /* [n_words] 0 where every piece is padding; NULL without a mask */
    int pair_token;        /* the token hovered here while a decoder or cross head is shown (its
                              sides are two sequences: kept here, not the session's hover) */
    int span_first, span_count;   /* only these tokens (or words) drawn; count 0: all */
};

G_DEFINE_FINAL_TYPE(AtnTokenLines, atn_token_lines, GTK_TYPE_WIDGET)

static void invalidate(AtnTokenLines *self) {
    self->serial++;
    self->stale = self->node != NULL;   /* shown until the new drawing is ready (long inputs) */
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

/* About the weight of the MAX_LINES-th strongest line (0 when there are fewer lines): a
 * histogram of the weights, one pass, whatever the number of tokens. */
static double line_threshold(const float *a, int rows, int cols, int stride) {
    enum { BINS = 4096 };
    if ((size_t)rows * cols <= MAX_LINES)
        return 0;
    guint32 hist[BINS] = {0};
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            float v = a[(size_t)i * stride + j];
            if (v > 0 && v <= 1)
                hist[MIN((int)(v * BINS), BINS - 1)]++;
        }
    guint64 above = 0;
    for (int b = BINS - 1; b >= 0; b--) {
        above += hist[b];
        if (above >= MAX_LINES)
            return (double)(b + 1) / BINS;   /* lines strictly above this bin's top edge */
    }
    return 0;
}

/* A token of the input as drawn: itself, or in words mode the word holding it, counted from
 * the span's first (-1: none, or outside the span). */
static int item_of(AtnTokenLines *self, int token) {
    int i = self->words && token >= 0 ? atn_head_words_word_of(self->words, token) : token;
    if (i >= 0 && self->span_count > 0)
        i = i >= self->span_first && i < self->span_first + self->span_count ? i - self->span_first : -1;
    return i;
}

/* The token standing for drawn item i (a word: its first token). */
static int token_of(AtnTokenLines *self, int i) {
    if (i >= 0 && self->span_count > 0)
        i += self->span_first;
    return self->words && i >= 0 && i < self->words->n_words ? self->words->start[i] : i;
}

static gboolean fill_spec(AtnTokenLines *self, atn_headview_spec *spec, const atn_render_style *style) {
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (!r)
        return FALSE;
    int layer = atn_session_get_layer(self->session), head = atn_session_get_head(self->session);
    atn_headview_spec_init(spec);
    /* an encoder-decoder's decoder or cross head: the target's tokens left, its keys right */
    gboolean pair = atn_encdec_lines_spec(r, atn_encdec_view_stack(r, atn_session_get_stack(self->session)), layer,
                                          head, spec);
    if (!pair) {
        spec->attn[0] = atn_result_get_head(r, layer, head);
        spec->head_ids[0] = head;
        spec->n_shown = 1;
        spec->n = atn_result_get_n_tokens(r);
        spec->tokens = atn_result_get_tokens(r);
        spec->mask = atn_result_get_mask(r);
    }
    if (!spec->attn[0])
        return FALSE;
    if (!pair && self->words && self->words->start[self->words->n_words] == spec->n) {   /* the head merged into words */
        spec->attn[0] = self->words->values;
        spec->n = self->words->n_words;
        spec->tokens = (const char *const *)self->words->labels;
        spec->mask = self->word_mask;
    }
    if (!pair && self->span_count > 0 && self->span_first + self->span_count <= spec->n) {   /* the heatmap's crop */
        spec->stride = spec->n;
        spec->first = self->span_first;
        spec->attn[0] += (size_t)self->span_first * spec->n + self->span_first;
        spec->tokens = spec->tokens ? spec->tokens + self->span_first : NULL;
        spec->mask = spec->mask ? spec->mask + self->span_first : NULL;
        spec->n = self->span_count;
    }
    spec->selected_query = -1;
    spec->hover_token = pair ? (self->hover_side == 0 ? self->pair_token : -1)
                             : item_of(self, atn_session_get_hover_token(self->session));
    spec->style = style;
    spec->min_weight = self->threshold;
    if (self->all_lines) {
        double th = line_threshold(spec->attn[0], spec->n, spec->n_k > 0 ? spec->n_k : spec->n,
                                   spec->stride > 0 ? spec->stride : (spec->n_k > 0 ? spec->n_k : spec->n));
        if (th > spec->min_weight)
            spec->min_weight = th;
    } else {
        /* as bertviz: the hovered token's lines (into it when it is a key here), else the
         * selected query's */
        int hover = pair ? (self->hover_side >= 0 ? self->pair_token : -1) : spec->hover_token;
        if (hover >= 0 && hover < (spec->n_k > 0 ? spec->n_k : spec->n) && self->hover_side == 1)
            spec->focus_key = hover;
        else if (hover >= 0 && hover < spec->n)
            spec->selected_query = hover;
        else {
            int q = atn_session_get_query(self->session);
            q = pair ? q : item_of(self, q);
            spec->selected_query = q >= 0 && q < spec->n ? q : -1;
        }
    }
    return TRUE;
}

typedef struct lines_job {
    atn_headview_spec spec;
    atn_render_style style;
    AtnResult *result;   /* keeps spec's arrays alive */
    GObject *words_owner;   /* and the words' (NULL: none) */
    int w, h, scale;
    guint serial;
} lines_job;

static void lines_job_free(lines_job *job) {
    g_clear_object(&job->result);
    g_clear_object(&job->words_owner);
    g_free(job);
}

static gpointer lines_run(gpointer data, GCancellable *cancellable) {
    lines_job *job = data;
    int pw = job->w * job->scale, ph = job->h * job->scale;
    cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, pw, ph);
    cairo_t *cr = cairo_create(surf);
    cairo_scale(cr, job->scale, job->scale);
    atn_render_headview(cr, &job->spec, job->w, job->h);
    cairo_destroy(cr);
    cairo_surface_flush(surf);
    int stride = cairo_image_surface_get_stride(surf);
    /* cairo's ARGB32 is premultiplied native-endian 0xAARRGGBB: GDK_MEMORY_DEFAULT */
    g_autoptr(GBytes) bytes = g_bytes_new(cairo_image_surface_get_data(surf), (gsize)stride * ph);
    cairo_surface_destroy(surf);
    return gdk_memory_texture_new(pw, ph, GDK_MEMORY_DEFAULT, bytes, stride);
}

/* Only for the drawing still awaited: atn_worker drops one whose widget went away or that a
 * newer drawing replaced. */
static void lines_done(gpointer owner, gpointer answer, gpointer data) {
    AtnTokenLines *self = ATN_TOKEN_LINES(owner);
    lines_job *job = data;
    GdkTexture *tex = answer;
    if (!tex || job->serial != self->serial || job->w != gtk_widget_get_width(GTK_WIDGET(self)) ||
        job->h != gtk_widget_get_height(GTK_WIDGET(self))) {
        gtk_widget_queue_draw(GTK_WIDGET(self));   /* outdated: draw again */
        return;
    }
    g_clear_pointer(&self->node, gsk_render_node_unref);
    self->node = gsk_texture_node_new(tex, &GRAPHENE_RECT_INIT(0, 0, job->w, job->h));
    self->node_w = job->w;
    self->node_h = job->h;
    self->stale = FALSE;
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void start_job(AtnTokenLines *self, int w, int h) {
    lines_job *job = g_new0(lines_job, 1);
    atn_render_style_for_widget(GTK_WIDGET(self), self->font_scale, &job->style);
    if (!fill_spec(self, &job->spec, &job->style)) {
        g_free(job);
        return;
    }
    job->spec.style = &job->style;
    job->result = g_object_ref(atn_session_get_result(self->session));
    job->words_owner = self->words_owner ? g_object_ref(self->words_owner) : NULL;
    job->w = w;
    job->h = h;
    job->scale = gtk_widget_get_scale_factor(GTK_WIDGET(self));
    job->serial = self->serial;
    /* its priority not lowered: it draws what the user is looking at now */
    atn_worker_start(self, &self->job, ATN_WORKER_NORMAL, lines_run, job, (GDestroyNotify)lines_job_free,
                     g_object_unref, lines_done);
}

static void atn_token_lines_snapshot(GtkWidget *widget, GtkSnapshot *s) {
    AtnTokenLines *self = ATN_TOKEN_LINES(widget);
    int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (w <= 0 || h <= 0 || !r)
        return;
    gboolean fresh = self->node && !self->stale && self->node_w == w && self->node_h == h;
    if (!fresh && self->all_lines && atn_result_get_n_tokens(r) >= ASYNC_MIN_TOKENS) {
        if (!self->job)
            start_job(self, w, h);
    } else if (!fresh) {
        g_clear_pointer(&self->node, gsk_render_node_unref);
        atn_render_style style;
        atn_render_style_for_widget(widget, self->font_scale, &style);
        atn_headview_spec spec;
        if (!fill_spec(self, &spec, &style))
            return;
        GtkSnapshot *sub = gtk_snapshot_new();
        cairo_t *cr = gtk_snapshot_append_cairo(sub, &GRAPHENE_RECT_INIT(0, 0, w, h));
        atn_render_headview(cr, &spec, w, h);
        cairo_destroy(cr);
        self->node = gtk_snapshot_free_to_node(sub);
        self->node_w = w;
        self->node_h = h;
        self->stale = FALSE;
    }
    if (self->node)
        gtk_snapshot_append_node(s, self->node);
}

/* TRUE while a worker is drawing (tests and benchmarks wait for it). */
gboolean atn_token_lines_get_busy(AtnTokenLines *self) {
    g_return_val_if_fail(ATN_IS_TOKEN_LINES(self), FALSE);
    return self->job != NULL;
}

static void atn_token_lines_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                                    int *natural, int *minimum_baseline, int *natural_baseline) {
    *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 200 : 120;
    *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 280 : 400;
}

static void token_at(AtnTokenLines *self, double x, double y, int *side, int *token) {
    *side = -1;
    *token = -1;
    atn_render_style style;
    atn_render_style_for_widget(GTK_WIDGET(self), self->font_scale, &style);
    atn_headview_spec spec;
    if (!fill_spec(self, &spec, &style))
        return;
    int32_t t;
    if (atn_render_headview_token_at(&spec, gtk_widget_get_width(GTK_WIDGET(self)),
                                     gtk_widget_get_height(GTK_WIDGET(self)), x, y, side, &t))
        *token = t;
}

static void on_motion(GtkEventControllerMotion *c, double x, double y, AtnTokenLines *self) {
    int side, token;
    token_at(self, x, y, &side, &token);
    atn_token_lines_hover(self, token >= 0 ? side : -1, token);
}

/* (a word drawn: its first token, in the session) */

static void on_leave(GtkEventControllerMotion *c, AtnTokenLines *self) { atn_token_lines_hover(self, -1, -1); }

void atn_token_lines_hover(AtnTokenLines *self, int side, int token) {
    g_return_if_fail(ATN_IS_TOKEN_LINES(self));
    int new_side = token >= 0 ? side : -1;
    gboolean side_changed = new_side != self->hover_side;
    self->hover_side = new_side;
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    if (r && atn_encdec_view_stack(r, atn_session_get_stack(self->session)) != ATN_STACK_ENCODER) {
        if (side_changed || token != self->pair_token) {   /* a target or source index: kept here */
            self->pair_token = token;
            invalidate(self);
        }
        return;
    }
    token = token_of(self, token);
    if (self->session) {
        if (token == atn_session_get_hover_token(self->session) && side_changed)
            invalidate(self);
        atn_session_set_hover_token(self->session, token);
    }
}

static void on_pressed(GtkGestureClick *g, int n_press, double x, double y, AtnTokenLines *self) {
    int side, token;
    token_at(self, x, y, &side, &token);
    if (self->session && token >= 0 && side == 0)   /* a word: its first token */
        atn_session_set_query(self->session, token_of(self, token));
}

static void on_session_changed(AtnSession *session, GParamSpec *pspec, AtnTokenLines *self) { invalidate(self); }

static void on_hover_changed(AtnSession *session, GParamSpec *pspec, AtnTokenLines *self) {
    /* a token hovered in another view is a query here */
    if (atn_session_get_hover_token(session) < 0)
        self->hover_side = -1;
    invalidate(self);
}

static void atn_token_lines_dispose(GObject *object) {
    AtnTokenLines *self = ATN_TOKEN_LINES(object);
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_clear_object(&self->session);
    atn_worker_cancel(&self->job);
    g_clear_pointer(&self->node, gsk_render_node_unref);
    self->words = NULL;
    g_clear_object(&self->words_owner);
    g_clear_pointer(&self->word_mask, g_free);
    G_OBJECT_CLASS(atn_token_lines_parent_class)->dispose(object);
}

static void atn_token_lines_css_changed(GtkWidget *widget, GtkCssStyleChange *change) {
    GTK_WIDGET_CLASS(atn_token_lines_parent_class)->css_changed(widget, change);
    invalidate(ATN_TOKEN_LINES(widget));
}

static void atn_token_lines_class_init(AtnTokenLinesClass *klass) {
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = atn_token_lines_dispose;
    widget_class->snapshot = atn_token_lines_snapshot;
    widget_class->measure = atn_token_lines_measure;
    widget_class->css_changed = atn_token_lines_css_changed;
    gtk_widget_class_set_css_name(widget_class, "tokenlines");
    gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_IMG);   /* a figure for screen readers */
}

static void atn_token_lines_init(AtnTokenLines *self) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("The attention as lines from each token to the tokens it looks at"), -1);
    self->font_scale = 1.0;
    self->threshold = 0.01;
    self->hover_side = -1;
    self->pair_token = -1;
    gtk_widget_set_vexpand(GTK_WIDGET(self), TRUE);
    GtkEventController *motion = gtk_event_controller_motion_new();
    g_signal_connect(motion, "motion", G_CALLBACK(on_motion), self);
    g_signal_connect(motion, "leave", G_CALLBACK(on_leave), self);
    gtk_widget_add_controller(GTK_WIDGET(self), motion);
    GtkGesture *click = gtk_gesture_click_new();
    g_signal_connect(click, "pressed", G_CALLBACK(on_pressed), self);
    gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(click));
}

GtkWidget *atn_token_lines_new(void) { return g_object_new(ATN_TYPE_TOKEN_LINES, NULL); }

void atn_token_lines_set_session(AtnTokenLines *self, AtnSession *session) {
    g_return_if_fail(ATN_IS_TOKEN_LINES(self));
    if (self->session)
        g_signal_handlers_disconnect_by_data(self->session, self);
    g_set_object(&self->session, session);
    if (session) {
        static const char *const watched[] = {"notify::result", "notify::layer", "notify::head", "notify::query",
                                              "notify::stack"};
        for (guint i = 0; i < G_N_ELEMENTS(watched); i++)
            g_signal_connect(session, watched[i], G_CALLBACK(on_session_changed), self);
        g_signal_connect(session, "notify::hover-token", G_CALLBACK(on_hover_changed), self);
    }
    invalidate(self);
}

void atn_token_lines_set_font_scale(AtnTokenLines *self, double scale) {
    g_return_if_fail(ATN_IS_TOKEN_LINES(self));
    self->font_scale = scale;
    invalidate(self);
}

void atn_token_lines_set_all_lines(AtnTokenLines *self, gboolean all) {
    g_return_if_fail(ATN_IS_TOKEN_LINES(self));
    if (!!all == self->all_lines)
        return;
    self->all_lines = !!all;
    invalidate(self);
}

void atn_token_lines_set_words(AtnTokenLines *self, GObject *owner, const AtnHeadWords *words) {
    g_return_if_fail(ATN_IS_TOKEN_LINES(self));
    if (!words)
        owner = NULL;
    if (owner)
        g_object_ref(owner);
    g_clear_object(&self->words_owner);
    g_clear_pointer(&self->word_mask, g_free);
    self->words_owner = owner;
    self->words = words;
    AtnResult *r = self->session ? atn_session_get_result(self->session) : NULL;
    const int32_t *mask = r ? atn_result_get_mask(r) : NULL;
    if (words && mask && words->start[words->n_words] == atn_result_get_n_tokens(r)) {
        self->word_mask = g_new0(int32_t, words->n_words);   /* a word is padding when all its pieces are */
        for (int w = 0; w < words->n_words; w++)
            for (int i = words->start[w]; i < words->start[w + 1]; i++)
                self->word_mask[w] |= mask[i] != 0;
    }
    invalidate(self);
}

void atn_token_lines_set_span(AtnTokenLines *self, int first, int count) {
    g_return_if_fail(ATN_IS_TOKEN_LINES(self));
    if (count <= 0)
        first = count = 0;
    if (first == self->span_first && count == self->span_count)
        return;
    self->span_first = first;
    self->span_count = count;
    invalidate(self);
}

gboolean atn_token_lines_get_all_lines(AtnTokenLines *self) {
    g_return_val_if_fail(ATN_IS_TOKEN_LINES(self), FALSE);
    return self->all_lines;
}

void atn_token_lines_set_threshold(AtnTokenLines *self, double threshold) {
    g_return_if_fail(ATN_IS_TOKEN_LINES(self));
    threshold = CLAMP(threshold, 0.0, 1.0);
    if (threshold == self->threshold)
        return;
    self->threshold = threshold;
    invalidate(self);
}

int64_t atn_token_lines_get_lines(AtnTokenLines *self, int32_t *from, int32_t *to, int64_t max) {
    g_return_val_if_fail(ATN_IS_TOKEN_LINES(self), 0);
    atn_render_style style;
    atn_render_style_init(&style, FALSE);
    atn_headview_spec spec;
    if (!fill_spec(self, &spec, &style))
        return 0;
    return atn_render_headview_lines(&spec, 0, from, to, max);
}

int atn_token_lines_get_n(AtnTokenLines *self) {
    g_return_val_if_fail(ATN_IS_TOKEN_LINES(self), 0);
    atn_render_style style;
    atn_render_style_init(&style, FALSE);
    atn_headview_spec spec;
    return fill_spec(self, &spec, &style) ? spec.n : 0;
}

const char *atn_token_lines_get_label(AtnTokenLines *self, int i) {
    g_return_val_if_fail(ATN_IS_TOKEN_LINES(self), NULL);
    atn_render_style style;
    atn_render_style_init(&style, FALSE);
    atn_headview_spec spec;
    return fill_spec(self, &spec, &style) && i >= 0 && i < spec.n && spec.tokens ? spec.tokens[i] : NULL;
}

double atn_token_lines_get_weight(AtnTokenLines *self, int from, int to) {
    g_return_val_if_fail(ATN_IS_TOKEN_LINES(self), NAN);
    atn_render_style style;
    atn_render_style_init(&style, FALSE);
    atn_headview_spec spec;
    if (!fill_spec(self, &spec, &style) || from < 0 || to < 0 || from >= spec.n || to >= spec.n)
        return NAN;
    return spec.attn[0][(size_t)from * (spec.stride > 0 ? spec.stride : (spec.n_k > 0 ? spec.n_k : spec.n)) + to];
}

typedef struct lines_figure {
    atn_headview_spec spec;
    atn_render_style style;
    AtnResult *result;
    GObject *words_owner;
    char *title;
} lines_figure;

static void lines_figure_free(gpointer data) {
    lines_figure *f = data;
    g_clear_object(&f->result);
    g_clear_object(&f->words_owner);
    g_free(f->title);
    g_free(f);
}

static void lines_figure_draw(cairo_t *cr, double width, double height, void *data) {
    lines_figure *f = data;
    atn_render_headview(cr, &f->spec, width, height);
}

AtnFigure *atn_token_lines_dup_figure(AtnTokenLines *self) {
    g_return_val_if_fail(ATN_IS_TOKEN_LINES(self), NULL);
    lines_figure *f = g_new0(lines_figure, 1);
    atn_render_style_init(&f->style, FALSE);
    if (!fill_spec(self, &f->spec, &f->style)) {
        g_free(f);
        return NULL;
    }
    f->result = g_object_ref(atn_session_get_result(self->session));
    f->words_owner = self->words_owner ? g_object_ref(self->words_owner) : NULL;
    f->spec.hover_token = -1;
    if (!self->all_lines) {   /* the selected query's lines, not whatever the pointer is on */
        int q = item_of(self, atn_session_get_query(self->session));
        f->spec.selected_query = q >= 0 && q < f->spec.n ? q : -1;
        f->spec.focus_key = -1;
    }
    double w, h;
    atn_render_headview_natural_size(&f->spec, &w, &h);
    g_autofree char *name = g_strdup_printf("lines-L%d-H%d", atn_session_get_layer(self->session),
                                            atn_session_get_head(self->session));
    return atn_figure_new(w, h, lines_figure_draw, f, lines_figure_free, name);
}

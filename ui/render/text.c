/* Text for the figures: one pango context per drawing call, fixed at 72 dpi with hinting
 * off, so a label measures the same on screen, in a PNG at any scale, in SVG and in PDF.
 * Also the style defaults and number formatting every figure shares. */
#include "render-private.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static atn_render_translate_fn translator;
static char language[32];

void atn_render_set_translator(atn_render_translate_fn translate) { translator = translate; }

void atn_render_set_language(const char *lang) {
    snprintf(language, sizeof language, "%s", lang ? lang : "");
}

/* The language Pango shapes and picks fonts for: the program's (atn_render_set_language),
 * else the first of the user's preferred ones (PANGO_LANGUAGE, LANGUAGE), else the locale's.
 * Han characters take the face of that language: Noto Sans CJK SC for zh-cn, where a
 * C.UTF-8 locale alone gets fontconfig's first CJK face (JP). */
static PangoLanguage *figure_language(void) {
    if (language[0])
        return pango_language_from_string(language);
    PangoLanguage **pref = pango_language_get_preferred();
    if (pref && pref[0])
        return pref[0];
    return pango_language_get_default();
}

/* The family that family picks for character ch in language lang ("" when none). */
static void family_for(PangoContext *ctx, const char *family, PangoLanguage *lang, uint32_t ch, char *out, size_t n) {
    out[0] = 0;
    PangoFontDescription *fd = pango_font_description_from_string(family);
    pango_font_description_set_absolute_size(fd, 12 * PANGO_SCALE);
    PangoFontset *fs = pango_context_load_fontset(ctx, fd, lang);
    PangoFont *f = fs ? pango_fontset_get_font(fs, ch) : NULL;
    if (f) {
        PangoFontDescription *d = pango_font_describe(f);
        const char *name = pango_font_description_get_family(d);
        if (name && !strchr(name, ','))
            snprintf(out, n, "%s", name);
        pango_font_description_free(d);
        g_object_unref(f);
    }
    if (fs)
        g_object_unref(fs);
    pango_font_description_free(fd);
}

/* The family list "LATIN,HAN,family,", so Han characters take one face whatever the run
 * around them.  In a language written with Han characters, HAN is that language's face:
 * Pango shapes a run of Latin letters as English, so a full-width "：" or "（" inside it would
 * fall back to fontconfig's first CJK face (Noto Sans CJK JP) instead of the language's (SC).
 * In any other language (an English window showing a Chinese sentence) HAN is simplified
 * Chinese's face, the language of the tokenizers this program ships with Han in them
 * (bert-base-chinese and the demo models), where Pango would otherwise pick fontconfig's
 * first CJK face, JP's, and a PDF would embed Noto Sans CJK JP (issue 40); a Japanese
 * sentence there gets SC's forms of its kanji, its kana unchanged.  Worked out once per
 * family and language (fontconfig is slow to ask). */
static pthread_mutex_t family_lock = PTHREAD_MUTEX_INITIALIZER;
static char family_key[128], family_list[384];

/* Whether lang is known to be written with Han characters (zh-*, ja, ko); an unknown one
 * ("c" in the C locale) is not, where pango_language_includes_script says it may be. */
static bool writes_han(PangoLanguage *lang) {
    int n = 0;
    const PangoScript *scripts = pango_language_get_scripts(lang, &n);
    for (int i = 0; scripts && i < n; i++)
        if (scripts[i] == PANGO_SCRIPT_HAN)
            return true;
    return false;
}

static void resolve_family(rtext *t) {
    t->family[0] = 0;
    PangoLanguage *lang = pango_context_get_language(t->ctx);
    if (!lang || strlen(t->st.font_family) > 100 || strchr(t->st.font_family, ','))
        return;
    PangoLanguage *han_lang = writes_han(lang) ? lang : pango_language_from_string("zh-cn");
    char key[128];
    snprintf(key, sizeof key, "%s|%s|%s", pango_language_to_string(lang), pango_language_to_string(han_lang),
             t->st.font_family);
    pthread_mutex_lock(&family_lock);
    if (strcmp(key, family_key) != 0) {
        char latin[128], han[128];
        family_for(t->ctx, t->st.font_family, pango_language_from_string("en"), 'a', latin, sizeof latin);
        family_for(t->ctx, t->st.font_family, han_lang, 0x56FD /* 国 */, han, sizeof han);
        if (latin[0] && han[0] && strcmp(latin, han) != 0)
            snprintf(family_list, sizeof family_list, "%s,%s,%s,", latin, han, t->st.font_family);
        else
            family_list[0] = 0;
        snprintf(family_key, sizeof family_key, "%s", key);
    }
    snprintf(t->family, sizeof t->family, "%s", family_list);
    pthread_mutex_unlock(&family_lock);
}

static PangoContext *new_context(void) {
    PangoContext *ctx = pango_font_map_create_context(pango_cairo_font_map_get_default());
    pango_cairo_context_set_resolution(ctx, 72.0);
    cairo_font_options_t *fo = cairo_font_options_create();
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
    pango_cairo_context_set_font_options(ctx, fo);
    cairo_font_options_destroy(fo);
    pango_context_set_language(ctx, figure_language());
    return ctx;
}

const char *rt_tr(const char *msgid) {
    const char *s = translator && msgid && *msgid ? translator(msgid) : NULL;
    return s ? s : msgid;
}

void atn_render_style_init(atn_render_style *st, bool dark) {
    memset(st, 0, sizeof *st);
    st->font_scale = 1.0;
    st->font_family = "Sans";
    if (dark) {
        st->fg[0] = st->fg[1] = st->fg[2] = 0.92;
        st->bg[0] = 0.12, st->bg[1] = 0.12, st->bg[2] = 0.13;
        st->accent[0] = 1.0, st->accent[1] = 0.55, st->accent[2] = 0.2;
    } else {
        st->fg[0] = st->fg[1] = st->fg[2] = 0.1;
        st->bg[0] = st->bg[1] = st->bg[2] = 1.0;
        st->accent[0] = 0.89, st->accent[1] = 0.29, st->accent[2] = 0.0;
    }
}

void rt_begin(rtext *t, const atn_render_style *style) {
    memset(t, 0, sizeof *t);
    if (style)
        t->st = *style;
    else
        atn_render_style_init(&t->st, false);
    if (!(t->st.font_scale > 0.05 && t->st.font_scale < 20))
        t->st.font_scale = 1.0;
    if (!t->st.font_family || !t->st.font_family[0])
        t->st.font_family = "Sans";
    t->fs = t->st.font_scale;
    t->ctx = new_context();
    resolve_family(t);
    t->layout = pango_layout_new(t->ctx);
}

void rt_end(rtext *t) {
    if (t->layout)
        g_object_unref(t->layout);
    if (t->ctx)
        g_object_unref(t->ctx);
    if (t->vctx)
        g_object_unref(t->vctx);
    t->layout = NULL;
    t->ctx = t->vctx = NULL;
    for (int i = 0; i < t->n_fonts; i++)
        pango_font_description_free(t->fonts[i].fd);
    t->n_fonts = 0;
}

/* The description for size and weight: one of the last four made, else a new one (parsing
 * the family list for every label was a tenth of measuring it). */
static const PangoFontDescription *font_for(rtext *t, double size, bool bold) {
    for (int i = 0; i < t->n_fonts; i++)
        if (t->fonts[i].size == size && t->fonts[i].bold == bold)
            return t->fonts[i].fd;
    PangoFontDescription *fd = pango_font_description_from_string(t->family[0] ? t->family : t->st.font_family);
    pango_font_description_set_absolute_size(fd, size * t->fs * PANGO_SCALE);
    pango_font_description_set_weight(fd, bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
    int at = t->n_fonts < 4 ? t->n_fonts++ : t->next_font++ % 4;
    if (t->fonts[at].fd)
        pango_font_description_free(t->fonts[at].fd);
    t->fonts[at] = (struct rt_font){fd, size, bold};
    return fd;
}

static void set_font(rtext *t, PangoLayout *l, double size, bool bold) {
    pango_layout_set_font_description(l, font_for(t, size, bold));
}

PangoLayout *rt_layout(rtext *t, const char *text, double size, bool bold, bool markup) {
    PangoLayout *l = pango_layout_new(t->ctx);
    set_font(t, l, size, bold);
    if (markup)
        pango_layout_set_markup(l, text ? text : "", -1);
    else
        pango_layout_set_text(l, text ? text : "", -1);
    return l;
}

void rt_measure(rtext *t, const char *text, double size, bool bold, double *w, double *h) {
    set_font(t, t->layout, size, bold);
    pango_layout_set_width(t->layout, -1);
    pango_layout_set_text(t->layout, text ? text : "", -1);
    int pw, ph;
    pango_layout_get_size(t->layout, &pw, &ph);
    if (w)
        *w = (double)pw / PANGO_SCALE;
    if (h)
        *h = (double)ph / PANGO_SCALE;
}

double rt_line_height(rtext *t, double size) {
    double h;
    rt_measure(t, "Ag国", size, false, NULL, &h);
    return h;
}

/* A width to ellipsize at, in pango units: a text measured to be exactly max_w wide fits.
 * Widths come back from sums like (w + gap) - gap, a hair under w, and truncating that to
 * pango units made pango cut a text that fits ("0 to head m…" beside a colour bar sized for
 * it), so the width is rounded up with a quarter-unit of slack. */
static int ellipsize_width(double max_w) { return (int)ceil(max_w * PANGO_SCALE + PANGO_SCALE / 4.0); }

static void show(cairo_t *cr, PangoLayout *l) {
    pango_cairo_show_layout(cr, l);
}

void rt_draw(cairo_t *cr, rtext *t, const char *text, double size, bool bold, double x, double y, double halign,
             double max_w) {
    PangoLayout *l = rt_layout(t, text, size, bold, false);
    if (max_w > 0) {
        pango_layout_set_width(l, ellipsize_width(max_w));
        pango_layout_set_ellipsize(l, PANGO_ELLIPSIZE_END);
        pango_layout_set_single_paragraph_mode(l, TRUE);
    }
    int pw, ph;
    pango_layout_get_size(l, &pw, &ph);
    PangoRectangle ink, logical;
    pango_layout_get_extents(l, &ink, &logical);
    double w = (double)logical.width / PANGO_SCALE;
    if (max_w > 0 && w > max_w)
        w = max_w;
    cairo_move_to(cr, x - halign * w, y);
    show(cr, l);
    g_object_unref(l);
}

/* Han, kana, Hangul, CJK symbols and full-width forms: characters that stand upright in a
 * vertical column. */
static bool upright_char(uint32_t c) {
    return (c >= 0x2E80 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0xF900 && c <= 0xFAFF) ||
           (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFFEF) || (c >= 0x20000 && c <= 0x3FFFF);
}

bool rt_has_cjk(const char *s) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        uint32_t c;
        int n;
        if (*p < 0x80)
            c = *p, n = 1;
        else if ((*p & 0xE0) == 0xC0)
            c = *p & 0x1F, n = 2;
        else if ((*p & 0xF0) == 0xE0)
            c = *p & 0x0F, n = 3;
        else if ((*p & 0xF8) == 0xF0)
            c = *p & 0x07, n = 4;
        else {
            p++;
            continue;
        }
        int k = 1;
        for (; k < n && (p[k] & 0xC0) == 0x80; k++)
            c = (c << 6) | (p[k] & 0x3F);
        if (k == n && upright_char(c))
            return true;
        p += k;
    }
    return false;
}

/* A column of characters read from the top: the line runs down the page (the context
 * turned a quarter clockwise) with East gravity, so Han and kana stand upright and Latin
 * letters inside the label lie along the line, as in vertical Chinese and Japanese. */
static void draw_column(cairo_t *cr, rtext *t, const char *text, double size, bool bold, double x, double y_top,
                        double max_len) {
    if (!t->vctx) {
        t->vctx = new_context();
        pango_context_set_base_gravity(t->vctx, PANGO_GRAVITY_EAST);
        pango_context_set_gravity_hint(t->vctx, PANGO_GRAVITY_HINT_NATURAL);
    }
    PangoLayout *l = pango_layout_new(t->vctx);
    set_font(t, l, size, bold);
    pango_layout_set_text(l, text ? text : "", -1);
    if (max_len > 0) {
        pango_layout_set_width(l, (int)(max_len * PANGO_SCALE));
        pango_layout_set_ellipsize(l, PANGO_ELLIPSIZE_END);
        pango_layout_set_single_paragraph_mode(l, TRUE);
    }
    PangoRectangle logical;
    pango_layout_get_extents(l, NULL, &logical);
    double h = (double)logical.height / PANGO_SCALE;
    cairo_save(cr);
    /* after turning by +90 degrees, +x points down and +y to the left: the line's box spans
       x + h/2 .. x - h/2 */
    cairo_translate(cr, x + h / 2, y_top);
    cairo_rotate(cr, M_PI / 2);
    cairo_move_to(cr, 0, 0);
    show(cr, l);
    cairo_restore(cr);
    g_object_unref(l);
}

void rt_draw_up(cairo_t *cr, rtext *t, const char *text, double size, bool bold, double x, double y_end,
                double max_w) {
    if (rt_has_cjk(text)) {
        draw_column(cr, t, text, size, bold, x, y_end, max_w);
        return;
    }
    PangoLayout *l = rt_layout(t, text, size, bold, false);
    if (max_w > 0) {
        pango_layout_set_width(l, ellipsize_width(max_w));
        pango_layout_set_ellipsize(l, PANGO_ELLIPSIZE_START);
        pango_layout_set_single_paragraph_mode(l, TRUE);
    }
    PangoRectangle logical;
    pango_layout_get_extents(l, NULL, &logical);
    double w = (double)logical.width / PANGO_SCALE, h = (double)logical.height / PANGO_SCALE;
    if (max_w > 0 && w > max_w)
        w = max_w;
    cairo_save(cr);
    /* after rotating by -90 degrees, +x points up: the text starts at y_end + w and ends at y_end */
    cairo_translate(cr, x - h / 2, y_end + w);
    cairo_rotate(cr, -M_PI / 2);
    cairo_move_to(cr, 0, 0);
    show(cr, l);
    cairo_restore(cr);
    g_object_unref(l);
}

static PangoLayout *wrapped_layout(rtext *t, const char *text, double size, bool bold, double max_w, int max_lines) {
    PangoLayout *l = rt_layout(t, text, size, bold, false);
    pango_layout_set_width(l, ellipsize_width(max_w));
    pango_layout_set_wrap(l, PANGO_WRAP_WORD_CHAR);
    pango_layout_set_height(l, -MAX(1, max_lines));
    pango_layout_set_ellipsize(l, PANGO_ELLIPSIZE_END);
    pango_layout_set_alignment(l, PANGO_ALIGN_CENTER);
    return l;
}

double rt_wrapped_height(rtext *t, const char *text, double size, bool bold, double max_w, int max_lines) {
    PangoLayout *l = wrapped_layout(t, text, size, bold, max_w, max_lines);
    PangoRectangle logical;
    pango_layout_get_extents(l, NULL, &logical);
    g_object_unref(l);
    return (double)logical.height / PANGO_SCALE;
}

bool rt_wrapped_cut(rtext *t, const char *text, double size, bool bold, double max_w, int max_lines, int *lines) {
    PangoLayout *l = wrapped_layout(t, text, size, bold, max_w, max_lines);
    bool cut = pango_layout_is_ellipsized(l);
    if (lines)
        *lines = pango_layout_get_line_count(l);
    g_object_unref(l);
    return cut;
}

double rt_draw_wrapped_left(cairo_t *cr, rtext *t, const char *text, double size, bool bold, double x, double y,
                            double max_w, int max_lines) {
    PangoLayout *l = wrapped_layout(t, text, size, bold, max_w, max_lines);
    pango_layout_set_alignment(l, PANGO_ALIGN_LEFT);
    PangoRectangle logical;
    pango_layout_get_extents(l, NULL, &logical);
    cairo_move_to(cr, x, y);
    show(cr, l);
    g_object_unref(l);
    return (double)logical.height / PANGO_SCALE;
}

double rt_draw_wrapped(cairo_t *cr, rtext *t, const char *text, double size, bool bold, double x, double y,
                       double max_w, int max_lines) {
    PangoLayout *l = wrapped_layout(t, text, size, bold, max_w, max_lines);
    PangoRectangle logical;
    pango_layout_get_extents(l, NULL, &logical);
    cairo_move_to(cr, x - max_w / 2, y);
    show(cr, l);
    g_object_unref(l);
    return (double)logical.height / PANGO_SCALE;
}

void rt_draw_markup(cairo_t *cr, rtext *t, const char *markup, double size, double x, double y, double max_w) {
    PangoLayout *l = rt_layout(t, markup, size, false, true);
    if (max_w > 0) {
        pango_layout_set_width(l, ellipsize_width(max_w));
        pango_layout_set_wrap(l, PANGO_WRAP_WORD_CHAR);
    }
    cairo_move_to(cr, x, y);
    show(cr, l);
    g_object_unref(l);
}

void rt_background(cairo_t *cr, const rtext *t, double w, double h) {
    if (t->st.transparent)
        return;
    cairo_save(cr);
    rt_rgb(cr, t->st.bg, 1.0);
    cairo_rectangle(cr, 0, 0, w, h);
    cairo_fill(cr);
    cairo_restore(cr);
}

void rt_format(char *buf, size_t size, double v) {
    if (isnan(v)) {
        snprintf(buf, size, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, size, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    double a = fabs(v);
    if (a != 0 && (a < 1e-3 || a >= 1e5))
        snprintf(buf, size, "%.3e", v);
    else
        snprintf(buf, size, "%.4f", v);
}

void rt_format_fixed(char *buf, size_t size, double v, bool sci) {
    if (isnan(v) || isinf(v))
        rt_format(buf, size, v);
    else if (sci)
        snprintf(buf, size, "%.3e", v);
    else if (v == 0 || fabs(v) >= 0.00005)
        snprintf(buf, size, "%.4f", v);
    else
        snprintf(buf, size, v > 0 ? "<0.0001" : ">-0.0001");   /* not "0.0000" nor "-0.0000" for a nonzero one */
}

int rt_ticks(double lo, double hi, int max, double *ticks, double *step_out) {
    if (!(hi > lo) || max < 2) {
        ticks[0] = lo;
        *step_out = 1;
        return 1;
    }
    double raw = (hi - lo) / (max - 1);
    double mag = pow(10, floor(log10(raw)));
    double step = mag;
    static const double mult[] = {1, 2, 2.5, 5, 10};
    for (int i = 0; i < 5; i++) {
        step = mult[i] * mag;
        if ((hi - lo) / step <= max - 1 + 1e-9)
            break;
    }
    int n = 0;
    double first = ceil(lo / step - 1e-9) * step;
    for (double v = first; v <= hi + step * 1e-9 && n < max + 1; v += step)
        ticks[n++] = fabs(v) < step * 1e-9 ? 0.0 : v;
    *step_out = step;
    return n;
}

void rt_format_tick(char *buf, size_t size, double v, double step) {
    int dec = 0;
    while (dec < 6 && fabs(step * pow(10, dec) - round(step * pow(10, dec))) > 1e-6)
        dec++;
    if (fabs(v) >= 1e5 || (fabs(v) > 0 && fabs(v) < 1e-4))
        snprintf(buf, size, "%.2g", v);
    else
        snprintf(buf, size, "%.*f", dec, v);
}

double rt_luminance(const double c[3]) { return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; }

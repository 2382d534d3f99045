/* AtnWhatif: a reference-counted copy of the what-if lab's interventions (see atn-whatif.h). */
#include "atn-whatif.h"

#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>

struct AtnWhatif {
    atn_interventions iv;   /* its arrays point at the copies below */
    int n_layers, n_heads;
    uint8_t *heads_off;
    int32_t *global, *hide;
    uint8_t *mask_layers;
    int8_t *sliding;
};

static void whatif_clear(gpointer data) {
    AtnWhatif *w = data;
    g_free(w->heads_off);
    g_free(w->global);
    g_free(w->hide);
    g_free(w->mask_layers);
    g_free(w->sliding);
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

AtnWhatif *atn_whatif_new(const atn_interventions *iv, int n_layers, int n_heads) {
    if (!iv || atn_interventions_none(iv))
        return NULL;
    AtnWhatif *w = g_atomic_rc_box_new0(AtnWhatif);
    w->iv = *iv;
    w->n_layers = n_layers;
    w->n_heads = n_heads;
    if (iv->heads_off && n_layers > 0 && n_heads > 0) {
        w->heads_off = g_memdup2(iv->heads_off, (gsize)n_layers * n_heads);
        gboolean any = FALSE;
        for (int i = 0; i < n_layers * n_heads; i++)
            any |= w->heads_off[i] != 0;
        if (!any)
            g_clear_pointer(&w->heads_off, g_free);
    }
    w->iv.heads_off = w->heads_off;
    if (iv->n_global > 0 && iv->global_tokens)
        w->global = g_memdup2(iv->global_tokens, (gsize)iv->n_global * sizeof(int32_t));
    else
        w->iv.n_global = 0;
    w->iv.global_tokens = w->global;
    if (iv->n_hide > 0 && iv->hide_tokens)
        w->hide = g_memdup2(iv->hide_tokens, (gsize)iv->n_hide * sizeof(int32_t));
    else
        w->iv.n_hide = 0;
    w->iv.hide_tokens = w->hide;
    if (iv->mask_layers && n_layers > 0) {   /* every layer named: the same as none */
        gboolean some_out = FALSE;
        for (int l = 0; l < n_layers; l++)
            some_out |= !iv->mask_layers[l];
        if (some_out)
            w->mask_layers = g_memdup2(iv->mask_layers, (gsize)n_layers);
    }
    w->iv.mask_layers = w->mask_layers;
    if (iv->sliding && n_layers > 0) {   /* no layer changed: the same as none */
        gboolean some = FALSE;
        for (int l = 0; l < n_layers; l++)
            some |= iv->sliding[l] != 0;
        if (some)
            w->sliding = g_memdup2(iv->sliding, (gsize)n_layers);
    }
    w->iv.sliding = w->sliding;
    if (!w->sliding)
        w->iv.sliding_window = 0;
    if (w->global)
        qsort(w->global, (size_t)w->iv.n_global, sizeof(int32_t), cmp_i32);
    if (w->hide)
        qsort(w->hide, (size_t)w->iv.n_hide, sizeof(int32_t), cmp_i32);
    if (atn_interventions_none(&w->iv)) {
        atn_whatif_unref(w);
        return NULL;
    }
    return w;
}

AtnWhatif *atn_whatif_ref(AtnWhatif *w) { return w ? g_atomic_rc_box_acquire(w) : NULL; }

void atn_whatif_unref(AtnWhatif *w) {
    if (w)
        g_atomic_rc_box_release_full(w, whatif_clear);
}

const atn_interventions *atn_whatif_get(const AtnWhatif *w) { return w ? &w->iv : NULL; }
int atn_whatif_get_n_layers(const AtnWhatif *w) { return w ? w->n_layers : 0; }
int atn_whatif_get_n_heads(const AtnWhatif *w) { return w ? w->n_heads : 0; }

void atn_whatif_for_tokens(const AtnWhatif *w, int n_layers, int n_heads, int n, atn_interventions *out) {
    atn_interventions_init(out);
    if (!w)
        return;
    *out = w->iv;
    if (w->n_layers != n_layers || w->n_heads != n_heads)
        out->heads_off = NULL;
    if (w->n_layers != n_layers)
        out->mask_layers = NULL, out->sliding = NULL, out->sliding_window = 0;
    /* the copies are sorted (atn_whatif_new): those inside the text are a prefix */
    int k = 0;
    while (k < out->n_global && out->global_tokens[k] < n)
        k++;
    out->n_global = k;
    k = 0;
    while (k < out->n_hide && out->hide_tokens[k] < n)
        k++;
    out->n_hide = k;
    if (out->window < 0)
        out->n_global = 0;
}

static void add_list(GPtrArray *a, const char *opt, const int32_t *v, int n) {
    if (n <= 0)
        return;
    GString *s = g_string_new(NULL);
    for (int i = 0; i < n; i++)
        g_string_append_printf(s, "%s%d", i ? "," : "", v[i]);
    g_ptr_array_add(a, g_strdup(opt));
    g_ptr_array_add(a, g_string_free(s, FALSE));
}

char **atn_whatif_dup_cli_args(const AtnWhatif *w) {
    GPtrArray *a = g_ptr_array_new();
    if (w) {
        const atn_interventions *iv = &w->iv;
        if (iv->heads_off) {
            GString *s = g_string_new(NULL);
            for (int l = 0; l < w->n_layers; l++)
                for (int h = 0; h < w->n_heads; h++)
                    if (iv->heads_off[l * w->n_heads + h])
                        g_string_append_printf(s, "%s%d:%d", s->len ? "," : "", l, h);
            g_ptr_array_add(a, g_strdup("--heads-off"));
            g_ptr_array_add(a, g_string_free(s, FALSE));
            if (iv->head_mode == ATN_HEAD_UNIFORM) {
                g_ptr_array_add(a, g_strdup("--head-mode"));
                g_ptr_array_add(a, g_strdup("uniform"));
            }
        }
        if (iv->causal)
            g_ptr_array_add(a, g_strdup("--causal"));
        if (iv->window >= 0) {
            g_ptr_array_add(a, g_strdup("--window"));
            g_ptr_array_add(a, g_strdup_printf("%d", iv->window));
            add_list(a, "--global-tokens", iv->global_tokens, iv->n_global);
        }
        if (iv->strided > 0) {
            g_ptr_array_add(a, g_strdup("--strided"));
            g_ptr_array_add(a, g_strdup_printf("%d", iv->strided));
        }
        add_list(a, "--hide-tokens", iv->hide_tokens, iv->n_hide);
        if (iv->mask_layers && (iv->causal || iv->window >= 0 || iv->strided > 0 || iv->n_hide > 0)) {
            g_ptr_array_add(a, g_strdup("--mask-layers"));
            g_ptr_array_add(a, atn_whatif_format_layers(iv->mask_layers, w->n_layers, TRUE));
        }
        if (iv->alibi)
            g_ptr_array_add(a, g_strdup("--alibi"));
        if (iv->no_positions)
            g_ptr_array_add(a, g_strdup("--no-positions"));
        if (iv->shuffle) {
            g_ptr_array_add(a, g_strdup("--shuffle-seed"));
            g_ptr_array_add(a, g_strdup_printf("%" G_GUINT64_FORMAT, iv->shuffle_seed));
        }
        if (iv->temperature > 0 && iv->temperature != 1.0f) {
            char buf[G_ASCII_DTOSTR_BUF_SIZE];
            g_ptr_array_add(a, g_strdup("--temperature"));
            g_ptr_array_add(a, g_strdup(g_ascii_formatd(buf, sizeof buf, "%.9g", iv->temperature)));
        }
        if (iv->rope_theta > 0) {
            char buf[G_ASCII_DTOSTR_BUF_SIZE];
            g_ptr_array_add(a, g_strdup("--rope-theta"));
            g_ptr_array_add(a, g_strdup(g_ascii_formatd(buf, sizeof buf, "%.9g", iv->rope_theta)));
        }
        if (iv->rope_llama3 > 0) {
            char buf[G_ASCII_DTOSTR_BUF_SIZE];
            g_ptr_array_add(a, g_strdup("--rope-llama3"));
            g_ptr_array_add(a, g_strdup(g_ascii_formatd(buf, sizeof buf, "%.9g", iv->rope_llama3)));
        }
        if (iv->rope_factor > 0 && iv->rope_factor != 1.0) {
            char buf[G_ASCII_DTOSTR_BUF_SIZE];
            g_ptr_array_add(a, g_strdup("--rope-factor"));
            g_ptr_array_add(a, g_strdup(g_ascii_formatd(buf, sizeof buf, "%.9g", iv->rope_factor)));
        }
        for (int on = 0; iv->sliding && on < 2; on++) {
            g_autofree uint8_t *mark = g_new0(uint8_t, w->n_layers);
            gboolean any = FALSE;
            for (int l = 0; l < w->n_layers; l++)
                any |= (mark[l] = iv->sliding[l] == (on ? 1 : -1));
            if (!any)
                continue;
            g_ptr_array_add(a, g_strdup(on ? "--sliding-on" : "--sliding-off"));
            g_ptr_array_add(a, atn_whatif_format_layers(mark, w->n_layers, TRUE));
        }
        if (iv->sliding && iv->sliding_window > 0) {
            g_ptr_array_add(a, g_strdup("--sliding-window"));
            g_ptr_array_add(a, g_strdup_printf("%d", iv->sliding_window));
        }
    }
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

char *atn_whatif_describe(const AtnWhatif *w) {
    if (!w)
        return g_strdup(_("the original model"));
    const atn_interventions *iv = &w->iv;
    GString *s = g_string_new(NULL);
#define SEP() (s->len ? g_string_append(s, " · ") : s)
    if (iv->heads_off) {
        int count = 0;
        for (int i = 0; i < w->n_layers * w->n_heads; i++)
            count += iv->heads_off[i] != 0;
        SEP();
        g_string_append_printf(s, iv->head_mode == ATN_HEAD_UNIFORM
                                      ? ngettext("%d head made uniform", "%d heads made uniform", count)
                                      : ngettext("%d head switched off", "%d heads switched off", count),
                               count);
    }
    if (iv->causal) {
        SEP();
        g_string_append(s, _("causal mask"));
    }
    if (iv->window >= 0) {
        SEP();
        g_string_append_printf(s, _("window %d"), iv->window);
        if (iv->n_global > 0)
            g_string_append_printf(s, ngettext(" + %d global token", " + %d global tokens", iv->n_global),
                                   iv->n_global);
    }
    if (iv->strided > 0) {
        SEP();
        g_string_append_printf(s, _("strided %d"), iv->strided);
    }
    if (iv->n_hide > 0) {
        SEP();
        g_string_append_printf(s, ngettext("%d key hidden", "%d keys hidden", iv->n_hide), iv->n_hide);
    }
    if (iv->mask_layers && (iv->causal || iv->window >= 0 || iv->strided > 0 || iv->n_hide > 0)) {
        g_autofree char *layers = atn_whatif_format_layers(iv->mask_layers, w->n_layers, FALSE);
        SEP();
        g_string_append_printf(s, _("masks in layers %s only"), layers);
    }
    if (iv->alibi) {
        SEP();
        g_string_append(s, _("ALiBi"));
    }
    if (iv->no_positions) {
        SEP();
        g_string_append(s, _("no position embeddings"));
    }
    if (iv->shuffle) {
        SEP();
        g_autofree char *seed = g_strdup_printf("%" G_GUINT64_FORMAT, iv->shuffle_seed);
        g_string_append_printf(s, _("words shuffled (seed %s)"), seed);
    }
    if (iv->temperature > 0 && iv->temperature != 1.0f) {
        SEP();
        g_string_append_printf(s, _("temperature %.4g"), (double)iv->temperature);
    }
    if (iv->rope_theta > 0) {
        SEP();
        /* Translators: the rotary positions' base, e.g. "RoPE θ 500" */
        g_string_append_printf(s, _("RoPE θ %.6g"), iv->rope_theta);
    }
    if (iv->rope_llama3 > 0) {
        SEP();
        /* Translators: Llama 3's RoPE scaling with this factor, e.g. "Llama 3 scaling × 8" */
        g_string_append_printf(s, _("Llama 3 scaling × %.4g"), iv->rope_llama3);
    }
    if (iv->rope_factor > 0 && iv->rope_factor != 1.0) {
        SEP();
        /* Translators: linear RoPE scaling, e.g. "positions ÷ 4" */
        g_string_append_printf(s, _("positions ÷ %.4g"), iv->rope_factor);
    }
    for (int on = 0; iv->sliding && on < 2; on++) {
        g_autofree uint8_t *mark = g_new0(uint8_t, w->n_layers);
        gboolean any = FALSE;
        for (int l = 0; l < w->n_layers; l++)
            any |= (mark[l] = iv->sliding[l] == (on ? 1 : -1));
        if (!any)
            continue;
        g_autofree char *layers = atn_whatif_format_layers(mark, w->n_layers, FALSE);
        SEP();
        if (on && iv->sliding_window > 0)
            g_string_append_printf(s, _("window of %d on in layers %s"), iv->sliding_window, layers);
        else
            g_string_append_printf(s, on ? _("window on in layers %s") : _("window off in layers %s"), layers);
    }
#undef SEP
    return g_string_free(s, FALSE);
}

const char *atn_whatif_head_note(const AtnWhatif *w, int layer, int head) {
    switch (w ? atn_whatif_get_head(w, layer, head) : ATN_WHATIF_HEAD_ON) {
    case ATN_WHATIF_HEAD_OFF: return _("switched off (what-if)");
    case ATN_WHATIF_HEAD_UNIFORM: return _("made uniform (what-if)");
    default: return NULL;
    }
}

char *atn_whatif_title(const AtnWhatif *w, const char *title) {
    if (!w)
        return g_strdup(title);
    g_autofree char *what = atn_whatif_describe(w);
    /* Translators: a figure's title when the what-if lab changed the model: "demo · layer 0 · head 1 · what-if: ALiBi" */
    return g_strdup_printf(_("%s · what-if: %s"), title, what);
}

char *atn_whatif_format_layers(const uint8_t *mark, int n_layers, gboolean for_cli) {
    GString *s = g_string_new(NULL);
    for (int l = 0; mark && l < n_layers; l++) {
        if (!mark[l])
            continue;
        int end = l;
        while (end + 1 < n_layers && mark[end + 1])
            end++;
        if (s->len)
            g_string_append(s, for_cli ? "," : ", ");
        if (end > l)
            g_string_append_printf(s, for_cli ? "%d-%d" : "%d\u2013%d", l, end);
        else
            g_string_append_printf(s, "%d", l);
        l = end;
    }
    return g_string_free(s, FALSE);
}

AtnWhatifHead atn_whatif_get_head(const AtnWhatif *w, int layer, int head) {
    if (!w || !w->iv.heads_off || layer < 0 || layer >= w->n_layers || head < 0 || head >= w->n_heads ||
        !w->iv.heads_off[layer * w->n_heads + head])
        return ATN_WHATIF_HEAD_ON;
    return w->iv.head_mode == ATN_HEAD_UNIFORM ? ATN_WHATIF_HEAD_UNIFORM : ATN_WHATIF_HEAD_OFF;
}

AtnWhatif *atn_whatif_change_head(const AtnWhatif *w, int n_layers, int n_heads, int layer, int head,
                                  AtnWhatifHeadChange change) {
    g_return_val_if_fail(n_layers > 0 && n_heads > 0 && layer >= 0 && layer < n_layers && head >= 0 &&
                             head < n_heads, NULL);
    atn_interventions iv;
    atn_interventions_init(&iv);
    if (w)
        iv = w->iv;
    size_t lh = (size_t)n_layers * n_heads;
    g_autofree uint8_t *off = g_new0(uint8_t, lh);
    if (w && w->iv.heads_off && w->n_layers == n_layers && w->n_heads == n_heads)
        memcpy(off, w->iv.heads_off, lh);
    uint8_t *row = off + (size_t)layer * n_heads;
    switch (change) {
    case ATN_WHATIF_SWITCH_ON:
        row[head] = 0;
        break;
    case ATN_WHATIF_SWITCH_OFF:
        row[head] = 1;
        iv.head_mode = ATN_HEAD_ZERO;
        break;
    case ATN_WHATIF_MAKE_UNIFORM:
        row[head] = 1;
        iv.head_mode = ATN_HEAD_UNIFORM;
        break;
    case ATN_WHATIF_KEEP_ONLY:
        for (int h = 0; h < n_heads; h++)
            row[h] = h != head;
        break;
    }
    iv.heads_off = off;
    if (w && w->n_layers != n_layers)   /* another model's layers */
        iv.mask_layers = NULL;
    /* the arrays of w stay valid while atn_whatif_new copies them */
    return atn_whatif_new(&iv, n_layers, n_heads);
}

static const char *const change_names[] = {"switch-on", "switch-off", "uniform", "keep-only"};

const char *atn_whatif_head_change_name(AtnWhatifHeadChange change) {
    return (guint)change < G_N_ELEMENTS(change_names) ? change_names[change] : NULL;
}

int atn_whatif_head_change_from_name(const char *name) {
    for (guint i = 0; name && i < G_N_ELEMENTS(change_names); i++)
        if (!strcmp(name, change_names[i]))
            return (int)i;
    return -1;
}

static GQuark whatif_quark(void) { return g_quark_from_static_string("atn-whatif"); }

void atn_whatif_attach(AtnResult *r, AtnWhatif *w) {
    g_return_if_fail(ATN_IS_RESULT(r));
    g_object_set_qdata_full(G_OBJECT(r), whatif_quark(), atn_whatif_ref(w), (GDestroyNotify)atn_whatif_unref);
}

AtnWhatif *atn_whatif_of_result(AtnResult *r) {
    return r ? g_object_get_qdata(G_OBJECT(r), whatif_quark()) : NULL;
}

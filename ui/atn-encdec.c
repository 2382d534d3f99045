/* Encoder-decoders in the window: the target's ids, a result's three stacks and their tokens,
 * and the Head view's heatmap of a decoder or cross-attention head.  See atn-encdec.h. */
#include "atn-encdec.h"

#include "attention-file.h"

#include <glib/gi18n.h>
#include <stdlib.h>

#define TARGET_TOKENS_KEY "atn-encdec-target-tokens"
#define DECODER_STATS_KEY "atn-encdec-decoder-stats"
#define CROSS_STATS_KEY "atn-encdec-cross-stats"
#define STACK_HEADS_KEY "atn-encdec-stack-heads"   /* GHashTable: a lazy stack's heads read */
#define STACK_ERROR_KEY "atn-encdec-stack-error"   /* the last stack head that could not be read */

int32_t *atn_encdec_target_ids(const atn_model *m, const char *text, int32_t *n, atn_error *err) {
    *n = 0;
    int32_t start = atn_model_decoder_start_id(m);
    if (!text || !*text) {   /* the start token alone, as a run without --target */
        int32_t *one = malloc(sizeof *one);
        if (!one) {
            atn_error_set(err, ATN_E_NOMEM, "out of memory");
            return NULL;
        }
        one[0] = start;
        *n = 1;
        return one;
    }
    /* app/cli.c's cli_target_ids: the start token, then the target's tokens but the last */
    atn_encoding *e = NULL;
    if (atn_model_encode(m, text, NULL, &e, err) != ATN_OK)
        return NULL;
    int32_t t = e->n > 0 ? e->n : 1;
    int32_t *ids = malloc((size_t)t * sizeof *ids);
    if (!ids) {
        atn_encoding_free(e);
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        return NULL;
    }
    ids[0] = start;
    for (int32_t i = 1; i < t; i++)
        ids[i] = e->ids[i - 1];
    atn_encoding_free(e);
    *n = t;
    return ids;
}

void atn_encdec_attach(AtnResult *r) {
    const atn_capture *cap = atn_result_get_capture(r);
    if (!cap || cap->n_stacks <= 0 || cap->n_tgt <= 0)
        return;
    AtnModelHandle *handle = atn_result_get_model(r);
    const atn_model *m = atn_model_handle_get_model(handle);
    /* an attention file: its query_tokens, as `attnscope export --attention` labels the rows */
    atn_attn_file *file = m ? NULL : atn_model_handle_get_attention_file(handle);
    int32_t n_file = 0;
    const char *const *file_tokens = file ? atn_attn_file_query_tokens(file, &n_file) : NULL;
    if (n_file != cap->n_tgt)
        file_tokens = NULL;
    char **labels = g_new0(char *, (gsize)cap->n_tgt + 1);
    atn_encoding *e = NULL;
    atn_error err = {0};
    char **made = NULL;
    if (m && cap->target_ids && atn_model_encode_ids(m, cap->target_ids, NULL, NULL, cap->n_tgt, &e, &err) == ATN_OK)
        made = atn_render_token_labels(m, e);   /* "▁Das" as the source's tokens show */
    for (int32_t i = 0; i < cap->n_tgt; i++)
        labels[i] = made && made[i]     ? g_strdup(made[i])
                    : file_tokens       ? g_strdup(file_tokens[i])
                    : cap->target_ids   ? g_strdup_printf("#%d", cap->target_ids[i])
                                        : g_strdup_printf("%d", i);
    atn_render_token_labels_free(made);
    g_object_set_data_full(G_OBJECT(r), TARGET_TOKENS_KEY, labels, (GDestroyNotify)g_strfreev);
    /* the decoder's and cross-attention statistics (the encoder's are the result's own):
       L_dec x H x n_tgt x (n_tgt + n_src) logarithms, ~0.4 million for t5-small's 6 x 8 heads
       at 64 + 64 tokens; not for a file opened lazily (its stacks are read a head at a time,
       when shown: reading them all here would undo that) */
    static const char *const keys[] = {NULL, DECODER_STATS_KEY, CROSS_STATS_KEY};
    for (int k = ATN_STACK_DECODER; k <= ATN_STACK_CROSS; k++) {
        const atn_stack *stk = atn_capture_stack(cap, (atn_stack_kind)k);
        if (!stk || !stk->attn)
            continue;
        atn_stats *st = NULL;
        atn_error serr = {0};
        if (atn_stats_compute_stack(cap, (atn_stack_kind)k, e, NULL, NULL, &st, &serr) == ATN_OK)
            g_object_set_data_full(G_OBJECT(r), keys[k], st, (GDestroyNotify)atn_stats_free);
        else
            g_warning("%s statistics: %s", k == ATN_STACK_CROSS ? "cross" : "decoder", serr.message);
    }
    atn_encoding_free(e);
}

const atn_stats *atn_result_get_stack_stats(AtnResult *r, atn_stack_kind kind) {
    if (!r)
        return NULL;
    if (!atn_result_is_encdec(r) || kind == ATN_STACK_ENCODER)
        return atn_result_get_stats(r);
    return g_object_get_data(G_OBJECT(r), kind == ATN_STACK_CROSS ? CROSS_STATS_KEY : DECODER_STATS_KEY);
}

int atn_encdec_view_stack(AtnResult *r, int session_stack) {
    return atn_result_is_encdec(r) && session_stack >= ATN_STACK_ENCODER && session_stack <= ATN_STACK_CROSS
               ? session_stack : ATN_STACK_ENCODER;
}

gboolean atn_result_is_encdec(AtnResult *r) {
    const atn_capture *cap = r ? atn_result_get_capture(r) : NULL;
    return cap && cap->n_stacks > 0 && cap->stacks;
}

const atn_stack *atn_result_get_stack(AtnResult *r, atn_stack_kind kind) {
    return atn_result_is_encdec(r) ? atn_capture_stack(atn_result_get_capture(r), kind) : NULL;
}

const char *const *atn_result_get_stack_tokens(AtnResult *r, atn_stack_kind kind, gboolean keys) {
    if (!atn_result_is_encdec(r))
        return NULL;
    gboolean source = kind == ATN_STACK_ENCODER || (kind == ATN_STACK_CROSS && keys);
    return source ? atn_result_get_tokens(r) : g_object_get_data(G_OBJECT(r), TARGET_TOKENS_KEY);
}

const float *atn_result_get_stack_head(AtnResult *r, atn_stack_kind kind, int layer, int head, int *n_q, int *n_k) {
    const atn_stack *s = atn_result_get_stack(r, kind);
    if (!s || layer < 0 || head < 0 || layer >= s->n_layers || head >= s->n_heads)
        return NULL;
    if (n_q)
        *n_q = s->n_q;
    if (n_k)
        *n_k = s->n_k;
    if (s->attn)
        return atn_stack_head_read(atn_result_get_capture(r), s, layer, head, NULL, NULL);
    /* a stack read a head at a time (an attention file opened lazily): each head read once,
       kept with the result (memory for the heads shown) */
    GHashTable *heads = g_object_get_data(G_OBJECT(r), STACK_HEADS_KEY);
    if (!heads) {
        heads = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        g_object_set_data_full(G_OBJECT(r), STACK_HEADS_KEY, heads, (GDestroyNotify)g_hash_table_unref);
    }
    gpointer key = GINT_TO_POINTER(((int)kind * s->n_layers + layer) * s->n_heads + head + 1);
    float *a = g_hash_table_lookup(heads, key);
    if (a)
        return a;
    a = g_try_malloc((gsize)s->n_q * s->n_k * sizeof *a);
    atn_error err = {0};
    if (!a || !atn_stack_head_read(atn_result_get_capture(r), s, layer, head, a, &err)) {
        g_free(a);
        const char *why = a ? err.message : "out of memory";
        g_object_set_data_full(G_OBJECT(r), STACK_ERROR_KEY, g_strdup(why), g_free);
        g_signal_emit_by_name(r, "head-failed", why);   /* the session's "Could not show this head: …" */
        return NULL;
    }
    g_hash_table_insert(heads, key, a);
    return a;
}

const char *atn_result_get_stack_error(AtnResult *r) {
    return r ? g_object_get_data(G_OBJECT(r), STACK_ERROR_KEY) : NULL;
}

void atn_encdec_dims(AtnResult *r, int kind, int *layers, int *heads, int *n_q) {
    const atn_stack *s = atn_result_get_stack(r, kind);
    if (layers)
        *layers = s ? s->n_layers : atn_result_get_n_layers(r);
    if (heads)
        *heads = s ? s->n_heads : atn_result_get_n_heads(r);
    if (n_q)
        *n_q = s ? s->n_q : atn_result_get_n_tokens(r);
}

const char *atn_encdec_stack_title(atn_stack_kind kind) {
    switch (kind) {
    case ATN_STACK_DECODER: return _("Decoder self-attention");
    case ATN_STACK_CROSS: return _("Cross-attention");
    default: return _("Encoder self-attention");
    }
}

const char *atn_encdec_stack_label(atn_stack_kind kind) {
    switch (kind) {
    /* Translators: the stack picker's button: the decoder's self-attention (target over target) */
    case ATN_STACK_DECODER: return _("Decoder self");
    /* Translators: the stack picker's button: cross-attention (target over source) */
    case ATN_STACK_CROSS: return _("Cross");
    /* Translators: the stack picker's button: the encoder's self-attention (source over source) */
    default: return _("Encoder self");
    }
}

gboolean atn_encdec_show_head(AtnHeatmap *h, AtnResult *r, int kind, int layer, int head) {
    gboolean cross = atn_result_is_encdec(r) && kind == ATN_STACK_CROSS;
    /* Translators: the axis of a cross-attention heatmap's rows: the decoder's (target) tokens */
    atn_heatmap_set_axes(h, cross ? _("target") : _("query"),
                         /* Translators: the axis of a cross-attention heatmap's columns: the encoder's (source) tokens */
                         cross ? _("source") : _("key"), _("weight"));
    /* a cross cell's text names the sequences: "target ▁I (1) → source ▁c (2): 0.1234" */
    atn_heatmap_set_cell_words(h, cross ? _("target") : NULL, cross ? _("source") : NULL);
    if (!atn_result_is_encdec(r) || kind == ATN_STACK_ENCODER)
        return FALSE;
    int nq = 0, nk = 0;
    const float *m = atn_result_get_stack_head(r, kind, layer, head, &nq, &nk);
    atn_heatmap_set_causal(h, kind == ATN_STACK_DECODER);   /* later target tokens: masked */
    atn_heatmap_set_matrix(h, G_OBJECT(r), m, m ? nq : 0, m ? nk : 0, atn_result_get_stack_tokens(r, kind, FALSE),
                           atn_result_get_stack_tokens(r, kind, TRUE), NULL);
    return TRUE;
}

gboolean atn_encdec_lines_spec(AtnResult *r, int kind, int layer, int head, atn_headview_spec *spec) {
    if (!atn_result_is_encdec(r) || kind == ATN_STACK_ENCODER)
        return FALSE;
    int nq = 0, nk = 0;
    const float *a = atn_result_get_stack_head(r, kind, layer, head, &nq, &nk);
    const char *const *tq = atn_result_get_stack_tokens(r, kind, FALSE);
    if (!a || !tq)
        return FALSE;
    spec->attn[0] = a;
    spec->head_ids[0] = head;
    spec->n_shown = 1;
    spec->n = nq;
    spec->tokens = tq;
    spec->mask = NULL;   /* the target is never padded */
    spec->n_k = nk;
    spec->key_tokens = atn_result_get_stack_tokens(r, kind, TRUE);
    spec->key_mask = kind == ATN_STACK_CROSS ? atn_result_get_mask(r) : NULL;
    return TRUE;
}

gboolean atn_encdec_grid_spec(AtnResult *r, int kind, atn_grid_spec *spec) {
    const atn_stack *s = kind == ATN_STACK_ENCODER ? NULL : atn_result_get_stack(r, kind);
    if (!s)
        return FALSE;
    spec->attn = s->attn;   /* NULL: the heads read one at a time through the capture */
    spec->cap = atn_result_get_capture(r);
    spec->stack = s;
    spec->n_layers = s->n_layers;
    spec->n_heads = s->n_heads;
    spec->n = s->n_q;
    spec->n_k = s->n_k;
    spec->head_notes = NULL;
    spec->layer_labels = NULL;
    spec->causal = kind == ATN_STACK_DECODER;
    spec->kv_group = 1;
    spec->shared_vmin_vmax = NULL;
    spec->thumbs = NULL;   /* the result's thumbnails are the encoder's */
    return TRUE;
}

const char *atn_encdec_heads_note(atn_stack_kind kind) {
    switch (kind) {
    case ATN_STACK_DECODER:
        return _("Decoder self-attention heads (target over earlier target tokens); the stack picker in the Head "
                 "and Model views chooses the stack.");
    case ATN_STACK_CROSS:
        return _("Cross-attention heads (target tokens over source tokens); the stack picker in the Head and "
                 "Model views chooses the stack.");
    default:
        return _("Encoder self-attention heads (source over source); the stack picker in the Head and Model views "
                 "chooses the decoder's or cross-attention.");
    }
}

const char *atn_encdec_cross_undefined_note(void) {
    return _("→ itself, → previous, → next and Distance compare a target index with a source index and are not "
             "defined (—).");
}

char *atn_encdec_view_off_text(const char *name) {
    /* Translators: %s is a view's name ("Trace", "What-if"); the models are T5, BART, Marian */
    return g_strdup_printf(_("%s is off for encoder–decoder models (T5, BART, Marian): it cannot follow their "
                             "decoder and cross-attention yet. The Head and Model views show all three kinds."),
                           name);
}

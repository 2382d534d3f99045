/* AtnWhatif: the what-if lab's changes to the model, as the window holds them (an immutable,
 * reference-counted copy of an atn_interventions with its own arrays), and the link from a
 * result to the changes it was run with.
 *
 * The window's session runs every result with the session's AtnWhatif (atn_session_set_whatif),
 * through the same engine API as the command line's what-if options (atn_run_options'
 * interventions); the What-if view compares that result with the original model's run. */
#pragma once

#include <glib-object.h>

#include "atn-result.h"
#include "attnscope.h"

G_BEGIN_DECLS

typedef struct AtnWhatif AtnWhatif;

/* A copy of iv (its arrays copied; heads_off is [n_layers][n_heads], mask_layers [n_layers]:
 * dropped when it names every layer), or NULL when iv changes
 * nothing (atn_interventions_none).  Token positions are sorted; atn_whatif_for_tokens drops
 * those outside a text. */
AtnWhatif *atn_whatif_new(const atn_interventions *iv, int n_layers, int n_heads);
AtnWhatif *atn_whatif_ref(AtnWhatif *w);
void atn_whatif_unref(AtnWhatif *w);   /* NULL: nothing */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AtnWhatif, atn_whatif_unref)

/* The changes (borrowed from w, alive as long as it). */
const atn_interventions *atn_whatif_get(const AtnWhatif *w);
int atn_whatif_get_n_layers(const AtnWhatif *w);
int atn_whatif_get_n_heads(const AtnWhatif *w);
/* The changes for an input of n tokens, into *out (arrays borrowed from w): global and hidden
 * tokens at n or beyond dropped (they are not in this text), and a heads_off array of another
 * model's shape dropped. */
void atn_whatif_for_tokens(const AtnWhatif *w, int n_layers, int n_heads, int n, atn_interventions *out);
/* The command line's options for the same changes ("--heads-off", "0:1,1:2", "--window", "2",
 * ...), NULL-terminated (g_strfreev); `attnscope diff` with them compares the same runs. */
char **atn_whatif_dup_cli_args(const AtnWhatif *w);
/* One line for people: "heads off: L0 H1, L1 H2 · window 2 · ALiBi" (translated). */
char *atn_whatif_describe(const AtnWhatif *w);

/* What a head's label says when w changed it ("switched off (what-if)", "made uniform
 * (what-if)", translated and borrowed) instead of its pattern, which describes a head that no
 * longer runs; NULL when the head runs as the original (w NULL: every head). */
const char *atn_whatif_head_note(const AtnWhatif *w, int layer, int head);
/* A figure's title naming the changes: "title · what-if: 1 head switched off · ALiBi"; a copy
 * of title when w is NULL.  Newly allocated. */
char *atn_whatif_title(const AtnWhatif *w, const char *title);

/* What a head is in w (NULL: on). */
typedef enum AtnWhatifHead {
    ATN_WHATIF_HEAD_ON = 0,
    ATN_WHATIF_HEAD_OFF,       /* switched off, outputs zero (Hugging Face's head_mask) */
    ATN_WHATIF_HEAD_UNIFORM,   /* switched off, attends uniformly */
} AtnWhatifHead;
AtnWhatifHead atn_whatif_get_head(const AtnWhatif *w, int layer, int head);

/* What the Model view's head menu does to one head. */
typedef enum AtnWhatifHeadChange {
    ATN_WHATIF_SWITCH_ON = 0,   /* back on */
    ATN_WHATIF_SWITCH_OFF,      /* off, outputs zero: every switched-off head then outputs zero */
    ATN_WHATIF_MAKE_UNIFORM,    /* off, attends uniformly: every switched-off head then does */
    ATN_WHATIF_KEEP_ONLY,       /* every other head of its layer off, this one on */
} AtnWhatifHeadChange;
/* w (NULL: the original model) with one head changed, for a model of n_layers x n_heads (a w
 * of another shape counts as no heads off); every other change of w kept.  A new reference,
 * or NULL when the result changes nothing. */
AtnWhatif *atn_whatif_change_head(const AtnWhatif *w, int n_layers, int n_heads, int layer, int head,
                                  AtnWhatifHeadChange change);
/* "switch-on", "switch-off", "uniform", "keep-only" (the head menu's action targets), and
 * back (-1 for another name). */
const char *atn_whatif_head_change_name(AtnWhatifHeadChange change);
int atn_whatif_head_change_from_name(const char *name);

/* A layer list as people write it ("0, 2–3" when text is FALSE: for labels; "0,2-3": for
 * --mask-layers), of the layers mark[n_layers] names. */
char *atn_whatif_format_layers(const uint8_t *mark, int n_layers, gboolean for_cli);

/* The changes a result was run with (a ref is the result's), or NULL for the original model. */
void atn_whatif_attach(AtnResult *r, AtnWhatif *w);
AtnWhatif *atn_whatif_of_result(AtnResult *r);

G_END_DECLS

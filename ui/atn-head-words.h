/* The Head view's "Words" mode (issue 35): the shown head merged into words as `export heatmap
 * --words` does (ui/render/word-merge.h: a word's row the mean of its pieces' rows, its column
 * the sum of their columns), with the words' labels and the token <-> word maps the view needs
 * to keep selecting queries by token.  GLib; main thread. */
#pragma once

#include <glib.h>

#include "attnscope.h"

G_BEGIN_DECLS

typedef struct AtnHeadWords {
    int n_words;
    int32_t *start;   /* [n_words + 1] first token of each word; start[n_words] = n */
    float *values;    /* [n_words][n_words] the merged head */
    char **labels;    /* [n_words] + NULL: the words ("trans" "##form" "##ers" -> "transformers") */
} AtnHeadWords;

/* head [n][n] over enc's n tokens (labels [n]: the tokens as shown), merged; NULL for a NULL
 * argument.  Free with atn_head_words_free. */
AtnHeadWords *atn_head_words_new(const atn_encoding *enc, const char *const *labels, const float *head, int n);
void atn_head_words_free(AtnHeadWords *w);   /* NULL: nothing */
/* How many words enc's first n tokens make (n when no piece continues a word: nothing to merge);
 * 0 for a NULL enc. */
int atn_head_words_count(const atn_encoding *enc, int n);
/* The word holding token t (-1 when t is out of range). */
int atn_head_words_word_of(const AtnHeadWords *w, int t);

G_END_DECLS

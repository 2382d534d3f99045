/* The What-if page's token choice at any length (issue 35): at ATN_TOKEN_SPANS_MIN tokens and
 * more, a box where positions and spans are typed ("0, 5, 120-180"), and a picker of a span's
 * two ends with their tokens shown, stand in for one toggle chip per token (1,024 buttons at
 * 1,024 tokens).  Main thread. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ATN_TOKEN_SPANS_MIN 512

/* "0, 5 120-180" (positions and first-last spans, both ends included, separated by commas or
 * spaces) against n tokens -> out, sorted without repeats (its old contents replaced).  FALSE
 * with *error (newly allocated, translated) naming the bad item, out untouched. */
gboolean atn_token_spans_parse(const char *text, int n, GArray *out, char **error);
/* The positions (sorted int32) as such text: runs of 3 or more as spans ("0, 5, 120-180").
 * Newly allocated. */
char *atn_token_spans_format(const int32_t *positions, guint count);

/* An entry showing list (a GArray of sorted int32 positions, borrowed: it must outlive the
 * entry) which, on Enter, replaces list with what was typed and calls changed(user_data), or
 * marks itself as an error (its tooltip says why) and leaves list alone. */
GtkWidget *atn_token_spans_entry_new(GArray *list, int n, GCallback changed, gpointer user_data);

/* A picker for such an entry (atn_token_spans_entry_new's): two positions, first and last, the
 * tokens at both ends shown under them ("“the” … “cat”: 4 tokens"), and Add, which puts that
 * span into the entry's list as typing it would (and calls its changed).  tokens: [n] the
 * tokens as shown, copied (NULL: positions only).  Main thread. */
GtkWidget *atn_token_spans_picker_new(GtkWidget *entry, const char *const *tokens);
/* For tests: the picker's parts (any may be NULL). */
void atn_token_spans_picker_get(GtkWidget *picker, GtkSpinButton **from, GtkSpinButton **to, GtkButton **add,
                                GtkLabel **text);

G_END_DECLS

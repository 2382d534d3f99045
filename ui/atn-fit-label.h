/* AtnFitLabel: a line of status text that is never cut where it can be fitted (issue 14:
 * readable at 1280x720, in English and Chinese).  It draws its text in the height the row
 * gives it: on one line at the normal size if it fits, else wrapped onto as many lines as
 * the height holds, else a shorter wording of the same text (every number kept), else a
 * smaller size (down to 0.7 of normal); only when nothing fits is the last try ellipsized,
 * and then (or whenever a shorter wording is shown) the tooltip gives the full text.
 *
 * It asks for no width of its own (give it hexpand) and for one line of its font in height
 * (unless set to grow), so a new text needs a draw, not a new layout of the window; the fit is
 * computed at each draw from the allocation and the current font (no timers, no feedback into
 * the layout). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ATN_TYPE_FIT_LABEL (atn_fit_label_get_type())
G_DECLARE_FINAL_TYPE(AtnFitLabel, atn_fit_label, ATN, FIT_LABEL, GtkWidget)

GtkWidget *atn_fit_label_new(void);
/* The text (NULL: none) and, optionally, shorter wordings of it tried in order when it does
 * not fit (NULL or a NULL-terminated array; copied).  Only queues a draw. */
void atn_fit_label_set_text(AtnFitLabel *self, const char *text, const char *const *shorter);
/* The full text ("" when none). */
const char *atn_fit_label_get_text(AtnFitLabel *self);
/* 0 = left (default), 1 = right; lines are aligned the same way. */
void atn_fit_label_set_xalign(AtnFitLabel *self, float xalign);
/* Instead of one line's height, ask for as many lines (up to 3 and max_lines) as let the text
 * fit its width without a cut (height-for-width; its row grows only when the width needs it).
 * A new text then needs a new layout. */
void atn_fit_label_set_grow(AtnFitLabel *self, gboolean grow);
/* At most this many lines (default 3; the height decides first). */
void atn_fit_label_set_max_lines(AtnFitLabel *self, int lines);

/* What a draw at the current allocation shows.  */
typedef struct AtnFitLabelShown {
    const char *text;   /* the wording drawn (the full text or one of the shorter ones); owned by the label */
    gboolean cut;       /* ellipsized: even the last try did not fit */
    int lines;          /* lines drawn */
    double scale;       /* of the normal font size: 1.0, 0.9, 0.8 or 0.7 */
    int width, height;  /* the drawn text's extent in px (within the allocation unless cut) */
} AtnFitLabelShown;

G_END_DECLS

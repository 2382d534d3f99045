/* The What-if page's rotary knobs (RoPE base θ, linear scaling factor, a layer's sliding window
 * on or off; atn_interventions' rope_theta, rope_factor, sliding, sliding_window): a section of
 * controls the page (ui/atn-whatif-view.c) embeds, reads and sets.  Main thread only. */
#ifndef ATN_WHATIF_ROTARY_H
#define ATN_WHATIF_ROTARY_H

#include <gtk/gtk.h>

#include "attnscope.h"

typedef struct AtnWhatifRotary AtnWhatifRotary;

/* A new section; changed(data) is called when a control changes (the page's own handler,
 * which applies the changes).  Free with atn_whatif_rotary_free. */
AtnWhatifRotary *atn_whatif_rotary_new(GCallback changed, gpointer data);
void atn_whatif_rotary_free(AtnWhatifRotary *r);   /* NULL: nothing; the widget goes with its parent */
/* The section's widget (owned by the section until the page packs it). */
GtkWidget *atn_whatif_rotary_widget(AtnWhatifRotary *r);
/* The model the page shows (NULL: none or an attention file): the section is visible for a
 * rotary model only, its θ starts at the model's, the window size is editable only for a
 * model without a window of its own. */
void atn_whatif_rotary_set_model(AtnWhatifRotary *r, const atn_model *m);
/* The controls into iv's rotary fields for a model of n_layers; *sliding receives a new
 * [n_layers] array (g_free) when a layer's window is turned on or off, else NULL.  A layer
 * list that does not parse is marked at its entry and left out. */
void atn_whatif_rotary_read(AtnWhatifRotary *r, int n_layers, atn_interventions *iv, int8_t **sliding);
/* The controls set from iv (the session's changes; NULL: none). */
void atn_whatif_rotary_sync(AtnWhatifRotary *r, const atn_interventions *iv, int n_layers);
/* Every knob back to the model's. */
void atn_whatif_rotary_reset(AtnWhatifRotary *r);
/* A control by name for tests: "rope-theta" (check), "rope-theta-value", "rope-factor",
 * "rope-factor-value", "sliding-off", "sliding-on" (entries), "sliding-window"; NULL otherwise. */
GtkWidget *atn_whatif_rotary_get_control(AtnWhatifRotary *r, const char *name);

#endif

/* The window's controls for encoder-decoders (ui/atn-encdec.h): the target entry beside the
 * sentence and the stack picker of the Head and Model views.  Both follow an AtnSession and
 * are visible only while it shows an encoder-decoder (T5, BART, Marian). */
#pragma once

#include <gtk/gtk.h>

#include "atn-session.h"

G_BEGIN_DECLS

/* AtnTargetEntry: "Target" and an entry; each edit sets the session's target
 * (atn_session_set_target), which runs the model as the sentence does.  Shown while the
 * session's model is an encoder-decoder. */
#define ATN_TYPE_TARGET_ENTRY (atn_target_entry_get_type())
G_DECLARE_FINAL_TYPE(AtnTargetEntry, atn_target_entry, ATN, TARGET_ENTRY, GtkWidget)
GtkWidget *atn_target_entry_new(void);
void atn_target_entry_set_session(AtnTargetEntry *self, AtnSession *session);
GtkEntry *atn_target_entry_get_entry(AtnTargetEntry *self);   /* borrowed (tests) */

/* AtnStackPicker: three linked toggle buttons, Encoder self / Decoder self / Cross, bound to
 * the session's stack (atn_session_set_stack).  Shown while the session's result is an
 * encoder-decoder's. */
#define ATN_TYPE_STACK_PICKER (atn_stack_picker_get_type())
G_DECLARE_FINAL_TYPE(AtnStackPicker, atn_stack_picker, ATN, STACK_PICKER, GtkWidget)
GtkWidget *atn_stack_picker_new(void);
void atn_stack_picker_set_session(AtnStackPicker *self, AtnSession *session);
/* The button of stack kind (an atn_stack_kind; borrowed; tests click it). */
GtkToggleButton *atn_stack_picker_get_button(AtnStackPicker *self, int kind);

G_END_DECLS

/* AtnModelHandle: a reference-counted atn_model, so a run in a worker thread can keep the
 * model alive while the window switches to another one.  BERT models are immutable once
 * open and may be read from any thread; toy models are edited on the main thread only (their
 * runs are tiny and happen there too).
 *
 * A handle may instead hold an attention file (engine/include/attention-file.h: attention
 * computed elsewhere, without weights): then atn_model_handle_get_model is NULL and
 * atn_model_handle_has_weights FALSE, the one predicate the views ask before anything that
 * needs the model (what-if, predictions, the trace, running text). */
#pragma once

#include <glib-object.h>

#include "attnscope.h"

G_BEGIN_DECLS

#define ATN_TYPE_MODEL_HANDLE (atn_model_handle_get_type())
G_DECLARE_FINAL_TYPE(AtnModelHandle, atn_model_handle, ATN, MODEL_HANDLE, GObject)

/* Takes ownership of model.  source is what the user chose (a built-in name or a path). */
AtnModelHandle *atn_model_handle_new(atn_model *model, const char *source);
/* Takes ownership of file, whose attention capture (atn_attn_file_capture) has been made: only
 * that capture and the file's info are read from now on, so any thread may read them.  path is
 * the file's path (the source). */
typedef struct atn_attn_file atn_attn_file;
AtnModelHandle *atn_model_handle_new_attention(atn_attn_file *file, const char *path);
/* The model, or NULL for an attention file. */
atn_model *atn_model_handle_get_model(AtnModelHandle *self);
/* FALSE for an attention file (no weights: nothing can be run, predicted or traced). */
gboolean atn_model_handle_has_weights(AtnModelHandle *self);
/* The attention file, or NULL for a model.  Borrowed. */
atn_attn_file *atn_model_handle_get_attention_file(AtnModelHandle *self);
const char *atn_model_handle_get_source(AtnModelHandle *self);
/* The model's name; for an attention file its model_id, else the file's base name. */
const char *atn_model_handle_get_name(AtnModelHandle *self);
gboolean atn_model_handle_is_toy(AtnModelHandle *self);
/* TRUE when this model was opened in place of the one asked for (the demo or the worked
 * example after a failure): the window does not remember it as the user's choice. */
gboolean atn_model_handle_get_fallback(AtnModelHandle *self);
/* Run memory for this model: the spare one a finished result gave back (its pages already
 * touched: typing at bert-base size then costs no fresh 40 MB per keystroke), or a new run.
 * Any thread. */
atn_run *atn_model_handle_take_run(AtnModelHandle *self);
/* Takes run back as the spare (a result that is no longer shown). */
void atn_model_handle_give_run(AtnModelHandle *self, atn_run *run);
/* How many runs atn_model_handle_take_run had to make new (no spare at hand): typing should
 * keep this at two (the shown result's run and the spare).  Any thread. */
guint atn_model_handle_get_n_new_runs(AtnModelHandle *self);
/* TRUE when a spare run waits for the next take_run.  Any thread. */
void atn_model_handle_set_fallback(AtnModelHandle *self, gboolean fallback);
/* Counts edits of a toy model (bumped by atn_model_handle_toy_set). */
guint atn_model_handle_get_generation(AtnModelHandle *self);
gboolean atn_model_handle_toy_set(AtnModelHandle *self, atn_toy_matrix which, int layer, int row, int col,
                                  float value, GError **error);
float atn_model_handle_toy_get(AtnModelHandle *self, atn_toy_matrix which, int layer, int row, int col);
/* TRUE when a toy model's numbers were edited since it was opened (or last reverted). */
gboolean atn_model_handle_get_edited(AtnModelHandle *self);
/* Puts a toy model's numbers back as they were opened (a copy taken when the handle was
 * made), in this handle: its generation moves on, so runs and views follow; "modified" is
 * cleared unless the edits had been saved to a file.  Main thread, like every edit.  FALSE
 * for a model that is not a toy model. */
gboolean atn_model_handle_revert_toy(AtnModelHandle *self);
/* TRUE when a toy model has edits not yet saved to a file. */
gboolean atn_model_handle_get_modified(AtnModelHandle *self);
/* Writes a toy model as JSON (temporary file + rename); clears "modified". */
gboolean atn_model_handle_save_toy(AtnModelHandle *self, const char *path, GError **error);

G_END_DECLS

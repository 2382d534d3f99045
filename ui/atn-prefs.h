/* AtnPrefs: the preferences that persist (colour map, last model, recent models, device,
 * font scale, last sentence) as GObject properties.  Backed by GSettings when the schema is
 * installed or compiled in the build tree, else by a key file in the user's config folder,
 * so a missing schema never aborts the app. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define ATN_TYPE_PREFS (atn_prefs_get_type())
G_DECLARE_FINAL_TYPE(AtnPrefs, atn_prefs, ATN, PREFS, GObject)

/* The process-wide preferences (created on first use). */
AtnPrefs *atn_prefs_get_default(void);

const char *atn_prefs_get_colormap(AtnPrefs *self);
void atn_prefs_set_colormap(AtnPrefs *self, const char *name);
const char *atn_prefs_get_last_model(AtnPrefs *self);
void atn_prefs_set_last_model(AtnPrefs *self, const char *name);
const char *atn_prefs_get_device(AtnPrefs *self);
void atn_prefs_set_device(AtnPrefs *self, const char *device);
double atn_prefs_get_font_scale(AtnPrefs *self);
void atn_prefs_set_font_scale(AtnPrefs *self, double scale);
/* "head" (default: each head's colours run from 0 to its own largest weight) or "fixed"
 * (0 to 1 for every head, so heads compare); anything else reads as "head". */
const char *atn_prefs_get_color_scale(AtnPrefs *self);
void atn_prefs_set_color_scale(AtnPrefs *self, const char *scale);
/* "fp32" (default), "bf16" or "fp16": the arithmetic of the window's runs (atn_precision);
 * anything else reads as "fp32". */
const char *atn_prefs_get_precision(AtnPrefs *self);
void atn_prefs_set_precision(AtnPrefs *self, const char *precision);
const char *atn_prefs_get_example_text(AtnPrefs *self);
void atn_prefs_set_example_text(AtnPrefs *self, const char *text);
/* Newest first; borrowed, NULL-terminated. */
const char *const *atn_prefs_get_recent_models(AtnPrefs *self);
/* Moves path to the front of the recent list (keeps at most 8). */
void atn_prefs_add_recent_model(AtnPrefs *self, const char *path);
/* From now on changes stay in this process: the properties change and notify as before, but
 * nothing reaches GSettings or the key file (the GUI benchmark's window must not replace the
 * user's remembered model and sentence).  Cannot be undone. */
void atn_prefs_keep_in_memory(AtnPrefs *self);

G_END_DECLS

/* A session file (docs/session-file.md): what a window shows — the model, the sentence (and
 * its pair), the view, layer, head, query token, the what-if changes, the colour map and scale
 * and the precision — as a small JSON object with "format": "attnscope-session/1".  A teacher
 * saves one (File → Save Session…) and students open it (File → Open Session…, the command
 * line, drag and drop, a file manager) to see exactly that screen.
 *
 * GLib and cJSON only (no GTK, no model): the window (atn-window-session.c) applies what this
 * reads, and the lessons (atn-lesson.h) read each step's state with the same parser.  Every
 * function may be called from any thread; nothing here is shared. */
#pragma once

#include <cjson/cJSON.h>
#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define ATN_SESSION_FORMAT "attnscope-session/1"
/* The error domain of the parsers here; every message names the file (when given) and the
 * key ("model.builtin", "whatif.heads_off[2]") that is wrong. */
#define ATN_SESSION_FILE_ERROR (atn_session_file_error_quark())
GQuark atn_session_file_error_quark(void);
typedef enum {
    ATN_SESSION_FILE_ERROR_READ,      /* cannot be read, or too large (over 1 MiB) */
    ATN_SESSION_FILE_ERROR_JSON,      /* not JSON */
    ATN_SESSION_FILE_ERROR_VERSION,   /* "format" missing, another format or another version */
    ATN_SESSION_FILE_ERROR_KEY,       /* a key missing, of the wrong type or out of range */
} AtnSessionFileError;

/* How a model is named: one of the three, plus a revision for a Hub id. */
typedef enum {
    ATN_SESSION_MODEL_NONE = 0,   /* a lesson step that keeps the model shown */
    ATN_SESSION_MODEL_BUILTIN,    /* "demo", "demo-gpt2", "worked-example" */
    ATN_SESSION_MODEL_PATH,       /* a Hugging Face folder or a toy JSON file */
    ATN_SESSION_MODEL_HUB,        /* "org/name" from the Hugging Face cache, at revision */
} AtnSessionModelKind;

/* Every field may be unset: strings NULL, ints -1, has_* FALSE.  A saved session sets all it
 * knows; a lesson step sets what the step changes. */
typedef struct AtnSessionState {
    AtnSessionModelKind model_kind;
    char *model;                /* the name, the path (absolute after reading) or the Hub id */
    char *revision;             /* Hub only; NULL: the cache's main ref */
    char *text, *text_pair;     /* text_pair NULL or "": no pair */
    char *view;                 /* "head", "model", "similarity", "trace", "statistics", "whatif", "train" */
    int layer, head, query;     /* from 0; -1: unset */
    char *colormap;             /* render.h's colour map name ("viridis" …) */
    char *color_scale;          /* "head" or "fixed" */
    char *precision;            /* "fp32", "bf16", "fp16" */
    /* what-if: has_whatif FALSE leaves it unset; TRUE with nothing changed is the original */
    gboolean has_whatif;
    GArray *heads_off;          /* int pairs [layer, head] (2 ints each), or NULL */
    gboolean uniform;           /* switched-off heads attend uniformly instead of outputting 0 */
    gboolean causal, alibi, no_positions, shuffle;
    int window;                 /* -1: none */
    int strided;                /* 0: none */
    GArray *global_tokens, *hide_tokens, *mask_layers;   /* ints, or NULL */
    guint64 shuffle_seed;
    double temperature;         /* 1: none */
} AtnSessionState;

void atn_session_state_init(AtnSessionState *s);   /* every field unset */
void atn_session_state_clear(AtnSessionState *s);  /* frees what it holds, then unset again */
/* The source string the session opens ("demo", "/abs/folder", "org/name@rev"), newly
 * allocated, or NULL when no model is named. */
char *atn_session_state_model_source(const AtnSessionState *s);
/* Fills kind/model/revision from a source as the window knows it (what the user chose):
 * a built-in name, an existing file or folder (made absolute), else org/name[@rev]. */
void atn_session_state_set_model_source(AtnSessionState *s, const char *source);

/* Reads the state keys of obj into s (cleared first).  require_model: "model" must be there
 * (a session file; a lesson step may leave it out).  where names the object in messages
 * ("session.json" or "lesson.json: steps[2].state"); base_dir resolves a relative model path
 * (NULL: the current folder).  FALSE with error set naming where and the key. */
gboolean atn_session_state_from_json(AtnSessionState *s, const cJSON *obj, gboolean require_model,
                                     const char *where, const char *base_dir, GError **error);
/* Adds s's set fields to obj (a JSON object). */
void atn_session_state_to_json(const AtnSessionState *s, cJSON *obj);

/* Whether the model s names is there: a path that exists, a Hub id (and revision) in the
 * Hugging Face cache (hf-cache.h), any built-in name.  FALSE with error naming where and
 * the key ("model.path", "model.hub") — the model is not opened. */
gboolean atn_session_state_check_model(const AtnSessionState *s, const char *where, GError **error);

/* Reads a whole session file (at most 1 MiB) into s.  FALSE with error naming path and key. */
gboolean atn_session_file_load(const char *path, AtnSessionState *s, GError **error);
/* Parses text (len bytes) as a session file named path (for messages and relative paths). */
gboolean atn_session_file_parse(const char *text, gsize len, const char *path, AtnSessionState *s, GError **error);
/* The file's text (format first, indented, ending in a newline), newly allocated. */
char *atn_session_file_to_text(const AtnSessionState *s);
/* Writes it atomically (g_file_set_contents). */
gboolean atn_session_file_save(const char *path, const AtnSessionState *s, GError **error);
/* Whether the file's first 4 KiB say "attnscope-session/" (the MIME magic's test): a dropped
 * or command-line file is a session, not a model. */
gboolean atn_session_file_sniff(const char *path);

G_END_DECLS

/* Lessons (docs/lessons.md): a title and steps; each step a session-like state (what the
 * window shows: atn-session-file.h's keys, all optional), a question and an answer.  Texts are
 * a string or an object of translations ({"en": …, "zh_CN": …}).  Answers quote the run's own
 * numbers through placeholders filled from the capture when the answer is shown, never typed
 * in:
 *   {attn layer=L head=H q=Q k=K}   one attention weight (4 decimals)
 *   {row layer=L head=H q=Q}        the query's whole row, "[0.3760, 0.4487, 0.1752]"
 *   {token i=I}                     token I's text
 *   {n_tokens}                      how many tokens the text has
 *   {{ and }}                       literal braces
 * A lesson file is refused at load when a placeholder is malformed (an unknown name or key, a
 * key missing), naming the file, the step and the placeholder.
 *
 * GLib and cJSON only (no GTK, no model): the numbers come through AtnLessonValues. */
#pragma once

#include <glib.h>

#include "atn-session-file.h"

G_BEGIN_DECLS

#define ATN_LESSON_FORMAT "attnscope-lesson/1"

typedef struct AtnLessonStep {
    AtnSessionState state;
    char *question, *answer;   /* in the language asked for at load */
} AtnLessonStep;

typedef struct AtnLesson {
    char *path;                /* the file it was read from */
    char *title;
    GPtrArray *steps;          /* AtnLessonStep* */
} AtnLesson;

/* Reads a lesson file (at most 1 MiB), taking texts in language lang ("en", "zh_CN", "zh-cn":
 * the first of that tag, its language part, "en", then any).  NULL with error (domain
 * ATN_SESSION_FILE_ERROR) naming the path, the step and the key. */
AtnLesson *atn_lesson_load(const char *path, const char *lang, GError **error);
AtnLesson *atn_lesson_parse(const char *text, gsize len, const char *path, const char *lang, GError **error);
void atn_lesson_free(AtnLesson *lesson);   /* NULL: nothing */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AtnLesson, atn_lesson_free)

/* Where the numbers come from (the window: its result's capture).  Each returns FALSE when
 * the index is outside the run (the placeholder then reads "?"). */
typedef struct AtnLessonValues {
    gboolean (*attn)(gpointer data, int layer, int head, int q, int k, double *out);
    int (*n_tokens)(gpointer data);                      /* -1: no result */
    char *(*token)(gpointer data, int i);                /* newly allocated, NULL outside */
    gpointer data;
} AtnLessonValues;

/* text with its placeholders filled (newly allocated).  values NULL: each reads "…". */
char *atn_lesson_fill(const char *text, const AtnLessonValues *values);
/* Checks the placeholders of text; FALSE with *why (newly allocated) naming the bad one. */
gboolean atn_lesson_check_placeholders(const char *text, char **why);

/* The built-in lessons' folder: ATTNSCOPE_DATADIR/lessons, the source tree's data/lessons
 * when running uninstalled, else the installed datadir's.  Newly allocated. */
char *atn_lesson_builtin_dir(void);
/* The built-in lesson files, sorted by name (newly allocated strv of full paths). */
char **atn_lesson_builtin_paths(void);

G_END_DECLS

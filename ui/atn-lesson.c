/* Lesson files: read with cJSON, texts picked by language, placeholders checked at load and
 * filled from the run (atn-lesson.h). */
#include "atn-lesson.h"

#include <cjson/cJSON.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

void atn_lesson_free(AtnLesson *lesson) {
    if (!lesson)
        return;
    g_free(lesson->path);
    g_free(lesson->title);
    if (lesson->steps)
        g_ptr_array_unref(lesson->steps);
    g_free(lesson);
}

static void step_free(gpointer p) {
    AtnLessonStep *st = p;
    atn_session_state_clear(&st->state);
    g_free(st->question);
    g_free(st->answer);
    g_free(st);
}

/* ---- placeholders ------------------------------------------------------------------------ */

typedef struct placeholder {
    char name[16];
    int layer, head, q, k, i;   /* -1: not given */
} placeholder;

/* Parses the inside of {…} (inner, len bytes).  FALSE with *why. */
static gboolean parse_placeholder(const char *inner, gsize len, placeholder *ph, char **why) {
    g_autofree char *s = g_strndup(inner, len);
    g_auto(GStrv) parts = g_strsplit_set(g_strstrip(s), " \t", -1);
    memset(ph, 0, sizeof *ph);
    ph->layer = ph->head = ph->q = ph->k = ph->i = -1;
    if (!parts[0] || !*parts[0]) {
        *why = g_strdup(_("an empty placeholder {}"));
        return FALSE;
    }
    static const char *const names[] = {"attn", "row", "token", "n_tokens", NULL};
    if (!g_strv_contains(names, parts[0])) {
        *why = g_strdup_printf(_("{%s}: unknown placeholder (attn, row, token, n_tokens)"), parts[0]);
        return FALSE;
    }
    g_strlcpy(ph->name, parts[0], sizeof ph->name);
    for (int p = 1; parts[p]; p++) {
        if (!*parts[p])
            continue;
        char *eq = strchr(parts[p], '=');
        char *end = NULL;
        long v = eq ? strtol(eq + 1, &end, 10) : -1;
        if (!eq || end == eq + 1 || *end || v < 0 || v > 1 << 20) {
            *why = g_strdup_printf(_("{%s}: “%s” must be key=number"), ph->name, parts[p]);
            return FALSE;
        }
        *eq = 0;
        int *slot = !strcmp(parts[p], "layer") ? &ph->layer : !strcmp(parts[p], "head") ? &ph->head
                    : !strcmp(parts[p], "q") ? &ph->q : !strcmp(parts[p], "k") ? &ph->k
                    : !strcmp(parts[p], "i") ? &ph->i : NULL;
        if (!slot) {
            *why = g_strdup_printf(_("{%s}: unknown key “%s”"), ph->name, parts[p]);
            return FALSE;
        }
        *slot = (int)v;
    }
    const char *need = NULL;
    if (!strcmp(ph->name, "attn"))
        need = ph->layer < 0 ? "layer" : ph->head < 0 ? "head" : ph->q < 0 ? "q" : ph->k < 0 ? "k" : NULL;
    else if (!strcmp(ph->name, "row"))
        need = ph->layer < 0 ? "layer" : ph->head < 0 ? "head" : ph->q < 0 ? "q" : NULL;
    else if (!strcmp(ph->name, "token"))
        need = ph->i < 0 ? "i" : NULL;
    if (need) {
        *why = g_strdup_printf(_("{%s}: key “%s” is missing"), ph->name, need);
        return FALSE;
    }
    return TRUE;
}

/* Walks text: literal runs appended to out (when not NULL), each placeholder handed to fill.
 * FALSE with *why at the first bad one. */
typedef void (*fill_fn)(const placeholder *ph, GString *out, const AtnLessonValues *v);

static gboolean walk(const char *text, GString *out, fill_fn fill, const AtnLessonValues *v, char **why) {
    for (const char *p = text; *p;) {
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            if (out)
                g_string_append_c(out, p[0]);
            p += 2;
        } else if (*p == '{') {
            const char *close = strchr(p, '}');
            if (!close) {
                *why = g_strdup(_("a “{” without its “}” (write {{ for a brace)"));
                return FALSE;
            }
            placeholder ph;
            if (!parse_placeholder(p + 1, close - p - 1, &ph, why))
                return FALSE;
            if (fill)
                fill(&ph, out, v);
            p = close + 1;
        } else {
            if (out)
                g_string_append_c(out, *p);
            p++;
        }
    }
    return TRUE;
}

gboolean atn_lesson_check_placeholders(const char *text, char **why) { return walk(text, NULL, NULL, NULL, why); }

static void fill_one(const placeholder *ph, GString *out, const AtnLessonValues *v) {
    if (!v) {
        g_string_append(out, "…");
        return;
    }
    int n = v->n_tokens ? v->n_tokens(v->data) : -1;
    double x;
    if (!strcmp(ph->name, "n_tokens")) {
        if (n >= 0)
            g_string_append_printf(out, "%d", n);
        else
            g_string_append_c(out, '?');
    } else if (!strcmp(ph->name, "token")) {
        g_autofree char *t = v->token ? v->token(v->data, ph->i) : NULL;
        g_string_append(out, t ? t : "?");
    } else if (!strcmp(ph->name, "attn")) {
        if (v->attn && v->attn(v->data, ph->layer, ph->head, ph->q, ph->k, &x))
            g_string_append_printf(out, "%.4f", x);
        else
            g_string_append_c(out, '?');
    } else {   /* row */
        if (n <= 0 || !v->attn || !v->attn(v->data, ph->layer, ph->head, ph->q, 0, &x)) {
            g_string_append_c(out, '?');
            return;
        }
        g_string_append_c(out, '[');
        for (int k = 0; k < n; k++) {
            if (!v->attn(v->data, ph->layer, ph->head, ph->q, k, &x))
                break;
            g_string_append_printf(out, "%s%.4f", k ? ", " : "", x);
        }
        g_string_append_c(out, ']');
    }
}

char *atn_lesson_fill(const char *text, const AtnLessonValues *values) {
    GString *out = g_string_new(NULL);
    g_autofree char *why = NULL;
    if (!walk(text ? text : "", out, fill_one, values, &why)) {   /* checked at load; a text set later */
        g_string_free(out, TRUE);
        return g_strdup(text);
    }
    return g_string_free(out, FALSE);
}

/* ---- reading ----------------------------------------------------------------------------- */

/* A text: a string, or an object of translations. */
static gboolean get_text(const cJSON *obj, const char *key, const char *lang, const char *where, gboolean required,
                         char **out, GError **error) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!v) {
        if (required)
            g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_KEY, _("%s: key “%s”: is missing"), where,
                        key);
        return !required;
    }
    const cJSON *pick = NULL;
    if (cJSON_IsString(v))
        pick = v;
    else if (cJSON_IsObject(v) && cJSON_GetArraySize(v) > 0) {
        g_autofree char *norm = g_strdup(lang ? lang : "en");
        g_strdelimit(norm, "-", '_');
        g_autofree char *base = g_strdup(norm);
        char *us = strchr(base, '_');
        if (us)
            *us = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, v) if (!g_ascii_strcasecmp(c->string, norm)) pick = c;
        if (!pick)
            cJSON_ArrayForEach(c, v) if (!g_ascii_strncasecmp(c->string, base, strlen(base)) &&
                                         (!c->string[strlen(base)] || c->string[strlen(base)] == '_')) pick = c;
        if (!pick)
            pick = cJSON_GetObjectItemCaseSensitive(v, "en");
        if (!pick)
            pick = v->child;
        const cJSON *c2;
        cJSON_ArrayForEach(c2, v) if (!cJSON_IsString(c2)) {
            g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_KEY,
                        _("%s: key “%s.%s”: must be a string"), where, key, c2->string);
            return FALSE;
        }
    }
    if (!pick || !cJSON_IsString(pick) || !g_utf8_validate(pick->valuestring, -1, NULL)) {
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_KEY,
                    _("%s: key “%s”: must be a string or an object of translations {\"en\": …, \"zh_CN\": …}"), where,
                    key);
        return FALSE;
    }
    g_autofree char *why = NULL;
    if (!atn_lesson_check_placeholders(pick->valuestring, &why)) {
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_KEY, _("%s: key “%s”: %s"), where, key, why);
        return FALSE;
    }
    *out = g_strdup(pick->valuestring);
    return TRUE;
}

AtnLesson *atn_lesson_parse(const char *text, gsize len, const char *path, const char *lang, GError **error) {
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) {
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_JSON, _("%s: not a lesson file: not JSON"),
                    path);
        return NULL;
    }
    AtnLesson *lesson = g_new0(AtnLesson, 1);
    lesson->path = g_strdup(path);
    lesson->steps = g_ptr_array_new_with_free_func(step_free);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(root, "steps");
    g_autofree char *dir = g_path_get_dirname(path);
    gboolean ok = FALSE;
    if (!cJSON_IsObject(root))
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_KEY, _("%s: must be a JSON object"), path);
    else if (!cJSON_IsString(f) || !g_str_has_prefix(f->valuestring, "attnscope-lesson/"))
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_VERSION,
                    _("%s: key “format”: not a lesson file (it must say “%s”)"), path, ATN_LESSON_FORMAT);
    else if (strcmp(f->valuestring, ATN_LESSON_FORMAT) != 0)
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_VERSION,
                    _("%s: key “format”: version “%s” is not one this attnscope reads (it reads “%s”)"), path,
                    f->valuestring, ATN_LESSON_FORMAT);
    else if (!get_text(root, "title", lang, path, TRUE, &lesson->title, error))
        ;
    else if (!cJSON_IsArray(steps) || cJSON_GetArraySize(steps) == 0)
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_KEY,
                    _("%s: key “steps”: must be a list of at least one step"), path);
    else {
        ok = TRUE;
        int i = 0;
        const cJSON *st;
        cJSON_ArrayForEach(st, steps) {
            g_autofree char *where = g_strdup_printf("%s: steps[%d]", path, i++);
            AtnLessonStep *step = g_new0(AtnLessonStep, 1);
            atn_session_state_init(&step->state);
            g_ptr_array_add(lesson->steps, step);
            const cJSON *state = cJSON_GetObjectItemCaseSensitive(st, "state");
            g_autofree char *swhere = g_strconcat(where, ".state", NULL);
            if (!cJSON_IsObject(st)) {
                g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_KEY, _("%s: must be an object"), where);
                ok = FALSE;
            } else if (state && !atn_session_state_from_json(&step->state, state, FALSE, swhere, dir, error))
                ok = FALSE;
            else if (!get_text(st, "question", lang, where, TRUE, &step->question, error) ||
                     !get_text(st, "answer", lang, where, TRUE, &step->answer, error))
                ok = FALSE;
            if (!ok)
                break;
        }
    }
    cJSON_Delete(root);
    if (!ok) {
        atn_lesson_free(lesson);
        return NULL;
    }
    return lesson;
}

AtnLesson *atn_lesson_load(const char *path, const char *lang, GError **error) {
    GStatBuf st;
    if (g_stat(path, &st) == 0 && st.st_size > (1 << 20)) {
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_READ,
                    _("%s: not a lesson file: %lld bytes, a lesson is at most 1 MiB"), path, (long long)st.st_size);
        return NULL;
    }
    g_autofree char *text = NULL;
    gsize len = 0;
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, &len, &e)) {
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_READ, "%s", e->message);
        g_error_free(e);
        return NULL;
    }
    return atn_lesson_parse(text, len, path, lang, error);
}

char *atn_lesson_builtin_dir(void) {
    const char *env = g_getenv("ATTNSCOPE_DATADIR");
    if (env && *env)
        return g_build_filename(env, "lessons", NULL);
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (exe && g_str_has_prefix(exe, ATN_BUILD_DIR "/") && g_file_test(ATN_SOURCE_DATADIR "/lessons", G_FILE_TEST_IS_DIR))
        return g_strdup(ATN_SOURCE_DATADIR "/lessons");
    return g_strdup(ATN_INSTALL_DATADIR "/lessons");
}

static int cmp_str(gconstpointer a, gconstpointer b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char **atn_lesson_builtin_paths(void) {
    g_autofree char *dir = atn_lesson_builtin_dir();
    GPtrArray *all = g_ptr_array_new();
    GDir *d = g_dir_open(dir, 0, NULL);
    for (const char *n; d && (n = g_dir_read_name(d));)
        if (g_str_has_suffix(n, ".json"))
            g_ptr_array_add(all, g_build_filename(dir, n, NULL));
    if (d)
        g_dir_close(d);
    g_ptr_array_sort(all, cmp_str);
    g_ptr_array_add(all, NULL);
    return (char **)g_ptr_array_free(all, FALSE);
}

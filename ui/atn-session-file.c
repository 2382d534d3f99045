/* Session files: read and written with cJSON, checked key by key (atn-session-file.h). */
#include "atn-session-file.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "attnscope.h"
#include "hf-cache.h"
#include "render.h"

#define MAX_FILE (1 << 20)

G_DEFINE_QUARK(atn-session-file-error-quark, atn_session_file_error)

static const char *const view_names[] = {"head", "model", "similarity", "trace", "statistics", "whatif", "train", NULL};
static const char *const scale_names[] = {"head", "fixed", NULL};
static const char *const precision_names[] = {"fp32", "bf16", "fp16", NULL};

void atn_session_state_init(AtnSessionState *s) {
    memset(s, 0, sizeof *s);
    s->layer = s->head = s->query = -1;
    s->window = -1;
    s->temperature = 1.0;
}

void atn_session_state_clear(AtnSessionState *s) {
    g_free(s->model);
    g_free(s->revision);
    g_free(s->text);
    g_free(s->text_pair);
    g_free(s->view);
    g_free(s->colormap);
    g_free(s->color_scale);
    g_free(s->precision);
    GArray *arrays[] = {s->heads_off, s->global_tokens, s->hide_tokens, s->mask_layers};
    for (guint i = 0; i < G_N_ELEMENTS(arrays); i++)
        if (arrays[i])
            g_array_unref(arrays[i]);
    atn_session_state_init(s);
}

char *atn_session_state_model_source(const AtnSessionState *s) {
    if (s->model_kind == ATN_SESSION_MODEL_NONE || !s->model)
        return NULL;
    if (s->model_kind == ATN_SESSION_MODEL_HUB && s->revision && *s->revision)
        return g_strdup_printf("%s@%s", s->model, s->revision);
    return g_strdup(s->model);
}

void atn_session_state_set_model_source(AtnSessionState *s, const char *source) {
    g_clear_pointer(&s->model, g_free);
    g_clear_pointer(&s->revision, g_free);
    s->model_kind = ATN_SESSION_MODEL_NONE;
    if (!source || !*source)
        return;
    if (g_strv_contains(atn_builtin_model_names(), source)) {
        s->model_kind = ATN_SESSION_MODEL_BUILTIN;
        s->model = g_strdup(source);
    } else if (g_file_test(source, G_FILE_TEST_EXISTS)) {
        s->model_kind = ATN_SESSION_MODEL_PATH;
        s->model = g_canonicalize_filename(source, NULL);
    } else {
        s->model_kind = ATN_SESSION_MODEL_HUB;
        const char *at = strrchr(source, '@');
        s->model = at ? g_strndup(source, at - source) : g_strdup(source);
        s->revision = at && at[1] ? g_strdup(at + 1) : NULL;
    }
}

/* ---- reading ---------------------------------------------------------------------- */

typedef struct reader {
    const char *where;
    GError **error;
} reader;

static gboolean fail(reader *r, const char *key, const char *why) {
    /* TRANSLATORS: a session or lesson file's problem: "FILE: key "whatif.window": must be …" */
    g_set_error(r->error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_KEY, _("%s: key “%s”: %s"), r->where, key,
                why);
    return FALSE;
}

/* A string key (absent: *out stays NULL).  names: the allowed values, or NULL. */
static gboolean get_string(reader *r, const cJSON *obj, const char *key, const char *prefix,
                           const char *const *names, char **out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return TRUE;
    g_autofree char *full = g_strconcat(prefix, key, NULL);
    if (!cJSON_IsString(v) || !v->valuestring)
        return fail(r, full, _("must be a string"));
    if (!g_utf8_validate(v->valuestring, -1, NULL))
        return fail(r, full, _("is not valid UTF-8"));
    if (names && !g_strv_contains(names, v->valuestring)) {
        g_autofree char *list = g_strjoinv(", ", (char **)names);
        g_autofree char *why = g_strdup_printf(_("“%s” is not one of %s"), v->valuestring, list);
        return fail(r, full, why);
    }
    g_free(*out);
    *out = g_strdup(v->valuestring);
    return TRUE;
}

/* An integer key in lo..hi (absent: *out unchanged). */
static gboolean get_int(reader *r, const cJSON *obj, const char *key, const char *prefix, int lo, int hi,
                        int *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return TRUE;
    g_autofree char *full = g_strconcat(prefix, key, NULL);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
        return fail(r, full, _("must be a whole number"));
    if (v->valuedouble < lo || v->valuedouble > hi) {
        g_autofree char *why = g_strdup_printf(_("must be from %d to %d"), lo, hi);
        return fail(r, full, why);
    }
    *out = (int)v->valuedouble;
    return TRUE;
}

static gboolean get_bool(reader *r, const cJSON *obj, const char *key, const char *prefix, gboolean *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return TRUE;
    g_autofree char *full = g_strconcat(prefix, key, NULL);
    if (!cJSON_IsBool(v))
        return fail(r, full, _("must be true or false"));
    *out = cJSON_IsTrue(v);
    return TRUE;
}

/* A list of whole numbers 0..hi; pairs: each item a [layer, head] list. */
static gboolean get_ints(reader *r, const cJSON *obj, const char *key, const char *prefix, gboolean pairs,
                         GArray **out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return TRUE;
    g_autofree char *full = g_strconcat(prefix, key, NULL);
    if (!cJSON_IsArray(v))
        return fail(r, full, pairs ? _("must be a list of [layer, head] pairs") : _("must be a list of whole numbers"));
    GArray *a = g_array_new(FALSE, FALSE, sizeof(int));
    int i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, v) {
        g_autofree char *at = g_strdup_printf("%s[%d]", full, i++);
        const cJSON *parts[2] = {item, NULL};
        int n = 1;
        if (pairs) {
            if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2) {
                g_array_unref(a);
                return fail(r, at, _("must be a [layer, head] pair"));
            }
            parts[0] = cJSON_GetArrayItem(item, 0);
            parts[1] = cJSON_GetArrayItem(item, 1);
            n = 2;
        }
        for (int k = 0; k < n; k++) {
            const cJSON *p = parts[k];
            if (!cJSON_IsNumber(p) || p->valuedouble != floor(p->valuedouble) || p->valuedouble < 0 ||
                p->valuedouble > 1 << 20) {
                g_array_unref(a);
                return fail(r, at, _("must be a whole number from 0"));
            }
            int x = (int)p->valuedouble;
            g_array_append_val(a, x);
        }
    }
    *out = a;
    return TRUE;
}

static gboolean read_model(reader *r, const cJSON *obj, gboolean require, const char *base_dir,
                           AtnSessionState *s) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "model");
    if (!m)
        return require ? fail(r, "model", _("is missing: a session names its model")) : TRUE;
    if (!cJSON_IsObject(m))
        return fail(r, "model", _("must be an object with one of “builtin”, “path” or “hub”"));
    char *builtin = NULL, *path = NULL, *hub = NULL;
    gboolean ok = get_string(r, m, "builtin", "model.", atn_builtin_model_names(), &builtin) &&
                  get_string(r, m, "path", "model.", NULL, &path) && get_string(r, m, "hub", "model.", NULL, &hub) &&
                  get_string(r, m, "revision", "model.", NULL, &s->revision);
    int named = !!builtin + !!path + !!hub;
    if (ok && named != 1)
        ok = fail(r, "model", named ? _("names more than one of “builtin”, “path” and “hub”")
                                    : _("must have one of “builtin”, “path” or “hub”"));
    if (ok && hub && !strchr(hub, '/'))
        ok = fail(r, "model.hub", _("must be a Hugging Face id, org/name"));
    if (ok && path && !*path)
        ok = fail(r, "model.path", _("is empty"));
    if (ok && s->revision && !hub)
        ok = fail(r, "model.revision", _("goes only with “hub”"));
    if (ok) {
        if (builtin) {
            s->model_kind = ATN_SESSION_MODEL_BUILTIN;
            s->model = g_steal_pointer(&builtin);
        } else if (path) {
            s->model_kind = ATN_SESSION_MODEL_PATH;
            s->model = g_canonicalize_filename(path, base_dir);
        } else {
            s->model_kind = ATN_SESSION_MODEL_HUB;
            s->model = g_steal_pointer(&hub);
        }
    }
    g_free(builtin);
    g_free(path);
    g_free(hub);
    return ok;
}

static gboolean read_whatif(reader *r, const cJSON *obj, AtnSessionState *s) {
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(obj, "whatif");
    if (!w)
        return TRUE;
    if (!cJSON_IsObject(w))
        return fail(r, "whatif", _("must be an object"));
    s->has_whatif = TRUE;
    char *mode = NULL;
    static const char *const modes[] = {"zero", "uniform", NULL};
    gboolean ok = get_ints(r, w, "heads_off", "whatif.", TRUE, &s->heads_off) &&
                  get_string(r, w, "head_mode", "whatif.", modes, &mode) &&
                  get_bool(r, w, "causal", "whatif.", &s->causal) &&
                  get_int(r, w, "window", "whatif.", -1, 1 << 20, &s->window) &&
                  get_ints(r, w, "global_tokens", "whatif.", FALSE, &s->global_tokens) &&
                  get_int(r, w, "strided", "whatif.", 0, 1 << 20, &s->strided) &&
                  get_ints(r, w, "hide_tokens", "whatif.", FALSE, &s->hide_tokens) &&
                  get_ints(r, w, "mask_layers", "whatif.", FALSE, &s->mask_layers) &&
                  get_bool(r, w, "alibi", "whatif.", &s->alibi) &&
                  get_bool(r, w, "no_positions", "whatif.", &s->no_positions) &&
                  get_bool(r, w, "shuffle", "whatif.", &s->shuffle);
    s->uniform = g_strcmp0(mode, "uniform") == 0;
    g_free(mode);
    if (!ok)
        return FALSE;
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(w, "shuffle_seed");
    if (seed) {
        if (!cJSON_IsNumber(seed) || seed->valuedouble < 0 || seed->valuedouble != floor(seed->valuedouble) ||
            seed->valuedouble > 9007199254740992.0)
            return fail(r, "whatif.shuffle_seed", _("must be a whole number from 0"));
        s->shuffle_seed = (guint64)seed->valuedouble;
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(w, "temperature");
    if (t) {
        if (!cJSON_IsNumber(t) || !(t->valuedouble > 0) || !isfinite(t->valuedouble))
            return fail(r, "whatif.temperature", _("must be a number above 0"));
        s->temperature = t->valuedouble;
    }
    if (s->global_tokens && s->window < 0)
        return fail(r, "whatif.global_tokens", _("needs a “window”"));
    return TRUE;
}

gboolean atn_session_state_from_json(AtnSessionState *s, const cJSON *obj, gboolean require_model,
                                     const char *where, const char *base_dir, GError **error) {
    atn_session_state_clear(s);
    reader r = {where, error};
    if (!cJSON_IsObject(obj)) {
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_KEY, _("%s: must be a JSON object"), where);
        return FALSE;
    }
    gboolean ok = read_model(&r, obj, require_model, base_dir, s) &&
                  get_string(&r, obj, "text", "", NULL, &s->text) &&
                  get_string(&r, obj, "text_pair", "", NULL, &s->text_pair) &&
                  get_string(&r, obj, "view", "", view_names, &s->view) &&
                  get_int(&r, obj, "layer", "", 0, 4095, &s->layer) && get_int(&r, obj, "head", "", 0, 4095, &s->head) &&
                  get_int(&r, obj, "query", "", 0, 1 << 20, &s->query) &&
                  get_string(&r, obj, "colormap", "", atn_colormap_names(), &s->colormap) &&
                  get_string(&r, obj, "color_scale", "", scale_names, &s->color_scale) &&
                  get_string(&r, obj, "precision", "", precision_names, &s->precision) && read_whatif(&r, obj, s);
    if (!ok)
        atn_session_state_clear(s);
    return ok;
}

gboolean atn_session_file_parse(const char *text, gsize len, const char *path, AtnSessionState *s, GError **error) {
    atn_session_state_clear(s);
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= text && at <= text + len ? (long)(at - text) : -1;
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_JSON,
                    _("%s: not a session file: not JSON (near byte %ld)"), path, off);
        return FALSE;
    }
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "format");
    gboolean ok = FALSE;
    if (!cJSON_IsObject(root))
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_KEY, _("%s: must be a JSON object"), path);
    else if (!cJSON_IsString(f) || !g_str_has_prefix(f->valuestring, "attnscope-session/"))
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_VERSION,
                    _("%s: key “format”: not a session file (it must say “%s”)"), path, ATN_SESSION_FORMAT);
    else if (strcmp(f->valuestring, ATN_SESSION_FORMAT) != 0)
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_VERSION,
                    _("%s: key “format”: version “%s” is not one this attnscope reads (it reads “%s”)"), path,
                    f->valuestring, ATN_SESSION_FORMAT);
    else {
        g_autofree char *dir = g_path_get_dirname(path);
        g_autofree char *abs = g_canonicalize_filename(dir, NULL);
        ok = atn_session_state_from_json(s, root, TRUE, path, abs, error);
    }
    cJSON_Delete(root);
    return ok;
}

gboolean atn_session_file_load(const char *path, AtnSessionState *s, GError **error) {
    atn_session_state_clear(s);
    g_autofree char *text = NULL;
    gsize len = 0;
    GStatBuf st;
    if (g_stat(path, &st) == 0 && st.st_size > MAX_FILE) {
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_READ,
                    _("%s: not a session file: %lld bytes, a session is at most 1 MiB"), path,
                    (long long)st.st_size);
        return FALSE;
    }
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, &len, &e)) {
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_READ, "%s", e->message);
        g_error_free(e);
        return FALSE;
    }
    return atn_session_file_parse(text, len, path, s, error);
}

/* ---- writing ---------------------------------------------------------------------- */

static cJSON *int_list(GArray *a, gboolean pairs) {
    cJSON *list = cJSON_CreateArray();
    for (guint i = 0; a && i < a->len; i += pairs ? 2 : 1) {
        if (pairs) {
            cJSON *p = cJSON_CreateArray();
            cJSON_AddItemToArray(p, cJSON_CreateNumber(g_array_index(a, int, i)));
            cJSON_AddItemToArray(p, cJSON_CreateNumber(g_array_index(a, int, i + 1)));
            cJSON_AddItemToArray(list, p);
        } else
            cJSON_AddItemToArray(list, cJSON_CreateNumber(g_array_index(a, int, i)));
    }
    return list;
}

void atn_session_state_to_json(const AtnSessionState *s, cJSON *obj) {
    if (s->model_kind != ATN_SESSION_MODEL_NONE && s->model) {
        cJSON *m = cJSON_AddObjectToObject(obj, "model");
        static const char *const keys[] = {NULL, "builtin", "path", "hub"};
        cJSON_AddStringToObject(m, keys[s->model_kind], s->model);
        if (s->model_kind == ATN_SESSION_MODEL_HUB && s->revision)
            cJSON_AddStringToObject(m, "revision", s->revision);
    }
    if (s->text)
        cJSON_AddStringToObject(obj, "text", s->text);
    if (s->text_pair && *s->text_pair)
        cJSON_AddStringToObject(obj, "text_pair", s->text_pair);
    if (s->view)
        cJSON_AddStringToObject(obj, "view", s->view);
    if (s->layer >= 0)
        cJSON_AddNumberToObject(obj, "layer", s->layer);
    if (s->head >= 0)
        cJSON_AddNumberToObject(obj, "head", s->head);
    if (s->query >= 0)
        cJSON_AddNumberToObject(obj, "query", s->query);
    if (s->has_whatif) {
        cJSON *w = cJSON_AddObjectToObject(obj, "whatif");
        if (s->heads_off && s->heads_off->len) {
            cJSON_AddItemToObject(w, "heads_off", int_list(s->heads_off, TRUE));
            cJSON_AddStringToObject(w, "head_mode", s->uniform ? "uniform" : "zero");
        }
        if (s->causal)
            cJSON_AddTrueToObject(w, "causal");
        if (s->window >= 0)
            cJSON_AddNumberToObject(w, "window", s->window);
        if (s->global_tokens && s->global_tokens->len)
            cJSON_AddItemToObject(w, "global_tokens", int_list(s->global_tokens, FALSE));
        if (s->strided > 0)
            cJSON_AddNumberToObject(w, "strided", s->strided);
        if (s->hide_tokens && s->hide_tokens->len)
            cJSON_AddItemToObject(w, "hide_tokens", int_list(s->hide_tokens, FALSE));
        if (s->mask_layers && s->mask_layers->len)
            cJSON_AddItemToObject(w, "mask_layers", int_list(s->mask_layers, FALSE));
        if (s->alibi)
            cJSON_AddTrueToObject(w, "alibi");
        if (s->no_positions)
            cJSON_AddTrueToObject(w, "no_positions");
        if (s->shuffle) {
            cJSON_AddTrueToObject(w, "shuffle");
            cJSON_AddNumberToObject(w, "shuffle_seed", (double)s->shuffle_seed);
        }
        if (s->temperature != 1.0)
            cJSON_AddNumberToObject(w, "temperature", s->temperature);
    }
    if (s->colormap)
        cJSON_AddStringToObject(obj, "colormap", s->colormap);
    if (s->color_scale)
        cJSON_AddStringToObject(obj, "color_scale", s->color_scale);
    if (s->precision)
        cJSON_AddStringToObject(obj, "precision", s->precision);
}

char *atn_session_file_to_text(const AtnSessionState *s) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", ATN_SESSION_FORMAT);
    atn_session_state_to_json(s, root);
    char *printed = cJSON_Print(root);
    cJSON_Delete(root);
    char *text = g_strconcat(printed, "\n", NULL);
    cJSON_free(printed);
    return text;
}

gboolean atn_session_file_save(const char *path, const AtnSessionState *s, GError **error) {
    g_autofree char *text = atn_session_file_to_text(s);
    return g_file_set_contents(path, text, -1, error);
}

gboolean atn_session_file_sniff(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return FALSE;
    char buf[4097];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return memchr(buf, 0, n) == NULL && strstr(buf, "\"attnscope-session/") != NULL;
}

gboolean atn_session_state_check_model(const AtnSessionState *s, const char *where, GError **error) {
    switch (s->model_kind) {
    case ATN_SESSION_MODEL_NONE:
    case ATN_SESSION_MODEL_BUILTIN:   /* checked against the list when read */
        return TRUE;
    case ATN_SESSION_MODEL_PATH:
        if (g_file_test(s->model, G_FILE_TEST_EXISTS))
            return TRUE;
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_KEY,
                    _("%s: key “model.path”: %s: no such file or folder"), where, s->model);
        return FALSE;
    case ATN_SESSION_MODEL_HUB: {
        g_autofree char *spec = atn_session_state_model_source(s);
        char snap[4096];
        atn_error err = {0};
        if (atn_hf_cache_resolve(NULL, spec, snap, sizeof snap, &err) == ATN_OK)
            return TRUE;
        g_set_error(error, ATN_SESSION_FILE_ERROR, ATN_SESSION_FILE_ERROR_KEY, _("%s: key “model.hub”: %s"), where,
                    err.message);
        return FALSE;
    }
    }
    return TRUE;
}

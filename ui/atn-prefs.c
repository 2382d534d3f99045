/* AtnPrefs: persistent preferences over GSettings, or a key file when no schema is found. */
#include "atn-prefs.h"
#include "atn-prefs-test.h"

#include "config.h"

#include <string.h>

enum { RECENT_MAX = 8 };

struct _AtnPrefs {
    GObject parent_instance;
    GSettings *settings;   /* NULL: key-file backend */
    GKeyFile *keyfile;
    char *keyfile_path;    /* NULL: not saved (tests) */
    gboolean loading;

    char *colormap;
    char *last_model;
    char *device;
    double font_scale;
    char *example_text;
    char **recent_models;
    char *color_scale;
    char *precision;
};

G_DEFINE_FINAL_TYPE(AtnPrefs, atn_prefs, G_TYPE_OBJECT)

enum {
    PROP_0,
    PROP_COLORMAP,
    PROP_LAST_MODEL,
    PROP_DEVICE,
    PROP_FONT_SCALE,
    PROP_EXAMPLE_TEXT,
    PROP_RECENT_MODELS,
    PROP_COLOR_SCALE,
    PROP_PRECISION,
    N_PROPS
};
static GParamSpec *props[N_PROPS];

/* property name -> GSettings key (the same names) */
static const char *const keys[N_PROPS] = {
    NULL, "colormap", "last-model", "device", "font-scale", "example-text", "recent-models", "color-scale",
    "precision",
};

/* The schema compiled into <builddir>/data (data/meson.build), for uninstalled runs. */
static GSettingsSchema *build_tree_schema(GSettingsSchemaSource *parent) {
    g_autofree char *dir = g_build_filename(ATN_BUILD_DIR, "data", NULL);
    g_autofree char *compiled = g_build_filename(dir, "gschemas.compiled", NULL);
    if (!g_file_test(compiled, G_FILE_TEST_EXISTS))
        return NULL;
    GSettingsSchemaSource *local = g_settings_schema_source_new_from_directory(dir, parent, FALSE, NULL);
    if (!local)
        return NULL;
    GSettingsSchema *schema = g_settings_schema_source_lookup(local, ATN_APP_ID, FALSE);
    g_settings_schema_source_unref(local);
    return schema;
}

/* GSettings aborts on a key its schema lacks: an older installed schema must not be used. */
static gboolean has_every_key(GSettingsSchema *schema);

static GSettingsSchema *find_schema(void) {
    GSettingsSchemaSource *src = g_settings_schema_source_get_default();
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    gboolean uninstalled = exe && g_str_has_prefix(exe, ATN_BUILD_DIR "/");
    GSettingsSchema *schema = uninstalled ? build_tree_schema(src) : NULL;
    if (!schema && src)
        schema = g_settings_schema_source_lookup(src, ATN_APP_ID, TRUE);
    if (!schema && !uninstalled)
        schema = build_tree_schema(src);
    if (schema && !has_every_key(schema))
        g_clear_pointer(&schema, g_settings_schema_unref);
    return schema;
}

static void keyfile_save(AtnPrefs *self) {
    if (self->loading || !self->keyfile || !self->keyfile_path)
        return;
    g_key_file_set_string(self->keyfile, "prefs", "colormap", self->colormap);
    g_key_file_set_string(self->keyfile, "prefs", "last-model", self->last_model);
    g_key_file_set_string(self->keyfile, "prefs", "device", self->device);
    g_key_file_set_double(self->keyfile, "prefs", "font-scale", self->font_scale);
    g_key_file_set_string(self->keyfile, "prefs", "example-text", self->example_text);
    g_key_file_set_string_list(self->keyfile, "prefs", "recent-models", (const char *const *)self->recent_models,
                               g_strv_length(self->recent_models));
    g_key_file_set_string(self->keyfile, "prefs", "color-scale", self->color_scale);
    g_key_file_set_string(self->keyfile, "prefs", "precision", self->precision);
    g_autofree char *dir = g_path_get_dirname(self->keyfile_path);
    g_mkdir_with_parents(dir, 0700);
    g_autoptr(GError) error = NULL;
    if (!g_key_file_save_to_file(self->keyfile, self->keyfile_path, &error))
        g_message("attnscope: could not save preferences: %s", error->message);
}

static void keyfile_load(AtnPrefs *self) {
    self->keyfile = g_key_file_new();
    /* GSETTINGS_BACKEND=memory (tests) means: keep nothing on disk */
    if (g_strcmp0(g_getenv("GSETTINGS_BACKEND"), "memory") != 0)
        self->keyfile_path = g_build_filename(g_get_user_config_dir(), "attnscope", "preferences.ini", NULL);
    if (!self->keyfile_path || !g_key_file_load_from_file(self->keyfile, self->keyfile_path, G_KEY_FILE_NONE, NULL))
        return;
    self->loading = TRUE;
    for (int p = PROP_COLORMAP; p < N_PROPS; p++) {
        if (!g_key_file_has_key(self->keyfile, "prefs", keys[p], NULL))
            continue;
        if (p == PROP_FONT_SCALE) {
            double v = g_key_file_get_double(self->keyfile, "prefs", keys[p], NULL);
            g_object_set(self, keys[p], CLAMP(v, 0.5, 3.0), NULL);
        } else if (p == PROP_RECENT_MODELS) {
            g_auto(GStrv) v = g_key_file_get_string_list(self->keyfile, "prefs", keys[p], NULL, NULL);
            g_object_set(self, keys[p], v, NULL);
        } else {
            g_autofree char *v = g_key_file_get_string(self->keyfile, "prefs", keys[p], NULL);
            if (v)
                g_object_set(self, keys[p], v, NULL);
        }
    }
    self->loading = FALSE;
}

static gboolean set_string(char **field, const char *value) {
    if (!value)
        value = "";
    if (g_strcmp0(*field, value) == 0)
        return FALSE;
    g_free(*field);
    *field = g_strdup(value);
    return TRUE;
}

static gboolean has_every_key(GSettingsSchema *schema) {
    for (int p = PROP_COLORMAP; p < N_PROPS; p++)
        if (!g_settings_schema_has_key(schema, keys[p]))
            return FALSE;
    return TRUE;
}

static void atn_prefs_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
    AtnPrefs *self = ATN_PREFS(object);
    gboolean changed = FALSE;
    switch (prop_id) {
    case PROP_COLORMAP: changed = set_string(&self->colormap, g_value_get_string(value)); break;
    case PROP_LAST_MODEL: changed = set_string(&self->last_model, g_value_get_string(value)); break;
    case PROP_DEVICE: changed = set_string(&self->device, g_value_get_string(value)); break;
    case PROP_EXAMPLE_TEXT: changed = set_string(&self->example_text, g_value_get_string(value)); break;
    case PROP_COLOR_SCALE: {
        const char *v = g_value_get_string(value);
        changed = set_string(&self->color_scale, g_strcmp0(v, "fixed") == 0 ? "fixed" : "head");
        break;
    }
    case PROP_PRECISION: {
        const char *v = g_value_get_string(value);
        changed = set_string(&self->precision, !g_strcmp0(v, "bf16") || !g_strcmp0(v, "fp16") ? v : "fp32");
        break;
    }
    case PROP_FONT_SCALE: {
        double v = g_value_get_double(value);
        changed = v != self->font_scale;
        self->font_scale = v;
        break;
    }
    case PROP_RECENT_MODELS: {
        char **v = g_value_get_boxed(value);
        if (!v || !self->recent_models || !g_strv_equal((const char *const *)v, (const char *const *)self->recent_models)) {
            g_strfreev(self->recent_models);
            self->recent_models = v ? g_strdupv(v) : g_new0(char *, 1);
            changed = TRUE;
        }
        break;
    }
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec); return;
    }
    if (changed) {
        g_object_notify_by_pspec(object, props[prop_id]);
        keyfile_save(self);
    }
}

static void atn_prefs_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
    AtnPrefs *self = ATN_PREFS(object);
    switch (prop_id) {
    case PROP_COLORMAP: g_value_set_string(value, self->colormap); break;
    case PROP_LAST_MODEL: g_value_set_string(value, self->last_model); break;
    case PROP_DEVICE: g_value_set_string(value, self->device); break;
    case PROP_EXAMPLE_TEXT: g_value_set_string(value, self->example_text); break;
    case PROP_FONT_SCALE: g_value_set_double(value, self->font_scale); break;
    case PROP_RECENT_MODELS: g_value_set_boxed(value, self->recent_models); break;
    case PROP_COLOR_SCALE: g_value_set_string(value, self->color_scale); break;
    case PROP_PRECISION: g_value_set_string(value, self->precision); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    }
}

static void atn_prefs_finalize(GObject *object) {
    AtnPrefs *self = ATN_PREFS(object);
    g_clear_object(&self->settings);
    g_clear_pointer(&self->keyfile, g_key_file_unref);
    g_free(self->keyfile_path);
    g_free(self->colormap);
    g_free(self->last_model);
    g_free(self->device);
    g_free(self->example_text);
    g_strfreev(self->recent_models);
    g_free(self->color_scale);
    g_free(self->precision);
    G_OBJECT_CLASS(atn_prefs_parent_class)->finalize(object);
}

static void atn_prefs_constructed(GObject *object) {
    AtnPrefs *self = ATN_PREFS(object);
    G_OBJECT_CLASS(atn_prefs_parent_class)->constructed(object);
    g_autoptr(GSettingsSchema) schema = find_schema();
    if (schema) {
        self->settings = g_settings_new_full(schema, NULL, NULL);
        for (int p = PROP_COLORMAP; p < N_PROPS; p++)
            g_settings_bind(self->settings, keys[p], self, keys[p], G_SETTINGS_BIND_DEFAULT);
    } else {
        keyfile_load(self);
    }
}

static void atn_prefs_class_init(AtnPrefsClass *klass) {
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    object_class->set_property = atn_prefs_set_property;
    object_class->get_property = atn_prefs_get_property;
    object_class->finalize = atn_prefs_finalize;
    object_class->constructed = atn_prefs_constructed;
    GParamFlags f = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
    props[PROP_COLORMAP] = g_param_spec_string("colormap", NULL, NULL, "viridis", f);
    props[PROP_LAST_MODEL] = g_param_spec_string("last-model", NULL, NULL, "", f);
    props[PROP_DEVICE] = g_param_spec_string("device", NULL, NULL, "cpu", f);
    props[PROP_FONT_SCALE] = g_param_spec_double("font-scale", NULL, NULL, 0.5, 3.0, 1.0, f);
    props[PROP_EXAMPLE_TEXT] = g_param_spec_string("example-text", NULL, NULL, "", f);
    props[PROP_RECENT_MODELS] = g_param_spec_boxed("recent-models", NULL, NULL, G_TYPE_STRV, f);
    props[PROP_COLOR_SCALE] = g_param_spec_string("color-scale", NULL, NULL, "head", f);
    props[PROP_PRECISION] = g_param_spec_string("precision", NULL, NULL, "fp32", f);
    g_object_class_install_properties(object_class, N_PROPS, props);
}

static void atn_prefs_init(AtnPrefs *self) {
    self->colormap = g_strdup("viridis");
    self->last_model = g_strdup("");
    self->device = g_strdup("cpu");
    self->font_scale = 1.0;
    self->example_text = g_strdup("");
    self->recent_models = g_new0(char *, 1);
    self->color_scale = g_strdup("head");
    self->precision = g_strdup("fp32");
}

AtnPrefs *atn_prefs_get_default(void) {
    static AtnPrefs *prefs;
    if (!prefs)
        prefs = g_object_new(ATN_TYPE_PREFS, NULL);
    return prefs;
}

const char *atn_prefs_get_colormap(AtnPrefs *self) {
    g_return_val_if_fail(ATN_IS_PREFS(self), NULL);
    return self->colormap;
}
void atn_prefs_set_colormap(AtnPrefs *self, const char *v) {
    g_return_if_fail(ATN_IS_PREFS(self));
    g_object_set(self, "colormap", v, NULL);
}
const char *atn_prefs_get_last_model(AtnPrefs *self) {
    g_return_val_if_fail(ATN_IS_PREFS(self), NULL);
    return self->last_model;
}
void atn_prefs_set_last_model(AtnPrefs *self, const char *v) {
    g_return_if_fail(ATN_IS_PREFS(self));
    g_object_set(self, "last-model", v, NULL);
}
const char *atn_prefs_get_device(AtnPrefs *self) {
    g_return_val_if_fail(ATN_IS_PREFS(self), NULL);
    return self->device;
}
void atn_prefs_set_device(AtnPrefs *self, const char *v) {
    g_return_if_fail(ATN_IS_PREFS(self));
    g_object_set(self, "device", v, NULL);
}
double atn_prefs_get_font_scale(AtnPrefs *self) {
    g_return_val_if_fail(ATN_IS_PREFS(self), 0);
    return self->font_scale;
}
void atn_prefs_set_font_scale(AtnPrefs *self, double v) {
    g_return_if_fail(ATN_IS_PREFS(self));
    g_object_set(self, "font-scale", CLAMP(v, 0.5, 3.0), NULL);
}
const char *atn_prefs_get_example_text(AtnPrefs *self) {
    g_return_val_if_fail(ATN_IS_PREFS(self), NULL);
    return self->example_text;
}
void atn_prefs_set_example_text(AtnPrefs *self, const char *v) {
    g_return_if_fail(ATN_IS_PREFS(self));
    g_object_set(self, "example-text", v, NULL);
}
const char *atn_prefs_get_color_scale(AtnPrefs *self) {
    g_return_val_if_fail(ATN_IS_PREFS(self), NULL);
    return self->color_scale;
}
void atn_prefs_set_color_scale(AtnPrefs *self, const char *v) {
    g_return_if_fail(ATN_IS_PREFS(self));
    g_object_set(self, "color-scale", v, NULL);
}
const char *const *atn_prefs_get_recent_models(AtnPrefs *self) { return (const char *const *)self->recent_models; }

void atn_prefs_add_recent_model(AtnPrefs *self, const char *path) {
    g_return_if_fail(ATN_IS_PREFS(self));
    g_autoptr(GStrvBuilder) b = g_strv_builder_new();
    g_strv_builder_add(b, path);
    int n = 1;
    for (char **p = self->recent_models; *p && n < RECENT_MAX; p++)
        if (strcmp(*p, path) != 0) {
            g_strv_builder_add(b, *p);
            n++;
        }
    g_auto(GStrv) v = g_strv_builder_end(b);
    g_object_set(self, "recent-models", v, NULL);
}

void atn_prefs_keep_in_memory(AtnPrefs *self) {
    g_return_if_fail(ATN_IS_PREFS(self));
    if (self->settings)
        g_settings_delay(self->settings);   /* changes wait for an apply that never comes */
    g_clear_pointer(&self->keyfile_path, g_free);
}

const char *atn_prefs_get_backend_name(AtnPrefs *self) {
    g_return_val_if_fail(ATN_IS_PREFS(self), NULL);
    return self->settings ? "gsettings" : "keyfile";
}

const char *atn_prefs_get_precision(AtnPrefs *self) {
    g_return_val_if_fail(ATN_IS_PREFS(self), NULL);
    return self->precision;
}
void atn_prefs_set_precision(AtnPrefs *self, const char *v) {
    g_return_if_fail(ATN_IS_PREFS(self));
    g_object_set(self, "precision", v, NULL);
}

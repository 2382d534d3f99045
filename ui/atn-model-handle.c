/* AtnModelHandle: a reference-counted atn_model. */
#include "atn-model-handle.h"
#include "atn-model-handle-test.h"
#include "atn-error-text.h"
#include "attention-file.h"

#include <gio/gio.h>

struct _AtnModelHandle {
    GObject parent_instance;
    atn_model *model;          /* or NULL: */
    atn_attn_file *attn_file;  /* an attention file instead of a model */
    char *name;                /* an attention file's name (model_id, else the base name) */
    char *source;
    guint generation;
    guint saved_generation;   /* the generation last written to a file (0: as opened) */
    gboolean fallback;
    guint original_generation;   /* the generation whose numbers are the ones opened */
    GArray *original;            /* toy models: every editable number as opened (float) */
    GMutex spare_lock;
    atn_run *spare;           /* a finished result's run memory, for the next run (warm pages) */
    guint n_new_runs;         /* runs take_run made new (under spare_lock) */
};

G_DEFINE_FINAL_TYPE(AtnModelHandle, atn_model_handle, G_TYPE_OBJECT)

static void atn_model_handle_finalize(GObject *object) {
    AtnModelHandle *self = ATN_MODEL_HANDLE(object);
    atn_run_free(self->spare);
    g_mutex_clear(&self->spare_lock);
    atn_model_free(self->model);
    atn_attn_file_free(self->attn_file);
    g_free(self->name);
    g_free(self->source);
    if (self->original)
        g_array_unref(self->original);
    G_OBJECT_CLASS(atn_model_handle_parent_class)->finalize(object);
}

static void atn_model_handle_class_init(AtnModelHandleClass *klass) {
    G_OBJECT_CLASS(klass)->finalize = atn_model_handle_finalize;
}

static void atn_model_handle_init(AtnModelHandle *self) { g_mutex_init(&self->spare_lock); }

/* Every editable number of a toy model, in one fixed order (X, then per layer W_Q, W_K,
 * W_V, W_O), read into out (when not NULL) or written from in (when not NULL). */
static gboolean toy_numbers(atn_model *m, GArray *out, const GArray *in) {
    const atn_config *cfg = atn_model_config(m);
    int32_t n = atn_model_toy_n_tokens(m), d = cfg->d_model;
    guint k = 0;
    for (int w = ATN_TOY_X; w <= ATN_TOY_WO; w++) {
        int layers = w == ATN_TOY_X ? 1 : cfg->n_layers, rows = w == ATN_TOY_X ? n : d;
        for (int l = 0; l < layers; l++)
            for (int r = 0; r < rows; r++)
                for (int c = 0; c < d; c++, k++) {
                    float v = 0;
                    if (atn_model_toy_get(m, (atn_toy_matrix)w, l, r, c, &v, NULL) != ATN_OK)
                        return FALSE;
                    if (out)
                        g_array_append_val(out, v);
                    if (in && k < in->len && g_array_index(in, float, k) != v &&
                        atn_model_toy_set(m, (atn_toy_matrix)w, l, r, c, g_array_index(in, float, k), NULL) != ATN_OK)
                        return FALSE;
                }
    }
    return TRUE;
}

AtnModelHandle *atn_model_handle_new(atn_model *model, const char *source) {
    AtnModelHandle *self = g_object_new(ATN_TYPE_MODEL_HANDLE, NULL);
    self->model = model;
    self->source = g_strdup(source ? source : atn_model_name(model));
    if (atn_model_kind_of(model) == ATN_MODEL_TOY) {
        self->original = g_array_new(FALSE, FALSE, sizeof(float));
        if (!toy_numbers(model, self->original, NULL))
            g_clear_pointer(&self->original, g_array_unref);
    }
    return self;
}

AtnModelHandle *atn_model_handle_new_attention(atn_attn_file *file, const char *path) {
    g_return_val_if_fail(file != NULL && path != NULL, NULL);
    AtnModelHandle *self = g_object_new(ATN_TYPE_MODEL_HANDLE, NULL);
    self->attn_file = file;
    self->source = g_strdup(path);
    atn_attn_file_info info = atn_attn_file_get_info(file);
    self->name = info.model_id && *info.model_id ? g_strdup(info.model_id) : g_path_get_basename(path);
    return self;
}

gboolean atn_model_handle_has_weights(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), FALSE);
    return self->model != NULL;
}

atn_attn_file *atn_model_handle_get_attention_file(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), NULL);
    return self->attn_file;
}

gboolean atn_model_handle_get_edited(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), FALSE);
    return self->original && self->generation != self->original_generation;
}

gboolean atn_model_handle_revert_toy(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), FALSE);
    if (!self->original)
        return FALSE;
    if (self->generation == self->original_generation)
        return TRUE;
    if (!toy_numbers(self->model, NULL, self->original))
        return FALSE;
    gboolean was_saved = self->saved_generation == self->original_generation;
    self->generation++;
    self->original_generation = self->generation;
    if (was_saved)   /* as opened (or as last saved, when that was the original): nothing unsaved */
        self->saved_generation = self->generation;
    return TRUE;
}

atn_model *atn_model_handle_get_model(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), NULL);
    return self->model;
}
const char *atn_model_handle_get_source(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), NULL);
    return self->source;
}
const char *atn_model_handle_get_name(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), NULL);
    return self->model ? atn_model_name(self->model) : self->name;
}
gboolean atn_model_handle_is_toy(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), FALSE);
    return self->model && atn_model_kind_of(self->model) == ATN_MODEL_TOY;
}
guint atn_model_handle_get_generation(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), 0);
    return self->generation;
}

gboolean atn_model_handle_toy_set(AtnModelHandle *self, atn_toy_matrix which, int layer, int row, int col,
                                  float value, GError **error) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), FALSE);
    atn_error err = {0};
    if (atn_model_toy_set(self->model, which, layer, row, col, value, &err) != ATN_OK) {
        g_autofree char *why = atn_error_text(&err);
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, why);
        return FALSE;
    }
    self->generation++;
    return TRUE;
}

float atn_model_handle_toy_get(AtnModelHandle *self, atn_toy_matrix which, int layer, int row, int col) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), 0);
    float v = 0;
    if (atn_model_toy_get(self->model, which, layer, row, col, &v, NULL) != ATN_OK)
        return 0;
    return v;
}

gboolean atn_model_handle_get_modified(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), FALSE);
    return self->generation != self->saved_generation;
}

gboolean atn_model_handle_save_toy(AtnModelHandle *self, const char *path, GError **error) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), FALSE);
    atn_error err = {0};
    if (!atn_model_handle_is_toy(self)) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "only toy models can be saved");
        return FALSE;
    }
    if (atn_model_toy_save_json(self->model, path, &err) != ATN_OK) {
        g_autofree char *why = atn_error_text(&err);
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, why);
        return FALSE;
    }
    self->saved_generation = self->generation;
    return TRUE;
}

atn_run *atn_model_handle_take_run(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), NULL);
    g_mutex_lock(&self->spare_lock);
    atn_run *run = self->spare;
    self->spare = NULL;
    if (!run)
        self->n_new_runs++;
    g_mutex_unlock(&self->spare_lock);
    return run || !self->model ? run : atn_run_new(self->model);
}

gboolean atn_model_handle_has_spare(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), FALSE);
    g_mutex_lock(&self->spare_lock);
    gboolean has = self->spare != NULL;
    g_mutex_unlock(&self->spare_lock);
    return has;
}

guint atn_model_handle_get_n_new_runs(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), 0);
    g_mutex_lock(&self->spare_lock);
    guint n = self->n_new_runs;
    g_mutex_unlock(&self->spare_lock);
    return n;
}

void atn_model_handle_give_run(AtnModelHandle *self, atn_run *run) {
    g_return_if_fail(ATN_IS_MODEL_HANDLE(self));
    g_mutex_lock(&self->spare_lock);
    atn_run *old = self->spare;
    self->spare = run;
    g_mutex_unlock(&self->spare_lock);
    atn_run_free(old);   /* one spare is enough: the newest (the most likely size) */
}

gboolean atn_model_handle_get_fallback(AtnModelHandle *self) {
    g_return_val_if_fail(ATN_IS_MODEL_HANDLE(self), FALSE);
    return self->fallback;
}
void atn_model_handle_set_fallback(AtnModelHandle *self, gboolean fallback) {
    g_return_if_fail(ATN_IS_MODEL_HANDLE(self));
    self->fallback = fallback;
}

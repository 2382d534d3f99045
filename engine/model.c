/* Models: allocation and ownership, opening by name or path, built-in models, the
 * configuration check, and turning text or ids into an encoding. */
#include "model-private.h"
#include "tokenizer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

/* ---- ownership -------------------------------------------------------------- */

atn_model *atn_model_alloc(atn_model_kind kind, const char *name, const char *path) {
    atn_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->kind = kind;
    m->name = strdup(name ? name : "");
    m->path = strdup(path ? path : "");
    if (!m->name || !m->path) {
        atn_model_free(m);
        return NULL;
    }
    return m;
}

bool atn_model_own(atn_model *model, void *ptr, size_t len, bool mapped) {
    atn_model_block *b = realloc(model->blocks, (size_t)(model->n_blocks + 1) * sizeof *b);
    if (!b) {
        if (mapped)
            munmap(ptr, len);
        else
            free(ptr);
        return false;
    }
    model->blocks = b;
    b[model->n_blocks++] = (atn_model_block){ptr, len, mapped};
    return true;
}

float *atn_model_alloc_floats(atn_model *model, size_t count) {
    if (count == 0)
        count = 1;
    if (count > SIZE_MAX / sizeof(float))
        return NULL;
    float *p = calloc(count, sizeof(float));
    if (!p || !atn_model_own(model, p, count * sizeof(float), false))
        return NULL;
    return p;
}

void atn_model_free(atn_model *model) {
    if (!model)
        return;
    if (model->backend_state && model->backend_state_free)
        model->backend_state_free(model->backend_state);
    for (int32_t i = 0; i < model->n_blocks; i++) {
        if (model->blocks[i].mapped)
            munmap(model->blocks[i].ptr, model->blocks[i].len);
        else
            free(model->blocks[i].ptr);
    }
    free(model->blocks);
    atn_tokenizer_free(model->tokenizer);
    for (int32_t i = 0; i < model->toy_n; i++)
        free(model->toy_tokens ? model->toy_tokens[i] : NULL);
    free(model->toy_tokens);
    free(model->w.layers);
    free(model->name);
    free(model->path);
    free(model);
}

/* ---- accessors -------------------------------------------------------------- */

const atn_config *atn_model_config(const atn_model *model) { return &model->cfg; }
atn_model_kind atn_model_kind_of(const atn_model *model) { return model->kind; }
const char *atn_model_name(const atn_model *model) { return model->name; }
const char *atn_model_path(const atn_model *model) { return model->path; }
bool atn_model_has_mlm_head(const atn_model *model) {
    return model->w.mlm_dense_w && model->w.mlm_decoder_b && model->w.word_emb;
}
int32_t atn_model_toy_n_tokens(const atn_model *model) { return model->toy_n; }
const char *atn_model_toy_token(const atn_model *model, int32_t i) {
    return (i >= 0 && i < model->toy_n) ? model->toy_tokens[i] : NULL;
}

const char *atn_activation_name(atn_activation act) {
    switch (act) {
    case ATN_ACT_GELU: return "gelu";
    case ATN_ACT_GELU_TANH: return "gelu_tanh";
    case ATN_ACT_RELU: return "relu";
    }
    return "?";
}

atn_status atn_config_validate(const atn_config *c, atn_error *err) {
    if (c->n_layers <= 0 || c->n_layers > 1000)
        return atn_error_set(err, ATN_E_INVALID, "number of layers must be 1..1000, not %d", c->n_layers);
    if (c->d_model <= 0 || c->d_model > 65536)
        return atn_error_set(err, ATN_E_INVALID, "model width must be 1..65536, not %d", c->d_model);
    if (c->n_heads <= 0)
        return atn_error_set(err, ATN_E_INVALID, "number of heads must be positive, not %d", c->n_heads);
    if (c->d_model % c->n_heads != 0)
        return atn_error_set(err, ATN_E_INVALID,
                             "%d heads do not divide the model width %d (head width would be %.3g)",
                             c->n_heads, c->d_model, (double)c->d_model / c->n_heads);
    if (c->d_head != c->d_model / c->n_heads)
        return atn_error_set(err, ATN_E_INVALID, "head width %d is not d_model / heads = %d", c->d_head,
                             c->d_model / c->n_heads);
    if (c->use_ffn && (c->d_ffn <= 0 || c->d_ffn > 1 << 20))
        return atn_error_set(err, ATN_E_INVALID, "feed-forward width must be positive, not %d", c->d_ffn);
    if (c->use_layernorm && !(c->ln_eps > 0))
        return atn_error_set(err, ATN_E_INVALID, "LayerNorm epsilon must be positive");
    if (c->use_embeddings) {
        if (c->vocab_size <= 0)
            return atn_error_set(err, ATN_E_INVALID, "vocabulary size must be positive, not %d", c->vocab_size);
        if (c->max_positions <= 0)
            return atn_error_set(err, ATN_E_INVALID, "max positions must be positive, not %d", c->max_positions);
        if (c->type_vocab_size <= 0)
            return atn_error_set(err, ATN_E_INVALID, "type vocabulary size must be positive, not %d",
                                 c->type_vocab_size);
    }
    return ATN_OK;
}

/* ---- data folder and built-in models ---------------------------------------- */

static char data_dir_override[4096];

void atn_set_data_dir(const char *dir) {
    snprintf(data_dir_override, sizeof data_dir_override, "%s", dir ? dir : "");
}

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *atn_data_dir(void) {
    if (data_dir_override[0])
        return data_dir_override;
    const char *env = getenv("ATTNSCOPE_DATADIR");
    if (env && *env)
        return env;
    /* Running from the build tree (no install): the source tree's data/. */
    if (is_dir(ATN_SOURCE_DATADIR "/models"))
        return ATN_SOURCE_DATADIR;
    return ATN_INSTALL_DATADIR;
}

static const char *const builtin_names[] = {"demo", "worked-example", NULL};

const char *const *atn_builtin_model_names(void) { return builtin_names; }

atn_model *atn_model_open(const char *name_or_path, atn_progress_fn progress, void *user_data,
                          atn_error *err) {
    if (!name_or_path || !*name_or_path) {
        atn_error_set(err, ATN_E_INVALID, "no model given");
        return NULL;
    }
    char path[4096];
    struct stat st;
    if (stat(name_or_path, &st) == 0) {
        snprintf(path, sizeof path, "%s", name_or_path);
    } else {
        int e = errno;
        if (e != ENOENT && e != ENOTDIR) {   /* there, but not usable: a symlink loop ... */
            atn_error_set(err, ATN_E_IO, "%s: cannot open: %s", name_or_path, strerror(e));
            return NULL;
        }
        bool builtin = false;
        for (int i = 0; builtin_names[i]; i++)
            builtin |= strcmp(builtin_names[i], name_or_path) == 0;
        if (!builtin || strchr(name_or_path, '/')) {
            atn_error_set(err, ATN_E_IO, "%s: no such model (not a built-in model name and no such file or "
                          "folder: %s); built-in models: demo, worked-example", name_or_path, strerror(errno));
            return NULL;
        }
        snprintf(path, sizeof path, "%s/models/%s", atn_data_dir(), name_or_path);
        if (stat(path, &st) != 0) {
            snprintf(path, sizeof path, "%s/models/%s.json", atn_data_dir(), name_or_path);
            if (stat(path, &st) != 0) {
                atn_error_set(err, ATN_E_IO, "built-in model \"%s\" not found under %s/models "
                              "(set ATTNSCOPE_DATADIR to the data folder)", name_or_path, atn_data_dir());
                return NULL;
            }
        }
    }
    if (S_ISDIR(st.st_mode))
        return atn_model_open_hf(path, progress, user_data, err);
    if (!S_ISREG(st.st_mode)) {   /* reading a FIFO or a device would block or never end */
        atn_error_set(err, ATN_E_IO, "%s: not a model: neither a regular file (toy-model JSON) nor a "
                      "folder (Hugging Face model)", path);
        return NULL;
    }
    atn_model *m = atn_model_open_toy_json(path, err);
    return m;
}

/* ---- encodings -------------------------------------------------------------- */

static atn_encoding *encoding_alloc(int32_t n) {
    atn_encoding *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->n = n;
    size_t m = n > 0 ? (size_t)n : 1;
    e->tokens = calloc(m, sizeof *e->tokens);
    e->ids = calloc(m, sizeof *e->ids);
    e->type_ids = calloc(m, sizeof *e->type_ids);
    e->mask = calloc(m, sizeof *e->mask);
    if (!e->tokens || !e->ids || !e->type_ids || !e->mask) {
        atn_encoding_free(e);
        return NULL;
    }
    return e;
}

atn_status atn_model_encode(const atn_model *model, const char *text, const char *text_pair,
                            atn_encoding **out, atn_error *err) {
    *out = NULL;
    if (model->kind == ATN_MODEL_TOY)
        return atn_error_set(err, ATN_E_INVALID, "model \"%s\" is a toy model: its tokens are in the "
                             "file and it takes no text", model->name);
    if (!model->tokenizer)
        return atn_error_set(err, ATN_E_INVALID, "model \"%s\" has no tokenizer (vocab.txt)", model->name);
    if (!text)
        text = "";
    return atn_tokenizer_encode(model->tokenizer, text, text_pair, model->cfg.max_positions, out, err);
}

atn_status atn_model_encode_ids(const atn_model *model, const int32_t *ids, const int32_t *type_ids,
                                const int32_t *mask, int32_t n, atn_encoding **out, atn_error *err) {
    *out = NULL;
    const atn_config *c = &model->cfg;
    if (!c->use_embeddings)
        return atn_error_set(err, ATN_E_INVALID, "model \"%s\" takes given input vectors, not token ids",
                             model->name);
    if (n <= 0)
        return atn_error_set(err, ATN_E_INVALID, "no token ids given");
    if (n > c->max_positions)
        return atn_error_set(err, ATN_E_INVALID, "%d token ids given but model \"%s\" allows at most %d "
                             "positions", n, model->name, c->max_positions);
    for (int32_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= c->vocab_size)
            return atn_error_set(err, ATN_E_INVALID, "token id %d at position %d is outside the vocabulary "
                                 "(0..%d)", ids[i], i, c->vocab_size - 1);
        if (type_ids && (type_ids[i] < 0 || type_ids[i] >= c->type_vocab_size))
            return atn_error_set(err, ATN_E_INVALID, "token type id %d at position %d is outside 0..%d",
                                 type_ids[i], i, c->type_vocab_size - 1);
        if (mask && mask[i] != 0 && mask[i] != 1)
            return atn_error_set(err, ATN_E_INVALID, "mask value %d at position %d must be 0 or 1", mask[i], i);
    }
    atn_encoding *e = encoding_alloc(n);
    if (!e)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory for %d tokens", n);
    for (int32_t i = 0; i < n; i++) {
        e->ids[i] = ids[i];
        e->type_ids[i] = type_ids ? type_ids[i] : 0;
        e->mask[i] = mask ? mask[i] : 1;
        const char *t = model->tokenizer ? atn_tokenizer_id_to_token(model->tokenizer, ids[i]) : NULL;
        char buf[32];
        if (!t) {
            snprintf(buf, sizeof buf, "#%d", ids[i]);
            t = buf;
        }
        e->tokens[i].text = strdup(t);
        e->tokens[i].id = ids[i];
        e->tokens[i].type_id = e->type_ids[i];
        e->tokens[i].start = e->tokens[i].end = -1;
        e->tokens[i].segment = -1;
        e->tokens[i].special = t[0] == '[' && t[strlen(t) - 1] == ']' && strlen(t) > 2;
        if (!e->tokens[i].text) {
            atn_encoding_free(e);
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        }
    }
    *out = e;
    return ATN_OK;
}

atn_status atn_model_encode_toy(const atn_model *model, const int32_t *mask, atn_encoding **out,
                                atn_error *err) {
    *out = NULL;
    if (model->kind != ATN_MODEL_TOY)
        return atn_error_set(err, ATN_E_INVALID, "model \"%s\" is not a toy model: give it text or ids",
                             model->name);
    atn_encoding *e = encoding_alloc(model->toy_n);
    if (!e)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    for (int32_t i = 0; i < model->toy_n; i++) {
        if (mask && mask[i] != 0 && mask[i] != 1) {
            atn_encoding_free(e);
            return atn_error_set(err, ATN_E_INVALID, "mask value %d at position %d must be 0 or 1", mask[i], i);
        }
        e->tokens[i].text = strdup(model->toy_tokens[i]);
        if (!e->tokens[i].text) {
            atn_encoding_free(e);
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        }
        e->tokens[i].id = e->ids[i] = -1;
        e->tokens[i].start = e->tokens[i].end = -1;
        e->tokens[i].segment = 0;
        e->mask[i] = mask ? mask[i] : 1;
    }
    *out = e;
    return ATN_OK;
}

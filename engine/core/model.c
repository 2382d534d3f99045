/* Models: opening by name or path, built-in models, and turning text or ids into an
 * encoding.  The atn_model object itself (allocation, ownership, accessors, the
 * configuration check) is in model-object.c, which the loaders (hf-model.c, toy-model.c)
 * use; this file calls the loaders, and they never call back into it. */
#include "tokenize/encoding.h"
#include "core/cancel.h"
#include "core/family.h"
#include "hf-cache.h"
#include "core/install-paths.h"
#include "core/model-private.h"
#include "tokenize/tokenizer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

/* ---- data folder and built-in models ---------------------------------------- */

static bool is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The data folder: ATTNSCOPE_DATADIR, else the source tree's data/ when the program runs
 * from the build tree, else the install prefix's (an installed program never reads a source
 * tree, even one left at the path it was built from). */
static const char *data_dir(void) {
    const char *env = getenv("ATTNSCOPE_DATADIR");
    if (env && *env)
        return env;
    if (atn_running_uninstalled() && is_dir(ATN_SOURCE_DATADIR "/models"))
        return ATN_SOURCE_DATADIR;
    return ATN_INSTALL_DATADIR;
}

static const char *const builtin_names[] = {"demo", "demo-gpt2", "worked-example", NULL};

const char *const *atn_builtin_model_names(void) { return builtin_names; }

/* "org/name[@rev]" from the Hugging Face cache, named by what was asked for. */
static atn_model *open_cached(const char *spec, atn_progress_fn progress, void *user_data, atn_error *err) {
    char snap[4096];
    atn_error why = {0};
    if (atn_hf_cache_resolve(NULL, spec, snap, sizeof snap, &why) != ATN_OK) {
        size_t skip = strncmp(why.message, spec, strlen(spec)) ? 0 : strlen(spec) + 2;   /* "spec: " */
        atn_error_set(err, ATN_E_IO, "%s: no such model: no such file or folder, and %s; built-in models: "
                      "demo, demo-gpt2, worked-example", spec, why.message + skip);
        return NULL;
    }
    atn_model *m = atn_model_open_hf(snap, progress, user_data, err);
    if (m) {
        char *name = strdup(spec);
        if (name) {
            free(m->name);
            m->name = name;
        }
    }
    return m;
}

/* "random:SHAPE[@SEED][#POSITIONS]": a model of a shape atn_random_shape_config knows with
 * random weights (seed 1 unless given, as `attnscope bench`; at least POSITIONS position
 * rows), named by what was asked for. */
static atn_model *open_random(const char *spec, atn_error *err) {
    const char *shape = spec + strlen(ATN_RANDOM_PREFIX), *at = strchr(shape, '@'), *hash = strchr(shape, '#');
    if (at && hash && hash < at) {
        atn_error_set(err, ATN_E_INVALID, "%s: write random:SHAPE@SEED#POSITIONS (the seed first)", spec);
        return NULL;
    }
    uint64_t seed = 1;
    int32_t positions = 0;
    const char *name_end = at ? at : hash ? hash : shape + strlen(shape);
    char *name = strndup(shape, (size_t)(name_end - shape));
    if (!name) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        return NULL;
    }
    if (at) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(at + 1, &end, 10);
        if (!at[1] || (*end && end != hash) || end == at + 1 || errno || at[1] == '-' || at[1] == '+' ||
            at[1] == ' ') {
            atn_error_set(err, ATN_E_INVALID, "%s: the seed after '@' must be a non-negative integer", spec);
            free(name);
            return NULL;
        }
        seed = (uint64_t)v;
    }
    if (hash) {
        char *end;
        errno = 0;
        long v = strtol(hash + 1, &end, 10);
        if (!hash[1] || *end || errno || hash[1] == '-' || hash[1] == '+' || hash[1] == ' ' || v < 1 ||
            v > 1 << 20) {
            atn_error_set(err, ATN_E_INVALID, "%s: the position count after '#' must be an integer in 1..1048576",
                          spec);
            free(name);
            return NULL;
        }
        positions = (int32_t)v;
    }
    atn_model *m = atn_model_new_random_shape_positions(name, seed, positions, err);
    free(name);
    if (m) {
        char *copy = strdup(spec);
        if (!copy) {
            atn_model_free(m);
            atn_error_set(err, ATN_E_NOMEM, "out of memory");
            return NULL;
        }
        free(m->name);
        m->name = copy;
    }
    return m;
}

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
        if (strncmp(name_or_path, ATN_RANDOM_PREFIX, strlen(ATN_RANDOM_PREFIX)) == 0)
            return open_random(name_or_path, err);
        bool builtin = false;
        for (int i = 0; builtin_names[i]; i++)
            builtin |= strcmp(builtin_names[i], name_or_path) == 0;
        char id[ATN_HF_ID_MAX], rev[ATN_HF_REV_MAX];
        if (!builtin && atn_hf_parse_spec(name_or_path, id, rev, NULL) == ATN_OK)
            return open_cached(name_or_path, progress, user_data, err);
        if (!builtin || strchr(name_or_path, '/')) {
            atn_error_set(err, ATN_E_IO, "%s: no such model (not a built-in model name and no such file or "
                          "folder: %s); built-in models: demo, demo-gpt2, worked-example", name_or_path, strerror(errno));
            return NULL;
        }
        snprintf(path, sizeof path, "%s/models/%s", data_dir(), name_or_path);
        if (stat(path, &st) != 0) {
            snprintf(path, sizeof path, "%s/models/%s.json", data_dir(), name_or_path);
            if (stat(path, &st) != 0) {
                atn_error_set(err, ATN_E_IO, "built-in model \"%s\" not found under %s/models "
                              "(set ATTNSCOPE_DATADIR to the data folder)", name_or_path, data_dir());
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

atn_status atn_model_encode(const atn_model *model, const char *text, const char *text_pair,
                            atn_encoding **out, atn_error *err) {
    *out = NULL;
    if (!text)   /* not read as "": a caller that lost its text should hear so (attnscope.h) */
        return atn_error_set(err, ATN_E_INVALID, "no text to encode (NULL); give \"\" for an empty sentence");
    if (model->kind == ATN_MODEL_TOY)
        return atn_error_set(err, ATN_E_INVALID, "model \"%s\" is a toy model: its tokens are in the "
                             "file and it takes no text", model->name);
    if (!model->tokenizer)
        return atn_error_set(err, ATN_E_INVALID, "model \"%s\" has no tokenizer (vocab.txt)%s", model->name,
                             model->path && model->path[0] ? "" : ": give it token ids");
    /* GPT-2: one text, no segments.  DistilBERT has no token types either but reads pairs as
       Hugging Face's tokenizer encodes them ([CLS] A [SEP] B [SEP]; its SQuAD models) */
    if (text_pair && !model->family->token_types && model->family->causal)
        return atn_error_set(err, ATN_E_INVALID, "model \"%s\" (%s) has no token types, so it reads one text, "
                             "not a pair: join the two texts into one", model->name, model->family->name);
    if (model->cfg.max_positions < 3) {   /* name where the number came from, not only the number */
        char where[600] = "";
        if (model->path && model->path[0] && model->family && model->family->config.max_positions)
            snprintf(where, sizeof where, " (\"%s\" in %s/config.json)", model->family->config.max_positions,
                     model->path);
        return atn_error_set(err, ATN_E_INVALID, "model \"%s\" allows %d position%s%s: too few for text, which "
                             "needs [CLS], at least one token and [SEP]", model->name, model->cfg.max_positions,
                             model->cfg.max_positions == 1 ? "" : "s", where);
    }
    atn_status st = atn_tokenizer_encode(model->tokenizer, text, text_pair, model->cfg.max_positions, out, err);
    if (st == ATN_OK && !model->family->token_types)   /* the model reads none: show none */
        memset((*out)->type_ids, 0, (size_t)(*out)->n * sizeof *(*out)->type_ids);
    return st;
}

atn_status atn_model_encode_cancellable(const atn_model *model, const char *text,
                                        const char *text_pair, atn_progress_fn progress,
                                        void *user_data, atn_encoding **out, atn_error *err) {
    atn_cancel_scope scope;
    atn_cancel_enter(&scope, progress, user_data, 0.0, ATN_STAGE_TOKENIZE);
    atn_status st = atn_model_encode(model, text, text_pair, out, err);
    atn_cancel_leave(&scope);
    return st;
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
    int32_t most = atn_family_max_tokens(model->family, c);   /* RoBERTa: max_positions - padding_idx - 1 */
    if (n > most)
        return atn_error_set(err, ATN_E_INVALID, "%d token ids given but model \"%s\" allows at most %d "
                             "positions", n, model->name, most);
    for (int32_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= c->vocab_size)
            return atn_error_set(err, ATN_E_INVALID, "token id %d at position %d is outside the vocabulary "
                                 "(0..%d)", ids[i], i, c->vocab_size - 1);
        /* a family without token types (DistilBERT) ignores them: any non-negative id */
        if (type_ids && (type_ids[i] < 0 || (atn_model_reads_types(model, model->family->token_types) && type_ids[i] >= c->type_vocab_size)))
            return atn_type_id_error(model, type_ids[i], i, err);
        /* GPT-2 is not DistilBERT: transformers' GPT2Model adds wte[type id] for given
           token_type_ids, which attnscope does not compute, so a non-zero one is refused */
        if (type_ids && type_ids[i] != 0 && model->family->causal)
            return atn_error_set(err, ATN_E_INVALID, "token type id %d at position %d: model \"%s\" (%s) has no "
                                 "token types (only 0)", type_ids[i], i, model->name, model->family->name);
        if (mask && mask[i] != 0 && mask[i] != 1)
            return atn_error_set(err, ATN_E_INVALID, "mask value %d at position %d must be 0 or 1", mask[i], i);
    }
    atn_encoding *e = atn_encoding_alloc(n);
    if (!e)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory for %d tokens", n);
    for (int32_t i = 0; i < n; i++) {
        e->ids[i] = ids[i];
        e->type_ids[i] = type_ids ? type_ids[i] : 0;
        e->mask[i] = mask ? mask[i] : 1;
        atn_vocab_entry v = {.role = ATN_TOKEN_WORD};
        const char *t = atn_tokenizer_id_info(model->tokenizer, ids[i], &v) ? v.text : NULL;
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
        e->tokens[i].special = v.special;
        e->tokens[i].role = v.role;
        e->tokens[i].continuation = v.continuation;
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
    atn_encoding *e = atn_encoding_alloc(model->toy_n);
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
        e->tokens[i].role = ATN_TOKEN_WORD;   /* a toy model's tokens are words, whatever their names */
        e->tokens[i].continuation = false;
        e->mask[i] = mask ? mask[i] : 1;
    }
    *out = e;
    return ATN_OK;
}

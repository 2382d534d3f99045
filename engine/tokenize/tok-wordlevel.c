/* The WordPiece and WordLevel models of a tokenizer.json pipeline (tok-model.h), as the
 * Rust tokenizers library's models/wordpiece and models/wordlevel do, plus the two small
 * helpers every model shares (atn_tok_pieces_push, atn_tok_model_free).
 *
 *   WordPiece: a word of more than max_input_chars_per_word characters is the unk piece;
 *     otherwise greedy longest match from the left, pieces after the first looked up with
 *     continuing_subword_prefix; a word that cannot be covered is one unk piece.
 *   WordLevel: the whole word's id, else unk_token's. */
#include "core/cancel.h"
#include "tokenize/tok-model.h"
#include "tokenize/tok-vocab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenize/unicode.h"

bool atn_tok_pieces_push(atn_tok_pieces *p, int32_t id, int32_t start, int32_t end) {
    if (p->n == p->cap) {
        int32_t cap = p->cap ? 2 * p->cap : 32;
        atn_tok_piece *v = realloc(p->v, (size_t)cap * sizeof *v);
        if (!v)
            return false;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = (atn_tok_piece){id, start, end};
    return true;
}

void atn_tok_model_free(atn_tok_model *m) {
    if (m)
        m->ops->free(m);
}

/* ---- a vocabulary: token -> id and id -> token ------------------------------------- */

void atn_tok_vocab_free(atn_tok_vocab *v) {
    if (!v)
        return;
    for (int32_t i = 0; i < v->n_ids; i++)
        free(v->by_id[i]);
    free(v->by_id);
    free(v->len);
    atn_name_map_clear(&v->map);
    memset(v, 0, sizeof *v);
}

int32_t atn_tok_vocab_find(const atn_tok_vocab *v, const char *s, size_t n) {
    return atn_name_map_get_n(&v->map, s, n);
}

/* Adds token -> id.  A token listed twice moves to its last id (a map insert); an id
 * listed twice keeps its first token. */
static atn_status vocab_put(atn_tok_vocab *v, const char *tok, size_t n, int32_t id,
                            atn_error *err) {
    if (id >= v->n_ids) {
        int32_t cap = v->n_ids ? v->n_ids : 64;
        while (cap <= id)
            cap *= 2;
        char **b = realloc(v->by_id, (size_t)cap * sizeof *b);
        if (b)
            v->by_id = b;
        uint32_t *l = b ? realloc(v->len, (size_t)cap * sizeof *l) : NULL;
        if (l)
            v->len = l;
        if (!b || !l)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        for (int32_t i = v->n_ids; i < cap; i++) {
            v->by_id[i] = NULL;
            v->len[i] = 0;
        }
        v->n_ids = cap;
    }
    if (v->by_id[id])
        return ATN_OK;
    v->by_id[id] = malloc(n + 1);
    if (!v->by_id[id])
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    memcpy(v->by_id[id], tok, n);
    v->by_id[id][n] = '\0';
    v->len[id] = (uint32_t)n;
    if (id + 1 > v->size)
        v->size = id + 1;
    /* the key is the id's own copy, which lives as long as the table */
    if (atn_name_map_put_n(&v->map, v->by_id[id], n, id, true, NULL) < 0)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    return ATN_OK;
}

atn_status atn_tok_vocab_from_json(atn_tok_vocab *v, const cJSON *obj, const char *file,
                                   const char *path, atn_error *err) {
    memset(v, 0, sizeof *v);
    if (!cJSON_IsObject(obj))
        return atn_error_set(err, ATN_E_FORMAT, "%s: %s should be an object of token: id",
                             file, path);
    int32_t n = cJSON_GetArraySize(obj);
    if (!atn_name_map_init(&v->map, (size_t)n))
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    int32_t k = 0;
    for (const cJSON *e = obj->child; e; e = e->next, k++) {
        if (atn_cancel_poll()) {
            atn_tok_vocab_free(v);
            return atn_cancel_error(err, "reading the vocabulary");
        }
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 1e8 ||
            e->valuedouble != (double)(int32_t)e->valuedouble) {
            atn_status s = atn_error_set(err, ATN_E_FORMAT, "%s: %s[\"%.60s\"] should be a "
                                         "non-negative integer id", file, path, e->string);
            atn_tok_vocab_free(v);
            return s;
        }
        const char *t = e->string ? e->string : "";
        size_t len = strlen(t);
        if (atn_utf8_check((const unsigned char *)t, len) != len) {
            atn_status s = atn_error_set(err, ATN_E_FORMAT, "%s: %s: token %d is not valid UTF-8",
                                         file, path, k);
            atn_tok_vocab_free(v);
            return s;
        }
        atn_status s = vocab_put(v, t, len, (int32_t)e->valuedouble, err);
        if (s != ATN_OK) {
            atn_tok_vocab_free(v);
            return s;
        }
    }
    return ATN_OK;
}

/* ---- shared JSON helpers -------------------------------------------------------------- */

/* The string member key of obj: *out borrowed, NULL when absent or null (allowed only if
 * !required). */
static atn_status opt_string(const cJSON *obj, const char *key, bool required, const char **out,
                             const char *file, const char *path, atn_error *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!v || cJSON_IsNull(v)) {
        if (required)
            return atn_error_set(err, ATN_E_FORMAT, "%s: %s.%s is missing (a string is needed)",
                                 file, path, key);
        return ATN_OK;
    }
    if (!cJSON_IsString(v))
        return atn_error_set(err, ATN_E_FORMAT, "%s: %s.%s should be a string", file, path, key);
    *out = v->valuestring;
    return ATN_OK;
}

/* ---- WordPiece -------------------------------------------------------------------- */

typedef struct wp_model {
    atn_tok_model base;
    atn_tok_vocab vocab;
    char *prefix;
    size_t prefix_len;
    int32_t max_chars;
    size_t max_piece;     /* the longest vocabulary entry in bytes: no longer piece can match */
    int32_t unk;          /* -1: unk_token not in the vocabulary */
    char *unk_token;
} wp_model;

static void wp_free(atn_tok_model *m) {
    wp_model *w = (wp_model *)m;
    atn_tok_vocab_free(&w->vocab);
    free(w->prefix);
    free(w->unk_token);
    free(w);
}

static atn_status missing_unk(const char *model, const char *unk, const char *word, size_t len,
                              atn_error *err) {
    return atn_error_set(err, ATN_E_INVALID, "the %s model cannot spell \"%.*s\" and its "
                         "unk_token \"%s\" is not in the vocabulary", model,
                         (int)(len > 60 ? 60 : len), word, unk ? unk : "");
}

static atn_status wp_tokenize(const atn_tok_model *m, const char *word, size_t len,
                              atn_tok_pieces *out, atn_error *err) {
    const wp_model *w = (const wp_model *)m;
    size_t chars = 0;
    for (size_t i = 0; i < len; i++)
        chars += ((unsigned char)word[i] & 0xC0) != 0x80;
    int32_t first = out->n;
    bool bad = chars > (size_t)w->max_chars;
    char stackbuf[256];
    char *buf = stackbuf;
    if (!bad && w->prefix_len + len > sizeof stackbuf) {
        buf = malloc(w->prefix_len + len);
        if (!buf)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    if (!bad) {
        memcpy(buf, w->prefix, w->prefix_len);
        size_t start = 0;
        while (start < len) {
            /* the library tries [start, len) and backs off one character at a time, each try
               hashing the piece: cubic in the word (10,000 characters took 417 s).  A piece
               longer than the longest entry cannot match, so the tries start there: the same
               pieces, in O(word x longest entry^2) */
            size_t end = len;
            if (end - start > w->max_piece) {
                end = start + w->max_piece;
                while (end > start && ((unsigned char)word[end] & 0xC0) == 0x80)
                    end--;
            }
            int32_t id = -1;
            while (start < end) {
                if (atn_cancel_poll()) {
                    if (buf != stackbuf)
                        free(buf);
                    return atn_cancel_error(err, "matching WordPiece pieces");
                }
                if (start > 0) {
                    memcpy(buf + w->prefix_len, word + start, end - start);
                    id = atn_tok_vocab_find(&w->vocab, buf, w->prefix_len + end - start);
                } else {
                    id = atn_tok_vocab_find(&w->vocab, word, end);
                }
                if (id >= 0)
                    break;
                /* back off one character */
                end--;
                while (end > start && ((unsigned char)word[end] & 0xC0) == 0x80)
                    end--;
            }
            if (id < 0) {
                bad = true;
                break;
            }
            if (!atn_tok_pieces_push(out, id, (int32_t)start, (int32_t)end)) {
                if (buf != stackbuf)
                    free(buf);
                return atn_error_set(err, ATN_E_NOMEM, "out of memory");
            }
            start = end;
        }
    }
    if (buf != stackbuf)
        free(buf);
    if (bad) {
        out->n = first;
        if (w->unk < 0)
            return missing_unk("WordPiece", w->unk_token, word, len, err);
        if (!atn_tok_pieces_push(out, w->unk, 0, (int32_t)len))
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    return ATN_OK;
}

static int32_t wp_vocab_size(const atn_tok_model *m) {
    return ((const wp_model *)m)->vocab.size;
}

static int32_t wp_token_to_id(const atn_tok_model *m, const char *t, size_t len) {
    return atn_tok_vocab_find(&((const wp_model *)m)->vocab, t, len);
}

static const char *wp_id_to_token(const atn_tok_model *m, int32_t id) {
    const atn_tok_vocab *v = &((const wp_model *)m)->vocab;
    return id >= 0 && id < v->size ? v->by_id[id] : NULL;
}

static int32_t wp_unk_id(const atn_tok_model *m) {
    return ((const wp_model *)m)->unk;
}

static const atn_tok_model_ops wordpiece_model_ops = {
    .type = "WordPiece",
    .tokenize = wp_tokenize,
    .vocab_size = wp_vocab_size,
    .token_to_id = wp_token_to_id,
    .id_to_token = wp_id_to_token,
    .unk_id = wp_unk_id,
    .free = wp_free,
};

static wp_model *common_new(const cJSON *model, const char *file, const char *path,
                            const char *default_unk, atn_error *err) {
    char vpath[256];
    snprintf(vpath, sizeof vpath, "%s.vocab", path);
    wp_model *w = calloc(1, sizeof *w);
    if (!w) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        return NULL;
    }
    if (atn_tok_vocab_from_json(&w->vocab, cJSON_GetObjectItemCaseSensitive(model, "vocab"),
                                file, vpath, err) != ATN_OK) {
        free(w);
        return NULL;
    }
    const char *unk = NULL;
    if (opt_string(model, "unk_token", false, &unk, file, path, err) != ATN_OK) {
        wp_free(&w->base);
        return NULL;
    }
    if (!unk)
        unk = default_unk;
    w->unk = -1;
    if (unk) {
        w->unk_token = strdup(unk);
        if (!w->unk_token) {
            atn_error_set(err, ATN_E_NOMEM, "out of memory");
            wp_free(&w->base);
            return NULL;
        }
        w->unk = atn_tok_vocab_find(&w->vocab, unk, strlen(unk));
    }
    return w;
}

atn_tok_model *atn_tok_wordpiece_from_json(const cJSON *model, const char *file, const char *path,
                                           atn_error *err) {
    wp_model *w = common_new(model, file, path, "[UNK]", err);
    if (!w)
        return NULL;
    w->base.ops = &wordpiece_model_ops;
    const char *prefix = NULL;
    if (opt_string(model, "continuing_subword_prefix", false, &prefix, file, path, err) != ATN_OK)
        goto fail;
    w->prefix = strdup(prefix ? prefix : "##");
    if (!w->prefix) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        goto fail;
    }
    w->prefix_len = strlen(w->prefix);
    for (int32_t i = 0; i < w->vocab.n_ids; i++)
        if (w->vocab.by_id[i] && w->vocab.len[i] > w->max_piece)
            w->max_piece = w->vocab.len[i];
    w->max_chars = 100;
    const cJSON *mc = cJSON_GetObjectItemCaseSensitive(model, "max_input_chars_per_word");
    if (mc && !cJSON_IsNull(mc)) {
        if (!cJSON_IsNumber(mc) || mc->valuedouble < 0 || mc->valuedouble > 1e9 ||
            mc->valuedouble != (double)(int32_t)mc->valuedouble) {
            atn_error_set(err, ATN_E_FORMAT, "%s: %s.max_input_chars_per_word should be a "
                          "non-negative integer", file, path);
            goto fail;
        }
        w->max_chars = (int32_t)mc->valuedouble;
    }
    return &w->base;
fail:
    wp_free(&w->base);
    return NULL;
}

/* ---- WordLevel ----------------------------------------------------------------------- */

static atn_status wl_tokenize(const atn_tok_model *m, const char *word, size_t len,
                              atn_tok_pieces *out, atn_error *err) {
    const wp_model *w = (const wp_model *)m;
    int32_t id = atn_tok_vocab_find(&w->vocab, word, len);
    if (id < 0)
        id = w->unk;
    if (id < 0)
        return missing_unk("WordLevel", w->unk_token, word, len, err);
    if (!atn_tok_pieces_push(out, id, 0, (int32_t)len))
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    return ATN_OK;
}

static const atn_tok_model_ops wordlevel_model_ops = {
    .type = "WordLevel",
    .tokenize = wl_tokenize,
    .vocab_size = wp_vocab_size,
    .token_to_id = wp_token_to_id,
    .id_to_token = wp_id_to_token,
    .unk_id = wp_unk_id,
    .free = wp_free,
};

atn_tok_model *atn_tok_wordlevel_from_json(const cJSON *model, const char *file, const char *path,
                                           atn_error *err) {
    wp_model *w = common_new(model, file, path, "<unk>", err);
    if (!w)
        return NULL;
    w->base.ops = &wordlevel_model_ops;
    return &w->base;
}

atn_status atn_tok_model_json_check(const cJSON *model, const char **file, const char **path,
                                    const char *type, atn_error *err) {
    if (!*file)
        *file = "tokenizer.json";
    if (!*path)
        *path = "model";
    if (!cJSON_IsObject(model))
        return atn_error_set(err, ATN_E_FORMAT, "%s: %s: should be an object", *file, *path);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(model, "type");
    if (t && !(cJSON_IsString(t) && strcmp(t->valuestring, type) == 0))
        return atn_error_set(err, ATN_E_FORMAT, "%s: %s.type: should be \"%s\"", *file, *path, type);
    return ATN_OK;
}

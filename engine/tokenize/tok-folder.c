/* A folder's tokenizer, as AutoTokenizer picks it (tok-folder.h). */
#include "tokenize/tok-folder.h"

#include "core/cancel.h"
#include "core/family.h"
#include "core/files.h"
#include "core/json.h"
#include "tokenize/tok-model.h"
#include "tokenize/tok-pipeline.h"
#include "tokenize/wordpiece.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

enum { MAX_CONFIG_BYTES = 16 << 20 };   /* as wordpiece.c's tokenizer_config.json */

static bool in_dir(char *out, size_t cap, const char *dir, const char *name) {
    return (size_t)snprintf(out, cap, "%s/%s", dir, name) < cap;
}

/* The one rule for which of a folder's files make its tokenizer (tok-folder.h): the first
 * of tokenizer.json; vocab.json with merges.txt; for a model whose family reads another
 * file (fam->tokenizer not WordPiece: spiece.model, sentencepiece.bpe.model, a vocab.json
 * without merges.txt) that file, which is refused by name; vocab.txt, read as WordPiece.
 * Every probe counts a dangling link as an error, not as absent.  *kind: the kind chosen,
 * or NULL when the folder has none (ATN_OK: the caller says what is missing). */
static atn_status choose(const char *dir, const atn_family *fam, const char **kind, atn_error *err) {
    char a[4096], b[4096];
    bool fa = false, fb = false;
    atn_status st;
    *kind = NULL;
    if (!in_dir(a, sizeof a, dir, "tokenizer.json"))
        return atn_error_set(err, ATN_E_INVALID, "%s: path too long", dir);
    if ((st = atn_probe_file(a, &fa, err)) || fa) {
        *kind = fa ? "tokenizer.json" : NULL;
        return st;
    }
    in_dir(a, sizeof a, dir, "vocab.json");
    in_dir(b, sizeof b, dir, "merges.txt");
    if ((st = atn_probe_file(a, &fa, err)) || (fa && (st = atn_probe_file(b, &fb, err))))
        return st;
    if (fa && fb) {
        *kind = "vocab.json";
        return ATN_OK;
    }
    if (fam && strcmp(fam->tokenizer, "wordpiece") != 0) {
        if (!in_dir(a, sizeof a, dir, fam->vocab_file))
            return atn_error_set(err, ATN_E_INVALID, "%s: path too long", dir);
        if ((st = atn_probe_file(a, &fa, err)))
            return st;
        if (fa)
            return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: %s is there but no %s: the \"%s\" tokenizer "
                                 "of %s models is read from tokenizer.json (or vocab.json with merges.txt)", dir,
                                 fam->vocab_file, strcmp(fam->vocab_file, "vocab.json") == 0 ? "merges.txt"
                                 : "tokenizer.json", fam->tokenizer, fam->name);
    }
    in_dir(a, sizeof a, dir, "vocab.txt");
    if ((st = atn_probe_file(a, &fa, err)))
        return st;
    *kind = fa ? "vocab.txt" : NULL;
    return ATN_OK;
}

const char *atn_tokenizer_folder_kind(const char *dir) {
    const char *kind = NULL;
    atn_error ignored = {0};
    if (!dir || choose(dir, NULL, &kind, &ignored) != ATN_OK)
        return NULL;
    return kind;
}

/* A JSON object file, or NULL with ATN_OK when it is not there; read and parsed as the
 * WordPiece options are (atn_read_file's cap, engine/core/json.c, a dangling link an error), so
 * a broken file gets the same message whichever tokenizer the folder has. */
static atn_status read_obj(const char *dir, const char *name, cJSON **out, atn_error *err) {
    char path[4096];
    bool found = false;
    atn_status st;
    *out = NULL;
    if (!in_dir(path, sizeof path, dir, name))
        return atn_error_set(err, ATN_E_INVALID, "%s: path too long", dir);
    if ((st = atn_probe_file(path, &found, err)) || !found)
        return st;
    char *text;
    size_t len;
    if ((st = atn_read_file(path, MAX_CONFIG_BYTES, &text, &len, err)))
        return st;
    cJSON *root = NULL;
    st = atn_json_parse(text, len, path, 0, &root, err);
    free(text);
    if (st == ATN_OK && !cJSON_IsObject(root))
        st = atn_error_set(err, ATN_E_FORMAT, "%s: not a JSON object", path);
    if (st != ATN_OK) {
        cJSON_Delete(root);
        return st;
    }
    *out = root;
    return ATN_OK;
}

/* A special token's name: "<s>" or {"content": "<s>", ...}; NULL when absent.  A value of
 * another type is an error naming the file and key. */
static atn_status token_name(const cJSON *o, const char *dir, const char *file, const char *key,
                             const char **out, atn_error *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v))
        return ATN_OK;
    if (cJSON_IsString(v)) {
        *out = v->valuestring;
        return ATN_OK;
    }
    const cJSON *c = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "content") : NULL;
    if (cJSON_IsString(c)) {
        *out = c->valuestring;
        return ATN_OK;
    }
    return atn_error_set(err, ATN_E_FORMAT, "%s/%s: \"%s\" should be a token (a string or "
                         "{\"content\": ...})", dir, file, key);
}

enum { K_CLS, K_SEP, K_PAD, K_UNK, K_MASK, K_BOS, K_EOS, N_KEYS };
static const char *const keys[N_KEYS] = {"cls_token", "sep_token", "pad_token", "unk_token",
                                         "mask_token", "bos_token", "eos_token"};

/* tokenizer_config.json, then special_tokens_map.json over it. */
static atn_status special_names(const char *dir, const cJSON *tcfg, const cJSON *smap,
                                const char *names[N_KEYS], atn_error *err) {
    atn_status st;
    for (int k = 0; k < N_KEYS; k++) {
        names[k] = NULL;
        if ((tcfg && (st = token_name(tcfg, dir, "tokenizer_config.json", keys[k], &names[k], err))) ||
            (smap && (st = token_name(smap, dir, "special_tokens_map.json", keys[k], &names[k], err))))
            return st;
    }
    return ATN_OK;
}

static void apply_roles(atn_tokenizer *tok, const char *names[N_KEYS]) {
    static const atn_token_role roles[] = {ATN_TOKEN_CLS, ATN_TOKEN_SEP, ATN_TOKEN_PAD,
                                           ATN_TOKEN_UNK, ATN_TOKEN_MASK};
    for (int k = 0; k < 5; k++)
        if (names[k])
            atn_tok_pipeline_set_role(tok, roles[k], names[k]);
    /* a tokenizer with bos/eos but no cls/sep (GPT-2 style) */
    if (!names[K_CLS] && names[K_BOS] && atn_tokenizer_special_id(tok, ATN_TOKEN_CLS) < 0)
        atn_tok_pipeline_set_role(tok, ATN_TOKEN_CLS, names[K_BOS]);
    if (!names[K_SEP] && names[K_EOS] && atn_tokenizer_special_id(tok, ATN_TOKEN_SEP) < 0)
        atn_tok_pipeline_set_role(tok, ATN_TOKEN_SEP, names[K_EOS]);
}

static bool roberta_style(const cJSON *tcfg, const char *hint) {
    const cJSON *c = tcfg ? cJSON_GetObjectItemCaseSensitive(tcfg, "tokenizer_class") : NULL;
    if (cJSON_IsString(c)) {
        static const char *const r[] = {"Roberta", "Bart", "Longformer", "Camembert", "Mvp", "Led"};
        for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
            if (strncasecmp(c->valuestring, r[i], strlen(r[i])) == 0)
                return true;
        return false;
    }
    return hint && (strcasecmp(hint, "roberta") == 0 || strcasecmp(hint, "bart") == 0 ||
                    strcasecmp(hint, "longformer") == 0);
}

static atn_tokenizer *open_classic(const char *dir, const cJSON *tcfg, const char *names[N_KEYS],
                                   const char *hint, atn_error *err) {
    char vocab[4096], merges[4096];
    in_dir(vocab, sizeof vocab, dir, "vocab.json");
    in_dir(merges, sizeof merges, dir, "merges.txt");
    bool rob = roberta_style(tcfg, hint);
    bool aps = false;
    const cJSON *a = tcfg ? cJSON_GetObjectItemCaseSensitive(tcfg, "add_prefix_space") : NULL;
    if (a && !cJSON_IsNull(a)) {
        if (!cJSON_IsBool(a)) {
            atn_error_set(err, ATN_E_FORMAT, "%s/tokenizer_config.json: \"add_prefix_space\" "
                          "should be true or false", dir);
            return NULL;
        }
        aps = cJSON_IsTrue(a);
    }
    atn_tok_model *m = atn_tok_bpe_from_files(vocab, merges, err);
    if (!m)
        return NULL;
    const char *sp[7];
    int n = 0;
    if (rob) {
        sp[n++] = names[K_CLS] ? names[K_CLS] : names[K_BOS] ? names[K_BOS] : "<s>";
        sp[n++] = names[K_SEP] ? names[K_SEP] : names[K_EOS] ? names[K_EOS] : "</s>";
        sp[n++] = names[K_UNK] ? names[K_UNK] : "<unk>";
        sp[n++] = names[K_PAD] ? names[K_PAD] : "<pad>";
        sp[n++] = names[K_MASK] ? names[K_MASK] : "<mask>";
    } else {
        sp[n++] = names[K_BOS] ? names[K_BOS] : "<|endoftext|>";
        sp[n++] = names[K_EOS] ? names[K_EOS] : "<|endoftext|>";
        sp[n++] = names[K_UNK] ? names[K_UNK] : "<|endoftext|>";
        sp[n++] = names[K_PAD];
    }
    atn_tokenizer *t = atn_tok_pipeline_classic(m, rob, aps, sp, n,
                                                rob ? sp[4] : NULL, vocab, err);
    if (t)
        apply_roles(t, names);
    return t;
}

/* vocab.txt as WordPiece, with tokenizer_config.json's options when the folder has one. */
static atn_tokenizer *open_wordpiece(const char *dir, atn_error *err) {
    char path[4096], tp[4096];
    bool have_tcfg = false;
    in_dir(path, sizeof path, dir, "vocab.txt");
    in_dir(tp, sizeof tp, dir, "tokenizer_config.json");
    atn_wordpiece_options o;
    atn_wordpiece_options_init(&o);
    if (atn_probe_file(tp, &have_tcfg, err) || (have_tcfg && atn_wordpiece_options_from_json(&o, tp, err)))
        return NULL;
    return atn_wordpiece_load(path, &o, err);
}

atn_tokenizer *atn_tokenizer_open_folder(const char *dir, const struct atn_family *fam, int32_t *model_max_length,
                                         const char **source, atn_error *err) {
    if (model_max_length)
        *model_max_length = 0;
    if (source)
        *source = NULL;
    if (!dir) {
        atn_error_set(err, ATN_E_INVALID, "no tokenizer folder given");
        return NULL;
    }
    const char *kind = NULL;
    if (choose(dir, fam, &kind, err) != ATN_OK)
        return NULL;
    if (!kind) {
        if (!fam)
            atn_error_set(err, ATN_E_IO, "%s: no tokenizer files (looked for tokenizer.json, "
                          "vocab.json with merges.txt, vocab.txt)", dir);
        else if (strcmp(fam->tokenizer, "wordpiece") == 0)
            atn_error_set(err, ATN_E_IO, "%s: missing vocab.txt (%s/vocab.txt): the WordPiece "
                          "vocabulary is needed to tokenize text", dir, dir);
        else
            atn_error_set(err, ATN_E_UNSUPPORTED, "%s: no \"%s\" tokenizer for %s models", dir, fam->tokenizer,
                          fam->name);
        return NULL;
    }
    if (source)
        *source = kind;
    cJSON *tcfg = NULL, *smap = NULL;
    const char *names[N_KEYS];
    atn_tokenizer *tok = NULL;
    if (read_obj(dir, "tokenizer_config.json", &tcfg, err) ||
        read_obj(dir, "special_tokens_map.json", &smap, err) ||
        special_names(dir, tcfg, smap, names, err))
        goto done;
    const cJSON *ml = tcfg ? cJSON_GetObjectItemCaseSensitive(tcfg, "model_max_length") : NULL;
    if (model_max_length && cJSON_IsNumber(ml) && ml->valuedouble >= 1 && ml->valuedouble < 1e7)
        *model_max_length = (int32_t)ml->valuedouble;
    char path[4096];
    if (strcmp(kind, "tokenizer.json") == 0) {
        in_dir(path, sizeof path, dir, "tokenizer.json");
        tok = atn_tok_pipeline_load(path, err);
        if (tok)
            apply_roles(tok, names);
    } else if (strcmp(kind, "vocab.json") == 0) {
        tok = open_classic(dir, tcfg, names, fam ? fam->name : NULL, err);
    } else {   /* vocab.txt: WordPiece as BertTokenizer reads it, whatever the family */
        tok = open_wordpiece(dir, err);
    }
done:
    cJSON_Delete(tcfg);
    cJSON_Delete(smap);
    return tok;
}

/* ---- the public face (attnscope.h) ------------------------------------------------ */

#include "core/model-private.h"

struct atn_text_tokenizer {
    atn_tokenizer *tok;
    int32_t max_len;
};

atn_text_tokenizer *atn_text_tokenizer_open_cancellable(const char *folder, atn_progress_fn progress,
                                                        void *user_data, atn_error *err) {
    atn_cancel_scope scope;
    atn_cancel_enter(&scope, progress, user_data, 0.0, ATN_STAGE_READ_VOCAB);
    atn_text_tokenizer *t = atn_text_tokenizer_open(folder, err);
    atn_cancel_leave(&scope);
    return t;
}

atn_text_tokenizer *atn_text_tokenizer_open(const char *folder, atn_error *err) {
    struct stat st;
    if (!folder) {
        atn_error_set(err, ATN_E_INVALID, "no tokenizer folder given");
        return NULL;
    }
    if (stat(folder, &st) != 0 || !S_ISDIR(st.st_mode)) {
        atn_error_set(err, ATN_E_IO, "%s: not a folder (a tokenizer is a folder with "
                      "tokenizer.json, or vocab.json and merges.txt, or vocab.txt)", folder);
        return NULL;
    }
    atn_text_tokenizer *t = calloc(1, sizeof *t);
    if (!t) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        return NULL;
    }
    t->tok = atn_tokenizer_open_folder(folder, NULL, &t->max_len, NULL, err);
    if (!t->tok) {
        free(t);
        return NULL;
    }
    return t;
}

void atn_text_tokenizer_free(atn_text_tokenizer *t) {
    if (t) {
        atn_tokenizer_free(t->tok);
        free(t);
    }
}

const char *atn_text_tokenizer_kind(const atn_text_tokenizer *t) {
    return t ? atn_tokenizer_kind(t->tok) : "";
}

int32_t atn_text_tokenizer_max_length(const atn_text_tokenizer *t) {
    return t ? t->max_len : 0;
}

atn_status atn_text_tokenizer_encode(const atn_text_tokenizer *t, const char *text,
                                     const char *text_pair, int32_t max_len,
                                     atn_encoding **out, atn_error *err) {
    if (out)
        *out = NULL;
    if (!t)
        return atn_error_set(err, ATN_E_INVALID, "atn_text_tokenizer_encode: the tokenizer is NULL");
    return atn_tokenizer_encode(t->tok, text, text_pair, max_len, out, err);
}

atn_status atn_text_tokenizer_encode_cancellable(const atn_text_tokenizer *t, const char *text,
                                                 const char *text_pair, int32_t max_len,
                                                 atn_progress_fn progress, void *user_data,
                                                 atn_encoding **out, atn_error *err) {
    atn_cancel_scope scope;
    atn_cancel_enter(&scope, progress, user_data, 0.0, ATN_STAGE_TOKENIZE);
    atn_status st = atn_text_tokenizer_encode(t, text, text_pair, max_len, out, err);
    atn_cancel_leave(&scope);
    return st;
}

static bool info_of(const atn_tokenizer *tok, int32_t id, atn_token_info *out) {
    atn_vocab_entry v;
    if (!out || !atn_tokenizer_id_info(tok, id, &v))
        return false;
    *out = (atn_token_info){v.text, v.surface, v.partial, v.continuation, v.special, v.role};
    return true;
}

bool atn_text_tokenizer_token_info(const atn_text_tokenizer *t, int32_t id, atn_token_info *out) {
    return t && info_of(t->tok, id, out);
}

bool atn_model_token_info(const atn_model *model, int32_t id, atn_token_info *out) {
    return model && model->tokenizer && info_of(model->tokenizer, id, out);
}

/* Opening a Hugging Face model folder: config.json, the weights and the vocabulary
 * (vocab.txt + tokenizer_config.json).  Weights, the first found of: model.safetensors,
 * model.safetensors.index.json (shards), pytorch_model.bin, pytorch_model.bin.index.json
 * (shards); .bin files are read by engine/formats/torch-bin.h into the same atn_st_file table.
 *
 * config.json's "model_type" picks the model family (engine/core/family.h), whose table gives
 * the config keys, the tensor names, the prefixes of task checkpoints (BERT: "bert." of
 * BertForMaskedLM, BertForPreTraining, BertForSequenceClassification ..., or none), whether
 * old LayerNorm.gamma/beta names are accepted, the masked-LM head and the tokenizer.
 * Tensors the encoder does not read (pooler.* ...) are ignored.  Every tensor the encoder
 * needs is checked against the shape config.json implies before anything is used.
 *
 * F32 tensors are used in place from the mapping (no copy); F16/BF16 tensors, and F32
 * tensors whose data is not 4-byte aligned in the file, are converted into one block the
 * model owns.  Mappings no tensor points into are released at the end.
 *
 * Over 1,000 lines since the rotary decoders, BLOOM, ModernBERT, Gemma and DeBERTa gained
 * their binders (bind_rotary_layer, bind_modernbert_layer, split_modernbert, the per-head
 * slices, DeBERTa's projections, rel_embeddings and head in bind_layer / bind_weights,
 * finish_deberta; DeBERTa's config keys are in hf-deberta.c, Gemma's gains in hf-rotary.c);
 * the encoder-decoders already bind theirs in hf-encdec.c through atn_hf_binder (the shared
 * `want`), which is the way out for the rest: the binders above move behind that same
 * interface, one file per family group, in a change of their own (not folded into this
 * wave's merges, which moved the forward under every family at once). */
#include "core/cancel.h"
#include "core/family.h"
#include "core/files.h"
#include "forward/fp16.h"
#include "hf-cache.h"
#include "core/json.h"
#include "core/memlimit.h"
#include "core/name-map.h"
#include "core/model-private.h"
#include "formats/hf-deberta.h"
#include "forward/encoder.h"   /* atn_layernorm: DeBERTa's relative embeddings */
#include "formats/hf-encdec.h"
#include "formats/hf-memory.h"
#include "formats/hf-rotary.h"
#include "formats/safetensors.h"
#include "tokenize/tok-folder.h"
#include "formats/torch-bin.h"
#include "tokenize/wordpiece.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
    HF_PATH_MAX = 4096,
    HF_CONFIG_MAX = 16 << 20,   /* bytes; config.json and the index are small */
    HF_INDEX_MAX = 64 << 20,
    HF_MAX_SHARDS = 4096,
};

/* A tensor waiting to be converted (or copied, when unaligned) into model memory. */
typedef struct hf_pending {
    const float **dst;
    const atn_st_tensor *t;
    /* a slice of it: columns [col0, col0 + cols) of a 2-D tensor [R, C] written transposed
       as [cols, R] (transpose), or elements [col0, col0 + cols) of a 1-D one; cols 0: the
       whole tensor as it is */
    int64_t col0, cols;
    bool transpose;
    int64_t period;   /* > 0: the rows (elements) col0.. of every period of them (hf_bind) */
} hf_pending;

typedef struct hf_loader {
    char folder[HF_PATH_MAX];
    atn_model *model;
    atn_progress_fn progress;
    void *user_data;
    atn_error *err;

    /* weights: one file, or the shards of an index */
    char weights_path[HF_PATH_MAX];   /* model.safetensors or model.safetensors.index.json */
    atn_st_file **files;
    char **file_names;                /* shard basenames */
    bool *in_place;                   /* some tensor points into this file's mapping */
    int32_t n_files;
    cJSON *index;                     /* the parsed index (sharded only) */
    const cJSON *weight_map;
    atn_name_map by_tensor;           /* weight_map: tensor name -> file (keys in index) */
    atn_name_map by_file;             /* shard basename -> file */

    const atn_family *fam;            /* from config.json's model_type */
    int32_t groups, inner, applied;   /* ALBERT's layer sharing (0: none) */
    bool sinusoidal;                  /* DistilBERT sinusoidal_pos_embds */
    atn_layer_weights *stored;        /* ALBERT: the stored layers, [groups x inner] */
    int32_t n_stored;
    bool attn_no_scale, attn_scale_by_layer;   /* GPT-2's scale_attn_* switches */
    /* config.json's tie_word_embeddings (default true): the LM head is wte, as
       transformers ties it on load whatever lm_head.weight the file holds */
    bool tie_word_embeddings;
    atn_hf_rotary rot;                /* a rotary decoder's keys (fam->rotary) */
    atn_deberta deb;                  /* DeBERTa-v2's keys (fam->disentangled) */
    bool deb_no_types;                /* its type_vocab_size 0: no token-type embeddings */
    atn_hf_encdec encdec;             /* an encoder-decoder's keys (fam->encdec) */
    const char *prefix;               /* one of fam->tensors.prefixes */
    hf_pending *todo;
    int32_t n_todo, cap_todo;
    uint64_t view_budget;             /* the memory budget for views copied (0: not probed) */
    uint64_t view_bytes;              /* bytes of views copied so far (atn_st_materialise) */
    /* atn_hf_open_memory: config.json's object and the one weights file, no folder on disk
       (the loader owns mem_weights until open_weights makes it files[0]) */
    const cJSON *mem_config;
    atn_st_file *mem_weights;
} hf_loader;

/* ---- small helpers ---------------------------------------------------------- */

/* Whether path is a regular file (*found).  Absent is not an error; something there that
 * cannot be used (permission denied, a symlink loop, a folder or FIFO in the file's
 * place) is, named as what it is rather than reported as missing. */
static atn_status probe(hf_loader *L, const char *path, bool *found) {
    return atn_probe_file(path, found, L->err);
}

static atn_status join(hf_loader *L, char *out, const char *name) {
    int n = snprintf(out, HF_PATH_MAX, "%s/%s", L->folder, name);
    if (n < 0 || n >= HF_PATH_MAX)
        return atn_error_set(L->err, ATN_E_INVALID, "%s: path too long", L->folder);
    return ATN_OK;
}

static bool report(hf_loader *L, double fraction, atn_stage stage) {
    return !L->progress || L->progress(fraction, stage, L->user_data);
}

static atn_status cancelled(hf_loader *L) {
    return atn_error_set(L->err, ATN_E_CANCELLED, "%s: opening the model was cancelled",
                         L->folder);
}

static const char *json_type_name(const cJSON *item) {
    if (cJSON_IsString(item)) return "a string";
    if (cJSON_IsNumber(item)) return "a number";
    if (cJSON_IsBool(item)) return "a boolean";
    if (cJSON_IsNull(item)) return "null";
    if (cJSON_IsArray(item)) return "an array";
    if (cJSON_IsObject(item)) return "an object";
    return "invalid";
}

/* ---- config.json ------------------------------------------------------------ */

/* An integer key in [min, max]; when absent, def unless required. */
/* A NULL key: the family has no such key, def is used. */
static atn_status cfg_int(const char *path, const cJSON *root, const char *key, bool required,
                          int32_t def, int32_t min, int32_t max, int32_t *out, atn_error *err) {
    const cJSON *item = key ? cJSON_GetObjectItemCaseSensitive(root, key) : NULL;
    if (!item) {
        if (required)
            return atn_error_set(err, ATN_E_FORMAT, "%s: missing key \"%s\"", path, key);
        *out = def;
        return ATN_OK;
    }
    if (!cJSON_IsNumber(item))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be an integer, not %s", path,
                             key, json_type_name(item));
    double v = item->valuedouble;
    /* no int64 cast of a value it cannot hold (undefined); the range check refuses those */
    bool huge = !(v > -9e18 && v < 9e18);
    if (!huge && v != (double)(int64_t)v)
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be an integer, not %g", path,
                             key, v);
    if (v < min || v > max)
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" is %g; expected %d..%d", path, key,
                             v, min, max);
    *out = (int32_t)v;
    return ATN_OK;
}

static atn_status cfg_string(const char *path, const cJSON *root, const char *key,
                             const char *def, const char **out, atn_error *err) {
    const cJSON *item = key ? cJSON_GetObjectItemCaseSensitive(root, key) : NULL;
    if (!item || cJSON_IsNull(item)) {
        *out = def;
        return ATN_OK;
    }
    if (!cJSON_IsString(item))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be a string, not %s", path, key,
                             json_type_name(item));
    *out = item->valuestring;
    return ATN_OK;
}

/* A boolean key; absent or null: def.  A NULL key: the family has none, def. */
static atn_status cfg_bool(const char *path, const cJSON *root, const char *key, bool def, bool *out,
                           atn_error *err) {
    const cJSON *item = key ? cJSON_GetObjectItemCaseSensitive(root, key) : NULL;
    if (!item || cJSON_IsNull(item)) {
        *out = def;
        return ATN_OK;
    }
    if (!cJSON_IsBool(item))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be true or false, not %s", path, key,
                             json_type_name(item));
    *out = cJSON_IsTrue(item);
    return ATN_OK;
}

static atn_status read_config(hf_loader *L, atn_config *c) {
    char path[HF_PATH_MAX];
    bool found;
    atn_status st = join(L, path, "config.json");
    cJSON *root;
    if (st != ATN_OK)
        return st;
    if (L->mem_config) {   /* a copy: the aliases below are added to it */
        if (!(root = cJSON_Duplicate(L->mem_config, true)))
            return atn_error_set(L->err, ATN_E_NOMEM, "out of memory");
    } else {
        if ((st = probe(L, path, &found)) != ATN_OK)
            return st;
        if (!found)
            return atn_error_set(L->err, ATN_E_IO, "%s: missing config.json (%s): a Hugging Face "
                                 "model folder needs config.json, model.safetensors and vocab.txt",
                                 L->folder, path);
        if ((st = atn_json_read_object(path, HF_CONFIG_MAX, &root, L->err)) != ATN_OK)
            return st;
    }

    memset(c, 0, sizeof *c);
    const char *model_type = "", *act = "", *pos_type = "";
    /* an absent model_type reads as BERT, as it always has (old BERT configs have none) */
    if ((st = cfg_string(path, root, "model_type", "bert", &model_type, L->err)))
        goto done;
    if (!(L->fam = atn_family_lookup(model_type, path, L->err))) {
        st = ATN_E_UNSUPPORTED;
        goto done;
    }
    /* the keys and defaults are the family's (its transformers config class's); a key spelt
       another way the class accepts (BLOOM's n_embed) is read as the key */
    const atn_family_config *k = &L->fam->config;
    for (int i = 0; i + 1 < 8 && k->aliases[i]; i += 2) {
        const cJSON *other = cJSON_GetObjectItemCaseSensitive(root, k->aliases[i]);
        if (other && !cJSON_GetObjectItemCaseSensitive(root, k->aliases[i + 1]) &&
            !cJSON_AddItemToObject(root, k->aliases[i + 1], cJSON_Duplicate(other, true))) {
            st = atn_error_set(L->err, ATN_E_NOMEM, "out of memory");
            goto done;
        }
    }
    if ((st = cfg_int(path, root, k->d_model, true, 0, 1, 65536, &c->d_model, L->err)) ||
        (st = cfg_int(path, root, k->n_layers, true, 0, 1, 1000, &c->n_layers, L->err)) ||
        (st = cfg_int(path, root, k->n_heads, true, 0, 1, 65536, &c->n_heads, L->err)) ||
        (k->d_ffn_default_mult == 0 &&
         (st = cfg_int(path, root, k->d_ffn, true, 0, 1, 1 << 20, &c->d_ffn, L->err))) ||
        (st = cfg_int(path, root, k->vocab_size, true, 0, 1, 1 << 26, &c->vocab_size, L->err)) ||
        (st = cfg_int(path, root, k->max_positions, false, k->max_positions_default, 1, 1 << 20,
                      &c->max_positions, L->err)) ||
        (st = cfg_int(path, root, k->type_vocab_size, false, k->type_vocab_size_default, 1,
                      1 << 16, &c->type_vocab_size, L->err)) ||
        (st = cfg_string(path, root, k->act, k->act_default, &act, L->err)) ||
        (st = cfg_string(path, root, k->position_type, k->position_type_default, &pos_type,
                         L->err)))
        goto done;

    /* the width of the embeddings, layer sharing, the padding id of the position rule */
    int32_t applied = c->n_layers, groups = 1, inner = 1;
    if ((st = cfg_int(path, root, k->d_embed, false, k->d_embed_default ? k->d_embed_default : c->d_model, 1, 65536,
                      &c->d_embed, L->err)) ||
        (st = cfg_int(path, root, k->n_groups, false, 1, 1, 1000, &groups, L->err)) ||
        (st = cfg_int(path, root, k->inner_layers, false, 1, 1, 1000, &inner, L->err)))
        goto done;
    if (L->fam->positions == ATN_POSITIONS_AFTER_PAD) {
        const cJSON *pad = cJSON_GetObjectItemCaseSensitive(root, k->pad_id);
        if (cJSON_IsNull(pad))
            c->pad_token_id = k->pad_id_default;
        else if ((st = cfg_int(path, root, k->pad_id, false, k->pad_id_default, 0, c->vocab_size - 1,
                               &c->pad_token_id, L->err)))
            goto done;
        if (atn_family_max_tokens(L->fam, c) < 1) {
            st = atn_error_set(L->err, ATN_E_FORMAT, "%s: \"%s\" %d leaves no position for a token: positions "
                               "start after \"%s\" %d", path, k->max_positions, c->max_positions, k->pad_id,
                               c->pad_token_id);
            goto done;
        }
    }
    if (k->sinusoidal) {
        const cJSON *sin = cJSON_GetObjectItemCaseSensitive(root, k->sinusoidal);
        if (sin && !cJSON_IsBool(sin) && !cJSON_IsNull(sin)) {
            st = atn_error_set(L->err, ATN_E_FORMAT, "%s: \"%s\" must be true or false, not %s", path,
                               k->sinusoidal, json_type_name(sin));
            goto done;
        }
        L->sinusoidal = cJSON_IsTrue(sin);
    }
    if (L->fam->tensors.inner) {
        if ((int64_t)applied * inner > 1000) {
            st = atn_error_set(L->err, ATN_E_FORMAT, "%s: \"%s\" %d x \"%s\" %d is more than 1000 layers", path,
                               k->n_layers, applied, k->inner_layers, inner);
            goto done;
        }
        c->n_layers = applied * inner;   /* every application of every inner layer is captured */
        L->applied = applied, L->groups = groups, L->inner = inner;
    }

    if (k->d_ffn_default_mult) {   /* GPT-2's n_inner: absent or null means 4 * n_embd */
        const cJSON *fi = cJSON_GetObjectItemCaseSensitive(root, k->d_ffn);
        if (fi && !cJSON_IsNull(fi)) {
            if ((st = cfg_int(path, root, k->d_ffn, true, 0, 1, 1 << 20, &c->d_ffn, L->err)))
                goto done;
        } else {
            c->d_ffn = k->d_ffn_default_mult * c->d_model;   /* d_model <= 65536: no overflow */
        }
    }
    bool scale_w = true, scale_layer = false, reorder = false;
    if ((st = cfg_bool(path, root, k->scale_attn_weights, true, &scale_w, L->err)) ||
        (st = cfg_bool(path, root, k->scale_attn_by_inverse_layer_idx, false, &scale_layer, L->err)) ||
        (st = cfg_bool(path, root, k->reorder_and_upcast_attn, false, &reorder, L->err)) ||
        (st = cfg_bool(path, root, L->fam->tensors.lm_head_w ? "tie_word_embeddings" : NULL, true,
                       &L->tie_word_embeddings, L->err)))
        goto done;
    /* reorder_and_upcast_attn changes only where fp16 would round (the scores are made in
       float32, scaled before the product): attnscope computes in float32 throughout, so
       the switch is honoured by computing what it computes */
    (void)reorder;
    L->attn_no_scale = !scale_w;
    /* BLOOM: the residual taken after the LayerNorm, and the tensor-parallel slices of
       slow_but_exact, change the numbers; attnscope runs neither */
    bool post_ln_residual = false, slow = false;
    int32_t tp = 1;
    if ((st = cfg_bool(path, root, k->residual_post_ln, false, &post_ln_residual, L->err)) ||
        (st = cfg_bool(path, root, k->slow_but_exact, false, &slow, L->err)) ||
        (st = cfg_int(path, root, k->pretraining_tp, false, 1, 1, 1 << 16, &tp, L->err)))
        goto done;
    if (post_ln_residual) {
        st = atn_error_set(L->err, ATN_E_UNSUPPORTED, "%s: \"%s\" is true; attnscope runs the residual taken "
                           "before the LayerNorm only", path, k->residual_post_ln);
        goto done;
    }
    if (slow && tp > 1) {
        st = atn_error_set(L->err, ATN_E_UNSUPPORTED, "%s: \"%s\" is true with \"%s\" %d; attnscope runs the "
                           "plain dense products only", path, k->slow_but_exact, k->pretraining_tp, tp);
        goto done;
    }
    L->attn_scale_by_layer = scale_layer;
    if (strcmp(pos_type, "absolute") != 0) {
        st = atn_error_set(L->err, ATN_E_UNSUPPORTED, "%s: \"%s\" is \"%.64s\"; only "
                           "\"absolute\" is supported", path, k->position_type, pos_type);
        goto done;
    }
    /* "is_decoder": true makes transformers' BertModel apply a causal mask (each token sees
     * only those before it); running it bidirectionally would show attention it never uses */
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(root, "is_decoder");
    if (dec && !cJSON_IsBool(dec) && !cJSON_IsNull(dec)) {
        st = atn_error_set(L->err, ATN_E_FORMAT, "%s: \"is_decoder\" must be true or false, not %s", path,
                           json_type_name(dec));
        goto done;
    }
    if (cJSON_IsTrue(dec) && !L->fam->causal) {
        st = atn_error_set(L->err, ATN_E_UNSUPPORTED, "%s: \"is_decoder\" is true: this %s model would use a "
                           "causal mask, which attnscope does not apply to it; set it to false to look at the "
                           "encoder", path, L->fam->name);
        goto done;
    }
    if (strcmp(act, "gelu") == 0)
        c->act = ATN_ACT_GELU;
    else if (strcmp(act, "gelu_new") == 0 || strcmp(act, "gelu_pytorch_tanh") == 0)
        c->act = ATN_ACT_GELU_TANH;
    else if (strcmp(act, "relu") == 0)
        c->act = ATN_ACT_RELU;
    else if (L->fam->rotary && (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0))
        c->act = ATN_ACT_SILU;   /* the reference ops only: rotary decoders never take the packed ones */
    else if (L->fam->rotary) {
        st = atn_error_set(L->err, ATN_E_UNSUPPORTED, "%s: \"%s\" is \"%.64s\"; supported: "
                           "silu, gelu, gelu_new, gelu_pytorch_tanh, relu", path, k->act, act);
        goto done;
    } else {
        st = atn_error_set(L->err, ATN_E_UNSUPPORTED, "%s: \"%s\" is \"%.64s\"; supported: "
                           "gelu, gelu_new, gelu_pytorch_tanh, relu", path, k->act, act);
        goto done;
    }

    const cJSON *eps = k->ln_eps ? cJSON_GetObjectItemCaseSensitive(root, k->ln_eps) : NULL;
    c->ln_eps = k->ln_eps_default;
    if (eps) {
        if (!cJSON_IsNumber(eps)) {
            st = atn_error_set(L->err, ATN_E_FORMAT, "%s: \"%s\" must be a number, not %s", path,
                               k->ln_eps, json_type_name(eps));
            goto done;
        }
        if (!(eps->valuedouble > 0 && eps->valuedouble < 1)) {
            st = atn_error_set(L->err, ATN_E_FORMAT, "%s: \"%s\" is %g; expected a small "
                               "positive number", path, k->ln_eps, eps->valuedouble);
            goto done;
        }
        c->ln_eps = (float)eps->valuedouble;
    }
    if (c->d_model % c->n_heads != 0 && !L->fam->encdec) {   /* T5's d_kv is its own key */
        st = atn_error_set(L->err, ATN_E_FORMAT, "%s: \"%s\" %d is not a multiple of \"%s\" %d",
                           path, k->d_model, c->d_model, k->n_heads, c->n_heads);
        goto done;
    }
    c->d_head = c->d_model / c->n_heads;
    c->use_bias = c->use_layernorm = c->use_ffn = c->use_residual = c->use_embeddings = true;
    /* T5's heads are d_kv wide whatever d_model is (mT5-small: 6 x 64 over 512): the widths
       are checked without them, then read */
    atn_config plain = *c;
    if (L->fam->encdec)
        plain.n_heads = 1, plain.d_head = plain.d_model;
    if ((st = atn_config_validate(&plain, L->err)) != ATN_OK)
        atn_error_prefix(L->err, "%s", path);
    if (st == ATN_OK && L->fam->encdec)
        st = atn_hf_encdec_config(path, root, L->fam, c, &L->encdec, L->err);
    /* a rotary decoder: grouped K/V heads, head_dim (after the check of d_model / heads, which
       it may leave), the rotation, biases, window, and its own tie_word_embeddings default */
    if (st == ATN_OK && L->fam->rotary && (st = atn_hf_rotary_config(path, root, L->fam, c, &L->rot, L->err)) == ATN_OK)
        L->tie_word_embeddings = L->rot.tie_word_embeddings;
    /* Gemma 2 / 3: the score scale, soft-caps, sliding layers, Gemma 3's local base */
    if (st == ATN_OK && L->fam->gemma)
        st = atn_hf_gemma_config(path, root, L->fam, c, &L->rot, L->err);
    /* ModernBERT: two bases, global and local layers, the window, the biases */
    if (st == ATN_OK && L->fam->rotary_encoder && (st = atn_hf_modernbert_config(path, root, c, &L->rot, L->err)) == ATN_OK)
        L->tie_word_embeddings = L->rot.tie_word_embeddings;
    /* DeBERTa-v2/v3: the disentangled attention, the embeddings' options */
    if (st == ATN_OK && L->fam->disentangled)
        st = atn_hf_deberta_config(path, root, c, &L->deb, &L->deb_no_types, L->err);
done:
    cJSON_Delete(root);
    return st;
}

/* ---- weight files ----------------------------------------------------------- */

static bool shard_name_ok(const char *s) {
    size_t n = strlen(s);
    return n > 0 && n < 256 && !strchr(s, '/') && !strchr(s, '\\') && strcmp(s, ".") != 0 &&
           strcmp(s, "..") != 0;
}

static atn_status add_file(hf_loader *L, const char *name) {
    char path[HF_PATH_MAX];
    atn_status st = join(L, path, name);
    if (st != ATN_OK)
        return st;
    int32_t i = L->n_files;
    atn_st_file **files = realloc(L->files, (size_t)(i + 1) * sizeof *files);
    if (files)
        L->files = files;
    char **names = realloc(L->file_names, (size_t)(i + 1) * sizeof *names);
    if (names)
        L->file_names = names;
    bool *in_place = realloc(L->in_place, (size_t)(i + 1) * sizeof *in_place);
    if (in_place)
        L->in_place = in_place;
    if (!files || !names || !in_place || !(L->file_names[i] = strdup(name)))
        return atn_error_set(L->err, ATN_E_NOMEM, "%s: out of memory", path);
    L->files[i] = NULL;
    L->in_place[i] = false;
    L->n_files++;
    size_t n = strlen(name);
    if (n >= 4 && strcmp(name + n - 4, ".bin") == 0)
        return atn_torch_open(path, &L->files[i], L->err);
    return atn_st_open(path, &L->files[i], L->err);
}

static atn_status open_weights(hf_loader *L) {
    static const char *const singles[] = {"model.safetensors", "pytorch_model.bin"};
    static const char *const indexes[] = {"model.safetensors.index.json",
                                          "pytorch_model.bin.index.json"};
    atn_status st;
    char path[HF_PATH_MAX];
    bool found = false;
    if (L->mem_weights) {   /* atn_hf_open_memory: its file is the folder's model.safetensors */
        if ((st = join(L, L->weights_path, "model.safetensors")) != ATN_OK)
            return st;
        L->files = calloc(1, sizeof *L->files);
        L->file_names = calloc(1, sizeof *L->file_names);
        L->in_place = calloc(1, sizeof *L->in_place);
        if (!L->files || !L->file_names || !L->in_place || !(L->file_names[0] = strdup("model.safetensors")))
            return atn_error_set(L->err, ATN_E_NOMEM, "out of memory");
        L->files[0] = L->mem_weights;
        L->mem_weights = NULL;
        L->n_files = 1;
        return ATN_OK;
    }
    /* safetensors first (one file, then shards), then the same for pytorch_model.bin */
    for (int kind = 0; kind < 2 && !found; kind++) {
        if ((st = join(L, path, singles[kind])) != ATN_OK ||
            (st = probe(L, path, &found)) != ATN_OK)
            return st;
        if (found) {
            snprintf(L->weights_path, sizeof L->weights_path, "%s", path);
            return add_file(L, singles[kind]);
        }
        if ((st = join(L, path, indexes[kind])) != ATN_OK ||
            (st = probe(L, path, &found)) != ATN_OK)
            return st;
    }
    if (!found)
        return atn_error_set(L->err, ATN_E_IO, "%s: no weights: none of model.safetensors, "
                             "model.safetensors.index.json, pytorch_model.bin, "
                             "pytorch_model.bin.index.json", L->folder);
    snprintf(L->weights_path, sizeof L->weights_path, "%s", path);
    if ((st = atn_json_read_object(path, HF_INDEX_MAX, &L->index, L->err)) != ATN_OK)
        return st;
    L->weight_map = cJSON_GetObjectItemCaseSensitive(L->index, "weight_map");
    if (!cJSON_IsObject(L->weight_map))
        return atn_error_set(L->err, ATN_E_FORMAT, "%s: \"weight_map\" %s", path,
                             L->weight_map ? "is not an object" : "is missing");
    /* one pass over the index, hashed both ways (a 300k-name index opens in well under a
       second): tensor name -> file, shard name -> file; progress from 0.02 to 0.1 */
    size_t n_entries = 0;
    for (const cJSON *e = L->weight_map->child; e; e = e->next)
        n_entries++;
    if (!atn_name_map_init(&L->by_tensor, n_entries) || !atn_name_map_init(&L->by_file, 16))
        return atn_error_set(L->err, ATN_E_NOMEM, "%s: out of memory indexing %zu tensor names",
                             path, n_entries);
    size_t done = 0;
    for (const cJSON *e = L->weight_map->child; e; e = e->next, done++) {
        if (done % 4096 == 0 && !report(L, 0.02 + 0.08 * (double)done / (double)n_entries,
                                        ATN_STAGE_MAP_WEIGHTS))
            return cancelled(L);
        if (!cJSON_IsString(e))
            return atn_error_set(L->err, ATN_E_FORMAT, "%s: weight_map[\"%s\"] must be a file "
                                 "name string, not %s", path, e->string, json_type_name(e));
        if (!shard_name_ok(e->valuestring))
            return atn_error_set(L->err, ATN_E_FORMAT, "%s: weight_map[\"%s\"] = \"%.100s\" is not "
                                 "a plain file name in the model folder", path, e->string,
                                 e->valuestring);
        int32_t which = atn_name_map_get(&L->by_file, e->valuestring);
        if (which < 0) {
            if (L->n_files >= HF_MAX_SHARDS)
                return atn_error_set(L->err, ATN_E_FORMAT, "%s: more than %d shard files", path,
                                     HF_MAX_SHARDS);
            which = L->n_files;
            if ((st = add_file(L, e->valuestring)) != ATN_OK)
                return atn_error_prefix(L->err, "shard listed in %s", path);
            if (atn_name_map_put(&L->by_file, L->file_names[which], which, false, NULL) < 0)
                return atn_error_set(L->err, ATN_E_NOMEM, "%s: out of memory", path);
        }
        /* the parser kept the last of duplicate names, so each name comes once */
        if (atn_name_map_put(&L->by_tensor, e->string ? e->string : "", which, true, NULL) < 0)
            return atn_error_set(L->err, ATN_E_NOMEM, "%s: out of memory", path);
    }
    if (L->n_files == 0)
        return atn_error_set(L->err, ATN_E_FORMAT, "%s: \"weight_map\" is empty", path);
    return ATN_OK;
}

/* Finds a tensor by its full name; *file gets the index of the file holding it. */
static const atn_st_tensor *find_tensor(hf_loader *L, const char *name, int32_t *file) {
    int32_t which = 0;
    if (L->weight_map && (which = atn_name_map_get(&L->by_tensor, name)) < 0)
        return NULL;
    *file = which;
    return atn_st_find(L->files[which], name);
}

static bool has_tensor(hf_loader *L, const char *name) {
    int32_t f;
    return find_tensor(L, name, &f) != NULL;
}

/* ---- tensors ---------------------------------------------------------------- */

/* The family's name prefix this checkpoint uses: the first whose word embeddings are
 * there, else the last one listed (so a missing tensor is named without a prefix). */
static const char *choose_prefix(hf_loader *L) {
    const atn_family_tensors *T = &L->fam->tensors;
    const char *last = "";
    for (const char *const *p = T->prefixes; *p; p++) {
        char name[600];
        snprintf(name, sizeof name, "%s%s", *p, T->word_emb);
        if (has_tensor(L, name))
            return *p;
        last = *p;
    }
    return last;
}

/* How one tensor is bound (want_slice): its stored shape [d0] or [d0, d1] (d1 < 0: 1-D),
 * and what of it the engine takes: all of it as stored, or (GPT-2's Conv1D [in, out] and
 * fused c_attn) columns [col0, col0 + cols) transposed into [cols, d0], or elements
 * [col0, col0 + cols) of a 1-D tensor. */
typedef struct hf_bind {
    int64_t d0, d1;
    bool transpose;
    int64_t col0, cols;   /* cols 0: every column / element */
    /* period > 0 (not transposed): rows (elements of a 1-D tensor) whose index modulo period
       is in [col0, col0 + cols), in order (BLOOM's per-head query_key_value) */
    int64_t period;
} hf_bind;

static atn_status want_slice(hf_loader *L, const float **dst, bool optional, const char *prefix, hf_bind b,
                             const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static atn_status vwant(hf_loader *L, const float **dst, bool optional, const char *prefix, hf_bind b,
                        const char *fmt, va_list ap) {
    char base[512], name[600], legacy[600];
    vsnprintf(base, sizeof base, fmt, ap);
    snprintf(name, sizeof name, "%s%s", prefix, base);
    int64_t d0 = b.d0, d1 = b.d1;

    int32_t file = 0;
    const atn_st_tensor *t = find_tensor(L, name, &file);
    size_t n = strlen(name);
    bool legacy_ok = L->fam->tensors.legacy_layernorm;
    if (!t && legacy_ok && n > 16 && strcmp(name + n - 16, "LayerNorm.weight") == 0) {
        snprintf(legacy, sizeof legacy, "%.*sLayerNorm.gamma", (int)(n - 16), name);
        t = find_tensor(L, legacy, &file);
    } else if (!t && legacy_ok && n > 14 && strcmp(name + n - 14, "LayerNorm.bias") == 0) {
        snprintf(legacy, sizeof legacy, "%.*sLayerNorm.beta", (int)(n - 14), name);
        t = find_tensor(L, legacy, &file);
    }

    int ndim = d1 < 0 ? 1 : 2;
    int64_t want_shape[2] = {d0, d1};
    char ws[64], gs[256];
    atn_st_shape_str(want_shape, ndim, ws, sizeof ws);
    *dst = NULL;
    if (!t) {
        if (optional)
            return ATN_OK;
        int32_t listed = L->weight_map ? atn_name_map_get(&L->by_tensor, name) : -1;
        if (listed >= 0)
            return atn_error_set(L->err, ATN_E_SHAPE, "%s: lists tensor '%s' in %s, but that "
                                 "file has no such tensor (expected shape %s)", L->weights_path,
                                 name, L->file_names[listed], ws);
        return atn_error_set(L->err, ATN_E_SHAPE, "%s: missing tensor '%s' (expected shape %s)",
                             L->weights_path, name, ws);
    }
    const char *where = atn_st_path(L->files[file]);
    bool same = t->ndim == ndim && t->shape[0] == d0 && (ndim == 1 || t->shape[1] == d1);
    if (!same)
        return atn_error_set(L->err, ATN_E_SHAPE, "%s: tensor '%s' has shape %s, expected %s "
                             "(from config.json)", where, t->name,
                             atn_st_shape_str(t->shape, t->ndim, gs, sizeof gs), ws);
    if (t->dtype != ATN_ST_F32 && t->dtype != ATN_ST_F16 && t->dtype != ATN_ST_BF16)
        return atn_error_set(L->err, ATN_E_UNSUPPORTED, "%s: tensor '%s' has unsupported dtype "
                             "%s (F32, F16 and BF16 are supported)", where, t->name,
                             atn_st_dtype_name(t->dtype));
    /* a strided or broadcast .bin tensor is copied now that a layer reads it, within what is
       left of the memory budget (torch-bin.h) */
    if (!t->data && t->view) {
        if (!L->view_budget) {
            atn_memlimit ml;
            atn_memlimit_probe(NULL, NULL, &ml);
            L->view_budget = ml.bytes ? ml.bytes : 1;
        }
        uint64_t left = L->view_budget > L->view_bytes ? L->view_budget - L->view_bytes : 1;
        atn_status st = atn_st_materialise(L->files[file], t, left, L->err);
        if (st != ATN_OK)
            return st;
        L->view_bytes += t->nbytes;
    }
    if (t->dtype == ATN_ST_F32 && t->file_offset % sizeof(float) == 0 && !b.transpose && !b.period) {
        /* the mapping is page-aligned, so the pointer is 4-aligned */
        *dst = (const float *)t->data + (ndim == 1 && b.cols ? b.col0 : 0);
        L->in_place[file] = true;
        return ATN_OK;
    }
    if (L->n_todo == L->cap_todo) {
        int32_t cap = L->cap_todo ? 2 * L->cap_todo : 64;
        hf_pending *p = realloc(L->todo, (size_t)cap * sizeof *p);
        if (!p)
            return atn_error_set(L->err, ATN_E_NOMEM, "out of memory");
        L->todo = p;
        L->cap_todo = cap;
    }
    L->todo[L->n_todo++] = (hf_pending){dst, t, b.col0, b.cols, b.transpose, b.period};
    return ATN_OK;
}

static atn_status want_slice(hf_loader *L, const float **dst, bool optional, const char *prefix, hf_bind b,
                             const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    atn_status st = vwant(L, dst, optional, prefix, b, fmt, ap);
    va_end(ap);
    return st;
}

/* Binds *dst to the tensor named (prefix +) name, of shape [d0] or [d0, d1] (d1 < 0: 1-D).
 * Legacy LayerNorm.gamma/beta names are tried when LayerNorm.weight/bias are absent and the
 * family accepts them.
 * An optional tensor that is absent leaves *dst NULL. */
static atn_status want(hf_loader *L, const float **dst, bool optional, const char *prefix,
                       int64_t d0, int64_t d1, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

static atn_status want(hf_loader *L, const float **dst, bool optional, const char *prefix,
                       int64_t d0, int64_t d1, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    atn_status st = vwant(L, dst, optional, prefix, (hf_bind){d0, d1, false, 0, 0}, fmt, ap);
    va_end(ap);
    return st;
}

/* A linear layer's weight with o outputs and i inputs: [o, i] as stored by nn.Linear, or
 * (a family whose weights are Conv1D, GPT-2) stored [i, o] and transposed at load. */
static atn_status want_linear(hf_loader *L, const float **dst, const char *prefix, int64_t o, int64_t i,
                              const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static atn_status want_linear(hf_loader *L, const float **dst, const char *prefix, int64_t o, int64_t i,
                              const char *fmt, ...) {
    bool conv1d = L->fam->tensors.weights_in_out;
    hf_bind b = conv1d ? (hf_bind){i, o, true, 0, o} : (hf_bind){o, i, false, 0, 0};
    va_list ap;
    va_start(ap, fmt);
    atn_status st = vwant(L, dst, false, prefix, b, fmt, ap);
    va_end(ap);
    return st;
}

/* DistilBERT's create_sinusoidal_embeddings, for a sinusoidal_pos_embds checkpoint that does
 * not store the table (transformers computes it at init; the checkpoints it saves carry it):
 * row p, column j = sin (j even) or cos (j odd) of p / 10000^(2 (j / 2) / dim). */
static atn_status sinusoidal_positions(hf_loader *L, const float **dst, int32_t rows, int32_t dim) {
    float *t = atn_model_alloc_floats(L->model, (size_t)rows * dim);
    if (!t)
        return atn_error_set(L->err, ATN_E_NOMEM, "out of memory");
    for (int32_t p = 0; p < rows; p++)
        for (int32_t j = 0; j < dim; j++) {
            double a = p / pow(10000.0, 2.0 * (j / 2) / dim);
            t[(size_t)p * dim + j] = (float)(j % 2 == 0 ? sin(a) : cos(a));
        }
    *dst = t;
    return ATN_OK;
}

/* A rotary decoder's layer: q [H k, d], k and v [KV k, d], o [d, H k], the RMSNorms'
 * weights (no bias), gate / up / down, Qwen3's q_norm / k_norm [k]; the biases config.json
 * asks for (attention_bias: q, k, v, o; Qwen2: q, k, v; mlp_bias: the MLP's). */
static atn_status bind_rotary_layer(hf_loader *L, atn_layer_weights *l, const char *base) {
    const atn_config *c = &L->model->cfg;
    int64_t d = c->d_model, f = c->d_ffn, dq = (int64_t)c->n_heads * c->d_head, dkv = (int64_t)c->n_kv_heads * c->d_head;
    const char *p = L->prefix;
    const atn_family_tensors *T = &L->fam->tensors;
    bool qkv_b = T->qkv_bias || L->rot.attention_bias, o_b = L->rot.attention_bias, mlp_b = L->rot.mlp_bias;
    atn_status st;
    if ((st = want(L, &l->wq, false, p, dq, d, "%s%s", base, T->wq)) ||
        (st = want(L, &l->wk, false, p, dkv, d, "%s%s", base, T->wk)) ||
        (st = want(L, &l->wv, false, p, dkv, d, "%s%s", base, T->wv)) ||
        (st = want(L, &l->wo, false, p, d, dq, "%s%s", base, T->wo)) ||
        (qkv_b && ((st = want(L, &l->bq, false, p, dq, -1, "%s%s", base, T->bq)) ||
                   (st = want(L, &l->bk, false, p, dkv, -1, "%s%s", base, T->bk)) ||
                   (st = want(L, &l->bv, false, p, dkv, -1, "%s%s", base, T->bv)))) ||
        (o_b && (st = want(L, &l->bo, false, p, d, -1, "%s%s", base, T->bo))) ||
        (st = want(L, &l->ln1_g, false, p, d, -1, "%s%s", base, T->ln1_w)) ||
        (st = want(L, &l->ln2_g, false, p, d, -1, "%s%s", base, T->ln2_w)) ||
        (st = want(L, &l->wg, false, p, f, d, "%s%s", base, T->gate_w)) ||
        (st = want(L, &l->w1, false, p, f, d, "%s%s", base, T->w1)) ||
        (st = want(L, &l->w2, false, p, d, f, "%s%s", base, T->w2)) ||
        (mlp_b && ((st = want(L, &l->bg, false, p, f, -1, "%s%s", base, T->gate_b)) ||
                   (st = want(L, &l->b1, false, p, f, -1, "%s%s", base, T->b1)) ||
                   (st = want(L, &l->b2, false, p, d, -1, "%s%s", base, T->b2)))) ||
        (T->q_norm_w && ((st = want(L, &l->q_norm_g, false, p, c->d_head, -1, "%s%s", base, T->q_norm_w)) ||
                         (st = want(L, &l->k_norm_g, false, p, c->d_head, -1, "%s%s", base, T->k_norm_w)))) ||
        (T->post_attn_ln_w && (st = want(L, &l->post_attn_g, false, p, d, -1, "%s%s", base, T->post_attn_ln_w))) ||
        (T->post_ffn_ln_w && (st = want(L, &l->post_ffn_g, false, p, d, -1, "%s%s", base, T->post_ffn_ln_w))))
        return st;
    return ATN_OK;
}

/* Gemma's embedding scale from the embeddings' stored dtype (atn_hf_gemma_embed_scale). */
static void gemma_embed_scale(hf_loader *L) {
    char name[600];
    snprintf(name, sizeof name, "%s%s", L->prefix, L->fam->tensors.word_emb);
    int32_t file = 0;
    const atn_st_tensor *t = find_tensor(L, name, &file);
    L->model->rotary.embed_scale = atn_hf_gemma_embed_scale(L->model->cfg.d_model, t ? t->dtype : ATN_ST_F32);
}

/* A ModernBERT layer: the fused Wqkv [3d, d] bound whole to wq (and its bias to bq) and Wi
 * [2f, d] to wg (bias bg), split by split_modernbert once converted; Wo, mlp.Wo; the
 * LayerNorms' gains (no bias), attn_norm absent in layer 0 (nn.Identity there); the
 * biases attention_bias / mlp_bias ask for. */
static atn_status bind_modernbert_layer(hf_loader *L, atn_layer_weights *l, const char *base) {
    const atn_config *c = &L->model->cfg;
    int64_t d = c->d_model, f = c->d_ffn;
    const char *p = L->prefix;
    const atn_family_tensors *T = &L->fam->tensors;
    bool first = strcmp(base + strlen(T->layer), "0.") == 0, att_b = L->rot.attention_bias, mlp_b = L->rot.mlp_bias;
    atn_status st;
    if ((st = want(L, &l->wq, false, p, 3 * d, d, "%s%s", base, T->qkv_w)) ||
        (st = want(L, &l->wo, false, p, d, d, "%s%s", base, T->wo)) ||
        (att_b && ((st = want(L, &l->bq, false, p, 3 * d, -1, "%s%s", base, T->qkv_b)) ||
                   (st = want(L, &l->bo, false, p, d, -1, "%s%s", base, T->bo)))) ||
        (!first && (st = want(L, &l->ln1_g, false, p, d, -1, "%s%s", base, T->ln1_w))) ||
        (st = want(L, &l->ln2_g, false, p, d, -1, "%s%s", base, T->ln2_w)) ||
        (st = want(L, &l->wg, false, p, 2 * f, d, "%s%s", base, T->w1)) ||
        (st = want(L, &l->w2, false, p, d, f, "%s%s", base, T->w2)) ||
        (mlp_b && ((st = want(L, &l->bg, false, p, 2 * f, -1, "%s%s", base, T->b1)) ||
                   (st = want(L, &l->b2, false, p, d, -1, "%s%s", base, T->b2)))))
        return st;
    return ATN_OK;
}

/* After the conversions: each ModernBERT layer's fused rows split into the walk's weights,
 * Wqkv's rows q | k | v and Wi's rows input (act applied: wg) | gate (w1). */
static void split_modernbert(hf_loader *L) {
    atn_model *m = L->model;
    if (!L->fam->rotary_encoder)
        return;
    size_t d = (size_t)m->cfg.d_model, f = (size_t)m->cfg.d_ffn;
    for (int32_t i = 0; i < m->cfg.n_layers; i++) {
        atn_layer_weights *l = &m->w.layers[i];
        l->wk = l->wq + d * d, l->wv = l->wq + 2 * d * d;
        if (l->bq)
            l->bk = l->bq + d, l->bv = l->bq + 2 * d;
        l->w1 = l->wg + f * d;
        if (l->bg)
            l->b1 = l->bg + f;
    }
}

/* After the conversions: DeBERTa's relative embeddings through their LayerNorm (norm_rel_ebd,
 * HF's get_rel_embedding) into a model-owned copy, and with share_att_key the terms'
 * projections pointed at each layer's key_proj / query_proj. */
static atn_status finish_deberta(hf_loader *L) {
    atn_model *m = L->model;
    atn_deberta *r = &m->deberta;
    if (!L->fam->disentangled)
        return ATN_OK;
    for (int32_t i = 0; r->share_att_key && i < m->cfg.n_layers; i++) {
        atn_layer_weights *l = &m->w.layers[i];
        l->wpk = l->wk, l->bpk = l->bk, l->wpq = l->wq, l->bpq = l->bq;
    }
    if (!r->relative || !r->norm_rel_ebd)
        return ATN_OK;
    size_t rows = 2 * (size_t)r->span, d = (size_t)m->cfg.d_model;
    float *normed = atn_model_alloc_floats(m, rows * d);
    if (!normed)
        return atn_error_set(L->err, ATN_E_NOMEM, "out of memory");
    atn_layernorm(normed, r->rel_emb, r->rel_ln_g, r->rel_ln_b, (int32_t)rows, (int32_t)d, m->cfg.ln_eps);
    r->rel_emb = normed;
    return ATN_OK;
}

/* One stored layer's tensors, "<prefix><base>" + each name. */
static atn_status bind_layer(hf_loader *L, atn_layer_weights *l, const char *base) {
    const atn_config *c = &L->model->cfg;
    int64_t d = c->d_model, f = c->d_ffn;
    const char *p = L->prefix;
    const atn_family_tensors *T = &L->fam->tensors;
    atn_status st;
    if (L->fam->rotary)
        return bind_rotary_layer(L, l, base);
    if (L->fam->rotary_encoder)
        return bind_modernbert_layer(L, l, base);
    if (T->qkv_w) {   /* GPT-2's fused c_attn: [d, 3d] (Conv1D), columns q | k | v */
        const float **qkv[3] = {&l->wq, &l->wk, &l->wv}, **qkv_b[3] = {&l->bq, &l->bk, &l->bv};
        int64_t k = c->d_head;
        for (int32_t s = 0; s < 3; s++) {
            /* BLOOM's query_key_value: [3d, d], rows q k v of each head in turn */
            hf_bind wb = T->qkv_per_head ? (hf_bind){3 * d, d, false, s * k, k, 3 * k}
                                         : (hf_bind){d, 3 * d, true, s * d, d, 0};
            hf_bind bb = T->qkv_per_head ? (hf_bind){3 * d, -1, false, s * k, k, 3 * k}
                                         : (hf_bind){3 * d, -1, false, s * d, d, 0};
            if ((st = want_slice(L, qkv[s], false, p, wb, "%s%s", base, T->qkv_w)) ||
                (st = want_slice(L, qkv_b[s], false, p, bb, "%s%s", base, T->qkv_b)))
                return st;
        }
        if ((st = want_linear(L, &l->wo, p, d, d, "%s%s", base, T->wo)) ||
            (st = want(L, &l->bo, false, p, d, -1, "%s%s", base, T->bo)) ||
            (st = want(L, &l->ln1_g, false, p, d, -1, "%s%s", base, T->ln1_w)) ||
            (st = want(L, &l->ln1_b, false, p, d, -1, "%s%s", base, T->ln1_b)) ||
            (st = want_linear(L, &l->w1, p, f, d, "%s%s", base, T->w1)) ||
            (st = want(L, &l->b1, false, p, f, -1, "%s%s", base, T->b1)) ||
            (st = want_linear(L, &l->w2, p, d, f, "%s%s", base, T->w2)) ||
            (st = want(L, &l->b2, false, p, d, -1, "%s%s", base, T->b2)) ||
            (st = want(L, &l->ln2_g, false, p, d, -1, "%s%s", base, T->ln2_w)) ||
            (st = want(L, &l->ln2_b, false, p, d, -1, "%s%s", base, T->ln2_b)))
            return st;
        return ATN_OK;
    }
    if ((st = want(L, &l->wq, false, p, d, d, "%s%s", base, T->wq)) ||
        (st = want(L, &l->bq, false, p, d, -1, "%s%s", base, T->bq)) ||
        (st = want(L, &l->wk, false, p, d, d, "%s%s", base, T->wk)) ||
        (st = want(L, &l->bk, false, p, d, -1, "%s%s", base, T->bk)) ||
        (st = want(L, &l->wv, false, p, d, d, "%s%s", base, T->wv)) ||
        (st = want(L, &l->bv, false, p, d, -1, "%s%s", base, T->bv)) ||
        (st = want(L, &l->wo, false, p, d, d, "%s%s", base, T->wo)) ||
        (st = want(L, &l->bo, false, p, d, -1, "%s%s", base, T->bo)) ||
        (st = want(L, &l->ln1_g, false, p, d, -1, "%s%s", base, T->ln1_w)) ||
        (st = want(L, &l->ln1_b, false, p, d, -1, "%s%s", base, T->ln1_b)) ||
        (st = want(L, &l->w1, false, p, f, d, "%s%s", base, T->w1)) ||
        (st = want(L, &l->b1, false, p, f, -1, "%s%s", base, T->b1)) ||
        (st = want(L, &l->w2, false, p, d, f, "%s%s", base, T->w2)) ||
        (st = want(L, &l->b2, false, p, d, -1, "%s%s", base, T->b2)) ||
        (st = want(L, &l->ln2_g, false, p, d, -1, "%s%s", base, T->ln2_w)) ||
        (st = want(L, &l->ln2_b, false, p, d, -1, "%s%s", base, T->ln2_b)))
        return st;
    /* DeBERTa: the relative embeddings' own projections (without share_att_key; the
       layer's key_proj / query_proj are pointed at after the conversions otherwise) */
    const atn_deberta *r = &L->deb;
    if (L->fam->disentangled && r->relative && !r->share_att_key &&
        ((r->c2p && ((st = want(L, &l->wpk, false, p, d, d, "%sattention.self.pos_key_proj.weight", base)) ||
                     (st = want(L, &l->bpk, false, p, d, -1, "%sattention.self.pos_key_proj.bias", base)))) ||
         (r->p2c && ((st = want(L, &l->wpq, false, p, d, d, "%sattention.self.pos_query_proj.weight", base)) ||
                     (st = want(L, &l->bpq, false, p, d, -1, "%sattention.self.pos_query_proj.bias", base))))))
        return st;
    return ATN_OK;
}

/* atn_hf_binder's calls (engine/formats/hf-encdec.h) */
static atn_status binder_want(void *loader, const float **dst, bool optional, int64_t d0, int64_t d1,
                              const char *name) {
    return want(loader, dst, optional, "", d0, d1, "%s", name);
}
static bool binder_has(void *loader, const char *name) { return has_tensor(loader, name); }

static atn_status bind_weights(hf_loader *L) {
    const atn_config *c = &L->model->cfg;
    if (L->fam->encdec) {
        atn_hf_binder b = {L, binder_want, binder_has};
        return atn_hf_encdec_bind(&b, L->model, &L->encdec, L->err);
    }
    atn_weights *w = &L->model->w;
    int64_t d = c->d_model, V = c->vocab_size, E = atn_d_embed(c);
    const char *p = L->prefix;
    const atn_family_tensors *T = &L->fam->tensors;
    atn_status st;

    char pos_name[600];
    snprintf(pos_name, sizeof pos_name, "%s%s", p, T->pos_emb ? T->pos_emb : "");
    bool computed_pos = L->sinusoidal && !has_tensor(L, pos_name);
    if ((st = want(L, &w->word_emb, false, p, V, E, "%s", T->word_emb)) ||
        (computed_pos ? (st = sinusoidal_positions(L, &w->pos_emb, c->max_positions, (int32_t)E))
                      : T->pos_emb   /* rotary families have no position table, DeBERTa-v3 none either */
                            && !(L->fam->disentangled && !L->deb.position_biased_input)
                            && (st = want(L, &w->pos_emb, false, p, c->max_positions, E, "%s", T->pos_emb))) ||
        (L->fam->token_types && !L->deb_no_types &&
         (st = want(L, &w->type_emb, false, p, c->type_vocab_size, E, "%s", T->type_emb))) ||
        (T->emb_ln_w && (st = want(L, &w->emb_ln_g, false, p, E, -1, "%s", T->emb_ln_w))) ||
        (T->emb_ln_b && (st = want(L, &w->emb_ln_b, false, p, E, -1, "%s", T->emb_ln_b))) ||
        (T->final_ln_w && (st = want(L, &w->final_ln_g, false, p, d, -1, "%s", T->final_ln_w))) ||
        (T->final_ln_b && (st = want(L, &w->final_ln_b, false, p, d, -1, "%s", T->final_ln_b))) ||
        (T->lm_head_w && !L->tie_word_embeddings &&
         (st = want(L, &w->lm_head_w, false, "", V, d, "%s", T->lm_head_w))))
        return st;
    bool proj = false;
    if (T->emb_proj_w) {
        /* required when the widths differ; ALBERT stores it even when they do not (F16
           tensors are bound later, so presence is asked of the file, not of *dst) */
        char proj_name[600];
        snprintf(proj_name, sizeof proj_name, "%s%s", p, T->emb_proj_w);
        proj = E != d || has_tensor(L, proj_name);
        if (proj && ((st = want(L, &w->emb_proj_w, false, p, d, E, "%s", T->emb_proj_w)) ||
                     (st = want(L, &w->emb_proj_b, false, p, d, -1, "%s", T->emb_proj_b))))
            return st;
    }
    if (E != d && !proj)
        return atn_error_set(L->err, ATN_E_UNSUPPORTED, "%s: embedding width %lld differs from hidden_size %lld, "
                             "and %s models have no projection between them", L->weights_path, (long long)E,
                             (long long)d, L->fam->name);

    w->layers = calloc((size_t)c->n_layers, sizeof *w->layers);
    if (!w->layers)
        return atn_error_set(L->err, ATN_E_NOMEM, "out of memory");
    char base[300];
    if (T->inner) {
        /* ALBERT: bind each stored layer once (the groups x inner layers the checkpoint has),
           then point every captured layer at the one it runs */
        int32_t stored = L->groups * L->inner;
        atn_layer_weights *s = calloc((size_t)stored, sizeof *s);
        bool *used = calloc((size_t)stored, sizeof *used);
        if (!s || !used) {
            free(s);
            free(used);
            return atn_error_set(L->err, ATN_E_NOMEM, "out of memory");
        }
        for (int32_t l = 0; l < c->n_layers; l++) {
            int32_t g, j;
            atn_family_layer_source(l, L->applied, L->groups, L->inner, &g, &j);
            used[g * L->inner + j] = true;
        }
        st = ATN_OK;
        for (int32_t g = 0; g < L->groups && st == ATN_OK; g++)
            for (int32_t j = 0; j < L->inner && st == ATN_OK; j++) {
                if (!used[g * L->inner + j])
                    continue;   /* a group no layer reaches (num_hidden_groups > num_hidden_layers) */
                snprintf(base, sizeof base, "%s%d%s%d.", T->layer, g, T->inner, j);
                st = bind_layer(L, &s[g * L->inner + j], base);
            }
        /* the pending conversions write into s: share_layers copies it after them */
        if (st == ATN_OK) {
            L->stored = s;
            L->n_stored = stored;
        } else {
            free(s);
        }
        free(used);
        if (st)
            return st;
    } else {
        for (int32_t i = 0; i < c->n_layers; i++) {
            snprintf(base, sizeof base, "%s%d.", T->layer, i);
            if ((st = bind_layer(L, &w->layers[i], base)))
                return st;
        }
    }

    /* The masked-LM head (BERT: of BertForMaskedLM / BertForPreTraining).  When its
       transform is present the rest must be too; the decoder weight is usually tied to the
       word embeddings and then not stored.  Its dense maps d to E (ALBERT, ELECTRA). */
    const atn_family_mlm *H = &L->fam->mlm;
    if (L->fam->disentangled) {
        /* DeBERTa: encoder.rel_embeddings [2 span, d] and its LayerNorm (norm_rel_ebd) */
        atn_deberta *r = &L->model->deberta;
        if (r->relative &&
            ((st = want(L, &r->rel_emb, false, p, 2 * (int64_t)r->span, d, "encoder.rel_embeddings.weight")) ||
             (r->norm_rel_ebd && ((st = want(L, &r->rel_ln_g, false, p, d, -1, "encoder.LayerNorm.weight")) ||
                                  (st = want(L, &r->rel_ln_b, false, p, d, -1, "encoder.LayerNorm.bias"))))))
            return st;
        /* DebertaV2ForMaskedLM without legacy: lm_predictions.lm_head (dense, LayerNorm, bias; the
           decoder tied to the word embeddings); with it, cls.predictions (the family's names) */
        if (has_tensor(L, "lm_predictions.lm_head.dense.weight")) {
            if ((st = want(L, &w->mlm_dense_w, false, "", d, d, "lm_predictions.lm_head.dense.weight")) ||
                (st = want(L, &w->mlm_dense_b, false, "", d, -1, "lm_predictions.lm_head.dense.bias")) ||
                (st = want(L, &w->mlm_ln_g, false, "", d, -1, "lm_predictions.lm_head.LayerNorm.weight")) ||
                (st = want(L, &w->mlm_ln_b, false, "", d, -1, "lm_predictions.lm_head.LayerNorm.bias")) ||
                (st = want(L, &w->mlm_decoder_b, false, "", V, -1, "lm_predictions.lm_head.bias")))
                return st;
            return ATN_OK;
        }
    }
    if (L->fam->rotary_encoder && has_tensor(L, H->dense_w)) {
        /* ModernBERT's head: the biases its config asks for, the decoder tied unless
           tie_word_embeddings is false, no norm bias (norm_bias false) */
        if ((st = want(L, &w->mlm_dense_w, false, "", d, d, "%s", H->dense_w)) ||
            (L->rot.classifier_bias && (st = want(L, &w->mlm_dense_b, false, "", d, -1, "%s", H->dense_b))) ||
            (st = want(L, &w->mlm_ln_g, false, "", d, -1, "%s", H->ln_w)) ||
            (!L->tie_word_embeddings && (st = want(L, &w->mlm_decoder_w, false, "", V, d, "%s", H->decoder_w))) ||
            (L->rot.decoder_bias && (st = want(L, &w->mlm_decoder_b, false, "", V, -1, "%s", H->bias[0]))))
            return st;
        return ATN_OK;
    }
    if (H->dense_w && has_tensor(L, H->dense_w)) {
        if ((st = want(L, &w->mlm_dense_w, false, "", E, d, "%s", H->dense_w)) ||
            (st = want(L, &w->mlm_dense_b, false, "", E, -1, "%s", H->dense_b)) ||
            (st = want(L, &w->mlm_ln_g, false, "", E, -1, "%s", H->ln_w)) ||
            (st = want(L, &w->mlm_ln_b, false, "", E, -1, "%s", H->ln_b)) ||
            (st = want(L, &w->mlm_decoder_w, true, "", V, E, "%s", H->decoder_w)))
            return st;
        const char *bias = H->bias[1] && !has_tensor(L, H->bias[0]) ? H->bias[1] : H->bias[0];
        if ((st = want(L, &w->mlm_decoder_b, false, "", V, -1, "%s", bias)))
            return st;
    }
    return ATN_OK;
}

/* ALBERT: every captured layer gets the pointers of the stored layer it runs (after the
 * conversions, which write into the stored copies). */
static void share_layers(hf_loader *L) {
    atn_model *m = L->model;
    if (!L->stored)
        return;
    for (int32_t l = 0; l < m->cfg.n_layers; l++) {
        int32_t g, j;
        atn_family_layer_source(l, L->applied, L->groups, L->inner, &g, &j);
        m->w.layers[l] = L->stored[g * L->inner + j];
    }
    m->layer_groups = L->groups, m->layer_inner = L->inner, m->layer_applied = L->applied;
}

/* Converts the pending tensors into one model-owned block, reporting progress. */
static atn_status convert_pending(hf_loader *L) {
    uint64_t total = 0, biggest = 0;
    for (int32_t i = 0; i < L->n_todo; i++) {
        const hf_pending *q = &L->todo[i];
        uint64_t rows = q->t->ndim == 2 ? (uint64_t)q->t->shape[0] : 1;
        total += q->period ? q->t->count / (uint64_t)q->period * (uint64_t)q->cols
                 : q->cols ? (uint64_t)q->cols * rows : q->t->count;
        if (q->cols && q->t->count > biggest)
            biggest = q->t->count;
    }
    if (total == 0)
        return ATN_OK;
    if (total > SIZE_MAX / sizeof(float))
        return atn_error_set(L->err, ATN_E_NOMEM, "%s: weights too large", L->weights_path);
    float *block = atn_model_alloc_floats(L->model, (size_t)total);
    if (!block)
        return atn_error_set(L->err, ATN_E_NOMEM, "%s: out of memory converting %llu weights "
                             "to float32", L->weights_path, (unsigned long long)total);
    /* slices (GPT-2's transposed Conv1D weights, the thirds of c_attn) are cut from the
       whole tensor in float32, converted here first */
    float *whole = biggest ? malloc((size_t)biggest * sizeof(float)) : NULL;
    if (biggest && !whole)
        return atn_error_set(L->err, ATN_E_NOMEM, "%s: out of memory converting weights", L->weights_path);
    uint64_t done = 0;
    for (int32_t i = 0; i < L->n_todo; i++) {
        const hf_pending *q = &L->todo[i];
        const atn_st_tensor *t = q->t;
        if (!report(L, 0.1 + 0.8 * (double)done / (double)total, ATN_STAGE_CONVERT_WEIGHTS)) {
            free(whole);
            return cancelled(L);
        }
        float *out = block + done;
        float *conv = q->cols ? whole : out;
        if (t->dtype == ATN_ST_F16)
            atn_f16_to_f32_array(conv, t->data, (size_t)t->count);
        else if (t->dtype == ATN_ST_BF16)
            atn_bf16_to_f32_array(conv, t->data, (size_t)t->count);
        else
            memcpy(conv, t->data, (size_t)t->nbytes);   /* unaligned F32, or a slice's source */
        uint64_t count = t->count;
        if (q->cols && q->transpose) {   /* [R, C] columns col0.. -> [cols, R] */
            int64_t R = t->shape[0], C = t->shape[1];
            enum { TILE = 32 };   /* in tiles: both sides stay in cache (gpt2: 85M floats) */
            for (int64_t o0 = 0; o0 < q->cols; o0 += TILE)
                for (int64_t r0 = 0; r0 < R; r0 += TILE)
                    for (int64_t o = o0; o < o0 + TILE && o < q->cols; o++)
                        for (int64_t r = r0; r < r0 + TILE && r < R; r++)
                            out[o * R + r] = whole[r * C + q->col0 + o];
            count = (uint64_t)q->cols * (uint64_t)R;
        } else if (q->period) {   /* rows col0.. of every period, each C wide */
            int64_t C = t->ndim == 2 ? t->shape[1] : 1, groups = t->shape[0] / q->period;
            for (int64_t g = 0; g < groups; g++)
                memcpy(out + g * q->cols * C, whole + (g * q->period + q->col0) * C,
                       (size_t)(q->cols * C) * sizeof(float));
            count = (uint64_t)(groups * q->cols * C);
        } else if (q->cols) {
            memcpy(out, whole + q->col0, (size_t)q->cols * sizeof(float));
            count = (uint64_t)q->cols;
        }
        *q->dst = out;
        done += count;
        /* a slice's source (GPT-2's c_attn thirds) is counted for its share */
        L->model->converted_from_bytes += q->cols ? (uint64_t)t->nbytes * count / t->count : (uint64_t)t->nbytes;
    }
    L->model->converted_bytes = done * sizeof(float);
    free(whole);
    return ATN_OK;
}

/* Hands the mappings that tensors point into over to the model; closes the rest. */
static atn_status keep_mappings(hf_loader *L) {
    for (int32_t i = 0; i < L->n_files; i++) {
        if (L->in_place[i]) {
            void *ptr;
            size_t len;
            bool of_file;
            /* the file's own mapping is checked and guarded as the file; the anonymous block
               of a copied view (torch-bin.c) is memory like any other, whose pages must
               never be given back (atn_model_release_file_pages) */
            while (atn_st_detach_map(L->files[i], &ptr, &len, &of_file))
                if (!(of_file ? atn_model_own_file(L->model, ptr, len, atn_st_path(L->files[i]))
                              : atn_model_own(L->model, ptr, len, true)))
                    return atn_error_set(L->err, ATN_E_NOMEM, "out of memory");
        }
        atn_st_close(L->files[i]);
        L->files[i] = NULL;
    }
    return ATN_OK;
}

/* ---- tokenizer -------------------------------------------------------------- */

/* The folder's tokenizer by the one rule of engine/tokenize/tok-folder.h (tokenizer.json, else
 * vocab.json + merges.txt, else the family's own file refused by name, else vocab.txt as
 * WordPiece), no larger than the embedding. */
static atn_status load_tokenizer(hf_loader *L) {
    const char *source = NULL;
    L->model->tokenizer = atn_tokenizer_open_folder(L->folder, L->fam, NULL, &source, L->err);
    if (!L->model->tokenizer)
        return L->err ? L->err->status : ATN_E_FORMAT;
    int32_t nt = atn_tokenizer_vocab_size(L->model->tokenizer);
    if (nt > L->model->cfg.vocab_size)
        return atn_error_set(L->err, ATN_E_SHAPE, "%s/%s: %d entries, but config.json says "
                             "vocab_size %d", L->folder, source, nt, L->model->cfg.vocab_size);
    return ATN_OK;
}

/* ---- opening ---------------------------------------------------------------- */

static void loader_clear(hf_loader *L) {
    for (int32_t i = 0; i < L->n_files; i++) {
        atn_st_close(L->files[i]);
        free(L->file_names[i]);
    }
    atn_st_close(L->mem_weights);
    free(L->files);
    free(L->file_names);
    free(L->in_place);
    free(L->todo);
    free(L->stored);
    atn_name_map_clear(&L->by_tensor);
    atn_name_map_clear(&L->by_file);
    cJSON_Delete(L->index);
}

static atn_status open_hf(hf_loader *L) {
    atn_status st;
    atn_config cfg;
    if (!report(L, 0.0, ATN_STAGE_READ_CONFIG))
        return cancelled(L);
    if ((st = read_config(L, &cfg)) != ATN_OK)
        return st;

    const char *slash = strrchr(L->folder, '/');
    const char *name = slash && slash[1] ? slash + 1 : L->folder;
    L->model = atn_model_alloc(ATN_MODEL_BERT, name, L->folder);
    if (!L->model)
        return atn_error_set(L->err, ATN_E_NOMEM, "out of memory");
    L->model->cfg = cfg;
    L->model->family = L->fam;
    L->model->attn_no_scale = L->attn_no_scale;
    L->model->attn_scale_by_layer = L->attn_scale_by_layer;
    L->model->deberta = L->deb;
    if (L->fam->rotary || L->fam->rotary_encoder) {
        L->model->rotary = L->rot.rotary;
        float *f = atn_model_alloc_floats(L->model, (size_t)cfg.d_head / 2);
        if (!f)
            return atn_error_set(L->err, ATN_E_NOMEM, "out of memory");
        atn_hf_rotary_inv_freq(&L->model->rotary, cfg.d_head, f);
        L->model->rotary.inv_freq = f;
        if (L->rot.has_sliding) {   /* Gemma: which layers slide (model-owned) */
            uint8_t *sl = (uint8_t *)atn_model_alloc_floats(L->model, ((size_t)cfg.n_layers + 3) / 4);
            if (!sl)
                return atn_error_set(L->err, ATN_E_NOMEM, "out of memory");
            memcpy(sl, L->rot.sliding, (size_t)cfg.n_layers);
            L->model->rotary.local_layers = sl;
        }
        if (L->fam->rotary_encoder || (L->fam->gemma && L->rot.rotary.theta_local > 0)) {
            /* ModernBERT's local layers: local_rope_theta; Gemma 3's: rope_local_base_freq */
            atn_rotary local = L->rot.rotary;
            local.theta = local.theta_local;
            local.scaling = "none";   /* Gemma3TextModel's rotary_emb_local: rope_type default */
            float *g = atn_model_alloc_floats(L->model, (size_t)cfg.d_head / 2);
            if (!g)
                return atn_error_set(L->err, ATN_E_NOMEM, "out of memory");
            atn_hf_rotary_inv_freq(&local, cfg.d_head, g);
            L->model->rotary.inv_freq_local = g;
        }
    }

    if (!report(L, 0.02, ATN_STAGE_MAP_WEIGHTS))
        return cancelled(L);
    if ((st = open_weights(L)) != ATN_OK)
        return st;
    L->prefix = choose_prefix(L);
    if ((st = bind_weights(L)))
        return st;
    if (L->fam->gemma)   /* the embeddings' dtype, while the files are open */
        gemma_embed_scale(L);
    if ((st = convert_pending(L)) || (st = keep_mappings(L)))
        return st;
    share_layers(L);
    split_modernbert(L);
    if (L->fam->gemma && (st = atn_hf_gemma_norm_gains(L->model, L->err)))
        return st;
    if ((st = finish_deberta(L)))
        return st;
    if (L->fam->encdec && (st = atn_hf_encdec_finish(L->model, L->err)))
        return st;

    if (L->mem_config)   /* a folder in memory has no tokenizer files */
        return report(L, 1.0, ATN_STAGE_DONE) ? ATN_OK : cancelled(L);
    if (!report(L, 0.92, ATN_STAGE_READ_VOCAB))
        return cancelled(L);
    /* the vocabulary and merges loops ask progress whether to go on (core/cancel.h) */
    atn_cancel_scope scope;
    atn_cancel_enter(&scope, L->progress, L->user_data, 0.92, ATN_STAGE_READ_VOCAB);
    st = load_tokenizer(L);
    atn_cancel_leave(&scope);
    if (st != ATN_OK)
        return st;
    if (!report(L, 1.0, ATN_STAGE_DONE))
        return cancelled(L);
    return ATN_OK;
}

atn_model *atn_model_open_hf(const char *folder, atn_progress_fn progress, void *user_data,
                             atn_error *err) {
    hf_loader L = {.progress = progress, .user_data = user_data, .err = err};
    size_t n = folder ? strlen(folder) : 0;
    while (n > 1 && folder[n - 1] == '/')
        n--;
    if (n == 0) {
        atn_error_set(err, ATN_E_INVALID, "no model folder given");
        return NULL;
    }
    if (n >= HF_PATH_MAX - 64) {
        atn_error_set(err, ATN_E_INVALID, "%.200s...: path too long", folder);
        return NULL;
    }
    memcpy(L.folder, folder, n);
    L.folder[n] = '\0';
    struct stat sb;
    if (stat(L.folder, &sb) != 0) {
        atn_error_set(err, ATN_E_IO, "%s: cannot open model folder: %s", L.folder,
                      strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(sb.st_mode)) {
        atn_error_set(err, ATN_E_IO, "%s: not a folder (a Hugging Face model is a folder with "
                      "config.json, model.safetensors and vocab.txt)", L.folder);
        return NULL;
    }

    /* a sentence-transformers folder opens as its Transformer module's folder, named after
     * the folder it was asked for; a cache snapshot is named by its model id */
    char display[HF_PATH_MAX] = "";
    char inner[HF_PATH_MAX];
    if (atn_hf_transformer_folder(L.folder, inner, sizeof inner, err) != ATN_OK)
        return NULL;
    if (!atn_hf_cache_id_of_path(L.folder, display, sizeof display)) {
        const char *slash = strrchr(L.folder, '/');
        snprintf(display, sizeof display, "%s", slash && slash[1] ? slash + 1 : L.folder);
    }
    if (strcmp(inner, L.folder)) {
        if (strlen(inner) >= HF_PATH_MAX - 64) {
            atn_error_set(err, ATN_E_INVALID, "%.200s...: path too long", inner);
            return NULL;
        }
        snprintf(L.folder, sizeof L.folder, "%s", inner);
    }

    atn_status st = open_hf(&L);
    loader_clear(&L);
    if (st == ATN_OK && strcmp(display, L.model->name)) {
        char *name = strdup(display);
        if (name) {
            free(L.model->name);
            L.model->name = name;
        }
    }
    if (st != ATN_OK) {
        atn_model_free(L.model);
        return NULL;
    }
    return L.model;
}

atn_model *atn_hf_open_memory(const char *name, const cJSON *config, atn_st_file *weights, atn_error *err) {
    hf_loader L = {.err = err, .mem_config = config, .mem_weights = weights};
    if (!name || !config || !weights || strlen(name) >= HF_PATH_MAX - 64) {
        atn_st_close(weights);
        atn_error_set(err, ATN_E_INVALID, "atn_hf_open_memory: a name, a config and a weights file are needed");
        return NULL;
    }
    snprintf(L.folder, sizeof L.folder, "%s", name);
    atn_status st = open_hf(&L);
    loader_clear(&L);
    if (st != ATN_OK) {
        atn_model_free(L.model);
        return NULL;
    }
    return L.model;
}

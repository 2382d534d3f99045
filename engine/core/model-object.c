/* The atn_model object: allocation and the memory it owns, the accessors, and the check
 * of a configuration.  Used by every loader (hf-model.c, toy-model.c, random-model.c) and
 * by model.c, which opens models; nothing here calls a loader. */
#include "core/family.h"
#include "core/model-private.h"
#include "core/mapguard.h"
#include "tokenize/tokenizer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- ownership -------------------------------------------------------------- */

atn_model *atn_model_alloc(atn_model_kind kind, const char *name, const char *path) {
    atn_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->kind = kind;
    m->family = atn_family_bert();
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

static long long mtime_ns(const struct stat *st) {
    return (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

bool atn_model_own_file(atn_model *model, void *ptr, size_t len, const char *path) {
    if (!atn_model_own(model, ptr, len, true))
        return false;
    atn_model_block *b = &model->blocks[model->n_blocks - 1];
    struct stat st;
    if (path && stat(path, &st) == 0 && (b->path = strdup(path))) {
        b->dev = (unsigned long long)st.st_dev;
        b->ino = (unsigned long long)st.st_ino;
        b->size = (long long)st.st_size;
        b->mtime_ns = mtime_ns(&st);
    }
    atn_mapguard_add(ptr, len, &model->file_changed);
    return true;
}

atn_status atn_model_check_files(const atn_model *model, atn_error *err) {
    for (int32_t i = 0; i < model->n_blocks; i++) {
        const atn_model_block *b = &model->blocks[i];
        if (!b->path)
            continue;
        struct stat st;
        bool same = stat(b->path, &st) == 0 && (unsigned long long)st.st_dev == b->dev &&
                    (unsigned long long)st.st_ino == b->ino && (long long)st.st_size == b->size &&
                    mtime_ns(&st) == b->mtime_ns;
        if (!same || model->file_changed) {
            /* two whole sentences, so that each translates (atn_error_translate) */
            if (stat(b->path, &st) == 0)
                return atn_error_set(err, ATN_E_IO, "%s: the file changed while the model was open (it "
                                     "is now %lld bytes, was %lld); reopen the model", b->path,
                                     (long long)st.st_size, (long long)b->size);
            return atn_error_set(err, ATN_E_IO, "%s: the file changed while the model was open (it is "
                                 "gone); reopen the model", b->path);
        }
    }
    return ATN_OK;
}

size_t atn_model_release_file_pages(const atn_model *model, const void *ptr, size_t len) {
    uintptr_t lo = (uintptr_t)ptr, hi = lo + len;
    for (int32_t i = 0; ptr && len && i < model->n_blocks; i++) {
        const atn_model_block *b = &model->blocks[i];
        uintptr_t base = (uintptr_t)b->ptr;
        if (!b->mapped || !b->path || lo < base || hi > base + b->len)
            continue;
        /* PROT_READ and MAP_PRIVATE (safetensors.c, torch-bin.c): never written, so MADV_DONTNEED
           drops clean file pages, and the next read maps the file's page again */
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        uintptr_t a = (lo + page - 1) & ~(page - 1), e = hi & ~(page - 1);
        if (e > a && madvise((void *)a, e - a, MADV_DONTNEED) == 0)
            return e - a;
        return 0;
    }
    return 0;
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
        if (model->blocks[i].mapped) {
            atn_mapguard_remove(model->blocks[i].ptr);
            munmap(model->blocks[i].ptr, model->blocks[i].len);
        } else {
            free(model->blocks[i].ptr);
        }
        free(model->blocks[i].path);
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
bool atn_model_has_mlm_head(const atn_model *model) {
    return model->w.mlm_dense_w && model->w.mlm_decoder_b && model->w.word_emb;
}
const char *atn_model_family_name(const atn_model *model) { return model->family->name; }

bool atn_model_rotary_info(const atn_model *model, atn_rotary_info *out) {
    const atn_rotary *r = &model->rotary;
    if (!r->on)
        return false;
    *out = (atn_rotary_info){.theta = r->theta, .scaling = r->scaling ? r->scaling : "none",
                             .factor = r->factor > 0 ? r->factor : 1.0, .window = r->window, .qk_norm = r->qk_norm,
                             .global_every = r->global_every, .local_half = r->local_half,
                             .theta_local = r->theta_local, .local_layers = r->local_layers,
                             .local_window = r->local_window, .query_scale = r->query_scale,
                             .attn_softcap = r->attn_softcap, .final_softcap = r->final_softcap,
                             .embed_scale = r->embed_scale};
    return true;
}

bool atn_model_relative_info(const atn_model *model, atn_relative_info *out) {
    const atn_deberta *r = &model->deberta;
    if (!r->on)
        return false;
    *out = (atn_relative_info){.relative = r->relative, .c2p = r->c2p, .p2c = r->p2c,
                               .share_att_key = r->share_att_key, .norm_rel_ebd = r->norm_rel_ebd,
                               .absolute = r->position_biased_input, .buckets = r->buckets,
                               .max_relative = r->max_relative, .span = r->span, .scale_factor = r->scale_factor};
    return true;
}

void atn_model_converted_bytes(const atn_model *model, uint64_t *converted, uint64_t *from) {
    if (converted)
        *converted = model->converted_bytes;
    if (from)
        *from = model->converted_from_bytes;
}

int32_t atn_model_layer_weights(const atn_model *model, int32_t layer, int32_t *group, int32_t *inner) {
    int32_t L = model->cfg.n_layers;
    if (layer < 0 || layer >= L)
        return 0;
    int32_t g = layer, j = 0;
    if (model->layer_inner <= 0) {
        if (group)
            *group = g;
        if (inner)
            *inner = j;
        return 1;
    }
    atn_family_layer_source(layer, model->layer_applied, model->layer_groups, model->layer_inner, &g, &j);
    int32_t uses = 0;
    for (int32_t l = 0; l < L; l++) {
        int32_t g2, j2;
        atn_family_layer_source(l, model->layer_applied, model->layer_groups, model->layer_inner, &g2, &j2);
        uses += g2 == g && j2 == j;
    }
    if (group)
        *group = g;
    if (inner)
        *inner = j;
    return uses;
}

/* Appends "a" or "a–b" (a run of three or more) to buf at *at, with ", " before all but the
 * first; false (nothing written) when it and a closing "…" would not fit. */
static bool append_run(char *buf, size_t size, size_t *at, bool first, int32_t a, int32_t b) {
    char one[64];
    int k = b - a >= 2 ? snprintf(one, sizeof one, "%s%d\u2013%d", first ? "" : ", ", a, b)
                       : b == a + 1 ? snprintf(one, sizeof one, "%s%d, %d", first ? "" : ", ", a, b)
                                    : snprintf(one, sizeof one, "%s%d", first ? "" : ", ", a);
    if (*at + (size_t)k + sizeof ", \u2026" > size)
        return false;
    memcpy(buf + *at, one, (size_t)k + 1);
    *at += (size_t)k;
    return true;
}

int32_t atn_model_layer_sharers(const atn_model *model, int32_t layer, char *buf, size_t size) {
    if (buf && size)
        buf[0] = '\0';
    int32_t g, j, uses = atn_model_layer_weights(model, layer, &g, &j);
    if (uses == 0 || !buf || size == 0)
        return uses;
    size_t at = 0;
    bool first = true;
    int32_t start = -1, last = -2;
    for (int32_t l = 0; l <= model->cfg.n_layers; l++) {
        int32_t g2 = -1, j2 = -1;
        bool same = l < model->cfg.n_layers && atn_model_layer_weights(model, l, &g2, &j2) && g2 == g && j2 == j;
        if (same && l == last + 1) {
            last = l;
            continue;
        }
        if (start >= 0) {
            if (!append_run(buf, size, &at, first, start, last)) {
                snprintf(buf + at, size - at, "%s\u2026", first ? "" : ", ");
                return uses;
            }
            first = false;
        }
        start = same ? l : -1;
        last = same ? l : -2;
    }
    return uses;
}

bool atn_model_is_causal(const atn_model *model) { return model && model->family->causal; }

int32_t atn_model_toy_n_tokens(const atn_model *model) { return model->toy_n; }
const char *atn_model_toy_token(const atn_model *model, int32_t i) {
    return (i >= 0 && i < model->toy_n) ? model->toy_tokens[i] : NULL;
}

const char *atn_activation_name(atn_activation act) {
    switch (act) {
    case ATN_ACT_GELU: return "gelu";
    case ATN_ACT_GELU_TANH: return "gelu_tanh";
    case ATN_ACT_RELU: return "relu";
    case ATN_ACT_SILU: return "silu";
    }
    return "?";
}

atn_status atn_type_id_error(const atn_model *m, int32_t type_id, int32_t pos, atn_error *err) {
    int32_t types = m->cfg.type_vocab_size;
    if (types == 1) {
        char where[600] = "";
        if (m->path && m->path[0] && m->family && m->family->config.type_vocab_size)
            snprintf(where, sizeof where, " (\"%s\": 1 in %s/config.json)", m->family->config.type_vocab_size,
                     m->path);
        return atn_error_set(err, ATN_E_INVALID, "token type %d at position %d: model \"%s\" has one token "
                             "type%s, so sentence pairs (--text-pair, type ids other than 0) are not supported",
                             type_id, pos, m->name, where);
    }
    return atn_error_set(err, ATN_E_INVALID, "token type %d at position %d is outside 0..%d", type_id, pos,
                         types - 1);
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
        return atn_error_set(err, ATN_E_INVALID, "LayerNorm epsilon must be positive, not %g", (double)c->ln_eps);
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


bool atn_model_is_encoder_decoder(const atn_model *model) { return model && model->family->encdec; }
int32_t atn_model_decoder_layers(const atn_model *model) { return model->encdec.n_dec_layers; }
int32_t atn_model_decoder_start_id(const atn_model *model) {
    return model->family->encdec ? model->encdec.decoder_start_id : -1;
}

/* config.json of a rotary decoder (engine/formats/hf-rotary.h): the keys of LlamaConfig,
 * Qwen2Config, Qwen3Config and MistralConfig that the layer walk reads, with the defaults
 * of those classes, and the rotation's frequencies as transformers' rope initialisers
 * (modeling_rope_utils.py: _compute_default_rope_parameters, _compute_linear_scaling_rope_
 * parameters, _compute_llama3_parameters) make them.  A key whose value would change the
 * numbers in a way the walk does not compute is refused by name. */
#include "formats/hf-rotary.h"
#include "forward/precision.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A number key: absent or null gives def (*found false).  Refuses a non-number. */
static atn_status get_number(const char *path, const cJSON *obj, const char *key, double def, double *out,
                             bool *found, atn_error *err) {
    const cJSON *item = key ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    if (found)
        *found = item && !cJSON_IsNull(item);
    if (!item || cJSON_IsNull(item)) {
        *out = def;
        return ATN_OK;
    }
    if (!cJSON_IsNumber(item))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be a number", path, key);
    *out = item->valuedouble;
    return ATN_OK;
}

/* An integer key in [lo, hi]; absent or null: def. */
static atn_status get_int(const char *path, const cJSON *obj, const char *key, int32_t def, int32_t lo, int32_t hi,
                          int32_t *out, bool *found, atn_error *err) {
    double v = 0;
    bool present = false;
    atn_status st = get_number(path, obj, key, def, &v, &present, err);
    if (found)
        *found = present;
    if (st || !present) {
        *out = def;
        return st;
    }
    if (!(v >= lo && v <= hi) || v != floor(v))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" is %g; expected an integer %d..%d", path, key, v, lo, hi);
    *out = (int32_t)v;
    return ATN_OK;
}

static atn_status get_bool(const char *path, const cJSON *obj, const char *key, bool def, bool *out,
                           atn_error *err) {
    const cJSON *item = key ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    if (!item || cJSON_IsNull(item)) {
        *out = def;
        return ATN_OK;
    }
    if (!cJSON_IsBool(item))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be true or false", path, key);
    *out = cJSON_IsTrue(item);
    return ATN_OK;
}

/* rope_scaling (or transformers 5's rope_parameters): its type and factors. */
static atn_status read_scaling(const char *path, const cJSON *scaling, const char *key, atn_rotary *r,
                               atn_error *err) {
    r->scaling = "none";
    if (!scaling || cJSON_IsNull(scaling))
        return ATN_OK;
    if (!cJSON_IsObject(scaling))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be an object or null", path, key);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(scaling, "rope_type");
    if (!type)
        type = cJSON_GetObjectItemCaseSensitive(scaling, "type");
    const char *t = cJSON_IsString(type) ? type->valuestring : "default";
    if (type && !cJSON_IsString(type))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\".rope_type must be a string", path, key);
    atn_status st;
    bool found;
    if (strcmp(t, "default") == 0)
        return ATN_OK;
    if (strcmp(t, "linear") == 0 || strcmp(t, "llama3") == 0) {
        if ((st = get_number(path, scaling, "factor", 0, &r->factor, &found, err)))
            return st;
        if (!found || !(r->factor >= 1.0 && r->factor < 1e6))
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\".factor must be a number >= 1 for rope_type \"%s\"",
                                 path, key, t);
        r->scaling = strcmp(t, "linear") == 0 ? "linear" : "llama3";
        if (strcmp(t, "linear") == 0)
            return ATN_OK;
        bool f1, f2, f3;
        if ((st = get_number(path, scaling, "low_freq_factor", 0, &r->low_freq_factor, &f1, err)) ||
            (st = get_number(path, scaling, "high_freq_factor", 0, &r->high_freq_factor, &f2, err)) ||
            (st = get_int(path, scaling, "original_max_position_embeddings", 0, 1, 1 << 30,
                          &r->original_max_positions, &f3, err)))
            return st;
        if (!f1 || !f2 || !f3 || !(r->low_freq_factor > 0) || !(r->high_freq_factor > r->low_freq_factor))
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" of rope_type \"llama3\" needs low_freq_factor > 0, "
                                 "high_freq_factor > low_freq_factor and original_max_position_embeddings", path, key);
        return ATN_OK;
    }
    return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"%s\" has rope_type \"%.40s\", which attnscope does not "
                         "compute (supported: default, linear, llama3)", path, key, t);
}

/* Qwen2/Qwen3's window: layer i slides when use_sliding_window, sliding_window is set and
 * i >= max_window_layers (Qwen2Config's layer_types), or as "layer_types" lists them.  A
 * window in every layer is *window; in some layers only (Qwen2, Qwen3) out->sliding and
 * rotary.local_window, as Gemma's; Mistral's is every layer's or refused. */
static atn_status read_window(const char *path, const cJSON *root, const atn_family_config *k, int32_t layers,
                              atn_hf_rotary *out, atn_error *err) {
    atn_status st;
    bool found;
    int32_t w = 0, *window = &out->rotary.window;
    *window = 0;
    if (!k->sliding_window)
        return ATN_OK;
    if ((st = get_int(path, root, k->sliding_window, k->sliding_window_default, 1, 1 << 30, &w, &found, err)))
        return st;
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(root, k->sliding_window);
    bool window_set = !(sw && cJSON_IsNull(sw));   /* null: no window */
    /* Qwen2Config / Qwen3Config: sliding_window = sliding_window if use_sliding_window else None */
    bool use = false;
    if (k->use_sliding_window && (st = get_bool(path, root, k->use_sliding_window, false, &use, err)))
        return st;
    if (k->use_sliding_window && !use)
        window_set = false;
    int32_t sliding = 0;
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(root, "layer_types");
    if (types && !cJSON_IsNull(types)) {
        if (!cJSON_IsArray(types) || cJSON_GetArraySize(types) != layers)
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"layer_types\" must be a list of %d strings", path, layers);
        for (const cJSON *e = types->child; e; e = e->next) {
            if (!cJSON_IsString(e) || (strcmp(e->valuestring, "sliding_attention") &&
                                       strcmp(e->valuestring, "full_attention")))
                return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"layer_types\" has an entry other than "
                                     "\"full_attention\" or \"sliding_attention\"", path);
            sliding += strcmp(e->valuestring, "sliding_attention") == 0;
        }
        if (sliding && !window_set)   /* transformers' sliding mask raises without a window */
            return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"layer_types\" has sliding layers but \"%s\" is "
                                 "null%s", path, k->sliding_window,
                                 k->use_sliding_window ? " or \"use_sliding_window\" is false" : "");
    } else if (k->use_sliding_window) {
        int32_t mwl;
        if ((st = get_int(path, root, k->max_window_layers, k->max_window_layers_default, 0, 1 << 20, &mwl, NULL,
                          err)))
            return st;
        if (use && window_set)
            sliding = layers > mwl ? layers - mwl : 0;
    } else {
        sliding = window_set ? layers : 0;   /* Mistral: every layer */
    }
    if (sliding == 0)
        return ATN_OK;
    if (sliding != layers && !k->use_sliding_window)   /* MistralConfig has no layer_types */
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: the sliding window (\"%s\" %d) applies to %d of the %d "
                             "layers (\"layer_types\"); MistralConfig slides in every layer", path,
                             k->sliding_window, w, sliding, layers);
    if (sliding != layers) {   /* Qwen2 / Qwen3: the window in the sliding layers only */
        if (layers > (int32_t)sizeof out->sliding)
            return atn_error_set(err, ATN_E_FORMAT, "%s: %d layers; attnscope opens at most %d", path, layers,
                                 (int)sizeof out->sliding);
        int32_t mwl = 0, l = 0;
        if (types && !cJSON_IsNull(types))
            for (const cJSON *e = types->child; e; e = e->next, l++)
                out->sliding[l] = strcmp(e->valuestring, "sliding_attention") == 0;
        else if ((st = get_int(path, root, k->max_window_layers, k->max_window_layers_default, 0, 1 << 20, &mwl,
                               NULL, err)))
            return st;
        else
            for (l = 0; l < layers; l++)
                out->sliding[l] = l >= mwl;
        out->has_sliding = true;
        out->rotary.local_window = w;
        return ATN_OK;
    }
    *window = w;
    return ATN_OK;
}

atn_status atn_hf_rotary_config(const char *path, const cJSON *root, const atn_family *fam, atn_config *c,
                                atn_hf_rotary *out, atn_error *err) {
    const atn_family_config *k = &fam->config;
    atn_rotary *r = &out->rotary;
    atn_status st;
    bool found;
    memset(out, 0, sizeof *out);
    r->on = true;
    r->rms_norm = true;
    r->qk_norm = fam->tensors.q_norm_w != NULL;
    c->gated_ffn = true;
    /* Gemma2Config / Gemma3TextConfig default to 4 K/V heads of 256 (when 4 fits the heads) */
    int32_t kv_def = k->kv_heads_default > 0 && k->kv_heads_default <= c->n_heads ? k->kv_heads_default : c->n_heads;
    int32_t hd_def = k->head_dim_default > 0 ? k->head_dim_default : c->d_model / c->n_heads;
    if ((st = get_int(path, root, k->kv_heads, kv_def, 1, c->n_heads, &c->n_kv_heads, NULL, err)))
        return st;
    if (c->n_heads % c->n_kv_heads)
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" %d does not divide \"%s\" %d", path, k->kv_heads,
                             c->n_kv_heads, k->n_heads, c->n_heads);
    if ((st = get_int(path, root, k->head_dim, hd_def, 2, 65536, &c->d_head, NULL, err)))
        return st;
    if (c->d_head % 2)
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" %d is odd: the rotation turns pairs of values", path,
                             k->head_dim, c->d_head);
    /* rope_theta at the top (transformers 4) or in rope_parameters (transformers 5) */
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "rope_parameters");
    if (params && !cJSON_IsNull(params) && !cJSON_IsObject(params))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"rope_parameters\" must be an object", path);
    if ((st = get_number(path, root, k->rope_theta, k->rope_theta_default, &r->theta, &found, err)))
        return st;
    if (!found && cJSON_IsObject(params) &&
        (st = get_number(path, params, "rope_theta", k->rope_theta_default, &r->theta, NULL, err)))
        return st;
    if (!(r->theta > 1.0 && r->theta < 1e12))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" is %g; expected a number above 1", path, k->rope_theta,
                             r->theta);
    const cJSON *scaling = cJSON_GetObjectItemCaseSensitive(root, k->rope_scaling);
    if ((st = read_scaling(path, scaling && !cJSON_IsNull(scaling) ? scaling : params,
                           scaling && !cJSON_IsNull(scaling) ? k->rope_scaling : "rope_parameters", r, err)))
        return st;
    double partial = 1.0;
    if ((st = get_number(path, root, "partial_rotary_factor", 1.0, &partial, NULL, err)))
        return st;
    if (partial != 1.0)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"partial_rotary_factor\" is %g; attnscope rotates whole "
                             "heads only (1.0)", path, partial);
    if ((st = get_bool(path, root, k->attention_bias, false, &out->attention_bias, err)) ||
        (st = get_bool(path, root, k->mlp_bias, false, &out->mlp_bias, err)) ||
        (st = get_bool(path, root, "tie_word_embeddings", !k->tie_default_false, &out->tie_word_embeddings, err)) ||
        (st = read_window(path, root, k, c->n_layers, out, err)))
        return st;
    return ATN_OK;
}

void atn_hf_rotary_inv_freq(const atn_rotary *r, int32_t d_head, float *out) {
    int32_t half = d_head / 2;
    for (int32_t i = 0; i < half; i++) {
        /* 1 / base ** (arange(0, dim, 2) / dim), in float32 as transformers keeps it */
        float e = (float)(2 * i) / (float)d_head;
        float f = (float)(1.0 / pow(r->theta, (double)e));
        if (strcmp(r->scaling, "linear") == 0) {
            f = (float)((double)f / r->factor);
        } else if (strcmp(r->scaling, "llama3") == 0) {
            /* _compute_llama3_parameters: wavelengths longer than old_context_len /
               low_freq_factor are divided by factor, shorter than old / high_freq_factor
               kept, and those between smoothly interpolated */
            double old = r->original_max_positions, low = old / r->low_freq_factor, high = old / r->high_freq_factor;
            double wavelen = 2.0 * M_PI / (double)f;
            double llama = wavelen > low ? (double)f / r->factor : (double)f;
            double smooth = (old / wavelen - r->low_freq_factor) / (r->high_freq_factor - r->low_freq_factor);
            double smoothed = (1.0 - smooth) * llama / r->factor + smooth * llama;
            bool medium = !(wavelen < high) && !(wavelen > low);
            f = (float)(medium ? smoothed : llama);
        }
        out[i] = f;
    }
}

/* rope_parameters[kind] of transformers 5: its rope_theta (when set) and a default type. */
static atn_status modernbert_rope(const char *path, const cJSON *params, const char *kind, double *theta,
                                  atn_error *err) {
    const cJSON *p = cJSON_IsObject(params) ? cJSON_GetObjectItemCaseSensitive(params, kind) : NULL;
    if (!p || cJSON_IsNull(p))
        return ATN_OK;
    if (!cJSON_IsObject(p))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"rope_parameters\".%s must be an object", path, kind);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "rope_type");
    if (type && !(cJSON_IsString(type) && strcmp(type->valuestring, "default") == 0))
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"rope_parameters\".%s.rope_type is not \"default\", "
                             "which is the only one attnscope computes for ModernBERT", path, kind);
    return get_number(path, p, "rope_theta", *theta, theta, NULL, err);
}

atn_status atn_hf_modernbert_config(const char *path, const cJSON *root, atn_config *c, atn_hf_rotary *out,
                                    atn_error *err) {
    atn_rotary *r = &out->rotary;
    atn_status st;
    memset(out, 0, sizeof *out);
    r->on = true;
    r->scaling = "none";
    c->gated_ffn = true;
    c->n_kv_heads = c->n_heads;
    if (c->d_head % 2)
        return atn_error_set(err, ATN_E_FORMAT, "%s: head width %d (hidden_size / num_attention_heads) is odd: the "
                             "rotation turns pairs of values", path, c->d_head);
    int32_t local = 0;
    bool norm_bias = false;
    if ((st = get_number(path, root, "global_rope_theta", 160000.0, &r->theta, NULL, err)) ||
        (st = get_number(path, root, "local_rope_theta", 10000.0, &r->theta_local, NULL, err)) ||
        (st = get_int(path, root, "global_attn_every_n_layers", 3, 1, 1 << 20, &r->global_every, NULL, err)) ||
        (st = get_int(path, root, "local_attention", 128, 2, 1 << 30, &local, NULL, err)) ||
        (st = get_bool(path, root, "norm_bias", false, &norm_bias, err)) ||
        (st = get_bool(path, root, "attention_bias", false, &out->attention_bias, err)) ||
        (st = get_bool(path, root, "mlp_bias", false, &out->mlp_bias, err)) ||
        (st = get_bool(path, root, "classifier_bias", false, &out->classifier_bias, err)) ||
        (st = get_bool(path, root, "decoder_bias", true, &out->decoder_bias, err)) ||
        (st = get_bool(path, root, "tie_word_embeddings", true, &out->tie_word_embeddings, err)))
        return st;
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "rope_parameters");
    if ((st = modernbert_rope(path, params, "full_attention", &r->theta, err)) ||
        (st = modernbert_rope(path, params, "sliding_attention", &r->theta_local, err)))
        return st;
    if (!(r->theta > 1.0 && r->theta < 1e12) || !(r->theta_local > 1.0 && r->theta_local < 1e12))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"global_rope_theta\" %g and \"local_rope_theta\" %g must be "
                             "numbers above 1", path, r->theta, r->theta_local);
    if (norm_bias)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"norm_bias\" is true; attnscope runs ModernBERT's "
                             "LayerNorms without bias only", path);
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(root, "classifier_activation");
    if (act && !cJSON_IsNull(act) && !(cJSON_IsString(act) && strcmp(act->valuestring, "gelu") == 0))
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"classifier_activation\" is not \"gelu\", the only "
                             "head activation attnscope computes for ModernBERT", path);
    r->local_half = local / 2;   /* HF: distance <= local_attention // 2 */
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(root, "layer_types");
    if (types && !cJSON_IsNull(types)) {
        if (!cJSON_IsArray(types) || cJSON_GetArraySize(types) != c->n_layers)
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"layer_types\" must be a list of %d strings", path,
                                 c->n_layers);
        int32_t l = 0;
        for (const cJSON *e = types->child; e; e = e->next, l++) {
            const char *want = atn_rotary_local_layer(r, l) ? "sliding_attention" : "full_attention";
            if (!cJSON_IsString(e) || strcmp(e->valuestring, want))
                return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"layer_types\"[%d] is not \"%s\": attnscope runs "
                                     "ModernBERT's layers as \"global_attn_every_n_layers\" %d places them", path, l,
                                     want, r->global_every);
        }
    }
    return ATN_OK;
}

/* A positive number key (absent: def; null: 0, "none", where null_ok). */
static atn_status get_positive(const char *path, const cJSON *root, const char *key, double def, bool null_ok,
                               double *out, atn_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, key);
    if (item && cJSON_IsNull(item)) {
        if (!null_ok)
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" is null; expected a number above 0", path, key);
        *out = 0;
        return ATN_OK;
    }
    atn_status st = get_number(path, root, key, def, out, NULL, err);
    if (st == ATN_OK && def > 0 && !(*out > 0 && *out < 1e30))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" is %g; expected a number above 0", path, key, *out);
    if (st == ATN_OK && def == 0 && item && !(*out > 0 && *out < 1e30))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" is %g; expected a number above 0 or null", path, key,
                             *out);
    return st;
}

/* transformers 5's rope_parameters {"full_attention": {...}, "sliding_attention": {...}}
 * (Gemma 3): the global layers' theta and scaling, the sliding layers' theta (default type
 * only).  Keys at the top level (transformers 4) win. */
static atn_status gemma_rope_parameters(const char *path, const cJSON *root, atn_rotary *r, atn_error *err) {
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "rope_parameters");
    const cJSON *full = cJSON_IsObject(params) ? cJSON_GetObjectItemCaseSensitive(params, "full_attention") : NULL;
    const cJSON *slide = cJSON_IsObject(params) ? cJSON_GetObjectItemCaseSensitive(params, "sliding_attention") : NULL;
    atn_status st;
    if (full && !cJSON_IsNull(full)) {
        if (!cJSON_IsObject(full))
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"rope_parameters\".full_attention must be an object", path);
        if (!cJSON_GetObjectItemCaseSensitive(root, "rope_theta") &&
            (st = get_number(path, full, "rope_theta", r->theta, &r->theta, NULL, err)))
            return st;
        const cJSON *top = cJSON_GetObjectItemCaseSensitive(root, "rope_scaling");
        if ((!top || cJSON_IsNull(top)) && (st = read_scaling(path, full, "rope_parameters.full_attention", r, err)))
            return st;
    }
    if (slide && !cJSON_IsNull(slide)) {
        if (!cJSON_IsObject(slide))
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"rope_parameters\".sliding_attention must be an object",
                                 path);
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(slide, "rope_type");
        if (type && !(cJSON_IsString(type) && strcmp(type->valuestring, "default") == 0))
            return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"rope_parameters\".sliding_attention.rope_type is "
                                 "not \"default\", which is the only one attnscope computes for the sliding layers",
                                 path);
        if (!cJSON_GetObjectItemCaseSensitive(root, "rope_local_base_freq") &&
            (st = get_number(path, slide, "rope_theta", r->theta_local, &r->theta_local, NULL, err)))
            return st;
    }
    return ATN_OK;
}

atn_status atn_hf_gemma_config(const char *path, const cJSON *root, const atn_family *fam, atn_config *c,
                               atn_hf_rotary *out, atn_error *err) {
    atn_rotary *r = &out->rotary;
    bool gemma3 = fam->tensors.q_norm_w != NULL;
    atn_status st;
    double qpas = 0, attn_cap = 0, final_cap = 0;
    bool bidirectional = false;
    if ((st = get_positive(path, root, "query_pre_attn_scalar", 256.0, false, &qpas, err)) ||
        (st = get_positive(path, root, "attn_logit_softcapping", gemma3 ? 0.0 : 50.0, true, &attn_cap, err)) ||
        (st = get_positive(path, root, "final_logit_softcapping", gemma3 ? 0.0 : 30.0, true, &final_cap, err)) ||
        (st = get_bool(path, root, "use_bidirectional_attention", false, &bidirectional, err)))
        return st;
    if (bidirectional)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"use_bidirectional_attention\" is true; attnscope runs "
                             "%s as a causal decoder only", path, fam->name);
    /* Gemma3Attention keeps attn_logit_softcapping but its eager attention does not apply it
       (transformers 4.5x); what a folder that sets it means is not settled, so it is refused */
    if (gemma3 && attn_cap > 0)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"attn_logit_softcapping\" is %g; attnscope runs Gemma 3 "
                             "without an attention soft-cap (null), as transformers' Gemma3Attention does", path,
                             attn_cap);
    r->query_scale = (float)pow(qpas, -0.5);   /* config.query_pre_attn_scalar ** -0.5 */
    r->attn_softcap = (float)attn_cap;
    r->final_softcap = (float)final_cap;
    if (gemma3) {
        r->theta_local = 10000.0;
        if ((st = get_number(path, root, "rope_local_base_freq", 10000.0, &r->theta_local, NULL, err)) ||
            (st = gemma_rope_parameters(path, root, r, err)))
            return st;
        if (!(r->theta_local > 1.0 && r->theta_local < 1e12) || !(r->theta > 1.0 && r->theta < 1e12))
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"rope_local_base_freq\" %g and \"rope_theta\" %g must be "
                                 "numbers above 1", path, r->theta_local, r->theta);
    }
    /* the window, and which layers slide: layer_types, else Gemma2Config's every other layer
       from 0 ((i + 1) % 2) or Gemma3TextConfig's (i + 1) % sliding_window_pattern */
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(root, "sliding_window");
    if (sw && cJSON_IsNull(sw))
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"sliding_window\" is null; %s's sliding layers need a "
                             "window", path, fam->name);
    if ((st = get_int(path, root, "sliding_window", 4096, 1, 1 << 30, &r->local_window, NULL, err)))
        return st;
    int32_t pattern = 2;
    if (gemma3 && (st = get_int(path, root, "sliding_window_pattern", 6, 1, 1 << 20, &pattern, NULL, err)))
        return st;
    int32_t L = c->n_layers, sliding = 0;
    if (L > (int32_t)sizeof out->sliding)
        return atn_error_set(err, ATN_E_FORMAT, "%s: %d layers; attnscope opens at most %d", path, L,
                             (int)sizeof out->sliding);
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(root, "layer_types");
    if (types && !cJSON_IsNull(types)) {
        if (!cJSON_IsArray(types) || cJSON_GetArraySize(types) != L)
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"layer_types\" must be a list of %d strings", path, L);
        int32_t l = 0;
        for (const cJSON *e = types->child; e; e = e->next, l++) {
            if (!cJSON_IsString(e) || (strcmp(e->valuestring, "sliding_attention") &&
                                       strcmp(e->valuestring, "full_attention")))
                return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"layer_types\"[%d] is not \"full_attention\" or "
                                     "\"sliding_attention\"", path, l);
            out->sliding[l] = strcmp(e->valuestring, "sliding_attention") == 0;
        }
    } else {
        for (int32_t l = 0; l < L; l++)
            out->sliding[l] = (l + 1) % pattern != 0;
    }
    for (int32_t l = 0; l < L; l++)
        sliding += out->sliding[l];
    out->has_sliding = sliding > 0;
    if (!out->has_sliding)
        r->local_window = 0;
    return ATN_OK;
}

float atn_hf_gemma_embed_scale(int32_t d_model, atn_st_dtype dtype) {
    float s = (float)sqrt((double)d_model);   /* torch.tensor(hidden_size ** 0.5, dtype=...) */
    if (dtype == ATN_ST_BF16)
        s = atn_round_bf16(s);
    else if (dtype == ATN_ST_F16)
        s = atn_round_fp16(s);
    return s;
}

atn_status atn_hf_gemma_norm_gains(atn_model *m, atn_error *err) {
    int32_t d = m->cfg.d_model, k = m->cfg.d_head;
    for (int32_t l = 0; l <= m->cfg.n_layers; l++) {
        atn_layer_weights *lw = l < m->cfg.n_layers ? &m->w.layers[l] : NULL;
        const float **g[6] = {lw ? &lw->ln1_g : &m->w.final_ln_g, lw ? &lw->ln2_g : NULL,
                              lw ? &lw->post_attn_g : NULL, lw ? &lw->post_ffn_g : NULL,
                              lw ? &lw->q_norm_g : NULL, lw ? &lw->k_norm_g : NULL};
        for (int i = 0; i < 6; i++) {
            if (!g[i] || !*g[i])
                continue;
            int32_t n = i >= 4 ? k : d;
            float *one = atn_model_alloc_floats(m, (size_t)n);
            if (!one)
                return atn_error_set(err, ATN_E_NOMEM, "out of memory");
            for (int32_t x = 0; x < n; x++)   /* 1.0 + weight.float(), in float32 */
                one[x] = 1.0f + (*g[i])[x];
            *g[i] = one;
        }
    }
    return ATN_OK;
}

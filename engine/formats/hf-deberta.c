/* config.json of a DeBERTa-v2/v3 model (engine/formats/hf-deberta.h): the keys of
 * DebertaV2Config that DisentangledSelfAttention, DebertaV2Encoder and DebertaV2Embeddings
 * read, with that class's defaults.  A value that would change the numbers in a way the
 * walk does not compute is refused by name. */
#include "formats/hf-deberta.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static atn_status get_int(const char *path, const cJSON *root, const char *key, int32_t def, int32_t lo, int32_t hi,
                          int32_t *out, atn_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!item || cJSON_IsNull(item)) {
        *out = def;
        return ATN_OK;
    }
    double v = item->valuedouble;
    if (!cJSON_IsNumber(item) || v != floor(v) || !(v >= lo && v <= hi))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be an integer %d..%d", path, key, lo, hi);
    *out = (int32_t)v;
    return ATN_OK;
}

static atn_status get_bool(const char *path, const cJSON *root, const char *key, bool def, bool *out,
                           atn_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!item || cJSON_IsNull(item)) {
        *out = def;
        return ATN_OK;
    }
    if (!cJSON_IsBool(item))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be true or false", path, key);
    *out = cJSON_IsTrue(item);
    return ATN_OK;
}

/* One entry of pos_att_type (already stripped and lower-cased, as DebertaV2Config makes
 * them; the attention tests `"c2p" in pos_att_type`). */
static atn_status pos_att_entry(const char *path, const char *s, atn_deberta *r, atn_error *err) {
    if (strcmp(s, "c2p") == 0)
        r->c2p = true;
    else if (strcmp(s, "p2c") == 0)
        r->p2c = true;
    else
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"pos_att_type\" has \"%.32s\"; DeBERTa-v2 computes "
                             "\"c2p\" and \"p2c\" only", path, s);
    return ATN_OK;
}

/* s split at "|", each part stripped and lower-cased, handed to each(part). */
static atn_status split_bar(const char *path, const char *key, const char *s, atn_deberta *r,
                            atn_status (*each)(const char *, const char *, atn_deberta *, atn_error *),
                            atn_error *err) {
    char part[64];
    while (true) {
        const char *bar = strchr(s, '|');
        size_t len = bar ? (size_t)(bar - s) : strlen(s);
        while (len && isspace((unsigned char)*s))
            s++, len--;
        while (len && isspace((unsigned char)s[len - 1]))
            len--;
        if (len >= sizeof part)
            return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"%s\" has an entry of %zu characters", path, key, len);
        for (size_t i = 0; i < len; i++)
            part[i] = (char)tolower((unsigned char)s[i]);
        part[len] = '\0';
        atn_status st = each(path, part, r, err);
        if (st || !bar)
            return st;
        s = bar + 1;
    }
}

static atn_status norm_entry(const char *path, const char *s, atn_deberta *r, atn_error *err) {
    if (strcmp(s, "layer_norm") == 0)
        r->norm_rel_ebd = true;
    else if (strcmp(s, "none") != 0)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"norm_rel_ebd\" has \"%.32s\"; supported: \"none\", "
                             "\"layer_norm\"", path, s);
    return ATN_OK;
}

atn_status atn_hf_deberta_config(const char *path, const cJSON *root, atn_config *c, atn_deberta *out, bool *no_types,
                                 atn_error *err) {
    atn_deberta r = {.on = true};
    atn_status st;
    int32_t conv = 0, head = 0, embed = 0, types = 0;
    if ((st = get_bool(path, root, "relative_attention", false, &r.relative, err)) ||
        (st = get_bool(path, root, "share_att_key", false, &r.share_att_key, err)) ||
        (st = get_bool(path, root, "position_biased_input", true, &r.position_biased_input, err)) ||
        (st = get_int(path, root, "max_relative_positions", -1, INT32_MIN / 2, 1 << 20, &r.max_relative, err)) ||
        (st = get_int(path, root, "position_buckets", -1, INT32_MIN / 2, 1 << 20, &r.buckets, err)) ||
        (st = get_int(path, root, "conv_kernel_size", 0, INT32_MIN / 2, 1 << 20, &conv, err)) ||
        (st = get_int(path, root, "attention_head_size", c->d_model / c->n_heads, 1, 1 << 20, &head, err)) ||
        (st = get_int(path, root, "embedding_size", c->d_model, 1, 1 << 20, &embed, err)) ||
        (st = get_int(path, root, "type_vocab_size", 0, 0, 1 << 16, &types, err)))
        return st;
    if (conv > 0)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"conv_kernel_size\" is %d: the convolution DeBERTa-v2 "
                             "adds after layer 0 is not computed by attnscope", path, conv);
    if (head != c->d_model / c->n_heads)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"attention_head_size\" is %d; attnscope runs heads of "
                             "hidden_size / num_attention_heads = %d", path, head, c->d_model / c->n_heads);
    if (embed != c->d_model)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: \"embedding_size\" is %d; attnscope runs DeBERTa with "
                             "embeddings as wide as hidden_size (%d)", path, embed, c->d_model);
    /* pos_att_type: None, a list, or "p2c|c2p" (DebertaV2Config lower-cases and splits it) */
    const cJSON *pat = cJSON_GetObjectItemCaseSensitive(root, "pos_att_type");
    if (cJSON_IsString(pat)) {
        if ((st = split_bar(path, "pos_att_type", pat->valuestring, &r, pos_att_entry, err)))
            return st;
    } else if (cJSON_IsArray(pat)) {
        for (const cJSON *e = pat->child; e; e = e->next) {
            if (!cJSON_IsString(e))
                return atn_error_set(err, ATN_E_FORMAT, "%s: \"pos_att_type\" must list strings", path);
            if ((st = pos_att_entry(path, e->valuestring, &r, err)))
                return st;
        }
    } else if (pat && !cJSON_IsNull(pat)) {
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"pos_att_type\" must be a string or a list", path);
    }
    const cJSON *nre = cJSON_GetObjectItemCaseSensitive(root, "norm_rel_ebd");
    if (cJSON_IsString(nre)) {
        if ((st = split_bar(path, "norm_rel_ebd", nre->valuestring, &r, norm_entry, err)))
            return st;
    } else if (nre && !cJSON_IsNull(nre)) {
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"norm_rel_ebd\" must be a string", path);
    }
    /* DisentangledSelfAttention: max_relative_positions < 1 is max_position_embeddings;
       pos_ebd_size (att_span) is position_buckets when > 0 */
    if (r.max_relative < 1)
        r.max_relative = c->max_positions;
    r.span = r.buckets > 0 ? r.buckets : r.max_relative;
    if (r.buckets > 0 && r.buckets / 2 < 2 && r.relative)
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"position_buckets\" is %d; log buckets need at least 4", path,
                             r.buckets);
    if (r.buckets > 0 && r.max_relative - 1 <= r.buckets / 2 && r.relative)
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"max_relative_positions\" %d is not past \"position_buckets\" "
                             "%d / 2 (the log buckets divide by log((max - 1) / mid))", path, r.max_relative,
                             r.buckets);
    /* the scale counts the types whether or not relative_attention adds them */
    r.scale_factor = 1 + (r.c2p ? 1 : 0) + (r.p2c ? 1 : 0);
    *no_types = types == 0;
    c->type_vocab_size = types > 0 ? types : 1;
    *out = r;
    return ATN_OK;
}

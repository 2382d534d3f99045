/* Writing an attention file (attention-file.h): a safetensors header built with cJSON,
 * padded with spaces so the data area starts 8-byte aligned (the attention is then read in
 * place), then the capture's floats as they are. */
#include "attention-file.h"

#include "analysis/trace-scale.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *role_name(atn_token_role r) {
    switch (r) {
    case ATN_TOKEN_CLS: return "cls";
    case ATN_TOKEN_SEP: return "sep";
    case ATN_TOKEN_MASK: return "mask";
    case ATN_TOKEN_PAD: return "pad";
    case ATN_TOKEN_UNK: return "unk";
    default: return "word";
    }
}

/* Adds key -> the JSON text of v (consumed) to meta; false when out of memory. */
static bool add_meta(cJSON *meta, const char *key, cJSON *v) {
    char *text = v ? cJSON_PrintUnformatted(v) : NULL;
    cJSON_Delete(v);
    bool ok = text && cJSON_AddStringToObject(meta, key, text);
    free(text);
    return ok;
}

static bool add_tensor(cJSON *root, const char *name, const char *dtype, const int64_t *shape, int ndim,
                       uint64_t *offset, uint64_t nbytes) {
    cJSON *t = cJSON_AddObjectToObject(root, name), *s, *o;
    if (!t || !cJSON_AddStringToObject(t, "dtype", dtype) || !(s = cJSON_AddArrayToObject(t, "shape")) ||
        !(o = cJSON_AddArrayToObject(t, "data_offsets")))
        return false;
    for (int i = 0; i < ndim; i++)
        cJSON_AddItemToArray(s, cJSON_CreateNumber((double)shape[i]));
    cJSON_AddItemToArray(o, cJSON_CreateNumber((double)*offset));
    cJSON_AddItemToArray(o, cJSON_CreateNumber((double)(*offset + nbytes)));
    *offset += nbytes;
    return true;
}

/* The header's JSON text (malloc'ed), or NULL when out of memory. */
static char *header_text(const atn_capture *cap, const atn_attn_file_meta *m) {
    const atn_encoding *e = cap->enc;
    int32_t n = cap->n;
    cJSON *root = cJSON_CreateObject(), *meta = root ? cJSON_AddObjectToObject(root, "__metadata__") : NULL;
    bool ok = meta != NULL;
    ok = ok && add_meta(meta, "format", cJSON_CreateString(ATN_ATTN_FORMAT));
    ok = ok && add_meta(meta, "source", cJSON_CreateString(m && m->source ? m->source : "attnscope"));
    if (m && m->model_id)
        ok = ok && add_meta(meta, "model_id", cJSON_CreateString(m->model_id));
    if (m && m->family)
        ok = ok && add_meta(meta, "family", cJSON_CreateString(m->family));
    ok = ok && add_meta(meta, "causal", cJSON_CreateBool(m && m->causal));
    if (ok && e) {
        cJSON *tokens = cJSON_CreateArray(), *roles = cJSON_CreateArray(), *special = cJSON_CreateArray();
        for (int32_t i = 0; tokens && roles && special && i < n; i++) {
            cJSON_AddItemToArray(tokens, cJSON_CreateString(e->tokens[i].text ? e->tokens[i].text : ""));
            cJSON_AddItemToArray(roles, cJSON_CreateString(role_name(e->tokens[i].role)));
            if (e->tokens[i].special)
                cJSON_AddItemToArray(special, cJSON_CreateNumber(i));
        }
        ok = add_meta(meta, "tokens", tokens) && add_meta(meta, "token_roles", roles) &&
             add_meta(meta, "special_tokens", special);
    }
    uint64_t off = 0;
    int64_t shape[4] = {cap->n_layers, cap->n_heads, n, n};
    uint64_t attn_bytes = (uint64_t)cap->n_layers * cap->n_heads * n * n * sizeof(float);
    if (cap->n_stacks) {   /* an encoder-decoder: its three stacks, the encoder's the one shown */
        for (int k = ATN_STACK_ENCODER; ok && k <= ATN_STACK_CROSS; k++) {
            const atn_stack *st = atn_capture_stack(cap, (atn_stack_kind)k);
            int64_t ss[4] = {st->n_layers, st->n_heads, st->n_q, st->n_k};
            ok = add_tensor(root, st->name, "F32", ss, 4, &off, (uint64_t)ss[0] * ss[1] * ss[2] * ss[3] * 4);
        }
        cJSON *qt = cJSON_CreateArray(), *kt = cJSON_CreateArray();
        for (int32_t i = 0; qt && i < cap->n_tgt; i++) {   /* the decoder's tokens: the vocabulary's text */
            atn_token_info ti;
            char id_text[24];
            snprintf(id_text, sizeof id_text, "#%d", cap->target_ids[i]);
            bool known = m && m->model && atn_model_token_info(m->model, cap->target_ids[i], &ti) && ti.text;
            cJSON_AddItemToArray(qt, cJSON_CreateString(known ? ti.text : id_text));
        }
        for (int32_t i = 0; kt && e && i < n; i++)
            cJSON_AddItemToArray(kt, cJSON_CreateString(e->tokens[i].text ? e->tokens[i].text : ""));
        ok = ok && add_meta(meta, "query_tokens", qt) && add_meta(meta, "key_tokens", kt);
    } else {
        ok = ok && add_tensor(root, "attn", "F32", shape, 4, &off, attn_bytes);
    }
    bool ids = e && e->ids;
    for (int32_t i = 0; ids && i < n; i++)
        ids = e->ids[i] >= 0;
    if (ok && e) {
        if (ids)
            ok = add_tensor(root, "token_ids", "I32", shape + 2, 1, &off, (uint64_t)n * 4);
        ok = ok && add_tensor(root, "type_ids", "I32", shape + 2, 1, &off, (uint64_t)n * 4);
        ok = ok && add_tensor(root, "mask", "I32", shape + 2, 1, &off, (uint64_t)n * 4);
    }
    if (ok && cap->n_stacks) {   /* the decoder's input ids, after the source's */
        int64_t t = cap->n_tgt;
        ok = add_tensor(root, "target_ids", "I32", &t, 1, &off, (uint64_t)t * 4);
    }
    if (ok && m && m->qkv) {   /* the trace's inputs: q, k, v per head, and the model's scale */
        int32_t L = cap->n_layers, hkv = cap->n_kv_heads > 0 ? cap->n_kv_heads : cap->n_heads, k = cap->d_head;
        int64_t qs[4] = {L, cap->n_heads, n, k}, kvs[4] = {L, hkv, n, k};
        uint64_t qb = (uint64_t)L * cap->n_heads * n * k * 4, kvb = (uint64_t)L * hkv * n * k * 4;
        ok = add_tensor(root, "q", "F32", qs, 4, &off, qb) && add_tensor(root, "k", "F32", kvs, 4, &off, kvb) &&
             add_tensor(root, "v", "F32", kvs, 4, &off, kvb);
        bool same = true;
        for (int32_t l = 1; l < L; l++)
            same = same && atn_trace_scale(m->model, l, k) == atn_trace_scale(m->model, 0, k);
        cJSON *scale = same ? cJSON_CreateNumber(atn_trace_scale(m->model, 0, k)) : cJSON_CreateArray();
        for (int32_t l = 0; !same && scale && l < L; l++)
            cJSON_AddItemToArray(scale, cJSON_CreateNumber(atn_trace_scale(m->model, l, k)));
        ok = ok && add_meta(meta, "scale", scale);
    }
    int32_t hkv = cap->n_kv_heads > 0 ? cap->n_kv_heads : cap->n_heads;
    if (ok && !cap->n_stacks && hkv != cap->n_heads && cap->n_heads % hkv == 0) {
        /* grouped-query attention: how many K/V heads, and query head h's, h / (H / H_kv) */
        cJSON *map = cJSON_CreateArray();
        for (int32_t h = 0; map && h < cap->n_heads; h++)
            cJSON_AddItemToArray(map, cJSON_CreateNumber(h / (cap->n_heads / hkv)));
        ok = add_meta(meta, "n_kv_heads", cJSON_CreateNumber(hkv)) && add_meta(meta, "kv_heads", map);
    }
    char *text = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return text;
}

atn_status atn_attn_file_write(const char *path, const atn_capture *cap, const atn_attn_file_meta *meta,
                               atn_error *err) {
    if (!path || !cap)
        return atn_error_set(err, ATN_E_INVALID, "atn_attn_file_write: NULL path or capture");
    if (!atn_capture_has_heads(cap))
        return atn_error_set(err, ATN_E_INVALID, "%s: the run kept no attention to write", path);
    if (meta && meta->qkv && (!cap->has_trace_inputs || !cap->q || !cap->k || !cap->v))
        return atn_error_set(err, ATN_E_INVALID, "%s: the run kept no q, k, v to write", path);
    if (meta && meta->qkv && cap->n_stacks)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: q, k, v of an encoder-decoder are not written: the trace "
                             "does not follow its relative positions and cross-attention yet", path);
    size_t nn = (size_t)cap->n * cap->n;
    float *scratch = cap->attn ? NULL : malloc(nn * sizeof(float));   /* heads on demand: one at a time */
    if (!cap->attn && !scratch)
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", path);
    char *text = header_text(cap, meta);
    if (!text) {
        free(scratch);
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory building the header", path);
    }
    size_t hlen = strlen(text), pad = (8 - hlen % 8) % 8;
    atn_atomic_file *af = NULL;
    atn_status st = atn_atomic_open(path, &af, err);
    if (st != ATN_OK) {
        free(text);
        free(scratch);
        return st;
    }
    FILE *f = atn_atomic_stream(af);
    uint64_t total = hlen + pad;
    unsigned char size_le[8];
    for (int i = 0; i < 8; i++)
        size_le[i] = (unsigned char)(total >> (8 * i));
    fwrite(size_le, 1, 8, f);
    fwrite(text, 1, hlen, f);
    for (size_t i = 0; i < pad; i++)
        fputc(' ', f);
    free(text);
    for (int k = ATN_STACK_ENCODER; cap->n_stacks && k <= ATN_STACK_CROSS; k++) {   /* as the header lists them */
        const atn_stack *sk = atn_capture_stack(cap, (atn_stack_kind)k);
        fwrite(sk->attn, sizeof(float), (size_t)sk->n_layers * sk->n_heads * sk->n_q * sk->n_k, f);
    }
    for (int32_t lh = 0; !cap->n_stacks && lh < cap->n_layers * cap->n_heads; lh++) {
        const float *a = atn_capture_head_read(cap, lh / cap->n_heads, lh % cap->n_heads, scratch, err);
        if (!a) {
            free(scratch);
            atn_atomic_close(af, false, NULL);
            return err ? err->status : ATN_E_INVALID;
        }
        fwrite(a, sizeof(float), nn, f);   /* little-endian hosts only, as the reader */
    }
    free(scratch);
    const atn_encoding *e = cap->enc;
    if (e) {
        bool ids = e->ids != NULL;
        for (int32_t i = 0; ids && i < cap->n; i++)
            ids = e->ids[i] >= 0;
        if (ids)
            fwrite(e->ids, sizeof(int32_t), (size_t)cap->n, f);
        fwrite(e->type_ids, sizeof(int32_t), (size_t)cap->n, f);
        fwrite(e->mask, sizeof(int32_t), (size_t)cap->n, f);
    }
    if (cap->n_stacks)
        fwrite(cap->target_ids, sizeof(int32_t), (size_t)cap->n_tgt, f);
    if (meta && meta->qkv) {   /* [L][n][d_q] rows -> [L][H][n][k], then k and v [L][H_kv][n][k] */
        int32_t k = cap->d_head, hkv = cap->n_kv_heads > 0 ? cap->n_kv_heads : cap->n_heads;
        int32_t dq = cap->d_q > 0 ? cap->d_q : cap->d_model, dkv = cap->d_kv > 0 ? cap->d_kv : cap->d_model;
        const float *src[3] = {cap->q, cap->k, cap->v};
        for (int s = 0; s < 3; s++) {
            int32_t heads = s ? hkv : cap->n_heads, width = s ? dkv : dq;
            for (int32_t l = 0; l < cap->n_layers; l++)
                for (int32_t h = 0; h < heads; h++)
                    for (int32_t j = 0; j < cap->n; j++)
                        fwrite(src[s] + ((size_t)l * cap->n + j) * width + (size_t)h * k, sizeof(float), (size_t)k, f);
        }
    }
    return atn_atomic_close(af, true, err);
}

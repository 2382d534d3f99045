/* The attention file reader (attention-file.h; docs/attention-file.md): every container
 * ends as an atn_st_file (safetensors parsed in place; .npz and .npy arrays adopted), the
 * metadata as one cJSON object of parsed values, then one set of checks for all three.
 * Layers are read and checked on first use, so opening costs the header only. */
#include "attention-file.h"
#include "formats/attention-file-private.h"

#include "core/files.h"
#include "core/json.h"
#include "formats/npy-image.h"
#include "formats/safetensors.h"
#include "formats/zip.h"
#include "forward/fp16.h"
#include "tokenize/encoding.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>


static const char *const pickle_ext[] = {".pt", ".pth", ".pkl", ".pickle", ".ckpt", NULL};

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static bool is_float(atn_st_dtype d) { return d == ATN_ST_F32 || d == ATN_ST_F16 || d == ATN_ST_BF16; }

static bool is_int(atn_st_dtype d) {
    return d == ATN_ST_I64 || d == ATN_ST_I32 || d == ATN_ST_I16 || d == ATN_ST_I8 || d == ATN_ST_U8 ||
           d == ATN_ST_U16 || d == ATN_ST_U32 || d == ATN_ST_U64 || d == ATN_ST_BOOL;
}

/* Element i of an integer tensor (checked is_int), as int64. */
static int64_t int_at(const atn_st_tensor *t, uint64_t i) {
    const uint8_t *p = (const uint8_t *)t->data + i * atn_st_dtype_size(t->dtype);
    switch (t->dtype) {
    case ATN_ST_I64: { int64_t v; memcpy(&v, p, 8); return v; }
    case ATN_ST_U64: { uint64_t v; memcpy(&v, p, 8); return v > INT64_MAX ? INT64_MAX : (int64_t)v; }
    case ATN_ST_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case ATN_ST_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case ATN_ST_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case ATN_ST_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case ATN_ST_I8: return (int8_t)*p;
    default: return *p;
    }
}

static const char *shape_str(const atn_st_tensor *t, char *buf, size_t size) {
    return atn_st_shape_str(t->shape, t->ndim, buf, size);
}

/* ---- containers --------------------------------------------------------------------- */

/* The safetensors header's "__metadata__", each value parsed as JSON, into f->meta. */
static atn_status read_st_metadata(atn_attn_file *f, atn_error *err) {
    const uint8_t *buf = f->map;
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | buf[i];
    cJSON *root = NULL;
    size_t jlen = (size_t)hlen;
    while (jlen > 0 && buf[8 + jlen - 1] == '\0')   /* NUL padding, as atn_st_parse allows */
        jlen--;
    /* atn_st_parse has checked the header: it parses */
    atn_status st = atn_json_parse((const char *)buf + 8, jlen, f->path, 0, &root, err);
    if (st != ATN_OK)
        return st;
    f->meta = cJSON_CreateObject();
    if (!f->meta) {
        cJSON_Delete(root);
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", f->path);
    }
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    for (const cJSON *e = m ? m->child : NULL; e; e = e->next) {
        const char *text = e->valuestring;
        cJSON *v = NULL;
        size_t off = 0;
        if (atn_json_parse_raw(text, strlen(text), 0, &v, &off) != ATN_JSON_PARSED) {
            if (!strcmp(e->string, "format")) {   /* the one key also taken bare */
                v = cJSON_CreateString(text);
            } else {
                st = atn_error_set(err, ATN_E_FORMAT,
                                   "%s: __metadata__ \"%.64s\" is not JSON (near byte %zu of \"%.40s\"); every "
                                   "value is JSON text, e.g. json.dumps(value)", f->path, e->string, off, text);
                break;
            }
        }
        if (!v) {
            st = atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", f->path);
            break;
        }
        cJSON_AddItemToObject(f->meta, e->string, v);
    }
    cJSON_Delete(root);
    return st;
}

static atn_status open_safetensors(atn_attn_file *f, atn_error *err) {
    atn_status st = atn_map_file(f->path, ATN_WEIGHT_FILE_MAX, &f->map, &f->map_len, err);
    if (st != ATN_OK)
        return st;
    if ((st = atn_st_parse(f->path, f->map, f->map_len, &f->st, err)) != ATN_OK)
        return st;
    f->container = "safetensors";
    return read_st_metadata(f, err);
}

/* UTF-32 code points (NUL-padded) to a malloc'ed UTF-8 string; NULL for a bad code point. */
static char *utf32_to_utf8(const uint8_t *p, int32_t width) {
    char *s = malloc((size_t)width * 4 + 1), *o = s;
    if (!s)
        return NULL;
    for (int32_t i = 0; i < width; i++) {
        uint32_t c;
        memcpy(&c, p + 4 * (size_t)i, 4);
        if (c == 0)
            break;
        if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000)) {
            free(s);
            return NULL;
        }
        if (c < 0x80) {
            *o++ = (char)c;
        } else if (c < 0x800) {
            *o++ = (char)(0xc0 | c >> 6);
            *o++ = (char)(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            *o++ = (char)(0xe0 | c >> 12);
            *o++ = (char)(0x80 | (c >> 6 & 0x3f));
            *o++ = (char)(0x80 | (c & 0x3f));
        } else {
            *o++ = (char)(0xf0 | c >> 18);
            *o++ = (char)(0x80 | (c >> 12 & 0x3f));
            *o++ = (char)(0x80 | (c >> 6 & 0x3f));
            *o++ = (char)(0x80 | (c & 0x3f));
        }
    }
    *o = '\0';
    return s;
}

/* An .npz (np.savez: stored entries; np.savez_compressed is refused by the ZIP reader):
 * each NAME.npy becomes tensor NAME; a string array "tokens" becomes the tokens. */
static atn_status open_npz(atn_attn_file *f, void *map, size_t len, atn_error *err) {
    atn_zip *zip = NULL;
    atn_status st = atn_zip_open(f->path, map, len, &zip, err);
    if (st != ATN_OK) {
        munmap(map, len);
        if (st == ATN_E_UNSUPPORTED)
            atn_error_prefix(err, "save with np.savez, not np.savez_compressed");
        return st;
    }
    int32_t n = atn_zip_count(zip), used = 0;
    atn_st_tensor *ts = calloc(n ? (size_t)n : 1, sizeof *ts);
    size_t names_len = 1;
    for (int32_t i = 0; i < n; i++)
        names_len += strlen(atn_zip_at(zip, i)->name) + 1;
    char *names = malloc(names_len), *at = names;
    if (!ts || !names) {
        free(ts);
        free(names);
        atn_zip_close(zip);
        munmap(map, len);
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", f->path);
    }
    for (int32_t i = 0; i < n && st == ATN_OK; i++) {
        const atn_zip_entry *e = atn_zip_at(zip, i);
        if (!ends_with(e->name, ".npy"))
            continue;
        char origin[4200];
        snprintf(origin, sizeof origin, "%s: %s", f->path, e->name);
        atn_npy_array a;
        if ((st = atn_npy_parse_image(origin, e->data, (size_t)e->size, &a, err)) != ATN_OK)
            break;
        size_t l = strlen(e->name) - 4;
        if (a.unicode_width > 0) {
            if (l != 6 || strncmp(e->name, "tokens", 6) || a.t.ndim != 1) {
                st = atn_error_set(err, ATN_E_FORMAT, "%s: string arrays other than a 1-D \"tokens\" are not read",
                                   origin);
                break;
            }
            f->n_npz_tokens = (int32_t)a.t.shape[0];
            f->npz_tokens = calloc(a.t.count ? a.t.count : 1, sizeof *f->npz_tokens);
            for (uint64_t k = 0; f->npz_tokens && k < a.t.count && st == ATN_OK; k++)
                if (!(f->npz_tokens[k] = utf32_to_utf8((const uint8_t *)a.t.data + k * 4 * (size_t)a.unicode_width,
                                                       a.unicode_width)))
                    st = atn_error_set(err, ATN_E_FORMAT, "%s: token %llu is not valid text", origin,
                                       (unsigned long long)k);
            if (!f->npz_tokens)
                st = atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", origin);
            continue;
        }
        memcpy(at, e->name, l);
        at[l] = '\0';
        a.t.name = at;
        at += l + 1;
        ts[used++] = a.t;
    }
    atn_zip_close(zip);
    if (st != ATN_OK) {
        free(ts);
        free(names);
        munmap(map, len);
        return st;
    }
    f->container = "npz";
    return atn_st_adopt(f->path, ts, used, names, map, len, NULL, &f->st, err);
}

/* A lone .npy is the attention; its tokens (and any other metadata) come from tokens.json
 * beside it: a list of strings, or an object with the metadata keys. */
static atn_status open_npy(atn_attn_file *f, void *map, size_t len, atn_error *err) {
    atn_npy_array a;
    atn_status st = atn_npy_parse_image(f->path, map, len, &a, err);
    if (st == ATN_OK && a.unicode_width > 0)
        st = atn_error_set(err, ATN_E_FORMAT, "%s: a string array, not attention", f->path);
    atn_st_tensor *t = calloc(1, sizeof *t);
    char *name = strdup("attn");
    if (st == ATN_OK && (!t || !name))
        st = atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", f->path);
    if (st != ATN_OK) {
        free(t);
        free(name);
        munmap(map, len);
        return st;
    }
    *t = a.t;
    t->name = name;
    f->container = "npy";
    if ((st = atn_st_adopt(f->path, t, 1, name, map, len, NULL, &f->st, err)) != ATN_OK)
        return st;

    const char *slash = strrchr(f->path, '/');
    size_t dir = slash ? (size_t)(slash - f->path) + 1 : 0;
    char *side = malloc(dir + sizeof "tokens.json");
    if (!side)
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", f->path);
    memcpy(side, f->path, dir);
    memcpy(side + dir, "tokens.json", sizeof "tokens.json");
    bool found = false;
    st = atn_probe_file(side, &found, err);
    if (st == ATN_OK && found) {
        char *text = NULL;
        size_t tlen = 0;
        cJSON *v = NULL;
        if ((st = atn_read_file(side, 64u << 20, &text, &tlen, err)) == ATN_OK &&
            (st = atn_json_parse(text, tlen, side, 0, &v, err)) == ATN_OK) {
            if (cJSON_IsArray(v)) {
                f->meta = cJSON_CreateObject();
                if (f->meta)
                    cJSON_AddItemToObject(f->meta, "tokens", v);
                else
                    cJSON_Delete(v);
            } else if (cJSON_IsObject(v)) {
                f->meta = v;
            } else {
                cJSON_Delete(v);
                st = atn_error_set(err, ATN_E_FORMAT, "%s: expected a list of token strings or an object with "
                                   "\"tokens\"", side);
            }
        }
        free(text);
    }
    free(side);
    return st;
}

/* ---- checks ------------------------------------------------------------------------- */

static atn_status need_float(const atn_attn_file *f, const atn_st_tensor *t, atn_error *err) {
    if (is_float(t->dtype))
        return ATN_OK;
    return atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s' is %s; attention is F32, F16 or BF16", f->path, t->name,
                         atn_st_dtype_name(t->dtype));
}

/* Finds the attention: attn, else attn.L0..attn.L{L-1}, else encoder, else decoder (an
 * encoder-decoder's capture is the encoder's, as a run's). */
static atn_status find_attention(atn_attn_file *f, atn_error *err) {
    char s[128];
    const atn_st_tensor *t = atn_st_find(f->st, "attn");
    int32_t n_layer_tensors = 0;
    for (int32_t i = 0; i < atn_st_count(f->st); i++)
        if (!strncmp(atn_st_at(f->st, i)->name, "attn.L", 6))
            n_layer_tensors++;
    if (t && n_layer_tensors)
        return atn_error_set(err, ATN_E_FORMAT, "%s: both 'attn' and 'attn.L0'... are present; keep one", f->path);
    if (!t && !n_layer_tensors && !(t = atn_st_find(f->st, "encoder")) && !(t = atn_st_find(f->st, "decoder"))) {
        const atn_st_tensor *first = atn_st_count(f->st) > 0 ? atn_st_at(f->st, 0) : NULL;
        return atn_error_set(err, ATN_E_FORMAT, "%s: no attention: expected a tensor 'attn' [layers, heads, n, n] "
                             "or 'attn.L0', 'attn.L1', ... (the file holds %d tensors%s%s%s)", f->path,
                             atn_st_count(f->st), first ? ", e.g. '" : "", first ? first->name : "",
                             first ? "'" : "");
    }
    if (t) {
        f->primary = t->name;
        if (t->ndim != 4)
            return atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s' has shape %s; expected 4 dimensions [layers, "
                                 "heads, n_query, n_key]%s", f->path, t->name, shape_str(t, s, sizeof s),
                                 t->ndim == 3 ? " (one layer: add a leading axis of 1, or name it 'attn.L0')" : "");
        if (t->shape[2] != t->shape[3])
            return atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s' has shape %s: self-attention is square "
                                 "(n_query = n_key); cross-attention goes in 'cross'", f->path, t->name,
                                 shape_str(t, s, sizeof s));
        if (t->shape[0] < 1 || t->shape[1] < 1 || t->shape[2] < 1 || t->shape[0] > INT32_MAX ||
            t->shape[1] > INT32_MAX || t->shape[2] > INT32_MAX)
            return atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s' has shape %s: every dimension must be at "
                                 "least 1", f->path, t->name, shape_str(t, s, sizeof s));
        f->attn = t;
        f->L = (int32_t)t->shape[0];
        f->H = (int32_t)t->shape[1];
        f->n = (int32_t)t->shape[2];
        f->dtype = t->dtype;
        return need_float(f, t, err);
    }
    f->primary = "attn.L*";
    f->L = n_layer_tensors;
    f->per_layer = calloc((size_t)n_layer_tensors, sizeof *f->per_layer);
    if (!f->per_layer)
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", f->path);
    for (int32_t l = 0; l < f->L; l++) {
        char name[32];
        snprintf(name, sizeof name, "attn.L%d", l);
        const atn_st_tensor *lt = atn_st_find(f->st, name);
        if (!lt)
            return atn_error_set(err, ATN_E_FORMAT, "%s: %d tensors are named attn.L*, but '%s' is missing (layers "
                                 "count from 0 without gaps)", f->path, f->L, name);
        if (lt->ndim != 3 || lt->shape[1] != lt->shape[2] || lt->shape[0] < 1 || lt->shape[1] < 1 ||
            lt->shape[0] > INT32_MAX || lt->shape[1] > INT32_MAX)
            return atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s' has shape %s; expected [heads, n, n]", f->path,
                                 name, shape_str(lt, s, sizeof s));
        atn_status st = need_float(f, lt, err);
        if (st != ATN_OK)
            return st;
        if (l == 0) {
            f->H = (int32_t)lt->shape[0];
            f->n = (int32_t)lt->shape[1];
            f->dtype = lt->dtype;
        } else if (lt->shape[0] != f->per_layer[0]->shape[0] && !f->layer_heads) {
            /* layers of different head counts: H is the largest, the others' heads past theirs absent */
            if (!(f->layer_heads = malloc((size_t)f->L * sizeof *f->layer_heads)))
                return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", f->path);
        }
        if (l > 0 && lt->shape[1] != f->n) {
            return atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s' has %lld tokens, 'attn.L0' has %d", f->path,
                                 name, (long long)lt->shape[1], f->n);
        } else if (lt->dtype != f->dtype) {
            return atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s' is %s, 'attn.L0' is %s: use one dtype", f->path,
                                 name, atn_st_dtype_name(lt->dtype), atn_st_dtype_name(f->dtype));
        }
        if (lt->shape[0] > f->H)
            f->H = (int32_t)lt->shape[0];
        f->per_layer[l] = lt;
    }
    for (int32_t l = 0; f->layer_heads && l < f->L; l++)
        f->layer_heads[l] = (int32_t)f->per_layer[l]->shape[0];
    return ATN_OK;
}

/* The heads layer l has (H unless the layers' head counts differ). */
static int32_t heads_of(const atn_attn_file *f, int32_t l) { return f->layer_heads ? f->layer_heads[l] : f->H; }

/* The optional tensors: present ones must have the shapes the format gives them. */
static atn_status check_optional(atn_attn_file *f, atn_error *err) {
    char s[128];
    const atn_st_tensor *t;
    static const char *const per_head[] = {"scores", "q", "k", "v"};
    for (int i = 0; f->layer_heads && i < 4; i++)
        if (atn_st_find(f->st, per_head[i]))
            return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: tensor '%s' is not read beside layers of different head "
                                 "counts (attn.L0 has %d heads, the largest layer %d); leave it out", f->path,
                                 per_head[i], f->layer_heads[0], f->H);
    if ((t = atn_st_find(f->st, "scores"))) {
        if (t->ndim != 4 || t->shape[0] != f->L || t->shape[1] != f->H || t->shape[2] != f->n || t->shape[3] != f->n)
            return atn_error_set(err, ATN_E_FORMAT, "%s: tensor 'scores' has shape %s; expected [%d, %d, %d, %d] like "
                                 "the attention", f->path, shape_str(t, s, sizeof s), f->L, f->H, f->n, f->n);
        if (need_float(f, t, err))
            return err ? err->status : ATN_E_FORMAT;
        f->info.has_scores = true;
    }
    static const char *const qkv[] = {"q", "k", "v"};
    int64_t d = -1;
    int n_qkv = 0;
    for (int i = 0; i < 3; i++) {
        if (!(t = atn_st_find(f->st, qkv[i])))
            continue;
        n_qkv++;
        if (t->ndim != 4 || t->shape[0] != f->L || t->shape[2] != f->n || t->shape[1] < 1 || t->shape[1] > f->H ||
            f->H % t->shape[1] != 0 || (i == 0 && t->shape[1] != f->H) || (d >= 0 && t->shape[3] != d))
            return atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s' has shape %s; expected [%d, heads, %d, d] (q: %d "
                                 "heads; k, v: %d or a divisor of it, grouped-query attention; one d for all three)",
                                 f->path, qkv[i], shape_str(t, s, sizeof s), f->L, f->n, f->H, f->H);
        if (need_float(f, t, err))
            return err ? err->status : ATN_E_FORMAT;
        d = t->shape[3];
    }
    if (n_qkv != 0 && n_qkv != 3)
        return atn_error_set(err, ATN_E_FORMAT, "%s: q, k and v come together (the file has %d of them)", f->path,
                             n_qkv);
    f->info.has_qkv = n_qkv == 3;
    static const char *const per_token[] = {"mask", "token_ids", "type_ids"};
    for (int i = 0; i < 3; i++) {
        if (!(t = atn_st_find(f->st, per_token[i])))
            continue;
        if (t->ndim != 1 || t->shape[0] != f->n || !is_int(t->dtype))
            return atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s' is %s %s; expected integers of shape [%d] (one per "
                                 "token)", f->path, per_token[i], atn_st_dtype_name(t->dtype),
                                 shape_str(t, s, sizeof s), f->n);
        for (int32_t j = 0; j < f->n; j++) {
            int64_t v = int_at(t, (uint64_t)j);
            if ((i == 0 && v != 0 && v != 1) || (i == 1 && (v < 0 || v > INT32_MAX)) || (i == 2 && (v < 0 || v > 1)))
                return atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s'[%d] is %lld; expected %s", f->path,
                                     per_token[i], j, (long long)v,
                                     i == 0 ? "0 or 1" : i == 1 ? "a vocabulary id (0 or more)" : "0 or 1");
        }
    }
    f->info.has_mask = atn_st_find(f->st, "mask") != NULL;
    f->info.has_token_ids = atn_st_find(f->st, "token_ids") != NULL;
    static const char *const stacks[] = {"cross", "encoder", "decoder"};
    for (int i = 0; i < 3; i++) {
        if (!(t = atn_st_find(f->st, stacks[i])) || t == f->attn)
            continue;
        if (t->ndim != 4 || (i > 0 && t->shape[2] != t->shape[3]))
            return atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s' has shape %s; expected [layers, heads, %s]",
                                 f->path, stacks[i], shape_str(t, s, sizeof s),
                                 i == 0 ? "n_decoder, n_encoder" : "n, n");
        if (need_float(f, t, err))
            return err ? err->status : ATN_E_FORMAT;
        if (i == 0)
            f->info.has_cross = true;
    }
    /* the three stacks together: encoder [L, H, n, n], decoder [Ld, H, t, t], cross [Ld, H, t, n] */
    const atn_st_tensor *enc = atn_st_find(f->st, "encoder"), *dec = atn_st_find(f->st, "decoder"),
                        *cross = atn_st_find(f->st, "cross");
    if (enc && dec && cross && enc == f->attn) {
        if (dec->shape[1] != f->H || cross->shape[1] != f->H || cross->shape[0] != dec->shape[0] ||
            cross->shape[2] != dec->shape[2] || cross->shape[3] != f->n || dec->shape[0] < 1 || dec->shape[2] < 1 ||
            dec->shape[0] > INT32_MAX || dec->shape[2] > INT32_MAX)
        {
            char se[64], sd[64];
            return atn_error_set(err, ATN_E_FORMAT, "%s: tensor 'cross' has shape %s; with 'encoder' %s and 'decoder' "
                                 "%s it must be [decoder layers, heads, decoder tokens, encoder tokens]", f->path,
                                 shape_str(cross, s, sizeof s), shape_str(enc, se, sizeof se),
                                 shape_str(dec, sd, sizeof sd));
        }
        f->n_dec_layers = (int32_t)dec->shape[0];
        f->n_tgt = (int32_t)dec->shape[2];
        f->info.n_stacks = 3;
        if ((t = atn_st_find(f->st, "target_ids"))) {
            if (t->ndim != 1 || t->shape[0] != f->n_tgt || !is_int(t->dtype))
                return atn_error_set(err, ATN_E_FORMAT, "%s: tensor 'target_ids' is %s %s; expected integers of shape "
                                     "[%d] (one per decoder token)", f->path, atn_st_dtype_name(t->dtype),
                                     shape_str(t, s, sizeof s), f->n_tgt);
        }
        if (!(f->tgt_ids = malloc((size_t)f->n_tgt * sizeof *f->tgt_ids)))
            return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", f->path);
        for (int32_t i = 0; i < f->n_tgt; i++) {
            int64_t v = t ? int_at(t, (uint64_t)i) : -1;
            if (t && (v < 0 || v > INT32_MAX))
                return atn_error_set(err, ATN_E_FORMAT, "%s: tensor 'target_ids'[%d] is %lld; expected a vocabulary "
                                     "id (0 or more)", f->path, i, (long long)v);
            f->tgt_ids[i] = (int32_t)v;
        }
    }
    return ATN_OK;
}

static atn_status meta_strings(const atn_attn_file *f, const char *key, int64_t want, const cJSON **out,
                               atn_error *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->meta, key);
    *out = v;
    if (!v)
        return ATN_OK;
    if (!cJSON_IsArray(v))
        return atn_error_set(err, ATN_E_FORMAT, "%s: metadata \"%s\" is not a JSON list of strings", f->path, key);
    int32_t i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++)
        if (!cJSON_IsString(e))
            return atn_error_set(err, ATN_E_FORMAT, "%s: metadata \"%s\"[%d] is not a string", f->path, key, i);
    if (want >= 0 && i != want)
        return atn_error_set(err, ATN_E_FORMAT, "%s: metadata \"%s\" has %d tokens but the attention has %lld", f->path,
                             key, i, (long long)want);
    return ATN_OK;
}

static const char *meta_string(atn_attn_file *f, const char *key, atn_status *st, atn_error *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->meta, key);
    if (!v)
        return "";
    if (!cJSON_IsString(v)) {
        *st = atn_error_set(err, ATN_E_FORMAT, "%s: metadata \"%s\" is not a JSON string", f->path, key);
        return "";
    }
    return v->valuestring;
}

static const struct {
    const char *name;
    atn_token_role role;
    bool special;
} role_names[] = {
    {"word", ATN_TOKEN_WORD, false}, {"cls", ATN_TOKEN_CLS, true}, {"sep", ATN_TOKEN_SEP, true},
    {"mask", ATN_TOKEN_MASK, true},  {"pad", ATN_TOKEN_PAD, true}, {"unk", ATN_TOKEN_UNK, false},
};

/* Roles from the usual spellings, for files that give none. */
static void guess_role(atn_token *t) {
    static const struct {
        const char *text;
        atn_token_role role;
    } usual[] = {{"[CLS]", ATN_TOKEN_CLS}, {"<s>", ATN_TOKEN_CLS},   {"[SEP]", ATN_TOKEN_SEP},
                 {"</s>", ATN_TOKEN_SEP},  {"[PAD]", ATN_TOKEN_PAD}, {"<pad>", ATN_TOKEN_PAD},
                 {"[MASK]", ATN_TOKEN_MASK}, {"<mask>", ATN_TOKEN_MASK}, {"[UNK]", ATN_TOKEN_UNK},
                 {"<unk>", ATN_TOKEN_UNK}};
    for (size_t i = 0; i < sizeof usual / sizeof usual[0]; i++)
        if (!strcmp(t->text, usual[i].text)) {
            t->role = usual[i].role;
            t->special = true;
        }
}

/* The metadata's "format", before anything else: a model's weights passed by mistake say so. */
static atn_status check_format(atn_attn_file *f, atn_error *err) {
    if (!f->meta && !(f->meta = cJSON_CreateObject()))
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", f->path);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(f->meta, "format");
    if (!fmt && !strcmp(f->container, "safetensors"))
        return atn_error_set(err, ATN_E_FORMAT, "%s: not an attention file: its __metadata__ has no \"format\" "
                             "(expected \"%s\"; is it a model's weights?)", f->path, ATN_ATTN_FORMAT);
    if (fmt && (!cJSON_IsString(fmt) || strncmp(fmt->valuestring, "attnscope-attention/", 20)))
        return atn_error_set(err, ATN_E_FORMAT, "%s: metadata \"format\" is %s%.60s%s, not \"%s\" (a model's "
                             "weights? an attention file comes from attnscope run -o X.safetensors or "
                             "docs/attention-file.md)", f->path,
                             cJSON_IsString(fmt) ? "\"" : "", cJSON_IsString(fmt) ? fmt->valuestring : "not a string",
                             cJSON_IsString(fmt) ? "\"" : "", ATN_ATTN_FORMAT);
    if (fmt && strcmp(fmt->valuestring, ATN_ATTN_FORMAT))
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: format \"%.60s\" is newer than this attnscope reads (\"%s\")",
                             f->path, fmt->valuestring, ATN_ATTN_FORMAT);
    return ATN_OK;
}

/* The metadata keys, then the encoding. */
static atn_status read_metadata(atn_attn_file *f, atn_error *err) {
    atn_status st = ATN_OK;
    f->info.model_id = meta_string(f, "model_id", &st, err);
    f->info.family = meta_string(f, "family", &st, err);
    f->info.source = meta_string(f, "source", &st, err);
    f->info.positions = meta_string(f, "positions", &st, err);
    if (st != ATN_OK)
        return st;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->meta, "causal");
    if (v && !cJSON_IsBool(v))
        return atn_error_set(err, ATN_E_FORMAT, "%s: metadata \"causal\" is not true or false", f->path);
    f->info.causal = v && cJSON_IsTrue(v);
    for (int i = 0; f->layer_heads && i < 2; i++)
        if (cJSON_GetObjectItemCaseSensitive(f->meta, i ? "kv_heads" : "n_kv_heads"))
            return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: metadata \"%s\" is not read for layers of different "
                                 "head counts (one K/V map for every layer); leave it out", f->path,
                                 i ? "kv_heads" : "n_kv_heads");
    if ((v = cJSON_GetObjectItemCaseSensitive(f->meta, "n_kv_heads"))) {
        if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 1 ||
            v->valuedouble > f->H || f->H % (int32_t)v->valuedouble)
            return atn_error_set(err, ATN_E_FORMAT, "%s: metadata \"n_kv_heads\" must be a whole number dividing the "
                                 "%d heads", f->path, f->H);
        f->info.n_kv_heads = (int32_t)v->valuedouble;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(f->meta, "kv_heads"))) {
        /* the map must be the one n_kv_heads implies, query head h reading K/V head
           h / (H / n_kv_heads) (what repeat_kv does; the capture and --by-kv-group assume it) */
        int32_t i = 0, nkv = f->info.n_kv_heads ? f->info.n_kv_heads : f->H;
        bool ok = cJSON_IsArray(v) && cJSON_GetArraySize(v) == f->H;
        for (const cJSON *e = ok ? v->child : NULL; e && ok; e = e->next, i++)
            ok = cJSON_IsNumber(e) && e->valuedouble == (double)(i / (f->H / nkv));
        if (!ok)
            return atn_error_set(err, ATN_E_FORMAT, "%s: metadata \"kv_heads\" must list, for each of the %d query heads "
                                 "h, its K/V head h / %d (%d K/V heads%s)", f->path, f->H, f->H / nkv, nkv,
                                 f->info.n_kv_heads ? ", as \"n_kv_heads\" says" : ": no \"n_kv_heads\"");
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(f->meta, "window"))) {
        bool ok = cJSON_IsNumber(v) || cJSON_IsNull(v) || (cJSON_IsArray(v) && cJSON_GetArraySize(v) == f->L);
        for (const cJSON *e = cJSON_IsArray(v) ? v->child : NULL; e && ok; e = e->next)
            ok = cJSON_IsNumber(e) || cJSON_IsNull(e);
        if (!ok)
            return atn_error_set(err, ATN_E_FORMAT, "%s: metadata \"window\" must be a number, null, or a list of %d "
                                 "(one per layer)", f->path, f->L);
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(f->meta, "scale"))) {   /* the trace's factor */
        bool ok = (cJSON_IsNumber(v) && v->valuedouble > 0) || (cJSON_IsArray(v) && cJSON_GetArraySize(v) == f->L);
        for (const cJSON *e = cJSON_IsArray(v) ? v->child : NULL; e && ok; e = e->next)
            ok = cJSON_IsNumber(e) && e->valuedouble > 0;
        if (!ok)
            return atn_error_set(err, ATN_E_FORMAT, "%s: metadata \"scale\" must be a number above 0, or a list of %d "
                                 "(one per layer)", f->path, f->L);
    }
    const cJSON *tokens, *roles, *qt, *kt;
    const atn_st_tensor *cross = atn_st_find(f->st, "cross");
    if ((st = meta_strings(f, "tokens", f->n, &tokens, err)) ||
        (st = meta_strings(f, "token_roles", f->n, &roles, err)) ||
        (st = meta_strings(f, "query_tokens", cross && cross->ndim == 4 ? cross->shape[2] : -1, &qt, err)) ||
        (st = meta_strings(f, "key_tokens", cross && cross->ndim == 4 ? cross->shape[3] : -1, &kt, err)))
        return st;
    if (qt && f->n_tgt > 0) {   /* the decoder's token texts, for the stacks */
        if (!(f->query_tokens = calloc((size_t)f->n_tgt, sizeof *f->query_tokens)))
            return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", f->path);
        int32_t i = 0;
        for (const cJSON *e = qt->child; e && i < f->n_tgt; e = e->next, i++)
            if (!(f->query_tokens[i] = strdup(e->valuestring)))
                return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", f->path);
    }
    if (!tokens && f->npz_tokens && f->n_npz_tokens != f->n)
        return atn_error_set(err, ATN_E_FORMAT, "%s: the \"tokens\" array has %d tokens but the attention has %d",
                             f->path, f->n_npz_tokens, f->n);

    atn_encoding *e = f->enc = atn_encoding_alloc(f->n);
    if (!e)
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory for %d tokens", f->path, f->n);
    const atn_st_tensor *ids = atn_st_find(f->st, "token_ids"), *mask = atn_st_find(f->st, "mask"),
                        *types = atn_st_find(f->st, "type_ids");
    const cJSON *tk = tokens ? tokens->child : NULL, *rk = roles ? roles->child : NULL;
    for (int32_t i = 0; i < f->n; i++) {
        atn_token *t = &e->tokens[i];
        e->ids[i] = ids ? (int32_t)int_at(ids, (uint64_t)i) : -1;
        e->mask[i] = mask ? (int32_t)int_at(mask, (uint64_t)i) : 1;
        e->type_ids[i] = types ? (int32_t)int_at(types, (uint64_t)i) : 0;
        char id_text[24];
        snprintf(id_text, sizeof id_text, "#%d", ids ? e->ids[i] : i);
        const char *text = tk ? tk->valuestring : f->npz_tokens ? f->npz_tokens[i] : id_text;
        if (!(t->text = strdup(text)))
            return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", f->path);
        t->id = e->ids[i];
        t->type_id = e->type_ids[i];
        t->start = t->end = t->segment = -1;
        if (rk) {
            size_t r = 0;
            while (r < sizeof role_names / sizeof role_names[0] && strcmp(rk->valuestring, role_names[r].name))
                r++;
            if (r == sizeof role_names / sizeof role_names[0])
                return atn_error_set(err, ATN_E_FORMAT, "%s: metadata \"token_roles\"[%d] is \"%.40s\" (word, cls, sep, "
                                     "mask, pad or unk)", f->path, i, rk->valuestring);
            t->role = role_names[r].role;
            t->special = role_names[r].special;
            rk = rk->next;
        } else {
            guess_role(t);
        }
        if (tk)
            tk = tk->next;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(f->meta, "special_tokens"))) {
        if (!cJSON_IsArray(v))
            return atn_error_set(err, ATN_E_FORMAT, "%s: metadata \"special_tokens\" is not a list of positions", f->path);
        for (int32_t i = 0; i < f->n; i++)
            e->tokens[i].special = false;
        for (const cJSON *p = v->child; p; p = p->next) {
            if (!cJSON_IsNumber(p) || p->valuedouble != floor(p->valuedouble) || p->valuedouble < 0 ||
                p->valuedouble >= f->n)
                return atn_error_set(err, ATN_E_FORMAT, "%s: metadata \"special_tokens\" holds a position outside 0..%d",
                                     f->path, f->n - 1);
            e->tokens[(int32_t)p->valuedouble].special = true;
        }
    }
    return ATN_OK;
}

atn_status atn_attn_file_open(const char *path, atn_attn_file **out, atn_error *err) {
    if (!out)
        return atn_error_set(err, ATN_E_INVALID, "atn_attn_file_open: NULL out");
    *out = NULL;
    if (!path || !*path)
        return atn_error_set(err, ATN_E_INVALID, "atn_attn_file_open: no path");
    for (int i = 0; pickle_ext[i]; i++)
        if (ends_with(path, pickle_ext[i]))
            return atn_error_set(err, ATN_E_UNSUPPORTED,
                                 "%s: a pickle is never opened (it can run code). Convert it where it was made, "
                                 "with numpy only: np.savez(\"attn.npz\", attn=a.float().numpy(), "
                                 "tokens=np.array(tokens)), or see docs/attention-file.md", path);
    atn_attn_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory opening %s", path);
    }
    pthread_mutex_init(&f->lock, NULL);
    atn_status st;
    if (ends_with(path, ".npz") || ends_with(path, ".npy")) {
        void *map = NULL;
        size_t len = 0;
        st = atn_map_file(path, ATN_WEIGHT_FILE_MAX, &map, &len, err);
        if (st == ATN_OK)
            st = ends_with(path, ".npz") ? open_npz(f, map, len, err) : open_npy(f, map, len, err);
    } else {
        st = open_safetensors(f, err);
    }
    if (st == ATN_OK)
        st = check_format(f, err);
    if (st == ATN_OK)
        st = find_attention(f, err);
    if (st == ATN_OK)
        st = check_optional(f, err);
    if (st == ATN_OK)
        st = read_metadata(f, err);
    size_t L = f->L > 0 ? (size_t)f->L : 1;
    if (st == ATN_OK && (!(f->layer_ptr = calloc(L, sizeof *f->layer_ptr)) ||
                         !(f->layer_own = calloc(L, sizeof *f->layer_own)) || !(f->checked = calloc(L, 1)) ||
                         !(f->head_checked = calloc(L * (f->H > 0 ? (size_t)f->H : 1), 1))))
        st = atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", path);
    if (st != ATN_OK) {
        atn_attn_file_free(f);
        return st;
    }
    f->info.n_layers = f->L;
    f->info.n_heads = f->H;
    f->info.n = f->n;
    f->info.dtype = atn_st_dtype_name(f->dtype);
    f->info.container = f->container;
    *out = f;
    return ATN_OK;
}

void atn_attn_file_free(atn_attn_file *f) {
    if (!f)
        return;
    for (int32_t l = 0; f->layer_own && l < f->L; l++)
        free(f->layer_own[l]);
    free(f->layer_own);
    free(f->layer_ptr);
    free(f->checked);
    free(f->head_checked);
    free(f->block);
    free(f->per_layer);
    free(f->layer_heads);
    for (int k = 0; k < 3; k++)
        free(f->stack_own[k]);
    for (int32_t i = 0; f->query_tokens && i < f->n_tgt; i++)
        free(f->query_tokens[i]);
    free(f->query_tokens);
    free(f->tgt_ids);
    for (int32_t i = 0; f->npz_tokens && i < f->n_npz_tokens; i++)
        free(f->npz_tokens[i]);
    free(f->npz_tokens);
    atn_encoding_free(f->enc);
    cJSON_Delete(f->meta);
    atn_st_close(f->st);
    if (f->map)
        munmap(f->map, f->map_len);
    free(f->path);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

atn_attn_file_info atn_attn_file_get_info(const atn_attn_file *f) {
    atn_attn_file_info none = {0};
    return f ? f->info : none;
}

const atn_encoding *atn_attn_file_encoding(const atn_attn_file *f) { return f ? f->enc : NULL; }

const char *const *atn_attn_file_query_tokens(const atn_attn_file *f, int32_t *n) {
    bool any = f && f->info.n_stacks && f->query_tokens;
    if (n)
        *n = any ? f->n_tgt : 0;
    return any ? (const char *const *)f->query_tokens : NULL;
}

/* ---- layers ------------------------------------------------------------------------- */

/* The warning about the rows (of the heads checked so far) that do not sum to 1. */
static void update_warning(atn_attn_file *f) {
    if (f->bad_rows <= 0)
        return;
    const char *tok = f->enc && f->worst_q < f->enc->n ? f->enc->tokens[f->worst_q].text : "";
    snprintf(f->warning, sizeof f->warning,
             "%s: %lld rows of '%s' do not sum to 1; the worst, layer %d head %d query %d (\"%.40s\"), sums to "
             "%.6g%s", f->path, (long long)f->bad_rows, f->primary, f->worst_l, f->worst_h, f->worst_q, tok,
             f->worst_sum, f->max_sum > 1.5 ? " (were pre-softmax scores saved as attention? save them as "
             "'scores' and softmax(scores) as 'attn')" : "");
}

atn_status atn_attn_file_check_head_locked(atn_attn_file *f, int32_t l, int32_t h, const float *a, atn_error *err) {
    size_t at = (size_t)l * f->H + h;
    if (f->head_checked[at])
        return ATN_OK;
    double tol = f->dtype == ATN_ST_F32 ? 1e-3 : f->dtype == ATN_ST_F16 ? 1e-2 : 4e-2;
    size_t n = (size_t)f->n;
    for (size_t i = 0; i < n; i++) {
        const float *row = a + ((size_t)h * n + i) * n;
        double sum = 0;
        for (size_t j = 0; j < n; j++) {
            float v = row[j];
            if (!isfinite(v) || v < 0) {
                char what[48];
                snprintf(what, sizeof what, isnan(v) ? "NaN" : isinf(v) ? "Inf" : "the negative value %.6g",
                         (double)v);
                return atn_error_set(err, ATN_E_FORMAT, "%s: '%s' holds %s at layer %d, head %d, query %zu, "
                                     "key %zu%s", f->path, f->per_layer ? f->per_layer[l]->name : f->primary, what,
                                     l, h, i, j,
                                     isfinite(v) ? " (were pre-softmax scores saved as attention? save them "
                                     "as 'scores' and their softmax as 'attn')" : "");
            }
            sum += v;
        }
        double dev = fabs(sum - 1);
        if (sum > f->max_sum)
            f->max_sum = sum;
        if (sum != 0 && dev > tol) {
            f->bad_rows++;
            if (dev > f->worst_dev) {
                f->worst_dev = dev;
                f->worst_sum = sum;
                f->worst_l = l;
                f->worst_h = h;
                f->worst_q = (int32_t)i;
            }
        }
    }
    update_warning(f);
    f->head_checked[at] = 1;
    return ATN_OK;
}

/* Refuses NaN/Inf and negative values; counts the rows that do not sum to 1: every head of
 * layer l not checked yet, in order. */
static atn_status check_layer(atn_attn_file *f, int32_t l, const float *a, atn_error *err) {
    for (int32_t h = 0; h < heads_of(f, l); h++) {   /* an absent head is zeros, not attention */
        atn_status st = atn_attn_file_check_head_locked(f, l, h, a, err);
        if (st != ATN_OK)
            return st;
    }
    f->checked[l] = true;
    return ATN_OK;
}

/* Where layer l's raw elements start, and whether they may be read as floats in place. */
static const uint8_t *layer_raw(const atn_attn_file *f, int32_t l) {
    if (f->per_layer)
        return f->per_layer[l]->data;
    return (const uint8_t *)f->attn->data + (size_t)l * f->H * f->n * f->n * atn_st_dtype_size(f->dtype);
}

static void convert(const atn_attn_file *f, float *dst, const uint8_t *src, size_t count) {
    if (f->dtype == ATN_ST_F16)
        atn_f16_to_f32_array(dst, src, count);
    else if (f->dtype == ATN_ST_BF16)
        atn_bf16_to_f32_array(dst, src, count);
    else
        memcpy(dst, src, count * sizeof(float));
}

/* Layer l as [H][n][n] floats into dst: its H_l heads converted, the absent ones zeros. */
static void fill_layer(const atn_attn_file *f, int32_t l, float *dst) {
    size_t nn = (size_t)f->n * f->n, have = (size_t)heads_of(f, l);
    convert(f, dst, layer_raw(f, l), have * nn);
    memset(dst + have * nn, 0, ((size_t)f->H - have) * nn * sizeof *dst);
}

atn_status atn_attn_file_layer(atn_attn_file *f, int32_t layer, const float **out, atn_error *err) {
    if (!f || !out)
        return atn_error_set(err, ATN_E_INVALID, "atn_attn_file_layer: NULL argument");
    pthread_mutex_lock(&f->lock);
    atn_status st = atn_attn_file_layer_locked(f, layer, out, err);
    pthread_mutex_unlock(&f->lock);
    return st;
}

atn_status atn_attn_file_layer_locked(atn_attn_file *f, int32_t layer, const float **out, atn_error *err) {
    atn_status st = atn_attn_file_layer_floats_locked(f, layer, out, err);
    if (st == ATN_OK && !f->checked[layer] && (st = check_layer(f, layer, *out, err)) != ATN_OK)
        *out = NULL;
    return st;
}

atn_status atn_attn_file_layer_floats_locked(atn_attn_file *f, int32_t layer, const float **out, atn_error *err) {
    *out = NULL;
    if (layer < 0 || layer >= f->L)
        return atn_error_set(err, ATN_E_INVALID, "%s: layer %d outside 0..%d", f->path, layer, f->L - 1);
    if (!f->layer_ptr[layer]) {
        const uint8_t *raw = layer_raw(f, layer);
        size_t count = (size_t)f->H * f->n * f->n;
        if (f->dtype == ATN_ST_F32 && ((uintptr_t)raw & 3) == 0 && heads_of(f, layer) == f->H) {
            f->layer_ptr[layer] = (const float *)(const void *)raw;
        } else {
            float *own = malloc(count * sizeof *own);
            if (!own)
                return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory for layer %d", f->path, layer);
            fill_layer(f, layer, own);
            f->layer_own[layer] = own;
            f->layer_ptr[layer] = own;
        }
    }
    *out = f->layer_ptr[layer];
    return ATN_OK;
}

const char *atn_attn_file_warning(const atn_attn_file *f) { return f && f->bad_rows > 0 ? f->warning : NULL; }

atn_status atn_attn_file_capture(atn_attn_file *f, const atn_capture **out, atn_progress_fn progress,
                                 void *user_data, atn_error *err) {
    if (!f || !out)
        return atn_error_set(err, ATN_E_INVALID, "atn_attn_file_capture: NULL argument");
    *out = NULL;
    if (f->cap_ready) {
        *out = &f->cap;
        return ATN_OK;
    }
    size_t per = (size_t)f->H * f->n * f->n;
    bool in_place = f->attn && f->dtype == ATN_ST_F32 && ((uintptr_t)f->attn->data & 3) == 0;
    if (!in_place && !f->block) {
        if (per > SIZE_MAX / sizeof(float) / (size_t)f->L || !(f->block = malloc((size_t)f->L * per * sizeof(float))))
            return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory for %d layers of attention", f->path, f->L);
    }
    for (int32_t l = 0; l < f->L; l++) {
        if (progress && !progress((double)l / f->L, ATN_STAGE_LAYER, user_data))
            return atn_error_set(err, ATN_E_CANCELLED, "%s: cancelled", f->path);
        if (!in_place && !f->layer_ptr[l]) {   /* convert straight into the block */
            float *dst = f->block + (size_t)l * per;
            fill_layer(f, l, dst);
            f->layer_ptr[l] = dst;
        } else if (!in_place) {
            memcpy(f->block + (size_t)l * per, f->layer_ptr[l], per * sizeof(float));
        }
        const float *a;
        atn_status st = atn_attn_file_layer(f, l, &a, err);
        if (st != ATN_OK)
            return st;
    }
    if (progress)
        progress(1.0, ATN_STAGE_LAYER, user_data);
    atn_status sst = atn_attn_file_make_stacks(f, err);
    if (sst != ATN_OK)
        return sst;
    f->cap = (atn_capture){.n_layers = f->L, .n_heads = f->H, .n = f->n, .enc = f->enc,
                           .n_kv_heads = f->info.n_kv_heads,
                           .attn = in_place ? (const float *)f->attn->data : f->block, .layer_heads = f->layer_heads,
                           .temperature = 1.0f, .nonfinite_layer = -1, .precision = ATN_PRECISION_FP32};
    if (f->info.n_stacks) {   /* an encoder-decoder's file: the run's fields for its stacks */
        f->cap.n_stacks = 3;
        f->cap.stacks = f->stacks;
        f->cap.n_dec_layers = f->n_dec_layers;
        f->cap.n_tgt = f->n_tgt;
        f->cap.target_ids = f->tgt_ids;
    }
    f->cap_ready = true;
    *out = &f->cap;
    return ATN_OK;
}

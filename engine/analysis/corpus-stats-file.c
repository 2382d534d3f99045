/* A corpus partial as a safetensors file (corpus-stats.h): the arrays as tensors, the
 * provenance in __metadata__.  The writer is small and fixed in its order (the header's keys,
 * the tensors' offsets), so a partial's bytes depend on its contents only; the reader checks
 * the tensors through engine/formats/safetensors.c and every field against the others.
 *
 *   counts            I64 [6]                 sentences, tokens, truncated, cut, skipped, pairs
 *   exemplars.count   I32 [L, H]
 *   exemplars.line    I64 [L, H, K]
 *   exemplars.pos     I32 [L, H, K, 6]        query, key, query start, end, key start, end
 *   exemplars.text    U8  [L, H, K, 2, 32]    query then key token text, NUL-padded
 *   exemplars.weight  F32 [L, H, K]
 *   hist.distance     U64 [L, H, 64]   hist.entropy U64 [L, H, 64]   hist.sink U64 [L, H, 20]
 *   lines             I64 [R, 2]              covered lines, first and last, sorted
 *   max, min          F64 [L, H, 11]
 *   offsets           U64 [L, H, 17, 3]       the weight at offsets -8..+8 summed over rows, fixed point
 *   offsets.rows      I64 [17]                the rows that had a token at each offset
 *                     (both absent from partials made before them: loaded with has_off false,
 *                     and written back without them, so such a file keeps its bytes)
 *   sums              U64 [L, H, 11, 2, 3]    sum and sum of squares, 192-bit fixed point
 * Multi-byte values are little-endian (this host's order: see the check below). */
#include "corpus-stats-private.h"
#include "formats/safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "corpus-stats-file.c writes the host's byte order as little-endian"
#endif

#define CS_FORMAT "attnscope-corpus-stats"
#define CS_FORMAT_VERSION "1"
#define CS_STAT_NAMES "entropy,entropy_norm,cls,sep,punct,self,prev,next,local,same_segment,distance"

enum { EX_POS = 6 };

typedef struct tensor_out {
    const char *name, *dtype;
    int ndim;
    int64_t shape[5];
    size_t elem;
} tensor_out;

static size_t count_of(const tensor_out *t) {
    size_t c = 1;
    for (int d = 0; d < t->ndim; d++)
        c *= (size_t)t->shape[d];
    return c;
}

atn_status atn_corpus_stats_save(const atn_corpus_stats *cs, const char *path, atn_error *err) {
    if (!cs || !path)
        return atn_error_set(err, ATN_E_INVALID, "corpus statistics: nothing to save");
    cs_sort_exemplars(cs);   /* the file holds them best first */
    int64_t L = cs->id.n_layers, H = cs->id.n_heads, K = cs->id.top_k, R = cs->n_ranges;
    size_t heads = (size_t)(L * H), k = (size_t)K;
    tensor_out t[] = {
        {"counts", "I64", 1, {CS_COUNTS}, 8},
        {"exemplars.count", "I32", 2, {L, H}, 4},
        {"exemplars.line", "I64", 3, {L, H, K}, 8},
        {"exemplars.pos", "I32", 4, {L, H, K, EX_POS}, 4},
        {"exemplars.text", "U8", 5, {L, H, K, 2, ATN_CS_TEXT_MAX}, 1},
        {"exemplars.weight", "F32", 3, {L, H, K}, 4},
        {"hist.distance", "U64", 3, {L, H, ATN_CS_DISTANCE_BINS}, 8},
        {"hist.entropy", "U64", 3, {L, H, ATN_CS_ENTROPY_BINS}, 8},
        {"hist.sink", "U64", 3, {L, H, ATN_CS_SINK_BINS}, 8},
        {"induction", "U64", 3, {L, H, CS_FX_WORDS}, 8},
        {"lines", "I64", 2, {R, 2}, 8},
        {"max", "F64", 3, {L, H, ATN_CS_STATS}, 8},
        {"min", "F64", 3, {L, H, ATN_CS_STATS}, 8},
        {"offsets", "U64", 4, {L, H, ATN_CS_OFFSETS, CS_FX_WORDS}, 8},
        {"offsets.rows", "I64", 1, {ATN_CS_OFFSETS}, 8},
        {"sums", "U64", 5, {L, H, ATN_CS_STATS, 2, CS_FX_WORDS}, 8},
    };
    int N = (int)(sizeof t / sizeof t[0]);
    if (!cs->has_off) {   /* a partial of before the offset sums: without them, as it was read */
        t[N - 3] = t[N - 1];
        N -= 2;
    }
    cJSON *root = cJSON_CreateObject(), *meta = cJSON_CreateObject();
    char num[32];
    const struct { const char *key, *value; } md[] = {
        {"format", CS_FORMAT}, {"format_version", CS_FORMAT_VERSION}, {"model", cs->id.model},
        {"revision", cs->id.revision}, {"tokenizer", cs->id.tokenizer}, {"precision", cs->id.precision},
        {"settings", cs->id.settings}, {"corpus", cs->id.corpus}, {"attnscope_version", cs->id.version},
        {"statistics", CS_STAT_NAMES},
        {"bins", "entropy 64 x 1/4 bit, distance 64 x 1 token, sink 20 x 1/20 (last bins open)"},
    };
    bool ok = root && meta && cJSON_AddItemToObject(root, "__metadata__", meta);
    if (!ok)
        cJSON_Delete(meta);
    for (size_t i = 0; ok && i < sizeof md / sizeof md[0]; i++)
        ok = cJSON_AddStringToObject(meta, md[i].key, md[i].value) != NULL;
    /* the role filters only when set: a file without them reads as unfiltered */
    if (ok && *cs->id.query_role)
        ok = cJSON_AddStringToObject(meta, "query_role", cs->id.query_role) != NULL;
    if (ok && *cs->id.key_role)
        ok = cJSON_AddStringToObject(meta, "key_role", cs->id.key_role) != NULL;
    snprintf(num, sizeof num, "%lld", (long long)cs->id.corpus_lines);
    ok = ok && cJSON_AddStringToObject(meta, "corpus_lines", num);
    snprintf(num, sizeof num, "%d", cs->id.top_k);
    ok = ok && cJSON_AddStringToObject(meta, "top_k", num);
    if (cs->id.n_kv_heads > 0) {   /* only a grouped-query model's: other partials' bytes stay as they were */
        snprintf(num, sizeof num, "%d", cs->id.n_kv_heads);
        ok = ok && cJSON_AddStringToObject(meta, "n_kv_heads", num);
    }
    size_t offset = 0;
    for (int i = 0; ok && i < N; i++) {
        cJSON *e = cJSON_CreateObject(), *shape = cJSON_CreateArray(), *offs = cJSON_CreateArray();
        ok = e && shape && offs && cJSON_AddItemToObject(root, t[i].name, e);
        if (!ok) {
            cJSON_Delete(e), cJSON_Delete(shape), cJSON_Delete(offs);
            break;
        }
        ok = cJSON_AddStringToObject(e, "dtype", t[i].dtype) && cJSON_AddItemToObject(e, "shape", shape);
        if (!ok)
            cJSON_Delete(shape);
        for (int d = 0; ok && d < t[i].ndim; d++)
            ok = cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t[i].shape[d]));
        size_t bytes = count_of(&t[i]) * t[i].elem;
        ok = ok && cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)offset)) &&
             cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(offset + bytes)));
        if (!ok || !cJSON_AddItemToObject(e, "data_offsets", offs)) {
            if (ok)
                cJSON_Delete(offs);
            ok = false;
        }
        offset += bytes;
    }
    char *json = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!json)
        return atn_error_set(err, ATN_E_NOMEM, "corpus statistics: out of memory");
    size_t hlen = strlen(json), padded = (hlen + 7) / 8 * 8, total = 8 + padded + offset;
    unsigned char *buf = malloc(total);
    if (!buf) {
        free(json);
        return atn_error_set(err, ATN_E_NOMEM, "corpus statistics: out of memory");
    }
    uint64_t hl = padded;
    memcpy(buf, &hl, 8);
    memcpy(buf + 8, json, hlen);
    memset(buf + 8 + hlen, ' ', padded - hlen);   /* the format's padding */
    free(json);
    unsigned char *p = buf + 8 + padded;
    memset(p, 0, offset);
    /* in the table's order */
    memcpy(p, cs->counts, CS_COUNTS * 8), p += CS_COUNTS * 8;
    memcpy(p, cs->n_ex, heads * 4), p += heads * 4;
    unsigned char *line = p, *pos = line + heads * k * 8, *text = pos + heads * k * EX_POS * 4;
    unsigned char *weight = text + heads * k * 2 * ATN_CS_TEXT_MAX;
    for (size_t h = 0; h < heads; h++)
        for (size_t j = 0; j < k; j++) {
            size_t at = h * k + j;
            const atn_cs_exemplar *e = &cs->ex[at];
            bool used = (int32_t)j < cs->n_ex[h];
            int64_t ln = used ? e->line : -1;
            int32_t ps[EX_POS] = {e->query, e->key, e->query_start, e->query_end, e->key_start, e->key_end};
            float w = used ? e->weight : 0;
            if (!used)
                for (int q = 0; q < EX_POS; q++)
                    ps[q] = -1;
            memcpy(line + at * 8, &ln, 8);
            memcpy(pos + at * EX_POS * 4, ps, sizeof ps);
            if (used) {
                memcpy(text + at * 2 * ATN_CS_TEXT_MAX, e->query_text, ATN_CS_TEXT_MAX);
                memcpy(text + at * 2 * ATN_CS_TEXT_MAX + ATN_CS_TEXT_MAX, e->key_text, ATN_CS_TEXT_MAX);
            }
            memcpy(weight + at * 4, &w, 4);
        }
    p = weight + heads * k * 4;
    static const int part_at[3] = {ATN_CS_ENTROPY_BINS, 0, ATN_CS_ENTROPY_BINS + ATN_CS_DISTANCE_BINS};
    static const int part_bins[3] = {ATN_CS_DISTANCE_BINS, ATN_CS_ENTROPY_BINS, ATN_CS_SINK_BINS};
    for (int part = 0; part < 3; part++)   /* distance, entropy, sink: the names' order */
        for (size_t h = 0; h < heads; h++) {
            memcpy(p, cs->hist + h * CS_HIST_BINS + part_at[part], (size_t)part_bins[part] * 8);
            p += (size_t)part_bins[part] * 8;
        }
    memcpy(p, cs->ind, heads * CS_FX_WORDS * 8), p += heads * CS_FX_WORDS * 8;
    if (R > 0)   /* no lines covered yet: ranges is NULL, and memcpy's source must not be */
        memcpy(p, cs->ranges, (size_t)R * 16), p += (size_t)R * 16;
    memcpy(p, cs->max, heads * ATN_CS_STATS * 8), p += heads * ATN_CS_STATS * 8;
    memcpy(p, cs->min, heads * ATN_CS_STATS * 8), p += heads * ATN_CS_STATS * 8;
    if (cs->has_off) {
        memcpy(p, cs->off, heads * ATN_CS_OFFSETS * CS_FX_WORDS * 8), p += heads * ATN_CS_OFFSETS * CS_FX_WORDS * 8;
        memcpy(p, cs->off_rows, sizeof cs->off_rows), p += sizeof cs->off_rows;
    }
    memcpy(p, cs->sums, heads * ATN_CS_STATS * 2 * CS_FX_WORDS * 8);
    atn_status st = atn_write_file_atomic(path, buf, total, err);
    free(buf);
    return st;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* The header's __metadata__ (the reader of safetensors.c hands out tensors only). */
static cJSON *read_metadata(const char *path, atn_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        atn_error_set(err, ATN_E_IO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    uint64_t hl = 0;
    char *json = NULL;
    cJSON *root = NULL;
    if (fread(&hl, 8, 1, f) == 1 && hl > 0 && hl <= ATN_ST_MAX_HEADER && (json = malloc(hl + 1)) &&
        fread(json, 1, hl, f) == hl) {
        json[hl] = 0;
        root = cJSON_Parse(json);
    }
    free(json);
    fclose(f);
    cJSON *meta = root ? cJSON_DetachItemFromObjectCaseSensitive(root, "__metadata__") : NULL;
    cJSON_Delete(root);
    if (!meta)
        atn_error_set(err, ATN_E_FORMAT, "%s: not a corpus statistics file (no safetensors __metadata__)", path);
    return meta;
}

static const char *meta_str(const cJSON *meta, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* The tensor name, with this dtype and shape, or NULL with an error naming it. */
static const atn_st_tensor *need(const atn_st_file *f, const char *path, const char *name, atn_st_dtype dtype,
                                 int ndim, const int64_t *shape, atn_error *err) {
    const atn_st_tensor *t = atn_st_find(f, name);
    char want[96], got[96];
    if (!t) {
        atn_error_set(err, ATN_E_FORMAT, "%s: no tensor \"%s\": not a corpus statistics file", path, name);
        return NULL;
    }
    bool ok = t->dtype == dtype && t->ndim == ndim;
    for (int d = 0; ok && d < ndim; d++)
        ok = shape[d] < 0 || t->shape[d] == shape[d];
    if (!ok) {
        atn_error_set(err, ATN_E_FORMAT, "%s: tensor \"%s\" is %s %s, expected %s %s", path, name,
                      atn_st_dtype_name(t->dtype), atn_st_shape_str(t->shape, t->ndim, got, sizeof got),
                      atn_st_dtype_name(dtype), atn_st_shape_str(shape, ndim, want, sizeof want));
        return NULL;
    }
    return t;
}

bool atn_corpus_stats_sniff(const char *path) {
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f)
        return false;
    unsigned char len8[8];
    char head[65536 + 1];
    bool found = false;
    if (fread(len8, 1, 8, f) == 8) {
        uint64_t len = 0;
        for (int i = 7; i >= 0; i--)
            len = len << 8 | len8[i];
        size_t want = len < sizeof head - 1 ? (size_t)len : sizeof head - 1;
        size_t got = fread(head, 1, want, f);
        head[got] = 0;
        found = got > 0 && head[0] == '{' && strstr(head, "\"" CS_FORMAT "\"") != NULL;
    }
    fclose(f);
    return found;
}

atn_corpus_stats *atn_corpus_stats_load(const char *path, atn_error *err) {
    if (!path) {
        atn_error_set(err, ATN_E_INVALID, "corpus statistics: no file");
        return NULL;
    }
    atn_st_file *f = NULL;
    if (atn_st_open(path, &f, err) != ATN_OK)
        return NULL;
    atn_corpus_stats *cs = NULL;
    cJSON *meta = read_metadata(path, err);
    if (!meta)
        goto fail;
    const char *format = meta_str(meta, "format"), *version = meta_str(meta, "format_version");
    if (!format || strcmp(format, CS_FORMAT)) {
        atn_error_set(err, ATN_E_FORMAT, "%s: not a corpus statistics file (__metadata__ \"format\" is not \"%s\")",
                      path, CS_FORMAT);
        goto fail;
    }
    if (!version || strcmp(version, CS_FORMAT_VERSION)) {
        atn_error_set(err, ATN_E_FORMAT, "%s: corpus statistics format version \"%s\"; this attnscope reads \"%s\"",
                      path, version ? version : "", CS_FORMAT_VERSION);
        goto fail;
    }
    atn_cs_identity id = {0};
    static const char *const keys[7] = {"model", "revision", "tokenizer", "precision", "settings", "corpus",
                                        "attnscope_version"};
    const char *vals[7];
    for (int i = 0; i < 7; i++)
        if (!(vals[i] = meta_str(meta, keys[i]))) {
            atn_error_set(err, ATN_E_FORMAT, "%s: __metadata__ has no \"%s\"", path, keys[i]);
            goto fail;
        }
    id.model = vals[0], id.revision = vals[1], id.tokenizer = vals[2], id.precision = vals[3];
    id.settings = vals[4], id.corpus = vals[5], id.version = vals[6];
    id.query_role = meta_str(meta, "query_role"), id.key_role = meta_str(meta, "key_role");
    for (int r = 0; r < 2; r++) {
        const char *role = r ? id.key_role : id.query_role;
        if (role && (!*role || !strcmp(role, "any") || !atn_cs_role_valid(role))) {
            atn_error_set(err, ATN_E_FORMAT, "%s: __metadata__ \"%s\" is not one of %s", path,
                          r ? "key_role" : "query_role", ATN_CS_ROLES + 5);
            goto fail;
        }
    }
    int64_t v;
    if (!parse_int(meta_str(meta, "corpus_lines"), 0, INT64_MAX, &id.corpus_lines)) {
        atn_error_set(err, ATN_E_FORMAT, "%s: __metadata__ \"corpus_lines\" is not a line count", path);
        goto fail;
    }
    if (!parse_int(meta_str(meta, "top_k"), 1, ATN_CS_TOP_MAX, &v)) {
        atn_error_set(err, ATN_E_FORMAT, "%s: __metadata__ \"top_k\" is not in 1..%d", path, ATN_CS_TOP_MAX);
        goto fail;
    }
    id.top_k = (int32_t)v;
    const atn_st_tensor *tc = atn_st_find(f, "exemplars.count");
    if (!tc || tc->ndim != 2 || tc->shape[0] < 1 || tc->shape[1] < 1 || tc->shape[0] > 4096 || tc->shape[1] > 4096) {
        atn_error_set(err, ATN_E_FORMAT, "%s: tensor \"exemplars.count\" is missing or not [layers, heads]", path);
        goto fail;
    }
    id.n_layers = (int32_t)tc->shape[0], id.n_heads = (int32_t)tc->shape[1];
    const char *kvs = meta_str(meta, "n_kv_heads");
    if (kvs && (!parse_int(kvs, 1, id.n_heads - 1, &v) || id.n_heads % v)) {
        atn_error_set(err, ATN_E_FORMAT, "%s: __metadata__ \"n_kv_heads\" (%s) does not divide the %d query heads "
                      "into groups", path, kvs, id.n_heads);
        goto fail;
    }
    id.n_kv_heads = kvs ? (int32_t)v : 0;
    int64_t L = id.n_layers, H = id.n_heads, K = id.top_k;
    cs = calloc(1, sizeof *cs);
    if (!cs || cs_set_identity(cs, &id, true, err) != ATN_OK || cs_alloc(cs, err) != ATN_OK) {
        if (!cs)
            atn_error_set(err, ATN_E_NOMEM, "corpus statistics: out of memory");
        goto fail;
    }
    size_t heads = (size_t)(L * H), k = (size_t)K;
    const atn_st_tensor *t;
    if (!(t = need(f, path, "counts", ATN_ST_I64, 1, (int64_t[]){CS_COUNTS}, err)))
        goto fail;
    memcpy(cs->counts, t->data, sizeof cs->counts);
    for (int c = 0; c < CS_COUNTS; c++)
        if (cs->counts[c] < 0) {
            atn_error_set(err, ATN_E_FORMAT, "%s: tensor \"counts\" has a negative count", path);
            goto fail;
        }
    if (!(t = need(f, path, "exemplars.count", ATN_ST_I32, 2, (int64_t[]){L, H}, err)))
        goto fail;
    memcpy(cs->n_ex, t->data, heads * 4);
    const atn_st_tensor *tl = need(f, path, "exemplars.line", ATN_ST_I64, 3, (int64_t[]){L, H, K}, err);
    const atn_st_tensor *tp = tl ? need(f, path, "exemplars.pos", ATN_ST_I32, 4, (int64_t[]){L, H, K, EX_POS}, err)
                                 : NULL;
    const atn_st_tensor *tt =
        tp ? need(f, path, "exemplars.text", ATN_ST_U8, 5, (int64_t[]){L, H, K, 2, ATN_CS_TEXT_MAX}, err) : NULL;
    const atn_st_tensor *tw = tt ? need(f, path, "exemplars.weight", ATN_ST_F32, 3, (int64_t[]){L, H, K}, err) : NULL;
    if (!tw)
        goto fail;
    for (size_t h = 0; h < heads; h++) {
        if (cs->n_ex[h] < 0 || cs->n_ex[h] > K) {
            atn_error_set(err, ATN_E_FORMAT, "%s: tensor \"exemplars.count\" has %d for a head, not 0..%lld", path,
                          cs->n_ex[h], (long long)K);
            goto fail;
        }
        for (int32_t j = 0; j < cs->n_ex[h]; j++) {
            size_t at = h * k + (size_t)j;
            atn_cs_exemplar *e = &cs->ex[at];
            int32_t ps[EX_POS];
            memcpy(&e->line, (const char *)tl->data + at * 8, 8);
            memcpy(ps, (const char *)tp->data + at * EX_POS * 4, sizeof ps);
            memcpy(e->query_text, (const char *)tt->data + at * 2 * ATN_CS_TEXT_MAX, ATN_CS_TEXT_MAX);
            memcpy(e->key_text, (const char *)tt->data + at * 2 * ATN_CS_TEXT_MAX + ATN_CS_TEXT_MAX, ATN_CS_TEXT_MAX);
            memcpy(&e->weight, (const char *)tw->data + at * 4, 4);
            e->query_text[ATN_CS_TEXT_MAX - 1] = e->key_text[ATN_CS_TEXT_MAX - 1] = 0;
            e->query = ps[0], e->key = ps[1], e->query_start = ps[2], e->query_end = ps[3];
            e->key_start = ps[4], e->key_end = ps[5];
            if (e->line < 1 || e->query < 0 || e->key < 0 || !(e->weight == e->weight) ||
                (j > 0 && atn_cs_exemplar_compare(&cs->ex[at - 1], e) >= 0)) {
                atn_error_set(err, ATN_E_FORMAT, "%s: exemplar %d of head %zu is out of range or out of order", path,
                              j, h);
                goto fail;
            }
        }
    }
    static const char *const hist_names[3] = {"hist.entropy", "hist.distance", "hist.sink"};
    static const int hist_bins[3] = {ATN_CS_ENTROPY_BINS, ATN_CS_DISTANCE_BINS, ATN_CS_SINK_BINS};
    for (int part = 0, at = 0; part < 3; at += hist_bins[part], part++) {
        if (!(t = need(f, path, hist_names[part], ATN_ST_U64, 3, (int64_t[]){L, H, hist_bins[part]}, err)))
            goto fail;
        for (size_t h = 0; h < heads; h++)
            memcpy(cs->hist + h * CS_HIST_BINS + at, (const char *)t->data + h * (size_t)hist_bins[part] * 8,
                   (size_t)hist_bins[part] * 8);
    }
    if (!(t = need(f, path, "lines", ATN_ST_I64, 2, (int64_t[]){-1, 2}, err)))
        goto fail;
    for (int64_t r = 0; r < t->shape[0]; r++) {
        int64_t rg[2];
        memcpy(rg, (const char *)t->data + r * 16, 16);
        if (rg[0] < 1 || rg[1] < rg[0] || (id.corpus_lines && rg[1] > id.corpus_lines) ||
            (cs->n_ranges && rg[0] <= cs->ranges[2 * cs->n_ranges - 1] + 1)) {
            atn_error_set(err, ATN_E_FORMAT, "%s: tensor \"lines\": range %lld-%lld is not after the one before it "
                          "within 1..%lld", path, (long long)rg[0], (long long)rg[1], (long long)id.corpus_lines);
            goto fail;
        }
        if (cs_add_range(cs, rg[0], rg[1], err) != ATN_OK)
            goto fail;
        cs->last_line = rg[1];
    }
    if (atn_st_find(f, "induction")) {   /* absent from the first partials (of no induction evidence) */
        if (!(t = need(f, path, "induction", ATN_ST_U64, 3, (int64_t[]){L, H, CS_FX_WORDS}, err)))
            goto fail;
        memcpy(cs->ind, t->data, heads * CS_FX_WORDS * 8);
    }
    if (!(t = need(f, path, "max", ATN_ST_F64, 3, (int64_t[]){L, H, ATN_CS_STATS}, err)))
        goto fail;
    memcpy(cs->max, t->data, heads * ATN_CS_STATS * 8);
    if (!(t = need(f, path, "min", ATN_ST_F64, 3, (int64_t[]){L, H, ATN_CS_STATS}, err)))
        goto fail;
    memcpy(cs->min, t->data, heads * ATN_CS_STATS * 8);
    if (atn_st_find(f, "offsets") || atn_st_find(f, "offsets.rows")) {
        if (!(t = need(f, path, "offsets", ATN_ST_U64, 4, (int64_t[]){L, H, ATN_CS_OFFSETS, CS_FX_WORDS}, err)))
            goto fail;
        memcpy(cs->off, t->data, heads * ATN_CS_OFFSETS * CS_FX_WORDS * 8);
        if (!(t = need(f, path, "offsets.rows", ATN_ST_I64, 1, (int64_t[]){ATN_CS_OFFSETS}, err)))
            goto fail;
        memcpy(cs->off_rows, t->data, sizeof cs->off_rows);
        for (int d = 0; d < ATN_CS_OFFSETS; d++)
            if (cs->off_rows[d] < 0) {
                atn_error_set(err, ATN_E_FORMAT, "%s: tensor \"offsets.rows\" has a negative count", path);
                goto fail;
            }
    } else {   /* made before the per-offset sums: no positional evidence */
        cs->has_off = false;
        free(cs->off);
        cs->off = NULL;
    }
    if (!(t = need(f, path, "sums", ATN_ST_U64, 5, (int64_t[]){L, H, ATN_CS_STATS, 2, CS_FX_WORDS}, err)))
        goto fail;
    memcpy(cs->sums, t->data, heads * ATN_CS_STATS * 2 * CS_FX_WORDS * 8);
    cJSON_Delete(meta);
    atn_st_close(f);
    return cs;
fail:
    cJSON_Delete(meta);
    atn_st_close(f);
    atn_corpus_stats_free(cs);
    return NULL;
}

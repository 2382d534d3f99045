/* The safetensors reader: validates the whole header of a mapped file before any tensor
 * is handed out (see safetensors.h for the checks), so nothing outside the file is read. */
#include "formats/safetensors.h"

#include "core/files.h"
#include "core/json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian; this reader does not byte-swap"
#endif

struct atn_st_file {
    char *path;
    const uint8_t *buf;
    size_t len;
    void *map;            /* owned mapping (NULL when parsing a borrowed buffer) */
    size_t map_len;
    atn_st_view *views;   /* the views tensors point to (atn_st_adopt), or NULL */
    struct st_copy {      /* owned anonymous blocks, one per materialised view */
        void *ptr;
        size_t len;
    } *copies;
    int32_t n_copies;
    atn_st_tensor *tensors;
    int32_t n_tensors;
    char *names;          /* all names, NUL-separated */
};

static const struct {
    const char *name;
    size_t size;
} dtype_info[] = {
    [ATN_ST_F32] = {"F32", 4},   [ATN_ST_F16] = {"F16", 2},   [ATN_ST_BF16] = {"BF16", 2},
    [ATN_ST_F64] = {"F64", 8},   [ATN_ST_I64] = {"I64", 8},   [ATN_ST_I32] = {"I32", 4},
    [ATN_ST_I16] = {"I16", 2},   [ATN_ST_I8] = {"I8", 1},     [ATN_ST_U64] = {"U64", 8},
    [ATN_ST_U32] = {"U32", 4},   [ATN_ST_U16] = {"U16", 2},   [ATN_ST_U8] = {"U8", 1},
    [ATN_ST_BOOL] = {"BOOL", 1}, [ATN_ST_F8_E4M3] = {"F8_E4M3", 1},
    [ATN_ST_F8_E5M2] = {"F8_E5M2", 1},
};
enum { N_DTYPES = sizeof dtype_info / sizeof dtype_info[0] };

const char *atn_st_dtype_name(atn_st_dtype dtype) {
    return (unsigned)dtype < N_DTYPES ? dtype_info[dtype].name : "?";
}

size_t atn_st_dtype_size(atn_st_dtype dtype) {
    return (unsigned)dtype < N_DTYPES ? dtype_info[dtype].size : 0;
}

const char *atn_st_shape_str(const int64_t *shape, int ndim, char *buf, size_t size) {
    size_t used = 0;
    if (size == 0)
        return buf;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "",
                                 (long long)shape[i]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

/* A JSON number that is an exact non-negative integer no larger than 2^53. */
static bool json_uint(const cJSON *item, uint64_t *out) {
    if (!cJSON_IsNumber(item))
        return false;
    double v = item->valuedouble;
    if (!isfinite(v) || v < 0 || v > 9007199254740992.0 || v != floor(v))
        return false;
    *out = (uint64_t)v;
    return true;
}

static int cmp_tensor_name(const void *a, const void *b) {
    return strcmp(((const atn_st_tensor *)a)->name, ((const atn_st_tensor *)b)->name);
}

static int cmp_tensor_offset(const void *a, const void *b) {
    const atn_st_tensor *x = *(const atn_st_tensor *const *)a;
    const atn_st_tensor *y = *(const atn_st_tensor *const *)b;
    if (x->file_offset != y->file_offset)
        return x->file_offset < y->file_offset ? -1 : 1;
    return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

/* Fills t from one header entry; data_len is the size of the data area. */
static atn_status parse_entry(const char *origin, const cJSON *entry, const uint8_t *data,
                              uint64_t data_start, uint64_t data_len, atn_st_tensor *t,
                              atn_error *err) {
    const char *name = entry->string;
    if (!cJSON_IsObject(entry))
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: tensor '%s': header entry is not a JSON object", origin, name);

    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(entry, "dtype");
    if (!cJSON_IsString(dtype))
        return atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s': \"dtype\" %s", origin, name,
                             dtype ? "is not a string" : "is missing");
    int found = -1;
    for (int i = 0; i < N_DTYPES; i++)
        if (strcmp(dtype->valuestring, dtype_info[i].name) == 0)
            found = i;
    if (found < 0)
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: tensor '%s': unknown dtype \"%.40s\" (expected F32, F16, BF16 "
                             "or another safetensors dtype)", origin, name, dtype->valuestring);
    t->dtype = (atn_st_dtype)found;

    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(entry, "shape");
    if (!cJSON_IsArray(shape))
        return atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s': \"shape\" %s", origin, name,
                             shape ? "is not an array" : "is missing");
    int ndim = cJSON_GetArraySize(shape);
    if (ndim > ATN_ST_MAX_DIMS)
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: tensor '%s': %d dimensions (at most %d supported)", origin,
                             name, ndim, ATN_ST_MAX_DIMS);
    t->ndim = ndim;
    uint64_t count = 1;
    bool overflow = false;
    int d = 0;
    for (const cJSON *dim = shape->child; dim; dim = dim->next, d++) {
        uint64_t v;
        if (!json_uint(dim, &v))
            return atn_error_set(err, ATN_E_FORMAT,
                                 "%s: tensor '%s': shape[%d] is not a non-negative integer "
                                 "(up to 2^53)",
                                 origin, name, d);
        t->shape[d] = (int64_t)v;
        if (__builtin_mul_overflow(count, v, &count))
            overflow = true;
    }
    uint64_t nbytes = 0;
    if (overflow || __builtin_mul_overflow(count, (uint64_t)dtype_info[found].size, &nbytes)) {
        char s[256];
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: tensor '%s': shape %s overflows (its byte size does not fit "
                             "in 64 bits)", origin, name, atn_st_shape_str(t->shape, ndim, s,
                                                                            sizeof s));
    }
    t->count = count;
    t->nbytes = nbytes;

    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(entry, "data_offsets");
    uint64_t begin, end;
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 ||
        !json_uint(cJSON_GetArrayItem(offs, 0), &begin) ||
        !json_uint(cJSON_GetArrayItem(offs, 1), &end))
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: tensor '%s': \"data_offsets\" %s (expected [begin, end] with "
                             "non-negative integers up to 2^53)", origin, name,
                             offs ? "is malformed" : "is missing");
    if (begin > end)
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: tensor '%s': data_offsets [%llu, %llu] has begin after end",
                             origin, name, (unsigned long long)begin, (unsigned long long)end);
    if (end > data_len)
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: tensor '%s': data_offsets [%llu, %llu] past the end of the "
                             "data area (%llu bytes from file offset %llu)",
                             origin, name, (unsigned long long)begin, (unsigned long long)end,
                             (unsigned long long)data_len, (unsigned long long)data_start);
    if (end - begin != nbytes) {
        char s[256];
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: tensor '%s': shape %s of %s needs %llu bytes but data_offsets "
                             "[%llu, %llu] hold %llu", origin, name,
                             atn_st_shape_str(t->shape, ndim, s, sizeof s),
                             dtype_info[found].name, (unsigned long long)nbytes,
                             (unsigned long long)begin, (unsigned long long)end,
                             (unsigned long long)(end - begin));
    }
    t->file_offset = data_start + begin;
    t->data = data + begin;
    return ATN_OK;
}

atn_status atn_st_parse(const char *origin, const void *buf_, size_t len, atn_st_file **out,
                        atn_error *err) {
    const uint8_t *buf = buf_;
    *out = NULL;
    if (len < 8)
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: truncated: the file is %zu bytes, too short for the 8-byte "
                             "header size", origin, len);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | buf[i];
    if (hlen == 0)
        return atn_error_set(err, ATN_E_FORMAT, "%s: header size is 0 (expected a JSON header)",
                             origin);
    if (hlen > len - 8)
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: header size %llu runs past the end of the file (%zu bytes); "
                             "the file is truncated or not safetensors", origin,
                             (unsigned long long)hlen, len);
    if (hlen > ATN_ST_MAX_HEADER)
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: header size %llu is larger than the %d-byte limit", origin,
                             (unsigned long long)hlen, (int)ATN_ST_MAX_HEADER);

    const char *json = (const char *)buf + 8;
    /* duplicate names are kept: the loop below refuses them by name */
    size_t jlen = (size_t)hlen, off = 0;
    while (jlen > 0 && json[jlen - 1] == '\0')   /* NUL padding is allowed after the header */
        jlen--;
    cJSON *root = NULL;
    switch (atn_json_parse_raw(json, jlen, ATN_JSON_KEEP_DUPLICATES, &root, &off)) {
    case ATN_JSON_PARSED:
        break;
    case ATN_JSON_SYNTAX:
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: the JSON header is invalid (near header byte %zu)", origin, off);
    case ATN_JSON_TRAILING:
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: the JSON header has extra bytes after its end (header "
                             "byte %zu)", origin, off);
    case ATN_JSON_NUL: {
        char key[96];
        atn_json_nul_key(json, jlen, key, sizeof key);
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: the JSON header holds a NUL character (\\u0000) inside a string "
                             "(header byte %zu, key \"%s\")", origin, off, key);
    }
    case ATN_JSON_TOO_BIG:
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: the JSON header is too large to parse (more than %d values)", origin,
                             (int)ATN_JSON_MAX_ALLOCS);
    case ATN_JSON_NOMEM:
    default:
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory while parsing the JSON header", origin);
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return atn_error_set(err, ATN_E_FORMAT, "%s: the JSON header is not an object", origin);
    }

    /* "__metadata__" is a flat map of strings (the format's HashMap<String, String>): anything
       else is refused, so a header cannot hide a large tree there */
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    if (meta) {
        bool flat = cJSON_IsObject(meta);
        for (const cJSON *m = flat ? meta->child : NULL; m && flat; m = m->next)
            flat = cJSON_IsString(m);
        if (!flat) {
            cJSON_Delete(root);
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"__metadata__\" must be an object of strings", origin);
        }
    }

    atn_st_file *f = calloc(1, sizeof *f);
    atn_status st = ATN_OK;
    int32_t n = 0;
    size_t names_len = 0;
    for (const cJSON *e = root->child; e; e = e->next) {
        if (strcmp(e->string, "__metadata__") == 0)
            continue;
        n++;
        names_len += strlen(e->string) + 1;
    }
    const uint8_t *data = buf + 8 + hlen;
    uint64_t data_start = 8 + hlen, data_len = len - data_start;
    atn_st_tensor **by_off = NULL;
    if (!f || !(f->path = strdup(origin)) ||
        !(f->tensors = calloc(n ? (size_t)n : 1, sizeof *f->tensors)) ||
        !(f->names = malloc(names_len ? names_len : 1)) ||
        !(by_off = malloc((n ? (size_t)n : 1) * sizeof *by_off))) {
        st = atn_error_set(err, ATN_E_NOMEM, "%s: out of memory reading the header", origin);
        goto fail;
    }
    f->buf = buf;
    f->len = len;

    char *name_at = f->names;
    for (const cJSON *e = root->child; e; e = e->next) {
        if (strcmp(e->string, "__metadata__") == 0)
            continue;
        atn_st_tensor *t = &f->tensors[f->n_tensors];
        if ((st = parse_entry(origin, e, data, data_start, data_len, t, err)) != ATN_OK)
            goto fail;
        size_t l = strlen(e->string) + 1;
        memcpy(name_at, e->string, l);
        t->name = name_at;
        name_at += l;
        by_off[f->n_tensors] = t;
        f->n_tensors++;
    }

    /* No two tensors may share bytes (empty tensors share nothing). */
    qsort(by_off, (size_t)n, sizeof *by_off, cmp_tensor_offset);
    const atn_st_tensor *prev = NULL;
    for (int32_t i = 0; i < n; i++) {
        const atn_st_tensor *t = by_off[i];
        if (t->nbytes == 0)
            continue;
        if (prev && t->file_offset < prev->file_offset + prev->nbytes) {
            st = atn_error_set(err, ATN_E_FORMAT,
                               "%s: tensors '%s' (data_offsets [%llu, %llu]) and '%s' "
                               "(data_offsets [%llu, %llu]) overlap", origin, prev->name,
                               (unsigned long long)(prev->file_offset - data_start),
                               (unsigned long long)(prev->file_offset - data_start + prev->nbytes),
                               t->name, (unsigned long long)(t->file_offset - data_start),
                               (unsigned long long)(t->file_offset - data_start + t->nbytes));
            goto fail;
        }
        prev = t;
    }

    qsort(f->tensors, (size_t)n, sizeof *f->tensors, cmp_tensor_name);
    for (int32_t i = 1; i < n; i++) {
        if (strcmp(f->tensors[i - 1].name, f->tensors[i].name) == 0) {
            st = atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s' appears twice in the header",
                               origin, f->tensors[i].name);
            goto fail;
        }
    }
    free(by_off);
    cJSON_Delete(root);
    *out = f;
    return ATN_OK;

fail:
    free(by_off);
    cJSON_Delete(root);
    atn_st_close(f);
    return st;
}

atn_status atn_st_open(const char *path, atn_st_file **out, atn_error *err) {
    *out = NULL;
    void *map;
    size_t len;
    atn_status st = atn_map_file(path, ATN_WEIGHT_FILE_MAX, &map, &len, err);
    if (st != ATN_OK)
        return st;
    if (len < 8) {
        if (map)
            munmap(map, len);
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: truncated: the file is %zu bytes, too short for the 8-byte "
                             "header size", path, len);
    }
    st = atn_st_parse(path, map, len, out, err);
    if (st != ATN_OK) {
        munmap(map, len);
        return st;
    }
    (*out)->map = map;
    (*out)->map_len = len;
    return ATN_OK;
}

void atn_st_close(atn_st_file *file) {
    if (!file)
        return;
    if (file->map)
        munmap(file->map, file->map_len);
    for (int32_t i = 0; i < file->n_copies; i++)
        if (file->copies[i].ptr)
            munmap(file->copies[i].ptr, file->copies[i].len);
    free(file->copies);
    free(file->views);
    free(file->tensors);
    free(file->names);
    free(file->path);
    free(file);
}

bool atn_st_detach_map(atn_st_file *file, void **ptr, size_t *len, bool *of_file) {
    *ptr = NULL;
    *len = 0;
    if (of_file)
        *of_file = false;
    if (file && file->map) {
        *ptr = file->map;
        *len = file->map_len;
        file->map = NULL;
        if (of_file)
            *of_file = true;
        return true;
    }
    for (int32_t i = 0; file && i < file->n_copies; i++) {
        if (file->copies[i].ptr) {
            *ptr = file->copies[i].ptr;
            *len = file->copies[i].len;
            file->copies[i].ptr = NULL;
            return true;
        }
    }
    return false;
}

atn_status atn_st_adopt(const char *path, atn_st_tensor *tensors, int32_t n, char *names,
                        void *map, size_t map_len, atn_st_view *views,
                        atn_st_file **out, atn_error *err) {
    *out = NULL;
    atn_st_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        free(tensors);
        free(names);
        free(views);
        if (map)
            munmap(map, map_len);
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", path);
    }
    f->tensors = tensors;
    f->n_tensors = n;
    f->names = names;
    f->map = map;
    f->map_len = map_len;
    f->buf = map;
    f->len = map_len;
    f->views = views;
    qsort(f->tensors, (size_t)n, sizeof *f->tensors, cmp_tensor_name);
    for (int32_t i = 1; i < n; i++) {
        if (strcmp(f->tensors[i - 1].name, f->tensors[i].name) == 0) {
            atn_status st = atn_error_set(err, ATN_E_FORMAT, "%s: tensor '%s' appears twice",
                                          path, f->tensors[i].name);
            atn_st_close(f);
            return st;
        }
    }
    *out = f;
    return ATN_OK;
}

const char *atn_st_path(const atn_st_file *file) { return file->path; }
int32_t atn_st_count(const atn_st_file *file) { return file->n_tensors; }

const atn_st_tensor *atn_st_at(const atn_st_file *file, int32_t i) {
    return i >= 0 && i < file->n_tensors ? &file->tensors[i] : NULL;
}

const atn_st_tensor *atn_st_find(const atn_st_file *file, const char *name) {
    atn_st_tensor key = {.name = name};
    return bsearch(&key, file->tensors, (size_t)file->n_tensors, sizeof key, cmp_tensor_name);
}

/* Copies a view's elements (esize bytes each) into out, row-major. */
static void gather(const atn_st_tensor *t, size_t esize, uint8_t *out) {
    const uint8_t *base = t->view->base;
    const int64_t *stride = t->view->stride;
    int64_t idx[ATN_ST_MAX_DIMS] = {0};
    uint64_t at = 0;
    for (uint64_t i = 0; i < t->count; i++) {
        memcpy(out + i * esize, base + at * esize, esize);
        for (int d = t->ndim - 1; d >= 0; d--) {
            at += (uint64_t)stride[d];
            if (++idx[d] < t->shape[d])
                break;
            at -= (uint64_t)stride[d] * (uint64_t)t->shape[d];
            idx[d] = 0;
        }
    }
}

/* "12 bytes", "3.40 MB", "1.07 GB" */
static const char *size_str(uint64_t n, char *buf, size_t size) {
    if (n >= 1000000000)
        snprintf(buf, size, "%.2f GB", (double)n / 1e9);
    else if (n >= 1000000)
        snprintf(buf, size, "%.2f MB", (double)n / 1e6);
    else
        snprintf(buf, size, "%llu bytes", (unsigned long long)n);
    return buf;
}

atn_status atn_st_materialise(atn_st_file *file, const atn_st_tensor *t, uint64_t max_bytes,
                              atn_error *err) {
    if (t->data || !t->view || t->nbytes == 0)
        return ATN_OK;
    ptrdiff_t i = t - file->tensors;
    if (i < 0 || i >= file->n_tensors)
        return atn_error_set(err, ATN_E_INVALID, "%s: tensor '%s' is not one of this file's",
                             file->path, t->name);
    bool broadcast = false;
    for (int d = 0; d < t->ndim; d++)
        broadcast |= t->shape[d] > 1 && t->view->stride[d] == 0;
    char sh[200], sd[200], need[40], have[40];
    size_str(t->nbytes, need, sizeof need);
    atn_st_shape_str(t->shape, t->ndim, sh, sizeof sh);
    atn_st_shape_str(t->view->stride, t->ndim, sd, sizeof sd);
    const char *kind = broadcast ? "a broadcast (stride-0)" : "a strided";
    if ((max_bytes && t->nbytes > max_bytes) || t->nbytes > SIZE_MAX / 2) {
        char budget[80] = "the address space";
        if (max_bytes)
            snprintf(budget, sizeof budget, "the memory budget of %s", size_str(max_bytes, have, sizeof have));
        return atn_error_set(err, ATN_E_NOMEM, "%s: tensor '%s' is %s view (sizes %s, strides %s) "
                             "whose copy needs %s, more than %s: refused", file->path, t->name,
                             kind, sh, sd, need, budget);
    }
    struct st_copy *copies = realloc(file->copies, (size_t)(file->n_copies + 1) * sizeof *copies);
    if (!copies)
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", file->path);
    file->copies = copies;
    size_t len = (size_t)t->nbytes;
    void *block = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED)
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory copying tensor '%s', %s view "
                             "(sizes %s, strides %s) of %s", file->path, t->name, kind, sh, sd, need);
    gather(t, atn_st_dtype_size(t->dtype), block);
    mprotect(block, len, PROT_READ);
    file->copies[file->n_copies++] = (struct st_copy){block, len};
    file->tensors[i].data = block;
    file->tensors[i].file_offset = 0;
    return ATN_OK;
}

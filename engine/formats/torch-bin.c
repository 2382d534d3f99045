/* pytorch_model.bin (see torch-bin.h): the zip and legacy layouts, storages checked against
 * their bytes, tensors checked against their storages, strided views kept as views. */
#include "formats/torch-bin.h"

#include "core/files.h"
#include "formats/torch-pickle.h"
#include "formats/zip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "torch checkpoints are little-endian; this reader does not byte-swap"
#endif

/* Where each storage's bytes are: base and how many bytes are there. */
typedef struct storage_bytes {
    const uint8_t *base;
    uint64_t avail;
} storage_bytes;

typedef struct tb_reader {
    const char *origin;       /* the file */
    char pkl_name[300];       /* "<file>: archive/data.pkl" */
    const uint8_t *buf;
    size_t len;
    atn_error *err;
    atn_pickle *pk;
    storage_bytes *sb;        /* per storage of pk */
} tb_reader;

static const char *shape_str(const int64_t *v, int n, char *buf, size_t size) {
    return atn_st_shape_str(v, n, buf, size);
}

/* Element index reached by the last element of t, checked for overflow: *last. */
static bool reach(const atn_pk_tensor *t, uint64_t *last, uint64_t *count) {
    uint64_t end = t->offset, c = 1;
    for (int d = 0; d < t->ndim; d++) {
        uint64_t s = (uint64_t)t->shape[d];
        if (__builtin_mul_overflow(c, s, &c))
            return false;
    }
    *count = c;
    if (c == 0) {
        *last = t->offset;
        return true;
    }
    for (int d = 0; d < t->ndim; d++) {
        uint64_t step;
        if (__builtin_mul_overflow((uint64_t)(t->shape[d] - 1), (uint64_t)t->stride[d], &step) ||
            __builtin_add_overflow(end, step, &end))
            return false;
    }
    *last = end;
    return true;
}

static bool contiguous(const atn_pk_tensor *t) {
    int64_t want = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->stride[d] != want)
            return false;
        want *= t->shape[d];
    }
    return true;
}

/* The tensors of the top-level dict, as a file object. */
static atn_status build(tb_reader *R, void *map, size_t map_len, atn_st_file **out) {
    const atn_pk_value *top = atn_pickle_result(R->pk);
    if (top->kind != ATN_PK_DICT)
        return atn_error_set(R->err, ATN_E_FORMAT, "%s: holds no state_dict (the pickle is "
                             "not a dict)", R->pkl_name);
    int32_t n = 0;
    size_t names_len = 0;
    for (size_t i = 0; i + 1 < top->n; i += 2) {
        const atn_pk_value *k = top->items[i], *v = top->items[i + 1];
        if (v->kind != ATN_PK_TENSOR)
            continue;
        if (k->kind != ATN_PK_STR || strlen(k->s) != k->n || k->n == 0)
            return atn_error_set(R->err, ATN_E_FORMAT, "%s: a tensor's name is not a "
                                 "non-empty string", R->pkl_name);
        n++;
        names_len += k->n + 1;
    }
    atn_st_tensor *ts = calloc(n ? (size_t)n : 1, sizeof *ts);
    char *names = malloc(names_len ? names_len : 1);
    atn_st_view *views = calloc(n ? (size_t)n : 1, sizeof *views);
    atn_status st = ATN_OK;
    if (!ts || !names || !views) {
        st = atn_error_set(R->err, ATN_E_NOMEM, "%s: out of memory", R->origin);
        goto fail;
    }
    char *name_at = names;
    int32_t j = 0;
    for (size_t i = 0; i + 1 < top->n; i += 2) {
        const atn_pk_value *k = top->items[i], *v = top->items[i + 1];
        if (v->kind != ATN_PK_TENSOR)
            continue;
        const atn_pk_tensor *pt = atn_pickle_tensor(R->pk, (int32_t)v->i);
        const atn_pk_storage *s = atn_pickle_storage(R->pk, pt->storage);
        const storage_bytes *b = &R->sb[pt->storage];
        atn_st_tensor *t = &ts[j++];
        memcpy(name_at, k->s, k->n + 1);
        t->name = name_at;
        name_at += k->n + 1;
        t->dtype = s->dtype;
        t->ndim = pt->ndim;
        memcpy(t->shape, pt->shape, sizeof t->shape);
        size_t esize = atn_st_dtype_size(s->dtype);
        uint64_t last = 0, count = 0;
        char sh[200], sd[200];
        if (!reach(pt, &last, &count) || __builtin_mul_overflow(count, esize, &t->nbytes)) {
            st = atn_error_set(R->err, ATN_E_FORMAT, "%s: tensor '%s': sizes %s and strides %s "
                               "overflow", R->pkl_name, t->name,
                               shape_str(pt->shape, pt->ndim, sh, sizeof sh),
                               shape_str(pt->stride, pt->ndim, sd, sizeof sd));
            goto fail;
        }
        t->count = count;
        if (count > 0 && last >= s->numel) {
            st = atn_error_set(R->err, ATN_E_FORMAT, "%s: tensor '%s': offset %llu, sizes %s and "
                               "strides %s reach element %llu of storage '%s', which holds %llu",
                               R->pkl_name, t->name, (unsigned long long)pt->offset,
                               shape_str(pt->shape, pt->ndim, sh, sizeof sh),
                               shape_str(pt->stride, pt->ndim, sd, sizeof sd),
                               (unsigned long long)last, s->key, (unsigned long long)s->numel);
            goto fail;
        }
        if (count == 0 || contiguous(pt)) {
            t->data = b->base + (count ? pt->offset * esize : 0);
            t->file_offset = (uint64_t)((const uint8_t *)t->data - R->buf);
        } else {
            /* kept as a view: copied only when a caller reads it (atn_st_materialise), so a
               broadcast tensor of terabytes declared in a few bytes costs nothing unread */
            atn_st_view *view = &views[j - 1];
            view->base = b->base + pt->offset * esize;
            memcpy(view->stride, pt->stride, sizeof view->stride);
            t->view = view;
            t->data = NULL;
            t->file_offset = 0;
        }
    }
    return atn_st_adopt(R->origin, ts, n, names, map, map_len, views, out, R->err);
fail:
    free(ts);
    free(names);
    free(views);
    return st;
}

/* ---- zip -------------------------------------------------------------------- */

static atn_status read_zip(tb_reader *R) {
    atn_zip *zip = NULL;
    atn_status st = atn_zip_open(R->origin, R->buf, R->len, &zip, R->err);
    if (st != ATN_OK)
        return st;
    const atn_zip_entry *pkl = NULL;
    size_t plen = 0;
    for (int32_t i = 0; i < atn_zip_count(zip); i++) {
        const atn_zip_entry *e = atn_zip_at(zip, i);
        const char *slash = strchr(e->name, '/');
        if (!slash || slash == e->name || strcmp(slash, "/data.pkl") != 0)
            continue;
        if (pkl) {
            st = atn_error_set(R->err, ATN_E_FORMAT, "%s: two pickles (%s and %s); expected "
                               "one <name>/data.pkl", R->origin, pkl->name, e->name);
            goto done;
        }
        pkl = e;
        plen = (size_t)(slash - e->name);
    }
    if (!pkl) {
        st = atn_error_set(R->err, ATN_E_FORMAT, "%s: a ZIP archive without <name>/data.pkl "
                           "(not a PyTorch checkpoint)", R->origin);
        goto done;
    }
    if (plen > 200) {
        st = atn_error_set(R->err, ATN_E_FORMAT, "%s: the archive name is too long", R->origin);
        goto done;
    }
    char entry[512];
    snprintf(entry, sizeof entry, "%.*s/byteorder", (int)plen, pkl->name);
    const atn_zip_entry *bo = atn_zip_find(zip, entry);
    if (bo && !(bo->size == 6 && memcmp(bo->data, "little", 6) == 0)) {
        st = atn_error_set(R->err, ATN_E_UNSUPPORTED, "%s: %s does not say \"little\"; only "
                           "little-endian checkpoints are read", R->origin, entry);
        goto done;
    }
    snprintf(R->pkl_name, sizeof R->pkl_name, "%s: %s", R->origin, pkl->name);
    if ((st = atn_pickle_load(R->pkl_name, pkl->data, (size_t)pkl->size, NULL, &R->pk,
                              R->err)) != ATN_OK)
        goto done;
    int32_t ns = atn_pickle_n_storages(R->pk);
    if (!(R->sb = calloc(ns ? (size_t)ns : 1, sizeof *R->sb))) {
        st = atn_error_set(R->err, ATN_E_NOMEM, "%s: out of memory", R->origin);
        goto done;
    }
    for (int32_t i = 0; i < ns; i++) {
        const atn_pk_storage *s = atn_pickle_storage(R->pk, i);
        if (strcmp(s->key, s->root_key) != 0) {
            st = atn_error_set(R->err, ATN_E_FORMAT, "%s: storage '%s' is a legacy view, which "
                               "the zip format does not have", R->pkl_name, s->key);
            goto done;
        }
        int n = snprintf(entry, sizeof entry, "%.*s/data/%s", (int)plen, pkl->name, s->key);
        const atn_zip_entry *e = n > 0 && n < (int)sizeof entry ? atn_zip_find(zip, entry) : NULL;
        if (!e) {
            st = atn_error_set(R->err, ATN_E_FORMAT, "%s: storage '%.100s' has no entry %.*s/data/"
                               "%.100s", R->pkl_name, s->key, (int)plen, pkl->name, s->key);
            goto done;
        }
        uint64_t need;
        if (__builtin_mul_overflow(s->numel, (uint64_t)atn_st_dtype_size(s->dtype), &need) ||
            need > e->size) {
            st = atn_error_set(R->err, ATN_E_FORMAT, "%s: storage '%s' of %llu %s elements is "
                               "larger than its entry %s (%llu bytes)", R->pkl_name, s->key,
                               (unsigned long long)s->numel, atn_st_dtype_name(s->dtype),
                               e->name, (unsigned long long)e->size);
            goto done;
        }
        R->sb[i] = (storage_bytes){e->data, e->size};
    }
done:
    atn_zip_close(zip);
    return st;
}

/* ---- legacy ----------------------------------------------------------------- */

/* qsort has no context argument: the pickle whose storages are being sorted (one reader
 * sorts at a time per thread). */
static _Thread_local const atn_pickle *sort_pk;

static int cmp_root(const void *a, const void *b) {
    return strcmp(atn_pickle_storage(sort_pk, *(const int32_t *)a)->root_key,
                  atn_pickle_storage(sort_pk, *(const int32_t *)b)->root_key);
}

static const uint8_t MAGIC[10] = {0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

static atn_status read_legacy(tb_reader *R) {
    char name[300];
    size_t at = 0, used = 0;
    atn_pickle *pk = NULL;
    atn_status st;
    /* 1: the magic number */
    snprintf(name, sizeof name, "%s: the legacy magic-number pickle", R->origin);
    if ((st = atn_pickle_load(name, R->buf, R->len, &used, &pk, R->err)) != ATN_OK)
        return st;
    const atn_pk_value *v = atn_pickle_result(pk);
    bool magic = v->kind == ATN_PK_BIGINT && v->n == sizeof MAGIC &&
                 memcmp(v->s, MAGIC, sizeof MAGIC) == 0;
    atn_pickle_free(pk);
    if (!magic)
        return atn_error_set(R->err, ATN_E_FORMAT, "%s: not a PyTorch checkpoint (a pickle, but "
                             "not torch.save's magic number)", R->origin);
    at += used;
    /* 2: the protocol version */
    snprintf(name, sizeof name, "%s: the legacy protocol pickle", R->origin);
    if ((st = atn_pickle_load(name, R->buf + at, R->len - at, &used, &pk, R->err)) != ATN_OK)
        return st;
    v = atn_pickle_result(pk);
    bool proto = v->kind == ATN_PK_INT && v->i == 1001;
    int64_t got = v->kind == ATN_PK_INT ? v->i : -1;
    atn_pickle_free(pk);
    if (!proto)
        return atn_error_set(R->err, ATN_E_UNSUPPORTED, "%s: legacy protocol version %lld "
                             "(only 1001 is known)", R->origin, (long long)got);
    at += used;
    /* 3: sys_info */
    snprintf(name, sizeof name, "%s: the legacy sys_info pickle", R->origin);
    if ((st = atn_pickle_load(name, R->buf + at, R->len - at, &used, &pk, R->err)) != ATN_OK)
        return st;
    v = atn_pickle_result(pk);
    bool big_endian = false;
    for (size_t i = 0; v->kind == ATN_PK_DICT && i + 1 < v->n; i += 2)
        if (v->items[i]->kind == ATN_PK_STR && strcmp(v->items[i]->s, "little_endian") == 0 &&
            v->items[i + 1]->kind == ATN_PK_BOOL && !v->items[i + 1]->i)
            big_endian = true;
    atn_pickle_free(pk);
    if (big_endian)
        return atn_error_set(R->err, ATN_E_UNSUPPORTED, "%s: saved on a big-endian machine; "
                             "only little-endian checkpoints are read", R->origin);
    at += used;
    /* 4: the state_dict */
    snprintf(R->pkl_name, sizeof R->pkl_name, "%s: the legacy state_dict pickle", R->origin);
    if ((st = atn_pickle_load(R->pkl_name, R->buf + at, R->len - at, &used, &R->pk,
                              R->err)) != ATN_OK)
        return st;
    at += used;
    /* 5: the storage keys, then each storage's count and bytes */
    snprintf(name, sizeof name, "%s: the legacy storage-key pickle", R->origin);
    if ((st = atn_pickle_load(name, R->buf + at, R->len - at, &used, &pk, R->err)) != ATN_OK)
        return st;
    at += used;
    int32_t ns = atn_pickle_n_storages(R->pk);
    v = atn_pickle_result(pk);
    /* the storages sorted by the key their bytes are listed under */
    int32_t *by_root = malloc((ns ? (size_t)ns : 1) * sizeof *by_root);
    if (!by_root || !(R->sb = calloc(ns ? (size_t)ns : 1, sizeof *R->sb))) {
        free(by_root);
        atn_pickle_free(pk);
        return atn_error_set(R->err, ATN_E_NOMEM, "%s: out of memory", R->origin);
    }
    for (int32_t i = 0; i < ns; i++)
        by_root[i] = i;
    sort_pk = R->pk;
    qsort(by_root, (size_t)ns, sizeof *by_root, cmp_root);
    if (v->kind != ATN_PK_LIST) {
        free(by_root);
        atn_pickle_free(pk);
        return atn_error_set(R->err, ATN_E_FORMAT, "%s: the storage keys are not a list", name);
    }
    for (size_t k = 0; k < v->n && st == ATN_OK; k++) {
        const atn_pk_value *key = v->items[k];
        if (key->kind != ATN_PK_STR) {
            st = atn_error_set(R->err, ATN_E_FORMAT, "%s: storage key %zu is not a string",
                               name, k);
            break;
        }
        /* its element size: from a storage of the state_dict rooted at this key */
        size_t lo = 0, hi = (size_t)ns;   /* the first of by_root with root_key >= key */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (strcmp(atn_pickle_storage(R->pk, by_root[mid])->root_key, key->s) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t esize = 0;
        if (lo < (size_t)ns && strcmp(atn_pickle_storage(R->pk, by_root[lo])->root_key, key->s) == 0)
            esize = atn_st_dtype_size(atn_pickle_storage(R->pk, by_root[lo])->dtype);
        if (!esize) {
            st = atn_error_set(R->err, ATN_E_FORMAT, "%s: storage '%.100s' is listed but no "
                               "tensor uses it (its element size is unknown)", name, key->s);
            break;
        }
        if (R->len - at < 8) {
            st = atn_error_set(R->err, ATN_E_FORMAT, "%s: truncated: the file ends before "
                               "storage '%s' (at byte %zu)", R->origin, key->s, at);
            break;
        }
        uint64_t count = 0, nbytes;
        for (int b = 7; b >= 0; b--)
            count = count << 8 | R->buf[at + (size_t)b];
        at += 8;
        if (__builtin_mul_overflow(count, (uint64_t)esize, &nbytes) || nbytes > R->len - at) {
            st = atn_error_set(R->err, ATN_E_FORMAT, "%s: storage '%s' of %llu elements (at byte "
                               "%zu) runs past the end of the file (%zu bytes)", R->origin,
                               key->s, (unsigned long long)count, at, R->len);
            break;
        }
        for (size_t j = lo; j < (size_t)ns; j++) {
            int32_t i = by_root[j];
            const atn_pk_storage *s = atn_pickle_storage(R->pk, i);
            if (strcmp(s->root_key, key->s) != 0)
                break;
            if (atn_st_dtype_size(s->dtype) != esize || s->view_offset > count ||
                s->numel > count - s->view_offset) {
                st = atn_error_set(R->err, ATN_E_FORMAT, "%s: storage '%s' holds %llu elements "
                                   "but the state_dict uses %llu at %llu", R->origin, s->key,
                                   (unsigned long long)count, (unsigned long long)s->numel,
                                   (unsigned long long)s->view_offset);
                break;
            }
            R->sb[i] = (storage_bytes){R->buf + at + s->view_offset * esize, s->numel * esize};
        }
        at += (size_t)nbytes;
    }
    atn_pickle_free(pk);
    free(by_root);
    if (st != ATN_OK)
        return st;
    for (int32_t i = 0; i < ns; i++)
        if (!R->sb[i].base)
            return atn_error_set(R->err, ATN_E_FORMAT, "%s: storage '%s' is used by the "
                                 "state_dict but its bytes are not in the file", R->origin,
                                 atn_pickle_storage(R->pk, i)->key);
    return ATN_OK;
}

/* ---- entry points ----------------------------------------------------------- */

static atn_status parse(const char *origin, const void *buf, size_t len, void *map,
                        size_t map_len, atn_st_file **out, atn_error *err) {
    *out = NULL;
    tb_reader R = {.origin = origin, .buf = buf, .len = len, .err = err};
    atn_status st;
    if (len >= 4 && memcmp(buf, "PK\x03\x04", 4) == 0)
        st = read_zip(&R);
    else if (len >= 2 && R.buf[0] == 0x80)
        st = read_legacy(&R);
    else if (len >= 262 && memcmp(R.buf + 257, "ustar", 5) == 0)
        st = atn_error_set(err, ATN_E_UNSUPPORTED, "%s: a tar checkpoint (torch before 0.4) is "
                           "not read; re-save it with a newer torch", origin);
    else
        st = atn_error_set(err, ATN_E_FORMAT, "%s: not a PyTorch checkpoint (neither a ZIP "
                           "archive nor a pickle)", origin);
    if (st == ATN_OK) {
        st = build(&R, map, map_len, out);
        map = NULL;   /* adopted (or unmapped by atn_st_adopt on failure) */
    }
    if (st != ATN_OK && map && !*out)
        munmap(map, map_len);
    atn_pickle_free(R.pk);
    free(R.sb);
    return st;
}

atn_status atn_torch_parse(const char *origin, const void *buf, size_t len,
                           atn_st_file **out, atn_error *err) {
    return parse(origin, buf, len, NULL, 0, out, err);
}

atn_status atn_torch_open(const char *path, atn_st_file **out, atn_error *err) {
    *out = NULL;
    void *map;
    size_t len;
    atn_status st = atn_map_file(path, ATN_WEIGHT_FILE_MAX, &map, &len, err);
    if (st != ATN_OK)
        return st;
    if (len == 0)
        return atn_error_set(err, ATN_E_FORMAT, "%s: truncated: the file is empty", path);
    return parse(path, map, len, map, len, out, err);
}

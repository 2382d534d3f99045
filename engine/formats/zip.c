/* The ZIP reader (see zip.h): the end-of-central-directory record, ZIP64 when present, the
 * central directory, and each entry's local header, all bounds-checked. */
#include "formats/zip.h"

#include <stdlib.h>
#include <string.h>

struct atn_zip {
    atn_zip_entry *entries;
    int32_t n;
    char *names;
};

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static int cmp_entry(const void *a, const void *b) {
    return strcmp(((const atn_zip_entry *)a)->name, ((const atn_zip_entry *)b)->name);
}

enum {
    EOCD_SIG = 0x06054b50, EOCD_LEN = 22,
    Z64_LOC_SIG = 0x07064b50, Z64_LOC_LEN = 20,
    Z64_EOCD_SIG = 0x06064b50, Z64_EOCD_LEN = 56,
    CD_SIG = 0x02014b50, CD_LEN = 46,
    LOCAL_SIG = 0x04034b50, LOCAL_LEN = 30,
};

/* Prints at most 200 bytes of a name that may hold anything. */
static void safe_name(char *out, size_t size, const uint8_t *p, size_t n) {
    size_t j = 0;
    for (size_t i = 0; i < n && j + 5 < size && i < 200; i++)
        out[j++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
    out[j] = '\0';
}

atn_status atn_zip_open(const char *origin, const void *buf_, size_t len, atn_zip **out,
                        atn_error *err) {
    const uint8_t *buf = buf_;
    *out = NULL;
    if (len < EOCD_LEN)
        return atn_error_set(err, ATN_E_FORMAT, "%s: truncated: %zu bytes is too short for a "
                             "ZIP archive", origin, len);
    /* the EOCD record: the last one, searched back over the longest comment (65535) */
    size_t eocd = SIZE_MAX;
    size_t lowest = len - EOCD_LEN > 65535 ? len - EOCD_LEN - 65535 : 0;
    for (size_t p = len - EOCD_LEN + 1; p-- > lowest;) {
        if (rd32(buf + p) == EOCD_SIG && p + EOCD_LEN + rd16(buf + p + 20) == len) {
            eocd = p;
            break;
        }
    }
    if (eocd == SIZE_MAX)
        return atn_error_set(err, ATN_E_FORMAT, "%s: no ZIP end-of-central-directory record "
                             "(the file is truncated or not a ZIP archive)", origin);
    const uint8_t *e = buf + eocd;
    uint64_t disk = rd16(e + 4), cd_disk = rd16(e + 6);
    uint64_t n_entries = rd16(e + 10), cd_size = rd32(e + 12), cd_off = rd32(e + 16);
    if (n_entries == 0xffff || cd_size == 0xffffffffu || cd_off == 0xffffffffu ||
        (eocd >= Z64_LOC_LEN && rd32(buf + eocd - Z64_LOC_LEN) == Z64_LOC_SIG)) {
        if (eocd < Z64_LOC_LEN || rd32(buf + eocd - Z64_LOC_LEN) != Z64_LOC_SIG)
            return atn_error_set(err, ATN_E_FORMAT, "%s: the ZIP directory needs ZIP64 but "
                                 "there is no ZIP64 locator", origin);
        uint64_t z = rd64(buf + eocd - Z64_LOC_LEN + 8);
        if (z > eocd - Z64_LOC_LEN || eocd - Z64_LOC_LEN - z < Z64_EOCD_LEN ||
            rd32(buf + z) != Z64_EOCD_SIG)
            return atn_error_set(err, ATN_E_FORMAT, "%s: the ZIP64 end-of-central-directory "
                                 "record at offset %llu is missing or past the end", origin,
                                 (unsigned long long)z);
        disk = rd32(buf + z + 16);
        cd_disk = rd32(buf + z + 20);
        n_entries = rd64(buf + z + 32);
        cd_size = rd64(buf + z + 40);
        cd_off = rd64(buf + z + 48);
    }
    if (disk != 0 || cd_disk != 0)
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: a multi-disk ZIP archive is not "
                             "supported", origin);
    if (cd_off > len || cd_size > len - cd_off)
        return atn_error_set(err, ATN_E_FORMAT, "%s: the ZIP central directory (%llu bytes at "
                             "offset %llu) runs past the end of the file (%zu bytes)", origin,
                             (unsigned long long)cd_size, (unsigned long long)cd_off, len);
    if (n_entries > ATN_ZIP_MAX_ENTRIES || n_entries > cd_size / CD_LEN)
        return atn_error_set(err, ATN_E_FORMAT, "%s: the ZIP directory claims %llu entries "
                             "(%llu bytes hold at most %llu; the limit is %d)", origin,
                             (unsigned long long)n_entries, (unsigned long long)cd_size,
                             (unsigned long long)(cd_size / CD_LEN), ATN_ZIP_MAX_ENTRIES);

    atn_zip *zip = calloc(1, sizeof *zip);
    size_t names_len = 0;
    /* first pass: sizes of the names */
    const uint8_t *cd = buf + cd_off, *cd_end = cd + cd_size;
    for (uint64_t i = 0, at = 0; i < n_entries; i++) {
        if (cd_size - at < CD_LEN || rd32(cd + at) != CD_SIG) {
            free(zip);
            return atn_error_set(err, ATN_E_FORMAT, "%s: ZIP central directory entry %llu "
                                 "(offset %llu) is malformed or past the directory's end",
                                 origin, (unsigned long long)i,
                                 (unsigned long long)(cd_off + at));
        }
        uint64_t rec = (uint64_t)CD_LEN + rd16(cd + at + 28) + rd16(cd + at + 30) +
                       rd16(cd + at + 32);
        if (rec > cd_size - at) {
            free(zip);
            return atn_error_set(err, ATN_E_FORMAT, "%s: ZIP central directory entry %llu "
                                 "runs past the directory's end", origin, (unsigned long long)i);
        }
        names_len += rd16(cd + at + 28) + 1u;
        at += rec;
    }
    if (!zip || !(zip->entries = calloc(n_entries ? n_entries : 1, sizeof *zip->entries)) ||
        !(zip->names = malloc(names_len ? names_len : 1))) {
        atn_zip_close(zip);
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory reading the ZIP directory",
                             origin);
    }
    char *name_at = zip->names;
    atn_status st = ATN_OK;
    const uint8_t *p = cd;
    for (uint64_t i = 0; i < n_entries; i++) {
        uint16_t flags = rd16(p + 8), method = rd16(p + 10);
        uint64_t csize = rd32(p + 20), usize = rd32(p + 24), local = rd32(p + 42);
        uint16_t nlen = rd16(p + 28), xlen = rd16(p + 30), clen = rd16(p + 32);
        const uint8_t *nm = p + CD_LEN, *x = nm + nlen;
        char shown[256];
        safe_name(shown, sizeof shown, nm, nlen);
        if (memchr(nm, '\0', nlen)) {
            st = atn_error_set(err, ATN_E_FORMAT, "%s: ZIP entry \"%s\" has a NUL byte in its "
                               "name", origin, shown);
            goto fail;
        }
        /* the ZIP64 extra field replaces the 0xffffffff fields, in this order */
        bool need_u = usize == 0xffffffffu, need_c = csize == 0xffffffffu,
             need_l = local == 0xffffffffu;
        for (const uint8_t *q = x; q + 4 <= x + xlen;) {
            uint16_t id = rd16(q), sz = rd16(q + 2);
            if (q + 4 + sz > x + xlen)
                break;
            if (id == 0x0001) {
                const uint8_t *v = q + 4, *vend = q + 4 + sz;
                if (need_u && v + 8 <= vend) { usize = rd64(v); v += 8; need_u = false; }
                if (need_c && v + 8 <= vend) { csize = rd64(v); v += 8; need_c = false; }
                if (need_l && v + 8 <= vend) { local = rd64(v); v += 8; need_l = false; }
            }
            q += 4 + sz;
        }
        if (need_u || need_c || need_l) {
            st = atn_error_set(err, ATN_E_FORMAT, "%s: ZIP entry \"%s\" needs a ZIP64 extra "
                               "field that is missing or too short", origin, shown);
            goto fail;
        }
        if (flags & 1) {
            st = atn_error_set(err, ATN_E_UNSUPPORTED, "%s: ZIP entry \"%s\" is encrypted",
                               origin, shown);
            goto fail;
        }
        if (method != 0) {
            st = atn_error_set(err, ATN_E_UNSUPPORTED, "%s: ZIP entry \"%s\" is compressed "
                               "(method %u); PyTorch writes stored entries only (re-save it "
                               "with torch.save)", origin, shown, method);
            goto fail;
        }
        if (csize != usize) {
            st = atn_error_set(err, ATN_E_FORMAT, "%s: ZIP entry \"%s\" is stored but its "
                               "sizes differ (%llu compressed, %llu uncompressed)", origin,
                               shown, (unsigned long long)csize, (unsigned long long)usize);
            goto fail;
        }
        if (local > len || len - local < LOCAL_LEN || rd32(buf + local) != LOCAL_SIG) {
            st = atn_error_set(err, ATN_E_FORMAT, "%s: ZIP entry \"%s\": its local header at "
                               "offset %llu is missing or past the end of the file (%zu bytes)",
                               origin, shown, (unsigned long long)local, len);
            goto fail;
        }
        uint64_t data = local + LOCAL_LEN + rd16(buf + local + 26) + rd16(buf + local + 28);
        if (data > len || usize > len - data) {
            st = atn_error_set(err, ATN_E_FORMAT, "%s: ZIP entry \"%s\" (%llu bytes at offset "
                               "%llu) runs past the end of the file (%zu bytes)", origin, shown,
                               (unsigned long long)usize, (unsigned long long)data, len);
            goto fail;
        }
        memcpy(name_at, nm, nlen);
        name_at[nlen] = '\0';
        zip->entries[i] = (atn_zip_entry){name_at, data, usize, buf + data};
        name_at += nlen + 1;
        zip->n++;
        p += CD_LEN + nlen + xlen + clen;
    }
    (void)cd_end;
    qsort(zip->entries, (size_t)zip->n, sizeof *zip->entries, cmp_entry);
    for (int32_t i = 1; i < zip->n; i++) {
        if (strcmp(zip->entries[i - 1].name, zip->entries[i].name) == 0) {
            char shown[256];
            safe_name(shown, sizeof shown, (const uint8_t *)zip->entries[i].name,
                      strlen(zip->entries[i].name));
            st = atn_error_set(err, ATN_E_FORMAT, "%s: ZIP entry \"%s\" appears twice", origin,
                               shown);
            goto fail;
        }
    }
    *out = zip;
    return ATN_OK;
fail:
    atn_zip_close(zip);
    return st;
}

void atn_zip_close(atn_zip *zip) {
    if (!zip)
        return;
    free(zip->entries);
    free(zip->names);
    free(zip);
}

int32_t atn_zip_count(const atn_zip *zip) { return zip->n; }

const atn_zip_entry *atn_zip_at(const atn_zip *zip, int32_t i) {
    return i >= 0 && i < zip->n ? &zip->entries[i] : NULL;
}

const atn_zip_entry *atn_zip_find(const atn_zip *zip, const char *name) {
    atn_zip_entry key = {.name = name};
    return bsearch(&key, zip->entries, (size_t)zip->n, sizeof key, cmp_entry);
}

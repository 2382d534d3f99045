/* One .npy array in memory: the header parsed by hand (a Python dict literal with three
 * known keys), every size checked before the data pointer is handed out. */
#include "formats/npy-image.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *descr;
    atn_st_dtype dtype;
} known[] = {
    {"<f4", ATN_ST_F32}, {"<f2", ATN_ST_F16}, {"<f8", ATN_ST_F64}, {"<i8", ATN_ST_I64},
    {"<i4", ATN_ST_I32}, {"<i2", ATN_ST_I16}, {"|i1", ATN_ST_I8},  {"|u1", ATN_ST_U8},
    {"<u8", ATN_ST_U64}, {"<u4", ATN_ST_U32}, {"<u2", ATN_ST_U16}, {"|b1", ATN_ST_BOOL},
};

/* The quoted value after 'key': in the dict text, into out[size]; false when absent. */
static bool dict_string(const char *dict, const char *key, char *out, size_t size) {
    const char *p = strstr(dict, key);
    if (!p)
        return false;
    p += strlen(key);
    while (*p == ' ' || *p == ':')
        p++;
    if (*p != '\'' && *p != '"')
        return false;
    char q = *p++;
    size_t i = 0;
    while (*p && *p != q && i + 1 < size)
        out[i++] = *p++;
    out[i] = '\0';
    return *p == q;
}

atn_status atn_npy_parse_image(const char *origin, const void *buf_, size_t len, atn_npy_array *out,
                               atn_error *err) {
    const uint8_t *buf = buf_;
    memset(out, 0, sizeof *out);
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
        return atn_error_set(err, ATN_E_FORMAT, "%s: not a .npy array (no \\x93NUMPY magic)", origin);
    int major = buf[6];
    size_t hlen, start;
    if (major == 1) {
        hlen = buf[8] | (size_t)buf[9] << 8;
        start = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return atn_error_set(err, ATN_E_FORMAT, "%s: truncated .npy header", origin);
        hlen = buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        start = 12;
    } else {
        return atn_error_set(err, ATN_E_UNSUPPORTED, "%s: .npy format version %d.%d (1.0 to 3.0 are read)", origin,
                             buf[6], buf[7]);
    }
    if (hlen > len - start || hlen > 1 << 20)
        return atn_error_set(err, ATN_E_FORMAT, "%s: the .npy header (%zu bytes) runs past the end (%zu bytes)",
                             origin, hlen, len);
    char *dict = malloc(hlen + 1);
    if (!dict)
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", origin);
    memcpy(dict, buf + start, hlen);
    dict[hlen] = '\0';
    if (strlen(dict) != hlen) {
        free(dict);
        return atn_error_set(err, ATN_E_FORMAT, "%s: the .npy header holds a NUL byte", origin);
    }
    atn_status st = ATN_OK;
    char descr[32];
    if (!dict_string(dict, "'descr'", descr, sizeof descr)) {
        st = atn_error_set(err, ATN_E_FORMAT, "%s: the .npy header has no 'descr'", origin);
        goto done;
    }
    if (!strstr(dict, "'fortran_order': False")) {
        st = atn_error_set(err, ATN_E_UNSUPPORTED, "%s: only C-order arrays are read (save with "
                           "np.ascontiguousarray)", origin);
        goto done;
    }
    size_t item = 0;
    if (descr[0] == '<' && descr[1] == 'U') {
        char *end;
        long w = strtol(descr + 2, &end, 10);
        if (*end || w < 1 || w > 4096) {
            st = atn_error_set(err, ATN_E_UNSUPPORTED, "%s: string dtype '%s' not read", origin, descr);
            goto done;
        }
        out->unicode_width = (int32_t)w;
        out->t.dtype = ATN_ST_U32;
        item = 4 * (size_t)w;
    } else {
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            if (!strcmp(descr, known[i].descr)) {
                out->t.dtype = known[i].dtype;
                item = atn_st_dtype_size(known[i].dtype);
            }
        if (!item) {
            st = atn_error_set(err, ATN_E_UNSUPPORTED, "%s: dtype '%s' is not read (%s)", origin, descr,
                               descr[0] == '|' && descr[1] == 'O' ? "an object array is a pickle"
                               : descr[0] == '>' ? "big-endian: save with .astype('<f4')"
                               : "float32, float16 or integers");
            goto done;
        }
    }
    const char *s = strstr(dict, "'shape'");
    s = s ? strchr(s, '(') : NULL;
    if (!s) {
        st = atn_error_set(err, ATN_E_FORMAT, "%s: the .npy header has no shape", origin);
        goto done;
    }
    s++;
    uint64_t count = 1;
    int nd = 0;
    while (*s && *s != ')') {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s) {
            st = atn_error_set(err, ATN_E_FORMAT, "%s: the .npy shape is malformed", origin);
            goto done;
        }
        if (nd >= ATN_ST_MAX_DIMS || v < 0 || __builtin_mul_overflow(count, (uint64_t)v, &count)) {
            st = atn_error_set(err, ATN_E_FORMAT, "%s: the .npy shape is too large or has too many dimensions",
                               origin);
            goto done;
        }
        out->t.shape[nd++] = v;
        s = end;
        while (*s == ',' || *s == ' ')
            s++;
    }
    out->t.ndim = nd;
    out->t.count = count;
    uint64_t nbytes;
    size_t data_at = start + hlen;
    if (__builtin_mul_overflow(count, (uint64_t)item, &nbytes) || nbytes != len - data_at) {
        char sh[128];
        st = atn_error_set(err, ATN_E_FORMAT, "%s: shape %s of '%s' needs %llu bytes of data, the file holds %zu",
                           origin, atn_st_shape_str(out->t.shape, nd, sh, sizeof sh), descr,
                           (unsigned long long)(__builtin_mul_overflow(count, (uint64_t)item, &nbytes) ? UINT64_MAX
                                                                                                       : nbytes),
                           len - data_at);
        goto done;
    }
    out->t.nbytes = nbytes;
    out->t.file_offset = data_at;
    out->t.data = buf + data_at;
done:
    free(dict);
    return st;
}

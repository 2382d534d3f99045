/* NumPy .npy files (format v1.0, little-endian float32, C order), written through
 * atn_write_file_atomic (files.c). */
#include "attnscope.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The v1.0 header for float32 data of shape[ndim] into hdr (room for 10 + 256 + 64 bytes):
 * its length, and *count the number of floats. */
static size_t npy_header(unsigned char *hdr, const int64_t *shape, int ndim, size_t *count) {
    char dict[256];
    int off = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    *count = 1;
    for (int i = 0; i < ndim; i++) {
        off += snprintf(dict + off, sizeof dict - (size_t)off, "%lld,%s", (long long)shape[i],
                        (i + 1 < ndim) ? " " : "");
        *count *= (size_t)shape[i];
    }
    if (ndim > 1)   /* numpy writes (3,) for one dimension and (2, 3) for more */
        off--;
    off += snprintf(dict + off, sizeof dict - (size_t)off, "), }");
    /* magic(6) + version(2) + header_len(2) + dict + padding + '\n', total divisible by 64 */
    size_t hlen = (size_t)off + 1;
    size_t total = 10 + hlen;
    size_t pad = (64 - total % 64) % 64;
    hlen += pad;
    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    hdr[8] = (unsigned char)(hlen & 0xff);
    hdr[9] = (unsigned char)(hlen >> 8);
    memcpy(hdr + 10, dict, (size_t)off);
    memset(hdr + 10 + off, ' ', pad);
    hdr[10 + hlen - 1] = '\n';
    return 10 + hlen;
}

atn_status atn_npy_write_f32(const char *path, const float *data, const int64_t *shape, int ndim,
                             atn_error *err) {
    unsigned char hdr[10 + 256 + 64];
    size_t count, hbytes = npy_header(hdr, shape, ndim, &count);
    size_t bytes = hbytes + count * sizeof(float);
    unsigned char *buf = malloc(bytes);
    if (!buf)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory writing %s", path);
    memcpy(buf, hdr, hbytes);
    memcpy(buf + hbytes, data, count * sizeof(float));   /* x86-64 and arm64 are little-endian */
    atn_status st = atn_write_file_atomic(path, buf, bytes, err);
    free(buf);
    return st;
}

atn_status atn_npy_write_attention(const char *path, const atn_capture *cap, atn_progress_fn progress,
                                   void *user_data, atn_error *err) {
    if (!path || !atn_capture_has_heads(cap))
        return atn_error_set(err, ATN_E_INVALID, "%s: the run kept no attention to write", path ? path : "(null)");
    int64_t shape[4] = {cap->n_layers, cap->n_heads, cap->n, cap->n};
    unsigned char hdr[10 + 256 + 64];
    size_t count, hbytes = npy_header(hdr, shape, 4, &count);
    size_t nn = (size_t)cap->n * cap->n;
    float *scratch = cap->attn ? NULL : malloc(nn * sizeof(float));
    if (!cap->attn && !scratch)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory writing %s", path);
    atn_atomic_file *af = NULL;
    atn_status st = atn_atomic_open(path, &af, err);
    if (st != ATN_OK) {
        free(scratch);
        return st;
    }
    FILE *f = atn_atomic_stream(af);
    /* a short write stops the loop; the close then names its reason (EFBIG, ENOSPC, …) */
    bool written = fwrite(hdr, 1, hbytes, f) == hbytes, ok = true;
    int32_t heads = cap->n_layers * cap->n_heads;
    for (int32_t lh = 0; ok && written && lh < heads; lh++) {
        const float *a = atn_capture_head_read(cap, lh / cap->n_heads, lh % cap->n_heads, scratch, err);
        ok = a != NULL;
        written = ok && fwrite(a, sizeof(float), nn, f) == nn;   /* little-endian hosts only */
        if (ok && written && progress && !progress((double)(lh + 1) / heads, ATN_STAGE_LAYER, user_data)) {
            atn_error_set(err, ATN_E_CANCELLED, "%s: cancelled", path);
            ok = false;
        }
    }
    free(scratch);
    atn_error e2 = {0};
    st = atn_atomic_close(af, ok, &e2);
    if (!ok)
        return err && err->status ? err->status : atn_error_set(err, ATN_E_IO, "%s: write failed", path);
    if (st == ATN_OK && !written)   /* the stream's error went unnoticed by the close */
        st = atn_error_set(&e2, ATN_E_IO, "%s: write failed", path);
    if (st != ATN_OK && err)
        *err = e2;
    return st;
}

atn_status atn_npy_read_f32(const char *path, float **data, int64_t *shape, int *ndim, int max_dims,
                            atn_error *err) {
    *data = NULL;
    *ndim = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return atn_error_set(err, ATN_E_IO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char head[10];
    atn_status st = ATN_OK;
    char *dict = NULL;
    if (fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0) {
        st = atn_error_set(err, ATN_E_FORMAT, "%s: not a .npy file (bad magic)", path);
        goto done;
    }
    if (head[6] != 1) {
        st = atn_error_set(err, ATN_E_FORMAT, "%s: .npy version %d.%d not supported (1.0 only)", path, head[6],
                           head[7]);
        goto done;
    }
    size_t hlen = head[8] | (size_t)head[9] << 8;
    dict = malloc(hlen + 1);
    if (!dict || fread(dict, 1, hlen, f) != hlen) {
        st = atn_error_set(err, ATN_E_FORMAT, "%s: truncated .npy header", path);
        goto done;
    }
    dict[hlen] = 0;
    if (!strstr(dict, "'descr': '<f4'") || !strstr(dict, "'fortran_order': False")) {
        st = atn_error_set(err, ATN_E_FORMAT, "%s: only little-endian float32 C-order arrays are read", path);
        goto done;
    }
    char *s = strstr(dict, "'shape': (");
    if (!s) {
        st = atn_error_set(err, ATN_E_FORMAT, "%s: .npy header has no shape", path);
        goto done;
    }
    s += 10;
    size_t count = 1;
    while (*s && *s != ')') {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s)
            break;
        if (*ndim >= max_dims || v < 0 || (v > 0 && count > SIZE_MAX / 8 / (size_t)v)) {
            st = atn_error_set(err, ATN_E_FORMAT, "%s: .npy shape too large or too many dimensions", path);
            goto done;
        }
        shape[(*ndim)++] = v;
        count *= (size_t)v;
        s = end;
        while (*s == ',' || *s == ' ')
            s++;
    }
    /* the shape must fit in what is left of the file before anything is allocated for it */
    struct stat sb;
    long at = ftell(f);
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && at >= 0 &&
        (uint64_t)count * sizeof(float) > (uint64_t)(sb.st_size - (sb.st_size > at ? at : sb.st_size))) {
        st = atn_error_set(err, ATN_E_FORMAT, "%s: data shorter than its shape says (%zu floats, "
                           "%lld bytes left in the file)", path, count,
                           (long long)(sb.st_size > at ? sb.st_size - at : 0));
        goto done;
    }
    *data = malloc(count ? count * sizeof(float) : 1);
    if (!*data) {
        st = atn_error_set(err, ATN_E_NOMEM, "out of memory reading %s", path);
        goto done;
    }
    if (fread(*data, sizeof(float), count, f) != count) {
        free(*data);
        *data = NULL;
        st = atn_error_set(err, ATN_E_FORMAT, "%s: data shorter than its shape says", path);
    }
done:
    free(dict);
    fclose(f);
    return st;
}

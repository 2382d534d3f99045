/* Writing a NumPy .npz: stored (uncompressed) ZIP entries of .npy images, format 1.0, as
 * numpy.savez writes them (engine/formats/npz-write.h). */
#include "formats/npz-write.h"
#include "core/files.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing byte buffer. */
typedef struct buf {
    unsigned char *p;
    size_t len, cap;
    bool failed;
} buf;

static void put(buf *b, const void *data, size_t len) {
    if (b->failed)
        return;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len)
            cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->len, data, len);
    b->len += len;
}

static void puts_b(buf *b, const char *s) { put(b, s, strlen(s)); }

/* The CRC-32 table, made once: two threads writing .npz files at once (the training lab's
 * worker beside the window's export) must not both fill it. */
static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_table_make(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc32_of(const unsigned char *p, size_t len) {
    pthread_once(&crc_once, crc_table_make);
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++)
        c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* One .npy image (format 1.0) of float32 ('<f4') or int64 ('<i8') values with shape (ndim 0:
 * a scalar). */
static void npy_image(buf *b, const void *data, const char *descr, size_t elem, const int64_t *shape, int ndim) {
    char dict[256];
    int off = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        off += snprintf(dict + off, sizeof dict - (size_t)off, "%lld,%s", (long long)shape[i],
                        i + 1 < ndim ? " " : "");
        count *= (size_t)shape[i];
    }
    if (ndim > 1)
        off--;
    off += snprintf(dict + off, sizeof dict - (size_t)off, "), }");
    size_t hlen = (size_t)off + 1, pad = (64 - (10 + hlen) % 64) % 64;
    hlen += pad;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
                             (unsigned char)(hlen >> 8)};
    put(b, pre, 10);
    put(b, dict, (size_t)off);
    for (size_t i = 0; i < pad; i++)
        puts_b(b, " ");
    puts_b(b, "\n");
    put(b, data, count * elem);
}

static void le16(buf *b, uint16_t v) {
    unsigned char x[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    put(b, x, 2);
}

static void le32(buf *b, uint32_t v) {
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    put(b, x, 4);
}

struct atn_npz {
    buf file, dir;
    int entries;
};

/* Adds name.npy as a stored entry (no compression, as numpy.savez). */
void atn_npz_add(atn_npz *z, const char *name, const void *data, bool int64, const int64_t *shape, int ndim) {
    buf img = {0};
    npy_image(&img, data, int64 ? "<i8" : "<f4", int64 ? 8 : 4, shape, ndim);
    if (img.failed || z->file.len > 0xF0000000u) {
        z->file.failed = true;
        free(img.p);
        return;
    }
    char fname[128];
    int fl = snprintf(fname, sizeof fname, "%s.npy", name);
    uint32_t crc = crc32_of(img.p, img.len), at = (uint32_t)z->file.len;
    le32(&z->file, 0x04034b50), le16(&z->file, 20), le16(&z->file, 0), le16(&z->file, 0);
    le16(&z->file, 0), le16(&z->file, 0x21);   /* time 0, date 1980-01-01 */
    le32(&z->file, crc), le32(&z->file, (uint32_t)img.len), le32(&z->file, (uint32_t)img.len);
    le16(&z->file, (uint16_t)fl), le16(&z->file, 0);
    put(&z->file, fname, (size_t)fl);
    put(&z->file, img.p, img.len);
    le32(&z->dir, 0x02014b50), le16(&z->dir, 20), le16(&z->dir, 20), le16(&z->dir, 0), le16(&z->dir, 0);
    le16(&z->dir, 0), le16(&z->dir, 0x21);
    le32(&z->dir, crc), le32(&z->dir, (uint32_t)img.len), le32(&z->dir, (uint32_t)img.len);
    le16(&z->dir, (uint16_t)fl), le16(&z->dir, 0), le16(&z->dir, 0), le16(&z->dir, 0), le16(&z->dir, 0);
    le32(&z->dir, 0), le32(&z->dir, at);
    put(&z->dir, fname, (size_t)fl);
    z->entries++;
    free(img.p);
}


atn_npz *atn_npz_new(void) { return calloc(1, sizeof(atn_npz)); }

void atn_npz_fail(atn_npz *z) { z->file.failed = true; }

void atn_npz_free(atn_npz *z) {
    if (!z)
        return;
    free(z->file.p);
    free(z->dir.p);
    free(z);
}

atn_status atn_npz_write(atn_npz *z, const char *path, atn_error *err) {
    uint32_t dir_at = (uint32_t)z->file.len, dir_len = (uint32_t)z->dir.len;
    put(&z->file, z->dir.p, z->dir.len);
    if (z->dir.failed)
        z->file.failed = true;
    le32(&z->file, 0x06054b50), le16(&z->file, 0), le16(&z->file, 0);
    le16(&z->file, (uint16_t)z->entries), le16(&z->file, (uint16_t)z->entries);
    le32(&z->file, dir_len), le32(&z->file, dir_at), le16(&z->file, 0);
    atn_status st = z->file.failed ? atn_error_set(err, ATN_E_NOMEM, "out of memory writing %s", path)
                                   : atn_write_file_atomic(path, z->file.p, z->file.len, err);
    atn_npz_free(z);
    return st;
}

atn_status atn_capture_write_stacks_npz(const char *path, const atn_capture *cap, atn_error *err) {
    if (!cap || !cap->n_stacks)
        return atn_error_set(err, ATN_E_INVALID, "%s: the run has no encoder-decoder stacks to write", path);
    atn_npz *z = atn_npz_new();
    if (!z)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory writing %s", path);
    for (int32_t s = 0; s < cap->n_stacks; s++) {
        const atn_stack *st = &cap->stacks[s];
        int64_t shape[4] = {st->n_layers, st->n_heads, st->n_q, st->n_k};
        atn_npz_add(z, st->name, st->attn, false, shape, 4);
    }
    return atn_npz_write(z, path, err);
}

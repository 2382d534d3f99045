/* SHA-1 (FIPS 180-4), to check small (non-LFS) files against the Hub's ETag, which is their git
 * blob id: sha1("blob <length>\0" + content).  Internal to hub/. */
#ifndef ATN_HUB_SHA1_H
#define ATN_HUB_SHA1_H

#include <stddef.h>
#include <stdint.h>

typedef struct atn_sha1 {
    uint32_t h[5];
    uint64_t len;        /* bytes hashed so far */
    uint8_t buf[64];
    size_t used;
} atn_sha1;

void atn_sha1_init(atn_sha1 *s);
void atn_sha1_update(atn_sha1 *s, const void *data, size_t n);
/* Writes the digest as 40 lowercase hex digits and a NUL. */
void atn_sha1_hex(atn_sha1 *s, char out[41]);

#endif

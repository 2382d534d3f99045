/* SHA-256 (FIPS 180-4), to check LFS files against the Hub's linked etag.  Internal to hub/. */
#ifndef ATN_HUB_SHA256_H
#define ATN_HUB_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct atn_sha256 {
    uint32_t h[8];
    uint64_t len;        /* bytes hashed so far */
    uint8_t buf[64];
    size_t used;
} atn_sha256;

void atn_sha256_init(atn_sha256 *s);
void atn_sha256_update(atn_sha256 *s, const void *data, size_t n);
/* Writes the digest as 64 lowercase hex digits and a NUL. */
void atn_sha256_hex(atn_sha256 *s, char out[65]);

#endif

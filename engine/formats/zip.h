/* A minimal, bounds-checked ZIP reader for PyTorch checkpoints (torch.save's zip format).
 *
 * It reads the central directory of an image already in memory (a read-only mapping) and
 * hands out the entries as pointers into it.  Only what PyTorch writes is accepted: stored
 * (uncompressed) entries, one disk, ZIP64 when the archive needs it.  A compressed or
 * encrypted entry is refused naming it (PyTorch never writes those; re-save the file).
 *
 * Everything is checked before anything is returned: the end-of-central-directory record
 * (and the ZIP64 record it points to) inside the image, every central-directory entry inside
 * the directory, every local header and every entry's data inside the image, compressed size
 * equal to the uncompressed size, at most ATN_ZIP_MAX_ENTRIES entries, no duplicate names.
 * Nothing outside [buf, buf + len) is read.  CRCs are not verified (the tensor reader
 * checks the sizes it needs; a flipped bit in a weight is not detectable either way).
 */
#ifndef ATN_ZIP_H
#define ATN_ZIP_H

#include "attnscope.h"

#include <stddef.h>
#include <stdint.h>

enum { ATN_ZIP_MAX_ENTRIES = 1 << 20, ATN_ZIP_MAX_NAME = 4096 };

typedef struct atn_zip_entry {
    const char *name;        /* NUL-terminated copy, owned by the archive object */
    uint64_t offset;         /* of the first data byte in the image */
    uint64_t size;
    const uint8_t *data;     /* buf + offset */
} atn_zip_entry;

typedef struct atn_zip atn_zip;

/* Reads the directory of the ZIP image buf[0, len) (borrowed; it must outlive the result).
 * origin names the file in messages.  ATN_E_FORMAT (not a ZIP, truncated, an entry past
 * the end, a duplicate name ...), ATN_E_UNSUPPORTED (a compressed, encrypted or multi-disk
 * entry, named), ATN_E_NOMEM.  On success *out is owned by the caller (atn_zip_close). */
atn_status atn_zip_open(const char *origin, const void *buf, size_t len, atn_zip **out,
                        atn_error *err);
void atn_zip_close(atn_zip *zip);   /* NULL is a no-op */

int32_t atn_zip_count(const atn_zip *zip);
/* Entries sorted by name; NULL when i is out of range. */
const atn_zip_entry *atn_zip_at(const atn_zip *zip, int32_t i);
/* NULL when absent. */
const atn_zip_entry *atn_zip_find(const atn_zip *zip, const char *name);

#endif

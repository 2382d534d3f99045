/* The safetensors reader: maps a file, validates its header completely, and hands out
 * tensors as pointers into the mapping.
 *
 * Layout: 8-byte little-endian header size N, N bytes of JSON
 *   {"name": {"dtype": "F32", "shape": [a, b], "data_offsets": [begin, end]}, ...,
 *    "__metadata__": {...}}
 * then the data area; offsets are relative to its start (byte 8 + N).
 *
 * Everything is checked before anything is used: header size within the file (and at
 * most ATN_ST_MAX_HEADER), every entry well-formed, a known dtype string, shape product
 * times dtype size equal to end - begin without overflow, begin <= end <= data area,
 * no two tensors overlapping, no duplicate names.  Nothing outside the file is read.
 * Tensors of any known dtype are accepted here (checkpoints carry I64 buffers such as
 * embeddings.position_ids); the caller decides which dtypes it can use.
 */
#ifndef ATN_SAFETENSORS_H
#define ATN_SAFETENSORS_H

#include "attnscope.h"

#include <stddef.h>
#include <stdint.h>

enum {
    ATN_ST_MAX_DIMS = 8,
    ATN_ST_MAX_HEADER = 100 * 1000 * 1000, /* bytes; larger headers are refused */
};

typedef enum atn_st_dtype {
    ATN_ST_F32 = 0, ATN_ST_F16, ATN_ST_BF16, ATN_ST_F64,
    ATN_ST_I64, ATN_ST_I32, ATN_ST_I16, ATN_ST_I8,
    ATN_ST_U64, ATN_ST_U32, ATN_ST_U16, ATN_ST_U8,
    ATN_ST_BOOL, ATN_ST_F8_E4M3, ATN_ST_F8_E5M2,
} atn_st_dtype;

/* "F32", "BF16" ... as written in the header. */
const char *atn_st_dtype_name(atn_st_dtype dtype);
size_t atn_st_dtype_size(atn_st_dtype dtype);

typedef struct atn_st_tensor {
    const char *name;             /* points into the file object's storage */
    atn_st_dtype dtype;
    int ndim;
    int64_t shape[ATN_ST_MAX_DIMS];
    uint64_t count;               /* product of shape (1 for a scalar) */
    uint64_t nbytes;              /* count * dtype size == end - begin */
    uint64_t file_offset;         /* absolute offset of the first byte in the file; for a
                                     tensor a reader copied (a strided torch view), its
                                     offset in that page-aligned copy block */
    const void *data;             /* into the mapping / buffer; may be unaligned */
} atn_st_tensor;

typedef struct atn_st_file atn_st_file;

/* Maps path read-only and parses it.  On success *out owns the mapping. */
atn_status atn_st_open(const char *path, atn_st_file **out, atn_error *err);

/* Parses a safetensors image already in memory (buf is borrowed and must outlive the
 * result).  origin names it in error messages. */
atn_status atn_st_parse(const char *origin, const void *buf, size_t len, atn_st_file **out,
                        atn_error *err);

/* Wraps a tensor table another reader made (engine/formats/torch-bin.c) as a file object, so the
 * loader binds it through the same calls.  Takes ownership of tensors (n entries, calloc'ed),
 * names (the block their names point into, malloc'ed), map (the file's read-only mapping,
 * munmap'ed) and extra (an anonymous mapping holding tensors the reader had to copy, or
 * NULL); on failure too.  Sorts the tensors by name; a duplicate name is ATN_E_FORMAT.
 * Tensors may share bytes (tied weights share one storage). */
atn_status atn_st_adopt(const char *path, atn_st_tensor *tensors, int32_t n, char *names,
                        void *map, size_t map_len, void *extra, size_t extra_len,
                        atn_st_file **out, atn_error *err);

void atn_st_close(atn_st_file *file);   /* NULL is a no-op; unmaps unless detached */

const char *atn_st_path(const atn_st_file *file);
int32_t atn_st_count(const atn_st_file *file);
/* Tensors sorted by name. */
const atn_st_tensor *atn_st_at(const atn_st_file *file, int32_t i);
/* NULL when absent. */
const atn_st_tensor *atn_st_find(const atn_st_file *file, const char *name);

/* Hands a mapping over to the caller (who munmaps ptr/len later); tensor pointers stay
 * valid.  A file can own two (the file's and, from atn_st_adopt, the block of copied
 * tensors): call until it returns false.  *of_file (may be NULL) says which: true for the
 * read-only mapping of the file itself, false for the anonymous block of copies.  Returns
 * false (and leaves *ptr NULL) when the file owns no more mappings. */
bool atn_st_detach_map(atn_st_file *file, void **ptr, size_t *len, bool *of_file);

/* "[768, 3072]" into buf. */
const char *atn_st_shape_str(const int64_t *shape, int ndim, char *buf, size_t size);

#endif

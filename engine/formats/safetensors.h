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
                                     view copied by atn_st_materialise, 0 (its own
                                     page-aligned block) */
    const void *data;             /* into the mapping / buffer; may be unaligned.  NULL for a
                                     view not yet materialised (view != NULL) */
    const struct atn_st_view *view;   /* NULL unless a reader kept this tensor as a view of
                                     bytes it did not copy (a strided or broadcast, stride-0,
                                     torch tensor): see atn_st_materialise */
} atn_st_tensor;

/* A tensor kept as a view (torch-bin.c): element idx[0..ndim) of the tensor is element
 * sum(idx[d] * stride[d]) of base (dtype-sized elements).  A broadcast tensor has some
 * stride 0, so a file of a few hundred bytes can declare one of terabytes. */
typedef struct atn_st_view {
    const void *base;             /* into the file's mapping */
    int64_t stride[ATN_ST_MAX_DIMS];   /* in elements, >= 0 */
} atn_st_view;

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
 * munmap'ed) and views (malloc'ed, the block the tensors' view pointers point into, or NULL);
 * on failure too.  Sorts the tensors by name; a duplicate name is ATN_E_FORMAT.  Tensors may
 * share bytes (tied weights share one storage). */
atn_status atn_st_adopt(const char *path, atn_st_tensor *tensors, int32_t n, char *names,
                        void *map, size_t map_len, atn_st_view *views,
                        atn_st_file **out, atn_error *err);

void atn_st_close(atn_st_file *file);   /* NULL is a no-op; unmaps unless detached */

const char *atn_st_path(const atn_st_file *file);
int32_t atn_st_count(const atn_st_file *file);
/* Tensors sorted by name. */
const atn_st_tensor *atn_st_at(const atn_st_file *file, int32_t i);
/* NULL when absent. */
const atn_st_tensor *atn_st_find(const atn_st_file *file, const char *name);

/* Makes t's bytes readable (t from atn_st_find / atn_st_at on file).  A no-op (ATN_OK) for a
 * tensor whose data is already set, which is every tensor but a view a reader kept uncopied
 * (t->view != NULL and t->data NULL): that one is copied, contiguous and row-major, into an
 * anonymous page-aligned block the file owns (handed over by atn_st_detach_map), and t->data
 * set, t->file_offset 0.  Only the tensors a caller materialises cost memory: a broadcast
 * tensor nobody reads costs nothing.  max_bytes bounds the copy (0: no bound): a view of more
 * bytes is ATN_E_NOMEM naming the file, the tensor, its sizes and strides, the bytes it
 * needs and max_bytes, and nothing is allocated; ATN_E_NOMEM also when the block cannot be
 * mapped.  Not thread-safe: one thread per file object. */
atn_status atn_st_materialise(atn_st_file *file, const atn_st_tensor *t, uint64_t max_bytes,
                              atn_error *err);

/* Hands a mapping over to the caller (who munmaps ptr/len later); tensor pointers stay
 * valid.  A file can own several (the file's and, from atn_st_materialise, one block per
 * copied view): call until it returns false.  *of_file (may be NULL) says which: true for the
 * read-only mapping of the file itself, false for an anonymous block of copies.  Returns
 * false (and leaves *ptr NULL) when the file owns no more mappings. */
bool atn_st_detach_map(atn_st_file *file, void **ptr, size_t *len, bool *of_file);

/* "[768, 3072]" into buf. */
const char *atn_st_shape_str(const int64_t *shape, int ndim, char *buf, size_t size);

#endif

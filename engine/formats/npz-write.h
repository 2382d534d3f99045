/* Writing a NumPy .npz (a ZIP of stored .npy files, as numpy.savez writes it): the training
 * lab's gradient dump and `attnscope run -o x.npz` (an encoder-decoder's three stacks, next).
 * engine/formats/npz-write.c; read back by numpy.load and by engine/formats/zip.c. */
#ifndef ATN_NPZ_WRITE_H
#define ATN_NPZ_WRITE_H

#include "attnscope.h"

typedef struct atn_npz atn_npz;

/* An empty archive in memory, or NULL when out of memory. */
atn_npz *atn_npz_new(void);
/* Adds name.npy: float32 ('<f4') or, with int64, int64 ('<i8') values of shape [ndim] (ndim
 * 0: a scalar), copied.  A failure (memory, an archive past 4 GB) is remembered and reported
 * by atn_npz_write. */
void atn_npz_add(atn_npz *z, const char *name, const void *data, bool int64, const int64_t *shape, int ndim);
/* Marks the archive failed (the caller ran out of memory making an entry). */
void atn_npz_fail(atn_npz *z);
/* Writes the archive to path atomically (atn_write_file_atomic) and frees z: ATN_OK, ATN_E_NOMEM
 * (a failed add), or the writer's error. */
atn_status atn_npz_write(atn_npz *z, const char *path, atn_error *err);
/* Frees z without writing (NULL: nothing). */
void atn_npz_free(atn_npz *z);

#endif

/* Reading a whole file: the one reader the loaders share (config.json, the index, the
 * tokenizer's files, toy JSON).  Writing goes through atn_write_file_atomic and
 * atn_atomic_open (attnscope.h), in files.c too. */
#ifndef ATN_FILES_H
#define ATN_FILES_H

#include "attnscope.h"

/* Reads path into a malloc'ed, NUL-terminated buffer (*data, the caller frees; *len bytes
 * without the NUL).  Reads to the end, so pipes work too.  ATN_E_IO when it cannot be
 * opened ("PATH: cannot open: REASON"), is a folder, or a read fails; ATN_E_FORMAT when it
 * is larger than max bytes ("PATH: N bytes is larger than the MAX-byte limit");
 * ATN_E_NOMEM.  On error *data is NULL. */
atn_status atn_read_file(const char *path, size_t max, char **data, size_t *len, atn_error *err);

#endif

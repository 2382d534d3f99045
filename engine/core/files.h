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

/* Whether an optional file is there: *found is true for a regular file and false (ATN_OK)
 * when nothing has that name.  A symbolic link that leads nowhere is an error, not an absent
 * file ("PATH: a broken symbolic link (to TARGET)", ATN_E_IO): its defaults would apply
 * silently.  ATN_E_IO too for anything that is not a regular file ("PATH: not a regular
 * file") or cannot be looked at ("PATH: cannot open: REASON"). */
atn_status atn_probe_file(const char *path, bool *found, atn_error *err);

#endif

/* Reading a whole file: the one reader the loaders share (config.json, the index, the
 * tokenizer's files, toy JSON); mapping one: the one opener the weight readers share
 * (safetensors, pytorch_model.bin and their shards).  Writing goes through atn_write_file_atomic and
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

/* Larger weight files are refused from their size (atn_map_file's cap for model.safetensors,
 * pytorch_model.bin and their shards): no checkpoint shard comes near, and a sparse file that
 * claims more is not mapped. */
#define ATN_WEIGHT_FILE_MAX ((size_t)1 << 40)

/* Maps path read-only and private: the one opener for weight files.  Looks before opening
 * and refuses anything but a regular file ("PATH: not a regular file", ATN_E_IO), opens with
 * O_NONBLOCK (a FIFO swapped in between never hangs the open) and checks again on the
 * descriptor (fstat); "PATH: cannot open: REASON" / "cannot stat" / "cannot map N bytes"
 * (ATN_E_IO); larger than max bytes is ATN_E_FORMAT ("PATH: N bytes is larger than the
 * MAX-byte limit").  On success *map and *len hold the mapping (the caller munmaps it, or
 * hands it on: atn_st_adopt, then the model's guard through atn_model_own_file); an empty
 * file is ATN_OK with *map NULL and *len 0, so the reader says what it expected there.  On
 * error *map is NULL. */
atn_status atn_map_file(const char *path, size_t max, void **map, size_t *len, atn_error *err);

/* Whether an optional file is there: *found is true for a regular file and false (ATN_OK)
 * when nothing has that name.  A symbolic link that leads nowhere is an error, not an absent
 * file ("PATH: a broken symbolic link (to TARGET)", ATN_E_IO): its defaults would apply
 * silently.  ATN_E_IO too for anything that is not a regular file ("PATH: not a regular
 * file") or cannot be looked at ("PATH: cannot open: REASON"). */
atn_status atn_probe_file(const char *path, bool *found, atn_error *err);

#endif

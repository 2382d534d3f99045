/* The output-onto-input guard's engine side (attnscope.h: atn_input_guard_enable): the file
 * readers note what they opened, the atomic writer asks before it replaces a file. */
#ifndef ATN_INPUT_GUARD_H
#define ATN_INPUT_GUARD_H

#include "attnscope.h"

#include <sys/stat.h>

/* Remembers the file st describes (read as path) when the guard is on; nothing otherwise. */
void atn_input_guard_note_stat(const struct stat *st, const char *path);
/* ATN_OK, or ATN_E_INVALID "OUT: is one of this command's inputs (IN); write the output
 * elsewhere" when the guard is on and st (the existing file OUT would replace) was noted. */
atn_status atn_input_guard_check(const struct stat *st, const char *out, atn_error *err);

#endif

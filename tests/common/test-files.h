/* Reading the fixtures the references wrote (torch, the npm tokenizers): shared by the C
 * tests, each of which links test_common_dep (tests/meson.build). */
#ifndef ATN_TEST_FILES_H
#define ATN_TEST_FILES_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* The whole file at path, NUL-terminated (malloc'ed, the caller frees); its length in *len
 * when len is not NULL.  NULL, printing nothing, when it cannot be opened or read. */
char *slurp(const char *path, size_t *len);
/* The file at path parsed as JSON (the caller cJSON_Deletes it); NULL, with "cannot read
 * PATH" on stderr, when it cannot be read or is not JSON. */
cJSON *read_json(const char *path);
/* A JSON array of numbers as int32_t (malloc'ed, one spare element so that an empty array
 * is not NULL; the caller frees), its length in *n; a NULL or empty array gives *n = 0. */
int32_t *json_ints(const cJSON *a, int32_t *n);

#endif

/* Parsing JSON: the one parser the loaders share (config.json, tokenizer_config.json, the
 * shard index, toy models, the safetensors header).  cJSON underneath, with the rules
 * Python's json module (and so Hugging Face) follows:
 *   - the text is one JSON value; anything but whitespace after it is refused (two
 *     concatenated configs are an error, not "the first one");
 *   - a key given twice in one object: the last value wins (json.loads builds a dict), unless
 *     ATN_JSON_KEEP_DUPLICATES asks for every member (the safetensors header refuses
 *     duplicate tensor names itself);
 *   - a NUL inside a string or key (\u0000 or a raw 0 byte) is refused: a C string would end
 *     there, so "hidden_act\u0000x" would read as "hidden_act";
 *   - memory is bounded: at most ATN_JSON_MAX_ALLOCS cJSON allocations per parse (about 80
 *     bytes each), and running out of memory is reported as that, not as "invalid JSON". */
#ifndef ATN_JSON_H
#define ATN_JSON_H

#include "attnscope.h"

#include <cjson/cJSON.h>
#include <stddef.h>

enum { ATN_JSON_KEEP_DUPLICATES = 1 };
enum { ATN_JSON_MAX_ALLOCS = 4 * 1000 * 1000 };

typedef enum atn_json_result {
    ATN_JSON_PARSED = 0,
    ATN_JSON_SYNTAX,      /* not JSON; *offset is where cJSON stopped */
    ATN_JSON_TRAILING,    /* a complete value, then more than whitespace at *offset */
    ATN_JSON_NUL,         /* a NUL (\u0000 or a raw byte) inside a string or key at *offset */
    ATN_JSON_TOO_BIG,     /* more than ATN_JSON_MAX_ALLOCS allocations */
    ATN_JSON_NOMEM,       /* malloc failed */
} atn_json_result;

/* Parses text[0..len) (need not be NUL-terminated).  On ATN_JSON_PARSED *out is the value
 * (cJSON_Delete frees it); otherwise *out is NULL and *offset the byte offset concerned (0
 * for TOO_BIG/NOMEM).  offset may be NULL. */
atn_json_result atn_json_parse_raw(const char *text, size_t len, unsigned flags, cJSON **out, size_t *offset);

/* For a text that gave ATN_JSON_NUL: the key the NUL belongs to, as written in the file
 * (control bytes as '?', cut with "..." to fit size bytes with its NUL; "" when the value is
 * not an object member). */
void atn_json_nul_key(const char *text, size_t len, char *out, size_t size);

/* The same, with the message: "ORIGIN: invalid JSON (near byte N)" (ATN_E_FORMAT),
 * "ORIGIN: a NUL character (\u0000) inside a string (byte N, key "KEY"); ..." (ATN_E_FORMAT),
 * "ORIGIN: extra data after the JSON value (byte N)" (ATN_E_FORMAT), "ORIGIN: the JSON is too
 * large to parse (more than N values)" (ATN_E_FORMAT), "ORIGIN: out of memory while parsing
 * the JSON" (ATN_E_NOMEM). */
atn_status atn_json_parse(const char *text, size_t len, const char *origin, unsigned flags, cJSON **out,
                          atn_error *err);

/* Reads path (atn_read_file, at most max bytes: its messages) and parses it; the value must
 * be an object ("PATH: expected a JSON object at the top level").  Duplicate keys: the last
 * wins. */
atn_status atn_json_read_object(const char *path, size_t max, cJSON **out, atn_error *err);

#endif

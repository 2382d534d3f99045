/* A tokenizer.json vocabulary ({"token": id, ...}) as a hash map both ways, shared by the
 * WordPiece and WordLevel models (tok-wordlevel.c) and the pipeline's added tokens.
 * Internal to the engine; immutable once built. */
#ifndef ATN_TOK_VOCAB_H
#define ATN_TOK_VOCAB_H

#include "attnscope.h"
#include "core/name-map.h"

#include <cjson/cJSON.h>

typedef struct atn_tok_vocab {
    char **by_id;        /* [n_ids] owned token text, NULL for an id nobody has */
    uint32_t *len;       /* [n_ids] its length in bytes */
    int32_t n_ids;       /* allocated */
    int32_t size;        /* highest id + 1 */
    atn_name_map map;    /* token -> id, keyed (core/name-map.h); keys are by_id's copies */
} atn_tok_vocab;

/* Builds v from a JSON object of token: id (file and path name it in messages:
 * ATN_E_FORMAT for a value that is not a non-negative integer or a token that is not
 * UTF-8; ATN_E_NOMEM).  A token listed twice keeps its last id; an id listed twice its
 * first token.  On error v is empty. */
atn_status atn_tok_vocab_from_json(atn_tok_vocab *v, const cJSON *obj, const char *file,
                                   const char *path, atn_error *err);
/* The id of s[0, n), -1 when absent. */
int32_t atn_tok_vocab_find(const atn_tok_vocab *v, const char *s, size_t n);
void atn_tok_vocab_free(atn_tok_vocab *v);   /* frees the contents; zeroes v */

#endif

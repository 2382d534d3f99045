/* A string -> id table for the subword models (tok-bpe.c, tok-unigram.c): the pieces'
 * bytes live in blocks that never move, the engine's keyed name table (core/name-map.h)
 * maps them to ids, and an id -> piece array answers id_to_token.  Built once, then read
 * only (shareable by threads).
 * (Not the pipeline's tok-vocab.h, a token table of another shape for WordPiece/WordLevel.)
 * Internal to the engine. */
#ifndef ATN_TOK_STRTAB_H
#define ATN_TOK_STRTAB_H

#include "core/name-map.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct atn_tok_strtab {
    atn_name_map map;         /* piece -> id, keyed (engine/core/name-map.c) */
    char **blocks;            /* the pieces' bytes, each NUL-terminated; never moved */
    size_t n_blocks, block_used, block_cap;   /* block_used / block_cap: the last block's */
    const char **by_id;       /* [id_cap] id's piece, NULL = none */
    int32_t id_cap;           /* highest id + 1 */
} atn_tok_strtab;

/* Room for about n pieces; false on out of memory. */
bool atn_tok_strtab_init(atn_tok_strtab *v, size_t n);
void atn_tok_strtab_clear(atn_tok_strtab *v);
/* Adds piece -> id.  Returns 1 when added, 0 when the piece is already there (*old_id
 * gets its id; the table is unchanged), -1 on out of memory. */
int atn_tok_strtab_add(atn_tok_strtab *v, const char *s, size_t len, int32_t id, int32_t *old_id);
/* Sets piece's id (adding it if absent), as a later duplicate does in a map; -1 on out
 * of memory. */
int atn_tok_strtab_set(atn_tok_strtab *v, const char *s, size_t len, int32_t id);
/* Builds the id -> piece array (ids must be < limit); false on out of memory.  When
 * several pieces share an id the last added wins. */
bool atn_tok_strtab_index(atn_tok_strtab *v);
int32_t atn_tok_strtab_get(const atn_tok_strtab *v, const char *s, size_t len);   /* -1 if absent */
const char *atn_tok_strtab_piece(const atn_tok_strtab *v, int32_t id);   /* NULL if absent */

#endif

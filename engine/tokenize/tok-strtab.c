/* The string -> id table of the subword models (see tok-strtab.h). */
#include "tokenize/tok-strtab.h"

#include <stdlib.h>
#include <string.h>

enum { BLOCK_BYTES = 64 * 1024 };

bool atn_tok_strtab_init(atn_tok_strtab *v, size_t n) {
    memset(v, 0, sizeof *v);
    return atn_name_map_init(&v->map, n);
}

void atn_tok_strtab_clear(atn_tok_strtab *v) {
    atn_name_map_clear(&v->map);
    for (size_t i = 0; i < v->n_blocks; i++)
        free(v->blocks[i]);
    free(v->blocks);
    free(v->by_id);
    memset(v, 0, sizeof *v);
}

/* Room for len + 1 bytes at the end of the last block (a new block when it lacks them). */
static char *reserve(atn_tok_strtab *v, size_t len) {
    if (v->n_blocks && v->block_cap - v->block_used >= len + 1)
        return v->blocks[v->n_blocks - 1] + v->block_used;
    size_t cap = len + 1 > BLOCK_BYTES ? len + 1 : BLOCK_BYTES;
    char **b = realloc(v->blocks, (v->n_blocks + 1) * sizeof *b);
    if (!b)
        return NULL;
    v->blocks = b;
    if (!(b[v->n_blocks] = malloc(cap)))
        return NULL;
    v->n_blocks++;
    v->block_used = 0;
    v->block_cap = cap;
    return b[v->n_blocks - 1];
}

static int insert(atn_tok_strtab *v, const char *s, size_t len, int32_t id, int32_t *old_id,
                  bool overwrite) {
    if (len > UINT32_MAX - 1)
        return -1;
    /* the piece is copied first and the copy is the key; when it was there already the
       copy is given back (it is the last thing in its block) */
    char *copy = reserve(v, len);
    if (!copy)
        return -1;
    memcpy(copy, s, len);
    copy[len] = '\0';
    int r = atn_name_map_put_n(&v->map, copy, len, id, overwrite, old_id);
    if (r == 1)
        v->block_used += len + 1;
    return r;
}

int atn_tok_strtab_add(atn_tok_strtab *v, const char *s, size_t len, int32_t id, int32_t *old_id) {
    return insert(v, s, len, id, old_id, false);
}

int atn_tok_strtab_set(atn_tok_strtab *v, const char *s, size_t len, int32_t id) {
    return insert(v, s, len, id, NULL, true) < 0 ? -1 : 0;
}

bool atn_tok_strtab_index(atn_tok_strtab *v) {
    int32_t cap = 0;
    for (size_t i = 0; i < v->map.count; i++)
        if (v->map.entries[i].val >= cap)
            cap = v->map.entries[i].val + 1;
    free(v->by_id);
    v->by_id = calloc(cap ? (size_t)cap : 1, sizeof *v->by_id);
    if (!v->by_id)
        return false;
    v->id_cap = cap;
    /* entries are in the order added: the last added piece of an id wins */
    for (size_t i = 0; i < v->map.count; i++)
        if (v->map.entries[i].val >= 0)
            v->by_id[v->map.entries[i].val] = v->map.entries[i].key;
    return true;
}

int32_t atn_tok_strtab_get(const atn_tok_strtab *v, const char *s, size_t len) {
    return atn_name_map_get_n(&v->map, s, len);
}

const char *atn_tok_strtab_piece(const atn_tok_strtab *v, int32_t id) {
    if (id < 0 || id >= v->id_cap)
        return NULL;
    return v->by_id[id];
}

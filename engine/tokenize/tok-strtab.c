/* The string -> id table of the subword models (see tok-strtab.h). */
#include "tokenize/tok-strtab.h"

#include <stdlib.h>
#include <string.h>

bool atn_tok_strtab_init(atn_tok_strtab *v, size_t n) {
    memset(v, 0, sizeof *v);
    size_t slots = 16;
    while (slots < n * 2 + 2)
        slots *= 2;
    v->slot_off = calloc(slots, sizeof *v->slot_off);
    v->slot_len = calloc(slots, sizeof *v->slot_len);
    v->slot_id = calloc(slots, sizeof *v->slot_id);
    v->nslots = slots;
    if (!v->slot_off || !v->slot_len || !v->slot_id) {
        atn_tok_strtab_clear(v);
        return false;
    }
    return true;
}

void atn_tok_strtab_clear(atn_tok_strtab *v) {
    free(v->arena);
    free(v->slot_off);
    free(v->slot_len);
    free(v->slot_id);
    free(v->by_id);
    memset(v, 0, sizeof *v);
}

static size_t find_slot(const atn_tok_strtab *v, const char *s, size_t len) {
    size_t mask = v->nslots - 1, i = (size_t)atn_tok_hash(s, len) & mask;
    while (v->slot_off[i]) {
        if (v->slot_len[i] == len && memcmp(v->arena + v->slot_off[i] - 1, s, len) == 0)
            return i;
        i = (i + 1) & mask;
    }
    return i;
}

static bool grow(atn_tok_strtab *v) {
    size_t ns = v->nslots * 2;
    size_t *off = calloc(ns, sizeof *off);
    uint32_t *ln = calloc(ns, sizeof *ln);
    int32_t *id = calloc(ns, sizeof *id);
    if (!off || !ln || !id) {
        free(off);
        free(ln);
        free(id);
        return false;
    }
    for (size_t i = 0; i < v->nslots; i++) {
        if (!v->slot_off[i])
            continue;
        size_t j = (size_t)atn_tok_hash(v->arena + v->slot_off[i] - 1, v->slot_len[i]) & (ns - 1);
        while (off[j])
            j = (j + 1) & (ns - 1);
        off[j] = v->slot_off[i];
        ln[j] = v->slot_len[i];
        id[j] = v->slot_id[i];
    }
    free(v->slot_off);
    free(v->slot_len);
    free(v->slot_id);
    v->slot_off = off;
    v->slot_len = ln;
    v->slot_id = id;
    v->nslots = ns;
    return true;
}

static int insert(atn_tok_strtab *v, const char *s, size_t len, int32_t id, int32_t *old_id,
                  bool overwrite) {
    if (len > UINT32_MAX - 1)
        return -1;
    size_t i = find_slot(v, s, len);
    if (v->slot_off[i]) {
        if (old_id)
            *old_id = v->slot_id[i];
        if (overwrite)
            v->slot_id[i] = id;
        return 0;
    }
    if ((v->count + 1) * 2 > v->nslots) {
        if (!grow(v))
            return -1;
        i = find_slot(v, s, len);
    }
    if (v->arena_len + len + 1 > v->arena_cap) {
        size_t cap = v->arena_cap ? v->arena_cap : 4096;
        while (cap < v->arena_len + len + 1)
            cap *= 2;
        char *a = realloc(v->arena, cap);
        if (!a)
            return -1;
        v->arena = a;
        v->arena_cap = cap;
    }
    memcpy(v->arena + v->arena_len, s, len);
    v->arena[v->arena_len + len] = '\0';
    v->slot_off[i] = v->arena_len + 1;
    v->slot_len[i] = (uint32_t)len;
    v->slot_id[i] = id;
    v->arena_len += len + 1;
    v->count++;
    return 1;
}

int atn_tok_strtab_add(atn_tok_strtab *v, const char *s, size_t len, int32_t id, int32_t *old_id) {
    return insert(v, s, len, id, old_id, false);
}

int atn_tok_strtab_set(atn_tok_strtab *v, const char *s, size_t len, int32_t id) {
    return insert(v, s, len, id, NULL, true) < 0 ? -1 : 0;
}

bool atn_tok_strtab_index(atn_tok_strtab *v) {
    int32_t cap = 0;
    for (size_t i = 0; i < v->nslots; i++)
        if (v->slot_off[i] && v->slot_id[i] >= cap)
            cap = v->slot_id[i] + 1;
    free(v->by_id);
    v->by_id = calloc(cap ? (size_t)cap : 1, sizeof *v->by_id);
    if (!v->by_id)
        return false;
    v->id_cap = cap;
    /* the arena only grows: the last added piece of an id has the largest offset */
    for (size_t i = 0; i < v->nslots; i++) {
        if (!v->slot_off[i])
            continue;
        size_t *cur = &v->by_id[v->slot_id[i]];
        if (!*cur || v->slot_off[i] > *cur)
            *cur = v->slot_off[i];
    }
    return true;
}

int32_t atn_tok_strtab_get(const atn_tok_strtab *v, const char *s, size_t len) {
    if (!v->nslots)
        return -1;
    size_t i = find_slot(v, s, len);
    return v->slot_off[i] ? v->slot_id[i] : -1;
}

const char *atn_tok_strtab_piece(const atn_tok_strtab *v, int32_t id) {
    if (id < 0 || id >= v->id_cap || !v->by_id[id])
        return NULL;
    return v->arena + v->by_id[id] - 1;
}

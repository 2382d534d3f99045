/* The engine's one name -> int32 hash table, for every map whose names come from a user's
 * file: the shard index's tensor and shard names (engine/formats/hf-model.c, hundreds of
 * thousands of names in a big index) and the tokenizers' vocabularies (tok-strtab.c,
 * tok-wordlevel.c, wordpiece.c).  The hash is SipHash-1-3 keyed per process (getrandom), so
 * names crafted to collide under a known function cannot turn a lookup into a walk of the
 * table; open addressing with linear probing, at most half full.  Entries are kept in the
 * order they were added (a compact array the slots index, as Python's dict), each slot
 * holding 32 bits of its name's hash so a probe rarely reads a name it does not want.
 * Keys are borrowed: a name points into memory the caller keeps for the table's life (the
 * parsed index, a vocabulary's text); a name may hold any bytes, NUL included, in the
 * _n functions.  Built by one thread, then read by any number.  Internal to the engine. */
#ifndef ATN_NAME_MAP_H
#define ATN_NAME_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct atn_name_entry {
    const char *key;   /* borrowed */
    uint32_t len;      /* bytes of key */
    int32_t val;
} atn_name_entry;

typedef struct atn_name_slot {
    uint32_t hash;     /* the top 32 bits of the key's hash */
    int32_t entry;     /* index into entries, -1 = empty */
} atn_name_slot;

typedef struct atn_name_map {
    atn_name_slot *slots;      /* [nslots], a power of two, at most half used */
    atn_name_entry *entries;   /* [count] in the order added (cap allocated) */
    size_t nslots, count, cap;
} atn_name_map;

/* Room for n names without growing; false on out of memory.  A zeroed map is a valid empty
 * one too (put allocates on first use). */
bool atn_name_map_init(atn_name_map *m, size_t n);
void atn_name_map_clear(atn_name_map *m);   /* frees the table, not the keys; zeroes m */

/* Sets key[0, len) -> val.  1: added; 0: key was there (*old gets its value, unless old is
 * NULL; the value is replaced when replace is true, the entry keeps its place and its first
 * key pointer); -1: out of memory or a key of 4 GiB or more. */
int atn_name_map_put_n(atn_name_map *m, const char *key, size_t len, int32_t val, bool replace,
                       int32_t *old);
/* The value of key[0, len), or -1 when absent. */
int32_t atn_name_map_get_n(const atn_name_map *m, const char *key, size_t len);

/* The same for a NUL-terminated key; these calls (the shard index's) are counted for
 * atn_name_map_counts, the _n ones (the tokenizers' hot path) are not. */
int atn_name_map_put(atn_name_map *m, const char *key, int32_t val, bool replace, int32_t *old);
int32_t atn_name_map_get(const atn_name_map *m, const char *key);

/* Process-wide totals since start (relaxed atomics), for tests that check a lookup
 * stays O(1): calls of atn_name_map_put/get, and slots looked at by them. */
void atn_name_map_counts(uint64_t *calls, uint64_t *probes);

/* The table's keyed hash (SipHash-1-3 with this process's key), for a table of another
 * shape whose keys also come from a file (BPE merges: a pair of ids). */
uint64_t atn_keyed_hash(const void *p, size_t len);

#endif

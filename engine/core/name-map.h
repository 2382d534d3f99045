/* A name -> int32 hash table for the shard index (engine/formats/hf-model.c): a
 * model.safetensors.index.json or pytorch_model.bin.index.json may list hundreds of
 * thousands of tensor names, and every tensor the family binds is looked up by name, so
 * the lookup is a hash, not a walk of the index.  Keys are borrowed (they point into the
 * parsed index, which must outlive the table).  Open addressing, linear probing, at most
 * half full; the hash is SipHash-1-3 keyed per process (getrandom), so names crafted to
 * collide under a known function cannot turn the index into a quadratic walk.
 * Internal to the engine. */
#ifndef ATN_NAME_MAP_H
#define ATN_NAME_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct atn_name_map {
    const char **keys;   /* [nslots], NULL = empty */
    int32_t *vals;
    size_t nslots, count;
} atn_name_map;

/* Room for n names without growing; false on out of memory. */
bool atn_name_map_init(atn_name_map *m, size_t n);
void atn_name_map_clear(atn_name_map *m);   /* frees the slots, not the keys */
/* Sets key -> val.  1: added; 0: key was there (*old gets its value, unless old is NULL;
 * the value is replaced when replace is true); -1: out of memory. */
int atn_name_map_put(atn_name_map *m, const char *key, int32_t val, bool replace, int32_t *old);
/* The value, or -1 when absent. */
int32_t atn_name_map_get(const atn_name_map *m, const char *key);

/* Process-wide totals since start (relaxed atomics), for tests that check a lookup
 * stays O(1): calls of put/get, and slots looked at by them. */
void atn_name_map_counts(uint64_t *calls, uint64_t *probes);

#endif

/* The engine's one keyed name table: see name-map.h. */
#include "core/name-map.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static uint64_t sip_k0, sip_k1;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t total_calls, total_probes;

static void make_key(void) {
    uint64_t k[2] = {0, 0};
    if (getrandom(k, sizeof k, GRND_NONBLOCK) != (ssize_t)sizeof k) {
        /* no entropy yet (early boot): still not a constant an input could be made for */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        k[0] ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
        k[1] ^= (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&ts;
    }
    sip_k0 = k[0], sip_k1 = k[1];
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                              \
    do {                                                                                      \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);                             \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                                \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                                \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);                             \
    } while (0)

/* SipHash-1-3 (one compression round, three finalisation rounds, as Python and Rust use). */
static uint64_t siphash13(const unsigned char *p, size_t len) {
    uint64_t v0 = 0x736f6d6570736575ull ^ sip_k0, v1 = 0x646f72616e646f6dull ^ sip_k1;
    uint64_t v2 = 0x6c7967656e657261ull ^ sip_k0, v3 = 0x7465646279746573ull ^ sip_k1;
    size_t full = len & ~(size_t)7;
    for (size_t i = 0; i < full; i += 8) {
        uint64_t m = 0;
        for (int j = 0; j < 8; j++)
            m |= (uint64_t)p[i + j] << (8 * j);
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    for (size_t j = 0; j < (len & 7); j++)
        b |= (uint64_t)p[full + j] << (8 * j);
    v3 ^= b;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t atn_keyed_hash(const void *p, size_t len) {
    pthread_once(&key_once, make_key);
    return siphash13(p, len);
}

/* The slot holding key, or the empty slot where it would go; *probes counts slots looked at. */
static inline size_t find(const atn_name_map *m, const char *key, size_t len, uint64_t h,
                          size_t *probes) {
    size_t mask = m->nslots - 1, s = (size_t)h & mask;
    uint32_t tag = (uint32_t)(h >> 32);
    for (;; s = (s + 1) & mask, ++*probes) {
        const atn_name_slot *sl = &m->slots[s];
        if (sl->entry < 0)
            return s;
        if (sl->hash == tag) {
            const atn_name_entry *e = &m->entries[sl->entry];
            if (e->len == len && memcmp(e->key, key, len) == 0)
                return s;
        }
    }
}

static bool alloc_slots(atn_name_map *m, size_t slots) {
    atn_name_slot *t = malloc(slots * sizeof *t);
    if (!t)
        return false;
    memset(t, 0xFF, slots * sizeof *t);   /* entry -1: empty */
    free(m->slots);
    m->slots = t;
    m->nslots = slots;
    return true;
}

bool atn_name_map_init(atn_name_map *m, size_t n) {
    pthread_once(&key_once, make_key);
    memset(m, 0, sizeof *m);
    size_t slots = 16;
    while (slots < 2 * n && slots < SIZE_MAX / 4 / sizeof(atn_name_entry))
        slots *= 2;
    size_t cap = n > 8 ? n : 8;
    m->entries = malloc(cap * sizeof *m->entries);
    if (!m->entries || !alloc_slots(m, slots)) {
        atn_name_map_clear(m);
        return false;
    }
    m->cap = cap;
    return true;
}

void atn_name_map_clear(atn_name_map *m) {
    if (!m)
        return;
    free(m->slots);
    free(m->entries);
    memset(m, 0, sizeof *m);
}

/* Twice the slots, every entry placed again (the hash recomputed: slots keep 32 bits). */
static bool grow_slots(atn_name_map *m) {
    if (m->nslots > SIZE_MAX / 4 / sizeof(atn_name_entry))
        return false;
    atn_name_slot *old = m->slots;
    m->slots = NULL;
    if (!alloc_slots(m, m->nslots * 2)) {
        m->slots = old;
        return false;
    }
    free(old);
    size_t mask = m->nslots - 1;
    for (size_t i = 0; i < m->count; i++) {
        const atn_name_entry *e = &m->entries[i];
        uint64_t h = siphash13((const unsigned char *)e->key, e->len);
        size_t s = (size_t)h & mask;
        while (m->slots[s].entry >= 0)
            s = (s + 1) & mask;
        m->slots[s] = (atn_name_slot){(uint32_t)(h >> 32), (int32_t)i};
    }
    return true;
}

static int put(atn_name_map *m, const char *key, size_t len, int32_t val, bool replace,
               int32_t *old, size_t *probes) {
    if (len > UINT32_MAX || m->count >= INT32_MAX)
        return -1;
    if (!m->nslots && !atn_name_map_init(m, 8))
        return -1;
    if (2 * (m->count + 1) > m->nslots && !grow_slots(m))
        return -1;
    if (m->count == m->cap) {
        size_t cap = m->cap * 2;
        atn_name_entry *e = cap <= SIZE_MAX / sizeof *e ? realloc(m->entries, cap * sizeof *e) : NULL;
        if (!e)
            return -1;
        m->entries = e;
        m->cap = cap;
    }
    uint64_t h = siphash13((const unsigned char *)key, len);
    size_t s = find(m, key, len, h, probes);
    if (m->slots[s].entry >= 0) {
        atn_name_entry *e = &m->entries[m->slots[s].entry];
        if (old)
            *old = e->val;
        if (replace)
            e->val = val;
        return 0;
    }
    m->entries[m->count] = (atn_name_entry){key, (uint32_t)len, val};
    m->slots[s] = (atn_name_slot){(uint32_t)(h >> 32), (int32_t)m->count};
    m->count++;
    return 1;
}

static int32_t get(const atn_name_map *m, const char *key, size_t len, size_t *probes) {
    if (!m->nslots || len > UINT32_MAX)
        return -1;
    size_t s = find(m, key, len, siphash13((const unsigned char *)key, len), probes);
    return m->slots[s].entry >= 0 ? m->entries[m->slots[s].entry].val : -1;
}

int atn_name_map_put_n(atn_name_map *m, const char *key, size_t len, int32_t val, bool replace,
                       int32_t *old) {
    size_t probes = 1;
    return put(m, key, len, val, replace, old, &probes);
}

int32_t atn_name_map_get_n(const atn_name_map *m, const char *key, size_t len) {
    size_t probes = 1;
    return get(m, key, len, &probes);
}

int atn_name_map_put(atn_name_map *m, const char *key, int32_t val, bool replace, int32_t *old) {
    size_t probes = 1;
    int r = put(m, key, strlen(key), val, replace, old, &probes);
    atomic_fetch_add_explicit(&total_calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&total_probes, probes, memory_order_relaxed);
    return r;
}

int32_t atn_name_map_get(const atn_name_map *m, const char *key) {
    if (!m->nslots)
        return -1;
    size_t probes = 1;
    int32_t r = get(m, key, strlen(key), &probes);
    atomic_fetch_add_explicit(&total_calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&total_probes, probes, memory_order_relaxed);
    return r;
}

void atn_name_map_counts(uint64_t *calls, uint64_t *probes) {
    if (calls)
        *calls = atomic_load_explicit(&total_calls, memory_order_relaxed);
    if (probes)
        *probes = atomic_load_explicit(&total_probes, memory_order_relaxed);
}

/* The shard index's name table: see name-map.h. */
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

static size_t slot_of(const atn_name_map *m, const char *key) {
    return (size_t)siphash13((const unsigned char *)key, strlen(key)) & (m->nslots - 1);
}

bool atn_name_map_init(atn_name_map *m, size_t n) {
    pthread_once(&key_once, make_key);
    memset(m, 0, sizeof *m);
    size_t slots = 16;
    while (slots < 2 * n && slots < SIZE_MAX / 4 / sizeof(const char *))
        slots *= 2;
    m->keys = calloc(slots, sizeof *m->keys);
    m->vals = malloc(slots * sizeof *m->vals);
    if (!m->keys || !m->vals) {
        atn_name_map_clear(m);
        return false;
    }
    m->nslots = slots;
    return true;
}

void atn_name_map_clear(atn_name_map *m) {
    if (!m)
        return;
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static bool grow(atn_name_map *m) {
    atn_name_map bigger;
    if (!atn_name_map_init(&bigger, m->nslots))   /* room for nslots: twice the slots */
        return false;
    for (size_t i = 0; i < m->nslots; i++)
        if (m->keys[i]) {
            size_t s = slot_of(&bigger, m->keys[i]);
            while (bigger.keys[s])
                s = (s + 1) & (bigger.nslots - 1);
            bigger.keys[s] = m->keys[i];
            bigger.vals[s] = m->vals[i];
            bigger.count++;
        }
    atn_name_map_clear(m);
    *m = bigger;
    return true;
}

int atn_name_map_put(atn_name_map *m, const char *key, int32_t val, bool replace, int32_t *old) {
    if (!m->nslots && !atn_name_map_init(m, 8))
        return -1;
    if (2 * (m->count + 1) > m->nslots && !grow(m))
        return -1;
    atomic_fetch_add_explicit(&total_calls, 1, memory_order_relaxed);
    size_t s = slot_of(m, key), probes = 1;
    for (; m->keys[s]; s = (s + 1) & (m->nslots - 1), probes++)
        if (strcmp(m->keys[s], key) == 0) {
            atomic_fetch_add_explicit(&total_probes, probes, memory_order_relaxed);
            if (old)
                *old = m->vals[s];
            if (replace)
                m->vals[s] = val;
            return 0;
        }
    atomic_fetch_add_explicit(&total_probes, probes, memory_order_relaxed);
    m->keys[s] = key;
    m->vals[s] = val;
    m->count++;
    return 1;
}

int32_t atn_name_map_get(const atn_name_map *m, const char *key) {
    if (!m->nslots)
        return -1;
    atomic_fetch_add_explicit(&total_calls, 1, memory_order_relaxed);
    size_t s = slot_of(m, key), probes = 1;
    int32_t found = -1;
    for (; m->keys[s]; s = (s + 1) & (m->nslots - 1), probes++)
        if (strcmp(m->keys[s], key) == 0) {
            found = m->vals[s];
            break;
        }
    atomic_fetch_add_explicit(&total_probes, probes, memory_order_relaxed);
    return found;
}

void atn_name_map_counts(uint64_t *calls, uint64_t *probes) {
    if (calls)
        *calls = atomic_load_explicit(&total_calls, memory_order_relaxed);
    if (probes)
        *probes = atomic_load_explicit(&total_probes, memory_order_relaxed);
}

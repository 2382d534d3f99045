/* Vocabularies made to collide under a fixed hash cannot slow the tokenizer down: its name
 * tables are the engine's one keyed table (engine/core/name-map.c, SipHash-1-3 keyed per
 * process).  The tables used FNV-1a before (32-bit for vocab.txt and tokenizer.json's
 * WordPiece / WordLevel vocabularies, 64-bit for the BPE and Unigram pieces), so a file could
 * list N tokens whose hashes share their low bits: all N in one run of slots, N²/2 probes to
 * build the table and N/2 per lookup.  Here N = 4000 such tokens load and encode within a few
 * times an ordinary vocabulary of the same size and shape (before: 30-100 times slower). */
#include "check.h"
#include "tokenize/tok-pipeline.h"
#include "tokenize/tokenizer.h"
#include "tokenize/wordpiece.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { N = 4000, MASK = 8191 };   /* the tables had 8192 slots for N names */

/* This thread's CPU time, not the wall clock: a busy machine (the suite runs two tests at
 * once, CI beside other jobs) preempts a run for tens of milliseconds, which wall time counts
 * and a quadratic loop does not need to explain. */
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint32_t fnv32(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static uint64_t fnv64(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The i-th candidate token: "x" and i in base 26, lower-case letters (WordPiece's lower
 * casing leaves it alone, no pre-tokenizer splits it). */
static void candidate(uint64_t i, char out[16]) {
    int n = 0;
    out[n++] = 'x';
    do {
        out[n++] = (char)('a' + i % 26);
        i /= 26;
    } while (i);
    out[n] = '\0';
}

/* N tokens: the first N candidates (ordinary), or the first N whose hash has low bits 0. */
static char (*tokens(int kind))[16] {
    char (*t)[16] = malloc(N * sizeof *t);
    int n = 0;
    for (uint64_t i = 0; t && n < N; i++) {
        candidate(i, t[n]);
        if (kind == 0 || (kind == 32 && (fnv32(t[n]) & MASK) == 0) ||
            (kind == 64 && (fnv64(t[n]) & MASK) == 0))
            n++;
    }
    return t;
}

typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void add(text *b, const char *s) {
    size_t n = strlen(s);
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (!b->s)
            abort();
    }
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

static char *vocab_txt(char (*t)[16], size_t *len) {
    text b = {0};
    add(&b, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n");
    for (int i = 0; i < N; i++)
        add(&b, t[i]), add(&b, "\n");
    *len = b.len;
    return b.s;
}

static char *tokenizer_json(char (*t)[16], const char *type, size_t *len) {
    text b = {0};
    char entry[64];
    add(&b, "{\"model\": {\"type\": \"");
    add(&b, type);
    add(&b, "\", \"unk_token\": \"<unk>\", \"vocab\": {\"<unk>\": 0");
    for (int i = 0; i < N; i++) {
        snprintf(entry, sizeof entry, ", \"%s\": %d", t[i], i + 1);
        add(&b, entry);
    }
    add(&b, strcmp(type, "BPE") == 0 ? "}, \"merges\": []}" : "}}");
    add(&b, ", \"pre_tokenizer\": {\"type\": \"WhitespaceSplit\"}}");
    *len = b.len;
    return b.s;
}

static char *sentence(char (*t)[16]) {
    text b = {0};
    for (int i = 0; i < N; i++)
        add(&b, t[i]), add(&b, " ");
    return b.s;
}

/* The best of three: seconds to build the tokenizer and to encode its N words. */
static void measure(const char *kind, char (*t)[16], double *load, double *encode) {
    size_t len = 0;
    char *file = strcmp(kind, "vocab.txt") == 0 ? vocab_txt(t, &len) : tokenizer_json(t, kind, &len);
    char *words = sentence(t);
    *load = *encode = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        atn_error err = {0};
        double t0 = now();
        atn_tokenizer *tok = strcmp(kind, "vocab.txt") == 0
                                 ? atn_wordpiece_from_buffer(file, len, kind, NULL, &err)
                                 : atn_tok_pipeline_from_json(file, len, kind, &err);
        double t1 = now();
        CHECK_MSG(tok != NULL, "%s: %s", kind, err.message);
        if (!tok)
            break;
        atn_encoding *e = NULL;
        CHECK_MSG(atn_tokenizer_encode(tok, words, NULL, 0, &e, &err) == ATN_OK, "%s: %s", kind,
                  err.message);
        double t2 = now();
        /* every word is a whole token: N of them (and the specials WordPiece adds); BPE
           without merges spells each word by letters */
        CHECK_MSG(e && (strcmp(kind, "BPE") == 0 || (e->n >= N && e->n <= N + 2)), "%s: %d tokens",
                  kind, e ? e->n : -1);
        atn_encoding_free(e);
        atn_tokenizer_free(tok);
        if (t1 - t0 < *load)
            *load = t1 - t0;
        if (t2 - t1 < *encode)
            *encode = t2 - t1;
    }
    free(file);
    free(words);
}

static void compare(const char *kind, int hash_bits) {
    char (*plain)[16] = tokens(0), (*crafted)[16] = tokens(hash_bits);
    CHECK(plain && crafted);
    if (!plain || !crafted)
        return;
    double pl, pe, cl, ce;
    measure(kind, plain, &pl, &pe);
    measure(kind, crafted, &cl, &ce);
    fprintf(stderr, "%s: %d tokens colliding under FNV-1a-%d: load %.2f ms (ordinary %.2f), encode "
            "%.2f ms (ordinary %.2f)\n", kind, N, hash_bits, cl * 1e3, pl * 1e3, ce * 1e3, pe * 1e3);
    /* a few times the ordinary vocabulary's, with 2 ms for a busy machine */
    CHECK_MSG(cl < 4 * pl + 0.002, "%s: load %.2f ms against %.2f ms", kind, cl * 1e3, pl * 1e3);
    CHECK_MSG(ce < 4 * pe + 0.002, "%s: encode %.2f ms against %.2f ms", kind, ce * 1e3, pe * 1e3);
    free(plain);
    free(crafted);
}

int main(void) {
    compare("vocab.txt", 32);   /* wordpiece.c */
    compare("WordLevel", 32);   /* tok-vocab.h */
    compare("WordPiece", 32);
    compare("BPE", 64);         /* tok-strtab.h */
    return check_summary("tok-collide");
}

/* tokenizer.json files built to be slow or huge (issue 41), each bounded:
 *   - nested Replace "a" -> "aa" normalizers: the output is bounded by the input (64 x + 1024
 *     characters, within the memory budget) and refused with a message; three levels work;
 *   - an added token with id 1e8: id lookups and surfaces cost nothing for the ids between;
 *   - 20,000 added tokens on 100,000 characters: matched through a trie in well under a
 *     second (15-22 s before), every token found in order;
 *   - overlapping added tokens (leftmost-longest, single_word, normalized): the ids and byte
 *     offsets the npm `tokenizers` 0.23.2 gives (printed by the node snippet in the comment);
 *   - WordPiece with max_input_chars_per_word 100000: a 3,000-character word in
 *     milliseconds (cubic before: ~11 s), its pieces by hand;
 *   - a Split regex with an escaped backslash before "p{Han}": literal text, as the library
 *     reads it (npm tokenizers: a | \p{Han} | b | 中). */
#include "check.h"
#include "tokenize/tok-pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static long max_rss_kb(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

static atn_tokenizer *load(const char *json, atn_error *err) {
    atn_tokenizer *t = atn_tok_pipeline_from_json(json, strlen(json), "hostile.json", err);
    CHECK_MSG(t != NULL, "%s", err->message);
    return t;
}

/* a Sequence of `depth` Replace normalizers "a" -> "aa": each doubles the text */
static char *nested_replace(int depth) {
    size_t cap = 256 + (size_t)depth * 96;
    char *s = malloc(cap), *p = s;
    p += sprintf(p, "{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"<unk>\": 0, \"aaaaaaaaaaaaaaaa\": 1}, "
                    "\"unk_token\": \"<unk>\"}, \"pre_tokenizer\": {\"type\": \"WhitespaceSplit\"}, \"normalizer\": "
                    "{\"type\": \"Sequence\", \"normalizers\": [");
    for (int i = 0; i < depth; i++)
        p += sprintf(p, "{\"type\": \"Replace\", \"pattern\": {\"String\": \"a\"}, \"content\": \"aa\"}%s",
                     i + 1 < depth ? ", " : "");
    sprintf(p, "]}}");
    return s;
}

static void normalizer_bound(void) {
    atn_error err = {0};
    char *j = nested_replace(3);   /* "aa" -> 16 a's: one known word */
    atn_tokenizer *t = load(j, &err);
    free(j);
    atn_encoding *e = NULL;
    if (t) {
        CHECK_MSG(atn_tokenizer_encode(t, "aa", NULL, 0, &e, &err) == ATN_OK, "%s", err.message);
        CHECK(e && e->n == 1 && e->ids[0] == 1 && e->tokens[0].start == 0 && e->tokens[0].end == 2);
        atn_encoding_free(e);
        atn_tokenizer_free(t);
    }
    j = nested_replace(20);   /* 2 characters would become 2^21 */
    t = load(j, &err);
    free(j);
    if (t) {
        double t0 = now();
        e = NULL;
        CHECK(atn_tokenizer_encode(t, "aa", NULL, 0, &e, &err) == ATN_E_INVALID && !e);
        CHECK_MSG(strstr(err.message, "the tokenizer's normalizer makes more than 1152 characters of a piece"),
                  "%s", err.message);
        CHECK_MSG(now() - t0 < 2.0, "refusing took %.2f s", now() - t0);
        atn_encoding_free(e);
        atn_tokenizer_free(t);
    }
}

static void huge_added_id(void) {
    static const char j[] =
        "{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"<unk>\": 0, \"the\": 1, \"cat\": 2}, \"unk_token\": \"<unk>\"},"
        "\"pre_tokenizer\": {\"type\": \"WhitespaceSplit\"},"
        "\"added_tokens\": [{\"id\": 100000000, \"content\": \"<big>\", \"special\": true}]}";
    atn_error err = {0};
    long rss0 = max_rss_kb();
    double t0 = now();
    atn_tokenizer *t = load(j, &err);
    if (!t)
        return;
    CHECK(atn_tokenizer_vocab_size(t) == 100000001);
    atn_encoding *e = NULL;
    CHECK(atn_tokenizer_encode(t, "the <big> cat", NULL, 0, &e, &err) == ATN_OK);
    CHECK(e && e->n == 3 && e->ids[0] == 1 && e->ids[1] == 100000000 && e->ids[2] == 2);
    atn_encoding_free(e);
    atn_vocab_entry v;
    CHECK(atn_tokenizer_id_info(t, 2, &v) && strcmp(v.surface, "cat") == 0 && !v.special);
    CHECK(atn_tokenizer_id_info(t, 100000000, &v) && strcmp(v.surface, "<big>") == 0 && v.special);
    CHECK(atn_tokenizer_id_info(t, 99999999, &v) && strcmp(v.text, "") == 0);   /* a hole: no token */
    CHECK(!atn_tokenizer_id_info(t, 100000001, &v));
    CHECK(atn_tokenizer_token_to_id(t, "<big>") == 100000000);
    atn_tokenizer_free(t);
    CHECK_MSG(now() - t0 < 2.0, "a huge added id took %.2f s", now() - t0);
    CHECK_MSG(max_rss_kb() - rss0 < 100 * 1024, "a huge added id grew the peak RSS by %ld kB", max_rss_kb() - rss0);
}

static void many_added(void) {
    enum { N = 20000, TEXT = 100000 };
    size_t cap = (size_t)N * 96 + 512, len = 0;
    char *j = malloc(cap);
    len += (size_t)sprintf(j, "{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"<unk>\": 0}, \"unk_token\": \"<unk>\"},"
                              "\"pre_tokenizer\": {\"type\": \"WhitespaceSplit\"}, \"added_tokens\": [");
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(j + len, cap - len, "%s{\"id\": %d, \"content\": \"w%05d\", \"normalized\": false}",
                                i ? ", " : "", i + 1, (i * 7919) % N);
    snprintf(j + len, cap - len, "]}");
    atn_error err = {0};
    atn_tokenizer *t = load(j, &err);
    free(j);
    if (!t)
        return;
    /* the text: tokens w00000.. chosen by a fixed sequence, separated by one space */
    char *text = malloc(TEXT + 16);
    int32_t *want = malloc(sizeof *want * (TEXT / 7 + 2));
    size_t n = 0, tl = 0;
    uint32_t x = 12345;
    while (tl + 7 <= TEXT) {
        x = x * 1103515245u + 12345u;
        int i = (int)((x >> 8) % N);   /* token i (id i + 1) has content w(i*7919 % N) */
        tl += (size_t)sprintf(text + tl, "w%05d ", (i * 7919) % N);
        want[n++] = i + 1;
    }
    double t0 = now();
    atn_encoding *e = NULL;
    CHECK_MSG(atn_tokenizer_encode(t, text, NULL, 0, &e, &err) == ATN_OK, "%s", err.message);
    double dt = now() - t0;
    CHECK(e && (size_t)e->n == n);
    size_t bad = 0;
    for (size_t i = 0; e && i < n && i < (size_t)e->n; i++)
        bad += e->ids[i] != want[i] || e->tokens[i].start != (int32_t)(7 * i) || e->tokens[i].end != (int32_t)(7 * i + 6);
    CHECK_MSG(bad == 0, "%zu of %zu added tokens misplaced", bad, n);
#ifndef __SANITIZE_ADDRESS__
    CHECK_MSG(dt < 3.0, "%d added tokens on %d characters took %.2f s", N, TEXT, dt);
#endif
    fprintf(stderr, "%d added tokens on %zu characters (%zu tokens): %.3f s\n", N, tl, n, dt);
    atn_encoding_free(e);
    atn_tokenizer_free(t);
    free(text);
    free(want);
}

/* node -e '(the pipeline below through Tokenizer.fromString, then encode each text:
 * getIds(), getOffsets())' with npm tokenizers 0.23.2 gave these (character offsets, ASCII) */
static void overlapping_added(void) {
    static const char j[] =
        "{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"<unk>\": 0, \"ab\": 1, \"abc\": 2, \"bc\": 3, \"b\": 4, "
        "\"cab\": 5, \"x\": 6, \"c\": 7, \"a\": 8}, \"unk_token\": \"<unk>\"},"
        "\"normalizer\": {\"type\": \"Lowercase\"}, \"pre_tokenizer\": {\"type\": \"WhitespaceSplit\"},"
        "\"added_tokens\": [{\"id\": 1, \"content\": \"ab\", \"normalized\": false},"
        "{\"id\": 2, \"content\": \"abc\", \"normalized\": false}, {\"id\": 3, \"content\": \"bc\", \"normalized\": false},"
        "{\"id\": 4, \"content\": \"b\", \"normalized\": false},"
        "{\"id\": 5, \"content\": \"cab\", \"single_word\": true, \"normalized\": false},"
        "{\"id\": 6, \"content\": \"x\", \"normalized\": true}]}";
    static const struct { const char *text; int n; int32_t ids[8], off[8][2]; } cases[] = {
        {"abcbcab b", 4, {2, 3, 1, 4}, {{0, 3}, {3, 5}, {5, 7}, {8, 9}}},
        {"cab xcab X cabx", 6, {5, 6, 5, 6, 5, 6}, {{0, 3}, {4, 5}, {5, 8}, {9, 10}, {11, 14}, {14, 15}}},
        {"aabcc Xbab", 6, {8, 2, 7, 6, 4, 1}, {{0, 1}, {1, 4}, {4, 5}, {6, 7}, {7, 8}, {8, 10}}},
    };
    atn_error err = {0};
    atn_tokenizer *t = load(j, &err);
    if (!t)
        return;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        atn_encoding *e = NULL;
        CHECK(atn_tokenizer_encode(t, cases[c].text, NULL, 0, &e, &err) == ATN_OK);
        CHECK_MSG(e && e->n == cases[c].n, "%s: %d tokens", cases[c].text, e ? e->n : -1);
        for (int i = 0; e && i < e->n && i < cases[c].n; i++)
            CHECK_MSG(e->ids[i] == cases[c].ids[i] && e->tokens[i].start == cases[c].off[i][0] &&
                          e->tokens[i].end == cases[c].off[i][1],
                      "%s: token %d is %d [%d, %d]", cases[c].text, i, e->ids[i], e->tokens[i].start, e->tokens[i].end);
        atn_encoding_free(e);
    }
    atn_tokenizer_free(t);
}

static void wordpiece_long_word(void) {
    static const char j[] =
        "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"[UNK]\": 0, \"a\": 1, \"##a\": 2, \"b\": 3},"
        "\"unk_token\": \"[UNK]\", \"continuing_subword_prefix\": \"##\", \"max_input_chars_per_word\": 100000},"
        "\"pre_tokenizer\": {\"type\": \"WhitespaceSplit\"}}";
    enum { W = 3000 };
    atn_error err = {0};
    atn_tokenizer *t = load(j, &err);
    if (!t)
        return;
    char *word = malloc(W + 3);
    memset(word, 'a', W);
    strcpy(word + W, " b");
    double t0 = now();
    atn_encoding *e = NULL;
    CHECK(atn_tokenizer_encode(t, word, NULL, 0, &e, &err) == ATN_OK);
    double dt = now() - t0;
    /* a ##a ##a ... (W pieces), then b */
    CHECK(e && e->n == W + 1);
    int bad = 0;
    for (int i = 0; e && i < e->n && i < W + 1; i++)
        bad += e->ids[i] != (i == 0 ? 1 : i < W ? 2 : 3) || e->tokens[i].start != (i < W ? i : W + 1);
    CHECK_MSG(bad == 0, "%d pieces wrong", bad);
    CHECK_MSG(dt < 1.0, "a %d-character word took %.2f s", W, dt);
    atn_encoding_free(e);
    /* past the limit it is still the unk piece */
    char *longer = malloc(200002);
    memset(longer, 'a', 200001);
    longer[200001] = '\0';
    CHECK(atn_tokenizer_encode(t, longer, NULL, 0, &e, &err) == ATN_OK && e && e->n == 1 && e->ids[0] == 0);
    atn_encoding_free(e);
    free(longer);
    free(word);
    atn_tokenizer_free(t);
}

static void regex_escape(void) {
    /* the regex \\p{Han}|\p{Han}: a literal backslash and "p{Han}", or a Han character */
    static const char j[] =
        "{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"<unk>\": 0, \"a\": 1, \"\\\\p{Han}\": 2, \"b\": 3, "
        "\"\xe4\xb8\xad\": 4, \"p{Han}\": 5}, \"unk_token\": \"<unk>\"},"
        "\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"\\\\\\\\p{Han}|\\\\p{Han}\"}, "
        "\"behavior\": \"Isolated\", \"invert\": false}}";
    atn_error err = {0};
    atn_tokenizer *t = load(j, &err);
    if (!t)
        return;
    atn_encoding *e = NULL;
    CHECK(atn_tokenizer_encode(t, "a\\p{Han}b\xe4\xb8\xad", NULL, 0, &e, &err) == ATN_OK);
    static const int32_t ids[] = {1, 2, 3, 4}, off[][2] = {{0, 1}, {1, 8}, {8, 9}, {9, 12}};
    CHECK_MSG(e && e->n == 4, "%d tokens", e ? e->n : -1);
    for (int i = 0; e && i < e->n && i < 4; i++)
        CHECK_MSG(e->ids[i] == ids[i] && e->tokens[i].start == off[i][0] && e->tokens[i].end == off[i][1],
                  "token %d is %d [%d, %d]", i, e->ids[i], e->tokens[i].start, e->tokens[i].end);
    atn_encoding_free(e);
    atn_tokenizer_free(t);
}

int main(void) {
    normalizer_bound();
    huge_added_id();
    many_added();
    overlapping_added();
    wordpiece_long_word();
    regex_escape();
    return check_summary("tok-hostile");
}

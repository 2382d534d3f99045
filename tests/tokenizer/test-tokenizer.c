/* The WordPiece tokenizer against fixtures.json (tokens, ids, type ids and byte spans
 * from hf_bert_port.py, a Python port of Hugging Face's BertTokenizer), the real
 * bert-base-uncased vocabulary's known ids, the error paths, options from JSON, and a
 * random-bytes robustness loop.  Also prints the load and tokenize timings.
 *
 * Usage: test-tokenizer DIR   (DIR holds fixtures.json and the vocabularies) */
#include "check.h"
#include "common/test-files.h"
#include "tokenize/wordpiece.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static const char *dir;

static char *path_in(const char *name) {
    static char buf[4][4096];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* ---- fixtures ------------------------------------------------------------------ */

typedef struct loaded {
    char key[128];
    atn_tokenizer *tok;
} loaded;

static atn_tokenizer *tokenizer_for(loaded *cache, int *n_cache, const char *vocab_file,
                                    const atn_wordpiece_options *o) {
    char key[128];
    snprintf(key, sizeof key, "%s/%d/%d/%d", vocab_file, o->lower_case, o->strip_accents,
             o->tokenize_chinese_chars);
    for (int i = 0; i < *n_cache; i++)
        if (!strcmp(cache[i].key, key))
            return cache[i].tok;
    atn_error err = {0};
    atn_tokenizer *tok = atn_wordpiece_load(path_in(vocab_file), o, &err);
    CHECK_MSG(tok != NULL, "%s", err.message);
    snprintf(cache[*n_cache].key, sizeof cache[*n_cache].key, "%s", key);
    cache[(*n_cache)++].tok = tok;
    return tok;
}

static int int_at(const cJSON *arr, int i) {
    const cJSON *v = cJSON_GetArrayItem(arr, i);
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v);
    return v ? v->valueint : -999;
}

static void print_encoding(const char *what, const atn_encoding *e) {
    fprintf(stderr, "  %s:", what);
    for (int32_t i = 0; i < e->n; i++)
        fprintf(stderr, " %s(%d)[%d,%d)", e->tokens[i].text, e->ids[i], e->tokens[i].start,
                e->tokens[i].end);
    fputc('\n', stderr);
}

static void print_expected(const cJSON *x) {
    const cJSON *toks = cJSON_GetObjectItem(x, "tokens");
    fprintf(stderr, "  expected:");
    for (int i = 0; i < cJSON_GetArraySize(toks); i++)
        fprintf(stderr, " %s(%d)[%d,%d)", cJSON_GetArrayItem(toks, i)->valuestring,
                int_at(cJSON_GetObjectItem(x, "ids"), i), int_at(cJSON_GetObjectItem(x, "starts"), i),
                int_at(cJSON_GetObjectItem(x, "ends"), i));
    fputc('\n', stderr);
}

static void test_fixtures(void) {
    size_t len;
    char *text = slurp(path_in("fixtures.json"), &len);
    CHECK_MSG(text != NULL, "cannot read %s", path_in("fixtures.json"));
    if (!text)
        return;
    cJSON *doc = cJSON_ParseWithLength(text, len);
    CHECK(doc != NULL);
    const cJSON *vocabs = cJSON_GetObjectItem(doc, "vocabs");
    const cJSON *cases = cJSON_GetObjectItem(doc, "cases");
    int n_cases = cJSON_GetArraySize(cases), n_ok = 0;
    CHECK(n_cases >= 60);
    loaded cache[16];
    int n_cache = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
        const char *vocab = cJSON_GetObjectItem(vocabs, cJSON_GetObjectItem(c, "vocab")->valuestring)->valuestring;
        const cJSON *o = cJSON_GetObjectItem(c, "options");
        atn_wordpiece_options opts;
        atn_wordpiece_options_init(&opts);
        opts.lower_case = cJSON_IsTrue(cJSON_GetObjectItem(o, "lower_case"));
        const cJSON *sa = cJSON_GetObjectItem(o, "strip_accents");
        opts.strip_accents = cJSON_IsNull(sa) ? -1 : cJSON_IsTrue(sa);
        opts.tokenize_chinese_chars = cJSON_IsTrue(cJSON_GetObjectItem(o, "tokenize_chinese_chars"));
        atn_tokenizer *tok = tokenizer_for(cache, &n_cache, vocab, &opts);
        if (!tok)
            continue;
        const cJSON *pair = cJSON_GetObjectItem(c, "text_pair");
        const cJSON *x = cJSON_GetObjectItem(c, "expect");
        atn_encoding *e = NULL;
        atn_error err = {0};
        atn_status st = atn_tokenizer_encode(tok, cJSON_GetObjectItem(c, "text")->valuestring,
                                             pair ? pair->valuestring : NULL,
                                             cJSON_GetObjectItem(c, "max_len")->valueint, &e, &err);
        CHECK_MSG(st == ATN_OK, "%s: %s", name, err.message);
        if (st != ATN_OK)
            continue;
        const cJSON *toks = cJSON_GetObjectItem(x, "tokens");
        int n = cJSON_GetArraySize(toks);
        bool same = e->n == n;
        for (int i = 0; same && i < n; i++) {
            same = !strcmp(e->tokens[i].text, cJSON_GetArrayItem(toks, i)->valuestring) &&
                   e->ids[i] == int_at(cJSON_GetObjectItem(x, "ids"), i) &&
                   e->tokens[i].id == e->ids[i] &&
                   e->type_ids[i] == int_at(cJSON_GetObjectItem(x, "type_ids"), i) &&
                   e->tokens[i].type_id == e->type_ids[i] &&
                   e->tokens[i].start == int_at(cJSON_GetObjectItem(x, "starts"), i) &&
                   e->tokens[i].end == int_at(cJSON_GetObjectItem(x, "ends"), i) &&
                   e->tokens[i].segment == int_at(cJSON_GetObjectItem(x, "segments"), i) &&
                   (int)e->tokens[i].special == int_at(cJSON_GetObjectItem(x, "special"), i) &&
                   e->mask[i] == 1;
            if (!same)
                fprintf(stderr, "%s: first difference at token %d\n", name, i);
        }
        same = same && e->truncated == cJSON_IsTrue(cJSON_GetObjectItem(x, "truncated")) &&
               e->n_dropped == cJSON_GetObjectItem(x, "n_dropped")->valueint;
        CHECK_MSG(same, "fixture \"%s\" differs (n=%d, expected %d; truncated %d dropped %d)", name,
                  e->n, n, e->truncated, e->n_dropped);
        if (!same) {
            print_encoding("got", e);
            print_expected(x);
        } else {
            n_ok++;
        }
        atn_encoding_free(e);
    }
    fprintf(stderr, "fixtures: %d of %d cases agree\n", n_ok, n_cases);
    for (int i = 0; i < n_cache; i++)
        atn_tokenizer_free(cache[i].tok);
    cJSON_Delete(doc);
    free(text);
}

/* ---- the real vocabulary ------------------------------------------------------------ */

static const char *PARAGRAPH_WORDS =
    "Attention lets every token look at every other token, and BERT keeps all of it: "
    "twelve layers of twelve heads, each a softmax over scaled dot products. Some heads "
    "follow the previous word; others look ahead, or rest on [SEP] when nothing else fits. ";

static void test_real_vocab(void) {
    atn_error err = {0};
    double t0 = now_ms();
    atn_tokenizer *tok = atn_wordpiece_load(path_in("bert-base-uncased-vocab.txt"), NULL, &err);
    double t_load = now_ms() - t0;
    CHECK_MSG(tok != NULL, "%s", err.message);
    if (!tok)
        return;
    CHECK(atn_tokenizer_vocab_size(tok) == 30522);
    CHECK(atn_tokenizer_special_id(tok, ATN_TOKEN_PAD) == 0);
    CHECK(atn_tokenizer_special_id(tok, ATN_TOKEN_UNK) == 100);
    CHECK(atn_tokenizer_special_id(tok, ATN_TOKEN_CLS) == 101);
    CHECK(atn_tokenizer_special_id(tok, ATN_TOKEN_SEP) == 102);
    CHECK(atn_tokenizer_special_id(tok, ATN_TOKEN_MASK) == 103);
    CHECK(atn_tokenizer_special_id(tok, ATN_TOKEN_WORD) == -1);
    CHECK(atn_tokenizer_special_id(tok, (atn_token_role)99) == -1);
    CHECK(atn_tokenizer_special_id(NULL, ATN_TOKEN_CLS) == -1);
    CHECK(atn_tokenizer_token_to_id(tok, "hello") == 7592);
    CHECK(atn_tokenizer_token_to_id(tok, "the") == 1996);
    CHECK(atn_tokenizer_token_to_id(tok, "##ing") == 2075);
    CHECK(atn_tokenizer_token_to_id(tok, "Hello") == -1);
    CHECK(atn_tokenizer_token_to_id(tok, "") == -1);
    CHECK_STR(atn_tokenizer_id_to_token(tok, 7592), "hello");
    CHECK_STR(atn_tokenizer_id_to_token(tok, 30521), "##～");
    CHECK(atn_tokenizer_id_to_token(tok, 30522) == NULL);
    CHECK(atn_tokenizer_id_to_token(tok, -1) == NULL);
    atn_wordpiece_options o = atn_wordpiece_options_of(tok);
    CHECK(o.lower_case && o.strip_accents == 1 && o.tokenize_chinese_chars);

    atn_encoding *e = NULL;
    CHECK(atn_tokenizer_encode(tok, "Hello world", NULL, 512, &e, &err) == ATN_OK);
    if (e) {
        CHECK(e->n == 4);
        CHECK(e->ids[0] == 101 && e->ids[1] == 7592 && e->ids[2] == 2088 && e->ids[3] == 102);
        CHECK(e->tokens[1].start == 0 && e->tokens[1].end == 5);
        CHECK(e->tokens[2].start == 6 && e->tokens[2].end == 11);
        CHECK(e->tokens[0].special && e->tokens[3].special && !e->tokens[1].special);
        CHECK(!e->truncated && e->n_dropped == 0);
        atn_encoding_free(e);
    }

    /* a 500-word paragraph */
    size_t plen = strlen(PARAGRAPH_WORDS);
    int words_per = 0;
    for (const char *p = PARAGRAPH_WORDS; *p; p++)
        words_per += *p == ' ';
    int reps = (500 + words_per - 1) / words_per;
    char *para = malloc(plen * (size_t)reps + 1);
    for (int i = 0; i < reps; i++)
        memcpy(para + plen * (size_t)i, PARAGRAPH_WORDS, plen);
    para[plen * (size_t)reps] = '\0';
    e = NULL;
    t0 = now_ms();
    int iters = 20;
    for (int i = 0; i < iters; i++) {
        atn_encoding_free(e);
        e = NULL;
        CHECK(atn_tokenizer_encode(tok, para, NULL, 0, &e, &err) == ATN_OK);
    }
    double t_tok = (now_ms() - t0) / iters;
    if (e) {
        CHECK(e->n > 500);
        /* every piece's span lies in the text and starts where its word does */
        bool spans_ok = true;
        for (int32_t i = 1; i + 1 < e->n; i++)
            spans_ok &= e->tokens[i].start >= 0 && e->tokens[i].end <= (int32_t)strlen(para) &&
                        e->tokens[i].start < e->tokens[i].end;
        CHECK(spans_ok);
        fprintf(stderr, "timing: load bert-base-uncased vocab.txt (30522 entries) %.2f ms; "
                "tokenize %d words (%zu bytes) into %d tokens %.3f ms\n",
                t_load, words_per * reps, strlen(para), e->n, t_tok);
        atn_encoding_free(e);
    }
    /* with max 512 positions the same text is truncated, visibly */
    e = NULL;
    CHECK(atn_tokenizer_encode(tok, para, NULL, 512, &e, &err) == ATN_OK);
    if (e) {
        CHECK(e->n == 512 && e->truncated && e->n_dropped > 0);
        CHECK(e->ids[511] == 102);
        atn_encoding_free(e);
    }
    CHECK(t_load < 1000.0);   /* generous: a pathology, not a benchmark */
    free(para);

    /* arguments */
    e = NULL;
    CHECK(atn_tokenizer_encode(tok, "x", NULL, 2, &e, &err) == ATN_E_INVALID && e == NULL);
    CHECK(atn_tokenizer_encode(tok, "x", NULL, -1, &e, &err) == ATN_E_INVALID);
    CHECK(atn_tokenizer_encode(tok, NULL, NULL, 0, &e, &err) == ATN_E_INVALID);
    CHECK(atn_tokenizer_encode(NULL, "x", NULL, 0, &e, &err) == ATN_E_INVALID);

    /* invalid UTF-8 in the text names the byte offset */
    static const struct { const char *text; const char *offset; } bad[] = {
        {"abc\xff", "byte offset 3"},
        {"\xe4\xbd", "byte offset 0"},           /* truncated 3-byte sequence */
        {"ok \xc0\xaf", "byte offset 3"},        /* overlong '/' */
        {"\xed\xa0\x80", "byte offset 0"},       /* a surrogate */
        {"\xf4\x90\x80\x80", "byte offset 0"},   /* past U+10FFFF */
        {"caf\xc3\xa9 \x80", "byte offset 6"},   /* stray continuation byte */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e = NULL;
        atn_error_clear(&err);
        atn_status st = atn_tokenizer_encode(tok, bad[i].text, NULL, 0, &e, &err);
        CHECK_MSG(st == ATN_E_INVALID && e == NULL, "case %zu", i);
        CHECK_MSG(strstr(err.message, bad[i].offset) && strstr(err.message, "UTF-8"), "%s", err.message);
    }
    atn_error_clear(&err);
    CHECK(atn_tokenizer_encode(tok, "fine", "bad \xfe", 0, &e, &err) == ATN_E_INVALID);
    CHECK_MSG(strstr(err.message, "text pair") && strstr(err.message, "byte offset 4"), "%s", err.message);
    atn_tokenizer_free(tok);
}

/* ---- errors loading ------------------------------------------------------------------ */

static void test_load_errors(void) {
    atn_error err = {0};
    CHECK(atn_wordpiece_load("/nonexistent/dir/vocab.txt", NULL, &err) == NULL);
    CHECK(err.status == ATN_E_IO && strstr(err.message, "/nonexistent/dir/vocab.txt"));

    CHECK(atn_wordpiece_from_buffer("", 0, "empty.txt", NULL, &err) == NULL);
    CHECK(err.status == ATN_E_FORMAT && strstr(err.message, "empty.txt") && strstr(err.message, "empty"));

    const char *no_unk = "[PAD]\n[CLS]\n[SEP]\nhello\n";
    CHECK(atn_wordpiece_from_buffer(no_unk, strlen(no_unk), "nounk/vocab.txt", NULL, &err) == NULL);
    CHECK_MSG(err.status == ATN_E_FORMAT && strstr(err.message, "nounk/vocab.txt") &&
              strstr(err.message, "[UNK]"), "%s", err.message);

    const char *no_sep = "[PAD]\n[UNK]\n[CLS]\nhello\n";
    CHECK(atn_wordpiece_from_buffer(no_sep, strlen(no_sep), "v", NULL, &err) == NULL);
    CHECK(strstr(err.message, "[SEP]") != NULL);

    const char *bad_utf8 = "[UNK]\n[CLS]\ncaf\xe9\n[SEP]\n";
    CHECK(atn_wordpiece_from_buffer(bad_utf8, strlen(bad_utf8), "latin1.txt", NULL, &err) == NULL);
    CHECK_MSG(err.status == ATN_E_FORMAT && strstr(err.message, "latin1.txt") &&
              strstr(err.message, "line 3") && strstr(err.message, "byte offset 15") &&
              strstr(err.message, "UTF-8"), "%s", err.message);

    /* a folder is not a vocabulary */
    CHECK(atn_wordpiece_load(dir, NULL, &err) == NULL && err.status == ATN_E_IO);

    /* a real file on disk without [UNK] */
    char tmp[] = "/tmp/atn-vocab-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd >= 0) {
        close(fd);
        write_file(tmp, "[PAD]\n[CLS]\n[SEP]\n");
        CHECK(atn_wordpiece_load(tmp, NULL, &err) == NULL);
        CHECK(strstr(err.message, tmp) && strstr(err.message, "[UNK]"));
        write_file(tmp, "");
        CHECK(atn_wordpiece_load(tmp, NULL, &err) == NULL);
        CHECK(strstr(err.message, tmp) && strstr(err.message, "empty"));
        unlink(tmp);
    }
}

/* ---- vocabulary file details ------------------------------------------------------- */

static void test_vocab_lines(void) {
    atn_error err = {0};
    /* \r\n, a lone \r and a last line without an end, as Python's universal newlines */
    const char *v = "[PAD]\r\n[UNK]\r\n[CLS]\r[SEP]\nhello\r\n\nworld";
    atn_tokenizer *tok = atn_wordpiece_from_buffer(v, strlen(v), "crlf", NULL, &err);
    CHECK_MSG(tok != NULL, "%s", err.message);
    if (tok) {
        CHECK(atn_tokenizer_vocab_size(tok) == 7);
        CHECK(atn_tokenizer_token_to_id(tok, "[CLS]") == 2);
        CHECK(atn_tokenizer_token_to_id(tok, "[SEP]") == 3);
        CHECK(atn_tokenizer_token_to_id(tok, "hello") == 4);
        CHECK(atn_tokenizer_token_to_id(tok, "") == 5);
        CHECK(atn_tokenizer_token_to_id(tok, "world") == 6);
        CHECK(atn_tokenizer_special_id(tok, ATN_TOKEN_MASK) == -1);
        /* without [MASK] in the vocabulary, "[MASK]" is ordinary text */
        atn_encoding *e = NULL;
        CHECK(atn_tokenizer_encode(tok, "hello [MASK]", NULL, 0, &e, &err) == ATN_OK);
        if (e) {
            CHECK(e->n == 6 && e->ids[1] == 4 && e->ids[2] == 1 && !e->tokens[2].special);
            atn_encoding_free(e);
        }
        atn_tokenizer_free(tok);
    }
    /* a repeated token maps to its last line, as HF's dict does */
    const char *dup = "[UNK]\n[CLS]\n[SEP]\nx\ny\nx\n";
    tok = atn_wordpiece_from_buffer(dup, strlen(dup), "dup", NULL, &err);
    CHECK(tok != NULL);
    if (tok) {
        CHECK(atn_tokenizer_token_to_id(tok, "x") == 5);
        CHECK_STR(atn_tokenizer_id_to_token(tok, 3), "x");
        atn_tokenizer_free(tok);
    }
}

/* ---- options from tokenizer_config.json ------------------------------------------------ */

static void test_options_json(void) {
    atn_error err = {0};
    atn_wordpiece_options o;
    atn_wordpiece_options_init(&o);
    CHECK(o.lower_case && o.strip_accents == -1 && o.tokenize_chinese_chars);
    CHECK(atn_wordpiece_options_from_json(&o, NULL, &err) == ATN_OK);
    CHECK(atn_wordpiece_options_from_json(&o, "/nonexistent/tokenizer_config.json", &err) == ATN_OK);
    CHECK(o.lower_case && o.strip_accents == -1 && o.tokenize_chinese_chars);

    char tmp[] = "/tmp/atn-tokcfg-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0)
        return;
    close(fd);
    write_file(tmp, "{\"do_lower_case\": false, \"strip_accents\": true, \"tokenize_chinese_chars\": false,"
                    " \"model_max_length\": 512, \"tokenizer_class\": \"BertTokenizer\"}");
    CHECK(atn_wordpiece_options_from_json(&o, tmp, &err) == ATN_OK);
    CHECK(!o.lower_case && o.strip_accents == 1 && !o.tokenize_chinese_chars);

    write_file(tmp, "{\"strip_accents\": null, \"do_lower_case\": true}");
    CHECK(atn_wordpiece_options_from_json(&o, tmp, &err) == ATN_OK);
    CHECK(o.lower_case && o.strip_accents == -1 && !o.tokenize_chinese_chars);

    atn_wordpiece_options before = o;
    write_file(tmp, "{\"do_lower_case\": \"yes\"}");
    CHECK(atn_wordpiece_options_from_json(&o, tmp, &err) == ATN_E_FORMAT);
    CHECK(strstr(err.message, tmp) && strstr(err.message, "do_lower_case"));
    CHECK(o.lower_case == before.lower_case && o.strip_accents == before.strip_accents);

    write_file(tmp, "{\"do_lower_case\": tru");
    CHECK(atn_wordpiece_options_from_json(&o, tmp, &err) == ATN_E_FORMAT);
    CHECK(strstr(err.message, tmp) && strstr(err.message, "JSON"));

    write_file(tmp, "[1, 2]");
    CHECK(atn_wordpiece_options_from_json(&o, tmp, &err) == ATN_E_FORMAT);
    CHECK(strstr(err.message, "not a JSON object") != NULL);
    unlink(tmp);

    /* the options reach the tokenizer: cased keeps "Hello" whole */
    const char *v = "[UNK]\n[CLS]\n[SEP]\nHello\nhello\n";
    atn_wordpiece_options cased;
    atn_wordpiece_options_init(&cased);
    cased.lower_case = false;
    atn_tokenizer *tok = atn_wordpiece_from_buffer(v, strlen(v), "v", &cased, &err);
    CHECK(tok && atn_wordpiece_options_of(tok).strip_accents == 0);
    atn_encoding *e = NULL;
    if (tok && atn_tokenizer_encode(tok, "Hello hello", NULL, 0, &e, &err) == ATN_OK) {
        CHECK(e->n == 4 && e->ids[1] == 3 && e->ids[2] == 4);
        atn_encoding_free(e);
    }
    atn_tokenizer_free(tok);
}

/* ---- robustness: random bytes never crash, and results stay consistent ---------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)rng_state;
}

static void test_random_bytes(void) {
    atn_error err = {0};
    atn_tokenizer *tok = atn_wordpiece_load(path_in("bert-base-uncased-vocab.txt"), NULL, &err);
    if (!tok)
        return;
    static const char *pieces[] = {"a", "é", "e\xcc\x81", "[MASK]", "[MA", "SK]", " ", "\t", "我",
                                   "\xef\xbc\x8c", "\xe2\x80\x8b", "\xf0\x9f\x98\x80", "\xff", "\xc3",
                                   "\xea\xb0\x80", "\xe1\x84\x80", "\xe1\x85\xa1", "\xcc\xa7", "İ",
                                   "x", "ing", "##", ".", "\x01", "\xe2\x80\xa8", "Σ"};
    int n_ok = 0, n_bad = 0;
    bool consistent = true;
    for (int iter = 0; iter < 3000; iter++) {
        char buf[256];
        size_t len = 0;
        int parts = (int)(rnd() % 24);
        for (int p = 0; p < parts; p++) {
            const char *s = pieces[rnd() % (sizeof pieces / sizeof pieces[0])];
            size_t l = strlen(s);
            if (len + l >= sizeof buf)
                break;
            memcpy(buf + len, s, l);
            len += l;
        }
        buf[len] = '\0';
        atn_encoding *e = NULL;
        int32_t max_len = (int32_t)(rnd() % 3 ? 0 : 3 + rnd() % 10);
        atn_status st = atn_tokenizer_encode(tok, buf, rnd() % 2 ? buf : NULL, max_len, &e, &err);
        if (st == ATN_OK) {
            n_ok++;
            consistent &= max_len == 0 || e->n <= max_len;
            for (int32_t i = 0; i < e->n; i++) {
                const atn_token *t = &e->tokens[i];
                consistent &= t->id >= 0 && t->id < 30522 && !strcmp(t->text, atn_tokenizer_id_to_token(tok, t->id));
                consistent &= (t->start == -1 && t->end == -1) ||
                              (t->start >= 0 && t->start < t->end && t->end <= (int32_t)len);
            }
            atn_encoding_free(e);
        } else {
            n_bad++;
            consistent &= st == ATN_E_INVALID && e == NULL;
        }
    }
    CHECK(consistent);
    CHECK(n_ok > 100 && n_bad > 100);
    atn_tokenizer_free(tok);
}

int main(int argc, char **argv) {
    dir = argc > 1 ? argv[1] : "tests/tokenizer";
    test_fixtures();
    test_real_vocab();
    test_load_errors();
    test_vocab_lines();
    test_options_json();
    test_random_bytes();
    return check_summary("tokenizer");
}

/* Ctrl-C inside the tokenizers' long loops (issue 41): with a cancel scope (core/cancel.h) on
 * the thread, each loop asks the callback every ATN_CANCEL_EVERY steps and stops with
 * ATN_E_CANCELLED naming itself.  For each loop a text (or vocabulary) is built so that the
 * loop does the most steps of the encoding; a callback that never stops counts the asks (N)
 * and gives the same encoding as no scope at all; one that stops at ask N must then stop in
 * that loop ("cancelled while merging BPE pieces" ...), and one that stops at the first ask
 * ends the encoding within a fraction of its full time.  Also: nested scopes, a thread without
 * a scope never stops, and the public atn_model_encode_cancellable. */
#include "check.h"
#include "core/cancel.h"
#include "tokenize/tok-pipeline.h"
#include "tokenize/wordpiece.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct asker {
    long asks, stop_at;   /* stop_at 0: never */
    atn_stage stage;
} asker;

static bool ask(double fraction, atn_stage stage, void *user_data) {
    asker *a = user_data;
    a->asks++;
    a->stage = stage;
    (void)fraction;
    return a->stop_at == 0 || a->asks < a->stop_at;
}

static char *repeat(const char *unit, size_t times) {
    size_t l = strlen(unit);
    char *s = malloc(l * times + 1);
    for (size_t i = 0; i < times; i++)
        memcpy(s + i * l, unit, l);
    s[l * times] = '\0';
    return s;
}

static bool same(const atn_encoding *a, const atn_encoding *b) {
    if (!a || !b || a->n != b->n)
        return false;
    for (int32_t i = 0; i < a->n; i++)
        if (a->ids[i] != b->ids[i] || a->tokens[i].start != b->tokens[i].start ||
            a->tokens[i].end != b->tokens[i].end)
            return false;
    return true;
}

static atn_status encode_in_scope(const atn_tokenizer *t, const char *text, asker *a, atn_encoding **e,
                                  atn_error *err) {
    atn_cancel_scope s;
    atn_cancel_enter(&s, ask, a, 0.0, ATN_STAGE_TOKENIZE);
    atn_status st = atn_tokenizer_encode(t, text, NULL, 0, e, err);
    atn_cancel_leave(&s);
    return st;
}

/* The three runs on one tokenizer and text; where: the loop the last ask must stop in. */
static void loop_case(const char *name, const atn_tokenizer *t, const char *text, const char *where) {
    atn_error err = {0};
    atn_encoding *plain = NULL, *e = NULL;
    double t0 = now();
    CHECK_MSG(atn_tokenizer_encode(t, text, NULL, 0, &plain, &err) == ATN_OK, "%s: %s", name, err.message);
    double full = now() - t0;
    asker all = {0, 0, 0};
    CHECK_MSG(encode_in_scope(t, text, &all, &e, &err) == ATN_OK, "%s: %s", name, err.message);
    CHECK_MSG(same(plain, e), "%s: the encoding differs under a scope that never stops", name);
    CHECK_MSG(all.asks >= 4 && all.stage == ATN_STAGE_TOKENIZE, "%s: %ld asks", name, all.asks);
    atn_encoding_free(e);
    e = NULL;
    asker last = {0, all.asks, 0};
    CHECK_MSG(encode_in_scope(t, text, &last, &e, &err) == ATN_E_CANCELLED && !e, "%s: not cancelled", name);
    char want[200];
    snprintf(want, sizeof want, "cancelled while %s", where);
    CHECK_MSG(strcmp(err.message, want) == 0, "%s: \"%s\", expected \"%s\"", name, err.message, want);
    CHECK_MSG(last.asks == all.asks, "%s: asked %ld times after saying stop (%ld)", name, last.asks, all.asks);
    asker first = {0, 1, 0};
    t0 = now();
    CHECK_MSG(encode_in_scope(t, text, &first, &e, &err) == ATN_E_CANCELLED && !e, "%s: not cancelled", name);
    double dt = now() - t0;
    CHECK_MSG(first.asks == 1, "%s: %ld asks after the first said stop", name, first.asks);
    printf("%-22s %6ld asks, full %.3f s, stopped at the first ask in %.4f s\n", name, all.asks, full, dt);
    CHECK_MSG(dt < full / 4 + 0.01, "%s: stopping took %.3f s of %.3f s", name, dt, full);
    atn_encoding_free(plain);
}

static atn_tokenizer *load(const char *json) {
    atn_error err = {0};
    atn_tokenizer *t = atn_tok_pipeline_from_json(json, strlen(json), "cancel.json", &err);
    CHECK_MSG(t != NULL, "%s", err.message);
    return t;
}

int main(void) {
    /* BPE: one word of 200,000 characters, merged pairwise then again */
    atn_tokenizer *t = load("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2, \"abab\": 3},"
                            " \"merges\": [\"a b\", \"ab ab\"]}, \"pre_tokenizer\": {\"type\": \"WhitespaceSplit\"}}");
    char *word = repeat("ab", 100000);
    if (t)
        loop_case("BPE merges", t, word, "merging BPE pieces");
    atn_tokenizer_free(t);

    /* WordPiece (tokenizer.json): one word of 200,000 "a", a piece per character */
    t = load("{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"[UNK]\": 0, \"a\": 1, \"##a\": 2},"
             " \"unk_token\": \"[UNK]\", \"max_input_chars_per_word\": 1000000},"
             " \"pre_tokenizer\": {\"type\": \"WhitespaceSplit\"}}");
    char *as = repeat("a", 200000);
    if (t)
        loop_case("WordPiece (json)", t, as, "matching WordPiece pieces");
    atn_tokenizer_free(t);

    /* Unigram: the lattice of one word of 200,000 "a" */
    t = load("{\"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"<unk>\", 0.0], [\"a\", -1.0],"
             " [\"aa\", -1.5]]}, \"pre_tokenizer\": {\"type\": \"WhitespaceSplit\"}}");
    if (t)
        loop_case("Unigram Viterbi", t, as, "running Unigram's Viterbi search");
    atn_tokenizer_free(t);

    /* a Replace normalizer with 100,000 matches in one piece (WordLevel: one [unk] word) */
    t = load("{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"<unk>\": 0}, \"unk_token\": \"<unk>\"},"
             " \"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"String\": \"b\"}, \"content\": \"c\"}}");
    char *bs = repeat("bx", 100000);
    if (t)
        loop_case("Replace normalizer", t, bs, "normalizing the text");
    atn_tokenizer_free(t);

    /* the pre-tokenizer's loop over pieces: 100,000 added-token pieces, no model work */
    t = load("{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"<unk>\": 0}, \"unk_token\": \"<unk>\"},"
             " \"pre_tokenizer\": {\"type\": \"WhitespaceSplit\"},"
             " \"added_tokens\": [{\"id\": 1, \"content\": \"q\", \"normalized\": false}]}");
    char *qs = repeat("q", 100000);
    if (t)
        loop_case("pieces", t, qs, "tokenizing");
    atn_tokenizer_free(t);

    /* the added-token trie scanning 400,000 characters that start no token */
    t = load("{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"<unk>\": 0}, \"unk_token\": \"<unk>\"},"
             " \"added_tokens\": [{\"id\": 1, \"content\": \"<z>\", \"normalized\": false}]}");
    char *xs = repeat("<y", 200000);
    if (t)
        loop_case("added-token trie", t, xs, "tokenizing");
    atn_tokenizer_free(t);

    /* vocab.txt WordPiece: 5,000 words of 96 "a" (its words stop at 100), a piece per character */
    static const char vocab[] = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n##a\n";
    atn_error err = {0};
    t = atn_wordpiece_from_buffer(vocab, sizeof vocab - 1, "vocab.txt", NULL, &err);
    CHECK_MSG(t != NULL, "%s", err.message);
    char unit[98];
    memset(unit, 'a', 96);
    unit[96] = ' ', unit[97] = '\0';
    char *words = repeat(unit, 5000);
    if (t)
        loop_case("WordPiece (vocab.txt)", t, words, "matching WordPiece pieces");
    atn_tokenizer_free(t);
    free(words);

    /* loading: a vocab.txt of 300,000 lines, stopped at the first ask */
    char *big = malloc(300000 * 12 + 64);
    size_t bl = (size_t)sprintf(big, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n");
    for (int i = 0; i < 300000; i++)
        bl += (size_t)sprintf(big + bl, "w%d\n", i);
    asker a = {0, 1, 0};
    atn_cancel_scope s;
    atn_cancel_enter(&s, ask, &a, 0.5, ATN_STAGE_READ_VOCAB);
    t = atn_wordpiece_from_buffer(big, bl, "vocab.txt", NULL, &err);
    atn_cancel_leave(&s);
    CHECK(t == NULL && err.status == ATN_E_CANCELLED && a.asks == 1 && a.stage == ATN_STAGE_READ_VOCAB);
    CHECK_STR(err.message, "cancelled while reading the vocabulary");
    atn_tokenizer_free(t);
    /* ... and a tokenizer.json vocabulary of 300,000 entries */
    char *js = malloc(300000 * 20 + 256);
    size_t jl = (size_t)sprintf(js, "{\"model\": {\"type\": \"WordLevel\", \"unk_token\": \"<unk>\", \"vocab\": {\"<unk>\": 0");
    for (int i = 0; i < 300000; i++)
        jl += (size_t)sprintf(js + jl, ", \"w%d\": %d", i, i + 1);
    sprintf(js + jl, "}}}");
    a = (asker){0, 1, 0};
    atn_cancel_enter(&s, ask, &a, 0.5, ATN_STAGE_READ_VOCAB);
    t = atn_tok_pipeline_from_json(js, strlen(js), "cancel.json", &err);
    atn_cancel_leave(&s);
    CHECK(t == NULL && err.status == ATN_E_CANCELLED && a.asks == 1);
    CHECK_STR(err.message, "cancelled while reading the vocabulary");
    /* ... and through the public atn_text_tokenizer_open_cancellable on a folder holding it */
    char dir[] = "/tmp/atn-tok-cancel-XXXXXX";
    if (mkdtemp(dir)) {
        char path[64];
        snprintf(path, sizeof path, "%s/tokenizer.json", dir);
        FILE *f = fopen(path, "w");
        if (f) {
            fputs(js, f);
            fclose(f);
        }
        a = (asker){0, 1, 0};
        atn_text_tokenizer *tt = atn_text_tokenizer_open_cancellable(dir, ask, &a, &err);
        CHECK(tt == NULL && err.status == ATN_E_CANCELLED && a.asks == 1 && a.stage == ATN_STAGE_READ_VOCAB);
        CHECK_STR(err.message, "cancelled while reading the vocabulary");
        asker never = {0, 0, 0};
        tt = atn_text_tokenizer_open_cancellable(dir, ask, &never, &err);
        CHECK_MSG(tt != NULL && never.asks >= 50, "%s (%ld asks)", err.message, never.asks);
        atn_text_tokenizer_free(tt);
        remove(path);
        rmdir(dir);
    }
    /* without a scope the same file loads */
    t = atn_tok_pipeline_from_json(js, strlen(js), "cancel.json", &err);
    CHECK_MSG(t != NULL, "%s", err.message);
    atn_tokenizer_free(t);
    free(big);
    free(js);

    /* scopes nest; leaving restores the outer one; no scope never stops */
    asker outer = {0, 1, 0}, inner = {0, 0, 0};
    atn_cancel_scope so, si;
    atn_cancel_enter(&so, ask, &outer, 0.0, ATN_STAGE_TOKENIZE);
    atn_cancel_enter(&si, ask, &inner, 0.0, ATN_STAGE_TOKENIZE);
    bool stopped = false;
    for (int i = 0; i < 3 * ATN_CANCEL_EVERY; i++)
        stopped |= atn_cancel_poll();
    CHECK(!stopped && inner.asks == 3 && outer.asks == 0);
    atn_cancel_leave(&si);
    for (int i = 0; i < ATN_CANCEL_EVERY && !stopped; i++)
        stopped = atn_cancel_poll();
    CHECK(stopped && outer.asks == 1 && atn_cancel_poll() && atn_cancel_now() && outer.asks == 1);
    atn_cancel_leave(&so);
    stopped = false;
    for (int i = 0; i < 3 * ATN_CANCEL_EVERY; i++)
        stopped |= atn_cancel_poll();
    CHECK(!stopped && !atn_cancel_now());

    free(word);
    free(as);
    free(bs);
    free(qs);
    free(xs);
    return check_summary("test-tok-cancel");
}

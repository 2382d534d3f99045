/* Token roles and continuation flags: what the tokenizer sets (WordPiece on the demo
 * model's and bert-base-uncased's vocabularies), what ids given directly get from the
 * vocabulary, what toy-model tokens are, and what the masked-LM guesses carry.
 *
 * Usage: test-token-roles DIR   (DIR holds bert-base-uncased-vocab.txt; the demo model is
 * found through ATTNSCOPE_DATADIR) */
#include "check.h"
#include "tokenize/wordpiece.h"
#include "analysis.h"

static const char *dir = "tests/tokenizer";

enum { W = ATN_TOKEN_WORD, CLS = ATN_TOKEN_CLS, SEP = ATN_TOKEN_SEP, MASK = ATN_TOKEN_MASK,
       PAD = ATN_TOKEN_PAD, UNK = ATN_TOKEN_UNK };

/* Checks an encoding's tokens, roles, continuation flags and special flags. */
static void check_tokens(const char *what, const atn_encoding *e, int n, const char *const *texts,
                         const int *roles, const char *cont, const char *special) {
    CHECK_MSG(e && e->n == n, "%s: %d tokens, expected %d", what, e ? e->n : -1, n);
    if (!e || e->n != n)
        return;
    for (int i = 0; i < n; i++) {
        const atn_token *t = &e->tokens[i];
        CHECK_MSG(!strcmp(t->text, texts[i]), "%s: token %d is \"%s\", expected \"%s\"", what, i, t->text,
                  texts[i]);
        CHECK_MSG((int)t->role == roles[i], "%s: token %d (%s) has role %d, expected %d", what, i, t->text,
                  (int)t->role, roles[i]);
        CHECK_MSG(t->continuation == (cont[i] == 'c'), "%s: token %d (%s) continuation %d", what, i, t->text,
                  t->continuation);
        CHECK_MSG(t->special == (special[i] == 's'), "%s: token %d (%s) special %d", what, i, t->text,
                  t->special);
    }
}

static void test_demo_text(const atn_model *m) {
    atn_error err = {0};
    atn_encoding *e = NULL;
    /* word pieces, punctuation, a character the vocabulary lacks, [UNK] and [PAD] written out */
    CHECK(atn_model_encode(m, "unbelievably cats, \xF0\x9F\xA4\x96 [UNK] [PAD]", NULL, &e, &err) == ATN_OK);
    static const char *const t1[] = {"[CLS]", "un", "##bel", "##ie", "##v", "##ably", "cats", ",", "[UNK]",
                                     "[UNK]", "[PAD]", "[SEP]"};
    static const int r1[] = {CLS, W, W, W, W, W, W, W, UNK, UNK, PAD, SEP};
    check_tokens("word pieces", e, 12, t1, r1, "..cccc......", "s........sss");
    /* the [UNK] for an unknown word is not special; the one written out is */
    if (e && e->n == 12) {
        CHECK(!e->tokens[8].special && e->tokens[8].start == 19 && e->tokens[8].end == 23);
        CHECK(e->tokens[9].special && e->tokens[9].start == 24 && e->tokens[9].end == 29);
    }
    atn_encoding_free(e);
}

static void test_demo_pair_and_mask(const atn_model *m) {
    atn_error err = {0};
    atn_encoding *e = NULL;
    /* a [MASK] typed inside a word splits it; the piece after it starts a word again */
    CHECK(atn_model_encode(m, "where x[MASK]cat ?", "the [MASK] .", &e, &err) == ATN_OK);
    static const char *const t[] = {"[CLS]", "where", "x", "[MASK]", "cat", "?", "[SEP]", "the", "[MASK]", ".",
                                    "[SEP]"};
    static const int r[] = {CLS, W, W, MASK, W, W, SEP, W, MASK, W, SEP};
    check_tokens("pair", e, 11, t, r, "...........", "s..s..s.s.s");
    if (e && e->n == 11) {
        CHECK(e->tokens[3].start == 7 && e->tokens[3].end == 13 && e->tokens[3].segment == 0);
        CHECK(e->tokens[8].start == 4 && e->tokens[8].end == 10 && e->tokens[8].segment == 1);
        CHECK(e->tokens[6].type_id == 0 && e->tokens[7].type_id == 1 && e->tokens[10].type_id == 1);
        CHECK(e->tokens[6].segment == -1 && e->tokens[10].segment == -1 && e->tokens[0].start == -1);
    }
    atn_encoding_free(e);
}

static void test_demo_ids(const atn_model *m) {
    atn_error err = {0};
    atn_encoding *e = NULL;
    /* [CLS] the [MASK] ##bel [UNK] [PAD] [SEP] given as ids: roles from the vocabulary */
    const int32_t ids[] = {2, 3992, 4, 7268, 1, 0, 3};
    CHECK(atn_model_encode_ids(m, ids, NULL, NULL, 7, &e, &err) == ATN_OK);
    static const char *const t[] = {"[CLS]", "the", "[MASK]", "##bel", "[UNK]", "[PAD]", "[SEP]"};
    static const int r[] = {CLS, W, MASK, W, UNK, PAD, SEP};
    /* as before roles existed: an id's token is special when its entry is bracketed */
    check_tokens("ids", e, 7, t, r, "...c...", "s.s.sss");
    if (e && e->n == 7)
        CHECK(e->tokens[2].start == -1 && e->tokens[2].segment == -1);
    atn_encoding_free(e);
}

static void test_toy(void) {
    atn_error err = {0};
    atn_model *m = atn_model_open("worked-example", NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return;
    atn_encoding *e = NULL;
    CHECK(atn_model_encode_toy(m, NULL, &e, &err) == ATN_OK);
    static const char *const t[] = {"\xE6\x88\x91", "\xE7\x88\xB1", "\xE4\xBD\xA0"};
    static const int r[] = {W, W, W};
    check_tokens("worked example", e, 3, t, r, "...", "...");
    /* its head statistics see no [CLS] or [SEP] (as when they compared token text) */
    atn_run *run = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    atn_stats *st = NULL;
    CHECK(atn_run_forward(run, e, &o, &err) == ATN_OK);
    CHECK(atn_stats_compute(atn_run_capture(run), &st, &err) == ATN_OK);
    for (int h = 0; st && h < st->n_layers * st->n_heads; h++)
        CHECK(st->heads[h].cls == 0 && st->heads[h].sep == 0);
    atn_stats_free(st);
    atn_run_free(run);
    atn_encoding_free(e);
    atn_model_free(m);

    /* a toy token named "[CLS]" is still a word: toy models have no tokenizer */
    const char *json = "{\"d_model\": 2, \"heads\": 1, \"tokens\": [\"[CLS]\", \"a\"], \"inputs\": [[1, 0], [0, 1]]}";
    m = atn_model_parse_toy_json(json, strlen(json), "inline", &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (m && atn_model_encode_toy(m, NULL, &e, &err) == ATN_OK) {
        static const char *const t2[] = {"[CLS]", "a"};
        static const int r2[] = {W, W};
        check_tokens("toy [CLS]", e, 2, t2, r2, "..", "..");
        atn_encoding_free(e);
    }
    atn_model_free(m);
}

/* Each guess carries how it reads in the text and whether it continues a word. */
static void test_predictions(const atn_model *m) {
    atn_error err = {0};
    atn_encoding *e = NULL;
    CHECK(atn_model_encode(m, "they were play [MASK] in the park .", NULL, &e, &err) == ATN_OK);
    atn_run *run = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    CHECK(atn_run_forward(run, e, &o, &err) == ATN_OK);
    enum { V = 30 };   /* the 30 likeliest hold both "##" pieces and words */
    atn_prediction p[V];
    CHECK(e && e->tokens[4].role == ATN_TOKEN_MASK);
    CHECK(atn_predict_position(m, atn_run_capture(run), 4, V, p, &err) == ATN_OK);
    int pieces = 0;
    for (int i = 0; i < V; i++) {
        bool hashes = !strncmp(p[i].token, "##", 2);
        pieces += hashes;
        CHECK_MSG(p[i].continuation == hashes && !strcmp(p[i].surface, p[i].token + (hashes ? 2 : 0)),
                  "guess %d \"%s\": surface \"%s\" continuation %d", i, p[i].token, p[i].surface,
                  p[i].continuation);
    }
    CHECK(pieces > 0 && pieces < V);
    atn_run_free(run);
    atn_encoding_free(e);
}

static void test_vocab_entries(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/bert-base-uncased-vocab.txt", dir);
    atn_error err = {0};
    atn_tokenizer *tok = atn_wordpiece_load(path, NULL, &err);
    CHECK_MSG(tok != NULL, "%s", err.message);
    if (!tok)
        return;
    CHECK_STR(atn_tokenizer_kind(tok), "wordpiece");
    CHECK_STR(atn_tokenizer_kind(NULL), "");
    atn_vocab_entry v;
    CHECK(atn_tokenizer_id_info(tok, 2075, &v) && !strcmp(v.text, "##ing") && !strcmp(v.surface, "ing") &&
          v.continuation && v.role == ATN_TOKEN_WORD && !v.special);
    CHECK(atn_tokenizer_id_info(tok, 103, &v) && v.role == ATN_TOKEN_MASK && v.special && !v.continuation);
    CHECK(atn_tokenizer_id_info(tok, 100, &v) && v.role == ATN_TOKEN_UNK && v.special);
    CHECK(atn_tokenizer_id_info(tok, 1, &v) && !strcmp(v.text, "[unused0]") && v.role == ATN_TOKEN_WORD &&
          v.special);
    CHECK(atn_tokenizer_id_info(tok, 7592, &v) && !strcmp(v.surface, "hello") && !v.continuation);
    CHECK(!atn_tokenizer_id_info(tok, 30522, &v) && !atn_tokenizer_id_info(tok, -1, &v));
    CHECK(!atn_tokenizer_id_info(NULL, 0, &v) && !atn_tokenizer_id_info(tok, 0, NULL));
    /* the encoding of a cased word in an uncased vocabulary, pieces and all */
    atn_encoding *e = NULL;
    CHECK(atn_tokenizer_encode(tok, "Tokenization [MASK]", NULL, 0, &e, &err) == ATN_OK);
    static const char *const t[] = {"[CLS]", "token", "##ization", "[MASK]", "[SEP]"};
    static const int r[] = {CLS, W, W, MASK, SEP};
    check_tokens("bert-base-uncased", e, 5, t, r, "..c..", "s..ss");
    atn_encoding_free(e);
    atn_tokenizer_free(tok);
}

int main(int argc, char **argv) {
    if (argc > 1)
        dir = argv[1];
    atn_error err = {0};
    atn_model *demo = atn_model_open("demo", NULL, NULL, &err);
    CHECK_MSG(demo != NULL, "%s", err.message);
    if (demo) {
        test_demo_text(demo);
        test_demo_pair_and_mask(demo);
        test_demo_ids(demo);
        test_predictions(demo);
    }
    atn_model_free(demo);
    test_toy();
    test_vocab_entries();
    return check_summary("token-roles");
}

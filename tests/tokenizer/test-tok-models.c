/* The subword models (engine/tokenize/tok-bpe.c, engine/tokenize/tok-unigram.c) against the real Hugging Face
 * Rust library: tests/tokenizer/models/gen_fixtures.js ran the npm package `tokenizers` over
 * hard texts and thousands of random ones, cut each into the words HF's normalizer and
 * pre-tokenizer give, and recorded what the model alone makes of each word (ids, char
 * offsets in the word).  Here every word goes through our model and the ids and offsets
 * must be equal (our byte offsets converted to chars as the Rust library converts them).
 * Models: byte-level BPE trained by `tokenizers`, BPE with prefix/suffix/byte_fallback/
 * fuse_unk, BPE with ignore_merges and "a b" merges, GPT-2's real vocab.json + merges.txt
 * (also compared, at generation time, with the gpt-3-encoder package), Unigram trained by
 * `tokenizers` (with and without byte_fallback) and a SentencePiece model from spm_train
 * (also compared here with spm_encode's ids).  Then: the byte-level alphabet and surface
 * text, bad model objects and files (messages name file, JSON path, what is wrong), two
 * threads sharing a model, and the speed of a 512-token text. */
#include "check.h"
#include "core/files.h"
#include "tokenize/tok-model.h"
#include "tokenize/unicode.h"

#include <pthread.h>
#include <unistd.h>
#include <time.h>

static const char *dir;

static cJSON *load_json(const char *name) {
    char p[1024];
    snprintf(p, sizeof p, "%s/models/%s", dir, name);
    char *text = NULL;
    size_t len = 0;
    atn_error err = {0};
    if (atn_read_file(p, SIZE_MAX, &text, &len, &err) != ATN_OK) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
    }
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    if (!j) {
        fprintf(stderr, "%s: invalid JSON\n", p);
        exit(1);
    }
    return j;
}

static atn_tok_model *model_from(const cJSON *model, const char *file, atn_error *err) {
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(model, "type");
    if (cJSON_IsString(type) && strcmp(type->valuestring, "Unigram") == 0)
        return atn_tok_unigram_from_json(model, file, "model", err);
    return atn_tok_bpe_from_json(model, file, "model", err);
}

/* The Rust library's BytesToCharOffsetConverter: each byte maps to the index of the char
 * holding it; an end at the end of the word maps past the last char. */
static int32_t char_index(const char *w, int32_t byte) {   /* the char holding byte */
    int32_t c = 0;
    for (int32_t i = 1; i <= byte; i++)
        c += ((unsigned char)w[i] & 0xC0) != 0x80;
    return c;
}

/* A piece's byte span in the word as HF reports it in chars.  Inside the word, through the
 * word's alignments (a range maps to its first byte's char start and its last byte's char
 * end), then to char indices.  A span reaching past the word (byte_fallback bytes of the
 * continuing_subword_prefix or end_of_word_suffix, which the Rust code counts as bytes of
 * the word) has no alignment: the raw bytes go to the Rust BytesToCharOffsetConverter,
 * which maps a start inside the word to its char and an end past it to the char of end - 1
 * plus one (or start + 2 when end - 1 is past it too), and leaves a start past the word as
 * it is. */
static void hf_span(const char *w, size_t len, int32_t s, int32_t e, int32_t *cs, int32_t *ce) {
    int32_t n = (int32_t)len;
    if (s >= 0 && s < e && e <= n) {
        *cs = char_index(w, s);
        *ce = char_index(w, e - 1) + 1;
    } else if (s >= 0 && s < n) {
        *cs = char_index(w, s);
        *ce = e < n ? char_index(w, e) : e - 1 < n ? char_index(w, e - 1) + 1 : *cs + 2;
    } else {
        *cs = s;
        *ce = e;
    }
}

typedef struct stats {
    long words, pieces, bad;
} stats;

static void show_word(const char *what, const char *w, const cJSON *ids, const cJSON *offs,
                      const atn_tok_pieces *got) {
    fprintf(stderr, "  %s word \"%s\"\n    want ids", what, w);
    for (const cJSON *e = ids->child; e; e = e->next)
        fprintf(stderr, " %d", e->valueint);
    fprintf(stderr, "\n    want offs");
    for (const cJSON *e = offs->child; e; e = e->next)
        fprintf(stderr, " %d", e->valueint);
    fprintf(stderr, "\n    got  ");
    for (int32_t i = 0; i < got->n; i++)
        fprintf(stderr, " %d[%d,%d)", got->v[i].id, got->v[i].start, got->v[i].end);
    fputc('\n', stderr);
}

/* Runs every word of cases (an array of {text, words: [[word, ids, offsets]]}). */
static void run_cases(const atn_tok_model *m, const cJSON *cases, const char *what, stats *st) {
    atn_tok_pieces got = {0};
    for (const cJSON *c = cases->child; c; c = c->next) {
        const cJSON *words = cJSON_GetObjectItem(c, "words");
        for (const cJSON *w = words->child; w; w = w->next) {
            const char *word = cJSON_GetArrayItem(w, 0)->valuestring;
            const cJSON *ids = cJSON_GetArrayItem(w, 1), *offs = cJSON_GetArrayItem(w, 2);
            size_t len = strlen(word);
            got.n = 0;
            atn_error err = {0};
            atn_status s = m->ops->tokenize(m, word, len, &got, &err);
            bool ok = s == ATN_OK && got.n == cJSON_GetArraySize(ids);
            for (int32_t i = 0; ok && i < got.n; i++) {
                int32_t cs, ce;
                hf_span(word, len, got.v[i].start, got.v[i].end, &cs, &ce);
                ok = got.v[i].id == cJSON_GetArrayItem(ids, i)->valueint &&
                     cs == cJSON_GetArrayItem(offs, 2 * i)->valueint &&
                     ce == cJSON_GetArrayItem(offs, 2 * i + 1)->valueint;
                ok = ok && got.v[i].start >= 0 && got.v[i].start <= got.v[i].end;
            }
            st->words++;
            st->pieces += got.n;
            if (!ok) {
                if (st->bad < 8) {
                    if (s != ATN_OK)
                        fprintf(stderr, "  %s: %s\n", what, err.message);
                    show_word(what, word, ids, offs, &got);
                }
                st->bad++;
            }
        }
    }
    free(got.v);
}

static void check_fixture(const char *name) {
    char fname[256];
    snprintf(fname, sizeof fname, "%s.cases.json", name);
    cJSON *fx = load_json(fname);
    atn_error err = {0};
    atn_tok_model *m = NULL;
    cJSON *tj = NULL;
    const cJSON *vocab = cJSON_GetObjectItem(fx, "vocab");
    if (vocab) {
        char v[1024], mg[1024];
        snprintf(v, sizeof v, "%s/models/%s", dir, vocab->valuestring);
        snprintf(mg, sizeof mg, "%s/models/%s", dir, cJSON_GetObjectItem(fx, "merges")->valuestring);
        m = atn_tok_bpe_from_files(v, mg, &err);
    } else {
        const char *tname = cJSON_GetObjectItem(fx, "tokenizer")->valuestring;
        tj = load_json(tname);
        m = model_from(cJSON_GetObjectItem(tj, "model"), tname, &err);
    }
    CHECK_MSG(m != NULL, "%s: %s", name, err.message);
    if (!m) {
        cJSON_Delete(fx);
        cJSON_Delete(tj);
        return;
    }
    stats hard = {0}, rnd = {0};
    run_cases(m, cJSON_GetObjectItem(fx, "hard"), name, &hard);
    run_cases(m, cJSON_GetObjectItem(fx, "random"), name, &rnd);
    int nhard = cJSON_GetArraySize(cJSON_GetObjectItem(fx, "hard"));
    int nrnd = cJSON_GetArraySize(cJSON_GetObjectItem(fx, "random"));
    fprintf(stderr, "%s: %d hard texts (%ld words, %ld pieces), %d random texts (%ld words, %ld pieces): "
            "%ld + %ld words differ from HF\n", name, nhard, hard.words, hard.pieces, nrnd, rnd.words,
            rnd.pieces, hard.bad, rnd.bad);
    CHECK(nhard >= 60 && nrnd >= 1000);
    CHECK_MSG(hard.bad == 0 && rnd.bad == 0, "%s: %ld words differ", name, hard.bad + rnd.bad);

    /* sentencepiece's own ids (spm_encode), where the fixture has them: the whole text's
       ids are ours of its words in a row */
    const cJSON *spm = cJSON_GetObjectItem(fx, "spm_encode");
    if (spm) {
        int agree = 0, total = 0, hf_agree = 0;
        const cJSON *all[2] = {cJSON_GetObjectItem(fx, "hard"), cJSON_GetObjectItem(fx, "random")};
        for (const cJSON *e = spm->child; e; e = e->next) {
            const char *text = cJSON_GetArrayItem(e, 0)->valuestring;
            const cJSON *want = cJSON_GetArrayItem(e, 1);
            const cJSON *c = NULL;
            for (int k = 0; k < 2 && !c; k++)
                for (const cJSON *x = all[k]->child; x; x = x->next)
                    if (strcmp(cJSON_GetObjectItem(x, "text")->valuestring, text) == 0) {
                        c = x;
                        break;
                    }
            if (!c)
                continue;
            atn_tok_pieces got = {0};
            bool hf_same = true;
            int hi = 0;
            for (const cJSON *w = cJSON_GetObjectItem(c, "words")->child; w; w = w->next) {
                const char *word = cJSON_GetArrayItem(w, 0)->valuestring;
                m->ops->tokenize(m, word, strlen(word), &got, &err);
                for (const cJSON *id = cJSON_GetArrayItem(w, 1)->child; id; id = id->next, hi++)
                    hf_same = hf_same && hi < cJSON_GetArraySize(want) &&
                              cJSON_GetArrayItem(want, hi)->valueint == id->valueint;
            }
            hf_same = hf_same && hi == cJSON_GetArraySize(want);
            bool same = got.n == cJSON_GetArraySize(want);
            for (int32_t i = 0; same && i < got.n; i++)
                same = got.v[i].id == cJSON_GetArrayItem(want, i)->valueint;
            if (!same && total - agree < 4)
                fprintf(stderr, "  spm_encode differs on \"%s\"\n", text);
            total++;
            agree += same;
            hf_agree += hf_same;
            free(got.v);
        }
        fprintf(stderr, "%s: spm_encode gives our ids on %d of %d texts (HF's on %d)\n", name, agree,
                total, hf_agree);
        CHECK(total > 1000 && agree == hf_agree && agree * 100 >= total * 85);
    }
    atn_tok_model_free(m);
    cJSON_Delete(fx);
    cJSON_Delete(tj);
}

/* ---- byte level, surface text ------------------------------------------------------------ */

static void test_byte_level(void) {
    /* bytes_to_unicode as GPT-2's encoder.py writes it */
    int n = 0;
    bool seen[1024] = {false};
    for (int b = 0; b < 256; b++) {
        uint32_t c = atn_byte_level_char((uint8_t)b);
        bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
        if (printable)
            CHECK(c == (uint32_t)b);
        else
            CHECK(c == 256u + (uint32_t)n++);
        CHECK(c < 1024 && !seen[c]);
        seen[c] = true;
        char enc[4];
        int l = atn_utf8_encode(c, enc);
        uint8_t back[4];
        CHECK(atn_byte_level_decode(enc, (size_t)l, back) == 1 && back[0] == b);
    }
    CHECK(n == 68);
    CHECK(atn_byte_level_char(' ') == 0x120 && atn_byte_level_char('\n') == 0x10A);
    uint8_t out[64];
    bool complete = true;
    CHECK(atn_byte_level_surface("\xc4\xa0the", 5, out, &complete) == 4 && memcmp(out, " the", 4) == 0 &&
          complete);
    /* "爱" (e7 88 b1) as byte-level "çĪ±", cut in two pieces as GPT-2 cuts it */
    CHECK(atn_byte_level_surface("\xc3\xa7\xc4\xaa", 4, out, &complete) == 2 && out[0] == 0xe7 &&
          out[1] == 0x88 && !complete);
    CHECK(atn_byte_level_surface("\xc2\xb1", 2, out, &complete) == 1 && out[0] == 0xb1 && !complete);
    CHECK(atn_byte_level_surface("\xc3\xa7\xc4\xaa\xc2\xb1", 6, out, &complete) == 3 && complete &&
          memcmp(out, "\xe7\x88\xb1", 3) == 0);
    CHECK(atn_byte_level_surface("\xe2\x96\x81x", 4, out, &complete) == -1 && !complete);   /* not byte-level */
    char t[64];
    CHECK(atn_metaspace_surface("\xe2\x96\x81the", 6, "\xe2\x96\x81", t) == 4 && memcmp(t, " the", 4) == 0);
    CHECK(atn_metaspace_surface("a\xe2\x96\x81\xe2\x96\x81" "b", 8, "\xe2\x96\x81", t) == 4 &&
          memcmp(t, "a  b", 4) == 0);
    CHECK(atn_metaspace_surface("ab", 2, NULL, t) == 2);
    CHECK(atn_byte_fallback_byte("<0x0A>", 6) == 10 && atn_byte_fallback_byte("<0xFF>", 6) == 255);
    CHECK(atn_byte_fallback_byte("<0x0a>", 6) == -1 && atn_byte_fallback_byte("<0x0A", 5) == -1 &&
          atn_byte_fallback_byte("<0xG0>", 6) == -1);
}

/* ---- hand-made models: the Rust library's own unit tests ------------------------------------ */

static atn_tok_model *bpe_of(const char *json, atn_error *err) {
    cJSON *j = cJSON_Parse(json);
    if (!j) {
        fprintf(stderr, "bad test JSON: %s\n", json);
        exit(1);
    }
    atn_tok_model *m = atn_tok_bpe_from_json(j, "t.json", "model", err);
    cJSON_Delete(j);
    return m;
}

static atn_tok_model *uni_of(const char *json, atn_error *err) {
    cJSON *j = cJSON_Parse(json);
    if (!j) {
        fprintf(stderr, "bad test JSON: %s\n", json);
        exit(1);
    }
    atn_tok_model *m = atn_tok_unigram_from_json(j, "t.json", "model", err);
    cJSON_Delete(j);
    return m;
}

static const char *pieces_str(const atn_tok_model *m, const char *word) {
    static char buf[1200];
    atn_tok_pieces p = {0};
    atn_error err = {0};
    if (m->ops->tokenize(m, word, strlen(word), &p, &err) != ATN_OK) {
        snprintf(buf, sizeof buf, "error: %s", err.message);
        free(p.v);
        return buf;
    }
    size_t o = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < p.n && o < sizeof buf - 40; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%d(%d,%d)", i ? " " : "", p.v[i].id, p.v[i].start,
                              p.v[i].end);
    free(p.v);
    return buf;
}

static void test_hand_models(void) {
    atn_error err = {0};
    /* model.rs test_unk_not_fused / test_unk_get_fused */
    atn_tok_model *m = bpe_of("{\"type\":\"BPE\",\"unk_token\":\"<unk>\",\"vocab\":{\"<unk>\":0,\"a\":1,\"b\":2},"
                              "\"merges\":[]}", &err);
    CHECK_MSG(m, "%s", err.message);
    CHECK_STR(pieces_str(m, "accb"), "1(0,1) 0(1,2) 0(2,3) 2(3,4)");
    CHECK(m->ops->unk_id(m) == 0 && m->ops->vocab_size(m) == 3);
    atn_tok_model_free(m);
    m = bpe_of("{\"unk_token\":\"<unk>\",\"fuse_unk\":true,\"vocab\":{\"<unk>\":0,\"a\":1,\"b\":2},\"merges\":[]}", &err);
    CHECK_STR(pieces_str(m, "accb"), "1(0,1) 0(1,3) 2(3,4)");
    CHECK_STR(pieces_str(m, "cc"), "0(0,2)");
    atn_tok_model_free(m);
    /* test_tokenize_with_and_without_dropout: "unrelated" -> one piece, dropout ignored */
    m = bpe_of("{\"dropout\":0.5,\"vocab\":{\"u\":0,\"n\":1,\"r\":2,\"e\":3,\"l\":4,\"a\":5,\"t\":6,\"d\":7,\"re\":8,"
               "\"at\":9,\"ed\":10,\"un\":11,\"ated\":12,\"rel\":13,\"related\":14,\"unrelated\":15},"
               "\"merges\":[\"r e\",\"a t\",\"e d\",\"u n\",\"at ed\",\"re l\",\"rel ated\",\"un related\"]}", &err);
    CHECK_MSG(m, "%s", err.message);
    CHECK_STR(pieces_str(m, "unrelated"), "15(0,9)");
    CHECK_STR(pieces_str(m, "relate"), "13(0,3) 9(3,5) 3(5,6)");
    atn_tok_model_free(m);
    /* the same merges as pairs */
    m = bpe_of("{\"vocab\":{\"u\":0,\"n\":1,\"un\":2,\"d\":3,\"und\":4},\"merges\":[[\"u\",\"n\"],[\"un\",\"d\"]]}", &err);
    CHECK_MSG(m, "%s", err.message);
    CHECK_STR(pieces_str(m, "undun"), "4(0,3) 2(3,5)");
    /* no unk_token: a character the vocabulary lacks is left out, as the Rust library does */
    CHECK_STR(pieces_str(m, "uxn"), "2(0,2)");
    atn_tok_model_free(m);
    /* test_bpe_with_continuing_subword_prefix */
    m = bpe_of("{\"unk_token\":\"[UNK]\",\"continuing_subword_prefix\":\"##\",\"vocab\":{\"a\":0,\"##b\":1,"
               "\"##c\":2,\"ab\":3,\"abc\":4},\"merges\":[\"a ##b\",\"ab ##c\"]}", &err);
    CHECK_MSG(m, "%s", err.message);
    CHECK_STR(pieces_str(m, "ab"), "3(0,2)");
    CHECK_STR(pieces_str(m, "abc"), "4(0,3)");
    /* unk_token not in the vocabulary: the Rust library's UnkTokenOutOfVocabulary */
    CHECK(strncmp(pieces_str(m, "x"), "error: BPE: unk_token \"[UNK]\" is not in the vocabulary", 50) == 0);
    atn_tok_model_free(m);
    /* test_bpe_byte_fallback(_newline) */
    m = bpe_of("{\"unk_token\":\"<unk>\",\"byte_fallback\":true,\"vocab\":{\"<unk>\":0,\"<0x61>\":1,\"<0x0A>\":2},"
               "\"merges\":[]}", &err);
    CHECK_STR(pieces_str(m, "c"), "0(0,1)");
    CHECK_STR(pieces_str(m, "a"), "1(0,1)");
    CHECK_STR(pieces_str(m, "\n"), "2(0,1)");
    atn_tok_model_free(m);
    /* test_ignore_merges */
    m = bpe_of("{\"ignore_merges\":true,\"vocab\":{\".:.:\":0,\"\xc4\xa0" "belirtilen\":1,\".\":2,\":\":3,\"bel\":4,"
               "\"irtilen\":5,\"\xc4\xa0\":6,\".:\":7,\"belirtilen\":8,\".:.\":9,\"be\":10,\"l\":11,\"ir\":12,"
               "\"ti\":13,\"en\":14,\"irtil\":15,\"irti\":16,\"i\":17,\"r\":18,\"t\":19,\"b\":20,\"e\":21,\"n\":22},"
               "\"merges\":[\". :\",\"b e\",\"be l\",\"i r\",\"t i\",\"ir ti\",\"e n\",\"irti l\"]}", &err);
    CHECK_MSG(m, "%s", err.message);
    CHECK_STR(pieces_str(m, ".:.:"), "0(0,4)");
    CHECK_STR(pieces_str(m, "\xc4\xa0" "belirtilen"), "1(0,12)");
    atn_tok_model_free(m);

    /* Unigram (unigram/model.rs tests): ties keep the first path, unk = min - 10, fused */
    m = uni_of("{\"unk_id\":0,\"vocab\":[[\"<unk>\",0],[\"a\",-1],[\"b\",-2],[\"ab\",-3],[\"c\",-4]]}", &err);
    CHECK_MSG(m, "%s", err.message);
    /* a + b = -3 = ab: the path found first (ab, from start 0) stays */
    CHECK_STR(pieces_str(m, "ab"), "3(0,2)");
    CHECK_STR(pieces_str(m, "abc"), "3(0,2) 4(2,3)");
    CHECK_STR(pieces_str(m, "xyz"), "0(0,3)");   /* unknowns fused */
    CHECK_STR(pieces_str(m, "axyb"), "1(0,1) 0(1,3) 2(3,4)");
    CHECK(m->ops->vocab_size(m) == 5 && m->ops->unk_id(m) == 0);
    CHECK_STR(m->ops->id_to_token(m, 3), "ab");
    CHECK(m->ops->token_to_id(m, "ab", 2) == 3 && m->ops->token_to_id(m, "zz", 2) == -1);
    atn_tok_model_free(m);
    m = uni_of("{\"unk_id\":0,\"vocab\":[[\"<unk>\",0],[\"a\",-1],[\"b\",-2.5],[\"ab\",-3]]}", &err);
    CHECK_STR(pieces_str(m, "ab"), "3(0,2)");
    atn_tok_model_free(m);
    /* byte_fallback: an unknown char becomes its bytes, each spanning the char */
    m = uni_of("{\"unk_id\":0,\"byte_fallback\":true,\"vocab\":[[\"<unk>\",0],[\"a\",-1],[\"<0xC3>\",0],"
               "[\"<0xA9>\",0]]}", &err);
    CHECK_STR(pieces_str(m, "a\xc3\xa9" "a"), "1(0,1) 2(1,3) 3(1,3) 1(3,4)");
    CHECK_STR(pieces_str(m, "\xc3\xa8"), "0(0,2)");   /* <0xA8> missing: unk */
    atn_tok_model_free(m);
    /* no unk_id: an unknown char is an error naming it */
    m = uni_of("{\"unk_id\":null,\"vocab\":[[\"a\",-1]]}", &err);
    CHECK_MSG(m, "%s", err.message);
    CHECK(strstr(pieces_str(m, "a\xe7\x88\xb1"), "U+7231") != NULL);
    atn_tok_model_free(m);
}

/* ---- bad input ------------------------------------------------------------------------------ */

static void expect_bad(atn_tok_model *(*make)(const char *, atn_error *), const char *json,
                       const char *want) {
    atn_error err = {0};
    atn_tok_model *m = make(json, &err);
    CHECK_MSG(!m && err.status == ATN_E_FORMAT && strstr(err.message, want) && strncmp(err.message, "t.json: ", 8) == 0,
              "%s -> \"%s\" (want \"%s\")", json, err.message, want);
    atn_tok_model_free(m);
}

static void test_bad(void) {
    expect_bad(bpe_of, "{\"vocab\":{\"a\":0,\"b\":1},\"merges\":[\"a b\"]}",
               "model.merges[0]: the merged piece \"ab\" is not in the vocabulary");
    expect_bad(bpe_of, "{\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},\"merges\":[\"a b\",\"a c\"]}",
               "model.merges[1]: \"c\" is not in the vocabulary");
    expect_bad(bpe_of, "{\"vocab\":{\"a\":0,\"b\":0},\"merges\":[]}", "model.vocab[\"b\"]: id 0 of \"b\" is already");
    expect_bad(bpe_of, "{\"vocab\":{\"a\":0,\"b\":1.5},\"merges\":[]}", "model.vocab[\"b\"]: the id of \"b\" is not");
    expect_bad(bpe_of, "{\"vocab\":{\"a\":\"0\"},\"merges\":[]}", "model.vocab[\"a\"]: the id of \"a\" is not");
    expect_bad(bpe_of, "{\"vocab\":{\"a\":-1},\"merges\":[]}", "is not a non-negative integer");
    expect_bad(bpe_of, "{\"vocab\":{\"a\":0,\"a\":1},\"merges\":[]}", "\"a\" appears twice");
    expect_bad(bpe_of, "{\"vocab\":{\"a\":0},\"merges\":[\"a a a\"]}", "model.merges[0]: \"a a a\" is not two pieces");
    expect_bad(bpe_of, "{\"vocab\":{\"a\":0,\"aa\":1},\"merges\":[\"a a\",[\"a\",\"a\"]]}",
               "model.merges[1]: should be a string");
    expect_bad(bpe_of, "{\"vocab\":{\"a\":0},\"merges\":[[\"a\"]]}", "model.merges[0]: should be a pair of two strings");
    expect_bad(bpe_of, "{\"vocab\":{\"a\":0},\"merges\":[3]}", "model.merges[0]: should be a string \"a b\" or a pair");
    expect_bad(bpe_of, "{\"merges\":[]}", "model.vocab: missing");
    expect_bad(bpe_of, "{\"vocab\":[],\"merges\":[]}", "model.vocab: should be an object");
    expect_bad(bpe_of, "{\"vocab\":{}}", "model.merges: missing");
    expect_bad(bpe_of, "{\"type\":\"Unigram\",\"vocab\":{},\"merges\":[]}", "model.type: should be \"BPE\"");
    expect_bad(bpe_of, "{\"vocab\":{},\"merges\":[],\"unk_token\":3}", "model.unk_token: should be a string or null");
    expect_bad(bpe_of, "{\"vocab\":{},\"merges\":[],\"fuse_unk\":\"yes\"}", "model.fuse_unk: should be true, false");
    expect_bad(bpe_of, "{\"vocab\":{},\"merges\":[],\"dropout\":1.5}", "model.dropout: should be null or a number");
    expect_bad(bpe_of, "{\"vocab\":{\"a\":99999999},\"merges\":[]}", "is past 16777215");
    expect_bad(bpe_of, "{\"continuing_subword_prefix\":\"##\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},\"merges\":[\"a b\"]}",
               "shorter than the continuing_subword_prefix");
    expect_bad(uni_of, "{\"unk_id\":0,\"vocab\":[[\"<unk>\",0],[\"a\",1e999]]}",
               "model.vocab[1][1]: the score of \"a\" is not finite");
    expect_bad(uni_of, "{\"unk_id\":0,\"vocab\":[[\"<unk>\",0],[\"a\",\"x\"]]}", "model.vocab[1][1]: the score of \"a\" is not a number");
    expect_bad(uni_of, "{\"unk_id\":0,\"vocab\":[[\"<unk>\",0],[\"a\"]]}", "model.vocab[1]: should be a pair");
    expect_bad(uni_of, "{\"unk_id\":5,\"vocab\":[[\"<unk>\",0]]}", "model.unk_id: 5 is past the 1 pieces");
    expect_bad(uni_of, "{\"unk_id\":-1,\"vocab\":[[\"<unk>\",0]]}", "model.unk_id: should be null or a non-negative");
    expect_bad(uni_of, "{\"unk_id\":0,\"vocab\":[]}", "model.vocab: empty");
    expect_bad(uni_of, "{\"unk_id\":0}", "model.vocab: missing");
    expect_bad(uni_of, "{\"vocab\":[[\"a\",0]],\"byte_fallback\":1}", "model.byte_fallback: should be true");

    /* the classic files */
    char v[256], mg[256];
    snprintf(v, sizeof v, "/tmp/atn-tokm-%d-vocab.json", (int)getpid());
    snprintf(mg, sizeof mg, "/tmp/atn-tokm-%d-merges.txt", (int)getpid());
    struct {
        const char *vocab, *merges, *want;
    } files[] = {
        {"{\"a\":0,\"b\":1,\"ab\":2}", "#version: 0.2\na b\n", NULL},
        {"{\"a\":0,\"b\":1,\"ab\":2}", "a b", NULL},
        {"{\"a\":0,\"b\":1,\"ab\":2}", "#version: 0.2\r\na b\r\n", NULL},
        {"{\"a\":0,\"b\":1,\"ab\":2}", "#version: 0.2\na b\nc\n", "merges.txt: line 3: \"c\" is not two pieces"},
        {"{\"a\":0,\"b\":1,\"ab\":2}", "#version: 0.2\na b\na d\n", "merges.txt: line 3: \"d\" is not in the vocabulary"},
        {"{\"a\":0,\"b\":1,\"ab\":2}", "a b\n\nb a\n", "merges.txt: line 2: \"\" is not two pieces"},
        {"{\"a\":0,\"b\":1,\"ab\":2", "a b\n", "vocab.json: invalid JSON"},
        {"[1,2]", "a b\n", "vocab.json: should be a JSON object"},
        {"{\"a\":0,\"b\":true}", "", "vocab.json: [\"b\"]: the id of \"b\" is not"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        FILE *f = fopen(v, "wb");
        fputs(files[i].vocab, f);
        fclose(f);
        f = fopen(mg, "wb");
        fputs(files[i].merges, f);
        fclose(f);
        atn_error err = {0};
        atn_tok_model *m = atn_tok_bpe_from_files(v, mg, &err);
        if (!files[i].want) {
            CHECK_MSG(m != NULL, "case %zu: %s", i, err.message);
            if (m)
                CHECK_STR(pieces_str(m, "ab"), "2(0,2)");
        } else {
            CHECK_MSG(!m && err.status == ATN_E_FORMAT && strstr(err.message, files[i].want), "case %zu: \"%s\"", i,
                      err.message);
        }
        atn_tok_model_free(m);
    }
    atn_error err = {0};
    CHECK(!atn_tok_bpe_from_files("/nonexistent/vocab.json", mg, &err) && err.status == ATN_E_IO &&
          strstr(err.message, "/nonexistent/vocab.json"));
    remove(v);
    remove(mg);
}

/* ---- threads, speed -------------------------------------------------------------------------- */

typedef struct job {
    const atn_tok_model *m;
    const char *const *words;
    int n;
    long sum;
} job;

static void *tok_thread(void *arg) {
    job *j = arg;
    atn_tok_pieces p = {0};
    for (int r = 0; r < 20; r++)
        for (int i = 0; i < j->n; i++) {
            p.n = 0;
            atn_error err = {0};
            if (j->m->ops->tokenize(j->m, j->words[i], strlen(j->words[i]), &p, &err) == ATN_OK)
                for (int32_t k = 0; k < p.n; k++)
                    j->sum += p.v[k].id * (k + 1);
        }
    free(p.v);
    return NULL;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* GPT-2 on the words of the hard texts, repeated to 512 pieces, timed; and the same words
   from two threads at once must give what one thread gives. */
static void test_speed_threads(void) {
    char v[1024], mg[1024];
    snprintf(v, sizeof v, "%s/models/gpt2-vocab.json", dir);
    snprintf(mg, sizeof mg, "%s/models/gpt2-merges.txt", dir);
    atn_error err = {0};
    double t0 = now_s();
    atn_tok_model *m = atn_tok_bpe_from_files(v, mg, &err);
    double load = now_s() - t0;
    CHECK_MSG(m, "%s", err.message);
    if (!m)
        return;
    cJSON *fx = load_json("gpt2.cases.json");
    const char *words[4096];
    int nw = 0, pieces = 0;
    for (const cJSON *c = cJSON_GetObjectItem(fx, "hard")->child; c && pieces < 512; c = c->next)
        for (const cJSON *w = cJSON_GetObjectItem(c, "words")->child; w && pieces < 512 && nw < 4096; w = w->next) {
            words[nw++] = cJSON_GetArrayItem(w, 0)->valuestring;
            pieces += cJSON_GetArraySize(cJSON_GetArrayItem(w, 1));
        }
    atn_tok_pieces p = {0};
    int reps = 200;
    double best = 1e9;
    for (int r = 0; r < reps; r++) {
        double s = now_s();
        p.n = 0;
        for (int i = 0; i < nw; i++)
            m->ops->tokenize(m, words[i], strlen(words[i]), &p, &err);
        double d = now_s() - s;
        if (d < best)
            best = d;
    }
    fprintf(stderr, "speed: GPT-2 BPE, %d words -> %d pieces in %.1f us (best of %d); vocab.json + merges.txt "
            "load %.1f ms\n", nw, p.n, best * 1e6, reps, load * 1e3);
    CHECK(p.n >= 500);
#if defined(__SANITIZE_ADDRESS__) || defined(ATN_NO_TIMING)
    (void)best;   /* instrumented builds (make test-asan) are several times slower */
#else
    CHECK_MSG(best < 1e-3, "a 512-piece text took %.3f ms", best * 1e3);
#endif
    free(p.v);
    job a = {m, words, nw, 0}, b = {m, words, nw, 0}, c = {m, words, nw, 0};
    tok_thread(&c);
    pthread_t ta, tb;
    pthread_create(&ta, NULL, tok_thread, &a);
    pthread_create(&tb, NULL, tok_thread, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK(a.sum == c.sum && b.sum == c.sum && c.sum != 0);
    cJSON_Delete(fx);
    atn_tok_model_free(m);
}

int main(int argc, char **argv) {
    dir = argc > 1 ? argv[1] : "tests/tokenizer";
    test_byte_level();
    test_hand_models();
    test_bad();
    static const char *const fixtures[] = {"bpe-bytelevel", "bpe-affix", "bpe-plain", "gpt2",
                                           "unigram-metaspace", "unigram-bytefallback", "spm-unigram"};
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
        check_fixture(fixtures[i]);
    test_speed_threads();
    return check_summary("tok-models");
}

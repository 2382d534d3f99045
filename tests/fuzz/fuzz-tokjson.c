/* Fuzz target: tokenizer.json (atn_tok_pipeline_from_json on the bytes).  A file that
 * loads must tokenize a few texts (accents, CJK, emoji, spaces, special tokens, a pair,
 * a length limit) into tokens whose ids are in the vocabulary, whose text is the
 * vocabulary entry and whose spans lie inside their own segment on character boundaries;
 * a file that does not load names itself in the message. */
#include "fuzz-common.h"
#include "tokenize/tok-pipeline.h"

static void check(const atn_tokenizer *tok, const char *text, const char *pair, int32_t max_len) {
    atn_encoding *e = NULL;
    atn_error err = {0};
    atn_status st = atn_tokenizer_encode(tok, text, pair, max_len, &e, &err);
    if (st != ATN_OK) {
        if (st == ATN_E_NOMEM || !err.message[0] || err.status != st)
            fuzz_fail("encode failed without a proper message", err.message);
        return;   /* a model without unk that cannot spell a word, a max_len too small */
    }
    int32_t V = atn_tokenizer_vocab_size(tok);
    if (max_len > 0 && e->n > max_len)
        fuzz_fail("more tokens than max_len", NULL);
    const char *texts[2] = {text, pair};
    for (int32_t i = 0; i < e->n; i++) {
        const atn_token *t = &e->tokens[i];
        if (t->id < 0 || t->id >= V || e->ids[i] != t->id)
            fuzz_fail("an id outside the vocabulary", NULL);
        const char *v = atn_tokenizer_id_to_token(tok, t->id);
        if (!v || !t->text || strcmp(v, t->text) != 0)
            fuzz_fail("token text is not the vocabulary entry", t->text);
        if (t->segment < 0) {
            if (t->start != -1 || t->end != -1 || !t->special)
                fuzz_fail("an added special token with a span", NULL);
            continue;
        }
        if (t->segment > 1 || (t->segment == 1 && !pair))
            fuzz_fail("a bad segment", NULL);
        const unsigned char *s = (const unsigned char *)texts[t->segment];
        int32_t len = (int32_t)strlen((const char *)s);
        if (t->start < 0 || t->end < t->start || t->end > len)
            fuzz_fail("a span outside its text", t->text);
        if ((t->start < len && (s[t->start] & 0xC0) == 0x80) || (t->end < len && (s[t->end] & 0xC0) == 0x80))
            fuzz_fail("a span inside a character", t->text);
    }
    atn_encoding_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *origin = "fuzz-tokenizer.json";
    atn_error err = {0};
    atn_tokenizer *tok = atn_tok_pipeline_from_json((const char *)data, size, origin, &err);
    if (!tok) {
        fuzz_check_parse_error(err.status, &err, origin);
        return 0;
    }
    static const char *const texts[] = {
        "Hello, world! the cat's mat", "[CLS] hi [MASK]x [SEP] <mask> <s></s>", "Naïve CAFÉ ﬁne Cafe\xcc\x81",
        "我爱你 BERT多头 สวัสดี", "  lots   of\tspace\n", "emoji \xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9 12345", ""};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        check(tok, texts[i], NULL, 0);
        check(tok, texts[i], texts[(i + 1) % 7], (int32_t)(4 + 3 * i));
    }
    atn_vocab_entry v;
    for (int32_t id = 0; id < atn_tokenizer_vocab_size(tok) && id < 4096; id++)
        if (atn_tokenizer_id_info(tok, id, &v) && (!v.text || !v.surface))
            fuzz_fail("an id without text or surface", NULL);
    atn_tokenizer_free(tok);
    return 0;
}

/* Fuzz target: vocab.txt (atn_tokenizer_from_buffer on the bytes).  A vocabulary that
 * loads must look every one of its entries up again and tokenize a few texts that touch
 * WordPiece, special tokens, accents and CJK. */
#include "fuzz-tokenize-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *origin = "fuzz-vocab.txt";
    atn_error err = {0};
    atn_wordpiece_options o;
    atn_wordpiece_options_init(&o);
    o.lower_case = size & 1;
    atn_tokenizer *tok = atn_wordpiece_from_buffer((const char *)data, size, origin, &o, &err);
    if (!tok) {
        fuzz_check_parse_error(err.status, &err, origin);
        return 0;
    }
    int32_t n = atn_tokenizer_vocab_size(tok);
    if (n <= 0)
        fuzz_fail("an empty vocabulary loaded", NULL);
    /* a line with a NUL byte reads back shorter as a C string (HF keeps such a token, and
       no text can produce it), so the round trip is checked only without NULs */
    bool has_nul = memchr(data, 0, size) != NULL;
    for (int32_t i = 0; i < n && !has_nul; i++) {
        const char *t = atn_tokenizer_id_to_token(tok, i);
        if (!t)
            fuzz_fail("a NULL entry", NULL);
        int32_t id = atn_tokenizer_token_to_id(tok, t);
        if (id < i || id >= n || strcmp(atn_tokenizer_id_to_token(tok, id), t) != 0)
            fuzz_fail("an entry that does not look itself up (last id wins)", t);
    }
    if (atn_tokenizer_id_to_token(tok, n) || atn_tokenizer_id_to_token(tok, -1))
        fuzz_fail("id_to_token out of range", NULL);
    static const char *const texts[] = {
        "the cat's mat", "[CLS] hello [MASK]x [SEP][UNK]", "Naïve CAFÉ ﬁne", "我爱你 BERT多头",
        "unaffable running ##s", "a\tb\nc\x01 d\xe2\x80\x8b e", ""};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        fuzz_encode(tok, texts[i], NULL, 0);
        fuzz_encode(tok, texts[i], texts[(i + 1) % 7], (int32_t)(3 + i));
    }
    atn_tokenizer_free(tok);
    return 0;
}

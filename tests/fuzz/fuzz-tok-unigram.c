/* Fuzz target: the Unigram model (engine/tokenize/tok-unigram.c) from a tokenizer.json "model"
 * object.  A model that loads must look its pieces up again and cut fixed words, slices of
 * the input and its own pieces into pieces of its vocabulary that cover the word exactly,
 * one after the other (byte_fallback pieces of one string share its span). */
#include "fuzz-tok-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *origin = "fuzz-tokenizer.json";
    cJSON *j = cJSON_ParseWithLength((const char *)data, size);
    if (!j)
        return 0;
    atn_error err = {0};
    atn_tok_model *m = atn_tok_unigram_from_json(j, origin, "model", &err);
    cJSON_Delete(j);
    if (!m) {
        fuzz_check_parse_error(err.status, &err, origin);
        if (err.status == ATN_E_FORMAT && !strstr(err.message, "model"))
            fuzz_fail("an error without its JSON path", err.message);
        return 0;
    }
    fuzz_tok_lookups(m);
    for (size_t i = 0; i < sizeof fuzz_tok_words / sizeof fuzz_tok_words[0]; i++)
        fuzz_tok_word(m, fuzz_tok_words[i], strlen(fuzz_tok_words[i]), true);
    for (size_t at = 0; at < size; at += 7) {
        size_t l = size - at < 24 ? size - at : 24;
        if (fuzz_utf8_valid(data + at, l))
            fuzz_tok_word(m, (const char *)data + at, l, true);
    }
    int32_t n = m->ops->vocab_size(m);
    for (int32_t i = 0; i < n && i < 2000; i++) {
        const char *t = m->ops->id_to_token(m, i);
        if (t && fuzz_utf8_valid((const unsigned char *)t, strlen(t)))
            fuzz_tok_word(m, t, strlen(t), true);
    }
    atn_tok_model_free(m);
    return 0;
}

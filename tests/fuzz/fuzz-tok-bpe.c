/* Fuzz target: the BPE model (engine/tokenize/tok-bpe.c).  Byte 0: bit 0 set = the classic files
 * (the rest is vocab.json, a NUL, merges.txt) else a tokenizer.json "model" object.  A model
 * that loads must look its pieces up again and cut fixed words, slices of the input and its
 * own pieces into pieces of its vocabulary whose spans follow each other. */
#include "fuzz-tok-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    const char *origin = "fuzz-tokenizer.json";
    atn_error err = {0};
    atn_tok_model *m = NULL;
    const char *rest = (const char *)data + 1;
    size_t rl = size - 1;
    if (data[0] & 1) {
        char v[512], mg[512];
        snprintf(v, sizeof v, "%s/vocab.json", fuzz_tmp());
        snprintf(mg, sizeof mg, "%s/merges.txt", fuzz_tmp());
        const char *nul = memchr(rest, 0, rl);
        size_t vl = nul ? (size_t)(nul - rest) : rl;
        fuzz_write(v, rest, vl);
        fuzz_write(mg, nul ? nul + 1 : "", nul ? rl - vl - 1 : 0);
        m = atn_tok_bpe_from_files(v, mg, &err);
        if (!m) {
            fuzz_check_parse_error(err.status, &err, fuzz_tmp());   /* names vocab.json or merges.txt */
            if (!strstr(err.message, "vocab.json") && !strstr(err.message, "merges.txt"))
                fuzz_fail("an error naming neither file", err.message);
            return 0;
        }
    } else {
        cJSON *j = cJSON_ParseWithLength(rest, rl);
        if (!j)
            return 0;
        m = atn_tok_bpe_from_json(j, origin, "model", &err);
        cJSON_Delete(j);
        if (!m) {
            fuzz_check_parse_error(err.status, &err, origin);
            if (err.status == ATN_E_FORMAT && !strstr(err.message, "model"))
                fuzz_fail("an error without its JSON path", err.message);
            return 0;
        }
    }
    fuzz_tok_lookups(m);
    for (size_t i = 0; i < sizeof fuzz_tok_words / sizeof fuzz_tok_words[0]; i++)
        fuzz_tok_word(m, fuzz_tok_words[i], strlen(fuzz_tok_words[i]), false);
    for (size_t at = 0; at < rl; at += 7)
        fuzz_tok_word(m, rest + at, rl - at < 24 ? rl - at : 24, false);
    int32_t n = m->ops->vocab_size(m);
    for (int32_t i = 0; i < n && i < 2000; i++) {
        const char *t = m->ops->id_to_token(m, i);
        if (t)
            fuzz_tok_word(m, t, strlen(t), false);
    }
    atn_tok_model_free(m);
    return 0;
}

/* Fuzz target: tokenizer_config.json (and special_tokens_map.json), the files that name
 * the special tokens, set lower-casing / accent stripping and model_max_length.  Byte 0
 * picks where the rest goes:
 *   bits 0-1: 0 the catalogue's tiny model opened as a model (atn_model_open_hf, then a
 *             run), 1 a vocab.txt tokenizer folder, 2 a tokenizer.json folder (the small
 *             BPE fixture), 3 a vocab.json + merges.txt folder (a hand-made byte-level
 *             BPE), the last three through atn_text_tokenizer_open;
 *   bit 2:    the input is special_tokens_map.json (over an empty tokenizer_config.json)
 *             instead of tokenizer_config.json.
 * A folder that opens must encode a few texts (a pair, a length limit) into ids of its
 * vocabulary with spans inside their own text on character boundaries; one that does not
 * must say why, naming the folder. */
#include "fuzz-hf-common.h"

static const char *scratch(const char *name) {
    static char dirs[4][512];
    static const char *const names[4] = {"wp", "tj", "bpe", "model"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(names[i], name)) {
            if (!dirs[i][0]) {
                snprintf(dirs[i], sizeof dirs[i], "%s/tokcfg-%s", fuzz_tmp(), name);
                mkdir(dirs[i], 0755);
            }
            return dirs[i];
        }
    return NULL;
}

static void put_file(const char *dir, const char *name, const void *data, size_t len) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fuzz_write(path, data, len);
}

static void copy_in(const char *dir, const char *name, const char *from_rel) {
    char from[4096], to[1024];
    snprintf(from, sizeof from, "%s/%s", fuzz_source_root(), from_rel);
    snprintf(to, sizeof to, "%s/%s", dir, name);
    if (access(to, F_OK) != 0)
        fuzz_copy(from, to);
}

static const char *folder(int kind) {
    const char *d;
    switch (kind) {
    case 1:
        d = scratch("wp");
        copy_in(d, "vocab.txt", "tests/tokenizer/small-cased-vocab.txt");
        return d;
    case 2:
        d = scratch("tj");
        copy_in(d, "tokenizer.json", "tests/tokenizer/models/bpe-plain.json");
        return d;
    case 3: {
        d = scratch("bpe");
        static const char vocab[] =
            "{\"<s>\":0,\"<pad>\":1,\"</s>\":2,\"<unk>\":3,\"<mask>\":4,\"t\":5,\"h\":6,\"e\":7,"
            "\"th\":8,\"the\":9,\"\\u0120\":10,\"\\u0120the\":11,\"c\":12,\"a\":13,\"at\":14,"
            "\"cat\":15,\"\\u0120cat\":16,\"s\":17,\"<|endoftext|>\":18}";
        static const char merges[] = "#version: 0.2\nt h\nth e\na t\nc at\n\xc4\xa0 the\n\xc4\xa0 cat\n";
        put_file(d, "vocab.json", vocab, sizeof vocab - 1);
        put_file(d, "merges.txt", merges, sizeof merges - 1);
        return d;
    }
    default:
        return NULL;
    }
}

static void check_encoding(const atn_encoding *e, const char *text, const char *pair, int32_t max_len,
                           int32_t vocab_size) {
    if (max_len > 0 && e->n > max_len)
        fuzz_fail("more tokens than max_len", NULL);
    const char *texts[2] = {text, pair};
    for (int32_t i = 0; i < e->n; i++) {
        const atn_token *t = &e->tokens[i];
        if (t->id < 0 || (vocab_size > 0 && t->id >= vocab_size) || e->ids[i] != t->id)
            fuzz_fail("an id outside the vocabulary", NULL);
        if (t->segment < 0)
            continue;
        if (t->segment > 1 || (t->segment == 1 && !pair))
            fuzz_fail("a bad segment", NULL);
        const unsigned char *s = (const unsigned char *)texts[t->segment];
        int32_t len = (int32_t)strlen((const char *)s);
        if (t->start < 0 || t->end < t->start || t->end > len)
            fuzz_fail("a span outside its text", t->text);
        if ((t->start < len && (s[t->start] & 0xC0) == 0x80) || (t->end < len && (s[t->end] & 0xC0) == 0x80))
            fuzz_fail("a span inside a character", t->text);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    int kind = data[0] & 3;
    bool as_map = data[0] & 4;
    data++, size--;
    const char *dir;
    if (kind == 0) {
        static const char *const files[] = {"config.json", "model.safetensors", "vocab.txt", NULL};
        dir = fuzz_hf_folder("base", files);
    } else {
        dir = folder(kind);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/special_tokens_map.json", dir);
    unlink(path);
    if (as_map) {
        put_file(dir, "tokenizer_config.json", "{}", 2);
        put_file(dir, "special_tokens_map.json", data, size);
    } else {
        put_file(dir, "tokenizer_config.json", data, size);
    }
    if (kind == 0) {
        fuzz_hf_open_and_run(dir);
        return 0;
    }
    atn_error err = {0};
    atn_text_tokenizer *t = atn_text_tokenizer_open(dir, &err);
    if (!t) {
        fuzz_check_parse_error(err.status, &err, dir);
        return 0;
    }
    int32_t ml = atn_text_tokenizer_max_length(t);
    if (ml < 0)
        fuzz_fail("a negative model_max_length", NULL);
    static const char *const texts[] = {"the cat sat", "The CAT's naïve café [MASK] <mask> <s>",
                                        "我爱你 \xf0\x9f\x98\x80 x", ""};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        for (int with_pair = 0; with_pair < 2; with_pair++) {
            const char *pair = with_pair ? texts[(i + 1) % 4] : NULL;
            int32_t max_len = with_pair ? (int32_t)(3 + i) : 0;
            atn_encoding *e = NULL;
            atn_status st = atn_text_tokenizer_encode(t, texts[i], pair, max_len, &e, &err);
            if (st == ATN_OK) {
                check_encoding(e, texts[i], pair, max_len, 0);
                for (int32_t k = 0; k < e->n; k++) {
                    atn_token_info info;
                    if (!atn_text_tokenizer_token_info(t, e->ids[k], &info))
                        fuzz_fail("an encoded id without token info", NULL);
                }
            } else if (st == ATN_E_NOMEM || !err.message[0] || err.status != st) {
                fuzz_fail("encode failed without a proper message", err.message);
            }
            atn_encoding_free(e);
        }
    }
    atn_text_tokenizer_free(t);
    return 0;
}

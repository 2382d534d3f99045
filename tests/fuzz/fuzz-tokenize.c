/* Fuzz target: tokenizer input text, arbitrary bytes (invalid UTF-8, control and
 * zero-width characters, CJK, combining marks, special tokens written in the text).
 * Byte 0 picks the options and vocabulary, byte 1 the length limit; the rest is the
 * text, and after its first NUL byte the text pair. */
#include "fuzz-tokenize-common.h"

static atn_tokenizer *toks[2][2][3][2];   /* [vocab][lower][strip -1/0/1][chinese] */

static const atn_tokenizer *get_tokenizer(unsigned flags) {
    int v = flags & 1, lower = (flags >> 1) & 1, strip = ((flags >> 2) & 3) % 3,
        chinese = (flags >> 4) & 1;
    atn_tokenizer **slot = &toks[v][lower][strip][chinese];
    if (!*slot) {
        static const char *const vocabs[] = {"tests/tokenizer/bert-base-uncased-vocab.txt",
                                             "tests/tokenizer/small-cased-vocab.txt"};
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", fuzz_source_root(), vocabs[v]);
        atn_wordpiece_options o;
        atn_wordpiece_options_init(&o);
        o.lower_case = lower;
        o.strip_accents = strip - 1;
        o.tokenize_chinese_chars = chinese;
        atn_error err = {0};
        *slot = atn_wordpiece_load(path, &o, &err);
        if (!*slot) {
            fprintf(stderr, "%s\n", err.message);
            exit(1);
        }
    }
    return *slot;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2)
        return 0;
    const atn_tokenizer *tok = get_tokenizer(data[0]);
    static const int32_t limits[] = {0, 3, 4, 5, 8, 16, 512, 2};
    int32_t max_len = limits[data[1] & 7];
    bool has_pair = data[0] & 0x20;
    char *text = malloc(size - 1);
    memcpy(text, data + 2, size - 2);
    text[size - 2] = 0;
    size_t tl = strlen(text);
    const char *pair = has_pair ? (tl + 1 < size - 1 ? text + tl + 1 : "") : NULL;
    fuzz_encode(tok, text, pair, max_len);
    free(text);
    return 0;
}

/* Fuzz target: SentencePiece's Precompiled charsmap (engine/tokenize/tok-charsmap.c).  Byte 0:
 * bit 0 set = the rest is the base64 text itself, else the rest is the blob (encoded here).
 * A blob that loads must normalize fixed texts and slices of the input into UTF-8 (when the
 * text is UTF-8) with, for each output byte, a span inside the text; the bytes of one output
 * character share their span (UTF-8 texts; other bytes go through one by one). */
#include "fuzz-tok-common.h"

static char *to_b64(const uint8_t *p, size_t n) {
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = malloc(n / 3 * 4 + 8), *q = o;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *q++ = a[v >> 18], *q++ = a[(v >> 12) & 63], *q++ = a[(v >> 6) & 63], *q++ = a[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        *q++ = a[v >> 18], *q++ = a[(v >> 12) & 63], *q++ = '=', *q++ = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        *q++ = a[v >> 18], *q++ = a[(v >> 12) & 63], *q++ = a[(v >> 6) & 63], *q++ = '=';
    }
    *q = '\0';
    return o;
}

static void check_norm(const atn_charsmap *cm, const char *text, size_t len) {
    char *out = NULL;
    size_t ol = 0;
    int32_t *ss = NULL, *se = NULL;
    atn_error err = {0};
    if (atn_charsmap_normalize(cm, text, len, &out, &ol, &ss, &se, &err) != ATN_OK)
        fuzz_fail("normalize failed", err.message);
    if (out[ol] != '\0')
        fuzz_fail("the output is not NUL-terminated", NULL);
    bool utf8 = fuzz_utf8_valid((const unsigned char *)text, len);
    if (utf8 && !fuzz_utf8_valid((const unsigned char *)out, ol))
        fuzz_fail("UTF-8 in, not UTF-8 out", text);
    for (size_t i = 0; i < ol; i++) {
        if (ss[i] < 0 || se[i] < ss[i] || (size_t)se[i] > len)
            fuzz_fail("an output byte's span outside the text", text);
        if (utf8 && i && ((unsigned char)out[i] & 0xC0) == 0x80 && (ss[i] != ss[i - 1] || se[i] != se[i - 1]))
            fuzz_fail("the bytes of one output char with different spans", text);
    }
    free(out);
    free(ss);
    free(se);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    char *b64;
    if (data[0] & 1) {
        b64 = malloc(size);
        memcpy(b64, data + 1, size - 1);
        b64[size - 1] = '\0';
    } else {
        b64 = to_b64(data + 1, size - 1);
    }
    atn_error err = {0};
    const char *origin = "fuzz-tokenizer.json";
    atn_charsmap *cm = atn_charsmap_from_base64(b64, origin, "normalizer.precompiled_charsmap", &err);
    free(b64);
    if (!cm) {
        fuzz_check_parse_error(err.status, &err, origin);
        if (err.status == ATN_E_FORMAT && !strstr(err.message, "normalizer.precompiled_charsmap"))
            fuzz_fail("an error without its JSON path", err.message);
        return 0;
    }
    static const char *const texts[] = {
        "Hello world", "  two  spaces ", "caf\xc3\xa9 cafe\xcc\x81", "\xef\xbc\xa6\xef\xbd\x95ll \xe2\x91\xa0",
        "\xef\xac\x81ne", "cr\r\nlf\t", "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7",
        "\xf0\x9f\x87\xab\xf0\x9f\x87\xb7", "\xe0\xb8\xa0\xe0\xb8\xb2\xe0\xb8\xa9\xe0\xb8\xb2", "\xea\xb0\x80\xe1\x86\xa8",
        "a\x01" "b\x7f", "\xe6\x88\x91\xe7\x88\xb1\xe4\xbd\xa0", "",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        check_norm(cm, texts[i], strlen(texts[i]));
    for (size_t at = 1; at < size; at += 61)
        check_norm(cm, (const char *)data + at, size - at < 40 ? size - at : 40);
    atn_charsmap_free(cm);
    return 0;
}

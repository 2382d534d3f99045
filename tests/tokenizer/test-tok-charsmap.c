/* SentencePiece's Precompiled charsmap (engine/tokenize/tok-charsmap.c) against the real Hugging Face
 * Rust library: models/gen_fixtures.js took the nmt_nfkc charsmap of a model trained by
 * Debian's spm_train, and recorded for 91 hard texts and 2500 random ones what the npm
 * `tokenizers` package's Precompiled normalizer makes of each (the string, and through a
 * one-piece-per-char model the original char span of every normalized char), and, beside
 * it, sentencepiece's own spm_normalize.  Here: our string and spans equal HF's on every
 * text; spm_normalize is counted.  Then hand-made blobs: a rule, a deletion, and every way
 * a blob can be bad (refused, ATN_E_FORMAT naming file and path). */
#include "check.h"
#include "core/files.h"
#include "tokenize/tok-model.h"

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

static int32_t char_at(const char *s, size_t len, int32_t byte) {   /* chars before byte */
    int32_t c = 0;
    for (int32_t i = 0; i < byte && (size_t)i < len; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static void test_hf(void) {
    cJSON *fx = load_json("charsmap.cases.json");
    cJSON *tj = load_json(cJSON_GetObjectItem(fx, "tokenizer")->valuestring);
    const cJSON *b64 = cJSON_GetObjectItem(
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(tj, "normalizer"), "normalizers"), 0),
        "precompiled_charsmap");
    atn_error err = {0};
    atn_charsmap *cm = atn_charsmap_from_base64(b64->valuestring, "spm-unigram.json",
                                                "normalizer.normalizers[0].precompiled_charsmap", &err);
    CHECK_MSG(cm != NULL, "%s", err.message);
    if (!cm)
        return;
    int n = 0, bad = 0, changed = 0, spm_total = 0, spm_agree = 0;
    for (const cJSON *c = cJSON_GetObjectItem(fx, "cases")->child; c; c = c->next, n++) {
        const char *text = cJSON_GetObjectItem(c, "text")->valuestring;
        const char *want = cJSON_GetObjectItem(c, "normalized")->valuestring;
        const cJSON *spans = cJSON_GetObjectItem(c, "spans");
        size_t len = strlen(text), ol = 0;
        char *out = NULL;
        int32_t *ss = NULL, *se = NULL;
        CHECK(atn_charsmap_normalize(cm, text, len, &out, &ol, &ss, &se, &err) == ATN_OK);
        bool ok = out && strlen(out) == ol && strcmp(out, want) == 0;
        changed += ok && strcmp(out, text) != 0;
        /* the span of each output char, at its first byte, in chars of the text */
        int k = 0;
        for (size_t i = 0; ok && i < ol; i++) {
            if (((unsigned char)out[i] & 0xC0) == 0x80)
                continue;
            const cJSON *sp = cJSON_GetArrayItem(spans, k++);
            int32_t cs = char_at(text, len, ss[i]);
            int32_t ce = char_at(text, len, se[i]);
            ok = sp && cJSON_GetArrayItem(sp, 0)->valueint == cs && cJSON_GetArrayItem(sp, 1)->valueint == ce &&
                 ss[i] >= 0 && ss[i] <= se[i] && (size_t)se[i] <= len;
            for (size_t q = i + 1; ok && q < ol && ((unsigned char)out[q] & 0xC0) == 0x80; q++)
                ok = ss[q] == ss[i] && se[q] == se[i];
        }
        ok = ok && k == cJSON_GetArraySize(spans);
        if (!ok) {
            if (bad < 6) {
                fprintf(stderr, "  charsmap: \"%s\"\n    want \"%s\" spans", text, want);
                for (const cJSON *sp = spans->child; sp; sp = sp->next)
                    fprintf(stderr, " [%d,%d)", cJSON_GetArrayItem(sp, 0)->valueint,
                            cJSON_GetArrayItem(sp, 1)->valueint);
                fprintf(stderr, "\n    got  \"%s\" byte spans", out ? out : "(null)");
                for (size_t i = 0; out && i < ol; i++)
                    if (((unsigned char)out[i] & 0xC0) != 0x80)
                        fprintf(stderr, " [%d,%d)", ss[i], se[i]);
                fputc('\n', stderr);
            }
            bad++;
        }
        const cJSON *spm = cJSON_GetObjectItem(c, "spm");
        if (cJSON_IsString(spm)) {
            spm_total++;
            spm_agree += out && strcmp(out, spm->valuestring) == 0;
        }
        free(out);
        free(ss);
        free(se);
    }
    fprintf(stderr, "charsmap: %d texts (%d changed by the rules), %d differ from HF; spm_normalize gives "
            "our string on %d of %d\n", n, changed, bad, spm_agree, spm_total);
    CHECK(n >= 2000 && changed >= 500 && bad == 0);
    /* spm_normalize also trims and squeezes whitespace (remove_extra_whitespaces), which HF
       leaves to other normalizers: most texts still agree */
    CHECK(spm_agree * 2 >= spm_total);
    atn_charsmap_free(cm);
    cJSON_Delete(tj);
    cJSON_Delete(fx);
}

/* ---- hand-made blobs -------------------------------------------------------------------- */

static char *b64(const unsigned char *p, size_t n) {
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = malloc(n / 3 * 4 + 8), *q = o;
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *q++ = a[v >> 18];
        *q++ = a[(v >> 12) & 63];
        *q++ = a[(v >> 6) & 63];
        *q++ = a[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        *q++ = a[v >> 18];
        *q++ = a[(v >> 12) & 63];
        *q++ = '=';
        *q++ = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        *q++ = a[v >> 18];
        *q++ = a[(v >> 12) & 63];
        *q++ = a[(v >> 6) & 63];
        *q++ = '=';
    }
    *q = '\0';
    return o;
}

/* A 256-unit trie with one rule, byte `from` -> the string at `value`, then strings. */
static char *blob(unsigned char from, uint32_t value, const char *strings, size_t slen, uint32_t trie_bytes) {
    uint32_t u[256] = {0};
    u[0] = 1u << 10;                              /* root at 1 */
    size_t child = 1 ^ from, next = 0x70;
    u[child] = from | (1u << 8) | (uint32_t)((child ^ next) << 10);
    u[next] = value;
    size_t n = 4 + sizeof u + slen;
    unsigned char *b = malloc(n);
    b[0] = (unsigned char)trie_bytes;
    b[1] = (unsigned char)(trie_bytes >> 8);
    b[2] = (unsigned char)(trie_bytes >> 16);
    b[3] = (unsigned char)(trie_bytes >> 24);
    for (int i = 0; i < 256; i++)
        for (int k = 0; k < 4; k++)
            b[4 + 4 * i + k] = (unsigned char)(u[i] >> (8 * k));
    memcpy(b + 4 + sizeof u, strings, slen);
    char *s = b64(b, n);
    free(b);
    return s;
}

static void norm(const atn_charsmap *cm, const char *text, const char *want, const char *want_spans) {
    char *out = NULL;
    size_t ol = 0;
    int32_t *ss = NULL, *se = NULL;
    atn_error err = {0};
    CHECK(atn_charsmap_normalize(cm, text, strlen(text), &out, &ol, &ss, &se, &err) == ATN_OK);
    CHECK_STR(out, want);
    char buf[512] = "";
    size_t o = 0;
    for (size_t i = 0; i < ol && o < sizeof buf - 20; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%d-%d", i ? " " : "", ss[i], se[i]);
    CHECK_STR(buf, want_spans);
    free(out);
    free(ss);
    free(se);
}

static void test_hand(void) {
    atn_error err = {0};
    char *s = blob('a', 0, "bc\0", 3, 1024);
    atn_charsmap *cm = atn_charsmap_from_base64(s, "t.json", "normalizer.precompiled_charsmap", &err);
    CHECK_MSG(cm, "%s", err.message);
    free(s);
    /* a -> "bc": one char more; the added one (Rust's changes = 1) gets the span of the byte
       before the next original char, here a's */
    norm(cm, "xay", "xbcy", "0-1 1-2 1-2 2-3");
    norm(cm, "xy", "xy", "0-1 1-2");
    norm(cm, "\xc3\xa9" "a", "\xc3\xa9" "bc", "0-2 0-2 2-3 2-3");
    atn_charsmap_free(cm);
    /* a -> "": the deletion is charged to the char before, as the Rust replace() does */
    s = blob('a', 2, "bc\0", 3, 1024);
    cm = atn_charsmap_from_base64(s, "t.json", "normalizer.precompiled_charsmap", &err);
    CHECK_MSG(cm, "%s", err.message);
    free(s);
    norm(cm, "xay", "xy", "0-1 2-3");
    norm(cm, "axy", "xy", "0-1 1-2");   /* nothing before: the next chars take the spans in order */
    atn_charsmap_free(cm);

    struct {
        char *b64;
        const char *want;
    } bad[] = {
        {blob('a', 5, "bc\0", 3, 1024), "points at byte 5, not a character of its 3 bytes"},
        {blob('a', 1, "\xc3\xa9\0", 3, 1024), "points at byte 1, not a character"},
        {blob('a', 0, "\xff\0", 2, 1024), "normalized strings are not UTF-8 (byte 0)"},
        {blob('a', 0, "b\0", 2, 4096), "trie of 4096 bytes is longer than the 1026 bytes"},
        {blob('a', 0, "b\0", 2, 0), "the charsmap's trie is empty"},
        {strdup("AAA"), "not base64 (at character 3)"},
        {strdup("AAAA*AAA"), "not base64 (at character 4)"},
        {strdup("AAE="), "a charsmap of 2 bytes, shorter than its 4-byte header"},
        {strdup(""), "a charsmap of 0 bytes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cm = atn_charsmap_from_base64(bad[i].b64, "t.json", "normalizer.precompiled_charsmap", &err);
        CHECK_MSG(!cm && err.status == ATN_E_FORMAT && strstr(err.message, bad[i].want) &&
                      strncmp(err.message, "t.json: normalizer.precompiled_charsmap: ", 41) == 0,
                  "case %zu: \"%s\"", i, err.message);
        atn_charsmap_free(cm);
        free(bad[i].b64);
    }
    /* a trie cut short (the rule's child slots past the array) answers "no rule" */
    uint32_t u0 = 200u << 10;
    unsigned char b[12] = {4, 0, 0, 0};
    for (int k = 0; k < 4; k++)
        b[4 + k] = (unsigned char)(u0 >> (8 * k));
    char *sb = b64(b, 8);
    cm = atn_charsmap_from_base64(sb, "t.json", "p", &err);
    CHECK_MSG(cm, "%s", err.message);
    if (cm)
        norm(cm, "abc", "abc", "0-1 1-2 2-3");
    atn_charsmap_free(cm);
    free(sb);
    CHECK(!atn_charsmap_from_base64(NULL, "t.json", "p", &err) && err.status == ATN_E_FORMAT);
}

int main(int argc, char **argv) {
    dir = argc > 1 ? argv[1] : "tests/tokenizer";
    test_hand();
    test_hf();
    return check_summary("tok-charsmap");
}

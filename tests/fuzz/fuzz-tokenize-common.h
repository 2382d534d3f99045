/* Checks an encoding from atn_tokenizer_encode against what the tokenizer promises:
 * [CLS] A [SEP] (B [SEP]), ids in the vocabulary, token text = the vocabulary entry,
 * spans inside their segment starting and ending on character boundaries, at most
 * max_len tokens. */
#ifndef ATN_FUZZ_TOKENIZE_COMMON_H
#define ATN_FUZZ_TOKENIZE_COMMON_H

#include "fuzz-common.h"
#include "tokenize/wordpiece.h"

/* Strict UTF-8 (no overlongs, surrogates or values past U+10FFFF), written here
 * independently of the tokenizer's decoder. */
static inline bool fuzz_utf8_valid(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        uint32_t v;
        if (c < 0x80) { i++; continue; }
        else if ((c & 0xE0) == 0xC0) { k = 2; v = c & 0x1F; }
        else if ((c & 0xF0) == 0xE0) { k = 3; v = c & 0x0F; }
        else if ((c & 0xF8) == 0xF0) { k = 4; v = c & 0x07; }
        else return false;
        if (n - i < k)
            return false;
        for (size_t j = 1; j < k; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return false;
            v = v << 6 | (s[i + j] & 0x3F);
        }
        static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
        if (v < min[k] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
            return false;
        i += k;
    }
    return true;
}

static inline void fuzz_check_encoding(const atn_tokenizer *tok, const atn_encoding *e,
                                       const char *text, const char *pair, int32_t max_len) {
    int32_t V = atn_tokenizer_vocab_size(tok);
    int32_t cls = atn_tokenizer_special_id(tok, ATN_TOKEN_CLS), sep = atn_tokenizer_special_id(tok, ATN_TOKEN_SEP);
    int32_t min_n = pair ? 3 : 2;
    if (e->n < min_n || (max_len > 0 && e->n > max_len))
        fuzz_fail("token count out of range", NULL);
    if (e->ids[0] != cls || e->ids[e->n - 1] != sep)
        fuzz_fail("not [CLS] ... [SEP]", NULL);
    if (e->truncated != (e->n_dropped > 0))
        fuzz_fail("truncated flag disagrees with n_dropped", NULL);
    size_t lens[2] = {strlen(text), pair ? strlen(pair) : 0};
    const char *texts[2] = {text, pair};
    int seps = 0;
    for (int32_t i = 0; i < e->n; i++) {
        const atn_token *t = &e->tokens[i];
        if (e->ids[i] < 0 || e->ids[i] >= V || t->id != e->ids[i])
            fuzz_fail("an id outside the vocabulary", NULL);
        if (!t->text || strcmp(t->text, atn_tokenizer_id_to_token(tok, t->id)) != 0)
            fuzz_fail("token text is not the vocabulary entry", t->text);
        if (e->mask[i] != 1 || e->type_ids[i] != t->type_id)
            fuzz_fail("mask or type id wrong", NULL);
        /* the role is the special token's for a special id, else a word's (or [UNK]'s); a
           continuation is a "##" entry that is not a word's first piece */
        atn_vocab_entry v;
        if (!atn_tokenizer_id_info(tok, t->id, &v) || t->role != v.role)
            fuzz_fail("a role that is not its id's", t->text);
        if (t->continuation && (!v.continuation || t->special || i == 0 ||
                                e->tokens[i - 1].segment != t->segment || e->tokens[i - 1].special))
            fuzz_fail("a continuation that continues nothing", t->text);
        if (v.continuation && !t->continuation)
            fuzz_fail("a \"##\" piece that starts a word", t->text);
        if (t->segment < 0) {
            if (t->start != -1 || t->end != -1 || !t->special)
                fuzz_fail("an added special token with a span", NULL);
            seps += t->id == sep;
            continue;
        }
        if (t->segment > 1 || (t->segment == 1 && !pair) || t->type_id != t->segment)
            fuzz_fail("a bad segment", NULL);
        size_t len = lens[t->segment];
        const unsigned char *s = (const unsigned char *)texts[t->segment];
        if (t->start < 0 || t->start >= t->end || (size_t)t->end > len)
            fuzz_fail("a span outside its text", t->text);
        if ((s[t->start] & 0xC0) == 0x80 || ((size_t)t->end < len && (s[t->end] & 0xC0) == 0x80))
            fuzz_fail("a span that splits a character", t->text);
    }
    if (seps != (pair ? 2 : 1))
        fuzz_fail("wrong number of added [SEP]", NULL);
}

/* Encodes and checks; invalid UTF-8 must be refused (and only that). */
static inline void fuzz_encode(const atn_tokenizer *tok, const char *text, const char *pair,
                               int32_t max_len) {
    atn_encoding *e = NULL;
    atn_error err = {0};
    atn_status st = atn_tokenizer_encode(tok, text, pair, max_len, &e, &err);
    if (max_len > 0 && max_len < 3) {   /* no room for [CLS] and [SEP]: always refused */
        if (st != ATN_E_INVALID || e)
            fuzz_fail("a length limit under 3 accepted", NULL);
        fuzz_check_error(st, &err, NULL);
        return;
    }
    bool valid = fuzz_utf8_valid((const unsigned char *)text, strlen(text)) &&
                 (!pair || fuzz_utf8_valid((const unsigned char *)pair, strlen(pair)));
    if (st == ATN_OK) {
        if (!valid)
            fuzz_fail("invalid UTF-8 accepted", NULL);
        fuzz_check_encoding(tok, e, text, pair, max_len);
        atn_encoding_free(e);
        return;
    }
    if (e)
        fuzz_fail("an encoding handed out on error", NULL);
    fuzz_check_error(st, &err, NULL);
    if (valid && st != ATN_E_NOMEM)
        fuzz_fail("valid text refused", err.message);
    if (!valid && (st != ATN_E_INVALID || !strstr(err.message, "invalid UTF-8 at byte offset")))
        fuzz_fail("invalid UTF-8 not reported as such", err.message);
}

#endif

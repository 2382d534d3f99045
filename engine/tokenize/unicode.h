/* UTF-8 and Unicode normalisation for the tokenizers, on characters that keep the byte
 * span of the original text they came from through every step (a composed character
 * spans its parts; a decomposed or lower-cased one gives each part the whole span).
 * WordPiece (wordpiece.c) uses all of it; a second tokenizer (BPE, Unigram) shares it.
 * The character data (classes, lower-case mapping, combining classes, decompositions,
 * compositions) is generated into unicode-tables.c.  Internal to the engine; no state,
 * so any thread may call it. */
#ifndef ATN_UNICODE_H
#define ATN_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tokenize/unicode-tables.h"

/* ---- UTF-8 ------------------------------------------------------------------------ */

/* Decodes one strictly valid UTF-8 sequence (no overlongs, surrogates or values past
 * U+10FFFF) from s[0..avail), avail >= 1.  Returns its length (1..4), or 0 when s does
 * not start with one. */
int atn_utf8_decode(const unsigned char *s, size_t avail, uint32_t *cp);
/* Writes cp (a valid scalar value) as 1..4 bytes to out; returns the count. */
int atn_utf8_encode(uint32_t cp, char *out);
/* Offset of the first invalid byte of s[0..len), or len when all of it is valid. */
size_t atn_utf8_check(const unsigned char *s, size_t len);

/* ---- characters with spans ------------------------------------------------------------ */

typedef struct atn_uchar {
    uint32_t cp;
    int32_t start, end;   /* bytes [start, end) of the original text it came from; -1 for
                             characters a step inserted (the spaces around CJK) */
} atn_uchar;

/* A growable array of characters; zero it to start, free(v) to end. */
typedef struct atn_ustr {
    atn_uchar *v;
    size_t n, cap;
} atn_ustr;

/* Room for extra more characters; false when memory runs out (b unchanged). */
bool atn_ustr_reserve(atn_ustr *b, size_t extra);
/* Appends one character; the caller has reserved room. */
static inline void atn_ustr_push(atn_ustr *b, uint32_t cp, int32_t start, int32_t end) {
    b->v[b->n].cp = cp;
    b->v[b->n].start = start;
    b->v[b->n].end = end;
    b->n++;
}

/* Each of these writes dst from src[0..n) (src must not lie in dst) and returns false
 * when memory runs out.
 *   lower: Python's per-character str.lower() (one character may become up to three).
 *   nfd:   full canonical decomposition, then canonical ordering.
 *   nfc:   NFD then canonical composition. */
bool atn_ustr_lower(const atn_uchar *src, size_t n, atn_ustr *dst);
bool atn_ustr_nfd(const atn_uchar *src, size_t n, atn_ustr *dst);
bool atn_ustr_nfc(const atn_uchar *src, size_t n, atn_ustr *dst);
/* Drops the non-spacing marks (Mn) in place: BERT's strip_accents after NFD. */
void atn_ustr_strip_marks(atn_ustr *b);

/* ---- character classes (HF's _is_whitespace, _is_control, _is_punctuation) ---------- */

static inline bool atn_uc_is_bert_space(uint32_t cp) {
    if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r')
        return true;
    return cp >= 0x80 && atn_uc_class_of(cp) == ATN_UC_ZS;
}

static inline bool atn_uc_is_bert_control(uint32_t cp) {
    if (cp == '\t' || cp == '\n' || cp == '\r')
        return false;
    if (cp < 0x80)
        return cp < 0x20 || cp == 0x7F;
    return atn_uc_class_of(cp) == ATN_UC_CONTROL;
}

static inline bool atn_uc_is_bert_punct(uint32_t cp) {
    if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
        (cp >= 123 && cp <= 126))
        return true;
    return cp >= 0x80 && atn_uc_class_of(cp) == ATN_UC_PUNCT;
}

/* Python's str.split() separators once the text is cleaned: ' ' and U+2028/U+2029 (the
 * others are control characters or Zs, already removed or made ' '). */
static inline bool atn_uc_is_py_split_space(uint32_t cp) {
    if (cp < 0x80)
        return cp == ' ' || (cp >= '\t' && cp <= '\r') || (cp >= 0x1C && cp <= 0x1F);
    atn_uc_class c = atn_uc_class_of(cp);
    return c == ATN_UC_ZS || c == ATN_UC_PYSPACE || cp == 0x85;
}

/* HF BertTokenizer._is_chinese_char: the CJK Unified Ideographs blocks (not all of CJK). */
static inline bool atn_uc_is_cjk_ideograph(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

#endif

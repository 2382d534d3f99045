/* UTF-8 and Unicode normalisation on characters that keep their byte spans: what the
 * tokenizers share (see unicode.h).  The character data is in unicode-tables.c. */
#include "tokenize/unicode.h"

#include <stdlib.h>
#include <string.h>

/* ---- UTF-8 ------------------------------------------------------------------------ */

/* Decodes one strictly valid UTF-8 sequence (no overlongs, surrogates or values past
 * U+10FFFF).  Returns its length, or 0 when s does not start with one. */
int atn_utf8_decode(const unsigned char *s, size_t avail, uint32_t *cp) {
    unsigned c = s[0];
    if (c < 0x80) { *cp = c; return 1; }
    int n;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) { n = 2; v = c & 0x1F; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; v = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; v = c & 0x07; min = 0x10000; }
    else return 0;
    if (avail < (size_t)n)
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

int atn_utf8_encode(uint32_t cp, char *out) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Offset of the first invalid byte, or len when all of s is valid. */
size_t atn_utf8_check(const unsigned char *s, size_t len) {
    size_t i = 0;
    uint32_t cp;
    while (i < len) {
        if (s[i] < 0x80) { i++; continue; }
        int k = atn_utf8_decode(s + i, len - i, &cp);
        if (!k)
            return i;
        i += (size_t)k;
    }
    return len;
}

/* ---- characters with spans --------------------------------------------------------- */

bool atn_ustr_reserve(atn_ustr *b, size_t extra) {
    if (b->n + extra <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + extra)
        cap *= 2;
    atn_uchar *v = realloc(b->v, cap * sizeof *v);
    if (!v)
        return false;
    b->v = v;
    b->cap = cap;
    return true;
}

/* ---- normalisation -------------------------------------------------------------------- */

/* Python's per-character str.lower(), from src into dst. */
bool atn_ustr_lower(const atn_uchar *src, size_t n, atn_ustr *dst) {
    dst->n = 0;
    if (!atn_ustr_reserve(dst, n * ATN_UC_MAX_LOWER))
        return false;
    for (size_t i = 0; i < n; i++) {
        uint32_t out[ATN_UC_MAX_LOWER];
        int k = atn_uc_lower(src[i].cp, out);
        for (int j = 0; j < k; j++)
            atn_ustr_push(dst, out[j], src[i].start, src[i].end);
    }
    return true;
}

/* Canonical ordering: each run of non-starters (combining class > 0) stably sorted by class.
 * Short runs (the usual one or two marks) by insertion; longer ones by a counting sort over
 * the 255 classes, O(run) with a temporary copy, so a flood of 60k marks costs milliseconds
 * (an insertion sort over it took 5-13 s).  False when out of memory. */
static bool reorder(atn_uchar *v, size_t n) {
    enum { SHORT_RUN = 32 };
    for (size_t i = 0; i < n;) {
        if (atn_uc_ccc(v[i].cp) == 0) {
            i++;
            continue;
        }
        size_t end = i + 1;
        while (end < n && atn_uc_ccc(v[end].cp) != 0)
            end++;
        size_t len = end - i;
        if (len <= SHORT_RUN) {
            for (size_t k = i + 1; k < end; k++) {
                atn_uchar t = v[k];
                int c = atn_uc_ccc(t.cp);
                size_t j = k;
                while (j > i && atn_uc_ccc(v[j - 1].cp) > c) {
                    v[j] = v[j - 1];
                    j--;
                }
                v[j] = t;
            }
        } else {
            atn_uchar *tmp = malloc(len * sizeof *tmp);
            if (!tmp)
                return false;
            size_t count[257] = {0};
            for (size_t k = i; k < end; k++)
                count[atn_uc_ccc(v[k].cp) + 1]++;
            for (int c = 1; c < 257; c++)
                count[c] += count[c - 1];   /* count[c]: where class c starts */
            for (size_t k = i; k < end; k++)
                tmp[count[atn_uc_ccc(v[k].cp)]++] = v[k];
            memcpy(v + i, tmp, len * sizeof *tmp);
            free(tmp);
        }
        i = end;
    }
    return true;
}

/* Full canonical decomposition then canonical ordering (a stable sort of each run of
 * non-starters by combining class): NFD, from src into dst. */
bool atn_ustr_nfd(const atn_uchar *src, size_t n, atn_ustr *dst) {
    dst->n = 0;
    if (!atn_ustr_reserve(dst, n * ATN_UC_MAX_DECOMP))
        return false;
    for (size_t i = 0; i < n; i++) {
        uint32_t out[ATN_UC_MAX_DECOMP];
        int k = atn_uc_decompose(src[i].cp, out);
        for (int j = 0; j < k; j++)
            atn_ustr_push(dst, out[j], src[i].start, src[i].end);
    }
    return reorder(dst->v, dst->n);
}

/* Canonical composition in place (the second half of NFC).  A composite's span is the
 * union of its parts'. */
static void compose(atn_ustr *b) {
    atn_uchar *v = b->v;
    size_t n = b->n;
    if (n == 0)
        return;
    size_t starter = 0, out = 1;
    int last_class = atn_uc_ccc(v[0].cp);
    bool have_starter = last_class == 0;
    if (!have_starter)
        last_class = 256;
    for (size_t i = 1; i < n; i++) {
        atn_uchar c = v[i];
        int cls = atn_uc_ccc(c.cp);
        uint32_t comp = have_starter && (last_class < cls || last_class == 0)
                            ? atn_uc_compose(v[starter].cp, c.cp) : 0;
        if (comp) {
            v[starter].cp = comp;
            if (c.start < v[starter].start) v[starter].start = c.start;
            if (c.end > v[starter].end) v[starter].end = c.end;
            continue;
        }
        if (cls == 0) {
            starter = out;
            have_starter = true;
        }
        last_class = cls;
        v[out++] = c;
    }
    b->n = out;
}

/* NFC from src into dst. */
bool atn_ustr_nfc(const atn_uchar *src, size_t n, atn_ustr *dst) {
    /* Text below U+0300 is already NFC: no such character changes under NFC and the
     * second part of every canonical composition is U+0300 or above. */
    bool simple = true;
    for (size_t i = 0; i < n && simple; i++)
        simple = src[i].cp < 0x300;
    if (simple) {
        dst->n = 0;
        if (!atn_ustr_reserve(dst, n))
            return false;
        if (n)
            memcpy(dst->v, src, n * sizeof *src);
        dst->n = n;
        return true;
    }
    if (!atn_ustr_nfd(src, n, dst))
        return false;
    compose(dst);
    return true;
}

void atn_ustr_strip_marks(atn_ustr *b) {
    size_t k = 0;
    for (size_t i = 0; i < b->n; i++)
        if (b->v[i].cp < 0x300 || atn_uc_class_of(b->v[i].cp) != ATN_UC_MN)
            b->v[k++] = b->v[i];
    b->n = k;
}

/* SentencePiece's compiled normalization rules (the Precompiled normalizer's
 * precompiled_charsmap), read and applied as the Rust tokenizers library does
 * (normalizers/precompiled.rs over the spm_precompiled crate).
 *
 * The blob: a little-endian u32 trie size in bytes, the darts-clone double-array trie
 * (u32 units), then the replacement strings, NUL-terminated, UTF-8.  A trie walk over a
 * string's bytes yields, at each prefix with a leaf, an offset into the strings; a chunk is
 * rewritten by the first (shortest) match.  The text is walked by extended grapheme
 * clusters: a cluster shorter than 6 bytes is rewritten whole when a prefix of it matches;
 * otherwise (or when nothing matches) each of its characters is rewritten alone, or kept.
 * The alignment of each output character is the Rust NormalizedString::transform's: the
 * original span of the first character it replaces, and for characters a rule added, the
 * span before them (what "changes" the Rust replace() gives each character, including its
 * quirks: a rule that deletes a cluster charges the deletion to the character before).
 *
 * The blob is validated once (every trie node a walk can reach lies inside the array with
 * its 255 neighbours, every value inside the strings, on a character boundary), so a walk
 * never reads out of bounds.  Immutable once made: threads may share it. */
#include "tokenize/tok-model.h"
#include "tokenize/unicode.h"

#include <stdlib.h>
#include <string.h>

/* ---- extended grapheme clusters (UAX #29, the rules unicode-segmentation applies; the
 * Unicode 15.1 conjunct rule GB9c is left out: it only joins clusters of 9 bytes and more,
 * which are rewritten character by character either way) ------------------------------- */

enum atn_gcb {
    GCB_OTHER, GCB_CR, GCB_LF, GCB_CONTROL, GCB_EXTEND, GCB_ZWJ, GCB_RI, GCB_PREPEND,
    GCB_SPACINGMARK, GCB_L, GCB_V, GCB_T, GCB_LV, GCB_LVT
};

extern const uint32_t atn_gcb_runs[];
extern const size_t atn_gcb_nruns;
extern const uint32_t atn_extpict_runs[];
extern const size_t atn_extpict_nruns;

static int gcb_of(uint32_t cp) {
    size_t lo = 0, hi = atn_gcb_nruns;   /* the last run starting at or before cp */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if ((atn_gcb_runs[mid] >> 4) <= cp)
            lo = mid;
        else
            hi = mid;
    }
    return (int)(atn_gcb_runs[lo] & 15);
}

static bool is_extpict(uint32_t cp) {
    size_t lo = 0, hi = atn_extpict_nruns;   /* how many run starts are <= cp */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (atn_extpict_runs[mid] <= cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo & 1;
}

static int next_char(const unsigned char *s, size_t len, size_t at, uint32_t *cp) {
    int n = atn_utf8_decode(s + at, len - at, cp);
    if (n <= 0) {
        *cp = 0xFFFD;   /* not UTF-8: one byte, a character of its own */
        return 1;
    }
    return n;
}

/* The end of the cluster starting at byte at. */
static size_t grapheme_end(const unsigned char *s, size_t len, size_t at) {
    uint32_t cp;
    size_t i = at + (size_t)next_char(s, len, at, &cp);
    int prev = gcb_of(cp);
    bool pict_seq = is_extpict(cp);   /* ExtPict Extend* so far */
    bool pict_zwj = false;            /* ... followed by ZWJ as the last char */
    int ri = prev == GCB_RI ? 1 : 0;
    while (i < len) {
        uint32_t c;
        int n = next_char(s, len, i, &c);
        int cur = gcb_of(c);
        bool join;
        if (prev == GCB_CR && cur == GCB_LF)
            join = true;                                                   /* GB3 */
        else if (prev == GCB_CR || prev == GCB_LF || prev == GCB_CONTROL)
            join = false;                                                  /* GB4 */
        else if (cur == GCB_CR || cur == GCB_LF || cur == GCB_CONTROL)
            join = false;                                                  /* GB5 */
        else if (prev == GCB_L && (cur == GCB_L || cur == GCB_V || cur == GCB_LV || cur == GCB_LVT))
            join = true;                                                   /* GB6 */
        else if ((prev == GCB_LV || prev == GCB_V) && (cur == GCB_V || cur == GCB_T))
            join = true;                                                   /* GB7 */
        else if ((prev == GCB_LVT || prev == GCB_T) && cur == GCB_T)
            join = true;                                                   /* GB8 */
        else if (cur == GCB_EXTEND || cur == GCB_ZWJ || cur == GCB_SPACINGMARK)
            join = true;                                                   /* GB9, GB9a */
        else if (prev == GCB_PREPEND)
            join = true;                                                   /* GB9b */
        else if (pict_zwj && is_extpict(c))
            join = true;                                                   /* GB11 */
        else if (prev == GCB_RI && cur == GCB_RI)
            join = ri % 2 == 1;                                            /* GB12, GB13 */
        else
            join = false;                                                  /* GB999 */
        if (!join)
            break;
        bool ep = is_extpict(c);
        pict_zwj = pict_seq && cur == GCB_ZWJ;
        pict_seq = ep || (pict_seq && cur == GCB_EXTEND);
        ri = cur == GCB_RI ? ri + 1 : 0;
        prev = cur;
        i += (size_t)n;
    }
    return i;
}

/* ---- the blob ----------------------------------------------------------------------------- */

struct atn_charsmap {
    uint32_t *units;
    size_t nunits;
    char *strings;   /* the normalized strings (UTF-8) */
    size_t nstrings;
};

static inline uint32_t u_has_leaf(uint32_t u) { return (u >> 8) & 1; }
static inline uint32_t u_value(uint32_t u) { return u & ((1u << 31) - 1); }
static inline uint32_t u_label(uint32_t u) { return u & ((1u << 31) | 0xFF); }
static inline uint32_t u_offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

static int b64_val(unsigned char c) {
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Standard base64 with its padding; *bad gets the offset of the first character that is
 * wrong.  NULL with *bad == (size_t)-1 on out of memory. */
static unsigned char *b64_decode(const char *s, size_t len, size_t *out_len, size_t *bad) {
    size_t pad = 0;
    while (pad < 2 && len > pad && s[len - 1 - pad] == '=')
        pad++;
    size_t body = len - pad;
    if (len % 4) {   /* the padded form only, as the Rust base64 STANDARD engine takes */
        *bad = len;
        return NULL;
    }
    unsigned char *out = malloc(body / 4 * 3 + 3);
    if (!out) {
        *bad = (size_t)-1;
        return NULL;
    }
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < body; i++) {
        int v = b64_val((unsigned char)s[i]);
        if (v < 0) {
            free(out);
            *bad = i;
            return NULL;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    if (bits && (acc & ((1u << bits) - 1))) {   /* non-zero leftover bits: not canonical */
        free(out);
        *bad = body - 1;
        return NULL;
    }
    *out_len = n;
    return out;
}

/* Every node a walk can reach: each leaf's value inside the array and pointing at a
 * character start of the strings (a walk also checks each step against the array's end,
 * so a cut trie only answers "no rule"). */
static atn_status validate(const atn_charsmap *cm, const char *file, const char *path, atn_error *err) {
    size_t n = cm->nunits;
    uint8_t *seen = calloc(n, 1);
    size_t *stack = malloc(n * sizeof *stack);
    atn_status st = ATN_OK;
    size_t top = 0;
    if (!seen || !stack) {
        st = atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", file);
        goto done;
    }
    size_t root = u_offset(cm->units[0]);   /* may lie past the array: its children may not */
    if (root < n)
        seen[root] = 1;
    stack[top++] = root;
    while (top > 0) {
        size_t pos = stack[--top];
        for (unsigned c = 1; c < 256; c++) {
            size_t child = pos ^ c;
            if (child >= n)
                continue;
            uint32_t u = cm->units[child];
            if (u_label(u) != c)
                continue;
            size_t next = child ^ u_offset(u);
            if (next >= n) {
                if (u_has_leaf(u)) {
                    st = atn_error_set(err, ATN_E_FORMAT, "%s: %s: a charsmap rule's value lies outside the "
                                       "trie's %zu units", file, path, n);
                    goto done;
                }
                continue;
            }
            if (u_has_leaf(u)) {
                uint32_t v = u_value(cm->units[next]);
                if (v > cm->nstrings ||
                    (v < cm->nstrings && ((unsigned char)cm->strings[v] & 0xC0) == 0x80)) {
                    st = atn_error_set(err, ATN_E_FORMAT, "%s: %s: a charsmap rule points at byte %u, not a "
                                       "character of its %zu bytes of normalized strings", file, path, v,
                                       cm->nstrings);
                    goto done;
                }
            }
            if (!seen[next]) {
                seen[next] = 1;
                stack[top++] = next;
            }
        }
    }
done:
    free(seen);
    free(stack);
    return st;
}

atn_charsmap *atn_charsmap_from_base64(const char *b64, const char *file, const char *path,
                                       atn_error *err) {
    if (!file)
        file = "tokenizer.json";
    if (!path)
        path = "normalizer.precompiled_charsmap";
    if (!b64) {
        atn_error_set(err, ATN_E_FORMAT, "%s: %s: missing", file, path);
        return NULL;
    }
    size_t blen = 0, bad = 0;
    unsigned char *blob = b64_decode(b64, strlen(b64), &blen, &bad);
    if (!blob) {
        if (bad == (size_t)-1)
            atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", file);
        else
            atn_error_set(err, ATN_E_FORMAT, "%s: %s: not base64 (at character %zu)", file, path, bad);
        return NULL;
    }
    atn_charsmap *cm = calloc(1, sizeof *cm);
    if (!cm) {
        free(blob);
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", file);
        return NULL;
    }
    if (blen < 4) {
        atn_error_set(err, ATN_E_FORMAT, "%s: %s: a charsmap of %zu bytes, shorter than its 4-byte header",
                      file, path, blen);
        goto fail;
    }
    uint32_t trie_bytes = (uint32_t)blob[0] | (uint32_t)blob[1] << 8 | (uint32_t)blob[2] << 16 |
                          (uint32_t)blob[3] << 24;
    size_t nunits = trie_bytes / 4;
    if (nunits > (blen - 4) / 4) {
        atn_error_set(err, ATN_E_FORMAT, "%s: %s: the charsmap's trie of %u bytes is longer than the %zu "
                      "bytes after its header", file, path, trie_bytes, blen - 4);
        goto fail;
    }
    if (nunits == 0) {
        atn_error_set(err, ATN_E_FORMAT, "%s: %s: the charsmap's trie is empty", file, path);
        goto fail;
    }
    cm->nunits = nunits;
    cm->units = malloc(nunits * sizeof *cm->units);
    cm->nstrings = blen - 4 - nunits * 4;
    cm->strings = malloc(cm->nstrings + 1);
    if (!cm->units || !cm->strings) {
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", file);
        goto fail;
    }
    for (size_t i = 0; i < nunits; i++) {
        const unsigned char *p = blob + 4 + 4 * i;
        cm->units[i] = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    }
    memcpy(cm->strings, blob + 4 + nunits * 4, cm->nstrings);
    cm->strings[cm->nstrings] = '\0';
    size_t u8 = atn_utf8_check((const unsigned char *)cm->strings, cm->nstrings);
    if (u8 != cm->nstrings) {
        atn_error_set(err, ATN_E_FORMAT, "%s: %s: the charsmap's normalized strings are not UTF-8 (byte %zu)",
                      file, path, u8);
        goto fail;
    }
    if (validate(cm, file, path, err) != ATN_OK)
        goto fail;
    free(blob);
    return cm;
fail:
    free(blob);
    atn_charsmap_free(cm);
    return NULL;
}

void atn_charsmap_free(atn_charsmap *cm) {
    if (!cm)
        return;
    free(cm->units);
    free(cm->strings);
    free(cm);
}

/* The replacement of chunk (its first, shortest matching prefix), as [*r, *r + *rl) of the
 * strings; false when no prefix matches. */
static bool transform(const atn_charsmap *cm, const unsigned char *chunk, size_t len, size_t *r,
                      size_t *rl) {
    size_t n = cm->nunits, pos = u_offset(cm->units[0]);
    for (size_t i = 0; i < len; i++) {
        unsigned c = chunk[i];
        if (c == 0)
            break;
        pos ^= c;
        if (pos >= n)
            return false;
        uint32_t u = cm->units[pos];
        if (u_label(u) != c)
            return false;
        pos ^= u_offset(u);
        if (pos >= n)
            return false;
        if (u_has_leaf(u)) {
            size_t v = u_value(cm->units[pos]);
            if (v > cm->nstrings)   /* validated; stay safe anyway */
                return false;
            const char *end = memchr(cm->strings + v, '\0', cm->nstrings - v);
            *r = v;
            *rl = end ? (size_t)(end - (cm->strings + v)) : cm->nstrings - v;
            return true;
        }
    }
    return false;
}

/* One output character: its bytes (in the input or the strings) and the Rust "changes". */
typedef struct tchar {
    const char *p;
    int32_t len;
    int32_t change;
} tchar;

typedef struct tlist {
    tchar *v;
    size_t n, cap;
} tlist;

static bool tl_push(tlist *t, const char *p, int32_t len, int32_t change) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        tchar *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return false;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = (tchar){p, len, change};
    return true;
}

static size_t count_chars(const unsigned char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; n++) {
        uint32_t cp;
        i += (size_t)next_char(s, len, i, &cp);
    }
    return n;
}

/* precompiled.rs replace(): the new characters with change 0; when there are more of them
 * than old ones the last (new - old) get 1; when fewer, the last character pushed so far
 * (possibly an earlier one) gets the difference added. */
static bool replace(tlist *t, const unsigned char *old, size_t old_len, const char *nw, size_t new_len) {
    long old_count = (long)count_chars(old, old_len);
    long new_count = 0;
    for (size_t i = 0; i < new_len;) {
        uint32_t cp;
        int n = next_char((const unsigned char *)nw, new_len, i, &cp);
        if (!tl_push(t, nw + i, n, 0))
            return false;
        i += (size_t)n;
        new_count++;
    }
    long diff = new_count - old_count;
    if (diff > 0) {
        for (long k = 0; k < diff; k++)
            t->v[t->n - 1 - (size_t)k].change = 1;
    } else if (diff < 0 && t->n > 0) {
        t->v[t->n - 1].change += (int32_t)diff;
    }
    return true;
}

atn_status atn_charsmap_normalize(const atn_charsmap *cm, const char *in, size_t len,
                                  char **out, size_t *out_len, int32_t **src_start,
                                  int32_t **src_end, atn_error *err) {
    *out = NULL;
    *src_start = *src_end = NULL;
    *out_len = 0;
    if (len > INT32_MAX / 8)
        return atn_error_set(err, ATN_E_NOMEM, "charsmap: a text of %zu bytes is too long", len);
    const unsigned char *s = (const unsigned char *)in;
    tlist t = {0};
    bool modified = false;
    for (size_t g = 0; g < len;) {
        size_t ge = grapheme_end(s, len, g);
        size_t r, rl;
        if (ge - g < 6 && transform(cm, s + g, ge - g, &r, &rl)) {
            modified = true;
            if (!replace(&t, s + g, ge - g, cm->strings + r, rl))
                goto nomem;
        } else {
            for (size_t i = g; i < ge;) {
                uint32_t cp;
                int n = next_char(s, len, i, &cp);
                if (transform(cm, s + i, (size_t)n, &r, &rl)) {
                    modified = true;
                    if (!replace(&t, s + i, (size_t)n, cm->strings + r, rl))
                        goto nomem;
                } else if (!tl_push(&t, in + i, n, 0)) {
                    goto nomem;
                }
                i += (size_t)n;
            }
        }
        g = ge;
    }
    size_t total = 0;
    if (modified) {
        for (size_t k = 0; k < t.n; k++)
            total += (size_t)t.v[k].len;
    } else {
        total = len;
    }
    *out = malloc(total + 1);
    *src_start = malloc((total ? total : 1) * sizeof **src_start);
    *src_end = malloc((total ? total : 1) * sizeof **src_end);
    if (!*out || !*src_start || !*src_end)
        goto nomem;
    if (!modified) {
        memcpy(*out, in, len);
        for (size_t i = 0; i < len;) {
            uint32_t cp;
            int n = next_char(s, len, i, &cp);
            for (int k = 0; k < n; k++) {
                (*src_start)[i + (size_t)k] = (int32_t)i;
                (*src_end)[i + (size_t)k] = (int32_t)(i + (size_t)n);
            }
            i += (size_t)n;
        }
    } else {
        /* NormalizedString::transform_range over the original characters */
        size_t offset = 0, o = 0;
        for (size_t k = 0; k < t.n; k++) {
            int32_t a = (int32_t)len, b = (int32_t)len;   /* past the end: an empty span there */
            size_t at = t.v[k].change > 0 ? (offset >= 1 ? offset - 1 : (size_t)-1) : offset;
            if (at == (size_t)-1) {
                a = b = 0;
            } else if (at < len) {
                size_t cs = at;   /* the span of the character holding byte at */
                while (cs > 0 && (s[cs] & 0xC0) == 0x80 && at - cs < 3)
                    cs--;
                uint32_t cp;
                int n = next_char(s, len, cs, &cp);
                if (cs + (size_t)n <= at) {   /* not UTF-8 there: the byte alone */
                    cs = at;
                    n = 1;
                }
                a = (int32_t)cs;
                b = (int32_t)(cs + (size_t)n);
            }
            if (t.v[k].change <= 0 && offset < len) {   /* the character it replaces */
                uint32_t cp;
                offset += (size_t)next_char(s, len, offset, &cp);
            }
            for (int32_t rm = t.v[k].change < 0 ? -t.v[k].change : 0; rm > 0 && offset < len; rm--) {
                uint32_t cp;
                offset += (size_t)next_char(s, len, offset, &cp);
            }
            memcpy(*out + o, t.v[k].p, (size_t)t.v[k].len);
            for (int32_t q = 0; q < t.v[k].len; q++) {
                (*src_start)[o + (size_t)q] = a;
                (*src_end)[o + (size_t)q] = b;
            }
            o += (size_t)t.v[k].len;
        }
    }
    (*out)[total] = '\0';
    *out_len = total;
    free(t.v);
    return ATN_OK;
nomem:
    free(t.v);
    free(*out);
    free(*src_start);
    free(*src_end);
    *out = NULL;
    *src_start = *src_end = NULL;
    return atn_error_set(err, ATN_E_NOMEM, "charsmap: out of memory");
}

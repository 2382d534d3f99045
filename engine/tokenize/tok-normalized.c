/* The text a tokenizer.json pipeline works on, as the Rust tokenizers library holds it
 * (normalizer.rs NormalizedString, pattern.rs Pattern), and the character classes it
 * needs.  The files of the pipeline are listed in tok-pipeline-private.h.
 *
 * Text is held as characters that each carry the byte span of the original text they are
 * aligned to (atn_uchar), which is the library's alignment table (it keeps one pair per
 * normalized byte, all equal within a character).  Every change goes through
 * atn_tp_transform(), the library's NormalizedString::transform_range: a new character
 * either replaces old ones (taking the first one's alignment) or is inserted (taking the
 * alignment of the old character before it).  A token's span is the first character's
 * start to the last one's end, as expand_alignments does.
 *
 * Regular expressions are PCRE2's (UTF + UCP), where the library uses Oniguruma. */
#include "tokenize/tok-pipeline-private.h"

#include <stdlib.h>

/* ---- characters ------------------------------------------------------------------- */

/* Rust's char::is_whitespace (the White_Space property). */
bool atn_tp_is_space(uint32_t c) {
    if (c < 0x80)
        return c == ' ' || (c >= 9 && c <= 13);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

static pcre2_code *cls_re[N_CLS];
static pthread_once_t cls_once = PTHREAD_ONCE_INIT;

static void cls_init(void) {
    static const char *const pats[N_CLS] = {"\\p{M}", "[\\p{L}\\p{Nl}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}]",
                                            "\\p{Cn}"};
    for (int i = 0; i < N_CLS; i++) {
        int e;
        PCRE2_SIZE off;
        cls_re[i] = pcre2_compile((PCRE2_SPTR)pats[i], PCRE2_ZERO_TERMINATED,
                                  PCRE2_UTF | PCRE2_UCP, &e, &off, NULL);
    }
}

bool atn_tp_cls_is(int which, uint32_t cp) {
    pthread_once(&cls_once, cls_init);
    if (!cls_re[which])
        return false;
    char b[4];
    int n = atn_utf8_encode(cp, b);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md)
        return false;
    int rc = pcre2_match(cls_re[which], (PCRE2_SPTR)b, (PCRE2_SIZE)n, 0,
                         PCRE2_ANCHORED | PCRE2_NO_UTF_CHECK, md, NULL);
    pcre2_match_data_free(md);
    return rc > 0;
}

/* ---- text with alignments ------------------------------------------------------------ */

bool atn_tp_ns_reserve(nstr *s, size_t extra) {
    if (s->n + extra <= s->cap)
        return true;
    size_t cap = s->cap ? s->cap : 16;
    while (cap < s->n + extra)
        cap *= 2;
    atn_uchar *v = realloc(s->v, cap * sizeof *v);
    if (!v)
        return false;
    s->v = v;
    s->cap = cap;
    return true;
}

bool atn_tp_tb_push(tbuf *t, uint32_t cp, int32_t consume) {
    if (t->limit && t->n >= t->limit) {
        t->over = true;
        return false;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        titem *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return false;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = (titem){cp, consume};
    return true;
}

/* An item that only removes old characters (its consume count), writing none. */
#define SKIP UINT32_MAX

bool atn_tp_tb_skip(tbuf *t, int32_t n) {
    return n <= 0 || atn_tp_tb_push(t, SKIP, n);
}

/* Rewrites s from the items, after skipping `initial` old characters: the library's
 * transform(dest, initial_offset). */
bool atn_tp_transform(nstr *s, tbuf *t, size_t initial) {
    size_t need = t->n ? t->n : 1;
    if (t->spare_cap < need) {
        free(t->spare);
        t->spare_cap = need < 64 ? 64 : need;
        t->spare = malloc(t->spare_cap * sizeof *t->spare);
        if (!t->spare) {
            t->spare_cap = 0;
            return false;
        }
    }
    atn_uchar *nv = t->spare;
    size_t nv_cap = t->spare_cap;
    size_t p = initial, k = 0;
    for (size_t i = 0; i < t->n; i++) {
        int32_t a, b;
        if (t->v[i].cp == SKIP) {
            p += (size_t)t->v[i].consume;
            continue;
        }
        if (t->v[i].consume == 0) {
            if (p < 1) {
                a = b = s->shift;
            } else {
                a = s->v[p - 1].start;
                b = s->v[p - 1].end;
            }
        } else {
            size_t q = p < s->n ? p : (s->n ? s->n - 1 : 0);
            a = s->n ? s->v[q].start : s->shift;
            b = s->n ? s->v[q].end : s->shift;
            p += (size_t)t->v[i].consume;
        }
        nv[k++] = (atn_uchar){t->v[i].cp, a, b};
    }
    t->spare = s->v;
    t->spare_cap = s->v ? s->cap : 0;
    s->v = nv;
    s->n = k;
    s->cap = nv_cap;
    return true;
}

/* Keeps the characters keep() accepts (NormalizedString::filter). */
bool atn_tp_ns_filter(nstr *s, bool (*keep)(uint32_t, const void *), const void *ctx, tbuf *t) {
    t->n = 0;
    size_t initial = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (keep(s->v[i].cp, ctx)) {
            if (!atn_tp_tb_push(t, s->v[i].cp, 1))
                return false;
        } else if (t->n) {
            t->v[t->n - 1].consume++;
        } else {
            initial++;
        }
    }
    return atn_tp_transform(s, t, initial);
}

bool atn_tp_ns_utf8(const nstr *s, u8buf *u) {
    if (u->cap_b < 4 * s->n + 1) {
        char *b = realloc(u->b, 4 * s->n + 1);
        if (!b)
            return false;
        u->b = b;
        u->cap_b = 4 * s->n + 1;
    }
    if (u->cap_o < s->n + 1) {
        int32_t *o = realloc(u->offs, (s->n + 1) * sizeof *o);
        if (!o)
            return false;
        u->offs = o;
        u->cap_o = s->n + 1;
    }
    size_t len = 0;
    for (size_t i = 0; i < s->n; i++) {
        u->offs[i] = (int32_t)len;
        len += (size_t)atn_utf8_encode(s->v[i].cp, u->b + len);
    }
    u->offs[s->n] = (int32_t)len;
    u->b[len] = '\0';
    u->len = len;
    return true;
}

/* The character index of byte offset off (a character boundary). */
/* The index of the character holding byte off (the last one starting at or before it). */
size_t atn_tp_char_holding(const u8buf *u, size_t n_chars, int32_t off) {
    size_t lo = 0, hi = n_chars;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (u->offs[mid] <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : 0;
}

size_t atn_tp_char_at(const u8buf *u, size_t n_chars, int32_t off) {
    size_t lo = 0, hi = n_chars;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (u->offs[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- patterns ----------------------------------------------------------------------- */

bool atn_tp_mb_push(mbuf *m, size_t a, size_t b, bool match) {
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 32;
        mrange *v = realloc(m->v, cap * sizeof *v);
        if (!v)
            return false;
        m->v = v;
        m->cap = cap;
    }
    m->v[m->n++] = (mrange){a, b, match};
    return true;
}

/* Pattern::find_matches for a regex, in characters of s (u its UTF-8). */
bool atn_tp_re_find(const pcre2_code *re, const nstr *s, const u8buf *u, mbuf *m,
                    pcre2_match_data **mdp) {
    m->n = 0;
    if (s->n == 0)
        return atn_tp_mb_push(m, 0, 0, false);
    if (!re)
        return atn_tp_mb_push(m, 0, s->n, false);
    if (!*mdp && !(*mdp = pcre2_match_data_create(1, NULL)))
        return false;
    pcre2_match_data *md = *mdp;
    size_t prev = 0, pos = 0;
    bool ok = true;
    while (pos <= u->len) {
        int rc = pcre2_match(re, (PCRE2_SPTR)u->b, u->len, pos, PCRE2_NO_UTF_CHECK, md, NULL);
        if (rc < 0)   /* no match (or a match limit: the rest is then one piece) */
            break;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t bs = ov[0], be = ov[1];
        size_t ca = atn_tp_char_at(u, s->n, (int32_t)bs), cb = atn_tp_char_at(u, s->n, (int32_t)be);
        if (prev != ca)
            ok &= atn_tp_mb_push(m, prev, ca, false);
        ok &= atn_tp_mb_push(m, ca, cb, true);
        prev = cb;
        if (be == bs) {   /* empty match: step over one character */
            if (be >= u->len)
                break;
            pos = (size_t)u->offs[cb + 1];
        } else {
            pos = be;
        }
    }
    if (ok && prev != s->n)
        ok &= atn_tp_mb_push(m, prev, s->n, false);
    return ok;
}

/* Pattern::find_matches for a character predicate: each accepted character alone. */
bool atn_tp_fn_find(bool (*pred)(uint32_t), const nstr *s, mbuf *m) {
    m->n = 0;
    if (s->n == 0)
        return atn_tp_mb_push(m, 0, 0, false);
    size_t last = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (pred(s->v[i].cp)) {
            if (last < i && !atn_tp_mb_push(m, last, i, false))
                return false;
            if (!atn_tp_mb_push(m, i, i + 1, true))
                return false;
            last = i + 1;
        }
    }
    if (last != s->n && !atn_tp_mb_push(m, last, s->n, false))
        return false;
    return true;
}


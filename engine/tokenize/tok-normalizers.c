/* The normalizers of a tokenizer.json pipeline, as the Rust tokenizers library's
 * normalizers module runs them: BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase,
 * StripAccents, Replace, Prepend, Strip, Precompiled (tok-charsmap.c) and Sequence.  Each
 * changes the text through atn_tp_transform (tok-normalized.c), so every character keeps
 * its span of the original.  Reading them from the file is tok-pipeline-json.c's. */
#include "tokenize/tok-pipeline-private.h"
#include "core/cancel.h"

#include "core/memlimit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What StripAccents drops: non-spacing marks (Mn), as the library's output shows
 * (Devanagari's spacing vowel signs, Mc, stay). */
static bool is_mark(uint32_t cp) {
    return cp >= 0x300 && atn_uc_class_of(cp) == ATN_UC_MN;
}

/* ---- normalizing ------------------------------------------------------------------ */

/* BertNormalizer's clean_text: the library's is_control is Cc | Cf | Co | Cs (unicode_categories'
 * is_other), so an unassigned code point or a noncharacter (Cn: U+FFFF, U+0378) stays and
 * its word becomes [UNK].  The vocab.txt path (wordpiece.c) follows Python's BertTokenizer,
 * whose unicodedata test drops Cn too. */
static bool keep_clean(uint32_t c, const void *ctx) {
    (void)ctx;
    if (c == 0 || c == 0xFFFD)
        return false;
    if (c == '\t' || c == '\n' || c == '\r')
        return true;
    if (c < 0x80)
        return !(c < 0x20 || c == 0x7F);
    return atn_uc_class_of(c) != ATN_UC_CONTROL || atn_tp_cls_is(CLS_UNASSIGNED, c);
}

static bool keep_not_mark(uint32_t c, const void *ctx) {
    (void)ctx;
    return !is_mark(c);
}

/* StripAccents drops every combining mark (M*: Mn, Mc, Me), BertNormalizer only Mn. */
static bool keep_not_any_mark(uint32_t c, const void *ctx) {
    (void)ctx;
    return c < 0x300 || !atn_tp_cls_is(CLS_MARK, c);
}

/* Replaces every character by one (map). */
static bool ns_map_space(nstr *s, tbuf *t) {
    t->n = 0;
    for (size_t i = 0; i < s->n; i++) {
        uint32_t c = s->v[i].cp;
        if (c == '\t' || c == '\n' || c == '\r' || atn_tp_is_space(c))
            c = ' ';
        if (!atn_tp_tb_push(t, c, 1))
            return false;
    }
    return atn_tp_transform(s, t, 0);
}

static bool ns_lower(nstr *s, tbuf *t) {
    t->n = 0;
    for (size_t i = 0; i < s->n; i++) {
        uint32_t out[ATN_UC_MAX_LOWER];
        int k = atn_uc_lower(s->v[i].cp, out);
        for (int m = 0; m < k; m++)
            if (!atn_tp_tb_push(t, out[m], m == 0))
                return false;
    }
    return atn_tp_transform(s, t, 0);
}

/* Canonical decomposition and ordering; the items keep who consumes what. */
static bool nfd_items(const nstr *s, tbuf *t, bool compat) {
    t->n = 0;
    for (size_t i = 0; i < s->n; i++) {
        uint32_t out[ATN_UC_MAX_COMPAT];
        int k = compat ? atn_uc_decompose_compat(s->v[i].cp, out) : atn_uc_decompose(s->v[i].cp, out);
        for (int m = 0; m < k; m++)
            if (!atn_tp_tb_push(t, out[m], m == 0))
                return false;
    }
    for (size_t i = 1; i < t->n; i++) {
        int c = atn_uc_ccc(t->v[i].cp);
        if (c == 0)
            continue;
        titem x = t->v[i];
        size_t k = i;
        while (k > 0 && atn_uc_ccc(t->v[k - 1].cp) > c) {
            t->v[k] = t->v[k - 1];
            k--;
        }
        t->v[k] = x;
    }
    /* the consumption follows the position, not the character (transform reads it in
       order): re-deal the consume counts so that each old character is consumed once and
       in order, by the first item of its decomposition's position */
    return true;
}

static bool ns_nfd(nstr *s, tbuf *t, bool compat) {
    return nfd_items(s, t, compat) && atn_tp_transform(s, t, 0);
}

static bool ns_nfc(nstr *s, tbuf *t, bool compat) {
    bool simple = true;
    for (size_t i = 0; i < s->n && simple; i++)
        simple = s->v[i].cp < (compat ? 0xA0 : 0x300);
    if (simple)
        return true;
    if (!nfd_items(s, t, compat))
        return false;
    /* compose; a removed character's consumption goes to the item before it */
    titem *v = t->v;
    size_t n = t->n;
    if (n == 0)
        return atn_tp_transform(s, t, 0);
    size_t starter = 0, out = 1, initial = 0;
    int last_class = atn_uc_ccc(v[0].cp);
    bool have_starter = last_class == 0;
    if (!have_starter)
        last_class = 256;
    for (size_t i = 1; i < n; i++) {
        titem c = v[i];
        int cls = atn_uc_ccc(c.cp);
        uint32_t comp = have_starter && (last_class < cls || last_class == 0)
                            ? atn_uc_compose(v[starter].cp, c.cp) : 0;
        if (comp) {
            v[starter].cp = comp;
            v[out - 1].consume += c.consume;
            continue;
        }
        if (cls == 0) {
            starter = out;
            have_starter = true;
        }
        last_class = cls;
        v[out++] = c;
    }
    t->n = out;
    return atn_tp_transform(s, t, initial);
}

static bool ns_replace(nstr *s, const normalizer *nz, work *w) {
    if (!atn_tp_ns_utf8(s, &w->u) || !atn_tp_re_find(nz->pat.re, s, &w->u, &w->m, &w->md))
        return false;
    tbuf *t = &w->t;
    t->n = 0;
    size_t initial = 0;
    const char *c = nz->content;
    for (size_t k = 0; k < w->m.n; k++) {
        if (atn_cancel_poll()) {
            w->cancelled = true;
            return false;
        }
        const mrange *r = &w->m.v[k];
        if (!r->match) {
            for (size_t i = r->a; i < r->b; i++)
                if (!atn_tp_tb_push(t, s->v[i].cp, 1))
                    return false;
            continue;
        }
        if (!atn_tp_tb_skip(t, (int32_t)(r->b - r->a)))
            return false;
        for (size_t i = 0; c[i];) {
            uint32_t cp;
            int l = atn_utf8_decode((const unsigned char *)c + i, strlen(c + i), &cp);
            i += (size_t)l;
            if (!atn_tp_tb_push(t, cp, 0))
                return false;
        }
    }
    return atn_tp_transform(s, t, initial);
}

/* Prepends text (NormalizedString::prepend): the first new character replaces the old
 * first one, which comes back as an insertion. */
bool atn_tp_ns_prepend(nstr *s, const char *text, tbuf *t) {
    if (s->n == 0)
        return true;
    t->n = 0;
    bool first = true;
    for (size_t i = 0; text[i];) {
        uint32_t cp;
        int l = atn_utf8_decode((const unsigned char *)text + i, strlen(text + i), &cp);
        i += (size_t)l;
        if (!atn_tp_tb_push(t, cp, first))
            return false;
        first = false;
    }
    if (!atn_tp_tb_push(t, s->v[0].cp, 0))
        return false;
    for (size_t i = 1; i < s->n; i++)
        if (!atn_tp_tb_push(t, s->v[i].cp, 1))
            return false;
    return atn_tp_transform(s, t, 0);
}

static bool ns_strip(nstr *s, bool left, bool right, tbuf *t) {
    size_t lead = 0, trail = 0;
    while (left && lead < s->n && atn_tp_is_space(s->v[lead].cp))
        lead++;
    while (right && trail < s->n - lead && atn_tp_is_space(s->v[s->n - 1 - trail].cp))
        trail++;
    if (!lead && !trail)
        return true;
    t->n = 0;
    for (size_t i = lead; i + trail < s->n; i++)
        if (!atn_tp_tb_push(t, s->v[i].cp, i + trail + 1 == s->n ? 1 + (int32_t)trail : 1))
            return false;
    return atn_tp_transform(s, t, lead);
}

atn_status atn_tp_normalize(const normalizer *nz, nstr *s, work *w) {
    bool ok = true;
    tbuf *t = &w->t;
    if (atn_cancel_poll())
        return atn_cancel_error(w->err, "normalizing the text");
    switch (nz->type) {
    case N_BERT:
        if (nz->clean_text)
            ok = atn_tp_ns_filter(s, keep_clean, NULL, t) && ns_map_space(s, t);
        if (ok && nz->chinese) {
            bool any = false;
            for (size_t i = 0; i < s->n && !any; i++)
                any = atn_uc_is_cjk_ideograph(s->v[i].cp);
            if (any) {
                t->n = 0;
                for (size_t i = 0; i < s->n && ok; i++) {
                    uint32_t c = s->v[i].cp;
                    if (atn_uc_is_cjk_ideograph(c))
                        ok = atn_tp_tb_push(t, ' ', 1) && atn_tp_tb_push(t, c, 0) &&
                             atn_tp_tb_push(t, ' ', 0);
                    else
                        ok = atn_tp_tb_push(t, c, 1);
                }
                ok = ok && atn_tp_transform(s, t, 0);
            }
        }
        if (ok && (nz->strip_accents < 0 ? nz->lowercase : nz->strip_accents))
            ok = ns_nfd(s, t, false) && atn_tp_ns_filter(s, keep_not_mark, NULL, t);
        if (ok && nz->lowercase)
            ok = ns_lower(s, t);
        break;
    case N_NFC:
    case N_NFKC:
        ok = ns_nfc(s, t, nz->type == N_NFKC);
        break;
    case N_NFD:
    case N_NFKD:
        ok = ns_nfd(s, t, nz->type == N_NFKD);
        break;
    case N_LOWER:
        ok = ns_lower(s, t);
        break;
    case N_STRIP_ACCENTS:
        ok = atn_tp_ns_filter(s, keep_not_any_mark, NULL, t);
        break;
    case N_REPLACE:
        ok = ns_replace(s, nz, w);
        break;
    case N_PREPEND:
        ok = atn_tp_ns_prepend(s, nz->content, t);
        break;
    case N_STRIP:
        ok = ns_strip(s, nz->strip_left, nz->strip_right, t);
        break;
    case N_PRECOMPILED: {
        /* the charsmap works on bytes: map its byte alignment back to characters */
        if (!atn_tp_ns_utf8(s, &w->u))
            return atn_error_set(w->err, ATN_E_NOMEM, "out of memory");
        char *out = NULL;
        size_t out_len = 0;
        int32_t *ss = NULL, *se = NULL;
        atn_status st = atn_charsmap_normalize(nz->charsmap, w->u.b, w->u.len, &out, &out_len,
                                               &ss, &se, w->err);
        if (st)
            return st;
        nstr r = {.shift = s->shift, .added = -1};
        ok = atn_tp_ns_reserve(&r, out_len + 1);
        for (size_t i = 0; ok && i < out_len;) {
            uint32_t cp;
            int l = atn_utf8_decode((const unsigned char *)out + i, out_len - i, &cp);
            if (!l) {
                l = 1;
                cp = 0xFFFD;
            }
            size_t a = atn_tp_char_at(&w->u, s->n, ss[i]);
            int32_t e0 = se[i + (size_t)l - 1];
            size_t b = atn_tp_char_at(&w->u, s->n, e0);
            int32_t start = a < s->n ? s->v[a].start : s->shift;
            int32_t end = b > 0 && b <= s->n ? s->v[b - 1].end : start;
            r.v[r.n++] = (atn_uchar){cp, start, end};
            i += (size_t)l;
        }
        free(out);
        free(ss);
        free(se);
        if (ok) {
            free(s->v);
            s->v = r.v;
            s->n = r.n;
            s->cap = r.cap;
        } else {
            free(r.v);
        }
        break;
    }
    case N_SEQUENCE:
        for (int i = 0; i < nz->n_kids; i++) {
            atn_status st = atn_tp_normalize(&nz->kids[i], s, w);
            if (st)
                return st;
        }
        break;
    default:
        break;
    }
    if (ok && t->limit && s->n > t->limit) {   /* a block transform (NFD, the charsmap) grew it */
        ok = false;
        t->over = true;
    }
    if (!ok && w->cancelled)
        return atn_cancel_error(w->err, "normalizing the text");
    if (!ok && t->over)
        return atn_error_set(w->err, ATN_E_INVALID, "the tokenizer's normalizer makes more than %zu characters of "
                             "a piece (at most %d times its length plus %d, within the memory budget): refused",
                             t->limit, (int)ATN_TP_NORM_GROWTH, (int)ATN_TP_NORM_SLACK);
    if (!ok)
        return atn_error_set(w->err, ATN_E_NOMEM, "out of memory");
    return ATN_OK;
}

size_t atn_tp_normalize_limit(size_t n_chars, work *w) {
    size_t limit = n_chars <= (SIZE_MAX - ATN_TP_NORM_SLACK) / ATN_TP_NORM_GROWTH
                       ? n_chars * ATN_TP_NORM_GROWTH + ATN_TP_NORM_SLACK
                       : SIZE_MAX;
    if (!w->norm_budget) {   /* once per encoding: each character costs about 64 bytes in the buffers */
        atn_memlimit m;
        atn_memlimit_probe(NULL, NULL, &m);
        w->norm_budget = m.bytes / 64 > 0 ? m.bytes / 64 : 1;
    }
    return limit < w->norm_budget ? limit : w->norm_budget;
}

atn_status atn_tp_normalize_bounded(const normalizer *nz, nstr *s, work *w) {
    w->t.limit = atn_tp_normalize_limit(s->n, w);
    w->t.over = false;
    atn_status st = atn_tp_normalize(nz, s, w);
    w->t.limit = 0;
    w->t.over = false;
    return st;
}

static void normalizer_clear(normalizer *n) {
    pcre2_code_free(n->pat.re);
    free(n->content);
    atn_charsmap_free(n->charsmap);
    for (int i = 0; i < n->n_kids; i++)
        normalizer_clear(&n->kids[i]);
    free(n->kids);
}

void atn_tp_free_normalizer(normalizer *n) {
    if (n) {
        normalizer_clear(n);
        free(n);
    }
}

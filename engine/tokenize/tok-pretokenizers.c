/* The pre-tokenizers of a tokenizer.json pipeline, as the Rust tokenizers library's
 * pre_tokenizers module runs them (BertPreTokenizer, ByteLevel, Metaspace, Whitespace,
 * WhitespaceSplit, Punctuation, Digits, Split, Sequence), and the splits they cut the text
 * into (PreTokenizedString, NormalizedString::split with its SplitDelimiterBehavior).
 * Reading them from the file is tok-pipeline-json.c's. */
#include "tokenize/tok-pipeline-private.h"
#include "core/cancel.h"

#include <stdlib.h>
#include <string.h>

/* ---- splits ----------------------------------------------------------------------- */

void atn_tp_splits_free(splits *sp) {
    for (size_t i = 0; i < sp->n; i++)
        free(sp->v[i].v);
    free(sp->v);
    sp->v = NULL;
    sp->n = sp->cap = 0;
}

/* Appends a copy of s[a, b) (dropped when empty, as PreTokenizedString::split drops
 * empty pieces). */
bool atn_tp_splits_push_slice(splits *sp, const nstr *s, size_t a, size_t b, int32_t added) {
    if (b <= a)
        return true;
    if (sp->n == sp->cap) {
        size_t cap = sp->cap ? 2 * sp->cap : 16;
        nstr *v = realloc(sp->v, cap * sizeof *v);
        if (!v)
            return false;
        sp->v = v;
        sp->cap = cap;
    }
    nstr *d = &sp->v[sp->n];
    memset(d, 0, sizeof *d);
    if (!atn_tp_ns_reserve(d, b - a))
        return false;
    memcpy(d->v, s->v + a, (b - a) * sizeof *d->v);
    d->n = b - a;
    d->shift = s->v[a].start;
    d->added = added;
    sp->n++;
    return true;
}

/* NormalizedString::split with a behaviour, appending the pieces to out. */
static bool split_by(const nstr *s, const mbuf *m, int behavior, bool invert, splits *out) {
    /* (a, b, remove) after merging */
    size_t n = m->n;
    mrange *r = malloc((n ? n : 1) * sizeof *r);
    if (!r)
        return false;
    size_t k = 0;
    bool prev = false;
    if (behavior == B_MERGED_NEXT) {
        for (size_t ii = n; ii-- > 0;) {
            mrange x = m->v[ii];
            if (invert)
                x.match = !x.match;
            if (x.match && !prev && k) {
                r[k - 1].a = x.a;
            } else {
                r[k++] = (mrange){x.a, x.b, false};
            }
            prev = x.match;
        }
        for (size_t i = 0; i < k / 2; i++) {
            mrange t = r[i];
            r[i] = r[k - 1 - i];
            r[k - 1 - i] = t;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            mrange x = m->v[i];
            if (invert)
                x.match = !x.match;
            switch (behavior) {
            case B_ISOLATED:
                r[k++] = (mrange){x.a, x.b, false};
                break;
            case B_REMOVED:
                r[k++] = (mrange){x.a, x.b, x.match};
                break;
            case B_CONTIGUOUS:
                if (x.match == prev && k)
                    r[k - 1].b = x.b;
                else
                    r[k++] = (mrange){x.a, x.b, false};
                break;
            case B_MERGED_PREV:
                if (x.match && !prev && k)
                    r[k - 1].b = x.b;
                else
                    r[k++] = (mrange){x.a, x.b, false};
                break;
            }
            prev = x.match;
        }
    }
    bool ok = true;
    for (size_t i = 0; i < k && ok; i++)
        if (!r[i].match)
            ok = atn_tp_splits_push_slice(out, s, r[i].a, r[i].b, -1);
    free(r);
    return ok;
}

static bool pred_space(uint32_t c) {
    return atn_tp_is_space(c);
}

static bool pred_punct(uint32_t c) {
    return atn_uc_is_bert_punct(c);
}

/* One pre-tokenizer over every piece of sp that is not an added token. */
atn_status atn_tp_pre_tokenize(const pretok *pt, splits *sp, work *w) {
    if (pt->type == P_SEQUENCE) {
        for (int i = 0; i < pt->n_kids; i++) {
            atn_status st = atn_tp_pre_tokenize(&pt->kids[i], sp, w);
            if (st)
                return st;
        }
        return ATN_OK;
    }
    splits out = {0};
    bool ok = true;
    bool cancelled = false;
    for (size_t i = 0; i < sp->n && ok; i++) {
        nstr *s = &sp->v[i];
        if (atn_cancel_poll()) {
            ok = false;
            cancelled = true;
            break;
        }
        if (s->added >= 0) {
            ok = atn_tp_splits_push_slice(&out, s, 0, s->n, s->added);
            if (ok)
                out.v[out.n - 1].shift = s->shift;
            continue;
        }
        switch (pt->type) {
        case P_BERT:
            /* split(is_whitespace, Removed) then split(is_bert_punc, Isolated), in one
               pass: runs of other characters and each punctuation mark are kept */
            w->m.n = 0;
            for (size_t c = 0; c < s->n && ok;) {
                uint32_t cp = s->v[c].cp;
                size_t e = c + 1;
                if (atn_tp_is_space(cp)) {
                    ok = atn_tp_mb_push(&w->m, c, e, true);
                } else if (atn_uc_is_bert_punct(cp)) {
                    ok = atn_tp_mb_push(&w->m, c, e, false);
                } else {
                    while (e < s->n && !atn_tp_is_space(s->v[e].cp) &&
                           !atn_uc_is_bert_punct(s->v[e].cp))
                        e++;
                    ok = atn_tp_mb_push(&w->m, c, e, false);
                }
                c = e;
            }
            ok = ok && split_by(s, &w->m, B_REMOVED, false, &out);
            break;
        case P_WHITESPACE_SPLIT:
            ok = atn_tp_fn_find(pred_space, s, &w->m) && split_by(s, &w->m, B_REMOVED, false, &out);
            break;
        case P_PUNCT:
            ok = atn_tp_fn_find(pred_punct, s, &w->m) &&
                 split_by(s, &w->m, pt->behavior, false, &out);
            break;
        case P_WHITESPACE:
            ok = atn_tp_ns_utf8(s, &w->u) && atn_tp_re_find(pt->pat.re, s, &w->u, &w->m, &w->md) &&
                 split_by(s, &w->m, B_REMOVED, true, &out);
            break;
        case P_DIGITS:
            ok = atn_tp_ns_utf8(s, &w->u) && atn_tp_re_find(pt->pat.re, s, &w->u, &w->m, &w->md) &&
                 split_by(s, &w->m, pt->individual_digits ? B_ISOLATED : B_CONTIGUOUS, false, &out);
            break;
        case P_SPLIT:
            ok = atn_tp_ns_utf8(s, &w->u) && atn_tp_re_find(pt->pat.re, s, &w->u, &w->m, &w->md) &&
                 split_by(s, &w->m, pt->behavior, pt->invert, &out);
            break;
        case P_BYTELEVEL: {
            if (pt->add_prefix_space && s->n && s->v[0].cp != ' ')
                ok = atn_tp_ns_prepend(s, " ", &w->t);
            size_t first = out.n;
            if (ok && pt->use_regex)
                ok = atn_tp_ns_utf8(s, &w->u) &&
                     atn_tp_re_find(pt->pat.re, s, &w->u, &w->m, &w->md) &&
                     split_by(s, &w->m, B_ISOLATED, false, &out);
            else if (ok)
                ok = atn_tp_splits_push_slice(&out, s, 0, s->n, -1);
            /* every piece to the byte-level alphabet */
            for (size_t k = first; k < out.n && ok; k++) {
                nstr *x = &out.v[k];
                tbuf *t = &w->t;
                t->n = 0;
                for (size_t c = 0; c < x->n && ok; c++) {
                    char b[4];
                    int l = atn_utf8_encode(x->v[c].cp, b);
                    for (int q = 0; q < l && ok; q++)
                        ok = atn_tp_tb_push(t, atn_byte_level_char((uint8_t)b[q]), q == 0);
                }
                ok = ok && atn_tp_transform(x, t, 0);
            }
            break;
        }
        case P_METASPACE: {
            /* ' ' -> replacement, each replaced character an insertion after the space */
            tbuf *t = &w->t;
            t->n = 0;
            size_t initial = 0;
            for (size_t c = 0; c < s->n && ok; c++) {
                if (s->v[c].cp == ' ') {
                    ok = atn_tp_tb_skip(t, 1) && atn_tp_tb_push(t, pt->replacement, 0);
                } else {
                    ok = atn_tp_tb_push(t, s->v[c].cp, 1);
                }
            }
            ok = ok && atn_tp_transform(s, t, initial);
            bool pre = ok && s->n && s->v[0].cp != pt->replacement &&
                       (pt->prepend_scheme == PREPEND_ALWAYS ||
                        (pt->prepend_scheme == PREPEND_FIRST && s->shift == 0));
            if (pre) {
                char rb[5];
                rb[atn_utf8_encode(pt->replacement, rb)] = '\0';
                ok = atn_tp_ns_prepend(s, rb, t);
            }
            if (ok && pt->split) {
                w->m.n = 0;
                size_t last = 0;
                for (size_t c = 0; c < s->n && ok; c++) {
                    if (s->v[c].cp == pt->replacement) {
                        if (last < c)
                            ok = atn_tp_mb_push(&w->m, last, c, false);
                        ok = ok && atn_tp_mb_push(&w->m, c, c + 1, true);
                        last = c + 1;
                    }
                }
                if (ok && (last != s->n || s->n == 0))
                    ok = atn_tp_mb_push(&w->m, last, s->n, false);
                ok = ok && split_by(s, &w->m, B_MERGED_NEXT, false, &out);
            } else if (ok) {
                ok = atn_tp_splits_push_slice(&out, s, 0, s->n, -1);
            }
            break;
        }
        }
    }
    if (!ok) {
        atn_tp_splits_free(&out);
        return cancelled ? atn_cancel_error(w->err, "pre-tokenizing the text")
                         : atn_error_set(w->err, ATN_E_NOMEM, "out of memory");
    }
    atn_tp_splits_free(sp);
    *sp = out;
    return ATN_OK;
}

static void pretok_clear(pretok *p) {
    pcre2_code_free(p->pat.re);
    for (int i = 0; i < p->n_kids; i++)
        pretok_clear(&p->kids[i]);
    free(p->kids);
}

void atn_tp_free_pretok(pretok *p) {
    if (p) {
        pretok_clear(p);
        free(p);
    }
}

/* A tokenizer.json pipeline, step for step what the Rust tokenizers library does
 * (tokenizer/mod.rs encode_single_sequence, added_vocabulary.rs extract_and_normalize):
 * added tokens split out, normalizer, pre-tokenizer, model, truncation, post-processor;
 * and the vocabulary side of the tokenizer interface (surfaces, roles).  The components
 * and the file reader are in the files tok-pipeline-private.h lists. */
#include "tokenize/tok-pipeline-private.h"
#include "core/cancel.h"

#include "tokenize/encoding.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_word_char(uint32_t cp) {
    if (cp == 0x200C || cp == 0x200D)
        return true;
    if (cp < 0x80)
        return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
               cp == '_';
    return atn_tp_cls_is(CLS_WORD, cp);
}

/* GPT-2's byte-level alphabet (tok-bpe.c): the byte a character of it stands for, or -1. */
static int pl_char_byte(uint32_t cp) {
    if (cp < 0x144)
        for (int b = 0; b < 256; b++)
            if (atn_byte_level_char((uint8_t)b) == cp)
                return b;
    return -1;
}


/* A copy of b[0, len) kept until work_free_texts; NULL when out of memory. */
static const char *work_keep_text(work *w, const char *b, size_t len) {
    if (w->n_texts == w->cap_texts) {
        size_t cap = w->cap_texts ? 2 * w->cap_texts : 16;
        char **v = realloc(w->texts, cap * sizeof *v);
        if (!v)
            return NULL;
        w->texts = v;
        w->cap_texts = cap;
    }
    char *t = malloc(len + 1);
    if (!t)
        return NULL;
    memcpy(t, b, len);
    t[len] = '\0';
    return w->texts[w->n_texts++] = t;
}

/* ---- added tokens ----------------------------------------------------------------- */

static bool ends_with_word(const nstr *s, size_t at) {
    return at > 0 && is_word_char(s->v[at - 1].cp);
}

static bool starts_with_word(const nstr *s, size_t at) {
    return at < s->n && is_word_char(s->v[at].cp);
}

static int32_t trie_child(const added_trie *t, int32_t node, uint8_t byte) {
    if (node < 0)
        return t->root[byte];
    for (int32_t c = t->v[node].child; c >= 0; c = t->v[c].sibling)
        if (t->v[c].byte == byte)
            return c;
    return -1;
}

static bool trie_add(added_trie *t, const char *text, size_t len, int32_t tok) {
    int32_t node = -1;
    for (size_t i = 0; i < len; i++) {
        uint8_t byte = (uint8_t)text[i];
        int32_t next = trie_child(t, node, byte);
        if (next < 0) {
            if (t->n == t->cap) {
                size_t cap = t->cap ? 2 * t->cap : 64;
                trie_node *v = cap <= INT32_MAX ? realloc(t->v, cap * sizeof *v) : NULL;
                if (!v)
                    return false;
                t->v = v;
                t->cap = cap;
            }
            next = (int32_t)t->n++;
            t->v[next] = (trie_node){-1, -1, -1, byte};
            if (node < 0) {
                t->root[byte] = next;
            } else {
                t->v[next].sibling = t->v[node].child;
                t->v[node].child = next;
            }
        }
        node = next;
    }
    if (node >= 0 && t->v[node].tok < 0)
        t->v[node].tok = tok;
    return true;
}

/* The longest added token starting at b[at] (its index, -1 for none) and its length. */
static int trie_longest(const added_trie *t, const char *b, size_t len, size_t at, size_t *mlen) {
    int best = -1;
    int32_t node = -1;
    for (size_t i = at; i < len; i++) {
        node = trie_child(t, node, (uint8_t)b[i]);
        if (node < 0)
            break;
        if (t->v[node].tok >= 0) {
            best = t->v[node].tok;
            *mlen = i + 1 - at;
        }
    }
    return best;
}

typedef struct id_k {
    int32_t id, k;
} id_k;

static int id_k_cmp(const void *a, const void *b) {
    const id_k *x = a, *y = b;
    return x->id != y->id ? (x->id < y->id ? -1 : 1) : (x->k < y->k ? -1 : x->k > y->k);
}

atn_status atn_tp_index_added(pipeline *pl, atn_error *err) {
    free(pl->by_id);
    pl->by_id = malloc(((size_t)pl->n_added + 1) * sizeof *pl->by_id);
    id_k *tmp = malloc(((size_t)pl->n_added + 1) * sizeof *tmp);
    if (!pl->by_id || !tmp) {
        free(tmp);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    for (int k = 0; k < pl->n_added; k++)
        tmp[k] = (id_k){pl->added[k].id, k};
    qsort(tmp, (size_t)pl->n_added, sizeof *tmp, id_k_cmp);
    for (int k = 0; k < pl->n_added; k++)
        pl->by_id[k] = tmp[k].k;
    free(tmp);
    for (int n = 0; n < 2; n++) {
        free(pl->trie[n].v);
        pl->trie[n] = (added_trie){0};
        for (int b = 0; b < 256; b++)
            pl->trie[n].root[b] = -1;
    }
    for (int k = 0; k < pl->n_added; k++) {
        const added_tok *a = &pl->added[k];
        const char *c = a->normalized ? a->norm_content : a->content;
        size_t cl = a->normalized ? a->norm_len : a->len;
        if (c && cl > 0 && !trie_add(&pl->trie[a->normalized], c, cl, k))
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    return ATN_OK;
}

/* The first position in by_id whose token's id is >= id. */
static size_t added_pos(const pipeline *pl, int32_t id) {
    size_t lo = 0, hi = pl->by_id ? (size_t)pl->n_added : 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (pl->added[pl->by_id[mid]].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int atn_tp_added_of(const pipeline *pl, int32_t id) {
    size_t p = added_pos(pl, id);
    return pl->by_id && p < (size_t)pl->n_added && pl->added[pl->by_id[p]].id == id ? pl->by_id[p] : -1;
}

/* The last added token of this id in file order (one must exist). */
static int added_last_of(const pipeline *pl, int32_t id) {
    size_t p = added_pos(pl, id);
    while (p + 1 < (size_t)pl->n_added && pl->added[pl->by_id[p + 1]].id == id)
        p++;
    return pl->by_id[p];
}

/* AddedVocabulary::find_matches + split_with_indices on one piece: the added tokens
 * (normalized or not, as `norm` says) found leftmost-longest in s, through the trie. */
static bool split_added(const pipeline *pl, const nstr *s, bool norm, splits *out, work *w) {
    const added_trie *trie = &pl->trie[norm];
    if (trie->n == 0)   /* no such tokens: the piece as it is */
        return atn_tp_splits_push_slice(out, s, 0, s->n, -1);
    if (!atn_tp_ns_utf8(s, &w->u))
        return false;
    const char *b = w->u.b;
    size_t len = w->u.len;
    size_t start_off = 0;   /* characters */
    size_t pos = 0;         /* bytes */
    bool ok = true;
    while (pos < len && ok) {
        /* leftmost position where some token matches, longest there */
        int best = -1;
        size_t blen = 0;
        for (size_t at = pos; at < len && best < 0; at++) {
            if (atn_cancel_poll()) {
                w->cancelled = true;
                return false;
            }
            if (trie->root[(uint8_t)b[at]] < 0)
                continue;
            best = trie_longest(trie, b, len, at, &blen);
            if (best >= 0)
                pos = at;
        }
        if (best < 0)
            break;
        const added_tok *a = &pl->added[best];
        size_t ca = atn_tp_char_at(&w->u, s->n, (int32_t)pos);
        size_t cb = atn_tp_char_at(&w->u, s->n, (int32_t)(pos + blen));
        pos += blen;
        if (a->single_word && (ends_with_word(s, ca) || starts_with_word(s, cb)))
            continue;
        if (a->lstrip) {
            size_t ns = ca;
            while (ns > 0 && atn_tp_is_space(s->v[ns - 1].cp))
                ns--;
            ca = ns > start_off ? ns : start_off;
        }
        if (a->rstrip) {
            while (cb < s->n && atn_tp_is_space(s->v[cb].cp))
                cb++;
            pos = (size_t)w->u.offs[cb];
        }
        ok = atn_tp_splits_push_slice(out, s, start_off, ca, -1) &&
             atn_tp_splits_push_slice(out, s, ca, cb, a->id);
        start_off = cb;
    }
    return ok && atn_tp_splits_push_slice(out, s, start_off, s->n, -1);
}

/* ---- one sequence: text -> tokens ----------------------------------------------------- */


static bool trim_char(uint32_t cp) {
    return cp == 0x120 || atn_tp_is_space(cp);
}

/* lead and trail of a token whose text is s */
void atn_tp_count_trim(const char *s, int32_t *lead, int32_t *trail) {
    size_t len = strlen(s), p = 0;
    *lead = *trail = 0;
    while (p < len) {
        uint32_t cp;
        int l = atn_utf8_decode((const unsigned char *)s + p, len - p, &cp);
        if (!l || !trim_char(cp))
            break;
        (*lead)++;
        p += (size_t)l;
    }
    size_t q = len;
    while (q > 0) {
        size_t st = q - 1;
        while (st > 0 && ((unsigned char)s[st] & 0xC0) == 0x80)
            st--;
        uint32_t cp;
        int l = atn_utf8_decode((const unsigned char *)s + st, q - st, &cp);
        if (!l || !trim_char(cp))
            break;
        (*trail)++;
        q = st;
    }
}


bool atn_tp_eb_push(ebuf *e, etok t) {
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 64;
        etok *v = realloc(e->v, cap * sizeof *v);
        if (!v)
            return false;
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n++] = t;
    return true;
}

const char *atn_tp_id_text(const pipeline *pl, int32_t id) {
    int k = atn_tp_added_of(pl, id);
    if (k >= 0)
        return pl->added[k].content;
    const char *t = pl->model->ops->id_to_token(pl->model, id);
    return t ? t : "";
}

static atn_status encode_seq(const pipeline *pl, const char *text, const char *what,
                             int32_t type_id, ebuf *out, work *w) {
    atn_error *err = w->err;
    size_t len = strlen(text);
    if (len > (size_t)INT32_MAX / 8)
        return atn_error_set(err, ATN_E_INVALID, "%s: %zu bytes is too long", what, len);
    nstr all = {.added = -1};
    if (!atn_tp_ns_reserve(&all, len + 1))
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    const unsigned char *u = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        if (atn_cancel_poll()) {
            free(all.v);
            return atn_cancel_error(err, "reading the text");
        }
        uint32_t cp;
        int k = atn_utf8_decode(u + i, len - i, &cp);
        if (!k) {
            free(all.v);
            return atn_error_set(err, ATN_E_INVALID, "%s: invalid UTF-8 at byte offset %zu "
                                 "(byte 0x%02X)", what, i, u[i]);
        }
        all.v[all.n++] = (atn_uchar){cp, (int32_t)i, (int32_t)(i + (size_t)k)};
        i += (size_t)k;
    }
    atn_status st = ATN_OK;
    splits sp = {0}, sp2 = {0};
    bool ok;
    if (all.n == 0) {
        free(all.v);
        return ATN_OK;
    }
    /* 1. added tokens matched on the original text */
    ok = split_added(pl, &all, false, &sp, w);
    free(all.v);
    /* 2. normalize the rest, then the normalized added tokens */
    for (size_t i = 0; i < sp.n && ok && st == ATN_OK; i++) {
        nstr *s = &sp.v[i];
        if (atn_cancel_poll()) {
            w->cancelled = true;
            ok = false;
            break;
        }
        if (s->added >= 0) {
            ok = atn_tp_splits_push_slice(&sp2, s, 0, s->n, s->added);
            if (ok)
                sp2.v[sp2.n - 1].shift = s->shift;
            continue;
        }
        if (pl->norm && (st = atn_tp_normalize_bounded(pl->norm, s, w)) != ATN_OK)
            break;
        if (s->n)
            ok = split_added(pl, s, true, &sp2, w);
    }
    atn_tp_splits_free(&sp);
    if (!ok && st == ATN_OK)
        st = w->cancelled ? atn_cancel_error(err, "tokenizing")
                          : atn_error_set(err, ATN_E_NOMEM, "out of memory");
    /* 3. pre-tokenize */
    if (st == ATN_OK && pl->pre)
        st = atn_tp_pre_tokenize(pl->pre, &sp2, w);
    /* 4. the model, word by word */
    for (size_t i = 0; i < sp2.n && st == ATN_OK; i++) {
        nstr *s = &sp2.v[i];
        if (atn_cancel_poll()) {
            st = atn_cancel_error(err, "tokenizing");
            break;
        }
        if (s->added >= 0) {
            etok t = {s->added, s->v[0].start, s->v[s->n - 1].end, (int32_t)i, type_id, false,
                      true, false, atn_tp_id_text(pl, s->added), type_id, 0, 0};
            while (t.lead < (int32_t)s->n && trim_char(s->v[t.lead].cp))
                t.lead++;
            while (t.trail < (int32_t)s->n && trim_char(s->v[s->n - 1 - (size_t)t.trail].cp))
                t.trail++;
            if (!atn_tp_eb_push(out, t))
                st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
            continue;
        }
        if (!atn_tp_ns_utf8(s, &w->u)) {
            st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
            break;
        }
        w->pieces.n = 0;
        st = pl->model->ops->tokenize(pl->model, w->u.b, w->u.len, &w->pieces, err);
        for (int32_t k = 0; k < w->pieces.n && st == ATN_OK; k++) {
            const atn_tok_piece *p = &w->pieces.v[k];
            /* the piece's characters as the Rust library's BytesToCharOffsetConverter gives
               them: from the character holding its first byte to the one holding its last
               (a byte_fallback piece inside a multi-byte character covers that character);
               a span reaching past the word (the bytes of a continuing_subword_prefix or
               end_of_word_suffix) ends at the character after its start, or two on */
            int32_t wlen = (int32_t)w->u.len;
            size_t ca, cb;
            if (p->start >= 0 && p->start < p->end && p->end <= wlen) {
                ca = atn_tp_char_holding(&w->u, s->n, p->start);
                cb = atn_tp_char_holding(&w->u, s->n, p->end - 1) + 1;
            } else if (p->start >= 0 && p->start < wlen) {
                ca = atn_tp_char_holding(&w->u, s->n, p->start);
                cb = p->end < wlen ? atn_tp_char_holding(&w->u, s->n, p->end)
                     : p->end - 1 < wlen ? atn_tp_char_holding(&w->u, s->n, p->end - 1) + 1
                     : ca + 2;
                if (cb > s->n)
                    cb = s->n;
            } else {
                ca = atn_tp_char_at(&w->u, s->n, p->start);
                cb = atn_tp_char_at(&w->u, s->n, p->end);
            }
            int32_t a, b;
            if (cb > ca && cb <= s->n) {
                a = s->v[ca].start;
                b = s->v[cb - 1].end;
            } else {
                a = b = ca < s->n ? s->v[ca].start : s->v[s->n - 1].end;
            }
            const char *ttext = atn_tp_id_text(pl, p->id);
            /* Unigram's tokens carry the text they cover: its unk reads as the text, not "<unk>" */
            if (pl->model->ops->unk_id(pl->model) == p->id && strcmp(pl->model->ops->type, "Unigram") == 0 &&
                p->start >= 0 && p->start <= p->end && p->end <= wlen &&
                !(ttext = work_keep_text(w, w->u.b + p->start, (size_t)(p->end - p->start)))) {
                st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
                break;
            }
            etok t = {p->id, a, b, (int32_t)i, type_id, false, false, k > 0, ttext, type_id, 0, 0};
            atn_tp_count_trim(t.text, &t.lead, &t.trail);
            if (!atn_tp_eb_push(out, t))
                st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
        }
    }
    atn_tp_splits_free(&sp2);
    return st;
}

/* ---- encode ------------------------------------------------------------------------- */

static atn_token_role role_of(const pipeline *pl, int32_t id) {
    for (int r = ATN_TOKEN_CLS; r <= ATN_TOKEN_UNK; r++)
        if (r != ATN_TOKEN_WORD && pl->role_id[r] == id && id >= 0)
            return (atn_token_role)r;
    return ATN_TOKEN_WORD;
}

static void work_free(work *w) {
    free(w->t.v);
    free(w->t.spare);
    pcre2_match_data_free(w->md);
    free(w->u.b);
    free(w->u.offs);
    free(w->m.v);
    free(w->pieces.v);
}

/* The kept token texts (work_keep_text): freed once the encoding has copied them. */
static void work_free_texts(work *w) {
    for (size_t i = 0; i < w->n_texts; i++)
        free(w->texts[i]);
    free(w->texts);
    w->texts = NULL;
    w->n_texts = w->cap_texts = 0;
}

static atn_status pl_encode(const atn_tokenizer *base, const char *text, const char *text_pair,
                            int32_t max_len, atn_encoding **out, atn_error *err) {
    const pipeline *pl = (const pipeline *)base;
    bool pair = text_pair != NULL;
    int n_special = atn_tp_added_count(pl->post, pair);
    if (max_len < 0 || (max_len > 0 && max_len < n_special + 1))
        return atn_error_set(err, ATN_E_INVALID, "maximum length %d is too small: the special "
                             "tokens alone need %d positions", max_len, n_special);
    work w = {.pl = pl, .err = err};
    ebuf enc[2] = {{0}, {0}};
    atn_status st = encode_seq(pl, text, "text", 0, &enc[0], &w);
    if (st == ATN_OK && pair)
        st = encode_seq(pl, text_pair, "text pair", 1, &enc[1], &w);
    work_free(&w);
    if (st) {
        work_free_texts(&w);
        free(enc[0].v);
        free(enc[1].v);
        return st;
    }
    size_t n1 = enc[0].n, n2 = enc[1].n, dropped = 0;
    bool truncated = false;
    if (max_len > 0 && n1 + n2 + (size_t)n_special > (size_t)max_len) {
        size_t ml = (size_t)max_len - (size_t)n_special;
        truncated = true;
        if (!pair) {
            dropped = n1 - ml;
            n1 = ml;
        } else {
            size_t a = n1, b = n2;
            bool swap = a > b;
            if (swap) {
                size_t t = a;
                a = b;
                b = t;
            }
            if (a > ml)
                b = a;
            else
                b = a > ml - a ? a : ml - a;
            if (a + b > ml) {
                a = ml / 2;
                b = a + ml % 2;
            }
            if (swap) {
                size_t t = a;
                a = b;
                b = t;
            }
            size_t k1 = n1 < a ? n1 : a, k2 = n2 < b ? n2 : b;
            dropped = n1 - k1 + n2 - k2;
            n1 = k1;
            n2 = k2;
        }
        enc[0].n = n1;
        enc[1].n = n2;
    }
    int n_enc = pair ? 2 : 1;
    const char *const seg_text[2] = {text, text_pair};
    bool ok = !pl->post || atn_tp_post_process(pl, pl->post, enc, n_enc, seg_text);
    if (!ok) {
        free(enc[0].v);
        free(enc[1].v);
        work_free_texts(&w);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    size_t n = enc[0].n + enc[1].n;
    atn_encoding *e = atn_encoding_alloc((int32_t)n);
    if (!e) {
        free(enc[0].v);
        free(enc[1].v);
        work_free_texts(&w);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory for %zu tokens", n);
    }
    e->n = (int32_t)n;
    e->truncated = truncated;
    e->n_dropped = (int32_t)dropped;
    int32_t unk = pl->model->ops->unk_id(pl->model);
    size_t k = 0;
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < enc[s].n; i++, k++) {
            const etok *t = &enc[s].v[i];
            atn_token *o = &e->tokens[k];
            int seg = t->special ? -1 : t->segment;
            int32_t ty = t->type_id;
            o->text = strdup(t->text ? t->text : "");
            if (!o->text)
                ok = false;
            o->id = t->id;
            o->type_id = ty;
            o->start = t->special ? -1 : t->start;
            o->end = t->special ? -1 : t->end;
            o->segment = seg;
            o->word = t->special ? -1 : t->word;
            bool added_special = false;
            if (t->added)   /* the last of that id in file order */
                added_special = pl->added[added_last_of(pl, t->id)].special;
            o->special = t->special || added_special;
            o->role = role_of(pl, t->id);
            if (!t->special && !t->added && t->id == unk && unk >= 0)
                o->role = ATN_TOKEN_UNK;
            o->continuation = t->continuation;
            e->ids[k] = t->id;
            e->type_ids[k] = ty;
            e->mask[k] = 1;
        }
    }
    free(enc[0].v);
    free(enc[1].v);
    work_free_texts(&w);
    if (!ok) {
        atn_encoding_free(e);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    *out = e;
    return ATN_OK;
}

/* ---- the vocabulary side ------------------------------------------------------------ */

static int32_t pl_vocab_size(const atn_tokenizer *t) {
    return ((const pipeline *)t)->vocab_size;
}

static int32_t pl_token_to_id(const atn_tokenizer *t, const char *token) {
    const pipeline *pl = (const pipeline *)t;
    for (int k = 0; k < pl->n_added; k++)
        if (strcmp(pl->added[k].content, token) == 0)
            return pl->added[k].id;
    return pl->model->ops->token_to_id(pl->model, token, strlen(token));
}

static int32_t pl_special_id(const atn_tokenizer *t, atn_token_role role) {
    const pipeline *pl = (const pipeline *)t;
    if (role < ATN_TOKEN_CLS || role > ATN_TOKEN_UNK)
        return -1;
    return pl->role_id[role];
}

/* How a vocabulary entry reads in a text: byte-level pieces decoded, the metaspace
 * character as a space, WordPiece's prefix dropped. */
static char *make_surface(const pipeline *pl, const char *t, bool *partial) {
    size_t len = strlen(t);
    *partial = false;
    if (pl->wp_prefix && *pl->wp_prefix && strncmp(t, pl->wp_prefix, strlen(pl->wp_prefix)) == 0 &&
        len > strlen(pl->wp_prefix))
        return strdup(t + strlen(pl->wp_prefix));
    if (pl->byte_level) {
        unsigned char *b = malloc(len + 1);
        if (!b)
            return NULL;
        size_t n = 0;
        bool all = true;
        for (size_t i = 0; i < len && all;) {
            uint32_t cp;
            int l = atn_utf8_decode((const unsigned char *)t + i, len - i, &cp);
            int by = l ? pl_char_byte(cp) : -1;
            if (by < 0)
                all = false;
            else
                b[n++] = (unsigned char)by;
            i += l ? (size_t)l : 1;
        }
        if (all && n) {
            if (atn_utf8_check(b, n) == n) {
                b[n] = '\0';
                return (char *)b;
            }
            /* part of a character: the valid prefix, then the bytes as \xNN */
            *partial = true;
            size_t ok = atn_utf8_check(b, n);
            char *s = malloc(ok + 4 * (n - ok) + 1);
            if (!s) {
                free(b);
                return NULL;
            }
            memcpy(s, b, ok);
            size_t m = ok;
            for (size_t i = ok; i < n; i++)
                m += (size_t)sprintf(s + m, "\\x%02X", b[i]);
            s[m] = '\0';
            free(b);
            return s;
        }
        free(b);
    }
    if (pl->metaspace) {
        char mb[5];
        int ml = atn_utf8_encode(pl->meta_char, mb);
        char *s = malloc(len + 1);
        if (!s)
            return NULL;
        size_t m = 0;
        for (size_t i = 0; i < len;) {
            if (len - i >= (size_t)ml && memcmp(t + i, mb, (size_t)ml) == 0) {
                s[m++] = ' ';
                i += (size_t)ml;
            } else {
                s[m++] = t[i++];
            }
        }
        s[m] = '\0';
        return s;
    }
    return strdup(t);
}

/* The model's ids only: an added token's surface is its text, and an added id far past the
 * model's (one of 1e8 made this 4 GB) costs nothing. */
static void build_surfaces(pipeline *pl) {
    pl->n_surface = pl->model->ops->vocab_size(pl->model);
    pl->surface = calloc((size_t)pl->n_surface + 1, sizeof *pl->surface);
    pl->partial = calloc((size_t)pl->n_surface + 1, sizeof *pl->partial);
    if (!pl->surface || !pl->partial)
        return;
    for (int32_t id = 0; id < pl->n_surface; id++) {
        const char *t = atn_tp_id_text(pl, id);
        bool is_added = atn_tp_added_of(pl, id) >= 0;
        pl->surface[id] = is_added ? strdup(t) : make_surface(pl, t, &pl->partial[id]);
        if (!pl->surface[id])
            return;
    }
    pl->surf_ok = true;
}

static pthread_mutex_t surf_lock = PTHREAD_MUTEX_INITIALIZER;

static bool pl_id_info(const atn_tokenizer *base, int32_t id, atn_vocab_entry *out) {
    pipeline *pl = (pipeline *)base;   /* the surfaces are made once, on first use */
    if (id < 0 || id >= pl->vocab_size)
        return false;
    pthread_mutex_lock(&surf_lock);
    if (!pl->surface)
        build_surfaces(pl);
    pthread_mutex_unlock(&surf_lock);
    const char *t = atn_tp_id_text(pl, id);
    out->text = t;
    out->surface = pl->surf_ok && id < pl->n_surface ? pl->surface[id] : t;
    out->role = role_of(pl, id);
    out->special = atn_tp_added_of(pl, id) >= 0 && pl->added[added_last_of(pl, id)].special;
    out->partial = pl->surf_ok && id < pl->n_surface && pl->partial[id];
    out->continuation = pl->wp_prefix && *pl->wp_prefix &&
                        strncmp(t, pl->wp_prefix, strlen(pl->wp_prefix)) == 0 &&
                        strlen(t) > strlen(pl->wp_prefix);
    return true;
}

void atn_tp_pipeline_free(atn_tokenizer *base) {
    pipeline *pl = (pipeline *)base;
    if (!pl)
        return;
    free(pl->origin);
    atn_tp_free_normalizer(pl->norm);
    atn_tp_free_pretok(pl->pre);
    atn_tp_free_postproc(pl->post);
    atn_tok_model_free(pl->model);
    for (int k = 0; k < pl->n_added; k++) {
        free(pl->added[k].content);
        free(pl->added[k].norm_content);
    }
    free(pl->added);
    if (pl->surface)
        for (int32_t i = 0; i < pl->n_surface; i++)
            free(pl->surface[i]);
    free(pl->by_id);
    free(pl->trie[0].v);
    free(pl->trie[1].v);
    free(pl->surface);
    free(pl->partial);
    free(pl->wp_prefix);
    free(pl);
}

const atn_tokenizer_ops atn_tp_pipeline_ops = {
    .kind = "tokenizer.json",
    .encode = pl_encode,
    .vocab_size = pl_vocab_size,
    .token_to_id = pl_token_to_id,
    .id_info = pl_id_info,
    .special_id = pl_special_id,
    .free = atn_tp_pipeline_free,
};

bool atn_tok_is_pipeline(const atn_tokenizer *tok) {
    return tok && tok->ops == &atn_tp_pipeline_ops;
}

bool atn_tok_pipeline_set_role(atn_tokenizer *tok, atn_token_role role, const char *name) {
    if (!atn_tok_is_pipeline(tok) || !name || role < ATN_TOKEN_CLS || role > ATN_TOKEN_UNK ||
        role == ATN_TOKEN_WORD)
        return false;
    int32_t id = pl_token_to_id(tok, name);
    if (id < 0)
        return false;
    ((pipeline *)tok)->role_id[role] = id;
    return true;
}

/* The normalized form of each normalized added token (refresh_added_tokens). */
atn_status atn_tp_normalize_added(pipeline *pl, atn_error *err) {
    work w = {.pl = pl, .err = err};
    atn_status st = ATN_OK;
    for (int k = 0; k < pl->n_added && st == ATN_OK; k++) {
        added_tok *t = &pl->added[k];
        if (!t->normalized)
            continue;
        nstr s = {.added = -1};
        if (!atn_tp_ns_reserve(&s, t->len + 1)) {
            st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
            break;
        }
        for (size_t i = 0; i < t->len;) {
            uint32_t cp;
            int l = atn_utf8_decode((const unsigned char *)t->content + i, t->len - i, &cp);
            s.v[s.n++] = (atn_uchar){cp, (int32_t)i, (int32_t)(i + (size_t)l)};
            i += (size_t)l;
        }
        if (pl->norm)
            st = atn_tp_normalize_bounded(pl->norm, &s, &w);
        if (st == ATN_OK) {
            if (!atn_tp_ns_utf8(&s, &w.u) || !(t->norm_content = strdup(w.u.b)))
                st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
            else
                t->norm_len = w.u.len;
        }
        free(s.v);
    }
    work_free(&w);
    work_free_texts(&w);
    return st == ATN_OK ? atn_tp_index_added(pl, err) : st;
}

/* The roles the file itself shows: the post-processor's cls/sep, the model's unk, and
 * added tokens with the usual names. */
void atn_tp_default_roles(pipeline *pl) {
    for (int r = 0; r <= ATN_TOKEN_UNK; r++)
        pl->role_id[r] = -1;
    static const struct { const char *name; atn_token_role role; } names[] = {
        {"[CLS]", ATN_TOKEN_CLS}, {"<s>", ATN_TOKEN_CLS}, {"[SEP]", ATN_TOKEN_SEP},
        {"</s>", ATN_TOKEN_SEP}, {"[MASK]", ATN_TOKEN_MASK}, {"<mask>", ATN_TOKEN_MASK},
        {"[PAD]", ATN_TOKEN_PAD}, {"<pad>", ATN_TOKEN_PAD}, {"[UNK]", ATN_TOKEN_UNK},
        {"<unk>", ATN_TOKEN_UNK},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (pl->role_id[names[i].role] < 0)
            pl->role_id[names[i].role] = pl_token_to_id(&pl->base, names[i].name);
    const postproc *pp = pl->post;
    if (pp && pp->type == PP_SEQUENCE)
        for (int i = 0; i < pp->n_kids; i++)
            if (pp->kids[i].type != PP_BYTELEVEL)
                pp = &pp->kids[i];
    if (pp && (pp->type == PP_BERT || pp->type == PP_ROBERTA)) {
        pl->role_id[ATN_TOKEN_CLS] = pp->cls_id;
        pl->role_id[ATN_TOKEN_SEP] = pp->sep_id;
    } else if (pp && pp->type == PP_TEMPLATE && pp->n_single > 0) {
        /* a special before A is the classifier token, one after it the separator */
        for (int i = 0; i < pp->n_single; i++) {
            if (!pp->single[i].special || pp->single[i].n_ids != 1)
                continue;
            bool before = i + 1 < pp->n_single && !pp->single[i + 1].special;
            pl->role_id[before && i == 0 ? ATN_TOKEN_CLS : ATN_TOKEN_SEP] = pp->single[i].ids[0];
        }
    }
    int32_t unk = pl->model->ops->unk_id(pl->model);
    if (unk >= 0)
        pl->role_id[ATN_TOKEN_UNK] = unk;
}


/* ---- the classic GPT-2 / RoBERTa files ---------------------------------------------- */

atn_tokenizer *atn_tok_pipeline_classic(atn_tok_model *model, bool roberta, bool add_prefix_space,
                                        const char *const specials[], int n_specials,
                                        const char *mask_token, const char *origin,
                                        atn_error *err) {
    if (!origin)
        origin = "vocab.json";
    pipeline *pl = calloc(1, sizeof *pl);
    if (!pl || !(pl->origin = strdup(origin))) {
        free(pl);
        atn_tok_model_free(model);
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", origin);
        return NULL;
    }
    pl->base.ops = &atn_tp_pipeline_ops;
    pl->model = model;
    jctx j = {origin, err};
    /* ByteLevel(add_prefix_space), as transformers' GPT2Converter / RobertaConverter */
    pl->pre = calloc(1, sizeof *pl->pre);
    pl->post = calloc(1, sizeof *pl->post);
    pl->added = calloc((size_t)n_specials + 1, sizeof *pl->added);
    if (!pl->pre || !pl->post || !pl->added)
        goto nomem;
    cJSON *bl = cJSON_CreateObject();
    if (!bl || !cJSON_AddStringToObject(bl, "type", "ByteLevel") ||
        !cJSON_AddBoolToObject(bl, "add_prefix_space", add_prefix_space)) {
        cJSON_Delete(bl);
        goto nomem;
    }
    atn_status st = atn_tp_parse_pretok(&j, bl, "pre_tokenizer", pl->pre, 0);
    cJSON_Delete(bl);
    if (st)
        goto fail;
    pl->byte_level = true;
    /* the special tokens, each once, as added special tokens (<mask> strips on its left) */
    for (int i = 0; i < n_specials; i++) {
        const char *s = specials[i];
        if (!s || !*s)
            continue;
        bool dup = false;
        for (int k = 0; k < pl->n_added; k++)
            dup |= strcmp(pl->added[k].content, s) == 0;
        int32_t id = model->ops->token_to_id(model, s, strlen(s));
        if (dup || id < 0)
            continue;
        added_tok *t = &pl->added[pl->n_added];
        if (!(t->content = strdup(s)))
            goto nomem;
        t->len = strlen(s);
        t->id = id;
        t->special = true;
        t->lstrip = mask_token && strcmp(s, mask_token) == 0;
        pl->n_added++;
    }
    postproc *pp = pl->post;
    if (roberta) {
        pp->type = PP_ROBERTA;
        pp->trim_offsets = true;
        pp->add_prefix_space = add_prefix_space;
        const char *cls = n_specials > 0 && specials[0] ? specials[0] : "<s>";
        const char *sep = n_specials > 1 && specials[1] ? specials[1] : "</s>";
        pp->cls_id = model->ops->token_to_id(model, cls, strlen(cls));
        pp->sep_id = model->ops->token_to_id(model, sep, strlen(sep));
        if (pp->cls_id < 0 || pp->sep_id < 0) {
            atn_error_set(err, ATN_E_FORMAT, "%s: the vocabulary has no %s token (RoBERTa's "
                          "sequences start with %s and end with %s)", origin,
                          pp->cls_id < 0 ? cls : sep, cls, sep);
            goto fail;
        }
        if (!(pp->cls = strdup(cls)) || !(pp->sep = strdup(sep)))
            goto nomem;
    } else {
        pp->type = PP_BYTELEVEL;   /* GPT-2: ByteLevel(trim_offsets=False) */
        pp->trim_offsets = false;
    }
    pl->vocab_size = model->ops->vocab_size(model);
    pl->meta_char = 0x2581;
    if (atn_tp_index_added(pl, err) != ATN_OK)
        goto fail;
    atn_tp_default_roles(pl);
    return &pl->base;
nomem:
    atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", origin);
fail:
    atn_tp_pipeline_free(&pl->base);
    return NULL;
}

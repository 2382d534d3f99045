/* BPE, as the Rust tokenizers library's models::bpe computes it (model.rs merge_word,
 * word.rs merge_all): a word starts as one symbol per character (the character with the
 * continuing_subword_prefix when it is not the first, with the end_of_word_suffix when
 * it is the last; a character the vocabulary lacks becomes its <0xNN> bytes with
 * byte_fallback, else the unk piece, consecutive ones fused with fuse_unk, else nothing),
 * then the adjacent pair of lowest merge rank (leftmost on ties) is merged until no pair
 * has a merge, with a priority queue whose stale entries are skipped as the Rust code
 * skips them.  No cache: a model is read only, so threads can share it.
 *
 * Also GPT-2's byte-level alphabet and the classic vocab.json + merges.txt files. */
#include "tokenize/tok-model.h"
#include "tokenize/tok-strtab.h"
#include "core/cancel.h"
#include "core/files.h"
#include "core/json.h"
#include "tokenize/unicode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BPE_MAX_ID = (1 << 24) - 1 };

typedef struct merge_slot {
    uint64_t key;   /* (a << 32 | b) + 1; 0 = empty */
    uint32_t rank;
    int32_t new_id;
} merge_slot;

typedef struct bpe_model {
    atn_tok_model base;
    atn_tok_strtab vocab;
    merge_slot *merges;
    size_t merge_slots, merge_count;
    char *unk_token, *prefix, *suffix;
    size_t prefix_len, suffix_len;
    int32_t unk_id;          /* the unk_token's id, -1 when absent or not in the vocabulary */
    int32_t byte_id[256];    /* <0xNN> pieces, -1 when absent */
    bool fuse_unk, byte_fallback, ignore_merges;
} bpe_model;

/* ---- merges table ------------------------------------------------------------------- */

static size_t merge_find(const bpe_model *m, uint64_t key) {
    size_t mask = m->merge_slots - 1;
    /* keyed: the ids come from the file, so a crafted merges list must not collide */
    size_t i = (size_t)atn_keyed_hash(&key, sizeof key) & mask;
    while (m->merges[i].key && m->merges[i].key != key)
        i = (i + 1) & mask;
    return i;
}

static const merge_slot *merge_get(const bpe_model *m, int32_t a, int32_t b) {
    if (!m->merge_count)
        return NULL;
    uint64_t key = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
    const merge_slot *s = &m->merges[merge_find(m, key)];
    return s->key ? s : NULL;
}

static bool merges_alloc(bpe_model *m, size_t n) {
    size_t slots = 16;
    while (slots < n * 2 + 2)
        slots *= 2;
    m->merges = calloc(slots, sizeof *m->merges);
    m->merge_slots = slots;
    return m->merges != NULL;
}

/* A later merge of the same pair replaces an earlier one (the Rust HashMap collect). */
static void merge_put(bpe_model *m, int32_t a, int32_t b, uint32_t rank, int32_t new_id) {
    uint64_t key = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
    merge_slot *s = &m->merges[merge_find(m, key)];
    if (!s->key)
        m->merge_count++;
    s->key = key;
    s->rank = rank;
    s->new_id = new_id;
}

/* ---- tokenize ----------------------------------------------------------------------- */

typedef struct sym {
    int32_t id, prev, next, len;
} sym;

typedef struct qent {
    uint32_t rank;
    int32_t pos, new_id;
} qent;

typedef struct work {
    sym *s;
    int32_t n, cap;
    qent *q;
    int32_t qn, qcap;
} work;

static bool sym_add(work *w, int32_t id, int32_t len) {
    if (w->n == w->cap) {
        int32_t cap = w->cap ? w->cap * 2 : 64;
        sym *s = realloc(w->s, (size_t)cap * sizeof *s);
        if (!s)
            return false;
        w->s = s;
        w->cap = cap;
    }
    if (w->n > 0)
        w->s[w->n - 1].next = w->n;
    w->s[w->n] = (sym){id, w->n - 1, -1, len};
    w->n++;
    return true;
}

static bool q_less(const qent *a, const qent *b) {   /* a comes out first */
    return a->rank != b->rank ? a->rank < b->rank : a->pos < b->pos;
}

static bool q_push(work *w, qent e) {
    if (w->qn == w->qcap) {
        int32_t cap = w->qcap ? w->qcap * 2 : 64;
        qent *q = realloc(w->q, (size_t)cap * sizeof *q);
        if (!q)
            return false;
        w->q = q;
        w->qcap = cap;
    }
    int32_t i = w->qn++;
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (!q_less(&e, &w->q[p]))
            break;
        w->q[i] = w->q[p];
        i = p;
    }
    w->q[i] = e;
    return true;
}

static qent q_pop(work *w) {
    qent top = w->q[0], last = w->q[--w->qn];
    int32_t i = 0;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= w->qn)
            break;
        if (c + 1 < w->qn && q_less(&w->q[c + 1], &w->q[c]))
            c++;
        if (!q_less(&w->q[c], &last))
            break;
        w->q[i] = w->q[c];
        i = c;
    }
    if (w->qn > 0)
        w->q[i] = last;
    return top;
}

/* word.rs merge_all without dropout: ATN_OK, ATN_E_NOMEM, or ATN_E_CANCELLED (the thread's
 * cancel scope, core/cancel.h, polled per merge). */
static atn_status merge_all(const bpe_model *m, work *w) {
    for (int32_t i = 0; i + 1 < w->n; i++) {
        const merge_slot *ms = merge_get(m, w->s[i].id, w->s[i + 1].id);
        if (ms && !q_push(w, (qent){ms->rank, i, ms->new_id}))
            return ATN_E_NOMEM;
    }
    while (w->qn > 0) {
        if (atn_cancel_poll())
            return ATN_E_CANCELLED;
        qent top = q_pop(w);
        sym *cur = &w->s[top.pos];
        if (cur->len == 0 || cur->next == -1)
            continue;
        int32_t next_pos = cur->next;
        sym right = w->s[next_pos];
        const merge_slot *ms = merge_get(m, cur->id, right.id);
        if (!ms || ms->new_id != top.new_id)
            continue;
        cur->id = top.new_id;
        cur->len += right.len;
        cur->next = right.next;
        w->s[next_pos].len = 0;
        if (right.next > -1 && right.next < w->n)
            w->s[right.next].prev = top.pos;
        if (cur->prev >= 0) {
            ms = merge_get(m, w->s[cur->prev].id, cur->id);
            if (ms && !q_push(w, (qent){ms->rank, cur->prev, ms->new_id}))
                return ATN_E_NOMEM;
        }
        if (cur->next >= 0 && cur->next < w->n) {
            ms = merge_get(m, cur->id, w->s[cur->next].id);
            if (ms && !q_push(w, (qent){ms->rank, top.pos, ms->new_id}))
                return ATN_E_NOMEM;
        }
    }
    return ATN_OK;
}

static int utf8_len_at(const unsigned char *s, size_t avail) {
    uint32_t cp;
    int n = atn_utf8_decode(s, avail, &cp);
    if (n > 0)
        return n;
    /* not UTF-8 (the pipeline hands over valid text; stay safe anyway): one byte */
    return 1;
}

static atn_status bpe_tokenize(const atn_tok_model *base, const char *word, size_t len,
                               atn_tok_pieces *out, atn_error *err) {
    const bpe_model *m = (const bpe_model *)base;
    if (len == 0)
        return ATN_OK;
    if (len > INT32_MAX / 4)
        return atn_error_set(err, ATN_E_NOMEM, "BPE: a word of %zu bytes is too long", len);
    if (m->ignore_merges) {
        int32_t id = atn_tok_strtab_get(&m->vocab, word, len);
        if (id >= 0)
            return atn_tok_pieces_push(out, id, 0, (int32_t)len)
                       ? ATN_OK
                       : atn_error_set(err, ATN_E_NOMEM, "BPE: out of memory");
    }
    work w = {0};
    char small[256];
    char *buf = small;
    size_t buf_cap = sizeof small;
    atn_status st = ATN_OK;
    int32_t unk_id = -1, unk_len = 0;   /* a pending unk piece */
    bool have_unk = false;
    const unsigned char *u = (const unsigned char *)word;
    for (size_t i = 0; i < len;) {
        int cl = utf8_len_at(u + i, len - i);
        bool is_first = i == 0, is_last = i + (size_t)cl >= len;
        const char *s = word + i;
        size_t sl = (size_t)cl;
        if ((!is_first && m->prefix) || (is_last && m->suffix)) {
            size_t need = (size_t)cl + m->prefix_len + m->suffix_len;
            if (need > buf_cap) {
                char *nb = malloc(need);
                if (!nb) {
                    st = ATN_E_NOMEM;
                    break;
                }
                if (buf != small)
                    free(buf);
                buf = nb;
                buf_cap = need;
            }
            sl = 0;
            if (!is_first && m->prefix) {
                memcpy(buf, m->prefix, m->prefix_len);
                sl = m->prefix_len;
            }
            memcpy(buf + sl, word + i, (size_t)cl);
            sl += (size_t)cl;
            if (is_last && m->suffix) {
                memcpy(buf + sl, m->suffix, m->suffix_len);
                sl += m->suffix_len;
            }
            s = buf;
        }
        int32_t id = atn_tok_strtab_get(&m->vocab, s, sl);
        if (id >= 0) {
            if (have_unk) {
                if (!sym_add(&w, unk_id, unk_len)) {
                    st = ATN_E_NOMEM;
                    break;
                }
                have_unk = false;
            }
            if (!sym_add(&w, id, cl)) {
                st = ATN_E_NOMEM;
                break;
            }
        } else {
            bool done = false;
            if (m->byte_fallback) {
                /* every byte of the (prefixed/suffixed) string must have its <0xNN> piece;
                   each becomes a symbol one byte long, as the Rust code adds them */
                size_t k = 0;
                while (k < sl && m->byte_id[(unsigned char)s[k]] >= 0)
                    k++;
                if (k == sl) {
                    for (k = 0; k < sl; k++)
                        if (!sym_add(&w, m->byte_id[(unsigned char)s[k]], 1)) {
                            st = ATN_E_NOMEM;
                            break;
                        }
                    if (st != ATN_OK)
                        break;
                    done = true;
                }
            }
            if (!done && m->unk_token) {
                if (m->unk_id < 0) {
                    st = atn_error_set(err, ATN_E_INVALID,
                                       "BPE: unk_token \"%.80s\" is not in the vocabulary",
                                       m->unk_token);
                    break;
                }
                if (have_unk && m->fuse_unk) {
                    unk_len += cl;
                } else {
                    if (have_unk && !sym_add(&w, unk_id, unk_len)) {
                        st = ATN_E_NOMEM;
                        break;
                    }
                    unk_id = m->unk_id;
                    unk_len = cl;
                    have_unk = true;
                }
            }
            /* neither: the Rust library leaves the character out */
        }
        i += (size_t)cl;
    }
    if (st == ATN_OK && have_unk && !sym_add(&w, unk_id, unk_len))
        st = ATN_E_NOMEM;
    if (buf != small)
        free(buf);
    if (st == ATN_OK)
        st = merge_all(m, &w);
    if (st == ATN_OK) {
        int32_t off = 0;
        for (int32_t i = 0; i < w.n; i++) {
            if (w.s[i].len == 0)
                continue;
            if (!atn_tok_pieces_push(out, w.s[i].id, off, off + w.s[i].len)) {
                st = ATN_E_NOMEM;
                break;
            }
            off += w.s[i].len;
        }
    }
    free(w.s);
    free(w.q);
    if (st == ATN_E_NOMEM)
        atn_error_set(err, ATN_E_NOMEM, "BPE: out of memory");
    else if (st == ATN_E_CANCELLED)
        atn_cancel_error(err, "merging BPE pieces");
    return st;
}

static int32_t bpe_vocab_size(const atn_tok_model *base) {
    return ((const bpe_model *)base)->vocab.id_cap;
}

static int32_t bpe_token_to_id(const atn_tok_model *base, const char *token, size_t len) {
    return atn_tok_strtab_get(&((const bpe_model *)base)->vocab, token, len);
}

static const char *bpe_id_to_token(const atn_tok_model *base, int32_t id) {
    return atn_tok_strtab_piece(&((const bpe_model *)base)->vocab, id);
}

static int32_t bpe_unk_id(const atn_tok_model *base) {
    return ((const bpe_model *)base)->unk_id;
}

static void bpe_free(atn_tok_model *base) {
    bpe_model *m = (bpe_model *)base;
    atn_tok_strtab_clear(&m->vocab);
    free(m->merges);
    free(m->unk_token);
    free(m->prefix);
    free(m->suffix);
    free(m);
}

static const atn_tok_model_ops bpe_ops = {
    .type = "BPE",
    .tokenize = bpe_tokenize,
    .vocab_size = bpe_vocab_size,
    .token_to_id = bpe_token_to_id,
    .id_to_token = bpe_id_to_token,
    .unk_id = bpe_unk_id,
    .free = bpe_free,
};

/* ---- building ----------------------------------------------------------------------- */

static bpe_model *bpe_new(void) {
    bpe_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->base.ops = &bpe_ops;
    m->unk_id = -1;
    return m;
}

/* Adds one vocabulary entry; refuses a second id for a piece and a second piece for an id
 * (dup_id marks ids already taken). */
static atn_status vocab_put(bpe_model *m, const char *piece, size_t plen, double v, bool integral,
                            uint8_t **taken, const char *where_fmt_file, const char *where,
                            atn_error *err) {
    if (!integral || !isfinite(v) || v < 0 || v != floor(v))
        return atn_error_set(err, ATN_E_FORMAT, "%s: %s: the id of \"%.60s\" is not a non-negative integer",
                             where_fmt_file, where, piece);
    if (v > BPE_MAX_ID)
        return atn_error_set(err, ATN_E_FORMAT, "%s: %s: id %.0f of \"%.60s\" is past %d, the largest this reader takes",
                             where_fmt_file, where, v, piece, BPE_MAX_ID);
    int32_t id = (int32_t)v, old = -1;
    if (!*taken) {
        *taken = calloc((BPE_MAX_ID + 1) / 8 + 1, 1);
        if (!*taken)
            return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", where_fmt_file);
    }
    int r = atn_tok_strtab_add(&m->vocab, piece, plen, id, &old);
    if (r < 0)
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", where_fmt_file);
    if (r == 0)
        return atn_error_set(err, ATN_E_FORMAT, "%s: %s: \"%.60s\" appears twice", where_fmt_file, where, piece);
    if ((*taken)[id / 8] & (1u << (id % 8)))
        return atn_error_set(err, ATN_E_FORMAT, "%s: %s: id %d of \"%.60s\" is already another piece's",
                             where_fmt_file, where, id, piece);
    (*taken)[id / 8] |= (uint8_t)(1u << (id % 8));
    return ATN_OK;
}

/* Resolves the merge (a, b) (rank = its index among the merges) into the table. */
static atn_status add_merge(bpe_model *m, const char *a, size_t al, const char *b, size_t bl,
                            uint32_t rank, const char *file, const char *where, atn_error *err) {
    int32_t ia = atn_tok_strtab_get(&m->vocab, a, al);
    if (ia < 0)
        return atn_error_set(err, ATN_E_FORMAT, "%s: %s: \"%.*s\" is not in the vocabulary", file, where,
                             (int)(al > 60 ? 60 : al), a);
    int32_t ib = atn_tok_strtab_get(&m->vocab, b, bl);
    if (ib < 0)
        return atn_error_set(err, ATN_E_FORMAT, "%s: %s: \"%.*s\" is not in the vocabulary", file, where,
                             (int)(bl > 60 ? 60 : bl), b);
    /* the merged piece is a + b without the continuing_subword_prefix's length of bytes
       (the Rust code cuts prefix.len() bytes off b, prefixed or not) */
    size_t cut = m->prefix_len;
    if (cut > bl || (cut < bl && ((unsigned char)b[cut] & 0xC0) == 0x80))
        return atn_error_set(err, ATN_E_FORMAT,
                             "%s: %s: \"%.*s\" is shorter than the continuing_subword_prefix or "
                             "cut inside a character by it", file, where, (int)(bl > 60 ? 60 : bl), b);
    size_t nl = al + bl - cut;
    char small[256];
    char *nt = nl <= sizeof small ? small : malloc(nl);
    if (!nt)
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", file);
    memcpy(nt, a, al);
    memcpy(nt + al, b + cut, bl - cut);
    int32_t inew = atn_tok_strtab_get(&m->vocab, nt, nl);
    atn_status st = ATN_OK;
    if (inew < 0)
        st = atn_error_set(err, ATN_E_FORMAT, "%s: %s: the merged piece \"%.*s\" is not in the vocabulary",
                           file, where, (int)(nl > 60 ? 60 : nl), nt);
    else
        merge_put(m, ia, ib, rank, inew);
    if (nt != small)
        free(nt);
    return st;
}

/* Splits a legacy merge line "a b" at its one space (the Rust code's split(' ') must give
 * exactly two parts). */
static bool split_merge(const char *s, size_t len, size_t *sp) {
    const char *p = memchr(s, ' ', len);
    if (!p || memchr(p + 1, ' ', len - (size_t)(p - s) - 1))
        return false;
    *sp = (size_t)(p - s);
    return true;
}

static void finish(bpe_model *m) {
    for (int b = 0; b < 256; b++) {
        char code[8];
        snprintf(code, sizeof code, "<0x%02X>", b);
        m->byte_id[b] = atn_tok_strtab_get(&m->vocab, code, 6);
    }
    m->unk_id = m->unk_token ? atn_tok_strtab_get(&m->vocab, m->unk_token, strlen(m->unk_token)) : -1;
}

static atn_status opt_string(const cJSON *model, const char *key, char **out, size_t *out_len,
                             const char *file, const char *path, atn_error *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(model, key);
    if (!v || cJSON_IsNull(v))
        return ATN_OK;
    if (!cJSON_IsString(v) || !v->valuestring)
        return atn_error_set(err, ATN_E_FORMAT, "%s: %s.%s: should be a string or null", file, path, key);
    *out = strdup(v->valuestring);
    if (!*out)
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", file);
    if (out_len)
        *out_len = strlen(*out);
    return ATN_OK;
}

static atn_status opt_bool(const cJSON *model, const char *key, bool *out, const char *file,
                           const char *path, atn_error *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(model, key);
    if (!v || cJSON_IsNull(v))
        return ATN_OK;
    if (!cJSON_IsBool(v))
        return atn_error_set(err, ATN_E_FORMAT, "%s: %s.%s: should be true, false or null", file, path, key);
    *out = cJSON_IsTrue(v);
    return ATN_OK;
}

atn_tok_model *atn_tok_bpe_from_json(const cJSON *model, const char *file, const char *path,
                                     atn_error *err) {
    if (atn_tok_model_json_check(model, &file, &path, "BPE", err))
        return NULL;
    bpe_model *m = bpe_new();
    uint8_t *taken = NULL;
    char where[160];
    if (!m) {
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", file);
        return NULL;
    }
    const cJSON *dropout = cJSON_GetObjectItemCaseSensitive(model, "dropout");
    if (dropout && !cJSON_IsNull(dropout) &&
        !(cJSON_IsNumber(dropout) && dropout->valuedouble >= 0 && dropout->valuedouble <= 1)) {
        atn_error_set(err, ATN_E_FORMAT, "%s: %s.dropout: should be null or a number from 0 to 1", file, path);
        goto fail;
    }
    if (opt_string(model, "unk_token", &m->unk_token, NULL, file, path, err) ||
        opt_string(model, "continuing_subword_prefix", &m->prefix, &m->prefix_len, file, path, err) ||
        opt_string(model, "end_of_word_suffix", &m->suffix, &m->suffix_len, file, path, err) ||
        opt_bool(model, "fuse_unk", &m->fuse_unk, file, path, err) ||
        opt_bool(model, "byte_fallback", &m->byte_fallback, file, path, err) ||
        opt_bool(model, "ignore_merges", &m->ignore_merges, file, path, err))
        goto fail;
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    if (!cJSON_IsObject(vocab)) {
        atn_error_set(err, ATN_E_FORMAT, "%s: %s.vocab: %s", file, path,
                      vocab ? "should be an object {\"piece\": id}" : "missing");
        goto fail;
    }
    if (!cJSON_IsArray(merges)) {
        atn_error_set(err, ATN_E_FORMAT, "%s: %s.merges: %s", file, path,
                      merges ? "should be an array" : "missing");
        goto fail;
    }
    int nv = cJSON_GetArraySize(vocab);
    if (!atn_tok_strtab_init(&m->vocab, (size_t)nv)) {
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", file);
        goto fail;
    }
    for (const cJSON *e = vocab->child; e; e = e->next) {
        if (atn_cancel_poll()) {
            atn_cancel_error(err, "reading the vocabulary");
            goto fail;
        }
        const char *piece = e->string ? e->string : "";
        snprintf(where, sizeof where, "%s.vocab[\"%.40s\"]", path, piece);
        if (vocab_put(m, piece, strlen(piece), cJSON_IsNumber(e) ? e->valuedouble : 0, cJSON_IsNumber(e),
                      &taken, file, where, err))
            goto fail;
    }
    free(taken);
    taken = NULL;
    if (!atn_tok_strtab_index(&m->vocab)) {
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", file);
        goto fail;
    }
    int nm = cJSON_GetArraySize(merges);
    if (!merges_alloc(m, (size_t)nm)) {
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", file);
        goto fail;
    }
    int kind = 0;   /* 1: "a b" strings, 2: ["a", "b"] pairs */
    uint32_t rank = 0;
    int idx = 0;
    for (const cJSON *e = merges->child; e; e = e->next, idx++) {
        if (atn_cancel_poll()) {
            atn_cancel_error(err, "reading the merges");
            goto fail;
        }
        snprintf(where, sizeof where, "%s.merges[%d]", path, idx);
        int k = cJSON_IsString(e) ? 1 : cJSON_IsArray(e) ? 2 : 0;
        if (!k || (kind && k != kind)) {
            atn_error_set(err, ATN_E_FORMAT, "%s: %s: %s", file, where,
                          kind == 1 ? "should be a string \"a b\" like the merges before it"
                          : kind == 2 ? "should be a pair [\"a\", \"b\"] like the merges before it"
                                      : "should be a string \"a b\" or a pair [\"a\", \"b\"]");
            goto fail;
        }
        kind = k;
        if (k == 1) {
            const char *s = e->valuestring;
            size_t sl = strlen(s), sp;
            if (strncmp(s, "#version", 8) == 0)
                continue;   /* skipped as in merges.txt; ranks count the merges only */
            if (!split_merge(s, sl, &sp)) {
                atn_error_set(err, ATN_E_FORMAT, "%s: %s: \"%.60s\" is not two pieces separated by one space",
                              file, where, s);
                goto fail;
            }
            if (add_merge(m, s, sp, s + sp + 1, sl - sp - 1, rank++, file, where, err))
                goto fail;
        } else {
            const cJSON *a = cJSON_GetArrayItem(e, 0), *b = cJSON_GetArrayItem(e, 1);
            if (cJSON_GetArraySize(e) != 2 || !cJSON_IsString(a) || !cJSON_IsString(b)) {
                atn_error_set(err, ATN_E_FORMAT, "%s: %s: should be a pair of two strings", file, where);
                goto fail;
            }
            if (add_merge(m, a->valuestring, strlen(a->valuestring), b->valuestring,
                          strlen(b->valuestring), rank++, file, where, err))
                goto fail;
        }
    }
    finish(m);
    return &m->base;
fail:
    free(taken);
    bpe_free(&m->base);
    return NULL;
}

atn_tok_model *atn_tok_bpe_from_files(const char *vocab_json, const char *merges_txt,
                                      atn_error *err) {
    if (!vocab_json || !merges_txt) {
        atn_error_set(err, ATN_E_INVALID, "BPE: NULL file name");
        return NULL;
    }
    char *text = NULL, *mtext = NULL;
    size_t len = 0, mlen = 0;
    cJSON *root = NULL;
    uint8_t *taken = NULL;
    bpe_model *m = NULL;
    char where[64];
    if (atn_read_file(vocab_json, (size_t)256 << 20, &text, &len, err) != ATN_OK)
        return NULL;
    if (atn_json_parse(text, len, vocab_json, 0, &root, err) != ATN_OK)   /* engine/core/json.c */
        goto fail;
    if (!cJSON_IsObject(root)) {
        atn_error_set(err, ATN_E_FORMAT, "%s: should be a JSON object {\"piece\": id}", vocab_json);
        goto fail;
    }
    m = bpe_new();
    if (!m || !atn_tok_strtab_init(&m->vocab, (size_t)cJSON_GetArraySize(root))) {
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", vocab_json);
        goto fail;
    }
    for (const cJSON *e = root->child; e; e = e->next) {
        if (atn_cancel_poll()) {
            atn_cancel_error(err, "reading the vocabulary");
            goto fail;
        }
        const char *piece = e->string ? e->string : "";
        snprintf(where, sizeof where, "[\"%.40s\"]", piece);
        if (vocab_put(m, piece, strlen(piece), cJSON_IsNumber(e) ? e->valuedouble : 0, cJSON_IsNumber(e),
                      &taken, vocab_json, where, err))
            goto fail;
    }
    if (!atn_tok_strtab_index(&m->vocab)) {
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", vocab_json);
        goto fail;
    }
    if (atn_read_file(merges_txt, (size_t)256 << 20, &mtext, &mlen, err) != ATN_OK)
        goto fail;
    size_t lines = 1;
    for (size_t i = 0; i < mlen; i++)
        lines += mtext[i] == '\n';
    if (!merges_alloc(m, lines)) {
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", merges_txt);
        goto fail;
    }
    uint32_t rank = 0;
    size_t line_no = 0;
    for (size_t i = 0; i < mlen;) {
        size_t e = i;
        if (atn_cancel_poll()) {
            atn_cancel_error(err, "reading the merges");
            goto fail;
        }
        while (e < mlen && mtext[e] != '\n')
            e++;
        size_t l = e - i;
        line_no++;
        if (l > 0 && mtext[i + l - 1] == '\r')
            l--;
        const char *s = mtext + i;
        i = e + 1;
        if (l >= 8 && memcmp(s, "#version", 8) == 0)
            continue;
        if (l == 0 && i >= mlen)
            continue;   /* the file's last line, left empty */
        if (memchr(s, '\0', l)) {
            atn_error_set(err, ATN_E_FORMAT, "%s: line %zu: a NUL byte", merges_txt, line_no);
            goto fail;
        }
        size_t sp;
        snprintf(where, sizeof where, "line %zu", line_no);
        if (!split_merge(s, l, &sp)) {
            atn_error_set(err, ATN_E_FORMAT, "%s: line %zu: \"%.*s\" is not two pieces separated by one space",
                          merges_txt, line_no, (int)(l > 60 ? 60 : l), s);
            goto fail;
        }
        if (atn_utf8_check((const unsigned char *)s, l) != l) {
            atn_error_set(err, ATN_E_FORMAT, "%s: line %zu: not UTF-8", merges_txt, line_no);
            goto fail;
        }
        if (add_merge(m, s, sp, s + sp + 1, l - sp - 1, rank++, merges_txt, where, err))
            goto fail;
    }
    finish(m);
    free(taken);
    free(text);
    free(mtext);
    cJSON_Delete(root);
    return &m->base;
fail:
    free(taken);
    free(text);
    free(mtext);
    cJSON_Delete(root);
    if (m)
        bpe_free(&m->base);
    return NULL;
}

/* ---- GPT-2's byte-level alphabet ------------------------------------------------------ */

/* bytes_to_unicode: the printable bytes ! .. ~, ¡ .. ¬, ® .. ÿ stand for themselves; the
   others, in byte order, for U+0100 onwards. */
uint32_t atn_byte_level_char(uint8_t b) {
    if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)
        return b;
    if (b <= 0x20)
        return 0x100u + b;
    if (b >= 0x7F && b <= 0xA0)
        return 0x100u + 33u + (uint32_t)(b - 0x7F);
    return 0x100u + 33u + 34u;   /* 0xAD */
}

static int byte_of_char(uint32_t cp) {
    if ((cp >= 0x21 && cp <= 0x7E) || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE && cp <= 0xFF))
        return (int)cp;
    if (cp >= 0x100 && cp <= 0x120)
        return (int)(cp - 0x100);
    if (cp >= 0x121 && cp <= 0x142)
        return (int)(cp - 0x121 + 0x7F);
    if (cp == 0x143)
        return 0xAD;
    return -1;
}

int32_t atn_byte_level_decode(const char *piece, size_t len, uint8_t *out) {
    const unsigned char *s = (const unsigned char *)piece;
    int32_t n = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int cl = atn_utf8_decode(s + i, len - i, &cp);
        if (cl <= 0)
            return -1;
        int b = byte_of_char(cp);
        if (b < 0)
            return -1;
        out[n++] = (uint8_t)b;
        i += (size_t)cl;
    }
    return n;
}

int32_t atn_byte_level_surface(const char *piece, size_t len, uint8_t *out, bool *complete) {
    int32_t n = atn_byte_level_decode(piece, len, out);
    if (complete)
        *complete = n >= 0 && atn_utf8_check(out, (size_t)n) == (size_t)n;
    return n;
}

char *atn_token_surface_guess(const char *text) {
    if (!text)
        return NULL;
    size_t len = strlen(text);
    uint8_t *out = malloc(len + 1);
    if (!out)
        return NULL;
    bool complete = false;
    int32_t n = atn_byte_level_surface(text, len, out, &complete);
    if (n < 0 && strstr(text, "\xe2\x96\x81")) {   /* SentencePiece's metaspace (T5, Marian): "\u2581the" */
        n = (int32_t)atn_metaspace_surface(text, len, "\xe2\x96\x81", (char *)out);
        complete = true;
    }
    if (n < 0 || !complete || memchr(out, 0, (size_t)n) || ((size_t)n == len && !memcmp(out, text, len))) {
        free(out);
        return NULL;
    }
    out[n] = 0;
    return (char *)out;
}

size_t atn_metaspace_surface(const char *piece, size_t len, const char *replacement, char *out) {
    size_t rl = replacement ? strlen(replacement) : 0, n = 0;
    for (size_t i = 0; i < len;) {
        if (rl && i + rl <= len && memcmp(piece + i, replacement, rl) == 0) {
            out[n++] = ' ';
            i += rl;
        } else {
            out[n++] = piece[i++];
        }
    }
    return n;
}

int atn_byte_fallback_byte(const char *piece, size_t len) {
    static const char hex[] = "0123456789ABCDEF";
    if (len != 6 || memcmp(piece, "<0x", 3) != 0 || piece[5] != '>')
        return -1;
    const char *h = strchr(hex, piece[3]), *l = strchr(hex, piece[4]);
    if (!piece[3] || !piece[4] || !h || !l)
        return -1;
    return (int)((h - hex) * 16 + (l - hex));
}

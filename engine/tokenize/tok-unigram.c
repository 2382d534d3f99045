#define _GNU_SOURCE   /* qsort_r */
/* Unigram, as the Rust tokenizers library's models::unigram computes it (model.rs
 * encode_optimized + Model::tokenize): the best segmentation of the word under the
 * pieces' log-probabilities, found left to right over byte positions.  Each position
 * keeps its best path; a piece ending there replaces it only when strictly better (so on
 * a tie the path found first, from the leftmost start, stays).  A character no piece
 * starts with exactly gets the unk piece at min score - 10.  Walking back, consecutive
 * unk pieces fuse into one; each resulting string is looked up again, and one the
 * vocabulary lacks becomes its <0xNN> bytes (byte_fallback; every byte piece spans the
 * whole string) or the unk id.  The pieces sit in a byte trie whose children are sorted
 * (binary search per byte).  Read only once built: threads may share it. */
#include "core/cancel.h"
#include "tokenize/tok-model.h"
#include "tokenize/tok-strtab.h"
#include "tokenize/unicode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { UNIGRAM_MAX_PIECES = 1 << 24 };
static const double K_UNK_PENALTY = 10.0;

typedef struct tnode {
    int32_t first, count;   /* its edges: edges[first .. first + count), sorted by byte */
    int32_t id;             /* the piece ending here, -1 if none */
} tnode;

typedef struct tedge {
    int32_t child;
    uint8_t byte;
} tedge;

typedef struct unigram_model {
    atn_tok_model base;
    int32_t n;
    char *arena;         /* every piece, NUL-terminated */
    size_t *off;         /* [n] */
    uint32_t *len;       /* [n] */
    double *score;       /* [n] */
    atn_tok_strtab lookup;   /* piece -> id, the last of duplicates */
    tnode *nodes;
    tedge *edges;
    int32_t nnodes;
    int32_t unk_id;      /* -1 if none */
    double min_score;
    bool byte_fallback;
    int32_t byte_id[256];
} unigram_model;

static int32_t trie_child(const unigram_model *m, int32_t node, uint8_t b) {
    const tnode *t = &m->nodes[node];
    int32_t lo = t->first, hi = t->first + t->count;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (m->edges[mid].byte < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->first + t->count && m->edges[lo].byte == b ? m->edges[lo].child : -1;
}

typedef struct best {
    double score;
    int32_t starts_at;   /* -1: no path yet */
    int32_t id;
} best;

static atn_status unknown_char(const char *word, size_t len, size_t at, atn_error *err) {
    uint32_t cp = 0;
    int cl = atn_utf8_decode((const unsigned char *)word + at, len - at, &cp);
    return atn_error_set(err, ATN_E_INVALID,
                         "Unigram: U+%04X (byte %zu of the word) is not in the vocabulary and the "
                         "model has no unk_id", cl > 0 ? cp : (uint32_t)(unsigned char)word[at], at);
}

static atn_status emit(const unigram_model *m, const char *word, size_t len, int32_t s, int32_t e,
                       atn_tok_pieces *out, atn_error *err) {
    int32_t id = atn_tok_strtab_get(&m->lookup, word + s, (size_t)(e - s));
    if (id < 0 && m->byte_fallback) {
        int32_t k = s;
        while (k < e && m->byte_id[(unsigned char)word[k]] >= 0)
            k++;
        if (k == e) {
            for (k = s; k < e; k++)
                if (!atn_tok_pieces_push(out, m->byte_id[(unsigned char)word[k]], s, e))
                    return atn_error_set(err, ATN_E_NOMEM, "Unigram: out of memory");
            return ATN_OK;
        }
    }
    if (id < 0) {
        if (m->unk_id < 0)
            return unknown_char(word, len, (size_t)s, err);
        id = m->unk_id;
    }
    return atn_tok_pieces_push(out, id, s, e) ? ATN_OK
                                              : atn_error_set(err, ATN_E_NOMEM, "Unigram: out of memory");
}

static atn_status unigram_tokenize(const atn_tok_model *base, const char *word, size_t len,
                                   atn_tok_pieces *out, atn_error *err) {
    const unigram_model *m = (const unigram_model *)base;
    if (len == 0)
        return ATN_OK;
    if (len > INT32_MAX / 2)
        return atn_error_set(err, ATN_E_NOMEM, "Unigram: a word of %zu bytes is too long", len);
    const unsigned char *u = (const unsigned char *)word;
    best *bp = malloc((len + 1) * sizeof *bp);
    int32_t *spans = NULL;
    if (!bp)
        return atn_error_set(err, ATN_E_NOMEM, "Unigram: out of memory");
    for (size_t i = 0; i <= len; i++)
        bp[i] = (best){0.0, -1, 0};
    const double unk_score = m->min_score - K_UNK_PENALTY;
    atn_status st = ATN_OK;
    for (size_t at = 0; at < len;) {
        if (atn_cancel_poll()) {   /* the lattice of a long word: each position a trie walk */
            st = atn_cancel_error(err, "running Unigram's Viterbi search");
            break;
        }
        double here = bp[at].score;
        bool single = false;
        uint32_t cp;
        int mb = atn_utf8_decode(u + at, len - at, &cp);
        if (mb <= 0)
            mb = 1;
        int32_t node = 0;
        for (size_t k = at; k < len; k++) {
            node = trie_child(m, node, u[k]);
            if (node < 0)
                break;
            int32_t id = m->nodes[node].id;
            if (id < 0)
                continue;
            size_t key_pos = k + 1;
            double cand = m->score[id] + here;
            best *t = &bp[key_pos];
            if (t->starts_at < 0 || cand > t->score) {
                t->score = cand;
                t->starts_at = (int32_t)at;
                t->id = id;
            }
            if (key_pos - at == (size_t)mb)
                single = true;
        }
        if (!single) {
            best *t = &bp[at + (size_t)mb];
            double cand = unk_score + here;
            if (t->starts_at < 0 || cand > t->score) {
                if (m->unk_id < 0) {
                    st = unknown_char(word, len, at, err);
                    break;
                }
                t->score = cand;
                t->starts_at = (int32_t)at;
                t->id = m->unk_id;
            }
        }
        at += (size_t)mb;
    }
    if (st == ATN_OK) {
        /* walk back: spans as (start, end) pairs in reverse, unk runs fused */
        spans = malloc((len + 1) * 2 * sizeof *spans);
        int32_t ns = 0;
        if (!spans) {
            st = atn_error_set(err, ATN_E_NOMEM, "Unigram: out of memory");
        } else {
            int32_t end = (int32_t)len, unk_end = -1, unk_start = -1;
            while (end > 0) {
                const best *b = &bp[end];
                int32_t start = b->starts_at;
                if (m->unk_id >= 0 && b->id == m->unk_id) {
                    if (unk_end < 0)
                        unk_end = end;
                    unk_start = start;
                } else {
                    if (unk_end >= 0) {
                        spans[2 * ns] = unk_start;
                        spans[2 * ns + 1] = unk_end;
                        ns++;
                        unk_end = -1;
                    }
                    spans[2 * ns] = start;
                    spans[2 * ns + 1] = end;
                    ns++;
                }
                end = start;
            }
            if (unk_end >= 0) {
                spans[2 * ns] = unk_start;
                spans[2 * ns + 1] = unk_end;
                ns++;
            }
            for (int32_t i = ns - 1; i >= 0 && st == ATN_OK; i--)
                st = emit(m, word, len, spans[2 * i], spans[2 * i + 1], out, err);
        }
    }
    free(spans);
    free(bp);
    return st;
}

static int32_t unigram_vocab_size(const atn_tok_model *base) {
    return ((const unigram_model *)base)->n;
}

static int32_t unigram_token_to_id(const atn_tok_model *base, const char *token, size_t len) {
    return atn_tok_strtab_get(&((const unigram_model *)base)->lookup, token, len);
}

static const char *unigram_id_to_token(const atn_tok_model *base, int32_t id) {
    const unigram_model *m = (const unigram_model *)base;
    return id >= 0 && id < m->n ? m->arena + m->off[id] : NULL;
}

static int32_t unigram_unk_id(const atn_tok_model *base) {
    return ((const unigram_model *)base)->unk_id;
}

static void unigram_free(atn_tok_model *base) {
    unigram_model *m = (unigram_model *)base;
    free(m->arena);
    free(m->off);
    free(m->len);
    free(m->score);
    atn_tok_strtab_clear(&m->lookup);
    free(m->nodes);
    free(m->edges);
    free(m);
}

static const atn_tok_model_ops unigram_ops = {
    .type = "Unigram",
    .tokenize = unigram_tokenize,
    .vocab_size = unigram_vocab_size,
    .token_to_id = unigram_token_to_id,
    .id_to_token = unigram_id_to_token,
    .unk_id = unigram_unk_id,
    .free = unigram_free,
};

/* ---- the trie ------------------------------------------------------------------------ */

static int cmp_piece_r(const void *pa, const void *pb, void *arg) {
    const unigram_model *m = arg;
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    uint32_t la = m->len[a], lb = m->len[b];
    int c = memcmp(m->arena + m->off[a], m->arena + m->off[b], la < lb ? la : lb);
    if (c)
        return c;
    if (la != lb)
        return la < lb ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int cmp_edge(const void *pa, const void *pb) {
    const int32_t *a = pa, *b = pb;   /* (parent, byte, child) */
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* Inserts the pieces in byte order, so that each one shares its path only with the one
 * before (a path stack), then groups the edges by parent.  Duplicates: the later id ends
 * the path, as the Rust token -> id map keeps the last. */
static bool build_trie(unigram_model *m) {
    int32_t *order = malloc((size_t)(m->n ? m->n : 1) * sizeof *order);
    size_t total = 0;
    for (int32_t i = 0; i < m->n; i++)
        total += m->len[i];
    if (total > (size_t)INT32_MAX / 4) {
        free(order);
        return false;
    }
    int32_t *tmp = malloc((total + 1) * 3 * sizeof *tmp);   /* edges (parent, byte, child) */
    int32_t *path = malloc((total + 2) * sizeof *path);      /* longest piece bound */
    m->nodes = malloc((total + 1) * sizeof *m->nodes);
    if (!order || !tmp || !path || !m->nodes) {
        free(order);
        free(tmp);
        free(path);
        return false;
    }
    for (int32_t i = 0; i < m->n; i++)
        order[i] = i;
    qsort_r(order, (size_t)m->n, sizeof *order, cmp_piece_r, m);
    m->nnodes = 1;
    m->nodes[0] = (tnode){0, 0, -1};
    int32_t nedges = 0, prev = -1, depth = 0;   /* path[0..depth] nodes of prev's bytes */
    path[0] = 0;
    for (int32_t k = 0; k < m->n; k++) {
        int32_t id = order[k];
        const unsigned char *p = (const unsigned char *)m->arena + m->off[id];
        uint32_t l = m->len[id];
        if (l == 0)
            continue;   /* the Rust trie never yields the empty piece */
        uint32_t lcp = 0;
        if (prev >= 0) {
            const unsigned char *q = (const unsigned char *)m->arena + m->off[prev];
            uint32_t ql = m->len[prev];
            while (lcp < l && lcp < ql && p[lcp] == q[lcp])
                lcp++;
        }
        if ((int32_t)lcp > depth)
            lcp = (uint32_t)depth;
        depth = (int32_t)lcp;
        for (uint32_t j = lcp; j < l; j++) {
            int32_t child = m->nnodes++;
            m->nodes[child] = (tnode){0, 0, -1};
            tmp[3 * nedges] = path[depth];
            tmp[3 * nedges + 1] = p[j];
            tmp[3 * nedges + 2] = child;
            nedges++;
            path[++depth] = child;
        }
        m->nodes[path[depth]].id = id;   /* the later duplicate comes later in order */
        prev = id;
    }
    qsort(tmp, (size_t)nedges, 3 * sizeof *tmp, cmp_edge);
    m->edges = malloc((size_t)(nedges ? nedges : 1) * sizeof *m->edges);
    if (!m->edges) {
        free(order);
        free(tmp);
        free(path);
        return false;
    }
    for (int32_t e = 0; e < nedges; e++) {
        int32_t parent = tmp[3 * e];
        if (m->nodes[parent].count == 0)
            m->nodes[parent].first = e;
        m->nodes[parent].count++;
        m->edges[e] = (tedge){tmp[3 * e + 2], (uint8_t)tmp[3 * e + 1]};
    }
    free(order);
    free(tmp);
    free(path);
    return true;
}

atn_tok_model *atn_tok_unigram_from_json(const cJSON *model, const char *file, const char *path,
                                         atn_error *err) {
    if (atn_tok_model_json_check(model, &file, &path, "Unigram", err))
        return NULL;
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    if (!cJSON_IsArray(vocab)) {
        atn_error_set(err, ATN_E_FORMAT, "%s: %s.vocab: %s", file, path,
                      vocab ? "should be an array of [piece, score]" : "missing");
        return NULL;
    }
    int n = cJSON_GetArraySize(vocab);
    if (n <= 0 || n > UNIGRAM_MAX_PIECES) {
        atn_error_set(err, ATN_E_FORMAT, "%s: %s.vocab: %s", file, path,
                      n <= 0 ? "empty" : "more than 16777216 pieces");
        return NULL;
    }
    unigram_model *m = calloc(1, sizeof *m);
    if (!m) {
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", file);
        return NULL;
    }
    m->base.ops = &unigram_ops;
    m->n = n;
    m->unk_id = -1;
    m->min_score = INFINITY;
    m->off = malloc((size_t)n * sizeof *m->off);
    m->len = malloc((size_t)n * sizeof *m->len);
    m->score = malloc((size_t)n * sizeof *m->score);
    if (!m->off || !m->len || !m->score || !atn_tok_strtab_init(&m->lookup, (size_t)n))
        goto nomem;
    size_t total = 0;
    int i = 0;
    for (const cJSON *e = vocab->child; e; e = e->next, i++) {
        if (atn_cancel_poll()) {
            atn_cancel_error(err, "reading the vocabulary");
            goto fail;
        }
        const cJSON *p = cJSON_GetArrayItem(e, 0), *s = cJSON_GetArrayItem(e, 1);
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 || !cJSON_IsString(p)) {
            atn_error_set(err, ATN_E_FORMAT, "%s: %s.vocab[%d]: should be a pair [piece, score]", file, path, i);
            goto fail;
        }
        if (!cJSON_IsNumber(s) || !isfinite(s->valuedouble)) {
            atn_error_set(err, ATN_E_FORMAT, "%s: %s.vocab[%d][1]: the score of \"%.60s\" is %s", file, path, i,
                          p->valuestring, cJSON_IsNumber(s) ? "not finite" : "not a number");
            goto fail;
        }
        total += strlen(p->valuestring) + 1;
    }
    m->arena = malloc(total ? total : 1);
    if (!m->arena)
        goto nomem;
    size_t at = 0;
    i = 0;
    for (const cJSON *e = vocab->child; e; e = e->next, i++) {
        const char *p = cJSON_GetArrayItem(e, 0)->valuestring;
        double sc = cJSON_GetArrayItem(e, 1)->valuedouble;
        size_t l = strlen(p);
        memcpy(m->arena + at, p, l + 1);
        m->off[i] = at;
        m->len[i] = (uint32_t)l;
        m->score[i] = sc;
        at += l + 1;
        if (sc < m->min_score)
            m->min_score = sc;
        if (atn_tok_strtab_set(&m->lookup, p, l, i) < 0)
            goto nomem;
    }
    const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_id");
    if (unk && !cJSON_IsNull(unk)) {
        double v = cJSON_IsNumber(unk) ? unk->valuedouble : -1;
        if (!cJSON_IsNumber(unk) || v < 0 || v != floor(v)) {
            atn_error_set(err, ATN_E_FORMAT, "%s: %s.unk_id: should be null or a non-negative integer", file, path);
            goto fail;
        }
        if (v >= n) {
            atn_error_set(err, ATN_E_FORMAT, "%s: %s.unk_id: %.0f is past the %d pieces of the vocabulary",
                          file, path, v, n);
            goto fail;
        }
        m->unk_id = (int32_t)v;
    }
    const cJSON *bf = cJSON_GetObjectItemCaseSensitive(model, "byte_fallback");
    if (bf && !cJSON_IsNull(bf)) {
        if (!cJSON_IsBool(bf)) {
            atn_error_set(err, ATN_E_FORMAT, "%s: %s.byte_fallback: should be true, false or null", file, path);
            goto fail;
        }
        m->byte_fallback = cJSON_IsTrue(bf);
    }
    for (int b = 0; b < 256; b++) {
        char code[8];
        snprintf(code, sizeof code, "<0x%02X>", b);
        m->byte_id[b] = atn_tok_strtab_get(&m->lookup, code, 6);
    }
    if (!build_trie(m))
        goto nomem;
    return &m->base;
nomem:
    atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", file);
fail:
    unigram_free(&m->base);
    return NULL;
}

/* The training lab's tasks: the vocabulary and each batch.
 *
 * Vocabulary: [PAD] [UNK] [CLS] [SEP] [MASK], then the task's symbols ("0".."9", "a".."z",
 * "A".."Z", as many as --symbols) and "(" ")" "+" "=", or, for a text file, its characters
 * (whitespace left out: a WordPiece vocabulary cannot hold it).
 *
 * Each sequence is a layout of tokens and the positions whose token is the answer.  A
 * decoder reads the whole sequence and is scored on predicting the answers (labels = the
 * token there, -100 elsewhere; shifted inside as GPT-2 does); an encoder reads [MASK] at
 * the answers and is scored on filling them (BERT's masked-LM).  L is --length:
 *     copy / reverse / sort   [CLS] x1..xL [SEP] y1..yL                   answers: y
 *     induction               [CLS] z.. r1..rm z.. r1..rm z.., m from L/2 to L, the 2(L-m)
 *                             random z split at random: answers: the repeat (a decoder from
 *                             r2 on: r1 follows nothing it has seen)
 *     brackets                [CLS] b1..bL [SEP] a    a = "1" balanced, "0" not (half each)
 *     modadd                  [CLS] a + b = c         c = (a + b) mod symbols
 *     text                    L characters of the file from a random place; a decoder every
 *                             token but the first, an encoder --mask-prob of them (one at least) */
#include "train/train-private.h"
#include "core/files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char symbol_chars[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
static const char *extras[] = {"(", ")", "+", "="};
static const char *specials[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

int32_t atn_tr_task_tokens(const atn_train_options *o) {
    int32_t L = o->length;
    switch (o->task) {
    case ATN_TASK_COPY:
    case ATN_TASK_REVERSE:
    case ATN_TASK_SORT: return 2 * L + 2;
    case ATN_TASK_INDUCTION: return 2 * L + 1;
    case ATN_TASK_BRACKETS: return L + 3;
    case ATN_TASK_MODADD: return 6;
    case ATN_TASK_TEXT: return L;
    }
    return L;
}

/* Next code point of UTF-8 s (len bytes left) into *cp; its byte count (1 for a bad byte,
 * taken as U+FFFD). */
static int utf8_next(const unsigned char *s, size_t len, uint32_t *cp) {
    unsigned c = s[0];
    int k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (!k || (size_t)k > len) {
        *cp = 0xFFFD;
        return 1;
    }
    uint32_t v = k == 1 ? c : c & (0x7F >> k);
    for (int i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
        v = (v << 6) | (s[i] & 0x3F);
    }
    *cp = v;
    return k;
}

static bool is_space(uint32_t c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0x3000 || c == 0xA0;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

#define TEXT_MAX_BYTES ((size_t)256 << 20)
#define TEXT_MAX_CHARS 8192

static atn_status text_vocab(atn_trainer *t, atn_error *err) {
    char *data = NULL;
    size_t len = 0;
    atn_status st = atn_read_file(t->o.text_path, TEXT_MAX_BYTES, &data, &len, err);
    if (st != ATN_OK)
        return st;
    uint32_t *cps = malloc((len + 1) * sizeof(uint32_t));
    if (!cps) {
        free(data);
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", t->o.text_path);
    }
    size_t count = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        i += (size_t)utf8_next((const unsigned char *)data + i, len - i, &cp);
        if (!is_space(cp) && cp >= 0x20)
            cps[count++] = cp;
    }
    free(data);
    if (count < (size_t)t->o.length + 1) {
        free(cps);
        return atn_error_set(err, ATN_E_INVALID, "%s: %zu characters (not counting whitespace); --length %d needs more",
                             t->o.text_path, count, (int)t->o.length);
    }
    uint32_t *uniq = malloc(count * sizeof(uint32_t));
    if (!uniq) {
        free(cps);
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", t->o.text_path);
    }
    memcpy(uniq, cps, count * sizeof(uint32_t));
    qsort(uniq, count, sizeof(uint32_t), cmp_u32);
    size_t nu = 0;
    for (size_t i = 0; i < count; i++)
        if (!nu || uniq[nu - 1] != uniq[i])
            uniq[nu++] = uniq[i];
    if (nu > TEXT_MAX_CHARS) {
        free(cps), free(uniq);
        return atn_error_set(err, ATN_E_INVALID, "%s: %zu distinct characters, more than %d", t->o.text_path, nu,
                             TEXT_MAX_CHARS);
    }
    t->V = ATN_TR_NSPECIAL + (int32_t)nu;
    t->vocab = calloc((size_t)t->V, sizeof(char *));
    t->text_ids = malloc(count * sizeof(int32_t));
    if (!t->vocab || !t->text_ids) {
        free(cps), free(uniq);
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", t->o.text_path);
    }
    for (int i = 0; i < ATN_TR_NSPECIAL; i++)
        t->vocab[i] = strdup(specials[i]);
    for (size_t i = 0; i < nu; i++) {
        char buf[8];
        uint32_t c = uniq[i];
        int k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (k == 1)
            buf[0] = (char)c;
        else {
            for (int j = k - 1; j > 0; j--, c >>= 6)
                buf[j] = (char)(0x80 | (c & 0x3F));
            buf[0] = (char)((0xF00 >> k) | c);
        }
        buf[k] = 0;
        t->vocab[ATN_TR_NSPECIAL + i] = strdup(buf);
    }
    for (size_t i = 0; i < count; i++) {   /* binary search: uniq is sorted */
        size_t lo = 0, hi = nu;
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (uniq[mid] <= cps[i])
                lo = mid;
            else
                hi = mid;
        }
        t->text_ids[i] = ATN_TR_NSPECIAL + (int32_t)lo;
    }
    t->text_len = (int64_t)count;
    free(cps), free(uniq);
    for (int32_t i = 0; i < t->V; i++)
        if (!t->vocab[i])
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    return ATN_OK;
}

atn_status atn_tr_vocab_build(atn_trainer *t, atn_error *err) {
    t->n_special = ATN_TR_NSPECIAL;
    if (t->o.task == ATN_TASK_TEXT)
        return text_vocab(t, err);
    t->sym0 = ATN_TR_NSPECIAL;
    t->extra0 = t->sym0 + t->o.symbols;
    t->V = t->extra0 + 4;
    t->vocab = calloc((size_t)t->V, sizeof(char *));
    if (!t->vocab)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    for (int32_t i = 0; i < t->V; i++) {
        char buf[2] = {0, 0};
        const char *s = i < ATN_TR_NSPECIAL ? specials[i] : i < t->extra0 ? (buf[0] = symbol_chars[i - t->sym0], buf)
                                                                           : extras[i - t->extra0];
        t->vocab[i] = strdup(s);
        if (!t->vocab[i])
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    return ATN_OK;
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* A random string of L brackets: balanced (a random walk that never goes below zero and
 * ends at zero) or, resampled until it is not, uniform. */
static void brackets(atn_tr_rng *r, int32_t *out, int32_t L, int32_t open, int32_t close, bool balanced) {
    if (balanced) {
        int32_t depth = 0, opens = 0;
        for (int32_t i = 0; i < L; i++) {
            bool can_open = opens < L / 2, can_close = depth > 0;
            bool o = can_open && (!can_close || atn_tr_rng_uniform(r) < 0.5);
            out[i] = o ? open : close;
            depth += o ? 1 : -1;
            opens += o;
        }
        return;
    }
    for (;;) {
        int32_t depth = 0;
        bool ok = true;
        for (int32_t i = 0; i < L; i++) {
            bool o = atn_tr_rng_uniform(r) < 0.5;
            out[i] = o ? open : close;
            depth += o ? 1 : -1;
            ok &= depth >= 0;
        }
        if (!ok || depth)
            return;
    }
}

/* One sequence: seq [n] and ans [n] (1 = an answer position). */
static void one_sequence(atn_trainer *t, int32_t *seq, uint8_t *ans) {
    const atn_train_options *o = &t->o;
    atn_tr_rng *r = &t->data_rng;
    int32_t L = o->length, n = t->n, S = o->symbols;
    memset(ans, 0, (size_t)n);
    switch (o->task) {
    case ATN_TASK_COPY:
    case ATN_TASK_REVERSE:
    case ATN_TASK_SORT:
        seq[0] = ATN_TR_CLS, seq[L + 1] = ATN_TR_SEP;
        for (int32_t i = 0; i < L; i++)
            seq[1 + i] = t->sym0 + atn_tr_rng_below(r, S);
        for (int32_t i = 0; i < L; i++) {
            seq[L + 2 + i] = o->task == ATN_TASK_REVERSE ? seq[L - i] : seq[1 + i];
            ans[L + 2 + i] = 1;
        }
        if (o->task == ATN_TASK_SORT)
            qsort(seq + L + 2, (size_t)L, sizeof(int32_t), cmp_i32);
        break;
    case ATN_TASK_INDUCTION: {
        /* a run of m (L/2..L) twice, with 2 (L - m) random tokens split at random before, between
           and after the copies: neither the distance between the copies nor their place is
           fixed, so attending a fixed distance back cannot stand in for an induction head */
        int32_t lo = L / 2 > 1 ? L / 2 : 1, m = lo + atn_tr_rng_below(r, L - lo + 1), free_ = 2 * (L - m);
        int32_t before = atn_tr_rng_below(r, free_ + 1), gap = atn_tr_rng_below(r, free_ - before + 1);
        int32_t first = 1 + before, second = first + m + gap;
        seq[0] = ATN_TR_CLS;
        for (int32_t i = 1; i < n; i++)
            seq[i] = t->sym0 + atn_tr_rng_below(r, S);
        for (int32_t i = 0; i < m; i++) {
            seq[second + i] = seq[first + i];
            ans[second + i] = !o->decoder || i > 0;
        }
        break;
    }
    case ATN_TASK_BRACKETS: {
        bool balanced = atn_tr_rng_uniform(r) < 0.5;
        seq[0] = ATN_TR_CLS;
        brackets(r, seq + 1, L, t->extra0, t->extra0 + 1, balanced);
        seq[L + 1] = ATN_TR_SEP;
        seq[L + 2] = t->sym0 + (balanced ? 1 : 0);
        ans[L + 2] = 1;
        break;
    }
    case ATN_TASK_MODADD: {
        int32_t a = atn_tr_rng_below(r, S), b = atn_tr_rng_below(r, S);
        seq[0] = ATN_TR_CLS, seq[1] = t->sym0 + a, seq[2] = t->extra0 + 2, seq[3] = t->sym0 + b;
        seq[4] = t->extra0 + 3, seq[5] = t->sym0 + (a + b) % S;
        ans[5] = 1;
        break;
    }
    case ATN_TASK_TEXT: {
        int64_t start = (int64_t)(atn_tr_rng_uniform(r) * (double)(t->text_len - n + 1));
        memcpy(seq, t->text_ids + start, (size_t)n * sizeof(int32_t));
        if (o->decoder) {
            memset(ans + 1, 1, (size_t)n - 1);
        } else {
            bool any = false;
            for (int32_t i = 0; i < n; i++)
                any |= ans[i] = atn_tr_rng_uniform(r) < o->mask_prob;
            if (!any)
                ans[atn_tr_rng_below(r, n)] = 1;
        }
        break;
    }
    }
}

void atn_tr_task_batch(atn_trainer *t) {
    int32_t n = t->n;
    uint8_t ans[1100];   /* n <= 2 * 512 + 2 */
    for (int32_t b = 0; b < t->B; b++) {
        int32_t *ids = t->ids + (size_t)b * n, *lab = t->labels + (size_t)b * n;
        one_sequence(t, ids, ans);
        for (int32_t i = 0; i < n; i++) {
            lab[i] = ans[i] ? ids[i] : -100;
            if (ans[i] && !t->o.decoder)
                ids[i] = ATN_TR_MASK;
        }
    }
}

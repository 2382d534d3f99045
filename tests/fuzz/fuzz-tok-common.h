/* Shared by the subword-model fuzz targets (fuzz-tok-bpe.c, fuzz-tok-unigram.c,
 * fuzz-tok-charsmap.c): the test-only definitions of atn_tok_pieces_push /
 * atn_tok_model_free (weak, until the pipeline branch defines them in the engine), and
 * the checks every model's pieces must pass. */
#ifndef ATN_FUZZ_TOK_COMMON_H
#define ATN_FUZZ_TOK_COMMON_H

#include "fuzz-tokenize-common.h"
#include "tokenize/tok-model.h"

/* Checks a model's lookups: every id below vocab_size that has a piece looks itself up
 * (or a later duplicate's id), ids past the end have none. */
static inline void fuzz_tok_lookups(const atn_tok_model *m) {
    int32_t n = m->ops->vocab_size(m);
    if (n < 0)
        fuzz_fail("a negative vocab_size", NULL);
    for (int32_t i = 0; i < n && i < 100000; i++) {
        const char *t = m->ops->id_to_token(m, i);
        if (!t)
            continue;
        int32_t id = m->ops->token_to_id(m, t, strlen(t));
        if (id < 0 || id >= n || !m->ops->id_to_token(m, id))
            fuzz_fail("a piece that does not look itself up", t);
    }
    if (m->ops->id_to_token(m, n) || m->ops->id_to_token(m, -1))
        fuzz_fail("id_to_token out of range", NULL);
    int32_t unk = m->ops->unk_id(m);
    if (unk < -1 || unk >= (n ? n : 1))
        fuzz_fail("unk_id out of range", NULL);
}

/* Tokenizes word; the pieces must have ids of the vocabulary and spans that start at 0,
 * follow each other (a piece starts where the one before ended, or shares its span: the
 * byte_fallback pieces of one Unigram string), never go backwards; with exact, the last
 * ends at the word's end.  An error must carry a message. */
static inline void fuzz_tok_word(const atn_tok_model *m, const char *word, size_t len, bool exact) {
    if (len == 0)
        return;
    atn_tok_pieces p = {0};
    atn_error err = {0};
    atn_status s = m->ops->tokenize(m, word, len, &p, &err);
    if (s != ATN_OK) {
        if (s != ATN_E_INVALID || !err.message[0] || err.status != s)
            fuzz_fail("a tokenize error without its message", err.message);
        free(p.v);
        return;
    }
    int32_t n = m->ops->vocab_size(m), prev_s = 0, prev_e = 0;
    for (int32_t i = 0; i < p.n; i++) {
        const atn_tok_piece *q = &p.v[i];
        if (q->id < 0 || q->id >= n || !m->ops->id_to_token(m, q->id))
            fuzz_fail("a piece id outside the vocabulary", NULL);
        if (q->start < 0 || q->end < q->start)
            fuzz_fail("a piece span that goes backwards", NULL);
        bool follows = i == 0 ? q->start == 0 : q->start == prev_e || (q->start == prev_s && q->end == prev_e);
        if (!follows)
            fuzz_fail("pieces that do not follow each other", word);
        prev_s = q->start;
        prev_e = q->end;
    }
    if (exact && p.n && (size_t)prev_e != len)
        fuzz_fail("pieces that do not end at the word's end", word);
    free(p.v);
}

/* Words to try: fixed ones (ASCII, accents, CJK, emoji, byte-level text, a long word)
 * and slices of the fuzz input. */
static const char *const fuzz_tok_words[] = {
    "the", "unaffable", "\xc4\xa0the", "caf\xc3\xa9", "cafe\xcc\x81", "\xe6\x88\x91\xe7\x88\xb1\xe4\xbd\xa0",
    "\xc3\xa7\xc4\xaa\xc2\xb1", "\xf0\x9f\x98\x80\xe2\x80\x8d\xf0\x9f\x91\xa9", "\xe2\x96\x81hello",
    "<0x41>", "<unk>", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "1234", "a b",
};

#endif

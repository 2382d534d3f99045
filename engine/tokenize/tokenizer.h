/* The tokenizer interface: what a model needs of any tokenizer (WordPiece today; BPE or
 * Unigram from a tokenizer.json later, each one more implementation of these ops).
 * Internal to the engine: models call it through atn_model_encode and the masked-LM head
 * through atn_tokenizer_id_info.
 *
 * An implementation is a struct whose first member is an atn_tokenizer (so a pointer to
 * it is an atn_tokenizer *) with ops pointing at a static table.  The wrappers below check
 * their arguments and call the ops; a tokenizer is immutable once made, so one may be
 * shared by threads.  engine/tokenize/wordpiece.h makes the WordPiece one; engine/tokenize/unicode.h has the
 * UTF-8 and normalisation helpers a new implementation can share. */
#ifndef ATN_TOKENIZER_H
#define ATN_TOKENIZER_H

#include "attnscope.h"

typedef struct atn_tokenizer atn_tokenizer;

/* What the tokenizer knows of one vocabulary id, for tokens given as ids and for the
 * masked-LM head's guesses.  The strings are borrowed from the tokenizer. */
typedef struct atn_vocab_entry {
    const char *text;       /* the vocabulary entry: "##ing", "[MASK]" */
    const char *surface;    /* how it reads in a text: "ing" (a continuation without its mark) */
    atn_token_role role;    /* by the entry's name: "[MASK]" is ATN_TOKEN_MASK at any id */
    bool continuation;      /* continues the word before it ("##ing") */
    bool special;           /* a control entry of the vocabulary: "[CLS]", "[UNK]", "[unused1]" */
    bool partial;           /* a byte-level piece that is part of one UTF-8 character */
} atn_vocab_entry;

typedef struct atn_tokenizer_ops {
    const char *kind;   /* "wordpiece" */
    /* Tokenizes text (and text_pair when not NULL) into an encoding of at most max_len
     * tokens (0 = no limit), with ids, type ids, roles and byte spans (the contract of
     * atn_tokenizer_encode).  Arguments are checked by the wrapper: tok, text, out not
     * NULL, *out already NULL. */
    atn_status (*encode)(const atn_tokenizer *tok, const char *text, const char *text_pair,
                         int32_t max_len, atn_encoding **out, atn_error *err);
    int32_t (*vocab_size)(const atn_tokenizer *tok);
    int32_t (*token_to_id)(const atn_tokenizer *tok, const char *token);   /* -1 if absent */
    /* false when id is out of range */
    bool (*id_info)(const atn_tokenizer *tok, int32_t id, atn_vocab_entry *out);
    /* the id of the token with this role ([CLS] for ATN_TOKEN_CLS); -1 if none */
    int32_t (*special_id)(const atn_tokenizer *tok, atn_token_role role);
    void (*free)(atn_tokenizer *tok);
} atn_tokenizer_ops;

struct atn_tokenizer {
    const atn_tokenizer_ops *ops;
};

/* Frees any tokenizer; NULL is fine. */
void atn_tokenizer_free(atn_tokenizer *tok);
/* "wordpiece"; "" for NULL. */
const char *atn_tokenizer_kind(const atn_tokenizer *tok);

/* Number of ids (0 for NULL). */
int32_t atn_tokenizer_vocab_size(const atn_tokenizer *tok);
int32_t atn_tokenizer_token_to_id(const atn_tokenizer *tok, const char *token);  /* -1 if absent or NULL */
const char *atn_tokenizer_id_to_token(const atn_tokenizer *tok, int32_t id);     /* NULL if out of range */
/* Fills *out for id; false (out untouched) when tok or out is NULL or id out of range. */
bool atn_tokenizer_id_info(const atn_tokenizer *tok, int32_t id, atn_vocab_entry *out);
/* The id of the [CLS], [SEP], [PAD], [UNK] or [MASK] token by its role; -1 when the
 * vocabulary lacks it, for ATN_TOKEN_WORD and for a NULL tok. */
int32_t atn_tokenizer_special_id(const atn_tokenizer *tok, atn_token_role role);

/* Tokenizes into [CLS] A [SEP] or, when text_pair is not NULL, [CLS] A [SEP] B [SEP]
 * (type ids 0 for [CLS] A [SEP], 1 for B [SEP]; mask all 1).
 *
 * max_len is the model's max positions (0 = no limit; otherwise at least 3).  Longer
 * input is truncated longest-first exactly as HF's truncation=True does, setting
 * enc->truncated and enc->n_dropped (word pieces removed).
 *
 * Special tokens written literally in the text ("the [MASK] sat") become that token, as
 * HF's added-token splitting does; they keep their span and segment and have
 * special = true.  Every token has its role (ATN_TOKEN_CLS ... from the special token's
 * id, ATN_TOKEN_UNK for a word the vocabulary cannot spell) and continuation set for
 * the pieces after a word's first.  [CLS] and [SEP] added around the segments have
 * start = end = -1 and segment = -1.  Every other token has the byte span [start, end)
 * in its own segment's text of the characters it came from (a piece of a character that
 * normalisation split, like one jamo of a Hangul syllable, carries that whole
 * character's span).  Token text is the vocabulary entry ("##ing", "[UNK]").
 *
 * Errors: ATN_E_INVALID for a NULL tok, text or out, a max_len that is too small, or
 * invalid UTF-8 in text or text_pair (naming the byte offset); ATN_E_NOMEM.
 * *out is set only on success (NULL otherwise); free it with atn_encoding_free. */
atn_status atn_tokenizer_encode(const atn_tokenizer *tok, const char *text,
                                const char *text_pair, int32_t max_len, atn_encoding **out,
                                atn_error *err);

#endif

/* The WordPiece tokenizer of BERT models, matching Hugging Face's (slow, Python)
 * BertTokenizer token for token: basic tokenization (clean, CJK split, NFC, lower-case,
 * strip accents, punctuation split) then greedy longest-match WordPiece.  Internal to
 * the engine: models call it through atn_model_encode. */
#ifndef ATN_TOKENIZER_H
#define ATN_TOKENIZER_H

#include "attnscope.h"

typedef struct atn_tokenizer atn_tokenizer;

typedef struct atn_tokenizer_options {
    bool lower_case;              /* do_lower_case; default true */
    int strip_accents;            /* -1 unset (follows lower_case, as HF), 0 false, 1 true */
    bool tokenize_chinese_chars;  /* default true */
} atn_tokenizer_options;

void atn_tokenizer_options_init(atn_tokenizer_options *o);

/* Reads do_lower_case, strip_accents and tokenize_chinese_chars from a Hugging Face
 * tokenizer_config.json (other keys are ignored, so special_tokens_map.json may be given
 * too).  A NULL path or a file that does not exist leaves o unchanged and returns ATN_OK;
 * unreadable files and invalid JSON or values of the wrong type are errors naming the
 * file and key.  A JSON null leaves the option as it was. */
atn_status atn_tokenizer_options_from_json(atn_tokenizer_options *o,
                                           const char *tokenizer_config_path, atn_error *err);

/* Loads vocab.txt: one token per line, id = line index (lines end with \n, \r\n or \r,
 * as Python's universal newlines read them).  A token listed twice maps to its last id,
 * as in HF.  Errors: missing file (ATN_E_IO), empty file, a line that is not UTF-8,
 * no [UNK], [CLS] or [SEP] token (ATN_E_FORMAT), each naming the file (and line).
 * o may be NULL for the defaults.  Returns NULL on error. */
atn_tokenizer *atn_tokenizer_load(const char *vocab_path, const atn_tokenizer_options *o,
                                  atn_error *err);
/* The same from memory (the data is copied); origin names it in messages. */
atn_tokenizer *atn_tokenizer_from_buffer(const char *data, size_t len, const char *origin,
                                         const atn_tokenizer_options *o, atn_error *err);
void atn_tokenizer_free(atn_tokenizer *tok);

/* The options in effect (strip_accents resolved to 0 or 1). */
atn_tokenizer_options atn_tokenizer_options_of(const atn_tokenizer *tok);

/* Number of ids: the number of lines of vocab.txt. */
int32_t atn_tokenizer_vocab_size(const atn_tokenizer *tok);
int32_t atn_tokenizer_token_to_id(const atn_tokenizer *tok, const char *token);  /* -1 if absent */
const char *atn_tokenizer_id_to_token(const atn_tokenizer *tok, int32_t id);     /* NULL if out of range */
/* The id of "[CLS]" "[SEP]" "[PAD]" "[UNK]" "[MASK]"; -1 when the vocabulary lacks it. */
int32_t atn_tokenizer_special_id(const atn_tokenizer *tok, const char *which);

/* What the tokenizer knows of one vocabulary id, for tokens given as ids and for the
 * masked-LM head's guesses.  The strings are borrowed from the tokenizer. */
typedef struct atn_vocab_entry {
    const char *text;       /* the vocabulary entry: "##ing", "[MASK]" */
    const char *surface;    /* how it reads in a text: "ing" (a continuation without "##") */
    atn_token_role role;    /* by the entry's name: "[MASK]" is ATN_TOKEN_MASK at any id */
    bool continuation;      /* a "##" piece */
    bool special;           /* a bracketed entry: "[CLS]", "[UNK]", "[unused1]" */
} atn_vocab_entry;

/* Fills *out for id; false (out untouched) when tok or out is NULL or id out of range. */
bool atn_tokenizer_id_info(const atn_tokenizer *tok, int32_t id, atn_vocab_entry *out);

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
 * the "##" pieces after a word's first.  [CLS] and [SEP] added around the segments have start = end = -1 and
 * segment = -1.  Every other token has the byte span [start, end) in its own segment's
 * text of the characters it came from (a piece of a character that normalisation split,
 * like one jamo of a Hangul syllable, carries that whole character's span).  Token text
 * is the vocabulary entry ("##ing", "[UNK]").
 *
 * Invalid UTF-8 in text or text_pair: ATN_E_INVALID naming the byte offset.
 * *out is set only on success; free it with atn_encoding_free. */
atn_status atn_tokenizer_encode(const atn_tokenizer *tok, const char *text,
                                const char *text_pair, int32_t max_len, atn_encoding **out,
                                atn_error *err);

#endif

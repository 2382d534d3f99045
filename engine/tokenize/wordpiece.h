/* The WordPiece tokenizer of BERT models, matching Hugging Face's (slow, Python)
 * BertTokenizer token for token: basic tokenization (clean, CJK split, NFC, lower-case,
 * strip accents, punctuation split) then greedy longest-match WordPiece.  One
 * implementation of the tokenizer interface (tokenizer.h): what these functions make is
 * used and freed through atn_tokenizer_*.  Internal to the engine. */
#ifndef ATN_WORDPIECE_H
#define ATN_WORDPIECE_H

#include "tokenize/tokenizer.h"

typedef struct atn_wordpiece_options {
    bool lower_case;              /* do_lower_case; default true */
    int strip_accents;            /* -1 unset (follows lower_case, as HF), 0 false, 1 true */
    bool tokenize_chinese_chars;  /* default true */
} atn_wordpiece_options;

void atn_wordpiece_options_init(atn_wordpiece_options *o);

/* Reads do_lower_case, strip_accents and tokenize_chinese_chars from a Hugging Face
 * tokenizer_config.json (other keys are ignored, so special_tokens_map.json may be given
 * too).  A NULL path or a file that does not exist leaves o unchanged and returns ATN_OK;
 * unreadable files and invalid JSON or values of the wrong type are errors naming the
 * file and key.  A JSON null leaves the option as it was. */
atn_status atn_wordpiece_options_from_json(atn_wordpiece_options *o,
                                           const char *tokenizer_config_path, atn_error *err);

/* Loads vocab.txt: one token per line, id = line index (lines end with \n, \r\n or \r,
 * as Python's universal newlines read them).  A token listed twice maps to its last id,
 * as in HF.  Errors: missing file (ATN_E_IO), empty file, a line that is not UTF-8,
 * no [UNK], [CLS] or [SEP] token (ATN_E_FORMAT), each naming the file (and line).
 * o may be NULL for the defaults.  Returns NULL on error; free with atn_tokenizer_free.
 *
 * Its vocabulary entries (atn_tokenizer_id_info): "##" marks a continuation; an entry
 * written in brackets, longer than "[]", is special. */
atn_tokenizer *atn_wordpiece_load(const char *vocab_path, const atn_wordpiece_options *o,
                                  atn_error *err);
/* The same from memory (the data is copied); origin names it in messages. */
atn_tokenizer *atn_wordpiece_from_buffer(const char *data, size_t len, const char *origin,
                                         const atn_wordpiece_options *o, atn_error *err);

/* The options in effect (strip_accents resolved to 0 or 1); the defaults (strip_accents
 * -1) for a tokenizer that is not WordPiece or NULL. */
atn_wordpiece_options atn_wordpiece_options_of(const atn_tokenizer *tok);

#endif

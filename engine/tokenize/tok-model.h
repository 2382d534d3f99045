/* The subword models of a Hugging Face tokenizer.json pipeline (internal to the engine).
 *
 * A tokenizer.json tokenizer is a pipeline: added tokens split out first, then the
 * normalizer, the pre-tokenizer (which cuts the normalized text into words), the model
 * (which cuts each word into vocabulary pieces) and the post-processor (special tokens,
 * type ids).  engine/tokenize/tok-pipeline.c runs the pipeline and implements the tokenizer
 * interface (engine/tokenize/tokenizer.h); the models are behind this header so that each one is
 * its own file: WordPiece and WordLevel (tok-wordlevel.c / the WordPiece greedy match),
 * BPE (tok-bpe.c: merges by rank, byte-level alphabet, continuing_subword_prefix,
 * end_of_word_suffix, unk_token, fuse_unk, byte_fallback) and Unigram (tok-unigram.c:
 * Viterbi over the scored pieces).
 *
 * A model is immutable once made and may be shared by threads. */
#ifndef ATN_TOK_MODEL_H
#define ATN_TOK_MODEL_H

#include "attnscope.h"

#include <cjson/cJSON.h>

/* One piece of a word: its vocabulary id and the bytes [start, end) of the word it
 * covers (offsets into the word string passed to tokenize, as the Rust library's
 * Token.offsets are relative to the pre-tokenized split). */
typedef struct atn_tok_piece {
    int32_t id;
    int32_t start, end;
} atn_tok_piece;

/* A growable array of pieces (the caller's; tokenize appends).  Free v with free(). */
typedef struct atn_tok_pieces {
    atn_tok_piece *v;
    int32_t n, cap;
} atn_tok_pieces;

/* Appends one piece; false on out of memory. */
bool atn_tok_pieces_push(atn_tok_pieces *p, int32_t id, int32_t start, int32_t end);

typedef struct atn_tok_model atn_tok_model;

typedef struct atn_tok_model_ops {
    const char *type;   /* tokenizer.json's model "type": "BPE", "Unigram", "WordPiece", "WordLevel" */
    /* Cuts word (len bytes of UTF-8, already normalized and pre-tokenized, never empty)
       into pieces appended to out.  A word the model cannot spell gives its unk piece(s)
       as the Rust library does; a model without unk_token that cannot spell it answers
       ATN_E_INVALID naming the character -- except BPE, which leaves such a character out
       as the Rust library does (offsets then count only the characters kept).  Two Rust
       quirks are kept: BPE byte_fallback with a continuing_subword_prefix or
       end_of_word_suffix gives one piece per byte of the affixed string, so spans may run
       past len; Unigram byte_fallback pieces of one string all span that string.  HF shows
       a Unigram unk piece as the text it covers, not as the unk token.  ATN_E_NOMEM. */
    atn_status (*tokenize)(const atn_tok_model *m, const char *word, size_t len,
                           atn_tok_pieces *out, atn_error *err);
    int32_t (*vocab_size)(const atn_tok_model *m);   /* highest id + 1 */
    int32_t (*token_to_id)(const atn_tok_model *m, const char *token, size_t len);   /* -1 if absent */
    const char *(*id_to_token)(const atn_tok_model *m, int32_t id);   /* NULL if absent */
    /* The unk token's id, -1 if the model has none. */
    int32_t (*unk_id)(const atn_tok_model *m);
    void (*free)(atn_tok_model *m);
} atn_tok_model_ops;

struct atn_tok_model {
    const atn_tok_model_ops *ops;
};

void atn_tok_model_free(atn_tok_model *m);   /* NULL is a no-op */

/* Builders from tokenizer.json's "model" object.  file is the tokenizer.json path and
 * path the JSON path of the object ("model"), both for messages: every error names the
 * file, the JSON path of the offending value (e.g. model.merges[17]) and what is wrong
 * (ATN_E_FORMAT), or ATN_E_NOMEM.  NULL on error. */
/* The checks every builder starts with: *file and *path default to "tokenizer.json" and
 * "model"; model must be an object whose "type", when present, is type.  ATN_E_FORMAT
 * naming file and path otherwise (tok-wordlevel.c, beside the other shared helpers). */
atn_status atn_tok_model_json_check(const cJSON *model, const char **file, const char **path,
                                    const char *type, atn_error *err);

atn_tok_model *atn_tok_bpe_from_json(const cJSON *model, const char *file, const char *path,
                                     atn_error *err);
atn_tok_model *atn_tok_unigram_from_json(const cJSON *model, const char *file, const char *path,
                                         atn_error *err);
atn_tok_model *atn_tok_wordpiece_from_json(const cJSON *model, const char *file, const char *path,
                                           atn_error *err);
atn_tok_model *atn_tok_wordlevel_from_json(const cJSON *model, const char *file, const char *path,
                                           atn_error *err);

/* The classic GPT-2 / RoBERTa files: vocab.json ({"piece": id}) and merges.txt (an
 * optional "#version" line, then "a b" per line, rank = line order), read as
 * transformers' GPT2Tokenizer does (byte-level pieces, no unk).  Errors name the file and
 * line. */
atn_tok_model *atn_tok_bpe_from_files(const char *vocab_json, const char *merges_txt,
                                      atn_error *err);

/* GPT-2's byte-level alphabet (bytes_to_unicode): the code point byte b is shown as, and
 * back.  atn_byte_level_decode turns a piece written in that alphabet into its bytes
 * (out has room for len bytes; returns the count, or -1 if a character is not in the
 * alphabet). */
uint32_t atn_byte_level_char(uint8_t b);
int32_t atn_byte_level_decode(const char *piece, size_t len, uint8_t *out);

/* The text a piece stands for, for showing tokens (the token chips, tokenize --json).
 * atn_byte_level_surface: a byte-level piece ("Ġthe") decoded to its bytes (" the") into
 * out (room for len bytes); *complete (may be NULL) says whether those bytes are whole,
 * valid UTF-8 -- false for a piece that holds part of a multi-byte character, e.g. either
 * of the two pieces "çĪ" + "ĳ" of "爱".  Returns the count, or -1 (and *complete false)
 * when a character is not in the alphabet (the piece is not byte-level: show it as is).
 * atn_metaspace_surface: a Metaspace piece with each replacement string ("▁", U+2581;
 * NULL or "" changes nothing) turned into a space, into out (room for len bytes);
 * returns the count.
 * atn_byte_fallback_byte: the byte a byte_fallback piece "<0xNN>" (uppercase hex) stands
 * for, or -1 when the piece is not one. */
int32_t atn_byte_level_surface(const char *piece, size_t len, uint8_t *out, bool *complete);
size_t atn_metaspace_surface(const char *piece, size_t len, const char *replacement, char *out);
int atn_byte_fallback_byte(const char *piece, size_t len);

/* SentencePiece's compiled normalization rules (the "Precompiled" normalizer's
 * precompiled_charsmap, base64 in tokenizer.json; XLM-R and ALBERT ship one), applied as
 * the Rust library's Precompiled normalizer does (tok-charsmap.c).  Immutable, shareable. */
typedef struct atn_charsmap atn_charsmap;

/* Decodes and validates the base64 blob (file/path as above, for messages); NULL on error
 * (ATN_E_FORMAT naming file and path: bad base64, a trie or string table that points
 * outside the blob; ATN_E_NOMEM). */
atn_charsmap *atn_charsmap_from_base64(const char *b64, const char *file, const char *path,
                                       atn_error *err);
void atn_charsmap_free(atn_charsmap *cm);   /* NULL is a no-op */

/* Normalizes in[0, len) into a new malloc'ed string *out (*out_len bytes, NUL-terminated)
 * and, for each output byte i, the input bytes [(*src_start)[i], (*src_end)[i]) it came
 * from (malloc'ed [*out_len] each; the caller frees all three), the alignment the
 * pipeline needs to give tokens their byte spans in the original text.  Each output byte
 * gets the span of one input character (all bytes of one output character the same one):
 * the Rust transform's alignment, so a character a rule adds takes the span of the input
 * character before it ([0, 0) at the very start).  Bytes that are not UTF-8 pass through
 * one by one.  ATN_E_NOMEM. */
atn_status atn_charsmap_normalize(const atn_charsmap *cm, const char *in, size_t len,
                                  char **out, size_t *out_len, int32_t **src_start,
                                  int32_t **src_end, atn_error *err);

#endif

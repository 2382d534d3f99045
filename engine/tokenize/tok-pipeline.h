/* A Hugging Face tokenizer.json as a tokenizer (tokenizer.h), run as the Rust tokenizers
 * library runs it: added tokens split out, normalizer, pre-tokenizer, model, truncation
 * (longest first), post-processor.  Every token keeps the byte span of the original text
 * it came from (the library's alignments, char by char).  Internal to the engine.
 *
 * Supported: normalizers BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Replace,
 * Prepend, Strip, Precompiled (when tok-charsmap.c is built in), Sequence; pre-tokenizers
 * BertPreTokenizer, ByteLevel, Metaspace, Whitespace, WhitespaceSplit, Punctuation,
 * Digits, Split, Sequence; models WordPiece, WordLevel (BPE and Unigram when tok-bpe.c and
 * tok-unigram.c are built in); post-processors BertProcessing, RobertaProcessing,
 * TemplateProcessing, ByteLevel, Sequence.  Regular expressions are PCRE2's (UTF, UCP). */
#ifndef ATN_TOK_PIPELINE_H
#define ATN_TOK_PIPELINE_H

#include "tokenize/tok-model.h"
#include "tokenize/tokenizer.h"

/* Reads a tokenizer.json from text[0, len) (origin names the file in messages).  Errors
 * (ATN_E_FORMAT) name the file, the JSON path (pre_tokenizer.pretokenizers[1].pattern.Regex)
 * and what is wrong: invalid JSON, an unknown component type, a value of the wrong type, a
 * regex that does not compile; ATN_E_UNSUPPORTED for a component or model this build does
 * not have ("not yet supported"); ATN_E_NOMEM.  NULL on error; free with
 * atn_tokenizer_free.  Its kind is "tokenizer.json". */
atn_tokenizer *atn_tok_pipeline_from_json(const char *text, size_t len, const char *origin,
                                          atn_error *err);
/* The same from a file (ATN_E_IO when it cannot be read). */
atn_tokenizer *atn_tok_pipeline_load(const char *path, atn_error *err);

/* Names the token that has a role (ATN_TOKEN_CLS ... ATN_TOKEN_UNK), as
 * tokenizer_config.json / special_tokens_map.json do ("cls_token": "<s>").  A name not in
 * the vocabulary is ignored (false).  Call before the tokenizer is shared. */
bool atn_tok_pipeline_set_role(atn_tokenizer *tok, atn_token_role role, const char *name);

/* The pipeline transformers builds for the classic files (GPT2Converter /
 * RobertaConverter): ByteLevel(add_prefix_space) before model (taken over, freed on
 * error too), then RobertaProcessing (roberta: cls = specials[0], sep = specials[1],
 * trim_offsets) or ByteLevel without trimming (GPT-2).  specials[0, n) are the special
 * tokens (NULL entries skipped; those the vocabulary lacks too), matched in the text
 * before the model; mask_token (may be NULL) strips the spaces on its left.  Errors:
 * ATN_E_FORMAT when RoBERTa's cls or sep is not in the vocabulary (naming origin),
 * ATN_E_NOMEM. */
atn_tokenizer *atn_tok_pipeline_classic(atn_tok_model *model, bool roberta,
                                        bool add_prefix_space, const char *const specials[],
                                        int n_specials, const char *mask_token,
                                        const char *origin, atn_error *err);

/* True when tok is a tokenizer.json pipeline. */
bool atn_tok_is_pipeline(const atn_tokenizer *tok);

#endif

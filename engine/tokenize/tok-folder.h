/* A Hugging Face folder's tokenizer, chosen as transformers' AutoTokenizer does:
 * tokenizer.json (the fast tokenizer, engine/tokenize/tok-pipeline.h) when the folder has one,
 * else the classic vocab.json + merges.txt (GPT-2, RoBERTa), else vocab.txt (BERT's
 * WordPiece, engine/tokenize/wordpiece.h); tokenizer_config.json and special_tokens_map.json name
 * the special tokens and options.  No config.json or weights are needed.  Internal to the
 * engine. */
#ifndef ATN_TOK_FOLDER_H
#define ATN_TOK_FOLDER_H

#include "tokenize/tokenizer.h"

struct atn_family;

/* Opens dir's tokenizer by the one rule every folder follows, model or tokenizer-only
 * (docs/ARCHITECTURE.md, "folder → tokenizer"); the first that applies:
 *   1. tokenizer.json (the fast tokenizer's pipeline);
 *   2. vocab.json with merges.txt (the classic byte-level BPE: GPT-2, RoBERTa);
 *   3. fam's own vocabulary file when fam's tokenizer is not WordPiece (spiece.model,
 *      sentencepiece.bpe.model, a vocab.json without merges.txt): refused by name
 *      (ATN_E_UNSUPPORTED), as it is read only through tokenizer.json;
 *   4. vocab.txt, WordPiece as BertTokenizer reads it (options from tokenizer_config.json),
 *      for every family (the tiny test folders of other families carry one);
 *   5. nothing: ATN_E_IO "missing vocab.txt" for a WordPiece family, ATN_E_UNSUPPORTED
 *      "no \"bpe\" tokenizer for GPT-2 models" for another, ATN_E_IO "no tokenizer files
 *      (looked for ...)" without a family.
 * Every file is probed with atn_probe_file: a dangling link is an error, not absent.
 * fam (may be NULL: a folder of tokenizer files only) also decides how the classic files
 * are put together when tokenizer_config.json has no tokenizer_class.  *model_max_length
 * (may be NULL) gets tokenizer_config.json's model_max_length, 0 when absent or not a
 * sensible number; *source (may be NULL) the kind used: "tokenizer.json", "vocab.json",
 * "vocab.txt".  Errors name the file and key (ATN_E_FORMAT for malformed files); ATN_E_NOMEM.
 * Free the result with atn_tokenizer_free. */
atn_tokenizer *atn_tokenizer_open_folder(const char *dir, const struct atn_family *fam,
                                         int32_t *model_max_length, const char **source, atn_error *err);

/* Which kind rule 1, 2 or 4 above picks for dir without a family: "tokenizer.json",
 * "vocab.json", "vocab.txt", or NULL (none, or a file that cannot be probed). */
const char *atn_tokenizer_folder_kind(const char *dir);

#endif

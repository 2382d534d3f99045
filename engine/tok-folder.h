/* A Hugging Face folder's tokenizer, chosen as transformers' AutoTokenizer does:
 * tokenizer.json (the fast tokenizer, engine/tok-pipeline.h) when the folder has one,
 * else the classic vocab.json + merges.txt (GPT-2, RoBERTa), else vocab.txt (BERT's
 * WordPiece, engine/wordpiece.h); tokenizer_config.json and special_tokens_map.json name
 * the special tokens and options.  No config.json or weights are needed.  Internal to the
 * engine. */
#ifndef ATN_TOK_FOLDER_H
#define ATN_TOK_FOLDER_H

#include "tokenizer.h"

/* Opens dir's tokenizer.  family_hint ("bert", "roberta", ... or NULL) decides how the
 * classic files are put together when tokenizer_config.json has no tokenizer_class.
 * *model_max_length (may be NULL) gets tokenizer_config.json's model_max_length, 0 when
 * absent or not a sensible number.  Errors name the file and key: ATN_E_IO when the folder
 * has none of the three (the message lists what was looked for) or a file cannot be read,
 * ATN_E_FORMAT for malformed files, ATN_E_UNSUPPORTED for what this build does not read
 * yet; ATN_E_NOMEM.  Free the result with atn_tokenizer_free. */
atn_tokenizer *atn_tokenizer_open_folder(const char *dir, const char *family_hint,
                                         int32_t *model_max_length, atn_error *err);

/* Which of the three dir has: "tokenizer.json", "vocab.json" (with merges.txt),
 * "vocab.txt", or NULL. */
const char *atn_tokenizer_folder_kind(const char *dir);

#endif

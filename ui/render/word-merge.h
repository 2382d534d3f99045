/* Word pieces merged into words (issue 35), as exBERT and bertviz users do: a head over n
 * tokens becomes a head over the words, each word's row the mean of its pieces' rows (a
 * query word attends as its pieces do on average) and each word's column the sum of its
 * pieces' columns (a key word gets what all its pieces get), so every row still sums to what
 * the tokens' rows summed to.  No GLib, no cairo; any thread. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attnscope.h"

/* The words of tokens[0..n-1]: start[w] is the first token of word w, start[*n_words] = n
 * (start holds n + 1 entries).  A token starts a word unless it is in the segment of the
 * token before it and continues its word (atn_token.continuation: WordPiece's "##ing") or
 * has the same word number >= 0 (atn_token.word, Hugging Face's word_ids): [CLS], [SEP] and
 * tokens given as ids stay words of their own. */
void atn_word_groups(const atn_token *tokens, int32_t n, int32_t *start, int32_t *n_words);

/* out[a * n_words + b] = mean over query tokens i of word a of the sum over key tokens j of
 * word b of values[i * stride + j].  values [n][stride] with n = start[n_words]. */
void atn_word_merge(const float *values, size_t stride, const int32_t *start, int32_t n_words, float *out);

/* Each word's label: its pieces' labels joined, a WordPiece continuation's leading "##"
 * dropped ("trans" "##form" "##ers" -> "transformers").  A new array of n_words strings
 * (free each and the array); NULL when out of memory. */
char **atn_word_labels(const char *const *labels, const int32_t *start, int32_t n_words);

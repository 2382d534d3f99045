/* Making encodings inside the engine (the tokenizer, --ids, toy tokens, the run's copy). */
#ifndef ATN_ENCODING_H
#define ATN_ENCODING_H

#include "attnscope.h"

/* An encoding of n tokens (n 0 allowed), every field zeroed (token texts NULL, ids, type
 * ids and mask 0) but each token's word, -1.  NULL when out of memory.  Freed with atn_encoding_free. */
atn_encoding *atn_encoding_alloc(int32_t n);

/* A deep copy of src (token texts duplicated; a NULL text becomes ""), or NULL when out
 * of memory. */
atn_encoding *atn_encoding_copy(const atn_encoding *src);

#endif

/* Encodings (tokens with ids, type ids, mask and byte spans): freeing. */
#include "attnscope.h"

#include <stdlib.h>

void atn_encoding_free(atn_encoding *enc) {
    if (!enc)
        return;
    for (int32_t i = 0; enc->tokens && i < enc->n; i++)
        free(enc->tokens[i].text);
    free(enc->tokens);
    free(enc->ids);
    free(enc->type_ids);
    free(enc->mask);
    free(enc);
}

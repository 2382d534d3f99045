/* Encodings (tokens with ids, type ids, mask and byte spans): the one allocator, the copy
 * a run keeps, and freeing. */
#include "tokenize/encoding.h"

#include <stdlib.h>
#include <string.h>

atn_encoding *atn_encoding_alloc(int32_t n) {
    atn_encoding *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->n = n;
    size_t m = n > 0 ? (size_t)n : 1;
    e->tokens = calloc(m, sizeof *e->tokens);
    e->ids = calloc(m, sizeof *e->ids);
    e->type_ids = calloc(m, sizeof *e->type_ids);
    e->mask = calloc(m, sizeof *e->mask);
    if (!e->tokens || !e->ids || !e->type_ids || !e->mask) {
        atn_encoding_free(e);
        return NULL;
    }
    for (size_t i = 0; i < m; i++)
        e->tokens[i].word = -1;
    return e;
}

atn_encoding *atn_encoding_copy(const atn_encoding *src) {
    atn_encoding *e = atn_encoding_alloc(src->n);
    if (!e)
        return NULL;
    int32_t n = src->n;
    e->truncated = src->truncated;
    e->n_dropped = src->n_dropped;
    for (int32_t i = 0; i < n; i++) {
        e->tokens[i] = src->tokens[i];
        e->tokens[i].text = strdup(src->tokens[i].text ? src->tokens[i].text : "");
        if (!e->tokens[i].text) {
            e->n = i;   /* free what was copied */
            atn_encoding_free(e);
            return NULL;
        }
    }
    if (n > 0) {
        memcpy(e->ids, src->ids, (size_t)n * sizeof *e->ids);
        memcpy(e->type_ids, src->type_ids, (size_t)n * sizeof *e->type_ids);
        memcpy(e->mask, src->mask, (size_t)n * sizeof *e->mask);
    }
    return e;
}

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

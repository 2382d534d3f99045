/* Test-only, weak definitions of the two helpers of engine/tokenize/tok-model.h that the
 * pipeline's branch defines (engine/tokenize/tok-pipeline.c): the model tests link them so that
 * they build before that branch is merged; once it is, its strong definitions win and
 * these are left out by the linker. */
#include "tokenize/tok-model.h"

#include <stdlib.h>

__attribute__((weak)) bool atn_tok_pieces_push(atn_tok_pieces *p, int32_t id, int32_t start,
                                               int32_t end) {
    if (p->n == p->cap) {
        int32_t cap = p->cap ? p->cap * 2 : 16;
        atn_tok_piece *v = realloc(p->v, (size_t)cap * sizeof *v);
        if (!v)
            return false;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = (atn_tok_piece){id, start, end};
    return true;
}

__attribute__((weak)) void atn_tok_model_free(atn_tok_model *m) {
    if (m)
        m->ops->free(m);
}

/* Constructed captures for the analysis tests: up to 4 layers x 4 heads x 16 tokens, token
 * texts given (a text starting with '[' is special; equal texts get equal ids), all tokens
 * unmasked, one segment; the caller fills the attention with set_pattern or by hand. */
#ifndef ATN_TEST_FAKE_CAPTURE_H
#define ATN_TEST_FAKE_CAPTURE_H

#include "analysis.h"

#include <string.h>

typedef struct fake {
    atn_capture cap;
    atn_encoding enc;
    atn_token tok[16];
    int32_t ids[16], types[16], mask[16];
    float attn[4 * 4 * 16 * 16];
} fake;

static inline void fake_init(fake *f, int L, int H, int n, const char *const *texts) {
    memset(f, 0, sizeof *f);
    f->enc.n = n;
    f->enc.tokens = f->tok;
    f->enc.ids = f->ids;
    f->enc.type_ids = f->types;
    f->enc.mask = f->mask;
    for (int i = 0; i < n; i++) {
        f->tok[i].text = (char *)texts[i];
        f->tok[i].special = texts[i][0] == '[';
        /* the roles a tokenizer gives these names */
        f->tok[i].role = !strcmp(texts[i], "[CLS]")   ? ATN_TOKEN_CLS
                         : !strcmp(texts[i], "[SEP]") ? ATN_TOKEN_SEP
                         : !strcmp(texts[i], "[PAD]") ? ATN_TOKEN_PAD
                                                      : ATN_TOKEN_WORD;
        f->mask[i] = 1;
        /* ids as a tokenizer gives them: the same text, the same id (the induction measure
           looks for repeated ids) */
        f->ids[i] = i;
        for (int k = 0; k < i; k++)
            if (!strcmp(texts[k], texts[i])) {
                f->ids[i] = f->ids[k];
                break;
            }
    }
    f->cap.n_layers = L;
    f->cap.n_heads = H;
    f->cap.n = n;
    f->cap.enc = &f->enc;
    f->cap.attn = f->attn;
    f->cap.nonfinite_layer = -1;
}

static inline float *head_of(fake *f, int l, int h) {
    int n = f->cap.n;
    return f->attn + ((size_t)l * f->cap.n_heads + h) * n * n;
}

static inline void set_pattern(float *a, int n, int kind) {
    memset(a, 0, sizeof(float) * n * n);
    for (int i = 0; i < n; i++)
        switch (kind) {
        case 0: a[i * n + (i > 0 ? i - 1 : 0)] = 1; break;     /* previous (row 0 on itself) */
        case 1: a[i * n + (i + 1 < n ? i + 1 : i)] = 1; break; /* next */
        case 2: a[i * n + 0] = 1; break;                       /* [CLS] */
        case 3: a[i * n + 3] = 1; break;                       /* the comma */
        case 4:
            for (int j = 0; j < n; j++)
                a[i * n + j] = 1.0f / n;                       /* uniform */
            break;
        case 5: a[i * n + n - 1] = 1; break;                   /* [SEP] */
        }
}

#endif

/* Word pieces merged into words (word-merge.h). */
#include "word-merge.h"

#include <stdlib.h>
#include <string.h>

void atn_word_groups(const atn_token *tokens, int32_t n, int32_t *start, int32_t *n_words) {
    int32_t w = 0;
    for (int32_t i = 0; i < n; i++) {
        bool same = i > 0 && tokens[i].segment == tokens[i - 1].segment &&
                    (tokens[i].continuation || (tokens[i].word >= 0 && tokens[i].word == tokens[i - 1].word));
        if (!same)
            start[w++] = i;
    }
    start[w] = n;
    *n_words = w;
}

void atn_word_merge(const float *values, size_t stride, const int32_t *start, int32_t n_words, float *out) {
    for (int32_t a = 0; a < n_words; a++) {
        int32_t pieces = start[a + 1] - start[a];
        for (int32_t b = 0; b < n_words; b++) {
            double sum = 0;
            for (int32_t i = start[a]; i < start[a + 1]; i++)
                for (int32_t j = start[b]; j < start[b + 1]; j++)
                    sum += values[(size_t)i * stride + j];
            out[(size_t)a * n_words + b] = (float)(sum / pieces);
        }
    }
}

char **atn_word_labels(const char *const *labels, const int32_t *start, int32_t n_words) {
    char **out = calloc((size_t)n_words + 1, sizeof *out);
    if (!out)
        return NULL;
    for (int32_t w = 0; w < n_words; w++) {
        size_t len = 1;
        for (int32_t i = start[w]; i < start[w + 1]; i++)
            len += labels && labels[i] ? strlen(labels[i]) : 0;
        if (!(out[w] = malloc(len))) {
            for (int32_t k = 0; k < w; k++)
                free(out[k]);
            free(out);
            return NULL;
        }
        out[w][0] = 0;
        for (int32_t i = start[w]; i < start[w + 1]; i++) {
            const char *p = labels && labels[i] ? labels[i] : "";
            if (i > start[w] && !strncmp(p, "##", 2))
                p += 2;
            strcat(out[w], p);
        }
    }
    return out;
}

/* The Head view's words mode (atn-head-words.h). */
#include "atn-head-words.h"

#include "word-merge.h"

AtnHeadWords *atn_head_words_new(const atn_encoding *enc, const char *const *labels, const float *head, int n) {
    if (!enc || !labels || !head || n <= 0)
        return NULL;
    AtnHeadWords *w = g_new0(AtnHeadWords, 1);
    w->start = g_new(int32_t, n + 1);
    int32_t nw = 0;
    atn_word_groups(enc->tokens, n, w->start, &nw);
    w->n_words = nw;
    w->values = g_new(float, (size_t)nw * nw);
    atn_word_merge(head, (size_t)n, w->start, nw, w->values);
    char **l = atn_word_labels(labels, w->start, nw);
    w->labels = g_new0(char *, nw + 1);
    for (int i = 0; i < nw; i++) {   /* into GLib's allocator, so g_strfreev frees them */
        w->labels[i] = g_strdup(l && l[i] ? l[i] : "");
        if (l)
            free(l[i]);
    }
    free(l);
    return w;
}

int atn_head_words_count(const atn_encoding *enc, int n) {
    if (!enc || n <= 0)
        return 0;
    int32_t *start = g_new(int32_t, n + 1), nw = 0;
    atn_word_groups(enc->tokens, n, start, &nw);
    g_free(start);
    return nw;
}

void atn_head_words_free(AtnHeadWords *w) {
    if (!w)
        return;
    g_free(w->start);
    g_free(w->values);
    g_strfreev(w->labels);
    g_free(w);
}

int atn_head_words_word_of(const AtnHeadWords *w, int t) {
    if (!w || t < 0 || t >= w->start[w->n_words])
        return -1;
    int lo = 0, hi = w->n_words - 1;   /* the last word whose start <= t */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (w->start[mid] <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* A partial's statistics by K/V group (corpus-stats.h, atn_corpus_stats_by_kv_group): each group's
 * sums are its heads' exact fixed-point sums added, over its heads' sentences. */
#include "corpus-stats-private.h"

#include <stdlib.h>
#include <string.h>

atn_status atn_corpus_stats_by_kv_group(const atn_corpus_stats *cs, atn_head_stats **out, atn_error *err) {
    if (out)
        *out = NULL;
    if (!cs || !out)
        return atn_error_set(err, ATN_E_INVALID, "atn_corpus_stats_by_kv_group: NULL argument");
    int32_t L = cs->id.n_layers, H = cs->id.n_heads, kv = cs->id.n_kv_heads;
    if (kv <= 0)
        return atn_error_set(err, ATN_E_INVALID, "the partial has no \"n_kv_heads\": its model's query heads each "
                             "have their own K/V head, or it was made by an attnscope before partials recorded "
                             "them (make it again)");
    int64_t n = cs->counts[CS_SENTENCES];
    if (n <= 0)
        return atn_error_set(err, ATN_E_INVALID, "the partial has no sentences");
    /* the patterns: each head labelled from its means, then the vote atn_stats_by_kv_group takes */
    atn_stats *means = NULL;
    atn_head_stats *g = NULL;
    atn_status st = atn_corpus_stats_means(cs, &means, err);
    if (st == ATN_OK)
        st = atn_stats_by_kv_group(means, kv, &g, err);
    atn_stats_free(means);
    if (st != ATN_OK)
        return st;
    int32_t per = H / kv;
    double count = (double)per * (double)n;   /* exact: both far below 2^53 */
    for (int32_t l = 0; l < L; l++)
        for (int32_t k = 0; k < kv; k++) {
            uint64_t sum[ATN_CS_STATS][CS_FX_WORDS], ind[CS_FX_WORDS];
            memset(sum, 0, sizeof sum);
            memset(ind, 0, sizeof ind);
            for (int32_t j = 0; j < per; j++) {
                size_t i = (size_t)l * H + (size_t)k * per + j;
                for (int s = 0; s < ATN_CS_STATS; s++)
                    cs_fx_add(sum[s], cs->sums + ((i * ATN_CS_STATS + s) * 2) * CS_FX_WORDS);
                cs_fx_add(ind, cs->ind + i * CS_FX_WORDS);
            }
            double v[ATN_CS_STATS];
            for (int s = 0; s < ATN_CS_STATS; s++)
                v[s] = cs_fx_to_double(sum[s]) / count;
            atn_head_stats *m = &g[(size_t)l * kv + k];
            m->entropy = v[STATS_ENTROPY], m->entropy_norm = v[STATS_ENTROPY_NORM], m->cls = v[STATS_CLS];
            m->sep = v[STATS_SEP], m->punct = v[STATS_PUNCT], m->self = v[STATS_SELF], m->prev = v[STATS_PREV];
            m->next = v[STATS_NEXT], m->local = v[STATS_LOCAL], m->same_segment = v[STATS_SAME_SEGMENT];
            m->distance = v[STATS_DISTANCE];
            m->induction = cs_fx_to_double(ind) / count;
        }
    *out = g;
    return ATN_OK;
}

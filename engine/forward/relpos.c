/* T5's relative position buckets (modeling_t5.py, T5Attention._relative_position_bucket and
 * compute_bias): the score bias an encoder-decoder's T5 stack adds to every layer's scores,
 * made once per run from layer 0's relative_attention_bias table.  The logarithmic buckets
 * are computed in float32 as torch computes them (log of a float32 ratio, divided by the
 * Python double log(max_distance / max_exact), times the bucket count, truncated), so the
 * bucket boundaries fall where transformers puts them. */
#include "core/model-private.h"

#include <math.h>
#include <stdlib.h>

int32_t atn_t5_bucket(int32_t rel, bool bidirectional, int32_t num_buckets, int32_t max_distance) {
    int32_t bucket = 0;
    if (bidirectional) {
        num_buckets /= 2;
        bucket += rel > 0 ? num_buckets : 0;
        rel = abs(rel);
    } else {
        rel = rel < 0 ? -rel : 0;   /* -min(rel, 0): keys before the query */
    }
    int32_t max_exact = num_buckets / 2;
    if (rel < max_exact)
        return bucket + rel;
    float ratio = (float)rel / (float)max_exact;
    float large = logf(ratio) / (float)log((double)max_distance / max_exact) * (float)(num_buckets - max_exact);
    int32_t v = max_exact + (int32_t)large;   /* .to(torch.long) truncates */
    return bucket + (v < num_buckets - 1 ? v : num_buckets - 1);
}

void atn_t5_position_bias(float *out, const float *table, int32_t H, int32_t nq, int32_t nk, bool bidirectional,
                          int32_t num_buckets, int32_t max_distance) {
    for (int32_t i = 0; i < nq; i++)
        for (int32_t j = 0; j < nk; j++) {
            int32_t b = atn_t5_bucket(j - i, bidirectional, num_buckets, max_distance);
            for (int32_t h = 0; h < H; h++)
                out[((size_t)h * nq + i) * nk + j] = table[(size_t)b * H + h];
        }
}

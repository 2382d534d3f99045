/* DeBERTa-v2/v3's disentangled attention terms (modeling_deberta_v2.py,
 * DisentangledSelfAttention.disentangled_attention_bias), added by the reference ops' attend
 * to each head's scaled scores before the mask and the softmax, and recomputed in double by
 * the trace.  The model's settings are atn_deberta (core/model-private.h).
 *
 * For query i and key j, with δ = atn_deberta_index(i, j) and s = 1 / sqrt(k scale_factor):
 *     c2p[i][j] = s q_i . pos_key[δ]     pos_key = rel W_pk^T + b_pk (per head, k wide)
 *     p2c[i][j] = s k_j . pos_query[δ]   pos_query = rel W_pq^T + b_pq
 * (share_att_key: W_pk, W_pq are the layer's key_proj and query_proj).  Threads: none of
 * these keep state; each call reads the model and writes the caller's memory. */
#ifndef ATN_DEBERTA_H
#define ATN_DEBERTA_H

#include "core/model-private.h"

/* make_log_bucket_position for one relative distance rel = i - j, in float32 as torch
 * computes it (the distance itself when r->buckets <= 0). */
int32_t atn_deberta_bucket(const atn_deberta *r, int32_t rel);

/* The relative-embedding row query i and key j read: clamp(bucket(i - j) + span, 0,
 * 2 span - 1). */
int32_t atn_deberta_index(const atn_deberta *r, int32_t i, int32_t j);

/* The rows [r0, r0 + R) of the relative embeddings a sequence of n tokens reads (bucket is
 * monotone in i - j, so they are the rows of i - j = -(n - 1) .. n - 1). */
void atn_deberta_rows(const atn_deberta *r, int32_t n, int32_t *r0, int32_t *R);

/* One layer's relative rows for a sequence of n tokens: the projected rows it reads and the
 * row index of each distance.  atn_deberta_layer_new: NULL when out of memory (or, when the
 * model adds no term, an empty state whose head_add does nothing); free with
 * atn_deberta_layer_free (NULL: nothing). */
typedef struct atn_deberta_layer atn_deberta_layer;
atn_deberta_layer *atn_deberta_layer_new(const atn_model *m, int32_t l, int32_t n);
void atn_deberta_layer_free(atn_deberta_layer *s);

/* Adds head h's c2p and p2c terms, times scale, to its scores att_h [n][n] (already
 * scaled).  q [n][ldq] and k [n][ldk] are the layer's projected rows, head h at columns h k. */
void atn_deberta_head_add(atn_deberta_layer *s, int32_t h, const float *q, int32_t ldq, const float *k,
                          int32_t ldk, float scale, float *att_h);

/* The trace's terms for query i of head h in layer l, in double: c2p[j], p2c[j] (each with
 * the scale s) and index[j] = atn_deberta_index(i, j) for every key j.  q [k] is the
 * query's row, keys [n][k] the head's keys (as the trace holds them). */
void atn_deberta_trace_terms(const atn_model *m, int32_t l, int32_t h, int32_t i, const double *q,
                             const double *keys, int32_t n, double scale, double *c2p, double *p2c, int32_t *index);

#endif

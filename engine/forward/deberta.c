/* DeBERTa-v2/v3's disentangled attention terms (engine/forward/deberta.h): the relative
 * positions with log buckets, and the c2p / p2c scores added to each head's scaled scores. */
#include "forward/deberta.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int32_t atn_deberta_bucket(const atn_deberta *r, int32_t rel) {
    if (r->buckets <= 0 || r->max_relative <= 0)
        return rel;
    /* make_log_bucket_position: sign, mid = bucket_size // 2, abs_pos = mid - 1 inside
       (-mid, mid), log_pos = ceil(log(abs_pos / mid) / log((max_position - 1) / mid)
       * (mid - 1)) + mid in float32, the distance itself where abs_pos <= mid */
    int32_t mid = r->buckets / 2;
    int32_t abs_pos = rel < mid && rel > -mid ? mid - 1 : (rel < 0 ? -rel : rel);
    if (abs_pos <= mid)
        return rel;
    float num = logf((float)abs_pos / (float)mid);
    float den = logf((float)((double)(r->max_relative - 1) / (double)mid));
    float log_pos = ceilf(num / den * (float)(mid - 1)) + (float)mid;
    return rel < 0 ? -(int32_t)log_pos : (int32_t)log_pos;
}

int32_t atn_deberta_index(const atn_deberta *r, int32_t i, int32_t j) {
    int32_t x = atn_deberta_bucket(r, i - j) + r->span;
    return x < 0 ? 0 : x > 2 * r->span - 1 ? 2 * r->span - 1 : x;
}

void atn_deberta_rows(const atn_deberta *r, int32_t n, int32_t *r0, int32_t *R) {
    int32_t lo = atn_deberta_index(r, 0, n - 1), hi = atn_deberta_index(r, n - 1, 0);
    *r0 = lo;
    *R = hi - lo + 1;
}

/* out[R, d] = rel[r0..r0+R) W^T + b */
static void project_rows(float *out, const atn_deberta *r, int32_t r0, int32_t R, const float *w, const float *b,
                         int32_t d) {
    const float *in = r->rel_emb + (size_t)r0 * d;
    for (int32_t x = 0; x < R; x++)
        if (b)
            memcpy(out + (size_t)x * d, b, (size_t)d * sizeof(float));
        else
            memset(out + (size_t)x * d, 0, (size_t)d * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, R, d, d, 1.0f, in, d, w, d, 1.0f, out, d);
}

struct atn_deberta_layer {
    int32_t n, d, kd, R;
    float *posk, *posq;   /* [R][d] the projected rows r0.. (NULL: no such term) */
    float *c2p, *p2c;     /* [n][R] one head's products */
    int32_t *idx;         /* [2n - 1] the row (minus r0) of distance i - j, at i - j + n - 1 */
};

void atn_deberta_layer_free(atn_deberta_layer *s) {
    if (!s)
        return;
    free(s->posk), free(s->posq), free(s->c2p), free(s->p2c), free(s->idx);
    free(s);
}

atn_deberta_layer *atn_deberta_layer_new(const atn_model *m, int32_t l, int32_t n) {
    const atn_deberta *r = &m->deberta;
    const atn_layer_weights *lw = &m->w.layers[l];
    atn_deberta_layer *s = calloc(1, sizeof *s);
    if (!s || !r->relative || (!r->c2p && !r->p2c) || n <= 0)
        return s;
    int32_t d = m->cfg.d_model, r0, R;
    atn_deberta_rows(r, n, &r0, &R);
    s->n = n, s->d = d, s->kd = m->cfg.d_head, s->R = R;
    s->posk = r->c2p ? malloc((size_t)R * d * sizeof(float)) : NULL;
    s->posq = r->p2c ? malloc((size_t)R * d * sizeof(float)) : NULL;
    s->c2p = r->c2p ? malloc((size_t)n * R * sizeof(float)) : NULL;
    s->p2c = r->p2c ? malloc((size_t)n * R * sizeof(float)) : NULL;
    s->idx = malloc((size_t)(2 * n - 1) * sizeof(int32_t));
    if (!s->idx || (r->c2p && (!s->posk || !s->c2p)) || (r->p2c && (!s->posq || !s->p2c))) {
        atn_deberta_layer_free(s);
        return NULL;
    }
    for (int32_t x = 0; x < 2 * n - 1; x++)
        s->idx[x] = atn_deberta_index(r, x - (n - 1), 0) - r0;
    if (s->posk)
        project_rows(s->posk, r, r0, R, lw->wpk, lw->bpk, d);
    if (s->posq)
        project_rows(s->posq, r, r0, R, lw->wpq, lw->bpq, d);
    return s;
}

void atn_deberta_head_add(atn_deberta_layer *s, int32_t h, const float *q, int32_t ldq, const float *k,
                          int32_t ldk, float scale, float *att_h) {
    if (!s || !s->idx)
        return;
    int32_t n = s->n, R = s->R, kd = s->kd;
    float *c2p = s->c2p, *p2c = s->p2c;
    /* c2p[i][x] = q_i . pos_key[r0 + x], p2c[j][x] = k_j . pos_query[r0 + x], scaled; then
       c2p_att / scale + p2c_att / scale added as HF adds them to the scaled scores */
    if (c2p)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, R, kd, scale, q + (size_t)h * kd, ldq,
                    s->posk + (size_t)h * kd, s->d, 0.0f, c2p, R);
    if (p2c)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, R, kd, scale, k + (size_t)h * kd, ldk,
                    s->posq + (size_t)h * kd, s->d, 0.0f, p2c, R);
    for (int32_t i = 0; i < n; i++) {
        float *row = att_h + (size_t)i * n;
        const int32_t *ix = s->idx + (n - 1) + i;   /* ix[-j]: distance i - j */
        for (int32_t j = 0; j < n; j++) {
            int32_t x = ix[-j];
            float t = 0.0f;
            if (c2p)
                t += c2p[(size_t)i * R + x];
            if (p2c)
                t += p2c[(size_t)j * R + x];
            row[j] += t;
        }
    }
}

void atn_deberta_trace_terms(const atn_model *m, int32_t l, int32_t h, int32_t i, const double *q,
                             const double *keys, int32_t n, double scale, double *c2p, double *p2c, int32_t *index) {
    const atn_deberta *r = &m->deberta;
    const atn_layer_weights *lw = &m->w.layers[l];
    int32_t d = m->cfg.d_model, kd = m->cfg.d_head;
    for (int32_t j = 0; j < n; j++) {
        int32_t x = atn_deberta_index(r, i, j);
        const float *rel = r->rel_emb + (size_t)x * d;
        index[j] = x;
        c2p[j] = p2c[j] = 0.0;
        if (!r->relative)
            continue;
        for (int32_t c = 0; c < kd; c++) {
            int32_t o = h * kd + c;
            if (r->c2p) {   /* pos_key[x] of this head, then q . it */
                double pk = lw->bpk ? lw->bpk[o] : 0.0;
                for (int32_t e = 0; e < d; e++)
                    pk += (double)lw->wpk[(size_t)o * d + e] * rel[e];
                c2p[j] += q[c] * pk;
            }
            if (r->p2c) {   /* pos_query[x], then k_j . it */
                double pq = lw->bpq ? lw->bpq[o] : 0.0;
                for (int32_t e = 0; e < d; e++)
                    pq += (double)lw->wpq[(size_t)o * d + e] * rel[e];
                p2c[j] += keys[(size_t)j * kd + c] * pq;
            }
        }
        c2p[j] *= scale;
        p2c[j] *= scale;
    }
}

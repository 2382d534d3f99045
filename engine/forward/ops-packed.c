/* The layer's ops on the AVX-512 packed kernels (atn_ops_packed, engine/forward/layer.h):
 * every thread of the CPU team runs each op on its share — products by output panels of
 * the weights packed once per model (engine/forward/encoder.c, packed_for), attention by
 * (sequence, head) and, for one sequence whose heads do not divide evenly, by query rows,
 * norms by rows.  The kernels are engine/forward/cpu-kernels.c.
 *
 * Exactness: a product computes each output row with the same fused multiply-adds in the
 * same order whatever the number of rows, and attention runs the same kernel on the same
 * n x n block, so a sequence gives the same bits alone or stacked with others
 * (engine/forward/batch.c). */
#include "forward/cpu-kernels.h"
#include "forward/cpu-team.h"
#include "forward/layer.h"

static const float *packed_operand(const atn_walk *w, const float *in, size_t count, int32_t l, atn_operand op) {
    (void)w, (void)count, (void)l, (void)op;
    return in;   /* no rounding here: a reduced-precision run takes the reference ops */
}

static void packed_project(const atn_walk *w, int tid, int nt, float *out, const float *in, int32_t l,
                           atn_weight_id which, const float *res, int act, int32_t i, int32_t o) {
    const atn_packed_layer *pw = &w->packed[l];
    const float *b, *W = NULL;
    (void)atn_layer_weight(&w->m->w.layers[l], which, &b);   /* the bias: fp32, from the model */
    switch (which) {
    case ATN_W_Q: W = pw->wq; break;
    case ATN_W_K: W = pw->wk; break;
    case ATN_W_V: W = pw->wv; break;
    case ATN_W_O: W = pw->wo; break;
    case ATN_W_FFN_IN: W = pw->w1; break;
    case ATN_W_FFN_OUT: W = pw->w2; break;
    case ATN_W_FFN_GATE:   /* gated MLPs never take the packed ops (encoder.c, fast_path_applies) */
    case ATN_W_CQ: case ATN_W_CK: case ATN_W_CV: case ATN_W_CO: break;   /* nor encoder-decoders */
    }
    int lo, hi;
    atn_team_split(atn_panels(o), tid, nt, &lo, &hi);
    atn_gemm_packed(out, (size_t)o, in, (size_t)i, W, b, res, res ? (size_t)o : 0, w->M, o, i, lo, hi, act);
}

static void packed_norm(const atn_walk *w, int tid, int nt, float *out, const float *in, const float *res,
                        const float *g, const float *b) {
    int lo, hi;
    atn_team_split(w->M, tid, nt, &lo, &hi);   /* the walk's row steps split rows the same way */
    (void)atn_layernorm_rows(out, in, res, g, b, lo, hi, w->desc.d, w->desc.eps);
}

int32_t atn_packed_heads_held(int nt, int32_t n_heads) {
    return nt < 1 ? 1 : nt < n_heads ? nt : n_heads > 0 ? n_heads : 1;
}

void atn_packed_attend_heads(const atn_walk *w, int tid, int nt, int32_t l, float *q, float *k, float *v, float *ctx,
                             atn_attention_rows_fn rows) {
    const atn_layer_desc *D = &w->desc;
    const atn_walk_seq *s = &w->seq[0];
    int32_t d = D->d, H = D->heads, kd = d / H, n = s->n;
    float scale = atn_layer_scale(D, l);
    float *scratch = w->scratch + (size_t)tid * w->scratch_floats;
    /* head tid, tid + nt, ...: whole heads, so each thread's [n][n] holds one finished head
       at a time (the rows of a head the other branch splits between threads give the same
       bits: the kernel makes each query row alone) */
    for (int32_t h = tid; h < H; h += nt) {
        float *att = s->attn + (size_t)tid * n * n;
        size_t col = (size_t)h * kd;
        rows(ctx + col, att, q + col, k + col, v + col, (size_t)d, s->mask, n, kd, 0, n, scale, scratch, true);
        if (s->head_done)
            s->head_done(s->head_user, l, h, att, n);
    }
}

static void packed_attend(const atn_walk *w, int tid, int nt, int32_t l, float *q, float *k, float *v, float *ctx) {
    const atn_layer_desc *D = &w->desc;
    int32_t d = D->d, H = D->heads, kd = d / H;
    float scale = atn_layer_scale(D, l);
    float *scratch = w->scratch + (size_t)tid * w->scratch_floats;
    int lo, hi;
    if (w->count == 1) {
        /* whole heads per thread when they divide evenly, else each head's query rows
           split between the threads too; K packed once per head and thread */
        const atn_walk_seq *s = &w->seq[0];
        if (s->attn_one_head && !w->one_head) {   /* no layer's heads kept: one [n][n] per thread */
            atn_packed_attend_heads(w, tid, nt, l, q, k, v, ctx, atn_attention_rows);
            return;
        }
        int32_t n = s->n, chunks = H % nt == 0 ? 1 : nt, last_head = -1;
        float *att = s->attn + s->attn_stride * l;
        atn_team_split(H * chunks, tid, nt, &lo, &hi);
        for (int32_t item = lo; item < hi; item++) {
            int32_t h = item / chunks, r0, r1;
            if (w->one_head && h != w->head)
                continue;
            atn_team_split(n, item % chunks, chunks, &r0, &r1);
            size_t col = (size_t)h * kd;
            atn_attention_rows(ctx + col, w->one_head ? att : att + (size_t)h * n * n, q + col, k + col, v + col,
                               (size_t)d, s->mask, n, kd, r0, r1, scale, scratch, h != last_head);
            last_head = h;
        }
        return;
    }
    /* item i (sequence i / H, head i % H) belongs to the thread whose share of the total
       cost its start falls in: contiguous, balanced by n^2 */
    int32_t items = w->count * H;
    double total = w->cost[items];
    for (int32_t it = 0; it < items; it++) {
        int owner = total > 0 ? (int)(w->cost[it] * nt / total) : 0;
        if ((owner < nt ? owner : nt - 1) != tid)
            continue;
        const atn_walk_seq *s = &w->seq[it / H];
        int32_t h = it % H, n = s->n;
        size_t at = (size_t)s->row * d + (size_t)h * kd;
        atn_attention_rows(ctx + at, s->attn + s->attn_stride * l + (size_t)h * n * n, q + at, k + at, v + at,
                           (size_t)d, s->mask, n, kd, 0, n, scale, scratch, true);
    }
}

const atn_layer_ops atn_ops_packed = {
    .name = "avx512-packed",
    .operand = packed_operand,
    .project = packed_project,
    .norm = packed_norm,
    .attend = packed_attend,
    /* no positions or mul: rotary decoders and gated MLPs take the reference ops */
    .add = atn_walk_add_rows,
    .end_layer = atn_walk_check_finite,
};

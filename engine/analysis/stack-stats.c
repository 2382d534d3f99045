/* Per-head statistics of an encoder-decoder's decoder and cross-attention stacks
 * (analysis.h, atn_stats_add_stack).  The decoder's self-attention is square: it is read as
 * a sentence of the target's tokens by the code of head-stats.c.  Cross-attention is not
 * (target rows over source keys): the figures that need a query and a key in one sequence
 * are NaN, the others are made here from the source's token kinds (stats_sentence_open). */
#include "analysis.h"
#include "head-stats-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static atn_status no_stack(atn_stack_kind kind, atn_error *err) {
    return atn_error_set(err, ATN_E_INVALID, "stats: the capture has no %s stack (not an encoder-decoder's)",
                         kind == ATN_STACK_CROSS ? "cross" : "decoder");
}

/* The decoder's stack as a capture of the target's tokens: what head-stats.c reads (n, enc,
 * attn, the shape).  A stack read a head at a time (an attention file's lazy capture) is read
 * whole into *own (the caller frees it; the decoder's t x t heads are the stacks' smallest),
 * every head checked: the first bad one's error. */
static atn_status decoder_view(const atn_capture *cap, const atn_encoding *target, atn_capture *view, float **own,
                               atn_error *err) {
    const atn_stack *k = atn_capture_stack(cap, ATN_STACK_DECODER);
    *own = NULL;
    if (!k)
        return no_stack(ATN_STACK_DECODER, err);
    if (target && target->n != k->n_q)
        return atn_error_set(err, ATN_E_SHAPE, "stats: the target has %d tokens, the decoder stack %d", target->n,
                             k->n_q);
    memset(view, 0, sizeof *view);
    view->n = k->n_q;
    view->n_layers = k->n_layers;
    view->n_heads = k->n_heads;
    view->attn = k->attn;
    view->enc = target;
    if (!k->attn) {
        size_t map = (size_t)k->n_q * k->n_q, heads = (size_t)k->n_layers * k->n_heads;
        if (!(*own = malloc((heads ? heads : 1) * map * sizeof **own)))
            return atn_error_set(err, ATN_E_NOMEM, "stats: out of memory for the decoder stack");
        for (size_t c = 0; c < heads; c++)
            if (!atn_stack_head_read(cap, k, (int32_t)(c / k->n_heads), (int32_t)(c % k->n_heads), *own + c * map,
                                     err)) {
                free(*own);
                *own = NULL;
                return err ? err->status : ATN_E_INVALID;
            }
        view->attn = *own;
    }
    return ATN_OK;
}

/* Adds the cross stack of one sentence to st, calling progress after each head. */
static atn_status cross_add(atn_stats *st, const atn_capture *cap, atn_progress_fn progress, void *user_data,
                            atn_error *err) {
    const atn_stack *k = atn_capture_stack(cap, ATN_STACK_CROSS);
    if (!k)
        return no_stack(ATN_STACK_CROSS, err);
    if (k->n_layers != st->n_layers || k->n_heads != st->n_heads)
        return atn_error_set(err, ATN_E_SHAPE, "stats: the cross stack has %d layers x %d heads, expected %d x %d",
                             k->n_layers, k->n_heads, st->n_layers, st->n_heads);
    if (k->n_k != cap->n)
        return atn_error_set(err, ATN_E_SHAPE, "stats: the cross stack has %d source keys, the source %d tokens",
                             k->n_k, cap->n);
    stats_sentence src;   /* the source's kept tokens and their kinds: the keys */
    atn_status s = stats_sentence_open(&src, cap, err);
    if (s)
        return s;
    int32_t nq = k->n_q, nk = k->n_k, heads = st->n_layers * st->n_heads;
    if (src.m == 0 || nq == 0) {
        stats_sentence_close(&src);
        return ATN_OK;
    }
    /* a head at a time: one [nq][nk] scratch for a stack read on demand */
    float *scratch = k->attn ? NULL : malloc((size_t)nq * nk * sizeof *scratch);
    if (!k->attn && !scratch) {
        stats_sentence_close(&src);
        return atn_error_set(err, ATN_E_NOMEM, "stats: out of memory for a cross head");
    }
    for (int32_t idx = 0; idx < heads; idx++) {
        const float *a = atn_stack_head_read(cap, k, idx / st->n_heads, idx % st->n_heads, scratch, err);
        if (!a) {
            free(scratch);
            stats_sentence_close(&src);
            return err ? err->status : ATN_E_INVALID;
        }
        double ent = 0, ent_n = 0, cls = 0, sep = 0, punct = 0;
        for (int32_t i = 0; i < nq; i++) {
            const float *row = a + (size_t)i * nk;
            double e = 0;
            for (int32_t c = 0; c < src.m; c++) {
                int32_t j = src.keep[c];
                double w = isfinite(row[j]) ? row[j] : 0.0;
                if (w > 0)
                    e -= w * log2(w);
                if (src.kind[j] == KIND_CLS)
                    cls += w;
                else if (src.kind[j] == KIND_SEP)
                    sep += w;
                else if (src.kind[j] == KIND_PUNCT)
                    punct += w;
            }
            ent += e;
            ent_n += src.m > 1 ? e / src.log2m : 0.0;
        }
        atn_head_stats *h = &st->heads[idx];
        h->entropy += ent / nq;
        h->entropy_norm += ent_n / nq;
        h->cls += cls / nq;
        h->sep += sep / nq;
        h->punct += punct / nq;
        /* a target index and a source index number different sequences */
        h->self = h->prev = h->next = h->local = h->distance = h->same_segment = h->induction = NAN;
        if (progress && !progress((double)(idx + 1) / heads, ATN_STAGE_STATISTICS, user_data)) {
            free(scratch);
            stats_sentence_close(&src);
            return atn_error_set(err, ATN_E_CANCELLED, "stats: cancelled");
        }
    }
    free(scratch);
    stats_sentence_close(&src);
    st->n_sentences++;
    st->n_tokens += nq;
    return ATN_OK;
}

static atn_status check(const atn_stats *st, const atn_capture *cap, atn_error *err) {
    if (!st || !cap)
        return atn_error_set(err, ATN_E_INVALID, "stats: no capture");
    if (stats_is_finished(st))
        return atn_error_set(err, ATN_E_INVALID, "stats: add after finish");
    return ATN_OK;
}

atn_status atn_stats_add_stack(atn_stats *st, const atn_capture *cap, atn_stack_kind kind,
                               const atn_encoding *target, atn_error *err) {
    if (kind == ATN_STACK_ENCODER)
        return atn_stats_add(st, cap, err);
    atn_status s = check(st, cap, err);
    if (s)
        return s;
    if (kind == ATN_STACK_CROSS)
        return cross_add(st, cap, NULL, NULL, err);
    atn_capture view;
    float *own;
    if ((s = decoder_view(cap, target, &view, &own, err)))
        return s;
    s = atn_stats_add(st, &view, err);
    free(own);
    return s;
}

atn_status atn_stats_compute_stack(const atn_capture *cap, atn_stack_kind kind, const atn_encoding *target,
                                   atn_progress_fn progress, void *user_data, atn_stats **out, atn_error *err) {
    *out = NULL;
    if (!cap)
        return atn_error_set(err, ATN_E_INVALID, "stats: no capture");
    if (kind == ATN_STACK_ENCODER)
        return atn_stats_compute_progress(cap, progress, user_data, out, err);
    atn_status s;
    if (kind == ATN_STACK_DECODER) {
        atn_capture view;
        float *own;
        if ((s = decoder_view(cap, target, &view, &own, err)))
            return s;
        s = atn_stats_compute_progress(&view, progress, user_data, out, err);
        free(own);
        return s;
    }
    const atn_stack *k = atn_capture_stack(cap, ATN_STACK_CROSS);
    if (!k)
        return no_stack(ATN_STACK_CROSS, err);
    atn_stats *st = atn_stats_new(k->n_layers, k->n_heads, err);
    if (!st)
        return err ? err->status : ATN_E_NOMEM;
    s = cross_add(st, cap, progress, user_data, err);
    if (s == ATN_OK)
        s = atn_stats_finish(st, err);
    if (s) {
        atn_stats_free(st);
        return s;
    }
    *out = st;
    return ATN_OK;
}

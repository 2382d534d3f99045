/* An attention file's lazy capture (attention-file.h, atn_attn_file_capture_lazy): the
 * capture of a run that kept no attention but can make every head again, with the file as
 * the maker.  Nothing is read when it is made; a head read (atn_capture_head, which every
 * reader goes through: atn_capture_head_read) reads its layer through the mapping and checks
 * that head the first time (what atn_attn_file_layer does for each head of a layer), so a 4 GB
 * file opens at the cost of its header, showing a head costs that head, and a bad head is
 * refused when it is first read, naming the file, the tensor, the layer and the head. */
#include "formats/attention-lazy.h"
#include "attention-file.h"
#include "formats/attention-file-private.h"

#include <stddef.h>
#include <string.h>

atn_status atn_attn_file_capture_lazy(atn_attn_file *f, const atn_capture **out, atn_error *err) {
    if (!f || !out)
        return atn_error_set(err, ATN_E_INVALID, "atn_attn_file_capture_lazy: NULL argument");
    *out = NULL;
    if (!f->lazy_ready) {
        /* an encoder-decoder's: its encoder (the attention shown, n x n) a head at a time as any
           file's, its decoder [t][t] and cross [t][n] heads too (atn_stack_head_read reaches
           atn_attn_file_stack_head): nothing is read here */
        atn_attn_file_lazy_stacks(f);
        f->lazy_cap = (atn_capture){.n_layers = f->L, .n_heads = f->H, .n = f->n, .enc = f->enc, .attn = NULL,
                                    .n_kv_heads = f->info.n_kv_heads, .attn_on_demand = true, .run = NULL, .temperature = 1.0f,
                                    .nonfinite_layer = -1, .precision = ATN_PRECISION_FP32,
                                    .layer_heads = f->layer_heads};
        if (f->info.n_stacks) {   /* the run's fields for its stacks */
            f->lazy_cap.n_stacks = 3;
            f->lazy_cap.stacks = f->lazy_stacks;
            f->lazy_cap.n_dec_layers = f->n_dec_layers;
            f->lazy_cap.n_tgt = f->n_tgt;
            f->lazy_cap.target_ids = f->tgt_ids;
        }
        f->lazy_magic = ATN_ATTN_LAZY_MAGIC;
        f->lazy_ready = true;
    }
    *out = &f->lazy_cap;
    return ATN_OK;
}

atn_status atn_attn_file_capture_head(const atn_capture *cap, int32_t layer, int32_t head, float *out,
                                      atn_error *err) {
    if (!cap || !out || cap->attn || !cap->attn_on_demand || cap->run)
        return atn_error_set(err, ATN_E_INVALID, "head on demand: not an attention file's capture");
    /* the capture is the lazy_cap field of its file */
    atn_attn_file *f = (atn_attn_file *)(void *)((char *)(uintptr_t)cap - offsetof(atn_attn_file, lazy_cap));
    if (f->lazy_magic != ATN_ATTN_LAZY_MAGIC)
        return atn_error_set(err, ATN_E_INVALID, "head on demand: not an attention file's capture");
    if (head < 0 || head >= f->H)
        return atn_error_set(err, ATN_E_INVALID, "%s: head %d outside 0..%d", f->path, head, f->H - 1);
    size_t nn = (size_t)f->n * f->n;
    if (layer >= 0 && layer < f->L && f->layer_heads && head >= f->layer_heads[layer]) {
        memset(out, 0, nn * sizeof *out);   /* a head the layer does not have: zeros (atn_capture.layer_heads) */
        return ATN_OK;
    }
    const float *a;
    pthread_mutex_lock(&f->lock);
    atn_status st = atn_attn_file_layer_floats_locked(f, layer, &a, err);
    if (st == ATN_OK)   /* the head only: a 2,730-token layer of 12 heads is 358 MB, a head 30 MB */
        st = atn_attn_file_check_head_locked(f, layer, head, a, err);
    pthread_mutex_unlock(&f->lock);
    if (st != ATN_OK)
        return st;
    memcpy(out, a + (size_t)head * nn, nn * sizeof *out);   /* the layer stays until the file is freed */
    return ATN_OK;
}

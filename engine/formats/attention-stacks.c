/* An attention file's encoder-decoder stacks (attention-file-private.h): made whole for the
 * eager capture (atn_attn_file_make_stacks), or shapes only for the lazy capture, whose
 * decoder and cross heads are read one at a time through the mapping, converted and checked
 * when used (atn_attn_file_stack_head, attention-lazy.h), so opening a large encoder-decoder
 * file reads none of its attention. */
#include "attention-file.h"
#include "formats/attention-file-private.h"
#include "formats/attention-lazy.h"
#include "forward/fp16.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An encoder-decoder's stack k (0 encoder, 1 decoder, 2 cross) as its tensor's shape says,
 * with attn (NULL: read a head at a time, atn_stack_head_read). */
static atn_stack stack_of(const atn_attn_file *f, int k, const atn_st_tensor *t, const float *attn) {
    static const char *const names[3] = {"encoder", "decoder", "cross"};
    return (atn_stack){.kind = (atn_stack_kind)k, .name = names[k], .n_layers = (int32_t)t->shape[0],
                       .n_heads = (int32_t)t->shape[1], .n_q = (int32_t)t->shape[2], .n_k = (int32_t)t->shape[3],
                       .attn = attn, .q_ids = k == 0 ? f->enc->ids : f->tgt_ids, .k_ids = k == 1 ? f->tgt_ids : f->enc->ids};
}

void atn_attn_file_lazy_stacks(atn_attn_file *f) {
    static const char *const names[3] = {"encoder", "decoder", "cross"};
    for (int k = 0; f->info.n_stacks && k < 3; k++)
        f->lazy_stacks[k] = stack_of(f, k, atn_st_find(f->st, names[k]), NULL);
}

/* A non-finite or negative value among a[count] (a head or a whole stack of tensor name, its
 * first value at flat index base of [L][H][nq][nk]): the error naming the file, the tensor, the
 * layer, head, query and key; ATN_OK when every value is a weight. */
atn_status atn_attn_file_check_values(const atn_attn_file *f, const char *name, const atn_st_tensor *t,
                                      const float *a, size_t count, size_t base, atn_error *err) {
    for (size_t j = 0; j < count; j++)
        if (!isfinite(a[j]) || a[j] < 0) {
            size_t i = base + j, nk = (size_t)t->shape[3], nq = (size_t)t->shape[2], hh = (size_t)t->shape[1];
            return atn_error_set(err, ATN_E_FORMAT, "%s: '%s' holds %s at layer %zu, head %zu, query %zu, key %zu",
                                 f->path, name, isnan(a[j]) ? "NaN" : isinf(a[j]) ? "Inf" : "a negative value",
                                 i / nk / nq / hh, i / nk / nq % hh, i / nk % nq, i % nk);
        }
    return ATN_OK;
}

/* An encoder-decoder's three stacks (encoder: the attention already read): the mapping
 * itself for aligned F32, else converted copies; decoder and cross are checked as layers are
 * (NaN, Inf, negative values refused naming the tensor).  Made once.  The lazy capture reads
 * none of this: its stacks are f->lazy_stacks, every attn NULL. */
atn_status atn_attn_file_make_stacks(atn_attn_file *f, atn_error *err) {
    if (!f->info.n_stacks)
        return ATN_OK;
    static const char *const names[3] = {"encoder", "decoder", "cross"};
    for (int k = 0; k < 3; k++) {
        if (f->stacks[k].name)
            continue;   /* made before */
        const atn_st_tensor *t = atn_st_find(f->st, names[k]);
        size_t count = (size_t)t->count;
        const float *a;
        if (t->dtype == ATN_ST_F32 && ((uintptr_t)t->data & 3) == 0) {
            a = t->data;
        } else {
            if (!f->stack_own[k] && !(f->stack_own[k] = malloc(count * sizeof(float))))
                return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory for '%s'", f->path, names[k]);
            if (t->dtype == ATN_ST_F16)
                atn_f16_to_f32_array(f->stack_own[k], t->data, count);
            else if (t->dtype == ATN_ST_BF16)
                atn_bf16_to_f32_array(f->stack_own[k], t->data, count);
            else
                memcpy(f->stack_own[k], t->data, count * sizeof(float));
            a = f->stack_own[k];
        }
        atn_status st = k > 0 ? atn_attn_file_check_values(f, names[k], t, a, count, 0, err) : ATN_OK;
        if (st != ATN_OK)
            return st;
        f->stacks[k] = stack_of(f, k, t, a);
    }
    return ATN_OK;
}


atn_status atn_attn_file_stack_head(const atn_capture *cap, atn_stack_kind kind, int32_t layer, int32_t head,
                                    float *out, atn_error *err) {
    if (!cap || !out || !cap->attn_on_demand || cap->run || !cap->n_stacks || (int)kind < 0 ||
        (int)kind > 2)
        return atn_error_set(err, ATN_E_INVALID, "stack head: not an encoder-decoder attention file's capture");
    atn_attn_file *f = (atn_attn_file *)(void *)((char *)(uintptr_t)cap - offsetof(atn_attn_file, lazy_cap));
    if (f->lazy_magic != ATN_ATTN_LAZY_MAGIC)
        return atn_error_set(err, ATN_E_INVALID, "stack head: not an encoder-decoder attention file's capture");
    if (kind == ATN_STACK_ENCODER)   /* the capture's own heads */
        return atn_attn_file_capture_head(cap, layer, head, out, err);
    const atn_stack *s = &f->lazy_stacks[kind];
    if (layer < 0 || layer >= s->n_layers || head < 0 || head >= s->n_heads)
        return atn_error_set(err, ATN_E_INVALID, "%s: '%s' has layers 0..%d and heads 0..%d, not layer %d head %d",
                             f->path, s->name, s->n_layers - 1, s->n_heads - 1, layer, head);
    const atn_st_tensor *t = atn_st_find(f->st, s->name);
    size_t count = (size_t)s->n_q * s->n_k, base = ((size_t)layer * s->n_heads + head) * count;
    /* the head's bytes only: the mapping is read-only, so any thread may read any head */
    const uint8_t *raw = (const uint8_t *)t->data + base * atn_st_dtype_size(t->dtype);
    if (t->dtype == ATN_ST_F16)
        atn_f16_to_f32_array(out, raw, count);
    else if (t->dtype == ATN_ST_BF16)
        atn_bf16_to_f32_array(out, raw, count);
    else
        memcpy(out, raw, count * sizeof *out);
    return atn_attn_file_check_values(f, s->name, t, out, count, base, err);
}

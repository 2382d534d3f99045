/* The attention file object's fields, shared by the reader (attention-file.c) and the trace
 * from its q, k, v (attention-trace.c).  Private to engine/formats. */
#ifndef ATN_ATTENTION_FILE_PRIVATE_H
#define ATN_ATTENTION_FILE_PRIVATE_H

#include "attention-file.h"
#include "formats/safetensors.h"

#include <cjson/cJSON.h>
#include <pthread.h>

struct atn_attn_file {
    char *path;
    const char *container;
    void *map;                  /* the file's mapping (safetensors; npz/npy: owned by st) */
    size_t map_len;
    atn_st_file *st;
    cJSON *meta;                /* key -> parsed JSON value */
    char **npz_tokens;          /* tokens from an .npz string array, [n_npz_tokens] */
    int32_t n_npz_tokens;
    const char *primary;        /* "attn", "attn.L*", "decoder" or "encoder" */
    const atn_st_tensor *attn;  /* the [L][H][n][n] tensor, or NULL with per_layer */
    const atn_st_tensor **per_layer;   /* [L] attn.L{l}, each [H_l][n][n] */
    int32_t *layer_heads;       /* [L] H_l when the layers' head counts differ (H is the largest;
                                   the capture's layer_heads); NULL when every layer has H */
    atn_st_dtype dtype;
    int32_t L, H, n;
    atn_attn_file_info info;
    atn_encoding *enc;
    const float **layer_ptr;    /* [L] the layer's floats once read */
    float **layer_own;          /* [L] converted copies (NULL: none) */
    bool *checked;              /* [L] every head of the layer checked */
    uint8_t *head_checked;      /* [L][H] that head checked (the lazy capture checks a head) */
    float *block;               /* the capture's [L][H][n][n] when not the mapping itself */
    atn_capture cap;
    bool cap_ready;
    int64_t bad_rows;           /* rows (of the layers read) that do not sum to 1 */
    double worst_dev, worst_sum, max_sum;
    int32_t worst_l, worst_h, worst_q;
    char warning[768];
    /* an encoder-decoder's file (encoder, decoder and cross all present): its stacks, made
       with the capture (attn: the mapping or stack_own), the decoder's ids (target_ids, else
       -1s) and the cross rows' token texts (metadata query_tokens) */
    atn_stack stacks[3];
    float *stack_own[3];
    atn_stack lazy_stacks[3];   /* the lazy capture's: the same with attn NULL */
    int32_t *tgt_ids;           /* [n_tgt] */
    int32_t n_tgt, n_dec_layers;
    char **query_tokens;        /* [n_tgt] or NULL */
    /* the layer cache above (layer_ptr, layer_own, checked, the row-sum warning) is read and
       written under lock: the lazy capture's heads are read from several threads */
    pthread_mutex_t lock;
    /* the lazy capture (atn_attn_file_capture_lazy): attn NULL, attn_on_demand, run NULL;
       atn_capture_head finds this file from it (attention-lazy.h) */
    atn_capture lazy_cap;
    bool lazy_ready;
    uint32_t lazy_magic;        /* ATN_ATTN_LAZY_MAGIC once lazy_cap is made */
};

#define ATN_ATTN_LAZY_MAGIC 0x617a794cu

/* With f->lock held: atn_attn_file_layer; the layer's floats (mapped or converted, kept)
 * without the check; the check of one head of them (a: the layer's floats), once. */
atn_status atn_attn_file_layer_locked(atn_attn_file *f, int32_t layer, const float **out, atn_error *err);
atn_status atn_attn_file_layer_floats_locked(atn_attn_file *f, int32_t layer, const float **out, atn_error *err);
atn_status atn_attn_file_check_head_locked(atn_attn_file *f, int32_t layer, int32_t head, const float *a,
                                           atn_error *err);

/* An encoder-decoder's stacks into f->stacks (attention-file.c): every stack mapped (F32) or
 * converted, decoder and cross checked whole (their errors name 'decoder' / 'cross', the layer,
 * head, query and key).  The eager capture's. */
atn_status atn_attn_file_make_stacks(atn_attn_file *f, atn_error *err);
/* The lazy capture's stacks into f->lazy_stacks: shapes and ids only, every attn NULL (each
 * head read through atn_attn_file_stack_head).  Reads no attention. */
void atn_attn_file_lazy_stacks(atn_attn_file *f);
/* NaN, Inf or a negative value among a[count] of tensor t (named name), a[0] being its flat
 * index base: ATN_E_FORMAT naming f's path, name, layer, head, query and key; else ATN_OK. */
atn_status atn_attn_file_check_values(const atn_attn_file *f, const char *name, const atn_st_tensor *t,
                                      const float *a, size_t count, size_t base, atn_error *err);

#endif

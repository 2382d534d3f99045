/* The attention file object's fields, shared by the reader (attention-file.c) and the trace
 * from its q, k, v (attention-trace.c).  Private to engine/formats. */
#ifndef ATN_ATTENTION_FILE_PRIVATE_H
#define ATN_ATTENTION_FILE_PRIVATE_H

#include "attention-file.h"
#include "formats/safetensors.h"

#include <cjson/cJSON.h>

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
    const atn_st_tensor **per_layer;   /* [L] attn.L{l}, each [H][n][n] */
    atn_st_dtype dtype;
    int32_t L, H, n;
    atn_attn_file_info info;
    atn_encoding *enc;
    const float **layer_ptr;    /* [L] the layer's floats once read */
    float **layer_own;          /* [L] converted copies (NULL: none) */
    bool *checked;              /* [L] */
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
    int32_t *tgt_ids;           /* [n_tgt] */
    int32_t n_tgt, n_dec_layers;
    char **query_tokens;        /* [n_tgt] or NULL */
};

#endif

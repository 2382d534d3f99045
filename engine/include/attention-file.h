/* The attention file: attention computed by any model, anywhere, opened without its
 * weights (format "attnscope-attention/1"; docs/attention-file.md is the specification).
 *
 * A safetensors file (no pickle) holding
 *   attn          [L, H, n, n]  probabilities, row = query, column = key   (or one
 *   attn.L{l}     [H_l, n, n]   per layer, l = 0..L-1, every layer the same n; H_l may
 *                               differ: H is then the largest, and a layer's heads past its
 *                               H_l are absent, atn_capture.layer_heads)
 * and optionally scores [L, H, n, n] (pre-softmax), q / k / v [L, H|H_kv, n, d], mask [n]
 * (1 = real token), token_ids [n], type_ids [n], cross [L, H, n_dec, n_enc], encoder /
 * decoder [L, H, m, m]; attention in F32, F16 or BF16.  "__metadata__" maps names to JSON
 * text: format ("attnscope-attention/1"), tokens (n strings), query_tokens / key_tokens,
 * token_roles, special_tokens, model_id, family, source, causal, n_kv_heads, kv_heads,
 * positions, window.  Also read: a .npz with the same array names (tokens as a numpy string
 * array), and a lone .npy of the attention with a tokens.json beside it.  Pickles (.pt,
 * .pth, .pkl, .bin) are refused with the numpy-only way to convert.
 *
 * Opening reads the header only: the attention is read one layer at a time through the
 * file's mapping (atn_attn_file_layer), and each layer is checked the first time it is read
 * (NaN or Inf and negative values refused, rows that do not sum to 1 reported once as a
 * warning naming the worst row).
 *
 * Threads: an atn_attn_file belongs to one thread at a time, but for atn_attn_file_layer
 * and the heads of its lazy capture, which several threads may read at once (a lock guards the
 * layer cache); its capture may be read from several threads once made. */
#ifndef ATN_ATTENTION_FILE_H
#define ATN_ATTENTION_FILE_H

#include "attnscope.h"

#include <stdbool.h>
#include <stdint.h>

#define ATN_ATTN_FORMAT "attnscope-attention/1"

typedef struct atn_attn_file atn_attn_file;

/* What the header says (strings borrowed from the file object; "" when absent). */
typedef struct atn_attn_file_info {
    int32_t n_layers, n_heads, n;   /* the attention is [n_layers][n_heads][n][n] (n_heads: the
                                       largest layer's, when attn.L{l} differ) */
    const char *model_id, *family, *source, *positions;
    bool causal;                    /* metadata "causal" (false when absent) */
    int32_t n_kv_heads;             /* metadata "n_kv_heads"; 0 when absent (also the
                                       capture's n_kv_heads; "kv_heads", when present, must be
                                       h / (n_heads / n_kv_heads), else ATN_E_FORMAT) */
    const char *dtype;              /* the attention's dtype: "F32", "F16", "BF16" */
    bool has_scores, has_qkv, has_mask, has_cross, has_token_ids;
    const char *container;          /* "safetensors", "npz" or "npy" */
    int32_t n_stacks;               /* 3: an encoder-decoder's file (encoder, decoder and cross
                                       tensors; the attention above is the encoder's); else 0 */
} atn_attn_file_info;

/* Opens path (by its content: a safetensors header; by its name: .npz, .npy, and the
 * pickles .pt/.pth/.pkl/.ckpt refused).  Reads and checks the header and the metadata, not
 * the attention itself.  *out (NULL on error) is the caller's (atn_attn_file_free).
 * Errors, each message naming the file and the tensor or metadata key:
 * ATN_E_INVALID (NULL argument), ATN_E_IO (cannot open or map), ATN_E_FORMAT (not an
 * attention file, a wrong rank or shape, a dtype other than F32/F16/BF16 for attention, tokens
 * of the wrong length, metadata that is not JSON or of the wrong type, a header whose offsets
 * lie), ATN_E_UNSUPPORTED (a pickle, a compressed .npz; beside layers of different head
 * counts: scores, q, k, v, n_kv_heads or kv_heads, named), ATN_E_NOMEM. */
atn_status atn_attn_file_open(const char *path, atn_attn_file **out, atn_error *err);
void atn_attn_file_free(atn_attn_file *f);   /* NULL: nothing */

/* NULL f: a zeroed info. */
atn_attn_file_info atn_attn_file_get_info(const atn_attn_file *f);

/* The tokens (n of them: text, id from token_ids or -1, roles from token_roles or the
 * usual spellings "[CLS]", "<s>", "[SEP]", "</s>", "[PAD]", "<pad>", "[MASK]", "<mask>",
 * "[UNK]", "<unk>"; mask from the mask tensor, else all 1).  Tokens the file does not
 * name are "#i" (or "#id" with token_ids).  Borrowed from f. */
const atn_encoding *atn_attn_file_encoding(const atn_attn_file *f);

/* Layer `layer`'s attention, [H][n][n] floats, into *out (borrowed from f: valid until
 * atn_attn_file_free).  F32 data aligned in the file is the mapping itself; F16/BF16 (or
 * unaligned) layers are converted once and kept.  The first read checks the layer:
 * ATN_E_FORMAT for NaN/Inf or a negative value (the message names the tensor, layer, head,
 * query and key); ATN_E_INVALID for a layer outside 0..L-1 or NULL arguments; ATN_E_NOMEM. */
atn_status atn_attn_file_layer(atn_attn_file *f, int32_t layer, const float **out, atn_error *err);

/* A warning about the layers read so far: the rows that do not sum to 1 (within 1e-3 for
 * F32, 1e-2 for F16, 4e-2 for BF16; an all-zero row is a switched-off head or a padded query
 * and is fine), with the worst row and, when rows sum far above 1, the suggestion that
 * pre-softmax scores were saved as attention.  NULL when there is nothing to say.
 * Borrowed from f; changes as more layers are read. */
const char *atn_attn_file_warning(const atn_attn_file *f);

/* The decoder's token texts of an encoder-decoder's file (metadata query_tokens: the rows of
 * decoder and cross), [*n]; NULL (and *n 0) when the file has no stacks or no query_tokens.
 * Borrowed from f; n may be NULL. */
const char *const *atn_attn_file_query_tokens(const atn_attn_file *f, int32_t *n);

/* Reads and checks every layer (errors as atn_attn_file_layer) and returns a capture of
 * the file: n_layers, n_heads, n, enc (atn_attn_file_encoding), attn ([L][H][n][n]: the
 * mapping itself for a contiguous aligned F32 `attn`, else one block the file owns; layers
 * of different head counts: their absent heads zeros there, layer_heads [L] the counts,
 * borrowed from f); an
 * encoder-decoder's file (info.n_stacks 3) also gets n_stacks, stacks (encoder = attn,
 * decoder, cross: as a run's, q_ids/k_ids the file's token_ids and target_ids or -1s, the
 * decoder and cross checked as layers are), n_dec_layers, n_tgt and target_ids; no
 * hidden states, Q/K/V or mask_add (has_trace_inputs false), nonfinite_layer -1,
 * temperature 1.  progress (may be NULL) gets ATN_STAGE_LAYER fractions; returning false
 * ends with ATN_E_CANCELLED.  Borrowed from f. */
atn_status atn_attn_file_capture(atn_attn_file *f, const atn_capture **out, atn_progress_fn progress,
                                 void *user_data, atn_error *err);

/* The capture of the file without reading its attention: n_layers, n_heads, n, enc as
 * atn_attn_file_capture, but attn NULL and attn_on_demand true (run NULL), so every reader
 * takes heads through atn_capture_head / atn_capture_head_read (a scratch [n][n] each), and a
 * head's read reads its layer through the mapping (aligned F32 in place, F16/BF16 converted
 * and kept) and checks that head the first time (as atn_attn_file_layer checks each head of
 * a layer; a bad head's ATN_E_FORMAT names the file, the tensor, the layer and the head, each
 * time it is read; atn_attn_file_warning covers the heads checked).  Costs nothing
 * but the struct: what a 4 GB file's window and one-head commands open with.  An
 * encoder-decoder's file (info.n_stacks 3): its encoder (the capture's heads) so, and its
 * stacks as atn_attn_file_capture's (n_stacks, stacks, n_dec_layers, n_tgt, target_ids), but
 * the encoder's stack with attn NULL; the decoder's and cross stacks are read and checked
 * whole here (their errors as atn_attn_file_capture's, naming 'decoder' / 'cross').
 * Borrowed from f; ATN_E_INVALID for NULL arguments. */
atn_status atn_attn_file_capture_lazy(atn_attn_file *f, const atn_capture **out, atn_error *err);

/* One head's arithmetic for one query token recomputed from the file's q, k, v (the trace of
 * attnscope.h, from a file instead of a run): q_i, every k_j and v_j of the head (k, v: its
 * K/V head, metadata "kv_heads" or head / (H / H_kv)), scores q_i.k_j, the scale (metadata
 * "scale", one number or one per layer; else 1/sqrt(d)), the mask (ATN_MASK_MIN, -FLT_MAX,
 * on padded keys of the mask tensor, on later keys when "causal", on keys at or past the
 * metadata "window" behind the query), the softmax, the weighted sum of v, and concat: every
 * head's output for the query from the file's attention and v (this head's from the
 * recomputation).  The trace's from_file is true; projected is NULL (W_O is not in a file),
 * d_model is d_concat = H d; no step 0, ALiBi, soft-cap or relative terms (bias_term all 0,
 * temperature 1).  max_abs_diff compares the weights with the file's attention (which is
 * read and checked: that layer's errors as atn_attn_file_layer).  *out is the caller's
 * (atn_trace_free); enc is borrowed from f.  ATN_E_UNSUPPORTED: the file has no q, k, v (the
 * message says so and how to write them); ATN_E_INVALID: NULL f/out, layer, head or query out
 * of range (the message gives the range); ATN_E_NOMEM.  One thread at a time per f. */
atn_status atn_attn_file_trace(atn_attn_file *f, int32_t layer, int32_t head, int32_t query, atn_trace **out,
                               atn_error *err);

/* What a writer records beside the capture. */
typedef struct atn_attn_file_meta {
    const char *model_id;   /* NULL: left out */
    const char *family;     /* NULL: left out */
    const char *source;     /* NULL: "attnscope" */
    bool causal;
    /* also write q, k, v ([L, H, n, d]; k, v [L, H_kv, n, d]: the capture's projections as
       they are, what the scores read) and the metadata "scale" (the model's factor, one
       number or one per layer): the trace from the file then gives the model's trace's
       numbers.  Needs a capture with trace inputs (ATN_E_INVALID).  With or without it, a
       capture with fewer K/V heads than heads (cap->n_kv_heads) writes "n_kv_heads" and
       "kv_heads" (query head h reads K/V head h / (n_heads / n_kv_heads)) */
    bool qkv;
    const atn_model *model;  /* for the scale; NULL: 1/sqrt(d) */
} atn_attn_file_meta;

/* Writes cap's attention as an attention file: attn F32 [L, H, n, n] (the capture's floats
 * as they are, so reading it back gives the same bits; an encoder-decoder's run: its stacks
 * encoder, decoder and cross in place of attn, target_ids I32 [n_tgt] and the metadata
 * query_tokens (the decoder's, their vocabulary text with meta->model, else "#id") and
 * key_tokens; with qkv ATN_E_UNSUPPORTED), token_ids, type_ids and mask I32 [n],
 * and the metadata format, tokens, token_roles, special_tokens, causal, model_id, family,
 * source.  Through atn_atomic_open (its errors); ATN_E_INVALID for a NULL path or cap or a
 * capture without attention; ATN_E_NOMEM. */
atn_status atn_attn_file_write(const char *path, const atn_capture *cap, const atn_attn_file_meta *meta,
                               atn_error *err);

#endif

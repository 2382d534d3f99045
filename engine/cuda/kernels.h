/* The CUDA backend's own kernels (engine/cuda/kernels.cu), behind plain C launchers so the
 * host side (cuda-backend.c) stays C.  Every launcher enqueues on stream s and returns
 * cudaGetLastError().  Shapes are row-major, as on the CPU: n tokens, d width, o outputs. */
#ifndef ATN_CUDA_KERNELS_H
#define ATN_CUDA_KERNELS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Activation codes for atn_cu_bias_act: the atn_activation values, or ATN_CU_ACT_NONE. */
#define ATN_CU_ACT_NONE (-1)

/* x[n,o] = act(x + b[o]); b NULL means no bias. */
cudaError_t atn_cu_bias_act(float *x, const float *b, int32_t n, int32_t o, int act, cudaStream_t s);
/* out[i,:] = word[ids[i]] + pos[pos_ids[i]] + type[types[i]], for i < n rows of d; type NULL (a
 * family without token types) means no type term, types is then not read; pos NULL (the
 * what-if lab's run without positions) no position term, pos_ids not read. */
cudaError_t atn_cu_embed(float *out, const int32_t *ids, const int32_t *pos_ids, const int32_t *types,
                         const float *word, const float *pos, const float *type, int32_t n, int32_t d, cudaStream_t s);
/* out[r,:] = LayerNorm(in[r,:] + resid[r,:]) * g + b over rows of d (biased variance, as
 * torch); resid NULL means none; out may be in; g/b NULL mean 1/0. */
cudaError_t atn_cu_layernorm(float *out, const float *in, const float *resid, const float *g, const float *b,
                             int32_t n, int32_t d, float eps, cudaStream_t s);
/* x[i] += y[i]. */
cudaError_t atn_cu_add(float *x, const float *y, size_t count, cudaStream_t s);
/* Each of rows rows of n (heads x n queries): att = softmax(att + mask_add[row % n]),
 * max-subtracted; mask_add is the run's [n][n] additive mask (row = query). */
cudaError_t atn_cu_softmax(float *att, const float *mask_add, int64_t rows, int32_t n, cudaStream_t s);
/* The softmax with the what-if gates (the reference ops' softmax_rows_iv): each of rows rows
 * of n, head h = row / n of heads_off [H] and slopes [H], query i = row % n, gets
 * (att + mask_add[i] - slopes[h] |i - j|) / temperature, clamped at -FLT_MAX, softmaxed;
 * a switched-off head's row is 0 (head_mode ATN_HEAD_ZERO) or uniform over the keys whose
 * mask is 0 (ATN_HEAD_UNIFORM).  slopes / heads_off NULL: none.  temperature > 0. */
cudaError_t atn_cu_softmax_gated(float *att, const float *mask_add, int64_t rows, int32_t n, const float *slopes,
                                 float temperature, const uint8_t *heads_off, int head_mode, cudaStream_t s);
/* *flag = 1 when any of x[0..count) is NaN or infinite (flag is left alone otherwise). */
cudaError_t atn_cu_nonfinite(int32_t *flag, const float *x, size_t count, cudaStream_t s);
/* dst[i] = src[i] rounded to fp16 (bf16 == 0) or bf16 (bf16 != 0); dst holds 2-byte values. */
cudaError_t atn_cu_to_half(void *dst, const float *src, size_t count, int bf16, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif

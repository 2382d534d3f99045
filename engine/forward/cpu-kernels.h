/* AVX-512 kernels for the CPU forward pass (engine/forward/cpu-kernels.c): a matrix product
 * against weights packed once per model, one head's attention for a range of query rows
 * (scores, masked softmax, context) and row-wise LayerNorm.  Used by engine/forward/encoder.c
 * when atn_cpu_kernels_usable(); otherwise the encoder goes through cblas_sgemm.
 *
 * Size letters as in attnscope.h: n tokens, d width, k head width, f ffn width. */
#ifndef ATN_CPU_KERNELS_H
#define ATN_CPU_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Width of a packed panel (output columns per panel). */
enum { ATN_PANEL = 64 };

/* Whether this CPU (and OS) runs AVX-512F, and ATTNSCOPE_CPU_KERNELS is not "blas"
 * (the switch that forces the cblas_sgemm path, for comparisons and tests). */
bool atn_cpu_kernels_usable(void);

/* Panels of a weight with o outputs, and the floats its packed copy takes. */
static inline int32_t atn_panels(int32_t o) { return (o + ATN_PANEL - 1) / ATN_PANEL; }
static inline size_t atn_packed_floats(int32_t o, int32_t i) { return (size_t)atn_panels(o) * ATN_PANEL * (size_t)i; }

/* Packs panels [p0, p1) of a weight w [o, i] (y = x w^T) into dst: panel p holds, for each
 * input index c, the 64 weights w[p*64 + j][c] (zero past o): dst[(p*i + c)*64 + j]. */
void atn_pack_weight(float *dst, const float *w, int32_t o, int32_t i, int32_t p0, int32_t p1);

/* Activation applied to a product's output: -1 for none, else an atn_activation. */
/* out[m, o] (row stride ldo) = a[m, i] (row stride lda) · w^T + bias (NULL: 0)
 *                              + res[m, o] (row stride ldr; NULL: nothing), then act,
 * for the output columns of panels [p0, p1) of the packed weight wp. */
void atn_gemm_packed(float *out, size_t ldo, const float *a, size_t lda, const float *wp, const float *bias,
                     const float *res, size_t ldr, int32_t m, int32_t o, int32_t i, int32_t p0, int32_t p1,
                     int act);

/* Scratch floats atn_attention_rows needs for n tokens and head width k. */
size_t atn_attention_scratch_floats(int32_t n, int32_t k);

/* One head, query rows [r0, r1): att_h[i][j] = softmax_j(scale · q_i·k_j + mask_add[i][j]) and
 * ctx_i = Σ_j att_h[i][j] v_j.  q, k, v, ctx point at the head's first column of [n, *]
 * matrices with row stride ld; att_h is the head's [n][n]; mask_add is the run's [n][n]
 * additive mask (row = query).  When repack is true, K is
 * (re)packed into scratch first; pass false only for the same head and k as the last call
 * with this scratch. */
void atn_attention_rows(float *ctx, float *att_h, const float *q, const float *k, const float *v, size_t ld,
                        const float *mask_add, int32_t n, int32_t kd, int32_t r0, int32_t r1, float scale,
                        float *scratch, bool repack);

/* Rows [r0, r1) of [*, d]: out = LayerNorm(in + res) with gamma g, beta b (NULL: 1, 0);
 * res may be NULL; in == out allowed.  Returns false when an output is NaN or infinite. */
bool atn_layernorm_rows(float *out, const float *in, const float *res, const float *g, const float *b, int32_t r0,
                        int32_t r1, int32_t d, float eps);

#endif

/* tanh and the tanh-form GELU (HF "gelu_new" / "gelu_pytorch_tanh") over arrays, 8 floats at
 * a time with AVX2 + FMA when the CPU has them, else one at a time with the same operations
 * in the same order (fmaf where the vector code fuses), so both give the same bits on every
 * input.  docs/PERFORMANCE.md says why (libm's tanhf was a fifth of an ALBERT forward). */
#ifndef ATN_ACTIVATION_H
#define ATN_ACTIVATION_H

#include <stdbool.h>
#include <stddef.h>

/* tanh(x): |x| < 0.625 an odd polynomial x + x·x²·P(x²) (Cephes' tanhf coefficients), else
 * sign(x) (1 - 2/(exp(2|x|) + 1)) with |x| clamped to 10 (where tanh is 1 in float) and a
 * Cephes expf polynomial scaled by 2^k.  tanh(±0) = ±0, tanh(±inf) = ±1, NaN stays NaN.
 * Against double tanh, measured over every positive float: at most 1.357 ulp, at 0.631 just
 * above the hand-over (glibc's tanhf: 2.19 ulp); tests/engine/test-activation.c checks 2 ulp
 * on a sweep of every binade. */
float atn_tanh_scalar(float x);
/* dst[i] = tanh(src[i]) for count floats; dst == src allowed (no other overlap).  Vector or
 * scalar as atn_activation_uses_avx2() says; both give the same bits. */
void atn_tanh_array(float *dst, const float *src, size_t count);
void atn_tanh_array_scalar(float *dst, const float *src, size_t count);

/* x[i] = 0.5 v (1 + tanh(√(2/π) (v + 0.044715 v³))), v = x[i], in place, as Hugging Face's
 * NewGELUActivation writes it (the inner sum is one fma), except that 1 + tanh(z) is
 * 2/(exp(-2z) + 1) for z <= -0.625 rather than a cancelling sum: relative error 8.3e-7 for
 * v >= -3 (the float formula with an exact tanh: 1.2e-5).  GELU(+inf) = +inf,
 * GELU(-inf) = NaN (as torch: -inf · 0), GELU(v) = -0 where z < -43, NaN stays NaN. */
void atn_gelu_tanh(float *x, size_t count);
void atn_gelu_tanh_scalar(float *x, size_t count);

/* Whether the arrays above take the AVX2 + FMA code: the CPU has both and the OS saves the
 * ymm state (atn_cpu_features), and ATTNSCOPE_NO_AVX2 is not set in the
 * environment (read once). */
bool atn_activation_uses_avx2(void);

#endif

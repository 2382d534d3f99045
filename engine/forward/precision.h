/* Reduced precision on the CPU (bf16, fp16), emulated: the operands of every matrix product
 * are rounded to the format (round to nearest, ties to even) and kept in float32 storage,
 * the products are the fp32 ones (cblas_sgemm), so the accumulation is fp32 in the same
 * order as an fp32 run.  Softmax, LayerNorm, activations and residual adds stay fp32.  The
 * CUDA backend rounds the same operands (engine/cuda/cuda-backend.c, cublasGemmEx with
 * fp32 compute).  docs/PERFORMANCE.md, "Reduced precision on the CPU". */
#ifndef ATN_PRECISION_H
#define ATN_PRECISION_H

#include "core/bits.h"
#include "core/model-private.h"

#include <stdint.h>

/* x rounded to the nearest bfloat16 (ties to even), as a float.  NaN stays NaN (quiet),
 * infinities stay, a finite value above the largest bf16 (and below FLT_MAX) rounds to
 * ±inf as torch's round_to_nearest_even does; subnormals round like any other value. */
static inline float atn_round_bf16(float x) {
    uint32_t u = atn_f32_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        u = (u | 0x00400000u) & 0xffff0000u;   /* NaN: quiet, top of the payload kept */
    else
        u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    return atn_f32_from_bits(u);
}

/* The IEEE binary16 bits nearest to x (ties to even): |x| >= 65520 becomes ±inf (65519.99
 * gives 65504), values below 2^-14 become fp16 subnormals, below or at 2^-25 zero; NaN a
 * quiet NaN. */
static inline uint16_t atn_f32_to_f16_bits(float x) {
    uint32_t u = atn_f32_bits(x);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u | (a >> 13));
    if (a >= 0x477ff000u)                      /* 65520: the tie above 65504 rounds to even, inf */
        return (uint16_t)(sign | 0x7c00u);
    if (a < 0x38800000u) {                     /* below 2^-14: an fp16 subnormal (or zero) */
        if (a <= 0x33000000u)                  /* at most 2^-25, half the smallest: zero */
            return sign;
        uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126u - e;   /* 14..24 */
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        r += rem > half || (rem == half && (r & 1u));
        return (uint16_t)(sign | r);
    }
    uint32_t r = a - 0x38000000u;              /* exponent bias 127 -> 15 */
    r = (r + 0xfffu + ((r >> 13) & 1u)) >> 13;
    return (uint16_t)(sign | r);
}

/* Rounding to fp16 and back, scalar (the reference for the F16C path). */
float atn_round_fp16(float x);

/* dst[i] = src[i] rounded to precision p (dst == src allowed); FP32 copies (or does
 * nothing in place).  Returns how many finite values became ±inf (fp16 overflow; bf16
 * only overflows above 3.39e38).  fp16 uses F16C (vcvtps2ph / vcvtph2ps, round to nearest
 * even) when the CPU has it (atn_cpu_features, checked once; ATTNSCOPE_NO_F16C set in the environment
 * turns it off, for tests) and the scalar function otherwise: the
 * same values bit for bit (tests/engine/test-precision.c compares them). */
int64_t atn_round_array(float *dst, const float *src, size_t count, atn_precision p);
/* The same with the scalar path only (tests). */
int64_t atn_round_array_scalar(float *dst, const float *src, size_t count, atn_precision p);
/* True when atn_round_array uses F16C for fp16 on this CPU. */
bool atn_round_uses_f16c(void);

/* A model's weights as a reduced-precision run reads them: the six matrices of each layer
 * (W_Q, W_K, W_V, W_O, W_1, W_2) and the embedding projection rounded to p, in float32;
 * biases, LayerNorm, embeddings the fp32 ones.  ALBERT's shared layers are rounded once. */
typedef struct atn_rounded_weights {
    atn_precision precision;
    atn_layer_weights *layers;   /* [L], pointers as in m->w.layers but the matrices rounded */
    const float *emb_proj_w;     /* [d, E] rounded, or NULL */
    int64_t *weight_overflow;    /* [L+1]: weights that became ±inf in fp16 (row 0: the
                                    embedding projection, row l+1: layer l) */
    bool temporary;              /* a toy model's (editable): freed after the forward */
} atn_rounded_weights;

/* The rounded weights of m for p (not FP32): made on first use and kept with the model
 * (memory owned by it, under a lock: any thread may ask), except for toy models, whose
 * weights the window edits: those get a fresh copy the caller frees with
 * atn_rounded_weights_free.  NULL when out of memory. */
const atn_rounded_weights *atn_rounded_weights_get(const atn_model *m, atn_precision p);
void atn_rounded_weights_free(const atn_rounded_weights *rw);   /* only temporary ones; NULL: nothing */
/* Bytes atn_rounded_weights_get would still allocate (0 when kept already or p is FP32). */
size_t atn_rounded_pending_bytes(const atn_model *m, atn_precision p);

/* Floats of the scratch a reduced-precision CPU forward rounds operands into (run.c
 * allocates it with the activations): max(n * max(d, f, E), n * n). */
size_t atn_round_scratch_floats(const atn_config *c, int32_t n);

#endif

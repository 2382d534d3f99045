/* The CUDA backend's own kernels: everything in the forward pass that is not a matrix
 * product (those go to cuBLAS).  Each does what the matching CPU code in engine/forward/encoder.c
 * does, in the same order of operations where it matters for agreement:
 *   bias + activation (gelu erf, gelu tanh, relu), embeddings gather, residual add +
 *   LayerNorm (two-pass mean / biased variance), masked max-subtracted softmax,
 *   the non-finite check, and fp32 -> fp16/bf16 casts for reduced-precision GEMMs. */
#include "kernels.h"
#include "attnscope.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <float.h>
#include <math.h>

namespace {

constexpr int kThreads = 256;

/* Blocks for a grid-stride loop over count elements. */
unsigned grid_for(size_t count) {
    size_t b = (count + kThreads - 1) / kThreads;
    if (b > 65535u * 16u)
        b = 65535u * 16u;
    return (unsigned)(b ? b : 1);
}

/* Threads for one block per row of len: a power of two from 32 to 256. */
int row_threads(int32_t len) {
    int t = 32;
    while (t < kThreads && t < len)
        t *= 2;
    return t;
}

__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Block-wide sum/max; every thread gets the result.  shared holds 32 floats. */
__device__ float block_sum(float v, float *shared) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
    v = warp_sum(v);
    __syncthreads();   /* shared may still be read from a previous reduction */
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    v = lane < nwarps ? shared[lane] : 0.0f;
    return warp_sum(v);
}

__device__ float block_max(float v, float *shared) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    v = lane < nwarps ? shared[lane] : -FLT_MAX;
    return warp_max(v);
}

__device__ float activate(float x, int act) {
    switch (act) {
    case ATN_ACT_GELU:
        return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case ATN_ACT_GELU_TANH:
        return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case ATN_ACT_RELU:
        return x > 0.0f ? x : 0.0f;
    default:
        return x;
    }
}

__global__ void bias_act_kernel(float *x, const float *b, int32_t o, size_t count, int act) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        float v = x[i];
        if (b)
            v += b[i % (size_t)o];
        x[i] = activate(v, act);
    }
}

__global__ void embed_kernel(float *out, const int32_t *ids, const int32_t *pos_ids, const int32_t *types,
                             const float *word, const float *pos, const float *type, int32_t d, size_t count) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        size_t r = i / (size_t)d, c = i % (size_t)d;
        /* the CPU adds word + pos, then + type */
        float x = word[(size_t)ids[r] * d + c] + pos[(size_t)pos_ids[r] * d + c];
        out[i] = type ? x + type[(size_t)types[r] * d + c] : x;
    }
}

/* One block per row. */
__global__ void layernorm_kernel(float *out, const float *in, const float *resid, const float *g, const float *b,
                                 int32_t d, float eps) {
    __shared__ float shared[32];
    size_t row = blockIdx.x;
    const float *x = in + row * d;
    const float *rx = resid ? resid + row * d : nullptr;
    float *y = out + row * d;
    float s = 0.0f;
    for (int32_t c = threadIdx.x; c < d; c += blockDim.x) {
        float v = rx ? x[c] + rx[c] : x[c];
        y[c] = v;   /* each thread reads back only what it wrote */
        s += v;
    }
    float mean = block_sum(s, shared) / (float)d;
    float var = 0.0f;
    for (int32_t c = threadIdx.x; c < d; c += blockDim.x) {
        float t = y[c] - mean;
        var += t * t;
    }
    var = block_sum(var, shared) / (float)d;
    float rstd = 1.0f / sqrtf(var + eps);
    for (int32_t c = threadIdx.x; c < d; c += blockDim.x) {
        float t = (y[c] - mean) * rstd;
        y[c] = t * (g ? g[c] : 1.0f) + (b ? b[c] : 0.0f);
    }
}

__global__ void add_kernel(float *x, const float *y, size_t count) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        x[i] += y[i];
}

/* One block per row of n scores; rows are heads x queries, the mask's row is the query's. */
__global__ void softmax_kernel(float *att, const float *mask_add, int32_t n) {
    __shared__ float shared[32];
    float *row = att + (size_t)blockIdx.x * n;
    mask_add += (size_t)(blockIdx.x % (unsigned)n) * n;
    float mx = -FLT_MAX;
    for (int32_t j = threadIdx.x; j < n; j += blockDim.x) {
        float v = row[j] + mask_add[j];
        row[j] = v;
        mx = fmaxf(mx, v);
    }
    mx = block_max(mx, shared);
    float sum = 0.0f;
    for (int32_t j = threadIdx.x; j < n; j += blockDim.x) {
        float e = expf(row[j] - mx);
        row[j] = e;
        sum += e;
    }
    float inv = 1.0f / block_sum(sum, shared);
    for (int32_t j = threadIdx.x; j < n; j += blockDim.x)
        row[j] *= inv;
}

__global__ void nonfinite_kernel(int32_t *flag, const float *x, size_t count) {
    bool bad = false;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        bad |= !isfinite(x[i]);
    if (__syncthreads_or(bad) && threadIdx.x == 0)
        *flag = 1;
}

__global__ void to_fp16_kernel(__half *dst, const float *src, size_t count) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __float2half_rn(src[i]);
}

__global__ void to_bf16_kernel(__nv_bfloat16 *dst, const float *src, size_t count) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __float2bfloat16_rn(src[i]);
}

}  // namespace

extern "C" {

cudaError_t atn_cu_bias_act(float *x, const float *b, int32_t n, int32_t o, int act, cudaStream_t s) {
    size_t count = (size_t)n * o;
    if (!count || (!b && act == ATN_CU_ACT_NONE))
        return cudaSuccess;
    bias_act_kernel<<<grid_for(count), kThreads, 0, s>>>(x, b, o, count, act);
    return cudaGetLastError();
}

cudaError_t atn_cu_embed(float *out, const int32_t *ids, const int32_t *pos_ids, const int32_t *types,
                         const float *word, const float *pos, const float *type, int32_t n, int32_t d, cudaStream_t s) {
    size_t count = (size_t)n * d;
    embed_kernel<<<grid_for(count), kThreads, 0, s>>>(out, ids, pos_ids, types, word, pos, type, d, count);
    return cudaGetLastError();
}

cudaError_t atn_cu_layernorm(float *out, const float *in, const float *resid, const float *g, const float *b,
                             int32_t n, int32_t d, float eps, cudaStream_t s) {
    if (n <= 0)
        return cudaSuccess;
    layernorm_kernel<<<n, row_threads(d), 0, s>>>(out, in, resid, g, b, d, eps);
    return cudaGetLastError();
}

cudaError_t atn_cu_add(float *x, const float *y, size_t count, cudaStream_t s) {
    if (!count)
        return cudaSuccess;
    add_kernel<<<grid_for(count), kThreads, 0, s>>>(x, y, count);
    return cudaGetLastError();
}

cudaError_t atn_cu_softmax(float *att, const float *mask_add, int64_t rows, int32_t n, cudaStream_t s) {
    if (rows <= 0)
        return cudaSuccess;
    if (rows > 0x7fffffff)
        return cudaErrorInvalidValue;
    softmax_kernel<<<(unsigned)rows, row_threads(n), 0, s>>>(att, mask_add, n);
    return cudaGetLastError();
}

cudaError_t atn_cu_nonfinite(int32_t *flag, const float *x, size_t count, cudaStream_t s) {
    if (!count)
        return cudaSuccess;
    nonfinite_kernel<<<grid_for(count), kThreads, 0, s>>>(flag, x, count);
    return cudaGetLastError();
}

cudaError_t atn_cu_to_half(void *dst, const float *src, size_t count, int bf16, cudaStream_t s) {
    if (!count)
        return cudaSuccess;
    if (bf16)
        to_bf16_kernel<<<grid_for(count), kThreads, 0, s>>>((__nv_bfloat16 *)dst, src, count);
    else
        to_fp16_kernel<<<grid_for(count), kThreads, 0, s>>>((__half *)dst, src, count);
    return cudaGetLastError();
}

}  // extern "C"

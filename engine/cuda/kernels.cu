/* The CUDA backend's own kernels: everything in the forward pass that is not a matrix
 * product (those go to cuBLAS).  Each does what the matching reference op (engine/forward/
 * ops-ref.c, encoder.c) does, in the same order of operations where it matters for agreement:
 *   bias + activation (gelu erf, gelu tanh, relu), embeddings gather, residual add +
 *   LayerNorm (two-pass mean / biased variance), masked max-subtracted softmax and the
 *   softmax with the what-if gates (ALiBi, temperature, heads off), the non-finite check,
 *   and fp32 -> fp16/bf16 casts for reduced-precision GEMMs.
 *
 * The same text is compiled twice: by nvcc for the GPU (the module), and by the host
 * compiler through engine/cuda/kernels-host.cc, where cuda-host.h and the CPU launcher
 * (cpu-launch.cc) run each grid block by block and thread by thread with its barriers, so
 * that every kernel's arithmetic is tested on machines without a GPU.  Hence the launch is
 * spelled ATN_LAUNCH(kernel, grid, block, stream)(arguments) and its status
 * ATN_LAUNCH_STATUS(). */
#include "kernels.h"
#include "attnscope.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <float.h>
#include <math.h>

#ifndef ATN_CUDA_HOST   /* nvcc: the real launch */
#define ATN_LAUNCH(kernel, grid, block, stream) kernel<<<(grid), (block), 0, (stream)>>>
#define ATN_LAUNCH_STATUS() cudaGetLastError()
#endif

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
        /* the CPU adds word + pos, then + type; no pos: the what-if lab's run without positions */
        float x = word[(size_t)ids[r] * d + c];
        if (pos)
            x += pos[(size_t)pos_ids[r] * d + c];
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

/* The softmax with the what-if gates, one block per row of n scores (rows are heads x
 * queries: head h = row / n, query i = row % n), as the reference's softmax_rows_iv: the
 * scaled scores get the mask and ALiBi's -slope_h |i - j|, are divided by the temperature
 * (multiplied by inv_t = 1 / T), clamped at -FLT_MAX (a masked score over T < 1 stays
 * finite) and softmaxed; a switched-off head's row is 0 (ATN_HEAD_ZERO) or 1/k over the k
 * keys whose mask is 0 (ATN_HEAD_UNIFORM; 1/n when there are none). */
__global__ void softmax_gated_kernel(float *att, const float *mask_add, int32_t n, const float *slopes, float inv_t,
                                     const uint8_t *heads_off, int head_mode) {
    __shared__ float shared[32];
    float *row = att + (size_t)blockIdx.x * n;
    int32_t h = (int32_t)(blockIdx.x / (unsigned)n), i = (int32_t)(blockIdx.x % (unsigned)n);
    mask_add += (size_t)i * n;
    if (heads_off && heads_off[h]) {
        if (head_mode == ATN_HEAD_ZERO) {
            for (int32_t j = threadIdx.x; j < n; j += blockDim.x)
                row[j] = 0.0f;
            return;
        }
        float seen = 0.0f;
        for (int32_t j = threadIdx.x; j < n; j += blockDim.x)
            seen += mask_add[j] == 0.0f ? 1.0f : 0.0f;
        float k = block_sum(seen, shared);   /* a count: exact in float up to 2^24 */
        for (int32_t j = threadIdx.x; j < n; j += blockDim.x)
            row[j] = k > 0.0f ? (mask_add[j] == 0.0f ? 1.0f / k : 0.0f) : 1.0f / (float)n;
        return;
    }
    float slope = slopes ? slopes[h] : 0.0f;
    float mx = -FLT_MAX;
    for (int32_t j = threadIdx.x; j < n; j += blockDim.x) {
        float v = row[j] + mask_add[j];
        if (slope != 0.0f)
            v -= slope * (float)(i > j ? i - j : j - i);
        v *= inv_t;
        v = v < -FLT_MAX ? -FLT_MAX : v;
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
    ATN_LAUNCH(bias_act_kernel, grid_for(count), kThreads, s)(x, b, o, count, act);
    return ATN_LAUNCH_STATUS();
}

cudaError_t atn_cu_embed(float *out, const int32_t *ids, const int32_t *pos_ids, const int32_t *types,
                         const float *word, const float *pos, const float *type, int32_t n, int32_t d, cudaStream_t s) {
    size_t count = (size_t)n * d;
    ATN_LAUNCH(embed_kernel, grid_for(count), kThreads, s)(out, ids, pos_ids, types, word, pos, type, d, count);
    return ATN_LAUNCH_STATUS();
}

cudaError_t atn_cu_layernorm(float *out, const float *in, const float *resid, const float *g, const float *b,
                             int32_t n, int32_t d, float eps, cudaStream_t s) {
    if (n <= 0)
        return cudaSuccess;
    ATN_LAUNCH(layernorm_kernel, n, row_threads(d), s)(out, in, resid, g, b, d, eps);
    return ATN_LAUNCH_STATUS();
}

cudaError_t atn_cu_add(float *x, const float *y, size_t count, cudaStream_t s) {
    if (!count)
        return cudaSuccess;
    ATN_LAUNCH(add_kernel, grid_for(count), kThreads, s)(x, y, count);
    return ATN_LAUNCH_STATUS();
}

cudaError_t atn_cu_softmax(float *att, const float *mask_add, int64_t rows, int32_t n, cudaStream_t s) {
    if (rows <= 0)
        return cudaSuccess;
    if (rows > 0x7fffffff)
        return cudaErrorInvalidValue;
    ATN_LAUNCH(softmax_kernel, (unsigned)rows, row_threads(n), s)(att, mask_add, n);
    return ATN_LAUNCH_STATUS();
}

cudaError_t atn_cu_softmax_gated(float *att, const float *mask_add, int64_t rows, int32_t n, const float *slopes,
                                 float temperature, const uint8_t *heads_off, int head_mode, cudaStream_t s) {
    if (rows <= 0)
        return cudaSuccess;
    if (rows > 0x7fffffff || !(temperature > 0.0f))
        return cudaErrorInvalidValue;
    ATN_LAUNCH(softmax_gated_kernel, (unsigned)rows, row_threads(n), s)(att, mask_add, n, slopes, 1.0f / temperature,
                                                                        heads_off, head_mode);
    return ATN_LAUNCH_STATUS();
}

cudaError_t atn_cu_nonfinite(int32_t *flag, const float *x, size_t count, cudaStream_t s) {
    if (!count)
        return cudaSuccess;
    ATN_LAUNCH(nonfinite_kernel, grid_for(count), kThreads, s)(flag, x, count);
    return ATN_LAUNCH_STATUS();
}

cudaError_t atn_cu_to_half(void *dst, const float *src, size_t count, int bf16, cudaStream_t s) {
    if (!count)
        return cudaSuccess;
    if (bf16)
        ATN_LAUNCH(to_bf16_kernel, grid_for(count), kThreads, s)((__nv_bfloat16 *)dst, src, count);
    else
        ATN_LAUNCH(to_fp16_kernel, grid_for(count), kThreads, s)((__half *)dst, src, count);
    return ATN_LAUNCH_STATUS();
}

}  // extern "C"

/* kernels.cu compiled for the host (g++, no nvcc device pass): what the CUDA language gives a
 * kernel, written for the CPU launcher of engine/cuda/cpu-launch.cc, so that every kernel's
 * arithmetic runs in the test suite on a machine without a GPU (docs/ARCHITECTURE.md, "The
 * CUDA kernels on the CPU").
 *
 * A launch runs the grid's blocks one after another on the calling thread; inside a block each
 * CUDA thread is a fiber (its own small stack) and the fibers take turns at the points where
 * CUDA threads synchronise: __syncthreads, __syncthreads_or and the warp shuffles.  Between
 * those points a fiber runs alone, so everything a kernel does between two barriers is done
 * by each thread in turn, and a barrier is honoured exactly (no thread passes it before every
 * thread of its block -- or of its warp, for a shuffle -- has reached it).  __shared__ arrays
 * are one per OS thread (thread_local), which is one per block being run.
 *
 * Only what kernels.cu uses is here: 1-D grids and blocks (threadIdx.x ...), __syncthreads,
 * __syncthreads_or, __shfl_xor_sync over full warps of 32, and the launch spelled
 * ATN_LAUNCH(kernel, grid, block, stream)(arguments...), which nvcc turns into <<<...>>>.
 * Included before kernels.cu by kernels-host.cc only. */
#ifndef ATN_CUDA_HOST_H
#define ATN_CUDA_HOST_H

#ifndef __cplusplus
#error "cuda-host.h is for the host build of kernels.cu (C++)"
#endif
#ifdef __CUDACC__
#error "cuda-host.h is for a host compiler, not nvcc"
#endif

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <vector_types.h>

#define ATN_CUDA_HOST 1

/* host_defines.h makes __global__, __device__, __host__ and __shared__ empty for a host
   compiler; shared memory must be one array per block: one per OS thread here */
#undef __shared__
#define __shared__ static thread_local

namespace atn_cuh {

/* The CUDA thread the calling fiber is, and its block (cpu-launch.cc). */
uint3 thread_idx();
uint3 block_idx();
dim3 block_dim();
dim3 grid_dim();

void syncthreads();
int syncthreads_or(int predicate);
float shfl_xor(float v, int lane_mask);
int shfl_xor(int v, int lane_mask);

/* Runs body(ctx) as every thread of a grid x block launch (1-D); returns cudaSuccess, or
 * cudaErrorInvalidConfiguration (a block of 0 or > 1024 threads, an empty grid, a 2-D or
 * 3-D shape), or cudaErrorLaunchFailure when the threads of a block deadlock (some wait at
 * a barrier that others have left or never reach). */
cudaError_t run_grid(dim3 grid, dim3 block, void (*body)(void *), void *ctx);

/* The status of the last launch on this thread, cleared by reading (cudaGetLastError). */
cudaError_t take_status();
void set_status(cudaError_t e);

template <class Kernel> struct launch {
    Kernel *kernel;
    dim3 grid, block;
    template <class... Args> void operator()(Args... args) {
        auto call = [&]() { kernel(args...); };
        set_status(run_grid(grid, block, [](void *p) { (*static_cast<decltype(call) *>(p))(); }, &call));
    }
};

}  // namespace atn_cuh

#define threadIdx (atn_cuh::thread_idx())
#define blockIdx (atn_cuh::block_idx())
#define blockDim (atn_cuh::block_dim())
#define gridDim (atn_cuh::grid_dim())

inline void __syncthreads() { atn_cuh::syncthreads(); }
inline int __syncthreads_or(int predicate) { return atn_cuh::syncthreads_or(predicate); }
/* full warps only (the mask is every lane; kernels.cu uses 0xffffffff) */
inline float __shfl_xor_sync(unsigned mask, float v, int lane_mask) { (void)mask; return atn_cuh::shfl_xor(v, lane_mask); }
inline int __shfl_xor_sync(unsigned mask, int v, int lane_mask) { (void)mask; return atn_cuh::shfl_xor(v, lane_mask); }

#define ATN_LAUNCH(kernel, grid, block, stream) \
    (void)(stream), atn_cuh::launch<decltype(kernel)>{kernel, dim3(grid), dim3(block)}
#define ATN_LAUNCH_STATUS() atn_cuh::take_status()

#endif

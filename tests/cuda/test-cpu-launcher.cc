/* The CPU launcher itself (engine/cuda/cpu-launch.cc, cuda-host.h): kernels written only to
 * test it, in CUDA's own spelling, compiled by the host compiler as kernels.cu is.
 *   - __syncthreads: every thread writes its slot of shared memory, then reads a
 *     neighbour's; without the barrier honoured a thread reads a slot not yet written;
 *   - __shfl_xor_sync: a butterfly sum over warps of 32 (blocks of 32, 64 and 96 threads);
 *   - __syncthreads_or over consecutive calls with changing predicates;
 *   - grid-stride loops over several blocks, blockIdx / blockDim / gridDim;
 *   - a barrier one thread never reaches: cudaErrorLaunchFailure, and the next launch works;
 *   - launches the GPU refuses (0 or 1025 threads): cudaErrorInvalidConfiguration;
 *   - two OS threads launching at once (shared memory is one per thread).
 * Exit 0 when all pass. */
#include "cuda-host.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

namespace {

int failures, checks;
#define EXPECT(cond, ...) do { checks++; if (!(cond)) { failures++; fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

__global__ void neighbour_kernel(int *out, int rounds) {
    __shared__ int slot[1024];
    int t = (int)threadIdx.x, n = (int)blockDim.x, acc = 0;
    for (int r = 0; r < rounds; r++) {
        slot[t] = t * 1000 + r;
        __syncthreads();
        acc += slot[(t + 1) % n] == ((t + 1) % n) * 1000 + r;
        __syncthreads();   /* nobody overwrites a slot still to be read */
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

__global__ void warp_sum_kernel(float *out, const float *in) {
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void or_kernel(int *out) {
    int t = (int)threadIdx.x;
    int a = __syncthreads_or(t == 5);          /* 1: one thread */
    int b = __syncthreads_or(0);               /* 0: none */
    int c = __syncthreads_or(t == (int)blockDim.x - 1);
    int d = __syncthreads_or(0);
    out[t] = a * 1000 + b * 100 + c * 10 + d;
}

__global__ void stride_kernel(int *out, int count) {
    for (int i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < count; i += (int)(gridDim.x * blockDim.x))
        out[i] += i;
}

__global__ void deadlock_kernel(int *out) {
    if (threadIdx.x == 3)
        return;   /* leaves; the others wait for it forever on a GPU */
    __syncthreads();
    out[threadIdx.x] = 1;
}

cudaError_t launch_status() { return ATN_LAUNCH_STATUS(); }

void *concurrent(void *arg) {
    int *bad = static_cast<int *>(arg);
    static thread_local int out[256];
    for (int k = 0; k < 20; k++) {
        ATN_LAUNCH(neighbour_kernel, 1, 256, nullptr)(out, 3);
        if (launch_status() != cudaSuccess)
            (*bad)++;
        for (int t = 0; t < 256; t++)
            *bad += out[t] != 3;
    }
    return nullptr;
}

}  // namespace

int main() {
    static int out[4096];
    for (unsigned n : {1u, 7u, 32u, 100u, 256u, 1024u}) {
        memset(out, 0, sizeof out);
        ATN_LAUNCH(neighbour_kernel, 2, n, nullptr)(out, 4);
        EXPECT(launch_status() == cudaSuccess, "neighbour %u: launch failed", n);
        int bad = 0;
        for (unsigned t = 0; t < 2 * n; t++)
            bad += out[t] != 4;
        EXPECT(bad == 0, "__syncthreads with %u threads: %d threads read a slot before it was written", n, bad);
    }

    static float in[96 * 2], sum[96 * 2];
    for (int i = 0; i < 96 * 2; i++)
        in[i] = (float)(i % 37) - 5.0f;
    for (unsigned n : {32u, 64u, 96u}) {
        ATN_LAUNCH(warp_sum_kernel, 2, n, nullptr)(sum, in);
        EXPECT(launch_status() == cudaSuccess, "warp sum %u: launch failed", n);
        int bad = 0;
        for (unsigned b = 0; b < 2; b++)
            for (unsigned t = 0; t < n; t++) {
                unsigned w0 = b * n + t / 32 * 32;
                float want = 0;
                for (unsigned l = 0; l < 32; l++)
                    want += in[w0 + l];
                bad += sum[b * n + t] != want;
            }
        EXPECT(bad == 0, "__shfl_xor_sync with %u threads: %d lanes have another warp sum", n, bad);
    }

    ATN_LAUNCH(or_kernel, 1, 64, nullptr)(out);
    EXPECT(launch_status() == cudaSuccess, "or: launch failed");
    int bad = 0;
    for (int t = 0; t < 64; t++)
        bad += out[t] != 1010;
    EXPECT(bad == 0, "__syncthreads_or: %d threads got another answer (thread 0: %d, want 1010)", bad, out[0]);

    memset(out, 0, sizeof out);
    ATN_LAUNCH(stride_kernel, 3, 128, nullptr)(out, 1000);
    bad = 0;
    for (int i = 0; i < 1000; i++)
        bad += out[i] != i;
    EXPECT(bad == 0 && out[1000] == 0, "grid-stride loop over 3 x 128 threads: %d wrong", bad);

    ATN_LAUNCH(deadlock_kernel, 1, 8, nullptr)(out);
    EXPECT(launch_status() == cudaErrorLaunchFailure, "a barrier one thread never reaches is not reported");
    ATN_LAUNCH(neighbour_kernel, 1, 8, nullptr)(out, 2);
    EXPECT(launch_status() == cudaSuccess && out[0] == 2 && out[7] == 2, "the launch after a deadlock fails");

    ATN_LAUNCH(neighbour_kernel, 1, 0, nullptr)(out, 1);
    EXPECT(launch_status() == cudaErrorInvalidConfiguration, "a block of 0 threads is launched");
    ATN_LAUNCH(neighbour_kernel, 1, 1025, nullptr)(out, 1);
    EXPECT(launch_status() == cudaErrorInvalidConfiguration, "a block of 1025 threads is launched");
    ATN_LAUNCH(neighbour_kernel, 0, 32, nullptr)(out, 1);
    EXPECT(launch_status() == cudaErrorInvalidConfiguration, "an empty grid is launched");
    EXPECT(launch_status() == cudaSuccess, "the status is not cleared by reading it");

    pthread_t th[2];
    int thread_bad[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], nullptr, concurrent, &thread_bad[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], nullptr);
    EXPECT(thread_bad[0] == 0 && thread_bad[1] == 0, "two threads launching at once: %d / %d wrong", thread_bad[0],
           thread_bad[1]);

    fprintf(stderr, "cuda-cpu-launcher: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}

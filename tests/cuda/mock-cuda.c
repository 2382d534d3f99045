/* A stand-in for the CUDA runtime, cuBLAS and our kernels, on the CPU, so that the CUDA
 * backend's host side (engine/cuda/cuda-backend.c: weight upload, activation layout,
 * the cuBLAS arguments of every product, the per-layer copies, errors) can be tested on a
 * machine without a GPU.  Linked with cuda-backend.c into attnscope-cuda-mock.so.
 *
 * It is written from the documented contracts, not from the backend's code: cuBLAS
 * products follow the cuBLAS reference (column-major, C = alpha op(A) op(B) + beta C,
 * op(X)[i][j] = X[i + j ld] or X[j + i ld] for T, batch b at offset b * stride).  Reduced
 * precision rounds to real fp16 / bf16 values and accumulates in fp32, as tensor cores do.
 * The kernels are not stood in for: the module runs engine/cuda/kernels.cu itself, compiled
 * for the host and run by the CPU launcher (engine/cuda/cpu-launch.cc).
 *
 * Knobs: ATN_MOCK_CUDA_MEMORY (bytes the mock "GPU" has; cudaMalloc beyond it fails with
 * cudaErrorMemoryAllocation), ATN_MOCK_CUDA_DEVICES=0 (no device), =driver (no driver). */
#include "kernels.h"
#include "attnscope.h"
#include "forward/fp16.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- memory: malloc with a byte budget ------------------------------------------- */

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t mem_used;

static size_t mem_total(void) {
    const char *e = getenv("ATN_MOCK_CUDA_MEMORY");
    return e && *e ? (size_t)strtoull(e, NULL, 10) : (size_t)16 << 30;
}

typedef struct alloc_head {
    size_t size;
    size_t pad[31];   /* keeps the user pointer 256-byte aligned */
} alloc_head;

static cudaError_t last_error = cudaSuccess;

static cudaError_t set_error(cudaError_t e) {
    if (e != cudaSuccess)
        last_error = e;
    return e;
}

cudaError_t cudaMalloc(void **p, size_t size) {
    *p = NULL;
    pthread_mutex_lock(&mem_lock);
    bool ok = mem_used + size <= mem_total();
    if (ok)
        mem_used += size;
    pthread_mutex_unlock(&mem_lock);
    if (!ok)
        return set_error(cudaErrorMemoryAllocation);
    alloc_head *h = aligned_alloc(256, sizeof(alloc_head) + (size + 255) / 256 * 256);
    if (!h)
        return set_error(cudaErrorMemoryAllocation);
    h->size = size;
    memset(h + 1, 0xcd, size);   /* garbage, as real device memory: nothing may rely on zeros */
    *p = h + 1;
    return cudaSuccess;
}

cudaError_t cudaFree(void *p) {
    if (!p)
        return cudaSuccess;
    alloc_head *h = (alloc_head *)p - 1;
    pthread_mutex_lock(&mem_lock);
    mem_used -= h->size;
    pthread_mutex_unlock(&mem_lock);
    free(h);
    return cudaSuccess;
}

/* Page-locked host memory is plain memory here; the counts let the tests see that runs use
 * it, reuse it and give it back.  ATN_MOCK_CUDA_PINNED=0: pinning fails (as on a machine
 * short of lockable memory). */
static int pinned_live, pinned_allocs;

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags) {
    (void)flags;
    *p = NULL;
    const char *e = getenv("ATN_MOCK_CUDA_PINNED");
    if (e && !strcmp(e, "0"))
        return set_error(cudaErrorMemoryAllocation);
    *p = malloc(size ? size : 1);
    if (!*p)
        return set_error(cudaErrorMemoryAllocation);
    __atomic_add_fetch(&pinned_live, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&pinned_allocs, 1, __ATOMIC_RELAXED);
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *p) {
    if (p) {
        __atomic_sub_fetch(&pinned_live, 1, __ATOMIC_RELAXED);
        free(p);
    }
    return cudaSuccess;
}

/* For the tests (dlsym): blocks allocated so far, and blocks not yet freed. */
__attribute__((visibility("default"))) void atn_mock_cuda_pinned_counts(int *allocs, int *live);
__attribute__((visibility("default"))) void atn_mock_cuda_pinned_counts(int *allocs, int *live) {
    *allocs = __atomic_load_n(&pinned_allocs, __ATOMIC_RELAXED);
    *live = __atomic_load_n(&pinned_live, __ATOMIC_RELAXED);
}

cudaError_t cudaMemGetInfo(size_t *fr, size_t *total) {
    *total = mem_total();
    *fr = *total - mem_used;
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind) {
    (void)kind;
    memcpy(dst, src, count);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t s) {
    (void)s;
    return cudaMemcpy(dst, src, count, kind);
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t count, cudaStream_t s) {
    (void)s;
    memset(p, value, count);
    return cudaSuccess;
}

/* ---- devices, streams, events, errors --------------------------------------------- */

cudaError_t cudaGetDeviceCount(int *count) {
    const char *e = getenv("ATN_MOCK_CUDA_DEVICES");
    *count = 0;
    if (e && !strcmp(e, "driver"))
        return set_error(cudaErrorInsufficientDriver);
    if (e && !strcmp(e, "0"))
        return set_error(cudaErrorNoDevice);
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v) { *v = 13000; return cudaSuccess; }
cudaError_t cudaDriverGetVersion(int *v) { *v = 13000; return cudaSuccess; }
cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : set_error(cudaErrorInvalidDevice); }

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device) {
    (void)device;
    *value = attr == cudaDevAttrComputeCapabilityMajor ? 9 : attr == cudaDevAttrComputeCapabilityMinor ? 0 : 1;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device) {
    if (device != 0)
        return set_error(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    strcpy(p->name, "Mock GPU (CPU stand-in for tests)");
    p->totalGlobalMem = mem_total();
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = 1;
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void) {
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    default: return "mock error";
    }
}

const char *cudaGetErrorName(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInsufficientDriver: return "cudaErrorInsufficientDriver";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    default: return "cudaErrorUnknown";
    }
}

static int dummy_stream, dummy_event;

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags) {
    (void)flags;
    *s = (cudaStream_t)(void *)&dummy_stream;
    return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) { (void)s; return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags) {
    (void)s, (void)e, (void)flags;
    return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags) {
    (void)flags;
    *e = (cudaEvent_t)(void *)&dummy_event;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { (void)e, (void)s; return cudaSuccess; }
cudaError_t cudaEventDestroy(cudaEvent_t e) { (void)e; return cudaSuccess; }

/* ---- cuBLAS ---------------------------------------------------------------------- */

static int dummy_handle;

cublasStatus_t cublasCreate(cublasHandle_t *h) {
    *h = (cublasHandle_t)(void *)&dummy_handle;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy(cublasHandle_t h) { (void)h; return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) { (void)h, (void)s; return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m) { (void)h, (void)m; return CUBLAS_STATUS_SUCCESS; }
const char *cublasGetStatusString(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS ? "success" : "mock failure"; }
cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value) {
    *value = type == MAJOR_VERSION ? 13 : 0;
    return CUBLAS_STATUS_SUCCESS;
}

/* Reads element i of an array of type t as float. */
static float load(const void *p, cudaDataType t, size_t i) {
    switch (t) {
    case CUDA_R_32F: return ((const float *)p)[i];
    case CUDA_R_16F: return atn_f16_to_f32(((const uint16_t *)p)[i]);
    case CUDA_R_16BF: return atn_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return NAN;
    }
}

/* The reference GEMM: column-major, C[m,n] = alpha op(A)[m,k] op(B)[k,n] + beta C. */
static cublasStatus_t gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha,
                           const void *A, cudaDataType at, int lda, long long sa, const void *B, cudaDataType bt,
                           int ldb, long long sb, float beta, float *C, int ldc, long long sc, int batch) {
    if (m < 0 || n < 0 || k < 0 || batch < 0 || ldc < (m > 1 ? m : 1) ||
        lda < ((ta == CUBLAS_OP_N ? m : k) > 1 ? (ta == CUBLAS_OP_N ? m : k) : 1) ||
        ldb < ((tb == CUBLAS_OP_N ? k : n) > 1 ? (tb == CUBLAS_OP_N ? k : n) : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int b = 0; b < batch; b++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                float acc = 0.0f;
                for (int p = 0; p < k; p++) {
                    size_t ia = ta == CUBLAS_OP_N ? (size_t)i + (size_t)p * lda : (size_t)p + (size_t)i * lda;
                    size_t ib = tb == CUBLAS_OP_N ? (size_t)p + (size_t)j * ldb : (size_t)j + (size_t)p * ldb;
                    acc += load(A, at, (size_t)(b * sa) + ia) * load(B, bt, (size_t)(b * sb) + ib);
                }
                float *c = C + (size_t)(b * sc) + i + (size_t)j * ldc;
                *c = alpha * acc + (beta != 0.0f ? beta * *c : 0.0f);
            }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const float *alpha, const float *A, int lda, const float *B, int ldb, const float *beta,
                           float *C, int ldc) {
    (void)h;
    return gemm(ta, tb, m, n, k, *alpha, A, CUDA_R_32F, lda, 0, B, CUDA_R_32F, ldb, 0, *beta, C, ldc, 0, 1);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float *alpha, const float *A, int lda, long long sa,
                                         const float *B, int ldb, long long sb, const float *beta, float *C, int ldc,
                                         long long sc, int batch) {
    (void)h;
    return gemm(ta, tb, m, n, k, *alpha, A, CUDA_R_32F, lda, sa, B, CUDA_R_32F, ldb, sb, *beta, C, ldc, sc, batch);
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType at, int lda, const void *B,
                            cudaDataType bt, int ldb, const void *beta, void *C, cudaDataType ct, int ldc,
                            cublasComputeType_t comp, cublasGemmAlgo_t algo) {
    (void)h, (void)algo;
    if (ct != CUDA_R_32F || comp != CUBLAS_COMPUTE_32F || at != bt)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    return gemm(ta, tb, m, n, k, *(const float *)alpha, A, at, lda, 0, B, bt, ldb, 0, *(const float *)beta, C, ldc,
                0, 1);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void *alpha, const void *A, cudaDataType at, int lda,
                                          long long sa, const void *B, cudaDataType bt, int ldb, long long sb,
                                          const void *beta, void *C, cudaDataType ct, int ldc, long long sc,
                                          int batch, cublasComputeType_t comp, cublasGemmAlgo_t algo) {
    (void)h, (void)algo;
    if (ct != CUDA_R_32F || comp != CUBLAS_COMPUTE_32F || at != bt)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    return gemm(ta, tb, m, n, k, *(const float *)alpha, A, at, lda, sa, B, bt, ldb, sb, *(const float *)beta, C, ldc,
                sc, batch);
}

/* ---- what the kernels were given ------------------------------------------------- */

/* Copies of the position ids the last atn_cu_embed read and the additive mask the last
 * atn_cu_softmax read, so a test can check that the engine's host arrays (engine/forward/run.c)
 * are what reached the device path. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static int32_t *seen_pos;
static int32_t seen_n_pos;
static float *seen_mask;
static size_t seen_n_mask;

static void mock_seen_inputs(const int32_t *pos, int32_t n_pos, const float *mask, size_t n_mask) {
    pthread_mutex_lock(&seen_lock);
    if (pos) {
        int32_t *p = realloc(seen_pos, (size_t)(n_pos ? n_pos : 1) * sizeof *p);
        if (p) {
            memcpy(p, pos, (size_t)n_pos * sizeof *p);
            seen_pos = p;
            seen_n_pos = n_pos;
        }
    }
    if (mask) {
        float *m = realloc(seen_mask, (n_mask ? n_mask : 1) * sizeof *m);
        if (m) {
            memcpy(m, mask, n_mask * sizeof *m);
            seen_mask = m;
            seen_n_mask = n_mask;
        }
    }
    pthread_mutex_unlock(&seen_lock);
}

/* The last position ids ([*n_pos]) and mask ([*n_mask] floats) the kernels read; valid
 * until the next forward through the mock. */
__attribute__((visibility("default"))) void atn_mock_cuda_seen_inputs(const int32_t **pos, int32_t *n_pos,
                                                                      const float **mask, size_t *n_mask);
__attribute__((visibility("default"))) void atn_mock_cuda_seen_inputs(const int32_t **pos, int32_t *n_pos,
                                                                      const float **mask, size_t *n_mask) {
    pthread_mutex_lock(&seen_lock);
    *pos = seen_pos;
    *n_pos = seen_n_pos;
    *mask = seen_mask;
    *n_mask = seen_n_mask;
    pthread_mutex_unlock(&seen_lock);
}

/* ---- the kernels: kernels.cu itself, on the CPU launcher ----------------------------- */

/* The module links engine/cuda/kernels.cu compiled for the host (kernels-host.cc, the CPU
 * launcher cpu-launch.cc): the backend's calls run the real kernels' arithmetic.  The
 * linker wraps the two that read the run's host inputs (-Wl,--wrap), so a test can see
 * what reached them. */
cudaError_t __real_atn_cu_embed(float *out, const int32_t *ids, const int32_t *pos_ids, const int32_t *types,
                                const float *word, const float *pos, const float *type, int32_t n, int32_t d,
                                cudaStream_t s);
cudaError_t __wrap_atn_cu_embed(float *out, const int32_t *ids, const int32_t *pos_ids, const int32_t *types,
                                const float *word, const float *pos, const float *type, int32_t n, int32_t d,
                                cudaStream_t s);
cudaError_t __real_atn_cu_softmax(float *att, const float *mask_add, int64_t rows, int32_t n, cudaStream_t s);
cudaError_t __wrap_atn_cu_softmax(float *att, const float *mask_add, int64_t rows, int32_t n, cudaStream_t s);
cudaError_t __real_atn_cu_softmax_gated(float *att, const float *mask_add, int64_t rows, int32_t n,
                                        const float *slopes, float temperature, const uint8_t *heads_off,
                                        int head_mode, cudaStream_t s);
cudaError_t __wrap_atn_cu_softmax_gated(float *att, const float *mask_add, int64_t rows, int32_t n,
                                        const float *slopes, float temperature, const uint8_t *heads_off,
                                        int head_mode, cudaStream_t s);

cudaError_t __wrap_atn_cu_embed(float *out, const int32_t *ids, const int32_t *pos_ids, const int32_t *types,
                                const float *word, const float *pos, const float *type, int32_t n, int32_t d,
                                cudaStream_t s) {
    if (pos)
        mock_seen_inputs(pos_ids, n, NULL, 0);
    return __real_atn_cu_embed(out, ids, pos_ids, types, word, pos, type, n, d, s);
}

cudaError_t __wrap_atn_cu_softmax(float *att, const float *mask_add, int64_t rows, int32_t n, cudaStream_t s) {
    mock_seen_inputs(NULL, 0, mask_add, (size_t)n * n);
    return __real_atn_cu_softmax(att, mask_add, rows, n, s);
}

cudaError_t __wrap_atn_cu_softmax_gated(float *att, const float *mask_add, int64_t rows, int32_t n,
                                        const float *slopes, float temperature, const uint8_t *heads_off,
                                        int head_mode, cudaStream_t s) {
    mock_seen_inputs(NULL, 0, mask_add, (size_t)n * n);
    return __real_atn_cu_softmax_gated(att, mask_add, rows, n, slopes, temperature, heads_off, head_mode, s);
}

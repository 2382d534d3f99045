/* The CUDA backend, host side: the table attnscope-cuda.so exports (ATN_CUDA_ENTRY_POINT: atn_cuda_backend_v3 for ABI 3),
 * probing for a driver and device, uploading a model's weights once, and the forward pass
 * as a stream of cuBLAS products and our kernels (kernels.cu), mirroring engine/forward/encoder.c:
 * the embeddings (E wide and projected to d for ALBERT / ELECTRA, without the position term
 * for the what-if lab's run without positions, without LayerNorm for GPT-2), then the one
 * layer walk (engine/forward/layer.c) over cuda_ops: post-LN and pre-LN layers with the final
 * norm, the run's mask or per-layer masks, and the gated softmax (ALiBi, temperature, heads
 * off); a forward from a middle layer (atn_run_forward_from) starts from the given hidden
 * states.
 *
 * Row-major on column-major cuBLAS: a row-major [r, c] matrix is a column-major [c, r] one,
 * so out[n,o] = in[n,i] W^T (W [o,i]) is computed as out^T = W . in^T, i.e.
 * gemm(T, N, o, n, i, W, ld i, in, ld i, out, ld o).
 *
 * The module is opened with dlopen from a program that exports no symbols, so it calls
 * nothing from the engine: it only shares the engine's headers (struct layouts, checked by
 * the loader through the table's layout field). */
#include "forward/backend.h"
#include "forward/layer.h"
#include "kernels.h"
#include "core/family.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 256   /* bytes; every device array starts on this boundary */

/* ---- errors ------------------------------------------------------------------- */

static atn_status fail(atn_error *err, atn_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static atn_status fail(atn_error *err, atn_status st, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->status = st;
    }
    return st;
}

static double mb(size_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

static size_t free_device_bytes(void) {
    size_t fr = 0, total = 0;
    if (cudaMemGetInfo(&fr, &total) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return fr;
}

static atn_status cuda_fail(atn_error *err, cudaError_t e, const char *what) {
    if (e == cudaErrorMemoryAllocation)
        return fail(err, ATN_E_DEVICE, "out of GPU memory while %s (%.1f MB free on the GPU)", what,
                    mb(free_device_bytes()));
    return fail(err, ATN_E_DEVICE, "CUDA error while %s: %s (%s, error %d)", what, cudaGetErrorString(e),
                cudaGetErrorName(e), (int)e);
}

static atn_status blas_fail(atn_error *err, cublasStatus_t s, const char *what) {
    if (s == CUBLAS_STATUS_ALLOC_FAILED)
        return fail(err, ATN_E_DEVICE, "out of GPU memory while %s (cuBLAS could not allocate)", what);
    return fail(err, ATN_E_DEVICE, "cuBLAS error while %s: %s (status %d)", what, cublasGetStatusString(s), (int)s);
}

/* ---- probing ------------------------------------------------------------------ */

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_count;
static atn_error probe_error;

static void probe_run(void) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    int rt = 0;
    cudaRuntimeGetVersion(&rt);
    if (e == cudaErrorInsufficientDriver) {
        fail(&probe_error, ATN_E_DEVICE, "no usable CUDA driver: the NVIDIA driver is missing or older than the "
             "CUDA %d.%d runtime this module was built with (cudaGetDeviceCount: %s, error %d)", rt / 1000,
             rt % 1000 / 10, cudaGetErrorString(e), (int)e);
    } else if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
        fail(&probe_error, ATN_E_DEVICE, "no CUDA device: the driver is there but finds no GPU%s (%s)",
             getenv("CUDA_VISIBLE_DEVICES") ? " (CUDA_VISIBLE_DEVICES is set)" : "",
             e == cudaSuccess ? "device count 0" : cudaGetErrorString(e));
    } else if (e != cudaSuccess) {
        fail(&probe_error, ATN_E_DEVICE, "CUDA is not usable here: cudaGetDeviceCount failed: %s (%s, error %d)",
             cudaGetErrorString(e), cudaGetErrorName(e), (int)e);
    } else {
        int major = 0, minor = 0;
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
        if (major * 10 + minor < 75) {
            struct cudaDeviceProp p;
            if (cudaGetDeviceProperties(&p, 0) != cudaSuccess)
                snprintf(p.name, sizeof p.name, "device 0");
            fail(&probe_error, ATN_E_DEVICE, "GPU 0 (%s) has compute capability %d.%d; this module is built for "
                 "7.5 and newer", p.name, major, minor);
        } else {
            probe_count = count;
        }
    }
    cudaGetLastError();   /* clear, so later calls start clean */
}

static int cuda_probe(atn_error *err) {
    pthread_once(&probe_once, probe_run);
    if (probe_count <= 0) {
        if (err)
            *err = probe_error;
        return 0;
    }
    return 100;
}

static int32_t cuda_device_count(void) {
    pthread_once(&probe_once, probe_run);
    return probe_count;
}

static atn_status cuda_device_info(int32_t index, atn_backend_device *info, atn_error *err) {
    if (index < 0 || index >= cuda_device_count())
        return fail(err, ATN_E_INVALID, "no CUDA device %d (%d found)", index, cuda_device_count());
    memset(info, 0, sizeof *info);
    struct cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, index);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "reading the device properties");
    info->index = index;
    snprintf(info->name, sizeof info->name, "%s", p.name);
    info->total_bytes = p.totalGlobalMem;
    info->cc_major = p.major;
    info->cc_minor = p.minor;
    info->multiprocessors = p.multiProcessorCount;
    int old = 0;
    cudaGetDevice(&old);
    size_t fr = 0, total = 0;
    if (cudaSetDevice(index) == cudaSuccess && cudaMemGetInfo(&fr, &total) == cudaSuccess)
        info->free_bytes = fr;
    cudaGetLastError();
    cudaSetDevice(old);
    int rt = 0, drv = 0, bl_major = 0, bl_minor = 0, bl_patch = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    cublasGetProperty(MAJOR_VERSION, &bl_major);
    cublasGetProperty(MINOR_VERSION, &bl_minor);
    cublasGetProperty(PATCH_LEVEL, &bl_patch);
    snprintf(info->runtime, sizeof info->runtime, "CUDA runtime %d.%d, driver %d.%d, cuBLAS %d.%d.%d", rt / 1000,
             rt % 1000 / 10, drv / 1000, drv % 1000 / 10, bl_major, bl_minor, bl_patch);
    return ATN_OK;
}

static atn_status cuda_init(atn_error *err) {
    if (cuda_probe(err) <= 0)
        return ATN_E_DEVICE;
    cudaError_t e = cudaSetDevice(0);
    if (e == cudaSuccess)
        e = cudaFree(NULL);   /* creates the context now, not in the middle of the first run */
    if (e != cudaSuccess)
        return cuda_fail(err, e, "creating a CUDA context on device 0");
    return ATN_OK;
}

/* ---- per-model state ---------------------------------------------------------- */

/* Reduced-precision copies of one layer's matrices (2-byte values); NULL where the fp32
 * weight is NULL (identity). */
typedef struct half_layer {
    void *wq, *wk, *wv, *wo, *w1, *w2;
} half_layer;

typedef struct cuda_state {
    pthread_mutex_t lock;
    cudaStream_t stream;       /* the forward pass */
    cudaStream_t copy_stream;  /* the capture back to the host, layer by layer */
    cublasHandle_t blas;
    int cc;                    /* compute capability x 10 */

    /* fp32 weights: device pointers in the host structs' shapes; NULL stays NULL */
    void *wblock;
    size_t wbytes;
    atn_weights w;
    atn_layer_weights *layers;   /* [L] */
    int32_t n_layers;

    /* fp16 / bf16 copies, made on the first reduced-precision run */
    void *hblock;
    atn_precision hprec;
    half_layer *hlayers;         /* [L] */
    void *hproj;                 /* the embedding projection's 2-byte copy, or NULL */

    /* activations, grown as needed */
    void *ablock;
    size_t abytes;
    cudaEvent_t *layer_done;     /* [L] */
    int32_t n_events;
} cuda_state;

static void free_weights(cuda_state *s) {
    cudaFree(s->wblock);
    cudaFree(s->hblock);
    s->wblock = s->hblock = NULL;
    s->wbytes = 0;
    free(s->layers);
    free(s->hlayers);
    s->layers = NULL;
    s->hlayers = NULL;
    s->hproj = NULL;
    memset(&s->w, 0, sizeof s->w);
}

static void cuda_state_free(void *state) {
    cuda_state *s = state;
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    if (s->stream)
        cudaStreamSynchronize(s->stream);
    if (s->copy_stream)
        cudaStreamSynchronize(s->copy_stream);
    free_weights(s);
    cudaFree(s->ablock);
    for (int32_t i = 0; i < s->n_events; i++)
        cudaEventDestroy(s->layer_done[i]);
    free(s->layer_done);
    if (s->blas)
        cublasDestroy(s->blas);
    if (s->stream)
        cudaStreamDestroy(s->stream);
    if (s->copy_stream)
        cudaStreamDestroy(s->copy_stream);
    cudaGetLastError();
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* One weight tensor to place: host source, its float count, where the device pointer goes. */
typedef struct placement {
    const float *src;
    size_t count;
    const float **dst;
} placement;

static size_t align_up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

/* The earlier layer whose weights layer l shares (ALBERT's captured layers repeat their
 * group's pointers), or -1.  Shared layers are uploaded and cast once. */
static int32_t shared_with(const atn_layer_weights *layers, int32_t l) {
    for (int32_t j = 0; j < l; j++)
        if (memcmp(&layers[l], &layers[j], sizeof layers[l]) == 0)
            return j;
    return -1;
}

/* Lists every weight the forward pass reads (NULL ones included, they place nothing); a
 * layer sharing an earlier one's weights places nothing (upload_weights copies it). */
static int32_t list_weights(const atn_model *m, cuda_state *s, placement *p) {
    const atn_config *c = &m->cfg;
    size_t d = (size_t)c->d_model, f = (size_t)c->d_ffn, E = (size_t)atn_d_embed(c);
    int32_t k = 0;
#define PLACE(field_src, field_dst, cnt) (p[k++] = (placement){(field_src), (cnt), &(field_dst)})
    if (c->use_embeddings) {
        PLACE(m->w.word_emb, s->w.word_emb, (size_t)c->vocab_size * E);
        PLACE(m->w.pos_emb, s->w.pos_emb, (size_t)c->max_positions * E);
        PLACE(m->w.type_emb, s->w.type_emb, (size_t)c->type_vocab_size * E);
        PLACE(m->w.emb_ln_g, s->w.emb_ln_g, E);
        PLACE(m->w.emb_ln_b, s->w.emb_ln_b, E);
        PLACE(m->w.emb_proj_w, s->w.emb_proj_w, d * E);   /* ALBERT, ELECTRA: E -> d */
        PLACE(m->w.emb_proj_b, s->w.emb_proj_b, d);
    }
    PLACE(m->w.final_ln_g, s->w.final_ln_g, d);   /* GPT-2's ln_f */
    PLACE(m->w.final_ln_b, s->w.final_ln_b, d);
    for (int32_t l = 0; l < c->n_layers; l++) {
        const atn_layer_weights *h = &m->w.layers[l];
        atn_layer_weights *g = &s->layers[l];
        if (shared_with(m->w.layers, l) >= 0)
            continue;
        PLACE(h->wq, g->wq, d * d);
        PLACE(h->bq, g->bq, d);
        PLACE(h->wk, g->wk, d * d);
        PLACE(h->bk, g->bk, d);
        PLACE(h->wv, g->wv, d * d);
        PLACE(h->bv, g->bv, d);
        PLACE(h->wo, g->wo, d * d);
        PLACE(h->bo, g->bo, d);
        PLACE(h->ln1_g, g->ln1_g, d);
        PLACE(h->ln1_b, g->ln1_b, d);
        if (c->use_ffn) {
            PLACE(h->w1, g->w1, f * d);
            PLACE(h->b1, g->b1, f);
            PLACE(h->w2, g->w2, d * f);
            PLACE(h->b2, g->b2, d);
        }
        PLACE(h->ln2_g, g->ln2_g, d);
        PLACE(h->ln2_b, g->ln2_b, d);
    }
#undef PLACE
    return k;
}

enum { WEIGHTS_PER_LAYER = 16, WEIGHTS_EMB = 9 };

/* Copies every weight into one device block (freeing an earlier one). */
static atn_status upload_weights(cuda_state *s, const atn_model *m, atn_error *err) {
    const atn_config *c = &m->cfg;
    free_weights(s);
    s->n_layers = c->n_layers;
    s->layers = calloc((size_t)c->n_layers, sizeof *s->layers);
    placement *p = malloc(((size_t)c->n_layers * WEIGHTS_PER_LAYER + WEIGHTS_EMB) * sizeof *p);
    if (!s->layers || !p) {
        free(p);
        return fail(err, ATN_E_NOMEM, "out of memory");
    }
    int32_t np = list_weights(m, s, p);
    size_t total = 0;
    for (int32_t i = 0; i < np; i++)
        if (p[i].src)
            total += align_up(p[i].count * sizeof(float));
    atn_status st = ATN_OK;
    if (total) {
        cudaError_t e = cudaMalloc(&s->wblock, total);
        if (e != cudaSuccess) {
            cudaGetLastError();
            s->wblock = NULL;
            free(p);
            if (e == cudaErrorMemoryAllocation)
                return fail(err, ATN_E_DEVICE, "out of GPU memory: the weights of model \"%s\" need %.1f MB, the "
                            "GPU has %.1f MB free", m->name, mb(total), mb(free_device_bytes()));
            return cuda_fail(err, e, "allocating the model weights");
        }
        s->wbytes = total;
    }
    char *dev = s->wblock;
    for (int32_t i = 0; i < np && st == ATN_OK; i++) {
        if (!p[i].src) {
            *p[i].dst = NULL;
            continue;
        }
        size_t bytes = p[i].count * sizeof(float);
        /* on our stream: a plain cudaMemcpy from pageable memory may return before its DMA
           is done, and our non-blocking streams would not wait for it */
        cudaError_t e = cudaMemcpyAsync(dev, p[i].src, bytes, cudaMemcpyHostToDevice, s->stream);
        if (e != cudaSuccess)
            st = cuda_fail(err, e, "copying the model weights to the GPU");
        *p[i].dst = (const float *)dev;
        dev += align_up(bytes);
    }
    free(p);
    for (int32_t l = 0; l < c->n_layers; l++) {
        int32_t j = shared_with(m->w.layers, l);
        if (j >= 0)
            s->layers[l] = s->layers[j];
    }
    cudaError_t e = cudaStreamSynchronize(s->stream);
    if (st == ATN_OK && e != cudaSuccess)
        st = cuda_fail(err, e, "copying the model weights to the GPU");
    return st;
}

/* fp16 or bf16 copies of the matrices, cast on the device from the fp32 ones. */
static atn_status make_half_weights(cuda_state *s, const atn_config *c, atn_precision prec, atn_error *err) {
    cudaFree(s->hblock);
    s->hblock = NULL;
    free(s->hlayers);
    s->hlayers = calloc((size_t)c->n_layers, sizeof *s->hlayers);
    if (!s->hlayers)
        return fail(err, ATN_E_NOMEM, "out of memory");
    size_t d = (size_t)c->d_model, f = (size_t)c->d_ffn, E = (size_t)atn_d_embed(c), total = 0;
    if (s->w.emb_proj_w)
        total += align_up(d * E * 2);
    for (int32_t l = 0; l < c->n_layers; l++) {
        const atn_layer_weights *g = &s->layers[l];
        const float *mats[6] = {g->wq, g->wk, g->wv, g->wo, c->use_ffn ? g->w1 : NULL, c->use_ffn ? g->w2 : NULL};
        size_t counts[6] = {d * d, d * d, d * d, d * d, f * d, d * f};
        for (int i = 0; i < 6 && shared_with(s->layers, l) < 0; i++)
            if (mats[i])
                total += align_up(counts[i] * 2);
    }
    if (total) {
        cudaError_t e = cudaMalloc(&s->hblock, total);
        if (e != cudaSuccess) {
            cudaGetLastError();
            s->hblock = NULL;
            return cuda_fail(err, e, "allocating the reduced-precision weights");
        }
    }
    char *dev = s->hblock;
    s->hproj = NULL;
    if (s->w.emb_proj_w) {
        cudaError_t e = atn_cu_to_half(dev, s->w.emb_proj_w, d * E, prec == ATN_PRECISION_BF16, s->stream);
        if (e != cudaSuccess)
            return cuda_fail(err, e, "casting the weights to reduced precision");
        s->hproj = dev;
        dev += align_up(d * E * 2);
    }
    for (int32_t l = 0; l < c->n_layers; l++) {
        const atn_layer_weights *g = &s->layers[l];
        half_layer *h = &s->hlayers[l];
        int32_t same = shared_with(s->layers, l);
        if (same >= 0) {   /* ALBERT: the group's copy */
            *h = s->hlayers[same];
            continue;
        }
        const float *mats[6] = {g->wq, g->wk, g->wv, g->wo, c->use_ffn ? g->w1 : NULL, c->use_ffn ? g->w2 : NULL};
        void **outs[6] = {&h->wq, &h->wk, &h->wv, &h->wo, &h->w1, &h->w2};
        size_t counts[6] = {d * d, d * d, d * d, d * d, f * d, d * f};
        for (int i = 0; i < 6; i++) {
            if (!mats[i])
                continue;
            cudaError_t e = atn_cu_to_half(dev, mats[i], counts[i], prec == ATN_PRECISION_BF16, s->stream);
            if (e != cudaSuccess)
                return cuda_fail(err, e, "casting the weights to reduced precision");
            *outs[i] = dev;
            dev += align_up(counts[i] * 2);
        }
    }
    cudaError_t e = cudaStreamSynchronize(s->stream);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "casting the weights to reduced precision");
    s->hprec = prec;
    return ATN_OK;
}

/* The families whose layers cuda_ops are known to run (each checked against the CPU by
 * cuda-agreement and the stand-in's tests).  A family added to the engine later (rotary
 * positions, RMSNorm, grouped K/V heads ...) is refused by name until its ops are written
 * here and in kernels.cu, so --device auto falls back to the CPU rather than run it wrong. */
static const char *const cuda_families[] = {"BERT", "RoBERTa", "XLM-RoBERTa", "DistilBERT", "ALBERT", "ELECTRA",
                                            "GPT-2", NULL};

static atn_status cuda_runs(const atn_model *m, atn_error *err) {
    bool known = false;
    for (int i = 0; cuda_families[i]; i++)
        known |= strcmp(m->family->name, cuda_families[i]) == 0;
    atn_layer_desc d;
    atn_layer_desc_of(m, &d);
    if (!known || d.norm_type != ATN_NORM_LAYERNORM || (d.mlp != ATN_MLP_NONE && d.mlp != ATN_MLP_PLAIN))
        return fail(err, ATN_E_UNSUPPORTED, "the CUDA backend does not run %s models yet: the CPU runs them "
                    "(--device cpu; --device auto falls back to it)", m->family->name);
    return ATN_OK;
}

static atn_status cuda_upload(const atn_model *m, void **state, atn_error *err) {
    *state = NULL;
    atn_status ok = cuda_runs(m, err);
    if (ok)
        return ok;
    cuda_state *s = calloc(1, sizeof *s);
    if (!s)
        return fail(err, ATN_E_NOMEM, "out of memory");
    pthread_mutex_init(&s->lock, NULL);
    atn_status st = ATN_OK;
    cudaError_t e = cudaSetDevice(0);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&s->copy_stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        st = cuda_fail(err, e, "creating CUDA streams");
        goto out;
    }
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    s->cc = major * 10 + minor;
    cublasStatus_t bs = cublasCreate(&s->blas);
    if (bs != CUBLAS_STATUS_SUCCESS) {
        s->blas = NULL;
        st = blas_fail(err, bs, "creating the cuBLAS handle");
        goto out;
    }
    cublasSetStream(s->blas, s->stream);
    /* fp32 means fp32: no TF32 tensor-core shortcuts in the fp32 products */
    cublasSetMathMode(s->blas, CUBLAS_DEFAULT_MATH);
    st = upload_weights(s, m, err);
out:
    if (st) {
        cuda_state_free(s);
        return st;
    }
    *state = s;
    return ATN_OK;
}

/* ---- the forward pass --------------------------------------------------------- */

/* Device activations of one run, laid out like the host's (same strides). */
typedef struct dev_acts {
    float *hidden, *q, *k, *v, *ctx, *attn_out, *attn, *h1, *ffn, *mask;
    int32_t *ids, *types, *flags, *pos_ids;
    float *mask_base, *slopes, *emb;   /* per-layer masks' base [n][n], ALiBi [H], E-wide embeddings [n][E] */
    uint8_t *heads_off;                /* [L][H] */
    void *xh, *qh, *kh, *vh, *ph;   /* 2-byte scratch for reduced precision */
    size_t trace_stride, attn_stride;
} dev_acts;

/* Lays the activations out in s->ablock, growing it when this run needs more. */
static atn_status layout_acts(cuda_state *s, const atn_config *c, const atn_activations *act,
                              atn_precision prec, dev_acts *a, atn_error *err) {
    size_t n = (size_t)act->n, d = (size_t)c->d_model, f = c->use_ffn ? (size_t)c->d_ffn : 1;
    size_t E = (size_t)atn_d_embed(c), widest = d > f ? d : f;
    widest = widest > E ? widest : E;
    size_t L = (size_t)c->n_layers, H = (size_t)c->n_heads, nd = n * d;
    size_t trace = act->trace_stride ? L * nd : nd;
    size_t attn = act->attn_stride ? L * H * n * n : H * n * n;
    bool half = prec != ATN_PRECISION_FP32;
    size_t sizes[] = {
        (L + 1) * nd * 4, trace * 4, trace * 4, trace * 4, trace * 4, trace * 4, attn * 4, nd * 4, n * f * 4, n * n * 4,
        n * 4, n * 4, (L + 1) * 4,
        half ? n * widest * 2 : 0, half ? nd * 2 : 0, half ? nd * 2 : 0, half ? nd * 2 : 0,
        half ? H * n * n * 2 : 0, n * 4,
        act->mask_base ? n * n * 4 : 0, act->alibi_slopes ? H * 4 : 0, s->w.emb_proj_w ? n * E * 4 : 0,
        act->heads_off ? L * H : 0,
    };
    enum { N_ARR = sizeof sizes / sizeof sizes[0] };
    size_t total = 0;
    for (int i = 0; i < N_ARR; i++)
        total += align_up(sizes[i]);
    if (total > s->abytes) {
        cudaFree(s->ablock);
        s->ablock = NULL;
        s->abytes = 0;
        cudaError_t e = cudaMalloc(&s->ablock, total);
        if (e != cudaSuccess) {
            cudaGetLastError();
            s->ablock = NULL;
            return fail(err, ATN_E_DEVICE, "out of GPU memory: a run of %zu tokens through %zu layers x %zu heads "
                        "needs %.1f MB on the GPU (attention alone %.1f MB), %.1f MB are free", n, L, H, mb(total),
                        mb(attn * 4), mb(free_device_bytes()));
        }
        s->abytes = total;
    }
    void *ptrs[N_ARR];
    char *p = s->ablock;
    for (int i = 0; i < N_ARR; i++) {
        ptrs[i] = sizes[i] ? p : NULL;
        p += align_up(sizes[i]);
    }
    a->hidden = ptrs[0], a->q = ptrs[1], a->k = ptrs[2], a->v = ptrs[3], a->ctx = ptrs[4], a->attn_out = ptrs[5];
    a->attn = ptrs[6], a->h1 = ptrs[7], a->ffn = ptrs[8], a->mask = ptrs[9];
    a->ids = ptrs[10], a->types = ptrs[11], a->flags = ptrs[12];
    a->xh = ptrs[13], a->qh = ptrs[14], a->kh = ptrs[15], a->vh = ptrs[16], a->ph = ptrs[17];
    a->pos_ids = ptrs[18];
    a->mask_base = ptrs[19], a->slopes = ptrs[20], a->emb = ptrs[21], a->heads_off = ptrs[22];
    a->trace_stride = act->trace_stride ? nd : 0;
    a->attn_stride = act->attn_stride ? H * n * n : 0;
    return ATN_OK;
}

/* What one forward pass needs while it enqueues work. */
typedef struct fwd {
    cuda_state *s;
    const atn_config *c;
    dev_acts *a;
    int32_t n;
    atn_precision prec;
    cudaDataType_t htype;   /* CUDA_R_16F or CUDA_R_16BF */
    atn_error *err;
} fwd;

#define CU(call, what) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) return cuda_fail(f->err, e_, what); } \
    while (0)
#define BL(call, what) do { cublasStatus_t s_ = (call); if (s_ != CUBLAS_STATUS_SUCCESS) \
    return blas_fail(f->err, s_, what); } while (0)

/* out[n,o] = act(in[n,i] W^T + b); W NULL means identity (o == i), b NULL zero. */
static atn_status linear(fwd *f, float *out, const float *in, const float *w, const void *w_half, const float *b,
                         int32_t i, int32_t o, int act) {
    int32_t n = f->n;
    cudaStream_t st = f->s->stream;
    const float one = 1.0f, zero = 0.0f;
    if (!w) {
        CU(cudaMemcpyAsync(out, in, (size_t)n * i * sizeof(float), cudaMemcpyDeviceToDevice, st), "copying an "
           "identity projection");
    } else if (f->prec == ATN_PRECISION_FP32) {
        BL(cublasSgemm(f->s->blas, CUBLAS_OP_T, CUBLAS_OP_N, o, n, i, &one, w, i, in, i, &zero, out, o),
           "multiplying by a weight matrix (sgemm)");
    } else {
        CU(atn_cu_to_half(f->a->xh, in, (size_t)n * i, f->prec == ATN_PRECISION_BF16, st), "casting an input");
        BL(cublasGemmEx(f->s->blas, CUBLAS_OP_T, CUBLAS_OP_N, o, n, i, &one, w_half, f->htype, i, f->a->xh,
                        f->htype, i, &zero, out, CUDA_R_32F, o, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
           "multiplying by a weight matrix in reduced precision (GemmEx)");
    }
    CU(atn_cu_bias_act(out, b, n, o, act, st), "adding the bias");
    return ATN_OK;
}

/* The softmax's inputs of one layer: the mask, and the what-if gates (device arrays). */
typedef struct attn_terms {
    const float *mask;           /* [n][n] */
    bool gated;                  /* the gated softmax (any what-if term) */
    const float *slopes;         /* [H] or NULL */
    float temperature;
    const uint8_t *heads_off;    /* [H] of this layer, or NULL */
    atn_head_mode head_mode;
} attn_terms;

/* Every head at once: att[h] = softmax(scale Q_h K_h^T + mask (+ the gates)), ctx_h =
 * att[h] V_h.  Head h of q/k/v/ctx is the column block h*k.. of a row-major [n,d] matrix. */
static atn_status attention(fwd *f, float *ctx, float *att, const float *q, const float *k, const float *v,
                           float scale, const attn_terms *t) {
    int32_t n = f->n, d = f->c->d_model, H = f->c->n_heads, kd = d / H;
    cudaStream_t st = f->s->stream;
    const float one = 1.0f, zero = 0.0f;
    long long nn = (long long)n * n;
    /* column-major: att_h^T[n,n] (= att_h row-major) = K_h . Q_h^T */
    if (f->prec == ATN_PRECISION_FP32) {
        BL(cublasSgemmStridedBatched(f->s->blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, kd, &scale, k, d, kd, q, d, kd,
                                     &zero, att, n, nn, H), "computing the attention scores (QK^T)");
    } else {
        bool bf = f->prec == ATN_PRECISION_BF16;
        CU(atn_cu_to_half(f->a->qh, q, (size_t)n * d, bf, st), "casting Q");
        CU(atn_cu_to_half(f->a->kh, k, (size_t)n * d, bf, st), "casting K");
        BL(cublasGemmStridedBatchedEx(f->s->blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, kd, &scale, f->a->kh, f->htype,
                                      d, kd, f->a->qh, f->htype, d, kd, &zero, att, CUDA_R_32F, n, nn, H,
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
           "computing the attention scores in reduced precision (QK^T)");
    }
    if (t->gated)
        CU(atn_cu_softmax_gated(att, t->mask, (int64_t)H * n, n, t->slopes, t->temperature, t->heads_off,
                                (int)t->head_mode, st), "the softmax with the what-if terms");
    else
        CU(atn_cu_softmax(att, t->mask, (int64_t)H * n, n, st), "the softmax");
    /* column-major: ctx_h^T[k,n] = V_h^T . att_h^T */
    if (f->prec == ATN_PRECISION_FP32) {
        BL(cublasSgemmStridedBatched(f->s->blas, CUBLAS_OP_N, CUBLAS_OP_N, kd, n, n, &one, v, d, kd, att, n, nn,
                                     &zero, ctx, d, kd, H), "weighting the values (PV)");
    } else {
        bool bf = f->prec == ATN_PRECISION_BF16;
        CU(atn_cu_to_half(f->a->vh, v, (size_t)n * d, bf, st), "casting V");
        CU(atn_cu_to_half(f->a->ph, att, (size_t)H * nn, bf, st), "casting the probabilities");
        BL(cublasGemmStridedBatchedEx(f->s->blas, CUBLAS_OP_N, CUBLAS_OP_N, kd, n, n, &one, f->a->vh, f->htype, d,
                                      kd, f->a->ph, f->htype, n, nn, &zero, ctx, CUDA_R_32F, d, kd, H,
                                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
           "weighting the values in reduced precision (PV)");
    }
    return ATN_OK;
}

/* ---- the layer's ops (engine/forward/layer.h), enqueued on the stream ------------ */

/* Each op enqueues its work on the stream (tid 0 of 1: the GPU splits the work itself);
 * the first failure is kept in the walk's status and every later op does nothing. */
#define OP_FWD(w) fwd *f = (w)->backend; if (*(w)->status) return
#define OP_TRY(call) do { atn_status r_ = (call); if (r_) { *w->status = r_; return; } } while (0)

static const float *cu_operand(const atn_walk *w, const float *in, size_t count, int32_t l, atn_operand op) {
    (void)w, (void)count, (void)l, (void)op;
    return in;   /* reduced precision casts inside linear() and attention() */
}

static atn_status add_into(fwd *f, float *out, const float *a, const float *b, size_t count) {
    cudaStream_t st = f->s->stream;
    if (out != a)
        CU(cudaMemcpyAsync(out, a, count * sizeof(float), cudaMemcpyDeviceToDevice, st), "copying");
    if (b)
        CU(atn_cu_add(out, b, count, st), "the residual add");
    return ATN_OK;
}

static void cu_project(const atn_walk *w, int tid, int nt, float *out, const float *in, int32_t l,
                       atn_weight_id which, const float *res, int act, int32_t i, int32_t o) {
    (void)tid, (void)nt;
    OP_FWD(w);
    half_layer hz = {0};
    const half_layer *h = f->prec == ATN_PRECISION_FP32 ? &hz : &f->s->hlayers[l];
    const void *Wh = NULL;
    switch (which) {   /* the 2-byte copy (reduced precision) */
    case ATN_W_Q: Wh = h->wq; break;
    case ATN_W_K: Wh = h->wk; break;
    case ATN_W_V: Wh = h->wv; break;
    case ATN_W_O: Wh = h->wo; break;
    case ATN_W_FFN_IN: Wh = h->w1; break;
    case ATN_W_FFN_OUT: Wh = h->w2; break;
    case ATN_W_FFN_GATE:   /* gated MLPs are refused (cuda_runs) */
    case ATN_W_CQ: case ATN_W_CK: case ATN_W_CV: case ATN_W_CO: break;   /* encoder-decoders too (backend.c) */
    }
    const float *b, *W = atn_layer_weight(&w->layers[l], which, &b);
    OP_TRY(linear(f, out, in, W, Wh, b, i, o, act < 0 ? ATN_CU_ACT_NONE : act));
    if (res)
        OP_TRY(add_into(f, out, out, res, (size_t)f->n * o));
}

static void cu_norm(const atn_walk *w, int tid, int nt, float *out, const float *in, const float *res,
                    const float *g, const float *b) {
    (void)tid, (void)nt;
    OP_FWD(w);
    cudaError_t e = atn_cu_layernorm(out, in, res, g, b, f->n, w->desc.d, w->desc.eps, f->s->stream);
    if (e != cudaSuccess)
        *w->status = cuda_fail(f->err, e, "a LayerNorm");
}

static void cu_attend(const atn_walk *w, int tid, int nt, int32_t l, float *q, float *k, float *v, float *ctx) {
    (void)tid, (void)nt;
    OP_FWD(w);
    const atn_walk_seq *sq = &w->seq[0];
    /* the layer's mask (per-layer masks: mask_layers on the host, both masks on the device)
       and the gates; heads_off is the device copy of [L][H] */
    attn_terms t = {.mask = sq->mask_base && !sq->mask_layers[l] ? sq->mask_base : sq->mask, .gated = w->gated,
                    .slopes = w->slopes, .temperature = w->temperature,
                    .heads_off = sq->heads_off ? sq->heads_off + (size_t)l * w->desc.heads : NULL,
                    .head_mode = w->head_mode};
    OP_TRY(attention(f, ctx, sq->attn + sq->attn_stride * l, q, k, v, atn_layer_scale(&w->desc, l), &t));
}

static void cu_add(const atn_walk *w, int tid, int nt, float *out, const float *a, const float *b) {
    (void)tid, (void)nt;
    OP_FWD(w);
    OP_TRY(add_into(f, out, a, b, (size_t)f->n * w->desc.d));
}

/* The layer's non-finite flag on the device (collect reads it) and the event collect
 * waits for before it copies layer l back. */
static void cu_end_layer(atn_walk *w, int tid, int nt, const float *out, int32_t l) {
    (void)tid, (void)nt;
    OP_FWD(w);
    cudaError_t e = atn_cu_nonfinite(f->a->flags + l + 1, out, (size_t)f->n * w->desc.d, f->s->stream);
    if (e == cudaSuccess)
        e = cudaEventRecord(f->s->layer_done[l], f->s->stream);
    if (e != cudaSuccess)
        *w->status = cuda_fail(f->err, e, "checking a layer");
}

#undef OP_TRY
#undef OP_FWD

static const atn_layer_ops cuda_ops = {
    .name = "cuda",
    .operand = cu_operand,
    .project = cu_project,
    .norm = cu_norm,
    .attend = cu_attend,
    .add = cu_add,
    .end_layer = cu_end_layer,
};

/* Enqueues the whole forward pass on s->stream, recording layer_done[l] after layer l. */
static atn_status enqueue(fwd *f, const atn_model *m, const atn_encoding *enc, const atn_activations *act) {
    const atn_config *c = f->c;
    dev_acts *a = f->a;
    cuda_state *s = f->s;
    cudaStream_t st = s->stream;
    int32_t n = f->n, d = c->d_model;
    size_t nd = (size_t)n * d;
    CU(cudaMemsetAsync(a->flags, 0, (size_t)(c->n_layers + 1) * sizeof(int32_t), st), "clearing flags");
    /* the run's [n][n] additive mask, as the engine built it (engine/forward/run.c) */
    CU(cudaMemcpyAsync(a->mask, act->mask_add, (size_t)n * n * sizeof(float), cudaMemcpyHostToDevice, st),
       "copying the mask");
    if (act->start_layer > 0) {
        /* atn_run_forward_from: hidden[0..start] are the base capture's, already in act */
        CU(cudaMemcpyAsync(a->hidden, act->hidden, (size_t)(act->start_layer + 1) * nd * sizeof(float),
                           cudaMemcpyHostToDevice, st), "copying the given hidden states");
    } else if (c->use_embeddings) {
        CU(cudaMemcpyAsync(a->ids, enc->ids, (size_t)n * sizeof(int32_t), cudaMemcpyHostToDevice, st),
           "copying the token ids");
        /* position ids as the engine made them (the family's rule, engine/forward/run.c) */
        CU(cudaMemcpyAsync(a->pos_ids, act->pos_ids, (size_t)n * sizeof(int32_t), cudaMemcpyHostToDevice, st),
           "copying the position ids");
        if (s->w.type_emb)
            CU(cudaMemcpyAsync(a->types, enc->type_ids, (size_t)n * sizeof(int32_t), cudaMemcpyHostToDevice, st),
               "copying the token types");
        /* E wide (into the scratch when projected to d), LayerNorm but for GPT-2 (h0 = wte +
           wpe), then ALBERT's / ELECTRA's projection */
        int32_t E = atn_d_embed(c);
        float *e = s->w.emb_proj_w ? a->emb : a->hidden;
        CU(atn_cu_embed(e, a->ids, a->pos_ids, a->types, s->w.word_emb, act->no_positions ? NULL : s->w.pos_emb,
                        s->w.type_emb, n, E, st), "the embeddings");
        if (!m->family->pre_ln)
            CU(atn_cu_layernorm(e, e, NULL, s->w.emb_ln_g, s->w.emb_ln_b, n, E, c->ln_eps, st),
               "the embeddings LayerNorm");
        if (s->w.emb_proj_w) {
            atn_status ps = linear(f, a->hidden, e, s->w.emb_proj_w, s->hproj, s->w.emb_proj_b, E, d, ATN_CU_ACT_NONE);
            if (ps)
                return ps;
        }
    } else {
        CU(cudaMemcpyAsync(a->hidden, m->toy_x, nd * sizeof(float), cudaMemcpyHostToDevice, st),
           "copying the input vectors");
    }
    CU(atn_cu_nonfinite(a->flags, a->hidden, nd, st), "checking the embeddings");
    /* the what-if terms: the per-layer masks' base, ALiBi's slopes, the heads switched off */
    int32_t H = c->n_heads;
    if (act->mask_base)
        CU(cudaMemcpyAsync(a->mask_base, act->mask_base, (size_t)n * n * sizeof(float), cudaMemcpyHostToDevice, st),
           "copying the base mask");
    if (act->alibi_slopes)
        CU(cudaMemcpyAsync(a->slopes, act->alibi_slopes, (size_t)H * sizeof(float), cudaMemcpyHostToDevice, st),
           "copying the ALiBi slopes");
    if (act->heads_off)
        CU(cudaMemcpyAsync(a->heads_off, act->heads_off, (size_t)c->n_layers * H, cudaMemcpyHostToDevice, st),
           "copying the heads switched off");
    /* the one layer walk (engine/forward/layer.c) over this backend's ops; no progress here:
       collect reports each layer as it comes back */
    atn_status status = ATN_OK;
    atn_walk_seq seq = {.row = 0, .n = n, .attn = a->attn, .attn_stride = a->attn_stride, .mask = a->mask,
                        .mask_base = act->mask_base ? a->mask_base : NULL, .mask_layers = act->mask_layers,
                        .heads_off = act->heads_off ? a->heads_off : NULL, .nonfinite_layer = -1};
    atn_walk w = {.m = m, .ops = &cuda_ops, .layers = s->layers, .final_g = s->w.final_ln_g,
                  .final_b = s->w.final_ln_b, .seq = &seq, .count = 1, .M = n,
                  .hidden = a->hidden, .q = a->q, .k = a->k, .v = a->v, .ctx = a->ctx, .ao = a->attn_out,
                  .trace_stride = a->trace_stride, .h1 = a->h1, .ffn = a->ffn,
                  .slopes = act->alibi_slopes ? a->slopes : NULL, .temperature = act->temperature,
                  .head_mode = act->head_mode, .gated = atn_activations_gated(act), .start = act->start_layer,
                  .backend = f, .status = &status};
    atn_layer_desc_of(m, &w.desc);
    atn_layer_walk(&w, 0, 1);
    return status;
}

#undef CU
#undef BL

static atn_status copy_back(cudaStream_t cs, float *dst, const float *src, size_t count, atn_error *err) {
    cudaError_t e = cudaMemcpyAsync(dst, src, count * sizeof(float), cudaMemcpyDeviceToHost, cs);
    return e == cudaSuccess ? ATN_OK : cuda_fail(err, e, "copying the capture to the host");
}

/* Brings the capture home one layer at a time, while later layers still compute. */
static atn_status collect(cuda_state *s, const atn_config *c, const dev_acts *a, atn_activations *act,
                          const atn_run_options *opts, atn_error *err) {
    int32_t n = act->n, L = c->n_layers;
    size_t nd = (size_t)n * c->d_model;
    cudaStream_t cs = s->copy_stream;
    atn_status st = ATN_OK;
    /* a forward from a middle layer brings back only the layers it ran, as the CPU writes
       only those (the layers below are the base capture's) */
    for (int32_t l = act->start_layer; l < L && st == ATN_OK; l++) {
        if (opts->progress && !opts->progress((double)l / L, ATN_STAGE_LAYER, opts->user_data))
            return fail(err, ATN_E_CANCELLED, "cancelled at layer %d", l);
        cudaError_t e = cudaStreamWaitEvent(cs, s->layer_done[l], 0);
        if (e != cudaSuccess)
            return cuda_fail(err, e, "waiting for a layer");
        if (l == 0)
            st = copy_back(cs, act->hidden, a->hidden, nd, err);
        if (!st)
            st = copy_back(cs, act->hidden + (size_t)(l + 1) * nd, a->hidden + (size_t)(l + 1) * nd, nd, err);
        if (act->trace_stride) {
            size_t t = act->trace_stride * l;
            if (!st) st = copy_back(cs, act->q + t, a->q + t, nd, err);
            if (!st) st = copy_back(cs, act->k + t, a->k + t, nd, err);
            if (!st) st = copy_back(cs, act->v + t, a->v + t, nd, err);
            if (!st) st = copy_back(cs, act->ctx + t, a->ctx + t, nd, err);
            if (!st) st = copy_back(cs, act->attn_out + t, a->attn_out + t, nd, err);
        }
        if (act->attn_stride && !st)
            st = copy_back(cs, act->attn + act->attn_stride * l, a->attn + a->attn_stride * l, act->attn_stride, err);
        if (!st) {
            e = cudaStreamSynchronize(cs);
            if (e != cudaSuccess)
                st = cuda_fail(err, e, "computing a layer on the GPU");
        }
    }
    if (st)
        return st;
    /* buffers reused by every layer hold the last layer's values, as on the CPU */
    if (!act->trace_stride) {
        if (!st) st = copy_back(cs, act->q, a->q, nd, err);
        if (!st) st = copy_back(cs, act->k, a->k, nd, err);
        if (!st) st = copy_back(cs, act->v, a->v, nd, err);
        if (!st) st = copy_back(cs, act->ctx, a->ctx, nd, err);
        if (!st) st = copy_back(cs, act->attn_out, a->attn_out, nd, err);
    }
    if (!act->attn_stride && !st)
        st = copy_back(cs, act->attn, a->attn, (size_t)c->n_heads * n * n, err);
    int32_t flags[1024];
    int32_t *fl = L + 1 <= 1024 ? flags : malloc((size_t)(L + 1) * sizeof *fl);
    if (!fl)
        return fail(err, ATN_E_NOMEM, "out of memory");
    cudaError_t e = st ? cudaSuccess : cudaMemcpyAsync(fl, a->flags, (size_t)(L + 1) * sizeof *fl,
                                                        cudaMemcpyDeviceToHost, cs);
    if (e == cudaSuccess && !st)
        e = cudaStreamSynchronize(cs);
    if (!st && e != cudaSuccess)
        st = cuda_fail(err, e, "copying the capture to the host");
    if (!st) {
        act->nonfinite_layer = fl[0] ? 0 : -1;
        for (int32_t l = 0; l < L && act->nonfinite_layer < 0; l++)
            if (fl[l + 1])
                act->nonfinite_layer = l;
    }
    if (fl != flags)
        free(fl);
    return st;
}

static atn_status ensure_events(cuda_state *s, int32_t count, atn_error *err) {
    if (s->n_events >= count)
        return ATN_OK;
    cudaEvent_t *ev = realloc(s->layer_done, (size_t)count * sizeof *ev);
    if (!ev)
        return fail(err, ATN_E_NOMEM, "out of memory");
    s->layer_done = ev;
    while (s->n_events < count) {
        cudaError_t e = cudaEventCreateWithFlags(&ev[s->n_events], cudaEventDisableTiming);
        if (e != cudaSuccess)
            return cuda_fail(err, e, "creating CUDA events");
        s->n_events++;
    }
    return ATN_OK;
}

static atn_status forward_locked(cuda_state *s, const atn_model *m, const atn_encoding *enc, atn_activations *act,
                                 const atn_run_options *opts, atn_error *err) {
    const atn_config *c = &m->cfg;
    atn_status st;
    atn_precision prec = opts->precision;
    if (prec != ATN_PRECISION_FP32 && prec != ATN_PRECISION_FP16 && prec != ATN_PRECISION_BF16)
        return fail(err, ATN_E_INVALID, "unknown precision %d", (int)prec);
    if (prec == ATN_PRECISION_BF16 && s->cc < 80)
        return fail(err, ATN_E_DEVICE, "bf16 needs a GPU of compute capability 8.0 or newer; this one is %d.%d",
                    s->cc / 10, s->cc % 10);
    cudaError_t e = cudaSetDevice(0);
    if (e != cudaSuccess)
        return cuda_fail(err, e, "selecting device 0");
    /* toy models are editable (the GUI's cells) and tiny: upload their weights every run */
    if (m->kind == ATN_MODEL_TOY) {
        if ((st = upload_weights(s, m, err)))
            return st;
    }
    if (prec != ATN_PRECISION_FP32 && (!s->hblock || s->hprec != prec || m->kind == ATN_MODEL_TOY)) {
        if ((st = make_half_weights(s, c, prec, err)))
            return st;
    }
    if ((st = ensure_events(s, c->n_layers, err)))
        return st;
    dev_acts a;
    if ((st = layout_acts(s, c, act, prec, &a, err)))
        return st;
    fwd f = {s, c, &a, act->n, prec, prec == ATN_PRECISION_BF16 ? CUDA_R_16BF : CUDA_R_16F, err};
    st = enqueue(&f, m, enc, act);
    if (st == ATN_OK)
        st = collect(s, c, &a, act, opts, err);
    /* whatever happened, nothing may still be writing when we return */
    cudaError_t e1 = cudaStreamSynchronize(s->stream), e2 = cudaStreamSynchronize(s->copy_stream);
    if (st == ATN_OK && (e1 != cudaSuccess || e2 != cudaSuccess))
        st = cuda_fail(err, e1 != cudaSuccess ? e1 : e2, "finishing the forward pass");
    if (st == ATN_OK && opts->progress)
        opts->progress(1.0, ATN_STAGE_DONE, opts->user_data);
    return st;
}

static atn_status cuda_forward(void *state, const atn_model *m, const atn_encoding *enc, atn_activations *act,
                               const atn_run_options *opts, atn_error *err) {
    cuda_state *s = state;
    if (!s)
        return fail(err, ATN_E_INVALID, "the CUDA backend was given no model state");
    pthread_mutex_lock(&s->lock);
    atn_status st = forward_locked(s, m, enc, act, opts, err);
    pthread_mutex_unlock(&s->lock);
    return st;
}

/* ---- page-locked host memory ---------------------------------------------------------- */

/* The run's activation block when atn_run_options.pinned_host asks for it: device-to-host
 * copies into page-locked memory go straight over the bus (pageable memory goes through the
 * driver's bounce buffers at a fraction of the speed), which is what a full capture of
 * bert-large at 512 tokens (~800 MB) needs to come back in a few milliseconds. */
static void *cuda_host_alloc(size_t bytes) {
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocPortable) != cudaSuccess) {
        cudaGetLastError();   /* not sticky: clear it, the caller falls back to malloc */
        return NULL;
    }
    return p;
}

static void cuda_host_free(void *p) {
    if (p)
        cudaFreeHost(p);
}

/* ---- the table ------------------------------------------------------------------ */

static const atn_backend cuda_backend = {
    .abi_version = ATN_BACKEND_ABI_VERSION,
    .layout = ATN_BACKEND_LAYOUT_INIT,
    .name = "cuda",
    .probe = cuda_probe,
    .device_count = cuda_device_count,
    .device_info = cuda_device_info,
    .init = cuda_init,
    .upload = cuda_upload,
    .forward = cuda_forward,
    .state_free = cuda_state_free,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
};

__attribute__((visibility("default"))) const atn_backend *ATN_CUDA_ENTRY_FN(void);
__attribute__((visibility("default"))) const atn_backend *ATN_CUDA_ENTRY_FN(void) { return &cuda_backend; }

/* Backends: where the forward pass runs.  A small versioned table of function pointers,
 * in the manner of ggml, for the CUDA backend (the CPU forward, atn_cpu_forward in
 * encoder.c, is called directly and has no table).  The CUDA backend is a shared
 * module (attnscope-cuda.so) that engine/forward/backend.c opens with dlopen only when a GPU is
 * asked for, so the program never links the CUDA libraries itself.
 *
 * The module is built from the same headers as the engine; the table carries the ABI
 * version and the sizes of every struct the two share, and a module that disagrees is
 * refused rather than trusted. */
#ifndef ATN_BACKEND_H
#define ATN_BACKEND_H

#include "forward/encoder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bump when atn_backend changes shape or meaning (a plain number: it is pasted into the
 * entry point's name). */
#define ATN_BACKEND_ABI 3   /* 2: host_alloc / host_free; 3: atn_progress_fn takes an atn_stage */
#define ATN_BACKEND_ABI_VERSION ((uint32_t)ATN_BACKEND_ABI)

#define ATN_BACKEND_STR_(x) #x
#define ATN_BACKEND_STR(x) ATN_BACKEND_STR_(x)
#define ATN_BACKEND_PASTE_(a, b) a##b
#define ATN_BACKEND_PASTE(a, b) ATN_BACKEND_PASTE_(a, b)

/* The one symbol a backend module exports, named after the ABI version
 * ("atn_cuda_backend_v3"), so that a module of another version has no symbol of that
 * name at all; ATN_CUDA_ENTRY_FN is that name as an identifier, for the module to define:
 *   const atn_backend *ATN_CUDA_ENTRY_FN(void) { ... }
 * And the module's file name. */
#define ATN_CUDA_ENTRY_FN ATN_BACKEND_PASTE(atn_cuda_backend_v, ATN_BACKEND_ABI)
#define ATN_CUDA_ENTRY_POINT "atn_cuda_backend_v" ATN_BACKEND_STR(ATN_BACKEND_ABI)
#define ATN_CUDA_MODULE_NAME "attnscope-cuda.so"

/* sizeof of each struct a module reads or writes, as the module saw them. */
typedef struct atn_backend_layout {
    uint32_t model, config, weights, layer_weights, encoding, activations, run_options, error, device;
} atn_backend_layout;

#define ATN_BACKEND_LAYOUT_INIT {sizeof(atn_model), sizeof(atn_config), sizeof(atn_weights), \
    sizeof(atn_layer_weights), sizeof(atn_encoding), sizeof(atn_activations), sizeof(atn_run_options), \
    sizeof(atn_error), sizeof(atn_backend_device)}

/* One device a backend can run on (the public atn_device_info). */
typedef atn_device_info atn_backend_device;

typedef struct atn_backend {
    uint32_t abi_version;          /* ATN_BACKEND_ABI_VERSION */
    atn_backend_layout layout;     /* ATN_BACKEND_LAYOUT_INIT as compiled into the backend */
    const char *name;              /* "cpu", "cuda" */
    /* Whether it can run here: a score > 0 (higher is preferred), or 0 with the reason in
       err (no driver, no device ...).  Cheap after the first call. */
    int (*probe)(atn_error *err);
    /* Devices it runs on (valid after a successful probe). */
    int32_t (*device_count)(void);
    atn_status (*device_info)(int32_t index, atn_backend_device *info, atn_error *err);
    /* Once, after a successful probe: creates the context on the device. */
    atn_status (*init)(atn_error *err);
    /* Prepares a model for this backend (uploads its weights, once); *state is kept in
       model->backend_state and freed with state_free. */
    atn_status (*upload)(const atn_model *model, void **state, atn_error *err);
    /* One forward pass: fills act exactly as atn_cpu_forward does (hidden, the trace inputs,
       the probabilities, nonfinite_layer), in host memory, honouring act's strides and
       opts->precision, calling opts->progress once per layer. */
    atn_status (*forward)(void *state, const atn_model *model, const atn_encoding *enc, atn_activations *act,
                          const atn_run_options *opts, atn_error *err);
    void (*state_free)(void *state);
    /* Host memory the device copies to at full speed (page-locked), or NULL when it cannot
       be had; freed with host_free.  NULL entries: the backend has no such memory. */
    void *(*host_alloc)(size_t bytes);
    void (*host_free)(void *p);
} atn_backend;

/* The signature of the module's entry point. */
typedef const atn_backend *(*atn_backend_entry_fn)(void);

/* The CUDA backend, ready to run: the module loaded (lazily, once, thread-safe: dlopen of a
 * cuBLAS-linked module takes 60-760 ms), its table checked, probed and initialised.  NULL
 * with the reason in err (ATN_E_DEVICE): module missing or unloadable, ABI mismatch, no
 * driver, no device.  The answer is decided once per process. */
const atn_backend *atn_backend_cuda(atn_error *err);

/* The module file that was loaded or last tried ("" before the first atn_backend_cuda). */
const char *atn_backend_cuda_module_path(void);

/* Loads a module file and checks its table, without probing it (tests and `devices`). */
const atn_backend *atn_backend_open_module(const char *path, atn_error *err);

/* Runs the forward pass on opts->device, filling act.  CPU: the CPU.  CUDA: the GPU or an
 * ATN_E_DEVICE error naming the problem (module missing, no driver, no device, out of GPU
 * memory).  AUTO: the GPU when usable, else (or when the GPU fails) the CPU.  *used says
 * which device ran it.  This is the one place the CPU fallback is decided: fallback (may
 * be NULL) is cleared, and when AUTO fell back it holds the GPU's error (its status and
 * message: module missing, no driver, out of GPU memory ...). */
atn_status atn_backend_forward(const atn_model *model, const atn_encoding *enc, atn_activations *act,
                               const atn_run_options *opts, atn_device *used, atn_error *fallback,
                               atn_error *err);

/* atn_compare_precision (attnscope.h) is in backend.c. */

#ifdef __cplusplus
}
#endif
#endif

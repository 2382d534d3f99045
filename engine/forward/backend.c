/* Backend dispatch: the CUDA module found and opened with dlopen on first use (once per
 * process, thread-safe), and the choice between it and the CPU forward (atn_cpu_forward,
 * encoder.c) for --device cpu|cuda|auto.  Nothing here links CUDA: only the module does. */
#include "forward/backend.h"
#include "core/family.h"
#include "core/install-paths.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

/* ---- opening a module ------------------------------------------------------- */

const atn_backend *atn_backend_open_module(const char *path, atn_error *err) {
    /* RTLD_NOW: an unresolved symbol shows here, not halfway through a forward */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        atn_error_set(err, ATN_E_DEVICE, "the CUDA module %s could not be loaded: %s (are the CUDA runtime and "
                      "cuBLAS libraries installed?)", path, why ? why : "unknown error");
        return NULL;
    }
    atn_backend_entry_fn entry = (atn_backend_entry_fn)(uintptr_t)dlsym(h, ATN_CUDA_ENTRY_POINT);
    if (!entry) {
        atn_error_set(err, ATN_E_DEVICE, "%s is not an attnscope CUDA module: it has no %s()", path,
                      ATN_CUDA_ENTRY_POINT);
        dlclose(h);
        return NULL;
    }
    const atn_backend *b = entry();
    static const atn_backend_layout want = ATN_BACKEND_LAYOUT_INIT;
    if (!b || b->abi_version != ATN_BACKEND_ABI_VERSION) {
        atn_error_set(err, ATN_E_DEVICE, "%s speaks backend ABI version %u, this program version %u: rebuild the "
                      "module with the program", path, b ? b->abi_version : 0u, ATN_BACKEND_ABI_VERSION);
        return NULL;   /* no dlclose: the module's static constructors have run */
    }
    if (memcmp(&b->layout, &want, sizeof want) != 0) {
        atn_error_set(err, ATN_E_DEVICE, "%s was built from other engine headers (struct sizes differ: model %u/%u, "
                      "activations %u/%u, run options %u/%u): rebuild the module with the program", path,
                      b->layout.model, want.model, b->layout.activations, want.activations, b->layout.run_options,
                      want.run_options);
        return NULL;
    }
    if (!b->probe || !b->init || !b->upload || !b->forward || !b->state_free || !b->device_count ||
        !b->device_info || !b->name) {
        atn_error_set(err, ATN_E_DEVICE, "%s: its backend table has empty entries", path);
        return NULL;
    }
    return b;
}

/* ---- finding and preparing the CUDA module, once ---------------------------- */

static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;
static const atn_backend *cuda_backend;
static atn_error cuda_error;
static char cuda_path[2 * PATH_MAX];

static bool file_exists(const char *p) { return access(p, F_OK) == 0; }

/* The folder of the running program, or "" when /proc is not there. */
/* Looks where a module should be: $ATTNSCOPE_CUDA_MODULE (only there when set), next to the
 * program, the build tree (for a program run from it), the install libdir. */
static atn_status find_module(char *out, size_t len, atn_error *err) {
    const char *env = getenv("ATTNSCOPE_CUDA_MODULE");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        if (!file_exists(env))
            return atn_error_set(err, ATN_E_DEVICE, "the CUDA module is missing: ATTNSCOPE_CUDA_MODULE names %s, "
                                 "which does not exist", env);
        return ATN_OK;
    }
    char dir[PATH_MAX];
    atn_exe_dir(dir, sizeof dir);
    char cand[3][2 * PATH_MAX];
    int n = 0, w;
    if (dir[0] && (w = snprintf(cand[n], sizeof cand[0], "%s/%s", dir, ATN_CUDA_MODULE_NAME)) > 0 &&
        (size_t)w < sizeof cand[0])
        n++;
    if (atn_running_uninstalled())
        snprintf(cand[n++], sizeof cand[0], "%s/engine/cuda/%s", ATN_BUILD_DIR, ATN_CUDA_MODULE_NAME);
    snprintf(cand[n++], sizeof cand[0], "%s/%s", ATN_INSTALL_LIBDIR, ATN_CUDA_MODULE_NAME);
    for (int i = 0; i < n; i++)
        if (file_exists(cand[i]) && strlen(cand[i]) < len) {
            memcpy(out, cand[i], strlen(cand[i]) + 1);
            return ATN_OK;
        }
    out[0] = 0;
    return atn_error_set(err, ATN_E_DEVICE, "the CUDA module is missing: no %s next to the program, in the build "
                         "tree or in %s (was this build made without nvcc? see `meson configure -Dcuda=enabled`)",
                         ATN_CUDA_MODULE_NAME, ATN_INSTALL_LIBDIR);
}

static void cuda_load_once(void) {
    atn_error *err = &cuda_error;
    if (find_module(cuda_path, sizeof cuda_path, err))
        return;
    const atn_backend *b = atn_backend_open_module(cuda_path, err);
    if (!b)
        return;
    if (b->probe(err) <= 0) {
        if (!err->message[0])
            atn_error_set(err, ATN_E_DEVICE, "the CUDA backend is not usable here");
        err->status = ATN_E_DEVICE;
        return;
    }
    if (b->init(err) != ATN_OK) {
        err->status = ATN_E_DEVICE;
        return;
    }
    atn_error_clear(err);
    cuda_backend = b;
}

const atn_backend *atn_backend_cuda(atn_error *err) {
    pthread_once(&cuda_once, cuda_load_once);
    if (!cuda_backend && err)
        *err = cuda_error;
    return cuda_backend;
}

const char *atn_backend_cuda_module_path(void) { return cuda_path; }

/* ---- dispatch ----------------------------------------------------------------- */

static pthread_mutex_t upload_lock = PTHREAD_MUTEX_INITIALIZER;

/* The backend's state for this model, uploading the weights the first time. */
static atn_status backend_state(const atn_backend *b, const atn_model *model, void **state, atn_error *err) {
    atn_model *m = (atn_model *)model;   /* backend_state is a cache: filling it does not change the model */
    atn_status st = ATN_OK;
    pthread_mutex_lock(&upload_lock);
    if (m->backend_state && m->backend_state_free != b->state_free) {
        m->backend_state_free(m->backend_state);   /* another backend's cache */
        m->backend_state = NULL;
        m->backend_state_free = NULL;
    }
    if (!m->backend_state) {
        void *s = NULL;
        st = b->upload(model, &s, err);
        if (st == ATN_OK) {
            m->backend_state = s;
            m->backend_state_free = b->state_free;
        }
    }
    *state = m->backend_state;
    pthread_mutex_unlock(&upload_lock);
    return st;
}

static atn_status gpu_forward(const atn_model *model, const atn_encoding *enc, atn_activations *act,
                              const atn_run_options *opts, atn_error *err) {
    /* the masks, the shuffle, the what-if gates (the module's gated softmax) and a forward
       from a middle layer all reach the GPU; what the module cannot run it refuses by name */
    if (model->rotary.on || model->cfg.gated_ffn || model->family->alibi || model->deberta.on ||
        model->family->encdec)   /* no RMSNorm, rotation, grouped heads, gated MLP, ALiBi, relative
                                    terms or cross-attention there */
        return atn_error_set(err, ATN_E_UNSUPPORTED, "the CUDA backend does not run %s models yet (RMSNorm, "
                             "rotary positions, grouped K/V heads, a gated MLP, ALiBi, disentangled attention, cross-attention): the CPU runs them (--device cpu; "
                             "--device auto falls back to it)", model->family->name);
    const atn_backend *b = atn_backend_cuda(err);
    if (!b)
        return ATN_E_DEVICE;
    void *state;
    atn_status st = backend_state(b, model, &state, err);
    if (st)
        return st;
    return b->forward(state, model, enc, act, opts, err);
}

atn_status atn_backend_forward(const atn_model *model, const atn_encoding *enc, atn_activations *act,
                               const atn_run_options *opts, atn_device *used, atn_error *fallback,
                               atn_error *err) {
    if (fallback)
        atn_error_clear(fallback);
    if (opts->device == ATN_DEVICE_CUDA || opts->device == ATN_DEVICE_AUTO) {
        atn_error gerr = {0};
        atn_status st = gpu_forward(model, enc, act, opts, &gerr);
        if (st == ATN_OK) {
            *used = ATN_DEVICE_CUDA;
            return ATN_OK;
        }
        if (opts->device == ATN_DEVICE_CUDA || st == ATN_E_CANCELLED) {
            if (err)
                *err = gerr;
            return st;
        }
        /* AUTO: whatever went wrong on the GPU, the CPU gives the same capture; the reason
           is kept for the caller to show (atn_run_fallback_reason) */
        if (fallback)
            *fallback = gerr;
    }
    *used = ATN_DEVICE_CPU;
    return atn_cpu_forward(model, enc, act, opts, err);
}

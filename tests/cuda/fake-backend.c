/* Broken backend modules for the loader's refusals (test-cuda-module.c): built four times
 * with FAKE_KIND 1 (a table of another ABI version behind this version's entry point),
 * 2 (struct sizes from other headers), 3 (no entry point), 4 (a module of ABI version 1:
 * its entry point atn_cuda_backend_v1, the name before this version).  None of them may
 * ever be called. */
#include "forward/backend.h"

#include <stddef.h>

#if FAKE_KIND == 3
__attribute__((visibility("default"))) int atn_not_a_backend(void);
__attribute__((visibility("default"))) int atn_not_a_backend(void) { return 0; }
#elif FAKE_KIND == 4
static const atn_backend old = {.abi_version = 1, .layout = ATN_BACKEND_LAYOUT_INIT, .name = "old"};
__attribute__((visibility("default"))) const atn_backend *atn_cuda_backend_v1(void);
__attribute__((visibility("default"))) const atn_backend *atn_cuda_backend_v1(void) { return &old; }
#else
static const atn_backend fake = {
#if FAKE_KIND == 1
    .abi_version = ATN_BACKEND_ABI_VERSION + 41,
    .layout = ATN_BACKEND_LAYOUT_INIT,
#else
    .abi_version = ATN_BACKEND_ABI_VERSION,
    .layout = {sizeof(atn_model) + 8, sizeof(atn_config), sizeof(atn_weights), sizeof(atn_layer_weights),
               sizeof(atn_encoding), sizeof(atn_activations), sizeof(atn_run_options), sizeof(atn_error),
               sizeof(atn_backend_device)},
#endif
    .name = "fake",
};

__attribute__((visibility("default"))) const atn_backend *ATN_CUDA_ENTRY_FN(void);
__attribute__((visibility("default"))) const atn_backend *ATN_CUDA_ENTRY_FN(void) { return &fake; }
#endif

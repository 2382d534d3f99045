/* Broken backend modules for the loader's refusals (test-cuda-module.c): built three times
 * with FAKE_KIND 1 (another ABI version), 2 (struct sizes from other headers), 3 (no entry
 * point).  None of them may ever be called. */
#include "backend.h"

#include <stddef.h>

#if FAKE_KIND == 3
__attribute__((visibility("default"))) int atn_not_a_backend(void);
__attribute__((visibility("default"))) int atn_not_a_backend(void) { return 0; }
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

__attribute__((visibility("default"))) const atn_backend *atn_cuda_backend_v1(void);
__attribute__((visibility("default"))) const atn_backend *atn_cuda_backend_v1(void) { return &fake; }
#endif

/* Backend dispatch.  Only the CPU backend exists so far; asking for CUDA says so. */
#include "backend.h"

atn_status atn_backend_forward(const atn_model *model, const atn_encoding *enc, atn_activations *act,
                               const atn_run_options *opts, atn_device *used, atn_error *err) {
    if (opts->device == ATN_DEVICE_CUDA)
        return atn_error_set(err, ATN_E_DEVICE, "the CUDA backend is not part of this build");
    *used = ATN_DEVICE_CPU;
    return atn_cpu_forward(model, enc, act, opts, err);
}

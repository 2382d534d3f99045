/* Backends: where the forward pass runs.  The CPU backend is linked in; others (CUDA) are
 * shared modules opened with dlopen only when asked for (engine/backend.c). */
#ifndef ATN_BACKEND_H
#define ATN_BACKEND_H

#include "encoder.h"

/* Runs the forward pass on opts->device (AUTO: a GPU when one is usable, else the CPU),
 * filling act.  *used says which device ran it. */
atn_status atn_backend_forward(const atn_model *model, const atn_encoding *enc, atn_activations *act,
                               const atn_run_options *opts, atn_device *used, atn_error *err);

#endif

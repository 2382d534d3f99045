/* The public face of the GPU: listing the devices the CUDA module sees, and comparing
 * reduced-precision attention with fp32.  Built on backend.c (the module) and run.c (the
 * runs); neither of those calls back here. */
#include "forward/backend.h"

#include <stdlib.h>
#include <string.h>

/* ---- devices ------------------------------------------------------------------- */

int32_t atn_cuda_device_count(atn_error *err) {
    const atn_backend *b = atn_backend_cuda(err);
    return b ? b->device_count() : 0;
}

atn_status atn_cuda_device_info(int32_t index, atn_device_info *info, atn_error *err) {
    if (!info)
        return atn_error_set(err, ATN_E_INVALID, "atn_cuda_device_info: NULL info");
    const atn_backend *b = atn_backend_cuda(err);
    if (!b)
        return ATN_E_DEVICE;
    if (index < 0 || index >= b->device_count())
        return atn_error_set(err, ATN_E_INVALID, "no GPU %d: the CUDA module sees %d", index, b->device_count());
    return b->device_info(index, info, err);
}

const char *atn_cuda_module_path(void) { return atn_backend_cuda_module_path(); }

/* ---- reduced precision against fp32 --------------------------------------------- */

atn_status atn_compare_precision(const atn_model *model, const atn_encoding *enc, atn_precision precision,
                                 float *max_abs, float *mean_abs, atn_error *err) {
    if (!model || !enc || !max_abs || !mean_abs)
        return atn_error_set(err, ATN_E_INVALID, "atn_compare_precision: NULL argument");
    if (precision != ATN_PRECISION_FP16 && precision != ATN_PRECISION_BF16)
        return atn_error_set(err, ATN_E_INVALID, "compare fp16 or bf16 against fp32, not precision %d",
                             (int)precision);
    atn_run_options o;
    atn_run_options_init(&o);
    o.device = ATN_DEVICE_CUDA;
    o.keep_trace_inputs = false;
    atn_run *r32 = atn_run_new(model), *rp = atn_run_new(model);
    atn_status st = ATN_OK;
    if (!r32 || !rp) {
        st = atn_error_set(err, ATN_E_NOMEM, "out of memory");
        goto done;
    }
    if ((st = atn_run_forward(r32, enc, &o, err)) != ATN_OK)
        goto done;
    o.precision = precision;
    if ((st = atn_run_forward(rp, enc, &o, err)) != ATN_OK)
        goto done;
    const atn_capture *a = atn_run_capture(r32), *b = atn_run_capture(rp);
    size_t nn = (size_t)a->n * a->n;
    for (int32_t lh = 0; lh < a->n_layers * a->n_heads; lh++) {
        const float *pa = a->attn + (size_t)lh * nn, *pb = b->attn + (size_t)lh * nn;
        double mx = 0, sum = 0;
        for (size_t i = 0; i < nn; i++) {
            double dd = pa[i] > pb[i] ? (double)pa[i] - pb[i] : (double)pb[i] - pa[i];
            if (!(dd <= mx))   /* NaN counts as the worst */
                mx = dd;
            sum += dd;
        }
        max_abs[lh] = (float)mx;
        mean_abs[lh] = (float)(sum / (double)nn);
    }
done:
    atn_run_free(r32);
    atn_run_free(rp);
    return st;
}

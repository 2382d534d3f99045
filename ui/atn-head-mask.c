/* The Head view's masked cells (see atn-head-mask.h). */
#include "atn-head-mask.h"
#include "atn-model-handle.h"
#include "atn-whatif.h"

const float *atn_head_cell_mask(AtnResult *r, int layer) {
    if (!r)
        return NULL;
    const atn_capture *c = atn_result_get_capture(r);
    if (!c)
        return NULL;
    gboolean windowed = FALSE;
    AtnModelHandle *h = atn_result_get_model(r);
    atn_model *m = h ? atn_model_handle_get_model(h) : NULL;
    atn_rotary_info info;
    if (m && atn_model_rotary_info(m, &info))
        windowed = info.window > 0 || info.local_layers || info.global_every > 0;
    return atn_whatif_of_result(r) || windowed ? atn_capture_layer_mask(c, layer) : NULL;
}

/* The capture's promises: rows sum to 1, masked keys get 0, padded queries are still
 * computed, memory is checked before a run, NaN weights are reported by layer, and the
 * options that drop parts of the capture do not change the numbers. */
#include "check.h"
#include "attnscope.h"
#include "core/model-private.h"

#include <float.h>
#include <stdlib.h>

static atn_model *random_toy(int32_t n, int32_t d, int32_t h, int32_t layers, unsigned seed) {
    srand(seed);
    char *json = malloc(1 << 20);
    int off = sprintf(json, "{\"d_model\": %d, \"heads\": %d, \"layernorm\": true, \"residual\": true, \"tokens\": [", d, h);
    for (int i = 0; i < n; i++)
        off += sprintf(json + off, "%s\"t%d\"", i ? "," : "", i);
    off += sprintf(json + off, "], \"inputs\": [");
    for (int i = 0; i < n; i++) {
        off += sprintf(json + off, "%s[", i ? "," : "");
        for (int j = 0; j < d; j++)
            off += sprintf(json + off, "%s%.4f", j ? "," : "", rand() / (double)RAND_MAX * 2 - 1);
        off += sprintf(json + off, "]");
    }
    off += sprintf(json + off, "], \"layers\": [");
    for (int l = 0; l < layers; l++) {
        off += sprintf(json + off, "%s{\"W_Q\": [", l ? "," : "");
        for (int i = 0; i < d; i++) {
            off += sprintf(json + off, "%s[", i ? "," : "");
            for (int j = 0; j < d; j++)
                off += sprintf(json + off, "%s%.4f", j ? "," : "", rand() / (double)RAND_MAX * 2 - 1);
            off += sprintf(json + off, "]");
        }
        off += sprintf(json + off, "]}");
    }
    sprintf(json + off, "]}");
    atn_error err = {0};
    atn_model *m = atn_model_parse_toy_json(json, strlen(json), "random", &err);
    if (!m)
        fprintf(stderr, "%s\n", err.message);
    free(json);
    return m;
}

static bool stop_at_layer_one(double fraction, atn_stage stage, void *user_data) {
    return fraction < 0.5;
}

int main(void) {
    atn_error err = {0};
    atn_model *m = random_toy(9, 12, 3, 2, 7);
    CHECK(m != NULL);
    if (!m)
        return check_summary("capture");
    int32_t mask[9] = {1, 1, 1, 1, 1, 1, 0, 0, 0};
    atn_encoding *enc;
    CHECK(atn_model_encode_toy(m, mask, &enc, &err) == ATN_OK);
    atn_run *run = atn_run_new(m);
    CHECK(atn_run_forward(run, enc, NULL, &err) == ATN_OK);
    const atn_capture *cap = atn_run_capture(run);
    int32_t n = cap->n;
    size_t rows = (size_t)cap->n_layers * cap->n_heads * n;
    double worst = 0;
    for (size_t r = 0; r < rows; r++) {
        double s = 0;
        for (int32_t j = 0; j < n; j++) {
            s += cap->attn[r * n + j];
            if (!mask[j])
                CHECK(cap->attn[r * n + j] == 0.0f);
        }
        worst = fabs(s - 1) > worst ? fabs(s - 1) : worst;
    }
    CHECK_MSG(worst <= 1e-6, "worst row sum error %g", worst);
    /* padded query rows are computed like any other (as Hugging Face does): not all zero */
    const float *pad_row = cap->attn + 8 * n;
    CHECK(pad_row[0] > 0);
    CHECK(cap->nonfinite_layer == -1);

    /* keeping less does not change the numbers */
    size_t count = rows * n;
    float *full = malloc(count * sizeof(float));
    memcpy(full, cap->attn, count * sizeof(float));
    float last_hidden[9 * 12];
    memcpy(last_hidden, cap->hidden + 2 * 9 * 12, sizeof last_hidden);
    atn_run_options o;
    atn_run_options_init(&o);
    o.keep_trace_inputs = false;
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_OK);
    cap = atn_run_capture(run);
    CHECK(cap->q == NULL && !cap->has_trace_inputs);
    CHECK_ARRAY_NEAR("attention without trace inputs", cap->attn, full, count, 0);
    o.keep_attention = false;
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_OK);
    cap = atn_run_capture(run);
    CHECK(cap->attn == NULL);
    CHECK_ARRAY_NEAR("output without capture", cap->hidden + 2 * 9 * 12, last_hidden, 9 * 12, 0);
    atn_trace *t;
    CHECK(atn_trace_compute(m, cap, 0, 0, 0, &t, &err) == ATN_E_INVALID && strstr(err.message, "trace inputs"));
    free(full);

    /* a progress callback that says stop cancels the run */
    atn_run_options_init(&o);
    o.progress = stop_at_layer_one;
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_E_CANCELLED);
    CHECK(atn_run_capture(run) == NULL);

    /* every token masked: refused */
    int32_t none[9] = {0};
    atn_encoding *enc0;
    CHECK(atn_model_encode_toy(m, none, &enc0, &err) == ATN_OK);
    CHECK(atn_run_forward(run, enc0, NULL, &err) == ATN_E_INVALID && strstr(err.message, "masked"));
    atn_encoding_free(enc0);
    int32_t bad[9] = {1, 2};
    CHECK(atn_model_encode_toy(m, bad, &enc0, &err) == ATN_E_INVALID && strstr(err.message, "0 or 1"));

    /* memory is checked before a run: bert-large at 4096 tokens is refused with the number */
    atn_config large = {.n_layers = 24, .d_model = 1024, .n_heads = 16, .d_head = 64, .d_ffn = 4096};
    atn_run_options_init(&o);
    size_t need = atn_run_bytes_needed(&large, 4096, &o);
    /* attention alone: 24 * 16 * 4096^2 floats = 25.8 GB */
    CHECK(need > (size_t)24 * 16 * 4096 * 4096 * 4);
    o.memory_limit = (size_t)1 << 30;
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_OK);   /* the small model fits in 1 GB */
    o.memory_limit = 1000;
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_E_NOMEM && strstr(err.message, "needs") &&
          strstr(err.message, "allowed"));

    /* a NaN weight: the run completes and names the first non-finite layer */
    atn_model *mn = random_toy(4, 4, 2, 3, 11);
    atn_encoding *en;
    CHECK(atn_model_encode_toy(mn, NULL, &en, &err) == ATN_OK);
    ((float *)mn->w.layers[1].wq)[0] = NAN;
    atn_run *rn = atn_run_new(mn);
    CHECK(atn_run_forward(rn, en, NULL, &err) == ATN_OK);
    CHECK(atn_run_capture(rn)->nonfinite_layer == 1);
    atn_run_free(rn);
    atn_encoding_free(en);
    atn_model_free(mn);

    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(m);
    return check_summary("capture");
}

/* Fuzz target: toy-model JSON (atn_model_parse_toy_json on the bytes).  A model that
 * parses and is small is run and traced, so weights straight from the file (huge, tiny,
 * 1e999 = inf) go through the encoder and the trace too. */
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *origin = "fuzz-toy.json";
    atn_error err = {0};
    atn_model *m = atn_model_parse_toy_json((const char *)data, size, origin, &err);
    if (!m) {
        fuzz_check_parse_error(err.status, &err, origin);
        return 0;
    }
    const atn_config *c = atn_model_config(m);
    int32_t n = atn_model_toy_n_tokens(m);
    if (n <= 0 || c->d_model <= 0 || c->n_heads <= 0 || c->d_model % c->n_heads)
        fuzz_fail("a toy model that parsed with a bad shape", NULL);
    for (int32_t i = 0; i < n; i++)
        if (!atn_model_toy_token(m, i))
            fuzz_fail("a NULL toy token", NULL);
    if ((int64_t)n * c->d_model * c->n_layers <= 4096 && (int64_t)c->d_ffn * c->d_model <= 4096) {
        atn_encoding *enc = NULL;
        atn_status st = atn_model_encode_toy(m, NULL, &enc, &err);
        if (st != ATN_OK)
            fuzz_fail("encoding a toy model failed", err.message);
        atn_run *run = atn_run_new(m);
        atn_run_options o;
        atn_run_options_init(&o);
        o.memory_limit = 64 << 20;
        st = atn_run_forward(run, enc, &o, &err);
        if (st != ATN_OK) {
            fuzz_check_error(st, &err, NULL);
        } else {
            const atn_capture *cap = atn_run_capture(run);
            atn_trace *tr = NULL;
            st = atn_trace_compute(m, cap, c->n_layers - 1, c->n_heads - 1, n - 1, &tr, &err);
            if (st != ATN_OK)
                fuzz_check_error(st, &err, NULL);
            atn_trace_free(tr);
        }
        atn_run_free(run);
        atn_encoding_free(enc);
    }
    atn_model_free(m);
    return 0;
}

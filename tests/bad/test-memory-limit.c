/* The memory check before a run: a bert-large-shaped model (24 layers, 16 heads, d = 1024,
 * f = 4096) at 4096 tokens needs about 28 GB for its capture and 2.65 GB with heads on
 * demand; a run under a limit neither fits is refused with the numbers, before any weight
 * or activation is touched (the model
 * here has no weights at all, so a run that went ahead would crash).  The figures are
 * worked out below by hand from the capture's buffers, not taken from the engine. */
#include "check.h"
#include "core/model-private.h"

#include <stdint.h>

int main(void) {
    const int64_t L = 24, H = 16, d = 1024, f = 4096, n = 4096;
    atn_model *m = atn_model_alloc(ATN_MODEL_BERT, "bert-large-4096", "");
    atn_config *c = &m->cfg;
    *c = (atn_config){.n_layers = 24, .d_model = 1024, .n_heads = 16, .d_head = 64, .d_ffn = 4096,
                      .act = ATN_ACT_GELU, .ln_eps = 1e-12f, .max_positions = 4096,
                      .vocab_size = 30522, .type_vocab_size = 2, .use_bias = true,
                      .use_layernorm = true, .use_ffn = true, .use_residual = true,
                      .use_embeddings = true};
    atn_error err = {0};
    CHECK(atn_config_validate(c, &err) == ATN_OK);

    /* floats: hidden states (L+1) n d; q, k, v, ctx, attn_out L n d each; attention L H n n;
       one n d scratch row block, the n f feed-forward block, the n x n additive mask and
       the n position ids */
    int64_t floats = (L + 1) * n * d + 5 * L * n * d + L * H * n * n + n * d + n * f + n * n + n;
    CHECK(floats == 7088377856LL);   /* 104857600 + 503316480 + 6442450944 + 4194304 + 16777216 + 16777216 + 4096 */
    atn_run_options o;
    atn_run_options_init(&o);
    size_t need = atn_run_bytes_needed(c, (int32_t)n, &o);
    CHECK_MSG(need == (size_t)floats * 4, "need %zu, expected %lld", need, (long long)floats * 4);

    /* without the attention of every layer and the trace inputs: one layer's attention */
    atn_run_options lean = o;
    lean.keep_attention = false;
    lean.keep_trace_inputs = false;
    int64_t lean_floats = (L + 1) * n * d + 5 * n * d + H * n * n + n * d + n * f + n * n + n;
    CHECK(atn_run_bytes_needed(c, (int32_t)n, &lean) == (size_t)lean_floats * 4);

    /* heads on demand keep Q, K, V, context and output of every layer and one head's n x n
       instead of the attention: L H n n -> n n, the rest as the full capture */
    atn_run_options lazy = o;
    lazy.attention_on_demand = true;
    int64_t lazy_floats = floats - L * H * n * n + n * n;
    CHECK(lazy_floats == 662704128LL);   /* 2.65 GB */
    CHECK(atn_run_bytes_needed(c, (int32_t)n, &lazy) == (size_t)lazy_floats * 4);
    CHECK(o.on_demand_over_budget);   /* on by default: a full capture over the budget goes on demand */

    /* the refusal without heads on demand (a caller that reads capture->attn directly) */
    int32_t *ids = malloc((size_t)n * sizeof *ids);
    for (int64_t i = 0; i < n; i++)
        ids[i] = (int32_t)(i % 1000) + 1000;
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_ids(m, ids, NULL, NULL, (int32_t)n, &enc, &err) == ATN_OK);
    atn_run *run = atn_run_new(m);
    o.memory_limit = (size_t)16 << 30;
    atn_run_options full_only = o;
    full_only.on_demand_over_budget = false;
    atn_status st = atn_run_forward(run, enc, &full_only, &err);
    CHECK(st == ATN_E_NOMEM && err.status == ATN_E_NOMEM);
    CHECK_STR(err.message, "a run of 4096 tokens through 24 layers x 16 heads needs 28.4 GB of memory "
              "(attention alone: 24 x 16 x 4096 x 4096 floats), more than the 17.2 GB allowed");
    CHECK(atn_run_capture(run) == NULL);

    /* by default, under a limit that heads on demand do not fit either (2 GiB < 2.65 GB): refused
       naming both figures (a limit between them would run, and crash here: no weights) */
    o.memory_limit = (size_t)2 << 30;
    err = (atn_error){0};
    st = atn_run_forward(run, enc, &o, &err);
    CHECK(st == ATN_E_NOMEM && err.status == ATN_E_NOMEM);
    CHECK_STR(err.message, "a run of 4096 tokens through 24 layers x 16 heads needs 28.4 GB of memory "
              "(attention alone: 24 x 16 x 4096 x 4096 floats) or 2.7 GB with heads made on demand, more than "
              "the 2.1 GB allowed");
    CHECK(atn_run_capture(run) == NULL);

    /* a size_t-overflowing request is refused too, not wrapped around */
    c->n_layers = 1000;
    c->n_heads = 1024;
    c->d_head = 1;
    c->max_positions = 1 << 30;
    CHECK(atn_run_bytes_needed(c, 1 << 30, &o) == SIZE_MAX);   /* 2^10 x 2^10 x 2^60 floats */

    atn_run_free(run);
    atn_encoding_free(enc);
    free(ids);
    atn_model_free(m);
    return check_summary("test-memory-limit");
}

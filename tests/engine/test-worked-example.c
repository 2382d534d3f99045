/* The worked example of the source article (docs/ARCHITECTURE.md, "The worked example"): 3 tokens, d_model 4,
 * 2 heads, identity projections.  Every number below was computed by hand there. */
#include "check.h"
#include "attnscope.h"

static const float want_out[3][4] = {
    {0.8470f, 0.8722f, 0.2005f, 0.2335f},
    {0.8740f, 0.8432f, 0.2005f, 0.2341f},
    {0.9863f, 0.4986f, 0.1986f, 0.2373f},
};

int main(void) {
    atn_error err = {0};
    atn_model *m = atn_model_open("worked-example", NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return check_summary("worked-example");
    const atn_config *c = atn_model_config(m);
    CHECK(c->n_layers == 1 && c->n_heads == 2 && c->d_model == 4 && c->d_head == 2);
    CHECK(atn_model_toy_n_tokens(m) == 3);
    CHECK_STR(atn_model_toy_token(m, 0), "我");

    atn_encoding *enc;
    CHECK(atn_model_encode_toy(m, NULL, &enc, &err) == ATN_OK);
    atn_run *run = atn_run_new(m);
    CHECK_MSG(atn_run_forward(run, enc, NULL, &err) == ATN_OK, "%s", err.message);
    const atn_capture *cap = atn_run_capture(run);
    CHECK(cap && cap->n == 3);

    /* head 0, query 0: softmax [0.3760, 0.4487, 0.1752] */
    const float *a00 = cap->attn;
    CHECK_NEAR(a00[0], 0.3760, 1e-4);
    CHECK_NEAR(a00[1], 0.4487, 1e-4);
    CHECK_NEAR(a00[2], 0.1752, 1e-4);
    /* the whole output table (W_O = I, so the layer output is the concatenation) */
    const float *out = cap->hidden + 3 * 4;   /* hidden[1] */
    CHECK_ARRAY_NEAR("layer output", out, &want_out[0][0], 12, 1e-4);
    CHECK_ARRAY_NEAR("ctx", cap->ctx, &want_out[0][0], 12, 1e-4);

    /* the trace reproduces the same steps */
    atn_trace *t;
    CHECK_MSG(atn_trace_compute(m, cap, 0, 0, 0, &t, &err) == ATN_OK, "%s", err.message);
    if (t) {
        CHECK_NEAR(t->scores[0], 1.46, 1e-6);
        CHECK_NEAR(t->scores[1], 1.71, 1e-6);
        CHECK_NEAR(t->scores[2], 0.38, 1e-6);
        CHECK_NEAR(t->scale, 0.70710678, 1e-8);
        CHECK_NEAR(t->scaled[0], 1.0324, 1e-4);
        CHECK_NEAR(t->scaled[1], 1.2092, 1e-4);
        CHECK_NEAR(t->scaled[2], 0.2687, 1e-4);
        CHECK_NEAR(t->weights[0], 0.3760, 1e-4);
        CHECK_NEAR(t->weights[1], 0.4487, 1e-4);
        CHECK_NEAR(t->weights[2], 0.1752, 1e-4);
        CHECK_NEAR(t->output[0], 0.8470, 1e-4);
        CHECK_NEAR(t->output[1], 0.8722, 1e-4);
        CHECK_NEAR(t->projected[2], 0.2005, 1e-4);
        CHECK_NEAR(t->projected[3], 0.2335, 1e-4);
        CHECK(t->max_abs_diff < 1e-6);
        atn_trace_free(t);
    }
    /* head 1, query 1: the article printed [0.201, 0.242]; correct is [0.2005, 0.2341] */
    CHECK(atn_trace_compute(m, cap, 0, 1, 1, &t, &err) == ATN_OK);
    if (t) {
        CHECK_NEAR(t->output[0], 0.2005, 1e-4);
        CHECK_NEAR(t->output[1], 0.2341, 1e-4);
        atn_trace_free(t);
    }
    /* out-of-range indices are refused with a message naming the range */
    CHECK(atn_trace_compute(m, cap, 1, 0, 0, &t, &err) == ATN_E_INVALID && strstr(err.message, "layer 1"));
    CHECK(atn_trace_compute(m, cap, 0, 2, 0, &t, &err) == ATN_E_INVALID && strstr(err.message, "head 2"));
    CHECK(atn_trace_compute(m, cap, 0, 0, 3, &t, &err) == ATN_E_INVALID && strstr(err.message, "0..2"));

    /* editing X[0][0] changes the weights (the GUI's editable cells) */
    CHECK(atn_model_toy_set(m, ATN_TOY_X, 0, 0, 0, 1.5f, &err) == ATN_OK);
    CHECK(atn_run_forward(run, enc, NULL, &err) == ATN_OK);
    cap = atn_run_capture(run);
    /* q0 = k0 = [1.5, 1.1]: scores [3.46, 2.71, 1.58] / sqrt 2 -> softmax by hand */
    {
        double s[3] = {3.46 / sqrt(2.0), 2.71 / sqrt(2.0), 1.58 / sqrt(2.0)}, z = 0;
        for (int j = 0; j < 3; j++) z += exp(s[j]);
        for (int j = 0; j < 3; j++) CHECK_NEAR(cap->attn[j], exp(s[j]) / z, 1e-5);
    }
    /* an identity weight becomes explicit when edited, and reads back in textbook orientation */
    float v;
    CHECK(atn_model_toy_get(m, ATN_TOY_WQ, 0, 1, 0, &v, &err) == ATN_OK && v == 0.0f);
    CHECK(atn_model_toy_set(m, ATN_TOY_WQ, 0, 1, 0, 2.0f, &err) == ATN_OK);
    CHECK(atn_model_toy_get(m, ATN_TOY_WQ, 0, 1, 0, &v, &err) == ATN_OK && v == 2.0f);
    CHECK(atn_model_toy_get(m, ATN_TOY_WQ, 0, 0, 0, &v, &err) == ATN_OK && v == 1.0f);
    CHECK(atn_model_toy_set(m, ATN_TOY_X, 0, 3, 0, 1.0f, &err) == ATN_E_INVALID);
    CHECK(atn_run_forward(run, enc, NULL, &err) == ATN_OK);
    cap = atn_run_capture(run);
    /* Q = X W_Q: q0[0] = x0[0]*1 + x0[1]*2 = 1.5 + 2.2 = 3.7 */
    CHECK_NEAR(cap->q[0], 3.7, 1e-5);
    CHECK_NEAR(cap->k[0], 1.5, 1e-6);

    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(m);
    return check_summary("worked-example");
}

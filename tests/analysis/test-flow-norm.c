/* engine/analysis/flow.c and norm-attn.c: attention flow worked by hand on a constructed
 * capture (where it differs from the rollout), then flow and norm-based attention on the
 * demo BERT and demo GPT-2 against tests/analysis/gen_flow_norm.py's numpy figures (written
 * from the papers: its own float64 forward, Edmonds-Karp max-flow, ||alpha f(x)||): flow
 * within 1e-6, norms within 1e-5; cancelling the flow, and the families refused by name. */
#include "analysis.h"
#include "check.h"
#include "common/test-files.h"
#include "common/test-models.h"
#include "fake-capture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double worst_flow, worst_norm;

static void test_flow_by_hand(void) {
    /* H = 1, n = 2.  Layer 0 A = [[1,0],[1,0]]: A'0 = [[1,0],[.5,.5]].  Layer 1 A = [[0,1],[0,1]]:
     * A'1 = [[.5,.5],[0,1]].  From output 0: to input 0 through (1,0) 0.5 and through (1,1)
     * min(.5,.5) = 0.5, so 1; to input 1 only through (1,1)->(0,1): 0.5.  Row 0 = [1, .5] / 1.5.
     * From output 1 (only the edge to (1,1), capacity 1): 0.5 each way.  The rollout would
     * give row 0 = [.75, .25]. */
    static const char *const toks[2] = {"a", "b"};
    static fake f;
    fake_init(&f, 2, 1, 2, toks);
    float l0[4] = {1, 0, 1, 0}, l1[4] = {0, 1, 0, 1};
    memcpy(head_of(&f, 0, 0), l0, sizeof l0);
    memcpy(head_of(&f, 1, 0), l1, sizeof l1);
    float r[4];
    CHECK(atn_flow_compute(&f.cap, -1, r, NULL, NULL, NULL) == ATN_OK);
    float want[4] = {2.0f / 3, 1.0f / 3, 0.5f, 0.5f};
    CHECK_ARRAY_NEAR("flow by hand", r, want, 4, 1e-7);
    CHECK(atn_flow_compute(&f.cap, 0, r, NULL, NULL, NULL) == ATN_OK);
    float want0[4] = {1.0f, 0.0f, 0.5f, 0.5f};
    CHECK_ARRAY_NEAR("flow through layer 0", r, want0, 4, 1e-7);
    atn_error err = {0};
    CHECK(atn_flow_compute(&f.cap, 2, r, NULL, NULL, &err) == ATN_E_INVALID && strstr(err.message, "layer 2"));
    CHECK(atn_flow_compute(NULL, -1, r, NULL, NULL, &err) == ATN_E_INVALID);
}

static int calls;
static bool stop_at_third(double fraction, atn_stage stage, void *user) {
    (void)fraction, (void)user;
    CHECK(stage == ATN_STAGE_FLOW);
    return ++calls < 3;
}

/* |engine - reference| <= tol, or tol relative for a reference above 1 (norms reach ~3 in
 * hidden units; the float32 forward's V carries ~3e-6 relative error over four layers) */
static void compare(const char *what, const float *got, const cJSON *rows, int32_t n, double tol, double *worst) {
    int32_t bad = 0;
    double w = 0;
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++) {
            double want = cJSON_GetArrayItem(cJSON_GetArrayItem(rows, i), j)->valuedouble;
            double diff = fabs((double)got[(size_t)i * n + j] - want);
            if (!(diff <= tol * fmax(1.0, fabs(want))) && bad++ < 3)
                fprintf(stderr, "%s [%d][%d]: engine %.9g, reference %.9g\n", what, i, j, got[(size_t)i * n + j], want);
            if (!(diff / fmax(1.0, fabs(want)) <= w))
                w = diff / fmax(1.0, fabs(want));
        }
    CHECK_MSG(bad == 0 && cJSON_GetArraySize(rows) == n, "%s: %d cells off by more than %g (worst %.3g)", what, bad,
              tol, w);
    if (w > *worst)
        *worst = w;
}

static void test_case(const cJSON *c) {
    const char *mname = cJSON_GetObjectItem(c, "model")->valuestring;
    char folder[4096], rel[256];
    snprintf(rel, sizeof rel, "data/models/%s", mname);
    source_path(folder, sizeof folder, rel);
    atn_error err = {0};
    atn_model *m = atn_model_open(folder, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s: %s", folder, err.message);
    if (!m)
        return;
    int32_t n = 0;
    int32_t *ids = json_ints(cJSON_GetObjectItem(c, "ids"), &n);
    atn_encoding *enc = NULL;
    atn_run *run = atn_run_new(m);
    CHECK_MSG(atn_model_encode_ids(m, ids, NULL, NULL, n, &enc, &err) == ATN_OK, "%s: %s", mname, err.message);
    if (enc && run && atn_run_forward(run, enc, NULL, &err) == ATN_OK) {
        const atn_capture *cap = atn_run_capture(run);
        int32_t L = cap->n_layers, H = cap->n_heads;
        CHECK(L == cJSON_GetObjectItem(c, "n_layers")->valueint && H == cJSON_GetObjectItem(c, "n_heads")->valueint);
        float *r = malloc((size_t)n * n * sizeof *r);
        char what[256];
        CHECK(atn_flow_compute(cap, -1, r, NULL, NULL, &err) == ATN_OK);
        snprintf(what, sizeof what, "%s flow", mname);
        compare(what, r, cJSON_GetObjectItem(c, "flow"), n, 1e-6, &worst_flow);
        CHECK(atn_flow_compute(cap, 0, r, NULL, NULL, &err) == ATN_OK);
        snprintf(what, sizeof what, "%s flow through layer 0", mname);
        compare(what, r, cJSON_GetObjectItem(c, "flow_layer0"), n, 1e-6, &worst_flow);
        calls = 0;
        CHECK(atn_flow_compute(cap, -1, r, stop_at_third, NULL, &err) == ATN_E_CANCELLED && calls == 3);
        const cJSON *norm = cJSON_GetObjectItem(c, "norm"), *sum = cJSON_GetObjectItem(c, "norm_sum");
        for (int32_t l = 0; l < L; l++) {
            for (int32_t h = 0; h < H; h++) {
                CHECK(atn_norm_attention_compute(m, cap, l, h, r, &err) == ATN_OK);
                snprintf(what, sizeof what, "%s norm layer %d head %d", mname, l, h);
                compare(what, r, cJSON_GetArrayItem(cJSON_GetArrayItem(norm, l), h), n, 1e-5, &worst_norm);
            }
            CHECK(atn_norm_attention_compute(m, cap, l, -1, r, &err) == ATN_OK);
            snprintf(what, sizeof what, "%s norm layer %d, heads summed", mname, l);
            compare(what, r, cJSON_GetArrayItem(sum, l), n, 1e-5, &worst_norm);
        }
        CHECK(atn_norm_attention_compute(m, cap, L, 0, r, &err) == ATN_E_INVALID && strstr(err.message, "layer"));
        CHECK(atn_norm_attention_compute(m, cap, 0, H, r, &err) == ATN_E_INVALID && strstr(err.message, "head"));
        free(r);
    } else {
        CHECK_MSG(0, "%s: %s", mname, err.message);
    }
    atn_run_free(run);
    atn_encoding_free(enc);
    free(ids);
    atn_model_free(m);
}

/* A family whose attention is not (x W_V + b_V) W_O per head as written: refused by name. */
static void test_refused(void) {
    char folder[4096];
    atn_error err = {0};
    atn_model *m = atn_model_open(hf_model_path(folder, sizeof folder, "llama-f32"), NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s: %s", folder, err.message);
    if (!m)
        return;
    CHECK(!atn_norm_attention_supported(m));
    int32_t ids[3] = {1, 2, 3};
    atn_encoding *enc = NULL;
    atn_run *run = atn_run_new(m);
    if (atn_model_encode_ids(m, ids, NULL, NULL, 3, &enc, &err) == ATN_OK &&
        atn_run_forward(run, enc, NULL, &err) == ATN_OK) {
        float r[9];
        CHECK(atn_norm_attention_compute(m, atn_run_capture(run), 0, 0, r, &err) == ATN_E_UNSUPPORTED);
        CHECK_MSG(strstr(err.message, "Llama") != NULL, "message: %s", err.message);
    } else {
        CHECK_MSG(0, "llama-f32: %s", err.message);
    }
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(m);
}

int main(void) {
    test_flow_by_hand();
    char path[4096];
    cJSON *j = read_json(source_path(path, sizeof path, "tests/analysis/fixtures/flow-norm.json"));
    CHECK(j != NULL);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "cases")) test_case(c);
    cJSON_Delete(j);
    test_refused();
    printf("worst |engine - numpy| / max(1, |numpy|): flow %.3g, norm %.3g\n", worst_flow, worst_norm);
    return check_summary("flow-norm");
}

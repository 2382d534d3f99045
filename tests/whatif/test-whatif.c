/* The what-if lab against an independent torch reference (tests/whatif/gen_whatif.py):
 * every intervention on BERT (f32; odd3-relu with 3 heads for ALiBi's rule for a head count
 * that is not a power of two) and RoBERTa (roberta-f32), attention and hidden states to
 * 1e-4, plain and padded inputs.  Also: ALiBi's slopes checked by hand for 8 and 12 heads,
 * the trace recomputes each changed head (mask, ALiBi row, temperature, head gate) to the
 * captured probabilities, AUTO falls back to the CPU with the reason for the per-head
 * terms the CUDA backend lacks, and atn_interventions_check refuses bad values. */
#include "check.h"
#include "common/test-files.h"
#include "common/test-models.h"
#include "core/model-private.h"
#include "analysis.h"
#include "forward/encoder.h"

#include <cjson/cJSON.h>
#include <float.h>
#include <math.h>
#include <stdint.h>

static char root[2048];
static double worst_attn, worst_hidden;   /* the largest |engine - torch| seen, printed at the end */

static void track(double *worst, const float *a, const float *b, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (fabs((double)a[i] - b[i]) > *worst)
            *worst = fabs((double)a[i] - b[i]);
}

static void test_slopes_by_hand(void) {
    float s[16];
    /* 8 heads: 2^-1 .. 2^-8 (Press et al., section 3) */
    atn_alibi_slopes(8, s);
    const double want8[8] = {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625};
    for (int i = 0; i < 8; i++)
        CHECK_NEAR(s[i], want8[i], 1e-9);
    /* 12 heads: the 8 above, then every other slope of 16 heads (2^-0.5, 2^-1.5, ...) */
    atn_alibi_slopes(12, s);
    const double want12[12] = {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625,
                               0.70710678, 0.35355339, 0.17677670, 0.08838835};
    for (int i = 0; i < 12; i++)
        CHECK_NEAR(s[i], want12[i], 1e-7);
}

/* The reference's get_slopes for several head counts (cases.json "slopes"). */
static void test_slopes_reference(const cJSON *slopes) {
    for (const cJSON *e = slopes->child; e; e = e->next) {
        int h = atoi(e->string), i = 0;
        float s[64];
        atn_alibi_slopes(h, s);
        for (const cJSON *v = e->child; v; v = v->next, i++)
            CHECK_MSG(fabs(s[i] - v->valuedouble) < 1e-7 * v->valuedouble, "slopes(%d)[%d] %g vs %g", h, i,
                      (double)s[i], v->valuedouble);
        CHECK(i == h);
    }
}

static void test_case(const char *mname, atn_model *m, const cJSON *c) {
    const char *cname = cJSON_GetObjectItem(c, "name")->valuestring;
    const atn_config *cfg = atn_model_config(m);
    int32_t n, n2, n3, ns;
    int32_t *ids = json_ints(cJSON_GetObjectItem(c, "ids"), &n);
    int32_t *types = json_ints(cJSON_GetObjectItem(c, "type_ids"), &n2);
    int32_t *mask = json_ints(cJSON_GetObjectItem(c, "mask"), &n3);
    int32_t *special = json_ints(cJSON_GetObjectItem(c, "special"), &ns);
    const cJSON *j = cJSON_GetObjectItem(c, "interventions");
    atn_interventions iv;
    atn_interventions_init(&iv);
    uint8_t *off = calloc((size_t)cfg->n_layers * cfg->n_heads, 1);
    const cJSON *ho = cJSON_GetObjectItem(j, "heads_off");
    for (const cJSON *p = ho ? ho->child : NULL; p; p = p->next)
        off[cJSON_GetArrayItem(p, 0)->valueint * cfg->n_heads + cJSON_GetArrayItem(p, 1)->valueint] = 1;
    if (ho)
        iv.heads_off = off;
    const cJSON *x;
    if ((x = cJSON_GetObjectItem(j, "head_mode")))
        iv.head_mode = strcmp(x->valuestring, "uniform") ? ATN_HEAD_ZERO : ATN_HEAD_UNIFORM;
    iv.causal = cJSON_IsTrue(cJSON_GetObjectItem(j, "causal"));
    if ((x = cJSON_GetObjectItem(j, "window")))
        iv.window = x->valueint;
    int32_t *glob = json_ints(cJSON_GetObjectItem(j, "global"), &iv.n_global);
    int32_t *hide = json_ints(cJSON_GetObjectItem(j, "hide"), &iv.n_hide);
    iv.global_tokens = glob, iv.hide_tokens = hide;
    if ((x = cJSON_GetObjectItem(j, "strided")))
        iv.strided = x->valueint;
    iv.alibi = cJSON_IsTrue(cJSON_GetObjectItem(j, "alibi"));
    iv.no_positions = cJSON_IsTrue(cJSON_GetObjectItem(j, "no_positions"));
    if ((x = cJSON_GetObjectItem(j, "shuffle"))) {
        iv.shuffle = true;
        iv.shuffle_seed = (uint64_t)x->valuedouble;
    }
    if ((x = cJSON_GetObjectItem(j, "temperature")))
        iv.temperature = (float)x->valuedouble;
    uint8_t *layers = calloc((size_t)cfg->n_layers, 1);   /* mask_layers: the layers listed */
    const cJSON *ml = cJSON_GetObjectItem(j, "mask_layers");
    for (const cJSON *p = ml ? ml->child : NULL; p; p = p->next)
        layers[p->valueint] = 1;
    if (ml)
        iv.mask_layers = layers;
    CHECK_MSG(!atn_interventions_none(&iv), "%s/%s: the case changes something", mname, cname);

    atn_error err = {0};
    atn_encoding *enc = NULL;
    CHECK_MSG(atn_model_encode_ids(m, ids, types, mask, n, &enc, &err) == ATN_OK, "%s: %s", mname, err.message);
    for (int32_t i = 0; enc && i < n; i++)   /* the reference's idea of the words the shuffle moves */
        CHECK_MSG(!mask[i] || enc->tokens[i].special == (special[i] != 0), "%s/%s: token %d special %d", mname, cname, i,
                  enc->tokens[i].special);
    atn_run *run = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    o.interventions = &iv;
    o.device = ATN_DEVICE_AUTO;   /* no GPU here, or one that refuses the per-head terms: the CPU */
    if (enc && atn_run_forward(run, enc, &o, &err) == ATN_OK) {
        const atn_capture *cap = atn_run_capture(run);
        char what[256], path[4096];
        float *want;
        int64_t shape[4];
        int nd;
        snprintf(path, sizeof path, "%s/fixtures/%s-%s-attn.npy", root, mname, cname);
        if (atn_npy_read_f32(path, &want, shape, &nd, 4, &err) == ATN_OK) {
            snprintf(what, sizeof what, "%s/%s attention", mname, cname);
            CHECK(nd == 4 && shape[2] == n);
            CHECK_ARRAY_NEAR(what, cap->attn, want, (size_t)cfg->n_layers * cfg->n_heads * n * n, 1e-4);
            track(&worst_attn, cap->attn, want, (size_t)cfg->n_layers * cfg->n_heads * n * n);
            free(want);
        } else {
            CHECK_MSG(0, "%s", err.message);
        }
        snprintf(path, sizeof path, "%s/fixtures/%s-%s-hidden.npy", root, mname, cname);
        if (atn_npy_read_f32(path, &want, shape, &nd, 4, &err) == ATN_OK) {
            snprintf(what, sizeof what, "%s/%s hidden states", mname, cname);
            CHECK_ARRAY_NEAR(what, cap->hidden, want, (size_t)(cfg->n_layers + 1) * n * cfg->d_model, 1e-4);
            track(&worst_hidden, cap->hidden, want, (size_t)(cfg->n_layers + 1) * n * cfg->d_model);
            free(want);
        } else {
            CHECK_MSG(0, "%s", err.message);
        }
        if (ml) {   /* two masks: each layer's the one its softmax added */
            CHECK_MSG(cap->mask_base && cap->mask_layers, "%s/%s: the capture keeps both masks", mname, cname);
            for (int32_t l = 0; cap->mask_layers && l < cfg->n_layers; l++) {
                CHECK(cap->mask_layers[l] == layers[l]);
                const float *lm = atn_capture_layer_mask(cap, l);
                CHECK(lm == (layers[l] ? cap->mask_add : cap->mask_base));
                for (int32_t q = 0; lm && q < n; q++)   /* the base mask hides padding alone */
                    for (int32_t k = 0; !layers[l] && k < n; k++)
                        CHECK(lm[(size_t)q * n + k] == (mask[k] ? 0.0f : -FLT_MAX));
            }
            CHECK(atn_capture_layer_mask(cap, -1) == NULL && atn_capture_layer_mask(cap, cfg->n_layers) == NULL);
        } else {
            CHECK(!cap->mask_base && !cap->mask_layers && atn_capture_layer_mask(cap, 0) == cap->mask_add);
        }
        /* the trace follows every head of the last layer (of every layer with mask_layers)
           for two queries */
        for (int32_t tl = ml ? 0 : cfg->n_layers - 1; tl < cfg->n_layers; tl++)
        for (int32_t h = 0; h < cfg->n_heads; h++)
            for (int32_t q = 1; q < n; q += n - 2) {
                atn_trace *t = NULL;
                CHECK(atn_trace_compute(m, cap, tl, h, q, &t, &err) == ATN_OK);
                if (!t)
                    continue;
                CHECK_MSG(t->max_abs_diff < 2e-6, "%s/%s trace L%d %d/%d: %g", mname, cname, tl, h, q,
                          (double)t->max_abs_diff);
                CHECK(t->head_off == (iv.heads_off && off[tl * cfg->n_heads + h]
                                          ? (iv.head_mode == ATN_HEAD_UNIFORM ? 2 : 1) : 0));
                CHECK_NEAR(t->temperature, iv.temperature, 0);
                if (iv.alibi) {
                    float s[64];
                    atn_alibi_slopes(cfg->n_heads, s);
                    CHECK_NEAR(t->bias_term[0], -(double)s[h] * q, 1e-12);
                } else {
                    CHECK(t->bias_term[0] == 0);
                }
                atn_trace_free(t);
            }
        /* every what-if term reaches the GPU (the CUDA module's gated softmax): a run that
           fell back to the CPU says why (here, a machine without a GPU) */
        const char *why = atn_run_fallback_reason(run);
        if (atn_run_device_used(run) == ATN_DEVICE_CPU)
            CHECK_MSG(why && *why, "%s/%s: fell back to the CPU without a reason", mname, cname);
        if (iv.shuffle) {   /* a permutation of the words' positions; the special ones stay */
            int32_t moved = 0;
            for (int32_t i = 0; i < n; i++) {
                if (special[i])
                    CHECK(cap->pos_ids[i] == (strstr(mname, "roberta") ? i + 2 : i));
                else if (mask[i])
                    moved += cap->pos_ids[i] != (strstr(mname, "roberta") ? i + 2 : i);
            }
            CHECK_MSG(moved >= 2, "%s/%s: the shuffle moved %d positions", mname, cname, moved);
        }
    } else {
        CHECK_MSG(0, "%s/%s: run failed: %s", mname, cname, err.message);
    }
    atn_run_free(run);
    atn_encoding_free(enc);
    free(ids), free(types), free(mask), free(special), free(off), free(glob), free(hide), free(layers);
}

/* The one parser of layer lists (--mask-layers, the What-if page's entry). */
static void test_layer_list(void) {
    uint8_t mark[6] = {0};
    atn_error err = {0};
    CHECK(atn_parse_layer_list("0,2-3", 4, mark, &err) == ATN_OK);
    CHECK(mark[0] == 1 && mark[1] == 0 && mark[2] == 1 && mark[3] == 1 && mark[4] == 0);
    memset(mark, 0, sizeof mark);
    CHECK(atn_parse_layer_list("5,1-1,0-5", 6, mark, &err) == ATN_OK);
    CHECK(mark[0] && mark[1] && mark[2] && mark[3] && mark[4] && mark[5]);
    const struct { const char *text, *msg; } bad[] = {
        {"", "no layers given"},      {"4", "layer 4 is outside the model's layers 0..3"},
        {"-1", "layer -1 is outside"}, {"1-9", "layer 9 is outside"},
        {"3-1", "\"3-1\" runs backwards"}, {"0,", "\"0,\" is not a list"},
        {",0", "\",0\" is not a list"}, {"0-", "\"0-\" is not a list"},
        {"0:1", "\"0:1\" is not a list"}, {"1 2", "\"1 2\" is not a list"},
        {"99999999999999999999", "is not a list"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(mark, 0, sizeof mark);
        CHECK_MSG(atn_parse_layer_list(bad[i].text, 4, mark, &err) == ATN_E_INVALID && strstr(err.message, bad[i].msg),
                  "layer list \"%s\": %s", bad[i].text, err.message);
    }
    CHECK(atn_parse_layer_list(NULL, 4, mark, &err) == ATN_E_INVALID);
}

static void test_checks(atn_model *m) {
    atn_interventions iv;
    atn_error err = {0};
    atn_interventions_init(&iv);
    CHECK(atn_interventions_none(&iv) && atn_interventions_none(NULL));
    CHECK(atn_interventions_check(&iv, 2, 4, 8, &err) == ATN_OK);
    iv.window = -2;
    CHECK(atn_interventions_check(&iv, 2, 4, 8, &err) == ATN_E_INVALID && strstr(err.message, "window"));
    atn_interventions_init(&iv);
    int32_t g[1] = {0};
    iv.global_tokens = g, iv.n_global = 1;
    CHECK(atn_interventions_check(&iv, 2, 4, 8, &err) == ATN_E_INVALID && strstr(err.message, "global_tokens"));
    iv.window = 1, g[0] = 8;
    CHECK(atn_interventions_check(&iv, 2, 4, 8, &err) == ATN_E_INVALID && strstr(err.message, "token 8"));
    atn_interventions_init(&iv);
    iv.temperature = -1;
    CHECK(atn_interventions_check(&iv, 2, 4, 8, &err) == ATN_E_INVALID && strstr(err.message, "temperature"));
    iv.temperature = NAN;
    CHECK(atn_interventions_check(&iv, 2, 4, 8, &err) == ATN_E_INVALID);
    atn_interventions_init(&iv);
    iv.strided = -3;
    CHECK(atn_interventions_check(&iv, 2, 4, 8, &err) == ATN_E_INVALID && strstr(err.message, "strided"));
    /* atn_run_forward refuses them too, and leaves no capture */
    int32_t ids[3] = {2, 15, 3}, hide[1] = {5};
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_ids(m, ids, NULL, NULL, 3, &enc, &err) == ATN_OK);
    atn_interventions_init(&iv);
    iv.hide_tokens = hide, iv.n_hide = 1;
    atn_run_options o;
    atn_run_options_init(&o);
    o.interventions = &iv;
    atn_run *run = atn_run_new(m);
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_E_INVALID && strstr(err.message, "hide_tokens"));
    CHECK(atn_run_capture(run) == NULL);
    /* hiding every key of a row leaves that row uniform, as the padding mask does (no NaN) */
    int32_t all[3] = {0, 1, 2};
    iv.hide_tokens = all, iv.n_hide = 3;
    iv.temperature = 0.25f;
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_OK);
    const atn_capture *cap = atn_run_capture(run);
    bool finite = cap != NULL;
    for (size_t i = 0; cap && i < (size_t)cap->n_layers * cap->n_heads * 9; i++)
        finite &= isfinite(cap->attn[i]);
    CHECK_MSG(finite, "every key hidden at T = 0.25: the probabilities stay finite");
    atn_run_free(run);
    atn_encoding_free(enc);
}

/* atn_capture_diff recomputed from the two captures with its definition written again:
 * JS distance = sqrt(0.5 KL(p||m) + 0.5 KL(q||m)) / ln 2 inside the root, per real row. */
static void test_diff(atn_model *m) {
    int32_t ids[8] = {2, 15, 29, 13, 3, 33, 12, 3}, types[8] = {0, 0, 0, 0, 0, 1, 1, 1}, mask[8] = {1, 1, 1, 1, 1, 1, 0, 0};
    atn_error err = {0};
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_ids(m, ids, types, mask, 8, &enc, &err) == ATN_OK);
    const atn_config *c = atn_model_config(m);
    uint8_t *off = calloc((size_t)c->n_layers * c->n_heads, 1);
    off[1] = 1;   /* layer 0 head 1 zeroed */
    atn_interventions iv;
    atn_interventions_init(&iv);
    iv.heads_off = off;
    iv.window = 2;
    atn_run *ra = atn_run_new(m), *rb = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    CHECK(atn_run_forward(ra, enc, &o, &err) == ATN_OK);
    o.interventions = &iv;
    CHECK(atn_run_forward(rb, enc, &o, &err) == ATN_OK);
    const atn_capture *a = atn_run_capture(ra), *b = atn_run_capture(rb);
    atn_capture_diff *d = NULL;
    CHECK(atn_capture_diff_compute(a, b, &d, &err) == ATN_OK);
    atn_capture_diff_free(d);
    CHECK(atn_capture_diff_compute(a, NULL, &d, &err) == ATN_E_INVALID && d == NULL);
    CHECK(atn_capture_diff_compute(a, b, &d, &err) == ATN_OK);
    int32_t n = 8, H = c->n_heads, dm = c->d_model;
    for (int32_t l = 0; d && l < c->n_layers; l++)
        for (int32_t h = 0; h < H; h++) {
            const float *pa = a->attn + ((size_t)l * H + h) * n * n, *pb = b->attn + ((size_t)l * H + h) * n * n;
            double js = 0, mx = 0;
            for (int32_t i = 0; i < 6; i++) {   /* the 6 real query rows */
                double kl1 = 0, kl2 = 0, zb = 0;
                for (int32_t j = 0; j < n; j++)
                    zb += pb[i * n + j];
                if (zb == 0) {   /* the zeroed head: distance 1 by definition */
                    js += 1;
                    continue;
                }
                for (int32_t j = 0; j < n; j++) {
                    double p = pa[i * n + j], q = pb[i * n + j], mm = (p + q) / 2;
                    if (p > 0)
                        kl1 += p * log(p / mm);
                    if (q > 0)
                        kl2 += q * log(q / mm);
                }
                js += sqrt(fmax(0, (kl1 + kl2) / 2 / log(2.0)));
            }
            for (int32_t k = 0; k < n * n; k++)
                mx = fmax(mx, fabs(pa[k] - pb[k]));
            CHECK_NEAR(d->js[l * H + h], js / 6, 1e-6);
            CHECK_NEAR(d->max_abs[l * H + h], mx, 1e-7);
        }
    CHECK(d && d->js[1] == 1.0f);   /* the zeroed head */
    for (int32_t l = 0; d && l <= c->n_layers; l++) {
        double s = 0;
        for (int32_t i = 0; i < 6; i++) {
            const float *x = a->hidden + ((size_t)l * n + i) * dm, *y = b->hidden + ((size_t)l * n + i) * dm;
            double xy = 0, xx = 0, yy = 0;
            for (int32_t k = 0; k < dm; k++)
                xy += x[k] * (double)y[k], xx += x[k] * (double)x[k], yy += y[k] * (double)y[k];
            s += 1 - xy / sqrt(xx) / sqrt(yy);
        }
        CHECK_NEAR(d->drift[l], s / 6, 1e-6);
    }
    CHECK(d && d->drift[0] == 0 && d->drift[1] > 1e-4);   /* the embeddings are the same; layer 0 moves */
    atn_capture_diff_free(d);
    atn_run_free(ra);
    atn_run_free(rb);
    atn_encoding_free(enc);
    free(off);
}

/* atn_predict_log_prob agrees with atn_predict_position's probabilities. */
static void test_log_prob(void) {
    char path[4096];
    hf_model_path(path, sizeof path, "mlm");
    atn_error err = {0};
    atn_model *m = atn_model_open(path, NULL, NULL, &err);
    CHECK_MSG(m, "%s", err.message);
    if (!m)
        return;
    int32_t ids[5] = {2, 15, 4, 13, 3};
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_ids(m, ids, NULL, NULL, 5, &enc, &err) == ATN_OK);
    atn_run *r = atn_run_new(m);
    CHECK(atn_run_forward(r, enc, NULL, &err) == ATN_OK);
    atn_prediction top[3];
    CHECK(atn_predict_position(m, atn_run_capture(r), 2, 3, top, &err) == ATN_OK);
    for (int k = 0; k < 3; k++) {
        double lp = 0;
        CHECK(atn_predict_log_prob(m, atn_run_capture(r), 2, top[k].id, &lp, &err) == ATN_OK);
        CHECK_NEAR(exp(lp), top[k].prob, 1e-6);
    }
    double lp;
    CHECK(atn_predict_log_prob(m, atn_run_capture(r), 2, 1 << 20, &lp, &err) == ATN_E_INVALID);
    atn_run_free(r);
    atn_encoding_free(enc);
    atn_model_free(m);
}

/* atn_predict_next_log_prob agrees with atn_predict_next's probabilities (GPT-2), and is
 * refused for a model that is not causal. */
static void test_next_log_prob(void) {
    char path[4096];
    hf_model_path(path, sizeof path, "gpt2-f32");
    atn_error err = {0};
    atn_model *m = atn_model_open(path, NULL, NULL, &err);
    CHECK_MSG(m, "%s", err.message);
    if (!m)
        return;
    int32_t ids[5] = {5, 17, 9, 30, 41};
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_ids(m, ids, NULL, NULL, 5, &enc, &err) == ATN_OK);
    atn_run *r = atn_run_new(m);
    CHECK(atn_run_forward(r, enc, NULL, &err) == ATN_OK);
    for (int32_t pos = 0; pos < 5; pos += 2) {
        atn_prediction top[4];
        CHECK(atn_predict_next(m, atn_run_capture(r), pos, 4, top, &err) == ATN_OK);
        for (int k = 0; k < 4; k++) {
            double lp = 0;
            CHECK(atn_predict_next_log_prob(m, atn_run_capture(r), pos, top[k].id, &lp, &err) == ATN_OK);
            CHECK_NEAR(exp(lp), top[k].prob, 1e-6);
        }
    }
    double lp;
    CHECK(atn_predict_next_log_prob(m, atn_run_capture(r), 1, 64, &lp, &err) == ATN_E_INVALID);
    CHECK(atn_predict_next_log_prob(m, atn_run_capture(r), 5, 1, &lp, &err) == ATN_E_INVALID);
    atn_run_free(r);
    atn_encoding_free(enc);
    atn_model_free(m);
    atn_model *bert = atn_model_open("demo", NULL, NULL, &err);
    CHECK(bert);
    if (bert) {
        atn_run *rb = atn_run_new(bert);
        atn_encoding *eb = NULL;
        CHECK(atn_model_encode(bert, "the cat", NULL, &eb, &err) == ATN_OK);
        CHECK(atn_run_forward(rb, eb, NULL, &err) == ATN_OK);
        CHECK(atn_predict_next_log_prob(bert, atn_run_capture(rb), 1, 5, &lp, &err) == ATN_E_UNSUPPORTED);
        atn_run_free(rb);
        atn_encoding_free(eb);
        atn_model_free(bert);
    }
}

/* Causal head importance (next-token loss) on gpt2-f32 against gen_importance_gpt2.py's
 * float64 torch figures (HF head_mask zeroing), with and without reusing the lower layers:
 * the base loss, each head's loss change switched off alone and kept alone, to 1e-4. */
static void test_importance_causal(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/fixtures/importance-gpt2.json", root);
    cJSON *j = read_json(path);
    CHECK(j);
    if (!j)
        return;
    hf_model_path(path, sizeof path, "gpt2-f32");
    atn_error err = {0};
    atn_model *m = atn_model_open(path, NULL, NULL, &err);
    CHECK_MSG(m, "%s", err.message);
    if (!m) {
        cJSON_Delete(j);
        return;
    }
    const cJSON *sl = cJSON_GetObjectItem(j, "sentences");
    int32_t n = cJSON_GetArraySize(sl);
    atn_encoding **enc = calloc((size_t)n, sizeof *enc);
    for (int32_t s = 0; s < n; s++) {
        const cJSON *o = cJSON_GetArrayItem(sl, s), *ids = cJSON_GetObjectItem(o, "ids");
        const cJSON *mk = cJSON_GetObjectItem(o, "mask"), *t = cJSON_GetObjectItem(o, "text");
        int32_t k = cJSON_GetArraySize(ids), idv[64], mv[64];
        for (int32_t i = 0; i < k && i < 64; i++)
            idv[i] = cJSON_GetArrayItem(ids, i)->valueint, mv[i] = cJSON_GetArrayItem(mk, i)->valueint;
        if (t) {   /* a text line, as the corpus gives it: the same ids as the fixture's */
            CHECK(atn_model_encode(m, t->valuestring, NULL, &enc[s], &err) == ATN_OK);
            CHECK(enc[s] && enc[s]->n == k);
            for (int32_t i = 0; enc[s] && i < k && i < enc[s]->n; i++)
                CHECK(enc[s]->ids[i] == idv[i]);
        } else {
            CHECK(atn_model_encode_ids(m, idv, NULL, mv, k, &enc[s], &err) == ATN_OK);
        }
    }
    int32_t L = cJSON_GetObjectItem(j, "layers")->valueint, H = cJSON_GetObjectItem(j, "heads")->valueint;
    double worst = 0;
    for (int reuse = 0; reuse < 2; reuse++) {
        atn_importance *imp = NULL;
        CHECK_MSG(atn_importance_compute(m, enc, n, 0.15, 7, ATN_HEAD_ZERO, reuse, NULL, NULL, NULL, &imp, &err) ==
                  ATN_OK, "%s", err.message);
        if (!imp)
            continue;
        CHECK(imp->next_token);
        CHECK(imp->n_layers == L && imp->n_heads == H);
        CHECK(imp->masked == cJSON_GetObjectItem(j, "predicted")->valueint);
        CHECK(imp->sentences == n);
        CHECK_NEAR(imp->base_loss, cJSON_GetObjectItem(j, "base_loss")->valuedouble, 1e-4);
        const cJSON *off = cJSON_GetObjectItem(j, "off_delta"), *keep = cJSON_GetObjectItem(j, "keep_delta");
        for (int32_t l = 0; l < L; l++)
            for (int32_t h = 0; h < H; h++) {
                double want_off = cJSON_GetArrayItem(cJSON_GetArrayItem(off, l), h)->valuedouble;
                double want_keep = cJSON_GetArrayItem(cJSON_GetArrayItem(keep, l), h)->valuedouble;
                CHECK_NEAR(imp->off_delta[l * H + h], want_off, 1e-4);
                CHECK_NEAR(imp->keep_delta[l * H + h], want_keep, 1e-4);
                worst = fmax(worst, fmax(fabs(imp->off_delta[l * H + h] - want_off),
                                         fabs(imp->keep_delta[l * H + h] - want_keep)));
            }
        atn_importance_free(imp);
    }
    printf("# causal importance vs torch: largest |difference| %.3g nats\n", worst);
    for (int32_t s = 0; s < n; s++)
        atn_encoding_free(enc[s]);
    free(enc);
    atn_model_free(m);
    cJSON_Delete(j);
}

/* The long-sequence cost: counts against closed forms worked by hand. */
static void test_cost(void) {
    atn_error err = {0};
    atn_attention_cost c;
    CHECK(atn_attention_cost_compute(512, 12, 12, 64, 32, NULL, &c, &err) == ATN_OK);
    CHECK(c.cells_head == 262144 && c.kept_head == 262144);   /* the articles' 262,144 at 512 */
    CHECK(c.bytes_head == 1048576 && c.bytes_layer == 12 * 1048576LL && c.bytes_capture == 144 * 1048576LL);
    CHECK(c.bytes_batch == 32 * 144 * 1048576LL);
    CHECK_NEAR(c.flops_dense_layer, 4.0 * 262144 * 64 * 12, 0);
    atn_interventions iv;
    atn_interventions_init(&iv);
    iv.causal = true;   /* n (n + 1) / 2 */
    CHECK(atn_attention_cost_compute(512, 12, 12, 64, 32, &iv, &c, &err) == ATN_OK);
    CHECK(c.kept_head == 512 * 513 / 2);
    CHECK_NEAR(c.flops_kept_layer, 4.0 * (512 * 513 / 2) * 64 * 12, 0);
    CHECK(c.kept_bytes_capture == 4LL * (512 * 513 / 2) * 144);
    atn_interventions_init(&iv);
    iv.window = 64;   /* n + 2 sum_{d=1..w} (n - d) */
    int64_t band = 512 + 2 * (64 * 512 - 64 * 65 / 2);
    CHECK(atn_attention_cost_compute(512, 12, 12, 64, 32, &iv, &c, &err) == ATN_OK);
    CHECK(c.kept_head == band);
    int32_t g[2] = {0, 100};   /* Longformer: each global token's row and column fill up */
    iv.global_tokens = g, iv.n_global = 1;
    CHECK(atn_attention_cost_compute(512, 12, 12, 64, 32, &iv, &c, &err) == ATN_OK);
    CHECK(c.kept_head == band + 2 * (512 - 65));
    iv.n_global = 2;   /* token 100's band is full width (129): 383 more in its row and column, the pair counted once */
    CHECK(atn_attention_cost_compute(512, 12, 12, 64, 32, &iv, &c, &err) == ATN_OK);
    CHECK(c.kept_head == band + 2 * (512 - 65) + 2 * (512 - 129) - 2);
    atn_interventions_init(&iv);
    iv.strided = 4;   /* n = 8: |i-j| < 4 or a multiple of 4; by distance d, 2 (n - d) cells */
    CHECK(atn_attention_cost_compute(8, 1, 1, 1, 1, &iv, &c, &err) == ATN_OK);
    CHECK(c.kept_head == 8 + 2 * (7 + 6 + 5 + 4));   /* d = 1, 2, 3, 4; 5..7 hidden */
    atn_interventions_init(&iv);
    int32_t hide[2] = {1, 3};
    iv.hide_tokens = hide, iv.n_hide = 2;
    CHECK(atn_attention_cost_compute(10, 1, 1, 1, 1, &iv, &c, &err) == ATN_OK);
    CHECK(c.kept_head == 10 * 8);
    CHECK(atn_attention_cost_compute(0, 1, 1, 1, 1, NULL, &c, &err) == ATN_E_INVALID);
    CHECK(atn_attention_cost_compute(ATN_COST_MAX_TOKENS + 1, 1, 1, 1, 1, NULL, &c, &err) == ATN_E_INVALID);
    CHECK(atn_attention_cost_compute(8, 1, 1, 1, 0, NULL, &c, &err) == ATN_E_INVALID);
    hide[1] = 10;   /* outside 0..9 */
    CHECK(atn_attention_cost_compute(10, 1, 1, 1, 1, &iv, &c, &err) == ATN_E_INVALID);
    CHECK(atn_attention_cost_compute(8, 1, 1, 1, 1, NULL, NULL, &err) == ATN_E_INVALID);
}

/* Head importance against a direct loop of single-head ablations (full forwards, the
 * test's own loss), with and without reusing the layers below; on the demo model. */
static void test_importance(void) {
    atn_error err = {0};
    atn_model *m = atn_model_open("demo", NULL, NULL, &err);
    CHECK_MSG(m, "%s", err.message);
    if (!m)
        return;
    const char *texts[3] = {"the cat sat on the mat .", "we like tea and the dog ran to the park .", "[CLS]"};
    atn_encoding *enc[3] = {0};
    for (int i = 0; i < 3; i++)
        CHECK(atn_model_encode(m, texts[i], NULL, &enc[i], &err) == ATN_OK);
    const atn_config *c = atn_model_config(m);
    int32_t L = c->n_layers, H = c->n_heads;
    atn_importance *fast = NULL, *slow = NULL;
    CHECK_MSG(atn_importance_compute(m, enc, 3, 0.15, 7, ATN_HEAD_ZERO, true, NULL, NULL, NULL, &fast, &err) ==
              ATN_OK, "%s", err.message);
    CHECK_MSG(atn_importance_compute(m, enc, 3, 0.15, 7, ATN_HEAD_ZERO, false, NULL, NULL, NULL, &slow, &err) ==
              ATN_OK, "%s", err.message);
    /* the ablations of a layer stacked into one forward (several head gates per forward),
       with and without reuse, and in stacks of 64 rows (several forwards per layer) */
    atn_importance *stk = NULL, *stk_full = NULL, *stk64 = NULL;
    CHECK_MSG(atn_importance_compute_stacked(m, enc, 3, 0.15, 7, ATN_HEAD_ZERO, true, 0, NULL, NULL, NULL, &stk, &err) ==
              ATN_OK, "%s", err.message);
    CHECK_MSG(atn_importance_compute_stacked(m, enc, 3, 0.15, 7, ATN_HEAD_ZERO, false, 0, NULL, NULL, NULL, &stk_full,
                                             &err) == ATN_OK, "%s", err.message);
    CHECK_MSG(atn_importance_compute_stacked(m, enc, 3, 0.15, 7, ATN_HEAD_ZERO, true, 64, NULL, NULL, NULL, &stk64,
                                             &err) == ATN_OK, "%s", err.message);
    /* the direct loop */
    uint8_t *off = calloc((size_t)L * H, 1);
    double base = 0, worst = 0;
    int64_t masked = 0;
    double *offl = calloc((size_t)L * H, sizeof(double)), *keepl = calloc((size_t)L * H, sizeof(double));
    atn_run *r = atn_run_new(m);
    for (int s = 0; s < 2; s++) {   /* the third sentence has no word: skipped */
        int32_t pos[64], k = 0;
        atn_encoding *me = NULL;
        CHECK(atn_mlm_mask_words(m, enc[s], 0.15, 7 + (uint64_t)s, &me, pos, &k, &err) == ATN_OK);
        CHECK(k == (s == 0 ? 1 : 2));   /* round(0.15 * 7) = 1, round(0.15 * 11) = 2 */
        for (int32_t run_i = -1; run_i < 2 * L * H; run_i++) {
            atn_interventions iv;
            atn_interventions_init(&iv);
            memset(off, 0, (size_t)L * H);
            int32_t l = run_i >= 0 ? run_i / 2 / H : 0, h = run_i >= 0 ? run_i / 2 % H : 0;
            bool keep = run_i >= 0 && run_i % 2;
            for (int32_t x = 0; run_i >= 0 && x < H; x++)
                off[l * H + x] = keep ? x != h : x == h;
            iv.heads_off = off;
            atn_run_options o;
            atn_run_options_init(&o);
            o.interventions = run_i >= 0 ? &iv : NULL;
            CHECK(atn_run_forward(r, me, &o, &err) == ATN_OK);
            double loss = 0;
            for (int32_t i = 0; i < k; i++) {
                double lp;
                CHECK(atn_predict_log_prob(m, atn_run_capture(r), pos[i], enc[s]->ids[pos[i]], &lp, &err) == ATN_OK);
                loss -= lp;
            }
            if (run_i < 0)
                base += loss;
            else
                (keep ? keepl : offl)[l * H + h] += loss;
        }
        masked += k;
        atn_encoding_free(me);
    }
    for (int32_t i = 0; fast && slow && i < L * H; i++) {
        double want_off = offl[i] / masked - base / masked, want_keep = keepl[i] / masked - base / masked;
        worst = fmax(worst, fabs(fast->off_delta[i] - want_off));
        worst = fmax(worst, fabs(fast->keep_delta[i] - want_keep));
        CHECK_NEAR(slow->off_delta[i], want_off, 1e-9);
        CHECK_NEAR(slow->keep_delta[i], want_keep, 1e-9);
    }
    /* The same arithmetic: with the layers below reused, an ablation of layer l starts from the
       base run's hidden state there, which the direct loop computes again.  Where the packed
       CPU path runs (AVX-512) the base run is a packed forward and the ablations (a head gate)
       the cblas path, so the reused layers below are the packed kernels' and the direct
       loop's the cblas path's: float rounding between the two CPU paths, bounded as the
       stacked ablations' below (measured 1.4e-6 on the AVX-512 VM) */
    double base_loss = base / (double)(masked > 0 ? masked : 1);
    double reuse_bound = atn_cpu_fast_applies(m) ? 1e-6 * fmax(1.0, base_loss) : 1e-9;
    CHECK_MSG(worst < reuse_bound, "importance with the layers below reused vs the direct loop: %g (bound %g)", worst,
              reuse_bound);
    double worst_stk = 0;
    atn_importance *stacked[3] = {stk, stk_full, stk64};
    for (int t = 0; t < 3; t++) {
        CHECK(stacked[t] && stacked[t]->sentences == 2 && stacked[t]->masked == masked);
        for (int32_t i = 0; stacked[t] && i < L * H; i++) {
            double want_off = offl[i] / masked - base / masked, want_keep = keepl[i] / masked - base / masked;
            worst_stk = fmax(worst_stk, fabs(stacked[t]->off_delta[i] - want_off));
            worst_stk = fmax(worst_stk, fabs(stacked[t]->keep_delta[i] - want_keep));
        }
    }
    /* float rounding only: OpenBLAS adds a row's products in another order in a taller product
       (measured 1.4e-6 against a base loss of several nats: ~3e-7 relative) */
    CHECK_MSG(worst_stk < 1e-6 * fmax(1.0, base_loss), "importance with stacked ablations vs the direct loop: %g "
              "(base loss %g)", worst_stk, base_loss);
    if (stk && stk_full)
        fprintf(stderr, "importance stacked: vs direct loop %.3g (base loss %.4g); %.3f s with reuse, %.3f s "
                "without\n", worst_stk, base_loss, stk->seconds, stk_full->seconds);
    atn_importance_free(stk);
    atn_importance_free(stk_full);
    atn_importance_free(stk64);
    CHECK(fast && fast->sentences == 2 && fast->masked == masked && fabs(fast->base_loss - base / masked) < 1e-12);
    if (fast && slow)
        fprintf(stderr, "importance: reuse vs direct loop %.3g; %.3f s with reuse, %.3f s without\n", worst,
                fast->seconds, slow->seconds);
    atn_importance_free(fast);
    atn_importance_free(slow);
    atn_run_free(r);
    free(off), free(offl), free(keepl);
    for (int i = 0; i < 3; i++)
        atn_encoding_free(enc[i]);
    atn_model_free(m);
}

int main(void) {
    source_path(root, sizeof root, "tests/whatif");
    test_slopes_by_hand();
    test_layer_list();
    char path[4096];
    snprintf(path, sizeof path, "%s/fixtures/cases.json", root);
    cJSON *meta = read_json(path);
    if (!meta) {
        CHECK(meta != NULL);
        return check_summary("test-whatif");
    }
    test_slopes_reference(cJSON_GetObjectItem(meta, "slopes"));
    int cases = 0;
    for (const cJSON *e = cJSON_GetObjectItem(meta, "models")->child; e; e = e->next) {
        const char *mname = cJSON_GetObjectItem(e, "model")->valuestring;
        if (!strcmp(mname, "demo"))   /* the built-in demo model */
            snprintf(path, sizeof path, "demo");
        else
            hf_model_path(path, sizeof path, mname);
        atn_error err = {0};
        atn_model *m = atn_model_open(path, NULL, NULL, &err);
        CHECK_MSG(m != NULL, "%s: %s", mname, err.message);
        if (!m)
            continue;
        for (const cJSON *c = cJSON_GetObjectItem(e, "cases")->child; c; c = c->next, cases++)
            test_case(mname, m, c);
        if (!strcmp(mname, "f32")) {
            test_checks(m);
            test_diff(m);
        }
        atn_model_free(m);
    }
    CHECK_MSG(cases >= 60, "%d cases", cases);
    test_log_prob();
    test_next_log_prob();
    test_importance_causal();
    test_cost();
    test_importance();
    fprintf(stderr, "%d cases; largest |engine - torch|: attention %.3g, hidden states %.3g\n", cases, worst_attn,
            worst_hidden);
    cJSON_Delete(meta);
    return check_summary("test-whatif");
}

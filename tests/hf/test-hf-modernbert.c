/* ModernBERT against gen_modernbert.py's float64 torch reference written from Hugging Face's
 * modeling_modernbert.py (eager): the attention, every hidden state and the masked-LM
 * log-probabilities (all V) at the first, the last and each [MASK] position within 1e-4,
 * through the engine API and through `attnscope run` / `attnscope predict`.  Folders in exact
 * HF layout: F32 (4 layers: global 0 and 3, local 1 and 2, window |i-j| <= 3, no biases) and
 * BF16 (3 layers, global every 2nd, local_attention 5, every bias, transformers 5's
 * layer_types and rope_parameters); cases of 7 tokens with a [MASK], left padding, one token
 * and one longer than the window.  Also: the mask of each layer (padding, and the window in
 * the local ones), both rotation bases, heads on demand, the packed ops never taken, the
 * GPU refused by name, the config.json values that are refused by name, and the local
 * layers' blocks at 300 tokens against the trace (test_band). */
#include "check.h"
#include "common/test-files.h"
#include "common/test-models.h"
#include "core/model-private.h"
#include "forward/encoder.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>
#include <stdint.h>
#include <unistd.h>

static char root[2048];

static const float MIN = -3.4028234663852886e38f;

static void compare_npy(const char *what, const char *fixture, const float *got, size_t count) {
    float *want;
    int64_t shape[4];
    int nd;
    atn_error err = {0};
    if (atn_npy_read_f32(fixture, &want, shape, &nd, 4, &err) != ATN_OK) {
        CHECK_MSG(0, "%s", err.message);
        return;
    }
    size_t total = 1;
    for (int i = 0; i < nd; i++)
        total *= (size_t)shape[i];
    CHECK_MSG(total == count, "%s: fixture has %zu values, the engine %zu", what, total, count);
    if (total == count)
        CHECK_ARRAY_NEAR(what, got, want, count, 1e-4);
    free(want);
}

static void engine_case(const char *name, atn_model *m, const cJSON *meta, const cJSON *c) {
    const char *cname = cJSON_GetObjectItem(c, "name")->valuestring;
    char what[256], path[4096];
    int32_t n, n2, n3;
    int32_t *ids = json_ints(cJSON_GetObjectItem(c, "ids"), &n);
    int32_t *types = json_ints(cJSON_GetObjectItem(c, "type_ids"), &n2);
    int32_t *mask = json_ints(cJSON_GetObjectItem(c, "mask"), &n3);
    atn_error err = {0};
    atn_encoding *enc = NULL;
    CHECK_MSG(atn_model_encode_ids(m, ids, types, mask, n, &enc, &err) == ATN_OK, "%s: %s", name, err.message);
    atn_run *run = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    if (!enc || atn_run_forward(run, enc, &o, &err) != ATN_OK) {
        CHECK_MSG(0, "%s/%s: %s", name, cname, err.message);
        goto out;
    }
    const atn_capture *cap = atn_run_capture(run);
    const atn_config *cfg = atn_model_config(m);
    int32_t L = cfg->n_layers, H = cfg->n_heads, d = cfg->d_model;
    snprintf(path, sizeof path, "%s/fixtures/%s-%s-attn.npy", root, name, cname);
    snprintf(what, sizeof what, "%s/%s attention", name, cname);
    compare_npy(what, path, cap->attn, (size_t)L * H * n * n);
    snprintf(path, sizeof path, "%s/fixtures/%s-%s-hidden.npy", root, name, cname);
    snprintf(what, sizeof what, "%s/%s hidden states", name, cname);
    compare_npy(what, path, cap->hidden, (size_t)(L + 1) * n * d);

    /* each layer's mask: padding everywhere, the window |i - j| <= local_half in the local
       layers only, finfo.min where hidden */
    int32_t half = cJSON_GetObjectItem(meta, "local_half")->valueint;
    const cJSON *local = cJSON_GetObjectItem(meta, "local_layers");
    for (int32_t l = 0; l < L; l++) {
        bool is_local = cJSON_GetArrayItem(local, l)->valueint != 0, ok = true;
        const float *lm = atn_capture_layer_mask(cap, l);
        for (int32_t i = 0; lm && i < n; i++)
            for (int32_t j = 0; j < n; j++) {
                bool hidden = !mask[j] || (is_local && abs(i - j) > half);
                ok &= lm[(size_t)i * n + j] == (hidden ? MIN : 0.0f);
            }
        CHECK_MSG(lm && ok, "%s/%s: layer %d's mask", name, cname, l);
    }

    /* the masked-LM head: log-probabilities of every id and the top 5 */
    const cJSON *mp = cJSON_GetObjectItem(c, "mlm_positions"), *lps = cJSON_GetObjectItem(c, "mlm_log_probs");
    const cJSON *tops = cJSON_GetObjectItem(c, "mlm_top_ids");
    CHECK(atn_model_has_mlm_head(m));
    for (int32_t r = 0; r < cJSON_GetArraySize(mp); r++) {
        int32_t pos = cJSON_GetArrayItem(mp, r)->valueint;
        const cJSON *lp = cJSON_GetArrayItem(lps, r);
        double worst = 0;
        for (int32_t id = 0; id < cfg->vocab_size; id++) {
            double got = 0;
            CHECK(atn_predict_log_prob(m, cap, pos, id, &got, &err) == ATN_OK);
            worst = fmax(worst, fabs(got - cJSON_GetArrayItem(lp, id)->valuedouble));
        }
        CHECK_MSG(worst < 1e-4, "%s/%s: masked-LM log-probabilities at %d differ by %g", name, cname, pos, worst);
        atn_prediction p[5];
        CHECK(atn_predict_position(m, cap, pos, 5, p, &err) == ATN_OK);
        for (int32_t t = 0; t < 5; t++)
            CHECK_MSG(p[t].id == cJSON_GetArrayItem(cJSON_GetArrayItem(tops, r), t)->valueint,
                      "%s/%s: guess at %d, #%d", name, cname, pos, t);
    }

    /* heads on demand (the run keeps Q, K, V): every head made again, with its layer's mask,
       equals the full capture's */
    {
        atn_run *r2 = atn_run_new(m);
        atn_run_options o2;
        atn_run_options_init(&o2);
        o2.attention_on_demand = true;
        CHECK_MSG(atn_run_forward(r2, enc, &o2, &err) == ATN_OK, "%s: on demand: %s", name, err.message);
        float *one = malloc((size_t)n * n * sizeof(float));
        double worst = 0;
        for (int32_t l = 0; one && l < L; l++)
            for (int32_t h = 0; h < H; h++) {
                CHECK(atn_capture_head(atn_run_capture(r2), l, h, one, &err) == ATN_OK);
                const float *full = cap->attn + ((size_t)l * H + h) * n * n;
                for (size_t x = 0; x < (size_t)n * n; x++)
                    worst = fmax(worst, fabs(one[x] - full[x]));
            }
        CHECK_MSG(worst < 1e-6, "%s/%s: heads on demand differ by %g", name, cname, worst);
        free(one);
        atn_run_free(r2);
    }
    /* the trace of the last query in a local layer (1) and the last layer: its mask row is
       that layer's, its softmax the captured one, its projection the attention output;
       no step 0 (that recomputation is the rotary decoders' RMSNorm) */
    for (int32_t l = 1; l < L; l += L - 2) {
        atn_trace *tr = NULL;
        CHECK_MSG(atn_trace_compute(m, cap, l, H - 1, n - 1, &tr, &err) == ATN_OK, "%s: %s", name, err.message);
        if (!tr)
            continue;
        const float *lm = atn_capture_layer_mask(cap, l);
        bool mask_ok = true;
        for (int32_t j = 0; j < n; j++)
            mask_ok &= tr->mask_term[j] == (double)lm[(size_t)(n - 1) * n + j];
        CHECK_MSG(mask_ok, "%s/%s: the trace's mask row of layer %d", name, cname, l);
        CHECK_MSG(tr->max_abs_diff < 1e-5, "%s/%s: trace of layer %d differs from the capture by %g", name, cname, l,
                  tr->max_abs_diff);
        double wo = 0;
        const float *ao = cap->attn_out + ((size_t)l * n + n - 1) * d;
        for (int32_t x = 0; x < d; x++)
            wo = fmax(wo, fabs(tr->projected[x] - ao[x]));
        CHECK_MSG(wo < 1e-4, "%s/%s: the trace's projection differs from the capture by %g", name, cname, wo);
        CHECK(tr->q_unrotated == NULL);
        atn_trace_free(tr);
    }
out:
    atn_run_free(run);
    atn_encoding_free(enc);
    free(ids);
    free(types);
    free(mask);
}

static void ids_arg(const cJSON *a, char *out, size_t size) {
    out[0] = 0;
    int32_t k = 0;
    for (const cJSON *e = a->child; e; e = e->next, k++)
        snprintf(out + strlen(out), size - strlen(out), "%s%d", k ? "," : "", e->valueint);
}

/* The same case through the command line: run -o (the attention), predict --json (the
 * [MASK] guesses). */
static void cli_case(const char *name, const cJSON *c) {
    const char *build = getenv("ATN_BUILD_ROOT");
    const char *cname = cJSON_GetObjectItem(c, "name")->valuestring;
    char ids[1024], mask[1024], cmd[8192], out[256], path[4096], what[256];
    ids_arg(cJSON_GetObjectItem(c, "ids"), ids, sizeof ids);
    ids_arg(cJSON_GetObjectItem(c, "mask"), mask, sizeof mask);
    snprintf(out, sizeof out, "/tmp/atn-mb-cli-%d.npy", (int)getpid());
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' run --model '%s/models/%s' --ids %s --mask %s -o %s",
             build ? build : "build", root, name, ids, mask, out);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    float *got;
    int64_t gs[4];
    int gnd;
    atn_error err = {0};
    if (atn_npy_read_f32(out, &got, gs, &gnd, 4, &err) == ATN_OK) {
        snprintf(path, sizeof path, "%s/fixtures/%s-%s-attn.npy", root, name, cname);
        snprintf(what, sizeof what, "%s/%s attention via attnscope run", name, cname);
        compare_npy(what, path, got, (size_t)(gs[0] * gs[1] * gs[2] * gs[3]));
        free(got);
    } else {
        CHECK_MSG(0, "%s: %s", cmd, err.message);
    }
    unlink(out);
    /* attnscope predict --json: each [MASK]'s first guess and its probability */
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' predict --model '%s/models/%s' --ids %s --mask %s --json",
             build ? build : "build", root, name, ids, mask);
    FILE *f = popen(cmd, "r");
    static char buf[1 << 16];
    size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[len] = 0;
    CHECK_MSG(f && pclose(f) == 0, "%s", cmd);
    cJSON *j = cJSON_Parse(buf);
    const cJSON *mp = cJSON_GetObjectItem(c, "mlm_positions");
    int32_t found = 0;
    for (const cJSON *o = j ? j->child : NULL; o; o = o->next) {
        int32_t pos = cJSON_GetObjectItem(o, "position")->valueint;
        for (int32_t r = 0; r < cJSON_GetArraySize(mp); r++) {
            if (cJSON_GetArrayItem(mp, r)->valueint != pos)
                continue;
            const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "predictions"), 0);
            int32_t want = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(c, "mlm_top_ids"), r), 0)->valueint;
            const cJSON *lp = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "mlm_log_probs"), r);
            CHECK_MSG(first && cJSON_GetObjectItem(first, "id")->valueint == want, "%s: %s", cmd, buf);
            if (first)
                CHECK_NEAR(cJSON_GetObjectItem(first, "prob")->valuedouble,
                           exp(cJSON_GetArrayItem(lp, want)->valuedouble), 1e-4);
            found++;
        }
    }
    CHECK_MSG(found == 1, "%s: one [MASK] guessed, got %d: %s", cmd, found, buf);
    cJSON_Delete(j);
}

static void test_model(const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/fixtures/%s.json", root, name);
    cJSON *meta = read_json(path);
    CHECK(meta != NULL);
    if (!meta)
        return;
    snprintf(path, sizeof path, "%s/models/%s", root, name);
    atn_error err = {0};
    atn_model *m = atn_model_open_hf(path, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s: %s", name, err.message);
    if (!m) {
        cJSON_Delete(meta);
        return;
    }
    CHECK(strcmp(atn_model_family_name(m), "ModernBERT") == 0);
    /* both bases' frequencies, as transformers' float32 default initialiser */
    int32_t hd = cJSON_GetObjectItem(meta, "d_head")->valueint;
    const cJSON *ig = cJSON_GetObjectItem(meta, "inv_freq_global"), *il = cJSON_GetObjectItem(meta, "inv_freq_local");
    CHECK(m->rotary.inv_freq && m->rotary.inv_freq_local);
    for (int32_t i = 0; m->rotary.inv_freq_local && i < hd / 2; i++) {
        CHECK_NEAR(m->rotary.inv_freq[i], cJSON_GetArrayItem(ig, i)->valuedouble,
                   2e-7 * cJSON_GetArrayItem(ig, i)->valuedouble);
        CHECK_NEAR(m->rotary.inv_freq_local[i], cJSON_GetArrayItem(il, i)->valuedouble,
                   2e-7 * cJSON_GetArrayItem(il, i)->valuedouble);
    }
    /* the packed AVX-512 ops have no rotation or second mask: never chosen for it */
    CHECK(!atn_cpu_fast_applies(m));
    const cJSON *cases = cJSON_GetObjectItem(meta, "cases");
    for (const cJSON *c = cases->child; c; c = c->next)
        engine_case(name, m, meta, c);
    cli_case(name, cJSON_GetArrayItem(cases, 0));   /* 7 tokens with a [MASK] */
    cli_case(name, cJSON_GetArrayItem(cases, 3));   /* past the window, a [MASK] */

    /* the GPU refuses it by name (AUTO falls back to the CPU); what-if masks are refused */
    {
        int32_t ids[3] = {5, 6, 7};
        atn_encoding *enc = NULL;
        CHECK(atn_model_encode_ids(m, ids, NULL, NULL, 3, &enc, &err) == ATN_OK);
        atn_run *run = atn_run_new(m);
        atn_run_options o;
        atn_run_options_init(&o);
        o.device = ATN_DEVICE_CUDA;
        CHECK(atn_run_forward(run, enc, &o, &err) != ATN_OK);
        atn_interventions iv;
        atn_interventions_init(&iv);
        iv.causal = true;
        atn_run_options_init(&o);
        o.interventions = &iv;
        err = (atn_error){0};
        CHECK_MSG(atn_run_forward(run, enc, &o, &err) == ATN_E_UNSUPPORTED && strstr(err.message, "ModernBERT"),
                  "what-if mask: %s", err.message);
        atn_run_free(run);
        atn_encoding_free(enc);
    }
    atn_model_free(m);
    cJSON_Delete(meta);
}

/* A copy of a model folder whose config.json has the keys of the JSON object `set` set. */
static void folder_with(const char *model, const char *set, char *dir, size_t size) {
    static int count;
    snprintf(dir, size, "/tmp/atn-mb-%d-%d", (int)getpid(), count++);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && ln -s '%s/models/%s/model.safetensors' '%s/' && "
             "ln -s '%s/models/%s/vocab.txt' '%s/' && /usr/bin/python3 -c \"import json,sys; "
             "c=json.load(open(sys.argv[1])); c.update(json.loads(sys.argv[2])); "
             "json.dump(c, open(sys.argv[3], 'w'))\" '%s/models/%s/config.json' '%s' '%s/config.json'",
             dir, dir, root, model, dir, root, model, dir, root, model, set, dir);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
}

static void refused(const char *model, const char *set, atn_status want, const char *words) {
    char dir[512];
    folder_with(model, set, dir, sizeof dir);
    atn_error err = {0};
    atn_model *m = atn_model_open_hf(dir, NULL, NULL, &err);
    CHECK_MSG(!m && err.status == want && strstr(err.message, words) && strstr(err.message, "config.json"),
              "%s %s: status %d, \"%s\"", model, set, err.status, err.message);
    atn_model_free(m);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void test_refusals(void) {
    refused("modernbert-f32", "{\"norm_bias\": true}", ATN_E_UNSUPPORTED, "\"norm_bias\"");
    refused("modernbert-f32", "{\"classifier_activation\": \"silu\"}", ATN_E_UNSUPPORTED, "\"classifier_activation\"");
    refused("modernbert-f32", "{\"layer_types\": [\"full_attention\", \"full_attention\", \"sliding_attention\", "
            "\"full_attention\"]}", ATN_E_UNSUPPORTED, "\"layer_types\"[1]");
    refused("modernbert-f32", "{\"rope_parameters\": {\"full_attention\": {\"rope_type\": \"linear\", \"factor\": 2}}}",
            ATN_E_UNSUPPORTED, "rope_type");
    refused("modernbert-f32", "{\"local_attention\": 1}", ATN_E_FORMAT, "\"local_attention\"");
    refused("modernbert-f32", "{\"global_rope_theta\": \"big\"}", ATN_E_FORMAT, "\"global_rope_theta\"");
    /* the biases config.json asks for must be stored: the message names the tensor */
    char dir[512];
    folder_with("modernbert-f32", "{\"attention_bias\": true}", dir, sizeof dir);
    atn_error err = {0};
    atn_model *m = atn_model_open_hf(dir, NULL, NULL, &err);
    CHECK_MSG(!m && err.status == ATN_E_SHAPE && strstr(err.message, "'model.layers.0.attn.Wqkv.bias'"), "%s",
              err.message);
    atn_model_free(m);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf /tmp/atn-mb-%d-*", (int)getpid());
    CHECK(system(cmd) == 0);
}

/* The local layers at 300 tokens (the F32 folder's positions raised to 320), where the engine
 * computes each block of 64 queries over the keys it sees only (ops-ref.c, band_spans): every
 * row of every head sums to 1 and is exactly 0 outside |i - j| <= 3 in the local layers; the
 * trace's float64 recomputation from the captured q, k, v (softmax and W_O ctx) of queries at
 * the blocks' edges (0, 63, 64, 150, 299) of both heads in every layer equals the capture's
 * probabilities and each head's context (sum_j w_j v_j) within 1e-5 and the attention output
 * within 1e-4. */
static void test_band(void) {
    char dir[512];
    folder_with("modernbert-f32", "{\"max_position_embeddings\": 320}", dir, sizeof dir);
    atn_error err = {0};
    atn_model *m = atn_model_open_hf(dir, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return;
    enum { N = 300 };
    int32_t ids[N];
    for (int32_t i = 0; i < N; i++)
        ids[i] = 5 + (int32_t)((i * 37u + 11u) % 50u);
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_ids(m, ids, NULL, NULL, N, &enc, &err) == ATN_OK);
    atn_run *run = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    CHECK_MSG(enc && atn_run_forward(run, enc, &o, &err) == ATN_OK, "%s", err.message);
    const atn_capture *cap = atn_run_capture(run);
    const atn_config *cfg = atn_model_config(m);
    int32_t L = cfg->n_layers, H = cfg->n_heads, d = cfg->d_model, half = 3;
    int bad_rows = 0, bad_zero = 0;
    for (int32_t l = 0; l < L; l++) {
        bool local = l % 3 != 0;   /* global_attn_every_n_layers 3 */
        for (int32_t h = 0; h < H; h++)
            for (int32_t i = 0; i < N; i++) {
                const float *row = cap->attn + (((size_t)l * H + h) * N + i) * N;
                double sum = 0;
                for (int32_t j = 0; j < N; j++) {
                    sum += row[j];
                    bad_zero += local && abs(i - j) > half && row[j] != 0.0f;
                }
                bad_rows += fabs(sum - 1.0) > 1e-5;
            }
        static const int32_t qs[] = {0, 63, 64, 150, N - 1};
        for (int32_t h = 0; h < H; h++)
            for (size_t x = 0; x < sizeof qs / sizeof qs[0]; x++) {
                atn_trace *tr = NULL;
                CHECK_MSG(atn_trace_compute(m, cap, l, h, qs[x], &tr, &err) == ATN_OK, "%s", err.message);
                if (!tr)
                    continue;
                CHECK_MSG(tr->max_abs_diff < 1e-5, "band: layer %d head %d query %d: the trace differs by %g", l, h,
                          qs[x], tr->max_abs_diff);
                /* the head's output sum_j w_j v_j against the captured context */
                const float *ctx = cap->ctx + ((size_t)l * N + qs[x]) * d + (size_t)h * tr->d_head;
                double co = 0;
                for (int32_t y = 0; y < tr->d_head; y++)
                    co = fmax(co, fabs(tr->output[y] - ctx[y]));
                CHECK_MSG(co < 1e-5, "band: layer %d head %d query %d: the context differs by %g", l, h, qs[x], co);
                atn_trace_free(tr);
            }
        /* W_O ctx of every head at once: the attention output of the same queries */
        for (size_t x = 0; x < sizeof qs / sizeof qs[0]; x++) {
            atn_trace *tr = NULL;
            CHECK(atn_trace_compute(m, cap, l, 0, qs[x], &tr, &err) == ATN_OK);
            if (!tr)
                continue;
            const float *ao = cap->attn_out + ((size_t)l * N + qs[x]) * d;
            double wo = 0;
            for (int32_t y = 0; y < d; y++)
                wo = fmax(wo, fabs(tr->projected[y] - ao[y]));
            CHECK_MSG(wo < 1e-4, "band: layer %d query %d: the attention output differs by %g", l, qs[x], wo);
            atn_trace_free(tr);
        }
    }
    CHECK_MSG(bad_rows == 0 && bad_zero == 0, "band: %d rows do not sum to 1, %d weights outside the window", bad_rows,
              bad_zero);
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(m);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

int main(void) {
    source_path(root, sizeof root, "tests/hf");
    char abs[PATH_MAX];
    if (realpath(root, abs))   /* the refusal cases link to the model files from /tmp */
        snprintf(root, sizeof root, "%.2000s", abs);
    test_model("modernbert-f32");
    test_model("modernbert-bf16-bias");
    test_refusals();
    test_band();
    return check_summary("test-hf-modernbert");
}

/* DeBERTa-v2/v3 against gen_deberta.py's float64 torch reference written from Hugging Face's
 * modeling_deberta_v2.py (eager): the attention of every layer and head, every hidden state,
 * the c2p and p2c terms (through the trace) and the masked-LM log-probabilities (all V) within
 * 1e-4, through the engine API and through `attnscope run` / `predict` / `trace`.  Folders in
 * exact HF layout: v3-style F32 (log buckets, both terms, share_att_key, the rel_embeddings
 * LayerNorm, no absolute positions and no token types, lm_predictions.lm_head) and v2-style
 * BF16 (c2p only from pos_key_proj, distances clamped past max_relative_positions 4, absolute
 * positions, two token types, cls.predictions); cases of 7 tokens with a [MASK], right
 * padding (XSoftmax: a padded query's row is zero), one token and one past the buckets.  Also:
 * each bucket against torch's, the mask (query x key), heads on demand, "no positions"
 * dropping the terms, the GPU and reduced precision refused by name, and the config.json
 * values refused by name. */
#include "check.h"
#include "common/test-files.h"
#include "common/test-models.h"
#include "core/model-private.h"
#include "forward/deberta.h"
#include "forward/encoder.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>
#include <stdint.h>
#include <unistd.h>

static char root[2048];

static const float MIN = -3.4028234663852886e38f;

static float *read_npy(const char *fixture, size_t *count) {
    float *want = NULL;
    int64_t shape[4];
    int nd;
    atn_error err = {0};
    *count = 0;
    if (atn_npy_read_f32(fixture, &want, shape, &nd, 4, &err) != ATN_OK) {
        CHECK_MSG(0, "%s", err.message);
        return NULL;
    }
    size_t total = 1;
    for (int i = 0; i < nd; i++)
        total *= (size_t)shape[i];
    *count = total;
    return want;
}

static void compare_npy(const char *what, const char *fixture, const float *got, size_t count) {
    size_t total;
    float *want = read_npy(fixture, &total);
    if (!want)
        return;
    CHECK_MSG(total == count, "%s: fixture has %zu values, the engine %zu", what, total, count);
    if (total == count)
        CHECK_ARRAY_NEAR(what, got, want, count, 1e-4);
    free(want);
}

static void engine_case(const char *name, atn_model *m, const cJSON *c) {
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

    /* the mask is query mask x key mask (get_attention_mask): a padded query's row is hidden
       whole, and XSoftmax makes its weights 0 */
    bool mask_ok = true, rows_zero = true;
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++)
            mask_ok &= cap->mask_add[(size_t)i * n + j] == (mask[i] && mask[j] ? 0.0f : MIN);
    for (int32_t l = 0; l < L; l++)
        for (int32_t h = 0; h < H; h++)
            for (int32_t i = 0; i < n; i++)
                for (int32_t j = 0; !mask[i] && j < n; j++)
                    rows_zero &= cap->attn[(((size_t)l * H + h) * n + i) * n + j] == 0.0f;
    CHECK_MSG(mask_ok && rows_zero, "%s/%s: the mask (%d) or a padded query's zero row (%d)", name, cname, mask_ok,
              rows_zero);

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

    /* heads on demand (the walk's attend again, with the terms): equal to the full capture */
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

    /* the trace of every query of every head in every layer: its c2p and p2c terms are the
       reference's (alone, times the scale), its softmax the capture's, its rows the buckets */
    size_t cc, pc;
    snprintf(path, sizeof path, "%s/fixtures/%s-%s-c2p.npy", root, name, cname);
    float *c2p = read_npy(path, &cc);
    snprintf(path, sizeof path, "%s/fixtures/%s-%s-p2c.npy", root, name, cname);
    float *p2c = read_npy(path, &pc);
    double worst_c2p = 0, worst_p2c = 0, worst_w = 0, worst_o = 0;
    bool index_ok = true;
    for (int32_t l = 0; c2p && p2c && l < L; l++)
        for (int32_t h = 0; h < H; h++)
            for (int32_t i = 0; i < n; i++) {
                atn_trace *tr = NULL;
                CHECK_MSG(atn_trace_compute(m, cap, l, h, i, &tr, &err) == ATN_OK, "%s: %s", name, err.message);
                if (!tr)
                    continue;
                CHECK(tr->c2p_term && tr->p2c_term && tr->scale_factor == m->deberta.scale_factor);
                for (int32_t j = 0; tr->c2p_term && j < n; j++) {
                    size_t x = (((size_t)l * H + h) * n + i) * n + j;
                    if (mask[i] && mask[j]) {   /* the reference's terms where both are real tokens */
                        worst_c2p = fmax(worst_c2p, fabs(tr->c2p_term[j] - c2p[x]));
                        worst_p2c = fmax(worst_p2c, fabs(tr->p2c_term[j] - p2c[x]));
                    }
                    index_ok &= tr->rel_index[j] == atn_deberta_index(&m->deberta, i, j);
                }
                worst_w = fmax(worst_w, tr->max_abs_diff);
                const float *ao = cap->attn_out;
                if (ao && l == L - 1)
                    for (int32_t x = 0; x < d; x++)
                        worst_o = fmax(worst_o, fabs(tr->projected[x] - ao[((size_t)l * n + i) * d + x]));
                atn_trace_free(tr);
            }
    CHECK_MSG(worst_c2p < 1e-4 && worst_p2c < 1e-4, "%s/%s: the trace's c2p / p2c differ by %g / %g", name, cname,
              worst_c2p, worst_p2c);
    CHECK_MSG(worst_w < 1e-5 && index_ok, "%s/%s: the trace's weights differ from the capture by %g", name, cname,
              worst_w);
    CHECK_MSG(worst_o < 1e-4, "%s/%s: the trace's projection differs from the capture by %g", name, cname, worst_o);
    free(c2p);
    free(p2c);
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

static char *run_out(const char *cmd) {
    FILE *f = popen(cmd, "r");
    static char buf[1 << 18];
    size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[len] = 0;
    CHECK_MSG(f && pclose(f) == 0, "%s", cmd);
    return buf;
}

/* The same case through the command line: run -o (the attention), predict --json (the
 * [MASK] guess), trace --json and text (the relative terms of the last query). */
static void cli_case(const char *name, const cJSON *meta, const cJSON *c) {
    const char *build = getenv("ATN_BUILD_ROOT");
    const char *cname = cJSON_GetObjectItem(c, "name")->valuestring;
    char ids[1024], mask[1024], types[1024], cmd[8192], out[256], path[4096], what[256];
    ids_arg(cJSON_GetObjectItem(c, "ids"), ids, sizeof ids);
    ids_arg(cJSON_GetObjectItem(c, "mask"), mask, sizeof mask);
    ids_arg(cJSON_GetObjectItem(c, "type_ids"), types, sizeof types);
    snprintf(out, sizeof out, "/tmp/atn-deb-cli-%d.npy", (int)getpid());
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' run --model '%s/models/%s' --ids %s --mask %s --type-ids %s -o %s",
             build ? build : "build", root, name, ids, mask, types, out);
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
    /* attnscope predict --json: the [MASK]'s first guess and its probability */
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' predict --model '%s/models/%s' --ids %s --mask %s --type-ids %s "
             "--json", build ? build : "build", root, name, ids, mask, types);
    char *buf = run_out(cmd);
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
    /* attnscope trace --json of the last query, last layer, last head: c2p and p2c */
    int32_t n = cJSON_GetArraySize(cJSON_GetObjectItem(c, "ids"));
    int32_t L = cJSON_GetObjectItem(meta, "n_layers")->valueint, H = cJSON_GetObjectItem(meta, "n_heads")->valueint;
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' trace --model '%s/models/%s' --ids %s --mask %s --type-ids %s "
             "--layer %d --head %d --query %d --json", build ? build : "build", root, name, ids, mask, types, L - 1,
             H - 1, n - 1);
    j = cJSON_Parse(run_out(cmd));
    const cJSON *jc = cJSON_GetObjectItem(j, "c2p"), *jp = cJSON_GetObjectItem(j, "p2c");
    size_t cc, pc;
    snprintf(path, sizeof path, "%s/fixtures/%s-%s-c2p.npy", root, name, cname);
    float *c2p = read_npy(path, &cc);
    snprintf(path, sizeof path, "%s/fixtures/%s-%s-p2c.npy", root, name, cname);
    float *p2c = read_npy(path, &pc);
    CHECK_MSG(cJSON_GetArraySize(jc) == n && cJSON_GetArraySize(jp) == n && c2p && p2c, "%s: no c2p / p2c", cmd);
    for (int32_t k = 0; c2p && p2c && k < cJSON_GetArraySize(jc); k++) {
        size_t x = (((size_t)(L - 1) * H + H - 1) * n + n - 1) * n + k;
        CHECK_NEAR(cJSON_GetArrayItem(jc, k)->valuedouble, c2p[x], 1e-4);
        CHECK_NEAR(cJSON_GetArrayItem(jp, k)->valuedouble, p2c[x], 1e-4);
    }
    CHECK(cJSON_GetObjectItem(j, "scale_factor") &&
          cJSON_GetObjectItem(j, "scale_factor")->valueint == cJSON_GetObjectItem(meta, "scale_factor")->valueint);
    cJSON_Delete(j);
    free(c2p);
    free(p2c);
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' trace --model '%s/models/%s' --ids %s --layer 0 --head 0 --query 0",
             build ? build : "build", root, name, ids);
    char *text = run_out(cmd);
    CHECK_MSG(strstr(text, "Step 4b. Relative positions") && strstr(text, "content→position  c2p_j") &&
              strstr(text, "position→content  p2c_j"), "%s: %s", cmd, text);
    /* a padded query (XSoftmax): the text says its weights are 0 and sum to 0 */
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' trace --model '%s/models/%s' --ids 5,6,7,0 --mask 1,1,1,0 "
             "--layer 0 --head 0 --query 3", build ? build : "build", root, name);
    text = run_out(cmd);
    CHECK_MSG(strstr(text, "Query token 3 is padding") && strstr(text, "(they sum to 0)"), "%s: %s", cmd, text);
}

/* Distances past the buckets, the bucket of each against torch's float32 make_log_bucket_position. */
static void test_buckets(const atn_model *m, const cJSON *meta) {
    const cJSON *b = cJSON_GetObjectItem(meta, "buckets"), *dist = cJSON_GetObjectItem(meta, "bucket_distances");
    int32_t bad = 0;
    for (int32_t x = 0; x < cJSON_GetArraySize(b); x++) {
        int32_t rel = cJSON_GetArrayItem(dist, x)->valueint;
        bad += atn_deberta_bucket(&m->deberta, rel) != cJSON_GetArrayItem(b, x)->valueint;
    }
    CHECK_MSG(bad == 0 && cJSON_GetArraySize(b) > 0, "%d buckets differ from torch's", bad);
    CHECK(m->deberta.span == cJSON_GetObjectItem(meta, "span")->valueint);
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
    CHECK(strcmp(atn_model_family_name(m), "DeBERTa-v2") == 0);
    CHECK(m->deberta.on && m->deberta.relative && m->deberta.scale_factor ==
                                                      cJSON_GetObjectItem(meta, "scale_factor")->valueint);
    CHECK(!atn_cpu_fast_applies(m));   /* the packed ops add no relative terms */
    test_buckets(m, meta);
    const cJSON *cases = cJSON_GetObjectItem(meta, "cases");
    for (const cJSON *c = cases->child; c; c = c->next)
        engine_case(name, m, c);
    /* attnscope info names the relative settings and the scale */
    {
        char cmd[4600], want[64];
        const char *build = getenv("ATN_BUILD_ROOT");
        snprintf(cmd, sizeof cmd, "'%s/app/attnscope' info --model '%s'", build ? build : "build", path);
        char *text = run_out(cmd);
        snprintf(want, sizeof want, "scale      scores / sqrt(%d x %d)", cJSON_GetObjectItem(meta, "d_head")->valueint,
                 cJSON_GetObjectItem(meta, "scale_factor")->valueint);
        CHECK_MSG(strstr(text, "positions  relative (disentangled): content->position") && strstr(text, want) &&
                  strstr(text, m->deberta.buckets > 0 ? "8 log buckets up to distance 24" : "distances clamped at 4"),
                  "%s: %s", cmd, text);
    }
    cli_case(name, meta, cJSON_GetArrayItem(cases, 0));   /* 7 tokens with a [MASK] */
    cli_case(name, meta, cJSON_GetArrayItem(cases, 3));   /* past the buckets, a [MASK] */

    int32_t ids[3] = {5, 6, 7}, types1[3] = {1, 1, 1};
    atn_encoding *enc = NULL;
    CHECK(atn_model_encode_ids(m, ids, NULL, NULL, 3, &enc, &err) == ATN_OK);
    atn_run *run = atn_run_new(m);
    atn_run_options o;
    /* the GPU and reduced precision refuse it by name (AUTO falls back to the CPU) */
    atn_run_options_init(&o);
    o.device = ATN_DEVICE_CUDA;
    CHECK(atn_run_forward(run, enc, &o, &err) != ATN_OK);
    atn_run_options_init(&o);
    o.precision = ATN_PRECISION_BF16;
    err = (atn_error){0};
    CHECK_MSG(atn_run_forward(run, enc, &o, &err) == ATN_E_UNSUPPORTED && strstr(err.message, "DeBERTa-v2"), "%s",
              err.message);
    /* "no positions": the relative terms are left out (and the trace says so by having none) */
    atn_run_options_init(&o);
    o.keep_trace_inputs = true;
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_OK);
    const atn_config *cfg = atn_model_config(m);
    size_t count = (size_t)cfg->n_layers * cfg->n_heads * 9;
    float *plain = malloc(count * sizeof(float));
    memcpy(plain, atn_run_capture(run)->attn, count * sizeof(float));
    atn_interventions iv;
    atn_interventions_init(&iv);
    iv.no_positions = true;
    o.interventions = &iv;
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_OK);
    double moved = 0;
    for (size_t x = 0; x < count; x++)
        moved = fmax(moved, fabs(plain[x] - atn_run_capture(run)->attn[x]));
    CHECK_MSG(moved > 1e-3, "%s: no positions changed the attention by only %g", name, moved);
    atn_trace *tr = NULL;
    CHECK(atn_trace_compute(m, atn_run_capture(run), 0, 0, 2, &tr, &err) == ATN_OK);
    CHECK(tr && !tr->c2p_term && tr->max_abs_diff < 1e-5);
    atn_trace_free(tr);
    free(plain);
    /* token types: read with type_vocab_size > 0, ignored without (v3: as HF ignores them) */
    atn_encoding *enc1 = NULL;
    err = (atn_error){0};
    atn_status st = atn_model_encode_ids(m, ids, types1, NULL, 3, &enc1, &err);
    CHECK_MSG(st == ATN_OK, "%s: type id 1: %s", name, err.message);
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_encoding_free(enc1);
    atn_model_free(m);
    cJSON_Delete(meta);
}

/* A copy of a model folder whose config.json has the keys of the JSON object `set` set. */
static void folder_with(const char *model, const char *set, char *dir, size_t size) {
    static int count;
    snprintf(dir, size, "/tmp/atn-deb-%d-%d", (int)getpid(), count++);
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
    /* and through the command line: exit 2 naming the key */
    char cmd[1200];
    const char *build = getenv("ATN_BUILD_ROOT");
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' info --model '%s' > /dev/null 2>&1", build ? build : "build", dir);
    int rc = system(cmd);
    CHECK_MSG(WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "%s: exit %d", cmd, WEXITSTATUS(rc));
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void test_refusals(void) {
    refused("deberta-v3-f32", "{\"conv_kernel_size\": 3}", ATN_E_UNSUPPORTED, "\"conv_kernel_size\"");
    refused("deberta-v3-f32", "{\"pos_att_type\": \"p2c|p2p\"}", ATN_E_UNSUPPORTED, "\"p2p\"");
    refused("deberta-v3-f32", "{\"pos_att_type\": 3}", ATN_E_FORMAT, "\"pos_att_type\"");
    refused("deberta-v3-f32", "{\"norm_rel_ebd\": \"layer_norm|batch_norm\"}", ATN_E_UNSUPPORTED, "\"batch_norm\"");
    refused("deberta-v3-f32", "{\"embedding_size\": 8}", ATN_E_UNSUPPORTED, "\"embedding_size\"");
    refused("deberta-v3-f32", "{\"attention_head_size\": 4}", ATN_E_UNSUPPORTED, "\"attention_head_size\"");
    refused("deberta-v3-f32", "{\"position_buckets\": 2}", ATN_E_FORMAT, "\"position_buckets\"");
    refused("deberta-v3-f32", "{\"share_att_key\": \"yes\"}", ATN_E_FORMAT, "\"share_att_key\"");
    /* the projections config.json asks for must be stored: the message names the tensor */
    char dir[512];
    folder_with("deberta-v3-f32", "{\"share_att_key\": false}", dir, sizeof dir);
    atn_error err = {0};
    atn_model *m = atn_model_open_hf(dir, NULL, NULL, &err);
    CHECK_MSG(!m && err.status == ATN_E_SHAPE &&
              strstr(err.message, "'deberta.encoder.layer.0.attention.self.pos_key_proj.weight'"), "%s", err.message);
    atn_model_free(m);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf /tmp/atn-deb-%d-*", (int)getpid());
    CHECK(system(cmd) == 0);
}

/* deberta-v3-base's settings (256 buckets up to 512, as `bench --shape deberta-v3-base` runs):
 * every distance up to 1023 against torch's float32 make_log_bucket_position. */
static void test_v3_base_buckets(void) {
    atn_deberta r = {.on = true, .relative = true, .c2p = true, .p2c = true, .buckets = 256, .max_relative = 512,
                     .span = 256, .scale_factor = 3};
    char path[4096];
    snprintf(path, sizeof path, "%s/fixtures/deberta/v3-base-buckets.json", root);
    cJSON *bj = read_json(path);
    const cJSON *bs = cJSON_GetObjectItem(bj, "bucket");
    int32_t from = bj ? cJSON_GetObjectItem(bj, "from")->valueint : 0, bad = 0, x = 0;
    for (const cJSON *e = bs ? bs->child : NULL; e; e = e->next, x++)
        bad += atn_deberta_bucket(&r, from + x) != e->valueint;
    CHECK_MSG(x == 2047 && bad == 0, "deberta-v3-base: %d of %d buckets differ from torch's", bad, x);
    cJSON_Delete(bj);
    CHECK(atn_deberta_index(&r, 511, 0) == 511 && atn_deberta_index(&r, 0, 511) == 1);
    CHECK(atn_deberta_index(&r, 1023, 0) == 511 && atn_deberta_index(&r, 0, 1023) == 0);
}

int main(void) {
    source_path(root, sizeof root, "tests/hf");
    char abs[PATH_MAX];
    if (realpath(root, abs))   /* the refusal cases link to the model files from /tmp */
        snprintf(root, sizeof root, "%.2000s", abs);
    test_model("deberta-v3-f32");
    test_model("deberta-v2-bf16");
    test_refusals();
    test_v3_base_buckets();
    return check_summary("test-hf-deberta");
}

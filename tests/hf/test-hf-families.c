/* The encoder families beside BERT: RoBERTa, XLM-RoBERTa, DistilBERT, ALBERT, ELECTRA.
 * Opens each generated folder of tests/hf/models (gen_families.py: the family's own
 * config keys and tensor names, F32/F16/BF16, prefixed and bare names, odd head counts,
 * padding) and compares, to 1e-4, the attention and hidden states with the float64 torch
 * reference written from Hugging Face's modeling code (tests/hf/fixtures), through the
 * engine API and through `attnscope run`; the masked-LM head's top 5 ids and
 * probabilities; ALBERT's shared layers (which weights each captured layer runs, the
 * pointers, the packed copy made once per stored layer); DistilBERT's sinusoidal table
 * computed when a checkpoint lacks it (distilbert-nopos); RoBERTa's position limit; the
 * refusals (relative positions, unknown model types).
 *
 * With --cuda MODULE (the CPU stand-in for CUDA, tests/cuda/mock-cuda.c) the runs go to
 * the CUDA backend instead: BERT-layout families agree with the same fixtures; ALBERT and
 * ELECTRA with an embedding projection are refused by it, and AUTO falls back to the CPU
 * with that reason. */
#include "check.h"
#include "common/test-files.h"
#include "common/test-models.h"
#include "forward/cpu-kernels.h"
#include "forward/encoder.h"
#include "tokenize/encoding.h"
#include "core/family.h"
#include "core/model-private.h"
#include "tokenize/tokenizer.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[2048];
static const char *cuda_module;   /* --cuda MODULE: run on the CUDA backend */

static void list(char *out, size_t len, const int32_t *v, int32_t n) {
    size_t k = 0;
    out[0] = 0;
    for (int32_t i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(out + k, len - k, "%s%d", i ? "," : "", v[i]);
}

static bool projects(const atn_model *m) { return m->w.emb_proj_w != NULL; }

static void compare_npy(const char *what, const char *path, const float *got, size_t count) {
    float *want;
    int64_t shape[4];
    int nd;
    atn_error err = {0};
    if (atn_npy_read_f32(path, &want, shape, &nd, 4, &err) != ATN_OK) {
        CHECK_MSG(0, "%s", err.message);
        return;
    }
    size_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= (size_t)shape[i];
    CHECK_MSG(n == count, "%s: %zu values, expected %zu", what, count, n);
    if (n == count)
        CHECK_ARRAY_NEAR(what, got, want, count, 1e-4);
    free(want);
}

/* The same case through the command line: attnscope run --ids ... -o file.npy. */
static void compare_cli(const char *model_name, const char *cname, const int32_t *ids, const int32_t *types,
                        const int32_t *mask, int32_t n, size_t count) {
    const char *build = getenv("ATN_BUILD_ROOT");
    if (!build)
        return;
    char a[512], b[512], c[512], out[] = "/tmp/atn-families-XXXXXX", cmd[8192], path[4096];
    CHECK(mkdtemp(out) != NULL);
    list(a, sizeof a, ids, n);
    list(b, sizeof b, types, n);
    list(c, sizeof c, mask, n);
    snprintf(path, sizeof path, "%s/attn.npy", out);
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' run --model '%s/models/%s' --ids %s --type-ids %s --mask %s "
             "-o '%s' 2>'%s/err.txt'", build, root, model_name, a, b, c, path, out);
    int rc = system(cmd);
    CHECK_MSG(rc == 0, "%s/%s: attnscope run exited %d", model_name, cname, rc);
    if (rc == 0) {
        float *got;
        int64_t shape[4];
        int nd;
        atn_error err = {0};
        if (atn_npy_read_f32(path, &got, shape, &nd, 4, &err) == ATN_OK) {
            char what[256], fix[4096];
            snprintf(what, sizeof what, "%s/%s attention through attnscope run", model_name, cname);
            snprintf(fix, sizeof fix, "%s/fixtures/%s-%s-attn.npy", root, model_name, cname);
            compare_npy(what, fix, got, count);
            free(got);
        } else {
            CHECK_MSG(0, "%s", err.message);
        }
    }
    snprintf(path, sizeof path, "%s/attn.npy", out);
    unlink(path);
    snprintf(path, sizeof path, "%s/err.txt", out);
    unlink(path);
    rmdir(out);
}

static void compare_case(const char *model_name, atn_model *m, const cJSON *c) {
    const char *cname = cJSON_GetObjectItem(c, "name")->valuestring;
    char what[256], path[4096];
    int32_t n, n2, n3;
    int32_t *ids = json_ints(cJSON_GetObjectItem(c, "ids"), &n);
    int32_t *types = json_ints(cJSON_GetObjectItem(c, "type_ids"), &n2);
    int32_t *mask = json_ints(cJSON_GetObjectItem(c, "mask"), &n3);
    atn_error err = {0};
    atn_encoding *enc = NULL;
    CHECK_MSG(atn_model_encode_ids(m, ids, types, mask, n, &enc, &err) == ATN_OK, "%s: %s", model_name,
              err.message);
    const atn_config *cfg = atn_model_config(m);
    size_t attn_count = (size_t)cfg->n_layers * cfg->n_heads * n * n;
    atn_run *run = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    o.device = cuda_module ? ATN_DEVICE_CUDA : ATN_DEVICE_CPU;
    if (enc && atn_run_forward(run, enc, &o, &err) == ATN_OK) {
        const atn_capture *cap = atn_run_capture(run);
        if (cuda_module) {
            /* every family runs on the CUDA backend, ALBERT's and ELECTRA's embedding
               projection included (E-wide embeddings, LayerNorm, then E -> d) */
            const char *why = atn_run_fallback_reason(run);
            CHECK_MSG(atn_run_device_used(run) == ATN_DEVICE_CUDA && !why, "%s%s: ran on %d (%s)", model_name,
                      projects(m) ? " (projected embeddings)" : "", (int)atn_run_device_used(run), why ? why : "");
        }
        snprintf(path, sizeof path, "%s/fixtures/%s-%s-attn.npy", root, model_name, cname);
        snprintf(what, sizeof what, "%s/%s attention", model_name, cname);
        compare_npy(what, path, cap->attn, attn_count);
        snprintf(path, sizeof path, "%s/fixtures/%s-%s-hidden.npy", root, model_name, cname);
        snprintf(what, sizeof what, "%s/%s hidden states", model_name, cname);
        compare_npy(what, path, cap->hidden, (size_t)(cfg->n_layers + 1) * n * cfg->d_model);

        const cJSON *top_ids = cJSON_GetObjectItem(c, "mlm_top_ids");
        if (top_ids) {
            int32_t k, k2;
            int32_t *want_ids = json_ints(top_ids, &k);
            const cJSON *probs = cJSON_GetObjectItem(c, "mlm_top_probs");
            int32_t pos = cJSON_GetObjectItem(c, "mlm_position")->valueint;
            atn_prediction pred[5];
            CHECK_MSG(atn_predict_position(m, cap, pos, 5, pred, &err) == ATN_OK, "%s: %s", model_name,
                      err.message);
            k2 = 0;
            for (const cJSON *p = probs->child; p && k2 < 5; p = p->next, k2++) {
                CHECK_MSG(pred[k2].id == want_ids[k2], "%s: guess %d is id %d, the reference's %d", model_name, k2,
                          pred[k2].id, want_ids[k2]);
                CHECK_NEAR(pred[k2].prob, p->valuedouble, 1e-4);
            }
            CHECK(k == 5 && k2 == 5);
            free(want_ids);
        }
        if (!cuda_module && strcmp(cname, "pair-padded") == 0)
            compare_cli(model_name, cname, ids, types, mask, n, attn_count);
    } else if (enc) {
        CHECK_MSG(0, "%s/%s: run failed: %s", model_name, cname, err.message);
    }
    atn_run_free(run);
    atn_encoding_free(enc);
    free(ids);
    free(types);
    free(mask);
}

static const char *family_of(const char *model_type) {
    if (strcmp(model_type, "roberta") == 0) return "RoBERTa";
    if (strcmp(model_type, "xlm-roberta") == 0) return "XLM-RoBERTa";
    if (strcmp(model_type, "distilbert") == 0) return "DistilBERT";
    if (strcmp(model_type, "albert") == 0) return "ALBERT";
    if (strcmp(model_type, "electra") == 0) return "ELECTRA";
    return "?";
}

/* ALBERT: the layer -> (group, inner) map the reference used, the pointers, the packing. */
static void check_sharing(const char *name, atn_model *m, const cJSON *map) {
    const atn_config *c = atn_model_config(m);
    int32_t L = c->n_layers;
    CHECK_MSG(cJSON_GetArraySize(map) == L, "%s: %d captured layers, the reference %d", name, L,
              cJSON_GetArraySize(map));
    int32_t want_g[64], want_j[64];
    int32_t i = 0;
    for (const cJSON *e = map->child; e && i < 64; e = e->next, i++) {
        want_g[i] = cJSON_GetArrayItem(e, 0)->valueint;
        want_j[i] = cJSON_GetArrayItem(e, 1)->valueint;
    }
    int32_t distinct = 0;
    for (int32_t l = 0; l < L && l < 64; l++) {
        int32_t g = -1, j = -1, uses = atn_model_layer_weights(m, l, &g, &j), want_uses = 0;
        for (int32_t e = 0; e < L; e++)
            want_uses += want_g[e] == want_g[l] && want_j[e] == want_j[l];
        CHECK_MSG(g == want_g[l] && j == want_j[l] && uses == want_uses, "%s layer %d: group %d inner %d (%d uses), "
                  "expected %d %d (%d)", name, l, g, j, uses, want_g[l], want_j[l], want_uses);
        bool first = true;
        for (int32_t e = 0; e < L; e++) {
            bool same = want_g[e] == want_g[l] && want_j[e] == want_j[l];
            CHECK_MSG((m->w.layers[e].wq == m->w.layers[l].wq) == same &&
                      (m->w.layers[e].ln2_b == m->w.layers[l].ln2_b) == same,
                      "%s: layers %d and %d %s share weights", name, e, l, same ? "should" : "should not");
            if (same && e < l)
                first = false;
        }
        distinct += first;
    }
    CHECK(atn_model_layer_weights(m, -1, NULL, NULL) == 0 && atn_model_layer_weights(m, L, NULL, NULL) == 0);
    /* the CPU's packed copy (AVX-512 machines) holds each stored layer once */
    if (atn_cpu_kernels_usable() && !cuda_module) {
        size_t per = 4 * atn_packed_floats(c->d_model, c->d_model) + atn_packed_floats(c->d_ffn, c->d_model) +
                     atn_packed_floats(c->d_model, c->d_ffn);
        CHECK_MSG(atn_cpu_packed_bytes(m) == (size_t)distinct * per * sizeof(float), "%s: packed %zu bytes, "
                  "expected %d stored layers x %zu", name, atn_cpu_packed_bytes(m), distinct, per * sizeof(float));
    }
}

static void test_model(const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/fixtures/%s.json", root, name);
    cJSON *meta = read_json(path);
    if (!meta) {
        CHECK(meta != NULL);
        return;
    }
    hf_model_path(path, sizeof path, name);
    atn_error err = {0};
    atn_model *m = atn_model_open(path, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s: %s", name, err.message);
    if (!m) {
        cJSON_Delete(meta);
        return;
    }
    const atn_config *c = atn_model_config(m);
    const char *fam = cJSON_GetObjectItem(meta, "family")->valuestring;
    CHECK_STR(atn_model_family_name(m), family_of(fam));
    CHECK(c->n_layers == cJSON_GetObjectItem(meta, "n_layers")->valueint);
    CHECK(c->n_heads == cJSON_GetObjectItem(meta, "n_heads")->valueint);
    CHECK(c->d_model == cJSON_GetObjectItem(meta, "d_model")->valueint);
    bool mlm = cJSON_IsTrue(cJSON_GetObjectItem(meta, "has_mlm_head"));
    CHECK_MSG(atn_model_has_mlm_head(m) == mlm, "%s: mlm head", name);
    /* the test folders carry a WordPiece vocab.txt (the family's own files are absent) */
    CHECK(m->tokenizer && strcmp(atn_tokenizer_kind(m->tokenizer), "wordpiece") == 0);
    CHECK_MSG((strcmp(fam, "distilbert") != 0) == (m->w.type_emb != NULL), "%s: token types", name);

    const cJSON *cases = cJSON_GetObjectItem(meta, "cases");
    for (const cJSON *k = cases->child; k; k = k->next)
        compare_case(name, m, k);

    const cJSON *map = cJSON_GetObjectItem(meta, "layer_weights");
    if (map)
        check_sharing(name, m, map);
    else
        for (int32_t l = 0; l < c->n_layers; l++) {
            int32_t g = -1, j = -1;
            CHECK(atn_model_layer_weights(m, l, &g, &j) == 1 && g == l && j == 0);
        }

    if (!mlm) {
        /* a discriminator or a bare model: no guesses, said clearly */
        int32_t ids[3] = {2, 7, 3};
        atn_encoding *enc = NULL;
        atn_run *run = atn_run_new(m);
        atn_prediction p[5];
        if (atn_model_encode_ids(m, ids, NULL, NULL, 3, &enc, &err) == ATN_OK &&
            atn_run_forward(run, enc, NULL, &err) == ATN_OK) {
            CHECK(atn_predict_position(m, atn_run_capture(run), 1, 5, p, &err) == ATN_E_UNSUPPORTED);
            CHECK_MSG(strstr(err.message, "has no masked-LM head") && strstr(err.message, m->family->mlm.what),
                      "%s", err.message);
        } else {
            CHECK_MSG(0, "%s: %s", name, err.message);
        }
        atn_run_free(run);
        atn_encoding_free(enc);
    }
    atn_model_free(m);
    cJSON_Delete(meta);
}

/* A copy of models/<name> (its files linked) with config.json's key set to a JSON value. */
static void variant(const char *name, const char *dir, const char *key, const char *json_value) {
    const char *files[] = {"model.safetensors", "vocab.txt"};
    char path[4200], target[4200];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        snprintf(target, sizeof target, "%s/models/%s/%s", root, name, files[i]);
        unlink(path);
        CHECK(symlink(target, path) == 0);
    }
    snprintf(path, sizeof path, "%s/models/%s/config.json", root, name);
    cJSON *cfg = read_json(path);
    CHECK(cfg != NULL);
    if (!cfg)
        return;
    cJSON_DeleteItemFromObject(cfg, key);
    cJSON_AddItemToObject(cfg, key, cJSON_Parse(json_value));
    char *out = cJSON_Print(cfg);
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(out, f);
        fclose(f);
    }
    free(out);
    cJSON_Delete(cfg);
}

static void clear_variant(const char *dir) {
    const char *files[] = {"model.safetensors", "vocab.txt", "config.json"};
    char path[4200];
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
}

static void refusals(void) {
    char dir[] = "/tmp/atn-families-cfg-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    atn_error err = {0};
    const char *rel[] = {"\"relative_key\"", "\"relative_key_query\""};
    for (int i = 0; i < 2; i++) {
        variant(i ? "electra-disc" : "roberta-f32", dir, "position_embedding_type", rel[i]);
        CHECK(atn_model_open_hf(dir, NULL, NULL, &err) == NULL && err.status == ATN_E_UNSUPPORTED);
        CHECK_MSG(strstr(err.message, "\"position_embedding_type\" is ") && strstr(err.message, rel[i] + 1) &&
                  strstr(err.message, "only \"absolute\""), "%s", err.message);
    }
    variant("roberta-f32", dir, "model_type", "\"deberta\"");   /* DeBERTa v1 (deberta-v2 opens) */
    CHECK(atn_model_open_hf(dir, NULL, NULL, &err) == NULL && err.status == ATN_E_UNSUPPORTED);
    CHECK_MSG(strstr(err.message, "\"model_type\" is \"deberta\", which attnscope does not open"), "%s",
              err.message);
    /* RoBERTa's positions start after padding_idx: 2 rows leave none */
    variant("roberta-f32", dir, "max_position_embeddings", "2");
    CHECK(atn_model_open_hf(dir, NULL, NULL, &err) == NULL && err.status == ATN_E_FORMAT);
    CHECK_MSG(strstr(err.message, "leaves no position for a token"), "%s", err.message);
    /* ALBERT's sharing is read from its keys */
    variant("albert-f32", dir, "inner_group_num", "0");
    CHECK(atn_model_open_hf(dir, NULL, NULL, &err) == NULL && strstr(err.message, "\"inner_group_num\" is 0"));
    /* ELECTRA's projection is needed when the widths differ */
    variant("electra-gen", dir, "embedding_size", "16");   /* == hidden: the checkpoint's [V, 24] table is wrong */
    CHECK(atn_model_open_hf(dir, NULL, NULL, &err) == NULL && err.status == ATN_E_SHAPE);
    CHECK_MSG(strstr(err.message, "embeddings.word_embeddings.weight' has shape [48, 24], expected [48, 16]"), "%s",
              err.message);
    clear_variant(dir);
    rmdir(dir);

    /* roberta-f32: 18 position rows, padding_idx 1: 16 tokens run, 17 are refused */
    char path[4096];
    snprintf(path, sizeof path, "%s/models/roberta-f32", root);
    atn_model *m = atn_model_open_hf(path, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (m) {
        int32_t ids[17];
        for (int i = 0; i < 17; i++)
            ids[i] = 5 + i;
        atn_run *run = atn_run_new(m);
        atn_encoding *enc = NULL;
        CHECK(atn_model_encode_ids(m, ids, NULL, NULL, 16, &enc, &err) == ATN_OK);
        CHECK_MSG(enc && atn_run_forward(run, enc, NULL, &err) == ATN_OK, "%s", err.message);
        atn_encoding_free(enc);
        CHECK(atn_model_encode_ids(m, ids, NULL, NULL, 17, &enc, &err) == ATN_E_INVALID);
        CHECK_MSG(strstr(err.message, "17 token ids given") && strstr(err.message, "at most 16 positions"), "%s",
                  err.message);
        /* an encoding made elsewhere (a tokenizer) is checked again by the run */
        enc = atn_encoding_alloc(17);
        if (enc) {
            for (int i = 0; i < 17; i++)
                enc->ids[i] = ids[i], enc->type_ids[i] = 0, enc->mask[i] = 1;
            CHECK(atn_run_forward(run, enc, NULL, &err) == ATN_E_INVALID);
            CHECK_MSG(strstr(err.message, "17 tokens") && strstr(err.message, "at most 16 positions"), "%s",
                      err.message);
            atn_encoding_free(enc);
        }
        atn_run_free(run);
        atn_model_free(m);
    }
}

/* DistilBERT reads sentence pairs as Hugging Face's tokenizer encodes them ([CLS] A [SEP] B
 * [SEP]; DistilBERT's SQuAD models are used so): the ids by hand from distilbert-f32's
 * vocab.txt, no token types (all 0), and the run equals one of the same ids given directly. */
static void distilbert_pair(void) {
    char path[4096];
    atn_error err = {0};
    snprintf(path, sizeof path, "%s/models/distilbert-f32", root);
    atn_model *m = atn_model_open_hf(path, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return;
    atn_encoding *pair = NULL, *direct = NULL;
    CHECK_MSG(atn_model_encode(m, "the cat sat", "a dog ran", &pair, &err) == ATN_OK, "%s", err.message);
    static const int32_t want[] = {2, 5, 6, 7, 3, 10, 11, 12, 3};   /* [CLS] the cat sat [SEP] a dog ran [SEP] */
    CHECK(pair && pair->n == 9);
    for (int32_t i = 0; pair && i < pair->n && i < 9; i++) {
        CHECK_MSG(pair->ids[i] == want[i], "pair id %d: %d, expected %d", i, pair->ids[i], want[i]);
        CHECK_MSG(pair->type_ids[i] == 0, "pair type id %d: %d (DistilBERT has none)", i, pair->type_ids[i]);
    }
    CHECK(atn_model_encode_ids(m, want, NULL, NULL, 9, &direct, &err) == ATN_OK);
    atn_run *ra = atn_run_new(m), *rb = atn_run_new(m);
    if (pair && direct && ra && rb && atn_run_forward(ra, pair, NULL, &err) == ATN_OK &&
        atn_run_forward(rb, direct, NULL, &err) == ATN_OK) {
        const atn_capture *a = atn_run_capture(ra), *b = atn_run_capture(rb);
        size_t count = (size_t)a->n_layers * a->n_heads * a->n * a->n;
        CHECK(a->n == b->n && memcmp(a->attn, b->attn, count * sizeof(float)) == 0);
    } else {
        CHECK_MSG(false, "distilbert pair run: %s", err.message);
    }
    atn_run_free(ra);
    atn_run_free(rb);
    atn_encoding_free(pair);
    atn_encoding_free(direct);
    atn_model_free(m);
}

int main(int argc, char **argv) {
    source_path(root, sizeof root, "tests/hf");
    if (argc == 3 && strcmp(argv[1], "--cuda") == 0) {
        cuda_module = argv[2];
        setenv("ATTNSCOPE_CUDA_MODULE", cuda_module, 1);
    }
    const char *models[] = {"roberta-f32", "xlmr-bf16", "distilbert-f16", "distilbert-f32", "albert-f32",
                            "albert-f16", "electra-disc", "electra-gen", "distilbert-nopos"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        test_model(models[i]);
    if (!cuda_module) {
        refusals();
        distilbert_pair();
    }
    return check_summary(cuda_module ? "test-hf-families (CUDA stand-in)" : "test-hf-families");
}

/* Opens every generated Hugging Face model folder in tests/hf/models (F32, F16, BF16,
 * "bert." prefix with a cls.* head, legacy gamma/beta names, no pooler, sharded, odd head
 * counts, relu / gelu_new / gelu_pytorch_tanh, unaligned F32 data) and compares the
 * encoder's attention and hidden states with the torch reference of gen_models.py
 * (tests/hf/fixtures) to 1e-4.  Also: F32 weights stay in the mapping, F16/BF16 and
 * unaligned data are converted into model memory, progress is reported and cancels. */
#include "check.h"
#include "model-private.h"

#include <cjson/cJSON.h>
#include <stdint.h>

static char root[2048];

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    } else {
        s[n] = 0;
    }
    fclose(f);
    return s;
}

static int32_t *int_array(const cJSON *a, int32_t *n) {
    *n = cJSON_GetArraySize(a);
    int32_t *v = malloc(((size_t)*n + 1) * sizeof *v);
    int32_t i = 0;
    for (const cJSON *e = a->child; e; e = e->next)
        v[i++] = (int32_t)e->valuedouble;
    return v;
}

/* Where does p live: 1 in a mapped block, 2 in an allocated block, 0 nowhere. */
static int owner_of(const atn_model *m, const void *p) {
    for (int32_t i = 0; i < m->n_blocks; i++) {
        const char *b = m->blocks[i].ptr;
        if ((const char *)p >= b && (const char *)p < b + m->blocks[i].len)
            return m->blocks[i].mapped ? 1 : 2;
    }
    return 0;
}

static int mapped_blocks(const atn_model *m) {
    int n = 0;
    for (int32_t i = 0; i < m->n_blocks; i++)
        n += m->blocks[i].mapped;
    return n;
}

typedef struct progress_log {
    int calls;
    double last;
    bool backwards;
    int cancel_at;       /* cancel on this call (1-based); 0 never */
    int cancel_stage;    /* 1 + the atn_stage to cancel at; 0 never */
    unsigned stages;     /* bit s: stage s was reported */
    int last_stage;
    bool stage_back;     /* a stage came after a later one */
} progress_log;

static bool on_progress(double fraction, atn_stage stage, void *user_data) {
    progress_log *p = user_data;
    p->calls++;
    if (fraction < p->last || fraction < 0 || fraction > 1)
        p->backwards = true;
    p->last = fraction;
    if (p->calls > 1 && (int)stage < p->last_stage)
        p->stage_back = true;
    p->last_stage = (int)stage;
    p->stages |= 1u << stage;
    if (p->cancel_at && p->calls >= p->cancel_at)
        return false;
    if (p->cancel_stage && (int)stage + 1 == p->cancel_stage)
        return false;
    return true;
}

static void compare_case(const char *model_name, atn_model *m, const cJSON *c) {
    const char *cname = cJSON_GetObjectItem(c, "name")->valuestring;
    char what[256], path[4096];
    int32_t n, n2, n3;
    int32_t *ids = int_array(cJSON_GetObjectItem(c, "ids"), &n);
    int32_t *types = int_array(cJSON_GetObjectItem(c, "type_ids"), &n2);
    int32_t *mask = int_array(cJSON_GetObjectItem(c, "mask"), &n3);
    atn_error err = {0};
    atn_encoding *enc = NULL;
    const cJSON *text = cJSON_GetObjectItem(c, "text");
    if (text) {
        /* the tokenizer path: every word is a whole vocabulary entry, so the expected ids
           are plain look-ups (the tokenizer's own tests cover the hard cases) */
        CHECK_MSG(atn_model_encode(m, text->valuestring, NULL, &enc, &err) == ATN_OK, "%s: %s",
                  model_name, err.message);
        if (enc) {
            CHECK_MSG(enc->n == n, "%s/%s: %d tokens, expected %d", model_name, cname, enc->n, n);
            for (int32_t i = 0; i < n && i < enc->n; i++)
                CHECK_MSG(enc->ids[i] == ids[i], "%s/%s: id %d is %d, expected %d", model_name,
                          cname, i, enc->ids[i], ids[i]);
        }
    } else {
        CHECK_MSG(atn_model_encode_ids(m, ids, types, mask, n, &enc, &err) == ATN_OK, "%s: %s",
                  model_name, err.message);
    }
    atn_run *run = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    if (enc && atn_run_forward(run, enc, &o, &err) == ATN_OK) {
        const atn_capture *cap = atn_run_capture(run);
        const atn_config *cfg = atn_model_config(m);
        float *want;
        int64_t shape[4];
        int nd;
        snprintf(path, sizeof path, "%s/fixtures/%s-%s-attn.npy", root, model_name, cname);
        if (atn_npy_read_f32(path, &want, shape, &nd, 4, &err) == ATN_OK) {
            CHECK(nd == 4 && shape[0] == cfg->n_layers && shape[1] == cfg->n_heads &&
                  shape[2] == n && shape[3] == n);
            snprintf(what, sizeof what, "%s/%s attention", model_name, cname);
            CHECK_ARRAY_NEAR(what, cap->attn, want, (size_t)(cfg->n_layers * cfg->n_heads * n * n),
                             1e-4);
            free(want);
        } else {
            CHECK_MSG(0, "%s", err.message);
        }
        snprintf(path, sizeof path, "%s/fixtures/%s-%s-hidden.npy", root, model_name, cname);
        if (atn_npy_read_f32(path, &want, shape, &nd, 4, &err) == ATN_OK) {
            CHECK(nd == 3 && shape[0] == cfg->n_layers + 1 && shape[1] == n &&
                  shape[2] == cfg->d_model);
            snprintf(what, sizeof what, "%s/%s hidden states", model_name, cname);
            CHECK_ARRAY_NEAR(what, cap->hidden, want,
                             (size_t)((cfg->n_layers + 1) * n * cfg->d_model), 1e-4);
            free(want);
        } else {
            CHECK_MSG(0, "%s", err.message);
        }
    } else if (enc) {
        CHECK_MSG(0, "%s/%s: run failed: %s", model_name, cname, err.message);
    }
    atn_run_free(run);
    atn_encoding_free(enc);
    free(ids);
    free(types);
    free(mask);
}

static void test_model(const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/fixtures/%s.json", root, name);
    char *text = slurp(path);
    cJSON *meta = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!meta) {
        CHECK_MSG(0, "cannot read %s", path);
        return;
    }
    snprintf(path, sizeof path, "%s/models/%s/", root, name);   /* a trailing slash is fine */
    progress_log log = {0};
    atn_error err = {0};
    atn_model *m = atn_model_open_hf(path, on_progress, &log, &err);
    CHECK_MSG(m != NULL, "%s: %s", name, err.message);
    if (!m) {
        cJSON_Delete(meta);
        return;
    }
    const atn_config *c = atn_model_config(m);
    CHECK(atn_model_kind_of(m) == ATN_MODEL_BERT);
    CHECK_STR(atn_model_name(m), name);
    /* the loader's stages as atn_stage values, in order, ending with DONE */
    unsigned want = 1u << ATN_STAGE_READ_CONFIG | 1u << ATN_STAGE_MAP_WEIGHTS | 1u << ATN_STAGE_READ_VOCAB |
                    1u << ATN_STAGE_DONE;
    CHECK_MSG((log.stages & want) == want && !log.stage_back && log.last_stage == ATN_STAGE_DONE,
              "%s: stages 0x%x, last %d", name, log.stages, log.last_stage);
    CHECK_STR(atn_stage_name(ATN_STAGE_READ_CONFIG), "reading config.json");
    CHECK_STR(atn_stage_name(ATN_STAGE_CONVERT_WEIGHTS), "converting weights");
    CHECK_STR(atn_stage_name(ATN_STAGE_DONE), "done");
    CHECK_STR(atn_stage_name(ATN_STAGE_COUNT), "?");
    CHECK(c->n_layers == cJSON_GetObjectItem(meta, "n_layers")->valueint);
    CHECK(c->n_heads == cJSON_GetObjectItem(meta, "n_heads")->valueint);
    CHECK(c->d_model == cJSON_GetObjectItem(meta, "d_model")->valueint);
    CHECK(c->d_head * c->n_heads == c->d_model);
    CHECK_MSG(atn_model_has_mlm_head(m) == cJSON_IsTrue(cJSON_GetObjectItem(meta, "has_mlm_head")),
              "%s: mlm head", name);
    CHECK_MSG(log.calls >= 3 && !log.backwards && log.last == 1.0,
              "%s: progress calls %d, last %g", name, log.calls, log.last);
    CHECK(m->tokenizer != NULL);

    const cJSON *cases = cJSON_GetObjectItem(meta, "cases");
    for (const cJSON *k = cases->child; k; k = k->next)
        compare_case(name, m, k);

    /* where the weights live */
    const atn_weights *w = &m->w;
    if (strcmp(name, "f32") == 0 || strcmp(name, "sharded") == 0 || strcmp(name, "mlm") == 0) {
        CHECK_MSG(owner_of(m, w->word_emb) == 1 && owner_of(m, w->layers[0].wq) == 1 &&
                  owner_of(m, w->layers[c->n_layers - 1].ln2_b) == 1,
                  "%s: F32 weights should be used in place from the mapping", name);
    }
    if (strcmp(name, "sharded") == 0)
        CHECK_MSG(mapped_blocks(m) == 2, "sharded: %d mappings kept", mapped_blocks(m));
    if (strcmp(name, "f16") == 0 || strcmp(name, "bf16") == 0) {
        CHECK_MSG(owner_of(m, w->word_emb) == 2 && owner_of(m, w->layers[0].w2) == 2,
                  "%s: converted weights should be model-owned", name);
        CHECK_MSG(mapped_blocks(m) == 0, "%s: the mapping should be released", name);
    }
    if (strcmp(name, "odd5-mixed") == 0) {
        /* data area starts at 2 mod 4: F32 matrices are copied, F16 vectors converted */
        CHECK(owner_of(m, w->word_emb) == 2 && owner_of(m, w->layers[1].wq) == 2 &&
              owner_of(m, w->layers[1].bq) == 2);
        CHECK(((uintptr_t)w->word_emb % 4) == 0 && ((uintptr_t)w->layers[1].wv % 4) == 0);
    }
    if (strcmp(name, "mlm") == 0) {
        CHECK(w->mlm_decoder_w != NULL && owner_of(m, w->mlm_decoder_w) == 1);
        CHECK(w->mlm_decoder_b && w->mlm_ln_g && w->mlm_ln_b && w->mlm_dense_b);
    }
    if (strcmp(name, "legacy") == 0)
        CHECK(w->mlm_dense_w && w->mlm_ln_g && w->mlm_decoder_w == NULL);   /* tied */
    atn_model_free(m);
    cJSON_Delete(meta);
}

static void test_cancel(void) {
    char path[4096];
    atn_error err = {0};
    snprintf(path, sizeof path, "%s/models/f32", root);
    progress_log log = {.cancel_at = 1};
    CHECK(atn_model_open_hf(path, on_progress, &log, &err) == NULL);
    CHECK(err.status == ATN_E_CANCELLED && strstr(err.message, "cancelled"));
    snprintf(path, sizeof path, "%s/models/f16", root);
    log = (progress_log){.cancel_stage = 1 + ATN_STAGE_CONVERT_WEIGHTS};
    CHECK(atn_model_open_hf(path, on_progress, &log, &err) == NULL);
    CHECK_MSG(err.status == ATN_E_CANCELLED, "%s", err.message);
    log = (progress_log){.cancel_stage = 1 + ATN_STAGE_DONE};
    CHECK(atn_model_open_hf(path, on_progress, &log, &err) == NULL);
    CHECK(err.status == ATN_E_CANCELLED);
    /* atn_model_open on a folder goes here too */
    snprintf(path, sizeof path, "%s/models/bf16", root);
    atn_model *m = atn_model_open(path, NULL, NULL, &err);
    CHECK_MSG(m && atn_model_kind_of(m) == ATN_MODEL_BERT, "%s", err.message);
    atn_model_free(m);
}

int main(void) {
    const char *src = getenv("ATN_SOURCE_ROOT");
    snprintf(root, sizeof root, "%s/tests/hf", src ? src : ".");
    const char *models[] = {"f32", "f16", "bf16", "mlm", "legacy", "sharded", "odd3-relu",
                            "odd5-mixed"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        test_model(models[i]);
    test_cancel();
    return check_summary("test-hf-models");
}

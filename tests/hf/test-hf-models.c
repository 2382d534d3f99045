/* Opens every generated Hugging Face model folder in tests/hf/models (F32, F16, BF16,
 * GPT-2 ones from gen_gpt2.py: prefixed and bare, F16, odd heads, padded, scale switches,
 * with the causal mask, the trace's mask step and the next-token top 5 checked too;
 * "bert." prefix with a cls.* head, legacy gamma/beta names, no pooler, sharded, odd head
 * counts, relu / gelu_new / gelu_pytorch_tanh, unaligned F32 data) and compares the
 * encoder's attention and hidden states with the torch reference of gen_models.py
 * (tests/hf/fixtures) to 1e-4.  Also: F32 weights stay in the mapping, F16/BF16 and
 * unaligned data are converted into model memory, progress is reported and cancels. */
#include "check.h"
#include "common/test-files.h"
#include "common/test-models.h"
#include "core/model-private.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <unistd.h>

static char root[2048];

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
    int32_t *ids = json_ints(cJSON_GetObjectItem(c, "ids"), &n);
    int32_t *types = json_ints(cJSON_GetObjectItem(c, "type_ids"), &n2);
    int32_t *mask = json_ints(cJSON_GetObjectItem(c, "mask"), &n3);
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
    /* a causal model (GPT-2): the mask has finfo.min for every later key (and padding),
       0 elsewhere; the trace's mask step is that row; the next-token guesses after the
       last real token and after position 2 are the reference's top 5 */
    const atn_capture *cap = enc ? atn_run_capture(run) : NULL;
    if (cap && atn_model_is_causal(m)) {
        bool mask_ok = true;
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = 0; j < n; j++) {
                float want = j > i || !mask[j] ? -3.4028234663852886e38f : 0.0f;
                mask_ok &= cap->mask_add[(size_t)i * n + j] == want;
            }
        CHECK_MSG(mask_ok, "%s/%s: causal mask", model_name, cname);
        atn_trace *tr = NULL;
        int32_t qi = n / 2;
        CHECK(atn_trace_compute(m, cap, cap->n_layers - 1, cap->n_heads - 1, qi, &tr, &err) == ATN_OK);
        if (tr) {
            for (int32_t j = 0; j < n; j++) {
                CHECK_MSG(j <= qi ? tr->mask_term[j] == (mask[j] ? 0.0 : (double)-3.4028234663852886e38f)
                                  : tr->mask_term[j] == (double)-3.4028234663852886e38f,
                          "%s/%s: trace mask term %d = %g", model_name, cname, j, tr->mask_term[j]);
                if (j > qi)
                    CHECK_MSG(tr->weights[j] == 0.0, "%s/%s: trace weight of future key %d", model_name, cname, j);
            }
            CHECK_MSG(tr->max_abs_diff < 1e-6, "%s/%s: trace differs by %g", model_name, cname, tr->max_abs_diff);
            atn_trace_free(tr);
        }
        const cJSON *np = cJSON_GetObjectItem(c, "next_positions");
        const cJSON *nids = cJSON_GetObjectItem(c, "next_top_ids"), *nprobs = cJSON_GetObjectItem(c, "next_top_probs");
        CHECK_MSG(np && nids && nprobs, "%s/%s: no next-token fixture", model_name, cname);
        for (int32_t r = 0; np && r < cJSON_GetArraySize(np); r++) {
            int32_t pos = cJSON_GetArrayItem(np, r)->valueint;
            atn_prediction p[5];
            CHECK_MSG(atn_predict_next(m, cap, pos, 5, p, &err) == ATN_OK, "%s", err.message);
            const cJSON *wi = cJSON_GetArrayItem(nids, r), *wp = cJSON_GetArrayItem(nprobs, r);
            for (int32_t t = 0; t < 5; t++) {
                CHECK_MSG(p[t].id == cJSON_GetArrayItem(wi, t)->valueint, "%s/%s: next after %d, #%d id %d, "
                          "expected %d", model_name, cname, pos, t, p[t].id, cJSON_GetArrayItem(wi, t)->valueint);
                CHECK_NEAR(p[t].prob, cJSON_GetArrayItem(wp, t)->valuedouble, 1e-4);
            }
        }
        atn_prediction p1[1];
        CHECK(atn_predict_position(m, cap, 0, 1, p1, &err) == ATN_E_UNSUPPORTED &&
              strstr(err.message, "next token"));
        CHECK(atn_predict_next(m, cap, n, 1, p1, &err) == ATN_E_INVALID);
    } else if (cap) {
        atn_prediction p1[1];
        CHECK(atn_predict_next(m, cap, 0, 1, p1, &err) == ATN_E_UNSUPPORTED);
    }
    atn_run_free(run);
    atn_encoding_free(enc);
    free(ids);
    free(types);
    free(mask);
}

/* The same case through the command line: `attnscope run --ids --mask -o X.npy` against the
 * fixture, and (causal models) `attnscope predict --json --after N` against the reference's
 * next-token top 5. */
static void cli_case(const char *model_name, const cJSON *c) {
    const char *build = getenv("ATN_BUILD_ROOT");
    const char *cname = cJSON_GetObjectItem(c, "name")->valuestring;
    char ids[1024] = "", mask[1024] = "", cmd[8192], out[256], path[4096], what[256];
    int32_t n = 0;
    for (const cJSON *e = cJSON_GetObjectItem(c, "ids")->child; e; e = e->next, n++)
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%d", n ? "," : "", e->valueint);
    int32_t k = 0;
    for (const cJSON *e = cJSON_GetObjectItem(c, "mask")->child; e; e = e->next, k++)
        snprintf(mask + strlen(mask), sizeof mask - strlen(mask), "%s%d", k ? "," : "", e->valueint);
    snprintf(out, sizeof out, "/tmp/atn-hf-cli-%d.npy", (int)getpid());
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' run --model '%s/models/%s' --ids %s --mask %s -o %s",
             build ? build : "build", root, model_name, ids, mask, out);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    float *got, *want;
    int64_t gs[4], ws[4];
    int gnd, wnd;
    atn_error err = {0};
    snprintf(path, sizeof path, "%s/fixtures/%s-%s-attn.npy", root, model_name, cname);
    if (atn_npy_read_f32(out, &got, gs, &gnd, 4, &err) == ATN_OK) {
        if (atn_npy_read_f32(path, &want, ws, &wnd, 4, &err) == ATN_OK) {
            CHECK(gnd == 4 && wnd == 4 && memcmp(gs, ws, sizeof gs) == 0);
            snprintf(what, sizeof what, "%s/%s attention via attnscope run", model_name, cname);
            CHECK_ARRAY_NEAR(what, got, want, (size_t)(ws[0] * ws[1] * ws[2] * ws[3]), 1e-4);
            free(want);
        }
        free(got);
    } else {
        CHECK_MSG(0, "%s: %s", cmd, err.message);
    }
    unlink(out);
    const cJSON *np = cJSON_GetObjectItem(c, "next_positions");
    for (int32_t r = 0; np && r < cJSON_GetArraySize(np); r++) {
        int32_t pos = cJSON_GetArrayItem(np, r)->valueint;
        snprintf(cmd, sizeof cmd, "'%s/app/attnscope' predict --model '%s/models/%s' --ids %s --mask %s --json%s%s",
                 build ? build : "build", root, model_name, ids, mask, r ? " --after " : "", "");
        if (r)
            snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), "%d", pos);
        FILE *f = popen(cmd, "r");
        char buf[8192];
        size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        buf[len] = 0;
        CHECK_MSG(f && pclose(f) == 0, "%s", cmd);
        cJSON *j = cJSON_Parse(buf);
        const cJSON *o = cJSON_GetArrayItem(j, 0);
        CHECK_MSG(o && cJSON_GetObjectItem(o, "after")->valueint == pos, "%s: %s", cmd, buf);
        const cJSON *next = o ? cJSON_GetObjectItem(o, "next") : NULL;
        const cJSON *wi = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "next_top_ids"), r);
        const cJSON *wp = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "next_top_probs"), r);
        for (int32_t t = 0; next && t < 5; t++) {
            const cJSON *e = cJSON_GetArrayItem(next, t);
            CHECK_MSG(cJSON_GetObjectItem(e, "id")->valueint == cJSON_GetArrayItem(wi, t)->valueint,
                      "%s: #%d", cmd, t);
            CHECK_NEAR(cJSON_GetObjectItem(e, "prob")->valuedouble, cJSON_GetArrayItem(wp, t)->valuedouble, 1e-4);
        }
        cJSON_Delete(j);
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
    for (const cJSON *k = cases->child; k; k = k->next) {
        compare_case(name, m, k);
        if (cJSON_IsTrue(cJSON_GetObjectItem(meta, "causal")))
            cli_case(name, k);
    }

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
    const cJSON *causal = cJSON_GetObjectItem(meta, "causal");
    CHECK_MSG(atn_model_is_causal(m) == cJSON_IsTrue(causal), "%s: causal", name);
    if (cJSON_IsTrue(causal)) {
        CHECK_STR(atn_model_family_name(m), "GPT-2");
        CHECK(c->d_ffn == cJSON_GetObjectItem(meta, "d_ffn")->valueint);
        CHECK(c->type_vocab_size == 1 && !w->type_emb && !w->emb_ln_g && w->final_ln_g && w->final_ln_b);
        /* tied to wte unless config.json says tie_word_embeddings false */
        CHECK((w->lm_head_w != NULL) == cJSON_IsTrue(cJSON_GetObjectItem(meta, "untied_head")));
    } else {
        CHECK_STR(atn_model_family_name(m), "BERT");
    }
    if (strcmp(name, "gpt2-f32") == 0) {
        /* wte and the 1-D tensors (even the thirds of c_attn.bias) stay in the mapping; the
           Conv1D [in, out] matrices are transposed into model memory */
        CHECK(owner_of(m, w->word_emb) == 1 && owner_of(m, w->layers[1].bk) == 1 &&
              w->layers[1].bk == w->layers[1].bq + c->d_model && w->layers[1].bv == w->layers[1].bk + c->d_model);
        CHECK(owner_of(m, w->layers[0].wq) == 2 && owner_of(m, w->layers[0].w2) == 2);
    }
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
    source_path(root, sizeof root, "tests/hf");
    const char *models[] = {"f32", "f16", "bf16", "mlm", "legacy", "sharded", "odd3-relu",
                            "odd5-mixed", "gpt2-f32", "gpt2-f16-odd3", "gpt2-scaled5"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        test_model(models[i]);
    test_cancel();
    return check_summary("test-hf-models");
}

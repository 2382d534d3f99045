/* The encoder-decoders (T5 v1.0: ReLU, tied head; T5 v1.1 / Flan-T5: gated-gelu, untied head,
 * BF16, d_kv x heads != d_model, more decoder than encoder layers; BART: post-LN, learned
 * positions from row 2, layernorm_embedding, biases, final_logits_bias; Marian: F16, sinusoidal
 * positions, scale_embedding, swish) against gen_encdec.py's float64 torch reference written from
 * modeling_t5.py, modeling_bart.py and modeling_marian.py: every layer and head of the three
 * stacks (encoder self-attention, decoder self-attention, cross-attention), both stacks'
 * hidden states and the decoder's next-token log-probabilities (all V, every target
 * position) within 1e-4, through the engine API and `attnscope run -o x.npz` (arrays encoder,
 * decoder, cross).  Cases: a source past relative_attention_max_distance, a padded source
 * with the decoder start token alone, source and target of different lengths.  Also: T5's
 * buckets at hand-worked distances, the capture's stacks (shapes, token ids), the masks
 * (causal, the source's padding in every cross row), and config.json values refused by name. */
#include "attention-file.h"
#include "check.h"
#include "common/test-files.h"
#include "common/test-models.h"
#include "core/family.h"
#include "core/model-private.h"
#include "formats/zip.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[2048];

/* Reads fixture into a malloc'ed array of want_count floats (NULL and a failed check when the
 * file or its size is not as expected). */
static float *fixture(const char *name, const char *cname, const char *what, size_t want_count) {
    char path[4096];
    snprintf(path, sizeof path, "%s/fixtures/%s-%s-%s.npy", root, name, cname, what);
    float *x;
    int64_t shape[4];
    int nd;
    atn_error err = {0};
    if (atn_npy_read_f32(path, &x, shape, &nd, 4, &err) != ATN_OK) {
        CHECK_MSG(0, "%s", err.message);
        return NULL;
    }
    size_t total = 1;
    for (int i = 0; i < nd; i++)
        total *= (size_t)shape[i];
    CHECK_MSG(total == want_count, "%s: %zu floats, expected %zu", path, total, want_count);
    if (total != want_count) {
        free(x);
        return NULL;
    }
    return x;
}

static void compare(const char *name, const char *cname, const char *what, const float *got, size_t count) {
    float *want = fixture(name, cname, what, count);
    char label[256];
    snprintf(label, sizeof label, "%s/%s %s", name, cname, what);
    CHECK_MSG(got != NULL, "%s: nothing captured", label);
    if (want && got)
        CHECK_ARRAY_NEAR(label, got, want, count, 1e-4);
    free(want);
}

/* The run written as an attention file and read back: the three stacks bit for bit, the
 * decoder's ids and token texts, the source's tokens; the file's capture is the encoder's. */
static void attention_file_case(const char *name, const char *cname, const atn_model *m, const atn_capture *cap,
                                const int32_t *tgt, int32_t t) {
    char path[256];
    snprintf(path, sizeof path, "/tmp/atn-encdec-file-%d.safetensors", (int)getpid());
    atn_error err = {0};
    atn_attn_file_meta meta = {.model_id = name, .model = m};
    CHECK_MSG(atn_attn_file_write(path, cap, &meta, &err) == ATN_OK, "%s/%s: %s", name, cname, err.message);
    atn_attn_file *f = NULL;
    const atn_capture *fc = NULL;
    CHECK_MSG(atn_attn_file_open(path, &f, &err) == ATN_OK && atn_attn_file_capture(f, &fc, NULL, NULL, &err) == ATN_OK,
              "%s/%s: %s", name, cname, err.message);
    if (fc) {
        CHECK(atn_attn_file_get_info(f).n_stacks == 3 && fc->n_stacks == 3 && fc->n_tgt == t &&
              fc->n_dec_layers == cap->n_dec_layers && fc->n == cap->n && fc->n_layers == cap->n_layers);
        for (int k = ATN_STACK_ENCODER; k <= ATN_STACK_CROSS; k++) {
            const atn_stack *a = atn_capture_stack(cap, (atn_stack_kind)k), *b = atn_capture_stack(fc, (atn_stack_kind)k);
            CHECK(b && b->n_layers == a->n_layers && b->n_heads == a->n_heads && b->n_q == a->n_q && b->n_k == a->n_k);
            if (b && b->n_q == a->n_q && b->n_k == a->n_k)
                CHECK_MSG(!memcmp(a->attn, b->attn, (size_t)a->n_layers * a->n_heads * a->n_q * a->n_k * sizeof(float)),
                          "%s/%s: the file's %s differs from the run's", name, cname, a->name);
        }
        CHECK(!memcmp(fc->attn, cap->attn, (size_t)cap->n_layers * cap->n_heads * cap->n * cap->n * sizeof(float)));
        const atn_stack *sc = atn_capture_stack(fc, ATN_STACK_CROSS);
        CHECK(sc && !memcmp(sc->q_ids, tgt, (size_t)t * sizeof *tgt) && sc->k_ids[0] == cap->enc->ids[0]);
        int32_t nq = 0;
        const char *const *qt = atn_attn_file_query_tokens(f, &nq);
        atn_token_info ti;
        CHECK(qt && nq == t && atn_model_token_info(m, tgt[t - 1], &ti) && !strcmp(qt[t - 1], ti.text));
        for (int32_t i = 0; i < cap->n; i++)
            CHECK(!strcmp(atn_attn_file_encoding(f)->tokens[i].text, cap->enc->tokens[i].text));
    }
    atn_attn_file_free(f);
    unlink(path);
}

static void engine_case(const char *name, atn_model *m, const cJSON *c) {
    const char *cname = cJSON_GetObjectItem(c, "name")->valuestring;
    int32_t n, n2, t;
    int32_t *ids = json_ints(cJSON_GetObjectItem(c, "ids"), &n);
    int32_t *mask = json_ints(cJSON_GetObjectItem(c, "mask"), &n2);
    int32_t *tgt = json_ints(cJSON_GetObjectItem(c, "target"), &t);
    atn_error err = {0};
    atn_encoding *enc = NULL;
    CHECK_MSG(atn_model_encode_ids(m, ids, NULL, mask, n, &enc, &err) == ATN_OK, "%s: %s", name, err.message);
    atn_run *run = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    o.target_ids = tgt;
    o.n_target = t;
    if (!enc || atn_run_forward(run, enc, &o, &err) != ATN_OK) {
        CHECK_MSG(0, "%s/%s: %s", name, cname, err.message);
        goto out;
    }
    const atn_capture *cap = atn_run_capture(run);
    const atn_config *cfg = atn_model_config(m);
    int32_t L = cfg->n_layers, H = cfg->n_heads, d = cfg->d_model, Ld = atn_model_decoder_layers(m);
    CHECK(cap->n_stacks == 3 && cap->n_tgt == t && cap->n_dec_layers == Ld);
    const atn_stack *se = atn_capture_stack(cap, ATN_STACK_ENCODER), *sd = atn_capture_stack(cap, ATN_STACK_DECODER);
    const atn_stack *sc = atn_capture_stack(cap, ATN_STACK_CROSS);
    CHECK(se && sd && sc);
    if (!se || !sd || !sc)
        goto out;
    CHECK(se->n_layers == L && se->n_q == n && se->n_k == n && se->attn == cap->attn);
    CHECK(sd->n_layers == Ld && sd->n_q == t && sd->n_k == t && sd->n_heads == H);
    CHECK(sc->n_layers == Ld && sc->n_q == t && sc->n_k == n && !strcmp(sc->name, "cross"));
    CHECK(sc->q_ids[t - 1] == tgt[t - 1] && sc->k_ids[n - 1] == ids[n - 1] && sd->k_ids[0] == tgt[0]);
    compare(name, cname, "encoder", se->attn, (size_t)L * H * n * n);
    compare(name, cname, "decoder", sd->attn, (size_t)Ld * H * t * t);
    compare(name, cname, "cross", sc->attn, (size_t)Ld * H * t * n);
    compare(name, cname, "enc-hidden", cap->hidden, (size_t)(L + 1) * n * d);
    compare(name, cname, "dec-hidden", cap->dec_hidden, (size_t)(Ld + 1) * t * d);
    /* the masks as the attention shows them: nothing on a padded source token, nothing on a
       later target token */
    double leak = 0;
    for (int32_t l = 0; l < Ld; l++)
        for (int32_t h = 0; h < H; h++)
            for (int32_t i = 0; i < t; i++) {
                for (int32_t j = 0; j < n; j++)
                    if (!mask[j])
                        leak = fmax(leak, sc->attn[(((size_t)l * H + h) * t + i) * n + j]);
                for (int32_t j = i + 1; j < t; j++)
                    leak = fmax(leak, sd->attn[(((size_t)l * H + h) * t + i) * t + j]);
            }
    CHECK_MSG(leak == 0.0, "%s/%s: attention on a masked key: %g", name, cname, leak);

    /* the next-token log-probabilities after every target position, and the top 5 */
    float *lp = fixture(name, cname, "logprobs", (size_t)t * cfg->vocab_size);
    const cJSON *tops = cJSON_GetObjectItem(c, "next_top_ids");
    for (int32_t r = 0; lp && r < t; r++) {
        double worst = 0;
        for (int32_t id = 0; id < cfg->vocab_size; id++) {
            double got = 0;
            CHECK(atn_predict_next_log_prob(m, cap, r, id, &got, &err) == ATN_OK);
            worst = fmax(worst, fabs(got - lp[(size_t)r * cfg->vocab_size + id]));
        }
        CHECK_MSG(worst < 1e-4, "%s/%s: next-token log-probabilities after target %d differ by %g", name, cname, r,
                  worst);
        atn_prediction p[5];
        CHECK(atn_predict_next(m, cap, r, 5, p, &err) == ATN_OK);
        for (int32_t k = 0; k < 5; k++)
            CHECK_MSG(p[k].id == cJSON_GetArrayItem(cJSON_GetArrayItem(tops, r), k)->valueint,
                      "%s/%s: next after %d, #%d", name, cname, r, k);
    }
    double lpx;
    CHECK(atn_predict_next_log_prob(m, cap, t, 0, &lpx, &err) == ATN_E_INVALID);   /* past the target */
    free(lp);
    attention_file_case(name, cname, m, cap, tgt, t);
out:
    atn_run_free(run);
    atn_encoding_free(enc);
    free(ids);
    free(mask);
    free(tgt);
}

static void test_model(const char *name, bool gated, bool tied) {
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
    const atn_config *c = atn_model_config(m);
    CHECK_STR(atn_model_family_name(m), cJSON_GetObjectItem(meta, "family")->valuestring);
    CHECK(atn_model_is_encoder_decoder(m) && !atn_model_is_causal(m));
    CHECK(c->n_layers == cJSON_GetObjectItem(meta, "n_layers")->valueint);
    CHECK(atn_model_decoder_layers(m) == cJSON_GetObjectItem(meta, "n_dec_layers")->valueint);
    CHECK(c->d_head == cJSON_GetObjectItem(meta, "d_kv")->valueint);
    CHECK(c->gated_ffn == gated && (m->encdec.lm_head == NULL) == tied);
    CHECK(atn_model_decoder_start_id(m) == cJSON_GetObjectItem(meta, "decoder_start")->valueint);
    for (const cJSON *k = cJSON_GetObjectItem(meta, "cases")->child; k; k = k->next)
        engine_case(name, m, k);
    atn_model_free(m);
    cJSON_Delete(meta);
}

/* `attnscope run --ids S --target-ids T -o x.npz`: the three arrays, equal to the fixtures. */
static void cli_case(const char *name) {
    char path[4096], cmd[8192], out[256];
    snprintf(path, sizeof path, "%s/fixtures/%s.json", root, name);
    cJSON *meta = read_json(path);
    if (!meta)
        return;
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(meta, "cases"), 0);
    char ids[2048] = "", tgt[1024] = "";
    int32_t n = 0, t = 0;
    for (const cJSON *e = cJSON_GetObjectItem(c, "ids")->child; e; e = e->next, n++)
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%d", n ? "," : "", e->valueint);
    for (const cJSON *e = cJSON_GetObjectItem(c, "target")->child; e; e = e->next, t++)
        snprintf(tgt + strlen(tgt), sizeof tgt - strlen(tgt), "%s%d", t ? "," : "", e->valueint);
    const char *build = getenv("ATN_BUILD_ROOT");
    snprintf(out, sizeof out, "/tmp/atn-encdec-cli-%d.npz", (int)getpid());
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' run --model '%s/models/%s' --ids %s --target-ids %s -o %s",
             build ? build : "build", root, name, ids, tgt, out);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    int32_t L = cJSON_GetObjectItem(meta, "n_layers")->valueint, Ld = cJSON_GetObjectItem(meta, "n_dec_layers")->valueint;
    int32_t H = cJSON_GetObjectItem(meta, "n_heads")->valueint;
    atn_error err = {0};
    /* the npz's members, read back through the engine's ZIP reader */
    size_t zlen = 0;
    char *zbuf = NULL;
    FILE *zf = fopen(out, "rb");
    if (zf) {
        fseek(zf, 0, SEEK_END);
        zlen = (size_t)ftell(zf);
        fseek(zf, 0, SEEK_SET);
        zbuf = malloc(zlen ? zlen : 1);
        if (zbuf && fread(zbuf, 1, zlen, zf) != zlen)
            zlen = 0;
        fclose(zf);
    }
    atn_zip *zip = NULL;
    CHECK_MSG(zbuf && atn_zip_open(out, zbuf, zlen, &zip, &err) == ATN_OK, "%s: %s", out, err.message);
    CHECK(zip && atn_zip_count(zip) == 3);
    const char *members[] = {"encoder", "decoder", "cross"};
    size_t counts[] = {(size_t)L * H * n * n, (size_t)Ld * H * t * t, (size_t)Ld * H * t * n};
    for (int i = 0; i < 3; i++) {
        char npy[300];
        snprintf(npy, sizeof npy, "/tmp/atn-encdec-cli-%d-%s.npy", (int)getpid(), members[i]);
        char member[64];
        snprintf(member, sizeof member, "%s.npy", members[i]);
        const atn_zip_entry *ze = zip ? atn_zip_find(zip, member) : NULL;
        CHECK_MSG(ze != NULL, "%s: no %s", out, member);
        FILE *nf = ze ? fopen(npy, "wb") : NULL;
        if (nf) {
            fwrite(ze->data, 1, ze->size, nf);
            fclose(nf);
        }
        float *got;
        int64_t shape[4];
        int nd;
        if (atn_npy_read_f32(npy, &got, shape, &nd, 4, &err) == ATN_OK) {
            CHECK_MSG(nd == 4, "%s: %s is not 4-D", name, members[i]);
            char what[64];
            snprintf(what, sizeof what, "%s", members[i]);
            compare(name, cJSON_GetObjectItem(c, "name")->valuestring, what, got, counts[i]);
            free(got);
        } else {
            CHECK_MSG(0, "%s: %s", npy, err.message);
        }
        unlink(npy);
    }
    atn_zip_close(zip);
    free(zbuf);
    unlink(out);
    /* predict --after 1 --json: the decoder's top guess after target position 1 is the fixture's */
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' predict --model '%s/models/%s' --ids %s --target-ids %s --after 1 "
             "--top 2 --json", build ? build : "build", root, name, ids, tgt);
    FILE *pf = popen(cmd, "r");
    static char pbuf[1 << 16];
    size_t plen = pf ? fread(pbuf, 1, sizeof pbuf - 1, pf) : 0;
    pbuf[plen] = 0;
    CHECK_MSG(pf && pclose(pf) == 0, "%s", cmd);
    cJSON *pj = cJSON_Parse(pbuf);
    const cJSON *first = pj ? cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(pj, 0), "next"), 0) : NULL;
    int want_top = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(c, "next_top_ids"), 1), 0)->valueint;
    CHECK_MSG(first && cJSON_GetObjectItem(first, "id")->valueint == want_top, "%s: predict --after 1: %s", name,
              pbuf);
    cJSON_Delete(pj);
    /* info names the three stacks; the trace follows the cross-attention (test-hf-encdec-trace.c
       checks its numbers) */
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' info --model '%s/models/%s' | grep -q 'cross: *%d layers'",
             build ? build : "build", root, name, Ld);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' trace --model '%s/models/%s' --ids %s --target-ids %s --stack cross "
             "--layer 0 --head 0 --query 0 | grep -q 'Trace of the cross-attention'", build ? build : "build", root,
             name, ids, tgt);
    int trc = system(cmd);
    CHECK_MSG(trc == 0, "%s: no trace of the cross-attention", name);
    /* -o x.json: the stacks under the same names, the cross map target rows by source columns */
    char jout[300];
    snprintf(jout, sizeof jout, "/tmp/atn-encdec-cli-%d.json", (int)getpid());
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' run --model '%s/models/%s' --ids %s --target-ids %s -o %s",
             build ? build : "build", root, name, ids, tgt, jout);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    cJSON *js = read_json(jout);
    const cJSON *cr = js ? cJSON_GetObjectItem(js, "cross") : NULL;
    const cJSON *shp = cr ? cJSON_GetObjectItem(cr, "shape") : NULL;
    CHECK_MSG(shp && cJSON_GetArrayItem(shp, 0)->valueint == Ld && cJSON_GetArrayItem(shp, 2)->valueint == t &&
                  cJSON_GetArrayItem(shp, 3)->valueint == n && cJSON_GetArraySize(cJSON_GetObjectItem(js, "target_ids")) == t,
              "%s: JSON stacks", name);
    if (shp) {   /* the last layer's last head, last target row: the fixture's */
        float *want = fixture(name, cJSON_GetObjectItem(c, "name")->valuestring, "cross", (size_t)Ld * H * t * n);
        const cJSON *row = cJSON_GetArrayItem(
            cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cr, "attentions"), Ld - 1), H - 1), t - 1);
        double worst = 0;
        for (int32_t j = 0; want && row && j < n; j++)
            worst = fmax(worst, fabs(cJSON_GetArrayItem(row, j)->valuedouble - want[(((size_t)Ld * H - 1) * t + t - 1) * n + j]));
        CHECK_MSG(want && row && worst < 1e-4, "%s: JSON cross row differs by %g", name, worst);
        free(want);
    }
    cJSON_Delete(js);
    unlink(jout);
    /* a .npy cannot hold three arrays: refused with exit 2, naming .npz */
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' run --model '%s/models/%s' --ids %s -o /tmp/atn-encdec-%d.npy "
             "2>/dev/null", build ? build : "build", root, name, ids, (int)getpid());
    int rc = system(cmd);
    CHECK_MSG(WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "%s: .npy not refused (%d)", cmd, rc);
    cJSON_Delete(meta);
}

/* T5's buckets at distances worked by hand: 32 buckets, max_distance 128 (t5-small's). */
static void test_buckets(void) {
    /* bidirectional: 16 per side, exact below 8; 8 + log(r/8)/log(16) * 8 above */
    CHECK(atn_t5_bucket(0, true, 32, 128) == 0);
    CHECK(atn_t5_bucket(-7, true, 32, 128) == 7 && atn_t5_bucket(7, true, 32, 128) == 23);
    CHECK(atn_t5_bucket(-8, true, 32, 128) == 8);   /* log(1) = 0 */
    CHECK(atn_t5_bucket(-16, true, 32, 128) == 10);   /* 8 + 0.25 * 8 = 10 */
    CHECK(atn_t5_bucket(-32, true, 32, 128) == 12 && atn_t5_bucket(-64, true, 32, 128) == 14);
    CHECK(atn_t5_bucket(-127, true, 32, 128) == 15 && atn_t5_bucket(-1000, true, 32, 128) == 15);
    CHECK(atn_t5_bucket(1000, true, 32, 128) == 31);
    /* causal: later keys all in bucket 0; 32 buckets for earlier ones, exact below 16 */
    CHECK(atn_t5_bucket(5, false, 32, 128) == 0 && atn_t5_bucket(-15, false, 32, 128) == 15);
    CHECK(atn_t5_bucket(-32, false, 32, 128) == 21);   /* 16 + log(2)/log(8) * 16 = 21.3 */
    CHECK(atn_t5_bucket(-64, false, 32, 128) == 26);   /* 16 + log(4)/log(8) * 16 = 26.7 */
}

static void refuse(const char *model, const char *key, const char *value_json, const char *needle) {
    char dir[] = "/tmp/atn-encdec-XXXXXX", path[4096], cmd[8192];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "cp '%s/models/%s/'* %s/", root, model, dir);
    CHECK(system(cmd) == 0);
    snprintf(path, sizeof path, "%s/config.json", dir);
    cJSON *cfg = read_json(path);
    cJSON_DeleteItemFromObject(cfg, key);
    cJSON_AddItemToObject(cfg, key, cJSON_Parse(value_json));
    char *text = cJSON_Print(cfg);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    free(text);
    cJSON_Delete(cfg);
    atn_error err = {0};
    atn_model *m = atn_model_open_hf(dir, NULL, NULL, &err);
    CHECK_MSG(!m && strstr(err.message, key) && strstr(err.message, needle), "%s=%s: %s", key, value_json,
              err.message);
    atn_model_free(m);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

int main(void) {
    source_path(root, sizeof root, "tests/hf");
    char abs[PATH_MAX];
    if (realpath(root, abs))
        snprintf(root, sizeof root, "%.2000s", abs);
    test_buckets();
    test_model("t5-v1-f32", false, true);
    test_model("t5-v11-bf16", true, false);
    test_model("bart-f32", false, true);
    test_model("marian-f16", false, true);
    cli_case("t5-v1-f32");
    cli_case("bart-f32");
    cli_case("marian-f16");
    refuse("t5-v1-f32", "feed_forward_proj", "\"gated-tanh\"", "gated-tanh");
    refuse("t5-v1-f32", "is_encoder_decoder", "false", "encoder-only");
    refuse("t5-v1-f32", "relative_attention_num_buckets", "2", "logarithmic");
    refuse("bart-f32", "decoder_attention_heads", "2", "one head count");
    refuse("bart-f32", "normalize_before", "true", "pre-norm");
    refuse("bart-f32", "activation_function", "\"tanh\"", "tanh");
    refuse("marian-f16", "share_encoder_decoder_embeddings", "false", "vocabulary of its own");
    refuse("marian-f16", "decoder_vocab_size", "50", "vocabulary of its own");
    return check_summary("test-hf-encdec");
}

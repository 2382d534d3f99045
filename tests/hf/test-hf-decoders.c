/* The rotary decoders (Llama, Qwen2, Qwen3, Mistral) against gen_decoders.py's float64 torch
 * reference written from Hugging Face's modeling files: the attention, every hidden state
 * and the next-token log-probabilities (all V) after two positions within 1e-4, through the
 * engine API and through `attnscope run` / `attnscope predict --after`.  Folders in exact HF
 * layout: F32 and BF16, two shards, tied and untied heads, GQA 1:1 / 2:1 / 4:1 and MQA,
 * attention_bias and mlp_bias, Qwen2's q/k/v biases, Qwen3's q/k norms with head_dim apart
 * from hidden / heads, llama3 and linear rope scaling, Mistral's sliding window over a
 * length past it, left padding, one token.  Also: the run's mask (causal, window, padding),
 * the trace's K/V head and its agreement with the capture, the packed ops never taken for
 * these models, and the config.json values that change the numbers and are refused by name. */
#include "check.h"
#include "common/test-files.h"
#include "common/test-models.h"
#include "core/family.h"
#include "core/model-private.h"
#include "forward/encoder.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[2048];

static const float MIN = -3.4028234663852886e38f;

static void compare_npy(const char *what, const char *fixture, const float *got, int ndim_want, size_t count) {
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
    CHECK_MSG(nd == ndim_want && total == count, "%s: fixture shape", what);
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
    compare_npy(what, path, cap->attn, 4, (size_t)L * H * n * n);
    snprintf(path, sizeof path, "%s/fixtures/%s-%s-hidden.npy", root, name, cname);
    snprintf(what, sizeof what, "%s/%s hidden states", name, cname);
    compare_npy(what, path, cap->hidden, 3, (size_t)(L + 1) * n * d);

    /* the capture's widths and mask: causal, padding and the window, finfo.min each */
    int32_t KV = cJSON_GetObjectItem(meta, "n_kv_heads")->valueint, hd = cJSON_GetObjectItem(meta, "d_head")->valueint;
    int32_t window = cJSON_GetObjectItem(meta, "window")->valueint;
    CHECK(cap->n_kv_heads == KV && cap->d_q == H * hd && cap->d_kv == KV * hd && cap->d_head == hd);
    /* Gemma: each layer's own mask, the window only in the sliding layers */
    const cJSON *local = cJSON_GetObjectItem(meta, "local_layers");
    const cJSON *lw_item = cJSON_GetObjectItem(meta, "local_window");
    int32_t local_window = lw_item ? lw_item->valueint : 0;
    for (int32_t l = 0; l < L; l++) {
        bool slides = local && cJSON_GetArrayItem(local, l)->valueint;
        int32_t win = slides ? local_window : window;
        const float *lm = atn_capture_layer_mask(cap, l);
        bool mask_ok = lm != NULL;
        for (int32_t i = 0; lm && i < n; i++)
            for (int32_t j = 0; j < n; j++) {
                bool hidden = j > i || !mask[j] || (win > 0 && i - j >= win);
                mask_ok &= lm[(size_t)i * n + j] == (hidden ? MIN : 0.0f);
            }
        CHECK_MSG(mask_ok, "%s/%s: layer %d's mask", name, cname, l);
    }

    /* the next-token log-probabilities of every id, and the top 5 */
    const cJSON *np = cJSON_GetObjectItem(c, "next_positions"), *lps = cJSON_GetObjectItem(c, "next_log_probs");
    const cJSON *tops = cJSON_GetObjectItem(c, "next_top_ids");
    for (int32_t r = 0; r < cJSON_GetArraySize(np); r++) {
        int32_t pos = cJSON_GetArrayItem(np, r)->valueint;
        const cJSON *lp = cJSON_GetArrayItem(lps, r);
        double worst = 0;
        for (int32_t id = 0; id < cfg->vocab_size; id++) {
            double got = 0;
            CHECK(atn_predict_next_log_prob(m, cap, pos, id, &got, &err) == ATN_OK);
            double diff = fabs(got - cJSON_GetArrayItem(lp, id)->valuedouble);
            worst = diff > worst ? diff : worst;
        }
        CHECK_MSG(worst < 1e-4, "%s/%s: next-token log-probabilities after %d differ by %g", name, cname, pos, worst);
        atn_prediction p[5];
        CHECK(atn_predict_next(m, cap, pos, 5, p, &err) == ATN_OK);
        for (int32_t t = 0; t < 5; t++)
            CHECK_MSG(p[t].id == cJSON_GetArrayItem(cJSON_GetArrayItem(tops, r), t)->valueint,
                      "%s/%s: next after %d, #%d", name, cname, pos, t);
    }

    /* heads on demand (the run keeps Q, K, V, not [L][H][n][n]): every head made again
       equals the full capture's, grouped K/V heads and Qwen3's widths included */
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
    /* the trace: the query head's K/V head, and the capture's probabilities recomputed */
    atn_trace *tr = NULL;
    atn_status st = atn_trace_compute(m, cap, L - 1, H - 1, n - 1, &tr, &err);
    {
        CHECK_MSG(st == ATN_OK, "%s: %s", name, err.message);
        if (tr) {
            /* the concatenation is n_heads x head_dim wide (Qwen3's: 48 over d_model 32), and
               its projection is the captured attention output of that token */
            CHECK(tr->d_concat == H * hd);
            double wo = 0;
            const float *ao = cap->attn_out + ((size_t)(L - 1) * n + n - 1) * d;
            for (int32_t x = 0; x < d; x++)
                wo = fmax(wo, fabs(tr->projected[x] - ao[x]));
            CHECK_MSG(wo < 1e-4, "%s/%s: the trace's projection differs from the capture by %g", name, cname, wo);
            CHECK(tr->kv_head == (H - 1) / (H / KV));
            CHECK_MSG(tr->max_abs_diff < 1e-6, "%s/%s: trace differs by %g", name, cname, tr->max_abs_diff);
        }
        if (tr && !m->rotary.on) {   /* BLOOM: ALiBi's slopes in the capture (the trace's bias) */
            const cJSON *sl = cJSON_GetObjectItem(meta, "alibi_slopes");
            CHECK_MSG(cap->alibi_slopes && sl && cJSON_GetArraySize(sl) == H, "%s: no ALiBi slopes", name);
            for (int32_t h = 0; cap->alibi_slopes && h < H; h++)
                CHECK_MSG(fabs(cap->alibi_slopes[h] - cJSON_GetArrayItem(sl, h)->valuedouble) <=
                              2e-7 * cJSON_GetArrayItem(sl, h)->valuedouble,
                          "%s: slope %d %.9g, build_alibi_tensor's %.9g", name, h, cap->alibi_slopes[h],
                          cJSON_GetArrayItem(sl, h)->valuedouble);
        } else if (tr) {
            for (int32_t c2 = 0; c2 < hd; c2++)   /* its keys are the K/V head's rotated rows */
                CHECK(tr->keys[(size_t)(n - 1) * hd + c2] ==
                      cap->k[((size_t)(L - 1) * n + n - 1) * cap->d_kv + (size_t)tr->kv_head * hd + c2]);
            /* step 0: q and the keys before the rotation, recomputed from the layer's input,
               turned by the angles (the query's; a key's at its own position) give the
               captured, rotated ones */
            CHECK_MSG(tr->q_unrotated && tr->keys_unrotated && tr->angles && tr->inv_freq, "%s: no step 0", name);
            double worst = 0;
            for (int32_t j = 0; tr->q_unrotated && j <= n; j++) {   /* j == n: the query */
                const double *x = j < n ? tr->keys_unrotated + (size_t)j * hd : tr->q_unrotated;
                const double *want = j < n ? tr->keys + (size_t)j * hd : tr->q;
                for (int32_t i = 0; i < hd / 2; i++) {
                    double a = j < n ? (double)((float)j * tr->inv_freq[i]) : tr->angles[i];
                    double r0 = x[i] * cos(a) - x[i + hd / 2] * sin(a), r1 = x[i + hd / 2] * cos(a) + x[i] * sin(a);
                    worst = fmax(worst, fmax(fabs(r0 - want[i]), fabs(r1 - want[i + hd / 2])));
                }
            }
            CHECK_MSG(worst < 1e-4, "%s/%s: q, k before the rotation, turned, differ by %g", name, cname, worst);
            /* the query's angles: its position n - 1 times transformers' frequencies (the
               traced layer L - 1 is global in every fixture) */
            const cJSON *inv = cJSON_GetObjectItem(meta, "inv_freq");
            for (int32_t i = 0; tr->angles && i < hd / 2; i++)
                CHECK_NEAR(tr->angles[i], (n - 1) * cJSON_GetArrayItem(inv, i)->valuedouble, 1e-5 * n);
        }
    }
    atn_trace_free(tr);
    /* a sliding layer with a base of its own (Gemma 3's layer 0): the trace agrees with the
       capture and turns q by rope_local_base_freq's frequencies */
    const cJSON *il = cJSON_GetObjectItem(meta, "inv_freq_local");
    if (il && local && cJSON_GetArrayItem(local, 0)->valueint && m->rotary.inv_freq_local) {
        atn_trace *t0 = NULL;
        CHECK(atn_trace_compute(m, cap, 0, 0, n - 1, &t0, &err) == ATN_OK);
        CHECK_MSG(t0 && t0->max_abs_diff < 1e-6, "%s/%s: layer 0's trace differs", name, cname);
        for (int32_t i = 0; t0 && t0->angles && i < hd / 2; i++)
            CHECK_NEAR(t0->angles[i], (n - 1) * cJSON_GetArrayItem(il, i)->valuedouble, 1e-5 * n);
        CHECK(t0 && t0->angles);
        atn_trace_free(t0);
    }
out:
    atn_run_free(run);
    atn_encoding_free(enc);
    free(ids);
    free(types);
    free(mask);
}

/* The same case through the command line: run, trace --json (step 0), predict --after. */
static void cli_case(const char *name, const cJSON *c, int32_t kv_of_3, int32_t d_heads, bool rotary) {
    const char *build = getenv("ATN_BUILD_ROOT");
    const char *cname = cJSON_GetObjectItem(c, "name")->valuestring;
    char ids[1024] = "", mask[1024] = "", cmd[8192], out[256], path[4096], what[256];
    int32_t n = 0, k = 0;
    for (const cJSON *e = cJSON_GetObjectItem(c, "ids")->child; e; e = e->next, n++)
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%d", n ? "," : "", e->valueint);
    for (const cJSON *e = cJSON_GetObjectItem(c, "mask")->child; e; e = e->next, k++)
        snprintf(mask + strlen(mask), sizeof mask - strlen(mask), "%s%d", k ? "," : "", e->valueint);
    snprintf(out, sizeof out, "/tmp/atn-dec-cli-%d.npy", (int)getpid());
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
        compare_npy(what, path, got, 4, (size_t)(gs[0] * gs[1] * gs[2] * gs[3]));
        free(got);
    } else {
        CHECK_MSG(0, "%s: %s", cmd, err.message);
    }
    unlink(out);
    /* attnscope trace --json: step 0 (the K/V head, q and k before the rotation, the angles) */
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' trace --model '%s/models/%s' --ids %s --mask %s --layer 1 "
             "--head 3 --query %d --json", build ? build : "build", root, name, ids, mask, n - 1);
    FILE *tf = popen(cmd, "r");
    static char tbuf[1 << 20];
    size_t tlen = tf ? fread(tbuf, 1, sizeof tbuf - 1, tf) : 0;
    tbuf[tlen] = 0;
    int trc = tf ? pclose(tf) : -1;
    cJSON *tj = cJSON_Parse(tbuf);
    {
        const cJSON *kvh = cJSON_GetObjectItem(tj, "kv_head"), *qu = cJSON_GetObjectItem(tj, "q_unrotated");
        const cJSON *ang = cJSON_GetObjectItem(tj, "angles"), *ku = cJSON_GetObjectItem(tj, "keys_unrotated");
        CHECK_MSG(trc == 0 && tj, "%s: %s", cmd, tbuf);
        CHECK_MSG(!rotary || (kvh && qu && ang && ku), "%s: no step 0: %s", cmd, tbuf);
        CHECK_MSG(!rotary || (kvh && kvh->valueint == kv_of_3), "%s: K/V head of head 3", cmd);
        CHECK(!rotary ||
              (ku && cJSON_GetArraySize(ku) == n && ang && cJSON_GetArraySize(ang) * 2 == cJSON_GetArraySize(qu)));
        if (!rotary) {   /* BLOOM: the trace's ALiBi term, -slope |i - j|: 0 on the query itself */
            const cJSON *al = cJSON_GetObjectItem(tj, "alibi");
            CHECK_MSG(al && cJSON_GetArraySize(al) == n && cJSON_GetArrayItem(al, n - 1)->valuedouble == 0 &&
                          (n == 1 || cJSON_GetArrayItem(al, 0)->valuedouble < 0),
                      "%s: the ALiBi term", cmd);
        }
        /* Gemma 2's soft-cap in the trace: the scaled scores pass the cap, the capped ones stay inside */
        const cJSON *cap_j = cJSON_GetObjectItem(tj, "softcap"), *capped = cJSON_GetObjectItem(tj, "capped");
        if (strcmp(name, "gemma2-f32") == 0) {
            CHECK_MSG(cap_j && cap_j->valuedouble == 2.0 && capped && cJSON_GetArraySize(capped) == n,
                      "%s: no soft-cap in the trace", cmd);
            double over = 0;
            for (const cJSON *e = capped ? capped->child : NULL; e; e = e->next)
                CHECK(fabs(e->valuedouble) < 2.0);
            for (const cJSON *e = cJSON_GetObjectItem(tj, "scaled")->child; e; e = e->next)
                over = fmax(over, fabs(e->valuedouble));
            CHECK_MSG(over > 2.0, "%s: the scaled scores stay under the cap (%g)", cmd, over);
        } else if (strcmp(name, "gemma2-bf16") == 0) {   /* Gemma2Config's default cap, 50 */
            CHECK_MSG(cap_j && cap_j->valuedouble == 50.0 && capped, "%s: no default soft-cap", cmd);
        } else {
            CHECK_MSG(!cap_j && !capped, "%s: a soft-cap without one", cmd);
        }
        const cJSON *cc = cJSON_GetObjectItem(tj, "concat"), *qq = cJSON_GetObjectItem(tj, "q");
        CHECK_MSG(cc && qq && cJSON_GetArraySize(cc) == cJSON_GetArraySize(qq) * d_heads, "%s: concat", cmd);
    }
    cJSON_Delete(tj);
    const cJSON *np = cJSON_GetObjectItem(c, "next_positions");
    for (int32_t r = 0; r < cJSON_GetArraySize(np); r++) {
        int32_t pos = cJSON_GetArrayItem(np, r)->valueint;
        snprintf(cmd, sizeof cmd, "'%s/app/attnscope' predict --model '%s/models/%s' --ids %s --mask %s --json "
                 "--after %d", build ? build : "build", root, name, ids, mask, pos);
        FILE *f = popen(cmd, "r");
        char buf[8192];
        size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        buf[len] = 0;
        CHECK_MSG(f && pclose(f) == 0, "%s", cmd);
        cJSON *j = cJSON_Parse(buf);
        const cJSON *o = cJSON_GetArrayItem(j, 0);
        const cJSON *next = o ? cJSON_GetObjectItem(o, "next") : NULL;
        const cJSON *want = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(c, "next_top_ids"), r), 0);
        const cJSON *lp = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "next_log_probs"), r);
        const cJSON *first = next ? cJSON_GetArrayItem(next, 0) : NULL;
        CHECK_MSG(first && cJSON_GetObjectItem(first, "id")->valueint == want->valueint, "%s: %s", cmd, buf);
        if (first)
            CHECK_NEAR(cJSON_GetObjectItem(first, "prob")->valuedouble,
                       exp(cJSON_GetArrayItem(lp, want->valueint)->valuedouble), 1e-4);
        cJSON_Delete(j);
    }
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
    const atn_config *c = atn_model_config(m);
    CHECK_STR(atn_model_family_name(m), cJSON_GetObjectItem(meta, "family")->valuestring);
    bool bloom = m->family->alibi;
    CHECK(c->n_layers == cJSON_GetObjectItem(meta, "n_layers")->valueint);
    CHECK(c->n_heads == cJSON_GetObjectItem(meta, "n_heads")->valueint);
    CHECK(c->d_head == cJSON_GetObjectItem(meta, "d_head")->valueint);
    CHECK(c->d_ffn == cJSON_GetObjectItem(meta, "d_ffn")->valueint);
    if (bloom) {   /* LayerNorm on the embeddings, pre-LN with ln_f, bloom_gelu, no positions, tied */
        CHECK(atn_model_is_causal(m) && !c->gated_ffn && c->act == ATN_ACT_GELU_TANH && !m->rotary.on);
        CHECK(!m->w.pos_emb && m->w.emb_ln_g && m->w.emb_ln_b && m->w.final_ln_g && m->w.final_ln_b);
    } else {
        bool gemma = m->family->gemma;
        CHECK(atn_model_is_causal(m) && c->gated_ffn && c->act == (gemma ? ATN_ACT_GELU_TANH : ATN_ACT_SILU));
        CHECK(c->n_kv_heads == cJSON_GetObjectItem(meta, "n_kv_heads")->valueint);
        CHECK(m->rotary.on && m->rotary.window == cJSON_GetObjectItem(meta, "window")->valueint);
        CHECK(!m->w.pos_emb && !m->w.emb_ln_g && m->w.final_ln_g && !m->w.final_ln_b);
        /* the sliding layers (Gemma's, Qwen2's from max_window_layers on) and their window */
        const cJSON *ll = cJSON_GetObjectItem(meta, "local_layers");
        CHECK((m->rotary.local_layers != NULL) == (ll != NULL && m->rotary.local_window > 0));
        for (int32_t l = 0; ll && l < c->n_layers; l++)
            CHECK_MSG(atn_rotary_local_layer(&m->rotary, l) == (cJSON_GetArrayItem(ll, l)->valueint != 0),
                      "%s: layer %d sliding", name, l);
        if (ll)
            CHECK(m->rotary.local_window == cJSON_GetObjectItem(meta, "local_window")->valueint);
        if (gemma) {   /* the keys atn_hf_gemma_config read, as the reference used them */
            CHECK(m->rotary.attn_softcap == (float)cJSON_GetObjectItem(meta, "attn_softcap")->valuedouble);
            CHECK(m->rotary.final_softcap == (float)cJSON_GetObjectItem(meta, "final_softcap")->valuedouble);
            CHECK(m->rotary.query_scale == (float)cJSON_GetObjectItem(meta, "query_scale")->valuedouble);
            CHECK_MSG(m->rotary.embed_scale == (float)cJSON_GetObjectItem(meta, "embed_scale")->valuedouble,
                      "%s: embed_scale %.9g", name, m->rotary.embed_scale);
            CHECK(m->w.layers[0].post_attn_g && m->w.layers[0].post_ffn_g);
            const cJSON *il = cJSON_GetObjectItem(meta, "inv_freq_local");
            const float *loc = m->rotary.inv_freq_local ? m->rotary.inv_freq_local : m->rotary.inv_freq;
            for (int32_t i = 0; i < cJSON_GetArraySize(il); i++)
                CHECK_MSG(fabs(loc[i] - cJSON_GetArrayItem(il, i)->valuedouble) <=
                              2e-7 * cJSON_GetArrayItem(il, i)->valuedouble,
                          "%s: local inv_freq[%d] %.9g", name, i, loc[i]);
        }
    }
    CHECK((m->w.lm_head_w != NULL) == cJSON_IsTrue(cJSON_GetObjectItem(meta, "untied_head")));
    /* the rotation's frequencies after the scaling, as transformers makes them in float32 */
    const cJSON *inv = cJSON_GetObjectItem(meta, "inv_freq");
    for (int32_t i = 0; inv && i < cJSON_GetArraySize(inv); i++)
        CHECK_MSG(fabs(m->rotary.inv_freq[i] - cJSON_GetArrayItem(inv, i)->valuedouble) <=
                      2e-7 * cJSON_GetArrayItem(inv, i)->valuedouble,
                  "%s: inv_freq[%d] %.9g, expected %.9g", name, i, m->rotary.inv_freq[i],
                  cJSON_GetArrayItem(inv, i)->valuedouble);
    /* the AVX-512 packed ops have no rotation, RMSNorm or gated MLP: never taken */
    CHECK(!atn_cpu_fast_applies(m));
    /* every case through the engine; the first (and the one past the window) through the CLI */
    for (const cJSON *k = cJSON_GetObjectItem(meta, "cases")->child; k; k = k->next) {
        engine_case(name, m, meta, k);
        const char *cname = cJSON_GetObjectItem(k, "name")->valuestring;
        if (strcmp(cname, "single") == 0 || strcmp(cname, "long") == 0)
            cli_case(name, k, bloom ? 3 : 3 / (c->n_heads / c->n_kv_heads), c->n_heads, !bloom);
    }
    atn_model_free(m);
    cJSON_Delete(meta);
}

/* A copy of a model folder whose config.json has the keys of the JSON object `set` set. */
static void folder_with(const char *model, const char *set, char *dir, size_t size) {
    static int count;
    snprintf(dir, size, "/tmp/atn-dec-%d-%d", (int)getpid(), count++);
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
    refused("llama-f32", "{\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0}}", ATN_E_UNSUPPORTED,
            "\"yarn\"");
    refused("llama-f32", "{\"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2.0}}", ATN_E_UNSUPPORTED,
            "rope_scaling");
    refused("llama-f32", "{\"partial_rotary_factor\": 0.5}", ATN_E_UNSUPPORTED, "partial_rotary_factor");
    refused("llama-f32", "{\"num_key_value_heads\": 3}", ATN_E_FORMAT, "num_key_value_heads");
    refused("llama-f32", "{\"head_dim\": 7}", ATN_E_FORMAT, "head_dim");
    refused("llama-f32", "{\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0}}", ATN_E_FORMAT,
            "low_freq_factor");
    refused("llama-f32", "{\"hidden_act\": \"gelu_fast\"}", ATN_E_UNSUPPORTED, "hidden_act");
    /* sliding layers listed while use_sliding_window is false: Qwen2Config's sliding_window
       is then None, and transformers' sliding mask raises; refused by name */
    refused("qwen2-f32", "{\"layer_types\": [\"sliding_attention\", \"full_attention\"]}", ATN_E_UNSUPPORTED,
            "use_sliding_window");
    refused("mistral-window", "{\"layer_types\": [\"full_attention\", \"sliding_attention\"]}",
            ATN_E_UNSUPPORTED, "layer_types");
    /* use_sliding_window with max_window_layers at the layer count slides nowhere (as HF's
       layer_types); at 0, everywhere, as Mistral's */
    char dir[512], path[4096];
    atn_error err = {0};
    folder_with("qwen2-f32", "{\"use_sliding_window\": true, \"max_window_layers\": 2}", dir, sizeof dir);
    atn_model *m = atn_model_open_hf(dir, NULL, NULL, &err);
    CHECK_MSG(m && m->rotary.window == 0, "%s", err.message);
    atn_model_free(m);
    folder_with("qwen2-f32", "{\"use_sliding_window\": true, \"max_window_layers\": 0, \"sliding_window\": 3}",
                dir, sizeof dir);
    m = atn_model_open_hf(dir, NULL, NULL, &err);
    CHECK_MSG(m && m->rotary.window == 3, "%s", err.message);
    atn_model_free(m);
    folder_with("qwen2-f32", "{\"use_sliding_window\": true, \"layer_types\": [\"sliding_attention\", "
                "\"sliding_attention\"]}", dir, sizeof dir);
    m = atn_model_open_hf(dir, NULL, NULL, &err);
    CHECK_MSG(m && m->rotary.window == 4096 && !m->rotary.local_layers, "%s", err.message);
    atn_model_free(m);
    /* layer_types naming one sliding layer of two: that layer only, with the window */
    folder_with("qwen2-f32", "{\"use_sliding_window\": true, \"sliding_window\": 5, \"layer_types\": "
                "[\"full_attention\", \"sliding_attention\"]}", dir, sizeof dir);
    m = atn_model_open_hf(dir, NULL, NULL, &err);
    CHECK_MSG(m && m->rotary.window == 0 && m->rotary.local_window == 5 && !atn_rotary_local_layer(&m->rotary, 0) &&
                  atn_rotary_local_layer(&m->rotary, 1),
              "%s", err.message);
    /* reduced precision is refused by name; the GPU refusal names the family (AUTO falls back) */
    snprintf(path, sizeof path, "%s/models/llama-f32", root);
    atn_model_free(m);
    m = atn_model_open_hf(path, NULL, NULL, &err);
    int32_t ids[3] = {5, 6, 7};
    atn_encoding *enc = NULL;
    CHECK(m && atn_model_encode_ids(m, ids, NULL, NULL, 3, &enc, &err) == ATN_OK);
    atn_run *run = atn_run_new(m);
    atn_run_options o;
    atn_run_options_init(&o);
    o.precision = ATN_PRECISION_BF16;
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_E_UNSUPPORTED && strstr(err.message, "Llama"));
    /* the GPU: refused by name before the module is asked (so with or without a GPU);
       AUTO runs the CPU and keeps that reason */
    atn_run_options_init(&o);
    o.device = ATN_DEVICE_CUDA;
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_E_UNSUPPORTED && strstr(err.message, "CUDA") &&
          strstr(err.message, "Llama"));
    o.device = ATN_DEVICE_AUTO;
    CHECK_MSG(atn_run_forward(run, enc, &o, &err) == ATN_OK, "%s", err.message);
    CHECK(atn_run_device_used(run) == ATN_DEVICE_CPU && atn_run_fallback_reason(run) &&
          strstr(atn_run_fallback_reason(run), "Llama"));
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(m);
    /* BLOOM: the residual after the LayerNorm and slow_but_exact's slices are refused by
       name; pretraining_tp alone changes nothing (the plain dense products) */
    refused("bloom-6heads", "{\"apply_residual_connection_post_layernorm\": true}", ATN_E_UNSUPPORTED,
            "apply_residual_connection_post_layernorm");
    refused("bloom-6heads", "{\"pretraining_tp\": 2, \"slow_but_exact\": true}", ATN_E_UNSUPPORTED,
            "slow_but_exact");
    /* Gemma: what would change the numbers and is not computed is refused by name */
    refused("gemma3-f32", "{\"use_bidirectional_attention\": true}", ATN_E_UNSUPPORTED,
            "use_bidirectional_attention");
    refused("gemma3-f32", "{\"attn_logit_softcapping\": 50.0}", ATN_E_UNSUPPORTED, "attn_logit_softcapping");
    refused("gemma2-f32", "{\"layer_types\": [\"sliding_attention\", \"chunked_attention\"]}",
            ATN_E_UNSUPPORTED, "layer_types");
    refused("gemma2-f32", "{\"sliding_window\": null}", ATN_E_UNSUPPORTED, "sliding_window");
    refused("gemma2-f32", "{\"hidden_activation\": \"gelu_fast\"}", ATN_E_UNSUPPORTED, "hidden_activation");
    refused("gemma2-f32", "{\"query_pre_attn_scalar\": 0}", ATN_E_FORMAT, "query_pre_attn_scalar");
    refused("gemma3-f32", "{\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 8.0}}", ATN_E_UNSUPPORTED,
            "\"yarn\"");
    folder_with("bloom-6heads", "{\"pretraining_tp\": 2}", dir, sizeof dir);
    m = atn_model_open_hf(dir, NULL, NULL, &err);
    CHECK_MSG(m && m->family->alibi, "%s", err.message);
    atn_model_free(m);
    /* the what-if ALiBi on a model that has its own is refused; the GPU refuses BLOOM by
       name and AUTO falls back */
    snprintf(path, sizeof path, "%s/models/bloom-6heads", root);
    m = atn_model_open_hf(path, NULL, NULL, &err);
    enc = NULL;
    CHECK(m && atn_model_encode_ids(m, ids, NULL, NULL, 3, &enc, &err) == ATN_OK);
    run = atn_run_new(m);
    atn_interventions iv;
    atn_interventions_init(&iv);
    iv.alibi = true;
    atn_run_options_init(&o);
    o.interventions = &iv;
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_E_INVALID && strstr(err.message, "BLOOM") &&
          strstr(err.message, "ALiBi"));
    atn_run_options_init(&o);
    o.device = ATN_DEVICE_CUDA;
    CHECK(atn_run_forward(run, enc, &o, &err) == ATN_E_UNSUPPORTED && strstr(err.message, "BLOOM"));
    o.device = ATN_DEVICE_AUTO;
    CHECK_MSG(atn_run_forward(run, enc, &o, &err) == ATN_OK, "%s", err.message);
    CHECK(atn_run_device_used(run) == ATN_DEVICE_CPU && atn_run_fallback_reason(run) &&
          strstr(atn_run_fallback_reason(run), "BLOOM"));
    atn_run_free(run);
    atn_encoding_free(enc);
    atn_model_free(m);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf /tmp/atn-dec-%d-*", (int)getpid());
    CHECK(system(cmd) == 0);
}

int main(void) {
    source_path(root, sizeof root, "tests/hf");
    char abs[PATH_MAX];
    if (realpath(root, abs))   /* the refusal cases link to the model files from /tmp */
        snprintf(root, sizeof root, "%.2000s", abs);
    const char *models[] = {"llama-f32", "llama-bf16-mqa", "llama-sharded", "qwen2-f32", "qwen3-f32",
                            "mistral-window", "bloom-6heads", "bloom-8heads-bf16", "gemma2-f32", "gemma2-bf16",
                            "gemma3-f32", "qwen2-window-some"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        test_model(models[i]);
    test_refusals();
    return check_summary("test-hf-decoders");
}

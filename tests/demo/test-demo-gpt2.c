/* The built-in causal demo model (data/models/demo-gpt2) against its trainer's float64
 * reference (data/models/demo-gpt2/train/check/, written by train.py through the
 * from-scratch GPT-2 forward of tests/hf/gen_gpt2.py on the weights as saved):
 *
 *  - every held-out paragraph tokenizes to the ids Hugging Face's tokenizers gave
 *    (check/heldout_ids.json, from bpe.js; the first 64, the model's positions);
 *  - for the three check cases: attention within 1e-4 of the reference, the log-softmax of
 *    the logits at every position and for every one of the 1024 tokens within LOGP_TOL, and
 *    the next-token top 5 after every position the reference's (ids in order, probabilities
 *    within 1e-5; a swap is allowed only between reference probabilities closer than 1e-5);
 *  - the head figures, measured here from the engine's own captures: each head's mean
 *    attention on the previous token and on the first token over the held-out paragraphs,
 *    and its induction score over the 50 fresh repeated random runs of
 *    check/induction_ids.json, within 5e-4 of what the trainer measured
 *    (train/metrics.json); the best previous-token head >= 0.5 (in layer 0) and the best
 *    induction head >= 0.3 (in layer 1), issue 16's targets.
 *
 * LOGP_TOL: the engine runs float32, the reference float64 on the same F32 weights.  The
 * logits are h_L . wte rows over 64 dims, |h_L| about 8 after ln_f and |wte| about 1, and
 * float32 keeps about 7 digits, so each logit is good to a few 1e-6 and a log-softmax to
 * about twice that; the trainer's own float32 forward differed from the reference by
 * 5e-6.  1e-4 leaves a margin of 10x over what was measured and is the bound the family
 * tests use for hidden states.
 *
 * Usage: test-demo-gpt2 SOURCE_ROOT (the built-in model is found through
 * ATTNSCOPE_DATADIR, as the test environment sets it). */
#include "attnscope.h"
#include "check.h"
#include "common/test-files.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEN = 64 };
static const double LOGP_TOL = 1e-4;

/* A little-endian .npy of '<f4' or '<f8' as doubles; *count values. */
static double *read_npy(const char *path, size_t *count) {
    size_t len;
    char *b = slurp(path, &len);
    *count = 0;
    if (!b || len < 10 || memcmp(b, "\x93NUMPY", 6) != 0) {
        fprintf(stderr, "cannot read %s\n", path);
        free(b);
        return NULL;
    }
    size_t hl = b[6] == 1 ? (size_t)(unsigned char)b[8] | (size_t)(unsigned char)b[9] << 8
                          : (size_t)(unsigned char)b[8] | (size_t)(unsigned char)b[9] << 8 |
                                (size_t)(unsigned char)b[10] << 16 | (size_t)(unsigned char)b[11] << 24;
    size_t off = (b[6] == 1 ? 10 : 12) + hl;
    bool f8 = strstr(b + 10, "'<f8'") != NULL && strstr(b + 10, "'<f8'") < b + off;
    size_t w = f8 ? 8 : 4, n = (len - off) / w;
    double *out = malloc(n * sizeof *out);
    for (size_t i = 0; i < n; i++) {
        if (f8) {
            double v;
            memcpy(&v, b + off + i * 8, 8);
            out[i] = v;
        } else {
            float v;
            memcpy(&v, b + off + i * 4, 4);
            out[i] = v;
        }
    }
    free(b);
    *count = n;
    return out;
}

static const atn_capture *run_ids(atn_run *run, const atn_model *m, const int32_t *ids, int32_t n,
                                  atn_encoding **enc) {
    atn_error err = {0};
    if (atn_model_encode_ids(m, ids, NULL, NULL, n, enc, &err) != ATN_OK) {
        fprintf(stderr, "encode: %s\n", err.message);
        return NULL;
    }
    atn_run_options o;
    atn_run_options_init(&o);
    if (atn_run_forward(run, *enc, &o, &err) != ATN_OK) {
        fprintf(stderr, "forward: %s\n", err.message);
        return NULL;
    }
    return atn_run_capture(run);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test-demo-gpt2 SOURCE_ROOT\n");
        return 2;
    }
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/data/models/demo-gpt2/train", argv[1]);
    atn_error err = {0};
    atn_model *m = atn_model_open("demo-gpt2", NULL, NULL, &err);
    CHECK_MSG(m != NULL, "open demo-gpt2: %s", err.message);
    if (!m)
        return check_summary("demo-gpt2");
    CHECK(atn_model_is_causal(m));
    CHECK_STR(atn_model_family_name(m), "GPT-2");
    const atn_config *c = atn_model_config(m);
    int32_t V = c->vocab_size, L = c->n_layers, H = c->n_heads;
    CHECK(V == 1024 && c->max_positions == LEN);
    atn_run *run = atn_run_new(m);
    atn_prediction *all = calloc((size_t)V, sizeof *all);

    /* the tokenizer on every held-out paragraph */
    snprintf(path, sizeof path, "%s/heldout.txt", dir);
    char *held = slurp(path, NULL);
    snprintf(path, sizeof path, "%s/check/heldout_ids.json", dir);
    cJSON *hids = read_json(path);
    CHECK(held && hids);
    int lines = 0, same = 0;
    for (char *line = held, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        const cJSON *want = cJSON_GetArrayItem(hids, lines++);
        atn_encoding *e = NULL;
        if (!want || atn_model_encode(m, line, NULL, &e, &err) != ATN_OK) {
            CHECK_MSG(0, "held-out line %d: %s", lines - 1, err.message);
            continue;
        }
        int wn = cJSON_GetArraySize(want), k = wn < LEN ? wn : LEN;
        bool ok = e->n == k;
        for (int i = 0; ok && i < k; i++)
            ok = e->ids[i] == cJSON_GetArrayItem(want, i)->valueint;
        CHECK_MSG(ok, "held-out line %d: %d tokens, Hugging Face's tokenizers gave %d (first %d compared)",
                  lines - 1, e->n, wn, k);
        same += ok;
        atn_encoding_free(e);
    }
    CHECK(lines == cJSON_GetArraySize(hids) && lines > 50);
    printf("tokenizer: %d of %d held-out paragraphs give Hugging Face's ids\n", same, lines);

    /* the check cases: text -> ids, attention, log-probabilities, next-token guesses */
    snprintf(path, sizeof path, "%s/check/cases.json", dir);
    cJSON *meta = read_json(path);
    CHECK(meta != NULL);
    const cJSON *cases = cJSON_GetObjectItem(meta, "cases");
    double worst_att = 0, worst_logp = 0, worst_p = 0;
    int n_cases = 0, n_guess = 0;
    for (int ci = 0; ci < cJSON_GetArraySize(cases); ci++, n_cases++) {
        const cJSON *cs = cJSON_GetArrayItem(cases, ci), *ids = cJSON_GetObjectItem(cs, "ids");
        int32_t n = cJSON_GetArraySize(ids);
        atn_encoding *e = NULL;
        CHECK(atn_model_encode(m, cJSON_GetObjectItem(cs, "text")->valuestring, NULL, &e, &err) == ATN_OK);
        bool ok = e && e->n == n;
        for (int i = 0; ok && i < n; i++)
            ok = e->ids[i] == cJSON_GetArrayItem(ids, i)->valueint;
        CHECK_MSG(ok, "case %d: the text's tokens are not the reference's ids", ci);
        atn_run_options o;
        atn_run_options_init(&o);
        CHECK(e && atn_run_forward(run, e, &o, &err) == ATN_OK);
        const atn_capture *cap = atn_run_capture(run);
        size_t na = 0, nl = 0;
        snprintf(path, sizeof path, "%s/check/attn_%d.npy", dir, ci);
        double *att = read_npy(path, &na);
        snprintf(path, sizeof path, "%s/check/logprobs_%d.npy", dir, ci);
        double *lp = read_npy(path, &nl);
        CHECK(cap && att && lp && na == (size_t)L * H * n * n && nl == (size_t)n * V);
        for (size_t i = 0; cap && att && i < na; i++)
            worst_att = fmax(worst_att, fabs(cap->attn[i] - att[i]));
        const cJSON *tops = cJSON_GetObjectItem(cs, "next_top_ids"), *tprobs = cJSON_GetObjectItem(cs, "next_top_probs");
        for (int32_t pos = 0; cap && lp && pos < n; pos++) {
            CHECK(atn_predict_next(m, cap, pos, V, all, &err) == ATN_OK);
            for (int32_t k = 0; k < V; k++) {
                double want = lp[(size_t)pos * V + all[k].id];
                worst_logp = fmax(worst_logp, fabs(log(all[k].prob) - want));
            }
            const cJSON *ti = cJSON_GetArrayItem(tops, pos), *tp = cJSON_GetArrayItem(tprobs, pos);
            for (int k = 0; k < 5; k++, n_guess++) {
                int want = cJSON_GetArrayItem(ti, k)->valueint;
                double wp = cJSON_GetArrayItem(tp, k)->valuedouble;
                bool tie = false;   /* a near-tie in the reference may come out swapped */
                for (int j = 0; j < 5; j++)
                    tie |= j != k && cJSON_GetArrayItem(ti, j)->valueint == all[k].id &&
                           fabs(cJSON_GetArrayItem(tp, j)->valuedouble - wp) < 1e-5;
                CHECK_MSG(all[k].id == want || tie, "case %d after %d: guess %d is %d, the reference's %d", ci, pos,
                          k, all[k].id, want);
                worst_p = fmax(worst_p, fabs(all[k].prob - wp));
            }
        }
        free(att);
        free(lp);
        atn_encoding_free(e);
    }
    CHECK(n_cases == 3);
    CHECK_MSG(worst_att <= 1e-4, "attention differs from the reference by %.3g", worst_att);
    CHECK_MSG(worst_logp <= LOGP_TOL, "log-probabilities differ from the reference by %.3g", worst_logp);
    CHECK_MSG(worst_p <= 1e-5, "top-5 probabilities differ from the reference by %.3g", worst_p);
    printf("%d cases: attention within %.2g, log-softmax of the logits (all %d tokens, every position) within "
           "%.2g, %d next-token guesses as the reference's (probabilities within %.2g)\n",
           n_cases, worst_att, V, worst_logp, n_guess, worst_p);

    /* the heads, measured from the engine's captures */
    snprintf(path, sizeof path, "%s/metrics.json", dir);
    cJSON *metrics = read_json(path);
    double *prev = calloc((size_t)L * H, sizeof *prev), *first = calloc((size_t)L * H, sizeof *first);
    int seqs = 0;
    for (int i = 0; i < cJSON_GetArraySize(hids); i++) {
        const cJSON *p = cJSON_GetArrayItem(hids, i);
        int32_t n = cJSON_GetArraySize(p);
        if (n < 16)
            continue;
        n = n < LEN ? n : LEN;
        int32_t ids[LEN];
        for (int k = 0; k < n; k++)
            ids[k] = cJSON_GetArrayItem(p, k)->valueint;
        atn_encoding *e = NULL;
        const atn_capture *cap = run_ids(run, m, ids, n, &e);
        CHECK(cap != NULL);
        for (int32_t lh = 0; cap && lh < L * H; lh++) {
            const float *a = cap->attn + (size_t)lh * n * n;
            double sp = 0, sf = 0;
            for (int32_t q = 1; q < n; q++) {
                sp += a[(size_t)q * n + q - 1];
                sf += a[(size_t)q * n];
            }
            prev[lh] += sp / (n - 1);
            first[lh] += sf / (n - 1);
        }
        seqs++;
        atn_encoding_free(e);
    }
    /* the induction score on every fresh repeated run (check/induction_ids.json: a random
       run of `run` tokens twice, drawn with a seed other than the training seed): from each
       token of the second copy (positions run .. 2 run - 2) to the token after its earlier
       occurrence (position q - run + 1) */
    snprintf(path, sizeof path, "%s/check/induction_ids.json", dir);
    cJSON *iall = read_json(path);
    const cJSON *iseqs = cJSON_GetObjectItem(iall, "ids");
    int32_t run_len = iall ? cJSON_GetObjectItem(iall, "run")->valueint : 0;
    double *ind = calloc((size_t)L * H, sizeof *ind);
    int n_ind = 0;
    for (int si = 0; si < cJSON_GetArraySize(iseqs); si++, n_ind++) {
        const cJSON *q = cJSON_GetArrayItem(iseqs, si);
        int32_t ni = cJSON_GetArraySize(q), idv[LEN];
        CHECK_MSG(ni == 2 * run_len && ni <= LEN, "induction sequence %d: %d tokens, not twice %d", si, ni, run_len);
        if (ni != 2 * run_len || ni > LEN)
            continue;
        for (int k = 0; k < ni; k++) {
            idv[k] = cJSON_GetArrayItem(q, k)->valueint;
            CHECK(k < run_len || idv[k] == idv[k - run_len]);
        }
        atn_encoding *e = NULL;
        const atn_capture *cap = run_ids(run, m, idv, ni, &e);
        CHECK(cap != NULL);
        for (int32_t lh = 0; cap && lh < L * H; lh++) {
            double s = 0;
            for (int32_t t = run_len; t < 2 * run_len - 1; t++)
                s += cap->attn[(size_t)lh * ni * ni + (size_t)t * ni + t - run_len + 1];
            ind[lh] += s / (run_len - 1);
        }
        atn_encoding_free(e);
    }
    CHECK(n_ind >= 50);
    /* and the first of them against the float64 reference's attention */
    const cJSON *first_seq = cJSON_GetArrayItem(iseqs, 0);
    int32_t ni = cJSON_GetArraySize(first_seq), idv[LEN];
    for (int k = 0; k < ni && k < LEN; k++)
        idv[k] = cJSON_GetArrayItem(first_seq, k)->valueint;
    atn_encoding *e = NULL;
    const atn_capture *cap = ni <= LEN ? run_ids(run, m, idv, ni, &e) : NULL;
    snprintf(path, sizeof path, "%s/check/attn_induction.npy", dir);
    size_t nind = 0;
    double *iref = read_npy(path, &nind);
    double best_prev = 0, best_first = 0, best_ind = 0, worst_stat = 0, worst_iatt = 0;
    int bp = 0, bf = 0, bi = 0;
    for (int32_t lh = 0; lh < L * H; lh++) {
        prev[lh] /= seqs;
        first[lh] /= seqs;
        ind[lh] /= n_ind ? n_ind : 1;
        const cJSON *mp = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(metrics, "prev"), lh / H), lh % H);
        const cJSON *mf = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(metrics, "first"), lh / H), lh % H);
        const cJSON *mi = cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(metrics, "induction"), lh / H), lh % H);
        CHECK(mp && mf && mi);
        if (!mp || !mf || !mi)
            break;
        worst_stat = fmax(worst_stat, fmax(fabs(prev[lh] - mp->valuedouble), fabs(first[lh] - mf->valuedouble)));
        worst_stat = fmax(worst_stat, fabs(ind[lh] - mi->valuedouble));
        if (prev[lh] > best_prev) { best_prev = prev[lh]; bp = lh; }
        if (first[lh] > best_first) { best_first = first[lh]; bf = lh; }
        if (ind[lh] > best_ind) { best_ind = ind[lh]; bi = lh; }
    }
    for (size_t i = 0; cap && iref && i < nind && i < (size_t)L * H * ni * ni; i++)
        worst_iatt = fmax(worst_iatt, fabs(cap->attn[i] - iref[i]));
    CHECK(cap && iref && nind == (size_t)L * H * ni * ni);
    CHECK_MSG(worst_iatt <= 1e-4, "induction case: attention differs from the reference by %.3g", worst_iatt);
    CHECK_MSG(worst_stat <= 5e-4, "head figures differ from the trainer's by %.3g", worst_stat);
    /* The acceptance targets (issue 16): a previous-token head >= 0.5 on held-out text and
       an induction head >= 0.3 on fresh repeated runs, measured here from the engine's own
       captures (the shipped model: L0.H2 0.545 and L1.H1 0.955, README.md "What the heads
       do"); the two are different heads, in layer 0 and layer 1, the circuit induction
       heads are known for */
    CHECK_MSG(best_prev >= 0.5, "no previous-token head: the best, L%d.H%d, puts %.3f on the previous token "
              "(>= 0.5 asked)", bp / H, bp % H, best_prev);
    CHECK_MSG(best_ind >= 0.3, "no induction head: the best, L%d.H%d, scores %.3f (>= 0.3 asked)", bi / H, bi % H,
              best_ind);
    CHECK_MSG(bp / H == 0 && bi / H == 1, "the previous-token head is in layer %d and the induction head in layer %d "
              "(0 and 1 expected)", bp / H, bi / H);
    printf("heads on %d held-out paragraphs: previous L%d.H%d %.3f, first token L%d.H%d %.3f; induction L%d.H%d "
           "%.3f on %d repeated runs of %d; within %.1e of the trainer's figures\n", seqs, bp / H, bp % H, best_prev,
           bf / H, bf % H, best_first, bi / H, bi % H, best_ind, n_ind, run_len, worst_stat);
    atn_encoding_free(e);
    free(iref);
    free(ind);
    cJSON_Delete(iall);
    free(prev);
    free(first);
    cJSON_Delete(metrics);
    cJSON_Delete(meta);
    cJSON_Delete(hids);
    free(held);
    free(all);
    atn_run_free(run);
    atn_model_free(m);
    return check_summary("demo-gpt2");
}

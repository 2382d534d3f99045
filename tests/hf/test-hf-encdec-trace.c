/* The trace through an encoder-decoder's three stacks (T5 v1.0 and BART, F32 folders from
 * gen_encdec.py), against two independent figures:
 *  - gen_encdec.py's float64 torch reference (written from modeling_t5.py / modeling_bart.py):
 *    one head (layer 1, head 2) of each stack in case "long" (a source past T5's
 *    max_distance), its q and k per token, the raw dot products q.k and, for T5's
 *    self-attention, each (query, key)'s bucket and position bias (fixtures/<model>-trace.json);
 *  - `attnscope run -o x.npz`: the trace's final weights equal the arrays encoder / decoder /
 *    cross at that layer, head and query row.
 * Through `attnscope trace --json --stack S` (three query rows per stack) and the engine's
 * atn_trace_compute_stack (every query row, and the padded case's cross rows against the
 * reference's attention), plus what the text says (T5: "Scale: none", the bucket step; cross:
 * queries from the decoder, keys and values from the encoder) and the refusals (a stack on a
 * model without stacks, a decoder layer out of range). */
#include "check.h"
#include "common/test-files.h"
#include "common/test-models.h"
#include "formats/npy-image.h"
#include "formats/zip.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char root[2048];
static const char *build_root;
static const char *const stack_names[] = {"encoder", "decoder", "cross"};

/* stdout of cmd into a malloc'ed string (NULL when it fails); *rc its exit status. */
static char *run_out(const char *cmd, int *rc) {
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb, cap *= 2;
        }
    }
    int st = pclose(p);
    *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (buf)
        buf[len] = 0;
    return buf;
}

static double worst_vs_json(const double *got, const cJSON *want, int32_t n) {
    double worst = cJSON_GetArraySize(want) == n ? 0.0 : INFINITY;
    for (int32_t j = 0; j < n && worst < INFINITY; j++)
        worst = fmax(worst, fabs(got[j] - cJSON_GetArrayItem(want, j)->valuedouble));
    return worst;
}

static double json_vs_json(const cJSON *got, const cJSON *want) {
    int32_t n = cJSON_GetArraySize(want);
    if (!got || cJSON_GetArraySize(got) != n)
        return INFINITY;
    double worst = 0;
    for (int32_t j = 0; j < n; j++)
        worst = fmax(worst, fabs(cJSON_GetArrayItem(got, j)->valuedouble - cJSON_GetArrayItem(want, j)->valuedouble));
    return worst;
}

/* The three arrays of an npz written by `run -o`, copied out ([L][H][n_q][n_k] each). */
typedef struct npz_stacks {
    float *a[3];
    int64_t shape[3][4];
} npz_stacks;

static bool read_npz(const char *path, npz_stacks *out) {
    memset(out, 0, sizeof *out);
    size_t len = 0;
    char *buf = slurp(path, &len);
    atn_zip *zip = NULL;
    atn_error err = {0};
    bool ok = buf && atn_zip_open(path, buf, len, &zip, &err) == ATN_OK;
    for (int s = 0; ok && s < 3; s++) {
        char member[32];
        snprintf(member, sizeof member, "%s.npy", stack_names[s]);
        const atn_zip_entry *e = atn_zip_find(zip, member);
        atn_npy_array arr;
        ok = e && atn_npy_parse_image(member, e->data, e->size, &arr, &err) == ATN_OK && arr.t.ndim == 4 &&
             arr.t.dtype == ATN_ST_F32;
        if (ok) {
            memcpy(out->shape[s], arr.t.shape, sizeof out->shape[s]);
            out->a[s] = malloc(arr.t.nbytes);
            ok = out->a[s] != NULL;
            if (ok)
                memcpy(out->a[s], arr.t.data, arr.t.nbytes);
        }
    }
    CHECK_MSG(ok, "%s: %s", path, err.message[0] ? err.message : "not the three stacks");
    atn_zip_close(zip);
    free(buf);
    return ok;
}

static void ids_csv(char *out, size_t size, const cJSON *a) {
    out[0] = 0;
    int i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%d", i ? "," : "", e->valueint);
}

/* `attnscope trace --json` for one query of one stack against the reference and the npz. */
static void cli_query(const char *name, const char *base, const cJSON *ref, const npz_stacks *npz, int s, int32_t i,
                      int32_t layer, int32_t head, bool t5) {
    char cmd[8192 + 128];
    snprintf(cmd, sizeof cmd, "%s --stack %s --layer %d --head %d --query %d --json", base, stack_names[s], layer, head,
             i);
    int rc = -1;
    char *out = run_out(cmd, &rc);
    cJSON *j = out && rc == 0 ? cJSON_Parse(out) : NULL;
    CHECK_MSG(j != NULL, "%s: %s (exit %d)", name, cmd, rc);
    free(out);
    if (!j)
        return;
    char label[160];
    snprintf(label, sizeof label, "%s %s L%d H%d query %d", name, stack_names[s], layer, head, i);
    const cJSON *st = cJSON_GetObjectItem(j, "stack");
    CHECK_MSG(st && !strcmp(st->valuestring, stack_names[s]), "%s: \"stack\"", label);
    /* the final weights: the npz's row */
    const int64_t *sh = npz->shape[s];
    int32_t nk = (int32_t)sh[3];
    const float *row = npz->a[s] + (((size_t)layer * sh[1] + head) * sh[2] + i) * nk;
    const cJSON *w = cJSON_GetObjectItem(j, "weights");
    double worst = cJSON_GetArraySize(w) == nk ? 0.0 : INFINITY;
    for (int32_t k = 0; k < nk && worst < INFINITY; k++)
        worst = fmax(worst, fabs(cJSON_GetArrayItem(w, k)->valuedouble - row[k]));
    CHECK_MSG(worst < 1e-6, "%s: weights differ from run -o x.npz by %g", label, worst);
    /* q, k, q.k and T5's bias: the float64 reference */
    const cJSON *q = cJSON_GetArrayItem(cJSON_GetObjectItem(ref, "q"), i);
    CHECK_MSG(json_vs_json(cJSON_GetObjectItem(j, "q"), q) < 1e-4, "%s: q", label);
    const cJSON *keys = cJSON_GetObjectItem(j, "keys"), *rk = cJSON_GetObjectItem(ref, "k");
    double kw = cJSON_GetArraySize(keys) == cJSON_GetArraySize(rk) ? 0.0 : INFINITY;
    for (int32_t k = 0; k < cJSON_GetArraySize(rk) && kw < INFINITY; k++)
        kw = fmax(kw, json_vs_json(cJSON_GetArrayItem(keys, k), cJSON_GetArrayItem(rk, k)));
    CHECK_MSG(kw < 1e-4, "%s: keys differ by %g", label, kw);
    double sw = json_vs_json(cJSON_GetObjectItem(j, "scores"), cJSON_GetArrayItem(cJSON_GetObjectItem(ref, "scores"), i));
    CHECK_MSG(sw < 1e-4, "%s: scores differ by %g", label, sw);
    double scale = cJSON_GetObjectItem(j, "scale")->valuedouble;
    CHECK_MSG(t5 ? scale == 1.0 : fabs(scale - 1.0 / sqrt(8.0)) < 1e-8, "%s: scale %g", label, scale);
    const cJSON *bias = cJSON_GetObjectItem(j, "position_bias"), *rb = cJSON_GetObjectItem(ref, "bias");
    if (rb) {   /* T5's self-attention: the bias row and the buckets */
        double bw = json_vs_json(bias, cJSON_GetArrayItem(rb, i));
        CHECK_MSG(bw < 1e-6, "%s: position bias differs by %g", label, bw);
        CHECK_MSG(json_vs_json(cJSON_GetObjectItem(j, "buckets"),
                               cJSON_GetArrayItem(cJSON_GetObjectItem(ref, "buckets"), i)) == 0.0, "%s: buckets", label);
    } else {
        CHECK_MSG(bias == NULL, "%s: a position bias where the model adds none", label);
    }
    cJSON_Delete(j);
}

/* atn_trace_compute_stack for every query of the reference's head, and the cross rows of the
 * padded case against the reference's attention. */
static void engine_stacks(const char *name, const cJSON *meta, const cJSON *tref) {
    char path[4096];
    snprintf(path, sizeof path, "%s/models/%s", root, name);
    atn_error err = {0};
    atn_model *m = atn_model_open_hf(path, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s: %s", name, err.message);
    if (!m)
        return;
    int32_t layer = cJSON_GetObjectItem(tref, "layer")->valueint, head = cJSON_GetObjectItem(tref, "head")->valueint;
    for (const cJSON *c = cJSON_GetObjectItem(meta, "cases")->child; c; c = c->next) {
        const char *cname = cJSON_GetObjectItem(c, "name")->valuestring;
        int32_t n, n2, t;
        int32_t *ids = json_ints(cJSON_GetObjectItem(c, "ids"), &n);
        int32_t *mask = json_ints(cJSON_GetObjectItem(c, "mask"), &n2);
        int32_t *tgt = json_ints(cJSON_GetObjectItem(c, "target"), &t);
        atn_encoding *enc = NULL;
        atn_run *run = atn_run_new(m);
        atn_run_options o;
        atn_run_options_init(&o);
        o.target_ids = tgt, o.n_target = t;
        CHECK_MSG(atn_model_encode_ids(m, ids, NULL, mask, n, &enc, &err) == ATN_OK &&
                      atn_run_forward(run, enc, &o, &err) == ATN_OK, "%s/%s: %s", name, cname, err.message);
        const atn_capture *cap = atn_run_capture(run);
        bool is_ref = !strcmp(cname, cJSON_GetObjectItem(tref, "case")->valuestring);
        int32_t H = atn_model_config(m)->n_heads, Ld = atn_model_decoder_layers(m);
        for (int s = 0; cap && s < 3; s++) {
            const atn_stack *st = atn_capture_stack(cap, (atn_stack_kind)s);
            const cJSON *ref = cJSON_GetObjectItem(cJSON_GetObjectItem(tref, "stacks"), stack_names[s]);
            /* the reference's attention of this case, for the weights of its last layer's heads */
            char what[32];
            snprintf(what, sizeof what, "%s", stack_names[s]);
            snprintf(path, sizeof path, "%s/fixtures/%s-%s-%s.npy", root, name, cname, what);
            float *want = NULL;
            int64_t shape[4];
            int nd;
            CHECK_MSG(atn_npy_read_f32(path, &want, shape, &nd, 4, &err) == ATN_OK, "%s", err.message);
            int32_t L = s == 0 ? atn_model_config(m)->n_layers : Ld;
            for (int32_t l = 0; want && l < L; l++)
                for (int32_t h = 0; h < H; h++)
                    for (int32_t i = 0; i < st->n_q; i++) {
                        atn_trace *tr = NULL;
                        if (atn_trace_compute_stack(m, cap, (atn_stack_kind)s, l, h, i, &tr, &err) != ATN_OK) {
                            CHECK_MSG(0, "%s/%s %s L%d H%d q%d: %s", name, cname, stack_names[s], l, h, i, err.message);
                            continue;
                        }
                        CHECK(tr->stack == (atn_stack_kind)s && tr->n == st->n_k && tr->n_queries == st->n_q);
                        /* the weights: the reference's attention (independent of the forward) */
                        const float *wr = want + (((size_t)l * H + h) * st->n_q + i) * st->n_k;
                        double worst = 0;
                        for (int32_t j = 0; j < st->n_k; j++)
                            worst = fmax(worst, fabs(tr->weights[j] - wr[j]));
                        CHECK_MSG(worst < 1e-4 && tr->max_abs_diff < 1e-6, "%s/%s %s L%d H%d q%d: weights %g off the "
                                  "reference, %g off the capture", name, cname, stack_names[s], l, h, i, worst,
                                  (double)tr->max_abs_diff);
                        if (is_ref && l == layer && h == head) {
                            const cJSON *rq = cJSON_GetArrayItem(cJSON_GetObjectItem(ref, "q"), i);
                            const cJSON *rs = cJSON_GetArrayItem(cJSON_GetObjectItem(ref, "scores"), i);
                            CHECK_MSG(worst_vs_json(tr->q, rq, tr->d_head) < 1e-4 &&
                                          worst_vs_json(tr->scores, rs, tr->n) < 1e-4,
                                      "%s %s q%d: q or scores", name, stack_names[s], i);
                            const cJSON *rb = cJSON_GetObjectItem(ref, "bias");
                            CHECK_MSG(!rb == !tr->pos_bias, "%s %s: a position bias %s", name, stack_names[s],
                                      rb ? "missing" : "where there is none");
                            if (rb && tr->pos_bias)
                                CHECK_MSG(worst_vs_json(tr->pos_bias, cJSON_GetArrayItem(rb, i), tr->n) < 1e-6,
                                          "%s %s q%d: bias", name, stack_names[s], i);
                        }
                        atn_trace_free(tr);
                    }
            free(want);
        }
        atn_run_free(run);
        atn_encoding_free(enc);
        free(ids);
        free(mask);
        free(tgt);
    }
    atn_model_free(m);
}

static void test_model(const char *name, bool t5) {
    char path[4096], cmd[8192], base[8192], npz_path[256];
    snprintf(path, sizeof path, "%s/fixtures/%s.json", root, name);
    cJSON *meta = read_json(path);
    snprintf(path, sizeof path, "%s/fixtures/%s-trace.json", root, name);
    cJSON *tref = read_json(path);
    CHECK_MSG(meta && tref, "%s: fixtures", name);
    if (!meta || !tref) {
        cJSON_Delete(meta);
        cJSON_Delete(tref);
        return;
    }
    engine_stacks(name, meta, tref);
    const cJSON *c = NULL;
    for (c = cJSON_GetObjectItem(meta, "cases")->child; c; c = c->next)
        if (!strcmp(cJSON_GetObjectItem(c, "name")->valuestring, cJSON_GetObjectItem(tref, "case")->valuestring))
            break;
    CHECK(c != NULL);
    if (!c)
        goto out;
    char ids[2048], tgt[1024];
    ids_csv(ids, sizeof ids, cJSON_GetObjectItem(c, "ids"));
    ids_csv(tgt, sizeof tgt, cJSON_GetObjectItem(c, "target"));
    snprintf(npz_path, sizeof npz_path, "/tmp/atn-encdec-trace-%d.npz", (int)getpid());
    snprintf(base, sizeof base, "'%s/app/attnscope' %%s --model '%s/models/%s' --ids %s --target-ids %s", build_root,
             root, name, ids, tgt);
    char run_cmd[8192 + 300];
    snprintf(cmd, sizeof cmd, base, "run");
    snprintf(run_cmd, sizeof run_cmd, "%s -o %s", cmd, npz_path);
    CHECK_MSG(system(run_cmd) == 0, "%s", run_cmd);
    npz_stacks npz;
    if (read_npz(npz_path, &npz)) {
        snprintf(cmd, sizeof cmd, base, "trace");
        int32_t layer = cJSON_GetObjectItem(tref, "layer")->valueint, head = cJSON_GetObjectItem(tref, "head")->valueint;
        for (int s = 0; s < 3; s++) {
            const cJSON *ref = cJSON_GetObjectItem(cJSON_GetObjectItem(tref, "stacks"), stack_names[s]);
            int32_t nq = (int32_t)npz.shape[s][2];
            int32_t rows[3] = {0, nq / 2, nq - 1};
            for (int r = 0; r < 3; r++)
                cli_query(name, cmd, ref, &npz, s, rows[r], layer, head, t5);
        }
        /* the text: T5's scale step says none and the bias is a step; cross says where q, k, v come from */
        char tcmd[8300];
        int rc;
        snprintf(tcmd, sizeof tcmd, "%s --stack decoder --layer 1 --head 2 --query 3", cmd);
        char *text = run_out(tcmd, &rc);
        CHECK_MSG(text && rc == 0 && (t5 ? strstr(text, "Scale: none (T5 does not") && strstr(text, "Step 4b. Relative "
                  "position bias (T5)") && strstr(text, "bucket") : strstr(text, "Scale by 1/√d_k") &&
                  !strstr(text, "Step 4b")) && strstr(text, "later target tokens (the decoder is causal)"),
                  "%s: decoder text:\n%s", name, text ? text : "");
        free(text);
        snprintf(tcmd, sizeof tcmd, "%s --stack cross --layer 1 --head 2 --query 3", cmd);
        text = run_out(tcmd, &rc);
        CHECK_MSG(text && rc == 0 && strstr(text, "Trace of the cross-attention") &&
                      strstr(text, "The query comes from the decoder") && strstr(text, "keys and values come from the "
                      "encoder") && (!t5 || strstr(text, "No position bias")), "%s: cross text:\n%s", name,
                  text ? text : "");
        free(text);
        /* out of range: the decoder's layers, named */
        snprintf(tcmd, sizeof tcmd, "%s --stack cross --layer 9 --head 0 --query 0 2>&1", cmd);
        text = run_out(tcmd, &rc);
        CHECK_MSG(rc == 2 && text && strstr(text, "the decoder has layers 0.."), "%s: %s", name, text ? text : "");
        free(text);
        for (int s = 0; s < 3; s++)
            free(npz.a[s]);
    }
    unlink(npz_path);
out:
    cJSON_Delete(meta);
    cJSON_Delete(tref);
}

/* --stack on a model without stacks, and a stack name that is none: exit 2, named. */
static void refusals(void) {
    char cmd[8192], model[4096];
    hf_model_path(model, sizeof model, "f32");
    int rc;
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' trace --model '%s' --ids 2,5,3 --stack cross --layer 0 --head 0 "
             "--query 0 2>&1", build_root, model);
    char *text = run_out(cmd, &rc);
    CHECK_MSG(rc == 2 && text && strstr(text, "--stack") && strstr(text, "one stack"), "%s: %s", cmd, text ? text : "");
    free(text);
    snprintf(cmd, sizeof cmd, "'%s/app/attnscope' trace --model '%s/models/t5-v1-f32' --ids 5,6,1 --stack middle "
             "2>&1", build_root, root);
    text = run_out(cmd, &rc);
    CHECK_MSG(rc == 2 && text && strstr(text, "--stack is encoder, decoder or cross"), "%s: %s", cmd, text ? text : "");
    free(text);
}

int main(void) {
    source_path(root, sizeof root, "tests/hf");
    char abs[PATH_MAX];
    if (realpath(root, abs))
        snprintf(root, sizeof root, "%.2000s", abs);
    build_root = getenv("ATN_BUILD_ROOT") ? getenv("ATN_BUILD_ROOT") : "build";
    test_model("t5-v1-f32", true);
    test_model("bart-f32", false);
    refusals();
    return check_summary("test-hf-encdec-trace");
}

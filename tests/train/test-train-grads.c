/* The training lab's gradients and optimiser against PyTorch (tests/train/grads.json from
 * gen_grads.py: a from-scratch float64 model written from Hugging Face's GPT-2 and BERT
 * code).  For each layer variant (post-LN, pre-LN, none; learned, sinusoidal, no
 * positions; full, causal, window attention): the same weights (a formula both sides
 * compute) and batch, then the loss and every parameter's gradient under its Hugging Face
 * name within 1e-4 of the largest value of that gradient.  Then two AdamW steps against
 * torch.optim.AdamW's.  grads-attn.json (gen_grads_attn.py, the same model) adds the
 * attention variants: Longformer (window + globals), chunked blocks and Linformer (whose E and
 * F are parameters of their own). */
#include "check.h"
#include "common/test-files.h"
#include "train/train-ops.h"
#include "train/train-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* gen_grads.py's weight(): 0.3 sin(0.37 k + 1.1 j), j the name's byte sum mod 97; LayerNorm
 * gains 1 + 0.1 that. */
static void formula(const char *name, float *w, size_t count) {
    unsigned j = 0;
    for (const char *c = name; *c; c++)
        j += (unsigned char)*c;
    j %= 97;
    size_t len = strlen(name);
    bool gain = (len > 16 && !strcmp(name + len - 16, "LayerNorm.weight")) ||
                (strstr(name, ".ln_") && len > 7 && !strcmp(name + len - 7, ".weight"));
    for (size_t k = 0; k < count; k++) {
        double v = 0.3 * sin(0.37 * (double)k + 1.1 * j);
        w[k] = (float)(gain ? 1.0 + 0.1 * v : v);
    }
}

static int json_int(const cJSON *o, const char *key) {
    return cJSON_GetObjectItem(o, key)->valueint;
}

static void check_case(const cJSON *sizes, const cJSON *c) {
    const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
    const char *norm = cJSON_GetObjectItem(c, "norm")->valuestring;
    const char *pos = cJSON_GetObjectItem(c, "positions")->valuestring;
    const char *attn = cJSON_GetObjectItem(c, "attention")->valuestring;
    atn_train_options o;
    atn_train_options_init(&o);
    o.decoder = cJSON_IsTrue(cJSON_GetObjectItem(c, "decoder"));
    o.norm = !strcmp(norm, "post") ? ATN_TRAIN_POST_LN : !strcmp(norm, "pre") ? ATN_TRAIN_PRE_LN : ATN_TRAIN_NO_LN;
    o.positions = !strcmp(pos, "learned") ? ATN_POS_LEARNED : !strcmp(pos, "sinusoidal") ? ATN_POS_SINUSOIDAL
                                                              : !strcmp(pos, "alibi")    ? ATN_POS_ALIBI
                                                              : !strcmp(pos, "rotary")   ? ATN_POS_ROTARY
                                                                                         : ATN_POS_NONE;
    o.attention = !strcmp(attn, "full")         ? ATN_ATTN_FULL
                  : !strcmp(attn, "causal")     ? ATN_ATTN_CAUSAL
                  : !strcmp(attn, "longformer") ? ATN_ATTN_LONGFORMER
                  : !strcmp(attn, "chunked")    ? ATN_ATTN_CHUNKED
                  : !strcmp(attn, "linformer")  ? ATN_ATTN_LINFORMER
                                                : ATN_ATTN_WINDOW;
    o.window = json_int(c, "window");
    if (cJSON_GetObjectItem(c, "global_first")) {
        o.global_first = json_int(c, "global_first");
        const cJSON *gl = cJSON_GetObjectItem(c, "globals");
        o.n_globals = cJSON_GetArraySize(gl);
        for (int32_t i = 0; i < o.n_globals && i < ATN_TRAIN_MAX_GLOBALS; i++)
            o.globals[i] = cJSON_GetArrayItem(gl, i)->valueint;
    }
    if (cJSON_GetObjectItem(c, "chunk"))
        o.chunk = json_int(c, "chunk");
    if (cJSON_GetObjectItem(c, "linformer_k"))
        o.linformer_k = json_int(c, "linformer_k");
    o.task = ATN_TASK_COPY;
    o.length = json_int(sizes, "length"), o.symbols = json_int(sizes, "symbols");
    o.d_model = json_int(sizes, "d_model"), o.heads = json_int(sizes, "heads"), o.d_ffn = json_int(sizes, "d_ffn");
    o.layers = json_int(sizes, "layers"), o.batch = json_int(sizes, "batch");
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(&o, &err);
    CHECK_MSG(t != NULL, "%s: %s", name, err.message);
    if (!t)
        return;
    CHECK(t->V == json_int(sizes, "vocab") && t->n == json_int(sizes, "n"));
    for (int32_t i = 0; i < atn_trainer_tensor_count(t); i++) {
        int64_t shape[2];
        const char *tn = atn_trainer_tensor_name(t, i, shape, NULL);
        size_t count = (size_t)(shape[0] * shape[1]);
        float *w = malloc(count * sizeof(float));
        bool fixed_pos = o.positions != ATN_POS_LEARNED && (strstr(tn, "position") || strstr(tn, "wpe"));
        if (!fixed_pos) {   /* fixed tables keep the trainer's own values */
            formula(tn, w, count);
            CHECK(atn_trainer_tensor_set(t, tn, w, count, &err) == ATN_OK);
        }
        free(w);
    }
    int32_t nids = 0, nlab = 0;
    int32_t *ids = json_ints(cJSON_GetObjectItem(c, "ids"), &nids);
    int32_t *labels = json_ints(cJSON_GetObjectItem(c, "labels"), &nlab);
    CHECK(atn_trainer_set_batch(t, ids, labels, o.batch, t->n, &err) == ATN_OK);
    atn_train_stats st;
    CHECK(atn_trainer_compute(t, &st, &err) == ATN_OK);
    double want_loss = cJSON_GetObjectItem(c, "loss")->valuedouble;
    CHECK_MSG(fabs(st.loss - want_loss) <= 1e-5 * fabs(want_loss), "%s: loss %.8g, torch %.8g", name, st.loss,
              want_loss);

    const cJSON *grads = cJSON_GetObjectItem(c, "grads");
    int compared = 0;
    for (int32_t i = 0; i < atn_trainer_tensor_count(t); i++) {
        int64_t shape[2];
        const char *tn = atn_trainer_tensor_name(t, i, shape, NULL);
        const cJSON *ref = cJSON_GetObjectItem(grads, tn);
        bool fixed = t->params[t->tensors[i].parts[0]].fixed;
        CHECK_MSG(fixed == (ref == NULL), "%s: %s is %s in torch's model", name, tn, ref ? "a parameter" : "absent");
        if (!ref)
            continue;
        size_t count = (size_t)(shape[0] * shape[1]);
        CHECK_MSG((size_t)cJSON_GetArraySize(ref) == count, "%s: %s has %d values, torch %zu", name, tn,
                  cJSON_GetArraySize(ref), count);
        float *got = malloc(count * sizeof(float)), *want = malloc(count * sizeof(float));
        CHECK(atn_trainer_tensor_get(t, tn, true, got, count, &err) == ATN_OK);
        double big = 0;
        for (size_t k = 0; k < count; k++) {
            want[k] = (float)cJSON_GetArrayItem(ref, (int)k)->valuedouble;
            big = fabs(want[k]) > big ? fabs(want[k]) : big;
        }
        char what[200];
        snprintf(what, sizeof what, "%s %s grad", name, tn);
        CHECK_ARRAY_NEAR(what, got, want, count, 1e-4 * big + 1e-9);
        free(got), free(want);
        compared++;
    }
    /* each layer's gradient norm against the norm of torch's gradients under its prefix */
    for (int32_t l = 0; l < o.layers; l++) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, o.decoder ? "transformer.h.%d." : "bert.encoder.layer.%d.", (int)l);
        double sum = 0;
        for (const cJSON *e = grads->child; e; e = e->next)
            if (!strncmp(e->string, prefix, strlen(prefix)))
                for (const cJSON *v = e->child; v; v = v->next)
                    sum += v->valuedouble * v->valuedouble;
        CHECK_MSG(fabs(atn_trainer_layer_grad_norm(t, l) - sqrt(sum)) <= 1e-5 * sqrt(sum),
                  "%s: layer %d gradient norm %.8g, torch %.8g", name, (int)l, atn_trainer_layer_grad_norm(t, l),
                  sqrt(sum));
    }
    CHECK(atn_trainer_layer_grad_norm(t, o.layers) == -1.0f);
    CHECK_MSG(compared == cJSON_GetArraySize(grads), "%s: compared %d of torch's %d gradients", name, compared,
              cJSON_GetArraySize(grads));
    fprintf(stderr, "%s: loss %.7f (torch %.7f), %d gradients\n", name, st.loss, want_loss, compared);
    free(ids), free(labels);
    atn_trainer_free(t);
}

/* Two AdamW steps on one parameter with given gradients: the first bias-correction tensor
 * of a model stands in (the optimiser runs over the arena). */
static void check_adamw(const cJSON *a) {
    atn_train_options o;
    atn_train_options_init(&o);
    o.layers = 1, o.d_model = 8, o.heads = 2, o.d_ffn = 8, o.batch = 1, o.length = 2, o.symbols = 2;
    o.lr = (float)cJSON_GetObjectItem(a, "lr")->valuedouble;
    o.beta1 = (float)cJSON_GetObjectItem(a, "beta1")->valuedouble;
    o.beta2 = (float)cJSON_GetObjectItem(a, "beta2")->valuedouble;
    o.adam_eps = (float)cJSON_GetObjectItem(a, "eps")->valuedouble;
    o.weight_decay = (float)cJSON_GetObjectItem(a, "weight_decay")->valuedouble;
    o.clip = 0;
    atn_error err = {0};
    atn_trainer *t = atn_trainer_new(&o, &err);
    CHECK(t != NULL);
    if (!t)
        return;
    /* every parameter but the last bias gets a zero gradient and value (weight decay keeps 0
       at 0, Adam's step of a zero gradient is 0); ln_f.b (8 values) gets the test's */
    memset(t->arena, 0, 2 * t->total * sizeof(float));
    const cJSON *p0 = cJSON_GetObjectItem(a, "p0"), *grads = cJSON_GetObjectItem(a, "grads");
    const cJSON *after = cJSON_GetObjectItem(a, "after");
    int count = cJSON_GetArraySize(p0);
    atn_tr_param *p = &t->params[t->wte];   /* [V][d] = 9 x 8: at least 24 values */
    CHECK((size_t)p->rows * p->cols >= (size_t)count);
    for (int k = 0; k < count; k++)
        p->p[k] = (float)cJSON_GetArrayItem(p0, k)->valuedouble;
    for (int s = 0; s < cJSON_GetArraySize(grads); s++) {
        const cJSON *g = cJSON_GetArrayItem(grads, s);
        memset(t->arena + t->total, 0, t->total * sizeof(float));
        for (int k = 0; k < count; k++)
            p->g[k] = (float)cJSON_GetArrayItem(g, k)->valuedouble;
        atn_train_stats st;
        CHECK(atn_trainer_update(t, &st, &err) == ATN_OK);
        float want[64];
        const cJSON *w = cJSON_GetArrayItem(after, s);
        for (int k = 0; k < count; k++)
            want[k] = (float)cJSON_GetArrayItem(w, k)->valuedouble;
        char what[64];
        snprintf(what, sizeof what, "AdamW step %d", s + 1);
        CHECK_ARRAY_NEAR(what, p->p, want, (size_t)count, 2e-7);
    }
    atn_trainer_free(t);
}

/* Each activation's backward against a central difference of its forward (h = 1e-2 in
 * double, from the float forward at x +- h: the error is O(h^2) plus rounding). */
static void check_activations(void) {
    const atn_activation acts[] = {ATN_ACT_GELU, ATN_ACT_GELU_TANH, ATN_ACT_RELU, ATN_ACT_SILU};
    for (size_t a = 0; a < sizeof acts / sizeof *acts; a++) {
        float x[61], dx[61], one[61], lo[61], hi[61], xl[61], xh[61];
        for (int i = 0; i < 61; i++) {
            x[i] = -3.0f + 0.1f * i + 0.013f;   /* off 0 for ReLU's kink */
            xl[i] = x[i] - 0.01f, xh[i] = x[i] + 0.01f, one[i] = 1.0f, dx[i] = 0.0f;
        }
        atn_tr_act_forward(lo, xl, 61, acts[a]);
        atn_tr_act_forward(hi, xh, 61, acts[a]);
        atn_tr_act_backward(dx, one, x, 61, acts[a]);
        float want[61];
        for (int i = 0; i < 61; i++)
            want[i] = (float)(((double)hi[i] - lo[i]) / ((double)xh[i] - xl[i]));
        char what[64];
        snprintf(what, sizeof what, "%s backward", atn_activation_name(acts[a]));
        CHECK_ARRAY_NEAR(what, dx, want, 61, 2e-3);
    }
}

int main(void) {
    check_activations();
    const char *root = getenv("ATN_SOURCE_ROOT");
    const char *files[] = {"grads.json", "grads-attn.json"};
    for (int f = 0; f < 2; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/tests/train/%s", root ? root : ".", files[f]);
        cJSON *j = read_json(path);
        if (!j)
            return 1;
        const cJSON *sizes = cJSON_GetObjectItem(j, "sizes"), *cases = cJSON_GetObjectItem(j, "cases");
        for (int i = 0; i < cJSON_GetArraySize(cases); i++)
            check_case(sizes, cJSON_GetArrayItem(cases, i));
        if (cJSON_GetObjectItem(j, "adamw"))
            check_adamw(cJSON_GetObjectItem(j, "adamw"));
        cJSON_Delete(j);
    }
    return check_summary("train-grads");
}

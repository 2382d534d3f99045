/* The trace from an attention file's q, k, v (attention-file.h, atn_attn_file_trace): the
 * same double-precision steps as the trace of a run (analysis/trace.c) up to the weighted sum
 * of the values, from the floats the file holds, so a file written by `run -o --qkv` traces to
 * the run's numbers.  W_O is not in a file: the output projection is left out. */
#include "attention-file.h"
#include "formats/attention-file-private.h"

#include "forward/encoder.h"
#include "forward/fp16.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Element i of a float tensor, as double. */
static double elem(const atn_st_tensor *t, size_t i) {
    const uint8_t *p = t->data;
    if (t->dtype == ATN_ST_F16 || t->dtype == ATN_ST_BF16) {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        return t->dtype == ATN_ST_F16 ? atn_f16_to_f32(h) : atn_bf16_to_f32(h);
    }
    float v;
    memcpy(&v, p + 4 * i, 4);
    return v;
}

/* Row (l, h, j) of a [L, H', n, d] tensor into out[d]. */
static void row(const atn_st_tensor *t, int32_t l, int32_t h, int32_t j, double *out) {
    size_t d = (size_t)t->shape[3];
    size_t base = (((size_t)l * (size_t)t->shape[1] + (size_t)h) * (size_t)t->shape[2] + (size_t)j) * d;
    for (size_t c = 0; c < d; c++)
        out[c] = elem(t, base + c);
}

/* A per-layer number from the metadata key: one number, or a list of L (null: none). */
static bool meta_number(const atn_attn_file *f, const char *key, int32_t layer, double *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->meta, key);
    if (v && cJSON_IsArray(v))
        v = cJSON_GetArrayItem(v, layer);
    if (!v || !cJSON_IsNumber(v))
        return false;
    *out = v->valuedouble;
    return true;
}

/* The K/V head query head h reads: metadata "kv_heads", else h / (H / H_kv). */
static int32_t kv_head_of(const atn_attn_file *f, int32_t h, int32_t h_kv) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->meta, "kv_heads");
    const cJSON *e = v && cJSON_IsArray(v) ? cJSON_GetArrayItem(v, h) : NULL;
    if (e && cJSON_IsNumber(e) && e->valuedouble >= 0 && e->valuedouble < h_kv)
        return (int32_t)e->valuedouble;
    return h / (f->H / h_kv);
}

atn_status atn_attn_file_trace(atn_attn_file *f, int32_t layer, int32_t head, int32_t query, atn_trace **out,
                               atn_error *err) {
    if (!out)
        return atn_error_set(err, ATN_E_INVALID, "atn_attn_file_trace: NULL out");
    *out = NULL;
    if (!f)
        return atn_error_set(err, ATN_E_INVALID, "atn_attn_file_trace: NULL file");
    if (!f->info.has_qkv)
        return atn_error_set(err, ATN_E_UNSUPPORTED,
                             "%s holds no q, k, v: the trace recomputes the weights from them. Write them with "
                             "`attnscope run ... -o FILE.safetensors --qkv`, or add tensors q, k, v [layers, "
                             "heads, n, d] (docs/attention-file.md)", f->path);
    if (layer < 0 || layer >= f->L)
        return atn_error_set(err, ATN_E_INVALID, "layer %d out of range: the file has layers 0..%d", layer, f->L - 1);
    if (head < 0 || head >= f->H)
        return atn_error_set(err, ATN_E_INVALID, "head %d out of range: the file has heads 0..%d", head, f->H - 1);
    if (query < 0 || query >= f->n)
        return atn_error_set(err, ATN_E_INVALID, "query token %d out of range: the file has tokens 0..%d", query,
                             f->n - 1);
    const float *A;   /* the file's attention of this layer, to check against and for concat */
    atn_status st = atn_attn_file_layer(f, layer, &A, err);
    if (st != ATN_OK)
        return st;
    const atn_st_tensor *Q = atn_st_find(f->st, "q"), *K = atn_st_find(f->st, "k"), *V = atn_st_find(f->st, "v");
    int32_t n = f->n, H = f->H, k = (int32_t)Q->shape[3], h_kv = (int32_t)K->shape[1];
    int32_t dc = H * k;
    atn_trace *t = calloc(1, sizeof *t);
    if (!t)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    t->layer = layer, t->head = head, t->query = query;
    t->n = n, t->d_head = k, t->d_model = dc, t->d_concat = dc;
    t->enc = f->enc;
    t->causal = f->info.causal;
    t->from_file = true;
    t->temperature = 1.0;
    t->q = calloc((size_t)k, sizeof(double));
    t->keys = calloc((size_t)n * k, sizeof(double));
    t->scores = calloc((size_t)n, sizeof(double));
    t->scaled = calloc((size_t)n, sizeof(double));
    t->mask_term = calloc((size_t)n, sizeof(double));
    t->bias_term = calloc((size_t)n, sizeof(double));
    t->shifted = calloc((size_t)n, sizeof(double));
    t->exps = calloc((size_t)n, sizeof(double));
    t->weights = calloc((size_t)n, sizeof(double));
    t->values = calloc((size_t)n * k, sizeof(double));
    t->output = calloc((size_t)k, sizeof(double));
    t->concat = calloc((size_t)dc, sizeof(double));
    double *vrow = malloc((size_t)k * sizeof(double));
    if (!t->q || !t->keys || !t->scores || !t->scaled || !t->mask_term || !t->bias_term || !t->shifted || !t->exps ||
        !t->weights || !t->values || !t->output || !t->concat || !vrow) {
        free(vrow);
        atn_trace_free(t);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    t->kv_head = kv_head_of(f, head, h_kv);
    row(Q, layer, head, query, t->q);
    for (int32_t j = 0; j < n; j++) {
        row(K, layer, t->kv_head, j, t->keys + (size_t)j * k);
        row(V, layer, t->kv_head, j, t->values + (size_t)j * k);
    }
    /* steps 1-2: scores, scale; the mask as the forward builds it (forward/run.c) */
    if (!meta_number(f, "scale", layer, &t->scale))
        t->scale = 1.0 / sqrt((double)k);
    double window = 0;
    bool windowed = meta_number(f, "window", layer, &window) && window > 0;
    t->max = -INFINITY;
    for (int32_t j = 0; j < n; j++) {
        double s = 0;
        for (int32_t c = 0; c < k; c++)
            s += t->q[c] * t->keys[(size_t)j * k + c];
        t->scores[j] = s;
        t->scaled[j] = s * t->scale;
        bool hidden = !f->enc->mask[j] || (t->causal && j > query) || (windowed && query - j >= window);
        t->mask_term[j] = hidden ? ATN_MASK_MIN : 0.0;
        t->shifted[j] = t->scaled[j] + t->mask_term[j];
        if (t->shifted[j] > t->max)
            t->max = t->shifted[j];
    }
    /* step 3: softmax, max-subtracted */
    for (int32_t j = 0; j < n; j++) {
        t->shifted[j] -= t->max;
        t->exps[j] = exp(t->shifted[j]);
        t->sum += t->exps[j];
    }
    const float *P = A + ((size_t)head * n + query) * n;
    for (int32_t j = 0; j < n; j++) {
        t->weights[j] = t->exps[j] / t->sum;
        float diff = (float)fabs(t->weights[j] - P[j]);
        if (diff > t->max_abs_diff)
            t->max_abs_diff = diff;
    }
    /* step 4: the weighted sum of the values */
    for (int32_t j = 0; j < n; j++)
        for (int32_t c = 0; c < k; c++)
            t->output[c] += t->weights[j] * t->values[(size_t)j * k + c];
    /* step 5: every head's output for the query, from the file's attention and v */
    for (int32_t h = 0; h < H; h++) {
        double *o = t->concat + (size_t)h * k;
        if (h == head) {
            memcpy(o, t->output, (size_t)k * sizeof(double));
            continue;
        }
        const float *ph = A + ((size_t)h * n + query) * n;
        int32_t kvh = kv_head_of(f, h, h_kv);
        for (int32_t j = 0; j < n; j++) {
            row(V, layer, kvh, j, vrow);
            for (int32_t c = 0; c < k; c++)
                o[c] += ph[j] * vrow[c];
        }
    }
    free(vrow);
    *out = t;
    return ATN_OK;
}

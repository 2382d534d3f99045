/* The trace from an attention file's q, k, v (attention-file.h, atn_attn_file_trace): the
 * file is a source of the trace's one arithmetic (analysis/trace-private.h: atn_trace_alloc,
 * atn_trace_attend, what a run's trace computes steps 1-4 with), fed the file's q, k, v rows,
 * its scale and the mask made as the forward makes it, so a file written by `run -o --qkv`
 * traces to the run's numbers.  Step 5's concat is every head's output from the file's
 * attention and v; W_O is not in a file: the output projection is left out. */
#include "attention-file.h"
#include "analysis/trace-private.h"
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
    atn_trace *t = atn_trace_alloc(n, k, dc, 0);   /* no projection: W_O is not in a file */
    double *vrow = malloc((size_t)k * sizeof(double));
    float *mask = malloc((size_t)n * sizeof *mask);
    if (!t || !vrow || !mask) {
        free(vrow);
        free(mask);
        atn_trace_free(t);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory");
    }
    t->layer = layer, t->head = head, t->query = query;
    t->n = n, t->d_head = k, t->d_model = dc, t->d_concat = dc;
    t->enc = f->enc;
    t->causal = f->info.causal;
    t->from_file = true;
    t->temperature = 1.0;
    t->kv_head = kv_head_of(f, head, h_kv);
    t->n_kv_heads = h_kv;
    row(Q, layer, head, query, t->q);
    for (int32_t j = 0; j < n; j++) {
        row(K, layer, t->kv_head, j, t->keys + (size_t)j * k);
        row(V, layer, t->kv_head, j, t->values + (size_t)j * k);
    }
    /* the scale (metadata, else 1/sqrt(d)); the mask as the forward builds it (forward/run.c) */
    if (!meta_number(f, "scale", layer, &t->scale))
        t->scale = 1.0 / sqrt((double)k);
    double window = 0;
    bool windowed = meta_number(f, "window", layer, &window) && window > 0;
    for (int32_t j = 0; j < n; j++) {
        bool hidden = !f->enc->mask[j] || (t->causal && j > query) || (windowed && query - j >= window);
        mask[j] = hidden ? ATN_MASK_MIN : 0.0f;
    }
    /* steps 1-4: the trace's arithmetic, checked against the file's attention */
    atn_trace_attend(t, mask, 0.0, A + ((size_t)head * n + query) * n);
    free(mask);
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

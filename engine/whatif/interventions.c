/* The what-if lab's interventions: their checks, ALiBi's slopes, the mask terms and the
 * shuffled positions.  How each backend applies them: attnscope.h, atn_interventions. */
#include "whatif/interventions.h"
#include "analysis.h"
#include "forward/encoder.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void atn_interventions_init(atn_interventions *iv) {
    memset(iv, 0, sizeof *iv);
    iv->window = -1;
    iv->temperature = 1.0f;
}

bool atn_interventions_none(const atn_interventions *iv) {
    if (!iv)
        return true;
    bool any_off = false;
    /* heads_off's size is the model's; a NULL array is "none" here, an all-zero one is
       checked where the model is known (engine/forward/run.c) */
    any_off = iv->heads_off != NULL;
    return !any_off && !iv->causal && iv->window < 0 && iv->strided <= 0 && iv->n_hide <= 0 && !iv->alibi &&
           !iv->no_positions && !iv->shuffle && (iv->temperature == 0.0f || iv->temperature == 1.0f) &&
           !(iv->rope_theta > 0.0) && !(iv->rope_factor > 0.0 && iv->rope_factor != 1.0) && !(iv->rope_llama3 > 0.0) &&
           !iv->sliding;
}

bool atn_interventions_rotary(const atn_interventions *iv, int32_t n_layers) {
    if (!iv)
        return false;
    bool any = iv->rope_theta > 0.0 || (iv->rope_factor > 0.0 && iv->rope_factor != 1.0) || iv->rope_llama3 > 0.0;
    for (int32_t l = 0; iv->sliding && l < n_layers; l++)
        any |= iv->sliding[l] != 0;
    return any;
}

static atn_status check_tokens(const int32_t *t, int32_t count, int32_t n, const char *field, atn_error *err) {
    if (count < 0 || (count > 0 && !t))
        return atn_error_set(err, ATN_E_INVALID, "interventions: %s has %d entries and %s", field, count,
                             t ? "a negative count" : "no array");
    if (n <= 0)
        return ATN_OK;
    for (int32_t i = 0; i < count; i++)
        if (t[i] < 0 || t[i] >= n)
            return atn_error_set(err, ATN_E_INVALID, "interventions: %s names token %d, but the input has tokens "
                                 "0..%d", field, t[i], n - 1);
    return ATN_OK;
}

atn_status atn_interventions_check(const atn_interventions *iv, int32_t n_layers, int32_t n_heads, int32_t n,
                                   atn_error *err) {
    (void)n_layers, (void)n_heads;   /* heads_off is [n_layers][n_heads] by contract */
    if (!iv)
        return ATN_OK;
    if (iv->head_mode != ATN_HEAD_ZERO && iv->head_mode != ATN_HEAD_UNIFORM)
        return atn_error_set(err, ATN_E_INVALID, "interventions: head_mode %d is neither zero (0) nor uniform (1)",
                             (int)iv->head_mode);
    if (iv->window < -1)
        return atn_error_set(err, ATN_E_INVALID, "interventions: window %d is negative", iv->window);
    if (iv->n_global > 0 && iv->window < 0)
        return atn_error_set(err, ATN_E_INVALID, "interventions: global_tokens need a window");
    if (iv->strided < 0)
        return atn_error_set(err, ATN_E_INVALID, "interventions: strided %d is negative", iv->strided);
    if (!isfinite(iv->temperature) || iv->temperature < 0.0f)
        return atn_error_set(err, ATN_E_INVALID, "interventions: temperature %g must be a positive number",
                             (double)iv->temperature);
    if (!isfinite(iv->rope_theta) || iv->rope_theta < 0.0)
        return atn_error_set(err, ATN_E_INVALID, "interventions: rope_theta %g must be a positive number",
                             iv->rope_theta);
    if (!isfinite(iv->rope_factor) || iv->rope_factor < 0.0)
        return atn_error_set(err, ATN_E_INVALID, "interventions: rope_factor %g must be a positive number",
                             iv->rope_factor);
    if (!isfinite(iv->rope_llama3) || iv->rope_llama3 < 0.0)
        return atn_error_set(err, ATN_E_INVALID, "interventions: rope_llama3 %g must be a positive number",
                             iv->rope_llama3);
    if (iv->sliding_window < 0)
        return atn_error_set(err, ATN_E_INVALID, "interventions: sliding_window %d is negative", iv->sliding_window);
    for (int32_t l = 0; iv->sliding && l < n_layers; l++)
        if (iv->sliding[l] < -1 || iv->sliding[l] > 1)
            return atn_error_set(err, ATN_E_INVALID, "interventions: sliding[%d] is %d, not -1 (off), 0 or 1 (on)",
                                 l, (int)iv->sliding[l]);
    atn_status st = check_tokens(iv->global_tokens, iv->n_global, n, "global_tokens", err);
    if (st)
        return st;
    return check_tokens(iv->hide_tokens, iv->n_hide, n, "hide_tokens", err);
}

atn_status atn_parse_layer_list(const char *text, int32_t n_layers, uint8_t *mark, atn_error *err) {
    if (!text || !*text)
        return atn_error_set(err, ATN_E_INVALID, "no layers given: list layers and ranges, e.g. 0,2-3");
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        long a = strtol(p, &end, 10), b;
        if (end == p || errno || (*end && *end != ',' && *end != '-'))
            goto malformed;
        b = a;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p || errno || (*end && *end != ','))
                goto malformed;
            if (b < a)
                return atn_error_set(err, ATN_E_INVALID, "\"%ld-%ld\" runs backwards: give the first layer first", a,
                                     b);
        }
        long outside = a < 0 || a >= n_layers ? a : b >= n_layers ? b : -1;
        if (a < 0 || outside >= 0)
            return atn_error_set(err, ATN_E_INVALID, "layer %ld is outside the model's layers 0..%d", outside,
                                 n_layers - 1);
        for (long l = a; l <= b; l++)
            mark[l] = 1;
        p = *end ? end + 1 : end;
        if (*end && !*p)
            goto malformed;   /* a trailing comma */
    }
    return ATN_OK;
malformed:
    return atn_error_set(err, ATN_E_INVALID, "\"%s\" is not a list of layers and ranges (e.g. 0,2-3)", text);
}

/* Press et al., "Train Short, Test Long" (2022), their get_slopes: for a power of two H the
 * geometric sequence starting at 2^(-8/H) with that ratio; otherwise the P = 2^floor(log2 H)
 * slopes followed by the even-indexed slopes of 2P, H - P of them. */
static void slopes_pow2(int32_t h, float *out) {
    double start = pow(2.0, -pow(2.0, -(log2((double)h) - 3.0)));
    double v = start;
    for (int32_t i = 0; i < h; i++) {
        out[i] = (float)v;
        v *= start;
    }
}

void atn_alibi_slopes(int32_t n_heads, float *slopes) {
    if (n_heads < 1)
        return;
    int32_t p = 1;
    while (p * 2 <= n_heads)
        p *= 2;
    slopes_pow2(p, slopes);
    if (p == n_heads)
        return;
    float extra[2 * 1024];
    int32_t p2 = 2 * p;
    if (p2 > (int32_t)(sizeof extra / sizeof extra[0])) {   /* no model has 1024+ heads; compute directly */
        double start = pow(2.0, -pow(2.0, -(log2((double)p2) - 3.0)));
        for (int32_t i = 0; i < n_heads - p; i++)
            slopes[p + i] = (float)pow(start, 2.0 * i + 1.0);
        return;
    }
    slopes_pow2(p2, extra);
    for (int32_t i = 0; i < n_heads - p; i++)
        slopes[p + i] = extra[2 * i];
}

static bool listed(const int32_t *t, int32_t count, int32_t x) {
    for (int32_t i = 0; i < count; i++)
        if (t[i] == x)
            return true;
    return false;
}

/* Whether iv hides key j from query i (gi: query i is a global token). */
static bool hides(const atn_interventions *iv, int32_t i, int32_t j, bool gi) {
    int32_t dist = i > j ? i - j : j - i;
    if (iv->causal && j > i)
        return true;
    if (iv->window >= 0 && dist > iv->window && !gi && !listed(iv->global_tokens, iv->n_global, j))
        return true;
    if (iv->strided > 0 && dist >= iv->strided && dist % iv->strided != 0)
        return true;
    return iv->n_hide > 0 && listed(iv->hide_tokens, iv->n_hide, j);
}

bool atn_interventions_masks_some_layers(const atn_interventions *iv, int32_t n_layers) {
    if (!iv || !iv->mask_layers || !(iv->causal || iv->window >= 0 || iv->strided > 0 || iv->n_hide > 0))
        return false;
    for (int32_t l = 0; l < n_layers; l++)
        if (!iv->mask_layers[l])
            return true;
    return false;
}

void atn_interventions_apply_mask(float *mask_add, int32_t n, const atn_interventions *iv) {
    if (!iv)
        return;
    for (int32_t i = 0; i < n; i++) {
        bool gi = iv->window >= 0 && listed(iv->global_tokens, iv->n_global, i);
        float *row = mask_add + (size_t)i * n;
        for (int32_t j = 0; j < n; j++)
            if (hides(iv, i, j, gi))
                row[j] = ATN_MASK_MIN;
    }
}

atn_status atn_attention_cost_compute(int32_t n, int32_t n_layers, int32_t n_heads, int32_t d_head, int32_t batch,
                                      const atn_interventions *iv, atn_attention_cost *out, atn_error *err) {
    if (!out)
        return atn_error_set(err, ATN_E_INVALID, "attention cost: NULL out");
    memset(out, 0, sizeof *out);
    if (n < 1 || n > ATN_COST_MAX_TOKENS)
        return atn_error_set(err, ATN_E_INVALID, "attention cost: %d tokens is outside 1..%d", n, ATN_COST_MAX_TOKENS);
    if (n_layers < 1 || n_heads < 1 || d_head < 1 || batch < 1)
        return atn_error_set(err, ATN_E_INVALID, "attention cost: layers %d, heads %d, head size %d and batch %d "
                             "must all be at least 1", n_layers, n_heads, d_head, batch);
    atn_interventions none;
    atn_interventions_init(&none);
    if (!iv)
        iv = &none;
    atn_status st = atn_interventions_check(iv, n_layers, n_heads, n, err);
    if (st)
        return st;
    int64_t kept = 0;
    for (int32_t i = 0; i < n; i++) {
        bool gi = iv->window >= 0 && listed(iv->global_tokens, iv->n_global, i);
        for (int32_t j = 0; j < n; j++)
            kept += !hides(iv, i, j, gi);
    }
    out->n = n, out->n_layers = n_layers, out->n_heads = n_heads, out->d_head = d_head, out->batch = batch;
    out->cells_head = (int64_t)n * n;
    out->kept_head = kept;
    out->bytes_head = 4 * out->cells_head;
    out->bytes_layer = out->bytes_head * n_heads;
    out->bytes_capture = out->bytes_layer * n_layers;
    out->bytes_batch = out->bytes_capture * batch;
    int64_t masked_layers = n_layers;   /* mask_layers: the others keep every cell */
    if (atn_interventions_masks_some_layers(iv, n_layers)) {
        masked_layers = 0;
        for (int32_t l = 0; l < n_layers; l++)
            masked_layers += iv->mask_layers[l] != 0;
    }
    out->kept_bytes_capture = 4 * n_heads * (kept * masked_layers + out->cells_head * (n_layers - masked_layers));
    /* q.k for each cell and p.v for each cell: d_head multiply-adds each, 2 flops apiece */
    out->flops_dense_layer = 4.0 * (double)out->cells_head * d_head * n_heads;
    out->flops_kept_layer = 4.0 * (double)kept * d_head * n_heads;
    return ATN_OK;
}

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The index of the k-th word (not special, not padding) of enc. */
static int32_t nth_word(const atn_encoding *enc, int32_t k) {
    for (int32_t i = 0; i < enc->n; i++)
        if (!enc->tokens[i].special && enc->mask[i] && k-- == 0)
            return i;
    return -1;
}

void atn_interventions_shuffle_positions(int32_t *pos_ids, const atn_encoding *enc, const atn_interventions *iv) {
    if (!iv || !iv->shuffle || !enc->tokens)
        return;
    int32_t m = 0;
    for (int32_t i = 0; i < enc->n; i++)
        m += !enc->tokens[i].special && enc->mask[i];
    uint64_t s = iv->shuffle_seed;
    for (int32_t i = m - 1; i > 0; i--) {   /* Fisher-Yates over the words' position ids */
        int32_t r = (int32_t)(splitmix64(&s) % (uint64_t)(i + 1));
        int32_t a = nth_word(enc, i), b = nth_word(enc, r);
        int32_t t = pos_ids[a];
        pos_ids[a] = pos_ids[b];
        pos_ids[b] = t;
    }
}

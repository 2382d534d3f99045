/* Toy models from JSON: a teacher's lesson in a file.
 *
 * {
 *   "name": "worked-example", "description": "...",
 *   "tokens": ["我", "爱", "你"],
 *   "inputs": [[0.5, 1.1, 0.2, 0.1], ...],        X, one row of d_model numbers per token
 *   "d_model": 4, "heads": 2,
 *   "layernorm": false, "ffn": false, "residual": false,    (all default false)
 *   "activation": "relu" | "gelu" | "gelu_tanh", "ln_eps": 1e-5, "d_ffn": 8,
 *   "layers": [ { "W_Q": [[...]], "b_Q": [...], "W_K", "b_K", "W_V", "b_V", "W_O", "b_O",
 *                 "ln1_gamma", "ln1_beta", "W_1", "b_1", "W_2", "b_2", "ln2_gamma", "ln2_beta" } ]
 * }
 * Matrices are in the textbook orientation, Q = X W_Q: W_Q, W_K, W_V, W_O are [d, d] as
 * [in][out], W_1 is [d][d_ffn], W_2 is [d_ffn][d].  Absent projections are the identity,
 * absent biases zero, absent LayerNorm gamma one and beta zero.  Without "layers" the
 * layer keys may stand at the top level (one layer).  Internally weights are stored
 * [out, in] like every other model, so the loader transposes. */
#include "core/files.h"
#include "core/json.h"
#include "core/model-private.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TOY_MAX_TOKENS = 4096, TOY_MAX_WIDTH = 4096, TOY_MAX_LAYERS = 64 };

static bool get_bool(const cJSON *obj, const char *key, bool dflt, const char *origin, atn_error *err,
                     atn_status *st) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it)
        return dflt;
    if (!cJSON_IsBool(it)) {
        *st = atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be true or false", origin, key);
        return dflt;
    }
    return cJSON_IsTrue(it);
}

/* Reads an integer key; *st set on a wrong type or a non-integer. */
static int32_t get_int(const cJSON *obj, const char *key, int32_t dflt, bool required, const char *origin,
                       atn_error *err, atn_status *st) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it) {
        if (required && *st == ATN_OK)
            *st = atn_error_set(err, ATN_E_FORMAT, "%s: missing key \"%s\"", origin, key);
        return dflt;
    }
    if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || fabs(it->valuedouble) > 1e9) {
        if (*st == ATN_OK)
            *st = atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be an integer", origin, key);
        return dflt;
    }
    return (int32_t)it->valuedouble;
}

/* Reads a numeric vector of exactly n entries into out. */
static atn_status read_vector(const cJSON *it, float *out, int32_t n, const char *what, const char *origin,
                              atn_error *err) {
    if (!cJSON_IsArray(it))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be an array of %d numbers", origin, what, n);
    int32_t got = cJSON_GetArraySize(it);
    if (got != n)
        return atn_error_set(err, ATN_E_SHAPE, "%s: \"%s\" has %d numbers, expected %d", origin, what, got, n);
    int32_t i = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, it) {
        if (!cJSON_IsNumber(x))
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\"[%d] is not a number", origin, what, i);
        out[i++] = (float)x->valuedouble;
    }
    return ATN_OK;
}

/* Reads a rows x cols matrix (array of arrays) into out, row-major. */
static atn_status read_matrix(const cJSON *it, float *out, int32_t rows, int32_t cols, const char *what,
                              const char *origin, atn_error *err) {
    if (!cJSON_IsArray(it))
        return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be a %d x %d matrix (array of rows)", origin,
                             what, rows, cols);
    int32_t got = cJSON_GetArraySize(it);
    if (got != rows)
        return atn_error_set(err, ATN_E_SHAPE, "%s: \"%s\" has %d rows, expected %d (a %d x %d matrix)", origin,
                             what, got, rows, rows, cols);
    int32_t r = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, it) {
        char name[96];
        snprintf(name, sizeof name, "%s[%d]", what, r);
        if (!cJSON_IsArray(row))
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"%s\" must be a row of %d numbers", origin, name, cols);
        if (cJSON_GetArraySize(row) != cols)
            return atn_error_set(err, ATN_E_SHAPE, "%s: \"%s\" has %d numbers, expected %d (a %d x %d matrix)",
                                 origin, name, cJSON_GetArraySize(row), cols, rows, cols);
        atn_status st = read_vector(row, out + (size_t)r * cols, cols, name, origin, err);
        if (st)
            return st;
        r++;
    }
    return ATN_OK;
}

static void transpose(float *dst, const float *src, int32_t rows, int32_t cols) {
    for (int32_t r = 0; r < rows; r++)
        for (int32_t c = 0; c < cols; c++)
            dst[(size_t)c * rows + r] = src[(size_t)r * cols + c];
}

/* An optional textbook-orientation matrix [in][out], stored transposed as [out, in]. */
static atn_status load_linear(atn_model *m, const cJSON *layer, const char *key, int32_t in, int32_t out,
                              const float **dst, const char *origin, int32_t li, atn_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(layer, key);
    *dst = NULL;
    if (!it)
        return ATN_OK;
    char what[64];
    snprintf(what, sizeof what, "layers[%d].%s", li, key);
    float *tmp = malloc((size_t)in * out * sizeof(float));
    float *w = atn_model_alloc_floats(m, (size_t)in * out);
    if (!tmp || !w) {
        free(tmp);
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory for %s", origin, what);
    }
    atn_status st = read_matrix(it, tmp, in, out, what, origin, err);
    if (st == ATN_OK)
        transpose(w, tmp, in, out);
    free(tmp);
    *dst = w;
    return st;
}

static atn_status load_vec(atn_model *m, const cJSON *layer, const char *key, int32_t n, const float **dst,
                           const char *origin, int32_t li, atn_error *err) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(layer, key);
    *dst = NULL;
    if (!it)
        return ATN_OK;
    char what[64];
    snprintf(what, sizeof what, "layers[%d].%s", li, key);
    float *v = atn_model_alloc_floats(m, (size_t)n);
    if (!v)
        return atn_error_set(err, ATN_E_NOMEM, "%s: out of memory", origin);
    *dst = v;
    return read_vector(it, v, n, what, origin, err);
}

static atn_status load_layer(atn_model *m, const cJSON *obj, int32_t li, const char *origin, atn_error *err) {
    const atn_config *c = &m->cfg;
    atn_layer_weights *lw = &m->w.layers[li];
    int32_t d = c->d_model, f = c->d_ffn;
    atn_status st;
    static const char *const known[] = {"W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O", "b_O",
                                        "ln1_gamma", "ln1_beta", "W_1", "b_1", "W_2", "b_2", "ln2_gamma",
                                        "ln2_beta", NULL};
    if ((st = load_linear(m, obj, "W_Q", d, d, &lw->wq, origin, li, err)) ||
        (st = load_linear(m, obj, "W_K", d, d, &lw->wk, origin, li, err)) ||
        (st = load_linear(m, obj, "W_V", d, d, &lw->wv, origin, li, err)) ||
        (st = load_linear(m, obj, "W_O", d, d, &lw->wo, origin, li, err)) ||
        (st = load_vec(m, obj, "b_Q", d, &lw->bq, origin, li, err)) ||
        (st = load_vec(m, obj, "b_K", d, &lw->bk, origin, li, err)) ||
        (st = load_vec(m, obj, "b_V", d, &lw->bv, origin, li, err)) ||
        (st = load_vec(m, obj, "b_O", d, &lw->bo, origin, li, err)) ||
        (st = load_vec(m, obj, "ln1_gamma", d, &lw->ln1_g, origin, li, err)) ||
        (st = load_vec(m, obj, "ln1_beta", d, &lw->ln1_b, origin, li, err)) ||
        (st = load_vec(m, obj, "ln2_gamma", d, &lw->ln2_g, origin, li, err)) ||
        (st = load_vec(m, obj, "ln2_beta", d, &lw->ln2_b, origin, li, err)))
        return st;
    if (c->use_ffn) {
        if ((st = load_linear(m, obj, "W_1", d, f, &lw->w1, origin, li, err)) ||
            (st = load_linear(m, obj, "W_2", f, d, &lw->w2, origin, li, err)) ||
            (st = load_vec(m, obj, "b_1", f, &lw->b1, origin, li, err)) ||
            (st = load_vec(m, obj, "b_2", d, &lw->b2, origin, li, err)))
            return st;
        if (!lw->w1 || !lw->w2)
            return atn_error_set(err, ATN_E_FORMAT, "%s: \"ffn\" is true but layers[%d] lacks W_1 or W_2", origin, li);
    } else if (cJSON_GetObjectItemCaseSensitive(obj, "W_1") || cJSON_GetObjectItemCaseSensitive(obj, "W_2")) {
        return atn_error_set(err, ATN_E_FORMAT, "%s: layers[%d] has W_1/W_2 but \"ffn\" is not true", origin, li);
    }
    /* Catch typos such as "Wq": a lesson whose matrix is silently ignored would mislead. */
    if (obj && cJSON_IsObject(obj) && li >= 0) {
        const cJSON *it;
        cJSON_ArrayForEach(it, obj) {
            bool ok = false;
            for (int i = 0; known[i]; i++)
                ok |= strcmp(it->string, known[i]) == 0;
            if (!ok && cJSON_GetObjectItemCaseSensitive(obj, "tokens") == NULL)
                return atn_error_set(err, ATN_E_FORMAT, "%s: layers[%d] has an unknown key \"%s\"", origin, li,
                                     it->string);
        }
    }
    return ATN_OK;
}

atn_model *atn_model_parse_toy_json(const char *text, size_t len, const char *origin, atn_error *err) {
    cJSON *root = NULL;
    if (atn_json_parse(text, len, origin, 0, &root, err) != ATN_OK)
        return NULL;
    atn_status st = ATN_OK;
    atn_model *m = NULL;
    if (!cJSON_IsObject(root)) {
        atn_error_set(err, ATN_E_FORMAT, "%s: a toy model must be a JSON object", origin);
        goto fail;
    }
    const cJSON *jname = cJSON_GetObjectItemCaseSensitive(root, "name");
    const char *name = cJSON_IsString(jname) ? jname->valuestring : NULL;
    if (!name) {
        const char *slash = strrchr(origin, '/');
        name = slash ? slash + 1 : origin;
    }
    m = atn_model_alloc(ATN_MODEL_TOY, name, origin);
    if (!m) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        goto fail;
    }
    atn_config *c = &m->cfg;
    c->d_model = get_int(root, "d_model", 0, true, origin, err, &st);
    c->n_heads = get_int(root, "heads", 0, true, origin, err, &st);
    c->d_ffn = get_int(root, "d_ffn", 0, false, origin, err, &st);
    c->use_layernorm = get_bool(root, "layernorm", false, origin, err, &st);
    c->use_ffn = get_bool(root, "ffn", false, origin, err, &st);
    c->use_residual = get_bool(root, "residual", false, origin, err, &st);
    c->use_bias = true;
    c->use_embeddings = false;
    c->type_vocab_size = 1;
    const cJSON *eps = cJSON_GetObjectItemCaseSensitive(root, "ln_eps");
    c->ln_eps = cJSON_IsNumber(eps) ? (float)eps->valuedouble : 1e-5f;
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(root, "activation");
    c->act = ATN_ACT_RELU;
    if (act) {
        if (!cJSON_IsString(act))
            st = atn_error_set(err, ATN_E_FORMAT, "%s: \"activation\" must be a string", origin);
        else if (!strcmp(act->valuestring, "relu"))
            c->act = ATN_ACT_RELU;
        else if (!strcmp(act->valuestring, "gelu"))
            c->act = ATN_ACT_GELU;
        else if (!strcmp(act->valuestring, "gelu_tanh") || !strcmp(act->valuestring, "gelu_new"))
            c->act = ATN_ACT_GELU_TANH;
        else
            st = atn_error_set(err, ATN_E_FORMAT, "%s: unknown activation \"%s\" (relu, gelu, gelu_tanh)", origin,
                               act->valuestring);
    }
    if (st)
        goto fail;
    if (c->d_model <= 0 || c->d_model > TOY_MAX_WIDTH) {
        atn_error_set(err, ATN_E_INVALID, "%s: d_model must be 1..%d, not %d", origin, TOY_MAX_WIDTH, c->d_model);
        goto fail;
    }
    if (c->n_heads <= 0) {
        atn_error_set(err, ATN_E_INVALID, "%s: heads must be positive, not %d", origin, c->n_heads);
        goto fail;
    }
    if (c->d_model % c->n_heads) {
        atn_error_set(err, ATN_E_INVALID, "%s: %d heads do not divide d_model %d", origin, c->n_heads, c->d_model);
        goto fail;
    }
    c->d_head = c->d_model / c->n_heads;
    if (c->use_ffn && (c->d_ffn <= 0 || c->d_ffn > TOY_MAX_WIDTH)) {
        atn_error_set(err, ATN_E_INVALID, "%s: \"ffn\" is true, so d_ffn must be 1..%d, not %d", origin,
                      TOY_MAX_WIDTH, c->d_ffn);
        goto fail;
    }

    /* tokens and inputs */
    const cJSON *toks = cJSON_GetObjectItemCaseSensitive(root, "tokens");
    if (!cJSON_IsArray(toks) || cJSON_GetArraySize(toks) == 0) {
        atn_error_set(err, ATN_E_FORMAT, "%s: \"tokens\" must be a non-empty array of strings", origin);
        goto fail;
    }
    int32_t n = cJSON_GetArraySize(toks);
    if (n > TOY_MAX_TOKENS) {
        atn_error_set(err, ATN_E_INVALID, "%s: %d tokens; toy models take at most %d", origin, n, TOY_MAX_TOKENS);
        goto fail;
    }
    m->toy_tokens = calloc((size_t)n, sizeof(char *));
    if (!m->toy_tokens) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        goto fail;
    }
    m->toy_n = n;
    int32_t i = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, toks) {
        if (!cJSON_IsString(t)) {
            atn_error_set(err, ATN_E_FORMAT, "%s: tokens[%d] is not a string", origin, i);
            goto fail;
        }
        m->toy_tokens[i] = strdup(t->valuestring);
        if (!m->toy_tokens[i++]) {
            atn_error_set(err, ATN_E_NOMEM, "out of memory");
            goto fail;
        }
    }
    c->max_positions = n;
    m->toy_x = atn_model_alloc_floats(m, (size_t)n * c->d_model);
    if (!m->toy_x) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        goto fail;
    }
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    if (!inputs) {
        atn_error_set(err, ATN_E_FORMAT, "%s: missing key \"inputs\" (one vector of d_model = %d numbers per token)",
                      origin, c->d_model);
        goto fail;
    }
    if (read_matrix(inputs, m->toy_x, n, c->d_model, "inputs", origin, err))
        goto fail;

    /* layers */
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    if (layers && (!cJSON_IsArray(layers) || cJSON_GetArraySize(layers) == 0)) {
        atn_error_set(err, ATN_E_FORMAT, "%s: \"layers\" must be a non-empty array of objects", origin);
        goto fail;
    }
    c->n_layers = layers ? cJSON_GetArraySize(layers) : 1;
    if (c->n_layers > TOY_MAX_LAYERS) {
        atn_error_set(err, ATN_E_INVALID, "%s: %d layers; toy models take at most %d", origin, c->n_layers,
                      TOY_MAX_LAYERS);
        goto fail;
    }
    m->w.layers = calloc((size_t)c->n_layers, sizeof *m->w.layers);
    if (!m->w.layers) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        goto fail;
    }
    if (layers) {
        int32_t li = 0;
        const cJSON *lo;
        cJSON_ArrayForEach(lo, layers) {
            if (!cJSON_IsObject(lo)) {
                atn_error_set(err, ATN_E_FORMAT, "%s: layers[%d] must be an object", origin, li);
                goto fail;
            }
            if (load_layer(m, lo, li, origin, err))
                goto fail;
            li++;
        }
    } else if (load_layer(m, root, 0, origin, err)) {
        goto fail;
    }
    if (atn_config_validate(c, err)) {
        atn_error_prefix(err, "%s", origin);
        goto fail;
    }
    cJSON_Delete(root);
    return m;
fail:
    cJSON_Delete(root);
    atn_model_free(m);
    return NULL;
}

atn_model *atn_model_open_toy_json(const char *path, atn_error *err) {
    char *buf;
    size_t len;
    if (atn_read_file(path, (size_t)64 << 20, &buf, &len, err) != ATN_OK)
        return NULL;
    atn_model *m = atn_model_parse_toy_json(buf, len, path, err);
    free(buf);
    return m;
}

/* ---- editing ------------------------------------------------------------------ */

static const float **toy_slot(atn_model *m, atn_toy_matrix which, int32_t layer) {
    atn_layer_weights *lw = &m->w.layers[layer];
    switch (which) {
    case ATN_TOY_WQ: return &lw->wq;
    case ATN_TOY_WK: return &lw->wk;
    case ATN_TOY_WV: return &lw->wv;
    case ATN_TOY_WO: return &lw->wo;
    default: return NULL;
    }
}

static atn_status toy_check(const atn_model *m, atn_toy_matrix which, int32_t layer, int32_t row, int32_t col,
                            atn_error *err) {
    if (m->kind != ATN_MODEL_TOY)
        return atn_error_set(err, ATN_E_INVALID, "model \"%s\" is not a toy model", m->name);
    int32_t d = m->cfg.d_model;
    int32_t rows = which == ATN_TOY_X ? m->toy_n : d;
    if (which < ATN_TOY_X || which > ATN_TOY_WO)
        return atn_error_set(err, ATN_E_INVALID, "unknown toy matrix %d", (int)which);
    if (which != ATN_TOY_X && (layer < 0 || layer >= m->cfg.n_layers))
        return atn_error_set(err, ATN_E_INVALID, "layer %d out of range 0..%d", layer, m->cfg.n_layers - 1);
    if (row < 0 || row >= rows || col < 0 || col >= d)
        return atn_error_set(err, ATN_E_INVALID, "cell (%d, %d) out of range: the matrix is %d x %d", row, col,
                             rows, d);
    return ATN_OK;
}

atn_status atn_model_toy_get(const atn_model *m, atn_toy_matrix which, int32_t layer, int32_t row, int32_t col,
                             float *value, atn_error *err) {
    atn_status st = toy_check(m, which, layer, row, col, err);
    if (st)
        return st;
    int32_t d = m->cfg.d_model;
    if (which == ATN_TOY_X) {
        *value = m->toy_x[(size_t)row * d + col];
        return ATN_OK;
    }
    const float *w = *toy_slot((atn_model *)m, which, layer);
    /* textbook [in=row][out=col] is stored [out][in] */
    *value = w ? w[(size_t)col * d + row] : (row == col ? 1.0f : 0.0f);
    return ATN_OK;
}

atn_status atn_model_toy_set(atn_model *m, atn_toy_matrix which, int32_t layer, int32_t row, int32_t col,
                             float value, atn_error *err) {
    atn_status st = toy_check(m, which, layer, row, col, err);
    if (st)
        return st;
    int32_t d = m->cfg.d_model;
    if (which == ATN_TOY_X) {
        m->toy_x[(size_t)row * d + col] = value;
        return ATN_OK;
    }
    const float **slot = toy_slot(m, which, layer);
    if (!*slot) {
        float *w = atn_model_alloc_floats(m, (size_t)d * d);
        if (!w)
            return atn_error_set(err, ATN_E_NOMEM, "out of memory");
        for (int32_t i = 0; i < d; i++)
            w[(size_t)i * d + i] = 1.0f;
        *slot = w;
    }
    ((float *)*slot)[(size_t)col * d + row] = value;
    return ATN_OK;
}

/* ---- saving ------------------------------------------------------------------- */

/* A float as the shortest decimal that reads back (as a double, then float, as the loader does) to the same float: 1.1f is
 * written "1.1", not the double 1.1000000238418579 that cJSON_CreateNumber would print.
 * Nine significant digits always round-trip a float.  The text is a JSON number whatever
 * the locale's decimal point; NaN and infinities stay cJSON's null. */
static cJSON *float_json(float v) {
    if (!isfinite(v))
        return cJSON_CreateNumber(v);
    const char *point = localeconv()->decimal_point;
    char buf[40];
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, (double)v);
        if ((float)strtod(buf, NULL) == v)   /* as the loader reads it: cJSON's double, then float */
            break;
    }
    /* the locale's point (one or more bytes) becomes '.' */
    char *p = point && *point && strcmp(point, ".") ? strstr(buf, point) : NULL;
    if (p) {
        size_t pl = strlen(point);
        *p = '.';
        memmove(p + 1, p + pl, strlen(p + pl) + 1);
    }
    return cJSON_CreateRaw(buf);
}

static cJSON *matrix_json(const float *w, int32_t out_rows, int32_t in_cols, bool transposed) {
    /* transposed: w is [out][in], write textbook [in][out] */
    int32_t rows = transposed ? in_cols : out_rows, cols = transposed ? out_rows : in_cols;
    cJSON *a = cJSON_CreateArray();
    for (int32_t r = 0; a && r < rows; r++) {
        cJSON *row = cJSON_CreateArray();
        for (int32_t c = 0; row && c < cols; c++) {
            float v = transposed ? w[(size_t)c * in_cols + r] : w[(size_t)r * cols + c];
            cJSON_AddItemToArray(row, float_json(v));
        }
        cJSON_AddItemToArray(a, row);
    }
    return a;
}

static cJSON *vector_json(const float *v, int32_t n) {
    cJSON *a = cJSON_CreateArray();
    for (int32_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, float_json(v[i]));
    return a;
}

atn_status atn_model_toy_save_json(const atn_model *m, const char *path, atn_error *err) {
    if (m->kind != ATN_MODEL_TOY)
        return atn_error_set(err, ATN_E_INVALID, "model \"%s\" is not a toy model", m->name);
    const atn_config *c = &m->cfg;
    int32_t d = c->d_model, f = c->d_ffn;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "name", m->name);
    cJSON *toks = cJSON_AddArrayToObject(root, "tokens");
    for (int32_t i = 0; i < m->toy_n; i++)
        cJSON_AddItemToArray(toks, cJSON_CreateString(m->toy_tokens[i]));
    cJSON_AddItemToObject(root, "inputs", matrix_json(m->toy_x, m->toy_n, d, false));
    cJSON_AddNumberToObject(root, "d_model", d);
    cJSON_AddNumberToObject(root, "heads", c->n_heads);
    cJSON_AddBoolToObject(root, "layernorm", c->use_layernorm);
    cJSON_AddBoolToObject(root, "ffn", c->use_ffn);
    cJSON_AddBoolToObject(root, "residual", c->use_residual);
    if (c->use_ffn)
        cJSON_AddNumberToObject(root, "d_ffn", f);
    cJSON_AddStringToObject(root, "activation", atn_activation_name(c->act));
    cJSON_AddItemToObject(root, "ln_eps", float_json(c->ln_eps));
    cJSON *layers = cJSON_AddArrayToObject(root, "layers");
    for (int32_t l = 0; l < c->n_layers; l++) {
        const atn_layer_weights *lw = &m->w.layers[l];
        cJSON *lo = cJSON_CreateObject();
        struct { const char *k; const float *w; int32_t out, in; } mats[] = {
            {"W_Q", lw->wq, d, d}, {"W_K", lw->wk, d, d}, {"W_V", lw->wv, d, d}, {"W_O", lw->wo, d, d},
            {"W_1", lw->w1, f, d}, {"W_2", lw->w2, d, f}};
        for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
            if (mats[i].w)
                cJSON_AddItemToObject(lo, mats[i].k, matrix_json(mats[i].w, mats[i].out, mats[i].in, true));
        struct { const char *k; const float *v; int32_t n; } vecs[] = {
            {"b_Q", lw->bq, d}, {"b_K", lw->bk, d}, {"b_V", lw->bv, d}, {"b_O", lw->bo, d},
            {"ln1_gamma", lw->ln1_g, d}, {"ln1_beta", lw->ln1_b, d}, {"b_1", lw->b1, f}, {"b_2", lw->b2, d},
            {"ln2_gamma", lw->ln2_g, d}, {"ln2_beta", lw->ln2_b, d}};
        for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
            if (vecs[i].v)
                cJSON_AddItemToObject(lo, vecs[i].k, vector_json(vecs[i].v, vecs[i].n));
        cJSON_AddItemToArray(layers, lo);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return atn_error_set(err, ATN_E_NOMEM, "out of memory writing %s", path);
    atn_status st = atn_write_file_atomic(path, text, strlen(text), err);
    cJSON_free(text);
    return st;
}

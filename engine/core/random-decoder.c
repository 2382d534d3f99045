/* Random-weight models of three decoders students use, ModernBERT and T5 (declared in
 * core/random-decoder.h): what `attnscope bench --shape qwen2.5-0.5b|smollm2-135m|llama-3.2-1b|
 * modernbert-base|t5-small` runs.  Each is opened
 * as its Hugging Face folder would be (engine/formats/hf-memory.h): config.json with the keys
 * the published model's config.json has, and a model.safetensors of F32 tensors in
 * *ForCausalLM's (ModernBertForMaskedLM's, T5ForConditionalGeneration's) names held in one block of memory, filled by the counter-based generator
 * (core/random-fill.h) so that bench/peer_torch.py can rebuild every weight.  Only the shapes
 * are the real models'; the numbers are noise. */
#include "core/random-decoder.h"
#include "core/model-private.h"
#include "core/random-fill.h"
#include "formats/hf-memory.h"
#include "formats/safetensors.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W_SCALE 0.0346f
#define B_SCALE 0.02f
#define G_SCALE 0.1f

/* Which tensor layout a shape has (list_tensors). */
typedef enum shape_kind { KIND_DECODER, KIND_MODERNBERT, KIND_T5 } shape_kind;

typedef struct decoder_shape {
    const char *name;
    const char *config;   /* config.json as published (the keys that shape the model) */
    shape_kind kind;
} decoder_shape;

static const decoder_shape shapes[] = {
    /* Qwen/Qwen2.5-0.5B: 24 layers, 14 query heads over 2 K/V heads of 64, q/k/v biases */
    {"qwen2.5-0.5b",
     "{\"architectures\": [\"Qwen2ForCausalLM\"], \"attention_dropout\": 0.0, \"bos_token_id\": 151643,"
     " \"eos_token_id\": 151643, \"hidden_act\": \"silu\", \"hidden_size\": 896, \"initializer_range\": 0.02,"
     " \"intermediate_size\": 4864, \"max_position_embeddings\": 32768, \"max_window_layers\": 24,"
     " \"model_type\": \"qwen2\", \"num_attention_heads\": 14, \"num_hidden_layers\": 24,"
     " \"num_key_value_heads\": 2, \"rms_norm_eps\": 1e-06, \"rope_theta\": 1000000.0,"
     " \"sliding_window\": 32768, \"tie_word_embeddings\": true, \"torch_dtype\": \"bfloat16\","
     " \"use_cache\": true, \"use_mrope\": false, \"use_sliding_window\": false, \"vocab_size\": 151936}"},
    /* HuggingFaceTB/SmolLM2-135M: 30 layers, 9 query heads over 3 K/V heads of 64 */
    {"smollm2-135m",
     "{\"architectures\": [\"LlamaForCausalLM\"], \"attention_bias\": false, \"attention_dropout\": 0.0,"
     " \"bos_token_id\": 0, \"eos_token_id\": 0, \"head_dim\": 64, \"hidden_act\": \"silu\", \"hidden_size\": 576,"
     " \"initializer_range\": 0.041666666666666664, \"intermediate_size\": 1536, \"is_llama_config\": true,"
     " \"max_position_embeddings\": 8192, \"mlp_bias\": false, \"model_type\": \"llama\","
     " \"num_attention_heads\": 9, \"num_hidden_layers\": 30, \"num_key_value_heads\": 3, \"pretraining_tp\": 1,"
     " \"rms_norm_eps\": 1e-05, \"rope_interleaved\": false, \"rope_scaling\": null, \"rope_theta\": 100000,"
     " \"tie_word_embeddings\": true, \"torch_dtype\": \"bfloat16\", \"use_cache\": true, \"vocab_size\": 49152}"},
    /* meta-llama/Llama-3.2-1B: 16 layers, 32 query heads over 8 K/V heads of 64, llama3
       rope scaling, a 128,256-token vocabulary */
    {"llama-3.2-1b",
     "{\"architectures\": [\"LlamaForCausalLM\"], \"attention_bias\": false, \"attention_dropout\": 0.0,"
     " \"bos_token_id\": 128000, \"eos_token_id\": 128001, \"head_dim\": 64, \"hidden_act\": \"silu\","
     " \"hidden_size\": 2048, \"initializer_range\": 0.02, \"intermediate_size\": 8192,"
     " \"max_position_embeddings\": 131072, \"mlp_bias\": false, \"model_type\": \"llama\","
     " \"num_attention_heads\": 32, \"num_hidden_layers\": 16, \"num_key_value_heads\": 8, \"pretraining_tp\": 1,"
     " \"rms_norm_eps\": 1e-05, \"rope_scaling\": {\"factor\": 32.0, \"high_freq_factor\": 4.0,"
     " \"low_freq_factor\": 1.0, \"original_max_position_embeddings\": 8192, \"rope_type\": \"llama3\"},"
     " \"rope_theta\": 500000.0, \"tie_word_embeddings\": true, \"torch_dtype\": \"bfloat16\","
     " \"use_cache\": true, \"vocab_size\": 128256}"},
    /* answerdotai/ModernBERT-base: 22 layers of 12 heads, d 768, GeGLU 1152 wide, global
       attention in every third layer (0, 3, ...), a 128-token window (+-64) in the others */
    {"modernbert-base",
     "{\"architectures\": [\"ModernBertForMaskedLM\"], \"attention_bias\": false, \"attention_dropout\": 0.0,"
     " \"bos_token_id\": 50281, \"classifier_activation\": \"gelu\", \"classifier_bias\": false,"
     " \"classifier_dropout\": 0.0, \"classifier_pooling\": \"mean\", \"cls_token_id\": 50281,"
     " \"decoder_bias\": true, \"deterministic_flash_attn\": false, \"embedding_dropout\": 0.0,"
     " \"eos_token_id\": 50282, \"global_attn_every_n_layers\": 3, \"global_rope_theta\": 160000.0,"
     " \"gradient_checkpointing\": false, \"hidden_activation\": \"gelu\", \"hidden_size\": 768,"
     " \"initializer_cutoff_factor\": 2.0, \"initializer_range\": 0.02, \"intermediate_size\": 1152,"
     " \"layer_norm_eps\": 1e-05, \"local_attention\": 128, \"local_rope_theta\": 10000.0,"
     " \"max_position_embeddings\": 8192, \"mlp_bias\": false, \"mlp_dropout\": 0.0,"
     " \"model_type\": \"modernbert\", \"norm_bias\": false, \"norm_eps\": 1e-05,"
     " \"num_attention_heads\": 12, \"num_hidden_layers\": 22, \"pad_token_id\": 50283,"
     " \"position_embedding_type\": \"absolute\", \"sep_token_id\": 50282, \"tie_word_embeddings\": true,"
     " \"torch_dtype\": \"float32\", \"vocab_size\": 50368}",
     KIND_MODERNBERT},
    /* google-t5/t5-small: 6 encoder and 6 decoder layers of 8 heads of 64, d 512, ReLU FFN
       2048 wide, 32 relative buckets (max distance 128 by default), the head tied */
    {"t5-small",
     "{\"architectures\": [\"T5ForConditionalGeneration\"], \"d_ff\": 2048, \"d_kv\": 64, \"d_model\": 512,"
     " \"decoder_start_token_id\": 0, \"dropout_rate\": 0.1, \"eos_token_id\": 1, \"initializer_factor\": 1.0,"
     " \"is_encoder_decoder\": true, \"layer_norm_epsilon\": 1e-06, \"model_type\": \"t5\","
     " \"n_positions\": 512, \"num_heads\": 8, \"num_layers\": 6, \"output_past\": true,"
     " \"pad_token_id\": 0, \"relative_attention_num_buckets\": 32, \"vocab_size\": 32128}",
     KIND_T5},
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

static const decoder_shape *find_shape(const char *name) {
    for (int i = 0; i < N_SHAPES; i++)
        if (name && strcmp(name, shapes[i].name) == 0)
            return &shapes[i];
    return NULL;
}

bool atn_random_decoder_known(const char *name) {
    return find_shape(name) != NULL;
}

static int32_t key_int(const cJSON *root, const char *key, int32_t def) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsNumber(v) ? (int32_t)v->valuedouble : def;
}

/* The shape's config.json, max_position_embeddings at least `positions`. */
static cJSON *shape_config(const decoder_shape *s, int32_t positions, atn_error *err) {
    cJSON *root = cJSON_Parse(s->config);
    if (!root) {
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        return NULL;
    }
    if (positions > key_int(root, "max_position_embeddings", 0) &&
        !cJSON_ReplaceItemInObjectCaseSensitive(root, "max_position_embeddings", cJSON_CreateNumber(positions))) {
        cJSON_Delete(root);
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        return NULL;
    }
    return root;
}

atn_status atn_random_decoder_config(const char *name, atn_config *cfg, atn_error *err) {
    const decoder_shape *s = find_shape(name);
    if (!s)
        return atn_error_set(err, ATN_E_INVALID, "unknown decoder shape \"%s\"", name ? name : "(null)");
    cJSON *root = shape_config(s, 0, err);
    if (!root)
        return err ? err->status : ATN_E_NOMEM;
    memset(cfg, 0, sizeof *cfg);
    if (s->kind == KIND_T5) {   /* T5Config's names; relative positions (no table) */
        cfg->n_layers = key_int(root, "num_layers", 0);
        cfg->d_model = key_int(root, "d_model", 0);
        cfg->n_heads = cfg->n_kv_heads = key_int(root, "num_heads", 0);
        cfg->d_head = key_int(root, "d_kv", 0);
        cfg->d_ffn = key_int(root, "d_ff", 0);
        cfg->vocab_size = key_int(root, "vocab_size", 0);
        cfg->max_positions = 1 << 20;
        cfg->type_vocab_size = 1;
        cfg->act = ATN_ACT_RELU;
        cfg->ln_eps = 1e-6f;
        cfg->use_layernorm = cfg->use_ffn = cfg->use_residual = cfg->use_embeddings = true;
        cJSON_Delete(root);
        return ATN_OK;
    }
    cfg->n_layers = key_int(root, "num_hidden_layers", 0);
    cfg->d_model = key_int(root, "hidden_size", 0);
    cfg->n_heads = key_int(root, "num_attention_heads", 0);
    cfg->n_kv_heads = key_int(root, "num_key_value_heads", cfg->n_heads);
    cfg->d_head = key_int(root, "head_dim", cfg->d_model / cfg->n_heads);
    cfg->d_ffn = key_int(root, "intermediate_size", 0);
    cfg->vocab_size = key_int(root, "vocab_size", 0);
    cfg->max_positions = key_int(root, "max_position_embeddings", 0);
    cfg->type_vocab_size = 1;
    cfg->act = s->kind == KIND_MODERNBERT ? ATN_ACT_GELU : ATN_ACT_SILU;   /* ModernBERT: GeGLU */
    cfg->ln_eps = (float)cJSON_GetObjectItemCaseSensitive(root, s->kind == KIND_MODERNBERT ? "norm_eps"
                                                                                          : "rms_norm_eps")->valuedouble;
    cfg->gated_ffn = true;
    cfg->use_bias = cfg->use_layernorm = cfg->use_ffn = cfg->use_residual = cfg->use_embeddings = true;
    cJSON_Delete(root);
    return ATN_OK;
}

/* The tensor table being built: names in one block, each tensor's floats after the last. */
typedef struct table {
    atn_st_tensor *t;
    int32_t n, cap;
    char *names;
    size_t names_len, names_cap;
    float *block;     /* NULL while counting */
    size_t floats;    /* floats placed so far */
    uint64_t seed, counter;
} table;

static void add(table *tb, const char *name, int64_t d0, int64_t d1, float center, float scale) {
    size_t count = (size_t)d0 * (size_t)(d1 > 0 ? d1 : 1);
    if (tb->block) {
        atn_st_tensor *x = &tb->t[tb->n];
        memset(x, 0, sizeof *x);
        x->name = (const char *)(uintptr_t)tb->names_len;   /* an offset until the names are placed */
        x->dtype = ATN_ST_F32;
        x->ndim = d1 > 0 ? 2 : 1;
        x->shape[0] = d0;
        x->shape[1] = d1 > 0 ? d1 : 0;
        x->count = count;
        x->nbytes = count * sizeof(float);
        x->file_offset = tb->floats * sizeof(float);
        x->data = tb->block + tb->floats;
        atn_random_fill(tb->block + tb->floats, count, tb->seed, tb->counter, center, scale);
        memcpy(tb->names + tb->names_len, name, strlen(name) + 1);
    }
    tb->n++;
    tb->counter++;
    tb->names_len += strlen(name) + 1;
    tb->floats += count;
}

/* ModernBertForMaskedLM's tensors (bias-free, as modernbert-base): the embeddings and their
 * norm, per layer attn_norm (not in layer 0: an identity there), the fused Wqkv, Wo, mlp_norm,
 * Wi (input and gate halves), mlp.Wo; final_norm, the head's dense and norm, the decoder's
 * bias (its weight tied to the embeddings). */
static void list_modernbert(table *tb, const atn_config *c) {
    int64_t d = c->d_model, f = c->d_ffn;
    char name[128];
    add(tb, "model.embeddings.tok_embeddings.weight", c->vocab_size, d, 0.0f, W_SCALE);
    add(tb, "model.embeddings.norm.weight", d, -1, 1.0f, G_SCALE);
    for (int32_t l = 0; l < c->n_layers; l++) {
#define T(suffix, d0, d1, center, scale)                                                                             \
    (snprintf(name, sizeof name, "model.layers.%d.%s", l, suffix), add(tb, name, d0, d1, center, scale))
        if (l > 0)
            T("attn_norm.weight", d, -1, 1.0f, G_SCALE);
        T("attn.Wqkv.weight", 3 * d, d, 0.0f, W_SCALE);
        T("attn.Wo.weight", d, d, 0.0f, W_SCALE);
        T("mlp_norm.weight", d, -1, 1.0f, G_SCALE);
        T("mlp.Wi.weight", 2 * f, d, 0.0f, W_SCALE);
        T("mlp.Wo.weight", d, f, 0.0f, W_SCALE);
#undef T
    }
    add(tb, "model.final_norm.weight", d, -1, 1.0f, G_SCALE);
    add(tb, "head.dense.weight", d, d, 0.0f, W_SCALE);
    add(tb, "head.norm.weight", d, -1, 1.0f, G_SCALE);
    add(tb, "decoder.bias", c->vocab_size, -1, 0.0f, B_SCALE);
}

/* T5ForConditionalGeneration's tensors (v1.0, ReLU, the head tied to shared.weight): the
 * shared embeddings; per stack the first block's relative-bias table [buckets, H], per block
 * the self-attention's q, k, v, o and its layer_norm, the decoder's EncDecAttention q, k, v, o
 * and its layer_norm, the FFN's wi, wo and layer_norm; each stack's final_layer_norm. */
static void list_t5(table *tb, const atn_config *c, int32_t buckets) {
    int64_t d = c->d_model, f = c->d_ffn, dq = (int64_t)c->n_heads * c->d_head;
    char name[128];
    add(tb, "shared.weight", c->vocab_size, d, 0.0f, W_SCALE);
    for (int dec = 0; dec < 2; dec++) {
        const char *stack = dec ? "decoder" : "encoder";
        for (int32_t l = 0; l < c->n_layers; l++) {
#define T(suffix, d0, d1, center, scale)                                                                             \
    (snprintf(name, sizeof name, "%s.block.%d.layer.%s", stack, l, suffix), add(tb, name, d0, d1, center, scale))
            T("0.SelfAttention.q.weight", dq, d, 0.0f, W_SCALE);
            T("0.SelfAttention.k.weight", dq, d, 0.0f, W_SCALE);
            T("0.SelfAttention.v.weight", dq, d, 0.0f, W_SCALE);
            T("0.SelfAttention.o.weight", d, dq, 0.0f, W_SCALE);
            if (l == 0)
                T("0.SelfAttention.relative_attention_bias.weight", buckets, c->n_heads, 0.0f, G_SCALE);
            T("0.layer_norm.weight", d, -1, 1.0f, G_SCALE);
            if (dec) {
                T("1.EncDecAttention.q.weight", dq, d, 0.0f, W_SCALE);
                T("1.EncDecAttention.k.weight", dq, d, 0.0f, W_SCALE);
                T("1.EncDecAttention.v.weight", dq, d, 0.0f, W_SCALE);
                T("1.EncDecAttention.o.weight", d, dq, 0.0f, W_SCALE);
                T("1.layer_norm.weight", d, -1, 1.0f, G_SCALE);
            }
            T(dec ? "2.DenseReluDense.wi.weight" : "1.DenseReluDense.wi.weight", f, d, 0.0f, W_SCALE);
            T(dec ? "2.DenseReluDense.wo.weight" : "1.DenseReluDense.wo.weight", d, f, 0.0f, W_SCALE);
            T(dec ? "2.layer_norm.weight" : "1.layer_norm.weight", d, -1, 1.0f, G_SCALE);
#undef T
        }
        snprintf(name, sizeof name, "%s.final_layer_norm.weight", stack);
        add(tb, name, d, -1, 1.0f, G_SCALE);
    }
}

/* Lists (block NULL: counts) the tensors of the shape, in the generator's order. */
static void list_tensors(table *tb, const atn_config *c, bool qkv_bias, shape_kind kind, int32_t buckets) {
    int64_t d = c->d_model, f = c->d_ffn, dq = (int64_t)c->n_heads * c->d_head;
    int64_t dkv = (int64_t)c->n_kv_heads * c->d_head;
    char name[128];
    tb->n = 0, tb->names_len = 0, tb->floats = 0, tb->counter = 0;
    if (kind == KIND_MODERNBERT) {
        list_modernbert(tb, c);
        return;
    }
    if (kind == KIND_T5) {
        list_t5(tb, c, buckets);
        return;
    }
    add(tb, "model.embed_tokens.weight", c->vocab_size, d, 0.0f, W_SCALE);
    for (int32_t l = 0; l < c->n_layers; l++) {
#define T(suffix, d0, d1, center, scale)                                                                             \
    (snprintf(name, sizeof name, "model.layers.%d.%s", l, suffix), add(tb, name, d0, d1, center, scale))
        T("input_layernorm.weight", d, -1, 1.0f, G_SCALE);
        T("self_attn.q_proj.weight", dq, d, 0.0f, W_SCALE);
        if (qkv_bias)
            T("self_attn.q_proj.bias", dq, -1, 0.0f, B_SCALE);
        T("self_attn.k_proj.weight", dkv, d, 0.0f, W_SCALE);
        if (qkv_bias)
            T("self_attn.k_proj.bias", dkv, -1, 0.0f, B_SCALE);
        T("self_attn.v_proj.weight", dkv, d, 0.0f, W_SCALE);
        if (qkv_bias)
            T("self_attn.v_proj.bias", dkv, -1, 0.0f, B_SCALE);
        T("self_attn.o_proj.weight", d, dq, 0.0f, W_SCALE);
        T("post_attention_layernorm.weight", d, -1, 1.0f, G_SCALE);
        T("mlp.gate_proj.weight", f, d, 0.0f, W_SCALE);
        T("mlp.up_proj.weight", f, d, 0.0f, W_SCALE);
        T("mlp.down_proj.weight", d, f, 0.0f, W_SCALE);
#undef T
    }
    add(tb, "model.norm.weight", d, -1, 1.0f, G_SCALE);
}

atn_model *atn_random_decoder_new(const char *name, uint64_t seed, int32_t positions, atn_error *err) {
    const decoder_shape *s = find_shape(name);
    if (!s) {
        atn_error_set(err, ATN_E_INVALID, "unknown decoder shape \"%s\"", name ? name : "(null)");
        return NULL;
    }
    atn_config c;
    if (atn_random_decoder_config(name, &c, err) != ATN_OK)
        return NULL;
    cJSON *root = shape_config(s, positions, err);
    if (!root)
        return NULL;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    bool qkv_bias = cJSON_IsString(type) && strcmp(type->valuestring, "qwen2") == 0;   /* Qwen2's q/k/v biases */
    int32_t buckets = key_int(root, "relative_attention_num_buckets", 32);   /* T5 */

    table tb = {.seed = seed};
    list_tensors(&tb, &c, qkv_bias, s->kind, buckets);   /* count */
    size_t bytes = tb.floats * sizeof(float);
    tb.t = calloc((size_t)tb.n, sizeof *tb.t);
    tb.names = malloc(tb.names_len);
    tb.block = atn_alloc_big(bytes);
    if (!tb.t || !tb.names || !tb.block) {
        atn_error_set(err, ATN_E_NOMEM, "%s: out of memory for %zu weights (%.1f MB)", name, tb.floats, bytes / 1e6);
        free(tb.t), free(tb.names), free(tb.block);
        cJSON_Delete(root);
        return NULL;
    }
    list_tensors(&tb, &c, qkv_bias, s->kind, buckets);   /* place and fill */
    for (int32_t i = 0; i < tb.n; i++)
        tb.t[i].name = tb.names + (uintptr_t)tb.t[i].name;
    float *block = tb.block;
    char title[96];
    snprintf(title, sizeof title, "%s (random weights)", name);
    atn_st_file *file = NULL;
    atn_model *m = NULL;
    if (atn_st_adopt(title, tb.t, tb.n, tb.names, NULL, 0, NULL, &file, err) == ATN_OK)
        m = atn_hf_open_memory(title, root, file, err);   /* takes the file over */
    cJSON_Delete(root);
    if (!m) {
        free(block);
        return NULL;
    }
    char *empty = strdup("");   /* no folder to reopen */
    if (!empty || !atn_model_own(m, block, bytes, false)) {   /* atn_model_own frees it when it fails */
        if (!empty)
            free(block);
        free(empty);
        atn_model_free(m);
        atn_error_set(err, ATN_E_NOMEM, "out of memory");
        return NULL;
    }
    free(m->path);
    m->path = empty;
    return m;
}

/* The trainer's files: the Hugging Face folder (config.json as GPT2Config or BertConfig
 * writes it, model.safetensors, vocab.txt, tokenizer_config.json, training.json with the
 * options) and the gradient dump (.npz: a ZIP of stored .npy files, as numpy.savez writes
 * it).  Every file goes through the engine's atomic writer. */
#include "train/train-private.h"
#include "formats/npz-write.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A growing byte buffer. */
typedef struct buf {
    unsigned char *p;
    size_t len, cap;
    bool failed;
} buf;

static void put(buf *b, const void *data, size_t len) {
    if (b->failed)
        return;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len)
            cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->len, data, len);
    b->len += len;
}

static void puts_b(buf *b, const char *s) {
    put(b, s, strlen(s));
}

static void putf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(buf *b, const char *fmt, ...) {
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        b->failed = true;
        return;
    }
    put(b, tmp, (size_t)n);
}

static atn_status write_buf(buf *b, const char *path, atn_error *err) {
    atn_status st = b->failed ? atn_error_set(err, ATN_E_NOMEM, "out of memory writing %s", path)
                              : atn_write_file_atomic(path, b->p, b->len, err);
    free(b->p);
    memset(b, 0, sizeof *b);
    return st;
}

static size_t tensor_count(const atn_tr_tensor *x) {
    return (size_t)x->shape[0] * (size_t)x->shape[1];
}

static atn_status make_dir(const char *dir, atn_error *err) {
    if (mkdir(dir, 0777) && errno != EEXIST)
        return atn_error_set(err, ATN_E_IO, "%s: cannot create the folder: %s", dir, strerror(errno));
    struct stat sb;
    if (stat(dir, &sb) || !S_ISDIR(sb.st_mode))
        return atn_error_set(err, ATN_E_IO, "%s: not a folder", dir);
    return ATN_OK;
}

static void json_string(buf *b, const char *s) {
    puts_b(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            putf(b, "\\%c", c);
        else if (c < 0x20)
            putf(b, "\\u%04x", c);
        else
            put(b, s, 1);
    }
    puts_b(b, "\"");
}

static atn_status save_safetensors(const atn_trainer *t, const char *path, atn_error *err) {
    buf h = {0};
    size_t off = 0;
    puts_b(&h, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (int i = 0; i < t->n_tensors; i++) {
        const atn_tr_tensor *x = &t->tensors[i];
        size_t bytes = tensor_count(x) * sizeof(float);
        putf(&h, ",\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld", x->name, (long long)x->shape[0]);
        if (x->ndim == 2)
            putf(&h, ",%lld", (long long)x->shape[1]);
        putf(&h, "],\"data_offsets\":[%zu,%zu]}", off, off + bytes);
        off += bytes;
    }
    puts_b(&h, "}");
    while (h.len % 8)
        puts_b(&h, " ");
    buf f = {0};
    uint64_t hl = h.len;
    put(&f, &hl, 8);   /* little-endian on every platform attnscope runs on */
    put(&f, h.p, h.len);
    free(h.p);
    if (h.failed)
        f.failed = true;
    for (int i = 0; i < t->n_tensors && !f.failed; i++) {
        const atn_tr_tensor *x = &t->tensors[i];
        size_t count = tensor_count(x);
        float *tmp = malloc(count * sizeof(float));
        if (!tmp) {
            f.failed = true;
            break;
        }
        atn_trainer_tensor_get(t, x->name, false, tmp, count, NULL);
        put(&f, tmp, count * sizeof(float));
        free(tmp);
    }
    return write_buf(&f, path, err);
}

static const char *norm_name(atn_train_norm n) {
    return n == ATN_TRAIN_POST_LN ? "post" : n == ATN_TRAIN_PRE_LN ? "pre" : "none";
}

/* training.json: the options, so a folder says how it was trained. */
static void options_json(buf *b, const atn_trainer *t) {
    const atn_train_options *o = &t->o;
    static const char *init[] = {"normal", "xavier", "orthogonal"}, *pos[] = {"learned", "sinusoidal", "none", "alibi", "rotary"};
    static const char *attn[] = {"full", "causal", "window", "longformer", "chunked", "linformer"};
    static const char *optim[] = {"adamw", "sgd"};
    putf(b, "{\n  \"kind\": \"%s\",\n  \"task\": \"%s\",\n  \"length\": %d,\n  \"symbols\": %d,\n",
         o->decoder ? "decoder" : "encoder", atn_train_task_name(o->task), (int)o->length, (int)o->symbols);
    if (o->text_path) {
        puts_b(b, "  \"text\": ");
        json_string(b, o->text_path);
        puts_b(b, ",\n");
    }
    putf(b, "  \"layers\": %d,\n  \"d_model\": %d,\n  \"heads\": %d,\n  \"d_ffn\": %d,\n  \"norm\": \"%s\",\n",
         (int)o->layers, (int)o->d_model, (int)o->heads, (int)t->desc.f, norm_name(o->norm));
    putf(b, "  \"init\": \"%s\",\n  \"init_std\": %.9g,\n  \"positions\": \"%s\",\n  \"attention\": \"%s\",\n",
         init[o->init], (double)o->init_std, pos[o->positions], attn[o->attention]);
    putf(b, "  \"window\": %d,\n  \"dropout_attn\": %.9g,\n  \"dropout_hidden\": %.9g,\n  \"seed\": %llu,\n",
         (int)o->window, (double)o->dropout_attn, (double)o->dropout_hidden, (unsigned long long)o->seed);
    if (o->attention == ATN_ATTN_LONGFORMER) {
        putf(b, "  \"global_first\": %d,\n  \"globals\": [", (int)o->global_first);
        for (int32_t i = 0; i < o->n_globals; i++)
            putf(b, "%s%d", i ? ", " : "", (int)o->globals[i]);
        puts_b(b, "],\n");
    }
    if (o->attention == ATN_ATTN_CHUNKED)
        putf(b, "  \"chunk\": %d,\n", (int)o->chunk);
    putf(b, "  \"optim\": \"%s\",\n  \"lr\": %.9g,\n  \"beta1\": %.9g,\n  \"beta2\": %.9g,\n  \"eps\": %.9g,\n",
         optim[o->optim], (double)o->lr, (double)o->beta1, (double)o->beta2, (double)o->adam_eps);
    putf(b, "  \"weight_decay\": %.9g,\n  \"momentum\": %.9g,\n  \"warmup\": %d,\n  \"clip\": %.9g,\n",
         (double)o->weight_decay, (double)o->momentum, (int)o->warmup, (double)o->clip);
    putf(b, "  \"attention_only\": %s,\n  \"rms_norm\": %s,\n", o->attention_only ? "true" : "false",
         o->rms_norm ? "true" : "false");
    putf(b, "  \"precision\": \"%s\",\n  \"checkpoint\": %s,\n  \"loss_scale\": %.9g,\n  \"skipped_steps\": %d,\n",
         atn_precision_name(o->precision), o->checkpoint ? "true" : "false",
         (double)(o->precision == ATN_PRECISION_FP16 ? t->scaler.scale : 1.0f), (int)t->scaler.skipped);
    putf(b, "  \"batch\": %d,\n  \"steps_done\": %d\n}\n", (int)o->batch, (int)t->steps_done);
}

static void config_json(buf *b, const atn_trainer *t) {
    const atn_train_options *o = &t->o;
    if (o->decoder && o->rms_norm) {   /* LlamaForCausalLM: rotate_half, theta 10000, q/k/v/o biases */
        putf(b, "{\n  \"model_type\": \"llama\",\n  \"architectures\": [\"LlamaForCausalLM\"],\n"
                "  \"hidden_act\": \"silu\",\n  \"hidden_size\": %d,\n  \"num_hidden_layers\": %d,\n"
                "  \"num_attention_heads\": %d,\n  \"num_key_value_heads\": %d,\n  \"head_dim\": %d,\n"
                "  \"intermediate_size\": %d,\n  \"max_position_embeddings\": %d,\n  \"vocab_size\": %d,\n",
             (int)o->d_model, (int)o->layers, (int)o->heads, (int)o->heads, (int)(o->d_model / o->heads),
             (int)t->desc.f, (int)t->P, (int)t->V);
        putf(b, "  \"rms_norm_eps\": %.9g,\n  \"rope_theta\": 10000.0,\n  \"rope_scaling\": null,\n"
                "  \"attention_bias\": true,\n  \"mlp_bias\": false,\n  \"attention_dropout\": %.9g,\n"
                "  \"initializer_range\": %.9g,\n  \"bos_token_id\": %d,\n  \"eos_token_id\": %d,\n"
                "  \"tie_word_embeddings\": true,\n  \"torch_dtype\": \"float32\"\n}\n",
             (double)t->desc.eps, (double)o->dropout_attn, (double)o->init_std, ATN_TR_CLS, ATN_TR_SEP);
        return;
    }
    if (o->decoder) {
        putf(b, "{\n  \"model_type\": \"gpt2\",\n  \"architectures\": [\"GPT2LMHeadModel\"],\n"
                "  \"activation_function\": \"gelu_new\",\n  \"n_embd\": %d,\n  \"n_layer\": %d,\n  \"n_head\": %d,\n"
                "  \"n_inner\": %d,\n  \"n_positions\": %d,\n  \"n_ctx\": %d,\n  \"vocab_size\": %d,\n",
             (int)o->d_model, (int)o->layers, (int)o->heads, (int)t->desc.f, (int)t->P, (int)t->P, (int)t->V);
        putf(b, "  \"layer_norm_epsilon\": %.9g,\n  \"attn_pdrop\": %.9g,\n  \"resid_pdrop\": %.9g,\n"
                "  \"embd_pdrop\": %.9g,\n  \"initializer_range\": %.9g,\n  \"bos_token_id\": %d,\n"
                "  \"eos_token_id\": %d,\n  \"scale_attn_weights\": true,\n"
                "  \"scale_attn_by_inverse_layer_idx\": false,\n  \"reorder_and_upcast_attn\": false,\n"
                "  \"tie_word_embeddings\": true,\n  \"torch_dtype\": \"float32\"\n}\n",
             (double)t->desc.eps, (double)o->dropout_attn, (double)o->dropout_hidden, (double)o->dropout_hidden,
             (double)o->init_std, ATN_TR_CLS, ATN_TR_SEP);
        return;
    }
    putf(b, "{\n  \"model_type\": \"bert\",\n  \"architectures\": [\"BertForMaskedLM\"],\n  \"hidden_act\": \"gelu\",\n"
            "  \"hidden_size\": %d,\n  \"num_hidden_layers\": %d,\n  \"num_attention_heads\": %d,\n"
            "  \"intermediate_size\": %d,\n  \"max_position_embeddings\": %d,\n  \"vocab_size\": %d,\n"
            "  \"type_vocab_size\": 1,\n",
         (int)o->d_model, (int)o->layers, (int)o->heads, (int)t->desc.f, (int)t->P, (int)t->V);
    putf(b, "  \"layer_norm_eps\": %.9g,\n  \"attention_probs_dropout_prob\": %.9g,\n"
            "  \"hidden_dropout_prob\": %.9g,\n  \"initializer_range\": %.9g,\n  \"pad_token_id\": %d,\n"
            "  \"position_embedding_type\": \"absolute\",\n  \"tie_word_embeddings\": true,\n"
            "  \"torch_dtype\": \"float32\"\n}\n",
         (double)t->desc.eps, (double)o->dropout_attn, (double)o->dropout_hidden, (double)o->init_std, ATN_TR_PAD);
}

static atn_status save_text(const char *dir, const char *file, buf *b, atn_error *err) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path) {
        free(b->p);
        return atn_error_set(err, ATN_E_INVALID, "%s: path too long", dir);
    }
    return write_buf(b, path, err);
}

/* tokenizer.json: one token per character, whitespace separating nothing but itself, the
 * special tokens matched as written ("[MASK]"), no [CLS]/[SEP] added: the text is the
 * model's input as the tasks lay it out.  (vocab.txt alone would make WordPiece add
 * [CLS] and [SEP] and cut "abc" into one word.) */
static void tokenizer_json(buf *b, const atn_trainer *t) {
    puts_b(b, "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n  \"added_tokens\": [");
    for (int32_t i = 0; i < t->n_special; i++) {
        putf(b, "%s\n    {\"id\": %d, \"content\": ", i ? "," : "", (int)i);
        json_string(b, t->vocab[i]);
        puts_b(b, ", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, "
               "\"special\": true}");
    }
    putf(b, "\n  ],\n  \"normalizer\": null,\n  \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [\n"
            "    {\"type\": \"WhitespaceSplit\"},\n"
            "    {\"type\": \"Split\", \"pattern\": {\"Regex\": \".\"}, \"behavior\": \"Isolated\", \"invert\": false}\n"
            "  ]},\n  \"post_processor\": null,\n  \"decoder\": null,\n"
            "  \"model\": {\"type\": \"WordLevel\", \"unk_token\": \"[UNK]\", \"vocab\": {");
    for (int32_t i = 0; i < t->V; i++) {
        puts_b(b, i ? ",\n    " : "\n    ");
        json_string(b, t->vocab[i]);
        putf(b, ": %d", (int)i);
    }
    puts_b(b, "\n  }}\n}\n");
}

atn_status atn_trainer_save(const atn_trainer *t, const char *dir, atn_error *err) {
    if (!t || !dir || !*dir)
        return atn_error_set(err, ATN_E_INVALID, "atn_trainer_save: no trainer or folder");
    atn_status st = atn_train_options_check(&t->o, true, err);
    if (st != ATN_OK || (st = make_dir(dir, err)) != ATN_OK)
        return st;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/model.safetensors", dir) >= (int)sizeof path)
        return atn_error_set(err, ATN_E_INVALID, "%s: path too long", dir);
    if ((st = save_safetensors(t, path, err)) != ATN_OK)
        return st;
    buf b = {0};
    config_json(&b, t);
    if ((st = save_text(dir, "config.json", &b, err)) != ATN_OK)
        return st;
    for (int32_t i = 0; i < t->V; i++)
        putf(&b, "%s\n", t->vocab[i]);
    if ((st = save_text(dir, "vocab.txt", &b, err)) != ATN_OK)
        return st;
    putf(&b, "{\n  \"do_lower_case\": false,\n  \"tokenize_chinese_chars\": true,\n  \"model_max_length\": %d,\n"
             "  \"unk_token\": \"[UNK]\",\n  \"pad_token\": \"[PAD]\",\n  \"cls_token\": \"[CLS]\",\n"
             "  \"sep_token\": \"[SEP]\",\n  \"mask_token\": \"[MASK]\",\n  \"tokenizer_class\": \"BertTokenizer\"\n}\n",
         (int)t->P);
    if ((st = save_text(dir, "tokenizer_config.json", &b, err)) != ATN_OK)
        return st;
    tokenizer_json(&b, t);
    if ((st = save_text(dir, "tokenizer.json", &b, err)) != ATN_OK)
        return st;
    options_json(&b, t);
    return save_text(dir, "training.json", &b, err);
}

atn_status atn_trainer_dump_grads(const atn_trainer *t, const char *path, atn_error *err) {
    if (!t || !path || !*path)
        return atn_error_set(err, ATN_E_INVALID, "atn_trainer_dump_grads: no trainer or path");
    atn_npz *z = atn_npz_new();
    size_t M = (size_t)t->M;
    int64_t *tmp = calloc(M ? M : 1, sizeof(int64_t));
    if (!tmp || !z) {
        free(tmp);
        atn_npz_free(z);
        return atn_error_set(err, ATN_E_NOMEM, "out of memory writing %s", path);
    }
    int64_t shape[2] = {t->B, t->n};
    for (size_t i = 0; i < M; i++)
        tmp[i] = t->ids[i];
    atn_npz_add(z, "input_ids", tmp, true, shape, 2);
    for (size_t i = 0; i < M; i++)
        tmp[i] = t->labels[i];
    atn_npz_add(z, "labels", tmp, true, shape, 2);
    for (size_t i = 0; i < M; i++)
        tmp[i] = 1;
    atn_npz_add(z, "attention_mask", tmp, true, shape, 2);
    atn_npz_add(z, "loss", &t->loss, false, NULL, 0);
    free(tmp);
    for (int i = 0; i < t->n_tensors; i++) {
        const atn_tr_tensor *x = &t->tensors[i];
        if (t->params[x->parts[0]].fixed)   /* sinusoidal or no positions: not a parameter */
            continue;
        size_t count = tensor_count(x);
        float *g = malloc(count * sizeof(float));
        if (!g) {
            atn_npz_fail(z);
            break;
        }
        atn_trainer_tensor_get(t, x->name, true, g, count, NULL);
        atn_npz_add(z, x->name, g, false, x->shape, x->ndim);
        free(g);
    }
    return atn_npz_write(z, path, err);
}

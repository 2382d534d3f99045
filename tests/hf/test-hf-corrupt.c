/* Broken Hugging Face folders, made at test time from the good generated ones in a
 * temporary folder: damaged safetensors files (truncated, bad header sizes, bad offsets,
 * dtypes and shapes), tensors missing or of the wrong shape, bad config.json, missing
 * vocab.txt, bad shard indexes.  Each must be refused with the right status and a message
 * that names the file and the problem. */
#define _GNU_SOURCE   /* nftw */
#include "check.h"
#include "attnscope.h"

#include <cjson/cJSON.h>
#include <ftw.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char src_root[2048];
static char tmp_root[256];
static int case_no;

/* ---- files ------------------------------------------------------------------- */

static uint8_t *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    b[*len] = 0;
    fclose(f);
    return b;
}

static void write_all(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
}

static void copy_file(const char *from, const char *to) {
    size_t len;
    uint8_t *b = read_all(from, &len);
    if (!b) {
        fprintf(stderr, "cannot read %s\n", from);
        exit(1);
    }
    write_all(to, b, len);
    free(b);
}

/* A fresh copy of tests/hf/models/<model> in the temp folder; returns its path. */
static const char *fresh(const char *model, char *dir, size_t size) {
    snprintf(dir, size, "%s/case%02d-%s", tmp_root, ++case_no, model);
    mkdir(dir, 0755);
    const char *files[] = {"config.json", "model.safetensors", "vocab.txt",
                           "tokenizer_config.json", "model.safetensors.index.json",
                           "model-00001-of-00002.safetensors",
                           "model-00002-of-00002.safetensors"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char a[4096 + 64], b[4096 + 64];
        snprintf(a, sizeof a, "%s/models/%s/%s", src_root, model, files[i]);
        snprintf(b, sizeof b, "%s/%s", dir, files[i]);
        if (access(a, R_OK) == 0)
            copy_file(a, b);
    }
    return dir;
}

static void in(char *out, const char *dir, const char *name) {
    if (snprintf(out, 4096, "%s/%s", dir, name) >= 4096) {
        fprintf(stderr, "path too long: %s\n", dir);
        exit(1);
    }
}

/* ---- editing safetensors and JSON files --------------------------------------- */

/* Rewrites path's JSON header through edit(); the data area is kept as it was. */
static void edit_header(const char *path, void (*edit)(cJSON *hdr, const void *arg),
                        const void *arg) {
    size_t len;
    uint8_t *b = read_all(path, &len);
    uint64_t h = 0;
    for (int i = 7; i >= 0; i--)
        h = h << 8 | b[i];
    cJSON *hdr = cJSON_ParseWithLength((const char *)b + 8, h);
    edit(hdr, arg);
    char *text = cJSON_PrintUnformatted(hdr);
    size_t tl = strlen(text), dl = len - 8 - h;
    uint8_t *out = malloc(8 + tl + dl);
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)((uint64_t)tl >> (8 * i));
    memcpy(out + 8, text, tl);
    memcpy(out + 8 + tl, b + 8 + h, dl);
    write_all(path, out, 8 + tl + dl);
    free(out);
    free(text);
    cJSON_Delete(hdr);
    free(b);
}

static void set_size_field(const char *path, uint64_t n) {
    size_t len;
    uint8_t *b = read_all(path, &len);
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(n >> (8 * i));
    write_all(path, b, len);
    free(b);
}

static uint64_t data_len_of(const char *path) {
    size_t len;
    uint8_t *b = read_all(path, &len);
    uint64_t h = 0;
    for (int i = 7; i >= 0; i--)
        h = h << 8 | b[i];
    free(b);
    return len - 8 - h;
}

static void edit_json(const char *path, void (*edit)(cJSON *root, const void *arg),
                      const void *arg) {
    size_t len;
    char *b = (char *)read_all(path, &len);
    cJSON *root = cJSON_Parse(b);
    edit(root, arg);
    char *text = cJSON_Print(root);
    write_all(path, text, strlen(text));
    free(text);
    cJSON_Delete(root);
    free(b);
}

typedef struct kv {
    const char *key;
    const char *field;     /* dtype / shape / data_offsets, or NULL */
    const char *json;      /* new value as JSON; NULL deletes key */
} kv;

static void set_entry(cJSON *root, const void *arg) {
    const kv *e = arg;
    cJSON *target = root;
    const char *key = e->key;
    if (e->field) {
        target = cJSON_GetObjectItemCaseSensitive(root, e->key);
        key = e->field;
    }
    if (!target) {
        fprintf(stderr, "test bug: no entry %s\n", e->key);
        exit(1);
    }
    if (e->json && cJSON_GetObjectItemCaseSensitive(target, key))
        cJSON_ReplaceItemInObjectCaseSensitive(target, key, cJSON_Parse(e->json));
    else if (e->json)
        cJSON_AddItemToObject(target, key, cJSON_Parse(e->json));
    else
        cJSON_DeleteItemFromObjectCaseSensitive(target, key);
}

static void rename_entry(cJSON *root, const void *arg) {
    const char *const *names = arg;
    cJSON *item = cJSON_DetachItemFromObjectCaseSensitive(root, names[0]);
    cJSON_AddItemToObject(root, names[1], item);
}

/* b's data_offsets := a's (both must be [32] F32 in the f32 model) */
static void overlap_entries(cJSON *root, const void *arg) {
    const char *const *names = arg;
    cJSON *a = cJSON_GetObjectItemCaseSensitive(root, names[0]);
    cJSON *b = cJSON_GetObjectItemCaseSensitive(root, names[1]);
    cJSON_ReplaceItemInObjectCaseSensitive(
        b, "data_offsets", cJSON_Duplicate(cJSON_GetObjectItem(a, "data_offsets"), 1));
}

/* ---- expectations --------------------------------------------------------------- */

static void expect_fail(int line, const char *dir, atn_status status, const char *want1,
                        const char *want2) {
    atn_error err = {0};
    atn_model *m = atn_model_open_hf(dir, NULL, NULL, &err);
    check_count++;
    bool ok = m == NULL && err.status == status && strstr(err.message, want1) &&
              (!want2 || strstr(err.message, want2));
    if (!ok) {
        check_failures++;
        fprintf(stderr, "line %d: %s: got %s status %d \"%s\"; expected status %d with \"%s\"%s%s\n",
                line, dir, m ? "a model and" : "", err.status, err.message, status, want1,
                want2 ? " and " : "", want2 ? want2 : "");
    } else {
        printf("ok line %d: %s\n", line, err.message);
    }
    atn_model_free(m);
}
#define FAIL(dir, status, w1, w2) expect_fail(__LINE__, dir, status, w1, w2)

/* ---- the cases ------------------------------------------------------------------ */

static void safetensors_cases(void) {
    char d[4096], st[4096];
    const char *ms = "model.safetensors";
    /* truncated in the data area, in the header, inside the size field */
    in(st, fresh("f32", d, sizeof d), ms);
    CHECK(truncate(st, 40000) == 0);
    FAIL(d, ATN_E_FORMAT, "model.safetensors: tensor '", "past the end of the data area");
    in(st, fresh("f32", d, sizeof d), ms);
    CHECK(truncate(st, 100) == 0);
    FAIL(d, ATN_E_FORMAT, "model.safetensors: header size", "runs past the end of the file (100");
    in(st, fresh("f32", d, sizeof d), ms);
    CHECK(truncate(st, 5) == 0);
    FAIL(d, ATN_E_FORMAT, "model.safetensors: truncated", "5 bytes");
    /* header size field */
    size_t len;
    in(st, fresh("f32", d, sizeof d), ms);
    free(read_all(st, &len));
    set_size_field(st, len);
    FAIL(d, ATN_E_FORMAT, "model.safetensors: header size", "runs past the end of the file");
    in(st, fresh("f32", d, sizeof d), ms);
    set_size_field(st, 0);
    FAIL(d, ATN_E_FORMAT, "model.safetensors: header size is 0", NULL);
    in(st, fresh("f32", d, sizeof d), ms);
    set_size_field(st, (uint64_t)1 << 63);
    FAIL(d, ATN_E_FORMAT, "model.safetensors: header size 9223372036854775808", "past the end");
    /* JSON */
    in(st, fresh("f32", d, sizeof d), ms);
    {
        uint8_t *b = read_all(st, &len);
        b[8] = '[';   /* {"__metadata__": ... becomes ["__metadata__": ... */
        write_all(st, b, len);
        free(b);
    }
    FAIL(d, ATN_E_FORMAT, "model.safetensors: the JSON header is invalid", NULL);
    in(st, fresh("f32", d, sizeof d), ms);
    {
        const char arr[] = "[1,2]   ";
        uint8_t head[8 + sizeof arr - 1];
        for (int i = 0; i < 8; i++)
            head[i] = (uint8_t)((sizeof arr - 1) >> (8 * i));
        memcpy(head + 8, arr, sizeof arr - 1);
        write_all(st, head, sizeof head);
    }
    FAIL(d, ATN_E_FORMAT, "model.safetensors: the JSON header is not an object", NULL);
    /* offsets */
    const char *lnw = "embeddings.LayerNorm.weight", *lnb = "embeddings.LayerNorm.bias";
    const char *pair[2] = {lnw, lnb};
    in(st, fresh("f32", d, sizeof d), ms);
    edit_header(st, overlap_entries, pair);
    FAIL(d, ATN_E_FORMAT, "model.safetensors: tensors 'embeddings.LayerNorm.", "overlap");
    in(st, fresh("f32", d, sizeof d), ms);
    {
        char offs[64];
        uint64_t dl = data_len_of(st);
        snprintf(offs, sizeof offs, "[%llu,%llu]", (unsigned long long)dl - 64,
                 (unsigned long long)dl + 64);
        edit_header(st, set_entry, &(kv){lnb, "data_offsets", offs});
    }
    FAIL(d, ATN_E_FORMAT, "model.safetensors: tensor 'embeddings.LayerNorm.bias': data_offsets",
         "past the end of the data area");
    in(st, fresh("f32", d, sizeof d), ms);
    edit_header(st, set_entry, &(kv){lnb, "data_offsets", "[128,0]"});
    FAIL(d, ATN_E_FORMAT, "tensor 'embeddings.LayerNorm.bias': data_offsets [128, 0] has begin "
         "after end", "model.safetensors");
    /* dtype and shape */
    in(st, fresh("f32", d, sizeof d), ms);
    edit_header(st, set_entry, &(kv){lnb, "dtype", "\"FP32\""});
    FAIL(d, ATN_E_FORMAT, "model.safetensors: tensor 'embeddings.LayerNorm.bias': unknown dtype "
         "\"FP32\"", NULL);
    in(st, fresh("f32", d, sizeof d), ms);
    edit_header(st, set_entry, &(kv){lnb, "dtype", "\"I32\""});
    FAIL(d, ATN_E_UNSUPPORTED, "model.safetensors: tensor 'embeddings.LayerNorm.bias' has "
         "unsupported dtype I32", NULL);
    in(st, fresh("f32", d, sizeof d), ms);
    edit_header(st, set_entry, &(kv){lnb, "shape", "[33]"});
    FAIL(d, ATN_E_FORMAT, "tensor 'embeddings.LayerNorm.bias': shape [33] of F32 needs 132 bytes "
         "but data_offsets", "model.safetensors");
    in(st, fresh("f32", d, sizeof d), ms);
    edit_header(st, set_entry, &(kv){lnb, "shape", "[4294967296,4294967296]"});
    FAIL(d, ATN_E_FORMAT, "model.safetensors: tensor 'embeddings.LayerNorm.bias': shape "
         "[4294967296, 4294967296] overflows", NULL);
    /* tensors the encoder needs */
    const char *key1 = "encoder.layer.1.attention.self.key.weight";
    const char *ren[2] = {key1, "encoder.layer.1.attention.self.kee.weight"};
    in(st, fresh("f32", d, sizeof d), ms);
    edit_header(st, rename_entry, ren);
    FAIL(d, ATN_E_SHAPE, "model.safetensors: missing tensor "
         "'encoder.layer.1.attention.self.key.weight' (expected shape [32, 32])", NULL);
    in(st, fresh("f32", d, sizeof d), ms);
    edit_header(st, set_entry, &(kv){key1, "shape", "[16,64]"});
    FAIL(d, ATN_E_SHAPE, "model.safetensors: tensor 'encoder.layer.1.attention.self.key.weight' "
         "has shape [16, 64], expected [32, 32]", NULL);
    in(st, fresh("f32", d, sizeof d), ms);
    edit_header(st, set_entry, &(kv){"encoder.layer.0.intermediate.dense.bias", "shape", "[8,8]"});
    FAIL(d, ATN_E_SHAPE, "tensor 'encoder.layer.0.intermediate.dense.bias' has shape [8, 8], "
         "expected [64]", NULL);
    /* prefixed names are reported as they are in the file */
    const char *ren2[2] = {"bert.encoder.layer.0.output.LayerNorm.bias", "bert.x"};
    in(st, fresh("mlm", d, sizeof d), ms);
    edit_header(st, rename_entry, ren2);
    FAIL(d, ATN_E_SHAPE, "missing tensor 'bert.encoder.layer.0.output.LayerNorm.bias' (expected "
         "shape [16])", NULL);
    /* a partial masked-LM head is an error, not silently dropped */
    const char *ren3[2] = {"cls.predictions.transform.LayerNorm.weight", "cls.x"};
    in(st, fresh("mlm", d, sizeof d), ms);
    edit_header(st, rename_entry, ren3);
    FAIL(d, ATN_E_SHAPE, "missing tensor 'cls.predictions.transform.LayerNorm.weight'", NULL);
    /* legacy names are accepted, but both spellings missing is reported with the new one */
    const char *ren4[2] = {"bert.encoder.layer.2.attention.output.LayerNorm.gamma", "bert.y"};
    in(st, fresh("legacy", d, sizeof d), ms);
    edit_header(st, rename_entry, ren4);
    FAIL(d, ATN_E_SHAPE, "missing tensor 'bert.encoder.layer.2.attention.output.LayerNorm.weight'",
         NULL);
    /* no weights at all */
    in(st, fresh("f32", d, sizeof d), ms);
    unlink(st);
    FAIL(d, ATN_E_IO, "no weights: none of model.safetensors, model.safetensors.index.json, "
         "pytorch_model.bin, pytorch_model.bin.index.json", NULL);
    /* without safetensors, pytorch_model.bin is read (engine/formats/torch-bin.c) */
    in(st, d, "pytorch_model.bin");
    write_all(st, "PK", 2);
    FAIL(d, ATN_E_FORMAT, "pytorch_model.bin: not a PyTorch checkpoint (neither a ZIP archive "
         "nor a pickle)", NULL);
}

static void config_cases(void) {
    char d[4096], p[4096];
    const char *cj = "config.json";
    in(p, fresh("f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"num_hidden_layers", NULL, NULL});
    FAIL(d, ATN_E_FORMAT, "config.json: missing key \"num_hidden_layers\"", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"hidden_size", NULL, "\"32\""});
    FAIL(d, ATN_E_FORMAT, "config.json: \"hidden_size\" must be an integer, not a string", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"intermediate_size", NULL, "64.5"});
    FAIL(d, ATN_E_FORMAT, "config.json: \"intermediate_size\" must be an integer, not 64.5", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"num_attention_heads", NULL, "0"});
    FAIL(d, ATN_E_FORMAT, "config.json: \"num_attention_heads\" is 0; expected 1..", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"num_attention_heads", NULL, "5"});
    FAIL(d, ATN_E_FORMAT, "config.json: \"hidden_size\" 32 is not a multiple of "
         "\"num_attention_heads\" 5", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"layer_norm_eps", NULL, "\"1e-12\""});
    FAIL(d, ATN_E_FORMAT, "config.json: \"layer_norm_eps\" must be a number, not a string", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"hidden_act", NULL, "[\"gelu\"]"});
    FAIL(d, ATN_E_FORMAT, "config.json: \"hidden_act\" must be a string, not an array", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"hidden_act", NULL, "\"swish\""});
    FAIL(d, ATN_E_UNSUPPORTED, "config.json: \"hidden_act\" is \"swish\"", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"position_embedding_type", NULL, "\"relative_key\""});
    FAIL(d, ATN_E_UNSUPPORTED, "config.json: \"position_embedding_type\" is \"relative_key\"; "
         "only \"absolute\"", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"model_type", NULL, "\"deberta\""});
    FAIL(d, ATN_E_UNSUPPORTED, "config.json: \"model_type\" is \"deberta\"", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"vocab_size", NULL, "-1"});
    FAIL(d, ATN_E_FORMAT, "config.json: \"vocab_size\" is -1", NULL);
    /* the config and the weights disagree */
    in(p, fresh("f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"hidden_size", NULL, "16"});
    FAIL(d, ATN_E_SHAPE, "model.safetensors: tensor 'embeddings.word_embeddings.weight' has "
         "shape [48, 32], expected [48, 16]", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"num_hidden_layers", NULL, "3"});
    FAIL(d, ATN_E_SHAPE, "missing tensor 'encoder.layer.2.attention.self.query.weight'", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    write_all(p, "{\"hidden_size\": 32,", 19);
    FAIL(d, ATN_E_FORMAT, "config.json: invalid JSON", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    write_all(p, "[32]", 4);
    FAIL(d, ATN_E_FORMAT, "config.json: expected a JSON object", NULL);
    in(p, fresh("f32", d, sizeof d), cj);
    unlink(p);
    FAIL(d, ATN_E_IO, "missing config.json", NULL);
}

/* GPT-2 folders (gen_gpt2.py's gpt2-f32: n_embd 24, 4 heads, 2 layers, vocabulary 64,
 * "transformer." prefix): its own config keys, the fused c_attn and Conv1D shapes, the
 * untied head, the tokenizer files. */
static void gpt2_cases(void) {
    char d[4096], p[4096];
    const char *cj = "config.json";
    in(p, fresh("gpt2-f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"n_layer", NULL, NULL});
    FAIL(d, ATN_E_FORMAT, "config.json: missing key \"n_layer\"", NULL);
    in(p, fresh("gpt2-f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"n_inner", NULL, "\"96\""});
    FAIL(d, ATN_E_FORMAT, "config.json: \"n_inner\" must be an integer, not a string", NULL);
    in(p, fresh("gpt2-f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"n_inner", NULL, "50"});   /* the weights have 4 * 24 */
    FAIL(d, ATN_E_SHAPE, "tensor 'transformer.h.0.mlp.c_fc.weight' has shape [24, 96], expected [24, 50]", NULL);
    in(p, fresh("gpt2-f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"scale_attn_weights", NULL, "1"});
    FAIL(d, ATN_E_FORMAT, "config.json: \"scale_attn_weights\" must be true or false, not a number", NULL);
    in(p, fresh("gpt2-f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"activation_function", NULL, "\"silu\""});
    FAIL(d, ATN_E_UNSUPPORTED, "config.json: \"activation_function\" is \"silu\"", NULL);
    in(p, fresh("gpt2-f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"n_embd", NULL, "25"});
    FAIL(d, ATN_E_FORMAT, "\"n_embd\" 25 is not a multiple of \"n_head\" 4", NULL);
    in(p, fresh("gpt2-f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"n_layer", NULL, "3"});
    FAIL(d, ATN_E_SHAPE, "missing tensor 'transformer.h.2.attn.c_attn.weight' (expected shape [24, 72])", NULL);
    in(p, fresh("gpt2-f32", d, sizeof d), cj);
    edit_json(p, set_entry, &(kv){"tie_word_embeddings", NULL, "false"});
    FAIL(d, ATN_E_SHAPE, "missing tensor 'lm_head.weight' (expected shape [64, 24])", NULL);
    /* a c_attn stored [3d, d] (as a Linear would be) is not GPT-2's Conv1D */
    in(p, fresh("gpt2-f32", d, sizeof d), "model.safetensors");
    edit_header(p, set_entry, &(kv){"transformer.h.1.attn.c_attn.weight", "shape", "[72, 24]"});
    FAIL(d, ATN_E_SHAPE, "tensor 'transformer.h.1.attn.c_attn.weight' has shape [72, 24], expected [24, 72]", NULL);
    in(p, fresh("gpt2-f32", d, sizeof d), "model.safetensors");
    edit_header(p, rename_entry, (const char *const[]){"transformer.ln_f.weight", "transformer.ln_g.weight"});
    FAIL(d, ATN_E_SHAPE, "missing tensor 'transformer.ln_f.weight'", NULL);
    /* no vocab.txt (the WordPiece fallback) and no reader for vocab.json yet: refused by name */
    in(p, fresh("gpt2-f32", d, sizeof d), "vocab.txt");
    unlink(p);
    FAIL(d, ATN_E_UNSUPPORTED, "no \"bpe\" tokenizer for GPT-2 models", NULL);
    /* tok-folder.h's one rule, step 3: the family's own file without what reads it is
       refused by name even beside a vocab.txt (GPT2Tokenizer needs merges.txt, AlbertTokenizer
       reads spiece.model, never vocab.txt) */
    in(p, fresh("gpt2-f32", d, sizeof d), "vocab.json");
    {
        FILE *f = fopen(p, "w");
        fputs("{\"a\": 0}", f);
        fclose(f);
    }
    FAIL(d, ATN_E_UNSUPPORTED, "vocab.json is there but no merges.txt: the \"bpe\" tokenizer of GPT-2 models", NULL);
    in(p, fresh("albert-f32", d, sizeof d), "spiece.model");
    {
        FILE *f = fopen(p, "w");
        fputs("not read", f);
        fclose(f);
    }
    FAIL(d, ATN_E_UNSUPPORTED, "spiece.model is there but no tokenizer.json: the \"unigram\" tokenizer of ALBERT models", NULL);
    /* a dangling tokenizer.json is an error, not a reason to fall through to vocab.txt */
    in(p, fresh("f32", d, sizeof d), "tokenizer.json");
    CHECK(symlink("gone.json", p) == 0);
    FAIL(d, ATN_E_IO, "tokenizer.json: a broken symbolic link (to gone.json)", NULL);
}

static void vocab_and_folder_cases(void) {
    char d[4096], p[4096];
    in(p, fresh("f32", d, sizeof d), "vocab.txt");
    unlink(p);
    FAIL(d, ATN_E_IO, "missing vocab.txt", "vocab.txt");
    in(p, fresh("f32", d, sizeof d), "vocab.txt");
    {   /* more entries than the embedding has rows */
        FILE *f = fopen(p, "a");
        for (int i = 0; i < 10; i++)
            fprintf(f, "extra%d\n", i);
        fclose(f);
    }
    FAIL(d, ATN_E_SHAPE, "vocab.txt: 58 entries, but config.json says vocab_size 48", NULL);
    snprintf(p, sizeof p, "%s/no-such-folder", tmp_root);
    FAIL(p, ATN_E_IO, "no-such-folder: cannot open model folder", NULL);
    in(p, fresh("f32", d, sizeof d), "config.json");
    FAIL(p, ATN_E_IO, "config.json: not a folder", NULL);
}

static void shard_cases(void) {
    char d[4096], p[4096];
    const char *ix = "model.safetensors.index.json";
    const char *emb = "embeddings.word_embeddings.weight";
    cJSON *wm;
    in(p, fresh("sharded", d, sizeof d), ix);
    edit_json(p, set_entry, &(kv){"weight_map", emb, "\"../evil.safetensors\""});
    FAIL(d, ATN_E_FORMAT, "model.safetensors.index.json: weight_map[\"embeddings.word_embeddings."
         "weight\"] = \"../evil.safetensors\" is not a plain file name", NULL);
    in(p, fresh("sharded", d, sizeof d), ix);
    edit_json(p, set_entry, &(kv){"weight_map", emb, "\"/etc/passwd\""});
    FAIL(d, ATN_E_FORMAT, "is not a plain file name", NULL);
    in(p, fresh("sharded", d, sizeof d), ix);
    edit_json(p, set_entry, &(kv){"weight_map", emb, "\"model-00003-of-00002.safetensors\""});
    FAIL(d, ATN_E_IO, "model-00003-of-00002.safetensors: cannot open", "index.json");
    in(p, fresh("sharded", d, sizeof d), ix);
    edit_json(p, set_entry, &(kv){"weight_map", NULL, "[]"});
    FAIL(d, ATN_E_FORMAT, "model.safetensors.index.json: \"weight_map\" is not an object", NULL);
    in(p, fresh("sharded", d, sizeof d), ix);
    edit_json(p, set_entry, &(kv){"weight_map", emb, NULL});
    FAIL(d, ATN_E_SHAPE, "model.safetensors.index.json: missing tensor "
         "'embeddings.word_embeddings.weight' (expected shape [48, 16])", NULL);
    /* the index points at a shard that does not hold the tensor */
    in(p, fresh("sharded", d, sizeof d), ix);
    {
        size_t len;
        char *b = (char *)read_all(p, &len);
        cJSON *root = cJSON_Parse(b);
        wm = cJSON_GetObjectItem(root, "weight_map");
        const char *shard = cJSON_GetObjectItem(wm, emb)->valuestring;
        const char *other = strcmp(shard, "model-00001-of-00002.safetensors") == 0
                                ? "\"model-00002-of-00002.safetensors\""
                                : "\"model-00001-of-00002.safetensors\"";
        free(b);
        cJSON_Delete(root);
        edit_json(p, set_entry, &(kv){"weight_map", emb, other});
    }
    FAIL(d, ATN_E_SHAPE, "model.safetensors.index.json: lists tensor "
         "'embeddings.word_embeddings.weight' in model-0000", "but that file has no such tensor");
    /* a damaged shard is named */
    in(p, fresh("sharded", d, sizeof d), "model-00002-of-00002.safetensors");
    CHECK(truncate(p, 3) == 0);
    FAIL(d, ATN_E_FORMAT, "model-00002-of-00002.safetensors: truncated", NULL);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    return remove(path);
}

int main(void) {
    const char *src = getenv("ATN_SOURCE_ROOT");
    snprintf(src_root, sizeof src_root, "%s/tests/hf", src ? src : ".");
    snprintf(tmp_root, sizeof tmp_root, "/tmp/attnscope-hf-XXXXXX");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return 1;
    }
    safetensors_cases();
    config_cases();
    gpt2_cases();
    vocab_and_folder_cases();
    shard_cases();
    if (check_failures == 0 || !getenv("ATN_KEEP_TMP"))
        nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    else
        fprintf(stderr, "kept %s\n", tmp_root);
    return check_summary("test-hf-corrupt");
}

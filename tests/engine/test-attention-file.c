/* The attention file (engine/formats/attention-file.c, attention-write.c, npy-image.c):
 * files written byte by byte here (so the reader is checked against the format, not against
 * its own writer), F16/BF16 decoding against hand-picked bit patterns, the round trip of
 * the writer bit for bit, and every bad input refused naming the tensor or key. */
#include "analysis.h"
#include "attention-file.h"
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static const char *tmp(const char *name) {
    static char path[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

static void write_bytes(const char *path, const void *a, size_t alen, const void *b, size_t blen) {
    FILE *f = fopen(path, "wb");
    fwrite(a, 1, alen, f);
    if (blen)
        fwrite(b, 1, blen, f);
    fclose(f);
}

/* A safetensors file: header JSON padded (with pad_char) so the data starts at a multiple of
 * 8 plus `skew`, then data. */
static const char *st_file_padded(const char *name, const char *header, const void *data, size_t len, char pad_char,
                                  size_t skew) {
    size_t h = strlen(header), pad = (8 - h % 8) % 8 + skew;
    unsigned char *buf = malloc(8 + h + pad + len);
    uint64_t total = h + pad;
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)(total >> (8 * i));
    memcpy(buf + 8, header, h);
    memset(buf + 8 + h, pad_char, pad);
    if (len)
        memcpy(buf + 8 + h + pad, data, len);
    const char *path = tmp(name);
    write_bytes(path, buf, 8 + h + pad + len, NULL, 0);
    free(buf);
    return path;
}

static const char *st_file(const char *name, const char *header, const void *data, size_t len) {
    return st_file_padded(name, header, data, len, ' ', 0);
}

#define META "\"__metadata__\": {\"format\": \"\\\"attnscope-attention/1\\\"\""

/* Opens path expecting failure with status and a message containing want. */
static void expect_error(const char *path, atn_status status, const char *want) {
    atn_attn_file *f = NULL;
    atn_error err = {0};
    atn_status st = atn_attn_file_open(path, &f, &err);
    const atn_capture *cap;
    if (st == ATN_OK) {
        st = atn_attn_file_capture(f, &cap, NULL, NULL, &err);
        atn_attn_file_free(f);
    }
    CHECK_MSG(st == status, "%s: status %d, expected %d (%s)", path, st, status, err.message);
    CHECK_MSG(strstr(err.message, want) != NULL, "message \"%s\" lacks \"%s\"", err.message, want);
}

/* Two layers, one head, three tokens, F32; rows of layer 1 head 0 are given. */
static void test_f32_and_tokens(void) {
    float a[2][1][3][3] = {{{{1, 0, 0}, {0.5f, 0.5f, 0}, {0.25f, 0.25f, 0.5f}}},
                           {{{0.2f, 0.3f, 0.5f}, {0, 1, 0}, {0.1f, 0.1f, 0.8f}}}};
    int32_t ids[3] = {101, 7592, 102};
    unsigned char data[sizeof a + sizeof ids];
    memcpy(data, a, sizeof a);
    memcpy(data + sizeof a, ids, sizeof ids);
    const char *path = st_file("f32.safetensors",
                               "{" META ", \"tokens\": \"[\\\"[CLS]\\\", \\\"hi\\\", \\\"[SEP]\\\"]\", "
                               "\"model_id\": \"\\\"org/m\\\"\", \"causal\": \"true\"}, "
                               "\"attn\": {\"dtype\": \"F32\", \"shape\": [2, 1, 3, 3], \"data_offsets\": [0, 72]}, "
                               "\"token_ids\": {\"dtype\": \"I32\", \"shape\": [3], \"data_offsets\": [72, 84]}}",
                               data, sizeof data);
    atn_attn_file *f = NULL;
    atn_error err = {0};
    CHECK_MSG(atn_attn_file_open(path, &f, &err) == ATN_OK, "%s", err.message);
    if (!f)
        return;
    atn_attn_file_info info = atn_attn_file_get_info(f);
    CHECK(info.n_layers == 2 && info.n_heads == 1 && info.n == 3);
    CHECK_STR(info.model_id, "org/m");
    CHECK_STR(info.dtype, "F32");
    CHECK(info.causal);
    CHECK(info.has_token_ids && !info.has_qkv);
    const atn_encoding *e = atn_attn_file_encoding(f);
    CHECK(e->n == 3);
    CHECK_STR(e->tokens[1].text, "hi");
    CHECK(e->ids[0] == 101 && e->ids[2] == 102);
    CHECK(e->tokens[0].role == ATN_TOKEN_CLS && e->tokens[0].special);
    CHECK(e->tokens[2].role == ATN_TOKEN_SEP && e->tokens[1].role == ATN_TOKEN_WORD && !e->tokens[1].special);
    CHECK(e->mask[0] == 1 && e->mask[2] == 1);
    const float *l1;
    CHECK(atn_attn_file_layer(f, 1, &l1, &err) == ATN_OK);
    CHECK(l1 && memcmp(l1, a[1], sizeof a[1]) == 0);
    CHECK(atn_attn_file_warning(f) == NULL);
    CHECK(atn_attn_file_layer(f, 2, &l1, &err) == ATN_E_INVALID);
    const atn_capture *cap;
    CHECK(atn_attn_file_capture(f, &cap, NULL, NULL, &err) == ATN_OK);
    CHECK(cap->n_layers == 2 && cap->n_heads == 1 && cap->n == 3 && cap->enc == e);
    CHECK(memcmp(cap->attn, a, sizeof a) == 0);
    atn_attn_file_free(f);
}

/* F16 and BF16 from their bit patterns: 1.0, 0.5, 0.25, 0.125 are exact in both. */
static void test_half_types(void) {
    /* f16: 1 = 0x3c00, 0.5 = 0x3800, 0.25 = 0x3400, 0.125 = 0x3000, 0 = 0
       bf16: 1 = 0x3f80, 0.5 = 0x3f00, 0.25 = 0x3e80, 0.125 = 0x3e00 */
    uint16_t f16[2][2] = {{0x3c00, 0}, {0x3800, 0x3800}};
    uint16_t bf16[2][2] = {{0x3e80, 0x3f40 /* 0.75 */}, {0x3e00, 0x3f60 /* 0.875 */}};
    const float want16[4] = {1, 0, 0.5f, 0.5f}, wantb[4] = {0.25f, 0.75f, 0.125f, 0.875f};
    for (int k = 0; k < 2; k++) {
        char header[512];
        snprintf(header, sizeof header,
                 "{" META "}, \"attn.L0\": {\"dtype\": \"%s\", \"shape\": [1, 2, 2], \"data_offsets\": [0, 8]}}",
                 k ? "BF16" : "F16");
        const char *path = st_file(k ? "bf16.safetensors" : "f16.safetensors", header, k ? (void *)bf16 : (void *)f16, 8);
        atn_attn_file *f = NULL;
        atn_error err = {0};
        CHECK_MSG(atn_attn_file_open(path, &f, &err) == ATN_OK, "%s", err.message);
        const float *l0 = NULL;
        CHECK(f && atn_attn_file_layer(f, 0, &l0, &err) == ATN_OK);
        if (l0)
            CHECK_ARRAY_NEAR(k ? "bf16" : "f16", l0, k ? wantb : want16, 4, 0);
        const atn_encoding *e = atn_attn_file_encoding(f);
        CHECK(e && e->n == 2);
        CHECK_STR(e->tokens[1].text, "#1");   /* no tokens in the file */
        const atn_capture *cap = NULL;   /* the layer read before goes into the capture's block */
        CHECK(f && atn_attn_file_capture(f, &cap, NULL, NULL, &err) == ATN_OK);
        if (cap)
            CHECK_ARRAY_NEAR(k ? "bf16 capture" : "f16 capture", cap->attn, k ? wantb : want16, 4, 0);
        atn_attn_file_free(f);
    }
}

/* The writer's file read back: the same floats bit for bit, the tokens, roles and ids. */
static void test_round_trip(void) {
    int32_t L = 2, H = 3, n = 4;
    float *attn = malloc(sizeof(float) * (size_t)(L * H * n * n));
    uint32_t s = 12345;
    for (int32_t r = 0; r < L * H * n; r++) {
        float sum = 0, *row = attn + (size_t)r * n;
        for (int32_t j = 0; j < n; j++) {
            s = s * 1664525u + 1013904223u;
            row[j] = (float)(s >> 8) / 16777216.0f + 0.01f;
            sum += row[j];
        }
        for (int32_t j = 0; j < n; j++)
            row[j] /= sum;   /* not exactly 1: the round trip must keep the bits, not renormalise */
    }
    atn_token toks[4] = {{.text = "[CLS]", .role = ATN_TOKEN_CLS, .special = true},
                         {.text = "caf\xc3\xa9 \"q\"", .role = ATN_TOKEN_WORD},
                         {.text = "[MASK]", .role = ATN_TOKEN_MASK, .special = true},
                         {.text = "<s>", .role = ATN_TOKEN_WORD}};   /* a role the text would not give */
    int32_t ids[4] = {101, 2000, 103, 0}, types[4] = {0, 0, 1, 1}, mask[4] = {1, 1, 1, 0};
    atn_encoding enc = {.n = n, .tokens = toks, .ids = ids, .type_ids = types, .mask = mask};
    atn_capture cap = {.n_layers = L, .n_heads = H, .n = n, .enc = &enc, .attn = attn};
    atn_attn_file_meta meta = {.model_id = "bert-base-uncased", .family = "BERT", .causal = false};
    const char *path = tmp("round.safetensors");
    atn_error err = {0};
    CHECK_MSG(atn_attn_file_write(path, &cap, &meta, &err) == ATN_OK, "%s", err.message);
    atn_attn_file *f = NULL;
    CHECK_MSG(atn_attn_file_open(path, &f, &err) == ATN_OK, "%s", err.message);
    const atn_capture *back = NULL;
    CHECK(f && atn_attn_file_capture(f, &back, NULL, NULL, &err) == ATN_OK);
    if (back) {
        CHECK(back->n_layers == L && back->n_heads == H && back->n == n);
        CHECK(memcmp(back->attn, attn, sizeof(float) * (size_t)(L * H * n * n)) == 0);
        CHECK(back->attn != attn);
        for (int32_t i = 0; i < n; i++) {
            CHECK_STR(back->enc->tokens[i].text, toks[i].text);
            CHECK(back->enc->tokens[i].role == toks[i].role);
            CHECK(back->enc->tokens[i].special == toks[i].special);
            CHECK(back->enc->ids[i] == ids[i] && back->enc->type_ids[i] == types[i] && back->enc->mask[i] == mask[i]);
        }
        atn_attn_file_info info = atn_attn_file_get_info(f);
        CHECK_STR(info.model_id, "bert-base-uncased");
        CHECK_STR(info.family, "BERT");
        CHECK_STR(info.source, "attnscope");
        CHECK(!info.causal && info.has_mask);
        CHECK(atn_attn_file_warning(f) == NULL);
    }
    atn_attn_file_free(f);
    free(attn);
}

/* .npy with a tokens.json beside it, and an .npz with a numpy string array of tokens. */
static void test_numpy_containers(void) {
    /* np.save of float32 (1, 1, 2, 2): the header numpy writes, padded to 64 bytes */
    char head[128];
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2, 2), }";
    size_t dl = strlen(dict), total = 10 + dl + 1, pad = (64 - total % 64) % 64;
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (char)(dl + 1 + pad);
    head[9] = 0;
    memcpy(head + 10, dict, dl);
    memset(head + 10 + dl, ' ', pad);
    head[10 + dl + pad] = '\n';
    float v[4] = {1, 0, 0.5f, 0.5f};
    char sub[128];
    snprintf(sub, sizeof sub, "%s/npy", dir);
    mkdir(sub, 0700);
    char path[256], side[256];
    snprintf(path, sizeof path, "%s/a.npy", sub);
    snprintf(side, sizeof side, "%s/tokens.json", sub);
    write_bytes(path, head, 10 + dl + pad + 1, v, sizeof v);
    write_bytes(side, "[\"the\", \"cat\"]", 14, NULL, 0);
    atn_attn_file *f = NULL;
    atn_error err = {0};
    CHECK_MSG(atn_attn_file_open(path, &f, &err) == ATN_OK, "%s", err.message);
    const float *l0 = NULL;
    CHECK(f && atn_attn_file_layer(f, 0, &l0, &err) == ATN_OK && l0 && !memcmp(l0, v, sizeof v));
    CHECK(f && atn_attn_file_encoding(f) && !strcmp(atn_attn_file_encoding(f)->tokens[1].text, "cat"));
    CHECK(f && !strcmp(atn_attn_file_get_info(f).container, "npy"));
    atn_attn_file_free(f);
    write_bytes(side, "[\"the\"]", 7, NULL, 0);
    expect_error(path, ATN_E_FORMAT, "\"tokens\" has 1 tokens but the attention has 2");
    write_bytes(side, "{\"tokens\": [\"a\", \"b\"], \"causal\": 1}", 35, NULL, 0);
    expect_error(path, ATN_E_FORMAT, "\"causal\" is not true or false");
}

/* F32 data that starts 2 bytes past an aligned offset (copied, not read in place), after a
 * header padded with NULs (which the safetensors format allows). */
static void test_unaligned_and_nul_padding(void) {
    float a[2][2] = {{0.75f, 0.25f}, {0.5f, 0.5f}};
    const char *header = "{" META ", \"tokens\": \"[\\\"x\\\", \\\"y\\\"]\"}, "
                         "\"attn\": {\"dtype\": \"F32\", \"shape\": [1, 1, 2, 2], \"data_offsets\": [0, 16]}}";
    const char *path = st_file_padded("skew.safetensors", header, a, sizeof a, '\0', 2);
    atn_attn_file *f = NULL;
    atn_error err = {0};
    CHECK_MSG(atn_attn_file_open(path, &f, &err) == ATN_OK, "%s", err.message);
    const atn_capture *cap = NULL;
    CHECK(f && atn_attn_file_capture(f, &cap, NULL, NULL, &err) == ATN_OK);
    if (cap) {
        CHECK(((uintptr_t)cap->attn & 3) == 0);
        CHECK(memcmp(cap->attn, a, sizeof a) == 0);
        CHECK_STR(cap->enc->tokens[0].text, "x");
    }
    atn_attn_file_free(f);
}

static void test_bad_inputs(void) {
    float ok4[4] = {1, 0, 0.5f, 0.5f};
    const char *attn22 = "\"attn\": {\"dtype\": \"F32\", \"shape\": [1, 1, 2, 2], \"data_offsets\": [0, 16]}";
    char h[1024];

    snprintf(h, sizeof h, "{" META "}, \"attn\": {\"dtype\": \"F32\", \"shape\": [1, 2, 2], \"data_offsets\": [0, 16]}}");
    expect_error(st_file("rank.safetensors", h, ok4, 16), ATN_E_FORMAT, "'attn' has shape [1, 2, 2]; expected 4 dimensions");
    snprintf(h, sizeof h, "{" META "}, \"attn\": {\"dtype\": \"F32\", \"shape\": [1, 1, 1, 4], \"data_offsets\": [0, 16]}}");
    expect_error(st_file("square.safetensors", h, ok4, 16), ATN_E_FORMAT, "cross-attention goes in 'cross'");
    snprintf(h, sizeof h, "{" META "}, \"attn\": {\"dtype\": \"I32\", \"shape\": [1, 1, 2, 2], \"data_offsets\": [0, 16]}}");
    expect_error(st_file("dtype.safetensors", h, ok4, 16), ATN_E_FORMAT, "'attn' is I32");
    snprintf(h, sizeof h, "{" META ", \"tokens\": \"[\\\"a\\\", \\\"b\\\", \\\"c\\\"]\"}, %s}", attn22);
    expect_error(st_file("ntok.safetensors", h, ok4, 16), ATN_E_FORMAT, "\"tokens\" has 3 tokens but the attention has 2");
    snprintf(h, sizeof h, "{" META ", \"tokens\": \"[the, cat]\"}, %s}", attn22);
    expect_error(st_file("json.safetensors", h, ok4, 16), ATN_E_FORMAT, "__metadata__ \"tokens\" is not JSON");
    snprintf(h, sizeof h, "{\"__metadata__\": {\"format\": \"pt\"}, %s}", attn22);
    expect_error(st_file("fmt.safetensors", h, ok4, 16), ATN_E_FORMAT, "metadata \"format\" is \"pt\"");
    snprintf(h, sizeof h, "{%s}", attn22);
    expect_error(st_file("nofmt.safetensors", h, ok4, 16), ATN_E_FORMAT, "has no \"format\"");
    snprintf(h, sizeof h, "{" META "}, \"w\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}}");
    expect_error(st_file("noattn.safetensors", h, ok4, 16), ATN_E_FORMAT, "no attention: expected a tensor 'attn'");
    /* a header that lies: offsets past the data */
    snprintf(h, sizeof h, "{" META "}, \"attn\": {\"dtype\": \"F32\", \"shape\": [1, 1, 2, 2], \"data_offsets\": [8, 24]}}");
    expect_error(st_file("lie.safetensors", h, ok4, 16), ATN_E_FORMAT, "past the end of the data area");
    float nan4[4] = {1, 0, NAN, 0.5f}, neg4[4] = {1, 0, 1.5f, -0.5f};
    snprintf(h, sizeof h, "{" META "}, %s}", attn22);
    expect_error(st_file("nan.safetensors", h, nan4, 16), ATN_E_FORMAT, "'attn' holds NaN at layer 0, head 0, query 1, key 0");
    expect_error(st_file("neg.safetensors", h, neg4, 16), ATN_E_FORMAT,
                 "the negative value -0.5 at layer 0, head 0, query 1, key 1 (were pre-softmax scores");
    snprintf(h, sizeof h, "{" META "}, \"attn.L0\": {\"dtype\": \"F32\", \"shape\": [1, 2, 2], \"data_offsets\": [0, 16]}, "
             "\"attn.L2\": {\"dtype\": \"F32\", \"shape\": [1, 2, 2], \"data_offsets\": [16, 32]}}");
    float two[8] = {1, 0, 0, 1, 1, 0, 0, 1};
    expect_error(st_file("gap.safetensors", h, two, 32), ATN_E_FORMAT, "'attn.L1' is missing");
    snprintf(h, sizeof h, "{" META ", \"n_kv_heads\": \"3\"}, %s}", attn22);
    expect_error(st_file("kv.safetensors", h, ok4, 16), ATN_E_FORMAT, "\"n_kv_heads\" must be a whole number dividing the 1 heads");
    /* a K/V map in range but not the one n_kv_heads implies (query head h reads h / (H / n_kv_heads)) */
    snprintf(h, sizeof h, "{" META ", \"n_kv_heads\": \"2\", \"kv_heads\": \"[1, 0]\"}, \"attn\": {\"dtype\": \"F32\", "
             "\"shape\": [1, 2, 2, 2], \"data_offsets\": [0, 32]}}");
    expect_error(st_file("kvmap.safetensors", h, two, 32), ATN_E_FORMAT,
                 "\"kv_heads\" must list, for each of the 2 query heads h, its K/V head h / 1 (2 K/V heads");
    snprintf(h, sizeof h, "{" META "}, %s, \"q\": {\"dtype\": \"F32\", \"shape\": [1, 1, 2, 1], \"data_offsets\": [16, 24]}}",
             attn22);
    float qd[6] = {1, 0, 0.5f, 0.5f, 1, 2};
    expect_error(st_file("qkv.safetensors", h, qd, 24), ATN_E_FORMAT, "q, k and v come together");

    /* rows that do not sum to 1: opened, with a warning naming the worst row and the scores */
    float scores[8] = {1, 0, 0.5f, 0.5f, 2.0f, 3.0f, 0.5f, 0.5f};
    snprintf(h, sizeof h, "{" META ", \"tokens\": \"[\\\"x\\\", \\\"y\\\"]\"}, \"attn\": {\"dtype\": \"F32\", \"shape\": [2, 1, 2, 2], "
             "\"data_offsets\": [0, 32]}}");
    const char *path = st_file("sum.safetensors", h, scores, 32);
    atn_attn_file *f = NULL;
    atn_error err = {0};
    const atn_capture *cap;
    CHECK(atn_attn_file_open(path, &f, &err) == ATN_OK);
    CHECK(f && atn_attn_file_capture(f, &cap, NULL, NULL, &err) == ATN_OK);
    const char *w = atn_attn_file_warning(f);
    CHECK_MSG(w && strstr(w, "1 rows of 'attn' do not sum to 1; the worst, layer 1 head 0 query 0 (\"x\"), sums to 5") &&
              strstr(w, "pre-softmax scores"), "warning: %s", w ? w : "(none)");
    atn_attn_file_free(f);

    /* pickles are never opened; the message names the numpy way */
    const char *pt = tmp("attn.pt");
    write_bytes(pt, "PK", 2, NULL, 0);
    expect_error(pt, ATN_E_UNSUPPORTED, "np.savez(");
    expect_error(tmp("absent.safetensors"), ATN_E_IO, "absent.safetensors");
}

/* One attn.L{l} per layer.  The same head count: the capture of the stacked file, bit for
 * bit.  4 + 2 ... here 2 heads in layer 0 and 1 in layer 1: n_heads 2, layer_heads {2, 1},
 * the absent head zeros and never counted: its statistics NaN, similarity compares the 3
 * heads there are, rollout's layer 1 is its one head's (worked by hand below). */
static void test_layer_heads(void) {
    float l0[2][2][2] = {{{1, 0}, {0.5f, 0.5f}}, {{0.25f, 0.75f}, {0, 1}}}, l1[1][2][2] = {{{0.5f, 0.5f}, {1, 0}}};
    float same[2][2][2][2];
    memcpy(same[0], l0, sizeof l0);
    memcpy(same[1], l0, sizeof l0);
    char h[768];
    snprintf(h, sizeof h, "{" META "}, \"attn\": {\"dtype\": \"F32\", \"shape\": [2, 2, 2, 2], \"data_offsets\": [0, 64]}}");
    const char *stacked = st_file("stacked.safetensors", h, same, sizeof same);
    snprintf(h, sizeof h, "{" META "}, \"attn.L0\": {\"dtype\": \"F32\", \"shape\": [2, 2, 2], \"data_offsets\": [0, 32]}, "
             "\"attn.L1\": {\"dtype\": \"F32\", \"shape\": [2, 2, 2], \"data_offsets\": [32, 64]}}");
    const char *per = st_file("per.safetensors", h, same, sizeof same);
    atn_attn_file *fa = NULL, *fb = NULL;
    atn_error err = {0};
    const atn_capture *ca = NULL, *cb = NULL;
    CHECK(atn_attn_file_open(stacked, &fa, &err) == ATN_OK && atn_attn_file_capture(fa, &ca, NULL, NULL, &err) == ATN_OK);
    CHECK_MSG(atn_attn_file_open(per, &fb, &err) == ATN_OK && atn_attn_file_capture(fb, &cb, NULL, NULL, &err) == ATN_OK,
              "%s", err.message);
    if (ca && cb) {
        CHECK(cb->n_layers == 2 && cb->n_heads == 2 && cb->n == 2 && !cb->layer_heads);
        CHECK(memcmp(ca->attn, cb->attn, sizeof same) == 0);
    }
    atn_attn_file_free(fa);
    atn_attn_file_free(fb);

    unsigned char data[sizeof l0 + sizeof l1];
    memcpy(data, l0, sizeof l0);
    memcpy(data + sizeof l0, l1, sizeof l1);
    snprintf(h, sizeof h, "{" META "}, \"attn.L0\": {\"dtype\": \"F32\", \"shape\": [2, 2, 2], \"data_offsets\": [0, 32]}, "
             "\"attn.L1\": {\"dtype\": \"F32\", \"shape\": [1, 2, 2], \"data_offsets\": [32, 48]}}");
    const char *path = st_file("differ.safetensors", h, data, sizeof data);
    for (int lazy = 0; lazy < 2; lazy++) {
        atn_attn_file *f = NULL;
        const atn_capture *cap = NULL;
        CHECK_MSG(atn_attn_file_open(path, &f, &err) == ATN_OK, "%s", err.message);
        CHECK(f && (lazy ? atn_attn_file_capture_lazy(f, &cap, &err) : atn_attn_file_capture(f, &cap, NULL, NULL, &err)) ==
                       ATN_OK);
        if (!cap) {
            atn_attn_file_free(f);
            continue;
        }
        CHECK(cap->n_layers == 2 && cap->n_heads == 2 && cap->layer_heads && cap->layer_heads[0] == 2 &&
              cap->layer_heads[1] == 1);
        CHECK(atn_capture_head_present(cap, 1, 0) && !atn_capture_head_present(cap, 1, 1) &&
              atn_capture_head_present(cap, 0, 1));
        float head[4];
        CHECK(atn_capture_head(cap, 1, 0, head, &err) == ATN_OK && memcmp(head, l1, sizeof head) == 0);
        CHECK(atn_capture_head(cap, 1, 1, head, &err) == ATN_OK && head[0] == 0 && head[1] == 0 && head[2] == 0 &&
              head[3] == 0);
        atn_stats *st = NULL;
        CHECK(atn_stats_compute(cap, &st, &err) == ATN_OK);
        if (st) {
            CHECK(atn_head_stats_absent(&st->heads[3]) && isnan(st->heads[3].self) && isnan(st->heads[3].prev));
            CHECK(!atn_head_stats_absent(&st->heads[2]));
            CHECK_NEAR(st->heads[2].self, (0.5 + 0) / 2, 1e-12);   /* a00 = 0.5, a11 = 0 */
            int32_t cl, ch;
            if (atn_stats_clearest_head(st, &cl, &ch))
                CHECK(atn_capture_head_present(cap, cl, ch));
        }
        atn_stats_free(st);
        atn_similarity *sim = NULL;
        CHECK(atn_similarity_compute(cap, ATN_METRIC_JS, ATN_SCOPE_MODEL, -1, &sim, &err) == ATN_OK);
        if (sim) {
            CHECK(sim->count == 3 && sim->layer_of[2] == 1 && sim->head_of[2] == 0 && sim->head_of[1] == 1);
            CHECK(sim->values[0 * 3 + 0] == 0);
        }
        atn_similarity_free(sim);
        atn_similarity *lay = atn_similarity_new_capture(cap, ATN_METRIC_COSINE, ATN_SCOPE_LAYER, 1, &err);
        CHECK(lay && lay->count == 1);
        atn_similarity_free(lay);
        atn_similarity *plain = atn_similarity_new(2, 2, ATN_METRIC_JS, ATN_SCOPE_MODEL, -1, &err);
        CHECK(plain && atn_similarity_add(plain, cap, &err) == ATN_E_SHAPE);
        atn_similarity_free(plain);
        /* rollout by hand: A'0 = 0.5 mean(h0, h1) + 0.5 I = [[.8125 .1875] [.125 .875]],
           A'1 = 0.5 l1 + 0.5 I = [[.75 .25] [.5 .5]] (one head, not a mean with a zero one),
           R = A'1 A'0 */
        float r[4];
        const float want[4] = {0.640625f, 0.359375f, 0.46875f, 0.53125f};
        CHECK(atn_rollout_compute(cap, -1, r, &err) == ATN_OK);
        CHECK_ARRAY_NEAR("rollout", r, want, 4, 1e-6);
        atn_attn_file_free(f);
    }
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/atn-attnfile-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    test_f32_and_tokens();
    test_half_types();
    test_round_trip();
    test_numpy_containers();
    test_unaligned_and_nul_padding();
    test_bad_inputs();
    test_layer_heads();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_summary("engine-attention-file");
}

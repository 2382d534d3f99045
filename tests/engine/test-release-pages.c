/* Once the CPU kernels have packed a layer, the pages of its F32 matrices that map the model's
 * file are given back (engine/forward/encoder.c pack_worker, atn_model_release_file_pages), so that
 * the process does not hold the layer weights twice (issue 18: bert-base at 512 tokens peaked
 * at 1.58x weights + capture with both copies resident, 1.07x without).
 *
 * On a BERT folder this test writes (F32 safetensors, hidden 64 and feed-forward 256, so
 * that each matrix spans whole pages):
 *  - releasing a mapped matrix gives back its whole pages: the mapping's resident size
 *    (/proc/self/smaps) falls by that much, and the values read afterwards are the file's;
 *  - memory that is not a file mapping is never given back: a random model's matrices, and
 *    the anonymous blocks of copied tensors a pytorch_model.bin with a transposed weight
 *    has (tests/hf/models/bin-zip-f32), whose data would read as zeros afterwards;
 *  - where the packed path runs (AVX-512): the first forward leaves the layer matrices
 *    given back, a second forward gives the same attention bit for bit, and a run on the
 *    cblas path afterwards (a head switched off) equals the same run on a model opened
 *    fresh, which never packed or gave anything back. */
#define _GNU_SOURCE
#include "check.h"
#include "forward/encoder.h"
#include "core/model-private.h"
#include "common/test-models.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { D = 64, FF = 256, LAYERS = 2, HEADS = 4, VOCAB = 48, POS = 32 };

typedef struct tensor {
    char name[96];
    int rows, cols;   /* cols 0: a vector of rows */
} tensor;

static int add(tensor *t, int n, const char *name, int rows, int cols) {
    snprintf(t[n].name, sizeof t[n].name, "%s", name);
    t[n].rows = rows, t[n].cols = cols;
    return n + 1;
}

/* A BERT-layout F32 safetensors folder with random weights (fixed seed) at dir. */
static void write_model(const char *dir, const char *vocab_from) {
    tensor t[64];
    int n = 0;
    n = add(t, n, "embeddings.word_embeddings.weight", VOCAB, D);
    n = add(t, n, "embeddings.position_embeddings.weight", POS, D);
    n = add(t, n, "embeddings.token_type_embeddings.weight", 2, D);
    n = add(t, n, "embeddings.LayerNorm.weight", D, 0);
    n = add(t, n, "embeddings.LayerNorm.bias", D, 0);
    for (int l = 0; l < LAYERS; l++) {
        static const char *sq[] = {"attention.self.query", "attention.self.key", "attention.self.value",
                                   "attention.output.dense"};
        char nm[96];
        for (int k = 0; k < 4; k++) {
            snprintf(nm, sizeof nm, "encoder.layer.%d.%s.weight", l, sq[k]);
            n = add(t, n, nm, D, D);
            snprintf(nm, sizeof nm, "encoder.layer.%d.%s.bias", l, sq[k]);
            n = add(t, n, nm, D, 0);
        }
        snprintf(nm, sizeof nm, "encoder.layer.%d.attention.output.LayerNorm.weight", l);
        n = add(t, n, nm, D, 0);
        snprintf(nm, sizeof nm, "encoder.layer.%d.attention.output.LayerNorm.bias", l);
        n = add(t, n, nm, D, 0);
        snprintf(nm, sizeof nm, "encoder.layer.%d.intermediate.dense.weight", l);
        n = add(t, n, nm, FF, D);
        snprintf(nm, sizeof nm, "encoder.layer.%d.intermediate.dense.bias", l);
        n = add(t, n, nm, FF, 0);
        snprintf(nm, sizeof nm, "encoder.layer.%d.output.dense.weight", l);
        n = add(t, n, nm, D, FF);
        snprintf(nm, sizeof nm, "encoder.layer.%d.output.dense.bias", l);
        n = add(t, n, nm, D, 0);
        snprintf(nm, sizeof nm, "encoder.layer.%d.output.LayerNorm.weight", l);
        n = add(t, n, nm, D, 0);
        snprintf(nm, sizeof nm, "encoder.layer.%d.output.LayerNorm.bias", l);
        n = add(t, n, nm, D, 0);
    }
    char *header = malloc(1 << 16);
    size_t hl = 0, off = 0;
    hl += (size_t)sprintf(header + hl, "{");
    for (int i = 0; i < n; i++) {
        size_t bytes = (size_t)t[i].rows * (t[i].cols ? t[i].cols : 1) * 4;
        if (t[i].cols)
            hl += (size_t)sprintf(header + hl, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%d,%d],\"data_offsets\":[%zu,%zu]}",
                                  i ? "," : "", t[i].name, t[i].rows, t[i].cols, off, off + bytes);
        else
            hl += (size_t)sprintf(header + hl, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%d],\"data_offsets\":[%zu,%zu]}",
                                  i ? "," : "", t[i].name, t[i].rows, off, off + bytes);
        off += bytes;
    }
    hl += (size_t)sprintf(header + hl, "}");
    while (hl % 8)
        header[hl++] = ' ';
    mkdir(dir, 0755);
    char path[512];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    uint64_t len = hl;
    fwrite(&len, 8, 1, f);
    fwrite(header, 1, hl, f);
    uint64_t s = 20261202;
    for (int i = 0; i < n; i++) {
        size_t count = (size_t)t[i].rows * (t[i].cols ? t[i].cols : 1);
        int is_ln_weight = strstr(t[i].name, "LayerNorm.weight") != NULL;
        for (size_t k = 0; k < count; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            float v = is_ln_weight ? 1.0f : ((float)(s >> 40) / (float)(1 << 24) - 0.5f) * 0.2f;
            fwrite(&v, 4, 1, f);
        }
    }
    fclose(f);
    free(header);
    snprintf(path, sizeof path, "%s/config.json", dir);
    f = fopen(path, "w");
    fprintf(f, "{\"model_type\": \"bert\", \"hidden_size\": %d, \"intermediate_size\": %d, \"num_hidden_layers\": %d, "
               "\"num_attention_heads\": %d, \"vocab_size\": %d, \"max_position_embeddings\": %d, "
               "\"type_vocab_size\": 2, \"hidden_act\": \"gelu\", \"layer_norm_eps\": 1e-12}\n",
            D, FF, LAYERS, HEADS, VOCAB, POS);
    fclose(f);
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "cp '%s/vocab.txt' '%s/vocab.txt'", vocab_from, dir);
    CHECK(system(cmd) == 0);
}

/* The resident kB of the mapping that holds p (/proc/self/smaps "Rss:"), -1 if not found. */
static long rss_kb_of(const void *p) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int inside = 0;
    long kb = -1;
    uintptr_t a = (uintptr_t)p;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = a >= lo && a < hi;
            continue;
        }
        if (inside && sscanf(line, "Rss: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

static double sum_of(const float *p, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i];
    return s;
}

/* A forward of "the cat sat" (with the head gate when off is not NULL); the run, or NULL. */
static atn_run *forward(atn_model *m, const uint8_t *off) {
    atn_error err = {0};
    atn_encoding *enc = NULL;
    atn_run *run = NULL;
    if (atn_model_encode(m, "the cat sat on the mat", NULL, &enc, &err) != ATN_OK) {
        CHECK_MSG(0, "%s", err.message);
        return NULL;
    }
    atn_run_options o;
    atn_run_options_init(&o);
    atn_interventions iv;
    atn_interventions_init(&iv);
    if (off) {
        iv.heads_off = off;
        iv.head_mode = ATN_HEAD_ZERO;
        o.interventions = &iv;
    }
    run = atn_run_new(m);
    atn_status st = atn_run_forward(run, enc, &o, &err);
    CHECK_MSG(st == ATN_OK, "%s", err.message);
    atn_encoding_free(enc);
    if (st != ATN_OK) {
        atn_run_free(run);
        return NULL;
    }
    return run;
}

static size_t attn_floats(const atn_capture *c) { return (size_t)c->n_layers * c->n_heads * c->n * c->n; }

int main(void) {
    char vocab_dir[4096], bin[4096], dir[256];
    hf_model_path(vocab_dir, sizeof vocab_dir, "f32");
    hf_model_path(bin, sizeof bin, "bin-zip-f32");
    snprintf(dir, sizeof dir, "/tmp/atn-release-%d", (int)getpid());
    write_model(dir, vocab_dir);
    long page = sysconf(_SC_PAGESIZE);
    atn_error err = {0};

    /* 1. a mapped matrix: its whole pages given back, the values still the file's */
    atn_model *m = atn_model_open(dir, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m)
        return check_summary("engine-release-pages");
    const float *w1 = m->w.layers[0].w1;
    size_t bytes = (size_t)FF * D * sizeof(float);
    float *copy = malloc(bytes);
    memcpy(copy, w1, bytes);   /* reads every page in */
    long before = rss_kb_of(w1);
    size_t given = atn_model_release_file_pages(m, w1, bytes);
    long after = rss_kb_of(w1);
    CHECK_MSG(given >= bytes - 2 * (size_t)page && given <= bytes, "gave back %zu of %zu bytes", given, bytes);
    CHECK_MSG(before > 0 && after >= 0 && before - after >= (long)(given / 1024),
              "the mapping's Rss went from %ld to %ld kB for %zu bytes given back", before, after, given);
    CHECK(memcmp(copy, w1, bytes) == 0);   /* read back from the file */
    CHECK(rss_kb_of(w1) >= before - 4);   /* ... and resident again */
    /* a range that is not inside any of the model's file mappings: nothing */
    CHECK(atn_model_release_file_pages(m, copy, bytes) == 0);
    CHECK(atn_model_release_file_pages(m, NULL, bytes) == 0);
    CHECK(atn_model_release_file_pages(m, w1, 0) == 0);

    /* 2. a random model's weights are memory, not a file: never given back */
    atn_model *r = atn_model_new_random_shape("bert-tiny", 3, &err);
    CHECK_MSG(r != NULL, "%s", err.message);
    if (r) {
        const atn_layer_weights *rw = &r->w.layers[0];
        size_t rb = (size_t)r->cfg.d_ffn * r->cfg.d_model * sizeof(float);
        double s0 = sum_of(rw->w1, rb / 4);
        CHECK(atn_model_release_file_pages(r, rw->w1, rb) == 0);
        CHECK(sum_of(rw->w1, rb / 4) == s0);
        atn_model_free(r);
    }

    /* 3. a pytorch_model.bin with a transposed weight: its copied tensors live in anonymous
          blocks, which are not mappings of the file (MADV_DONTNEED would zero them) */
    atn_model *b = atn_model_open(bin, NULL, NULL, &err);
    CHECK_MSG(b != NULL, "%s", err.message);
    if (b) {
        int anon = 0, files = 0;
        for (int32_t i = 0; i < b->n_blocks; i++) {
            const atn_model_block *k = &b->blocks[i];
            if (!k->mapped)
                continue;
            if (k->path) {
                files++;
                continue;
            }
            anon++;
            double s0 = sum_of(k->ptr, k->len / 4);
            CHECK_MSG(atn_model_release_file_pages(b, k->ptr, k->len) == 0,
                      "the block of copied tensors (%zu bytes) was given back", k->len);
            CHECK(sum_of(k->ptr, k->len / 4) == s0);
        }
        /* one anonymous block per strided view a layer bound (torch-bin.h: copied on request) */
        CHECK_MSG(anon >= 1 && files == 1, "bin-zip-f32: %d anonymous and %d file mappings (want some and 1)", anon,
                  files);
        atn_model_free(b);
    }

    /* 4. the packed path: the first forward gives the matrices back, and nothing changes */
    if (!atn_cpu_fast_applies(m)) {
        printf("# the packed CPU path does not run on this CPU: its part skipped\n");
    } else {
        atn_run *r1 = forward(m, NULL);
        /* the mapping now holds the embeddings, vectors and at most two partial pages per
           matrix of the layers, not the layers' matrices */
        size_t mats = (size_t)LAYERS * (4 * D * D + 2 * FF * D) * sizeof(float);
        struct stat st;
        char path[512];
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        CHECK(stat(path, &st) == 0);
        long rss = rss_kb_of(w1);
        CHECK_MSG(rss >= 0 && rss * 1024 <= (long)st.st_size - (long)mats + 12 * LAYERS * page,
                  "after the first forward the mapping holds %ld kB of the %lld kB file (%zu kB of it layer "
                  "matrices)", rss, (long long)st.st_size / 1024, mats / 1024);
        atn_run *r2 = forward(m, NULL);
        if (r1 && r2) {
            const atn_capture *c1 = atn_run_capture(r1), *c2 = atn_run_capture(r2);
            CHECK(memcmp(c1->attn, c2->attn, attn_floats(c1) * sizeof(float)) == 0);
        }
        /* the cblas path (a head switched off) reads the matrices again: the same as on a
           model that never packed */
        uint8_t off[LAYERS * HEADS] = {0};
        off[HEADS + 1] = 1;
        atn_run *g1 = forward(m, off);
        atn_model *fresh = atn_model_open(dir, NULL, NULL, &err);
        CHECK_MSG(fresh != NULL, "%s", err.message);
        atn_run *g2 = fresh ? forward(fresh, off) : NULL;
        if (g1 && g2) {
            const atn_capture *c1 = atn_run_capture(g1), *c2 = atn_run_capture(g2);
            CHECK(memcmp(c1->attn, c2->attn, attn_floats(c1) * sizeof(float)) == 0);
            CHECK(memcmp(c1->hidden, c2->hidden, (size_t)(c1->n_layers + 1) * c1->n * c1->d_model * sizeof(float)) == 0);
        }
        atn_run_free(g2);
        atn_model_free(fresh);
        atn_run_free(g1);
        atn_run_free(r2);
        atn_run_free(r1);
    }
    free(copy);
    atn_model_free(m);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return check_summary("engine-release-pages");
}

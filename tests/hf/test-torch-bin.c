/* pytorch_model.bin (engine/formats/torch-bin.c, zip.c, torch-pickle.c) against independent
 * writers: every tensor of the files torch.save wrote (tests/hf/gen_torch_bin.py: both zip
 * layouts, the legacy stream, F32/F16/BF16, shards) equals, byte for byte, the same tensor
 * in its safetensors twin; the hand-made files of tests/bad (pt-good-zip, pt-good-legacy,
 * pt-good-torch2: torch 2.x's extra entries and 7-argument _rebuild_tensor_v2) equal
 * tests/bad/base/model.safetensors.  Also: tied names share one storage, views at
 * offsets point into their storage, transposed weights are kept as views and copied
 * contiguous on request, broadcast (stride-0) ones cost nothing unread and are bounded when
 * read (the catalogue's pt-broadcast-* files), the loaded
 * model's weights equal the twin's bit for bit, safetensors wins when both are there, a
 * ZIP64 archive with 64-bit sizes in its extra fields reads, and in-memory refusals. */
#include "check.h"
#include "core/model-private.h"
#include "formats/torch-bin.h"
#include "formats/zip.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[2048], tmp_root[4096];

enum { MAX_FILES = 8 };

typedef struct bin_set {
    atn_st_file *f[MAX_FILES];
    int n;
} bin_set;

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.bin in folder. */
static void open_bins(const char *folder, bin_set *s) {
    s->n = 0;
    DIR *d = opendir(folder);
    CHECK_MSG(d != NULL, "%s", folder);
    if (!d)
        return;
    char *names[MAX_FILES];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < MAX_FILES;) {
        size_t l = strlen(e->d_name);
        if (l > 4 && strcmp(e->d_name + l - 4, ".bin") == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++) {
        char path[4096 + 256];
        snprintf(path, sizeof path, "%s/%s", folder, names[i]);
        atn_error err = {0};
        atn_st_file *f = NULL;
        CHECK_MSG(atn_torch_open(path, &f, &err) == ATN_OK, "%s", err.message);
        if (f)
            s->f[s->n++] = f;
        free(names[i]);
    }
}

/* The tensor named, its bytes copied if it is a view (atn_st_materialise, no bound). */
static const atn_st_tensor *find_in(const bin_set *s, const char *name) {
    for (int i = 0; i < s->n; i++) {
        const atn_st_tensor *t = atn_st_find(s->f[i], name);
        if (t) {
            atn_error err = {0};
            CHECK_MSG(atn_st_materialise(s->f[i], t, 0, &err) == ATN_OK && (t->data || !t->nbytes),
                      "%s: %s", name, err.message);
            return t;
        }
    }
    return NULL;
}

static void close_bins(bin_set *s) {
    for (int i = 0; i < s->n; i++)
        atn_st_close(s->f[i]);
    s->n = 0;
}

/* Every tensor of the safetensors file st_path is in the .bin files with the same dtype,
 * shape and bytes; the .bin has `extra` more (tied names). */
static void same_tensors(const char *what, const bin_set *bins, const char *st_path, int extra) {
    atn_st_file *st = NULL;
    atn_error err = {0};
    CHECK_MSG(atn_st_open(st_path, &st, &err) == ATN_OK, "%s", err.message);
    if (!st)
        return;
    int total = 0;
    for (int i = 0; i < bins->n; i++)
        total += atn_st_count(bins->f[i]);
    CHECK_MSG(total == atn_st_count(st) + extra, "%s: %d tensors in the .bin, %d in %s (+%d)",
              what, total, atn_st_count(st), st_path, extra);
    for (int32_t i = 0; i < atn_st_count(st); i++) {
        const atn_st_tensor *a = atn_st_at(st, i), *b = find_in(bins, a->name);
        CHECK_MSG(b != NULL, "%s: no tensor '%s'", what, a->name);
        if (!b)
            continue;
        bool shape = a->ndim == b->ndim;
        for (int d = 0; shape && d < a->ndim; d++)
            shape = a->shape[d] == b->shape[d];
        CHECK_MSG(a->dtype == b->dtype && shape && a->count == b->count && a->nbytes == b->nbytes,
                  "%s: '%s' is %s of %llu, expected %s of %llu", what, a->name,
                  atn_st_dtype_name(b->dtype), (unsigned long long)b->count,
                  atn_st_dtype_name(a->dtype), (unsigned long long)a->count);
        if (a->nbytes == b->nbytes)
            CHECK_MSG(memcmp(a->data, b->data, (size_t)a->nbytes) == 0, "%s: '%s' differs",
                      what, a->name);
    }
    atn_st_close(st);
}

static void torch_written(void) {
    const struct {
        const char *name, *prefix;
        bool tied, fused;
    } models[] = {
        {"bin-zip-f32", "", false, true},
        {"bin-archive-f16", "bert.", true, false},
        {"bin-legacy-bf16", "bert.", true, false},
        {"bin-legacy-f32", "", false, true},
        {"bin-sharded", "", false, false},
    };
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        char folder[4096], st[4096 + 64], name[256];
        snprintf(folder, sizeof folder, "%s/models/%s", root, models[m].name);
        snprintf(st, sizeof st, "%s/models/%s-st/model.safetensors", root, models[m].name);
        bin_set bins;
        open_bins(folder, &bins);
        CHECK_MSG(bins.n == (strcmp(models[m].name, "bin-sharded") == 0 ? 2 : 1), "%s: %d files",
                  models[m].name, bins.n);
        same_tensors(models[m].name, &bins, st, models[m].tied);
        const char *p = models[m].prefix;
        snprintf(name, sizeof name, "%sembeddings.word_embeddings.weight", p);
        const atn_st_tensor *we = find_in(&bins, name);
        CHECK(we != NULL);
        if (models[m].tied && we) {
            const atn_st_tensor *dec = find_in(&bins, "cls.predictions.decoder.weight");
            CHECK_MSG(dec && dec->data == we->data && dec->nbytes == we->nbytes,
                      "%s: the tied decoder should share the word embeddings' storage",
                      models[m].name);
        }
        if (models[m].fused) {
            /* Q, K, V of layer 0 are consecutive views of one storage, used in place */
            const atn_st_tensor *q = find_in(&bins, "encoder.layer.0.attention.self.query.weight");
            const atn_st_tensor *k = find_in(&bins, "encoder.layer.0.attention.self.key.weight");
            const atn_st_tensor *v = find_in(&bins, "encoder.layer.0.attention.self.value.weight");
            CHECK_MSG(q && k && v && (const char *)k->data == (const char *)q->data + q->nbytes &&
                      (const char *)v->data == (const char *)k->data + k->nbytes,
                      "%s: Q/K/V views should point into their shared storage", models[m].name);
        }
        close_bins(&bins);
    }
}

static void hand_made(void) {
    const char *cases[] = {"pt-good-zip", "pt-good-legacy", "pt-good-torch2"};
    char st[4096];
    snprintf(st, sizeof st, "%s/../bad/base/model.safetensors", root);
    for (int i = 0; i < 3; i++) {
        char folder[4096];
        snprintf(folder, sizeof folder, "%s/../bad/cases/%s", root, cases[i]);
        bin_set bins;
        open_bins(folder, &bins);
        CHECK(bins.n == 1);
        same_tensors(cases[i], &bins, st, 0);
        close_bins(&bins);
    }
}

/* Where p lives in the model: 1 a mapped block, 2 an allocated one, 0 nowhere. */
static int owner_of(const atn_model *m, const void *p) {
    for (int32_t i = 0; i < m->n_blocks; i++) {
        const char *b = m->blocks[i].ptr;
        if ((const char *)p >= b && (const char *)p < b + m->blocks[i].len)
            return m->blocks[i].mapped ? 1 : 2;
    }
    return 0;
}

static bool same_floats(const float *a, const float *b, size_t n) {
    return a && b && memcmp(a, b, n * sizeof *a) == 0;
}

/* The loaded weights equal the twin's bit for bit. */
static void loaded_models(void) {
    const char *names[] = {"bin-zip-f32", "bin-archive-f16", "bin-legacy-bf16", "bin-legacy-f32",
                           "bin-sharded"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char a[4096], b[4096 + 8];
        snprintf(a, sizeof a, "%s/models/%s", root, names[i]);
        snprintf(b, sizeof b, "%s-st", a);
        atn_error err = {0};
        atn_model *m = atn_model_open_hf(a, NULL, NULL, &err);
        CHECK_MSG(m != NULL, "%s: %s", names[i], err.message);
        atn_model *t = atn_model_open_hf(b, NULL, NULL, &err);
        CHECK_MSG(t != NULL, "%s-st: %s", names[i], err.message);
        if (!m || !t) {
            atn_model_free(m);
            atn_model_free(t);
            continue;
        }
        const atn_config *c = &m->cfg;
        size_t d = (size_t)c->d_model, f = (size_t)c->d_ffn, V = (size_t)c->vocab_size;
        CHECK(same_floats(m->w.word_emb, t->w.word_emb, V * d));
        CHECK(same_floats(m->w.pos_emb, t->w.pos_emb, (size_t)c->max_positions * d));
        CHECK(same_floats(m->w.emb_ln_g, t->w.emb_ln_g, d));
        for (int32_t l = 0; l < c->n_layers; l++) {
            const atn_layer_weights *x = &m->w.layers[l], *y = &t->w.layers[l];
            CHECK_MSG(same_floats(x->wq, y->wq, d * d) && same_floats(x->wk, y->wk, d * d) &&
                      same_floats(x->wv, y->wv, d * d) && same_floats(x->wo, y->wo, d * d) &&
                      same_floats(x->w1, y->w1, f * d) && same_floats(x->w2, y->w2, d * f) &&
                      same_floats(x->b1, y->b1, f) && same_floats(x->ln2_b, y->ln2_b, d),
                      "%s layer %d: weights differ from the safetensors twin", names[i], l);
        }
        CHECK(atn_model_has_mlm_head(m) == atn_model_has_mlm_head(t));
        if (atn_model_has_mlm_head(m)) {
            CHECK(same_floats(m->w.mlm_dense_w, t->w.mlm_dense_w, d * d));
            CHECK(same_floats(m->w.mlm_decoder_b, t->w.mlm_decoder_b, V));
            const float *dm = m->w.mlm_decoder_w ? m->w.mlm_decoder_w : m->w.word_emb;
            CHECK(same_floats(dm, m->w.word_emb, V * d));
        }
        if (strcmp(names[i], "bin-zip-f32") == 0) {
            /* F32 in place: the file's mapping; the fused views in place; the transposed
               weight copied contiguous into the reader's block, kept as a mapping */
            const atn_layer_weights *l0 = &m->w.layers[0];
            CHECK(owner_of(m, m->w.word_emb) == 1 && owner_of(m, l0->wq) == 1);
            CHECK(l0->wk == l0->wq + d * d && l0->wv == l0->wk + d * d);
            CHECK(owner_of(m, l0->w1) == 1 && owner_of(m, m->w.layers[1].w2) == 1);
        }
        if (strcmp(names[i], "bin-archive-f16") == 0)
            CHECK(owner_of(m, m->w.word_emb) == 2);   /* converted */
        atn_model_free(m);
        atn_model_free(t);
    }
}

static void copy_file(const char *from, const char *to) {
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    char buf[65536];
    size_t n;
    while (a && b && (n = fread(buf, 1, sizeof buf, a)) > 0)
        fwrite(buf, 1, n, b);
    if (a)
        fclose(a);
    if (b)
        fclose(b);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void preference(void) {
    char d[4096 + 64], a[8192], b[8192];
    const char *files[] = {"config.json", "vocab.txt", "model.safetensors", "pytorch_model.bin"};
    atn_error err = {0};
    /* both: the safetensors file is read, a broken .bin beside it is never opened */
    snprintf(d, sizeof d, "%s/both", tmp_root);
    mkdir(d, 0755);
    for (int i = 0; i < 3; i++) {
        snprintf(a, sizeof a, "%s/models/bin-zip-f32-st/%s", root, files[i]);
        snprintf(b, sizeof b, "%s/%s", d, files[i]);
        copy_file(a, b);
    }
    snprintf(b, sizeof b, "%s/pytorch_model.bin", d);
    write_text(b, "not a checkpoint");
    atn_model *m = atn_model_open_hf(d, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    atn_model_free(m);
    /* and the other way round: a broken model.safetensors is what is reported */
    snprintf(d, sizeof d, "%s/both2", tmp_root);
    mkdir(d, 0755);
    for (int i = 0; i < 4; i++) {
        snprintf(a, sizeof a, "%s/models/bin-zip-f32/%s", root, files[i]);
        snprintf(b, sizeof b, "%s/%s", d, files[i]);
        if (i != 2)
            copy_file(a, b);
    }
    snprintf(b, sizeof b, "%s/model.safetensors", d);
    write_text(b, "x");
    CHECK(atn_model_open_hf(d, NULL, NULL, &err) == NULL);
    CHECK_MSG(strstr(err.message, "model.safetensors: truncated") != NULL, "%s", err.message);
    /* the .bin alone opens */
    unlink(b);
    m = atn_model_open_hf(d, NULL, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    atn_model_free(m);
}

static void put16(uint8_t *p, unsigned v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, v & 0xffff); put16(p + 2, v >> 16); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }

/* A one-entry archive whose central directory gives the sizes and the local header's
 * offset only in a ZIP64 extra field, with ZIP64 end records. */
static size_t zip64_image(uint8_t *z, const char *name, const char *data, int method) {
    size_t nl = strlen(name), dl = strlen(data), at = 0;
    memset(z, 0, 1024);
    put32(z, 0x04034b50);
    put16(z + 8, (unsigned)method);
    put16(z + 26, (unsigned)nl);
    memcpy(z + 30, name, nl);
    memcpy(z + 30 + nl, data, dl);
    at = 30 + nl + dl;
    size_t cd = at;
    uint8_t *c = z + cd;
    put32(c, 0x02014b50);
    put16(c + 10, (unsigned)method);
    put32(c + 20, 0xffffffffu);
    put32(c + 24, 0xffffffffu);
    put16(c + 28, (unsigned)nl);
    put16(c + 30, 28);
    put32(c + 42, 0xffffffffu);
    memcpy(c + 46, name, nl);
    uint8_t *x = c + 46 + nl;
    put16(x, 1);
    put16(x + 2, 24);
    put64(x + 4, dl);
    put64(x + 12, dl);
    put64(x + 20, 0);
    at = cd + 46 + nl + 28;
    size_t cd_size = at - cd, z64 = at;
    put32(z + at, 0x06064b50);
    put64(z + at + 4, 44);
    put64(z + at + 24, 1);
    put64(z + at + 32, 1);
    put64(z + at + 40, cd_size);
    put64(z + at + 48, cd);
    at += 56;
    put32(z + at, 0x07064b50);
    put64(z + at + 8, z64);
    put32(z + at + 16, 1);
    at += 20;
    put32(z + at, 0x06054b50);
    put16(z + at + 8, 0xffff);
    put16(z + at + 10, 0xffff);
    put32(z + at + 12, 0xffffffffu);
    put32(z + at + 16, 0xffffffffu);
    return at + 22;
}

static void zip64(void) {
    uint8_t z[1024];
    size_t len = zip64_image(z, "a/data/0", "hello", 0);
    atn_zip *zip = NULL;
    atn_error err = {0};
    CHECK_MSG(atn_zip_open("z64", z, len, &zip, &err) == ATN_OK, "%s", err.message);
    if (zip) {
        const atn_zip_entry *e = atn_zip_find(zip, "a/data/0");
        CHECK(atn_zip_count(zip) == 1 && e && e->size == 5 && memcmp(e->data, "hello", 5) == 0 &&
              e->offset == 38);
        atn_zip_close(zip);
    }
    len = zip64_image(z, "a/data.pkl", "hello", 8);
    CHECK(atn_zip_open("z64", z, len, &zip, &err) == ATN_E_UNSUPPORTED && !zip);
    CHECK_STR(err.message, "z64: ZIP entry \"a/data.pkl\" is compressed (method 8); PyTorch "
              "writes stored entries only (re-save it with torch.save)");
    /* every truncation of it is refused, none read past the end */
    len = zip64_image(z, "a/data/0", "hello", 0);
    for (size_t n = 0; n < len; n++) {
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, z, n);
        atn_status st = atn_zip_open("cut", cut, n, &zip, &err);
        CHECK_MSG(st == ATN_E_FORMAT && !zip, "cut at %zu: %d", n, st);
        atn_zip_close(zip);
        free(cut);
    }
}

/* Refusals in memory, with their exact messages. */
/* Views (torch-bin.h): strided and broadcast tensors are kept uncopied until asked for,
 * within the caller's bound; the Hugging Face loader copies only what it binds. */
static void views(void) {
    char path[4096 + 64];
    atn_error err = {0};
    atn_st_file *f = NULL;
    /* bin-zip-f32's transposed weight: a view until asked for, then equal to its twin */
    snprintf(path, sizeof path, "%s/models/bin-zip-f32/pytorch_model.bin", root);
    CHECK_MSG(atn_torch_open(path, &f, &err) == ATN_OK, "%s", err.message);
    int32_t n_views = 0;
    const atn_st_tensor *tv = NULL;
    for (int32_t i = 0; f && i < atn_st_count(f); i++) {
        const atn_st_tensor *t = atn_st_at(f, i);
        CHECK_MSG((t->view != NULL) == (t->data == NULL), "%s: data and view", t->name);
        if (t->view && !tv)
            tv = t;
        n_views += t->view != NULL;
    }
    CHECK_MSG(n_views >= 1 && tv && tv->ndim == 2, "bin-zip-f32: %d views", n_views);
    if (tv) {
        /* over the bound: refused by name, nothing copied */
        CHECK(atn_st_materialise(f, tv, tv->nbytes - 1, &err) == ATN_E_NOMEM && !tv->data);
        char want[8192], sh[64], sd[64];
        snprintf(want, sizeof want, "%s: tensor '%s' is a strided view (sizes %s, strides %s) whose "
                 "copy needs %llu bytes, more than the memory budget of %llu bytes: refused", path,
                 tv->name, atn_st_shape_str(tv->shape, 2, sh, sizeof sh),
                 atn_st_shape_str((int64_t[]){1, tv->shape[0]}, 2, sd, sizeof sd),
                 (unsigned long long)tv->nbytes, (unsigned long long)tv->nbytes - 1);
        CHECK_STR(err.message, want);
        CHECK(atn_st_materialise(f, tv, tv->nbytes, &err) == ATN_OK && tv->data && tv->file_offset == 0);
        const void *first = tv->data;
        CHECK(atn_st_materialise(f, tv, 1, &err) == ATN_OK && tv->data == first);   /* once */
        atn_st_file *twin = NULL;
        snprintf(path, sizeof path, "%s/models/bin-zip-f32-st/model.safetensors", root);
        CHECK(atn_st_open(path, &twin, &err) == ATN_OK);
        const atn_st_tensor *b = twin ? atn_st_find(twin, tv->name) : NULL;
        CHECK(b && b->nbytes == tv->nbytes && memcmp(b->data, tv->data, (size_t)b->nbytes) == 0);
        atn_st_close(twin);
    }
    atn_st_close(f);

    /* a 2^62-byte broadcast nobody reads: opens at no cost; copying it is refused by name */
    snprintf(path, sizeof path, "%s/../bad/cases/pt-broadcast-unused/pytorch_model.bin", root);
    f = NULL;
    CHECK_MSG(atn_torch_open(path, &f, &err) == ATN_OK, "%s", err.message);
    const atn_st_tensor *junk = f ? atn_st_find(f, "junk.expanded") : NULL;
    CHECK(junk && junk->view && !junk->data && junk->nbytes == (uint64_t)1 << 62 &&
          junk->view->stride[0] == 0 && junk->view->stride[1] == 0);
    if (junk) {
        CHECK(atn_st_materialise(f, junk, (uint64_t)1 << 30, &err) == ATN_E_NOMEM && !junk->data);
        char want[8192];
        snprintf(want, sizeof want, "%s: tensor 'junk.expanded' is a broadcast (stride-0) view (sizes "
                 "[1073741824, 1073741824], strides [0, 0]) whose copy needs 4611686018.43 GB, more "
                 "than the memory budget of 1.07 GB: refused", path);
        CHECK_STR(err.message, want);
        /* and with no bound, more than the address space can hold */
        CHECK(atn_st_materialise(f, junk, 0, &err) == ATN_E_NOMEM && !junk->data);
    }
    atn_st_close(f);
    /* the model around it loads; its weights are the base's, junk never copied */
    char folder[8192], base[8192];
    snprintf(folder, sizeof folder, "%s/unused", tmp_root);
    snprintf(base, sizeof base, "%s/../bad/base", root);
    mkdir(folder, 0755);
    char from[16384], to[16384];
    snprintf(from, sizeof from, "%s/config.json", base), snprintf(to, sizeof to, "%s/config.json", folder);
    copy_file(from, to);
    snprintf(from, sizeof from, "%s/vocab.txt", base), snprintf(to, sizeof to, "%s/vocab.txt", folder);
    copy_file(from, to);
    snprintf(to, sizeof to, "%s/pytorch_model.bin", folder);
    copy_file(path, to);
    atn_model *m = atn_model_open_hf(folder, NULL, NULL, &err);
    atn_model *t = atn_model_open_hf(base, NULL, NULL, &err);
    CHECK_MSG(m && t, "%s", err.message);
    if (m && t) {
        size_t d = (size_t)m->cfg.d_model, V = (size_t)m->cfg.vocab_size;
        CHECK(same_floats(m->w.word_emb, t->w.word_emb, V * d));
        CHECK(same_floats(m->w.layers[1].wq, t->w.layers[1].wq, d * d));
        size_t held = 0;
        for (int32_t i = 0; i < m->n_blocks; i++)
            held += m->blocks[i].len;
        CHECK_MSG(held < (1u << 20), "the model holds %zu bytes", held);
    }
    atn_model_free(m);
    atn_model_free(t);

    /* the word embeddings as one row expanded over the vocabulary: copied when bound */
    snprintf(from, sizeof from, "%s/../bad/cases/pt-broadcast-used/pytorch_model.bin", root);
    copy_file(from, to);
    m = atn_model_open_hf(folder, NULL, NULL, &err);
    t = atn_model_open_hf(base, NULL, NULL, &err);
    CHECK_MSG(m && t, "%s", err.message);
    if (m && t) {
        size_t d = (size_t)m->cfg.d_model, V = (size_t)m->cfg.vocab_size;
        bool rows = true;
        for (size_t r = 0; r < V; r++)
            rows &= same_floats(m->w.word_emb + r * d, t->w.word_emb, d);   /* row 0 of the base */
        CHECK_MSG(rows, "every row of the expanded word embeddings is the stored one");
        CHECK(same_floats(m->w.pos_emb, t->w.pos_emb, (size_t)m->cfg.max_positions * d));
        CHECK(owner_of(m, m->w.word_emb) == 1);   /* the copied block, handed to the model */
    }
    atn_model_free(m);
    atn_model_free(t);
}

static void in_memory(void) {
    atn_st_file *f = NULL;
    atn_error err = {0};
    CHECK(atn_torch_parse("m", "", 0, &f, &err) == ATN_E_FORMAT && !f);
    CHECK_STR(err.message, "m: not a PyTorch checkpoint (neither a ZIP archive nor a pickle)");
    /* a legacy stream cut after its magic number pickle */
    const char magic[] = "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.";
    CHECK(atn_torch_parse("m", magic, sizeof magic - 1, &f, &err) == ATN_E_FORMAT);
    CHECK_STR(err.message, "m: the legacy protocol pickle: truncated: the pickle ends at byte 0 "
              "without a STOP");
    /* the magic number's pickle running a global */
    const char evil[] = "\x80\x02" "cposix\nsystem\n(X\x04\x00\x00\x00truetR.";
    CHECK(atn_torch_parse("m", evil, sizeof evil - 1, &f, &err) == ATN_E_UNSUPPORTED);
    CHECK_STR(err.message, "m: the legacy magic-number pickle: global posix.system is not "
              "allowed (a state_dict uses only collections.OrderedDict, torch._utils."
              "_rebuild_tensor_v2 and the torch storage types)");
}

int main(void) {
    const char *src = getenv("ATN_SOURCE_ROOT");
    snprintf(root, sizeof root, "%s/tests/hf", src ? src : ".");
    snprintf(tmp_root, sizeof tmp_root, "/tmp/attnscope-torch-bin-XXXXXX");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return 1;
    }
    torch_written();
    hand_made();
    loaded_models();
    preference();
    zip64();
    views();
    in_memory();
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp_root);
    return check_summary("test-torch-bin");
}

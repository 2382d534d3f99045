/* For the fuzz targets that go through the Hugging Face loader: a model folder in the
 * scratch folder made from one of the catalogue's good bases, one of whose files is
 * replaced by the fuzz input; a model that opens is run on a short text. */
#ifndef ATN_FUZZ_HF_COMMON_H
#define ATN_FUZZ_HF_COMMON_H

#include "fuzz-common.h"
#include "formats/safetensors.h"

#include <stdbool.h>

/* Copies tests/bad/<base>/<files...> into the scratch folder once; returns the folder. */
static inline const char *fuzz_hf_folder(const char *base, const char *const *files) {
    static char dir[512];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/%s", fuzz_tmp(), base);
        mkdir(dir, 0755);
        for (int i = 0; files[i]; i++) {
            char from[4096], to[1024];
            snprintf(from, sizeof from, "%s/tests/bad/%s/%s", fuzz_source_root(), base, files[i]);
            snprintf(to, sizeof to, "%s/%s", dir, files[i]);
            fuzz_copy(from, to);
        }
    }
    return dir;
}

/* Opens dir; errors must name the folder.  A model that opens runs one short text. */
static inline void fuzz_hf_open_and_run(const char *dir) {
    atn_error err = {0};
    atn_model *m = atn_model_open_hf(dir, NULL, NULL, &err);
    if (!m) {
        fuzz_check_parse_error(err.status, &err, dir);
        return;
    }
    atn_encoding *enc = NULL;
    atn_status st = atn_model_encode(m, "the cat sat on the mat", "hello world", &enc, &err);
    if (st == ATN_OK) {
        atn_run *run = atn_run_new(m);
        atn_run_options o;
        atn_run_options_init(&o);
        o.memory_limit = 64 << 20;
        st = atn_run_forward(run, enc, &o, &err);
        if (st != ATN_OK)
            fuzz_check_error(st, &err, NULL);
        atn_run_free(run);
    } else {
        fuzz_check_error(st, &err, NULL);
    }
    atn_encoding_free(enc);
    atn_model_free(m);
}

/* The promises of a tensor table (safetensors or a .bin read into one): names sorted,
 * unique and found, ndim in range, count and nbytes agreeing with shape and dtype, every
 * byte of every tensor read (so ASan sees one outside its memory).  in_input: every
 * tensor must lie in data[0..size) (safetensors); otherwise only one that starts there
 * (a .bin's strided views are copied on request, atn_st_materialise: those up to 64 MB are,
 * and a larger one must be refused).  Returns whether the table holds the
 * word embeddings (worth opening as a model). */
static inline bool fuzz_check_tensor_table(atn_st_file *f, const uint8_t *data, size_t size,
                                           bool in_input) {
    unsigned sum = 0;
    int32_t n = atn_st_count(f);
    for (int32_t i = 0; i < n; i++) {
        const atn_st_tensor *t = atn_st_at(f, i);
        if (!t || !t->name)
            fuzz_fail("a NULL tensor in range", NULL);
        if (i > 0 && strcmp(atn_st_at(f, i - 1)->name, t->name) >= 0)
            fuzz_fail("tensor names not sorted and unique", t->name);
        if (atn_st_find(f, t->name) != t)
            fuzz_fail("atn_st_find does not find a listed tensor", t->name);
        if (t->ndim < 0 || t->ndim > ATN_ST_MAX_DIMS)
            fuzz_fail("ndim out of range", t->name);
        uint64_t count = 1;
        for (int d = 0; d < t->ndim; d++)
            count *= (uint64_t)t->shape[d];
        if (count != t->count || t->count * atn_st_dtype_size(t->dtype) != t->nbytes)
            fuzz_fail("count/nbytes disagree with shape and dtype", t->name);
        if (t->view && in_input)
            fuzz_fail("a view in a safetensors file", t->name);
        if (!t->data && !t->view && t->nbytes)
            fuzz_fail("a tensor with neither data nor a view", t->name);
        if (t->view) {   /* a kept .bin view: copied on request, within a bound */
            atn_error e = {0};
            atn_status ms = atn_st_materialise(f, t, 64u << 20, &e);
            if (ms == ATN_E_NOMEM && t->nbytes > (64u << 20) && !t->data)
                continue;
            if (ms != ATN_OK || (t->nbytes && !t->data))
                fuzz_fail("a view within the bound not materialised", e.message);
        }
        const uint8_t *p = t->data;
        if (in_input) {
            if (t->nbytes && (p < data || t->file_offset > size || t->nbytes > size - t->file_offset ||
                              p != data + t->file_offset))
                fuzz_fail("a tensor outside the buffer", t->name);
        } else if (t->nbytes && p >= data && p <= data + size && (size_t)(p - data) + t->nbytes > size) {
            fuzz_fail("a tensor running past the input", t->name);
        }
        for (uint64_t b = 0; b < t->nbytes; b++)
            sum += p[b];
        char buf[64];
        atn_st_shape_str(t->shape, t->ndim, buf, sizeof buf);   /* truncates, never overflows */
    }
    if (atn_st_at(f, -1) || atn_st_at(f, n))
        fuzz_fail("atn_st_at out of range returned a tensor", NULL);
    volatile unsigned keep = sum;   /* the reads stay */
    (void)keep;
    return atn_st_find(f, "embeddings.word_embeddings.weight") ||
           atn_st_find(f, "bert.embeddings.word_embeddings.weight");
}

/* Writes data as the catalogue's tiny model's weights file (name: model.safetensors or
 * pytorch_model.bin) and opens and runs that folder. */
static inline void fuzz_hf_run_weights(const char *name, const uint8_t *data, size_t size) {
    static const char *const files[] = {"config.json", "vocab.txt", NULL};
    const char *dir = fuzz_hf_folder("base", files);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fuzz_write(path, data, size);
    fuzz_hf_open_and_run(dir);
}

#endif

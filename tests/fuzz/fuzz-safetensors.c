/* Fuzz target: the safetensors header and tensor table (atn_st_parse on a buffer).
 * On success every tensor must lie inside the buffer with nbytes = count x dtype size,
 * names sorted and unique; every byte of every tensor is read, so ASan sees any tensor
 * that points outside the input.  On failure the message must name the file.  A file
 * that parses and holds the word embeddings then goes through the Hugging Face loader as
 * model.safetensors of the catalogue's tiny model (shape checks, legacy names, F16/BF16
 * conversion, unaligned F32 copies) and runs. */
#include "fuzz-hf-common.h"
#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *origin = "fuzz.safetensors";
    atn_st_file *f = NULL;
    atn_error err = {0};
    atn_status st = atn_st_parse(origin, data, size, &f, &err);
    if (st != ATN_OK) {
        if (f)
            fuzz_fail("a file handed out on error", NULL);
        fuzz_check_parse_error(st, &err, origin);
        return 0;
    }
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
        const uint8_t *p = t->data;
        if (t->nbytes && (p < data || t->file_offset > size || t->nbytes > size - t->file_offset ||
                          p != data + t->file_offset))
            fuzz_fail("a tensor outside the buffer", t->name);
        for (uint64_t b = 0; b < t->nbytes; b++)
            sum += p[b];
        char buf[64];
        atn_st_shape_str(t->shape, t->ndim, buf, sizeof buf);   /* truncates, never overflows */
    }
    if (atn_st_at(f, -1) || atn_st_at(f, n))
        fuzz_fail("atn_st_at out of range returned a tensor", NULL);
    bool model_like = atn_st_find(f, "embeddings.word_embeddings.weight") ||
                      atn_st_find(f, "bert.embeddings.word_embeddings.weight");
    atn_st_close(f);
    if (model_like) {
        static const char *const files[] = {"config.json", "vocab.txt", NULL};
        const char *dir = fuzz_hf_folder("base", files);
        char path[1024];
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        fuzz_write(path, data, size);
        fuzz_hf_open_and_run(dir);
    }
    return (int)(sum & 0);
}

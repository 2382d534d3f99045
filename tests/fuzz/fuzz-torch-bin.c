/* Fuzz target: pytorch_model.bin (atn_torch_parse on a buffer: the ZIP reader, the
 * restricted unpickler, both zip layouts and the legacy stream) and the unpickler alone on
 * the same bytes.  On success every tensor's count and nbytes agree with its shape and
 * dtype, names are sorted and unique, and every byte of every tensor is read (so ASan sees
 * a tensor outside the input or the copy block).  On failure the message names the file.
 * A file that reads and holds the word embeddings then goes through the Hugging Face
 * loader as pytorch_model.bin of the catalogue's tiny model and runs. */
#include "fuzz-hf-common.h"
#include "formats/torch-bin.h"
#include "formats/torch-pickle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* the unpickler by itself: any value tree, never a crash */
    atn_pickle *pk = NULL;
    atn_error err = {0};
    size_t used = 0;
    atn_status st = atn_pickle_load("fuzz.pkl", data, size, &used, &pk, &err);
    if (st == ATN_OK) {
        if (used > size || !atn_pickle_result(pk))
            fuzz_fail("a pickle result past the input or missing", NULL);
        for (int32_t i = 0; i < atn_pickle_n_tensors(pk); i++) {
            const atn_pk_tensor *t = atn_pickle_tensor(pk, i);
            if (t->storage < 0 || t->storage >= atn_pickle_n_storages(pk) ||
                t->ndim < 0 || t->ndim > ATN_ST_MAX_DIMS)
                fuzz_fail("a tensor descriptor out of range", NULL);
            for (int d = 0; d < t->ndim; d++)
                if (t->shape[d] < 0 || t->stride[d] < 0)
                    fuzz_fail("a negative size or stride accepted", NULL);
        }
        atn_pickle_free(pk);
    } else {
        if (pk)
            fuzz_fail("a pickle handed out on error", NULL);
        fuzz_check_parse_error(st, &err, "fuzz.pkl");
    }

    const char *origin = "fuzz.bin";
    atn_st_file *f = NULL;
    err = (atn_error){0};
    st = atn_torch_parse(origin, data, size, &f, &err);
    if (st != ATN_OK) {
        if (f)
            fuzz_fail("a file handed out on error", NULL);
        fuzz_check_parse_error(st, &err, origin);
        return 0;
    }
    bool model_like = fuzz_check_tensor_table(f, data, size, false);
    atn_st_close(f);
    if (model_like)
        fuzz_hf_run_weights("pytorch_model.bin", data, size);
    return 0;
}

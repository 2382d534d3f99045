/* Fuzz target: the safetensors header and tensor table (atn_st_parse on a buffer).
 * On success every tensor must lie inside the buffer with nbytes = count x dtype size,
 * names sorted and unique; every byte of every tensor is read, so ASan sees any tensor
 * that points outside the input.  On failure the message must name the file.  A file
 * that parses and holds the word embeddings then goes through the Hugging Face loader as
 * model.safetensors of the catalogue's tiny model (shape checks, legacy names, F16/BF16
 * conversion, unaligned F32 copies) and runs. */
#include "fuzz-hf-common.h"
#include "formats/safetensors.h"

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
    bool model_like = fuzz_check_tensor_table(f, data, size, true);
    atn_st_close(f);
    if (model_like)
        fuzz_hf_run_weights("model.safetensors", data, size);
    return 0;
}

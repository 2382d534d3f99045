/* Fuzz target: config.json, through the Hugging Face loader on a folder that has the
 * catalogue's good tiny weights and vocabulary; the input is written as config.json. */
#include "fuzz-hf-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const files[] = {"model.safetensors", "vocab.txt", NULL};
    const char *dir = fuzz_hf_folder("base", files);
    char path[1024];
    snprintf(path, sizeof path, "%s/config.json", dir);
    fuzz_write(path, data, size);
    fuzz_hf_open_and_run(dir);
    return 0;
}
